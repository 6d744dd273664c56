// SPDX-License-Identifier: MIT
/*
 * The real-device backend: a Linux zoned block device (NVMe ZNS namespace,
 * SMR disk, null_blk) through libzbd, spec "/dev/nvmeXnY".
 *
 * - report, reset/open/close/finish: libzbd (byte offsets; zone types and
 *   conditions are the kernel's enum blk_zone_type/cond, as ours are).
 * - every command sized to the queue's limits (sysfs, read at open:
 *   zdev_zbd_cmd_max()): a Zone Append to info.max_append, which the
 *   file system never exceeds; a larger write or read split into several.
 * - read/write: pread/pwrite on the block device opened O_RDWR | O_DIRECT;
 *   a caller buffer that is not page-aligned (zdev_zbd_buf_align()) is
 *   bounced through an aligned one, command by command.
 * - append: NVMe Zone Append (opcode 0x7d) through NVME_IOCTL_IO64_CMD on
 *   the namespace's generic char device /dev/ngXnY when it exists, from a
 *   page-aligned buffer (bounced otherwise); otherwise
 *   (SMR, no ng device, no permission) a write at a cached write pointer
 *   under a per-zone lock, the pointer re-read from a zone report after any
 *   error.  The spec option "?append=emulate" forces the emulated path
 *   (so it can be tested on NVMe), "?append=passthru" requires passthrough.
 * - flush = fsync(); a FUA write = write + fdatasync().
 *
 * Only this file includes libzbd or the kernel's zoned/NVMe headers, and
 * only here do sector and LBA shifts appear.  Built without libzbd
 * (no -DHAVE_LIBZBD), zdev_zbd_open() still checks the path and then
 * returns -EOPNOTSUPP; the pure helpers of zdev_zbd.h are always built.
 */
#include "zdev_zbd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdev.h"
#include "zlog.h"

#define TAG "zbd"

/* NVMe status codes (SCT << 8 | SC) that get their own errno. */
#define NVME_SC_INVALID_OPCODE		0x001
#define NVME_SC_INVALID_FIELD		0x002
#define NVME_SC_LBA_RANGE		0x080
#define NVME_SC_ZONE_BOUNDARY_ERROR	0x1b8
#define NVME_SC_ZONE_FULL		0x1b9
#define NVME_SC_ZONE_READ_ONLY		0x1ba
#define NVME_SC_ZONE_OFFLINE		0x1bb
#define NVME_SC_ZONE_INVALID_WRITE	0x1bc
#define NVME_SC_ZONE_TOO_MANY_ACTIVE	0x1bd
#define NVME_SC_ZONE_TOO_MANY_OPEN	0x1be
#define NVME_SC_ZONE_INVALID_TRANSITION 0x1bf
/* SCT (3 bits) and SC (8 bits); CRD, MORE and DNR above are dropped. */
#define NVME_SC_MASK 0x7ff

int zdev_zbd_nvme_status_errno(int status)
{
	if (status < 0)
		return -EIO;
	switch (status & NVME_SC_MASK) {
	case 0:
		return 0;
	case NVME_SC_INVALID_FIELD:
	case NVME_SC_LBA_RANGE:
		return -EINVAL;
	case NVME_SC_INVALID_OPCODE:
		return -EOPNOTSUPP;
	case NVME_SC_ZONE_TOO_MANY_ACTIVE:
		return -EOVERFLOW;
	case NVME_SC_ZONE_TOO_MANY_OPEN:
		return -ETOOMANYREFS;
	case NVME_SC_ZONE_BOUNDARY_ERROR:
	case NVME_SC_ZONE_FULL:
	case NVME_SC_ZONE_READ_ONLY:
	case NVME_SC_ZONE_OFFLINE:
	case NVME_SC_ZONE_INVALID_WRITE:
	case NVME_SC_ZONE_INVALID_TRANSITION:
	default:
		return -EIO;
	}
}

/* Skip a run of decimal digits; NULL when there is none. */
static const char *skip_digits(const char *p)
{
	const char *s = p;

	while (*p >= '0' && *p <= '9')
		p++;
	return p == s ? NULL : p;
}

int zdev_zbd_ng_path(const char *blk_path, char *buf, size_t buf_len)
{
	const char *name = strrchr(blk_path, '/');
	size_t dir_len;
	const char *p;
	int n;

	name = name ? name + 1 : blk_path;
	dir_len = name - blk_path;
	/* nvme<ctrl>n<ns>, nothing after (no partition suffix). */
	if (strncmp(name, "nvme", 4) != 0)
		return -EINVAL;
	p = skip_digits(name + 4);
	if (!p || *p != 'n')
		return -EINVAL;
	p = skip_digits(p + 1);
	if (!p || *p)
		return -EINVAL;
	n = snprintf(buf, buf_len, "%.*sng%s", (int)dir_len, blk_path,
		     name + 4);
	if (n < 0 || (size_t)n >= buf_len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Queue limits and the size of each command.
 *
 * A passthrough command (NVME_IOCTL_IO64_CMD) maps the caller's buffer
 * page by page (blk_rq_map_user): pages that are not physically
 * contiguous are one DMA segment each, and the map fails with EINVAL once
 * the command needs more than max_segments of them or more than
 * max_hw_sectors_kb; nothing splits it.  The block layer splits a pwrite
 * or pread to max_sectors_kb and the segment limits itself, but each piece
 * is then a command of its own that zcow neither ordered nor sized.  So
 * the backend sizes every command itself (zdev_zbd_cmd_max(), the rule in
 * zdev_zbd.h): a Zone Append is at most info.max_append, which the file
 * system above never exceeds; a write or read is split here.
 */
static const char *const limit_names[ZDEV_ZBD_NR_LIMITS] = {
	[ZDEV_ZBD_MAX_HW_SECTORS_KB] = "max_hw_sectors_kb",
	[ZDEV_ZBD_MAX_SECTORS_KB] = "max_sectors_kb",
	[ZDEV_ZBD_MAX_SEGMENTS] = "max_segments",
	[ZDEV_ZBD_MAX_SEGMENT_SIZE] = "max_segment_size",
	[ZDEV_ZBD_DMA_ALIGNMENT] = "dma_alignment",
	[ZDEV_ZBD_VIRT_BOUNDARY_MASK] = "virt_boundary_mask",
	[ZDEV_ZBD_LOGICAL_BLOCK_SIZE] = "logical_block_size",
	[ZDEV_ZBD_PHYSICAL_BLOCK_SIZE] = "physical_block_size",
	[ZDEV_ZBD_ZONE_APPEND_MAX_BYTES] = "zone_append_max_bytes",
	[ZDEV_ZBD_MAX_OPEN_ZONES] = "max_open_zones",
	[ZDEV_ZBD_MAX_ACTIVE_ZONES] = "max_active_zones",
};

static const char *const cmd_names[ZDEV_ZBD_NR_CMDS] = {
	[ZDEV_ZBD_APPEND_PASSTHRU] = "append passthru",
	[ZDEV_ZBD_APPEND_EMULATED] = "append emulated",
	[ZDEV_ZBD_WRITE] = "write",
	[ZDEV_ZBD_READ] = "read",
};

/* Page size of a zeroed struct, and block size when sysfs gives none. */
#define DEFAULT_PAGE_SIZE 4096
#define DEFAULT_LBA_SIZE  512

const char *zdev_zbd_limit_name(enum zdev_zbd_limit limit)
{
	if ((unsigned int)limit >= ZDEV_ZBD_NR_LIMITS)
		return NULL;
	return limit_names[limit];
}

const char *zdev_zbd_cmd_name(enum zdev_zbd_cmd cmd)
{
	if ((unsigned int)cmd >= ZDEV_ZBD_NR_CMDS)
		return NULL;
	return cmd_names[cmd];
}

/* A limit's value; 0 when its file was absent. */
static uint64_t get(const struct zdev_zbd_limits *lim,
		    enum zdev_zbd_limit which)
{
	return lim->is_present[which] ? lim->val[which] : 0;
}

static uint64_t page_of(const struct zdev_zbd_limits *lim)
{
	return lim->page_size ? lim->page_size : DEFAULT_PAGE_SIZE;
}

static uint64_t lba_of(const struct zdev_zbd_limits *lim)
{
	uint64_t lba = get(lim, ZDEV_ZBD_LOGICAL_BLOCK_SIZE);

	return lba ? lba : DEFAULT_LBA_SIZE;
}

/* The bytes a segment holds at worst: a page, or less if it may not. */
static uint64_t seg_bytes(const struct zdev_zbd_limits *lim)
{
	uint64_t size = get(lim, ZDEV_ZBD_MAX_SEGMENT_SIZE);

	return size && size < page_of(lim) ? size : page_of(lim);
}

/*
 * The rule of zdev_zbd_cmd_max() before the rounding to blocks.  The
 * candidates are taken in this order and only a strictly smaller one
 * replaces the bound, so of equal limits the first names it.
 */
static uint64_t cmd_bound(const struct zdev_zbd_limits *lim,
			  enum zdev_zbd_cmd cmd, enum zdev_zbd_bound *bound_ret)
{
	bool is_passthru = cmd == ZDEV_ZBD_APPEND_PASSTHRU;
	bool is_append = is_passthru || cmd == ZDEV_ZBD_APPEND_EMULATED;
	enum zdev_zbd_bound bound = ZDEV_ZBD_BOUND_DEFAULT;
	uint64_t max = UINT64_MAX, v, segs;

	if (is_append) {
		v = get(lim, ZDEV_ZBD_ZONE_APPEND_MAX_BYTES);
		if (v) {
			max = v;
			bound = ZDEV_ZBD_BOUND_APPEND_MAX;
		} else if (is_passthru) {
			*bound_ret = ZDEV_ZBD_BOUND_NO_APPEND;
			return 0;
		}
	}
	v = get(lim, is_passthru ? ZDEV_ZBD_MAX_HW_SECTORS_KB
				 : ZDEV_ZBD_MAX_SECTORS_KB) << 10;
	if (v && v < max) {
		max = v;
		bound = is_passthru ? ZDEV_ZBD_BOUND_HW_SECTORS
				    : ZDEV_ZBD_BOUND_SECTORS;
	}
	segs = get(lim, ZDEV_ZBD_MAX_SEGMENTS);
	if (segs && segs * seg_bytes(lim) < max) {
		max = segs * seg_bytes(lim);
		bound = seg_bytes(lim) < page_of(lim)
				? ZDEV_ZBD_BOUND_SEGMENT_SIZE
				: ZDEV_ZBD_BOUND_SEGMENTS;
	}
	/* The passthrough mapping ends a bio at a gap across the virt
	 * boundary between pages that are not physically contiguous, and
	 * refuses a request that would hold one (bio_map_user_iov(),
	 * blk_rq_append_bio()): above a page, a command is one page.  The
	 * block layer splits its own commands there. */
	v = get(lim, ZDEV_ZBD_VIRT_BOUNDARY_MASK);
	if (is_passthru && v + 1 > page_of(lim) && page_of(lim) < max) {
		max = page_of(lim);
		bound = ZDEV_ZBD_BOUND_VIRT_BOUNDARY;
	}
	if (max == UINT64_MAX)
		max = ZDEV_ZBD_IO_DEFAULT;
	*bound_ret = bound;
	return max;
}

uint64_t zdev_zbd_cmd_max(const struct zdev_zbd_limits *lim,
			  enum zdev_zbd_cmd cmd, enum zdev_zbd_bound *bound_ret)
{
	enum zdev_zbd_bound bound;
	uint64_t max = cmd_bound(lim, cmd, &bound);

	if (bound_ret)
		*bound_ret = bound;
	return max - max % lba_of(lim);
}

const char *zdev_zbd_bound_str(const struct zdev_zbd_limits *lim,
			       enum zdev_zbd_cmd cmd, char *buf, size_t buf_len)
{
	enum zdev_zbd_bound bound;
	uint64_t max = cmd_bound(lim, cmd, &bound), lba = lba_of(lim);
	enum zdev_zbd_limit zam = ZDEV_ZBD_ZONE_APPEND_MAX_BYTES;
	size_t n = 0;

	switch (bound) {
	case ZDEV_ZBD_BOUND_DEFAULT:
		n = snprintf(buf, buf_len, "no limit known: %u bytes",
			     ZDEV_ZBD_IO_DEFAULT);
		break;
	case ZDEV_ZBD_BOUND_NO_APPEND:
		n = snprintf(buf, buf_len, "%s %s: no Zone Append",
			     limit_names[zam],
			     lim->is_present[zam] ? "0" : "absent");
		break;
	case ZDEV_ZBD_BOUND_APPEND_MAX:
		n = snprintf(buf, buf_len, "%s %llu", limit_names[zam],
			     (unsigned long long)get(lim, zam));
		break;
	case ZDEV_ZBD_BOUND_HW_SECTORS:
	case ZDEV_ZBD_BOUND_SECTORS:
		n = snprintf(buf, buf_len, "%s %llu",
			     limit_names[bound == ZDEV_ZBD_BOUND_HW_SECTORS
						 ? ZDEV_ZBD_MAX_HW_SECTORS_KB
						 : ZDEV_ZBD_MAX_SECTORS_KB],
			     (unsigned long long)(max >> 10));
		break;
	case ZDEV_ZBD_BOUND_SEGMENTS:
		n = snprintf(buf, buf_len, "max_segments %llu x %llu",
			     (unsigned long long)get(lim,
						     ZDEV_ZBD_MAX_SEGMENTS),
			     (unsigned long long)page_of(lim));
		break;
	case ZDEV_ZBD_BOUND_SEGMENT_SIZE:
		n = snprintf(buf, buf_len,
			     "max_segments %llu x max_segment_size %llu",
			     (unsigned long long)get(lim,
						     ZDEV_ZBD_MAX_SEGMENTS),
			     (unsigned long long)seg_bytes(lim));
		break;
	case ZDEV_ZBD_BOUND_VIRT_BOUNDARY:
		n = snprintf(buf, buf_len,
			     "virt_boundary_mask %llu above the %llu-byte page: one page",
			     (unsigned long long)get(lim,
						     ZDEV_ZBD_VIRT_BOUNDARY_MASK),
			     (unsigned long long)page_of(lim));
		break;
	}
	if (n < buf_len && max % lba)
		snprintf(buf + n, buf_len - n,
			 max < lba ? ", less than one %llu-byte block"
				   : ", rounded down to %llu-byte blocks",
			 (unsigned long long)lba);
	return buf;
}

uint64_t zdev_zbd_buf_align(const struct zdev_zbd_limits *lim)
{
	uint64_t align = page_of(lim);

	if (lba_of(lim) > align)
		align = lba_of(lim);
	if (get(lim, ZDEV_ZBD_DMA_ALIGNMENT) + 1 > align)
		align = get(lim, ZDEV_ZBD_DMA_ALIGNMENT) + 1;
	return align;
}

/* One limit's file: absent (0), a number, or -errno (logged). */
static int read_limit(const char *dir, const char *name, bool *present_ret,
		      uint64_t *val_ret)
{
	char path[PATH_MAX], line[64] = "";
	int ret = 0;
	FILE *f;

	*present_ret = false;
	*val_ret = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		zlog_err(TAG, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (zdev_parse_u64(line, val_ret)) {
		zlog_err(TAG, "%s: '%s' is not a number", path, line);
		return -EINVAL;
	}
	*present_ret = true;
	return 0;
}

int zdev_zbd_limits_read(const char *dir, struct zdev_zbd_limits *lim_ret)
{
	struct stat st;
	long page;
	int i, ret;

	memset(lim_ret, 0, sizeof(*lim_ret));
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((size_t)snprintf(lim_ret->dir, sizeof(lim_ret->dir), "%s", dir) >=
	    sizeof(lim_ret->dir))
		return -ENAMETOOLONG;
	page = sysconf(_SC_PAGESIZE);
	lim_ret->page_size = page > 0 ? (uint64_t)page : DEFAULT_PAGE_SIZE;
	for (i = 0; i < ZDEV_ZBD_NR_LIMITS; i++) {
		ret = read_limit(dir, limit_names[i], &lim_ret->is_present[i],
				 &lim_ret->val[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* What every open checks first, with or without libzbd. */
static int check_path(const char *path)
{
	struct stat st;
	int ret;

	if (stat(path, &st)) {
		ret = -errno;
		zlog_err(TAG, "cannot open '%s': %s", path, strerror(errno));
		return ret;
	}
	if (!S_ISBLK(st.st_mode)) {
		zlog_err(TAG,
			 "'%s' is not a block device (for emulated zones on a "
			 "file use file:%s,zone_size=SIZE)",
			 path, path);
		return -ENOTBLK;
	}
	return 0;
}

/* How zone append is done (spec option "?append=auto|passthru|emulate"). */
enum append_mode {
	APPEND_AUTO,	 /* passthrough when /dev/ngXnY opens, else emulated */
	APPEND_PASSTHRU, /* passthrough or fail the open */
	APPEND_EMULATE,	 /* always a write at the cached wp */
};

/*
 * "/dev/nvme0n1?append=emulate": the path before '?', then key=value
 * options.  Returns 0 or -EINVAL (a message names the bad option).
 */
static int split_spec(const char *spec, char *path, size_t path_len,
		      enum append_mode *mode_ret)
{
	const char *q = strchr(spec, '?'), *pos;
	char key[32], val[32];
	size_t n = q ? (size_t)(q - spec) : strlen(spec);
	int ret;

	if (n >= path_len)
		return -ENAMETOOLONG;
	memcpy(path, spec, n);
	path[n] = '\0';
	*mode_ret = APPEND_AUTO;
	if (!q)
		return 0;
	pos = q + 1;
	while ((ret = zdev_spec_next(&pos, key, sizeof(key), val,
				     sizeof(val))) > 0) {
		if (strcmp(key, "append") != 0) {
			zlog_err(TAG, "'%s': unknown option '%s' (known: "
				      "append=auto|passthru|emulate)", spec, key);
			return -EINVAL;
		}
		if (strcmp(val, "auto") == 0) {
			*mode_ret = APPEND_AUTO;
		} else if (strcmp(val, "passthru") == 0) {
			*mode_ret = APPEND_PASSTHRU;
		} else if (strcmp(val, "emulate") == 0) {
			*mode_ret = APPEND_EMULATE;
		} else {
			zlog_err(TAG, "'%s': append=%s: expected auto, "
				      "passthru or emulate", spec, val);
			return -EINVAL;
		}
	}
	return ret;
}

#ifndef HAVE_LIBZBD

int zdev_zbd_open(const char *spec, struct zdev **dev_ret)
{
	enum append_mode mode;
	char path[PATH_MAX];
	int ret;

	*dev_ret = NULL;
	ret = split_spec(spec, path, sizeof(path), &mode);
	if (ret)
		return ret;
	ret = check_path(path);
	if (ret)
		return ret;
	zlog_err(TAG,
		 "'%s': zcow was built without libzbd; real zoned devices are "
		 "not supported",
		 path);
	return -EOPNOTSUPP;
}

int zdev_zbd_dev_limits(struct zdev *dev, struct zdev_zbd_limits *lim_ret,
			bool *is_passthru_ret)
{
	(void)dev;
	(void)lim_ret;
	(void)is_passthru_ret;
	return -ENODEV; /* no device of this backend opens without libzbd */
}

#else /* HAVE_LIBZBD */

#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sys/ioctl.h>

#include <libzbd/zbd.h>
#include <linux/nvme_ioctl.h>

#define SECTOR_SHIFT	     9
#define NVME_CMD_ZONE_APPEND 0x7d
#define NVME_RW_FUA	     (1u << 30) /* cdw12 bit 30 */

/* Per-zone state for appends emulated by writes. */
struct zbd_zone_state {
	pthread_mutex_t lock;
	bool is_wp_valid; /* wp below is what the device has */
	uint64_t wp;	  /* bytes, as reported (full: start + len) */
	uint8_t cond;	  /* enum zdev_zone_cond, valid with wp */
};

struct zbd_dev {
	int fd;	   /* block device, O_RDWR | O_DIRECT */
	int ng_fd; /* /dev/ngXnY for Zone Append; -1: none */
	uint32_t nsid;
	unsigned int lba_shift;
	struct zbd_zone_state *zones;
	struct zdev_zbd_limits lim;	/* read at open */
	uint64_t cmd_max[ZDEV_ZBD_NR_CMDS]; /* bytes per command, > 0 */
	uint64_t buf_align;		/* zdev_zbd_buf_align() */
};

static struct zbd_dev *priv(struct zdev *dev)
{
	return dev->priv;
}

/* libzbd returns -1 with errno set (some paths return -errno). */
static int lib_err(int ret)
{
	if (ret == -1)
		return errno ? -errno : -EIO;
	return ret < 0 ? ret : -EIO;
}

/* Handed to the kernel as it is, or bounced (zdev_zbd_buf_align()). */
static bool is_aligned(struct zdev *dev, const void *buf)
{
	return (uintptr_t)buf % priv(dev)->buf_align == 0;
}

/* What a message calls a command of each kind. */
static const char *const cmd_what[ZDEV_ZBD_NR_CMDS] = {
	[ZDEV_ZBD_APPEND_PASSTHRU] = "zone append",
	[ZDEV_ZBD_APPEND_EMULATED] = "zone append (emulated by a write)",
	[ZDEV_ZBD_WRITE] = "write",
	[ZDEV_ZBD_READ] = "read",
};

/*
 * Log a command the device (or the kernel on its way) refused: the
 * command, its size, where, the errno and the limit its size was checked
 * against.  EINVAL is what a command outside the queue's limits gets, so
 * it is an error; the others (a full zone, a write off the write pointer,
 * too many open zones) are mostly the zone rules, which callers expect
 * (`zcow conform` provokes each) and report in their own words: debug.
 */
static void log_cmd_err(struct zdev *dev, enum zdev_zbd_cmd cmd, uint64_t len,
			uint64_t off, int err)
{
	const char *name = strerrorname_np(-err);
	char bound[160];

	zlog(err == -EINVAL ? ZLOG_ERR : ZLOG_DEBUG, TAG,
	     "%s of %llu bytes at zone %llu (offset %llu): %s (limit %llu "
	     "bytes: %s)",
	     cmd_what[cmd], (unsigned long long)len,
	     (unsigned long long)(off / dev->info.zone_size),
	     (unsigned long long)off, name ? name : strerror(-err),
	     (unsigned long long)priv(dev)->cmd_max[cmd],
	     zdev_zbd_bound_str(&priv(dev)->lim, cmd, bound, sizeof(bound)));
}

/*
 * O_DIRECT I/O in commands of at most cmd_max[@cmd] bytes, each from the
 * caller's buffer when it is aligned there, else through a bounce buffer
 * aligned to buf_align.  Split at explicit offsets, so the pieces land
 * where one large command would have.
 */
static int rw_direct(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
		     enum zdev_zbd_cmd cmd)
{
	uint64_t max = priv(dev)->cmd_max[cmd], n;
	bool is_write = cmd != ZDEV_ZBD_READ;
	void *bounce = NULL;
	char *p = buf;
	int ret = 0;

	while (len) {
		n = len < max ? len : max;
		if (is_aligned(dev, p)) {
			ret = zdev_fd_io(priv(dev)->fd, p, n, off, is_write);
		} else {
			if (!bounce &&
			    posix_memalign(&bounce, priv(dev)->buf_align,
					   len < max ? len : max)) {
				ret = -ENOMEM;
				goto out;
			}
			if (is_write)
				memcpy(bounce, p, n);
			ret = zdev_fd_io(priv(dev)->fd, bounce, n, off,
					 is_write);
			if (!ret && !is_write)
				memcpy(p, bounce, n);
		}
		if (ret) {
			log_cmd_err(dev, cmd, n, off, ret);
			goto out;
		}
		p += n;
		off += n;
		len -= n;
	}
out:
	free(bounce);
	return ret;
}

static void to_zdev_zone(const struct zbd_zone *in, struct zdev_zone *out)
{
	out->start = in->start;
	out->len = in->len;
	out->capacity = in->capacity ? in->capacity : in->len;
	out->wp = in->wp;
	out->type = in->type;
	out->cond = in->cond;
	/* As the kernel reports them: no write pointer inside these. */
	if (in->type == ZBD_ZONE_TYPE_CNV || in->cond == ZBD_ZONE_COND_FULL)
		out->wp = in->start + in->len;
}

static int zbd_report(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		      unsigned int *nr_ret)
{
	uint64_t zs = dev->info.zone_size;
	uint64_t start = from - from % zs;
	uint64_t left = (dev->info.size - start) / zs;
	unsigned int nr = *nr_ret, i;
	struct zbd_zone *zz;
	int ret = 0;

	if (nr > left)
		nr = left;
	*nr_ret = 0;
	if (!nr)
		return 0;
	zz = calloc(nr, sizeof(*zz));
	if (!zz)
		return -ENOMEM;
	errno = 0;
	ret = zbd_report_zones(priv(dev)->fd, start, (uint64_t)nr * zs,
			       ZBD_RO_ALL, zz, &nr);
	if (ret) {
		ret = lib_err(ret);
		goto out;
	}
	for (i = 0; i < nr; i++)
		to_zdev_zone(&zz[i], &zones[i]);
	*nr_ret = nr;
out:
	free(zz);
	return ret;
}

static int zbd_read(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
		    enum zdev_class cls)
{
	(void)cls;
	return rw_direct(dev, buf, len, off, ZDEV_ZBD_READ);
}

static int sync_data(struct zdev *dev)
{
	return fdatasync(priv(dev)->fd) ? -errno : 0;
}

/* Forget the cached write pointers of the zones in [off, off + len). */
static void invalidate_wps(struct zdev *dev, uint64_t off, uint64_t len)
{
	uint64_t zs = dev->info.zone_size;
	uint64_t no, last = (off + len - 1) / zs;
	struct zbd_zone_state *z;

	for (no = off / zs; no <= last && no < dev->info.nr_zones; no++) {
		z = &priv(dev)->zones[no];
		pthread_mutex_lock(&z->lock);
		z->is_wp_valid = false;
		pthread_mutex_unlock(&z->lock);
	}
}

static int zbd_write(struct zdev *dev, const void *buf, uint64_t len,
		     uint64_t off, unsigned int flags, enum zdev_class cls)
{
	uint64_t zs = dev->info.zone_size;
	struct zbd_zone_state *z = &priv(dev)->zones[off / zs];
	bool is_one_zone = off / zs == (off + len - 1) / zs;
	int ret;

	(void)cls;
	if (!is_one_zone) {
		/* The kernel splits it per zone; re-read all wps later. */
		ret = rw_direct(dev, (void *)buf, len, off, ZDEV_ZBD_WRITE);
		invalidate_wps(dev, off, len);
		goto out;
	}
	/* Serialized with emulated appends to the same zone. */
	pthread_mutex_lock(&z->lock);
	ret = rw_direct(dev, (void *)buf, len, off, ZDEV_ZBD_WRITE);
	if (!ret && z->is_wp_valid && z->wp == off)
		z->wp += len;
	else
		z->is_wp_valid = false;
	pthread_mutex_unlock(&z->lock);
out:
	if (!ret && (flags & ZDEV_WRITE_FUA))
		ret = sync_data(dev);
	return ret;
}

/* Zone Append through the NVMe generic char device. */
static int append_passthru(struct zdev *dev, const void *buf, uint64_t len,
			   uint64_t zone, unsigned int flags, uint64_t *off_ret)
{
	struct zbd_dev *zd = priv(dev);
	struct nvme_passthru_cmd64 cmd;
	void *bounce = NULL;
	uint64_t slba = zone >> zd->lba_shift;
	int ret;

	/* A page-aligned buffer maps to at most one segment per page. */
	if (!is_aligned(dev, buf)) {
		if (posix_memalign(&bounce, zd->buf_align, len))
			return -ENOMEM;
		memcpy(bounce, buf, len);
		buf = bounce;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = NVME_CMD_ZONE_APPEND;
	cmd.nsid = zd->nsid;
	cmd.addr = (uintptr_t)buf;
	cmd.data_len = len;
	cmd.cdw10 = slba & 0xffffffff;
	cmd.cdw11 = slba >> 32;
	cmd.cdw12 = (uint32_t)((len >> zd->lba_shift) - 1);
	if (flags & ZDEV_WRITE_FUA)
		cmd.cdw12 |= NVME_RW_FUA;
	ret = ioctl(zd->ng_fd, NVME_IOCTL_IO64_CMD, &cmd);
	if (ret < 0) {
		ret = -errno;
		log_cmd_err(dev, ZDEV_ZBD_APPEND_PASSTHRU, len, zone, ret);
	} else if (ret > 0) {
		zlog(ZLOG_DEBUG, TAG, "zone append at %llu: NVMe status 0x%x",
		     (unsigned long long)zone, ret);
		ret = zdev_zbd_nvme_status_errno(ret);
		log_cmd_err(dev, ZDEV_ZBD_APPEND_PASSTHRU, len, zone, ret);
	} else {
		*off_ret = (uint64_t)cmd.result << zd->lba_shift;
	}
	free(bounce);
	invalidate_wps(dev, zone, dev->info.zone_size);
	return ret;
}

/* Re-read one zone's wp into the cache.  Zone lock held. */
static int refresh_wp_locked(struct zdev *dev, uint64_t zone,
			     struct zbd_zone_state *z, uint8_t *type_ret)
{
	struct zdev_zone rep;
	unsigned int nr = 1;
	int ret;

	ret = zbd_report(dev, zone, &rep, &nr);
	if (ret)
		return ret;
	if (nr != 1)
		return -EIO;
	z->wp = rep.wp;
	z->cond = rep.cond;
	z->is_wp_valid = true;
	*type_ret = rep.type;
	return 0;
}

/*
 * Zone Append emulated by a write at the cached write pointer: the zone
 * lock makes the read-wp/write/advance-wp sequence atomic against other
 * appends and writes of this process.  Errors match a device append: a
 * full, read-only or offline zone or one crossing the capacity gives -EIO.
 */
static int append_by_write(struct zdev *dev, const void *buf, uint64_t len,
			   uint64_t zone, unsigned int flags, uint64_t *off_ret)
{
	struct zbd_zone_state *z =
		&priv(dev)->zones[zone / dev->info.zone_size];
	uint64_t cap_end = zone + dev->info.zone_capacity;
	uint8_t type = ZDEV_ZONE_SEQ_REQ;
	int ret = 0;

	pthread_mutex_lock(&z->lock);
	if (!z->is_wp_valid)
		ret = refresh_wp_locked(dev, zone, z, &type);
	if (ret)
		goto out;
	if (type == ZDEV_ZONE_CONV) {
		ret = -EOPNOTSUPP; /* the kernel refuses it likewise */
		goto out;
	}
	if (z->cond == ZDEV_COND_FULL || z->cond == ZDEV_COND_READONLY ||
	    z->cond == ZDEV_COND_OFFLINE || z->wp + len > cap_end) {
		ret = -EIO;
		goto out;
	}
	ret = rw_direct(dev, (void *)buf, len, z->wp,
			ZDEV_ZBD_APPEND_EMULATED);
	if (!ret && (flags & ZDEV_WRITE_FUA))
		ret = sync_data(dev);
	if (ret) {
		z->is_wp_valid = false;
		goto out;
	}
	*off_ret = z->wp;
	z->wp += len;
	z->cond = z->wp == cap_end ? ZDEV_COND_FULL : ZDEV_COND_IMP_OPEN;
	if (z->cond == ZDEV_COND_FULL)
		z->wp = zone + dev->info.zone_size;
out:
	pthread_mutex_unlock(&z->lock);
	return ret;
}

static int zbd_append(struct zdev *dev, const void *buf, uint64_t len,
		      uint64_t zone, unsigned int flags, enum zdev_class cls,
		      uint64_t *off_ret)
{
	(void)cls;
	if (!dev->info.max_append)
		return -EOPNOTSUPP;
	/* Invalid Field in Command on a device, as the simulator does. */
	if (zone % dev->info.zone_size || len > dev->info.max_append)
		return -EINVAL;
	if (zone / dev->info.zone_size < dev->info.nr_conv)
		return -EOPNOTSUPP;
	if (priv(dev)->ng_fd >= 0)
		return append_passthru(dev, buf, len, zone, flags, off_ret);
	return append_by_write(dev, buf, len, zone, flags, off_ret);
}

static int zbd_zone_mgmt(struct zdev *dev, enum zdev_zone_action action,
			 uint64_t start, uint64_t len, enum zdev_class cls)
{
	enum zbd_zone_op op;
	int ret;

	(void)cls;
	switch (action) {
	case ZDEV_ZONE_RESET:
		op = ZBD_OP_RESET;
		break;
	case ZDEV_ZONE_OPEN:
		op = ZBD_OP_OPEN;
		break;
	case ZDEV_ZONE_CLOSE:
		op = ZBD_OP_CLOSE;
		break;
	case ZDEV_ZONE_FINISH:
		op = ZBD_OP_FINISH;
		break;
	default:
		return -EINVAL;
	}
	/* start = 0, len = 0 is "all zones" for libzbd as for us. */
	errno = 0;
	ret = zbd_zones_operation(priv(dev)->fd, op, start, len);
	if (ret)
		ret = lib_err(ret);
	invalidate_wps(dev, start, len ? len : dev->info.size);
	return ret;
}

static int zbd_flush(struct zdev *dev)
{
	return fsync(priv(dev)->fd) ? -errno : 0;
}

static void free_zbd_dev(struct zbd_dev *zd, uint64_t nr_zones)
{
	uint64_t i;

	if (!zd)
		return;
	if (zd->zones) {
		for (i = 0; i < nr_zones; i++)
			pthread_mutex_destroy(&zd->zones[i].lock);
		free(zd->zones);
	}
	if (zd->ng_fd >= 0)
		close(zd->ng_fd);
	if (zd->fd >= 0)
		zbd_close(zd->fd);
	free(zd);
}

static int zbd_dev_close(struct zdev *dev)
{
	free_zbd_dev(priv(dev), dev->info.nr_zones);
	return 0;
}

static const struct zdev_ops zbd_ops = {
	.report = zbd_report,
	.read = zbd_read,
	.write = zbd_write,
	.append = zbd_append,
	.zone_mgmt = zbd_zone_mgmt,
	.flush = zbd_flush,
	.close = zbd_dev_close,
};

/*
 * The queue limits of /sys/block/@name/queue and each command's maximum
 * from them (zdev_zbd_cmd_max()); info.max_append is the maximum of the
 * append path this open uses.  Without the directory (a partition) every
 * limit is absent.  Returns 0, or -EINVAL (logged) when the limits leave
 * a write or read less than a block, or an unreadable limit's -errno.
 */
static int size_cmds(struct zbd_dev *zd, const char *name,
		     struct zdev_info *info)
{
	enum zdev_zbd_cmd cmd;
	char dir[PATH_MAX];
	char bound[160];
	uint64_t max;
	int ret;

	snprintf(dir, sizeof(dir), "/sys/block/%s/queue", name);
	ret = zdev_zbd_limits_read(dir, &zd->lim);
	if (ret == -ENOENT) {
		zlog_warn(TAG, "%s: no queue limits: each command of at most "
			       "%u bytes", dir, ZDEV_ZBD_IO_DEFAULT);
		ret = 0;
	}
	if (ret)
		return ret;
	zd->buf_align = zdev_zbd_buf_align(&zd->lim);
	for (cmd = 0; cmd < ZDEV_ZBD_NR_CMDS; cmd++) {
		max = zdev_zbd_cmd_max(&zd->lim, cmd, NULL);
		zd->cmd_max[cmd] = max - max % info->lba_size;
	}
	for (cmd = ZDEV_ZBD_WRITE; cmd <= ZDEV_ZBD_READ; cmd++) {
		if (zd->cmd_max[cmd])
			continue;
		zlog_err(TAG, "%s: the queue limits allow no %s of a %u-byte "
			      "block (%s)", name, cmd_names[cmd], info->lba_size,
			 zdev_zbd_bound_str(&zd->lim, cmd, bound,
					    sizeof(bound)));
		return -EINVAL;
	}
	info->max_append = zd->cmd_max[zd->ng_fd >= 0
						? ZDEV_ZBD_APPEND_PASSTHRU
						: ZDEV_ZBD_APPEND_EMULATED];
	return 0;
}

/*
 * False when sysfs says the disk is not zoned (queue/zoned "none"); true
 * when it is zoned or sysfs does not say (a partition: libzbd decides).
 */
static bool is_zoned_queue(const char *name)
{
	char path[PATH_MAX], line[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/zoned", name);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strncmp(line, "none", 4) != 0;
}

/* Open the generic char device for Zone Append; ng_fd stays -1 if none. */
static void open_passthru(struct zbd_dev *zd, const char *real)
{
	char ng[PATH_MAX];
	int fd, nsid;

	if (zdev_zbd_ng_path(real, ng, sizeof(ng)))
		return;
	fd = open(ng, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		zlog_info(TAG, "%s: %s; zone append is emulated by writes", ng,
			  strerror(errno));
		return;
	}
	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0) {
		zlog_info(TAG,
			  "%s: no namespace id; zone append is emulated by "
			  "writes",
			  ng);
		close(fd);
		return;
	}
	zd->ng_fd = fd;
	zd->nsid = nsid;
}

/*
 * Geometry from one full report: the conventional zones must come first
 * and all sequential zones must have one capacity (struct zdev_info).
 */
static int scan_zones(int fd, struct zdev_info *info)
{
	struct zbd_zone *zz = NULL;
	unsigned int nr = 0, i;
	bool seen_seq = false;
	int ret;

	errno = 0;
	ret = zbd_list_zones(fd, 0, 0, ZBD_RO_ALL, &zz, &nr);
	if (ret) {
		ret = lib_err(ret);
		zlog_err(TAG, "zone report failed: %s", strerror(-ret));
		goto out;
	}
	if (nr > info->nr_zones)
		nr = info->nr_zones;
	info->nr_conv = 0;
	info->zone_capacity = info->zone_size;
	for (i = 0; i < nr; i++) {
		if (zz[i].type == ZBD_ZONE_TYPE_CNV) {
			if (seen_seq) {
				zlog_err(TAG,
					 "zone %u is conventional after "
					 "sequential zones: not supported",
					 i);
				ret = -EINVAL;
				goto out;
			}
			info->nr_conv++;
			continue;
		}
		if (!seen_seq) {
			info->zone_capacity =
				zz[i].capacity ? zz[i].capacity : zz[i].len;
		} else if ((zz[i].capacity ? zz[i].capacity : zz[i].len) !=
			   info->zone_capacity) {
			zlog_err(TAG,
				 "zone %u: capacity differs from the other "
				 "zones: not supported",
				 i);
			ret = -EINVAL;
			goto out;
		}
		seen_seq = true;
	}
out:
	free(zz);
	return ret;
}

static int open_zbd(const char *path, enum append_mode mode,
		    struct zdev **dev_ret)
{
	char real[PATH_MAX], name_buf[PATH_MAX];
	struct zbd_dev *zd = NULL;
	struct zdev_info info;
	struct zbd_info zi;
	uint64_t i, nr_zones = 0;
	const char *name;
	int ret = 0;

	if (!realpath(path, real))
		return -errno;
	snprintf(name_buf, sizeof(name_buf), "%s", real);
	name = basename(name_buf);

	if (!is_zoned_queue(name)) {
		zlog_err(TAG,
			 "'%s' is not a zoned block device (for emulated zones "
			 "use file:%s,zone_size=SIZE)",
			 path, path);
		return -ENXIO;
	}
	zd = calloc(1, sizeof(*zd));
	if (!zd)
		return -ENOMEM;
	zd->ng_fd = -1;
	zbd_set_log_level(ZBD_LOG_NONE);
	errno = 0;
	zd->fd = zbd_open(real, O_RDWR | O_DIRECT | O_CLOEXEC, &zi);
	if (zd->fd < 0) {
		ret = lib_err(zd->fd);
		zd->fd = -1;
		zlog_err(TAG, "'%s': %s", path,
			 ret == -ENXIO
				 ? "not a zoned block device (for emulated "
				   "zones use file:PATH,zone_size=SIZE)"
				 : strerror(-ret));
		goto out;
	}
	memset(&info, 0, sizeof(info));
	info.zone_size = zi.zone_size;
	info.lba_size = zi.lblock_size;
	if (!info.zone_size || (info.zone_size & (info.zone_size - 1)) ||
	    !info.lba_size || (info.lba_size & (info.lba_size - 1))) {
		zlog_err(TAG,
			 "'%s': zone size %llu or block size %u is not a power "
			 "of two",
			 path, (unsigned long long)info.zone_size,
			 info.lba_size);
		ret = -EINVAL;
		goto out;
	}
	zd->lba_shift = __builtin_ctz(info.lba_size);
	info.nr_zones = zi.nr_zones;
	/* A smaller last ("runt") zone is left out: all zones are equal. */
	if (info.nr_zones * info.zone_size > (zi.nr_sectors << SECTOR_SHIFT)) {
		zlog_warn(TAG, "'%s': ignoring the smaller last zone", path);
		info.nr_zones--;
	}
	info.size = info.nr_zones * info.zone_size;
	info.max_open =
		zi.max_nr_open_zones == UINT_MAX ? 0 : zi.max_nr_open_zones;
	info.max_active =
		zi.max_nr_active_zones == UINT_MAX ? 0 : zi.max_nr_active_zones;
	info.is_zoned = true;
	snprintf(info.model, sizeof(info.model), "%s", name);
	ret = scan_zones(zd->fd, &info);
	if (ret)
		goto out;

	if (mode != APPEND_EMULATE)
		open_passthru(zd, real);
	if (mode == APPEND_PASSTHRU && zd->ng_fd < 0) {
		zlog_err(TAG, "'%s': append=passthru, but no NVMe generic "
			      "char device opened", path);
		ret = -ENODEV;
		goto out;
	}
	ret = size_cmds(zd, name, &info);
	if (ret)
		goto out;

	zd->zones = calloc(info.nr_zones, sizeof(*zd->zones));
	if (!zd->zones) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < info.nr_zones; i++)
		pthread_mutex_init(&zd->zones[i].lock, NULL);
	nr_zones = info.nr_zones;

	*dev_ret = zdev_alloc(&zbd_ops, &info, zd);
	if (!*dev_ret) {
		ret = -ENOMEM;
		goto out;
	}
	zlog_info(TAG,
		  "%s: %llu zones of %llu MiB (%llu conventional), append %s "
		  "of at most %llu bytes",
		  name, (unsigned long long)info.nr_zones,
		  (unsigned long long)(info.zone_size >> 20),
		  (unsigned long long)info.nr_conv,
		  zd->ng_fd >= 0 ? "by NVMe passthrough"
				 : "emulated by writes",
		  (unsigned long long)info.max_append);
	zd = NULL;
out:
	free_zbd_dev(zd, nr_zones);
	return ret;
}

int zdev_zbd_dev_limits(struct zdev *dev, struct zdev_zbd_limits *lim_ret,
			bool *is_passthru_ret)
{
	if (dev->ops != &zbd_ops)
		return -ENODEV;
	*lim_ret = priv(dev)->lim;
	*is_passthru_ret = priv(dev)->ng_fd >= 0;
	return 0;
}

int zdev_zbd_open(const char *spec, struct zdev **dev_ret)
{
	enum append_mode mode = APPEND_AUTO;
	char path[PATH_MAX];
	int ret;

	*dev_ret = NULL;
	ret = split_spec(spec, path, sizeof(path), &mode);
	if (ret)
		return ret;
	ret = check_path(path);
	if (ret)
		return ret;
	return open_zbd(path, mode, dev_ret);
}

#endif /* HAVE_LIBZBD */
