// SPDX-License-Identifier: MIT
/*
 * zfio verify: buffer contents, verify headers and their check (see
 * fio_verify.h).  fio's algorithms, zcow's code and PRNG.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <nettle/md5.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>
#include <xxhash.h>

#include "fio_verify.h"
#include "le.h"
#include "prng.h"

/* The fields of fio 3.33's struct verify_header (byte offsets). */
#define VH_MAGIC	0
#define VH_TYPE		2
#define VH_LEN		4
#define VH_SEED		8
#define VH_OFFSET	16
#define VH_TIME_SEC	24
#define VH_TIME_NSEC	28
#define VH_THREAD	32
#define VH_NUMBERIO	34
#define VH_CRC		36

#define MSG_LEN		2048	/* one failure's message, before it is cut */

void zfio_vopts_default(struct zfio_vopts *o)
{
	memset(o, 0, sizeof(*o));
	o->do_verify = true;
	o->scramble_buffers = true;
	o->compress_chunk = 512;
	o->dedupe_ws_pct = 5;
	o->trim_verify_zero = true;
}

/* fio's names, in the order of its verify option (crc32c-intel is
 * crc32c there). */
static const struct {
	const char *name;
	int type;
	uint32_t csum_len;		/* the checksum's field in the header */
} vtypes[] = {
	{ "md5", ZFIO_VERIFY_MD5, 16 },
	{ "crc64", ZFIO_VERIFY_CRC64, 8 },
	{ "crc32", ZFIO_VERIFY_CRC32, 4 },
	{ "crc32c-intel", ZFIO_VERIFY_CRC32C, 4 },
	{ "crc32c", ZFIO_VERIFY_CRC32C, 4 },
	{ "crc16", ZFIO_VERIFY_CRC16, 2 },
	{ "crc7", ZFIO_VERIFY_CRC7, 1 },
	{ "sha1", ZFIO_VERIFY_SHA1, 20 },
	{ "sha256", ZFIO_VERIFY_SHA256, 64 },	/* fio's field: 64 bytes */
	{ "sha512", ZFIO_VERIFY_SHA512, 128 },	/* fio's field: 128 bytes */
	{ "sha3-224", ZFIO_VERIFY_SHA3_224, 28 },
	{ "sha3-256", ZFIO_VERIFY_SHA3_256, 32 },
	{ "sha3-384", ZFIO_VERIFY_SHA3_384, 48 },
	{ "sha3-512", ZFIO_VERIFY_SHA3_512, 64 },
	{ "xxhash", ZFIO_VERIFY_XXHASH, 4 },
	{ "meta", ZFIO_VERIFY_META, 0 },
	{ "pattern", ZFIO_VERIFY_PATTERN_NO_HDR, 0 },
	{ "null", ZFIO_VERIFY_NULL, 0 },
	{ "0", ZFIO_VERIFY_NONE, 0 },
};

#define NR_VTYPES (sizeof(vtypes) / sizeof(vtypes[0]))

int zfio_verify_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NR_VTYPES; i++)
		if (!strcmp(name, vtypes[i].name))
			return vtypes[i].type;
	return -1;
}

const char *zfio_verify_name(int type)
{
	size_t i;

	if (type == ZFIO_VERIFY_NONE)
		return "";
	if (type == ZFIO_VERIFY_PATTERN)
		return "pattern (verify_pattern, with a header)";
	for (i = 0; i < NR_VTYPES; i++)
		if (vtypes[i].type == type)
			return vtypes[i].name;
	return "?";
}

/* The name fio's messages give a checksum type (its vc->name). */
static const char *csum_name(int type)
{
	return type == ZFIO_VERIFY_CRC32C ? "crc32c" : zfio_verify_name(type);
}

static uint32_t csum_len(int type)
{
	size_t i;

	for (i = 0; i < NR_VTYPES; i++)
		if (vtypes[i].type == type)
			return vtypes[i].csum_len;
	return 0;
}

uint32_t zfio_verify_hdr_len(int type)
{
	if (type == ZFIO_VERIFY_PATTERN_NO_HDR)
		return 0;
	return ZFIO_VHDR_LEN + csum_len(type);
}

/* ---- checksums -------------------------------------------------------- */

/* fio's crc16: CRC-16/ARC (0x8005 reflected: 0xa001), init 0. */
static uint16_t crc16_arc(const uint8_t *p, size_t len)
{
	uint16_t crc = 0;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xa001 : crc >> 1;
	}
	return crc;
}

/*
 * fio's crc7 (Linux's old MMC crc7, x^7 + x^3 + 1): per byte, the 7-bit
 * crc shifted left by one, xored with the byte, is the index t of a table
 * whose entry is t(x) x^7 mod P(x); here the division done bitwise.
 */
static uint8_t crc7_mmc(const uint8_t *p, size_t len)
{
	uint8_t crc = 0;

	while (len--) {
		uint16_t v = (uint16_t)(((crc << 1) ^ *p++) & 0xff) << 7;
		int bit;

		for (bit = 14; bit >= 7; bit--)
			if (v & (1u << bit))
				v ^= 0x89u << (bit - 7);
		crc = (uint8_t)v;
	}
	return crc;
}

uint32_t zfio_verify_csum(int type, const void *buf, size_t len,
			  uint8_t out[64])
{
	const uint8_t *p = buf;
	unsigned int i;

	switch (type) {
	case ZFIO_VERIFY_CRC32C:
	case ZFIO_VERIFY_CRC32C_INTEL:
		/* fio's crc32c: seed ~0, no final inversion */
		put32(out, crc32_iscsi((unsigned char *)p, (int)len,
				       0xffffffffu));
		return 4;
	case ZFIO_VERIFY_CRC32:
		/* ISA-L inverts the seed and the result; fio does neither */
		put32(out, ~crc32_ieee(0xffffffffu, p, len));
		return 4;
	case ZFIO_VERIFY_CRC64:
		put64(out, ~crc64_jones_refl(~0ull, p, len));
		return 8;
	case ZFIO_VERIFY_CRC16:
		put16(out, crc16_arc(p, len));
		return 2;
	case ZFIO_VERIFY_CRC7:
		out[0] = crc7_mmc(p, len);
		return 1;
	case ZFIO_VERIFY_XXHASH:
		put32(out, XXH32(p, len, 1));
		return 4;
	case ZFIO_VERIFY_MD5: {
		struct md5_ctx c;

		md5_init(&c);
		md5_update(&c, len, p);
		md5_digest(&c, MD5_DIGEST_SIZE, out);
		return MD5_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA1: {
		struct sha1_ctx c;

		sha1_init(&c);
		sha1_update(&c, len, p);
		sha1_digest(&c, SHA1_DIGEST_SIZE, out);
		/* fio keeps the five words in host (little-endian) order */
		for (i = 0; i < SHA1_DIGEST_SIZE; i += 4)
			put32(out + i, (uint32_t)out[i] << 24 |
					       (uint32_t)out[i + 1] << 16 |
					       (uint32_t)out[i + 2] << 8 | out[i + 3]);
		return SHA1_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA256: {
		struct sha256_ctx c;

		sha256_init(&c);
		sha256_update(&c, len, p);
		sha256_digest(&c, SHA256_DIGEST_SIZE, out);
		return SHA256_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA512: {
		struct sha512_ctx c;

		sha512_init(&c);
		sha512_update(&c, len, p);
		sha512_digest(&c, SHA512_DIGEST_SIZE, out);
		return SHA512_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA3_224: {
		struct sha3_224_ctx c;

		sha3_224_init(&c);
		sha3_224_update(&c, len, p);
		sha3_224_digest(&c, SHA3_224_DIGEST_SIZE, out);
		return SHA3_224_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA3_256: {
		struct sha3_256_ctx c;

		sha3_256_init(&c);
		sha3_256_update(&c, len, p);
		sha3_256_digest(&c, SHA3_256_DIGEST_SIZE, out);
		return SHA3_256_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA3_384: {
		struct sha3_384_ctx c;

		sha3_384_init(&c);
		sha3_384_update(&c, len, p);
		sha3_384_digest(&c, SHA3_384_DIGEST_SIZE, out);
		return SHA3_384_DIGEST_SIZE;
	}
	case ZFIO_VERIFY_SHA3_512: {
		struct sha3_512_ctx c;

		sha3_512_init(&c);
		sha3_512_update(&c, len, p);
		sha3_512_digest(&c, SHA3_512_DIGEST_SIZE, out);
		return SHA3_512_DIGEST_SIZE;
	}
	default:
		return 0;
	}
}

/* ---- patterns --------------------------------------------------------- */

static int bad(char *why, size_t len, const char *fmt, const char *at)
{
	if (why && len)
		snprintf(why, len, fmt, at);
	return -EINVAL;
}

/* 0xHEX at @s (after the prefix); *@end past it.  An 0x inside ends it
 * ("0xff0x14" is two numbers, as fio reads it). */
static int parse_hex(const char *s, const char **end, struct zfio_pattern *p,
		     char *why, size_t why_len)
{
	const char *d = s + 2, *e = d;
	size_t n, i;

	while (isxdigit((unsigned char)*e)) {
		if (e > d && e[0] == '0' && (e[1] == 'x' || e[1] == 'X') &&
		    isxdigit((unsigned char)e[2]))
			break;
		e++;
	}
	n = (size_t)(e - d);
	if (!n)
		return bad(why, why_len, "'%s': 0x without hex digits", s);
	if (p->len + (n + 1) / 2 > ZFIO_MAX_PATTERN)
		return bad(why, why_len, "'%s': the pattern is longer than "
			   "512 bytes", s);
	for (i = 0; i < n;) {
		unsigned int v;
		char two[3] = { 0 };
		size_t w = (n - i) % 2 ? 1 : 2;	/* odd: a lone first digit */

		memcpy(two, d + i, w);
		sscanf(two, "%x", &v);
		p->b[p->len++] = (uint8_t)v;
		i += w;
	}
	*end = e;
	return 0;
}

/* A decimal in INT_MIN..INT_MAX: its bytes little-endian up to the last
 * non-zero one of the 32-bit value (0: one zero byte). */
static int parse_dec(const char *s, const char **end, struct zfio_pattern *p,
		     char *why, size_t why_len)
{
	char *e;
	long v;
	uint32_t u;

	errno = 0;
	v = strtol(s, &e, 10);
	if (e == s || errno || v > INT_MAX || v < INT_MIN)
		return bad(why, why_len, "'%s' is not a string, a hex or "
			   "decimal number or %%o", s);
	/* a hex number right after it ("-100xab") is a number of its own */
	if (e > s + 1 && e[-1] == '0' && (e[0] == 'x' || e[0] == 'X')) {
		e--;
		v /= 10;
	}
	u = (uint32_t)v;
	do {
		if (p->len == ZFIO_MAX_PATTERN)
			return bad(why, why_len, "'%s': the pattern is longer "
				   "than 512 bytes", s);
		p->b[p->len++] = u & 0xff;
		u >>= 8;
	} while (u);
	*end = e;
	return 0;
}

int zfio_pattern_parse(const char *s, bool allow_fmt, struct zfio_pattern *p,
		       char *why, size_t why_len)
{
	const char *c = s;

	memset(p, 0, sizeof(*p));
	if (!*s)
		return bad(why, why_len, "%s an empty pattern", "");
	while (*c) {
		const char *e, *q;
		int r;

		switch (*c) {
		case '"':
			q = strchr(c + 1, '"');
			if (!q)
				return bad(why, why_len, "%s: no closing '\"'",
					   c);
			if (p->len + (size_t)(q - c - 1) > ZFIO_MAX_PATTERN)
				return bad(why, why_len, "'%s': the pattern is "
					   "longer than 512 bytes", c);
			if (q == c + 1)
				return bad(why, why_len, "%s: an empty string",
					   c);
			memcpy(p->b + p->len, c + 1, (size_t)(q - c - 1));
			p->len += (uint32_t)(q - c - 1);
			c = q + 1;
			break;
		case '\'': {
			char path[4096];
			size_t n, room = ZFIO_MAX_PATTERN - p->len;
			FILE *f;

			q = strchr(c + 1, '\'');
			if (!q || (size_t)(q - c - 1) >= sizeof(path))
				return bad(why, why_len, "%s: no closing \"'\"",
					   c);
			snprintf(path, sizeof(path), "%.*s", (int)(q - c - 1),
				 c + 1);
			f = fopen(path, "r");
			if (!f)
				return bad(why, why_len, "cannot read the "
					   "pattern file '%s'", path);
			n = room ? fread(p->b + p->len, 1, room, f) : 0;
			fclose(f);
			if (!n)
				return bad(why, why_len, "the pattern file '%s' "
					   "gives no bytes", path);
			p->len += (uint32_t)n;
			c = q + 1;
			break;
		}
		case '%':
			if (!allow_fmt)
				return bad(why, why_len, "'%s': formats (%%o) "
					   "are only for verify_pattern", c);
			if (c[1] != 'o')
				return bad(why, why_len, "'%s': the only format "
					   "is %%o", c);
			if (p->nr_fmt == ZFIO_MAX_PATTERN_FMT ||
			    p->len + 8 > ZFIO_MAX_PATTERN)
				return bad(why, why_len, "'%s': too many %%o or "
					   "longer than 512 bytes", c);
			p->fmt_off[p->nr_fmt++] = p->len;
			memset(p->b + p->len, 0, 8);
			p->len += 8;
			c += 2;
			break;
		default:
			if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X'))
				r = parse_hex(c, &e, p, why, why_len);
			else
				r = parse_dec(c, &e, p, why, why_len);
			if (r)
				return r;
			c = e;
			break;
		}
	}
	return 0;
}

/* @p with every %o set to @off, copied over @len bytes of @buf. */
static void fill_pattern(const struct zfio_pattern *p, uint64_t off,
			 uint8_t *buf, uint64_t len)
{
	uint8_t one[ZFIO_MAX_PATTERN];
	uint64_t i;
	uint32_t f;

	memcpy(one, p->b, p->len);
	for (f = 0; f < p->nr_fmt; f++)
		put64(one + p->fmt_off[f], off);
	for (i = 0; i < len; i += p->len)
		memcpy(buf + i, one, len - i < p->len ? len - i : p->len);
}

/* ---- buffer contents -------------------------------------------------- */

/* @len random bytes from @seed (zcow's PRNG, not fio's). */
static void fill_random(uint8_t *buf, uint64_t len, uint64_t seed)
{
	uint64_t s = seed, i, v;

	for (i = 0; i + 8 <= len; i += 8)
		put64(buf + i, zcow_rand64(&s));
	if (i < len) {
		uint8_t tail[8];

		v = zcow_rand64(&s);
		put64(tail, v);
		memcpy(buf + i, tail, len - i);
	}
}

/* The fixed part of compressible data: the buffer pattern or zeros. */
static void fill_fixed(const struct zfio_vopts *o, uint8_t *buf,
		       uint64_t len)
{
	if (o->buffer_pattern.len)
		fill_pattern(&o->buffer_pattern, 0, buf, len);
	else
		memset(buf, 0, len);
}

/*
 * fio's __fill_random_buf_percentage(): segments of @segment bytes, each
 * (100 - @pct)% random (the same seed in every segment, as fio) and then
 * fixed; a fixed tail of at most 8 bytes joins the one before.
 */
static void fill_pct(const struct zfio_vopts *o, uint64_t seed, uint8_t *buf,
		     uint32_t pct, uint64_t segment, uint64_t len)
{
	uint64_t r, f;

	if (pct == 100) {
		fill_fixed(o, buf, len);
		return;
	}
	if (segment > len)
		segment = len;
	while (len) {
		r = segment * (100 - pct) / 100;
		if (r > len)
			r = len;
		fill_random(buf, r, seed);
		len -= r;
		if (!len)
			break;
		buf += r;
		f = segment - r;
		if (f > len)
			f = len;
		else if (len - f <= 8)
			f = len;
		fill_fixed(o, buf, f);
		len -= f;
		buf += f;
	}
}

/* Seed number @k of the stream @seed. */
static uint64_t stream_seed(uint64_t seed, uint64_t k)
{
	return zcow_mix64(seed ^ zcow_mix64(k + 1));
}

int zfio_buf_init(struct zfio_buf_state *st, const struct zfio_vopts *o,
		  uint64_t seed, uint64_t min_bs, uint64_t max_bs,
		  uint64_t ws_size, const uint64_t *ws_seeds,
		  unsigned int nr_ws_seeds, unsigned int ws_first)
{
	uint64_t chunk;

	memset(st, 0, sizeof(*st));
	st->o = o;
	st->seed = seed;
	st->dedupe_rng = zcow_mix64(seed ^ 0xdedeull);
	st->ws_rng = zcow_mix64(seed ^ 0x5e7ull);
	st->vrng = zcow_mix64(seed ^ 0x7e1f1ull);
	st->min_bs = min_bs;
	if (o->dedupe_pct && o->dedupe_mode == ZFIO_DEDUPE_WORKING_SET) {
		chunk = o->compress_chunk && o->compress_chunk < min_bs ?
				o->compress_chunk : min_bs;
		st->ws_adv = min_bs / chunk;
		st->nr_ws = ws_size * o->dedupe_ws_pct / 100 / min_bs;
		if (!st->nr_ws)
			st->nr_ws = 1;
		st->ws_seeds = ws_seeds ? ws_seeds : &st->seed;
		st->nr_ws_seeds = ws_seeds ? nr_ws_seeds : 1;
		st->ws_first = ws_seeds ? ws_first : 0;
		/* fio: max(pages / jobs, 1) pages of one job's stream, then
		 * the next job's */
		st->ws_per = st->nr_ws_seeds > 1 ?
				     st->nr_ws / st->nr_ws_seeds : st->nr_ws;
		if (!st->ws_per)
			st->ws_per = 1;
	}
	st->base = malloc(max_bs ? max_bs : 1);
	if (!st->base)
		return -ENOMEM;
	st->base_len = max_bs;
	return 0;
}

void zfio_buf_free(struct zfio_buf_state *st)
{
	free(st->base);
	st->base = NULL;
}

/*
 * fio's get_buf_state(): the stream and first seed index of the next
 * buffer, and whether it is a unique one (which moves the stream on).
 */
static void pick_seeds(struct zfio_buf_state *st, uint64_t *stream,
		       uint64_t *k, bool *is_unique)
{
	const struct zfio_vopts *o = st->o;
	uint64_t i;

	*stream = st->seed;
	*k = st->next;
	*is_unique = true;
	if (!o->dedupe_pct)
		return;
	if (o->dedupe_pct == 100) {	/* fio rewinds its state each time */
		*is_unique = false;
		return;
	}
	if (zcow_rand64(&st->dedupe_rng) % 100 + 1 > o->dedupe_pct)
		return;
	*is_unique = false;
	if (o->dedupe_mode == ZFIO_DEDUPE_REPEAT)
		return;	/* fio's copy of its state: the next unique seeds */
	i = zcow_rand64(&st->ws_rng) % st->nr_ws;
	*stream = st->ws_seeds[(st->ws_first + i / st->ws_per) %
			       st->nr_ws_seeds];
	*k = (i % st->ws_per) * st->ws_adv;
}

/* fio's fill_io_buffer(): @len bytes of a write (no verify). */
static void fill_io(struct zfio_buf_state *st, uint8_t *buf, uint64_t len)
{
	const struct zfio_vopts *o = st->o;

	if (o->compress_pct || o->dedupe_pct) {
		uint64_t stream, k, left = len, step;
		bool is_unique;

		pick_seeds(st, &stream, &k, &is_unique);
		while (left) {
			step = st->min_bs < left ? st->min_bs : left;
			if (o->compress_chunk && o->compress_chunk < step)
				step = o->compress_chunk;
			fill_pct(o, stream_seed(stream, k++), buf,
				 o->compress_pct, step, step);
			buf += step;
			left -= step;
		}
		if (is_unique)
			st->next = k;
	} else if (o->buffer_pattern.len) {
		fill_pattern(&o->buffer_pattern, 0, buf, len);
	} else if (o->zero_buffers) {
		memset(buf, 0, len);
	} else {
		fill_random(buf, len, stream_seed(st->seed, st->next++));
	}
}

/*
 * fio's small_content_scramble(): in every 512 bytes, the offset at one
 * of the first 8 cache lines (picked by time and offset) and the time at
 * the end of the first one.
 */
static void scramble(uint8_t *buf, uint64_t len, uint64_t off,
		     uint64_t time_ns)
{
	uint64_t sec = time_ns / 1000000000ull, nsec = time_ns % 1000000000ull;
	unsigned int line = (unsigned int)((nsec ^ off) & 7);
	uint64_t i;

	for (i = 0; i + 512 <= len; i += 512) {
		put64(buf + i + line * 64, off + i);
		put64(buf + i + 48, sec);
		put64(buf + i + 56, nsec);
	}
}

/* The header of interval @n of write @w, @ilen bytes long. */
static void put_header(const struct zfio_vopts *o, uint8_t *h,
		       const struct zfio_vwrite *w, uint32_t n,
		       uint32_t interval, uint32_t ilen)
{
	put16(h + VH_MAGIC, ZFIO_VHDR_MAGIC);
	put16(h + VH_TYPE, (uint16_t)o->verify);
	put32(h + VH_LEN, ilen);
	put64(h + VH_SEED, w->seed);
	put64(h + VH_OFFSET, w->off + (uint64_t)n * interval);
	put32(h + VH_TIME_SEC, (uint32_t)(w->time_ns / 1000000000ull));
	put32(h + VH_TIME_NSEC, (uint32_t)(w->time_ns % 1000000000ull));
	put16(h + VH_THREAD, w->thread);
	put16(h + VH_NUMBERIO, w->numberio);
	put32(h + VH_CRC, crc32_iscsi(h, VH_CRC, 0xffffffffu));
}

/* Swap @n bytes of @a and @b (verify_offset). */
static void swap_bytes(uint8_t *a, uint8_t *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint8_t t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/* The bytes of an interval fio puts one header in: the interval, or the
 * whole I/O when it is shorter (fio's get_hdr_inc()). */
static uint32_t hdr_inc(uint32_t interval, uint64_t len)
{
	return interval && interval <= len ? interval : (uint32_t)len;
}

/* fio's fill_pattern_headers(): the data, then a header per interval. */
static void fill_verify(const struct zfio_vopts *o, uint8_t *buf,
			const struct zfio_vwrite *w, uint32_t interval)
{
	uint32_t inc = hdr_inc(interval, w->len), hl = zfio_verify_hdr_len(o->verify);
	uint64_t at;
	uint32_t n = 0;

	if (o->verify_pattern.len)
		fill_pattern(&o->verify_pattern, w->off, buf, w->len);
	else
		fill_pct(o, w->seed, buf, o->compress_pct, w->len, w->len);
	if (o->verify == ZFIO_VERIFY_PATTERN_NO_HDR)
		return;
	for (at = 0; at + inc <= w->len; at += inc, n++) {
		uint8_t *h = buf + at, sum[64] = { 0 };
		uint32_t cl = csum_len(o->verify);

		put_header(o, h, w, n, interval, inc);
		if (cl) {
			memset(h + ZFIO_VHDR_LEN, 0, cl);
			zfio_verify_csum(o->verify, h + hl, inc - hl, sum);
			memcpy(h + ZFIO_VHDR_LEN, sum, cl);
		}
		if (o->verify_offset)
			swap_bytes(h, h + o->verify_offset, hl);
	}
}

void zfio_buf_fill(struct zfio_buf_state *st, void *buf,
		   struct zfio_vwrite *w, uint32_t interval)
{
	const struct zfio_vopts *o = st->o;

	if (o->verify != ZFIO_VERIFY_NONE && o->verify != ZFIO_VERIFY_NULL) {
		w->seed = zcow_rand64(&st->vrng);
		fill_verify(o, buf, w, interval);
		return;
	}
	w->seed = 0;
	if (o->refill_buffers) {
		fill_io(st, buf, w->len);
		return;
	}
	/* fio fills its buffers once; without refill they are reused,
	 * scrambled unless compression or verify need them as they are */
	if (!st->is_base_filled) {
		fill_io(st, st->base, st->base_len);
		st->is_base_filled = true;
	}
	memcpy(buf, st->base, w->len);
	if (o->scramble_buffers && !o->compress_pct &&
	    o->verify == ZFIO_VERIFY_NONE)
		scramble(buf, w->len, w->off, w->time_ns);
}

void zfio_buf_expected(struct zfio_buf_state *st, void *buf,
		       const struct zfio_vwrite *w, uint32_t interval)
{
	fill_verify(st->o, buf, w, interval);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

uint32_t zfio_verify_interval(const struct zfio_vopts *o, uint64_t min_bs,
			      uint64_t max_bs, uint64_t min_rbs)
{
	uint64_t v = o->verify_interval;

	if (max_bs != min_bs && !v)
		v = min_bs;
	if (v > min_bs)
		v = min_bs;
	else if (min_rbs && v > min_rbs)
		v = min_rbs;
	if (!v || min_bs % v || max_bs % v)
		v = gcd64(min_bs, max_bs);
	return (uint32_t)v;
}

/* ---- the check -------------------------------------------------------- */

static void hex(char *out, size_t len, const uint8_t *b, uint32_t n)
{
	uint32_t i;

	out[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < len; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

struct where {
	const char *file;
	uint64_t blk_off, blk_len;	/* the I/O */
};

/* " at file F offset O, length L (requested block: offset=O,
 * length=L)": fio's tail of every verify message. */
static void tail(char *out, size_t len, const struct where *wh, uint64_t off,
		 uint32_t ilen)
{
	snprintf(out, len, " at file %s offset %llu, length %u (requested "
		 "block: offset=%llu, length=%llu)", wh->file,
		 (unsigned long long)off, ilen,
		 (unsigned long long)wh->blk_off,
		 (unsigned long long)wh->blk_len);
}

/* fio's verify_header(). */
static int check_header(const struct zfio_vopts *o, const uint8_t *h,
			uint32_t n, uint32_t interval, uint32_t inc,
			const struct where *wh, const struct zfio_vwrite *w,
			unsigned int checks, char *msg, size_t len)
{
	uint64_t want_off = wh->blk_off + (uint64_t)n * interval;
	uint64_t at = wh->blk_off + (uint64_t)n * inc;
	char t[ZFIO_MAX_PATTERN];
	uint32_t crc;

	tail(t, sizeof(t), wh, at, inc);
	if (get16(h + VH_MAGIC) != ZFIO_VHDR_MAGIC) {
		snprintf(msg, len, "verify: bad magic header %x, wanted %x%s",
			 get16(h + VH_MAGIC), ZFIO_VHDR_MAGIC, t);
		return -EILSEQ;
	}
	if (get32(h + VH_LEN) != inc) {
		snprintf(msg, len, "verify: bad header length %u, wanted %u%s",
			 get32(h + VH_LEN), inc, t);
		return -EILSEQ;
	}
	if (w && (checks & ZFIO_CHECK_SEED) && get64(h + VH_SEED) != w->seed) {
		snprintf(msg, len, "verify: bad header rand_seed %llu, wanted "
			 "%llu%s", (unsigned long long)get64(h + VH_SEED),
			 (unsigned long long)w->seed, t);
		return -EILSEQ;
	}
	if (get64(h + VH_OFFSET) != want_off) {
		snprintf(msg, len, "verify: bad header offset %llu, wanted "
			 "%llu%s", (unsigned long long)get64(h + VH_OFFSET),
			 (unsigned long long)want_off, t);
		return -EILSEQ;
	}
	if (w && (checks & ZFIO_CHECK_NUMBERIO) &&
	    get16(h + VH_NUMBERIO) != w->numberio) {
		snprintf(msg, len, "verify: bad header numberio %u, wanted "
			 "%u%s", get16(h + VH_NUMBERIO), w->numberio, t);
		return -EILSEQ;
	}
	crc = crc32_iscsi((unsigned char *)h, VH_CRC, 0xffffffffu);
	if (crc != get32(h + VH_CRC)) {
		snprintf(msg, len, "verify: bad header crc %x, calculated %x%s",
			 get32(h + VH_CRC), crc, t);
		return -EILSEQ;
	}
	(void)o;
	return 0;
}

/* fio's verify_io_u_pattern(): the data after the header against the
 * pattern, from where the interval lies in the I/O. */
static int check_pattern(const struct zfio_vopts *o, const uint8_t *h,
			 uint32_t n, uint32_t inc, const struct where *wh,
			 char *msg, size_t len)
{
	uint32_t hs = zfio_verify_hdr_len(o->verify), plen = o->verify_pattern.len;
	uint8_t one[ZFIO_MAX_PATTERN];
	uint32_t i, mod, f;
	char t[ZFIO_MAX_PATTERN];

	memcpy(one, o->verify_pattern.b, plen);
	for (f = 0; f < o->verify_pattern.nr_fmt; f++)
		put64(one + o->verify_pattern.fmt_off[f], wh->blk_off);
	mod = (uint32_t)(((uint64_t)inc * n + hs) % plen);
	for (i = 0; i + hs < inc; i++) {
		uint8_t want = one[mod];

		if (h[hs + i] != want) {
			tail(t, sizeof(t), wh, wh->blk_off + (uint64_t)n * inc,
			     inc);
			snprintf(msg, len, "pattern: verify failed%s: got "
				 "pattern '%02x', wanted '%02x' at block offset "
				 "%u (bad bits %d)", t, h[hs + i], want, i,
				 __builtin_popcount(h[hs + i] ^ want));
			return -EILSEQ;
		}
		mod = mod + 1 == plen ? 0 : mod + 1;
	}
	return 0;
}

int zfio_verify_check(const struct zfio_vopts *o, uint32_t interval,
		      void *buf, uint64_t len, uint64_t off, const char *file,
		      const struct zfio_vwrite *w, unsigned int checks,
		      uint32_t *nr_bad, char *msg, size_t msg_len)
{
	const struct where wh = { .file = file, .blk_off = off,
				  .blk_len = len };
	uint32_t inc = hdr_inc(interval, len), hl = zfio_verify_hdr_len(o->verify);
	uint32_t n = 0, cl = csum_len(o->verify);
	uint8_t *p = buf;
	uint64_t at;
	int ret = 0, r;

	*nr_bad = 0;
	if (o->verify == ZFIO_VERIFY_NULL || o->verify == ZFIO_VERIFY_NONE)
		return 0;
	for (at = 0; at + inc <= len; at += inc, n++) {
		uint8_t *h = p + at;
		char one[MSG_LEN];

		if (ret && o->verify_fatal)
			break;
		if (o->verify_offset && hl)
			swap_bytes(h, h + o->verify_offset, hl);
		r = 0;
		if (o->verify != ZFIO_VERIFY_PATTERN_NO_HDR) {
			r = check_header(o, h, n, interval, inc, &wh, w,
					 checks, one, sizeof(one));
			if (r) {	/* fio gives up on the block here */
				if (!*nr_bad)
					snprintf(msg, msg_len, "%s", one);
				++*nr_bad;
				return r;
			}
		}
		if (cl) {
			uint8_t sum[64] = { 0 };
			char want[260], got[260], t[ZFIO_MAX_PATTERN];

			zfio_verify_csum(o->verify, h + hl, inc - hl, sum);
			if (memcmp(sum, h + ZFIO_VHDR_LEN, cl)) {
				tail(t, sizeof(t), &wh, off + at, inc);
				hex(want, sizeof(want), h + ZFIO_VHDR_LEN, cl);
				hex(got, sizeof(got), sum, cl);
				snprintf(one, sizeof(one), "%.8s: verify "
					 "failed%s: expected CRC %s, received "
					 "CRC %s", csum_name(o->verify), t,
					 want, got);
				r = -EILSEQ;
			}
		} else if (o->verify_pattern.len &&
			   (o->verify == ZFIO_VERIFY_META ||
			    o->verify == ZFIO_VERIFY_PATTERN ||
			    o->verify == ZFIO_VERIFY_PATTERN_NO_HDR)) {
			r = check_pattern(o, h, n, inc, &wh, one, sizeof(one));
		}
		if (r) {
			if (!*nr_bad)
				snprintf(msg, msg_len, "%s", one);
			++*nr_bad;
			ret = r;
		}
	}
	return ret;
}

/* ---- the resolved options in fio syntax -------------------------------- */

static void print_pattern(FILE *out, const char *key,
			  const struct zfio_pattern *p)
{
	uint32_t i, f = 0;

	if (!p->len)
		return;
	fprintf(out, "%s=", key);
	for (i = 0; i < p->len;) {
		if (f < p->nr_fmt && p->fmt_off[f] == i) {
			fprintf(out, "%%o");
			i += 8;
			f++;
			continue;
		}
		fprintf(out, "0x%02x", p->b[i++]);
	}
	fprintf(out, "\n");
}

void zfio_vopts_print(FILE *out, const struct zfio_vopts *o)
{
	static const char *const sg[] = {
		"write", "write_and_verify", "write_same", "write_same_ndob",
		"verify_bytchk_00", "verify_bytchk_01", "verify_bytchk_11",
	};

	if (o->verify != ZFIO_VERIFY_NONE) {
		/* verify_pattern alone (below) makes verify pattern-with-header */
		if (o->verify != ZFIO_VERIFY_PATTERN)
			fprintf(out, "verify=%s\n", zfio_verify_name(o->verify));
		fprintf(out, "do_verify=%d\nverify_only=%d\nverify_fatal=%d\n"
			     "verify_dump=%d\nexperimental_verify=%d\n",
			o->do_verify, o->verify_only, o->verify_fatal,
			o->verify_dump, o->experimental_verify);
		if (o->verify_interval)
			fprintf(out, "verify_interval=%u\n",
				o->verify_interval);
		if (o->verify_offset)
			fprintf(out, "verify_offset=%u\n", o->verify_offset);
		if (o->verify_backlog)
			fprintf(out, "verify_backlog=%llu\n"
				     "verify_backlog_batch=%u\n",
				(unsigned long long)o->verify_backlog,
				o->verify_batch);
		print_pattern(out, "verify_pattern", &o->verify_pattern);
	}
	print_pattern(out, "buffer_pattern", &o->buffer_pattern);
	fprintf(out, "refill_buffers=%d\nscramble_buffers=%d\n"
		     "zero_buffers=%d\n", o->refill_buffers,
		o->scramble_buffers, o->zero_buffers);
	if (o->compress_pct)
		fprintf(out, "buffer_compress_percentage=%u\n"
			     "buffer_compress_chunk=%u\n", o->compress_pct,
			o->compress_chunk);
	if (o->dedupe_pct)
		fprintf(out, "dedupe_percentage=%u\ndedupe_mode=%s\n"
			     "dedupe_working_set_percentage=%u\n"
			     "dedupe_global=%d\n", o->dedupe_pct,
			o->dedupe_mode == ZFIO_DEDUPE_REPEAT ? "repeat" :
							       "working_set",
			o->dedupe_ws_pct, o->dedupe_global);
	if (o->sg_mode != ZFIO_SG_WRITE)
		fprintf(out, "sg_write_mode=%s\n", sg[o->sg_mode]);
}
