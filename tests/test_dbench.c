// SPDX-License-Identifier: MIT
/*
 * dbench loadfiles (harness/dbench.c) and their replay by the runner
 * (zcow_loadfile, harness/run_fs.c): the parser line by line, its errors
 * (file, line, what), every operation's count on the fs target, status
 * checks, pacing by timestamps, the options a loadfile job refuses,
 * determinism, and dbench's own client.txt with 2 clients.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbench.h"
#include "run.h"
#include "tests.h"

#define RES		"/tmp/zcow-test-dbench"
#define ALL_OPS		"tests/data/dbench-all-ops.txt"
#define CLIENT_TXT	"/usr/share/dbench/client.txt"
#define DEVICE	"device=sim:zones=64,zone_size=64M,zone_cap=34M," \
		"max_open=14,max_active=14\n"

static void spew(const char *path, const char *text)
{
	FILE *f;

	(void)mkdir(RES, 0755);
	f = fopen(path, "w");

	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* A scenario in a temp folder: a job replaying @loadfile with @opts. */
static const char *scenario(const char *name, const char *loadfile,
			    const char *opts)
{
	static char path[256];
	char cwd[512], text[2048];

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	(void)mkdir(RES, 0755);
	snprintf(path, sizeof(path), RES "/%s.fio", name);
	snprintf(text, sizeof(text), "[db]\nzcow_loadfile=%s%s%s\n%s\n"
		 "[zcow]\nprofile=zn540\n" DEVICE,
		 loadfile[0] == '/' ? "" : cwd, loadfile[0] == '/' ? "" : "/",
		 loadfile, opts);
	spew(path, text);
	return path;
}

/* summary.json of a run of @path (its wall-clock lines dropped). */
static char *run_summary(const char *path)
{
	char *dir = zcow_test_scenario_ok(path, NULL, 0, RES);
	char *o = zcow_test_summary_no_wall(dir);

	free(dir);
	return o;
}

static void assert_has(const char *s, const char *want)
{
	ck_assert_msg(strstr(s, want) != NULL, "no '%s' in:\n%s", want, s);
}

/* zcow run of @path in a child: its exit status, its stderr in r->err. */
struct tool_res {
	int status;
	char *err;
};

static void run_tool(struct tool_res *r, const char *path)
{
	free(r->err);
	r->err = NULL;
	r->status = zcow_test_run(NULL, &r->err, "run", path, "--results",
				  RES, "--quiet", NULL);
}

/* The parse error of a one-file loadfile holding @text. */
static void parse_err(const char *text, const char *want)
{
	struct zdb_load *l = NULL;
	char err[ZFIO_ERR_LEN] = "";

	spew(RES "/bad.txt", text);
	ck_assert_int_eq(zdb_load(RES "/bad.txt", &l, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_str_eq(err, want);
}

START_TEST(test_dbench_parses_every_operation_of_the_hand_loadfile)
{
	struct zdb_load *l = NULL;
	char err[ZFIO_ERR_LEN] = "";
	const struct zdb_line *z;

	ck_assert_int_eq(zdb_load(ALL_OPS, &l, err, sizeof(err)), 0);
	ck_assert_uint_eq(l->nr_lines, 24);
	/* line 5: NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK */
	z = &l->lines[2];
	ck_assert_uint_eq(z->line, 5);
	ck_assert_uint_eq(z->op, ZDB_NTCREATEX);
	ck_assert_str_eq(l->pool + z->name, "/clients/client1");
	ck_assert_uint_eq(z->p[0], 1);
	ck_assert_uint_eq(z->p[1], 2);
	ck_assert_uint_eq(z->p[2], 1);
	ck_assert(z->is_ok);
	/* line 10: WriteX 2 0 65536 65536 */
	z = &l->lines[7];
	ck_assert_uint_eq(z->op, ZDB_WRITEX);
	ck_assert_uint_eq(z->p[2], 65536);
	ck_assert_uint_eq(z->p[3], 65536);
	/* line 20: an expected failure */
	z = &l->lines[17];
	ck_assert_uint_eq(z->line, 20);
	ck_assert(!z->is_ok);
	ck_assert_str_eq(l->pool + z->status,
			 "NT_STATUS_OBJECT_NAME_NOT_FOUND");
	/* line 23: Rename OLD NEW */
	z = &l->lines[20];
	ck_assert_uint_eq(z->op, ZDB_RENAME);
	ck_assert_str_eq(l->pool + z->name2, "/clients/client1/dir/b");
	ck_assert_uint_eq(l->lines[23].op, ZDB_RMDIR);
	ck_assert_str_eq(zdb_op_name(ZDB_QFSINFO), "QUERY_FS_INFORMATION");
	zdb_put(l);
}
END_TEST

START_TEST(test_dbench_timestamps_and_dbench3_names_parse)
{
	struct zdb_load *l = NULL;
	char err[ZFIO_ERR_LEN] = "";

	spew(RES "/t.txt", "0.25 Qfsinfo 1 NT_STATUS_OK\n"
			   "1.5 Find \"\\clients\\client1\\*\" 1 2 3 0x0\n"
			   "\n# comment\nsfileinfo 7 1004 0xC0000034\n");
	ck_assert_int_eq(zdb_load(RES "/t.txt", &l, err, sizeof(err)), 0);
	ck_assert_uint_eq(l->nr_lines, 3);
	ck_assert_uint_eq(l->lines[0].at_ns, 250000000);
	ck_assert_uint_eq(l->lines[0].op, ZDB_QFSINFO);
	ck_assert_uint_eq(l->lines[1].at_ns, 1500000000);
	ck_assert_uint_eq(l->lines[1].op, ZDB_FIND);
	ck_assert(l->lines[1].is_ok);
	ck_assert_uint_eq(l->lines[2].line, 5);
	ck_assert_uint_eq(l->lines[2].op, ZDB_SFILEINFO);
	ck_assert(!l->lines[2].is_ok);
	zdb_put(l);
}
END_TEST

START_TEST(test_dbench_malformed_lines_name_file_line_and_fault)
{
	(void)mkdir(RES, 0755);
	parse_err("Close 1 NT_STATUS_OK\nFoo 1 NT_STATUS_OK\n",
		  RES "/bad.txt:2: unknown operation 'Foo'");
	parse_err("WriteX 1 0 4096 NT_STATUS_OK\n",
		  RES "/bad.txt:1: WriteX takes 4 arguments (HANDLE OFFSET "
		  "SIZE RETURNED) and a status, found 3");
	parse_err("Close 1 OK\n",
		  RES "/bad.txt:1: Close: the last field 'OK' is not a "
		  "status (NT_STATUS_... or 0x...)");
	parse_err("Close\n", RES "/bad.txt:1: Close: the last field '' is "
		  "not a status (NT_STATUS_... or 0x...)");
	parse_err("ReadX 1 x 4096 4096 NT_STATUS_OK\n",
		  RES "/bad.txt:1: ReadX argument 2 'x' is not a number");
	parse_err("Unlink clients 0x6 NT_STATUS_OK\n",
		  RES "/bad.txt:1: Unlink argument 1 'clients' is not a path "
		  "(\\...)");
	parse_err("Mkdir \"\\clients NT_STATUS_OK\n",
		  RES "/bad.txt:1: unterminated quote");
	parse_err("\n\nLOOP 3\n", RES "/bad.txt:3: dbench's LOOP is not "
		  "supported");
	parse_err("ReadX 1 *%4096 4096 4096 NT_STATUS_OK\n",
		  RES "/bad.txt:1: ReadX argument 2 '*%4096': random "
		  "parameters ('*', '+') are not supported");
	parse_err("1.x Close 1 NT_STATUS_OK\n",
		  RES "/bad.txt:1: '1.x' is not a time in seconds");
	parse_err("SMBopenX 1 NT_STATUS_OK\n",
		  RES "/bad.txt:1: a dbench 1 loadfile (SMB...) is not "
		  "supported");
	parse_err("# nothing\n\n", RES "/bad.txt:2: no operation in the "
		  "loadfile");
}
END_TEST

START_TEST(test_dbench_missing_loadfile_is_an_error_of_the_option)
{
	struct tool_res *r = calloc(1, sizeof(*r));
	const char *p = scenario("missing", RES "/none.txt", "");

	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "zcow run: " RES "/missing.fio:2: option "
		   "'zcow_loadfile': " RES "/none.txt: No such file or "
		   "directory\n");
	spew(RES "/bad.txt", "Close 1 NT_STATUS_OK\nClose 1 2 NT_STATUS_OK\n");
	p = scenario("badline", RES "/bad.txt", "");
	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "zcow run: " RES "/badline.fio:2: option "
		   "'zcow_loadfile': " RES "/bad.txt:2: Close takes 1 "
		   "arguments (HANDLE) and a status, found 2\n");
	free(r->err);
	free(r);
}
END_TEST

/* Every operation of the hand loadfile, 2 clients x 3 passes: each line
 * runs 6 times; the data moved is exact. */
START_TEST(test_dbench_replay_counts_every_operation)
{
	const char *p = scenario("allops", ALL_OPS, "numjobs=2\nloops=3");
	char *s = run_summary(p);

	assert_has(s, "\"clients\": 2,");
	/* per pass 64 KiB + 4 KiB written, 4 KiB + 8 KiB asked to read */
	assert_has(s, "\"bytes\": 491520,");
	/* the second read finds 4 of its 8 KiB */
	assert_has(s, "\"read_bytes\": 49152,");
	assert_has(s, "\"write_bytes\": 417792,");
	assert_has(s, "\"fsyncs\": 6,");
	assert_has(s, "\"passes\": 6,");
	assert_has(s, "\"mismatches\": 0,");
	assert_has(s, "\"NTCreateX\": {\"done\": 18, \"skipped\": 0, "
		   "\"mismatches\": 0}");
	assert_has(s, "\"Close\": {\"done\": 12, \"skipped\": 0,");
	assert_has(s, "\"Rename\": {\"done\": 6, \"skipped\": 0,");
	assert_has(s, "\"Unlink\": {\"done\": 12, \"skipped\": 0,");
	assert_has(s, "\"Deltree\": {\"done\": 6, \"skipped\": 0,");
	assert_has(s, "\"Mkdir\": {\"done\": 12, \"skipped\": 0,");
	assert_has(s, "\"Rmdir\": {\"done\": 6, \"skipped\": 0,");
	assert_has(s, "\"QUERY_PATH_INFORMATION\": {\"done\": 6, ");
	assert_has(s, "\"QUERY_FILE_INFORMATION\": {\"done\": 6, ");
	assert_has(s, "\"QUERY_FS_INFORMATION\": {\"done\": 0, "
		   "\"skipped\": 6,");
	assert_has(s, "\"SET_FILE_INFORMATION\": {\"done\": 0, "
		   "\"skipped\": 6,");
	assert_has(s, "\"FIND_FIRST\": {\"done\": 6, ");
	assert_has(s, "\"WriteX\": {\"done\": 12, ");
	assert_has(s, "\"ReadX\": {\"done\": 12, ");
	assert_has(s, "\"LockX\": {\"done\": 0, \"skipped\": 6,");
	assert_has(s, "\"UnlockX\": {\"done\": 0, \"skipped\": 6,");
	assert_has(s, "\"Flush\": {\"done\": 6, ");
	/* the Flushes are the jobs' fsyncs, through the tree-log */
	assert_has(s, "\"nr_fsyncs\": 6,");
	free(s);
}
END_TEST

/* A status other than the expected one: NTCreateX and ReadX are counted
 * (dbench prints them), Unlink ends the replay with dbench's error. */
START_TEST(test_dbench_status_mismatches_count_or_end_the_run)
{
	struct tool_res *r = calloc(1, sizeof(*r));
	const char *p;
	char *s;

	spew(RES "/mism.txt",
	     "NTCreateX \"\\f\" 0x40 0x2 5 NT_STATUS_OK\n"
	     "NTCreateX \"\\f\" 0x40 0x1 6 NT_STATUS_OBJECT_NAME_NOT_FOUND\n"
	     "NTCreateX \"\\g\" 0x40 0x1 7 NT_STATUS_OK\n"
	     "ReadX 5 0 4096 4096 NT_STATUS_OK\n"
	     "Close 5 NT_STATUS_OK\n"
	     "Unlink \"\\f\" 0x6 NT_STATUS_OK\n");
	p = scenario("mism", RES "/mism.txt", "");
	s = run_summary(p);
	assert_has(s, "\"mismatches\": 3,");
	assert_has(s, "\"NTCreateX\": {\"done\": 3, \"skipped\": 0, "
		   "\"mismatches\": 2}");
	assert_has(s, "\"ReadX\": {\"done\": 1, \"skipped\": 0, "
		   "\"mismatches\": 1}");
	free(s);
	spew(RES "/mism2.txt", "Unlink \"\\clients\\client1\\x\" 0x6 "
			       "NT_STATUS_OK\n");
	p = scenario("mism2", RES "/mism2.txt", "");
	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "zcow run: job 'db': " RES "/mism2.txt:1: "
		   "client 0: unlink '/clients/client0/x' No such file or "
		   "directory, expected NT_STATUS_OK\n");
	spew(RES "/mism3.txt", "Close 9 NT_STATUS_OK\n");
	p = scenario("mism3", RES "/mism3.txt", "");
	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "zcow run: job 'db': " RES "/mism3.txt:1: "
		   "client 0: Close: handle 9 was not found\n");
	free(r->err);
	free(r);
}
END_TEST

/* Deltree unlinks the files below its directory, as dbench's: the
 * second pass finds the file gone (an open of it must fail) and its
 * subdirectory still there (a Mkdir result is not checked, an open of
 * the directory must succeed). */
START_TEST(test_dbench_deltree_unlinks_files_and_keeps_directories)
{
	const char *p;
	char *s;

	spew(RES "/deltree.txt",
	     "Deltree \"\\clients\\client1\" NT_STATUS_OK\n"
	     "Mkdir \"\\clients\" NT_STATUS_OK\n"
	     "Mkdir \"\\clients\\client1\" NT_STATUS_OK\n"
	     "NTCreateX \"\\clients\\client1\\x\" 0x40 0x1 1 "
	     "NT_STATUS_OBJECT_NAME_NOT_FOUND\n"
	     "NTCreateX \"\\clients\\client1\\x\" 0x40 0x2 2 NT_STATUS_OK\n"
	     "Close 2 NT_STATUS_OK\n"
	     "Mkdir \"\\clients\\client1\\d\" NT_STATUS_OK\n"
	     "NTCreateX \"\\clients\\client1\\d\\y\" 0x40 0x2 3 "
	     "NT_STATUS_OK\n"
	     "Close 3 NT_STATUS_OK\n"
	     "NTCreateX \"\\clients\\client1\\d\" 0x0 0x1 4 NT_STATUS_OK\n"
	     "Close 4 NT_STATUS_OK\n");
	p = scenario("deltree", RES "/deltree.txt", "loops=2");
	s = run_summary(p);
	assert_has(s, "\"passes\": 2,");
	assert_has(s, "\"mismatches\": 0,");
	assert_has(s, "\"NTCreateX\": {\"done\": 8, \"skipped\": 0, "
		   "\"mismatches\": 0}");
	free(s);
	/* without the Deltree the second pass finds x: one mismatch */
	spew(RES "/nodeltree.txt",
	     "Mkdir \"\\clients\" NT_STATUS_OK\n"
	     "Mkdir \"\\clients\\client1\" NT_STATUS_OK\n"
	     "NTCreateX \"\\clients\\client1\\x\" 0x40 0x1 1 "
	     "NT_STATUS_OBJECT_NAME_NOT_FOUND\n"
	     "NTCreateX \"\\clients\\client1\\x\" 0x40 0x2 2 NT_STATUS_OK\n"
	     "Close 2 NT_STATUS_OK\n");
	p = scenario("nodeltree", RES "/nodeltree.txt", "loops=2");
	s = run_summary(p);
	assert_has(s, "\"mismatches\": 1,");
	free(s);
}
END_TEST

/* A timestamp holds its line until that long after the pass began: the
 * last line at 2 ms ends the one pass at exactly 2 ms (no I/O after). */
START_TEST(test_dbench_timestamps_pace_the_client)
{
	const char *p;
	char *s;

	spew(RES "/paced.txt",
	     "NTCreateX \"\\f\" 0x40 0x2 5 NT_STATUS_OK\n"
	     "0.001 WriteX 5 0 4096 4096 NT_STATUS_OK\n"
	     "0.002 Close 5 NT_STATUS_OK\n");
	p = scenario("paced", RES "/paced.txt", "");
	s = run_summary(p);
	assert_has(s, "\"seconds\": 0.002000000,");
	assert_has(s, "\"mb_per_s\": 2.048000,");	/* 4096 B in 2 ms */
	assert_has(s, "\"end_ns\": 2000000,");
	free(s);
}
END_TEST

START_TEST(test_dbench_loadfile_job_refuses_options_it_would_ignore)
{
	struct tool_res *r = calloc(1, sizeof(*r));
	const char *p = scenario("conflict", ALL_OPS, "fsync=1");

	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "zcow run: " RES "/conflict.fio:2: option "
		   "'zcow_loadfile': the loadfile's operations are the "
		   "job's: drop fsync\n");
	p = scenario("conflict2", ALL_OPS, "rw=randwrite");
	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "drop rw\n");
	p = scenario("raw", ALL_OPS, "zonemode=zbd");
	run_tool(r, p);
	ck_assert_int_eq(r->status, 1);
	assert_has(r->err, "zcow run: " RES "/raw.fio:2: option "
		   "'zcow_loadfile': the raw target has no files to replay "
		   "it on (target=fs)\n");
	free(r->err);
	free(r);
}
END_TEST

START_TEST(test_dbench_same_seed_same_summary)
{
	const char *p = scenario("det", ALL_OPS,
				 "numjobs=3\ntime_based\nruntime=20ms\n"
				 "ramp_time=4ms");
	char *s1 = run_summary(p), *s2 = run_summary(p);

	ck_assert_str_eq(s1, s2);
	assert_has(s1, "\"clients\": 3,");
	assert_has(s1, "\"seconds\": 0.020");
	free(s1);
	free(s2);
}
END_TEST

/* configs/dbench.scenario: client.txt, 32 clients, 2 s after 0.4 s. */
START_TEST(test_dbench_scenario_replays_client_txt_with_32_clients)
{
	struct zfio_spec *spec = NULL;
	char err[ZFIO_ERR_LEN] = "";

	ck_assert_msg(zfio_parse_file("configs/dbench.scenario", NULL, 0,
				      &spec, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(spec->nr_jobs, 1);
	ck_assert_str_eq(spec->jobs[0].zcow_loadfile, CLIENT_TXT);
	ck_assert_uint_eq(spec->jobs[0].numjobs, 32);
	ck_assert(spec->jobs[0].time_based);
	ck_assert_uint_eq(spec->jobs[0].runtime_ns, 2000000000ull);
	ck_assert_uint_eq(spec->jobs[0].ramp_time_ns, 400000000ull);
	zfio_free(spec);
}
END_TEST

/* dbench's own loadfile, 2 clients for 60 ms simulated: every status as
 * the loadfile expects, data moved, Flushes fsynced. */
START_TEST(test_dbench_client_txt_two_clients)
{
	const char *p;
	char *s;

	if (access(CLIENT_TXT, R_OK)) {
		fprintf(stderr, "\n*** SKIPPED test_dbench_client_txt_two_"
				"clients: %s is missing (apt-get install "
				"dbench) ***\n\n", CLIENT_TXT);
		return;
	}
	p = scenario("client", CLIENT_TXT, "numjobs=2\ntime_based\n"
					   "runtime=60ms");
	s = run_summary(p);
	assert_has(s, "\"clients\": 2,");
	assert_has(s, "\"mismatches\": 0,");
	ck_assert_ptr_null(strstr(s, "\"Flush\": {\"done\": 0,"));
	ck_assert_ptr_null(strstr(s, "\"WriteX\": {\"done\": 0,"));
	ck_assert_ptr_null(strstr(s, "\"mb_per_s\": 0.000000"));
	free(s);
}
END_TEST

Suite *dbench_suite(void)
{
	Suite *s = suite_create("dbench_suite");
	TCase *tc = tcase_create("dbench");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_dbench_parses_every_operation_of_the_hand_loadfile);
	tcase_add_test(tc, test_dbench_timestamps_and_dbench3_names_parse);
	tcase_add_test(tc,
		       test_dbench_malformed_lines_name_file_line_and_fault);
	tcase_add_test(tc,
		       test_dbench_missing_loadfile_is_an_error_of_the_option);
	tcase_add_test(tc, test_dbench_replay_counts_every_operation);
	tcase_add_test(tc, test_dbench_status_mismatches_count_or_end_the_run);
	tcase_add_test(tc,
		       test_dbench_deltree_unlinks_files_and_keeps_directories);
	tcase_add_test(tc, test_dbench_timestamps_pace_the_client);
	tcase_add_test(tc,
		test_dbench_loadfile_job_refuses_options_it_would_ignore);
	tcase_add_test(tc, test_dbench_same_seed_same_summary);
	tcase_add_test(tc,
		       test_dbench_scenario_replays_client_txt_with_32_clients);
	tcase_add_test(tc, test_dbench_client_txt_two_clients);
	suite_add_tcase(s, tc);
	return s;
}
