// SPDX-License-Identifier: MIT
/*
 * `zcow conform` on the simulator: the same device-rule checks that the VM
 * smoke run (harness/qemu/scenarios/smoke.sh) makes on a real QEMU NVMe ZNS
 * namespace, on the same geometry, so that the simulator and the kernel +
 * QEMU device are held to one set of expectations.  Runs the zcow binary
 * from $ZCOW_BIN (set by `make test`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests.h"

#define MAX_OUT (64 * 1024)

/* The geometry of the VM smoke run ("# vm:" line of smoke.sh). */
#define SMOKE_SPEC                                                      \
	"sim:zones=32,zone_size=16M,zone_cap=12M,max_open=4,max_active=6," \
	"max_append=64K"

static char out[MAX_OUT];

/* Run `zcow conform SPEC`; returns the exit status, output in out[]. */
static int conform(const char *spec)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[512];
	size_t len = 0, n;
	FILE *p;
	int st;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set: run through `make "
				   "test`");
	snprintf(cmd, sizeof(cmd), "'%s' conform '%s' 2>&1", bin, spec);
	fflush(NULL);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while ((n = fread(out + len, 1, MAX_OUT - 1 - len, p)) > 0)
		len += n;
	out[len] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every "rule" line agreed (or was skipped); returns the rules counted. */
static int nr_agreed_rules(void)
{
	char *line, *save = NULL, *copy = strdup(out);
	int nr = 0;

	ck_assert_ptr_nonnull(copy);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "rule ", 5) != 0)
			continue;
		ck_assert_msg(!strstr(line, " DIFFER"), "%s", line);
		if (strstr(line, ": skipped ("))
			continue;
		ck_assert_msg(strstr(line, " ok"), "%s", line);
		nr++;
	}
	free(copy);
	return nr;
}

START_TEST(test_conform_sim_agrees_on_the_vm_smoke_geometry)
{
	ck_assert_msg(conform(SMOKE_SPEC) == 0, "%s", out);
	ck_assert_int_ge(nr_agreed_rules(), 50);
	ck_assert_msg(strstr(out, " 0 differed, 1 skipped"), "%s", out);
	/* Only the read across a zone end (the kernel splits it). */
	ck_assert_msg(strstr(out, "(1 as documented differences)"), "%s", out);
}
END_TEST

START_TEST(test_conform_sim_zone_end_split_is_the_documented_difference)
{
	ck_assert_msg(conform("sim:zones=16,zone_size=1M,max_open=4,"
			      "max_active=6") == 0,
		      "%s", out);
	nr_agreed_rules();
	ck_assert_msg(strstr(out, "(2 as documented differences)"), "%s", out);
	ck_assert_msg(strstr(out, "rule write_across_zone_end_into_empty_zone_is_split: expected OK,z0=fu+256,z1=oi+1 got EIO,z0=oi+255,z1=em+0 ok (documented difference"),
		      "%s", out);
}
END_TEST

START_TEST(test_conform_sim_without_limits_skips_limit_rules_and_says_so)
{
	ck_assert_msg(conform("sim:zones=8,zone_size=1M,zone_cap=768K") == 0,
		      "%s", out);
	nr_agreed_rules();
	ck_assert_msg(strstr(out, "skipped (max_open = 0 (no open limit))"),
		      "%s", out);
	ck_assert_msg(strstr(out, "skipped (max_active = 0 (no active limit))"),
		      "%s", out);
}
END_TEST

START_TEST(test_conform_equal_limits_agree)
{
	/* max_open = max_active: the active limit wins (EOVERFLOW). */
	ck_assert_msg(conform("sim:zones=24,zone_size=1M,zone_cap=512K,"
			      "max_open=14,max_active=14") == 0,
		      "%s", out);
	nr_agreed_rules();
}
END_TEST

/* A set-up step that fails is its rule's DIFFER line, naming the step; the
 * rule chained to it does not run, the rules after it still do. */
START_TEST(test_conform_failed_setup_differs_and_later_rules_still_run)
{
	ck_assert_int_eq(conform("sim:zones=16,zone_size=1M,max_open=4,"
				 "max_active=6,fail=close:1"), 1);
	ck_assert_msg(strstr(out, "rule write_above_wp_of_closed_stays_closed: "
			     "expected setup:OK got setup:mgmt(c, "
			     "ZDEV_ZONE_CLOSE, 0)=EIO DIFFER\n"), "%s", out);
	ck_assert_msg(!strstr(out, "write_at_wp_of_closed_reopens"), "%s",
		      out);
	ck_assert_msg(strstr(out, "rule write_at_wp_of_explicit_open_stays_"
			     "explicit: expected OK,z0=oe+1 got OK,z0=oe+1 "
			     "ok\n"), "%s", out);
	ck_assert_msg(strstr(out, " 1 differed, 1 skipped"), "%s", out);
}
END_TEST

/* `zcow conform --list`: every rule with where it is stated, no device;
 * a run on the smoke geometry reports each listed rule once. */
START_TEST(test_conform_list_names_every_rule_a_run_reports)
{
	char *list = NULL, *line, *save = NULL;
	int nr = 0;

	ck_assert_int_eq(zcow_test_run(&list, NULL, "conform", "--list",
				       NULL), 0);
	ck_assert_int_eq(conform(SMOKE_SPEC), 0);
	for (line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char want[128];
		const char *colon = strchr(line, ':'), *hit;

		ck_assert_msg(colon && colon[1] == ' ' && colon[2], "%s", line);
		snprintf(want, sizeof(want), "rule %.*s: ", (int)(colon - line),
			 line);
		hit = strstr(out, want);
		ck_assert_msg(hit, "'%s' not reported", want);
		ck_assert_msg(!strstr(hit + 1, want), "'%s' twice", want);
		nr++;
	}
	/* 58 rules and 1 skipped on this geometry. */
	ck_assert_int_eq(nr, 59);
	free(list);
}
END_TEST

Suite *conform_suite(void)
{
	Suite *s = suite_create("conform_suite");
	TCase *tc = tcase_create("sim");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_conform_sim_agrees_on_the_vm_smoke_geometry);
	tcase_add_test(tc,
		       test_conform_sim_zone_end_split_is_the_documented_difference);
	tcase_add_test(tc,
		       test_conform_sim_without_limits_skips_limit_rules_and_says_so);
	tcase_add_test(tc, test_conform_equal_limits_agree);
	tcase_add_test(tc,
		       test_conform_failed_setup_differs_and_later_rules_still_run);
	tcase_add_test(tc, test_conform_list_names_every_rule_a_run_reports);
	suite_add_tcase(s, tc);
	return s;
}
