/* SPDX-License-Identifier: MIT */
/*
 * ctree: zcow's copy-on-write B-tree, with btrfs's on-disk node format.
 *
 * What it is: search, insert, update, delete and iteration over items keyed
 * by (objectid, type, offset), in nodes laid out exactly as btrfs lays out
 * its tree blocks (struct btrfs_header, btrfs_item, btrfs_key_ptr; see
 * docs/format-tree.md).  Leaves split when full, internal nodes split, the
 * root grows; underfull nodes merge with or borrow from a sibling and the
 * root shrinks when it has a single child.
 *
 * What it is not: it knows no device, no chunk, no block group and no
 * transaction commit.  It reaches its nodes through a struct zcow_node_store
 * (allocate an address, read a node, drop a reference); the caller writes the
 * dirty nodes out with zcow_tree_for_each_dirty() at commit time.
 *
 * Copy-on-write: the caller sets the transaction generation (transid).  The
 * first modification of a node written in an older generation, or already
 * written back in this one, allocates a new address, moves the contents
 * there, and drops the old address (free callback); the parent's pointer is
 * updated, so CoW propagates to the root.  Nodes created or CoWed in the
 * current generation and not yet written back are modified in place.  A
 * node's old copy on the store is never touched, so a root written earlier
 * stays readable and unchanged (snapshot property).
 *
 * Concurrency: none.  The caller serializes every call on one tree (e.g.
 * under the fs's transaction lock).  Different trees are independent.
 *
 * Who may include it: core/ and tests/.
 */
#ifndef ZCOW_CTREE_H
#define ZCOW_CTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- on-disk format (btrfs's; all fields little-endian, packed) ------- */

#define ZCOW_CSUM_SIZE		32
#define ZCOW_FSID_SIZE		16
#define ZCOW_UUID_SIZE		16
#define ZCOW_MAX_LEVEL		8	/* BTRFS_MAX_LEVEL: levels 0..7 */
#define ZCOW_MIN_NODESIZE	4096u
#define ZCOW_MAX_NODESIZE	65536u

/* Header flags: bit 0 = written; top byte = backref revision (mixed = 1). */
#define ZCOW_HEADER_FLAG_WRITTEN	(1ULL << 0)
#define ZCOW_MIXED_BACKREF_REV		1ULL
#define ZCOW_BACKREF_REV_SHIFT		56

/* struct btrfs_header, 101 bytes at the start of every tree block. */
struct zcow_header {
	uint8_t csum[ZCOW_CSUM_SIZE];		/* 0x00 crc32c of 0x20..end */
	uint8_t fsid[ZCOW_FSID_SIZE];		/* 0x20 */
	uint64_t bytenr;			/* 0x30 logical address */
	uint64_t flags;				/* 0x38 */
	uint8_t chunk_tree_uuid[ZCOW_UUID_SIZE];/* 0x40 */
	uint64_t generation;			/* 0x50 transid written in */
	uint64_t owner;				/* 0x58 tree objectid */
	uint32_t nritems;			/* 0x60 */
	uint8_t level;				/* 0x64 0 = leaf */
} __attribute__((packed));

/* struct btrfs_disk_key, 17 bytes. */
struct zcow_disk_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
} __attribute__((packed));

/*
 * struct btrfs_item, 25 bytes: the leaf's item array follows the header;
 * @offset is relative to the end of the header; item data is packed from
 * the end of the block downward (item 0's data ends at the block's end).
 */
struct zcow_item {
	struct zcow_disk_key key;
	uint32_t offset;
	uint32_t size;
} __attribute__((packed));

/* struct btrfs_key_ptr, 33 bytes: the internal node's array. */
struct zcow_key_ptr {
	struct zcow_disk_key key;
	uint64_t blockptr;
	uint64_t generation;
} __attribute__((packed));

_Static_assert(sizeof(struct zcow_header) == 101, "btrfs_header size");
_Static_assert(sizeof(struct zcow_disk_key) == 17, "btrfs_disk_key size");
_Static_assert(sizeof(struct zcow_item) == 25, "btrfs_item size");
_Static_assert(sizeof(struct zcow_key_ptr) == 33, "btrfs_key_ptr size");

/* Tree objectids (btrfs_tree.h). */
#define ZCOW_ROOT_TREE_OBJECTID		1ULL
#define ZCOW_EXTENT_TREE_OBJECTID	2ULL
#define ZCOW_CHUNK_TREE_OBJECTID	3ULL
#define ZCOW_DEV_TREE_OBJECTID		4ULL
#define ZCOW_FS_TREE_OBJECTID		5ULL
#define ZCOW_CSUM_TREE_OBJECTID		7ULL
#define ZCOW_UUID_TREE_OBJECTID		9ULL
#define ZCOW_DATA_RELOC_TREE_OBJECTID	((uint64_t)-9)
#define ZCOW_TREE_LOG_OBJECTID		((uint64_t)-6)
#define ZCOW_ORPHAN_OBJECTID		((uint64_t)-5)

/* Item types (btrfs_tree.h key types). */
#define ZCOW_INODE_ITEM_KEY		1
#define ZCOW_INODE_REF_KEY		12
#define ZCOW_XATTR_ITEM_KEY		24
/* an inode unlinked while open: key (ZCOW_ORPHAN_OBJECTID, 48, ino), no
 * data, in its subvolume's tree (btrfs_orphan_add()) */
#define ZCOW_ORPHAN_ITEM_KEY		48
#define ZCOW_DIR_LOG_INDEX_KEY		72	/* tree-log: dir indexes logged */
#define ZCOW_DIR_ITEM_KEY		84
#define ZCOW_DIR_INDEX_KEY		96
#define ZCOW_EXTENT_DATA_KEY		108
/* tree-log: a file logged by its changed extents (zcow's own type) */
#define ZCOW_EXTENT_LOG_KEY		110
#define ZCOW_EXTENT_CSUM_KEY		128
#define ZCOW_ROOT_ITEM_KEY		132
#define ZCOW_ROOT_REF_KEY		156
#define ZCOW_EXTENT_ITEM_KEY		168
#define ZCOW_METADATA_ITEM_KEY		169
#define ZCOW_BLOCK_GROUP_ITEM_KEY	192
#define ZCOW_DEV_EXTENT_KEY		204
#define ZCOW_DEV_ITEM_KEY		216
#define ZCOW_CHUNK_ITEM_KEY		228
/* uuid tree: (uuid halves) -> subvolume id */
#define ZCOW_UUID_KEY_SUBVOL		251

/* The root tree directory's entry for the fs tree (btrfs-progs mkfs). */
#define ZCOW_DEFAULT_SUBVOL_NAME	"default"

/* ---- in-memory API ---------------------------------------------------- */

/* A key in CPU byte order; ordered by (objectid, type, offset). */
struct zcow_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
};

/* <0, 0, >0 as @a sorts before, equal to, after @b. */
int zcow_key_cmp(const struct zcow_key *a, const struct zcow_key *b);

/* Bytes of item data an empty leaf of @nodesize can hold (one item). */
uint32_t zcow_leaf_max_item_size(uint32_t nodesize);

/*
 * Where the tree's nodes live.  The tree never touches a device; it asks
 * the store.  Addresses are logical bytes; 0 is never a valid node address
 * (ZCOW_NO_ROOT).
 */
struct zcow_tree;

struct zcow_node_store {
	/* Allocate the address of a new node of tree @owner at @level. */
	int (*alloc)(void *arg, uint64_t owner, int level,
		     uint64_t *bytenr_ret);
	/* Read the node at @bytenr (nodesize bytes) into @buf; 0 or -errno. */
	int (*read)(void *arg, uint64_t bytenr, void *buf);
	/*
	 * The tree dropped its reference to the node at @bytenr, written (or
	 * allocated) in generation @gen.  @gen == the current transid means
	 * the node was allocated in this transaction: the store may reuse or
	 * must "redirty" (write zeroed) the block (seed 007).  May be NULL.
	 */
	void (*free)(void *arg, uint64_t bytenr, uint64_t gen);
	/*
	 * Shared nodes (snapshots).  A tree with a last snapshot
	 * (share_gen) stops pointing at the node @bytenr of @level,
	 * generation @gen <= share_gen and older than the transaction, made
	 * by tree @owner (the header's), whose entries it keeps in a node of
	 * its own (copy-on-write, or merged into a sibling).  @buf is the
	 * node's image.  Another tree may still point at the node, so the
	 * store counts references (btrfs's update_ref_for_cow); it calls
	 * free itself when this was the last.  NULL: every drop is a free.
	 * 0 or -errno (the tree is then in an error state).
	 */
	int (*release)(void *arg, struct zcow_tree *tree, uint64_t bytenr,
		       uint64_t gen, uint64_t owner, int level,
		       const void *buf);
	void *arg;
	uint32_t nodesize;	/* bytes; power of two, 4 KiB..64 KiB */
	uint8_t fsid[ZCOW_FSID_SIZE];
	uint8_t chunk_tree_uuid[ZCOW_UUID_SIZE];
};

/* zcow_node_verify()'s @owner for a subvolume tree: any subvolume's
 * nodes may be shared into it. */
#define ZCOW_OWNER_ANY_SUBVOL	0ULL

/* Is @id a subvolume tree's objectid (the fs tree 5 or 256.. -256)? */
static inline bool zcow_is_subvol_id(uint64_t id)
{
	return id == ZCOW_FS_TREE_OBJECTID ||
	       (id >= 256 && id <= (uint64_t)-256);
}

/* Sentinel root address: the tree has no root node (not even a leaf). */
#define ZCOW_NO_ROOT	0ULL

/* Counters since zcow_tree_init (for the nodes-written-per-commit bench). */
struct zcow_tree_stats {
	uint64_t nr_alloc;	/* store->alloc calls that succeeded */
	uint64_t nr_free;	/* store->free calls */
	uint64_t nr_cow;	/* nodes copied on write */
	uint64_t nr_read;	/* nodes read from the store */
	uint64_t nr_written;	/* nodes handed out by for_each_dirty */
	uint64_t nr_split;	/* node splits (leaf and internal) */
	uint64_t nr_merge;	/* merges of two siblings into one */
	uint64_t nr_balance;	/* redistributions between two siblings */
};

struct zcow_cnode;

/* Search paths a tree remembers (struct zcow_tree.hints). */
#define ZCOW_TREE_NR_HINTS	4

struct zcow_tree {
	const struct zcow_node_store *store;
	uint64_t owner;
	uint64_t transid;	/* generation of new and CoWed nodes */
	/*
	 * The transaction of the tree's last snapshot (btrfs's root item
	 * last_snapshot), 0 if none: nodes of this generation or older may
	 * be shared with another tree (store->release), and nodes of any
	 * subvolume may be read in the tree.  Set by the caller.
	 */
	uint64_t share_gen;
	uint64_t root_bytenr;	/* ZCOW_NO_ROOT if the tree has no root */
	uint64_t root_gen;
	int root_level;
	uint64_t seq;		/* bumped by every change; iterators check */
	struct zcow_cnode **hash;	/* node cache by bytenr */
	uint32_t hash_size;		/* power of two */
	uint64_t nr_cached;
	uint64_t nr_dirty;
	struct zcow_tree_stats stats;
	/*
	 * Paths of recent searches, most recent first, reused for a key
	 * their leaf covers (see search_hints()): consecutive operations on
	 * one item, appends at the right end, one hot item such as an inode.
	 * Emptied whenever nodes are added to or removed from the tree.
	 */
	uint32_t nr_hints;
	struct zcow_tree_hint {
		struct zcow_cnode *nodes[ZCOW_MAX_LEVEL];
		int slots[ZCOW_MAX_LEVEL];
		/*
		 * The keys a walk from the root sends to the leaf: [lo, hi),
		 * copied from the parents (checked without touching the
		 * leaf); no lo for the leftmost leaf, no hi for the rightmost.
		 */
		struct zcow_key lo, hi;
		bool has_lo, has_hi;
	} hints[ZCOW_TREE_NR_HINTS];
	/* zcow_tree_nr_nodes(): the count once walked, and the alloc/free
	 * counters then; later counts follow the counters. */
	bool has_nodes_base;
	int64_t nodes_base;
	uint64_t nodes_alloc_at, nodes_free_at;
};

/*
 * Set up @tree over @store for tree @owner, rooted at @root_bytenr (a node
 * at @root_level written in @root_gen), or empty with ZCOW_NO_ROOT.  Nothing
 * is read yet.  The transid starts at @root_gen + 1.  Returns 0, -EINVAL
 * (bad nodesize, level, NULL callbacks) or -ENOMEM.
 */
int zcow_tree_init(struct zcow_tree *tree, const struct zcow_node_store *store,
		   uint64_t owner, uint64_t root_bytenr, int root_level,
		   uint64_t root_gen);
/* Free the node cache; dirty nodes are discarded (not freed on the store). */
void zcow_tree_release(struct zcow_tree *tree);

/*
 * Set the generation of the running transaction; must not go backwards
 * (-EINVAL).  Nodes already written back or from older generations are
 * CoWed on their next modification.
 */
int zcow_tree_set_transid(struct zcow_tree *tree, uint64_t transid);

/*
 * Give a tree without a root an empty leaf as root (what mkfs needs for an
 * empty btrfs tree).  0, -EEXIST if it has a root, or the alloc errno.
 */
int zcow_tree_create_root(struct zcow_tree *tree);

/*
 * A snapshot's root: give @dst (empty, same store) a copy of @src's root
 * node, made by @dst's owner, sharing every child with @src (btrfs's
 * btrfs_copy_root).  The references the copy holds on its children are
 * the caller's to add: @buf (nodesize bytes, may be NULL) receives the
 * copied node's image.  An empty @src gives an empty leaf.  0, -EINVAL,
 * or the read/alloc errno.
 */
int zcow_tree_copy_root(struct zcow_tree *dst, struct zcow_tree *src,
			void *buf);

/*
 * Copy the root node into the running transaction (nothing if it is there
 * already, or the tree is empty): a commit that changed nothing else still
 * gives the root tree the new generation, as btrfs readers expect.
 * 0 or the read/alloc errno.
 */
int zcow_tree_cow_root(struct zcow_tree *tree);

/* Current root: ZCOW_NO_ROOT in *bytenr_ret if none.  Any pointer may be
 * NULL. */
void zcow_tree_root(const struct zcow_tree *tree, uint64_t *bytenr_ret,
		    int *level_ret, uint64_t *gen_ret);

/*
 * Exact lookup.  On 0, copies min(item size, @buflen) bytes to @buf (may be
 * NULL with @buflen 0) and the item's full size to *size_ret (may be NULL).
 * Returns 0, -ENOENT, -EUCLEAN (corrupt node), -EIO/... (store read) or
 * -ENOMEM.
 */
int zcow_tree_search(struct zcow_tree *tree, const struct zcow_key *key,
		     void *buf, uint32_t buflen, uint32_t *size_ret);

/*
 * Insert a new item.  Returns 0, -EEXIST (key present), -EOVERFLOW (the item
 * cannot fit in an empty leaf), -EUCLEAN, -ENOMEM, or the store's errno.
 * On an error the tree is unchanged apart from nodes CoWed on the way (it
 * stays consistent).
 */
int zcow_tree_insert(struct zcow_tree *tree, const struct zcow_key *key,
		     const void *data, uint32_t len);

/* Replace an item's data (size may change).  Errors as insert, and -ENOENT
 * if the key is absent. */
int zcow_tree_update(struct zcow_tree *tree, const struct zcow_key *key,
		     const void *data, uint32_t len);

/*
 * Delete an item.  Returns 0, -ENOENT, -EUCLEAN, or the store's errno.
 * Rebalancing after the removal is best effort: if it cannot allocate, the
 * item is still gone, the tree is valid but underfull, and 0 is returned.
 */
int zcow_tree_delete(struct zcow_tree *tree, const struct zcow_key *key);

/*
 * Writeback for the commit.  Calls @fn for every dirty node in ascending
 * bytenr order with a finished nodesize buffer (header, items, checksum);
 * stops at and returns the first non-zero return of @fn.  Nodes stay dirty
 * until zcow_tree_mark_clean(); a clean node is CoWed on its next change.
 * Returns 0, @fn's error, or -ENOMEM.
 */
int zcow_tree_for_each_dirty(struct zcow_tree *tree,
			     int (*fn)(void *arg, uint64_t bytenr,
				       const void *buf),
			     void *arg);
void zcow_tree_mark_clean(struct zcow_tree *tree);
/* Drop clean nodes from the cache (they are reread on demand). */
void zcow_tree_drop_clean(struct zcow_tree *tree);

/*
 * Iteration.  An iterator is positioned between items: after init, next()
 * returns the first item >= @start and prev() the last item < @start;
 * afterwards next()/prev() step from the item last returned.  The data
 * pointer is valid until the next change to the tree (or drop_clean or
 * release).  The tree may change between calls: the iterator notices and
 * re-searches from its last key.  Returns 0, -ENOENT at the end, or the
 * read errors of search.
 */
struct zcow_tree_iter {
	struct zcow_tree *tree;
	uint64_t seq;			/* tree->seq the path is valid for */
	struct zcow_key pos;		/* last key returned, or start */
	bool is_started;		/* pos is a returned key */
	int level;			/* root level of the path */
	struct zcow_cnode *nodes[ZCOW_MAX_LEVEL];
	int slots[ZCOW_MAX_LEVEL];
};

void zcow_tree_iter_init(struct zcow_tree_iter *iter, struct zcow_tree *tree,
			 const struct zcow_key *start);
int zcow_tree_iter_next(struct zcow_tree_iter *iter, struct zcow_key *key_ret,
			const void **data_ret, uint32_t *len_ret);
int zcow_tree_iter_prev(struct zcow_tree_iter *iter, struct zcow_key *key_ret,
			const void **data_ret, uint32_t *len_ret);

/*
 * Relocation: give every node of the tree whose address lies in [@lo,
 * @hi) a new address from the store (copy-on-write, also for a node
 * already dirty in this transaction), its ancestors made writable on the
 * way; the old addresses are dropped (free callback).  Internal nodes are
 * read, leaves only when they move.  *@nr_moved_ret (may be NULL): nodes
 * moved.  Returns 0, the store's alloc errno, or a read error; on an
 * error the nodes moved so far stay moved (the tree is consistent).
 */
int zcow_tree_relocate(struct zcow_tree *tree, uint64_t lo, uint64_t hi,
		       uint64_t *nr_moved_ret);

/*
 * Number of nodes (leaves and internal nodes) of the tree as it stands in
 * memory.  The first call reads the internal nodes (not the leaves); later
 * calls follow the node allocations and frees.  Returns the count or
 * -errno (read errors of search).
 */
int64_t zcow_tree_nr_nodes(struct zcow_tree *tree);

/* Number of items (walks the tree).  Returns the count or -errno. */
int64_t zcow_tree_nr_items(struct zcow_tree *tree);

/*
 * Decode and verify one node image @buf (nodesize bytes) as read from
 * @bytenr: checksum, bytenr, fsid, owner, level (-1: any), generation (0:
 * any), nritems and item bounds, key order.  0 or -EUCLEAN (logged).
 * Exposed for the checker and tests.
 */
int zcow_node_verify(const struct zcow_node_store *store, const void *buf,
		     uint64_t bytenr, uint64_t owner, int level, uint64_t gen);

#endif /* ZCOW_CTREE_H */
