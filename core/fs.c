// SPDX-License-Identifier: MIT
/*
 * The file system's life cycle: mkfs (geometry and feature checks, zone
 * resets, generation 1), mount (the newest superblock, its features, the
 * trees, the file layer, the tree-log replay), superblock writes, unmount;
 * and what the public API reads of a mounted fs (zcow_fs_info(),
 * zcow_fs_super()).  The trees are transaction.c's, the files inode.c's
 * and file.c's.
 */
#include "fs.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "prng.h"
#include "reclaim.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "fs"

/* Superblock flags zcow knows (btrfs's and its own placement bit). */
#define KNOWN_SUPER_FLAGS                                                    \
	(ZCOW_SUPER_FLAG_WRITTEN | ZCOW_SUPER_FLAG_RELOC |                   \
	 ZCOW_SUPER_FLAG_ERROR | ZCOW_SUPER_FLAG_SEEDING |                   \
	 ZCOW_SUPER_FLAG_METADUMP | ZCOW_SUPER_FLAG_METADUMP_V2 |            \
	 ZCOW_SUPER_FLAG_CHANGING_FSID | ZCOW_SUPER_FLAG_CHANGING_FSID_V2 |  \
	 ZCOW_SUPER_FLAG_CHANGING_BG_TREE |                                  \
	 ZCOW_SUPER_FLAG_CHANGING_DATA_CSUM |                                \
	 ZCOW_SUPER_FLAG_CHANGING_META_CSUM | ZCOW_SUPER_FLAG_SEED_PLACEMENT)
/* States of an unfinished btrfs-progs operation or an image: refused. */
#define REFUSED_SUPER_FLAGS                                                  \
	(ZCOW_SUPER_FLAG_SEEDING | ZCOW_SUPER_FLAG_METADUMP |                \
	 ZCOW_SUPER_FLAG_METADUMP_V2 | ZCOW_SUPER_FLAG_CHANGING_FSID |       \
	 ZCOW_SUPER_FLAG_CHANGING_FSID_V2 | ZCOW_SUPER_FLAG_CHANGING_BG_TREE | \
	 ZCOW_SUPER_FLAG_CHANGING_DATA_CSUM |                                \
	 ZCOW_SUPER_FLAG_CHANGING_META_CSUM)
/*
 * Features, as btrfs reads them: an incompat bit changes how the trees must
 * be read, a compat_ro bit adds structures a writer must keep up to date.
 * zcow mounts only what it reads right, and writes only to a file system
 * whose every structure it maintains (table in docs/format.md):
 *
 *   bit                         read-only   read-write
 *   incompat mixed_backref      yes         yes   (zcow's own refs)
 *   incompat big_metadata       yes         yes   (nodesize > 4 KiB)
 *   incompat skinny_metadata    yes         yes   (zcow's metadata items)
 *   incompat no_holes           yes         yes   (zcow writes no holes)
 *   incompat zoned              required    required
 *   incompat default_subvol     yes (tree 5) no
 *   incompat extended_iref      yes         no    (extrefs not kept)
 *   incompat others             no          no    (compression, raid,
 *                                                  mixed groups, ...)
 *   compat_ro free_space_tree   yes         no    (not kept up to date)
 *   compat_ro block_group_tree  no          no    (groups elsewhere)
 *   compat_ro others, unknown   yes         no
 */
#define RW_INCOMPAT                                                          \
	(ZCOW_INCOMPAT_MIXED_BACKREF | ZCOW_INCOMPAT_BIG_METADATA |           \
	 ZCOW_INCOMPAT_SKINNY_METADATA | ZCOW_INCOMPAT_NO_HOLES |             \
	 ZCOW_INCOMPAT_ZONED)
#define RO_INCOMPAT                                                          \
	(RW_INCOMPAT | ZCOW_INCOMPAT_DEFAULT_SUBVOL |                        \
	 ZCOW_INCOMPAT_EXTENDED_IREF)
#define UNREADABLE_COMPAT_RO ZCOW_COMPAT_RO_BLOCK_GROUP_TREE

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* A version-4 (random) UUID, as uuid_generate() makes. */
static void make_uuid(uint64_t *state, uint8_t uuid[16])
{
	uint64_t a = zcow_rand64(state), b = zcow_rand64(state);

	memcpy(uuid, &a, 8);
	memcpy(uuid + 8, &b, 8);
	uuid[6] = (uuid[6] & 0x0f) | 0x40;
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
}

static int check_geometry(const struct zdev *dev, uint32_t nodesize)
{
	const struct zdev_info *info = &dev->info;
	uint64_t zs = info->zone_size;

	if (!is_pow2(zs)) {
		zlog_err(TAG, "zone size %llu is not a power of two",
			 (unsigned long long)zs);
		return -EINVAL;
	}
	if (zs < ZCOW_MIN_ZONE_SIZE || zs > ZCOW_MAX_ZONE_SIZE) {
		zlog_err(TAG, "zone size %llu bytes (%s) outside 4 MiB..8 GiB",
			 (unsigned long long)zs,
			 zs < ZCOW_MIN_ZONE_SIZE ? "too small" : "too large");
		return -EINVAL;
	}
	if (info->size / zs < ZCOW_MIN_ZONES) {
		zlog_err(TAG, "device too small: %llu zones of %llu MiB, need at least %d zones (%llu MiB)",
			 (unsigned long long)(info->size / zs),
			 (unsigned long long)(zs >> 20), ZCOW_MIN_ZONES,
			 (unsigned long long)(ZCOW_MIN_ZONES * (zs >> 20)));
		return -EINVAL;
	}
	if (info->lba_size > ZCOW_SB_SIZE) {
		zlog_err(TAG, "logical block size %u above the superblock size %u",
			 info->lba_size, ZCOW_SB_SIZE);
		return -EINVAL;
	}
	if (info->is_zoned && info->nr_conv < info->nr_zones &&
	    info->zone_capacity < ZCOW_SB_SIZE) {
		zlog_err(TAG, "zone capacity %llu below one superblock",
			 (unsigned long long)info->zone_capacity);
		return -EINVAL;
	}
	if (!is_pow2(nodesize) || nodesize < ZCOW_SECTORSIZE ||
	    nodesize > 65536) {
		zlog_err(TAG, "node size %u: need a power of two, 4 KiB..64 KiB",
			 nodesize);
		return -EINVAL;
	}
	if (info->nr_conv < info->nr_zones && info->zone_capacity < nodesize) {
		zlog_err(TAG, "zone capacity %llu below one %u-byte tree node",
			 (unsigned long long)info->zone_capacity, nodesize);
		return -EINVAL;
	}
	return 0;
}

uint32_t zcow_active_zone_limit(const struct zdev *dev)
{
	return dev->info.max_active ? dev->info.max_active :
				      dev->info.max_open;
}

uint32_t zcow_active_zones_needed(struct zdev *dev, enum zcow_sb_placement p,
				  bool has_treelog, uint32_t nr_data)
{
	struct zcow_sb_loc loc;
	uint32_t n = 1 + 1 + nr_data + (has_treelog ? 1 : 0);
	int m;

	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		zcow_sb_locate_mirror(dev, p, m, &loc);
		if (loc.kind == ZCOW_SB_LOC_LOG)
			n++;
	}
	return n;
}

/*
 * Refuse a device whose active-zone limit is below what the fs needs
 * without a tree-log and with one data group: -EINVAL with the numbers.
 * *has_log_room_ret (may be NULL): one more zone for the tree-log group.
 */
static int check_active_zones(struct zdev *dev, enum zcow_sb_placement p,
			      const char *what, bool *has_log_room_ret)
{
	uint32_t limit = zcow_active_zone_limit(dev);
	/* without the tree-log; the log's group is one more */
	uint32_t need = zcow_active_zones_needed(dev, p, false, 1);
	bool is_limited = dev->info.is_zoned && limit;

	if (has_log_room_ret)
		*has_log_room_ret = !is_limited || limit >= need + 1;
	if (!is_limited || limit >= need)
		return 0;
	zlog_err(TAG, "%s: the device allows %u active zones, zcow needs at least %u (superblock log %u, system 1, metadata 1, data 1)",
		 what, limit, need, need - 3);
	return -EINVAL;
}

/* Reset every sequential zone that is not empty (as btrfs-progs mkfs). */
int zcow_dev_reset_zones(struct zdev *dev)
{
	struct zdev_zone zones[64];
	uint64_t pos = 0;
	unsigned int nr, i;
	int ret;

	while (pos < dev->info.size) {
		nr = 64;
		ret = zdev_report(dev, pos, zones, &nr);
		if (ret)
			return ret;
		if (nr == 0)
			return -EIO;
		for (i = 0; i < nr; i++) {
			if (zdev_zone_is_seq(&zones[i]) &&
			    zones[i].cond != ZDEV_COND_EMPTY) {
				ret = zdev_reset_zone(dev, zones[i].start,
						      ZDEV_CLASS_ZONE);
				if (ret)
					return ret;
			}
		}
		pos = zones[nr - 1].start + zones[nr - 1].len;
	}
	return 0;
}

struct zcow_device *zcow_fs_device(struct zcow_fs *fs, uint64_t devid)
{
	unsigned int i;

	for (i = 0; i < fs->nr_devs; i++)
		if (fs->devs[i].devid == devid)
			return &fs->devs[i];
	return NULL;
}

int zcow_dev_check_active_zones(struct zdev *dev, enum zcow_sb_placement p,
				const char *what)
{
	return check_active_zones(dev, p, what, NULL);
}

uint64_t zcow_device_size(const struct zcow_device *zd)
{
	return le64toh(zd->item.total_bytes);
}

struct zdev *zcow_bg_zdev(const struct zcow_bg *bg)
{
	return bg->dev->zdev;
}

int zcow_fs_flush(struct zcow_fs *fs)
{
	int ret = 0, r;
	unsigned int i;

	for (i = 0; i < fs->nr_devs; i++) {
		r = zdev_flush(fs->devs[i].zdev);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

static const char *dev_name(const struct zdev *dev)
{
	return dev->spec[0] ? dev->spec : "the device";
}

/*
 * The devices of one file system must agree (btrfs's zoned rules): one
 * zone size, and all zoned or all not.  -EINVAL with both names otherwise.
 */
int zcow_devs_compatible(const struct zdev *a, const struct zdev *b)
{
	if (a == b) {
		zlog_err(TAG, "%s given twice", dev_name(a));
		return -EINVAL;
	}
	if (a->info.zone_size != b->info.zone_size) {
		zlog_err(TAG, "zone sizes differ: %s has %llu-byte zones, %s has %llu-byte zones",
			 dev_name(a), (unsigned long long)a->info.zone_size,
			 dev_name(b), (unsigned long long)b->info.zone_size);
		return -EINVAL;
	}
	if (a->info.is_zoned != b->info.is_zoned) {
		zlog_err(TAG, "%s is %s and %s is %s: zoned and non-zoned devices cannot be mixed",
			 dev_name(a), a->info.is_zoned ? "zoned" : "not zoned",
			 dev_name(b), b->info.is_zoned ? "zoned" : "not zoned");
		return -EINVAL;
	}
	return 0;
}

/* A device's item for devid @devid, of @fsid, with a fresh uuid. */
void zcow_dev_item_init(struct zcow_dev_item *di, uint64_t devid,
			const struct zdev *dev, const uint8_t *fsid,
			uint64_t *rng)
{
	memset(di, 0, sizeof(*di));
	make_uuid(rng, di->uuid);
	memcpy(di->fsid, fsid, sizeof(di->fsid));
	di->devid = htole64(devid);
	di->total_bytes = htole64(dev->info.size);
	di->io_align = htole32(ZCOW_SECTORSIZE);
	di->io_width = htole32(ZCOW_SECTORSIZE);
	di->sector_size = htole32(ZCOW_SECTORSIZE);
}

int zcow_mkfs(struct zdev *dev, const struct zcow_mkfs_opts *opts)
{
	return zcow_mkfs_devs(&dev, 1, opts);
}

int zcow_mkfs_devs(struct zdev **devs, unsigned int nr,
		   const struct zcow_mkfs_opts *opts)
{
	static const struct zcow_mkfs_opts defaults;
	struct zcow_super_block *sb = NULL;
	struct zcow_fs *fs = NULL;
	uint8_t subvol_uuid[ZCOW_UUID_SIZE];
	uint64_t total = 0;
	uint32_t nodesize;
	uint64_t rng;
	size_t label_len;
	unsigned int d, e;
	int ret;

	if (!opts)
		opts = &defaults;
	if (nr < 1 || nr > ZCOW_MAX_DEVICES) {
		zlog_err(TAG, "%u devices: a file system has 1 to %d",
			 nr, ZCOW_MAX_DEVICES);
		return -EINVAL;
	}
	nodesize = opts->nodesize ? opts->nodesize : ZCOW_DEFAULT_NODESIZE;
	label_len = opts->label ? strlen(opts->label) : 0;
	if (label_len >= ZCOW_SB_LABEL_SIZE) {
		zlog_err(TAG, "label longer than %d bytes",
			 ZCOW_SB_LABEL_SIZE - 1);
		return -EINVAL;
	}
	if (opts->placement != ZCOW_SB_PLACE_SEED &&
	    opts->placement != ZCOW_SB_PLACE_KERNEL) {
		zlog_err(TAG, "unknown superblock placement %d",
			 (int)opts->placement);
		return -EINVAL;
	}
	for (d = 0; d < nr; d++) {
		for (e = 0; e < d; e++) {
			ret = zcow_devs_compatible(devs[e], devs[d]);
			if (ret)
				return ret;
		}
		ret = check_geometry(devs[d], nodesize);
		if (!ret)
			ret = check_active_zones(devs[d], opts->placement,
						 "mkfs", NULL);
		if (ret)
			return ret;
		total += devs[d]->info.size;
	}

	sb = calloc(1, sizeof(*sb));
	fs = calloc(1, sizeof(*fs));
	if (!sb || !fs) {
		ret = -ENOMEM;
		goto out;
	}
	rng = opts->seed;
	make_uuid(&rng, sb->fsid);
	sb->flags = htole64(ZCOW_SUPER_FLAG_WRITTEN);
	zcow_sb_set_placement(sb, opts->placement);
	sb->magic = htole64(ZCOW_SB_MAGIC);
	sb->generation = htole64(1);
	sb->total_bytes = htole64(total);
	sb->root_dir_objectid = htole64(ZCOW_ROOT_TREE_DIR_OBJECTID);
	sb->num_devices = htole64(nr);
	sb->sectorsize = htole32(ZCOW_SECTORSIZE);
	sb->nodesize = htole32(nodesize);
	sb->leafsize = htole32(nodesize);
	sb->stripesize = htole32(ZCOW_SECTORSIZE);
	sb->incompat_flags = htole64(ZCOW_INCOMPAT_ZONED);
	sb->csum_type = htole16(ZCOW_CSUM_TYPE_CRC32C);
	if (label_len)
		memcpy(sb->label, opts->label, label_len);

	/* NO_HOLES: a file's holes have no hole extent items (btrfs-progs'
	 * mkfs default since 5.15); without it btrfs check wants one for
	 * every gap a truncate or a write past the end leaves. */
	sb->incompat_flags |= htole64(ZCOW_INCOMPAT_MIXED_BACKREF |
				      ZCOW_INCOMPAT_SKINNY_METADATA |
				      ZCOW_INCOMPAT_NO_HOLES);
	for (d = 0; d < nr; d++) {
		struct zcow_device *zd = &fs->devs[d];

		/* devid 1's uuid first: a single-device fs keeps its uuids */
		zd->devid = d + 1;
		zd->zdev = devs[d];
		zcow_dev_item_init(&zd->item, zd->devid, devs[d], sb->fsid,
				   &rng);
		ret = zcow_dev_reset_zones(devs[d]);
		if (ret) {
			zlog_err(TAG, "resetting the zones of %s failed: %d",
				 dev_name(devs[d]), ret);
			goto out;
		}
	}
	fs->nr_devs = nr;
	fs->dev = devs[0];
	sb->dev_item = fs->devs[0].item;
	fs->sb = *sb;
	fs->placement = opts->placement;
	fs->generation = 0;
	fs->mkfs_time = opts->time;
	make_uuid(&rng, subvol_uuid);
	ret = zcow_fs_create_trees(fs, subvol_uuid);
	if (ret)
		goto out;
	/*
	 * ORDER: the resets (atomic, durable on completion) of the old logs
	 * before the first superblock, so no stale copy can be newer; the
	 * commit writes the trees, then generation 1.
	 */
	ret = zcow_commit(fs);
	if (!ret && fs->sb_failed_mirrors) {
		/* a new file system starts with every mirror written */
		zlog_err(TAG, "mkfs: superblock mirrors 0x%x could not be written",
			 fs->sb_failed_mirrors);
		ret = -EIO;
	}
out:
	if (fs)
		zcow_fs_free_trees(fs);
	free(fs);
	free(sb);
	return ret;
}

/* The checks of a located superblock beyond its own (magic, csum). */
static int check_super(const struct zcow_super_block *sb,
		       uint64_t total_size, bool read_only)
{
	uint64_t flags = le64toh(sb->flags);
	uint64_t incompat = le64toh(sb->incompat_flags);
	uint64_t compat_ro = le64toh(sb->compat_ro_flags);
	uint32_t sectorsize = le32toh(sb->sectorsize);
	uint32_t nodesize = le32toh(sb->nodesize);

	if (flags & ~KNOWN_SUPER_FLAGS) {
		zlog_err(TAG, "superblock has unknown flags 0x%llx",
			 (unsigned long long)(flags & ~KNOWN_SUPER_FLAGS));
		return -EUCLEAN;
	}
	if (flags & REFUSED_SUPER_FLAGS) {
		zlog_err(TAG, "superblock flags 0x%llx: unfinished operation or image, not mountable",
			 (unsigned long long)(flags & REFUSED_SUPER_FLAGS));
		return -EOPNOTSUPP;
	}
	if (!(incompat & ZCOW_INCOMPAT_ZONED)) {
		zlog_err(TAG, "not a zoned file system (incompat 0x%llx)",
			 (unsigned long long)incompat);
		return -EOPNOTSUPP;
	}
	if (incompat & ~RO_INCOMPAT) {
		zlog_err(TAG, "incompat features 0x%llx: zcow cannot read this file system",
			 (unsigned long long)(incompat & ~RO_INCOMPAT));
		return -EOPNOTSUPP;
	}
	if (compat_ro & UNREADABLE_COMPAT_RO) {
		zlog_err(TAG, "compat_ro features 0x%llx (block-group tree): zcow cannot read this file system",
			 (unsigned long long)(compat_ro & UNREADABLE_COMPAT_RO));
		return -EOPNOTSUPP;
	}
	if (!read_only && (incompat & ~RW_INCOMPAT)) {
		zlog_err(TAG, "incompat features 0x%llx (%s) are not maintained by zcow: mount read-only",
			 (unsigned long long)(incompat & ~RW_INCOMPAT),
			 (incompat & ZCOW_INCOMPAT_EXTENDED_IREF) ?
				 "extended inode refs" : "default subvolume");
		return -EOPNOTSUPP;
	}
	if (!read_only && compat_ro) {
		zlog_err(TAG, "compat_ro features 0x%llx (%s) are not maintained by zcow: mount read-only",
			 (unsigned long long)compat_ro,
			 (compat_ro & ZCOW_COMPAT_RO_FREE_SPACE_TREE) ?
				 "free-space tree" :
			 (compat_ro & ZCOW_COMPAT_RO_VERITY) ? "fs-verity" :
							       "unknown");
		return -EOPNOTSUPP;
	}
	if (!is_pow2(sectorsize) || sectorsize < 4096 || sectorsize > 65536 ||
	    !is_pow2(nodesize) || nodesize < sectorsize || nodesize > 65536) {
		zlog_err(TAG, "superblock: bad sector size %u or node size %u",
			 sectorsize, nodesize);
		return -EUCLEAN;
	}
	if (le64toh(sb->total_bytes) > total_size) {
		zlog_err(TAG, "superblock: total_bytes %llu larger than the device%s (%llu)",
			 (unsigned long long)le64toh(sb->total_bytes),
			 le64toh(sb->num_devices) > 1 ? "s" : "",
			 (unsigned long long)total_size);
		return -EUCLEAN;
	}
	return 0;
}

/*
 * Mirrors whose log has a zone offline or read-only (or whose zones
 * cannot be reported): every superblock write would fail there.  Mount
 * reports them so that a degraded log shows before the next commit.
 */
static uint32_t unwritable_mirrors(struct zdev *dev, enum zcow_sb_placement p)
{
	struct zcow_sb_loc loc;
	struct zdev_zone z;
	uint32_t mask = 0;
	unsigned int i;
	int m;

	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		if (zcow_sb_locate_mirror(dev, p, m, &loc) ||
		    loc.kind != ZCOW_SB_LOC_LOG)
			continue;
		for (i = 0; i < loc.nr_zones; i++)
			if (zdev_report_zone(dev, loc.zone[i], &z) ||
			    z.cond == ZDEV_COND_OFFLINE ||
			    z.cond == ZDEV_COND_READONLY)
				mask |= 1u << m;
	}
	return mask;
}

int zcow_mount(struct zdev *dev, const struct zcow_mount_opts *opts,
	       struct zcow_fs **fs_ret)
{
	return zcow_mount_devs(&dev, 1, opts, fs_ret);
}

/* Read @dev's newest superblock into *sb (named errors). */
static int read_dev_super(struct zdev *dev, struct zcow_super_block *sb,
			  struct zcow_sb_copy *found)
{
	int ret = zcow_sb_read_latest(dev, sb, found);

	if (ret == -ENOENT)
		zlog_err(TAG, "no zcow/btrfs superblock on %s", dev_name(dev));
	else if (ret == -EUCLEAN)
		zlog_err(TAG, "no valid superblock on %s: corrupt",
			 dev_name(dev));
	return ret;
}

/*
 * The devices of a mount, from each one's own superblock: one fsid, no
 * devid twice, every device of the file system given.  Fills fs->devs
 * (sorted by devid), fs->dev, and fs->sb/found with the newest copy.
 */
static int open_devices(struct zcow_fs *fs, struct zdev **devs,
			unsigned int nr, uint64_t *total_ret)
{
	struct zcow_super_block *sb;
	struct zcow_sb_copy found;
	uint64_t want, gen[ZCOW_MAX_DEVICES];
	unsigned int d, e;
	int ret = 0;

	if (nr < 1 || nr > ZCOW_MAX_DEVICES) {
		zlog_err(TAG, "%u devices given: a file system has 1 to %d",
			 nr, ZCOW_MAX_DEVICES);
		return -EINVAL;
	}
	sb = malloc(sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	*total_ret = 0;
	for (d = 0; d < nr; d++) {
		struct zcow_device *zd;

		for (e = 0; e < d && !ret; e++)
			ret = zcow_devs_compatible(devs[e], devs[d]);
		if (!ret)
			ret = read_dev_super(devs[d], sb, &found);
		if (ret)
			goto out;
		if (d && memcmp(sb->fsid, fs->sb.fsid, sizeof(sb->fsid))) {
			zlog_err(TAG, "%s belongs to another file system than %s (fsid differs)",
				 dev_name(devs[d]), dev_name(devs[0]));
			ret = -EINVAL;
			goto out;
		}
		if (zcow_fs_device(fs, le64toh(sb->dev_item.devid))) {
			zlog_err(TAG, "%s: devid %llu given twice",
				 dev_name(devs[d]),
				 (unsigned long long)le64toh(sb->dev_item.devid));
			ret = -EINVAL;
			goto out;
		}
		gen[d] = le64toh(sb->generation);
		if (!d || le64toh(sb->generation) >
				  le64toh(fs->sb.generation)) {
			fs->sb = *sb;
			fs->found = found;
		}
		/* sorted by devid */
		for (e = fs->nr_devs;
		     e > 0 && fs->devs[e - 1].devid >
				      le64toh(sb->dev_item.devid);
		     e--)
			fs->devs[e] = fs->devs[e - 1];
		zd = &fs->devs[e];
		memset(zd, 0, sizeof(*zd));
		zd->devid = le64toh(sb->dev_item.devid);
		zd->zdev = devs[d];
		zd->item = sb->dev_item;
		fs->nr_devs++;
		*total_ret += devs[d]->info.size;
	}
	fs->dev = fs->devs[0].zdev;
	/*
	 * Every commit writes every device's superblock (a crash between
	 * two leaves one a generation behind): a device further behind is
	 * a stale copy that missed commits, whose trees the others' point
	 * past.  Named, rather than a checksum error in some node later.
	 */
	for (d = 0; d < nr && !ret; d++)
		if (gen[d] + 1 < le64toh(fs->sb.generation)) {
			zlog_err(TAG, "%s is stale: its superblock is generation %llu, the file system's %llu (a copy of the device from before?)",
				 dev_name(devs[d]), (unsigned long long)gen[d],
				 (unsigned long long)le64toh(fs->sb.generation));
			ret = -EUCLEAN;
		}
	if (ret)
		goto out;
	want = le64toh(fs->sb.num_devices);
	if (want != nr) {
		char have[160] = "";
		size_t n = 0;

		for (d = 0; d < fs->nr_devs && n < sizeof(have) - 24; d++)
			n += (size_t)snprintf(have + n, sizeof(have) - n,
					      "%s%llu", d ? ", " : "",
					      (unsigned long long)fs->devs[d].devid);
		zlog_err(TAG, "the file system has %llu device%s, %u given (devid %s): %s",
			 (unsigned long long)want, want == 1 ? "" : "s", nr,
			 have, want > nr ? "a device is missing" :
					   "a device is not part of it");
		ret = want > nr ? -ENODEV : -EINVAL;
	}
out:
	free(sb);
	return ret;
}

int zcow_mount_devs(struct zdev **devs, unsigned int nr,
		    const struct zcow_mount_opts *opts,
		    struct zcow_fs **fs_ret)
{
	struct zcow_fs *fs;
	bool has_log_room = true;	/* read-only: never writes a log */
	uint64_t total;
	unsigned int d;
	int ret;

	*fs_ret = NULL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->read_only = opts && opts->read_only;
	fs->mutation = opts ? opts->mutation : ZCOW_MUT_NONE;
	ret = open_devices(fs, devs, nr, &total);
	if (ret)
		goto out;
	ret = check_super(&fs->sb, total, fs->read_only);
	/* Each device item's size bounded before anything walks it (the
	 * writable zones are counted up to it: 2^63 was a hang). */
	for (d = 0; !ret && d < fs->nr_devs; d++)
		if (zcow_device_size(&fs->devs[d]) >
		    fs->devs[d].zdev->info.size) {
			zlog_err(TAG, "%s: device item size %llu larger than the device (%llu)",
				 dev_name(fs->devs[d].zdev),
				 (unsigned long long)zcow_device_size(&fs->devs[d]),
				 (unsigned long long)fs->devs[d].zdev->info.size);
			ret = -EUCLEAN;
		}
	if (ret)
		goto out;
	fs->generation = le64toh(fs->sb.generation);
	fs->placement = zcow_sb_placement_of(&fs->sb);
	/* an older image's flags bit 56 becomes the tag at the next commit */
	zcow_sb_set_placement(&fs->sb, fs->placement);
	for (d = 0; d < fs->nr_devs; d++)
		fs->sb_failed_mirrors |= unwritable_mirrors(fs->devs[d].zdev,
							    fs->placement);
	if (fs->sb_failed_mirrors)
		zlog_warn(TAG, "superblock log mirrors 0x%x have a zone offline or read-only: the log is degraded",
			  fs->sb_failed_mirrors);
	ret = zcow_fs_load_trees(fs);
	if (ret == -EUCLEAN && !fs->read_only) {
		/* zcow never writes to what it cannot read */
		zlog_err(TAG, "trees of generation %llu unreadable: refusing a read-write mount",
			 (unsigned long long)fs->generation);
		goto out;
	}
	if (ret == -EUCLEAN) {
		/*
		 * The superblock is still served read-only (dump-super,
		 * captured kernel logs without their tree zones); zcow_check
		 * fails.
		 */
		zlog_warn(TAG, "trees of generation %llu unreadable: superblock-only mount",
			  (unsigned long long)fs->generation);
		zcow_fs_free_trees(fs);
		ret = 0;
	}
	if (!ret && fs->has_trees)
		ret = zcow_replace_load(fs);
	if (ret) {
		zlog_err(TAG, "loading the trees of generation %llu failed: %d",
			 (unsigned long long)fs->generation, ret);
		goto out;
	}
	/* ORDER: before the log replay and anything else that writes. */
	if (!fs->read_only && fs->has_trees)
		ret = zcow_reset_free_active_zones(fs);
	if (ret)
		goto out;
	for (d = 0; d < fs->nr_devs && !fs->read_only; d++) {
		bool room = true;

		ret = check_active_zones(fs->devs[d].zdev, fs->placement,
					 "mount", &room);
		if (ret)
			goto out;
		has_log_room = has_log_room && room;
	}
	if (fs->has_trees) {	/* files: the file layer (issue 5) */
		struct zcow_mount_opts mo = { 0 };

		if (opts)
			mo = *opts;
		if (!has_log_room && !mo.no_treelog) {
			zlog_warn(TAG, "treelog=off: the device allows %u active zones, the tree-log needs %u; every fsync commits",
				  zcow_active_zone_limit(fs->dev),
				  zcow_active_zones_needed(fs->dev, fs->placement,
							   true, 1));
			mo.no_treelog = true;
		}
		ret = zcow_files_mount(fs, &mo);
		if (ret)
			goto out;
		/* ORDER: the tree-log is replayed and committed before
		 * anything else may write (issue 9). */
		ret = zcow_log_replay(fs);
		/* ORDER: after the replay, which may link or unlink what
		 * the orphan items name. */
		if (!ret && !fs->read_only)
			ret = zcow_orphan_cleanup(fs);
		if (ret) {
			zcow_files_unmount(fs);
			goto out;
		}
	}
	*fs_ret = fs;
	fs = NULL;
out:
	if (fs)
		zcow_fs_free_trees(fs);
	free(fs);
	return ret;
}

int zcow_fs_write_super(struct zcow_fs *fs, struct zcow_super_block *sb)
{
	uint32_t failed = 0, was = fs->sb_failed_mirrors;
	bool skip_flush = fs->mutation == ZCOW_MUT_SB_BEFORE_FLUSH ||
			  (fs->mutation == ZCOW_MUT_LOG_SB_BEFORE_FLUSH &&
			   sb->log_root);
	struct zcow_super_block *copy;
	unsigned int d;
	int ret, m;

	if (fs->nr_devs == 1) {
		ret = zcow_sb_write_all_mirrors(fs->dev, fs->placement, sb,
						skip_flush, &failed);
		goto report;
	}
	/*
	 * ORDER: every device's writes durable before any device's
	 * superblock: a copy on one device points at nodes on all.  Then
	 * each device gets the superblock with its own device item; one
	 * device whose every mirror fails fails the commit.
	 */
	ret = skip_flush ? 0 : zcow_fs_flush(fs);
	copy = malloc(sizeof(*copy));
	if (!ret && !copy)
		ret = -ENOMEM;
	for (d = 0; d < fs->nr_devs && !ret; d++) {
		uint32_t f = 0;

		sb->dev_item = fs->devs[d].item;
		*copy = *sb;
		ret = zcow_sb_write_all_mirrors(fs->devs[d].zdev, fs->placement,
						d ? copy : sb, true, &f);
		failed |= f;
	}
	sb->dev_item = fs->devs[0].item;
	free(copy);
report:
	fs->sb_failed_mirrors = failed;
	if (failed == was)
		return ret;
	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		if ((failed & ~was) & (1u << m))
			zlog_warn(TAG, "superblock log mirror %d cannot be written: the log is degraded%s",
				  m, ret ? "" : ", the other mirrors keep it");
		if ((was & ~failed) & (1u << m))
			zlog_info(TAG, "superblock log mirror %d written again",
				  m);
	}
	return ret;
}

int zcow_commit_super(struct zcow_fs *fs)
{
	return zcow_commit(fs);
}

int zcow_unmount(struct zcow_fs *fs)
{
	int ret = 0;

	if (!fs)
		return 0;
	zcow_cleaner_stop(fs);	/* before the last commit */
	zcow_files_wait_idle(fs);	/* files: waits for writes (issue 5) */
	zcow_replace_drop(fs);	/* a running replace: cancelled */
	/* ORDER: the last commit before the file layer goes: the writable
	 * snapshots' trees are the file layer's, their changes would be
	 * lost while the references they took are committed. */
	if (fs->error)
		ret = fs->error;
	else if (!fs->read_only)
		ret = zcow_commit_super(fs);
	zcow_files_unmount(fs);
	zcow_fs_free_trees(fs);
	free(fs);
	return ret;
}

int zcow_fs_info(struct zcow_fs *fs, struct zcow_fs_info *info)
{
	struct zcow_space_info si;
	uint64_t i;
	int t;

	_Static_assert((int)ZCOW_FS_NR_SPACE == (int)ZCOW_NR_SPACE &&
			       (int)ZCOW_FS_SPACE_DATA == (int)ZCOW_SPACE_DATA &&
			       (int)ZCOW_FS_SPACE_SYSTEM ==
				       (int)ZCOW_SPACE_SYSTEM &&
			       (int)ZCOW_FS_SPACE_METADATA ==
				       (int)ZCOW_SPACE_METADATA,
		       "the public space types are the allocator's");
	memset(info, 0, sizeof(*info));
	info->generation = fs->generation;
	info->error = fs->error;
	info->read_only = fs->read_only;
	info->has_trees = fs->has_trees;
	info->placement = fs->placement;
	info->sb_failed_mirrors = fs->sb_failed_mirrors;
	info->nodesize = fs->has_trees ? fs->nodesize : 0;
	info->writable_bytes = fs->has_trees ? fs->writable_bytes : 0;
	info->nr_block_groups = fs->nr_bgs;
	for (i = 0; i < fs->nr_bgs; i++) {
		const struct zcow_bg *bg = fs->bgs[i];
		uint64_t gap = bg->length - bg->capacity;

		/* Freed below the write pointer; not the capacity gap. */
		info->zone_unusable += bg->zone_unusable > gap ?
					       bg->zone_unusable - gap :
					       0;
	}
	info->commits = fs->cstats;
	info->reclaim = fs->files ? fs->reclaim : ZCOW_RECLAIM_OFF;
	info->reclaim_threshold = fs->reclaim_threshold;
	info->reclaim_high = (uint32_t)zcow_reclaim_high_zones(fs);
	info->reclaimable = zcow_reclaimable(fs);
	info->reclaim_stats = fs->rstats;
	if (fs->files) {
		/* reads the trees' sizes: between operations */
		pthread_mutex_lock(&fs->files->lock);
		zcow_reclaim_data_space(fs, &info->data_live_bytes,
					&info->data_space_bytes,
					&info->nr_pending_zones);
		pthread_mutex_unlock(&fs->files->lock);
	}
	if (fs->has_trees) {
		info->nr_free_zones = zcow_zoned_nr_free_zones(fs);
		info->nr_meta_reserve_zones = META_RESERVE_ZONES;
		info->nr_reloc_held_zones = zcow_reclaim_held_zones(fs);
	}
	info->data_zones = fs->files ? fs->files->data_zones : 0;
	for (t = 0; t < ZCOW_NR_SPACE; t++) {
		struct zcow_fs_space *s = &info->space[t];

		zcow_space_info(fs, (enum zcow_space_type)t, &si);
		s->name = zcow_space_name((enum zcow_space_type)t);
		s->total = si.total;
		s->used = si.used;
		s->reserved = si.reserved;
		s->pinned = si.pinned;
		s->readonly = si.readonly;
		s->zone_unusable = si.zone_unusable;
		s->nr_groups = si.nr_groups;
	}
	return 0;
}

uint64_t zcow_fs_generation(const struct zcow_fs *fs)
{
	return fs->generation;
}

int zcow_fs_error(const struct zcow_fs *fs)
{
	return fs->error;
}

int zcow_fs_super(const struct zcow_fs *fs, struct zcow_super_block *sb_ret,
		  struct zcow_sb_copy *found_ret)
{
	if (sb_ret)
		*sb_ret = fs->sb;
	if (found_ret)
		*found_ret = fs->found;
	return 0;
}

unsigned int zcow_fs_nr_devices(const struct zcow_fs *fs)
{
	return fs->nr_devs;
}

int zcow_fs_device_info(struct zcow_fs *fs, unsigned int i,
			struct zcow_dev_info *info)
{
	const struct zcow_device *zd;
	uint64_t g;

	if (i >= fs->nr_devs)
		return -ENOENT;
	zd = &fs->devs[i];
	memset(info, 0, sizeof(*info));
	info->devid = zd->devid;
	info->total_bytes = le64toh(zd->item.total_bytes);
	for (g = 0; g < fs->nr_bgs; g++)
		if (fs->bgs[g]->dev == zd && !fs->bgs[g]->is_deleted) {
			info->bytes_used += fs->bgs[g]->length;
			info->nr_groups++;
		}
	memcpy(info->uuid, zd->item.uuid, sizeof(info->uuid));
	info->spec = zd->zdev->spec;
	return 0;
}

int zcow_dev_add(struct zcow_fs *fs, struct zdev *dev)
{
	uint64_t devid = 0, rng;
	struct zcow_device *zd;
	unsigned int d;
	int ret;

	if (fs->read_only || fs->error)
		return -EROFS;
	if (!fs->has_trees || !fs->files)
		return -EINVAL;
	if (fs->nr_devs >= ZCOW_MAX_DEVICES) {
		zlog_err(TAG, "%u devices: a file system has at most %d",
			 fs->nr_devs, ZCOW_MAX_DEVICES);
		return -EINVAL;
	}
	for (d = 0; d < fs->nr_devs; d++) {
		ret = zcow_devs_compatible(fs->devs[d].zdev, dev);
		if (ret)
			return ret;
		if (fs->devs[d].devid > devid)
			devid = fs->devs[d].devid;
	}
	if (fs->replace && fs->replace->tgt == dev) {
		zlog_err(TAG, "%s is the target of the running replace",
			 dev_name(dev));
		return -EINVAL;
	}
	ret = check_geometry(dev, fs->nodesize);
	if (!ret)
		ret = check_active_zones(dev, fs->placement, "device add",
					 NULL);
	if (ret)
		return ret;
	pthread_mutex_lock(&fs->files->lock);
	ret = zcow_dev_reset_zones(dev);
	if (ret) {
		zlog_err(TAG, "resetting the zones of %s failed: %d",
			 dev_name(dev), ret);
		goto out;
	}
	zd = &fs->devs[fs->nr_devs];
	memset(zd, 0, sizeof(*zd));
	zd->devid = devid + 1;
	zd->zdev = dev;
	/* a uuid from the fs's generation and devid: reproducible */
	rng = fs->generation * 0x9e3779b97f4a7c15ULL ^ zd->devid;
	zcow_dev_item_init(&zd->item, zd->devid, dev, fs->sb.fsid, &rng);
	fs->nr_devs++;
	zcow_fs_count_writable(fs);
	fs->sb.num_devices = htole64(fs->nr_devs);
	fs->sb.total_bytes = htole64(le64toh(fs->sb.total_bytes) +
				     dev->info.size);
	/* the commit puts its device item into the chunk tree and writes
	 * its superblock log */
	ret = zcow_files_commit_locked(fs);
	if (ret)
		zlog_err(TAG, "device add: the commit failed: %d", ret);
	else
		zlog_info(TAG, "devid %llu added: %s",
			  (unsigned long long)zd->devid, dev_name(dev));
out:
	pthread_mutex_unlock(&fs->files->lock);
	return ret;
}
