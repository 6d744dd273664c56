/* SPDX-License-Identifier: MIT */
/*
 * zcow: the public API of the file system.
 *
 * zcow is a copy-on-write file system for zoned block devices, following
 * Linux btrfs's zoned support and its on-disk format (docs/format.md):
 * mkfs, mount and unmount, transaction commits, a superblock log, files
 * and directories with checksummed copy-on-write data, snapshots, a
 * tree-log for fsync, and a checker.  It runs over any device of the plug
 * (dev/zdev.h): the zone simulator, an emulated-zones image file, or a
 * real zoned device.
 *
 * What it is not: the device layer (dev/zdev.h) or a tool (harness/).  A
 * mounted file system is an opaque handle (struct zcow_fs): its state is
 * read through the calls below.  The on-disk superblock and the
 * superblock log, for a dump tool, are include/zcow_super.h.
 *
 * Who may include this: anyone (harness/, tests/, fuzz/); core/ includes
 * it through its internal header core/fs.h.
 *
 * A call that can fail returns 0 (or a count where stated) or -errno, and
 * logs the reason once through zlog (base/zlog.h).
 */
#ifndef ZCOW_ZCOW_H
#define ZCOW_ZCOW_H

#include <stdbool.h>
#include <stdint.h>

#include "zdev.h"

/* Where the superblock mirrors live on a device with sequential zones. */
enum zcow_sb_placement {
	ZCOW_SB_PLACE_SEED,	/* zones 0, 16, min(256 GiB / zone, 1024) */
	ZCOW_SB_PLACE_KERNEL,	/* zones 0, 512 GiB / zone, 4 TiB / zone */
};

/* "seed" or "kernel". */
const char *zcow_sb_placement_name(enum zcow_sb_placement p);

/* btrfs-progs' minimum for -m single -d single (mkfs/common.c): 2 zones
 * for the primary superblock log + system, metadata and data block groups
 * + a tree-log zone + a data-relocation zone. */
#define ZCOW_MIN_ZONES		7
#define ZCOW_MIN_ZONE_SIZE	(4ULL << 20)	/* 4 MiB, as btrfs */
#define ZCOW_MAX_ZONE_SIZE	(8ULL << 30)	/* 8 GiB, as btrfs */
#define ZCOW_SECTORSIZE		4096u
#define ZCOW_DEFAULT_NODESIZE	16384u

/* A time as btrfs_timespec stores it (seconds, nanoseconds). */
struct zcow_timespec {
	int64_t sec;
	uint32_t nsec;
};

/* mkfs options; a zeroed struct is valid. */
struct zcow_mkfs_opts {
	const char *label;	/* NULL = empty; at most 255 bytes */
	uint32_t nodesize;	/* bytes, power of two 4 KiB..64 KiB; 0 = 16 KiB */
	enum zcow_sb_placement placement; /* 0 = seed placement */
	uint64_t seed;		/* seeds the fsid/device uuid PRNG (0 is a
				 * seed too: same seed, same uuids) */
	/* the root directory's four times (btrfs-progs: now); zero = the
	 * epoch, so that one seed gives one image; zcow mkfs gives now */
	struct zcow_timespec time;
};


/* zcow_mount_opts.atime */
enum {
	ZCOW_ATIME_RELATIME = 0,	/* when atime <= mtime or ctime, or a day old */
	ZCOW_ATIME_NOATIME,		/* never on a read */
	ZCOW_ATIME_STRICTATIME,		/* on every read */
};

/* zcow_mount_opts.cleaner */
enum {
	/* The writer that is about to open a zone cleans, under the fs
	 * lock (deterministic: tests, the CLI's commands). */
	ZCOW_CLEANER_WRITER = 0,
	/* A thread of the fs cleans, one step per lock hold, as btrfs's
	 * reclaim worker; mount option cleaner=background. */
	ZCOW_CLEANER_THREAD,
	/* The caller runs the steps: zcow_cleaner_step() whenever
	 * zcow_cleaner_due() (zcow run's scheduler, in simulated time). */
	ZCOW_CLEANER_STEPS,
};

/* mount options; a zeroed struct is valid. */
/*
 * hotcold=: how a data write is judged hot.
 *   FREQUENCY (hotcold=on): its file range (16 KiB) was written more than
 *             twice as often as the mean range of live data, the counts
 *             halved each quarter of the device written (core/heat.c);
 *             relocation keeps hot survivors in a hot relocation group;
 *   AGE:      it replaces data younger than the mean age of the data the
 *             overwrites replaced between the last two commits (SepBIT);
 *             relocation does not separate.
 */
enum zcow_hotcold {
	ZCOW_HOTCOLD_OFF = 0,
	ZCOW_HOTCOLD_FREQUENCY,
	ZCOW_HOTCOLD_AGE,
};
/* "off", "frequency", "age" ("?" for another value). */
const char *zcow_hotcold_name(int mode);
/* The mode named @name (or "on": frequency), or -EINVAL. */
int zcow_hotcold_parse(const char *name);

struct zcow_mount_opts {
	bool read_only;		/* true: never write (unmount commits nothing) */
	/* files (issue 5): true = zone_append=off (plain writes at the wp,
	 * serialized per block group); false (0) = zone append (seed 006) */
	bool no_zone_append;
	/* files: commit after this many bytes of data writes; 0 =
	 * ZCOW_DEFAULT_COMMIT_BYTES */
	uint64_t commit_bytes;
	/* files: data_zones=N, active data block groups written at once
	 * (writers spread by inode number: slot = ino % N); 0 = default
	 * min(4, the device's active/open limit minus the non-data zones:
	 * zcow_active_zones_needed(.., 0) + 1 for the next metadata group),
	 * at least 1; a larger N is clamped to that (with a warning).
	 * Read-write mount refuses a device below
	 * zcow_active_zones_needed(.., false, 1) (-EINVAL) and turns the
	 * tree-log off (with a warning) below (.., true, 1). */
	uint32_t data_zones;
	/* tree-log (issue 9): true = treelog=off, every fsync is a full
	 * commit; false (0) = fsync writes the file's items to the log tree
	 * in the dedicated tree-log block group (seed 010). */
	bool no_treelog;
	/* reclaim=off|threshold|greedy|cost-benefit (enum zcow_reclaim;
	 * 0 = the default policy, docs/reclaim.md): which block groups
	 * are relocated so that their zones can be reset. */
	int reclaim;
	/* reclaim_threshold=N: percent of a group's size unusable at which
	 * reclaim=threshold relocates it (51..100); 0 = 75 (Linux's
	 * BTRFS_DEFAULT_RECLAIM_THRESH). */
	uint32_t reclaim_threshold;
	/* reclaim_high=N: zones, free or pending (emptied, reset by the
	 * next commit), the just-in-time cleaner keeps, the reserves
	 * included; ZCOW_RECLAIM_LOW_ZONES + 1 .. 65535, refused (-EINVAL)
	 * with another policy; 0 = the default, the reserves and 3 more
	 * (docs/reclaim.md). */
	uint32_t reclaim_high;
	/* hotcold=on|frequency|age|off (enum zcow_hotcold): data writes
	 * are placed by predicted lifetime (docs/reclaim.md, "Hot and
	 * cold"), hot ones in the hot half of the data_zones slots, others
	 * in the cold half; refused (-EINVAL) with fewer than 2 data slots.
	 * 0 = off: slot = ino % data_zones. */
	int hotcold;
	/* cleaner=writer|background: who runs the just-in-time cleaner
	 * (greedy, cost-benefit, hotcold-greedy) and threshold's clean-up
	 * after a commit (enum above; docs/reclaim.md "Who cleans"). */
	int cleaner;
	/* files: the clock of inode times (otime, atime, mtime, ctime):
	 * @clock(now, clock_arg) fills *now; NULL = CLOCK_REALTIME.  Tools
	 * that must produce the same image twice (zcow run, crash
	 * campaigns) pass a deterministic one. */
	void (*clock)(struct zcow_timespec *now, void *arg);
	void *clock_arg;
	/* files: when a read updates atime (mount options relatime,
	 * noatime, strictatime): 0 = ZCOW_ATIME_RELATIME, Linux's default */
	int atime;
	/* TEST-ONLY (docs/crash.md): break one ordering rule on purpose
	 * (enum zcow_mutation), so that tests can prove the crash oracles
	 * catch it; 0 = none.  No tool sets it. */
	int mutation;
};

/* Active data block groups (mount option data_zones=N): at most this. */
#define ZCOW_MAX_DATA_ZONES		16
/* Data bytes written between commits when commit_bytes is 0: 256 MiB. */
#define ZCOW_DEFAULT_COMMIT_BYTES	(256ULL << 20)

/*
 * The test-only ordering mutations of struct zcow_mount_opts.mutation:
 *   ZCOW_MUT_RESET_BEFORE_COMMIT: reset removed block groups' zones
 *	before the superblock that drops them is written (seed 005);
 *   ZCOW_MUT_SB_BEFORE_FLUSH: write the superblock without flushing
 *	the metadata (and data) it points at first;
 *   ZCOW_MUT_LOG_DROP_ITEM: fsync leaves the fsynced inode's last file
 *	extent item out of the log tree;
 *   ZCOW_MUT_LOG_SB_BEFORE_FLUSH: fsync writes the superblock that
 *	points at the log before the log's nodes are flushed;
 *   ZCOW_MUT_RELOC_RESET_EARLY: relocation resets a group's zone as soon
 *	as its contents are copied, before the commit that points at the
 *	copies is durable;
 *   ZCOW_MUT_REPLACE_WIPE_EARLY: a device replace wipes the source's
 *	superblocks before the commit that switches to the target (not
 *	after it is durable);
 *   ZCOW_MUT_CLEANED_RESET_EARLY: the commit that removes the groups
 *	reclaim emptied resets their zones once its nodes are written,
 *	before its superblock (not after it is durable).
 */
enum zcow_mutation {
	ZCOW_MUT_NONE,
	ZCOW_MUT_RESET_BEFORE_COMMIT,
	ZCOW_MUT_SB_BEFORE_FLUSH,
	ZCOW_MUT_LOG_DROP_ITEM,
	ZCOW_MUT_LOG_SB_BEFORE_FLUSH,
	ZCOW_MUT_RELOC_RESET_EARLY,
	ZCOW_MUT_REPLACE_WIPE_EARLY,
	ZCOW_MUT_CLEANED_RESET_EARLY,
};

/*
 * Reclaim policies (docs/reclaim.md): which block groups relocation
 * empties so that their zones can be reset.  One mechanism for all.
 *   OFF: none; a group is reset only when nothing in it is used (seed
 *	005, Linux 5.12);
 *   THRESHOLD: at a commit, every group whose zone_unusable reaches
 *	reclaim_threshold percent of its size (Linux 5.13);
 *   GREEDY: just in time, when data is about to open a zone and few
 *	are free or pending, the groups with the fewest live bytes first
 *	(Linux 5.16);
 *   COST_BENEFIT: the same trigger, the groups with the highest
 *	age x (1 - u) / (1 + u) first (LFS; u = live share, age = bytes
 *	written since the group's last allocation);
 *   HOTCOLD_GREEDY: the same trigger, greedy with a cold group's
 *	free share counted twice (the spare space shifts to the hot
 *	groups, Desnoyers); needs hotcold=on.
 */
enum zcow_reclaim {
	ZCOW_RECLAIM_DEFAULT,
	ZCOW_RECLAIM_OFF,
	ZCOW_RECLAIM_THRESHOLD,
	ZCOW_RECLAIM_GREEDY,
	ZCOW_RECLAIM_COST_BENEFIT,
	ZCOW_RECLAIM_HOTCOLD_GREEDY,
};
#define ZCOW_RECLAIM_DEFAULT_POLICY	ZCOW_RECLAIM_GREEDY
#define ZCOW_RECLAIM_DEFAULT_THRESHOLD	75u
/* reclaim_high= is more than this many zones. */
#define ZCOW_RECLAIM_LOW_ZONES		4u
#define ZCOW_RECLAIM_MAX_HIGH		65535u
/* "off", "threshold", "greedy", "cost-benefit", "hotcold-greedy"
 * (DEFAULT: the default's). */
const char *zcow_reclaim_name(int policy);
/* The policy named @name, or -EINVAL. */
int zcow_reclaim_parse(const char *name);
/* Does @policy order groups by hot and cold, so that it is refused
 * without hotcold=on? */
bool zcow_reclaim_needs_hotcold(int policy);
/* The policies' names as a list for a message ("off, threshold, ... or
 * cost-benefit") into @buf of @size bytes (cut to fit). */
void zcow_reclaim_names(char *buf, size_t size);
/*
 * A knob set that @policy (DEFAULT: the default's) does not have:
 * "reclaim_threshold" (a @threshold but not reclaim=threshold) or
 * "reclaim_high" (a @high but neither greedy nor cost-benefit), with
 * the reason in *@why_ret; NULL when none.  Mount and the scenario
 * readers refuse such options.
 */
const char *zcow_reclaim_knob_refused(int policy, uint32_t threshold,
				      uint32_t high, const char **why_ret);

/* What reclaim did since mount (zcow_fs_info, zcow_balance). */
struct zcow_reclaim_stats {
	uint64_t nr_passes;		/* passes that relocated a group */
	uint64_t groups_relocated;	/* data and metadata groups emptied */
	uint64_t data_groups;
	uint64_t meta_groups;
	uint64_t data_bytes;		/* data extent bytes copied */
	uint64_t data_extents;
	uint64_t meta_bytes;		/* tree node bytes moved */
	uint64_t meta_nodes;
	uint64_t zones_reset;		/* zones of removed groups reset */
	uint64_t cleaner_steps;		/* steps of a background cleaner
					 * that cleaned or committed */
	uint64_t writer_runs;		/* cleaning runs of a writer: with a
					 * background cleaner, those that
					 * waited because it fell behind */
};
/* *@d = @now - @base (@base NULL: 0), counter by counter. */
void zcow_reclaim_stats_sub(struct zcow_reclaim_stats *d,
			    const struct zcow_reclaim_stats *now,
			    const struct zcow_reclaim_stats *base);

/* The trees whose nodes zcow_commit_stats.nodes_by_tree counts: root,
 * chunk, extent, dev, fs (snapshots included), csum, uuid, data
 * relocation, then the nodes freed before writeback and written zeroed
 * (zcow_commit_tree_name()). */
#define ZCOW_COMMIT_NR_TREES	9

/* Commit statistics (zcow bench-meta). */
struct zcow_commit_stats {
	uint64_t nr_commits;
	uint64_t nodes_written;		/* all commits, redirtied included */
	uint64_t nodes_by_tree[ZCOW_COMMIT_NR_TREES];	/* nodes_written by
							 * tree */
	uint64_t nodes_redirtied;	/* freed before writeback, written zeroed */
	uint64_t last_nodes_written;	/* by the last commit */
	uint64_t write_cmds;		/* metadata write commands */
	uint64_t max_rounds;		/* most fixpoint rounds of one commit */
};

/* The name of tree @i of zcow_commit_stats.nodes_by_tree ("root",
 * "chunk", "extent", "dev", "fs", "csum", "uuid", "data_reloc",
 * "zeroed"), NULL past the last. */
const char *zcow_commit_tree_name(int i);

/* A mounted file system (opaque: core/fs.h). */
struct zcow_fs;

/*
 * Make a file system on @dev: check the geometry, reset every non-empty
 * sequential zone, write generation 1 to every mirror.  Returns 0, -EINVAL
 * (geometry or option refused, with a message), or a device -errno.
 */
int zcow_mkfs(struct zdev *dev, const struct zcow_mkfs_opts *opts);
/*
 * mkfs on @nr devices (1..16): devids 1..@nr in the order given, chunks
 * spread over them (most free space first).  Every device must have the
 * same zone size, and all be zoned or all not: -EINVAL naming both
 * devices otherwise.  zcow_mkfs() is the one-device case.
 */
int zcow_mkfs_devs(struct zdev **devs, unsigned int nr,
		   const struct zcow_mkfs_opts *opts);

/*
 * Mount (@opts may be NULL: defaults): locate the newest valid superblock,
 * check it and its features, load the trees, start the file layer and
 * replay the tree-log (a read-write mount commits the replay).  Trees that
 * cannot be read allow a read-only, superblock-only mount (zcow_fs_info()
 * has_trees false).  Returns 0 and *fs_ret, -ENOENT (no superblock),
 * -EUCLEAN (corrupt, with a message), -EOPNOTSUPP (features zcow cannot
 * handle), -EINVAL (too few active zones for a read-write mount), -ENOMEM,
 * or a device -errno.
 */
int zcow_mount(struct zdev *dev, const struct zcow_mount_opts *opts,
	       struct zcow_fs **fs_ret);
/*
 * Mount the file system on @devs (any order): every device of it must be
 * given, with one fsid.  A missing device: -ENODEV with a message naming
 * the count and the devids given; a device of another file system or one
 * too many: -EINVAL.  Otherwise as zcow_mount(), the one-device case.
 */
int zcow_mount_devs(struct zdev **devs, unsigned int nr,
		    const struct zcow_mount_opts *opts,
		    struct zcow_fs **fs_ret);

/*
 * Commit a new superblock generation (generation + 1) to every mirror:
 * the same call as zcow_commit().  Returns 0, -EROFS (read-only or after a
 * failed commit), or the commit's error; a failed commit puts the fs in
 * the error state (zcow_fs_error()).
 */
int zcow_commit_super(struct zcow_fs *fs);

/*
 * Unmount: commit a new generation (unless read-only or in the error
 * state) and free @fs.  The device stays open.  Returns 0 or the commit's
 * error (@fs is freed either way).
 */
int zcow_unmount(struct zcow_fs *fs);

/* Sums over the block groups of one space type: a row of `zcow df`. */
struct zcow_fs_space {
	const char *name;	/* "Data", "System", "Metadata" */
	uint64_t total;		/* bytes of its block groups */
	uint64_t used;		/* bytes in use (committed or not) */
	uint64_t reserved;	/* allocated, not yet accounted as used */
	uint64_t pinned;	/* freed in the running transaction */
	uint64_t readonly;	/* bytes of read-only groups not in use */
	uint64_t zone_unusable;	/* freed below the write pointers, and the
				 * zones' capacity gaps (as btrfs counts) */
	uint64_t nr_groups;
};

/* The space types of zcow_fs_info.space[], in `zcow df`'s order. */
enum {
	ZCOW_FS_SPACE_DATA,
	ZCOW_FS_SPACE_SYSTEM,
	ZCOW_FS_SPACE_METADATA,
	ZCOW_FS_NR_SPACE
};

/* The state of a mounted file system (zcow_fs_info()). */
struct zcow_fs_info {
	uint64_t generation;	/* last committed generation */
	int error;		/* != 0 (-errno): a commit failed, the fs
				 * takes no more writes */
	bool read_only;		/* mounted read-only */
	bool has_trees;		/* false: a superblock-only mount (trees
				 * unreadable); files and zcow_check fail */
	enum zcow_sb_placement placement; /* of the superblock mirrors */
	/* Superblock-log mirrors the last superblock write could not write
	 * (bit m = mirror m; 0 = every mirror written: not degraded). */
	uint32_t sb_failed_mirrors;
	uint32_t nodesize;	/* bytes; 0 without trees */
	uint64_t writable_bytes; /* device bytes outside the superblock
				  * zones; 0 without trees */
	uint64_t nr_block_groups;
	/* Bytes freed below the block groups' write pointers, not counting
	 * the zones' capacity gaps (what a reclaim could win back). */
	uint64_t zone_unusable;
	struct zcow_commit_stats commits;	/* since mount */
	struct zcow_fs_space space[ZCOW_FS_NR_SPACE];
	int reclaim;			/* enum zcow_reclaim in force */
	uint32_t reclaim_threshold;	/* percent */
	uint32_t reclaim_high;		/* zones the cleaner keeps */
	/* Freed bytes (zone_unusable, less capacity gaps) in groups that
	 * relocation may empty: what reclaim could win back now. */
	uint64_t reclaimable;
	struct zcow_reclaim_stats reclaim_stats;	/* since mount */
	/* Zones (read-only counts; 0 without trees): free = used by no
	 * block group, outside the superblock zones; of the free ones,
	 * meta_reserve data chunks may not take (kept for metadata
	 * groups) and reloc_held the zone held back for the data
	 * relocation group (docs/reclaim.md); data_zones = active data
	 * slots (0 without the file layer). */
	uint64_t nr_free_zones;
	uint64_t nr_meta_reserve_zones;
	uint64_t nr_reloc_held_zones;
	uint32_t data_zones;
	/* Zones of the groups the next commit removes (emptied by
	 * relocation or by the workload): free once it is durable. */
	uint64_t nr_pending_zones;
	/* The space data cycles through: the live bytes of the data
	 * groups, and the bytes it could hold (the data groups' capacity
	 * and the zones data may still open, pending ones counted, less
	 * what the metadata's next commits need and, under a just-in-time
	 * policy, less the pool the cleaner never lets fall: its ahead
	 * zones less one); their ratio is the utilization the cleaning
	 * runs at (0 without the file layer). */
	uint64_t data_live_bytes;
	uint64_t data_space_bytes;
};

/*
 * The state of @fs into @info (in-memory counters: no device I/O).  Not
 * serialized with writers running at the same time in other threads: call
 * it between operations.  Returns 0.
 */
int zcow_fs_info(struct zcow_fs *fs, struct zcow_fs_info *info);
/* The last committed generation of @fs (zcow_fs_info's generation). */
uint64_t zcow_fs_generation(const struct zcow_fs *fs);
/* 0, or the -errno of the commit that failed: @fs takes no more writes
 * (zcow_fs_info's error). */
int zcow_fs_error(const struct zcow_fs *fs);

/* ---- several devices (docs/devices.md) ---- */

/* One device of a mounted file system. */
struct zcow_dev_info {
	uint64_t devid;
	uint64_t total_bytes;	/* its size */
	uint64_t bytes_used;	/* in block groups (device extents) */
	uint64_t nr_groups;
	uint8_t uuid[16];
	const char *spec;	/* the spec it is open on */
};
/* How many devices @fs has (1..16). */
unsigned int zcow_fs_nr_devices(const struct zcow_fs *fs);
/* Device @i (0 .. zcow_fs_nr_devices() - 1, in devid order).  0 or
 * -ENOENT. */
int zcow_fs_device_info(struct zcow_fs *fs, unsigned int i,
			struct zcow_dev_info *info);

/*
 * Add @dev to the mounted @fs (btrfs device add): its zones reset, the
 * next devid, a device item, num_devices and total_bytes grown, all in
 * one commit; new chunks may go there at once.  The caller keeps @dev open
 * for as long as @fs is mounted.  0, -EINVAL (zone size or zoned mix
 * differs, too many devices, geometry: with a message), -EROFS, or a
 * device errno.
 */
int zcow_dev_add(struct zcow_fs *fs, struct zdev *dev);

/* Device replace (seeds 008, 009; docs/devices.md).  The item's states
 * are btrfs's (BTRFS_IOCTL_DEV_REPLACE_STATE_*). */
enum zcow_replace_state {
	ZCOW_REPLACE_NEVER_STARTED = 0,
	ZCOW_REPLACE_STARTED = 1,
	ZCOW_REPLACE_FINISHED = 2,
	ZCOW_REPLACE_CANCELED = 3,
	ZCOW_REPLACE_SUSPENDED = 4,
};
struct zcow_replace_status {
	enum zcow_replace_state state;
	uint64_t src_devid;
	uint64_t cursor;	/* logical: groups below it are copied */
	uint64_t nr_to_copy;	/* groups marked at the start */
	uint64_t nr_copied;
	uint64_t bytes_copied;	/* live bytes copied */
	uint64_t bytes_zeroed;	/* holes and levelling zeroes written */
	uint64_t bytes_cloned;	/* writes cloned to the target */
};
/*
 * Start replacing devid @src_devid by @tgt (not a device of @fs, at least
 * the source's size, same zone size and kind): @tgt's zones are reset,
 * every block group on the source is marked to copy, and the started
 * state is committed.  The caller keeps @tgt open.  0, -EBUSY (a replace
 * runs), -ENOENT (no such devid), -EINVAL (with a message), -EROFS.
 */
int zcow_replace_start(struct zcow_fs *fs, uint64_t src_devid,
		       struct zdev *tgt);
/*
 * Copy the next block group(s) of the running replace, at most about
 * @max_bytes of zone contents (0: one group); *@done_ret true when every
 * group is copied.  0, -EINVAL (no replace runs), or an errno.
 */
int zcow_replace_step(struct zcow_fs *fs, uint64_t max_bytes,
		      bool *done_ret);
/*
 * Finish: copy what is left, level every write pointer, switch the
 * source's devid to the target in one commit, and wipe the source's
 * superblocks.  After it the source is no longer used (the caller may
 * close it).  0 or an errno (then the replace still runs).
 */
int zcow_replace_finish(struct zcow_fs *fs);
/* Cancel the running replace: the source stays, the target is dropped
 * (committed as canceled).  0 or an errno. */
int zcow_replace_cancel(struct zcow_fs *fs);
/* "never-started", "started", "finished", "canceled", "suspended";
 * "unknown" for another value. */
const char *zcow_replace_state_name(enum zcow_replace_state state);
/* The replace's state (the last one, when none runs).  0.
 * The file system's other calls may run in other threads meanwhile;
 * start, step, finish and cancel of one fs are called one at a time. */
int zcow_replace_status(struct zcow_fs *fs, struct zcow_replace_status *st);

/*
 * The background cleaner of a mount with cleaner ZCOW_CLEANER_STEPS (the
 * caller is its thread; docs/reclaim.md "Who cleans"): due when a writer
 * found data short of zones (fewer than the cleaner keeps ahead) and the
 * run has not collected enough yet.  A step cleans one victim (or
 * commits the pending zones when metadata needs their room, or data is
 * down to the hard reserve) under the fs lock and returns; it is a no-op
 * when nothing is due.  Returns 0 (also when nothing fitted: a writer
 * that runs short cleans itself) or a device/commit errno.
 */
bool zcow_cleaner_due(struct zcow_fs *fs);
int zcow_cleaner_step(struct zcow_fs *fs);
/* The cleaner fell behind: data is a zone short of the hard reserve
 * (pending zones counted) while a run is due.  A caller that runs the
 * steps should hold its writers back until it has taken them, as a
 * btrfs space ticket waits for the reclaim worker (zcow run's scheduler
 * does); a writer that opens the last zone takes one step itself. */
bool zcow_cleaner_behind(struct zcow_fs *fs);
/* Change who cleans on a mounted fs (enum above; a thread is joined
 * first): a daemon starts its thread after its fork, which a thread
 * would not survive.  Returns 0, -EINVAL or the thread's errno. */
int zcow_set_cleaner(struct zcow_fs *fs, int cleaner);

/*
 * Balance (btrfs balance start -dusage=N -musage=N): relocate every data
 * and metadata block group whose live share is at most @usage percent
 * (0..100; system groups, the tree-log group and groups being written
 * are left), commit, and reset their zones.  *@stats_ret (may be NULL):
 * what this call did.  Returns 0, -EROFS, -EINVAL (@usage > 100),
 * -ENOSPC (no room to copy a group to: the groups moved so far stay
 * moved, the rest untouched), or a device errno.
 */
int zcow_balance(struct zcow_fs *fs, uint32_t usage,
		 struct zcow_reclaim_stats *stats_ret);

/*
 * Commit the running transaction (seed 007 order, see transaction.c):
 * apply the delayed changes until no tree changes, write every dirty node
 * in allocation order behind each block group's meta write pointer, flush,
 * superblock log (FUA), flush; then unpin and reset removed block groups.
 * Returns 0, -EROFS, -ENOSPC, or a device errno (the fs enters the error
 * state).  zcow_commit_super() is the same call.
 */
int zcow_commit(struct zcow_fs *fs);

/*
 * The checker: walks every tree of the last committed state from the
 * device, verifies node checksums and headers, key order across nodes,
 * generations (<= the superblock's, == the parent pointer's), that every
 * node lies in a block group below its allocation offset and below its
 * zone's write pointer, that every chunk has a block group item and a
 * device extent, that block-group used bytes equal the sum of their
 * extent items, and that every tree block has exactly one extent item with
 * refs == 1 and owner == its tree (and no extent item is left dangling),
 * that no group holds more used bytes than its zones hold written
 * (zcow_check_zones()), the tree-log, and the files (directories, inodes,
 * extents, checksums).  Each problem is passed to @report (may be NULL).
 * Returns the number of problems (0 = clean) or -ENOMEM / -EINVAL (no
 * trees).  Reads only: any mount, read-only included.
 */
int zcow_check(struct zcow_fs *fs,
	       void (*report)(void *arg, const char *msg), void *arg);
/*
 * zcow check --data: read every data extent of the last committed state
 * (the extent tree's data EXTENT_ITEMs) and verify each 4 KiB block
 * against its crc32c in the csum tree, as btrfs check
 * --check-data-csum does.  A mismatch is reported as
 * "data csum mismatch: file PATH offset OFF (root R ino I, bytenr B):
 * expected csum 0xEXPECTED, found 0xFOUND: Structure needs cleaning"
 * (the file of the extent's first reference; EUCLEAN's text); a missing
 * checksum item or an unreadable extent is reported too.  Returns the
 * number of problems (0 = clean), -ENOMEM, or -EINVAL (no trees).  Reads
 * only.
 */
int zcow_check_data(struct zcow_fs *fs,
		    void (*report)(void *arg, const char *msg), void *arg);
/*
 * One rule of the checker, also run by zcow_check(): no block group holds
 * more used bytes (as its committed item records them) than its zones
 * hold written on the device, i.e. no zone of a referenced group was reset
 * (or lost its data) behind the file system's back.  Groups on read-only
 * or offline zones and groups being deleted are skipped.  Each problem is
 * passed to @report (may be NULL).  Returns the number of problems.
 */
int zcow_check_zones(struct zcow_fs *fs,
		     void (*report)(void *arg, const char *msg), void *arg);

/*
 * Active zones (ZNS: implicitly/explicitly open or closed) a read-write
 * file system keeps at once at the least: one per superblock-log mirror in
 * sequential zones (placement @p), the open zone of the system and of the
 * metadata block group, @nr_data data groups, and the tree-log group
 * (@has_treelog).  docs/format.md, "Active zones".
 */
uint32_t zcow_active_zones_needed(struct zdev *dev, enum zcow_sb_placement p,
				  bool has_treelog, uint32_t nr_data);
/* The device's active-zone limit: max_active, else max_open; 0 = none. */
uint32_t zcow_active_zone_limit(const struct zdev *dev);

/* ==== files (issue 5): inodes, directories, data; core/inode.c, file.c ====
 *
 * Paths are '/'-separated, relative to the root directory (a leading '/'
 * is optional); each component is 1..255 bytes (-ENAMETOOLONG), "." and
 * ".." are refused (-EINVAL).  A snapshot NAME is the subvolume entry
 * "/NAME" of the root directory (as btrfs's): "/NAME/..." reaches the
 * snapshot (writes into a read-only one: -EROFS; a rename between it
 * and another subvolume: -EXDEV); the entry itself cannot be
 * unlinked or removed (-EPERM) nor renamed or replaced (-EXDEV).  An
 * earlier snapshot's entry a later one copied reads as an empty
 * directory (inode 2), as the kernel shows it.  Every call returns 0 (or a
 * byte count where stated) or -errno as POSIX would: -ENOENT, -EEXIST,
 * -ENOTDIR, -EISDIR, -ENOTEMPTY, -ENAMETOOLONG, -ENOSPC, -EROFS, -EIO
 * (checksum mismatch or device error), -EINVAL, -ENOMEM, -EBADF (write on
 * a read-only handle).  Thread-safe: any number of threads may call these
 * on one fs at once.
 *
 * Data: every write is copy-on-write into new data extents (one extent per
 * device write command, at most the device's max append size), with a
 * crc32c per 4 KiB block in the checksum tree, verified on every read.
 * With zone append (default) the file extent and checksum items take the
 * address the device returned.  Overwritten extents become zone_unusable.
 *
 * Times (struct zcow_timespec, the mount's clock): all four at creation;
 * mtime and ctime on a write or truncate of a file and on an entry added
 * or removed in a directory; ctime alone on chmod, chown, utimens, a
 * link-count change and a rename of the inode; atime on a read (relatime,
 * zcow_pread()).  fsync makes every change but an atime-only one durable.
 */
struct zcow_file;

/* zcow_open flags (O_ACCMODE, O_CREAT, O_EXCL, O_TRUNC of <fcntl.h>). */

/* zcow_utimens() nanosecond values, as UTIME_NOW and UTIME_OMIT. */
#define ZCOW_UTIME_NOW		((1u << 30) - 1)
#define ZCOW_UTIME_OMIT		((1u << 30) - 2)

/* Who makes an inode (NULL: uid 0, gid 0). */
struct zcow_cred {
	uint32_t uid, gid;
};

/* zcow_rename2() flags, as renameat2's RENAME_NOREPLACE, RENAME_EXCHANGE. */
#define ZCOW_RENAME_NOREPLACE	1u
#define ZCOW_RENAME_EXCHANGE	2u
/* zcow_setxattr() flags, as XATTR_CREATE, XATTR_REPLACE. */
#define ZCOW_XATTR_CREATE	1u
#define ZCOW_XATTR_REPLACE	2u

/* An inode, as zcow_stat() and zcow_fstat() give it. */
struct zcow_stat {
	uint64_t ino;
	uint32_t mode;		/* type (S_IFREG, S_IFDIR) | permission bits */
	uint32_t nlink;
	uint64_t size;		/* bytes */
	uint64_t nbytes;	/* bytes of data extents referenced */
	uint64_t generation;	/* transaction that created it */
	uint64_t transid;	/* last transaction that changed it */
	uint32_t uid, gid;
	uint64_t rdev;		/* 0: zcow makes no device nodes */
	struct zcow_timespec atime, mtime, ctime, otime;
};

/*
 * Why an fsync fell back to a full commit (zcow_statfs
 * nr_log_fallbacks_by[], named by zcow_log_fallback_name()).  A log may
 * reference only block groups whose chunks the committed chunk tree
 * holds: replay maps nothing else (docs/format.md, "Fallback to a full
 * commit").
 */
enum zcow_log_fallback {
	ZCOW_LOG_FB_NO_LOG_GROUP,	/* no tree-log group yet: the
					 * commit readies one */
	ZCOW_LOG_FB_NEW_DATA_CHUNK,	/* a logged file extent lies in a
					 * chunk of the running transaction */
	ZCOW_LOG_FB_NEW_LOG_CHUNK,	/* the log's nodes needed a chunk of
					 * the running transaction */
	ZCOW_LOG_FB_NEW_SYSTEM_CHUNK,	/* a system chunk is new: the log's
					 * superblock would carry it */
	ZCOW_LOG_FB_TOO_MANY_INODES,	/* more than the log takes */
	ZCOW_LOG_FB_NOT_RECORDED,	/* changes not recorded (no memory) */
	ZCOW_LOG_FB_BUILD_ERROR,	/* building the log failed */
	ZCOW_LOG_NR_FALLBACKS
};

/* The name of fallback cause @i ("no_log_group", "new_data_chunk",
 * "new_log_chunk", "new_system_chunk", "too_many_inodes",
 * "not_recorded", "build_error"), NULL past the last. */
const char *zcow_log_fallback_name(int i);

/* Space and counters of a file system (zcow_statfs()). */
struct zcow_statfs {
	uint64_t bsize;		/* 4096 */
	uint64_t total;		/* bytes outside the superblock zones */
	uint64_t data_used;	/* bytes referenced by data extents */
	uint64_t meta_used;	/* metadata + system bytes used */
	uint64_t zone_unusable;	/* freed below the write pointers */
	uint64_t free;		/* allocatable bytes, data or metadata */
	uint64_t nr_inodes;	/* next free inode number - 256 */
	uint64_t nr_appends;	/* data zone appends since mount */
	uint64_t nr_appends_moved; /* of which landed elsewhere than the
				    * reservation (device reordered them) */
	uint64_t nr_data_writes; /* plain data writes since mount */
	/* fsync (issue 9), since mount */
	uint64_t nr_fsyncs;	/* fsync + fdatasync calls that wrote */
	uint64_t nr_log_syncs;	/* ... answered by a tree-log write */
	uint64_t nr_log_fallbacks; /* ... that could not be logged: full
				    * commit (treelog=on only) */
	uint64_t nr_log_fallbacks_by[ZCOW_LOG_NR_FALLBACKS]; /* ... by
				    * cause (enum zcow_log_fallback) */
	uint64_t nr_commits;	/* full transaction commits */
	uint64_t log_replayed;	/* inodes replayed from a log at mount */
	bool log_lost;		/* mount ignored a corrupt log: the fsyncs
				 * it held are lost */
	/* reclaim (docs/reclaim.md), since mount */
	uint64_t nr_groups_relocated;	/* data and metadata groups emptied */
	uint64_t reloc_data_bytes;	/* data copied by relocation */
	uint64_t reloc_meta_bytes;	/* tree nodes moved by relocation */
	uint64_t nr_zones_reset;	/* zones of removed groups reset */
	uint64_t reclaimable;	/* freed bytes relocation could win back */
};

/* One directory entry (zcow_readdir()). */
struct zcow_dirent {
	uint64_t ino;
	uint8_t type;		/* btrfs FT_*: 1 regular file, 2 directory,
				 * 7 symlink */
	uint64_t off;		/* its DIR_INDEX (zcow_readdir_at()) */
	char name[256];
};

/* Parse "ro,zone_append=off,commit_bytes=64M" into @opts (adds to it).
 * nodatacow/nodatasum are refused: -EINVAL with a message. */
int zcow_mount_opts_parse(const char *s, struct zcow_mount_opts *opts);
/* One mount option as the help lists it: its name, its value ("on|off",
 * "N", ...; NULL when it takes none) and one line of help. */
struct zcow_mount_opt_doc {
	const char *name;
	const char *value;
	const char *help;
};
/* The @i-th mount option of the table (core/mount_opts.c), NULL past the
 * last. */
const struct zcow_mount_opt_doc *zcow_mount_opt_doc(unsigned int i);

/* Create a regular file (O_CREAT|O_EXCL|O_RDWR).  Errors as above. */
int zcow_create(struct zcow_fs *fs, const char *path,
		struct zcow_file **file_ret);
/* Open a file or directory (directories: O_RDONLY only, else -EISDIR). */
int zcow_open(struct zcow_fs *fs, const char *path, int flags,
	      struct zcow_file **file_ret);
/*
 * A file with permission bits @mode (& 07777; S_IFREG or no type bits,
 * else -EINVAL) owned by @cred (NULL: uid 0, gid 0) when O_CREAT makes
 * it.  @flags: O_ACCMODE, O_CREAT, O_EXCL, O_TRUNC, O_APPEND only
 * (anything else: -EINVAL).  O_APPEND: every zcow_pwrite() on the handle
 * writes at the end of the file, the offset ignored (as pwrite(2) on an
 * O_APPEND descriptor on Linux), atomically: appends never overlap.
 * zcow_open() is zcow_open_as(.., 0644, NULL, ..).
 */
int zcow_open_as(struct zcow_fs *fs, const char *path, int flags,
		 uint32_t mode, const struct zcow_cred *cred,
		 struct zcow_file **file_ret);
/* Free the handle; outstanding writes stay the file system's (zcow_sync
 * waits for them).  Returns 0. */
int zcow_close(struct zcow_file *file);
/* Returns bytes read (short at end of file) or -errno.  A read of at
 * least one byte updates the atime as the mount's atime mode says (the
 * default, relatime: when it is not after the mtime or the ctime, or is
 * a day old; noatime: never; strictatime: always), except in a
 * read-only mount or snapshot; that change dirties the running
 * transaction but is not logged by zcow_fsync() (the next commit makes
 * it durable). */
int64_t zcow_pread(struct zcow_file *file, void *buf, uint64_t len,
		   uint64_t off);
/* Returns @len or -errno.  A failed write may leave a prefix of whole
 * extents written; with -ENOSPC only whole pieces of the largest extent
 * (a write of up to one piece changed nothing).  @buf must not change
 * while the call runs: whole blocks go to the device from it, after
 * their checksums were computed from it. */
int64_t zcow_pwrite(struct zcow_file *file, const void *buf, uint64_t len,
		    uint64_t off);
/* Set the file's size: extents beyond it are dropped, a grown tail reads
 * as zeros.  -EISDIR, -EBADF (read-only handle), -EROFS. */
int zcow_truncate(struct zcow_file *file, uint64_t size);
/* Wait for the file's outstanding appends, then make its changes durable:
 * through the tree-log (treelog on), else a full commit. */
int zcow_fsync(struct zcow_file *file);
/* As zcow_fsync() (the inode item holds the size, logged as fsync logs
 * it). */
int zcow_fdatasync(struct zcow_file *file);
/*
 * Log-sync batching, as btrfs batches fsyncs that wait on the log: put
 * @file's changes into the tree-log now and let the next zcow_fsync() of
 * any file write them (its return makes them durable).  Returns 1 (joined:
 * durable once that fsync returns), 0 (durable already: nothing to do),
 * -EAGAIN (only a full commit can: call zcow_fsync() on it instead), or
 * -errno.  The workload runner models concurrent fsyncs with it.
 */
int zcow_fsync_join(struct zcow_file *file);
/* No preallocation or hole punching on zoned storage, as btrfs refuses
 * fallocate in every mode there: -EOPNOTSUPP (logged at debug level). */
int zcow_fallocate(struct zcow_file *file, uint64_t off, uint64_t len);
/* nodatacow (chattr +C) is refused: -EOPNOTSUPP, with a message. */
int zcow_set_nodatacow(struct zcow_file *file);
/* The inode of an open file into @st. */
int zcow_fstat(struct zcow_file *file, struct zcow_stat *st);

/* Remove a file's name; its data is freed with its last name (-EISDIR on
 * a directory). */
int zcow_unlink(struct zcow_fs *fs, const char *path);
/*
 * zcow_unlink() of a name whose inode the caller holds open (unlink(2) of
 * an open file): when it removes the last name of a regular file of the
 * fs tree, the inode stays with nlink 0, recorded in the same transaction
 * by an orphan item (btrfs's ORPHAN_ITEM, docs/format.md); the caller's
 * handles keep reading and writing it, and zcow_orphan_release() at its
 * last close deletes it.  An orphan left by a crash or a failed release is
 * deleted by the next read-write mount.  Any other name (another link
 * left, not a regular file, a snapshot's file) is unlinked as by
 * zcow_unlink().  Returns 1 when the inode became an orphan, 0 when the
 * name was unlinked as by zcow_unlink(), or zcow_unlink()'s -errno.
 */
int zcow_unlink_open(struct zcow_fs *fs, const char *path);
/*
 * The caller's last handle of an inode goes: call before its
 * zcow_close().  If the inode is an orphan (zcow_unlink_open()), its
 * extents, xattrs, inode item and orphan item are removed.  0 (also when
 * it is not an orphan: nothing done), -ENOSPC, -EIO, -EROFS; on an error
 * the orphan stays, for the next read-write mount to delete.
 */
int zcow_orphan_release(struct zcow_file *file);
/*
 * The orphan items of the last committed fs tree (inodes unlinked while
 * open, not yet deleted) into *@nr_ret.  0, -EINVAL (no trees), -ENOMEM or
 * a tree errno.  Reads only: any mount.
 */
int zcow_nr_orphans(struct zcow_fs *fs, uint64_t *nr_ret);
/* Make a directory (mode 0755); its parent must exist. */
int zcow_mkdir(struct zcow_fs *fs, const char *path);
/* zcow_mkdir() with permission bits @mode (& 07777; S_IFDIR or no type
 * bits, else -EINVAL) owned by @cred (NULL: uid 0, gid 0). */
int zcow_mkdir_as(struct zcow_fs *fs, const char *path, uint32_t mode,
		  const struct zcow_cred *cred);
/*
 * Inode attributes (the inode's ctime becomes now with each):
 * zcow_chmod(): the permission bits become @mode & 07777 (the type bits
 * stay).  zcow_chown(): uid and gid, (uint32_t)-1 leaves one unchanged;
 * of a non-directory S_ISUID is cleared, and S_ISGID when S_IXGRP is set
 * (Linux's chown_common + notify_change).  zcow_utimens(): @ts[0] atime,
 * @ts[1] mtime, nsec ZCOW_UTIME_NOW (now) or ZCOW_UTIME_OMIT (unchanged),
 * @ts NULL = both now; both OMIT changes nothing; nsec >= 10^9 otherwise:
 * -EINVAL.  -ENOENT, -EROFS (read-only mount or snapshot), -EIO.
 */
int zcow_chmod(struct zcow_fs *fs, const char *path, uint32_t mode);
int zcow_chown(struct zcow_fs *fs, const char *path, uint32_t uid,
	       uint32_t gid);
int zcow_utimens(struct zcow_fs *fs, const char *path,
		 const struct zcow_timespec ts[2]);
/* zcow_truncate() of the file at @path (-EISDIR on a directory). */
int zcow_truncate_path(struct zcow_fs *fs, const char *path, uint64_t size);
/* Remove an empty directory (-ENOTEMPTY, -ENOTDIR). */
int zcow_rmdir(struct zcow_fs *fs, const char *path);
/* Atomic within the transaction; replaces an existing target (file over
 * file, empty dir over dir). */
int zcow_rename(struct zcow_fs *fs, const char *from, const char *to);
/*
 * renameat2(2): @flags 0 (zcow_rename()), ZCOW_RENAME_NOREPLACE (-EEXIST
 * when @to exists) or ZCOW_RENAME_EXCHANGE (both names must exist,
 * -ENOENT otherwise; they swap inodes atomically, a file with a
 * directory and across directories too; a directory into its own
 * subtree: -EINVAL); both flags or an unknown one: -EINVAL.  The moved
 * inodes' ctime and both directories' mtime and ctime become now.
 */
int zcow_rename2(struct zcow_fs *fs, const char *from, const char *to,
		 unsigned int flags);
/* The entries of a directory, sorted by name, in *ents_ret (free()); a
 * snapshot's entry has type 2 and ino its root id (the entry's location,
 * as the kernel's readdir reports it). */
int zcow_readdir(struct zcow_fs *fs, const char *path,
		 struct zcow_dirent **ents_ret, uint64_t *nr_ret);
/*
 * At most @max entries of the directory @path in DIR_INDEX order, from
 * index @from on (0: the first), in *ents_ret (free(); NULL when none)
 * and their number in *nr_ret; each entry's off is its index (stable
 * while the entry exists; continue from off + 1).  "." and ".." are not
 * listed.  -ENOTDIR, -ENOENT.
 */
int zcow_readdir_at(struct zcow_fs *fs, const char *path, uint64_t from,
		    uint64_t max, struct zcow_dirent **ents_ret,
		    uint64_t *nr_ret);
/*
 * Links and symlinks (btrfs's items: core/link.c).  The core follows no
 * symlink: zcow_open() of one is -ELOOP (as O_NOFOLLOW), one in the
 * middle of a path -ENOTDIR.
 *
 * zcow_link(): a new name @to for the inode at @from.  0, -EEXIST,
 * -ENOENT, -EPERM (a directory or subvolume), -EXDEV (across
 * subvolumes), -EMLINK (65535 names, or the inode's INODE_REF item of the
 * new parent would not fit a leaf: zcow writes no extended refs), -EROFS.
 * zcow_unlink() of one name of several removes that name only; the
 * inode goes with its last (open handles included, as before).
 * zcow_symlink(): a symlink at @path to @target (1..4095 bytes and what
 * a leaf's inline extent holds: -ENAMETOOLONG; "" -ENOENT), mode
 * S_IFLNK | 0777, owned by @cred (NULL: 0, 0).  Errors of zcow_link().
 * zcow_readlink(): the target into @buf (not terminated, truncated to
 * @size): the bytes copied; -EINVAL if @path is not a symlink or @size
 * is 0.
 */
int zcow_link(struct zcow_fs *fs, const char *from, const char *to);
int zcow_symlink(struct zcow_fs *fs, const char *target, const char *path,
		 const struct zcow_cred *cred);
int64_t zcow_readlink(struct zcow_fs *fs, const char *path, char *buf,
		      uint64_t size);

/*
 * Extended attributes (XATTR_ITEMs: core/xattr.c) of files, directories
 * and symlinks.  Names "user.", "trusted.", "security." + 1.. bytes, 255
 * in all (-ERANGE; other prefixes -EOPNOTSUPP; a bare prefix -EINVAL);
 * user.* only on files and directories (set: -EPERM, get: -ENODATA).
 * zcow_setxattr(): flags 0, ZCOW_XATTR_CREATE (-EEXIST), _REPLACE
 * (-ENODATA); a value above 65536 bytes -E2BIG, name + value past
 * what one leaf item holds -ENOSPC (btrfs's BTRFS_MAX_XATTR_SIZE).
 * zcow_getxattr(): the value's length (@size 0: only the length);
 * -ERANGE when it passes @size; -ENODATA when absent.
 * zcow_listxattr(): the names, each NUL-terminated, in hash order; the
 * same size rules.  zcow_removexattr(): 0 or -ENODATA.
 */
int zcow_setxattr(struct zcow_fs *fs, const char *path, const char *name,
		  const void *value, uint64_t size, unsigned int flags);
int64_t zcow_getxattr(struct zcow_fs *fs, const char *path, const char *name,
		      void *buf, uint64_t size);
int64_t zcow_listxattr(struct zcow_fs *fs, const char *path, char *buf,
		       uint64_t size);
int zcow_removexattr(struct zcow_fs *fs, const char *path, const char *name);
/* The inode at @path into @st (a snapshot "/NAME": its root directory,
 * inode 256 of its tree). */
int zcow_stat(struct zcow_fs *fs, const char *path, struct zcow_stat *st);
/* The file system's space and counters into @st.  -EINVAL without a file
 * layer (a superblock-only mount). */
int zcow_statfs(struct zcow_fs *fs, struct zcow_statfs *st);
/* Wait for every outstanding write, then commit. */
int zcow_sync(struct zcow_fs *fs);
/*
 * A read-only snapshot NAME of the fs tree (new root objectid >= 256,
 * *id_ret may be NULL), sharing every data extent by reference count,
 * linked as the subvolume entry "/NAME" of the root directory.  Committed
 * at once.  -EEXIST if "/NAME" exists (file, directory or snapshot).
 */
int zcow_snapshot(struct zcow_fs *fs, const char *name, uint64_t *id_ret);
/*
 * A snapshot NAME of the fs tree as zcow_snapshot(), read-only or (as
 * btrfs subvolume snapshot without -r) writable: files under /NAME are
 * then written, created, renamed inside it (-EXDEV across subvolumes)
 * and removed as the top level's; fsync there commits (the tree-log logs
 * the top level only).
 */
int zcow_subvol_snapshot(struct zcow_fs *fs, const char *name, bool is_rdonly,
			 uint64_t *id_ret);
/*
 * Delete the snapshot NAME (btrfs subvolume delete, done at once rather
 * than by a cleaner): the nodes only it references are freed, with the
 * data extents only they reference; nodes other trees share lose its
 * reference.  Committed at once.  -ENOENT if there is no such snapshot,
 * -EROFS, -ENOSPC, -EIO.
 */
int zcow_subvol_delete(struct zcow_fs *fs, const char *name);

/* A subvolume under the top level (zcow_subvol_list()): its root
 * objectid, its ROOT_ITEM's generation (the transaction that last
 * changed its tree), the transaction that made it, whether it is
 * read-only (BTRFS_ROOT_SUBVOL_RDONLY), and its name. */
struct zcow_subvol {
	uint64_t id, gen, otransid;
	bool is_rdonly;
	char name[256];
};
/*
 * The subvolumes under the top level (its ROOT_REF items, in id order;
 * the top level itself, id 5, is not one of them), as `btrfs subvolume
 * list` shows them, in *v_ret (free(); NULL when there are none) and
 * their number in *nr_ret.  Returns 0, -EINVAL (no file layer),
 * -EUCLEAN (a ROOT_REF is corrupt or has no ROOT_ITEM), -ENOMEM or the
 * tree's read errors.
 */
int zcow_subvol_list(struct zcow_fs *fs, struct zcow_subvol **v_ret,
		     uint64_t *nr_ret);

#endif /* ZCOW_ZCOW_H */
