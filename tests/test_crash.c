// SPDX-License-Identifier: MIT
/*
 * Crash-consistency campaigns (harness/crash.h, docs/crash.md): the quick
 * variant of every configs/crash-*.scenario runs clean, and each
 * test-only ordering mutation of core/ (zcow_fault_mutation) is caught by
 * the campaign that targets it.
 */
#include <stdio.h>

#include "crash.h"
#include "tests.h"
#include "zcow.h"

static struct zcrash_summary run(const char *name, int mutation)
{
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .no_results = true };
	struct zcrash_summary sum;
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "configs/crash-%s.scenario", name);
	zcow_fault_mutation = mutation;
	ret = zcrash_run(path, &o, &sum);
	zcow_fault_mutation = 0;
	ck_assert_int_ge(ret, 0);
	ck_assert_uint_gt(sum.tried, 0);
	if (sum.violations)
		fprintf(stderr, "%s mutation %d: %llu of %llu states violate (mount %llu, check %llu, gen %llu, acked %llu, atomic %llu, device %llu); first repro: %s\n",
			name, mutation, (unsigned long long)sum.violations,
			(unsigned long long)sum.tried,
			(unsigned long long)sum.by_oracle[ZCRASH_MOUNT],
			(unsigned long long)sum.by_oracle[ZCRASH_CHECK],
			(unsigned long long)sum.by_oracle[ZCRASH_GEN],
			(unsigned long long)sum.by_oracle[ZCRASH_ACKED],
			(unsigned long long)sum.by_oracle[ZCRASH_ATOMIC],
			(unsigned long long)sum.by_oracle[ZCRASH_DEVICE],
			sum.first_repro);
	return sum;
}

START_TEST(test_quick_clean)
{
	static const char *const names[] = { "sblog", "commit", "fsync", "reset" };
	struct zcrash_summary s = run(names[_i], 0);

	ck_assert_uint_eq(s.violations, 0);
	ck_assert_uint_eq(s.passed, s.tried);
}
END_TEST

START_TEST(test_mutation_reset_caught)
{
	struct zcrash_summary s = run("reset", ZCOW_MUT_RESET_BEFORE_COMMIT);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

START_TEST(test_mutation_sb_flush_caught)
{
	struct zcrash_summary s = run("commit", ZCOW_MUT_SB_BEFORE_FLUSH);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

START_TEST(test_repro_line)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
		.repro = "configs/crash-commit.scenario quick w=0 cut=persist=5 loss=drop seed=1" };
	struct zcrash_summary sum;
	char line[512];

	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	zcow_fault_mutation = ZCOW_MUT_SB_BEFORE_FLUSH;
	o.repro = NULL;
	o.quick = true;
	ck_assert_int_eq(zcrash_run("configs/crash-commit.scenario", &o, &sum), 1);
	snprintf(line, sizeof(line), "%s", sum.first_repro);
	o.repro = line;
	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 1);
	ck_assert_uint_eq(sum.tried, 1);
	zcow_fault_mutation = 0;
}
END_TEST

Suite *crash_suite(void)
{
	Suite *s = suite_create("crash_suite");
	TCase *tc = tcase_create("campaigns");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_quick_clean, 0, 4);
	tcase_add_test(tc, test_mutation_reset_caught);
	tcase_add_test(tc, test_mutation_sb_flush_caught);
	tcase_add_test(tc, test_repro_line);
	suite_add_tcase(s, tc);
	return s;
}
