// SPDX-License-Identifier: MIT
/*
 * Fixtures shared by the suites: a simulated device of a given geometry,
 * a file system made and mounted on it, unmount/mount, the checker's
 * problem printer, a seeded byte pattern, a scenario run and its
 * summary.json, a log sink that keeps the last error.  Each
 * suite keeps its own geometry and seeds and passes them in; nothing here
 * picks one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "run.h"
#include "tests.h"
#include "zcow.h"
#include "zlog.h"
#include "zsim.h"

struct zdev *zcow_test_sim(const struct zsim_config *cfg)
{
	struct zdev *dev = NULL;

	ck_assert_int_eq(zsim_create(cfg, &dev), 0);
	return dev;
}

void zcow_test_print_problem(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "check: %s\n", msg);
}

void zcow_test_assert_clean(struct zcow_fs *fs)
{
	ck_assert_int_eq(zcow_check(fs, zcow_test_print_problem, NULL), 0);
}

struct zcow_fs *zcow_test_mkfs_mount(struct zdev *dev, uint64_t mkfs_seed,
				     const struct zcow_mount_opts *opts)
{
	struct zcow_mkfs_opts mo = { .seed = mkfs_seed };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, opts, &fs), 0);
	return fs;
}

struct zcow_fs *zcow_test_mount_parse(struct zdev *dev, const char *opts)
{
	struct zcow_mount_opts mo = { 0 };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mount_opts_parse(opts, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	return fs;
}

struct zcow_fs *zcow_test_sim_fs(const struct zsim_config *cfg,
				 uint64_t mkfs_seed,
				 const struct zcow_mount_opts *opts)
{
	return zcow_test_mkfs_mount(zcow_test_sim(cfg), mkfs_seed, opts);
}

struct zcow_fs *zcow_test_remount(struct zcow_fs *fs,
				  const struct zcow_mount_opts *opts)
{
	struct zdev *dev = fs->dev;

	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = NULL;
	ck_assert_int_eq(zcow_mount(dev, opts, &fs), 0);
	return fs;
}

void zcow_test_close_fs(struct zcow_fs *fs)
{
	struct zdev *dev = fs->dev;

	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}

void zcow_test_fill_lcg(uint8_t *buf, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
}

char *zcow_test_scenario_ok(const char *path, const char *const *sets,
			    unsigned int nr, const char *res)
{
	char *dir = NULL;

	ck_assert_int_eq(zrun_scenario(path, sets, nr, res, true, &dir), 0);
	return dir;
}

char *zcow_test_summary(const char *dir)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	return zcow_test_read_path(path);
}

char *zcow_test_summary_no_wall(const char *dir)
{
	char *s = zcow_test_summary(dir), *o, *p;

	o = calloc(1, strlen(s) + 1);
	for (p = strtok(s, "\n"); p; p = strtok(NULL, "\n")) {
		if (strstr(p, "wall_time_s"))
			continue;
		strcat(o, p);
		strcat(o, "\n");
	}
	free(s);
	return o;
}

void zcow_test_log_sink(void *arg, enum zlog_level level, const char *tag,
			const char *msg)
{
	struct zcow_test_log *log = arg;

	(void)tag;
	if (level >= ZLOG_ERR)
		snprintf(log->buf, log->size, "%s", msg);
}
