// SPDX-License-Identifier: MIT
/*
 * The reclaim policies (core/reclaim.h): which block groups relocation
 * empties, and when.
 *
 *   threshold     (Linux 5.13 btrfs_reclaim_bgs): after a commit, every
 *                 candidate whose zone_unusable (the capacity gap
 *                 included, as btrfs counts it) reaches reclaim_threshold
 *                 percent of its size;
 *   greedy        (Linux 5.16: least-used first): when the free zones
 *                 fall to the low watermark, or a data pick or metadata
 *                 reservation finds no room, the candidates with the
 *                 fewest live bytes, until the high watermark;
 *   cost-benefit  (LFS, Rosenblum & Ousterhout): the same trigger, the
 *                 candidates with the highest age x (1 - u) / (1 + u),
 *                 u = live share, age = bytes reserved anywhere since the
 *                 group's last reservation (a write clock, so a group
 *                 that stopped changing long ago is cold);
 *   off           (seed 005, Linux 5.12): nothing; a group is reset only
 *                 when nothing in it is used.
 *
 * A candidate is a data or metadata group written to its capacity (or
 * finished), or a data group partly written that no data slot fills,
 * with freed bytes and nothing reserved or unwritten in it; never a
 * system group, the tree-log group or the data relocation group.
 * The data a pass moves must fit the relocation group and the one zone it
 * may take (zcow_reloc_room()); every pass ends with the commits that make
 * the copies durable and then reset the emptied zones.
 */
#include "reclaim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "grow.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "reclaim"
#define BS ZCOW_SECTORSIZE
/* Free zones under which greedy and cost-benefit reclaim: the metadata
 * reserve (core/zoned.c), the zone held for relocation, one more. */
#define LOW_WATERMARK ZCOW_RECLAIM_LOW_ZONES
/* Zones of metadata room greedy and cost-benefit keep beyond what the
 * commit and the global reserve need. */
#define META_MARGIN_ZONES 4u
/* Rounds of one pass at most (each: relocate, two commits). */
#define MAX_ROUNDS 64

static const char *const names[] = {
	[ZCOW_RECLAIM_DEFAULT] = "default",
	[ZCOW_RECLAIM_OFF] = "off",
	[ZCOW_RECLAIM_THRESHOLD] = "threshold",
	[ZCOW_RECLAIM_GREEDY] = "greedy",
	[ZCOW_RECLAIM_COST_BENEFIT] = "cost-benefit",
};

const char *zcow_reclaim_name(int policy)
{
	if (policy == ZCOW_RECLAIM_DEFAULT)
		policy = ZCOW_RECLAIM_DEFAULT_POLICY;
	if (policy < 0 || policy > ZCOW_RECLAIM_COST_BENEFIT)
		return "?";
	return names[policy];
}

int zcow_reclaim_parse(const char *name)
{
	int i;

	for (i = ZCOW_RECLAIM_OFF; i <= ZCOW_RECLAIM_COST_BENEFIT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -EINVAL;
}

const char *zcow_reclaim_knob_refused(int policy, uint32_t threshold,
				      uint32_t high, const char **why_ret)
{
	if (policy == ZCOW_RECLAIM_DEFAULT)
		policy = ZCOW_RECLAIM_DEFAULT_POLICY;
	if (threshold && policy != ZCOW_RECLAIM_THRESHOLD) {
		*why_ret = "only reclaim=threshold has a threshold";
		return "reclaim_threshold";
	}
	if (high && policy != ZCOW_RECLAIM_GREEDY &&
	    policy != ZCOW_RECLAIM_COST_BENEFIT) {
		*why_ret = "only greedy and cost-benefit have a watermark";
		return "reclaim_high";
	}
	return NULL;
}

void zcow_reclaim_init(struct zcow_fs *fs, int policy, uint32_t threshold,
		       uint32_t high)
{
	fs->reclaim = policy == ZCOW_RECLAIM_DEFAULT ?
			      ZCOW_RECLAIM_DEFAULT_POLICY :
			      policy;
	fs->reclaim_threshold =
		threshold ? threshold : ZCOW_RECLAIM_DEFAULT_THRESHOLD;
	fs->reclaim_high = high;
}

uint64_t zcow_bg_garbage(const struct zcow_bg *bg)
{
	uint64_t gap = bg->length - bg->capacity;

	return (bg->zone_unusable > gap ? bg->zone_unusable - gap : 0) +
	       bg->pinned;
}

uint64_t zcow_reclaimable(struct zcow_fs *fs)
{
	uint64_t sum = 0, i;

	for (i = 0; i < fs->nr_bgs; i++) {
		const struct zcow_bg *bg = fs->bgs[i];

		if ((bg->flags & (ZCOW_BG_DATA | ZCOW_BG_METADATA)) &&
		    bg->start != fs->treelog_bg && !bg->is_deleted &&
		    !bg->is_removing)
			sum += zcow_bg_garbage(bg);
	}
	return sum;
}

/* A candidate: written full, or (data) open with no slot filling it;
 * @may_be_open (balance): any group with data that no slot fills. */
static bool is_candidate(struct zcow_fs *fs, const struct zcow_bg *bg,
			 bool may_be_open)
{
	uint64_t type = bg->flags & ZCOW_BG_TYPE_MASK;
	uint64_t unit = type == ZCOW_BG_DATA ? BS : fs->nodesize;
	struct zcow_files *fl = fs->files;
	uint32_t s;

	if ((type != ZCOW_BG_DATA && type != ZCOW_BG_METADATA) ||
	    bg->is_ro || bg->is_removing || bg->is_deleted ||
	    bg->is_relocating || bg->is_copying || bg->is_data_reloc ||
	    bg->is_new ||
	    bg->reserved || bg->start == fs->treelog_bg)
		return false;
	/* Metadata: every node allocated in it written (nothing of the
	 * running transaction in it). */
	if (type == ZCOW_BG_METADATA && bg->alloc_offset > bg->meta_wp)
		return false;
	for (s = 0; fl && s < fl->data_zones; s++)
		if (fl->data_active[s] == bg->start &&
		    bg->alloc_offset + unit <= bg->capacity)
			return false;	/* being filled */
	if (may_be_open)
		return bg->alloc_offset > 0;
	if (bg->alloc_offset + unit > bg->capacity)
		return zcow_bg_garbage(bg);
	/* Open, and no slot fills it (left by a mount, or a relocation
	 * group replaced): it may wait long for a write. */
	return type == ZCOW_BG_DATA && bg->alloc_offset &&
	       zcow_bg_garbage(bg);
}

bool zcow_reclaim_is_candidate(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return is_candidate(fs, bg, false);
}

/* Relocation room the live data of data group @bg needs: a zone end per
 * batch may be lost (round_once()). */
static uint64_t reloc_need(const struct zcow_bg *bg)
{
	return bg->used + bg->used / 64;
}

/*
 * Held while the relocation group could not take the least-live data
 * candidate (or there is none, or no relocation group yet): a pass must
 * always be able to start.  A relocation group with 64 KiB left, every
 * candidate holding more and the last zone beyond the metadata reserve
 * taken by data was a pass that could never start again (ENOSPC with a
 * third of the device garbage).  Holding a zone whenever the group is
 * not empty would cost a zone of the data's room all the time.
 */
uint64_t zcow_reclaim_held_zones(struct zcow_fs *fs)
{
	uint64_t room, need = UINT64_MAX, i;
	struct zcow_bg *bg;

	if (fs->reclaim == ZCOW_RECLAIM_OFF ||
	    fs->reclaim == ZCOW_RECLAIM_DEFAULT || fs->read_only ||
	    !fs->has_trees || !fs->files)
		return 0;
	bg = fs->reloc_bg ? zcow_bg_lookup(fs, fs->reloc_bg) : NULL;
	if (!bg)
		return 1;
	if (!bg->alloc_offset)
		return 0;
	room = (bg->capacity - bg->alloc_offset) / BS * BS;
	for (i = 0; i < fs->nr_bgs && need > room; i++) {
		const struct zcow_bg *c = fs->bgs[i];

		if ((c->flags & ZCOW_BG_DATA) && is_candidate(fs, c, false) &&
		    reloc_need(c) < need)
			need = reloc_need(c);
	}
	return need <= room ? 0 : 1;
}

/* ---- victim order ------------------------------------------------------ */

struct victim {
	struct zcow_bg *bg;
	double score;		/* higher first */
};

static int cmp_victim(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->bg->start < y->bg->start ? -1 : x->bg->start > y->bg->start;
}

static double live_share(const struct zcow_bg *bg)
{
	return bg->capacity ? (double)bg->used / (double)bg->capacity : 1.0;
}

static double score(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	double u = live_share(bg);

	if (fs->reclaim == ZCOW_RECLAIM_COST_BENEFIT) {
		double age = (double)(fs->alloc_clock - bg->last_alloc) + 1.0;

		return age * (1.0 - u) / (1.0 + u);
	}
	return 1.0 - u;		/* greedy, threshold, balance: least live */
}

/* Is @bg over the threshold of reclaim=threshold? */
static bool is_over_threshold(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return bg->zone_unusable + bg->pinned >=
	       bg->length / 100 * fs->reclaim_threshold;
}

/*
 * The candidates in policy order: @usage <= 100 (balance): every group
 * with at most @usage percent live, open ones too, last allocated in
 * before the write clock was at @clock (so that balance never moves its
 * own copies again); else the policy's.
 */
static int list_victims(struct zcow_fs *fs, uint32_t usage, uint64_t clock,
			struct victim **v_ret, uint64_t *nr_ret)
{
	struct victim *v = NULL;
	uint64_t nr = 0, cap = 0, i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (usage <= 100) {
			if (!is_candidate(fs, bg, true) ||
			    bg->last_alloc > clock ||
			    bg->used * 100 > (uint64_t)usage * bg->capacity)
				continue;
		} else if (!is_candidate(fs, bg, false) ||
			   bg->used >= bg->capacity ||
			   (fs->reclaim == ZCOW_RECLAIM_THRESHOLD &&
			    !is_over_threshold(fs, bg))) {
			continue;
		}
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			free(v);
			return -ENOMEM;
		}
		v[nr].bg = bg;
		v[nr].score = score(fs, bg);
		nr++;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_victim);
	*v_ret = v;
	*nr_ret = nr;
	return 0;
}

int zcow_reclaim_victims(struct zcow_fs *fs, struct zcow_bg ***v_ret,
			 uint64_t *nr_ret)
{
	struct victim *v = NULL;
	struct zcow_bg **bgs;
	uint64_t nr = 0, i;
	int err = list_victims(fs, 101, 0, &v, &nr);

	if (err)
		return err;
	bgs = malloc((nr ? nr : 1) * sizeof(*bgs));
	if (!bgs) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++)
		bgs[i] = v[i].bg;
	free(v);
	*v_ret = bgs;
	*nr_ret = nr;
	return 0;
}

/* ---- passes ------------------------------------------------------------ */

static uint64_t nr_zones(struct zcow_fs *fs)
{
	return fs->writable_bytes / fs->dev->info.zone_size;
}

/*
 * The free zones a greedy or cost-benefit pass stops at: reclaim_high=,
 * or by default a quarter of the device beyond the low watermark, so
 * that a pass (two commits, which rewrite the dirty tree leaves) frees
 * many zones at once.
 */
uint64_t zcow_reclaim_high_zones(struct zcow_fs *fs)
{
	uint64_t extra = nr_zones(fs) / 4;

	if (fs->reclaim_high)
		return fs->reclaim_high;

	return LOW_WATERMARK + (extra > 2 ? extra : 2);
}

/*
 * Is space short: free zones at or under @zones, or metadata room that
 * would not cover the running transaction's commit and the global
 * reserve with META_MARGIN_ZONES zones given away (the metadata of large
 * trees needs zones of its own, and relocation needs room for the items
 * it moves)?
 */
static bool is_short(struct zcow_fs *fs, uint64_t zones)
{
	return zcow_zoned_nr_free_zones(fs) <= zones ||
	       !zcow_meta_may_give(fs, META_MARGIN_ZONES *
					       zcow_zoned_zone_room(fs));
}

/*
 * One round: pick victims in order while their live data fits the room
 * relocation has (zcow_reloc_room()), at most @want of them, relocate
 * them and commit.  *nr_ret: groups given to relocation (0: none fit).
 */
static int round_once(struct zcow_fs *fs, uint32_t usage, uint64_t clock,
		      uint64_t want, uint64_t *nr_ret)
{
	struct victim *v = NULL;
	struct zcow_bg **pick = NULL;
	uint64_t nr = 0, n = 0, i, room;
	int err;

	*nr_ret = 0;
	err = list_victims(fs, usage, clock, &v, &nr);
	if (err || !nr)
		goto out;
	pick = malloc(nr * sizeof(*pick));
	if (!pick) {
		err = -ENOMEM;
		goto out;
	}
	room = zcow_reloc_room(fs);
	for (i = 0; i < nr && n < want; i++) {
		struct zcow_bg *bg = v[i].bg;

		if (bg->flags & ZCOW_BG_DATA) {
			uint64_t need = reloc_need(bg);

			if (need > room)
				continue;
			room -= need;
		} else if (zcow_meta_check(fs, zcow_reloc_meta_nodes(fs, bg),
					   true)) {
			continue;	/* no room for its nodes now */
		}
		pick[n++] = bg;
		zlog(ZLOG_DEBUG, TAG,
		     "pick %" PRIu64 "/%" PRIu64 " %s u=%.3f age=%" PRIu64
		     " score=%.4g%s",
		     n, nr, bg->flags & ZCOW_BG_DATA ? "data" : "meta",
		     live_share(bg), fs->alloc_clock - bg->last_alloc,
		     v[i].score, bg->is_reloc_filled ? " reloc" :
				 bg->is_hot ? " hot" : "");
	}
	if (!n) {
		err = -ENOSPC;	/* none fits the room relocation has */
		goto out;
	}
	err = zcow_relocate_bgs_locked(fs, pick, n);
	*nr_ret = n;
out:
	free(pick);
	free(v);
	return err;
}

/*
 * Relocate until the policy is satisfied: threshold and balance (@usage
 * <= 100) until no group qualifies; greedy and cost-benefit until the
 * free zones reach the high watermark.
 */
static int reclaim_pass(struct zcow_fs *fs, uint32_t usage)
{
	bool is_watermark = usage > 100 &&
			    (fs->reclaim == ZCOW_RECLAIM_GREEDY ||
			     fs->reclaim == ZCOW_RECLAIM_COST_BENEFIT);
	uint64_t before = 0, after, n, want, high = zcow_reclaim_high_zones(fs);
	int round, err = 0;

	fs->in_reclaim = true;
	for (round = 0; round < MAX_ROUNDS; round++) {
		before = zcow_zoned_nr_free_zones(fs);
		if (is_watermark && !is_short(fs, high - 1))
			break;
		want = is_watermark ? (before < high ? high - before : 1) :
				      UINT64_MAX;
		err = round_once(fs, usage, 0, want, &n);
		if (err || !n)
			break;
		after = zcow_zoned_nr_free_zones(fs);
		if (is_watermark && after <= before)
			break;		/* no progress */
	}
	fs->in_reclaim = false;
	return err == -ENOSPC ? 0 : err;
}

int zcow_reclaim_locked(struct zcow_fs *fs, enum zcow_reclaim_when when)
{
	int err;

	if (fs->reclaim == ZCOW_RECLAIM_OFF ||
	    fs->reclaim == ZCOW_RECLAIM_DEFAULT || fs->in_reclaim ||
	    fs->read_only || fs->error || !fs->has_trees || !fs->files)
		return 0;
	if (fs->reclaim == ZCOW_RECLAIM_THRESHOLD) {
		if (when != ZCOW_RECLAIM_AT_COMMIT)
			return 0;	/* Linux 5.13: after a commit only */
	} else if (when != ZCOW_RECLAIM_SHORT &&
		   !is_short(fs, LOW_WATERMARK)) {
		return 0;
	}
	/* Nothing changed since a pass found nothing to do. */
	if (fs->reclaim_idle_gen == fs->generation &&
	    fs->reclaim_idle_freed == fs->freed_bytes)
		return 0;
	err = reclaim_pass(fs, 101);
	fs->reclaim_idle_gen = fs->generation;
	fs->reclaim_idle_freed = fs->freed_bytes;
	return err;
}

void zcow_reclaim_stats_sub(struct zcow_reclaim_stats *d,
			    const struct zcow_reclaim_stats *now,
			    const struct zcow_reclaim_stats *base)
{
	static const struct zcow_reclaim_stats zero;

	if (!base)
		base = &zero;
	d->nr_passes = now->nr_passes - base->nr_passes;
	d->groups_relocated = now->groups_relocated - base->groups_relocated;
	d->data_groups = now->data_groups - base->data_groups;
	d->meta_groups = now->meta_groups - base->meta_groups;
	d->data_bytes = now->data_bytes - base->data_bytes;
	d->data_extents = now->data_extents - base->data_extents;
	d->meta_bytes = now->meta_bytes - base->meta_bytes;
	d->meta_nodes = now->meta_nodes - base->meta_nodes;
	d->zones_reset = now->zones_reset - base->zones_reset;
}

int zcow_balance(struct zcow_fs *fs, uint32_t usage,
		 struct zcow_reclaim_stats *stats_ret)
{
	struct zcow_reclaim_stats before;
	uint64_t n, clock;
	int round, err = 0;

	if (usage > 100)
		return -EINVAL;
	if (fs->read_only)
		return -EROFS;
	if (!fs->has_trees || !fs->files)
		return -EINVAL;
	pthread_mutex_lock(&fs->files->lock);
	before = fs->rstats;
	clock = fs->alloc_clock;
	fs->in_reclaim = true;
	for (round = 0; round < MAX_ROUNDS * 16; round++) {
		err = round_once(fs, usage, clock, UINT64_MAX, &n);
		if (err || !n)
			break;
	}
	if (!err && round == MAX_ROUNDS * 16)
		err = -EAGAIN;
	fs->in_reclaim = false;
	if (stats_ret)
		zcow_reclaim_stats_sub(stats_ret, &fs->rstats, &before);
	pthread_mutex_unlock(&fs->files->lock);
	return err;
}
