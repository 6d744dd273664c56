// SPDX-License-Identifier: MIT
/*
 * The fio job-file parser: every option, suffix, inheritance rule and
 * error path (with its file and line), and fio's shipped zbd examples.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fio.h"
#include "prng.h"
#include "tests.h"

/* the shared parse helpers (tests/fio_tool.c) */
#define parse_ok	zcow_test_parse_ok
#define parse_err	zcow_test_parse_err_has
#define parse_err_exact	zcow_test_parse_err

START_TEST(test_fio_every_option_parses)
{
	struct zfio_spec *s = parse_ok(
		"[global]\nrw=randrw\nrwmixwrite=30\nbs=8k\nsize=1g\n"
		"filesize=64m\nnrfiles=4\nfilename=f0\ndirectory=/d\n"
		"numjobs=3\niodepth=8\nruntime=2m\ntime_based\n"
		"ramp_time=500ms\nloops=2\nfsync=16\nfdatasync=8\n"
		"end_fsync=1\ncreate_on_open=1\nunlink=1\nrandseed=42\n"
		"zonemode=zbd\nmax_open_zones=12\njob_max_open_zones=2\n"
		"zone_reset_threshold=0.7\nzone_reset_frequency=0.125\n"
		"offset=2z\noffset_increment=4z\nzonesize=256M\n"
		"zonerange=256M\nzonecapacity=128M\nread_beyond_wp=1\n"
		"ignore_zone_limits=0\nwrite_mode=zone_append\n"
		"[other]\n[j]\nwait_for=other\nname=renamed\n");
	const struct zfio_job *j = &s->jobs[1];

	ck_assert_uint_eq(s->nr_jobs, 2);
	ck_assert_int_eq(j->rw, ZFIO_RANDRW);
	ck_assert_uint_eq(j->rwmixread, 70);
	ck_assert_uint_eq(j->bs, 8192);
	ck_assert_uint_eq(j->size.val, 1ull << 30);
	ck_assert_uint_eq(j->filesize.val, 64ull << 20);
	ck_assert_uint_eq(j->nrfiles, 4);
	ck_assert_str_eq(j->filename, "f0");
	ck_assert_str_eq(j->directory, "/d");
	ck_assert_uint_eq(j->numjobs, 3);
	ck_assert_uint_eq(j->iodepth, 8);
	ck_assert_uint_eq(j->runtime_ns, 120000000000ull);
	ck_assert(j->time_based);
	ck_assert_uint_eq(j->ramp_time_ns, 500000000ull);
	ck_assert_uint_eq(j->loops, 2);
	ck_assert_uint_eq(j->fsync, 16);
	ck_assert_uint_eq(j->fdatasync, 8);
	ck_assert(j->end_fsync && j->create_on_open && j->unlink);
	ck_assert(j->has_randseed);
	ck_assert_uint_eq(j->randseed, 42);
	ck_assert_int_eq(j->zonemode, ZFIO_ZONEMODE_ZBD);
	ck_assert_uint_eq(j->max_open_zones, 12);
	ck_assert_uint_eq(j->job_max_open_zones, 2);
	ck_assert(j->zone_reset_threshold == 0.7);
	ck_assert(j->zone_reset_frequency == 0.125);
	ck_assert_int_eq(j->offset.unit, ZFIO_ZONES);
	ck_assert_uint_eq(j->offset.val, 2);
	ck_assert_uint_eq(j->offset_increment.val, 4);
	ck_assert_uint_eq(j->zonesize, 256ull << 20);
	ck_assert_uint_eq(j->zonerange, 256ull << 20);
	ck_assert_uint_eq(j->zonecapacity, 128ull << 20);
	ck_assert(j->read_beyond_wp && !j->ignore_zone_limits);
	ck_assert(j->zone_append);
	ck_assert_str_eq(j->wait_for, "other");
	ck_assert_str_eq(j->name, "renamed");
	ck_assert_str_eq(j->section, "j");
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_rw_patterns_and_aliases)
{
	static const struct { const char *v; enum zfio_rw rw; } m[] = {
		{ "read", ZFIO_READ }, { "write", ZFIO_WRITE },
		{ "randread", ZFIO_RANDREAD }, { "randwrite", ZFIO_RANDWRITE },
		{ "rw", ZFIO_RW }, { "readwrite", ZFIO_RW },
		{ "randrw", ZFIO_RANDRW }, { "trim", ZFIO_TRIM },
		{ "randtrim", ZFIO_RANDTRIM },
	};
	char text[128];
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct zfio_spec *s;

		snprintf(text, sizeof(text), "[j]\nreadwrite=%s\n", m[i].v);
		s = parse_ok(text);
		ck_assert_int_eq(s->jobs[0].rw, m[i].rw);
		zfio_free(s);
	}
}
END_TEST

START_TEST(test_fio_defaults_are_fios)
{
	struct zfio_spec *s = parse_ok("[j]\n");
	const struct zfio_job *j = &s->jobs[0];

	ck_assert_int_eq(j->rw, ZFIO_READ);
	ck_assert_uint_eq(j->bs, 4096);
	ck_assert_uint_eq(j->numjobs, 1);
	ck_assert_uint_eq(j->iodepth, 1);
	ck_assert_uint_eq(j->loops, 1);
	ck_assert_uint_eq(j->rwmixread, 50);
	ck_assert_uint_eq(j->kb_base, 1024);
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_size_suffixes_kb_base)
{
	struct zfio_size z;

	ck_assert_int_eq(zfio_parse_size("4k", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 4096);
	ck_assert_int_eq(zfio_parse_size("4KB", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 4096);
	/* fio's compatibility mode: IEC spellings are powers of 10 */
	ck_assert_int_eq(zfio_parse_size("4KiB", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 4000);
	ck_assert_int_eq(zfio_parse_size("4k", 1000, &z), 0);
	ck_assert_uint_eq(z.val, 4000);
	ck_assert_int_eq(zfio_parse_size("4kib", 1000, &z), 0);
	ck_assert_uint_eq(z.val, 4096);
	ck_assert_int_eq(zfio_parse_size("2m", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 2ull << 20);
	ck_assert_int_eq(zfio_parse_size("3G", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 3ull << 30);
	ck_assert_int_eq(zfio_parse_size("1t", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 1ull << 40);
	ck_assert_int_eq(zfio_parse_size("1p", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 1ull << 50);
	ck_assert_int_eq(zfio_parse_size("512", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 512);
	ck_assert_int_eq(zfio_parse_size("0x1000", 1024, &z), 0);
	ck_assert_uint_eq(z.val, 4096);
	ck_assert_int_eq(zfio_parse_size("50%", 1024, &z), 0);
	ck_assert_int_eq(z.unit, ZFIO_PERCENT);
	ck_assert_int_eq(zfio_parse_size("8z", 1024, &z), 0);
	ck_assert_int_eq(z.unit, ZFIO_ZONES);
	ck_assert_uint_eq(zfio_size_bytes(&z, 0, 1 << 20, 0), 8 << 20);
	ck_assert_int_eq(zfio_parse_size("4q", 1024, &z), -EINVAL);
	ck_assert_int_eq(zfio_parse_size("k", 1024, &z), -EINVAL);
	ck_assert_int_eq(zfio_parse_size("101%", 1024, &z), -EINVAL);
}
END_TEST

START_TEST(test_fio_kb_base_option_applies_to_earlier_sizes)
{
	struct zfio_spec *s = parse_ok("[j]\nbs=4k\nkb_base=1000\n");

	ck_assert_uint_eq(s->jobs[0].bs, 4000);
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_time_suffixes)
{
	uint64_t ns;

	ck_assert_int_eq(zfio_parse_time("10", &ns), 0);
	ck_assert_uint_eq(ns, 10000000000ull);
	ck_assert_int_eq(zfio_parse_time("10us", &ns), 0);
	ck_assert_uint_eq(ns, 10000);
	ck_assert_int_eq(zfio_parse_time("10ms", &ns), 0);
	ck_assert_uint_eq(ns, 10000000);
	ck_assert_int_eq(zfio_parse_time("2m", &ns), 0);
	ck_assert_uint_eq(ns, 120000000000ull);
	ck_assert_int_eq(zfio_parse_time("1h", &ns), 0);
	ck_assert_uint_eq(ns, 3600000000000ull);
	ck_assert_int_eq(zfio_parse_time("1d", &ns), 0);
	ck_assert_int_eq(zfio_parse_time("1w", &ns), -EINVAL);
}
END_TEST

START_TEST(test_fio_global_inherited_only_below)
{
	struct zfio_spec *s = parse_ok(
		"[global]\nbs=8k\n[a]\n[global]\niodepth=4\n[b]\nbs=16k\n");

	ck_assert_uint_eq(s->nr_jobs, 2);
	ck_assert_uint_eq(s->jobs[0].bs, 8192);
	ck_assert_uint_eq(s->jobs[0].iodepth, 1);	/* set below a */
	ck_assert_uint_eq(s->jobs[1].bs, 16384);	/* job overrides */
	ck_assert_uint_eq(s->jobs[1].iodepth, 4);
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_comments_bare_bools_blank_lines)
{
	struct zfio_spec *s = parse_ok(
		"; a comment\n# another\n\n[j] \n  time_based  \n"
		"runtime=1 ; trailing\nend_fsync=0 # trailing\n");

	ck_assert(s->jobs[0].time_based);
	ck_assert(!s->jobs[0].end_fsync);
	ck_assert_uint_eq(s->jobs[0].runtime_ns, 1000000000ull);
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_ignored_options_listed_once)
{
	struct zfio_spec *s = parse_ok(
		"[global]\nioengine=psync\ndirect=1\ngroup_reporting\n"
		"[a]\nioengine=libaio\n[b]\nthread\n");

	ck_assert_uint_eq(s->nr_ignored, 4);
	ck_assert_str_eq(s->ignored[0], "ioengine");
	ck_assert_str_eq(s->ignored[1], "direct");
	ck_assert_str_eq(s->ignored[2], "group_reporting");
	ck_assert_str_eq(s->ignored[3], "thread");
	zfio_free(s);
}
END_TEST

/* An engine's own options (network, HTTP, GPU, NUMA, ...) are accepted
 * and listed once, as fio's other ignored options. */
START_TEST(test_fio_engine_options_accepted_and_listed_as_ignored)
{
	struct zfio_spec *s = parse_ok(
		"[global]\nioengine=net\nhostname=localhost\nport=8888\n"
		"[a]\nhttp_verbose=0\nport=8889\nnuma_mem_policy=bind:0\n"
		"create_serialize=0\n");

	ck_assert_uint_eq(s->nr_ignored, 6);
	ck_assert_str_eq(s->ignored[0], "ioengine");
	ck_assert_str_eq(s->ignored[1], "hostname");
	ck_assert_str_eq(s->ignored[2], "port");
	ck_assert_str_eq(s->ignored[3], "http_verbose");
	ck_assert_str_eq(s->ignored[4], "numa_mem_policy");
	ck_assert_str_eq(s->ignored[5], "create_serialize");
	zfio_free(s);
}
END_TEST

/* An engine that does no I/O leaves nothing to run: its options are
 * refused with the reason, naming file, line and option. */
START_TEST(test_fio_engine_without_io_refused_with_reason)
{
	parse_err("[a]\nioengine=cpuio\ncpuload=50\n",
		  "t.fio:3: option 'cpuload': ioengine=cpuio burns CPU and "
		  "does no I/O: nothing for zcow to run");
	parse_err("[a]\nioengine=exec\nprogram=/bin/sleep\n",
		  "t.fio:3: option 'program': ioengine=exec runs a program "
		  "and does no I/O: nothing for zcow to run");
}
END_TEST

START_TEST(test_fio_set_overrides_every_job)
{
	const char *sets[] = { "numjobs=8", "bs=64k" };
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];

	ck_assert_int_eq(zfio_parse_text("t.fio",
					 "[global]\nnumjobs=2\n[a]\nbs=4k\n[b]\n",
					 sets, 2, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s->jobs[0].numjobs, 8);
	ck_assert_uint_eq(s->jobs[0].bs, 65536);
	ck_assert_uint_eq(s->jobs[1].numjobs, 8);
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_zcow_section_kept_raw)
{
	struct zfio_spec *s = parse_ok("[j]\n[zcow]\nprofile=smr\nseed=3\n");

	ck_assert_uint_eq(s->nr_jobs, 1);
	ck_assert_uint_eq(s->nr_zcow, 2);
	ck_assert_str_eq(s->zcow[0].key, "profile");
	ck_assert_int_eq(s->zcow[1].line, 4);
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_errors_name_file_line_option)
{
	parse_err("[j]\nbs=4k\nfrobnicate=1\n",
		  "t.fio:3: option 'frobnicate': unknown option");
	parse_err("[j]\nbs=4q\n", "t.fio:2: option 'bs': '4q' is not a size");
	parse_err("[j]\nbs=0\n", "t.fio:2: option 'bs': block size 0");
	parse_err("[j]\nrw=sideways\n",
		  "t.fio:2: option 'rw': unknown pattern 'sideways'");
	parse_err("[j]\nrwmixread=120\n",
		  "t.fio:2: option 'rwmixread': 120 is not a percentage");
	parse_err("[j]\nnumjobs=0\n", "t.fio:2: option 'numjobs': '0' is "
				      "not an integer in 1..4096");
	parse_err("[j]\niodepth=x\n", "t.fio:2: option 'iodepth'");
	parse_err("[j]\nruntime=5x\n",
		  "t.fio:2: option 'runtime': '5x' is not a time");
	parse_err("[j]\ntime_based=maybe\n",
		  "t.fio:2: option 'time_based': 'maybe' is not a boolean");
	parse_err("[j]\nzonemode=weird\n", "t.fio:2: option 'zonemode'");
	parse_err("[j]\nzone_reset_threshold=1.5\n",
		  "t.fio:2: option 'zone_reset_threshold': '1.5' is not a "
		  "number in 0..1");
	parse_err("[j]\nsize=8z\n", "t.fio:2: option 'size': the 'z' "
				    "(zones) suffix needs zonemode=zbd");
	parse_err("[j]\nwrite_mode=zone_append\n",
		  "t.fio:2: option 'write_mode': zone_append needs "
		  "zonemode=zbd");
	parse_err("[j]\nwrite_mode=uncor\n", "t.fio:2: option 'write_mode'");
	parse_err("[j]\nkb_base=1001\n", "t.fio:2: option 'kb_base'");
	parse_err("[j]\nfilename\n", "t.fio:2: option 'filename': needs a "
				     "value");
	parse_err("[j]\nrandseed=abc\n", "t.fio:2: option 'randseed'");
	parse_err("[j]\nzonesize=50%\n", "t.fio:2: option 'zonesize'");
	parse_err("bs=4k\n[j]\n", "t.fio:1: option outside of a section");
	parse_err("[j\n", "t.fio:1: bad section header");
	parse_err("[]\n", "t.fio:1: bad section header");
	parse_err("[global]\nbs=4k\n", "no job section");
	parse_err("[j]\ninclude nonexistent.fio\n",
		  "t.fio:2: include 'nonexistent.fio'");
	parse_err("[j]\nzonemode=zbd\nzonesize=64M\nzonerange=128M\n",
		  "t.fio:1: job 'j': zonerange must equal zonesize");
}
END_TEST

START_TEST(test_fio_set_errors_name_set)
{
	const char *sets[] = { "bs=4k", "nope=1" };
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];

	ck_assert_int_eq(zfio_parse_text("t.fio", "[a]\n", sets, 2, &s, err,
					 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--set:2: option 'nope': unknown option");
}
END_TEST

START_TEST(test_fio_include_relative_and_errors_in_included_file)
{
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];
	FILE *f;

	f = fopen("/tmp/zcow-test-inc.fio", "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[global]\nbs=16k\n\n[inc]\nbogus=1\n");
	fclose(f);
	ck_assert_int_eq(zfio_parse_text("/tmp/top.fio",
					 "include zcow-test-inc.fio\n", NULL,
					 0, &s, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "/tmp/zcow-test-inc.fio:5: option 'bogus': "
			      "unknown option");
	f = fopen("/tmp/zcow-test-inc.fio", "w");
	fprintf(f, "[global]\nbs=16k\n");
	fclose(f);
	ck_assert_int_eq(zfio_parse_text("/tmp/top.fio",
					 "include zcow-test-inc.fio\n[j]\n",
					 NULL, 0, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s->jobs[0].bs, 16384);
	zfio_free(s);
	unlink("/tmp/zcow-test-inc.fio");
}
END_TEST

START_TEST(test_fio_shipped_zbd_examples_parse)
{
	static const char *const files[] = {
		"configs/fio-examples/zbd-rand-write.fio",
		"configs/fio-examples/zbd-seq-read.fio",
		"configs/fio-examples/zbd-rand-write-zone-reset-gc.fio",
		"configs/fio-examples/zbd-rand-write-trim-gc.fio",
	};
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct zfio_spec *s = NULL;
		char err[ZFIO_ERR_LEN];

		ck_assert_msg(zfio_parse_file(files[i], NULL, 0, &s, err,
					      sizeof(err)) == 0, "%s", err);
		ck_assert_uint_ge(s->nr_jobs, 1);
		ck_assert_int_eq(s->jobs[0].zonemode, ZFIO_ZONEMODE_ZBD);
		zfio_free(s);
	}
}
END_TEST

START_TEST(test_fio_missing_file_is_enoent)
{
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];

	ck_assert_int_eq(zfio_parse_file("/nonexistent/x.fio", NULL, 0, &s,
					 err, sizeof(err)), -ENOENT);
	ck_assert(strstr(err, "/nonexistent/x.fio"));
}
END_TEST

/* The seed-treelog workload: fio's file-set options and zcow's two job
 * keys, set in the scenario's [global] before the include. */
START_TEST(test_fio_treelog_scenario_parses_file_set_and_zcow_keys)
{
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];
	const struct zfio_job *j;

	ck_assert_msg(zfio_parse_file("configs/seed-treelog.scenario", NULL, 0,
				      &s, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(s->nr_jobs, 1);
	j = &s->jobs[0];
	ck_assert_str_eq(j->name, "dbench");
	ck_assert_uint_eq(j->numjobs, 32);
	ck_assert_int_eq(j->rw, ZFIO_WRITE);
	ck_assert_str_eq(j->directory, "/clients");
	ck_assert_str_eq(j->filename_format,
			 "client$jobnum/$jobname.$filenum");
	ck_assert(j->fst_sequential && j->create_on_open &&
		  j->unlink_each_loop);
	ck_assert_uint_eq(j->openfiles, 1);
	ck_assert_uint_eq(j->nrfiles, 16);
	ck_assert_uint_eq(j->filesize.val, 8192);
	ck_assert_uint_eq(j->fsync, 2);
	ck_assert_uint_eq(j->zcow_rename_pct, 10);
	ck_assert_uint_eq(j->zcow_unlink_pct, 10);
	zfio_free(s);
}
END_TEST

/* The kernel's fio job (configs/kernel-fsync.fio): fio's command line of
 * the kernel measurement, option for option; fallocate=none is fio's own
 * option, accepted and listed as ignored (zcow never preallocates). */
START_TEST(test_fio_kernel_fsync_scenario_is_the_kernel_command_line)
{
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];
	const struct zfio_job *j;

	ck_assert_msg(zfio_parse_file("configs/kernel-fsync.scenario", NULL, 0,
				      &s, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(s->nr_jobs, 1);
	j = &s->jobs[0];
	ck_assert_str_eq(j->name, "f");
	ck_assert_str_eq(j->directory, "/mnt/w");
	ck_assert_uint_eq(j->nrfiles, 4000);
	ck_assert_uint_eq(j->filesize.val, 8192);
	ck_assert_uint_eq(j->bs, 4096);
	ck_assert_int_eq(j->rw, ZFIO_WRITE);
	ck_assert_uint_eq(j->fsync, 1);
	ck_assert_uint_eq(j->numjobs, 32);
	ck_assert(j->create_on_open && j->fst_sequential);
	ck_assert_uint_eq(j->openfiles, 1);
	ck_assert_uint_eq(j->runtime_ns, 20000000000ull);
	ck_assert(!j->time_based);
	ck_assert_uint_eq(s->nr_ignored, 1);
	ck_assert_str_eq(s->ignored[0], "fallocate");
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_file_set_errors_name_file_line_option)
{
	parse_err("[j]\nrw=write\nfile_service_type=roundrobin\n",
		  "t.fio:3: option 'file_service_type': 'roundrobin': only "
		  "sequential is modelled");
	parse_err("[j]\nfilename_format=$clientname.$filenum\n",
		  "t.fio:2: option 'filename_format': unknown keyword at "
		  "'$clientname.$filenum' ($jobname, $jobnum, $filenum, "
		  "$clientuid)");
	parse_err("[j]\nfilename_format=/abs//$filenum\n",
		  "t.fio:2: option 'filename_format': '/abs//$filenum' is not "
		  "a file path (no empty directory name, no trailing '/')");
	parse_err("[j]\nfilename_format=abs/\n",
		  "t.fio:2: option 'filename_format': 'abs/' is not a file "
		  "path (no empty directory name, no trailing '/')");
	parse_err("[j]\nopenfiles=0\n",
		  "t.fio:2: option 'openfiles': '0' is not an integer >= 1");
	parse_err("[j]\nunlink_each_loop=maybe\n",
		  "t.fio:2: option 'unlink_each_loop': 'maybe' is not a "
		  "boolean");
	parse_err("[j]\nzcow_rename_pct=101\n",
		  "t.fio:2: option 'zcow_rename_pct': 101 is not a percentage");
	parse_err("[global]\nzcow_rename_pct=70\n[j]\nzcow_unlink_pct=40\n",
		  "t.fio:4: option 'zcow_unlink_pct': zcow_rename_pct + "
		  "zcow_unlink_pct = 110 is above 100");
}
END_TEST

/* Counts that size allocations are refused at their documented limits
 * (fio.h) while parsing, before anything is allocated, naming the
 * option; totals over all jobs name the option of the job that crosses
 * them. */
START_TEST(test_fio_huge_counts_refused_with_their_limit)
{
	parse_err("[j]\nnrfiles=10000000\n",
		  "t.fio:2: option 'nrfiles': '10000000' is not an integer in "
		  "1..1048576");
	parse_err("[j]\nnumjobs=100000000\n",
		  "t.fio:2: option 'numjobs': '100000000' is not an integer "
		  "in 1..4096");
	parse_err("[j]\niodepth=65536\n",
		  "t.fio:2: option 'iodepth': '65536' is not an integer in "
		  "1..4096");
	parse_err("[j]\nbs=1t\n", "t.fio:2: option 'bs': 1099511627776 "
				  "bytes is above the limit of 268435456");
	parse_err("[a]\nnumjobs=4000\n[b]\nnumjobs=97\n",
		  "t.fio:4: option 'numjobs': 4097 clones in all is above "
		  "the limit of 4096 jobs");
	parse_err("[global]\nnumjobs=2048\n[a]\nnrfiles=1024\n",
		  "t.fio:4: option 'nrfiles': 2097152 files in all (nrfiles x "
		  "numjobs) is above the limit of 1048576");
	/* At the limits: accepted. */
	zfio_free(parse_ok("[a]\nnumjobs=4096\niodepth=4096\n"));
	zfio_free(parse_ok("[a]\nnrfiles=1048576\nbs=256m\n"));
}
END_TEST

/* fio's wait_for: the waitee is an earlier job with a unique name. */
START_TEST(test_fio_wait_for_names_an_earlier_unique_job)
{
	struct zfio_spec *s;

	parse_err("[a]\n[b]\nwait_for=nosuch\n",
		  "t.fio:3: option 'wait_for': no job named 'nosuch' before "
		  "job 'b' (the waitee must come first)");
	parse_err("[a]\nwait_for=a\n",
		  "t.fio:2: option 'wait_for': no job named 'a' before job 'a'");
	parse_err("[a]\nwait_for=b\n[b]\n",
		  "t.fio:2: option 'wait_for': no job named 'b' before job 'a'");
	parse_err("[a]\n[x]\nname=a\n[c]\nwait_for=a\n",
		  "t.fio:5: option 'wait_for': 2 earlier jobs are named 'a'; "
		  "a waitee's name must be unique");
	s = parse_ok("[a]\nname=first\n[b]\nwait_for=first\n");
	ck_assert_str_eq(s->jobs[1].wait_for, "first");
	zfio_free(s);
}
END_TEST

/* stonewall (and its alias wait_for_previous) is an option of the job,
 * not an ignored one; a [global] stonewall applies to every job. */
START_TEST(test_fio_stonewall_is_parsed_not_ignored)
{
	struct zfio_spec *s = parse_ok("[a]\n[b]\nstonewall\n[c]\n"
				       "wait_for_previous=1\n[d]\n"
				       "stonewall=0\n");
	unsigned int i;

	ck_assert(!s->jobs[0].stonewall);
	ck_assert(s->jobs[1].stonewall);
	ck_assert(s->jobs[2].stonewall);
	ck_assert(!s->jobs[3].stonewall);
	ck_assert_uint_eq(s->nr_ignored, 0);
	zfio_free(s);
	s = parse_ok("[global]\nstonewall\n[a]\n[b]\n");
	for (i = 0; i < 2; i++)
		ck_assert(s->jobs[i].stonewall);
	zfio_free(s);
	parse_err("[a]\nstonewall=sometimes\n",
		  "t.fio:2: option 'stonewall': 'sometimes' is not a boolean");
}
END_TEST

/* ioengine=filecreate is modelled; any other engine is ignored. */
START_TEST(test_fio_ioengine_filecreate_modelled_others_ignored)
{
	struct zfio_spec *s = parse_ok("[global]\nioengine=filecreate\n[a]\n"
				       "[b]\nioengine=psync\n");

	ck_assert(s->jobs[0].is_filecreate);
	ck_assert(!s->jobs[1].is_filecreate);
	ck_assert_uint_eq(s->nr_ignored, 1);
	ck_assert_str_eq(s->ignored[0], "ioengine");
	zfio_free(s);
	parse_err("[a]\nioengine\n", "t.fio:2: option 'ioengine': needs a "
				     "value");
}
END_TEST

/* Where an option was set, for the runner's errors: the last setting
 * (--set last of all), or the job's section for a default. */
START_TEST(test_fio_opt_where_names_the_last_setting)
{
	const char *sets[] = { NULL, "directory=/s" };
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN], buf[ZFIO_ERR_LEN];

	ck_assert_int_eq(zfio_parse_text("t.fio", "[global]\nnrfiles=2\n"
					 "[j]\nnrfiles=3\nblocksize=8k\n",
					 sets, 2, &s, err, sizeof(err)), 0);
	zfio_opt_where(&s->jobs[0], ZFIO_OPT_NRFILES, buf, sizeof(buf));
	ck_assert_str_eq(buf, "t.fio:4: option 'nrfiles'");
	zfio_opt_where(&s->jobs[0], ZFIO_OPT_BS, buf, sizeof(buf));
	ck_assert_str_eq(buf, "t.fio:5: option 'bs'");
	zfio_opt_where(&s->jobs[0], ZFIO_OPT_DIRECTORY, buf, sizeof(buf));
	ck_assert_str_eq(buf, "--set:2: option 'directory'");
	zfio_opt_where(&s->jobs[0], ZFIO_OPT_SIZE, buf, sizeof(buf));
	ck_assert_str_eq(buf, "t.fio:3: job 'j': option 'size' (default)");
	zfio_free(s);
}
END_TEST

/* A NULL override (a key the caller handles itself) still counts: the
 * Nth --set is "--set:N". */
START_TEST(test_fio_set_numbers_count_skipped_overrides)
{
	const char *sets[] = { NULL, "nope=1" };
	struct zfio_spec *s = NULL;
	char err[ZFIO_ERR_LEN];

	ck_assert_int_eq(zfio_parse_text("t.fio", "[a]\n", sets, 2, &s, err,
					 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--set:2: option 'nope': unknown option");
}
END_TEST

/* The option list (zfio_list_options()) is what the parser knows: every
 * listed name and alias is accepted as a key, a made-up one is neither
 * listed nor accepted. */
START_TEST(test_fio_listed_options_are_the_known_ones)
{
	char *list = NULL, *line, *save = NULL;
	size_t list_len = 0;
	unsigned int nr = 0;
	FILE *m = open_memstream(&list, &list_len);

	ck_assert_ptr_nonnull(m);
	zfio_list_options(m);
	fclose(m);
	for (line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[ZFIO_NAME_LEN], alias[ZFIO_NAME_LEN] = "";
		const char *keys[2] = { name, alias };
		unsigned int k;

		ck_assert_int_ge(sscanf(line, "%63s (alias %63[^)])", name,
					alias), 1);
		ck_assert_str_ne(name, "frobnicate");
		for (k = 0; k < 2 && keys[k][0]; k++) {
			struct zfio_spec *s = NULL;
			char text[128], err[ZFIO_ERR_LEN];

			snprintf(text, sizeof(text), "[j]\n%s=1\n", keys[k]);
			if (zfio_parse_text("t.fio", text, NULL, 0, &s, err,
					    sizeof(err)) == 0) {
				zfio_free(s);
				continue;
			}
			ck_assert_msg(!strstr(err, "unknown option"),
				      "listed '%s': %s", keys[k], err);
		}
		nr++;
	}
	/* The options run, those accepted and ignored and those refused,
	 * each ignored or refused one with its reason (zcow run
	 * --list-options shows which is which). */
	ck_assert_uint_eq(nr, 264);
	free(list);
	parse_err("[j]\nfrobnicate=1\n", "unknown option");
}
END_TEST

/* Every option the parser models is in configs/README.md's list. */
START_TEST(test_fio_every_modelled_option_is_documented)
{
	char *list = NULL, *line, *save = NULL, *doc;
	size_t list_len = 0;
	FILE *m = open_memstream(&list, &list_len), *f;
	long doc_len;

	ck_assert_ptr_nonnull(m);
	zfio_list_options(m);
	fclose(m);
	f = fopen("configs/README.md", "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	doc_len = ftell(f);
	rewind(f);
	doc = calloc(1, doc_len + 1);
	ck_assert_ptr_nonnull(doc);
	ck_assert_uint_eq(fread(doc, 1, doc_len, f), (size_t)doc_len);
	fclose(f);
	for (line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[ZFIO_NAME_LEN], quoted[ZFIO_NAME_LEN + 2];

		if (strstr(line, "(ignored)"))
			continue;
		ck_assert_int_eq(sscanf(line, "%63s", name), 1);
		snprintf(quoted, sizeof(quoted), "`%s", name);
		ck_assert_msg(strstr(doc, quoted),
			      "option '%s' is not in configs/README.md", name);
	}
	free(doc);
	free(list);
}
END_TEST

/* ---- random_distribution and percentage_random ------------------------ */

static const struct zfio_job *one_job(struct zfio_spec *s)
{
	ck_assert_uint_ge(s->nr_jobs, 1);
	return &s->jobs[s->nr_jobs - 1];
}

START_TEST(test_fio_random_distribution_parses_fios_forms)
{
	static const struct {
		const char *val;
		enum zfio_dist dist;
		double param, center;
	} ok[] = {
		{ "random", ZFIO_DIST_RANDOM, 0.0, -1.0 },
		{ "zipf", ZFIO_DIST_ZIPF, 1.1, -1.0 },	/* fio's defaults */
		{ "pareto", ZFIO_DIST_PARETO, 0.2, -1.0 },
		{ "normal", ZFIO_DIST_NORMAL, 0.0, -1.0 },
		{ "zipf:1.2", ZFIO_DIST_ZIPF, 1.2, -1.0 },
		{ "zipf:0.8:0.25", ZFIO_DIST_ZIPF, 0.8, 0.25 },
		{ "pareto:0.3:1", ZFIO_DIST_PARETO, 0.3, 1.0 },
		{ "normal:5:0.4", ZFIO_DIST_NORMAL, 5.0, 0.4 },
	};
	struct zfio_spec *s;
	const struct zfio_job *j;
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text),
			 "[j]\nrw=randwrite\nrandom_distribution=%s\n",
			 ok[i].val);
		s = parse_ok(text);
		j = one_job(s);
		ck_assert_int_eq(j->dist, ok[i].dist);
		ck_assert(j->dist_param == ok[i].param);
		ck_assert(j->dist_center == ok[i].center);
		ck_assert_str_eq(j->dist_spec, ok[i].val);
		zfio_free(s);
	}

	/* fio's HOWTO example; a zone without a range shares the rest */
	s = parse_ok("[j]\nrandom_distribution=zoned:60/10:30/20:8/30:2/40\n"
		     "[k]\nrandom_distribution=zoned:50:30/60:20\n");
	j = &s->jobs[0];
	ck_assert_int_eq(j->dist, ZFIO_DIST_ZONED);
	ck_assert_uint_eq(j->nr_dist_zones[ZFIO_DDIR_WRITE], 4);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][2].access_pct, 8);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_TRIM][3].size, 40);
	j = &s->jobs[1];
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][0].size, 20);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][1].size, 60);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][2].size, 20);
	zfio_free(s);

	/* per direction, as fio's bs: "r,w" is w for trims too, an empty
	 * part keeps the default (uniform) */
	s = parse_ok("[j]\nrandom_distribution=zoned:80/20:20/80,50/50:50/50\n"
		     "[k]\nrandom_distribution=zoned:,90/10:10/90,\n");
	j = &s->jobs[0];
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_READ][0].access_pct, 80);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_WRITE][0].access_pct, 50);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_TRIM][0].access_pct, 50);
	j = &s->jobs[1];
	ck_assert_uint_eq(j->nr_dist_zones[ZFIO_DDIR_READ], 0);
	ck_assert_uint_eq(j->nr_dist_zones[ZFIO_DDIR_WRITE], 2);
	ck_assert_uint_eq(j->nr_dist_zones[ZFIO_DDIR_TRIM], 0);
	zfio_free(s);

	/* zoned_abs takes sizes (kb_base applies); a later setting
	 * replaces an earlier one whole */
	s = parse_ok("[global]\nrandom_distribution=zoned:100/10\n"
		     "[j]\nrandom_distribution=zoned_abs:60/20G:40/1m\n"
		     "[k]\nrandom_distribution=zipf:1.2\n");
	j = &s->jobs[0];
	ck_assert_int_eq(j->dist, ZFIO_DIST_ZONED_ABS);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_WRITE][0].size, 20ull << 30);
	ck_assert_uint_eq(j->dist_zones[ZFIO_DDIR_WRITE][1].size, 1ull << 20);
	j = &s->jobs[1];
	ck_assert_int_eq(j->dist, ZFIO_DIST_ZIPF);
	ck_assert_uint_eq(j->nr_dist_zones[ZFIO_DDIR_WRITE], 0);
	zfio_free(s);

	/* fio's PRNG choices: zcow's own PRNG draws, listed as ignored */
	s = parse_ok("[j]\nrandom_generator=tausworthe64\n");
	ck_assert_uint_eq(s->nr_ignored, 1);
	ck_assert_str_eq(s->ignored[0], "random_generator");
	zfio_free(s);
	/* lfsr too: mapped to the same PRNG, with repeats (as zcow draws
	 * for fio's default tausworthe and random map alike) */
	s = parse_ok("[j]\nrandom_generator=lfsr\n");
	ck_assert_uint_eq(s->nr_ignored, 1);
	ck_assert_str_eq(s->ignored[0], "random_generator");
	zfio_free(s);
}
END_TEST

START_TEST(test_fio_percentage_random_per_direction_like_bs)
{
	static const struct {
		const char *opt;
		uint32_t r, w, t;
	} ok[] = {
		{ "percentage_random=30", 30, 30, 30 },
		{ "percentage_random=10,20", 10, 20, 20 },
		{ "percentage_random=10,20,", 10, 20, 100 },
		{ "percentage_random=,50", 100, 50, 50 },
		{ "percentage_random=0,100,7", 0, 100, 7 },
		{ "percentage_sequential=30", 70, 70, 70 },
		{ "rw=randread", 100, 100, 100 },	/* the default */
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char text[128];
		struct zfio_spec *s;
		const struct zfio_job *j;

		snprintf(text, sizeof(text), "[j]\n%s\n", ok[i].opt);
		s = parse_ok(text);
		j = one_job(s);
		ck_assert_uint_eq(j->pct_random[ZFIO_DDIR_READ], ok[i].r);
		ck_assert_uint_eq(j->pct_random[ZFIO_DDIR_WRITE], ok[i].w);
		ck_assert_uint_eq(j->pct_random[ZFIO_DDIR_TRIM], ok[i].t);
		zfio_free(s);
	}
}
END_TEST

START_TEST(test_fio_random_distribution_errors_name_file_line_option)
{
	static const struct {
		const char *val, *msg;
	} bad[] = {
		{ "zipf:1", "zipf theta 1 must be above 0 and not 1" },
		{ "zipf:-0.5", "zipf theta -0.5 must be above 0 and not 1" },
		{ "pareto:1", "pareto h 1 must be above 0 and below 1" },
		{ "normal:100",
		  "normal deviation 100 must be at least 0 and below 100" },
		{ "zipf:1.2:1.5", "center '1.5' is not a number in 0..1" },
		{ "zipf:x", "'x' is not a number" },
		{ "zipf:1.2,1.1", "'zipf' takes one value; per-direction "
		  "values (a,b,c) are only for zoned and zoned_abs" },
		{ "random:1", "'random' takes no value" },
		{ "gauss", "'gauss' is not a random_distribution (fio's name "
		  "is normal)" },
		{ "sequence:1,2", "'sequence' (fio's fixed block sequence) is "
		  "not modelled" },
		{ "uniform", "'uniform' is not random, zipf, pareto, normal, "
		  "zoned or zoned_abs" },
		{ "zoned", "'zoned' needs its zones (zoned:ACCESS%/RANGE%:...)" },
		{ "zoned:60/10:30/20",
		  "the access percentages add up to 90, not 100" },
		{ "zoned:60/10:50/20",
		  "the access percentages add up to 110, not 100" },
		{ "zoned:60/60:40/60",
		  "the range percentages add up to 120, above 100" },
		{ "zoned:50/100:50", "zone 2: no range is left for it (the "
		  "others take 100%)" },
		{ "zoned:50/10::50/10",
		  "an empty zone (zones are ACCESS%/RANGE%:...)" },
		{ "zoned:x/10", "zone 1: access 'x' is not a percentage "
		  "(0..100)" },
		{ "zoned:100/101", "zone 1: range '101' is not a percentage "
		  "(0..100)" },
		{ "zoned:100/10,100/10,100/10,100/10", "more than 3 "
		  "comma-separated values (reads, writes, trims)" },
		{ "zoned:100/10,90/10", "the access percentages add up to 90, "
		  "not 100" },
		{ "zoned_abs:100", "zone 1: '' is not a size above 0 "
		  "(zoned_abs zones are ACCESS%/SIZE)" },
		{ "zoned_abs:100/10%", "zone 1: '10%' is not a size above 0 "
		  "(zoned_abs zones are ACCESS%/SIZE)" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256], want[512];

		snprintf(text, sizeof(text),
			 "[j]\nrw=randwrite\nrandom_distribution=%s\n",
			 bad[i].val);
		snprintf(want, sizeof(want),
			 "t.fio:3: option 'random_distribution': %s",
			 bad[i].msg);
		parse_err_exact(text, want);
	}
	parse_err_exact("[j]\npercentage_random=101\n",
			"t.fio:2: option 'percentage_random': '101' is not a "
			"percentage (0..100)");
	parse_err_exact("[j]\npercentage_random=50,x\n",
			"t.fio:2: option 'percentage_random': 'x' is not a "
			"percentage (0..100)");
	parse_err_exact("[j]\nrandom_generator=xor\n",
			"t.fio:2: option 'random_generator': 'xor' is not "
			"tausworthe, tausworthe64 or lfsr");
	parse_err_exact("[j]\npercentage_sequential=\n",
			"t.fio:2: option 'percentage_sequential': needs a "
			"value");
}
END_TEST

/* Job @text's distribution over @n blocks, seeded @seed / @clone. */
static struct zfio_spec *dist_of(const char *text, uint64_t n, uint64_t seed,
				 uint64_t clone, struct zfio_dist_state *st)
{
	struct zfio_spec *s = parse_ok(text);
	char err[ZFIO_ERR_LEN];
	int ret = zfio_dist_init(st, one_job(s), n, seed, clone, err,
				 sizeof(err));

	ck_assert_msg(ret == 0, "init failed: %s", err);
	return s;
}

/* The share of @m draws of @st (writes) on blocks of rank < @top. */
static double rank_share(const struct zfio_dist_state *st, uint64_t n,
			 uint64_t top, unsigned int m, uint64_t rng)
{
	uint8_t *is_hot = calloc(n, 1);
	unsigned int i, hits = 0, nr_out = 0;
	uint64_t r;

	/* (no assertion per draw: Check records every one) */
	ck_assert_ptr_nonnull(is_hot);
	for (r = 0; r < top; r++)
		is_hot[zfio_dist_block_of_rank(st, r)] = 1;
	for (i = 0; i < m; i++) {
		uint64_t b = zfio_dist_next(st, ZFIO_DDIR_WRITE, &rng);

		if (b >= n)
			nr_out++;
		else
			hits += is_hot[b];
	}
	ck_assert_uint_eq(nr_out, 0);
	free(is_hot);
	return (double)hits / m;
}

/* Without either option a random job draws exactly what the runner
 * always drew: one zcow_rand64() % blocks per offset. */
START_TEST(test_fio_dist_default_is_todays_uniform_draw)
{
	struct zfio_dist_state st;
	struct zfio_spec *s = dist_of("[j]\nrw=randrw\n", 12345, 1, 2, &st);
	uint64_t a = 77, b = 77;
	unsigned int i, nr_bad = 0;

	for (i = 0; i < 10000; i++) {
		enum zfio_ddir d = i % 2 ? ZFIO_DDIR_READ : ZFIO_DDIR_WRITE;

		nr_bad += !zfio_dist_is_random(&st, d, &a);
		nr_bad += a != b;	/* 100%: no draw */
		nr_bad += zfio_dist_next(&st, d, &a) !=
			  zcow_rand64(&b) % 12345;
	}
	ck_assert_uint_eq(nr_bad, 0);
	zfio_free(s);
}
END_TEST

/* Exact zipf: the hottest 10% of 100,000 blocks get
 * H(10,000, theta) / H(100,000, theta) of the accesses, within 1% over
 * 400,000 draws with seed 1 (the standard error is under 0.05%). */
START_TEST(test_fio_dist_zipf_hottest_tenth_share)
{
	static const double thetas[] = { 1.2, 0.8, 2.0 };
	const uint64_t n = 100000, top = n / 10;
	size_t t;

	for (t = 0; t < sizeof(thetas) / sizeof(thetas[0]); t++) {
		struct zfio_dist_state st;
		struct zfio_spec *s;
		char text[128];
		double want = 0, all = 0, got;
		uint64_t k;

		for (k = n; k >= 1; k--) {
			double p = pow((double)k, -thetas[t]);

			all += p;
			if (k <= top)
				want += p;
		}
		want /= all;
		snprintf(text, sizeof(text),
			 "[j]\nrw=randwrite\nrandom_distribution=zipf:%g\n",
			 thetas[t]);
		s = dist_of(text, n, 1, 1, &st);
		got = rank_share(&st, n, top, 400000, 1);
		ck_assert_msg(fabs(got - want) < 0.01,
			      "zipf:%g: hottest 10%% got %.4f, want %.4f",
			      thetas[t], got, want);
		zfio_free(s);
	}
}
END_TEST

/* The rank -> block scramble is a bijection, spreads the hot blocks over
 * the range, and center fixes where rank 0 lands. */
START_TEST(test_fio_dist_scramble_spreads_hot_blocks)
{
	const uint64_t n = 1000;	/* not a power of 2: cycle-walks */
	struct zfio_dist_state st;
	struct zfio_spec *s = dist_of("[j]\nrandom_distribution=zipf:1.2\n",
				      n, 9, 3, &st);
	uint8_t seen[1000] = { 0 };
	unsigned int deciles[10] = { 0 }, nr_deciles = 0;
	uint64_t r;

	for (r = 0; r < n; r++) {
		uint64_t b = zfio_dist_block_of_rank(&st, r);

		ck_assert_uint_lt(b, n);
		ck_assert_uint_eq(seen[b], 0);
		seen[b] = 1;
		if (r < 100 && !deciles[b / 100]++)
			nr_deciles++;
	}
	ck_assert_uint_ge(nr_deciles, 8);	/* 100 hottest: spread */
	zfio_free(s);
}
END_TEST

/* As fio: without a center each clone rotates the scramble its own way
 * (its own hot set); with one, every clone has the same hot set, moved
 * by center x range (normal: by (center - 0.5) x range). */
START_TEST(test_fio_dist_center_shares_the_hot_set)
{
	const uint64_t n = 100000;
	struct zfio_dist_state a, b;
	struct zfio_spec *s;
	uint64_t r0;

	s = dist_of("[j]\nrandom_distribution=zipf:1.2\n", n, 9, 1, &a);
	ck_assert_int_eq(zfio_dist_init(&b, one_job(s), n, 9, 2, NULL, 0), 0);
	ck_assert_uint_ne(zfio_dist_block_of_rank(&a, 0),
			  zfio_dist_block_of_rank(&b, 0));
	zfio_free(s);

	s = dist_of("[j]\nrandom_distribution=pareto:0.2:0\n", n, 9, 1, &a);
	r0 = zfio_dist_block_of_rank(&a, 0);
	ck_assert_int_eq(zfio_dist_init(&b, one_job(s), n, 9, 2, NULL, 0), 0);
	ck_assert_uint_eq(zfio_dist_block_of_rank(&b, 0), r0);
	zfio_free(s);
	s = dist_of("[j]\nrandom_distribution=pareto:0.2:0.25\n", n, 9, 5, &a);
	ck_assert_uint_eq(zfio_dist_block_of_rank(&a, 0), (r0 + n / 4) % n);
	zfio_free(s);

	s = dist_of("[j]\nrandom_distribution=normal\n", n, 9, 1, &a);
	r0 = zfio_dist_block_of_rank(&a, n / 2);
	zfio_free(s);
	s = dist_of("[j]\nrandom_distribution=normal:0:0.25\n", n, 9, 4, &a);
	ck_assert_uint_eq(zfio_dist_block_of_rank(&a, n / 2),
			  (r0 + n - n / 4) % n);
	zfio_free(s);
}
END_TEST

/* zoned:80/20:20/80 sends 80% +- 2% of the accesses to the first 20% of
 * the range, zoned_abs likewise by size; reads may have their own. */
START_TEST(test_fio_dist_zoned_split)
{
	const uint64_t n = 10000;
	struct zfio_dist_state st;
	struct zfio_spec *s;
	unsigned int i, m = 200000, w_lo = 0, r_lo = 0, nr_out = 0;
	uint64_t rng = 5;

	s = dist_of("[j]\nrw=randrw\nbs=4k\n"
		    "random_distribution=zoned:50/50:50/50,80/20:20/80\n",
		    n, 1, 1, &st);
	for (i = 0; i < m; i++) {
		uint64_t w = zfio_dist_next(&st, ZFIO_DDIR_WRITE, &rng);
		uint64_t r = zfio_dist_next(&st, ZFIO_DDIR_READ, &rng);

		nr_out += w >= n || r >= n;
		w_lo += w < n / 5;
		r_lo += r < n / 5;
	}
	ck_assert_uint_eq(nr_out, 0);
	ck_assert_msg(fabs((double)w_lo / m - 0.80) < 0.02, "writes %u",
		      w_lo);
	/* reads: half on the first half, uniform there: 20% -> 20% */
	ck_assert_msg(fabs((double)r_lo / m - 0.20) < 0.02, "reads %u", r_lo);
	zfio_free(s);

	/* zoned_abs: 90% on the first 4 MiB of 40 MiB, none past 8 MiB */
	s = dist_of("[j]\nrw=randwrite\nbs=4k\n"
		    "random_distribution=zoned_abs:90/4m:10/4m\n",
		    n, 1, 1, &st);
	for (i = 0, w_lo = 0; i < m; i++) {
		uint64_t w = zfio_dist_next(&st, ZFIO_DDIR_WRITE, &rng);

		nr_out += w >= 2048;
		w_lo += w < 1024;
	}
	ck_assert_uint_eq(nr_out, 0);
	ck_assert_msg(fabs((double)w_lo / m - 0.90) < 0.02, "abs %u", w_lo);
	zfio_free(s);
}
END_TEST

/* zoned_abs zones beyond the job's range fail before the run, naming the
 * option where it was set. */
START_TEST(test_fio_dist_zoned_abs_beyond_range_refused)
{
	struct zfio_spec *s = parse_ok("[j]\nrw=randwrite\nbs=4k\n"
				       "random_distribution=zoned_abs:50/4m:"
				       "50/8m\n");
	struct zfio_dist_state st;
	char err[ZFIO_ERR_LEN];

	ck_assert_int_eq(zfio_dist_init(&st, one_job(s), 1024, 1, 1, err,
					sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.fio:4: option 'random_distribution': the "
			 "zoned_abs zones add up to 12582912 bytes, above "
			 "the job's range of 4194304 bytes");
	ck_assert_int_eq(zfio_dist_init(&st, one_job(s), 3072, 1, 1, err,
					sizeof(err)), 0);
	zfio_free(s);
}
END_TEST

/* pareto:h puts 1 - h of the accesses on the hottest h of the blocks
 * (fio's power); normal's hottest sixth (+-1 standard deviation, n/12)
 * holds about 68%. */
START_TEST(test_fio_dist_pareto_and_normal_shapes)
{
	const uint64_t n = 60000;
	struct zfio_dist_state st;
	struct zfio_spec *s;
	double got;

	s = dist_of("[j]\nrandom_distribution=pareto:0.2\n", n, 1, 1, &st);
	got = rank_share(&st, n, n / 5, 200000, 3);
	ck_assert_msg(fabs(got - 0.80) < 0.02, "pareto %.4f", got);
	zfio_free(s);

	/* normal's ranks are positions: the middle sixth is the hottest */
	s = dist_of("[j]\nrandom_distribution=normal\n", n, 1, 1, &st);
	got = rank_share(&st, n, n / 2 + n / 12, 200000, 3) -
	      rank_share(&st, n, n / 2 - n / 12, 200000, 3);
	ck_assert_msg(fabs(got - 0.683) < 0.02, "normal %.4f", got);
	zfio_free(s);
}
END_TEST

/* percentage_random=0 is all sequential, 100 all random (and draws
 * nothing), 30 about 30%. */
START_TEST(test_fio_dist_percentage_random)
{
	struct zfio_dist_state st;
	struct zfio_spec *s;
	unsigned int i, nr = 0, nr_bad = 0;
	uint64_t rng = 1, was;

	s = dist_of("[j]\nrw=randrw\npercentage_random=0,100,30\n", 100, 1, 1,
		    &st);
	for (i = 0; i < 10000; i++) {
		nr_bad += zfio_dist_is_random(&st, ZFIO_DDIR_READ, &rng);
		was = rng;
		nr_bad += !zfio_dist_is_random(&st, ZFIO_DDIR_WRITE, &rng);
		nr_bad += rng != was;
		nr += zfio_dist_is_random(&st, ZFIO_DDIR_TRIM, &rng);
	}
	ck_assert_uint_eq(nr_bad, 0);
	ck_assert_msg(nr > 2800 && nr < 3200, "trims random %u", nr);
	zfio_free(s);
}
END_TEST

/* The same seed gives the same offsets; another seed other ones. */
START_TEST(test_fio_dist_same_seed_same_sequence)
{
	static const char *const kinds[] = {
		"zipf:1.2", "pareto:0.3", "normal:10", "zoned:80/20:20/80",
	};
	size_t k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct zfio_dist_state a, b, c;
		struct zfio_spec *sa, *sb, *sc;
		uint64_t ra = 11, rb = 11, rc = 11;
		unsigned int i, nr_diff = 0, nr_bad = 0;
		char text[128];

		snprintf(text, sizeof(text),
			 "[j]\nrw=randwrite\nrandom_distribution=%s\n",
			 kinds[k]);
		sa = dist_of(text, 5000, 42, 7, &a);
		sb = dist_of(text, 5000, 42, 7, &b);
		sc = dist_of(text, 5000, 43, 8, &c);
		for (i = 0; i < 1000; i++) {
			uint64_t x = zfio_dist_next(&a, ZFIO_DDIR_WRITE, &ra);

			nr_bad += x != zfio_dist_next(&b, ZFIO_DDIR_WRITE,
						      &rb);
			nr_diff += x != zfio_dist_next(&c, ZFIO_DDIR_WRITE,
						       &rc);
		}
		ck_assert_uint_eq(nr_bad, 0);
		/* zoned draws alike from the same PRNG state: its blocks do
		 * not depend on the seed, only on the sequence */
		if (k < 3)
			ck_assert_uint_gt(nr_diff, 500);
		zfio_free(sa);
		zfio_free(sb);
		zfio_free(sc);
	}
}
END_TEST

Suite *fio_suite(void)
{
	Suite *s = suite_create("fio_suite");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_fio_every_option_parses);
	tcase_add_test(tc, test_fio_rw_patterns_and_aliases);
	tcase_add_test(tc, test_fio_defaults_are_fios);
	tcase_add_test(tc, test_fio_size_suffixes_kb_base);
	tcase_add_test(tc, test_fio_kb_base_option_applies_to_earlier_sizes);
	tcase_add_test(tc, test_fio_time_suffixes);
	tcase_add_test(tc, test_fio_global_inherited_only_below);
	tcase_add_test(tc, test_fio_comments_bare_bools_blank_lines);
	tcase_add_test(tc, test_fio_ignored_options_listed_once);
	tcase_add_test(tc, test_fio_engine_options_accepted_and_listed_as_ignored);
	tcase_add_test(tc, test_fio_engine_without_io_refused_with_reason);
	tcase_add_test(tc, test_fio_set_overrides_every_job);
	tcase_add_test(tc, test_fio_zcow_section_kept_raw);
	tcase_add_test(tc, test_fio_errors_name_file_line_option);
	tcase_add_test(tc, test_fio_set_errors_name_set);
	tcase_add_test(tc, test_fio_include_relative_and_errors_in_included_file);
	tcase_add_test(tc, test_fio_shipped_zbd_examples_parse);
	tcase_add_test(tc, test_fio_missing_file_is_enoent);
	tcase_add_test(tc, test_fio_treelog_scenario_parses_file_set_and_zcow_keys);
	tcase_add_test(tc, test_fio_kernel_fsync_scenario_is_the_kernel_command_line);
	tcase_add_test(tc, test_fio_file_set_errors_name_file_line_option);
	tcase_add_test(tc, test_fio_huge_counts_refused_with_their_limit);
	tcase_add_test(tc, test_fio_wait_for_names_an_earlier_unique_job);
	tcase_add_test(tc, test_fio_stonewall_is_parsed_not_ignored);
	tcase_add_test(tc, test_fio_ioengine_filecreate_modelled_others_ignored);
	tcase_add_test(tc, test_fio_opt_where_names_the_last_setting);
	tcase_add_test(tc, test_fio_set_numbers_count_skipped_overrides);
	tcase_add_test(tc, test_fio_listed_options_are_the_known_ones);
	tcase_add_test(tc, test_fio_every_modelled_option_is_documented);
	suite_add_tcase(s, tc);

	tc = tcase_create("dist");
	tcase_add_test(tc, test_fio_random_distribution_parses_fios_forms);
	tcase_add_test(tc, test_fio_percentage_random_per_direction_like_bs);
	tcase_add_test(tc,
		test_fio_random_distribution_errors_name_file_line_option);
	tcase_add_test(tc, test_fio_dist_default_is_todays_uniform_draw);
	tcase_add_test(tc, test_fio_dist_zipf_hottest_tenth_share);
	tcase_add_test(tc, test_fio_dist_scramble_spreads_hot_blocks);
	tcase_add_test(tc, test_fio_dist_center_shares_the_hot_set);
	tcase_add_test(tc, test_fio_dist_zoned_split);
	tcase_add_test(tc, test_fio_dist_zoned_abs_beyond_range_refused);
	tcase_add_test(tc, test_fio_dist_pareto_and_normal_shapes);
	tcase_add_test(tc, test_fio_dist_percentage_random);
	tcase_add_test(tc, test_fio_dist_same_seed_same_sequence);
	suite_add_tcase(s, tc);
	return s;
}
