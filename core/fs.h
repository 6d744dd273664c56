/* SPDX-License-Identifier: MIT */
/*
 * fs: the internal header of core/: the mounted file system (the full
 * struct zcow_fs, opaque outside core/) and the calls the modules of core/
 * make to one another (commit writeback, superblock writes, tree set-up,
 * the file layer's hooks).
 *
 * What it is not: the API.  That is include/zcow.h, included here, which
 * every caller outside core/ uses; this header adds what only core/ may
 * touch, so that a change here never breaks the tool.
 *
 * Who may include this: core/, and the white-box tests/ and fuzz/.  Not
 * harness/: the Makefile gives it no -Icore.
 */
#ifndef ZCOW_FS_H
#define ZCOW_FS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "zcow.h"	/* the public API (include/zcow.h) */
#include "ctree.h"
#include "replace.h"
#include "sb.h"
#include "volumes.h"
#include "zdev.h"

/* A delayed reference change of one tree block (applied at commit). */
struct zcow_delayed_ref {
	uint64_t bytenr;
	uint64_t owner;		/* tree objectid; 0 when freed (unknown) */
	int level;		/* -1 when freed (unknown) */
	int delta;		/* +1 allocated, -1 freed */
	bool is_same_trans;	/* freed block was allocated in this
				 * transaction (never written) */
};

/*
 * One device of the file system (btrfs's struct btrfs_device): its devid,
 * the device it is open on, and its device item (DEV_ITEM in the chunk
 * tree, and the dev_item of its own superblock copies).  Every device has
 * the same zone size; each keeps its own superblock log.
 */
struct zcow_device {
	uint64_t devid;
	struct zdev *zdev;
	struct zcow_dev_item item;	/* on-disk byte order */
	uint64_t writable_bytes;	/* outside its superblock zones */
};

/* Devices per file system (btrfs has no fixed limit; zcow keeps a table). */
#define ZCOW_MAX_DEVICES 16

/* A mounted file system (the public API's opaque handle). */
struct zcow_fs {
	/* The device with the lowest devid: the geometry every device
	 * shares (zone size), and the one a single-device fs has. */
	struct zdev *dev;
	struct zcow_device devs[ZCOW_MAX_DEVICES];
	unsigned int nr_devs;
	/* mkfs only: the root directory's times (zcow_mkfs_opts.time) */
	struct zcow_timespec mkfs_time;
	struct zcow_super_block sb;	/* last committed, on-disk byte order */
	struct zcow_sb_copy found;	/* where mount found it */
	enum zcow_sb_placement placement;
	uint64_t generation;		/* last committed generation */
	bool read_only;
	enum zcow_mutation mutation;	/* test-only: 0 (zcow_mount_opts) */
	int error;			/* != 0: a commit failed; no more writes */
	/* Superblock-log mirrors the last superblock write could not write
	 * (bit m = mirror m; a degraded log, reported when it changes). */
	uint32_t sb_failed_mirrors;

	/* The trees (has_trees false: a bare superblock, no trees yet). */
	bool has_trees;
	uint32_t nodesize;
	uint64_t transid;		/* running transaction = generation + 1 */
	struct zcow_node_store store;
	struct zcow_tree root_tree;	/* rooted from sb.root */
	struct zcow_tree chunk_tree;	/* rooted from sb.chunk_root */
	struct zcow_tree extent_tree;	/* ROOT_ITEMs in the root tree */
	struct zcow_tree dev_tree;
	struct zcow_tree fs_tree;
	struct zcow_tree csum_tree;
	struct zcow_tree uuid_tree;	/* subvolume uuid -> root id */
	struct zcow_tree reloc_tree;	/* data relocation tree (-9) */

	/* Block groups, sorted by start. */
	struct zcow_bg **bgs;
	uint64_t nr_bgs;
	uint64_t bgs_cap;
	/* The metadata and system groups among them, in no order
	 * (zcow_bg_add(), zcow_bg_remove()): what a reservation check
	 * walks (zcow_meta_groups()). */
	struct zcow_bg **meta_bgs;
	uint64_t nr_meta_bgs, meta_bgs_cap;
	uint64_t writable_bytes;	/* all devices, outside sb zones */

	/* The running transaction's in-memory state. */
	struct zcow_delayed_ref *refs;
	uint64_t nr_refs, refs_cap;
	/* The last reservation relocation could not satisfy
	 * (core/file.c:zcow_meta_reserve_locked): what it needed and the
	 * room plus freed space there was (bytes); 0: none. */
	uint64_t rsv_failed_need, rsv_failed_mark;
	/* Nodes reserved by data writes whose data is on its way and whose
	 * items are not recorded yet (core/file.c: btrfs carries them in a
	 * block_rsv): every reservation check counts them as the
	 * operation's own (zcow_meta_need_in()). */
	uint64_t rsv_held_nodes;
	/* Nodes a full check found room for ahead of the reservations
	 * after it (core/file.c:zcow_meta_reserve_locked()), and what it
	 * read: valid while nothing but the reservations it grants
	 * changed. */
	struct zcow_meta_grant {
		uint64_t nodes;		/* left to draw */
		uint64_t drawn;		/* drawn since the check */
		uint64_t transid, space_seq, treelog_bg, reloc_bg;
		uint64_t allocs;	/* fs->meta_allocs at the check */
		/* transid + 1 of a transaction whose room refused a grant
		 * (it only shrinks until the commit); 0: none */
		uint64_t refused;
	} meta_grant;
	/* Tests: with is_on, every draw on the grant is checked in full as
	 * well; bad counts the draws the full check would have refused. */
	struct {
		bool is_on;
		uint64_t draws, bad;
	} grant_audit;
	/* Changes of the groups' space outside a commit: a group added or
	 * removed, a zone finished, a group's offset moved back to its write
	 * pointer (invalidates meta_grant). */
	uint64_t space_seq;
	uint64_t meta_allocs;	/* tree nodes allocated, ever */
	struct zcow_need_memo need_memo;	/* core/volumes.c */
	uint64_t *redirty;		/* freed before writeback: write zeroed */
	uint64_t nr_redirty, redirty_cap;
	uint8_t *wb_arena;		/* commit: node images, kept for reuse */
	uint64_t wb_arena_size;		/* bytes */
	struct zcow_commit_stats cstats;

	/* The file layer (core/files.h); NULL without trees. */
	struct zcow_files *files;

	/* The tree-log (core/tree-log.c, issue 9); NULL without files. */
	struct zcow_log *log;
	/* Start of the dedicated tree-log block group, 0 = none yet (seed
	 * 010): log nodes are allocated only there, nothing else is. */
	uint64_t treelog_bg;

	/* Reclaim (core/reclaim.h). */
	int reclaim;			/* enum zcow_reclaim, never DEFAULT */
	uint32_t reclaim_threshold;	/* percent */
	uint32_t reclaim_high;		/* zones; 0 = the default */
	/* The dedicated data relocation group (btrfs's data_reloc_bg): only
	 * relocated data goes there; 0 = none (then one free zone is held
	 * back for it while reclaim is on). */
	uint64_t reloc_bg;
	/* hotcold=frequency: a second one for hot survivors (0 = none, no
	 * zone held for it: without room they go to reloc_bg). */
	uint64_t reloc_hot_bg;
	bool in_reclaim;		/* a pass runs: no nested pass */
	/* Who cleans (zcow_mount_opts.cleaner, core/reclaim.c "the
	 * background cleaner"): a run is due (set by the writers, cleared
	 * by the cleaner when it has collected enough), the commits of the
	 * run, and the thread of ZCOW_CLEANER_THREAD. */
	int cleaner;
	bool cleaner_due;
	uint64_t cleaner_commits, cleaner_target;
	bool has_cleaner_thread, cleaner_stop;
	pthread_t cleaner_thread;
	pthread_cond_t cleaner_cond;	/* with files->lock: a run is due */
	/* Nodes the recent commits wrote: the largest, decaying by a
	 * quarter per commit (core/transaction.c:write_nodes). */
	uint64_t commit_nodes_peak;
	/* fs->alloc_clock at the last two commits' writeback, newest first:
	 * a metadata group filled since the older one is young. */
	uint64_t commit_clock[2];
	/* A pass found nothing to do in this state: (generation, bytes
	 * freed) when it looked; no new look until one changes. */
	uint64_t reclaim_idle_gen, reclaim_idle_freed, reclaim_idle_passes;
	uint64_t freed_bytes;		/* pinned since mount (bytes) */
	uint64_t alloc_clock;		/* bytes reserved since mount */
	struct zcow_reclaim_stats rstats;

	/* Device replace (core/replace.h); NULL when none runs. */
	struct zcow_replace *replace;
	/* The dev-replace item's state (the last replace, or none), and
	 * whether the commit must write it. */
	struct zcow_replace_status replace_st;
	bool replace_item_dirty;
};

/* The device with @devid, or NULL. */
struct zcow_device *zcow_fs_device(struct zcow_fs *fs, uint64_t devid);
/* The device @bg's zones are on. */
struct zdev *zcow_bg_zdev(const struct zcow_bg *bg);
/* Reset every sequential zone of @dev that is not empty (mkfs, device
 * add, replace target).  0 or a device errno. */
int zcow_dev_reset_zones(struct zdev *dev);
/* Refuse @dev when its active-zone limit is below what the fs needs
 * (-EINVAL with a message; @what names the operation). */
int zcow_dev_check_active_zones(struct zdev *dev, enum zcow_sb_placement p,
				const char *what);
/* A device's size as the file system uses it (its item's total_bytes:
 * a replace target may be larger than the device it replaced). */
uint64_t zcow_device_size(const struct zcow_device *zd);

/* Flush every device's volatile cache.  0 or the first -errno. */
int zcow_fs_flush(struct zcow_fs *fs);
/* Can @a and @b be devices of one fs (zone size, zoned)?  0 or -EINVAL
 * with a message naming both. */
int zcow_devs_compatible(const struct zdev *a, const struct zdev *b);
/* A device item for @devid on @dev of the fs @fsid, with a new uuid from
 * @rng (on-disk byte order). */
void zcow_dev_item_init(struct zcow_dev_item *di, uint64_t devid,
			const struct zdev *dev, const uint8_t *fsid,
			uint64_t *rng);

/* The trees of a file system, in a fixed order (root tree first). */
#define ZCOW_NR_TREES 8
struct zcow_tree *zcow_fs_tree_nr(struct zcow_fs *fs, int i);
/* The tree with objectid @objectid, or NULL. */
struct zcow_tree *zcow_fs_tree(struct zcow_fs *fs, uint64_t objectid);

/*
 * Internal to core/: write @len bytes of node images at logical @logical
 * of @bg exactly at its meta write pointer (zeros first over a gap left
 * by a rounded-up offset or an unwritten released node).  0 or -errno.
 */
int zcow_write_at_meta_wp(struct zcow_fs *fs, struct zcow_bg *bg,
			  uint64_t logical, const uint8_t *buf, uint64_t len);

/*
 * Internal to core/: write @sb to every superblock mirror
 * (zcow_sb_write_all_mirrors) and report a change in the set of mirrors
 * that could not be written.  0 or -errno (no mirror written).
 */
int zcow_fs_write_super(struct zcow_fs *fs, struct zcow_super_block *sb);

/* Internal to core/: a ROOT_ITEM (struct btrfs_root_item, 439 bytes) for
 * @tree's current root into @buf. */
void zcow_root_item_encode(uint8_t *buf, const struct zcow_tree *tree,
			   uint32_t nodesize);
/* Internal to core/: update the item @key, or insert it.  0 or -errno. */
int zcow_tree_put(struct zcow_tree *tree, const struct zcow_key *key,
		  const void *data, uint32_t len);

/* Internal to core/: a node image to write (NULL: a node freed before it
 * was written, written zeroed to keep the zone sequential). */
struct zcow_wnode {
	uint64_t bytenr;
	uint8_t *buf;
};
/*
 * Internal to core/: write @v (sorted here) in address order at each
 * block group's meta write pointer, contiguous nodes coalesced up to
 * 1 MiB per command (the commit's and the tree-log's writeback).
 */
int zcow_write_node_list(struct zcow_fs *fs, struct zcow_wnode *v,
			 uint64_t nr);

/* Internal to core/: fs->writable_bytes and each device's, from the
 * devices' sizes and superblock zones. */
void zcow_fs_count_writable(struct zcow_fs *fs);

/* Internal to core/: set up / load / free the trees of @fs.  mkfs:
 * @subvol_uuid is the fs tree's uuid (16 bytes). */
int zcow_fs_create_trees(struct zcow_fs *fs, const uint8_t *subvol_uuid);
int zcow_fs_load_trees(struct zcow_fs *fs);
void zcow_fs_free_trees(struct zcow_fs *fs);

/* Internal hooks of the file layer, called by fs.c. */
int zcow_files_mount(struct zcow_fs *fs, const struct zcow_mount_opts *opts);
void zcow_files_unmount(struct zcow_fs *fs);
/* Wait until no data write of the file layer is in flight (none: a
 * no-op). */
void zcow_files_wait_idle(struct zcow_fs *fs);
/* Trees of the file layer beyond the fixed six (snapshots): the commit
 * writes their dirty nodes too.  0 / NULL without a file layer. */
uint64_t zcow_files_nr_trees(struct zcow_fs *fs);
struct zcow_tree *zcow_files_tree_nr(struct zcow_fs *fs, uint64_t i);

#endif /* ZCOW_FS_H */
