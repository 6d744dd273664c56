// SPDX-License-Identifier: MIT
/*
 * The superblock and its log (core/sb.c, core/fs.c): the on-disk layout
 * against kernel-written bytes, every row of the log state table,
 * wrap-around, conventional first zones, emulated mode, both placements,
 * the mkfs refusals, corruption and the fall back to an older valid copy,
 * and every captured kernel vector in tests/data/kernel-sblog/.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csum.h"
#include "sb.h"
#include "tests.h"
#include "fs.h"
#include "zdev.h"
#include "zlog.h"
#include "zsim.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define ZS (4 * MiB)		/* zone size of most tests */
#define CAP (16 * 1024ULL)	/* 4 superblocks per zone */
#define SBS ZCOW_SB_SIZE
#define VECTORS ZCOW_TESTDATA "/kernel-sblog"

static struct zdev *new_sim(uint64_t nr_zones, uint64_t zone_size,
			    uint64_t cap, uint64_t nr_conv)
{
	struct zsim_config cfg = { .nr_zones = nr_zones,
				   .zone_size = zone_size,
				   .zone_capacity = cap, .nr_conv = nr_conv };

	return zcow_test_sim(&cfg);
}

static void do_mkfs(struct zdev *dev, enum zcow_sb_placement p)
{
	struct zcow_mkfs_opts opts = { .placement = p, .seed = 7 };

	ck_assert_int_eq(zcow_mkfs(dev, &opts), 0);
}

/* Mount, check the generation, unmount without writing. */
static uint64_t mounted_gen(struct zdev *dev)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	uint64_t gen;

	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	gen = fs->generation;
	ck_assert_int_eq(zcow_unmount(fs), 0);
	return gen;
}

/*
 * n + 1 new generations of the superblock alone, as a commit writes them
 * (the log rows here are about the superblock log, not the trees: with
 * 16 KiB zones a full commit's tree nodes would not fit).
 */
static void commit_n(struct zdev *dev, int n)
{
	struct zcow_super_block sb;
	struct zcow_sb_copy found;
	int i;

	for (i = 0; i <= n; i++) {
		ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &found), 0);
		sb.generation = htole64(le64toh(sb.generation) + 1);
		ck_assert_int_eq(zcow_sb_write_all(dev,
						   zcow_sb_placement_of(&sb),
						   &sb), 0);
	}
}

static void primary_pos(struct zdev *dev, struct zcow_sb_log_pos *pos,
			int expect_ret)
{
	struct zcow_sb_loc loc;

	ck_assert_int_eq(zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 0,
					       &loc), 0);
	ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_LOG);
	ck_assert_int_eq(zcow_sb_log_position(dev, &loc, pos), expect_ret);
}

/* Write a valid copy of generation @gen for @mirror at @off by hand. */
static void put_copy(struct zdev *dev, uint64_t off, int mirror, uint64_t gen,
		     uint64_t flags, uint64_t incompat)
{
	struct zcow_super_block sb;

	memset(&sb, 0, sizeof(sb));
	sb.magic = htole64(ZCOW_SB_MAGIC);
	sb.bytenr = htole64(zcow_sb_offset(mirror));
	sb.generation = htole64(gen);
	sb.flags = htole64(flags);
	sb.incompat_flags = htole64(incompat);
	sb.total_bytes = htole64(dev->info.size);
	sb.num_devices = htole64(1);
	sb.sectorsize = htole32(4096);
	sb.nodesize = htole32(16384);
	memset(sb.fsid, 0xab, sizeof(sb.fsid));
	zcow_sb_seal(&sb);
	ck_assert_int_eq(zdev_write(dev, &sb, SBS, off, ZDEV_WRITE_FUA,
				    ZDEV_CLASS_SB), 0);
}

#define GOOD_FLAGS (ZCOW_SUPER_FLAG_WRITTEN | ZCOW_SUPER_FLAG_SEED_PLACEMENT)

static void put_good(struct zdev *dev, uint64_t off, uint64_t gen)
{
	put_copy(dev, off, 0, gen, GOOD_FLAGS, ZCOW_INCOMPAT_ZONED);
}

static void put_garbage(struct zdev *dev, uint64_t off)
{
	uint8_t buf[SBS];

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(zdev_write(dev, buf, SBS, off, ZDEV_WRITE_FUA,
				    ZDEV_CLASS_OTHER), 0);
}

/* ---- layout ---------------------------------------------------------- */

START_TEST(test_sb_crc32c_is_btrfs_crc32c)
{
	ck_assert_uint_eq(zcow_crc32c("123456789", 9), 0xe3069283u);
}
END_TEST

/* The last superblock of the kernel's v3 log, read as raw bytes. */
START_TEST(test_sb_layout_reads_kernel_written_fields)
{
	struct zcow_super_block sb;
	FILE *f = fopen(VECTORS "/v3-zone-switch/zones/1.bin", "rb");

	ck_assert_ptr_nonnull(f);
	/* zone 1 holds 151 copies; the last is generation 1180 */
	ck_assert_int_eq(fseek(f, 150 * SBS, SEEK_SET), 0);
	ck_assert_uint_eq(fread(&sb, 1, sizeof(sb), f), sizeof(sb));
	fclose(f);
	ck_assert_ptr_null(zcow_sb_check(&sb, 0));
	ck_assert_uint_eq(sb.csum[0], 0x0f);
	ck_assert_uint_eq(sb.csum[3], 0x75);
	ck_assert_uint_eq(le64toh(sb.generation), 1180);
	ck_assert_uint_eq(le64toh(sb.bytenr), 65536);
	ck_assert_uint_eq(le64toh(sb.total_bytes), 1073741824ULL);
	ck_assert_uint_eq(le64toh(sb.bytes_used), 589824);
	ck_assert_uint_eq(le64toh(sb.root), 192823296ULL);
	ck_assert_uint_eq(le64toh(sb.chunk_root), 9256960);
	ck_assert_uint_eq(le64toh(sb.chunk_root_generation), 1152);
	ck_assert_uint_eq(le32toh(sb.sectorsize), 4096);
	ck_assert_uint_eq(le32toh(sb.nodesize), 16384);
	ck_assert_uint_eq(le32toh(sb.leafsize), 16384);
	ck_assert_uint_eq(le32toh(sb.stripesize), 4096);
	ck_assert_uint_eq(le32toh(sb.sys_chunk_array_size), 97);
	ck_assert_uint_eq(le64toh(sb.root_dir_objectid), 6);
	ck_assert_uint_eq(le64toh(sb.num_devices), 1);
	ck_assert_uint_eq(le64toh(sb.compat_ro_flags), 0x3);
	ck_assert_uint_eq(le64toh(sb.incompat_flags), 0x1361);
	ck_assert(le64toh(sb.incompat_flags) & ZCOW_INCOMPAT_ZONED);
	ck_assert_uint_eq(le64toh(sb.uuid_tree_generation), 1180);
	ck_assert_uint_eq(le64toh(sb.dev_item.devid), 1);
	ck_assert_uint_eq(le64toh(sb.dev_item.total_bytes), 1073741824ULL);
	ck_assert_uint_eq(le64toh(sb.dev_item.bytes_used), 184549376ULL);
	ck_assert_uint_eq(le32toh(sb.dev_item.io_align), 4096);
	ck_assert_uint_eq(sb.fsid[0], 0x5b);
	ck_assert_uint_eq(sb.dev_item.uuid[0], 0x14);
	ck_assert_mem_eq(sb.dev_item.fsid, sb.fsid, 16);
	ck_assert_uint_eq(zcow_sb_placement_of(&sb), ZCOW_SB_PLACE_KERNEL);
}
END_TEST

START_TEST(test_sb_offsets_are_btrfs_mirror_offsets)
{
	ck_assert_uint_eq(zcow_sb_offset(0), 64 * 1024);
	ck_assert_uint_eq(zcow_sb_offset(1), 64 * MiB);
	ck_assert_uint_eq(zcow_sb_offset(2), 256 * GiB);
}
END_TEST

/* ---- kernel vectors -------------------------------------------------- */

static uint64_t read_expected(const char *dir)
{
	char path[700];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/expected-generation", dir);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fscanf(f, "%llu", &v), 1);
	fclose(f);
	return v;
}

START_TEST(test_sb_kernel_vectors_mount_at_expected_generation)
{
	char dir[512], spec[600];
	struct dirent *de;
	struct zdev *dev;
	struct zcow_fs *fs = NULL;
	unsigned int nr = 0;
	uint64_t want;
	DIR *d = opendir(VECTORS);

	ck_assert_msg(d != NULL, "run the tests from the repo root");
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", VECTORS, de->d_name);
		if (access(dir, R_OK) || strstr(de->d_name, "README"))
			continue;
		want = read_expected(dir);
		snprintf(spec, sizeof(spec), "sim:import=%s", dir);
		ck_assert_int_eq(zdev_open(spec, &dev), 0);
		ck_assert_msg(mounted_gen(dev) == want,
			      "vector %s: want generation %llu", de->d_name,
			      (unsigned long long)want);
		/* A kernel's file system has a free-space tree: zcow does
		 * not write into it ... */
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
		/* ... but its log writer continues the kernel's log. */
		commit_n(dev, 2);
		ck_assert_uint_eq(mounted_gen(dev), want + 3);
		zdev_close(dev);
		nr++;
	}
	closedir(d);
	ck_assert_uint_ge(nr, 3);
}
END_TEST

/* ---- the state table, row by row --------------------------------------- */

START_TEST(test_sb_log_both_empty_is_no_superblock)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;
	struct zcow_fs *fs = NULL;

	primary_pos(dev, &pos, -ENOENT);
	ck_assert_uint_eq(pos.write_off, 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -ENOENT);
	ck_assert_ptr_null(fs);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_in_use_empty_reads_below_wp)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 0);	/* generation 2 */
	primary_pos(dev, &pos, 0);
	ck_assert_int_eq(pos.state[0], 'I');
	ck_assert_int_eq(pos.state[1], 'E');
	ck_assert_uint_eq(pos.read_off, SBS);
	ck_assert_uint_eq(pos.write_off, 2 * SBS);
	ck_assert_uint_eq(mounted_gen(dev), 2);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_full_empty_reads_last_of_zone0)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 2);	/* generations 1..4 fill zone 0 */
	primary_pos(dev, &pos, 0);
	ck_assert_int_eq(pos.state[0], 'F');
	ck_assert_int_eq(pos.state[1], 'E');
	/* full zone: wp = start + len, last copy at capacity - 4096 */
	ck_assert_uint_eq(pos.zones[0].wp, ZS);
	ck_assert_uint_eq(pos.read_off, CAP - SBS);
	ck_assert_uint_eq(pos.write_off, ZS);
	ck_assert_int_eq(pos.reset, -1);
	ck_assert_uint_eq(mounted_gen(dev), 4);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_full_in_use_reads_zone1)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 3);	/* 1..4 in zone 0, 5 in zone 1 */
	primary_pos(dev, &pos, 0);
	ck_assert_int_eq(pos.state[0], 'F');
	ck_assert_int_eq(pos.state[1], 'I');
	ck_assert_uint_eq(pos.read_off, ZS);
	ck_assert_uint_eq(pos.write_off, ZS + SBS);
	ck_assert_uint_eq(mounted_gen(dev), 5);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_both_full_picks_newer_generation)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 6);	/* 1..4 zone 0, 5..8 zone 1 */
	primary_pos(dev, &pos, 0);
	ck_assert_int_eq(pos.state[0], 'F');
	ck_assert_int_eq(pos.state[1], 'F');
	ck_assert_uint_eq(pos.read_off, ZS + CAP - SBS);
	ck_assert_uint_eq(pos.write_off, 0);
	ck_assert_int_eq(pos.reset, 0);
	ck_assert_uint_eq(mounted_gen(dev), 8);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_both_full_zone0_newer_resets_zone1)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;
	int i;

	for (i = 0; i < 4; i++)
		put_good(dev, ZS + i * SBS, 1 + i);
	for (i = 0; i < 4; i++)
		put_good(dev, i * SBS, 5 + i);
	primary_pos(dev, &pos, 0);
	ck_assert_uint_eq(pos.read_off, CAP - SBS);
	ck_assert_int_eq(pos.reset, 1);
	ck_assert_uint_eq(pos.write_off, ZS);
	ck_assert_uint_eq(mounted_gen(dev), 8);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_empty_full_reads_last_of_zone1)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 6);
	/* the state a cut between the reset and the write leaves */
	ck_assert_int_eq(zdev_reset_zone(dev, 0, ZDEV_CLASS_SB), 0);
	primary_pos(dev, &pos, 0);
	ck_assert_int_eq(pos.state[0], 'E');
	ck_assert_int_eq(pos.state[1], 'F');
	ck_assert_uint_eq(pos.read_off, ZS + CAP - SBS);
	ck_assert_uint_eq(pos.write_off, 0);
	ck_assert_uint_eq(mounted_gen(dev), 8);
	commit_n(dev, 0);
	ck_assert_uint_eq(mounted_gen(dev), 9);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_in_use_full_reads_zone0)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 7);	/* 9 wraps into zone 0 */
	primary_pos(dev, &pos, 0);
	ck_assert_int_eq(pos.state[0], 'I');
	ck_assert_int_eq(pos.state[1], 'F');
	ck_assert_uint_eq(pos.read_off, 0);
	ck_assert_uint_eq(pos.write_off, SBS);
	ck_assert_uint_eq(mounted_gen(dev), 9);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_empty_in_use_is_corrupt)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;
	struct zcow_fs *fs = NULL;

	put_good(dev, ZS, 1);
	primary_pos(dev, &pos, -EUCLEAN);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_log_both_in_use_is_corrupt)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;
	struct zcow_fs *fs = NULL;

	put_good(dev, 0, 1);
	put_good(dev, ZS, 2);
	primary_pos(dev, &pos, -EUCLEAN);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	zdev_close(dev);
}
END_TEST

/* ---- wrap-around --------------------------------------------------------- */

START_TEST(test_sb_log_wraps_and_resets_only_the_older_zone)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;
	struct zdev_stats st;
	int i;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	for (i = 2; i <= 40; i++) {
		commit_n(dev, 0);
		primary_pos(dev, &pos, 0);
		/* never both in use, never the newest zone reset */
		ck_assert(!(pos.state[0] == 'I' && pos.state[1] == 'I'));
		ck_assert_uint_eq(mounted_gen(dev), (uint64_t)i);
		/* generation g lives in slot (g - 1) % 8 of the pair */
		ck_assert_uint_eq(pos.read_off,
				  ((i - 1) % 8 / 4) * ZS + ((i - 1) % 4) * SBS);
	}
	commit_n(dev, 0);
	zdev_get_stats(dev, &st);
	/* 41 copies in rings of 8: a zone is reset before generations
	 * 9, 13, 17, ..., 41 */
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_SB][ZDEV_OP_RESET], 9);
	ck_assert_uint_eq(mounted_gen(dev), 41);
	zdev_close(dev);
}
END_TEST

/* ---- conventional zones, emulated mode, placements ----------------------- */

START_TEST(test_sb_conventional_first_zone_keeps_fixed_copy)
{
	struct zdev *dev = new_sim(20, ZS, CAP, 2);
	struct zcow_super_block sb;
	struct zcow_sb_loc loc;
	struct zcow_sb_log_pos pos;

	ck_assert_int_eq(zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 0,
					       &loc), 0);
	ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_FIXED);
	ck_assert_uint_eq(loc.fixed, 0);
	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 9);	/* generation 11 */
	ck_assert_uint_eq(mounted_gen(dev), 11);
	/* written in place at the zone start, bytenr still 64 KiB */
	ck_assert_int_eq(zdev_read(dev, &sb, SBS, 0, ZDEV_CLASS_SB), 0);
	ck_assert_ptr_null(zcow_sb_check(&sb, 0));
	ck_assert_uint_eq(le64toh(sb.generation), 11);
	ck_assert_int_eq(zdev_read(dev, &sb, SBS, SBS, ZDEV_CLASS_SB), 0);
	ck_assert_uint_ne(le64toh(sb.magic), ZCOW_SB_MAGIC);
	/* mirror 1 is a log in zones 16, 17 */
	ck_assert_int_eq(zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 1,
					       &loc), 0);
	ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_LOG);
	ck_assert_uint_eq(loc.zone[0], 16 * ZS);
	ck_assert_int_eq(zcow_sb_log_position(dev, &loc, &pos), 0);
	/* 1..4 zone 16, 5..8 zone 17, 9..11 zone 16 again */
	ck_assert_uint_eq(pos.read_off, 16 * ZS + 2 * SBS);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_emulated_mode_uses_fixed_btrfs_offsets)
{
	char path[] = "/tmp/zcow-sb-emu-XXXXXX", spec[128];
	struct zcow_super_block sb;
	struct zcow_sb_loc loc;
	struct zdev *dev = NULL;
	uint64_t zones[8];
	unsigned int nr;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 128 * MiB), 0);
	close(fd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=4M", path);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	unlink(path);
	ck_assert(!dev->info.is_zoned);
	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 3);
	ck_assert_uint_eq(mounted_gen(dev), 5);
	ck_assert_int_eq(zdev_read(dev, &sb, SBS, 64 * 1024, ZDEV_CLASS_SB),
			 0);
	ck_assert_uint_eq(le64toh(sb.generation), 5);
	ck_assert_int_eq(zdev_read(dev, &sb, SBS, 64 * MiB, ZDEV_CLASS_SB), 0);
	ck_assert_ptr_null(zcow_sb_check(&sb, 1));
	ck_assert_uint_eq(le64toh(sb.generation), 5);
	ck_assert_int_eq(zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 2,
					       &loc), 0);
	ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_NONE);
	ck_assert_int_eq(zcow_sb_reserved_zones(dev, ZCOW_SB_PLACE_SEED, zones,
						8, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_uint_eq(zones[0], 0);
	ck_assert_uint_eq(zones[1], 64 * MiB);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_seed_placement_third_mirror_at_zone_1024_or_256g)
{
	struct zdev *dev = new_sim(1100, ZS, CAP, 0);
	struct zcow_sb_loc loc;
	uint64_t zones[8];
	unsigned int nr;

	ck_assert_int_eq(zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 2,
					       &loc), 0);
	ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_LOG);
	/* 256 GiB / 4 MiB = 65536 > 1024 */
	ck_assert_uint_eq(loc.zone[0], 1024 * ZS);
	ck_assert_int_eq(zcow_sb_reserved_zones(dev, ZCOW_SB_PLACE_SEED, zones,
						8, &nr), 0);
	ck_assert_uint_eq(nr, 6);
	ck_assert_uint_eq(zones[2], 16 * ZS);
	ck_assert_uint_eq(zones[5], 1025 * ZS);
	ck_assert(zcow_sb_is_reserved_zone(dev, ZCOW_SB_PLACE_SEED, 17 * ZS));
	ck_assert(!zcow_sb_is_reserved_zone(dev, ZCOW_SB_PLACE_SEED, 2 * ZS));
	/* a mirror that does not fit is skipped: 1025 zones */
	zdev_close(dev);
	dev = new_sim(1025, ZS, CAP, 0);
	ck_assert_int_eq(zcow_sb_locate_mirror(dev, ZCOW_SB_PLACE_SEED, 2,
					       &loc), 0);
	ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_NONE);
	zdev_close(dev);
}
END_TEST

/* 8 GiB zones: seed mirrors at zones 16, 32; kernel at 64, 512. */
START_TEST(test_sb_both_placements_write_and_read_their_mirrors)
{
	static const uint64_t want[2][3] = { { 0, 16, 32 }, { 0, 64, 512 } };
	const uint64_t zs = 8 * GiB;
	struct zcow_sb_log_pos pos;
	struct zcow_sb_loc loc;
	struct zcow_fs *fs = NULL;
	struct zdev *dev;
	int p, m;

	for (p = 0; p < 2; p++) {
		dev = new_sim(520, zs, 64 * 1024, 0);
		do_mkfs(dev, (enum zcow_sb_placement)p);
		commit_n(dev, 1);
		for (m = 0; m < 3; m++) {
			zcow_sb_locate_mirror(dev, (enum zcow_sb_placement)p,
					      m, &loc);
			ck_assert_int_eq(loc.kind, ZCOW_SB_LOC_LOG);
			ck_assert_uint_eq(loc.zone[0], want[p][m] * zs);
			ck_assert_int_eq(zcow_sb_log_position(dev, &loc, &pos),
					 0);
			ck_assert_uint_eq(pos.read_off, loc.zone[0] + 2 * SBS);
		}
		/* the other placement's mirrors stay empty */
		zcow_sb_locate_mirror(dev, (enum zcow_sb_placement)!p, 1, &loc);
		ck_assert_int_eq(zcow_sb_log_position(dev, &loc, &pos),
				 -ENOENT);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
		ck_assert_int_eq(fs->placement, p);
		ck_assert_uint_eq(fs->generation, 3);
		zcow_unmount(fs);
		/* lose the primary: the recorded placement's mirrors serve */
		ck_assert_int_eq(zdev_reset_zone(dev, 0, ZDEV_CLASS_OTHER), 0);
		ck_assert_uint_eq(mounted_gen(dev), 4);
		zdev_close(dev);
	}
}
END_TEST

/* ---- mkfs refusals (geometry checked before any I/O) --------------------- */

static int no_io_report(struct zdev *dev, uint64_t from,
			struct zdev_zone *zones, unsigned int *nr_ret)
{
	(void)dev, (void)from, (void)zones, (void)nr_ret;
	return -EIO;
}

static const struct zdev_ops no_io_ops = { .report = no_io_report };

static char last_err[512];

static struct zcow_test_log keep_err = { last_err, sizeof(last_err) };

/* Every error message of a call, appended. */
static char all_errs[2048];

static void keep_all_errs(void *arg, enum zlog_level level, const char *tag,
			  const char *msg)
{
	size_t n = strlen(all_errs);

	(void)arg, (void)tag;
	if (level >= ZLOG_ERR && n + 2 < sizeof(all_errs))
		snprintf(all_errs + n, sizeof(all_errs) - n, "%s\n", msg);
}

/*
 * An image of the format before the btrfs-compatible trees (no uuid
 * tree, no data relocation tree: their root items missing) is refused
 * with -EUCLEAN and a message that names the format change, not only
 * the missing item.
 */
START_TEST(test_sb_mount_refuses_pre_btrfs_format_naming_it)
{
	/* conventional zones: the root tree's leaf is edited in place */
	struct zdev *dev = new_sim(16, ZS, 0, 16);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	uint64_t bytenr, phys;
	uint32_t i, nr, ns;
	uint8_t *node;
	int hidden = 0;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ns = fs->nodesize;
	zcow_tree_root(&fs->root_tree, &bytenr, NULL, NULL);
	ck_assert_int_eq(zcow_map_logical(fs, bytenr, ns, &phys), 0);
	zcow_unmount(fs);
	node = malloc(ns);
	ck_assert_ptr_nonnull(node);
	ck_assert_int_eq(zdev_read(dev, node, ns, phys, ZDEV_CLASS_OTHER), 0);
	ck_assert_int_eq(node[100], 0);		/* a leaf */
	memcpy(&nr, node + 96, 4);
	nr = le32toh(nr);
	/* the two root items become items of an unknown type (0): the
	 * trees the older format did not have */
	for (i = 0; i < nr; i++) {
		uint8_t *item = node + 101 + 25 * i;
		uint64_t id;

		memcpy(&id, item, 8);
		id = le64toh(id);
		if (item[8] == ZCOW_ROOT_ITEM_KEY &&
		    (id == ZCOW_UUID_TREE_OBJECTID ||
		     id == ZCOW_DATA_RELOC_TREE_OBJECTID)) {
			item[8] = 0;
			hidden++;
		}
	}
	ck_assert_int_eq(hidden, 2);
	{
		uint32_t c = htole32(zcow_crc32c(node + ZCOW_CSUM_SIZE,
						  ns - ZCOW_CSUM_SIZE));

		memcpy(node, &c, 4);
	}
	ck_assert_int_eq(zdev_write(dev, node, ns, phys, 0, ZDEV_CLASS_OTHER), 0);
	free(node);
	all_errs[0] = '\0';
	zlog_set_sink(keep_all_errs, NULL);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	zlog_set_sink(NULL, NULL);
	ck_assert_msg(strstr(all_errs, "no uuid tree"), "message: %s", all_errs);
	ck_assert_msg(strstr(all_errs, "before the btrfs-compatible format"),
		      "message: %s", all_errs);
	zdev_close(dev);
}
END_TEST

static int mkfs_geometry(uint64_t zone_size, uint64_t nr_zones,
			 uint32_t nodesize)
{
	struct zdev_info info = {
		.zone_size = zone_size,
		.zone_capacity = zone_size,
		.nr_zones = nr_zones,
		.size = zone_size * nr_zones,
		.lba_size = 4096,
		.is_zoned = true,
	};
	struct zcow_mkfs_opts opts = { .nodesize = nodesize };
	struct zdev *dev = zdev_alloc(&no_io_ops, &info, NULL);
	int ret;

	ck_assert_ptr_nonnull(dev);
	last_err[0] = '\0';
	zlog_set_sink(zcow_test_log_sink, &keep_err);
	ret = zcow_mkfs(dev, &opts);
	zlog_set_sink(NULL, NULL);
	zdev_free(dev);
	return ret;
}

START_TEST(test_sb_mkfs_refuses_too_few_zones)
{
	ck_assert_int_eq(mkfs_geometry(ZS, 6, 0), -EINVAL);
	ck_assert_msg(strstr(last_err, "at least 7 zones"), "message: %s",
		      last_err);
}
END_TEST

START_TEST(test_sb_mkfs_refuses_zone_size_not_power_of_two)
{
	ck_assert_int_eq(mkfs_geometry(6 * MiB, 64, 0), -EINVAL);
	ck_assert_msg(strstr(last_err, "power of two"), "message: %s",
		      last_err);
}
END_TEST

START_TEST(test_sb_mkfs_refuses_zone_size_outside_4m_8g)
{
	ck_assert_int_eq(mkfs_geometry(2 * MiB, 64, 0), -EINVAL);
	ck_assert_msg(strstr(last_err, "4 MiB..8 GiB"), "message: %s",
		      last_err);
	ck_assert_int_eq(mkfs_geometry(16 * GiB, 64, 0), -EINVAL);
	ck_assert_msg(strstr(last_err, "4 MiB..8 GiB"), "message: %s",
		      last_err);
	/* below 1 MiB the size is still named, not rounded to "0 MiB" */
	ck_assert_int_eq(mkfs_geometry(64 * 1024, 64, 0), -EINVAL);
	ck_assert_msg(strstr(last_err, "zone size 65536 bytes"),
		      "message: %s", last_err);
}
END_TEST

START_TEST(test_mount_opts_data_zones_out_of_range_names_the_range)
{
	struct zcow_mount_opts mo = { 0 };

	last_err[0] = '\0';
	zlog_set_sink(zcow_test_log_sink, &keep_err);
	ck_assert_int_eq(zcow_mount_opts_parse("data_zones=0", &mo), -EINVAL);
	ck_assert_msg(strstr(last_err, "data_zones=0: need a number in 1..16"),
		      "message: %s", last_err);
	ck_assert_int_eq(zcow_mount_opts_parse("data_zones=17", &mo),
			 -EINVAL);
	ck_assert_msg(strstr(last_err, "1..16"), "message: %s", last_err);
	ck_assert_int_eq(zcow_mount_opts_parse("treelog=maybe", &mo),
			 -EINVAL);
	ck_assert_msg(strstr(last_err, "bad value 'maybe' (on or off)"),
		      "message: %s", last_err);
	ck_assert_int_eq(zcow_mount_opts_parse("frobnicate", &mo), -EINVAL);
	ck_assert_msg(strstr(last_err, "unknown mount option 'frobnicate'"),
		      "message: %s", last_err);
	zlog_set_sink(NULL, NULL);
	ck_assert_int_eq(zcow_mount_opts_parse("data_zones=16", &mo), 0);
	ck_assert_uint_eq(mo.data_zones, 16);
}
END_TEST

/*
 * The mount-option table (core/mount_opts.c) is what the parser takes:
 * every row parses with an example of its value (each alternative of a
 * list of them) and sets something, a refused one is refused, two
 * options of one setting conflict, and README.md's list names every
 * option.  The reclaim row lists the policies the reclaim table has.
 */
static const char *mopt_example(const char *name)
{
	static const char *const ex[][2] = {
		{ "commit_bytes", "64M" }, { "data_zones", "2" },
		{ "reclaim_threshold", "60" }, { "reclaim_high", "10" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++)
		if (!strcmp(ex[i][0], name))
			return ex[i][1];
	return NULL;
}

START_TEST(test_mount_opts_table_parses_every_row_and_readme_lists_it)
{
	const struct zcow_mount_opt_doc *d;
	char opt[160], readme[16384], names[128], want[160];
	struct zcow_mount_opts base, ones, mo;
	unsigned int i, n = 0;
	bool changed;
	size_t len;
	FILE *f;

	f = fopen("README.md", "r");
	ck_assert_ptr_nonnull(f);
	len = fread(readme, 1, sizeof(readme) - 1, f);
	readme[len] = '\0';
	fclose(f);
	/* every setter changes a field of one base or the other */
	memset(&base, 0, sizeof(base));
	zlog_set_sink(zcow_test_log_sink, &keep_err);
	for (i = 0; (d = zcow_mount_opt_doc(i)); i++, n++) {
		bool refused = !strncmp(d->help, "refused", 7);
		char vals[96], *v, *save = NULL;

		ck_assert_msg(d->help && *d->help, "%s: no help", d->name);
		snprintf(want, sizeof(want), "`%s", d->name);
		ck_assert_msg(strstr(readme, want),
			      "mount option %s is not in README.md", d->name);
		snprintf(vals, sizeof(vals), "%s",
			 !d->value ? "" :
			 mopt_example(d->name) ? mopt_example(d->name) :
						 d->value);
		for (v = strtok_r(vals, "|", &save); v || !d->value;
		     v = strtok_r(NULL, "|", &save)) {
			snprintf(opt, sizeof(opt), "%s%s%s", d->name,
				 v ? "=" : "", v ? v : "");
			memcpy(&mo, &base, sizeof(mo));
			ck_assert_int_eq(zcow_mount_opts_parse(opt, &mo),
					 refused ? -EINVAL : 0);
			changed = memcmp(&mo, &base, sizeof(mo));
			memset(&mo, 0xff, sizeof(mo));
			memcpy(&ones, &mo, sizeof(mo));
			ck_assert_int_eq(zcow_mount_opts_parse(opt, &mo),
					 refused ? -EINVAL : 0);
			changed = changed || memcmp(&mo, &ones, sizeof(mo));
			ck_assert_msg(refused || changed, "%s set nothing",
				      opt);
			if (!d->value)
				break;
		}
	}
	ck_assert_uint_ge(n, 17);
	/* the reclaim row's list is the reclaim table's */
	zcow_reclaim_names(names, sizeof(names));
	for (i = 0; (d = zcow_mount_opt_doc(i)); i++)
		if (!strcmp(d->name, "reclaim"))
			break;
	ck_assert_ptr_nonnull(d);
	snprintf(want, sizeof(want), "%s", d->value);
	for (len = 0; want[len]; len++)
		if (want[len] == '|')
			want[len] = ',';
	{
		char got[160];
		size_t a = 0, b = 0;

		for (; names[a] && b + 1 < sizeof(got); a++) {
			if (!strncmp(names + a, ", ", 2)) {
				got[b++] = ',';
				a++;
			} else if (!strncmp(names + a, " or ", 4)) {
				got[b++] = ',';
				a += 3;
			} else {
				got[b++] = names[a];
			}
		}
		got[b] = '\0';
		ck_assert_str_eq(want, got);
	}
	memcpy(&mo, &base, sizeof(mo));
	ck_assert_int_eq(zcow_mount_opts_parse("treelog=on,notreelog", &mo),
			 -EINVAL);
	ck_assert_msg(strstr(last_err, "set the same thing"), "message: %s",
		      last_err);
	/* an option that takes no value refuses one it would ignore */
	ck_assert_int_eq(zcow_mount_opts_parse("ro=0", &mo), -EINVAL);
	ck_assert_msg(strstr(last_err, "mount option ro takes no value"),
		      "message: %s", last_err);
	zlog_set_sink(NULL, NULL);
}
END_TEST

START_TEST(test_sb_mkfs_refuses_bad_nodesize_and_label)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_mkfs_opts opts = { 0 };
	char label[300];

	ck_assert_int_eq(mkfs_geometry(ZS, 64, 3000), -EINVAL);
	ck_assert_int_eq(mkfs_geometry(ZS, 64, 128 * 1024), -EINVAL);
	ck_assert_int_eq(mkfs_geometry(ZS, 64, 2048), -EINVAL);
	memset(label, 'x', sizeof(label) - 1);
	label[sizeof(label) - 1] = '\0';
	opts.label = label;
	ck_assert_int_eq(zcow_mkfs(dev, &opts), -EINVAL);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_mkfs_is_deterministic_with_a_seed)
{
	struct zcow_mkfs_opts opts = { .seed = 42, .label = "zcow-test",
				       .nodesize = 65536 };
	struct zcow_super_block a, b;
	struct zcow_sb_copy copy;
	/* 64 KiB nodes need zones of at least that capacity (issue 4) */
	struct zdev *d1 = new_sim(12, ZS, 4 * CAP, 0),
		    *d2 = new_sim(12, ZS, 4 * CAP, 0);

	ck_assert_int_eq(zcow_mkfs(d1, &opts), 0);
	ck_assert_int_eq(zcow_mkfs(d2, &opts), 0);
	ck_assert_int_eq(zcow_sb_read_latest(d1, &a, &copy), 0);
	ck_assert_int_eq(zcow_sb_read_latest(d2, &b, &copy), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
	ck_assert_str_eq(a.label, "zcow-test");
	ck_assert_uint_eq(le32toh(a.nodesize), 65536);
	ck_assert_uint_eq(le64toh(a.generation), 1);
	ck_assert(le64toh(a.incompat_flags) & ZCOW_INCOMPAT_ZONED);
	opts.seed = 43;
	ck_assert_int_eq(zcow_mkfs(d2, &opts), 0);
	ck_assert_int_eq(zcow_sb_read_latest(d2, &b, &copy), 0);
	ck_assert_mem_ne(a.fsid, b.fsid, 16);
	/* mkfs again starts a new log at generation 1 */
	ck_assert_uint_eq(le64toh(b.generation), 1);
	ck_assert_uint_eq(copy.off, 0);
	zdev_close(d1);
	zdev_close(d2);
}
END_TEST

/* ---- corruption and fall back ------------------------------------------- */

START_TEST(test_sb_corrupt_only_copy_is_euclean)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_fs *fs = NULL;

	put_garbage(dev, 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	ck_assert_ptr_null(fs);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_corrupt_fixed_copy_is_euclean)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 2);
	struct zcow_super_block sb;
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zdev_read(dev, &sb, SBS, 0, ZDEV_CLASS_SB), 0);
	sb.root ^= 1;	/* one bit: the checksum no longer matches */
	ck_assert_int_eq(zdev_write(dev, &sb, SBS, 0, ZDEV_WRITE_FUA,
				    ZDEV_CLASS_OTHER), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	zdev_close(dev);
}
END_TEST

/*
 * A device item whose size is larger than the device, checksum
 * recomputed: refused with -EUCLEAN at once.  Before, 2^63 made the
 * mount count writable zones up to it, about 2^41 iterations (a hang).
 */
START_TEST(test_sb_dev_item_size_beyond_device_is_euclean)
{
	static const uint64_t bad[] = { 1ULL << 63, 13 * ZS, UINT64_MAX };
	struct zcow_super_block sb;
	struct zcow_fs *fs = NULL;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zdev *dev = new_sim(12, ZS, CAP, 2);

		do_mkfs(dev, ZCOW_SB_PLACE_SEED);
		ck_assert_int_eq(zdev_read(dev, &sb, SBS, 0, ZDEV_CLASS_SB),
				 0);
		sb.dev_item.total_bytes = htole64(bad[i]);
		zcow_sb_seal(&sb);
		ck_assert_int_eq(zdev_write(dev, &sb, SBS, 0, ZDEV_WRITE_FUA,
					    ZDEV_CLASS_OTHER), 0);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
		ck_assert_ptr_null(fs);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_sb_torn_newest_falls_back_to_older_valid_copy)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	unsigned long warns;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	commit_n(dev, 1);		/* generations 1..3 */
	put_garbage(dev, 3 * SBS);	/* a torn 4th copy fills zone 0 */
	warns = zlog_nr_warnings();
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_uint_eq(fs->generation, 3);
	ck_assert(fs->found.is_fallback);
	ck_assert_uint_eq(fs->found.off, 2 * SBS);
	ck_assert_uint_gt(zlog_nr_warnings(), warns);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	/* the log goes on past the torn copy, into zone 1 */
	commit_n(dev, 0);
	ck_assert_uint_eq(mounted_gen(dev), 4);
	commit_n(dev, 6);	/* 5..11: wraps, resets zone 0 */
	ck_assert_uint_eq(mounted_gen(dev), 11);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_both_full_torn_tail_keeps_newest_valid_zone)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_sb_log_pos pos;
	int i;

	for (i = 0; i < 4; i++)
		put_good(dev, i * SBS, 1 + i);
	for (i = 0; i < 3; i++)
		put_good(dev, ZS + i * SBS, 5 + i);
	put_garbage(dev, ZS + 3 * SBS);
	primary_pos(dev, &pos, 0);
	/* zone 1's torn tail must not make zone 0 look newer */
	ck_assert_int_eq(pos.reset, 0);
	ck_assert_uint_eq(pos.read_off, ZS + 2 * SBS);
	ck_assert_uint_eq(mounted_gen(dev), 7);
	commit_n(dev, 0);
	ck_assert_uint_eq(mounted_gen(dev), 8);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_mirrors_compared_highest_valid_generation_wins)
{
	struct zdev *dev = new_sim(20, ZS, CAP, 0);
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	/* mirror 1 got generation 2, the primary's write was lost */
	ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &copy), 0);
	sb.generation = htole64(2);
	sb.bytenr = htole64(zcow_sb_offset(1));
	zcow_sb_seal(&sb);
	ck_assert_int_eq(zdev_write(dev, &sb, SBS, 16 * ZS + SBS,
				    ZDEV_WRITE_FUA, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_uint_eq(fs->generation, 2);
	ck_assert_int_eq(fs->found.mirror, 1);
	zcow_unmount(fs);
	ck_assert_uint_eq(mounted_gen(dev), 3);
	/* primary unreadable: the mirror alone mounts */
	ck_assert_int_eq(zdev_reset_zone(dev, 0, ZDEV_CLASS_OTHER), 0);
	put_garbage(dev, 0);
	ck_assert_uint_eq(mounted_gen(dev), 3);

	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_mount_checks_flags_and_features)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_fs *fs = NULL;

	put_copy(dev, 0, 0, 1, GOOD_FLAGS | (1ULL << 60), ZCOW_INCOMPAT_ZONED);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	put_copy(dev, SBS, 0, 2, GOOD_FLAGS, 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
	put_copy(dev, 2 * SBS, 0, 3, GOOD_FLAGS | ZCOW_SUPER_FLAG_METADUMP,
		 ZCOW_INCOMPAT_ZONED);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
	/* a copy whose bytenr is not the mirror's is not a superblock here */
	put_copy(dev, 3 * SBS, 1, 4, GOOD_FLAGS, ZCOW_INCOMPAT_ZONED);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
	ck_assert_ptr_null(fs);
	zdev_close(dev);
}
END_TEST

START_TEST(test_sb_read_only_mount_writes_nothing)
{
	struct zdev *dev = new_sim(12, ZS, CAP, 0);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_commit_super(fs), -EROFS);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_uint_eq(mounted_gen(dev), 1);
	zdev_close(dev);
}
END_TEST

/* ---- features zcow maintains, and what it must not write ------------- */

/* Device-changing commands (writes, appends, zone management) so far. */
static uint64_t nr_changes(struct zdev *dev)
{
	struct zdev_stats st;
	uint64_t n = 0;
	int c;

	zdev_get_stats(dev, &st);
	for (c = 0; c < ZDEV_NR_CLASSES; c++)
		n += st.cmds[c][ZDEV_OP_WRITE] + st.cmds[c][ZDEV_OP_APPEND] +
		     st.cmds[c][ZDEV_OP_RESET] + st.cmds[c][ZDEV_OP_FINISH];
	return n;
}

/* A made file system whose newest superblock carries other features. */
static struct zdev *fs_with_features(uint64_t compat_ro, uint64_t incompat)
{
	struct zdev *dev = new_sim(16, ZS, ZS, 0);
	struct zcow_super_block sb;
	struct zcow_sb_copy found;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zcow_sb_read_latest(dev, &sb, &found), 0);
	sb.compat_ro_flags = htole64(compat_ro);
	sb.incompat_flags |= htole64(incompat);
	ck_assert_int_eq(zcow_sb_write_all(dev, ZCOW_SB_PLACE_SEED, &sb), 0);
	return dev;
}

START_TEST(test_mount_refuses_rw_with_free_space_tree_and_writes_nothing)
{
	struct zdev *dev = fs_with_features(ZCOW_COMPAT_RO_FREE_SPACE_TREE |
					    ZCOW_COMPAT_RO_FREE_SPACE_TREE_VALID,
					    0);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	uint64_t before = nr_changes(dev);

	zlog_set_sink(zcow_test_log_sink, &keep_err);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
	ck_assert_ptr_null(fs);
	ck_assert_msg(strstr(last_err, "free-space tree"), "message: %s",
		      last_err);
	ck_assert_msg(strstr(last_err, "read-only"), "message: %s", last_err);
	ck_assert_uint_eq(nr_changes(dev), before);
	/* read-only is fine: zcow only reads what it understands */
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_uint_eq(nr_changes(dev), before);
	zlog_set_sink(NULL, NULL);
	zdev_close(dev);
}
END_TEST

START_TEST(test_mount_refuses_rw_with_unknown_compat_ro)
{
	struct zdev *dev = fs_with_features(1ULL << 40, 0);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_mount_refuses_features_zcow_cannot_read)
{
	static const uint64_t never[] = {
		ZCOW_INCOMPAT_MIXED_GROUPS, ZCOW_INCOMPAT_COMPRESS_LZO,
		ZCOW_INCOMPAT_COMPRESS_ZSTD, ZCOW_INCOMPAT_RAID56,
		ZCOW_INCOMPAT_METADATA_UUID, ZCOW_INCOMPAT_RAID1C34,
		ZCOW_INCOMPAT_EXTENT_TREE_V2, ZCOW_INCOMPAT_RAID_STRIPE_TREE,
		ZCOW_INCOMPAT_SIMPLE_QUOTA,
	};
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	struct zdev *dev;
	unsigned int i;

	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		dev = fs_with_features(0, never[i]);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
		ck_assert_msg(zcow_mount(dev, &ro, &fs) == -EOPNOTSUPP,
			      "incompat 0x%llx mounted read-only",
			      (unsigned long long)never[i]);
		zdev_close(dev);
	}
	/* block groups in their own tree: not where zcow looks */
	dev = fs_with_features(ZCOW_COMPAT_RO_BLOCK_GROUP_TREE, 0);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), -EOPNOTSUPP);
	zdev_close(dev);
}
END_TEST

START_TEST(test_mount_rw_only_with_features_zcow_maintains)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	struct zdev *dev;

	/* extended inode refs: readable, but zcow does not maintain them */
	dev = fs_with_features(0, ZCOW_INCOMPAT_EXTENDED_IREF);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EOPNOTSUPP);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	/* what btrfs sets for any zoned fs and zcow keeps true */
	dev = fs_with_features(0, ZCOW_INCOMPAT_BIG_METADATA |
					  ZCOW_INCOMPAT_NO_HOLES);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_mount_refuses_rw_when_trees_unreadable)
{
	struct zdev *dev = new_sim(16, ZS, ZS, 16);	/* conventional */
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	struct zcow_bg *bg;
	uint8_t junk[4096];
	uint64_t phys, before;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	bg = zcow_bg_lookup(fs, le64toh(fs->sb.root));
	ck_assert_ptr_nonnull(bg);
	phys = bg->physical + le64toh(fs->sb.root) - bg->start;
	ck_assert_int_eq(zcow_unmount(fs), 0);
	memset(junk, 0x5a, sizeof(junk));
	ck_assert_int_eq(zdev_write(dev, junk, sizeof(junk), phys, 0,
				    ZDEV_CLASS_OTHER), 0);
	before = nr_changes(dev);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EUCLEAN);
	ck_assert_uint_eq(nr_changes(dev), before);
	/* the superblock is still served read-only */
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert(!fs->has_trees);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_uint_eq(nr_changes(dev), before);
	zdev_close(dev);
}
END_TEST

/* Write @n bytes of @c to a new file @path and sync. */
static void put_file(struct zcow_fs *fs, const char *path, int c, uint64_t n)
{
	uint8_t *buf = malloc(n);

	ck_assert_ptr_nonnull(buf);
	memset(buf, c, n);
	zcow_test_put(fs, path, buf, n);
	ck_assert_int_eq(zcow_sync(fs), 0);
	free(buf);
}

/* @path holds exactly @n bytes of @c. */
static void assert_file(struct zcow_fs *fs, const char *path, int c,
			uint64_t n)
{
	uint8_t *buf = malloc(n);

	ck_assert_ptr_nonnull(buf);
	memset(buf, c, n);
	zcow_test_expect(fs, path, buf, n);
	free(buf);
}

START_TEST(test_offline_primary_log_zone_keeps_commits_on_the_mirror)
{
	/* mirrors 0 (zones 0-1) and 1 (zones 16-17) */
	struct zdev *dev = new_sim(24, ZS, ZS, 0);
	struct zsim *sim = zsim_from_dev(dev);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	put_file(fs, "a", 'a', 8192);
	ck_assert_uint_eq(fs->sb_failed_mirrors, 0);
	/* the primary log's second zone goes offline */
	ck_assert_int_eq(zsim_set_zone_cond(sim, ZS, ZDEV_COND_OFFLINE), 0);
	put_file(fs, "b", 'b', 8192);
	ck_assert_int_eq(fs->error, 0);
	ck_assert_uint_eq(fs->sb_failed_mirrors, 1u << 0);
	put_file(fs, "c", 'c', 4096);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	/* the newest generation is on the mirror: everything is there, and
	 * the degraded log shows at mount, read-only too (zcow df) */
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_uint_eq(fs->sb_failed_mirrors, 1u << 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(fs->found.mirror, 1);
	assert_file(fs, "a", 'a', 8192);
	assert_file(fs, "b", 'b', 8192);
	assert_file(fs, "c", 'c', 4096);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	put_file(fs, "d", 'd', 4096);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_offline_primary_log_zone_mounts_read_write_after_a_cut)
{
	struct zdev *dev = new_sim(24, ZS, ZS, 0);
	struct zsim *sim = zsim_from_dev(dev);
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zsim_set_zone_cond(sim, ZS, ZDEV_COND_OFFLINE), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	put_file(fs, "a", 'a', 12288);
	ck_assert_int_eq(zsim_cut_now(sim, ZSIM_LOSS_DROP, 1), 0);
	zcow_unmount(fs);
	ck_assert_int_eq(zsim_power_cycle(sim), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	assert_file(fs, "a", 'a', 12288);
	put_file(fs, "b", 'b', 4096);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	assert_file(fs, "b", 'b', 4096);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_every_log_mirror_offline_fails_the_commit)
{
	struct zdev *dev = new_sim(24, ZS, ZS, 0);
	struct zsim *sim = zsim_from_dev(dev);
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zsim_set_zone_cond(sim, ZS, ZDEV_COND_OFFLINE), 0);
	ck_assert_int_eq(zsim_set_zone_cond(sim, 17 * ZS, ZDEV_COND_OFFLINE),
			 0);
	ck_assert_int_eq(zcow_commit(fs), -EIO);
	ck_assert_int_eq(fs->error, -EIO);
	ck_assert_uint_eq(fs->sb_failed_mirrors, 3u);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

/* 64 zones of 4 MiB: superblock-log mirrors 0 and 1 in sequential zones,
 * so zcow needs 2 + system + metadata + data = 5 active zones, and one
 * more for the tree-log. */
static struct zdev *limited_sim(uint32_t max_active)
{
	struct zsim_config cfg = {
		.nr_zones = 64, .zone_size = ZS, .zone_capacity = ZS,
		.max_active = max_active, .max_open = max_active,
	};

	return zcow_test_sim(&cfg);
}

START_TEST(test_mkfs_refuses_too_few_active_zones_with_the_number)
{
	struct zcow_mkfs_opts opts = { .seed = 7 };
	struct zdev *dev;
	uint32_t lim;

	for (lim = 3; lim <= 4; lim++) {
		dev = limited_sim(lim);
		ck_assert_uint_eq(zcow_active_zones_needed(dev,
							   ZCOW_SB_PLACE_SEED,
							   false, 1), 5);
		last_err[0] = '\0';
		zlog_set_sink(zcow_test_log_sink, &keep_err);
		ck_assert_int_eq(zcow_mkfs(dev, &opts), -EINVAL);
		zlog_set_sink(NULL, NULL);
		ck_assert_msg(strstr(last_err, "needs at least 5"),
			      "message: %s", last_err);
		/* nothing written */
		ck_assert_uint_eq(nr_changes(dev), 0);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_mount_turns_treelog_off_when_active_zones_lack)
{
	struct zcow_mkfs_opts opts = { .seed = 7 };
	struct zcow_fs *fs = NULL;
	struct zcow_file *f = NULL;
	struct zcow_statfs st;
	struct zdev *dev;
	uint32_t lim;

	for (lim = 5; lim <= 6; lim++) {
		dev = limited_sim(lim);
		ck_assert_int_eq(zcow_mkfs(dev, &opts), 0);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
		ck_assert_int_eq(zcow_create(fs, "f", &f), 0);
		ck_assert_int_eq(zcow_pwrite(f, "abcd", 4, 0), 4);
		ck_assert_int_eq(zcow_fsync(f), 0);
		ck_assert_int_eq(zcow_close(f), 0);
		ck_assert_int_eq(zcow_statfs(fs, &st), 0);
		/* 5: the fsync committed; 6: the tree-log took it */
		ck_assert_uint_eq(st.nr_log_syncs, lim == 6 ? 1 : 0);
		put_file(fs, "g", 'g', 3 * 4096);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
		zcow_test_expect(fs, "f", "abcd", 4);
		assert_file(fs, "g", 'g', 3 * 4096);
		ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
	}
}
END_TEST

START_TEST(test_mount_rw_refuses_too_few_active_zones_ro_reads)
{
	char img[] = "/tmp/zcow-active-XXXXXX", spec[128];
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_mkfs_opts opts = { .seed = 7 };
	struct zcow_fs *fs = NULL;
	struct zdev *dev;
	uint64_t before;
	int fd = mkstemp(img);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(img);
	snprintf(spec, sizeof(spec), "sim:image=%s,zones=64,zone_size=4M",
		 img);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &opts), 0);
	ck_assert_int_eq(zdev_close(dev), 0);
	snprintf(spec, sizeof(spec), "sim:image=%s,max_active=4,max_open=4",
		 img);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	before = nr_changes(dev);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -EINVAL);
	ck_assert_uint_eq(nr_changes(dev), before);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	unlink(img);
}
END_TEST

/* btrfs-progs reads the root tree with the superblock's generation: the
 * checker demands the same. */
static void assert_root_is_current(struct zdev *dev)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
}

START_TEST(test_empty_commit_writes_a_new_root_tree)
{
	struct zdev *dev = new_sim(16, ZS, ZS, 0);
	struct zcow_fs *fs = NULL;

	do_mkfs(dev, ZCOW_SB_PLACE_SEED);
	assert_root_is_current(dev);
	/* a mount with nothing dirty, unmounted: generation 2 */
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_uint_eq(mounted_gen(dev), 2);
	assert_root_is_current(dev);
	/* explicit commits with nothing dirty, one after the other */
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_uint_eq(mounted_gen(dev), 6);
	assert_root_is_current(dev);
	zdev_close(dev);
}
END_TEST

/* The seed placement is the tag at the end of the padding and flags bit
 * 56 (which keeps the kernel off); either alone reads as the seed
 * placement (bit 56 alone: an older image), and recording the placement
 * again writes both.  The kernel placement is neither. */
START_TEST(test_placement_is_the_tag_and_flag_bit_56)
{
	struct zcow_super_block sb;
	const uint8_t *tag = (const uint8_t *)&sb + 0xff8;

	memset(&sb, 0, sizeof(sb));
	ck_assert_int_eq(zcow_sb_placement_of(&sb), ZCOW_SB_PLACE_KERNEL);
	zcow_sb_set_placement(&sb, ZCOW_SB_PLACE_SEED);
	ck_assert(!memcmp(tag, "ZCOWSEED", 8));
	ck_assert_uint_eq(le64toh(sb.flags), ZCOW_SUPER_FLAG_SEED_PLACEMENT);
	ck_assert_int_eq(zcow_sb_placement_of(&sb), ZCOW_SB_PLACE_SEED);
	zcow_sb_set_placement(&sb, ZCOW_SB_PLACE_KERNEL);
	ck_assert(!memcmp(tag, "\0\0\0\0\0\0\0\0", 8));
	ck_assert_uint_eq(sb.flags, 0);
	ck_assert_int_eq(zcow_sb_placement_of(&sb), ZCOW_SB_PLACE_KERNEL);
	sb.flags = htole64(ZCOW_SUPER_FLAG_WRITTEN |
			   ZCOW_SUPER_FLAG_SEED_PLACEMENT);
	ck_assert_int_eq(zcow_sb_placement_of(&sb), ZCOW_SB_PLACE_SEED);
	zcow_sb_set_placement(&sb, ZCOW_SB_PLACE_SEED);
	ck_assert_uint_eq(le64toh(sb.flags), ZCOW_SUPER_FLAG_WRITTEN |
			  ZCOW_SUPER_FLAG_SEED_PLACEMENT);
	ck_assert(!memcmp(tag, "ZCOWSEED", 8));
}
END_TEST

Suite *sb_suite(void)
{
	Suite *s = suite_create("sb");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_sb_crc32c_is_btrfs_crc32c);
	tcase_add_test(tc, test_placement_is_the_tag_and_flag_bit_56);
	tcase_add_test(tc, test_mount_refuses_rw_with_free_space_tree_and_writes_nothing);
	tcase_add_test(tc, test_mount_refuses_rw_with_unknown_compat_ro);
	tcase_add_test(tc, test_mount_refuses_features_zcow_cannot_read);
	tcase_add_test(tc, test_mount_rw_only_with_features_zcow_maintains);
	tcase_add_test(tc, test_empty_commit_writes_a_new_root_tree);
	tcase_add_test(tc, test_mount_opts_data_zones_out_of_range_names_the_range);
	tcase_add_test(tc, test_mount_opts_table_parses_every_row_and_readme_lists_it);
	tcase_add_test(tc, test_mkfs_refuses_too_few_active_zones_with_the_number);
	tcase_add_test(tc, test_mount_turns_treelog_off_when_active_zones_lack);
	tcase_add_test(tc, test_mount_rw_refuses_too_few_active_zones_ro_reads);
	tcase_add_test(tc, test_offline_primary_log_zone_keeps_commits_on_the_mirror);
	tcase_add_test(tc, test_offline_primary_log_zone_mounts_read_write_after_a_cut);
	tcase_add_test(tc, test_every_log_mirror_offline_fails_the_commit);
	tcase_add_test(tc, test_mount_refuses_rw_when_trees_unreadable);
	tcase_add_test(tc, test_sb_layout_reads_kernel_written_fields);
	tcase_add_test(tc, test_sb_offsets_are_btrfs_mirror_offsets);
	tcase_add_test(tc, test_sb_kernel_vectors_mount_at_expected_generation);
	tcase_add_test(tc, test_sb_log_both_empty_is_no_superblock);
	tcase_add_test(tc, test_sb_log_in_use_empty_reads_below_wp);
	tcase_add_test(tc, test_sb_log_full_empty_reads_last_of_zone0);
	tcase_add_test(tc, test_sb_log_full_in_use_reads_zone1);
	tcase_add_test(tc, test_sb_log_both_full_picks_newer_generation);
	tcase_add_test(tc, test_sb_log_both_full_zone0_newer_resets_zone1);
	tcase_add_test(tc, test_sb_log_empty_full_reads_last_of_zone1);
	tcase_add_test(tc, test_sb_log_in_use_full_reads_zone0);
	tcase_add_test(tc, test_sb_log_empty_in_use_is_corrupt);
	tcase_add_test(tc, test_sb_log_both_in_use_is_corrupt);
	tcase_add_test(tc, test_sb_log_wraps_and_resets_only_the_older_zone);
	tcase_add_test(tc, test_sb_conventional_first_zone_keeps_fixed_copy);
	tcase_add_test(tc, test_sb_emulated_mode_uses_fixed_btrfs_offsets);
	tcase_add_test(tc,
		       test_sb_seed_placement_third_mirror_at_zone_1024_or_256g);
	tcase_add_test(tc, test_sb_both_placements_write_and_read_their_mirrors);
	tcase_add_test(tc, test_sb_mkfs_refuses_too_few_zones);
	tcase_add_test(tc, test_sb_mkfs_refuses_zone_size_not_power_of_two);
	tcase_add_test(tc, test_sb_mkfs_refuses_zone_size_outside_4m_8g);
	tcase_add_test(tc, test_sb_mkfs_refuses_bad_nodesize_and_label);
	tcase_add_test(tc, test_sb_mkfs_is_deterministic_with_a_seed);
	tcase_add_test(tc, test_sb_corrupt_only_copy_is_euclean);
	tcase_add_test(tc, test_sb_corrupt_fixed_copy_is_euclean);
	tcase_add_test(tc, test_sb_dev_item_size_beyond_device_is_euclean);
	tcase_add_test(tc, test_sb_torn_newest_falls_back_to_older_valid_copy);
	tcase_add_test(tc, test_sb_both_full_torn_tail_keeps_newest_valid_zone);
	tcase_add_test(tc,
		       test_sb_mirrors_compared_highest_valid_generation_wins);
	tcase_add_test(tc, test_sb_mount_checks_flags_and_features);
	tcase_add_test(tc, test_sb_mount_refuses_pre_btrfs_format_naming_it);
	tcase_add_test(tc, test_sb_read_only_mount_writes_nothing);
	suite_add_tcase(s, tc);
	return s;
}
