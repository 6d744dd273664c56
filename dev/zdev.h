/* SPDX-License-Identifier: MIT */
/*
 * zdev: the zoned-device interface of zcow.
 *
 * Every byte the file-system core reads or writes goes through a struct zdev
 * and the checked zdev_*() wrappers below.  A backend (the simulator in sim/,
 * the emulated-zones file backend, the real-device backend on libzbd) fills a
 * const struct zdev_ops; nothing above this header knows which backend it
 * talks to.  The wrappers check alignment and bounds, count commands and bytes
 * per I/O class, and feed an optional trace hook.
 *
 * Units: offsets and lengths are bytes (uint64_t).  Zones are named by their
 * start offset.  Zone fields and conditions mirror the kernel's struct
 * blk_zone so traces line up with `blkzone report`.
 *
 * Errors: every function returns 0 (or a count where stated) or -errno, with
 * the errno a Linux zoned block device returns for the same command
 * (see docs/device-rules.md).
 *
 * Who may include this: everything.  Only dev/zdev_zbd.c may include libzbd
 * or <linux/blkzoned.h>.
 */
#ifndef ZCOW_ZDEV_H
#define ZCOW_ZDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

/* Zone types, numbered as enum blk_zone_type. */
enum zdev_zone_type {
	ZDEV_ZONE_CONV = 1,	/* conventional: random writes allowed */
	ZDEV_ZONE_SEQ_REQ = 2,	/* sequential write required */
	ZDEV_ZONE_SEQ_PREF = 3,	/* sequential write preferred (not simulated) */
};

/* Zone conditions, numbered as enum blk_zone_cond. */
enum zdev_zone_cond {
	ZDEV_COND_NOT_WP = 0x0,	/* conventional zone: no write pointer */
	ZDEV_COND_EMPTY = 0x1,
	ZDEV_COND_IMP_OPEN = 0x2,
	ZDEV_COND_EXP_OPEN = 0x3,
	ZDEV_COND_CLOSED = 0x4,
	ZDEV_COND_READONLY = 0xd,
	ZDEV_COND_FULL = 0xe,
	ZDEV_COND_OFFLINE = 0xf,
};

/*
 * One zone as reported.  @wp follows the kernel's report: for a full zone it
 * is start + len (not start + capacity), for a conventional zone it is
 * start + len as well.
 */
struct zdev_zone {
	uint64_t start;
	uint64_t len;
	uint64_t capacity;
	uint64_t wp;
	uint8_t type;	/* enum zdev_zone_type */
	uint8_t cond;	/* enum zdev_zone_cond */
};

/* I/O class carried by every command: names it in traces and crash points. */
enum zdev_class {
	ZDEV_CLASS_SB,		/* superblock (log) */
	ZDEV_CLASS_META,	/* metadata tree nodes */
	ZDEV_CLASS_LOG,		/* tree-log nodes */
	ZDEV_CLASS_DATA,	/* file data */
	ZDEV_CLASS_ZONE,	/* zone management */
	ZDEV_CLASS_FLUSH,	/* cache flush */
	ZDEV_CLASS_OTHER,	/* anything else (tools, raw workloads) */
	ZDEV_CLASS_RELOC,	/* file data copied by relocation (reclaim) */
	ZDEV_CLASS_REPLACE,	/* device replace: copies and zero fills */
	ZDEV_NR_CLASSES
};

/* Device commands, for counting and tracing. */
enum zdev_op {
	ZDEV_OP_READ,
	ZDEV_OP_WRITE,
	ZDEV_OP_APPEND,
	ZDEV_OP_RESET,
	ZDEV_OP_OPEN,
	ZDEV_OP_CLOSE,
	ZDEV_OP_FINISH,
	ZDEV_OP_FLUSH,
	ZDEV_OP_REPORT,
	ZDEV_NR_OPS
};

/* Zone management actions (a subset of enum zdev_op). */
enum zdev_zone_action {
	ZDEV_ZONE_RESET = ZDEV_OP_RESET,
	ZDEV_ZONE_OPEN = ZDEV_OP_OPEN,
	ZDEV_ZONE_CLOSE = ZDEV_OP_CLOSE,
	ZDEV_ZONE_FINISH = ZDEV_OP_FINISH,
};

/* Write flags. */
#define ZDEV_WRITE_FUA	(1u << 0)	/* durable on completion (Force Unit Access) */

/*
 * Device geometry.  All zones have the same size; sequential zones all have
 * the same capacity (zone_capacity <= zone_size).  Conventional zones come
 * first (zones 0 .. nr_conv - 1), as on null_blk and SMR drives.
 */
struct zdev_info {
	uint64_t zone_size;	/* bytes, power of two */
	uint64_t zone_capacity;	/* bytes writable in a sequential zone */
	uint64_t nr_zones;
	uint64_t nr_conv;	/* conventional zones at the start */
	uint64_t size;		/* device size in bytes = nr_zones * zone_size */
	uint32_t max_open;	/* 0 = no limit */
	uint32_t max_active;	/* 0 = no limit */
	uint64_t max_append;	/* bytes per zone append; 0 = no zone append */
	uint32_t lba_size;	/* logical block size, bytes */
	bool is_zoned;		/* false: emulated (all conventional, seed 002) */
	char model[64];		/* "sim", "file", "nvme0n1", ... */
};

/* Per-class, per-op command and byte counters kept by the wrappers. */
struct zdev_stats {
	uint64_t cmds[ZDEV_NR_CLASSES][ZDEV_NR_OPS];
	uint64_t bytes[ZDEV_NR_CLASSES][ZDEV_NR_OPS];
	uint64_t errors[ZDEV_NR_CLASSES][ZDEV_NR_OPS];
};

/* One traced command, handed to the trace hook after it completes. */
struct zdev_trace_rec {
	uint64_t seq;		/* 1-based command number on this device */
	enum zdev_class cls;
	enum zdev_op op;
	uint64_t zone;		/* zone start */
	uint64_t off;		/* command offset (append: where it landed) */
	uint64_t len;
	int result;		/* 0 or -errno */
};

typedef void (*zdev_trace_fn)(void *arg, const struct zdev_trace_rec *rec);

struct zdev;

/*
 * The backend table.  Backends only see commands the wrappers accepted:
 * lba-aligned, inside the device, len > 0, zone ops zone-aligned.
 */
struct zdev_ops {
	/* Fill up to *nr_ret zones starting at the zone holding @from. */
	int (*report)(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		      unsigned int *nr_ret);
	int (*read)(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
		    enum zdev_class cls);
	int (*write)(struct zdev *dev, const void *buf, uint64_t len,
		     uint64_t off, unsigned int flags, enum zdev_class cls);
	/* Append to the zone starting at @zone; *off_ret = where it landed. */
	int (*append)(struct zdev *dev, const void *buf, uint64_t len,
		      uint64_t zone, unsigned int flags, enum zdev_class cls,
		      uint64_t *off_ret);
	/* @start = 0 with @len = 0 means every zone of the device. */
	int (*zone_mgmt)(struct zdev *dev, enum zdev_zone_action action,
			 uint64_t start, uint64_t len, enum zdev_class cls);
	int (*flush)(struct zdev *dev);
	/* Release backend state (the wrapper frees the struct zdev after). */
	int (*close)(struct zdev *dev);
};

struct zdev {
	const struct zdev_ops *ops;
	struct zdev_info info;
	void *priv;			/* backend state */
	struct zdev_stats stats;	/* updated under stats_lock */
	pthread_mutex_t stats_lock;
	uint64_t seq;			/* commands issued */
	zdev_trace_fn trace;		/* NULL: no trace */
	void *trace_arg;
	char spec[256];			/* the spec it was opened with */
};

/*
 * A backend a spec prefix selects.  "file" and real devices ("/dev/...") are
 * built in; others (the simulator's "sim") are registered by the program.
 */
struct zdev_backend {
	const char *prefix;	/* matched against the spec up to ':' */
	int (*open)(const char *params, struct zdev **dev_ret);
};

/* Register a backend; returns 0, or -EEXIST / -ENOSPC. */
int zdev_register_backend(const struct zdev_backend *backend);

/*
 * Open a device from a spec string:
 *   sim:zones=64,zone_size=64M,...   (registered simulator backend)
 *   file:PATH,zone_size=64M          (emulated conventional zones)
 *   /dev/nvmeXnY                     (real zoned device through libzbd)
 * Returns 0, -EINVAL (bad spec; a message names the bad key), -ENOENT,
 * -EOPNOTSUPP (backend not built in) or another -errno of the backend.
 */
int zdev_open(const char *spec, struct zdev **dev_ret);

/* Close the device (saves simulator images).  Returns 0 or -errno. */
int zdev_close(struct zdev *dev);

/* Backends: allocate a struct zdev with ops, geometry and private state. */
struct zdev *zdev_alloc(const struct zdev_ops *ops, const struct zdev_info *info,
			void *priv);
/* Backends: free what zdev_alloc() allocated. */
void zdev_free(struct zdev *dev);

/* The checked command wrappers: the only way the core touches a device. */
int zdev_report(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		unsigned int *nr_ret);
/* Report the one zone that holds byte @off. */
int zdev_report_zone(struct zdev *dev, uint64_t off, struct zdev_zone *zone_ret);
int zdev_read(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
	      enum zdev_class cls);
int zdev_write(struct zdev *dev, const void *buf, uint64_t len, uint64_t off,
	       unsigned int flags, enum zdev_class cls);
int zdev_append(struct zdev *dev, const void *buf, uint64_t len, uint64_t zone,
		unsigned int flags, enum zdev_class cls, uint64_t *off_ret);
int zdev_zone_mgmt(struct zdev *dev, enum zdev_zone_action action,
		   uint64_t start, uint64_t len, enum zdev_class cls);
int zdev_reset_zone(struct zdev *dev, uint64_t start, enum zdev_class cls);
int zdev_finish_zone(struct zdev *dev, uint64_t start, enum zdev_class cls);
int zdev_flush(struct zdev *dev);

/* Install (or with NULL remove) the trace hook. */
void zdev_set_trace(struct zdev *dev, zdev_trace_fn fn, void *arg);
/* Copy the counters out under their lock. */
void zdev_get_stats(struct zdev *dev, struct zdev_stats *stats_ret);

/* Geometry helpers. */
static inline uint64_t zdev_zone_no(const struct zdev *dev, uint64_t off)
{
	return off / dev->info.zone_size;
}

static inline uint64_t zdev_zone_start(const struct zdev *dev, uint64_t off)
{
	return off - off % dev->info.zone_size;
}

static inline bool zdev_zone_is_seq(const struct zdev_zone *z)
{
	return z->type != ZDEV_ZONE_CONV;
}

/* Names for printing. */
const char *zdev_class_name(enum zdev_class cls);
const char *zdev_op_name(enum zdev_op op);
const char *zdev_cond_name(enum zdev_zone_cond cond);	/* "em", "oi", ... */
const char *zdev_type_name(enum zdev_zone_type type);
/* Parse a class name ("sb", "meta", "log", "data", "zone", "flush",
 * "other"); returns the class or -EINVAL. */
int zdev_class_parse(const char *name);

/*
 * Spec parsing shared by the backends.
 *
 * zdev_spec_next() walks "key=value,key=value": it copies the next key and
 * value (value "" for a bare key) and advances *pos.  Returns 1 when it found
 * a pair, 0 at the end, -EINVAL when a key or value is too long.
 *
 * zdev_parse_size() parses "64M", "4k", "1G", "512" (binary suffixes k, m,
 * g, t, case-insensitive, optional "iB"/"B").  Returns 0 or -EINVAL.
 * zdev_parse_u64() parses a plain decimal or 0x-hex number.
 */
int zdev_spec_next(const char **pos, char *key, size_t key_len, char *val,
		   size_t val_len);
int zdev_parse_size(const char *s, uint64_t *ret);
int zdev_parse_u64(const char *s, uint64_t *ret);

/*
 * Backends on file descriptors: pread (@is_write false) or pwrite all of
 * @len bytes at @off, retrying short transfers and EINTR.  Returns 0,
 * -EIO when the file ends first, or -errno.
 */
int zdev_fd_io(int fd, void *buf, uint64_t len, uint64_t off, bool is_write);

/* Built-in backends (dev/zdev_file.c, dev/zdev_zbd.c). */
int zdev_file_open(const char *params, struct zdev **dev_ret);
int zdev_zbd_open(const char *path, struct zdev **dev_ret);

#endif /* ZCOW_ZDEV_H */
