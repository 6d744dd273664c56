// SPDX-License-Identifier: MIT
/*
 * harness/fsync_table.py, the kernel's btrfs zoned beside zcow under fsync
 * load (docs/vm.md, docs/timing.md): from the small summaries in
 * tests/data/fsync-table/ (a VM dbench summary with two pairs of dbench
 * runs, one fio pair and a failed run; four zcow run summaries, one on
 * the smr profile; a reference file of per-fsync figures) it writes the
 * exact table, and refuses bad arguments with exit status 2 and a
 * message naming the file and line.
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
#define REF "--kernel " DATA "/reference.csv "
#define HEAD "source,workload,clients,treelog,throughput,on_off,commits," \
	     "flushes,metadata_kib,device_kib,log_kib\n"
#define OUT "/tmp/zcow-test-fsync-table"
#define T_CSV OUT "-ref.csv"

/*
 * The sums over each key's runs: dbench 8 with the tree-log (two runs,
 * 2000 fsyncs, 16 commits, 300 flushes) is 0.0080 commits and 0.1500
 * flushes per fsync; without it 1540 commits over 1500 fsyncs, 1.0267;
 * throughput 21 / 14 = 1.50.  The fio pair is 4.00 on/off, its failed run
 * is left out.  zcow's 8-job runs on zn540: 1 / 1024 and 128 / 1024
 * commits, 28.1 and 18.0 KiB of superblocks + trees + log per fsync, of
 * which 26.0 and 0.0 KiB tree-log (the VM run has no log figure), each
 * beside the kernel's, with the counts more than 25% off; the smr run has
 * a row of its own beside the same kernel figures, and no on/off (no
 * smr run without the log).
 */
START_TEST(test_fsync_table_markdown_is_exact)
{
	int st;
	char *out = zcow_test_capture(TABLE, &st);
	char *want = zcow_test_read_path(DATA "/expected.md");

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out, want);
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | on | zn540 | 21.0 | 200.0 | 1.50 | 0.80 | "
		"0.0080 | 0.0010 | 0.1500 | 0.2500 | 20.0 | 28.1 |  | 26.0 | "
		"300.0 | 36.1 | 2 | 1 | "
		"commits -88%, flushes +67%, metadata +40% |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | off | zn540 | 14.0 | 250.0 | 1.50 | 0.80 | "
		"1.0267 | 0.1250 | 1.0267 | 0.2500 | 194.7 | 18.0 |  | 0.0 | "
		"304.7 | 26.0 | 2 | 1 | "
		"commits -88%, flushes -76%, metadata -91% |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | on | smr | 21.0 | 4.0 | 1.50 |  | 0.0080 | "
		"0.0020 | 0.1500 | 0.0625 | 20.0 | 8.4 |  | 8.0 | 300.0 | "
		"16.4 | 2 | 1 | commits -76%, flushes -58%, metadata -58% |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 32 | off |  | 200.0 |  | 4.00 |  | 0.9000 |  | "
		"0.9000 |  | 100.0 |  |  |  | 104.0 |  | 1 |  |  |"));
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
	char *out = zcow_test_capture(TABLE " --kernel " DATA "/kernel", &st);

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | off | zn540 | 14.0 | 250.0 | 1.50 | 0.80 | "
		"1.0267 | 0.1250 | 1.0267 | 0.2500 | 194.7 | 18.0 |  | 0.0 | "
		"304.7 | 26.0 | 2 | 1 |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 32 | on |  | 800.0 |  | 4.00 |  | 0.0010 |  | "
		"0.1000 |  | 8.0 |  |  |  | 12.0 |  | 1 |  |  |"));
	free(out);
}
END_TEST

START_TEST(test_fsync_table_csv_is_exact)
{
	int st;
	char *out = zcow_test_capture("rm -f " OUT ".csv && " TABLE " --csv "
				      OUT ".csv", &st);
	char *csv, *want;

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out, "");
	csv = zcow_test_read_path(OUT ".csv");
	want = zcow_test_read_path(DATA "/expected.csv");
	ck_assert_str_eq(csv, want);
	ck_assert_ptr_nonnull(strstr(csv, "\ndbench,1,on,zn540,,50.0,,,,0.0156,,"
					  "0.5000,,16.0,,8.0,,24.0,,1,\n"));
	ck_assert_ptr_nonnull(strstr(csv, ",2,1,\"commits -88%, flushes -76%, "
					  "metadata -91%\"\n"));
	free(out);
	free(csv);
	free(want);
	unlink(OUT ".csv");
}
END_TEST

/*
 * A reference file (tests/data/fsync-table/reference.csv): comment lines
 * skipped, the two sources of dbench 8 with the tree-log merged into
 * ranges (throughput 20-22 and 19: 19.0-22.0; an empty device figure
 * keeps the other's 280; log 15 and 17-19: 15.0-19.0), and zcow held to
 * the nearer end of each range: 1 / 1024 commits against 0.006-0.01 is
 * 84% below, 0.25 flushes against 0.1-0.21 only 19% above, 26.0 KiB of
 * log against 15-19 37% above.
 */
START_TEST(test_fsync_table_reference_rows_make_ranges)
{
	int st;
	char *out = zcow_test_capture("python3 harness/fsync_table.py " REF
				      "--zcow dbench=" DATA "/zcow", &st);
	char *want = zcow_test_read_path(DATA "/expected-reference.md");

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out, want);
	ck_assert_ptr_nonnull(strstr(out, "kernel: reference " DATA
					  "/reference.csv\n"));
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | on | zn540 | 19.0-22.0 | 200.0 | 1.40-1.60 | "
		"0.80 | 0.0060-0.0100 | 0.0010 | 0.1000-0.2100 | 0.2500 | "
		"18.0-24.0 | 28.1 | 15.0-19.0 | 26.0 | 280.0 | 36.1 | 2 | 1 | "
		"commits -84%, log +37% |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 1 | on |  | 50.0 |  |  |  | 0.0020 |  | 1.0000 |  | "
		"60.0 |  |  |  | 64.0 |  | 1 |  |  |"));
	free(out);
	free(want);
}
END_TEST

/* A VM run after the reference file replaces the reference's figures of
 * the workloads and client counts it has (dbench 8, fio 32); fio 1 stays
 * the reference's. */
START_TEST(test_fsync_table_vm_run_replaces_reference_rows)
{
	int st;
	char *out = zcow_test_capture("python3 harness/fsync_table.py " REF
				      "--kernel " DATA "/kernel --zcow dbench="
				      DATA "/zcow", &st);
	char *want = zcow_test_read_path(DATA "/expected-replaced.md");

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out, want);
	ck_assert_ptr_nonnull(strstr(out,
		"| dbench | 8 | on | zn540 | 21.0 | 200.0 | 1.50 |"));
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 1 | on |  | 50.0 |  |  |  | 0.0020 |"));
	free(out);
	free(want);
}
END_TEST

/* The checked-in reference (configs/kernel-fsync-anchors.csv) reads:
 * fio 32 without the log spans the note's 0.84-0.94 and both VM runs'
 * 0.902 and 0.82 commits per fsync. */
START_TEST(test_fsync_table_checked_in_reference_reads)
{
	int st;
	char *out = zcow_test_capture("python3 harness/fsync_table.py --kernel "
				      "configs/kernel-fsync-anchors.csv", &st);

	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_ptr_nonnull(strstr(out,
		"| fio | 32 | off |  | 41.4-204.0 |  | 2.46-11.00 |  | "
		"0.8200-0.9400 |  | 0.8200-0.9400 |  | 98.7-111.0 |  |  |  | "
		"102.9-115.0 |  | 3 |  |  |"));
	ck_assert_ptr_nonnull(strstr(out, "| dbench | 1 | off |  | "));
	free(out);
}
END_TEST

/* A reference file's errors name the file and line; each exits 2. */
START_TEST(test_fsync_table_reference_errors_name_file_line)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "# only a comment\n", ": no header line" },
		{ "source,workload\n", ":1: header must be source,workload,"
		  "clients,treelog,throughput,on_off,commits,flushes,"
		  "metadata_kib,device_kib,log_kib" },
		{ "#c\n" HEAD "a,fio,1,on,1,1,x,1,1,1,\n",
		  ":3: commits: 'x' is not a number or a range LO-HI" },
		{ HEAD "a,fio,1,on,1,1,0.5-0.2,1,1,1,\n",
		  ":2: commits: range '0.5-0.2' runs backwards" },
		{ HEAD "a,fio,1,maybe,1,1,1,1,1,1,\n",
		  ":2: treelog 'maybe' is not on or off" },
		{ HEAD "a,fio,one,on,1,1,1,1,1,1,\n",
		  ":2: clients 'one' is not a number" },
		{ HEAD "a,fio,1,on,1\n", ":2: 5 fields, expected 11" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(T_CSV, "w");
		char want[512], *out;
		int st;

		ck_assert_msg(f != NULL, "cannot write " T_CSV);
		fputs(cases[i].text, f);
		fclose(f);
		out = zcow_test_capture("python3 harness/fsync_table.py "
					"--kernel " T_CSV " 2>&1", &st);
		snprintf(want, sizeof(want), "fsync_table.py: " T_CSV "%s\n",
			 cases[i].msg);
		ck_assert_int_eq(st, 2);
		ck_assert_str_eq(out, want);
		free(out);
	}
	unlink(T_CSV);
}
END_TEST

START_TEST(test_fsync_table_usage_errors_exit_2)
{
	int st;
	char *out;

	out = zcow_test_capture("python3 harness/fsync_table.py --zcow dbench "
				"2>&1", &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: --zcow dbench: expected "
			      "WORKLOAD=DIR\n");
	free(out);
	out = zcow_test_capture("python3 harness/fsync_table.py 2>&1", &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: nothing to compare: give "
			      "--kernel and/or --zcow\n");
	free(out);
	out = zcow_test_capture("python3 harness/fsync_table.py --kernel " DATA
				"/zcow/run-on-1 2>&1", &st);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(out, "fsync_table.py: " DATA "/zcow/run-on-1/"
			      "summary.json: no dbench rows (not a summary of "
			      "harness/qemu/vm.sh dbench)\n");
	free(out);
	out = zcow_test_capture("python3 harness/fsync_table.py --zcow fio="
				DATA "/kernel 2>&1", &st);
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
	tcase_add_test(tc, test_fsync_table_reference_rows_make_ranges);
	tcase_add_test(tc, test_fsync_table_vm_run_replaces_reference_rows);
	tcase_add_test(tc, test_fsync_table_checked_in_reference_reads);
	tcase_add_test(tc, test_fsync_table_reference_errors_name_file_line);
	tcase_add_test(tc, test_fsync_table_usage_errors_exit_2);
	suite_add_tcase(s, tc);
	return s;
}
