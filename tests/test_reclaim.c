// SPDX-License-Identifier: MIT
/*
 * Reclaim (core/reclaim.h): relocation of data groups (checksums and
 * every reference follow, snapshots included) and of metadata groups, the
 * zone reset after the relocating commit, the policies' choices, the zone
 * held for the data relocation group, balance, and sustained overwrites
 * that end in ENOSPC without reclaim and run on with it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "reclaim.h"
#include "tests.h"
#include "zcow.h"
#include "zoned.h"
#include "zoned.h"
#include "zsim.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)
#define BS 4096ULL

/* A simulated device of @nr_zones 4 MiB zones (64 KiB appends, @max_active
 * active zones, 0 = no limit), mkfs, mount with @mo. */
static struct zcow_fs *sim_fs_cap(uint64_t nr_zones, uint64_t zone_cap,
				  uint32_t max_active,
				  const struct zcow_mount_opts *mo)
{
	struct zsim_config cfg = {
		.nr_zones = nr_zones, .zone_size = ZS, .seed = 5,
		.zone_capacity = zone_cap, .max_append = 64 * KiB,
		.max_open = max_active, .max_active = max_active,
	};

	return zcow_test_sim_fs(&cfg, 3, mo);
}

static struct zcow_fs *sim_fs(uint64_t nr_zones, uint32_t max_active,
			      const struct zcow_mount_opts *mo)
{
	return sim_fs_cap(nr_zones, 0, max_active, mo);
}

/* The byte at file offset @off of version @ver of a file. */
static uint8_t pat(uint64_t off, uint32_t ver)
{
	uint64_t b = off / BS;

	return (uint8_t)(b * 131 + ver * 29 + (off % BS) / 512 + 1);
}

static void fill(uint8_t *buf, uint64_t off, uint64_t len, uint32_t ver)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(off + i, ver);
}

/* Write [off, off + len) of @path (created if needed) as version @ver. */
static void put(struct zcow_fs *fs, const char *path, uint64_t off,
		uint64_t len, uint32_t ver)
{
	uint8_t *buf = malloc(len);
	struct zcow_file *f;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(zcow_open(fs, path, O_RDWR | O_CREAT, &f), 0);
	fill(buf, off, len, ver);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, off), (int64_t)len);
	ck_assert_int_eq(zcow_close(f), 0);
	free(buf);
}

/* [off, off + len) of @path reads back as version @ver, byte for byte. */
static void expect(struct zcow_fs *fs, const char *path, uint64_t off,
		   uint64_t len, uint32_t ver)
{
	uint8_t *buf = malloc(len), *want = malloc(len);
	struct zcow_file *f;

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pread(f, buf, len, off), (int64_t)len);
	fill(want, off, len, ver);
	ck_assert_msg(!memcmp(buf, want, len), "%s [%llu, +%llu) differs",
		      path, (unsigned long long)off, (unsigned long long)len);
	ck_assert_int_eq(zcow_close(f), 0);
	free(buf);
	free(want);
}

static void expect_clean(struct zcow_fs *fs)
{
	zcow_test_assert_clean(fs);
}

/* The data group holding logical @logical (of the file's first extent). */
static struct zcow_bg *data_bg_of(struct zcow_fs *fs, const char *path,
				  uint64_t off)
{
	struct zcow_key k = { 0, ZCOW_EXTENT_DATA_KEY, 0 };
	struct zcow_stat st;
	struct zcow_fext fe;
	uint8_t item[ZCOW_FILE_EXTENT_SIZE];
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	struct zcow_key got;

	ck_assert_int_eq(zcow_stat(fs, path, &st), 0);
	k.objectid = st.ino;
	k.offset = off;
	zcow_tree_iter_init(&it, &fs->fs_tree, &k);
	ck_assert_int_eq(zcow_tree_iter_next(&it, &got, &data, &len), 0);
	ck_assert_uint_eq(got.objectid, st.ino);
	ck_assert_uint_eq(got.type, ZCOW_EXTENT_DATA_KEY);
	ck_assert_uint_le(len, sizeof(item));
	ck_assert_int_eq(zcow_fext_decode(data, len, got.offset, &fe), 0);
	return zcow_bg_lookup(fs, fe.disk_bytenr);
}

static void expect_zone_empty(struct zcow_fs *fs, uint64_t physical)
{
	struct zdev_zone z;

	ck_assert_int_eq(zdev_report_zone(fs->dev, physical, &z), 0);
	ck_assert_uint_eq(z.cond, ZDEV_COND_EMPTY);
	ck_assert_uint_eq(z.wp, z.start);
}

/* Relocate @bg, then the commit that removes it and resets its zone. */
static int relocate_one(struct zcow_fs *fs, struct zcow_bg *bg)
{
	int err;

	pthread_mutex_lock(&fs->files->lock);
	err = zcow_relocate_bgs_locked(fs, &bg, 1);
	if (!err)
		err = zcow_files_commit_locked(fs);
	pthread_mutex_unlock(&fs->files->lock);
	return err;
}

/* One slot, reclaim only when asked: the layout below is exact. */
static const struct zcow_mount_opts quiet = {
	.data_zones = 1, .reclaim = ZCOW_RECLAIM_THRESHOLD,
	.reclaim_threshold = 100,
};

/*
 * A full data group with half of its extents overwritten: relocation
 * copies the live half (2 MiB, 32 extents of 64 KiB) into the data
 * relocation group, the group is removed and its zone reset, and the file
 * reads back byte for byte, also after a remount; the checker is clean.
 */
START_TEST(test_reclaim_relocates_data_group)
{
	struct zcow_fs *fs = sim_fs(32, 0, &quiet);
	struct zcow_bg *bg, *rbg;
	uint64_t start, phys;

	put(fs, "/a", 0, 6 * MiB, 1);
	ck_assert_int_eq(zcow_sync(fs), 0);
	bg = data_bg_of(fs, "/a", 0);
	ck_assert_uint_eq(bg->used, ZS);
	put(fs, "/a", 0, 2 * MiB, 2);		/* the first half, again */
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_uint_eq(bg->used, 2 * MiB);
	ck_assert_uint_eq(bg->zone_unusable, 2 * MiB);
	start = bg->start;
	phys = bg->physical;
	ck_assert(zcow_reclaim_is_candidate(fs, bg));

	ck_assert_int_eq(relocate_one(fs, bg), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect_zone_empty(fs, phys);
	ck_assert_uint_eq(fs->rstats.groups_relocated, 1);
	ck_assert_uint_eq(fs->rstats.data_groups, 1);
	ck_assert_uint_eq(fs->rstats.data_bytes, 2 * MiB);
	ck_assert_uint_eq(fs->rstats.data_extents, 32);
	ck_assert_uint_eq(fs->rstats.meta_nodes, 0);
	rbg = data_bg_of(fs, "/a", 2 * MiB);
	ck_assert_uint_eq(rbg->start, fs->reloc_bg);
	ck_assert(rbg->is_data_reloc);
	ck_assert_uint_eq(rbg->used, 2 * MiB);
	{
		struct zcow_statfs st;

		ck_assert_int_eq(zcow_statfs(fs, &st), 0);
		ck_assert_uint_eq(st.nr_groups_relocated, 1);
		ck_assert_uint_eq(st.reloc_data_bytes, 2 * MiB);
		ck_assert_uint_eq(st.reloc_meta_bytes, 0);
		ck_assert_uint_ge(st.nr_zones_reset, 1);
	}
	expect(fs, "/a", 0, 2 * MiB, 2);
	expect(fs, "/a", 2 * MiB, 4 * MiB, 1);
	expect_clean(fs);

	fs = zcow_test_remount(fs, &quiet);
	expect(fs, "/a", 0, 2 * MiB, 2);
	expect(fs, "/a", 2 * MiB, 4 * MiB, 1);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * Extents shared by the fs tree and a snapshot: relocation moves them
 * once and points both trees' file extents at the copies; the snapshot's
 * root item follows its new root.
 */
START_TEST(test_reclaim_relocates_snapshot_shared_extents)
{
	struct zcow_fs *fs = sim_fs(32, 0, &quiet);
	struct zcow_bg *bg;
	uint64_t start, id;

	put(fs, "/a", 0, 4 * MiB, 1);
	ck_assert_int_eq(zcow_snapshot(fs, "s1", &id), 0);
	put(fs, "/a", 0, 1 * MiB, 2);
	ck_assert_int_eq(zcow_sync(fs), 0);
	bg = data_bg_of(fs, "/a", 2 * MiB);	/* shared with s1 */
	start = bg->start;
	ck_assert_uint_eq(bg->used, ZS);	/* all of it referenced */

	ck_assert_int_eq(relocate_one(fs, bg), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	ck_assert_uint_eq(fs->rstats.data_bytes, ZS);
	ck_assert_uint_eq(data_bg_of(fs, "/a", 2 * MiB)->start,
			  fs->reloc_bg);
	expect(fs, "/a", 0, 1 * MiB, 2);
	expect(fs, "/a", 1 * MiB, 3 * MiB, 1);
	expect(fs, "/s1/a", 0, 4 * MiB, 1);
	expect_clean(fs);

	fs = zcow_test_remount(fs, &quiet);
	expect(fs, "/a", 0, 1 * MiB, 2);
	expect(fs, "/s1/a", 0, 4 * MiB, 1);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * Extents in leaves a snapshot shares: the overwrite of /a copied the fs
 * tree's leaf, so the old leaf (the snapshot's) is FULL_BACKREF and the
 * extents it holds know it by address.  Relocation first copies such
 * leaves into each tree, then moves the extents: both trees read back
 * exactly, and the checker finds every backref.
 */
START_TEST(test_reclaim_relocates_extents_of_shared_leaves)
{
	struct zcow_fs *fs = sim_fs(48, 0, &quiet);
	struct zcow_bg *bg;
	uint64_t start, id;
	char path[32];
	int i;

	for (i = 0; i < 200; i++) {	/* several leaves under a node */
		snprintf(path, sizeof(path), "/s%03d", i);
		put(fs, path, 0, 4096, (uint32_t)i + 10);
	}
	put(fs, "/a", 0, 4 * MiB, 1);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_ge(fs->fs_tree.root_level, 1);
	ck_assert_int_eq(zcow_snapshot(fs, "s1", &id), 0);
	put(fs, "/a", 0, 1 * MiB, 2);
	put(fs, "/s100", 0, 4096, 3);
	ck_assert_int_eq(zcow_sync(fs), 0);
	bg = data_bg_of(fs, "/a", 2 * MiB);	/* shared with s1 */
	start = bg->start;

	ck_assert_int_eq(relocate_one(fs, bg), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect(fs, "/a", 0, 1 * MiB, 2);
	expect(fs, "/a", 1 * MiB, 3 * MiB, 1);
	expect(fs, "/s1/a", 0, 4 * MiB, 1);
	expect(fs, "/s100", 0, 4096, 3);
	expect(fs, "/s1/s100", 0, 4096, 110);
	expect(fs, "/s1/s199", 0, 4096, 209);
	expect_clean(fs);

	fs = zcow_test_remount(fs, &quiet);
	expect(fs, "/a", 1 * MiB, 3 * MiB, 1);
	expect(fs, "/s1/a", 0, 4 * MiB, 1);
	expect(fs, "/s1/s100", 0, 4096, 110);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A metadata group written full, most of its nodes freed since: its live
 * tree nodes are copied on write elsewhere, the group removed and its
 * zone reset; every file is still there after a remount.
 */
START_TEST(test_reclaim_relocates_metadata_group)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_fs *fs;
	struct zcow_bg *victim = NULL;
	uint64_t i, start, phys, live;
	char path[32];
	struct zcow_stat st;

	mo.no_treelog = true;
	fs = sim_fs(64, 0, &mo);
	for (i = 0; i < 3000; i++) {
		struct zcow_file *f;

		snprintf(path, sizeof(path), "/f%04llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_create(fs, path, &f), 0);
		ck_assert_int_eq(zcow_fsync(f), 0);
		ck_assert_int_eq(zcow_close(f), 0);
	}
	for (i = 0; i < 3000; i++) {
		if (i % 10 == 0)
			continue;
		snprintf(path, sizeof(path), "/f%04llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_unlink(fs, path), 0);
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	pthread_mutex_lock(&fs->files->lock);
	for (i = 0; i < fs->nr_bgs && !victim; i++)
		if ((fs->bgs[i]->flags & ZCOW_BG_METADATA) &&
		    fs->bgs[i]->used &&
		    zcow_reclaim_is_candidate(fs, fs->bgs[i]))
			victim = fs->bgs[i];
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_ptr_nonnull(victim);
	start = victim->start;
	phys = victim->physical;
	live = victim->used;

	ck_assert_int_eq(relocate_one(fs, victim), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect_zone_empty(fs, phys);
	ck_assert_uint_eq(fs->rstats.meta_groups, 1);
	ck_assert_uint_eq(fs->rstats.meta_bytes, live);
	ck_assert_uint_eq(fs->rstats.data_bytes, 0);
	expect_clean(fs);

	fs = zcow_test_remount(fs, &mo);
	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/f%04llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_stat(fs, path, &st),
				 i % 10 ? -ENOENT : 0);
	}
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A metadata group whose nodes a snapshot shares with the fs tree: files
 * made, snapshotted, then most of them unlinked (the fs tree copies the
 * shared nodes it changes, they turn FULL_BACKREF).  Relocation copies
 * the group's nodes in each tree (a node shared by both is copied into
 * each and freed by the second); the group goes, both trees read back,
 * the checker finds every backref.
 */
START_TEST(test_reclaim_relocates_metadata_group_shared_with_a_snapshot)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_fs *fs;
	struct zcow_bg *victim = NULL;
	uint64_t i, start, shared = 0;
	char path[32];
	struct zcow_stat st;

	mo.no_treelog = true;
	fs = sim_fs(64, 0, &mo);
	for (i = 0; i < 1500; i++) {
		struct zcow_file *f;

		snprintf(path, sizeof(path), "/f%04llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_create(fs, path, &f), 0);
		ck_assert_int_eq(zcow_fsync(f), 0);	/* a commit each */
		ck_assert_int_eq(zcow_close(f), 0);
	}
	ck_assert_int_eq(zcow_snapshot(fs, "snap", NULL), 0);
	for (i = 0; i < 1500; i++) {
		if (i % 10 == 0)
			continue;
		snprintf(path, sizeof(path), "/f%04llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_unlink(fs, path), 0);
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	expect_clean(fs);
	/* the metadata group holding most nodes both trees reach (refs
	 * 2) or the snapshot's FULL_BACKREF ones */
	pthread_mutex_lock(&fs->files->lock);
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];
		struct zcow_key k = { bg->start, 0, 0 }, got;
		struct zcow_tree_iter it;
		const void *data;
		uint32_t len;
		uint64_t n = 0;

		if (!(bg->flags & ZCOW_BG_METADATA) ||
		    bg->start == fs->treelog_bg)
			continue;
		zcow_tree_iter_init(&it, &fs->extent_tree, &k);
		while (!zcow_tree_iter_next(&it, &got, &data, &len) &&
		       got.objectid < bg->start + bg->length) {
			const uint8_t *d = data;

			if (got.type == ZCOW_METADATA_ITEM_KEY &&
			    (d[0] > 1 || (d[17] & 1)))	/* refs, flag 0x100 */
				n++;
		}
		if (n > shared) {
			shared = n;
			victim = bg;
		}
	}
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_ptr_nonnull(victim);
	ck_assert_uint_gt(shared, 0);
	start = victim->start;

	ck_assert_int_eq(relocate_one(fs, victim), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect_clean(fs);
	fs = zcow_test_remount(fs, &mo);
	for (i = 0; i < 1500; i += 7) {
		snprintf(path, sizeof(path), "/f%04llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_stat(fs, path, &st),
				 i % 10 ? -ENOENT : 0);
		snprintf(path, sizeof(path), "/snap/f%04llu",
			 (unsigned long long)i);
		ck_assert_int_eq(zcow_stat(fs, path, &st), 0);
	}
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * The policies' order.  /old (group G1, written first, 41% live) and
 * /new (G2, written 8 MiB later, 31% live): greedy takes the least live
 * first (G2); cost-benefit weighs age x (1 - u) / (1 + u), and G1 is
 * more than three times older (G1 first); threshold 65% takes only G2
 * (69% unusable).
 */
START_TEST(test_reclaim_policy_order)
{
	static const int policy[] = { ZCOW_RECLAIM_GREEDY,
				      ZCOW_RECLAIM_COST_BENEFIT,
				      ZCOW_RECLAIM_THRESHOLD };
	struct zcow_mount_opts mo = quiet;
	struct zcow_fs *fs;
	struct zcow_bg **v = NULL, *g1, *g2;
	uint64_t nr = 0, s1, s2;

	mo.reclaim = policy[_i];
	mo.reclaim_threshold =
		policy[_i] == ZCOW_RECLAIM_THRESHOLD ? 65 : 0;
	fs = sim_fs(32, 0, &mo);
	put(fs, "/old", 0, 4 * MiB, 1);
	put(fs, "/filler", 0, 8 * MiB, 1);
	put(fs, "/new", 0, 4 * MiB, 1);
	put(fs, "/old", 0, 38 * 64 * KiB, 2);	/* 59% */
	put(fs, "/new", 0, 44 * 64 * KiB, 2);	/* 69% */
	g1 = data_bg_of(fs, "/old", 3 * MiB);
	g2 = data_bg_of(fs, "/new", 3 * MiB);
	ck_assert_ptr_ne(g1, g2);
	s1 = g1->start;
	s2 = g2->start;
	ck_assert_int_eq(zcow_sync(fs), 0);
	if (policy[_i] == ZCOW_RECLAIM_THRESHOLD) {
		/* Linux 5.13: the commit relocated what is over it. */
		ck_assert_ptr_eq(zcow_bg_lookup(fs, s1), g1);
		ck_assert_ptr_null(zcow_bg_lookup(fs, s2));
		ck_assert_uint_eq(fs->rstats.groups_relocated, 1);
		expect(fs, "/new", 0, 2816 * KiB, 2);
		expect(fs, "/new", 2816 * KiB, 4 * MiB - 2816 * KiB, 1);
		zcow_test_close_fs(fs);
		return;
	}

	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_reclaim_victims(fs, &v, &nr), 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_uint_ge(nr, 2);
	ck_assert_ptr_eq(v[0], policy[_i] == ZCOW_RECLAIM_GREEDY ? g2 : g1);
	ck_assert_ptr_eq(v[1], policy[_i] == ZCOW_RECLAIM_GREEDY ? g1 : g2);
	free(v);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * hotcold-greedy: greedy with a cold group's free share counted twice
 * (the spare space shifts to the hot groups), refused without
 * hotcold=on.  The groups of test_reclaim_policy_order, /old 41% live
 * marked cold and /new 31% live marked hot: greedy takes /new first,
 * hotcold-greedy /old (2 x 0.59 > 0.69).
 */
START_TEST(test_reclaim_hotcold_greedy_counts_cold_free_space_twice)
{
	struct zcow_mount_opts mo = { .data_zones = 2,
				      .reclaim = ZCOW_RECLAIM_HOTCOLD_GREEDY };
	struct zcow_bg **v = NULL, *g1, *g2;
	struct zcow_fs *fs = NULL;
	struct zcow_mkfs_opts mko = { 0 };
	struct zsim_config cfg = { .nr_zones = 32, .zone_size = ZS };
	struct zdev *dev = NULL;
	uint64_t nr = 0;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mko), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	ck_assert_ptr_null(fs);
	zdev_close(dev);

	mo.hotcold = true;
	fs = sim_fs(32, 0, &mo);
	put(fs, "/old", 0, 4 * MiB, 1);
	put(fs, "/filler", 0, 8 * MiB, 1);
	put(fs, "/new", 0, 4 * MiB, 1);
	put(fs, "/old", 0, 38 * 64 * KiB, 2);
	put(fs, "/new", 0, 44 * 64 * KiB, 2);
	ck_assert_int_eq(zcow_sync(fs), 0);
	g1 = data_bg_of(fs, "/old", 3 * MiB);
	g2 = data_bg_of(fs, "/new", 3 * MiB);
	ck_assert_ptr_ne(g1, g2);
	ck_assert_uint_eq(g1->used, 4 * MiB - 38 * 64 * KiB);
	ck_assert_uint_eq(g2->used, 4 * MiB - 44 * 64 * KiB);
	pthread_mutex_lock(&fs->files->lock);
	g1->is_hot = false;
	g2->is_hot = true;
	ck_assert_int_eq(zcow_reclaim_victims(fs, &v, &nr), 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_uint_ge(nr, 2);
	ck_assert_ptr_eq(v[0], g1);
	ck_assert_ptr_eq(v[1], g2);
	free(v);
	zcow_test_close_fs(fs);
}
END_TEST

/* The next piece of @nr a random overwrite writes (an LCG in @x). */
static uint64_t next_piece(uint64_t *x, uint64_t nr)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (*x >> 33) % nr;
}

/*
 * Up to @n overwrites of /big (@size bytes, open as @f) in pieces of
 * @piece at places drawn from *@x, each piece's version counted in @ver;
 * with @steps the background cleaner's due steps after each (as zcow
 * run's scheduler takes them).  Stops at the first write that is short:
 * returns the writes done, the last one's result in *@r_ret.
 */
static uint64_t overwrite_pieces(struct zcow_fs *fs, struct zcow_file *f,
				 uint64_t size, uint64_t piece, uint32_t *ver,
				 uint64_t *x, uint64_t n, bool steps,
				 int64_t *r_ret)
{
	uint8_t *buf = malloc(piece);
	uint64_t k, i;
	int64_t r = 0;

	ck_assert_ptr_nonnull(buf);
	for (k = 0; k < n; k++) {
		i = next_piece(x, size / piece);
		fill(buf, i * piece, piece, ver[i] + 1);
		r = zcow_pwrite(f, buf, piece, i * piece);
		if (r != (int64_t)piece)
			break;
		ver[i]++;
		while (steps && zcow_cleaner_due(fs))
			ck_assert_int_eq(zcow_cleaner_step(fs), 0);
	}
	free(buf);
	*r_ret = r;
	return k;
}

/* /big reads back as @ver says (@size bytes in pieces of @piece) and
 * the checker is clean, before and after a remount with @mo; then the
 * fs is closed. */
static void expect_pieces_and_close(struct zcow_fs *fs,
				    const struct zcow_mount_opts *mo,
				    const uint32_t *ver, uint64_t size,
				    uint64_t piece)
{
	int round;
	uint64_t i;

	for (round = 0; round < 2; round++) {
		if (round)
			fs = zcow_test_remount(fs, mo);
		for (i = 0; i < size / piece; i++)
			expect(fs, "/big", i * piece, piece, ver[i]);
		expect_clean(fs);
	}
	zcow_test_close_fs(fs);
}

/*
 * Sustained overwrite: a file of 60% of the data space, overwritten in
 * 64 KiB pieces at pseudo-random places three times over.  Without
 * reclaim this ends in ENOSPC during the first pass; with every policy it
 * completes (threshold: at 36% and 51% unusable; at 60% utilization no
 * group is half unusable yet when the free zones run out, so a fixed
 * threshold is reached too late, as Linux 5.13's 75% is), the active-zone limit of the device (8) is kept all along
 * (the simulator refuses a write that opens one zone too many), the file
 * reads back as written, the checker is clean, also after a remount.
 * _i / 4 == 1: zones of 3 MiB capacity in 4 MiB (ZNS), 32 zones for the
 * same share of the data space.
 */
START_TEST(test_reclaim_sustained_overwrite)
{
	static const int policies[] = { ZCOW_RECLAIM_OFF,
					ZCOW_RECLAIM_THRESHOLD,
					ZCOW_RECLAIM_GREEDY,
					ZCOW_RECLAIM_COST_BENEFIT };
	const int p = policies[_i % 4];
	const bool is_cap = _i / 4;
	struct zcow_mount_opts mo = {
		.reclaim = p,
		.reclaim_threshold = p == ZCOW_RECLAIM_THRESHOLD ? 51 : 0,
	};
	const uint64_t size = p == ZCOW_RECLAIM_THRESHOLD ? 24 * MiB :
							   40 * MiB;
	const uint64_t piece = 64 * KiB;
	uint32_t *ver = calloc(size / piece, sizeof(*ver));
	uint64_t n, x = 12345;
	struct zcow_fs *fs = is_cap ? sim_fs_cap(32, 3 * MiB, 8, &mo) :
				      sim_fs(24, 8, &mo);
	struct zcow_file *f;
	int64_t r = 0;

	put(fs, "/big", 0, size, 0);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDWR, &f), 0);
	n = overwrite_pieces(fs, f, size, piece, ver, &x, 3 * size / piece,
			     false, &r);
	if (p == ZCOW_RECLAIM_OFF) {
		ck_assert_int_eq(r, -ENOSPC);
		ck_assert_uint_lt(n, size / piece);
	} else {
		ck_assert_int_eq(r, (int64_t)piece);
		ck_assert_uint_eq(n, 3 * size / piece);
		ck_assert_uint_gt(fs->rstats.groups_relocated, 0);
		ck_assert_uint_gt(fs->rstats.zones_reset, 0);
	}
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	expect_pieces_and_close(fs, &mo, ver, size, piece);
	free(ver);
}
END_TEST

/*
 * The background cleaner (cleaner=): the sustained overwrite above under
 * greedy, _i 0 with the fs's thread (ZCOW_CLEANER_THREAD), _i 1 with
 * the caller taking the steps whenever one is due (ZCOW_CLEANER_STEPS,
 * as zcow run's scheduler does).  Every write completes, the cleaner
 * took steps, with the steps taken in time no writer cleaned, the file
 * reads back as written and the checker is clean, also after a remount
 * (which stops the thread before its last commit).
 */
START_TEST(test_reclaim_background_cleaner)
{
	const bool is_thread = _i == 0;
	struct zcow_mount_opts mo = {
		.reclaim = ZCOW_RECLAIM_GREEDY,
		.cleaner = is_thread ? ZCOW_CLEANER_THREAD : ZCOW_CLEANER_STEPS,
	};
	const uint64_t size = 40 * MiB, piece = 64 * KiB;
	uint32_t *ver = calloc(size / piece, sizeof(*ver));
	uint64_t x = 12345;
	struct zcow_fs *fs = sim_fs(24, 8, &mo);
	struct zcow_file *f;
	int64_t r = 0;

	put(fs, "/big", 0, size, 0);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDWR, &f), 0);
	ck_assert_uint_eq(overwrite_pieces(fs, f, size, piece, ver, &x,
					   3 * size / piece, !is_thread, &r),
			  3 * size / piece);
	ck_assert_int_eq(r, (int64_t)piece);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_uint_gt(fs->rstats.groups_relocated, 0);
	ck_assert_uint_gt(fs->rstats.cleaner_steps, 0);
	if (!is_thread)
		ck_assert_uint_eq(fs->rstats.writer_runs, 0);
	ck_assert_int_eq(fs->error, 0);
	expect_pieces_and_close(fs, &mo, ver, size, piece);
	free(ver);
}
END_TEST

/*
 * The space data cycles through (zcow_fs_info data_space_bytes): under a
 * just-in-time policy, less the cleaner's pool that data never writes
 * (its ahead zones, 3 by default, less one) and the zone held for the
 * relocation group; without reclaim neither.  The same image mounted
 * both ways: exactly 2 + held zones apart, the live bytes equal.
 */
START_TEST(test_reclaim_data_space_leaves_out_the_cleaners_pool)
{
	struct zcow_mount_opts off = { .reclaim = ZCOW_RECLAIM_OFF };
	struct zcow_mount_opts greedy = { .reclaim = ZCOW_RECLAIM_GREEDY };
	struct zcow_fs *fs = sim_fs(32, 0, &off);
	struct zcow_fs_info a, b;

	put(fs, "/f", 0, 3 * MiB, 1);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_fs_info(fs, &a), 0);
	fs = zcow_test_remount(fs, &greedy);
	ck_assert_int_eq(zcow_fs_info(fs, &b), 0);
	ck_assert_uint_eq(a.nr_reloc_held_zones, 0);
	ck_assert_uint_eq(b.nr_reloc_held_zones, 1);
	ck_assert_uint_eq(a.data_live_bytes, 3 * MiB);
	ck_assert_uint_eq(b.data_live_bytes, 3 * MiB);
	ck_assert_uint_eq(a.data_space_bytes - b.data_space_bytes,
			  (2 + b.nr_reloc_held_zones) * ZS);
	zcow_test_close_fs(fs);
}
END_TEST

/* cleaner= as a mount option: background is the thread, writer the
 * default; anything else, as a string or a number, is refused. */
START_TEST(test_reclaim_cleaner_option)
{
	struct zcow_mount_opts mo = { 0 };
	struct zcow_fs *fs;
	struct zsim_config cfg = { .nr_zones = 16, .zone_size = ZS,
				   .seed = 5 };
	struct zcow_mkfs_opts mko = { .seed = 3 };
	struct zdev *dev = NULL;

	ck_assert_int_eq(zcow_mount_opts_parse("cleaner=background", &mo), 0);
	ck_assert_int_eq(mo.cleaner, ZCOW_CLEANER_THREAD);
	ck_assert_int_eq(zcow_mount_opts_parse("cleaner=writer", &mo), 0);
	ck_assert_int_eq(mo.cleaner, ZCOW_CLEANER_WRITER);
	ck_assert_int_eq(zcow_mount_opts_parse("cleaner=thread", &mo),
			 -EINVAL);
	ck_assert_int_eq(zcow_mount_opts_parse("cleaner", &mo), -EINVAL);
	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mko), 0);
	mo.cleaner = ZCOW_CLEANER_STEPS + 1;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	/* The writer's mount never has a step due. */
	mo.cleaner = ZCOW_CLEANER_WRITER;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	ck_assert(!zcow_cleaner_due(fs));
	ck_assert_int_eq(zcow_cleaner_step(fs), 0);
	zcow_test_close_fs(fs);
}
END_TEST

/* Write /fill in 1 MiB pieces until the device is full (-ENOSPC). */
static void fill_to_enospc(struct zcow_fs *fs)
{
	uint8_t *buf = malloc(MiB);
	struct zcow_file *f;
	uint64_t off = 0;
	int64_t n;

	memset(buf, 0x5a, MiB);
	ck_assert_int_eq(zcow_create(fs, "/fill", &f), 0);
	while ((n = zcow_pwrite(f, buf, MiB, off)) > 0)
		off += MiB;
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_int_eq(zcow_close(f), 0);
	free(buf);
}

/*
 * With reclaim on, filling the device with live data stops with three
 * free zones: two for metadata and the one held for the data relocation
 * group (Linux 6.17 reserves it at mount), which relocation takes.
 */
START_TEST(test_reclaim_holds_a_zone_for_relocation)
{
	struct zcow_mount_opts mo = { .reclaim = ZCOW_RECLAIM_GREEDY };
	struct zcow_fs *fs = sim_fs(32, 0, &mo);

	ck_assert_ptr_null(zcow_bg_lookup(fs, fs->reloc_bg));
	fill_to_enospc(fs);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_reclaim_held_zones(fs), 1);
	ck_assert_uint_eq(zcow_zoned_nr_free_zones(fs), 3);
	ck_assert(zcow_zoned_reloc_may_take_zone(fs));
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * /b (4 MiB, its first MiB overwritten: a group of 3 MiB live) and /a (6
 * MiB, its first 2 MiB overwritten); the group of /a's old first 4 MiB
 * (2 MiB live) relocated: the relocation group has 2 MiB left.
 */
static void two_files_one_relocated(struct zcow_fs *fs)
{
	put(fs, "/b", 0, 4 * MiB, 1);
	put(fs, "/a", 0, 6 * MiB, 1);
	ck_assert_int_eq(zcow_sync(fs), 0);
	put(fs, "/a", 0, 2 * MiB, 2);
	put(fs, "/b", 0, MiB, 2);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(relocate_one(fs, data_bg_of(fs, "/a", 3 * MiB)), 0);
}

/*
 * The zone stays held while the relocation group is partly filled and
 * too small for the least-live candidate.  Here 2 MiB of room are left
 * in it, the device is filled, and a group with 3 MiB live must still be
 * relocatable (the held zone takes the rest); the files read back, the
 * checker is clean.
 */
START_TEST(test_reclaim_holds_a_zone_past_a_partly_filled_relocation_group)
{
	struct zcow_fs *fs = sim_fs(32, 0, &quiet);
	struct zcow_bg *bg;
	uint64_t start;

	two_files_one_relocated(fs);
	bg = zcow_bg_lookup(fs, fs->reloc_bg);
	ck_assert_ptr_nonnull(bg);
	ck_assert_uint_eq(bg->alloc_offset, 2 * MiB);

	fill_to_enospc(fs);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_reclaim_held_zones(fs), 1);
	ck_assert_uint_eq(zcow_zoned_nr_free_zones(fs), 3);
	ck_assert_uint_eq(zcow_reloc_room(fs), 2 * MiB + ZS);
	pthread_mutex_unlock(&fs->files->lock);

	bg = data_bg_of(fs, "/b", 2 * MiB);
	ck_assert_uint_eq(bg->used, 3 * MiB);
	start = bg->start;
	ck_assert_int_eq(relocate_one(fs, bg), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect(fs, "/a", 0, 2 * MiB, 2);
	expect(fs, "/a", 2 * MiB, 4 * MiB, 1);
	expect(fs, "/b", 0, MiB, 2);
	expect(fs, "/b", MiB, 3 * MiB, 1);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * The zone is not held while the relocation group has room for the
 * least-live data candidate: with 2 MiB of room and a candidate of 1.5
 * MiB live, data may fill the device to the metadata reserve, and that
 * candidate is still relocated; the files read back, the checker is
 * clean.
 */
START_TEST(test_reclaim_gives_the_zone_back_when_room_is_enough)
{
	struct zcow_fs *fs = sim_fs(32, 0, &quiet);
	struct zcow_bg *bg;
	uint64_t start;

	two_files_one_relocated(fs);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_reclaim_held_zones(fs), 1);	/* 3 MiB live */
	pthread_mutex_unlock(&fs->files->lock);
	put(fs, "/b", MiB, 3 * MiB / 2, 3);
	ck_assert_int_eq(zcow_sync(fs), 0);
	bg = data_bg_of(fs, "/b", 3 * MiB);
	ck_assert_uint_eq(bg->used, 3 * MiB / 2);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_reclaim_held_zones(fs), 0);
	pthread_mutex_unlock(&fs->files->lock);

	fill_to_enospc(fs);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_reclaim_held_zones(fs), 0);
	ck_assert_uint_eq(zcow_zoned_nr_free_zones(fs), 2);
	pthread_mutex_unlock(&fs->files->lock);
	start = bg->start;
	ck_assert_int_eq(relocate_one(fs, bg), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect(fs, "/b", 0, MiB, 2);
	expect(fs, "/b", MiB, 3 * MiB / 2, 3);
	expect(fs, "/b", 5 * MiB / 2, 3 * MiB / 2, 1);
	expect(fs, "/a", 0, 2 * MiB, 2);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * Two groups relocated together, the second finds no room: /b's group
 * (1.5 MiB live) fits the 2 MiB left in the relocation group; every free
 * zone is then taken by empty metadata groups, so the group of /a's tail
 * finds room for part of its live data only.  The first group is emptied
 * and its zone reset, the call succeeds (a pass goes on with its next
 * round), the second group keeps what it still holds and takes
 * allocations again; every file reads back, also after a remount.
 */
START_TEST(test_reclaim_counts_groups_moved_when_the_last_finds_no_room)
{
	struct zcow_fs *fs = sim_fs(32, 0, &quiet);
	struct zcow_bg *v[2], *meta;
	uint64_t a_start, b_start, b_used;
	int err, i;

	two_files_one_relocated(fs);
	put(fs, "/b", MiB, 3 * MiB / 2, 3);
	ck_assert_int_eq(zcow_sync(fs), 0);
	v[0] = data_bg_of(fs, "/b", 3 * MiB);
	v[1] = data_bg_of(fs, "/a", 4 * MiB);
	ck_assert_ptr_ne(v[0], v[1]);
	ck_assert_uint_eq(v[0]->used, 3 * MiB / 2);
	b_used = v[1]->used;
	ck_assert_uint_gt(b_used, MiB);
	a_start = v[0]->start;
	b_start = v[1]->start;

	pthread_mutex_lock(&fs->files->lock);
	while (zcow_zoned_nr_free_zones(fs))
		ck_assert_int_eq(zcow_chunk_alloc(fs, ZCOW_BG_METADATA, &meta),
				 0);
	err = zcow_relocate_bgs_locked(fs, v, 2);
	if (!err)
		err = zcow_files_commit_locked(fs);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(err, 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, a_start));
	v[1] = zcow_bg_lookup(fs, b_start);
	ck_assert_ptr_nonnull(v[1]);
	ck_assert_uint_eq(v[1]->start, b_start);
	ck_assert(!v[1]->is_relocating);
	ck_assert_uint_lt(v[1]->used, b_used);
	ck_assert_uint_eq(fs->rstats.groups_relocated, 2);
	for (i = 0; i < 2; i++) {
		if (i)
			fs = zcow_test_remount(fs, &quiet);
		expect(fs, "/a", 0, 2 * MiB, 2);
		expect(fs, "/a", 2 * MiB, 4 * MiB, 1);
		expect(fs, "/b", 0, MiB, 2);
		expect(fs, "/b", MiB, 3 * MiB / 2, 3);
		expect(fs, "/b", 5 * MiB / 2, 3 * MiB / 2, 1);
		expect_clean(fs);
	}
	zcow_test_close_fs(fs);
}
END_TEST

static bool is_victim(struct zcow_fs *fs, uint64_t start)
{
	struct zcow_bg **v = NULL;
	uint64_t nr = 0, i;
	bool found = false;

	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_reclaim_victims(fs, &v, &nr), 0);
	for (i = 0; i < nr; i++)
		found |= v[i]->start == start;
	pthread_mutex_unlock(&fs->files->lock);
	free(v);
	return found;
}

/*
 * A data group left partly written, that no data slot fills (after a
 * mount, or a relocation group replaced), is a candidate once it holds
 * garbage: a recovered fs whose free zones are down to the reserve had
 * nothing to clean while every group with garbage was such a one (ENOSPC
 * on the first write after recovery, with a third of the device free of
 * live data).  A group a slot fills is not a candidate; relocating the
 * open group finishes its zone, and the file reads back.
 */
START_TEST(test_reclaim_takes_open_groups_no_slot_fills)
{
	struct zcow_mount_opts mo = { .reclaim = ZCOW_RECLAIM_GREEDY,
				      .data_zones = 1 };
	struct zcow_fs *fs = sim_fs(32, 0, &mo);
	struct zcow_bg *bg;
	uint64_t start;

	put(fs, "/a", 0, 2 * MiB, 1);
	put(fs, "/a", 0, MiB, 2);
	ck_assert_int_eq(zcow_sync(fs), 0);
	bg = data_bg_of(fs, "/a", MiB);
	ck_assert_ptr_eq(bg, data_bg_of(fs, "/a", 0));
	ck_assert_uint_eq(bg->alloc_offset, 3 * MiB);
	ck_assert_uint_eq(bg->used, 2 * MiB);
	start = bg->start;
	ck_assert(!is_victim(fs, start));	/* the slot fills it */

	fs = zcow_test_remount(fs, &mo);
	ck_assert(is_victim(fs, start));	/* no slot fills it */
	pthread_mutex_lock(&fs->files->lock);
	bg = zcow_bg_lookup(fs, start);
	ck_assert_int_eq(zcow_relocate_bgs_locked(fs, &bg, 1), 0);
	ck_assert_int_eq(zcow_files_commit_locked(fs), 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_ptr_null(zcow_bg_lookup(fs, start));
	expect(fs, "/a", 0, MiB, 2);
	expect(fs, "/a", MiB, MiB, 1);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * reclaim_high=N: the free zones a greedy pass stops at.  Out-of-range
 * values are refused by the parser and by mount, and so are reclaim_high
 * without a watermark policy and reclaim_threshold without
 * reclaim=threshold; zcow_fs_info reports
 * the value in force (the default: low 4 + max(2, zones / 4), counting
 * the zones outside the superblock log).  The same random overwrite runs
 * with the default (12 on 36 zones) and with 6:
 * stopping earlier means more, smaller passes, each group given more
 * time to empty, so fewer live bytes are moved; the file reads back.
 */
static void overwrite_under(uint32_t high, struct zcow_reclaim_stats *st,
			    uint32_t *high_ret)
{
	struct zcow_mount_opts mo = { .reclaim = ZCOW_RECLAIM_GREEDY,
				      .reclaim_high = high };
	const uint64_t size = 64 * MiB, piece = 64 * KiB;
	uint32_t *ver = calloc(size / piece, sizeof(*ver));
	struct zcow_fs *fs = sim_fs(36, 0, &mo);
	struct zcow_fs_info info;
	struct zcow_file *f;
	uint64_t i, x = 99;
	int64_t r = 0;

	put(fs, "/big", 0, size, 0);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDWR, &f), 0);
	ck_assert_uint_eq(overwrite_pieces(fs, f, size, piece, ver, &x,
					   4 * size / piece, false, &r),
			  4 * size / piece);
	ck_assert_int_eq(r, (int64_t)piece);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	for (i = 0; i < size / piece; i++)
		expect(fs, "/big", i * piece, piece, ver[i]);
	expect_clean(fs);
	ck_assert_int_eq(zcow_fs_info(fs, &info), 0);
	*st = info.reclaim_stats;
	*high_ret = info.reclaim_high;
	zcow_test_close_fs(fs);
	free(ver);
}

START_TEST(test_reclaim_high_watermark)
{
	struct zcow_mount_opts mo = { .reclaim = ZCOW_RECLAIM_GREEDY };
	struct zcow_reclaim_stats def, low;
	uint32_t high_def, high_low;
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	struct zsim_config cfg = { .nr_zones = 16, .zone_size = ZS };
	struct zcow_mkfs_opts mko = { .seed = 3 };

	ck_assert_int_eq(zcow_mount_opts_parse("reclaim_high=4", &mo),
			 -EINVAL);
	ck_assert_int_eq(zcow_mount_opts_parse("reclaim_high=", &mo),
			 -EINVAL);
	ck_assert_int_eq(zcow_mount_opts_parse("reclaim_high=65536", &mo),
			 -EINVAL);
	ck_assert_uint_eq(mo.reclaim_high, 0);
	ck_assert_int_eq(zcow_mount_opts_parse("reclaim_high=6", &mo), 0);
	ck_assert_uint_eq(mo.reclaim_high, 6);
	mo.reclaim = ZCOW_RECLAIM_THRESHOLD;
	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mko), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	ck_assert_ptr_null(fs);
	zdev_close(dev);
	mo.reclaim = ZCOW_RECLAIM_GREEDY;
	mo.reclaim_high = 3;
	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mko), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	ck_assert_ptr_null(fs);
	/* reclaim_threshold= belongs to reclaim=threshold alone */
	mo.reclaim_high = 0;
	mo.reclaim_threshold = 60;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	mo.reclaim = ZCOW_RECLAIM_DEFAULT;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	mo.reclaim = ZCOW_RECLAIM_THRESHOLD;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	ck_assert_uint_eq(fs->reclaim_threshold, 60);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = NULL;
	zdev_close(dev);
	mo = (struct zcow_mount_opts){ .reclaim = ZCOW_RECLAIM_GREEDY };

	/* Default: the metadata reserve (2 zones), the zone held for the
	 * relocation group (none now) and 3 more; reclaim_high=12 keeps
	 * more zones free or pending, so the cleaner starts earlier and
	 * moves groups that hold more live data. */
	overwrite_under(0, &def, &high_def);
	overwrite_under(12, &low, &high_low);
	ck_assert_uint_eq(high_def, 2 + 3);
	ck_assert_uint_eq(high_low, 12);
	ck_assert_uint_gt(def.nr_passes, 0);
	ck_assert_uint_gt(low.groups_relocated, def.groups_relocated);
	ck_assert_uint_gt(low.data_bytes, def.data_bytes);
}
END_TEST

/*
 * A system group whose chunk-tree nodes are all dead is removed and its
 * zone reset like any other group, and its chunk leaves the superblock's
 * sys_chunk_array in the same commit.  The commits here add and drop a
 * data chunk, so they rewrite the chunk tree: 1,200 rounds fill ten 4 MiB
 * system groups (256 nodes each) with dead nodes, which stayed, until a
 * long run ran out of zones; now at most two system groups exist at once
 * (the one being written and the one it follows).  The array holds one
 * chunk per system group, also after a remount; the checker is clean.
 */
static uint64_t nr_system_groups(struct zcow_fs *fs)
{
	uint64_t i, n = 0;

	for (i = 0; i < fs->nr_bgs; i++)
		if ((fs->bgs[i]->flags & ZCOW_BG_SYSTEM) &&
		    !fs->bgs[i]->is_deleted)
			n++;
	return n;
}

START_TEST(test_reclaim_system_groups_removed)
{
	struct zcow_fs *fs = sim_fs(24, 0, &quiet);
	const uint32_t entry = sizeof(struct zcow_disk_key) +
			       ZCOW_CHUNK_ITEM_SIZE;
	uint64_t n, most = 0;

	for (n = 0; n < 1200; n++) {
		put(fs, "/f", 0, ZS, (uint32_t)n);
		ck_assert_int_eq(zcow_sync(fs), 0);
		ck_assert_int_eq(zcow_unlink(fs, "/f"), 0);
		ck_assert_int_eq(zcow_sync(fs), 0);
		if (nr_system_groups(fs) > most)
			most = nr_system_groups(fs);
	}
	ck_assert_uint_le(most, 2);
	ck_assert_uint_eq(le32toh(fs->sb.sys_chunk_array_size),
			  nr_system_groups(fs) * entry);
	expect_clean(fs);
	fs = zcow_test_remount(fs, &quiet);
	ck_assert_uint_le(nr_system_groups(fs), 2);
	ck_assert_uint_eq(le32toh(fs->sb.sys_chunk_array_size),
			  nr_system_groups(fs) * entry);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * zcow balance --usage N: every group at most N% live is relocated, the
 * others stay; the counters say what moved.  Bad arguments and read-only
 * mounts are refused.
 */
START_TEST(test_reclaim_balance_usage)
{
	struct zcow_fs *fs = sim_fs(32, 0, &quiet);
	struct zcow_reclaim_stats st;
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_bg *g1, *g2;
	uint64_t s1, s2;

	put(fs, "/a", 0, 4 * MiB, 1);
	put(fs, "/b", 0, 4 * MiB, 1);
	put(fs, "/a", 0, 3 * MiB, 2);		/* /a's group: 25% live */
	put(fs, "/b", 0, 1 * MiB, 2);		/* /b's group: 75% live */
	ck_assert_int_eq(zcow_sync(fs), 0);
	g1 = data_bg_of(fs, "/a", 3 * MiB);
	g2 = data_bg_of(fs, "/b", 3 * MiB);
	s1 = g1->start;
	s2 = g2->start;
	ck_assert_int_eq(zcow_balance(fs, 101, &st), -EINVAL);
	ck_assert_int_eq(zcow_balance(fs, 50, &st), 0);
	ck_assert_ptr_null(zcow_bg_lookup(fs, s1));
	ck_assert_ptr_eq(zcow_bg_lookup(fs, s2), g2);
	ck_assert_uint_eq(st.data_bytes, 1 * MiB);
	ck_assert_uint_ge(st.groups_relocated, 1);
	ck_assert_uint_ge(st.zones_reset, 1);
	expect(fs, "/a", 0, 3 * MiB, 2);
	expect(fs, "/a", 3 * MiB, 1 * MiB, 1);
	expect(fs, "/b", 0, 1 * MiB, 2);
	expect(fs, "/b", 1 * MiB, 3 * MiB, 1);
	expect_clean(fs);
	fs = zcow_test_remount(fs, &ro);
	ck_assert_int_eq(zcow_balance(fs, 50, &st), -EROFS);
	expect(fs, "/a", 0, 3 * MiB, 2);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * hotcold=age with two data slots: slot 0 takes cold writes, slot 1 hot
 * ones.  New data is cold.  Until a commit has seen overwrites every
 * overwrite is hot; then the threshold is the mean age of the data those
 * overwrites replaced: an overwrite of data older than that goes to the
 * cold group, of younger data to the hot group.  With hotcold=off all of
 * it shares the one group of the file's slot.
 */
START_TEST(test_reclaim_hotcold_places_by_age)
{
	struct zcow_mount_opts mo = quiet, off = quiet;
	struct zcow_bg *cold, *hot;
	struct zcow_fs *fs;
	uint64_t first;

	mo.data_zones = 2;
	mo.hotcold = ZCOW_HOTCOLD_AGE;
	fs = sim_fs(32, 0, &mo);
	ck_assert(fs->files->hotcold);
	ck_assert_uint_eq(fs->files->hot_age, UINT64_MAX);
	put(fs, "/a", 0, 1 * MiB, 1);			/* new: cold */
	cold = data_bg_of(fs, "/a", 0);
	ck_assert(!cold->is_hot);
	ck_assert_int_eq(zcow_sync(fs), 0);
	/* Age unknown yet: an overwrite is hot. */
	put(fs, "/a", 0, 64 * KiB, 2);
	hot = data_bg_of(fs, "/a", 0);
	ck_assert_ptr_ne(hot, cold);
	ck_assert(hot->is_hot);
	ck_assert_int_eq(zcow_sync(fs), 0);
	/* The threshold: the age of the 16 blocks just replaced, written
	 * at clock 0 and replaced after the first 1 MiB and its metadata. */
	first = fs->files->hot_age;
	ck_assert_uint_gt(first, 1 * MiB);
	ck_assert_uint_lt(first, fs->alloc_clock);
	/* Older than that (written at 0, now later): cold. */
	put(fs, "/a", 512 * KiB, 64 * KiB, 2);
	ck_assert_ptr_eq(data_bg_of(fs, "/a", 512 * KiB), cold);
	/* Written one commit ago (at about 1 MiB): hot. */
	put(fs, "/a", 0, 64 * KiB, 3);
	ck_assert_ptr_eq(data_bg_of(fs, "/a", 0), hot);
	/* A new file is cold, the other data is intact. */
	put(fs, "/b", 0, 64 * KiB, 1);
	ck_assert_ptr_eq(data_bg_of(fs, "/b", 0), cold);
	expect(fs, "/a", 0, 64 * KiB, 3);
	expect(fs, "/a", 64 * KiB, 448 * KiB, 1);
	expect(fs, "/a", 512 * KiB, 64 * KiB, 2);
	expect_clean(fs);
	zcow_test_close_fs(fs);

	/* Off: the overwrite of young data stays in the file's group. */
	off.data_zones = 2;
	fs = sim_fs(32, 0, &off);
	put(fs, "/a", 0, 1 * MiB, 1);
	cold = data_bg_of(fs, "/a", 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	put(fs, "/a", 0, 64 * KiB, 2);
	ck_assert_ptr_eq(data_bg_of(fs, "/a", 0), cold);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * hotcold=age keeps the write clocks of the last ZCOW_HOTCOLD_MAX_GENS
 * transactions only, so that hours of commits do not grow it: data of an
 * older transaction counts as written before the mount (the oldest,
 * cold); the newest transaction's data is still dated.
 */
START_TEST(test_reclaim_hotcold_clocks_bounded)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_files *fl;
	struct zcow_fs *fs;
	uint64_t i, newest;

	mo.data_zones = 2;
	mo.hotcold = ZCOW_HOTCOLD_AGE;
	fs = sim_fs(32, 0, &mo);
	fl = fs->files;
	pthread_mutex_lock(&fl->lock);
	for (i = 0; i < ZCOW_HOTCOLD_MAX_GENS + 1000; i++) {
		fs->alloc_clock += BS;
		zcow_zoned_note_transid(fs);
	}
	ck_assert_uint_le(fl->nr_gen, ZCOW_HOTCOLD_MAX_GENS);
	ck_assert_uint_ge(fl->nr_gen, ZCOW_HOTCOLD_MAX_GENS / 2);
	newest = fl->gen_base + fl->nr_gen;
	fl->hot_age = 10 * BS;
	ck_assert(zcow_zoned_overwrite_is_hot(fs, newest));
	ck_assert(zcow_zoned_overwrite_is_hot(fs, newest - 8));
	ck_assert(!zcow_zoned_overwrite_is_hot(fs, newest - 11));
	ck_assert(!zcow_zoned_overwrite_is_hot(fs, fl->gen_base));
	pthread_mutex_unlock(&fl->lock);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * The age of what a write replaces counts once toward the hot threshold,
 * however often its reservation looks: with zone_append=off it looks
 * again once the group's plain lock is held (it counted twice).
 */
START_TEST(test_reclaim_hotcold_counts_an_overwrite_once)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_fs *fs;

	mo.data_zones = 2;
	mo.hotcold = ZCOW_HOTCOLD_AGE;
	mo.no_zone_append = true;
	fs = sim_fs(32, 0, &mo);
	put(fs, "/a", 0, 64 * KiB, 1);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_uint_eq(fs->files->nr_ow, 0);
	put(fs, "/a", 0, BS, 2);			/* one command */
	ck_assert_uint_eq(fs->files->nr_ow, 1);
	put(fs, "/a", 8 * KiB, BS, 2);
	ck_assert_uint_eq(fs->files->nr_ow, 2);
	put(fs, "/b", 0, BS, 1);			/* new data: none */
	ck_assert_uint_eq(fs->files->nr_ow, 2);
	expect(fs, "/a", 0, BS, 2);
	expect(fs, "/a", BS, BS, 1);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * hotcold=on (frequency): a write is hot when its first 16 KiB range was
 * written at least twice as often as the mean range of the data before.
 * After 1 MiB of new data (64 ranges written once), a range written a
 * third time is still cold (2 < 2 x 66 / 65 before it), a fourth time
 * hot (3 >= 2 x 67 / 65); new data is cold.
 */
START_TEST(test_reclaim_hotcold_frequency_places_often_written_ranges_hot)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_bg *cold, *hot;
	struct zcow_fs *fs;

	mo.data_zones = 2;
	mo.hotcold = ZCOW_HOTCOLD_FREQUENCY;
	fs = sim_fs(32, 0, &mo);
	put(fs, "/a", 0, 1 * MiB, 1);			/* new: cold */
	cold = data_bg_of(fs, "/a", 0);
	ck_assert(!cold->is_hot);
	put(fs, "/h", 0, 16 * KiB, 1);
	ck_assert_ptr_eq(data_bg_of(fs, "/h", 0), cold);
	put(fs, "/h", 0, 16 * KiB, 2);
	put(fs, "/h", 0, 16 * KiB, 3);			/* third: cold */
	ck_assert_ptr_eq(data_bg_of(fs, "/h", 0), cold);
	put(fs, "/h", 0, 16 * KiB, 4);			/* fourth: hot */
	hot = data_bg_of(fs, "/h", 0);
	ck_assert_ptr_ne(hot, cold);
	ck_assert(hot->is_hot);
	put(fs, "/h", 0, 4 * KiB, 5);			/* the same range */
	ck_assert_ptr_eq(data_bg_of(fs, "/h", 0), hot);
	put(fs, "/h", 16 * KiB, 16 * KiB, 1);		/* the next: cold */
	ck_assert_ptr_eq(data_bg_of(fs, "/h", 16 * KiB), cold);
	put(fs, "/b", 0, 16 * KiB, 1);			/* another file */
	ck_assert_ptr_eq(data_bg_of(fs, "/b", 0), cold);
	expect(fs, "/h", 0, 4 * KiB, 5);
	expect(fs, "/h", 4 * KiB, 12 * KiB, 4);
	expect(fs, "/h", 16 * KiB, 16 * KiB, 1);
	expect(fs, "/a", 0, 1 * MiB, 1);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * The counts decay: each quarter of the device written halves them, so a
 * range written often that is no longer written turns cold, and one
 * written often now is hot.  The device is 32 x 4 MiB: a quarter is
 * 32 MiB.
 */
START_TEST(test_reclaim_hotcold_frequency_decays)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_fs *fs;
	uint64_t i;

	mo.data_zones = 2;
	mo.hotcold = ZCOW_HOTCOLD_FREQUENCY;
	fs = sim_fs(32, 0, &mo);
	pthread_mutex_lock(&fs->files->lock);
	/* 256 ranges once, range 0 eight times. */
	zcow_heat_note_write(fs, 5, 300, 0, 4 * MiB);
	ck_assert(!zcow_heat_is_hot(fs, 5, 300, 0));
	for (i = 0; i < 7; i++)
		zcow_heat_note_write(fs, 5, 300, 0, BS);
	ck_assert(zcow_heat_is_hot(fs, 5, 300, 0));
	ck_assert(zcow_heat_is_hot(fs, 5, 300, 16 * KiB - 1));
	ck_assert(!zcow_heat_is_hot(fs, 5, 300, 16 * KiB));
	ck_assert(!zcow_heat_is_hot(fs, 5, 301, 0));	/* other inode */
	ck_assert(!zcow_heat_is_hot(fs, 257, 300, 0));	/* other tree */
	/* Five quarters of writes spread over 2048 other ranges, each
	 * 4 MiB of it once: range 0 halved five times. */
	for (i = 0; i < 40; i++)
		zcow_heat_note_write(fs, 5, 400, (i % 8) * 4 * MiB, 4 * MiB);
	ck_assert(!zcow_heat_is_hot(fs, 5, 300, 0));
	/* A range written often now is hot again. */
	for (i = 0; i < 16; i++)
		zcow_heat_note_write(fs, 5, 300, 64 * KiB, BS);
	ck_assert(zcow_heat_is_hot(fs, 5, 300, 64 * KiB));
	pthread_mutex_unlock(&fs->files->lock);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * hotcold=on: relocation keeps hot data hot.  The live extents of a
 * cleaned group whose file ranges are hot go to the hot relocation
 * group, the others to the relocation group; both read back, also after
 * a remount (where the hot relocation group is an ordinary group).
 */
START_TEST(test_reclaim_hotcold_frequency_relocates_hot_survivors_hot)
{
	struct zcow_mount_opts mo = quiet;
	struct zcow_bg *cold, *hot, *rc, *rh;
	struct zcow_fs *fs;

	mo.data_zones = 2;
	mo.hotcold = ZCOW_HOTCOLD_FREQUENCY;
	fs = sim_fs(32, 0, &mo);
	put(fs, "/a", 0, 1 * MiB, 1);
	put(fs, "/h", 0, 16 * KiB, 1);
	put(fs, "/h", 0, 16 * KiB, 2);
	put(fs, "/h", 0, 16 * KiB, 3);
	put(fs, "/h", 0, 16 * KiB, 4);			/* hot */
	ck_assert_int_eq(zcow_sync(fs), 0);
	cold = data_bg_of(fs, "/a", 0);
	hot = data_bg_of(fs, "/h", 0);
	ck_assert(hot->is_hot && !cold->is_hot);
	ck_assert_int_eq(relocate_one(fs, cold), 0);
	ck_assert_int_eq(relocate_one(fs, hot), 0);
	rc = data_bg_of(fs, "/a", 0);
	rh = data_bg_of(fs, "/h", 0);
	ck_assert_uint_eq(rc->start, fs->reloc_bg);
	ck_assert_uint_eq(rh->start, fs->reloc_hot_bg);
	ck_assert_ptr_ne(rc, rh);
	ck_assert(rc->is_data_reloc && rh->is_data_reloc);
	ck_assert(rh->is_hot && !rc->is_hot);
	ck_assert_uint_eq(rh->used, 16 * KiB);
	ck_assert_uint_eq(fs->rstats.data_bytes, 1 * MiB + 16 * KiB);
	expect(fs, "/a", 0, 1 * MiB, 1);
	expect(fs, "/h", 0, 16 * KiB, 4);
	expect_clean(fs);
	fs = zcow_test_remount(fs, &mo);
	ck_assert_uint_eq(fs->reloc_hot_bg, 0);
	expect(fs, "/h", 0, 16 * KiB, 4);
	expect(fs, "/a", 0, 1 * MiB, 1);
	expect_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/* hotcold=on needs a hot and a cold slot: refused with one. */
START_TEST(test_reclaim_hotcold_needs_two_slots)
{
	struct zcow_mount_opts mo = { 0 };
	struct zsim_config cfg = { .nr_zones = 32, .zone_size = ZS,
				   .seed = 5, .max_append = 64 * KiB };
	struct zcow_mkfs_opts mko = { .seed = 3 };
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mount_opts_parse("hotcold=age", &mo), 0);
	ck_assert_int_eq(mo.hotcold, ZCOW_HOTCOLD_AGE);
	ck_assert_int_eq(zcow_mount_opts_parse("hotcold=off", &mo), 0);
	ck_assert_int_eq(mo.hotcold, ZCOW_HOTCOLD_OFF);
	ck_assert_int_eq(zcow_mount_opts_parse("hotcold=frequency", &mo), 0);
	ck_assert_int_eq(mo.hotcold, ZCOW_HOTCOLD_FREQUENCY);
	ck_assert_int_eq(zcow_mount_opts_parse("hotcold=on,data_zones=1",
					       &mo), 0);
	ck_assert_int_eq(mo.hotcold, ZCOW_HOTCOLD_FREQUENCY);
	ck_assert_int_eq(zcow_mount_opts_parse("hotcold=maybe", &mo),
			 -EINVAL);
	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mko), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), -EINVAL);
	mo.data_zones = 2;
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	ck_assert(fs->files->hotcold);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

Suite *reclaim_suite(void)
{
	Suite *s = suite_create("reclaim_suite");
	TCase *tc = tcase_create("reclaim");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reclaim_relocates_data_group);
	tcase_add_test(tc, test_reclaim_hotcold_frequency_places_often_written_ranges_hot);
	tcase_add_test(tc, test_reclaim_hotcold_frequency_decays);
	tcase_add_test(tc, test_reclaim_hotcold_frequency_relocates_hot_survivors_hot);
	tcase_add_test(tc, test_reclaim_relocates_snapshot_shared_extents);
	tcase_add_test(tc, test_reclaim_relocates_extents_of_shared_leaves);
	tcase_add_test(tc, test_reclaim_relocates_metadata_group_shared_with_a_snapshot);
	tcase_add_test(tc, test_reclaim_relocates_metadata_group);
	tcase_add_test(tc, test_reclaim_hotcold_greedy_counts_cold_free_space_twice);
	tcase_add_loop_test(tc, test_reclaim_policy_order, 0, 3);
	tcase_add_loop_test(tc, test_reclaim_sustained_overwrite, 0, 8);
	tcase_add_loop_test(tc, test_reclaim_background_cleaner, 0, 2);
	tcase_add_test(tc, test_reclaim_cleaner_option);
	tcase_add_test(tc, test_reclaim_data_space_leaves_out_the_cleaners_pool);
	tcase_add_test(tc, test_reclaim_holds_a_zone_for_relocation);
	tcase_add_test(
		tc, test_reclaim_holds_a_zone_past_a_partly_filled_relocation_group);
	tcase_add_test(tc, test_reclaim_gives_the_zone_back_when_room_is_enough);
	tcase_add_test(tc,
		       test_reclaim_counts_groups_moved_when_the_last_finds_no_room);
	tcase_add_test(tc, test_reclaim_takes_open_groups_no_slot_fills);
	tcase_add_test(tc, test_reclaim_balance_usage);
	tcase_add_test(tc, test_reclaim_high_watermark);
	tcase_add_test(tc, test_reclaim_system_groups_removed);
	tcase_add_test(tc, test_reclaim_hotcold_places_by_age);
	tcase_add_test(tc, test_reclaim_hotcold_needs_two_slots);
	tcase_add_test(tc, test_reclaim_hotcold_clocks_bounded);
	tcase_add_test(tc, test_reclaim_hotcold_counts_an_overwrite_once);
	suite_add_tcase(s, tc);
	return s;
}
