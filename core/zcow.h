/* SPDX-License-Identifier: MIT */
/*
 * zcow: the file system (skeleton: mkfs, mount, commit, unmount).
 *
 * Today a zcow file system is its superblock log (core/sb.h); later issues
 * add the trees, allocation and data paths behind the same entry points.
 * What it is not: a device layer (core/zdev.h) or a tool (harness/).
 *
 * Who may include this: core/, harness/, tests/.
 */
#ifndef ZCOW_ZCOW_H
#define ZCOW_ZCOW_H

#include <stdbool.h>
#include <stdint.h>

#include "sb.h"
#include "zdev.h"

/* btrfs-progs' minimum for -m single -d single (mkfs/common.c): 2 zones
 * for the primary superblock log + system, metadata and data block groups
 * + a tree-log zone + a data-relocation zone. */
#define ZCOW_MIN_ZONES		7
#define ZCOW_MIN_ZONE_SIZE	(4ULL << 20)	/* 4 MiB, as btrfs */
#define ZCOW_MAX_ZONE_SIZE	(8ULL << 30)	/* 8 GiB, as btrfs */
#define ZCOW_SECTORSIZE		4096u
#define ZCOW_DEFAULT_NODESIZE	16384u

/* mkfs options; a zeroed struct is valid. */
struct zcow_mkfs_opts {
	const char *label;	/* NULL = empty; at most 255 bytes */
	uint32_t nodesize;	/* bytes, power of two 4 KiB..64 KiB; 0 = 16 KiB */
	enum zcow_sb_placement placement; /* 0 = seed placement */
	uint64_t seed;		/* seeds the fsid/device uuid PRNG (0 is a
				 * seed too: same seed, same uuids) */
};

/* mount options; a zeroed struct is valid. */
struct zcow_mount_opts {
	bool read_only;		/* true: never write (unmount commits nothing) */
};

/* A mounted file system. */
struct zcow_fs {
	struct zdev *dev;
	struct zcow_super_block sb;	/* last committed, on-disk byte order */
	struct zcow_sb_copy found;	/* where mount found it */
	enum zcow_sb_placement placement;
	uint64_t generation;		/* last committed generation */
	bool read_only;
	int error;			/* != 0: a commit failed; no more writes */
};

/*
 * Make a file system on @dev: check the geometry, reset every non-empty
 * sequential zone, write generation 1 to every mirror.  Returns 0, -EINVAL
 * (geometry or option refused, with a message), or a device -errno.
 */
int zcow_mkfs(struct zdev *dev, const struct zcow_mkfs_opts *opts);

/*
 * Mount: locate the newest valid superblock, check it.  Returns 0 and
 * *fs_ret, -ENOENT (no superblock), -EUCLEAN (corrupt, with a message),
 * -EOPNOTSUPP (features zcow cannot handle), -ENOMEM, or a device -errno.
 */
int zcow_mount(struct zdev *dev, const struct zcow_mount_opts *opts,
	       struct zcow_fs **fs_ret);

/*
 * Commit a new superblock generation (generation + 1) to every mirror.
 * Returns 0, -EROFS (read-only or after a failed commit), or the error of
 * zcow_sb_write_all(); a failed commit puts the fs in the error state.
 */
int zcow_commit_super(struct zcow_fs *fs);

/*
 * Unmount: commit a new generation (unless read-only or in the error
 * state) and free @fs.  The device stays open.  Returns 0 or the commit's
 * error (@fs is freed either way).
 */
int zcow_unmount(struct zcow_fs *fs);

#endif /* ZCOW_ZCOW_H */
