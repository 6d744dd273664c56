// SPDX-License-Identifier: MIT
/*
 * The runner end to end: raw-device runs in simulated time, determinism of
 * summary.json, the fs stub's clean failure, and sweep.py + plot.py.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "tests.h"

#define RES "/tmp/zcow-test-run"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int c;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	m = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return buf;
}

/* summary.json without its wall-clock lines. */
static char *summary_no_wall(const char *dir)
{
	char path[1024], *s, *o, *p;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	s = slurp(path);
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

static double json_num(const char *json, const char *key)
{
	const char *p = strstr(json, key);

	ck_assert_msg(p != NULL, "no %s", key);
	return strtod(p + strlen(key) + 2, NULL);
}

static char *run_raw(const char *const *sets, unsigned int nr)
{
	char *dir = NULL;

	ck_assert_int_eq(zrun_scenario("configs/raw-randwrite-4k.scenario",
				       sets, nr, RES, true, &dir), 0);
	return dir;
}

START_TEST(test_run_same_scenario_twice_is_byte_identical)
{
	const char *sets[] = { "runtime=20ms", "numjobs=4" };
	char *d1 = run_raw(sets, 2), *d2 = run_raw(sets, 2);
	char *s1 = summary_no_wall(d1), *s2 = summary_no_wall(d2);
	char p1[1024], p2[1024];
	char *i1, *i2;

	ck_assert_str_ne(d1, d2);
	ck_assert_str_eq(s1, s2);
	snprintf(p1, sizeof(p1), "%s/intervals.csv", d1);
	snprintf(p2, sizeof(p2), "%s/intervals.csv", d2);
	i1 = slurp(p1);
	i2 = slurp(p2);
	ck_assert_str_eq(i1, i2);
	free(i1);
	free(i2);
	free(s1);
	free(s2);
	free(d1);
	free(d2);
}
END_TEST

START_TEST(test_run_raw_16_jobs_writes_182k_appends_132k)
{
	const char *w[] = { "runtime=50ms", "numjobs=16" };
	const char *a[] = { "runtime=50ms", "numjobs=16", "zone_append=on" };
	char *dw = run_raw(w, 2), *da = run_raw(a, 3);
	char *sw = summary_no_wall(dw), *sa = summary_no_wall(da);
	double iw = json_num(sw, "\"iops\""), ia = json_num(sa, "\"iops\"");

	ck_assert_msg(iw > 182000 * 0.99 && iw < 182000 * 1.01, "%f", iw);
	ck_assert_msg(ia > 132000 * 0.99 && ia < 132000 * 1.01, "%f", ia);
	ck_assert(strstr(sw, "\"zone_unusable\": 0"));
	ck_assert(strstr(sw, "\"git_commit\": "));
	free(sw);
	free(sa);
	free(dw);
	free(da);
}
END_TEST

START_TEST(test_run_raw_1_job_write_qd1_85k)
{
	const char *w[] = { "runtime=50ms", "numjobs=1" };
	char *dw = run_raw(w, 2), *sw = summary_no_wall(dw);
	double iw = json_num(sw, "\"iops\"");

	ck_assert_msg(iw > 85100 * 0.99 && iw < 85100 * 1.01, "%f", iw);
	free(sw);
	free(dw);
}
END_TEST

START_TEST(test_run_seq_128k_reaches_bandwidth_ceiling)
{
	const char *sets[] = { "runtime=50ms" };
	char *dir = NULL, *s;
	double bw;

	ck_assert_int_eq(zrun_scenario("configs/raw-seqwrite-128k.scenario",
				       sets, 1, RES, true, &dir), 0);
	s = summary_no_wall(dir);
	bw = json_num(s, "\"bw_mib_per_s\"");
	ck_assert_msg(bw > 1146 * 0.99 && bw < 1146 * 1.01, "%f", bw);
	free(s);
	free(dir);
}
END_TEST

START_TEST(test_run_zone_reset_gc_example_resets_zones)
{
	const char *sets[] = { "runtime=10" };
	char *dir = NULL, *s;

	ck_assert_int_eq(zrun_scenario(
		"configs/fio-examples/zbd-rand-write-zone-reset-gc.scenario",
		sets, 1, RES, true, &dir), 0);
	s = summary_no_wall(dir);
	ck_assert(json_num(s, "\"zone_resets\"") > 0);
	free(s);
	free(dir);
}
END_TEST

START_TEST(test_run_fs_target_fails_cleanly_until_file_layer)
{
	char *dir = NULL;

	ck_assert_int_eq(zrun_scenario("configs/seed-zone-append.scenario",
				       NULL, 0, RES, true, &dir),
			 -EOPNOTSUPP);
	ck_assert_ptr_null(dir);
}
END_TEST

START_TEST(test_run_bad_zcow_option_names_file_line)
{
	FILE *f = fopen("/tmp/zcow-test-bad.scenario", "w");
	char *dir = NULL;

	fprintf(f, "[j]\nzonemode=zbd\n[zcow]\nprofile=warp\n");
	fclose(f);
	ck_assert_int_eq(zrun_scenario("/tmp/zcow-test-bad.scenario", NULL,
				       0, RES, true, &dir), -EINVAL);
	unlink("/tmp/zcow-test-bad.scenario");
}
END_TEST

START_TEST(test_run_sweep_and_plot_write_png_svg_tables)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[2048];
	static const char *const files[] = {
		RES "/plot/iops.png", RES "/plot/iops.svg",
		RES "/plot/table.md", RES "/plot/table.csv",
	};
	struct stat st;
	size_t i;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set: run through make "
				   "test");
	snprintf(cmd, sizeof(cmd),
		 "rm -rf " RES "/sweep " RES "/plot && "
		 "python3 harness/sweep.py --zcow %s --results " RES "/sweep "
		 "--set runtime=10ms configs/raw-randwrite-4k.scenario "
		 "--grid numjobs=1,4 zone_append=on,off >/dev/null && "
		 "python3 harness/plot.py --out " RES "/plot --x numjobs "
		 "--series zone_append " RES "/sweep >/dev/null", bin);
	ck_assert_int_eq(system(cmd), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ck_assert_msg(stat(files[i], &st) == 0, "%s missing",
			      files[i]);
		ck_assert_msg(st.st_size > 0, "%s empty", files[i]);
	}
}
END_TEST

Suite *run_suite(void)
{
	Suite *s = suite_create("run_suite");
	TCase *tc = tcase_create("raw");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_same_scenario_twice_is_byte_identical);
	tcase_add_test(tc, test_run_raw_16_jobs_writes_182k_appends_132k);
	tcase_add_test(tc, test_run_raw_1_job_write_qd1_85k);
	tcase_add_test(tc, test_run_seq_128k_reaches_bandwidth_ceiling);
	tcase_add_test(tc, test_run_zone_reset_gc_example_resets_zones);
	tcase_add_test(tc, test_run_fs_target_fails_cleanly_until_file_layer);
	tcase_add_test(tc, test_run_bad_zcow_option_names_file_line);
	tcase_add_test(tc, test_run_sweep_and_plot_write_png_svg_tables);
	suite_add_tcase(s, tc);
	return s;
}
