// SPDX-License-Identifier: MIT
/*
 * zcow bench-commits and zcow bench-refill (docs/reclaim-experiments-small.md):
 * the small commits on 1 GiB of 4 MiB zones pass the point where a commit
 * used to fail (its delayed references never settled), fill/delete/refill
 * refills all it freed and every ENOSPC passes the space check, and
 * usage errors exit 2.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define DEV_1G "sim:zones=256,zone_size=4M,max_open=14,max_active=14"

/* 9,300 {empty file, full commit}: the commit of generation 9294 used to
 * fail with EUCLEAN; every commit succeeds and the checker is clean.  A
 * group emptied by a commit goes with that commit: no commit more than
 * the 9,300 and the final one. */
START_TEST(test_gcbench_commits_pass_9300)
{
	char *out = NULL, *err = NULL;
	int st = zcow_test_run(&out, &err, "bench-commits", "--ops", "9300",
			       "--every", "9300", "--check", DEV_1G, NULL);

	ck_assert_msg(st == 0, "exit %d\n%s%s", st, out, err);
	ck_assert_msg(strstr(out, "completed 9300 of 9300 ops") != NULL, "%s",
		      out);
	ck_assert_msg(strstr(out, "commits 9301;") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "check: 0 problems") != NULL, "%s", out);
	free(out);
	free(err);
}
END_TEST

/* 32 zones of 4 MiB, 256 KiB files: the first fill holds 352 files (88
 * MiB), each refill takes back all the 176 freed, ENOSPC is justified. */
START_TEST(test_gcbench_refill_refills_what_it_freed)
{
	char *out = NULL, *err = NULL;
	int st = zcow_test_run(&out, &err, "bench-refill", "--rounds", "2",
			       "--check",
			       "sim:zones=32,zone_size=4M,max_active=14", NULL);

	ck_assert_msg(st == 0, "exit %d\n%s%s", st, out, err);
	ck_assert_msg(strstr(out, "round 0: deleted 0 files (0.0 MiB), filled "
				  "352 files (88.0 MiB") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "round 2: deleted 176 files (44.0 MiB), "
				  "filled 176 files (44.0 MiB, 100.0%") != NULL,
		      "%s", out);
	ck_assert_msg(strstr(out, "completed 2 rounds") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "ENOSPC justified in every round") != NULL,
		      "%s", out);
	ck_assert_msg(strstr(out, "check: 0 problems") != NULL, "%s", out);
	free(out);
	free(err);
}
END_TEST

/*
 * The same fill/delete/refill, five rounds, at max_active 8 and 6 with
 * the tree-log on and off: data, the tree-log, relocation and the
 * commits share the few active zones, no round stops with room left
 * (--check fails on that), nothing fails with EOVERFLOW or EIO.  At 6,
 * sizing a victim's relocation room used to finish the relocation group
 * with half its room left, for the active zone a next group would need:
 * every victim's copies went into a zone finished half empty, itself the
 * next victim, and rounds stopped with 30 MiB left.
 */
static const struct {
	const char *dev, *treelog;
} refill_runs[] = {
	{ "sim:zones=32,zone_size=4M,max_open=8,max_active=8", "treelog=on" },
	{ "sim:zones=32,zone_size=4M,max_open=8,max_active=8", "treelog=off" },
	{ "sim:zones=32,zone_size=4M,max_open=6,max_active=6", "treelog=on" },
	{ "sim:zones=32,zone_size=4M,max_open=6,max_active=6", "treelog=off" },
};

START_TEST(test_gcbench_refill_in_few_active_zones_never_stops_early)
{
	char *out = NULL, *err = NULL;
	int st = zcow_test_run(&out, &err, "bench-refill", "--rounds", "5",
			       "--check", "--file-size", "256K", "-o",
			       refill_runs[_i].treelog, refill_runs[_i].dev,
			       NULL);

	ck_assert_msg(st == 0, "%s %s: exit %d\n%s%s", refill_runs[_i].dev,
		      refill_runs[_i].treelog, st, out, err);
	ck_assert_msg(strstr(out, "completed 5 rounds") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "ENOSPC justified in every round") != NULL,
		      "%s", out);
	ck_assert_msg(strstr(out, "check: 0 problems") != NULL, "%s", out);
	ck_assert_msg(strstr(err, "room left") == NULL, "%s", err);
	ck_assert_msg(strstr(err, "failed") == NULL, "%s", err);
	free(out);
	free(err);
}
END_TEST

START_TEST(test_gcbench_usage_errors_exit_2)
{
	char *err = NULL;

	ck_assert_int_eq(zcow_test_run(NULL, &err, "bench-commits", "--size",
				       "5", DEV_1G, NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "--size 5"));
	free(err);
	err = NULL;
	ck_assert_int_eq(zcow_test_run(NULL, &err, "bench-refill", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "no device given"));
	free(err);
	ck_assert_int_eq(zcow_test_run(NULL, NULL, "bench-commits", "--help",
				       NULL), 0);
}
END_TEST

Suite *gcbench_suite(void)
{
	Suite *s = suite_create("gcbench_suite");
	TCase *tc = tcase_create("gcbench");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_gcbench_commits_pass_9300);
	tcase_add_test(tc, test_gcbench_refill_refills_what_it_freed);
	tcase_add_loop_test(tc,
			    test_gcbench_refill_in_few_active_zones_never_stops_early,
			    0, sizeof(refill_runs) / sizeof(refill_runs[0]));
	tcase_add_test(tc, test_gcbench_usage_errors_exit_2);
	suite_add_tcase(s, tc);
	return s;
}
