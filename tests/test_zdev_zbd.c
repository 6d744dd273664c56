// SPDX-License-Identifier: MIT
/*
 * The real-device backend without a zoned device: NVMe status -> errno as
 * the kernel maps it (measured), /dev/nvmeXnY -> /dev/ngXnY, and the open
 * errors.  The device itself is exercised in the QEMU VM runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "zdev.h"
#include "zdev_zbd.h"
#include "zlog.h"

/* Status as NVME_IOCTL_IO64_CMD returns it: SC | SCT << 8 | DNR << 14. */
#define DNR (1 << 14)

START_TEST(test_zbd_zone_errors_map_to_eio_as_measured)
{
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1bc | DNR), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1b8 | DNR), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1b9 | DNR), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1bf | DNR), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1ba), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1bb), -EIO);
	/* The measured raw value of Zone Invalid Write. */
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x41bc), -EIO);
}
END_TEST

START_TEST(test_zbd_resource_limits_map_to_their_errnos)
{
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1be | DNR),
			 -ETOOMANYREFS);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1bd | DNR), -EOVERFLOW);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x1be), -ETOOMANYREFS);
}
END_TEST

START_TEST(test_zbd_invalid_field_and_lba_range_map_to_einval)
{
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x002 | DNR), -EINVAL);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x080 | DNR), -EINVAL);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x001 | DNR), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_zbd_success_and_unknown_status)
{
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0), 0);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x281 | DNR), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(0x006), -EIO);
	ck_assert_int_eq(zdev_zbd_nvme_status_errno(-1), -EIO);
	/* MORE (bit 13) and CRD (bits 11-12) do not change the meaning. */
	ck_assert_int_eq(
		zdev_zbd_nvme_status_errno(0x1be | (1 << 13) | (1 << 11)),
		-ETOOMANYREFS);
}
END_TEST

START_TEST(test_zbd_ng_path_derived_from_namespace_block_device)
{
	char buf[64];

	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvme0n1", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/dev/ng0n1");
	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvme12n34", buf, sizeof(buf)),
			 0);
	ck_assert_str_eq(buf, "/dev/ng12n34");
	ck_assert_int_eq(zdev_zbd_ng_path("nvme1n2", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "ng1n2");
}
END_TEST

START_TEST(test_zbd_ng_path_refuses_partitions_and_other_devices)
{
	char buf[64];

	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvme0n1p1", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvme0", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvme0n", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvmeXn1", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(zdev_zbd_ng_path("/dev/sda", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nullb0", buf, sizeof(buf)),
			 -EINVAL);
	ck_assert_int_eq(zdev_zbd_ng_path("", buf, sizeof(buf)), -EINVAL);
}
END_TEST

START_TEST(test_zbd_ng_path_too_small_buffer)
{
	char buf[8];

	ck_assert_int_eq(zdev_zbd_ng_path("/dev/nvme0n1", buf, sizeof(buf)),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(test_zbd_open_missing_path_is_enoent)
{
	struct zdev *dev = (struct zdev *)1;

	ck_assert_int_eq(zdev_open("/dev/nonexistent-zcow-nvme9n9", &dev),
			 -ENOENT);
	ck_assert_ptr_null(dev);
	ck_assert_int_eq(zdev_zbd_open("/nonexistent/dir/dev", &dev), -ENOENT);
}
END_TEST

static char last_msg[512];

static void capture(void *arg, enum zlog_level level, const char *tag,
		    const char *msg)
{
	(void)arg;
	(void)tag;
	if (level >= ZLOG_ERR)
		snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

START_TEST(test_zbd_open_regular_file_is_enotblk_with_hint)
{
	char path[] = "/tmp/zcow-zbd-XXXXXX";
	struct zdev *dev;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	zlog_set_sink(capture, NULL);
	ck_assert_int_eq(zdev_open(path, &dev), -ENOTBLK);
	zlog_set_sink(NULL, NULL);
	ck_assert_ptr_null(dev);
	ck_assert_ptr_nonnull(strstr(last_msg, "not a block device"));
	ck_assert_ptr_nonnull(strstr(last_msg, "file:"));
	unlink(path);
}
END_TEST

START_TEST(test_zbd_open_directory_is_enotblk)
{
	struct zdev *dev;

	ck_assert_int_eq(zdev_open("/tmp", &dev), -ENOTBLK);
}
END_TEST

START_TEST(test_zbd_append_option_is_split_off_the_path)
{
	struct zdev *dev;

	/* The path before '?' is checked: /tmp is a directory. */
	ck_assert_int_eq(zdev_open("/tmp?append=emulate", &dev), -ENOTBLK);
	ck_assert_int_eq(zdev_open("/tmp?append=passthru", &dev), -ENOTBLK);
	ck_assert_int_eq(zdev_open("/tmp?append=auto", &dev), -ENOTBLK);
	zlog_set_sink(capture, NULL);
	ck_assert_int_eq(zdev_open("/tmp?append=sometimes", &dev), -EINVAL);
	ck_assert_ptr_nonnull(strstr(last_msg, "append=sometimes"));
	ck_assert_int_eq(zdev_open("/tmp?apend=emulate", &dev), -EINVAL);
	ck_assert_ptr_nonnull(strstr(last_msg, "unknown option 'apend'"));
	zlog_set_sink(NULL, NULL);
	ck_assert_ptr_null(dev);
}
END_TEST

Suite *zdev_zbd_suite(void)
{
	Suite *s = suite_create("zdev_zbd_suite");
	TCase *tc = tcase_create("zbd");

	tcase_add_test(tc, test_zbd_zone_errors_map_to_eio_as_measured);
	tcase_add_test(tc, test_zbd_resource_limits_map_to_their_errnos);
	tcase_add_test(tc, test_zbd_invalid_field_and_lba_range_map_to_einval);
	tcase_add_test(tc, test_zbd_success_and_unknown_status);
	tcase_add_test(tc,
		       test_zbd_ng_path_derived_from_namespace_block_device);
	tcase_add_test(tc,
		       test_zbd_ng_path_refuses_partitions_and_other_devices);
	tcase_add_test(tc, test_zbd_ng_path_too_small_buffer);
	tcase_add_test(tc, test_zbd_open_missing_path_is_enoent);
	tcase_add_test(tc, test_zbd_open_regular_file_is_enotblk_with_hint);
	tcase_add_test(tc, test_zbd_open_directory_is_enotblk);
	tcase_add_test(tc, test_zbd_append_option_is_split_off_the_path);
	suite_add_tcase(s, tc);
	return s;
}
