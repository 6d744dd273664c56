// SPDX-License-Identifier: MIT
/*
 * The test runner: every tests/test_<module>.c exports one suite function;
 * they are linked weakly so a module's suite can be added without touching
 * the others.  CK_FORK is on (each test in its own process) unless the
 * environment says CK_FORK=no.  The last line printed is Check's summary.
 */
#include <check.h>
#include <stdlib.h>

#include "zlog.h"
#include "zsim.h"
#include "tests.h"

#define SUITE(name) Suite *name(void) __attribute__((weak));
ZCOW_TEST_SUITES
#undef SUITE

int main(void)
{
	Suite *(*const suites[])(void) = {
#define SUITE(name) name,
		ZCOW_TEST_SUITES
#undef SUITE
	};
	SRunner *sr = NULL;
	unsigned int i;
	int failed;

	zdev_register_backend(&zsim_backend);
	/* Tests provoke errors on purpose; ZCOW_TEST_VERBOSE=1 shows them. */
	zlog_set_level(getenv("ZCOW_TEST_VERBOSE") ? ZLOG_DEBUG : ZLOG_SILENT);
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (!suites[i])
			continue;
		if (!sr)
			sr = srunner_create(suites[i]());
		else
			srunner_add_suite(sr, suites[i]());
	}
	if (!sr)
		return EXIT_FAILURE;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
