// SPDX-License-Identifier: MIT
/*
 * The zoned space policy (core/zoned.c): the data slots keep their own
 * groups, data leaves the last free zones to metadata, the submission
 * mode follows the zone type and the mount.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "tests.h"
#include "zcow.h"
#include "zoned.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zcow_fs *sim_fs(uint64_t nr_zones,
			      const struct zcow_mount_opts *opts)
{
	struct zsim_config cfg = {
		.nr_zones = nr_zones, .zone_size = ZS, .seed = 11,
		.max_append = 64 * 1024,
	};
	struct zcow_mkfs_opts mo = { .seed = 2 };
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, opts, &fs), 0);
	return fs;
}

static void sim_fs_close(struct zcow_fs *fs)
{
	struct zdev *dev = fs->dev;

	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}

/*
 * data_zones=2: inode I writes to slot I % 2.  Each slot gets a group of
 * its own (a second one is opened rather than sharing the first), and
 * keeps it while it has room.
 */
START_TEST(test_zoned_each_data_slot_keeps_its_own_group)
{
	struct zcow_mount_opts mo = { .data_zones = 2 };
	struct zcow_fs *fs = sim_fs(32, &mo);
	struct zcow_bg *a, *b, *bg;

	ck_assert_uint_eq(fs->files->data_zones, 2);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 256, 4096, &a), 0);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 257, 4096, &b), 0);
	ck_assert_ptr_ne(a, b);
	ck_assert(a->flags & ZCOW_BG_DATA);
	ck_assert(b->flags & ZCOW_BG_DATA);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 258, 4096, &bg), 0);
	ck_assert_ptr_eq(bg, a);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 259, 4096, &bg), 0);
	ck_assert_ptr_eq(bg, b);
	/* Sequential zones, zone append on: data goes by Zone Append. */
	ck_assert(zcow_zoned_use_append(fs, a));
	pthread_mutex_unlock(&fs->files->lock);
	sim_fs_close(fs);
}
END_TEST

/* zone_append=off: plain writes at the write pointer. */
START_TEST(test_zoned_no_zone_append_mount_writes_plain)
{
	struct zcow_mount_opts mo = { .no_zone_append = true };
	struct zcow_fs *fs = sim_fs(32, &mo);
	struct zcow_bg *bg;

	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 256, 4096, &bg), 0);
	ck_assert(bg->is_seq);
	ck_assert(!zcow_zoned_use_append(fs, bg));
	pthread_mutex_unlock(&fs->files->lock);
	sim_fs_close(fs);
}
END_TEST

/*
 * Filling the fs with data stops with ENOSPC while two zones are still
 * free: they are the commit's, for metadata, so that creating a file
 * (and the commit after it) still works.
 */
START_TEST(test_zoned_data_leaves_the_last_two_free_zones_to_metadata)
{
	struct zcow_fs *fs = sim_fs(32, NULL);
	uint8_t *buf = malloc(MiB);
	struct zcow_file *f;
	uint64_t off = 0;
	int64_t n;

	memset(buf, 0x6b, MiB);
	ck_assert_int_eq(zcow_create(fs, "/fill", &f), 0);
	while ((n = zcow_pwrite(f, buf, MiB, off)) > 0)
		off += MiB;
	ck_assert_int_eq(n, -ENOSPC);
	zcow_close(f);
	ck_assert_uint_gt(off, 16 * MiB);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_zoned_nr_free_zones(fs), 2);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_create(fs, "/after", &f), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_sync(fs), 0);
	sim_fs_close(fs);
	free(buf);
}
END_TEST

Suite *zoned_suite(void)
{
	Suite *s = suite_create("zoned_suite");
	TCase *tc = tcase_create("zoned");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_zoned_each_data_slot_keeps_its_own_group);
	tcase_add_test(tc, test_zoned_no_zone_append_mount_writes_plain);
	tcase_add_test(tc,
		       test_zoned_data_leaves_the_last_two_free_zones_to_metadata);
	suite_add_tcase(s, tc);
	return s;
}
