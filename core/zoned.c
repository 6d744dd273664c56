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
#include "zcow_super.h"
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

/* zcow_meta_room() with the groups read from @mg (zcow_meta_groups()). */
static int meta_room_in(struct zcow_fs *fs, const struct zcow_meta_groups *mg,
			uint64_t *bytes_ret)
{
	uint64_t room = mg->meta_bytes, free_z = zcow_zoned_nr_free_zones(fs);
	uint64_t held;
	bool sys_held = true;
	int ret;

	ret = zcow_sys_zone_held_in(fs, mg, &sys_held);
	if (ret)
		return ret;
	if (sys_held)
		free_z = free_z ? free_z - 1 : 0;
	/* The zone held for the data relocation group (core/reclaim.h; a
	 * walk over the groups with reclaim on: asked once). */
	held = zcow_reclaim_held_zones(fs);
	free_z -= free_z < held ? free_z : held;
	*bytes_ret = room + free_z * zcow_zoned_zone_room(fs);
	return 0;
}

int zcow_meta_room(struct zcow_fs *fs, uint64_t *bytes_ret)
{
	struct zcow_meta_groups mg;

	zcow_meta_groups(fs, &mg);
	return meta_room_in(fs, &mg, bytes_ret);
}

/* One walk over the groups serves the room and the need. */
int zcow_meta_check(struct zcow_fs *fs, uint64_t op_nodes,
		    bool may_use_global)
{
	struct zcow_meta_groups mg;
	uint64_t room, need;
	int ret;

	if (fs->read_only)
		return -EROFS;
	if (!fs->has_trees)
		return 0;
	/* What this check is for may use the room a grant counted on
	 * (core/file.c:zcow_meta_reserve_locked()). */
	fs->meta_grant.nodes = 0;
	zcow_meta_groups(fs, &mg);
	ret = meta_room_in(fs, &mg, &room);
	if (!ret)
		ret = zcow_meta_need_in(fs, &mg, op_nodes, may_use_global,
					&need);
	if (ret)
		return ret;
	return room >= need ? 0 : -ENOSPC;
}

bool zcow_meta_may_give(struct zcow_fs *fs, uint64_t bytes)
{
	struct zcow_meta_groups mg;
	uint64_t room, need;

	if (!fs->has_trees)
		return true;
	zcow_meta_groups(fs, &mg);
	if (meta_room_in(fs, &mg, &room) ||
	    zcow_meta_need_in(fs, &mg, 0, false, &need))
		return false;
	return room >= bytes && room - bytes >= need;
}

bool zcow_zoned_has_reclaimable(struct zcow_fs *fs)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->pinned || fs->bgs[i]->is_cleaned ||
		    (fs->bgs[i]->is_removing && !fs->bgs[i]->is_deleted))
			return true;
	return false;
}

/* The free zone held for the next system chunk (zcow_sys_zone_held):
 * 1 or 0.  No writer but the chunk tree's may take it. */
static uint64_t sys_held_zones(struct zcow_fs *fs)
{
	bool held = true;

	if (zcow_sys_zone_held(fs, &held))
		return 1;
	return held ? 1 : 0;
}

/*
 * May a new data chunk take a free zone?  Not one of the last
 * META_RESERVE_ZONES, nor the zones held for relocation and the next
 * system chunk, and only while the metadata room left without it still
 * covers the commit and the global reserve (zcow_meta_may_give()).
 */
static bool data_may_take_zone(struct zcow_fs *fs)
{
	return zcow_zoned_nr_free_zones(fs) >
		       META_RESERVE_ZONES + zcow_reclaim_held_zones(fs) +
			       sys_held_zones(fs) &&
	       zcow_meta_may_give(fs, zcow_zoned_zone_room(fs));
}

/* May relocation take a free zone (the free zones' rules alone)? */
static bool reloc_may_take_free_zone(struct zcow_fs *fs)
{
	if (fs->reclaim == ZCOW_RECLAIM_OFF)
		return data_may_take_zone(fs);
	if (zcow_reclaim_held_zones(fs))
		/* The zone held back for it, or one data may take; never the
		 * one held for the next system chunk (measured: a commit
		 * failing for lack of a system zone at max_active 6). */
		return zcow_zoned_nr_free_zones(fs) >= 1 + sys_held_zones(fs);
	return data_may_take_zone(fs);
}

/*
 * A count, so it opens nothing: the active zone a new relocation group
 * needs is taken when one is allocated (zcow_zoned_reloc_may_take_zone),
 * by finishing the current one if nothing cheaper is left.  Asking the
 * budget here finished the current relocation group with half its room
 * left each time the cleaner sized a victim (max_active 6: every victim
 * moved into a zone finished half empty, the next victim, no progress).
 */
uint64_t zcow_zoned_reloc_zones(struct zcow_fs *fs)
{
	uint64_t free_z = zcow_zoned_nr_free_zones(fs);
	uint64_t keep = META_RESERVE_ZONES + 1 + sys_held_zones(fs);

	if (!reloc_may_take_free_zone(fs))
		return 0;
	return free_z > keep ? free_z - keep :
			       (zcow_reclaim_held_zones(fs) ? 1 : 0);
}

bool zcow_zoned_reloc_may_take_zone(struct zcow_fs *fs)
{
	/* ... and an active zone within the budget. */
	return reloc_may_take_free_zone(fs) &&
	       !zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_RELOC);
}

/*
 * The hot relocation group takes only a zone relocation can spare: one
 * more stays for the relocation group (so a victim the cleaner sized
 * still fits), and its active zone comes as data's would (no group a
 * slot or relocation fills is finished for it).  Else hot survivors go
 * to the relocation group.
 */
bool zcow_zoned_reloc_spares_hot(struct zcow_fs *fs)
{
	return zcow_zoned_reloc_zones(fs) > 1;
}

bool zcow_zoned_reloc_hot_may_take_zone(struct zcow_fs *fs)
{
	return zcow_zoned_reloc_spares_hot(fs) &&
	       !zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_DATA);
}

void zcow_zoned_forget_reloc(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	if (bg->start == fs->reloc_bg)
		fs->reloc_bg = 0;
	if (bg->start == fs->reloc_hot_bg)
		fs->reloc_hot_bg = 0;
}

/* ---- the active-zone budget ----------------------------------------- */

/*
 * Every zone a writer opens comes out of one count per device, checked
 * before the zone is opened (docs/space.md, "Active zones"):
 *
 *   held  = superblock log zones (one per log mirror: the zone it writes)
 *         + every sequential group whose zone is open or closed on the
 *           device, or will be when its claimed writes land
 *           (zcow_zoned_holds_zone)
 *   open  = held + 1 + reserve(who) <= the device's active-zone limit
 *
 *   who       reserve  when over the limit
 *   META      0        finish a data group (one a slot holds too)
 *   TREELOG   1        finish a data group no slot holds, else ENOSPC
 *                      (fsync commits instead)
 *   RELOC     1        finish a data group (a slot's too), else ENOSPC
 *   DATA      1        finish a data group with less than a block left;
 *                      else the caller shares a group, hands the data
 *                      relocation group over or waits
 *
 * The reserve of 1 is the metadata's next group: a commit allocates its
 * nodes in the lowest metadata group with room and opens the next one
 * while the nodes of the first are not yet written (both active).  So a
 * commit never finds the budget taken.  A group's zone is finished only
 * with nothing in flight in it (reserved 0).
 */

/* Is @bg one of the groups only relocation writes into (the relocation
 * group, the hot one)? */
static bool is_reloc_target(const struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return bg->start == fs->reloc_bg || bg->start == fs->reloc_hot_bg;
}

/* Superblock log zones of @dev: one active zone per log mirror. */
static uint32_t sb_log_zones(struct zcow_fs *fs, struct zdev *dev)
{
	struct zcow_sb_loc loc;
	uint32_t n = 0;
	int m;

	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		zcow_sb_locate_mirror(dev, fs->placement, m, &loc);
		if (loc.kind == ZCOW_SB_LOC_LOG)
			n++;
	}
	return n;
}

/* Is @bg the block group of a data slot other than @slot? */
static bool is_other_slot(struct zcow_files *fl, const struct zcow_bg *bg,
			  uint32_t slot)
{
	uint32_t i;

	for (i = 0; fl && i < fl->data_zones; i++)
		if (i != slot && fl->data_active[i] == bg->start)
			return true;
	return false;
}

bool zcow_zoned_holds_zone(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	if (!bg->is_seq || bg->is_ro || bg->is_deleted || bg->is_finished)
		return false;
	if (bg->alloc_offset >= bg->capacity) {
		/* Allocated to its capacity: FULL once the last write lands
		 * (data in flight, not landed; metadata nodes the commit
		 * writes). */
		if ((bg->flags & ZCOW_BG_TYPE_MASK) == ZCOW_BG_DATA)
			return bg->reserved > bg->landed;
		return bg->meta_wp < bg->capacity;
	}
	if (bg->alloc_offset)
		return true;
	/* Empty, and claimed by a writer that will open it. */
	return bg->start == fs->treelog_bg || is_reloc_target(fs, bg) ||
	       is_other_slot(fs->files, bg, UINT32_MAX);
}

uint32_t zcow_zoned_nr_active(struct zcow_fs *fs,
			      const struct zcow_device *zd)
{
	uint32_t n = sb_log_zones(fs, zd->zdev);
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->dev == zd && zcow_zoned_holds_zone(fs, fs->bgs[i]))
			n++;
	return n;
}

/* The device the next chunk goes to (zcow_chunk_alloc: the most free
 * bytes, the lower devid on a tie). */
static const struct zcow_device *next_chunk_dev(struct zcow_fs *fs)
{
	const struct zcow_device *best = &fs->devs[0];
	uint64_t most = zcow_device_free_bytes(fs, best), a;
	unsigned int d;

	for (d = 1; d < fs->nr_devs; d++) {
		a = zcow_device_free_bytes(fs, &fs->devs[d]);
		if (a > most) {
			most = a;
			best = &fs->devs[d];
		}
	}
	return best;
}

/* Drop @bg from the data slots that hold it. */
static void unslot(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	struct zcow_files *fl = fs->files;
	uint32_t s;

	for (s = 0; fl && s < fl->data_zones; s++)
		if (fl->data_active[s] == bg->start)
			fl->data_active[s] = 0;
}

/*
 * The data group on @zd with the least room left that holds a zone with
 * nothing in flight: one no slot holds, or with @may_slot one a slot
 * holds.  The current data relocation group only with @may_reloc (it is
 * being replaced).  With @only_short, only one with room for less than
 * a block (data uses every other before it opens a zone).  A claimed
 * empty group is let go at once (free).
 */
static struct zcow_bg *finish_candidate(struct zcow_fs *fs,
					const struct zcow_device *zd,
					bool may_slot, bool may_reloc,
					bool only_short)
{
	struct zcow_bg *best = NULL;
	uint64_t i, room, best_room = UINT64_MAX;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *b = fs->bgs[i];

		if (b->dev != zd ||
		    (b->flags & ZCOW_BG_TYPE_MASK) != ZCOW_BG_DATA ||
		    !zcow_zoned_holds_zone(fs, b) || b->reserved ||
		    b->is_relocating || b->is_removing || b->is_copying ||
		    b->is_wp_stale)
			continue;
		if (b->start == fs->reloc_bg && !may_reloc)
			continue;
		if (!b->alloc_offset && !is_reloc_target(fs, b)) {
			unslot(fs, b);	/* claimed, never opened */
			return NULL;
		}
		if (!may_slot && is_other_slot(fs->files, b, UINT32_MAX))
			continue;
		room = b->capacity - b->alloc_offset;
		if (only_short && room >= BS)
			continue;
		if (room < best_room) {
			best = b;
			best_room = room;
		}
	}
	return best;
}

/* Finish @bg's zone: its unallocated tail becomes zone_unusable, no
 * writer holds it any more.  Returns 0 or the device's errno. */
static int finish_bg(struct zcow_fs *fs, struct zcow_bg *bg)
{
	int err;

	/* ORDER: nothing; the zone only stops taking writes, what it
	 * holds stays (a crash sees it FULL: offset = capacity). */
	err = zcow_bg_finish_zone(fs, bg);
	if (err)
		return err;
	zlog(ZLOG_DEBUG, TAG, "finished group %" PRIu64 " (%" PRIu64
	     " bytes left) for an active zone", bg->start,
	     bg->capacity - bg->alloc_offset);
	bg->zone_unusable += bg->capacity - bg->alloc_offset;
	bg->alloc_offset = bg->capacity;
	if (bg->meta_wp)
		bg->meta_wp = bg->capacity;
	unslot(fs, bg);
	if (is_reloc_target(fs, bg)) {
		bg->is_data_reloc = false;
		zcow_zoned_forget_reloc(fs, bg);
	}
	if (bg->start == fs->treelog_bg)
		fs->treelog_bg = 0;
	return 0;
}

/*
 * The tree-log group on @zd, if it holds a zone that can be given back:
 * no node of a living log unwritten (no fsync is between its log's
 * allocation and its write: both run under the one fs lock), and with
 * @no_log also no log living in it (nothing reserved: only garbage of
 * logs a commit dropped).  A log living there stays readable: finishing
 * keeps what a zone holds.  Nodes allocated and never written with
 * nothing reserved are a dropped log's (freed before their write, they
 * would be written zeroed by the next log): nothing references them, so
 * the zone may be finished before them.  Refusing that let a log group
 * hold its zone with every fsync falling back to a commit, and at
 * max_active 6 no data group could open: every write ENOSPC with half
 * the device free.
 */
static struct zcow_bg *log_to_give(struct zcow_fs *fs,
				   const struct zcow_device *zd, bool no_log)
{
	struct zcow_bg *t = fs->treelog_bg ? zcow_bg_lookup(fs, fs->treelog_bg) :
					     NULL;

	if (!t || t->dev != zd || !zcow_zoned_holds_zone(fs, t) ||
	    (t->reserved && (no_log || t->meta_wp != t->alloc_offset)))
		return NULL;
	return t;
}

/*
 * Give back one active zone on @zd for @who, cheapest first (as
 * btrfs_zone_finish_one_bg, the group with the least room left):
 *   1. a data group no slot holds (the current data relocation group too,
 *      for RELOC, which replaces it; for DATA only one with less than a
 *      block left);
 *   2. the tree-log group (log_to_give()): for META even with a log in
 *      it, for DATA and RELOC only without one; the next fsync commits
 *      instead, until a zone is free for a new log group;
 *   3. a slot's data group, for META and RELOC;
 *   4. the current data relocation group, for META.
 * Nothing in flight is ever cut.  Returns true when a zone was given
 * back.
 */
static bool finish_one(struct zcow_fs *fs, const struct zcow_device *zd,
		       enum zcow_zone_user who)
{
	uint32_t before = zcow_zoned_nr_active(fs, zd);
	struct zcow_bg *bg;

	bg = finish_candidate(fs, zd, false, who == ZCOW_ZONE_RELOC,
			      who == ZCOW_ZONE_DATA);
	if (!bg && zcow_zoned_nr_active(fs, zd) < before)
		return true;	/* a claim let go */
	if (!bg && who != ZCOW_ZONE_TREELOG) {
		bg = log_to_give(fs, zd, who != ZCOW_ZONE_META);
		if (bg && !bg->alloc_offset) {
			fs->treelog_bg = 0;	/* claimed, never opened */
			return true;
		}
	}
	if (!bg && (who == ZCOW_ZONE_META || who == ZCOW_ZONE_RELOC))
		bg = finish_candidate(fs, zd, true, who == ZCOW_ZONE_RELOC,
				      false);
	/* The relocation group last for metadata: the cleaner fills it a
	 * victim at a time, and finishing it between two wastes its room
	 * and the next victim's copies take a zone more. */
	if (!bg && who == ZCOW_ZONE_META)
		bg = finish_candidate(fs, zd, true, true, false);
	return bg && !finish_bg(fs, bg);
}

/*
 * What @who must leave on @zd: one zone for the metadata's next group.
 * Not for metadata itself; not when a zone metadata can always take back
 * holds the place: the tree-log group (log_to_give), so the log itself
 * may take that zone; and not on a device that allows no more than
 * zcow's minimum (superblock logs, system, metadata, one data group:
 * there metadata finishes the data group to open its next one).
 */
static uint32_t meta_reserve(struct zcow_fs *fs, const struct zcow_device *zd,
			     enum zcow_zone_user who, uint32_t limit)
{
	if (who == ZCOW_ZONE_META || who == ZCOW_ZONE_TREELOG)
		return 0;
	if (limit <= zcow_active_zones_needed(zd->zdev, fs->placement, false,
					      1))
		return 0;
	return log_to_give(fs, zd, false) ? 0 : 1;
}

int zcow_zoned_open_zone(struct zcow_fs *fs, const struct zcow_device *zd,
			 enum zcow_zone_user who)
{
	uint32_t limit;

	if (!zd)
		zd = next_chunk_dev(fs);
	limit = zcow_active_zone_limit(zd->zdev);
	if (!zd->zdev->info.is_zoned || !limit)
		return 0;
	while (zcow_zoned_nr_active(fs, zd) + 1 +
		       meta_reserve(fs, zd, who, limit) > limit)
		if (!finish_one(fs, zd, who))
			return -ENOSPC;
	return 0;
}

/* ---- active zones ------------------------------------------------------ */

uint32_t zcow_zoned_data_zones(struct zcow_fs *fs, uint32_t want,
			       bool has_treelog)
{
	const struct zdev_info *info = &fs->dev->info;
	uint32_t limit = info->max_active, n = want ? want : 4, avail;
	/*
	 * Everything but data, as the budget counts it (zcow_zoned_open_zone):
	 * the superblock log zones, the system and metadata groups, the
	 * metadata's next group, the tree-log group and the data relocation
	 * group (written while data groups are).  With fewer zones the last
	 * two take theirs from data when they need one.
	 */
	uint32_t nondata = sb_log_zones(fs, fs->dev) + 2 + 1 +
			   (has_treelog ? 1 : 0) +
			   (fs->reclaim != ZCOW_RECLAIM_OFF ? 1 : 0);

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

/*
 * A sequential data group allocated to its capacity (room for less than
 * a block) with writes still in flight: its zone turns FULL only when the
 * last of them lands, until then it holds an active zone.  Reserved bytes
 * that landed (a split write's first part, waiting for its last part's
 * room before its items go in) are in flight no more: a pick for that
 * last part must not wait for them.
 */
static bool is_filling(const struct zcow_bg *b)
{
	return (b->flags & ZCOW_BG_TYPE_MASK) == ZCOW_BG_DATA && b->is_seq &&
	       b->reserved > b->landed &&
	       !zcow_bg_has_room(b, ZCOW_BG_DATA, BS);
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

/* May data go to @bg: it holds its zone already, or an empty group's
 * zone may be opened within the budget (and the data slots). */
static bool may_write(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return zcow_zoned_holds_zone(fs, bg) ||
	       (nr_open_data_bgs(fs) < fs->files->data_zones &&
		!zcow_zoned_open_zone(fs, bg->dev, ZCOW_ZONE_DATA));
}

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
		    !is_other_slot(fl, fs->bgs[i], slot) &&
		    may_write(fs, fs->bgs[i]))
			bg = fs->bgs[i];
	for (i = 0; !bg && i < fs->nr_bgs; i++)
		if (zcow_bg_has_room(fs->bgs[i], ZCOW_BG_DATA, BS) &&
		    !is_other_slot(fl, fs->bgs[i], slot) &&
		    may_write(fs, fs->bgs[i]))
			bg = fs->bgs[i];
	if (!bg)
		zone_finish_short(fs);
	/*
	 * No group with room and the active zones all taken: the data
	 * relocation group, kept between passes, goes over to data (a pass
	 * opens a new one within the budget).
	 */
	if (!bg && fs->reloc_bg && !fs->in_reclaim &&
	    nr_open_data_bgs(fs) < fl->data_zones &&
	    zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_DATA)) {
		struct zcow_bg *r = zcow_bg_lookup(fs, fs->reloc_bg);

		fs->reloc_bg = 0;
		if (r) {
			r->is_data_reloc = false;
			if (zcow_bg_has_room(r, ZCOW_BG_DATA, BS))
				bg = r;
		}
	}
	if (!bg && data_may_take_zone(fs) &&
	    nr_open_data_bgs(fs) < fl->data_zones &&
	    !zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_DATA)) {
		err = zcow_chunk_alloc(fs, ZCOW_BG_DATA, &bg);
		if (err && err != -ENOSPC)
			return err;
		if (!err && !zcow_bg_has_room(bg, ZCOW_BG_DATA, BS))
			bg = NULL;
	}
	for (i = 0; !bg && i < fs->nr_bgs; i++)
		if (zcow_bg_has_room(fs->bgs[i], ZCOW_BG_DATA, BS) &&
		    may_write(fs, fs->bgs[i]))
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
static bool is_spare(struct zcow_fs *fs, const struct zcow_bg *b)
{
	return zcow_bg_has_room(b, ZCOW_BG_DATA, BS) && !b->alloc_offset &&
	       !is_other_slot(fs->files, b, UINT32_MAX);
}

static void keep_spare(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;
	uint64_t i;
	int err;

	if (!zcow_log_is_wanted(fs))
		return;
	/* A spare already: the one found last, while it still is one (it
	 * is checked after every data pick), else any. */
	if (fl->spare_bg && is_spare(fs, zcow_bg_lookup(fs, fl->spare_bg)))
		return;
	/* Where the active-zone budget leaves data one zone, the slot's
	 * next group is the one zone data may open: a spare would hold a
	 * free zone no write can use. */
	if (zcow_zoned_data_zones(fs, 0, true) < 2)
		return;
	for (i = 0; i < fs->nr_bgs; i++) {
		if (is_spare(fs, fs->bgs[i])) {
			fl->spare_bg = fs->bgs[i]->start;
			return;
		}
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
	bool is_retried = false;
	int attempt, err;

	if (fs->read_only)
		return -EROFS;
	/* Just in time: the cleaner looks when the slot needs a new zone. */
	if (!fl->data_active[slot] ||
	    !zcow_bg_has_room(zcow_bg_lookup(fs, fl->data_active[slot]),
			      ZCOW_BG_DATA, BS)) {
		err = zcow_reclaim_locked(fs, ZCOW_RECLAIM_AT_PICK);
		if (err)
			return err;
	}
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
		/* Flush: pinned space becomes unusable, whole unusable
		 * groups are removed and their zones reset; with nothing
		 * a commit frees, relocation empties some first. */
		err = zcow_reclaim_commit_locked(fs, ZCOW_RECLAIM_SHORT);
		if (err == -ENOSPC && !is_retried) {
			/*
			 * Nothing freed in this generation: a pass whose own
			 * metadata took the zone it freed is not repeated
			 * before the next commit.  Commit once, so that the
			 * next round's pass may move more; then ENOSPC.
			 */
			is_retried = true;
			err = zcow_files_commit_locked(fs);
		}
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
	if (!fl || fl->hotcold != ZCOW_HOTCOLD_AGE)
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

	if (!fl || fl->hotcold != ZCOW_HOTCOLD_AGE || !fl->nr_ow)
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
	/* An empty group or a new chunk: an active zone from the budget,
	 * else fsync commits instead of logging. */
	if ((!bg || !zcow_zoned_holds_zone(fs, bg)) &&
	    zcow_zoned_open_zone(fs, bg ? bg->dev : NULL, ZCOW_ZONE_TREELOG))
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
