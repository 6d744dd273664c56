// SPDX-License-Identifier: MIT
/*
 * The real-device backend without a zoned device: NVMe status -> errno as
 * the kernel maps it (measured), /dev/nvmeXnY -> /dev/ngXnY, the open
 * errors, and the size of each command from the queue limits (pure
 * functions, and the sysfs reader on a directory of its own).  The device itself is exercised in the QEMU VM runs.
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
static struct zcow_test_log capture = { last_msg, sizeof(last_msg) };

START_TEST(test_zbd_open_regular_file_is_enotblk_with_hint)
{
	char path[] = "/tmp/zcow-zbd-XXXXXX";
	struct zdev *dev;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	zlog_set_sink(zcow_test_log_sink, &capture);
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
	zlog_set_sink(zcow_test_log_sink, &capture);
	ck_assert_int_eq(zdev_open("/tmp?append=sometimes", &dev), -EINVAL);
	ck_assert_ptr_nonnull(strstr(last_msg, "append=sometimes"));
	ck_assert_int_eq(zdev_open("/tmp?apend=emulate", &dev), -EINVAL);
	ck_assert_ptr_nonnull(strstr(last_msg, "unknown option 'apend'"));
	zlog_set_sink(NULL, NULL);
	ck_assert_ptr_null(dev);
}
END_TEST

static void set_limit(struct zdev_zbd_limits *lim, enum zdev_zbd_limit which,
		      uint64_t val)
{
	lim->val[which] = val;
	lim->is_present[which] = true;
}

/*
 * QEMU 7.2's ZNS namespace under Linux 6.1 with zasl 0 (mdts 7: 512 KiB),
 * 4 KiB blocks, 4 KiB pages: what the guest's sysfs shows.
 */
static void qemu_zns(struct zdev_zbd_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->page_size = 4096;
	set_limit(lim, ZDEV_ZBD_MAX_HW_SECTORS_KB, 512);
	set_limit(lim, ZDEV_ZBD_MAX_SECTORS_KB, 512);
	set_limit(lim, ZDEV_ZBD_MAX_SEGMENTS, 127);
	set_limit(lim, ZDEV_ZBD_MAX_SEGMENT_SIZE, 4294967295ull);
	set_limit(lim, ZDEV_ZBD_DMA_ALIGNMENT, 3);
	set_limit(lim, ZDEV_ZBD_VIRT_BOUNDARY_MASK, 4095);
	set_limit(lim, ZDEV_ZBD_LOGICAL_BLOCK_SIZE, 4096);
	set_limit(lim, ZDEV_ZBD_PHYSICAL_BLOCK_SIZE, 4096);
	set_limit(lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES, 512 << 10);
	set_limit(lim, ZDEV_ZBD_MAX_OPEN_ZONES, 14);
	set_limit(lim, ZDEV_ZBD_MAX_ACTIVE_ZONES, 14);
}

/* Every limit far above the one a test lets decide. */
static void roomy(struct zdev_zbd_limits *lim, unsigned int lba)
{
	memset(lim, 0, sizeof(*lim));
	lim->page_size = 4096;
	set_limit(lim, ZDEV_ZBD_MAX_HW_SECTORS_KB, 32768);
	set_limit(lim, ZDEV_ZBD_MAX_SECTORS_KB, 32768);
	set_limit(lim, ZDEV_ZBD_MAX_SEGMENTS, 65535);
	set_limit(lim, ZDEV_ZBD_MAX_SEGMENT_SIZE, 4294967295ull);
	set_limit(lim, ZDEV_ZBD_LOGICAL_BLOCK_SIZE, lba);
	set_limit(lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES, 65536 << 10);
}

static const char *bound_str(const struct zdev_zbd_limits *lim,
			     enum zdev_zbd_cmd cmd)
{
	static char buf[160];

	return zdev_zbd_bound_str(lim, cmd, buf, sizeof(buf));
}

START_TEST(test_zbd_qemu_zns_append_is_508k_bounded_by_max_segments)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	qemu_zns(&lim);
	/* 512 KiB is 128 pages: one more than max_segments. */
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  508 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SEGMENTS);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "max_segments 127 x 4096");
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED, &b),
			  508 << 10);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  508 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SEGMENTS);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_READ, NULL),
			  508 << 10);
}
END_TEST

/*
 * The other geometries of the limits VM scenario (docs/vm.md, "Queue
 * limits"), as the guest's sysfs showed them, and the sizes zcow used
 * there: every append and command of those sizes passed.
 */
START_TEST(test_zbd_qemu_lba_zasl_mdts_geometries_size_as_measured)
{
	static const struct {
		const char *vm_set;
		unsigned int lba, hw_kb, kb, segs, zamb;
		uint64_t append, write;
		enum zdev_zbd_bound append_bound, write_bound;
	} g[] = {
		{ "lbs=512", 512, 512, 512, 127, 512 << 10, 508 << 10,
		  508 << 10, ZDEV_ZBD_BOUND_SEGMENTS,
		  ZDEV_ZBD_BOUND_SEGMENTS },
		/* zasl bounds appends only */
		{ "zasl=5", 4096, 512, 512, 127, 128 << 10, 128 << 10,
		  508 << 10, ZDEV_ZBD_BOUND_APPEND_MAX,
		  ZDEV_ZBD_BOUND_SEGMENTS },
		/* mdts 5: 128 KiB, and 33 segments (128 KiB / 4 KiB + 1) */
		{ "mdts=5", 4096, 128, 128, 33, 128 << 10, 128 << 10,
		  128 << 10, ZDEV_ZBD_BOUND_APPEND_MAX,
		  ZDEV_ZBD_BOUND_SECTORS },
		{ "lbs=512 mdts=5", 512, 128, 128, 33, 128 << 10, 128 << 10,
		  128 << 10, ZDEV_ZBD_BOUND_APPEND_MAX,
		  ZDEV_ZBD_BOUND_SECTORS },
	};
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;
	unsigned int i;

	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		qemu_zns(&lim);
		set_limit(&lim, ZDEV_ZBD_LOGICAL_BLOCK_SIZE, g[i].lba);
		set_limit(&lim, ZDEV_ZBD_PHYSICAL_BLOCK_SIZE, g[i].lba);
		set_limit(&lim, ZDEV_ZBD_MAX_HW_SECTORS_KB, g[i].hw_kb);
		set_limit(&lim, ZDEV_ZBD_MAX_SECTORS_KB, g[i].kb);
		set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, g[i].segs);
		set_limit(&lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES, g[i].zamb);
		ck_assert_msg(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU,
					       &b) == g[i].append &&
				      b == g[i].append_bound,
			      "%s: passthrough append", g[i].vm_set);
		ck_assert_msg(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED,
					       &b) == g[i].append &&
				      b == g[i].append_bound,
			      "%s: emulated append", g[i].vm_set);
		ck_assert_msg(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b) ==
					      g[i].write &&
				      b == g[i].write_bound,
			      "%s: write", g[i].vm_set);
		ck_assert_msg(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_READ, &b) ==
					      g[i].write &&
				      b == g[i].write_bound,
			      "%s: read", g[i].vm_set);
		/* a buffer the backend hands on as it is: a page still */
		ck_assert_uint_eq(zdev_zbd_buf_align(&lim), 4096);
	}
}
END_TEST

START_TEST(test_zbd_zone_append_max_bytes_bounds_appends_only)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES, 64 << 10);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  64 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_APPEND_MAX);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "zone_append_max_bytes 65536");
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED, &b),
			  64 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_APPEND_MAX);
	/* Writes and reads do not care. */
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  32768 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SECTORS);
}
END_TEST

START_TEST(test_zbd_max_hw_sectors_bounds_passthrough_only)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_MAX_HW_SECTORS_KB, 256);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  256 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_HW_SECTORS);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "max_hw_sectors_kb 256");
	/* The block layer's commands are bounded by max_sectors_kb. */
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED, &b),
			  32768 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SECTORS);
}
END_TEST

/*
 * A virt boundary above the page (NVMe's is the page): the kernel's
 * passthrough mapping stops a bio at a gap between pages that are not
 * physically contiguous and refuses a request that would hold one, so
 * a passthrough command is one page; the block layer splits its own.
 */
START_TEST(test_zbd_virt_boundary_above_page_bounds_passthrough_to_a_page)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_VIRT_BOUNDARY_MASK, 4095);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  32768 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_HW_SECTORS);
	set_limit(&lim, ZDEV_ZBD_VIRT_BOUNDARY_MASK, 65535);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  4096);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_VIRT_BOUNDARY);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "virt_boundary_mask 65535 above the 4096-byte page: one page");
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED, &b),
			  32768 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SECTORS);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, NULL),
			  32768 << 10);
	/* a smaller limit still decides */
	set_limit(&lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES, 0);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  0);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_NO_APPEND);
}
END_TEST

START_TEST(test_zbd_max_sectors_bounds_block_layer_commands_only)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_cmd cmds[] = { ZDEV_ZBD_APPEND_EMULATED, ZDEV_ZBD_WRITE,
				     ZDEV_ZBD_READ };
	enum zdev_zbd_bound b;
	unsigned int i;

	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_MAX_SECTORS_KB, 128);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, cmds[i], &b),
				  128 << 10);
		ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SECTORS);
		ck_assert_str_eq(bound_str(&lim, cmds[i]),
				 "max_sectors_kb 128");
	}
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  32768 << 10);
	ck_assert_int_ne(b, ZDEV_ZBD_BOUND_SECTORS);
}
END_TEST

START_TEST(test_zbd_max_segments_count_one_page_each)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 33);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  33 * 4096);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SEGMENTS);
	/* Larger pages make larger segments. */
	lim.page_size = 65536;
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  33 * 65536);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "max_segments 33 x 65536");
}
END_TEST

START_TEST(test_zbd_max_segment_size_below_a_page_bounds_segments)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	roomy(&lim, 512);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 16);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENT_SIZE, 2048);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  16 * 2048);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SEGMENT_SIZE);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "max_segments 16 x max_segment_size 2048");
}
END_TEST

START_TEST(test_zbd_absent_limits_bound_nothing)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	memset(&lim, 0, sizeof(lim));
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  ZDEV_ZBD_IO_DEFAULT);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_DEFAULT);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_READ, NULL),
			  ZDEV_ZBD_IO_DEFAULT);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED, &b),
			  ZDEV_ZBD_IO_DEFAULT);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_DEFAULT);
	/* Passthrough has no Zone Append without zone_append_max_bytes. */
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  0);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_NO_APPEND);
	/* One limit present: it alone decides. */
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 64);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  64 * 4096);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SEGMENTS);
}
END_TEST

START_TEST(test_zbd_zero_limits_are_absent_but_zero_append_is_none)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	qemu_zns(&lim);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 0);
	set_limit(&lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES, 0);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  0);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_NO_APPEND);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "zone_append_max_bytes 0: no Zone Append");
	/* An emulated append is a write: max_sectors_kb. */
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_EMULATED, &b),
			  512 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SECTORS);
	lim.is_present[ZDEV_ZBD_ZONE_APPEND_MAX_BYTES] = false;
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_APPEND_PASSTHRU),
			 "zone_append_max_bytes absent: no Zone Append");
}
END_TEST

START_TEST(test_zbd_max_is_rounded_down_to_the_logical_block)
{
	struct zdev_zbd_limits lim;
	enum zdev_zbd_bound b;

	/* 16 x 1000 = 16000: 31.25 blocks of 512, 3.9 blocks of 4096. */
	roomy(&lim, 512);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 16);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENT_SIZE, 1000);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  31 * 512);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_SEGMENT_SIZE);
	ck_assert_str_eq(bound_str(&lim, ZDEV_ZBD_WRITE),
			 "max_segments 16 x max_segment_size 1000, rounded "
			 "down to 512-byte blocks");
	set_limit(&lim, ZDEV_ZBD_LOGICAL_BLOCK_SIZE, 4096);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, &b),
			  3 * 4096);
	/* 510 KiB is not a multiple of 4 KiB. */
	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_MAX_HW_SECTORS_KB, 510);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU, &b),
			  508 << 10);
	ck_assert_int_eq(b, ZDEV_ZBD_BOUND_HW_SECTORS);
	/* Without logical_block_size, 512-byte blocks. */
	memset(&lim, 0, sizeof(lim));
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 3);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENT_SIZE, 700);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_READ, NULL),
			  4 * 512);
}
END_TEST

START_TEST(test_zbd_limits_below_one_block_allow_nothing)
{
	struct zdev_zbd_limits lim;

	roomy(&lim, 4096);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENTS, 1);
	set_limit(&lim, ZDEV_ZBD_MAX_SEGMENT_SIZE, 2048);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, NULL), 0);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU,
					   NULL),
			  0);
}
END_TEST

START_TEST(test_zbd_buffers_align_to_page_block_and_dma)
{
	struct zdev_zbd_limits lim;

	memset(&lim, 0, sizeof(lim));
	ck_assert_uint_eq(zdev_zbd_buf_align(&lim), 4096);
	qemu_zns(&lim);
	ck_assert_uint_eq(zdev_zbd_buf_align(&lim), 4096);
	set_limit(&lim, ZDEV_ZBD_DMA_ALIGNMENT, 8191);
	ck_assert_uint_eq(zdev_zbd_buf_align(&lim), 8192);
	set_limit(&lim, ZDEV_ZBD_LOGICAL_BLOCK_SIZE, 16384);
	ck_assert_uint_eq(zdev_zbd_buf_align(&lim), 16384);
	lim.page_size = 65536;
	ck_assert_uint_eq(zdev_zbd_buf_align(&lim), 65536);
}
END_TEST

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_zbd_limits_read_from_a_queue_directory)
{
	char dir[] = "/tmp/zcow-queue-XXXXXX";
	struct zdev_zbd_limits lim;
	enum zdev_zbd_limit i;
	char cmd[600];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* As the kernel prints them; virt_boundary_mask left absent. */
	put_file(dir, "max_hw_sectors_kb", "512\n");
	put_file(dir, "max_sectors_kb", "256\n");
	put_file(dir, "max_segments", "127\n");
	put_file(dir, "max_segment_size", "4294967295\n");
	put_file(dir, "dma_alignment", "3\n");
	put_file(dir, "logical_block_size", "4096\n");
	put_file(dir, "physical_block_size", "4096\n");
	put_file(dir, "zone_append_max_bytes", "524288\n");
	put_file(dir, "max_open_zones", "14\n");
	put_file(dir, "max_active_zones", "0\n");
	put_file(dir, "scheduler", "[none] mq-deadline\n");
	memset(&lim, 0xff, sizeof(lim));
	ck_assert_int_eq(zdev_zbd_limits_read(dir, &lim), 0);
	ck_assert_str_eq(lim.dir, dir);
	ck_assert_uint_gt(lim.page_size, 0);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_MAX_HW_SECTORS_KB], 512);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_MAX_SECTORS_KB], 256);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_MAX_SEGMENTS], 127);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_MAX_SEGMENT_SIZE], 4294967295ull);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_DMA_ALIGNMENT], 3);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_LOGICAL_BLOCK_SIZE], 4096);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_PHYSICAL_BLOCK_SIZE], 4096);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_ZONE_APPEND_MAX_BYTES], 524288);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_MAX_OPEN_ZONES], 14);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_MAX_ACTIVE_ZONES], 0);
	for (i = 0; i < ZDEV_ZBD_NR_LIMITS; i++)
		ck_assert_int_eq(lim.is_present[i],
				 i != ZDEV_ZBD_VIRT_BOUNDARY_MASK);
	ck_assert_uint_eq(lim.val[ZDEV_ZBD_VIRT_BOUNDARY_MASK], 0);
	lim.page_size = 4096;
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_APPEND_PASSTHRU,
					   NULL),
			  508 << 10);
	ck_assert_uint_eq(zdev_zbd_cmd_max(&lim, ZDEV_ZBD_WRITE, NULL),
			  256 << 10);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_zbd_limits_read_refuses_a_file_without_a_number)
{
	char dir[] = "/tmp/zcow-queue-XXXXXX";
	struct zdev_zbd_limits lim;
	char cmd[600];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put_file(dir, "max_segments", "many\n");
	zlog_set_sink(zcow_test_log_sink, &capture);
	ck_assert_int_eq(zdev_zbd_limits_read(dir, &lim), -EINVAL);
	zlog_set_sink(NULL, NULL);
	ck_assert_ptr_nonnull(strstr(last_msg, "max_segments"));
	ck_assert_ptr_nonnull(strstr(last_msg, "many"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(zdev_zbd_limits_read(dir, &lim), -ENOENT);
}
END_TEST

START_TEST(test_zbd_limit_and_cmd_names_are_the_sysfs_files)
{
	ck_assert_str_eq(zdev_zbd_limit_name(ZDEV_ZBD_MAX_HW_SECTORS_KB),
			 "max_hw_sectors_kb");
	ck_assert_str_eq(zdev_zbd_limit_name(ZDEV_ZBD_VIRT_BOUNDARY_MASK),
			 "virt_boundary_mask");
	ck_assert_str_eq(zdev_zbd_limit_name(ZDEV_ZBD_ZONE_APPEND_MAX_BYTES),
			 "zone_append_max_bytes");
	ck_assert_str_eq(zdev_zbd_limit_name(ZDEV_ZBD_MAX_ACTIVE_ZONES),
			 "max_active_zones");
	ck_assert_ptr_null(zdev_zbd_limit_name(ZDEV_ZBD_NR_LIMITS));
	ck_assert_str_eq(zdev_zbd_cmd_name(ZDEV_ZBD_APPEND_PASSTHRU),
			 "append passthru");
	ck_assert_str_eq(zdev_zbd_cmd_name(ZDEV_ZBD_READ), "read");
}
END_TEST

START_TEST(test_zbd_dev_limits_refuses_other_backends)
{
	char path[] = "/tmp/zcow-zbdlim-XXXXXX";
	char spec[128];
	struct zdev_zbd_limits lim;
	struct zdev *dev;
	bool is_passthru;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=1M,size=4M,create",
		 path);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zdev_zbd_dev_limits(dev, &lim, &is_passthru),
			 -ENODEV);
	zdev_close(dev);
	unlink(path);
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
	tcase_add_test(tc,
		       test_zbd_qemu_zns_append_is_508k_bounded_by_max_segments);
	tcase_add_test(tc,
		       test_zbd_qemu_lba_zasl_mdts_geometries_size_as_measured);
	tcase_add_test(tc, test_zbd_zone_append_max_bytes_bounds_appends_only);
	tcase_add_test(tc, test_zbd_max_hw_sectors_bounds_passthrough_only);
	tcase_add_test(tc,
		       test_zbd_virt_boundary_above_page_bounds_passthrough_to_a_page);
	tcase_add_test(tc,
		       test_zbd_max_sectors_bounds_block_layer_commands_only);
	tcase_add_test(tc, test_zbd_max_segments_count_one_page_each);
	tcase_add_test(tc,
		       test_zbd_max_segment_size_below_a_page_bounds_segments);
	tcase_add_test(tc, test_zbd_absent_limits_bound_nothing);
	tcase_add_test(tc,
		       test_zbd_zero_limits_are_absent_but_zero_append_is_none);
	tcase_add_test(tc, test_zbd_max_is_rounded_down_to_the_logical_block);
	tcase_add_test(tc, test_zbd_limits_below_one_block_allow_nothing);
	tcase_add_test(tc, test_zbd_buffers_align_to_page_block_and_dma);
	tcase_add_test(tc, test_zbd_limits_read_from_a_queue_directory);
	tcase_add_test(tc,
		       test_zbd_limits_read_refuses_a_file_without_a_number);
	tcase_add_test(tc, test_zbd_limit_and_cmd_names_are_the_sysfs_files);
	tcase_add_test(tc, test_zbd_dev_limits_refuses_other_backends);
	suite_add_tcase(s, tc);
	return s;
}
