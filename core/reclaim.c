// SPDX-License-Identifier: MIT
/*
 * The reclaim policies (core/reclaim.h): which block groups relocation
 * empties, and when; one row each in policies[] below.
 *
 *   threshold      (Linux 5.13 btrfs_reclaim_bgs): after a commit, every
 *                  candidate whose zone_unusable (the capacity gap
 *                  included, as btrfs counts it) reaches
 *                  reclaim_threshold percent of its size, then a commit;
 *   greedy         (Linux 5.16: least-used first), just in time: the
 *                  cleaner (clean_jit()) takes one victim at a time, the
 *                  fewest live bytes first, when a data slot is about to
 *                  open a zone and data has few zones free or pending;
 *   cost-benefit   (LFS, Rosenblum & Ousterhout): the same cleaner, the
 *                  candidates with the highest age x (1 - u) / (1 + u),
 *                  u = live share, age = bytes reserved anywhere since
 *                  the group's last reservation;
 *   hotcold-greedy (Desnoyers): the same cleaner, greedy with a cold
 *                  group's free share counted twice; needs hotcold=on;
 *   off            (seed 005, Linux 5.12): nothing; a group is reset
 *                  only when nothing in it is used.
 *
 * A candidate is a data or metadata group written to its capacity (or
 * finished), or a data group partly written that no data slot fills,
 * with freed bytes and nothing reserved or unwritten in it; never a
 * system group, the tree-log group or the data relocation group.
 * Relocation commits nothing: an emptied group is pending until the next
 * commit removes it and resets its zones; the cleaner commits only when
 * data runs out of zones it may open.
 */
#include "reclaim.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "grow.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "reclaim"
#define BS ZCOW_SECTORSIZE
/* Free zones beyond the reserve, pending ones counted, the cleaner keeps
 * by default (reclaim_high= sets the whole count). */
#define CLEAN_AHEAD_ZONES 3u
/* Free zones beyond the reserve at or under which reclaim commits, so
 * that the pending zones are reset before data runs out. */
#define HARD_RESERVE_ZONES 1u
/* hotcold-greedy: a cold group's free share counts this many times. */
#define COLD_WEIGHT 2.0
/* Victims one cleaner call takes at most. */
#define MAX_VICTIMS 64u
/* Rounds of threshold's clean-up and of balance at most. */
#define MAX_ROUNDS 64

/* ---- the policies, one row each ---------------------------------------- */

/* When a policy cleans. */
enum policy_when {
	WHEN_NEVER,		/* off */
	WHEN_OVER_THRESHOLD,	/* after a commit, every group over it */
	WHEN_JUST_IN_TIME,	/* before data opens a zone, or room short */
};

struct policy {
	const char *name;
	enum policy_when when;
	/* Victim order, higher first (NULL: never picks). */
	double (*score)(struct zcow_fs *fs, const struct zcow_bg *bg);
	bool has_threshold;	/* takes reclaim_threshold= */
	bool has_high;		/* takes reclaim_high= */
	bool needs_hotcold;	/* refused without hotcold=on */
};

static double live_share(const struct zcow_bg *bg)
{
	return bg->capacity ? (double)bg->used / (double)bg->capacity : 1.0;
}

/* greedy, threshold, balance: the least live first. */
static double score_greedy(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	(void)fs;
	return 1.0 - live_share(bg);
}

/* LFS cost-benefit: age x (1 - u) / (1 + u), age on the write clock. */
static double score_cost_benefit(struct zcow_fs *fs,
				 const struct zcow_bg *bg)
{
	double u = live_share(bg);
	double age = (double)(fs->alloc_clock - bg->last_alloc) + 1.0;

	return age * (1.0 - u) / (1.0 + u);
}

/* Desnoyers' split of the spare space: cleaning cold groups at a higher
 * live share leaves the free space to the hot ones, whose garbage comes
 * back fastest. */
static double score_hotcold_greedy(struct zcow_fs *fs,
				   const struct zcow_bg *bg)
{
	return score_greedy(fs, bg) * (bg->is_hot ? 1.0 : COLD_WEIGHT);
}

static const struct policy policies[] = {
	[ZCOW_RECLAIM_DEFAULT] = { "default", WHEN_NEVER, NULL, false, false },
	[ZCOW_RECLAIM_OFF] = { "off", WHEN_NEVER, NULL, false, false },
	[ZCOW_RECLAIM_THRESHOLD] = { "threshold", WHEN_OVER_THRESHOLD,
				     score_greedy, true, false },
	[ZCOW_RECLAIM_GREEDY] = { "greedy", WHEN_JUST_IN_TIME, score_greedy,
				  false, true },
	[ZCOW_RECLAIM_COST_BENEFIT] = { "cost-benefit", WHEN_JUST_IN_TIME,
					score_cost_benefit, false, true },
	[ZCOW_RECLAIM_HOTCOLD_GREEDY] = { "hotcold-greedy", WHEN_JUST_IN_TIME,
					  score_hotcold_greedy, false, true,
					  true },
};

#define NR_POLICIES (sizeof(policies) / sizeof(policies[0]))

const char *zcow_reclaim_name(int policy)
{
	if (policy == ZCOW_RECLAIM_DEFAULT)
		policy = ZCOW_RECLAIM_DEFAULT_POLICY;
	if (policy < 0 || (size_t)policy >= NR_POLICIES)
		return "?";
	return policies[policy].name;
}

int zcow_reclaim_parse(const char *name)
{
	size_t i;

	for (i = ZCOW_RECLAIM_OFF; i < NR_POLICIES; i++)
		if (!strcmp(name, policies[i].name))
			return (int)i;
	return -EINVAL;
}

void zcow_reclaim_names(char *buf, size_t size)
{
	size_t i, at = 0;

	if (!size)
		return;
	buf[0] = 0;
	for (i = ZCOW_RECLAIM_OFF; i < NR_POLICIES && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s",
				       i == ZCOW_RECLAIM_OFF ? "" :
				       i + 1 == NR_POLICIES ? " or " : ", ",
				       policies[i].name);
}

const char *zcow_reclaim_knob_refused(int policy, uint32_t threshold,
				      uint32_t high, const char **why_ret)
{
	if (policy == ZCOW_RECLAIM_DEFAULT)
		policy = ZCOW_RECLAIM_DEFAULT_POLICY;
	if (policy < 0 || (size_t)policy >= NR_POLICIES)
		policy = ZCOW_RECLAIM_OFF;
	if (threshold && !policies[policy].has_threshold) {
		*why_ret = "only reclaim=threshold has a threshold";
		return "reclaim_threshold";
	}
	if (high && !policies[policy].has_high) {
		*why_ret = "only greedy, cost-benefit and hotcold-greedy have a watermark";
		return "reclaim_high";
	}
	return NULL;
}

bool zcow_reclaim_needs_hotcold(int policy)
{
	if (policy == ZCOW_RECLAIM_DEFAULT)
		policy = ZCOW_RECLAIM_DEFAULT_POLICY;
	return policy > 0 && (size_t)policy < NR_POLICIES &&
	       policies[policy].needs_hotcold;
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

		/* The group being relocated counts: the zone is held for
		 * relocation, not against it. */
		if ((c->flags & ZCOW_BG_DATA) &&
		    (is_candidate(fs, c, false) ||
		     (c->is_relocating && !c->is_cleaned)) &&
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

/* Is @bg over the threshold of reclaim=threshold? */
static bool is_over_threshold(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return bg->zone_unusable + bg->pinned >=
	       bg->length / 100 * fs->reclaim_threshold;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return b ? (a + b - 1) / b : 0;
}

/* Balance: the groups of a type that have no garbage and are partly
 * filled, and their live bytes. */
struct partial {
	uint64_t nr, used, capacity;
};

/*
 * Balance: does moving @bg gain nothing?  A group without garbage gains
 * nothing when it is full, nor when the partly filled groups of its type
 * without garbage (@partial) would fill as many zones after the move as
 * before: the copies take as much room as they give back.  So a second
 * balance has no data to move.
 */
static bool gains_nothing(const struct zcow_bg *bg,
			  const struct partial *partial)
{
	const struct partial *p = &partial[(bg->flags & ZCOW_BG_DATA) != 0];

	if (zcow_bg_garbage(bg))
		return false;
	return bg->alloc_offset >= bg->capacity || !p->capacity ||
	       div_up(p->used, p->capacity) >= p->nr;
}

/*
 * The candidates in policy order: @usage <= 100 (balance): every group
 * with at most @usage percent live, open ones too, last allocated in
 * before the write clock was at @clock (so that balance never moves its
 * own copies again); else the policy's.  A young metadata group (filled
 * since the older of the last two commits) only with @meta_ok: its nodes
 * die by themselves as the next commits copy the trees on write, and
 * moving them dirties their ancestors, so the cleaner takes one only
 * when metadata cannot get room otherwise.  An older one competes with
 * the data groups: the nodes left in it are those the workload does not
 * touch.
 */
static int list_victims(struct zcow_fs *fs, uint32_t usage, uint64_t clock,
			bool meta_ok, struct victim **v_ret, uint64_t *nr_ret)
{
	struct victim *v = NULL;
	struct partial partial[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
	uint64_t nr = 0, cap = 0, i;

	for (i = 0; usage <= 100 && i < fs->nr_bgs; i++) {
		const struct zcow_bg *bg = fs->bgs[i];
		struct partial *p = &partial[(bg->flags & ZCOW_BG_DATA) != 0];

		if (is_candidate(fs, bg, true) && !zcow_bg_garbage(bg) &&
		    bg->alloc_offset < bg->capacity) {
			p->nr++;
			p->used += bg->used;
			p->capacity = bg->capacity;
		}
	}
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (!(bg->flags & ZCOW_BG_DATA) && !meta_ok &&
		    bg->last_alloc > fs->commit_clock[1])
			continue;	/* young metadata: empties by itself */
		if (usage <= 100) {
			if (!is_candidate(fs, bg, true) ||
			    bg->last_alloc > clock ||
			    bg->used * 100 > (uint64_t)usage * bg->capacity ||
			    gains_nothing(bg, partial))
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
		v[nr].score = usage <= 100 ?
				      score_greedy(fs, bg) :
				      policies[fs->reclaim].score(fs, bg);
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
	int err = list_victims(fs, 101, 0, true, &v, &nr);

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

static void log_pick(struct zcow_fs *fs, const struct zcow_bg *bg,
		     uint64_t n, uint64_t nr, double score)
{
	zlog(ZLOG_DEBUG, TAG,
	     "pick %" PRIu64 "/%" PRIu64 " %s u=%.3f age=%" PRIu64
	     " score=%.4g%s",
	     n + 1, nr, bg->flags & ZCOW_BG_DATA ? "data" : "meta",
	     live_share(bg), fs->alloc_clock - bg->last_alloc, score,
	     bg->is_reloc_filled ? (bg->is_hot ? " reloc hot" : " reloc") :
	     bg->is_hot       ? " hot" :
				"");
}

/* ---- the cleaner --------------------------------------------------------- */

/* Zones of the groups the next commit removes (relocated, or emptied):
 * free once that commit is durable. */
static uint64_t nr_pending_zones(struct zcow_fs *fs)
{
	uint64_t zs = fs->dev->info.zone_size, n = 0, i;

	for (i = 0; i < fs->nr_bgs; i++) {
		const struct zcow_bg *bg = fs->bgs[i];

		if (!bg->is_deleted && (bg->is_cleaned || bg->is_removing))
			n += (bg->length + zs - 1) / zs;
	}
	return n;
}

/* Free zones data may not take: the metadata reserve and the zone held
 * for the relocation group (core/zoned.c:data_may_take_zone). */
static uint64_t reserve_zones(struct zcow_fs *fs)
{
	return META_RESERVE_ZONES + zcow_reclaim_held_zones(fs);
}

/*
 * Metadata a transaction dirties, as measured: the recent commits' size
 * (fs->commit_nodes_peak).  The worst case of the commit itself
 * (zcow_meta_need()) is what the admission keeps; this is what cleaning
 * spends in the next transaction before its commit: moving a group's
 * data copies the leaves of its file extents, checksums and extent
 * items, under uniform overwrites most of the trees.  Kept whole, not
 * less what the running transaction dirtied: after its commit the next
 * one starts clean and needs it again.
 */
static uint64_t txn_ahead_bytes(struct zcow_fs *fs)
{
	return fs->commit_nodes_peak * fs->nodesize;
}

/*
 * The zones data may open, counting @pending zones as free: those beyond
 * the reserve, and as many as the metadata room can give up while it
 * still covers the worst case of the running transaction's commit and
 * the global reserve (zcow_meta_need(); core/zoned.c:data_may_take_zone
 * asks the same per zone).
 */
static uint64_t data_zones_free(struct zcow_fs *fs, uint64_t pending)
{
	uint64_t free_z = zcow_zoned_nr_free_zones(fs) + pending;
	uint64_t res = reserve_zones(fs), zr = zcow_zoned_zone_room(fs);
	uint64_t room = 0, need = 0, n, m;

	n = free_z > res ? free_z - res : 0;
	if (!zr || zcow_meta_room(fs, &room) ||
	    zcow_meta_need(fs, 0, false, &need))
		return n;
	room += pending * zr;
	need += txn_ahead_bytes(fs);
	m = room > need ? (room - need) / zr : 0;
	return n < m ? n : m;
}

/*
 * The zones, free or pending, data should have: reclaim_high= less the
 * reserve, or CLEAN_AHEAD_ZONES.  Just in time: a victim is cleaned when
 * data is about to open a zone and has fewer, one at a time, so that a
 * victim is picked as late (with as much garbage) as possible, and the
 * space parked in cleaned groups waiting for a commit stays small.
 */
static uint64_t ahead_zones(struct zcow_fs *fs)
{
	uint64_t res = reserve_zones(fs);

	if (!fs->reclaim_high)
		return CLEAN_AHEAD_ZONES;
	return fs->reclaim_high > res + 1 ? fs->reclaim_high - res : 1;
}

uint64_t zcow_reclaim_high_zones(struct zcow_fs *fs)
{
	return reserve_zones(fs) + ahead_zones(fs);
}

/*
 * Is a commit due for the pending zones: data has HARD_RESERVE_ZONES
 * zones or fewer left to open without them?  Only then does reclaim
 * commit; else the cleaned groups go with whatever commit comes next
 * (commit_bytes, an fsync's full commit, a sync, unmount).
 */
static bool is_commit_due(struct zcow_fs *fs)
{
	return nr_pending_zones(fs) &&
	       data_zones_free(fs, 0) <= HARD_RESERVE_ZONES;
}

/*
 * Clean the best victim that fits: a data group whose live data the
 * relocation room takes, or a metadata group (a young one only with
 * @meta_ok, list_victims()) whose nodes pass the metadata admission;
 * @meta_short: metadata is what is short, so when the best data victim
 * finds no room for its metadata, try the metadata groups after it.
 * *done_ret: one was cleaned.
 */
static int clean_one(struct zcow_fs *fs, bool meta_ok, bool meta_short,
		     bool *done_ret)
{
	struct victim *v = NULL;
	uint64_t nr = 0, i, room;
	bool tried_data = false;
	int err;

	*done_ret = false;
	err = list_victims(fs, 101, 0, meta_ok, &v, &nr);
	if (err || !nr)
		goto out;
	room = zcow_reloc_room(fs);
	for (i = 0; i < nr; i++) {
		struct zcow_bg *bg = v[i].bg;

		if (bg->flags & ZCOW_BG_DATA ?
			    reloc_need(bg) > room :
			    zcow_meta_check(fs, zcow_reloc_meta_nodes(fs, bg),
					    true) != 0)
			continue;
		if (tried_data && (bg->flags & ZCOW_BG_DATA))
			continue;
		/* For the background cleaner, a metadata group only when it
		 * frees more than its copies take before the commit: its
		 * nodes are written again by that commit, and the writers
		 * go on dirtying nodes while it cleans (measured: relocated
		 * metadata per host byte on the sustained experiment 2.25
		 * -> 0.67; for the writer's pass it costs 4 % GC WA at rho
		 * 0.8 of harness/gc.py, docs/reclaim.md). */
		if (fs->cleaner != ZCOW_CLEANER_WRITER &&
		    !(bg->flags & ZCOW_BG_DATA) && live_share(bg) > 0.5)
			continue;
		log_pick(fs, bg, i, nr, v[i].score);
		err = zcow_relocate_bgs_locked(fs, &bg, 1);
		if (err != -ENOSPC) {
			*done_ret = !err;
			break;
		}
		/*
		 * No room for its copies' metadata now (what was moved stays
		 * moved).  A worse data victim would only move more for
		 * less; a metadata group needs fewer nodes than it frees,
		 * and compacting one is how metadata gets room back.
		 */
		err = 0;
		if (!meta_short)
			break;
		tried_data = true;
	}
out:
	free(v);
	return err;
}

void zcow_reclaim_data_space(struct zcow_fs *fs, uint64_t *live_ret,
			     uint64_t *space_ret, uint64_t *pending_ret)
{
	uint64_t live = 0, space = 0, pending = nr_pending_zones(fs), i;
	uint64_t free_z;

	for (i = 0; i < fs->nr_bgs; i++) {
		const struct zcow_bg *bg = fs->bgs[i];

		if (!(bg->flags & ZCOW_BG_DATA) || bg->is_deleted)
			continue;
		live += bg->used;
		if (!bg->is_cleaned && !bg->is_removing)
			space += bg->capacity;
	}
	/* The zones data may open beyond the pool the just-in-time cleaner
	 * never lets fall (it cleans when data is down to ahead_zones() - 1,
	 * before the pick takes one): those are a reserve, as the metadata
	 * reserve is, and data never writes them while it keeps up. */
	free_z = data_zones_free(fs, pending);
	if (policies[fs->reclaim].when == WHEN_JUST_IN_TIME)
		free_z -= free_z < ahead_zones(fs) - 1 ? free_z :
							  ahead_zones(fs) - 1;
	*live_ret = live;
	*space_ret = space + free_z * (zcow_zoned_zone_room(fs) / BS * BS);
	*pending_ret = pending;
}

/*
 * The zones, beyond ahead_zones(), a cleaning pass collects before its
 * commit may come: as many as that commit writes (a measured commit's
 * metadata, txn_ahead_bytes()), so that the zones a commit frees at
 * least pay for it.  Fewer, and the commits' metadata outgrows what they
 * free (uniform overwrites dirty most of the trees per commit); more,
 * and the pending zones, which data cannot use, raise the utilization
 * the cleaning runs at (measured: docs/reclaim-experiments.md).
 */
static uint64_t batch_zones(struct zcow_fs *fs)
{
	uint64_t zr = zcow_zoned_zone_room(fs);

	return zr ? div_up(txn_ahead_bytes(fs), zr) : 1;
}

/* Is cleaning due: data has fewer zones, free or pending, than
 * ahead_zones()? */
static bool is_clean_due(struct zcow_fs *fs)
{
	return data_zones_free(fs, nr_pending_zones(fs)) < ahead_zones(fs);
}

/* The zones a cleaning run collects, taken when it starts (the batch
 * follows the commits' size, which its own commits change). */
static uint64_t clean_target(struct zcow_fs *fs)
{
	return ahead_zones(fs) + batch_zones(fs);
}

/* Has a cleaning run collected @target zones, free or pending? */
static bool is_clean_done(struct zcow_fs *fs, uint64_t target)
{
	return data_zones_free(fs, nr_pending_zones(fs)) >= target;
}

/* What one step of the cleaner did. */
enum clean_step {
	STEP_NONE,		/* nothing fits: the run ends */
	STEP_COMMITTED,		/* the pending zones, for metadata's room */
	STEP_CLEANED,		/* one victim */
};

/*
 * One step of a cleaning run: one victim cleaned, or the pending zones
 * committed.  Relocation's copies take free zones while the zones they
 * empty are only pending: when metadata could no longer give a zone away
 * (its room would not cover the next transaction), the pending zones are
 * committed first, unless the relocation group still has room for the
 * next victim (a commit's metadata may finish its zone, wasting it), and
 * at most 4 times in a run (*@nr_commits).  @meta_short: metadata is
 * what is short (young metadata groups may be victims too).
 */
static int clean_step(struct zcow_fs *fs, bool meta_short,
		      uint64_t *nr_commits, enum clean_step *step_ret)
{
	uint64_t pending = nr_pending_zones(fs);
	/* Metadata groups too when metadata is what data waits for: its
	 * room could not give data a zone. */
	bool meta_ok = meta_short ||
		       !zcow_meta_may_give(fs, zcow_zoned_zone_room(fs));
	bool done = false;
	int err;

	*step_ret = STEP_NONE;
	if (meta_ok && pending && *nr_commits < 4 &&
	    zcow_reclaim_held_zones(fs)) {
		/* ORDER: the cleaned groups' zones are reset after this
		 * commit's superblock (commit_reset_removed). */
		(*nr_commits)++;
		*step_ret = STEP_COMMITTED;
		return zcow_files_commit_locked(fs);
	}
	err = clean_one(fs, meta_short, meta_ok, &done);
	zlog(ZLOG_DEBUG, TAG,
	     "clean (%s): %s; free %" PRIu64 ", pending %" PRIu64
	     " before: %d", meta_ok ? "metadata short" : "data",
	     done ? "one group" : "nothing fits",
	     zcow_zoned_nr_free_zones(fs), pending, err);
	if (done)
		*step_ret = STEP_CLEANED;
	return err;
}

/*
 * The cleaner of the just-in-time policies, run by the writer (cleaner=
 * writer, or any writer that ran short).  It starts when cleaning is due
 * (@when SHORT or META_SHORT: always, and cleans at least one group) and
 * takes one step at a time until the pending zones also pay for the
 * commit that frees them (is_clean_done()).  At the end it commits only
 * if data is down to HARD_RESERVE_ZONES zones; else the cleaned groups
 * go with whatever commit comes next.
 */
static int clean_jit(struct zcow_fs *fs, enum zcow_reclaim_when when)
{
	bool is_short = when == ZCOW_RECLAIM_SHORT ||
			when == ZCOW_RECLAIM_META_SHORT;
	uint64_t n, nr_commits = 0, target;
	bool done = false;
	int err = 0;

	if (!is_short && !is_clean_due(fs))
		return 0;
	target = clean_target(fs);
	for (n = 0; n < MAX_VICTIMS && !err; n++) {
		enum clean_step step;

		if ((!is_short || done) && is_clean_done(fs, target))
			break;
		err = clean_step(fs, when == ZCOW_RECLAIM_META_SHORT,
				 &nr_commits, &step);
		if (step == STEP_NONE)
			break;
		done = done || step == STEP_CLEANED;
	}
	if (!err && !is_short && is_commit_due(fs))
		err = zcow_files_commit_locked(fs);
	return err;
}

/*
 * Clean every victim of @usage (balance, <= 100) or of the threshold
 * policy (101) that fits, in policy order, in rounds until none is left,
 * each round ending with a commit, so that the next finds the zones reset
 * and the moves durable.
 */
static int clean_all(struct zcow_fs *fs, uint32_t usage, uint64_t clock,
		     uint64_t max_rounds)
{
	uint64_t round;
	int err = 0;

	for (round = 0; round < max_rounds; round++) {
		struct victim *v = NULL;
		struct zcow_bg **pick = NULL;
		uint64_t nr = 0, n = 0, i, room;

		err = list_victims(fs, usage, clock, true, &v, &nr);
		if (!err && nr && !(pick = malloc(nr * sizeof(*pick))))
			err = -ENOMEM;
		room = zcow_reloc_room(fs);
		for (i = 0; !err && i < nr; i++) {
			struct zcow_bg *bg = v[i].bg;

			if (bg->flags & ZCOW_BG_DATA) {
				if (reloc_need(bg) > room)
					continue;
				room -= reloc_need(bg);
			} else if (zcow_meta_check(
					   fs, zcow_reloc_meta_nodes(fs, bg),
					   true)) {
				continue;	/* no room for its nodes now */
			}
			log_pick(fs, bg, n, nr, v[i].score);
			pick[n++] = bg;
		}
		if (!err && n)
			err = zcow_relocate_bgs_locked(fs, pick, n);
		else if (!err && nr)
			err = -ENOSPC;
		free(pick);
		free(v);
		if (err == -ENOSPC)	/* none fits the room relocation has */
			return usage <= 100 ? err : 0;
		if (err || !n)
			return err;
		err = zcow_files_commit_locked(fs);
		if (err)
			return err;
	}
	return usage <= 100 ? -EAGAIN : 0;
}

static int cleaner_step_locked(struct zcow_fs *fs, bool by_cleaner);

/* Nothing changed since a run found nothing to do (generation, bytes
 * freed and runs as they were then)? */
static bool is_idle(struct zcow_fs *fs)
{
	return fs->reclaim_idle_gen == fs->generation &&
	       fs->reclaim_idle_freed == fs->freed_bytes &&
	       fs->reclaim_idle_passes == fs->rstats.nr_passes;
}

/* After a run that started with @passes passes: remember an idle
 * state (nothing relocated, @when not META_SHORT). */
static void note_idle(struct zcow_fs *fs, enum zcow_reclaim_when when,
		      uint64_t passes)
{
	if (when != ZCOW_RECLAIM_META_SHORT &&
	    fs->rstats.nr_passes == passes) {
		fs->reclaim_idle_gen = fs->generation;
		fs->reclaim_idle_freed = fs->freed_bytes;
	}
	fs->reclaim_idle_passes = fs->rstats.nr_passes;
}

/*
 * With a background cleaner, a writer's hook (@when AT_PICK or
 * AT_COMMIT) only says that a run is due and wakes the cleaner; the
 * writer cleans itself only when the cleaner fell behind: data is down
 * to HARD_RESERVE_ZONES zones, pending ones counted.  Returns true when
 * the writer goes on without cleaning.
 */
static bool hand_to_cleaner(struct zcow_fs *fs, const struct policy *p,
			    enum zcow_reclaim_when when)
{
	if (fs->cleaner == ZCOW_CLEANER_WRITER ||
	    (when != ZCOW_RECLAIM_AT_PICK && when != ZCOW_RECLAIM_AT_COMMIT))
		return false;
	if (p->when == WHEN_OVER_THRESHOLD) {
		fs->cleaner_due = true;		/* the clean-up after a commit */
	} else if (!fs->cleaner_due &&
		   (is_clean_due(fs) || is_commit_due(fs))) {
		fs->cleaner_due = true;
		fs->cleaner_commits = 0;
		fs->cleaner_target = clean_target(fs);
	}
	if (fs->cleaner_due && fs->has_cleaner_thread)
		pthread_cond_signal(&fs->cleaner_cond);
	if (p->when == WHEN_OVER_THRESHOLD)
		return true;
	/*
	 * A writer does not sleep here for the thread: this is the middle of
	 * its data pick, and letting go of the fs lock there let other
	 * writers and the thread interleave with it (measured: writes off
	 * the write pointer and a commit without room, 32 writers on a full
	 * device).  At the hard reserve it takes one step itself; in
	 * simulated time the scheduler holds the jobs back instead
	 * (zcow_cleaner_behind()).
	 */
	return !fs->cleaner_due ||
	       data_zones_free(fs, nr_pending_zones(fs)) > HARD_RESERVE_ZONES;
}

int zcow_reclaim_locked(struct zcow_fs *fs, enum zcow_reclaim_when when)
{
	const struct policy *p;
	uint64_t passes;
	int err;

	if (fs->reclaim == ZCOW_RECLAIM_OFF ||
	    fs->reclaim == ZCOW_RECLAIM_DEFAULT || fs->in_reclaim ||
	    fs->read_only || fs->error || !fs->has_trees || !fs->files)
		return 0;
	p = &policies[fs->reclaim];
	if (p->when == WHEN_OVER_THRESHOLD && when != ZCOW_RECLAIM_AT_COMMIT)
		return 0;	/* Linux 5.13: after a commit only */
	/* Nothing changed since a run found nothing to do (metadata
	 * short: metadata groups may be victims, always look). */
	if (when != ZCOW_RECLAIM_META_SHORT && is_idle(fs))
		return 0;
	if (hand_to_cleaner(fs, p, when))
		return 0;
	fs->rstats.writer_runs++;
	/* The cleaner fell behind: this writer takes one of its steps. */
	if (fs->cleaner != ZCOW_CLEANER_WRITER &&
	    (when == ZCOW_RECLAIM_AT_PICK || when == ZCOW_RECLAIM_AT_COMMIT))
		return cleaner_step_locked(fs, false);
	passes = fs->rstats.nr_passes;
	fs->in_reclaim = true;
	if (p->when == WHEN_OVER_THRESHOLD)	/* and commit, as btrfs's
						 * relocation does */
		err = clean_all(fs, 101, 0, MAX_ROUNDS);
	else
		err = clean_jit(fs, when);
	fs->in_reclaim = false;
	note_idle(fs, when, passes);
	return err;
}

/* ---- the background cleaner ---------------------------------------------- */

/*
 * One step of the background cleaner (fs->files->lock held): threshold's
 * clean-up after a commit whole; for the just-in-time policies one
 * clean_step(), then the commit if data is down to HARD_RESERVE_ZONES
 * zones.  The run ends (fs->cleaner_due false) once it has collected
 * enough (is_clean_done()) or nothing fits.  @by_cleaner: the cleaner
 * took it (counted in cleaner_steps), not a writer that found data at
 * the hard reserve (counted in writer_runs by its caller).
 */
static int cleaner_step_locked(struct zcow_fs *fs, bool by_cleaner)
{
	const struct policy *p = &policies[fs->reclaim];
	enum clean_step step = STEP_NONE;
	uint64_t passes = fs->rstats.nr_passes;
	int err = 0;

	if (!fs->cleaner_due)
		return 0;
	if (fs->in_reclaim || fs->read_only || fs->error ||
	    p->when == WHEN_NEVER) {
		fs->cleaner_due = false;
		return 0;
	}
	fs->in_reclaim = true;
	if (p->when == WHEN_OVER_THRESHOLD) {
		err = clean_all(fs, 101, 0, MAX_ROUNDS);
		if (fs->rstats.nr_passes != passes)
			step = STEP_CLEANED;
		fs->cleaner_due = false;
	} else {
		if (!is_clean_done(fs, fs->cleaner_target))
			err = clean_step(fs, false, &fs->cleaner_commits,
					 &step);
		/* Data is down to the hard reserve: the writers wait
		 * (zcow_cleaner_behind()) while the run collects its
		 * batch, then one commit frees it, as the writer's pass
		 * does (a commit per victim would cost a commit's
		 * metadata per zone). */
		if (!err && step != STEP_COMMITTED && is_commit_due(fs) &&
		    (step == STEP_NONE ||
		     is_clean_done(fs, fs->cleaner_target))) {
			err = zcow_files_commit_locked(fs);
			if (step == STEP_NONE)
				step = STEP_COMMITTED;
		}
		if (step == STEP_NONE ||
		    is_clean_done(fs, fs->cleaner_target))
			fs->cleaner_due = false;
	}
	fs->in_reclaim = false;
	if (step != STEP_NONE && by_cleaner)	/* a writer's: writer_runs */
		fs->rstats.cleaner_steps++;
	note_idle(fs, ZCOW_RECLAIM_AT_PICK, passes);
	if (err == -ENOSPC) {	/* nothing fits now; a writer that runs
				 * short cleans and commits itself */
		fs->cleaner_due = false;
		err = 0;
	}
	return err;
}

bool zcow_cleaner_due(struct zcow_fs *fs)
{
	return fs->files && fs->cleaner != ZCOW_CLEANER_WRITER &&
	       fs->cleaner_due;
}

bool zcow_cleaner_behind(struct zcow_fs *fs)
{
	return zcow_cleaner_due(fs) &&
	       policies[fs->reclaim].when == WHEN_JUST_IN_TIME &&
	       (data_zones_free(fs, nr_pending_zones(fs)) <=
			HARD_RESERVE_ZONES + 1 ||
		is_commit_due(fs));
}

int zcow_cleaner_step(struct zcow_fs *fs)
{
	int err;

	if (!fs->files)
		return 0;
	pthread_mutex_lock(&fs->files->lock);
	err = cleaner_step_locked(fs, true);
	pthread_mutex_unlock(&fs->files->lock);
	return err;
}

/* The thread of ZCOW_CLEANER_THREAD: a step per hold of the fs lock,
 * while a run is due; asleep on fs->cleaner_cond otherwise. */
static void *cleaner_main(void *arg)
{
	struct zcow_fs *fs = arg;
	struct zcow_files *fl = fs->files;
	int err;

	pthread_mutex_lock(&fl->lock);
	while (!fs->cleaner_stop) {
		if (!fs->cleaner_due) {
			pthread_cond_wait(&fs->cleaner_cond, &fl->lock);
			continue;
		}
		err = cleaner_step_locked(fs, true);
		if (err) {
			zlog_err(TAG, "background cleaner: a step failed: %d",
				 err);
			fs->cleaner_due = false;
		}
		/* the writers get the lock between two steps */
		pthread_mutex_unlock(&fl->lock);
		sched_yield();
		pthread_mutex_lock(&fl->lock);
	}
	pthread_mutex_unlock(&fl->lock);
	return NULL;
}

int zcow_cleaner_start(struct zcow_fs *fs, int cleaner)
{
	int err;

	if (cleaner < ZCOW_CLEANER_WRITER || cleaner > ZCOW_CLEANER_STEPS)
		return -EINVAL;
	fs->cleaner = fs->read_only ? ZCOW_CLEANER_WRITER : cleaner;
	if (fs->cleaner != ZCOW_CLEANER_THREAD)
		return 0;
	pthread_cond_init(&fs->cleaner_cond, NULL);
	fs->cleaner_stop = false;
	err = -pthread_create(&fs->cleaner_thread, NULL, cleaner_main, fs);
	if (err) {
		pthread_cond_destroy(&fs->cleaner_cond);
		fs->cleaner = ZCOW_CLEANER_WRITER;
		return err;
	}
	fs->has_cleaner_thread = true;
	return 0;
}

int zcow_set_cleaner(struct zcow_fs *fs, int cleaner)
{
	if (!fs->files)
		return cleaner == ZCOW_CLEANER_WRITER ? 0 : -EINVAL;
	zcow_cleaner_stop(fs);
	return zcow_cleaner_start(fs, cleaner);
}

void zcow_cleaner_stop(struct zcow_fs *fs)
{
	if (!fs->has_cleaner_thread)
		return;
	pthread_mutex_lock(&fs->files->lock);
	fs->cleaner_stop = true;
	pthread_cond_signal(&fs->cleaner_cond);
	pthread_mutex_unlock(&fs->files->lock);
	pthread_join(fs->cleaner_thread, NULL);
	pthread_cond_destroy(&fs->cleaner_cond);
	fs->has_cleaner_thread = false;
	fs->cleaner = ZCOW_CLEANER_WRITER;
	fs->cleaner_due = false;
}

int zcow_reclaim_commit_locked(struct zcow_fs *fs, enum zcow_reclaim_when when)
{
	int err;

	if (!zcow_zoned_has_reclaimable(fs)) {
		err = zcow_reclaim_locked(fs, when);
		if (err)
			return err;
		if (!zcow_zoned_has_reclaimable(fs))
			return -ENOSPC;
	}
	/* ORDER: the commit removes the emptied groups; their zones are
	 * reset after its superblock (commit_reset_removed). */
	return zcow_files_commit_locked(fs);
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
	d->cleaner_steps = now->cleaner_steps - base->cleaner_steps;
	d->writer_runs = now->writer_runs - base->writer_runs;
}

int zcow_balance(struct zcow_fs *fs, uint32_t usage,
		 struct zcow_reclaim_stats *stats_ret)
{
	struct zcow_reclaim_stats before;
	int err;

	if (usage > 100)
		return -EINVAL;
	if (fs->read_only)
		return -EROFS;
	if (!fs->has_trees || !fs->files)
		return -EINVAL;
	pthread_mutex_lock(&fs->files->lock);
	before = fs->rstats;
	fs->in_reclaim = true;
	err = clean_all(fs, usage, fs->alloc_clock, MAX_ROUNDS * 16);
	fs->in_reclaim = false;
	if (stats_ret)
		zcow_reclaim_stats_sub(stats_ret, &fs->rstats, &before);
	pthread_mutex_unlock(&fs->files->lock);
	return err;
}
