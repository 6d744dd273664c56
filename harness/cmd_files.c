// SPDX-License-Identifier: MIT
/*
 * zcow ls, cat, put, get, rm, mkdir, stat: moving data in and out of a
 * zcow image (the file-layer benchmark, bench-fs: cmd_bench.c); zcow
 * snapshot and subvol list: read-only snapshots of the top-level
 * subvolume, as btrfs subvolume snapshot -r and btrfs subvolume list.
 *
 * Every file command takes [-o MOUNT_OPTS] DEV PATH...; it mounts (read-only
 * for ls/cat/get/stat/subvol list), acts, and unmounts (a new generation
 * for writers).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "zcow.h"

struct fargs {
	const char *cmd;
	const char *opts;
	const char *dev;
	const char *args[4];
	int nr_args;
};

/* Parse [-o OPTS] DEV ARGS...: returns 0, -1 (help printed), or 2. */
static int parse(const char *cmd, const char *usage, int min, int max,
		 int argc, char **argv, struct fargs *fa)
{
	int i;

	memset(fa, 0, sizeof(*fa));
	fa->cmd = cmd;
	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: zcow %s [-o MOUNT_OPTS] DEV %s\n", cmd,
			       usage);
			return -1;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			fa->opts = argv[++i];
		} else if (!fa->dev) {
			fa->dev = argv[i];
		} else if (fa->nr_args < max) {
			fa->args[fa->nr_args++] = argv[i];
		} else {
			fprintf(stderr, "zcow %s: unexpected argument '%s'\n",
				cmd, argv[i]);
			return 2;
		}
	}
	if (!fa->dev || fa->nr_args < min) {
		fprintf(stderr, "usage: zcow %s [-o MOUNT_OPTS] DEV %s\n", cmd,
			usage);
		return 2;
	}
	return 0;
}

static int do_mount(struct fargs *fa, bool read_only, struct zcow_devs *devs,
		    struct zcow_fs **fs_ret)
{
	struct zcow_mount_opts mo = { .read_only = read_only };
	int ret;

	if (fa->opts && zcow_mount_opts_parse(fa->opts, &mo)) {
		fprintf(stderr, "zcow %s: bad mount options '%s'\n", fa->cmd,
			fa->opts);
		return 2;
	}
	ret = open_devs(fa->cmd, fa->dev, devs);
	if (ret)
		return ret;
	ret = mount_devs(fa->cmd, devs, &mo, fs_ret);
	if (!ret) {
		struct zcow_fs_info info;

		/* a superblock-only mount has no files */
		zcow_fs_info(*fs_ret, &info);
		if (!info.has_trees) {
			zcow_unmount(*fs_ret);
			ret = -EUCLEAN;
		}
	}
	if (ret) {
		fprintf(stderr, "zcow %s: mount %s: %s\n", fa->cmd, fa->dev,
			strerror(-ret));
		return close_devs(devs, 1);
	}
	return 0;
}

static int do_unmount(struct fargs *fa, struct zcow_devs *devs,
		      struct zcow_fs *fs, int status)
{
	int ret = zcow_unmount(fs);

	if (ret) {
		fprintf(stderr, "zcow %s: unmount: %s\n", fa->cmd,
			strerror(-ret));
		status = 1;
	}
	return close_devs(devs, status);
}

static int fail(struct fargs *fa, const char *path, int err)
{
	fprintf(stderr, "zcow %s: %s: %s\n", fa->cmd, path, strerror(-err));
	return 1;
}

int cmd_ls(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	struct zcow_dirent *ents;
	uint64_t nr, i;
	const char *path;
	int ret, status = 0;

	ret = parse("ls", "[PATH]", 0, 1, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	path = fa.nr_args ? fa.args[0] : "/";
	ret = do_mount(&fa, true, &devs, &fs);
	if (ret)
		return ret;
	ret = zcow_readdir(fs, path, &ents, &nr);
	if (ret) {
		status = fail(&fa, path, ret);
	} else {
		for (i = 0; i < nr; i++) {
			struct zcow_stat st = { 0 };
			char *full = NULL;

			/* an entry that cannot be read is an error, as
			 * ls reports one; the others are still listed */
			if (asprintf(&full, "%s/%s", path, ents[i].name) < 0) {
				status = fail(&fa, path, -ENOMEM);
				break;
			}
			ret = zcow_stat(fs, full, &st);
			if (ret) {
				status = fail(&fa, full, ret);
			} else {
				printf("%c %8" PRIu64 " %12" PRIu64 " %s\n",
				       ents[i].type == 2 ? 'd' : '-',
				       ents[i].ino, st.size, ents[i].name);
			}
			free(full);
		}
		free(ents);
	}
	return do_unmount(&fa, &devs, fs, status);
}

/* Copy the file @path to @out (a FILE). */
static int copy_out(struct fargs *fa, struct zcow_fs *fs, const char *path,
		    FILE *out)
{
	struct zcow_file *f;
	uint8_t *buf = malloc(1 << 20);
	uint64_t off = 0;
	int64_t n;
	int ret;

	if (!buf)
		return fail(fa, path, -ENOMEM);
	ret = zcow_open(fs, path, O_RDONLY, &f);
	if (ret) {
		free(buf);
		return fail(fa, path, ret);
	}
	while ((n = zcow_pread(f, buf, 1 << 20, off)) > 0) {
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n) {
			n = -EIO;
			break;
		}
		off += (uint64_t)n;
	}
	ret = zcow_close(f);
	free(buf);
	if (n < 0)
		return fail(fa, path, (int)n);
	return ret ? fail(fa, path, ret) : 0;
}

int cmd_cat(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	int ret, status = 0, i;

	ret = parse("cat", "PATH...", 1, 4, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = do_mount(&fa, true, &devs, &fs);
	if (ret)
		return ret;
	for (i = 0; i < fa.nr_args && !status; i++)
		status = copy_out(&fa, fs, fa.args[i], stdout);
	fflush(stdout);
	return do_unmount(&fa, &devs, fs, status);
}

int cmd_get(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	FILE *out;
	int ret, status;

	ret = parse("get", "PATH LOCAL_FILE", 2, 2, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	out = fopen(fa.args[1], "wb");
	if (!out) {
		fprintf(stderr, "zcow get: %s: %s\n", fa.args[1],
			strerror(errno));
		return 1;
	}
	ret = do_mount(&fa, true, &devs, &fs);
	if (ret) {
		fclose(out);
		return ret;
	}
	status = copy_out(&fa, fs, fa.args[0], out);
	if (fclose(out))
		status = 1;
	return do_unmount(&fa, &devs, fs, status);
}

int cmd_put(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_file *f;
	struct zcow_devs devs;
	uint8_t *buf;
	uint64_t off = 0;
	size_t n;
	FILE *in;
	int ret, status = 0;

	ret = parse("put", "LOCAL_FILE|- PATH", 2, 2, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	in = strcmp(fa.args[0], "-") ? fopen(fa.args[0], "rb") : stdin;
	if (!in) {
		fprintf(stderr, "zcow put: %s: %s\n", fa.args[0],
			strerror(errno));
		return 1;
	}
	buf = malloc(1 << 20);
	ret = buf ? do_mount(&fa, false, &devs, &fs) : 1;
	if (ret) {
		free(buf);
		if (in != stdin)
			fclose(in);
		return ret;
	}
	ret = zcow_open(fs, fa.args[1], O_CREAT | O_TRUNC | O_WRONLY, &f);
	if (ret) {
		status = fail(&fa, fa.args[1], ret);
	} else {
		while ((n = fread(buf, 1, 1 << 20, in)) > 0) {
			int64_t w = zcow_pwrite(f, buf, n, off);

			if (w < 0) {
				status = fail(&fa, fa.args[1], (int)w);
				break;
			}
			off += n;
		}
		if (!status && ferror(in))
			status = fail(&fa, fa.args[0], -EIO);
		if (!status) {
			ret = zcow_fsync(f);
			if (ret)
				status = fail(&fa, fa.args[1], ret);
		}
		ret = zcow_close(f);
		if (ret && !status)
			status = fail(&fa, fa.args[1], ret);
	}
	if (in != stdin)
		fclose(in);
	free(buf);
	return do_unmount(&fa, &devs, fs, status);
}

/* rm and mkdir: @fn on every PATH, read-write, stopping at an error. */
static int each_path(const char *cmd, int argc, char **argv,
		     int (*fn)(struct zcow_fs *fs, const char *path))
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	int ret, status = 0, i;

	ret = parse(cmd, "PATH...", 1, 4, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = do_mount(&fa, false, &devs, &fs);
	if (ret)
		return ret;
	for (i = 0; i < fa.nr_args && !status; i++) {
		ret = fn(fs, fa.args[i]);
		if (ret)
			status = fail(&fa, fa.args[i], ret);
	}
	return do_unmount(&fa, &devs, fs, status);
}

static int rm_path(struct zcow_fs *fs, const char *path)
{
	int ret = zcow_unlink(fs, path);

	return ret == -EISDIR ? zcow_rmdir(fs, path) : ret;
}

int cmd_rm(int argc, char **argv)
{
	return each_path("rm", argc, argv, rm_path);
}

int cmd_mkdir(int argc, char **argv)
{
	return each_path("mkdir", argc, argv, zcow_mkdir);
}

int cmd_stat(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	struct zcow_stat st;
	int ret, status = 0;

	ret = parse("stat", "PATH", 1, 1, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = do_mount(&fa, true, &devs, &fs);
	if (ret)
		return ret;
	ret = zcow_stat(fs, fa.args[0], &st);
	if (ret) {
		status = fail(&fa, fa.args[0], ret);
	} else {
		printf("path: %s\ninode: %" PRIu64 "\ntype: %s\nmode: %o\nlinks: %u\nsize: %" PRIu64 "\nbytes: %" PRIu64 "\ngeneration: %" PRIu64 "\ntransid: %" PRIu64 "\n",
		       fa.args[0], st.ino,
		       S_ISDIR(st.mode) ? "directory" : "regular file",
		       st.mode & 07777, st.nlink, st.size, st.nbytes,
		       st.generation, st.transid);
	}
	return do_unmount(&fa, &devs, fs, status);
}

/*
 * zcow snapshot DEV SRC DST [-r]: btrfs subvolume snapshot [-r] SRC DST,
 * for the one subvolume zcow snapshots (the top level, SRC "/") into one
 * name in the root directory (DST "/NAME" or "NAME"), read-only with -r,
 * else writable.  The snapshot is committed before the unmount.
 */
int cmd_snapshot(int argc, char **argv)
{
	static const char usage[] = "/ DST [-r]  (DST: /NAME or NAME)";
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	const char *src, *dst, *name;
	char *rest[8];
	bool is_rdonly = false;
	int ret, status = 0, i, n = 0;

	/* -r may stand anywhere; the rest parses as the file commands */
	for (i = 0; i < argc; i++) {
		if (i && !strcmp(argv[i], "-r"))
			is_rdonly = true;
		else if (n < (int)(sizeof(rest) / sizeof(rest[0])))
			rest[n++] = argv[i];
		else
			break;
	}
	if (i < argc) {
		fprintf(stderr, "zcow snapshot: unexpected argument '%s'\n",
			argv[i]);
		return 2;
	}
	ret = parse("snapshot", usage, 2, 2, n, rest, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	src = fa.args[0];
	dst = fa.args[1];
	if (strcmp(src, "/")) {
		fprintf(stderr, "zcow snapshot: SRC '%s': zcow snapshots only "
				"the top-level subvolume '/'\n", src);
		return 2;
	}
	name = dst[0] == '/' ? dst + 1 : dst;
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, "..")) {
		fprintf(stderr, "zcow snapshot: DST '%s': a snapshot goes in "
				"the root directory: /NAME or NAME\n", dst);
		return 2;
	}
	ret = do_mount(&fa, false, &devs, &fs);
	if (ret)
		return ret;
	/* btrfs-progs' line, printed once the snapshot is committed (a
	 * failed one prints only its error) */
	ret = zcow_subvol_snapshot(fs, name, is_rdonly, NULL);
	if (ret) {
		char path[260];

		snprintf(path, sizeof(path), "/%s", name);
		status = fail(&fa, path, ret);
	} else {
		printf("Create a %ssnapshot of '/' in '/%s'\n",
		       is_rdonly ? "readonly " : "", name);
	}
	return do_unmount(&fa, &devs, fs, status);
}

static const char subvol_usage[] =
	"usage: zcow subvol list [-o MOUNT_OPTS] DEV\n"
	"       zcow subvol delete [-o MOUNT_OPTS] DEV NAME...\n"
	"  list    one line per snapshot of the top-level subvolume, as\n"
	"          btrfs subvolume list prints it, in id order:\n"
	"          ID N gen N top level 5 path NAME\n"
	"          (gen: the transaction that last changed its tree)\n"
	"  delete  delete each snapshot /NAME (or NAME), as btrfs subvolume\n"
	"          delete; each is committed at once\n";

/* zcow subvol delete DEV NAME...: btrfs subvolume delete. */
static int subvol_delete(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	int ret, status = 0, i;

	ret = parse("subvol delete", "NAME... (up to 4)", 1, 4, argc, argv, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	for (i = 0; i < fa.nr_args; i++) {
		const char *name = fa.args[i] + (fa.args[i][0] == '/');

		if (!name[0] || strchr(name, '/')) {
			fprintf(stderr, "zcow subvol delete: '%s': a snapshot is /NAME or NAME in the root directory\n",
				fa.args[i]);
			return 2;
		}
	}
	ret = do_mount(&fa, false, &devs, &fs);
	if (ret)
		return ret;
	for (i = 0; i < fa.nr_args && !status; i++) {
		const char *name = fa.args[i] + (fa.args[i][0] == '/');
		char path[260];

		snprintf(path, sizeof(path), "/%s", name);
		ret = zcow_subvol_delete(fs, name);
		if (ret)
			status = fail(&fa, path, ret);
		else
			printf("Delete subvolume '%s'\n", path);
	}
	return do_unmount(&fa, &devs, fs, status);
}

/* zcow subvol list DEV: btrfs subvolume list. */
int cmd_subvol(int argc, char **argv)
{
	struct fargs fa;
	struct zcow_fs *fs;
	struct zcow_devs devs;
	struct zcow_subvol *v = NULL;
	uint64_t nr = 0, i;
	int ret, status = 0;

	if (argc < 2 || is_help(argv[1])) {
		fputs(subvol_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "delete"))
		return subvol_delete(argc - 1, argv + 1);
	if (strcmp(argv[1], "list")) {
		fprintf(stderr, "zcow subvol: unknown action '%s' (list, delete)\n",
			argv[1]);
		return 2;
	}
	ret = parse("subvol list", "", 0, 0, argc - 1, argv + 1, &fa);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = do_mount(&fa, true, &devs, &fs);
	if (ret)
		return ret;
	ret = zcow_subvol_list(fs, &v, &nr);
	if (ret)
		status = fail(&fa, "/", ret);
	for (i = 0; i < nr; i++)
		printf("ID %" PRIu64 " gen %" PRIu64 " top level 5 path %s\n",
		       v[i].id, v[i].gen, v[i].name);
	free(v);
	return do_unmount(&fa, &devs, fs, status);
}
