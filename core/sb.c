// SPDX-License-Identifier: MIT
/*
 * The superblock log (seed 011): placement, locate, fall back, write.
 *
 * Rules (docs/format.md):
 *   - A mirror on a zoned device owns two consecutive zones used as a ring:
 *     copies are appended at the write pointer; when a zone is full the log
 *     continues in the other; a full zone is reset before it is written
 *     again, and only when the other zone holds a newer durable copy.
 *   - A conventional first zone holds one fixed copy at its start.
 *   - An emulated (non-zoned) device has the fixed btrfs offsets.
 *   - bytenr always holds the mirror's canonical offset (zcow_sb_offset()).
 */
#include "sb.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "fs.h"
#include "zlog.h"

#define TAG "sb"

#define SZ_1G (1ULL << 30)
#define SEED_MIRROR1_ZONE 16ULL
#define SEED_MIRROR2_MAX_ZONE 1024ULL
#define KERNEL_MIRROR1_OFFSET (512ULL * SZ_1G)
#define KERNEL_MIRROR2_OFFSET (4096ULL * SZ_1G)
/* No copy: the log is empty (UINT64_MAX never is a device offset). */
#define NO_COPY UINT64_MAX

/* The layout, as the kernel's struct btrfs_super_block. */
#define CHECK_OFF(field, off)                                                 \
	_Static_assert(offsetof(struct zcow_super_block, field) == (off),     \
		       #field " offset")
_Static_assert(sizeof(struct zcow_super_block) == ZCOW_SB_SIZE, "sb size");
_Static_assert(sizeof(struct zcow_dev_item) == 98, "dev_item size");
_Static_assert(sizeof(struct zcow_root_backup) == 168, "root_backup size");
CHECK_OFF(csum, 0x0);
CHECK_OFF(fsid, 0x20);
CHECK_OFF(bytenr, 0x30);
CHECK_OFF(flags, 0x38);
CHECK_OFF(magic, 0x40);
CHECK_OFF(generation, 0x48);
CHECK_OFF(root, 0x50);
CHECK_OFF(chunk_root, 0x58);
CHECK_OFF(log_root, 0x60);
CHECK_OFF(log_root_transid, 0x68);
CHECK_OFF(total_bytes, 0x70);
CHECK_OFF(bytes_used, 0x78);
CHECK_OFF(root_dir_objectid, 0x80);
CHECK_OFF(num_devices, 0x88);
CHECK_OFF(sectorsize, 0x90);
CHECK_OFF(nodesize, 0x94);
CHECK_OFF(leafsize, 0x98);
CHECK_OFF(stripesize, 0x9c);
CHECK_OFF(sys_chunk_array_size, 0xa0);
CHECK_OFF(chunk_root_generation, 0xa4);
CHECK_OFF(compat_flags, 0xac);
CHECK_OFF(compat_ro_flags, 0xb4);
CHECK_OFF(incompat_flags, 0xbc);
CHECK_OFF(csum_type, 0xc4);
CHECK_OFF(root_level, 0xc6);
CHECK_OFF(chunk_root_level, 0xc7);
CHECK_OFF(log_root_level, 0xc8);
CHECK_OFF(dev_item, 0xc9);
CHECK_OFF(label, 0x12b);
CHECK_OFF(cache_generation, 0x22b);
CHECK_OFF(uuid_tree_generation, 0x233);
CHECK_OFF(metadata_uuid, 0x23b);
CHECK_OFF(nr_global_roots, 0x24b);
CHECK_OFF(sys_chunk_array, 0x32b);
CHECK_OFF(super_roots, 0xb2b);
CHECK_OFF(padding, 0xdcb);
_Static_assert(offsetof(struct zcow_dev_item, uuid) == 0x42, "dev uuid");
_Static_assert(offsetof(struct zcow_dev_item, fsid) == 0x52, "dev fsid");


uint64_t zcow_sb_offset(int mirror)
{
	/* btrfs: 64 KiB, then 16 KiB << (12 * mirror): 64 MiB, 256 GiB. */
	if (mirror <= 0)
		return 64ULL << 10;
	return (16ULL << 10) << (12 * mirror);
}

uint32_t zcow_sb_csum(const struct zcow_super_block *sb)
{
	const uint8_t *p = (const uint8_t *)sb;

	return zcow_crc32c(p + ZCOW_SB_CSUM_SIZE,
			   ZCOW_SB_SIZE - ZCOW_SB_CSUM_SIZE);
}

void zcow_sb_seal(struct zcow_super_block *sb)
{
	uint32_t crc = htole32(zcow_sb_csum(sb));

	memset(sb->csum, 0, sizeof(sb->csum));
	memcpy(sb->csum, &crc, sizeof(crc));
}

const char *zcow_sb_check(const struct zcow_super_block *sb, int mirror)
{
	uint32_t crc;

	if (le64toh(sb->magic) != ZCOW_SB_MAGIC)
		return "bad magic";
	if (le16toh(sb->csum_type) != ZCOW_CSUM_TYPE_CRC32C)
		return "unsupported checksum type";
	memcpy(&crc, sb->csum, sizeof(crc));
	if (le32toh(crc) != zcow_sb_csum(sb))
		return "checksum mismatch";
	if (le64toh(sb->bytenr) != zcow_sb_offset(mirror))
		return "bytenr is not this mirror's";
	return NULL;
}

_Static_assert(ZCOW_SB_PLACEMENT_OFF + sizeof(ZCOW_SB_SEED_TAG) - 1 ==
	       ZCOW_SB_SIZE, "the placement tag ends the padding");
_Static_assert(ZCOW_SB_PLACEMENT_OFF >= offsetof(struct zcow_super_block,
						 padding),
	       "the placement tag lies in the padding");

enum zcow_sb_placement zcow_sb_placement_of(const struct zcow_super_block *sb)
{
	const uint8_t *tag = (const uint8_t *)sb + ZCOW_SB_PLACEMENT_OFF;

	if (!memcmp(tag, ZCOW_SB_SEED_TAG, sizeof(ZCOW_SB_SEED_TAG) - 1) ||
	    le64toh(sb->flags) & ZCOW_SUPER_FLAG_SEED_PLACEMENT)
		return ZCOW_SB_PLACE_SEED;
	return ZCOW_SB_PLACE_KERNEL;
}

void zcow_sb_set_placement(struct zcow_super_block *sb,
			   enum zcow_sb_placement p)
{
	uint8_t *tag = (uint8_t *)sb + ZCOW_SB_PLACEMENT_OFF;

	sb->flags &= ~htole64(ZCOW_SUPER_FLAG_SEED_PLACEMENT);
	if (p == ZCOW_SB_PLACE_SEED) {
		memcpy(tag, ZCOW_SB_SEED_TAG, sizeof(ZCOW_SB_SEED_TAG) - 1);
		/* keeps the kernel off: it would allocate the mirrors' zones */
		sb->flags |= htole64(ZCOW_SUPER_FLAG_SEED_PLACEMENT);
	} else {
		memset(tag, 0, sizeof(ZCOW_SB_SEED_TAG) - 1);
	}
}

const char *zcow_sb_placement_name(enum zcow_sb_placement p)
{
	return p == ZCOW_SB_PLACE_SEED ? "seed" : "kernel";
}

static uint64_t mirror_zone_no(const struct zdev *dev,
			       enum zcow_sb_placement p, int mirror)
{
	uint64_t zs = dev->info.zone_size;

	if (mirror == 0)
		return 0;
	if (p == ZCOW_SB_PLACE_KERNEL)
		return (mirror == 1 ? KERNEL_MIRROR1_OFFSET :
				      KERNEL_MIRROR2_OFFSET) / zs;
	if (mirror == 1)
		return SEED_MIRROR1_ZONE;
	return zcow_sb_offset(2) / zs < SEED_MIRROR2_MAX_ZONE ?
		       zcow_sb_offset(2) / zs :
		       SEED_MIRROR2_MAX_ZONE;
}

int zcow_sb_locate_mirror(struct zdev *dev, enum zcow_sb_placement p,
			  int mirror, struct zcow_sb_loc *loc_ret)
{
	const struct zdev_info *info = &dev->info;
	uint64_t zno;

	if (mirror < 0 || mirror >= ZCOW_SB_MIRROR_MAX)
		return -EINVAL;
	memset(loc_ret, 0, sizeof(*loc_ret));
	loc_ret->mirror = mirror;
	loc_ret->canonical = zcow_sb_offset(mirror);
	loc_ret->kind = ZCOW_SB_LOC_NONE;
	if (!info->is_zoned) {
		/* As btrfs: a copy must end before the device does. */
		if (loc_ret->canonical + ZCOW_SB_SIZE >= info->size)
			return 0;
		loc_ret->kind = ZCOW_SB_LOC_FIXED;
		loc_ret->fixed = loc_ret->canonical;
		loc_ret->zone[0] = zdev_zone_start(dev, loc_ret->canonical);
		loc_ret->nr_zones = 1;
		return 0;
	}
	zno = mirror_zone_no(dev, p, mirror);
	if (zno + 1 >= info->nr_zones)
		return 0;
	loc_ret->zone[0] = zno * info->zone_size;
	loc_ret->zone[1] = (zno + 1) * info->zone_size;
	loc_ret->nr_zones = 2;
	/* Conventional zones come first (struct zdev_info). */
	if (zno < info->nr_conv) {
		loc_ret->kind = ZCOW_SB_LOC_FIXED;
		loc_ret->fixed = loc_ret->zone[0];
	} else {
		loc_ret->kind = ZCOW_SB_LOC_LOG;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int zcow_sb_reserved_zones(struct zdev *dev, enum zcow_sb_placement p,
			   uint64_t *zones, unsigned int max,
			   unsigned int *nr_ret)
{
	uint64_t all[ZCOW_SB_MIRROR_MAX * ZCOW_SB_LOG_ZONES];
	struct zcow_sb_loc loc;
	unsigned int nr = 0, out = 0, i;
	int m;

	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		zcow_sb_locate_mirror(dev, p, m, &loc);
		for (i = 0; i < loc.nr_zones; i++)
			all[nr++] = loc.zone[i];
	}
	qsort(all, nr, sizeof(all[0]), cmp_u64);
	for (i = 0; i < nr; i++) {
		if (i && all[i] == all[i - 1])
			continue;
		if (out < max)
			zones[out] = all[i];
		out++;
	}
	*nr_ret = out;
	return out > max ? -ENOSPC : 0;
}

bool zcow_sb_is_reserved_zone(struct zdev *dev, enum zcow_sb_placement p,
			      uint64_t zone_start)
{
	uint64_t zones[ZCOW_SB_MIRROR_MAX * ZCOW_SB_LOG_ZONES];
	unsigned int nr, i;

	zcow_sb_reserved_zones(dev, p, zones, ZCOW_SB_MIRROR_MAX *
				       ZCOW_SB_LOG_ZONES, &nr);
	for (i = 0; i < nr; i++)
		if (zones[i] == zdev_zone_start(dev, zone_start))
			return true;
	return false;
}

/* End of the whole superblock slots written in @z. */
static uint64_t used_end(const struct zdev_zone *z)
{
	uint64_t used;

	if (z->cond == ZDEV_COND_FULL)
		used = z->capacity;
	else
		used = z->wp - z->start < z->capacity ? z->wp - z->start :
							 z->capacity;
	return z->start + used / ZCOW_SB_SIZE * ZCOW_SB_SIZE;
}

/* The last whole copy in @z, or NO_COPY. */
static uint64_t last_copy(const struct zdev_zone *z)
{
	uint64_t end = used_end(z);

	return end > z->start ? end - ZCOW_SB_SIZE : NO_COPY;
}

/* E(mpty), I(n use), F(ull); offline zones are an I/O error. */
static int zone_state(const struct zdev_zone *z, char *state_ret)
{
	switch (z->cond) {
	case ZDEV_COND_OFFLINE:
		return -EIO;
	case ZDEV_COND_FULL:
	case ZDEV_COND_READONLY:
		*state_ret = 'F';
		return 0;
	case ZDEV_COND_EMPTY:
		*state_ret = 'E';
		return 0;
	default:
		/* An explicitly opened zone may hold nothing yet. */
		*state_ret = z->wp == z->start ? 'E' : 'I';
		return 0;
	}
}

static int read_copy(struct zdev *dev, uint64_t off, int mirror,
		     struct zcow_super_block *sb, struct zcow_sb_copy *copy)
{
	int ret = zdev_read(dev, sb, ZCOW_SB_SIZE, off, ZDEV_CLASS_SB);

	memset(copy, 0, sizeof(*copy));
	copy->mirror = mirror;
	copy->off = off;
	if (ret)
		return ret;
	copy->is_valid = zcow_sb_check(sb, mirror) == NULL;
	copy->generation = copy->is_valid ? le64toh(sb->generation) : 0;
	copy->log_seq = copy->is_valid ? le64toh(sb->log_root_transid) : 0;
	return 0;
}

/*
 * Is a copy of (@gen, @seq) newer than one of (@gen2, @seq2)?  A tree-log
 * sync writes a superblock of the same generation as the last commit;
 * zcow numbers those writes in log_root_transid (btrfs: "this will help
 * find the new super based on the log root"), so the order is (generation,
 * log_root_transid).  Kernel-written logs hold 0 there.
 */
static bool is_newer(uint64_t gen, uint64_t seq, uint64_t gen2, uint64_t seq2)
{
	return gen > gen2 || (gen == gen2 && seq > seq2);
}

/*
 * The newest valid copy in zone @z (scanning back from its last copy):
 * its offset in *off_ret (NO_COPY when there is none), its generation in
 * gen_ret[0] and its log_root_transid in gen_ret[1].
 */
static int newest_valid_in_zone(struct zdev *dev, const struct zdev_zone *z,
				int mirror, struct zcow_super_block *sb,
				uint64_t *off_ret, uint64_t *gen_ret)
{
	struct zcow_sb_copy copy;
	uint64_t off, best = NO_COPY, gen = 0, seq = 0;
	int ret;

	for (off = used_end(z); off > z->start; off -= ZCOW_SB_SIZE) {
		ret = read_copy(dev, off - ZCOW_SB_SIZE, mirror, sb, &copy);
		if (ret)
			return ret;
		/* Generations grow along a zone; keep going past a bad one. */
		if (copy.is_valid) {
			best = copy.off;
			gen = copy.generation;
			seq = copy.log_seq;
			break;
		}
	}
	*off_ret = best;
	gen_ret[0] = gen;
	gen_ret[1] = seq;
	return 0;
}

static int report_pair(struct zdev *dev, const struct zcow_sb_loc *loc,
		       struct zdev_zone *zones)
{
	unsigned int nr = ZCOW_SB_LOG_ZONES;
	int ret = zdev_report(dev, loc->zone[0], zones, &nr);

	if (ret)
		return ret;
	if (nr != ZCOW_SB_LOG_ZONES || zones[0].start != loc->zone[0] ||
	    zones[1].start != loc->zone[1]) {
		zlog_err(TAG, "mirror %d: cannot report the log zones at %llu",
			 loc->mirror, (unsigned long long)loc->zone[0]);
		return -EIO;
	}
	return 0;
}

/*
 * The log state table (seed 011), rows zone 0, columns zone 1:
 *
 *        E   I   F
 *    E   *   x   0
 *    I   0   x   0
 *    F   1   1   C
 *
 *   E empty, I in use (written, not full), F full (or read-only).
 *   *  no superblock: -ENOENT; the next copy goes to the start of zone 0.
 *   0  write at zone 0's write pointer; the newest copy is just below it,
 *      or, when zone 0 is empty, the last copy of zone 1.
 *   1  write at zone 1's write pointer; the newest copy is just below it,
 *      or, when zone 1 is empty, the last copy of zone 0.
 *   C  both full: the zone whose newest valid copy has the higher
 *      generation is current (ties: zone 1, as the kernel); the other is
 *      reset and written from its start.  zcow compares the newest *valid*
 *      copies, not the last ones: a torn last copy must not make the zone
 *      holding the newest durable superblock look older (it would be
 *      reset, losing it).
 *   x  impossible (the writer never leaves it): -EUCLEAN.
 *
 * The copy below the write pointer: a full zone reports wp = start + len,
 * but its last copy is at start + capacity - 4096 (used_end()).
 */
int zcow_sb_log_position(struct zdev *dev, const struct zcow_sb_loc *loc,
			 struct zcow_sb_log_pos *pos)
{
	struct zcow_super_block *sb = NULL;
	const struct zdev_zone *z0, *z1;
	uint64_t off[2], gen[2][2];
	char s0, s1;
	int ret, i;

	memset(pos, 0, sizeof(*pos));
	pos->read_off = NO_COPY;
	pos->reset = -1;
	if (loc->kind != ZCOW_SB_LOC_LOG)
		return -EINVAL;
	ret = report_pair(dev, loc, pos->zones);
	if (ret)
		return ret;
	z0 = &pos->zones[0];
	z1 = &pos->zones[1];
	ret = zone_state(z0, &pos->state[0]);
	if (!ret)
		ret = zone_state(z1, &pos->state[1]);
	if (ret) {
		zlog_err(TAG, "mirror %d: log zone offline", loc->mirror);
		return ret;
	}
	s0 = pos->state[0];
	s1 = pos->state[1];

	if (s0 == 'E' && s1 == 'E') {
		pos->write_off = z0->start;
		return -ENOENT;
	}
	if (s1 == 'I' && s0 != 'F') {
		zlog_err(TAG, "mirror %d: superblock log zones in state %c%c (zones %llu, %llu): corrupted",
			 loc->mirror, s0, s1, (unsigned long long)z0->start,
			 (unsigned long long)z1->start);
		return -EUCLEAN;
	}
	if (s0 != 'F') {
		/* Rows E and I, columns E and F: zone 0 is current. */
		pos->write_off = s0 == 'E' ? z0->start : z0->wp;
		pos->read_off = s0 == 'E' ? last_copy(z1) : last_copy(z0);
		return 0;
	}
	if (s1 != 'F') {
		/* Row F, columns E and I: zone 1 is current. */
		pos->write_off = s1 == 'E' ? z1->start : z1->wp;
		pos->read_off = s1 == 'E' ? last_copy(z0) : last_copy(z1);
		return 0;
	}

	/* C: both full. */
	sb = malloc(sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	for (i = 0; i < ZCOW_SB_LOG_ZONES; i++) {
		ret = newest_valid_in_zone(dev, &pos->zones[i], loc->mirror, sb,
					   &off[i], gen[i]);
		if (ret)
			goto out;
	}
	if (off[0] == NO_COPY && off[1] == NO_COPY) {
		zlog_err(TAG, "mirror %d: both log zones full and no valid superblock in either",
			 loc->mirror);
		ret = -EUCLEAN;
		goto out;
	}
	if (off[1] == NO_COPY ||
	    (off[0] != NO_COPY &&
	     is_newer(gen[0][0], gen[0][1], gen[1][0], gen[1][1]))) {
		pos->read_off = off[0];
		pos->write_off = z1->start;
		pos->reset = 1;
	} else {
		pos->read_off = off[1];
		pos->write_off = z0->start;
		pos->reset = 0;
	}
out:
	free(sb);
	return ret;
}

/* Scan the whole log for its newest valid copy. */
static int newest_valid_in_log(struct zdev *dev, const struct zcow_sb_loc *loc,
			       const struct zcow_sb_log_pos *pos,
			       struct zcow_super_block *sb, uint64_t *off_ret)
{
	struct zcow_sb_copy copy;
	uint64_t best = NO_COPY, gen = 0, seq = 0, off;
	int i, ret;

	for (i = 0; i < ZCOW_SB_LOG_ZONES; i++) {
		const struct zdev_zone *z = &pos->zones[i];

		for (off = z->start; off < used_end(z); off += ZCOW_SB_SIZE) {
			ret = read_copy(dev, off, loc->mirror, sb, &copy);
			if (ret)
				return ret;
			if (copy.is_valid &&
			    (best == NO_COPY ||
			     !is_newer(gen, seq, copy.generation,
				       copy.log_seq))) {
				best = off;
				gen = copy.generation;
				seq = copy.log_seq;
			}
		}
	}
	*off_ret = best;
	return 0;
}

int zcow_sb_read_mirror(struct zdev *dev, const struct zcow_sb_loc *loc,
			struct zcow_super_block *sb_ret,
			struct zcow_sb_copy *copy_ret)
{
	struct zcow_sb_log_pos pos;
	const char *why;
	uint64_t off;
	int ret;

	memset(copy_ret, 0, sizeof(*copy_ret));
	copy_ret->mirror = loc->mirror;
	switch (loc->kind) {
	case ZCOW_SB_LOC_NONE:
		return -ENOENT;
	case ZCOW_SB_LOC_FIXED:
		ret = read_copy(dev, loc->fixed, loc->mirror, sb_ret, copy_ret);
		if (ret)
			return ret;
		if (copy_ret->is_valid)
			return 0;
		/* Never written: no superblock; written and bad: corrupt. */
		if (le64toh(sb_ret->magic) != ZCOW_SB_MAGIC)
			return -ENOENT;
		zlog_warn(TAG, "mirror %d: superblock at %llu: %s",
			  loc->mirror, (unsigned long long)loc->fixed,
			  zcow_sb_check(sb_ret, loc->mirror));
		return -EUCLEAN;
	case ZCOW_SB_LOC_LOG:
		break;
	}

	ret = zcow_sb_log_position(dev, loc, &pos);
	if (ret)
		return ret;
	if (pos.read_off != NO_COPY) {
		ret = read_copy(dev, pos.read_off, loc->mirror, sb_ret,
				copy_ret);
		if (ret || copy_ret->is_valid)
			return ret;
		why = zcow_sb_check(sb_ret, loc->mirror);
	} else {
		why = "missing";
	}

	/* Beyond the kernel: fall back like `btrfs rescue super-recover`. */
	ret = newest_valid_in_log(dev, loc, &pos, sb_ret, &off);
	if (ret)
		return ret;
	if (off == NO_COPY) {
		zlog_warn(TAG, "mirror %d: newest superblock (at %llu) %s and no valid copy in the log",
			  loc->mirror, (unsigned long long)pos.read_off, why);
		return -EUCLEAN;
	}
	ret = read_copy(dev, off, loc->mirror, sb_ret, copy_ret);
	if (ret)
		return ret;
	copy_ret->is_fallback = true;
	zlog_warn(TAG, "mirror %d: newest superblock (at %llu) %s; using the older valid copy at %llu, generation %llu",
		  loc->mirror, (unsigned long long)pos.read_off, why,
		  (unsigned long long)off,
		  (unsigned long long)copy_ret->generation);
	return 0;
}

static bool is_same_loc(const struct zcow_sb_loc *a, const struct zcow_sb_loc *b)
{
	return a->kind == b->kind && a->fixed == b->fixed &&
	       a->zone[0] == b->zone[0];
}

int zcow_sb_read_latest(struct zdev *dev, struct zcow_super_block *sb_ret,
			struct zcow_sb_copy *copy_ret)
{
	struct zcow_super_block *sb = NULL;
	struct zcow_sb_loc loc, seen[2 * ZCOW_SB_MIRROR_MAX];
	struct zcow_sb_copy copy, best = { .mirror = -1 };
	enum zcow_sb_placement places[2] = { ZCOW_SB_PLACE_SEED,
					     ZCOW_SB_PLACE_KERNEL };
	unsigned int nr_places = 2, nr_seen = 0, i, j;
	bool has_primary = false, is_corrupt = false, is_eio = false;
	uint8_t fsid[16];
	int m, ret;

	sb = malloc(sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 0, &loc);
	seen[nr_seen++] = loc;
	ret = zcow_sb_read_mirror(dev, &loc, sb, &copy);
	if (ret == 0) {
		has_primary = true;
		best = copy;
		*sb_ret = *sb;
		memcpy(fsid, sb->fsid, sizeof(fsid));
		places[0] = zcow_sb_placement_of(sb);
		nr_places = 1;
	} else if (ret == -EUCLEAN) {
		is_corrupt = true;
	} else if (ret != -ENOENT) {
		is_eio = true;
	}

	for (i = 0; i < nr_places; i++) {
		for (m = 1; m < ZCOW_SB_MIRROR_MAX; m++) {
			zcow_sb_locate_mirror(dev, places[i], m, &loc);
			if (loc.kind == ZCOW_SB_LOC_NONE)
				continue;
			for (j = 0; j < nr_seen; j++)
				if (is_same_loc(&seen[j], &loc))
					break;
			if (j < nr_seen)
				continue;
			seen[nr_seen++] = loc;
			ret = zcow_sb_read_mirror(dev, &loc, sb, &copy);
			if (ret == -EUCLEAN)
				is_corrupt = true;
			else if (ret && ret != -ENOENT)
				is_eio = true;
			if (ret)
				continue;
			if (zcow_sb_placement_of(sb) != places[i] &&
			    dev->info.is_zoned) {
				/* A stale log of the other placement. */
				continue;
			}
			if (has_primary && memcmp(sb->fsid, fsid, 16) != 0) {
				zlog_warn(TAG, "mirror %d: superblock of another file system, ignored",
					  m);
				continue;
			}
			if (best.mirror < 0 ||
			    is_newer(copy.generation, copy.log_seq,
				     best.generation, best.log_seq)) {
				best = copy;
				*sb_ret = *sb;
			}
		}
	}
	free(sb);
	if (best.mirror >= 0) {
		*copy_ret = best;
		return 0;
	}
	memset(copy_ret, 0, sizeof(*copy_ret));
	if (is_corrupt)
		return -EUCLEAN;
	return is_eio ? -EIO : -ENOENT;
}

int zcow_sb_for_each_copy(struct zdev *dev, const struct zcow_sb_loc *loc,
			  int (*fn)(void *arg, const struct zcow_sb_copy *copy,
				    const struct zcow_super_block *sb),
			  void *arg)
{
	struct zcow_super_block *sb = NULL;
	struct zdev_zone zones[ZCOW_SB_LOG_ZONES];
	struct zcow_sb_copy copy;
	uint64_t off;
	int ret = 0, i;

	if (loc->kind == ZCOW_SB_LOC_NONE)
		return -ENOENT;
	sb = malloc(sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	if (loc->kind == ZCOW_SB_LOC_FIXED) {
		ret = read_copy(dev, loc->fixed, loc->mirror, sb, &copy);
		if (!ret)
			ret = fn(arg, &copy, sb);
		goto out;
	}
	ret = report_pair(dev, loc, zones);
	if (ret)
		goto out;
	for (i = 0; i < ZCOW_SB_LOG_ZONES; i++) {
		if (zones[i].cond == ZDEV_COND_OFFLINE)
			continue;
		for (off = zones[i].start; off < used_end(&zones[i]);
		     off += ZCOW_SB_SIZE) {
			ret = read_copy(dev, off, loc->mirror, sb, &copy);
			if (!ret)
				ret = fn(arg, &copy, sb);
			if (ret)
				goto out;
		}
	}
out:
	free(sb);
	return ret;
}

/*
 * Append one copy to a log mirror.  The caller flushed first, so every
 * copy already in the log is durable.
 */
static int write_log(struct zdev *dev, const struct zcow_sb_loc *loc,
		     const struct zcow_super_block *sb)
{
	static const uint8_t zeros[ZCOW_SB_SIZE];
	struct zcow_sb_log_pos pos;
	const struct zdev_zone *z;
	uint64_t off, pad;
	int ret = 0, tries, idx;

	for (tries = 0; tries < 3; tries++) {
		ret = zcow_sb_log_position(dev, loc, &pos);
		if (ret && ret != -ENOENT)
			return ret;
		idx = pos.write_off >= pos.zones[1].start ? 1 : 0;
		z = &pos.zones[idx];
		off = pos.write_off;
		if (pos.reset == idx) {
			/*
			 * ORDER: the other zone's newest copy (newer than
			 * anything in this zone) is durable: it was written
			 * with FUA, and the flush that opened this commit
			 * covers any copy that was not.
			 */
			ret = zdev_reset_zone(dev, z->start, ZDEV_CLASS_SB);
			if (ret)
				return ret;
			off = z->start;
		}
		pad = (ZCOW_SB_SIZE - (off - z->start) % ZCOW_SB_SIZE) %
		      ZCOW_SB_SIZE;
		if (off + pad + ZCOW_SB_SIZE > z->start + z->capacity) {
			/*
			 * ORDER: nothing; finishing only closes a zone too
			 * short for another copy, its copies stay, and the
			 * table then moves on to the other zone.
			 */
			ret = zdev_finish_zone(dev, z->start, ZDEV_CLASS_SB);
			if (ret)
				return ret;
			continue;
		}
		if (pad) {
			/* A torn tail left wp off the 4 KiB grid (lba < 4K). */
			ret = zdev_write(dev, zeros, pad, off, ZDEV_WRITE_FUA,
					 ZDEV_CLASS_SB);
			if (ret)
				return ret;
			off += pad;
		}
		/*
		 * ORDER: the flush at the start of the commit made the data
		 * and metadata this superblock points at durable; FUA makes
		 * this copy durable when the write completes.
		 */
		return zdev_write(dev, sb, ZCOW_SB_SIZE, off, ZDEV_WRITE_FUA,
				  ZDEV_CLASS_SB);
	}
	zlog_err(TAG, "mirror %d: no room in the superblock log", loc->mirror);
	return -EUCLEAN;
}

int zcow_sb_write_all(struct zdev *dev, enum zcow_sb_placement p,
		      struct zcow_super_block *sb)
{
	return zcow_sb_write_all_mirrors(dev, p, sb, false, NULL);
}

int zcow_sb_write_all_mirrors(struct zdev *dev, enum zcow_sb_placement p,
			      struct zcow_super_block *sb, bool skip_flush,
			      uint32_t *failed_ret)
{
	struct zcow_super_block *copy = NULL;
	struct zcow_sb_loc loc;
	int ret, first_err = 0, nr_ok = 0, nr_tried = 0, m;
	uint32_t failed = 0;

	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	/*
	 * ORDER: everything the new superblock points at (data, metadata,
	 * and the previous superblock copies) durable before any copy of it
	 * is written.  (Test-only mutations skip it: docs/crash.md.)
	 */
	ret = skip_flush ? 0 : zdev_flush(dev);
	if (ret) {
		first_err = ret;
		goto out;
	}
	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		zcow_sb_locate_mirror(dev, p, m, &loc);
		if (loc.kind == ZCOW_SB_LOC_NONE)
			continue;
		nr_tried++;
		*copy = *sb;
		copy->bytenr = htole64(loc.canonical);
		zcow_sb_seal(copy);
		if (m == 0)
			*sb = *copy;
		/*
		 * ORDER: mirror m - 1's copy is durable (FUA) before mirror
		 * m's is written: a torn write can cost one mirror only.
		 */
		if (loc.kind == ZCOW_SB_LOC_FIXED)
			ret = zdev_write(dev, copy, ZCOW_SB_SIZE, loc.fixed,
					 ZDEV_WRITE_FUA, ZDEV_CLASS_SB);
		else
			ret = write_log(dev, &loc, copy);
		if (ret) {
			if (!failed_ret)
				zlog_err(TAG, "writing superblock mirror %d failed: %d",
					 m, ret);
			if (!first_err)
				first_err = ret;
			failed |= 1u << m;
			continue;
		}
		nr_ok++;
	}
	if (nr_tried == 0) {
		zlog_err(TAG, "device too small for a superblock");
		first_err = -EINVAL;
	}
out:
	free(copy);
	if (failed_ret)
		*failed_ret = failed;
	if (nr_ok > 0)
		return 0;
	return first_err ? first_err : -EIO;
}
