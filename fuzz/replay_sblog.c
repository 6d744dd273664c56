// SPDX-License-Identifier: MIT
/*
 * fuzz: the superblock-log harness: core/sb.c on rewritten log zones.
 *
 * Each input starts from a fresh file system (mkfs on a 20-zone simulator,
 * so the seed placement has the primary log in zones 0/1 and mirror 1 in
 * zones 16/17), then rewrites those four zones from the input:
 *
 *   u8 flags         bit 0: reseal each copy's crc32c after the patches
 *                    bit 1: two conventional zones first (zones 0/1: the
 *                           primary is a fixed copy at 64 KiB)
 *                    bit 2: also mount read-write and commit twice
 *   4 x { u8 nr_blocks, u8 action, u8 gen }   zones 0, 1, 16, 17
 *                    nr_blocks copies are written from the zone start (from
 *                    64 KiB in a conventional zone), copy j holding the
 *                    mkfs superblock with generation gen + j and bytenr of
 *                    its mirror; action 1 finishes the zone, 2 closes it,
 *                    3 opens it explicitly, 4 resets it after writing
 *   patches until the end: { u8 zone, u8 copy, u16le offset, u8 len,
 *                    len bytes } overwrite bytes of one copy before it is
 *                    written (len is 1..16)
 *
 * Then every reader runs: log position, per-mirror read, each copy, the
 * newest copy, and a read-only mount.  Oracle: a superblock a reader
 * returns with 0 passes zcow_sb_check() for the mirror it names; after a
 * read-write mount whose commits and unmount all return 0, a read-only
 * remount finds exactly the last committed generation.
 */
#include "fuzz.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define SB_ZONES	20
#define SB_ZONE_SIZE	(4 * MiB)
#define SB_ZONE_CAP	(1 * MiB)
#define NR_LOG_ZONES	4
#define HDR_LEN		(1 + 3 * NR_LOG_ZONES)
#define MAX_COPIES	(SB_ZONE_CAP / ZCOW_SB_SIZE)

static const uint64_t log_zone[NR_LOG_ZONES] = { 0, 1, 16, 17 };

struct patch_ctx {
	const uint8_t *p, *end;
};

static int new_fs(bool has_conv, struct zdev **dev_ret)
{
	struct zsim_config cfg = {
		.nr_zones = SB_ZONES,
		.zone_size = SB_ZONE_SIZE,
		.zone_capacity = SB_ZONE_CAP,
		.nr_conv = has_conv ? 2 : 0,
		.seed = 1,
	};
	struct zcow_mkfs_opts mo = { .seed = 1 };
	int ret;

	ret = zsim_create(&cfg, dev_ret);
	if (ret)
		return ret;
	ret = zcow_mkfs(*dev_ret, &mo);
	if (ret) {
		zdev_close(*dev_ret);
		*dev_ret = NULL;
	}
	return ret;
}

/* Apply every patch of the input that targets (zone @zi, copy @j). */
static void apply_patches(const uint8_t *p, const uint8_t *end, int zi,
			  unsigned int j, unsigned int nr, uint8_t *copy)
{
	while (end - p >= 5) {
		unsigned int z = p[0] % NR_LOG_ZONES;
		unsigned int c = nr ? p[1] % nr : 0;
		unsigned int off = (p[2] | p[3] << 8) % ZCOW_SB_SIZE;
		unsigned int len = p[4] % 16 + 1;

		p += 5;
		if (len > (unsigned int)(end - p))
			len = end - p;
		if (off + len > ZCOW_SB_SIZE)
			len = ZCOW_SB_SIZE - off;
		if ((int)z == zi && c == j)
			memcpy(copy + off, p, len);
		p += len;
	}
}

static int rewrite_zone(struct zdev *dev, const struct zcow_super_block *tpl,
			const uint8_t *data, size_t size, int zi, bool reseal)
{
	const uint8_t *h = data + 1 + 3 * zi;
	uint64_t start = log_zone[zi] * SB_ZONE_SIZE;
	unsigned int nr = h[0] % (MAX_COPIES + 1), j;
	int mirror = zi < 2 ? 0 : 1;
	struct zdev_zone zone;
	struct zcow_super_block copy;
	int ret;

	ret = zdev_report_zone(dev, start, &zone);
	if (ret)
		return ret;
	if (zdev_zone_is_seq(&zone)) {
		ret = zdev_reset_zone(dev, start, ZDEV_CLASS_SB);
		if (ret)
			return ret;
	} else {
		/* The fixed copy lives at 64 KiB of zone 0. */
		start += zcow_sb_offset(0);
		if (nr > (SB_ZONE_SIZE - zcow_sb_offset(0)) / ZCOW_SB_SIZE)
			nr = 0;
	}
	for (j = 0; j < nr; j++) {
		copy = *tpl;
		copy.generation = htole64((uint64_t)h[2] + j);
		copy.bytenr = htole64(zcow_sb_offset(mirror));
		zcow_sb_seal(&copy);
		apply_patches(data + HDR_LEN, data + size, zi, j, nr,
			      (uint8_t *)&copy);
		if (reseal)
			zcow_sb_seal(&copy);
		ret = zdev_write(dev, &copy, ZCOW_SB_SIZE,
				 start + (uint64_t)j * ZCOW_SB_SIZE, 0,
				 ZDEV_CLASS_SB);
		if (ret)
			return ret;
	}
	if (!zdev_zone_is_seq(&zone))
		return 0;
	switch (h[1] % 5) {
	case 1:
		return zdev_finish_zone(dev, log_zone[zi] * SB_ZONE_SIZE,
					ZDEV_CLASS_SB);
	case 2:
		return zdev_zone_mgmt(dev, ZDEV_ZONE_CLOSE,
				      log_zone[zi] * SB_ZONE_SIZE,
				      SB_ZONE_SIZE, ZDEV_CLASS_SB);
	case 3:
		return zdev_zone_mgmt(dev, ZDEV_ZONE_OPEN,
				      log_zone[zi] * SB_ZONE_SIZE,
				      SB_ZONE_SIZE, ZDEV_CLASS_SB);
	case 4:
		return zdev_reset_zone(dev, log_zone[zi] * SB_ZONE_SIZE,
				       ZDEV_CLASS_SB);
	}
	return 0;
}

static int count_copy(void *arg, const struct zcow_sb_copy *copy,
		      const struct zcow_super_block *sb)
{
	(void)copy;
	(void)sb;
	(*(unsigned int *)arg)++;
	return 0;
}

static int check_sb(const struct zcow_super_block *sb,
		    const struct zcow_sb_copy *copy, const char *who,
		    char *msg)
{
	const char *why = zcow_sb_check(sb, copy->mirror);

	if (why || !copy->is_valid ||
	    le64toh(sb->generation) != copy->generation) {
		snprintf(msg, ZFUZZ_MSG_LEN,
			 "%s returned 0 with a bad superblock (mirror %d off "
			 "%llu: %s, is_valid %d, gen %llu vs %llu)",
			 who, copy->mirror, (unsigned long long)copy->off,
			 why ? why : "checks", copy->is_valid,
			 (unsigned long long)le64toh(sb->generation),
			 (unsigned long long)copy->generation);
		return 1;
	}
	return 0;
}

static int run_readers(struct zdev *dev, char *msg)
{
	enum zcow_sb_placement pl;
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;
	int m;

	for (pl = ZCOW_SB_PLACE_SEED; pl <= ZCOW_SB_PLACE_KERNEL; pl++) {
		for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
			struct zcow_sb_log_pos pos;
			struct zcow_sb_loc loc;
			unsigned int nr = 0;

			if (zcow_sb_locate_mirror(dev, pl, m, &loc))
				continue;
			if (loc.kind == ZCOW_SB_LOC_LOG)
				zcow_sb_log_position(dev, &loc, &pos);
			if (!zcow_sb_read_mirror(dev, &loc, &sb, &copy) &&
			    check_sb(&sb, &copy, "zcow_sb_read_mirror", msg))
				return 1;
			zcow_sb_for_each_copy(dev, &loc, count_copy, &nr);
		}
	}
	if (!zcow_sb_read_latest(dev, &sb, &copy) &&
	    check_sb(&sb, &copy, "zcow_sb_read_latest", msg))
		return 1;
	return 0;
}

static int rw_round(struct zdev *dev, char *msg)
{
	struct zcow_mount_opts rw = { 0 }, ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	uint64_t gen;
	int ret;

	if (zcow_mount(dev, &rw, &fs))
		return 0;
	ret = zcow_commit_super(fs);
	gen = fs->generation;
	ret = zcow_unmount(fs) ?: ret;
	if (ret)
		return 0;	/* refused: a right answer */
	gen++;			/* the unmount's commit */
	fs = NULL;
	ret = zcow_mount(dev, &ro, &fs);
	if (ret) {
		snprintf(msg, ZFUZZ_MSG_LEN,
			 "committed generation %llu with 0, remount: %d",
			 (unsigned long long)gen, ret);
		return 1;
	}
	if (fs->generation != gen) {
		snprintf(msg, ZFUZZ_MSG_LEN,
			 "committed generation %llu with 0, remount found %llu",
			 (unsigned long long)gen,
			 (unsigned long long)fs->generation);
		zcow_unmount(fs);
		return 1;
	}
	zcow_unmount(fs);
	return 0;
}

int zfuzz_sblog_one(const uint8_t *data, size_t size, char *msg)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_super_block tpl;
	struct zcow_sb_copy copy;
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	int ret, zi, failed = 0;

	msg[0] = '\0';
	zfuzz_init();
	if (size < HDR_LEN)
		return 0;
	ret = new_fs(data[0] & 2, &dev);
	if (ret)
		return ret;
	ret = zcow_sb_read_latest(dev, &tpl, &copy);
	for (zi = 0; zi < NR_LOG_ZONES && !ret; zi++)
		ret = rewrite_zone(dev, &tpl, data, size, zi, data[0] & 1);
	if (ret) {
		zdev_close(dev);
		return ret;
	}
	failed = run_readers(dev, msg);
	if (!failed && !zcow_mount(dev, &ro, &fs)) {
		zcow_check(fs, NULL, NULL);
		zcow_unmount(fs);
	}
	if (!failed && (data[0] & 4))
		failed = rw_round(dev, msg);
	zdev_close(dev);
	return failed;
}

int zfuzz_sblog_seed(int variant, uint8_t *buf, size_t len)
{
	/* flags; zones 0, 1, 16, 17: nr_blocks, action, gen */
	static const uint8_t seeds[ZFUZZ_NR_SBLOG_SEEDS][HDR_LEN] = {
		/* one copy per zone: what mkfs writes */
		{ 1, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0 },
		/* zone 0 full, zone 1 in use: the log wrapped once */
		{ 5, 255, 1, 1, 3, 0, 0, 255, 1, 1, 3, 0, 0 },
		/* conventional primary, a log in mirror 1; read-write */
		{ 7, 1, 0, 9, 0, 0, 0, 4, 0, 6, 2, 0, 10 },
		/* both zones of each pair full */
		{ 1, 255, 1, 1, 255, 1, 0, 255, 1, 1, 255, 1, 0 },
	};

	if (variant < 0 || variant >= ZFUZZ_NR_SBLOG_SEEDS)
		return -EINVAL;
	if (len < HDR_LEN + 6)
		return -ENOSPC;
	memcpy(buf, seeds[variant], HDR_LEN);
	/* one patch: the label of copy 0 of zone 0 */
	memcpy(buf + HDR_LEN, "\0\0\x2b\x01\x00Z", 6);
	return HDR_LEN + 6;
}
