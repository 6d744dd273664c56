// SPDX-License-Identifier: MIT
/*
 * What shapes a job's I/O stream (harness/fio_gen.c and its options in
 * harness/fio.c): bs, bsrange and bssplit parsed in fio's forms and drawn
 * with fio's distribution, and end to end through zcow run.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fio.h"
#include "run.h"
#include "tests.h"

#define RES	"/tmp/zcow-test-fio-gen"
#define T_FIO	"/tmp/zcow-test-fio-gen.fio"

/* the shared parse helpers (tests/fio_tool.c) */
#define parse_ok	zcow_test_parse_ok
#define parse_err	zcow_test_parse_err

/* The first job of @text. */
static struct zfio_job job_of(const char *text)
{
	struct zfio_spec *s = parse_ok(text);
	struct zfio_job j = s->jobs[0];

	zfio_free(s);
	return j;
}

/* Run @text (a job file) with @sets; summary.json's text. */
static char *run_summary(const char *text, const char *const *sets,
			 unsigned int nr)
{
	FILE *f = fopen(T_FIO, "w");
	char *dir = NULL, *s;

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(zrun_scenario(T_FIO, sets, nr, RES, true, &dir), 0);
	s = zcow_test_summary(dir);
	free(dir);
	unlink(T_FIO);
	return s;
}

/* The integer after the @n-th (0: first) "KEY": in @json. */
static uint64_t json_u64(const char *json, const char *key, unsigned int n)
{
	char k[64];
	const char *p = json;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	for (; n + 1; n--) {
		p = strstr(p, k);
		ck_assert_msg(p != NULL, "no %s", key);
		p += strlen(k);
	}
	return strtoull(p, NULL, 10);
}

/* ---- bs, bsrange, bssplit: parsing ------------------------------------ */

START_TEST(test_fio_gen_bssplit_sorted_missing_shares_rest)
{
	struct zfio_job j = job_of("[j]\nrw=randwrite\n"
				   "bssplit=4k/10:64k/50:32k/40\n");
	unsigned int d;

	for (d = 0; d < ZFIO_NR_DDIR; d++) {
		ck_assert_uint_eq(j.nr_bssplit[d], 3);
		ck_assert_uint_eq(j.bssplit[d][0].bs, 4096);
		ck_assert_uint_eq(j.bssplit[d][0].pct, 10);
		ck_assert_uint_eq(j.bssplit[d][1].bs, 32768);
		ck_assert_uint_eq(j.bssplit[d][1].pct, 40);
		ck_assert_uint_eq(j.bssplit[d][2].bs, 65536);
		ck_assert_uint_eq(j.bssplit[d][2].pct, 50);
		ck_assert_uint_eq(j.bs_min_d[d], 4096);
		ck_assert_uint_eq(j.bs_max_d[d], 65536);
	}
	ck_assert_uint_eq(j.bs, 4096);
	ck_assert_uint_eq(j.bs_max, 65536);
	ck_assert_int_eq(j.bs_opt, ZFIO_OPT_BSSPLIT);

	/* No percentage, or 0: an equal share of what is left. */
	j = job_of("[j]\nrw=write\nbssplit=8k/50:16k:4k/0\n");
	ck_assert_uint_eq(j.bssplit[1][0].bs, 16384);
	ck_assert_uint_eq(j.bssplit[1][0].pct, 25);
	ck_assert_uint_eq(j.bssplit[1][1].bs, 4096);
	ck_assert_uint_eq(j.bssplit[1][1].pct, 25);
	ck_assert_uint_eq(j.bssplit[1][2].pct, 50);
	j = job_of("[j]\nrw=write\nbssplit=4k:8k:16k\n");
	ck_assert_uint_eq(j.bssplit[1][0].pct, 33);
	ck_assert_uint_eq(j.bssplit[1][2].pct, 33);

	/* Reads, then writes and trims (fio's per-direction form). */
	j = job_of("[j]\nrw=write\nbssplit=64k/40:1024k/60,1024k/100\n");
	ck_assert_uint_eq(j.nr_bssplit[0], 2);
	ck_assert_uint_eq(j.bs_min_d[0], 65536);
	ck_assert_uint_eq(j.nr_bssplit[1], 1);
	ck_assert_uint_eq(j.bs_min_d[1], 1048576);
	ck_assert_uint_eq(j.bs_max_d[2], 1048576);
	ck_assert_uint_eq(j.bs, 1048576);	/* writes only */
	/* An empty part keeps the default. */
	j = job_of("[j]\nrw=write\nbssplit=,8k/50:16k/50\n");
	ck_assert_uint_eq(j.nr_bssplit[0], 0);
	ck_assert_uint_eq(j.bs_min_d[0], 4096);
	ck_assert_uint_eq(j.bs, 8192);
	ck_assert_uint_eq(j.bs_max, 16384);
}
END_TEST

START_TEST(test_fio_gen_bsrange_and_bs_per_direction)
{
	struct zfio_job j = job_of("[j]\nrw=randrw\nbsrange=1k-4k\n");

	ck_assert_uint_eq(j.bs_min_d[0], 1024);
	ck_assert_uint_eq(j.bs_max_d[0], 4096);
	ck_assert_uint_eq(j.bs_max_d[2], 4096);
	ck_assert_uint_eq(j.bs, 1024);
	ck_assert_uint_eq(j.bs_max, 4096);
	ck_assert_int_eq(j.bs_opt, ZFIO_OPT_BSRANGE);
	/* "min:max", a reversed pair, the alias, per direction. */
	j = job_of("[j]\nrw=write\nblocksize_range=8k:2k,32k-16k\n");
	ck_assert_uint_eq(j.bs_min_d[0], 2048);
	ck_assert_uint_eq(j.bs_max_d[0], 8192);
	ck_assert_uint_eq(j.bs_min_d[1], 16384);
	ck_assert_uint_eq(j.bs_max_d[1], 32768);
	ck_assert_uint_eq(j.bs, 16384);
	/* bs takes fio's per-direction form too; the last setting wins. */
	j = job_of("[j]\nrw=read\nbssplit=4k/50:8k/50\nbs=16k,4k\n");
	ck_assert_uint_eq(j.nr_bssplit[0], 0);
	ck_assert_uint_eq(j.bs, 16384);
	ck_assert_uint_eq(j.bs_max, 16384);
	ck_assert_int_eq(j.bs_opt, ZFIO_OPT_BS);
	j = job_of("[j]\nrw=write\nbs=16k,4k\n");
	ck_assert_uint_eq(j.bs, 4096);
	j = job_of("[j]\nrw=write\nbs_unaligned\nbs_is_seq_rand=1\n");
	ck_assert(j.bs_unaligned && j.bs_is_seq_rand);
	j = job_of("[j]\nrw=randread\nbs_is_seq_rand=1\nbs=4k,64k\n");
	ck_assert_uint_eq(j.bs, 65536);		/* random: the "write" size */
}
END_TEST

START_TEST(test_fio_gen_block_size_errors_name_file_line_option)
{
	parse_err("[j]\nbssplit=4k/60:8k/50\n",
		  "t.fio:2: option 'bssplit': percentages add to 110, more "
		  "than 100");
	parse_err("[j]\nbssplit=4k/x\n",
		  "t.fio:2: option 'bssplit': 'x' is not a percentage "
		  "(0..100)");
	parse_err("[j]\nbssplit=0/100\n",
		  "t.fio:2: option 'bssplit': block size 0");
	parse_err("[j]\nbssplit=512m/100\n",
		  "t.fio:2: option 'bssplit': 536870912 bytes is above the "
		  "limit of 268435456 (256 MiB)");
	parse_err("[j]\nbssplit=4q/100\n",
		  "t.fio:2: option 'bssplit': '4q' is not a size");
	parse_err("[j]\nbsrange=4k\n",
		  "t.fio:2: option 'bsrange': '4k' is not a range (min-max)");
	parse_err("[j]\nbsrange=\n", "t.fio:2: option 'bsrange': needs a "
		  "value");
	parse_err("[j]\nbs=4k,8k,16k,32k\n",
		  "t.fio:2: option 'bs': more than 3 comma-separated values "
		  "(reads, writes, trims)");
	parse_err("[j]\nrw=rw\nbs=4k,8k\n",
		  "t.fio:3: option 'bs': the smallest I/O of reads is 4096 "
		  "bytes, of writes 8192: a job's directions must share it "
		  "(its offset unit)");
	parse_err("[j]\nrw=randrw\nbssplit=4k/50:8k/50,8k\n",
		  "t.fio:3: option 'bssplit': the smallest I/O of reads is "
		  "4096 bytes, of writes 8192: a job's directions must share "
		  "it (its offset unit)");
}
END_TEST

/* ---- bs, bsrange, bssplit: drawing ------------------------------------ */

/* Draw @n sizes of direction @d; counts per multiple of 4 KiB (1..16). */
static void draw_counts(const struct zfio_job *j, enum zfio_ddir d,
			uint64_t room, unsigned int n, uint64_t seed,
			unsigned int counts[17])
{
	uint64_t rng = seed;
	unsigned int i;

	memset(counts, 0, 17 * sizeof(counts[0]));
	for (i = 0; i < n; i++) {
		uint64_t bs = zfio_next_bs(j, d, true, room, &rng);

		ck_assert_uint_eq(bs % 4096, 0);
		ck_assert_uint_le(bs, 65536);
		counts[bs / 4096]++;
	}
}

START_TEST(test_fio_gen_bssplit_draws_its_percentages)
{
	struct zfio_job j = job_of("[j]\nrw=randwrite\n"
				   "bssplit=4k/10:64k/50:32k/40\n");
	unsigned int c[17];
	uint64_t rng;

	draw_counts(&j, ZFIO_DDIR_WRITE, UINT64_MAX, 100000, 7, c);
	/* 10 %, 40 %, 50 % of 100000 within 1 %; the exact counts pin
	 * the draw (one 32-bit value a size, fio's running test). */
	ck_assert_uint_eq(c[1], 9951);
	ck_assert_uint_eq(c[8], 40238);
	ck_assert_uint_eq(c[16], 49811);
	ck_assert_uint_eq(c[1] + c[8] + c[16], 100000);
	/* Only what fits the room left: a 64 KiB draw is redrawn, so 4
	 * KiB 10 / 50, 32 KiB 40 / 50. */
	draw_counts(&j, ZFIO_DDIR_WRITE, 40960, 100000, 7, c);
	ck_assert_uint_eq(c[16], 0);
	ck_assert_uint_eq(c[1], 19980);
	ck_assert_uint_eq(c[8], 80020);
	/* Not even the smallest: 0 (the job ends), nothing drawn. */
	rng = 7;
	ck_assert_uint_eq(zfio_next_bs(&j, ZFIO_DDIR_WRITE, true, 4095, &rng),
			  0);
	ck_assert_uint_eq(rng, 7);
}
END_TEST

START_TEST(test_fio_gen_bsrange_uniform_over_multiples_of_min)
{
	struct zfio_job j = job_of("[j]\nrw=randwrite\nbsrange=4k-16k\n");
	struct zfio_job u = job_of("[j]\nrw=randwrite\nbsrange=4k-10k\n");
	unsigned int c[17], i;
	uint64_t rng = 3, bs;

	/* fio: min + max * U, aligned down to min: 4, 8, 12, 16 KiB. */
	draw_counts(&j, ZFIO_DDIR_WRITE, UINT64_MAX, 100000, 7, c);
	ck_assert_uint_eq(c[1], 25059);
	ck_assert_uint_eq(c[2], 25130);
	ck_assert_uint_eq(c[3], 24735);
	ck_assert_uint_eq(c[4], 25076);
	/* A max that is no multiple of min takes the rest: 4k 40 %, 8k 40
	 * %, 10k 20 %. */
	for (i = 0, c[0] = c[1] = c[2] = 0; i < 10000; i++) {
		bs = zfio_next_bs(&u, ZFIO_DDIR_WRITE, true, UINT64_MAX, &rng);
		c[bs == 4096 ? 0 : bs == 8192 ? 1 : 2]++;
		ck_assert(bs == 4096 || bs == 8192 || bs == 10240);
	}
	ck_assert_uint_eq(c[0], 4037);
	ck_assert_uint_eq(c[1], 4050);
	ck_assert_uint_eq(c[2], 1913);
}
END_TEST

START_TEST(test_fio_gen_fixed_bs_draws_nothing)
{
	struct zfio_job j = job_of("[j]\nrw=randwrite\nbs=8k\n");
	struct zfio_job sr = job_of("[j]\nrw=randwrite\nbs_is_seq_rand=1\n"
				    "percentage_random=50\nbs=4k,4k\n"
				    "bssplit=4k,4k/50:16k/50\n");
	uint64_t rng = 11, bs;
	unsigned int i, nr16 = 0;

	ck_assert_uint_eq(zfio_next_bs(&j, ZFIO_DDIR_WRITE, true, 0, &rng),
			  8192);
	ck_assert_uint_eq(rng, 11);
	/* bs_is_seq_rand: sequential I/O takes the read sizes. */
	for (i = 0; i < 1000; i++) {
		ck_assert_uint_eq(zfio_next_bs(&sr, ZFIO_DDIR_WRITE, false,
					       UINT64_MAX, &rng), 4096);
		bs = zfio_next_bs(&sr, ZFIO_DDIR_WRITE, true, UINT64_MAX,
				  &rng);
		nr16 += bs == 16384;
	}
	ck_assert_uint_eq(nr16, 483);
}
END_TEST

/* End to end: a sequential bssplit writer covers its file exactly, its
 * I/Os of both sizes; the summary records the block range. */
START_TEST(test_fio_gen_run_bssplit_writes_the_whole_file)
{
	char *s = run_summary("[j]\nrw=write\nsize=1m\n"
			      "bssplit=4k/50:64k/50\n[zcow]\ntarget=fs\n",
			      NULL, 0);

	/* 16 of 4 KiB and 15 of 64 KiB make 1 MiB. */
	ck_assert_uint_eq(json_u64(s, "write_bytes", 0), 1048576);
	ck_assert_uint_eq(json_u64(s, "ios", 1), 31);
	ck_assert_uint_eq(json_u64(s, "bs", 0), 4096);
	free(s);
}
END_TEST

/* The fs target takes any size (zcow_pwrite reads, modifies and writes a
 * block it covers in part); the raw target refuses one off its LBA
 * before the run, naming the job. */
START_TEST(test_fio_gen_run_any_size_on_files_lba_sizes_on_raw)
{
	FILE *f;
	char *err = NULL, *s;
	struct zfio_job j;

	s = run_summary("[j]\nrw=write\nsize=1m\nbssplit=512/50:4k/50\n"
			"[zcow]\ntarget=fs\n", NULL, 0);
	ck_assert_uint_eq(json_u64(s, "write_bytes", 0), 1048576);
	free(s);
	f = fopen(T_FIO, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[j]\nzonemode=zbd\nrw=write\nsize=1m\n"
	      "bssplit=512/50:4k/50\n", f);
	fclose(f);
	ck_assert_int_eq(zcow_test_run(NULL, &err, "run", T_FIO, "--results",
				       RES, NULL), 1);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":1: job 'j': bs=512 must be "
			 "a multiple of the 4096-byte block and fit a zone "
			 "(every size bsrange/bssplit may draw)\n");
	free(err);
	unlink(T_FIO);
	/* Aligned (the default), 6 KiB draws are 4 KiB: they fit. */
	j = job_of("[j]\nrw=write\nbssplit=4k/50:6k/50\n");
	ck_assert(zfio_bs_is_multiple(&j, 4096));
	j = job_of("[j]\nrw=write\nbsrange=4k-8k\nbs_unaligned\n");
	ck_assert(!zfio_bs_is_multiple(&j, 4096));
	ck_assert(zfio_bs_is_multiple(&j, 1));
	/* zcow crash replays one size. */
	f = fopen(T_FIO, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[j]\nrw=write\nbssplit=4k/50:8k/50\n[zcow]\n"
	      "device=sim:zones=16,zone_size=4M,zone_cap=1M\n[crash]\n"
	      "workload=meta\nops=4\n", f);
	fclose(f);
	ck_assert_int_eq(zcow_test_run(NULL, &err, "crash", T_FIO, "--quick",
				       "--no-results", NULL), 2);
	ck_assert_msg(strstr(err, T_FIO ":3: option 'bssplit': zcow crash "
			     "replays one block size"), "stderr: %s", err);
	free(err);
	unlink(T_FIO);
}
END_TEST


/* ---- rate, thinktime: parsing ----------------------------------------- */

START_TEST(test_fio_gen_rate_and_thinktime_parse_fios_forms)
{
	struct zfio_job j = job_of("[j]\nrw=randrw\nrate=1m\n");

	ck_assert_uint_eq(j.rate[0], 1048576);
	ck_assert_uint_eq(j.rate[1], 1048576);
	ck_assert_uint_eq(j.rate[2], 1048576);
	ck_assert(!j.rate_poisson);
	ck_assert_uint_eq(j.ratecycle_ms, 1000);
	ck_assert_uint_eq(j.thinktime_ns, 0);
	ck_assert_uint_eq(j.thinktime_blocks, 1);
	ck_assert(!j.thinktime_issue);
	j = job_of("[j]\nrw=randrw\nrate=,100k\nrate_iops=50,60,70\n"
		   "ratemin=1024\nrate_iops_min=5\nrate_process=poisson\n"
		   "ratecycle=500\n");
	ck_assert_uint_eq(j.rate[0], 0);
	ck_assert_uint_eq(j.rate[1], 102400);
	ck_assert_uint_eq(j.rate_iops[0], 50);
	ck_assert_uint_eq(j.rate_iops[2], 70);
	ck_assert_uint_eq(j.rate_min[2], 1024);
	ck_assert_uint_eq(j.rate_iops_min[1], 5);
	ck_assert(j.rate_poisson);
	ck_assert_uint_eq(j.ratecycle_ms, 500);
	/* thinktime: microseconds without a unit (fio's is_time) */
	j = job_of("[j]\nthinktime=2000\nthinktime_spin=500\n"
		   "thinktime_blocks=4\nthinktime_blocks_type=issue\n");
	ck_assert_uint_eq(j.thinktime_ns, 2000000);
	ck_assert_uint_eq(j.thinktime_spin_ns, 500000);
	ck_assert_uint_eq(j.thinktime_blocks, 4);
	ck_assert(j.thinktime_issue);
	/* a unit; a spin above thinktime is clamped to it (fio) */
	j = job_of("[j]\nthinktime=10ms\nthinktime_spin=1s\n");
	ck_assert_uint_eq(j.thinktime_ns, 10000000);
	ck_assert_uint_eq(j.thinktime_spin_ns, 10000000);
}
END_TEST

START_TEST(test_fio_gen_rate_and_thinktime_errors_name_file_line_option)
{
	parse_err("[j]\nrate=1x\n", "t.fio:2: option 'rate': '1x' is not a "
		  "size");
	parse_err("[j]\nrate_iops=,abc\n", "t.fio:2: option 'rate_iops': "
		  "'abc' is not an integer");
	parse_err("[j]\nrate_process=burst\n", "t.fio:2: option "
		  "'rate_process': 'burst' is not linear or poisson");
	parse_err("[j]\nthinktime=soon\n", "t.fio:2: option 'thinktime': "
		  "'soon' is not a time");
	parse_err("[j]\nthinktime_blocks=0\n", "t.fio:2: option "
		  "'thinktime_blocks': '0' is not an integer >= 1");
	parse_err("[j]\nthinktime_blocks_type=both\n", "t.fio:2: option "
		  "'thinktime_blocks_type': 'both' is not complete or issue");
	parse_err("[j]\nrate_process=poisson\nrate=1000\n", "t.fio:3: "
		  "option 'rate': 1000 bytes/s is below one I/O of 4096 bytes "
		  "per second (rate_process=poisson)");
}
END_TEST

/* ---- rate: fio's usec_for_io() and rate_ddir() ------------------------ */

START_TEST(test_fio_gen_rate_next_issue_times_are_fios)
{
	struct zfio_job j = job_of("[j]\nrw=write\nrate=3000\n");
	struct zfio_rate r;
	uint64_t rng = 5, at, sum = 0;
	unsigned int i;

	zfio_rate_init(&r, &j);
	ck_assert_uint_eq(r.bps[1], 3000);
	/* bytes / rate in whole us: 4096 B at 3000 B/s = 1.365333 s */
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	ck_assert_uint_eq(r.next_us[1], 1365333);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	ck_assert_uint_eq(r.next_us[1], 2730666);
	ck_assert_uint_eq(rng, 5);	/* linear draws nothing */
	/* ahead: wait until then; capped by the runtime's end */
	ck_assert_int_eq(zfio_rate_ddir(&r, &j, ZFIO_DDIR_WRITE, 1000, 0,
					&at), ZFIO_DDIR_WRITE);
	ck_assert_uint_eq(at, 2730666);
	zfio_rate_ddir(&r, &j, ZFIO_DDIR_WRITE, 1000, 2000000, &at);
	ck_assert_uint_eq(at, 2000000);
	zfio_rate_ddir(&r, &j, ZFIO_DDIR_WRITE, 2730666, 0, &at);
	ck_assert_uint_eq(at, 2730666);

	/* rate_iops: rate_iops x bs; with bssplit the IOPS count */
	j = job_of("[j]\nrw=write\nrate_iops=10\nbssplit=4k/50:8k/50\n");
	zfio_rate_init(&r, &j);
	ck_assert_uint_eq(r.bps[1], 40960);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 8192, &rng);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	ck_assert_uint_eq(r.next_us[1], 200000);

	/* poisson: exponential gaps of mean 1 / IOPS */
	j = job_of("[j]\nrw=write\nrate_iops=1000\nrate_process=poisson\n");
	zfio_rate_init(&r, &j);
	for (i = 0; i < 10000; i++)
		zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	sum = r.next_us[1];
	/* 10000 gaps of mean 1000 us, each cut to whole us (fio) */
	ck_assert_uint_eq(sum, 9964398);
}
END_TEST

/* A mixed job ahead of its rate in one direction issues the other when
 * that one is behind; both ahead: the one due first. */
START_TEST(test_fio_gen_rate_mixed_job_switches_direction)
{
	struct zfio_job j = job_of("[j]\nrw=randrw\nrate=4096,8192\n");
	struct zfio_job w = job_of("[j]\nrw=randrw\nrwmixread=100\n"
				   "rate=4096\n");
	struct zfio_rate r;
	uint64_t rng = 1, at;

	zfio_rate_init(&r, &j);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_READ, 4096, &rng);
	ck_assert_uint_eq(r.next_us[0], 1000000);
	ck_assert_int_eq(zfio_rate_ddir(&r, &j, ZFIO_DDIR_READ, 10, 0, &at),
			 ZFIO_DDIR_WRITE);
	ck_assert_uint_eq(at, 10);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	ck_assert_uint_eq(r.next_us[1], 1000000);
	zfio_rate_issued(&r, &j, ZFIO_DDIR_WRITE, 4096, &rng);
	ck_assert_uint_eq(r.next_us[1], 1500000);
	/* both ahead: reads are due first */
	ck_assert_int_eq(zfio_rate_ddir(&r, &j, ZFIO_DDIR_WRITE, 20, 0, &at),
			 ZFIO_DDIR_READ);
	ck_assert_uint_eq(at, 1000000);
	/* a direction the mix never picks is not switched to */
	zfio_rate_init(&r, &w);
	zfio_rate_issued(&r, &w, ZFIO_DDIR_READ, 4096, &rng);
	ck_assert_int_eq(zfio_rate_ddir(&r, &w, ZFIO_DDIR_READ, 10, 0, &at),
			 ZFIO_DDIR_READ);
	ck_assert_uint_eq(at, 1000000);
}
END_TEST

/* ---- rate, thinktime: end to end in simulated time -------------------- */

static const char *const instant[] = { "profile=instant" };

/* profile=instant charges nothing: the job's time is its waits alone. */
START_TEST(test_fio_gen_run_rate_spaces_issues_exactly)
{
	char *s = run_summary("[j]\nrw=write\nsize=1m\nbs=64k\nrate=1m\n"
			      "[zcow]\ntarget=fs\n", instant, 1);

	/* 16 writes, one every 65536 / 1048576 s: the last at 937.5 ms */
	ck_assert_uint_eq(json_u64(s, "ios", 1), 16);
	ck_assert_uint_eq(json_u64(s, "end_ns", 0), 937500000);
	free(s);
	s = run_summary("[j]\nrw=write\nsize=64k\nbs=4k\nrate_iops=50\n"
			"[zcow]\ntarget=fs\n", instant, 1);
	ck_assert_uint_eq(json_u64(s, "end_ns", 0), 15 * 20000000ull);
	free(s);
}
END_TEST

/* On the ZN540 model: the writes keep to the rate; the job's bytes per
 * second are the rate within one I/O's latency at the end. */
START_TEST(test_fio_gen_run_rate_holds_on_a_timed_device)
{
	char *s = run_summary("[j]\nrw=write\nsize=1m\nbs=4k\nrate=1m\n"
			      "[zcow]\ntarget=fs\n", NULL, 0);
	uint64_t end = json_u64(s, "end_ns", 0);

	/* the 256th write issued at floor(255 x 4096 x 1e6 / 2^20) us */
	ck_assert_uint_ge(end, 996093000ull);
	ck_assert_uint_lt(end, 996093000ull + 1000000);
	ck_assert_uint_eq(json_u64(s, "write_bytes", 0), 1048576);
	free(s);
}
END_TEST

START_TEST(test_fio_gen_run_thinktime_stalls_exactly)
{
	char *s = run_summary("[j]\nrw=write\nsize=1m\nbs=4k\n"
			      "thinktime=2000\nthinktime_blocks=4\n"
			      "[zcow]\ntarget=fs\n", instant, 1);

	/* 256 writes, a 2 ms stall after every 4th: 64 stalls */
	ck_assert_uint_eq(json_u64(s, "end_ns", 0), 64 * 2000000ull);
	free(s);
	/* the stall ends with the runtime */
	s = run_summary("[j]\nrw=write\nsize=1m\nbs=4k\nthinktime=1s\n"
			"runtime=2500ms\ntime_based\n[zcow]\ntarget=fs\n",
			instant, 1);
	ck_assert_uint_eq(json_u64(s, "ios", 1), 3);
	ck_assert_uint_eq(json_u64(s, "end_ns", 0), 2500000000ull);
	free(s);
}
END_TEST

/* With I/Os in flight, thinktime_blocks_type=complete counts the I/Os
 * done by each issue, issue the ones issued: more stalls. */
START_TEST(test_fio_gen_run_thinktime_counts_issued_or_completed)
{
	const char *job = "[j]\nrw=write\nsize=1m\nbs=4k\niodepth=8\n"
			  "thinktime=1ms\nthinktime_blocks=8\n";
	char text[256], *s;
	uint64_t complete, issue;

	snprintf(text, sizeof(text), "%s[zcow]\ntarget=fs\n", job);
	s = run_summary(text, NULL, 0);
	complete = json_u64(s, "end_ns", 0);
	free(s);
	snprintf(text, sizeof(text), "%sthinktime_blocks_type=issue\n"
		 "[zcow]\ntarget=fs\n", job);
	s = run_summary(text, NULL, 0);
	issue = json_u64(s, "end_ns", 0);
	free(s);
	/* Without thinktime the job takes 3008256 ns on the ZN540 model.
	 * issue: 256 / 8 = 32 stalls of 1 ms; complete: the count lags
	 * the issues by the I/Os in flight, so the last 8 make no stall. */
	ck_assert_uint_eq(issue, 3008256 + 32 * 1000000ull);
	ck_assert_uint_eq(complete, 3008256 + 31 * 1000000ull);
}
END_TEST

/* rate_min: fio's check (not in the first 2 s, then per ratecycle) ends
 * the run with fio's message. */
START_TEST(test_fio_gen_run_rate_min_not_met_fails_as_fio)
{
	FILE *f = fopen(T_FIO, "w");
	char *err = NULL;

	ck_assert_ptr_nonnull(f);
	fputs("[j]\nrw=write\nsize=1m\nbs=4k\nrate=100k\nrate_min=200k\n"
	      "[zcow]\ntarget=fs\nprofile=instant\n", f);
	fclose(f);
	ck_assert_int_eq(zcow_test_run(NULL, &err, "run", T_FIO, "--results",
				       RES, NULL), 1);
	ck_assert_str_eq(err, "zcow run: j: rate_min=204800B/s not met, got "
			 "102400B/s\n");
	free(err);
	unlink(T_FIO);
	/* met: the run completes */
	free(run_summary("[j]\nrw=write\nsize=1m\nbs=4k\nrate=100k\n"
			 "rate_min=50k\n[zcow]\ntarget=fs\n", instant, 1));
	/* the clock restarts after ramp_time (fio resets its counters):
	 * 1.5 s after a 2 s ramp is still within the 2 s settle period */
	free(run_summary("[j]\nrw=write\nsize=1m\nbs=4k\nrate=100k\n"
			 "rate_min=200k\nramp_time=2s\nruntime=1500ms\n"
			 "time_based\n[zcow]\ntarget=fs\n", instant, 1));
}
END_TEST


/* ---- rw=PATTERN:N, rw_sequencer --------------------------------------- */

START_TEST(test_fio_gen_rw_modifier_parses_fios_forms)
{
	struct zfio_job j = job_of("[j]\nrw=randread:8\n");

	ck_assert_int_eq(j.rw, ZFIO_RANDREAD);
	ck_assert_uint_eq(j.rw_seq_nr, 8);
	ck_assert_int_eq(j.rw_seq_add, 0);
	ck_assert(!j.rw_identical);
	j = job_of("[j]\nrw=read:-8k\nrw_sequencer=identical\n");
	ck_assert_int_eq(j.rw, ZFIO_READ);
	ck_assert_uint_eq(j.rw_seq_nr, 1);
	ck_assert_int_eq(j.rw_seq_add, -8192);
	ck_assert(j.rw_identical);
	j = job_of("[j]\nreadwrite=write:112k\n");
	ck_assert_int_eq(j.rw_seq_add, 114688);
	/* a later rw= without a modifier drops it */
	j = job_of("[j]\nrw=randread:8\nrw=randread\n");
	ck_assert_uint_eq(j.rw_seq_nr, 1);
	parse_err("[j]\nrw=randread:0\n", "t.fio:2: option 'rw': '0' is not "
		  "a count of I/Os in 1..4294967295");
	parse_err("[j]\nrw=write:-x\n", "t.fio:2: option 'rw': '-x' is not a "
		  "size (a hole, or backwards with '-')");
	parse_err("[j]\nrw=scan:4\n", "t.fio:2: option 'rw': unknown pattern "
		  "'scan'");
	parse_err("[j]\nrw_sequencer=random\n", "t.fio:2: option "
		  "'rw_sequencer': 'random' is not sequential or identical");
}
END_TEST

/* Offsets (in KiB) of @n I/Os of 4 KiB in a range of @range KiB, the
 * way run.c asks: each I/O ends where the next sequential one starts. */
static void offsets(const char *text, unsigned int n, uint64_t range,
		    uint64_t *out)
{
	struct zfio_job j = job_of(text);
	struct zfio_dist_state dist;
	struct zfio_offsets st = { .nr_left = 1 };
	uint64_t rng = 9, seq = 0, off;
	char err[ZFIO_ERR_LEN];
	unsigned int i;
	bool is_rand;

	ck_assert_int_eq(zfio_dist_init(&dist, &j, range / 4, 1, 2, err,
					sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		off = zfio_next_offset(&j, &dist, &st, ZFIO_DDIR_READ, seq,
				       range << 10, &rng, &is_rand);
		out[i] = off >> 10;
		seq = (off + 4096) % (range << 10);
	}
}

START_TEST(test_fio_gen_rw_modifier_offsets_are_fios)
{
	uint64_t o[12];
	static const uint64_t back[12] = { 0, 56, 52, 48, 44, 40, 36, 32,
					   28, 24, 20, 16 };
	static const uint64_t hole[12] = { 0, 12, 24, 36, 48, 60, 0, 12, 24,
					   36, 48, 60 };

	/* backwards: the first at 0, then from the end less the step */
	offsets("[j]\nrw=read:-8k\n", 12, 64, o);
	ck_assert_int_eq(memcmp(o, back, sizeof(back)), 0);
	/* holes of 8 KiB after every 4 KiB; the end of the range ends the
	 * pass (fio: the file is done), the next starts at 0 */
	offsets("[j]\nrw=read:8k\n", 12, 64, o);
	ck_assert_int_eq(memcmp(o, hole, sizeof(hole)), 0);
	/* randread:4: a draw, 3 sequential after it, a draw ... (the draws
	 * of random_distribution's default for seed 9: blocks 100, 98) */
	offsets("[j]\nrw=randread:4\n", 12, 1024, o);
	ck_assert_uint_eq(o[1], o[0] + 4);
	ck_assert_uint_eq(o[2], o[0] + 8);
	ck_assert_uint_eq(o[3], o[0] + 12);
	ck_assert_uint_ne(o[4], o[3] + 4);
	ck_assert_uint_eq(o[5], o[4] + 4);
	ck_assert_uint_eq(o[7], o[4] + 12);
	ck_assert_uint_eq(o[9], o[8] + 4);
	ck_assert_uint_eq(o[0], 400);
	ck_assert_uint_eq(o[4], 392);
	/* identical: the same offset 4 times */
	offsets("[j]\nrw=randread:4\nrw_sequencer=identical\n", 12, 1024, o);
	ck_assert_uint_eq(o[0], 400);
	ck_assert_uint_eq(o[3], 400);
	ck_assert_uint_eq(o[4], 392);
	ck_assert_uint_eq(o[7], 392);
	ck_assert_uint_eq(o[8], 728);
}
END_TEST

START_TEST(test_fio_gen_run_rw_modifier_on_files_and_refusals)
{
	FILE *f;
	char *err = NULL, *s;

	s = run_summary("[j]\nrw=read:-8k\nsize=64k\n[zcow]\ntarget=fs\n"
			"prefill=1\n", NULL, 0);
	ck_assert_uint_eq(json_u64(s, "ios", 1), 16);
	ck_assert_uint_eq(json_u64(s, "bytes", 1), 65536);
	free(s);
	f = fopen(T_FIO, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[j]\nrw=write:6k\nsize=64k\n[zcow]\ntarget=fs\n", f);
	fclose(f);
	ck_assert_int_eq(zcow_test_run(NULL, &err, "run", T_FIO, "--results",
				       RES, NULL), 1);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":2: option 'rw': a step of "
			 "6144 bytes must be whole blocks of 4096 bytes and "
			 "shorter than the job's 65536 bytes\n");
	free(err);
	f = fopen(T_FIO, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[j]\nrw=randwrite:4\nzonemode=zbd\nsize=1z\n", f);
	fclose(f);
	ck_assert_int_eq(zcow_test_run(NULL, &err, "run", T_FIO, "--results",
				       RES, NULL), 1);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":2: option 'rw': an offset "
			 "modifier (:N) is not modelled on the raw target "
			 "(writes go to the zones' write pointers)\n");
	free(err);
	unlink(T_FIO);
}
END_TEST


/* ---- startdelay, number_ios, timeout ---------------------------------- */

START_TEST(test_fio_gen_startdelay_number_ios_timeout_parse)
{
	struct zfio_job j = job_of("[j]\nstartdelay=2\nnumber_ios=1k\n"
				   "timeout=30\n");

	ck_assert_uint_eq(j.startdelay_ns, 2000000000ull);
	ck_assert_uint_eq(j.startdelay_hi_ns, 2000000000ull);
	ck_assert_uint_eq(j.number_ios, 1024);
	ck_assert_uint_eq(j.runtime_ns, 30000000000ull);	/* alias */
	j = job_of("[j]\nstartdelay=3s-500ms\n");
	ck_assert_uint_eq(j.startdelay_ns, 500000000ull);
	ck_assert_uint_eq(j.startdelay_hi_ns, 3000000000ull);
	parse_err("[j]\nstartdelay=later\n", "t.fio:2: option 'startdelay': "
		  "'later' is not a time or a range of times");
	parse_err("[j]\nstartdelay=1-x\n", "t.fio:2: option 'startdelay': "
		  "'1-x' is not a time or a range of times");
	parse_err("[j]\nnumber_ios=many\n", "t.fio:2: option 'number_ios': "
		  "'many' is not a size");
}
END_TEST

/* A job starts startdelay after the run (a stonewalled one at the later
 * of that and its phase's start); number_ios x loops issued I/Os end
 * it. */
START_TEST(test_fio_gen_run_startdelay_and_number_ios)
{
	char *s = run_summary("[a]\nrw=write\nsize=64k\nstartdelay=2\n"
			      "[b]\nrw=write\nsize=1m\nnumber_ios=10\n"
			      "loops=2\nstartdelay=1-3\n"
			      "[c]\nstonewall\nrw=write\nsize=64k\n"
			      "startdelay=10ms\n[zcow]\ntarget=fs\n",
			      instant, 1);
	uint64_t b_start = json_u64(s, "start_ns", 1);

	/* "ios" 0 is the run's total, then one per job */
	ck_assert_uint_eq(json_u64(s, "start_ns", 0), 2000000000ull);
	ck_assert_uint_eq(json_u64(s, "ios", 1), 16);
	/* drawn in 1..3 s in whole us from the clone's seed */
	ck_assert_uint_eq(b_start, 2519396000ull);
	ck_assert_uint_eq(json_u64(s, "ios", 2), 20);
	ck_assert_uint_eq(json_u64(s, "ios", 3), 16);
	/* c waits for a and b: b ends last, at its start (instant) */
	ck_assert_uint_eq(json_u64(s, "start_ns", 2), b_start);
	free(s);
}
END_TEST


/* ---- flow -------------------------------------------------------------- */

START_TEST(test_fio_gen_flow_parses)
{
	struct zfio_job j = job_of("[j]\nflow=3\nflow_id=2\nflow_sleep=100\n");

	ck_assert_uint_eq(j.flow, 3);
	ck_assert_uint_eq(j.flow_id, 2);
	ck_assert_uint_eq(j.flow_sleep_ns, 100000);	/* us */
	parse_err("[j]\nflow=1001\n", "t.fio:2: option 'flow': '1001' is not "
		  "an integer in 0..1000");
	parse_err("[j]\nflow_sleep=x\n", "t.fio:2: option 'flow_sleep': 'x' "
		  "is not a time");
}
END_TEST

/* Two jobs of weights 1 and 3 share the I/Os 1:3; a job of another
 * flow_id, or one whose partner has ended, runs on its own. */
START_TEST(test_fio_gen_run_flow_shares_ios_by_weight)
{
	char *s = run_summary("[global]\nrw=write\nsize=64m\nruntime=50ms\n"
			      "time_based\n[a]\nflow=1\n[b]\nflow=3\n"
			      "[c]\nflow=1\nflow_id=7\n[zcow]\ntarget=fs\n",
			      NULL, 0);
	uint64_t a = json_u64(s, "ios", 1), b = json_u64(s, "ios", 2);

	/* 1:3 within a few I/Os; c alone writes as much as a and b */
	ck_assert_uint_eq(a, 1301);
	ck_assert_uint_eq(b, 3901);
	ck_assert_uint_le(3 * a - b, 3);
	ck_assert_uint_eq(json_u64(s, "ios", 3), 3900);
	free(s);
	/* flow_sleep: the job ahead sleeps 100 us at a time */
	s = run_summary("[global]\nrw=write\nsize=64m\nruntime=50ms\n"
			"time_based\nflow_sleep=100\n[a]\nflow=1\n[b]\nflow=3\n"
			"[zcow]\ntarget=fs\n", NULL, 0);
	a = json_u64(s, "ios", 1);
	b = json_u64(s, "ios", 2);
	ck_assert_uint_eq(a, 448);
	ck_assert_uint_eq(b, 1345);
	free(s);
	/* a ends after 16 writes; b then runs alone to its 256 */
	s = run_summary("[a]\nrw=write\nsize=64k\nflow=1\n[b]\nrw=write\n"
			"size=1m\nflow=1\n[zcow]\ntarget=fs\n", NULL, 0);
	ck_assert_uint_eq(json_u64(s, "ios", 1), 16);
	ck_assert_uint_eq(json_u64(s, "ios", 2), 256);
	free(s);
}
END_TEST

/* The results' config.fio lists what these options resolved to, in a
 * form that parses back to the same job. */
START_TEST(test_fio_gen_printed_job_parses_back_the_same)
{
	struct zfio_job j = job_of("[j]\nrw=randwrite\n"
				   "bssplit=4k/10:64k/50:32k/40,8k/100\n"
				   "rate=1m,2m\nrate_iops_min=3\n"
				   "rate_process=poisson\nratecycle=500\n"
				   "thinktime=1500\nthinktime_blocks=3\n"
				   "thinktime_blocks_type=issue\n"
				   "bs_unaligned\n"), k;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(m);
	zfio_print_job(m, &j);
	fclose(m);
	ck_assert_ptr_nonnull(strstr(text, "\nbssplit=4096/10:32768/40:"
				     "65536/50,8192/100,8192/100\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nthinktime=1500us\n"));
	k = job_of(text);
	free(text);
	ck_assert_int_eq(memcmp(k.bssplit, j.bssplit, sizeof(j.bssplit)), 0);
	ck_assert_int_eq(memcmp(k.bs_min_d, j.bs_min_d, sizeof(j.bs_min_d)),
			 0);
	ck_assert_int_eq(memcmp(k.bs_max_d, j.bs_max_d, sizeof(j.bs_max_d)),
			 0);
	ck_assert_uint_eq(k.bs, 8192);
	ck_assert_uint_eq(k.bs_max, 8192);
	ck_assert(k.bs_unaligned && k.rate_poisson && k.thinktime_issue);
	ck_assert_int_eq(memcmp(k.rate, j.rate, sizeof(j.rate)), 0);
	ck_assert_uint_eq(k.rate_iops_min[1], 3);
	ck_assert_uint_eq(k.ratecycle_ms, 500);
	ck_assert_uint_eq(k.thinktime_ns, 1500000);
	ck_assert_uint_eq(k.thinktime_blocks, 3);
}
END_TEST

/* --list-options says what random_generator's values are mapped to. */
START_TEST(test_fio_gen_list_options_says_what_is_mapped)
{
	char *list = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&list, &len);

	ck_assert_ptr_nonnull(m);
	zfio_list_options(m);
	fclose(m);
	ck_assert_ptr_nonnull(strstr(list, "\nrandom_generator (tausworthe, "
				     "tausworthe64, lfsr: zcow's PRNG, "
				     "offsets with repeats)\n"));
	ck_assert_ptr_nonnull(strstr(list, "\nbsrange (alias "
				     "blocksize_range)\n"));
	ck_assert_ptr_nonnull(strstr(list, "\nbssplit\n"));
	free(list);
}
END_TEST

Suite *fio_gen_suite(void)
{
	Suite *s = suite_create("fio_gen_suite");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fio_gen_bssplit_sorted_missing_shares_rest);
	tcase_add_test(tc, test_fio_gen_bsrange_and_bs_per_direction);
	tcase_add_test(tc,
		       test_fio_gen_block_size_errors_name_file_line_option);
	tcase_add_test(tc, test_fio_gen_bssplit_draws_its_percentages);
	tcase_add_test(tc, test_fio_gen_bsrange_uniform_over_multiples_of_min);
	tcase_add_test(tc, test_fio_gen_fixed_bs_draws_nothing);
	tcase_add_test(tc, test_fio_gen_run_bssplit_writes_the_whole_file);
	tcase_add_test(tc, test_fio_gen_run_any_size_on_files_lba_sizes_on_raw);
	tcase_add_test(tc, test_fio_gen_list_options_says_what_is_mapped);
	tcase_add_test(tc, test_fio_gen_printed_job_parses_back_the_same);
	tcase_add_test(tc, test_fio_gen_rw_modifier_parses_fios_forms);
	tcase_add_test(tc, test_fio_gen_rw_modifier_offsets_are_fios);
	tcase_add_test(tc, test_fio_gen_run_rw_modifier_on_files_and_refusals);
	tcase_add_test(tc, test_fio_gen_startdelay_number_ios_timeout_parse);
	tcase_add_test(tc, test_fio_gen_run_startdelay_and_number_ios);
	tcase_add_test(tc, test_fio_gen_flow_parses);
	tcase_add_test(tc, test_fio_gen_run_flow_shares_ios_by_weight);
	tcase_add_test(tc, test_fio_gen_rate_and_thinktime_parse_fios_forms);
	tcase_add_test(tc,
		test_fio_gen_rate_and_thinktime_errors_name_file_line_option);
	tcase_add_test(tc, test_fio_gen_rate_next_issue_times_are_fios);
	tcase_add_test(tc, test_fio_gen_rate_mixed_job_switches_direction);
	tcase_add_test(tc, test_fio_gen_run_rate_spaces_issues_exactly);
	tcase_add_test(tc, test_fio_gen_run_rate_holds_on_a_timed_device);
	tcase_add_test(tc, test_fio_gen_run_thinktime_stalls_exactly);
	tcase_add_test(tc,
		       test_fio_gen_run_thinktime_counts_issued_or_completed);
	tcase_add_test(tc, test_fio_gen_run_rate_min_not_met_fails_as_fio);
	suite_add_tcase(s, tc);
	return s;
}
