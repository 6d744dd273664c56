// SPDX-License-Identifier: MIT
/*
 * The zcow tool on a file system of several devices, as a user runs it:
 * the binary from $ZCOW_BIN in a child process, on sim: images in a fresh
 * directory, named by device lists (SPEC+SPEC, docs/device-spec.md,
 * "Several devices"); exit status, stdout and stderr checked exactly
 * where the tool promises a format.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"


static struct zcow_test_res res;
static char dir[64];

/* Run zcow with the NULL-terminated arguments; fills res. */
#define run_zcow(...) zcow_test_run_res(&res, __VA_ARGS__)

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/zcow-cli-devs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* "sim:image=DIR/NAME.img" and @geometry (may be ""), in a static buffer
 * of @slot (0..3). */
static const char *img(unsigned int slot, const char *name,
		       const char *geometry)
{
	static char buf[4][128];

	snprintf(buf[slot], sizeof(buf[slot]), "sim:image=%s/%s.img%s", dir,
		 name, geometry);
	return buf[slot];
}

#define GEO ",zones=32,zone_size=4M"

/* A file system made by mkfs on a.img and b.img (32 zones of 4 MiB). */
static void mkfs_two(void)
{
	run_zcow("mkfs", img(0, "a", GEO), img(1, "b", GEO), "--seed", "7",
		 NULL);
	ck_assert_msg(res.status == 0, "mkfs: %d %s", res.status, res.err);
}

/* Byte @i of the test file: text without NULs, so that the tool's
 * stdout compares as a string; no two 4 KiB blocks alike. */
static char pattern(size_t i)
{
	return (char)('!' + (i * 131 + i / 4096) % 94);
}

/* @n bytes of pattern() into the local file DIR/@name; returns its path. */
static const char *local_file(const char *name, size_t n)
{
	static char path[128];
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(fputc(pattern(i), f), EOF);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

START_TEST(test_cli_mkfs_on_two_devices_names_the_list_and_both_mount)
{
	char want[1024], list[512];

	mkfs_two();
	snprintf(want, sizeof(want), "zcow mkfs: %s+%s: fsid ",
		 img(0, "a", GEO), img(1, "b", GEO));
	ck_assert_msg(!strncmp(res.out, want, strlen(want)), "got: %s",
		      res.out);
	ck_assert_ptr_nonnull(strstr(res.out, ", generation 1, nodesize "
					      "16384, sb placement seed, "
					      "seed 7\n"));
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("mount", list, NULL);
	ck_assert_msg(res.status == 0, "mount: %s", res.err);
	snprintf(want, sizeof(want), "mounted %s: generation 1 ", list);
	ck_assert_msg(!strncmp(res.out, want, strlen(want)), "got: %s",
		      res.out);
	run_zcow("check", list, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	ck_assert_ptr_nonnull(strstr(res.out, "no problems found\n"));
}
END_TEST

START_TEST(test_cli_mkfs_takes_one_plus_list_as_several_positionals)
{
	char list[512];

	snprintf(list, sizeof(list), "%s+%s", img(0, "a", GEO),
		 img(1, "b", GEO));
	run_zcow("mkfs", list, "--seed", "7", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	snprintf(list, sizeof(list), "%s+%s", img(0, "b", ""),
		 img(1, "a", ""));
	run_zcow("mount", "--read-only", list, NULL);
	ck_assert_msg(res.status == 0, "mount: %s", res.err);
}
END_TEST

START_TEST(test_cli_put_then_cat_on_two_devices_is_byte_exact)
{
	const size_t n = 3 * 1024 * 1024 + 123;	/* past one data group */
	const char *local = local_file("in", n);
	char list[512], *out, *err;
	size_t i;
	int status;

	mkfs_two();
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("put", list, local, "/f", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	ck_assert_str_eq(res.out, "");
	/* any order names the same file system */
	snprintf(list, sizeof(list), "%s+%s", img(0, "b", ""),
		 img(1, "a", ""));
	status = zcow_test_run(&out, &err, "cat", list, "/f", NULL);
	ck_assert_msg(status == 0, "cat: %d %s", status, err);
	ck_assert_uint_eq(strlen(out), n);
	for (i = 0; i < n; i++)
		if (out[i] != pattern(i))
			ck_abort_msg("cat: byte %zu differs", i);
	free(out);
	free(err);
}
END_TEST

START_TEST(test_cli_missing_device_fails_naming_its_devid)
{
	char want[512];

	mkfs_two();
	run_zcow("cat", img(0, "a", ""), "/x", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	snprintf(want, sizeof(want),
		 "zcow cat: the file system has 2 devices; missing: devid 2 "
		 "(given: devid 1 %s)\n", img(0, "a", ""));
	ck_assert_msg(strstr(res.err, want), "stderr: %s", res.err);
	snprintf(want, sizeof(want), "zcow cat: mount %s: %s\n",
		 img(0, "a", ""), strerror(ENODEV));
	ck_assert_msg(strstr(res.err, want), "stderr: %s", res.err);

	run_zcow("df", img(0, "b", ""), NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(strstr(res.err, "missing: devid 1 "), "stderr: %s",
		      res.err);
}
END_TEST

START_TEST(test_cli_mkfs_refuses_mismatched_zone_sizes_naming_both)
{
	run_zcow("mkfs", img(0, "a", GEO), img(1, "b", ",zones=16,zone_size=8M"),
		 "--seed", "1", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	ck_assert_msg(strstr(res.err, "has 4194304-byte zones"), "stderr: %s",
		      res.err);
	ck_assert_msg(strstr(res.err, "has 8388608-byte zones"), "stderr: %s",
		      res.err);
	ck_assert_msg(strstr(res.err, strerror(EINVAL)), "stderr: %s",
		      res.err);
}
END_TEST

START_TEST(test_cli_raw_device_commands_refuse_a_list_naming_themselves)
{
	static const char *const cmds[] = { "zones", "dump-super", "conform" };
	char list[512], want[1024];
	unsigned int i;

	mkfs_two();
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		run_zcow(cmds[i], list, NULL);
		ck_assert_int_eq(res.status, 2);
		ck_assert_str_eq(res.out, "");
		snprintf(want, sizeof(want),
			 "zcow %s: '%s' is a list of devices; %s works on one "
			 "device: give one spec\n", cmds[i], list, cmds[i]);
		ck_assert_str_eq(res.err, want);
	}
	run_zcow("zone", list, "reset", "all", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "zcow zone: '"));
}
END_TEST

START_TEST(test_cli_malformed_device_list_is_a_usage_error)
{
	char list[512], want[1024];

	snprintf(list, sizeof(list), "%s++%s", img(0, "a", GEO),
		 img(1, "b", GEO));
	run_zcow("ls", list, NULL);
	ck_assert_int_eq(res.status, 2);
	snprintf(want, sizeof(want), "zcow ls: '%s': an empty device in the "
		 "list (two '+' in a row, or one at an end)\n", list);
	ck_assert_str_eq(res.err, want);
	/* a spec holding '+' is one spec alone, not a part of a list */
	snprintf(list, sizeof(list), "sim:image=%s/x+y.img%s+%s", dir, GEO,
		 img(1, "b", GEO));
	run_zcow("df", list, NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_msg(strstr(res.err, "'y.img,zones=32,zone_size=4M' in the "
				      "device list"),
		      "stderr: %s", res.err);
	snprintf(list, sizeof(list), "sim:image=%s/x+y.img%s", dir, GEO);
	run_zcow("mkfs", list, "--seed", "1", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
}
END_TEST

START_TEST(test_cli_dev_list_prints_one_exact_line_per_device)
{
	char list[512], want[1024];

	mkfs_two();
	snprintf(list, sizeof(list), "%s+%s", img(0, "b", ""),
		 img(1, "a", ""));
	run_zcow("dev", "list", list, NULL);
	ck_assert_msg(res.status == 0, "dev list: %s", res.err);
	/* devid order, whatever the order given; mkfs's four block groups
	 * went two to each device (the most free space first) */
	snprintf(want, sizeof(want),
		 "devid 1 size 134217728 used 8388608 groups 2 spec %s\n"
		 "devid 2 size 134217728 used 8388608 groups 2 spec %s\n",
		 img(0, "a", ""), img(1, "b", ""));
	ck_assert_str_eq(res.out, want);
}
END_TEST

START_TEST(test_cli_dev_add_to_one_device_then_list_shows_devid_2)
{
	char list[512], want[1024];

	run_zcow("mkfs", img(0, "a", GEO), "--seed", "3", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("dev", "add", img(0, "a", ""), img(1, "b", GEO), NULL);
	ck_assert_msg(res.status == 0, "dev add: %s", res.err);
	snprintf(want, sizeof(want), "added %s as devid 2\ndevices: %s+%s\n",
		 img(1, "b", GEO), img(0, "a", ""), img(1, "b", GEO));
	ck_assert_str_eq(res.out, want);

	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("dev", "list", list, NULL);
	ck_assert_msg(res.status == 0, "dev list: %s", res.err);
	snprintf(want, sizeof(want),
		 "devid 1 size 134217728 used 16777216 groups 4 spec %s\n"
		 "devid 2 size 134217728 used 0 groups 0 spec %s\n",
		 img(0, "a", ""), img(1, "b", ""));
	ck_assert_str_eq(res.out, want);
	/* the first device alone no longer mounts */
	run_zcow("ls", img(0, "a", ""), NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(strstr(res.err, "missing: devid 2 "), "stderr: %s",
		      res.err);
}
END_TEST

START_TEST(test_cli_dev_add_refuses_a_device_of_another_zone_size)
{
	run_zcow("mkfs", img(0, "a", GEO), "--seed", "3", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("dev", "add", img(0, "a", ""),
		 img(1, "b", ",zones=16,zone_size=8M"), NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	ck_assert_msg(strstr(res.err, "has 4194304-byte zones") &&
			      strstr(res.err, "has 8388608-byte zones"),
		      "stderr: %s", res.err);
}
END_TEST

/*
 * dev add and replace reset the new device's zones: a device that holds
 * another file system is refused without --force (it was overwritten),
 * which leaves it mountable; with --force it is added.
 */
START_TEST(test_cli_dev_add_and_replace_refuse_a_device_holding_a_fs)
{
	run_zcow("mkfs", img(0, "a", GEO), "--seed", "3", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("mkfs", img(1, "b", GEO), "--seed", "4", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("dev", "add", img(0, "a", ""), img(1, "b", ""), NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_msg(strstr(res.err, "holds a zcow or btrfs superblock") &&
			      strstr(res.err, "--force"),
		      "stderr: %s", res.err);
	run_zcow("replace", img(0, "a", ""), "1", img(1, "b", ""), NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_msg(strstr(res.err, "holds a zcow or btrfs superblock"),
		      "stderr: %s", res.err);
	run_zcow("ls", img(1, "b", ""), "/", NULL);
	ck_assert_msg(res.status == 0, "b still mounts: %s", res.err);
	run_zcow("dev", "add", img(0, "a", ""), img(1, "b", ""), "--force",
		 NULL);
	ck_assert_msg(res.status == 0, "dev add --force: %s", res.err);
}
END_TEST

/*
 * A stale copy of a device (b.img saved before two commits wrote both
 * devices) in the list is named: it gave a checksum error in some node
 * and "Structure needs cleaning" without a word of which device.
 */
START_TEST(test_cli_stale_device_in_a_list_is_named)
{
	char list[512], cmd[512];

	mkfs_two();
	snprintf(cmd, sizeof(cmd), "cp %s/b.img %s/old.img", dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("put", list, local_file("x", 9000), "/x", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	run_zcow("put", list, local_file("y", 9000), "/y", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "old", ""));
	run_zcow("ls", list, "/", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(strstr(res.err, "old.img is stale: its superblock is generation"),
		      "stderr: %s", res.err);
}
END_TEST

START_TEST(test_cli_same_image_twice_is_refused_as_one_device)
{
	char other[128], want[512];

	/* the same file by another name: each open would save its own copy */
	snprintf(other, sizeof(other), "sim:image=%s/../%s/a.img%s", dir,
		 strrchr(dir, '/') + 1, GEO);
	run_zcow("mkfs", img(0, "a", GEO), other, "--seed", "1", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_str_eq(res.out, "");
	snprintf(want, sizeof(want),
		 "zcow mkfs: '%s' and '%s' are the same device\n",
		 img(0, "a", GEO), other);
	ck_assert_str_eq(res.err, want);

	mkfs_two();
	run_zcow("dev", "add", img(0, "a", ""), img(1, "a", ""), NULL);
	ck_assert_int_eq(res.status, 2);
	snprintf(want, sizeof(want),
		 "zcow dev add: '%s' and '%s' are the same device\n",
		 img(0, "a", ""), img(1, "a", ""));
	ck_assert_str_eq(res.err, want);
}
END_TEST

/* The last line of @s that starts with @prefix, without its newline, in
 * a static buffer; "" when none. */
static const char *last_line(const char *s, const char *prefix)
{
	static char line[512];
	const char *p, *last = NULL;

	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			last = p;
	if (!last)
		return "";
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(last, "\n"), last);
	return line;
}

START_TEST(test_cli_replace_copies_a_device_and_prints_the_new_list)
{
	const size_t n = 3 * 1024 * 1024 + 123;
	const char *local = local_file("in", n);
	char list[512], want[2048], *out, *err;
	const char *progress;
	size_t i;
	int status;

	mkfs_two();
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("put", list, local, "/f", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	run_zcow("replace", list, "2", img(2, "c", GEO), NULL);
	ck_assert_msg(res.status == 0, "replace: %s", res.err);
	/* a progress line per step; the summary repeats the last one */
	ck_assert_msg(strstr(res.err, "\nreplace: groups 1/2, bytes copied "),
		      "stderr: %s", res.err);
	progress = last_line(res.err, "replace: groups ");
	ck_assert_msg(!strncmp(progress, "replace: groups 2/2, bytes copied ",
			       34), "stderr: %s", res.err);
	snprintf(want, sizeof(want), "replaced devid 2 (%s) by %s: %s\n"
		 "devices: %s+%s\n", img(1, "b", ""), img(2, "c", GEO),
		 progress + strlen("replace: "), img(0, "a", ""),
		 img(2, "c", GEO));
	ck_assert_str_eq(res.out, want);

	/* the file reads back through the new list, in either order */
	snprintf(list, sizeof(list), "%s+%s", img(2, "c", ""),
		 img(0, "a", ""));
	status = zcow_test_run(&out, &err, "cat", list, "/f", NULL);
	ck_assert_msg(status == 0, "cat: %d %s", status, err);
	ck_assert_uint_eq(strlen(out), n);
	for (i = 0; i < n; i++)
		if (out[i] != pattern(i))
			ck_abort_msg("cat: byte %zu differs", i);
	free(out);
	free(err);
	run_zcow("dev", "list", list, NULL);
	ck_assert_msg(res.status == 0, "dev list: %s", res.err);
	snprintf(want, sizeof(want), "devid 2 size 134217728 used 8388608 "
		 "groups 2 spec %s\n", img(2, "c", ""));
	ck_assert_msg(strstr(res.out, want), "dev list: %s", res.out);
	run_zcow("check", list, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);

	/* the source's superblocks are wiped: the old list no longer mounts */
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("mount", "--read-only", list, NULL);
	ck_assert_int_eq(res.status, 1);
}
END_TEST

START_TEST(test_cli_replace_in_steps_then_status_prints_the_state)
{
	const char *local = local_file("in", 3 * 1024 * 1024);
	char list[512];
	const char *p;
	int nr = 0;

	mkfs_two();
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("replace", list, "--status", NULL);
	ck_assert_msg(res.status == 0, "status: %s", res.err);
	ck_assert_str_eq(res.out, "state never-started, source devid 0, "
				  "cursor 0\n");
	run_zcow("put", list, local, "/f", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	run_zcow("replace", list, "1", img(2, "c", GEO), "--step", "1M",
		 NULL);
	ck_assert_msg(res.status == 0, "replace: %s", res.err);
	/* the 3 MiB of data of devid 1 take several 1 MiB steps */
	for (p = res.err; (p = strstr(p, "replace: groups ")); p++)
		nr++;
	ck_assert_msg(nr >= 4, "%d steps: %s", nr, res.err);
	snprintf(list, sizeof(list), "%s+%s", img(0, "c", ""),
		 img(1, "b", ""));
	run_zcow("check", list, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	run_zcow("replace", list, "--status", NULL);
	ck_assert_msg(res.status == 0, "status: %s", res.err);
	/* the item keeps the state and the cursor; no replace runs: "-" */
	ck_assert_msg(!strncmp(res.out, "state finished, source devid -, "
					"cursor ", 32), "got: %s", res.out);
}
END_TEST

START_TEST(test_cli_replace_of_the_only_device_names_the_new_one)
{
	char want[512];

	run_zcow("mkfs", img(0, "a", GEO), "--seed", "3", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("mkdir", img(0, "a", ""), "/d", NULL);
	ck_assert_msg(res.status == 0, "mkdir: %s", res.err);
	run_zcow("replace", img(0, "a", ""), "1", img(1, "b", GEO), NULL);
	ck_assert_msg(res.status == 0, "replace: %s", res.err);
	snprintf(want, sizeof(want), "\ndevices: %s\n", img(1, "b", GEO));
	ck_assert_msg(strstr(res.out, want), "got: %s", res.out);
	run_zcow("ls", img(1, "b", ""), NULL);
	ck_assert_msg(res.status == 0, "ls: %s", res.err);
	ck_assert_ptr_nonnull(strstr(res.out, " d\n"));
}
END_TEST

START_TEST(test_cli_replace_refuses_bad_devids_and_own_devices)
{
	char list[512], want[512];

	mkfs_two();
	snprintf(list, sizeof(list), "%s+%s", img(0, "a", ""),
		 img(1, "b", ""));
	run_zcow("replace", list, "3", img(2, "c", GEO), NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	ck_assert_msg(strstr(res.err, "zcow replace: the file system has no "
				      "devid 3 (devids: 1 2)\n"),
		      "stderr: %s", res.err);
	run_zcow("replace", list, "0", img(2, "c", GEO), NULL);
	ck_assert_int_eq(res.status, 2);
	run_zcow("replace", list, "1", img(2, "b", ""), NULL);
	ck_assert_int_eq(res.status, 2);
	snprintf(want, sizeof(want),
		 "zcow replace: '%s' and '%s' are the same device\n",
		 img(1, "b", ""), img(2, "b", ""));
	ck_assert_str_eq(res.err, want);
	run_zcow("replace", list, "1", img(2, "c", GEO), "--step", "1Q",
		 NULL);
	ck_assert_int_eq(res.status, 2);
	run_zcow("replace", list, "2", img(2, "d", ",zones=16,zone_size=4M"),
		 NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	ck_assert_msg(strstr(res.err, "has 67108864 bytes, smaller than "
				      "devid 2 (134217728)\n") &&
			      strstr(res.err, "zcow replace: start: "),
		      "stderr: %s", res.err);
	/* nothing was replaced */
	run_zcow("dev", "list", list, NULL);
	ck_assert_int_eq(res.status, 0);
}
END_TEST

/* zcow run takes a device list for the fs target (the file system made
 * on every device, each with its timing model), not for the raw target;
 * zcow crash refuses one. */
START_TEST(test_cli_run_on_a_device_list_and_crash_refuses_one)
{
	char path[128], set[600], list[512];
	FILE *f;

	snprintf(list, sizeof(list), "%s+%s", img(0, "a", GEO),
		 img(1, "b", GEO));
	snprintf(set, sizeof(set), "device=%s", list);
	run_zcow("run", "configs/fs-seqwrite-128k.scenario", "--set", set,
		 "--set", "filesize=12m", "--results", dir, NULL);
	ck_assert_msg(res.status == 0, "stderr: %s", res.err);
	run_zcow("check", list, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	/* the 4 files of 12 MiB fill groups on both devices */
	run_zcow("dev", "list", list, NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_msg(!strstr(res.out, "groups 0 "), "%s", res.out);

	run_zcow("run", "configs/raw-seqwrite-128k.scenario", "--set", set,
		 "--results", dir, NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(strstr(res.err, "is a list of devices: only the fs "
				      "target runs on several"),
		      "stderr: %s", res.err);

	snprintf(path, sizeof(path), "%s/c.scenario", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[zcow]\n%s\n[crash]\nworkload=meta\nops=4\n", set);
	ck_assert_int_eq(fclose(f), 0);
	run_zcow("crash", path, "--no-results", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_msg(strstr(res.err, "device= is a list of devices: zcow "
				      "crash runs on one device"),
		      "stderr: %s", res.err);
}
END_TEST

Suite *cli_devices_suite(void)
{
	Suite *s = suite_create("cli_devices_suite");
	TCase *tc = tcase_create("lists");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_cli_mkfs_on_two_devices_names_the_list_and_both_mount);
	tcase_add_test(tc,
		       test_cli_mkfs_takes_one_plus_list_as_several_positionals);
	tcase_add_test(tc, test_cli_put_then_cat_on_two_devices_is_byte_exact);
	tcase_add_test(tc, test_cli_missing_device_fails_naming_its_devid);
	tcase_add_test(tc,
		       test_cli_mkfs_refuses_mismatched_zone_sizes_naming_both);
	tcase_add_test(
		tc, test_cli_raw_device_commands_refuse_a_list_naming_themselves);
	tcase_add_test(tc, test_cli_malformed_device_list_is_a_usage_error);
	tcase_add_test(tc, test_cli_dev_list_prints_one_exact_line_per_device);
	tcase_add_test(tc, test_cli_dev_add_to_one_device_then_list_shows_devid_2);
	tcase_add_test(tc, test_cli_dev_add_refuses_a_device_of_another_zone_size);
	tcase_add_test(tc, test_cli_dev_add_and_replace_refuse_a_device_holding_a_fs);
	tcase_add_test(tc, test_cli_stale_device_in_a_list_is_named);
	tcase_add_test(tc, test_cli_same_image_twice_is_refused_as_one_device);
	tcase_add_test(tc,
		       test_cli_replace_copies_a_device_and_prints_the_new_list);
	tcase_add_test(tc,
		       test_cli_replace_in_steps_then_status_prints_the_state);
	tcase_add_test(tc, test_cli_replace_of_the_only_device_names_the_new_one);
	tcase_add_test(tc, test_cli_replace_refuses_bad_devids_and_own_devices);
	tcase_add_test(tc, test_cli_run_on_a_device_list_and_crash_refuses_one);
	suite_add_tcase(s, tc);
	return s;
}
