// SPDX-License-Identifier: MIT
/*
 * The zoned space policy (core/zoned.h): free zones, metadata headroom,
 * the active data slots, zone finish, the tree-log group, and how data
 * reaches its zone.
 */
#include "zoned.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "files.h"
#include "grow.h"
#include "reclaim.h"
#include "zlog.h"

#define TAG "zoned"
#define BS ZCOW_SECTORSIZE

/* ---- zone counts ----------------------------------------------------- */

uint64_t zcow_zoned_zone_room(struct zcow_fs *fs)
{
	uint64_t cap = 0;
	unsigned int d;

	/* the smallest zone capacity of the devices */
	for (d = 0; d < fs->nr_devs; d++) {
		const struct zdev_info *info = &fs->devs[d].zdev->info;
		uint64_t c = info->is_zoned && info->nr_conv < info->nr_zones ?
				     info->zone_capacity :
				     info->zone_size;

		if (!d || c < cap)
			cap = c;
	}
	return cap - cap % fs->nodesize;
}

uint64_t zcow_zoned_nr_free_zones(struct zcow_fs *fs)
{
	uint64_t nz = fs->writable_bytes / fs->dev->info.zone_size;

	return nz > fs->nr_bgs ? nz - fs->nr_bgs : 0;
}

/* ---- metadata headroom (docs/space.md) -------------------------------- */

int zcow_meta_room(struct zcow_fs *fs, uint64_t *bytes_ret)
{
	uint64_t room = 0, free_z = zcow_zoned_nr_free_zones(fs), i;
	bool sys_held = true;
	int ret;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (!zcow_bg_has_room(bg, ZCOW_BG_METADATA, fs->nodesize) ||
		    bg->start == fs->treelog_bg)
			continue;
		room += (bg->capacity - bg->alloc_offset) / fs->nodesize *
			fs->nodesize;
	}
	ret = zcow_sys_zone_held(fs, &sys_held);
	if (ret)
		return ret;
	if (sys_held)
		free_z = free_z ? free_z - 1 : 0;
	/* The zone held for the data relocation group (core/reclaim.h). */
	free_z -= free_z < zcow_reclaim_held_zones(fs) ?
			  free_z :
			  zcow_reclaim_held_zones(fs);
	*bytes_ret = room + free_z * zcow_zoned_zone_room(fs);
	return 0;
}

int zcow_meta_check(struct zcow_fs *fs, uint64_t op_nodes,
		    bool may_use_global)
{
	uint64_t room, need;
	int ret;

	if (fs->read_only)
		return -EROFS;
	if (!fs->has_trees)
		return 0;
	ret = zcow_meta_room(fs, &room);
	if (!ret)
		ret = zcow_meta_need(fs, op_nodes, may_use_global, &need);
	if (ret)
		return ret;
	return room >= need ? 0 : -ENOSPC;
}

bool zcow_meta_may_give(struct zcow_fs *fs, uint64_t bytes)
{
	uint64_t room, need;

	if (!fs->has_trees)
		return true;
	if (zcow_meta_room(fs, &room) || zcow_meta_need(fs, 0, false, &need))
		return false;
	return room >= bytes && room - bytes >= need;
}

bool zcow_zoned_has_reclaimable(struct zcow_fs *fs)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->pinned ||
		    (fs->bgs[i]->is_removing && !fs->bgs[i]->is_deleted))
			return true;
	return false;
}

/*
 * May a new data chunk take a free zone?  Not one of the last
 * META_RESERVE_ZONES, and only while the metadata room left without it
 * still covers the commit and the global reserve (zcow_meta_may_give()).
 */
static bool data_may_take_zone(struct zcow_fs *fs)
{
	return zcow_zoned_nr_free_zones(fs) >
		       META_RESERVE_ZONES + zcow_reclaim_held_zones(fs) &&
	       zcow_meta_may_give(fs, zcow_zoned_zone_room(fs));
}

uint64_t zcow_zoned_reloc_zones(struct zcow_fs *fs)
{
	uint64_t free_z = zcow_zoned_nr_free_zones(fs);
	uint64_t keep = META_RESERVE_ZONES + 1;

	if (!zcow_zoned_reloc_may_take_zone(fs))
		return 0;
	return free_z > keep ? free_z - keep :
			       (zcow_reclaim_held_zones(fs) ? 1 : 0);
}

bool zcow_zoned_reloc_may_take_zone(struct zcow_fs *fs)
{
	if (fs->reclaim == ZCOW_RECLAIM_OFF)
		return data_may_take_zone(fs);
	/* The zone held back for it, or one data may take. */
	if (zcow_reclaim_held_zones(fs))
		return zcow_zoned_nr_free_zones(fs) >= 1;
	return data_may_take_zone(fs);
}

/* ---- active zones ------------------------------------------------------ */

uint32_t zcow_zoned_data_zones(struct zcow_fs *fs, uint32_t want,
			       bool has_treelog)
{
	const struct zdev_info *info = &fs->dev->info;
	uint32_t limit = info->max_active, n = want ? want : 4, avail;
	/* everything but data, with room for the next metadata group */
	uint32_t nondata = zcow_active_zones_needed(fs->dev, fs->placement,
						    has_treelog, 0) + 1;

	/* The data relocation group is written while data groups are. */
	if (fs->reclaim != ZCOW_RECLAIM_OFF)
		nondata++;

	if (info->max_open && (!limit || info->max_open < limit))
		limit = info->max_open;
	if (n > ZCOW_MAX_DATA_ZONES) {
		zlog_warn(TAG, "data_zones=%u: at most %u", n,
			  ZCOW_MAX_DATA_ZONES);
		n = ZCOW_MAX_DATA_ZONES;
	}
	if (limit) {
		avail = limit > nondata ? limit - nondata : 1;
		if (n > avail) {
			if (want)
				zlog_warn(TAG, "data_zones=%u: the device allows %u active zones, using %u",
					  want, limit, avail);
			n = avail;
		}
	}
	return n;
}

/* Is @bg the block group of a data slot other than @slot? */
static bool is_other_slot(struct zcow_files *fl, const struct zcow_bg *bg,
			  uint32_t slot)
{
	uint32_t i;

	for (i = 0; i < fl->data_zones; i++)
		if (i != slot && fl->data_active[i] == bg->start)
			return true;
	return false;
}

/*
 * A sequential data group allocated to its capacity (room for less than
 * a block) with writes still in flight: its zone turns FULL only when the
 * last of them lands, until then it holds an active zone.
 */
static bool is_filling(const struct zcow_bg *b)
{
	return (b->flags & ZCOW_BG_TYPE_MASK) == ZCOW_BG_DATA && b->is_seq &&
	       b->reserved && !zcow_bg_has_room(b, ZCOW_BG_DATA, BS);
}

/*
 * Data block groups being filled (active zones): sequential, not full,
 * written to or held by a slot; or allocated full with writes in flight.
 */
static uint32_t nr_open_data_bgs(struct zcow_fs *fs)
{
	uint32_t n = 0;
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *b = fs->bgs[i];

		if ((zcow_bg_has_room(b, ZCOW_BG_DATA, BS) && b->is_seq &&
		     (b->alloc_offset || is_other_slot(fs->files, b,
						       UINT32_MAX))) ||
		    is_filling(b))
			n++;
	}
	return n;
}

/* Does a data group hold an active zone only until its writes land? */
static bool has_filling(struct zcow_fs *fs)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (is_filling(fs->bgs[i]))
			return true;
	return false;
}

/*
 * Data groups with room for less than one block hold an active zone they
 * can never use: finish them (btrfs zoned finishes a group to free an active
 * zone: btrfs_zone_finish), so a new group can be opened.  A group whose
 * allocation offset reached its capacity needs none: its zone turns FULL
 * on the device with the last write of it.  Only a group with no write in
 * flight (nothing reserved); its unwritten tail becomes zone_unusable.
 */
static void zone_finish_short(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;
	uint64_t i;
	uint32_t s;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *b = fs->bgs[i];

		if (!zcow_bg_has_room(b, ZCOW_BG_DATA, 1) ||
		    zcow_bg_has_room(b, ZCOW_BG_DATA, BS) || !b->is_seq ||
		    b->reserved || !b->alloc_offset)
			continue;
		/* ORDER: nothing; the zone only stops taking writes, what it
		 * holds stays (a crash sees it FULL: offset = capacity). */
		if (zcow_bg_finish_zone(fs, b))
			continue;
		b->zone_unusable += b->capacity - b->alloc_offset;
		b->alloc_offset = b->capacity;
		for (s = 0; s < fl->data_zones; s++)
			if (fl->data_active[s] == b->start)
				fl->data_active[s] = 0;
	}
}

/* ---- data placement ---------------------------------------------------- */

/*
 * One pass of zcow_zoned_pick_data_bg() (the rule is in zoned.h): the
 * group, or NULL when none has room for a block and no zone may be opened.
 */
static int pick_once(struct zcow_fs *fs, uint32_t slot,
		     struct zcow_bg **bg_ret)
{
	struct zcow_files *fl = fs->files;
	struct zcow_bg *bg = NULL;
	uint64_t i;
	int err;

	if (fl->data_active[slot]) {
		bg = zcow_bg_lookup(fs, fl->data_active[slot]);
		if (!zcow_bg_has_room(bg, ZCOW_BG_DATA, BS))
			bg = NULL;
	}
	/* A group whose chunk is committed first: an fsync may log data
	 * there (core/tree-log.c); then one of the running transaction. */
	for (i = 0; !bg && i < fs->nr_bgs; i++)
		if (zcow_bg_has_room(fs->bgs[i], ZCOW_BG_DATA, BS) &&
		    !fs->bgs[i]->is_new &&
		    !is_other_slot(fl, fs->bgs[i], slot))
			bg = fs->bgs[i];
	for (i = 0; !bg && i < fs->nr_bgs; i++)
		if (zcow_bg_has_room(fs->bgs[i], ZCOW_BG_DATA, BS) &&
		    !is_other_slot(fl, fs->bgs[i], slot))
			bg = fs->bgs[i];
	if (!bg)
		zone_finish_short(fs);
	if (!bg && data_may_take_zone(fs) &&
	    nr_open_data_bgs(fs) < fl->data_zones) {
		err = zcow_chunk_alloc(fs, ZCOW_BG_DATA, &bg);
		if (err && err != -ENOSPC)
			return err;
		if (!err && !zcow_bg_has_room(bg, ZCOW_BG_DATA, BS))
			bg = NULL;
	}
	for (i = 0; !bg && i < fs->nr_bgs; i++)
		if (zcow_bg_has_room(fs->bgs[i], ZCOW_BG_DATA, BS))
			bg = fs->bgs[i];
	*bg_ret = bg;
	return 0;
}

/*
 * Data chunks one transaction ahead.  A data group allocated in the
 * running transaction has no chunk item yet: an fsync whose data lands
 * there cannot be logged (replay could not map it) and commits instead.
 * While fsyncs use the tree-log, keep one empty data group beyond those
 * the slots fill, allocated now and so committed by the time a slot
 * moves on to it (pick_once() prefers committed groups).  An empty group
 * holds no active zone on the device until written (nr_open_data_bgs()
 * counts it only once a slot holds it), and it takes a free zone only as
 * a slot's next chunk would: within data_may_take_zone(), with one more
 * free zone left beyond the metadata reserve.
 */
static void keep_spare(struct zcow_fs *fs)
{
	uint64_t i;
	int err;

	if (!zcow_log_is_wanted(fs))
		return;
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *b = fs->bgs[i];

		if (zcow_bg_has_room(b, ZCOW_BG_DATA, BS) &&
		    !b->alloc_offset && !is_other_slot(fs->files, b,
							UINT32_MAX))
			return;	/* a spare already */
	}
	if (zcow_zoned_nr_free_zones(fs) <=
		    META_RESERVE_ZONES + zcow_reclaim_held_zones(fs) + 1 ||
	    !data_may_take_zone(fs))
		return;
	/* Only ahead of need: the write that picked goes on without it. */
	err = zcow_chunk_alloc(fs, ZCOW_BG_DATA, NULL);
	if (err && err != -ENOSPC)
		zlog_warn(TAG, "data chunk ahead of the slots: %d", err);
}

/*
 * The slot of a write of inode @ino.  hotcold=on splits the slots: the
 * first data_zones - data_zones / 2 take cold writes, the rest hot ones,
 * so separation costs no active zone beyond the data_zones budget.
 */
static uint32_t data_slot(const struct zcow_files *fl, uint64_t ino,
			  bool is_hot)
{
	uint32_t hot = fl->data_zones / 2, cold = fl->data_zones - hot;

	if (!fl->hotcold || !hot)
		return (uint32_t)(ino % fl->data_zones);
	return is_hot ? cold + (uint32_t)(ino % hot) : (uint32_t)(ino % cold);
}

int zcow_zoned_pick_data_bg(struct zcow_fs *fs, uint64_t ino, bool is_hot,
			    uint64_t len, struct zcow_bg **bg_ret,
			    uint64_t *len_ret)
{
	struct zcow_files *fl = fs->files;
	uint32_t slot = data_slot(fl, ino, is_hot);
	int attempt, err;

	if (fs->read_only)
		return -EROFS;
	err = zcow_reclaim_locked(fs, ZCOW_RECLAIM_AT_PICK);
	if (err)
		return err;
	for (attempt = 0;;) {
		struct zcow_bg *bg;

		err = pick_once(fs, slot, &bg);
		if (err)
			return err;
		if (bg) {
			uint64_t room = (bg->capacity - bg->alloc_offset) /
					BS * BS;

			fl->data_active[slot] = bg->start;
			if (!bg->alloc_offset)
				bg->is_hot = fl->hotcold && is_hot;
			keep_spare(fs);
			*bg_ret = bg;
			*len_ret = len < room ? len : room;
			return 0;
		}
		/*
		 * The active zones are held by groups allocated full whose
		 * last writes are in flight: wait for one to land (btrfs
		 * waits for a zone finish, BTRFS_FS_NEED_ZONE_FINISH).  Every
		 * write in flight ends with a broadcast of fl->cond.
		 */
		if (has_filling(fs)) {
			pthread_cond_wait(&fl->cond, &fl->lock);
			if (fs->read_only)
				return -EROFS;
			continue;
		}
		if (attempt++ >= 4)
			return -ENOSPC;
		if (!zcow_zoned_has_reclaimable(fs)) {
			/* Nothing a commit frees: relocate (reclaim). */
			uint64_t before = zcow_zoned_nr_free_zones(fs);

			err = zcow_reclaim_locked(fs, ZCOW_RECLAIM_SHORT);
			if (err)
				return err;
			if (zcow_zoned_nr_free_zones(fs) <= before)
				return -ENOSPC;
			continue;
		}
		/* Flush: pinned space becomes unusable, whole unusable
		 * groups are removed and their zones reset. */
		err = zcow_files_commit_locked(fs);
		if (err)
			return err;
	}
}

/* ---- hot and cold (hotcold=on) ------------------------------------------ */

/*
 * Separation of user writes by predicted lifetime, after SepBIT (Wang et
 * al., FAST'22): a block that replaces a block which lived only briefly
 * is itself likely to live briefly.  Without it, one slot takes every
 * write of a file: hot blocks (rewritten soon) and cold ones fill the
 * same groups, and a group reclaim picks carries the cold blocks, live,
 * into the relocation group again and again.  With it, hot groups empty
 * before reclaim takes them when hot blocks die faster than reclaim comes
 * round (zipf), and cold groups stay nearly full.
 *
 * "Briefly" is not a constant: a block is hot when the data it replaces
 * is younger than the mean age of the data replaced in the last window
 * between two commits that saw overwrites (alloc clock bytes), so the
 * threshold follows the workload and the write amplification.  The age
 * of the replaced data comes from its file extent's generation (the
 * transaction that wrote it, kept through relocation) and the clock noted
 * when that transaction began.  Two thresholds were measured first and
 * dropped (docs/reclaim-experiments.md, section 2): SepBIT's, the mean
 * lifetime of the last reset hot groups (a group lives from its first
 * write to its reclaim, shorter here than a hot block's lifetime: half
 * the hot writes went cold), and ages dated by the replaced block's group
 * (relocation re-dates cold data, so the mean age was a fifth of the
 * true one).  The clocks are in memory, those of the newest
 * ZCOW_HOTCOLD_MAX_GENS transactions: after a mount all older data, and
 * data of a transaction dropped, counts as written at clock 0.
 */
/* Alloc clock bytes since transaction @gen began (0 before the mount or
 * dropped: the oldest). */
static uint64_t data_age(const struct zcow_fs *fs, uint64_t gen)
{
	const struct zcow_files *fl = fs->files;
	uint64_t born = 0;

	if (gen > fl->gen_base && gen - fl->gen_base - 1 < fl->nr_gen)
		born = fl->gen_clock[gen - fl->gen_base - 1];
	return fs->alloc_clock - born;
}

bool zcow_zoned_overwrite_is_hot(struct zcow_fs *fs, uint64_t gen)
{
	return data_age(fs, gen) < fs->files->hot_age;
}

void zcow_zoned_note_overwrite(struct zcow_fs *fs, uint64_t gen)
{
	struct zcow_files *fl = fs->files;
	uint64_t age = data_age(fs, gen);

	fl->ow_age_sum += (double)age;
	fl->nr_ow++;
	fl->nr_ow_hot += age < fl->hot_age;
}

void zcow_zoned_note_transid(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;

	/* gen_clock[i] is transaction gen_base + 1 + i; the first one (the
	 * mount's) began at clock 0. */
	if (!fl || !fl->hotcold)
		return;
	if (fl->nr_gen == ZCOW_HOTCOLD_MAX_GENS) {
		/* The older half goes: its data counts as written before
		 * the mount (the oldest, cold). */
		uint64_t half = ZCOW_HOTCOLD_MAX_GENS / 2;

		memmove(fl->gen_clock, fl->gen_clock + half,
			(fl->nr_gen - half) * sizeof(*fl->gen_clock));
		fl->nr_gen -= half;
		fl->gen_base += half;
	}
	if (ZCOW_GROW_ONE(&fl->gen_clock, fl->nr_gen, &fl->cap_gen))
		return;
	fl->gen_clock[fl->nr_gen++] = fs->alloc_clock;
}

void zcow_zoned_note_commit(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;

	if (!fl || !fl->hotcold || !fl->nr_ow)
		return;
	fl->hot_age = (uint64_t)(fl->ow_age_sum / (double)fl->nr_ow);
	zlog(ZLOG_DEBUG, TAG, "hot threshold %" PRIu64 " (%" PRIu64
	     " overwrites, %" PRIu64 " hot)", fl->hot_age, fl->nr_ow,
	     fl->nr_ow_hot);
	fl->ow_age_sum = 0;
	fl->nr_ow = 0;
	fl->nr_ow_hot = 0;
}

bool zcow_zoned_use_append(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return bg->is_seq && fs->files->zone_append;
}

int zcow_zoned_write_data(struct zcow_fs *fs, struct zcow_bg *bg,
			  uint64_t logical, const void *buf, uint64_t len,
			  uint64_t *landed_ret)
{
	uint64_t where;
	int err;

	if (zcow_zoned_use_append(fs, bg)) {
		err = zcow_bg_append(fs, bg, buf, len, 0, ZDEV_CLASS_DATA,
				     &where);
		*landed_ret = bg->start + where;
	} else {
		err = zcow_bg_write(fs, bg, buf, len, logical - bg->start, 0,
				    ZDEV_CLASS_DATA);
		*landed_ret = logical;
	}
	return err;
}

/* ---- the tree-log group (seed 010) ------------------------------------ */

int zcow_treelog_bg_prepare(struct zcow_fs *fs, uint64_t room, bool may_alloc)
{
	struct zcow_bg *bg = NULL;
	uint64_t i;

	if (fs->read_only)
		return -EROFS;
	if (fs->treelog_bg) {
		bg = zcow_bg_lookup(fs, fs->treelog_bg);
		if (bg && zcow_bg_has_room(bg, ZCOW_BG_METADATA, room))
			return 0;
		/* Full, read-only or removed: a new one (as the seed). */
		fs->treelog_bg = 0;
		bg = NULL;
	}
	for (i = 0; i < fs->nr_bgs && !bg; i++) {
		struct zcow_bg *b = fs->bgs[i];

		/* A group in use must not become the log's (seed 010). */
		if (zcow_bg_has_room(b, ZCOW_BG_METADATA, room) && !b->used &&
		    !b->reserved && !b->pinned)
			bg = b;
	}
	/* The log's group leaves the metadata room: only while the running
	 * transaction can still commit (else fsync commits instead). */
	if (bg && !zcow_meta_may_give(fs, (bg->capacity - bg->alloc_offset) /
						  fs->nodesize * fs->nodesize))
		return -ENOSPC;
	if (!bg && !may_alloc)
		return -ENOSPC;
	if (!bg && !zcow_meta_may_give(fs, zcow_zoned_zone_room(fs)))
		return -ENOSPC;
	if (!bg) {
		int ret = zcow_chunk_alloc(fs, ZCOW_BG_METADATA, &bg);

		if (ret)
			return ret;
	}
	fs->treelog_bg = bg->start;
	return 0;
}

int zcow_bg_reserve_treelog(struct zcow_fs *fs, uint64_t len,
			    uint64_t *logical_ret)
{
	int ret = zcow_treelog_bg_prepare(fs, len, true);

	if (ret)
		return ret;
	return zcow_bg_reserve_in(fs, zcow_bg_lookup(fs, fs->treelog_bg), len,
				  logical_ret);
}
