/* SPDX-License-Identifier: MIT */
/*
 * zoned: the zoned space policy of zcow, in one place, as btrfs keeps it in
 * fs/btrfs/zoned.c behind one-line hooks.
 *
 * What it is: every placement decision that depends on zones: how many
 * zones are free and what one holds, the metadata headroom (room left for
 * tree nodes, and whether a zone may go to data or to the tree-log group),
 * the active-zone budget every writer asks before it opens a zone, and
 * the data_zones slots of data within it, which block group
 * a data write goes to, finishing a group to free an active zone, the
 * dedicated tree-log group (seed 010) and how data reaches its zone (Zone
 * Append or a plain write at the write pointer, seed 006).
 *
 * What it is not: the mechanism.  Chunks, block-group records, the
 * sequential reservation at the allocation offset and the space accounting
 * are core/volumes.c; the worst-case sizes of operations and commits in
 * tree nodes are core/volumes.c too (zcow_rsv_nodes, zcow_meta_need).  The
 * file layer (core/file.c) calls the hooks below and never decides where
 * data goes; the calls go down: file -> zoned -> volumes -> device.  The
 * one way back is a flush: when nothing is free, a pick commits the
 * running transaction (core/transaction.c) to turn freed space into whole
 * unusable groups, which the commit resets.
 *
 * Locking: every function runs under files->lock (see core/files.h), except
 * zcow_zoned_write_data(), which runs outside it on a reservation held,
 * and zcow_zoned_data_zones(), called by mount before the fs is shared.
 *
 * Who may include it: core/ and tests/ only.
 */
#ifndef ZCOW_ZONED_H
#define ZCOW_ZONED_H

#include <stdbool.h>
#include <stdint.h>

struct zcow_fs;
struct zcow_bg;
struct zcow_device;

/* ---- zone counts ---------------------------------------------------- */

/* Free zones a data chunk may not take: kept for metadata groups. */
#define META_RESERVE_ZONES 2

/*
 * Zones no block group uses, outside the superblock-log zones (seed 003:
 * a device extent is whole zones, one chunk = one zone here).
 */
uint64_t zcow_zoned_nr_free_zones(struct zcow_fs *fs);

/*
 * Bytes a new chunk of one zone holds: the zone capacity (its size on
 * conventional zones, seed 002) in whole tree nodes.
 */
uint64_t zcow_zoned_zone_room(struct zcow_fs *fs);

/* ---- metadata headroom (docs/space.md) ------------------------------ */

/*
 * Metadata bytes the node allocator can still hand out: room in the
 * metadata groups (not the tree-log's, seed 010) and in free zones, less
 * one zone held for a system chunk when the system groups may not hold
 * the chunk tree's CoW.  Returns 0 and *bytes_ret, or a read errno.
 */
int zcow_meta_room(struct zcow_fs *fs, uint64_t *bytes_ret);

/*
 * Admission of an operation of @op_nodes nodes: 0 when zcow_meta_need()
 * <= zcow_meta_room(), -ENOSPC, -EROFS, or a read errno.  Nothing is
 * reserved: the check and the operation run under the one fs lock.  Ends
 * the grant of fs->meta_grant (docs/space.md).
 */
int zcow_meta_check(struct zcow_fs *fs, uint64_t op_nodes,
		    bool may_use_global);

/*
 * May @bytes of metadata room go elsewhere (a data chunk, the tree-log
 * group) and the running transaction still commit with the global
 * reserve kept?  False also on a read error.
 */
bool zcow_meta_may_give(struct zcow_fs *fs, uint64_t bytes);

/*
 * Would a commit free space?  True when a group holds pinned bytes (they
 * become zone_unusable) or is removable (all unusable: its zone is reset
 * after the commit, seed 005).  The flush of a reservation or a data pick
 * commits only then.
 */
bool zcow_zoned_has_reclaimable(struct zcow_fs *fs);

/*
 * May the data relocation group take a free zone (core/reclaim.h)?  The
 * zone held back for it while reclaim is on, or one a data chunk may take.
 */
bool zcow_zoned_reloc_may_take_zone(struct zcow_fs *fs);
/* May the hot relocation group (hotcold=frequency) take a zone (more
 * than one zone relocation may take, and an active zone as data gets
 * one)?  Opens the zone in the budget when it says true.  _spares_hot:
 * the free-zone half alone (a count: opens nothing). */
bool zcow_zoned_reloc_hot_may_take_zone(struct zcow_fs *fs);
bool zcow_zoned_reloc_spares_hot(struct zcow_fs *fs);
/* @bg is no relocation group any more (finished, removed). */
void zcow_zoned_forget_reloc(struct zcow_fs *fs, const struct zcow_bg *bg);
/* Free zones one reclaim pass may lend the data relocation group (given
 * back when the groups it empties are reset): those beyond the metadata
 * reserve and one more, or the held one. */
uint64_t zcow_zoned_reloc_zones(struct zcow_fs *fs);

/* ---- the active-zone budget (docs/space.md, "Active zones") ---------- */

/* Who opens a zone: what it must leave for the others and what it may
 * finish to get one (the table in core/zoned.c). */
enum zcow_zone_user {
	ZCOW_ZONE_META,		/* metadata and system groups (commits) */
	ZCOW_ZONE_TREELOG,	/* the tree-log group */
	ZCOW_ZONE_RELOC,	/* the data relocation group */
	ZCOW_ZONE_DATA,		/* a data slot's group */
};

/*
 * Does @bg hold an active zone on its device, or will it once its
 * claimed writes land?  A sequential group, not finished or read-only,
 * written below its capacity, or allocated to its capacity with writes
 * still to come (data in flight, metadata nodes not yet written), or
 * empty and claimed by a writer (a data slot, the tree-log group, the
 * data relocation group).
 */
bool zcow_zoned_holds_zone(struct zcow_fs *fs, const struct zcow_bg *bg);

/* Active zones of device @zd: its superblock log zones (one per log
 * mirror) and the groups on it that zcow_zoned_holds_zone(). */
uint32_t zcow_zoned_nr_active(struct zcow_fs *fs,
			      const struct zcow_device *zd);

/*
 * May @who open one more zone on @zd (NULL: the device the next chunk
 * goes to) within its active-zone limit, keeping one zone for the
 * metadata's next group unless @who is metadata?  Every path that opens a
 * zone asks first: a new chunk of any type, an empty group a writer
 * claims.  Over the limit, data groups with nothing in flight are
 * finished to give zones back (which ones depends on @who).  Returns 0,
 * or -ENOSPC when no zone can be given back.  Unlimited devices: 0.
 */
int zcow_zoned_open_zone(struct zcow_fs *fs, const struct zcow_device *zd,
			 enum zcow_zone_user who);

/* ---- active zones and data placement -------------------------------- */

/*
 * The active-zone budget of data at mount: the number of data slots, @want
 * (0 = 4), clamped to what the device's active/open zone limit leaves after
 * the non-data zones (superblock log, system, metadata, the tree-log group
 * when @has_treelog, and the next metadata group), at least 1, at most
 * ZCOW_MAX_DATA_ZONES (warned when clamped).
 */
uint32_t zcow_zoned_data_zones(struct zcow_fs *fs, uint32_t want,
			       bool has_treelog);

/*
 * The hook of the data path: the data block group the next part of a
 * write of @len bytes (a multiple of 4 KiB) of inode @ino goes to, and in
 * *len_ret that part: @len, or less when the group has room for less (at
 * least one 4 KiB block: the rest goes to the next group, as btrfs splits
 * a write at a block group's end, so that every zone is filled to its
 * capacity).  Nothing is reserved yet; the caller reserves *len_ret at the
 * allocation offset with zcow_bg_reserve_in() under the same lock hold.
 * The write's slot is ino % data_zones, or with hotcold=on, by the
 * predicted temperature @is_hot: ino % the cold slots (data_zones -
 * data_zones / 2) or data_zones - data_zones / 2 + ino % the hot slots
 * (data_zones / 2), and a group a hot slot starts filling is marked
 * is_hot (with hotcold=off @is_hot is ignored).
 * The slot keeps its group while it has room for a block;
 * else the lowest group with room no other slot holds; else a new data
 * chunk while fewer than data_zones data groups are open (a group
 * allocated to its capacity is open until its last write lands: then its
 * zone is FULL; one with room for less than a block is finished first to
 * free its active zone, as btrfs_zone_finish) and the zone is not one of the
 * last free zones metadata needs (headroom); else any group with room
 * (shared with another slot).  When nothing has room while a group
 * allocated full still has writes in flight (its zone is active until
 * they land), wait on files->cond for them (the lock is dropped meanwhile;
 * the caller must hold no reservation).  When nothing is free and a
 * commit would reclaim space, commit and try again (twice at most).
 * Returns 0, *bg_ret and *len_ret, -ENOSPC, -EROFS, or a chunk/commit
 * errno.
 */
int zcow_zoned_pick_data_bg(struct zcow_fs *fs, uint64_t ino, bool is_hot,
			    uint64_t len, struct zcow_bg **bg_ret,
			    uint64_t *len_ret);

/* ---- hot and cold (hotcold=on) ---------------------------------------- */

/*
 * Is a write that replaces live data of generation @gen (its file extent
 * item's: the transaction that wrote it, kept through relocation) hot,
 * i.e. was that data written less than files->hot_age ago (the mean age
 * of the data overwritten before the last commit; UINT64_MAX, every
 * overwrite hot, until a commit has seen overwrites)?  Its write time is
 * the alloc clock when transaction @gen began (0 before the mount).
 */
bool zcow_zoned_overwrite_is_hot(struct zcow_fs *fs, uint64_t gen);

/*
 * Write heat (hotcold=frequency, core/heat.c), under the fs lock.
 * zcow_heat_init: the table of a mount (0 or -ENOMEM); _free: drops it.
 * zcow_heat_note_write: count a data write of [@off, @off + @len) of
 * inode @ino of tree @root (once per byte written).
 * zcow_heat_is_hot: is the range holding @off hot?
 * Without a table (another hotcold=) both say false.
 */
int zcow_heat_init(struct zcow_fs *fs);
void zcow_heat_free(struct zcow_fs *fs);
void zcow_heat_note_write(struct zcow_fs *fs, uint64_t root, uint64_t ino,
			  uint64_t off, uint64_t len);
bool zcow_heat_is_hot(struct zcow_fs *fs, uint64_t root, uint64_t ino,
		      uint64_t off);

/* A write that replaces live data of generation @gen was reserved: its
 * age counts toward the next threshold (once per write, however often
 * the reservation looked). */
void zcow_zoned_note_overwrite(struct zcow_fs *fs, uint64_t gen);

/* Transactions whose begin clocks hotcold=on keeps (the newest ones). */
#define ZCOW_HOTCOLD_MAX_GENS 65536u

/* Transaction fs->transid begins (core/transaction.c): note the clock. */
void zcow_zoned_note_transid(struct zcow_fs *fs);

/* A commit of the file layer starts (core/transaction.c): the ages of the
 * blocks overwritten since the last one give the hot threshold. */
void zcow_zoned_note_commit(struct zcow_fs *fs);

/*
 * Does data for @bg go by Zone Append (seed 006; btrfs_use_zone_append)?
 * Yes for a sequential group when the mount uses zone append; a plain
 * write at the reserved offset otherwise (zone_append=off: at the write
 * pointer, in allocation order under the group's plain lock; conventional
 * zones: anywhere).
 */
bool zcow_zoned_use_append(struct zcow_fs *fs, const struct zcow_bg *bg);

/*
 * Submit @len bytes of data for the reservation at @logical in @bg, outside
 * the fs lock (the reservation keeps @bg alive): a Zone Append to the zone
 * start or a plain write at @logical (zcow_zoned_use_append()).  Returns 0
 * and *landed_ret, the logical address where the data landed (seed 006:
 * the completion's address, which the file extent then records), or a
 * device errno.  The caller checks, under the fs lock again, that it
 * landed inside the group's reservations.
 */
int zcow_zoned_write_data(struct zcow_fs *fs, struct zcow_bg *bg,
			  uint64_t logical, const void *buf, uint64_t len,
			  uint64_t *landed_ret);

/* ---- the tree-log group (seed 010) ---------------------------------- */

/*
 * Make sure a tree-log group with room for @room bytes exists: the current
 * one, else a metadata group nothing lives in (used, reserved and pinned
 * all 0), else with @may_alloc a new metadata chunk; either only while
 * zcow_meta_may_give() lets its room go and, when its zone is not active
 * yet, the active-zone budget gives it one (zcow_zoned_open_zone(),
 * ZCOW_ZONE_TREELOG).  Nothing is reserved.  Mount and
 * the commit call it so that the log's group is in the committed chunk
 * tree before a log uses it.  Returns 0, -ENOSPC, -EROFS.
 */
int zcow_treelog_bg_prepare(struct zcow_fs *fs, uint64_t room,
			    bool may_alloc);

/*
 * Reserve @len bytes for a tree-log node only in the dedicated tree-log
 * group fs->treelog_bg, prepared as above (zcow_bg_reserve() never hands
 * out space there).  Returns 0 and *logical_ret, -ENOSPC, -EROFS.
 */
int zcow_bg_reserve_treelog(struct zcow_fs *fs, uint64_t len,
			    uint64_t *logical_ret);

#endif /* ZCOW_ZONED_H */
