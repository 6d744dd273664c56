// SPDX-License-Identifier: MIT
/*
 * The simulator, rule by rule (docs/device-rules.md), then power cuts per
 * loss policy, then images and import.  Every refused command is checked
 * for its errno, the rule the simulator recorded, and the zone after.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "tests.h"
#include "zdev.h"
#include "zlog.h"
#include "zsim.h"

#define LBA 4096ull
#define ZS (64 * 1024ull)		/* 16 LBAs */
#define CAP (48 * 1024ull)		/* 12 LBAs */
#define NR_ZONES 12
#define NR_CONV 2
#define MAX_APPEND (16 * 1024ull)

static struct zdev *mk_full(uint32_t max_open, uint32_t max_active,
			    bool no_auto_close)
{
	struct zsim_config cfg = {
		.nr_zones = NR_ZONES,
		.zone_size = ZS,
		.zone_capacity = CAP,
		.nr_conv = NR_CONV,
		.max_open = max_open,
		.max_active = max_active,
		.lba_size = LBA,
		.max_append = MAX_APPEND,
		.seed = 7,
		.no_auto_close = no_auto_close,
	};

	return zcow_test_sim(&cfg);
}

static struct zdev *mk(void)
{
	return mk_full(0, 0, false);
}

static struct zsim *sim_of(struct zdev *dev)
{
	struct zsim *sim = zsim_from_dev(dev);

	ck_assert_ptr_nonnull(sim);
	return sim;
}

/* Byte offset of LBA @lba of zone @zno. */
static uint64_t at(uint64_t zno, uint64_t lba)
{
	return zno * ZS + lba * LBA;
}

/* Write @nr LBAs at LBA @lba of zone @zno, each block filled with @fill. */
static int wr_flags(struct zdev *dev, uint64_t zno, uint64_t lba, uint64_t nr,
		    uint8_t fill, unsigned int flags)
{
	uint8_t *buf = malloc(nr * LBA);
	int ret;

	ck_assert_ptr_nonnull(buf);
	memset(buf, fill, nr * LBA);
	ret = zdev_write(dev, buf, nr * LBA, at(zno, lba), flags,
			 ZDEV_CLASS_DATA);
	free(buf);
	return ret;
}

static int wr(struct zdev *dev, uint64_t zno, uint64_t lba, uint64_t nr,
	      uint8_t fill)
{
	return wr_flags(dev, zno, lba, nr, fill, 0);
}

static int app(struct zdev *dev, uint64_t zno, uint64_t nr, uint8_t fill,
	       uint64_t *off_ret)
{
	uint8_t *buf = malloc(nr * LBA);
	int ret;

	ck_assert_ptr_nonnull(buf);
	memset(buf, fill, nr * LBA);
	ret = zdev_append(dev, buf, nr * LBA, zno * ZS, 0, ZDEV_CLASS_DATA,
			  off_ret);
	free(buf);
	return ret;
}

static int mgmt(struct zdev *dev, enum zdev_zone_action a, uint64_t zno)
{
	return zdev_zone_mgmt(dev, a, zno * ZS, ZS, ZDEV_CLASS_ZONE);
}

/* Assert zone @zno has condition @cond and reported wp at LBA @wp_lba. */
#define ck_zone(dev, zno, cond_, wp_lba)                                    \
	do {                                                                \
		struct zdev_zone z_;                                        \
		ck_assert_int_eq(zdev_report_zone(dev, (zno) * ZS, &z_), 0); \
		ck_assert_msg(z_.cond == (cond_),                           \
			      "zone %d cond %s, expected %s", (int)(zno),   \
			      zdev_cond_name(z_.cond),                      \
			      zdev_cond_name(cond_));                       \
		ck_assert_uint_eq(z_.wp, (zno) * ZS + (wp_lba) * LBA);      \
	} while (0)

/* Assert the last call broke @rule, once more than before (@before). */
#define ck_rule(dev, rule, before)                                          \
	do {                                                                \
		ck_assert_str_eq(                                           \
			zsim_rule_name(zsim_last_violation(sim_of(dev))),  \
			zsim_rule_name(rule));                              \
		ck_assert_uint_eq(zsim_nr_violations(sim_of(dev), rule),    \
				  (before) + 1);                            \
	} while (0)

/* Every byte of @nr LBAs at (zno, lba) equals @fill. */
static void ck_data(struct zdev *dev, uint64_t zno, uint64_t lba, uint64_t nr,
		    uint8_t fill)
{
	uint8_t *buf = malloc(nr * LBA);
	uint64_t i;

	if (!nr) {
		free(buf);
		return;
	}
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(zdev_read(dev, buf, nr * LBA, at(zno, lba),
				   ZDEV_CLASS_OTHER), 0);
	for (i = 0; i < nr * LBA; i++)
		if (buf[i] != fill)
			ck_abort_msg("zone %d lba %d byte %d: %#x, expected %#x",
				     (int)zno, (int)(lba + i / LBA),
				     (int)(i % LBA), buf[i], fill);
	free(buf);
}

/* ---- writes ---------------------------------------------------------- */

START_TEST(test_write_at_wp_of_empty_zone_opens_it_implicitly)
{
	struct zdev *dev = mk();

	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 0xa1), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 1);
	ck_assert_int_eq(wr(dev, 2, 1, 1, 0xa2), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 2);
	ck_data(dev, 2, 0, 1, 0xa1);
	ck_data(dev, 2, 1, 1, 0xa2);
	ck_assert_int_eq(zsim_last_violation(sim_of(dev)), ZSIM_RULE_NONE);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_below_wp_is_eio_not_at_wp)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 2, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 1, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_NOT_AT_WP, 0);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_NOT_AT_WP, 1);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 2);
	ck_data(dev, 2, 0, 2, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_above_wp_is_eio_not_at_wp_and_changes_nothing)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 1, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_NOT_AT_WP, 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_assert_int_eq(wr(dev, 3, 0, 2, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 3), 0);
	ck_assert_int_eq(wr(dev, 3, 3, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_NOT_AT_WP, 1);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 2);
	/* Overlapping the wp: refused whole. */
	ck_assert_int_eq(wr(dev, 3, 1, 2, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_NOT_AT_WP, 2);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 2);
	ck_data(dev, 3, 0, 2, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_crossing_capacity_is_eio_write_boundary)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 11, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 11, 2, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_BOUNDARY, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 11);
	/* Crossing the capacity and the zone end, into the next zone. */
	ck_assert_int_eq(wr(dev, 2, 11, 6, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_BOUNDARY, 1);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 11);
	ck_zone(dev, 3, ZDEV_COND_EMPTY, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_reaching_capacity_makes_full_with_wp_at_zone_size)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 11, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 11, 1, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_data(dev, 2, 11, 1, 2);
	ck_data(dev, 2, 12, 4, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_to_full_zone_is_eio_full_checked_before_wp)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 12, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_FULL, 0);
	ck_assert_int_eq(wr(dev, 2, 11, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_FULL, 1);
	/* The gap cap..size of a full zone: full, not "not at wp". */
	ck_assert_int_eq(wr(dev, 2, 12, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_FULL, 2);
	/* Finished at wp=5: the old wp is full too. */
	ck_assert_int_eq(wr(dev, 3, 0, 5, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 3), 0);
	ck_assert_int_eq(wr(dev, 3, 5, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_FULL, 3);
	ck_zone(dev, 3, ZDEV_COND_FULL, 16);
	ck_data(dev, 3, 5, 11, 0);
	ck_data(dev, 3, 0, 5, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_in_gap_of_open_zone_is_not_at_wp)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 12, 1, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_NOT_AT_WP, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_explicitly_open_zone_stays_open_on_write)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_EXP_OPEN, 0);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_EXP_OPEN, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_write_at_wp_of_closed_zone_reopens_it_implicitly)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 2, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), 0);
	ck_assert_int_eq(wr(dev, 2, 2, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 3);
	zdev_close(dev);
}
END_TEST

/* ---- reads ----------------------------------------------------------- */

START_TEST(test_read_above_wp_gap_and_empty_returns_zeros)
{
	struct zdev *dev = mk();
	uint8_t buf[8 * LBA];
	unsigned int i;

	ck_assert_int_eq(wr(dev, 2, 0, 4, 0x55), 0);
	ck_assert_int_eq(zdev_read(dev, buf, sizeof(buf), at(2, 2),
				   ZDEV_CLASS_OTHER), 0);
	for (i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], i < 2 * LBA ? 0x55 : 0);
	ck_data(dev, 2, 12, 4, 0);	/* gap */
	ck_data(dev, 5, 0, 16, 0);	/* empty */
	ck_data(dev, 0, 0, 16, 0);	/* unwritten conventional */
	ck_assert_int_eq(zsim_last_violation(sim_of(dev)), ZSIM_RULE_NONE);
	zdev_close(dev);
}
END_TEST

START_TEST(test_read_across_zone_end_is_eio_read_boundary)
{
	struct zdev *dev = mk();
	uint8_t buf[2 * LBA];

	ck_assert_int_eq(zdev_read(dev, buf, sizeof(buf), at(2, 15),
				   ZDEV_CLASS_OTHER), -EIO);
	ck_rule(dev, ZSIM_RULE_READ_BOUNDARY, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_reset_destroys_data)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 12, 0x77), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_data(dev, 2, 0, 16, 0);
	/* Recycled storage does not leak old data either. */
	ck_assert_int_eq(wr(dev, 2, 0, 1, 0x11), 0);
	ck_data(dev, 2, 0, 1, 0x11);
	ck_data(dev, 2, 1, 15, 0);
	zdev_close(dev);
}
END_TEST

/* ---- conventional zones ------------------------------------------------ */

START_TEST(test_conv_zone_takes_random_writes_and_reports_not_wp)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 1, 7, 2, 0x31), 0);
	ck_assert_int_eq(wr(dev, 1, 3, 1, 0x32), 0);
	ck_assert_int_eq(wr(dev, 1, 7, 1, 0x33), 0);
	ck_data(dev, 1, 3, 1, 0x32);
	ck_data(dev, 1, 7, 1, 0x33);
	ck_data(dev, 1, 8, 1, 0x31);
	ck_data(dev, 1, 0, 3, 0);
	ck_zone(dev, 1, ZDEV_COND_NOT_WP, 16);
	zdev_close(dev);
}
END_TEST

START_TEST(test_conv_write_crossing_zone_end_is_eio_write_boundary)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 0, 15, 2, 9), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_BOUNDARY, 0);
	ck_data(dev, 0, 15, 1, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zone_op_on_conv_zone_is_eio_bad_transition)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 0), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 1), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 1);
	ck_zone(dev, 1, ZDEV_COND_NOT_WP, 16);
	zdev_close(dev);
}
END_TEST

/* ---- open and active limits -------------------------------------------- */

START_TEST(test_open_limit_closes_oldest_implicitly_open_zone_fifo)
{
	struct zdev *dev = mk_full(4, 0, false);
	int z;

	for (z = 2; z <= 5; z++)
		ck_assert_int_eq(wr(dev, z, 0, 1, 1), 0);
	/* Writing z2 again does not refresh its place. */
	ck_assert_int_eq(wr(dev, 2, 1, 1, 1), 0);
	ck_assert_int_eq(wr(dev, 6, 0, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 2);
	ck_zone(dev, 6, ZDEV_COND_IMP_OPEN, 1);
	ck_assert_int_eq(wr(dev, 7, 0, 1, 1), 0);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 1);
	/* Re-opening closed z2 evicts the oldest, z4. */
	ck_assert_int_eq(wr(dev, 2, 2, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 3);
	ck_zone(dev, 4, ZDEV_COND_CLOSED, 1);
	ck_assert_int_eq(zsim_last_violation(sim_of(dev)), ZSIM_RULE_NONE);
	/* Append behaves the same: evicts z5. */
	ck_assert_int_eq(app(dev, 8, 1, 1, NULL), 0);
	ck_zone(dev, 5, ZDEV_COND_CLOSED, 1);
	/* An explicit open also evicts an implicitly open zone (z6). */
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 9), 0);
	ck_zone(dev, 6, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 9, ZDEV_COND_EXP_OPEN, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_open_limit_with_all_explicit_is_etoomanyrefs)
{
	struct zdev *dev = mk_full(4, 0, false);
	int z;

	for (z = 2; z <= 5; z++)
		ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, z), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 6), -ETOOMANYREFS);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_OPEN, 0);
	ck_assert_int_eq(wr(dev, 6, 0, 1, 1), -ETOOMANYREFS);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_OPEN, 1);
	ck_assert_int_eq(app(dev, 6, 1, 1, NULL), -ETOOMANYREFS);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_OPEN, 2);
	ck_zone(dev, 6, ZDEV_COND_EMPTY, 0);
	/* Finishing an empty zone needs no slot. */
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 7), 0);
	ck_zone(dev, 7, ZDEV_COND_FULL, 16);
	/* Closing frees a slot. */
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 0);
	ck_assert_int_eq(wr(dev, 6, 0, 1, 1), 0);
	ck_zone(dev, 6, ZDEV_COND_IMP_OPEN, 1);
	/* A closed zone needs an open slot to reopen. */
	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_zone(dev, 6, ZDEV_COND_CLOSED, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zone_filled_to_capacity_frees_its_slots)
{
	struct zdev *dev = mk_full(2, 2, false);

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 3), 0);
	ck_assert_int_eq(wr(dev, 4, 0, 1, 1), 0 - EOVERFLOW);
	ck_assert_int_eq(wr(dev, 2, 0, 12, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_assert_int_eq(wr(dev, 4, 0, 1, 1), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_active_limit_is_eoverflow_and_still_closes_oldest)
{
	struct zdev *dev = mk_full(4, 6, false);
	uint64_t before;
	int z;

	for (z = 2; z <= 7; z++)
		ck_assert_int_eq(wr(dev, z, 0, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 4, ZDEV_COND_IMP_OPEN, 1);
	ck_assert_int_eq(wr(dev, 8, 0, 1, 1), -EOVERFLOW);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_ACTIVE, 0);
	/* The failed write still closed z4. */
	ck_zone(dev, 4, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 8, ZDEV_COND_EMPTY, 0);
	/* Three open now: no further close. */
	before = zsim_nr_violations(sim_of(dev), ZSIM_RULE_TOO_MANY_ACTIVE);
	ck_assert_int_eq(app(dev, 8, 1, 1, NULL), -EOVERFLOW);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_ACTIVE, before);
	ck_zone(dev, 5, ZDEV_COND_IMP_OPEN, 1);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 8), -EOVERFLOW);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_ACTIVE, before + 1);
	/* A closed zone is already active. */
	ck_assert_int_eq(wr(dev, 2, 1, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 2);
	/* Finish of an empty zone consumes nothing; finish frees a slot. */
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 9), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 3), 0);
	ck_assert_int_eq(wr(dev, 8, 0, 1, 1), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_closed_at_zero_holds_an_active_slot)
{
	struct zdev *dev = mk_full(2, 3, false);
	int z;

	for (z = 2; z <= 4; z++) {
		ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, z), 0);
		ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, z), 0);
		ck_zone(dev, z, ZDEV_COND_CLOSED, 0);
	}
	ck_assert_int_eq(wr(dev, 5, 0, 1, 1), -EOVERFLOW);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_ACTIVE, 0);
	/* Reset frees the slot. */
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 5), 0);
	ck_zone(dev, 5, ZDEV_COND_EXP_OPEN, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_active_limit_wins_over_open_limit)
{
	struct zdev *dev = mk_full(2, 3, false);

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 3), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 4), 0);
	ck_assert_int_eq(wr(dev, 5, 0, 1, 1), -EOVERFLOW);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_ACTIVE, 0);
	/* A closed zone needs only an open slot. */
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), -ETOOMANYREFS);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_OPEN, 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_no_auto_close_is_etoomanyrefs_without_closing)
{
	struct zdev *dev = mk_full(2, 0, true);

	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 1, 1), 0);
	ck_assert_int_eq(wr(dev, 4, 0, 1, 1), -ETOOMANYREFS);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_OPEN, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 1);
	ck_zone(dev, 3, ZDEV_COND_IMP_OPEN, 1);
	ck_zone(dev, 4, ZDEV_COND_EMPTY, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 4), -ETOOMANYREFS);
	ck_rule(dev, ZSIM_RULE_TOO_MANY_OPEN, 1);
	zdev_close(dev);
}
END_TEST

/* ---- append ---------------------------------------------------------- */

START_TEST(test_append_returns_wp_before_and_shares_wp_with_writes)
{
	struct zdev *dev = mk();
	const int sizes[] = { 1, 1, 2, 3, 1 };
	uint64_t off, expect = 0;
	unsigned int i;

	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(app(dev, 2, sizes[i], 0x40 + i, &off), 0);
		ck_assert_uint_eq(off, at(2, expect));
		expect += sizes[i];
	}
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 8);
	ck_assert_int_eq(wr(dev, 2, 8, 1, 0x50), 0);
	ck_assert_int_eq(app(dev, 2, 1, 0x51, &off), 0);
	ck_assert_uint_eq(off, at(2, 9));
	ck_data(dev, 2, 4, 3, 0x43);
	ck_data(dev, 2, 9, 1, 0x51);
	zdev_close(dev);
}
END_TEST

START_TEST(test_append_not_at_zone_start_is_einval)
{
	struct zdev *dev = mk();
	uint8_t buf[LBA] = { 0 };

	ck_assert_int_eq(app(dev, 2, 1, 1, NULL), 0);
	/* Even at the wp. */
	ck_assert_int_eq(zdev_append(dev, buf, LBA, at(2, 1), 0,
				     ZDEV_CLASS_DATA, NULL), -EINVAL);
	ck_rule(dev, ZSIM_RULE_APPEND_NOT_ZONE_START, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_append_above_max_append_is_einval)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(app(dev, 2, MAX_APPEND / LBA, 1, NULL), 0);
	ck_assert_int_eq(app(dev, 2, MAX_APPEND / LBA + 1, 1, NULL), -EINVAL);
	ck_rule(dev, ZSIM_RULE_APPEND_TOO_LARGE, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 4);
	zdev_close(dev);
}
END_TEST

START_TEST(test_append_to_conventional_zone_is_einval)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(app(dev, 1, 1, 1, NULL), -EINVAL);
	ck_rule(dev, ZSIM_RULE_APPEND_CONV, 0);
	ck_data(dev, 1, 0, 1, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_append_crossing_capacity_is_eio_boundary_and_full_is_eio)
{
	struct zdev *dev = mk();
	uint64_t off;

	ck_assert_int_eq(wr(dev, 2, 0, 11, 1), 0);
	ck_assert_int_eq(app(dev, 2, 2, 1, NULL), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_BOUNDARY, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 11);
	ck_assert_int_eq(app(dev, 2, 1, 2, &off), 0);
	ck_assert_uint_eq(off, at(2, 11));
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_assert_int_eq(app(dev, 2, 1, 2, NULL), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_FULL, 0);
	zdev_close(dev);
}
END_TEST

/* ---- zone management ------------------------------------------------- */

START_TEST(test_open_transitions_and_open_of_full_is_bad_transition)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_EXP_OPEN, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_EXP_OPEN, 0);
	ck_assert_int_eq(wr(dev, 3, 0, 2, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 3), 0);
	ck_zone(dev, 3, ZDEV_COND_EXP_OPEN, 2);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 4), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 4), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 0);
	ck_zone(dev, 4, ZDEV_COND_FULL, 16);
	zdev_close(dev);
}
END_TEST

START_TEST(test_close_of_empty_open_zone_gives_closed_at_zero)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 2), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_close_of_empty_or_full_zone_is_bad_transition)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 2), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 2), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 1);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	zdev_close(dev);
}
END_TEST

START_TEST(test_finish_of_full_and_reset_of_empty_are_no_ops)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_assert_int_eq(wr(dev, 2, 0, 2, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_assert_int_eq(zsim_last_violation(sim_of(dev)), ZSIM_RULE_NONE);
	zdev_close(dev);
}
END_TEST

START_TEST(test_range_op_processes_every_zone_and_fails_if_any_failed)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 2, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 3), 0);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_OPEN, 2 * ZS, 3 * ZS,
					ZDEV_CLASS_ZONE), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 0);
	ck_zone(dev, 2, ZDEV_COND_EXP_OPEN, 2);
	ck_zone(dev, 3, ZDEV_COND_FULL, 16);
	ck_zone(dev, 4, ZDEV_COND_EXP_OPEN, 0);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_FINISH, 5 * ZS, 3 * ZS,
					ZDEV_CLASS_ZONE), 0);
	ck_zone(dev, 7, ZDEV_COND_FULL, 16);
	zdev_close(dev);
}
END_TEST

START_TEST(test_reset_all_empties_every_sequential_zone_and_skips_conv)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 0, 0, 1, 0x66), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 2, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 3), 0);
	ck_assert_int_eq(wr(dev, 4, 0, 3, 1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 4), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 5), 0);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 0, 0,
					ZDEV_CLASS_ZONE), 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_zone(dev, 3, ZDEV_COND_EMPTY, 0);
	ck_zone(dev, 4, ZDEV_COND_EMPTY, 0);
	ck_zone(dev, 5, ZDEV_COND_EMPTY, 0);
	ck_data(dev, 0, 0, 1, 0x66);
	/* Close-all touches only the open zones. */
	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_CLOSE, 0, 0,
					ZDEV_CLASS_ZONE), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 3, ZDEV_COND_EMPTY, 0);
	zdev_close(dev);
}
END_TEST

/* ---- read-only, offline, faults ----------------------------------------- */

START_TEST(test_readonly_zone_refuses_writes_and_reads_back)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 2, 0x21), 0);
	ck_assert_int_eq(zsim_set_zone_cond(sim_of(dev), 2 * ZS,
					    ZDEV_COND_READONLY), 0);
	ck_assert_int_eq(wr(dev, 2, 2, 1, 1), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_READONLY, 0);
	ck_data(dev, 2, 0, 2, 0x21);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), -EIO);
	ck_rule(dev, ZSIM_RULE_BAD_TRANSITION, 0);
	ck_zone(dev, 2, ZDEV_COND_READONLY, 2);
	zdev_close(dev);
}
END_TEST

START_TEST(test_offline_zone_refuses_reads_writes_and_zone_ops)
{
	struct zdev *dev = mk();
	uint8_t buf[LBA];

	ck_assert_int_eq(wr(dev, 2, 0, 2, 0x21), 0);
	ck_assert_int_eq(zsim_set_zone_cond(sim_of(dev), 2 * ZS,
					    ZDEV_COND_OFFLINE), 0);
	ck_assert_int_eq(wr(dev, 2, 2, 1, 1), -EIO);
	ck_rule(dev, ZSIM_RULE_ZONE_OFFLINE, 0);
	ck_assert_int_eq(zdev_read(dev, buf, LBA, at(2, 0), ZDEV_CLASS_OTHER),
			 -EIO);
	ck_rule(dev, ZSIM_RULE_ZONE_OFFLINE, 1);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), -EIO);
	ck_rule(dev, ZSIM_RULE_ZONE_OFFLINE, 2);
	ck_assert_int_eq(zsim_set_zone_cond(sim_of(dev), 2 * ZS + LBA,
					    ZDEV_COND_OFFLINE), -EINVAL);
	zdev_close(dev);
}
END_TEST

START_TEST(test_injected_fault_fails_nth_command_of_op_only)
{
	struct zdev *dev = mk();
	struct zsim_fault f = { .op = ZDEV_OP_WRITE, .ordinal = 2 };

	ck_assert_int_eq(zsim_add_fault(sim_of(dev), &f), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 1, 1, 1), -EIO);
	ck_rule(dev, ZSIM_RULE_INJECTED, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 1);
	ck_assert_int_eq(wr(dev, 2, 1, 1, 1), 0);
	ck_assert_int_eq(app(dev, 2, 1, 1, NULL), 0);
	zsim_clear_faults(sim_of(dev));
	zdev_close(dev);
}
END_TEST

/* Count failures of 1000 reads at a 10% rate. */
static int count_faulty_reads(uint64_t seed)
{
	struct zsim_config cfg = { .nr_zones = 4, .zone_size = ZS,
				   .seed = seed };
	struct zsim_fault f = { .op = ZDEV_OP_READ, .rate_ppm = 100000 };
	uint8_t buf[LBA];
	struct zdev *dev;
	int i, n = 0;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zsim_add_fault(sim_of(dev), &f), 0);
	for (i = 0; i < 1000; i++)
		n += zdev_read(dev, buf, LBA, 0, ZDEV_CLASS_OTHER) == -EIO;
	ck_assert_uint_eq(zsim_nr_violations(sim_of(dev), ZSIM_RULE_INJECTED),
			  n);
	zdev_close(dev);
	return n;
}

START_TEST(test_fault_rate_is_seeded_and_reproducible)
{
	int a = count_faulty_reads(11), b = count_faulty_reads(11);

	ck_assert_int_eq(a, b);
	ck_assert_int_gt(a, 50);
	ck_assert_int_lt(a, 150);
}
END_TEST

/* ---- device level -------------------------------------------------------- */

/* (How fast it opens is measured by `zcow bench-dev`, not here.) */
START_TEST(test_sparse_1tib_device_uses_memory_only_for_data)
{
	struct zsim_config cfg = { .nr_zones = 16384, .zone_size = 64 << 20 };
	struct zdev *dev;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_uint_eq(dev->info.size, 1ull << 40);
	ck_assert_uint_eq(zsim_mem_bytes(sim_of(dev)), 0);
	ck_assert_int_eq(zdev_write(dev, (uint8_t[4096]){ 1 }, 4096,
				    16383ull << 26, 0, ZDEV_CLASS_DATA), 0);
	/* One chunk (at most 2 MiB) for one written block. */
	ck_assert_uint_le(zsim_mem_bytes(sim_of(dev)), 2 << 20);
	ck_assert_uint_gt(zsim_mem_bytes(sim_of(dev)), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_spec_sets_geometry_and_bad_key_is_einval)
{
	struct zdev *dev;

	ck_assert_int_eq(zdev_open("sim:zones=64,zone_size=64M,zone_cap=48M,conv=2,max_open=14,max_active=14,lba=4096,max_append=512K,seed=7,auto_close=off",
				   &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 64);
	ck_assert_uint_eq(dev->info.zone_size, 64 << 20);
	ck_assert_uint_eq(dev->info.zone_capacity, 48 << 20);
	ck_assert_uint_eq(dev->info.nr_conv, 2);
	ck_assert_uint_eq(dev->info.max_open, 14);
	ck_assert_uint_eq(dev->info.max_active, 14);
	ck_assert_uint_eq(dev->info.max_append, 512 << 10);
	ck_assert_uint_eq(dev->info.lba_size, 4096);
	zdev_close(dev);
	ck_assert_int_eq(zdev_open("sim:zones=4,bogus=1", &dev), -EINVAL);
	ck_assert_int_eq(zdev_open("sim:zone_size=3M", &dev), -EINVAL);
	ck_assert_int_eq(zdev_open("sim:zones=x", &dev), -EINVAL);
	ck_assert_int_eq(zdev_open("sim:auto_close=maybe", &dev), -EINVAL);
	ck_assert_int_eq(zdev_open("sim:zone_size=1M,zone_cap=2M", &dev),
			 -EINVAL);
	ck_assert_int_eq(zdev_open("sim:", &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 64);
	zdev_close(dev);
}
END_TEST

/* The messages logged since the last open_msg() (sim errors). */
static char log_buf[4096];

static void keep_log(void *arg, enum zlog_level level, const char *tag,
		     const char *msg)
{
	size_t n = strlen(log_buf);

	(void)arg;
	(void)level;
	snprintf(log_buf + n, sizeof(log_buf) - n, "%s: %s\n", tag, msg);
}

/* zdev_open(@spec) with its messages kept in log_buf. */
static int open_msg(const char *spec, struct zdev **dev_ret)
{
	int ret;

	log_buf[0] = 0;
	zlog_set_sink(keep_log, NULL);
	ret = zdev_open(spec, dev_ret);
	zlog_set_sink(NULL, NULL);
	return ret;
}

/* Refused with -EINVAL, the message naming @key. */
#define ck_refused(spec, key)                                               \
	do {                                                                \
		struct zdev *d_ = NULL;                                     \
		ck_assert_int_eq(open_msg(spec, &d_), -EINVAL);             \
		ck_assert_ptr_null(d_);                                     \
		ck_assert_msg(strstr(log_buf, key) != NULL,                 \
			      "%s: message does not name %s: %s", spec, key, \
			      log_buf);                                     \
	} while (0)

/*
 * Geometry beyond what a real device could have is refused before any
 * allocation (the zone array is nr_zones x ~56 bytes): limits in
 * docs/device-spec.md.
 */
START_TEST(test_spec_refuses_geometry_beyond_device_limits_naming_key)
{
	struct zdev *dev;
	char spec[128];

	/* At the limits: accepted (and sparse). */
	snprintf(spec, sizeof(spec), "sim:zones=%llu,zone_size=4k,data=off",
		 (unsigned long long)ZSIM_MAX_ZONES);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	zdev_close(dev);
	ck_assert_int_eq(zdev_open("sim:zones=1,zone_size=64G", &dev), 0);
	zdev_close(dev);
	ck_assert_int_eq(zdev_open("sim:zones=16384,zone_size=64G", &dev), 0);
	zdev_close(dev);
	ck_assert_int_eq(zdev_open("sim:max_append=64M", &dev), 0);
	zdev_close(dev);
	/* Beyond them: -EINVAL naming the key. */
	snprintf(spec, sizeof(spec), "sim:zones=%llu,zone_size=4k",
		 (unsigned long long)ZSIM_MAX_ZONES + 1);
	ck_refused(spec, "zones=");
	ck_refused("sim:zones=4294967296", "zones=");
	ck_refused("sim:zones=18446744073709551615,zone_size=4k", "zones=");
	ck_refused("sim:zones=1,zone_size=128G", "zone_size=");
	ck_refused("sim:zones=1,zone_size=4611686018427387904", "zone_size=");
	ck_refused("sim:zones=16385,zone_size=64G", "zones=");
	ck_refused("sim:max_append=65M", "max_append=");
	ck_refused("sim:max_append=1T", "max_append=");
	ck_refused("sim:lba=2M", "lba");
	ck_refused("sim:max_open=4294967296", "max_open");
}
END_TEST

/* fail=WHAT:N fails the Nth command WHAT matches, once. */
START_TEST(test_spec_fail_key_fails_nth_command_of_op_or_class)
{
	uint8_t buf[LBA] = { 0 };
	struct zdev *dev;

	ck_assert_int_eq(zdev_open("sim:zones=12,zone_size=64K,zone_cap=48K,conv=2,fail=write:3",
				   &dev), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(app(dev, 2, 1, 1, NULL), 0);	/* not a write */
	ck_assert_int_eq(wr(dev, 2, 2, 1, 1), 0);
	ck_assert_int_eq(wr(dev, 2, 3, 1, 1), -EIO);
	ck_rule(dev, ZSIM_RULE_INJECTED, 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 3);
	ck_assert_int_eq(wr(dev, 2, 3, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 4);
	zdev_close(dev);

	/* A class counts its writes, appends, zone commands and flushes;
	 * CLASS/OP one command of it; several keys add up. */
	ck_assert_int_eq(zdev_open("sim:zones=12,zone_size=64K,fail=meta:2,fail=meta/read:1,fail=flush:1",
				   &dev), 0);
	ck_assert_int_eq(zdev_write(dev, buf, LBA, at(2, 0), 0,
				    ZDEV_CLASS_DATA), 0);
	ck_assert_int_eq(zdev_write(dev, buf, LBA, at(3, 0), 0,
				    ZDEV_CLASS_META), 0);
	ck_assert_int_eq(zdev_read(dev, buf, LBA, at(3, 0), ZDEV_CLASS_DATA),
			 0);
	ck_assert_int_eq(zdev_read(dev, buf, LBA, at(3, 0), ZDEV_CLASS_META),
			 -EIO);
	ck_assert_int_eq(zdev_read(dev, buf, LBA, at(3, 0), ZDEV_CLASS_META),
			 0);
	ck_assert_int_eq(zdev_append(dev, buf, LBA, at(3, 0), 0,
				     ZDEV_CLASS_META, NULL), -EIO);
	ck_zone(dev, 3, ZDEV_COND_IMP_OPEN, 1);
	ck_assert_int_eq(zdev_flush(dev), -EIO);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_uint_eq(zsim_nr_violations(sim_of(dev), ZSIM_RULE_INJECTED),
			  3);
	zdev_close(dev);
}
END_TEST

static int count_spec_faults(const char *spec)
{
	uint8_t buf[LBA];
	struct zdev *dev;
	int i, n = 0;

	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	for (i = 0; i < 1000; i++)
		n += zdev_read(dev, buf, LBA, 0, ZDEV_CLASS_OTHER) == -EIO;
	ck_assert_uint_eq(zsim_nr_violations(sim_of(dev), ZSIM_RULE_INJECTED),
			  n);
	zdev_close(dev);
	return n;
}

/* fail_rate=[WHAT:]RATE fails at a rate seeded by seed=. */
START_TEST(test_spec_fail_rate_is_seeded_by_seed_key)
{
	int a = count_spec_faults("sim:zones=4,fail_rate=read:10%,seed=11");
	int b = count_spec_faults("sim:zones=4,fail_rate=read:100000ppm,seed=11");
	int c = count_spec_faults("sim:zones=4,fail_rate=read:10%,seed=12");

	ck_assert_int_eq(a, b);
	ck_assert_int_eq(a, count_faulty_reads(11));
	ck_assert_int_ne(a, c);
	ck_assert_int_gt(a, 50);
	ck_assert_int_lt(a, 150);
	ck_assert_int_eq(count_spec_faults("sim:zones=4,fail_rate=100%"), 1000);
	ck_assert_int_eq(count_spec_faults("sim:zones=4,fail_rate=write:100%"),
			 0);
	ck_assert_int_eq(count_spec_faults("sim:zones=4,fail_rate=0.5%,seed=3"),
			 count_spec_faults("sim:zones=4,fail_rate=5000,seed=3"));
}
END_TEST

/* zone_fail=COND:ZONE[@CMD]: the zone turns read-only or offline just
 * before command CMD (none: at open). */
START_TEST(test_spec_zone_fail_turns_zone_at_command_count)
{
	struct zdev *dev;

	ck_assert_int_eq(zdev_open("sim:zones=12,zone_size=64K,zone_cap=48K,conv=2,zone_fail=offline:3@4,zone_fail=readonly:5",
				   &dev), 0);
	ck_zone(dev, 5, ZDEV_COND_READONLY, 0);
	ck_assert_int_eq(wr(dev, 3, 0, 1, 0x31), 0);	/* command 1 */
	ck_assert_int_eq(wr(dev, 3, 1, 1, 0x31), 0);	/* 2 */
	ck_assert_int_eq(zdev_flush(dev), 0);		/* 3 */
	ck_zone(dev, 3, ZDEV_COND_IMP_OPEN, 2);
	ck_assert_uint_eq(zsim_nr_commands(sim_of(dev)), 3);
	ck_assert_int_eq(wr(dev, 3, 2, 1, 0x31), -EIO);	/* 4: offline */
	ck_rule(dev, ZSIM_RULE_ZONE_OFFLINE, 0);
	ck_zone(dev, 3, ZDEV_COND_OFFLINE, 2);
	ck_assert_int_eq(wr(dev, 5, 0, 1, 1), -EIO);
	ck_rule(dev, ZSIM_RULE_WRITE_READONLY, 0);
	ck_assert_int_eq(wr(dev, 4, 0, 1, 1), 0);
	zdev_close(dev);
}
END_TEST

/* Malformed fault values are -EINVAL naming the key. */
START_TEST(test_spec_refuses_malformed_fault_values_naming_key)
{
	char spec[1024];
	int i;

	ck_refused("sim:fail=write", "fail");
	ck_refused("sim:fail=write:0", "fail");
	ck_refused("sim:fail=write:x", "fail");
	ck_refused("sim:fail=bogus:3", "fail");
	ck_refused("sim:fail=meta/bogus:3", "fail");
	ck_refused("sim:fail=report:3", "fail");
	ck_refused("sim:fail_rate=write:101%", "fail_rate");
	ck_refused("sim:fail_rate=0", "fail_rate");
	ck_refused("sim:fail_rate=1000001", "fail_rate");
	ck_refused("sim:fail_rate=write:5q", "fail_rate");
	ck_refused("sim:fail_rate=0.00001%", "fail_rate");
	ck_refused("sim:zone_fail=offline:64", "zone_fail");
	ck_refused("sim:zone_fail=broken:1", "zone_fail");
	ck_refused("sim:zone_fail=offline:1@x", "zone_fail");
	ck_refused("sim:zone_fail=offline", "zone_fail");
	snprintf(spec, sizeof(spec), "sim:zones=4");
	for (i = 0; i <= ZSIM_MAX_FAULTS; i++)
		strcat(spec, ",fail=write:1");
	ck_refused(spec, "fail");
}
END_TEST

/*
 * A scenario names its device with device=sim:..., so the fault keys work
 * in scenarios: the run stops with the device's error, never success.
 */
static int run_scenario_on(const char *faults)
{
	char dev[256], res[64];
	const char *sets[] = { dev, "runtime=20ms" };
	char *dir = NULL;
	int ret;

	snprintf(dev, sizeof(dev),
		 "device=sim:zones=256,zone_size=64M,zone_cap=34M,max_open=14,max_active=14,data=off%s",
		 faults);
	snprintf(res, sizeof(res), "/tmp/zsim-run-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(res));
	ret = zrun_scenario("configs/raw-seqwrite-128k.scenario", sets, 2,
			    res, true, &dir);
	free(dir);
	snprintf(dev, sizeof(dev), "rm -rf '%s'", res);
	ck_assert_int_eq(system(dev), 0);
	return ret;
}

START_TEST(test_scenario_device_with_fault_keys_fails_the_run_with_eio)
{
	ck_assert_int_eq(run_scenario_on(""), 0);
	ck_assert_int_eq(run_scenario_on(",fail=write:100"), -EIO);
	ck_assert_int_eq(run_scenario_on(",zone_fail=offline:0@10"), -EIO);
	ck_assert_int_eq(run_scenario_on(",fail_rate=write:1%,seed=5"), -EIO);
}
END_TEST

START_TEST(test_trace_csv_has_header_and_one_line_per_command)
{
	struct zdev *dev = mk();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	zsim_trace_csv(sim_of(dev), f);
	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(wr_flags(dev, 2, 1, 1, 1, ZDEV_WRITE_FUA), 0);
	ck_assert_int_eq(wr(dev, 2, 5, 1, 1), -EIO);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	zsim_trace_csv(sim_of(dev), NULL);
	fclose(f);
	ck_assert_str_eq(text,
			 "seq,class,op,zone,offset,length,result,durability\n"
			 "1,data,write,131072,131072,4096,0,volatile\n"
			 "2,data,write,131072,135168,4096,0,durable\n"
			 "3,data,write,131072,151552,4096,-5,volatile\n"
			 "4,flush,flush,0,0,0,0,durable\n"
			 "5,zone,reset,131072,131072,65536,0,durable\n");
	free(text);
	zdev_close(dev);
}
END_TEST

START_TEST(test_parse_cut_names_crash_points)
{
	struct zsim_cut c;

	ck_assert_int_eq(zsim_parse_cut("persist=12", &c), 0);
	ck_assert_int_eq(c.kind, ZSIM_CUT_PERSIST);
	ck_assert_uint_eq(c.ordinal, 12);
	ck_assert_int_eq(zsim_parse_cut("sb:3:before", &c), 0);
	ck_assert_int_eq(c.kind, ZSIM_CUT_CLASS);
	ck_assert_int_eq(c.cls, ZDEV_CLASS_SB);
	ck_assert_int_eq(c.when, ZSIM_CUT_BEFORE);
	ck_assert_int_eq(zsim_parse_cut("data:7:torn", &c), 0);
	ck_assert_int_eq(c.when, ZSIM_CUT_TORN);
	ck_assert_int_eq(zsim_parse_cut("reset:1:before", &c), 0);
	ck_assert_int_eq(c.kind, ZSIM_CUT_RESET);
	ck_assert_int_eq(zsim_parse_cut("finish:2:after", &c), 0);
	ck_assert_int_eq(c.kind, ZSIM_CUT_FINISH);
	ck_assert_int_eq(zsim_parse_cut("zone:4:after", &c), 0);
	ck_assert_int_eq(c.kind, ZSIM_CUT_ZONE_OP);
	ck_assert_int_eq(zsim_parse_cut("flush:5:after", &c), 0);
	ck_assert_int_eq(c.kind, ZSIM_CUT_FLUSH);
	ck_assert_int_eq(zsim_parse_cut("sb:0:before", &c), -EINVAL);
	ck_assert_int_eq(zsim_parse_cut("sb:1:sideways", &c), -EINVAL);
	ck_assert_int_eq(zsim_parse_cut("nope:1:before", &c), -EINVAL);
	ck_assert_int_eq(zsim_parse_cut("sb:1", &c), -EINVAL);
	ck_assert_int_eq(zsim_loss_parse("prefix"), ZSIM_LOSS_PREFIX);
	ck_assert_int_eq(zsim_loss_parse("x"), -EINVAL);
}
END_TEST

Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_write_at_wp_of_empty_zone_opens_it_implicitly);
	tcase_add_test(tc, test_write_below_wp_is_eio_not_at_wp);
	tcase_add_test(tc,
		       test_write_above_wp_is_eio_not_at_wp_and_changes_nothing);
	tcase_add_test(tc, test_write_crossing_capacity_is_eio_write_boundary);
	tcase_add_test(tc,
		       test_write_reaching_capacity_makes_full_with_wp_at_zone_size);
	tcase_add_test(tc,
		       test_write_to_full_zone_is_eio_full_checked_before_wp);
	tcase_add_test(tc, test_write_in_gap_of_open_zone_is_not_at_wp);
	tcase_add_test(tc, test_explicitly_open_zone_stays_open_on_write);
	tcase_add_test(tc,
		       test_write_at_wp_of_closed_zone_reopens_it_implicitly);
	tcase_add_test(tc, test_read_above_wp_gap_and_empty_returns_zeros);
	tcase_add_test(tc, test_read_across_zone_end_is_eio_read_boundary);
	tcase_add_test(tc, test_reset_destroys_data);
	tcase_add_test(tc,
		       test_conv_zone_takes_random_writes_and_reports_not_wp);
	tcase_add_test(tc,
		       test_conv_write_crossing_zone_end_is_eio_write_boundary);
	tcase_add_test(tc, test_zone_op_on_conv_zone_is_eio_bad_transition);
	tcase_add_test(tc,
		       test_open_limit_closes_oldest_implicitly_open_zone_fifo);
	tcase_add_test(tc, test_open_limit_with_all_explicit_is_etoomanyrefs);
	tcase_add_test(tc, test_zone_filled_to_capacity_frees_its_slots);
	tcase_add_test(tc,
		       test_active_limit_is_eoverflow_and_still_closes_oldest);
	tcase_add_test(tc, test_closed_at_zero_holds_an_active_slot);
	tcase_add_test(tc, test_active_limit_wins_over_open_limit);
	tcase_add_test(tc, test_no_auto_close_is_etoomanyrefs_without_closing);
	tcase_add_test(tc,
		       test_append_returns_wp_before_and_shares_wp_with_writes);
	tcase_add_test(tc, test_append_not_at_zone_start_is_einval);
	tcase_add_test(tc, test_append_above_max_append_is_einval);
	tcase_add_test(tc, test_append_to_conventional_zone_is_einval);
	tcase_add_test(tc,
		       test_append_crossing_capacity_is_eio_boundary_and_full_is_eio);
	tcase_add_test(tc,
		       test_open_transitions_and_open_of_full_is_bad_transition);
	tcase_add_test(tc, test_close_of_empty_open_zone_gives_closed_at_zero);
	tcase_add_test(tc, test_close_of_empty_or_full_zone_is_bad_transition);
	tcase_add_test(tc, test_finish_of_full_and_reset_of_empty_are_no_ops);
	tcase_add_test(tc,
		       test_range_op_processes_every_zone_and_fails_if_any_failed);
	tcase_add_test(tc,
		       test_reset_all_empties_every_sequential_zone_and_skips_conv);
	tcase_add_test(tc, test_readonly_zone_refuses_writes_and_reads_back);
	tcase_add_test(tc,
		       test_offline_zone_refuses_reads_writes_and_zone_ops);
	tcase_add_test(tc, test_injected_fault_fails_nth_command_of_op_only);
	tcase_add_test(tc, test_fault_rate_is_seeded_and_reproducible);
	tcase_add_test(tc,
		       test_sparse_1tib_device_uses_memory_only_for_data);
	tcase_add_test(tc, test_spec_sets_geometry_and_bad_key_is_einval);
	tcase_add_test(tc,
		       test_spec_refuses_geometry_beyond_device_limits_naming_key);
	tcase_add_test(tc, test_spec_fail_key_fails_nth_command_of_op_or_class);
	tcase_add_test(tc, test_spec_fail_rate_is_seeded_by_seed_key);
	tcase_add_test(tc, test_spec_zone_fail_turns_zone_at_command_count);
	tcase_add_test(tc, test_spec_refuses_malformed_fault_values_naming_key);
	tcase_add_test(tc,
		       test_scenario_device_with_fault_keys_fails_the_run_with_eio);
	tcase_add_test(tc, test_trace_csv_has_header_and_one_line_per_command);
	tcase_add_test(tc, test_parse_cut_names_crash_points);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- power cuts -------------------------------------------------------- */

static void ck_cut_refuses_everything(struct zdev *dev)
{
	struct zsim *sim = sim_of(dev);
	uint64_t before = zsim_nr_violations(sim, ZSIM_RULE_POWER_OFF);
	struct zdev_zone z;
	uint8_t buf[LBA];
	unsigned int nr = 1;

	ck_assert(zsim_is_cut(sim));
	ck_assert_int_eq(wr(dev, 6, 0, 1, 1), -EIO);
	ck_assert_int_eq(app(dev, 6, 1, 1, NULL), -EIO);
	ck_assert_int_eq(zdev_read(dev, buf, LBA, 0, ZDEV_CLASS_OTHER), -EIO);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 6), -EIO);
	ck_assert_int_eq(zdev_flush(dev), -EIO);
	ck_assert_int_eq(zdev_report(dev, 0, &z, &nr), -EIO);
	ck_rule(dev, ZSIM_RULE_POWER_OFF, before + 5);
}

START_TEST(test_cut_drop_keeps_only_flushed_and_fua_writes)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 2, 0xa0), 0);
	ck_assert_int_eq(wr(dev, 0, 1, 1, 0xe0), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(wr(dev, 2, 2, 3, 0xb0), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 2, 0xc0), 0);
	ck_assert_int_eq(wr_flags(dev, 3, 2, 1, 0xd0, ZDEV_WRITE_FUA), 0);
	ck_assert_int_eq(wr(dev, 0, 1, 1, 0xf0), 0);
	ck_assert_int_eq(wr(dev, 0, 5, 1, 0xf1), 0);
	ck_assert_int_eq(wr(dev, 4, 0, 1, 0x40), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 1), 0);
	ck_cut_refuses_everything(dev);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_assert(!zsim_is_cut(sim_of(dev)));
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 2);
	ck_data(dev, 2, 0, 2, 0xa0);
	ck_data(dev, 2, 2, 3, 0);
	/* FUA in a sequential zone persists the zone up to its wp. */
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 3);
	ck_data(dev, 3, 0, 2, 0xc0);
	ck_data(dev, 3, 2, 1, 0xd0);
	ck_zone(dev, 4, ZDEV_COND_EMPTY, 0);
	ck_data(dev, 0, 1, 1, 0xe0);
	ck_data(dev, 0, 5, 1, 0);
	/* Writes go on at the surviving wp. */
	ck_assert_int_eq(wr(dev, 2, 2, 1, 0x22), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 3);
	zdev_close(dev);
}
END_TEST

START_TEST(test_cut_keep_keeps_everything_and_cycle_closes_open_zones)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 5, 0xa0), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 3), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 1, 0xa1), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 4), 0);
	ck_assert_int_eq(wr(dev, 5, 0, 12, 0xa2), 0);
	ck_assert_int_eq(wr(dev, 1, 3, 1, 0xa3), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_KEEP, 1), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 5);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 4, ZDEV_COND_EMPTY, 0);
	ck_zone(dev, 5, ZDEV_COND_FULL, 16);
	ck_data(dev, 2, 0, 5, 0xa0);
	ck_data(dev, 5, 0, 12, 0xa2);
	ck_data(dev, 1, 3, 1, 0xa3);
	zdev_close(dev);
}
END_TEST

/* Zones 2..5: 2 flushed LBAs, then 8 volatile; cut with @loss, cycle. */
static void prefix_run(enum zsim_loss loss, uint64_t seed, uint64_t wps[4])
{
	struct zdev *dev = mk();
	struct zdev_zone z;
	int i;

	for (i = 0; i < 4; i++)
		ck_assert_int_eq(wr(dev, 2 + i, 0, 2, 0x10 + i), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(wr(dev, 2 + i, 2, 8, 0x20 + i), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), loss, seed), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(zdev_report_zone(dev, (2 + i) * ZS, &z), 0);
		wps[i] = (z.wp - z.start) / LBA;
		ck_assert_uint_ge(wps[i], 2);
		ck_assert_uint_le(wps[i], 10);
		ck_assert_int_eq(z.cond, ZDEV_COND_CLOSED);
		ck_data(dev, 2 + i, 0, 2, 0x10 + i);
		if (wps[i] > 2)
			ck_data(dev, 2 + i, 2, wps[i] - 2, 0x20 + i);
		ck_data(dev, 2 + i, wps[i], 16 - wps[i], 0);
	}
	zdev_close(dev);
}

START_TEST(test_cut_prefix_keeps_a_seeded_lba_prefix_of_each_tail)
{
	uint64_t a[4], b[4], c[4];
	bool differs = false;
	uint64_t seed;

	prefix_run(ZSIM_LOSS_PREFIX, 42, a);
	prefix_run(ZSIM_LOSS_PREFIX, 42, b);
	ck_assert_mem_eq(a, b, sizeof(a));
	for (seed = 1; seed < 10 && !differs; seed++) {
		prefix_run(ZSIM_LOSS_PREFIX, seed, c);
		differs = memcmp(a, c, sizeof(a)) != 0;
	}
	ck_assert_msg(differs, "prefix loss ignores its seed");
	/* Not every zone keeps the same prefix. */
	ck_assert(a[0] != a[1] || a[1] != a[2] || a[2] != a[3]);
}
END_TEST

START_TEST(test_cut_torn_tears_only_the_last_write_of_a_seq_zone)
{
	uint64_t seed;

	for (seed = 0; seed < 8; seed++) {
		struct zdev *dev = mk();
		struct zdev_zone z;
		uint64_t wp;

		ck_assert_int_eq(wr(dev, 2, 0, 2, 0x11), 0);
		ck_assert_int_eq(wr(dev, 3, 0, 4, 0x22), 0);
		ck_assert_int_eq(wr(dev, 3, 4, 4, 0x33), 0);
		ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_TORN,
					      seed), 0);
		ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
		ck_zone(dev, 2, ZDEV_COND_CLOSED, 2);
		ck_data(dev, 2, 0, 2, 0x11);
		ck_assert_int_eq(zdev_report_zone(dev, 3 * ZS, &z), 0);
		wp = (z.wp - z.start) / LBA;
		/* A strict prefix of the last write survives. */
		ck_assert_uint_ge(wp, 4);
		ck_assert_uint_lt(wp, 8);
		ck_data(dev, 3, 0, 4, 0x22);
		ck_data(dev, 3, 4, wp - 4, 0x33);
		ck_data(dev, 3, wp, 16 - wp, 0);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_cut_torn_conv_write_keeps_prefix_and_rest_is_garbage)
{
	uint8_t buf[4 * LBA];
	uint64_t seed, i, k;

	for (seed = 0; seed < 8; seed++) {
		struct zdev *dev = mk();

		ck_assert_int_eq(wr(dev, 0, 0, 4, 0x55), 0);
		ck_assert_int_eq(zdev_flush(dev), 0);
		ck_assert_int_eq(wr(dev, 0, 0, 4, 0xaa), 0);
		ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_TORN,
					      seed), 0);
		ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
		ck_assert_int_eq(zdev_read(dev, buf, sizeof(buf), 0,
					   ZDEV_CLASS_OTHER), 0);
		for (k = 0; k < 4 && buf[k * LBA] == 0xaa &&
			    buf[k * LBA + 1] == 0xaa; k++)
			;
		ck_assert_uint_lt(k, 4);
		for (i = 0; i < k * LBA; i++)
			ck_assert_uint_eq(buf[i], 0xaa);
		for (i = k * LBA; i < sizeof(buf); i++)
			ck_assert_uint_ne(buf[i], 0);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_cut_subset_keeps_any_subset_of_conv_writes)
{
	bool seen_old = false, seen_new = false;
	uint64_t seed;
	int i;

	for (seed = 0; seed < 4; seed++) {
		struct zdev *dev = mk();

		for (i = 0; i < 8; i++)
			ck_assert_int_eq(wr(dev, 1, i, 1, 0x80 + i), 0);
		ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_SUBSET,
					      seed), 0);
		ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
		for (i = 0; i < 8; i++) {
			uint8_t b[LBA];

			ck_assert_int_eq(zdev_read(dev, b, LBA, at(1, i),
						   ZDEV_CLASS_OTHER), 0);
			if (b[0] == 0) {
				seen_old = true;
				ck_data(dev, 1, i, 1, 0);
			} else {
				seen_new = true;
				ck_data(dev, 1, i, 1, 0x80 + i);
			}
		}
		zdev_close(dev);
	}
	ck_assert(seen_old && seen_new);
}
END_TEST

START_TEST(test_fua_conv_write_survives_drop_between_volatile_overwrites)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 0, 3, 1, 0x01), 0);
	ck_assert_int_eq(wr_flags(dev, 0, 3, 1, 0x02, ZDEV_WRITE_FUA), 0);
	ck_assert_int_eq(wr(dev, 0, 3, 1, 0x03), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_data(dev, 0, 3, 1, 0x02);
	zdev_close(dev);
}
END_TEST

START_TEST(test_flush_makes_every_write_durable)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 3, 0x31), 0);
	ck_assert_int_eq(wr(dev, 0, 0, 1, 0x32), 0);
	ck_assert_int_eq(app(dev, 3, 2, 0x33, NULL), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 3);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 2);
	ck_data(dev, 2, 0, 3, 0x31);
	ck_data(dev, 0, 0, 1, 0x32);
	ck_data(dev, 3, 0, 2, 0x33);
	zdev_close(dev);
}
END_TEST

START_TEST(test_reset_is_atomic_and_durable)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 8, 0x41), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 4, 0x42), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 3), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 1, 0x43), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_KEEP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	ck_data(dev, 2, 0, 8, 0);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 1);
	ck_data(dev, 3, 0, 1, 0x43);
	ck_data(dev, 3, 1, 3, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_finish_is_atomic_and_makes_the_zone_durable)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 3, 0x51), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 2), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_data(dev, 2, 0, 3, 0x51);
	ck_data(dev, 2, 3, 13, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_full_zone_losing_its_tail_comes_back_closed_or_empty)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 4, 0x61), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(wr(dev, 2, 4, 8, 0x62), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 12, 0x63), 0);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 4);
	ck_zone(dev, 3, ZDEV_COND_EMPTY, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_commands_fail_eio_after_cut_until_power_cycle)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 1, 1), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_KEEP, 0), 0);
	ck_cut_refuses_everything(dev);
	ck_cut_refuses_everything(dev);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_assert_int_eq(wr(dev, 2, 1, 1, 1), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 2);
	zdev_close(dev);
}
END_TEST

static int wr_cls(struct zdev *dev, uint64_t zno, uint64_t lba, uint8_t fill,
		  enum zdev_class cls)
{
	uint8_t buf[LBA];

	memset(buf, fill, LBA);
	return zdev_write(dev, buf, LBA, at(zno, lba), 0, cls);
}

static void arm(struct zdev *dev, const char *point, enum zsim_loss loss,
		uint64_t seed)
{
	struct zsim_cut cut;

	ck_assert_int_eq(zsim_parse_cut(point, &cut), 0);
	cut.loss = loss;
	cut.seed = seed;
	ck_assert_int_eq(zsim_arm_cut(sim_of(dev), &cut), 0);
}

START_TEST(test_cut_before_nth_sb_write_never_lands_it)
{
	struct zdev *dev = mk();

	arm(dev, "sb:2:before", ZSIM_LOSS_KEEP, 0);
	ck_assert_int_eq(wr_cls(dev, 2, 0, 0x71, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(wr_cls(dev, 3, 0, 0x72, ZDEV_CLASS_DATA), 0);
	ck_assert(!zsim_is_cut(sim_of(dev)));
	ck_assert_int_eq(wr_cls(dev, 2, 1, 0x73, ZDEV_CLASS_SB), -EIO);
	ck_rule(dev, ZSIM_RULE_POWER_OFF, 0);
	ck_assert(zsim_is_cut(sim_of(dev)));
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 1);
	ck_zone(dev, 3, ZDEV_COND_CLOSED, 1);
	ck_data(dev, 2, 0, 1, 0x71);
	ck_data(dev, 2, 1, 1, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_cut_after_nth_sb_write_completes_it_then_loses_power)
{
	struct zdev *dev = mk();

	arm(dev, "sb:2:after", ZSIM_LOSS_KEEP, 0);
	ck_assert_int_eq(wr_cls(dev, 2, 0, 0x71, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(wr_cls(dev, 2, 1, 0x72, ZDEV_CLASS_SB), 0);
	ck_assert(zsim_is_cut(sim_of(dev)));
	ck_assert_int_eq(wr_cls(dev, 2, 2, 0x73, ZDEV_CLASS_SB), -EIO);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 2);
	ck_data(dev, 2, 1, 1, 0x72);
	zdev_close(dev);

	/* The same point with DROP: the completed but unflushed write goes. */
	dev = mk();
	arm(dev, "sb:2:after", ZSIM_LOSS_DROP, 0);
	ck_assert_int_eq(wr_cls(dev, 2, 0, 0x71, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(wr_cls(dev, 2, 1, 0x72, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 1);
	zdev_close(dev);
}
END_TEST

START_TEST(test_cut_torn_during_nth_data_append_lands_a_strict_prefix)
{
	uint64_t seed;

	for (seed = 0; seed < 6; seed++) {
		struct zdev *dev = mk();
		struct zdev_zone z;
		uint64_t off, wp;

		arm(dev, "data:2:torn", ZSIM_LOSS_KEEP, seed);
		ck_assert_int_eq(app(dev, 2, 2, 0x81, &off), 0);
		/* FUA does not save a torn command. */
		ck_assert_int_eq(zdev_append(dev, (uint8_t[4 * LBA]){ 0x82 },
					     4 * LBA, 2 * ZS, ZDEV_WRITE_FUA,
					     ZDEV_CLASS_DATA, &off), -EIO);
		ck_rule(dev, ZSIM_RULE_POWER_OFF, 0);
		ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
		ck_assert_int_eq(zdev_report_zone(dev, 2 * ZS, &z), 0);
		wp = (z.wp - z.start) / LBA;
		ck_assert_uint_ge(wp, 2);
		ck_assert_uint_lt(wp, 6);
		ck_data(dev, 2, 0, 2, 0x81);
		ck_data(dev, 2, wp, 16 - wp, 0);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_cut_at_reset_is_atomic_before_or_after)
{
	struct zdev *dev = mk();

	ck_assert_int_eq(wr(dev, 2, 0, 3, 0x91), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	arm(dev, "reset:1:before", ZSIM_LOSS_KEEP, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), -EIO);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 3);
	arm(dev, "reset:1:torn", ZSIM_LOSS_KEEP, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), -EIO);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 3);
	arm(dev, "reset:1:after", ZSIM_LOSS_DROP, 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_RESET, 2), 0);
	ck_assert(zsim_is_cut(sim_of(dev)));
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_EMPTY, 0);
	arm(dev, "finish:1:after", ZSIM_LOSS_DROP, 0);
	ck_assert_int_eq(wr(dev, 3, 0, 2, 0x92), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 3), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 3, ZDEV_COND_FULL, 16);
	ck_data(dev, 3, 0, 2, 0x92);
	zdev_close(dev);
}
END_TEST

/* The sequence of the persist-point tests: 4 persist points, 1 read. */
static int persist_seq(struct zdev *dev, int step)
{
	uint8_t buf[LBA];

	switch (step) {
	case 0:
		return wr(dev, 2, 0, 1, 0xa1);
	case 1:
		return zdev_read(dev, buf, LBA, at(2, 0), ZDEV_CLASS_OTHER);
	case 2:
		return zdev_flush(dev);
	case 3:
		return mgmt(dev, ZDEV_ZONE_OPEN, 3);
	default:
		return app(dev, 3, 1, 0xa2, NULL);
	}
}

START_TEST(test_persist_points_count_writes_zone_ops_and_flushes)
{
	struct zdev *dev = mk();
	struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST, .ordinal = 3,
				.when = ZSIM_CUT_AFTER,
				.loss = ZSIM_LOSS_DROP };
	int step;

	for (step = 0; step < 5; step++)
		ck_assert_int_eq(persist_seq(dev, step), 0);
	ck_assert_uint_eq(zsim_nr_persist(sim_of(dev)), 4);
	zdev_close(dev);

	dev = mk();
	ck_assert_int_eq(zsim_arm_cut(sim_of(dev), &cut), 0);
	for (step = 0; step < 4; step++)
		ck_assert_int_eq(persist_seq(dev, step), 0);
	ck_assert(zsim_is_cut(sim_of(dev)));
	ck_assert_int_eq(persist_seq(dev, 4), -EIO);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 2, ZDEV_COND_CLOSED, 1);
	/* Open with nothing written comes back EMPTY. */
	ck_zone(dev, 3, ZDEV_COND_EMPTY, 0);
	ck_data(dev, 2, 0, 1, 0xa1);
	zdev_close(dev);
}
END_TEST

/* ---- power domains ------------------------------------------------------ */

static struct zdev *mk_linked_to(struct zdev *a)
{
	struct zdev *b = mk();

	ck_assert_int_eq(zsim_link_power(sim_of(a), sim_of(b)), 0);
	return b;
}

/*
 * Two linked devices: a crash point numbers the persist points of both in
 * issue order; when it fires on the second device both lose power, both
 * refuse every command, and under DROP each keeps only what it flushed.
 */
START_TEST(test_linked_cut_at_second_device_cuts_both_and_drops_unflushed)
{
	struct zdev *a = mk(), *b = mk_linked_to(a);

	arm(a, "persist=5", ZSIM_LOSS_DROP, 1);
	ck_assert_int_eq(wr(a, 2, 0, 2, 0xa0), 0);	/* 1 */
	ck_assert_int_eq(zdev_flush(a), 0);		/* 2 */
	ck_assert_int_eq(wr(b, 2, 0, 1, 0xb0), 0);	/* 3 */
	ck_assert_int_eq(wr(a, 2, 2, 1, 0xa1), 0);	/* 4 */
	ck_assert(!zsim_is_cut(sim_of(a)));
	ck_assert_int_eq(wr(b, 3, 0, 1, 0xb1), 0);	/* 5: cut after it */
	ck_assert(zsim_is_cut(sim_of(a)));
	ck_assert(zsim_is_cut(sim_of(b)));
	ck_assert_uint_eq(zsim_nr_persist(sim_of(a)), 5);
	ck_assert_uint_eq(zsim_nr_persist(sim_of(b)), 5);
	ck_cut_refuses_everything(a);
	ck_cut_refuses_everything(b);
	/* power comes back one device at a time */
	ck_assert_int_eq(zsim_power_cycle(sim_of(a)), 0);
	ck_assert(!zsim_is_cut(sim_of(a)));
	ck_assert(zsim_is_cut(sim_of(b)));
	ck_zone(a, 2, ZDEV_COND_CLOSED, 2);
	ck_data(a, 2, 0, 2, 0xa0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(b)), 0);
	ck_zone(b, 2, ZDEV_COND_EMPTY, 0);
	ck_zone(b, 3, ZDEV_COND_EMPTY, 0);
	zdev_close(a);
	zdev_close(b);
}
END_TEST

/* Named points count the commands of every device of the domain too: a
 * reset on one device and a flush on the other. */
START_TEST(test_linked_named_point_counts_both_devices_and_cuts_before)
{
	struct zdev *a = mk(), *b = mk_linked_to(a);

	ck_assert_int_eq(wr(a, 2, 0, 1, 0xa0), 0);
	ck_assert_int_eq(wr(b, 2, 0, 1, 0xb0), 0);
	ck_assert_int_eq(zdev_flush(b), 0);
	arm(b, "reset:2:before", ZSIM_LOSS_KEEP, 0);
	ck_assert_int_eq(mgmt(b, ZDEV_ZONE_RESET, 4), 0);
	ck_assert_int_eq(mgmt(a, ZDEV_ZONE_RESET, 2), -EIO);
	ck_assert(zsim_is_cut(sim_of(a)));
	ck_assert(zsim_is_cut(sim_of(b)));
	ck_assert_int_eq(zsim_power_cycle(sim_of(a)), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(b)), 0);
	/* the reset never reached a; KEEP kept a's unflushed write */
	ck_zone(a, 2, ZDEV_COND_CLOSED, 1);
	ck_data(a, 2, 0, 1, 0xa0);
	ck_zone(b, 2, ZDEV_COND_CLOSED, 1);
	zdev_close(a);
	zdev_close(b);
}
END_TEST

/* zsim_cut_now on one device cuts the domain; a closed device leaves it. */
START_TEST(test_linked_cut_now_cuts_every_device_and_close_unlinks)
{
	struct zdev *a = mk(), *b = mk_linked_to(a);

	ck_assert_int_eq(wr(a, 2, 0, 1, 0xa0), 0);
	ck_assert_int_eq(wr(b, 2, 0, 1, 0xb0), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(b), ZSIM_LOSS_KEEP, 0), 0);
	ck_assert(zsim_is_cut(sim_of(a)));
	ck_assert(zsim_is_cut(sim_of(b)));
	ck_assert_int_eq(zsim_power_cycle(sim_of(a)), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(b)), 0);
	ck_data(a, 2, 0, 1, 0xa0);
	ck_data(b, 2, 0, 1, 0xb0);
	zdev_close(a);
	/* b goes on alone: its cut no longer reaches a closed device */
	arm(b, "persist=1", ZSIM_LOSS_DROP, 0);
	ck_assert_int_eq(wr(b, 2, 1, 1, 0xb1), 0);
	ck_assert(zsim_is_cut(sim_of(b)));
	ck_assert_int_eq(zsim_power_cycle(sim_of(b)), 0);
	ck_zone(b, 2, ZDEV_COND_CLOSED, 1);
	zdev_close(b);
}
END_TEST

START_TEST(test_link_refuses_itself_twice_a_linked_device_and_armed)
{
	struct zdev *a = mk(), *b = mk(), *c = mk(), *d = mk();

	ck_assert_int_eq(zsim_link_power(sim_of(a), sim_of(a)), -EINVAL);
	ck_assert_int_eq(zsim_link_power(sim_of(a), sim_of(b)), 0);
	ck_assert_int_eq(zsim_link_power(sim_of(a), sim_of(b)), -EINVAL);
	ck_assert_int_eq(zsim_link_power(sim_of(b), sim_of(a)), -EINVAL);
	/* b has a domain with a: it cannot join c's */
	ck_assert_int_eq(zsim_link_power(sim_of(c), sim_of(b)), -EBUSY);
	arm(c, "persist=3", ZSIM_LOSS_DROP, 0);
	ck_assert_int_eq(zsim_link_power(sim_of(a), sim_of(c)), -EBUSY);
	ck_assert_int_eq(zsim_link_power(sim_of(c), sim_of(d)), -EBUSY);
	/* disarmed, c joins a and b: a domain of three */
	ck_assert_int_eq(zsim_arm_cut(sim_of(c),
				      &(struct zsim_cut){ .kind = ZSIM_CUT_NONE }),
			 0);
	ck_assert_int_eq(zsim_link_power(sim_of(b), sim_of(c)), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(a), ZSIM_LOSS_DROP, 0), 0);
	ck_assert(zsim_is_cut(sim_of(c)));
	ck_assert(!zsim_is_cut(sim_of(d)));
	zdev_close(a);
	zdev_close(b);
	zdev_close(c);
	zdev_close(d);
}
END_TEST

/* The wp a PREFIX cut with @seed leaves in zone 2 after 10 volatile
 * blocks, on @dev (and, when @other is set, 10 on it too, cut with it). */
static uint64_t prefix_left(struct zdev *dev, struct zdev *other,
			    uint64_t seed, uint64_t *other_wp_ret)
{
	struct zdev_zone z;

	ck_assert_int_eq(wr(dev, 2, 0, 10, 0x5a), 0);
	if (other)
		ck_assert_int_eq(wr(other, 2, 0, 10, 0x5b), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_PREFIX, seed), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	if (other) {
		ck_assert_int_eq(zsim_power_cycle(sim_of(other)), 0);
		ck_assert_int_eq(zdev_report_zone(other, 2 * ZS, &z), 0);
		*other_wp_ret = z.wp - z.start;
	}
	ck_assert_int_eq(zdev_report_zone(dev, 2 * ZS, &z), 0);
	return z.wp - z.start;
}

/*
 * Each linked device applies the loss to its own writes: the first device
 * of a domain keeps what it keeps alone with the same seed, the one linked
 * later draws from a seed of its own (not always the first one's prefix).
 */
START_TEST(test_linked_prefix_loss_first_as_alone_second_own_seed)
{
	uint64_t seed, wa, wb, nr_differ = 0;

	for (seed = 1; seed <= 16; seed++) {
		struct zdev *solo = mk(), *a = mk(), *b = mk_linked_to(a);

		wa = prefix_left(a, b, seed, &wb);
		ck_assert_uint_eq(wa, prefix_left(solo, NULL, seed, NULL));
		nr_differ += wa != wb;
		zdev_close(solo);
		zdev_close(a);
		zdev_close(b);
	}
	ck_assert_uint_gt(nr_differ, 0);
}
END_TEST

Suite *sim_power_suite(void)
{
	Suite *s = suite_create("sim_power");
	TCase *tc = tcase_create("power");

	tcase_add_test(tc, test_cut_drop_keeps_only_flushed_and_fua_writes);
	tcase_add_test(tc,
		       test_linked_cut_at_second_device_cuts_both_and_drops_unflushed);
	tcase_add_test(tc,
		       test_linked_named_point_counts_both_devices_and_cuts_before);
	tcase_add_test(tc,
		       test_linked_cut_now_cuts_every_device_and_close_unlinks);
	tcase_add_test(tc,
		       test_link_refuses_itself_twice_a_linked_device_and_armed);
	tcase_add_test(tc,
		       test_linked_prefix_loss_first_as_alone_second_own_seed);
	tcase_add_test(tc,
		       test_cut_keep_keeps_everything_and_cycle_closes_open_zones);
	tcase_add_test(tc,
		       test_cut_prefix_keeps_a_seeded_lba_prefix_of_each_tail);
	tcase_add_test(tc,
		       test_cut_torn_tears_only_the_last_write_of_a_seq_zone);
	tcase_add_test(tc,
		       test_cut_torn_conv_write_keeps_prefix_and_rest_is_garbage);
	tcase_add_test(tc, test_cut_subset_keeps_any_subset_of_conv_writes);
	tcase_add_test(tc,
		       test_fua_conv_write_survives_drop_between_volatile_overwrites);
	tcase_add_test(tc, test_flush_makes_every_write_durable);
	tcase_add_test(tc, test_reset_is_atomic_and_durable);
	tcase_add_test(tc, test_finish_is_atomic_and_makes_the_zone_durable);
	tcase_add_test(tc,
		       test_full_zone_losing_its_tail_comes_back_closed_or_empty);
	tcase_add_test(tc, test_commands_fail_eio_after_cut_until_power_cycle);
	tcase_add_test(tc, test_cut_before_nth_sb_write_never_lands_it);
	tcase_add_test(tc,
		       test_cut_after_nth_sb_write_completes_it_then_loses_power);
	tcase_add_test(tc,
		       test_cut_torn_during_nth_data_append_lands_a_strict_prefix);
	tcase_add_test(tc, test_cut_at_reset_is_atomic_before_or_after);
	tcase_add_test(tc,
		       test_persist_points_count_writes_zone_ops_and_flushes);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- images and import --------------------------------------------------- */

static char tmpdir[256];

static void mk_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/zsim-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Every zone's report and every byte of two devices match. */
static void ck_same_device(struct zdev *a, struct zdev *b)
{
	uint8_t *ba = malloc(ZS), *bb = malloc(ZS);
	struct zdev_zone za, zb;
	uint64_t i;

	ck_assert_ptr_nonnull(ba);
	ck_assert_ptr_nonnull(bb);
	ck_assert_uint_eq(a->info.nr_zones, b->info.nr_zones);
	for (i = 0; i < a->info.nr_zones; i++) {
		ck_assert_int_eq(zdev_report_zone(a, i * ZS, &za), 0);
		ck_assert_int_eq(zdev_report_zone(b, i * ZS, &zb), 0);
		ck_assert_uint_eq(za.start, zb.start);
		ck_assert_uint_eq(za.len, zb.len);
		ck_assert_uint_eq(za.capacity, zb.capacity);
		ck_assert_uint_eq(za.wp, zb.wp);
		ck_assert_uint_eq(za.type, zb.type);
		ck_assert_uint_eq(za.cond, zb.cond);
		ck_assert_int_eq(zdev_read(a, ba, ZS, i * ZS,
					   ZDEV_CLASS_OTHER), 0);
		ck_assert_int_eq(zdev_read(b, bb, ZS, i * ZS,
					   ZDEV_CLASS_OTHER), 0);
		ck_assert_msg(memcmp(ba, bb, ZS) == 0, "zone %d data differs",
			      (int)i);
	}
	free(ba);
	free(bb);
}

/* A device with every kind of zone state, flushed and volatile data. */
static struct zdev *mk_busy(void)
{
	struct zdev *dev = mk_full(4, 6, false);

	ck_assert_int_eq(wr(dev, 0, 2, 2, 0x01), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 3, 0x02), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 12, 0x03), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_int_eq(wr(dev, 0, 3, 2, 0x04), 0);
	ck_assert_int_eq(wr(dev, 2, 3, 2, 0x05), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_OPEN, 4), 0);
	ck_assert_int_eq(wr(dev, 4, 0, 1, 0x06), 0);
	ck_assert_int_eq(wr(dev, 5, 0, 2, 0x07), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_CLOSE, 5), 0);
	ck_assert_int_eq(wr(dev, 6, 0, 5, 0x08), 0);
	ck_assert_int_eq(mgmt(dev, ZDEV_ZONE_FINISH, 6), 0);
	ck_assert_int_eq(wr(dev, 7, 0, 1, 0x09), 0);
	ck_assert_int_eq(wr(dev, 8, 0, 1, 0x0a), 0);
	return dev;
}

START_TEST(test_image_round_trip_keeps_zones_data_and_what_is_volatile)
{
	struct zdev *a = mk_busy(), *b;
	char path[300];

	mk_tmpdir();
	snprintf(path, sizeof(path), "%s/img", tmpdir);
	ck_assert_int_eq(zsim_save(sim_of(a), path), 0);
	ck_assert_int_eq(zsim_load(path, &b), 0);
	ck_assert_uint_eq(b->info.max_open, 4);
	ck_assert_uint_eq(b->info.max_active, 6);
	ck_same_device(a, b);
	/* The implicitly-open FIFO survives: both evict zone 2 first. */
	ck_assert_int_eq(wr(a, 9, 0, 1, 1), 0);
	ck_assert_int_eq(wr(b, 9, 0, 1, 1), 0);
	ck_zone(b, 2, ZDEV_COND_CLOSED, 5);
	ck_same_device(a, b);
	/* What was volatile is still volatile. */
	ck_assert_int_eq(zsim_cut_now(sim_of(a), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_cut_now(sim_of(b), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(a)), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(b)), 0);
	ck_same_device(a, b);
	ck_zone(b, 2, ZDEV_COND_CLOSED, 3);
	ck_data(b, 0, 3, 1, 0x01);
	ck_data(b, 0, 4, 1, 0);
	zdev_close(a);
	zdev_close(b);
	rm_tmpdir();
}
END_TEST

/*
 * zsim_export_file() writes what the device reads back as a plain file:
 * zone n at n x zone size, conventional and sequential zones (up to the
 * wp) alike, zeros elsewhere, the device's length; a cut device has no
 * contents to give (-EIO) until it is power-cycled.
 */
START_TEST(test_export_file_holds_every_byte_the_device_reads)
{
	struct zdev *dev = mk_busy();
	uint8_t *want = malloc(ZS), *got = malloc(ZS);
	char path[300];
	struct stat st;
	uint64_t i;
	int fd;

	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	mk_tmpdir();
	snprintf(path, sizeof(path), "%s/raw", tmpdir);
	ck_assert_int_eq(zsim_export_file(sim_of(dev), path), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, NR_ZONES * ZS);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	for (i = 0; i < NR_ZONES; i++) {
		ck_assert_int_eq(zdev_read(dev, want, ZS, i * ZS,
					   ZDEV_CLASS_OTHER), 0);
		ck_assert_int_eq(pread(fd, got, ZS, (off_t)(i * ZS)),
				 (ssize_t)ZS);
		ck_assert_msg(!memcmp(want, got, ZS), "zone %d differs",
			      (int)i);
	}
	/* a conventional zone's and a sequential zone's bytes are there */
	ck_assert_int_eq(pread(fd, got, 1, (off_t)(2 * LBA)), 1);
	ck_assert_uint_eq(got[0], 0x01);
	ck_assert_int_eq(pread(fd, got, 1, (off_t)(3 * ZS + 11 * LBA)), 1);
	ck_assert_uint_eq(got[0], 0x03);
	close(fd);
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_export_file(sim_of(dev), path), -EIO);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_assert_int_eq(zsim_export_file(sim_of(dev), path), 0);
	free(want);
	free(got);
	zdev_close(dev);
	rm_tmpdir();
}
END_TEST

/* emulated=on: a plain disk in emulated zones, as file: presents one
 * (is_zoned false), so every zone must be conventional. */
START_TEST(test_emulated_spec_is_a_non_zoned_device_of_conventional_zones)
{
	struct zdev *dev = NULL;

	ck_assert_int_eq(zdev_open("sim:zones=4,zone_size=1M,conv=4,emulated=on",
				   &dev), 0);
	ck_assert(!dev->info.is_zoned);
	ck_assert_uint_eq(dev->info.nr_conv, 4);
	zdev_close(dev);
	ck_assert_int_eq(zdev_open("sim:zones=4,zone_size=1M,conv=4", &dev), 0);
	ck_assert(dev->info.is_zoned);
	zdev_close(dev);
	ck_assert_int_eq(zdev_open("sim:zones=4,zone_size=1M,conv=3,emulated=on",
				   &dev), -EINVAL);
	ck_assert_int_eq(zdev_open("sim:zones=4,zone_size=1M,conv=4,emulated=yes",
				   &dev), -EINVAL);
}
END_TEST

START_TEST(test_cut_image_reopens_as_the_power_cycled_device)
{
	struct zdev *a = mk_busy(), *b;
	char path[300];

	mk_tmpdir();
	snprintf(path, sizeof(path), "%s/img", tmpdir);
	ck_assert_int_eq(zsim_cut_now(sim_of(a), ZSIM_LOSS_PREFIX, 9), 0);
	ck_assert_int_eq(zsim_save(sim_of(a), path), 0);
	ck_assert_int_eq(zsim_load(path, &b), 0);
	ck_assert(!zsim_is_cut(sim_of(b)));
	ck_assert_int_eq(zsim_power_cycle(sim_of(a)), 0);
	ck_same_device(a, b);
	ck_zone(b, 2, ZDEV_COND_CLOSED, 4);	/* seed 9 keeps 1 of 2 */
	ck_zone(b, 6, ZDEV_COND_FULL, 16);
	zdev_close(a);
	zdev_close(b);
	rm_tmpdir();
}
END_TEST

START_TEST(test_corrupt_or_truncated_image_is_euclean)
{
	struct zdev *a = mk_busy(), *b;
	char path[300], bad[300];
	uint8_t *img;
	long size, cut, i;
	FILE *f;

	mk_tmpdir();
	snprintf(path, sizeof(path), "%s/img", tmpdir);
	snprintf(bad, sizeof(bad), "%s/bad", tmpdir);
	ck_assert_int_eq(zsim_save(sim_of(a), path), 0);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	img = malloc(size);
	ck_assert_int_eq(fread(img, 1, size, f), size);
	fclose(f);
	for (cut = 0; cut < size; cut += 1 + cut / 3) {
		f = fopen(bad, "wb");
		ck_assert_int_eq(fwrite(img, 1, cut, f), cut);
		fclose(f);
		ck_assert_int_eq(zsim_load(bad, &b), -EUCLEAN);
	}
	for (i = 0; i < size; i += 1 + i / 2) {
		img[i] ^= 0x40;
		f = fopen(bad, "wb");
		ck_assert_int_eq(fwrite(img, 1, size, f), size);
		fclose(f);
		ck_assert_int_eq(zsim_load(bad, &b), -EUCLEAN);
		img[i] ^= 0x40;
	}
	ck_assert_int_eq(zsim_load("/nonexistent/img", &b), -ENOENT);
	free(img);
	zdev_close(a);
	rm_tmpdir();
}
END_TEST

START_TEST(test_image_spec_creates_reopens_and_refuses_mismatch)
{
	char spec[400];
	struct zdev *dev;

	mk_tmpdir();
	snprintf(spec, sizeof(spec),
		 "sim:image=%s/dev.img,zones=12,zone_size=64K,zone_cap=48K,conv=2,max_open=3",
		 tmpdir);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 2, 0x5a), 0);
	ck_assert_int_eq(wr(dev, 0, 0, 1, 0x5b), 0);
	ck_assert_int_eq(zdev_close(dev), 0);

	snprintf(spec, sizeof(spec), "sim:image=%s/dev.img", tmpdir);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 12);
	ck_assert_uint_eq(dev->info.zone_capacity, CAP);
	ck_assert_uint_eq(dev->info.max_open, 3);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 2);
	ck_data(dev, 2, 0, 2, 0x5a);
	ck_data(dev, 0, 0, 1, 0x5b);
	ck_assert_int_eq(wr(dev, 2, 2, 1, 0x5c), 0);
	ck_assert_int_eq(zdev_close(dev), 0);

	snprintf(spec, sizeof(spec), "sim:image=%s/dev.img,zones=12,conv=2",
		 tmpdir);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_zone(dev, 2, ZDEV_COND_IMP_OPEN, 3);
	ck_assert_int_eq(zdev_close(dev), 0);

	snprintf(spec, sizeof(spec), "sim:image=%s/dev.img,zones=13", tmpdir);
	ck_assert_int_eq(zdev_open(spec, &dev), -EINVAL);
	snprintf(spec, sizeof(spec), "sim:image=%s/dev.img,zone_size=128K",
		 tmpdir);
	ck_assert_int_eq(zdev_open(spec, &dev), -EINVAL);
	rm_tmpdir();
}
END_TEST

/* An image is one process's (or one open's) at a time: a second open
 * while the first is open is refused, -EBUSY, and the image it would have
 * loaded and saved over the first one's stays whole; after the close the
 * open succeeds and sees what the first wrote.  No temporary file is left
 * beside the image. */
START_TEST(test_image_open_twice_is_refused_busy)
{
	char spec[400], path[300];
	struct zdev *a, *b = NULL;
	struct stat st;
	DIR *d;
	struct dirent *e;
	int n = 0;

	mk_tmpdir();
	snprintf(spec, sizeof(spec),
		 "sim:image=%s/dev.img,zones=12,zone_size=64K,zone_cap=48K,conv=2",
		 tmpdir);
	ck_assert_int_eq(zdev_open(spec, &a), 0);
	ck_assert_int_eq(zdev_close(a), 0);
	snprintf(spec, sizeof(spec), "sim:image=%s/dev.img", tmpdir);
	ck_assert_int_eq(zdev_open(spec, &a), 0);
	ck_assert_int_eq(wr(a, 2, 0, 2, 0x5a), 0);
	ck_assert_int_eq(zdev_open(spec, &b), -EBUSY);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(zdev_close(a), 0);
	ck_assert_int_eq(zdev_open(spec, &b), 0);
	ck_data(b, 2, 0, 2, 0x5a);
	ck_assert_int_eq(zdev_close(b), 0);
	d = opendir(tmpdir);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(n, 1);		/* dev.img alone */
	snprintf(path, sizeof(path), "%s/dev.img", tmpdir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0644);
	rm_tmpdir();
}
END_TEST

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

START_TEST(test_import_reads_blkzone_report_and_zone_data)
{
	static const char report[] =
		"  start: 0x000000000, len 0x000080, cap 0x000080, wptr 0x000080 reset:0 non-seq:0, zcond: 0(nw) [type: 1(CONVENTIONAL)]\n"
		"  start: 0x000000080, len 0x000080, cap 0x000060, wptr 0x000010 reset:0 non-seq:0, zcond: 2(oi) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000100, len 0x000080, cap 0x000060, wptr 0x000080 reset:0 non-seq:0, zcond:14(fu) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000180, len 0x000080, cap 0x000060, wptr 0x000000 reset:0 non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000200, len 0x000080, cap 0x000060, wptr 0x000008 reset:0 non-seq:0, zcond: 4(cl) [type: 2(SEQ_WRITE_REQUIRED)]\n";
	uint8_t data[2 * LBA];
	char path[400];
	struct zdev *dev;

	mk_tmpdir();
	snprintf(path, sizeof(path), "%s/report.txt", tmpdir);
	write_file(path, report, strlen(report));
	snprintf(path, sizeof(path), "%s/zones", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	memset(data, 0xc1, sizeof(data));
	snprintf(path, sizeof(path), "%s/zones/1.bin", tmpdir);
	write_file(path, data, sizeof(data));
	memset(data, 0xc2, LBA);
	snprintf(path, sizeof(path), "%s/zones/0.bin", tmpdir);
	write_file(path, data, LBA);

	ck_assert_int_eq(zsim_import(tmpdir, &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 5);
	ck_assert_uint_eq(dev->info.nr_conv, 1);
	ck_assert_uint_eq(dev->info.zone_size, ZS);
	ck_assert_uint_eq(dev->info.zone_capacity, CAP);
	ck_zone(dev, 0, ZDEV_COND_NOT_WP, 16);
	ck_zone(dev, 1, ZDEV_COND_IMP_OPEN, 2);
	ck_zone(dev, 2, ZDEV_COND_FULL, 16);
	ck_zone(dev, 3, ZDEV_COND_EMPTY, 0);
	ck_zone(dev, 4, ZDEV_COND_CLOSED, 1);
	ck_data(dev, 0, 0, 1, 0xc2);
	ck_data(dev, 1, 0, 2, 0xc1);
	ck_data(dev, 4, 0, 1, 0);
	/* Imported data is durable. */
	ck_assert_int_eq(zsim_cut_now(sim_of(dev), ZSIM_LOSS_DROP, 0), 0);
	ck_assert_int_eq(zsim_power_cycle(sim_of(dev)), 0);
	ck_zone(dev, 1, ZDEV_COND_CLOSED, 2);
	ck_data(dev, 1, 0, 2, 0xc1);
	ck_assert_int_eq(wr(dev, 1, 2, 1, 0xc3), 0);
	zdev_close(dev);

	/* Through the spec, with a behaviour key. */
	snprintf(path, sizeof(path), "sim:import=%s,max_open=2", tmpdir);
	ck_assert_int_eq(zdev_open(path, &dev), 0);
	ck_assert_uint_eq(dev->info.max_open, 2);
	zdev_close(dev);
	snprintf(path, sizeof(path), "sim:import=%s,zones=6", tmpdir);
	ck_assert_int_eq(zdev_open(path, &dev), -EINVAL);

	/* A bad line. */
	snprintf(path, sizeof(path), "%s/report.txt", tmpdir);
	write_file(path, "  start: 0x0, len zz\n", 20);
	ck_assert_int_eq(zsim_import(tmpdir, &dev), -EINVAL);
	rm_tmpdir();
}
END_TEST

/*
 * `dd` of a full zone from its start to its reported wp (the zone end)
 * gives zone-size bytes, zeros past the capacity: imported as the
 * capacity's data.  Nonzero bytes past the capacity are refused.
 */
START_TEST(test_import_accepts_full_zone_captured_to_zone_end_zero_past_cap)
{
	static const char report[] =
		"  start: 0x000000000, len 0x000080, cap 0x000060, wptr 0x000080 reset:0 non-seq:0, zcond:14(fu) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000080, len 0x000080, cap 0x000060, wptr 0x000010 reset:0 non-seq:0, zcond: 2(oi) [type: 2(SEQ_WRITE_REQUIRED)]\n";
	uint8_t *data = calloc(1, ZS);
	char path[400];
	struct zdev *dev;

	ck_assert_ptr_nonnull(data);
	mk_tmpdir();
	snprintf(path, sizeof(path), "%s/report.txt", tmpdir);
	write_file(path, report, strlen(report));
	snprintf(path, sizeof(path), "%s/zones", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	memset(data, 0xd1, CAP);
	snprintf(path, sizeof(path), "%s/zones/0.bin", tmpdir);
	write_file(path, data, ZS);
	ck_assert_int_eq(zsim_import(tmpdir, &dev), 0);
	ck_zone(dev, 0, ZDEV_COND_FULL, 16);
	ck_data(dev, 0, 0, CAP / LBA, 0xd1);
	ck_data(dev, 0, CAP / LBA, (ZS - CAP) / LBA, 0);
	zdev_close(dev);

	/* A nonzero byte past the capacity: not what the device holds. */
	data[ZS - 1] = 1;
	write_file(path, data, ZS);
	ck_assert_int_eq(zsim_import(tmpdir, &dev), -EINVAL);
	/* Longer than the zone: refused too. */
	data[ZS - 1] = 0;
	write_file(path, data, ZS);
	{
		FILE *f = fopen(path, "ab");

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(fputc(0, f), 0);
		fclose(f);
	}
	ck_assert_int_eq(zsim_import(tmpdir, &dev), -EINVAL);
	/* An open zone's capture still ends at its wp. */
	snprintf(path, sizeof(path), "%s/zones/0.bin", tmpdir);
	write_file(path, data, ZS);
	snprintf(path, sizeof(path), "%s/zones/1.bin", tmpdir);
	memset(data, 0, ZS);
	write_file(path, data, 3 * LBA);
	ck_assert_int_eq(zsim_import(tmpdir, &dev), -EINVAL);
	free(data);
	rm_tmpdir();
}
END_TEST

START_TEST(test_import_of_kernel_sblog_vector_matches_its_report)
{
	const char *dir = ZCOW_TESTDATA "/kernel-sblog/v3-zone-switch";
	struct zdev_zone z;
	uint8_t sb[4096];
	struct zdev *dev;
	struct stat st;

	if (stat(dir, &st)) {
		fprintf(stderr, "skipped: %s not present\n", dir);
		return;
	}
	ck_assert_int_eq(zsim_import(dir, &dev), 0);
	ck_assert_uint_eq(dev->info.nr_zones, 256);
	ck_assert_uint_eq(dev->info.zone_size, 4 << 20);
	ck_assert_int_eq(zdev_report_zone(dev, 0, &z), 0);
	ck_assert_int_eq(z.cond, ZDEV_COND_FULL);
	ck_assert_int_eq(zdev_report_zone(dev, 4 << 20, &z), 0);
	ck_assert_int_eq(z.cond, ZDEV_COND_IMP_OPEN);
	ck_assert_uint_eq(z.wp - z.start, 0x4b8 * 512);
	/* The btrfs superblock magic at offset 64 of the last one. */
	ck_assert_int_eq(zdev_read(dev, sb, 4096, z.wp - 4096,
				   ZDEV_CLASS_OTHER), 0);
	ck_assert_mem_eq(sb + 64, "_BHRfS_M", 8);
	zdev_close(dev);
}
END_TEST

/*
 * `zcow zone DEV offline|readonly OFFSET` turns a zone of an image
 * offline or read-only for good: saved in the image, reported by `zcow
 * zones`, and refused without an image (the change would be lost).
 */
START_TEST(test_zone_command_turns_image_zone_offline_or_readonly)
{
	char spec[400], *out, *err;
	struct zdev *dev;

	mk_tmpdir();
	snprintf(spec, sizeof(spec),
		 "sim:image=%s/dev.img,zones=5,zone_size=64K,zone_cap=48K,conv=1",
		 tmpdir);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(wr(dev, 2, 0, 2, 0x2a), 0);
	ck_assert_int_eq(wr(dev, 3, 0, 3, 0x3a), 0);
	ck_assert_int_eq(zdev_close(dev), 0);
	snprintf(spec, sizeof(spec), "sim:image=%s/dev.img", tmpdir);

	ck_assert_int_eq(zcow_test_run(&out, NULL, "zone", spec, "offline", "128K",
				  NULL), 0);
	free(out);
	ck_assert_int_eq(zcow_test_run(&out, NULL, "zone", spec, "readonly",
				  "0x30000", NULL), 0);
	free(out);
	ck_assert_int_eq(zcow_test_run(&out, NULL, "zones", spec, NULL), 0);
	ck_assert_str_eq(out,
		"  start: 0x000000000, len 0x000080, cap 0x000080, wptr 0x000000 reset:0 non-seq:0, zcond: 0(nw) [type: 1(CONVENTIONAL)]\n"
		"  start: 0x000000080, len 0x000080, cap 0x000060, wptr 0x000000 reset:0 non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000100, len 0x000080, cap 0x000060, wptr 0x000010 reset:0 non-seq:0, zcond:15(of) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000180, len 0x000080, cap 0x000060, wptr 0x000018 reset:0 non-seq:0, zcond:13(ro) [type: 2(SEQ_WRITE_REQUIRED)]\n"
		"  start: 0x000000200, len 0x000080, cap 0x000060, wptr 0x000000 reset:0 non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]\n");
	free(out);

	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_zone(dev, 2, ZDEV_COND_OFFLINE, 2);
	ck_zone(dev, 3, ZDEV_COND_READONLY, 3);
	ck_zone(dev, 4, ZDEV_COND_EMPTY, 0);
	ck_data(dev, 3, 0, 3, 0x3a);
	ck_assert_int_eq(wr(dev, 3, 3, 1, 1), -EIO);
	zdev_close(dev);

	/* Not a zone start, past the end, no image, no simulator, 'all'. */
	ck_assert_int_eq(zcow_test_run(&out, &err, "zone", spec, "offline", "4k",
				  NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "not a zone start"));
	free(out);
	free(err);
	ck_assert_int_eq(zcow_test_run(&out, &err, "zone", spec, "offline", "320K",
				  NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "past the end"));
	free(out);
	free(err);
	ck_assert_int_eq(zcow_test_run(&out, &err, "zone", "sim:zones=4",
				  "offline", "0", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "image"));
	free(out);
	free(err);
	ck_assert_int_eq(zcow_test_run(&out, &err, "zone", spec, "readonly", "all",
				  NULL), 2);
	free(out);
	free(err);
	rm_tmpdir();
}
END_TEST

Suite *sim_image_suite(void)
{
	Suite *s = suite_create("sim_image");
	TCase *tc = tcase_create("image");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc,
		       test_image_round_trip_keeps_zones_data_and_what_is_volatile);
	tcase_add_test(tc, test_cut_image_reopens_as_the_power_cycled_device);
	tcase_add_test(tc, test_export_file_holds_every_byte_the_device_reads);
	tcase_add_test(tc, test_emulated_spec_is_a_non_zoned_device_of_conventional_zones);
	tcase_add_test(tc, test_corrupt_or_truncated_image_is_euclean);
	tcase_add_test(tc,
		       test_image_spec_creates_reopens_and_refuses_mismatch);
	tcase_add_test(tc, test_image_open_twice_is_refused_busy);
	tcase_add_test(tc, test_import_reads_blkzone_report_and_zone_data);
	tcase_add_test(tc,
		       test_import_of_kernel_sblog_vector_matches_its_report);
	tcase_add_test(tc,
		       test_import_accepts_full_zone_captured_to_zone_end_zero_past_cap);
	tcase_add_test(tc,
		       test_zone_command_turns_image_zone_offline_or_readonly);
	suite_add_tcase(s, tc);
	return s;
}
