/* SPDX-License-Identifier: MIT */
/*
 * The operations recorder of `zcow fuse --record FILE`: one text line per
 * successful mutating call, in the order the calls completed in the file
 * system (docs/ops-format.md).  The encoder (ops_encode()) is pure, for
 * the tests and for any other writer of the format; the recorder
 * (struct ops_rec) appends encoded lines to a file under one lock and
 * makes them durable at fsync, sync and close.
 *
 * What it is not: a replayer (zcow crash --ops reads the format), nor a
 * log of reads: reads, getattr, readdir, readlink, getxattr, listxattr and
 * statfs are never recorded.
 *
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_OPS_RECORD_H
#define ZCOW_OPS_RECORD_H

#include <stdbool.h>
#include <stdint.h>

/* The first line of a recording. */
#define OPS_HEADER "zcow-ops 1"
/* chown's "unchanged" id, as (uint32_t)-1. */
#define OPS_ID_UNCHANGED 4294967295u

/* The line kinds of docs/ops-format.md, in its table's order. */
enum ops_kind {
	OPS_MKDIR,	/* path mode uid gid */
	OPS_CREATE,	/* fh path mode flags uid gid */
	OPS_OPEN,	/* fh path flags */
	OPS_CLOSE,	/* fh */
	OPS_WRITE,	/* fh off len crc */
	OPS_TRUNCATE,	/* path size */
	OPS_FSYNC,	/* fh datasync */
	OPS_FSYNCDIR,	/* path */
	OPS_UNLINK,	/* path */
	OPS_RMDIR,	/* path */
	OPS_RENAME,	/* path to flags */
	OPS_LINK,	/* path to */
	OPS_SYMLINK,	/* target (in .to) path uid gid */
	OPS_CHMOD,	/* path mode */
	OPS_CHOWN,	/* path uid gid */
	OPS_UTIMENS,	/* path asec ansec msec mnsec */
	OPS_SETXATTR,	/* path name flags value/value_len */
	OPS_REMOVEXATTR, /* path name */
	OPS_FALLOCATE,	/* fh mode off len */
	OPS_SYNC,	/* nothing */
	OPS_NR_KINDS
};

/* One call; each kind reads the fields its comment above names. */
struct ops_op {
	enum ops_kind kind;
	const char *path;
	const char *to;		/* rename/link: the new name; symlink: the
				 * target */
	const char *name;	/* xattr name */
	uint64_t fh;		/* the recorder's handle number (>= 1) */
	uint64_t off, len, size;
	uint32_t mode;		/* permission bits (MODE, octal);
				 * fallocate: its mode (decimal) */
	uint32_t flags;		/* Linux O_*, RENAME_*, XATTR_* values */
	uint32_t uid, gid;
	uint32_t crc;		/* write: crc32c of the data */
	bool datasync;
	int64_t asec, msec;
	uint32_t ansec, mnsec;
	const void *value;	/* setxattr: @value_len bytes */
	uint64_t value_len;
};

/* The name of line kind @k ("mkdir", ...), NULL past the last. */
const char *ops_kind_name(enum ops_kind k);

/*
 * The percent-encoding of @s (every byte <= 0x20, >= 0x7f and '%' as
 * %XX, upper-case hex) into @out of @size bytes, NUL-terminated.
 * Returns the encoded length (without the NUL) even when it did not fit
 * (then @out holds nothing useful), as snprintf.
 */
uint64_t ops_percent_encode(char *out, uint64_t size, const char *s);

/*
 * The line of @op, with its '\n', into *@line_ret (malloc'd, NUL-
 * terminated; free()).  Returns its length, -EINVAL (a path or name
 * missing or empty, a kind out of range) or -ENOMEM.
 */
int64_t ops_encode(const struct ops_op *op, char **line_ret);

/* A recording being written. */
struct ops_rec;

/*
 * Create (or truncate) @path and write the header line.  Returns 0 and
 * *@rec_ret, or -errno of open/write.
 */
int ops_rec_open(const char *path, struct ops_rec **rec_ret);
/*
 * The recorder's lock: a caller that records a call takes it before the
 * call and releases it after ops_rec_add_locked(), so that the lines
 * keep the order in which the calls completed in the file system.
 */
void ops_rec_lock(struct ops_rec *rec);
void ops_rec_unlock(struct ops_rec *rec);
/*
 * Append @op's line.  OPS_FSYNC, OPS_FSYNCDIR and OPS_SYNC lines are
 * made durable (fflush + fdatasync) before it returns: the recording up
 * to an fsync is on disk when the fsync returns.  After a failure the
 * recording is incomplete: every later call returns the first error and
 * appends nothing.  Returns 0 or -errno.
 */
int ops_rec_add_locked(struct ops_rec *rec, const struct ops_op *op);
/* A new handle number: the smallest one not in use (1, 2, ...); 0 when
 * out of memory. */
uint64_t ops_rec_fh_get_locked(struct ops_rec *rec);
/* Handle number @fh is free again (after its close line). */
void ops_rec_fh_put_locked(struct ops_rec *rec, uint64_t fh);
/* The first error of the recording (0: complete so far). */
int ops_rec_error(struct ops_rec *rec);
/*
 * Flush, fdatasync and close the file, free @rec.  Returns 0, the first
 * error the recording met, or the close's -errno.
 */
int ops_rec_close(struct ops_rec *rec);

#endif /* ZCOW_OPS_RECORD_H */
