// SPDX-License-Identifier: MIT
/*
 * zcow fuse DEV MOUNTPOINT [-o OPTS] [-f] [--record FILE]: mount a zcow file
 * system on a directory through FUSE (libfuse 3, high-level API; the
 * operations are harness/fuse_fs.c), so that real programs run on it
 * (docs/fuse.md).
 *
 * The zcow mount comes first, so that a bad device or option fails with
 * zcow's message before anything is mounted; then the FUSE mount, then
 * (without -f) the daemon: fuse_daemonize() once the mount is made, so
 * that the parent's exit status says whether it was.  The loop is
 * multithreaded; it ends at `fusermount3 -u MOUNTPOINT` or SIGINT, SIGTERM
 * or SIGHUP, and zcow_unmount() (the final commit) runs in the destroy
 * operation.  Exit status 0 only if the unmount, the recording and the
 * devices' close all succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "fuse_fs.h"
#include "ops_record.h"
#include "zcow.h"

static const char help[] =
	"usage: zcow fuse DEV MOUNTPOINT [-o OPTS] [-f] [--record FILE]\n"
	"  mount the zcow file system on DEV at MOUNTPOINT through FUSE\n"
	"  -o OPTS        comma-separated; zcow's mount options (`zcow\n"
	"                 mount-options` lists them) and FUSE's (allow_other,\n"
	"                 allow_root, auto_unmount, fsname=, subtype=, debug,\n"
	"                 kernel_cache, attr_timeout=, entry_timeout=, ...);\n"
	"                 may be given more than once\n"
	"  -f             stay in the foreground (default: a daemon once the\n"
	"                 mount is made)\n"
	"  --record FILE  write every mutating call to FILE\n"
	"                 (docs/ops-format.md)\n"
	"Unmount with `fusermount3 -u MOUNTPOINT` (or SIGINT/SIGTERM): the\n"
	"final commit is made and zcow fuse exits 0.  docs/fuse.md\n";

/*
 * The options libfuse takes (its mount, session and high-level options;
 * "NAME=" takes a value).  ro, rw and the atime modes (relatime,
 * noatime, strictatime: zcow_mount_opts.atime) are given to both; sync,
 * dirsync and lazytime are not taken (zcow does not do them): zcow's
 * option parser refuses them.  use_ino,
 * readdir_ino and hard_remove are not: zcow fuse sets them itself.
 */
static const char *const fuse_keys[] = {
	"allow_other", "allow_root", "auto_unmount", "default_permissions",
	"blkdev", "fsname=", "subtype=", "blksize=", "max_read=", "debug",
	"kernel_cache", "auto_cache", "noauto_cache", "umask=", "uid=",
	"gid=", "entry_timeout=", "attr_timeout=", "ac_attr_timeout=",
	"negative_timeout=", "noforget", "remember=", "direct_io", "intr",
	"intr_signal=", "suid", "nosuid", "dev", "nodev", "exec", "noexec",
	"async", NULL,
};

static bool is_fuse_opt(const char *opt, size_t len)
{
	const char *const *k;

	for (k = fuse_keys; *k; k++) {
		size_t kl = strlen(*k);

		if ((*k)[kl - 1] == '=' ? len >= kl && !strncmp(opt, *k, kl) :
					  len == kl && !strncmp(opt, *k, kl))
			return true;
	}
	return false;
}

/* Append @opt (@len bytes) to the comma-separated list in @buf; false
 * (@buf unchanged) if it does not fit. */
static bool add_opt(char *buf, size_t size, const char *opt, size_t len)
{
	size_t n = strlen(buf);

	if (n + !!n + len >= size)
		return false;
	snprintf(buf + n, size - n, "%s%.*s", n ? "," : "", (int)len, opt);
	return true;
}

/* An option both zcow and FUSE take. */
static bool is_shared_opt(const char *opt, size_t len)
{
	static const char *const shared[] = { "ro", "rw", "relatime",
					      "noatime", "strictatime", NULL };
	const char *const *k;

	for (k = shared; *k; k++)
		if (strlen(*k) == len && !strncmp(opt, *k, len))
			return true;
	return false;
}

/* Split @opts into zcow's options and FUSE's. */
static void split_opts(const char *opts, char *zcow_buf, char *fuse_buf,
		       size_t size)
{
	const char *p = opts;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (is_shared_opt(p, len)) {
			add_opt(zcow_buf, size, p, len);
			add_opt(fuse_buf, size, p, len);
		} else if (is_fuse_opt(p, len)) {
			add_opt(fuse_buf, size, p, len);
		} else if (len) {
			add_opt(zcow_buf, size, p, len);
		}
		p += len + (p[len] == ',');
	}
}

struct fuse_args_cli {
	const char *dev, *mnt, *record;
	char opts[4096];
	bool is_foreground;
	int cleaner;	/* -o cleaner=: started once the daemon runs */
};

/* Returns 0, -1 (--help printed) or 2 (usage error, printed). */
static int parse_args(int argc, char **argv, struct fuse_args_cli *a)
{
	struct stat st;
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(help, stdout);
			return -1;
		} else if (!strcmp(argv[i], "-f")) {
			a->is_foreground = true;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--record")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "zcow fuse: option %s needs a value\n",
					argv[i]);
				return 2;
			}
			if (argv[i][1] != 'o') {
				a->record = argv[i + 1];
			} else if (!add_opt(a->opts, sizeof(a->opts),
					    argv[i + 1], strlen(argv[i + 1]))) {
				fprintf(stderr, "zcow fuse: the -o options are longer than %zu bytes\n",
					sizeof(a->opts) - 1);
				return 2;
			}
			i++;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "zcow fuse: unexpected argument '%s' (see --help)\n",
				argv[i]);
			return 2;
		} else if (!a->dev) {
			a->dev = argv[i];
		} else if (!a->mnt) {
			a->mnt = argv[i];
		} else {
			fprintf(stderr, "zcow fuse: unexpected argument '%s' (see --help)\n",
				argv[i]);
			return 2;
		}
	}
	if (!a->mnt) {
		fprintf(stderr, "zcow fuse: need DEV and MOUNTPOINT\n%s", help);
		return 2;
	}
	/* Before anything is mounted: the kernel would mount a regular
	 * file's inode too (as a file), which no program expects. */
	if (stat(a->mnt, &st)) {
		fprintf(stderr, "zcow fuse: mount point %s: %s\n", a->mnt,
			strerror(errno));
		return 2;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "zcow fuse: mount point %s: not a directory\n",
			a->mnt);
		return 2;
	}
	return 0;
}

/* The zcow mount; 0 or an exit status (printed). */
static int mount_zcow(struct fuse_args_cli *a, const char *zcow_opts,
		      struct zcow_devs *devs, struct zcow_fs **fs_ret,
		      bool *is_ro_ret)
{
	struct zcow_mount_opts mo = { 0 };
	struct zcow_fs_info info;
	int ret;

	if (*zcow_opts && zcow_mount_opts_parse(zcow_opts, &mo)) {
		fprintf(stderr, "zcow fuse: bad mount options '%s'\n",
			zcow_opts);
		return 2;
	}
	/* A thread does not survive fuse_daemonize()'s fork: the cleaner
	 * starts in the daemon (serve()). */
	a->cleaner = mo.cleaner;
	mo.cleaner = ZCOW_CLEANER_WRITER;
	ret = open_devs("fuse", a->dev, devs);
	if (ret)
		return ret;
	ret = mount_devs("fuse", devs, &mo, fs_ret);
	if (!ret) {
		/* a superblock-only mount has no files */
		zcow_fs_info(*fs_ret, &info);
		if (!info.has_trees) {
			zcow_unmount(*fs_ret);
			ret = -EUCLEAN;
		}
	}
	if (ret) {
		fprintf(stderr, "zcow fuse: mount %s: %s\n", a->dev,
			strerror(-ret));
		return close_devs(devs, 1);
	}
	*is_ro_ret = mo.read_only;
	return 0;
}

/* The FUSE side: new, mount, daemon, loop, unmount.  Returns the exit
 * status; zf->fs is unmounted by the destroy operation or here. */
static int serve(struct fuse_args_cli *a, const char *fuse_opts,
		 struct zfuse *zf)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *lc;
	struct fuse_session *se;
	struct fuse *f = NULL;
	char opts[4200];
	int status = 1, ret, cwd;

	/* The kernel checks permissions against the modes and owners zcow
	 * stores (zcow's core does not).  Attributes are not cached
	 * (attr_timeout=0, unless -o gives one): libfuse's path API gives
	 * each name of a hard-linked inode its own kernel inode, so a
	 * cached link count or ctime would be stale after a link or an
	 * unlink through another name. */
	snprintf(opts, sizeof(opts),
		 "fsname=zcow,subtype=zcow,default_permissions,attr_timeout=0%s%s",
		 *fuse_opts ? "," : "", fuse_opts);
	if (fuse_opt_add_arg(&args, "zcow") ||
	    fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, opts)) {
		fprintf(stderr, "zcow fuse: out of memory\n");
		goto out;
	}
	f = fuse_new(&args, &zfuse_ops, sizeof(zfuse_ops), zf);
	if (!f) {
		fprintf(stderr, "zcow fuse: FUSE refused the options '%s'\n",
			opts);
		status = 2;
		goto out;
	}
	if (fuse_mount(f, a->mnt)) {
		fprintf(stderr, "zcow fuse: cannot mount on %s (is /dev/fuse there, and fusermount3?)\n",
			a->mnt);
		goto out;
	}
	se = fuse_get_session(f);
	if (fuse_set_signal_handlers(se)) {
		fprintf(stderr, "zcow fuse: cannot set the signal handlers\n");
		goto out_unmount;
	}
	/* fuse_daemonize() moves to "/": a relative image path is saved
	 * at close, so come back */
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fuse_daemonize(a->is_foreground)) {
		fprintf(stderr, "zcow fuse: cannot become a daemon\n");
		if (cwd >= 0)
			close(cwd);
		goto out_signals;
	}
	if (cwd >= 0) {
		if (fchdir(cwd))
			fprintf(stderr, "zcow fuse: cannot return to the working directory: %s\n",
				strerror(errno));
		close(cwd);
	}
	ret = zcow_set_cleaner(zf->fs, a->cleaner);
	if (ret) {
		fprintf(stderr, "zcow fuse: cannot start the cleaner: %s\n",
			strerror(-ret));
		goto out_signals;
	}
	lc = fuse_loop_cfg_create();
	if (!lc) {
		fprintf(stderr, "zcow fuse: out of memory\n");
		goto out_signals;
	}
	ret = fuse_loop_mt(f, lc);
	fuse_loop_cfg_destroy(lc);
	/* 0: unmounted; a signal number: SIGINT/SIGTERM/SIGHUP */
	status = ret < 0 ? 1 : 0;
	if (ret < 0)
		fprintf(stderr, "zcow fuse: the FUSE loop failed: %s\n",
			strerror(-ret));
out_signals:
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_unmount(f);
out:
	if (f)
		fuse_destroy(f);	/* the destroy operation: zcow_unmount */
	fuse_opt_free_args(&args);
	if (!zf->is_unmounted) {
		/* never initialized: the kernel sent no request */
		zf->unmount_err = zcow_unmount(zf->fs);
		zf->is_unmounted = true;
	}
	if (zf->unmount_err) {
		fprintf(stderr, "zcow fuse: unmount (the final commit): %s\n",
			strerror(-zf->unmount_err));
		status = 1;
	}
	return status;
}

int cmd_fuse(int argc, char **argv)
{
	struct fuse_args_cli a;
	struct zcow_devs devs;
	struct zfuse zf = { 0 };
	char *zcow_opts, *fuse_opts;
	int status, err;

	status = parse_args(argc, argv, &a);
	if (status)
		return status < 0 ? 0 : status;
	zcow_opts = calloc(2, sizeof(a.opts));
	if (!zcow_opts) {
		fprintf(stderr, "zcow fuse: out of memory\n");
		return 1;
	}
	fuse_opts = zcow_opts + sizeof(a.opts);
	split_opts(a.opts, zcow_opts, fuse_opts, sizeof(a.opts));
	status = mount_zcow(&a, zcow_opts, &devs, &zf.fs, &zf.is_read_only);
	if (status)
		goto out;
	if (a.record) {
		err = ops_rec_open(a.record, &zf.rec);
		if (err) {
			fprintf(stderr, "zcow fuse: cannot write the recording %s: %s\n",
				a.record, strerror(-err));
			zcow_unmount(zf.fs);
			status = close_devs(&devs, 1);
			goto out;
		}
	}
	status = serve(&a, fuse_opts, &zf);
	if (zf.rec) {
		err = ops_rec_close(zf.rec);
		if (err) {
			fprintf(stderr, "zcow fuse: the recording %s is incomplete: %s\n",
				a.record, strerror(-err));
			status = 1;
		}
	}
	status = close_devs(&devs, status);
out:
	free(zcow_opts);
	return status;
}
