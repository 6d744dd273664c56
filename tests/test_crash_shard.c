// SPDX-License-Identifier: MIT
/*
 * Shards of a crash campaign (zcow crash --shard I/N, zcow crash
 * --merge, docs/crash.md "Shards"): the N shards' folders merged are the
 * whole run's folder byte for byte but for the wall-clock figures
 * (seconds, states a minute) and the folder's name; the merge refuses
 * shards of different campaigns, a shard missing, given twice or cut
 * short; --shard takes I/N with 1 <= I <= N only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "tests.h"
#include "fs.h"

#define SCN "configs/crash-ops-atomic.scenario"
#define SMALL "configs/crash-commit.scenario"

/* The "results: DIR" line of a campaign's stdout (malloc'd). */
static char *results_dir(const char *out)
{
	const char *p = strstr(out, "\nresults: ");
	const char *nl;

	ck_assert_msg(p, "no results line in %s", out);
	p += 10;
	nl = strchr(p, '\n');
	ck_assert_ptr_nonnull(nl);
	return strndup(p, nl - p);
}

static char *slurp_in(const char *dir, const char *file)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return zcow_test_read_path(path);
}

/* @text without its lines that start with one of @drop (NULL-ended). */
static char *without_lines(const char *text, const char *const *drop)
{
	char *out = calloc(1, strlen(text) + 1);
	const char *p = text;

	ck_assert_ptr_nonnull(out);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
		const char *const *d;
		bool keep = true;

		for (d = drop; *d; d++)
			if (!strncmp(p, *d, strlen(*d)))
				keep = false;
		if (keep)
			strncat(out, p, len);
		p += len;
	}
	return out;
}

static const char *const wall_json[] = { "  \"seconds\": ",
					 "  \"states_per_minute\": ", NULL };
/* lines of the run, not of its result: the wall clock, and the states
 * that shared an image with an earlier loss of their point (a shard
 * finds those only among the losses it runs) */
static const char *const wall_table[] = { "  seconds ", "results: ",
					   "  same image ", NULL };

/* The two folders' @file the same bytes, but for lines in @drop. */
static void assert_same(const char *a, const char *b, const char *file,
			const char *const *drop)
{
	char *x = slurp_in(a, file), *y = slurp_in(b, file);
	char *x2 = without_lines(x, drop), *y2 = without_lines(y, drop);

	ck_assert_msg(!strcmp(x2, y2), "%s differs:\n--- %s\n%.1500s\n--- %s\n%.1500s",
		      file, a, x2, b, y2);
	free(x);
	free(y);
	free(x2);
	free(y2);
}

static const char *const nothing[] = { NULL };

/* zcow crash SCENARIO --quick [OPT VAL] --results PARENT [--shard I/N]
 * (when @n): its folder (malloc'd), its stdout in *@out_ret (when not
 * NULL). */
static char *run_shard(const char *scn, const char *parent, int i, int n,
		       const char *opt, const char *val, char **out_ret)
{
	const char *a[5] = { NULL };
	char shard[32], *out, *err, *dir;
	int st, k = 0;

	snprintf(shard, sizeof(shard), "%d/%d", i, n);
	if (opt) {
		a[k++] = opt;
		a[k++] = val;
	}
	if (n) {
		a[k++] = "--shard";
		a[k++] = shard;
	}
	st = zcow_test_run(&out, &err, "crash", scn, "--quick", "--results",
			   parent, a[0], a[1], a[2], a[3], NULL);
	ck_assert_msg(st == 0, "exit %d: %s", st, err);
	dir = results_dir(out);
	free(err);
	if (out_ret)
		*out_ret = out;
	else
		free(out);
	return dir;
}

static void rm_rf(const char *dir)
{
	char cmd[1100];
	int st;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	free(zcow_test_capture(cmd, &st));
}

/*
 * Four shards of crash-ops-atomic --quick (both tree-log modes, states
 * with recovery cuts) merged: crash.csv byte for byte the whole run's,
 * crash.json and the table too but for the wall-clock lines, the
 * scenario and the ops file copied; each shard's table and crash.json
 * say which shard of how many it is.
 */
START_TEST(test_four_shards_merged_equal_the_whole_run)
{
	char parent[] = "/tmp/zcrash-shard-XXXXXX", sp[64], want[64];
	char *whole, *wout, *shards[4], *sout, *mout, *merged, *js, *err;
	int i, st;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	whole = run_shard(SCN, parent, 0, 0, NULL, NULL, &wout);
	snprintf(sp, sizeof(sp), "%s/shards", parent);
	for (i = 0; i < 4; i++) {
		shards[i] = run_shard(SCN, sp, i + 1, 4, NULL, NULL, &sout);
		snprintf(want, sizeof(want), ", shard %d/4\n", i + 1);
		ck_assert_msg(strstr(sout, want), "%s", sout);
		js = slurp_in(shards[i], "crash.json");
		snprintf(want, sizeof(want),
			 "\n  \"shard\": {\"index\": %d, \"of\": 4},\n", i + 1);
		ck_assert_msg(strstr(js, want), "%s", js);
		free(js);
		free(sout);
	}
	/* any order of the folders */
	st = zcow_test_run(&mout, &err, "crash", "--merge", shards[2],
			   shards[0], shards[3], shards[1], "--results",
			   parent, NULL);
	ck_assert_msg(st == 0, "exit %d: %s", st, err);
	merged = results_dir(mout);
	ck_assert_str_ne(merged, whole);
	assert_same(whole, merged, "crash.csv", nothing);
	assert_same(whole, merged, "crash.json", wall_json);
	assert_same(whole, merged, "crash-ops-atomic.scenario", nothing);
	assert_same(whole, merged, "atomic-replace.ops", nothing);
	ck_assert_int_ne(access(merged, F_OK), -1);
	{
		char *a = without_lines(wout, wall_table);
		char *b = without_lines(mout, wall_table);

		ck_assert_msg(!strcmp(a, b), "table differs:\n%.1500s\n%.1500s",
			      a, b);
		ck_assert_ptr_nonnull(strstr(a, "recovery cut again"));
		free(a);
		free(b);
	}
	/* the merged folder is no shard */
	js = slurp_in(merged, "crash.json");
	ck_assert_ptr_null(strstr(js, "\"shard\""));
	free(js);
	{
		char path[1024];

		snprintf(path, sizeof(path), "%s/shard.json", merged);
		ck_assert_int_eq(access(path, F_OK), -1);
	}
	for (i = 0; i < 4; i++)
		free(shards[i]);
	free(whole);
	free(wout);
	free(mout);
	free(merged);
	free(err);
	rm_rf(parent);
}
END_TEST

/* --shard 1/1 runs every state: crash.csv the whole run's, crash.json
 * too but for its shard line and the wall clock. */
START_TEST(test_shard_one_of_one_is_the_whole_run)
{
	static const char *const drop[] = { "  \"seconds\": ",
					    "  \"states_per_minute\": ",
					    "  \"shard\": ", NULL };
	char parent[] = "/tmp/zcrash-shard-XXXXXX";
	char *whole, *one;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	whole = run_shard(SMALL, parent, 0, 0, "--replay-cuts", "every", NULL);
	one = run_shard(SMALL, parent, 1, 1, "--replay-cuts", "every", NULL);
	assert_same(whole, one, "crash.csv", nothing);
	assert_same(whole, one, "crash.json", drop);
	free(whole);
	free(one);
	rm_rf(parent);
}
END_TEST

/*
 * Violations (crash-commit with the superblock written before its
 * flush) merge in the whole run's order: crash.json's list, crash.csv's
 * rows, the violation and repro lines printed; the merge exits 1 as the
 * campaign does.
 */
START_TEST(test_merged_violations_keep_the_whole_runs_order)
{
	char parent[] = "/tmp/zcrash-shard-XXXXXX", sp[64];
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .treelog = "both",
				 .mutation = ZCOW_MUT_SB_BEFORE_FLUSH };
	struct zcrash_summary whole, sum;
	char *dirs[3], *out, *err, *merged, *p;
	uint64_t nr = 0;
	int i, st;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	o.results = parent;
	ck_assert_int_eq(zcrash_run(SMALL, &o, &whole), 1);
	ck_assert_uint_gt(whole.violations, 2);
	/* the whole run takes the verdicts of states whose image an
	 * earlier loss of their point left; 3 shards of 3 losses a point
	 * run each loss of a point in another shard, so none: the verdicts
	 * must agree all the same */
	ck_assert_uint_gt(whole.tried_same, 0);
	snprintf(sp, sizeof(sp), "%s/shards", parent);
	o.results = sp;
	o.shard_n = 3;
	for (i = 0; i < 3; i++) {
		o.shard_i = i + 1;
		ck_assert_int_ge(zcrash_run(SMALL, &o, &sum), 0);
		ck_assert_uint_eq(sum.tried_same, 0);
		dirs[i] = strdup(sum.dir);
	}
	st = zcow_test_run(&out, &err, "crash", "--merge", dirs[0], dirs[1],
			   dirs[2], "--results", parent, NULL);
	ck_assert_msg(st == 1, "exit %d: %s", st, err);
	merged = results_dir(out);
	assert_same(whole.dir, merged, "crash.csv", nothing);
	assert_same(whole.dir, merged, "crash.json", wall_json);
	/* a violation: and a repro: line per violating state, the first
	 * the whole run's first */
	for (p = out; (p = strstr(p, "\nrepro: ")); p++)
		nr++;
	ck_assert_uint_eq(nr, whole.violations);
	p = strstr(out, "repro: ");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(strncmp(p + 7, whole.first_repro,
				 strlen(whole.first_repro)), 0);
	for (i = 0; i < 3; i++)
		free(dirs[i]);
	free(out);
	free(err);
	free(merged);
	rm_rf(parent);
}
END_TEST

/* The shards of crash-commit --quick in @dirs[0..n-1] under @parent. */
static void four_shards(const char *parent, char **dirs)
{
	int i;

	for (i = 0; i < 4; i++)
		dirs[i] = run_shard(SMALL, parent, i + 1, 4, NULL, NULL, NULL);
}

/* zcow crash --merge ARGS...: exit 2 and @want in its stderr. */
static void merge_refused(const char *want, const char *a, const char *b,
			  const char *c, const char *d, const char *e)
{
	char *out, *err;
	int st = zcow_test_run(&out, &err, "crash", "--merge", a, b, c, d, e,
			       NULL);

	ck_assert_msg(st == 2, "exit %d, stdout %s", st, out);
	ck_assert_msg(strstr(err, want), "want '%s' in '%s'", want, err);
	free(out);
	free(err);
}

/* Replace @from by @to in DIR/FILE (the first occurrence). */
static void edit(const char *dir, const char *file, const char *from,
		 const char *to)
{
	char path[1024], *text = slurp_in(dir, file), *p = strstr(text, from);
	FILE *f;

	ck_assert_ptr_nonnull(p);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	ck_assert_int_eq(fclose(f), 0);
	free(text);
}

/*
 * A shard missing, a shard given twice, or too many/few folders: refused
 * naming the shard; nothing merged.
 */
START_TEST(test_merge_refuses_missing_and_duplicated_shards)
{
	char parent[] = "/tmp/zcrash-shard-XXXXXX", want[1200];
	char *d[4];
	int i;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	four_shards(parent, d);
	merge_refused("zcow crash --merge: shard 3/4 missing\n", d[0], d[1],
		      d[3], NULL, NULL);
	snprintf(want, sizeof(want),
		 "zcow crash --merge: shard 2/4 given twice: %s and %s\n",
		 d[1], d[1]);
	merge_refused(want, d[0], d[1], d[1], d[2], d[3]);
	for (i = 0; i < 4; i++)
		free(d[i]);
	rm_rf(parent);
}
END_TEST

/*
 * Shards of different campaigns (another zcow version, another seed,
 * another scenario or settings, another N) are refused, naming both
 * folders and what differs.
 */
START_TEST(test_merge_refuses_shards_of_different_campaigns)
{
	char parent[] = "/tmp/zcrash-shard-XXXXXX", want[1200];
	char *d[4], *other, *third;
	int i;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	four_shards(parent, d);
	/* another campaign: crash-commit with both tree-log modes */
	other = run_shard(SMALL, parent, 4, 4, "--treelog", "both", NULL);
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s and %s are shards of different campaigns: the campaign hash (scenario, ops file, settings) differs\n",
		 d[0], other);
	merge_refused(want, d[0], d[1], d[2], other, NULL);
	/* another N */
	third = run_shard(SMALL, parent, 3, 3, NULL, NULL, NULL);
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s and %s are shards of different campaigns: the number of shards differs\n",
		 d[0], third);
	merge_refused(want, d[0], d[1], d[2], third, NULL);
	/* another seed */
	edit(d[3], "shard.json", "\"seed\": 1,", "\"seed\": 2,");
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s and %s are shards of different campaigns: the scenario seed differs\n",
		 d[0], d[3]);
	merge_refused(want, d[0], d[1], d[2], d[3], NULL);
	/* another zcow version */
	edit(d[2], "shard.json", "\"zcow_version\": \"", "\"zcow_version\": \"9.");
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s and %s are shards of different campaigns: the zcow version differs\n",
		 d[0], d[2]);
	merge_refused(want, d[0], d[1], d[2], d[3], NULL);
	for (i = 0; i < 4; i++)
		free(d[i]);
	free(other);
	free(third);
	rm_rf(parent);
}
END_TEST

/*
 * A shard that did not finish (no shard.json: it is written last) or
 * whose crash.csv or crash.json was cut short is refused.
 */
START_TEST(test_merge_refuses_an_incomplete_shard)
{
	char parent[] = "/tmp/zcrash-shard-XXXXXX", want[1200], path[1024];
	char *d[4], *csv;
	FILE *f;
	int i;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	four_shards(parent, d);
	/* crash.csv without its last row */
	csv = slurp_in(d[1], "crash.csv");
	snprintf(path, sizeof(path), "%s/crash.csv", d[1]);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	*strrchr(csv, '\n') = 0;
	*(strrchr(csv, '\n') + 1) = 0;
	fputs(csv, f);
	ck_assert_int_eq(fclose(f), 0);
	free(csv);
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s: incomplete shard: its crash.csv or crash.json does not hold what its shard.json counts\n",
		 d[1]);
	merge_refused(want, d[0], d[1], d[2], d[3], NULL);
	/* a run that did not finish: no shard.json */
	snprintf(path, sizeof(path), "%s/shard.json", d[2]);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s: no shard.json: not a shard's results folder (zcow crash --shard I/N), or its run did not finish\n",
		 d[2]);
	merge_refused(want, d[0], d[2], d[3], d[1], NULL);
	/* crash.json cut in its middle */
	snprintf(path, sizeof(path), "%s/crash.json", d[3]);
	ck_assert_int_eq(truncate(path, 40), 0);
	snprintf(want, sizeof(want),
		 "zcow crash --merge: %s: incomplete shard", d[3]);
	merge_refused(want, d[0], d[3], NULL, NULL, NULL);
	for (i = 0; i < 4; i++)
		free(d[i]);
	rm_rf(parent);
}
END_TEST

/* --shard I/N: 1 <= I <= N, N >= 1; anything else exit 2 with the
 * rule; so are --shard with --max or --repro, and --merge with
 * campaign options. */
START_TEST(test_bad_shard_values_refused)
{
	static const char *const bad[] = { "0/4", "5/4", "1/0", "x", "1/",
					   "/4", "2/4x", "-1/4", "1/-4", "" };
	char want[128], *out, *err;
	unsigned int i;
	int st;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st = zcow_test_run(&out, &err, "crash", SMALL, "--quick",
				   "--no-results", "--shard", bad[i], NULL);
		ck_assert_msg(st == 2, "--shard '%s': exit %d", bad[i], st);
		snprintf(want, sizeof(want),
			 "zcow crash: --shard '%s': I/N with 1 <= I <= N (the I-th of N shards)\n",
			 bad[i]);
		ck_assert_str_eq(err, want);
		ck_assert_str_eq(out, "");
		free(out);
		free(err);
	}
	st = zcow_test_run(&out, &err, "crash", SMALL, "--quick",
			   "--no-results", "--shard", "1/2", "--max", "3", NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(err, "zcow crash: --shard: not with --max (it stops the whole campaign after N states)\n");
	free(out);
	free(err);
	st = zcow_test_run(&out, &err, "crash", "--shard", "1/2", "--repro",
			   "ops=configs/ops/atomic-replace.ops quick w=0 cut=persist=9 loss=prefix seed=1",
			   NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(err, "zcow crash: --shard: not with --repro (a repro line is one state)\n");
	free(out);
	free(err);
	st = zcow_test_run(&out, &err, "crash", SMALL, "--quick",
			   "--no-results", "--shard", "1/2", "--btrfs-check",
			   "2", NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(err, "zcow crash: --shard: --btrfs-check 2 picks states by their place in the whole campaign: with shards only --btrfs-check 1\n");
	free(out);
	free(err);
	st = zcow_test_run(&out, &err, "crash", "--merge", "/tmp", "--quick",
			   NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(err, "zcow crash: --merge takes shard results folders and --results DIR only\n");
	free(out);
	free(err);
}
END_TEST

Suite *crash_shard_suite(void)
{
	Suite *s = suite_create("crash_shard_suite");
	TCase *tc = tcase_create("shards");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_four_shards_merged_equal_the_whole_run);
	tcase_add_test(tc, test_shard_one_of_one_is_the_whole_run);
	tcase_add_test(tc, test_merged_violations_keep_the_whole_runs_order);
	tcase_add_test(tc, test_merge_refuses_missing_and_duplicated_shards);
	tcase_add_test(tc, test_merge_refuses_shards_of_different_campaigns);
	tcase_add_test(tc, test_merge_refuses_an_incomplete_shard);
	tcase_add_test(tc, test_bad_shard_values_refused);
	suite_add_tcase(s, tc);
	return s;
}
