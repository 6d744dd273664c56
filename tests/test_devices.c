// SPDX-License-Identifier: MIT
/*
 * Several devices in one file system: mkfs and mount on a device list,
 * device items and extents, chunks spread by free space, the refusals
 * (zone sizes, zoned mix, missing device, another fs's device).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "fs.h"
#include "zlog.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zdev *new_sim_zs(uint64_t nr_zones, uint64_t zs)
{
	struct zsim_config cfg = { .nr_zones = nr_zones, .zone_size = zs,
				   .seed = 5 };

	return zcow_test_sim(&cfg);
}

static struct zdev *new_sim(uint64_t nr_zones)
{
	return new_sim_zs(nr_zones, ZS);
}

/* Groups of @fs on devid @devid. */
static uint64_t groups_on(struct zcow_fs *fs, uint64_t devid)
{
	uint64_t i, n = 0;

	for (i = 0; i < fs->nr_bgs; i++)
		n += fs->bgs[i]->devid == devid;
	return n;
}

START_TEST(test_devices_mkfs_two_mount_read_back)
{
	struct zdev *devs[2] = { new_sim(32), new_sim(32) }, *rev[2];
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_super_block sb;
	struct zcow_sb_copy found;
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mkfs_devs(devs, 2, &mo), 0);
	/* each device's superblock names itself, with one fsid */
	ck_assert_int_eq(zcow_sb_read_latest(devs[0], &sb, &found), 0);
	ck_assert_uint_eq(le64toh(sb.num_devices), 2);
	ck_assert_uint_eq(le64toh(sb.dev_item.devid), 1);
	ck_assert_uint_eq(le64toh(sb.total_bytes), 2 * 32 * ZS);
	ck_assert_int_eq(zcow_sb_read_latest(devs[1], &sb, &found), 0);
	ck_assert_uint_eq(le64toh(sb.dev_item.devid), 2);
	ck_assert_uint_eq(le64toh(sb.num_devices), 2);

	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), 0);
	ck_assert_uint_eq(fs->nr_devs, 2);
	zcow_test_files(fs, 0, 8, 3 * MiB, true);
	ck_assert_int_eq(zcow_commit(fs), 0);
	/* the single profile spreads chunks: both devices hold groups */
	ck_assert_uint_gt(groups_on(fs, 1), 2);
	ck_assert_uint_gt(groups_on(fs, 2), 2);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);

	/* any order of the devices mounts */
	rev[0] = devs[1];
	rev[1] = devs[0];
	ck_assert_int_eq(zcow_mount_devs(rev, 2, NULL, &fs), 0);
	ck_assert_uint_eq(fs->devs[0].devid, 1);
	ck_assert_ptr_eq(fs->devs[0].zdev, devs[0]);
	zcow_test_files(fs, 0, 8, 3 * MiB, false);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
}
END_TEST

START_TEST(test_devices_chunks_go_to_most_free_space)
{
	struct zdev *devs[2] = { new_sim(24), new_sim(48) };
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;
	struct zcow_bg *bg;
	uint64_t free1, free2;
	int i;

	ck_assert_int_eq(zcow_mkfs_devs(devs, 2, &mo), 0);
	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), 0);
	/* every new chunk lands on the device with more free bytes */
	for (i = 0; i < 20; i++) {
		free1 = zcow_device_free_bytes(fs, &fs->devs[0]);
		free2 = zcow_device_free_bytes(fs, &fs->devs[1]);
		ck_assert_int_eq(zcow_chunk_alloc(fs, ZCOW_BG_DATA, &bg), 0);
		ck_assert_uint_eq(bg->devid, free1 >= free2 ? 1 : 2);
	}
	/* the larger device took the first ones */
	ck_assert_uint_gt(groups_on(fs, 2), groups_on(fs, 1));
	ck_assert_int_eq(zcow_commit(fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
}
END_TEST

START_TEST(test_devices_missing_device_refused)
{
	struct zdev *devs[3] = { new_sim(24), new_sim(24), new_sim(24) };
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;
	struct zdev *two[2] = { devs[0], devs[2] };

	ck_assert_int_eq(zcow_mkfs_devs(devs, 3, &mo), 0);
	ck_assert_int_eq(zcow_mount_devs(two, 2, NULL, &fs), -ENODEV);
	ck_assert_ptr_null(fs);
	ck_assert_int_eq(zcow_mount(devs[1], NULL, &fs), -ENODEV);
	ck_assert_ptr_null(fs);
	/* all three: fine, and nothing was written by the refusals */
	ck_assert_int_eq(zcow_mount_devs(devs, 3, NULL, &fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
	zdev_close(devs[2]);
}
END_TEST

START_TEST(test_devices_other_fs_refused)
{
	struct zdev *a[2] = { new_sim(24), new_sim(24) };
	struct zdev *b[2] = { new_sim(24), new_sim(24) };
	struct zcow_mkfs_opts mo = { .seed = 3 }, mo2 = { .seed = 4 };
	struct zcow_fs *fs = NULL;
	struct zdev *mix[2] = { a[0], b[1] };

	ck_assert_int_eq(zcow_mkfs_devs(a, 2, &mo), 0);
	ck_assert_int_eq(zcow_mkfs_devs(b, 2, &mo2), 0);
	ck_assert_int_eq(zcow_mount_devs(mix, 2, NULL, &fs), -EINVAL);
	ck_assert_ptr_null(fs);
	/* the same device twice */
	mix[1] = a[0];
	ck_assert_int_eq(zcow_mount_devs(mix, 2, NULL, &fs), -EINVAL);
	zdev_close(a[0]);
	zdev_close(a[1]);
	zdev_close(b[0]);
	zdev_close(b[1]);
}
END_TEST

START_TEST(test_devices_zone_sizes_must_match)
{
	struct zdev *devs[2] = { new_sim_zs(24, ZS), new_sim_zs(24, 2 * ZS) };
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_super_block sb;
	struct zcow_sb_copy found;

	ck_assert_int_eq(zcow_mkfs_devs(devs, 2, &mo), -EINVAL);
	/* refused before anything was written */
	ck_assert_int_eq(zcow_sb_read_latest(devs[0], &sb, &found), -ENOENT);
	ck_assert_int_eq(zcow_sb_read_latest(devs[1], &sb, &found), -ENOENT);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
}
END_TEST

START_TEST(test_devices_zoned_and_not_refused)
{
	char path[] = "/tmp/zcow-devtest-XXXXXX", spec[128];
	struct zdev *devs[2] = { new_sim(24), NULL };
	struct zcow_mkfs_opts mo = { .seed = 3 };
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(24 * ZS)), 0);
	close(fd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=4M", path);
	ck_assert_int_eq(zdev_open(spec, &devs[1]), 0);
	ck_assert(!devs[1]->info.is_zoned);
	ck_assert_int_eq(zcow_mkfs_devs(devs, 2, &mo), -EINVAL);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
	unlink(path);
}
END_TEST

START_TEST(test_devices_one_device_keeps_its_format)
{
	/* a one-device fs is as before: devid 1, one dev item, uuids from
	 * the seed in the same order */
	struct zdev *a = new_sim(24), *b = new_sim(24);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_super_block sa, sb;
	struct zcow_sb_copy found;

	ck_assert_int_eq(zcow_mkfs(a, &mo), 0);
	ck_assert_int_eq(zcow_mkfs_devs(&b, 1, &mo), 0);
	ck_assert_int_eq(zcow_sb_read_latest(a, &sa, &found), 0);
	ck_assert_int_eq(zcow_sb_read_latest(b, &sb, &found), 0);
	ck_assert_mem_eq(&sa, &sb, sizeof(sa));
	ck_assert_uint_eq(le64toh(sa.num_devices), 1);
	zdev_close(a);
	zdev_close(b);
}
END_TEST

START_TEST(test_devices_add_grows_a_full_fs)
{
	struct zdev *devs[2] = { new_sim(16), new_sim(16) };
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;
	struct zcow_dev_info di;
	static uint8_t buf[2 * MiB];
	char name[32];
	int n = 0, ret = 0;

	ck_assert_int_eq(zcow_mkfs(devs[0], &mo), 0);
	ck_assert_int_eq(zcow_mount(devs[0], NULL, &fs), 0);
	/* fill the one device until a write is refused */
	for (n = 0; n < 64; n++) {
		struct zcow_file *f;

		zcow_test_fill(buf, sizeof(buf), n);
		snprintf(name, sizeof(name), "/f%d", n);
		ck_assert_int_eq(zcow_open(fs, name, O_CREAT | O_RDWR, &f), 0);
		ret = (int)zcow_pwrite(f, buf, sizeof(buf), 0);
		ck_assert_int_eq(zcow_close(f), 0);
		if (ret < 0)
			break;
		ck_assert_int_eq(ret, (int)sizeof(buf));
	}
	ck_assert_int_eq(ret, -ENOSPC);
	ck_assert_int_eq(zcow_unlink(fs, name), 0);
	ck_assert_int_eq(zcow_dev_add(fs, devs[1]), 0);
	ck_assert_uint_eq(zcow_fs_nr_devices(fs), 2);
	ck_assert_int_eq(zcow_fs_device_info(fs, 1, &di), 0);
	ck_assert_uint_eq(di.devid, 2);
	ck_assert_uint_eq(di.total_bytes, 16 * ZS);
	/* the new device takes what the first had no room for */
	zcow_test_files(fs, n, 4, sizeof(buf), true);
	ck_assert_int_eq(zcow_fs_device_info(fs, 1, &di), 0);
	ck_assert_uint_gt(di.nr_groups, 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);

	/* the first device alone is no longer the file system */
	ck_assert_int_eq(zcow_mount(devs[0], NULL, &fs), -ENODEV);
	ck_assert_int_eq(zcow_mount_devs(devs, 2, NULL, &fs), 0);
	zcow_test_files(fs, 0, n + 4, sizeof(buf), false);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(devs[0]);
	zdev_close(devs[1]);
}
END_TEST

START_TEST(test_devices_add_refuses_other_zone_size)
{
	struct zdev *a = new_sim(16), *b = new_sim_zs(16, 2 * ZS);
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;
	uint64_t gen;

	ck_assert_int_eq(zcow_mkfs(a, &mo), 0);
	ck_assert_int_eq(zcow_mount(a, NULL, &fs), 0);
	gen = zcow_fs_generation(fs);
	ck_assert_int_eq(zcow_dev_add(fs, b), -EINVAL);
	ck_assert_uint_eq(zcow_fs_nr_devices(fs), 1);
	ck_assert_uint_eq(zcow_fs_generation(fs), gen);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(a);
	zdev_close(b);
}
END_TEST

Suite *devices_suite(void)
{
	Suite *s = suite_create("devices");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_devices_mkfs_two_mount_read_back);
	tcase_add_test(tc, test_devices_chunks_go_to_most_free_space);
	tcase_add_test(tc, test_devices_missing_device_refused);
	tcase_add_test(tc, test_devices_other_fs_refused);
	tcase_add_test(tc, test_devices_zone_sizes_must_match);
	tcase_add_test(tc, test_devices_zoned_and_not_refused);
	tcase_add_test(tc, test_devices_one_device_keeps_its_format);
	tcase_add_test(tc, test_devices_add_grows_a_full_fs);
	tcase_add_test(tc, test_devices_add_refuses_other_zone_size);
	suite_add_tcase(s, tc);
	return s;
}
