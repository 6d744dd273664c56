// SPDX-License-Identifier: MIT
/*
 * zfio: what shapes a job's I/O stream, drawn while it runs (see fio.h):
 * the size of each I/O (bsrange, bssplit).  fio's semantics, fio's
 * io_u.c get_next_buflen(): the runner asks, this file answers from the
 * job's options and the clone's PRNG (base/prng.h).
 *
 * What it is not: the parser (fio.c) or the scheduler (run.c).
 */
#include <stdbool.h>
#include <stdint.h>

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
