// SPDX-License-Identifier: MIT
/*
 * The trees of a file system and the transaction commit (seed 007).
 *
 * Trees: the root tree (ROOT_ITEMs of the extent, device, fs and csum
 * trees) and the chunk tree are rooted from the superblock; the chunk
 * tree's system chunks are bootstrapped from the superblock's
 * sys_chunk_array.
 *
 * Extent items, the choice: btrfs runs delayed refs.  zcow keeps the same
 * idea in its simplest form: during a transaction the node store only
 * records reference changes (+1 allocated, -1 freed) in memory, and new or
 * removed block groups only in memory; the commit applies them to the
 * chunk, device, extent and root trees in a loop, because applying them
 * CoWs nodes and so creates new changes, until a round changes nothing
 * (nodes CoWed once are modified in place, so this converges in a few
 * rounds).  Only then are the nodes written.
 *
 * Commit order (each step marked ORDER: below; zcow_commit() calls one
 * static function per step):
 *   1. apply the delayed changes until nothing changes
 *      (commit_apply_delayed);
 *   2. write every dirty node (and every node freed before writeback,
 *      zeroed: "redirty") in ascending logical order; per block group the
 *      writes go exactly at the meta write pointer, plain writes, never
 *      zone append (nodes point at each other by logical address)
 *      (commit_write_nodes);
 *   3. flush (inside zcow_sb_write_all, which flushes first), then the
 *      superblock log with FUA: durable when the writes complete, no
 *      flush after them (btrfs's write_all_supers: one barrier, then
 *      the copies) (commit_fill_super, commit_write_super; then
 *      commit_next_transaction);
 *   4. only then: the zones of block groups this commit removed are reset
 *      (commit_reset_removed), and pinned -> zone_unusable
 *      (commit_unpin).
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csum.h"
#include "files.h"
#include "grow.h"
#include "le.h"
#include "fs.h"
#include "reclaim.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "txn"

#define ROOT_ITEM_SIZE		439u	/* struct btrfs_root_item */
/* Offset of its uuid; the other uuids and the times follow. */
#define ROOT_ITEM_UUID		247u
#define BG_ITEM_SIZE		24u	/* struct btrfs_block_group_item */
#define DEV_EXTENT_SIZE		48u	/* struct btrfs_dev_extent */
#define DEV_ITEM_SIZE		98u	/* struct btrfs_dev_item */
#define META_ITEM_SIZE		33u	/* extent item + one tree block ref */
#define EXTENT_FLAG_TREE_BLOCK	2ULL
#define TREE_BLOCK_REF_KEY	176
#define FIRST_FREE_OBJECTID	256ULL
#define MAX_COMMIT_ROUNDS	64
#define MAX_WRITE		(1u << 20)	/* bytes per metadata write */

struct zcow_tree *zcow_fs_tree_nr(struct zcow_fs *fs, int i)
{
	switch (i) {
	case 0:
		return &fs->root_tree;
	case 1:
		return &fs->chunk_tree;
	case 2:
		return &fs->extent_tree;
	case 3:
		return &fs->dev_tree;
	case 4:
		return &fs->fs_tree;
	case 5:
		return &fs->csum_tree;
	case 6:
		return &fs->uuid_tree;
	case 7:
		return &fs->reloc_tree;
	default:
		return NULL;
	}
}

struct zcow_tree *zcow_fs_tree(struct zcow_fs *fs, uint64_t objectid)
{
	int i;

	for (i = 0; i < ZCOW_NR_TREES; i++)
		if (zcow_fs_tree_nr(fs, i)->owner == objectid)
			return zcow_fs_tree_nr(fs, i);
	return NULL;
}

/* ---- the node store: allocation, reads, frees ------------------------- */

static void add_ref(struct zcow_fs *fs, uint64_t bytenr, uint64_t owner,
		    int level, int delta, bool is_same_trans)
{
	struct zcow_delayed_ref *r;

	if (ZCOW_GROW_ONE(&fs->refs, fs->nr_refs, &fs->refs_cap)) {
		fs->error = -ENOMEM;
		return;
	}
	r = &fs->refs[fs->nr_refs++];
	r->bytenr = bytenr;
	r->owner = owner;
	r->level = level;
	r->delta = delta;
	r->is_same_trans = is_same_trans;
}

static int store_alloc(void *arg, uint64_t owner, int level,
		       uint64_t *bytenr_ret)
{
	struct zcow_fs *fs = arg;
	uint64_t flags = owner == ZCOW_CHUNK_TREE_OBJECTID ? ZCOW_BG_SYSTEM :
							     ZCOW_BG_METADATA;
	int ret;

	if (fs->error)
		return fs->error;
	ret = zcow_bg_reserve(fs, flags, fs->nodesize, bytenr_ret);
	if (ret)
		return ret;
	fs->meta_allocs++;
	add_ref(fs, *bytenr_ret, owner, level, +1, false);
	return fs->error;
}

static int store_read(void *arg, uint64_t bytenr, void *buf)
{
	struct zcow_fs *fs = arg;
	struct zdev *dev;
	uint64_t phys;
	int ret;


	ret = zcow_map_logical_dev(fs, bytenr, fs->nodesize, &dev, &phys);
	if (ret)
		return ret;
	return zdev_read(dev, buf, fs->nodesize, phys, ZDEV_CLASS_META);
}

static void store_free(void *arg, uint64_t bytenr, uint64_t gen)
{
	struct zcow_fs *fs = arg;

	if (gen == fs->transid) {
		/*
		 * Allocated in this transaction, never written: it keeps its
		 * place in the sequence and is written zeroed (seed 007), so
		 * its bytes become unusable, not free.  The accounting waits
		 * for run_refs(), which knows whether the allocation was
		 * already turned into an extent item in an earlier round.
		 */
		if (ZCOW_GROW_ONE(&fs->redirty, fs->nr_redirty,
				  &fs->redirty_cap)) {
			fs->error = -ENOMEM;
			return;
		}
		fs->redirty[fs->nr_redirty++] = bytenr;
		add_ref(fs, bytenr, 0, -1, -1, true);
	} else {
		zcow_bg_pin(fs, bytenr, fs->nodesize);
		add_ref(fs, bytenr, 0, -1, -1, false);
	}
}

/* ---- items ------------------------------------------------------------- */

void zcow_root_item_encode(uint8_t *buf, const struct zcow_tree *tree,
			   uint32_t nodesize)
{
	uint64_t bytenr, gen;
	int level;

	zcow_tree_root(tree, &bytenr, &level, &gen);
	memset(buf, 0, ROOT_ITEM_SIZE);
	put64(buf + 0, 1);			/* inode.generation */
	put32(buf + 40, 1);			/* inode.nlink */
	put32(buf + 52, 040755);		/* inode.mode */
	put64(buf + 64, ZCOW_INODE_ROOT_ITEM_INIT);	/* inode.flags */
	put64(buf + 160, gen);			/* generation */
	put64(buf + 168, tree->owner == ZCOW_FS_TREE_OBJECTID ||
				 tree->owner == ZCOW_DATA_RELOC_TREE_OBJECTID ?
			 FIRST_FREE_OBJECTID : 0); /* root_dirid */
	put64(buf + 176, bytenr);		/* bytenr */
	put64(buf + 192, nodesize);		/* bytes_used (approx.) */
	put64(buf + 200, tree->share_gen);	/* last_snapshot */
	put32(buf + 216, 1);			/* refs */
	buf[238] = (uint8_t)level;		/* level */
	put64(buf + 239, gen);			/* generation_v2 */
}

int zcow_tree_put(struct zcow_tree *tree, const struct zcow_key *key,
		  const void *data, uint32_t len)
{
	int ret = zcow_tree_update(tree, key, data, len);

	if (ret == -ENOENT)
		ret = zcow_tree_insert(tree, key, data, len);
	return ret;
}

/*
 * A snapshot tree changes only when relocation moves its nodes or the
 * data extents it references: its root item keeps every field (the
 * read-only flag, the ids) but the root's address, level and generation.
 */
static int sync_snapshot_root_items(struct zcow_fs *fs, bool *changed_ret)
{
	uint8_t item[ROOT_ITEM_SIZE];
	struct zcow_key key;
	uint64_t i, bytenr, gen;
	uint32_t size;
	int level, ret;

	for (i = 0; i < zcow_files_nr_trees(fs); i++) {
		struct zcow_tree *tree = zcow_files_tree_nr(fs, i);

		if (!tree)
			continue;
		zcow_tree_root(tree, &bytenr, &level, &gen);
		ret = zcow_root_item_find(&fs->root_tree, tree->owner, &key,
					  item, &size);
		if (ret)
			return ret;
		if (size != ROOT_ITEM_SIZE)
			return -EUCLEAN;
		if (get64(item + 176) == bytenr && item[238] == level &&
		    get64(item + 160) == gen)
			continue;
		put64(item + 160, gen);
		put64(item + 176, bytenr);
		item[238] = (uint8_t)level;
		put64(item + 239, gen);
		ret = zcow_tree_update(&fs->root_tree, &key, item, size);
		if (ret)
			return ret;
		*changed_ret = true;
	}
	return 0;
}

/* Make the root items match the trees' roots; *changed_ret when written. */
static int sync_root_items(struct zcow_fs *fs, bool *changed_ret)
{
	static const uint64_t ids[] = { ZCOW_EXTENT_TREE_OBJECTID,
					ZCOW_DEV_TREE_OBJECTID,
					ZCOW_FS_TREE_OBJECTID,
					ZCOW_CSUM_TREE_OBJECTID,
					ZCOW_UUID_TREE_OBJECTID,
					ZCOW_DATA_RELOC_TREE_OBJECTID };
	uint8_t want[ROOT_ITEM_SIZE], have[ROOT_ITEM_SIZE];
	struct zcow_key key;
	uint32_t size;
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		zcow_root_item_encode(want, zcow_fs_tree(fs, ids[i]), fs->nodesize);
		key.objectid = ids[i];
		key.type = ZCOW_ROOT_ITEM_KEY;
		key.offset = 0;
		ret = zcow_tree_search(&fs->root_tree, &key, have,
				       sizeof(have), &size);
		/* The uuids and times (mkfs sets the fs tree's uuid) stay. */
		if (!ret && size == ROOT_ITEM_SIZE)
			memcpy(want + ROOT_ITEM_UUID, have + ROOT_ITEM_UUID,
			       ROOT_ITEM_SIZE - ROOT_ITEM_UUID);
		if (!ret && size == ROOT_ITEM_SIZE &&
		    !memcmp(have, want, ROOT_ITEM_SIZE))
			continue;
		if (ret && ret != -ENOENT)
			return ret;
		ret = zcow_tree_put(&fs->root_tree, &key, want,
				       ROOT_ITEM_SIZE);
		if (ret)
			return ret;
		*changed_ret = true;
	}
	return sync_snapshot_root_items(fs, changed_ret);
}

static void encode_bg_item(uint8_t *buf, const struct zcow_bg *bg)
{
	put64(buf, bg->used);
	put64(buf + 8, ZCOW_FIRST_CHUNK_TREE_OBJECTID);
	put64(buf + 16, bg->flags);
}

static int insert_bg_items(struct zcow_fs *fs, struct zcow_bg *bg)
{
	uint8_t chunk[ZCOW_CHUNK_ITEM_SIZE], de[DEV_EXTENT_SIZE], bgi[BG_ITEM_SIZE];
	struct zcow_key key;
	int ret;

	zcow_chunk_encode(bg, chunk);
	key.objectid = ZCOW_FIRST_CHUNK_TREE_OBJECTID;
	key.type = ZCOW_CHUNK_ITEM_KEY;
	key.offset = bg->start;
	ret = zcow_tree_insert(&fs->chunk_tree, &key, chunk, sizeof(chunk));
	if (ret)
		return ret;
	memset(de, 0, sizeof(de));
	put64(de, ZCOW_CHUNK_TREE_OBJECTID);
	put64(de + 8, ZCOW_FIRST_CHUNK_TREE_OBJECTID);
	put64(de + 16, bg->start);
	put64(de + 24, bg->length);
	memcpy(de + 32, fs->store.chunk_tree_uuid, 16);
	key.objectid = bg->devid;
	key.type = ZCOW_DEV_EXTENT_KEY;
	key.offset = bg->physical;
	ret = zcow_tree_insert(&fs->dev_tree, &key, de, sizeof(de));
	if (ret)
		return ret;
	encode_bg_item(bgi, bg);
	key.objectid = bg->start;
	key.type = ZCOW_BLOCK_GROUP_ITEM_KEY;
	key.offset = bg->length;
	ret = zcow_tree_insert(&fs->extent_tree, &key, bgi, sizeof(bgi));
	if (ret)
		return ret;
	bg->item_used = bg->used;
	bg->is_new = false;
	return 0;
}

static int delete_bg_items(struct zcow_fs *fs, struct zcow_bg *bg)
{
	struct zcow_key key;
	int ret;

	key.objectid = ZCOW_FIRST_CHUNK_TREE_OBJECTID;
	key.type = ZCOW_CHUNK_ITEM_KEY;
	key.offset = bg->start;
	ret = zcow_tree_delete(&fs->chunk_tree, &key);
	if (ret)
		return ret;
	key.objectid = bg->devid;
	key.type = ZCOW_DEV_EXTENT_KEY;
	key.offset = bg->physical;
	ret = zcow_tree_delete(&fs->dev_tree, &key);
	if (ret)
		return ret;
	key.objectid = bg->start;
	key.type = ZCOW_BLOCK_GROUP_ITEM_KEY;
	key.offset = bg->length;
	ret = zcow_tree_delete(&fs->extent_tree, &key);
	if (ret)
		return ret;
	if (bg->flags & ZCOW_BG_SYSTEM)
		zcow_drop_sys_chunk(fs, bg);
	bg->is_deleted = true;
	return 0;
}

/* Each device's DEV_ITEM (chunk tree) with the bytes its groups hold. */
static int sync_dev_item(struct zcow_fs *fs, bool *changed_ret)
{
	uint8_t have[DEV_ITEM_SIZE];
	unsigned int d;
	uint32_t size;
	uint64_t i;
	int ret;

	for (d = 0; d < fs->nr_devs; d++) {
		struct zcow_device *zd = &fs->devs[d];
		struct zcow_dev_item di = zd->item;
		struct zcow_key key = { ZCOW_DEV_ITEMS_OBJECTID,
					ZCOW_DEV_ITEM_KEY, zd->devid };
		uint64_t bytes = 0;

		for (i = 0; i < fs->nr_bgs; i++)
			if (!fs->bgs[i]->is_deleted && fs->bgs[i]->dev == zd)
				bytes += fs->bgs[i]->length;
		di.bytes_used = htole64(bytes);
		ret = zcow_tree_search(&fs->chunk_tree, &key, have,
				       sizeof(have), &size);
		if (!ret && size == DEV_ITEM_SIZE &&
		    !memcmp(have, &di, DEV_ITEM_SIZE))
			continue;
		if (ret && ret != -ENOENT)
			return ret;
		ret = zcow_tree_put(&fs->chunk_tree, &key, &di, DEV_ITEM_SIZE);
		if (ret)
			return ret;
		zd->item = di;
		*changed_ret = true;
	}
	fs->sb.dev_item = fs->devs[0].item;
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct zcow_delayed_ref *x = a, *y = b;

	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* Run the recorded reference changes against the extent tree. */
static int run_refs(struct zcow_fs *fs, bool *changed_ret)
{
	struct zcow_delayed_ref *refs = fs->refs;
	uint64_t nr = fs->nr_refs, i, j;
	uint8_t item[META_ITEM_SIZE];
	struct zcow_key key;
	int ret = 0;

	if (!nr)
		return 0;
	*changed_ret = true;
	/* Take the list: applying it records new changes. */
	fs->refs = NULL;
	fs->nr_refs = fs->refs_cap = 0;
	qsort(refs, nr, sizeof(*refs), cmp_ref);
	for (i = 0; i < nr; i = j) {
		const struct zcow_delayed_ref *add = NULL;
		bool is_same_trans = false;
		int sum = 0;

		for (j = i; j < nr && refs[j].bytenr == refs[i].bytenr; j++) {
			sum += refs[j].delta;
			if (refs[j].delta > 0)
				add = &refs[j];
			if (refs[j].is_same_trans)
				is_same_trans = true;
		}
		/*
		 * Accounting of a block allocated and freed in this
		 * transaction: still a reservation (0) or already an extent
		 * (-1 here, +1 in an earlier round): unusable either way.
		 */
		if (sum == 0 && is_same_trans)
			zcow_bg_release(fs, refs[i].bytenr, fs->nodesize, true);
		else if (sum == -1 && is_same_trans)
			zcow_bg_drop_used(fs, refs[i].bytenr, fs->nodesize);
		if (sum == 1 && add) {
			memset(item, 0, sizeof(item));
			put64(item, 1);				/* refs */
			put64(item + 8, fs->transid);		/* generation */
			put64(item + 16, EXTENT_FLAG_TREE_BLOCK);/* flags */
			item[24] = TREE_BLOCK_REF_KEY;
			put64(item + 25, add->owner);
			key.objectid = add->bytenr;
			key.type = ZCOW_METADATA_ITEM_KEY;
			key.offset = (uint64_t)add->level;
			ret = zcow_tree_insert(&fs->extent_tree, &key, item,
					       sizeof(item));
			if (ret)
				goto out;
			zcow_bg_use_reserved(fs, add->bytenr, fs->nodesize);
		} else if (sum == -1) {
			struct zcow_tree_iter it;
			struct zcow_key found;

			key.objectid = refs[i].bytenr;
			key.type = ZCOW_METADATA_ITEM_KEY;
			key.offset = 0;
			zcow_tree_iter_init(&it, &fs->extent_tree, &key);
			ret = zcow_tree_iter_next(&it, &found, NULL, NULL);
			if (ret || found.objectid != key.objectid ||
			    found.type != ZCOW_METADATA_ITEM_KEY) {
				zlog_err(TAG, "freed tree block %" PRIu64 " has no extent item",
					 key.objectid);
				ret = -EUCLEAN;
				goto out;
			}
			ret = zcow_tree_delete(&fs->extent_tree, &found);
			if (ret)
				goto out;
		} else if (sum != 0) {
			zlog_err(TAG, "tree block %" PRIu64 ": reference change %d",
				 refs[i].bytenr, sum);
			ret = -EUCLEAN;
			goto out;
		}
	}
out:
	free(refs);
	return ret;
}

/*
 * Data and metadata groups this transaction emptied (a relocation, or
 * the last live bytes freed): removed by this commit, not the next
 * (*changed_ret: their items go in the next round).  Nothing durable
 * after this commit references them, and the superblock before it still
 * finds their old contents, since the zones are reset only after this
 * commit's superblock (commit_reset_removed).  Not a group created in
 * this transaction (it has no items yet), not one with nodes allocated
 * in it and not written yet, not a system group, the tree-log group or
 * a group a replace copies: those go by zcow_bg_unpin_all() after the
 * commit, as before.
 */
static void mark_emptied(struct zcow_fs *fs, bool *changed_ret)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];
		uint64_t type = bg->flags & ZCOW_BG_TYPE_MASK;

		if ((type != ZCOW_BG_DATA && type != ZCOW_BG_METADATA) ||
		    bg->is_new || bg->is_removing || bg->is_deleted ||
		    bg->is_ro || bg->is_copying || bg->used || bg->reserved ||
		    bg->start == fs->treelog_bg ||
		    bg->zone_unusable + bg->pinned != bg->length ||
		    (type == ZCOW_BG_METADATA && bg->meta_wp < bg->alloc_offset))
			continue;
		bg->is_removing = true;
		*changed_ret = true;
	}
}

/* Apply every delayed change until a round changes nothing. */
static int apply_delayed(struct zcow_fs *fs)
{
	struct zcow_key key;
	uint8_t bgi[BG_ITEM_SIZE];
	uint64_t round, i;
	bool changed;
	int ret;

	for (round = 1; round <= MAX_COMMIT_ROUNDS; round++) {
		changed = false;
		for (i = 0; i < fs->nr_bgs; i++) {
			struct zcow_bg *bg = fs->bgs[i];

			if (bg->is_new && !bg->is_removing) {
				ret = insert_bg_items(fs, bg);
				if (ret)
					return ret;
				changed = true;
			}
			if (bg->is_removing && !bg->is_deleted) {
				ret = delete_bg_items(fs, bg);
				if (ret)
					return ret;
				changed = true;
			}
		}
		ret = sync_dev_item(fs, &changed);
		if (ret)
			return ret;
		ret = zcow_replace_sync_item(fs, &changed);
		if (ret)
			return ret;
		ret = sync_root_items(fs, &changed);
		if (ret)
			return ret;
		ret = run_refs(fs, &changed);
		if (ret)
			return ret;
		mark_emptied(fs, &changed);
		for (i = 0; i < fs->nr_bgs; i++) {
			struct zcow_bg *bg = fs->bgs[i];

			if (bg->is_new || bg->is_deleted ||
			    bg->used == bg->item_used)
				continue;
			key.objectid = bg->start;
			key.type = ZCOW_BLOCK_GROUP_ITEM_KEY;
			key.offset = bg->length;
			bg->item_used = bg->used;
			encode_bg_item(bgi, bg);
			ret = zcow_tree_update(&fs->extent_tree, &key, bgi,
					       sizeof(bgi));
			if (ret)
				return ret;
			changed = true;
		}
		if (fs->error)
			return fs->error;
		if (!changed) {
			if (round > fs->cstats.max_rounds)
				fs->cstats.max_rounds = round;
			return 0;
		}
	}
	zlog_err(TAG, "commit: delayed changes did not settle in %d rounds",
		 MAX_COMMIT_ROUNDS);
	return -EUCLEAN;
}

/* ---- writeback ---------------------------------------------------------- */

struct wlist {
	struct zcow_wnode *v;
	uint64_t nr;
	uint8_t *arena;
	uint32_t nodesize;
};

static int collect(void *arg, uint64_t bytenr, const void *buf)
{
	struct wlist *wl = arg;
	struct zcow_wnode *w = &wl->v[wl->nr];

	w->bytenr = bytenr;
	w->buf = wl->arena + wl->nr * (uint64_t)wl->nodesize;
	memcpy(w->buf, buf, wl->nodesize);
	wl->nr++;
	return 0;
}

static int cmp_wnode(const void *a, const void *b)
{
	const struct zcow_wnode *x = a, *y = b;

	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/*
 * Write @len bytes at logical @logical of @bg exactly at its meta write
 * pointer (zeros first if a gap was left by a rounded-up offset).
 */
int zcow_write_at_meta_wp(struct zcow_fs *fs, struct zcow_bg *bg,
			  uint64_t logical, const uint8_t *buf, uint64_t len)
{
	uint64_t off = logical - bg->start;
	/* Only log nodes live in the tree-log group (seed 010). */
	enum zdev_class cls = bg->start == fs->treelog_bg ? ZDEV_CLASS_LOG :
							    ZDEV_CLASS_META;
	int ret;

	if (off < bg->meta_wp) {
		zlog_err(TAG, "node %" PRIu64 " is behind block group %" PRIu64 "'s meta write pointer %" PRIu64,
			 logical, bg->start, bg->meta_wp);
		return -EUCLEAN;
	}
	if (off > bg->meta_wp) {
		uint64_t gap = off - bg->meta_wp;
		uint8_t *zero = calloc(1, gap);

		if (!zero)
			return -ENOMEM;
		ret = zcow_bg_write(fs, bg, zero, gap, bg->meta_wp, 0, cls);
		free(zero);
		if (ret)
			return ret;
		bg->meta_wp = off;
		fs->cstats.write_cmds++;
	}
	ret = zcow_bg_write(fs, bg, buf, len, off, 0, cls);
	if (ret)
		return ret;
	bg->meta_wp += len;
	fs->cstats.write_cmds++;
	return 0;
}

/* zcow_write_node_list() with @run (MAX_WRITE bytes, or nr * nodesize
 * if less) to coalesce into. */
static int write_node_list(struct zcow_fs *fs, struct zcow_wnode *v,
			   uint64_t nr, uint8_t *run)
{
	uint32_t ns = fs->nodesize;
	uint64_t i, j;
	int ret = 0;

	/* Allocation order = logical order: sequential in every group. */
	qsort(v, nr, sizeof(*v), cmp_wnode);
	for (i = 0; i < nr; i = j) {
		struct zcow_bg *bg = zcow_bg_lookup(fs, v[i].bytenr);
		uint64_t len = 0;

		if (!bg) {
			zlog_err(TAG, "node %" PRIu64 " lies in no block group",
				 v[i].bytenr);
			ret = -EUCLEAN;
			break;
		}
		/* Coalesce contiguous nodes of one group into one write. */
		for (j = i; j < nr && len + ns <= MAX_WRITE &&
			    v[j].bytenr == v[i].bytenr + len &&
			    v[j].bytenr + ns <= bg->start + bg->length;
		     j++) {
			if (v[j].buf)
				memcpy(run + len, v[j].buf, ns);
			else
				memset(run + len, 0, ns);
			len += ns;
		}
		ret = zcow_write_at_meta_wp(fs, bg, v[i].bytenr, run, len);
		if (ret)
			break;
	}
	return ret;
}

/* The coalescing buffer for @nr nodes: no larger than they need (an
 * fsync's log writes a few nodes, and a 1 MiB malloc is an mmap whose
 * pages fault anew every time). */
static uint64_t run_bytes(const struct zcow_fs *fs, uint64_t nr)
{
	return nr < MAX_WRITE / fs->nodesize ? nr * fs->nodesize : MAX_WRITE;
}

int zcow_write_node_list(struct zcow_fs *fs, struct zcow_wnode *v,
			 uint64_t nr)
{
	uint8_t *run;
	int ret;

	if (!nr)
		return 0;
	run = malloc(run_bytes(fs, nr));
	if (!run)
		return -ENOMEM;
	ret = write_node_list(fs, v, nr, run);
	free(run);
	return ret;
}

/* zcow_commit_stats.nodes_by_tree: the trees of zcow_fs_tree_nr() in
 * its order (snapshots count as fs), the nodes written zeroed last. */
#define TREE_STAT_FS		4
#define TREE_STAT_ZEROED	8
static const char *const tree_stat_names[ZCOW_COMMIT_NR_TREES] = {
	"root", "chunk", "extent", "dev", "fs", "csum", "uuid", "data_reloc",
	"zeroed",
};

_Static_assert(ZCOW_NR_TREES + 1 == ZCOW_COMMIT_NR_TREES,
	       "one counter per tree and one for the zeroed nodes");

const char *zcow_commit_tree_name(int i)
{
	return i >= 0 && i < ZCOW_COMMIT_NR_TREES ? tree_stat_names[i] : NULL;
}

static int write_nodes(struct zcow_fs *fs)
{
	uint32_t ns = fs->nodesize;
	struct wlist wl = { .nodesize = ns };
	uint64_t nr_dirty = 0, i, by_tree[ZCOW_COMMIT_NR_TREES] = { 0 }, need;
	int t, ret = 0;

	for (t = 0; t < ZCOW_NR_TREES; t++)
		nr_dirty += zcow_fs_tree_nr(fs, t)->nr_dirty;
	for (i = 0; i < zcow_files_nr_trees(fs); i++)	/* files: snapshots */
		if (zcow_files_tree_nr(fs, i))
			nr_dirty += zcow_files_tree_nr(fs, i)->nr_dirty;
	if (!nr_dirty && !fs->nr_redirty)
		return 0;
	/*
	 * The image arena, and after the images the buffer the writes
	 * coalesce in, is kept between commits: no page faults anew.  It
	 * grows to twice what is asked (commits grow with the trees; each
	 * new arena faults in every page again).
	 */
	need = nr_dirty * (uint64_t)ns +
	       run_bytes(fs, nr_dirty + fs->nr_redirty);
	if (fs->wb_arena_size < need) {
		free(fs->wb_arena);
		fs->wb_arena_size = 2 * need;
		fs->wb_arena = malloc(fs->wb_arena_size);
		if (!fs->wb_arena)
			fs->wb_arena_size = 0;
	}
	wl.arena = fs->wb_arena;
	wl.v = malloc((nr_dirty + fs->nr_redirty) * sizeof(*wl.v));
	if (!wl.v || !wl.arena) {
		ret = -ENOMEM;
		goto out;
	}
	for (t = 0; t < ZCOW_NR_TREES; t++) {
		ret = zcow_tree_for_each_dirty(zcow_fs_tree_nr(fs, t), collect,
					       &wl);
		if (ret)
			goto out;
	}
	for (i = 0; i < zcow_files_nr_trees(fs); i++) {	/* files: snapshots */
		if (!zcow_files_tree_nr(fs, i))
			continue;
		ret = zcow_tree_for_each_dirty(zcow_files_tree_nr(fs, i),
					       collect, &wl);
		if (ret)
			goto out;
	}
	for (t = 0; t < ZCOW_NR_TREES; t++)
		by_tree[t] = zcow_fs_tree_nr(fs, t)->nr_dirty;
	for (i = 0; i < zcow_files_nr_trees(fs); i++)
		if (zcow_files_tree_nr(fs, i))
			by_tree[TREE_STAT_FS] +=
				zcow_files_tree_nr(fs, i)->nr_dirty;
	by_tree[TREE_STAT_ZEROED] = fs->nr_redirty;
	for (i = 0; i < fs->nr_redirty; i++) {
		wl.v[wl.nr].bytenr = fs->redirty[i];
		wl.v[wl.nr].buf = NULL;
		wl.nr++;
	}
	ret = wl.nr ? write_node_list(fs, wl.v, wl.nr,
				      wl.arena + nr_dirty * (uint64_t)ns) : 0;
	if (ret)
		goto out;
	fs->cstats.nodes_written += wl.nr;
	for (t = 0; t < ZCOW_COMMIT_NR_TREES; t++)
		fs->cstats.nodes_by_tree[t] += by_tree[t];
	fs->cstats.nodes_redirtied += fs->nr_redirty;
	fs->cstats.last_nodes_written = wl.nr;
	/* A decaying peak of the commits' size: what the cleaner keeps
	 * metadata room for (core/reclaim.c). */
	fs->commit_clock[1] = fs->commit_clock[0];
	fs->commit_clock[0] = fs->alloc_clock;
	fs->commit_nodes_peak -= fs->commit_nodes_peak / 16;
	if (wl.nr > fs->commit_nodes_peak)
		fs->commit_nodes_peak = wl.nr;
out:
	free(wl.v);
	return ret;
}

static void fill_backup_root(struct zcow_fs *fs, struct zcow_super_block *sb)
{
	struct zcow_root_backup *b = &sb->super_roots[fs->transid % 4];
	uint64_t bytenr, gen;
	int level;

	memset(b, 0, sizeof(*b));
#define BACKUP(tree, field)                                                  \
	do {                                                                 \
		zcow_tree_root(&fs->tree, &bytenr, &level, &gen);            \
		b->field = htole64(bytenr);                                  \
		b->field##_gen = htole64(gen);                               \
		b->field##_level = (uint8_t)level;                           \
	} while (0)
	BACKUP(root_tree, tree_root);
	BACKUP(chunk_tree, chunk_root);
	BACKUP(extent_tree, extent_root);
	BACKUP(fs_tree, fs_root);
	BACKUP(dev_tree, dev_root);
	BACKUP(csum_tree, csum_root);
#undef BACKUP
	b->total_bytes = sb->total_bytes;
	b->bytes_used = sb->bytes_used;
	b->num_devices = sb->num_devices;
}

static int commit_sb_only(struct zcow_fs *fs)
{
	struct zcow_super_block *sb;
	int ret;

	sb = malloc(sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	*sb = fs->sb;
	sb->generation = htole64(fs->generation + 1);
	sb->flags |= htole64(ZCOW_SUPER_FLAG_WRITTEN);
	ret = zcow_fs_write_super(fs, sb);
	if (ret) {
		zlog_err(TAG, "commit of generation %" PRIu64 " failed: %d",
			 fs->generation + 1, ret);
		fs->error = ret;
		goto out;
	}
	fs->sb = *sb;
	fs->generation++;
out:
	free(sb);
	return ret;
}

/*
 * Commit step 1: apply the delayed changes until nothing changes, after
 * the tree-log's group is readied and the root tree's root copied.
 */
static int commit_apply_delayed(struct zcow_fs *fs)
{
	int ret;

	zcow_log_commit_prepare(fs);
	/*
	 * Every generation has its own root tree: btrfs-progs reads the root
	 * tree expecting the superblock's generation, so even a commit that
	 * changed nothing else copies the root tree's root.
	 */
	ret = zcow_tree_cow_root(&fs->root_tree);
	if (ret)
		return ret;
	return apply_delayed(fs);
}

/* Commit step 2: write every dirty and every redirtied node. */
static int commit_write_nodes(struct zcow_fs *fs)
{
	/*
	 * ORDER: every node of this transaction (and every redirtied one) is
	 * written before the superblock that references them; writes are
	 * plain and sequential at each group's meta write pointer.
	 */
	return write_nodes(fs);
}

/* The superblock of this commit: the roots, bytes used, no tree-log. */
static void commit_fill_super(struct zcow_fs *fs, struct zcow_super_block *sb)
{
	uint64_t bytenr, gen, used = 0, i;
	int level;

	*sb = fs->sb;
	zcow_tree_root(&fs->root_tree, &bytenr, &level, &gen);
	sb->root = htole64(bytenr);
	sb->root_level = (uint8_t)level;
	zcow_tree_root(&fs->chunk_tree, &bytenr, &level, &gen);
	sb->chunk_root = htole64(bytenr);
	sb->chunk_root_level = (uint8_t)level;
	sb->chunk_root_generation = htole64(gen);
	for (i = 0; i < fs->nr_bgs; i++)
		if (!fs->bgs[i]->is_deleted)
			used += fs->bgs[i]->used;
	sb->bytes_used = htole64(used);
	sb->generation = htole64(fs->transid);
	sb->flags |= htole64(ZCOW_SUPER_FLAG_WRITTEN);
	/* A commit holds everything the tree-log held: no log after it. */
	sb->log_root = 0;
	sb->log_root_level = 0;
	sb->log_root_transid = 0;
	fill_backup_root(fs, sb);
}

/*
 * Commit step 3: flush, the superblock log with FUA: the commit is durable
 * when this returns 0.  As btrfs's write_all_supers (Linux 6.1
 * fs/btrfs/disk-io.c: barrier_all_devices, then write_dev_supers), one
 * flush per commit: each copy is written with FUA, so nothing after it
 * needs another.
 */
static int commit_write_super(struct zcow_fs *fs,
			      struct zcow_super_block *sb)
{
	uint64_t i;

	/* Test-only mutation 1 (docs/crash.md): reset the removed block
	 * groups before the commit that drops them is durable. */
	if (fs->mutation == ZCOW_MUT_CLEANED_RESET_EARLY)
		for (i = 0; i < fs->nr_bgs; i++)	/* TEST-ONLY */
			if (fs->bgs[i]->is_cleaned && fs->bgs[i]->is_deleted &&
			    fs->bgs[i]->is_seq)
				zcow_bg_reset_zone(fs, fs->bgs[i]);
	if (fs->mutation == ZCOW_MUT_RESET_BEFORE_COMMIT)
		for (i = 0; i < fs->nr_bgs; i++) {
			struct zcow_bg *mbg = fs->bgs[i];
			bool all;

			/* groups this commit empties (pinned space counted
			 * as unusable already): the previous superblock
			 * still references their data */
			all = mbg->zone_unusable + mbg->pinned == mbg->length &&
			      !mbg->used && !mbg->reserved;
			if ((all || mbg->is_deleted) && mbg->is_seq &&
			    !(mbg->flags & ZCOW_BG_SYSTEM))
				zcow_bg_reset_zone(fs, mbg);
		}
	/*
	 * ORDER: the nodes are durable before the superblock that points at
	 * them: zcow_sb_write_all() flushes first, then writes every mirror
	 * with FUA, so the superblock log is durable before anything after
	 * it (the zone resets of commit_reset_removed, the next
	 * transaction's writes).
	 */
	return zcow_fs_write_super(fs, sb);
}

/* The durable commit's superblock is the fs's; a new transaction opens
 * with every tree clean. */
static void commit_next_transaction(struct zcow_fs *fs,
				    const struct zcow_super_block *sb)
{
	uint64_t i;
	int t;

	fs->sb = *sb;
	fs->generation = fs->transid;
	fs->transid++;
	zcow_zoned_note_transid(fs);
	fs->nr_redirty = 0;
	for (t = 0; t < ZCOW_NR_TREES; t++) {
		struct zcow_tree *tree = zcow_fs_tree_nr(fs, t);

		zcow_tree_mark_clean(tree);
		zcow_tree_set_transid(tree, fs->transid);
	}
	for (i = 0; i < zcow_files_nr_trees(fs); i++) {	/* files: snapshots */
		struct zcow_tree *tree = zcow_files_tree_nr(fs, i);

		if (!tree)
			continue;
		zcow_tree_mark_clean(tree);
		zcow_tree_set_transid(tree, fs->transid);
	}
	fs->cstats.nr_commits++;
}

/* Commit step 4a: reset the zones of the block groups it removed. */
static void commit_reset_removed(struct zcow_fs *fs)
{
	uint64_t i;
	int ret;

	/*
	 * ORDER: the commit that dropped these block groups is durable: only
	 * now may their zones be reset (a crash before leaves the data that
	 * the previous superblock still references).
	 */
	for (i = 0; i < fs->nr_bgs;) {
		struct zcow_bg *bg = fs->bgs[i];

		if (!bg->is_deleted) {
			if (bg->is_cleaned && !bg->is_removing &&
			    (bg->used || bg->reserved)) {
				/* Still used after the commit that was to
				 * remove it: it takes allocations again. */
				zlog_warn(TAG, "block group %" PRIu64 ": %" PRIu64 " bytes still used after relocation",
					  bg->start, bg->used);
				bg->is_cleaned = false;
				bg->is_relocating = false;
			}
			i++;
			continue;
		}
		ret = zcow_bg_reset_zone(fs, bg);
		if (ret)
			zlog_warn(TAG, "reset of removed block group %" PRIu64 " failed: %d (reset at reuse)",
				  bg->start, ret);
		else
			fs->rstats.zones_reset++;
		zcow_zoned_forget_reloc(fs, bg);
		zcow_bg_remove(fs, bg);
	}
}

/* Commit step 4b: drop the tree-log, pinned -> zone_unusable. */
static void commit_unpin(struct zcow_fs *fs)
{
	/* ORDER: the commit is durable: the log is garbage (tree-log), and
	 * pinned space is unusable now. */
	zcow_log_commit_done(fs);
	zcow_bg_unpin_all(fs);
}

int zcow_commit(struct zcow_fs *fs)
{
	struct zcow_super_block *sb = NULL;
	int ret;

	if (fs->read_only || fs->error)
		return -EROFS;
	if (!fs->has_trees)
		return commit_sb_only(fs);
	ret = commit_apply_delayed(fs);
	if (ret)
		goto fail;
	ret = commit_write_nodes(fs);
	if (ret)
		goto fail;
	sb = malloc(sizeof(*sb));
	if (!sb) {
		ret = -ENOMEM;
		goto fail;
	}
	commit_fill_super(fs, sb);
	ret = commit_write_super(fs, sb);
	if (ret)
		goto fail;
	commit_next_transaction(fs, sb);
	commit_reset_removed(fs);
	commit_unpin(fs);
	free(sb);
	return 0;
fail:
	zlog_err(TAG, "commit of generation %" PRIu64 " failed: %d",
		 fs->transid, ret);
	fs->error = ret;
	free(sb);
	return ret;
}

/*
 * The commit of the file layer and of a flush (fs->files->lock held):
 * zcow_commit(), and a second one when the first left whole unusable
 * block groups.
 */
int zcow_files_commit_locked(struct zcow_fs *fs)
{
	uint64_t i;
	int err, round;

	zcow_zoned_note_commit(fs);
	/* Two rounds when the first leaves whole unusable groups it could
	 * not remove itself (mark_emptied(): system groups, groups of its
	 * own transaction): the second deletes their items and resets their
	 * zones. */
	for (round = 0; round < 2; round++) {
		bool removing = false;

		err = zcow_commit(fs);
		if (err)
			return err;
		fs->files->dirty_bytes = 0;
		for (i = 0; i < fs->nr_bgs; i++)
			if (fs->bgs[i]->is_removing && !fs->bgs[i]->is_deleted)
				removing = true;
		if (!removing)
			break;
	}
	return zcow_reclaim_locked(fs, ZCOW_RECLAIM_AT_COMMIT);
}


/* ---- setup --------------------------------------------------------------- */

static int init_store(struct zcow_fs *fs)
{
	fs->nodesize = le32toh(fs->sb.nodesize);
	fs->store.alloc = store_alloc;
	fs->store.read = store_read;
	fs->store.free = store_free;
	fs->store.release = zcow_store_release;
	fs->store.arg = fs;
	fs->store.nodesize = fs->nodesize;
	memcpy(fs->store.fsid, fs->sb.fsid, ZCOW_FSID_SIZE);
	memcpy(fs->store.chunk_tree_uuid, fs->sb.dev_item.uuid,
	       ZCOW_UUID_SIZE);
	return 0;
}

void zcow_fs_count_writable(struct zcow_fs *fs)
{
	uint64_t zs = fs->dev->info.zone_size, z;
	unsigned int d;

	fs->writable_bytes = 0;
	for (d = 0; d < fs->nr_devs; d++) {
		struct zcow_device *zd = &fs->devs[d];

		zd->writable_bytes = 0;
		/* as the allocator counts (find_free_zone()) */
		for (z = 0; z + zs <= zcow_device_size(zd); z += zs)
			if (!zcow_zone_is_sb(fs, zd->zdev, z))
				zd->writable_bytes += zs;
		fs->writable_bytes += zd->writable_bytes;
	}
}

static const uint64_t tree_ids[ZCOW_NR_TREES] = {
	ZCOW_ROOT_TREE_OBJECTID, ZCOW_CHUNK_TREE_OBJECTID,
	ZCOW_EXTENT_TREE_OBJECTID, ZCOW_DEV_TREE_OBJECTID,
	ZCOW_FS_TREE_OBJECTID, ZCOW_CSUM_TREE_OBJECTID,
	ZCOW_UUID_TREE_OBJECTID, ZCOW_DATA_RELOC_TREE_OBJECTID,
};

/* An INODE_REF (struct btrfs_inode_ref + name) of @name, index @index. */
static int insert_inode_ref(struct zcow_tree *tree, uint64_t ino,
			    uint64_t parent, uint64_t index, const char *name)
{
	struct zcow_key key = { ino, ZCOW_INODE_REF_KEY, parent };
	uint8_t ref[ZCOW_INODE_REF_HDR + 16];
	size_t len = strlen(name);

	put64(ref, index);
	put16(ref + 8, (uint16_t)len);
	memcpy(ref + ZCOW_INODE_REF_HDR, name, len);
	return zcow_tree_insert(tree, &key, ref,
				(uint32_t)(ZCOW_INODE_REF_HDR + len));
}

/* A directory inode @ino (mode 040755, nlink 1, empty, its times
 * zcow_mkfs_opts.time) with its ".." reference to itself: the root
 * directory of a tree, as mkfs makes it. */
static int insert_root_dir(struct zcow_fs *fs, struct zcow_tree *tree,
			   uint64_t ino, uint64_t nbytes)
{
	struct zcow_key key = { ino, ZCOW_INODE_ITEM_KEY, 0 };
	uint8_t item[ZCOW_INODE_ITEM_SIZE];
	struct zcow_inode in;
	int ret;

	memset(&in, 0, sizeof(in));
	in.ino = ino;
	in.generation = fs->transid;
	in.nbytes = nbytes;
	in.nlink = 1;
	in.mode = S_IFDIR | 0755;
	in.atime = in.ctime = in.mtime = in.otime = fs->mkfs_time;
	zcow_inode_encode(&in, item);
	ret = zcow_tree_insert(tree, &key, item, sizeof(item));
	if (!ret)
		ret = insert_inode_ref(tree, ino, ino, 0, "..");
	return ret;
}

/*
 * What btrfs-progs' mkfs puts into a new file system beyond the trees'
 * roots (docs/format.md, "mkfs"): the root directory 256 of the fs tree
 * and of the data relocation tree; the fs tree's root item with its
 * uuid @subvol_uuid, entered in the uuid tree; the root tree's directory
 * 6 with the entry "default" that names the fs tree.
 */
static int mkfs_items(struct zcow_fs *fs, const uint8_t *subvol_uuid)
{
	struct zcow_key key;
	uint8_t item[ROOT_ITEM_SIZE], dir[ZCOW_DIR_ITEM_HDR + 7], id[8];
	uint8_t inode[ZCOW_INODE_ITEM_SIZE];
	struct zcow_inode in;
	int ret;

	ret = insert_root_dir(fs, &fs->fs_tree, FIRST_FREE_OBJECTID,
			      fs->nodesize);
	if (!ret)
		ret = insert_root_dir(fs, &fs->reloc_tree, FIRST_FREE_OBJECTID,
				      0);
	if (ret)
		return ret;
	zcow_root_item_encode(item, &fs->fs_tree, fs->nodesize);
	memcpy(item + ROOT_ITEM_UUID, subvol_uuid, ZCOW_UUID_SIZE);
	key.objectid = ZCOW_FS_TREE_OBJECTID;
	key.type = ZCOW_ROOT_ITEM_KEY;
	key.offset = 0;
	ret = zcow_tree_insert(&fs->root_tree, &key, item, sizeof(item));
	if (ret)
		return ret;
	/* uuid tree key: the uuid's two halves as little-endian numbers */
	key.objectid = get64(subvol_uuid);
	key.type = ZCOW_UUID_KEY_SUBVOL;
	key.offset = get64(subvol_uuid + 8);
	put64(id, ZCOW_FS_TREE_OBJECTID);
	ret = zcow_tree_insert(&fs->uuid_tree, &key, id, sizeof(id));
	if (ret)
		return ret;
	/* The root tree's directory: its inode and "..", as the fs tree's
	 * root directory; its entry "default" (a DIR_ITEM only) locates the
	 * fs tree's root item (offset -1: the newest), and the fs tree's
	 * INODE_REF names it back. */
	memset(&in, 0, sizeof(in));
	in.ino = ZCOW_ROOT_TREE_DIR_OBJECTID;
	in.generation = fs->transid;
	in.nbytes = fs->nodesize;
	in.nlink = 1;
	in.mode = S_IFDIR | 0755;
	zcow_inode_encode(&in, inode);
	key.objectid = ZCOW_ROOT_TREE_DIR_OBJECTID;
	key.type = ZCOW_INODE_ITEM_KEY;
	key.offset = 0;
	ret = zcow_tree_insert(&fs->root_tree, &key, inode, sizeof(inode));
	if (!ret)
		ret = insert_inode_ref(&fs->root_tree,
				       ZCOW_ROOT_TREE_DIR_OBJECTID,
				       ZCOW_ROOT_TREE_DIR_OBJECTID, 0, "..");
	if (!ret)
		ret = insert_inode_ref(&fs->root_tree, ZCOW_FS_TREE_OBJECTID,
				       ZCOW_ROOT_TREE_DIR_OBJECTID, 0,
				       ZCOW_DEFAULT_SUBVOL_NAME);
	if (ret)
		return ret;
	put64(dir, ZCOW_FS_TREE_OBJECTID);	/* location.objectid */
	dir[8] = ZCOW_ROOT_ITEM_KEY;		/* location.type */
	put64(dir + 9, UINT64_MAX);		/* location.offset */
	put64(dir + 17, 0);			/* transid */
	put16(dir + 25, 0);			/* data_len */
	put16(dir + 27, 7);			/* name_len */
	dir[29] = ZCOW_FT_DIR;
	memcpy(dir + ZCOW_DIR_ITEM_HDR, ZCOW_DEFAULT_SUBVOL_NAME, 7);
	key.objectid = ZCOW_ROOT_TREE_DIR_OBJECTID;
	key.type = ZCOW_DIR_ITEM_KEY;
	key.offset = zcow_name_hash(ZCOW_DEFAULT_SUBVOL_NAME, 7);
	return zcow_tree_insert(&fs->root_tree, &key, dir, sizeof(dir));
}

int zcow_fs_create_trees(struct zcow_fs *fs, const uint8_t *subvol_uuid)
{
	/* The second metadata group stays empty: the tree-log's (seed 010;
	 * ZCOW_MIN_ZONES counts a tree-log zone), so the first fsync of a
	 * new file system can log instead of committing. */
	static const uint64_t types[] = { ZCOW_BG_SYSTEM, ZCOW_BG_METADATA,
					  ZCOW_BG_DATA, ZCOW_BG_METADATA };
	struct zcow_key key = { ZCOW_DEV_ITEMS_OBJECTID, ZCOW_DEV_ITEM_KEY, 1 };
	unsigned int i, d;
	int ret;

	init_store(fs);
	zcow_fs_count_writable(fs);
	fs->has_trees = true;
	fs->transid = fs->generation + 1;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ret = zcow_chunk_alloc(fs, types[i], NULL);
		if (ret) {
			zlog_err(TAG, "mkfs: no room for the %s block group: %d",
				 zcow_space_name(zcow_space_of_flags(types[i])),
				 ret);
			return ret == -ENOSPC ? -EINVAL : ret;
		}
	}
	for (i = 0; i < ZCOW_NR_TREES; i++) {
		struct zcow_tree *tree = zcow_fs_tree_nr(fs, (int)i);

		ret = zcow_tree_init(tree, &fs->store, tree_ids[i],
				     ZCOW_NO_ROOT, 0, fs->generation);
		if (ret)
			return ret;
		ret = zcow_tree_set_transid(tree, fs->transid);
		if (ret)
			return ret;
		ret = zcow_tree_create_root(tree);
		if (ret)
			return ret;
	}
	for (d = 0; d < fs->nr_devs; d++) {
		key.offset = fs->devs[d].devid;
		ret = zcow_tree_insert(&fs->chunk_tree, &key,
				       &fs->devs[d].item, DEV_ITEM_SIZE);
		if (ret)
			return ret;
	}
	return mkfs_items(fs, subvol_uuid);
}

void zcow_fs_free_trees(struct zcow_fs *fs)
{
	uint64_t i;
	int t;

	zcow_log_free(fs);
	zcow_replace_drop(fs);
	if (fs->has_trees)
		for (t = 0; t < ZCOW_NR_TREES; t++)
			zcow_tree_release(zcow_fs_tree_nr(fs, t));
	for (i = 0; i < fs->nr_bgs; i++)
		free(fs->bgs[i]);
	free(fs->bgs);
	free(fs->meta_bgs);
	free(fs->refs);
	free(fs->redirty);
	free(fs->wb_arena);
	fs->wb_arena = NULL;
	fs->wb_arena_size = 0;
	fs->bgs = NULL;
	fs->meta_bgs = NULL;
	fs->nr_meta_bgs = fs->meta_bgs_cap = 0;
	fs->refs = NULL;
	fs->redirty = NULL;
	fs->nr_bgs = fs->bgs_cap = fs->nr_refs = fs->refs_cap = 0;
	fs->nr_redirty = fs->redirty_cap = 0;
	fs->has_trees = false;
}

static int add_chunk(struct zcow_fs *fs, const uint8_t *buf, uint32_t len,
		     uint64_t logical)
{
	struct zcow_bg bg;
	int ret;

	ret = zcow_chunk_decode(buf, len, logical, &bg);
	if (ret)
		return ret;
	if (bg.length != fs->dev->info.zone_size) {
		zlog_err(TAG, "chunk %" PRIu64 ": length %" PRIu64 " is not one zone of this device (%" PRIu64 "): zone sizes differ",
			 logical, bg.length, fs->dev->info.zone_size);
		return -EINVAL;
	}
	if (zcow_bg_lookup(fs, logical))
		return 0;	/* system chunk already bootstrapped */
	if (!zcow_fs_device(fs, bg.devid)) {
		zlog_err(TAG, "chunk %" PRIu64 ": on devid %" PRIu64 ", not a device of this file system",
			 logical, bg.devid);
		return -EUCLEAN;
	}
	bg.is_new = false;
	return zcow_bg_add(fs, &bg, NULL);
}

static int load_sys_array(struct zcow_fs *fs)
{
	uint32_t size = le32toh(fs->sb.sys_chunk_array_size), off = 0;
	const uint8_t *a = fs->sb.sys_chunk_array;
	int ret;

	if (size > ZCOW_SB_SYS_ARRAY_SIZE)
		return -EUCLEAN;
	while (off < size) {
		struct zcow_disk_key key;
		uint16_t nr;
		uint32_t len;

		if (off + sizeof(key) + 48 > size)
			return -EUCLEAN;
		memcpy(&key, a + off, sizeof(key));
		off += sizeof(key);
		memcpy(&nr, a + off + 44, 2);
		len = 48 + 32u * le16toh(nr);
		if (key.type != ZCOW_CHUNK_ITEM_KEY || off + len > size)
			return -EUCLEAN;
		ret = add_chunk(fs, a + off, len, le64toh(key.offset));
		if (ret)
			return ret;
		off += len;
	}
	return 0;
}

static int read_root_item(struct zcow_fs *fs, uint64_t id)
{
	uint8_t item[ROOT_ITEM_SIZE];
	struct zcow_key key = { id, ZCOW_ROOT_ITEM_KEY, 0 };
	uint32_t size;
	int ret;

	ret = zcow_tree_search(&fs->root_tree, &key, item, sizeof(item), &size);
	if (ret == -ENOENT && (id == ZCOW_UUID_TREE_OBJECTID ||
			       id == ZCOW_DATA_RELOC_TREE_OBJECTID)) {
		/* the trees, the root directory and the "default" entry
		 * btrfs-progs' mkfs makes came with one format change;
		 * zcow does not convert an older image */
		zlog_err(TAG, "no %s tree (root item %" PRIu64 " missing): an image written before the btrfs-compatible format (uuid and data relocation trees, the root directory made by mkfs); zcow does not convert it: copy its files out with the zcow that wrote it, then zcow mkfs",
			 id == ZCOW_UUID_TREE_OBJECTID ? "uuid" : "data relocation",
			 id);
		return -EUCLEAN;
	}
	if (ret) {
		zlog_err(TAG, "root item of tree %" PRIu64 " missing: %d", id,
			 ret);
		return ret == -ENOENT ? -EUCLEAN : ret;
	}
	if (size < ROOT_ITEM_SIZE)
		return -EUCLEAN;
	ret = zcow_tree_init(zcow_fs_tree(fs, id), &fs->store, id,
			     get64(item + 176), item[238], get64(item + 160));
	if (!ret && id == ZCOW_FS_TREE_OBJECTID)
		zcow_fs_tree(fs, id)->share_gen = get64(item + 200);
	return ret;
}

int zcow_fs_load_trees(struct zcow_fs *fs)
{
	static const uint64_t rooted[] = { ZCOW_EXTENT_TREE_OBJECTID,
					   ZCOW_DEV_TREE_OBJECTID,
					   ZCOW_FS_TREE_OBJECTID,
					   ZCOW_CSUM_TREE_OBJECTID,
					   ZCOW_UUID_TREE_OBJECTID,
					   ZCOW_DATA_RELOC_TREE_OBJECTID };
	struct zcow_tree_iter it;
	struct zcow_key key, start = { 0, 0, 0 };
	const void *data;
	uint64_t *last_end = NULL, i;
	uint32_t len;
	unsigned int r;
	int t, ret;

	if (!fs->sb.root)
		return 0;	/* a bare superblock (tests, old images) */
	init_store(fs);
	zcow_fs_count_writable(fs);
	fs->has_trees = true;
	fs->transid = fs->generation + 1;
	/* Every tree gets an owner first, so zcow_fs_tree() works. */
	for (t = 0; t < ZCOW_NR_TREES; t++)
		zcow_fs_tree_nr(fs, t)->owner = tree_ids[t];
	ret = load_sys_array(fs);
	if (ret)
		goto out;
	ret = zcow_tree_init(&fs->chunk_tree, &fs->store,
			     ZCOW_CHUNK_TREE_OBJECTID,
			     le64toh(fs->sb.chunk_root), fs->sb.chunk_root_level,
			     le64toh(fs->sb.chunk_root_generation));
	if (ret)
		goto out;
	key.objectid = ZCOW_FIRST_CHUNK_TREE_OBJECTID;
	key.type = ZCOW_CHUNK_ITEM_KEY;
	key.offset = 0;
	zcow_tree_iter_init(&it, &fs->chunk_tree, &key);
	while (!(ret = zcow_tree_iter_next(&it, &key, &data, &len))) {
		if (key.type != ZCOW_CHUNK_ITEM_KEY)
			continue;
		ret = add_chunk(fs, data, len, key.offset);
		if (ret)
			goto out;
	}
	if (ret != -ENOENT)
		goto out;
	/* The root tree's root generation is checked by the checker. */
	ret = zcow_tree_init(&fs->root_tree, &fs->store,
			     ZCOW_ROOT_TREE_OBJECTID, le64toh(fs->sb.root),
			     fs->sb.root_level, 0);
	if (ret)
		goto out;
	for (r = 0; r < sizeof(rooted) / sizeof(rooted[0]); r++) {
		ret = read_root_item(fs, rooted[r]);
		if (ret)
			goto out;
	}
	/* Block group items, and the last extent end of every group. */
	last_end = calloc(fs->nr_bgs ? fs->nr_bgs : 1, sizeof(*last_end));
	if (!last_end) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < fs->nr_bgs; i++)
		fs->bgs[i]->is_new = true;	/* until its item is seen */
	zcow_tree_iter_init(&it, &fs->extent_tree, &start);
	while (!(ret = zcow_tree_iter_next(&it, &key, &data, &len))) {
		struct zcow_bg *bg = zcow_bg_lookup(fs, key.objectid);
		uint64_t end;

		if (!bg)
			continue;	/* the checker reports it */
		if (key.type == ZCOW_BLOCK_GROUP_ITEM_KEY) {
			if (len < BG_ITEM_SIZE || bg->start != key.objectid ||
			    bg->length != key.offset) {
				ret = -EUCLEAN;
				goto out;
			}
			bg->used = bg->item_used = get64(data);
			bg->is_new = false;
			continue;
		}
		if (key.type == ZCOW_METADATA_ITEM_KEY)
			end = key.objectid + fs->nodesize;
		else if (key.type == ZCOW_EXTENT_ITEM_KEY)
			end = key.objectid + key.offset;
		else
			continue;
		for (i = 0; i < fs->nr_bgs; i++)
			if (fs->bgs[i] == bg && end - bg->start > last_end[i])
				last_end[i] = end - bg->start;
	}
	if (ret != -ENOENT)
		goto out;
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (bg->is_new) {
			zlog_err(TAG, "chunk %" PRIu64 " has no block group item",
				 bg->start);
			ret = -EUCLEAN;
			goto out;
		}
		ret = zcow_bg_load_alloc_offset(bg, last_end[i]);
		if (ret)
			goto out;
	}
	for (t = 0; t < ZCOW_NR_TREES; t++) {
		ret = zcow_tree_set_transid(zcow_fs_tree_nr(fs, t),
					    fs->transid);
		if (ret)
			goto out;
	}
	/* Marks all-unusable groups for removal; not before a tree-log
	 * replay, which may reference data in them (its commit marks). */
	if (!fs->read_only && !fs->sb.log_root)
		zcow_bg_unpin_all(fs);
	ret = 0;
out:
	free(last_end);
	return ret;
}
