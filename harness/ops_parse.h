/* SPDX-License-Identifier: MIT */
/*
 * The recorded-operations format (`zcow fuse --record FILE` writes it,
 * `zcow crash --ops FILE` replays it): a reader that turns the text into
 * one struct zops_line per call, every field checked and every path and
 * name percent-decoded.  The format is docs/crash.md's "Recorded
 * operations" (one call per line, "zcow-ops 1" first).
 *
 * It is not the replay (harness/crash_ops.c maps the lines to the zcow
 * calls) and knows nothing of a file system.
 *
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_OPS_PARSE_H
#define ZCOW_OPS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_record.h"

/* The line kinds are ops_record.h's enum ops_kind (OPS_MKDIR...). */

/* The longest path, name and symlink target the reader takes (bytes,
 * decoded): Linux's PATH_MAX, XATTR_NAME_MAX, and a symlink's 4095. */
#define OPS_PATH_MAX		4095u
#define OPS_XATTR_NAME_MAX	255u
/* The largest xattr value (XATTR_SIZE_MAX). */
#define OPS_XATTR_VALUE_MAX	65536u
/* utimens nanosecond values, as UTIME_NOW and UTIME_OMIT. */
#define OPS_UTIME_NOW		((1u << 30) - 1)
#define OPS_UTIME_OMIT		((1u << 30) - 2)

/*
 * One call.  The fields a kind does not have are 0 / NULL.
 *   path: PATH, FROM (rename, link), TARGET (symlink: any bytes but NUL)
 *   path2: TO (rename, link), PATH (symlink)
 */
struct zops_line {
	enum ops_kind kind;
	unsigned int line;	/* 1-based line of the file */
	char *path, *path2;	/* decoded, NUL-terminated (malloc'd) */
	char *name;		/* setxattr, removexattr: decoded */
	uint8_t *value;		/* setxattr: decoded (NULL when empty) */
	uint64_t value_len;
	uint64_t fh;		/* handle number >= 1 */
	uint64_t off, len;	/* write, fallocate */
	uint64_t size;		/* truncate */
	uint32_t mode;		/* mkdir, create, chmod: <= 07777;
				 * fallocate: its mode (decimal) */
	uint32_t flags;		/* create, open: O_*; rename: RENAME_*;
				 * setxattr: XATTR_* */
	uint32_t uid, gid;	/* chown: 4294967295 = unchanged */
	uint32_t crc;		/* write: the program's data's crc32c */
	bool is_datasync;	/* fsync DATASYNC = 1 */
	int64_t asec, msec;	/* utimens */
	uint32_t ansec, mnsec;	/* < 1e9, or OPS_UTIME_NOW / _OMIT */
};

struct zops {
	struct zops_line *l;
	uint64_t nr, cap;
};


/*
 * Decode one percent-encoded field @in (@n bytes) into *out_ret
 * (malloc'd, NUL-terminated), its length in *len_ret (may be NULL).
 * Every byte <= 0x20, >= 0x7f and '%' must come as %XX (upper-case hex).
 * @allow_nul: a decoded NUL is data (an xattr value), else refused.
 * 0, -EINVAL (the reason in @why), -ENOMEM.
 */
int zops_decode(const char *in, size_t n, bool allow_nul, char **out_ret,
		size_t *len_ret, const char **why);

/*
 * Read recorded operations from @text (@len bytes; @name names it in
 * messages).  0 with *z_ret set (free with zops_free()), -EINVAL with
 * "NAME:LINE: what is wrong" in @err, or -ENOMEM.
 */
int zops_parse_buf(const char *name, const char *text, size_t len,
		   struct zops **z_ret, char *err, size_t elen);
/* As zops_parse_buf() on the file @path; -errno when it cannot be read
 * ("PATH: reason" in @err). */
int zops_parse_file(const char *path, struct zops **z_ret, char *err,
		    size_t elen);
void zops_free(struct zops *z);

#endif /* ZCOW_OPS_PARSE_H */
