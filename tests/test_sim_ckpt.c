// SPDX-License-Identifier: MIT
/*
 * Simulator checkpoints (zsim_checkpoint(), zsim_restore()): a device held
 * down at a cut, checkpointed, then cut under each loss policy and seed,
 * power-cycled and written on (as a recovery would), and restored between
 * them, reads back exactly what a fresh device cut the same way reads:
 * every zone's condition, write pointer and bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "zdev.h"
#include "zsim.h"

#define LBA 4096ull
#define ZS (64 * 1024ull)		/* 16 LBAs */
#define CAP (48 * 1024ull)		/* 12 LBAs */
#define NR_ZONES 10
#define NR_CONV 2

static struct zdev *mk(void)
{
	struct zsim_config cfg = {
		.nr_zones = NR_ZONES,
		.zone_size = ZS,
		.zone_capacity = CAP,
		.nr_conv = NR_CONV,
		.lba_size = LBA,
		.seed = 7,
	};

	return zcow_test_sim(&cfg);
}

/* Write @nr LBAs at LBA @lba of zone @zno, block i filled with @fill + i;
 * the result is not checked (the device may be cut by then). */
static int wr(struct zdev *dev, uint64_t zno, uint64_t lba, uint64_t nr,
	      uint8_t fill, unsigned int flags)
{
	uint8_t buf[16 * LBA];
	uint64_t i;

	for (i = 0; i < nr; i++)
		memset(buf + i * LBA, fill + (int)i, LBA);
	return zdev_write(dev, buf, nr * LBA, zno * ZS + lba * LBA, flags,
			  ZDEV_CLASS_DATA);
}

/* Conventional writes flushed, unflushed and FUA; sequential zones with
 * durable and volatile data, one FULL, one reset. */
static void workload(struct zdev *dev)
{
	wr(dev, 0, 0, 4, 0x10, 0);
	wr(dev, 2, 0, 3, 0x20, 0);
	wr(dev, 3, 0, 12, 0x30, 0);
	zdev_flush(dev);
	wr(dev, 0, 2, 3, 0x40, 0);
	wr(dev, 1, 5, 2, 0x50, ZDEV_WRITE_FUA);
	wr(dev, 2, 3, 5, 0x60, 0);
	wr(dev, 4, 0, 6, 0x70, 0);
	zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 3 * ZS, ZS, ZDEV_CLASS_ZONE);
	wr(dev, 5, 0, 2, 0x80, 0);
	wr(dev, 5, 2, 7, 0x90, 0);
	wr(dev, 0, 9, 2, 0xa0, 0);
}

/* What a recovery does to the device: writes at the write pointers
 * (over bytes a loss dropped), a reset, conventional writes, a flush. */
static void scribble(struct zdev *dev)
{
	struct zdev_zone z;
	uint64_t zno;

	for (zno = NR_CONV; zno < 7; zno++) {
		ck_assert_int_eq(zdev_report_zone(dev, zno * ZS, &z), 0);
		if (z.cond != ZDEV_COND_FULL && z.wp - z.start < CAP)
			wr(dev, zno, (z.wp - z.start) / LBA, 1, 0xe0, 0);
	}
	zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 4 * ZS, ZS, ZDEV_CLASS_ZONE);
	wr(dev, 4, 0, 3, 0xe8, 0);
	wr(dev, 0, 0, 12, 0xf0, 0);
	zdev_flush(dev);
}

/* Every zone's condition, write pointer and bytes into @img. */
static void dump(struct zdev *dev, uint8_t *img, uint64_t *wps,
		 uint8_t *conds)
{
	uint64_t zno;

	for (zno = 0; zno < NR_ZONES; zno++) {
		struct zdev_zone z;

		ck_assert_int_eq(zdev_report_zone(dev, zno * ZS, &z), 0);
		wps[zno] = z.wp;
		conds[zno] = z.cond;
		ck_assert_int_eq(zdev_read(dev, img + zno * ZS, ZS, zno * ZS,
					   ZDEV_CLASS_DATA), 0);
	}
}

struct img {
	uint8_t data[NR_ZONES * ZS];
	uint64_t wps[NR_ZONES];
	uint8_t conds[NR_ZONES];
};

static void ck_same(const struct img *a, const struct img *b,
		    enum zsim_loss loss, uint64_t seed)
{
	ck_assert_msg(!memcmp(a->wps, b->wps, sizeof(a->wps)) &&
		      !memcmp(a->conds, b->conds, sizeof(a->conds)),
		      "loss %d seed %llu: zones differ", (int)loss,
		      (unsigned long long)seed);
	ck_assert_msg(!memcmp(a->data, b->data, sizeof(a->data)),
		      "loss %d seed %llu: bytes differ", (int)loss,
		      (unsigned long long)seed);
}

/* A fresh device, @cut armed (ordinal 0: none, cut at the end). */
static void reference(const struct zsim_cut *cut, enum zsim_loss loss,
		      uint64_t seed, struct img *im)
{
	struct zdev *dev = mk();
	struct zsim *sim = zsim_from_dev(dev);

	if (cut->ordinal) {
		struct zsim_cut c = *cut;

		c.loss = loss;
		c.seed = seed;
		c.hold = false;
		ck_assert_int_eq(zsim_arm_cut(sim, &c), 0);
	}
	workload(dev);
	if (!zsim_is_cut(sim))
		zsim_cut_now(sim, loss, seed);
	zsim_power_cycle(sim);
	dump(dev, im->data, im->wps, im->conds);
	zdev_close(dev);
}

static void ck_every_loss(const struct zsim_cut *cut)
{
	static const enum zsim_loss losses[] = {
		ZSIM_LOSS_KEEP, ZSIM_LOSS_DROP, ZSIM_LOSS_PREFIX,
		ZSIM_LOSS_TORN, ZSIM_LOSS_SUBSET,
	};
	struct img *want = malloc(sizeof(*want)), *got = malloc(sizeof(*got));
	struct zdev *dev = mk();
	struct zsim *sim = zsim_from_dev(dev);
	unsigned int li, round;
	uint64_t seed;

	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	if (cut->ordinal) {
		struct zsim_cut c = *cut;

		c.hold = true;
		ck_assert_int_eq(zsim_arm_cut(sim, &c), 0);
	}
	workload(dev);
	if (!zsim_is_cut(sim))
		ck_assert_int_eq(zsim_hold_now(sim), 0);
	ck_assert_int_eq(zsim_checkpoint(sim), 0);
	/* twice over: a restore after a restore holds too */
	for (round = 0; round < 2; round++) {
		for (li = 0; li < sizeof(losses) / sizeof(losses[0]); li++) {
			for (seed = 1; seed <= 3; seed++) {
				reference(cut, losses[li], seed, want);
				if (round || li || seed > 1)
					ck_assert_int_eq(zsim_restore(sim), 0);
				ck_assert(zsim_is_cut(sim));
				zsim_cut_now(sim, losses[li], seed);
				zsim_power_cycle(sim);
				dump(dev, got->data, got->wps, got->conds);
				ck_same(want, got, losses[li], seed);
				scribble(dev);
			}
		}
	}
	zsim_checkpoint_drop(sim);
	ck_assert_int_eq(zsim_restore(sim), -ENOENT);
	zdev_close(dev);
	free(want);
	free(got);
}

START_TEST(test_restored_checkpoint_at_the_end_cuts_as_a_fresh_device)
{
	struct zsim_cut none = { .kind = ZSIM_CUT_NONE };

	ck_every_loss(&none);
}
END_TEST

START_TEST(test_restored_checkpoint_of_a_held_cut_cuts_as_the_cut_itself)
{
	static const enum zsim_when whens[] = {
		ZSIM_CUT_BEFORE, ZSIM_CUT_AFTER, ZSIM_CUT_TORN,
	};
	unsigned int w;
	uint64_t n;

	/* every persist point of the workload, every when */
	for (n = 1; n <= 12; n++) {
		for (w = 0; w < 3; w++) {
			struct zsim_cut cut = {
				.kind = ZSIM_CUT_PERSIST, .ordinal = n,
				.when = whens[w],
			};

			ck_every_loss(&cut);
		}
	}
}
END_TEST

/*
 * zsim_loss_digest(): every loss and seed applied to one held state;
 * two with one digest read back the same zones and bytes.  Returns how
 * many of them shared a digest with an earlier one.
 */
static unsigned int ck_digests(const struct zsim_cut *cut)
{
	static const enum zsim_loss losses[] = {
		ZSIM_LOSS_KEEP, ZSIM_LOSS_DROP, ZSIM_LOSS_PREFIX,
		ZSIM_LOSS_TORN, ZSIM_LOSS_SUBSET,
	};
	enum { NR = 5 * 3 };
	struct img *im = malloc(NR * sizeof(*im));
	struct zdev *dev = mk();
	struct zsim *sim = zsim_from_dev(dev);
	uint64_t dg[NR], seed;
	unsigned int li, n = 0, i, j, nr_same = 0;
	struct zsim_cut c = *cut;

	ck_assert_ptr_nonnull(im);
	c.hold = true;
	ck_assert_int_eq(zsim_arm_cut(sim, &c), 0);
	workload(dev);
	if (!zsim_is_cut(sim))
		ck_assert_int_eq(zsim_hold_now(sim), 0);
	ck_assert_int_eq(zsim_checkpoint(sim), 0);
	for (li = 0; li < 5; li++) {
		for (seed = 1; seed <= 3; seed++, n++) {
			if (n)
				ck_assert_int_eq(zsim_restore(sim), 0);
			zsim_cut_now(sim, losses[li], seed);
			dg[n] = zsim_loss_digest(sim);
			zsim_power_cycle(sim);
			dump(dev, im[n].data, im[n].wps, im[n].conds);
			scribble(dev);
		}
	}
	for (i = 0; i < NR; i++) {
		for (j = 0; j < i && dg[j] != dg[i]; j++)
			;
		if (j == i)
			continue;
		nr_same++;
		ck_same(&im[j], &im[i], losses[i / 3], i % 3 + 1);
	}
	zdev_close(dev);
	free(im);
	return nr_same;
}

START_TEST(test_equal_loss_digests_leave_equal_devices)
{
	static const enum zsim_when whens[] = {
		ZSIM_CUT_BEFORE, ZSIM_CUT_AFTER, ZSIM_CUT_TORN,
	};
	unsigned int w, nr_same = 0, nr_first;
	uint64_t n;
	struct zsim_cut first = {
		.kind = ZSIM_CUT_PERSIST, .ordinal = 1,
		.when = ZSIM_CUT_BEFORE,
	};

	/* before the first write nothing is volatile: one state */
	nr_first = ck_digests(&first);
	ck_assert_uint_eq(nr_first, 14);
	for (n = 2; n <= 12; n++) {
		for (w = 0; w < 3; w++) {
			struct zsim_cut cut = {
				.kind = ZSIM_CUT_PERSIST, .ordinal = n,
				.when = whens[w],
			};

			nr_same += ck_digests(&cut);
		}
	}
	/* and with volatile writes, some losses still agree (drop with
	 * every seed), never all */
	ck_assert_uint_gt(nr_same, 0);
	ck_assert_uint_lt(nr_same, 11 * 3 * 14);
}
END_TEST

START_TEST(test_checkpoint_of_a_linked_device_is_refused)
{
	struct zdev *a = mk(), *b = mk();

	ck_assert_int_eq(zsim_link_power(zsim_from_dev(a), zsim_from_dev(b)),
			 0);
	ck_assert_int_eq(zsim_checkpoint(zsim_from_dev(a)), -EINVAL);
	zdev_close(b);
	zdev_close(a);
}
END_TEST

Suite *sim_ckpt_suite(void)
{
	Suite *s = suite_create("sim_ckpt");
	TCase *tc = tcase_create("checkpoint");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_restored_checkpoint_at_the_end_cuts_as_a_fresh_device);
	tcase_add_test(tc,
		       test_restored_checkpoint_of_a_held_cut_cuts_as_the_cut_itself);
	tcase_add_test(tc, test_checkpoint_of_a_linked_device_is_refused);
	tcase_add_test(tc, test_equal_loss_digests_leave_equal_devices);
	suite_add_tcase(s, tc);
	return s;
}
