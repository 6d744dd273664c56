// SPDX-License-Identifier: MIT
/*
 * btrfs-progs as an independent oracle (docs/format.md): `btrfs check
 * --readonly` (btrfs-progs 6.2) on zcow images in emulated zones (file:,
 * 256 MiB zones, the zone size btrfs-progs assumes for a plain file)
 * must exit 0 and print no line that it does not print on a clean file
 * system made by mkfs.btrfs itself; `btrfs restore` must copy out exactly
 * the files zcow lists; `zcow check --data` must name a corrupted data
 * block.  Images: a new file system, one after a workload of files,
 * directories, renames, overwrites, truncates and deletes, and one left
 * with an fsynced tree-log (the process dies before the commit), before
 * and after zcow replays it; crash states of the crash-btrfs campaign
 * (oracle 11, docs/crash.md), and the superblock placement recorded where
 * dump-super does not call it unknown.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash.h"
#include "csum.h"
#include "files.h"
#include "tests.h"
#include "volumes.h"
#include "zcow.h"
#include "zcow_super.h"
#include "zdev.h"

#define MiB (1024ULL * 1024)
#define IMG_SIZE "2G"		/* 8 zones of 256 MiB */
#define MAX_LINES 64

struct lines {
	char *v[MAX_LINES];
	int nr;
};

static void need_btrfs_progs(void)
{
	ck_assert_msg(system("command -v btrfs >/dev/null && command -v mkfs.btrfs >/dev/null") == 0,
		      "btrfs-progs is missing: ./run.sh installs it (apt-get install btrfs-progs)");
}

/* A new name for an image file (the file itself does not exist). */
static void temp_img(char *path)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
}

/* Run @cmd through the shell; its stdout and stderr (2>&1) into
 * *out_ret (malloc'd).  Returns the exit status. */
static int run_capture(const char *cmd, char **out_ret)
{
	char full[1024];
	FILE *p;
	int st;

	snprintf(full, sizeof(full), "%s 2>&1", cmd);
	p = popen(full, "r");
	ck_assert_ptr_nonnull(p);
	*out_ret = zcow_test_read_all(p);
	st = pclose(p);
	ck_assert_msg(WIFEXITED(st), "%s: did not exit", cmd);
	return WEXITSTATUS(st);
}

/* A line of btrfs check's output with what differs between two clean
 * file systems taken out: the image path, the UUID, every number. */
static char *normalize(const char *line, const char *img)
{
	char *out = malloc(strlen(line) + 8), *o = out;
	size_t ilen = strlen(img);

	ck_assert_ptr_nonnull(out);
	if (!strncmp(line, "UUID: ", 6)) {
		strcpy(out, "UUID: U");
		return out;
	}
	while (*line) {
		if (!strncmp(line, img, ilen)) {
			memcpy(o, "IMG", 3);
			o += 3;
			line += ilen;
		} else if (*line >= '0' && *line <= '9') {
			*o++ = 'N';
			while (*line >= '0' && *line <= '9')
				line++;
		} else {
			*o++ = *line++;
		}
	}
	*o = '\0';
	return out;
}

/* btrfs check --readonly @img: its exit status, its lines normalized. */
static int btrfs_check(const char *img, struct lines *l, char **raw_ret)
{
	char cmd[256], *out, *save = NULL, *line;
	int status;

	snprintf(cmd, sizeof(cmd), "btrfs check --readonly %s", img);
	status = run_capture(cmd, &out);
	*raw_ret = strdup(out);
	l->nr = 0;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ck_assert_int_lt(l->nr, MAX_LINES);
		l->v[l->nr++] = normalize(line, img);
	}
	free(out);
	return status;
}

static void free_lines(struct lines *l)
{
	while (l->nr)
		free(l->v[--l->nr]);
}

/* A clean file system made by mkfs.btrfs -O zoned in the file @img
 * (single profiles, no free-space tree: zcow keeps none). */
static void make_btrfs_ref(char *img)
{
	char cmd[256];
	int fd = mkstemp(img);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 2LL << 30), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "mkfs.btrfs -q -f -O zoned -R ^free-space-tree -d single -m single %s >/dev/null 2>&1",
		 img);
	ck_assert_int_eq(system(cmd), 0);
}

/* The lines btrfs check prints on a clean mkfs.btrfs file system (check
 * names its free-space check after the free-space tree, hence none). */
static void reference_lines(struct lines *ref)
{
	char img[] = "/tmp/zcow-btrfsref-XXXXXX", *raw;

	make_btrfs_ref(img);
	ck_assert_int_eq(btrfs_check(img, ref, &raw), 0);
	ck_assert_msg(strstr(raw, "no error found"), "reference: %s", raw);
	free(raw);
	unlink(img);
}

/* The keys of tree @tree of @img as btrfs inspect-internal dump-tree
 * prints them, one a line, hexadecimal numbers (uuid halves) as X. */
static char *tree_keys(const char *img, const char *tree)
{
	char cmd[512], *out;

	snprintf(cmd, sizeof(cmd),
		 "btrfs inspect-internal dump-tree -t %s %s | sed -nE 's/^\\s+item [0-9]+ key \\(([^)]*)\\).*/\\1/p' | sed -E 's/0x[0-9a-f]+/X/g'",
		 tree, img);
	ck_assert_int_eq(run_capture(cmd, &out), 0);
	return out;
}

/* btrfs check --readonly @img exits 0 and prints only lines it prints
 * on a clean mkfs.btrfs file system. */
static void assert_btrfs_check_clean(const char *img, const char *what)
{
	struct lines ref, got;
	char *raw;
	int status, i, j;

	reference_lines(&ref);
	status = btrfs_check(img, &got, &raw);
	ck_assert_msg(status == 0, "%s: btrfs check exit %d:\n%s", what,
		      status, raw);
	for (i = 0; i < got.nr; i++) {
		for (j = 0; j < ref.nr; j++)
			if (!strcmp(got.v[i], ref.v[j]))
				break;
		ck_assert_msg(j < ref.nr,
			      "%s: btrfs check complains: '%s'; its output:\n%s",
			      what, got.v[i], raw);
	}
	free(raw);
	free_lines(&ref);
	free_lines(&got);
}

static struct zdev *open_img(const char *img)
{
	char spec[256];
	struct zdev *dev = NULL;

	snprintf(spec, sizeof(spec), "file:%s,zone_size=256M,size=" IMG_SIZE,
		 img);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	return dev;
}

static struct zcow_fs *mkfs_mount(const char *img, struct zdev **dev_ret)
{
	struct zcow_mkfs_opts mo = { .seed = 18 };
	struct zcow_fs *fs = NULL;

	*dev_ret = open_img(img);
	ck_assert_int_eq(zcow_mkfs(*dev_ret, &mo), 0);
	ck_assert_int_eq(zcow_mount(*dev_ret, NULL, &fs), 0);
	return fs;
}

/* Write @len bytes of pattern @seed at @off of @path (created if
 * missing); fsync it when @do_fsync. */
static void write_at(struct zcow_fs *fs, const char *path, uint64_t off,
		     uint64_t len, uint32_t seed, bool do_fsync)
{
	struct zcow_file *f;
	uint8_t *buf = malloc(len ? len : 1);

	zcow_test_fill_lcg(buf, len, seed);
	ck_assert_int_eq(zcow_open(fs, path, O_CREAT | O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, off), (int64_t)len);
	if (do_fsync)
		ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
	free(buf);
}

static void truncate_to(struct zcow_fs *fs, const char *path, uint64_t size)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_truncate(f, size), 0);
	zcow_close(f);
}

/*
 * Files (one of several extents, small ones, an empty one), nested
 * directories, overwrites inside and across extents, truncates down and
 * up, renames of files and directories (one over an existing file),
 * unlinks and an rmdir; committed.  Leaves /a/big, /a/grown, /d/small2,
 * /d/c/tiny, /d/c/e.
 */
static void workload(struct zcow_fs *fs)
{
	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/a/b"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/a/b/c"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_at(fs, "/a/big", 0, 3 * MiB + 100, 1, false);
	write_at(fs, "/a/b/small", 0, 10, 2, false);
	write_at(fs, "/a/b/c/tiny", 0, 1, 3, false);
	write_at(fs, "/a/b/c/e", 0, 0, 4, false);
	write_at(fs, "/x", 0, 5000, 5, false);
	write_at(fs, "/gone", 0, 70000, 6, false);
	write_at(fs, "/a/grown", 0, 4096, 7, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	/* overwrite across an extent boundary and inside one block */
	write_at(fs, "/a/big", MiB - 2048, 8192, 8, false);
	write_at(fs, "/a/big", 2 * MiB + 17, 3, 9, false);
	truncate_to(fs, "/a/big", 2 * MiB + 5);
	truncate_to(fs, "/a/grown", 10000);
	ck_assert_int_eq(zcow_rename(fs, "/a/b/small", "/d/small2"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/a/b/c", "/d/c"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/x", "/d/small2"), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/gone"), 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/a/b"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
}

/* What zcow lists under @dir, recursively: "path size\n" lines sorted,
 * appended to @buf; each file's bytes copied to @copy_dir/path. */
static void zcow_list(struct zcow_fs *fs, const char *dir, char *buf,
		      size_t size, const char *copy_dir)
{
	struct zcow_dirent *ents = NULL;
	uint64_t nr = 0, i;

	ck_assert_int_eq(zcow_readdir(fs, dir, &ents, &nr), 0);
	for (i = 0; i < nr; i++) {
		char path[512], local[768];
		struct zcow_stat st;

		snprintf(path, sizeof(path), "%s/%s",
			 strcmp(dir, "/") ? dir : "", ents[i].name);
		snprintf(local, sizeof(local), "%s%s", copy_dir, path);
		if (ents[i].type == ZCOW_FT_DIR) {
			ck_assert_int_eq(mkdir(local, 0755), 0);
			zcow_list(fs, path, buf, size, copy_dir);
			continue;
		}
		ck_assert_int_eq(zcow_stat(fs, path, &st), 0);
		snprintf(buf + strlen(buf), size - strlen(buf),
			 "%s %" PRIu64 "\n", path, st.size);
		{
			struct zcow_file *f;
			uint8_t *data = malloc(st.size + 1);
			FILE *out = fopen(local, "w");

			ck_assert_ptr_nonnull(out);
			ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
			ck_assert_int_eq(zcow_pread(f, data, st.size, 0),
					 (int64_t)st.size);
			zcow_close(f);
			ck_assert_uint_eq(fwrite(data, 1, st.size, out),
					  st.size);
			ck_assert_int_eq(fclose(out), 0);
			free(data);
		}
	}
	free(ents);
}

/* A new file system: btrfs check is clean, and the root, fs, uuid and
 * data relocation trees hold the keys mkfs.btrfs puts there. */
START_TEST(test_btrfs_check_is_clean_on_a_new_file_system)
{
	/* the data relocation tree: -9 as btrfs-progs takes it */
	static const char *const trees[] = { "root", "fs", "9",
					     "18446744073709551607" };
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	char ref[] = "/tmp/zcow-btrfsref-XXXXXX";
	unsigned int i;
	struct zcow_fs *fs;
	struct zdev *dev;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	zcow_unmount(fs);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "new file system");
	/* the same items as mkfs.btrfs makes, tree by tree */
	make_btrfs_ref(ref);
	for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		char *want = tree_keys(ref, trees[i]);
		char *got = tree_keys(img, trees[i]);

		ck_assert_msg(*want, "tree %s: no keys in mkfs.btrfs's",
			      trees[i]);
		ck_assert_msg(!strcmp(got, want),
			      "tree %s: zcow has\n%s\nmkfs.btrfs makes\n%s",
			      trees[i], got, want);
		free(want);
		free(got);
	}
	unlink(ref);
	unlink(img);
}
END_TEST

/*
 * A file unlinked while open and left so at unmount: nlink 0 and an
 * ORPHAN_ITEM (ORPHAN ORPHAN_ITEM ino) in the fs tree, as btrfs leaves it
 * at a crash; btrfs check accepts it, and the next zcow mount deletes it.
 */
START_TEST(test_btrfs_check_is_clean_with_an_inode_unlinked_while_open)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	struct zcow_file *f;
	struct zcow_stat st;
	struct zcow_fs *fs;
	struct zdev *dev;
	uint8_t buf[8192];
	char *keys;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	zcow_test_fill_lcg(buf, sizeof(buf), 21);
	ck_assert_int_eq(zcow_create(fs, "/open", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), 0), 8192);
	ck_assert_int_eq(zcow_unlink_open(fs, "/open"), 1);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);	/* still open */
	zcow_close(f);
	zdev_close(dev);
	keys = tree_keys(img, "fs");
	ck_assert_msg(strstr(keys, "ORPHAN ORPHAN_ITEM"),
		      "no orphan item in the fs tree:\n%s", keys);
	free(keys);
	assert_btrfs_check_clean(img, "an inode unlinked while open");
	dev = open_img(img);
	fs = NULL;
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	keys = tree_keys(img, "fs");
	ck_assert_msg(!strstr(keys, "ORPHAN"), "orphan left:\n%s", keys);
	free(keys);
	assert_btrfs_check_clean(img, "after the mount that deletes it");
	unlink(img);
}
END_TEST

START_TEST(test_btrfs_check_is_clean_after_a_file_workload)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	struct zcow_fs *fs;
	struct zdev *dev;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	workload(fs);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "after the workload");
	unlink(img);
}
END_TEST

/*
 * Snapshots that share tree blocks (a fs tree of several levels), files
 * rewritten after each so that shared nodes are copied and turn
 * FULL_BACKREF, a writable one written into, then one snapshot deleted: btrfs check finds every
 * backref (tree block and data, by root and by parent) where it belongs.
 */
START_TEST(test_btrfs_check_is_clean_with_shared_snapshots_and_a_delete)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX", path[32];
	struct zcow_fs *fs;
	struct zdev *dev;
	int i;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	workload(fs);
	for (i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "/f%03d", i);
		write_at(fs, path, 0, 4096, (uint32_t)i, false);
	}
	ck_assert_int_eq(zcow_snapshot(fs, "s1", NULL), 0);
	for (i = 0; i < 300; i += 2) {
		snprintf(path, sizeof(path), "/f%03d", i);
		write_at(fs, path, 0, 4096, (uint32_t)i + 1000, false);
	}
	write_at(fs, "/a/big", 4096, 8192, 77, false);
	ck_assert_int_eq(zcow_snapshot(fs, "s2", NULL), 0);
	for (i = 0; i < 300; i += 3) {
		snprintf(path, sizeof(path), "/f%03d", i);
		write_at(fs, path, 0, 4096, (uint32_t)i + 2000, false);
	}
	ck_assert_int_eq(zcow_unlink(fs, "/f299"), 0);
	/* s3 writable, and written into */
	ck_assert_int_eq(zcow_subvol_snapshot(fs, "s3", false, NULL), 0);
	write_at(fs, "/s3/f005", 0, 8192, 4242, false);
	ck_assert_int_eq(zcow_unlink(fs, "/s3/f006"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/s3/new"), 0);
	write_at(fs, "/s3/new/x", 0, 5000, 4343, false);
	ck_assert_int_eq(zcow_subvol_delete(fs, "s2"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "with shared snapshots");
	unlink(img);
}
END_TEST

/*
 * Snapshots between rounds of changes: a subvolume entry in "/"
 * (DIR_ITEM/DIR_INDEX of location (id ROOT_ITEM -1)), its ROOT_REF and
 * BACKREF and its tree, shared data extents with two references each,
 * pass btrfs check, which reports a snapshot without an entry as an
 * unreferenced tree; the second snapshot holds a copy of the first's
 * entry; btrfs's own dump of the fs tree shows the entry.
 */
START_TEST(test_btrfs_check_is_clean_with_a_snapshot_linked_in_the_root_dir)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX", cmd[512], *out;
	struct zcow_fs *fs;
	struct zdev *dev;
	uint64_t id;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	workload(fs);
	ck_assert_int_eq(zcow_snapshot(fs, "snap", &id), 0);
	write_at(fs, "/a/big", 4096, 20000, 11, false);
	write_at(fs, "/new", 0, 9000, 12, false);
	ck_assert_int_eq(zcow_unlink(fs, "/d/small2"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/d/c", "/c2"), 0);
	/* a second one holds a copy of the first one's entry */
	ck_assert_int_eq(zcow_snapshot(fs, "snap2", NULL), 0);
	write_at(fs, "/c2/tiny", 0, 5, 13, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "after a snapshot and more changes");
	snprintf(cmd, sizeof(cmd),
		 "btrfs inspect-internal dump-tree -t fs %s | grep -A3 'key (256 DIR_INDEX'",
		 img);
	ck_assert_int_eq(run_capture(cmd, &out), 0);
	/* index 4: after a (2) and d (3), the root directory's last
	 * entries when the snapshot was made */
	snprintf(cmd, sizeof(cmd),
		 "key (256 DIR_INDEX 4) itemoff N itemsize 34\n\t\tlocation key (%" PRIu64 " ROOT_ITEM 18446744073709551615) type DIR\n\t\ttransid N data_len 0 name_len 4\n\t\tname: snap\n",
		 id);
	{
		char *norm = malloc(strlen(out) + 1), *o = norm;
		const char *p;

		/* itemoff and transid as N */
		for (p = out; *p;) {
			if (!strncmp(p, "itemoff ", 8) ||
			    !strncmp(p, "transid ", 8)) {
				memcpy(o, p, 8);
				o += 8;
				p += 8;
				*o++ = 'N';
				while (*p >= '0' && *p <= '9')
					p++;
			} else {
				*o++ = *p++;
			}
		}
		*o = '\0';
		ck_assert_msg(strstr(norm, cmd), "dump-tree:\n%s", out);
		free(norm);
	}
	free(out);
	unlink(img);
}
END_TEST

/*
 * A process runs the workload, then fsyncs new files, a renamed file and
 * an overwrite through the tree-log and dies before any commit: the image
 * holds a log to replay.  btrfs check reads it as it is; zcow mounts it
 * (replays, commits) and btrfs check reads the result.
 */
START_TEST(test_btrfs_check_is_clean_with_a_tree_log_and_after_its_replay)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;
	struct zcow_fs *fs;
	struct zdev *dev;
	struct zcow_stat st;
	pid_t pid;
	int status;

	need_btrfs_progs();
	temp_img(img);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fs = mkfs_mount(img, &dev);
		workload(fs);
		ck_assert_int_eq(zcow_mkdir(fs, "/log"), 0);
		write_at(fs, "/log/new", 0, 200000, 10, true);
		ck_assert_int_eq(zcow_rename(fs, "/a/big", "/log/big2"), 0);
		write_at(fs, "/log/big2", 4096, 4096, 11, true);
		write_at(fs, "/d/c/tiny", 0, 3, 12, true);
		_exit(0);	/* power gone: no unmount, no commit */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "workload process failed");
	dev = open_img(img);
	ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &copy), 0);
	ck_assert_uint_ne(le64toh(sb.log_root), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "with the tree-log");

	dev = open_img(img);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_stat(fs, "/log/new", &st), 0);
	ck_assert_uint_eq(st.size, 200000);
	ck_assert_int_eq(zcow_stat(fs, "/log/big2", &st), 0);
	ck_assert_uint_eq(st.size, 2 * MiB + 5);
	ck_assert_int_eq(zcow_stat(fs, "/a/big", &st), -ENOENT);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &copy), 0);
	ck_assert_uint_eq(le64toh(sb.log_root), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "after the replay");
	unlink(img);
}
END_TEST

/*
 * Hard links (names in several directories and two in one, whose
 * INODE_REF packs both; one name unlinked), symlinks (inline extents)
 * and xattrs (files, a directory, a symlink; one removed), committed,
 * then more of each fsynced into a tree-log the process dies with:
 * btrfs check is clean with the log and after zcow's replay, and btrfs
 * restore -S makes the symlinks zcow made.
 */
START_TEST(test_btrfs_check_is_clean_with_links_symlinks_and_xattrs)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	char out[] = "/tmp/zcow-btrfsrst-XXXXXX", cmd[512], buf[64];
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;
	struct zcow_fs *fs;
	struct zdev *dev;
	struct zcow_stat st;
	ssize_t n;
	pid_t pid;
	int status;

	need_btrfs_progs();
	temp_img(img);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct zcow_file *f;

		fs = mkfs_mount(img, &dev);
		workload(fs);
		ck_assert_int_eq(zcow_link(fs, "/a/big", "/d/big-link"), 0);
		ck_assert_int_eq(zcow_link(fs, "/a/big", "/a/big-too"), 0);
		ck_assert_int_eq(zcow_link(fs, "/d/c/tiny", "/tiny1"), 0);
		ck_assert_int_eq(zcow_link(fs, "/d/c/tiny", "/tiny2"), 0);
		ck_assert_int_eq(zcow_unlink(fs, "/tiny1"), 0);
		ck_assert_int_eq(zcow_symlink(fs, "a/big", "/sym", NULL), 0);
		ck_assert_int_eq(zcow_symlink(fs, "../../x/y/z", "/d/c/sym2",
					      NULL), 0);
		ck_assert_int_eq(zcow_setxattr(fs, "/a/big", "user.k", "v", 1,
					       0), 0);
		ck_assert_int_eq(zcow_setxattr(fs, "/a/big", "user.gone", "g",
					       1, 0), 0);
		ck_assert_int_eq(zcow_removexattr(fs, "/a/big", "user.gone"),
				 0);
		ck_assert_int_eq(zcow_setxattr(fs, "/d", "trusted.dir", "dv",
					       2, 0), 0);
		ck_assert_int_eq(zcow_setxattr(fs, "/sym", "security.s", "",
					       0, 0), 0);
		ck_assert_int_eq(zcow_sync(fs), 0);
		/* fsynced, never committed */
		ck_assert_int_eq(zcow_link(fs, "/a/grown", "/d/grown2"), 0);
		ck_assert_int_eq(zcow_unlink(fs, "/a/big-too"), 0);
		ck_assert_int_eq(zcow_setxattr(fs, "/a/grown", "user.l", "lv",
					       2, 0), 0);
		ck_assert_int_eq(zcow_open(fs, "/a/grown", O_RDONLY, &f), 0);
		ck_assert_int_eq(zcow_fsync(f), 0);
		zcow_close(f);
		ck_assert_int_eq(zcow_open(fs, "/a/big", O_RDONLY, &f), 0);
		ck_assert_int_eq(zcow_fsync(f), 0);
		zcow_close(f);
		_exit(0);	/* power gone: no unmount, no commit */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "workload process failed");
	dev = open_img(img);
	ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &copy), 0);
	ck_assert_uint_ne(le64toh(sb.log_root), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "links, symlinks, xattrs with a log");

	dev = open_img(img);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_stat(fs, "/d/grown2", &st), 0);
	ck_assert_uint_eq(st.nlink, 2);
	ck_assert_int_eq(zcow_stat(fs, "/a/big-too", &st), -ENOENT);
	ck_assert_int_eq(zcow_stat(fs, "/d/big-link", &st), 0);
	ck_assert_uint_eq(st.nlink, 2);
	ck_assert_int_eq(zcow_getxattr(fs, "/a/grown", "user.l", buf,
				       sizeof(buf)), 2);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "links, symlinks, xattrs replayed");

	ck_assert_ptr_nonnull(mkdtemp(out));
	snprintf(cmd, sizeof(cmd), "btrfs restore -S %s %s >/dev/null 2>&1",
		 img, out);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sym", out);
	n = readlink(cmd, buf, sizeof(buf));
	ck_assert_int_eq(n, 5);
	ck_assert(!memcmp(buf, "a/big", 5));
	snprintf(cmd, sizeof(cmd), "%s/d/c/sym2", out);
	n = readlink(cmd, buf, sizeof(buf));
	ck_assert_int_eq(n, 11);
	ck_assert(!memcmp(buf, "../../x/y/z", 11));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
	ck_assert_int_eq(system(cmd), 0);
	unlink(img);
}
END_TEST

/* btrfs restore copies out exactly the files zcow lists, byte for byte. */
START_TEST(test_btrfs_restore_recovers_exactly_the_files_zcow_lists)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	char base[] = "/tmp/zcow-restore-XXXXXX";
	char want[4096] = "", cmd[1024], zdir[300], rdir[300], *out;
	struct zcow_fs *fs;
	struct zdev *dev;

	need_btrfs_progs();
	temp_img(img);
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(zdir, sizeof(zdir), "%s/zcow", base);
	snprintf(rdir, sizeof(rdir), "%s/restored", base);
	ck_assert_int_eq(mkdir(zdir, 0755), 0);
	ck_assert_int_eq(mkdir(rdir, 0755), 0);
	fs = mkfs_mount(img, &dev);
	workload(fs);
	zcow_list(fs, "/", want, sizeof(want), zdir);
	ck_assert_str_eq(want, "/a/big 2097157\n/a/grown 10000\n"
			       "/d/c/e 0\n/d/c/tiny 1\n/d/small2 5000\n");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	snprintf(cmd, sizeof(cmd), "btrfs restore %s %s", img, rdir);
	ck_assert_msg(run_capture(cmd, &out) == 0, "btrfs restore: %s", out);
	free(out);
	/* the same tree of names, the same bytes in every file */
	snprintf(cmd, sizeof(cmd), "diff -r %s %s", zdir, rdir);
	ck_assert_msg(run_capture(cmd, &out) == 0, "restore differs: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	ck_assert_int_eq(system(cmd), 0);
	unlink(img);
}
END_TEST

/*
 * zcow check --data names a data block whose bytes no longer match its
 * checksum: the file, the offset, the expected and the found crc32c;
 * plain zcow check (metadata only) does not read data and stays clean.
 */
START_TEST(test_check_data_reports_a_corrupted_data_block)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX", spec[256], want[512];
	char cmd[512], *out;
	const uint64_t file_off = 8192;
	uint8_t block[4096], fe[ZCOW_FILE_EXTENT_SIZE];
	struct zcow_key k;
	struct zcow_fext ext;
	struct zcow_fs *fs;
	struct zcow_stat st;
	struct zdev *dev, *ddev;
	uint32_t size, good, bad;
	uint64_t bytenr, phys;
	int fd;

	temp_img(img);
	fs = mkfs_mount(img, &dev);
	ck_assert_int_eq(zcow_mkdir(fs, "/dir"), 0);
	write_at(fs, "/dir/f", 0, 65536, 21, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_stat(fs, "/dir/f", &st), 0);
	/* the block at file offset 8192: its logical and physical place */
	k.objectid = st.ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, fe, sizeof(fe),
					  &size), 0);
	ck_assert_int_eq(zcow_fext_decode(fe, size, 0, &ext), 0);
	bytenr = ext.disk_bytenr + ext.offset + file_off;
	ck_assert_int_eq(zcow_map_logical_dev(fs, bytenr, 4096, &ddev, &phys),
			 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=256M", img);
	snprintf(cmd, sizeof(cmd), "%s check --data %s", zcow_test_bin(),
		 spec);
	ck_assert_msg(run_capture(cmd, &out) == 0, "clean: %s", out);
	ck_assert_msg(strstr(out, "\nno problems found\n"), "%s", out);
	free(out);

	fd = open(img, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, block, sizeof(block), (off_t)phys),
			 (ssize_t)sizeof(block));
	good = zcow_crc32c(block, sizeof(block));
	block[100] ^= 0x40;
	bad = zcow_crc32c(block, sizeof(block));
	ck_assert_int_eq(pwrite(fd, block, sizeof(block), (off_t)phys),
			 (ssize_t)sizeof(block));
	close(fd);

	snprintf(cmd, sizeof(cmd), "%s check %s", zcow_test_bin(), spec);
	ck_assert_msg(run_capture(cmd, &out) == 0, "metadata only: %s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s check --data %s", zcow_test_bin(),
		 spec);
	ck_assert_int_eq(run_capture(cmd, &out), 1);
	snprintf(want, sizeof(want),
		 "\nERROR: data csum mismatch: file /dir/f offset 8192 (root 5 ino %" PRIu64 ", bytenr %" PRIu64 "): expected csum 0x%08x, found 0x%08x: Structure needs cleaning\nfound 1 problem\n",
		 st.ino, bytenr, good, bad);
	ck_assert_msg(strstr(out, want), "want:%s\ngot:\n%s", want, out);
	free(out);
	unlink(img);
}
END_TEST

/* The extent of @path's first block (the file has one extent). */
static void first_extent(struct zcow_fs *fs, const char *path,
			 struct zcow_fext *ext)
{
	uint8_t fe[ZCOW_FILE_EXTENT_SIZE];
	struct zcow_stat st;
	struct zcow_key k;
	uint32_t size;

	ck_assert_int_eq(zcow_stat(fs, path, &st), 0);
	k.objectid = st.ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, fe, sizeof(fe),
					  &size), 0);
	ck_assert_int_eq(zcow_fext_decode(fe, size, 0, ext), 0);
}

/* Take the checksum item of the extent @ext out of the csum tree; its
 * checksums into @csums (ext->disk_num_bytes / 4096 of them). */
static void take_csum_item(struct zcow_fs *fs, const struct zcow_fext *ext,
			   uint32_t *csums)
{
	struct zcow_key k = { ZCOW_CSUM_OBJECTID, ZCOW_EXTENT_CSUM_KEY,
			      ext->disk_bytenr };
	uint32_t want = (uint32_t)(ext->disk_num_bytes / 4096 * 4), size;

	ck_assert_int_eq(zcow_tree_search(&fs->csum_tree, &k, csums, want,
					  &size), 0);
	ck_assert_uint_eq(size, want);
	ck_assert_int_eq(zcow_tree_delete(&fs->csum_tree, &k), 0);
}

static void put_csum_item(struct zcow_fs *fs, uint64_t bytenr,
			  const uint32_t *csums, uint32_t nr)
{
	struct zcow_key k = { ZCOW_CSUM_OBJECTID, ZCOW_EXTENT_CSUM_KEY,
			      bytenr };

	ck_assert_int_eq(zcow_tree_insert(&fs->csum_tree, &k, csums, nr * 4),
			 0);
}

static void assert_content(struct zcow_fs *fs, const char *path,
			   uint64_t len, uint32_t seed)
{
	uint8_t *want = malloc(len), *got = malloc(len);
	struct zcow_file *f;

	zcow_test_fill_lcg(want, len, seed);
	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pread(f, got, len, 0), (int64_t)len);
	ck_assert_msg(memcmp(got, want, len) == 0, "%s: content differs",
		      path);
	zcow_close(f);
	free(want);
	free(got);
}

/* The size of the checksum item at @bytenr; -1 when there is none. */
static int64_t csum_item_size(struct zcow_fs *fs, uint64_t bytenr)
{
	struct zcow_key k = { ZCOW_CSUM_OBJECTID, ZCOW_EXTENT_CSUM_KEY,
			      bytenr };
	uint32_t size;

	if (zcow_tree_search(&fs->csum_tree, &k, NULL, 0, &size))
		return -1;
	return size;
}

/*
 * The kernel keeps the checksums of adjacent data extents in one csum
 * item (it extends the previous item) and splits an extent's checksums
 * where a leaf ends: key offsets are not extent starts.  Here one item
 * holds the checksums of /a, /b and /c's first 3 blocks (adjacent
 * extents), a second one /c's other 5: every file reads back and both
 * checkers are clean.  Deleting /b cuts the shared item in two (/a's and
 * /c's head), deleting /c removes its checksums from both items: btrfs
 * check finds no checksum without its extent.
 */
START_TEST(test_checksum_items_laid_out_as_the_kernel_does_are_read)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	struct zcow_fext ea, eb, ec;
	uint32_t csums[14];
	struct zcow_mount_opts mo = { .read_only = false };
	struct zcow_fs *fs;
	struct zdev *dev;

	need_btrfs_progs();
	/* no reclaim: it would move the extents, their checksums with them */
	ck_assert_int_eq(zcow_mount_opts_parse("reclaim=off", &mo), 0);
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	write_at(fs, "/a", 0, 16384, 31, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	write_at(fs, "/b", 0, 8192, 32, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	write_at(fs, "/c", 0, 32768, 33, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	first_extent(fs, "/a", &ea);
	first_extent(fs, "/b", &eb);
	first_extent(fs, "/c", &ec);
	ck_assert_uint_eq(ea.disk_num_bytes, 16384);
	ck_assert_uint_eq(eb.disk_bytenr, ea.disk_bytenr + 16384);
	ck_assert_uint_eq(ec.disk_bytenr, eb.disk_bytenr + 8192);
	ck_assert_uint_eq(ec.disk_num_bytes, 32768);
	take_csum_item(fs, &ea, csums);
	take_csum_item(fs, &eb, csums + 4);
	take_csum_item(fs, &ec, csums + 6);
	put_csum_item(fs, ea.disk_bytenr, csums, 9);
	put_csum_item(fs, ec.disk_bytenr + 3 * 4096, csums + 9, 5);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	assert_content(fs, "/a", 16384, 31);
	assert_content(fs, "/b", 8192, 32);
	assert_content(fs, "/c", 32768, 33);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_check_data(fs, NULL, NULL), 0);

	ck_assert_int_eq(zcow_unlink(fs, "/b"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(csum_item_size(fs, ea.disk_bytenr), 4 * 4);
	ck_assert_int_eq(csum_item_size(fs, eb.disk_bytenr), -1);
	ck_assert_int_eq(csum_item_size(fs, ec.disk_bytenr), 3 * 4);
	ck_assert_int_eq(csum_item_size(fs, ec.disk_bytenr + 3 * 4096), 5 * 4);
	assert_content(fs, "/a", 16384, 31);
	assert_content(fs, "/c", 32768, 33);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_check_data(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	assert_btrfs_check_clean(img, "checksum items merged, cut in two");

	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/c"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_csum_lookup(&fs->csum_tree, ec.disk_bytenr,
					  4096, NULL), -ENOENT);
	ck_assert_int_eq(zcow_csum_lookup(&fs->csum_tree,
					  ec.disk_bytenr + 3 * 4096, 4096,
					  NULL), -ENOENT);
	assert_content(fs, "/a", 16384, 31);
	ck_assert_int_eq(zcow_check_data(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "checksums of deleted files removed");
	unlink(img);
}
END_TEST

/*
 * The kernel placement is clean to btrfs-progs: dump-super prints the
 * flags of a mkfs.btrfs file system (WRITTEN only).  The seed placement
 * keeps flags bit 56, which dump-super names an unknown flag (the one
 * known difference) and which keeps the kernel from mounting it (it would
 * allocate the seed mirrors' zones); btrfs check is clean on both, and
 * zcow reads back the placement it made.
 */
START_TEST(test_placement_kernel_is_clean_and_seed_keeps_the_kernel_off)
{
	static const enum zcow_sb_placement places[] = { ZCOW_SB_PLACE_SEED,
							ZCOW_SB_PLACE_KERNEL };
	static const char *const flags[] = {
		"flags\t\t\t0x100000000000001\n\t\t\t( WRITTEN |\n"
		"\t\t\t  unknown flag: 0x100000000000000 )\n",
		"flags\t\t\t0x1\n\t\t\t( WRITTEN )\n"
		"magic\t\t\t_BHRfS_M [match]\n",
	};
	unsigned int i;

	need_btrfs_progs();
	for (i = 0; i < 2; i++) {
		struct zcow_mkfs_opts mo = { .seed = 18,
					     .placement = places[i] };
		char img[] = "/tmp/zcow-btrfschk-XXXXXX", cmd[512], *out;
		struct zcow_super_block sb;
		struct zcow_sb_copy copy;
		struct zdev *dev;

		temp_img(img);
		dev = open_img(img);
		ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
		zdev_close(dev);
		snprintf(cmd, sizeof(cmd),
			 "btrfs inspect-internal dump-super %s | grep -A2 '^flags'",
			 img);
		ck_assert_int_eq(run_capture(cmd, &out), 0);
		ck_assert_msg(!strcmp(out, flags[i]),
			      "%s: dump-super says\n%s",
			      zcow_sb_placement_name(places[i]), out);
		free(out);
		assert_btrfs_check_clean(img, zcow_sb_placement_name(places[i]));
		dev = open_img(img);
		ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &copy), 0);
		ck_assert_int_eq(zcow_sb_placement_of(&sb), places[i]);
		zdev_close(dev);
		unlink(img);
	}
}
END_TEST

/* The quick crash-btrfs campaign with btrfs check on every @every-th
 * state (test-only @mutation, 0: none). */
static struct zcrash_summary crash_btrfs_of(const char *scenario,
					    uint64_t every, int mutation)
{
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .no_results = true, .btrfs_check = every,
				 .mutation = mutation };
	struct zcrash_summary sum;

	ck_assert_int_ge(zcrash_run(scenario, &o, &sum), 0);
	return sum;
}

static struct zcrash_summary crash_btrfs(uint64_t every, int mutation)
{
	return crash_btrfs_of("configs/crash-btrfs.scenario", every, mutation);
}

/*
 * Crash states as an independent checker reads them: the quick
 * crash-btrfs campaign (18 states per tree-log mode), btrfs check
 * --readonly on every 4th state, on the image the power cut left and on
 * the one zcow's recovery left: 9 states, 18 images, all clean.
 */
/* The quick campaign @scenario with every 4th state checked: @tried
 * states, @checked of them checked (two images each), all clean. */
static void assert_crash_states_clean(const char *scenario, uint64_t tried,
				      uint64_t checked)
{
	struct zcrash_summary s;

	need_btrfs_progs();
	s = crash_btrfs_of(scenario, 4, 0);
	ck_assert_msg(s.violations == 0, "first: %s", s.first_repro);
	ck_assert_uint_eq(s.tried, tried);
	ck_assert_uint_eq(s.btrfs_states, checked);
	ck_assert_uint_eq(s.btrfs_images, 2 * checked);
	ck_assert_uint_eq(s.by_oracle[ZCRASH_BTRFS], 0);
}

START_TEST(test_btrfs_check_is_clean_on_crash_states_and_their_recovery)
{
	assert_crash_states_clean("configs/crash-btrfs.scenario", 36, 9);
}
END_TEST

/*
 * Crash states with snapshots that share nodes (quick crash-snapshot-btrfs:
 * 42 states per tree-log mode, cuts in the copy-on-write of shared nodes,
 * in the snapshots' commits, in a snapshot's drop and in writes into a
 * writable one): btrfs check on every 4th state, the cut image and the
 * recovered one, all clean.
 */
START_TEST(test_btrfs_check_is_clean_on_crash_states_with_snapshots)
{
	assert_crash_states_clean("configs/crash-snapshot-btrfs.scenario", 84,
				  21);
}
END_TEST

/*
 * The kernel stores a small file's data inline, in the file extent item
 * (type 0, the bytes after its 21-byte header; max_inline, 2048 by
 * default): zcow reads it, whole and from an offset, both checkers
 * accept it; a write into it turns it into a regular extent first (zcow
 * writes no inline extent).
 */
START_TEST(test_an_inline_extent_as_the_kernel_writes_it_is_read)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	static const char text[] = "hello, inline";
	const uint64_t n = sizeof(text) - 1;
	uint8_t item[21 + sizeof(text)], got[32];
	struct zcow_inode in;
	struct zcow_file *f;
	struct zcow_stat st;
	struct zcow_key k;
	struct zcow_fs *fs;
	struct zdev *dev;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_open(fs, "/d/t", O_CREAT | O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_truncate(f, n), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_stat(fs, "/d/t", &st), 0);
	memset(item, 0, sizeof(item));
	put64(item, fs->transid);	/* generation */
	put64(item + 8, n);		/* ram_bytes */
	item[20] = 0;			/* BTRFS_FILE_EXTENT_INLINE */
	memcpy(item + 21, text, n);
	k.objectid = st.ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, item, 21 + n), 0);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, st.ino, &in), 0);
	in.nbytes = n;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);

	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_open(fs, "/d/t", O_RDONLY, &f), 0);
	memset(got, 0xaa, sizeof(got));
	ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0), (int64_t)n);
	ck_assert_int_eq(memcmp(got, text, n), 0);
	ck_assert_int_eq(zcow_pread(f, got, 6, 7), 6);
	ck_assert_int_eq(memcmp(got, "inline", 6), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "an inline extent");

	/* zcow writes no inline extent: a write into a file that has one
	 * (after its end, so the inline bytes must stay) turns it into a
	 * regular extent first, as the kernel does */
	dev = open_img(img);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_open(fs, "/d/t", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "XY", 2, 9000), 2);
	ck_assert_int_eq(zcow_pwrite(f, "HELLO", 5, 0), 5);
	memset(got, 0xaa, sizeof(got));
	ck_assert_int_eq(zcow_pread(f, got, n, 0), (int64_t)n);
	ck_assert_int_eq(memcmp(got, "HELLO, inline", n), 0);
	ck_assert_int_eq(zcow_pread(f, got, 4, 8999), 3);
	ck_assert_int_eq(memcmp(got, "\0XY", 3), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_stat(fs, "/d/t", &st), 0);
	ck_assert_uint_eq(st.size, 9002);
	ck_assert_uint_eq(st.nbytes, 2 * 4096);	/* blocks 0 and 2 */
	k.objectid = st.ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item,
					  sizeof(item), NULL), 0);
	ck_assert_uint_eq(item[20], 1);		/* regular now */
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_check_data(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "an inline extent written into");
	unlink(img);
}
END_TEST

/*
 * Oracle 11 can fail: with the superblock written before the flush that
 * makes its trees durable (ZCOW_MUT_SB_BEFORE_FLUSH), a cut that drops
 * the unflushed nodes leaves a superblock pointing at blocks that are
 * not there, and btrfs check says so; a repro line of such a state
 * carries btrfs-check and reruns it.
 */
START_TEST(test_btrfs_check_oracle_catches_a_superblock_before_its_trees)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true };
	struct zcrash_summary s, r;

	need_btrfs_progs();
	s = crash_btrfs(1, ZCOW_MUT_SB_BEFORE_FLUSH);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_BTRFS], 0);
	ck_assert_ptr_nonnull(strstr(s.first_repro, " btrfs-check"));
	o.repro = s.first_repro;
	o.mutation = ZCOW_MUT_SB_BEFORE_FLUSH;
	ck_assert_int_eq(zcrash_run(NULL, &o, &r), 1);
	ck_assert_uint_eq(r.btrfs_states, 1);
}
END_TEST

/* --btrfs-check needs the geometry btrfs-progs reads a plain file as. */
START_TEST(test_btrfs_check_option_refuses_a_zoned_geometry)
{
	char cmd[512], *out;

	snprintf(cmd, sizeof(cmd),
		 "%s crash configs/crash-commit.scenario --quick --no-results --btrfs-check 2",
		 zcow_test_bin());
	ck_assert_int_eq(run_capture(cmd, &out), 2);
	ck_assert_str_eq(out, "zcow crash: btrfs check: device 'sim:zones=24,zone_size=4M,zone_cap=1M': btrfs-progs reads a plain file as conventional zones of 256 MiB: give the device zone_size=256M,conv=24,emulated=on (it has 0 of 24 zones conventional, zone size 4194304, zoned)\n");
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "%s crash configs/crash-btrfs.scenario --quick --btrfs-check 0",
		 zcow_test_bin());
	ck_assert_int_eq(run_capture(cmd, &out), 2);
	ck_assert_str_eq(out, "zcow crash: --btrfs-check '0': a number of states >= 1 (every Nth state is checked)\n");
	free(out);
}
END_TEST

/*
 * The POSIX attribute calls leave what btrfs check accepts: modes and
 * owners set at creation and changed, times set, a file exchanged with
 * a directory across directories (entry types, INODE_REFs, DIR_INDEXes,
 * directory sizes), a rename that must not replace, O_APPEND writes and
 * a sparse file.
 */
START_TEST(test_btrfs_check_is_clean_after_the_attribute_calls)
{
	char img[] = "/tmp/zcow-btrfschk-XXXXXX";
	struct zcow_cred cred = { 1000, 1000 };
	struct zcow_timespec ts[2] = { { 1000000000, 5 },
				       { 0, ZCOW_UTIME_NOW } };
	struct zcow_file *f;
	struct zcow_fs *fs;
	struct zdev *dev;
	int i;

	need_btrfs_progs();
	temp_img(img);
	fs = mkfs_mount(img, &dev);
	ck_assert_int_eq(zcow_mkdir_as(fs, "/p", 0700, &cred), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/q"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/q/dir"), 0);
	write_at(fs, "/q/dir/inner", 0, 5000, 1, false);
	ck_assert_int_eq(zcow_open_as(fs, "/p/file", O_CREAT | O_EXCL | O_RDWR,
				      0640, &cred, &f), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_open_as(fs, "/p/file", O_WRONLY | O_APPEND, 0,
				      NULL, &f), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(zcow_pwrite(f, "record\n", 7, 0), 7);
	zcow_close(f);
	ck_assert_int_eq(zcow_chmod(fs, "/p/file", 04755), 0);
	ck_assert_int_eq(zcow_chown(fs, "/p/file", UINT32_MAX, 50), 0);
	ck_assert_int_eq(zcow_utimens(fs, "/p/file", ts), 0);
	ck_assert_int_eq(zcow_utimens(fs, "/q", NULL), 0);
	ck_assert_int_eq(zcow_rename2(fs, "/p/file", "/q/dir",
				      ZCOW_RENAME_EXCHANGE), 0);
	ck_assert_int_eq(zcow_rename2(fs, "/q/dir", "/p/file",
				      ZCOW_RENAME_NOREPLACE), -EEXIST);
	ck_assert_int_eq(zcow_rename2(fs, "/q/dir", "/q/moved",
				      ZCOW_RENAME_NOREPLACE), 0);
	write_at(fs, "/sparse", 3 * MiB, 10, 2, false);
	ck_assert_int_eq(zcow_truncate_path(fs, "/sparse", 5 * MiB), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	assert_btrfs_check_clean(img, "after the attribute calls");
	unlink(img);
}
END_TEST

Suite *btrfs_check_suite(void)
{
	Suite *s = suite_create("btrfs_check_suite");
	TCase *tc = tcase_create("btrfs_check");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_btrfs_check_is_clean_on_a_new_file_system);
	tcase_add_test(tc, test_btrfs_check_is_clean_after_a_file_workload);
	tcase_add_test(tc, test_btrfs_check_is_clean_with_an_inode_unlinked_while_open);
	tcase_add_test(tc, test_btrfs_check_is_clean_after_the_attribute_calls);
	tcase_add_test(tc, test_btrfs_check_is_clean_with_shared_snapshots_and_a_delete);
	tcase_add_test(tc, test_btrfs_check_is_clean_with_a_snapshot_linked_in_the_root_dir);
	tcase_add_test(tc, test_checksum_items_laid_out_as_the_kernel_does_are_read);
	tcase_add_test(tc, test_an_inline_extent_as_the_kernel_writes_it_is_read);
	tcase_add_test(tc, test_btrfs_check_is_clean_with_a_tree_log_and_after_its_replay);
	tcase_add_test(tc, test_btrfs_check_is_clean_with_links_symlinks_and_xattrs);
	tcase_add_test(tc, test_btrfs_restore_recovers_exactly_the_files_zcow_lists);
	tcase_add_test(tc, test_check_data_reports_a_corrupted_data_block);
	tcase_add_test(tc, test_placement_kernel_is_clean_and_seed_keeps_the_kernel_off);
	tcase_add_test(tc, test_btrfs_check_is_clean_on_crash_states_and_their_recovery);
	tcase_add_test(tc, test_btrfs_check_is_clean_on_crash_states_with_snapshots);
	tcase_add_test(tc, test_btrfs_check_oracle_catches_a_superblock_before_its_trees);
	tcase_add_test(tc, test_btrfs_check_option_refuses_a_zoned_geometry);
	suite_add_tcase(s, tc);
	return s;
}
