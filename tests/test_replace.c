// SPDX-License-Identifier: MIT
/*
 * Device replace on zoned devices (seeds 008, 009): core/replace.c.  The
 * to_copy marking, clones only into copied groups, the zero fill that
 * levels write pointers, data, metadata and tree-log groups, conventional
 * zones, refusals, and a replace cut by a power failure.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "fs.h"
#include "zlog.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zdev *new_sim_cfg(uint64_t nr_zones, uint64_t zs,
				uint64_t nr_conv)
{
	struct zsim_config cfg = { .nr_zones = nr_zones, .zone_size = zs,
				   .nr_conv = nr_conv, .seed = 5 };

	return zcow_test_sim(&cfg);
}

static struct zdev *new_sim(uint64_t nr_zones)
{
	return new_sim_cfg(nr_zones, ZS, 0);
}

static void put_n(struct zcow_fs *fs, int first, int n, uint64_t size)
{
	zcow_test_files(fs, first, n, size, true);
}

static void expect_n(struct zcow_fs *fs, int first, int n, uint64_t size)
{
	zcow_test_files(fs, first, n, size, false);
}

/* A file system on @src whose data goes to one group (no zone append),
 * holding file 0 (1 MiB, committed): that group. */
static struct zcow_bg *one_data_group(struct zdev *src, struct zcow_fs **fs)
{
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_mount_opts mnt = { .no_zone_append = true,
				       .data_zones = 1 };
	struct zcow_bg *data = NULL;
	uint64_t i;

	ck_assert_int_eq(zcow_mkfs(src, &mo), 0);
	ck_assert_int_eq(zcow_mount(src, &mnt, fs), 0);
	put_n(*fs, 0, 1, 1 * MiB);
	ck_assert_int_eq(zcow_sync(*fs), 0);
	for (i = 0; i < (*fs)->nr_bgs; i++)
		if (((*fs)->bgs[i]->flags & ZCOW_BG_DATA) &&
		    (*fs)->bgs[i]->used)
			data = (*fs)->bgs[i];
	ck_assert_ptr_nonnull(data);
	return data;
}

/* A zone's write pointer from its start (full: its capacity). */
static uint64_t wp_of(struct zdev *dev, uint64_t zone)
{
	struct zdev_zone z;

	ck_assert_int_eq(zdev_report_zone(dev, zone, &z), 0);
	return z.cond == ZDEV_COND_FULL ? z.capacity : z.wp - z.start;
}

/* Every sequential group of devid @devid: the same write pointer on @a
 * and @b. */
static void assert_level(struct zcow_fs *fs, uint64_t devid, struct zdev *a,
			 struct zdev *b)
{
	uint64_t i, n = 0;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (bg->devid != devid || !bg->is_seq || bg->is_deleted)
			continue;
		ck_assert_msg(wp_of(a, bg->physical) == wp_of(b, bg->physical),
			      "group %llu: write pointers %llu and %llu",
			      (unsigned long long)bg->start,
			      (unsigned long long)wp_of(a, bg->physical),
			      (unsigned long long)wp_of(b, bg->physical));
		n++;
	}
	ck_assert_uint_gt(n, 0);
}

static uint64_t nr_to_copy(struct zcow_fs *fs)
{
	uint64_t i, n = 0;

	for (i = 0; i < fs->nr_bgs; i++)
		n += fs->bgs[i]->to_copy;
	return n;
}

START_TEST(test_replace_marks_groups_on_the_source)
{
	struct zdev *devs[2] = { new_sim(24), new_sim(24) };
	struct zdev *tgt = new_sim(24);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;
	uint64_t i, on2 = 0;

	ck_assert_int_eq(zcow_mkfs_devs(devs, 2, &mo), 0);
	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), 0);
	put_n(fs, 0, 6, 2 * MiB);
	ck_assert_int_eq(zcow_replace_start(fs, 2, tgt), 0);
	for (i = 0; i < fs->nr_bgs; i++) {
		ck_assert_int_eq(fs->bgs[i]->to_copy, fs->bgs[i]->devid == 2);
		on2 += fs->bgs[i]->devid == 2;
	}
	ck_assert_uint_gt(on2, 0);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_STARTED);
	ck_assert_uint_eq(st.src_devid, 2);
	ck_assert_uint_eq(st.nr_to_copy, on2);
	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), -EBUSY);
	ck_assert_int_eq(zcow_replace_cancel(fs), 0);
	ck_assert_uint_eq(nr_to_copy(fs), 0);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_CANCELED);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	/* the canceled state is on disk; the fs is still the two devices */
	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), 0);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_CANCELED);
	expect_n(fs, 0, 6, 2 * MiB);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
	zdev_close(tgt);
}
END_TEST

START_TEST(test_replace_clones_only_copied_groups)
{
	struct zdev *src = new_sim(24), *tgt = new_sim(24);
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;
	struct zcow_bg *data = NULL;
	uint64_t before;
	bool done = false;

	data = one_data_group(src, &fs);
	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), 0);
	ck_assert(data->to_copy);
	/* a write into a group not copied yet: the source only */
	put_n(fs, 1, 1, 256 * 1024);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_uint_eq(st.bytes_cloned, 0);
	ck_assert_uint_eq(wp_of(tgt, data->physical), 0);
	/* copy everything; the group's writes are cloned from now on */
	while (!done)
		ck_assert_int_eq(zcow_replace_step(fs, 0, &done), 0);
	ck_assert(!data->to_copy);
	ck_assert_uint_eq(wp_of(tgt, data->physical),
			  wp_of(src, data->physical));
	before = wp_of(src, data->physical);
	put_n(fs, 2, 1, 256 * 1024);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_uint_gt(wp_of(src, data->physical), before);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_uint_ge(st.bytes_cloned, 256 * 1024);
	ck_assert_uint_eq(wp_of(tgt, data->physical),
			  wp_of(src, data->physical));
	assert_level(fs, 1, src, tgt);
	ck_assert_int_eq(zcow_replace_finish(fs), 0);
	expect_n(fs, 0, 1, 1 * MiB);
	expect_n(fs, 1, 2, 256 * 1024);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(src);
	zdev_close(tgt);
}
END_TEST

START_TEST(test_replace_zero_fill_levels_a_freed_tail)
{
	struct zdev *src = new_sim(24), *tgt = new_sim(24);
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;
	struct zcow_bg *data = NULL;
	uint8_t *got = malloc(MiB), *zero = calloc(1, MiB);
	uint64_t wp, b_off;

	data = one_data_group(src, &fs);	/* file A */
	b_off = data->alloc_offset;
	put_n(fs, 1, 1, 1 * MiB);	/* B: the group's last extent */
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_uint_eq(data->alloc_offset, b_off + MiB);
	ck_assert_int_eq(zcow_unlink(fs, "/f1"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	wp = wp_of(src, data->physical);
	ck_assert_uint_eq(wp, b_off + MiB);

	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), 0);
	ck_assert_int_eq(zcow_replace_finish(fs), 0);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_FINISHED);
	ck_assert_uint_ge(st.bytes_zeroed, MiB);
	/* the target's write pointer is the source's, B's bytes are zeroes
	 * there (not copied), A's bytes are A's */
	ck_assert_uint_ge(wp_of(tgt, data->physical), wp);
	ck_assert_int_eq(zdev_read(tgt, got, MiB, data->physical + b_off,
				   ZDEV_CLASS_OTHER), 0);
	ck_assert_mem_eq(got, zero, MiB);
	ck_assert_int_eq(zdev_read(src, got, MiB, data->physical + b_off,
				   ZDEV_CLASS_OTHER), 0);
	ck_assert(memcmp(got, zero, MiB) != 0);
	expect_n(fs, 0, 1, 1 * MiB);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	free(got);
	free(zero);
	zdev_close(src);
	zdev_close(tgt);
}
END_TEST

/* Data, metadata and a tree-log group, replaced while files are written;
 * the target alone is the file system afterwards. */
static void replace_while_writing(uint64_t nr_conv)
{
	struct zdev *src = new_sim_cfg(32, ZS, nr_conv);
	struct zdev *tgt = new_sim_cfg(32, ZS, nr_conv);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;
	struct zcow_file *f;
	bool done = false;
	uint64_t log_bg;
	int round = 0;

	ck_assert_int_eq(zcow_mkfs(src, &mo), 0);
	ck_assert_int_eq(zcow_mount(src, NULL, &fs), 0);
	put_n(fs, 0, 10, 1 * MiB);
	/* an fsync: the tree-log group gets written */
	ck_assert_int_eq(zcow_open(fs, "/f0", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_fsync(f), 0);
	ck_assert_int_eq(zcow_close(f), 0);
	log_bg = fs->treelog_bg;
	ck_assert_uint_ne(log_bg, 0);
	ck_assert_int_eq(zcow_unlink(fs, "/f3"), 0);

	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), 0);
	while (!done) {
		ck_assert_int_eq(zcow_replace_step(fs, 0, &done), 0);
		/* the workload goes on: new files, an overwrite, fsyncs */
		put_n(fs, 100 + round, 1, 512 * 1024);
		put_n(fs, 5, 1, 1 * MiB);
		ck_assert_int_eq(zcow_open(fs, "/f5", O_RDWR, &f), 0);
		ck_assert_int_eq(zcow_fsync(f), 0);
		ck_assert_int_eq(zcow_close(f), 0);
		round++;
	}
	ck_assert_uint_gt(round, 3);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_uint_eq(st.nr_copied, st.nr_to_copy);
	ck_assert_uint_gt(st.bytes_copied, 8 * MiB);
	ck_assert_uint_gt(st.bytes_cloned, 0);
	assert_level(fs, 1, src, tgt);
	ck_assert_int_eq(zcow_replace_finish(fs), 0);
	ck_assert_ptr_eq(fs->devs[0].zdev, tgt);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);

	/* the old device no longer mounts; the new one alone is the fs */
	ck_assert_int_eq(zcow_mount(src, NULL, &fs), -ENOENT);
	ck_assert_int_eq(zcow_mount(tgt, NULL, &fs), 0);
	expect_n(fs, 0, 3, 1 * MiB);
	expect_n(fs, 4, 6, 1 * MiB);
	expect_n(fs, 100, round, 512 * 1024);
	ck_assert_int_eq(zcow_open(fs, "/f3", O_RDONLY, &f), -ENOENT);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_FINISHED);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(src);
	zdev_close(tgt);
}

START_TEST(test_replace_while_writing_data_meta_log)
{
	replace_while_writing(0);
}
END_TEST

START_TEST(test_replace_with_conventional_zones)
{
	replace_while_writing(8);
}
END_TEST

START_TEST(test_replace_refuses_other_zone_size_and_small_target)
{
	struct zdev *src = new_sim(24), *big = new_sim_cfg(24, 2 * ZS, 0);
	struct zdev *small = new_sim(20);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mkfs(src, &mo), 0);
	ck_assert_int_eq(zcow_mount(src, NULL, &fs), 0);
	ck_assert_int_eq(zcow_replace_start(fs, 1, big), -EINVAL);
	ck_assert_int_eq(zcow_replace_start(fs, 1, small), -EINVAL);
	ck_assert_int_eq(zcow_replace_start(fs, 1, src), -EINVAL);
	ck_assert_int_eq(zcow_replace_start(fs, 7, small), -ENOENT);
	/* a target whose zones hold less than the source's: refused at the
	 * start (it failed mid-copy with EIO) */
	{
		struct zsim_config cfg = { .nr_zones = 24, .zone_size = ZS,
					   .zone_capacity = ZS / 2,
					   .seed = 5 };
		struct zdev *short_cap = NULL;

		ck_assert_int_eq(zsim_create(&cfg, &short_cap), 0);
		ck_assert_int_eq(zcow_replace_start(fs, 1, short_cap),
				 -EINVAL);
		zdev_close(short_cap);
	}
	ck_assert_ptr_null(fs->replace);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_NEVER_STARTED);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(src);
	zdev_close(big);
	zdev_close(small);
}
END_TEST

START_TEST(test_replace_cut_by_power_is_cancelled_at_mount)
{
	struct zdev *src = new_sim(32), *tgt = new_sim(32);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;
	bool done = false;

	ck_assert_int_eq(zcow_mkfs(src, &mo), 0);
	ck_assert_int_eq(zcow_mount(src, NULL, &fs), 0);
	put_n(fs, 0, 8, 1 * MiB);
	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), 0);
	ck_assert_int_eq(zcow_replace_step(fs, 0, &done), 0);
	ck_assert_int_eq(zcow_replace_step(fs, 0, &done), 0);
	ck_assert(!done);
	put_n(fs, 8, 2, 1 * MiB);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zsim_cut_now(zsim_from_dev(src), ZSIM_LOSS_DROP, 1),
			 0);
	ck_assert_int_eq(zsim_cut_now(zsim_from_dev(tgt), ZSIM_LOSS_DROP, 1),
			 0);
	zcow_unmount(fs);	/* fails: the power is off */
	ck_assert_int_eq(zsim_power_cycle(zsim_from_dev(src)), 0);
	ck_assert_int_eq(zsim_power_cycle(zsim_from_dev(tgt)), 0);

	/* the target never became part of the fs */
	ck_assert_int_eq(zcow_mount(tgt, NULL, &fs), -ENOENT);
	ck_assert_int_eq(zcow_mount(src, NULL, &fs), 0);
	ck_assert_int_eq(zcow_replace_status(fs, &st), 0);
	ck_assert_int_eq(st.state, ZCOW_REPLACE_CANCELED);
	ck_assert_uint_eq(st.src_devid, 1);
	ck_assert_ptr_null(fs->replace);
	ck_assert_uint_eq(nr_to_copy(fs), 0);
	expect_n(fs, 0, 10, 1 * MiB);
	zcow_test_assert_clean(fs);
	/* and a new replace runs to the end */
	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), 0);
	ck_assert_int_eq(zcow_replace_finish(fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(tgt, NULL, &fs), 0);
	expect_n(fs, 0, 10, 1 * MiB);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(src);
	zdev_close(tgt);
}
END_TEST

START_TEST(test_replace_one_of_two_devices)
{
	struct zdev *devs[2] = { new_sim(24), new_sim(24) };
	struct zdev *tgt = new_sim(24), *now[2];
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mkfs_devs(devs, 2, &mo), 0);
	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), 0);
	put_n(fs, 0, 12, 1 * MiB);
	ck_assert_int_eq(zcow_replace_start(fs, 2, tgt), 0);
	put_n(fs, 12, 4, 1 * MiB);
	ck_assert_int_eq(zcow_replace_finish(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	now[0] = devs[0];
	now[1] = tgt;
	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), -ENOENT);
	ck_assert_int_eq(zcow_mount_devs(now, 2, NULL, &fs), 0);
	ck_assert_uint_eq(fs->devs[1].devid, 2);
	ck_assert_ptr_eq(fs->devs[1].zdev, tgt);
	expect_n(fs, 0, 16, 1 * MiB);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
	zdev_close(tgt);
}
END_TEST

struct writer {
	struct zcow_fs *fs;
	volatile int stop;
	int rounds;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct zcow_file *f;

	while (!w->stop || w->rounds < 6) {
		put_n(w->fs, 200 + w->rounds % 6, 1, 256 * 1024);
		ck_assert_int_eq(zcow_open(w->fs, "/f0", O_RDWR, &f), 0);
		ck_assert_int_eq(zcow_fsync(f), 0);
		ck_assert_int_eq(zcow_close(f), 0);
		w->rounds++;
	}
	return NULL;
}

/* The replace in one thread while another writes and fsyncs: clones,
 * frozen groups and pieces copied without the lock, then the target
 * alone holds every file. */
START_TEST(test_replace_while_another_thread_writes)
{
	struct zdev *src = new_sim(40), *tgt = new_sim(40);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;
	struct writer w = { 0 };
	pthread_t th;
	bool done = false;

	ck_assert_int_eq(zcow_mkfs(src, &mo), 0);
	ck_assert_int_eq(zcow_mount(src, NULL, &fs), 0);
	put_n(fs, 0, 12, 1 * MiB);
	w.fs = fs;
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &w), 0);
	ck_assert_int_eq(zcow_replace_start(fs, 1, tgt), 0);
	while (!done)
		ck_assert_int_eq(zcow_replace_step(fs, 256 * 1024, &done), 0);
	ck_assert_int_eq(zcow_replace_finish(fs), 0);
	w.stop = 1;
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(tgt, NULL, &fs), 0);
	expect_n(fs, 0, 12, 1 * MiB);
	/* each name is always written with the same bytes */
	ck_assert_int_ge(w.rounds, 6);
	expect_n(fs, 200, 6, 256 * 1024);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(src);
	zdev_close(tgt);
}
END_TEST

Suite *replace_suite(void)
{
	Suite *s = suite_create("replace");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_replace_marks_groups_on_the_source);
	tcase_add_test(tc, test_replace_clones_only_copied_groups);
	tcase_add_test(tc, test_replace_zero_fill_levels_a_freed_tail);
	tcase_add_test(tc, test_replace_while_writing_data_meta_log);
	tcase_add_test(tc, test_replace_with_conventional_zones);
	tcase_add_test(tc, test_replace_refuses_other_zone_size_and_small_target);
	tcase_add_test(tc, test_replace_cut_by_power_is_cancelled_at_mount);
	tcase_add_test(tc, test_replace_one_of_two_devices);
	tcase_add_test(tc, test_replace_while_another_thread_writes);
	suite_add_tcase(s, tc);
	return s;
}
