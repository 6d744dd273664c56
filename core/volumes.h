/* SPDX-License-Identifier: MIT */
/*
 * volumes: chunks, block groups and the zoned allocator of zcow.
 *
 * What it is: the logical address space of one file system, mapped by chunks
 * onto device extents of whole zones (seed 003), the block groups that hand
 * out space strictly sequentially at their allocation offset (seeds 004,
 * 005), and the space accounting per block group and per space type
 * (data, metadata, system): total, used, reserved, pinned, read-only and
 * zone_unusable.
 *
 * Single device, single profile only (seed 004): any RAID/DUP profile bit is
 * refused with -EINVAL.  With one device the seed's zoned policy makes every
 * chunk exactly one zone (stripe size = zone size, one stripe); the per-type
 * size limits (metadata 1 zone, system <= 2 zones, data <= 10% of the
 * writable space, at least one zone) are computed by zcow_chunk_max_size()
 * and only bind with more devices.  See docs/format.md.
 *
 * What it is not: the trees.  New chunks and removed block groups are kept in
 * memory (is_new / is_removing) and put into the chunk, device and extent
 * trees by the transaction commit (core/transaction.c), which is what lets
 * the node allocator allocate a chunk in the middle of a tree operation.
 * Nor the zoned policy: which group data goes to, the active-zone budget,
 * zone finish, the free-zone counts, the metadata room and the tree-log
 * group are core/zoned.h, which calls down into this module.  The one
 * call up is the node allocator's (zcow_bg_reserve), which asks the
 * active-zone budget before it opens a zone, as every zone opener does.
 *
 * Who may include it: core/, harness/, tests/.
 */
#ifndef ZCOW_VOLUMES_H
#define ZCOW_VOLUMES_H

#include <stdbool.h>
#include <stdint.h>

#include "zdev.h"

/* btrfs block group / chunk type flags (btrfs_tree.h). */
#define ZCOW_BG_DATA		(1ULL << 0)
#define ZCOW_BG_SYSTEM		(1ULL << 1)
#define ZCOW_BG_METADATA	(1ULL << 2)
#define ZCOW_BG_TYPE_MASK	(ZCOW_BG_DATA | ZCOW_BG_SYSTEM | ZCOW_BG_METADATA)
#define ZCOW_BG_RAID0		(1ULL << 3)
#define ZCOW_BG_RAID1		(1ULL << 4)
#define ZCOW_BG_DUP		(1ULL << 5)
#define ZCOW_BG_RAID10		(1ULL << 6)
#define ZCOW_BG_RAID5		(1ULL << 7)
#define ZCOW_BG_RAID6		(1ULL << 8)
#define ZCOW_BG_RAID1C3		(1ULL << 9)
#define ZCOW_BG_RAID1C4		(1ULL << 10)
#define ZCOW_BG_PROFILE_MASK	(0x7ffULL << 3)

#define ZCOW_FIRST_CHUNK_TREE_OBJECTID	256ULL
#define ZCOW_DEV_ITEMS_OBJECTID		1ULL
#define ZCOW_STRIPE_LEN			65536ULL	/* BTRFS_STRIPE_LEN */

/* Space types, the rows of `zcow df`. */
enum zcow_space_type {
	ZCOW_SPACE_DATA,
	ZCOW_SPACE_SYSTEM,
	ZCOW_SPACE_METADATA,
	ZCOW_NR_SPACE
};

struct zcow_device;

/*
 * One block group = one chunk = one device extent of whole zones.
 *
 * Invariant (all in bytes from @start):
 *   used + reserved + pinned + (zone_unusable - (length - capacity))
 *        == alloc_offset
 * i.e. everything below the allocation offset is live, reserved, pinned
 * (freed in the running transaction) or unusable until the zone is reset;
 * the capacity gap of a zone (capacity < size) counts as unusable too, as
 * in btrfs.
 */
struct zcow_bg {
	uint64_t start;		/* logical address */
	uint64_t length;	/* logical bytes = zones x zone size */
	uint64_t physical;	/* device offset of its first zone */
	uint64_t devid;		/* the device it is on */
	struct zcow_device *dev;	/* fs->devs[] entry of @devid */
	uint64_t flags;		/* ZCOW_BG_* type bits (no profile bit) */
	uint64_t capacity;	/* writable bytes (zone capacity) */
	uint64_t alloc_offset;	/* next allocation, bytes from @start */
	uint64_t meta_wp;	/* metadata written up to, bytes from @start */
	uint64_t used;
	uint64_t reserved;	/* allocated, not yet accounted as used */
	uint64_t landed;	/* of @reserved: data on the device whose
				 * items wait for the rest of their write
				 * (core/file.c:write_extent); no longer in
				 * flight */
	uint64_t pinned;	/* freed in the running transaction */
	uint64_t zone_unusable;	/* below alloc_offset and freed, + cap gap */
	uint64_t item_used;	/* @used as the block group item records it */
	bool is_seq;		/* its zones are sequential-write-required */
	bool is_ro;		/* read-only (zone read-only/offline) */
	bool is_new;		/* created in this transaction: no items yet */
	bool is_removing;	/* all unusable: items go at the next commit */
	bool is_deleted;	/* items deleted: zones reset after the commit */
	bool is_relocating;	/* being emptied: nothing is allocated in it */
	bool is_cleaned;	/* relocation moved all of it: removed by the
				 * next commit, its zones reset after it */
	bool is_data_reloc;	/* the data relocation group (fs->reloc_bg) */
	uint64_t last_alloc;	/* fs->alloc_clock at its last reservation */
	bool is_hot;		/* hotcold=on: filled from a hot data slot */
	bool is_reloc_filled;	/* was the data relocation group */
	bool to_copy;		/* replace: on the source, not copied yet */
	bool is_copying;	/* replace: being copied: nothing is
				 * allocated in it, it is not removed */
	bool is_finished;	/* its zone was finished: FULL, no active
				 * zone held whatever the offsets say */
	bool is_wp_stale;	/* a write to it failed: the device's write
				 * pointer may differ from alloc_offset until
				 * zcow_bg_sync_wp() */
};

/* Sums over the block groups of one type (`zcow df`). */
struct zcow_space_info {
	uint64_t total;
	uint64_t used;
	uint64_t reserved;
	uint64_t pinned;
	uint64_t readonly;	/* bytes of read-only groups not in use */
	uint64_t zone_unusable;
	uint64_t nr_groups;
};

struct zcow_fs;

/* The type bits of a space type, and back (-1 for no/mixed type). */
uint64_t zcow_space_flags(enum zcow_space_type type);
int zcow_space_of_flags(uint64_t flags);
const char *zcow_space_name(enum zcow_space_type type);

/*
 * Refuse anything but the single profile: returns 0, or -EINVAL with the
 * message "only the single profile is supported".
 */
int zcow_check_profile(uint64_t flags);

/* Largest chunk of @type flags for this device (see the header comment). */
uint64_t zcow_chunk_max_size(const struct zcow_fs *fs, uint64_t type);

/*
 * Reset every sequential zone of the member devices that is active on the
 * device (open or closed) but in no block group and no superblock zone: a
 * crash leaves them (a chunk no commit recorded, a group removed before
 * its reset), and the device counts them against its active-zone limit
 * while the fs's budget does not.  At a read-write mount, before anything
 * is written.  0 or a device errno.
 */
int zcow_reset_free_active_zones(struct zcow_fs *fs);

/*
 * Allocate a chunk of @flags (one type bit, optionally a profile bit, which
 * is refused): the lowest free zone that is not a superblock zone and holds
 * no fixed superblock copy, conventional or empty (a non-empty sequential
 * zone is reset, with a warning).  The block group is created in memory
 * (is_new); a system chunk is added to the superblock's sys_chunk_array at
 * once.  Returns 0 and *bg_ret, -EINVAL, -ENOSPC, -EROFS, or a device errno.
 */
/* Does the zone at @zone of @dev hold superblocks: a superblock-log zone
 * or one a fixed superblock copy lies in?  No chunk takes it, and the
 * writable space (zcow_fs_count_writable()) leaves it out. */
bool zcow_zone_is_sb(const struct zcow_fs *fs, struct zdev *dev,
		     uint64_t zone);
int zcow_chunk_alloc(struct zcow_fs *fs, uint64_t flags,
		     struct zcow_bg **bg_ret);

/* The block group holding logical @logical, or NULL. */
struct zcow_bg *zcow_bg_lookup(struct zcow_fs *fs, uint64_t logical);

/*
 * Map [@logical, +@len) to a device offset; the range must lie in one
 * block group.  Returns 0 or -EUCLEAN (unmapped).
 */
int zcow_map_logical(struct zcow_fs *fs, uint64_t logical, uint64_t len,
		     uint64_t *phys_ret);

/* zcow_map_logical(), and the device (*@dev_ret may be NULL). */
int zcow_map_logical_dev(struct zcow_fs *fs, uint64_t logical, uint64_t len,
			 struct zdev **dev_ret, uint64_t *phys_ret);

/*
 * The zone commands of a block group, on the device its chunk is on (and,
 * while a replace runs, cloned to the target once the group is copied:
 * core/replace.h).  @off: bytes from the group's start.  An append
 * returns where it landed in *@off_ret.  0 or -errno.
 */
int zcow_bg_write(struct zcow_fs *fs, struct zcow_bg *bg, const void *buf,
		  uint64_t len, uint64_t off, unsigned int flags,
		  enum zdev_class cls);
int zcow_bg_append(struct zcow_fs *fs, struct zcow_bg *bg, const void *buf,
		   uint64_t len, unsigned int flags, enum zdev_class cls,
		   uint64_t *off_ret);
int zcow_bg_reset_zone(struct zcow_fs *fs, struct zcow_bg *bg);
int zcow_bg_finish_zone(struct zcow_fs *fs, struct zcow_bg *bg);

/*
 * A failed write or append leaves @bg is_wp_stale: the bytes reserved
 * above the device's write pointer never landed, and a later write at
 * alloc_offset would be refused (not at the write pointer).  Under the fs
 * lock, with nothing of @bg in flight (reserved 0), report the zone and
 * move the allocation offset (and meta_wp) to its write pointer: back over
 * bytes that are all unusable, or forward over bytes that landed (counted
 * unusable).  Returns 0 (also when not stale), -EAGAIN (writes in flight:
 * later), -EUCLEAN (live bytes above the write pointer: a metadata node
 * never written; the group takes nothing more), or a report errno.
 * zcow_bg_reserve_in() calls it first; the writers call it after a failure.
 */
int zcow_bg_sync_wp(struct zcow_bg *bg);

/* Bytes of @zd outside its superblock zones not in a block group. */
uint64_t zcow_device_free_bytes(struct zcow_fs *fs,
				const struct zcow_device *zd);

/*
 * Reserve @len bytes of type @flags strictly sequentially at a block
 * group's allocation offset: in a group whose zone is active first, else
 * an empty one or a new chunk, opened within the active-zone budget
 * (zcow_zoned_open_zone(), ZCOW_ZONE_META).  Returns 0 and *logical_ret,
 * -ENOSPC, -EROFS, or the chunk errors.
 */
int zcow_bg_reserve(struct zcow_fs *fs, uint64_t flags, uint64_t len,
		    uint64_t *logical_ret);

/*
 * Reserve @len bytes in @bg itself, at its allocation offset.  Returns 0
 * and *logical_ret, -ENOSPC (no room, read-only or removed group), -EROFS.
 */
int zcow_bg_reserve_in(struct zcow_fs *fs, struct zcow_bg *bg, uint64_t len,
		       uint64_t *logical_ret);

/*
 * Mount, before a tree-log replay: [@logical, +@len) was written after
 * the last commit (a log node or a logged data extent).  A conventional
 * group's allocation offset (from its last extent item) is raised over
 * it, the bytes counted unusable, so nothing overwrites it.
 */
void zcow_bg_claim_written(struct zcow_fs *fs, uint64_t logical, uint64_t len);

/* Replay: a logged data extent written after the last commit became
 * referenced: zone_unusable -> used. */
void zcow_bg_unusable_to_used(struct zcow_fs *fs, uint64_t logical,
			      uint64_t len);

/* True when @bg is a usable group of type @flags with room for @len. */
bool zcow_bg_has_room(const struct zcow_bg *bg, uint64_t flags, uint64_t len);

/*
 * Give a reservation back.  Unwritten (@is_written false) and the last
 * allocation of its group: the allocation offset rewinds.  Otherwise the
 * bytes stay below the offset and become zone_unusable.
 */
void zcow_bg_release(struct zcow_fs *fs, uint64_t logical, uint64_t len,
		     bool is_written);

/* A reservation became a referenced extent: reserved -> used. */
void zcow_bg_use_reserved(struct zcow_fs *fs, uint64_t logical, uint64_t len);

/* A referenced extent never written was freed: used -> zone_unusable. */
void zcow_bg_drop_used(struct zcow_fs *fs, uint64_t logical, uint64_t len);

/* A referenced extent was freed in this transaction: used -> pinned. */
void zcow_bg_pin(struct zcow_fs *fs, uint64_t logical, uint64_t len);

/*
 * After a commit is durable: pinned -> zone_unusable in every group, and
 * groups now entirely unusable are marked is_removing.
 */
void zcow_bg_unpin_all(struct zcow_fs *fs);

/* True when nothing in @bg can ever be allocated again or is referenced. */
bool zcow_bg_is_all_unusable(const struct zcow_bg *bg);

/*
 * Set @bg's allocation offset from its zone (seed 004 table in volumes.c).
 * @last_extent_end: for conventional zones, the end (bytes from start) of
 * the last allocated extent.  Returns 0 or a device errno.
 */
int zcow_bg_load_alloc_offset(struct zcow_bg *bg, uint64_t last_extent_end);

/* Add a block group record (mount, chunk allocation).  0 or -ENOMEM. */
int zcow_bg_add(struct zcow_fs *fs, const struct zcow_bg *bg,
		struct zcow_bg **bg_ret);
/* Drop a block group record (after its zones were reset). */
void zcow_bg_remove(struct zcow_fs *fs, struct zcow_bg *bg);

/* struct btrfs_chunk with one struct btrfs_stripe: 48 + 32 bytes. */
#define ZCOW_CHUNK_ITEM_SIZE	80u
/* Remove @bg's chunk from the superblock's sys_chunk_array (a system
 * group being deleted; every entry is one key and one chunk item). */
void zcow_drop_sys_chunk(struct zcow_fs *fs, const struct zcow_bg *bg);
/* Encode @bg's chunk item (its one stripe on its device) into @buf
 * (ZCOW_CHUNK_ITEM_SIZE). */
void zcow_chunk_encode(const struct zcow_bg *bg, uint8_t *buf);
/*
 * Decode a chunk item at logical @logical of @len bytes into @bg (start,
 * length, devid, physical, flags; not @bg->dev).  Returns 0, -EINVAL (not the single profile,
 * more than one stripe) or -EUCLEAN (malformed).
 */
int zcow_chunk_decode(const uint8_t *buf, uint32_t len, uint64_t logical,
		      struct zcow_bg *bg);

/* Fill @info for space type @type.  */
void zcow_space_info(struct zcow_fs *fs, enum zcow_space_type type,
		     struct zcow_space_info *info);

/*
 * ---- metadata space reservation (docs/space.md) ----
 *
 * An operation that changes trees first checks, under the fs lock, that
 * the metadata space left covers its own worst case and the commit's: it
 * then either fails with -ENOSPC before changing anything or completes,
 * and a commit never runs out of space.  All sizes are worst cases in
 * tree nodes; bytes are nodes x nodesize.  Here: what an operation and a
 * commit need; what is there and the admission (zcow_meta_room,
 * zcow_meta_check, zcow_meta_may_give) are core/zoned.h.
 */
struct zcow_tree;

/*
 * Add to *@nodes_ret the nodes @nr_items item changes of at most
 * @item_bytes data each may dirty in @tree: (2h + 3) per item for a tree
 * of height h, capped at every node of the tree CoWed and split once plus
 * the leaves the items fill.  0 or a read errno.
 */
int zcow_rsv_nodes(struct zcow_fs *fs, struct zcow_tree *tree,
		   uint64_t nr_items, uint64_t item_bytes,
		   uint64_t *nodes_ret);

/*
 * Add to *nodes_ret the nodes removing @nr_items items of @tree may
 * dirty: its path and a sibling per level (2h) each or, when they are
 * contiguous in @nr_leaves leaves (0: not), those leaves, as many
 * parents and a path and sibling at each end; capped at the nodes not
 * copied yet in this transaction (a removal allocates no other).  0 or a
 * read errno.
 */
int zcow_rsv_del_nodes(struct zcow_tree *tree, uint64_t nr_items,
		       uint64_t nr_leaves, uint64_t *nodes_ret);

/*
 * What a reservation check reads of the block groups, from one walk over
 * them (zcow_meta_groups()): valid while no group changes, i.e. within
 * one hold of the fs lock with no allocation in between.
 */
struct zcow_meta_groups {
	uint64_t meta_bytes;	/* whole nodes left in the metadata groups
				 * with room, the tree-log's apart, bytes */
	uint64_t sys_nodes;	/* nodes left in the system groups with room */
	uint64_t with_room;	/* metadata and system groups with room for
				 * a node (the tree-log's too) */
};

void zcow_meta_groups(struct zcow_fs *fs, struct zcow_meta_groups *mg_ret);

/* Does the chunk tree's CoW in a commit (every node once, split once,
 * growth) not fit in the system groups, so that a commit may allocate a
 * system chunk?  *held_ret true: zcow_meta_room() holds a zone for it.
 * 0 or a read errno.  The _in variant reads the groups from @mg. */
int zcow_sys_zone_held(struct zcow_fs *fs, bool *held_ret);
int zcow_sys_zone_held_in(struct zcow_fs *fs,
			  const struct zcow_meta_groups *mg, bool *held_ret);

/*
 * Metadata bytes that must be free to admit an operation of @op_nodes
 * nodes: its own, the commit's (extent, root and device trees, delayed
 * references, fixed items) once it is done and, unless @may_use_global
 * (unlink, rmdir: operations that free space), the global reserve held
 * back so that such an operation still runs on a full fs.  0 or -errno.
 */
int zcow_meta_need(struct zcow_fs *fs, uint64_t op_nodes,
		   bool may_use_global, uint64_t *bytes_ret);
/* The same with the groups read from @mg (zcow_meta_groups()). */
int zcow_meta_need_in(struct zcow_fs *fs, const struct zcow_meta_groups *mg,
		      uint64_t op_nodes, bool may_use_global,
		      uint64_t *bytes_ret);

/*
 * Everything zcow_meta_need() reads, and its answer for them: a check
 * whose inputs are all the same (a write's record step after its
 * reservation; in a transaction whose paths are copied already, most
 * writes) takes the answer instead of computing it again.
 */
#define ZCOW_NEED_INPUTS	21
struct zcow_need_memo {
	bool is_valid;
	uint64_t in[ZCOW_NEED_INPUTS];
	uint64_t bytes;
};

#endif /* ZCOW_VOLUMES_H */
