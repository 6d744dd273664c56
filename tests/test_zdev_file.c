// SPDX-License-Identifier: MIT
/*
 * The emulated-zones backend (file:PATH,zone_size=...) against temp files:
 * geometry, data round trip, conventional-zone rules, spec errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"
#include "zdev.h"
#include "zlog.h"

#define ZS  (1u << 20) /* zone size of the tests */
#define LBA 4096

static char tmp_path[64];

/* A temp file of @size bytes (sparse). */
static void make_file(uint64_t size)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/zcow-file-XXXXXX");
	fd = mkstemp(tmp_path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, size), 0);
	close(fd);
}

static int open_spec(const char *fmt, struct zdev **dev_ret)
{
	char spec[256];

	snprintf(spec, sizeof(spec), fmt, tmp_path);
	return zdev_open(spec, dev_ret);
}

static void teardown(void)
{
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = '\0';
}

START_TEST(test_file_geometry_is_all_conventional_zones)
{
	struct zdev_zone zones[8];
	unsigned int nr = 8, i;
	struct zdev *dev;

	make_file(4 * ZS);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M", &dev), 0);
	ck_assert_uint_eq(dev->info.zone_size, ZS);
	ck_assert_uint_eq(dev->info.zone_capacity, ZS);
	ck_assert_uint_eq(dev->info.nr_zones, 4);
	ck_assert_uint_eq(dev->info.nr_conv, 4);
	ck_assert_uint_eq(dev->info.size, 4 * ZS);
	ck_assert_uint_eq(dev->info.max_append, 0);
	ck_assert_uint_eq(dev->info.lba_size, 4096);
	ck_assert(!dev->info.is_zoned);
	ck_assert_str_eq(dev->info.model, "file");

	ck_assert_int_eq(zdev_report(dev, ZS + 5, zones, &nr), 0);
	ck_assert_uint_eq(nr, 3);
	for (i = 0; i < nr; i++) {
		ck_assert_uint_eq(zones[i].start, (i + 1) * ZS);
		ck_assert_uint_eq(zones[i].len, ZS);
		ck_assert_uint_eq(zones[i].capacity, ZS);
		ck_assert_uint_eq(zones[i].wp, zones[i].start + ZS);
		ck_assert_int_eq(zones[i].type, ZDEV_ZONE_CONV);
		ck_assert_int_eq(zones[i].cond, ZDEV_COND_NOT_WP);
	}
	ck_assert_int_eq(zdev_close(dev), 0);
}
END_TEST

START_TEST(test_file_writes_read_back_exactly_at_random_offsets)
{
	static char in[3 * LBA], out[3 * LBA];
	const uint64_t offs[] = { 3 * ZS + 5 * LBA, 0, 2 * ZS - LBA, 7 * LBA };
	struct zdev *dev;
	unsigned int i;
	int fd;

	make_file(4 * ZS);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M,lba=4k", &dev), 0);
	/* Random order, overwrites and a write across a zone boundary. */
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		memset(in, 'a' + i, sizeof(in));
		ck_assert_int_eq(zdev_write(dev, in, sizeof(in), offs[i], 0,
					    ZDEV_CLASS_DATA),
				 0);
		ck_assert_int_eq(zdev_read(dev, out, sizeof(out), offs[i],
					   ZDEV_CLASS_DATA),
				 0);
		ck_assert_int_eq(memcmp(in, out, sizeof(in)), 0);
	}
	memset(in, 'z', LBA);
	ck_assert_int_eq(zdev_write(dev, in, LBA, 0, 0, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(
		zdev_write(dev, in, LBA, LBA, ZDEV_WRITE_FUA, ZDEV_CLASS_SB),
		0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(zdev_close(dev), 0);

	/* The bytes are in the file where the offsets say. */
	fd = open(tmp_path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, out, 2 * LBA, 0), 2 * LBA);
	ck_assert_int_eq(out[0], 'z');
	ck_assert_int_eq(out[2 * LBA - 1], 'z');
	ck_assert_int_eq(pread(fd, out, LBA, 2 * LBA), LBA);
	ck_assert_int_eq(out[0], 'b'); /* rest of the write at 0 */
	ck_assert_int_eq(pread(fd, out, LBA, 3 * ZS + 5 * LBA), LBA);
	ck_assert_int_eq(out[0], 'a');
	/* Never written: zeros. */
	ck_assert_int_eq(pread(fd, out, LBA, ZS), LBA);
	ck_assert_int_eq(out[0], 0);
	close(fd);
}
END_TEST

START_TEST(test_file_append_is_not_supported)
{
	static char in[LBA];
	struct zdev *dev;
	uint64_t off = 7;

	make_file(2 * ZS);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M", &dev), 0);
	ck_assert_int_eq(
		zdev_append(dev, in, LBA, ZS, 0, ZDEV_CLASS_DATA, &off),
		-EOPNOTSUPP);
	ck_assert_uint_eq(off, 7);
	zdev_close(dev);
}
END_TEST

START_TEST(test_file_zone_management_on_conventional_zone_is_eio)
{
	struct zdev_stats st;
	struct zdev *dev;

	make_file(2 * ZS);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M", &dev), 0);
	ck_assert_int_eq(zdev_reset_zone(dev, ZS, ZDEV_CLASS_ZONE), -EIO);
	ck_assert_int_eq(zdev_finish_zone(dev, 0, ZDEV_CLASS_ZONE), -EIO);
	ck_assert_int_eq(
		zdev_zone_mgmt(dev, ZDEV_ZONE_OPEN, 0, ZS, ZDEV_CLASS_ZONE),
		-EIO);
	ck_assert_int_eq(
		zdev_zone_mgmt(dev, ZDEV_ZONE_CLOSE, 0, ZS, ZDEV_CLASS_ZONE),
		-EIO);
	ck_assert_int_eq(
		zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 0, 0, ZDEV_CLASS_ZONE),
		-EIO);
	/* Not zone-aligned is still the wrapper's -EINVAL. */
	ck_assert_int_eq(zdev_reset_zone(dev, LBA, ZDEV_CLASS_ZONE), -EINVAL);
	zdev_get_stats(dev, &st);
	ck_assert_uint_eq(st.errors[ZDEV_CLASS_ZONE][ZDEV_OP_RESET], 3);
	zdev_close(dev);
}
END_TEST

START_TEST(test_file_read_write_past_end_is_einval)
{
	static char in[2 * LBA];
	struct zdev *dev;

	make_file(2 * ZS);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M", &dev), 0);
	ck_assert_int_eq(zdev_write(dev, in, LBA, 2 * ZS, 0, ZDEV_CLASS_DATA),
			 -EINVAL);
	ck_assert_int_eq(
		zdev_write(dev, in, 2 * LBA, 2 * ZS - LBA, 0, ZDEV_CLASS_DATA),
		-EINVAL);
	ck_assert_int_eq(zdev_read(dev, in, LBA, 2 * ZS, ZDEV_CLASS_DATA),
			 -EINVAL);
	ck_assert_int_eq(zdev_read(dev, in, LBA, 2 * ZS - LBA, ZDEV_CLASS_DATA),
			 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_file_trailing_partial_zone_is_ignored_with_warning)
{
	static char in[LBA];
	unsigned long warns;
	struct zdev *dev;

	make_file(3 * ZS + ZS / 2);
	warns = zlog_nr_warnings();
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M", &dev), 0);
	ck_assert_uint_gt(zlog_nr_warnings(), warns);
	ck_assert_uint_eq(dev->info.nr_zones, 3);
	ck_assert_uint_eq(dev->info.size, 3 * ZS);
	ck_assert_int_eq(zdev_write(dev, in, LBA, 3 * ZS, 0, ZDEV_CLASS_DATA),
			 -EINVAL);
	zdev_close(dev);
}
END_TEST

START_TEST(test_file_missing_file_with_size_is_created_sparse)
{
	struct zdev *dev;
	struct stat st;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/zcow-new-%d", (int)getpid());
	unlink(tmp_path);
	/* Without size= a missing file is an error. */
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M", &dev), -ENOENT);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M,size=8M", &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 8);
	zdev_close(dev);
	ck_assert_int_eq(stat(tmp_path, &st), 0);
	ck_assert_int_eq(st.st_size, 8 * ZS);
	ck_assert_int_lt(st.st_blocks * 512, 8 * ZS);
	/* Reopened without size=: the whole file. */
	ck_assert_int_eq(open_spec("file:%s,zone_size=2M", &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 4);
	zdev_close(dev);
}
END_TEST

START_TEST(test_file_size_limits_or_extends_existing_file)
{
	struct zdev *dev;
	struct stat st;

	make_file(4 * ZS);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M,size=2M", &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 2);
	zdev_close(dev);
	/* Larger than the file: refused unless create. */
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M,size=8M", &dev),
			 -EINVAL);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M,size=8M,create", &dev),
			 0);
	ck_assert_uint_eq(dev->info.nr_zones, 8);
	zdev_close(dev);
	ck_assert_int_eq(stat(tmp_path, &st), 0);
	ck_assert_int_eq(st.st_size, 8 * ZS);
}
END_TEST

START_TEST(test_file_bad_specs_are_einval)
{
	static const char *const bad[] = {
		"file:%s",		/* zone_size missing */
		"file:%s,size=4M",	/* zone_size missing */
		"file:%s,zone_size=3M", /* not a power of two */
		"file:%s,zone_size=0",
		"file:%s,zone_size=1M,colour=red", /* unknown key */
		"file:%s,zone_size=1Q",		   /* bad value */
		"file:%s,zone_size=1M,lba=1000",   /* lba not pow2 */
		"file:%s,zone_size=1M,lba=256",	   /* lba too small */
		"file:%s,zone_size=4k,lba=8k",	   /* lba > zone */
		"file:%s,zone_size=1M,create",	   /* create needs size */
		"file:%s,zone_size=1M,create=yes",
		"file:%s,zone_size=8M", /* no whole zone */
		"file:,zone_size=1M",	/* no path */
	};
	struct zdev *dev = NULL;
	unsigned int i;

	make_file(4 * ZS);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(open_spec(bad[i], &dev) == -EINVAL,
			      "spec %s not refused", bad[i]);
		ck_assert_ptr_null(dev);
	}
}
END_TEST

/* Captures error messages to check that they name the bad key. */
static char last_msg[256];
static struct zcow_test_log capture = { last_msg, sizeof(last_msg) };

START_TEST(test_file_bad_key_message_names_the_key)
{
	struct zdev *dev;

	make_file(4 * ZS);
	zlog_set_sink(zcow_test_log_sink, &capture);
	ck_assert_int_eq(open_spec("file:%s,zone_size=1M,colour=red", &dev),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(last_msg, "colour"));
	ck_assert_int_eq(open_spec("file:%s,zone_size=3M", &dev), -EINVAL);
	ck_assert_ptr_nonnull(strstr(last_msg, "zone_size"));
	zlog_set_sink(NULL, NULL);
}
END_TEST

START_TEST(test_file_directory_is_refused)
{
	struct zdev *dev;

	ck_assert_int_eq(zdev_open("file:/tmp,zone_size=1M", &dev), -EISDIR);
}
END_TEST

Suite *zdev_file_suite(void)
{
	Suite *s = suite_create("zdev_file_suite");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_file_geometry_is_all_conventional_zones);
	tcase_add_test(tc,
		       test_file_writes_read_back_exactly_at_random_offsets);
	tcase_add_test(tc, test_file_append_is_not_supported);
	tcase_add_test(tc,
		       test_file_zone_management_on_conventional_zone_is_eio);
	tcase_add_test(tc, test_file_read_write_past_end_is_einval);
	tcase_add_test(tc,
		       test_file_trailing_partial_zone_is_ignored_with_warning);
	tcase_add_test(tc, test_file_missing_file_with_size_is_created_sparse);
	tcase_add_test(tc, test_file_size_limits_or_extends_existing_file);
	tcase_add_test(tc, test_file_bad_specs_are_einval);
	tcase_add_test(tc, test_file_bad_key_message_names_the_key);
	tcase_add_test(tc, test_file_directory_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
