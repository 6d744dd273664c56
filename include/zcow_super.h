/* SPDX-License-Identifier: MIT */
/*
 * zcow_super: the on-disk superblock and the superblock log, read-only,
 * for tools that inspect a device (zcow dump-super, mkfs's report).
 *
 * The superblock is btrfs's (struct btrfs_super_block, 4096 bytes,
 * little-endian, packed), so btrfs-progs can read it and zcow can read a
 * superblock log written by the Linux kernel.  It is public because it is
 * a format, not a state: this header gives its layout, where its mirrors
 * live (a fixed copy, or a log in a pair of sequential zones), and the
 * calls that locate and read copies.  Writing superblocks stays internal
 * to core/ (core/sb.h): only a commit writes one.
 *
 * What it is not: the file system's API (include/zcow.h, included here)
 * or the mounted state (zcow_fs_info() there; zcow_fs_super() below gives
 * a mount's superblock).
 *
 * Who may include this: anyone.  Format: docs/format.md.
 */
#ifndef ZCOW_ZCOW_SUPER_H
#define ZCOW_ZCOW_SUPER_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcow.h"
#include "zdev.h"

#define ZCOW_SB_SIZE		4096u	/* BTRFS_SUPER_INFO_SIZE */
#define ZCOW_SB_CSUM_SIZE	32u	/* BTRFS_CSUM_SIZE */
#define ZCOW_SB_MAGIC		0x4d5f53665248425fULL	/* "_BHRfS_M" */
#define ZCOW_SB_MIRROR_MAX	3	/* BTRFS_SUPER_MIRROR_MAX */
#define ZCOW_SB_LOG_ZONES	2	/* zones per mirror (a ring of two) */
#define ZCOW_SB_LABEL_SIZE	256
#define ZCOW_SB_SYS_ARRAY_SIZE	2048
#define ZCOW_CSUM_TYPE_CRC32C	0

/* btrfs_super_block.flags */
#define ZCOW_SUPER_FLAG_WRITTEN		(1ULL << 0)
#define ZCOW_SUPER_FLAG_RELOC		(1ULL << 1)
#define ZCOW_SUPER_FLAG_ERROR		(1ULL << 2)
#define ZCOW_SUPER_FLAG_SEEDING		(1ULL << 32)
#define ZCOW_SUPER_FLAG_METADUMP	(1ULL << 33)
#define ZCOW_SUPER_FLAG_METADUMP_V2	(1ULL << 34)
#define ZCOW_SUPER_FLAG_CHANGING_FSID	(1ULL << 35)
#define ZCOW_SUPER_FLAG_CHANGING_FSID_V2 (1ULL << 36)
#define ZCOW_SUPER_FLAG_CHANGING_BG_TREE (1ULL << 38)
#define ZCOW_SUPER_FLAG_CHANGING_DATA_CSUM (1ULL << 44)
#define ZCOW_SUPER_FLAG_CHANGING_META_CSUM (1ULL << 45)
/*
 * Where the superblock mirrors are (docs/format.md): the seed placement
 * (zones 16 and min(256 GiB / zone size, 1024)) is recorded as the 8 bytes
 * ZCOW_SB_SEED_TAG at the end of the superblock's padding
 * (ZCOW_SB_PLACEMENT_OFF), which btrfs neither uses nor checks:
 * btrfs-progs' dump-super does not print it, its check does not read it,
 * and the kernel keeps the 4 KiB it read when it writes the superblock
 * back.  Zeros there: the placement of today's kernels (512 GiB, 4 TiB),
 * so a kernel-made file system reads as what it is.
 * The seed placement also sets flags bit 56 (ZCOW_SUPER_FLAG_SEED_PLACEMENT),
 * a flag the kernel does not know and so refuses to mount: the kernel
 * would take the seed mirrors' zones (16, 17, ...) for free space and
 * allocate block groups in them, which zcow's next commit overwrites.
 * btrfs-progs' dump-super names the bit an unknown flag; its check does
 * not mind.  The kernel placement sets neither.
 */
#define ZCOW_SUPER_FLAG_SEED_PLACEMENT	(1ULL << 56)
#define ZCOW_SB_PLACEMENT_OFF	0xff8
#define ZCOW_SB_SEED_TAG	"ZCOWSEED"	/* 8 bytes, no NUL */

/* btrfs incompat / compat_ro bits that dump-super names. */
#define ZCOW_INCOMPAT_MIXED_BACKREF	(1ULL << 0)
#define ZCOW_INCOMPAT_DEFAULT_SUBVOL	(1ULL << 1)
#define ZCOW_INCOMPAT_MIXED_GROUPS	(1ULL << 2)
#define ZCOW_INCOMPAT_COMPRESS_LZO	(1ULL << 3)
#define ZCOW_INCOMPAT_COMPRESS_ZSTD	(1ULL << 4)
#define ZCOW_INCOMPAT_BIG_METADATA	(1ULL << 5)
#define ZCOW_INCOMPAT_EXTENDED_IREF	(1ULL << 6)
#define ZCOW_INCOMPAT_RAID56		(1ULL << 7)
#define ZCOW_INCOMPAT_SKINNY_METADATA	(1ULL << 8)
#define ZCOW_INCOMPAT_NO_HOLES		(1ULL << 9)
#define ZCOW_INCOMPAT_METADATA_UUID	(1ULL << 10)
#define ZCOW_INCOMPAT_RAID1C34		(1ULL << 11)
#define ZCOW_INCOMPAT_ZONED		(1ULL << 12)
#define ZCOW_INCOMPAT_EXTENT_TREE_V2	(1ULL << 13)
#define ZCOW_INCOMPAT_RAID_STRIPE_TREE	(1ULL << 14)
#define ZCOW_INCOMPAT_SIMPLE_QUOTA	(1ULL << 16)
#define ZCOW_COMPAT_RO_FREE_SPACE_TREE	(1ULL << 0)
#define ZCOW_COMPAT_RO_FREE_SPACE_TREE_VALID (1ULL << 1)
#define ZCOW_COMPAT_RO_VERITY		(1ULL << 2)
#define ZCOW_COMPAT_RO_BLOCK_GROUP_TREE	(1ULL << 3)

#define ZCOW_ROOT_TREE_DIR_OBJECTID	6ULL

/* struct btrfs_dev_item, 98 bytes (offsets relative to its start). */
struct zcow_dev_item {
	uint64_t devid;			/* 0x00 */
	uint64_t total_bytes;		/* 0x08 */
	uint64_t bytes_used;		/* 0x10 */
	uint32_t io_align;		/* 0x18 */
	uint32_t io_width;		/* 0x1c */
	uint32_t sector_size;		/* 0x20 */
	uint64_t type;			/* 0x24 */
	uint64_t generation;		/* 0x2c */
	uint64_t start_offset;		/* 0x34 */
	uint32_t dev_group;		/* 0x3c */
	uint8_t seek_speed;		/* 0x40 */
	uint8_t bandwidth;		/* 0x41 */
	uint8_t uuid[16];		/* 0x42 */
	uint8_t fsid[16];		/* 0x52 */
} __attribute__((packed));

/* struct btrfs_root_backup, 168 bytes. */
struct zcow_root_backup {
	uint64_t tree_root;		/* 0x00 */
	uint64_t tree_root_gen;		/* 0x08 */
	uint64_t chunk_root;		/* 0x10 */
	uint64_t chunk_root_gen;	/* 0x18 */
	uint64_t extent_root;		/* 0x20 */
	uint64_t extent_root_gen;	/* 0x28 */
	uint64_t fs_root;		/* 0x30 */
	uint64_t fs_root_gen;		/* 0x38 */
	uint64_t dev_root;		/* 0x40 */
	uint64_t dev_root_gen;		/* 0x48 */
	uint64_t csum_root;		/* 0x50 */
	uint64_t csum_root_gen;		/* 0x58 */
	uint64_t total_bytes;		/* 0x60 */
	uint64_t bytes_used;		/* 0x68 */
	uint64_t num_devices;		/* 0x70 */
	uint64_t unused_64[4];		/* 0x78 */
	uint8_t tree_root_level;	/* 0x98 */
	uint8_t chunk_root_level;	/* 0x99 */
	uint8_t extent_root_level;	/* 0x9a */
	uint8_t fs_root_level;		/* 0x9b */
	uint8_t dev_root_level;		/* 0x9c */
	uint8_t csum_root_level;	/* 0x9d */
	uint8_t unused_8[10];		/* 0x9e */
} __attribute__((packed));

/*
 * struct btrfs_super_block: every integer little-endian on disk (use the
 * le64toh() and htole64() of <endian.h>).  Offsets are checked by the
 * _Static_asserts in sb.c against the kernel's layout and were verified on
 * the kernel-written vectors in tests/data/kernel-sblog/.
 */
struct zcow_super_block {
	uint8_t csum[ZCOW_SB_CSUM_SIZE];	/* 0x000 crc32c of 0x20..0xfff, le */
	uint8_t fsid[16];			/* 0x020 */
	uint64_t bytenr;			/* 0x030 canonical mirror offset */
	uint64_t flags;				/* 0x038 ZCOW_SUPER_FLAG_* */
	uint64_t magic;				/* 0x040 "_BHRfS_M" */
	uint64_t generation;			/* 0x048 */
	uint64_t root;				/* 0x050 */
	uint64_t chunk_root;			/* 0x058 */
	uint64_t log_root;			/* 0x060 */
	uint64_t log_root_transid;		/* 0x068 deprecated */
	uint64_t total_bytes;			/* 0x070 */
	uint64_t bytes_used;			/* 0x078 */
	uint64_t root_dir_objectid;		/* 0x080 */
	uint64_t num_devices;			/* 0x088 */
	uint32_t sectorsize;			/* 0x090 */
	uint32_t nodesize;			/* 0x094 */
	uint32_t leafsize;			/* 0x098 deprecated */
	uint32_t stripesize;			/* 0x09c */
	uint32_t sys_chunk_array_size;		/* 0x0a0 */
	uint64_t chunk_root_generation;		/* 0x0a4 */
	uint64_t compat_flags;			/* 0x0ac */
	uint64_t compat_ro_flags;		/* 0x0b4 */
	uint64_t incompat_flags;		/* 0x0bc */
	uint16_t csum_type;			/* 0x0c4 */
	uint8_t root_level;			/* 0x0c6 */
	uint8_t chunk_root_level;		/* 0x0c7 */
	uint8_t log_root_level;			/* 0x0c8 */
	struct zcow_dev_item dev_item;		/* 0x0c9 98 bytes */
	char label[ZCOW_SB_LABEL_SIZE];		/* 0x12b */
	uint64_t cache_generation;		/* 0x22b */
	uint64_t uuid_tree_generation;		/* 0x233 */
	uint8_t metadata_uuid[16];		/* 0x23b */
	uint64_t nr_global_roots;		/* 0x24b */
	uint64_t reserved[27];			/* 0x253 */
	uint8_t sys_chunk_array[ZCOW_SB_SYS_ARRAY_SIZE]; /* 0x32b */
	struct zcow_root_backup super_roots[4];	/* 0xb2b 4 x 168 bytes */
	uint8_t padding[565];			/* 0xdcb .. 0xfff */
} __attribute__((packed));

/* How one mirror is stored. */
enum zcow_sb_loc_kind {
	ZCOW_SB_LOC_NONE,	/* does not fit the device: skipped */
	ZCOW_SB_LOC_FIXED,	/* one fixed copy, written in place */
	ZCOW_SB_LOC_LOG,	/* a log in two sequential zones */
};

struct zcow_sb_loc {
	int mirror;
	enum zcow_sb_loc_kind kind;
	uint64_t canonical;	/* btrfs_sb_offset(): what bytenr holds */
	uint64_t fixed;		/* FIXED: byte offset of the copy */
	uint64_t zone[ZCOW_SB_LOG_ZONES]; /* the reserved pair (zone starts);
					   * emulated: zone[0] only */
	unsigned int nr_zones;	/* reserved zones of this mirror: 0, 1, 2 */
};

/* One copy found in a mirror (for mount and dump-super). */
struct zcow_sb_copy {
	int mirror;
	uint64_t off;		/* byte offset on the device */
	uint64_t generation;	/* 0 when invalid */
	uint64_t log_seq;	/* log_root_transid: tree-log syncs within
				 * the generation (0 when invalid) */
	bool is_valid;		/* magic, csum, bytenr all good */
	bool is_fallback;	/* newest copy was bad; this is an older one */
};

/*
 * A mirror's log position, decoded from its two zones: what dump-super
 * prints.  @state: 'E' empty, 'I' in use, 'F' full for each zone.
 */
struct zcow_sb_log_pos {
	struct zdev_zone zones[ZCOW_SB_LOG_ZONES];
	char state[ZCOW_SB_LOG_ZONES];
	uint64_t read_off;	/* the newest copy by the table; UINT64_MAX none */
	uint64_t write_off;	/* where the next copy goes */
	int reset;		/* zone index to reset before writing, or -1 */
};

/* btrfs_sb_offset(): 64 KiB, 64 MiB, 256 GiB. */
uint64_t zcow_sb_offset(int mirror);

/* The crc32c of bytes 32..4095 (what csum[0..3] must hold, le). */
uint32_t zcow_sb_csum(const struct zcow_super_block *sb);
/*
 * Check one copy read from mirror @mirror: magic, checksum type, checksum,
 * bytenr == zcow_sb_offset(mirror).  Returns NULL when good, else a short
 * reason ("bad magic", ...).
 */
const char *zcow_sb_check(const struct zcow_super_block *sb, int mirror);

/* The placement a superblock records (its flags). */
enum zcow_sb_placement zcow_sb_placement_of(const struct zcow_super_block *sb);
/* Record placement @p in @sb (seed: the tag at ZCOW_SB_PLACEMENT_OFF and
 * flags bit 56; kernel: neither).  Seal the superblock after. */
void zcow_sb_set_placement(struct zcow_super_block *sb,
			   enum zcow_sb_placement p);

/*
 * Where mirror @mirror lives on @dev.  Always returns 0 for 0 <= mirror <
 * ZCOW_SB_MIRROR_MAX (kind NONE when it does not fit), -EINVAL otherwise.
 */
int zcow_sb_locate_mirror(struct zdev *dev, enum zcow_sb_placement p,
			  int mirror, struct zcow_sb_loc *loc_ret);

/*
 * Decode a log mirror's position from its zones (report + the state
 * table).  In write mode (@for_write) the both-full case compares
 * generations to pick the zone to reset.  Returns 0, -ENOENT (both zones
 * empty: no superblock; write_off is set), -EUCLEAN (impossible state),
 * -EIO.
 */
int zcow_sb_log_position(struct zdev *dev, const struct zcow_sb_loc *loc,
			 struct zcow_sb_log_pos *pos_ret);

/*
 * Read the newest valid superblock of one mirror.  For a log: the copy
 * just below the write position; if it is bad, the newest valid copy in
 * the log (with a warning).  Returns 0, -ENOENT (mirror skipped or empty),
 * -EUCLEAN (no valid copy, or the log is in an impossible state), -EIO.
 */
int zcow_sb_read_mirror(struct zdev *dev, const struct zcow_sb_loc *loc,
			struct zcow_super_block *sb_ret,
			struct zcow_sb_copy *copy_ret);

/*
 * Read the newest valid superblock of the device: the primary, then the
 * mirrors of the placement it records (both placements if the primary is
 * unreadable); highest valid generation wins.  A copy must record the
 * placement it was found under.  Returns 0, -ENOENT (no superblock
 * anywhere), -EUCLEAN (superblocks exist but none is valid), -EIO.
 */
int zcow_sb_read_latest(struct zdev *dev, struct zcow_super_block *sb_ret,
			struct zcow_sb_copy *copy_ret);

/*
 * Call @fn for every copy stored in a mirror (oldest zone first; a fixed
 * mirror has one).  Returns 0, -ENOENT (skipped mirror), or an error of
 * the device or of @fn.
 */
int zcow_sb_for_each_copy(struct zdev *dev, const struct zcow_sb_loc *loc,
			  int (*fn)(void *arg, const struct zcow_sb_copy *copy,
				    const struct zcow_super_block *sb),
			  void *arg);

/*
 * The last committed superblock of @fs (on-disk byte order) into @sb_ret,
 * and where the mount found its superblock into @found_ret (either may be
 * NULL).  Returns 0.
 */
int zcow_fs_super(const struct zcow_fs *fs, struct zcow_super_block *sb_ret,
		  struct zcow_sb_copy *found_ret);

#endif /* ZCOW_ZCOW_SUPER_H */
