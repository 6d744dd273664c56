// SPDX-License-Identifier: MIT
/*
 * zfio: what shapes a job's I/O stream, drawn while it runs (see fio.h):
 * where each I/O goes (rw=PATTERN:N, rw_sequencer, over the offsets of
 * random_distribution), its size (bsrange, bssplit) and when it may be
 * issued (rate, rate_iops, rate_process; rate_min checked).  fio's semantics, fio's
 * io_u.c get_next_buflen(): the runner asks, this file answers from the
 * job's options and the clone's PRNG (base/prng.h).
 *
 * What it is not: the parser (fio.c) or the scheduler (run.c).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fio.h"
#include "prng.h"

/* fio draws sizes from a 32-bit generator (its tausworthe). */
#define FRAND_MAX	UINT32_MAX

static uint64_t draw32(uint64_t *rng)
{
	return zcow_rand64(rng) >> 32;
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* One draw: bsrange's min + max * U (fio's formula: aligned down, the
 * multiples of min up to max are equally likely; a max that is not one
 * takes what lies above the last), or bssplit's first entry whose
 * running percentage covers U and that fits; then aligned down to the
 * smallest size (not with bs_unaligned) and capped at the largest. */
static uint64_t draw_bs(const struct zfio_job *j, unsigned int d,
			uint64_t room, uint64_t *rng)
{
	uint64_t lo = j->bs_min_d[d], hi = j->bs_max_d[d];
	uint64_t r = draw32(rng), len = 0, cum = 0;
	uint32_t i;

	if (!j->nr_bssplit[d]) {
		len = lo + (uint64_t)((double)hi *
				      ((double)r / ((double)FRAND_MAX + 1.0)));
	} else {
		for (i = 0; i < j->nr_bssplit[d]; i++) {
			const struct zfio_bssplit *e = &j->bssplit[d][i];

			if (!e->pct)
				continue;
			len = e->bs;
			cum += e->pct;
			if (r / cum <= FRAND_MAX / 100ull && len <= room)
				break;
		}
	}
	if (!j->bs_unaligned)
		len = is_pow2(lo) ? len & ~(lo - 1) : len - len % lo;
	return len > hi ? hi : len;
}

uint64_t zfio_next_bs(const struct zfio_job *j, enum zfio_ddir d,
		      bool is_random, uint64_t room, uint64_t *rng)
{
	unsigned int dd = d, n;
	uint64_t len;

	if (j->bs_is_seq_rand)
		dd = is_random ? ZFIO_DDIR_WRITE : ZFIO_DDIR_READ;
	if (j->bs_min_d[dd] == j->bs_max_d[dd])
		return j->bs_min_d[dd];
	if (j->bs_min_d[dd] > room)
		return 0;
	for (n = 0; n < ZFIO_BS_DRAWS; n++) {
		len = draw_bs(j, dd, room, rng);
		if (len && len <= room)
			return len;
	}
	return j->bs_min_d[dd];
}

bool zfio_bs_is_multiple(const struct zfio_job *j, uint64_t align)
{
	unsigned int d, i;

	for (d = 0; d < ZFIO_NR_DDIR; d++) {
		uint64_t lo = j->bs_min_d[d], hi = j->bs_max_d[d];
		uint32_t n = j->nr_bssplit[d];

		if (lo % align)
			return false;
		if (lo == hi)
			continue;
		/* Aligned: multiples of lo; a range's cap hi too. */
		if (!j->bs_unaligned && !n && hi % align)
			return false;
		if (!j->bs_unaligned)
			continue;
		if (!n && align > 1)
			return false;	/* any byte count in lo..hi */
		for (i = 0; i < n; i++)
			if (j->bssplit[d][i].bs % align)
				return false;
	}
	return true;
}

/* ---- offsets: rw=PATTERN:N -------------------------------------------- */

static uint64_t seq_next(const struct zfio_job *j, uint64_t pos,
			 uint64_t range_len)
{
	int64_t add = j->rw_seq_add;

	if (!pos || !add)
		return pos;
	pos += (uint64_t)add;		/* modulo 2^64: below 0 is past */
	if (pos >= range_len)
		pos = add > 0 ? 0 : range_len + (uint64_t)add;
	return pos;
}

uint64_t zfio_next_offset(const struct zfio_job *j,
			  const struct zfio_dist_state *dist,
			  struct zfio_offsets *st, enum zfio_ddir d,
			  uint64_t seq_pos, uint64_t range_len, uint64_t *rng,
			  bool *is_rand_ret)
{
	uint64_t off;

	*is_rand_ret = false;
	if (j->rw_seq_nr > 1 && st->nr_left > 1) {
		st->nr_left--;
		off = j->rw_identical ? st->last_start :
					seq_next(j, seq_pos, range_len);
	} else {
		st->nr_left = j->rw_seq_nr;
		*is_rand_ret = zfio_rw_is_random(j->rw) &&
			       zfio_dist_is_random(dist, d, rng);
		off = *is_rand_ret ? zfio_dist_next(dist, d, rng) * dist->bs :
				     seq_next(j, seq_pos, range_len);
	}
	st->last_start = off;
	return off;
}

/* ---- rate control ----------------------------------------------------- */

#define US	1000000ull

bool zfio_rate_is_set(const struct zfio_job *j)
{
	unsigned int d;

	for (d = 0; d < ZFIO_NR_DDIR; d++)
		if (j->rate[d] || j->rate_iops[d] || j->rate_min[d] ||
		    j->rate_iops_min[d])
			return true;
	return false;
}

/* fio's __setup_rate(): rate, else rate_iops x the smallest size. */
void zfio_rate_init(struct zfio_rate *r, const struct zfio_job *j)
{
	unsigned int d;

	memset(r, 0, sizeof(*r));
	for (d = 0; d < ZFIO_NR_DDIR; d++)
		r->bps[d] = j->rate[d] ? j->rate[d] :
			    (uint64_t)j->rate_iops[d] * j->bs_min_d[d];
}

static bool is_mixed(const struct zfio_job *j)
{
	return j->rw == ZFIO_RW || j->rw == ZFIO_RANDRW;
}

enum zfio_ddir zfio_rate_ddir(const struct zfio_rate *r,
			      const struct zfio_job *j, enum zfio_ddir d,
			      uint64_t now_us, uint64_t end_us,
			      uint64_t *at_us_ret)
{
	enum zfio_ddir o = d == ZFIO_DDIR_READ ? ZFIO_DDIR_WRITE :
						 ZFIO_DDIR_READ;
	uint32_t o_mix = o == ZFIO_DDIR_READ ? j->rwmixread :
					       100 - j->rwmixread;
	uint64_t at;

	*at_us_ret = now_us;
	if (r->next_us[d] <= now_us)
		return d;
	if (is_mixed(j) && d != ZFIO_DDIR_TRIM && o_mix) {
		if (r->next_us[o] <= now_us)
			return o;
		if (r->next_us[d] <= r->next_us[o]) {
			at = r->next_us[d];
		} else {
			at = r->next_us[o];
			d = o;
		}
	} else {
		at = r->next_us[d];
	}
	if (end_us && at > end_us)
		at = end_us > now_us ? end_us : now_us;
	*at_us_ret = at;
	return d;
}

/* A uniform draw in (0, 1]: never 0, so -log() is finite. */
static double unit_open(uint64_t *rng)
{
	return ((double)draw32(rng) + 1.0) / ((double)FRAND_MAX + 1.0);
}

/* fio's usec_for_io(). */
void zfio_rate_issued(struct zfio_rate *r, const struct zfio_job *j,
		      enum zfio_ddir d, uint64_t len, uint64_t *rng)
{
	uint64_t bps = r->bps[d], iops;

	r->issued[d] += len;
	if (!bps) {
		r->next_us[d] = 0;
		return;
	}
	if (j->rate_poisson) {
		/* check_job() refused a rate below one I/O per second */
		iops = bps / j->bs_min_d[d];
		r->last_us[d] += (uint64_t)((float)(US / iops) *
					    -logf((float)unit_open(rng)));
		r->next_us[d] = r->last_us[d];
	} else if (!j->rate[d] && j->nr_bssplit[d]) {
		/* rate_iops with bssplit: the IOPS, not the bytes */
		iops = bps / j->bs_min_d[d];
		r->last_us[d] += iops ? US / iops : 0;
		r->next_us[d] = iops ? r->last_us[d] : 0;
	} else {
		r->next_us[d] = r->issued[d] % bps * US / bps +
				r->issued[d] / bps * US;
	}
}

/* fio's __check_min_rate() for one direction. */
static int check_min(struct zfio_rate *r, const struct zfio_job *j,
		     unsigned int d, uint64_t now_ms, char *err,
		     size_t err_len)
{
	uint64_t spent, got;

	if (!j->rate_min[d] && !j->rate_iops_min[d])
		return 0;
	if (now_ms < 2000)
		return 0;	/* fio's settle period */
	if (r->chk_bytes[d] || r->chk_ios[d]) {
		spent = now_ms > r->chk_ms[d] ? now_ms - r->chk_ms[d] : 0;
		if (spent < j->ratecycle_ms || !spent)
			return 0;
		if (j->rate_min[d]) {
			got = (r->done_bytes[d] - r->chk_bytes[d]) * 1000 /
			      spent;
			if (got < j->rate_min[d]) {
				snprintf(err, err_len, "%s: rate_min=%lluB/s "
					 "not met, got %lluB/s", j->name,
					 (unsigned long long)j->rate_min[d],
					 (unsigned long long)got);
				return -EIO;
			}
		} else {
			got = (r->done_ios[d] - r->chk_ios[d]) * 1000 / spent;
			if (got < j->rate_iops_min[d]) {
				snprintf(err, err_len, "%s: rate_iops_min=%u "
					 "not met, got %llu IOPS", j->name,
					 j->rate_iops_min[d],
					 (unsigned long long)got);
				return -EIO;
			}
		}
	}
	r->chk_bytes[d] = r->done_bytes[d];
	r->chk_ios[d] = r->done_ios[d];
	r->chk_ms[d] = now_ms;
	return 0;
}

int zfio_rate_done(struct zfio_rate *r, const struct zfio_job *j,
		   enum zfio_ddir d, uint64_t len, uint64_t now_ms,
		   char *err, size_t err_len)
{
	unsigned int k;
	int ret;

	r->done_bytes[d] += len;
	r->done_ios[d]++;
	for (k = 0; k < ZFIO_NR_DDIR; k++) {
		if (!r->done_bytes[k])
			continue;
		ret = check_min(r, j, k, now_ms, err, err_len);
		if (ret)
			return ret;
	}
	return 0;
}
