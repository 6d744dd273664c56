/* SPDX-License-Identifier: MIT */
/*
 * Shared test helpers and the list of suites (one per tests/test_<module>.c).
 */
#ifndef ZCOW_TESTS_H
#define ZCOW_TESTS_H

#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "zlog.h"

#define ZCOW_TEST_SUITES        \
	SUITE(zdev_suite)      \
	SUITE(sim_suite)       \
	SUITE(sim_power_suite) \
	SUITE(sim_image_suite) \
	SUITE(sim_model_suite) \
	SUITE(sim_ckpt_suite)  \
	SUITE(zdev_file_suite) \
	SUITE(zdev_zbd_suite)  \
	SUITE(sb_suite)        \
	SUITE(sb_crash_suite)  \
	SUITE(ctree_suite)     \
	SUITE(volumes_suite)   \
	SUITE(transaction_suite) \
	SUITE(inode_suite)     \
	SUITE(posix_attrs_suite) \
	SUITE(snapshot_suite)  \
	SUITE(files_model_suite) \
	SUITE(file_suite)      \
	SUITE(zoned_suite)     \
	SUITE(reclaim_suite)   \
	SUITE(space_suite)     \
	SUITE(devices_suite)   \
	SUITE(replace_suite)   \
	SUITE(tree_log_suite)  \
	SUITE(posix_links_suite) \
	SUITE(crash_suite)     \
	SUITE(crash_ops_suite) \
	SUITE(crash_shard_suite) \
	SUITE(cli_suite)       \
	SUITE(cli_devices_suite) \
	SUITE(conform_suite)   \
	SUITE(fio_suite)       \
	SUITE(fio_gen_suite)   \
	SUITE(fio_ctl_suite)   \
	SUITE(fio_verify_suite) \
	SUITE(fio_log_suite)   \
	SUITE(ztime_suite)     \
	SUITE(run_suite)       \
	SUITE(run_verify_suite) \
	SUITE(dbench_suite)    \
	SUITE(fio_examples_suite) \
	SUITE(gc_suite)        \
	SUITE(gcbench_suite)   \
	SUITE(fsync_table_suite) \
	SUITE(corpus_suite)    \
	SUITE(btrfs_check_suite) \
	SUITE(ops_record_suite) \
	SUITE(fuse_suite)      \
	SUITE(sweep_suite)     \
	SUITE(vm_compat_suite) \
	SUITE(vm_suite)		/* keep last: the VM smoke run (ZCOW_VM=1) */

#define SUITE(name) Suite *name(void);
ZCOW_TEST_SUITES
#undef SUITE

/*
 * The zcow tool in a child process (tests/tool.c): $ZCOW_BIN with the
 * NULL-terminated arguments; its stdout and stderr in *out_ret and
 * *err_ret (malloc'd; either pointer may be NULL).  Returns the exit
 * status, -1 if it did not exit.
 */
const char *zcow_test_bin(void);
int zcow_test_run(char **out_ret, char **err_ret, const char *arg, ...);
int zcow_test_runv(char **out_ret, char **err_ret, const char *arg,
		   va_list ap);

/* One run's exit status and output, cut to ZCOW_TEST_MAX_OUT bytes each:
 * zcow_test_runv() into @res. */
#define ZCOW_TEST_MAX_OUT 65536
struct zcow_test_res {
	int status;
	char out[ZCOW_TEST_MAX_OUT];
	char err[ZCOW_TEST_MAX_OUT];
};
void zcow_test_run_into(struct zcow_test_res *res, const char *arg,
			va_list ap);
/* The same with the NULL-terminated arguments. */
void zcow_test_run_res(struct zcow_test_res *res, const char *arg, ...);

/* Write @len bytes of @buf as file @path (created or truncated), and
 * check that @path holds exactly @want (size and bytes). */
struct zcow_fs;
void zcow_test_put(struct zcow_fs *fs, const char *path, const void *buf,
		   uint64_t len);
void zcow_test_expect(struct zcow_fs *fs, const char *path, const void *want,
		      uint64_t len);

/* @size bytes made from @seed (zcow_test_files()'s contents). */
void zcow_test_fill(uint8_t *buf, uint64_t size, int seed);
/* Files /f@first .. /f(@first + @n - 1) of @size bytes, each with bytes
 * made from its number: written (@is_put), or checked byte for byte. */
void zcow_test_files(struct zcow_fs *fs, int first, int n, uint64_t size,
		     bool is_put);

/* Everything left to read in @f, as a malloc'd string. */
char *zcow_test_read_all(FILE *f);
/* The whole file at @path, NUL-terminated (fails the test if missing). */
char *zcow_test_read_path(const char *path);
/* The stdout of the shell command @cmd (malloc'd); its exit status in
 * *@status (-1: it did not exit). */
char *zcow_test_capture(const char *cmd, int *status);

/* fio job text parsed as "t.fio" (tests/fio_tool.c): it parses (the
 * spec, for zfio_free()), or it is refused (-EINVAL) with exactly @want,
 * or with a message holding @want. */
struct zfio_spec;
struct zfio_spec *zcow_test_parse_ok(const char *text);
void zcow_test_parse_err(const char *text, const char *want);
void zcow_test_parse_err_has(const char *text, const char *want);
/* Write @text to @path and run it in this process (zrun_scenario() with
 * @sets, results under @res): its return, the results folder or NULL in
 * *@dir_ret, its stderr (malloc'd) in *@err_ret; @path is removed. */
int zcow_test_scenario(const char *path, const char *text,
		       const char *const *sets, unsigned int nr,
		       const char *res, char **dir_ret, char **err_ret);

/*
 * Fixtures (tests/fixtures.c).  A suite passes its own geometry and seeds;
 * every helper fails the test on an error.
 */
struct zdev;
struct zsim_config;
struct zcow_mount_opts;
/* A simulated device made from @cfg. */
struct zdev *zcow_test_sim(const struct zsim_config *cfg);
/* The checker's problem callback: "check: MSG" on stderr; @arg unused. */
void zcow_test_print_problem(void *arg, const char *msg);
/* zcow_check() finds no problem in @fs (each printed). */
void zcow_test_assert_clean(struct zcow_fs *fs);
/* mkfs @dev (zcow_mkfs_opts.seed = @mkfs_seed, the rest 0), then mount
 * it with @opts (NULL: the defaults). */
struct zcow_fs *zcow_test_mkfs_mount(struct zdev *dev, uint64_t mkfs_seed,
				     const struct zcow_mount_opts *opts);
/* Mount @dev with the options in text @opts ("a=1,b", as zcow mount -o). */
struct zcow_fs *zcow_test_mount_parse(struct zdev *dev, const char *opts);
/* zcow_test_sim(@cfg), then zcow_test_mkfs_mount(). */
struct zcow_fs *zcow_test_sim_fs(const struct zsim_config *cfg,
				 uint64_t mkfs_seed,
				 const struct zcow_mount_opts *opts);
/* Unmount @fs and mount its device again with @opts (no check). */
struct zcow_fs *zcow_test_remount(struct zcow_fs *fs,
				  const struct zcow_mount_opts *opts);
/* Unmount @fs and close its device. */
void zcow_test_close_fs(struct zcow_fs *fs);
/* @len bytes of a linear congruential sequence from @seed. */
void zcow_test_fill_lcg(uint8_t *buf, uint64_t len, uint32_t seed);
/* Run scenario file @path with @sets (results under @res), in this
 * process; it must succeed: its results folder (malloc'd). */
char *zcow_test_scenario_ok(const char *path, const char *const *sets,
			    unsigned int nr, const char *res);
/* The summary.json of results folder @dir (malloc'd), whole or without
 * its wall-clock lines ("wall_time_s"). */
char *zcow_test_summary(const char *dir);
char *zcow_test_summary_no_wall(const char *dir);

/* A zlog sink (zlog_set_sink(zcow_test_log_sink, &log)) that keeps the
 * last error-level message in @log->buf (@log->size bytes, cut). */
struct zcow_test_log {
	char *buf;
	size_t size;
};
void zcow_test_log_sink(void *arg, enum zlog_level level, const char *tag,
			const char *msg);

/* Directory of the test vectors (tests/data), relative to the repo root. */
#define ZCOW_TESTDATA "tests/data"

#endif /* ZCOW_TESTS_H */
