// SPDX-License-Identifier: MIT
/*
 * zcow run with fio's verify (harness/run_verify.c): what jobs wrote
 * reads back on the fs and the raw targets; after each loop, in
 * verify_backlog batches, for verify_only; a block changed under the
 * device, or overwritten by another writer, fails the run with fio's
 * message and summary.json counts it; and what zcow writes passes fio's
 * own verify_only (when the fio binary is there).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define RES	"/tmp/zcow-test-run-verify"
#define JOB	RES "/job.fio"
#define IMG	RES "/dev.img"

/* @text as JOB; zcow run it; *dir_ret the results folder it printed
 * (NULL: none), *err_ret its stderr.  The exit status. */
static int run_job(const char *text, char **dir_ret, char **err_ret)
{
	char *out = NULL;
	FILE *f;
	int status;

	ck_assert_int_eq(system("mkdir -p " RES), 0);
	f = fopen(JOB, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	status = zcow_test_run(&out, err_ret, "run", JOB, "--results", RES,
			       NULL);
	out[strcspn(out, "\n")] = '\0';
	*dir_ret = out[0] ? out : NULL;
	if (!out[0])
		free(out);
	return status;
}

/* The number after "KEY": in @json. */
static unsigned long long num(const char *json, const char *key)
{
	char k[128];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(json, k);
	ck_assert_msg(p != NULL, "no %s", key);
	return strtoull(p + strlen(k), NULL, 10);
}

/* Run @text, which must pass; summary.json's verify figures. */
static void run_ok(const char *text, unsigned long long *blocks,
		   unsigned long long *read_ios)
{
	char *dir, *err, *s;
	int status = run_job(text, &dir, &err);

	ck_assert_msg(status == 0 && !err[0], "exit %d: %s", status, err);
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(num(s, "failures"), 0);
	*blocks = num(s, "blocks_verified");
	*read_ios = num(s, "read_ios");
	free(s);
	free(dir);
	free(err);
}

START_TEST(test_run_verify_reads_back_random_overwrites_on_files)
{
	unsigned long long blocks, reads;

	/* 256 random writes of 4 KiB over 1 MiB, some blocks twice: each
	 * block written is read back once, its last write (fio's rbtree) */
	run_ok("[w]\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n"
	       "filename=/f\n", &blocks, &reads);
	ck_assert_uint_eq(blocks, reads);
	ck_assert_uint_gt(blocks, 128);
	ck_assert_uint_lt(blocks, 256);
	/* every type reads back */
	run_ok("[w]\nrw=write\nbs=8k\nsize=256k\nverify=sha3-512\n"
	       "verify_interval=1k\nfilename=/f\n", &blocks, &reads);
	ck_assert_uint_eq(blocks, 32);
}
END_TEST

/* A job that syncs writes through the page cache (its bytes go out with
 * the sync, harness/run_fs.c): what it wrote reads back, in the verify
 * phase and in verify_backlog batches that come before a sync. */
START_TEST(test_run_verify_reads_back_buffered_writes_of_a_syncing_job)
{
	unsigned long long blocks, reads, blocks0, reads0;

	run_ok("[w]\nrw=write\nbs=4k\nsize=256k\nfsync=3\nverify=crc32c\n"
	       "nrfiles=2\n", &blocks, &reads);
	ck_assert_uint_eq(blocks, 64);
	/* random writes: the blocks the same job without syncs verifies */
	run_ok("[w]\nrw=randwrite\nbs=4k\nsize=256k\nfsync=3\n"
	       "verify=crc32c\nnrfiles=2\n", &blocks, &reads);
	run_ok("[w]\nrw=randwrite\nbs=4k\nsize=256k\nverify=crc32c\n"
	       "nrfiles=2\n", &blocks0, &reads0);
	ck_assert_uint_eq(blocks, blocks0);
	ck_assert_uint_gt(blocks, 32);
	run_ok("[w]\nrw=write\nbs=4k\nsize=64k\nfsync=8\nverify=md5\n"
	       "verify_backlog=3\n", &blocks, &reads);
	ck_assert_uint_eq(blocks, 16);
}
END_TEST

START_TEST(test_run_verify_after_each_loop_and_in_backlog_batches)
{
	unsigned long long blocks, reads;

	/* two loops: a verify phase after each */
	run_ok("[w]\nrw=write\nbs=4k\nsize=64k\nloops=2\nverify=md5\n",
	       &blocks, &reads);
	ck_assert_uint_eq(blocks, 32);
	/* verify_backlog=4: batches of 4 while writing, the rest at the
	 * end; every block once */
	run_ok("[w]\nrw=write\nbs=4k\nsize=64k\nverify=xxhash\n"
	       "verify_backlog=4\n", &blocks, &reads);
	ck_assert_uint_eq(blocks, 16);
	/* do_verify=0: none */
	run_ok("[w]\nrw=write\nbs=4k\nsize=64k\nverify=md5\ndo_verify=0\n",
	       &blocks, &reads);
	ck_assert_uint_eq(blocks, 0);
	ck_assert_uint_eq(reads, 0);
	/* a runtime that ends the writes ends the job without a verify */
	run_ok("[w]\nrw=write\nbs=4k\nsize=64m\nverify=md5\nruntime=1ms\n",
	       &blocks, &reads);
	ck_assert_uint_eq(blocks, 0);
}
END_TEST

START_TEST(test_run_verify_only_and_readers_check_what_was_written)
{
	unsigned long long blocks, reads;

	/* a writer without its verify, then a verify_only job and a
	 * reader with verify over the same file */
	run_ok("[global]\nbs=4k\nsize=64k\nfilename=/f\nverify=crc64\n"
	       "[w]\nrw=write\ndo_verify=0\n"
	       "[v]\nstonewall\nrw=write\nverify_only=1\n"
	       "[r]\nstonewall\nrw=read\n", &blocks, &reads);
	ck_assert_uint_eq(blocks, 32);
}
END_TEST

START_TEST(test_run_verify_on_the_raw_zbd_target)
{
	unsigned long long blocks, reads;

	/* 4 jobs of random writes at the write pointers of a zoned
	 * device: each of their blocks reads back */
	run_ok("[global]\nzonemode=zbd\nrw=randwrite\nbs=64k\nsize=4z\n"
	       "verify=crc32\nnumjobs=4\noffset_increment=4z\n"
	       "[zcow]\ndevice=sim:zones=32,zone_size=1M\n[w]\n",
	       &blocks, &reads);
	ck_assert_uint_eq(blocks, 4 * 4 * 16);
}
END_TEST

static const char raw_write[] =
	"[global]\nfilename=/dev/sdx\nbs=4k\nsize=64k\nverify=crc32c\n"
	"[zcow]\ntarget=raw\ndevice=file:" IMG ",zone_size=1M,size=4M\n"
	"[w]\nrw=write\ndo_verify=0\n";
static const char raw_read[] =
	"[global]\nfilename=/dev/sdx\nbs=4k\nsize=64k\nverify=crc32c\n"
	"[zcow]\ntarget=raw\ndevice=file:" IMG ",zone_size=1M,size=4M\n"
	"[r]\nrw=read\n";

START_TEST(test_run_verify_fails_on_a_block_changed_under_the_device)
{
	char *dir, *err, *s;
	FILE *f;
	int status;

	ck_assert_int_eq(system("rm -f " IMG), 0);
	status = run_job(raw_write, &dir, &err);
	ck_assert_msg(status == 0, "%s", err);
	free(dir);
	free(err);
	/* the device reopened: the reader verifies what was written */
	status = run_job(raw_read, &dir, &err);
	ck_assert_msg(status == 0 && !err[0], "%s", err);
	free(dir);
	free(err);
	/* two bytes of the third block change on the medium */
	f = fopen(IMG, "r+b");
	ck_assert_ptr_nonnull(f);
	fseek(f, 8192 + 100, SEEK_SET);
	fputc(0x00, f);
	fputc(0xff, f);
	fclose(f);
	status = run_job(raw_read, &dir, &err);
	ck_assert_int_eq(status, 1);
	ck_assert_str_eq(err, "zcow run: job 'r': crc32c: verify failed at "
			 "file /dev/sdx offset 8192, length 4096 (requested "
			 "block: offset=8192, length=4096): expected CRC "
			 "521ae149, received CRC 5fe80aa5\n");
	/* the results are written: the reader stopped at the bad block */
	ck_assert_ptr_nonnull(dir);
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(num(s, "failures"), 1);
	ck_assert_uint_eq(num(s, "blocks_verified"), 3);
	ck_assert(strstr(s, "\"messages\": [\"job 'r': crc32c: verify failed "
			    "at file /dev/sdx offset 8192"));
	free(s);
	free(dir);
	free(err);
}
END_TEST

START_TEST(test_run_verify_catches_a_block_another_writer_replaced)
{
	char *dir, *err, *s;
	int status;

	/* b rewrites the first block of a's file before a reads it back:
	 * a finds b's header, another write's seed */
	status = run_job("[global]\nfilename=/f\nbs=4k\nverify=crc32c\n"
			 "[a]\nrw=write\nsize=64k\n"
			 "[b]\nrw=write\nsize=4k\ndo_verify=0\n", &dir, &err);
	ck_assert_int_eq(status, 1);
	ck_assert_msg(!strncmp(err, "zcow run: job 'a': verify: bad header "
			       "rand_seed ", 37), "%s", err);
	ck_assert_msg(strstr(err, " at file /f offset 0, length 4096 "
				  "(requested block: offset=0, "
				  "length=4096)\n"), "%s", err);
	s = zcow_test_summary(dir);
	ck_assert_uint_eq(num(s, "failures"), 1);
	free(s);
	free(dir);
	free(err);
}
END_TEST

/* fio 3.33 reads what zcow wrote (its verify_only over the device file),
 * for every checksum fio computes as the standard does. */
START_TEST(test_run_verify_zcow_blocks_pass_fios_verify_only)
{
	static const char *const types[] = {
		"md5", "crc64", "crc32", "crc32c", "crc16", "crc7", "xxhash",
		"sha1", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "meta",
	};
	char job[1024], cmd[1024], *dir, *err;
	size_t i;

	ck_assert_msg(system("fio --version >/dev/null 2>&1") == 0,
		      "no fio binary to compare with (./run.sh installs it)");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		snprintf(job, sizeof(job), "[global]\nfilename=/dev/sdx\n"
			 "bs=16k\nsize=256k\nverify=%s\nverify_interval=4k\n"
			 "[zcow]\ntarget=raw\ndevice=file:" IMG
			 ",zone_size=1M,size=4M\n[w]\nrw=write\n"
			 "do_verify=0\n", types[i]);
		ck_assert_int_eq(system("rm -f " IMG), 0);
		ck_assert_int_eq(run_job(job, &dir, &err), 0);
		free(dir);
		free(err);
		snprintf(cmd, sizeof(cmd), "fio --name=v --filename=" IMG
			 " --rw=read --bs=16k --size=256k --verify=%s "
			 "--verify_interval=4k --verify_state_save=0 "
			 "--output=/dev/null", types[i]);
		ck_assert_msg(system(cmd) == 0, "fio does not verify %s",
			      types[i]);
	}
	ck_assert_int_eq(system("rm -rf " RES), 0);
}
END_TEST

Suite *run_verify_suite(void)
{
	Suite *s = suite_create("run_verify_suite");
	TCase *tc = tcase_create("verify");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc,
		test_run_verify_reads_back_random_overwrites_on_files);
	tcase_add_test(tc,
		test_run_verify_after_each_loop_and_in_backlog_batches);
	tcase_add_test(tc,
		test_run_verify_only_and_readers_check_what_was_written);
	tcase_add_test(tc, test_run_verify_on_the_raw_zbd_target);
	tcase_add_test(tc,
		test_run_verify_reads_back_buffered_writes_of_a_syncing_job);
	tcase_add_test(tc,
		test_run_verify_fails_on_a_block_changed_under_the_device);
	tcase_add_test(tc,
		test_run_verify_catches_a_block_another_writer_replaced);
	tcase_add_test(tc, test_run_verify_zcow_blocks_pass_fios_verify_only);
	suite_add_tcase(s, tc);
	return s;
}
