// SPDX-License-Identifier: MIT
/*
 * The recorded-operations reader (harness/ops_parse.h).  Strict: the
 * header, one space between fields, the exact number of fields per
 * kind, decimal numbers without sign or leading '+', octal modes,
 * percent-encoded paths.  Every refusal names the line and what is wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "ops_parse.h"

#define MAX_FIELDS 8
#define HEADER "zcow-ops 1"

/* The field count of each line kind (the keyword included); the
 * keywords are ops_kind_name()'s, the recorder's. */
static const unsigned int kind_fields[OPS_NR_KINDS] = {
	[OPS_MKDIR] = 5,
	[OPS_CREATE] = 7,
	[OPS_OPEN] = 4,
	[OPS_CLOSE] = 2,
	[OPS_WRITE] = 5,
	[OPS_TRUNCATE] = 3,
	[OPS_FSYNC] = 3,
	[OPS_FSYNCDIR] = 2,
	[OPS_UNLINK] = 2,
	[OPS_RMDIR] = 2,
	[OPS_RENAME] = 4,
	[OPS_LINK] = 3,
	[OPS_SYMLINK] = 5,
	[OPS_CHMOD] = 3,
	[OPS_CHOWN] = 4,
	[OPS_UTIMENS] = 6,
	[OPS_SETXATTR] = 5,
	[OPS_REMOVEXATTR] = 3,
	[OPS_FALLOCATE] = 5,
	[OPS_SYNC] = 1,
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int zops_decode(const char *in, size_t n, bool allow_nul, char **out_ret,
		size_t *len_ret, const char **why)
{
	char *out = malloc(n + 1);
	size_t i, o = 0;

	if (!out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		int h, l;

		if (c != '%') {
			if (c <= 0x20 || c >= 0x7f) {
				*why = "a byte <= 0x20 or >= 0x7f not percent-encoded";
				goto bad;
			}
			out[o++] = (char)c;
			continue;
		}
		if (i + 2 >= n) {
			*why = "'%' not followed by two hex digits";
			goto bad;
		}
		h = hexval(in[i + 1]);
		l = hexval(in[i + 2]);
		if (h < 0 || l < 0) {
			*why = "'%' not followed by two hex digits";
			goto bad;
		}
		if ((in[i + 1] >= 'a' && in[i + 1] <= 'f') ||
		    (in[i + 2] >= 'a' && in[i + 2] <= 'f')) {
			*why = "percent-encoding with lower-case hex (%XX is upper-case)";
			goto bad;
		}
		c = (unsigned char)(h << 4 | l);
		if (!c && !allow_nul) {
			*why = "%00: a NUL byte in a path or name";
			goto bad;
		}
		out[o++] = (char)c;
		i += 2;
	}
	out[o] = 0;
	*out_ret = out;
	if (len_ret)
		*len_ret = o;
	return 0;
bad:
	free(out);
	return -EINVAL;
}

/* One file's reading state: where, and the first error. */
struct rd {
	const char *name;
	unsigned int line;
	char *err;
	size_t elen;
};

static int bad(struct rd *rd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int bad(struct rd *rd, const char *fmt, ...)
{
	int n = snprintf(rd->err, rd->elen, "%s:%u: ", rd->name, rd->line);
	va_list ap;

	if (n >= 0 && (size_t)n < rd->elen) {
		va_start(ap, fmt);
		vsnprintf(rd->err + n, rd->elen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A decimal number <= @max: digits only, no sign, no leading zeros
 * beyond "0". */
static int dec(struct rd *rd, const char *f, const char *what, uint64_t max,
	       uint64_t *v)
{
	uint64_t x = 0;
	const char *p;

	if (!*f)
		return bad(rd, "%s: empty", what);
	if (f[0] == '0' && f[1])
		return bad(rd, "%s '%s': a decimal number without leading zeros", what, f);
	for (p = f; *p; p++) {
		if (*p < '0' || *p > '9')
			return bad(rd, "%s '%s': not a decimal number", what, f);
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return bad(rd, "%s '%s': too large", what, f);
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (x > max)
		return bad(rd, "%s %s: larger than %" PRIu64, what, f, max);
	*v = x;
	return 0;
}

static int dec32(struct rd *rd, const char *f, const char *what, uint32_t *v)
{
	uint64_t x;
	int ret = dec(rd, f, what, UINT32_MAX, &x);

	*v = (uint32_t)x;
	return ret;
}

/* A signed decimal (utimens seconds). */
static int sdec(struct rd *rd, const char *f, const char *what, int64_t *v)
{
	uint64_t x;
	int ret;

	if (f[0] == '-') {
		ret = dec(rd, f + 1, what, (uint64_t)INT64_MAX + 1, &x);
		if (!ret && !x)
			return bad(rd, "%s '%s': not a decimal number", what, f);
		*v = x ? (int64_t)(0 - x) : 0;
		return ret;
	}
	ret = dec(rd, f, what, INT64_MAX, &x);
	*v = (int64_t)x;
	return ret;
}

/* An octal permission mode: 1..5 octal digits, <= 07777. */
static int mode(struct rd *rd, const char *f, uint32_t *v)
{
	uint32_t x = 0;
	const char *p;

	if (!*f || strlen(f) > 5)
		return bad(rd, "MODE '%s': an octal mode such as 0644", f);
	for (p = f; *p; p++) {
		if (*p < '0' || *p > '7')
			return bad(rd, "MODE '%s': an octal mode such as 0644", f);
		x = x * 8 + (uint32_t)(*p - '0');
	}
	if (x > 07777)
		return bad(rd, "MODE '%s': permission bits only (at most 07777)", f);
	*v = x;
	return 0;
}

static int fh(struct rd *rd, const char *f, uint64_t *v)
{
	int ret = dec(rd, f, "FH", UINT64_MAX, v);

	if (!ret && !*v)
		return bad(rd, "FH 0: handles are numbered from 1");
	return ret;
}

/* A path: percent-decoded, absolute, no empty, "." or ".." component,
 * no trailing '/' (but "/" itself). */
static int path(struct rd *rd, const char *f, const char *what, char **out)
{
	const char *why = NULL, *c;
	size_t n;
	int ret = zops_decode(f, strlen(f), false, out, &n, &why);

	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return bad(rd, "%s '%s': %s", what, f, why);
	if ((*out)[0] != '/')
		why = "not an absolute path";
	else if (n > OPS_PATH_MAX)
		why = "longer than 4095 bytes";
	else if (n > 1 && (*out)[n - 1] == '/')
		why = "ends in '/'";
	for (c = *out; !why && *c; c++) {
		size_t l;

		if (*c != '/')
			continue;
		l = strcspn(c + 1, "/");
		if (!l && c[1])
			why = "an empty component ('//')";
		else if ((l == 1 && c[1] == '.') ||
			 (l == 2 && c[1] == '.' && c[2] == '.'))
			why = "a '.' or '..' component";
	}
	if (why) {
		free(*out);
		*out = NULL;
		return bad(rd, "%s '%s': %s", what, f, why);
	}
	return 0;
}

/* A name or a symlink target: decoded, 1..@max bytes. */
static int name(struct rd *rd, const char *f, const char *what, size_t max,
		char **out)
{
	const char *why = NULL;
	size_t n;
	int ret = zops_decode(f, strlen(f), false, out, &n, &why);

	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return bad(rd, "%s '%s': %s", what, f, why);
	if (n > max) {
		free(*out);
		*out = NULL;
		return bad(rd, "%s: longer than %zu bytes", what, max);
	}
	return 0;
}

static int crc(struct rd *rd, const char *f, uint32_t *v)
{
	uint32_t x = 0;
	int i;

	if (strlen(f) != 8)
		return bad(rd, "CRC32C '%s': 8 hex digits", f);
	for (i = 0; i < 8; i++) {
		int h = hexval(f[i]);

		if (h < 0)
			return bad(rd, "CRC32C '%s': 8 hex digits", f);
		x = x << 4 | (uint32_t)h;
	}
	*v = x;
	return 0;
}

/* HEXVALUE: lower-case hex pairs, or "-" for an empty value. */
static int hexvalue(struct rd *rd, const char *f, struct zops_line *l)
{
	size_t n = strlen(f), i;

	if (!strcmp(f, "-"))
		return 0;
	if (!n || n % 2)
		return bad(rd, "HEXVALUE: an even number of hex digits, or '-' when empty");
	if (n / 2 > OPS_XATTR_VALUE_MAX)
		return bad(rd, "HEXVALUE: longer than %u bytes", OPS_XATTR_VALUE_MAX);
	l->value = malloc(n / 2);
	if (!l->value)
		return -ENOMEM;
	for (i = 0; i < n; i += 2) {
		int h = hexval(f[i]), lo = hexval(f[i + 1]);

		if (h < 0 || lo < 0 || (f[i] >= 'A' && f[i] <= 'F') ||
		    (f[i + 1] >= 'A' && f[i + 1] <= 'F'))
			return bad(rd, "HEXVALUE: lower-case hex digits, or '-' when empty");
		l->value[i / 2] = (uint8_t)(h << 4 | lo);
	}
	l->value_len = n / 2;
	return 0;
}

static int nsec(struct rd *rd, const char *f, const char *what, uint32_t *v)
{
	int ret = dec32(rd, f, what, v);

	if (!ret && *v > 999999999u && *v != OPS_UTIME_NOW &&
	    *v != OPS_UTIME_OMIT)
		return bad(rd, "%s %u: below 1000000000, or %u (UTIME_NOW), %u (UTIME_OMIT)",
			   what, *v, OPS_UTIME_NOW, OPS_UTIME_OMIT);
	return ret;
}

/* The fields of one line (@f[0] the keyword) into @l. */
static int fields(struct rd *rd, char **f, struct zops_line *l)
{
	uint64_t x = 0;
	int ret = 0;

	switch (l->kind) {
	case OPS_MKDIR:
		ret = path(rd, f[1], "PATH", &l->path) ?: mode(rd, f[2], &l->mode) ?:
		      dec32(rd, f[3], "UID", &l->uid) ?: dec32(rd, f[4], "GID", &l->gid);
		break;
	case OPS_CREATE:
		ret = fh(rd, f[1], &l->fh) ?: path(rd, f[2], "PATH", &l->path) ?:
		      mode(rd, f[3], &l->mode) ?: dec32(rd, f[4], "FLAGS", &l->flags) ?:
		      dec32(rd, f[5], "UID", &l->uid) ?: dec32(rd, f[6], "GID", &l->gid);
		break;
	case OPS_OPEN:
		ret = fh(rd, f[1], &l->fh) ?: path(rd, f[2], "PATH", &l->path) ?:
		      dec32(rd, f[3], "FLAGS", &l->flags);
		break;
	case OPS_CLOSE:
		ret = fh(rd, f[1], &l->fh);
		break;
	case OPS_WRITE:
		ret = fh(rd, f[1], &l->fh) ?: dec(rd, f[2], "OFF", INT64_MAX, &l->off) ?:
		      dec(rd, f[3], "LEN", INT64_MAX, &l->len) ?: crc(rd, f[4], &l->crc);
		if (!ret && l->off + l->len > (uint64_t)INT64_MAX)
			ret = bad(rd, "OFF + LEN beyond the largest file offset");
		break;
	case OPS_TRUNCATE:
		ret = path(rd, f[1], "PATH", &l->path) ?:
		      dec(rd, f[2], "SIZE", INT64_MAX, &l->size);
		break;
	case OPS_FSYNC:
		ret = fh(rd, f[1], &l->fh) ?: dec(rd, f[2], "DATASYNC", 1, &x);
		l->is_datasync = x == 1;
		break;
	case OPS_FSYNCDIR:
	case OPS_UNLINK:
	case OPS_RMDIR:
		ret = path(rd, f[1], "PATH", &l->path);
		break;
	case OPS_RENAME:
		ret = path(rd, f[1], "FROM", &l->path) ?: path(rd, f[2], "TO", &l->path2) ?:
		      dec32(rd, f[3], "FLAGS", &l->flags);
		break;
	case OPS_LINK:
		ret = path(rd, f[1], "FROM", &l->path) ?: path(rd, f[2], "TO", &l->path2);
		break;
	case OPS_SYMLINK:
		ret = name(rd, f[1], "TARGET", OPS_PATH_MAX, &l->path) ?:
		      path(rd, f[2], "PATH", &l->path2) ?:
		      dec32(rd, f[3], "UID", &l->uid) ?: dec32(rd, f[4], "GID", &l->gid);
		break;
	case OPS_CHMOD:
		ret = path(rd, f[1], "PATH", &l->path) ?: mode(rd, f[2], &l->mode);
		break;
	case OPS_CHOWN:
		ret = path(rd, f[1], "PATH", &l->path) ?: dec32(rd, f[2], "UID", &l->uid) ?:
		      dec32(rd, f[3], "GID", &l->gid);
		break;
	case OPS_UTIMENS:
		ret = path(rd, f[1], "PATH", &l->path) ?: sdec(rd, f[2], "ASEC", &l->asec) ?:
		      nsec(rd, f[3], "ANSEC", &l->ansec) ?: sdec(rd, f[4], "MSEC", &l->msec) ?:
		      nsec(rd, f[5], "MNSEC", &l->mnsec);
		break;
	case OPS_SETXATTR:
		ret = path(rd, f[1], "PATH", &l->path) ?:
		      name(rd, f[2], "NAME", OPS_XATTR_NAME_MAX, &l->name) ?:
		      dec32(rd, f[3], "FLAGS", &l->flags) ?: hexvalue(rd, f[4], l);
		break;
	case OPS_REMOVEXATTR:
		ret = path(rd, f[1], "PATH", &l->path) ?:
		      name(rd, f[2], "NAME", OPS_XATTR_NAME_MAX, &l->name);
		break;
	case OPS_FALLOCATE:
		ret = fh(rd, f[1], &l->fh) ?: dec32(rd, f[2], "MODE", &l->mode) ?:
		      dec(rd, f[3], "OFF", INT64_MAX, &l->off) ?:
		      dec(rd, f[4], "LEN", INT64_MAX, &l->len);
		break;
	case OPS_SYNC:
	case OPS_NR_KINDS:
		break;
	}
	return ret;
}

static void line_free(struct zops_line *l)
{
	free(l->path);
	free(l->path2);
	free(l->name);
	free(l->value);
}

void zops_free(struct zops *z)
{
	uint64_t i;

	if (!z)
		return;
	for (i = 0; i < z->nr; i++)
		line_free(&z->l[i]);
	free(z->l);
	free(z);
}

/* One line (@s, @n bytes, no newline) into @z. */
static int parse_line(struct rd *rd, char *s, size_t n, struct zops *z)
{
	char *f[MAX_FIELDS + 1];
	unsigned int nf = 0, k;
	struct zops_line l;
	size_t i, start = 0;
	int ret;

	for (i = 0; i < n; i++)
		if (!s[i])
			return bad(rd, "a NUL byte");
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != ' ')
			continue;
		if (i == start)
			return bad(rd, i == 0 ? "a line starting with a space" :
				   i == n ? "a space at the end of the line" :
				   "two spaces between fields (fields are separated by one space)");
		if (nf == MAX_FIELDS)
			return bad(rd, "more fields than any call has");
		s[i] = 0;
		f[nf++] = s + start;
		start = i + 1;
	}
	for (k = 0; k < OPS_NR_KINDS; k++)
		if (!strcmp(f[0], ops_kind_name(k)))
			break;
	if (k == OPS_NR_KINDS)
		return bad(rd, "unknown call '%.40s'", f[0]);
	if (nf != kind_fields[k])
		return bad(rd, "%s takes %u fields, the line has %u",
			   ops_kind_name(k), kind_fields[k] - 1, nf - 1);
	memset(&l, 0, sizeof(l));
	l.kind = (enum ops_kind)k;
	l.line = rd->line;
	ret = fields(rd, f, &l);
	if (!ret && (ret = ZCOW_GROW_ONE(&z->l, z->nr, &z->cap)))
		ret = -ENOMEM;
	if (ret) {
		line_free(&l);
		if (ret == -ENOMEM)
			snprintf(rd->err, rd->elen, "%s:%u: out of memory",
				 rd->name, rd->line);
		return ret;
	}
	z->l[z->nr++] = l;
	return 0;
}

int zops_parse_buf(const char *name, const char *text, size_t len,
		   struct zops **z_ret, char *err, size_t elen)
{
	struct rd rd = { .name = name, .err = err, .elen = elen };
	struct zops *z = calloc(1, sizeof(*z));
	char *buf = malloc(len + 1);
	size_t pos = 0;
	int ret = 0;

	*z_ret = NULL;
	if (!z || !buf) {
		free(z);
		free(buf);
		snprintf(err, elen, "%s: out of memory", name);
		return -ENOMEM;
	}
	memcpy(buf, text, len);
	buf[len] = 0;
	while (pos < len && !ret) {
		char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		rd.line++;
		pos += n + 1;
		if (rd.line == 1) {
			if (n != strlen(HEADER) || memcmp(s, HEADER, n))
				ret = bad(&rd, "the first line must be '%s' (a recorded-operations file, version 1)", HEADER);
			continue;
		}
		if (!n || s[0] == '#')
			continue;
		ret = parse_line(&rd, s, n, z);
	}
	if (!ret && !rd.line) {
		rd.line = 1;
		ret = bad(&rd, "empty: the first line must be '%s'", HEADER);
	}
	free(buf);
	if (ret) {
		zops_free(z);
		return ret;
	}
	*z_ret = z;
	return 0;
}

int zops_parse_file(const char *path, struct zops **z_ret, char *err,
		    size_t elen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	*z_ret = NULL;
	if (!f) {
		ret = -errno;
		snprintf(err, elen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		if (cap - len < 65536) {
			char *t = realloc(text, cap + 65536 + 1);

			if (!t) {
				fclose(f);
				free(text);
				snprintf(err, elen, "%s: out of memory", path);
				return -ENOMEM;
			}
			text = t;
			cap += 65536;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (!n)
			break;
	}
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (ret) {
		free(text);
		snprintf(err, elen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = zops_parse_buf(path, text ? text : "", len, z_ret, err, elen);
	free(text);
	return ret;
}
