// SPDX-License-Identifier: MIT
/*
 * harness/fsync_table.py, the kernel's btrfs zoned beside zcow under fsync
 * load (docs/vm.md): from the small summaries in tests/data/fsync-table/
 * (a VM dbench summary with two pairs of dbench runs, one fio pair and a
 * failed run; three zcow run summaries) it writes the exact table, and
 * refuses bad arguments with exit status 2 and a message.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

#define DATA ZCOW_TESTDATA "/fsync-table"
#define TABLE "python3 harness/fsync_table.py --kernel " DATA "/kernel " \
	      "--zcow dbench=" DATA "/zcow"
#define OUT "/tmp/zcow-test-fsync-table"

/* stdout of the shell command @cmd (malloc'd) and its exit status. */
static char *capture(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf;
	int st;

	ck_assert_msg(p != NULL, "cannot run %s", cmd);
	buf = zcow_test_read_all(p);
	st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	buf = zcow_test_read_all(f);
	fclose(f);
	return buf;
}

/*
 * The sums over each key's runs: dbench 8 with the tree-log (two runs,
 * 2000 fsyncs, 16 commits, 300 flushes) is 0.0080 commits and 0.1500
 * flushes per fsync; without it 1540 commits over 1500 fsyncs, 1.0267;
 * throughput 21 / 14 = 1.50.  The fio pair is 4.00 on/off, its failed run
 * is left out.  zcow's 8-job runs: 1 / 1024 and 128 / 1024 commits,
 * 28.1 and 18.0 KiB of superblocks + trees + log per fsync.
 */
START_TEST(test_fsync_table_markdown_is_exact)
{
	int st;
	char *out = capture(TABLE, &st);
	char *want = read_file(DATA "/expected.md");

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out, want);
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | on | 21.0 | 200.0 | 1.50 | 0.80 | 0.0080 | "
		"0.0010 | 0.1500 | 0.2500 | 20.0 | 28.1 | 300.0 | 36.1 | 2 | 1 |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | off | 14.0 | 250.0 | 1.50 | 0.80 | 1.0267 | "
		"0.1250 | 1.0267 | 0.2500 | 194.7 | 18.0 | 304.7 | 26.0 | 2 | 1 |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 32 | off | 200.0 |  | 4.00 |  | 0.9000 |  | 0.9000 |  "
		"| 100.0 |  | 104.0 |  | 1 |  |"));
	free(out);
	free(want);
}
END_TEST

/* A second --kernel replaces the first one's runs of the same workload
 * and client count: the same summary twice gives the same table, each
 * key still of its own runs (2 and 1), not twice as many. */
START_TEST(test_fsync_table_later_kernel_run_replaces_its_keys)
{
	int st;
	char *out = capture(TABLE " --kernel " DATA "/kernel", &st);

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | off | 14.0 | 250.0 | 1.50 | 0.80 | 1.0267 | "
		"0.1250 | 1.0267 | 0.2500 | 194.7 | 18.0 | 304.7 | 26.0 | 2 | 1 |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 32 | on | 800.0 |  | 4.00 |  | 0.0010 |  | 0.1000 |  "
		"| 8.0 |  | 12.0 |  | 1 |  |"));
	free(out);
}
END_TEST

START_TEST(test_fsync_table_csv_is_exact)
{
	int st;
	char *out = capture("rm -f " OUT ".csv && " TABLE " --csv " OUT ".csv",
			    &st);
	char *csv, *want;

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out, "");
	csv = read_file(OUT ".csv");
	want = read_file(DATA "/expected.csv");
	ck_assert_str_eq(csv, want);
	ck_assert_ptr_nonnull(strstr(csv, "\ndbench,1,on,,50.0,,,,0.0156,,"
					  "0.5000,,16.0,,24.0,,1\n"));
	free(out);
	free(csv);
	free(want);
	unlink(OUT ".csv");
}
END_TEST

START_TEST(test_fsync_table_usage_errors_exit_2)
{
	int st;
	char *out;

	out = capture("python3 harness/fsync_table.py --zcow dbench 2>&1",
		      &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: --zcow dbench: expected "
			      "WORKLOAD=DIR\n");
	free(out);
	out = capture("python3 harness/fsync_table.py 2>&1", &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: nothing to compare: give "
			      "--kernel and/or --zcow\n");
	free(out);
	out = capture("python3 harness/fsync_table.py --kernel " DATA
		      "/zcow/run-on-1 2>&1", &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: " DATA "/zcow/run-on-1/"
			      "summary.json: no dbench rows (not a summary of "
			      "harness/qemu/vm.sh dbench)\n");
	free(out);
	out = capture("python3 harness/fsync_table.py --zcow fio=" DATA
		      "/kernel 2>&1", &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: " DATA "/kernel/summary.json: "
			      "not a summary of a zcow run of the fs target "
			      "(no fs_fsync / device_bytes_written)\n");
	free(out);
}
END_TEST

Suite *fsync_table_suite(void)
{
	Suite *s = suite_create("fsync_table_suite");
	TCase *tc = tcase_create("table");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_fsync_table_markdown_is_exact);
	tcase_add_test(tc, test_fsync_table_later_kernel_run_replaces_its_keys);
	tcase_add_test(tc, test_fsync_table_csv_is_exact);
	tcase_add_test(tc, test_fsync_table_usage_errors_exit_2);
	suite_add_tcase(s, tc);
	return s;
}
