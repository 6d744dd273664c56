// SPDX-License-Identifier: MIT
/*
 * harness/sweep.py's engines (docs/cluster.md) through
 * tests/sweep-engines.sh: GNU parallel and a one-node Slurm cluster on
 * localhost give the same result folders as the local engine, and a
 * crash campaign run as 4 shards (harness/campaign.py) on each engine,
 * merged, is the whole campaign.  When the
 * cluster cannot start here the Slurm test passes and says loudly that
 * it did not run, and why (the script's message and the daemons' logs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests.h"

#define DIR_T "/tmp/zcow-test-sweep-dir"

static void run_script(const char *mode)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[1024], *out;
	int st;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set: run through make "
				   "test");
	snprintf(cmd, sizeof(cmd), "tests/sweep-engines.sh '%s' %s", bin,
		 mode);
	fflush(NULL);
	out = zcow_test_capture(cmd, &st);
	if (st == 77) {
		fprintf(stderr,
			"\n"
			"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
			"!!! SLURM SWEEP TEST SKIPPED: the one-node cluster did not\n"
			"!!! start here (the reason and the daemons' logs above).\n"
			"!!! sweep.py --engine slurm was NOT checked in this run.\n"
			"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n");
		free(out);
		return;
	}
	ck_assert_msg(st == 0, "%s: status %d (its stderr above)", cmd, st);
	ck_assert_str_eq(out, "ok\n");
	free(out);
}

/* zcow run --dir: that folder itself, never one that exists, and not
 * with --results. */
START_TEST(test_run_dir_is_the_folder_itself)
{
	char *out, *err;
	struct stat st;

	ck_assert_int_eq(system("rm -rf " DIR_T), 0);
	ck_assert_int_eq(zcow_test_run(&out, &err, "run",
				       "configs/raw-randwrite-4k.scenario",
				       "--set", "runtime=1ms", "--dir", DIR_T,
				       "--quiet", NULL), 0);
	ck_assert_str_eq(out, DIR_T "\n");
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(stat(DIR_T "/summary.json", &st), 0);
	free(out);
	free(err);
	ck_assert_int_eq(zcow_test_run(&out, &err, "run",
				       "configs/raw-randwrite-4k.scenario",
				       "--set", "runtime=1ms", "--dir", DIR_T,
				       "--quiet", NULL), 1);
	ck_assert_str_eq(out, "");
	ck_assert_str_eq(err, "zcow run: cannot create the results folder '"
			      DIR_T "': File exists\n");
	free(out);
	free(err);
	ck_assert_int_eq(zcow_test_run(&out, &err, "run",
				       "configs/raw-randwrite-4k.scenario",
				       "--dir", DIR_T "/x", "--results", DIR_T,
				       NULL), 2);
	ck_assert_str_eq(out, "");
	ck_assert_str_eq(err, "zcow run: --results and --dir: give one\n");
	ck_assert_int_eq(access(DIR_T "/x", F_OK), -1);
	free(out);
	free(err);
	ck_assert_int_eq(system("rm -rf " DIR_T), 0);
}
END_TEST

/* A 4-point sweep with -j2: the local run's folders, summaries (wall
 * clock aside) and plot tables; a rerun redoes only the incomplete
 * points; failing points fail it.  crash-ops-atomic --quick as 4 shards,
 * here and with -j2, merged: the whole run's crash.csv and crash.json. */
START_TEST(test_sweep_parallel_equals_local)
{
	run_script("parallel");
}
END_TEST

/* The same sweep as one Slurm array job of 4 tasks on a real slurmctld
 * and slurmd (munge authentication), collected by a rerun and compared;
 * resumed with --wait; failing tasks; the 4 shards as one array job. */
START_TEST(test_sweep_slurm_array_equals_local)
{
	run_script("slurm");
}
END_TEST

Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep_suite");
	TCase *tc = tcase_create("engines");

	/* parallel ~4 s; slurm ~25 s */
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_run_dir_is_the_folder_itself);
	tcase_add_test(tc, test_sweep_parallel_equals_local);
	tcase_add_test(tc, test_sweep_slurm_array_equals_local);
	suite_add_tcase(s, tc);
	return s;
}
