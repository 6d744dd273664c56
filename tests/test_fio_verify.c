// SPDX-License-Identifier: MIT
/*
 * fio's verify and buffer options (harness/fio_verify.h): every option
 * parsed into the job and every error message with its file, line and
 * option; fio's pattern syntax; the checksums against their published
 * check values; a block written and read back, and what the check names
 * when it differs; the buffer contents fio's options ask for.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"
#include "fio_verify.h"
#include "le.h"
#include "tests.h"

/* the shared parse helpers (tests/fio_tool.c) */
#define parse_ok	zcow_test_parse_ok
#define parse_err_exact	zcow_test_parse_err

START_TEST(test_verify_options_parse_into_the_job)
{
	struct zfio_spec *s = parse_ok(
		"[j]\nrw=write\nbs=4k\nsize=1m\nverify=md5\ndo_verify=0\n"
		"verify_only=1\nverify_fatal=1\nverify_dump=1\n"
		"experimental_verify=1\nverify_interval=1k\nverify_offset=64\n"
		"verify_backlog=16\nverify_backlog_batch=8\n"
		"verify_pattern=0xab%o\nbuffer_pattern=\"xy\"\n"
		"refill_buffers=0\nscramble_buffers=0\nzero_buffers=1\n"
		"buffer_compress_percentage=40\nbuffer_compress_chunk=1k\n"
		"dedupe_percentage=30\ndedupe_mode=working_set\n"
		"dedupe_working_set_percentage=20\ndedupe_global=1\n"
		"sg_write_mode=verify_bytchk_11\ntrim_verify_zero=0\n"
		"trim_percentage=0\nverify_state_save=0\nverify_state_load=0\n"
		"verify_async=4\nverify_async_cpus=0-3\nfill_device=1\n");
	const struct zfio_vopts *vo = &s->jobs[0].vo;

	ck_assert_int_eq(vo->verify, ZFIO_VERIFY_MD5);
	ck_assert(!vo->do_verify && vo->verify_only && vo->verify_fatal &&
		  vo->verify_dump && vo->experimental_verify);
	ck_assert_uint_eq(vo->verify_interval, 1024);
	ck_assert_uint_eq(vo->verify_offset, 64);
	ck_assert_uint_eq(vo->verify_backlog, 16);
	ck_assert_uint_eq(vo->verify_batch, 8);
	ck_assert_uint_eq(vo->verify_pattern.len, 9);
	ck_assert_uint_eq(vo->verify_pattern.b[0], 0xab);
	ck_assert_uint_eq(vo->verify_pattern.nr_fmt, 1);
	ck_assert_uint_eq(vo->verify_pattern.fmt_off[0], 1);
	ck_assert_uint_eq(vo->buffer_pattern.len, 2);
	ck_assert(!vo->refill_buffers && vo->is_refill_set);
	/* set after buffer_pattern: zero_buffers stays as given */
	ck_assert(!vo->scramble_buffers && vo->zero_buffers);
	ck_assert_uint_eq(vo->compress_pct, 40);
	ck_assert_uint_eq(vo->compress_chunk, 1024);
	ck_assert_uint_eq(vo->dedupe_pct, 30);
	ck_assert_int_eq(vo->dedupe_mode, ZFIO_DEDUPE_WORKING_SET);
	ck_assert_uint_eq(vo->dedupe_ws_pct, 20);
	ck_assert(vo->dedupe_global);
	ck_assert_int_eq(vo->sg_mode, ZFIO_SG_VERIFY_11);
	ck_assert(!vo->trim_verify_zero);
	ck_assert(s->jobs[0].log.fill_device);
	/* verify_async and verify_async_cpus mean nothing here: listed */
	ck_assert_uint_eq(s->nr_ignored, 2);
	ck_assert_str_eq(s->ignored[0], "verify_async");
	ck_assert_str_eq(s->ignored[1], "verify_async_cpus");
	zfio_free(s);
}
END_TEST

START_TEST(test_verify_defaults_are_fios)
{
	struct zfio_spec *s = parse_ok("[a]\nrw=write\n[b]\nrw=write\n"
				       "verify=crc32c-intel\n"
				       "[c]\nrw=read\nverify_pattern=0x55\n"
				       "[d]\nrw=write\nverify_pattern=0x55\n"
				       "verify=meta\n[e]\nrw=write\n"
				       "buffer_compress_percentage=50\n");
	const struct zfio_vopts *a = &s->jobs[0].vo, *b = &s->jobs[1].vo;

	ck_assert_int_eq(a->verify, ZFIO_VERIFY_NONE);
	ck_assert(a->do_verify && a->scramble_buffers && !a->zero_buffers);
	ck_assert(!a->refill_buffers);
	ck_assert_uint_eq(a->compress_chunk, 512);
	ck_assert_uint_eq(a->dedupe_ws_pct, 5);
	/* crc32c-intel is crc32c; verify turns refill on */
	ck_assert_int_eq(b->verify, ZFIO_VERIFY_CRC32C);
	ck_assert(b->refill_buffers);
	/* verify_pattern alone: a pattern with a header; after verify=:
	 * that verify */
	ck_assert_int_eq(s->jobs[2].vo.verify, ZFIO_VERIFY_PATTERN);
	ck_assert_int_eq(s->jobs[3].vo.verify, ZFIO_VERIFY_META);
	/* compression below 100% turns refill on */
	ck_assert(s->jobs[4].vo.refill_buffers);
	zfio_free(s);
}
END_TEST

START_TEST(test_verify_option_errors_name_file_line_option)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[j]\nverify=crc33\n", "t.fio:2: option 'verify': 'crc33' "
		  "is not md5, crc64, crc32c, crc32c-intel, crc32, crc16, "
		  "crc7, xxhash, sha1, sha256, sha512, sha3-224, sha3-256, "
		  "sha3-384, sha3-512, meta, pattern, null or 0" },
		{ "[j]\nverify\n", "t.fio:2: option 'verify': needs a value" },
		{ "[j]\nverify=pattern_hdr\n", "t.fio:2: option 'verify': "
		  "'pattern_hdr' is a later fio's: verify_pattern without "
		  "verify= gives a pattern with a header" },
		{ "[j]\ndo_verify=maybe\n", "t.fio:2: option 'do_verify': "
		  "'maybe' is not a boolean" },
		{ "[j]\nverify_interval=64\n", "t.fio:2: option "
		  "'verify_interval': 64 is not a size of 80 bytes or more "
		  "(below 4 GiB)" },
		{ "[j]\nverify_offset=8\n", "t.fio:2: option 'verify_offset': "
		  "8 is not a size of 40 bytes or more (below 4 GiB)" },
		{ "[j]\nverify_backlog=x\n", "t.fio:2: option "
		  "'verify_backlog': 'x' is not a size" },
		{ "[j]\nverify_backlog_batch=-1\n", "t.fio:2: option "
		  "'verify_backlog_batch': '-1' is not an integer >= 0" },
		{ "[j]\nverify_pattern=0x\n", "t.fio:2: option "
		  "'verify_pattern': '0x': 0x without hex digits" },
		{ "[j]\nverify_pattern=\"ab\n", "t.fio:2: option "
		  "'verify_pattern': \"ab: no closing '\"'" },
		{ "[j]\nverify_pattern=%x\n", "t.fio:2: option "
		  "'verify_pattern': '%x': the only format is %o" },
		{ "[j]\nverify_pattern=abc\n", "t.fio:2: option "
		  "'verify_pattern': 'abc' is not a string, a hex or decimal "
		  "number or %o" },
		{ "[j]\nverify_pattern=3000000000\n", "t.fio:2: option "
		  "'verify_pattern': '3000000000' is not a string, a hex or "
		  "decimal number or %o" },
		{ "[j]\nbuffer_pattern=%o\n", "t.fio:2: option "
		  "'buffer_pattern': '%o': formats (%o) are only for "
		  "verify_pattern" },
		{ "[j]\nbuffer_pattern='/nonexistent/p'\n", "t.fio:2: option "
		  "'buffer_pattern': cannot read the pattern file "
		  "'/nonexistent/p'" },
		{ "[j]\nrefill_buffers=2\n", "t.fio:2: option "
		  "'refill_buffers': '2' is not a boolean" },
		{ "[j]\nscramble_buffers=x\n", "t.fio:2: option "
		  "'scramble_buffers': 'x' is not a boolean" },
		{ "[j]\nzero_buffers=x\n", "t.fio:2: option 'zero_buffers': "
		  "'x' is not a boolean" },
		{ "[j]\nbuffer_compress_percentage=101\n", "t.fio:2: option "
		  "'buffer_compress_percentage': 101 is not a percentage" },
		{ "[j]\nbuffer_compress_chunk=1z\n", "t.fio:2: option "
		  "'buffer_compress_chunk': '1z': % and z are not allowed "
		  "here" },
		{ "[j]\ndedupe_percentage=200\n", "t.fio:2: option "
		  "'dedupe_percentage': 200 is not a percentage" },
		{ "[j]\ndedupe_mode=random\n", "t.fio:2: option 'dedupe_mode': "
		  "'random' is not repeat or working_set" },
		{ "[j]\ndedupe_working_set_percentage=101\n", "t.fio:2: option "
		  "'dedupe_working_set_percentage': 101 is not a percentage" },
		{ "[j]\ndedupe_global=x\n", "t.fio:2: option 'dedupe_global': "
		  "'x' is not a boolean" },
		{ "[j]\nsg_write_mode=write_stream\n", "t.fio:2: option "
		  "'sg_write_mode': 'write_stream' is not write, "
		  "write_and_verify, verify, write_same, same, "
		  "write_same_ndob, verify_bytchk_00, verify_bytchk_01 or "
		  "verify_bytchk_11 (write_stream is not modelled)" },
		{ "[j]\ntrim_percentage=10\n", "t.fio:2: option "
		  "'trim_percentage': above 0 is not modelled: trimming "
		  "verified blocks is not modelled (the fs target has no "
		  "trim, the raw target's trim resets a whole zone)" },
		{ "[j]\ntrim_percentage=101\n", "t.fio:2: option "
		  "'trim_percentage': 101 is not a percentage" },
		{ "[j]\ntrim_verify_zero=x\n", "t.fio:2: option "
		  "'trim_verify_zero': 'x' is not a boolean" },
		{ "[j]\nverify_state_save=1\n", "t.fio:2: option "
		  "'verify_state_save': 1 is not modelled: zcow writes no "
		  "verify state file (fio's record of a write phase cut "
		  "short): set verify_state_save=0" },
		{ "[j]\nverify_state_load\n", "t.fio:2: option "
		  "'verify_state_load': 1 is not modelled: zcow keeps no "
		  "verify state file to load: a verify phase reads back what "
		  "the job wrote in this run" },
		{ "[j]\nverify_async=x\n", "t.fio:2: option 'verify_async': "
		  "'x' is not an integer >= 0" },
		{ "[j]\nverify_async_cpus\n", "t.fio:2: option "
		  "'verify_async_cpus': needs a value" },
		{ "[j]\nverify_only=x\n", "t.fio:2: option 'verify_only': 'x' "
		  "is not a boolean" },
		{ "[j]\nverify_fatal=x\n", "t.fio:2: option 'verify_fatal': "
		  "'x' is not a boolean" },
		{ "[j]\nverify_dump=x\n", "t.fio:2: option 'verify_dump': 'x' "
		  "is not a boolean" },
		{ "[j]\nexperimental_verify=x\n", "t.fio:2: option "
		  "'experimental_verify': 'x' is not a boolean" },
		{ "[j]\nfill_device=x\n", "t.fio:2: option 'fill_device': 'x' "
		  "is not a boolean" },
		/* the resolved job (check_verify) */
		{ "[j]\nrw=write\nverify=pattern\n", "t.fio:3: option "
		  "'verify': verify=pattern needs verify_pattern" },
		{ "[j]\nrw=write\nruntime=1\ntime_based\nverify=md5\n"
		  "verify_only=1\n", "t.fio:6: option 'verify_only': "
		  "verify_only does not support time_based (fio)" },
		{ "[j]\nrw=write\nbs=4k\nverify=sha512\nverify_interval=128\n",
		  "t.fio:5: option 'verify_interval': a verify interval of "
		  "128 bytes does not hold the 168-byte header of sha512 "
		  "(fio: Blocksize too small)" },
		{ "[j]\nrw=write\nbs=128\nverify=sha512\nverify_interval=4k\n",
		  "t.fio:5: option 'verify_interval': a verify interval of "
		  "128 bytes does not hold the 168-byte header of sha512 "
		  "(fio: Blocksize too small)" },
		{ "[j]\nrw=write\nbs=128\nverify=sha512\n",
		  "t.fio:4: option 'verify': a verify interval of 128 bytes "
		  "does not hold the 168-byte header of sha512 (fio: "
		  "Blocksize too small)" },
		{ "[j]\nrw=write\nbs=4k\nverify=crc32c\nverify_interval=512\n"
		  "verify_offset=480\n", "t.fio:6: option 'verify_offset': "
		  "480 + the 44-byte header is beyond the verify interval of "
		  "512 bytes (fio: verify_offset too large)" },
		{ "[j]\nrw=write\ndedupe_percentage=10\n"
		  "dedupe_mode=working_set\n", "t.fio:4: option 'dedupe_mode': "
		  "working_set needs size= and one file per job" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_err_exact(bad[i].text, bad[i].msg);
}
END_TEST

/* fio's own examples of its pattern syntax (lib/pattern.c). */
START_TEST(test_verify_pattern_parses_fios_syntax)
{
	static const struct {
		const char *in;
		uint32_t len;
		uint8_t out[24];
		uint32_t nr_fmt, fmt;
	} ok[] = {
		{ "\"abcd\"", 4, { 0x61, 0x62, 0x63, 0x64 }, 0, 0 },
		{ "-1024", 4, { 0x00, 0xfc, 0xff, 0xff }, 0, 0 },
		{ "66", 1, { 0x42 }, 0, 0 },
		{ "0xFF0X1", 2, { 0xff, 0x01 }, 0, 0 },
		{ "%o", 8, { 0 }, 1, 0 },
		{ "\"123\"0xFFeeCC", 6, { 0x31, 0x32, 0x33, 0xff, 0xee, 0xcc },
		  0, 0 },
		{ "-100xab\"1\"%o\"2\"", 15, { 0xf6, 0xff, 0xff, 0xff, 0xab,
		  0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32 }, 1, 6 },
		{ "0xabc", 2, { 0x0a, 0xbc }, 0, 0 },
		{ "0", 1, { 0 }, 0, 0 },
		{ "0xdeadface\"abcd\"-12", 12, { 0xde, 0xad, 0xfa, 0xce, 0x61,
		  0x62, 0x63, 0x64, 0xf4, 0xff, 0xff, 0xff }, 0, 0 },
	};
	struct zfio_pattern p;
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(!zfio_pattern_parse(ok[i].in, true, &p, why,
						  sizeof(why)),
			      "%s: %s", ok[i].in, why);
		ck_assert_uint_eq(p.len, ok[i].len);
		ck_assert_msg(!memcmp(p.b, ok[i].out, p.len), "%s", ok[i].in);
		ck_assert_uint_eq(p.nr_fmt, ok[i].nr_fmt);
		if (p.nr_fmt)
			ck_assert_uint_eq(p.fmt_off[0], ok[i].fmt);
	}
}
END_TEST

/* The check values of "123456789" (the CRC catalogue's; fio's crc32c,
 * crc32 and crc64 are the raw registers, without inversions). */
START_TEST(test_verify_checksums_have_their_check_values)
{
	static const struct {
		int type;
		uint32_t len;
		const char *hex;
	} v[] = {
		{ ZFIO_VERIFY_CRC32C, 4, "7c6df91c" },	/* ~0xe3069283 */
		{ ZFIO_VERIFY_CRC32, 4, "7f89a189" },	/* 0x89a1897f */
		{ ZFIO_VERIFY_CRC64, 8, "cad9b8c414d9c6e9" },
		{ ZFIO_VERIFY_CRC16, 2, "3dbb" },	/* CRC-16/ARC */
		{ ZFIO_VERIFY_CRC7, 1, "75" },		/* CRC-7/MMC */
		{ ZFIO_VERIFY_MD5, 16, "25f9e794323b453885f5181f1b624d0b" },
		{ ZFIO_VERIFY_SHA1, 20,	/* fio: the words little-endian */
		  "1dbcc3f773048e809967df2a4cc3cc654134aea7" },
		{ ZFIO_VERIFY_SHA3_256, 32, "87cd084d190e436f147322b90e7384f6"
		  "a8e0676c99d21ef519ea718e51d45f9c" },
	};
	uint8_t out[64];
	char hex[140];
	size_t i, k;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_uint_eq(zfio_verify_csum(v[i].type, "123456789", 9,
						   out), v[i].len);
		for (k = 0; k < v[i].len; k++)
			snprintf(hex + 2 * k, 3, "%02x", out[k]);
		ck_assert_str_eq(hex, v[i].hex);
	}
}
END_TEST

/* A verify with @type over one write of @len at @off: filled, then
 * checked by @check after @mutate changed it. */
static int round_trip(struct zfio_vopts *o, uint8_t *buf, uint64_t len,
		      uint32_t interval, void (*mutate)(uint8_t *b),
		      const struct zfio_vwrite *want, uint32_t *nr_bad,
		      char *msg, size_t msg_len)
{
	struct zfio_buf_state st;
	struct zfio_vwrite w = { .off = 8192, .len = len, .numberio = 7,
				 .thread = 2, .time_ns = 3000000005ull };
	int ret;

	ck_assert_int_eq(zfio_buf_init(&st, o, 99, len, len, 0, NULL, 0, 0),
			 0);
	zfio_buf_fill(&st, buf, &w, interval);
	if (mutate)
		mutate(buf);
	ret = zfio_verify_check(o, interval, buf, len, 8192, "/f",
				want ? want : &w,
				ZFIO_CHECK_SEED | ZFIO_CHECK_NUMBERIO, nr_bad,
				msg, msg_len);
	zfio_buf_free(&st);
	return ret;
}

static void flip_data(uint8_t *b)
{
	b[100] ^= 0x01;
}

static void flip_two_intervals(uint8_t *b)
{
	b[100] ^= 0x01;
	b[3 * 512 + 100] ^= 0x01;
}

/* verify_offset=64: the header written at byte 64 of each interval */
static void expect_moved(uint8_t *b)
{
	ck_assert_uint_eq(get16(b + 64), ZFIO_VHDR_MAGIC);
	ck_assert_uint_eq(get16(b + 512 + 64), ZFIO_VHDR_MAGIC);
	ck_assert_uint_ne(get16(b), ZFIO_VHDR_MAGIC);
}

static void move_offset(uint8_t *b)
{
	put64(b + 16, 0);
}

START_TEST(test_verify_check_names_what_differs)
{
	struct zfio_vopts o;
	uint8_t buf[4096];
	struct zfio_vwrite other = { .off = 8192, .len = 4096, .seed = 5,
				     .numberio = 7 };
	char msg[768];
	uint32_t nr_bad;

	zfio_vopts_default(&o);
	o.verify = ZFIO_VERIFY_CRC32C;
	ck_assert_int_eq(round_trip(&o, buf, 4096, 4096, NULL, NULL, &nr_bad,
				    msg, sizeof(msg)), 0);
	ck_assert_uint_eq(get16(buf), ZFIO_VHDR_MAGIC);
	ck_assert_uint_eq(get16(buf + 2), ZFIO_VERIFY_CRC32C);
	ck_assert_uint_eq(get32(buf + 4), 4096);
	ck_assert_uint_eq(get64(buf + 16), 8192);
	ck_assert_uint_eq(get32(buf + 24), 3);	/* time: s, ns */
	ck_assert_uint_eq(get32(buf + 28), 5);
	ck_assert_uint_eq(get16(buf + 32), 2);	/* job, write number */
	ck_assert_uint_eq(get16(buf + 34), 7);
	ck_assert_int_eq(round_trip(&o, buf, 4096, 4096, flip_data, NULL,
				    &nr_bad, msg, sizeof(msg)), -EILSEQ);
	ck_assert_uint_eq(nr_bad, 1);
	ck_assert_msg(strstr(msg, "crc32c: verify failed at file /f offset "
			      "8192, length 4096 (requested block: "
			      "offset=8192, length=4096): expected CRC ") ==
		      msg, "%s", msg);
	ck_assert_int_eq(round_trip(&o, buf, 4096, 4096, move_offset, NULL,
				    &nr_bad, msg, sizeof(msg)), -EILSEQ);
	ck_assert_str_eq(msg, "verify: bad header offset 0, wanted 8192 at "
			 "file /f offset 8192, length 4096 (requested block: "
			 "offset=8192, length=4096)");
	/* a stale block: another write's seed */
	ck_assert_int_eq(round_trip(&o, buf, 4096, 4096, NULL, &other,
				    &nr_bad, msg, sizeof(msg)), -EILSEQ);
	ck_assert_msg(strstr(msg, "verify: bad header rand_seed ") == msg &&
		      strstr(msg, ", wanted 5 at file /f offset 8192"), "%s",
		      msg);
	/* verify_fatal=0 checks every interval of the block; 1 stops */
	ck_assert_int_eq(round_trip(&o, buf, 4096, 512, flip_two_intervals,
				    NULL, &nr_bad, msg, sizeof(msg)), -EILSEQ);
	ck_assert_uint_eq(nr_bad, 2);
	ck_assert_msg(strstr(msg, "crc32c: verify failed at file /f offset "
			      "8192, length 512 (requested block: "
			      "offset=8192, length=4096)") == msg, "%s", msg);
	o.verify_fatal = true;
	ck_assert_int_eq(round_trip(&o, buf, 4096, 512, flip_two_intervals,
				    NULL, &nr_bad, msg, sizeof(msg)), -EILSEQ);
	ck_assert_uint_eq(nr_bad, 1);
}
END_TEST

START_TEST(test_verify_pattern_and_offset_read_back)
{
	struct zfio_vopts o;
	uint8_t buf[4096];
	char msg[768], why[128];
	uint32_t nr_bad;

	zfio_vopts_default(&o);
	o.verify = ZFIO_VERIFY_PATTERN_NO_HDR;
	ck_assert_int_eq(zfio_pattern_parse("0xaa555aa5", true,
					    &o.verify_pattern, why,
					    sizeof(why)), 0);
	ck_assert_int_eq(round_trip(&o, buf, 4096, 4096, NULL, NULL, &nr_bad,
				    msg, sizeof(msg)), 0);
	ck_assert_uint_eq(buf[0], 0xaa);	/* no header: the pattern */
	ck_assert_uint_eq(buf[4095], 0xa5);
	ck_assert_int_eq(round_trip(&o, buf, 4096, 4096, flip_data, NULL,
				    &nr_bad, msg, sizeof(msg)), -EILSEQ);
	ck_assert_str_eq(msg, "pattern: verify failed at file /f offset 8192, "
			 "length 4096 (requested block: offset=8192, "
			 "length=4096): got pattern 'ab', wanted 'aa' at "
			 "block offset 100 (bad bits 1)");
	/* meta + pattern, a header every 512 bytes, moved to byte 64 */
	o.verify = ZFIO_VERIFY_META;
	o.verify_offset = 64;
	ck_assert_int_eq(round_trip(&o, buf, 4096, 512, expect_moved, NULL,
				    &nr_bad, msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(test_verify_interval_settles_as_fio)
{
	struct zfio_vopts o;

	zfio_vopts_default(&o);
	ck_assert_uint_eq(zfio_verify_interval(&o, 4096, 4096, 0), 4096);
	ck_assert_uint_eq(zfio_verify_interval(&o, 4096, 16384, 0), 4096);
	o.verify_interval = 512;
	ck_assert_uint_eq(zfio_verify_interval(&o, 4096, 4096, 0), 512);
	o.verify_interval = 8192;	/* above the write: the write */
	ck_assert_uint_eq(zfio_verify_interval(&o, 4096, 4096, 0), 4096);
	o.verify_interval = 1000;	/* not a factor: fio's gcd */
	ck_assert_uint_eq(zfio_verify_interval(&o, 4096, 12288, 0), 4096);
}
END_TEST

/* Two writes of @len through a state of options @o; their bytes. */
static void two_writes(struct zfio_vopts *o, uint8_t *a, uint8_t *b,
		       uint64_t len)
{
	struct zfio_buf_state st;
	struct zfio_vwrite w1 = { .off = 0, .len = len, .time_ns = 1 };
	struct zfio_vwrite w2 = { .off = len, .len = len, .time_ns = 2 };

	ck_assert_int_eq(zfio_buf_init(&st, o, 7, len, len, 64 * len, NULL,
				       0, 0), 0);
	zfio_buf_fill(&st, a, &w1, (uint32_t)len);
	zfio_buf_fill(&st, b, &w2, (uint32_t)len);
	zfio_buf_free(&st);
}

static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	while (n--)
		if (*p++ != v)
			return false;
	return true;
}

START_TEST(test_buffer_contents_follow_fios_options)
{
	struct zfio_vopts o;
	uint8_t a[4096], b[4096];
	char why[64];

	/* default: random once, then scrambled per write (offset, time) */
	zfio_vopts_default(&o);
	two_writes(&o, a, b, 4096);
	ck_assert(memcmp(a, b, 4096));
	ck_assert(!memcmp(a + 64 * 8, b + 64 * 8, 0));
	/* zero_buffers, scramble off: zeros */
	o.zero_buffers = true;
	o.scramble_buffers = false;
	two_writes(&o, a, b, 4096);
	ck_assert(all(a, 4096, 0) && all(b, 4096, 0));
	/* zero_buffers, scramble on (fio's default): the offset and time
	 * in every 512 bytes */
	o.scramble_buffers = true;
	two_writes(&o, a, b, 4096);
	ck_assert_uint_eq(get64(b + 48), 0);		/* seconds */
	ck_assert_uint_eq(get64(b + 56), 2);		/* ns */
	ck_assert_uint_eq(get64(b + 512 + 56), 2);
	/* buffer_pattern */
	zfio_vopts_default(&o);
	ck_assert_int_eq(zfio_pattern_parse("0xdeadbeef", false,
					    &o.buffer_pattern, why,
					    sizeof(why)), 0);
	o.scramble_buffers = false;
	two_writes(&o, a, b, 4096);
	ck_assert_uint_eq(get32(a + 4092), 0xefbeadde);
	ck_assert(!memcmp(a, b, 4096));
	/* refill: every write new random bytes */
	zfio_vopts_default(&o);
	o.refill_buffers = true;
	two_writes(&o, a, b, 4096);
	ck_assert(memcmp(a, b, 4096));
	/* compression 75% in 1 KiB chunks: the last 768 of each are zeros */
	o.compress_pct = 75;
	o.compress_chunk = 1024;
	two_writes(&o, a, b, 4096);
	ck_assert(all(a + 256, 768, 0) && all(a + 3 * 1024 + 256, 768, 0));
	ck_assert(!all(a, 256, 0));
	/* dedupe 100%: every buffer the same */
	zfio_vopts_default(&o);
	o.refill_buffers = true;
	o.dedupe_pct = 100;
	two_writes(&o, a, b, 4096);
	ck_assert(!memcmp(a, b, 4096));
}
END_TEST

Suite *fio_verify_suite(void)
{
	Suite *s = suite_create("fio_verify_suite");
	TCase *tc = tcase_create("verify");

	tcase_add_test(tc, test_verify_options_parse_into_the_job);
	tcase_add_test(tc, test_verify_defaults_are_fios);
	tcase_add_test(tc, test_verify_option_errors_name_file_line_option);
	tcase_add_test(tc, test_verify_pattern_parses_fios_syntax);
	tcase_add_test(tc, test_verify_checksums_have_their_check_values);
	tcase_add_test(tc, test_verify_check_names_what_differs);
	tcase_add_test(tc, test_verify_pattern_and_offset_read_back);
	tcase_add_test(tc, test_verify_interval_settles_as_fio);
	tcase_add_test(tc, test_buffer_contents_follow_fios_options);
	suite_add_tcase(s, tc);
	return s;
}
