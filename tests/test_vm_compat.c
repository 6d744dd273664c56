// SPDX-License-Identifier: MIT
/*
 * The compat VM scenario (harness/qemu/scenarios/compat.sh, docs/vm.md)
 * without the VM: the guest script parses as a POSIX shell script, holds
 * every step of the kernel / zcow round trips in their order with its
 * geometry line, and summarize.py turns the steps a guest archived into
 * compat.md and summary.json's `compat` member (pass, fail, not run).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

#define SCRIPT "harness/qemu/scenarios/compat.sh"

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_compat_script_parses_and_has_every_step_in_order)
{
	static const char want[] =
		"zcow-mkfs\nzcow-write\nzcow-read\nzcow-check\n"
		"btrfs-check\nkernel-mount\nkernel-read\nkernel-write\n"
		"kernel-umount\nzcow-read-kernel\nzcow-check-after\n"
		"btrfs-check-after\nzcow-write-after\nkernel-read-again\n"
		"zcow-snapshot\nzcow-write-after-snapshot\n"
		"zcow-check-snapshot\nbtrfs-check-snapshot\n"
		"kernel-snapshot\nzcow-read-kernel-snapshot\n"
		"zcow-delete-snapshot\nzcow-check-after-delete\n"
		"btrfs-check-after-delete\nkernel-after-delete\n"
		"zcow-writable-snapshot\nkernel-writable-snapshot\n"
		"zcow-read-kernel-write\nzcow-check-writable\n"
		"btrfs-check-writable\n"
		"progs-mkfs\nprogs-kernel-write\nprogs-zcow-read\n"
		"progs-zcow-refuses-write\nprogs-zcow-check\n"
		"progs-btrfs-check\n"
		"lean-mkfs\nlean-kernel-write\nlean-zcow-read\n"
		"lean-zcow-write\nlean-zcow-write-inline\n"
		"lean-zcow-check\nlean-btrfs-check\n"
		"lean-kernel-read\n"
		"seed-mkfs\nseed-zcow-write\nseed-kernel-refuses\n"
		"seed-zcow-read\nseed-btrfs-check\n";
	char *out;
	int st;

	out = zcow_test_capture("sh -n " SCRIPT " 2>&1", &st);
	ck_assert_msg(st == 0, "sh -n " SCRIPT ": exit %d\n%s", st, out);
	ck_assert_str_eq(out, "");
	free(out);
	out = zcow_test_capture("sed -n 's/^cstep \\([a-z0-9-]*\\) .*/\\1/p' "
				SCRIPT, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(out, want);
	free(out);
	out = zcow_test_capture("sed -n 's/^# vm: //p' " SCRIPT, &st);
	ck_assert_str_eq(out, "zones=64 zone_size=64M zone_cap=64M "
			      "max_open=14 max_active=14 zasl=0 timeout=600\n");
	free(out);
	/* every step records its description (cstep), the kernel's
	 * failures the end of dmesg */
	out = zcow_test_capture("grep -c '^	with_dmesg ' " SCRIPT, &st);
	ck_assert_str_eq(out, "11\n");
	free(out);
}
END_TEST

/*
 * Three steps described, two ran (one passed, one failed with rc 1),
 * one never ran: the table says so, the failed step's output follows it,
 * and summary.json's compat member counts 1 of 3.
 */
START_TEST(test_compat_summary_tables_pass_fail_and_not_run)
{
	char dir[] = "/tmp/zcow-vm-compat-XXXXXX", guest[512], cmd[2048];
	char *out, *md;
	int st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(guest, sizeof(guest), "%s/guest", dir);
	ck_assert_int_eq(mkdir(guest, 0755), 0);
	write_file(guest, "compat-steps.txt",
		   "zcow-mkfs\tzcow mkfs --sb-placement kernel\n"
		   "kernel-mount\tmount -t btrfs (zcow's file system)\n"
		   "kernel-read\tkernel reads zcow's files\n");
	write_file(guest, "steps.txt",
		   "zcow-mkfs 0 0.25\nkernel-mount 32 1.50\n");
	write_file(guest, "zcow-mkfs.txt", "mkfs done\n");
	write_file(guest, "kernel-mount.txt",
		   "mount: mounting /dev/nvme0n1 on /mnt failed\n"
		   "--- rc=32; dmesg (last 60 lines):\n"
		   "BTRFS error (device nvme0n1): open_ctree failed\n");
	write_file(guest, "compat-setup.txt", "kernel=6.1.0-57-amd64\n");
	snprintf(cmd, sizeof(cmd),
		 "python3 harness/qemu/summarize.py %s --scenario compat "
		 "--status fail --t0 0 --t1 1 >/dev/null && python3 -c "
		 "\"import json; c = json.load(open('%s/summary.json'))"
		 "['compat']; print(c['passed'], c['steps'], c['setup']"
		 "['kernel'], [(r['step'], r['status'], r['rc']) for r in "
		 "c['rows']], c['rows'][1]['output_file'])\"",
		 dir, dir);
	out = zcow_test_capture(cmd, &st);
	ck_assert_msg(st == 0, "exit %d\n%s", st, out);
	ck_assert_str_eq(out,
		"1 3 6.1.0-57-amd64 [('zcow-mkfs', 'pass', 0), "
		"('kernel-mount', 'fail', 32), ('kernel-read', 'not run', "
		"None)] guest/kernel-mount.txt\n");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/compat.md", dir);
	md = zcow_test_read_path(cmd);
	ck_assert_str_eq(md,
		"| step | what | result | seconds |\n"
		"|---|---|---|---|\n"
		"| zcow-mkfs | zcow mkfs --sb-placement kernel | pass | 0.25 |\n"
		"| kernel-mount | mount -t btrfs (zcow's file system) | "
		"fail (rc 32) | 1.50 |\n"
		"| kernel-read | kernel reads zcow's files | not run |  |\n"
		"\n"
		"1 of 3 steps pass.\n"
		"\n"
		"### kernel-mount: output (end)\n"
		"\n"
		"```\n"
		"mount: mounting /dev/nvme0n1 on /mnt failed\n"
		"--- rc=32; dmesg (last 60 lines):\n"
		"BTRFS error (device nvme0n1): open_ctree failed\n"
		"```\n");
	free(md);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *vm_compat_suite(void)
{
	Suite *s = suite_create("vm_compat_suite");
	TCase *tc = tcase_create("script");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_compat_script_parses_and_has_every_step_in_order);
	tcase_add_test(tc, test_compat_summary_tables_pass_fail_and_not_run);
	suite_add_tcase(s, tc);
	return s;
}
