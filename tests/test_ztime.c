// SPDX-License-Identifier: MIT
/*
 * The timing model against the figures it is calibrated to
 * (docs/timing.md): microbenchmarks in simulated time, within 1%.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "tests.h"
#include "zdev.h"
#include "ztime.h"

#define KIB 4096ull

static struct ztime *model(const char *profile)
{
	struct zdev_info info = {
		.zone_size = 64ull << 20, .zone_capacity = 34ull << 20,
		.nr_zones = 64, .max_open = 14, .max_active = 14,
		.lba_size = 4096, .is_zoned = true, .max_append = 512 << 10,
	};
	struct ztime_profile p;
	struct ztime *t;

	ck_assert_int_eq(ztime_profile_get(profile, &p), 0);
	ck_assert_int_eq(ztime_create(&p, &info, &t), 0);
	return t;
}

/*
 * @nz zones, @qd commands in flight per zone, @n commands each of @len:
 * submit each at the earliest time one of the zone's slots frees (the
 * runner's rule) and return IOPS.
 */
static double bench(struct ztime *t, enum zdev_op op, unsigned int nz,
		    unsigned int qd, uint64_t len, unsigned int n)
{
	uint64_t slots[64][32] = { { 0 } }, wp[64] = { 0 }, end = 0;
	unsigned int i, z, q, best;

	for (i = 0; i < n; i++) {
		/* the zone/slot that frees first (lowest index on a tie) */
		uint64_t tmin = UINT64_MAX;

		best = 0;
		for (z = 0; z < nz; z++)
			for (q = 0; q < qd; q++)
				if (slots[z][q] < tmin) {
					tmin = slots[z][q];
					best = z * 32 + q;
				}
		z = best / 32;
		q = best % 32;
		slots[z][q] = ztime_submit(t, op, z * (64ull << 20) + wp[z],
					   len, tmin);
		wp[z] += len;
		if (slots[z][q] > end)
			end = slots[z][q];
	}
	return (double)n * 1e9 / (double)end;
}

static void near(double v, double want)
{
	ck_assert_msg(v > want * 0.99 && v < want * 1.01,
		      "%.0f IOPS, want %.0f +-1%%", v, want);
}

START_TEST(test_ztime_write_qd1_one_zone_85k)
{
	struct ztime *t = model("zn540");

	near(bench(t, ZDEV_OP_WRITE, 1, 1, 4 * 1024, 20000), 85100);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_write_lock_serializes_qd4_one_zone)
{
	struct ztime *t = model("zn540");

	/* Linux zone write locking: QD4 in one zone is still QD1. */
	near(bench(t, ZDEV_OP_WRITE, 1, 4, 4 * 1024, 20000), 85100);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_append_qd1_one_zone_66k)
{
	struct ztime *t = model("zn540");

	near(bench(t, ZDEV_OP_APPEND, 1, 1, 4 * 1024, 20000), 65700);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_append_qd4_one_zone_132k)
{
	struct ztime *t = model("zn540");

	near(bench(t, ZDEV_OP_APPEND, 1, 4, 4 * 1024, 20000), 132000);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_append_qd16_one_zone_plateaus_132k)
{
	struct ztime *t = model("zn540");

	near(bench(t, ZDEV_OP_APPEND, 1, 16, 4 * 1024, 20000), 132000);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_write_8_zones_182k)
{
	struct ztime *t = model("zn540");

	near(bench(t, ZDEV_OP_WRITE, 8, 1, 4 * 1024, 40000), 182000);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_write_bandwidth_ceiling_1146mib)
{
	struct ztime *t = model("zn540");
	double iops = bench(t, ZDEV_OP_WRITE, 8, 1, 8 * 1024, 40000);

	near(iops * 8 * 1024 / 1048576.0, 1146);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_instant_costs_nothing)
{
	struct ztime *t = model("instant");

	ck_assert_uint_eq(ztime_submit(t, ZDEV_OP_WRITE, 0, 4096, 77), 77);
	ck_assert_uint_eq(ztime_submit(t, ZDEV_OP_RESET, 0, 0, 78), 78);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_smr_seek_dominates_random)
{
	struct ztime *t = model("smr");
	uint64_t d1, d2;

	/* sequential: transfer only; a jump far away: seek + rotation */
	d1 = ztime_submit(t, ZDEV_OP_WRITE, 0, 4096, 0);
	d2 = ztime_submit(t, ZDEV_OP_WRITE, 4096, 4096, d1);
	ck_assert_uint_lt(d2 - d1, 200000);
	d1 = ztime_submit(t, ZDEV_OP_WRITE, 40ull * (64 << 20), 4096, d2);
	ck_assert_uint_gt(d1 - d2, 12000000);
	ztime_destroy(t);
}
END_TEST

#define ZONE (64ull << 20)
#define FLUSH_LAT 20000ull	/* zn540 flush latency (assumed) */
#define WRITE_LAT 11751ull	/* zn540 4 KiB write QD1 latency */

START_TEST(test_ztime_writes_before_a_flush_overlap)
{
	struct ztime *t = model("zn540");

	/* two 4 KiB writes to two zones in one call: side by side */
	ztime_set_now(t, 0);
	ztime_charge(t, ZDEV_OP_WRITE, 1 * ZONE, KIB);
	ztime_charge(t, ZDEV_OP_WRITE, 2 * ZONE, KIB);
	ck_assert_uint_eq(ztime_max_done(t), WRITE_LAT);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_flush_waits_for_the_commands_before_it)
{
	struct ztime *t = model("zn540");
	uint64_t w;

	ztime_set_now(t, 1000);
	ztime_charge(t, ZDEV_OP_WRITE, 1 * ZONE, 4 * KIB);
	ztime_charge(t, ZDEV_OP_WRITE, 2 * ZONE, 4 * KIB);
	w = ztime_max_done(t);
	ck_assert_uint_gt(w, 1000 + WRITE_LAT);
	ztime_charge(t, ZDEV_OP_FLUSH, 0, 0);
	ck_assert_uint_eq(ztime_last_done(t), w + FLUSH_LAT);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_commands_after_a_flush_wait_for_it)
{
	struct ztime *t = model("zn540");
	uint64_t f;

	/* a commit's tail: flush, superblock write, flush, in order */
	ztime_set_now(t, 0);
	ztime_charge(t, ZDEV_OP_WRITE, 1 * ZONE, KIB);
	ztime_charge(t, ZDEV_OP_FLUSH, 0, 0);
	f = ztime_last_done(t);
	ck_assert_uint_eq(f, WRITE_LAT + FLUSH_LAT);
	ztime_charge(t, ZDEV_OP_WRITE, 3 * ZONE, KIB);
	ck_assert_uint_eq(ztime_last_done(t), f + WRITE_LAT);
	ztime_charge(t, ZDEV_OP_FLUSH, 0, 0);
	ck_assert_uint_eq(ztime_max_done(t), f + WRITE_LAT + FLUSH_LAT);
	/* a new call starts from its own time again */
	ztime_set_now(t, 10 * f);
	ztime_charge(t, ZDEV_OP_WRITE, 4 * ZONE, KIB);
	ck_assert_uint_eq(ztime_last_done(t), 10 * f + WRITE_LAT);
	ztime_destroy(t);
}
END_TEST

START_TEST(test_ztime_unknown_profile_is_einval)
{
	struct ztime_profile p;

	ck_assert_int_eq(ztime_profile_get("nvme9000", &p), -EINVAL);
}
END_TEST

Suite *ztime_suite(void)
{
	Suite *s = suite_create("ztime_suite");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_ztime_write_qd1_one_zone_85k);
	tcase_add_test(tc, test_ztime_write_lock_serializes_qd4_one_zone);
	tcase_add_test(tc, test_ztime_append_qd1_one_zone_66k);
	tcase_add_test(tc, test_ztime_append_qd4_one_zone_132k);
	tcase_add_test(tc, test_ztime_append_qd16_one_zone_plateaus_132k);
	tcase_add_test(tc, test_ztime_write_8_zones_182k);
	tcase_add_test(tc, test_ztime_write_bandwidth_ceiling_1146mib);
	tcase_add_test(tc, test_ztime_instant_costs_nothing);
	tcase_add_test(tc, test_ztime_smr_seek_dominates_random);
	tcase_add_test(tc, test_ztime_writes_before_a_flush_overlap);
	tcase_add_test(tc, test_ztime_flush_waits_for_the_commands_before_it);
	tcase_add_test(tc, test_ztime_commands_after_a_flush_wait_for_it);
	tcase_add_test(tc, test_ztime_unknown_profile_is_einval);
	suite_add_tcase(s, tc);
	return s;
}
