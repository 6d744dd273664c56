// SPDX-License-Identifier: MIT
/*
 * Extent references as btrfs keeps them, for data extents and for tree
 * blocks that snapshots share.
 *
 * An extent item (refs, generation, flags) is followed by inline
 * references, ordered by type and, within a type, by descending key
 * (btrfs's lookup_inline_extent_backref() relies on that order):
 *   - data extents: EXTENT_DATA_REF (178: root, objectid, offset, count;
 *     ordered by zcow_data_ref_hash()) and SHARED_DATA_REF (184: the
 *     parent leaf, count);
 *   - tree blocks (METADATA_ITEM, key offset = level): TREE_BLOCK_REF
 *     (176: the root) and SHARED_BLOCK_REF (182: the parent node).
 * refs is the sum of the counts (a tree block reference counts 1).
 *
 * Sharing (btrfs's update_ref_for_cow()): a node knows its children by
 * the node's owner (TREE_BLOCK_REF of the owner, EXTENT_DATA_REF of the
 * owner's inode) or, once the node is FULL_BACKREF, by its own address
 * (SHARED_*_REF).  A snapshot copies the source's root node and adds its
 * own references to the children (core/snapshot.c).  When a tree then
 * copies a shared node on write (zcow_store_release(), the node store's
 * release callback):
 *   - shared (refs > 1), made by this tree and not yet FULL_BACKREF: the
 *     old node's children gain a reference by its address and it becomes
 *     FULL_BACKREF; the new copy inherits the tree's references;
 *   - shared otherwise: the new copy adds the tree's references;
 *   - the last reference of a FULL_BACKREF node: the copy adds the tree's
 *     references, the old node's by address go;
 *   - then the tree's reference to the old node goes (the last one frees
 *     it through the store's free, a delayed reference).
 * Every change on a shared node is made at once, in the extent tree, so
 * that the next lookup sees it; nodes that are not shared keep the
 * commit's delayed references (core/transaction.c).
 *
 * btrfs moves references that do not fit inline to keyed items; zcow keeps
 * at most ZCOW_MAX_INLINE_REFS inline (-EOVERFLOW beyond; snapshots are
 * limited so that tree blocks stay below it).
 *
 * Every call runs under files->lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "files.h"
#include "le.h"
#include "zlog.h"

#define TAG "backref"

#define HDR_SIZE	24u	/* struct btrfs_extent_item */
#define NODE_HDR	101u	/* struct btrfs_header */
#define MAX_ITEM	(HDR_SIZE + ZCOW_MAX_INLINE_REFS * 29u)

struct iref {
	uint8_t type;
	uint64_t a, b, c;	/* root/parent, objectid, offset */
	uint32_t count;
};

struct eitem {
	uint64_t refs, gen, flags;
	uint32_t nr;
	struct iref r[ZCOW_MAX_INLINE_REFS];
};

static uint32_t iref_size(uint8_t type)
{
	switch (type) {
	case ZCOW_TREE_BLOCK_REF_KEY:
	case ZCOW_SHARED_BLOCK_REF_KEY:
		return 9;
	case ZCOW_EXTENT_DATA_REF_KEY:
		return 29;
	case ZCOW_SHARED_DATA_REF_KEY:
		return 13;
	default:
		return 0;
	}
}

/* Where a reference sorts inside its type: descending by this. */
static uint64_t iref_order(const struct iref *r)
{
	if (r->type == ZCOW_EXTENT_DATA_REF_KEY)
		return zcow_data_ref_hash(r->a, r->b, r->c);
	return r->a;
}

/* <0 when @x goes before @y in an item. */
static int iref_cmp(const struct iref *x, const struct iref *y)
{
	uint64_t ox, oy;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	ox = iref_order(x);
	oy = iref_order(y);
	if (ox != oy)
		return ox > oy ? -1 : 1;
	return 0;
}

static bool iref_same(const struct iref *x, const struct iref *y)
{
	return x->type == y->type && x->a == y->a &&
	       (x->type != ZCOW_EXTENT_DATA_REF_KEY ||
		(x->b == y->b && x->c == y->c));
}

int zcow_extent_item_parse(const uint8_t *d, uint32_t len,
			   struct zcow_eref *v, uint32_t max, uint32_t *nr_ret)
{
	uint32_t off = HDR_SIZE, nr = 0;

	if (len < HDR_SIZE)
		return -EUCLEAN;
	while (off < len) {
		uint8_t type = d[off];
		uint32_t size = iref_size(type);

		if (!size || off + size > len || nr == max)
			return -EUCLEAN;
		v[nr].type = type;
		v[nr].root = v[nr].parent = v[nr].ino = v[nr].offset = 0;
		v[nr].count = 1;
		switch (type) {
		case ZCOW_TREE_BLOCK_REF_KEY:
			v[nr].root = get64(d + off + 1);
			break;
		case ZCOW_SHARED_BLOCK_REF_KEY:
			v[nr].parent = get64(d + off + 1);
			break;
		case ZCOW_EXTENT_DATA_REF_KEY:
			v[nr].root = get64(d + off + 1);
			v[nr].ino = get64(d + off + 9);
			v[nr].offset = get64(d + off + 17);
			v[nr].count = get32(d + off + 25);
			break;
		default:
			v[nr].parent = get64(d + off + 1);
			v[nr].count = get32(d + off + 9);
		}
		nr++;
		off += size;
	}
	*nr_ret = nr;
	return 0;
}

static int parse(const uint8_t *d, uint32_t len, struct eitem *e)
{
	struct zcow_eref v[ZCOW_MAX_INLINE_REFS];
	uint32_t i;
	int err = zcow_extent_item_parse(d, len, v, ZCOW_MAX_INLINE_REFS,
					 &e->nr);

	if (err)
		return err;
	e->refs = get64(d);
	e->gen = get64(d + 8);
	e->flags = get64(d + 16);
	for (i = 0; i < e->nr; i++) {
		struct iref *r = &e->r[i];

		r->type = v[i].type;
		r->count = v[i].count;
		r->a = v[i].type == ZCOW_TREE_BLOCK_REF_KEY ||
				       v[i].type == ZCOW_EXTENT_DATA_REF_KEY ?
			       v[i].root :
			       v[i].parent;
		r->b = v[i].ino;
		r->c = v[i].offset;
	}
	return 0;
}

static uint32_t encode(const struct eitem *e, uint8_t *d)
{
	uint32_t off = HDR_SIZE, i;

	put64(d, e->refs);
	put64(d + 8, e->gen);
	put64(d + 16, e->flags);
	for (i = 0; i < e->nr; i++) {
		const struct iref *r = &e->r[i];

		d[off] = r->type;
		put64(d + off + 1, r->a);
		if (r->type == ZCOW_EXTENT_DATA_REF_KEY) {
			put64(d + off + 9, r->b);
			put64(d + off + 17, r->c);
			put32(d + off + 25, r->count);
		} else if (r->type == ZCOW_SHARED_DATA_REF_KEY) {
			put32(d + off + 9, r->count);
		}
		off += iref_size(r->type);
	}
	return off;
}

/*
 * Apply @delta to the reference @want of @e: counts, the reference's
 * place, refs.  -EUCLEAN when dropping what is not there, -EOVERFLOW when
 * a new reference does not fit.
 */
static int apply(struct eitem *e, const struct iref *want, int delta,
		 uint64_t bytenr)
{
	uint32_t i, at = e->nr;

	for (i = 0; i < e->nr; i++) {
		if (iref_same(&e->r[i], want))
			break;
		if (at == e->nr && iref_cmp(want, &e->r[i]) < 0)
			at = i;
	}
	if (delta < 0) {
		if (i == e->nr || e->r[i].count < (uint32_t)-delta ||
		    e->refs < (uint64_t)-delta) {
			zlog_err(TAG, "extent %" PRIu64 ": no reference of type %u (%" PRIu64 " %" PRIu64 " %" PRIu64 ") to drop",
				 bytenr, want->type, want->a, want->b,
				 want->c);
			return -EUCLEAN;
		}
		e->refs -= (uint64_t)-delta;
		e->r[i].count -= (uint32_t)-delta;
		if (!e->r[i].count) {
			memmove(&e->r[i], &e->r[i + 1],
				(e->nr - i - 1) * sizeof(e->r[0]));
			e->nr--;
		}
		return 0;
	}
	e->refs += (uint64_t)delta;
	if (i < e->nr) {
		if (want->type == ZCOW_TREE_BLOCK_REF_KEY ||
		    want->type == ZCOW_SHARED_BLOCK_REF_KEY) {
			zlog_err(TAG, "tree block %" PRIu64 ": reference of type %u (%" PRIu64 ") twice",
				 bytenr, want->type, want->a);
			return -EUCLEAN;
		}
		e->r[i].count += (uint32_t)delta;
		return 0;
	}
	if (e->nr == ZCOW_MAX_INLINE_REFS) {
		zlog_err(TAG, "extent %" PRIu64 ": more than %u references",
			 bytenr, ZCOW_MAX_INLINE_REFS);
		return -EOVERFLOW;
	}
	memmove(&e->r[at + 1], &e->r[at], (e->nr - at) * sizeof(e->r[0]));
	e->r[at] = *want;
	e->r[at].count = (uint32_t)delta;
	e->nr++;
	return 0;
}

/* ---- data extents -------------------------------------------------------- */

static int data_ref(struct zcow_fs *fs, uint64_t bytenr, uint64_t len,
		    int delta, const struct iref *want)
{
	struct zcow_key k = { bytenr, ZCOW_EXTENT_ITEM_KEY, len };
	uint8_t item[MAX_ITEM];
	struct eitem e;
	uint32_t size;
	int err;

	err = zcow_tree_search(&fs->extent_tree, &k, item, sizeof(item),
			       &size);
	if (!err && (size > sizeof(item) || parse(item, size, &e)))
		err = -EUCLEAN;
	if (!err && !(e.flags & ZCOW_EXTENT_FLAG_DATA))
		err = -EUCLEAN;
	if (err) {
		zlog_err(TAG, "data extent %" PRIu64 "+%" PRIu64 ": no extent item (%d)",
			 bytenr, len, err);
		return err != -ENOENT ? err : -EUCLEAN;
	}
	err = apply(&e, want, delta, bytenr);
	if (err)
		return err;
	if (e.refs == 0) {
		err = zcow_tree_delete(&fs->extent_tree, &k);
		if (err)
			return err;
		err = zcow_csum_delete(&fs->csum_tree, bytenr, len);
		if (err)
			return err;
		/* Zoned: freed space stays below the write pointer. */
		zcow_bg_pin(fs, bytenr, len);
		return 0;
	}
	size = encode(&e, item);
	return zcow_tree_update(&fs->extent_tree, &k, item, size);
}

int zcow_data_ref_locked(struct zcow_fs *fs, uint64_t bytenr, uint64_t len,
			 int delta, uint64_t root, uint64_t ino,
			 uint64_t offset)
{
	struct iref want = { ZCOW_EXTENT_DATA_REF_KEY, root, ino, offset, 0 };

	return data_ref(fs, bytenr, len, delta, &want);
}

int zcow_data_ref_shared_locked(struct zcow_fs *fs, uint64_t bytenr,
				uint64_t len, int delta, uint64_t parent)
{
	struct iref want = { ZCOW_SHARED_DATA_REF_KEY, parent, 0, 0, 0 };

	return data_ref(fs, bytenr, len, delta, &want);
}

/* ---- tree blocks ----------------------------------------------------------- */

static int tb_get(struct zcow_fs *fs, uint64_t bytenr, int level,
		  struct eitem *e)
{
	struct zcow_key k = { bytenr, ZCOW_METADATA_ITEM_KEY, (uint64_t)level };
	uint8_t item[MAX_ITEM];
	uint32_t size;
	int err;

	err = zcow_tree_search(&fs->extent_tree, &k, item, sizeof(item),
			       &size);
	if (!err && (size > sizeof(item) || parse(item, size, e)))
		err = -EUCLEAN;
	if (err)
		zlog_err(TAG, "tree block %" PRIu64 " (level %d): no extent item (%d)",
			 bytenr, level, err);
	return err == -ENOENT ? -EUCLEAN : err;
}

static int tb_put(struct zcow_fs *fs, uint64_t bytenr, int level,
		  const struct eitem *e)
{
	struct zcow_key k = { bytenr, ZCOW_METADATA_ITEM_KEY, (uint64_t)level };
	uint8_t item[MAX_ITEM];
	uint32_t size = encode(e, item);

	return zcow_tree_update(&fs->extent_tree, &k, item, size);
}

int zcow_tree_block_ref(struct zcow_fs *fs, uint64_t bytenr, int level,
			uint64_t root, uint64_t parent, int delta)
{
	return zcow_tree_block_ref_flags(fs, bytenr, level, root, parent,
					 delta, 0);
}

int zcow_tree_block_ref_flags(struct zcow_fs *fs, uint64_t bytenr, int level,
			      uint64_t root, uint64_t parent, int delta,
			      uint64_t flags)
{
	struct iref want = { parent ? ZCOW_SHARED_BLOCK_REF_KEY :
				      ZCOW_TREE_BLOCK_REF_KEY,
			     parent ? parent : root, 0, 0, 0 };
	struct eitem e;
	int err = tb_get(fs, bytenr, level, &e);

	if (!err) {
		e.flags |= flags;
		err = apply(&e, &want, delta, bytenr);
	}
	if (!err && !e.refs) {
		zlog_err(TAG, "tree block %" PRIu64 ": last reference dropped in place", bytenr);
		err = -EUCLEAN;
	}
	return err ? err : tb_put(fs, bytenr, level, &e);
}

int zcow_tree_block_info(struct zcow_fs *fs, uint64_t bytenr, int level,
			 uint64_t *refs_ret, uint64_t *flags_ret)
{
	struct eitem e;
	int err = tb_get(fs, bytenr, level, &e);

	if (err)
		return err;
	*refs_ret = e.refs;
	*flags_ret = e.flags;
	return 0;
}

/* ---- reservation ------------------------------------------------------------ */

int zcow_rsv_ref_changes(struct zcow_fs *fs, uint64_t nr_refs,
			 uint64_t *nodes_ret)
{
	int64_t nr = zcow_tree_nr_nodes(&fs->extent_tree);
	uint64_t h = (uint64_t)fs->extent_tree.root_level + 1;
	uint64_t paths = nr_refs * h;

	if (nr < 0)
		return (int)nr;
	*nodes_ret += (paths < (uint64_t)nr ? paths : (uint64_t)nr) +
		      (nr_refs * 29 + fs->nodesize - 102) /
			      (fs->nodesize - 101) +
		      2 * (h + 1);
	return 0;
}

/* ---- what a node references ---------------------------------------------- */

int zcow_node_refs(struct zcow_fs *fs, const uint8_t *buf, uint64_t root,
		   uint64_t parent, int delta)
{
	uint32_t nr = get32(buf + 0x60), i;
	int level = buf[0x64], err = 0;

	for (i = 0; !err && i < nr; i++) {
		if (level) {
			const uint8_t *p = buf + NODE_HDR + i * 33u;

			err = zcow_tree_block_ref(fs, get64(p + 17), level - 1,
						  root, parent, delta);
			continue;
		}
		const uint8_t *p = buf + NODE_HDR + i * 25u;
		const uint8_t *d = buf + NODE_HDR + get32(p + 17);
		uint32_t size = get32(p + 21);
		struct zcow_fext fe;

		if (p[8] != ZCOW_EXTENT_DATA_KEY || size < 21 || d[20] == 0)
			continue;	/* not a file extent, or inline */
		err = zcow_fext_decode(d, size, get64(p + 9), &fe);
		if (err || !fe.disk_bytenr)
			continue;	/* a hole */
		if (parent)
			err = zcow_data_ref_shared_locked(
				fs, fe.disk_bytenr, fe.disk_num_bytes, delta,
				parent);
		else
			err = zcow_data_ref_locked(fs, fe.disk_bytenr,
						   fe.disk_num_bytes, delta,
						   root, get64(p),
						   fe.file_off - fe.offset);
	}
	return err;
}

int zcow_store_release(void *arg, struct zcow_tree *tree, uint64_t bytenr,
		       uint64_t gen, uint64_t owner, int level,
		       const void *vbuf)
{
	struct zcow_fs *fs = arg;
	const uint8_t *buf = vbuf;
	uint64_t refs, flags;
	int err;

	if (fs->error)
		return fs->error;
	err = zcow_tree_block_info(fs, bytenr, level, &refs, &flags);
	if (!err && refs > 1) {
		/* made by this tree, not yet FULL_BACKREF: it becomes so */
		uint64_t set = owner == tree->owner &&
				       !(flags & ZCOW_BLOCK_FLAG_FULL_BACKREF) ?
			       ZCOW_BLOCK_FLAG_FULL_BACKREF :
			       0;

		err = set ? zcow_node_refs(fs, buf, 0, bytenr, +1) :
			    zcow_node_refs(fs, buf, tree->owner, 0, +1);
		if (!err)
			err = zcow_tree_block_ref_flags(fs, bytenr, level,
							tree->owner, 0, -1,
							set);
	} else if (!err) {
		if (flags & ZCOW_BLOCK_FLAG_FULL_BACKREF) {
			err = zcow_node_refs(fs, buf, tree->owner, 0, +1);
			if (!err)
				err = zcow_node_refs(fs, buf, 0, bytenr, -1);
		}
		if (!err)
			fs->store.free(fs, bytenr, gen);
	}
	if (err) {
		zlog_err(TAG, "tree %" PRIu64 ": releasing shared node %" PRIu64 ": %d",
			 tree->owner, bytenr, err);
		if (!fs->error)
			fs->error = err;
	}
	return err;
}
