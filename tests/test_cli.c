// SPDX-License-Identifier: MIT
/*
 * The zcow tool as a user runs it: the binary from $ZCOW_BIN (set by
 * `make test`), run in a child process on file: devices, with its exit
 * status, stdout and stderr checked.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "zcow.h"
#include "zdev.h"

#define ZS	(1u << 20)

static struct zcow_test_res res;
static char dev_path[64];
static char dev_spec[160];

/* Run zcow with the NULL-terminated arguments; fills res. */
#define run_zcow(...) zcow_test_run_res(&res, __VA_ARGS__)

/* A 4-zone (1 MiB zones) file device. */
static void setup(void)
{
	int fd;

	snprintf(dev_path, sizeof(dev_path), "/tmp/zcow-cli-dev-XXXXXX");
	fd = mkstemp(dev_path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 4 * ZS), 0);
	close(fd);
	snprintf(dev_spec, sizeof(dev_spec), "file:%s,zone_size=1M", dev_path);
}

static void teardown(void)
{
	unlink(dev_path);
}

static int nr_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Make @tmpl (mkstemp()'s XXXXXX template) a fresh name nothing holds. */
static void temp_name(char *tmpl)
{
	int fd = mkstemp(tmpl);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(tmpl);
}

/* zcow mount-options lists the table's options, --names one a line
 * (what scripts take the names from); another argument is refused. */
START_TEST(test_cli_mount_options_lists_the_table)
{
	const struct zcow_mount_opt_doc *d;
	char want[1024] = "";
	unsigned int i;

	run_zcow("mount-options", "--names", NULL);
	ck_assert_msg(res.status == 0, "exit %d, stderr: %s", res.status,
		      res.err);
	for (i = 0; (d = zcow_mount_opt_doc(i)); i++) {
		strcat(want, d->name);
		strcat(want, "\n");
	}
	ck_assert_str_eq(res.out, want);
	run_zcow("mount-options", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "  treelog=on|off "));
	run_zcow("mount-options", "--nmaes", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "unexpected argument '--nmaes'"));
}
END_TEST

START_TEST(test_cli_zones_prints_blkzone_report_lines)
{
	run_zcow("zones", dev_spec, NULL);
	ck_assert_msg(res.status == 0, "exit %d, stderr: %s", res.status,
		      res.err);
	ck_assert_int_eq(nr_lines(res.out), 4);
	/* 1 MiB = 0x800 sectors; conventional: wptr 0 as blkzone prints. */
	ck_assert_msg(
		strncmp(res.out,
			"  start: 0x000000000, len 0x000800, cap 0x000800, "
			"wptr 0x000000 reset:0 non-seq:0, zcond: 0(nw) [type: "
			"1(CONVENTIONAL)]\n",
			strlen("  start: 0x000000000, len 0x000800, cap "
			       "0x000800, wptr 0x000000 reset:0 non-seq:0, "
			       "zcond: 0(nw) [type: 1(CONVENTIONAL)]\n")) == 0,
		"got:\n%s", res.out);
	ck_assert_ptr_nonnull(
		strstr(res.out, "\n  start: 0x000001800, len 0x000800, cap "
				"0x000800, wptr 0x000000 reset:0 non-seq:0, "
				"zcond: 0(nw) [type: 1(CONVENTIONAL)]\n"));
}
END_TEST

START_TEST(test_cli_zones_bytes_mode_has_header_and_decimal_bytes)
{
	run_zcow("zones", dev_spec, "--bytes", NULL);
	ck_assert_msg(res.status == 0, "exit %d, stderr: %s", res.status,
		      res.err);
	ck_assert_int_eq(nr_lines(res.out), 5);
	ck_assert_ptr_nonnull(strstr(res.out, "start"));
	ck_assert_ptr_nonnull(strstr(res.out, "wptr"));
	ck_assert_ptr_nonnull(
		strstr(res.out, "        3145728      1048576      1048576     "
				"       0   0(nw) 1(CONVENTIONAL)\n"));
}
END_TEST

START_TEST(test_cli_zones_limits_of_a_file_are_its_spec)
{
	run_zcow("zones", dev_spec, "--limits", NULL);
	ck_assert_msg(res.status == 0, "exit %d, stderr: %s", res.status,
		      res.err);
	ck_assert_ptr_nonnull(strstr(res.out, "no queue limits"));
	ck_assert_ptr_nonnull(strstr(res.out, dev_spec));
	ck_assert_msg(strstr(res.out, "  append                    -  no "
				      "Zone Append\n"),
		      "got:\n%s", res.out);
	ck_assert_ptr_nonnull(strstr(res.out, "  write                     - "
					      " no per-command limit\n"));
	/* No zone lines. */
	ck_assert_ptr_null(strstr(res.out, "start:"));
}
END_TEST

START_TEST(test_cli_zones_limits_of_the_simulator_give_its_max_append)
{
	run_zcow("zones", "sim:zones=8,zone_size=4M,max_append=64K,max_open=3",
		 "--limits", NULL);
	ck_assert_msg(res.status == 0, "exit %d, stderr: %s", res.status,
		      res.err);
	ck_assert_ptr_nonnull(strstr(res.out, "a simulated device"));
	ck_assert_msg(strstr(res.out, "  append                65536  "
				      "max_append of the spec\n"),
		      "got:\n%s", res.out);
	ck_assert_ptr_nonnull(strstr(res.out, "max_open                 3\n"));
	run_zcow("zones", dev_spec, "--limits", "--bytes", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "--limits"));
}
END_TEST

START_TEST(test_cli_zone_reset_of_conventional_zone_fails_with_message)
{
	run_zcow("zone", dev_spec, "reset", "1M", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(strstr(res.err, strerror(EIO)) != NULL, "stderr: %s",
		      res.err);
	ck_assert_ptr_nonnull(strstr(res.err, "reset"));
	ck_assert_str_eq(res.out, "");
	run_zcow("zone", dev_spec, "finish", "all", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_ptr_nonnull(strstr(res.err, strerror(EIO)));
}
END_TEST

START_TEST(test_cli_zone_bad_offset_or_action_is_usage_error)
{
	run_zcow("zone", dev_spec, "reset", "12q", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "12q"));
	run_zcow("zone", dev_spec, "explode", "0", NULL);
	ck_assert_int_eq(res.status, 2);
	run_zcow("zone", dev_spec, "reset", NULL);
	ck_assert_int_eq(res.status, 2);
	/* Not a zone start: the device layer's -EINVAL. */
	run_zcow("zone", dev_spec, "open", "4k", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_ptr_nonnull(strstr(res.err, strerror(EINVAL)));
}
END_TEST

START_TEST(test_cli_bad_device_spec_fails_naming_it)
{
	run_zcow("zones", "file:/nonexistent-zcow/x,zone_size=1M", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_ptr_nonnull(strstr(res.err, "nonexistent-zcow"));
	run_zcow("zones", "file:/tmp/x,zone_size=1M,colour=red", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_ptr_nonnull(strstr(res.err, "colour"));
}
END_TEST

START_TEST(test_cli_help_exits_zero)
{
	run_zcow("--help", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "zones"));
	run_zcow("zones", "--help", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "usage: zcow zones"));
	run_zcow("zone", "--help", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "usage: zcow zone "));
	run_zcow("zones", NULL);
	ck_assert_int_eq(res.status, 2);
}
END_TEST

START_TEST(test_cli_unknown_command_exits_two)
{
	run_zcow("frobnicate", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "frobnicate"));
	run_zcow(NULL);
	ck_assert_int_eq(res.status, 2);
}
END_TEST

/* ---- superblock commands ------------------------------------------------ */

/* The value printed on the "generation" line of dump-super, or -1. */
static long long printed_generation(const char *out)
{
	const char *p = strstr(out, "\ngeneration\t");

	if (!p)
		return -1;
	return strtoll(p + strlen("\ngeneration\t"), NULL, 10);
}

START_TEST(test_cli_dump_super_of_kernel_vectors_prints_their_generation)
{
	char dir[512], spec[600], path[600], buf[32];
	struct dirent *de;
	int nr_vectors = 0;
	DIR *d;
	FILE *f;

	d = opendir(ZCOW_TESTDATA "/kernel-sblog");
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), ZCOW_TESTDATA "/kernel-sblog/%s",
			 de->d_name);
		snprintf(path, sizeof(path), "%s/expected-generation", dir);
		f = fopen(path, "r");
		ck_assert_msg(f, "%s is missing", path);
		ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
		fclose(f);
		snprintf(spec, sizeof(spec), "sim:import=%s", dir);
		run_zcow("dump-super", spec, NULL);
		ck_assert_msg(res.status == 0, "%s: exit %d: %s", dir,
			      res.status, res.err);
		ck_assert_msg(printed_generation(res.out) == atoll(buf),
			      "%s: printed generation %lld, kernel's %lld", dir,
			      printed_generation(res.out), atoll(buf));
		nr_vectors++;
	}
	closedir(d);
	ck_assert_int_ge(nr_vectors, 3);
}
END_TEST

START_TEST(test_cli_mkfs_mount_dump_super_share_an_image_across_processes)
{
	char img[] = "/tmp/zcow-cli-img-XXXXXX";
	char spec[128];

	temp_name(img);
	snprintf(spec, sizeof(spec),
		 "sim:image=%s,zones=32,zone_size=4M,zone_cap=16K", img);
	run_zcow("mkfs", spec, "--seed", "7", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("dump-super", spec, NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_int_eq(printed_generation(res.out), 1);
	/* Each mount commits once at unmount; 16 KiB zones wrap quickly. */
	run_zcow("mount", spec, NULL);
	ck_assert_msg(res.status == 0, "mount: %s", res.err);
	run_zcow("mount", spec, NULL);
	run_zcow("mount", spec, NULL);
	run_zcow("mount", spec, NULL);
	run_zcow("mount", spec, NULL);
	ck_assert_int_eq(res.status, 0);
	run_zcow("dump-super", spec, "--all", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_int_eq(printed_generation(res.out), 6);
	unlink(img);
}
END_TEST

START_TEST(test_cli_mkfs_refuses_too_few_zones_stating_the_minimum)
{
	run_zcow("mkfs", "sim:zones=6,zone_size=4M", NULL);
	ck_assert_int_ne(res.status, 0);
	ck_assert_msg(strstr(res.err, "7 zones"), "stderr: %s", res.err);
}
END_TEST

START_TEST(test_cli_dump_super_of_blank_device_fails_cleanly)
{
	run_zcow("dump-super", "sim:zones=8,zone_size=4M", NULL);
	ck_assert_int_ne(res.status, 0);
	ck_assert_int_ne(res.status, -1);
	ck_assert_msg(res.err[0], "no message on stderr");
}
END_TEST

/*
 * An image (conventional zones, so blocks can be overwritten) with 300
 * files in /, whose fs-tree leaves holding only file inodes (first key
 * above the root directory's objectid 256) are then overwritten with junk:
 * the root directory still lists, the files' inode items fail their
 * checksum.
 */
static void make_image_with_corrupt_inode_leaves(const char *spec)
{
	struct zcow_mkfs_opts mo = { .seed = 3 };
	struct zcow_fs *fs = NULL;
	struct zcow_file *f = NULL;
	struct zdev *dev = NULL;
	uint8_t node[16384], junk[4096];
	char name[32];
	uint64_t off, last_first = 0;
	int i, pass, nr_bad = 0;

	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		ck_assert_int_eq(zcow_create(fs, name, &f), 0);
		ck_assert_int_eq(zcow_pwrite(f, name, 4, 0), 4);
		ck_assert_int_eq(zcow_close(f), 0);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	memset(junk, 0x6b, sizeof(junk));
	/* pass 0 finds the last leaf's first key (mount reads that leaf
	 * for the next free inode number), pass 1 spoils the others */
	for (pass = 0; pass < 2; pass++) {
		for (off = 0; off < dev->info.size; off += sizeof(node)) {
			uint64_t owner, first;

			ck_assert_int_eq(zdev_read(dev, node, sizeof(node),
						   off, ZDEV_CLASS_OTHER), 0);
			memcpy(&owner, node + 0x58, 8);
			memcpy(&first, node + 0x65, 8);
			first = le64toh(first);
			if (le64toh(owner) != 5 || node[0x64] != 0 ||
			    first <= 256 || !node[0x60])
				continue;
			if (pass == 0) {
				if (first > last_first)
					last_first = first;
				continue;
			}
			if (first == last_first)
				continue;
			ck_assert_int_eq(zdev_write(dev, junk, sizeof(junk),
						    off + 4096, 0,
						    ZDEV_CLASS_OTHER), 0);
			nr_bad++;
		}
	}
	ck_assert_int_gt(nr_bad, 0);
	ck_assert_int_eq(zdev_close(dev), 0);
}

START_TEST(test_cli_ls_fails_when_an_inode_leaf_is_corrupt)
{
	char img[] = "/tmp/zcow-cli-ls-XXXXXX", spec[160];

	temp_name(img);
	snprintf(spec, sizeof(spec),
		 "sim:image=%s,zones=16,zone_size=4M,conv=16", img);
	make_image_with_corrupt_inode_leaves(spec);
	snprintf(spec, sizeof(spec), "sim:image=%s", img);
	run_zcow("ls", spec, "/", NULL);
	ck_assert_msg(res.status == 1, "ls exit %d, stdout: %.300s, stderr %.300s",
		      res.status, res.out, res.err);
	ck_assert_msg(strstr(res.err, "Structure needs cleaning"),
		      "stderr: %s", res.err);
	/* stat agrees */
	run_zcow("stat", spec, "/f150", NULL);
	ck_assert_int_eq(res.status, 1);
	unlink(img);
}
END_TEST

START_TEST(test_cli_mkfs_into_a_missing_directory_fails_without_success)
{
	run_zcow("mkfs", "sim:image=/nonexistent-zcow-dir/x.img,zones=16,zone_size=4M",
		 "--seed", "1", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(!strstr(res.out, "fsid"), "stdout: %s", res.out);
	ck_assert_msg(strstr(res.err, "/nonexistent-zcow-dir/x.img"),
		      "stderr: %s", res.err);
}
END_TEST

/*
 * A command that fails before it writes anything leaves no image behind:
 * a refused mkfs (too small) made a 4-zone image, so the corrected mkfs
 * with zones=32 failed ("zones=32 given, the device has 4"); `ls` of a
 * missing image created it and then reported "no superblock".
 */
START_TEST(test_cli_failed_command_leaves_no_new_image)
{
	char img[] = "/tmp/zcow-cli-new-XXXXXX", spec[160];
	struct stat st;

	temp_name(img);
	unlink(img);
	snprintf(spec, sizeof(spec), "sim:image=%s,zones=4,zone_size=4M", img);
	run_zcow("mkfs", spec, NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_int_eq(stat(img, &st), -1);
	snprintf(spec, sizeof(spec), "sim:image=%s,zones=32,zone_size=4M", img);
	run_zcow("mkfs", spec, NULL);
	ck_assert_msg(res.status == 0, "stderr: %s", res.err);
	ck_assert_int_eq(stat(img, &st), 0);
	unlink(img);
	snprintf(spec, sizeof(spec), "sim:image=%s", img);
	run_zcow("ls", spec, "/", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_int_eq(stat(img, &st), -1);
}
END_TEST

/* Run a shell command (btrfs-progs); its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A small local file to put. */
static const char *small_file(void)
{
	static const char path[] = "/tmp/zcow-cli-small.txt";
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs("zcow\n", f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static void need_btrfs_progs(void)
{
	ck_assert_msg(sh("command -v btrfs >/dev/null && command -v mkfs.btrfs >/dev/null") == 0,
		      "btrfs-progs is missing: ./run.sh installs it (apt-get install btrfs-progs)");
}

/* btrfs-progs assumes 256 MiB zones for an image in a plain file. */
#define BTRFS_FILE_SPEC "file:%s,zone_size=256M"

START_TEST(test_cli_btrfs_check_passes_after_idle_mounts)
{
	char img[] = "/tmp/zcow-btrfs-XXXXXX", spec[160], mk[200];
	int fd = mkstemp(img);

	need_btrfs_progs();
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(img);
	snprintf(mk, sizeof(mk), BTRFS_FILE_SPEC ",size=2G", img);
	snprintf(spec, sizeof(spec), BTRFS_FILE_SPEC, img);
	run_zcow("mkfs", mk, "--seed", "5", NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("put", spec, small_file(), "/h", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	/* commits with nothing dirty: each writes a new root tree */
	run_zcow("mount", spec, NULL);
	ck_assert_int_eq(res.status, 0);
	run_zcow("mount", spec, NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_int_eq(sh("btrfs check --readonly %s >/dev/null 2>&1", img),
			 0);
	ck_assert_int_eq(sh("btrfs inspect-internal dump-tree -t root %s 2>&1 | grep -q 'parent transid verify failed'",
			    img), 1);
	unlink(img);
}
END_TEST

/* The benchmarks (harness/cmd_bench.c) share one option parser: a bad
 * value or a missing one is a usage error naming the option. */
START_TEST(test_cli_bench_commands_refuse_bad_options_naming_them)
{
	static const struct {
		const char *cmd, *opt, *val, *want;
	} cases[] = {
		{ "bench-meta", "--commit-every", "0", "--commit-every" },
		{ "bench-meta", "--items", "many", "bad --items 'many'" },
		{ "bench-meta", "--items", NULL, "--items needs a value" },
		{ "bench-fs", "--rand", "x", "bad --rand 'x'" },
		{ "bench-fs", "--seq", "12Q", "bad --seq '12Q'" },
		{ "bench-fs", "--bogus", NULL, "unexpected argument '--bogus'" },
		{ "bench-fs", "-o", "nodatacow", "bad mount options" },
		{ "bench-dev", "--zone-size", "0", "--zone-size" },
		{ "bench-dev", "--csv", NULL, "--csv needs a value" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_zcow(cases[i].cmd, cases[i].opt, cases[i].val, NULL);
		ck_assert_msg(res.status == 2, "%s %s: exit %d", cases[i].cmd,
			      cases[i].opt, res.status);
		ck_assert_msg(strstr(res.err, cases[i].want),
			      "%s %s: stderr: %s", cases[i].cmd, cases[i].opt,
			      res.err);
		ck_assert_str_eq(res.out, "");
	}
	run_zcow("bench-meta", "--help", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "usage: zcow bench-meta"));
	run_zcow("bench-fs", "-h", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "usage: zcow bench-fs"));
	run_zcow("bench-dev", "--help", NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_ptr_nonnull(strstr(res.out, "across 16 zones"));
}
END_TEST

/* bench-meta through zcow_bench_tree_insert() (bench/): the commit
 * counters of a small sequential run are exact. */
START_TEST(test_cli_bench_meta_counts_its_commits)
{
	run_zcow("bench-meta", "--items", "2000", "--commit-every", "500",
		 "--seq", NULL);
	ck_assert_msg(res.status == 0, "exit %d, stderr: %s", res.status,
		      res.err);
	ck_assert_msg(strstr(res.out, "items=2000 keys=sequential commit_every=500 nodesize=16384\n"),
		      "stdout: %s", res.out);
	/* four every 500 items, one at the end */
	ck_assert_msg(strstr(res.out, "\ncommits=5 nodes_written="),
		      "stdout: %s", res.out);
	ck_assert_ptr_nonnull(strstr(res.out, "meta_bytes_written="));
}
END_TEST

START_TEST(test_cli_put_refuses_a_btrfs_made_by_mkfs_btrfs)
{
	char img[] = "/tmp/zcow-mkfsbtrfs-XXXXXX", spec[160];
	int fd = mkstemp(img);

	need_btrfs_progs();
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 2LL << 30), 0);
	close(fd);
	ck_assert_int_eq(sh("mkfs.btrfs -q -f -O zoned -d single -m single %s >/dev/null 2>&1",
			    img), 0);
	snprintf(spec, sizeof(spec), BTRFS_FILE_SPEC, img);
	run_zcow("put", spec, small_file(), "/h", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_msg(strstr(res.err, "not maintained by zcow"), "stderr: %s",
		      res.err);
	/* reading is fine, and btrfs still finds its file system intact */
	run_zcow("ls", spec, "/", NULL);
	ck_assert_msg(res.status == 0, "ls: %s", res.err);
	ck_assert_int_eq(sh("btrfs check --readonly %s >/dev/null 2>&1", img),
			 0);
	unlink(img);
}
END_TEST

/*
 * zcow balance: a group half freed (two 2 MiB files in one 4 MiB group,
 * one removed) shows as zone_unusable in zcow df; balance --usage 60
 * relocates it (the live 2 MiB) and the metadata group (a few nodes
 * live), df shows no data unusable, the kept file reads back byte for
 * byte and the checker is clean.  Bad options are refused with exit
 * status 2.
 */
START_TEST(test_cli_balance_relocates_a_half_free_group)
{
	char img[] = "/tmp/zcow-cli-img-XXXXXX";
	const char *local = "/tmp/zcow-cli-2m.bin", *back = "/tmp/zcow-cli-2m.out";
	char spec[128];

	temp_name(img);
	snprintf(spec, sizeof(spec), "sim:image=%s,zones=32,zone_size=4M", img);
	ck_assert_int_eq(sh("head -c 2097152 /dev/urandom > %s", local), 0);
	run_zcow("mkfs", spec, NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	run_zcow("put", "-o", "data_zones=1", spec, local, "/a", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	run_zcow("put", "-o", "data_zones=1", spec, local, "/b", NULL);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
	run_zcow("rm", spec, "/a", NULL);
	ck_assert_msg(res.status == 0, "rm: %s", res.err);
	run_zcow("df", "--raw", spec, NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_msg(strstr(res.out, "Data, single: total=4194304, "
				      "used=2097152, zone_unusable=2097152,"),
		      "df: %s", res.out);
	ck_assert_msg(strstr(res.out, "reclaimable="), "df: %s", res.out);

	run_zcow("balance", "--usage", "101", spec, NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_ptr_nonnull(strstr(res.err, "--usage '101'"));
	run_zcow("balance", "-o", "ro", spec, NULL);
	ck_assert_int_eq(res.status, 2);
	run_zcow("balance", "-o", "reclaim=sometimes", spec, NULL);
	ck_assert_int_eq(res.status, 2);

	run_zcow("balance", "--usage", "60", "--raw", spec, NULL);
	ck_assert_msg(res.status == 0, "balance: %s", res.err);
	ck_assert_msg(strstr(res.out, "(data 1, metadata 1): 2097152 of "
				      "data in"),
		      "balance: %s", res.out);
	/* Again, in df's units: the data has nothing left to gain (the
	 * metadata group holds the first run's commit). */
	run_zcow("balance", spec, NULL);
	ck_assert_msg(res.status == 0, "balance: %s", res.err);
	ck_assert_msg(strstr(res.out, "(data 0, metadata ") &&
			      strstr(res.out, ": 0.00B of data in 0 extents"),
		      "balance: %s", res.out);
	ck_assert_msg(strstr(res.out, "reclaimable now: ") &&
			      strstr(res.out, "B\n"),
		      "balance: %s", res.out);
	run_zcow("df", "--raw", spec, NULL);
	ck_assert_msg(strstr(res.out, "Data, single: total=4194304, "
				      "used=2097152, zone_unusable=0,"),
		      "df: %s", res.out);
	run_zcow("get", spec, "/b", back, NULL);
	ck_assert_msg(res.status == 0, "get: %s", res.err);
	ck_assert_int_eq(sh("cmp -s %s %s", local, back), 0);
	run_zcow("check", spec, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	unlink(img);
	unlink(local);
	unlink(back);
}
END_TEST

/* ---- snapshots ---------------------------------------------------------- */

/* A file system on a 32-zone sim image with the file /f: its spec in
 * @spec (the image @img, removed by the caller). */
static void mkfs_with_file(char *img, char *spec, size_t len)
{
	const char *local = "/tmp/zcow-cli-snap.txt";
	FILE *f;

	temp_name(img);
	snprintf(spec, len, "sim:image=%s,zones=32,zone_size=4M", img);
	run_zcow("mkfs", spec, NULL);
	ck_assert_msg(res.status == 0, "mkfs: %s", res.err);
	f = fopen(local, "w");
	ck_assert_ptr_nonnull(f);
	fputs("kept by the snapshot\n", f);
	ck_assert_int_eq(fclose(f), 0);
	run_zcow("put", spec, local, "/f", NULL);
	unlink(local);
	ck_assert_msg(res.status == 0, "put: %s", res.err);
}

/*
 * zcow snapshot DEV / DST -r prints btrfs-progs' line; zcow subvol list
 * then prints btrfs subvolume list's lines, ids from 256 in order, each
 * snapshot's generation the transaction that made it (the put commits
 * generation 2 at its unmount: the first snapshot is committed as 3, its
 * mount's unmount commits 4, the second snapshot 5).
 */
START_TEST(test_cli_snapshot_prints_btrfs_line_and_subvol_list_shows_it)
{
	char img[] = "/tmp/zcow-cli-img-XXXXXX";
	char spec[128];

	mkfs_with_file(img, spec, sizeof(spec));
	run_zcow("subvol", "list", spec, NULL);
	ck_assert_msg(res.status == 0, "subvol list: %s", res.err);
	ck_assert_str_eq(res.out, "");
	run_zcow("snapshot", spec, "/", "/snap", "-r", NULL);
	ck_assert_msg(res.status == 0, "snapshot: %s", res.err);
	ck_assert_str_eq(res.out, "Create a readonly snapshot of '/' in "
				  "'/snap'\n");
	run_zcow("snapshot", "-r", spec, "/", "later", NULL);
	ck_assert_msg(res.status == 0, "snapshot: %s", res.err);
	ck_assert_str_eq(res.out, "Create a readonly snapshot of '/' in "
				  "'/later'\n");
	run_zcow("subvol", "list", spec, NULL);
	ck_assert_msg(res.status == 0, "subvol list: %s", res.err);
	/* gen: the snapshot's transaction, after the commit that makes
	 * the source's nodes shareable */
	ck_assert_str_eq(res.out, "ID 256 gen 4 top level 5 path snap\n"
				  "ID 257 gen 7 top level 5 path later\n");
	ck_assert_str_eq(res.err, "");
	run_zcow("check", spec, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	/* btrfs subvolume delete's line; the other snapshot stays */
	run_zcow("subvol", "delete", spec, "/snap", NULL);
	ck_assert_msg(res.status == 0, "subvol delete: %s", res.err);
	ck_assert_str_eq(res.out, "Delete subvolume '/snap'\n");
	run_zcow("subvol", "delete", spec, "snap", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	ck_assert_msg(strstr(res.err, "/snap: No such file or directory"),
		      "%s", res.err);
	run_zcow("subvol", "delete", spec, "/d/x", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_str_eq(res.err, "zcow subvol delete: '/d/x': a snapshot is "
				  "/NAME or NAME in the root directory\n");
	run_zcow("subvol", "list", spec, NULL);
	ck_assert_str_eq(res.out, "ID 257 gen 7 top level 5 path later\n");
	run_zcow("check", spec, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	unlink(img);
}
END_TEST

/* What zcow snapshot refuses, before it touches the device: a SRC other
 * than the top level, a DST deeper than the root directory; an existing
 * DST fails with EEXIST.  Without -r the snapshot is writable. */
START_TEST(test_cli_snapshot_refuses_other_source_deep_or_existing)
{
	char img[] = "/tmp/zcow-cli-img-XXXXXX";
	char spec[128];

	mkfs_with_file(img, spec, sizeof(spec));
	run_zcow("snapshot", spec, "/f", "/snap", "-r", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_str_eq(res.out, "");
	ck_assert_str_eq(res.err, "zcow snapshot: SRC '/f': zcow snapshots "
				  "only the top-level subvolume '/'\n");
	run_zcow("snapshot", spec, "/", "/d/snap", "-r", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_str_eq(res.out, "");
	ck_assert_str_eq(res.err, "zcow snapshot: DST '/d/snap': a snapshot "
				  "goes in the root directory: /NAME or "
				  "NAME\n");
	run_zcow("snapshot", spec, "/", "/", "-r", NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_str_eq(res.err, "zcow snapshot: DST '/': a snapshot goes "
				  "in the root directory: /NAME or NAME\n");
	run_zcow("subvol", "list", spec, NULL);
	ck_assert_str_eq(res.out, "");

	run_zcow("snapshot", spec, "/", "snap", "-r", NULL);
	ck_assert_msg(res.status == 0, "snapshot: %s", res.err);
	run_zcow("snapshot", spec, "/", "/snap", "-r", NULL);
	ck_assert_int_eq(res.status, 1);
	ck_assert_str_eq(res.out, "");
	ck_assert_str_eq(res.err, "zcow snapshot: /snap: File exists\n");
	run_zcow("subvol", "list", spec, NULL);
	ck_assert_int_eq(res.status, 0);
	ck_assert_str_eq(res.out, "ID 256 gen 4 top level 5 path snap\n");
	run_zcow("subvol", "show", spec, NULL);
	ck_assert_int_eq(res.status, 2);
	ck_assert_str_eq(res.err, "zcow subvol: unknown action 'show' (list, delete)\n");
	/* without -r: writable, as btrfs subvolume snapshot */
	run_zcow("snapshot", spec, "/", "/w", NULL);
	ck_assert_msg(res.status == 0, "snapshot: %s", res.err);
	ck_assert_str_eq(res.out, "Create a snapshot of '/' in '/w'\n");
	run_zcow("put", spec, "/etc/hostname", "/w/h", NULL);
	ck_assert_msg(res.status == 0, "put into the writable snapshot: %s",
		      res.err);
	run_zcow("put", spec, "/etc/hostname", "/snap/h", NULL);
	ck_assert_int_ne(res.status, 0);
	ck_assert_msg(strstr(res.err, "Read-only file system"), "%s", res.err);
	run_zcow("check", spec, NULL);
	ck_assert_msg(res.status == 0, "check: %s", res.out);
	unlink(img);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli_suite");
	TCase *tc = tcase_create("zones");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cli_zones_prints_blkzone_report_lines);
	tcase_add_test(tc, test_cli_mount_options_lists_the_table);
	tcase_add_test(tc, test_cli_zones_limits_of_a_file_are_its_spec);
	tcase_add_test(tc,
		       test_cli_zones_limits_of_the_simulator_give_its_max_append);
	tcase_add_test(tc,
		       test_cli_zones_bytes_mode_has_header_and_decimal_bytes);
	tcase_add_test(
		tc,
		test_cli_zone_reset_of_conventional_zone_fails_with_message);
	tcase_add_test(tc, test_cli_zone_bad_offset_or_action_is_usage_error);
	tcase_add_test(tc, test_cli_bad_device_spec_fails_naming_it);
	tcase_add_test(tc, test_cli_help_exits_zero);
	tcase_add_test(tc, test_cli_unknown_command_exits_two);
	suite_add_tcase(s, tc);

	tc = tcase_create("super");
	tcase_set_timeout(tc, 60);
	tcase_add_test(
		tc, test_cli_dump_super_of_kernel_vectors_prints_their_generation);
	tcase_add_test(
		tc, test_cli_mkfs_mount_dump_super_share_an_image_across_processes);
	tcase_add_test(tc,
		       test_cli_mkfs_refuses_too_few_zones_stating_the_minimum);
	tcase_add_test(tc, test_cli_mkfs_into_a_missing_directory_fails_without_success);
	tcase_add_test(tc, test_cli_failed_command_leaves_no_new_image);
	tcase_add_test(tc, test_cli_btrfs_check_passes_after_idle_mounts);
	tcase_add_test(tc, test_cli_balance_relocates_a_half_free_group);
	tcase_add_test(tc, test_cli_put_refuses_a_btrfs_made_by_mkfs_btrfs);
	tcase_add_test(tc,
		       test_cli_bench_commands_refuse_bad_options_naming_them);
	tcase_add_test(tc, test_cli_bench_meta_counts_its_commits);
	tcase_add_test(tc, test_cli_ls_fails_when_an_inode_leaf_is_corrupt);
	tcase_add_test(tc, test_cli_dump_super_of_blank_device_fails_cleanly);
	tcase_add_test(
		tc, test_cli_snapshot_prints_btrfs_line_and_subvol_list_shows_it);
	tcase_add_test(
		tc,
		test_cli_snapshot_refuses_other_source_deep_or_existing);
	suite_add_tcase(s, tc);
	return s;
}
