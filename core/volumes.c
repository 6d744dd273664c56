// SPDX-License-Identifier: MIT
/*
 * Chunks, block groups and the zoned allocator (seeds 003, 004, 005).
 */
#include "volumes.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "grow.h"
#include "le.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "alloc"

uint64_t zcow_space_flags(enum zcow_space_type type)
{
	switch (type) {
	case ZCOW_SPACE_DATA:
		return ZCOW_BG_DATA;
	case ZCOW_SPACE_SYSTEM:
		return ZCOW_BG_SYSTEM;
	case ZCOW_SPACE_METADATA:
		return ZCOW_BG_METADATA;
	default:
		return 0;
	}
}

int zcow_space_of_flags(uint64_t flags)
{
	switch (flags & ZCOW_BG_TYPE_MASK) {
	case ZCOW_BG_DATA:
		return ZCOW_SPACE_DATA;
	case ZCOW_BG_SYSTEM:
		return ZCOW_SPACE_SYSTEM;
	case ZCOW_BG_METADATA:
		return ZCOW_SPACE_METADATA;
	default:
		return -1;
	}
}

const char *zcow_space_name(enum zcow_space_type type)
{
	static const char *const names[] = { "Data", "System", "Metadata" };

	return type < ZCOW_NR_SPACE ? names[type] : "?";
}

int zcow_check_profile(uint64_t flags)
{
	if (flags & ZCOW_BG_PROFILE_MASK) {
		zlog_err(TAG, "chunk profile 0x%llx: only the single profile is supported",
			 (unsigned long long)(flags & ZCOW_BG_PROFILE_MASK));
		return -EINVAL;
	}
	if (zcow_space_of_flags(flags) < 0) {
		zlog_err(TAG, "chunk type 0x%llx: need exactly one of data, system, metadata",
			 (unsigned long long)flags);
		return -EINVAL;
	}
	return 0;
}

/*
 * The seed's zoned chunk sizing: the stripe is one zone; metadata chunks
 * are capped at one zone per device, system chunks at 2 zones (btrfs caps
 * system chunks at 32 MiB, at least one zone), data chunks at 10% of the
 * writable space rounded down to zones, at least one zone.  With one device
 * and one stripe every chunk is one zone; the caps are what the size is
 * checked against.
 */
uint64_t zcow_chunk_max_size(const struct zcow_fs *fs, uint64_t type)
{
	uint64_t zs = fs->dev->info.zone_size;
	uint64_t limit;

	if (type & ZCOW_BG_DATA) {
		limit = fs->writable_bytes / 10;
		limit -= limit % zs;
		return limit < zs ? zs : limit;
	}
	if (type & ZCOW_BG_SYSTEM)
		return 2 * zs;
	return zs;
}

void zcow_chunk_encode(const struct zcow_bg *bg, uint8_t *buf)
{
	memset(buf, 0, ZCOW_CHUNK_ITEM_SIZE);
	put64(buf + 0, bg->length);			/* length */
	put64(buf + 8, ZCOW_EXTENT_TREE_OBJECTID);	/* owner */
	put64(buf + 16, ZCOW_STRIPE_LEN);		/* stripe_len */
	put64(buf + 24, bg->flags);			/* type */
	put32(buf + 32, ZCOW_SECTORSIZE);		/* io_align */
	put32(buf + 36, ZCOW_SECTORSIZE);		/* io_width */
	put32(buf + 40, ZCOW_SECTORSIZE);		/* sector_size */
	put16(buf + 44, 1);				/* num_stripes */
	put16(buf + 46, 0);				/* sub_stripes */
	put64(buf + 48, bg->devid);			/* stripe.devid */
	put64(buf + 56, bg->physical);			/* stripe.offset */
	memcpy(buf + 64, bg->dev->item.uuid, 16);	/* stripe.dev_uuid */
}

int zcow_chunk_decode(const uint8_t *buf, uint32_t len, uint64_t logical,
		      struct zcow_bg *bg)
{
	uint16_t nr_stripes;
	int ret;

	if (len < 48)
		return -EUCLEAN;
	nr_stripes = get16(buf + 44);
	if (len != 48 + 32u * nr_stripes || nr_stripes == 0) {
		zlog_err(TAG, "chunk %" PRIu64 ": malformed (%u bytes, %u stripes)",
			 logical, len, nr_stripes);
		return -EUCLEAN;
	}
	memset(bg, 0, sizeof(*bg));
	bg->start = logical;
	bg->length = get64(buf);
	bg->flags = get64(buf + 24);
	ret = zcow_check_profile(bg->flags);
	if (ret)
		return ret;
	if (nr_stripes != 1) {
		zlog_err(TAG, "chunk %" PRIu64 ": %u stripes: only the single profile is supported",
			 logical, nr_stripes);
		return -EINVAL;
	}
	bg->devid = get64(buf + 48);
	bg->physical = get64(buf + 56);
	return 0;
}

struct zcow_bg *zcow_bg_lookup(struct zcow_fs *fs, uint64_t logical)
{
	uint64_t lo = 0, hi = fs->nr_bgs;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		struct zcow_bg *bg = fs->bgs[mid];

		if (logical < bg->start)
			hi = mid;
		else if (logical >= bg->start + bg->length)
			lo = mid + 1;
		else
			return bg;
	}
	return NULL;
}

int zcow_map_logical_dev(struct zcow_fs *fs, uint64_t logical, uint64_t len,
			 struct zdev **dev_ret, uint64_t *phys_ret)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	if (!bg || logical + len > bg->start + bg->length) {
		zlog_err(TAG, "logical %" PRIu64 "+%" PRIu64 " is not mapped by a chunk",
			 logical, len);
		return -EUCLEAN;
	}
	*phys_ret = bg->physical + (logical - bg->start);
	if (dev_ret)
		*dev_ret = bg->dev->zdev;
	return 0;
}

int zcow_map_logical(struct zcow_fs *fs, uint64_t logical, uint64_t len,
		     uint64_t *phys_ret)
{
	return zcow_map_logical_dev(fs, logical, len, NULL, phys_ret);
}

int zcow_bg_write(struct zcow_fs *fs, struct zcow_bg *bg, const void *buf,
		  uint64_t len, uint64_t off, unsigned int flags,
		  enum zdev_class cls)
{
	int ret;

	if (fs->replace && bg->dev == fs->replace->src)
		ret = zcow_replace_write(fs, bg, buf, len, off, flags, cls);
	else
		ret = zdev_write(bg->dev->zdev, buf, len, bg->physical + off,
				 flags, cls);
	if (ret && bg->is_seq)
		bg->is_wp_stale = true;	/* zcow_bg_sync_wp() */
	return ret;
}

int zcow_bg_append(struct zcow_fs *fs, struct zcow_bg *bg, const void *buf,
		   uint64_t len, unsigned int flags, enum zdev_class cls,
		   uint64_t *off_ret)
{
	uint64_t phys;
	int ret;

	if (fs->replace && bg->dev == fs->replace->src) {
		ret = zcow_replace_append(fs, bg, buf, len, flags, cls,
					  off_ret);
	} else {
		ret = zdev_append(bg->dev->zdev, buf, len, bg->physical,
				  flags, cls, &phys);
		if (!ret)
			*off_ret = phys - bg->physical;
	}
	if (ret)
		bg->is_wp_stale = true;	/* zcow_bg_sync_wp() */
	return ret;
}

int zcow_bg_reset_zone(struct zcow_fs *fs, struct zcow_bg *bg)
{
	if (fs->replace && bg->dev == fs->replace->src)
		return zcow_replace_zone_mgmt(fs, bg, ZDEV_ZONE_RESET);
	return zdev_reset_zone(bg->dev->zdev, bg->physical, ZDEV_CLASS_ZONE);
}

int zcow_bg_finish_zone(struct zcow_fs *fs, struct zcow_bg *bg)
{
	int ret;

	if (fs->replace && bg->dev == fs->replace->src)
		ret = zcow_replace_zone_mgmt(fs, bg, ZDEV_ZONE_FINISH);
	else
		ret = zdev_finish_zone(bg->dev->zdev, bg->physical,
				       ZDEV_CLASS_ZONE);
	if (!ret)
		bg->is_finished = true;	/* FULL: no active zone held */
	fs->space_seq++;	/* its caller gives up the group's room */
	return ret;
}

int zcow_bg_sync_wp(struct zcow_bg *bg)
{
	uint64_t gap = bg->length - bg->capacity, wp;
	struct zdev_zone z;
	int ret;

	if (!bg->is_wp_stale)
		return 0;
	if (bg->reserved)
		return -EAGAIN;
	ret = zdev_report_zone(bg->dev->zdev, bg->physical, &z);
	if (ret)
		return ret;
	switch (z.cond) {
	case ZDEV_COND_EMPTY:
		wp = 0;
		break;
	case ZDEV_COND_FULL:
	case ZDEV_COND_READONLY:
	case ZDEV_COND_OFFLINE:
		wp = bg->capacity;
		break;
	default:
		wp = z.wp - z.start;
		break;
	}
	if (wp > bg->capacity)
		wp = bg->capacity;
	if (wp < bg->alloc_offset) {
		/* Back: what lies above the write pointer never landed, so
		 * it must all be unusable (released reservations). */
		if (bg->meta_wp > wp || bg->zone_unusable - gap <
						bg->alloc_offset - wp) {
			zlog_err(TAG, "block group %" PRIu64 ": live bytes above the write pointer %" PRIu64 " (offset %" PRIu64 ")",
				 bg->start, wp, bg->alloc_offset);
			bg->zone_unusable += bg->capacity - bg->alloc_offset;
			bg->alloc_offset = bg->capacity;
			bg->is_finished = true;
			bg->is_wp_stale = false;
			return -EUCLEAN;
		}
		bg->zone_unusable -= bg->alloc_offset - wp;
	} else {
		/* Forward: bytes landed that nothing references. */
		bg->zone_unusable += wp - bg->alloc_offset;
	}
	if (wp != bg->alloc_offset)
		zlog_warn(TAG, "block group %" PRIu64 ": a write failed, allocation offset %" PRIu64 " -> the write pointer %" PRIu64,
			  bg->start, bg->alloc_offset, wp);
	bg->alloc_offset = wp;
	if (bg->meta_wp > wp || (bg->flags & ZCOW_BG_TYPE_MASK) != ZCOW_BG_DATA)
		bg->meta_wp = wp;
	if (z.cond == ZDEV_COND_FULL)
		bg->is_finished = true;
	bg->is_wp_stale = false;
	return 0;
}

/* A metadata or system group (struct zcow_fs meta_bgs)? */
static bool is_meta_bg(const struct zcow_bg *bg)
{
	uint64_t type = bg->flags & ZCOW_BG_TYPE_MASK;

	return type == ZCOW_BG_METADATA || type == ZCOW_BG_SYSTEM;
}

int zcow_bg_add(struct zcow_fs *fs, const struct zcow_bg *tmpl,
		struct zcow_bg **bg_ret)
{
	struct zcow_bg *bg;
	uint64_t i;

	if (ZCOW_GROW_ONE(&fs->bgs, fs->nr_bgs, &fs->bgs_cap))
		return -ENOMEM;
	if (is_meta_bg(tmpl) &&
	    ZCOW_GROW_ONE(&fs->meta_bgs, fs->nr_meta_bgs, &fs->meta_bgs_cap))
		return -ENOMEM;
	bg = malloc(sizeof(*bg));
	if (!bg)
		return -ENOMEM;
	*bg = *tmpl;
	bg->dev = zcow_fs_device(fs, bg->devid);
	if (!bg->dev) {
		free(bg);
		return -EUCLEAN;
	}
	for (i = fs->nr_bgs; i > 0 && fs->bgs[i - 1]->start > bg->start; i--)
		fs->bgs[i] = fs->bgs[i - 1];
	fs->bgs[i] = bg;
	fs->nr_bgs++;
	fs->space_seq++;
	if (is_meta_bg(bg))
		fs->meta_bgs[fs->nr_meta_bgs++] = bg;
	if (bg_ret)
		*bg_ret = bg;
	return 0;
}

void zcow_bg_remove(struct zcow_fs *fs, struct zcow_bg *bg)
{
	uint64_t i;

	if (bg->start == fs->treelog_bg)
		fs->treelog_bg = 0;	/* released with its group (seed 010) */
	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i] == bg)
			break;
	if (i == fs->nr_bgs)
		return;
	memmove(&fs->bgs[i], &fs->bgs[i + 1],
		(fs->nr_bgs - i - 1) * sizeof(fs->bgs[0]));
	fs->nr_bgs--;
	fs->space_seq++;
	for (i = 0; i < fs->nr_meta_bgs; i++)
		if (fs->meta_bgs[i] == bg)
			fs->meta_bgs[i] = fs->meta_bgs[--fs->nr_meta_bgs];
	free(bg);
}

/* Does any block group own the zone at offset @zone of @zd? */
static bool is_zone_allocated(struct zcow_fs *fs, const struct zcow_device *zd,
			      uint64_t zone)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (bg->dev == zd && zone >= bg->physical &&
		    zone < bg->physical + bg->length)
			return true;
	}
	return false;
}

bool zcow_zone_is_sb(const struct zcow_fs *fs, struct zdev *dev,
		     uint64_t zone)
{
	uint64_t zs = dev->info.zone_size;
	int m;

	if (zcow_sb_is_reserved_zone(dev, fs->placement, zone))
		return true;
	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		uint64_t off = zcow_sb_offset(m);

		if (off + ZCOW_SB_SIZE > zone && off < zone + zs)
			return true;
	}
	return false;
}

uint64_t zcow_device_free_bytes(struct zcow_fs *fs,
				const struct zcow_device *zd)
{
	uint64_t used = 0, i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->dev == zd)
			used += fs->bgs[i]->length;
	return used < zd->writable_bytes ? zd->writable_bytes - used : 0;
}

int zcow_reset_free_active_zones(struct zcow_fs *fs)
{
	unsigned int d;

	for (d = 0; d < fs->nr_devs; d++) {
		struct zcow_device *zd = &fs->devs[d];
		struct zdev *dev = zd->zdev;
		uint64_t zs = dev->info.zone_size, zone;
		uint64_t size = zcow_device_size(zd);

		if (!dev->info.is_zoned)
			continue;
		for (zone = 0; zone + zs <= size; zone += zs) {
			struct zdev_zone z;
			int ret;

			if (zcow_zone_is_sb(fs, dev, zone) ||
			    is_zone_allocated(fs, zd, zone))
				continue;
			ret = zdev_report_zone(dev, zone, &z);
			if (ret)
				return ret;
			if (!zdev_zone_is_seq(&z) ||
			    (z.cond != ZDEV_COND_IMP_OPEN &&
			     z.cond != ZDEV_COND_EXP_OPEN &&
			     z.cond != ZDEV_COND_CLOSED))
				continue;
			/* Unreferenced, as in find_free_zone(): written by
			 * a chunk no commit recorded, or by a group removed
			 * before a crash. */
			zlog_warn(TAG, "devid %llu: resetting zone %" PRIu64
				  " (wp %" PRIu64 "): active, in no block group",
				  (unsigned long long)zd->devid, zone / zs,
				  z.wp - z.start);
			ret = zdev_reset_zone(dev, zone, ZDEV_CLASS_ZONE);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The lowest free zone of @zd that is not a superblock zone and holds no
 * fixed superblock copy, conventional or empty (a free sequential zone
 * that is not empty is reset, with a warning).  0 and *zone_ret, *z;
 * -ENOSPC, or a device errno.
 */
static int find_free_zone(struct zcow_fs *fs, struct zcow_device *zd,
			  uint64_t *zone_ret, struct zdev_zone *z)
{
	struct zdev *dev = zd->zdev;
	uint64_t zs = dev->info.zone_size, zone, size = zcow_device_size(zd);
	int ret;

	for (zone = 0; zone + zs <= size; zone += zs) {
		if (zcow_zone_is_sb(fs, dev, zone) ||
		    is_zone_allocated(fs, zd, zone))
			continue;
		ret = zdev_report_zone(dev, zone, z);
		if (ret)
			return ret;
		if (!zdev_zone_is_seq(z))
			break;
		if (z->cond == ZDEV_COND_READONLY ||
		    z->cond == ZDEV_COND_OFFLINE)
			continue;
		if (z->cond == ZDEV_COND_EMPTY)
			break;
		/*
		 * A free zone that is not empty: left by a block group
		 * removed before a crash, or by an uncommitted chunk.  Its
		 * contents are unreferenced; reset it, as the seed does.
		 */
		zlog_warn(TAG, "resetting zone %" PRIu64 " (wp %" PRIu64 ") for allocation",
			  zone / zs, z->wp - z->start);
		ret = zdev_reset_zone(dev, zone, ZDEV_CLASS_ZONE);
		if (ret)
			return ret;
		ret = zdev_report_zone(dev, zone, z);
		if (ret)
			return ret;
		break;
	}
	if (zone + zs > size)
		return -ENOSPC;
	*zone_ret = zone;
	return 0;
}

static int append_sys_chunk(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	uint32_t size = le32toh(fs->sb.sys_chunk_array_size);
	uint8_t *p = fs->sb.sys_chunk_array + size;
	struct zcow_disk_key key;

	if (size + sizeof(key) + ZCOW_CHUNK_ITEM_SIZE > ZCOW_SB_SYS_ARRAY_SIZE) {
		zlog_err(TAG, "superblock sys_chunk_array full");
		return -ENOSPC;
	}
	key.objectid = htole64(ZCOW_FIRST_CHUNK_TREE_OBJECTID);
	key.type = ZCOW_CHUNK_ITEM_KEY;
	key.offset = htole64(bg->start);
	memcpy(p, &key, sizeof(key));
	zcow_chunk_encode(bg, p + sizeof(key));
	size += sizeof(key) + ZCOW_CHUNK_ITEM_SIZE;
	fs->sb.sys_chunk_array_size = htole32(size);
	return 0;
}

void zcow_drop_sys_chunk(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	uint32_t size = le32toh(fs->sb.sys_chunk_array_size), off, entry;
	uint8_t *a = fs->sb.sys_chunk_array;
	struct zcow_disk_key key;
	uint16_t nr;

	/* Entries as load_sys_array() read them: a key, a chunk item of
	 * 48 bytes and 32 per stripe. */
	for (off = 0; off + sizeof(key) + 48 <= size; off += entry) {
		memcpy(&key, a + off, sizeof(key));
		memcpy(&nr, a + off + sizeof(key) + 44, sizeof(nr));
		entry = sizeof(key) + 48 + 32u * le16toh(nr);
		if (off + entry > size)
			return;
		if (le64toh(key.offset) != bg->start)
			continue;
		memmove(a + off, a + off + entry, size - off - entry);
		memset(a + size - entry, 0, entry);
		fs->sb.sys_chunk_array_size = htole32(size - entry);
		return;
	}
}

int zcow_chunk_alloc(struct zcow_fs *fs, uint64_t flags,
		     struct zcow_bg **bg_ret)
{
	uint64_t zs = fs->dev->info.zone_size;
	struct zcow_device *order[ZCOW_MAX_DEVICES], *zd = NULL;
	uint64_t avail[ZCOW_MAX_DEVICES];
	struct zcow_bg tmpl, *bg = NULL;
	struct zdev_zone z;
	uint64_t zone = 0, logical = zs, i;
	unsigned int d, e, nr = 0;
	int ret;

	ret = zcow_check_profile(flags);
	if (ret)
		return ret;
	if (fs->read_only)
		return -EROFS;
	/* One zone per chunk (one stripe); see the header. */
	if (zcow_chunk_max_size(fs, flags) < zs)
		return -EINVAL;
	/*
	 * The single profile takes the device with the most free space
	 * (btrfs's gather_device_info sort); equal: the lower devid.  A
	 * replace's source is a device like the others (as in btrfs): a
	 * group made there during the replace is not to_copy, its writes
	 * are cloned from the first one.
	 */
	for (d = 0; d < fs->nr_devs; d++) {
		struct zcow_device *c = &fs->devs[d];
		uint64_t a = zcow_device_free_bytes(fs, c);

		for (e = nr; e > 0 && avail[e - 1] < a; e--) {
			order[e] = order[e - 1];
			avail[e] = avail[e - 1];
		}
		order[e] = c;
		avail[e] = a;
		nr++;
	}
	ret = -ENOSPC;
	for (d = 0; d < nr && ret == -ENOSPC; d++) {
		ret = find_free_zone(fs, order[d], &zone, &z);
		if (!ret)
			zd = order[d];
	}
	if (ret)
		return ret;
	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->start + fs->bgs[i]->length > logical)
			logical = fs->bgs[i]->start + fs->bgs[i]->length;
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.start = logical;
	tmpl.length = zs;
	tmpl.physical = zone;
	tmpl.devid = zd->devid;
	tmpl.flags = flags;
	tmpl.is_seq = zdev_zone_is_seq(&z);
	tmpl.capacity = tmpl.is_seq ? z.capacity : zs;
	tmpl.zone_unusable = zs - tmpl.capacity;
	tmpl.is_new = true;
	ret = zcow_bg_add(fs, &tmpl, &bg);
	if (!ret)
		ret = zcow_replace_new_group(fs, bg);
	if (ret) {
		if (bg)
			zcow_bg_remove(fs, bg);
		return ret;
	}
	if (flags & ZCOW_BG_SYSTEM) {
		ret = append_sys_chunk(fs, bg);
		if (ret) {
			zcow_bg_remove(fs, bg);
			return ret;
		}
	}
	zlog(ZLOG_DEBUG, TAG, "chunk %s at logical %" PRIu64 ": devid %" PRIu64 " zone %" PRIu64 " (%s)",
		  zcow_space_name(zcow_space_of_flags(flags)), logical,
		  zd->devid, zone / zs, tmpl.is_seq ? "seq" : "conv");
	if (bg_ret)
		*bg_ret = bg;
	return 0;
}

int zcow_bg_reserve(struct zcow_fs *fs, uint64_t flags, uint64_t len,
		    uint64_t *logical_ret)
{
	struct zcow_bg *bg = NULL;
	uint64_t i;
	int pass, ret;

	if (fs->read_only)
		return -EROFS;
	/* A group whose zone is active first, then one to open. */
	for (pass = 0; pass < 2 && !bg; pass++) {
		for (i = 0; i < fs->nr_bgs; i++) {
			struct zcow_bg *b = fs->bgs[i];

			if ((b->flags & ZCOW_BG_TYPE_MASK) != flags ||
			    b->is_ro || b->is_removing || b->is_deleted ||
			    b->is_relocating || b->is_copying ||
			    b->is_finished || b->start == fs->treelog_bg ||
			    (!pass && !zcow_zoned_holds_zone(fs, b)))
				continue;
			if (b->is_wp_stale && zcow_bg_sync_wp(b))
				continue;
			if (b->alloc_offset + len <= b->capacity) {
				bg = b;
				break;
			}
		}
	}
	/*
	 * Opening a zone (an empty group or a new chunk): within the
	 * active-zone budget, which keeps one for metadata and finishes a
	 * data group if it must (core/zoned.c).  Only the zoned policy
	 * above calls down here otherwise.
	 */
	if ((!bg || !zcow_zoned_holds_zone(fs, bg)) &&
	    zcow_zoned_open_zone(fs, bg ? bg->dev : NULL, ZCOW_ZONE_META))
		zlog_warn(TAG, "%s: no active zone left to open",
			  zcow_space_name(zcow_space_of_flags(flags)));
	if (!bg) {
		ret = zcow_chunk_alloc(fs, flags, &bg);
		if (ret)
			return ret;
	}
	return zcow_bg_reserve_in(fs, bg, len, logical_ret);
}

void zcow_bg_claim_written(struct zcow_fs *fs, uint64_t logical, uint64_t len)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);
	uint64_t end;

	if (!bg || bg->is_seq)
		return;	/* sequential: the write pointer covers it */
	fs->space_seq++;
	end = logical + len - bg->start;
	if (end <= bg->alloc_offset || end > bg->capacity)
		return;
	bg->zone_unusable += end - bg->alloc_offset;
	bg->alloc_offset = end;
	if (bg->meta_wp < end)
		bg->meta_wp = end;
}

void zcow_bg_unusable_to_used(struct zcow_fs *fs, uint64_t logical,
			      uint64_t len)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	if (!bg)
		return;
	bg->zone_unusable -= len;
	bg->used += len;
}

bool zcow_bg_has_room(const struct zcow_bg *bg, uint64_t flags, uint64_t len)
{
	return bg && (bg->flags & ZCOW_BG_TYPE_MASK) == flags && !bg->is_ro &&
	       !bg->is_removing && !bg->is_deleted && !bg->is_relocating &&
	       !bg->is_copying && !bg->is_data_reloc && !bg->is_finished &&
	       !(bg->is_wp_stale && bg->reserved) &&
	       bg->alloc_offset + len <= bg->capacity;
}

int zcow_bg_reserve_in(struct zcow_fs *fs, struct zcow_bg *bg, uint64_t len,
		       uint64_t *logical_ret)
{
	if (fs->read_only)
		return -EROFS;
	/* After a failed write: at the device's write pointer again, or
	 * nothing (writes still in flight, or the group given up). */
	if (bg->is_wp_stale && zcow_bg_sync_wp(bg))
		return -ENOSPC;
	if (bg->is_ro || bg->is_removing || bg->is_deleted ||
	    bg->is_relocating || bg->is_copying || bg->is_finished ||
	    bg->alloc_offset + len > bg->capacity)
		return -ENOSPC;
	/* Strictly sequential: the only place space is handed out. */
	*logical_ret = bg->start + bg->alloc_offset;
	bg->alloc_offset += len;
	bg->reserved += len;
	fs->alloc_clock += len;
	bg->last_alloc = fs->alloc_clock;
	return 0;
}

void zcow_bg_release(struct zcow_fs *fs, uint64_t logical, uint64_t len,
		     bool is_written)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	if (!bg)
		return;
	bg->reserved -= len;
	if (!is_written && logical + len == bg->start + bg->alloc_offset)
		bg->alloc_offset -= len;	/* nothing landed: rewind */
	else
		bg->zone_unusable += len;
}

void zcow_bg_use_reserved(struct zcow_fs *fs, uint64_t logical, uint64_t len)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	if (!bg)
		return;
	bg->reserved -= len;
	bg->used += len;
}

void zcow_bg_drop_used(struct zcow_fs *fs, uint64_t logical, uint64_t len)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	if (!bg)
		return;
	bg->used -= len;
	bg->zone_unusable += len;
}

void zcow_bg_pin(struct zcow_fs *fs, uint64_t logical, uint64_t len)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	if (!bg)
		return;
	bg->used -= len;
	bg->pinned += len;
	fs->freed_bytes += len;
}

bool zcow_bg_is_all_unusable(const struct zcow_bg *bg)
{
	return bg->zone_unusable == bg->length && !bg->used && !bg->reserved &&
	       !bg->pinned;
}

void zcow_bg_unpin_all(struct zcow_fs *fs)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		/* Zoned: unpinned space is below the offset: unusable. */
		bg->zone_unusable += bg->pinned;
		bg->pinned = 0;
		/* System groups too: the commit that deletes the chunk
		 * item drops it from the sys_chunk_array as well. */
		/* (a group being copied by a replace goes after it) */
		if (zcow_bg_is_all_unusable(bg) && !bg->is_ro &&
		    !bg->is_deleted && !bg->is_copying)
			bg->is_removing = true;
	}
}

/*
 * The allocation offset of a block group at mount (seed 004):
 *
 *   zone type / condition        alloc_offset            group
 *   conventional                 end of last extent      rw
 *   seq EMPTY                    0                       rw
 *   seq IMP/EXP OPEN, CLOSED     wp - start (sector up)  rw
 *   seq FULL                     capacity                rw
 *   seq READONLY                 capacity                ro (warned)
 *   seq OFFLINE                  capacity                ro (warned)
 */
int zcow_bg_load_alloc_offset(struct zcow_bg *bg, uint64_t last_extent_end)
{
	struct zdev_zone z;
	uint64_t off;
	int ret;

	ret = zdev_report_zone(bg->dev->zdev, bg->physical, &z);
	if (ret)
		return ret;
	bg->is_seq = zdev_zone_is_seq(&z);
	bg->capacity = bg->is_seq ? z.capacity : bg->length;
	if (!bg->is_seq) {
		off = last_extent_end;
	} else {
		switch (z.cond) {
		case ZDEV_COND_EMPTY:
			off = 0;
			break;
		case ZDEV_COND_FULL:
			off = z.capacity;
			break;
		case ZDEV_COND_READONLY:
		case ZDEV_COND_OFFLINE:
			zlog_warn(TAG, "block group %" PRIu64 " is read-only: zone %" PRIu64 " is %s",
				  bg->start,
				  bg->physical / bg->dev->zdev->info.zone_size,
				  z.cond == ZDEV_COND_OFFLINE ? "offline" :
								"read-only");
			bg->is_ro = true;
			off = z.capacity;
			break;
		default:
			off = z.wp - z.start;
			break;
		}
	}
	off = (off + ZCOW_SECTORSIZE - 1) / ZCOW_SECTORSIZE * ZCOW_SECTORSIZE;
	if (off > bg->capacity)
		off = bg->capacity;
	if (off < bg->used) {
		zlog_err(TAG, "block group %" PRIu64 ": %" PRIu64 " bytes used beyond its write pointer (offset %" PRIu64 ")",
			 bg->start, bg->used, off);
		return -EUCLEAN;
	}
	bg->alloc_offset = off;
	/* A partial tail written below a rounded-up offset is padded on the
	 * first commit: the meta write pointer stays at the device's. */
	bg->meta_wp = bg->is_seq && z.cond != ZDEV_COND_FULL &&
				      z.cond != ZDEV_COND_READONLY &&
				      z.cond != ZDEV_COND_OFFLINE ?
			      z.wp - z.start :
			      off;
	bg->zone_unusable = (off - bg->used) + (bg->length - bg->capacity);
	return 0;
}

void zcow_space_info(struct zcow_fs *fs, enum zcow_space_type type,
		     struct zcow_space_info *info)
{
	uint64_t flags = zcow_space_flags(type), i;

	memset(info, 0, sizeof(*info));
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if ((bg->flags & ZCOW_BG_TYPE_MASK) != flags)
			continue;
		info->nr_groups++;
		info->total += bg->length;
		info->used += bg->used;
		info->reserved += bg->reserved;
		info->pinned += bg->pinned;
		info->zone_unusable += bg->zone_unusable;
		if (bg->is_ro)
			info->readonly += bg->length - bg->used;
	}
}

/*
 * ---- metadata space reservation (docs/space.md) ----------------------
 *
 * Sizes in tree nodes.  btrfs charges nodesize * BTRFS_MAX_LEVEL * 2 per
 * item; zcow charges from the tree's real height h (root_level + 1), one
 * level of growth allowed during the operation: the CoW of the path (h+1
 * nodes) and a split at every level plus a new root (h+2), so 2h + 3 per
 * item.  A node CoWed in the running transaction is changed in place
 * afterwards (it is dirty), so a tree cannot copy more than its clean
 * nodes again in this transaction, nor split more than each node once
 * plus what new items fill: that caps a large operation.  A removal never
 * allocates a node but copies: its path and a sibling per level to merge
 * with, capped at the clean nodes.
 */
#define ITEM_HDR		25u	/* struct btrfs_item */
#define META_REF_ITEM		(33u + ITEM_HDR) /* one tree block's item */
/* Fixed nodes of a commit: block group, chunk, device items of chunks
 * added or removed and the device item (one leaf each way). */
#define COMMIT_FIXED_NODES	8u
/* What an unlink of a small file needs beside the trees' copies in the
 * global reserve: its fs-tree items (btrfs: BTRFS_UNLINK_METADATA_UNITS)
 * and the data items of its extent. */
#define SLACK_FS_ITEMS		8u
/* Commits' worth of chunk-tree copies ahead at which a free zone is held
 * for the next system chunk (zcow_sys_zone_held). */
#define SYS_HOLD_COMMITS	4u
#define SLACK_DATA_ITEMS	2u
/* btrfs caps its global reserve at 512 MiB (block-rsv.c). */
#define GLOBAL_RSV_MAX		(512ULL << 20)

static uint64_t height(const struct zcow_tree *tree)
{
	return tree->root_bytenr == ZCOW_NO_ROOT ?
		       0 :
		       (uint64_t)tree->root_level + 1;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* Nodes of @tree not copied yet in the running transaction (of @nr). */
static uint64_t clean_nodes(const struct zcow_tree *tree, int64_t nr)
{
	return (uint64_t)nr > tree->nr_dirty ? (uint64_t)nr - tree->nr_dirty :
					       0;
}

int zcow_rsv_nodes(struct zcow_fs *fs, struct zcow_tree *tree,
		   uint64_t nr_items, uint64_t item_bytes,
		   uint64_t *nodes_ret)
{
	uint64_t h = height(tree), per, cap;
	int64_t nr = zcow_tree_nr_nodes(tree);

	if (nr < 0)
		return (int)nr;
	per = nr_items > UINT32_MAX ? UINT64_MAX : nr_items * (2 * h + 3);
	cap = clean_nodes(tree, nr) + (uint64_t)nr + 2 * h + 3 +
	      div_up(2 * (nr_items > UINT32_MAX ? (uint64_t)nr : nr_items) *
			     (item_bytes + ITEM_HDR),
		     fs->nodesize);
	*nodes_ret += per < cap ? per : cap;
	return 0;
}

int zcow_rsv_del_nodes(struct zcow_tree *tree, uint64_t nr_items,
		       uint64_t nr_leaves, uint64_t *nodes_ret)
{
	uint64_t h = height(tree), per, cap;
	int64_t nr = zcow_tree_nr_nodes(tree);

	if (nr < 0)
		return (int)nr;
	per = nr_items > UINT32_MAX ? UINT64_MAX : nr_items * 2 * h;
	/* contiguous items: their leaves and as many parents at most, a
	 * path and a sibling at each end */
	if (nr_leaves && 2 * nr_leaves + 2 * h + 2 < per)
		per = 2 * nr_leaves + 2 * h + 2;
	cap = clean_nodes(tree, nr);
	*nodes_ret += per < cap ? per : cap;
	return 0;
}

void zcow_meta_groups(struct zcow_fs *fs, struct zcow_meta_groups *mg_ret)
{
	uint64_t ns = fs->nodesize, i;

	*mg_ret = (struct zcow_meta_groups){ 0 };
	for (i = 0; i < fs->nr_meta_bgs; i++) {
		const struct zcow_bg *bg = fs->meta_bgs[i];
		uint64_t type = bg->flags & ZCOW_BG_TYPE_MASK;

		/* (a group has room of its own type only) */
		if (type == ZCOW_BG_METADATA &&
		    zcow_bg_has_room(bg, ZCOW_BG_METADATA, ns)) {
			mg_ret->with_room++;
			if (bg->start != fs->treelog_bg)
				mg_ret->meta_bytes +=
					(bg->capacity - bg->alloc_offset) /
					ns * ns;
		} else if (type == ZCOW_BG_SYSTEM &&
			   zcow_bg_has_room(bg, ZCOW_BG_SYSTEM, ns)) {
			mg_ret->with_room++;
			mg_ret->sys_nodes +=
				(bg->capacity - bg->alloc_offset) / ns;
		}
	}
}

/*
 * Groups @nodes new nodes may land in: the @with_room ones with room now
 * (struct zcow_meta_groups), and the new chunks they fill.
 */
static uint64_t alloc_groups(struct zcow_fs *fs, uint64_t with_room,
			     uint64_t nodes)
{
	uint64_t per = zcow_zoned_zone_room(fs) / fs->nodesize;

	return with_room + 1 + (per ? div_up(nodes, per) : nodes);
}

/*
 * The commit's own needs once the running transaction (@fresh: a new
 * one, nothing copied yet) holds @op_nodes more nodes (@with_room:
 * struct zcow_meta_groups): every clean node of the extent, root and device trees
 * CoWed, every node of the root and device trees split once, the items
 * of every delayed reference (an insert of META_REF_ITEM bytes each, two
 * per node the transaction allocates: its allocation and the free of the
 * node it replaced), the growth of the heights, the fixed items.  The
 * extent tree splits only where those items go in: a zoned group
 * allocates at its write pointer only, above every node it held before,
 * so a transaction's new items of one group are keys above all that
 * group's items and below the next group's: they go in at one place per
 * group (a split of its path, h + 2 nodes), then fill new leaves (the
 * items' own term).  The commit's own nodes make references too: a share
 * of 2 * META_REF_ITEM * 2 / nodesize of them on top (solved in closed
 * form).  The system space is separate (zcow_sys_zone_held()).
 */
static int commit_nodes(struct zcow_fs *fs, uint64_t op_nodes, bool fresh,
			uint64_t with_room, uint64_t *nodes_ret)
{
	struct zcow_tree *trees[] = { &fs->extent_tree, &fs->root_tree,
				      &fs->dev_tree };
	uint64_t ns = fs->nodesize, n = 0, refs, c0, ext_h = 0;
	unsigned int i;

	for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		int64_t nr = zcow_tree_nr_nodes(trees[i]);
		uint64_t h = height(trees[i]) + 1;

		if (nr < 0)
			return (int)nr;
		n += (fresh ? (uint64_t)nr : clean_nodes(trees[i], nr)) + h;
		if (i)
			n += (uint64_t)nr + h;
		else
			ext_h = h;
	}
	refs = (fresh ? 0 : fs->nr_refs) + 2 * op_nodes;
	c0 = n + COMMIT_FIXED_NODES + div_up(refs * 2 * META_REF_ITEM, ns);
	/* the extent tree's insertion points: one per group written */
	c0 += alloc_groups(fs, with_room, op_nodes + 2 * c0) * (ext_h + 1);
	*nodes_ret = div_up(c0 * ns, ns - 4 * META_REF_ITEM);
	return 0;
}

/*
 * Does the chunk tree's CoW in a commit (every node once, split once,
 * growth) fit in the system groups?  If not, a commit may allocate a
 * system chunk: one free zone is held for it.
 */
int zcow_sys_zone_held(struct zcow_fs *fs, bool *held_ret)
{
	struct zcow_meta_groups mg;

	zcow_meta_groups(fs, &mg);
	return zcow_sys_zone_held_in(fs, &mg, held_ret);
}

int zcow_sys_zone_held_in(struct zcow_fs *fs,
			  const struct zcow_meta_groups *mg, bool *held_ret)
{
	int64_t nr = zcow_tree_nr_nodes(&fs->chunk_tree);
	uint64_t room = mg->sys_nodes, need;

	if (nr < 0)
		return (int)nr;
	need = 2 * (uint64_t)nr + 2 * (height(&fs->chunk_tree) + 1) + 2;
	/* Held from SYS_HOLD_COMMITS commits before the room runs out: a
	 * zone held only at the last one could already be taken by then
	 * (measured: a commit failing for lack of a system zone at
	 * max_active 6, every free zone taken by data and metadata while
	 * the system group still had room). */
	*held_ret = room < need * SYS_HOLD_COMMITS;
	return 0;
}

/*
 * Nodes held back from ordinary operations: the global reserve.  btrfs
 * sizes it from the extent and checksum trees (what deleting may
 * rewrite; the fs tree's part a large deletion takes in several
 * transactions, each reusing what the last one freed) and at least an
 * unlink's items, capped at 512 MiB.  On a zoned device a freed node
 * comes back only with its whole zone, so a deletion that spans many
 * transactions runs out of room before it frees any: zcow's reserve
 * covers one copy of every node of the fs and checksum trees, an
 * unlink's items and the commit of a new transaction holding them (every
 * extent tree node copied: commit_nodes()), so that the largest file's
 * removal fits in one transaction, also the first after a commit.
 */
static int slack_nodes(struct zcow_fs *fs, uint64_t with_room,
		       uint64_t *nodes_ret)
{
	int64_t nr_fs = zcow_tree_nr_nodes(&fs->fs_tree);
	int64_t nr_csum = zcow_tree_nr_nodes(&fs->csum_tree);
	uint64_t max = GLOBAL_RSV_MAX / fs->nodesize, n = 0, commit = 0;
	int ret;

	if (nr_fs < 0)
		return (int)nr_fs;
	if (nr_csum < 0)
		return (int)nr_csum;
	ret = zcow_rsv_nodes(fs, &fs->fs_tree, SLACK_FS_ITEMS, 310, &n);
	if (!ret)
		ret = zcow_rsv_nodes(fs, &fs->extent_tree, SLACK_DATA_ITEMS, 53,
				     &n);
	if (!ret)
		ret = zcow_rsv_nodes(fs, &fs->csum_tree, SLACK_DATA_ITEMS, 1024,
				     &n);
	n += (uint64_t)nr_fs + (uint64_t)nr_csum;
	if (!ret)
		ret = commit_nodes(fs, n, true, with_room, &commit);
	n += commit;
	*nodes_ret = n < max ? n : max;
	return ret;
}

int zcow_meta_need(struct zcow_fs *fs, uint64_t op_nodes,
		   bool may_use_global, uint64_t *bytes_ret)
{
	struct zcow_meta_groups mg;

	zcow_meta_groups(fs, &mg);
	return zcow_meta_need_in(fs, &mg, op_nodes, may_use_global, bytes_ret);
}

/*
 * What zcow_meta_need_in() reads (slack_nodes(), commit_nodes(),
 * zcow_rsv_nodes()), in @in: the operation, the groups with room, the
 * delayed references, the zone room, the node size, and of each tree it
 * sizes its nodes, dirty nodes and height.  False on a tree read error.
 */
static bool need_inputs(struct zcow_fs *fs, const struct zcow_meta_groups *mg,
			uint64_t op_nodes, bool may_use_global,
			uint64_t in[ZCOW_NEED_INPUTS])
{
	struct zcow_tree *trees[] = { &fs->fs_tree, &fs->csum_tree,
				      &fs->extent_tree, &fs->root_tree,
				      &fs->dev_tree };
	unsigned int i, n = 0;

	in[n++] = op_nodes;
	in[n++] = may_use_global;
	in[n++] = mg->with_room;
	in[n++] = fs->nr_refs;
	in[n++] = zcow_zoned_zone_room(fs);
	in[n++] = fs->nodesize;
	/* (the fs and checksum trees size the global reserve only) */
	for (i = may_use_global ? 2 : 0; i < sizeof(trees) / sizeof(trees[0]);
	     i++) {
		int64_t nr = zcow_tree_nr_nodes(trees[i]);

		if (nr < 0)
			return false;
		in[n++] = (uint64_t)nr;
		in[n++] = trees[i]->nr_dirty;
		in[n++] = height(trees[i]);
	}
	while (n < ZCOW_NEED_INPUTS)
		in[n++] = 0;
	return true;
}

int zcow_meta_need_in(struct zcow_fs *fs, const struct zcow_meta_groups *mg,
		      uint64_t op_nodes, bool may_use_global,
		      uint64_t *bytes_ret)
{
	struct zcow_need_memo *memo = &fs->need_memo;
	uint64_t slack = 0, commit = 0, with_room = mg->with_room;
	uint64_t in[ZCOW_NEED_INPUTS];
	bool has_in;
	int ret;

	op_nodes += fs->rsv_held_nodes;	/* the writes in flight */
	has_in = need_inputs(fs, mg, op_nodes, may_use_global, in);
	if (has_in && memo->is_valid && !memcmp(in, memo->in, sizeof(in))) {
		*bytes_ret = memo->bytes;
		return 0;
	}

	if (!may_use_global) {
		ret = slack_nodes(fs, with_room, &slack);
		if (ret)
			return ret;
	}
	ret = commit_nodes(fs, op_nodes, false, with_room, &commit);
	if (ret)
		return ret;
	*bytes_ret = (op_nodes + slack + commit) * fs->nodesize;
	memo->is_valid = has_in;
	if (has_in) {
		memcpy(memo->in, in, sizeof(in));
		memo->bytes = *bytes_ret;
	}
	return 0;
}
