// SPDX-License-Identifier: MIT
/*
 * The options that control a job's run as a whole (harness/fio_ctl.c,
 * harness/run_ctl.c): errors (continue_on_error, ignore_error,
 * error_dump), exits (exitall, exitall_on_error, exit_what, the reporting
 * groups), latency_target, steadystate, blockalign, the http engine's
 * objects and ioengine=falloc; fio's ${VAR} and filename_format
 * keywords; sub-block I/O on files.  Parsed (exact values, exact errors
 * with file, line and option) and run (exact counts, times and bytes).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fio.h"
#include "prng.h"
#include "run.h"
#include "zcow.h"
#include "zdev.h"
#include "tests.h"

#define RES	"/tmp/zcow-test-ctl"
#define T_FIO	"/tmp/zcow-test-ctl.fio"
#define T_IMG	"/tmp/zcow-test-ctl.img"

/* the shared parse helpers (tests/fio_tool.c) */
#define parse_ok	zcow_test_parse_ok
#define parse_err	zcow_test_parse_err

static const struct zfio_job *last(const struct zfio_spec *s)
{
	ck_assert_uint_ge(s->nr_jobs, 1);
	return &s->jobs[s->nr_jobs - 1];
}

/* ---- errors ------------------------------------------------------------ */

START_TEST(test_ctl_error_options_parse_as_fio)
{
	struct zfio_spec *s = parse_ok(
		"[a]\ncontinue_on_error=write\nignore_error=,ENOSPC\n"
		"error_dump=0\n"
		"[b]\nignore_error=EAGAIN,ENOSPC:122:-5\n"
		"[c]\ncontinue_on_error=io\n"
		"[d]\nignore_error=:ENOSPC,EIO:\n"
		"[e]\nignore_error=EIO\ncontinue_on_error=none\n"
		"[f]\ncontinue_on_error=1\n");
	const struct zfio_ctl *a = &s->jobs[0].ctl, *b = &s->jobs[1].ctl;
	const struct zfio_ctl *c = &s->jobs[2].ctl, *d = &s->jobs[3].ctl;

	ck_assert_uint_eq(a->continue_on, 1u << ZFIO_ERR_WRITE);
	ck_assert_uint_eq(a->nr_ignore[ZFIO_ERR_READ], 0);
	ck_assert_uint_eq(a->nr_ignore[ZFIO_ERR_WRITE], 1);
	ck_assert_int_eq(a->ignore[ZFIO_ERR_WRITE][0], ENOSPC);
	ck_assert(!a->error_dump);
	/* reads: EAGAIN; writes: ENOSPC, 122, 5 (fio drops the sign) */
	ck_assert_uint_eq(b->continue_on, 3);
	ck_assert_uint_eq(b->nr_ignore[ZFIO_ERR_READ], 1);
	ck_assert_int_eq(b->ignore[ZFIO_ERR_READ][0], EAGAIN);
	ck_assert_uint_eq(b->nr_ignore[ZFIO_ERR_WRITE], 3);
	ck_assert_int_eq(b->ignore[ZFIO_ERR_WRITE][1], 122);
	ck_assert_int_eq(b->ignore[ZFIO_ERR_WRITE][2], 5);
	ck_assert(b->error_dump);		/* fio's default */
	ck_assert_uint_eq(c->continue_on, 3);
	ck_assert_uint_eq(c->nr_ignore[ZFIO_ERR_READ], 0);
	/* a list that starts with ':' is empty (fio stops reading) */
	ck_assert_uint_eq(d->continue_on, 1u << ZFIO_ERR_WRITE);
	ck_assert_uint_eq(d->nr_ignore[ZFIO_ERR_WRITE], 1);
	ck_assert_int_eq(d->ignore[ZFIO_ERR_WRITE][0], EIO);
	/* a later continue_on_error replaces the classes, as in fio */
	ck_assert_uint_eq(s->jobs[4].ctl.continue_on, 0);
	ck_assert_uint_eq(s->jobs[5].ctl.continue_on, ZFIO_ERR_ALL);
	zfio_free(s);
}
END_TEST

START_TEST(test_ctl_error_option_errors_name_file_line_option)
{
	parse_err("[a]\nrw=write\nignore_error=,ETIMEDOUT\n",
		  "t.fio:3: option 'ignore_error': unknown error 'ETIMEDOUT' "
		  "(fio knows EPERM..ERANGE, errno 1..34 by name: give others "
		  "by number)");
	parse_err("[a]\nignore_error=0\n",
		  "t.fio:2: option 'ignore_error': '0' is not an error name "
		  "or number (1..4095)");
	parse_err("[a]\nignore_error=nospc\n",
		  "t.fio:2: option 'ignore_error': 'nospc' is not an error "
		  "name or number (1..4095)");
	parse_err("[a]\nignore_error=EIO,EIO,EIO,EIO\n",
		  "t.fio:2: option 'ignore_error': more than 3 comma-separated "
		  "lists (reads, writes, verifies)");
	parse_err("[a]\ncontinue_on_error=sometimes\n",
		  "t.fio:2: option 'continue_on_error': 'sometimes' is not "
		  "none, read, write, io, verify or all (or 0, 1)");
	parse_err("[a]\nerror_dump=maybe\n",
		  "t.fio:2: option 'error_dump': 'maybe' is not a boolean");
	parse_err("[a]\nignore_error\n",
		  "t.fio:2: option 'ignore_error': needs a value");
}
END_TEST

/* fio's td_non_fatal_error(): a class on, with its list or fio's
 * default EIO and EILSEQ; EILSEQ is a verify error. */
START_TEST(test_ctl_non_fatal_classes_as_fio)
{
	struct zfio_spec *s = parse_ok("[a]\ncontinue_on_error=write\n"
				       "[b]\nignore_error=,ENOSPC\n");
	const struct zfio_ctl *a = &s->jobs[0].ctl, *b = &s->jobs[1].ctl;

	ck_assert_int_eq(zfio_err_class_of(true, EIO), ZFIO_ERR_READ);
	ck_assert_int_eq(zfio_err_class_of(false, ENOTTY), ZFIO_ERR_WRITE);
	ck_assert_int_eq(zfio_err_class_of(true, EILSEQ), ZFIO_ERR_VERIFY);
	ck_assert(zfio_ctl_is_non_fatal(a, ZFIO_ERR_WRITE, EIO));
	ck_assert(!zfio_ctl_is_non_fatal(a, ZFIO_ERR_WRITE, ENOSPC));
	ck_assert(!zfio_ctl_is_non_fatal(a, ZFIO_ERR_READ, EIO));
	ck_assert(zfio_ctl_is_non_fatal(b, ZFIO_ERR_WRITE, ENOSPC));
	ck_assert(!zfio_ctl_is_non_fatal(b, ZFIO_ERR_WRITE, EIO));
	ck_assert(!zfio_ctl_is_non_fatal(&s->jobs[1].ctl, ZFIO_ERR_VERIFY,
					 EILSEQ));
	zfio_free(s);
}
END_TEST

/* ---- exits, groups ------------------------------------------------------ */

START_TEST(test_ctl_exit_options_parse_as_fio)
{
	struct zfio_spec *s = parse_ok(
		"[global]\ngroup_reporting\n[a]\nexitall=0\nexit_what=all\n"
		"[b]\nexitall_on_error\nexit_what=stonewall\nnew_group\n"
		"[c]\n");

	/* fio's exitall callback takes no value: exitall=0 turns it on */
	ck_assert(s->jobs[0].ctl.exitall);
	ck_assert_int_eq(s->jobs[0].ctl.exit_what, ZFIO_EXIT_ALL);
	ck_assert(!s->jobs[1].ctl.exitall);
	ck_assert(s->jobs[1].ctl.exitall_on_error);
	ck_assert_int_eq(s->jobs[1].ctl.exit_what, ZFIO_EXIT_STONEWALL);
	ck_assert(s->jobs[1].ctl.new_group && s->jobs[1].ctl.group_reporting);
	ck_assert_int_eq(s->jobs[2].ctl.exit_what, ZFIO_EXIT_GROUP);
	/* the groups' options are listed as ignored (reporting per clone) */
	ck_assert_uint_eq(s->nr_ignored, 2);
	ck_assert_str_eq(s->ignored[0], "group_reporting");
	ck_assert_str_eq(s->ignored[1], "new_group");
	zfio_free(s);
	parse_err("[a]\nexit_what=some\n", "t.fio:2: option 'exit_what': "
		  "'some' is not group, stonewall or all");
	parse_err("[a]\nexitall=perhaps\n", "t.fio:2: option 'exitall': "
		  "'perhaps' is not a boolean");
}
END_TEST

/* ---- latency target, steady state ------------------------------------- */

START_TEST(test_ctl_latency_and_steadystate_options_parse)
{
	struct zfio_spec *s = parse_ok(
		"[a]\nlatency_target=500000\nlatency_window=5000000\n"
		"latency_percentile=99.9\nlatency_run=1\n"
		"[b]\nss=iops:10%\nss_dur=30s\nss_ramp=10\n"
		"[c]\nsteadystate=bw:1m\nsteadystate_duration=1m\n"
		"[d]\nss=iops_slope:2.5\nlatency_target=2ms\n"
		"[e]\nss_dur=3\n");
	const struct zfio_ctl *a = &s->jobs[0].ctl, *b = &s->jobs[1].ctl;
	const struct zfio_ctl *c = &s->jobs[2].ctl, *d = &s->jobs[3].ctl;
	const struct zfio_ctl *e = &s->jobs[4].ctl;

	/* microseconds without a unit */
	ck_assert_uint_eq(a->lat_target_ns, 500000000ull);
	ck_assert_uint_eq(a->lat_window_ns, 5000000000ull);
	ck_assert(a->lat_pct == 99.9 && a->lat_run);
	ck_assert_int_eq(b->ss, ZFIO_SS_IOPS);
	ck_assert(b->ss_is_pct && b->ss_limit == 10.0);
	/* seconds without a unit */
	ck_assert_uint_eq(b->ss_dur_ns, 30000000000ull);
	ck_assert_uint_eq(b->ss_ramp_ns, 10000000000ull);
	ck_assert_int_eq(c->ss, ZFIO_SS_BW);
	ck_assert(!c->ss_is_pct && c->ss_limit == 1048576.0);
	ck_assert_uint_eq(c->ss_dur_ns, 60000000000ull);
	ck_assert_int_eq(d->ss, ZFIO_SS_IOPS_SLOPE);
	ck_assert(!d->ss_is_pct && d->ss_limit == 2.5);
	ck_assert_uint_eq(d->lat_target_ns, 2000000ull);
	ck_assert(d->lat_pct == 100.0 && !d->lat_run);
	/* ss_dur alone: fio's default criterion iops_slope:0.01% */
	ck_assert_int_eq(e->ss, ZFIO_SS_IOPS_SLOPE);
	ck_assert(e->ss_is_pct && e->ss_limit == 0.01);
	zfio_free(s);
}
END_TEST

START_TEST(test_ctl_latency_and_steadystate_errors)
{
	parse_err("[a]\nlatency_percentile=101\n",
		  "t.fio:2: option 'latency_percentile': '101' is not a "
		  "percentile in 0..100");
	parse_err("[a]\nlatency_target=soon\n",
		  "t.fio:2: option 'latency_target': 'soon' is not a time");
	parse_err("[a]\nss=latency:1%\n",
		  "t.fio:2: option 'ss': 'latency' is not iops, iops_slope, bw "
		  "or bw_slope");
	parse_err("[a]\nss=iops\n",
		  "t.fio:2: option 'ss': 'iops' needs its limit (iops:LIMIT, "
		  "LIMIT a number or a percentage)");
	parse_err("[a]\nsteadystate=iops:x%\n",
		  "t.fio:2: option 'steadystate': limit 'x%' is not a "
		  "percentage");
	parse_err("[a]\nss=bw_slope:fast\n",
		  "t.fio:2: option 'ss': limit 'fast' is not a bandwidth "
		  "(bytes per second)");
	parse_err("[a]\nss_dur=long\n",
		  "t.fio:2: option 'ss_dur': 'long' is not a time");
}
END_TEST

/* ---- blockalign, engines ------------------------------------------------ */

START_TEST(test_ctl_blockalign_sets_the_random_unit)
{
	struct zfio_spec *s = parse_ok(
		"[a]\nrw=randrw\nbssplit=512/50:8k/50\nba=4k\n"
		"[b]\nrw=write\nbs=512\nblockalign=4k\n"
		"[c]\nrw=randread\nbs=8k\nblockalign=2k,4k\n"
		"[d]\nrw=randwrite\nbs=4k\n");
	struct zfio_dist_state st;
	struct zfio_offsets offs = { .nr_left = 1 };
	char err[ZFIO_ERR_LEN];
	uint64_t rng = 7;
	unsigned int i, seen4k = 0;

	ck_assert_uint_eq(s->jobs[0].bs, 512);
	ck_assert_uint_eq(zfio_rand_unit(&s->jobs[0]), 4096);
	/* a sequential pattern ignores it (fio sets ba = bs) */
	ck_assert_uint_eq(zfio_rand_unit(&s->jobs[1]), 512);
	/* only the reads' alignment counts for a reader */
	ck_assert_uint_eq(zfio_rand_unit(&s->jobs[2]), 2048);
	ck_assert_uint_eq(zfio_rand_unit(&s->jobs[3]), 4096);
	/* fio's last_block(): a unit below the block leaves room for it */
	ck_assert_uint_eq(zfio_rand_blocks(&s->jobs[2], 65536), 29);
	ck_assert_uint_eq(zfio_rand_blocks(&s->jobs[0], 65536), 16);
	ck_assert_uint_eq(zfio_rand_blocks(&s->jobs[3], 65536), 16);
	/* jesd219's form: 512-byte I/Os at 4 KiB offsets */
	ck_assert_int_eq(zfio_dist_init(&st, &s->jobs[0], 16, 1, 2, err,
					sizeof(err)), 0);
	for (i = 0; i < 1000; i++) {
		bool is_rand;
		uint64_t off = zfio_next_offset(&s->jobs[0], &st, &offs,
						ZFIO_DDIR_WRITE, 0, 65536,
						&rng, &is_rand);

		ck_assert(is_rand);
		ck_assert_uint_eq(off % 4096, 0);
		ck_assert_uint_lt(off, 65536);
		seen4k |= 1u << (off / 4096);
	}
	ck_assert_uint_eq(seen4k, 0xffff);	/* every unit drawn */
	zfio_free(s);
}
END_TEST

START_TEST(test_ctl_blockalign_directions_must_agree)
{
	parse_err("[a]\nrw=randrw\nba=4k,8k\n",
		  "t.fio:3: option 'blockalign': reads align to 4096 bytes, "
		  "writes to 8192: a job's directions must share it (its "
		  "offset unit)");
	parse_err("[a]\nrw=randrw\nba=big\n",
		  "t.fio:3: option 'ba': 'big' is not a size of at most "
		  "268435456 (256 MiB)");
}
END_TEST

/* ioengine=falloc is modelled (run_fs.c: every I/O an fallocate()), not
 * ignored; a job that sets another engine over it is a plain job. */
START_TEST(test_ctl_falloc_engine_is_modelled)
{
	struct zfio_spec *s;

	s = parse_ok("[global]\nioengine=falloc\n[a]\nrw=randtrim\n");
	ck_assert_int_eq(last(s)->ctl.engine, ZFIO_ENGINE_FALLOC);
	ck_assert_uint_eq(s->nr_ignored, 0);
	zfio_free(s);
	s = parse_ok("[global]\nioengine=falloc\n[a]\nioengine=libaio\n"
		     "rw=write\n");
	ck_assert_int_eq(last(s)->ctl.engine, ZFIO_ENGINE_PLAIN);
	zfio_free(s);
	s = parse_ok("[a]\nioengine=http\nrw=trim\n");
	ck_assert_int_eq(last(s)->ctl.engine, ZFIO_ENGINE_HTTP);
	ck_assert_uint_eq(s->nr_ignored, 0);	/* modelled */
	zfio_free(s);
}
END_TEST

/* ---- ${VAR}, filename_format, zoned ------------------------------------ */

START_TEST(test_ctl_env_vars_substituted_as_fio)
{
	struct zfio_spec *s;

	ck_assert_int_eq(setenv("ZT_RW", "randwrite", 1), 0);
	ck_assert_int_eq(setenv("ZT_BS", "8", 1), 0);
	ck_assert_int_eq(setenv("ZT_KEY", "iodepth", 1), 0);
	unsetenv("ZT_UNSET");
	s = parse_ok("[a]\nrw=${ZT_RW}\nbs=${ZT_BS}k\n${ZT_KEY}=4\n"
		     "name=x${ZT_UNSET}y\ndirectory=/d${\n");
	ck_assert_int_eq(last(s)->rw, ZFIO_RANDWRITE);
	ck_assert_uint_eq(last(s)->bs, 8192);
	ck_assert_uint_eq(last(s)->iodepth, 4);
	/* an unset variable is nothing; "${" without "}" stays */
	ck_assert_str_eq(last(s)->name, "xy");
	ck_assert_str_eq(last(s)->directory, "/d${");
	zfio_free(s);
}
END_TEST

START_TEST(test_ctl_unset_env_var_refused_naming_file_line)
{
	unsetenv("ZT_UNSET");
	parse_err("[a]\n\nrw=${ZT_UNSET}\n",
		  "t.fio:3: option 'rw': needs a value (ZT_UNSET is not set: "
		  "fio puts nothing for ${ZT_UNSET})");
	/* an ignored option is refused too, as fio refuses it */
	parse_err("[a]\nhttp_s3_key=${ZT_UNSET}\n",
		  "t.fio:2: option 'http_s3_key': needs a value (ZT_UNSET is "
		  "not set: fio puts nothing for ${ZT_UNSET})");
	parse_err("[a]\nbs=${ZT_UNSET}x\n",
		  "t.fio:2: option 'bs': 'x' is not a size (ZT_UNSET is not "
		  "set: fio puts nothing for ${ZT_UNSET})");
}
END_TEST

START_TEST(test_ctl_filename_format_clientuid_and_absolute)
{
	struct zfio_spec *s = parse_ok(
		"[a]\nfilename_format=myfiles.$clientuid.$JOBNUM.$filenum\n"
		"[b]\nfilename_format=/swift/v1/fio-test/bucket.$jobnum\n");

	ck_assert_str_eq(s->jobs[0].filename_format,
			 "myfiles.$clientuid.$JOBNUM.$filenum");
	ck_assert_str_eq(s->jobs[1].filename_format,
			 "/swift/v1/fio-test/bucket.$jobnum");
	zfio_free(s);
}
END_TEST

/* rand-zones.fio: "20/" is a zone without a range (fio's atoi("") = 0),
 * sharing what the others leave. */
START_TEST(test_ctl_zoned_empty_range_shares_the_rest)
{
	struct zfio_spec *s = parse_ok(
		"[a]\nrw=randread\n"
		"random_distribution=zoned:50/5:30/15:20/\n");
	const struct zfio_job *j = last(s);

	ck_assert_uint_eq(j->nr_dist_zones[ZFIO_DDIR_READ], 3);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][2].access_pct, 20);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][2].size, 80);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][1].size, 15);
	zfio_free(s);
}
END_TEST

/* config.fio lists the options so that they parse back the same. */
START_TEST(test_ctl_printed_options_parse_back)
{
	struct zfio_spec *s = parse_ok(
		"[a]\nrw=randrw\nbs=512\nba=4k\nignore_error=EAGAIN,ENOSPC:84\n"
		"continue_on_error=verify\nerror_dump=0\nexitall\n"
		"exit_what=stonewall\nnew_group\ngroup_reporting\n"
		"latency_target=2ms\nlatency_window=1s\n"
		"latency_percentile=99\nss=bw_slope:1%\nss_dur=5\n"
		"ss_ramp=2\nioengine=http\n");
	const struct zfio_ctl *a, *b;
	struct zfio_spec *t;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(m);
	zfio_print_job(m, last(s));
	fclose(m);
	t = parse_ok(text);
	a = &last(s)->ctl;
	b = &last(t)->ctl;
	/* continue_on_error=verify came last: the classes are verify's,
	 * with fio's default EIO:EILSEQ */
	ck_assert_uint_eq(b->continue_on, 1u << ZFIO_ERR_VERIFY);
	ck_assert_uint_eq(b->nr_ignore[ZFIO_ERR_VERIFY], 2);
	ck_assert(zfio_ctl_is_non_fatal(b, ZFIO_ERR_VERIFY, EILSEQ));
	ck_assert(!zfio_ctl_is_non_fatal(b, ZFIO_ERR_WRITE, ENOSPC));
	ck_assert(a->error_dump == b->error_dump && b->exitall &&
		  a->exit_what == b->exit_what && b->new_group &&
		  b->group_reporting && a->rand_unit == b->rand_unit &&
		  a->lat_target_ns == b->lat_target_ns &&
		  a->lat_window_ns == b->lat_window_ns &&
		  a->lat_pct == b->lat_pct && a->ss == b->ss &&
		  a->ss_is_pct == b->ss_is_pct &&
		  a->ss_limit == b->ss_limit &&
		  a->ss_dur_ns == b->ss_dur_ns &&
		  a->ss_ramp_ns == b->ss_ramp_ns &&
		  b->engine == ZFIO_ENGINE_HTTP);
	ck_assert_uint_eq(b->rand_unit, 4096);
	zfio_free(s);
	zfio_free(t);
	free(text);
}
END_TEST

/* ---- runs -------------------------------------------------------------- */

/* Run @text with @sets: zrun_scenario()'s return, the folder (or NULL)
 * in *dir_ret, what it printed on stderr in *err_ret (malloc'd). */
static int run_text(const char *text, const char *const *sets,
		    unsigned int nr, char **dir_ret, char **err_ret)
{
	return zcow_test_scenario(T_FIO, text, sets, nr, RES, dir_ret,
				  err_ret);
}

/* Job @n's value of "@key" (its text up to the end of the line). */
static void job_val(const char *json, unsigned int n, const char *key,
		    char *buf, size_t len)
{
	const char *p = strstr(json, "\"jobs\": [");
	char k[64];
	size_t l;

	ck_assert_ptr_nonnull(p);
	snprintf(k, sizeof(k), "\"%s\": ", key);
	for (; n + 1; n--) {
		p = strstr(p + 1, k);
		ck_assert_ptr_nonnull(p);
	}
	p += strlen(k);
	l = strcspn(p, "\n");
	snprintf(buf, len, "%.*s", (int)l, p);
}

static uint64_t job_u64(const char *json, unsigned int n, const char *key)
{
	char v[64];

	job_val(json, n, key, v, sizeof(v));
	return strtoull(v, NULL, 10);
}

static void assert_job(const char *json, unsigned int n, const char *key,
		       const char *want)
{
	char v[4096];

	job_val(json, n, key, v, sizeof(v));
	ck_assert_str_eq(v, want);
}

#define SMALL_DEV	"[zcow]\ndevice=sim:zones=32,zone_size=4M\n"

/* A writer past the end of the file system: ignore_error=,ENOSPC counts
 * the ENOSPC writes and the job goes on to its size; the other writes
 * land (88 MiB fit), the run succeeds. */
START_TEST(test_ctl_enospc_ignored_counted_and_the_job_goes_on)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[fill]\nrw=write\nbs=1m\nfilesize=256m\n"
				  "continue_on_error=write\n"
				  "ignore_error=,ENOSPC\nerror_dump=0\n"
				  SMALL_DEV, NULL, 0, &dir, &err), 0);
	ck_assert_str_eq(err, "");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 0, "write_ios"), 88);
	ck_assert_uint_eq(job_u64(s, 0, "write_bytes"), 88ull << 20);
	assert_job(s, 0, "errors", "{\"total\": 168, \"first_error\": 28, "
		   "\"first_error_name\": \"ENOSPC\"},");
	assert_job(s, 0, "error", "null,");
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* Without ENOSPC listed (continue_on_error=write goes on after EIO only)
 * the job ends at its first ENOSPC without end_fsync, the other job
 * finishes, the results are written and the run fails with the error. */
START_TEST(test_ctl_enospc_not_listed_ends_the_job_others_finish)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[fill]\nrw=write\nbs=1m\nfilesize=256m\n"
				  "continue_on_error=write\nend_fsync=1\n"
				  "[other]\nrw=write\nbs=64k\nsize=1m\n"
				  SMALL_DEV, NULL, 0, &dir, &err), -ENOSPC);
	ck_assert_str_eq(err, "zcow run: job 'fill': write of 1048576 at "
			 "91226112 in '/fill.0.0': No space left on device\n");
	ck_assert_ptr_nonnull(dir);
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 0, "write_ios"), 87);
	ck_assert_uint_eq(job_u64(s, 0, "syncs"), 0);	/* no end_fsync */
	assert_job(s, 0, "error", "{\"errno\": 28, \"name\": \"ENOSPC\", "
		   "\"message\": \"job 'fill': write of 1048576 at 91226112 "
		   "in '/fill.0.0': No space left on device\"},");
	assert_job(s, 0, "ended_by", "\"its error\",");
	assert_job(s, 1, "error", "null,");
	ck_assert_uint_eq(job_u64(s, 1, "write_ios"), 16);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* A trim of a file is fio's BLKDISCARD ioctl: ENOTTY, the job's error,
 * named by the rw= that asks for it; ignore_error=,ENOTTY counts every
 * one (error_dump prints each). */
START_TEST(test_ctl_trim_of_a_file_is_enotty_unless_ignored)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[t]\nrw=trim\nsize=64k\n", NULL, 0, &dir,
				  &err), -ENOTTY);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":2: job 't': trim of 4096 "
			 "at 0 in "
			 "'/t.0.0': Inappropriate ioctl for device (fio trims "
			 "a file with the BLKDISCARD ioctl, which only a block "
			 "device takes)\n");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 0, "trim_ios"), 0);
	free(s);
	free(dir);
	free(err);
	ck_assert_int_eq(run_text("[t]\nrw=trim\nsize=16k\n"
				  "ignore_error=,ENOTTY\n", NULL, 0, &dir,
				  &err), 0);
	ck_assert_ptr_nonnull(strstr(err, "zcow run: " T_FIO ":2: job 't': "
				     "trim of 4096 at 12288 in '/t.0.0': Inappropriate ioctl "
				     "for device (fio trims a file with the "
				     "BLKDISCARD ioctl, which only a block "
				     "device takes) (counted: the job goes "
				     "on)\n"));
	s = zcow_test_summary(dir);
	assert_job(s, 0, "errors", "{\"total\": 4, \"first_error\": 25, "
		   "\"first_error_name\": \"ENOTTY\"},");
	ck_assert_uint_eq(job_u64(s, 0, "ios"), 0);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/*
 * exitall with exit_what: slow (100 reads of 68 us, 6.8 ms) ends at
 * 6.8 ms; group: its group (fast0, not fast1 of a new group) ends then;
 * stonewall: every running job (both); all: the later phase never runs.
 */
START_TEST(test_ctl_exitall_ends_what_exit_what_names)
{
	static const char *const whats[] = { "group", "stonewall", "all" };
	unsigned int w;

	for (w = 0; w < 3; w++) {
		char text[1024], *dir, *err, *s, v[256];
		uint64_t end;

		snprintf(text, sizeof(text),
			 "[global]\nexitall\nsize=1m\n"
			 "[slow]\nrw=read\nnumber_ios=100\nexit_what=%s\n"
			 "[fast0]\nrw=randread\ntime_based\nruntime=1s\n"
			 "[fast1]\nnew_group\nrw=randread\ntime_based\n"
			 "runtime=1s\n"
			 "[later]\nstonewall\nrw=read\n", whats[w]);
		ck_assert_int_eq(run_text(text, NULL, 0, &dir, &err), 0);
		s = zcow_test_summary(dir);
		end = job_u64(s, 0, "end_ns");
		ck_assert_uint_eq(end, 6800000);
		ck_assert_uint_eq(job_u64(s, 1, "end_ns"), end);
		snprintf(v, sizeof(v), "\"exitall: job 'slow' ended "
			 "(exit_what=%s)\",", whats[w]);
		assert_job(s, 1, "ended_by", v);
		if (w == 0) {	/* its runtime, the last read done */
			assert_job(s, 2, "ended_by", "null,");
			ck_assert_uint_eq(job_u64(s, 2, "end_ns"), 1000008000);
		} else {
			assert_job(s, 2, "ended_by", v);
			ck_assert_uint_eq(job_u64(s, 2, "end_ns"), end);
		}
		if (w == 2) {	/* never started: no I/O at the end */
			assert_job(s, 3, "ended_by", v);
			ck_assert_uint_eq(job_u64(s, 3, "ios"), 0);
			ck_assert_uint_eq(job_u64(s, 3, "start_ns"), end);
		} else {
			ck_assert_uint_eq(job_u64(s, 3, "ios"), 256);
		}
		free(s);
		free(dir);
		free(err);
	}
}
END_TEST

/* exitall_on_error: the failing job ends the others at its error; a job
 * that ends well ends nobody. */
START_TEST(test_ctl_exitall_on_error_ends_others_at_the_error)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[global]\nexitall_on_error\n"
				  "[ok]\nrw=write\nsize=64k\n"
				  "[bad]\nrw=trim\nsize=64k\nstartdelay=5ms\n"
				  "[other]\nrw=randread\nsize=1m\n"
				  "time_based\nruntime=1s\n", NULL, 0, &dir,
				  &err), -ENOTTY);
	s = zcow_test_summary(dir);
	assert_job(s, 0, "ended_by", "null,");
	ck_assert_uint_eq(job_u64(s, 1, "end_ns"), 5000000);
	assert_job(s, 2, "ended_by", "\"exitall_on_error: job 'bad' ended "
		   "(exit_what=group)\",");
	ck_assert_uint_eq(job_u64(s, 2, "end_ns"), 5032000);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/*
 * latency_target on zn540's reads (68 us alone; the device serves 500k
 * 4 KiB reads a second, so N in flight wait N / 500k s): with 300 us the
 * deepest depth within it is 150 (151 would take 302 us); the last
 * window measured alone keeps 99% within the target.  A target never
 * missed doubles to the full iodepth: 1, 2, 4, 8, then one more window.
 */
START_TEST(test_ctl_latency_target_finds_the_deepest_depth)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[l]\nrw=randread\nsize=16m\niodepth=256\n"
				  "latency_target=300\nlatency_window=10ms\n"
				  "latency_percentile=99\ntime_based\n"
				  "runtime=2s\n", NULL, 0, &dir, &err), 0);
	s = zcow_test_summary(dir);
	assert_job(s, 0, "latency_target", "{\"target_ns\": 300000, "
		   "\"window_ns\": 10000000, \"percentile\": 99, \"depth\": "
		   "150, \"depth_low\": 150, \"depth_high\": 151, \"steps\": "
		   "16, \"found\": true, \"final_window\": true},");
	assert_job(s, 0, "ended_by", "\"latency_target: the depth is "
		   "found\",");
	ck_assert_uint_le(job_u64(s, 0, "p99"), 300000);
	ck_assert_ptr_nonnull(strstr(s, "\"iops\": 500000.000,"));
	free(s);
	free(dir);
	free(err);
	ck_assert_int_eq(run_text("[l]\nrw=randread\nsize=16m\niodepth=8\n"
				  "latency_target=1s\nlatency_window=10ms\n"
				  "time_based\nruntime=1s\n", NULL, 0, &dir,
				  &err), 0);
	s = zcow_test_summary(dir);
	assert_job(s, 0, "latency_target", "{\"target_ns\": 1000000000, "
		   "\"window_ns\": 10000000, \"percentile\": 100, \"depth\": "
		   "8, \"depth_low\": 8, \"depth_high\": 8, \"steps\": 3, "
		   "\"found\": true, \"final_window\": true},");
	/* five windows of 10 ms, each after the I/Os of the last */
	ck_assert_uint_eq(job_u64(s, 0, "end_ns"), 50456000);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* With percentile 100 an I/O above the target at depth 1 is fio's
 * ETIMEDOUT error of the job. */
START_TEST(test_ctl_latency_target_missed_at_depth_1_is_etimedout)
{
	char *dir, *err;

	ck_assert_int_eq(run_text("[l]\nrw=randread\nsize=1m\n"
				  "latency_target=10us\n", NULL, 0, &dir,
				  &err), -ETIMEDOUT);
	ck_assert_str_eq(err, "zcow run: job 'l': latency of 68000 nsec "
			 "exceeds specified max (10000 nsec)\n");
	free(dir);
	free(err);
}
END_TEST

/*
 * steadystate on a steady reader (14705 or 14706 reads a second): iops
 * within 5% over 2 s is met at the check of 2 s, which ends the job
 * there; 0% is never met (a deviation is never below 0) and the job
 * runs to its runtime, judged at every second from 2 s.
 */
START_TEST(test_ctl_steadystate_ends_the_job_at_the_check)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[s]\nrw=randread\nsize=16m\ntime_based\n"
				  "runtime=20s\nss=iops:5%\nss_dur=2s\n", NULL,
				  0, &dir, &err), 0);
	s = zcow_test_summary(dir);
	assert_job(s, 0, "steadystate", "{\"criterion\": \"iops\", "
		   "\"limit\": 5, \"percent\": true, \"duration_s\": 2, "
		   "\"ramp_ns\": 0, \"judged_by\": \"s\", "
		   "\"judged_by_clone\": 0, \"attained\": true, "
		   "\"attained_at_ns\": 2000000000, \"checks\": 1, "
		   "\"value\": 0.003400, \"iops\": [14705, 14706], "
		   "\"bw_bytes_per_s\": [60231680, 60235776]},");
	assert_job(s, 0, "ended_by", "\"steadystate: attained\",");
	ck_assert_uint_eq(job_u64(s, 0, "end_ns"), 2000016000);
	free(s);
	free(dir);
	free(err);
	ck_assert_int_eq(run_text("[s]\nrw=randread\nsize=16m\ntime_based\n"
				  "runtime=5s\nss=iops:0%\nss_dur=2s\n",
				  NULL, 0, &dir, &err), 0);
	s = zcow_test_summary(dir);
	assert_job(s, 0, "ended_by", "null,");
	ck_assert_uint_eq(job_u64(s, 0, "checks"), 4);
	/* its runtime, the last read done */
	ck_assert_uint_eq(job_u64(s, 0, "end_ns"), 5000040000ull);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* With group_reporting the group's clones are summed and judged at its
 * last clone; ss_ramp=1s starts the samples at 2 s, so 3 of them are
 * there at 4 s, when both clones end. */
START_TEST(test_ctl_steadystate_group_reporting_ends_the_group)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[global]\ngroup_reporting\n"
				  "[s]\nrw=randread\nsize=16m\nnumjobs=2\n"
				  "time_based\nruntime=20s\nss=bw_slope:1%\n"
				  "ss_dur=3s\nss_ramp=1s\n", NULL, 0, &dir,
				  &err), 0);
	s = zcow_test_summary(dir);
	assert_job(s, 0, "steadystate", "{\"criterion\": \"bw_slope\", "
		   "\"limit\": 1, \"percent\": true, \"duration_s\": 3, "
		   "\"ramp_ns\": 1000000000, \"judged_by\": \"s\", "
		   "\"judged_by_clone\": 1, \"attained\": true, "
		   "\"attained_at_ns\": 4000000000, \"checks\": 1, "
		   "\"value\": 0.000000, \"iops\": [29412, 29412, 29412], "
		   "\"bw_bytes_per_s\": [120471552, 120471552, 120471552]},");
	ck_assert_uint_eq(job_u64(s, 0, "end_ns"), 4000032000ull);
	ck_assert_uint_eq(job_u64(s, 1, "end_ns"), 4000032000ull);
	free(s);
	free(dir);
	free(err);
	/* fio rejects a group whose steadystate options differ */
	ck_assert_int_eq(run_text("[a]\nrw=read\nsize=1m\nss=iops:1%\n"
				  "ss_dur=2\n[b]\nrw=read\nsize=1m\n"
				  "ss=iops:2%\nss_dur=2\n", NULL, 0, &dir,
				  &err), -EINVAL);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":9: option 'steadystate': "
			 "job 'a' and job 'b' are in one reporting group: "
			 "their steadystate options must agree (as fio)\n");
	free(err);
}
END_TEST

/* The files of a run, read back from its image. */
static struct zcow_fs *open_image(struct zdev **dev)
{
	struct zcow_mount_opts mo = { .read_only = true };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zdev_open("sim:image=" T_IMG, dev), 0);
	ck_assert_int_eq(zcow_mount(*dev, &mo, &fs), 0);
	return fs;
}

static void close_image(struct zcow_fs *fs, struct zdev *dev)
{
	zcow_unmount(fs);
	zdev_close(dev);
	unlink(T_IMG);
}

/*
 * A failed verify is the job's EILSEQ (fio's VERIFY class): it ends the
 * job, fails the run and, with exitall_on_error, ends the job's group;
 * continue_on_error=verify counts each one and the job reads on.
 */
#define VERIFY_JOBS "[w]\nrw=write\nbs=4k\nsize=16k\nfilename=f\n" \
		    "buffer_pattern=0\n" \
		    "[r]\nstonewall\nrw=read\nbs=4k\nsize=16k\n" \
		    "filename=f\nverify=crc32c\n"
#define BAD_MAGIC(off) "job 'r': verify: bad magic header 0, wanted acca " \
		       "at file /f offset " off ", length 4096 (requested " \
		       "block: offset=" off ", length=4096)"

START_TEST(test_ctl_verify_failure_ends_the_job_unless_counted)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text(VERIFY_JOBS "exitall_on_error\n"
				  "[other]\nrw=write\nbs=4k\nsize=64m\n"
				  "filename=o\n", NULL, 0, &dir, &err),
			 -EILSEQ);
	ck_assert_str_eq(err, "zcow run: " BAD_MAGIC("0") "\n");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 1, "read_ios"), 1);
	assert_job(s, 1, "ended_by", "\"its error\",");
	assert_job(s, 2, "ended_by", "\"exitall_on_error: job 'r' ended "
		   "(exit_what=group)\",");
	ck_assert_uint_lt(job_u64(s, 2, "write_ios"), 16384);
	free(s);
	free(dir);
	free(err);
	ck_assert_int_eq(run_text(VERIFY_JOBS "continue_on_error=verify\n",
				  NULL, 0, &dir, &err), 0);
	ck_assert_str_eq(err, "zcow run: " BAD_MAGIC("0") " (counted: the job "
			 "goes on)\nzcow run: " BAD_MAGIC("4096") " (counted: "
			 "the job goes on)\nzcow run: " BAD_MAGIC("8192")
			 " (counted: the job goes on)\nzcow run: "
			 BAD_MAGIC("12288") " (counted: the job goes on)\n");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 1, "read_ios"), 4);
	assert_job(s, 1, "errors", "{\"total\": 4, \"first_error\": 84, "
		   "\"first_error_name\": \"EILSEQ\"},");
	assert_job(s, 1, "error", "null,");
	ck_assert_ptr_nonnull(strstr(s, "\"failures\": 4,"));
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* $clientuid is fio's client address, empty outside client/server mode
 * (zcow's case), and the $ words match in any case, as fio's. */
START_TEST(test_ctl_clientuid_names_files_as_fio_alone)
{
	const char *sets[] = { "device=sim:image=" T_IMG ",zones=32,"
			       "zone_size=4M" };
	struct zcow_dirent *ents;
	struct zcow_fs *fs;
	struct zdev *dev;
	char *dir, *err;
	uint64_t nr;

	unlink(T_IMG);
	ck_assert_int_eq(run_text("[a]\nrw=write\nbs=4k\nsize=16k\n"
				  "nrfiles=2\ndirectory=/d\nfilename_format="
				  "myfiles.$clientuid.$JOBNUM.$filenum\n",
				  sets, 1, &dir, &err), 0);
	ck_assert_str_eq(err, "");
	free(dir);
	free(err);
	fs = open_image(&dev);
	ck_assert_int_eq(zcow_readdir(fs, "/d", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(ents[0].name, "myfiles..0.0");
	ck_assert_str_eq(ents[1].name, "myfiles..0.1");
	free(ents);
	close_image(fs, dev);
}
END_TEST

/*
 * ioengine=falloc: every I/O is an fallocate() (a write allocates, a read
 * keeps the size, a trim punches a hole), which a zoned file system
 * refuses in every mode, as btrfs does: EOPNOTSUPP, the job's error
 * named by its ioengine=, or counted with ignore_error.
 */
START_TEST(test_ctl_falloc_fails_as_on_zoned_btrfs)
{
	char *dir, *err, *s;

	ck_assert_int_eq(run_text("[w]\nrw=write\nbs=4k\nsize=16k\n"
				  "ioengine=falloc\n", NULL, 0, &dir, &err),
			 -EOPNOTSUPP);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":5: job 'w': fallocate "
			 "(allocate) of 4096 at 0 in '/w.0.0': Operation not "
			 "supported (a zoned file system refuses fallocate in "
			 "every mode, as btrfs does)\n");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 0, "write_ios"), 0);
	assert_job(s, 0, "ended_by", "\"its error\",");
	free(s);
	free(dir);
	free(err);
	ck_assert_int_eq(run_text("[global]\nioengine=falloc\n"
				  "[t]\nrw=trim\nbs=4k\nsize=16k\n"
				  "ignore_error=,95\n", NULL, 0, &dir, &err),
			 0);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":2: job 't': fallocate "
			 "(punch hole) of 4096 at 0 in '/t.0.0': Operation not "
			 "supported (a zoned file system refuses fallocate in "
			 "every mode, as btrfs does) (counted: the job goes "
			 "on)\n" "zcow run: " T_FIO ":2: job 't': fallocate "
			 "(punch hole) of 4096 at 4096 in '/t.0.0': Operation "
			 "not supported (a zoned file system refuses fallocate "
			 "in every mode, as btrfs does) (counted: the job goes "
			 "on)\n" "zcow run: " T_FIO ":2: job 't': fallocate "
			 "(punch hole) of 4096 at 8192 in '/t.0.0': Operation "
			 "not supported (a zoned file system refuses fallocate "
			 "in every mode, as btrfs does) (counted: the job goes "
			 "on)\n" "zcow run: " T_FIO ":2: job 't': fallocate "
			 "(punch hole) of 4096 at 12288 in '/t.0.0': Operation "
			 "not supported (a zoned file system refuses fallocate "
			 "in every mode, as btrfs does) (counted: the job goes "
			 "on)\n");
	s = zcow_test_summary(dir);
	assert_job(s, 0, "errors", "{\"total\": 4, \"first_error\": 95, "
		   "\"first_error_name\": \"EOPNOTSUPP\"},");
	ck_assert_uint_eq(job_u64(s, 0, "trim_ios"), 0);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* falloc and http need files: the raw target refuses them by name. */
START_TEST(test_ctl_file_engines_refused_on_the_raw_target)
{
	char *dir, *err;

	ck_assert_int_eq(run_text("[a]\nrw=write\nbs=64k\nsize=1m\n"
				  "zonemode=zbd\nioengine=falloc\n", NULL, 0,
				  &dir, &err), -EINVAL);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":6: option 'ioengine': "
			 "ioengine=falloc works on files: it needs the fs "
			 "target, not zonemode=zbd\n");
	ck_assert_ptr_null(dir);
	free(err);
	ck_assert_int_eq(run_text("[a]\nrw=write\nbs=64k\nsize=1m\n"
				  "zonemode=zbd\nioengine=http\n", NULL, 0,
				  &dir, &err), -EINVAL);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":6: option 'ioengine': "
			 "ioengine=http works on files: it needs the fs "
			 "target, not zonemode=zbd\n");
	free(err);
}
END_TEST

/*
 * Sub-block I/O on files: 512-byte writes with a 512-byte hole after
 * each (rw=write:512) read, modify and write their 4 KiB block, so every
 * hole stays zero and every write stays; bs=4000 (librpma's 4KiB) makes
 * a file of exactly 3 x 4000 bytes, read back by 500-byte reads.
 */
START_TEST(test_ctl_sub_block_io_keeps_exact_bytes)
{
	const char *sets[] = { "device=sim:image=" T_IMG ",zones=32,"
			       "zone_size=4M" };
	uint8_t want[12000];
	struct zcow_fs *fs;
	struct zdev *dev;
	char *dir, *err, *s;
	unsigned int i;

	unlink(T_IMG);
	ck_assert_int_eq(run_text("[global]\nbuffer_pattern=0xa5\n"
				  "[holes]\nrw=write:512\nbs=512\n"
				  "filesize=8k\nio_size=4k\nfilename=h\n"
				  "[w]\nrw=write\nbs=4KiB\nfilesize=12000\n"
				  "filename=f\n"
				  "[r]\nstonewall\nrw=read\nbs=500\n"
				  "filesize=12000\nfilename=f\n", sets, 1,
				  &dir, &err), 0);
	ck_assert_str_eq(err, "");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 0, "write_ios"), 8);
	ck_assert_uint_eq(job_u64(s, 1, "bs"), 4000);
	ck_assert_uint_eq(job_u64(s, 1, "write_bytes"), 12000);
	ck_assert_uint_eq(job_u64(s, 2, "read_ios"), 24);
	ck_assert_uint_eq(job_u64(s, 2, "bytes"), 12000);
	free(s);
	free(dir);
	free(err);
	fs = open_image(&dev);
	for (i = 0; i < 7680; i++)
		want[i] = (i / 512) % 2 ? 0 : 0xa5;
	zcow_test_expect(fs, "/h", want, 7680);
	memset(want, 0xa5, sizeof(want));
	zcow_test_expect(fs, "/f", want, 12000);
	close_image(fs, dev);
}
END_TEST

/*
 * ioengine=http: objects FILE_OFFSET_LENGTH, made whole by writes (the
 * S3 example's one 4 KiB object), read back, deleted by trims; Swift's
 * absolute names are paths from the root.
 */
START_TEST(test_ctl_http_objects_written_read_and_deleted)
{
	const char *sets[] = { "device=sim:image=" T_IMG ",zones=32,"
			       "zone_size=4M" };
	uint8_t want[8192];
	struct zcow_dirent *ents;
	struct zcow_stat st;
	struct zcow_fs *fs;
	struct zdev *dev;
	char *dir, *err, *s;
	uint64_t nr;

	unlink(T_IMG);
	ck_assert_int_eq(run_text(
		"[global]\nioengine=http\nhttp_mode=s3\nbuffer_pattern=0xa5\n"
		"[put]\nrw=write\nbs=4k\nsize=64k\nio_size=8k\n"
		"filename=/bucket/object\n"
		"[get]\nstonewall\nrw=read\nbs=4k\nsize=64k\nio_size=12k\n"
		"filename=/bucket/object\n"
		"[delete]\nstonewall\nrw=trim\nbs=4k\nsize=64k\nio_size=4k\n"
		"filename=/bucket/object\n"
		"[swift]\nrw=write\nbs=8k\nsize=16k\nio_size=8k\n"
		"filename_format=/swift/v1/c/bucket.$jobnum\n", sets, 1, &dir,
		&err), 0);
	ck_assert_str_eq(err, "");
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(job_u64(s, 1, "read_ios"), 3);  /* one missing */
	ck_assert_uint_eq(job_u64(s, 2, "trim_ios"), 1);
	ck_assert_ptr_nonnull(strstr(s, "\"namespace\": {\"creates\": 3, "
				     "\"renames\": 0, \"unlinks\": 1,"));
	free(s);
	free(dir);
	free(err);
	fs = open_image(&dev);
	ck_assert_int_eq(zcow_readdir(fs, "/bucket", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 1);	/* object_0_4096 was deleted */
	ck_assert_str_eq(ents[0].name, "object_4096_4096");
	free(ents);
	memset(want, 0xa5, sizeof(want));
	zcow_test_expect(fs, "/bucket/object_4096_4096", want, 4096);
	zcow_test_expect(fs, "/swift/v1/c/bucket.0_0_8192", want, 8192);
	ck_assert_int_eq(zcow_stat(fs, "/bucket/object", &st), -ENOENT);
	close_image(fs, dev);
}
END_TEST

Suite *fio_ctl_suite(void)
{
	Suite *s = suite_create("fio_ctl_suite");
	TCase *p = tcase_create("parse"), *r = tcase_create("run");

	tcase_add_test(p, test_ctl_error_options_parse_as_fio);
	tcase_add_test(p, test_ctl_error_option_errors_name_file_line_option);
	tcase_add_test(p, test_ctl_non_fatal_classes_as_fio);
	tcase_add_test(p, test_ctl_exit_options_parse_as_fio);
	tcase_add_test(p, test_ctl_latency_and_steadystate_options_parse);
	tcase_add_test(p, test_ctl_latency_and_steadystate_errors);
	tcase_add_test(p, test_ctl_blockalign_sets_the_random_unit);
	tcase_add_test(p, test_ctl_blockalign_directions_must_agree);
	tcase_add_test(p, test_ctl_falloc_engine_is_modelled);
	tcase_add_test(p, test_ctl_env_vars_substituted_as_fio);
	tcase_add_test(p, test_ctl_unset_env_var_refused_naming_file_line);
	tcase_add_test(p, test_ctl_filename_format_clientuid_and_absolute);
	tcase_add_test(p, test_ctl_zoned_empty_range_shares_the_rest);
	tcase_add_test(p, test_ctl_printed_options_parse_back);
	suite_add_tcase(s, p);
	tcase_set_timeout(r, 120);
	tcase_add_test(r, test_ctl_enospc_ignored_counted_and_the_job_goes_on);
	tcase_add_test(r, test_ctl_enospc_not_listed_ends_the_job_others_finish);
	tcase_add_test(r, test_ctl_trim_of_a_file_is_enotty_unless_ignored);
	tcase_add_test(r, test_ctl_verify_failure_ends_the_job_unless_counted);
	tcase_add_test(r, test_ctl_exitall_ends_what_exit_what_names);
	tcase_add_test(r, test_ctl_exitall_on_error_ends_others_at_the_error);
	tcase_add_test(r, test_ctl_latency_target_finds_the_deepest_depth);
	tcase_add_test(r, test_ctl_latency_target_missed_at_depth_1_is_etimedout);
	tcase_add_test(r, test_ctl_steadystate_ends_the_job_at_the_check);
	tcase_add_test(r, test_ctl_steadystate_group_reporting_ends_the_group);
	tcase_add_test(r, test_ctl_clientuid_names_files_as_fio_alone);
	tcase_add_test(r, test_ctl_falloc_fails_as_on_zoned_btrfs);
	tcase_add_test(r, test_ctl_file_engines_refused_on_the_raw_target);
	tcase_add_test(r, test_ctl_sub_block_io_keeps_exact_bytes);
	tcase_add_test(r, test_ctl_http_objects_written_read_and_deleted);
	suite_add_tcase(s, r);
	return s;
}
