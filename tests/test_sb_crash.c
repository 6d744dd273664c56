// SPDX-License-Identifier: MIT
/*
 * The superblock log under power cuts.  A sequence of superblock commits
 * (mount, 20 commits, unmount) wraps the log of each mirror (4 copies per
 * zone, rings of 8) several times.  Power is cut at every persist point of
 * the sequence, and at every named point (sb write N before / after / torn,
 * reset N before / after), under every loss policy and two seeds.  After
 * the power cycle:
 *   - mount succeeds and finds generation g with
 *     durable <= g <= durable + 1, where durable is the generation of the
 *     last commit that completed (its FUA writes done);
 *   - the log keeps working: 10 more commits and an unmount wrap it again,
 *     and a remount finds exactly g + 11.
 * A second sweep cuts power twice: once in the sequence and again at every
 * persist point of the commits that follow the recovery; the newest
 * durable generation must survive both.
 * A failing case prints its `repro:` line first.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sb.h"
#include "tests.h"
#include "fs.h"
#include "zdev.h"
#include "zlog.h"
#include "zsim.h"

#define ZS (4ULL << 20)
#define CAP (16 * 1024ULL)	/* 4 superblocks per zone */
#define NR_ZONES 20		/* mirrors 0 (zones 0-1) and 1 (zones 16-17) */
#define NR_COMMITS 20		/* + unmount: 21 copies per mirror */
#define NR_AFTER 10		/* commits after recovery */
#define NR_SEEDS 2

struct seq_counts {
	uint64_t persist;	/* persist points of the sequence */
	uint64_t sb_writes;
	uint64_t resets;
};

/*
 * A bare superblock (no trees) at generation 1: its commits write the
 * superblock log alone, so 16 KiB zones hold 4 copies (a file system's
 * commits also write tree nodes, which would not fit).
 */
static struct zdev *fresh_fs(uint64_t seed)
{
	struct zsim_config cfg = {
		.nr_zones = NR_ZONES,
		.zone_size = ZS,
		.zone_capacity = CAP,
		.seed = seed,
	};
	struct zcow_super_block sb;
	struct zdev *dev = NULL;

	if (zsim_create(&cfg, &dev))
		return NULL;
	memset(&sb, 0, sizeof(sb));
	sb.magic = htole64(ZCOW_SB_MAGIC);
	sb.generation = htole64(1);
	sb.flags = htole64(ZCOW_SUPER_FLAG_WRITTEN |
			   ZCOW_SUPER_FLAG_SEED_PLACEMENT);
	sb.incompat_flags = htole64(ZCOW_INCOMPAT_ZONED);
	sb.total_bytes = htole64(dev->info.size);
	sb.num_devices = htole64(1);
	sb.sectorsize = htole32(4096);
	sb.nodesize = htole32(16384);
	memset(sb.fsid, (int)(seed & 0xff) | 1, sizeof(sb.fsid));
	if (zcow_sb_write_all(dev, ZCOW_SB_PLACE_SEED, &sb)) {
		zdev_close(dev);
		return NULL;
	}
	return dev;
}

/*
 * The sequence under test; stops at the first error (the cut).  Returns
 * the generation of the last commit that completed.
 */
static uint64_t run_sequence(struct zdev *dev)
{
	struct zcow_fs *fs = NULL;
	uint64_t durable = 1;	/* mkfs */
	int i;

	if (zcow_mount(dev, NULL, &fs))
		return durable;
	for (i = 0; i < NR_COMMITS; i++) {
		if (zcow_commit_super(fs))
			break;
		durable = fs->generation;
	}
	if (i == NR_COMMITS) {
		if (zcow_unmount(fs) == 0)
			durable++;
	} else {
		zcow_unmount(fs);
	}
	return durable;
}

static int count_sequence(struct seq_counts *c)
{
	struct zdev *dev = fresh_fs(1);
	struct zdev_stats a, b;
	uint64_t p0;

	if (!dev)
		return -EIO;
	zdev_get_stats(dev, &a);
	p0 = zsim_nr_persist(zsim_from_dev(dev));
	run_sequence(dev);
	zdev_get_stats(dev, &b);
	c->persist = zsim_nr_persist(zsim_from_dev(dev)) - p0;
	c->sb_writes = b.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE] -
		       a.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE];
	c->resets = b.cmds[ZDEV_CLASS_SB][ZDEV_OP_RESET] -
		    a.cmds[ZDEV_CLASS_SB][ZDEV_OP_RESET];
	zdev_close(dev);
	return 0;
}

static uint64_t mount_gen(struct zdev *dev, int *ret)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	uint64_t gen;

	*ret = zcow_mount(dev, &ro, &fs);
	if (*ret)
		return 0;
	gen = fs->generation;
	zcow_unmount(fs);
	return gen;
}

/* One crash case.  Returns NULL when the oracles hold, else why not. */
static const char *run_case(const struct zsim_cut *cut, uint64_t seed,
			    char *why, size_t len)
{
	struct zcow_fs *fs = NULL;
	struct zdev *dev = fresh_fs(seed);
	struct zsim *sim;
	uint64_t durable, gen, again;
	const char *res = NULL;
	int ret, i;

	if (!dev)
		return "mkfs failed";
	sim = zsim_from_dev(dev);
	if (zsim_arm_cut(sim, cut)) {
		res = "cannot arm the cut";
		goto out;
	}
	durable = run_sequence(dev);
	if (!zsim_is_cut(sim)) {
		res = "the cut point was not reached";
		goto out;
	}
	zsim_power_cycle(sim);
	gen = mount_gen(dev, &ret);
	if (ret) {
		snprintf(why, len, "mount after the cut failed: %d (durable %llu)",
			 ret, (unsigned long long)durable);
		res = why;
		goto out;
	}
	if (gen < durable || gen > durable + 1) {
		snprintf(why, len, "found generation %llu, durable was %llu",
			 (unsigned long long)gen, (unsigned long long)durable);
		res = why;
		goto out;
	}
	/* The log keeps working: wrap it again. */
	ret = zcow_mount(dev, NULL, &fs);
	for (i = 0; !ret && i < NR_AFTER; i++)
		ret = zcow_commit_super(fs);
	if (!ret)
		ret = zcow_unmount(fs);
	else if (fs)
		zcow_unmount(fs);
	again = ret ? 0 : mount_gen(dev, &ret);
	if (ret || again != gen + NR_AFTER + 1) {
		snprintf(why, len, "after recovery from %llu: ret %d, generation %llu (want %llu)",
			 (unsigned long long)gen, ret,
			 (unsigned long long)again,
			 (unsigned long long)(gen + NR_AFTER + 1));
		res = why;
	}
out:
	zdev_close(dev);
	return res;
}

static const char *when_name(enum zsim_when w)
{
	return w == ZSIM_CUT_BEFORE ? "before" :
	       w == ZSIM_CUT_AFTER  ? "after" :
				      "torn";
}

static unsigned int sweep(enum zsim_loss loss, uint64_t seed)
{
	static const enum zsim_when whens[] = { ZSIM_CUT_BEFORE, ZSIM_CUT_AFTER,
						ZSIM_CUT_TORN };
	struct seq_counts c;
	struct zsim_cut cut;
	char why[256], point[64];
	const char *res;
	unsigned int nr = 0, w;
	uint64_t k;

	ck_assert_int_eq(count_sequence(&c), 0);
	ck_assert_uint_gt(c.resets, 0);	/* the sequence does wrap */

	for (k = 1; k <= c.persist; k++) {
		memset(&cut, 0, sizeof(cut));
		cut.kind = ZSIM_CUT_PERSIST;
		cut.ordinal = k;
		cut.when = ZSIM_CUT_AFTER;
		cut.loss = loss;
		cut.seed = seed;
		res = run_case(&cut, seed, why, sizeof(why));
		if (res) {
			fprintf(stderr, "repro: sb-crash policy=%s seed=%llu persist=%llu\n",
				zsim_loss_name(loss), (unsigned long long)seed,
				(unsigned long long)k);
			ck_abort_msg("persist=%llu: %s", (unsigned long long)k,
				     res);
		}
		nr++;
	}
	for (w = 0; w < 3; w++) {
		for (k = 1; k <= c.sb_writes + c.resets; k++) {
			memset(&cut, 0, sizeof(cut));
			if (k <= c.sb_writes) {
				cut.kind = ZSIM_CUT_CLASS;
				cut.cls = ZDEV_CLASS_SB;
				cut.ordinal = k;
				snprintf(point, sizeof(point), "sb:%llu:%s",
					 (unsigned long long)k,
					 when_name(whens[w]));
			} else {
				cut.kind = ZSIM_CUT_RESET;
				cut.ordinal = k - c.sb_writes;
				snprintf(point, sizeof(point), "reset:%llu:%s",
					 (unsigned long long)cut.ordinal,
					 when_name(whens[w]));
			}
			cut.when = whens[w];
			cut.loss = loss;
			cut.seed = seed;
			res = run_case(&cut, seed, why, sizeof(why));
			if (res) {
				fprintf(stderr, "repro: sb-crash policy=%s seed=%llu point=%s\n",
					zsim_loss_name(loss),
					(unsigned long long)seed, point);
				ck_abort_msg("%s: %s", point, res);
			}
			nr++;
		}
	}
	return nr;
}

/*
 * The commits after a recovery, cut again at persist point @k2.  Returns
 * the newest generation that must survive: the recovered one, or the last
 * commit that completed after it.
 */
static uint64_t run_after_recovery(struct zdev *dev, uint64_t recovered)
{
	struct zcow_fs *fs = NULL;
	uint64_t durable = recovered;
	int i;

	if (zcow_mount(dev, NULL, &fs))
		return durable;
	for (i = 0; i < NR_AFTER; i++) {
		if (zcow_commit_super(fs))
			break;
		durable = fs->generation;
	}
	zcow_unmount(fs);
	return durable;
}

/* Cut at persist point @k1 of the sequence, then at @k2 after recovery. */
static const char *run_double_case(enum zsim_loss loss, uint64_t seed,
				   uint64_t k1, uint64_t k2, char *why,
				   size_t len)
{
	struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST, .when = ZSIM_CUT_AFTER,
				.loss = loss, .seed = seed };
	struct zdev *dev = fresh_fs(seed);
	uint64_t durable, gen;
	const char *res = NULL;
	struct zsim *sim;
	int ret;

	if (!dev)
		return "mkfs failed";
	sim = zsim_from_dev(dev);
	cut.ordinal = k1;
	zsim_arm_cut(sim, &cut);
	run_sequence(dev);
	zsim_power_cycle(sim);
	gen = mount_gen(dev, &ret);
	if (ret) {
		res = "mount after the first cut failed";
		goto out;
	}
	cut.ordinal = k2;
	cut.seed = seed + k2;
	zsim_arm_cut(sim, &cut);
	durable = run_after_recovery(dev, gen);
	if (!zsim_is_cut(sim)) {
		res = NULL;	/* k2 lies past the end: nothing to check */
		goto out;
	}
	zsim_power_cycle(sim);
	gen = mount_gen(dev, &ret);
	if (ret || gen < durable || gen > durable + 1) {
		snprintf(why, len, "second recovery: ret %d, generation %llu, durable %llu",
			 ret, (unsigned long long)gen,
			 (unsigned long long)durable);
		res = why;
	}
out:
	zdev_close(dev);
	return res;
}

START_TEST(test_sb_crash_second_cut_after_recovery_keeps_newest_durable)
{
	enum zsim_loss loss = (enum zsim_loss)_i;
	struct seq_counts c;
	uint64_t k1, k2, nr = 0;
	const char *res;
	char why[256];

	zlog_set_level(ZLOG_SILENT);
	ck_assert_int_eq(count_sequence(&c), 0);
	for (k1 = 1; k1 <= c.persist; k1++) {
		/* NR_AFTER commits take fewer persist points than this. */
		for (k2 = 1; k2 <= 4 * NR_AFTER; k2++) {
			res = run_double_case(loss, 5, k1, k2, why,
					      sizeof(why));
			if (res) {
				fprintf(stderr, "repro: sb-crash policy=%s seed=5 persist=%llu then persist=%llu\n",
					zsim_loss_name(loss),
					(unsigned long long)k1,
					(unsigned long long)k2);
				ck_abort_msg("%llu then %llu: %s",
					     (unsigned long long)k1,
					     (unsigned long long)k2, res);
			}
			nr++;
		}
	}
	printf("sb-crash: policy=%s: %llu double-cut cases passed\n",
	       zsim_loss_name(loss), (unsigned long long)nr);
	fflush(stdout);
}
END_TEST

START_TEST(test_sb_crash_every_cut_finds_newest_durable_superblock)
{
	enum zsim_loss loss = (enum zsim_loss)(_i % ZSIM_NR_LOSS);
	uint64_t seed = 1 + (uint64_t)(_i / ZSIM_NR_LOSS) * 2;
	unsigned int nr;

	zlog_set_level(ZLOG_SILENT);
	nr = sweep(loss, seed);
	printf("sb-crash: policy=%s seed=%llu: %u cases passed\n",
	       zsim_loss_name(loss), (unsigned long long)seed, nr);
	fflush(stdout);
}
END_TEST

Suite *sb_crash_suite(void)
{
	Suite *s = suite_create("sb_crash");
	TCase *tc = tcase_create("sweep");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc,
			    test_sb_crash_every_cut_finds_newest_durable_superblock,
			    0, ZSIM_NR_LOSS * NR_SEEDS);
	tcase_add_loop_test(
		tc, test_sb_crash_second_cut_after_recovery_keeps_newest_durable,
		0, ZSIM_NR_LOSS);
	suite_add_tcase(s, tc);
	return s;
}
