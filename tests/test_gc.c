// SPDX-License-Identifier: MIT
/*
 * harness/gc.py, the write-amplification experiments
 * (docs/reclaim-experiments.md): its analytic curve for greedy cleaning
 * under uniform random writes, its idealized greedy cleaner, and one
 * small point of the uniform overwrite run through zcow: it completes,
 * amplifies (steady GC WA > 1) and stays finite.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define RES "/tmp/zcow-test-gc"

/* stdout of the shell command @cmd (malloc'd); asserts exit status 0. */
static char *capture(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *buf;

	ck_assert_msg(p != NULL, "cannot run %s", cmd);
	buf = zcow_test_read_all(p);
	ck_assert_msg(pclose(p) == 0, "failed: %s\n%s", cmd, buf);
	return buf;
}

/* WA = 1/(1-x), x - 1 = rho ln x: the values the literature gives. */
START_TEST(test_gc_analytic_greedy_curve_values)
{
	char *out = capture("python3 harness/gc.py --analytic 0.5 0.7 0.8 "
			    "0.9");

	ck_assert_str_eq(out, "0.50 1.26\n0.70 1.88\n0.80 2.69\n0.90 5.18\n");
	free(out);
}
END_TEST

/* The idealized cleaner, cleaning one zone when one is free (50 zones of
 * 2048 blocks at rho 0.5), lands on the analytic curve (1.255). */
START_TEST(test_gc_model_textbook_greedy_on_the_curve)
{
	char *out = capture("python3 harness/gc.py --model 0.5");
	double rho, model, analytic;

	ck_assert_int_eq(sscanf(out, "%lf %lf %lf", &rho, &model, &analytic),
			 3);
	ck_assert_msg(fabs(model - analytic) < 0.03, "model %.3f analytic "
		      "%.3f", model, analytic);
	free(out);
}
END_TEST

/* Steady WA of the idealized cleaner at rho 0.7 under 80/20 overwrites,
 * 52 zones of 1024 blocks, cleaning from @low to @high free zones, the
 * hot blocks written to a zone of their own or not. */
static double model_hot_wa(int low, int high, int separate)
{
	char cmd[256];
	char *out;
	double rho, wa, analytic;

	snprintf(cmd, sizeof(cmd),
		 "python3 harness/gc.py --model 0.7 --zone-blocks 1024 "
		 "--low %d --high %d --model-hot 80/20%s", low, high,
		 separate ? " --model-separate" : "");
	out = capture(cmd);
	ck_assert_int_eq(sscanf(out, "%lf %lf %lf", &rho, &wa, &analytic),
			 3);
	free(out);
	return wa;
}

/* Cleaning one zone at a time, a separation that knows the hot set
 * lowers greedy's WA (about 2.03 to 1.94); cleaning from 4 to 20 free
 * zones, as zcow's default pass does on this many zones, it raises it
 * (3.25 to 4.01): the pass takes nearly every group, and the hot zone
 * kept open is space out of the candidates. */
START_TEST(test_gc_model_separation_pays_only_with_small_passes)
{
	double mix = model_hot_wa(1, 2, 0), sep = model_hot_wa(1, 2, 1);

	ck_assert_msg(sep < mix * 0.98, "one zone at a time: separate %.3f "
		      "mixed %.3f", sep, mix);
	mix = model_hot_wa(4, 20, 0);
	sep = model_hot_wa(4, 20, 1);
	ck_assert_msg(sep > mix * 1.1, "4 to 20 free zones: separate %.3f "
		      "mixed %.3f", sep, mix);
}
END_TEST

/* A hot split the model cannot take is refused, not ignored. */
START_TEST(test_gc_model_refuses_separation_without_hot_split)
{
	ck_assert_int_ne(system("python3 harness/gc.py --model 0.7 "
				"--model-separate 2>/dev/null"), 0);
	ck_assert_int_ne(system("python3 harness/gc.py --model 0.7 "
				"--model-hot 80 2>/dev/null"), 0);
}
END_TEST

/* Field @col of the first data row of @csv (static buffer). */
static const char *csv_field(const char *csv, const char *col)
{
	static char val[64];
	const char *hdr = csv, *row = strchr(csv, '\n') + 1;
	int idx = 0, i;
	const char *p;
	size_t n;

	for (p = hdr; *p != '\n'; p++) {
		if (!strncmp(p, col, strlen(col)) &&
		    (p == hdr || p[-1] == ',') &&
		    (p[strlen(col)] == ',' || p[strlen(col)] == '\n'))
			break;
		if (*p == ',')
			idx++;
	}
	ck_assert_msg(*p != '\n', "no column %s", col);
	for (p = row, i = 0; i < idx; p++)
		if (*p == ',')
			i++;
	n = strcspn(p, ",\n");
	ck_assert(n < sizeof(val));
	memcpy(val, p, n);
	val[n] = '\0';
	return val;
}

/* rho 0.5, greedy, one device fill of overwrite on 32 zones of 4 MiB. */
START_TEST(test_gc_small_greedy_point_completes_and_amplifies)
{
	char cmd[1024], *out, *csv;
	double gc, total, tb, ratio;

	snprintf(cmd, sizeof(cmd),
		 "rm -rf " RES " && python3 harness/gc.py --zcow %s "
		 "--results " RES " --device sim:zones=32,zone_size=4M "
		 "--rho 0.5 --policy greedy --fills 1 --no-hotcold && "
		 "cat " RES "/wa.csv",
		 zcow_test_bin());
	out = capture(cmd);
	csv = strstr(out, "rho,policy");
	ck_assert_msg(csv != NULL, "no wa.csv in:\n%s", out);
	ck_assert_str_eq(csv_field(csv, "policy"), "greedy");
	ck_assert_str_eq(csv_field(csv, "enospc"), "no");
	gc = strtod(csv_field(csv, "gc"), NULL);
	total = strtod(csv_field(csv, "total"), NULL);
	ck_assert_msg(gc > 1.0 && gc < 20.0, "GC WA %.3f", gc);
	ck_assert_msg(total >= gc, "total WA %.3f < GC WA %.3f", total, gc);
	/* Beside the analytic curve, textbook greedy (--model) at the
	 * utilization the data cycles through, and the ratio to it. */
	tb = strtod(csv_field(csv, "greedy_eff"), NULL);
	ratio = strtod(csv_field(csv, "ratio_greedy_eff"), NULL);
	ck_assert_msg(tb > 1.0 && tb < 20.0, "textbook greedy WA %.3f", tb);
	ck_assert_msg(fabs(ratio - gc / tb) < 0.002, "ratio %.3f, %.3f / %.3f",
		      ratio, gc, tb);
	free(out);
}
END_TEST

Suite *gc_suite(void)
{
	Suite *s = suite_create("gc_suite");
	TCase *tc = tcase_create("experiments");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_gc_analytic_greedy_curve_values);
	tcase_add_test(tc, test_gc_model_textbook_greedy_on_the_curve);
	tcase_add_test(tc, test_gc_model_separation_pays_only_with_small_passes);
	tcase_add_test(tc, test_gc_model_refuses_separation_without_hot_split);
	tcase_add_test(tc, test_gc_small_greedy_point_completes_and_amplifies);
	suite_add_tcase(s, tc);
	return s;
}
