/* SPDX-License-Identifier: MIT */
/*
 * reclaim: zone garbage collection of zcow -- relocation of block groups
 * (the mechanism, core/relocation.c, btrfs's relocation.c) and the
 * policies that choose which groups to relocate and when
 * (core/reclaim.c, btrfs's block-group.c reclaim and zoned.c).
 *
 * What it is: on a zoned device freed space stays below the write pointer
 * (zone_unusable, seed 005) until the whole zone is reset, which is
 * possible only when nothing in its group is used.  Relocation makes a
 * group empty: its live data extents are copied with plain writes into
 * the dedicated data relocation group (fs->reloc_bg; their checksums and
 * every reference, snapshots included, follow them), its live tree nodes
 * are copied on write to other metadata groups.  Relocation commits
 * nothing: the next commit, whatever starts it, makes the copies durable,
 * removes the emptied group and, only after its superblock, resets the
 * group's zones (ORDER as seed 005).  A power cut before that commit
 * leaves the old copies referenced and intact.  The policies (enum
 * zcow_reclaim in include/zcow.h, one row each in core/reclaim.c)
 * decide which groups and when.
 *
 * What it is not: allocation.  Groups being relocated take no new
 * allocation (is_relocating, core/volumes.c); the data relocation group
 * takes none but relocation's (is_data_reloc).
 *
 * Locking: every function runs under files->lock, mount's before the fs
 * is shared.
 *
 * Who may include it: core/ and tests/.
 */
#ifndef ZCOW_RECLAIM_H
#define ZCOW_RECLAIM_H

#include <stdbool.h>
#include <stdint.h>

struct zcow_fs;
struct zcow_bg;

/* ---- the mechanism (core/relocation.c) --------------------------------- */

/*
 * Relocate the @nr groups @v (data or metadata; not system, not the
 * tree-log or data relocation group, nothing reserved in them).  No
 * commit: an emptied group is marked is_cleaned (pending), the next
 * commit removes it and resets its zones after its superblock.  Groups
 * that could not be emptied take allocations again.
 * Returns 0 (at least one group emptied; a group that found no room for
 * its copies or their metadata keeps what it still holds), -ENOSPC (none
 * could be emptied: what was moved stays moved), -EUCLEAN (a checksum mismatch in data being moved:
 * that extent stays), or a device/commit errno.  The counters of
 * fs->rstats grow.
 */
int zcow_relocate_bgs_locked(struct zcow_fs *fs, struct zcow_bg **v,
			     uint64_t nr);

/* Bytes the data relocation group and the zones it may still take have
 * room for (what the live data of victims may add up to). */
uint64_t zcow_reloc_room(struct zcow_fs *fs);

/* Tree nodes relocating metadata group @bg may allocate (its live nodes,
 * their ancestors, the roots): what its admission checks. */
uint64_t zcow_reloc_meta_nodes(struct zcow_fs *fs, const struct zcow_bg *bg);

/* ---- the policies (core/reclaim.c) ------------------------------------- */

/* The zones, free or pending, the cleaner keeps (reserves included). */
uint64_t zcow_reclaim_high_zones(struct zcow_fs *fs);
/* Mount: the policy and threshold of @opts (0 = defaults). */
void zcow_reclaim_init(struct zcow_fs *fs, int policy, uint32_t threshold,
		       uint32_t high);

/* Zones held back for the data relocation group: 1 while reclaim is on
 * and the relocation group, if any, is neither empty nor has room for the
 * live data of the least-live data candidate, else 0 (core/zoned.c counts
 * it out of what data and metadata may take). */
uint64_t zcow_reclaim_held_zones(struct zcow_fs *fs);

/* May relocation empty @bg (a data or metadata group written full or
 * finished, not special, nothing reserved)? */
bool zcow_reclaim_is_candidate(struct zcow_fs *fs, const struct zcow_bg *bg);

/* Bytes freed in @bg (zone_unusable less the capacity gap, and pinned). */
uint64_t zcow_bg_garbage(const struct zcow_bg *bg);

/* Bytes freed in the data and metadata groups relocation may empty (not
 * the tree-log group, not system groups): zcow_fs_info's reclaimable. */
uint64_t zcow_reclaimable(struct zcow_fs *fs);

/*
 * The candidates of the mount's policy, in its order (greedy: fewest live
 * bytes first; cost-benefit: highest age x (1 - u) / (1 + u) first;
 * threshold: those over the threshold, fewest live first), into a
 * malloc'ed *@v_ret (the caller frees it).  0 or -ENOMEM.
 */
int zcow_reclaim_victims(struct zcow_fs *fs, struct zcow_bg ***v_ret,
			 uint64_t *nr_ret);

/* The data's live bytes, the bytes it cycles through (data groups not
 * emptied, and the zones data may open, pending ones counted) and the
 * pending zones (zcow_fs_info). */
void zcow_reclaim_data_space(struct zcow_fs *fs, uint64_t *live_ret,
			     uint64_t *space_ret, uint64_t *pending_ret);

/* When the policy's hook runs. */
enum zcow_reclaim_when {
	ZCOW_RECLAIM_AT_COMMIT,	/* a commit of the file layer ended */
	ZCOW_RECLAIM_AT_PICK,	/* a data pick starts */
	ZCOW_RECLAIM_SHORT,	/* a data pick found no room */
	ZCOW_RECLAIM_META_SHORT, /* a metadata reservation found no room,
				  * even after a commit */
};

/*
 * The policy's hook: clean if the policy asks for it now -- threshold:
 * after a commit, every group over the threshold, then a commit; the
 * just-in-time policies (greedy, cost-benefit, hotcold-greedy): when a
 * data slot needs a zone, after a commit, or when room ran short, the
 * cleaner of core/reclaim.c:clean_jit.  With reclaim=off, inside a
 * pass, or when nothing changed since a pass found nothing to do:
 * nothing.  Returns 0 (also when nothing was relocated), or a
 * device/commit errno.
 */
int zcow_reclaim_locked(struct zcow_fs *fs, enum zcow_reclaim_when when);

/*
 * Room ran short (@when: ZCOW_RECLAIM_SHORT or _META_SHORT): unless a
 * commit would free something already (pinned bytes, emptied groups),
 * clean first; then commit, which resets what was emptied.  Returns 0,
 * -ENOSPC when nothing could be freed, or a device/commit errno.
 */
int zcow_reclaim_commit_locked(struct zcow_fs *fs, enum zcow_reclaim_when when);

/*
 * The background cleaner (zcow_mount_opts.cleaner): start it at mount
 * (@cleaner ZCOW_CLEANER_THREAD: its thread; a read-only mount: the
 * writer, who never cleans).  Returns 0, -EINVAL or the thread's errno.
 * zcow_cleaner_stop() joins the thread (idempotent), before the last
 * commit and before the file layer goes.
 */
int zcow_cleaner_start(struct zcow_fs *fs, int cleaner);
void zcow_cleaner_stop(struct zcow_fs *fs);

#endif /* ZCOW_RECLAIM_H */
