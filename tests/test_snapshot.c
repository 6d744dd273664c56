// SPDX-License-Identifier: MIT
/*
 * Snapshots share tree blocks as btrfs's do (core/snapshot.c,
 * core/backref.c): the snapshot's root is a copy of the source's, every
 * node below is shared and holds a reference of each tree; the first
 * write through a shared node copies it and turns the old one
 * FULL_BACKREF; the checker (core/check.c) holds every backref to the
 * pointers it finds.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "tests.h"
#include "zcow.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define NR_FILES 300

static void print_problem(void *arg, const char *msg)
{
	char *last = arg;

	fprintf(stderr, "check: %s\n", msg);
	if (last)
		snprintf(last, 256, "%s", msg);
}

static struct zcow_fs *new_fs(void)
{
	struct zsim_config cfg = { .nr_zones = 48, .zone_size = 4 * MiB,
				   .seed = 11 };

	return zcow_test_sim_fs(&cfg, 2, NULL);
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131 + i * 7);
}

/* NR_FILES files of 4 KiB, file i filled with seed i: a fs tree of
 * several leaves under an internal root. */
static void make_files(struct zcow_fs *fs)
{
	uint8_t buf[4096];
	char path[32];
	int i;

	for (i = 0; i < NR_FILES; i++) {
		snprintf(path, sizeof(path), "/f%03d", i);
		fill(buf, sizeof(buf), (unsigned int)i);
		zcow_test_put(fs, path, buf, sizeof(buf));
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
}

static void expect_file(struct zcow_fs *fs, const char *path,
			unsigned int seed)
{
	uint8_t buf[4096];

	fill(buf, sizeof(buf), seed);
	zcow_test_expect(fs, path, buf, sizeof(buf));
}

/* The children of the node at @bytenr, read from the device. */
static uint32_t children(struct zcow_fs *fs, uint64_t bytenr, uint64_t *v,
			 uint32_t max)
{
	uint8_t *buf = malloc(fs->nodesize);
	uint32_t nr, i;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(fs->store.read(fs, bytenr, buf), 0);
	ck_assert_uint_gt(buf[0x64], 0);		/* not a leaf */
	nr = (uint32_t)buf[0x60] | (uint32_t)buf[0x61] << 8;
	ck_assert_uint_le(nr, max);
	for (i = 0; i < nr; i++) {
		const uint8_t *p = buf + 101 + i * 33 + 17;
		uint64_t b = 0;
		int j;

		for (j = 7; j >= 0; j--)
			b = b << 8 | p[j];
		v[i] = b;
	}
	free(buf);
	return nr;
}

/* The inline references of tree block @bytenr at @level. */
static uint32_t block_refs(struct zcow_fs *fs, uint64_t bytenr, int level,
			   struct zcow_eref *v, uint64_t *flags)
{
	struct zcow_key k = { bytenr, ZCOW_METADATA_ITEM_KEY,
			      (uint64_t)level };
	uint8_t item[1024];
	uint32_t size, nr;
	uint64_t refs;

	ck_assert_int_eq(zcow_tree_search(&fs->extent_tree, &k, item,
					  sizeof(item), &size), 0);
	ck_assert_int_eq(zcow_extent_item_parse(item, size, v,
						ZCOW_MAX_INLINE_REFS, &nr), 0);
	ck_assert_int_eq(zcow_tree_block_info(fs, bytenr, level, &refs,
					      flags), 0);
	ck_assert_uint_eq(refs, nr);
	return nr;
}

/* Items of key type @type in @t. */
static uint64_t nr_items_of(struct zcow_tree *t, uint8_t type)
{
	struct zcow_key start = { 0, 0, 0 }, k;
	struct zcow_tree_iter it;
	uint64_t nr = 0;

	zcow_tree_iter_init(&it, t, &start);
	while (!zcow_tree_iter_next(&it, &k, NULL, NULL))
		nr += k.type == type;
	return nr;
}

static uint64_t nr_tree_blocks(struct zcow_fs *fs)
{
	return nr_items_of(&fs->extent_tree, ZCOW_METADATA_ITEM_KEY);
}

/*
 * A snapshot adds one node, its root; every child of the source's root
 * is shared, with one TREE_BLOCK_REF of each tree.  Overwriting a file
 * copies its leaf: the old one, still the snapshot's, becomes
 * FULL_BACKREF with the snapshot's reference only, its file extents
 * known by its address.  Both trees read back exactly, also after a
 * remount, and the checker finds every backref where it belongs.
 */
START_TEST(test_snapshot_shares_tree_blocks_and_copies_on_write)
{
	struct zcow_fs *fs = new_fs();
	uint64_t fs_kids[512], snap_kids[512], id, root, sroot, flags;
	uint64_t before, nodes, leaf = 0;
	struct zcow_eref refs[ZCOW_MAX_INLINE_REFS];
	uint32_t nr, nr_snap, i, j, nr_shared = 0;
	uint8_t buf[4096];
	int level, slevel;

	make_files(fs);
	nodes = (uint64_t)zcow_tree_nr_nodes(&fs->fs_tree);
	ck_assert_uint_ge(nodes, 4);
	before = nr_tree_blocks(fs);
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	ck_assert_uint_eq(id, 256);
	/* Its root item: read-only, and of the current format (inode flags
	 * ROOT_ITEM_INIT: else the kernel clears the flags). */
	{
		uint8_t ri[ZCOW_ROOT_ITEM_SIZE];
		struct zcow_key rk;

		ck_assert_int_eq(zcow_root_item_find(&fs->root_tree, id, &rk,
						     ri, NULL), 0);
		ck_assert_uint_eq(ri[208], ZCOW_ROOT_SUBVOL_RDONLY);
		/* keyed by its transaction, its otransid */
		ck_assert_uint_eq(rk.offset, ri[303] | (uint64_t)ri[304] << 8);
		ck_assert_uint_gt(rk.offset, 0);
		ck_assert_uint_eq(ri[64 + 3], 0x80);	/* 1 << 31 */
	}
	/* The snapshot's root, and the leaves its entry in "/" changed
	 * (copied out of the sharing, in a tree of more nodes than
	 * that): the other trees are copied, not grown. */
	ck_assert_uint_ge(nodes, 8);
	ck_assert_uint_ge(nr_tree_blocks(fs), before + 1);
	ck_assert_uint_le(nr_tree_blocks(fs), before + 3);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);

	zcow_tree_root(&fs->fs_tree, &root, &level, NULL);
	zcow_tree_root(fs->files->snaps[0].tree, &sroot, &slevel, NULL);
	ck_assert_uint_ne(root, sroot);
	ck_assert_int_eq(level, slevel);
	ck_assert_int_ge(level, 1);
	nr = children(fs, root, fs_kids, 512);
	nr_snap = children(fs, sroot, snap_kids, 512);
	ck_assert_uint_eq(nr, nr_snap);
	for (i = 0; i < nr_snap; i++) {
		bool is_fs = false;

		for (j = 0; j < nr; j++)
			is_fs |= fs_kids[j] == snap_kids[i];
		if (!is_fs)
			continue;	/* copied since by a change of tree 5 */
		ck_assert_uint_eq(block_refs(fs, snap_kids[i], level - 1, refs,
					     &flags), 2);
		ck_assert_uint_eq(flags & ZCOW_BLOCK_FLAG_FULL_BACKREF, 0);
		/* TREE_BLOCK_REFs in descending root order */
		ck_assert_uint_eq(refs[0].type, ZCOW_TREE_BLOCK_REF_KEY);
		ck_assert_uint_eq(refs[0].root, id);
		ck_assert_uint_eq(refs[1].type, ZCOW_TREE_BLOCK_REF_KEY);
		ck_assert_uint_eq(refs[1].root, ZCOW_FS_TREE_OBJECTID);
		nr_shared++;
	}
	ck_assert_uint_ge(nr_shared, nr - 2);	/* the entry's leaves */

	/* Overwrite f150 in the fs tree. */
	fill(buf, sizeof(buf), 1000);
	zcow_test_put(fs, "/f150", buf, sizeof(buf));
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_tree_root(&fs->fs_tree, &root, &level, NULL);
	nr = children(fs, root, fs_kids, 512);
	for (i = 0; i < nr_snap && !leaf; i++) {
		bool is_fs = false;

		for (j = 0; j < nr; j++)
			is_fs |= fs_kids[j] == snap_kids[i];
		if (!is_fs && level == 1 &&
		    block_refs(fs, snap_kids[i], 0, refs, &flags) == 1 &&
		    (flags & ZCOW_BLOCK_FLAG_FULL_BACKREF))
			leaf = snap_kids[i];
	}
	ck_assert_uint_ne(leaf, 0);
	ck_assert_uint_eq(refs[0].type, ZCOW_TREE_BLOCK_REF_KEY);
	ck_assert_uint_eq(refs[0].root, id);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);

	zcow_test_expect(fs, "/f150", buf, sizeof(buf));
	expect_file(fs, "/s/f150", 150);
	expect_file(fs, "/s/f151", 151);
	expect_file(fs, "/f151", 151);

	{
		struct zdev *dev = fs->dev;

		ck_assert_int_eq(zcow_unmount(fs), 0);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	}
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	zcow_test_expect(fs, "/f150", buf, sizeof(buf));
	expect_file(fs, "/s/f150", 150);
	expect_file(fs, "/f299", 299);
	expect_file(fs, "/s/f000", 0);
	zcow_test_close_fs(fs);
}
END_TEST

/* The checker holds the backrefs of shared blocks to the pointers: a
 * snapshot's TREE_BLOCK_REF dropped from a shared node is reported. */
START_TEST(test_snapshot_check_reports_a_missing_shared_backref)
{
	struct zcow_fs *fs = new_fs();
	uint64_t kids[512], id, sroot, flags;
	struct zcow_eref refs[ZCOW_MAX_INLINE_REFS];
	char last[256] = "";
	int level;

	make_files(fs);
	ck_assert_int_eq(zcow_snapshot(fs, "s", &id), 0);
	zcow_tree_root(fs->files->snaps[0].tree, &sroot, &level, NULL);
	ck_assert_uint_ge(children(fs, sroot, kids, 512), 2);
	ck_assert_uint_eq(block_refs(fs, kids[1], level - 1, refs, &flags),
			  2);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_tree_block_ref(fs, kids[1], level - 1, id, 0,
					     +1), -EUCLEAN);
	pthread_mutex_unlock(&fs->files->lock);
	{
		struct zcow_key k = { kids[1], ZCOW_METADATA_ITEM_KEY,
				      (uint64_t)(level - 1) };
		uint8_t item[64];
		uint32_t size;

		ck_assert_int_eq(zcow_tree_search(&fs->extent_tree, &k, item,
						  sizeof(item), &size), 0);
		ck_assert_uint_eq(size, 24 + 2 * 9);
		item[0] = 1;			/* refs 1 */
		ck_assert_int_eq(zcow_tree_update(&fs->extent_tree, &k, item,
						  24 + 9), 0);
	}
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_gt(zcow_check(fs, print_problem, last), 0);
	ck_assert_msg(strstr(last, "tree block backref of root 5 missing"),
		      "last problem: %s", last);
	zcow_test_close_fs(fs);
}
END_TEST

/* The file layer's checks reach a snapshot whose nodes the fs tree
 * shares (read through a tree that accepts nodes of any subvolume): an
 * inode ref removed from a snapshot is reported. */
START_TEST(test_snapshot_check_reads_the_shared_snapshot_tree)
{
	struct zcow_fs *fs = new_fs();
	struct zcow_tree *t;
	struct zcow_stat st;
	struct zcow_key k;
	char last[256] = "";

	make_files(fs);
	ck_assert_int_eq(zcow_snapshot(fs, "s", NULL), 0);
	ck_assert_int_eq(zcow_stat(fs, "/f200", &st), 0);
	t = fs->files->snaps[0].tree;
	ck_assert_int_ge(t->root_level, 1);
	k.objectid = st.ino;
	k.type = ZCOW_INODE_REF_KEY;
	k.offset = ZCOW_ROOT_DIR_INO;
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_tree_delete(t, &k), 0);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_gt(zcow_check(fs, print_problem, last), 0);
	ck_assert_msg(strstr(last, "root 256"), "last problem: %s", last);
	zcow_test_close_fs(fs);
}
END_TEST

/* Entries of the uuid tree. */
static uint64_t nr_uuids(struct zcow_fs *fs)
{
	return nr_items_of(&fs->uuid_tree, ZCOW_UUID_KEY_SUBVOL);
}

/* Bytes of data extents (their items), and tree blocks. */
static void count_extents(struct zcow_fs *fs, uint64_t *data_bytes,
			  uint64_t *blocks)
{
	struct zcow_key start = { 0, 0, 0 }, k;
	struct zcow_tree_iter it;

	*data_bytes = *blocks = 0;
	zcow_tree_iter_init(&it, &fs->extent_tree, &start);
	while (!zcow_tree_iter_next(&it, &k, NULL, NULL)) {
		if (k.type == ZCOW_EXTENT_ITEM_KEY)
			*data_bytes += k.offset;
		*blocks += k.type == ZCOW_METADATA_ITEM_KEY;
	}
}

/*
 * Deleting snapshots: a node or data extent only the deleted snapshot
 * references goes, one shared with another tree keeps that tree's
 * references.  The other snapshot and the fs tree read back exactly,
 * before and after a remount, the checker is clean, and with every
 * snapshot gone the data extents are exactly the fs tree's again.
 */
START_TEST(test_snapshot_delete_frees_what_only_it_references)
{
	struct zcow_fs *fs = new_fs();
	uint64_t data0, blocks0, data, blocks, id1, id2;
	uint8_t buf[4096];
	char path[32];
	int i;

	make_files(fs);
	count_extents(fs, &data0, &blocks0);
	ck_assert_uint_eq(data0, NR_FILES * 4096ULL);
	ck_assert_int_eq(zcow_snapshot(fs, "s1", &id1), 0);
	for (i = 0; i < NR_FILES; i += 2) {	/* half of them, again */
		snprintf(path, sizeof(path), "/f%03d", i);
		fill(buf, sizeof(buf), (unsigned int)i + 1000);
		zcow_test_put(fs, path, buf, sizeof(buf));
	}
	ck_assert_int_eq(zcow_snapshot(fs, "s2", &id2), 0);
	for (i = 0; i < NR_FILES; i += 3) {
		snprintf(path, sizeof(path), "/f%03d", i);
		fill(buf, sizeof(buf), (unsigned int)i + 2000);
		zcow_test_put(fs, path, buf, sizeof(buf));
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);

	ck_assert_uint_eq(nr_uuids(fs), 3);	/* 5, s1, s2 */
	ck_assert_int_eq(zcow_subvol_delete(fs, "nope"), -ENOENT);
	ck_assert_int_eq(zcow_subvol_delete(fs, "s1"), 0);
	ck_assert_int_eq(zcow_subvol_delete(fs, "s1"), -ENOENT);
	ck_assert_uint_eq(nr_uuids(fs), 2);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	/* s1 alone held the first versions of the even files. */
	count_extents(fs, &data, &blocks);
	/* The fs tree's 300 files, and what s2 holds beyond them: the
	 * second versions of the 50 files i % 6 == 0 and the first of the
	 * 50 odd files i % 3 == 0, all rewritten since. */
	ck_assert_uint_eq(data, (NR_FILES + 50 + 50) * 4096ULL);
	for (i = 0; i < NR_FILES; i++) {
		snprintf(path, sizeof(path), "/s2/f%03d", i);
		expect_file(fs, path, (unsigned int)i + (i % 2 ? 0 : 1000));
		snprintf(path, sizeof(path), "/f%03d", i);
		expect_file(fs, path,
			    (unsigned int)i + (i % 3 == 0 ? 2000 :
					       i % 2 ? 0 : 1000));
	}
	{
		struct zdev *dev = fs->dev;

		ck_assert_int_eq(zcow_unmount(fs), 0);
		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	}
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	expect_file(fs, "/s2/f002", 1002);
	ck_assert_int_eq(zcow_subvol_delete(fs, "s2"), 0);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	count_extents(fs, &data, &blocks);
	ck_assert_uint_eq(data, data0);
	ck_assert_uint_le(blocks, blocks0 + 2);
	ck_assert_uint_eq(nr_uuids(fs), 1);
	expect_file(fs, "/f003", 2003);
	expect_file(fs, "/f004", 1004);
	expect_file(fs, "/f005", 5);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A device filled while a snapshot holds the old versions: every file
 * rewritten (its leaves copied out of the sharing) until the device is
 * full.  The write that does not fit fails with -ENOSPC before it
 * changes anything: the file system stays out of its error state, the
 * checker is clean, both trees read back after a remount, and deleting
 * the snapshot gives room again.
 */
START_TEST(test_snapshot_full_device_gives_enospc_and_stays_consistent)
{
	struct zsim_config cfg = { .nr_zones = 16, .zone_size = 4 * MiB,
				   .zone_capacity = 1 * MiB, .seed = 5 };
	struct zcow_mkfs_opts mo = { .seed = 2, .nodesize = 4096 };
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	uint8_t buf[4096];
	char path[32];
	int i, round, err = 0;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < 120; i++) {
		snprintf(path, sizeof(path), "/f%03d", i);
		fill(buf, sizeof(buf), (unsigned int)i);
		zcow_test_put(fs, path, buf, sizeof(buf));
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_snapshot(fs, "s", NULL), 0);
	for (round = 1; round < 1000 && !err; round++) {
		for (i = 0; i < 120 && !err; i++) {
			struct zcow_file *f;
			int64_t n;

			snprintf(path, sizeof(path), "/f%03d", i);
			fill(buf, sizeof(buf), (unsigned int)(round * 1000 + i));
			err = zcow_open(fs, path, O_RDWR, &f);
			if (err)
				break;
			n = zcow_pwrite(f, buf, sizeof(buf), 0);
			err = n < 0 ? (int)n : 0;
			zcow_close(f);
			/* and a new file: the device fills */
			snprintf(path, sizeof(path), "/n%d-%03d", round, i);
			if (!err)
				err = zcow_open(fs, path, O_RDWR | O_CREAT, &f);
			if (err)
				break;
			n = zcow_pwrite(f, buf, sizeof(buf), 0);
			err = n < 0 ? (int)n : 0;
			zcow_close(f);
		}
		if (!err)
			err = zcow_sync(fs);
	}
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_eq(zcow_fs_error(fs), 0);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	expect_file(fs, "/s/f007", 7);
	{
		struct zdev *d = fs->dev;

		ck_assert_int_eq(zcow_unmount(fs), 0);
		ck_assert_int_eq(zcow_mount(d, NULL, &fs), 0);
	}
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	expect_file(fs, "/s/f119", 119);
	ck_assert_int_eq(zcow_subvol_delete(fs, "s"), 0);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A writable snapshot (btrfs subvolume snapshot without -r): its files
 * are written, created, renamed inside it and removed; renames across
 * subvolumes fail with -EXDEV; an fsync there commits; the top level
 * keeps its own versions; new inode numbers stay unique per tree after a
 * remount; both checkers are clean; its delete gives the space back.
 */
START_TEST(test_snapshot_writable_takes_changes_of_its_own)
{
	struct zcow_fs *fs = new_fs();
	uint64_t data0, blocks0, data, blocks, gen, id;
	struct zcow_file *f;
	struct zcow_stat st, st2;
	uint8_t buf[4096];

	make_files(fs);
	count_extents(fs, &data0, &blocks0);
	ck_assert_int_eq(zcow_subvol_snapshot(fs, "w", false, &id), 0);
	fill(buf, sizeof(buf), 5000);
	zcow_test_put(fs, "/w/f010", buf, sizeof(buf));
	zcow_test_put(fs, "/w/new", buf, 100);
	ck_assert_int_eq(zcow_mkdir(fs, "/w/dnew"), 0);
	zcow_test_put(fs, "/w/dnew/g", buf, 4096);
	ck_assert_int_eq(zcow_unlink(fs, "/w/f020"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/w/f030", "/w/dnew/f030"), 0);
	ck_assert_int_eq(zcow_rename(fs, "/w/f031", "/f031x"), -EXDEV);
	ck_assert_int_eq(zcow_rename(fs, "/f032", "/w/x"), -EXDEV);
	/* fsync there: a commit (no tree-log for it) */
	gen = zcow_fs_generation(fs);
	ck_assert_int_eq(zcow_open(fs, "/w/new", O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_fsync(f), 0);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_uint_gt(zcow_fs_generation(fs), gen);
	/* the top level keeps its own */
	expect_file(fs, "/f010", 10);
	expect_file(fs, "/f020", 20);
	ck_assert_int_eq(zcow_stat(fs, "/new", &st), -ENOENT);
	zcow_test_expect(fs, "/w/f010", buf, sizeof(buf));
	expect_file(fs, "/w/dnew/f030", 30);
	ck_assert_int_eq(zcow_stat(fs, "/w/f020", &st), -ENOENT);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	{
		struct zdev *d = fs->dev;

		ck_assert_int_eq(zcow_unmount(fs), 0);
		ck_assert_int_eq(zcow_mount(d, NULL, &fs), 0);
	}
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	zcow_test_expect(fs, "/w/dnew/g", buf, 4096);
	/* new numbers after the remount: above the snapshot's too */
	zcow_test_put(fs, "/w/after", buf, 10);
	zcow_test_put(fs, "/after", buf, 10);
	ck_assert_int_eq(zcow_stat(fs, "/w/after", &st), 0);
	ck_assert_int_eq(zcow_stat(fs, "/w/dnew/g", &st2), 0);
	ck_assert_uint_gt(st.ino, st2.ino);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	ck_assert_int_eq(zcow_subvol_delete(fs, "w"), 0);
	ck_assert_int_eq(zcow_check(fs, print_problem, NULL), 0);
	count_extents(fs, &data, &blocks);
	ck_assert_uint_eq(data, data0 + 4096);	/* and /after */
	zcow_test_close_fs(fs);
}
END_TEST

Suite *snapshot_suite(void)
{
	Suite *s = suite_create("snapshot_suite");
	TCase *tc = tcase_create("share");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_snapshot_shares_tree_blocks_and_copies_on_write);
	tcase_add_test(tc, test_snapshot_check_reports_a_missing_shared_backref);
	tcase_add_test(tc, test_snapshot_delete_frees_what_only_it_references);
	tcase_add_test(tc, test_snapshot_check_reads_the_shared_snapshot_tree);
	tcase_add_test(tc, test_snapshot_full_device_gives_enospc_and_stays_consistent);
	tcase_add_test(tc, test_snapshot_writable_takes_changes_of_its_own);
	suite_add_tcase(s, tc);
	return s;
}
