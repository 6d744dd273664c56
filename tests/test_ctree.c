// SPDX-License-Identifier: MIT
/*
 * The copy-on-write B-tree against an in-memory node store defined here:
 * node bytes as btrfs lays them out, search/insert/update/delete and their
 * errnos, splits and merges at 4 KiB and 16 KiB nodes, copy-on-write with
 * the old root still readable, reload from the store alone, corruption
 * refused with -EUCLEAN, and a seeded random run against a model.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "ctree.h"
#include "prng.h"
#include "tests.h"

#define STORE_BASE     (1ULL << 20) /* first address handed out (never 0) */
#define NODE_UNWRITTEN 0	    /* mem->state: allocated, not yet written */
#define NODE_WRITTEN   1
#define NODE_FREED     2

/* The in-memory store: node i lives at STORE_BASE + i * nodesize. */
struct mem {
	struct zcow_node_store store;
	uint8_t *bufs;
	uint8_t *state;
	uint64_t nr_nodes; /* handed out */
	uint64_t cap;
	uint64_t nr_alloc;
	uint64_t nr_free;
	uint64_t nr_free_cur_gen; /* freed with gen == cur_gen */
	uint64_t cur_gen;
	uint64_t last_written; /* writeback order check */
	int fail_alloc;	       /* nonzero: alloc returns it */
};

static uint64_t idx_of(struct mem *m, uint64_t bytenr)
{
	return (bytenr - STORE_BASE) / m->store.nodesize;
}

static uint8_t *buf_of(struct mem *m, uint64_t bytenr)
{
	return m->bufs + idx_of(m, bytenr) * m->store.nodesize;
}

static int mem_alloc(void *arg, uint64_t owner, int level, uint64_t *bytenr_ret)
{
	struct mem *m = arg;

	(void)owner;
	(void)level;
	if (m->fail_alloc)
		return m->fail_alloc;
	if (m->nr_nodes == m->cap) {
		uint64_t cap = m->cap ? m->cap * 2 : 64;

		m->bufs = realloc(m->bufs, cap * m->store.nodesize);
		m->state = realloc(m->state, cap);
		ck_assert(m->bufs && m->state);
		m->cap = cap;
	}
	memset(m->bufs + m->nr_nodes * m->store.nodesize, 0, m->store.nodesize);
	m->state[m->nr_nodes] = NODE_UNWRITTEN;
	*bytenr_ret = STORE_BASE + m->nr_nodes * m->store.nodesize;
	m->nr_nodes++;
	m->nr_alloc++;
	return 0;
}

static int mem_read(void *arg, uint64_t bytenr, void *buf)
{
	struct mem *m = arg;

	if (bytenr < STORE_BASE || idx_of(m, bytenr) >= m->nr_nodes ||
	    (bytenr - STORE_BASE) % m->store.nodesize)
		return -EIO;
	memcpy(buf, buf_of(m, bytenr), m->store.nodesize);
	return 0;
}

static void mem_free(void *arg, uint64_t bytenr, uint64_t gen)
{
	struct mem *m = arg;

	ck_assert_uint_lt(idx_of(m, bytenr), m->nr_nodes);
	m->nr_free++;
	if (gen == m->cur_gen)
		m->nr_free_cur_gen++;
	/* the old copy stays readable: snapshots may still point at it */
}

static int mem_write(void *arg, uint64_t bytenr, const void *buf)
{
	struct mem *m = arg;

	ck_assert_uint_gt(bytenr, m->last_written);
	m->last_written = bytenr;
	memcpy(buf_of(m, bytenr), buf, m->store.nodesize);
	m->state[idx_of(m, bytenr)] = NODE_WRITTEN;
	return 0;
}

static struct mem *mem_new(uint32_t nodesize)
{
	struct mem *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->store.alloc = mem_alloc;
	m->store.read = mem_read;
	m->store.free = mem_free;
	m->store.arg = m;
	m->store.nodesize = nodesize;
	memcpy(m->store.fsid, "zcow-fsid-012345", 16);
	memcpy(m->store.chunk_tree_uuid, "zcow-chunk-uuid!", 16);
	m->cur_gen = 1;
	return m;
}

static void mem_destroy(struct mem *m)
{
	free(m->bufs);
	free(m->state);
	free(m);
}

/* Commit: write every dirty node, mark clean, start the next generation. */
static void commit(struct zcow_tree *t, struct mem *m)
{
	m->last_written = 0;
	ck_assert_int_eq(zcow_tree_for_each_dirty(t, mem_write, m), 0);
	zcow_tree_mark_clean(t);
	m->cur_gen++;
	ck_assert_int_eq(zcow_tree_set_transid(t, m->cur_gen), 0);
}

/* Reopen @t from the store alone, at its current root. */
static void reload(struct zcow_tree *t, struct mem *m)
{
	uint64_t bytenr, gen, owner = t->owner;
	int level;

	zcow_tree_root(t, &bytenr, &level, &gen);
	zcow_tree_release(t);
	ck_assert_int_eq(
		zcow_tree_init(t, &m->store, owner, bytenr, level, gen), 0);
	ck_assert_int_eq(zcow_tree_set_transid(t, m->cur_gen), 0);
}

/* Little-endian fields of a node image, unaligned (the host is LE). */
#define U64(p) (((struct { uint64_t v; } __attribute__((packed)) *)(p))->v)
#define U32(p) (((struct { uint32_t v; } __attribute__((packed)) *)(p))->v)

/* A key as a pointer to a compound literal. */
#define KEY(o, t, f) (&(struct zcow_key){ (o), (t), (f) })

static struct zcow_key mkkey(uint64_t objectid, uint8_t type, uint64_t off)
{
	struct zcow_key k = { objectid, type, off };

	return k;
}

/* Item data of key number @id in version @ver: a recognisable pattern. */
static void fill(uint8_t *buf, uint32_t len, uint64_t id, uint32_t ver)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		buf[j] = (uint8_t)(id * 31 + ver * 17 + j);
}

static struct zcow_key seq_key(uint64_t i)
{
	return mkkey(256 + i / 3,
		     (uint8_t[]){ ZCOW_INODE_ITEM_KEY, ZCOW_INODE_REF_KEY,
				  ZCOW_EXTENT_DATA_KEY }[i % 3],
		     i * 4096);
}

static void insert_seq(struct zcow_tree *t, uint64_t i, uint32_t len)
{
	uint8_t buf[4096];
	struct zcow_key k = seq_key(i);

	fill(buf, len, i, 0);
	ck_assert_int_eq(zcow_tree_insert(t, &k, buf, len), 0);
}

static void check_seq(struct zcow_tree *t, uint64_t i, uint32_t len)
{
	uint8_t buf[4096], want[4096];
	struct zcow_key k = seq_key(i);
	uint32_t size = 0;

	fill(want, len, i, 0);
	ck_assert_int_eq(zcow_tree_search(t, &k, buf, sizeof(buf), &size), 0);
	ck_assert_uint_eq(size, len);
	ck_assert_mem_eq(buf, want, len);
}

START_TEST(test_ctree_leaf_bytes_match_btrfs_layout)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	struct zcow_key k1 = mkkey(256, ZCOW_INODE_ITEM_KEY, 0);
	struct zcow_key k2 = mkkey(256, ZCOW_DIR_ITEM_KEY, 0x1122334455667788);
	uint64_t root, gen;
	uint8_t *b, zero[28] = { 0 };
	uint32_t crc;
	int level;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 6),
			 0);
	m->cur_gen = 7;
	ck_assert_int_eq(zcow_tree_insert(&t, &k2, "world!", 6), 0);
	ck_assert_int_eq(zcow_tree_insert(&t, &k1, "hello", 5), 0);
	zcow_tree_root(&t, &root, &level, &gen);
	ck_assert_uint_eq(root, STORE_BASE);
	ck_assert_int_eq(level, 0);
	ck_assert_uint_eq(gen, 7);
	commit(&t, m);
	b = buf_of(m, root);

	/* struct btrfs_header */
	crc = zcow_crc32c(b + 32, 4096 - 32);
	ck_assert_uint_eq(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24,
			  crc);
	ck_assert_mem_eq(b + 4, zero, 28);
	ck_assert_mem_eq(b + 32, "zcow-fsid-012345", 16);
	ck_assert_uint_eq(U64(b + 48), STORE_BASE); /* LE host */
	ck_assert_uint_eq(U64(b + 56), (1ULL << 56) | 1);
	ck_assert_mem_eq(b + 64, "zcow-chunk-uuid!", 16);
	ck_assert_uint_eq(U64(b + 80), 7);
	ck_assert_uint_eq(U64(b + 88), ZCOW_FS_TREE_OBJECTID);
	ck_assert_uint_eq(U32(b + 96), 2);
	ck_assert_uint_eq(b[100], 0);

	/* item 0 at 101: key 17 bytes, offset, size; data at the end */
	ck_assert_uint_eq(U64(b + 101), 256);
	ck_assert_uint_eq(b[109], ZCOW_INODE_ITEM_KEY);
	ck_assert_uint_eq(U64(b + 110), 0);
	ck_assert_uint_eq(U32(b + 118), 4096 - 101 - 5);
	ck_assert_uint_eq(U32(b + 122), 5);
	ck_assert_mem_eq(b + 4096 - 5, "hello", 5);
	/* item 1 at 126, its data right below item 0's */
	ck_assert_uint_eq(b[134], ZCOW_DIR_ITEM_KEY);
	ck_assert_uint_eq(U64(b + 135), 0x1122334455667788ULL);
	ck_assert_uint_eq(U32(b + 143), 4096 - 101 - 11);
	ck_assert_uint_eq(U32(b + 147), 6);
	ck_assert_mem_eq(b + 4096 - 11, "world!", 6);
	ck_assert_int_eq(zcow_node_verify(&m->store, b, root,
					  ZCOW_FS_TREE_OBJECTID, 0, 7),
			 0);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_internal_node_bytes_match_btrfs_layout)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint64_t root, gen, i, child;
	uint8_t *b, *c;
	int level;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < 200; i++)
		insert_seq(&t, i, 40);
	commit(&t, m);
	zcow_tree_root(&t, &root, &level, &gen);
	ck_assert_int_eq(level, 1);
	b = buf_of(m, root);
	ck_assert_uint_eq(b[100], 1);
	ck_assert_uint_ge(U32(b + 96), 2);
	/* key ptr 1 at 101 + 33: key, blockptr, generation */
	child = U64(b + 101 + 33 + 17);
	ck_assert_uint_eq(U64(b + 101 + 33 + 25), gen);
	c = buf_of(m, child);
	ck_assert_mem_eq(b + 101 + 33, c + 101, 17); /* = child's key 0 */
	ck_assert_uint_eq(c[100], 0);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_insert_search_delete_one_item)
{
	struct mem *m = mem_new(16384);
	struct zcow_tree t;
	struct zcow_key k = mkkey(5, ZCOW_ROOT_ITEM_KEY, 0);
	char buf[16] = { 0 };
	uint32_t size = 0;
	uint64_t root;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_ROOT_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	ck_assert_int_eq(zcow_tree_search(&t, &k, buf, sizeof(buf), &size),
			 -ENOENT);
	ck_assert_int_eq(zcow_tree_delete(&t, &k), -ENOENT);
	ck_assert_int_eq(zcow_tree_insert(&t, &k, "abc", 3), 0);
	ck_assert_int_eq(zcow_tree_search(&t, &k, buf, sizeof(buf), &size), 0);
	ck_assert_uint_eq(size, 3);
	ck_assert_str_eq(buf, "abc");
	/* a short buffer gets a prefix, size tells the truth */
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(zcow_tree_search(&t, &k, buf, 2, &size), 0);
	ck_assert_str_eq(buf, "ab");
	ck_assert_uint_eq(size, 3);
	ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
	ck_assert_int_eq(zcow_tree_search(&t, &k, NULL, 0, NULL), -ENOENT);
	/* the empty tree keeps an empty root leaf, as btrfs does */
	zcow_tree_root(&t, &root, NULL, NULL);
	ck_assert_uint_ne(root, ZCOW_NO_ROOT);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 0);
	commit(&t, m);
	reload(&t, m);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 0);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_refuses_duplicate_missing_and_oversized)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	struct zcow_key k = mkkey(1, 1, 1), k2 = mkkey(1, 1, 2);
	uint32_t max = zcow_leaf_max_item_size(4096), size;
	uint8_t *big = calloc(1, max + 1);
	uint64_t nr_alloc;

	ck_assert_uint_eq(max, 4096 - 101 - 25);
	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	ck_assert_int_eq(zcow_tree_insert(&t, &k, "x", 1), 0);
	ck_assert_int_eq(zcow_tree_insert(&t, &k, "y", 1), -EEXIST);
	ck_assert_int_eq(zcow_tree_update(&t, &k2, "y", 1), -ENOENT);
	ck_assert_int_eq(zcow_tree_insert(&t, &k2, big, max + 1), -EOVERFLOW);
	ck_assert_int_eq(zcow_tree_update(&t, &k, big, max + 1), -EOVERFLOW);
	/* exactly the max fits, in a leaf of its own */
	ck_assert_int_eq(zcow_tree_insert(&t, &k2, big, max), 0);
	ck_assert_int_eq(zcow_tree_search(&t, &k2, NULL, 0, &size), 0);
	ck_assert_uint_eq(size, max);
	/* refusals after a commit CoW nothing */
	commit(&t, m);
	nr_alloc = m->nr_alloc;
	ck_assert_int_eq(zcow_tree_insert(&t, &k, "y", 1), -EEXIST);
	ck_assert_int_eq(zcow_tree_delete(&t, KEY(9, 9, 9)), -ENOENT);
	ck_assert_uint_eq(m->nr_alloc, nr_alloc);
	/* an allocator failure leaves the tree as it was */
	m->fail_alloc = -ENOSPC;
	ck_assert_int_eq(zcow_tree_insert(&t, KEY(0, 0, 0), "z", 1), -ENOSPC);
	m->fail_alloc = 0;
	ck_assert_int_eq(zcow_tree_nr_items(&t), 2);
	free(big);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_iterates_in_key_order_both_ways)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	struct zcow_tree_iter it;
	struct zcow_key k, prev;
	const void *data;
	uint32_t len;
	uint64_t i, n = 3000, seed = 42, nr = 0;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	/* insert in a scrambled order: i * 7919 mod n is a permutation */
	for (i = 0; i < n; i++)
		insert_seq(&t, (i * 7919) % n,
			   (uint32_t)(zcow_rand64(&seed) % 64));
	zcow_tree_iter_init(&it, &t, KEY(0, 0, 0));
	while (!zcow_tree_iter_next(&it, &k, &data, &len)) {
		struct zcow_key want = seq_key(nr);

		ck_assert(!nr || zcow_key_cmp(&prev, &k) < 0);
		ck_assert_int_eq(zcow_key_cmp(&k, &want), 0);
		ck_assert_uint_eq(len, data ? len : 0);
		prev = k;
		nr++;
	}
	ck_assert_uint_eq(nr, n);
	/* from a start key between items; then step back */
	k = seq_key(1000);
	k.offset++;
	zcow_tree_iter_init(&it, &t, &k);
	ck_assert_int_eq(zcow_tree_iter_next(&it, &k, NULL, NULL), 0);
	prev = seq_key(1001);
	ck_assert_int_eq(zcow_key_cmp(&k, &prev), 0);
	ck_assert_int_eq(zcow_tree_iter_prev(&it, &k, NULL, NULL), 0);
	ck_assert_uint_eq(k.offset, seq_key(1000).offset);
	/* backward from the end over everything */
	zcow_tree_iter_init(&it, &t, KEY(UINT64_MAX, 255, UINT64_MAX));
	nr = 0;
	while (!zcow_tree_iter_prev(&it, &k, NULL, NULL)) {
		ck_assert_uint_eq(k.offset, seq_key(n - 1 - nr).offset);
		nr++;
	}
	ck_assert_uint_eq(nr, n);
	/* past the end */
	zcow_tree_iter_init(&it, &t, KEY(UINT64_MAX, 0, 0));
	ck_assert_int_eq(zcow_tree_iter_next(&it, NULL, NULL, NULL), -ENOENT);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_iterator_survives_deleting_what_it_returned)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	struct zcow_tree_iter it;
	struct zcow_key k;
	uint64_t i, n = 2000, nr = 0;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < n; i++)
		insert_seq(&t, i, 30);
	commit(&t, m);
	zcow_tree_iter_init(&it, &t, KEY(0, 0, 0));
	while (!zcow_tree_iter_next(&it, &k, NULL, NULL)) {
		if (nr % 2 == 0)
			ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
		nr++;
	}
	ck_assert_uint_eq(nr, n);
	ck_assert_int_eq(zcow_tree_nr_items(&t), n / 2);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

static const uint32_t nodesizes[] = { 4096, 16384 };

/* Enough items for three levels, then everything back out. */
START_TEST(test_ctree_splits_to_three_levels_and_merges_back_to_empty)
{
	uint32_t nodesize = nodesizes[_i];
	struct mem *m = mem_new(nodesize);
	struct zcow_tree t;
	uint64_t i, n = nodesize == 4096 ? 12000 : 60000, seed = 7;
	uint64_t *perm = malloc(n * sizeof(*perm));
	/* item sizes that give three levels at either node size */
	uint32_t base = nodesize == 4096 ? 16 : 120;
	uint64_t root;
	int level, max_level = 0;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < n; i++)
		insert_seq(&t, i, base + i % 48);
	zcow_tree_root(&t, &root, &level, NULL);
	ck_assert_int_ge(level, 2);
	for (i = 0; i < n; i += 97)
		check_seq(&t, i, base + i % 48);
	commit(&t, m);
	reload(&t, m);
	for (i = 0; i < n; i += 89)
		check_seq(&t, i, base + i % 48);
	ck_assert_int_eq(zcow_tree_nr_items(&t), (int64_t)n);

	/* delete in random order; merges keep the tree shrinking */
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = zcow_rand64(&seed) % (i + 1), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	for (i = 0; i < n; i++) {
		struct zcow_key k = seq_key(perm[i]);

		ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
		if (i == n / 2) {
			commit(&t, m);
			reload(&t, m);
			ck_assert_int_eq(zcow_tree_nr_items(&t),
					 (int64_t)(n - n / 2 - 1));
		}
		zcow_tree_root(&t, NULL, &level, NULL);
		if (i > n / 2)
			ck_assert_int_le(level, max_level);
		max_level = level;
	}
	ck_assert_uint_gt(t.stats.nr_merge, 0);
	ck_assert_int_eq(level, 0);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 0);
	commit(&t, m);
	/* only the root leaf is still referenced */
	ck_assert_uint_eq(m->nr_alloc - m->nr_free, 1);
	reload(&t, m);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 0);
	free(perm);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

/* One step of the test below: look up and rewrite the three probes, so
 * that their remembered paths are used for CoW, fixups and splits (three
 * probes and the item changed between them fit the four hints). */
static void touch_probes(struct zcow_tree *t, const uint64_t *probes,
			 uint32_t *lens, uint64_t step)
{
	uint8_t buf[128];
	uint32_t p;

	for (p = 0; p < 3; p++) {
		uint64_t id = probes[p];
		struct zcow_key k = seq_key(id);

		check_seq(t, id, lens[id]);
		lens[id] = 1 + (lens[id] * 7 + (uint32_t)step) % 120;
		fill(buf, lens[id], id, 0);
		ck_assert_int_eq(zcow_tree_update(t, &k, buf, lens[id]), 0);
	}
}

/*
 * The tree remembers the paths of recent searches; splits, merges and
 * redistributions move nodes under them.  Three far apart items (first,
 * last, one where internal nodes split) are looked up and rewritten
 * between all changes while a three-level tree grows in its middle (leaf
 * and internal splits), an internal node next to the grown one drains
 * (leaf merges, then that full neighbour lends it children) and the rest
 * goes in random order; every answer is checked, also after a reload.
 */
START_TEST(test_ctree_remembered_paths_follow_splits_merges_and_balances)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint64_t i, n = 24000, nr_left = 0, step = 0, seed = 11;
	uint32_t *lens = calloc(n, sizeof(*lens)); /* 0: absent */
	uint64_t *left = malloc(n * sizeof(*left));
	const uint64_t probes[] = { 0, 6000, n - 2 };
	int level;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < n; i += 2) {
		lens[i] = 16 + i % 48;
		insert_seq(&t, i, lens[i]);
	}
	zcow_tree_root(&t, NULL, &level, NULL);
	ck_assert_int_ge(level, 2);
	/* grow [4000, 8000), then drain [8000, 16000), in key order */
	for (i = 4001; i < 8000; i += 2, step++) {
		touch_probes(&t, probes, lens, step);
		lens[i] = 16 + i % 48;
		insert_seq(&t, i, lens[i]);
		if (step % 500 == 0)
			commit(&t, m);
	}
	for (i = 8000; i < 16000; i += 2, step++) {
		struct zcow_key k = seq_key(i);

		touch_probes(&t, probes, lens, step);
		ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
		lens[i] = 0;
		commit(&t, m); /* the next rewrite CoWs the probes' paths */
	}
	ck_assert_uint_gt(t.stats.nr_balance, 0);
	/* the rest in random order, the probes last */
	for (i = 0; i < n; i++)
		if (lens[i] && i != probes[0] && i != probes[1] &&
		    i != probes[2])
			left[nr_left++] = i;
	for (; nr_left; nr_left--, step++) {
		uint64_t j = zcow_rand64(&seed) % nr_left, id = left[j];
		struct zcow_key k = seq_key(id);

		left[j] = left[nr_left - 1];
		touch_probes(&t, probes, lens, step);
		ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
		lens[id] = 0;
		if (step % 500 == 0)
			commit(&t, m);
		if (step % 3001 == 0)
			zcow_tree_drop_clean(&t);
	}
	ck_assert_uint_gt(t.stats.nr_merge, 0);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 3);
	commit(&t, m);
	reload(&t, m);
	for (i = 0; i < 3; i++)
		check_seq(&t, probes[i], lens[probes[i]]);
	free(left);
	free(lens);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

/*
 * A remembered path bounds the keys its leaf takes by its parent's key
 * for it.  When the leaf loses its first item those keys shrink: a key
 * just below its new first item belongs to the leaf before it, and must
 * be found there even right after the shrunken leaf was used again.
 */
START_TEST(test_ctree_remembered_path_follows_its_leaf_losing_its_first_item)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint8_t buf[375]; /* 400 bytes with the item: 9 per 4 KiB leaf */
	uint64_t id;

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	/* appended in order: leaves hold ids 0..8, 9..17, 18..26 */
	for (id = 0; id < 27; id++)
		ck_assert_int_eq(zcow_tree_insert(&t, KEY(256, 1, id * 10), buf,
						  sizeof(buf)),
				 0);
	ck_assert_int_eq(zcow_tree_search(&t, KEY(256, 1, 120), NULL, 0, NULL),
			 0);
	ck_assert_int_eq(zcow_tree_delete(&t, KEY(256, 1, 90)), 0);
	/* the first leaf now takes keys below 100; 95 goes there */
	ck_assert_int_eq(zcow_tree_search(&t, KEY(256, 1, 40), NULL, 0, NULL),
			 0);
	ck_assert_int_eq(zcow_tree_insert(&t, KEY(256, 1, 95), NULL, 0), 0);
	ck_assert_int_eq(zcow_tree_search(&t, KEY(256, 1, 120), NULL, 0, NULL),
			 0);
	ck_assert_int_eq(zcow_tree_search(&t, KEY(256, 1, 95), NULL, 0, NULL),
			 0);
	ck_assert_int_eq(zcow_tree_search(&t, KEY(256, 1, 90), NULL, 0, NULL),
			 -ENOENT);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 27);
	commit(&t, m);
	reload(&t, m);
	ck_assert_int_eq(zcow_tree_search(&t, KEY(256, 1, 95), NULL, 0, NULL),
			 0);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

/*
 * Searches start at a slot interpolated between a node's first and last
 * key.  Offsets spread very unevenly (cubes, then a cluster just below
 * the top of the range) under one objectid and type, and objectids spread
 * unevenly across nodes, must still be found exactly, and keys between
 * them must not be, with an iterator starting right after each.
 */
START_TEST(test_ctree_search_finds_unevenly_spread_keys)
{
	struct mem *m = mem_new(16384);
	struct zcow_tree t;
	struct zcow_tree_iter it;
	struct zcow_key k, got;
	uint64_t i, n = 6000;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_CSUM_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < n; i++) {
		uint64_t off = i < n / 2 ? i * i * i : UINT64_MAX - 2 * (n - i);

		k = mkkey(7, ZCOW_EXTENT_CSUM_KEY, off);
		ck_assert_int_eq(zcow_tree_insert(&t, &k, &i, sizeof(i)), 0);
		k = mkkey(1000 + i * i * i, ZCOW_EXTENT_ITEM_KEY, i);
		ck_assert_int_eq(zcow_tree_insert(&t, &k, &i, sizeof(i)), 0);
	}
	for (i = 0; i < n; i++) {
		uint64_t off = i < n / 2 ? i * i * i : UINT64_MAX - 2 * (n - i);
		uint64_t v = 0;

		k = mkkey(7, ZCOW_EXTENT_CSUM_KEY, off);
		ck_assert_int_eq(zcow_tree_search(&t, &k, &v, sizeof(v), NULL),
				 0);
		ck_assert_uint_eq(v, i);
		k.offset++;
		ck_assert_int_eq(zcow_tree_search(&t, &k, NULL, 0, NULL),
				 i == 0 ? 0 : -ENOENT); /* 0 + 1 is 1 cubed */
		zcow_tree_iter_init(&it, &t, &k);
		ck_assert_int_eq(zcow_tree_iter_next(&it, &got, NULL, NULL), 0);
		if (i + 1 < n)
			ck_assert_uint_eq(
				got.offset,
				i + 1 < n / 2 ? (i + 1) * (i + 1) * (i + 1)
					      : UINT64_MAX - 2 * (n - i - 1));
		k = mkkey(1000 + i * i * i, ZCOW_EXTENT_ITEM_KEY, i);
		ck_assert_int_eq(zcow_tree_search(&t, &k, &v, sizeof(v), NULL),
				 0);
		ck_assert_uint_eq(v, i);
		k.objectid++;
		ck_assert_int_eq(zcow_tree_search(&t, &k, NULL, 0, NULL),
				 -ENOENT);
	}
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_big_item_in_a_full_leaf_splits_it_in_three)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint32_t max = zcow_leaf_max_item_size(4096);
	uint8_t *big = malloc(max);
	uint64_t i, root;
	int level;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < 80; i++)
		insert_seq(&t, 2 * i, 20);
	ck_assert_uint_eq(t.stats.nr_split, 0);
	/* no two-way cut can hold 40 items on one side and the big one */
	fill(big, max, 81, 0);
	ck_assert_int_eq(
		zcow_tree_insert(&t,
				 KEY(seq_key(81).objectid, seq_key(81).type,
				     seq_key(81).offset),
				 big, max),
		0);
	ck_assert_uint_eq(t.stats.nr_split, 2);
	zcow_tree_root(&t, &root, &level, NULL);
	ck_assert_int_eq(level, 1);
	commit(&t, m);
	ck_assert_uint_eq(U32(buf_of(m, root) + 96), 3);
	reload(&t, m);
	ck_assert_int_eq(zcow_tree_nr_items(&t), 81);
	for (i = 0; i < 80; i++)
		check_seq(&t, 2 * i, 20);
	check_seq(&t, 81, max);
	free(big);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

/*
 * A leaf split off by an append holds the one new item; deleting it and
 * appending the next key, again and again (what a commit's delayed
 * references do at the end of the extent tree), must not split and merge
 * the pair every time: the emptied leaf is refilled from its full
 * sibling instead of merged back into it.
 */
START_TEST(test_ctree_append_split_then_delete_does_not_ping_pong)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint64_t i, splits, merges, allocs;
	int level, round;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_EXTENT_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; t.stats.nr_split == 0; i++)
		insert_seq(&t, i, 33);
	/* the full leaf and the new one with the last item only */
	zcow_tree_root(&t, NULL, &level, NULL);
	ck_assert_int_eq(level, 1);
	commit(&t, m);
	splits = t.stats.nr_split;
	merges = t.stats.nr_merge;
	allocs = m->nr_alloc;
	for (round = 0; round < 8; round++, i++) {
		struct zcow_key k = seq_key(i - 1);

		ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
		insert_seq(&t, i, 33);
	}
	ck_assert_uint_eq(t.stats.nr_split, splits);
	ck_assert_uint_eq(t.stats.nr_merge, merges);
	/* one copy of the root and of each leaf in this transaction */
	ck_assert_uint_eq(m->nr_alloc - allocs, 3);
	/* keys 0 .. i-10 and i-1 are left */
	ck_assert_int_eq(zcow_tree_nr_items(&t), (int64_t)i - 8);
	commit(&t, m);
	reload(&t, m);
	ck_assert_int_eq(zcow_tree_nr_items(&t), (int64_t)i - 8);
	check_seq(&t, i - 1, 33);
	for (round = 0; round < (int)i - 9; round++)
		check_seq(&t, (uint64_t)round, 33);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_update_grows_and_shrinks_items)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint8_t buf[4096], want[4096];
	uint32_t size, big = zcow_leaf_max_item_size(4096);
	uint64_t i, n = 400;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < n; i++)
		insert_seq(&t, i, 20);
	commit(&t, m);
	/* grow some to the max (forcing splits), shrink others to 0 */
	for (i = 0; i < n; i += 10) {
		struct zcow_key k = seq_key(i);

		fill(want, big, i, 1);
		ck_assert_int_eq(zcow_tree_update(&t, &k, want, big), 0);
		k = seq_key(i + 1);
		ck_assert_int_eq(zcow_tree_update(&t, &k, NULL, 0), 0);
	}
	commit(&t, m);
	reload(&t, m);
	for (i = 0; i < n; i++) {
		struct zcow_key k = seq_key(i);
		uint32_t len = i % 10 == 0 ? big : i % 10 == 1 ? 0 : 20;

		fill(want, len, i, i % 10 == 0 ? 1 : 0);
		ck_assert_int_eq(
			zcow_tree_search(&t, &k, buf, sizeof(buf), &size), 0);
		ck_assert_uint_eq(size, len);
		ck_assert_mem_eq(buf, want, len);
	}
	ck_assert_int_eq(zcow_tree_nr_items(&t), (int64_t)n);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_cow_moves_the_path_and_keeps_the_old_root)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t, old;
	uint64_t i, n = 10000, root0, gen0, root1, gen1, a0, f0;
	uint8_t buf[64], want[64];
	int level0, level1;
	uint32_t size;
	struct zcow_key k = seq_key(1234);

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < n; i++)
		insert_seq(&t, i, 32);
	commit(&t, m);
	zcow_tree_root(&t, &root0, &level0, &gen0);
	ck_assert_int_ge(level0, 2);

	/* one same-size update: one new node per level, old ones freed */
	a0 = m->nr_alloc;
	f0 = m->nr_free;
	fill(want, 32, 1234, 9);
	ck_assert_int_eq(zcow_tree_update(&t, &k, want, 32), 0);
	ck_assert_uint_eq(m->nr_alloc - a0, (uint64_t)level0 + 1);
	ck_assert_uint_eq(m->nr_free - f0, (uint64_t)level0 + 1);
	ck_assert_uint_eq(t.stats.nr_cow, (uint64_t)level0 + 1);
	zcow_tree_root(&t, &root1, &level1, &gen1);
	ck_assert_uint_ne(root1, root0);
	ck_assert_uint_eq(gen1, gen0 + 1);
	/* a second change in the same generation reuses the dirty path */
	a0 = m->nr_alloc;
	ck_assert_int_eq(zcow_tree_update(&t, &k, want, 32), 0);
	ck_assert_uint_eq(m->nr_alloc, a0);

	/* the old root still reads the old data, from the store alone */
	ck_assert_int_eq(zcow_tree_init(&old, &m->store, ZCOW_FS_TREE_OBJECTID,
					root0, level0, gen0),
			 0);
	fill(want, 32, 1234, 0);
	ck_assert_int_eq(zcow_tree_search(&old, &k, buf, sizeof(buf), &size),
			 0);
	ck_assert_mem_eq(buf, want, 32);
	ck_assert_int_eq(zcow_tree_nr_items(&old), (int64_t)n);

	/* the new root, written and reloaded, has the new data */
	commit(&t, m);
	reload(&t, m);
	fill(want, 32, 1234, 9);
	ck_assert_int_eq(zcow_tree_search(&t, &k, buf, sizeof(buf), &size), 0);
	ck_assert_mem_eq(buf, want, 32);
	zcow_tree_release(&old);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_unwritten_node_freed_with_current_gen)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint64_t i, n = 300;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	m->cur_gen = 1;
	/* grow to two levels and shrink back inside one generation */
	for (i = 0; i < n; i++)
		insert_seq(&t, i, 40);
	for (i = 0; i < n; i++) {
		struct zcow_key k = seq_key(i);

		ck_assert_int_eq(zcow_tree_delete(&t, &k), 0);
	}
	/* every node but the root was freed unwritten, in this gen */
	ck_assert_uint_eq(m->nr_free, m->nr_alloc - 1);
	ck_assert_uint_eq(m->nr_free_cur_gen, m->nr_free);
	commit(&t, m);
	ck_assert_uint_eq(t.stats.nr_written, 1);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

/* Rewrite the node's checksum after tampering with it. */
static void reseal(struct mem *m, uint8_t *b)
{
	uint32_t crc = zcow_crc32c(b + 32, m->store.nodesize - 32);

	memcpy(b, &crc, 4);
}

START_TEST(test_ctree_corrupt_nodes_are_refused_with_euclean)
{
	struct mem *m = mem_new(4096);
	struct zcow_tree t;
	uint64_t i, root, gen, child;
	uint8_t *save = malloc(4096), *b, *c;
	struct zcow_key k = seq_key(3);
	int level;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (i = 0; i < 300; i++)
		insert_seq(&t, i, 40);
	commit(&t, m);
	zcow_tree_root(&t, &root, &level, &gen);
	ck_assert_int_eq(level, 1);
	b = buf_of(m, root);
	child = U64(b + 101 + 17);
	c = buf_of(m, child);
	memcpy(save, c, 4096);

#define EXPECT_EUCLEAN()                                                       \
	do {                                                                   \
		reload(&t, m);                                                 \
		ck_assert_int_eq(zcow_tree_search(&t, &k, NULL, 0, NULL),      \
				 -EUCLEAN);                                    \
		memcpy(c, save, 4096);                                         \
	} while (0)

	c[2000] ^= 0x40; /* bit flip */
	EXPECT_EUCLEAN();
	U64(c + 48) += 4096;
	reseal(m, c); /* wrong bytenr */
	EXPECT_EUCLEAN();
	U32(c + 96) = 1000;
	reseal(m, c); /* nritems too big */
	EXPECT_EUCLEAN();
	U32(c + 96) += 1;
	reseal(m, c); /* item past the rest */
	EXPECT_EUCLEAN();
	U32(c + 101 + 21) = 5000;
	reseal(m, c); /* item size */
	EXPECT_EUCLEAN();
	U32(c + 101 + 17) -= 1;
	reseal(m, c); /* item offset */
	EXPECT_EUCLEAN();
	U64(c + 88) = 2;
	reseal(m, c); /* owner */
	EXPECT_EUCLEAN();
	U64(c + 80) += 1;
	reseal(m, c); /* generation */
	EXPECT_EUCLEAN();
	c[100] = 1;
	reseal(m, c); /* level */
	EXPECT_EUCLEAN();
	c[40] ^= 1;
	reseal(m, c); /* fsid */
	EXPECT_EUCLEAN();
	U64(c + 101 + 25) = 0;
	reseal(m, c); /* key order */
	EXPECT_EUCLEAN();
	U64(c + 101 + 9) += 1;
	reseal(m, c); /* parent key */
	EXPECT_EUCLEAN();
#undef EXPECT_EUCLEAN
	/* intact again: it reads */
	reload(&t, m);
	ck_assert_int_eq(zcow_tree_search(&t, &k, NULL, 0, NULL), 0);
	/* a root read at the wrong level is refused too */
	zcow_tree_release(&t);
	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					root, 0, gen),
			 0);
	ck_assert_int_eq(zcow_tree_search(&t, &k, NULL, 0, NULL), -EUCLEAN);
	free(save);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

/*
 * The model: key number id in [0, NR_KEYS) is present or not, with the
 * length and version of its data.  Keys sort by id (objectid = id / 4).
 */
#define NR_KEYS 4000

struct model {
	bool is_present[NR_KEYS];
	uint32_t len[NR_KEYS];
	uint32_t ver[NR_KEYS];
	uint64_t nr;
};

static struct zcow_key model_key(uint64_t id)
{
	return mkkey(id / 4, (uint8_t)(ZCOW_DIR_ITEM_KEY + (id % 4) / 2),
		     (id % 2) * 1000003);
}

static void model_compare(struct zcow_tree *t, struct model *md)
{
	struct zcow_tree_iter it;
	struct zcow_key k, want;
	const void *data;
	static uint8_t buf[ZCOW_MAX_NODESIZE];
	uint32_t len;
	uint64_t id = 0;

	zcow_tree_iter_init(&it, t, KEY(0, 0, 0));
	while (!zcow_tree_iter_next(&it, &k, &data, &len)) {
		while (id < NR_KEYS && !md->is_present[id])
			id++;
		ck_assert_uint_lt(id, NR_KEYS);
		want = model_key(id);
		ck_assert_int_eq(zcow_key_cmp(&k, &want), 0);
		ck_assert_uint_eq(len, md->len[id]);
		fill(buf, len, id, md->ver[id]);
		ck_assert(!len || !memcmp(buf, data, len));
		id++;
	}
	while (id < NR_KEYS && !md->is_present[id])
		id++;
	ck_assert_uint_eq(id, NR_KEYS);
	ck_assert_int_eq(zcow_tree_nr_items(t), (int64_t)md->nr);
}

static uint32_t random_len(uint64_t *seed, uint32_t nodesize)
{
	uint64_t r = zcow_rand64(seed);

	if (r % 50 == 0) /* sometimes a big one */
		return (uint32_t)((r >> 8) %
				  (zcow_leaf_max_item_size(nodesize) + 1));
	return (uint32_t)((r >> 8) % 120);
}

/*
 * Loop index: bit 0 picks the node size; bit 1 looks every key up before
 * the operation on it (the file layer's pattern: read an item, then
 * update or delete it), so that the operation reuses the search's path.
 */
START_TEST(test_ctree_random_ops_match_a_sorted_model)
{
	uint32_t nodesize = nodesizes[_i & 1];
	bool is_lookup_first = _i & 2;
	struct mem *m = mem_new(nodesize);
	struct model *md = calloc(1, sizeof(*md));
	struct zcow_tree t;
	uint64_t seed = 0x5eed0000 + nodesize, op;
	static uint8_t buf[ZCOW_MAX_NODESIZE], got[ZCOW_MAX_NODESIZE];

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, ZCOW_FS_TREE_OBJECTID,
					ZCOW_NO_ROOT, 0, 0),
			 0);
	for (op = 0; op < 25000; op++) {
		uint64_t r = zcow_rand64(&seed), id = (r >> 16) % NR_KEYS;
		struct zcow_key k = model_key(id);
		uint32_t len = random_len(&seed, nodesize), size;
		/* phases: fill up, churn, drain */
		unsigned int kind = r % 10;
		int ret;

		if (op > 20000 && kind < 6)
			kind = 6; /* mostly deletes at the end */
		if (op < 6000 && kind >= 6)
			kind = 0;
		if (is_lookup_first)
			ck_assert_int_eq(
				zcow_tree_search(&t, &k, NULL, 0, NULL),
				md->is_present[id] ? 0 : -ENOENT);
		switch (kind) {
		case 0:
		case 1:
		case 2:
			fill(buf, len, id, (uint32_t)op);
			ret = zcow_tree_insert(&t, &k, buf, len);
			if (md->is_present[id]) {
				ck_assert_int_eq(ret, -EEXIST);
				break;
			}
			ck_assert_int_eq(ret, 0);
			md->is_present[id] = true;
			md->len[id] = len;
			md->ver[id] = (uint32_t)op;
			md->nr++;
			break;
		case 3:
		case 4:
			fill(buf, len, id, (uint32_t)op);
			ret = zcow_tree_update(&t, &k, buf, len);
			if (!md->is_present[id]) {
				ck_assert_int_eq(ret, -ENOENT);
				break;
			}
			ck_assert_int_eq(ret, 0);
			md->len[id] = len;
			md->ver[id] = (uint32_t)op;
			break;
		case 5:
			ret = zcow_tree_search(&t, &k, got, sizeof(got), &size);
			if (!md->is_present[id]) {
				ck_assert_int_eq(ret, -ENOENT);
				break;
			}
			ck_assert_int_eq(ret, 0);
			ck_assert_uint_eq(size, md->len[id]);
			fill(buf, size, id, md->ver[id]);
			ck_assert(!size || !memcmp(buf, got, size));
			break;
		default:
			ret = zcow_tree_delete(&t, &k);
			if (!md->is_present[id]) {
				ck_assert_int_eq(ret, -ENOENT);
				break;
			}
			ck_assert_int_eq(ret, 0);
			md->is_present[id] = false;
			md->nr--;
			break;
		}
		if (op % 997 == 0) {
			commit(&t, m);
			if (op % 3 == 0)
				reload(&t, m);
			else if (op % 3 == 1)
				zcow_tree_drop_clean(&t);
		}
		if (op % 2500 == 0)
			model_compare(&t, md);
	}
	model_compare(&t, md);
	commit(&t, m);
	reload(&t, m);
	model_compare(&t, md);
	/* what the tree references is what was allocated minus freed */
	ck_assert_uint_ge(m->nr_alloc, m->nr_free + 1);
	zcow_tree_release(&t);
	free(md);
	mem_destroy(m);
}
END_TEST

START_TEST(test_ctree_rejects_bad_nodesize_and_transid)
{
	struct mem *m = mem_new(3000);
	struct zcow_tree t;

	ck_assert_int_eq(zcow_tree_init(&t, &m->store, 5, ZCOW_NO_ROOT, 0, 0),
			 -EINVAL);
	m->store.nodesize = 131072;
	ck_assert_int_eq(zcow_tree_init(&t, &m->store, 5, ZCOW_NO_ROOT, 0, 0),
			 -EINVAL);
	m->store.nodesize = 65536;
	ck_assert_int_eq(zcow_tree_init(&t, &m->store, 5, ZCOW_NO_ROOT, 0, 4),
			 0);
	ck_assert_int_eq(zcow_tree_set_transid(&t, 3), -EINVAL);
	ck_assert_int_eq(zcow_tree_create_root(&t), 0);
	ck_assert_int_eq(zcow_tree_create_root(&t), -EEXIST);
	zcow_tree_release(&t);
	mem_destroy(m);
}
END_TEST

Suite *ctree_suite(void)
{
	Suite *s = suite_create("ctree_suite");
	TCase *tc = tcase_create("ctree");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ctree_leaf_bytes_match_btrfs_layout);
	tcase_add_test(tc, test_ctree_internal_node_bytes_match_btrfs_layout);
	tcase_add_test(tc, test_ctree_insert_search_delete_one_item);
	tcase_add_test(tc, test_ctree_refuses_duplicate_missing_and_oversized);
	tcase_add_test(tc, test_ctree_iterates_in_key_order_both_ways);
	tcase_add_test(tc,
		       test_ctree_iterator_survives_deleting_what_it_returned);
	tcase_add_loop_test(
		tc, test_ctree_splits_to_three_levels_and_merges_back_to_empty,
		0, 2);
	tcase_add_test(
		tc,
		test_ctree_remembered_paths_follow_splits_merges_and_balances);
	tcase_add_test(
		tc,
		test_ctree_remembered_path_follows_its_leaf_losing_its_first_item);
	tcase_add_test(tc, test_ctree_search_finds_unevenly_spread_keys);
	tcase_add_test(tc,
		       test_ctree_big_item_in_a_full_leaf_splits_it_in_three);
	tcase_add_test(tc, test_ctree_append_split_then_delete_does_not_ping_pong);
	tcase_add_test(tc, test_ctree_update_grows_and_shrinks_items);
	tcase_add_test(tc,
		       test_ctree_cow_moves_the_path_and_keeps_the_old_root);
	tcase_add_test(tc, test_ctree_unwritten_node_freed_with_current_gen);
	tcase_add_test(tc, test_ctree_corrupt_nodes_are_refused_with_euclean);
	tcase_add_loop_test(tc, test_ctree_random_ops_match_a_sorted_model, 0,
			    4);
	tcase_add_test(tc, test_ctree_rejects_bad_nodesize_and_transid);
	suite_add_tcase(s, tc);
	return s;
}
