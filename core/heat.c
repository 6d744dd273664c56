// SPDX-License-Identifier: MIT
/*
 * Write heat: which file ranges are written often (hotcold=frequency,
 * docs/reclaim.md "Hot and cold").  A placement aid of the zoned policy,
 * kept in memory only; nothing of it is on disk.
 *
 * Every data write counts once for each HEAT_RANGE (16 KiB) range of the
 * file it covers, keyed by (root, inode, range).  The counts decay: each
 * time the writes noted reach a quarter of the devices' size, every count
 * is halved and counts below HEAT_DROP are forgotten.  A range is hot
 * when its count is at least HEAT_HOT times the mean count per range of
 * live data (the decayed writes over the live data's ranges, measured at
 * the mount and at each decay, or over the ranges counted, when more).
 * So under uniform writes nothing stands out, under a skew the ranges
 * that take more than twice their share are hot, and a range that stops
 * being written cools within a few quarters.
 *
 * Why counts and not the age of what a write replaces (hotcold=age,
 * SepBIT's lifetimes): a cold block overwritten by chance soon after its
 * last write looks hot by its age, and with 80 % of the writes on 20 %
 * of the data (zoned:80/20) that put many cold blocks into hot groups;
 * a count needs several writes within a few quarters of the device.
 * Ranges rather than blocks: one write per block per quarter is too few
 * to tell a hot block from a lucky one (measured in a model of the
 * cleaner: 4 KiB ranges lost to 16 KiB ones under both skews).
 *
 * The table is open addressing (linear probing) on a hash of the key,
 * rebuilt at each decay; at HEAT_MAX_ENTRIES it decays early, so memory
 * stays bounded (32 bytes an entry).  All under the fs lock.
 */
#include "zoned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

#define HEAT_RANGE (16ULL << 10)	/* bytes counted as one range */
#define HEAT_HOT 2.0			/* hot: this many times the mean */
#define HEAT_DROP 0.25f			/* forgotten below this count */
#define HEAT_MIN_CAP 1024u		/* slots of a new table */
#define HEAT_MAX_ENTRIES (1u << 20)	/* decay early beyond this many */

struct heat_ent {
	uint64_t root, ino, range;
	float count;			/* 0: an empty slot */
};

struct zcow_heat {
	struct heat_ent *v;
	uint64_t cap;			/* slots, a power of two */
	uint64_t nr;			/* entries with a count */
	double sum;			/* of the counts */
	uint64_t since;			/* bytes noted since the last decay */
	uint64_t period;		/* bytes between two decays */
	uint64_t ranges;		/* live data's ranges at the last decay */
};

static uint64_t hash(uint64_t root, uint64_t ino, uint64_t range)
{
	uint64_t h = root * 0x9E3779B97F4A7C15ULL ^ ino * 0xC2B2AE3D27D4EB4FULL ^
		     range * 0x165667B19E3779F9ULL;

	h ^= h >> 31;
	h *= 0xD6E8FEB86659FD93ULL;
	return h ^ (h >> 32);
}

static struct heat_ent *slot(struct zcow_heat *h, uint64_t root, uint64_t ino,
			     uint64_t range)
{
	uint64_t i = hash(root, ino, range) & (h->cap - 1);

	while (h->v[i].count != 0 &&
	       (h->v[i].root != root || h->v[i].ino != ino ||
		h->v[i].range != range))
		i = (i + 1) & (h->cap - 1);
	return &h->v[i];
}

/* Live data ranges now (at least 1): the mean's denominator. */
static uint64_t live_ranges(struct zcow_fs *fs)
{
	uint64_t used = 0, i;

	for (i = 0; i < fs->nr_bgs; i++)
		if ((fs->bgs[i]->flags & ZCOW_BG_TYPE_MASK) == ZCOW_BG_DATA)
			used += fs->bgs[i]->used;
	used /= HEAT_RANGE;
	return used ? used : 1;
}

/*
 * Halve every count and keep those at HEAT_DROP or more, in a table of
 * twice their number of slots (at least HEAT_MIN_CAP).  -ENOMEM leaves
 * the old table as it was.
 */
static int decay(struct zcow_fs *fs, struct zcow_heat *h)
{
	uint64_t keep = 0, cap = HEAT_MIN_CAP, i;
	struct heat_ent *old = h->v, *v;
	uint64_t old_cap = h->cap;

	for (i = 0; i < old_cap; i++)
		keep += old[i].count / 2 >= HEAT_DROP;
	while (cap < 2 * keep)
		cap *= 2;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	h->nr = 0;
	h->sum = 0;
	for (i = 0; i < old_cap; i++) {
		float c = old[i].count / 2;
		struct heat_ent *e;

		if (c < HEAT_DROP)
			continue;
		e = slot(h, old[i].root, old[i].ino, old[i].range);
		*e = old[i];
		e->count = c;
		h->nr++;
		h->sum += c;
	}
	free(old);
	h->since = 0;
	h->ranges = live_ranges(fs);
	return 0;
}

int zcow_heat_init(struct zcow_fs *fs)
{
	struct zcow_heat *h = calloc(1, sizeof(*h));
	uint64_t space = 0;
	unsigned int d;

	if (!h)
		return -ENOMEM;
	h->cap = HEAT_MIN_CAP;
	h->v = calloc(h->cap, sizeof(*h->v));
	if (!h->v) {
		free(h);
		return -ENOMEM;
	}
	for (d = 0; d < fs->nr_devs; d++)
		space += fs->devs[d].zdev->info.size;
	h->period = space / 4 > HEAT_RANGE ? space / 4 : HEAT_RANGE;
	h->ranges = live_ranges(fs);
	fs->files->heat = h;
	return 0;
}

void zcow_heat_free(struct zcow_fs *fs)
{
	struct zcow_heat *h = fs->files ? fs->files->heat : NULL;

	if (!h)
		return;
	free(h->v);
	free(h);
	fs->files->heat = NULL;
}

/* The mean is over the live data's ranges as of the last decay, or the
 * ranges written since, when more (a file system filled since). */
static bool is_hot(const struct zcow_heat *h, float count)
{
	uint64_t ranges = h->nr > h->ranges ? h->nr : h->ranges;

	return count >= HEAT_HOT * h->sum / (double)ranges;
}

/* Twice the slots, the entries as they are.  -ENOMEM: unchanged. */
static int grow(struct zcow_heat *h)
{
	struct heat_ent *old = h->v;
	uint64_t old_cap = h->cap, i;

	h->v = calloc(old_cap * 2, sizeof(*h->v));
	if (!h->v) {
		h->v = old;
		return -ENOMEM;
	}
	h->cap = old_cap * 2;
	for (i = 0; i < old_cap; i++)
		if (old[i].count != 0)
			*slot(h, old[i].root, old[i].ino, old[i].range) =
				old[i];
	free(old);
	return 0;
}

/* Room for one more entry with the table at most half full: grow it,
 * or (at HEAT_MAX_ENTRIES, or out of memory) decay early. */
static int make_room(struct zcow_fs *fs, struct zcow_heat *h)
{
	if (2 * (h->nr + 1) <= h->cap)
		return 0;
	if (h->nr < HEAT_MAX_ENTRIES && !grow(h))
		return 0;
	if (decay(fs, h))
		return -ENOMEM;
	return 2 * (h->nr + 1) <= h->cap ? 0 : -ENOMEM;
}

void zcow_heat_note_write(struct zcow_fs *fs, uint64_t root, uint64_t ino,
			  uint64_t off, uint64_t len)
{
	struct zcow_heat *h = fs->files->heat;
	uint64_t r, first = off / HEAT_RANGE;
	uint64_t last = (off + (len ? len : 1) - 1) / HEAT_RANGE;

	if (!h)
		return;
	for (r = first; r <= last; r++) {
		struct heat_ent *e;

		/* Out of memory: the ranges not counted stay as they are
		 * (placement only; nothing depends on it). */
		if (make_room(fs, h))
			break;
		e = slot(h, root, ino, r);
		if (e->count == 0) {
			e->root = root;
			e->ino = ino;
			e->range = r;
			h->nr++;
		}
		e->count += 1;
		h->sum += 1;
	}
	h->since += len;
	if (h->since >= h->period)
		decay(fs, h);
}

bool zcow_heat_is_hot(struct zcow_fs *fs, uint64_t root, uint64_t ino,
		      uint64_t off)
{
	struct zcow_heat *h = fs->files ? fs->files->heat : NULL;
	struct heat_ent *e;

	if (!h)
		return false;
	e = slot(h, root, ino, off / HEAT_RANGE);
	return e->count != 0 && is_hot(h, e->count);
}
