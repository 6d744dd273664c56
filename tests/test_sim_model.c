// SPDX-License-Identifier: MIT
/*
 * Differential test of the simulator: seeded random commands run against
 * the simulator and against the small reference model below, written
 * straight from docs/device-rules.md with the plainest data structures
 * (counts recomputed by scanning, a flat byte array for the data, the
 * oldest implicitly open zone found by its open time).  Return codes,
 * append offsets, read data and zone reports must be identical.
 *
 * Power is cut now and then (keep or drop everything unflushed) so the
 * durability bookkeeping is compared too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"
#include "tests.h"
#include "zdev.h"
#include "zsim.h"

#define M_LBA 512
#define M_ZONE_LBAS 16
#define M_CAP_LBAS 12
#define M_NR_ZONES 10
#define M_NR_CONV 2
#define M_MAX_APPEND_LBAS 4
#define M_ZS (M_ZONE_LBAS * M_LBA)
#define M_SIZE (M_NR_ZONES * M_ZS)
#define M_NR_CMDS 120000

enum { EM, IO, EO, CL, FU, NW };

struct mzone {
	int cond;
	int wp;			/* LBAs from the zone start */
	int durable;		/* LBAs that survive a drop */
	uint64_t open_time;	/* when it became IO */
};

struct model {
	struct mzone z[M_NR_ZONES];
	uint8_t data[M_SIZE];
	uint8_t durable_conv[M_NR_CONV * M_ZS];
	uint64_t clock;
	int max_open, max_active;
	bool auto_close;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: the test's own PRNG, not the simulator's. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int rnd_below(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

static int nr_with(const struct model *m, int a, int b, int c)
{
	int i, n = 0;

	for (i = 0; i < M_NR_ZONES; i++)
		if (m->z[i].cond == a || m->z[i].cond == b ||
		    m->z[i].cond == c)
			n++;
	return n;
}

static int m_open(struct model *m, int zi, bool is_explicit)
{
	struct mzone *z = &m->z[zi];
	int i, oldest = -1;

	if (z->cond == EO)
		return 0;
	if (z->cond == IO) {
		if (is_explicit)
			z->cond = EO;
		return 0;
	}
	if (z->cond != EM && z->cond != CL)
		return -EIO;
	if (m->auto_close && m->max_open &&
	    nr_with(m, IO, EO, -1) >= m->max_open) {
		for (i = 0; i < M_NR_ZONES; i++)
			if (m->z[i].cond == IO &&
			    (oldest < 0 ||
			     m->z[i].open_time < m->z[oldest].open_time))
				oldest = i;
		if (oldest >= 0)
			m->z[oldest].cond = CL;
	}
	if (z->cond == EM && m->max_active &&
	    nr_with(m, IO, EO, CL) >= m->max_active)
		return -EOVERFLOW;
	if (m->max_open && nr_with(m, IO, EO, -1) >= m->max_open)
		return -ETOOMANYREFS;
	if (is_explicit) {
		z->cond = EO;
	} else {
		z->cond = IO;
		z->open_time = ++m->clock;
	}
	return 0;
}

static int m_write(struct model *m, int zi, int lba, int n, const uint8_t *buf,
		   bool is_append, bool is_fua, int *lba_ret)
{
	struct mzone *z = &m->z[zi];
	int ret;

	if (is_append) {
		if (zi < M_NR_CONV || lba != 0 || n > M_MAX_APPEND_LBAS)
			return -EINVAL;
		lba = z->wp;
	}
	if (zi < M_NR_CONV) {
		if (lba + n > M_ZONE_LBAS)
			return -EIO;
		memcpy(m->data + zi * M_ZS + lba * M_LBA, buf, n * M_LBA);
		if (is_fua)
			memcpy(m->durable_conv + zi * M_ZS + lba * M_LBA, buf,
			       n * M_LBA);
		*lba_ret = lba;
		return 0;
	}
	if (z->cond == FU)
		return -EIO;
	if (lba != z->wp)
		return -EIO;
	if (lba + n > M_CAP_LBAS)
		return -EIO;
	ret = m_open(m, zi, false);
	if (ret)
		return ret;
	memcpy(m->data + zi * M_ZS + lba * M_LBA, buf, n * M_LBA);
	z->wp += n;
	if (z->wp == M_CAP_LBAS)
		z->cond = FU;
	if (is_fua)
		z->durable = z->wp;
	*lba_ret = lba;
	return 0;
}

static int m_mgmt(struct model *m, enum zdev_zone_action a, int zi)
{
	struct mzone *z = &m->z[zi];

	if (zi < M_NR_CONV)
		return -EIO;
	switch (a) {
	case ZDEV_ZONE_OPEN:
		return m_open(m, zi, true);
	case ZDEV_ZONE_CLOSE:
		if (z->cond == EM || z->cond == FU)
			return -EIO;
		z->cond = CL;
		return 0;
	case ZDEV_ZONE_FINISH:
		z->cond = FU;
		z->durable = z->wp;
		return 0;
	case ZDEV_ZONE_RESET:
		z->cond = EM;
		z->wp = z->durable = 0;
		memset(m->data + zi * M_ZS, 0, M_ZS);
		return 0;
	}
	return -EINVAL;
}

static bool m_selected(const struct model *m, enum zdev_zone_action a, int zi)
{
	int c = m->z[zi].cond;

	if (zi < M_NR_CONV)
		return false;
	switch (a) {
	case ZDEV_ZONE_OPEN:
		return c == CL;
	case ZDEV_ZONE_CLOSE:
		return c == IO || c == EO;
	case ZDEV_ZONE_FINISH:
		return c == IO || c == EO || c == CL;
	case ZDEV_ZONE_RESET:
		return c != EM;
	}
	return false;
}

static void m_flush(struct model *m)
{
	int i;

	for (i = 0; i < M_NR_ZONES; i++)
		m->z[i].durable = m->z[i].wp;
	memcpy(m->durable_conv, m->data, sizeof(m->durable_conv));
}

static void m_cut_and_cycle(struct model *m, bool is_drop)
{
	int i;

	for (i = M_NR_CONV; i < M_NR_ZONES; i++) {
		struct mzone *z = &m->z[i];

		if (is_drop && z->wp != z->durable) {
			memset(m->data + i * M_ZS + z->durable * M_LBA, 0,
			       (z->wp - z->durable) * M_LBA);
			z->wp = z->durable;
			if (z->cond == FU)
				z->cond = CL;
		}
		if (z->cond == IO || z->cond == EO || z->cond == CL)
			z->cond = z->wp ? CL : EM;
	}
	if (is_drop)
		memcpy(m->data, m->durable_conv, sizeof(m->durable_conv));
	m_flush(m);
}

static const int cond_of[] = {
	[EM] = ZDEV_COND_EMPTY,	   [IO] = ZDEV_COND_IMP_OPEN,
	[EO] = ZDEV_COND_EXP_OPEN, [CL] = ZDEV_COND_CLOSED,
	[FU] = ZDEV_COND_FULL,
};

static void ck_reports(struct zdev *dev, const struct model *m, int cmd)
{
	struct zdev_zone zones[M_NR_ZONES];
	unsigned int nr = M_NR_ZONES;
	int i;

	ck_assert_int_eq(zdev_report(dev, 0, zones, &nr), 0);
	ck_assert_uint_eq(nr, M_NR_ZONES);
	for (i = 0; i < M_NR_ZONES; i++) {
		const struct mzone *z = &m->z[i];
		uint64_t start = (uint64_t)i * M_ZS, wp;
		int cond;

		if (i < M_NR_CONV) {
			cond = ZDEV_COND_NOT_WP;
			wp = start + M_ZS;
		} else {
			cond = cond_of[z->cond];
			wp = z->cond == FU ? start + M_ZS :
					     start + z->wp * M_LBA;
		}
		ck_assert_msg(zones[i].cond == cond && zones[i].wp == wp,
			      "cmd %d zone %d: sim %s wp %llu, model %s wp %llu",
			      cmd, i, zdev_cond_name(zones[i].cond),
			      (unsigned long long)(zones[i].wp - start) / M_LBA,
			      zdev_cond_name(cond),
			      (unsigned long long)(wp - start) / M_LBA);
	}
}

static void run_model(uint64_t seed, uint32_t max_open, uint32_t max_active,
		      bool auto_close, int nr_cmds)
{
	struct zsim_config cfg = {
		.nr_zones = M_NR_ZONES,
		.zone_size = M_ZS,
		.zone_capacity = M_CAP_LBAS * M_LBA,
		.nr_conv = M_NR_CONV,
		.max_open = max_open,
		.max_active = max_active,
		.lba_size = M_LBA,
		.max_append = M_MAX_APPEND_LBAS * M_LBA,
		.seed = seed,
		.no_auto_close = !auto_close,
	};
	static struct model m;
	uint8_t buf[8 * M_LBA], got[8 * M_LBA];
	struct zdev *dev;
	int i;

	memset(&m, 0, sizeof(m));
	m.max_open = max_open;
	m.max_active = max_active;
	m.auto_close = auto_close;
	for (i = 0; i < M_NR_ZONES; i++)
		m.z[i].cond = i < M_NR_CONV ? NW : EM;
	rng_state = seed * ZCOW_GOLDEN64 + 1;
	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);

	for (i = 0; i < nr_cmds; i++) {
		int op = rnd_below(100), zi = rnd_below(M_NR_ZONES);
		int n = 1 + rnd_below(6), lba, got_lba = -1, r_sim, r_m;
		uint64_t off = 0;

		if (op < 40) {		/* write */
			bool is_fua = rnd_below(20) == 0;

			lba = zi >= M_NR_CONV && rnd_below(4) ?
				      m.z[zi].wp :
				      rnd_below(M_ZONE_LBAS);
			if (zi == M_NR_ZONES - 1 && lba + n > M_ZONE_LBAS)
				n = M_ZONE_LBAS - lba;
			memset(buf, (uint8_t)(i + 1), n * M_LBA);
			buf[0] = (uint8_t)i;
			r_sim = zdev_write(dev, buf, n * M_LBA,
					   (uint64_t)zi * M_ZS + lba * M_LBA,
					   is_fua ? ZDEV_WRITE_FUA : 0,
					   ZDEV_CLASS_DATA);
			r_m = m_write(&m, zi, lba, n, buf, false, is_fua,
				      &got_lba);
		} else if (op < 60) {	/* append */
			bool is_fua = rnd_below(20) == 0;

			lba = rnd_below(10) ? 0 : 1 + rnd_below(3);
			memset(buf, (uint8_t)(i + 7), n * M_LBA);
			r_sim = zdev_append(dev, buf, n * M_LBA,
					    (uint64_t)zi * M_ZS + lba * M_LBA,
					    is_fua ? ZDEV_WRITE_FUA : 0,
					    ZDEV_CLASS_DATA, &off);
			r_m = m_write(&m, zi, lba, n, buf, true, is_fua,
				      &got_lba);
			if (!r_m)
				ck_assert_uint_eq(off, (uint64_t)zi * M_ZS +
							       got_lba * M_LBA);
		} else if (op < 78) {	/* read */
			lba = rnd_below(M_ZONE_LBAS);
			if (zi == M_NR_ZONES - 1 && lba + n > M_ZONE_LBAS)
				n = M_ZONE_LBAS - lba;
			off = (uint64_t)zi * M_ZS + lba * M_LBA;
			r_sim = zdev_read(dev, got, n * M_LBA, off,
					  ZDEV_CLASS_OTHER);
			r_m = lba + n > M_ZONE_LBAS ? -EIO : 0;
			if (!r_m && !r_sim)
				ck_assert_msg(memcmp(got, m.data + off,
						     n * M_LBA) == 0,
					      "cmd %d: read data differs", i);
		} else if (op < 98) {	/* zone management */
			enum zdev_zone_action a = ZDEV_ZONE_RESET;
			int k = rnd_below(20), nz = 1, j, e;

			switch (rnd_below(4)) {
			case 0:
				a = ZDEV_ZONE_OPEN;
				break;
			case 1:
				a = ZDEV_ZONE_CLOSE;
				break;
			case 2:
				a = ZDEV_ZONE_FINISH;
				break;
			default:
				a = rnd_below(3) ? ZDEV_ZONE_RESET :
						   ZDEV_ZONE_OPEN;
				break;
			}
			r_m = 0;
			if (k == 0) {	/* all zones */
				r_sim = zdev_zone_mgmt(dev, a, 0, 0,
						       ZDEV_CLASS_ZONE);
				for (j = 0; j < M_NR_ZONES; j++) {
					if (!m_selected(&m, a, j))
						continue;
					e = m_mgmt(&m, a, j);
					r_m = r_m ? r_m : e;
				}
			} else {
				if (k == 1)
					nz = 1 + rnd_below(3);
				if (zi + nz > M_NR_ZONES)
					nz = M_NR_ZONES - zi;
				r_sim = zdev_zone_mgmt(dev, a,
						       (uint64_t)zi * M_ZS,
						       (uint64_t)nz * M_ZS,
						       ZDEV_CLASS_ZONE);
				for (j = zi; j < zi + nz; j++) {
					e = m_mgmt(&m, a, j);
					r_m = r_m ? r_m : e;
				}
			}
		} else if (op < 99) {	/* flush */
			r_sim = zdev_flush(dev);
			r_m = 0;
			m_flush(&m);
		} else {		/* rarely: a power cut */
			bool is_drop = rnd_below(2);

			if (rnd_below(20)) {
				ck_reports(dev, &m, i);
				continue;
			}
			ck_assert_int_eq(zsim_cut_now(zsim_from_dev(dev),
						      is_drop ? ZSIM_LOSS_DROP :
								ZSIM_LOSS_KEEP,
						      seed), 0);
			r_sim = zsim_power_cycle(zsim_from_dev(dev));
			r_m = 0;
			m_cut_and_cycle(&m, is_drop);
		}
		ck_assert_msg(r_sim == r_m,
			      "seed %llu cmd %d op %d zone %d: sim %d, model %d",
			      (unsigned long long)seed, i, op, zi, r_sim, r_m);
		if (i % 8 == 0)
			ck_reports(dev, &m, i);
	}
	ck_reports(dev, &m, nr_cmds);
	for (i = 0; i < M_NR_ZONES; i++) {
		static uint8_t zbuf[M_ZS];

		ck_assert_int_eq(zdev_read(dev, zbuf, M_ZS,
					   (uint64_t)i * M_ZS,
					   ZDEV_CLASS_OTHER), 0);
		ck_assert_msg(memcmp(zbuf, m.data + i * M_ZS, M_ZS) == 0,
			      "zone %d data differs at the end", i);
	}
	zdev_close(dev);
}

START_TEST(test_sim_matches_reference_model_with_open_and_active_limits)
{
	run_model(1, 2, 3, true, M_NR_CMDS);
}
END_TEST

START_TEST(test_sim_matches_reference_model_without_auto_close)
{
	run_model(2, 2, 4, false, M_NR_CMDS / 4);
}
END_TEST

START_TEST(test_sim_matches_reference_model_without_limits)
{
	run_model(3, 0, 0, true, M_NR_CMDS / 4);
}
END_TEST

Suite *sim_model_suite(void)
{
	Suite *s = suite_create("sim_model");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_sim_matches_reference_model_with_open_and_active_limits);
	tcase_add_test(tc, test_sim_matches_reference_model_without_auto_close);
	tcase_add_test(tc, test_sim_matches_reference_model_without_limits);
	suite_add_tcase(s, tc);
	return s;
}
