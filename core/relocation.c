// SPDX-License-Identifier: MIT
/*
 * Relocation of block groups: the mechanism of reclaim (core/reclaim.h).
 *
 * A data group: its extent items are read in address order, the live
 * extents copied in batches of up to RELOC_BATCH bytes, each batch read,
 * its checksums verified, and written with one plain write at the write
 * pointer of the data relocation group (relocation I/O uses regular
 * writes, not Zone Append, as btrfs's); then, per extent, the extent item
 * and the checksum item move to the new address unchanged (refs,
 * generation, inline references, crc32c values) and every file extent
 * item the inline references name, in the fs tree and in snapshots, gets
 * the new disk_bytenr.  The old bytes are pinned.
 *
 * A metadata group: every tree (the root, extent, device, fs and checksum
 * trees and each snapshot) gives its nodes inside the group a new address
 * (zcow_tree_relocate(): copy-on-write, the ancestors with them); the old
 * nodes are freed by the commit's delayed references.
 *
 * Then the commits (zcow_files_commit_locked): the first writes the
 * copies' items and flushes before its superblock; after it is durable
 * the pinned bytes are unusable and the emptied groups all unusable; the
 * second deletes their items and resets their zones after its superblock
 * (core/transaction.c:commit_reset_removed).  ORDER: no zone is reset
 * while a durable superblock references it.
 */
#include "reclaim.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "files.h"
#include "grow.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "reloc"
#define BS ZCOW_SECTORSIZE
/* Bytes of data copied per write command, and extents at most (their
 * items are admitted per batch). */
#define RELOC_BATCH (1ULL << 20)
#define RELOC_BATCH_EXTENTS 64u
#define EXTENT_HDR_SIZE 24u	/* struct btrfs_extent_item */
#define DATA_REF_SIZE 29u	/* type + struct btrfs_extent_data_ref */
#define MAX_EXTENT_ITEM \
	(EXTENT_HDR_SIZE + ZCOW_MAX_INLINE_DATA_REFS * DATA_REF_SIZE)

/* One live data extent of a group being relocated. */
struct rextent {
	uint64_t bytenr;
	uint64_t len;
	uint32_t nr_refs;	/* inline references (file extents to fix) */
	bool is_hot;		/* hotcold=frequency: its first file range */
};

/* ---- the data relocation group ---------------------------------------- */

static struct zcow_bg *cur_reloc_bg(struct zcow_fs *fs, bool is_hot)
{
	uint64_t start = is_hot ? fs->reloc_hot_bg : fs->reloc_bg;

	return start ? zcow_bg_lookup(fs, start) : NULL;
}

static uint64_t bg_room(const struct zcow_bg *bg)
{
	return bg ? (bg->capacity - bg->alloc_offset) / BS * BS : 0;
}

uint64_t zcow_reloc_room(struct zcow_fs *fs)
{
	return bg_room(cur_reloc_bg(fs, false)) + zcow_zoned_reloc_zones(fs) *
						  (zcow_zoned_zone_room(fs) /
						   BS * BS);
}

/*
 * A relocation group (@is_hot: the hot one) with room for @len: the
 * current one, else a new data chunk (the current one, too full, becomes
 * an ordinary data group, hot or not as it was).  Returns 0 and *bg_ret,
 * -ENOSPC, or a chunk errno.
 */
static int reloc_bg_for(struct zcow_fs *fs, uint64_t len, bool is_hot,
			struct zcow_bg **bg_ret)
{
	struct zcow_bg *bg = cur_reloc_bg(fs, is_hot);
	int err;

	if (bg && bg_room(bg) >= len) {
		*bg_ret = bg;
		return 0;
	}
	if (is_hot ? !zcow_zoned_reloc_hot_may_take_zone(fs) :
		     !zcow_zoned_reloc_may_take_zone(fs))
		return -ENOSPC;
	err = zcow_chunk_alloc(fs, ZCOW_BG_DATA, bg_ret);
	if (err)
		return err;
	if (bg)
		bg->is_data_reloc = false;
	(*bg_ret)->is_data_reloc = true;
	(*bg_ret)->is_reloc_filled = true;
	(*bg_ret)->is_hot = is_hot;
	if (is_hot)
		fs->reloc_hot_bg = (*bg_ret)->start;
	else
		fs->reloc_bg = (*bg_ret)->start;
	return bg_room(*bg_ret) >= len ? 0 : -ENOSPC;
}

/* ---- data ------------------------------------------------------------ */

static void csum_key(struct zcow_key *k, uint64_t bytenr)
{
	k->objectid = ZCOW_CSUM_OBJECTID;
	k->type = ZCOW_EXTENT_CSUM_KEY;
	k->offset = bytenr;
}

/* The live data extents of @bg, in address order. */
static int collect_data(struct zcow_fs *fs, const struct zcow_bg *bg,
			struct rextent **v_ret, uint64_t *nr_ret)
{
	struct zcow_key start = { bg->start, 0, 0 }, k;
	struct rextent *v = NULL;
	uint64_t nr = 0, cap = 0;
	struct zcow_tree_iter it;
	const uint8_t *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, &fs->extent_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, (const void **)&data,
					   &len))) {
		if (k.objectid >= bg->start + bg->length) {
			err = -ENOENT;	/* past the group: done */
			break;
		}
		if (k.type != ZCOW_EXTENT_ITEM_KEY)
			continue;
		struct zcow_eref refs[ZCOW_MAX_INLINE_REFS];
		uint32_t nr_refs = 0;

		if (zcow_extent_item_parse(data, len, refs,
					   ZCOW_MAX_INLINE_REFS, &nr_refs) ||
		    !nr_refs || !(get64(data + 16) & ZCOW_EXTENT_FLAG_DATA) ||
		    k.offset % BS || !k.offset ||
		    k.objectid + k.offset > bg->start + bg->capacity) {
			zlog_err(TAG, "group %" PRIu64 ": malformed data extent item %" PRIu64 "+%" PRIu64,
				 bg->start, k.objectid, k.offset);
			err = -EUCLEAN;
			break;
		}
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			err = -ENOMEM;
			break;
		}
		v[nr].bytenr = k.objectid;
		v[nr].len = k.offset;
		v[nr].nr_refs = nr_refs;
		v[nr].is_hot = refs[0].type == ZCOW_EXTENT_DATA_REF_KEY &&
			       zcow_heat_is_hot(fs, refs[0].root, refs[0].ino,
						refs[0].offset);
		nr++;
	}
	if (err != -ENOENT) {
		free(v);
		return err;
	}
	*v_ret = v;
	*nr_ret = nr;
	return 0;
}

/*
 * Point the file extents of one inline reference (@ref: type, root,
 * objectid, offset, count) at @new instead of @old.  Every file extent of
 * the reference has key offset = ref offset + its offset into the extent,
 * so inside [ref offset, + @len).
 */
static int fix_file_extents(struct zcow_fs *fs, const struct zcow_eref *ref,
			    uint64_t old, uint64_t len, uint64_t new)
{
	uint64_t root = ref->root, ino = ref->ino;
	uint64_t off = ref->offset, want = ref->count, nr = 0;
	struct zcow_key start = { ino, ZCOW_EXTENT_DATA_KEY, off }, k;
	struct zcow_tree *tree = zcow_root_tree_locked(fs, root);
	struct zcow_tree_iter it;
	const void *data;
	uint32_t size;
	int err;

	if (!tree) {
		zlog_err(TAG, "data extent %" PRIu64 ": reference to unknown root %" PRIu64,
			 old, root);
		return -EUCLEAN;
	}
	zcow_tree_iter_init(&it, tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &size))) {
		struct zcow_fext fe;
		uint8_t buf[ZCOW_FILE_EXTENT_SIZE];

		if (k.objectid != ino || k.type != ZCOW_EXTENT_DATA_KEY ||
		    k.offset >= off + len) {
			err = -ENOENT;	/* past the reference's range */
			break;
		}
		err = zcow_fext_decode(data, size, k.offset, &fe);
		if (err)
			return err;
		if (fe.disk_bytenr != old || fe.file_off - fe.offset != off)
			continue;
		fe.disk_bytenr = new;
		zcow_fext_encode(&fe, buf);
		err = zcow_tree_update(tree, &k, buf, sizeof(buf));
		if (err)
			return err;
		nr++;
	}
	if (err != -ENOENT)
		return err;
	if (nr != want) {
		zlog_err(TAG, "data extent %" PRIu64 ": root %" PRIu64 " inode %" PRIu64 " offset %" PRIu64 ": %" PRIu64 " file extents, the reference counts %" PRIu64,
			 old, root, ino, off, nr, want);
		return -EUCLEAN;
	}
	return 0;
}

/* Copy on write the path to @key in every subvolume tree that holds it. */
static int touch_key(struct zcow_fs *fs, const struct zcow_key *key)
{
	struct zcow_files *fl = fs->files;
	uint8_t buf[ZCOW_FILE_EXTENT_SIZE];
	uint64_t i;
	uint32_t size;
	int err = 0;

	for (i = 0; !err && i <= fl->nr_snaps; i++) {
		struct zcow_tree *t = i ? zcow_root_tree_locked(
						  fs, fl->snaps[i - 1].id) :
					  &fs->fs_tree;

		if (!t)
			return -EIO;
		err = zcow_tree_search(t, key, buf, sizeof(buf), &size);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (!err)
			err = zcow_tree_update(t, key, buf, size);
	}
	return err;
}

/* The keys of the file extents of reference @ref to extent @bytenr. */
static int ref_keys(struct zcow_fs *fs, const struct zcow_eref *ref,
		    uint64_t bytenr, uint64_t len, struct zcow_key **keys,
		    uint64_t *nr, uint64_t *cap)
{
	struct zcow_key start = { ref->ino, ZCOW_EXTENT_DATA_KEY,
				  ref->offset }, k;
	struct zcow_tree *tree = zcow_root_tree_locked(fs, ref->root);
	struct zcow_tree_iter it;
	const void *data;
	uint32_t size;
	int err;

	if (!tree)
		return -EUCLEAN;
	zcow_tree_iter_init(&it, tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &size))) {
		struct zcow_fext fe;

		if (k.objectid != ref->ino || k.type != ZCOW_EXTENT_DATA_KEY ||
		    k.offset >= ref->offset + len)
			break;
		if (zcow_fext_decode(data, size, k.offset, &fe) ||
		    fe.disk_bytenr != bytenr)
			continue;
		if (ZCOW_GROW_ONE(keys, *nr, cap))
			return -ENOMEM;
		(*keys)[(*nr)++] = k;
	}
	return err == -ENOENT ? 0 : err;
}

/*
 * Snapshots share leaves.  Updating a file extent in a shared leaf copies
 * the leaf, which adds references to every extent it holds, also to one
 * whose extent item has moved already; and a file extent in a leaf that
 * is FULL_BACKREF is known to its extent only by the leaf's address
 * (SHARED_DATA_REF).  So before the extents of a batch move, every leaf
 * holding one of their file extents is copied on write into each tree
 * that reaches it (the keys, touched in every subvolume tree): then each
 * file extent lies in a leaf of its own tree and has a reference naming
 * its root, inode and offset (fix_file_extents()).  btrfs keeps such
 * leaves shared through its relocation trees; zcow unshares them.
 */
static int unshare_extent(struct zcow_fs *fs, uint64_t bytenr, uint64_t len)
{
	struct zcow_key k = { bytenr, ZCOW_EXTENT_ITEM_KEY, len };
	uint8_t item[MAX_EXTENT_ITEM];
	struct zcow_eref refs[ZCOW_MAX_INLINE_REFS];
	struct zcow_key *keys = NULL;
	uint64_t nr_keys = 0, cap = 0, i;
	uint32_t size, nr_refs = 0, r;
	uint8_t *node = malloc(fs->nodesize);
	int err;

	if (!node)
		return -ENOMEM;
	err = zcow_tree_search(&fs->extent_tree, &k, item, sizeof(item),
			       &size);
	if (!err && (size > sizeof(item) ||
		     zcow_extent_item_parse(item, size, refs,
					    ZCOW_MAX_INLINE_REFS, &nr_refs)))
		err = -EUCLEAN;
	for (r = 0; !err && r < nr_refs; r++) {
		uint32_t n;

		if (refs[r].type == ZCOW_EXTENT_DATA_REF_KEY) {
			err = ref_keys(fs, &refs[r], bytenr, len, &keys,
				       &nr_keys, &cap);
			continue;
		}
		err = fs->store.read(fs, refs[r].parent, node);
		for (n = 0; !err && n < get32(node + 0x60); n++) {
			const uint8_t *p = node + 101 + n * 25u;
			const uint8_t *d = node + 101 + get32(p + 17);
			struct zcow_fext fe;

			if (p[8] != ZCOW_EXTENT_DATA_KEY || get32(p + 21) < 21 ||
			    d[20] == 0 ||
			    zcow_fext_decode(d, get32(p + 21), get64(p + 9),
					     &fe) ||
			    fe.disk_bytenr != bytenr)
				continue;
			if (ZCOW_GROW_ONE(&keys, nr_keys, &cap)) {
				err = -ENOMEM;
				break;
			}
			keys[nr_keys].objectid = get64(p);
			keys[nr_keys].type = p[8];
			keys[nr_keys].offset = get64(p + 9);
			nr_keys++;
		}
	}
	for (i = 0; !err && i < nr_keys; i++)
		err = touch_key(fs, &keys[i]);
	if (err)
		zlog_err(TAG, "data extent %" PRIu64 ": unsharing its leaves failed: %d",
			 bytenr, err);
	free(keys);
	free(node);
	return err;
}

/*
 * The items of the extent at @old (copied to @new): the extent item and
 * the checksum item move unchanged, the file extents follow.  Accounting:
 * the new bytes reserved -> used, the old ones pinned.
 */
static int move_extent_items(struct zcow_fs *fs, uint64_t old, uint64_t len,
			     uint64_t new)
{
	struct zcow_key k = { old, ZCOW_EXTENT_ITEM_KEY, len };
	uint8_t item[MAX_EXTENT_ITEM];
	struct zcow_eref refs[ZCOW_MAX_INLINE_REFS];
	uint32_t size, csize, i, nr_refs = 0;
	uint32_t *csums = malloc(len / BS * 4);
	int err;

	if (!csums)
		return -ENOMEM;
	err = zcow_tree_search(&fs->extent_tree, &k, item, sizeof(item),
			       &size);
	csize = (uint32_t)(len / BS * 4);
	if (!err && (size > sizeof(item) ||
		     zcow_extent_item_parse(item, size, refs,
					    ZCOW_MAX_INLINE_REFS, &nr_refs)))
		err = -EUCLEAN;
	for (i = 0; !err && i < nr_refs; i++)
		if (refs[i].type != ZCOW_EXTENT_DATA_REF_KEY)
			err = -EUCLEAN;	/* unshare_extent() ran before */
	if (!err)
		err = zcow_csum_lookup(&fs->csum_tree, old, len, csums);
	if (!err) {
		k.objectid = new;
		k.type = ZCOW_EXTENT_ITEM_KEY;
		k.offset = len;
		err = zcow_tree_insert(&fs->extent_tree, &k, item, size);
	}
	if (!err) {
		csum_key(&k, new);
		err = zcow_tree_insert(&fs->csum_tree, &k, csums, csize);
	}
	if (!err) {
		k.objectid = old;
		k.type = ZCOW_EXTENT_ITEM_KEY;
		k.offset = len;
		err = zcow_tree_delete(&fs->extent_tree, &k);
	}
	if (!err)
		err = zcow_csum_delete(&fs->csum_tree, old, len);
	for (i = 0; !err && i < nr_refs; i++)
		err = fix_file_extents(fs, &refs[i], old, len, new);
	free(csums);
	if (err) {
		zlog_err(TAG, "data extent %" PRIu64 "+%" PRIu64 ": moving its items to %" PRIu64 " failed: %d",
			 old, len, new, err);
		return err;
	}
	zcow_bg_use_reserved(fs, new, len);
	zcow_bg_pin(fs, old, len);
	return 0;
}

/* Check the @len bytes of the extent at logical @logical in @buf against
 * its checksum item. */
static int verify_extent(struct zcow_fs *fs, uint64_t logical, uint64_t len,
			 const uint8_t *buf)
{
	uint32_t *csums = malloc(len / BS * 4);
	uint64_t b;
	int err;

	if (!csums)
		return -ENOMEM;
	err = zcow_csum_lookup(&fs->csum_tree, logical, len, csums);
	for (b = 0; !err && b < len; b += BS)
		if (zcow_crc32c(buf + b, BS) != le32toh(csums[b / BS])) {
			zlog_err(TAG, "data extent %" PRIu64 ": checksum mismatch at logical %" PRIu64 ": not relocated",
				 logical, logical + b);
			err = -EUCLEAN;
		}
	free(csums);
	return err;
}

/*
 * Read the @nr extents of @v into @buf, one command per run of extents
 * that follow each other on the device (a group's live extents are read
 * in address order: under small random overwrites most runs are short,
 * after sequential writes one command reads a batch), and verify each.
 */
static int read_verified(struct zcow_fs *fs, const struct rextent *v,
			 uint64_t nr, uint8_t *buf)
{
	uint64_t i, j, k, at = 0, len;
	struct zdev *dev;
	uint64_t phys;
	int err = 0;

	for (i = 0; !err && i < nr; i = j) {
		len = v[i].len;
		for (j = i + 1; j < nr && v[j - 1].bytenr + v[j - 1].len ==
						  v[j].bytenr;
		     j++)
			len += v[j].len;
		err = zcow_map_logical_dev(fs, v[i].bytenr, len, &dev, &phys);
		if (!err)
			err = zdev_read(dev, buf + at, len, phys,
					ZDEV_CLASS_RELOC);
		for (k = i; !err && k < j; k++) {
			err = verify_extent(fs, v[k].bytenr, v[k].len,
					    buf + at);
			at += v[k].len;
		}
	}
	return err;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* Nodes a range of @bytes of items of @tree, deleted at one place and
 * inserted at another (both contiguous in key order), may dirty: the
 * leaves they fill each way, a path and a split at both ends. */
static uint64_t range_nodes(struct zcow_fs *fs, struct zcow_tree *tree,
			    uint64_t bytes)
{
	uint64_t h = tree->root_bytenr == ZCOW_NO_ROOT ?
			     1 :
			     (uint64_t)tree->root_level + 1;

	return 2 * div_up(bytes, fs->nodesize - 101) + 4 * (h + 2);
}

/* Nodes @nr_items same-size updates anywhere in @tree may dirty: the path
 * of each, at most every node of the tree the transaction has not copied
 * yet (a copied node is changed in place; a same-size update splits
 * nothing). */
static int update_nodes(struct zcow_tree *tree, uint64_t nr_items,
			uint64_t *nodes_ret)
{
	int64_t nr = zcow_tree_nr_nodes(tree);
	uint64_t h = tree->root_bytenr == ZCOW_NO_ROOT ?
			     1 :
			     (uint64_t)tree->root_level + 1;
	uint64_t clean;

	if (nr < 0)
		return (int)nr;
	clean = tree->nr_dirty < (uint64_t)nr ? (uint64_t)nr - tree->nr_dirty :
						0;
	*nodes_ret += nr_items * h < clean ? nr_items * h : clean;
	return 0;
}

/*
 * Metadata nodes moving the @nr extents of @v may dirty: their extent
 * items and checksum items leave one contiguous range of keys for another
 * (range_nodes()), their file extents are updated in place wherever they
 * are, in the fs tree and in snapshots (update_nodes()).
 */
static int data_batch_nodes(struct zcow_fs *fs, const struct rextent *v,
			    uint64_t nr, uint64_t *nodes_ret)
{
	uint64_t ext = 0, csum = 0, refs = 0, nodes, i;
	int err = 0;

	for (i = 0; i < nr; i++) {
		ext += EXTENT_HDR_SIZE + v[i].nr_refs * DATA_REF_SIZE + 25;
		csum += v[i].len / BS * 4 + 25;
		refs += v[i].nr_refs;
	}
	nodes = range_nodes(fs, &fs->extent_tree, ext) +
		range_nodes(fs, &fs->csum_tree, csum);
	/* Unsharing a leaf copies it into each tree and changes the
	 * references of each of its file extents (unshare_extent()): at
	 * most every node of the extent tree, each copied once. */
	if (zcow_files_nr_trees(fs))
		err = update_nodes(&fs->extent_tree,
				   refs * (fs->nodesize / 25) *
					   (zcow_files_nr_trees(fs) + 1),
				   &nodes);
	if (err)
		return err;
	err = update_nodes(&fs->fs_tree, refs, &nodes);
	for (i = 0; !err && i < zcow_files_nr_trees(fs); i++) {
		struct zcow_tree *t = zcow_files_tree_nr(fs, i);

		if (t)
			err = update_nodes(t, refs, &nodes);
	}
	*nodes_ret = nodes;
	return err;
}

/*
 * Copy @nr extents of @v (consecutive in @bg's address order, RELOC_BATCH
 * bytes at most, fitting one relocation group) with one plain write, into
 * the hot relocation group with @is_hot (the relocation group when that
 * has no room and may take no zone).
 */
static int copy_batch(struct zcow_fs *fs, struct rextent *v, uint64_t nr,
		      uint64_t total, uint8_t *buf, bool is_hot)
{
	struct zcow_bg *rbg;
	uint64_t i, at = 0, nodes, new;
	int err;

	nodes = 0;
	err = data_batch_nodes(fs, v, nr, &nodes);
	if (!err)
		err = zcow_meta_check(fs, nodes, true);
	if (err == -ENOSPC)
		zlog(ZLOG_DEBUG, TAG, "batch of %" PRIu64 " extents: no metadata room for %" PRIu64 " nodes",
		     nr, nodes);
	for (i = 0; !err && i < nr && fs->files->nr_snaps; i++)
		err = unshare_extent(fs, v[i].bytenr, v[i].len);
	if (err)
		return err;
	err = read_verified(fs, v, nr, buf);
	if (err)
		return err;
	err = reloc_bg_for(fs, total, is_hot, &rbg);
	if (err == -ENOSPC && is_hot)
		err = reloc_bg_for(fs, total, false, &rbg);
	if (!err)
		err = zcow_bg_reserve_in(fs, rbg, total, &new);
	if (err) {
		zlog(ZLOG_DEBUG, TAG, "batch of %" PRIu64 " bytes: no relocation room: %d",
		     total, err);
		return err;
	}
	/* ORDER: the copies land before any item points at them; the
	 * commit's flush makes them durable before its superblock. */
	err = zcow_bg_write(fs, rbg, buf, total, new - rbg->start, 0,
			    ZDEV_CLASS_RELOC);
	if (err) {
		zcow_bg_release(fs, new, total, true);
		return err;
	}
	for (i = 0, at = 0; i < nr; i++) {
		err = move_extent_items(fs, v[i].bytenr, v[i].len, new + at);
		if (err) {
			/* The rest of the copy is never referenced. */
			zcow_bg_release(fs, new + at, total - at, true);
			return err;
		}
		at += v[i].len;
		fs->rstats.data_bytes += v[i].len;
		fs->rstats.data_extents++;
	}
	return 0;
}

static uint64_t batch_bytes(const struct rextent *v, uint64_t n)
{
	uint64_t total = 0, i;

	for (i = 0; i < n; i++)
		total += v[i].len;
	return total;
}

/*
 * Copy the extents @v[0, @nr) (in address order) into the relocation
 * group, or with @is_hot the hot one, in batches.
 */
static int relocate_extents(struct zcow_fs *fs, struct rextent *v,
			    uint64_t nr, bool is_hot, uint8_t *buf)
{
	uint64_t i, n, total;
	int err = 0;

	for (i = 0; !err && i < nr; i += n) {
		struct zcow_bg *rbg = cur_reloc_bg(fs, is_hot);
		uint64_t room = bg_room(rbg);

		/* No room in the hot group and no zone to spare for it:
		 * the rest goes with the cold. */
		if (is_hot && room < v[i].len &&
		    !zcow_zoned_reloc_spares_hot(fs)) {
			is_hot = false;
			room = bg_room(cur_reloc_bg(fs, false));
		}

		/* A batch: the extents that fit the batch and the current
		 * relocation group, or (it is too full for even the first)
		 * a new one. */
		if (room < v[i].len)
			room = zcow_zoned_zone_room(fs) / BS * BS;
		if (room > RELOC_BATCH)
			room = RELOC_BATCH;
		for (n = 0, total = 0; i + n < nr && n < RELOC_BATCH_EXTENTS &&
				       total + v[i + n].len <= room;
		     n++)
			total += v[i + n].len;
		if (!n) {
			err = -ENOSPC;
			break;
		}
		err = copy_batch(fs, v + i, n, total, buf, is_hot);
		/* No room for the batch's metadata (or copies): smaller
		 * batches dirty fewer nodes; nothing was written yet. */
		while (err == -ENOSPC && n > 1) {
			n /= 2;
			total = batch_bytes(v + i, n);
			err = copy_batch(fs, v + i, n, total, buf, is_hot);
		}
	}
	return err;
}

/*
 * hotcold=frequency: the live extents of a data group split by their
 * file ranges' heat (core/heat.c), each part in address order: the hot
 * ones go to the hot relocation group, so hot data that survives a
 * cleaning stays with hot data (in the cold relocation group it would
 * make those groups die slowly, and be copied again).  Without the
 * classifier everything is cold.
 */
static int relocate_data(struct zcow_fs *fs, struct zcow_bg *bg)
{
	struct rextent *v = NULL;
	uint64_t nr = 0, nr_cold = 0, i;
	uint8_t *buf = NULL;
	int err;

	err = collect_data(fs, bg, &v, &nr);
	if (err)
		return err;
	buf = malloc(RELOC_BATCH);
	if (!buf && nr) {
		free(v);
		return -ENOMEM;
	}
	/* Stable partition: the cold first, both in address order. */
	for (i = 0; i < nr; i++)
		if (!v[i].is_hot)
			nr_cold++;
	if (nr_cold < nr) {
		struct rextent *s = malloc(nr * sizeof(*s));
		uint64_t c = 0, h = nr_cold;

		if (!s) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < nr; i++)
			s[v[i].is_hot ? h++ : c++] = v[i];
		free(v);
		v = s;
	}
	err = relocate_extents(fs, v, nr_cold, false, buf);
	if (!err)
		err = relocate_extents(fs, v + nr_cold, nr - nr_cold, true,
				       buf);
out:
	free(buf);
	free(v);
	return err;
}

/* ---- metadata ---------------------------------------------------------- */

uint64_t zcow_reloc_meta_nodes(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	uint64_t live = bg->used / fs->nodesize;

	/* Each live node once, its ancestors (an eighth, at most), the
	 * roots. */
	return live + live / 8 + 2 * (ZCOW_NR_TREES + zcow_files_nr_trees(fs));
}

static int relocate_meta(struct zcow_fs *fs, struct zcow_bg *bg)
{
	uint64_t lo = bg->start, hi = bg->start + bg->length, moved, i;
	struct zcow_files *fl = fs->files;
	int t, err;

	err = zcow_meta_check(fs, zcow_reloc_meta_nodes(fs, bg), true);
	for (t = 0; !err && t < ZCOW_NR_TREES; t++) {
		struct zcow_tree *tree = zcow_fs_tree_nr(fs, t);

		if (tree->owner == ZCOW_CHUNK_TREE_OBJECTID)
			continue;	/* in the system groups */
		err = zcow_tree_relocate(tree, lo, hi, &moved);
		fs->rstats.meta_nodes += moved;
		fs->rstats.meta_bytes += moved * fs->nodesize;
	}
	for (i = 0; !err && fl && i < fl->nr_snaps; i++) {
		struct zcow_tree *tree =
			zcow_root_tree_locked(fs, fl->snaps[i].id);

		if (!tree) {
			err = -EUCLEAN;
			break;
		}
		err = zcow_tree_relocate(tree, lo, hi, &moved);
		fs->rstats.meta_nodes += moved;
		fs->rstats.meta_bytes += moved * fs->nodesize;
	}
	return err;
}

/* ---- groups ------------------------------------------------------------ */

/*
 * Take @bg out of allocation: no new reservation lands in it, a data
 * slot lets it go, and its unallocated tail becomes unusable (the zone
 * is finished: it holds no active zone; nothing is in flight in it), so
 * that it is all unusable once its contents are gone.
 */
static void start_relocating(struct zcow_fs *fs, struct zcow_bg *bg)
{
	struct zcow_files *fl = fs->files;
	uint32_t s;

	bg->is_relocating = true;
	fs->space_seq++;	/* its room is given up below */
	for (s = 0; fl && s < fl->data_zones; s++)
		if (fl->data_active[s] == bg->start)
			fl->data_active[s] = 0;
	if (bg->alloc_offset < bg->capacity) {
		if (bg->is_seq && bg->alloc_offset &&
		    zcow_bg_finish_zone(fs, bg))
			zlog_warn(TAG, "group %" PRIu64 ": zone finish failed",
				  bg->start);
		bg->zone_unusable += bg->capacity - bg->alloc_offset;
		bg->alloc_offset = bg->capacity;
		if (bg->flags & ZCOW_BG_METADATA)
			bg->meta_wp = bg->capacity;	/* nothing to write */
	}
}

int zcow_relocate_bgs_locked(struct zcow_fs *fs, struct zcow_bg **v,
			     uint64_t nr)
{
	uint64_t moved = 0, i;
	bool is_short = false;
	int err = 0;

	for (i = 0; i < nr; i++)
		start_relocating(fs, v[i]);
	for (i = 0; i < nr; i++) {
		struct zcow_bg *bg = v[i];

		if (!err) {
			err = bg->flags & ZCOW_BG_DATA ? relocate_data(fs, bg) :
							 relocate_meta(fs, bg);
			if (err == -ENOSPC) {
				err = 0;	/* no room for this one */
				is_short = true;
				bg->is_relocating = false;
				continue;
			}
		}
		if (err) {
			bg->is_relocating = false;
			continue;
		}
		/*
		 * ORDER: nothing yet.  The copies reach the device before
		 * any superblock that references them (the commit and the
		 * tree-log flush first); the group's items go with the next
		 * commit (core/transaction.c:mark_emptied) and its zones are
		 * reset only after that commit is durable
		 * (commit_reset_removed).
		 */
		bg->is_cleaned = true;
		moved++;
		fs->rstats.groups_relocated++;
		if (bg->flags & ZCOW_BG_DATA)
			fs->rstats.data_groups++;
		else
			fs->rstats.meta_groups++;
		if (fs->mutation == ZCOW_MUT_RELOC_RESET_EARLY &&
		    bg->is_seq)	/* TEST-ONLY: breaks the ORDER above */
			zcow_bg_reset_zone(fs, bg);
	}
	if (moved)
		fs->rstats.nr_passes++;
	if (err) {
		zlog_err(TAG, "relocation failed: %d", err);
		return err;
	}
	return is_short && !moved ? -ENOSPC : 0;
}
