// SPDX-License-Identifier: MIT
/*
 * The file layer's namespace and API (core/inode.c; core/file.c and
 * core/snapshot.c through it): files and directories survive
 * unmount/mount, every errno POSIX gives, rename, snapshots, the checker's
 * fs-tree checks.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csum.h"
#include "files.h"
#include "tests.h"
#include "zcow.h"
#include "zlog.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zdev *new_sim(uint64_t nr_zones, uint64_t nr_conv)
{
	struct zsim_config cfg = { .nr_zones = nr_zones, .zone_size = ZS,
				   .nr_conv = nr_conv, .seed = 7 };

	return zcow_test_sim(&cfg);
}

/* The checker's messages, in order. */
struct problems {
	int nr;
	char msg[8][512];
};

static void collect_problem(void *arg, const char *msg)
{
	struct problems *pr = arg;

	fprintf(stderr, "check: %s\n", msg);
	if (pr->nr < 8)
		snprintf(pr->msg[pr->nr], sizeof(pr->msg[0]), "%s", msg);
	pr->nr++;
}

static void problems_collect(struct zcow_fs *fs, struct problems *pr)
{
	memset(pr, 0, sizeof(*pr));
	ck_assert_int_eq(zcow_check(fs, collect_problem, pr), pr->nr);
}

static struct zcow_fs *mkfs_mount(struct zdev *dev,
				  const struct zcow_mount_opts *opts)
{
	struct zcow_fs *fs = zcow_test_mkfs_mount(dev, 1, opts);

	ck_assert_ptr_nonnull(fs->files);
	return fs;
}

/* Unmount, mount again with @opts, check clean. */
static struct zcow_fs *remount(struct zcow_fs *fs,
			       const struct zcow_mount_opts *opts)
{
	fs = zcow_test_remount(fs, opts);
	zcow_test_assert_clean(fs);
	return fs;
}

START_TEST(test_files_write_fsync_remount_reads_back)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint64_t len = 3 * MiB + 123;
	uint8_t *buf = malloc(len);
	struct zcow_file *f;

	zcow_test_fill_lcg(buf, len, 1);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, 0), (int64_t)len);
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
	zcow_test_expect(fs, "/a", buf, len);
	zcow_test_assert_clean(fs);
	fs = remount(fs, NULL);
	zcow_test_expect(fs, "a", buf, len);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

START_TEST(test_files_unaligned_overwrite_is_cow)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t *model = calloc(1, 200000), *buf = malloc(70000);
	struct zcow_space_info before, after;
	struct zcow_file *f;
	uint64_t end = 0;
	int i;

	ck_assert_int_eq(zcow_create(fs, "/f", &f), 0);
	for (i = 0; i < 50; i++) {
		uint64_t off = (uint64_t)(i * 7919) % 120000;
		uint64_t len = 1 + (uint64_t)(i * 3331) % 70000;

		zcow_test_fill_lcg(buf, len, (uint32_t)i);
		ck_assert_int_eq(zcow_pwrite(f, buf, len, off), (int64_t)len);
		memcpy(model + off, buf, len);
		if (off + len > end)
			end = off + len;
	}
	zcow_close(f);
	zcow_test_expect(fs, "/f", model, end);
	zcow_space_info(fs, ZCOW_SPACE_DATA, &before);
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_space_info(fs, ZCOW_SPACE_DATA, &after);
	/* Overwritten blocks are unusable, not reused. */
	ck_assert_uint_gt(after.zone_unusable, 0);
	fs = remount(fs, NULL);
	zcow_test_expect(fs, "/f", model, end);
	/* Truncate down to an unaligned size, then grow: zeros beyond. */
	ck_assert_int_eq(zcow_open(fs, "/f", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_truncate(f, 5000), 0);
	ck_assert_int_eq(zcow_truncate(f, 9000), 0);
	memset(model + 5000, 0, 4000);
	zcow_close(f);
	zcow_test_expect(fs, "/f", model, 9000);
	fs = remount(fs, NULL);
	zcow_test_expect(fs, "/f", model, 9000);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(model);
	free(buf);
}
END_TEST

START_TEST(test_files_dirs_rename_readdir)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_dirent *ents;
	struct zcow_stat st;
	uint64_t nr;

	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d/e"), 0);
	zcow_test_put(fs, "/d/e/x", "hello", 5);
	zcow_test_put(fs, "/d/y", "world!", 6);
	ck_assert_int_eq(zcow_rename(fs, "/d/e/x", "/d/z"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/d/y", "/d/z"), 0);	/* replaces */
	zcow_test_expect(fs, "/d/z", "world!", 6);
	ck_assert_int_eq(zcow_stat(fs, "/d/y", &st), -ENOENT);
	ck_assert_int_eq(zcow_rename(fs, "/d/e", "/f"), 0);
	ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(ents[0].name, "d");
	ck_assert_str_eq(ents[1].name, "f");
	ck_assert_int_eq(ents[1].type, 2);
	free(ents);
	fs = remount(fs, NULL);
	ck_assert_int_eq(zcow_readdir(fs, "/d", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 1);
	ck_assert_str_eq(ents[0].name, "z");
	free(ents);
	ck_assert_int_eq(zcow_stat(fs, "/f", &st), 0);
	ck_assert(S_ISDIR(st.mode));
	ck_assert_int_eq(zcow_unlink(fs, "/d/z"), 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/f"), 0);
	fs = remount(fs, NULL);
	ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 0);
	free(ents);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_every_errno)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_file *f;
	struct zcow_stat st;
	char longname[300];

	memset(longname, 'n', 256);
	longname[256] = '\0';
	zcow_test_put(fs, "/file", "x", 1);
	ck_assert_int_eq(zcow_mkdir(fs, "/dir"), 0);
	zcow_test_put(fs, "/dir/in", "y", 1);
	ck_assert_int_eq(zcow_open(fs, "/nope", O_RDONLY, &f), -ENOENT);
	ck_assert_int_eq(zcow_stat(fs, "/nope/x", &st), -ENOENT);
	ck_assert_int_eq(zcow_create(fs, "/file", &f), -EEXIST);
	ck_assert_int_eq(zcow_mkdir(fs, "/dir"), -EEXIST);
	ck_assert_int_eq(zcow_mkdir(fs, "/file"), -EEXIST);
	ck_assert_int_eq(zcow_create(fs, "/file/x", &f), -ENOTDIR);
	ck_assert_int_eq(zcow_rmdir(fs, "/file"), -ENOTDIR);
	ck_assert_int_eq(zcow_open(fs, "/dir", O_RDWR, &f), -EISDIR);
	ck_assert_int_eq(zcow_unlink(fs, "/dir"), -EISDIR);
	ck_assert_int_eq(zcow_rename(fs, "/file", "/dir"), -EISDIR);
	ck_assert_int_eq(zcow_rename(fs, "/dir", "/file"), -ENOTDIR);
	ck_assert_int_eq(zcow_rmdir(fs, "/dir"), -ENOTEMPTY);
	ck_assert_int_eq(zcow_mkdir(fs, "/d2"), 0);
	zcow_test_put(fs, "/d2/q", "z", 1);
	ck_assert_int_eq(zcow_rename(fs, "/d2", "/dir"), -ENOTEMPTY);
	ck_assert_int_eq(zcow_rename(fs, "/dir", "/dir/in2"), -EINVAL);
	ck_assert_int_eq(zcow_create(fs, longname, &f), -ENAMETOOLONG);
	ck_assert_int_eq(zcow_open(fs, "/file", O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "a", 1, 0), -EBADF);
	ck_assert_int_eq(zcow_fallocate(f, 0, 4096), -EOPNOTSUPP);
	ck_assert_int_eq(zcow_set_nodatacow(f), -EOPNOTSUPP);
	zcow_close(f);
	{
		struct zcow_mount_opts mo = { 0 };

		ck_assert_int_eq(zcow_mount_opts_parse("nodatacow", &mo),
				 -EINVAL);
		ck_assert_int_eq(zcow_mount_opts_parse("zone_append=off,ro",
						       &mo), 0);
		ck_assert(mo.no_zone_append && mo.read_only);
		ck_assert_int_eq(zcow_mount_opts_parse("zone_append=maybe",
						       &mo), -EINVAL);
		/* One setting once: two options that set it differently
		 * are refused, not resolved by the last one. */
		ck_assert_int_eq(zcow_mount_opts_parse("ro,rw", &mo),
				 -EINVAL);
		ck_assert_int_eq(zcow_mount_opts_parse("treelog=on,notreelog",
						       &mo), -EINVAL);
		ck_assert_int_eq(zcow_mount_opts_parse("noatime,relatime",
						       &mo), -EINVAL);
		ck_assert_int_eq(zcow_mount_opts_parse("data_zones=2,data_zones=4",
						       &mo), -EINVAL);
		memset(&mo, 0, sizeof(mo));
		ck_assert_int_eq(zcow_mount_opts_parse("ro,noatime,ro", &mo),
				 0);
		ck_assert(mo.read_only);
		ck_assert_int_eq(mo.atime, ZCOW_ATIME_NOATIME);
	}
	fs = remount(fs, &ro);
	ck_assert_int_eq(zcow_create(fs, "/new", &f), -EROFS);
	ck_assert_int_eq(zcow_mkdir(fs, "/newd"), -EROFS);
	ck_assert_int_eq(zcow_unlink(fs, "/file"), -EROFS);
	ck_assert_int_eq(zcow_open(fs, "/file", O_RDWR, &f), -EROFS);
	zcow_test_expect(fs, "/file", "x", 1);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_snapshot_keeps_old_contents_and_shares_extents)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t a[20000], b[20000];
	struct zcow_dirent *ents;
	struct zcow_space_info s1, s2;
	struct zcow_file *f;
	uint64_t nr, id;

	zcow_test_fill_lcg(a, sizeof(a), 3);
	zcow_test_fill_lcg(b, sizeof(b), 4);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	zcow_test_put(fs, "/d/f", a, sizeof(a));
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_space_info(fs, ZCOW_SPACE_DATA, &s1);
	ck_assert_int_eq(zcow_snapshot(fs, "s1", &id), 0);
	ck_assert_uint_ge(id, 256);
	zcow_space_info(fs, ZCOW_SPACE_DATA, &s2);
	ck_assert_uint_eq(s1.used, s2.used);	/* shared, not copied */
	ck_assert_int_eq(zcow_snapshot(fs, "s1", NULL), -EEXIST);
	zcow_test_assert_clean(fs);
	zcow_test_put(fs, "/d/f", b, sizeof(b));
	ck_assert_int_eq(zcow_unlink(fs, "/d/f"), 0);
	zcow_test_expect(fs, "/s1/d/f", a, sizeof(a));
	ck_assert_int_eq(zcow_open(fs, "/s1/d/f", O_RDWR, &f), -EROFS);
	ck_assert_int_eq(zcow_unlink(fs, "/s1/d/f"), -EROFS);
	fs = remount(fs, NULL);
	zcow_test_expect(fs, "/s1/d/f", a, sizeof(a));
	ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(ents[0].name, "d");
	ck_assert_str_eq(ents[1].name, "s1");
	ck_assert_uint_eq(ents[1].type, ZCOW_FT_DIR);
	ck_assert_uint_eq(ents[1].ino, id);
	free(ents);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

static uint64_t le64_at(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The whole item at @k of @t into @buf: its size. */
static uint32_t item_at(struct zcow_tree *t, uint64_t objectid, uint8_t type,
			uint64_t offset, uint8_t *buf, uint32_t cap)
{
	struct zcow_key k = { objectid, type, offset };
	uint32_t size = 0;

	ck_assert_int_eq(zcow_tree_search(t, &k, buf, cap, &size), 0);
	ck_assert_uint_le(size, cap);
	return size;
}

/* A btrfs_dir_item + name of a subvolume entry: location (@id, ROOT_ITEM,
 * -1), type dir, transid @transid, no data. */
static void assert_subvol_dir_item(const uint8_t *d, uint32_t size,
				   uint64_t id, uint64_t transid,
				   const char *name)
{
	size_t len = strlen(name);

	ck_assert_uint_eq(size, 30 + len);
	ck_assert_uint_eq(le64_at(d), id);
	ck_assert_uint_eq(d[8], ZCOW_ROOT_ITEM_KEY);
	ck_assert_uint_eq(le64_at(d + 9), UINT64_MAX);
	ck_assert_uint_eq(le64_at(d + 17), transid);
	ck_assert_uint_eq(d[25] | d[26] << 8, 0);	/* data_len */
	ck_assert_uint_eq(d[27] | d[28] << 8, len);
	ck_assert_uint_eq(d[29], ZCOW_FT_DIR);
	ck_assert_mem_eq(d + 30, name, len);
}

START_TEST(test_files_snapshot_is_a_subvolume_entry_of_the_root_dir)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t buf[512];
	struct zcow_inode before, after;
	uint64_t id, transid;
	uint32_t size;

	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);		/* index 2 */
	zcow_test_put(fs, "/d/f", "abc", 3);
	zcow_test_put(fs, "/g", "xy", 2);			/* index 3 */
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, 256, &before), 0);
	ck_assert_int_eq(zcow_snapshot(fs, "snap", &id), 0);
	/* the snapshot's transaction (its root item's otransid), after the
	 * commit that makes the source's nodes shareable */
	{
		uint8_t ri[ZCOW_ROOT_ITEM_SIZE];
		struct zcow_key rk;

		ck_assert_int_eq(zcow_root_item_find(&fs->root_tree, id, &rk,
						     ri, NULL), 0);
		transid = le64_at(ri + 303);
		ck_assert_uint_gt(transid, before.transid);
	}
	/* DIR_ITEM (256, DIR_ITEM, hash) and DIR_INDEX (256, DIR_INDEX, 4) */
	size = item_at(&fs->fs_tree, 256, ZCOW_DIR_ITEM_KEY,
		       zcow_name_hash("snap", 4), buf, sizeof(buf));
	assert_subvol_dir_item(buf, size, id, transid, "snap");
	size = item_at(&fs->fs_tree, 256, ZCOW_DIR_INDEX_KEY, 4, buf,
		       sizeof(buf));
	assert_subvol_dir_item(buf, size, id, transid, "snap");
	/* no INODE_REF for it in the fs tree: the only one into 256 is
	 * the root's own ".." (key objectid 256, as the first id is) */
	ck_assert_uint_eq(id, 256);
	size = item_at(&fs->fs_tree, 256, ZCOW_INODE_REF_KEY, 256, buf,
		       sizeof(buf));
	ck_assert_uint_eq(size, 10 + 2);
	ck_assert_mem_eq(buf + 10, "..", 2);
	/* the root directory grew by 2 x 4 */
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, 256, &after), 0);
	ck_assert_uint_eq(after.size, before.size + 8);
	ck_assert_uint_eq(after.transid, transid);
	/* ROOT_REF and ROOT_BACKREF: dirid 256, sequence 4, the name */
	size = item_at(&fs->root_tree, 5, ZCOW_ROOT_REF_KEY, id, buf,
		       sizeof(buf));
	ck_assert_uint_eq(size, 18 + 4);
	ck_assert_uint_eq(le64_at(buf), 256);
	ck_assert_uint_eq(le64_at(buf + 8), 4);
	ck_assert_uint_eq(buf[16] | buf[17] << 8, 4);
	ck_assert_mem_eq(buf + 18, "snap", 4);
	size = item_at(&fs->root_tree, id, ZCOW_ROOT_BACKREF_KEY, 5, buf,
		       sizeof(buf));
	ck_assert_uint_eq(size, 18 + 4);
	ck_assert_uint_eq(le64_at(buf), 256);
	ck_assert_uint_eq(le64_at(buf + 8), 4);
	ck_assert_mem_eq(buf + 18, "snap", 4);
	/* The snapshot's copy does not hold its own entry. */
	{
		struct zcow_dirent *ents;
		uint64_t nr;

		ck_assert_int_eq(zcow_readdir(fs, "/snap", &ents, &nr), 0);
		ck_assert_uint_eq(nr, 2);
		ck_assert_str_eq(ents[0].name, "d");
		ck_assert_str_eq(ents[1].name, "g");
		free(ents);
	}
	zcow_test_assert_clean(fs);
	fs = remount(fs, NULL);
	size = item_at(&fs->fs_tree, 256, ZCOW_DIR_INDEX_KEY, 4, buf,
		       sizeof(buf));
	assert_subvol_dir_item(buf, size, id, transid, "snap");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_snapshot_path_stat_readdir_and_errnos)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t a[9000];
	struct zcow_dirent *ents;
	struct zcow_stat st;
	struct zcow_file *f;
	uint64_t nr, id;

	zcow_test_fill_lcg(a, sizeof(a), 11);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	zcow_test_put(fs, "/d/f", a, sizeof(a));
	zcow_test_put(fs, "/file", "1", 1);
	ck_assert_int_eq(zcow_mkdir(fs, "/dir"), 0);
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	/* readdir of / lists it as a directory */
	ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 4);
	ck_assert_str_eq(ents[0].name, "d");
	ck_assert_str_eq(ents[1].name, "dir");
	ck_assert_str_eq(ents[2].name, "file");
	ck_assert_str_eq(ents[3].name, "s");
	ck_assert_uint_eq(ents[3].type, ZCOW_FT_DIR);
	free(ents);
	/* "/s" stats as the snapshot's root directory 256 */
	ck_assert_int_eq(zcow_stat(fs, "/s", &st), 0);
	ck_assert_uint_eq(st.ino, 256);
	ck_assert_uint_eq(st.mode, S_IFDIR | 0755);
	ck_assert_uint_eq(st.size, 2 * (1 + 3 + 4));	/* d, dir, file */
	ck_assert_int_eq(zcow_stat(fs, "/s/d/f", &st), 0);
	ck_assert_uint_eq(st.size, sizeof(a));
	zcow_test_expect(fs, "/s/d/f", a, sizeof(a));
	ck_assert_int_eq(zcow_open(fs, "/s", O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_uint_eq(st.ino, 256);
	zcow_close(f);
	/* writes in it: -EROFS */
	ck_assert_int_eq(zcow_open(fs, "/s/d/f", O_RDWR, &f), -EROFS);
	ck_assert_int_eq(zcow_create(fs, "/s/new", &f), -EROFS);
	ck_assert_int_eq(zcow_mkdir(fs, "/s/nd"), -EROFS);
	ck_assert_int_eq(zcow_unlink(fs, "/s/file"), -EROFS);
	ck_assert_int_eq(zcow_rmdir(fs, "/s/dir"), -EROFS);
	ck_assert_int_eq(zcow_rename(fs, "/s/file", "/s/g"), -EROFS);
	ck_assert_int_eq(zcow_rename(fs, "/file", "/s/g"), -EROFS);
	/* the entry itself: -EPERM to remove, -EXDEV to move */
	ck_assert_int_eq(zcow_unlink(fs, "/s"), -EPERM);
	ck_assert_int_eq(zcow_rmdir(fs, "/s"), -EPERM);
	ck_assert_int_eq(zcow_rename(fs, "/s", "/t"), -EXDEV);
	ck_assert_int_eq(zcow_rename(fs, "/file", "/s"), -EXDEV);
	ck_assert_int_eq(zcow_rename(fs, "/dir", "/s"), -EXDEV);
	/* the name is taken, both ways */
	ck_assert_int_eq(zcow_create(fs, "/s", &f), -EEXIST);
	ck_assert_int_eq(zcow_mkdir(fs, "/s"), -EEXIST);
	ck_assert_int_eq(zcow_snapshot(fs, "file", NULL), -EEXIST);
	ck_assert_int_eq(zcow_snapshot(fs, "dir", NULL), -EEXIST);
	ck_assert_int_eq(zcow_snapshot(fs, "s", NULL), -EEXIST);
	ck_assert_int_eq(fs->error, 0);
	/* no virtual directory any more */
	ck_assert_int_eq(zcow_stat(fs, "/.snapshots", &st), -ENOENT);
	ck_assert_int_eq(zcow_stat(fs, "/.snapshots/s", &st), -ENOENT);
	ck_assert_int_eq(zcow_open(fs, "/.snapshots/s/d/f", O_RDONLY, &f),
			 -ENOENT);
	ck_assert_int_eq(zcow_readdir(fs, "/.snapshots", &ents, &nr),
			 -ENOENT);
	/* ".snapshots" is an ordinary name now */
	ck_assert_int_eq(zcow_mkdir(fs, "/.snapshots"), 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/.snapshots"), 0);
	/* the fs tree goes on; the snapshot keeps its bytes */
	ck_assert_int_eq(zcow_unlink(fs, "/d/f"), 0);
	zcow_test_expect(fs, "/s/d/f", a, sizeof(a));
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * A later snapshot copies the earlier one's entry; like the kernel, it
 * shows there as an empty read-only directory (the subvolume's parent is
 * the fs tree, not the snapshot).
 */
START_TEST(test_files_snapshot_copied_subvolume_entry_is_an_empty_dir)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_dirent *ents;
	struct zcow_stat st;
	struct zcow_file *f;
	uint64_t nr, id1;

	zcow_test_put(fs, "/f", "abc", 3);
	ck_assert_int_eq(zcow_snapshot(fs, "s1", &id1), 0);
	ck_assert_int_eq(zcow_snapshot(fs, "s2", NULL), 0);
	ck_assert_int_eq(zcow_readdir(fs, "/s2", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(ents[0].name, "f");
	ck_assert_str_eq(ents[1].name, "s1");
	ck_assert_uint_eq(ents[1].ino, id1);
	free(ents);
	ck_assert_int_eq(zcow_stat(fs, "/s2/s1", &st), 0);
	ck_assert_uint_eq(st.ino, 2);
	ck_assert_uint_eq(st.mode, S_IFDIR | 0755);
	ck_assert_int_eq(zcow_readdir(fs, "/s2/s1", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 0);
	free(ents);
	ck_assert_int_eq(zcow_stat(fs, "/s2/s1/f", &st), -ENOENT);
	ck_assert_int_eq(zcow_create(fs, "/s2/s1/g", &f), -EROFS);
	ck_assert_int_eq(zcow_open(fs, "/s2/s1", O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_uint_eq(st.ino, 2);
	zcow_close(f);
	ck_assert_int_eq(zcow_rmdir(fs, "/s2/s1"), -EPERM);
	zcow_test_expect(fs, "/s1/f", "abc", 3);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_subvol_unlink_removes_the_entry_link_made)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_inode before, after;
	struct zcow_dirent *ents;
	struct zcow_stat st;
	struct zcow_key k;
	uint64_t index, nr;

	zcow_test_put(fs, "/f", "abc", 3);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, 256, &before), 0);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_subvol_link_locked(fs, "v", 1, 300, &index), 0);
	ck_assert_uint_eq(index, 3);
	ck_assert_int_eq(zcow_subvol_link_locked(fs, "v", 1, 301, NULL),
			 -EEXIST);
	ck_assert_int_eq(zcow_subvol_link_locked(fs, "f", 1, 301, NULL),
			 -EEXIST);
	ck_assert_int_eq(zcow_subvol_name_free_locked(fs, "v", 1), -EEXIST);
	ck_assert_int_eq(zcow_subvol_name_free_locked(fs, "w", 1), 0);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, 256, &after), 0);
	ck_assert_uint_eq(after.size, before.size + 2);
	/* not this subvolume's entry, not a subvolume entry, no entry */
	ck_assert_int_eq(zcow_subvol_unlink_locked(fs, "v", 1, 301), -EINVAL);
	ck_assert_int_eq(zcow_subvol_unlink_locked(fs, "f", 1, 257), -EINVAL);
	ck_assert_int_eq(zcow_subvol_unlink_locked(fs, "x", 1, 300), -ENOENT);
	ck_assert_int_eq(zcow_subvol_unlink_locked(fs, "v", 1, 300), 0);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, 256, &after), 0);
	ck_assert_uint_eq(after.size, before.size);
	k = (struct zcow_key){ 256, ZCOW_DIR_INDEX_KEY, 3 };
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, NULL),
			 -ENOENT);
	k = (struct zcow_key){ 256, ZCOW_DIR_ITEM_KEY,
			       zcow_name_hash("v", 1) };
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, NULL),
			 -ENOENT);
	ck_assert_int_eq(zcow_subvol_unlink_locked(fs, "v", 1, 300), -ENOENT);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_stat(fs, "/v", &st), -ENOENT);
	ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 1);
	ck_assert_str_eq(ents[0].name, "f");
	free(ents);
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* The checker: a ROOT_REF whose entry is gone, and an entry to a root
 * that has no ROOT_ITEM, are each reported (btrfs check reports both). */
START_TEST(test_files_check_reports_root_ref_without_entry_and_entry_without_root)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct problems pr;
	char want[256];
	uint64_t id, index;

	zcow_test_put(fs, "/f", "abc", 3);
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	zcow_test_assert_clean(fs);
	/* The entry goes (as a subvolume delete would take it), the
	 * ROOT_REF stays. */
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_subvol_unlink_locked(fs, "s", 1, id), 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_commit(fs), 0);
	problems_collect(fs, &pr);
	ck_assert_int_eq(pr.nr, 2);
	snprintf(want, sizeof(want),
		 "root %llu 's': no dir index 3 in dir 256 of root 5 for its root ref",
		 (unsigned long long)id);
	ck_assert_str_eq(pr.msg[0], want);
	snprintf(want, sizeof(want),
		 "root %llu 's': no dir item in dir 256 of root 5 for its root ref",
		 (unsigned long long)id);
	ck_assert_str_eq(pr.msg[1], want);
	/* An entry to root 999, which has no ROOT_ITEM. */
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_subvol_link_locked(fs, "s", 1, id, &index), 0);
	ck_assert_uint_eq(index, 3);
	ck_assert_int_eq(zcow_subvol_link_locked(fs, "ghost", 5, 999, &index),
			 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_commit(fs), 0);
	problems_collect(fs, &pr);
	ck_assert_int_eq(pr.nr, 1);
	ck_assert_str_eq(pr.msg[0], "root 5 dir 256: subvolume entry 'ghost' -> root 999 without root item");
	ck_assert_int_eq(zcow_stat(fs, "/ghost", &(struct zcow_stat){ 0 }),
			 -EUCLEAN);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* The extent item of the first data extent of the fs tree's inode @ino:
 * its bytes in @item, its size returned. */
static uint32_t data_extent_item(struct zcow_fs *fs, uint64_t ino,
				 uint8_t *item, uint32_t cap,
				 struct zcow_key *key_ret)
{
	struct zcow_key k = { ino, ZCOW_EXTENT_DATA_KEY, 0 };
	uint8_t fe[53];
	uint32_t size;

	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, fe, sizeof(fe),
					  &size), 0);
	key_ret->objectid = (uint64_t)fe[21] | (uint64_t)fe[22] << 8 |
			    (uint64_t)fe[23] << 16 | (uint64_t)fe[24] << 24 |
			    (uint64_t)fe[25] << 32 | (uint64_t)fe[26] << 40 |
			    (uint64_t)fe[27] << 48 | (uint64_t)fe[28] << 56;
	key_ret->type = ZCOW_EXTENT_ITEM_KEY;
	key_ret->offset = 0;
	{
		struct zcow_tree_iter it;
		const void *d;

		zcow_tree_iter_init(&it, &fs->extent_tree, key_ret);
		ck_assert_int_eq(zcow_tree_iter_next(&it, key_ret, &d, &size),
				 0);
		ck_assert_uint_le(size, cap);
		memcpy(item, d, size);
	}
	return size;
}

/* btrfs's hash_extent_data_ref(), written out here from its definition
 * (crc32c raw, seed ~0, of the little-endian root; of inode then offset;
 * (high << 31) ^ low) to check the order independently of core/. */
static uint32_t crc32c_raw(uint32_t crc, uint64_t v)
{
	int i, b;

	for (i = 0; i < 8; i++) {
		crc ^= (uint8_t)(v >> (8 * i));
		for (b = 0; b < 8; b++)
			crc = crc & 1 ? crc >> 1 ^ 0x82f63b78u : crc >> 1;
	}
	return crc;
}

static uint64_t zcow_test_data_ref_hash(uint64_t root, uint64_t ino,
					uint64_t offset)
{
	uint32_t hi = crc32c_raw(~0u, root);
	uint32_t lo = crc32c_raw(crc32c_raw(~0u, ino), offset);

	return ((uint64_t)hi << 31) ^ lo;
}

/* A snapshot's file extents are references of their own: the shared
 * extent item holds one EXTENT_DATA_REF per (root, inode, offset). */
START_TEST(test_files_snapshot_adds_its_own_data_reference)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t a[8192], item[256];
	struct zcow_key k;
	uint32_t size;
	uint64_t id;

	zcow_test_fill_lcg(a, sizeof(a), 9);
	zcow_test_put(fs, "/f", a, sizeof(a));	/* inode 257 */
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	size = data_extent_item(fs, 257, item, sizeof(item), &k);
	ck_assert_uint_eq(size, 24 + 2 * 29);
	ck_assert_uint_eq(le64_at(item), 2);			/* refs */
	/* two EXTENT_DATA_REFs (type 178), in btrfs's descending hash
	 * order: (5, 257, 0) and (id, 257, 0), count 1 each */
	{
		unsigned int fs_at = le64_at(item + 25) == 5 ? 24 : 53;
		unsigned int snap_at = fs_at == 24 ? 53 : 24;
		uint64_t h_fs = zcow_test_data_ref_hash(5, 257, 0);
		uint64_t h_snap = zcow_test_data_ref_hash(id, 257, 0);

		ck_assert_uint_eq(item[24], 178);
		ck_assert_uint_eq(item[53], 178);
		ck_assert_uint_eq(le64_at(item + fs_at + 1), 5);
		ck_assert_uint_eq(le64_at(item + fs_at + 9), 257);
		ck_assert_uint_eq(le64_at(item + fs_at + 17), 0);
		ck_assert_uint_eq(item[fs_at + 25], 1);
		ck_assert_uint_eq(le64_at(item + snap_at + 1), id);
		ck_assert_uint_eq(le64_at(item + snap_at + 9), 257);
		ck_assert_uint_eq(item[snap_at + 25], 1);
		ck_assert(fs_at == 24 ? h_fs >= h_snap : h_snap >= h_fs);
	}
	/* More snapshots: six references, each in its place. */
	{
		static const char *const names[] = { "s2", "s3", "s4", "s5" };
		uint64_t prev = UINT64_MAX;
		unsigned int i;

		for (i = 0; i < 4; i++)
			ck_assert_int_eq(zcow_snapshot(fs, names[i], NULL), 0);
		size = data_extent_item(fs, 257, item, sizeof(item), &k);
		ck_assert_uint_eq(size, 24 + 6 * 29);
		ck_assert_uint_eq(le64_at(item), 6);
		for (i = 0; i < 6; i++) {
			const uint8_t *r = item + 24 + 29 * i;
			uint64_t h = zcow_test_data_ref_hash(le64_at(r + 1),
							     le64_at(r + 9),
							     le64_at(r + 17));

			ck_assert_uint_le(h, prev);
			prev = h;
		}
	}
	/* The fs tree's file goes: the snapshots' references stay. */
	ck_assert_int_eq(zcow_unlink(fs, "/f"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	{
		uint8_t got[24 + 6 * 29];

		ck_assert_int_eq(zcow_tree_search(&fs->extent_tree, &k, got,
						  sizeof(got), &size), 0);
		ck_assert_uint_eq(size, 24 + 5 * 29);
		ck_assert_uint_eq(le64_at(got), 5);
	}
	zcow_test_assert_clean(fs);
	zcow_test_expect(fs, "/s/f", a, sizeof(a));
	/* A damaged reference (another inode) is found by the checker. */
	{
		uint8_t bad[24 + 6 * 29];

		ck_assert_int_eq(zcow_tree_search(&fs->extent_tree, &k, bad,
						  sizeof(bad), &size), 0);
		bad[33] ^= 1;
		ck_assert_int_eq(zcow_tree_update(&fs->extent_tree, &k, bad,
						  size), 0);
		ck_assert_int_eq(zcow_commit(fs), 0);
		ck_assert_int_gt(zcow_check(fs, NULL, NULL), 0);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_emulated_zones_file_backend)
{
	char path[] = "/tmp/zcow-files-XXXXXX", spec[128];
	struct zcow_fs *fs;
	struct zdev *dev;
	uint8_t buf[100000];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 16 * (off_t)ZS), 0);
	close(fd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=4M", path);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	fs = mkfs_mount(dev, NULL);
	zcow_test_fill_lcg(buf, sizeof(buf), 9);
	zcow_test_put(fs, "/x", buf, sizeof(buf));
	zcow_test_put(fs, "/x", buf, 5000);
	fs = remount(fs, NULL);
	zcow_test_expect(fs, "/x", buf, 5000);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	unlink(path);
}
END_TEST

/* Run "$ZCOW_BIN ARGS" through the shell; returns the exit status and the
 * first line of stdout in @out. */
static int run_cli(char *out, size_t out_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int run_cli(char *out, size_t out_len, const char *fmt, ...)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[1024], args[768];
	va_list ap;
	FILE *p;
	int st;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set");
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s 2>/dev/null", bin, args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	out[0] = '\0';
	if (!fgets(out, (int)out_len, p))
		out[0] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_files_cli_put_get_ls_cat_rm_mkdir_stat)
{
	char img[] = "/tmp/zcow-cli-files-XXXXXX", local[] =
		"/tmp/zcow-cli-local-XXXXXX", spec[128], out[512];
	char back[64];
	int fd = mkstemp(img), lfd = mkstemp(local);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(ftruncate(fd, 16 * (off_t)ZS), 0);
	close(fd);
	ck_assert_int_eq(write(lfd, "zoned data\n", 11), 11);
	close(lfd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=4M", img);
	snprintf(back, sizeof(back), "%s.back", local);
	ck_assert_int_eq(run_cli(out, sizeof(out), "mkfs %s", spec), 0);
	ck_assert_int_eq(run_cli(out, sizeof(out), "mkdir %s /d", spec), 0);
	ck_assert_int_eq(run_cli(out, sizeof(out), "put %s %s /d/f", spec,
				 local), 0);
	ck_assert_int_eq(run_cli(out, sizeof(out), "cat %s /d/f", spec), 0);
	ck_assert_str_eq(out, "zoned data\n");
	ck_assert_int_eq(run_cli(out, sizeof(out), "ls %s /d", spec), 0);
	ck_assert_ptr_nonnull(strstr(out, " f\n"));
	ck_assert_int_eq(run_cli(out, sizeof(out), "stat %s /d/f", spec), 0);
	ck_assert_int_eq(run_cli(out, sizeof(out), "get %s /d/f %s", spec,
				 back), 0);
	f = fopen(back, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(out, sizeof(out), f));
	fclose(f);
	ck_assert_str_eq(out, "zoned data\n");
	ck_assert_int_eq(run_cli(out, sizeof(out), "check %s", spec), 0);
	ck_assert_int_eq(run_cli(out, sizeof(out), "cat %s /nope", spec), 1);
	ck_assert_int_eq(run_cli(out, sizeof(out), "rm %s /d", spec), 1);
	ck_assert_int_eq(run_cli(out, sizeof(out), "rm %s /d/f /d", spec), 0);
	ck_assert_int_eq(run_cli(out, sizeof(out), "ls %s /", spec), 0);
	ck_assert_str_eq(out, "");
	unlink(img);
	unlink(local);
	unlink(back);
}
END_TEST

static int count_problems(struct zcow_fs *fs)
{
	return zcow_check(fs, NULL, NULL);
}

START_TEST(test_files_check_finds_namespace_and_extent_damage)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_key k;
	uint8_t ino[160];
	uint32_t size;

	zcow_test_put(fs, "/a", "aaaa", 4);
	zcow_test_put(fs, "/b", "bbbb", 4);
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_test_assert_clean(fs);
	/* A link count that disagrees with the references. */
	k = (struct zcow_key){ 257, ZCOW_INODE_ITEM_KEY, 0 };
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, ino, sizeof(ino),
					  &size), 0);
	ino[40] = 2;
	ck_assert_int_eq(zcow_tree_update(&fs->fs_tree, &k, ino, size), 0);
	/* A directory entry without its index. */
	k = (struct zcow_key){ 256, ZCOW_DIR_INDEX_KEY, 3 };
	ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree, &k), 0);
	/* A data extent that loses its checksums. */
	k = (struct zcow_key){ (uint64_t)-10, ZCOW_EXTENT_CSUM_KEY, 0 };
	{
		struct zcow_tree_iter it;
		struct zcow_key found;

		zcow_tree_iter_init(&it, &fs->csum_tree, &k);
		ck_assert_int_eq(zcow_tree_iter_next(&it, &found, NULL, NULL),
				 0);
		ck_assert_int_eq(zcow_tree_delete(&fs->csum_tree, &found), 0);
	}
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_ge(count_problems(fs), 3);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* ---- metadata space reservation (docs/space.md) ----------------------- */

/* A small device whose metadata fills in seconds: 16 zones of 4 MiB,
 * 1 MiB writable each (sim:zones=16,zone_size=4M,zone_cap=1M). */
static struct zdev *new_small_sim(void)
{
	struct zsim_config cfg = {
		.nr_zones = 16,
		.zone_size = ZS,
		.zone_capacity = MiB,
		.seed = 7,
	};

	return zcow_test_sim(&cfg);
}

#define RSV_FILE_LEN(i)	(100 + (i) * 37 % 3000)

static void rsv_name(char *p, size_t n, const char *pfx, int t, int i)
{
	snprintf(p, n, "/%s%d-%d", pfx, t, i);
}

/* Snapshots ("s<k>", directories) among @nr entries of "/". */
static uint64_t nr_snaps_in(const struct zcow_dirent *ents, uint64_t nr)
{
	uint64_t i, n = 0;

	for (i = 0; i < nr; i++)
		n += ents[i].name[0] == 's' && ents[i].type == ZCOW_FT_DIR;
	return n;
}

/* Does @path exist?  Asserts the answer is yes or ENOENT. */
static bool exists(struct zcow_fs *fs, const char *path)
{
	struct zcow_stat st;
	int err = zcow_stat(fs, path, &st);

	ck_assert_msg(!err || err == -ENOENT, "stat %s: %d", path, err);
	return !err;
}

static uint64_t size_of(struct zcow_fs *fs, const char *path)
{
	struct zcow_stat st;

	ck_assert_int_eq(zcow_stat(fs, path, &st), 0);
	return st.size;
}

/*
 * Create @path with RSV_FILE_LEN(@seed) bytes and fsync it.  Returns 0,
 * or -ENOSPC after asserting that the failing step changed nothing (the
 * path does not exist, or the file is still empty).
 */
static int rsv_put(struct zcow_fs *fs, const char *path, uint32_t seed)
{
	uint64_t len = RSV_FILE_LEN(seed);
	uint8_t buf[4096];
	struct zcow_file *f;
	int64_t n;
	int err;

	zcow_test_fill_lcg(buf, len, seed);
	err = zcow_open(fs, path, O_CREAT | O_EXCL | O_RDWR, &f);
	if (err == -ENOSPC) {
		ck_assert_msg(!exists(fs, path), "%s: created by a failed create",
			      path);
		return err;
	}
	ck_assert_int_eq(err, 0);
	n = zcow_pwrite(f, buf, len, 0);
	if (n == -ENOSPC) {
		ck_assert_uint_eq(size_of(fs, path), 0);
		zcow_close(f);
		ck_assert_int_eq(zcow_unlink(fs, path), 0);
		return -ENOSPC;
	}
	ck_assert_int_eq(n, (int64_t)len);
	err = zcow_fsync(f);
	zcow_close(f);
	ck_assert_int_eq(err, 0);
	return 0;
}

static void rsv_expect(struct zcow_fs *fs, const char *path, uint32_t seed)
{
	uint8_t buf[4096];

	zcow_test_fill_lcg(buf, RSV_FILE_LEN(seed), seed);
	zcow_test_expect(fs, path, buf, RSV_FILE_LEN(seed));
}

static void assert_statfs_sane(struct zcow_fs *fs)
{
	struct zcow_statfs st;

	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	ck_assert_uint_le(st.free, st.total);
	ck_assert_uint_le(st.data_used + st.meta_used + st.zone_unusable,
			  st.total);
}

/* The name of file @i after @r renames of the test below: "/g0-<i>"
 * (rsv_name()), then 20 characters longer with each rename. */
static void long_name(char *p, size_t n, int r, int i)
{
	static const char pad[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

	if (!r)
		rsv_name(p, n, "g", 0, i);
	else
		snprintf(p, n, "/h%.*s-%d", 20 * r, pad, i);
}

START_TEST(test_files_metadata_full_fails_at_start_and_fs_stays_usable)
{
	struct zcow_mount_opts mo = { .no_treelog = true };
	struct zdev *dev = new_small_sim();
	struct zcow_fs *fs = mkfs_mount(dev, &mo);
	char p[256], q[256];
	int i, r, err = 0, nr, *cur;

	/* Files, renamed and with a directory each, until metadata runs
	 * out: every step either completes or fails at its start. */
	for (i = 0; i < 100000; i++) {
		rsv_name(p, sizeof(p), "f", 0, i);
		rsv_name(q, sizeof(q), "g", 0, i);
		err = rsv_put(fs, p, (uint32_t)i);
		if (err)
			break;
		err = zcow_rename(fs, p, q);
		if (err) {
			ck_assert_int_eq(err, -ENOSPC);
			ck_assert(exists(fs, p) && !exists(fs, q));
			ck_assert_int_eq(zcow_rename(fs, p, q) == 0 ||
						 !exists(fs, q),
					 1);
			break;
		}
		rsv_name(p, sizeof(p), "d", 0, i);
		err = zcow_mkdir(fs, p);
		if (err) {
			ck_assert_int_eq(err, -ENOSPC);
			ck_assert(!exists(fs, p));
			break;
		}
	}
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_eq(fs->error, 0);
	nr = i;
	ck_assert_int_gt(nr, 10);
	cur = calloc((size_t)nr, sizeof(*cur));
	ck_assert_ptr_nonnull(cur);
	/* Then renames of the files made to ever longer names (each grows
	 * the directory's items) until those fail too: a rename refused
	 * is refused whole. */
	for (r = 1; r <= 10 && !err; r++) {
		for (i = 0; i < nr; i++) {
			long_name(p, sizeof(p), r - 1, i);
			long_name(q, sizeof(q), r, i);
			err = zcow_rename(fs, p, q);
			ck_assert_msg(!err || err == -ENOSPC, "rename: %d", err);
			ck_assert_int_eq(fs->error, 0);
			if (err) {
				ck_assert(exists(fs, p) && !exists(fs, q));
				break;
			}
			cur[i] = r;
		}
	}
	ck_assert_int_eq(err, -ENOSPC);
	/* Still usable: every earlier file reads back, an unlink and a
	 * sync succeed. */
	for (i = 0; i < nr; i++) {
		long_name(q, sizeof(q), cur[i], i);
		rsv_expect(fs, q, (uint32_t)i);
	}
	long_name(q, sizeof(q), cur[0], 0);
	ck_assert_int_eq(zcow_unlink(fs, q), 0);
	ck_assert(!exists(fs, q));
	ck_assert_int_eq(zcow_sync(fs), 0);
	assert_statfs_sane(fs);
	ck_assert_int_eq(fs->error, 0);
	fs = remount(fs, &mo);
	for (i = 1; i < nr; i++) {
		long_name(q, sizeof(q), cur[i], i);
		rsv_expect(fs, q, (uint32_t)i);
	}
	free(cur);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

enum rsv_op { OP_RENAME, OP_MKDIR, OP_TRUNCATE, OP_SNAPSHOT, OP_UNLINK,
	      NR_OPS };
static const char *const op_names[NR_OPS] = { "rename", "mkdir", "truncate",
					      "snapshot", "unlink" };

/* What the operations did to the files of one run. */
struct rsv_state {
	uint8_t gone[20000];	/* unlinked */
	uint8_t trunc[20000];	/* truncated to 50 bytes */
	uint8_t moved[20000];	/* named r.. instead of f.. */
	int nr_snaps;
	int k;			/* names made so far (mkdir, snapshot) */
};

static void subject(const struct rsv_state *st, int i, char *p, size_t n)
{
	rsv_name(p, n, st->moved[i] ? "r" : "f", 0, i);
}

/* File @i reads as its operations left it. */
static void rsv_expect_state(struct zcow_fs *fs, const struct rsv_state *st,
			     int i)
{
	uint8_t buf[4096];
	char p[64];

	subject(st, i, p, sizeof(p));
	if (st->gone[i]) {
		ck_assert(!exists(fs, p));
		return;
	}
	zcow_test_fill_lcg(buf, RSV_FILE_LEN(i), (uint32_t)i);
	zcow_test_expect(fs, p, buf, st->trunc[i] ? 50 : RSV_FILE_LEN(i));
}

/* Run @op on file @i; assert it was all or nothing. */
static int run_op(struct zcow_fs *fs, enum rsv_op op, int i,
		  struct rsv_state *st)
{
	struct zcow_dirent *ents;
	struct zcow_file *f;
	uint64_t nr_ents;
	char p[64], q[64];
	int err;

	subject(st, i, p, sizeof(p));
	switch (op) {
	case OP_RENAME:
		rsv_name(q, sizeof(q), st->moved[i] ? "f" : "r", 0, i);
		err = zcow_rename(fs, p, q);
		ck_assert_int_eq(exists(fs, p), err != 0);
		ck_assert_int_eq(exists(fs, q), err == 0);
		st->moved[i] ^= !err;
		break;
	case OP_MKDIR:
		rsv_name(q, sizeof(q), "d", 0, st->k++);
		err = zcow_mkdir(fs, q);
		ck_assert_int_eq(exists(fs, q), err == 0);
		break;
	case OP_TRUNCATE:
		ck_assert_int_eq(zcow_open(fs, p, O_RDWR, &f), 0);
		err = zcow_truncate(f, 50);
		zcow_close(f);
		st->trunc[i] |= !err;
		break;
	case OP_SNAPSHOT:
		snprintf(q, sizeof(q), "s%d", st->k++);
		err = zcow_snapshot(fs, q, NULL);
		st->nr_snaps += !err;
		ck_assert_int_eq(exists(fs, q), err == 0);
		ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr_ents), 0);
		ck_assert_uint_eq(nr_snaps_in(ents, nr_ents),
				  (uint64_t)st->nr_snaps);
		free(ents);
		break;
	default:
		err = zcow_unlink(fs, p);
		st->gone[i] = !err;
		break;
	}
	ck_assert_msg(!err || err == -ENOSPC, "%s: %d", op_names[op], err);
	ck_assert_int_eq(fs->error, 0);
	rsv_expect_state(fs, st, i);
	return err;
}

/*
 * Each operation, after every file made while files fit and then on the
 * full fs until it is refused: it either completes or fails with -ENOSPC
 * at its start, having changed nothing; both outcomes are seen, the fs
 * stays out of its error state and checks clean.
 */
START_TEST(test_files_each_op_on_full_fs_is_all_or_nothing)
{
	struct zcow_mount_opts mo = { .no_treelog = true };
	struct rsv_state *st = malloc(sizeof(*st));
	int op;

	for (op = 0; op < NR_OPS; op++) {
		struct zdev *dev = new_small_sim();
		struct zcow_fs *fs = mkfs_mount(dev, &mo);
		int i, nr, done = 0, full = 0;

		memset(st, 0, sizeof(*st));
		for (i = 0; i < 20000; i++) {
			char p[64];

			rsv_name(p, sizeof(p), "f", 0, i);
			if (rsv_put(fs, p, (uint32_t)i))
				break;
			if ((op == OP_SNAPSHOT && i % 16) ||
			    (op == OP_UNLINK && i % 2))
				continue;
			if (run_op(fs, (enum rsv_op)op, i, st))
				full++;
			else
				done++;
		}
		/* The fs is full: the operation on earlier files until it
		 * is refused. */
		nr = i;
		for (i = nr - 1; i >= 0 && i >= nr - 200; i--) {
			if (st->gone[i])
				continue;
			if (run_op(fs, (enum rsv_op)op, i, st)) {
				full++;
				break;
			}
			done++;
		}
		zlog(ZLOG_INFO, "test", "%s: %d done, %d ENOSPC",
		     op_names[op], done, full);
		ck_assert_int_gt(done, 0);
		/* (Unlinks free space: on the full fs they go on; the
		 * global reserve and the flush let them.) */
		if (op == OP_UNLINK)
			ck_assert_int_ge(done, 200);
		else
			ck_assert_int_gt(full, 0);
		ck_assert_int_eq(zcow_sync(fs), 0);
		fs = remount(fs, &mo);
		for (i = 0; i < nr; i++)
			rsv_expect_state(fs, st, i);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
	}
	free(st);
}
END_TEST

#define RSV_THREADS	32

enum { RSV_NONE, RSV_DATA, RSV_EMPTY };

struct rsv_job {
	struct zcow_fs *fs;
	int t;
	int nr;			/* files made */
	uint8_t *live;		/* RSV_*: file i (under its final name) */
	bool *moved;		/* file i renamed g.. */
	int bad;		/* an errno other than 0 / -ENOSPC */
};

static void rsv_rename_some(struct rsv_job *j, int i)
{
	char p[64], q[64];
	int k = i % (j->nr ? j->nr : 1), err;
	struct zcow_file *f;

	if (j->live[k] != RSV_DATA)
		return;
	rsv_name(p, sizeof(p), j->moved[k] ? "g" : "f", j->t, k);
	rsv_name(q, sizeof(q), j->moved[k] ? "f" : "g", j->t, k);
	err = zcow_rename(j->fs, p, q);
	if (!err)
		j->moved[k] = !j->moved[k];
	else if (err != -ENOSPC)
		j->bad = err;
	/* and an overwrite with the same bytes (new extent, new items) */
	rsv_name(p, sizeof(p), j->moved[k] ? "g" : "f", j->t, k);
	err = zcow_open(j->fs, p, O_RDWR, &f);
	if (!err) {
		uint8_t buf[4096];
		int64_t n;

		zcow_test_fill_lcg(buf, RSV_FILE_LEN(k),
				   (uint32_t)(j->t * 10000 + k));
		n = zcow_pwrite(f, buf, RSV_FILE_LEN(k), 0);
		err = n < 0 ? (int)n : 0;
		if (!err)
			err = zcow_fsync(f);
		zcow_close(f);
	}
	if (err && err != -ENOSPC)
		j->bad = err;
}

static void *rsv_worker(void *arg)
{
	struct rsv_job *j = arg;
	char p[64], q[64];
	int i, nr_full = 0;

	for (i = 0; i < 4000 && nr_full < 1000 && !j->bad; i++) {
		struct zcow_file *f;
		uint8_t buf[4096];
		uint64_t len = RSV_FILE_LEN(i);
		int err;
		int64_t n;

		rsv_name(p, sizeof(p), "f", j->t, i);
		rsv_name(q, sizeof(q), "g", j->t, i);
		zcow_test_fill_lcg(buf, len, (uint32_t)(j->t * 10000 + i));
		err = zcow_open(j->fs, p, O_CREAT | O_EXCL | O_RDWR, &f);
		if (err) {
			nr_full += err == -ENOSPC;
			j->bad = err == -ENOSPC ? 0 : err;
			/* Renames back and forth of an earlier file. */
			rsv_rename_some(j, i);
			continue;
		}
		j->nr = i + 1;
		n = zcow_pwrite(f, buf, len, 0);
		err = n < 0 ? (int)n : 0;
		if (!err)
			err = zcow_fsync(f);
		zcow_close(f);
		if (err) {
			/* The write failed at its start: an empty file. */
			nr_full += err == -ENOSPC;
			if (err != -ENOSPC)
				j->bad = err;
			j->live[i] = RSV_EMPTY;
			err = zcow_unlink(j->fs, p);
			if (!err)
				j->live[i] = RSV_NONE;
			else if (err != -ENOSPC)
				j->bad = err;
			continue;
		}
		j->live[i] = RSV_DATA;
		if (i % 3 == 0) {
			err = zcow_rename(j->fs, p, q);
			if (!err)
				j->moved[i] = true;
			else if (err != -ENOSPC)
				j->bad = err;
		}
		if (i % 4 == 0 && i >= 8 && j->live[i - 8] == RSV_DATA) {
			rsv_name(p, sizeof(p), j->moved[i - 8] ? "g" : "f",
				 j->t, i - 8);
			err = zcow_unlink(j->fs, p);
			if (!err)
				j->live[i - 8] = RSV_NONE;
			else if (err != -ENOSPC)
				j->bad = err;
		}
		if (i % 7 == 0) {
			rsv_name(p, sizeof(p), "d", j->t, i);
			err = zcow_mkdir(j->fs, p);
			if (err && err != -ENOSPC)
				j->bad = err;
		}
	}
	return NULL;
}

static void run_threads_until_full(bool no_treelog)
{
	struct zcow_mount_opts mo = { .no_treelog = no_treelog };
	struct zdev *dev = new_small_sim();
	struct zcow_fs *fs = mkfs_mount(dev, &mo);
	struct rsv_job jobs[RSV_THREADS];
	pthread_t th[RSV_THREADS];
	int t, i, pass;

	for (t = 0; t < RSV_THREADS; t++) {
		jobs[t] = (struct rsv_job){ .fs = fs, .t = t };
		jobs[t].live = calloc(4000, 1);
		jobs[t].moved = calloc(4000, sizeof(bool));
		ck_assert_int_eq(pthread_create(&th[t], NULL, rsv_worker,
						&jobs[t]),
				 0);
	}
	for (t = 0; t < RSV_THREADS; t++)
		ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	ck_assert_int_eq(fs->error, 0);
	ck_assert_uint_eq(fs->rsv_held_nodes, 0);	/* all given back */
	for (t = 0; t < RSV_THREADS; t++)
		ck_assert_msg(!jobs[t].bad, "thread %d: errno %d", t,
			      jobs[t].bad);
	ck_assert_int_eq(zcow_sync(fs), 0);
	assert_statfs_sane(fs);
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			fs = remount(fs, &mo);
		for (t = 0; t < RSV_THREADS; t++)
			for (i = 0; i < jobs[t].nr; i++) {
				char p[64];
				uint8_t buf[4096];

				if (jobs[t].live[i] == RSV_NONE)
					continue;
				rsv_name(p, sizeof(p),
					 jobs[t].moved[i] ? "g" : "f", t, i);
				zcow_test_fill_lcg(buf, RSV_FILE_LEN(i),
				     (uint32_t)(t * 10000 + i));
				zcow_test_expect(fs, p, buf,
				       jobs[t].live[i] == RSV_DATA ?
					       RSV_FILE_LEN(i) :
					       0);
			}
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	for (t = 0; t < RSV_THREADS; t++) {
		free(jobs[t].live);
		free(jobs[t].moved);
	}
	zdev_close(dev);
}

/* Three runs each: the thread interleavings differ from run to run. */
START_TEST(test_files_threads_fill_metadata_no_eio_treelog_off)
{
	int run;

	for (run = 0; run < 3; run++)
		run_threads_until_full(true);
}
END_TEST

START_TEST(test_files_threads_fill_metadata_no_eio_treelog_on)
{
	int run;

	for (run = 0; run < 3; run++)
		run_threads_until_full(false);
}
END_TEST

/*
 * File extents zcow does not write (a btrfs image may hold them):
 * preallocated, compressed (zlib has no incompat bit, so a read-only mount
 * of such a btrfs is allowed; inline or not) or encrypted.  A read returns
 * an error, never the stored bytes as if they were the file's.  A plain
 * inline extent reads; one whose ram_bytes is not its length is corrupt.
 */
START_TEST(test_files_read_refuses_extents_zcow_cannot_decode)
{
	struct zdev *dev = new_sim(16, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_file *f = NULL;
	struct zcow_stat st;
	struct zcow_key k;
	uint8_t item[128], got[64];
	uint32_t size;
	int i;

	zcow_test_put(fs, "/reg", "0123456789abcdef", 16);
	ck_assert_int_eq(zcow_stat(fs, "/reg", &st), 0);
	k = (struct zcow_key){ st.ino, ZCOW_EXTENT_DATA_KEY, 0 };
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item, sizeof(item),
					  &size), 0);
	ck_assert_uint_eq(size, ZCOW_FILE_EXTENT_SIZE);
	for (i = 0; i < 4; i++) {
		uint8_t bad[128];
		uint32_t len = ZCOW_FILE_EXTENT_SIZE;

		memcpy(bad, item, sizeof(bad));
		if (i == 0)
			bad[16] = 1;		/* compression zlib */
		else if (i == 1)
			bad[17] = 1;		/* encryption */
		else if (i == 2)
			bad[20] = 2;		/* preallocated */
		else {
			bad[20] = 0;		/* inline, compressed */
			bad[16] = 1;
			memset(bad + 21, 'x', 16);
			len = 21 + 16;
		}
		ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree, &k), 0);
		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, bad, len),
				 0);
		ck_assert_int_eq(zcow_open(fs, "/reg", O_RDONLY, &f), 0);
		ck_assert_msg(zcow_pread(f, got, sizeof(got), 0) ==
				      -EOPNOTSUPP,
			      "variant %d read", i);
		ck_assert_int_eq(zcow_close(f), 0);
	}
	/* a plain inline extent reads (the kernel writes them); one whose
	 * ram_bytes is not its length is corrupt */
	for (i = 0; i < 2; i++) {
		uint8_t in[21 + 16];

		memset(in, 0, sizeof(in));
		in[8] = i ? 17 : 16;		/* ram_bytes */
		memset(in + 21, 'x', 16);
		ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree, &k), 0);
		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, in,
						  sizeof(in)), 0);
		ck_assert_int_eq(zcow_open(fs, "/reg", O_RDONLY, &f), 0);
		memset(got, 0, sizeof(got));
		ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0),
				 i ? -EUCLEAN : 16);
		if (!i)
			ck_assert_int_eq(memcmp(got, "xxxxxxxxxxxxxxxx", 16),
					 0);
		ck_assert_int_eq(zcow_close(f), 0);
	}
	/* a regular extent item of the wrong size is corrupt */
	ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree, &k), 0);
	ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, item,
					  ZCOW_FILE_EXTENT_SIZE + 8), 0);
	ck_assert_int_eq(zcow_open(fs, "/reg", O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0), -EUCLEAN);
	ck_assert_int_eq(zcow_close(f), 0);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

static void keep_last(void *arg, const char *msg)
{
	snprintf(arg, 256, "%s", msg);
}

/* A file's nbytes must be what its extents hold (btrfs check's "nbytes
 * wrong"): 3 blocks written, one punched by a truncate, and a wrong
 * count found. */
START_TEST(test_files_check_reports_wrong_nbytes)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_inode in;
	struct zcow_stat st;
	struct zcow_file *f;
	uint8_t buf[3 * 4096];
	char last[256] = "";

	memset(buf, 7, sizeof(buf));
	zcow_test_put(fs, "/f", buf, sizeof(buf));
	ck_assert_int_eq(zcow_open(fs, "/f", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_truncate(f, 5000), 0);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_stat(fs, "/f", &st), 0);
	ck_assert_uint_eq(st.nbytes, 2 * 4096);
	zcow_test_assert_clean(fs);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, st.ino, &in), 0);
	in.nbytes = 3 * 4096;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_check(fs, keep_last, last), 1);
	ck_assert_str_eq(last, "root 5 inode 257: nbytes 12288, extents hold 8192");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* ---- inodes unlinked while open (orphan items) ------------------------ */

static uint64_t data_used(struct zcow_fs *fs)
{
	struct zcow_statfs st;

	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	return st.data_used;
}

static uint64_t nr_orphans(struct zcow_fs *fs)
{
	uint64_t nr = UINT64_MAX;

	ck_assert_int_eq(zcow_nr_orphans(fs, &nr), 0);
	return nr;
}

START_TEST(test_files_unlink_while_open_keeps_data_until_release)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint64_t len = MiB + 5;
	uint8_t *buf = malloc(len), *got = malloc(len);
	struct zcow_file *f, *g;
	struct zcow_stat st;

	zcow_test_fill_lcg(buf, len, 3);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, 0), (int64_t)len);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_uint_ge(data_used(fs), len);
	/* the last name goes: the inode stays, nlink 0, an orphan */
	ck_assert_int_eq(zcow_unlink_open(fs, "/a"), 1);
	ck_assert_int_eq(zcow_stat(fs, "/a", &st), -ENOENT);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_uint_eq(st.nlink, 0);
	/* the handle reads and writes it; a new file may take the name */
	ck_assert_int_eq(zcow_pread(f, got, len, 0), (int64_t)len);
	ck_assert(!memcmp(got, buf, len));
	zcow_test_fill_lcg(buf, 4096, 4);
	ck_assert_int_eq(zcow_pwrite(f, buf, 4096, 0), 4096);
	ck_assert_int_eq(zcow_pread(f, got, len, 0), (int64_t)len);
	ck_assert(!memcmp(got, buf, len));
	ck_assert_int_eq(zcow_create(fs, "/a", &g), 0);
	zcow_close(g);
	/* an fsync of the orphan commits (the log carries no orphan) */
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_test_assert_clean(fs);
	ck_assert_uint_eq(nr_orphans(fs), 1);
	ck_assert_uint_ge(data_used(fs), len);
	/* the last close deletes it: its data is freed */
	ck_assert_int_eq(zcow_orphan_release(f), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_uint_eq(data_used(fs), 0);
	ck_assert_uint_eq(nr_orphans(fs), 0);
	zcow_test_assert_clean(fs);
	fs = remount(fs, NULL);
	ck_assert_int_eq(zcow_stat(fs, "/a", &st), 0);
	ck_assert_uint_eq(st.size, 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
	free(got);
}
END_TEST

START_TEST(test_files_unlink_open_of_a_linked_or_unopened_name_is_unlink)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_file *f;
	struct zcow_stat st;

	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "x", 1, 0), 1);
	ck_assert_int_eq(zcow_link(fs, "/a", "/b"), 0);
	/* another name is left: a plain unlink */
	ck_assert_int_eq(zcow_unlink_open(fs, "/a"), 0);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_uint_eq(st.nlink, 1);
	ck_assert_int_eq(zcow_orphan_release(f), 0);	/* not an orphan */
	zcow_close(f);
	ck_assert_int_eq(zcow_stat(fs, "/b", &st), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_unlink_open(fs, "/d"), -EISDIR);
	ck_assert_int_eq(zcow_unlink_open(fs, "/nope"), -ENOENT);
	ck_assert_uint_eq(nr_orphans(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* A crash with the file open (its orphan committed): the next mount
 * deletes it. */
static void crash_with_orphan_open(bool treelog)
{
	struct zcow_mount_opts mo = { .no_treelog = !treelog };
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, &mo);
	struct zsim *sim = zsim_from_dev(dev);
	uint64_t len = 2 * MiB, syncs;
	uint8_t *buf = malloc(len);
	struct zcow_file *f, *g;
	struct zcow_statfs sf;
	struct zcow_stat st;

	zcow_test_fill_lcg(buf, len, 5);
	ck_assert_int_eq(zcow_create(fs, "/keep", &g), 0);
	ck_assert_int_eq(zcow_pwrite(g, buf, 4096, 0), 4096);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, 0), (int64_t)len);
	ck_assert_int_eq(zcow_unlink_open(fs, "/a"), 1);
	ck_assert_int_eq(zcow_pwrite(f, buf, 4096, len), 4096);
	/* durable: with treelog=off a commit; with the tree-log, the
	 * fsync of another file commits (the log carries no orphan) */
	if (!treelog)
		ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_pwrite(g, buf, 4096, 4096), 4096);
	ck_assert_int_eq(zcow_fsync(g), 0);
	ck_assert_int_eq(zcow_check(fs, zcow_test_print_problem, NULL), 0);
	ck_assert_uint_eq(nr_orphans(fs), 1);
	/* the orphan written and fsynced in a later transaction: through
	 * the log (its committed orphan item is the one that counts) */
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	syncs = sf.nr_log_syncs;
	ck_assert_int_eq(zcow_pwrite(f, buf, 8192, 4096), 8192);
	ck_assert_int_eq(zcow_fsync(f), 0);
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	ck_assert_uint_eq(sf.nr_log_syncs, syncs + (treelog ? 1 : 0));
	ck_assert_int_eq(zcow_check(fs, zcow_test_print_problem, NULL), 0);
	/* power fails with the file open */
	ck_assert_int_eq(zsim_cut_now(sim, ZSIM_LOSS_DROP, 5), 0);
	zcow_unmount(fs);	/* fails on the dead device */
	zcow_close(f);		/* frees the handles only */
	zcow_close(g);
	ck_assert_int_eq(zsim_power_cycle(sim), 0);
	fs = NULL;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	ck_assert_uint_eq(sf.log_replayed > 0, treelog);
	ck_assert_uint_eq(nr_orphans(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_stat(fs, "/a", &st), -ENOENT);
	ck_assert_int_eq(zcow_stat(fs, "/keep", &st), 0);
	ck_assert_uint_eq(st.size, 8192);
	ck_assert_uint_le(data_used(fs), 8192);
	fs = remount(fs, &mo);
	ck_assert_uint_le(data_used(fs), 8192);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}

START_TEST(test_files_orphan_left_by_crash_is_deleted_at_mount)
{
	crash_with_orphan_open(false);
}
END_TEST

START_TEST(test_files_orphan_left_by_crash_is_deleted_at_mount_treelog)
{
	crash_with_orphan_open(true);
}
END_TEST

/* A file that filled the fs, unlinked while open: its release deletes it
 * all the same (the extents dropped a step at a time, each reserved on
 * its own), and so does a mount when it was left open. */
static void full_fs_orphan(bool at_mount)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint64_t off = 0;
	static uint8_t buf[64 * 1024];
	struct zcow_file *f;
	int64_t n;

	zcow_test_fill_lcg(buf, sizeof(buf), 9);
	ck_assert_int_eq(zcow_create(fs, "/big", &f), 0);
	while ((n = zcow_pwrite(f, buf, sizeof(buf), off)) > 0)
		off += (uint64_t)n;
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_uint_gt(off, 40 * MiB);
	ck_assert_int_eq(zcow_unlink_open(fs, "/big"), 1);
	if (at_mount) {
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zcow_close(f);
		fs = NULL;
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	} else {
		ck_assert_int_eq(zcow_orphan_release(f), 0);
		zcow_close(f);
		ck_assert_int_eq(zcow_commit(fs), 0);
	}
	ck_assert_uint_eq(data_used(fs), 0);
	ck_assert_uint_eq(nr_orphans(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}

START_TEST(test_files_orphan_that_filled_the_fs_is_deleted_at_release)
{
	full_fs_orphan(false);
}
END_TEST

START_TEST(test_files_orphan_that_filled_the_fs_is_deleted_at_mount)
{
	full_fs_orphan(true);
}
END_TEST

START_TEST(test_files_check_reports_orphan_item_without_inode)
{
	struct zdev *dev = new_sim(24, 0);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zcow_key k = { ZCOW_ORPHAN_OBJECTID, ZCOW_ORPHAN_ITEM_KEY,
			      4242 };
	struct problems pr;

	ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, NULL, 0), 0);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_uint_eq(nr_orphans(fs), 1);
	problems_collect(fs, &pr);
	ck_assert_int_eq(pr.nr, 1);
	ck_assert_msg(strstr(pr.msg[0], "orphan item of inode 4242: no inode"),
		      "%s", pr.msg[0]);
	/* the next mount drops the item */
	fs = remount(fs, NULL);
	ck_assert_uint_eq(nr_orphans(fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

Suite *inode_suite(void)
{
	Suite *s = suite_create("inode_suite");
	TCase *tc = tcase_create("files"), *rsv;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_files_read_refuses_extents_zcow_cannot_decode);
	tcase_add_test(tc, test_files_write_fsync_remount_reads_back);
	tcase_add_test(tc, test_files_unaligned_overwrite_is_cow);
	tcase_add_test(tc, test_files_dirs_rename_readdir);
	tcase_add_test(tc, test_files_every_errno);
	tcase_add_test(tc, test_files_snapshot_keeps_old_contents_and_shares_extents);
	tcase_add_test(tc, test_files_snapshot_adds_its_own_data_reference);
	tcase_add_test(tc, test_files_snapshot_is_a_subvolume_entry_of_the_root_dir);
	tcase_add_test(tc, test_files_check_reports_wrong_nbytes);
	tcase_add_test(tc, test_files_snapshot_path_stat_readdir_and_errnos);
	tcase_add_test(tc, test_files_snapshot_copied_subvolume_entry_is_an_empty_dir);
	tcase_add_test(tc, test_files_subvol_unlink_removes_the_entry_link_made);
	tcase_add_test(tc, test_files_check_reports_root_ref_without_entry_and_entry_without_root);
	tcase_add_test(tc, test_files_emulated_zones_file_backend);
	tcase_add_test(tc, test_files_check_finds_namespace_and_extent_damage);
	tcase_add_test(tc, test_files_cli_put_get_ls_cat_rm_mkdir_stat);
	tcase_add_test(tc, test_files_unlink_while_open_keeps_data_until_release);
	tcase_add_test(tc, test_files_unlink_open_of_a_linked_or_unopened_name_is_unlink);
	tcase_add_test(tc, test_files_orphan_left_by_crash_is_deleted_at_mount);
	tcase_add_test(tc, test_files_orphan_left_by_crash_is_deleted_at_mount_treelog);
	tcase_add_test(tc, test_files_check_reports_orphan_item_without_inode);
	suite_add_tcase(s, tc);
	/* Filling the fs: slow under the sanitizers. */
	rsv = tcase_create("reserve");
	tcase_set_timeout(rsv, 240);
	tcase_add_test(rsv, test_files_metadata_full_fails_at_start_and_fs_stays_usable);
	tcase_add_test(rsv, test_files_each_op_on_full_fs_is_all_or_nothing);
	tcase_add_test(rsv, test_files_threads_fill_metadata_no_eio_treelog_off);
	tcase_add_test(rsv, test_files_threads_fill_metadata_no_eio_treelog_on);
	tcase_add_test(rsv, test_files_orphan_that_filled_the_fs_is_deleted_at_release);
	tcase_add_test(rsv, test_files_orphan_that_filled_the_fs_is_deleted_at_mount);
	suite_add_tcase(s, rsv);
	return s;
}
