// SPDX-License-Identifier: MIT
/*
 * Hard links, symlinks and extended attributes (core/link.c,
 * core/xattr.c): the items as btrfs lays them out (one INODE_REF per
 * parent packing every name, an inline extent for a symlink's target,
 * XATTR_ITEMs keyed by name hash), exact errnos and link counts, the
 * bytes read back, persistence across unmount/mount and across fsync +
 * power cut (the tree-log), and the checker's verdict.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csum.h"
#include "files.h"
#include "tests.h"
#include "zcow.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zdev *new_dev(void)
{
	struct zsim_config cfg = { .nr_zones = 32, .zone_size = ZS,
				   .seed = 19 };

	return zcow_test_sim(&cfg);
}

static void report(void *arg, const char *msg)
{
	int *nr = arg;

	fprintf(stderr, "check: %s\n", msg);
	if (nr)
		(*nr)++;
}

static struct zcow_fs *mount_dev(struct zdev *dev)
{
	/* One data group: an fsync's data lies in a committed chunk. */
	return zcow_test_mount_parse(dev, "data_zones=1");
}

static struct zcow_fs *fresh(struct zdev *dev)
{
	struct zcow_mkfs_opts mo = { .seed = 5 };

	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	return mount_dev(dev);
}

static struct zcow_fs *remount(struct zcow_fs *fs)
{
	struct zdev *dev = fs->dev;

	ck_assert_int_eq(zcow_unmount(fs), 0);
	return mount_dev(dev);
}

/* Power fails now: unflushed writes are lost, no commit. */
static struct zcow_fs *crash_remount(struct zcow_fs *fs)
{
	struct zdev *dev = fs->dev;
	struct zsim *sim = zsim_from_dev(dev);

	ck_assert_int_eq(zsim_cut_now(sim, ZSIM_LOSS_DROP, 5), 0);
	zcow_unmount(fs);
	ck_assert_int_eq(zsim_power_cycle(sim), 0);
	return mount_dev(dev);
}

static void write_file(struct zcow_fs *fs, const char *path, const char *s)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_CREAT | O_TRUNC | O_RDWR, &f),
			 0);
	ck_assert_int_eq(zcow_pwrite(f, s, strlen(s), 0), (int64_t)strlen(s));
	zcow_close(f);
}

static void expect_file(struct zcow_fs *fs, const char *path, const char *s)
{
	struct zcow_file *f;
	char buf[256] = { 0 };

	ck_assert_msg(zcow_open(fs, path, O_RDONLY, &f) == 0, "%s missing",
		      path);
	ck_assert_int_eq(zcow_pread(f, buf, sizeof(buf) - 1, 0),
			 (int64_t)strlen(s));
	ck_assert_str_eq(buf, s);
	zcow_close(f);
}

static void fsync_path(struct zcow_fs *fs, const char *path)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
}

static struct zcow_stat stat_of(struct zcow_fs *fs, const char *path)
{
	struct zcow_stat st;

	ck_assert_msg(zcow_stat(fs, path, &st) == 0, "%s missing", path);
	return st;
}

/* The names of the INODE_REF item (@ino, @dir), "name:index," each. */
static void ref_names(struct zcow_fs *fs, uint64_t ino, uint64_t dir,
		      char *out, size_t size)
{
	struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, dir };
	uint8_t buf[16384];
	uint32_t len, off = 0;

	out[0] = '\0';
	if (zcow_tree_search(&fs->fs_tree, &k, buf, sizeof(buf), &len))
		return;
	while (off + ZCOW_INODE_REF_HDR <= len) {
		uint16_t n = get16(buf + off + 8);

		snprintf(out + strlen(out), size - strlen(out), "%.*s:%llu,",
			 (int)n, (const char *)buf + off + ZCOW_INODE_REF_HDR,
			 (unsigned long long)get64(buf + off));
		off += ZCOW_INODE_REF_HDR + n;
	}
}

/* ---- hard links ---------------------------------------------------------- */

START_TEST(test_link_names_share_the_inode_and_count_in_nlink)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_stat a, b;
	struct zcow_inode in;
	struct zcow_dirent *ents;
	uint64_t nr, dino;
	char names[256];

	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/a/f", "hello");
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/d/g"), 0);
	a = stat_of(fs, "/a/f");
	b = stat_of(fs, "/d/g");
	ck_assert_uint_eq(a.ino, b.ino);
	ck_assert_uint_eq(a.nlink, 2);
	ck_assert_uint_eq(b.mode, S_IFREG | 0644);
	expect_file(fs, "/d/g", "hello");
	/* A second name in the same directory: one INODE_REF, both names,
	 * in the order they were made, with their DIR_INDEX indexes. */
	ck_assert_int_eq(zcow_link(fs, "/d/g", "/a/f2"), 0);
	ck_assert_uint_eq(stat_of(fs, "/a/f2").nlink, 3);
	dino = stat_of(fs, "/a").ino;
	ref_names(fs, a.ino, dino, names, sizeof(names));
	ck_assert_str_eq(names, "f:2,f2:3,");
	ck_assert_int_eq(zcow_readdir(fs, "/a", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_uint_eq(ents[0].ino, a.ino);
	ck_assert_uint_eq(ents[1].ino, a.ino);
	ck_assert_uint_eq(ents[1].type, ZCOW_FT_REG_FILE);
	free(ents);
	/* The directory's size counts both names (btrfs: 2 x name bytes). */
	ck_assert_uint_eq(stat_of(fs, "/a").size, 2 * (1 + 2));
	zcow_test_assert_clean(fs);

	fs = remount(fs);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 3);
	expect_file(fs, "/a/f2", "hello");
	/* A write through one name is seen through the others. */
	write_file(fs, "/d/g", "world!");
	expect_file(fs, "/a/f", "world!");
	/* Unlink takes one name out: the others and the data stay. */
	ck_assert_int_eq(zcow_unlink(fs, "/a/f"), 0);
	ck_assert_int_eq(zcow_stat(fs, "/a/f", &a), -ENOENT);
	ck_assert_uint_eq(stat_of(fs, "/a/f2").nlink, 2);
	ref_names(fs, b.ino, dino, names, sizeof(names));
	ck_assert_str_eq(names, "f2:3,");
	expect_file(fs, "/d/g", "world!");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unlink(fs, "/a/f2"), 0);
	ck_assert_uint_eq(stat_of(fs, "/d/g").nlink, 1);
	ck_assert_uint_eq(stat_of(fs, "/a").size, 0);
	zcow_test_assert_clean(fs);
	/* The last name frees the inode. */
	ck_assert_int_eq(zcow_unlink(fs, "/d/g"), 0);
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, b.ino, &in), -ENOENT);
	zcow_test_assert_clean(fs);
	fs = remount(fs);
	ck_assert_int_eq(zcow_stat(fs, "/d/g", &a), -ENOENT);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_link_errnos)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	uint64_t id;

	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	write_file(fs, "/a/f", "x");
	write_file(fs, "/b", "y");
	ck_assert_int_eq(zcow_link(fs, "/a", "/a2"), -EPERM);
	ck_assert_int_eq(zcow_link(fs, "/", "/r"), -EPERM);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/b"), -EEXIST);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/a"), -EEXIST);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/a/f"), -EEXIST);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/"), -EEXIST);
	ck_assert_int_eq(zcow_link(fs, "/a/nope", "/c"), -ENOENT);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/nodir/c"), -ENOENT);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/b/c"), -ENOTDIR);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/a/."), -EINVAL);
	/* Subvolumes: a name into a read-only snapshot, a name across. */
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/s/a/g"), -EROFS);
	ck_assert_int_eq(zcow_link(fs, "/s/a/f", "/g"), -EXDEV);
	ck_assert_int_eq(zcow_link(fs, "/s", "/g"), -EPERM);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 1);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_link_emlink_at_link_max_and_at_a_full_inode_ref)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_inode in;
	struct zcow_stat st;
	char name[300];
	int i, n;

	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/f", "x");
	st = stat_of(fs, "/f");
	/* 255-byte names in one directory: each takes 265 bytes of the
	 * INODE_REF, which holds at most a leaf's largest item. */
	n = (int)((zcow_leaf_max_item_size(fs->nodesize) -
		   (ZCOW_INODE_REF_HDR + 1)) / (ZCOW_INODE_REF_HDR + 255));
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "/d/%03d%0252d", i, 0);
		ck_assert_int_eq(zcow_link(fs, "/f", name), 0);
	}
	snprintf(name, sizeof(name), "/d/%03d%0252d", n, 0);
	ck_assert_int_eq(zcow_link(fs, "/f", name), -EMLINK);
	ck_assert_int_eq(zcow_stat(fs, name, &st), -ENOENT);
	/* Nothing of the refused name: a shorter one still fits, and
	 * another directory takes more. */
	ck_assert_int_eq(zcow_link(fs, "/f", "/d/s"), 0);
	ck_assert_int_eq(zcow_link(fs, "/f", "/g"), 0);
	ck_assert_uint_eq(stat_of(fs, "/f").nlink, (uint32_t)n + 3);
	zcow_test_assert_clean(fs);
	/* 65535 names: the next is EMLINK (the count set in place: making
	 * 65535 names would take minutes). */
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, st.ino, &in), 0);
	in.nlink = ZCOW_LINK_MAX;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_eq(zcow_link(fs, "/f", "/h"), -EMLINK);
	in.nlink = ZCOW_LINK_MAX - 1;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_eq(zcow_link(fs, "/f", "/h"), 0);
	ck_assert_uint_eq(stat_of(fs, "/h").nlink, ZCOW_LINK_MAX);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_rename_of_a_hard_link_moves_only_that_name)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_stat st;
	uint64_t ino;

	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/a/f", "data");
	ino = stat_of(fs, "/a/f").ino;
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/a/g"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/a/g", "/d/h"), 0);
	ck_assert_int_eq(zcow_stat(fs, "/a/g", &st), -ENOENT);
	ck_assert_uint_eq(stat_of(fs, "/a/f").ino, ino);
	ck_assert_uint_eq(stat_of(fs, "/d/h").ino, ino);
	ck_assert_uint_eq(stat_of(fs, "/d/h").nlink, 2);
	/* rename(2) between two names of one inode does nothing. */
	ck_assert_int_eq(zcow_rename(fs, "/a/f", "/d/h"), 0);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 2);
	/* Over another file: that one loses its name. */
	write_file(fs, "/d/o", "other");
	ck_assert_int_eq(zcow_rename(fs, "/d/h", "/d/o"), 0);
	expect_file(fs, "/d/o", "data");
	ck_assert_uint_eq(stat_of(fs, "/d/o").nlink, 2);
	zcow_test_assert_clean(fs);
	fs = remount(fs);
	ck_assert_uint_eq(stat_of(fs, "/d/o").ino, ino);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 2);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_link_crash_after_fsync_keeps_both_names)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	uint64_t ino;

	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/a/f", "persist");
	ck_assert_int_eq(zcow_sync(fs), 0);
	ino = stat_of(fs, "/a/f").ino;
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/d/g"), 0);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/a/f2"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/n"), 0);	/* new parent */
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/n/h"), 0);
	fsync_path(fs, "/a/f");
	fs = crash_remount(fs);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 4);
	ck_assert_uint_eq(stat_of(fs, "/d/g").ino, ino);
	ck_assert_uint_eq(stat_of(fs, "/a/f2").ino, ino);
	ck_assert_uint_eq(stat_of(fs, "/n/h").ino, ino);
	expect_file(fs, "/n/h", "persist");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_unlink_one_name_crash_after_fsync_keeps_the_other)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_stat st;

	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/a/f", "keep");
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/d/g"), 0);
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/a/f2"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/d/g"), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/a/f2"), 0);
	fsync_path(fs, "/a/f");
	fs = crash_remount(fs);
	ck_assert_int_eq(zcow_stat(fs, "/d/g", &st), -ENOENT);
	ck_assert_int_eq(zcow_stat(fs, "/a/f2", &st), -ENOENT);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 1);
	ck_assert_uint_eq(stat_of(fs, "/d").size, 0);
	expect_file(fs, "/a/f", "keep");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* fsync of a file with names in two directories makes the rename of a
 * directory above either name durable (its paths go through both). */
START_TEST(test_fsync_follows_every_parent_of_a_hard_linked_file)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_file *f;
	struct zcow_stat st;
	uint64_t ino;

	/* /a has the lower inode number: its INODE_REF comes first. */
	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/p1"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/p1/q"), 0);
	write_file(fs, "/a/f", "both");
	ck_assert_int_eq(zcow_link(fs, "/a/f", "/p1/q/g"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ino = stat_of(fs, "/a/f").ino;
	ck_assert_int_eq(zcow_rename(fs, "/p1", "/p2"), 0);
	ck_assert_int_eq(zcow_open(fs, "/a/f", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "BOTH", 4, 0), 4);
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
	fs = crash_remount(fs);
	ck_assert_int_eq(zcow_stat(fs, "/p1", &st), -ENOENT);
	ck_assert_uint_eq(stat_of(fs, "/p2/q/g").ino, ino);
	ck_assert_uint_eq(stat_of(fs, "/a/f").nlink, 2);
	expect_file(fs, "/p2/q/g", "BOTH");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* A crash without any fsync: the committed names, no more. */
START_TEST(test_link_without_fsync_is_lost_at_a_crash)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_stat st;

	write_file(fs, "/f", "x");
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_link(fs, "/f", "/g"), 0);
	fs = crash_remount(fs);
	ck_assert_int_eq(zcow_stat(fs, "/g", &st), -ENOENT);
	ck_assert_uint_eq(stat_of(fs, "/f").nlink, 1);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* ---- symlinks ------------------------------------------------------------ */

START_TEST(test_symlink_is_an_inline_extent_and_reads_back)
{
	static const char target[] = "../some/where else";
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	uint64_t tlen = strlen(target), nr;
	struct zcow_key k;
	struct zcow_dirent *ents;
	struct zcow_stat st;
	struct zcow_file *f;
	uint8_t item[64];
	uint32_t size;
	char buf[64];

	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_symlink(fs, target, "/d/l", NULL), 0);
	st = stat_of(fs, "/d/l");
	ck_assert_uint_eq(st.mode, S_IFLNK | 0777);
	ck_assert_uint_eq(st.size, tlen);
	ck_assert_uint_eq(st.nbytes, tlen);
	ck_assert_uint_eq(st.nlink, 1);
	/* The item: type 0 inline, uncompressed, ram_bytes the length. */
	k.objectid = st.ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item,
					  sizeof(item), &size), 0);
	ck_assert_uint_eq(size, 21 + tlen);
	ck_assert_uint_eq(get64(item + 8), tlen);
	ck_assert_uint_eq(item[16] | item[17] | item[18] | item[19] | item[20],
			  0);
	ck_assert(!memcmp(item + 21, target, tlen));
	/* readlink: the bytes, not terminated; truncated to the buffer. */
	memset(buf, '#', sizeof(buf));
	ck_assert_int_eq(zcow_readlink(fs, "/d/l", buf, sizeof(buf)),
			 (int64_t)tlen);
	ck_assert(!memcmp(buf, target, tlen));
	ck_assert_int_eq(buf[tlen], '#');
	ck_assert_int_eq(zcow_readlink(fs, "/d/l", buf, 4), 4);
	ck_assert(!memcmp(buf, target, 4));
	ck_assert_int_eq(zcow_readlink(fs, "/d/l", buf, 0), -EINVAL);
	ck_assert_int_eq(zcow_readlink(fs, "/d", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(zcow_readlink(fs, "/d/x", buf, sizeof(buf)),
			 -ENOENT);
	/* The core follows no symlink. */
	ck_assert_int_eq(zcow_open(fs, "/d/l", O_RDONLY, &f), -ELOOP);
	ck_assert_int_eq(zcow_open(fs, "/d/l", O_RDWR | O_CREAT, &f), -ELOOP);
	ck_assert_int_eq(zcow_open(fs, "/d/l", O_RDWR | O_CREAT | O_EXCL, &f),
			 -EEXIST);
	ck_assert_int_eq(zcow_stat(fs, "/d/l/x", &st), -ENOTDIR);
	ck_assert_int_eq(zcow_symlink(fs, "t", "/d/l/x", NULL), -ENOTDIR);
	ck_assert_int_eq(zcow_readdir(fs, "/d", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 1);
	ck_assert_uint_eq(ents[0].type, 7);
	free(ents);
	/* A hard link to a symlink is a symlink too. */
	ck_assert_int_eq(zcow_link(fs, "/d/l", "/l2"), 0);
	ck_assert_int_eq(zcow_readlink(fs, "/l2", buf, sizeof(buf)),
			 (int64_t)tlen);
	ck_assert_int_eq(zcow_rename(fs, "/l2", "/l3"), 0);
	ck_assert_uint_eq(stat_of(fs, "/l3").nlink, 2);
	zcow_test_assert_clean(fs);
	fs = remount(fs);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(zcow_readlink(fs, "/d/l", buf, sizeof(buf)),
			 (int64_t)tlen);
	ck_assert_str_eq(buf, target);
	ck_assert_int_eq(zcow_unlink(fs, "/d/l"), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/l3"), 0);
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, NULL),
			 -ENOENT);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_symlink_target_limits_and_errnos)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_cred cred = { 1000, 100 };
	char *t = malloc(4097), *buf = malloc(4097);
	struct zcow_inode in;
	uint64_t id;

	memset(t, 'a', 4096);
	t[4096] = '\0';
	ck_assert_int_eq(zcow_symlink(fs, t, "/long", NULL), -ENAMETOOLONG);
	t[4095] = '\0';
	ck_assert_int_eq(zcow_symlink(fs, t, "/long", &cred), 0);
	ck_assert_int_eq(zcow_readlink(fs, "/long", buf, 4097), 4095);
	ck_assert(!memcmp(buf, t, 4095));
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, stat_of(fs, "/long").ino,
					&in), 0);
	ck_assert_uint_eq(in.uid, 1000);
	ck_assert_uint_eq(in.gid, 100);
	ck_assert_int_eq(zcow_symlink(fs, "", "/e", NULL), -ENOENT);
	ck_assert_int_eq(zcow_symlink(fs, "x", "/long", NULL), -EEXIST);
	ck_assert_int_eq(zcow_symlink(fs, "x", "/", NULL), -EEXIST);
	ck_assert_int_eq(zcow_symlink(fs, "x", "/no/l", NULL), -ENOENT);
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	ck_assert_int_eq(zcow_symlink(fs, "x", "/s/l", NULL), -EROFS);
	/* In the snapshot the symlink is one too. */
	ck_assert_int_eq(zcow_readlink(fs, "/s/long", buf, 4097), 4095);
	zcow_test_assert_clean(fs);
	fs = remount(fs);
	ck_assert_int_eq(zcow_readlink(fs, "/long", buf, 4097), 4095);
	ck_assert(!memcmp(buf, t, 4095));
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(t);
	free(buf);
}
END_TEST

START_TEST(test_symlink_crash_after_fsync_of_its_directory)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	char buf[32] = { 0 };

	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_symlink(fs, "target", "/d/l", NULL), 0);
	fsync_path(fs, "/d");
	fs = crash_remount(fs);
	ck_assert_int_eq(zcow_readlink(fs, "/d/l", buf, sizeof(buf)), 6);
	ck_assert_str_eq(buf, "target");
	ck_assert_uint_eq(stat_of(fs, "/d/l").mode, S_IFLNK | 0777);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* ---- xattrs -------------------------------------------------------------- */

static void expect_xattr(struct zcow_fs *fs, const char *path,
			 const char *name, const char *value)
{
	char buf[256];
	int64_t n = zcow_getxattr(fs, path, name, buf, sizeof(buf));

	ck_assert_msg(n == (int64_t)strlen(value), "%s %s: %lld", path, name,
		      (long long)n);
	ck_assert(!memcmp(buf, value, strlen(value)));
}

START_TEST(test_xattr_set_get_list_remove)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_key k;
	uint8_t item[128];
	uint32_t size;
	uint64_t ino;
	char buf[256];
	const char *first, *second;

	write_file(fs, "/f", "x");
	ino = stat_of(fs, "/f").ino;
	ck_assert_int_eq(zcow_listxattr(fs, "/f", buf, sizeof(buf)), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.a", "v1", 2, 0), 0);
	/* The item: a dir item of location 0, type FT_XATTR, name, value. */
	k.objectid = ino;
	k.type = ZCOW_XATTR_ITEM_KEY;
	k.offset = zcow_name_hash("user.a", 6);
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item, sizeof(item),
					  &size), 0);
	ck_assert_uint_eq(size, 30 + 6 + 2);
	ck_assert_uint_eq(get64(item) | item[8] | get64(item + 9), 0);
	ck_assert_uint_eq(get16(item + 25), 2);
	ck_assert_uint_eq(get16(item + 27), 6);
	ck_assert_uint_eq(item[29], 8);
	ck_assert(!memcmp(item + 30, "user.av1", 8));

	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.a", NULL, 0), 2);
	expect_xattr(fs, "/f", "user.a", "v1");
	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.a", buf, 1), -ERANGE);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.b", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.a", "v2", 2,
				       ZCOW_XATTR_CREATE), -EEXIST);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.b", "v2", 2,
				       ZCOW_XATTR_REPLACE), -ENODATA);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.a", "longer", 6,
				       ZCOW_XATTR_REPLACE), 0);
	expect_xattr(fs, "/f", "user.a", "longer");
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.b", NULL, 0,
				       ZCOW_XATTR_CREATE), 0);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.b", buf, sizeof(buf)),
			 0);
	/* list: in name hash order, NUL after each. */
	if (zcow_name_hash("user.a", 6) < zcow_name_hash("user.b", 6)) {
		first = "user.a";
		second = "user.b";
	} else {
		first = "user.b";
		second = "user.a";
	}
	ck_assert_int_eq(zcow_listxattr(fs, "/f", NULL, 0), 14);
	ck_assert_int_eq(zcow_listxattr(fs, "/f", buf, 13), -ERANGE);
	memset(buf, '#', sizeof(buf));
	ck_assert_int_eq(zcow_listxattr(fs, "/f", buf, sizeof(buf)), 14);
	ck_assert_str_eq(buf, first);
	ck_assert_str_eq(buf + 7, second);
	ck_assert_int_eq(buf[14], '#');
	zcow_test_assert_clean(fs);

	fs = remount(fs);
	expect_xattr(fs, "/f", "user.a", "longer");
	ck_assert_int_eq(zcow_removexattr(fs, "/f", "user.a"), 0);
	ck_assert_int_eq(zcow_removexattr(fs, "/f", "user.a"), -ENODATA);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.a", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_int_eq(zcow_listxattr(fs, "/f", buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "user.b");
	fs = remount(fs);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.a", buf, sizeof(buf)),
			 -ENODATA);
	/* The items go with the inode. */
	ck_assert_int_eq(zcow_unlink(fs, "/f"), 0);
	k.offset = zcow_name_hash("user.b", 6);
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, NULL),
			 -ENOENT);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

struct hname {
	uint32_t hash;
	uint32_t n;
};

static int cmp_hname(const void *a, const void *b)
{
	const struct hname *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Name @n of the search: "user." and 20 pseudo-random hex digits (a CRC
 * catches every difference within 32 bits: the names differ widely). */
static int hname_of(uint32_t n, char *name, size_t size)
{
	uint64_t x = n * 0x9e3779b97f4a7c15ULL + 1, y;

	x ^= x >> 31;
	y = x * 0xbf58476d1ce4e5b9ULL;
	y ^= y >> 29;
	return snprintf(name, size, "user.%016llx%04x",
			(unsigned long long)y, n & 0xffff);
}

/* Two xattr names of one crc32c hash (a birthday search). */
static void colliding_names(char *a, char *b, size_t size)
{
	enum { NR = 300000 };
	struct hname *v = malloc(NR * sizeof(*v));
	char name[32];
	uint32_t i;

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < NR; i++) {
		int len = hname_of(i, name, sizeof(name));

		v[i].hash = (uint32_t)zcow_name_hash(name, (size_t)len);
		v[i].n = i;
	}
	qsort(v, NR, sizeof(*v), cmp_hname);
	for (i = 1; i < NR; i++)
		if (v[i].hash == v[i - 1].hash)
			break;
	ck_assert_uint_lt(i, NR);
	hname_of(v[i - 1].n, a, size);
	hname_of(v[i].n, b, size);
	free(v);
}

START_TEST(test_xattr_names_of_one_hash_share_an_item)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	char a[32], b[32], buf[64];
	struct zcow_key k;
	uint32_t size;
	int64_t n;

	colliding_names(a, b, sizeof(a));
	write_file(fs, "/f", "x");
	ck_assert_int_eq(zcow_setxattr(fs, "/f", a, "AA", 2, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", b, "BBB", 3, 0), 0);
	k.objectid = stat_of(fs, "/f").ino;
	k.type = ZCOW_XATTR_ITEM_KEY;
	k.offset = zcow_name_hash(a, strlen(a));
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, &size),
			 0);
	ck_assert_uint_eq(size, 2 * 30 + strlen(a) + 2 + strlen(b) + 3);
	expect_xattr(fs, "/f", a, "AA");
	expect_xattr(fs, "/f", b, "BBB");
	ck_assert_int_eq(zcow_setxattr(fs, "/f", a, "A2", 2, ZCOW_XATTR_CREATE),
			 -EEXIST);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", a, "a", 1, 0), 0);
	n = zcow_listxattr(fs, "/f", buf, sizeof(buf));
	ck_assert_int_eq(n, (int64_t)(strlen(a) + strlen(b) + 2));
	/* In the item's order: b, then a (set again, at its end). */
	ck_assert_str_eq(buf, b);
	ck_assert_str_eq(buf + strlen(b) + 1, a);
	zcow_test_assert_clean(fs);
	fs = remount(fs);
	ck_assert_int_eq(zcow_removexattr(fs, "/f", b), 0);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", b, buf, sizeof(buf)),
			 -ENODATA);
	expect_xattr(fs, "/f", a, "a");
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, &size),
			 0);
	ck_assert_uint_eq(size, 30 + strlen(a) + 1);
	ck_assert_int_eq(zcow_removexattr(fs, "/f", a), 0);
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, NULL, 0, &size),
			 -ENOENT);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_xattr_limits_and_errnos)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	uint32_t max = zcow_leaf_max_item_size(fs->nodesize) - 30;
	char name[300], *big = calloc(1, 70000), buf[64];
	uint64_t id;

	write_file(fs, "/f", "x");
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_symlink(fs, "f", "/l", NULL), 0);
	/* btrfs's BTRFS_MAX_XATTR_SIZE of a 16 KiB node */
	ck_assert_uint_eq(max, 16384 - 101 - 25 - 30);
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[255] = '\0';
	ck_assert_int_eq(zcow_setxattr(fs, "/f", name, "v", 1, 0), 0);
	name[255] = 'n';
	name[256] = '\0';
	ck_assert_int_eq(zcow_setxattr(fs, "/f", name, "v", 1, 0), -ERANGE);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", name, buf, 64), -ERANGE);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "", "v", 1, 0), -ERANGE);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.", "v", 1, 0), -EINVAL);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "other.x", "v", 1, 0),
			 -EOPNOTSUPP);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "system.posix_acl_access",
				       "v", 1, 0), -EOPNOTSUPP);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.x", "v", 1, 4), -EINVAL);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.x", big, 65537, 0),
			 -E2BIG);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.x", big, max - 5, 0),
			 -ENOSPC);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.x", big, max - 6, 0),
			 0);
	ck_assert_int_eq(zcow_getxattr(fs, "/f", "user.x", NULL, 0),
			 (int64_t)max - 6);
	ck_assert_int_eq(zcow_setxattr(fs, "/nope", "user.x", "v", 1, 0),
			 -ENOENT);
	/* Directories and symlinks; user.* only on files and directories
	 * (xattr_permission()). */
	ck_assert_int_eq(zcow_setxattr(fs, "/d", "user.d", "dv", 2, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/", "trusted.r", "rv", 2, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/l", "user.l", "lv", 2, 0), -EPERM);
	ck_assert_int_eq(zcow_getxattr(fs, "/l", "user.l", buf, 64), -ENODATA);
	ck_assert_int_eq(zcow_setxattr(fs, "/l", "trusted.l", "lv", 2, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/l", "security.s", "sv", 2, 0), 0);
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/s/f", "user.y", "v", 1, 0),
			 -EROFS);
	ck_assert_int_eq(zcow_removexattr(fs, "/s/f", "user.x"), -EROFS);
	expect_xattr(fs, "/s/d", "user.d", "dv");
	zcow_test_assert_clean(fs);
	fs = remount(fs);
	expect_xattr(fs, "/d", "user.d", "dv");
	expect_xattr(fs, "/", "trusted.r", "rv");
	expect_xattr(fs, "/l", "trusted.l", "lv");
	expect_xattr(fs, "/l", "security.s", "sv");
	ck_assert_int_eq(zcow_listxattr(fs, "/l", NULL, 0), 10 + 11);
	ck_assert_int_eq(zcow_rmdir(fs, "/d"), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(big);
}
END_TEST

START_TEST(test_xattr_crash_after_fsync_keeps_sets_and_removals)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	char buf[64];

	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/d/f", "x");
	ck_assert_int_eq(zcow_setxattr(fs, "/d/f", "user.old", "o", 1, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/d/f", "user.chg", "c1", 2, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/d", "user.dold", "o", 1, 0), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_removexattr(fs, "/d/f", "user.old"), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/d/f", "user.chg", "c2!", 3, 0), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/d/f", "user.new", "n", 1, 0), 0);
	fsync_path(fs, "/d/f");
	ck_assert_int_eq(zcow_removexattr(fs, "/d", "user.dold"), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/d", "user.dnew", "dn", 2, 0), 0);
	fsync_path(fs, "/d");
	/* Not fsynced: lost. */
	ck_assert_int_eq(zcow_setxattr(fs, "/d/f", "user.late", "l", 1, 0), 0);
	fs = crash_remount(fs);
	ck_assert_int_eq(zcow_getxattr(fs, "/d/f", "user.old", buf, 64),
			 -ENODATA);
	expect_xattr(fs, "/d/f", "user.chg", "c2!");
	expect_xattr(fs, "/d/f", "user.new", "n");
	ck_assert_int_eq(zcow_getxattr(fs, "/d/f", "user.late", buf, 64),
			 -ENODATA);
	ck_assert_int_eq(zcow_getxattr(fs, "/d", "user.dold", buf, 64),
			 -ENODATA);
	expect_xattr(fs, "/d", "user.dnew", "dn");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * A power cut at every persist point of a run of fsynced namespace
 * changes (link in another and in the same directory, unlink of one name,
 * an xattr set, a symlink, an xattr removal with an unlink): after the
 * remount the state is the one of the last acknowledged fsync, or of the
 * one in flight, never another, and the checker is clean.
 */
#define SWEEP_STEPS 6

/* Step @k of the workload, then its fsync: 0 or the first error. */
static int sweep_step(struct zcow_fs *fs, int k)
{
	struct zcow_file *f;
	const char *sync = "/a/f";
	int err = 0;

	switch (k) {
	case 1:
		err = zcow_link(fs, "/a/f", "/d/g");
		break;
	case 2:
		err = zcow_link(fs, "/a/f", "/a/f2");
		break;
	case 3:
		err = zcow_unlink(fs, "/d/g");
		break;
	case 4:
		err = zcow_setxattr(fs, "/a/f", "user.x", "1", 1, 0);
		break;
	case 5:
		err = zcow_symlink(fs, "t", "/d/l", NULL);
		sync = "/d";
		break;
	case 6:
		err = zcow_removexattr(fs, "/a/f", "user.x");
		if (!err)
			err = zcow_unlink(fs, "/a/f2");
		break;
	}
	if (!err)
		err = zcow_open(fs, sync, O_RDONLY, &f);
	if (!err) {
		err = zcow_fsync(f);
		zcow_close(f);
	}
	return err;
}

/* The steps fsynced (acknowledged) before the first error. */
static int sweep_run(struct zdev *dev)
{
	struct zcow_fs *fs = mount_dev(dev);
	int k;

	for (k = 1; k <= SWEEP_STEPS; k++)
		if (sweep_step(fs, k))
			break;
	zcow_unmount(fs);
	return k - 1;
}

/* Does @fs hold exactly the state after step @k? */
static bool sweep_state_is(struct zcow_fs *fs, int k)
{
	struct zcow_stat st;
	char buf[8];
	bool g = k >= 1 && k < 3, f2 = k >= 2 && k < 6, x = k >= 4 && k < 6;
	uint32_t nlink = 1 + g + f2;

	if (zcow_stat(fs, "/a/f", &st) || st.nlink != nlink)
		return false;
	if ((zcow_stat(fs, "/d/g", &st) == 0) != g ||
	    (zcow_stat(fs, "/a/f2", &st) == 0) != f2)
		return false;
	if ((zcow_getxattr(fs, "/a/f", "user.x", buf, sizeof(buf)) == 1) != x)
		return false;
	return (zcow_readlink(fs, "/d/l", buf, sizeof(buf)) == 1) == (k >= 5);
}

static struct zdev *sweep_dev(void)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);

	ck_assert_int_eq(zcow_mkdir(fs, "/a"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_file(fs, "/a/f", "data");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	return dev;
}

START_TEST(test_links_power_cut_sweep_recovers_an_fsynced_state)
{
	static const enum zsim_loss losses[] = { ZSIM_LOSS_DROP,
						 ZSIM_LOSS_TORN };
	enum zsim_loss loss = losses[_i];
	struct zdev *dev = sweep_dev();
	uint64_t p0 = zsim_nr_persist(zsim_from_dev(dev)), nr, n;

	ck_assert_int_eq(sweep_run(dev), SWEEP_STEPS);
	nr = zsim_nr_persist(zsim_from_dev(dev)) - p0;
	ck_assert_uint_gt(nr, SWEEP_STEPS);	/* a write at each fsync */
	fprintf(stderr, "links-sweep: %llu persist points\n",
		(unsigned long long)nr);
	zdev_close(dev);
	for (n = 1; n <= nr; n++) {
		struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST,
					.ordinal = n, .when = ZSIM_CUT_AFTER,
					.loss = loss, .seed = n };
		struct zcow_fs *fs;
		struct zsim *sim;
		int acked, ret;

		dev = sweep_dev();
		sim = zsim_from_dev(dev);
		ck_assert_int_eq(zsim_arm_cut(sim, &cut), 0);
		acked = sweep_run(dev);
		if (zsim_is_cut(sim))
			ck_assert_int_eq(zsim_power_cycle(sim), 0);
		ret = zcow_mount(dev, NULL, &fs);
		ck_assert_msg(ret == 0, "repro: links-sweep loss=%s persist=%llu: mount %d",
			      zsim_loss_name(loss), (unsigned long long)n,
			      ret);
		ck_assert_msg(sweep_state_is(fs, acked) ||
				      (acked < SWEEP_STEPS &&
				       sweep_state_is(fs, acked + 1)),
			      "repro: links-sweep loss=%s persist=%llu: not the state of step %d or %d",
			      zsim_loss_name(loss), (unsigned long long)n,
			      acked, acked + 1);
		ck_assert_msg(zcow_check(fs, report, NULL) == 0,
			      "repro: links-sweep loss=%s persist=%llu: check",
			      zsim_loss_name(loss), (unsigned long long)n);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
	}
}
END_TEST

/* ---- the checker --------------------------------------------------------- */

/* Damage an item of the fs tree and commit: the checker must see it. */
static int problems_after(struct zcow_fs *fs)
{
	int nr = 0;

	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, report, &nr), nr);
	return nr;
}

START_TEST(test_check_finds_bad_links_symlinks_and_xattrs)
{
	struct zdev *dev = new_dev();
	struct zcow_fs *fs = fresh(dev);
	struct zcow_inode in;
	struct zcow_key k;
	uint8_t item[128];
	uint32_t size;
	uint64_t f, l;

	write_file(fs, "/f", "x");
	ck_assert_int_eq(zcow_link(fs, "/f", "/g"), 0);
	ck_assert_int_eq(zcow_symlink(fs, "abc", "/l", NULL), 0);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.a", "v", 1, 0), 0);
	ck_assert_int_eq(problems_after(fs), 0);
	f = stat_of(fs, "/f").ino;
	l = stat_of(fs, "/l").ino;
	/* nlink not the number of names */
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, f, &in), 0);
	in.nlink = 1;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_eq(problems_after(fs), 1);
	in.nlink = 2;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	/* a symlink whose size is not its target's length */
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, l, &in), 0);
	in.size = 4;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_ge(problems_after(fs), 1);
	in.size = 3;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_eq(problems_after(fs), 0);
	/* an xattr entry of the wrong type */
	k.objectid = f;
	k.type = ZCOW_XATTR_ITEM_KEY;
	k.offset = zcow_name_hash("user.a", 6);
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item, sizeof(item),
					  &size), 0);
	item[29] = 1;
	ck_assert_int_eq(zcow_tree_update(&fs->fs_tree, &k, item, size), 0);
	ck_assert_int_eq(problems_after(fs), 1);
	item[29] = 8;
	ck_assert_int_eq(zcow_tree_update(&fs->fs_tree, &k, item, size), 0);
	/* a name missing from its INODE_REF (the DIR_ITEM/DIR_INDEX stay) */
	k.type = ZCOW_INODE_REF_KEY;
	k.offset = ZCOW_ROOT_DIR_INO;
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item, sizeof(item),
					  &size), 0);
	ck_assert_uint_eq(size, 2 * ZCOW_INODE_REF_HDR + 2);
	ck_assert_int_eq(zcow_tree_update(&fs->fs_tree, &k, item,
					  ZCOW_INODE_REF_HDR + 1), 0);
	ck_assert_int_ge(problems_after(fs), 2);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

Suite *posix_links_suite(void)
{
	Suite *s = suite_create("posix_links_suite");
	TCase *tc = tcase_create("links");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_link_names_share_the_inode_and_count_in_nlink);
	tcase_add_test(tc, test_link_errnos);
	tcase_add_test(tc, test_link_emlink_at_link_max_and_at_a_full_inode_ref);
	tcase_add_test(tc, test_rename_of_a_hard_link_moves_only_that_name);
	tcase_add_test(tc, test_link_crash_after_fsync_keeps_both_names);
	tcase_add_test(tc, test_unlink_one_name_crash_after_fsync_keeps_the_other);
	tcase_add_test(tc, test_link_without_fsync_is_lost_at_a_crash);
	tcase_add_test(tc, test_fsync_follows_every_parent_of_a_hard_linked_file);
	tcase_add_test(tc, test_symlink_is_an_inline_extent_and_reads_back);
	tcase_add_test(tc, test_symlink_target_limits_and_errnos);
	tcase_add_test(tc, test_symlink_crash_after_fsync_of_its_directory);
	tcase_add_test(tc, test_xattr_set_get_list_remove);
	tcase_add_test(tc, test_xattr_limits_and_errnos);
	tcase_add_test(tc, test_xattr_names_of_one_hash_share_an_item);
	tcase_add_test(tc, test_xattr_crash_after_fsync_keeps_sets_and_removals);
	tcase_add_test(tc, test_check_finds_bad_links_symlinks_and_xattrs);
	tcase_add_loop_test(tc, test_links_power_cut_sweep_recovers_an_fsynced_state, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
