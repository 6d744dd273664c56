// SPDX-License-Identifier: MIT
/*
 * The copy-on-write B-tree (docs/format-tree.md).
 *
 * In memory a node is decoded (struct zcow_cnode: an array of entries, leaf
 * data in separate buffers) and encoded back to the btrfs layout only at
 * writeback.  Invariants kept between calls:
 *   - keys strictly ascend in every node, and the key of a parent's pointer
 *     equals the first key of its child (btrfs's tree-checker rule);
 *   - a leaf's used bytes (25 per item + data) fit in nodesize - 101, an
 *     internal node has 1..max_ptrs pointers;
 *   - a node is dirty iff gen == transid and it was not yet written back;
 *     only dirty nodes are modified, everything else is CoWed first
 *     (top-down, so a parent is always dirty before its child changes);
 *   - a cached node is in the hash under its current bytenr; CoW rehashes
 *     the same struct, so pointers into a path stay valid across CoW;
 *   - every remembered search path (tree->hints) is a live path of the
 *     tree as it is: whatever adds, removes or moves nodes forgets them
 *     (forget_hints()).
 *
 * Modification order: every address and buffer an operation needs is
 * obtained before the first node changes, so a failing allocator leaves
 * the tree as it was (apart from CoW of the path, which is consistent).
 */
#include "ctree.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "le.h"
#include "prng.h"
#include "zlog.h"

#define TAG "ctree"

#define HDR_SIZE  ((uint32_t)sizeof(struct zcow_header))
#define ITEM_SIZE ((uint32_t)sizeof(struct zcow_item))
#define PTR_SIZE  ((uint32_t)sizeof(struct zcow_key_ptr))
/* Most nodes one split can add: a leaf split in three, one per level
 * above, and a new root. */
#define MAX_NEW_NODES (ZCOW_MAX_LEVEL + 2)

#define CHECK_OFF(field, off)                                                  \
	_Static_assert(offsetof(struct zcow_header, field) == (off),           \
		       #field " offset")
CHECK_OFF(fsid, 32);
CHECK_OFF(bytenr, 48);
CHECK_OFF(flags, 56);
CHECK_OFF(chunk_tree_uuid, 64);
CHECK_OFF(generation, 80);
CHECK_OFF(owner, 88);
CHECK_OFF(nritems, 96);
CHECK_OFF(level, 100);

/* One entry: a leaf item or an internal node's key pointer. */
struct centry {
	struct zcow_key key;
	union {
		struct {
			uint8_t *data; /* NULL when size is 0 */
			uint32_t size;
		};
		struct {
			uint64_t bytenr;
			uint64_t gen;
		};
	};
};

struct zcow_cnode {
	struct zcow_cnode *hnext;
	uint64_t bytenr;
	uint64_t gen;
	uint64_t owner;	/* the header's: the tree that made the node */
	int level;
	bool is_dirty;
	uint32_t nr;
	uint32_t used; /* leaf: ITEM_SIZE * nr + data bytes */
	/*
	 * The entries: e[0..nr) lie in the buffer ebuf[0..cap) from slot
	 * head on.  A leaf takes or gives an item near its front by moving
	 * the entries before it (head moves), not the ones after.
	 */
	struct centry *e;
	struct centry *ebuf;
	uint32_t head;
	uint32_t cap;
};

struct path {
	struct zcow_cnode *nodes[ZCOW_MAX_LEVEL];
	int slots[ZCOW_MAX_LEVEL];
};

/* ---- little helpers --------------------------------------------------- */

int zcow_key_cmp(const struct zcow_key *a, const struct zcow_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

static uint32_t leaf_space(uint32_t nodesize)
{
	return nodesize - HDR_SIZE;
}

static uint32_t max_ptrs(uint32_t nodesize)
{
	return (nodesize - HDR_SIZE) / PTR_SIZE;
}

uint32_t zcow_leaf_max_item_size(uint32_t nodesize)
{
	return leaf_space(nodesize) - ITEM_SIZE;
}

static void get_key(struct zcow_key *key, const uint8_t *p)
{
	key->objectid = get64(p);
	key->type = p[8];
	key->offset = get64(p + 9);
}

static void put_key(uint8_t *p, const struct zcow_key *key)
{
	put64(p, key->objectid);
	p[8] = key->type;
	put64(p + 9, key->offset);
}

static uint32_t entry_bytes(const struct zcow_cnode *node,
			    const struct centry *e)
{
	return node->level ? PTR_SIZE : ITEM_SIZE + e->size;
}

static bool is_nodesize_ok(uint32_t nodesize)
{
	return nodesize >= ZCOW_MIN_NODESIZE && nodesize <= ZCOW_MAX_NODESIZE &&
	       !(nodesize & (nodesize - 1));
}

/* ---- node memory and cache -------------------------------------------- */

/* Room for @n entries from e[0] on; entries keep their indices. */
static int ensure_cap(struct zcow_cnode *node, uint32_t n)
{
	struct centry *e;
	uint32_t cap;

	if (node->head + n <= node->cap)
		return 0;
	if (n <= node->cap) {
		memmove(node->ebuf, node->e, node->nr * sizeof(*e));
		node->e = node->ebuf;
		node->head = 0;
		return 0;
	}
	cap = node->cap ? node->cap : 8;
	while (cap < n)
		cap *= 2;
	e = realloc(node->ebuf, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	memmove(e, e + node->head, node->nr * sizeof(*e));
	node->ebuf = node->e = e;
	node->head = 0;
	node->cap = cap;
	return 0;
}

static struct zcow_cnode *node_new(int level, uint32_t cap)
{
	struct zcow_cnode *node = calloc(1, sizeof(*node));

	if (!node)
		return NULL;
	node->level = level;
	if (ensure_cap(node, cap)) {
		free(node);
		return NULL;
	}
	return node;
}

/* Free the memory of @node; leaf data too unless it was moved away. */
static void node_destroy(struct zcow_cnode *node, bool with_data)
{
	uint32_t i;

	if (!node)
		return;
	if (!node->level && with_data)
		for (i = 0; i < node->nr; i++)
			free(node->e[i].data);
	free(node->ebuf);
	free(node);
}

static uint32_t hash_slot(const struct zcow_tree *tree, uint64_t bytenr)
{
	return (uint32_t)(((bytenr >> 12) * ZCOW_GOLDEN64) >> 32) &
	       (tree->hash_size - 1);
}

static struct zcow_cnode *hash_find(struct zcow_tree *tree, uint64_t bytenr)
{
	struct zcow_cnode *node = tree->hash[hash_slot(tree, bytenr)];

	while (node && node->bytenr != bytenr)
		node = node->hnext;
	return node;
}

static void hash_grow(struct zcow_tree *tree)
{
	uint32_t old_size = tree->hash_size, i;
	struct zcow_cnode **old = tree->hash, **hash;
	struct zcow_cnode *node, *next;

	hash = calloc((size_t)old_size * 2, sizeof(*hash));
	if (!hash)
		return; /* longer chains, still correct */
	tree->hash = hash;
	tree->hash_size = old_size * 2;
	for (i = 0; i < old_size; i++) {
		for (node = old[i]; node; node = next) {
			uint32_t s = hash_slot(tree, node->bytenr);

			next = node->hnext;
			node->hnext = hash[s];
			hash[s] = node;
		}
	}
	free(old);
}

static void hash_add(struct zcow_tree *tree, struct zcow_cnode *node)
{
	uint32_t s;

	if (tree->nr_cached >= 2ULL * tree->hash_size)
		hash_grow(tree);
	s = hash_slot(tree, node->bytenr);
	node->hnext = tree->hash[s];
	tree->hash[s] = node;
	tree->nr_cached++;
	if (node->is_dirty)
		tree->nr_dirty++;
}

static void hash_del(struct zcow_tree *tree, struct zcow_cnode *node)
{
	struct zcow_cnode **pp = &tree->hash[hash_slot(tree, node->bytenr)];

	while (*pp && *pp != node)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = node->hnext;
		tree->nr_cached--;
		if (node->is_dirty)
			tree->nr_dirty--;
	}
	node->hnext = NULL;
}

/*
 * The search hints (struct zcow_tree.hints) stay valid while every node of
 * every hinted path is alive and sits at its slot of its parent: CoW, key
 * fixups and item changes inside a leaf keep that (see is_hint_for() for
 * the copied bounds); splits, merges, redistribution,
 * root changes and dropping nodes from the cache do not, and call
 * forget_hints() first.
 */
static void forget_hints(struct zcow_tree *tree)
{
	tree->nr_hints = 0;
}

/* Tell the store the tree no longer references @bytenr of generation @gen. */
static void drop_ref(struct zcow_tree *tree, uint64_t bytenr, uint64_t gen)
{
	if (tree->store->free)
		tree->store->free(tree->store->arg, bytenr, gen);
	tree->stats.nr_free++;
}

static void encode(const struct zcow_tree *tree, const struct zcow_cnode *node,
		   uint8_t *buf);

/*
 * The tree stops pointing at the node @bytenr (generation @gen, header
 * owner @owner) whose entries, @node's, it keeps in a node of its own.  A
 * node that may be shared with another tree (written at or before the
 * tree's last snapshot, in an earlier transaction) goes to the store's
 * release with its image (reference counts: ctree.h); any other is
 * dropped.
 */
static int release_node(struct zcow_tree *tree, const struct zcow_cnode *node,
			uint64_t bytenr, uint64_t gen, uint64_t owner)
{
	uint8_t *buf;
	int ret;

	if (!tree->store->release || gen > tree->share_gen ||
	    gen >= tree->transid) {
		drop_ref(tree, bytenr, gen);
		return 0;
	}
	buf = malloc(tree->store->nodesize);
	if (!buf)
		return -ENOMEM;
	encode(tree, node, buf);
	ret = tree->store->release(tree->store->arg, tree, bytenr, gen, owner,
				   node->level, buf);
	free(buf);
	tree->stats.nr_free++;
	return ret;
}

/* Remove @node from the tree: the store is told, the memory freed. */
static int node_forget(struct zcow_tree *tree, struct zcow_cnode *node,
		       bool with_data)
{
	int ret;

	forget_hints(tree);
	hash_del(tree, node);
	ret = release_node(tree, node, node->bytenr, node->gen, node->owner);
	node_destroy(node, with_data);
	return ret;
}

/* ---- encode / decode / verify ----------------------------------------- */

static void encode(const struct zcow_tree *tree, const struct zcow_cnode *node,
		   uint8_t *buf)
{
	const struct zcow_node_store *store = tree->store;
	uint32_t nodesize = store->nodesize;
	uint32_t i, end = leaf_space(nodesize);
	uint8_t *p = buf + HDR_SIZE;

	memset(buf, 0, nodesize);
	memcpy(buf + offsetof(struct zcow_header, fsid), store->fsid,
	       ZCOW_FSID_SIZE);
	put64(buf + offsetof(struct zcow_header, bytenr), node->bytenr);
	put64(buf + offsetof(struct zcow_header, flags),
	      ZCOW_HEADER_FLAG_WRITTEN |
		      (ZCOW_MIXED_BACKREF_REV << ZCOW_BACKREF_REV_SHIFT));
	memcpy(buf + offsetof(struct zcow_header, chunk_tree_uuid),
	       store->chunk_tree_uuid, ZCOW_UUID_SIZE);
	put64(buf + offsetof(struct zcow_header, generation), node->gen);
	put64(buf + offsetof(struct zcow_header, owner), node->owner);
	put32(buf + offsetof(struct zcow_header, nritems), node->nr);
	buf[offsetof(struct zcow_header, level)] = (uint8_t)node->level;

	for (i = 0; i < node->nr; i++) {
		const struct centry *e = &node->e[i];

		if (node->level) {
			put_key(p, &e->key);
			put64(p + 17, e->bytenr);
			put64(p + 25, e->gen);
			p += PTR_SIZE;
			continue;
		}
		/* item i's data ends where item i-1's begins */
		end -= e->size;
		put_key(p, &e->key);
		put32(p + 17, end);
		put32(p + 21, e->size);
		if (e->size)
			memcpy(buf + HDR_SIZE + end, e->data, e->size);
		p += ITEM_SIZE;
	}
	put32(buf,
	      zcow_crc32c(buf + ZCOW_CSUM_SIZE, nodesize - ZCOW_CSUM_SIZE));
}

#define BAD(fmt, ...)                                                          \
	do {                                                                   \
		zlog_err(TAG, "node %" PRIu64 ": " fmt, bytenr, __VA_ARGS__);  \
		return -EUCLEAN;                                               \
	} while (0)

int zcow_node_verify(const struct zcow_node_store *store, const void *vbuf,
		     uint64_t bytenr, uint64_t owner, int level, uint64_t gen)
{
	const uint8_t *buf = vbuf;
	uint32_t nodesize = store->nodesize, space = leaf_space(nodesize);
	uint32_t csum, want, nr, i, end = space;
	uint64_t v;
	int lvl;
	struct zcow_key prev, key;

	csum = get32(buf);
	want = zcow_crc32c(buf + ZCOW_CSUM_SIZE, nodesize - ZCOW_CSUM_SIZE);
	if (csum != want)
		BAD("checksum mismatch: have 0x%08x want 0x%08x", csum, want);
	v = get64(buf + offsetof(struct zcow_header, bytenr));
	if (v != bytenr)
		BAD("bytenr mismatch: header says %" PRIu64, v);
	if (memcmp(buf + offsetof(struct zcow_header, fsid), store->fsid,
		   ZCOW_FSID_SIZE))
		BAD("fsid mismatch%s", "");
	v = get64(buf + offsetof(struct zcow_header, owner));
	if (owner == ZCOW_OWNER_ANY_SUBVOL ? !zcow_is_subvol_id(v) : v != owner)
		BAD("owner mismatch: have %" PRIu64 " want %" PRIu64, v, owner);
	lvl = buf[offsetof(struct zcow_header, level)];
	if (lvl >= ZCOW_MAX_LEVEL || (level >= 0 && lvl != level))
		BAD("level mismatch: have %d want %d", lvl, level);
	v = get64(buf + offsetof(struct zcow_header, generation));
	if (gen && v != gen)
		BAD("generation mismatch: have %" PRIu64 " want %" PRIu64, v,
		    gen);
	nr = get32(buf + offsetof(struct zcow_header, nritems));
	if (lvl && (nr == 0 || nr > max_ptrs(nodesize)))
		BAD("bad nritems %u for level %d", nr, lvl);
	if (!lvl && nr > space / ITEM_SIZE)
		BAD("bad nritems %u for a leaf", nr);

	for (i = 0; i < nr; i++) {
		const uint8_t *p = buf + HDR_SIZE +
				   (size_t)i * (lvl ? PTR_SIZE : ITEM_SIZE);

		get_key(&key, p);
		if (i && zcow_key_cmp(&prev, &key) >= 0)
			BAD("keys out of order at slot %u", i);
		prev = key;
		if (lvl) {
			if (get64(p + 17) == ZCOW_NO_ROOT)
				BAD("null child pointer at slot %u", i);
			continue;
		}
		uint32_t off = get32(p + 17), size = get32(p + 21);

		if ((uint64_t)off + size != end || off < nr * ITEM_SIZE)
			BAD("item %u data [%u, +%u) out of place (end %u)", i,
			    off, size, end);
		end = off;
	}
	return 0;
}

#undef BAD

static int decode(const uint8_t *buf, struct zcow_cnode **node_ret)
{
	uint32_t nr = get32(buf + offsetof(struct zcow_header, nritems)), i;
	int level = buf[offsetof(struct zcow_header, level)];
	struct zcow_cnode *node = node_new(level, nr);

	if (!node)
		return -ENOMEM;
	node->bytenr = get64(buf + offsetof(struct zcow_header, bytenr));
	node->gen = get64(buf + offsetof(struct zcow_header, generation));
	node->owner = get64(buf + offsetof(struct zcow_header, owner));
	for (i = 0; i < nr; i++) {
		struct centry *e = &node->e[i];

		if (level) {
			const uint8_t *p = buf + HDR_SIZE + i * PTR_SIZE;

			get_key(&e->key, p);
			e->bytenr = get64(p + 17);
			e->gen = get64(p + 25);
			node->nr++;
			continue;
		}
		const uint8_t *p = buf + HDR_SIZE + i * ITEM_SIZE;

		get_key(&e->key, p);
		e->size = get32(p + 21);
		e->data = NULL;
		if (e->size) {
			e->data = malloc(e->size);
			if (!e->data) {
				node_destroy(node, true);
				return -ENOMEM;
			}
			memcpy(e->data, buf + HDR_SIZE + get32(p + 17),
			       e->size);
		}
		node->nr++;
		node->used += ITEM_SIZE + e->size;
	}
	*node_ret = node;
	return 0;
}

/*
 * The node at @bytenr, from the cache or read and verified against what the
 * parent says: @level, @gen (0: unknown) and @first key (NULL: root).
 */
static int get_node(struct zcow_tree *tree, uint64_t bytenr, int level,
		    uint64_t gen, const struct zcow_key *first,
		    struct zcow_cnode **node_ret)
{
	struct zcow_cnode *node = hash_find(tree, bytenr);
	uint8_t *buf = NULL;
	int ret;

	if (node) {
		if (node->level != level) {
			zlog_err(TAG,
				 "node %" PRIu64 ": cached at level %d, "
				 "parent says %d",
				 bytenr, node->level, level);
			return -EUCLEAN;
		}
		*node_ret = node;
		return 0;
	}
	buf = malloc(tree->store->nodesize);
	if (!buf)
		return -ENOMEM;
	ret = tree->store->read(tree->store->arg, bytenr, buf);
	if (ret) {
		zlog_err(TAG, "node %" PRIu64 ": read failed: %d", bytenr, ret);
		goto out;
	}
	tree->stats.nr_read++;
	ret = zcow_node_verify(tree->store, buf, bytenr,
			       tree->share_gen ? ZCOW_OWNER_ANY_SUBVOL :
						 tree->owner,
			       level, gen);
	if (ret)
		goto out;
	ret = decode(buf, &node);
	if (ret)
		goto out;
	if (first && node->nr && zcow_key_cmp(first, &node->e[0].key)) {
		zlog_err(TAG,
			 "node %" PRIu64 ": first key (%" PRIu64 " %u %" PRIu64
			 ") differs from parent's",
			 bytenr, node->e[0].key.objectid, node->e[0].key.type,
			 node->e[0].key.offset);
		node_destroy(node, true);
		ret = -EUCLEAN;
		goto out;
	}
	hash_add(tree, node);
	*node_ret = node;
out:
	free(buf);
	return ret;
}

/* ---- tree setup --------------------------------------------------------- */

int zcow_tree_init(struct zcow_tree *tree, const struct zcow_node_store *store,
		   uint64_t owner, uint64_t root_bytenr, int root_level,
		   uint64_t root_gen)
{
	memset(tree, 0, sizeof(*tree));
	if (!store || !store->alloc || !store->read ||
	    !is_nodesize_ok(store->nodesize) || root_level < 0 ||
	    root_level >= ZCOW_MAX_LEVEL)
		return -EINVAL;
	tree->hash_size = 256;
	tree->hash = calloc(tree->hash_size, sizeof(*tree->hash));
	if (!tree->hash)
		return -ENOMEM;
	tree->store = store;
	tree->owner = owner;
	tree->root_bytenr = root_bytenr;
	tree->root_level = root_bytenr == ZCOW_NO_ROOT ? 0 : root_level;
	tree->root_gen = root_bytenr == ZCOW_NO_ROOT ? 0 : root_gen;
	tree->transid = root_gen + 1;
	return 0;
}

void zcow_tree_release(struct zcow_tree *tree)
{
	uint32_t i;
	struct zcow_cnode *node, *next;

	forget_hints(tree);
	if (!tree->hash)
		return;
	for (i = 0; i < tree->hash_size; i++)
		for (node = tree->hash[i]; node; node = next) {
			next = node->hnext;
			node_destroy(node, true);
		}
	free(tree->hash);
	tree->hash = NULL;
	tree->nr_cached = 0;
	tree->nr_dirty = 0;
}

int zcow_tree_set_transid(struct zcow_tree *tree, uint64_t transid)
{
	if (transid < tree->transid)
		return -EINVAL;
	tree->transid = transid;
	tree->seq++;
	return 0;
}

void zcow_tree_root(const struct zcow_tree *tree, uint64_t *bytenr_ret,
		    int *level_ret, uint64_t *gen_ret)
{
	if (bytenr_ret)
		*bytenr_ret = tree->root_bytenr;
	if (level_ret)
		*level_ret = tree->root_level;
	if (gen_ret)
		*gen_ret = tree->root_gen;
}

/* Allocate an address and an empty dirty node for it (not yet hashed). */
static int alloc_node(struct zcow_tree *tree, int level,
		      struct zcow_cnode **node_ret)
{
	struct zcow_cnode *node;
	uint64_t bytenr = ZCOW_NO_ROOT;
	int ret;

	node = node_new(level, 8);
	if (!node)
		return -ENOMEM;
	ret = tree->store->alloc(tree->store->arg, tree->owner, level, &bytenr);
	if (!ret && bytenr == ZCOW_NO_ROOT)
		ret = -EINVAL;
	if (ret) {
		zlog(ret == -ENOSPC && tree->owner == ZCOW_TREE_LOG_OBJECTID ?
			     ZLOG_DEBUG :
			     ZLOG_ERR,
		     TAG, "tree %" PRIu64 ": node allocation failed: %d",
		     tree->owner, ret);
		node_destroy(node, true);
		return ret;
	}
	tree->stats.nr_alloc++;
	node->bytenr = bytenr;
	node->gen = tree->transid;
	node->owner = tree->owner;
	node->is_dirty = true;
	*node_ret = node;
	return 0;
}

int zcow_tree_create_root(struct zcow_tree *tree)
{
	struct zcow_cnode *node;
	int ret;

	if (tree->root_bytenr != ZCOW_NO_ROOT)
		return -EEXIST;
	ret = alloc_node(tree, 0, &node);
	if (ret)
		return ret;
	forget_hints(tree);
	hash_add(tree, node);
	tree->root_bytenr = node->bytenr;
	tree->root_level = 0;
	tree->root_gen = node->gen;
	tree->seq++;
	return 0;
}

int zcow_tree_copy_root(struct zcow_tree *dst, struct zcow_tree *src,
			void *buf)
{
	struct zcow_cnode *from, *node = NULL;
	uint32_t i;
	int ret;

	if (dst->root_bytenr != ZCOW_NO_ROOT || dst->store != src->store)
		return -EINVAL;
	if (src->root_bytenr == ZCOW_NO_ROOT)
		return zcow_tree_create_root(dst);
	ret = get_node(src, src->root_bytenr, src->root_level, src->root_gen,
		       NULL, &from);
	if (ret)
		return ret;
	ret = alloc_node(dst, from->level, &node);
	if (!ret && ensure_cap(node, from->nr))
		ret = -ENOMEM;
	for (i = 0; !ret && i < from->nr; i++) {
		struct centry *e = &node->e[i];

		*e = from->e[i];
		if (!node->level && e->size) {
			e->data = malloc(e->size);
			if (!e->data) {
				ret = -ENOMEM;
				break;
			}
			memcpy(e->data, from->e[i].data, e->size);
		}
		node->nr = i + 1;
	}
	if (ret) {
		if (node) {
			drop_ref(dst, node->bytenr, node->gen);
			node_destroy(node, true);
		}
		return ret;
	}
	node->used = from->used;
	if (buf)
		encode(src, from, buf);
	forget_hints(dst);
	hash_add(dst, node);
	dst->root_bytenr = node->bytenr;
	dst->root_level = node->level;
	dst->root_gen = node->gen;
	dst->seq++;
	return 0;
}

/* ---- search and copy-on-write ------------------------------------------ */

/* Nodes with fewer entries are searched by plain bisection. */
#define MIN_GUESS_ENTRIES 16

/*
 * Where @key probably sits among the entries of @node, or -1 for no idea:
 * linear interpolation between the first and last key on the first field
 * that tells them apart.  Keys of one tree are mostly spread evenly
 * (addresses, file offsets), so the guess lands a few entries off where
 * bisection would touch a cache line per step.  A key whose objectid is
 * the first or last one of the node may sit anywhere among the entries
 * that share it: no idea.  Only a starting point: the caller checks it.
 *
 * @first and @next, if not NULL, are the node's first key and the key
 * after its last one as its parents know them: reading them from the
 * node itself would touch two more cache lines.
 */
static int guess_slot(const struct zcow_cnode *node, const struct zcow_key *key,
		      const struct zcow_key *first, const struct zcow_key *next)
{
	const struct zcow_key *a = first ? first : &node->e[0].key;
	const struct zcow_key *b = next ? next : &node->e[node->nr - 1].key;
	uint64_t lo, hi, x;

	if (a->objectid != b->objectid) {
		lo = a->objectid;
		hi = b->objectid;
		x = key->objectid;
		if (x == lo || x == hi)
			return -1;
	} else if (a->type == b->type && key->objectid == a->objectid &&
		   key->type == a->type) {
		lo = a->offset;
		hi = b->offset;
		x = key->offset;
	} else {
		return -1;
	}
	if (x <= lo || hi <= lo)
		return 0;
	if (x >= hi)
		return (int)node->nr - 1;
	return (int)((double)(x - lo) / (double)(hi - lo) *
		     (double)(node->nr - 1));
}

/* Leaf: first slot with key >= @key; *is_found if equal.  @first and
 * @next: see guess_slot(). */
static int leaf_slot(const struct zcow_cnode *node, const struct zcow_key *key,
		     const struct zcow_key *first, const struct zcow_key *next,
		     bool *is_found)
{
	int nr = (int)node->nr, lo = 0, hi = nr;

	/*
	 * Bracket the answer around the guess, widening by doubling steps:
	 * afterwards every entry below lo sorts before @key and the entry
	 * at hi (if any) does not.
	 */
	if (nr >= MIN_GUESS_ENTRIES) {
		int g = guess_slot(node, key, first, next), step;

		if (g < 0) {
			/* bisect all */
		} else if (zcow_key_cmp(&node->e[g].key, key) < 0) {
			lo = g + 1;
			for (step = 1; lo + step - 1 < nr; step *= 2) {
				int p = lo + step - 1;

				if (zcow_key_cmp(&node->e[p].key, key) >= 0) {
					hi = p;
					break;
				}
				lo = p + 1;
			}
		} else {
			hi = g;
			for (step = 1; hi - step >= 0; step *= 2) {
				int p = hi - step;

				if (zcow_key_cmp(&node->e[p].key, key) < 0) {
					lo = p + 1;
					break;
				}
				hi = p;
			}
		}
	}
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (zcow_key_cmp(&node->e[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*is_found = lo < nr && !zcow_key_cmp(&node->e[lo].key, key);
	return lo;
}

/* Internal node: the child that may hold @key (last key <= @key, or 0). */
static int node_slot(const struct zcow_cnode *node, const struct zcow_key *key,
		     const struct zcow_key *first, const struct zcow_key *next)
{
	bool is_found;
	int slot = leaf_slot(node, key, first, next, &is_found);

	if (is_found)
		return slot;
	return slot ? slot - 1 : 0;
}

/*
 * Make @node (at @slot of @parent, or the root if @parent is NULL) safe to
 * modify: a node not dirty in this transaction moves to a new address.
 */
static int cow_node(struct zcow_tree *tree, struct zcow_cnode *node,
		    struct zcow_cnode *parent, int slot, bool is_forced)
{
	uint64_t bytenr = ZCOW_NO_ROOT, old_bytenr = node->bytenr;
	uint64_t old_gen = node->gen, old_owner = node->owner;
	int ret;

	if (node->is_dirty && node->gen == tree->transid && !is_forced)
		return 0;
	ret = tree->store->alloc(tree->store->arg, tree->owner, node->level,
				 &bytenr);
	if (!ret && bytenr == ZCOW_NO_ROOT)
		ret = -EINVAL;
	if (ret) {
		/* A full tree-log group is expected: the fsync commits
		 * instead (core/tree-log.c); elsewhere the reservation
		 * should have prevented it. */
		zlog(ret == -ENOSPC && tree->owner == ZCOW_TREE_LOG_OBJECTID ?
			     ZLOG_DEBUG :
			     ZLOG_ERR,
		     TAG, "tree %" PRIu64 ": CoW allocation failed: %d",
		     tree->owner, ret);
		return ret;
	}
	tree->stats.nr_alloc++;
	tree->stats.nr_cow++;
	hash_del(tree, node);
	node->bytenr = bytenr;
	node->gen = tree->transid;
	node->owner = tree->owner;
	node->is_dirty = true;
	hash_add(tree, node);
	if (parent) {
		parent->e[slot].bytenr = bytenr;
		parent->e[slot].gen = node->gen;
	} else {
		tree->root_bytenr = bytenr;
		tree->root_gen = node->gen;
	}
	return release_node(tree, node, old_bytenr, old_gen, old_owner);
}

static int cow(struct zcow_tree *tree, struct zcow_cnode *node,
	       struct zcow_cnode *parent, int slot)
{
	return cow_node(tree, node, parent, slot, false);
}

int zcow_tree_cow_root(struct zcow_tree *tree)
{
	struct zcow_cnode *root;
	int ret;

	if (tree->root_bytenr == ZCOW_NO_ROOT)
		return 0;
	ret = get_node(tree, tree->root_bytenr, tree->root_level,
		       tree->root_gen, NULL, &root);
	if (ret)
		return ret;
	return cow(tree, root, NULL, 0);
}

/*
 * Make every node of @path (as search() filled it) writable, top-down so
 * that a parent is dirty before its pointer to the child changes.  The
 * slots stay valid: CoW gives a node a new address, not new entries.
 */
static int cow_path(struct zcow_tree *tree, struct path *path)
{
	int lvl, ret;

	ret = cow(tree, path->nodes[tree->root_level], NULL, 0);
	for (lvl = tree->root_level; !ret && lvl > 0; lvl--)
		ret = cow(tree, path->nodes[lvl - 1], path->nodes[lvl],
			  path->slots[lvl]);
	return ret;
}

/*
 * Does a walk from the root for @key end in the leaf of @h?  Its bounds
 * come from the parents: lo is the parent's key for the leaf (its first
 * key), hi the next key at the lowest level that has one (the next leaf's
 * first key).  Inside a leaf only a change of its first item moves lo
 * (leaf_first_changed()).  hi moves only up (the next leaf can lose its
 * first item, never gain a smaller one), so an old hi is merely cautious.
 */
static bool is_hint_for(const struct zcow_tree_hint *h,
			const struct zcow_key *key)
{
	return (!h->has_lo || zcow_key_cmp(key, &h->lo) >= 0) &&
	       (!h->has_hi || zcow_key_cmp(key, &h->hi) < 0);
}

/* The first item of @leaf changed (not its place in the tree). */
static void leaf_first_changed(struct zcow_tree *tree,
			       const struct zcow_cnode *leaf)
{
	uint32_t i;

	if (!leaf->nr) {
		forget_hints(tree);
		return;
	}
	for (i = 0; i < tree->nr_hints; i++)
		if (tree->hints[i].nodes[0] == leaf && tree->hints[i].has_lo)
			tree->hints[i].lo = leaf->e[0].key;
}

/* Put the hint at @i (nr_hints: a new one from @path) first. */
static void promote_hint(struct zcow_tree *tree, uint32_t i,
			 const struct path *path)
{
	struct zcow_tree_hint h;
	int lvl, n = tree->root_level + 1;

	if (i < tree->nr_hints) {
		h = tree->hints[i];
	} else {
		memcpy(h.nodes, path->nodes, n * sizeof(h.nodes[0]));
		memcpy(h.slots, path->slots, n * sizeof(h.slots[0]));
		h.has_lo = h.has_hi = false;
		for (lvl = 1; lvl < n; lvl++) {
			if (h.slots[lvl])
				h.has_lo = true;
			if (!h.has_hi &&
			    h.slots[lvl] + 1 < (int)h.nodes[lvl]->nr) {
				h.has_hi = true;
				h.hi = h.nodes[lvl]->e[h.slots[lvl] + 1].key;
			}
		}
		if (h.has_lo)
			h.lo = h.nodes[1]->e[h.slots[1]].key;
		if (tree->nr_hints < ZCOW_TREE_NR_HINTS)
			tree->nr_hints++;
		i = tree->nr_hints - 1;
	}
	memmove(&tree->hints[1], &tree->hints[0], i * sizeof(h));
	tree->hints[0] = h;
}

/* Fill @path from a hint whose leaf covers @key; false if none does. */
static bool search_hints(struct zcow_tree *tree, const struct zcow_key *key,
			 struct path *path)
{
	int n = tree->root_level + 1;
	uint32_t i;

	for (i = 0; i < tree->nr_hints; i++)
		if (is_hint_for(&tree->hints[i], key))
			break;
	if (i == tree->nr_hints)
		return false;
	if (i)
		promote_hint(tree, i, NULL);
	memcpy(path->nodes, tree->hints[0].nodes, n * sizeof(path->nodes[0]));
	memcpy(path->slots, tree->hints[0].slots, n * sizeof(path->slots[0]));
	return true;
}

/* Remember the path a walk from the root found, dropping older hints to
 * the same leaf. */
static void add_hint(struct zcow_tree *tree, const struct path *path)
{
	uint32_t i;

	for (i = 0; i < tree->nr_hints; i++) {
		if (tree->hints[i].nodes[0] == path->nodes[0]) {
			memmove(&tree->hints[i], &tree->hints[i + 1],
				(tree->nr_hints - i - 1) *
					sizeof(tree->hints[0]));
			tree->nr_hints--;
			break;
		}
	}
	promote_hint(tree, tree->nr_hints, path);
}

/*
 * Walk from the root to the leaf for @key, filling path->nodes and the
 * slots above the leaf.  *first_ret and *next_ret: the leaf's first key
 * and the key after its last one, from its parents (NULL if there is no
 * parent or no next key); valid until the tree changes.
 */
static int descend(struct zcow_tree *tree, const struct zcow_key *key,
		   struct path *path, const struct zcow_key **first_ret,
		   const struct zcow_key **next_ret)
{
	const struct zcow_key *first = NULL, *next = NULL;
	struct zcow_cnode *node;
	int lvl, ret;

	ret = get_node(tree, tree->root_bytenr, tree->root_level,
		       tree->root_gen, NULL, &node);
	if (ret)
		return ret;
	for (lvl = tree->root_level; lvl; lvl--) {
		struct centry *e;
		int slot = node_slot(node, key, first, next);

		path->nodes[lvl] = node;
		path->slots[lvl] = slot;
		e = &node->e[slot];
		/* a parent's key for a child is the child's first key */
		first = &e->key;
		if (slot + 1 < (int)node->nr)
			next = &node->e[slot + 1].key;
		ret = get_node(tree, e->bytenr, lvl - 1, e->gen, &e->key,
			       &node);
		if (ret)
			return ret;
	}
	path->nodes[0] = node;
	*first_ret = first;
	*next_ret = next;
	return 0;
}

/*
 * Fill @path down to the leaf that holds or would hold @key (nothing is
 * CoWed: see cow_path()).  Returns 0 if found, 1 if not (path->slots[0] =
 * insertion point), -ENOENT if the tree has no root, or an error.
 */
static int search(struct zcow_tree *tree, const struct zcow_key *key,
		  struct path *path)
{
	const struct zcow_key *first, *next;
	bool is_found;
	int ret;

	if (tree->root_bytenr == ZCOW_NO_ROOT)
		return -ENOENT;
	if (search_hints(tree, key, path)) {
		const struct zcow_tree_hint *h = &tree->hints[0];

		first = h->has_lo ? &h->lo : NULL;
		next = h->has_hi ? &h->hi : NULL;
	} else {
		ret = descend(tree, key, path, &first, &next);
		if (ret)
			return ret;
		add_hint(tree, path);
	}
	path->slots[0] = leaf_slot(path->nodes[0], key, first, next, &is_found);
	return is_found ? 0 : 1;
}

int zcow_tree_search(struct zcow_tree *tree, const struct zcow_key *key,
		     void *buf, uint32_t buflen, uint32_t *size_ret)
{
	struct path path;
	struct centry *e;
	int ret;

	ret = search(tree, key, &path);
	if (ret < 0)
		return ret;
	if (ret)
		return -ENOENT;
	e = &path.nodes[0]->e[path.slots[0]];
	if (buf && buflen && e->size)
		memcpy(buf, e->data, e->size < buflen ? e->size : buflen);
	if (size_ret)
		*size_ret = e->size;
	return 0;
}

/*
 * The first key of the node at @level changed to @key: update the parents'
 * keys while the node is their first child (btrfs's fixup_low_keys).
 */
static void fixup_low_keys(struct zcow_tree *tree, struct path *path, int level,
			   const struct zcow_key *key)
{
	int lvl;

	for (lvl = level + 1; lvl <= tree->root_level; lvl++) {
		path->nodes[lvl]->e[path->slots[lvl]].key = *key;
		if (path->slots[lvl])
			break;
	}
}

/* ---- insertion and splits ----------------------------------------------- */

/* Room for one more entry at every level of @path, so inserts cannot fail
 * on memory after the first change. */
static int reserve_path(struct zcow_tree *tree, struct path *path)
{
	int lvl;

	for (lvl = 0; lvl <= tree->root_level; lvl++)
		if (ensure_cap(path->nodes[lvl], path->nodes[lvl]->nr + 3))
			return -ENOMEM;
	return 0;
}

/*
 * Where to cut @n entries of @sizes bytes into two nodes of @space bytes:
 * the most even cut where both halves fit, 0 if none.  @is_append prefers
 * leaving the left node full (sequential inserts, as btrfs does).
 */
static uint32_t pick_cut(const uint32_t *sizes, uint32_t n, uint32_t space,
			 bool is_append)
{
	uint64_t total = 0, left = 0, best_diff = UINT64_MAX;
	uint32_t i, best = 0;

	for (i = 0; i < n; i++)
		total += sizes[i];
	if (is_append && total - sizes[n - 1] <= space && sizes[n - 1] <= space)
		return n - 1;
	for (i = 1; i < n; i++) {
		uint64_t diff;

		left += sizes[i - 1];
		if (left > space || total - left > space)
			continue;
		diff = left > total - left ? 2 * left - total
					   : total - 2 * left;
		if (diff < best_diff) {
			best_diff = diff;
			best = i;
		}
	}
	return best;
}

/*
 * Link @k new siblings (@ins: first key, bytenr, gen) of the node at
 * @level into its parent, right after it; split parents that overflow and
 * grow the root.  The nodes for that come from @spare, in the order
 * plan_link() listed their levels.
 */
static void link_siblings(struct zcow_tree *tree, struct path *path, int level,
			  struct centry *ins, uint32_t k,
			  struct zcow_cnode **spare)
{
	uint32_t maxp = max_ptrs(tree->store->nodesize);
	struct centry up;

	for (;;) {
		struct zcow_cnode *parent, *right;
		uint32_t slot, m;

		if (level == tree->root_level) {
			struct zcow_cnode *old = path->nodes[level];

			parent = *spare;
			parent->e[0].key = old->e[0].key;
			parent->e[0].bytenr = old->bytenr;
			parent->e[0].gen = old->gen;
			memcpy(&parent->e[1], ins, k * sizeof(*ins));
			parent->nr = k + 1;
			hash_add(tree, parent);
			tree->root_bytenr = parent->bytenr;
			tree->root_gen = parent->gen;
			tree->root_level = level + 1;
			return;
		}
		parent = path->nodes[level + 1];
		slot = path->slots[level + 1] + 1;
		memmove(&parent->e[slot + k], &parent->e[slot],
			(parent->nr - slot) * sizeof(*ins));
		memcpy(&parent->e[slot], ins, k * sizeof(*ins));
		parent->nr += k;
		if (parent->nr <= maxp)
			return;

		right = *spare++;
		m = parent->nr / 2;
		memcpy(right->e, &parent->e[m],
		       (parent->nr - m) * sizeof(*ins));
		right->nr = parent->nr - m;
		parent->nr = m;
		hash_add(tree, right);
		tree->stats.nr_split++;
		up.key = right->e[0].key;
		up.bytenr = right->bytenr;
		up.gen = right->gen;
		ins = &up;
		k = 1;
		level++;
	}
}

/*
 * The levels of the new nodes linking @k siblings at @level needs (see
 * above), appended to @levels; -EOVERFLOW if the root would pass
 * ZCOW_MAX_LEVEL.
 */
static int plan_link(struct zcow_tree *tree, struct path *path, int level,
		     uint32_t k, int *levels, int *nr)
{
	uint32_t maxp = max_ptrs(tree->store->nodesize);

	for (;;) {
		if (level == tree->root_level) {
			if (level + 1 >= ZCOW_MAX_LEVEL)
				return -EOVERFLOW;
			levels[(*nr)++] = level + 1;
			return 0;
		}
		if (path->nodes[level + 1]->nr + k <= maxp)
			return 0;
		levels[(*nr)++] = level + 1;
		k = 1;
		level++;
	}
}

/*
 * Put an item at path->slots[0] of the (writable) leaf: a new one, or
 * with @is_replace a new version of the one there.  Splits when needed.
 */
static int leaf_put(struct zcow_tree *tree, struct path *path,
		    const struct zcow_key *key, const void *data, uint32_t len,
		    bool is_replace)
{
	struct zcow_cnode *leaf = path->nodes[0], *spare[MAX_NEW_NODES];
	uint32_t space = leaf_space(tree->store->nodesize);
	uint32_t maxp = max_ptrs(tree->store->nodesize);
	uint32_t slot = path->slots[0], n, i, cut[3], nr_groups;
	int levels[MAX_NEW_NODES];
	uint32_t *sizes = NULL;
	struct centry *tmp = NULL, ins[2];
	uint8_t *copy = NULL, *old_data = NULL;
	uint64_t used;
	int nr_spare = 0, need = 0, ret;

	if (is_replace && len == leaf->e[slot].size) {
		/* Same size: new bytes in the old buffer, layout unchanged. */
		if (len)
			memcpy(leaf->e[slot].data, data, len);
		tree->seq++;
		return 0;
	}
	if (len) {
		copy = malloc(len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, data, len);
	}
	ret = reserve_path(tree, path);
	if (ret)
		goto out;
	used = leaf->used + ITEM_SIZE + len;
	if (is_replace)
		used -= ITEM_SIZE + leaf->e[slot].size;

	if (used <= space) {
		if (is_replace) {
			free(leaf->e[slot].data);
		} else {
			if (leaf->head && slot < leaf->nr / 2) {
				leaf->e--;
				leaf->head--;
				memmove(&leaf->e[0], &leaf->e[1],
					slot * sizeof(*tmp));
			} else {
				memmove(&leaf->e[slot + 1], &leaf->e[slot],
					(leaf->nr - slot) * sizeof(*tmp));
			}
			leaf->e[slot].key = *key;
			leaf->nr++;
			if (!slot) {
				fixup_low_keys(tree, path, 0, key);
				leaf_first_changed(tree, leaf);
			}
		}
		leaf->e[slot].data = copy;
		leaf->e[slot].size = len;
		leaf->used = (uint32_t)used;
		copy = NULL;
		goto out;
	}

	/* Split: lay the would-be item list out in tmp, cut it in 2 or 3. */
	n = leaf->nr + (is_replace ? 0 : 1);
	tmp = malloc(n * sizeof(*tmp));
	sizes = malloc(n * sizeof(*sizes));
	if (!tmp || !sizes) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(tmp, leaf->e, slot * sizeof(*tmp));
	tmp[slot].key = *key;
	tmp[slot].data = copy;
	tmp[slot].size = len;
	memcpy(&tmp[slot + 1], &leaf->e[slot + (is_replace ? 1 : 0)],
	       (n - slot - 1) * sizeof(*tmp));
	for (i = 0; i < n; i++)
		sizes[i] = ITEM_SIZE + tmp[i].size;
	cut[0] = pick_cut(sizes, n, space, !is_replace && slot == n - 1);
	if (cut[0]) {
		nr_groups = 2;
		cut[1] = n;
	} else {
		/* [0, slot) [slot] [slot+1, n): each fits, none is empty */
		nr_groups = 3;
		cut[0] = slot;
		cut[1] = slot + 1;
		cut[2] = n;
	}

	for (i = 0; i + 1 < nr_groups; i++)
		levels[need++] = 0;
	ret = plan_link(tree, path, 0, nr_groups - 1, levels, &need);
	if (ret)
		goto out;
	for (i = 0; i < (uint32_t)need; i++) {
		ret = alloc_node(tree, levels[i], &spare[nr_spare]);
		if (ret)
			goto out;
		nr_spare++;
		if (ensure_cap(spare[i], n > maxp + 3 ? n : maxp + 3)) {
			ret = -ENOMEM;
			goto out;
		}
	}

	/* ORDER: nothing changed above this line; nothing fails below. */
	forget_hints(tree);
	if (!is_replace && !slot)
		fixup_low_keys(tree, path, 0, key);
	if (is_replace)
		old_data = leaf->e[slot].data;
	copy = NULL;
	memcpy(leaf->e, tmp, cut[0] * sizeof(*tmp));
	leaf->nr = cut[0];
	leaf->used = 0;
	for (i = 0; i < cut[0]; i++)
		leaf->used += sizes[i];
	for (i = 1; i < nr_groups; i++) {
		struct zcow_cnode *right = spare[i - 1];
		uint32_t j;

		right->nr = cut[i] - cut[i - 1];
		memcpy(right->e, &tmp[cut[i - 1]], right->nr * sizeof(*tmp));
		right->used = 0;
		for (j = cut[i - 1]; j < cut[i]; j++)
			right->used += sizes[j];
		hash_add(tree, right);
		tree->stats.nr_split++;
		ins[i - 1].key = right->e[0].key;
		ins[i - 1].bytenr = right->bytenr;
		ins[i - 1].gen = right->gen;
	}
	link_siblings(tree, path, 0, ins, nr_groups - 1, &spare[nr_groups - 1]);
	nr_spare = 0; /* all used */
	ret = 0;
out:
	while (nr_spare > 0) {
		struct zcow_cnode *node = spare[--nr_spare];

		drop_ref(tree, node->bytenr, node->gen);
		node_destroy(node, false);
	}
	free(old_data);
	free(copy);
	free(tmp);
	free(sizes);
	tree->seq++;
	return ret;
}

static int put_item(struct zcow_tree *tree, const struct zcow_key *key,
		    const void *data, uint32_t len, bool is_replace)
{
	struct path path;
	int ret;

	if (len > zcow_leaf_max_item_size(tree->store->nodesize))
		return -EOVERFLOW;
	if (len && !data)
		return -EINVAL;
	/* Look first so that a refused call CoWs nothing. */
	ret = search(tree, key, &path);
	if (ret == -ENOENT && !is_replace) {
		ret = zcow_tree_create_root(tree);
		if (!ret)
			ret = search(tree, key, &path);
	}
	if (ret < 0)
		return ret;
	if (!ret && !is_replace)
		return -EEXIST;
	if (ret && is_replace)
		return -ENOENT;
	ret = cow_path(tree, &path);
	if (ret < 0)
		return ret;
	return leaf_put(tree, &path, key, data, len, is_replace);
}

int zcow_tree_insert(struct zcow_tree *tree, const struct zcow_key *key,
		     const void *data, uint32_t len)
{
	return put_item(tree, key, data, len, false);
}

int zcow_tree_update(struct zcow_tree *tree, const struct zcow_key *key,
		     const void *data, uint32_t len)
{
	return put_item(tree, key, data, len, true);
}

/* ---- deletion and rebalancing ------------------------------------------ */

static bool is_underfull(const struct zcow_tree *tree,
			 const struct zcow_cnode *node)
{
	if (node->level)
		return node->nr < max_ptrs(tree->store->nodesize) / 4;
	return node->used < leaf_space(tree->store->nodesize) / 4;
}

static uint64_t node_bytes(const struct zcow_cnode *node)
{
	return node->level ? (uint64_t)node->nr * PTR_SIZE : node->used;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* The bytes the largest entry of @node takes: an item with its header,
 * or a pointer. */
static uint32_t max_entry_bytes(const struct zcow_cnode *node)
{
	uint32_t i, m = 0;

	if (node->level)
		return PTR_SIZE;
	for (i = 0; i < node->nr; i++)
		m = max_u32(m, ITEM_SIZE + node->e[i].size);
	return m;
}

/* Move entries so that @left and @right (adjacent, both writable) are
 * even; the parent's key for @right is updated by the caller. */
static int redistribute(struct zcow_tree *tree, struct zcow_cnode *left,
			struct zcow_cnode *right)
{
	uint32_t space = leaf_space(tree->store->nodesize);
	uint32_t n = left->nr + right->nr, i, m;
	struct centry *tmp;
	uint32_t *sizes;
	int ret = -ENOMEM;

	forget_hints(tree);
	if (left->level)
		space = max_ptrs(tree->store->nodesize) * PTR_SIZE;
	tmp = malloc(n * sizeof(*tmp));
	sizes = malloc(n * sizeof(*sizes));
	if (!tmp || !sizes || ensure_cap(left, n) || ensure_cap(right, n))
		goto out;
	memcpy(tmp, left->e, left->nr * sizeof(*tmp));
	memcpy(&tmp[left->nr], right->e, right->nr * sizeof(*tmp));
	for (i = 0; i < n; i++)
		sizes[i] = entry_bytes(left, &tmp[i]);
	m = pick_cut(sizes, n, space, false);
	if (!m) {
		ret = -EUCLEAN; /* they fit before, so a cut exists */
		goto out;
	}
	memcpy(left->e, tmp, m * sizeof(*tmp));
	left->nr = m;
	memcpy(right->e, &tmp[m], (n - m) * sizeof(*tmp));
	right->nr = n - m;
	if (!left->level) {
		left->used = right->used = 0;
		for (i = 0; i < m; i++)
			left->used += sizes[i];
		for (; i < n; i++)
			right->used += sizes[i];
	}
	ret = 0;
out:
	free(tmp);
	free(sizes);
	return ret;
}

/*
 * The left node of a merge or redistribution (at @ls of its parent) may
 * have been empty, so its parent key was stale: set it again.
 */
static void fix_first_key(struct zcow_tree *tree, struct path *path, int lvl,
			  int ls, const struct zcow_cnode *left)
{
	struct zcow_cnode *parent = path->nodes[lvl + 1];

	if (!left->nr || !zcow_key_cmp(&parent->e[ls].key, &left->e[0].key))
		return;
	parent->e[ls].key = left->e[0].key;
	if (!ls)
		fixup_low_keys(tree, path, lvl + 1, &left->e[0].key);
}

/* Drop root levels that have a single child. */
static int shrink_root(struct zcow_tree *tree)
{
	struct zcow_cnode *root, *child;
	int ret;

	while (tree->root_level > 0) {
		ret = get_node(tree, tree->root_bytenr, tree->root_level,
			       tree->root_gen, NULL, &root);
		if (ret)
			return ret;
		if (root->nr != 1)
			return 0;
		ret = get_node(tree, root->e[0].bytenr, tree->root_level - 1,
			       root->e[0].gen, &root->e[0].key, &child);
		if (ret)
			return ret;
		tree->root_bytenr = child->bytenr;
		tree->root_gen = child->gen;
		tree->root_level--;
		ret = node_forget(tree, root, true);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * After a removal from the node at @level of @path: merge it with or fill
 * it from a sibling while it is underfull, up to the root.
 */
static int rebalance(struct zcow_tree *tree, struct path *path, int level)
{
	int lvl, ret;

	for (lvl = level; lvl < tree->root_level; lvl++) {
		struct zcow_cnode *node = path->nodes[lvl];
		struct zcow_cnode *parent = path->nodes[lvl + 1];
		struct zcow_cnode *left, *right;
		int pslot = path->slots[lvl + 1], ls;
		struct centry *se;
		uint32_t margin;

		if (!is_underfull(tree, node))
			return 0;
		if (parent->nr < 2)
			continue;
		ls = pslot > 0 ? pslot - 1 : pslot;
		se = &parent->e[pslot > 0 ? pslot - 1 : pslot + 1];
		if (pslot > 0) {
			ret = get_node(tree, se->bytenr, lvl, se->gen, &se->key,
				       &left);
			if (!ret)
				ret = cow(tree, left, parent, ls);
			right = node;
		} else {
			left = node;
			ret = get_node(tree, se->bytenr, lvl, se->gen, &se->key,
				       &right);
		}
		if (ret)
			return ret;

		/*
		 * Merge only when the merged node keeps room for one more
		 * entry as large as the largest of the two, else even them
		 * out.  Without that margin a leaf split off by an append
		 * (pick_cut: the full left keeps all, the new leaf holds the
		 * one new item) and emptied again is merged back into its
		 * full sibling, and the next append splits it off again.  A
		 * commit's delayed references did exactly that in the extent
		 * tree: each round deleted the item of the leaf freed by the
		 * last merge (the one item of the split-off leaf, so it
		 * merged and was freed) and appended the item of the leaf
		 * the last split allocated (so the full left leaf split
		 * again): one split and one merge per round, a new reference
		 * each, and the commit never settled (-EUCLEAN after
		 * MAX_COMMIT_ROUNDS).  A margin of one entry keeps the trees
		 * as full as merging whenever the two fit does (a quarter of
		 * a node kept free grew the metadata of a sustained random
		 * overwrite until it ran out of room).
		 */
		margin = max_u32(max_entry_bytes(left), max_entry_bytes(right));
		if (node_bytes(left) + node_bytes(right) + margin <=
		    (lvl ? max_ptrs(tree->store->nodesize) * PTR_SIZE
			 : leaf_space(tree->store->nodesize))) {
			/* merge right into left; right is only read */
			if (ensure_cap(left, left->nr + right->nr))
				return -ENOMEM;
			memcpy(&left->e[left->nr], right->e,
			       right->nr * sizeof(*right->e));
			left->nr += right->nr;
			left->used += right->used;
			memmove(&parent->e[ls + 1], &parent->e[ls + 2],
				(parent->nr - ls - 2) * sizeof(*parent->e));
			parent->nr--;
			/* right's entries (their data now left's) go with
			 * it to the store */
			ret = node_forget(tree, right, false);
			tree->stats.nr_merge++;
			if (ret)
				return ret;
			fix_first_key(tree, path, lvl, ls, left);
			continue;
		}
		if (pslot == 0) {
			ret = cow(tree, right, parent, ls + 1);
			if (ret)
				return ret;
		}
		ret = redistribute(tree, left, right);
		if (ret)
			return ret;
		parent->e[ls + 1].key = right->e[0].key;
		fix_first_key(tree, path, lvl, ls, left);
		tree->stats.nr_balance++;
		return 0;
	}
	return shrink_root(tree);
}

int zcow_tree_delete(struct zcow_tree *tree, const struct zcow_key *key)
{
	struct zcow_cnode *leaf;
	struct path path;
	int slot, ret;

	ret = search(tree, key, &path);
	if (ret < 0)
		return ret;
	if (ret)
		return -ENOENT;
	ret = cow_path(tree, &path);
	if (ret < 0)
		return ret;
	tree->seq++;
	leaf = path.nodes[0];
	slot = path.slots[0];
	free(leaf->e[slot].data);
	leaf->used -= ITEM_SIZE + leaf->e[slot].size;
	if (slot < (int)leaf->nr / 2) {
		memmove(&leaf->e[1], &leaf->e[0], slot * sizeof(*leaf->e));
		leaf->e++;
		leaf->head++;
	} else {
		memmove(&leaf->e[slot], &leaf->e[slot + 1],
			(leaf->nr - slot - 1) * sizeof(*leaf->e));
	}
	leaf->nr--;
	if (!slot && leaf->nr)
		fixup_low_keys(tree, &path, 0, &leaf->e[0].key);
	if (!slot)
		leaf_first_changed(tree, leaf);
	ret = rebalance(tree, &path, 0);
	if (ret)
		zlog_warn(TAG,
			  "tree %" PRIu64 ": rebalance after delete "
			  "failed (%d); tree left underfull",
			  tree->owner, ret);
	return 0;
}

/* ---- writeback ------------------------------------------------------------
 */

static int cmp_bytenr(const void *a, const void *b)
{
	const struct zcow_cnode *x = *(struct zcow_cnode *const *)a;
	const struct zcow_cnode *y = *(struct zcow_cnode *const *)b;

	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

int zcow_tree_for_each_dirty(struct zcow_tree *tree,
			     int (*fn)(void *arg, uint64_t bytenr,
				       const void *buf),
			     void *arg)
{
	struct zcow_cnode **list = NULL, *node;
	uint8_t *buf = NULL;
	uint64_t nr = 0, i;
	uint32_t h;
	int ret = 0;

	if (!tree->nr_dirty)
		return 0;
	list = malloc(tree->nr_dirty * sizeof(*list));
	buf = malloc(tree->store->nodesize);
	if (!list || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (h = 0; h < tree->hash_size; h++)
		for (node = tree->hash[h]; node; node = node->hnext)
			if (node->is_dirty)
				list[nr++] = node;
	qsort(list, nr, sizeof(*list), cmp_bytenr);
	for (i = 0; i < nr; i++) {
		encode(tree, list[i], buf);
		ret = fn(arg, list[i]->bytenr, buf);
		if (ret)
			goto out;
		tree->stats.nr_written++;
	}
out:
	free(list);
	free(buf);
	return ret;
}

void zcow_tree_mark_clean(struct zcow_tree *tree)
{
	struct zcow_cnode *node;
	uint32_t h;

	for (h = 0; h < tree->hash_size; h++)
		for (node = tree->hash[h]; node; node = node->hnext)
			node->is_dirty = false;
	tree->nr_dirty = 0;
	tree->seq++;
}

void zcow_tree_drop_clean(struct zcow_tree *tree)
{
	struct zcow_cnode **pp, *node;
	uint32_t h;

	forget_hints(tree);
	for (h = 0; h < tree->hash_size; h++) {
		pp = &tree->hash[h];
		while ((node = *pp)) {
			if (node->is_dirty) {
				pp = &node->hnext;
				continue;
			}
			*pp = node->hnext;
			tree->nr_cached--;
			node_destroy(node, true);
		}
	}
	tree->seq++;
}

/* ---- iteration ------------------------------------------------------------
 */

void zcow_tree_iter_init(struct zcow_tree_iter *iter, struct zcow_tree *tree,
			 const struct zcow_key *start)
{
	/* level -1: no path yet, the first step searches (nodes and slots
	 * are not read before that; no memset: every write's extent
	 * lookup starts an iterator) */
	iter->tree = tree;
	iter->seq = 0;
	iter->pos = *start;
	iter->is_started = false;
	iter->level = -1;
}

/* Step the path to the first (@dir > 0) or last slot of the next leaf in
 * direction @dir; -ENOENT past the end. */
static int step_leaf(struct zcow_tree_iter *iter, int dir)
{
	struct zcow_tree *tree = iter->tree;
	int lvl, ret;

	for (lvl = 1; lvl <= iter->level; lvl++) {
		int s = iter->slots[lvl] + dir;

		if (s >= 0 && s < (int)iter->nodes[lvl]->nr)
			break;
	}
	if (lvl > iter->level)
		return -ENOENT;
	iter->slots[lvl] += dir;
	for (; lvl > 0; lvl--) {
		struct zcow_cnode *node = iter->nodes[lvl];
		struct centry *e = &node->e[iter->slots[lvl]];
		struct zcow_cnode *child;

		ret = get_node(tree, e->bytenr, lvl - 1, e->gen, &e->key,
			       &child);
		if (ret)
			return ret;
		iter->nodes[lvl - 1] = child;
		iter->slots[lvl - 1] = dir > 0 ? 0 : (int)child->nr - 1;
	}
	return 0;
}

static int iter_step(struct zcow_tree_iter *iter, int dir,
		     struct zcow_key *key_ret, const void **data_ret,
		     uint32_t *len_ret)
{
	struct zcow_tree *tree = iter->tree;
	struct path path;
	struct centry *e;
	int ret;

	if (iter->level < 0 || iter->seq != tree->seq) {
		ret = search(tree, &iter->pos, &path);
		if (ret < 0) {
			iter->level = -1;
			return ret;
		}
		memcpy(iter->nodes, path.nodes, sizeof(path.nodes));
		memcpy(iter->slots, path.slots, sizeof(path.slots));
		iter->level = tree->root_level;
		iter->seq = tree->seq;
		/* slots[0] is the first item >= pos */
		if (dir > 0 && !(ret == 0 && iter->is_started))
			iter->slots[0]--;
	}
	iter->slots[0] += dir;
	while (iter->slots[0] < 0 ||
	       iter->slots[0] >= (int)iter->nodes[0]->nr) {
		ret = step_leaf(iter, dir);
		if (ret) {
			iter->level = -1;
			return ret;
		}
	}
	e = &iter->nodes[0]->e[iter->slots[0]];
	iter->pos = e->key;
	iter->is_started = true;
	if (key_ret)
		*key_ret = e->key;
	if (data_ret)
		*data_ret = e->data;
	if (len_ret)
		*len_ret = e->size;
	return 0;
}

int zcow_tree_iter_next(struct zcow_tree_iter *iter, struct zcow_key *key_ret,
			const void **data_ret, uint32_t *len_ret)
{
	return iter_step(iter, 1, key_ret, data_ret, len_ret);
}

int zcow_tree_iter_prev(struct zcow_tree_iter *iter, struct zcow_key *key_ret,
			const void **data_ret, uint32_t *len_ret)
{
	return iter_step(iter, -1, key_ret, data_ret, len_ret);
}

/* ---- relocation ------------------------------------------------------- */

struct reloc_walk {
	struct zcow_tree *tree;
	uint64_t lo, hi;
	uint64_t nr_moved;
	struct path path;	/* the ancestors of the node visited */
};

static bool is_in(const struct reloc_walk *w, uint64_t bytenr)
{
	return bytenr >= w->lo && bytenr < w->hi;
}

/*
 * Move the node at @level of w->path to a new address: its ancestors
 * first become writable, top-down (a parent must be dirty before its
 * pointer to the child changes), then the node itself moves, also when it
 * is dirty in this transaction already.
 */
static int reloc_move(struct reloc_walk *w, int level)
{
	struct zcow_tree *tree = w->tree;
	int lvl, ret = 0;

	for (lvl = tree->root_level; !ret && lvl >= level; lvl--) {
		bool is_root = lvl == tree->root_level;

		ret = cow_node(tree, w->path.nodes[lvl],
			       is_root ? NULL : w->path.nodes[lvl + 1],
			       is_root ? 0 : w->path.slots[lvl + 1],
			       lvl == level);
	}
	if (!ret)
		w->nr_moved++;
	return ret;
}

/* Pre-order: @node (at its level, in w->path) and every node below it. */
static int reloc_visit(struct reloc_walk *w, struct zcow_cnode *node)
{
	int level = node->level;
	uint32_t i;
	int ret;

	w->path.nodes[level] = node;
	if (is_in(w, node->bytenr)) {
		ret = reloc_move(w, level);
		if (ret)
			return ret;
	}
	for (i = 0; level > 0 && i < node->nr; i++) {
		struct centry *e = &node->e[i];
		struct zcow_cnode *child;

		/* A leaf is read only when it must move. */
		if (level == 1 && !is_in(w, e->bytenr))
			continue;
		ret = get_node(w->tree, e->bytenr, level - 1, e->gen, &e->key,
			       &child);
		if (ret)
			return ret;
		w->path.slots[level] = (int)i;
		ret = reloc_visit(w, child);
		if (ret)
			return ret;
	}
	return 0;
}

int zcow_tree_relocate(struct zcow_tree *tree, uint64_t lo, uint64_t hi,
		       uint64_t *nr_moved_ret)
{
	struct reloc_walk w = { .tree = tree, .lo = lo, .hi = hi };
	struct zcow_cnode *root;
	int ret = 0;

	if (tree->root_bytenr != ZCOW_NO_ROOT) {
		ret = get_node(tree, tree->root_bytenr, tree->root_level,
			       tree->root_gen, NULL, &root);
		if (!ret)
			ret = reloc_visit(&w, root);
	}
	if (nr_moved_ret)
		*nr_moved_ret = w.nr_moved;
	return ret;
}

/* Nodes below @node (itself included): internal nodes are read, leaves
 * only counted from their parents' pointers. */
static int64_t count_nodes(struct zcow_tree *tree, struct zcow_cnode *node)
{
	int64_t nr = 1;
	uint32_t i;

	if (node->level == 1)
		return 1 + (int64_t)node->nr;
	for (i = 0; node->level > 0 && i < node->nr; i++) {
		struct zcow_cnode *child;
		int64_t sub;
		int ret = get_node(tree, node->e[i].bytenr, node->level - 1,
				   node->e[i].gen, &node->e[i].key, &child);

		if (ret)
			return ret;
		sub = count_nodes(tree, child);
		if (sub < 0)
			return sub;
		nr += sub;
	}
	return nr;
}

int64_t zcow_tree_nr_nodes(struct zcow_tree *tree)
{
	struct zcow_cnode *root;
	int64_t nr;
	int ret;

	if (tree->has_nodes_base)
		return tree->nodes_base +
		       (int64_t)(tree->stats.nr_alloc - tree->nodes_alloc_at) -
		       (int64_t)(tree->stats.nr_free - tree->nodes_free_at);
	if (tree->root_bytenr == ZCOW_NO_ROOT) {
		nr = 0;
	} else {
		ret = get_node(tree, tree->root_bytenr, tree->root_level, 0,
			       NULL, &root);
		if (ret)
			return ret;
		nr = count_nodes(tree, root);
		if (nr < 0)
			return nr;
	}
	tree->nodes_base = nr;
	tree->nodes_alloc_at = tree->stats.nr_alloc;
	tree->nodes_free_at = tree->stats.nr_free;
	tree->has_nodes_base = true;
	return nr;
}

int64_t zcow_tree_nr_items(struct zcow_tree *tree)
{
	struct zcow_tree_iter iter;
	struct zcow_key start = { 0, 0, 0 };
	int64_t nr = 0;
	int ret;

	zcow_tree_iter_init(&iter, tree, &start);
	while (!(ret = zcow_tree_iter_next(&iter, NULL, NULL, NULL)))
		nr++;
	return ret == -ENOENT ? nr : ret;
}
