// SPDX-License-Identifier: MIT
/*
 * fio's I/O logs, iolog, replay and fill_device (harness/fio_log.c and
 * its options in harness/fio.c): parsed with fio's spellings and
 * errors, and the files a small deterministic run writes, line by line.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fio.h"
#include "fio_log.h"
#include "run.h"
#include "tests.h"

#define RES	"/tmp/zcow-test-fio-log"
#define T_FIO	"/tmp/zcow-test-fio-log.fio"
#define T_LOG	"/tmp/zcow-test-fio-log.iolog"
#define FIXTURE	"tests/data/fio-3.33-randrw.iolog"

/* the shared parse helpers (tests/fio_tool.c) */
#define parse_ok	zcow_test_parse_ok
#define parse_err	zcow_test_parse_err

/* Run @text as a job file: 0 and the results folder, or the error. */
static int run_text(const char *text, char **dir_ret)
{
	FILE *f = fopen(T_FIO, "w");
	int ret;

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	*dir_ret = NULL;
	ret = zrun_scenario(T_FIO, NULL, 0, RES, true, dir_ret);
	unlink(T_FIO);
	return ret;
}

static char *run_ok(const char *text)
{
	char *dir;

	ck_assert_int_eq(run_text(text, &dir), 0);
	return dir;
}

/* File @name of folder @dir; NULL when it is not there. */
static char *slurp(const char *dir, const char *name)
{
	char path[1024], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	s = zcow_test_read_all(f);
	fclose(f);
	return s;
}

static void assert_file(const char *dir, const char *name, const char *want)
{
	char *s = slurp(dir, name);

	ck_assert_msg(s != NULL, "no %s in %s", name, dir);
	ck_assert_str_eq(s, want);
	free(s);
}

/* The absolute path of @rel (the tests run in the repository). */
static void abs_path(const char *rel, char *buf, size_t len)
{
	char cwd[512];

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(buf, len, "%s/%s", cwd, rel);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* ---- parsing ---------------------------------------------------------- */

START_TEST(test_fio_log_options_parse_into_the_job)
{
	struct zfio_spec *s = parse_ok(
		"[j]\nwrite_bw_log=bw\nwrite_lat_log\nwrite_iops_log=\n"
		"write_hist_log=h\nper_job_logs=0\nlog_avg_msec=20\n"
		"log_hist_msec=100\nlog_hist_coarseness=4\n"
		"log_max_value=1\nlog_offset=1\nlog_prio=1\n"
		"log_issue_time=1\nlog_unix_epoch=1\nbwavgtime=250\n"
		"iopsavgtime=125\nwrite_iolog=w.iolog\nfill_fs=1\n"
		"prio=5\nprioclass=2\ncmdprio_percentage=10,30\n"
		"cmdprio_class=3\ncmdprio=1,2\nrw=write\n");
	const struct zfio_logopts *lo = &s->jobs[0].log;

	ck_assert(lo->want[ZFIO_LOG_BW].is_set);
	ck_assert_str_eq(lo->want[ZFIO_LOG_BW].name, "bw");
	ck_assert(lo->want[ZFIO_LOG_LAT].is_set);
	ck_assert_str_eq(lo->want[ZFIO_LOG_LAT].name, "");
	ck_assert(lo->want[ZFIO_LOG_IOPS].is_set);
	ck_assert_str_eq(lo->want[ZFIO_LOG_HIST].name, "h");
	ck_assert(!lo->per_job_logs);
	ck_assert_uint_eq(lo->avg_msec, 20);
	ck_assert_uint_eq(lo->hist_msec, 100);
	ck_assert_uint_eq(lo->hist_coarseness, 4);
	ck_assert_int_eq(lo->window, ZFIO_WINDOW_MAX);
	ck_assert(lo->offset && lo->prio && lo->issue_time && lo->alt_epoch);
	ck_assert_uint_eq(lo->bw_avg_msec, 250);
	ck_assert_uint_eq(lo->iops_avg_msec, 125);
	ck_assert_str_eq(lo->write_iolog, "w.iolog");
	ck_assert(lo->fill_device);
	ck_assert(lo->has_prio);
	ck_assert_uint_eq(lo->prio_level, 5);
	ck_assert_uint_eq(lo->prio_class, 2);
	ck_assert_uint_eq(lo->cmdprio_pct[0], 10);
	ck_assert_uint_eq(lo->cmdprio_pct[1], 30);
	ck_assert_uint_eq(lo->cmdprio_class[0], 3);
	ck_assert_uint_eq(lo->cmdprio_class[1], 3);
	ck_assert_uint_eq(lo->cmdprio_level[1], 2);
	zfio_free(s);

	/* fio's defaults, and the replay's knobs */
	s = parse_ok("[j]\nread_iolog=a.log:/x/b.log\nread_iolog_chunked=1\n"
		     "replay_no_stall=1\nreplay_time_scale=50\n"
		     "replay_redirect=/dev/sdc\nreplay_align=4k\n"
		     "replay_scale=2\nreplay_skip=read,trim\n"
		     "log_window_value=both\n"
		     "cmdprio_bssplit=64k/25/1/1:64k/75:1m/0,1m/10\n");
	lo = &s->jobs[0].log;
	ck_assert(lo->per_job_logs);
	ck_assert_str_eq(lo->read_iolog, "a.log:/x/b.log");
	ck_assert(lo->iolog_chunked && lo->no_stall);
	ck_assert_uint_eq(lo->time_scale, 50);
	ck_assert_str_eq(lo->redirect, "/dev/sdc");
	ck_assert_uint_eq(lo->replay_align, 4096);
	ck_assert_uint_eq(lo->replay_scale, 2);
	ck_assert_uint_eq(lo->replay_skip, ZFIO_SKIP_READ | ZFIO_SKIP_TRIM);
	ck_assert_int_eq(lo->window, ZFIO_WINDOW_BOTH);
	ck_assert(lo->has_cmdprio_bs);
	ck_assert_uint_eq(lo->nr_cmdprio_bs[0], 3);
	ck_assert_uint_eq(lo->cmdprio_bs[0][0].bs, 65536);
	ck_assert_uint_eq(lo->cmdprio_bs[0][0].pct, 25);
	ck_assert_int_eq(lo->cmdprio_bs[0][0].cls, 1);
	ck_assert_int_eq(lo->cmdprio_bs[0][1].cls, -1);
	ck_assert_uint_eq(lo->nr_cmdprio_bs[1], 1);
	ck_assert_uint_eq(lo->cmdprio_bs[1][0].pct, 10);
	zfio_free(s);

	/* a relative read_iolog is relative to the job file */
	{
		struct zfio_spec *spec = NULL;
		char err[ZFIO_ERR_LEN];

		ck_assert_int_eq(zfio_parse_text("/cfg/t.fio",
						 "[j]\nread_iolog=a:b\n", NULL,
						 0, &spec, err, sizeof(err)),
				 0);
		ck_assert_str_eq(spec->jobs[0].log.read_iolog,
				 "/cfg/a:/cfg/b");
		zfio_free(spec);
	}
}
END_TEST

START_TEST(test_fio_log_bad_values_name_file_line_option)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "[j]\nwrite_bw_log=logs/x\n", "t.fio:2: option "
		  "'write_bw_log': 'logs/x': logs are written in the run's "
		  "results folder: give a file name, without '/'" },
		{ "[j]\nwrite_iolog\n", "t.fio:2: option 'write_iolog': "
		  "needs a value" },
		{ "[j]\nread_iolog=-\n", "t.fio:2: option 'read_iolog': '-' "
		  "(standard input) cannot be replayed: a run reads its "
		  "inputs before it starts" },
		{ "[j]\nread_iolog=a::b\n", "t.fio:2: option 'read_iolog': "
		  "an empty file name" },
		{ "[j]\nlog_hist_coarseness=7\n", "t.fio:2: option "
		  "'log_hist_coarseness': '7' is not an integer in 0..6" },
		{ "[j]\nlog_max_value=2\n", "t.fio:2: option 'log_max_value': "
		  "'2' is not avg, max, both, 0 or 1" },
		{ "[j]\nlog_avg_msec=x\n", "t.fio:2: option 'log_avg_msec': "
		  "'x' is not an integer >= 0" },
		{ "[j]\nlog_offset=maybe\n", "t.fio:2: option 'log_offset': "
		  "'maybe' is not a boolean" },
		{ "[j]\nbwavgtime=0\n", "t.fio:2: option 'bwavgtime': '0' is "
		  "not an integer >= 1" },
		{ "[j]\nlog_compression=512\n", "t.fio:2: option "
		  "'log_compression': '512' is not an integer in "
		  "1024..536870912" },
		{ "[j]\nreplay_align=3000\n", "t.fio:2: option "
		  "'replay_align': 3000 is not a power of 2" },
		{ "[j]\nreplay_scale=0\n", "t.fio:2: option 'replay_scale': "
		  "'0' is not an integer >= 1" },
		{ "[j]\nreplay_time_scale=0\n", "t.fio:2: option "
		  "'replay_time_scale': '0' is not an integer >= 1" },
		{ "[j]\nreplay_skip=read,flush\n", "t.fio:2: option "
		  "'replay_skip': 'flush' is not read, write, trim or sync" },
		{ "[j]\nprio=8\n", "t.fio:2: option 'prio': '8' is not an "
		  "integer in 0..7" },
		{ "[j]\nprioclass=4\n", "t.fio:2: option 'prioclass': '4' is "
		  "not an integer in 0..3" },
		{ "[j]\ncmdprio_percentage=101\n", "t.fio:2: option "
		  "'cmdprio_percentage': '101' is not an integer in 0..100" },
		{ "[j]\ncmdprio_class=0\n", "t.fio:2: option 'cmdprio_class': "
		  "'0' is not an integer in 1..3" },
		{ "[j]\ncmdprio_bssplit=64k\n", "t.fio:2: option "
		  "'cmdprio_bssplit': entry 1: not BS/PERCENT or "
		  "BS/PERCENT/CLASS/LEVEL" },
		{ "[j]\ncmdprio_bssplit=64k/10/4/0\n", "t.fio:2: option "
		  "'cmdprio_bssplit': entry 1: class 4 is not 1..3 or level "
		  "0 not 0..7" },
		{ "[j]\ncmdprio_bssplit=64k/60:64k/50\n", "t.fio:2: option "
		  "'cmdprio_bssplit': the percentages of 65536-byte I/Os "
		  "add up to 110, above 100" },
		{ "[j]\nmerge_blktrace_file=m\n", "t.fio:2: option "
		  "'merge_blktrace_file': merges blktrace binary traces: "
		  "zcow replays fio's iolog (versions 2 and 3) only" },
		{ "[j]\nlog_alternate_epoch_clock_id=1\n", "t.fio:2: option "
		  "'log_alternate_epoch_clock_id': a host clock: the "
		  "simulated clock is the only one (log_alternate_epoch "
		  "counts from the run's start)" },
		{ "[j]\nlog_compression_cpus=0\n", "t.fio:2: option "
		  "'log_compression_cpus': CPUs for fio's in-memory log "
		  "compression, which zcow does not do" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_err(bad[i].text, bad[i].err);
}
END_TEST

/* Options that only make sense together, checked on the resolved job,
 * each naming where the option was set. */
START_TEST(test_fio_log_checks_across_options)
{
	parse_err("[j]\nlog_store_compressed=1\n", "t.fio:2: option "
		  "'log_store_compressed': zcow writes its logs as text; "
		  "fio's compressed .fz files are not written");
	parse_err("[j]\nwrite_lat_log\nlog_issue_time=1\n", "t.fio:3: option "
		  "'log_issue_time': needs write_lat_log and log_offset "
		  "(fio)");
	parse_err("[j]\nread_iolog=a\nwrite_iolog=b\n", "t.fio:3: option "
		  "'write_iolog': a job that replays read_iolog writes no "
		  "iolog (fio ignores it): drop one of the two");
	parse_err("[global]\nwrite_iolog=b\n[j]\nnumjobs=2\n", "t.fio:2: "
		  "option 'write_iolog': 2 clones would write one file "
		  "interspersed (fio): give each job its own, numjobs=1");
	parse_err("[j]\nreplay_redirect=/dev/x\n", "t.fio:2: option "
		  "'replay_redirect': needs read_iolog");
	parse_err("[j]\nrw=randread\nfill_fs=1\n", "t.fio:3: option "
		  "'fill_device': rw=randread: fio fills the file system "
		  "first, then reads; only writing jobs are modelled");
	parse_err("[j]\nread_iolog=a\nfill_device=1\n", "t.fio:3: option "
		  "'fill_device': a replay's I/O is the log's: drop "
		  "fill_device or read_iolog");
	parse_err("[j]\nzcow_loadfile=c.txt\nwrite_iops_log\n", "t.fio:3: "
		  "option 'write_iops_log': a zcow_loadfile job's operations "
		  "are dbench's, not fio's I/Os: fio's logs do not apply");
}
END_TEST

/* log_compression and log_entries change nothing zcow writes: listed as
 * ignored, with the reason; the refused ones with theirs. */
START_TEST(test_fio_log_ignored_and_refused_listed_with_why)
{
	struct zfio_spec *s = parse_ok("[j]\nlog_compression=64k\n"
				       "log_entries=4096\n");
	char *list = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&list, &len);

	ck_assert_uint_eq(s->nr_ignored, 2);
	ck_assert_str_eq(s->ignored[0], "log_compression");
	ck_assert_str_eq(s->ignored[1], "log_entries");
	zfio_free(s);
	zfio_list_options(m);
	fclose(m);
	ck_assert_ptr_nonnull(strstr(list, "\nlog_compression (ignored: fio "
				     "compresses its logs in memory while it "
				     "runs; the files are the same)\n"));
	ck_assert_ptr_nonnull(strstr(list, "\nmerge_blktrace_iters (refused: "
				     "merges blktrace"));
	ck_assert_ptr_nonnull(strstr(list, "\nfill_device (alias fill_fs)\n"));
	ck_assert_ptr_null(strstr(list, "write_bw_log (ignored)"));
	free(list);
}
END_TEST

/* ---- the logs --------------------------------------------------------- */

/* Per I/O, per_job_logs=0 (NAME_kind.log), the offset column: four 4 KiB
 * writes of 11751 ns each on the default model, one at a time. */
START_TEST(test_fio_log_per_io_lines_are_fios)
{
	static const char lat[] =
		"0, 11751, 1, 4096, 0, 0\n0, 11751, 1, 4096, 4096, 0\n"
		"0, 11751, 1, 4096, 8192, 0\n0, 11751, 1, 4096, 12288, 0\n";
	char *dir = run_ok("[j]\nsize=16k\nbs=4k\nrw=write\nwrite_lat_log\n"
			   "write_bw_log=b\nwrite_iops_log=b\nlog_offset=1\n"
			   "per_job_logs=0\n");
	char *sum = slurp(dir, "summary.json");

	assert_file(dir, "j_lat.log", lat);
	assert_file(dir, "j_clat.log", lat);
	/* zcow's slat: the wait for the fs's locks before the call */
	assert_file(dir, "j_slat.log",
		    "0, 0, 1, 4096, 0, 0\n0, 0, 1, 4096, 4096, 0\n"
		    "0, 0, 1, 4096, 8192, 0\n0, 0, 1, 4096, 12288, 0\n");
	/* 4096 x 10^6 / 11751 ns, fio's add_bw_sample */
	assert_file(dir, "b_bw.log",
		    "0, 348566, 1, 4096, 0, 0\n0, 348566, 1, 4096, 4096, 0\n"
		    "0, 348566, 1, 4096, 8192, 0\n"
		    "0, 348566, 1, 4096, 12288, 0\n");
	assert_file(dir, "b_iops.log",
		    "0, 1, 1, 4096, 0, 0\n0, 1, 1, 4096, 4096, 0\n"
		    "0, 1, 1, 4096, 8192, 0\n0, 1, 1, 4096, 12288, 0\n");
	ck_assert_ptr_nonnull(strstr(sum, "\"logs\": [\"b_bw.log\", "
				     "\"j_lat.log\", \"j_slat.log\", "
				     "\"j_clat.log\", \"b_iops.log\"],"));
	free(sum);
	free(dir);
}
END_TEST

/*
 * Windows: reads (68000 ns) and writes (11751 ns) about 1 ms apart
 * (thinktime=1ms); the completions fall in ms 0 (w), 1..5 (r), 6, 7 (w).
 * lat: a sample W ms past its direction's window start closes it (reads
 * at 2 and 4, writes at 6), the rest close at the job's end (8 ms);
 * bw, iops: what completed in each 2 ms, at its end; histograms every
 * 3 ms (fio restarts an unset window at its next sample: no write line).
 */
START_TEST(test_fio_log_windows_and_histograms_are_fios)
{
	char *dir = run_ok("[j]\nsize=32k\nbs=4k\nrw=rw\nthinktime=1ms\n"
			   "write_lat_log=w\nwrite_bw_log=w\nwrite_iops_log=w\n"
			   "log_avg_msec=2\nlog_window_value=both\n"
			   "write_hist_log=w\nlog_hist_msec=3\n"
			   "log_hist_coarseness=6\n");
	static const char lat[] =
		"2, 68000, 68000, 0, 0, 0\n4, 68000, 68000, 0, 0, 0\n"
		"6, 11751, 11751, 1, 0, 0\n8, 68000, 68000, 0, 0, 0\n"
		"8, 11751, 11751, 1, 0, 0\n";
	char hist[512];
	unsigned int b;
	int n;

	assert_file(dir, "w_lat.1.log", lat);
	assert_file(dir, "w_clat.1.log", lat);
	assert_file(dir, "w_bw.1.log",
		    "2, 2000, 2000, 0, 4096, 0\n2, 2000, 2000, 1, 4096, 0\n"
		    "4, 4000, 4000, 0, 4096, 0\n6, 4000, 4000, 0, 4096, 0\n"
		    "8, 4000, 4000, 1, 4096, 0\n");
	assert_file(dir, "w_iops.1.log",
		    "2, 500, 500, 0, 4096, 0\n2, 500, 500, 1, 4096, 0\n"
		    "4, 1000, 1000, 0, 4096, 0\n6, 1000, 1000, 0, 4096, 0\n"
		    "8, 1000, 1000, 1, 4096, 0\n");
	/* 1856 bins / 2^6 = 29 values; 68000 ns is bin 706, value 11 */
	n = snprintf(hist, sizeof(hist), "4, 0, 4096");
	for (b = 0; b < 29; b++)
		n += snprintf(hist + n, sizeof(hist) - n, ", %u",
			      b == 11 ? 4 : 0);
	snprintf(hist + n, sizeof(hist) - n, "\n");
	assert_file(dir, "w_clat_hist.1.log", hist);
	ck_assert_uint_eq(zfio_hist_bin(68000), 706);
	ck_assert_uint_eq(zfio_hist_bin(63), 63);
	ck_assert_uint_eq(zfio_hist_bin(UINT64_MAX), ZFIO_HIST_NR - 1);
	free(dir);
}
END_TEST

/* log_max_value=max logs the window's largest value (writes at 0..3 and
 * 6 ms, reads at 4, 5 and 7: a window of 4 ms); log_alternate_epoch
 * counts from the run's start (the simulated clock's epoch), so a job
 * started 5 ms late logs from 5; without log_prio the priority column
 * says whether the I/O is of the RT class (prioclass=1). */
START_TEST(test_fio_log_max_epoch_and_rt_column)
{
	char *dir = run_ok("[j]\nsize=16k\nbs=4k\nrw=write\nstartdelay=5ms\n"
			   "write_iops_log=e\nlog_unix_epoch=1\nprioclass=1\n"
			   "[k]\nsize=32k\nbs=4k\nrw=rw\nthinktime=1ms\n"
			   "write_lat_log=m\nlog_avg_msec=4\n"
			   "log_max_value=max\n");

	assert_file(dir, "e_iops.1.log",
		    "5, 1, 1, 4096, 1\n5, 1, 1, 4096, 1\n5, 1, 1, 4096, 1\n"
		    "5, 1, 1, 4096, 1\n");
	assert_file(dir, "m_lat.2.log",
		    "4, 68000, 0, 0, 0\n6, 11751, 1, 0, 0\n"
		    "8, 68000, 0, 0, 0\n");
	free(dir);
}
END_TEST

/* prio and prioclass give every I/O a priority, cmdprio_percentage a
 * share of them another (drawn from the job's seed, on a stream of its
 * own: the offsets are those of the same job without it); log_prio
 * prints fio's value, class << 13 | level. */
START_TEST(test_fio_log_priorities_in_log_prio_column)
{
	const char *job = "[p]\nsize=256k\nbs=4k\nrw=randwrite\nprioclass=3\n"
			  "prio=2\nwrite_iops_log=p\nlog_prio=1\n"
			  "log_offset=1\n";
	char text[512], *d1, *d2, *a, *b, *p, *q;
	unsigned int nr_rt = 0, nr_idle = 0;

	snprintf(text, sizeof(text), "%scmdprio_percentage=25\n"
		 "cmdprio_class=1\ncmdprio=4\n", job);
	d1 = run_ok(text);
	d2 = run_ok(job);
	a = slurp(d1, "p_iops.1.log");
	b = slurp(d2, "p_iops.1.log");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	for (p = a, q = b; *p; p = strchr(p, '\n') + 1,
	     q = strchr(q, '\n') + 1) {
		const char *pc = strstr(p, ", 0x");

		/* same offsets, line by line */
		ck_assert_int_eq(strncmp(p, q, (size_t)(pc - p)), 0);
		ck_assert_int_eq(strncmp(strstr(q, ", 0x"), ", 0x6002\n", 9),
				 0);
		if (!strncmp(pc, ", 0x2004\n", 9))
			nr_rt++;
		else if (!strncmp(pc, ", 0x6002\n", 9))
			nr_idle++;
		else
			ck_abort_msg("priority %.8s", pc);
	}
	ck_assert_uint_eq(nr_rt + nr_idle, 64);
	ck_assert_uint_ge(nr_rt, 8);
	ck_assert_uint_le(nr_rt, 24);
	ck_assert_uint_eq(zfio_ioprio(0, 7), 0x4007);	/* none: BE */
	free(a);
	free(b);
	free(d1);
	free(d2);
}
END_TEST

/* ---- the iolog -------------------------------------------------------- */

/* fio's version 3 iolog: add and open at set-up, an I/O line at each
 * issue (us from the job's start), fsync=4's sync of the last file at
 * the last I/O's offset with length 0, close at the end.  fsync=4
 * buffers the writes: they take no time, the sync writes them back. */
START_TEST(test_fio_log_write_iolog_is_fios_version_3)
{
	char *dir = run_ok("[j]\nsize=32k\nbs=4k\nrw=write\nfsync=4\n"
			   "write_iolog=j.iolog\n");

	assert_file(dir, "j.iolog",
		    "fio version 3 iolog\n"
		    "0 /j.0.0 add\n0 /j.0.0 open\n"
		    "0 /j.0.0 write 0 4096\n0 /j.0.0 write 4096 4096\n"
		    "0 /j.0.0 write 8192 4096\n0 /j.0.0 write 12288 4096\n"
		    "0 /j.0.0 sync 12288 0\n"
		    "97 /j.0.0 write 16384 4096\n"
		    "97 /j.0.0 write 20480 4096\n"
		    "97 /j.0.0 write 24576 4096\n"
		    "97 /j.0.0 write 28672 4096\n"
		    "97 /j.0.0 sync 28672 0\n195 /j.0.0 close\n");
	free(dir);
}
END_TEST

/*
 * The log fio 3.33 wrote on two plain files in /tmp (tests/data/
 * fio-3.33-randrw.fio): replayed on the fs target, the same I/Os in the
 * same order, paced by its timestamps (the first action at the job's
 * start: its writes at 0.49 and 0.60 ms, ... 3.05 ms), the datasync on
 * the file the log names.  The log syncs, so its writes are buffered
 * (harness/run_fs.c): no device time until the sync writes them back.
 */
START_TEST(test_fio_log_replays_a_log_fio_wrote)
{
	char fx[600], text[1024], *dir, *sum;

	abs_path(FIXTURE, fx, sizeof(fx));
	snprintf(text, sizeof(text), "[r]\nread_iolog=%s\nwrite_lat_log=r\n"
		 "log_offset=1\n", fx);
	dir = run_ok(text);
	assert_file(dir, "r_lat.1.log",
		    "0, 0, 1, 4096, 0, 0\n0, 0, 1, 4096, 8192, 0\n"
		    "0, 68000, 0, 4096, 12288, 0\n0, 68000, 0, 4096, 4096, 0\n"
		    "1, 68000, 0, 4096, 4096, 0\n1, 0, 1, 4096, 12288, 0\n"
		    "3, 0, 1, 4096, 0, 0\n3, 0, 1, 4096, 8192, 0\n");
	sum = slurp(dir, "summary.json");
	ck_assert_ptr_nonnull(strstr(sum, "\"nr_fsyncs\": 1,"));
	free(sum);
	free(dir);
}
END_TEST

/* Round trip: a job's write_iolog replayed with read_iolog issues the
 * same I/O sequence and gives the same device commands: trace.csv (every
 * device command, set-up included) is byte for byte the same. */
START_TEST(test_fio_log_round_trip_gives_the_same_device_commands)
{
	char *d1, *d2, *t1, *t2, text[1024];

	d1 = run_ok("[w]\nnrfiles=2\nfilesize=64k\nbs=4k\nrw=randwrite\n"
		    "fsync=5\nwrite_iolog=w.iolog\n[zcow]\ntrace=on\n");
	snprintf(text, sizeof(text), "[w]\nread_iolog=%s/w.iolog\n"
		 "write_lat_log=w\nlog_offset=1\n[zcow]\ntrace=on\n", d1);
	d2 = run_ok(text);
	t1 = slurp(d1, "trace.csv");
	t2 = slurp(d2, "trace.csv");
	ck_assert_ptr_nonnull(t1);
	ck_assert_ptr_nonnull(t2);
	ck_assert_uint_gt(strlen(t1), 1000);
	ck_assert_str_eq(t1, t2);
	free(t1);
	free(t2);
	free(d1);
	free(d2);
}
END_TEST

/* Replay a v3 log of @body (after its version line) with @knobs; the
 * replay's lat log. */
static char *replay_lat(const char *version, const char *body,
			const char *knobs)
{
	char text[1024], *dir, *s;

	snprintf(text, sizeof(text), "fio version %s iolog\n%s", version,
		 body);
	put_file(T_LOG, text);
	snprintf(text, sizeof(text), "[r]\nread_iolog=" T_LOG "\n"
		 "write_lat_log=r\nlog_offset=1\n%s", knobs);
	dir = run_ok(text);
	s = slurp(dir, "r_lat.1.log");
	ck_assert_ptr_nonnull(s);
	free(dir);
	unlink(T_LOG);
	return s;
}

START_TEST(test_fio_log_replay_knobs_do_what_fio_says)
{
	static const char v3[] =
		"0 /d/f add\n0 /d/g add\n10 /d/f open\n10 /d/g open\n"
		"1000 /d/f write 8192 4096\n3000 /d/g read 12345 4096\n"
		"7000 /d/f write 0 8192\n7000 /d/f sync 0 0\n"
		"9000 /d/f close\n";
	char *s;

	/* as logged: the actions 1, 3 and 7 ms after the first (the log
	 * syncs: its writes only fill the page cache, no device time, and
	 * go out with the sync; a write done at once is logged in the ms
	 * before its log time) */
	s = replay_lat("3", v3, "");
	ck_assert_str_eq(s, "0, 0, 1, 4096, 8192, 0\n"
			    "3, 68000, 0, 4096, 12345, 0\n"
			    "6, 0, 1, 8192, 0, 0\n");
	free(s);
	/* twice the rate: half the gaps */
	s = replay_lat("3", v3, "replay_time_scale=200\n");
	ck_assert_str_eq(s, "0, 0, 1, 4096, 8192, 0\n"
			    "1, 68000, 0, 4096, 12345, 0\n"
			    "3, 0, 1, 8192, 0, 0\n");
	free(s);
	/* as fast as it goes, reads skipped, read in chunks */
	s = replay_lat("3", v3, "replay_no_stall=1\nreplay_skip=read\n"
			"read_iolog_chunked=1\n");
	ck_assert_str_eq(s, "0, 0, 1, 4096, 8192, 0\n"
			    "0, 0, 1, 8192, 0, 0\n");
	free(s);
	/* offsets / 2, aligned down to 4 KiB, all onto one file */
	s = replay_lat("3", v3, "replay_scale=2\nreplay_align=4096\n"
			"replay_redirect=/one\nreplay_no_stall=1\n");
	ck_assert_str_eq(s, "0, 0, 1, 4096, 4096, 0\n"
			    "0, 68000, 0, 4096, 4096, 0\n"
			    "0, 0, 1, 8192, 0, 0\n");
	free(s);
	/* version 2: no times; a wait holds the job until that many ms
	 * after the start (fio's read_iolog_get) */
	s = replay_lat("2", "/f add\n/f open\n/f write 0 4096\n"
			"/f wait 5 0\n/f write 4096 4096\n/f close\n", "");
	ck_assert_str_eq(s, "0, 11751, 1, 4096, 0, 0\n"
			    "5, 11751, 1, 4096, 4096, 0\n");
	free(s);
}
END_TEST

/* A log zcow cannot replay is refused before the run, naming the
 * option's place and the log's line. */
START_TEST(test_fio_log_replay_errors_name_the_log_line)
{
	static const struct {
		const char *log, *knobs, *err;
	} bad[] = {
		{ "fio version 1 iolog\n", "", T_FIO ":2: option 'read_iolog': "
		  T_LOG ":1: not 'fio version 2 iolog' or 'fio version 3 "
		  "iolog' (version 1 is no longer read by fio either)" },
		{ "\x00\x74\x61\x65\x07\x00", "", T_FIO ":2: option "
		  "'read_iolog': " T_LOG ": a blktrace binary trace: zcow "
		  "replays fio's iolog (versions 2 and 3) only, not "
		  "blktrace" },
		{ "fio version 3 iolog\n0 /f add\n5 /f write 0\n", "",
		  T_FIO ":2: option 'read_iolog': " T_LOG ":3: 'write' takes "
		  "an offset and a length" },
		{ "fio version 3 iolog\n0 /f add\n5 /f scribble 0 1\n", "",
		  T_FIO ":2: option 'read_iolog': " T_LOG ":3: not an iolog "
		  "v3 line (TIME FILE ACTION [OFFSET LENGTH])" },
		{ "fio version 3 iolog\n0 /f add\n5 /g read 0 4096\n", "",
		  T_FIO ":2: option 'read_iolog': " T_LOG ":3: '/g' was not "
		  "added (an 'add' line comes first)" },
		{ "fio version 3 iolog\n0 /f add\n5 /f trim 0 4096\n", "",
		  T_FIO ":2: option 'read_iolog': " T_LOG ":3: trim: files on "
		  "the fs target have no trim (replay_skip=trim leaves them "
		  "out)" },
		{ "fio version 3 iolog\n0 /f add\n5 /f wait 10 0\n", "",
		  T_FIO ":2: option 'read_iolog': " T_LOG ":3: 'wait' is not "
		  "an action of version 3 (its times say when)" },
		{ "fio version 2 iolog\n", "", T_FIO ":2: option 'read_iolog': "
		  T_LOG ": adds no file: nothing to replay" },
		{ "fio version 2 iolog\n/f add\n",
		  "zonemode=zbd\n[zcow]\ntarget=raw\n",
		  T_FIO ":2: option 'read_iolog': the raw target writes at "
		  "the zones' write pointers, not at the log's offsets: "
		  "replay on the fs target (target=fs)" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512], want[768], *err = NULL;
		FILE *f = fopen(T_LOG, "w");

		ck_assert_ptr_nonnull(f);
		fwrite(bad[i].log, 1, i == 1 ? 6 : strlen(bad[i].log), f);
		fclose(f);
		snprintf(text, sizeof(text), "[r]\nread_iolog=" T_LOG "\n%s",
			 bad[i].knobs);
		put_file(T_FIO, text);
		ck_assert_int_eq(zcow_test_run(NULL, &err, "run", T_FIO,
					       "--results", RES, NULL), 1);
		snprintf(want, sizeof(want), "zcow run: %s\n", bad[i].err);
		ck_assert_str_eq(err, want);
		free(err);
		unlink(T_FIO);
	}
	unlink(T_LOG);
}
END_TEST

/* ---- fill_device ------------------------------------------------------ */

/* fill_device (fill_fs): write until the file system says ENOSPC, then
 * the job ends cleanly; summary.json says how much it wrote. */
START_TEST(test_fio_log_fill_device_writes_until_enospc)
{
	char *dir = run_ok("[f]\nrw=write\nbs=1m\nfill_fs=1\n[zcow]\n"
			   "device=sim:zones=24,zone_size=8m\n");
	char *sum = slurp(dir, "summary.json");
	const char *p = strstr(sum, "\"fill_device\": [{\"name\": \"f\", "
				    "\"clone\": 0, \"bytes_written\": ");
	unsigned long long bytes;

	ck_assert_ptr_nonnull(p);
	bytes = strtoull(p + strlen("\"fill_device\": [{\"name\": \"f\", "
				    "\"clone\": 0, \"bytes_written\": "),
			 NULL, 10);
	/* more than half of the 192 MiB, in whole MiB, then ENOSPC */
	ck_assert_uint_gt(bytes, 96ull << 20);
	ck_assert_uint_lt(bytes, 192ull << 20);
	ck_assert_uint_eq(bytes % (1 << 20), 0);
	ck_assert_ptr_nonnull(strstr(p, ", \"enospc\": true}],"));
	free(sum);
	free(dir);
}
END_TEST

/* fill_device with verify: the write ENOSPC refused is not in the
 * history; the verify phase reads back exactly what was written. */
START_TEST(test_fio_log_fill_device_verifies_what_it_wrote)
{
	char *dir = run_ok("[f]\nrw=write\nbs=1m\nfill_fs=1\n"
			   "verify=crc32c\n[zcow]\n"
			   "device=sim:zones=24,zone_size=8m\n");
	char *sum = slurp(dir, "summary.json");
	const char *p = strstr(sum, "\"bytes_written\": ");
	char want[160];

	ck_assert_ptr_nonnull(p);
	snprintf(want, sizeof(want), "\"verify\": {\"blocks_verified\": "
		 "%llu, \"bytes_verified\": %llu, \"failures\": 0,",
		 strtoull(p + 17, NULL, 10) >> 20,
		 strtoull(p + 17, NULL, 10));
	ck_assert_ptr_nonnull(strstr(sum, want));
	free(sum);
	free(dir);
}
END_TEST

START_TEST(test_fio_log_fill_device_refused_on_raw_target)
{
	char *err = NULL;

	put_file(T_FIO, "[f]\nrw=write\nzonemode=zbd\nfill_device=1\n");
	ck_assert_int_eq(zcow_test_run(NULL, &err, "run", T_FIO, "--results",
				       RES, NULL), 1);
	ck_assert_str_eq(err, "zcow run: " T_FIO ":4: option 'fill_device': "
			 "the raw target has no file system to say ENOSPC "
			 "(fio: a raw device does not return it): "
			 "target=fs\n");
	free(err);
	unlink(T_FIO);
}
END_TEST

Suite *fio_log_suite(void)
{
	Suite *s = suite_create("fio_log_suite");
	TCase *tc = tcase_create("fio_log");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fio_log_options_parse_into_the_job);
	tcase_add_test(tc, test_fio_log_bad_values_name_file_line_option);
	tcase_add_test(tc, test_fio_log_checks_across_options);
	tcase_add_test(tc, test_fio_log_ignored_and_refused_listed_with_why);
	tcase_add_test(tc, test_fio_log_per_io_lines_are_fios);
	tcase_add_test(tc, test_fio_log_windows_and_histograms_are_fios);
	tcase_add_test(tc, test_fio_log_max_epoch_and_rt_column);
	tcase_add_test(tc, test_fio_log_priorities_in_log_prio_column);
	tcase_add_test(tc, test_fio_log_write_iolog_is_fios_version_3);
	tcase_add_test(tc, test_fio_log_replays_a_log_fio_wrote);
	tcase_add_test(tc,
		       test_fio_log_round_trip_gives_the_same_device_commands);
	tcase_add_test(tc, test_fio_log_replay_knobs_do_what_fio_says);
	tcase_add_test(tc, test_fio_log_replay_errors_name_the_log_line);
	tcase_add_test(tc, test_fio_log_fill_device_writes_until_enospc);
	tcase_add_test(tc, test_fio_log_fill_device_verifies_what_it_wrote);
	tcase_add_test(tc, test_fio_log_fill_device_refused_on_raw_target);
	suite_add_tcase(s, tc);
	return s;
}
