// SPDX-License-Identifier: MIT
/*
 * The operations recorder (harness/ops_record.h): the line encoder of
 * docs/ops-format.md and a file the lines are appended to.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "ops_record.h"

static const char *const kind_names[OPS_NR_KINDS] = {
	[OPS_MKDIR] = "mkdir",		[OPS_CREATE] = "create",
	[OPS_OPEN] = "open",		[OPS_CLOSE] = "close",
	[OPS_WRITE] = "write",		[OPS_TRUNCATE] = "truncate",
	[OPS_FSYNC] = "fsync",		[OPS_FSYNCDIR] = "fsyncdir",
	[OPS_UNLINK] = "unlink",	[OPS_RMDIR] = "rmdir",
	[OPS_RENAME] = "rename",	[OPS_LINK] = "link",
	[OPS_SYMLINK] = "symlink",	[OPS_CHMOD] = "chmod",
	[OPS_CHOWN] = "chown",		[OPS_UTIMENS] = "utimens",
	[OPS_SETXATTR] = "setxattr",	[OPS_REMOVEXATTR] = "removexattr",
	[OPS_FALLOCATE] = "fallocate",	[OPS_SYNC] = "sync",
};

const char *ops_kind_name(enum ops_kind k)
{
	return (unsigned int)k < OPS_NR_KINDS ? kind_names[k] : NULL;
}

/* The percent-encoding of byte @c into @e: its width, 1 or 3. */
static int encode_byte(unsigned char c, char e[3])
{
	static const char hex[] = "0123456789ABCDEF";

	if (c > 0x20 && c < 0x7f && c != '%') {
		e[0] = (char)c;
		return 1;
	}
	e[0] = '%';
	e[1] = hex[c >> 4];
	e[2] = hex[c & 15];
	return 3;
}

uint64_t ops_percent_encode(char *out, uint64_t size, const char *s)
{
	uint64_t n = 0;

	for (; *s; s++) {
		char e[3];
		int w = encode_byte((unsigned char)*s, e), i;

		for (i = 0; i < w; i++, n++)
			if (n + 1 < size)
				out[n] = e[i];
	}
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

/* " " and the percent-encoding of @s onto @m; false if @s is empty. */
static bool put_name(FILE *m, const char *s)
{
	char e[3];

	if (!s || !*s)
		return false;
	fputc(' ', m);
	for (; *s; s++)
		fwrite(e, 1, (size_t)encode_byte((unsigned char)*s, e), m);
	return true;
}

static void put_hex(FILE *m, const void *value, uint64_t len)
{
	const unsigned char *p = value;
	uint64_t i;

	if (!len) {
		fputs(" -", m);
		return;
	}
	fputc(' ', m);
	for (i = 0; i < len; i++)
		fprintf(m, "%02x", p[i]);
}

/* The fields after the kind; false if a required name is missing. */
static bool put_fields(FILE *m, const struct ops_op *op)
{
	switch (op->kind) {
	case OPS_MKDIR:
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %04o %" PRIu32 " %" PRIu32, op->mode & 07777,
			op->uid, op->gid);
		return true;
	case OPS_CREATE:
		fprintf(m, " %" PRIu64, op->fh);
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %04o %" PRIu32 " %" PRIu32 " %" PRIu32,
			op->mode & 07777, op->flags, op->uid, op->gid);
		return true;
	case OPS_OPEN:
		fprintf(m, " %" PRIu64, op->fh);
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %" PRIu32, op->flags);
		return true;
	case OPS_CLOSE:
		fprintf(m, " %" PRIu64, op->fh);
		return true;
	case OPS_WRITE:
		fprintf(m, " %" PRIu64 " %" PRIu64 " %" PRIu64 " %08" PRIx32,
			op->fh, op->off, op->len, op->crc);
		return true;
	case OPS_TRUNCATE:
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %" PRIu64, op->size);
		return true;
	case OPS_FSYNC:
		fprintf(m, " %" PRIu64 " %d", op->fh, op->datasync ? 1 : 0);
		return true;
	case OPS_FSYNCDIR:
	case OPS_UNLINK:
	case OPS_RMDIR:
		return put_name(m, op->path);
	case OPS_RENAME:
		if (!put_name(m, op->path) || !put_name(m, op->to))
			return false;
		fprintf(m, " %" PRIu32, op->flags);
		return true;
	case OPS_LINK:
		return put_name(m, op->path) && put_name(m, op->to);
	case OPS_SYMLINK:
		if (!put_name(m, op->to) || !put_name(m, op->path))
			return false;
		fprintf(m, " %" PRIu32 " %" PRIu32, op->uid, op->gid);
		return true;
	case OPS_CHMOD:
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %04o", op->mode & 07777);
		return true;
	case OPS_CHOWN:
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %" PRIu32 " %" PRIu32, op->uid, op->gid);
		return true;
	case OPS_UTIMENS:
		if (!put_name(m, op->path))
			return false;
		fprintf(m, " %" PRId64 " %" PRIu32 " %" PRId64 " %" PRIu32,
			op->asec, op->ansec, op->msec, op->mnsec);
		return true;
	case OPS_SETXATTR:
		if (!put_name(m, op->path) || !put_name(m, op->name))
			return false;
		fprintf(m, " %" PRIu32, op->flags);
		put_hex(m, op->value, op->value_len);
		return true;
	case OPS_REMOVEXATTR:
		return put_name(m, op->path) && put_name(m, op->name);
	case OPS_FALLOCATE:
		fprintf(m, " %" PRIu64 " %" PRIu32 " %" PRIu64 " %" PRIu64,
			op->fh, op->mode, op->off, op->len);
		return true;
	case OPS_SYNC:
		return true;
	case OPS_NR_KINDS:
		break;
	}
	return false;
}

int64_t ops_encode(const struct ops_op *op, char **line_ret)
{
	const char *kind = ops_kind_name(op->kind);
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	bool ok;

	*line_ret = NULL;
	if (!kind)
		return -EINVAL;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	fputs(kind, m);
	ok = put_fields(m, op);
	fputc('\n', m);
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	if (!ok) {
		free(buf);
		return -EINVAL;
	}
	*line_ret = buf;
	return (int64_t)len;
}

struct ops_rec {
	pthread_mutex_t lock;
	FILE *f;
	int err;		/* the first error: nothing appended after it */
	uint8_t *fh_used;	/* [fh]: handle number fh in use */
	uint64_t fh_cap;
};

int ops_rec_open(const char *path, struct ops_rec **rec_ret)
{
	struct ops_rec *rec = calloc(1, sizeof(*rec));
	int err;

	*rec_ret = NULL;
	if (!rec)
		return -ENOMEM;
	rec->f = fopen(path, "w");
	if (!rec->f) {
		err = -errno;
		free(rec);
		return err;
	}
	if (fprintf(rec->f, "%s\n", OPS_HEADER) < 0 || fflush(rec->f)) {
		err = -errno;
		fclose(rec->f);
		free(rec);
		return err ? err : -EIO;
	}
	pthread_mutex_init(&rec->lock, NULL);
	*rec_ret = rec;
	return 0;
}

void ops_rec_lock(struct ops_rec *rec)
{
	pthread_mutex_lock(&rec->lock);
}

void ops_rec_unlock(struct ops_rec *rec)
{
	pthread_mutex_unlock(&rec->lock);
}

/* fflush + fdatasync of the recording. */
static int rec_sync(struct ops_rec *rec)
{
	if (fflush(rec->f) || fdatasync(fileno(rec->f)))
		return errno ? -errno : -EIO;
	return 0;
}

int ops_rec_add_locked(struct ops_rec *rec, const struct ops_op *op)
{
	char *line;
	int64_t len = 0;
	int err;

	if (rec->err)
		return rec->err;
	len = ops_encode(op, &line);
	if (len < 0) {
		err = (int)len;
		goto out;
	}
	err = fwrite(line, 1, (size_t)len, rec->f) == (size_t)len ? 0 : -EIO;
	free(line);
	/* ORDER: the lines up to an fsync are on disk before it returns */
	if (!err && (op->kind == OPS_FSYNC || op->kind == OPS_FSYNCDIR ||
		     op->kind == OPS_SYNC))
		err = rec_sync(rec);
out:
	if (err) {
		fprintf(stderr, "zcow fuse: recording the %s call failed (%s): the recording stops here, incomplete\n",
			ops_kind_name(op->kind) ? ops_kind_name(op->kind) : "?",
			strerror(-err));
		rec->err = err;
	}
	return err;
}

uint64_t ops_rec_fh_get_locked(struct ops_rec *rec)
{
	uint64_t fh;

	for (fh = 1; fh < rec->fh_cap && rec->fh_used[fh]; fh++)
		;
	if (fh >= rec->fh_cap) {
		uint64_t old = rec->fh_cap;

		if (zcow_grow(&rec->fh_used, &rec->fh_cap, fh + 1, 1))
			return 0;
		memset(rec->fh_used + old, 0, rec->fh_cap - old);
	}
	rec->fh_used[fh] = 1;
	return fh;
}

void ops_rec_fh_put_locked(struct ops_rec *rec, uint64_t fh)
{
	if (fh < rec->fh_cap)
		rec->fh_used[fh] = 0;
}

int ops_rec_error(struct ops_rec *rec)
{
	int err;

	pthread_mutex_lock(&rec->lock);
	err = rec->err;
	pthread_mutex_unlock(&rec->lock);
	return err;
}

int ops_rec_close(struct ops_rec *rec)
{
	int err, cerr;

	if (!rec)
		return 0;
	err = rec_sync(rec);
	cerr = fclose(rec->f) ? -errno : 0;
	if (rec->err)
		err = rec->err;
	else if (!err)
		err = cerr;
	pthread_mutex_destroy(&rec->lock);
	free(rec->fh_used);
	free(rec);
	return err;
}
