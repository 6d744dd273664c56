// SPDX-License-Identifier: MIT
/*
 * The VM smoke run as a Check test: boots QEMU with an emulated NVMe ZNS
 * namespace and runs harness/qemu/vm.sh smoke (conformance with passthrough
 * and emulated append, zcow mkfs/mount/dump-super) on the real device.
 * `./run.sh test` sets ZCOW_VM=1 after installing what the VM needs; with
 * ZCOW_VM unset (plain `make test`) or ZCOW_SKIP_VM=1 the test passes and
 * says loudly that the VM smoke did not run, and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests.h"

static void say_skipped(const char *why)
{
	fprintf(stderr,
		"\n"
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
		"!!! VM SMOKE RUN SKIPPED: %s\n"
		"!!! The real-device conformance was NOT checked in this run.\n"
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n",
		why);
}

START_TEST(test_vm_smoke_on_qemu_zns_passes)
{
	const char *vm = getenv("ZCOW_VM");
	const char *skip = getenv("ZCOW_SKIP_VM");
	int st;

	if (skip && strcmp(skip, "1") == 0) {
		say_skipped("ZCOW_SKIP_VM=1");
		return;
	}
	if (!vm || strcmp(vm, "1") != 0) {
		const char *why = getenv("ZCOW_VM_WHY");

		say_skipped(why && *why ? why
					: "ZCOW_VM is not 1 (./run.sh test sets "
					  "it; or run harness/qemu/vm.sh smoke)");
		return;
	}
	fflush(NULL);
	/* vm.sh bounds the boot with its own timeout (240 s for smoke). */
	st = system("harness/qemu/vm.sh smoke >&2");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "harness/qemu/vm.sh smoke failed (status %d): see the "
		      "newest results/*-vm-smoke/guest.log",
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}
END_TEST

Suite *vm_suite(void)
{
	Suite *s = suite_create("vm_suite");
	TCase *tc = tcase_create("qemu");

	/* Boot (~10 s) + smoke (~5 s) under TCG, first static build included;
	 * the runner's own timeout (240 s) fires first. */
	tcase_set_timeout(tc, 420);
	tcase_add_test(tc, test_vm_smoke_on_qemu_zns_passes);
	suite_add_tcase(s, tc);
	return s;
}
