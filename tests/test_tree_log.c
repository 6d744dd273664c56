// SPDX-License-Identifier: MIT
/*
 * The tree-log (core/tree-log.c, seed 010): fsync writes the log, not a
 * commit; the log lives in its own block group; a crash after the fsync
 * recovers the fsynced state by replay (names, renames, unlinks, data);
 * a cut during replay recovers too; a corrupt log is reported lost; the
 * superblock log orders same-generation copies by log_root_transid.
 */
#include <check.h>
#include <endian.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "files.h"
#include "fs.h"
#include "zlog.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zdev *new_dev(uint64_t nr_conv)
{
	struct zsim_config cfg = { .nr_zones = 32, .zone_size = ZS,
				   .nr_conv = nr_conv, .seed = 11 };

	return zcow_test_sim(&cfg);
}

/* Create (or truncate) @path with @len bytes of pattern @seed; fsync it
 * when @do_fsync. */
static void write_file(struct zcow_fs *fs, const char *path, uint64_t len,
		       uint32_t seed, bool do_fsync)
{
	struct zcow_file *f;
	uint8_t *buf = malloc(len);

	zcow_test_fill_lcg(buf, len, seed);
	ck_assert_int_eq(zcow_open(fs, path, O_CREAT | O_TRUNC | O_RDWR, &f),
			 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, 0), (int64_t)len);
	if (do_fsync)
		ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
	free(buf);
}

/* mkfs, mount, one directory per name in @dirs, committed. */
static struct zcow_fs *fresh(struct zdev *dev, const char *opts,
			     const char *const *dirs)
{
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs;

	char all[128];

	/* One data group: the data of every file lies in a committed
	 * chunk (a new chunk makes an fsync commit). */
	snprintf(all, sizeof(all), "data_zones=1%s%s", *opts ? "," : "",
		 opts);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	fs = zcow_test_mount_parse(dev, all);
	while (dirs && *dirs)
		ck_assert_int_eq(zcow_mkdir(fs, *dirs++), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	return fs;
}

static void fsync_path(struct zcow_fs *fs, const char *path)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
}

static void expect_file(struct zcow_fs *fs, const char *path, uint64_t len,
			uint32_t seed)
{
	uint8_t *want = malloc(len), *got = malloc(len + 1);
	struct zcow_file *f;
	struct zcow_stat st;

	zcow_test_fill_lcg(want, len, seed);
	ck_assert_msg(zcow_open(fs, path, O_RDONLY, &f) == 0, "%s missing",
		      path);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_uint_eq(st.size, len);
	ck_assert_int_eq(zcow_pread(f, got, len + 1, 0), (int64_t)len);
	ck_assert_msg(!memcmp(got, want, len), "%s: contents differ", path);
	zcow_close(f);
	free(want);
	free(got);
}

static void expect_absent(struct zcow_fs *fs, const char *path)
{
	struct zcow_stat st;

	ck_assert_int_eq(zcow_stat(fs, path, &st), -ENOENT);
}

/* Power fails now: every unflushed write is lost; the fs is dropped
 * without a commit. */
static void crash(struct zcow_fs *fs, enum zsim_loss loss)
{
	struct zsim *sim = zsim_from_dev(fs->dev);

	ck_assert_int_eq(zsim_cut_now(sim, loss, 5), 0);
	/* Unmount fails on the dead device; nothing more reaches it. */
	zcow_unmount(fs);
	ck_assert_int_eq(zsim_power_cycle(sim), 0);
}

static void stats(struct zcow_fs *fs, struct zcow_statfs *st)
{
	ck_assert_int_eq(zcow_statfs(fs, st), 0);
}

static void super_on_device(struct zdev *dev, struct zcow_super_block *sb)
{
	struct zcow_sb_copy copy;

	ck_assert_int_eq(zcow_sb_read_latest(dev, sb, &copy), 0);
}

START_TEST(test_treelog_fsync_writes_log_not_commit_and_replays)
{
	static const char *const dirs[] = { "/d", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	struct zcow_super_block sb;
	struct zdev_stats before, after;
	struct zcow_statfs st;
	uint64_t gen = fs->generation, commits;

	stats(fs, &st);
	commits = st.nr_commits;
	ck_assert_uint_eq(st.nr_fsyncs, 0);
	/* mkfs left an empty metadata group: the log's from the start */
	ck_assert_uint_ne(fs->treelog_bg, 0);
	zdev_get_stats(dev, &before);
	write_file(fs, "/d/a", 10000, 1, true);
	zdev_get_stats(dev, &after);
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_fsyncs, 1);
	ck_assert_uint_eq(st.nr_log_syncs, 1);
	ck_assert_uint_eq(st.nr_log_fallbacks, 0);
	ck_assert_uint_eq(st.nr_commits, commits);
	ck_assert_uint_eq(fs->generation, gen);
	/* Log nodes were written, no metadata node. */
	ck_assert_uint_gt(after.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE],
			  before.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE]);
	ck_assert_uint_eq(after.bytes[ZDEV_CLASS_META][ZDEV_OP_WRITE],
			  before.bytes[ZDEV_CLASS_META][ZDEV_OP_WRITE]);
	/* The newest superblock: same generation, the log, numbered 1. */
	super_on_device(dev, &sb);
	ck_assert_uint_eq(le64toh(sb.generation), gen);
	ck_assert_uint_ne(le64toh(sb.log_root), 0);
	ck_assert_uint_eq(le64toh(sb.log_root_transid), 1);
	zcow_test_assert_clean(fs);

	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	stats(fs, &st);
	ck_assert_uint_ge(st.log_replayed, 2);	/* /d/a and /d */
	ck_assert(!st.log_lost);
	expect_file(fs, "/d/a", 10000, 1);
	zcow_test_assert_clean(fs);
	/* The replay committed: the log is gone from the superblock. */
	super_on_device(dev, &sb);
	ck_assert_uint_eq(le64toh(sb.log_root), 0);
	ck_assert_uint_eq(le64toh(sb.generation), gen + 1);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/d/a", 10000, 1);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_off_commits_at_fsync)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "treelog=off", NULL);
	struct zcow_statfs st;
	struct zdev_stats before, after;
	uint64_t gen = fs->generation;

	zdev_get_stats(dev, &before);
	write_file(fs, "/a", 5000, 2, true);
	zdev_get_stats(dev, &after);
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_fsyncs, 1);
	ck_assert_uint_eq(st.nr_log_syncs, 0);
	ck_assert_uint_eq(st.nr_log_fallbacks, 0);
	ck_assert_uint_eq(fs->generation, gen + 1);
	ck_assert_uint_eq(after.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE],
			  before.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE]);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "treelog=off");
	expect_file(fs, "/a", 5000, 2);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_only_what_fsync_needs_is_logged)
{
	static const char *const dirs[] = { "/d1", "/d2", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);

	write_file(fs, "/d2/b", 3000, 3, false);
	write_file(fs, "/d1/a", 3000, 4, true);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/d1/a", 3000, 4);
	expect_absent(fs, "/d2/b");	/* never fsynced, not reachable */
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_rename_then_fsync_moves_the_name)
{
	static const char *const dirs[] = { "/a", "/b", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);

	write_file(fs, "/a/x", 9000, 5, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_rename(fs, "/a/x", "/b/y"), 0);
	fsync_path(fs, "/b/y");
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/b/y", 9000, 5);
	expect_absent(fs, "/a/x");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* fsync of a file whose directory was renamed: the file is durable at
 * its path, i.e. under the new name (both modes), whether or not the file
 * itself changed. */
START_TEST(test_treelog_fsync_under_a_renamed_dir)
{
	static const char *const modes[] = { "", "treelog=off" };
	static const char *const dirs[] = { "/a", "/a/b", NULL };
	unsigned int m;

	for (m = 0; m < 2; m++) {
		struct zdev *dev = new_dev(0);
		struct zcow_fs *fs = fresh(dev, modes[m], dirs);

		write_file(fs, "/a/b/old", 3000, 70, false);
		ck_assert_int_eq(zcow_sync(fs), 0);
		ck_assert_int_eq(zcow_rename(fs, "/a", "/x"), 0);
		write_file(fs, "/x/b/new", 2000, 71, false);
		fsync_path(fs, "/x/b/old");	/* unchanged file */
		fsync_path(fs, "/x/b/new");
		crash(fs, ZSIM_LOSS_DROP);
		fs = zcow_test_mount_parse(dev, modes[m]);
		expect_file(fs, "/x/b/old", 3000, 70);
		expect_file(fs, "/x/b/new", 2000, 71);
		expect_absent(fs, "/a");
		zcow_test_assert_clean(fs);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_treelog_unlink_then_fsync_dir_deletes)
{
	static const char *const dirs[] = { "/d", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	struct zcow_statfs st;

	write_file(fs, "/d/f", 20000, 6, false);
	write_file(fs, "/d/g", 100, 7, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	stats(fs, &st);
	ck_assert_int_eq(zcow_unlink(fs, "/d/f"), 0);
	fsync_path(fs, "/d");
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_absent(fs, "/d/f");
	expect_file(fs, "/d/g", 100, 7);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * A snapshot's entry in "/" is committed with the snapshot: an unlink and
 * a new file in "/" after it, fsynced through the log, replay around it
 * (the logged index ranges do not cover it) and it still leads into the
 * snapshot.
 */
START_TEST(test_treelog_replay_in_the_root_dir_keeps_a_snapshot_entry)
{
	static const char *const dirs[] = { NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	struct zcow_dirent *ents;
	uint64_t nr;

	write_file(fs, "/a", 5000, 1, false);
	write_file(fs, "/b", 300, 2, false);
	ck_assert_int_eq(zcow_snapshot(fs, "snap", NULL), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/a"), 0);
	write_file(fs, "/c", 700, 3, true);
	fsync_path(fs, "/");
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_absent(fs, "/a");
	expect_file(fs, "/c", 700, 3);
	expect_file(fs, "/snap/a", 5000, 1);
	ck_assert_int_eq(zcow_readdir(fs, "/", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 3);
	ck_assert_str_eq(ents[0].name, "b");
	ck_assert_str_eq(ents[1].name, "c");
	ck_assert_str_eq(ents[2].name, "snap");
	free(ents);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* @n empty files /d/f0000.. in @fs, committed. */
static void make_files(struct zcow_fs *fs, int n)
{
	char path[32];
	struct zcow_file *f;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/d/f%04d", i);
		ck_assert_int_eq(zcow_create(fs, path, &f), 0);
		zcow_close(f);
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
}

/*
 * A directory is logged by its changed entries only (btrfs: the items
 * of the running transaction, with DIR_LOG_INDEX ranges): an fsync of a
 * new file in a directory of 1,000 committed entries writes the log
 * tree's one leaf and the log root tree's, not the whole directory.
 */
START_TEST(test_treelog_big_dir_logs_only_changed_entries)
{
	static const char *const dirs[] = { "/d", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	struct zdev_stats before, after;

	make_files(fs, 1000);
	zdev_get_stats(dev, &before);
	write_file(fs, "/d/new", 100, 9, true);
	zdev_get_stats(dev, &after);
	ck_assert_uint_eq(after.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE] -
				  before.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE],
			  2 * fs->nodesize);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/d/new", 100, 9);
	expect_file(fs, "/d/f0000", 0, 0);
	expect_file(fs, "/d/f0999", 0, 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * Unlink, rename within and out of a directory of 300 committed entries,
 * a new file and a name used again, then an fsync of the directory and
 * a power cut: the replayed directory holds exactly the names it had at
 * the fsync, every other entry untouched, the checker clean.
 */
START_TEST(test_treelog_big_dir_changes_replay_exactly)
{
	static const char *const dirs[] = { "/d", "/e", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	char path[32];
	int i;

	make_files(fs, 300);
	write_file(fs, "/d/f0010", 500, 10, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/d/f0001"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/d/f0010", "/d/g"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/d/f0003", "/e/x"), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/d/f0200"), 0);
	write_file(fs, "/d/f0200", 700, 11, false);	/* the name again */
	write_file(fs, "/d/h", 300, 12, false);
	fsync_path(fs, "/d");
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_absent(fs, "/d/f0001");
	expect_absent(fs, "/d/f0010");
	expect_absent(fs, "/d/f0003");
	expect_file(fs, "/d/g", 500, 10);
	expect_file(fs, "/e/x", 0, 0);
	expect_file(fs, "/d/f0200", 700, 11);
	expect_file(fs, "/d/h", 300, 12);
	for (i = 0; i < 300; i++) {
		if (i == 1 || i == 3 || i == 10 || i == 200)
			continue;
		snprintf(path, sizeof(path), "/d/f%04d", i);
		expect_file(fs, path, 0, 0);
	}
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_same_size_overwrite_is_logged_again)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_file *f;
	uint8_t buf[8192];
	struct zcow_statfs st;

	write_file(fs, "/o", 8192, 8, true);
	/* Same range, same size, same transaction: the inode item does not
	 * change, the data does. */
	zcow_test_fill_lcg(buf, sizeof(buf), 9);
	ck_assert_int_eq(zcow_open(fs, "/o", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), 0), 8192);
	ck_assert_int_eq(zcow_fsync(f), 0);
	/* Nothing changed since: no log write. */
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_fsyncs, 3);
	ck_assert_uint_eq(st.nr_log_syncs, 2);
	crash(fs, ZSIM_LOSS_PREFIX);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/o", 8192, 9);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_dedicated_block_group)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_bg *lbg;
	uint64_t root, i;
	int n;

	for (n = 0; n < 20; n++) {
		char p[32];

		snprintf(p, sizeof(p), "/f%d", n);
		write_file(fs, p, 4096 * (uint64_t)(n + 1), (uint32_t)n, true);
		if (n % 7 == 6)
			ck_assert_int_eq(zcow_sync(fs), 0);
		zcow_test_assert_clean(fs);
	}
	ck_assert_uint_ne(fs->treelog_bg, 0);
	lbg = zcow_bg_lookup(fs, fs->treelog_bg);
	ck_assert_ptr_nonnull(lbg);
	ck_assert(lbg->flags & ZCOW_BG_METADATA);
	/* No tree block of the committed trees in it: the log group's used
	 * bytes stay 0 (log nodes have no extent items). */
	ck_assert_uint_eq(lbg->used, 0);
	zcow_tree_root(&fs->root_tree, &root, NULL, NULL);
	ck_assert_ptr_ne(zcow_bg_lookup(fs, root), lbg);
	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i] != lbg && (fs->bgs[i]->flags & ZCOW_BG_METADATA))
			break;
	ck_assert_uint_lt(i, fs->nr_bgs);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	for (n = 0; n < 20; n++) {
		char p[32];

		snprintf(p, sizeof(p), "/f%d", n);
		expect_file(fs, p, 4096 * (uint64_t)(n + 1), (uint32_t)n);
	}
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_corrupt_log_is_reported_lost)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_super_block sb;
	struct zcow_statfs st;

	write_file(fs, "/kept", 4096, 10, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	/* Superblock before the log nodes are flushed, then power fails
	 * losing every unflushed write: the log's nodes are gone. */
	fs->mutation = ZCOW_MUT_LOG_SB_BEFORE_FLUSH;
	write_file(fs, "/lost", 4096, 11, true);
	fs->mutation = ZCOW_MUT_NONE;
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	stats(fs, &st);
	ck_assert(st.log_lost);
	ck_assert_uint_eq(st.log_replayed, 0);
	expect_absent(fs, "/lost");
	expect_file(fs, "/kept", 4096, 10);
	zcow_test_assert_clean(fs);
	/* The ignored log was dropped by the mount's commit. */
	super_on_device(dev, &sb);
	ck_assert_uint_eq(le64toh(sb.log_root), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_drop_item_mutation_loses_data)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_stat st;

	fs->mutation = ZCOW_MUT_LOG_DROP_ITEM;
	write_file(fs, "/m", 8192, 12, true);
	fs->mutation = ZCOW_MUT_NONE;
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	/* The size came back, the extent did not: a hole of zeros. */
	ck_assert_int_eq(zcow_stat(fs, "/m", &st), 0);
	ck_assert_uint_eq(st.size, 8192);
	ck_assert_uint_eq(st.nbytes, 8192);	/* the item says so... */
	{
		struct zcow_file *f;
		uint8_t buf[8192], zero[8192] = { 0 };

		ck_assert_int_eq(zcow_open(fs, "/m", O_RDONLY, &f), 0);
		ck_assert_int_eq(zcow_pread(f, buf, sizeof(buf), 0), 8192);
		ck_assert(!memcmp(buf, zero, sizeof(buf)));	/* ...but */
		zcow_close(f);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* The crashed state with a log to replay: /a/x renamed to /b/y and
 * fsynced, /b/z written and fsynced. */
static struct zdev *crashed_with_log(uint64_t nr_conv, const char *opts)
{
	static const char *const dirs[] = { "/a", "/b", NULL };
	struct zdev *dev = new_dev(nr_conv);
	struct zcow_fs *fs = fresh(dev, opts, dirs);

	write_file(fs, "/a/x", 12000, 20, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_rename(fs, "/a/x", "/b/y"), 0);
	write_file(fs, "/b/z", 70000, 21, true);
	fsync_path(fs, "/b/y");
	crash(fs, ZSIM_LOSS_DROP);
	return dev;
}

static void expect_recovered(struct zdev *dev)
{
	struct zcow_fs *fs = zcow_test_mount_parse(dev, "");

	expect_file(fs, "/b/y", 12000, 20);
	expect_file(fs, "/b/z", 70000, 21);
	expect_absent(fs, "/a/x");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
}

/* A second power failure at every persist point of the mount that
 * replays (its log reads need none; its commit writes), with every loss
 * policy in turn: the next mount still recovers everything fsynced. */
static void replay_cut_sweep(uint64_t nr_conv)
{
	uint64_t n, nr_cut = 0;
	bool is_done = false;

	for (n = 1; n < 500 && !is_done; n++) {
		struct zdev *dev = crashed_with_log(nr_conv, "");
		struct zsim *sim = zsim_from_dev(dev);
		struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST, .ordinal = n,
					.when = ZSIM_CUT_AFTER,
					.loss = (enum zsim_loss)(n % ZSIM_NR_LOSS),
					.seed = n };
		struct zcow_mount_opts mo = { 0 };
		struct zcow_fs *fs = NULL;
		int ret;

		ck_assert_int_eq(zsim_arm_cut(sim, &cut), 0);
		ret = zcow_mount(dev, &mo, &fs);
		if (zsim_is_cut(sim)) {
			nr_cut++;
			if (!ret)
				zcow_unmount(fs);
			ck_assert_int_eq(zsim_power_cycle(sim), 0);
		} else {
			/* The replay needed fewer than n persist points. */
			ck_assert_int_eq(ret, 0);
			is_done = true;
		}
		cut.kind = ZSIM_CUT_NONE;
		ck_assert_int_eq(zsim_arm_cut(sim, &cut), 0);
		if (is_done)
			ck_assert_int_eq(zcow_unmount(fs), 0);
		expect_recovered(dev);
		zdev_close(dev);
	}
	ck_assert(is_done);
	ck_assert_uint_ge(nr_cut, 4);	/* nodes, flush, superblock, flush */
}

START_TEST(test_treelog_cut_during_replay_recovers)
{
	replay_cut_sweep(0);
	replay_cut_sweep(32);	/* emulated zones */
}
END_TEST

START_TEST(test_treelog_emulated_zones_replay)
{
	static const char *const dirs[] = { "/d", NULL };
	struct zdev *dev = new_dev(32);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	int n;

	for (n = 0; n < 8; n++) {
		char p[32];

		snprintf(p, sizeof(p), "/d/f%d", n);
		write_file(fs, p, 5000 + 3000 * (uint64_t)n, (uint32_t)n + 40,
			   true);
	}
	crash(fs, ZSIM_LOSS_SUBSET);
	fs = zcow_test_mount_parse(dev, "");
	for (n = 0; n < 8; n++) {
		char p[32];

		snprintf(p, sizeof(p), "/d/f%d", n);
		expect_file(fs, p, 5000 + 3000 * (uint64_t)n,
			    (uint32_t)n + 40);
	}
	zcow_test_assert_clean(fs);
	/* New writes after the replay do not land on the old log. */
	write_file(fs, "/d/after", 30000, 99, true);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/d/after", 30000, 99);
	expect_file(fs, "/d/f7", 5000 + 3000 * 7, 47);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* The log's data fills a data group the last commit knows as empty: at
 * mount all of it looks unusable, yet the replay needs it. */
START_TEST(test_treelog_replay_keeps_a_full_group_it_references)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_file *f;
	uint8_t *buf = malloc(ZS / 2);

	write_file(fs, "/r", ZS / 2, 31, true);
	zcow_test_fill_lcg(buf, ZS / 2, 32);
	ck_assert_int_eq(zcow_open(fs, "/r", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, ZS / 2, 0), (int64_t)(ZS / 2));
	zcow_close(f);
	crash(fs, ZSIM_LOSS_KEEP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/r", ZS / 2, 31);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/r", ZS / 2, 31);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

/* A log node overwritten with garbage (emulated zones allow it): the
 * checker names it, and the mount reports the log lost. */
START_TEST(test_treelog_check_and_mount_find_a_damaged_log)
{
	struct zdev *dev = new_dev(32);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_super_block sb;
	struct zcow_statfs st;
	uint8_t junk[4096];
	uint64_t phys;
	int problems;

	write_file(fs, "/x", 4096, 50, true);
	zcow_test_assert_clean(fs);
	crash(fs, ZSIM_LOSS_KEEP);
	super_on_device(dev, &sb);
	ck_assert_uint_ne(le64toh(sb.log_root), 0);
	fs = zcow_test_mount_parse(dev, "ro");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_map_logical(fs, le64toh(sb.log_root), 4096,
					  &phys), 0);
	memset(junk, 0x5a, sizeof(junk));
	ck_assert_int_eq(zdev_write(dev, junk, sizeof(junk), phys, 0,
				    ZDEV_CLASS_OTHER), 0);
	problems = zcow_check(fs, NULL, NULL);
	ck_assert_int_gt(problems, 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = zcow_test_mount_parse(dev, "");
	stats(fs, &st);
	ck_assert(st.log_lost);
	expect_absent(fs, "/x");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_treelog_ro_mount_does_not_replay)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	struct zcow_super_block sb;

	write_file(fs, "/r", 4096, 30, true);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "ro");
	expect_absent(fs, "/r");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	super_on_device(dev, &sb);
	ck_assert_uint_ne(le64toh(sb.log_root), 0);	/* still there */
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/r", 4096, 30);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* Batching: two files join, a third's fsync writes all three in one log
 * write; a clean file has nothing to join. */
START_TEST(test_treelog_join_batches_fsyncs_into_one_log_write)
{
	static const char *const dirs[] = { "/a", "/b", "/c", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	struct zcow_file *fa, *fb, *fc;
	struct zcow_statfs st;
	uint8_t buf[6000];

	write_file(fs, "/a/x", 6000, 60, false);
	write_file(fs, "/b/y", 5000, 61, false);
	write_file(fs, "/c/z", 4000, 62, false);
	ck_assert_int_eq(zcow_open(fs, "/a/x", O_RDWR, &fa), 0);
	ck_assert_int_eq(zcow_open(fs, "/b/y", O_RDWR, &fb), 0);
	ck_assert_int_eq(zcow_open(fs, "/c/z", O_RDWR, &fc), 0);
	ck_assert_int_eq(zcow_fsync_join(fa), 1);
	ck_assert_int_eq(zcow_fsync_join(fb), 1);
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_log_syncs, 0);	/* nothing written yet */
	ck_assert_int_eq(zcow_fsync(fc), 0);
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_log_syncs, 1);
	ck_assert_uint_eq(st.nr_fsyncs, 3);
	ck_assert_int_eq(zcow_fsync_join(fa), 0);	/* logged as it is */
	zcow_test_fill_lcg(buf, sizeof(buf), 63);
	ck_assert_int_eq(zcow_pwrite(fa, buf, 100, 0), 100);
	ck_assert_int_eq(zcow_fsync_join(fa), 1);
	/* treelog=off cannot join: its fsync commits alone. */
	zcow_close(fa);
	zcow_close(fb);
	zcow_close(fc);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/a/x", 6000, 60);	/* the joined, unsynced write
						 * is not durable */
	expect_file(fs, "/b/y", 5000, 61);
	expect_file(fs, "/c/z", 4000, 62);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = zcow_test_mount_parse(dev, "treelog=off");
	write_file(fs, "/a/w", 100, 64, false);
	ck_assert_int_eq(zcow_open(fs, "/a/w", O_RDWR, &fa), 0);
	ck_assert_int_eq(zcow_fsync_join(fa), -EAGAIN);
	zcow_close(fa);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* The log fills its group: the next fsync falls back to a commit, a new
 * group takes over, and the full one, all unusable once a commit drops
 * the log, is removed (its zone reset) and no longer the log's. */
START_TEST(test_treelog_full_group_is_replaced_and_removed)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", NULL);
	uint64_t first = fs->treelog_bg, seen_other = 0;
	struct zcow_statfs st;
	struct zcow_file *f;
	uint8_t buf[4096];
	int n;

	ck_assert_uint_ne(first, 0);
	ck_assert_int_eq(zcow_create(fs, "/g", &f), 0);
	for (n = 0; n < 400; n++) {
		zcow_test_fill_lcg(buf, sizeof(buf), (uint32_t)n);
		ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf),
					     (uint64_t)(n % 64) * 4096),
				 4096);
		ck_assert_int_eq(zcow_fsync(f), 0);
		if (fs->treelog_bg && fs->treelog_bg != first)
			seen_other = fs->treelog_bg;
	}
	zcow_close(f);
	stats(fs, &st);
	ck_assert_uint_gt(st.nr_log_syncs, 300);
	ck_assert_uint_gt(st.nr_log_fallbacks, 0);
	ck_assert_uint_ne(seen_other, 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	/* The first group was filled by log nodes only: removed. */
	ck_assert_ptr_null(zcow_bg_lookup(fs, first));
	ck_assert_uint_ne(fs->treelog_bg, first);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = zcow_test_mount_parse(dev, "");
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

#define NR_THREADS 8
#define FILES_PER_THREAD 12

struct worker {
	struct zcow_fs *fs;
	int id;
	int err;
};

static void *fsync_worker(void *arg)
{
	struct worker *wk = arg;
	uint8_t buf[12288];
	int n;

	for (n = 0; n < FILES_PER_THREAD && !wk->err; n++) {
		struct zcow_file *f = NULL;
		char p[48];
		uint64_t len = 1000 + 997 * (uint64_t)n;

		snprintf(p, sizeof(p), "/t%d/f%d", wk->id, n);
		zcow_test_fill_lcg(buf, len, (uint32_t)(wk->id * 100 + n));
		wk->err = zcow_create(wk->fs, p, &f);
		if (!wk->err && zcow_pwrite(f, buf, len, 0) != (int64_t)len)
			wk->err = -EIO;
		if (!wk->err)
			wk->err = zcow_fsync(f);
		if (f)
			zcow_close(f);
	}
	return NULL;
}

/* Threads create, write and fsync files at once: the fsyncs serialize on
 * the log; after a crash every acknowledged file is back, exactly. */
START_TEST(test_treelog_concurrent_fsyncs)
{
	static const char *const dirs[] = { "/t0", "/t1", "/t2", "/t3", "/t4",
					    "/t5", "/t6", "/t7", NULL };
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = fresh(dev, "", dirs);
	struct worker wk[NR_THREADS];
	pthread_t th[NR_THREADS];
	struct zcow_statfs st;
	int i, n;

	for (i = 0; i < NR_THREADS; i++) {
		wk[i] = (struct worker){ fs, i, 0 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, fsync_worker,
						&wk[i]), 0);
	}
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(wk[i].err, 0);
	}
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_fsyncs, NR_THREADS * FILES_PER_THREAD);
	ck_assert_uint_gt(st.nr_log_syncs, 0);
	zcow_test_assert_clean(fs);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	for (i = 0; i < NR_THREADS; i++)
		for (n = 0; n < FILES_PER_THREAD; n++) {
			char p[48];

			snprintf(p, sizeof(p), "/t%d/f%d", i, n);
			expect_file(fs, p, 1000 + 997 * (uint64_t)n,
				    (uint32_t)(i * 100 + n));
		}
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* ---- fsync while chunks of the running transaction exist ------------- */

/* mkfs, mount with @data_zones slots, /a (@len bytes, pattern 1) written
 * and committed: its data lies in a committed data group. */
static struct zcow_fs *committed_a(struct zdev *dev, int data_zones,
				   uint64_t len)
{
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs;
	char opts[32];

	snprintf(opts, sizeof(opts), "data_zones=%d", data_zones);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	fs = zcow_test_mount_parse(dev, opts);
	write_file(fs, "/a", len, 1, false);
	ck_assert_int_eq(zcow_sync(fs), 0);
	return fs;
}

/* Is a data chunk of the running transaction allocated? */
static bool has_new_data_chunk(struct zcow_fs *fs)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->is_new && (fs->bgs[i]->flags & ZCOW_BG_DATA))
			return true;
	return false;
}

/* The block group of /a's first data block. */
static struct zcow_bg *bg_of_a(struct zcow_fs *fs)
{
	struct zcow_key k = { 0, ZCOW_EXTENT_DATA_KEY, 0 };
	struct zcow_stat st;
	struct zcow_fext fe;
	uint8_t item[64];
	uint32_t len;

	ck_assert_int_eq(zcow_stat(fs, "/a", &st), 0);
	k.objectid = st.ino;
	ck_assert_int_eq(zcow_tree_search(&fs->fs_tree, &k, item,
					  sizeof(item), &len), 0);
	ck_assert_int_eq(zcow_fext_decode(item, len, 0, &fe), 0);
	return zcow_bg_lookup(fs, fe.disk_bytenr);
}

/* After the mount that replayed: /a as fsynced, the rest of the device
 * usable (a zone of the lost chunk is reset before reuse), check clean. */
static void expect_a_and_usable(struct zdev *dev, uint64_t len,
				uint32_t seed)
{
	struct zcow_fs *fs = zcow_test_mount_parse(dev, "");
	struct zcow_statfs st;

	stats(fs, &st);
	ck_assert(!st.log_lost);
	expect_file(fs, "/a", len, seed);
	zcow_test_assert_clean(fs);
	/* More data than the free zones left by the crash hold at once. */
	write_file(fs, "/c", 3 * ZS, 7, true);
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/a", len, seed);
	expect_file(fs, "/c", 3 * ZS, 7);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
}

/*
 * Another file's data opens a data chunk in the running transaction;
 * /a's new data goes to its own, committed group: the fsync is a log
 * write, not a commit, and after a power cut (every loss policy: the new
 * chunk's zone holds written data no committed item names) the mount
 * replays /a exactly.
 */
START_TEST(test_treelog_fsync_beside_a_new_chunk_logs_and_replays)
{
	enum zsim_loss loss;

	for (loss = 0; loss < ZSIM_NR_LOSS; loss++) {
		struct zdev *dev = new_dev(0);
		struct zcow_fs *fs = committed_a(dev, 2, 64 * 1024);
		struct zcow_statfs before, after;
		uint64_t gen = fs->generation;

		write_file(fs, "/b", ZS / 4, 2, false);
		ck_assert(has_new_data_chunk(fs));
		stats(fs, &before);
		write_file(fs, "/a", 64 * 1024, 3, true);
		ck_assert(!bg_of_a(fs)->is_new);
		stats(fs, &after);
		ck_assert_uint_eq(after.nr_log_syncs, before.nr_log_syncs + 1);
		ck_assert_uint_eq(after.nr_log_fallbacks,
				  before.nr_log_fallbacks);
		ck_assert_uint_eq(after.nr_commits, before.nr_commits);
		ck_assert_uint_eq(fs->generation, gen);
		ck_assert(has_new_data_chunk(fs));
		zcow_test_assert_clean(fs);
		crash(fs, loss);
		expect_a_and_usable(dev, 64 * 1024, 3);
		zdev_close(dev);
	}
}
END_TEST

/*
 * /a's new data fills its committed group and runs on into a chunk of the
 * running transaction: the log would reference a group replay cannot
 * map, so the fsync commits (cause new_data_chunk), and the data survives
 * a power cut.
 */
START_TEST(test_treelog_fsync_of_data_in_a_new_chunk_commits)
{
	enum zsim_loss loss;

	for (loss = 0; loss < ZSIM_NR_LOSS; loss++) {
		struct zdev *dev = new_dev(0);
		struct zcow_fs *fs = committed_a(dev, 1, 64 * 1024);
		struct zcow_statfs before, after;
		uint64_t gen = fs->generation;

		stats(fs, &before);
		write_file(fs, "/a", ZS + ZS / 2, 4, true);
		stats(fs, &after);
		ck_assert_uint_eq(after.nr_log_syncs, before.nr_log_syncs);
		ck_assert_uint_eq(after.nr_log_fallbacks,
				  before.nr_log_fallbacks + 1);
		ck_assert_uint_eq(
			after.nr_log_fallbacks_by[ZCOW_LOG_FB_NEW_DATA_CHUNK],
			before.nr_log_fallbacks_by[ZCOW_LOG_FB_NEW_DATA_CHUNK] +
				1);
		ck_assert_uint_gt(fs->generation, gen);
		ck_assert(!has_new_data_chunk(fs));
		crash(fs, loss);
		expect_a_and_usable(dev, ZS + ZS / 2, 4);
		zdev_close(dev);
	}
}
END_TEST

/*
 * A joined fsync whose data lies in a new chunk cannot be logged, and
 * its items stay in the log tree until the commit: a later fsync of a
 * file whose data is committed must not write that log either.
 */
START_TEST(test_treelog_join_of_new_chunk_data_keeps_later_fsyncs_out)
{
	struct zdev *dev = new_dev(0);
	struct zcow_fs *fs = committed_a(dev, 2, 64 * 1024);
	struct zcow_file *fb;
	struct zcow_statfs st;
	uint8_t *buf = malloc(ZS / 4);

	zcow_test_fill_lcg(buf, ZS / 4, 5);
	ck_assert_int_eq(zcow_open(fs, "/b", O_CREAT | O_RDWR, &fb), 0);
	ck_assert_int_eq(zcow_pwrite(fb, buf, ZS / 4, 0), (int64_t)(ZS / 4));
	ck_assert(has_new_data_chunk(fs));
	ck_assert_int_eq(zcow_fsync_join(fb), -EAGAIN);
	write_file(fs, "/a", 64 * 1024, 6, true);
	stats(fs, &st);
	ck_assert_uint_eq(st.nr_log_syncs, 0);
	ck_assert_uint_eq(st.nr_log_fallbacks, 1);
	ck_assert_uint_eq(st.nr_log_fallbacks_by[ZCOW_LOG_FB_NEW_DATA_CHUNK],
			  1);
	zcow_close(fb);
	crash(fs, ZSIM_LOSS_DROP);
	fs = zcow_test_mount_parse(dev, "");
	expect_file(fs, "/a", 64 * 1024, 6);
	expect_file(fs, "/b", ZS / 4, 5);	/* the commit took it */
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

/* ---- files logged by their changed extents ---------------------------- */

#define BIG_BLOCKS 1536		/* /big: 6 MiB in 1536 extents of 4 KiB */

/* /big written block by block (one extent each) and committed; its
 * model in @model. */
static struct zcow_fs *committed_big(struct zdev *dev, uint8_t *model)
{
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_file *f;
	struct zcow_fs *fs;
	uint64_t b;

	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	fs = zcow_test_mount_parse(dev, "data_zones=1");
	zcow_test_fill_lcg(model, BIG_BLOCKS * 4096ULL, 50);
	ck_assert_int_eq(zcow_open(fs, "/big", O_CREAT | O_RDWR, &f), 0);
	for (b = 0; b < BIG_BLOCKS; b++)
		ck_assert_int_eq(zcow_pwrite(f, model + b * 4096, 4096,
					     b * 4096), 4096);
	zcow_close(f);
	ck_assert_int_eq(zcow_sync(fs), 0);
	return fs;
}

/* Write @len bytes of pattern @seed at @off of /big and into @model. */
static void big_write(struct zcow_fs *fs, uint8_t *model, uint64_t off,
		      uint64_t len, uint32_t seed)
{
	struct zcow_file *f;

	zcow_test_fill_lcg(model + off, len, seed);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, model + off, len, off), (int64_t)len);
	zcow_close(f);
}

static void expect_model(struct zcow_fs *fs, const char *path,
			 const uint8_t *model, uint64_t len)
{
	uint8_t *got = malloc(len + 1);
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pread(f, got, len + 1, 0), (int64_t)len);
	ck_assert_msg(!memcmp(got, model, len), "%s: contents differ", path);
	zcow_close(f);
	free(got);
}

/*
 * A few blocks overwritten in a large committed file: the fsync logs the
 * extents of what was written, not every extent of the file (a log of a
 * few nodes, not the dozens /big's 1536 extent items fill), and replay
 * puts exactly those in place: partial overwrites of committed extents,
 * a range written twice, neighbours written apart, a write past the end;
 * two fsyncs in one transaction; writes after the last fsync are not
 * replayed.  Every loss policy.
 */
START_TEST(test_treelog_file_logged_by_its_written_ranges)
{
	const uint64_t size = BIG_BLOCKS * 4096ULL;
	enum zsim_loss loss;

	for (loss = 0; loss < ZSIM_NR_LOSS; loss++) {
		struct zdev *dev = new_dev(0);
		uint8_t *model = malloc(size + 64 * 1024);
		uint8_t *synced = malloc(size + 64 * 1024);
		struct zcow_fs *fs = committed_big(dev, model);
		struct zdev_stats before, after;
		struct zcow_statfs st;
		uint64_t gen = fs->generation, log_bytes;

		zdev_get_stats(dev, &before);
		big_write(fs, model, 7 * 4096, 4096, 60);
		big_write(fs, model, 100 * 4096 + 512, 3000, 61);
		big_write(fs, model, 300 * 4096, 3 * 4096, 62);
		big_write(fs, model, 301 * 4096, 4096, 63);
		fsync_path(fs, "/big");
		zdev_get_stats(dev, &after);
		log_bytes = after.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE] -
			    before.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE];
		ck_assert_msg(log_bytes <= 4 * fs->nodesize,
			      "log of %llu bytes",
			      (unsigned long long)log_bytes);
		big_write(fs, model, 8 * 4096, 2 * 4096, 64);
		big_write(fs, model, 301 * 4096 + 100, 50, 65);
		big_write(fs, model, size, 40000, 66);
		fsync_path(fs, "/big");
		stats(fs, &st);
		ck_assert_uint_eq(st.nr_log_syncs, 2);
		ck_assert_uint_eq(st.nr_log_fallbacks, 0);
		ck_assert_uint_eq(fs->generation, gen);
		memcpy(synced, model, size + 40000);
		big_write(fs, model, 200 * 4096, 4096, 67);	/* unsynced */
		zcow_test_assert_clean(fs);
		crash(fs, loss);
		fs = zcow_test_mount_parse(dev, "");
		stats(fs, &st);
		ck_assert(!st.log_lost);
		expect_model(fs, "/big", synced, size + 40000);
		zcow_test_assert_clean(fs);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		fs = zcow_test_mount_parse(dev, "");
		expect_model(fs, "/big", synced, size + 40000);
		zcow_test_assert_clean(fs);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
		free(model);
		free(synced);
	}
}
END_TEST

/*
 * A truncate makes the next log hold every extent of the file (the log
 * replaces the file whole: a range the truncate emptied must not keep
 * committed extents); writes after it keep that log whole.  And writes
 * logged by their ranges, then a truncate: the file logged whole.
 */
START_TEST(test_treelog_truncate_logs_the_file_whole)
{
	const uint64_t size = BIG_BLOCKS * 4096ULL;
	int order;

	for (order = 0; order < 2; order++) {
		struct zdev *dev = new_dev(0);
		uint8_t *model = malloc(size);
		struct zcow_fs *fs = committed_big(dev, model);
		struct zcow_file *f;
		struct zcow_statfs st;

		if (order) {
			big_write(fs, model, 5 * 4096, 4096, 70);
			fsync_path(fs, "/big");
		}
		ck_assert_int_eq(zcow_open(fs, "/big", O_RDWR, &f), 0);
		ck_assert_int_eq(zcow_truncate(f, 10 * 4096), 0);
		ck_assert_int_eq(zcow_truncate(f, 40 * 4096), 0);
		zcow_close(f);
		memset(model + 10 * 4096, 0, 30 * 4096);
		fsync_path(fs, "/big");
		big_write(fs, model, 20 * 4096, 4096, 71);
		big_write(fs, model, 2 * 4096, 4096, 72);
		fsync_path(fs, "/big");
		stats(fs, &st);
		ck_assert_uint_eq(st.nr_log_fallbacks, 0);
		crash(fs, ZSIM_LOSS_DROP);
		fs = zcow_test_mount_parse(dev, "");
		expect_model(fs, "/big", model, 40 * 4096);
		zcow_test_assert_clean(fs);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
		free(model);
	}
}
END_TEST

/* Empty data groups no slot holds. */
static int nr_empty_data_groups(struct zcow_fs *fs)
{
	uint64_t i;
	int n = 0;

	for (i = 0; i < fs->nr_bgs; i++)
		if ((fs->bgs[i]->flags & ZCOW_BG_DATA) &&
		    !fs->bgs[i]->alloc_offset &&
		    fs->bgs[i]->start != fs->files->data_active[0])
			n++;
	return n;
}

/*
 * Once fsyncs use the log, one data chunk is kept allocated ahead of the
 * slot (one, not one per write, on sequential and conventional zones
 * alike), so that after a commit the slot's next group is committed: an
 * fsync whose data runs on into it is logged, and replays.
 */
START_TEST(test_treelog_data_chunk_kept_committed_ahead)
{
	uint64_t nr_conv;

	for (nr_conv = 0; nr_conv <= 32; nr_conv += 32) {
		struct zdev *dev = new_dev(nr_conv);
		struct zcow_fs *fs = committed_a(dev, 1, 64 * 1024);
		uint8_t *model = malloc(ZS + 128 * 1024);
		struct zcow_statfs before, after;
		struct zcow_file *f;

		zcow_test_fill_lcg(model, 64 * 1024, 1);
		write_file(fs, "/a", 64 * 1024, 1, true);	/* the log */
		zcow_test_fill_lcg(model + 64 * 1024, 64 * 1024, 2);
		ck_assert_int_eq(zcow_open(fs, "/a", O_RDWR, &f), 0);
		ck_assert_int_eq(zcow_pwrite(f, model + 64 * 1024, 64 * 1024,
					     64 * 1024), 64 * 1024);
		ck_assert_int_eq(nr_empty_data_groups(fs), 1);
		ck_assert_int_eq(zcow_sync(fs), 0);	/* commits it */
		stats(fs, &before);
		zcow_test_fill_lcg(model + 128 * 1024, ZS, 3);
		ck_assert_int_eq(zcow_pwrite(f, model + 128 * 1024, ZS,
					     128 * 1024), (int64_t)ZS);
		ck_assert_int_eq(zcow_fsync(f), 0);
		zcow_close(f);
		stats(fs, &after);
		ck_assert_uint_eq(after.nr_log_fallbacks,
				  before.nr_log_fallbacks);
		ck_assert_uint_eq(after.nr_log_syncs, before.nr_log_syncs + 1);
		ck_assert_int_le(nr_empty_data_groups(fs), 1);
		crash(fs, ZSIM_LOSS_DROP);
		fs = zcow_test_mount_parse(dev, "");
		expect_model(fs, "/a", model, ZS + 128 * 1024);
		zcow_test_assert_clean(fs);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
		free(model);
	}
}
END_TEST

Suite *tree_log_suite(void)
{
	Suite *s = suite_create("tree_log");
	TCase *tc = tcase_create("treelog");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_treelog_fsync_writes_log_not_commit_and_replays);
	tcase_add_test(tc, test_treelog_off_commits_at_fsync);
	tcase_add_test(tc, test_treelog_only_what_fsync_needs_is_logged);
	tcase_add_test(tc, test_treelog_rename_then_fsync_moves_the_name);
	tcase_add_test(tc, test_treelog_unlink_then_fsync_dir_deletes);
	tcase_add_test(tc, test_treelog_replay_in_the_root_dir_keeps_a_snapshot_entry);
	tcase_add_test(tc, test_treelog_fsync_under_a_renamed_dir);
	tcase_add_test(tc, test_treelog_same_size_overwrite_is_logged_again);
	tcase_add_test(tc, test_treelog_dedicated_block_group);
	tcase_add_test(tc, test_treelog_corrupt_log_is_reported_lost);
	tcase_add_test(tc, test_treelog_drop_item_mutation_loses_data);
	tcase_add_test(tc, test_treelog_cut_during_replay_recovers);
	tcase_add_test(tc, test_treelog_emulated_zones_replay);
	tcase_add_test(tc, test_treelog_replay_keeps_a_full_group_it_references);
	tcase_add_test(tc, test_treelog_check_and_mount_find_a_damaged_log);
	tcase_add_test(tc, test_treelog_ro_mount_does_not_replay);
	tcase_add_test(tc, test_treelog_concurrent_fsyncs);
	tcase_add_test(tc, test_treelog_full_group_is_replaced_and_removed);
	tcase_add_test(tc, test_treelog_join_batches_fsyncs_into_one_log_write);
	tcase_add_test(tc, test_treelog_big_dir_logs_only_changed_entries);
	tcase_add_test(tc, test_treelog_big_dir_changes_replay_exactly);
	tcase_add_test(tc, test_treelog_fsync_beside_a_new_chunk_logs_and_replays);
	tcase_add_test(tc, test_treelog_fsync_of_data_in_a_new_chunk_commits);
	tcase_add_test(tc, test_treelog_join_of_new_chunk_data_keeps_later_fsyncs_out);
	tcase_add_test(tc, test_treelog_file_logged_by_its_written_ranges);
	tcase_add_test(tc, test_treelog_truncate_logs_the_file_whole);
	tcase_add_test(tc, test_treelog_data_chunk_kept_committed_ahead);
	suite_add_tcase(s, tc);
	return s;
}
