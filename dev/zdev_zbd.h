/* SPDX-License-Identifier: MIT */
/*
 * zdev_zbd: internals of the real-device backend (dev/zdev_zbd.c) that are
 * pure functions, exposed so tests can pin them without a zoned device.
 *
 * Not an interface for the core: the core opens real devices through
 * zdev_open("/dev/...").  Who may include this: dev/zdev_zbd.c, tests, and
 * the harness's `zcow zones --limits` (harness/cmd_zones.c).  These helpers
 * are built with or without libzbd.
 */
#ifndef ZCOW_ZDEV_ZBD_H
#define ZCOW_ZDEV_ZBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zdev;

/*
 * The queue limits zcow reads from /sys/block/NAME/queue/, one file each,
 * in the order `zcow zones --limits` prints them.  The file's name is the
 * limit's name (zdev_zbd_limit_name()); its unit is the file's (kb: KiB;
 * size, bytes: bytes; dma_alignment and virt_boundary_mask: masks).
 */
enum zdev_zbd_limit {
	ZDEV_ZBD_MAX_HW_SECTORS_KB,	/* bounds a passthrough command */
	ZDEV_ZBD_MAX_SECTORS_KB,	/* bounds a block-layer command */
	ZDEV_ZBD_MAX_SEGMENTS,		/* DMA segments per command */
	ZDEV_ZBD_MAX_SEGMENT_SIZE,	/* bytes per segment */
	ZDEV_ZBD_DMA_ALIGNMENT,		/* buffer address mask */
	ZDEV_ZBD_VIRT_BOUNDARY_MASK,	/* segments after the first start
					 * on (mask + 1); absent before 6.x */
	ZDEV_ZBD_LOGICAL_BLOCK_SIZE,
	ZDEV_ZBD_PHYSICAL_BLOCK_SIZE,
	ZDEV_ZBD_ZONE_APPEND_MAX_BYTES,	/* 0: no Zone Append */
	ZDEV_ZBD_MAX_OPEN_ZONES,	/* 0: no limit */
	ZDEV_ZBD_MAX_ACTIVE_ZONES,	/* 0: no limit */
	ZDEV_ZBD_NR_LIMITS
};

/*
 * What one open read.  A limit whose file does not exist has
 * is_present false and val 0; a limit that is absent or 0 bounds nothing
 * (zone_append_max_bytes absent or 0: no passthrough Zone Append).  A
 * zeroed struct is valid: no limit known, 4 KiB pages.
 */
struct zdev_zbd_limits {
	uint64_t val[ZDEV_ZBD_NR_LIMITS];
	bool is_present[ZDEV_ZBD_NR_LIMITS];
	uint64_t page_size;	/* bytes, the host's; 0 = 4096 */
	char dir[256];		/* where they were read; "" = not read */
};

/* The kinds of command the backend sizes, each with its own maximum. */
enum zdev_zbd_cmd {
	ZDEV_ZBD_APPEND_PASSTHRU, /* NVMe Zone Append through /dev/ngXnY */
	ZDEV_ZBD_APPEND_EMULATED, /* a pwrite at the cached write pointer */
	ZDEV_ZBD_WRITE,		  /* pwrite, O_DIRECT */
	ZDEV_ZBD_READ,		  /* pread, O_DIRECT */
	ZDEV_ZBD_NR_CMDS
};

/* Which limit decided a command's maximum (zdev_zbd_cmd_max()). */
enum zdev_zbd_bound {
	ZDEV_ZBD_BOUND_DEFAULT,	     /* no limit known: ZDEV_ZBD_IO_DEFAULT */
	ZDEV_ZBD_BOUND_NO_APPEND,    /* zone_append_max_bytes absent or 0 */
	ZDEV_ZBD_BOUND_APPEND_MAX,   /* zone_append_max_bytes */
	ZDEV_ZBD_BOUND_HW_SECTORS,   /* max_hw_sectors_kb x 1024 */
	ZDEV_ZBD_BOUND_SECTORS,	     /* max_sectors_kb x 1024 */
	ZDEV_ZBD_BOUND_SEGMENTS,     /* max_segments x page size */
	ZDEV_ZBD_BOUND_SEGMENT_SIZE, /* max_segments x max_segment_size */
	ZDEV_ZBD_BOUND_VIRT_BOUNDARY, /* virt_boundary_mask above the page:
				       * a passthrough command of one page */
};

/* A write or read of no known limit is issued in commands of this size. */
#define ZDEV_ZBD_IO_DEFAULT (4u << 20)

/* "max_hw_sectors_kb", ... (the sysfs file's name); NULL if out of range. */
const char *zdev_zbd_limit_name(enum zdev_zbd_limit limit);
/* "append passthru", "append emulated", "write", "read". */
const char *zdev_zbd_cmd_name(enum zdev_zbd_cmd cmd);

/*
 * Read every limit from the queue directory @dir (e.g.
 * "/sys/block/nvme0n1/queue"; a test passes a directory of its own), page
 * size from sysconf.  A missing file is absent, not an error.  Returns 0,
 * -ENOENT when @dir does not exist, -EINVAL when a file does not hold a
 * number (logged with its path), or -errno of reading a file.
 */
int zdev_zbd_limits_read(const char *dir, struct zdev_zbd_limits *lim_ret);

/*
 * The largest command of kind @cmd, in bytes, that every limit of @lim
 * allows; the limit that decided it in *@bound_ret (may be NULL).  The
 * rule, for a buffer aligned to zdev_zbd_buf_align() (the backend bounces
 * any other):
 *   min( zone_append_max_bytes                     (appends only),
 *        max_hw_sectors_kb x 1024                   (passthrough),
 *        max_sectors_kb x 1024                      (block layer: writes,
 *                                                    reads, emulated
 *                                                    appends),
 *        max_segments x min(page size, max_segment_size),
 *        page size                                  (passthrough, when
 *                                                    virt_boundary_mask
 *                                                    + 1 > page size) )
 * rounded down to logical_block_size (512 when absent).  max_segments
 * counts one segment per page: the pages of a user buffer need not be
 * physically contiguous, and the NVMe virt boundary (a page) keeps a
 * segment from spanning two that are not.  A limit absent or 0 is left
 * out; with none left a write or read gets ZDEV_ZBD_IO_DEFAULT, an
 * emulated append zone_append_max_bytes or that default, a passthrough
 * append 0 without zone_append_max_bytes (no Zone Append).  0 also when
 * the limits leave less than a block.
 */
uint64_t zdev_zbd_cmd_max(const struct zdev_zbd_limits *lim,
			  enum zdev_zbd_cmd cmd, enum zdev_zbd_bound *bound_ret);

/*
 * The limit that sized @cmd, for a message: "max_segments 127 x 4096",
 * "zone_append_max_bytes 524288", "max_hw_sectors_kb 512", "no limit
 * read", ...; ", rounded down to 4096-byte blocks" follows when the
 * rounding cut it.  Returns @buf.
 */
const char *zdev_zbd_bound_str(const struct zdev_zbd_limits *lim,
			       enum zdev_zbd_cmd cmd, char *buf,
			       size_t buf_len);

/*
 * The alignment of a buffer the backend hands the kernel as it is, in
 * bytes: the page size, or more when logical_block_size or
 * dma_alignment + 1 ask for more.  Others are bounced.
 */
uint64_t zdev_zbd_buf_align(const struct zdev_zbd_limits *lim);

/*
 * The limits a real-device backend read at open and whether its appends
 * are NVMe passthrough.  Returns 0, or -ENODEV when @dev is not a device
 * of this backend (the simulator, a file).
 */
int zdev_zbd_dev_limits(struct zdev *dev, struct zdev_zbd_limits *lim_ret,
			bool *is_passthru_ret);

/*
 * Map an NVMe completion status, as NVME_IOCTL_IO64_CMD returns it
 * (SC | SCT << 8 | CRD << 11 | MORE << 13 | DNR << 14), to the errno the
 * Linux block layer gives for the same status (measured, see
 * docs/device-spec.md):
 *   0x000 Success                          -> 0
 *   0x002 Invalid Field in Command         -> -EINVAL (append not at zone
 *                                             start, above zasl)
 *   0x080 LBA Out of Range                 -> -EINVAL
 *   0x001 Invalid Command Opcode           -> -EOPNOTSUPP
 *   0x1b8 Zone Boundary Error              -> -EIO
 *   0x1b9 Zone Is Full                     -> -EIO
 *   0x1ba Zone Is Read Only                -> -EIO
 *   0x1bb Zone Is Offline                  -> -EIO
 *   0x1bc Zone Invalid Write               -> -EIO
 *   0x1bd Too Many Active Zones            -> -EOVERFLOW
 *   0x1be Too Many Open Zones              -> -ETOOMANYREFS
 *   0x1bf Invalid Zone State Transition    -> -EIO
 *   anything else                          -> -EIO
 */
int zdev_zbd_nvme_status_errno(int status);

/*
 * Derive the NVMe generic char device of a namespace block device:
 * "/dev/nvme0n1" -> "/dev/ng0n1" (the directory is kept).  Partitions
 * ("nvme0n1p1") and non-NVMe names give -EINVAL; a too small @buf gives
 * -ENAMETOOLONG.  Returns 0.
 */
int zdev_zbd_ng_path(const char *blk_path, char *buf, size_t buf_len);

#endif /* ZCOW_ZDEV_ZBD_H */
