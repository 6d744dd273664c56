/* SPDX-License-Identifier: MIT */
/*
 * zfio verify: fio's data verification and I/O buffer contents (fio 3.33,
 * the Debian fio: HOWTO "Verification" and "Buffers and memory"; verify.c,
 * io_u.c, lib/pattern.c, dedupe.c), for the runner.
 *
 * What a job writes: the bytes fio would put in its buffer, drawn from
 * zcow's seeded PRNG (base/prng.h) instead of fio's, so that a seed gives
 * the same bytes on every host.  With verify=, every verify_interval of a
 * write starts with fio's verify header (the layout of fio 3.33's struct
 * verify_header, little-endian: magic 0xacca, the checksum type, length,
 * seed, offset, time, job number, write number, a crc32c of the header)
 * and the checksum of the data after it; zfio_verify_check() reads it
 * back as fio's verify_io_u() does and names the first thing that differs
 * in fio's words.
 *
 * Checksums: crc32c, crc32 and crc64 from ISA-L (the same functions as
 * fio's own tables: fio's crc32 is the non-reflected 0x04C11DB7 without
 * inversions, its crc64 the reflected Jones polynomial without
 * inversions, its crc32c without the final inversion); md5, sha1,
 * sha256, sha512 and sha3 from nettle; xxhash (XXH32, seed 1) from
 * libxxhash; fio's crc16 (0x8005 reflected, init 0) and crc7 (0x09, the
 * Linux MMC table) are a few lines here, no Debian library has them.
 * Every type reads back in fio 3.33 (verify_only) but sha256 and sha512:
 * those are the standard digests in fio's fields (64 and 128 bytes),
 * while fio's own differ (its sha512 keeps the state before the final
 * padding), so fio cannot check those two.  sha1's five words are in
 * host order, as fio stores them.
 *
 * What it is not: the scheduler of the verify phase (harness/run.c keeps
 * the written pieces and issues the reads) or a target.
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_FIO_VERIFY_H
#define ZCOW_FIO_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* verify=: fio's enum, whose value the header's verify_type stores. */
enum zfio_verify {
	ZFIO_VERIFY_NONE = 0,
	ZFIO_VERIFY_META,		/* meta: the header only */
	ZFIO_VERIFY_MD5,
	ZFIO_VERIFY_CRC64,
	ZFIO_VERIFY_CRC32,
	ZFIO_VERIFY_CRC32C,
	ZFIO_VERIFY_CRC32C_INTEL,	/* not stored: fio maps it to crc32c */
	ZFIO_VERIFY_CRC16,
	ZFIO_VERIFY_CRC7,
	ZFIO_VERIFY_SHA256,
	ZFIO_VERIFY_SHA512,
	ZFIO_VERIFY_SHA3_224,
	ZFIO_VERIFY_SHA3_256,
	ZFIO_VERIFY_SHA3_384,
	ZFIO_VERIFY_SHA3_512,
	ZFIO_VERIFY_XXHASH,
	ZFIO_VERIFY_SHA1,
	ZFIO_VERIFY_PATTERN,		/* verify_pattern alone: a header too */
	ZFIO_VERIFY_PATTERN_NO_HDR,	/* verify=pattern: the pattern only */
	ZFIO_VERIFY_NULL,		/* verify=null: pretend */
	ZFIO_NR_VERIFY
};

/* dedupe_mode= */
enum zfio_dedupe_mode {
	ZFIO_DEDUPE_REPEAT,
	ZFIO_DEDUPE_WORKING_SET,
};

/* sg_write_mode= (fio's sg engine): what a write of the job does. */
enum zfio_sg_mode {
	ZFIO_SG_WRITE,			/* write (default) */
	ZFIO_SG_WRITE_VERIFY,		/* write_and_verify, verify: a write */
	ZFIO_SG_WRITE_SAME,		/* the first block, over the range */
	ZFIO_SG_WRITE_SAME_NDOB,	/* zeros over the range */
	ZFIO_SG_VERIFY_00,		/* read the range, compare nothing */
	ZFIO_SG_VERIFY_01,		/* compare the range with the buffer */
	ZFIO_SG_VERIFY_11,		/* compare each block with the first */
};

#define ZFIO_MAX_PATTERN	512u	/* fio's MAX_PATTERN_SIZE */
#define ZFIO_MAX_PATTERN_FMT	8u	/* %o formats in one pattern */
#define ZFIO_VHDR_LEN		40u	/* sizeof(fio's struct verify_header) */
#define ZFIO_VHDR_MAGIC		0xaccau

/* A pattern in fio's syntax (zfio_pattern_parse()): its bytes and where
 * each %o (the I/O's offset, 8 bytes little-endian) goes. */
struct zfio_pattern {
	uint8_t b[ZFIO_MAX_PATTERN];
	uint32_t len;			/* 0: none */
	uint32_t fmt_off[ZFIO_MAX_PATTERN_FMT];
	uint32_t nr_fmt;
};

/* The verify and buffer options of one job (struct zfio_job.vo). */
struct zfio_vopts {
	int verify;			/* enum zfio_verify; NONE */
	bool is_verify_set;		/* verify= given (verify_pattern
					 * alone makes it PATTERN) */
	bool do_verify;			/* 1 */
	bool verify_only;
	bool verify_fatal;
	bool verify_dump;		/* the blocks to the results folder */
	bool experimental_verify;	/* replay every write, issue order */
	uint32_t verify_interval;	/* bytes; 0: the smallest write */
	uint32_t verify_offset;		/* bytes; the header swapped there */
	uint64_t verify_backlog;	/* writes; 0: after the phase only */
	uint32_t verify_batch;		/* verify_backlog_batch; 0: backlog */
	struct zfio_pattern verify_pattern;
	struct zfio_pattern buffer_pattern;
	bool refill_buffers, is_refill_set;
	bool scramble_buffers;		/* 1 */
	bool zero_buffers;
	uint32_t compress_pct;		/* buffer_compress_percentage */
	uint32_t compress_chunk;	/* bytes; 512 */
	uint32_t dedupe_pct;
	int dedupe_mode;		/* enum zfio_dedupe_mode */
	uint32_t dedupe_ws_pct;		/* dedupe_working_set_percentage; 5 */
	bool dedupe_global;
	int sg_mode;			/* enum zfio_sg_mode; WRITE */
	bool trim_verify_zero;		/* 1 (trim_percentage is refused) */
};

void zfio_vopts_default(struct zfio_vopts *o);

/* verify= names: fio's enum or -1; the name of a type ("" for NONE). */
int zfio_verify_by_name(const char *name);
const char *zfio_verify_name(int type);
/* Bytes at the start of every verify interval: the header and the
 * checksum (0: verify=pattern, none). */
uint32_t zfio_verify_hdr_len(int type);

/*
 * Parse @s in fio's pattern syntax (lib/pattern.c): "string", 'file'
 * (at most ZFIO_MAX_PATTERN bytes of it), 0xHEX (bytes as written; an odd
 * count gives the first digit a byte), a decimal in INT_MIN..INT_MAX (its
 * bytes little-endian, no leading zero bytes; 0 is one byte), and, when
 * @allow_fmt, %o; one after the other.  Returns 0, or -EINVAL with the
 * reason in @why.
 */
int zfio_pattern_parse(const char *s, bool allow_fmt, struct zfio_pattern *p,
		       char *why, size_t why_len);

/* The checksum of @len bytes as fio computes it for verify type @type
 * into @out (the bytes the header stores); its length, 0 for types
 * without one. */
uint32_t zfio_verify_csum(int type, const void *buf, size_t len,
			  uint8_t out[64]);

/*
 * The contents of one job clone's writes (fio's fill_io_buffer(),
 * fill_verify_pattern(), populate_verify_io_u()).  Buffers are drawn from
 * a stream of seeds, @seed's: unique buffers take the next seeds, a
 * deduplicated one (dedupe_percentage) repeats the next unique seed
 * (dedupe_mode=repeat, as fio's copy of its buffer state) or one of the
 * working set's (working_set: the first unique seeds of the clone, or,
 * with dedupe_global, of every participating clone in turn).
 */
struct zfio_buf_state {
	const struct zfio_vopts *o;
	uint64_t seed;			/* the clone's stream */
	uint64_t next;			/* index of the next unique seed */
	uint64_t dedupe_rng, ws_rng;	/* the draws of dedupe */
	uint64_t vrng;			/* verify: one seed per write */
	uint64_t min_bs;		/* the smallest write, bytes */
	/* working set: nr_ws pages; page i is seed index (i % per) x adv
	 * of the stream of ws_seeds[(first + i / per) % nr_ws_seeds] */
	uint64_t nr_ws, ws_per, ws_adv;
	const uint64_t *ws_seeds;
	unsigned int nr_ws_seeds, ws_first;
	uint8_t *base;			/* no refill: the buffer filled once */
	uint64_t base_len;
	bool is_base_filled;
};

/*
 * Set @st up for a clone writing sizes @min_bs .. @max_bs with buffer
 * stream @seed; @ws_size the bytes dedupe_working_set_percentage is of
 * (the job's size).  @ws_seeds/@nr_ws_seeds/@ws_first: the streams of
 * the clones sharing a dedupe_global working set, this one's index;
 * NULL/0: only its own.  0 or -ENOMEM.  zfio_buf_free() releases it.
 */
int zfio_buf_init(struct zfio_buf_state *st, const struct zfio_vopts *o,
		  uint64_t seed, uint64_t min_bs, uint64_t max_bs,
		  uint64_t ws_size, const uint64_t *ws_seeds,
		  unsigned int nr_ws_seeds, unsigned int ws_first);
void zfio_buf_free(struct zfio_buf_state *st);

/* What fio writes in a block's verify headers: the write's seed, its
 * number among the job's writes, when and by which job (1-based). */
struct zfio_vwrite {
	uint64_t off;			/* of the I/O (file or device) */
	uint64_t len;
	uint64_t seed;
	uint16_t numberio;
	uint16_t thread;
	uint64_t time_ns;		/* simulated */
};

/*
 * Fill @buf with the @w->len bytes of a write at @w->off: without verify
 * the buffer options; with it the verify data and headers, w->seed drawn
 * here from the clone's verify stream (fio's verify_state).  @interval:
 * the verify interval in force (zfio_verify_interval()).
 */
void zfio_buf_fill(struct zfio_buf_state *st, void *buf,
		   struct zfio_vwrite *w, uint32_t interval);

/* The verify interval of a job whose writes are @min_bs .. @max_bs and
 * reads @min_rbs (0: no reads), as fio's fixup_options() settles it. */
uint32_t zfio_verify_interval(const struct zfio_vopts *o, uint64_t min_bs,
			      uint64_t max_bs, uint64_t min_rbs);

/*
 * Check a block read back (fio's verify_io_u()): @buf, @len bytes read
 * at @off of @file.  @w: the write that should be there (its seed and
 * number are checked as @checks says); NULL for a job that only reads
 * (magic, length, offset, header crc and checksum, as fio checks a file
 * written before).  ZFIO_CHECK_NUMBERIO: fio checks it for fixed-size
 * write jobs that are not time_based nor verify_only.  ZFIO_CHECK_SEED:
 * fio checks it for jobs that read and write; zcow also for a write
 * job's own verify, whose seeds it keeps (fio takes the seed from the
 * header there, so a block another job wrote with the same write number
 * passes fio).  Returns 0, or -EILSEQ with fio's message in
 * @msg ("crc32c: verify failed at file F offset O, length L (requested
 * block: offset=O, length=L): expected CRC ..., received CRC ..."); with
 * verify_fatal=0 the intervals after a bad checksum are checked too,
 * *@nr_bad counts the bad ones (the message is the first).  @buf is
 * changed (verify_offset swaps the header back).
 */
#define ZFIO_CHECK_SEED		(1u << 0)
#define ZFIO_CHECK_NUMBERIO	(1u << 1)
int zfio_verify_check(const struct zfio_vopts *o, uint32_t interval,
		      void *buf, uint64_t len, uint64_t off, const char *file,
		      const struct zfio_vwrite *w, unsigned int checks,
		      uint32_t *nr_bad, char *msg, size_t msg_len);

/* Print the options that differ from fio's defaults, in fio syntax. */
void zfio_vopts_print(FILE *out, const struct zfio_vopts *o);

/* The bytes a write @w should have put there (for verify_dump). */
void zfio_buf_expected(struct zfio_buf_state *st, void *buf,
		       const struct zfio_vwrite *w, uint32_t interval);

#endif /* ZCOW_FIO_VERIFY_H */
