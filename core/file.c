// SPDX-License-Identifier: MIT
/*
 * The data path of the file layer (seed 006).  Snapshots: core/snapshot.c.
 *
 * A write of [off, off + len):
 *   1. widen to 4 KiB blocks; partial head/tail blocks are read first
 *      (read-modify-write: the new block is a copy, never an overwrite);
 *      a piece of whole blocks goes from the caller's buffer, uncopied;
 *   2. split into pieces of at most max_extent bytes (the device's max
 *      append size with zone append; zcow_pwrite; each piece:
 *      write_extent, crc32c per block first), and each piece again at
 *      the end of a data block group: one command = one data extent, and
 *      an extent never crosses a group (as btrfs), so every zone is
 *      filled to its capacity before the write moves on;
 *   3. reserve (write_reserve), per command, under the fs lock: the
 *      metadata its items need (held in fs->rsv_held_nodes until the
 *      record step), then a data block group and the part of
 *      the piece it has room for (at least one block; up to data_zones
 *      groups are filled at once, inode I writes to slot I % data_zones,
 *      hotcold=on by the age of what it replaces too:
 *      the zoned policy picks the group, zcow_zoned_pick_data_bg() in
 *      core/zoned.c), that many bytes reserved at its allocation offset
 *      (strictly sequential accounting) and the write counted in flight
 *      for the inode; unlock;
 *   4. submit (write_submit -> zcow_zoned_write_data), outside the lock:
 *        zone_append=on, sequential zone: Zone Append to the zone start;
 *          the device says where it landed (any order among threads);
 *        zone_append=off, sequential zone: a plain write at the reserved
 *          offset = the write pointer, reservation and write both under
 *          the block group's plain lock so submissions reach the zone in
 *          allocation order (other groups are written meanwhile);
 *        conventional zone (emulated zones): a plain write at the
 *          reserved offset;
 *   5. record (write_record), under the lock: the data EXTENT_ITEM, the
 *      EXTENT_CSUM item and the file extent item are inserted at the
 *      address where the data landed, old extents in the range are
 *      dropped (their references go down; a data extent with no reference
 *      left is pinned and becomes zone_unusable after the commit), the
 *      inode's size grows.
 *      ORDER: items are created only after the device completed the write,
 *      so a commit never references data that has not landed.
 *
 * Data extent references are applied to the extent tree at once (under
 * the lock), not delayed: an EXTENT_ITEM's refs = the number of file
 * extent items (in the fs tree and every snapshot) that point at it.
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
#include "zlog.h"
#include "reclaim.h"
#include "zoned.h"

#define TAG "files"
#define BS ZCOW_SECTORSIZE
#define MAX_EXTENTS_PER_OP 4096

#define LOCK(fs) pthread_mutex_lock(&(fs)->files->lock)
#define UNLOCK(fs) pthread_mutex_unlock(&(fs)->files->lock)

static uint64_t round_up(uint64_t v)
{
	return (v + BS - 1) / BS * BS;
}

static uint64_t round_down(uint64_t v)
{
	return v / BS * BS;
}

/* struct btrfs_file_extent_item: type at 20, compression 16, encryption
 * 17, other_encoding 18..19; a regular extent's fields from 21. */
int zcow_fext_decode(const uint8_t *buf, uint32_t len, uint64_t file_off,
		     struct zcow_fext *ret)
{
	static const char *const types[] = { "inline", "regular",
					     "preallocated" };

	memset(ret, 0, sizeof(*ret));
	if (len < 21) {
		zlog_err(TAG, "file extent at %" PRIu64 ": item of %u bytes",
			 file_off, len);
		return -EUCLEAN;
	}
	if (buf[20] > 2) {
		zlog_err(TAG, "file extent at %" PRIu64 ": unknown type %u",
			 file_off, buf[20]);
		return -EUCLEAN;
	}
	if (buf[20] != 1 || buf[16] || buf[17] || buf[18] || buf[19]) {
		zlog_err(TAG, "file extent at %" PRIu64 ": %s%s%s extent: zcow reads only plain regular extents",
			 file_off, buf[16] ? "compressed " : "",
			 buf[17] || buf[18] || buf[19] ? "encoded " : "",
			 types[buf[20]]);
		return -EOPNOTSUPP;
	}
	if (len != ZCOW_FILE_EXTENT_SIZE) {
		zlog_err(TAG, "file extent at %" PRIu64 ": regular extent item of %u bytes",
			 file_off, len);
		return -EUCLEAN;
	}
	ret->file_off = file_off;
	ret->generation = get64(buf + 0);
	ret->disk_bytenr = get64(buf + 21);
	ret->disk_num_bytes = get64(buf + 29);
	ret->offset = get64(buf + 37);
	ret->num_bytes = get64(buf + 45);
	return 0;
}

void zcow_fext_encode(const struct zcow_fext *fe, uint8_t *buf)
{
	memset(buf, 0, ZCOW_FILE_EXTENT_SIZE);
	put64(buf + 0, fe->generation);
	put64(buf + 8, fe->disk_num_bytes);	/* ram_bytes */
	buf[16] = 0;				/* compression */
	buf[20] = 1;				/* BTRFS_FILE_EXTENT_REG */
	put64(buf + 21, fe->disk_bytenr);
	put64(buf + 29, fe->disk_num_bytes);
	put64(buf + 37, fe->offset);
	put64(buf + 45, fe->num_bytes);
}

/* ---- in-flight writes ----------------------------------------------- */

static struct zcow_inflight *inflight_find(struct zcow_files *fl,
					   uint64_t root, uint64_t ino)
{
	uint64_t i;

	for (i = 0; i < fl->nr_inflight; i++)
		if (fl->inflight[i].root == root && fl->inflight[i].ino == ino)
			return &fl->inflight[i];
	return NULL;
}

static int inflight_add_locked(struct zcow_files *fl, uint64_t root,
			       uint64_t ino)
{
	struct zcow_inflight *in = inflight_find(fl, root, ino);

	if (!in) {
		if (ZCOW_GROW_ONE(&fl->inflight, fl->nr_inflight,
				  &fl->cap_inflight))
			return -ENOMEM;
		in = &fl->inflight[fl->nr_inflight++];
		in->root = root;
		in->ino = ino;
		in->nr = 0;
	}
	in->nr++;
	return 0;
}

static void inflight_done_locked(struct zcow_files *fl, uint64_t root,
				 uint64_t ino)
{
	struct zcow_inflight *in = inflight_find(fl, root, ino);

	if (!in)
		return;
	if (--in->nr == 0)
		*in = fl->inflight[--fl->nr_inflight];
	pthread_cond_broadcast(&fl->cond);
}

/* ---- data extent references ------------------------------------------ */

static void csum_key(struct zcow_key *k, uint64_t bytenr)
{
	k->objectid = ZCOW_CSUM_OBJECTID;
	k->type = ZCOW_EXTENT_CSUM_KEY;
	k->offset = bytenr;
}

static bool is_csum_key(const struct zcow_key *k)
{
	return k->objectid == ZCOW_CSUM_OBJECTID &&
	       k->type == ZCOW_EXTENT_CSUM_KEY;
}

/*
 * The first checksum item that holds a block of [@from, @end): its key,
 * its number of checksums (*@nr_ret) and, with @csums_ret, where they
 * are in the tree's node (valid until the tree changes).  Items do not
 * overlap, so it is the last item at or below @from when that one reaches
 * past @from, else the next one: one descent for both.  0, -ENOENT
 * (none), -EUCLEAN (an item that is not whole checksums), or a tree
 * errno.
 */
static int csum_first_overlap(struct zcow_tree *t, uint64_t from,
			      uint64_t end, struct zcow_key *k,
			      const uint32_t **csums_ret, uint64_t *nr_ret)
{
	struct zcow_tree_iter it;
	struct zcow_key start;
	const void *data;
	uint32_t len;
	int err;

	csum_key(&start, from + 1);
	zcow_tree_iter_init(&it, t, &start);
	err = zcow_tree_iter_prev(&it, k, &data, &len);
	if (err && err != -ENOENT)
		return err;
	if (err == -ENOENT)	/* nothing before: start again from @from */
		zcow_tree_iter_init(&it, t, &start);
	if (err || !is_csum_key(k) || k->offset + len / 4 * BS <= from) {
		err = zcow_tree_iter_next(&it, k, &data, &len);
		if (err)
			return err;
		if (!is_csum_key(k) || k->offset >= end)
			return -ENOENT;
	}
	if (len % 4 || !len || k->offset % BS) {
		zlog_err(TAG, "checksum item at %" PRIu64 ": %u bytes",
			 k->offset, len);
		return -EUCLEAN;
	}
	*nr_ret = len / 4;
	if (csums_ret)
		*csums_ret = data;
	return 0;
}

int zcow_csum_lookup(struct zcow_tree *t, uint64_t bytenr, uint64_t len,
		     uint32_t *csums)
{
	uint64_t pos = bytenr, end = bytenr + len, nr, to;
	const uint32_t *item;
	struct zcow_key k;
	int err;

	while (pos < end) {
		err = csum_first_overlap(t, pos, end, &k, &item, &nr);
		if (err)
			return err;
		if (k.offset > pos)
			return -ENOENT;
		to = k.offset + nr * BS < end ? k.offset + nr * BS : end;
		if (csums)
			memcpy(csums + (pos - bytenr) / BS,
			       item + (pos - k.offset) / BS,
			       (to - pos) / BS * 4);
		pos = to;
	}
	return 0;
}

int zcow_csum_delete(struct zcow_tree *t, uint64_t bytenr, uint64_t len)
{
	uint64_t pos = bytenr, end = bytenr + len, nr, item_end;
	const uint32_t *in_tree;
	struct zcow_key k, tail;
	uint32_t *item;
	int err;

	/*
	 * One lookup per item: items do not overlap, so the next one that
	 * holds a block of the range starts at or after this one's end, and
	 * none does once an item reaches @end.  Only an item that is cut (a
	 * head kept, a tail inserted again) has its checksums copied out of
	 * the node before the tree changes.
	 */
	while (pos < end) {
		err = csum_first_overlap(t, pos, end, &k, &in_tree, &nr);
		if (err)
			return err == -ENOENT ? 0 : err;
		item_end = k.offset + nr * BS;
		item = NULL;
		if (k.offset < pos || item_end > end) {
			item = malloc(nr * 4);
			if (!item)
				return -ENOMEM;
			memcpy(item, in_tree, nr * 4);
		}
		if (k.offset < pos)
			err = zcow_tree_update(t, &k, item,
					       (uint32_t)((pos - k.offset) /
							  BS * 4));
		else
			err = zcow_tree_delete(t, &k);
		if (!err && item_end > end) {
			csum_key(&tail, end);
			err = zcow_tree_insert(t, &tail,
					       item + (end - k.offset) / BS,
					       (uint32_t)((item_end - end) /
							  BS * 4));
		}
		free(item);
		if (err)
			return err;
		pos = item_end;
	}
	return 0;
}

int zcow_data_extent_insert_locked(struct zcow_fs *fs, uint64_t bytenr,
				   uint64_t len, const uint32_t *csums,
				   uint64_t root, uint64_t ino,
				   uint64_t offset)
{
	struct zcow_key k = { bytenr, ZCOW_EXTENT_ITEM_KEY, len };
	uint8_t item[ZCOW_DATA_EXTENT_ITEM_SIZE];
	int err;

	memset(item, 0, sizeof(item));
	put64(item, 1);				/* refs */
	put64(item + 8, fs->transid);		/* generation */
	put64(item + 16, ZCOW_EXTENT_FLAG_DATA);	/* flags */
	item[24] = ZCOW_EXTENT_DATA_REF_KEY;		/* inline ref */
	put64(item + 25, root);
	put64(item + 33, ino);
	put64(item + 41, offset);
	put32(item + 49, 1);				/* count */
	err = zcow_tree_insert(&fs->extent_tree, &k, item, sizeof(item));
	if (err)
		return err;
	csum_key(&k, bytenr);
	return zcow_tree_insert(&fs->csum_tree, &k, csums,
				(uint32_t)(len / BS * 4));
}

/* A new data extent that landed at @bytenr: extent item + checksums. */
static int extent_create_locked(struct zcow_fs *fs, uint64_t bytenr,
				uint64_t len, const uint32_t *csums,
				uint64_t root, uint64_t ino, uint64_t offset)
{
	int err = zcow_data_extent_insert_locked(fs, bytenr, len, csums, root,
						 ino, offset);

	if (!err)
		zcow_bg_use_reserved(fs, bytenr, len);
	return err;
}


int zcow_collect_extents_locked(struct zcow_tree *tree, uint64_t ino,
				uint64_t from, uint64_t to,
				struct zcow_fext **v_ret, uint64_t *nr_ret)
{
	struct zcow_key start = { ino, ZCOW_EXTENT_DATA_KEY, from }, k;
	struct zcow_fext *v = NULL, fe;
	uint64_t nr = 0, cap = 0;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, tree, &start);
	err = zcow_tree_iter_prev(&it, &k, &data, &len);
	if (!err && !(k.objectid == ino && k.type == ZCOW_EXTENT_DATA_KEY))
		zcow_tree_iter_init(&it, tree, &start);
	else if (err == -ENOENT)
		zcow_tree_iter_init(&it, tree, &start);
	else if (err)
		return err;
	else
		goto have;
	for (;;) {
		err = zcow_tree_iter_next(&it, &k, &data, &len);
		if (err == -ENOENT)
			break;
		if (err)
			goto fail;
have:
		if (k.objectid != ino || k.type != ZCOW_EXTENT_DATA_KEY ||
		    k.offset >= to)
			break;
		/* an inline extent: read and dropped on its own
		 * (read_inline_locked(), zcow_drop_extents_locked()) */
		if (len >= 21 && ((const uint8_t *)data)[20] == 0)
			continue;
		err = zcow_fext_decode(data, len, k.offset, &fe);
		if (err)
			goto fail;
		if (fe.file_off + fe.num_bytes <= from)
			continue;
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			err = -ENOMEM;
			goto fail;
		}
		v[nr++] = fe;
	}
	*v_ret = v;
	*nr_ret = nr;
	return 0;
fail:
	free(v);
	return err;
}

static int put_fext_locked(struct zcow_tree *tree, uint64_t ino,
			   const struct zcow_fext *fe, bool is_new)
{
	struct zcow_key k = { ino, ZCOW_EXTENT_DATA_KEY, fe->file_off };
	uint8_t buf[ZCOW_FILE_EXTENT_SIZE];

	zcow_fext_encode(fe, buf);
	if (is_new)
		return zcow_tree_insert(tree, &k, buf, sizeof(buf));
	return zcow_tree_update(tree, &k, buf, sizeof(buf));
}

/*
 * An inline extent (the kernel's, at 0: the file's only one) in [@from,
 * @to) goes whole: it has no data extent, reference or checksums.  Its
 * length is added to *@dropped.
 */
static int drop_inline_locked(struct zcow_tree *tree, uint64_t ino,
			      uint64_t from, uint64_t to, uint64_t *dropped)
{
	struct zcow_key k = { ino, ZCOW_EXTENT_DATA_KEY, 0 };
	uint8_t item[21 + BS];
	uint32_t size;
	int err;

	if (from != 0 || to == 0)
		return 0;
	err = zcow_tree_search(tree, &k, item, sizeof(item), &size);
	if (!err && size >= 21 && size <= sizeof(item) && item[20] == 0) {
		err = zcow_tree_delete(tree, &k);
		if (err)
			return err;
		*dropped += get64(item + 8);
	} else if (err && err != -ENOENT) {
		return err;
	}
	return 0;
}

/*
 * Drop [@from, @to) of the @nr regular file extents @v
 * (zcow_collect_extents_locked() of that range): a head or a tail outside
 * the range is kept, an extent no item references any more loses its
 * reference.  The bytes dropped are added to *@dropped.
 */
static int drop_fexts_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			     uint64_t root, uint64_t ino, uint64_t from,
			     uint64_t to, const struct zcow_fext *v,
			     uint64_t nr, uint64_t *dropped)
{
	uint64_t i;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		struct zcow_fext fe = v[i], tail;
		uint64_t s = fe.file_off, e = s + fe.num_bytes;
		struct zcow_key k = { ino, ZCOW_EXTENT_DATA_KEY, s };
		bool has_tail = e > to;

		tail = fe;
		if (has_tail) {
			tail.file_off = to;
			tail.offset = fe.offset + (to - s);
			tail.num_bytes = e - to;
		}
		if (s < from) {
			/* Keep the head [s, from). */
			fe.num_bytes = from - s;
			err = put_fext_locked(tree, ino, &fe, false);
			if (!err && has_tail) {
				err = put_fext_locked(tree, ino, &tail, true);
				if (!err)
					err = zcow_data_ref_locked(
						fs, fe.disk_bytenr,
						fe.disk_num_bytes, +1, root,
						ino, s - fe.offset);
			}
			*dropped += (has_tail ? to : e) - from;
		} else {
			err = zcow_tree_delete(tree, &k);
			if (!err && has_tail)
				err = put_fext_locked(tree, ino, &tail, true);
			else if (!err)
				err = zcow_data_ref_locked(
					fs, fe.disk_bytenr, fe.disk_num_bytes,
					-1, root, ino, s - fe.offset);
			*dropped += (has_tail ? to : e) - s;
		}
	}
	return err;
}

int zcow_drop_extents_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			     uint64_t root, uint64_t ino, uint64_t from,
			     uint64_t to, uint64_t *dropped_ret)
{
	struct zcow_fext *v = NULL;
	uint64_t nr = 0, dropped = 0;
	int err;

	err = drop_inline_locked(tree, ino, from, to, &dropped);
	if (err)
		return err;
	err = zcow_collect_extents_locked(tree, ino, from, to, &v, &nr);
	if (err)
		return err;
	err = drop_fexts_locked(fs, tree, root, ino, from, to, v, nr,
				&dropped);
	free(v);
	if (dropped_ret)
		*dropped_ret = dropped;
	return err;
}

/* ---- metadata reservation (docs/space.md) ---------------------------- */

/* Item sizes the reservation charges per tree (upper bounds). */
#define RSV_FS_ITEM	(ZCOW_DIR_ITEM_HDR + 255u)	/* a dir item */
#define RSV_EXTENT_ITEM	ZCOW_RSV_EXTENT_ITEM
#define RSV_CSUM_ITEM(len) ((len) / BS * 4)

/*
 * What relocation could make room from for an operation of @nodes: the
 * room and every group's unusable bytes (freed below its write pointer),
 * into *@mark_ret, and what it needs into *@need_ret.
 */
static int reclaim_prospect(struct zcow_fs *fs, uint64_t nodes,
			    bool may_use_global, uint64_t *need_ret,
			    uint64_t *mark_ret)
{
	uint64_t room, i;
	int err = zcow_meta_room(fs, &room);

	if (!err)
		err = zcow_meta_need(fs, nodes, may_use_global, need_ret);
	if (err)
		return err;
	*mark_ret = room;
	for (i = 0; i < fs->nr_bgs; i++)
		*mark_ret += fs->bgs[i]->zone_unusable + fs->bgs[i]->pinned;
	return 0;
}

bool zcow_txn_dirty_locked(struct zcow_fs *fs)
{
	uint64_t i;
	int t;

	if (fs->nr_refs || fs->nr_redirty)
		return true;
	for (t = 0; t < ZCOW_NR_TREES; t++)
		if (zcow_fs_tree_nr(fs, t)->nr_dirty)
			return true;
	for (i = 0; i < fs->files->nr_snaps; i++)
		if (fs->files->snaps[i].tree &&
		    fs->files->snaps[i].tree->nr_dirty)
			return true;
	return false;
}

/*
 * The grant (docs/space.md, "Grant"): a full check that finds room for
 * META_GRANT_FACTOR * G nodes beyond an operation's, G = META_GRANT_OPS
 * times the operation's nodes (at least META_GRANT_MIN), grants G of them
 * to the reservations after it, which draw on them without a check while
 * nothing but they changed the space: no commit, no group added,
 * removed, finished or given to relocation or the tree-log, no other
 * check (zcow_meta_check() ends it), and no node allocated beyond what
 * they drew.
 */
#define META_GRANT_OPS		16u
#define META_GRANT_MIN		64u
#define META_GRANT_FACTOR	4u

static bool grant_draw(struct zcow_fs *fs, uint64_t nodes)
{
	struct zcow_meta_grant *g = &fs->meta_grant;
	uint64_t room, need;

	if (nodes > g->nodes || g->transid != fs->transid ||
	    g->space_seq != fs->space_seq || g->treelog_bg != fs->treelog_bg ||
	    g->reloc_bg != fs->reloc_bg ||
	    fs->meta_allocs - g->allocs > g->drawn)
		return false;
	g->nodes -= nodes;
	g->drawn += nodes;
	if (fs->grant_audit.is_on) {
		fs->grant_audit.draws++;
		if (zcow_meta_room(fs, &room) ||
		    zcow_meta_need(fs, nodes, false, &need) || room < need)
			fs->grant_audit.bad++;
	}
	return true;
}

/* A grant after a full check for @nodes and the grant's margin; false
 * when there is no room for it (then none until the next commit). */
static bool grant_try(struct zcow_fs *fs, uint64_t nodes)
{
	uint64_t g;

	if (nodes > UINT32_MAX || fs->meta_grant.refused == fs->transid + 1)
		return false;
	g = nodes * META_GRANT_OPS;
	if (g < META_GRANT_MIN)
		g = META_GRANT_MIN;
	if (zcow_meta_check(fs, nodes + META_GRANT_FACTOR * g, false)) {
		fs->meta_grant.refused = fs->transid + 1;
		return false;
	}
	fs->meta_grant = (struct zcow_meta_grant){
		.nodes = g, .drawn = nodes,
		.transid = fs->transid, .space_seq = fs->space_seq,
		.treelog_bg = fs->treelog_bg, .reloc_bg = fs->reloc_bg,
		.allocs = fs->meta_allocs,
	};
	return true;
}

int zcow_meta_reserve_locked(struct zcow_fs *fs, uint64_t nodes,
			     bool may_use_global)
{
	uint64_t need, mark;
	int err, round;

	if (fs->error)
		return -EIO;
	if (fs->read_only)
		return -EROFS;
	if (!may_use_global &&
	    (grant_draw(fs, nodes) || grant_try(fs, nodes)))
		return 0;
	err = zcow_meta_check(fs, nodes, may_use_global);
	if (err != -ENOSPC)
		return err;
	/*
	 * Flush, as btrfs does before it gives up: a commit drops the
	 * running transaction's delayed references (the commit reserve
	 * shrinks) and turns freed space into whole unusable groups that
	 * are reset.  Only when there is something to commit.
	 */
	if (zcow_txn_dirty_locked(fs) || zcow_zoned_has_reclaimable(fs)) {
		err = zcow_files_commit_locked(fs);
		if (err)
			return err;
		err = zcow_meta_check(fs, nodes, may_use_global);
		if (err != -ENOSPC)
			return err;
	}
	/*
	 * Relocation empties groups (metadata ones too, now: metadata is
	 * what is short); the commit after it removes them and resets
	 * their zones.  A few rounds, each cleaning at least one group;
	 * none when all the space freed below write pointers could not
	 * cover what is missing, nor when one as large failed after
	 * relocating and no space was freed since.
	 */
	err = reclaim_prospect(fs, nodes, may_use_global, &need, &mark);
	if (err)
		return err;
	if (mark < need ||
	    (need >= fs->rsv_failed_need && mark <= fs->rsv_failed_mark))
		return -ENOSPC;
	err = -ENOSPC;
	for (round = 0; round < 4 && err == -ENOSPC; round++) {
		err = zcow_reclaim_commit_locked(fs, ZCOW_RECLAIM_META_SHORT);
		if (err)
			break;
		err = zcow_meta_check(fs, nodes, may_use_global);
	}
	/* In vain: the same or a larger one fails at once until space is
	 * freed (a full fs would relocate for every refused operation). */
	if (err == -ENOSPC &&
	    !reclaim_prospect(fs, nodes, may_use_global, &need, &mark)) {
		fs->rsv_failed_need = need;
		fs->rsv_failed_mark = mark;
	}
	return err;
}

/*
 * @nodes copies of nodes of a tree with snapshots: every node it copies
 * may be shared, and copying one changes a reference for each of its
 * children or file extents (an internal node's pointers at most; twice:
 * added to the copy, moved off the old node).
 */
static int rsv_shared_copies(struct zcow_fs *fs, uint64_t nodes,
			     uint64_t *nodes_ret)
{
	return zcow_rsv_ref_changes(fs, 2 * nodes * (fs->nodesize / 33),
				    nodes_ret);
}

int zcow_rsv_fs_items(struct zcow_fs *fs, struct zcow_tree *tree,
		      uint64_t nr_items, uint64_t *nodes_ret)
{
	uint64_t before = *nodes_ret;
	int err = zcow_rsv_nodes(fs, tree, nr_items, RSV_FS_ITEM, nodes_ret);

	if (!err && tree->share_gen)
		err = rsv_shared_copies(fs, *nodes_ret - before, nodes_ret);
	return err;
}

/* Drops of more extents than this are charged as removals (below). */
#define RSV_DROP_MANY	8u

/*
 * How many of the checksum runs of the @nr extents @v leave a tail
 * behind when removed (zcow_csum_delete(): an item reaching past the
 * extent's end is cut, its tail inserted again): into *@nr_ret.
 */
static int csum_tails(struct zcow_fs *fs, const struct zcow_fext *v,
		      uint64_t nr, uint64_t *nr_ret)
{
	uint64_t i, n;
	int err;

	*nr_ret = 0;
	for (i = 0; i < nr; i++) {
		uint64_t end = v[i].disk_bytenr + v[i].disk_num_bytes;
		struct zcow_key k;

		if (!v[i].disk_bytenr || !v[i].disk_num_bytes)
			continue;
		err = csum_first_overlap(&fs->csum_tree, end - BS, end, &k,
					 NULL, &n);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		if (k.offset + n * BS > end)
			(*nr_ret)++;
	}
	return 0;
}

/*
 * The leaves holding @ino's file extent items from @from to @last (in
 * @tree): into *@nr_ret.  A removal of contiguous items copies those, their
 * parents and a sibling at each end.
 */
static int fext_leaves(struct zcow_tree *tree, uint64_t ino, uint64_t from,
		       uint64_t last, uint64_t *nr_ret)
{
	struct zcow_key k = { ino, ZCOW_EXTENT_DATA_KEY, from };
	const struct zcow_cnode *leaf = NULL;
	struct zcow_tree_iter it;
	int err;

	*nr_ret = 1;	/* the one holding the extent reaching @from */
	zcow_tree_iter_init(&it, tree, &k);
	while (!(err = zcow_tree_iter_next(&it, &k, NULL, NULL)) &&
	       k.objectid == ino && k.type == ZCOW_EXTENT_DATA_KEY &&
	       k.offset <= last) {
		if (it.nodes[0] != leaf)
			(*nr_ret)++;
		leaf = it.nodes[0];
	}
	return err == -ENOENT ? 0 : err;
}

/*
 * What dropping the @nr file extents @v changes (below).  Per extent:
 * its item and a split tail (fs tree), its reference (two with the
 * tail), its checksums when the last goes.  Many extents (a file removed
 * or truncated; a full file system must still do that, docs/space.md)
 * are charged as what they are: removals of their items (the nodes they
 * copy, zcow_rsv_del_nodes()) and one split tail at each end of the
 * range; in the extent tree the references' removals copy only nodes the
 * commit's reserve copies already (every clean node, commit_nodes()); in
 * the checksum tree removals and an insert per run cut in the middle.
 */
static int rsv_drop_fexts(struct zcow_fs *fs, struct zcow_tree *tree,
			  uint64_t ino, const struct zcow_fext *v, uint64_t nr,
			  uint64_t *nodes_ret)
{
	uint64_t csum = 0, i, before = *nodes_ret, tails, leaves;
	int err;

	for (i = 0; i < nr; i++)
		if (RSV_CSUM_ITEM(v[i].disk_num_bytes) > csum)
			csum = RSV_CSUM_ITEM(v[i].disk_num_bytes);
	if (!nr)
		return 0;
	if (nr <= RSV_DROP_MANY) {
		err = zcow_rsv_fs_items(fs, tree, 2 * nr, nodes_ret);
		if (!err)
			err = zcow_rsv_nodes(fs, &fs->extent_tree, 2 * nr,
					     RSV_EXTENT_ITEM, nodes_ret);
		if (!err)
			err = zcow_rsv_nodes(fs, &fs->csum_tree, nr, csum,
					     nodes_ret);
		return err;
	}
	err = fext_leaves(tree, ino, v[0].file_off, v[nr - 1].file_off,
			  &leaves);
	if (!err)
		err = zcow_rsv_del_nodes(tree, nr, leaves, nodes_ret);
	if (!err)
		err = zcow_rsv_nodes(fs, tree, 2, RSV_FS_ITEM, nodes_ret);
	if (!err && tree->share_gen)
		err = rsv_shared_copies(fs, *nodes_ret - before, nodes_ret);
	if (!err)
		err = zcow_rsv_nodes(fs, &fs->extent_tree, 2, RSV_EXTENT_ITEM,
				     nodes_ret);
	if (!err)
		err = zcow_rsv_del_nodes(&fs->csum_tree, nr, 0, nodes_ret);
	if (!err)
		err = csum_tails(fs, v, nr, &tails);
	if (!err && tails)
		err = zcow_rsv_nodes(fs, &fs->csum_tree, tails, 0, nodes_ret);
	return err;
}

int zcow_rsv_drop_extents_locked(struct zcow_fs *fs, struct zcow_tree *tree,
				 uint64_t ino, uint64_t from, uint64_t to,
				 uint64_t *nodes_ret)
{
	struct zcow_fext *v = NULL;
	uint64_t nr = 0;
	int err;

	err = zcow_collect_extents_locked(tree, ino, from, to, &v, &nr);
	if (!err)
		err = rsv_drop_fexts(fs, tree, ino, v, nr, nodes_ret);
	free(v);
	return err;
}

/*
 * A data write of @len bytes at @off: its extent item, checksums, file
 * extent and inode item, and what it replaces.  hotcold=on: *@gen_ret is
 * the generation of the live data the write's first block replaces (its
 * file extent's, kept through relocation), 0 when it replaces none (a
 * hole, past the end: new data).  With @v_ret, the file extents it
 * replaces (zcow_collect_extents_locked()) into *@v_ret and *@nr_ret, for
 * the record step while the fs tree is unchanged; on an error none.
 */
static int rsv_write_locked(struct zcow_file *f, uint64_t off, uint64_t len,
			    uint64_t *nodes_ret, uint64_t *gen_ret,
			    struct zcow_fext **v_ret, uint64_t *nr_ret)
{
	struct zcow_fs *fs = f->fs;
	struct zcow_fext *v = NULL;
	uint64_t nr = 0;
	int err;

	*nodes_ret = 0;
	*gen_ret = 0;
	err = zcow_rsv_fs_items(fs, f->tree, 2, nodes_ret);
	if (!err)
		err = zcow_rsv_nodes(fs, &fs->extent_tree, 1, RSV_EXTENT_ITEM,
				     nodes_ret);
	if (!err)
		err = zcow_rsv_nodes(fs, &fs->csum_tree, 1, RSV_CSUM_ITEM(len),
				     nodes_ret);
	if (!err)
		err = zcow_collect_extents_locked(f->tree, f->ino, off,
						  off + len, &v, &nr);
	if (!err)
		err = rsv_drop_fexts(fs, f->tree, f->ino, v, nr, nodes_ret);
	if (!err && fs->files->hotcold == ZCOW_HOTCOLD_AGE && nr &&
	    v[0].disk_bytenr &&
	    v[0].file_off <= off)
		*gen_ret = v[0].generation;
	if (!err && v_ret) {
		*v_ret = v;
		*nr_ret = nr;
		return 0;
	}
	free(v);
	return err;
}

/* ---- reads --------------------------------------------------------- */

/*
 * An inline extent (btrfs stores a small file's data in its only file
 * extent item, at offset 0: type 0, the data after the 21-byte header;
 * zcow reads it, never writes one): [off, off + len) of it into @buf
 * (zeroed by the caller).  1 when the file has one, 0 when its first
 * extent is not inline (or it has none), -EOPNOTSUPP for a compressed or
 * encoded one, -EUCLEAN when its ram_bytes is not its length.
 */
static int read_inline_locked(struct zcow_file *f, uint8_t *buf, uint64_t off,
			      uint64_t len)
{
	struct zcow_key k = { f->ino, ZCOW_EXTENT_DATA_KEY, 0 };
	uint8_t item[21 + BS];	/* inline data is below one block */
	uint32_t size;
	int err;

	err = zcow_tree_search(f->tree, &k, item, sizeof(item), &size);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (size < 21 || item[20] != 0)
		return 0;
	if (item[16] || item[17] || item[18] || item[19]) {
		zlog_err(TAG, "inode %" PRIu64 ": %s inline extent: zcow reads only plain extents",
			 f->ino, item[16] ? "compressed" : "encoded");
		return -EOPNOTSUPP;
	}
	if (size > sizeof(item) || get64(item + 8) != size - 21) {
		zlog_err(TAG, "inode %" PRIu64 ": inline extent of %u bytes, ram_bytes %" PRIu64,
			 f->ino, size - 21, get64(item + 8));
		return -EUCLEAN;
	}
	memset(buf, 0, len);
	if (off < size - 21)
		memcpy(buf, item + 21 + off,
		       len < size - 21 - off ? len : size - 21 - off);
	return 1;
}

/*
 * Read [off, off + len) of the file as stored (no size clamp; holes and
 * the space beyond the last extent read as zeros), verifying every block.
 */
static int read_raw_locked(struct zcow_file *f, uint8_t *buf, uint64_t off,
			   uint64_t len)
{
	struct zcow_fs *fs = f->fs;
	struct zcow_fext *v = NULL;
	uint64_t nr = 0, i, end = off + len, pos = off;
	uint8_t *tmp = NULL;
	uint32_t *csums = NULL;
	uint64_t tmp_cap = 0, csums_cap = 0;
	int err;

	err = read_inline_locked(f, buf, off, len);
	if (err)
		return err < 0 ? err : 0;
	err = zcow_collect_extents_locked(f->tree, f->ino, off, end, &v, &nr);
	if (err)
		return err;
	for (i = 0; i < nr && !err; i++) {
		const struct zcow_fext *fe = &v[i];
		uint64_t s = fe->file_off > off ? fe->file_off : off;
		uint64_t e = fe->file_off + fe->num_bytes < end ?
				     fe->file_off + fe->num_bytes :
				     end;
		/* Block range inside the disk extent. */
		uint64_t x0 = round_down(fe->offset + (s - fe->file_off));
		uint64_t x1 = round_up(fe->offset + (e - fe->file_off));
		uint64_t n = x1 - x0, phys, b;
		/* whole blocks land in place, others through @tmp */
		bool is_direct = x0 == fe->offset + (s - fe->file_off) &&
				 n == e - s;
		uint8_t *dst;
		struct zdev *dev;

		if (x1 > fe->disk_num_bytes) {
			err = -EUCLEAN;
			break;
		}
		/* a hole before the extent reads as zeros (extents come
		 * in file order) */
		if (s > pos)
			memset(buf + (pos - off), 0, s - pos);
		if (e > pos)
			pos = e;
		/* Grown in place: on failure the old buffers are still
		 * freed below. */
		if ((!is_direct && zcow_grow(&tmp, &tmp_cap, n, 1)) ||
		    zcow_grow(&csums, &csums_cap, n / BS * 4, 1)) {
			err = -ENOMEM;
			break;
		}
		err = zcow_csum_lookup(&fs->csum_tree, fe->disk_bytenr + x0, n,
				       csums);
		if (err) {
			zlog_err(TAG, "inode %" PRIu64 " offset %" PRIu64 ": no checksums for data at logical %" PRIu64,
				 f->ino, s, fe->disk_bytenr);
			err = -EIO;
			break;
		}
		dst = is_direct ? buf + (s - off) : tmp;
		err = zcow_map_logical_dev(fs, fe->disk_bytenr + x0, n, &dev,
					   &phys);
		if (!err)
			err = zdev_read(dev, dst, n, phys, ZDEV_CLASS_DATA);
		if (err) {
			zlog_err(TAG, "inode %" PRIu64 " offset %" PRIu64 ": read of logical %" PRIu64 " failed: %d",
				 f->ino, s, fe->disk_bytenr + x0, err);
			err = -EIO;
			break;
		}
		for (b = 0; b < n; b += BS) {
			uint32_t want = le32toh(csums[b / BS]);

			if (zcow_crc32c(dst + b, BS) != want) {
				zlog_err(TAG, "checksum mismatch: root %" PRIu64 " inode %" PRIu64 " file offset %" PRIu64 " logical %" PRIu64,
					 f->root, f->ino,
					 fe->file_off + x0 + b - fe->offset,
					 fe->disk_bytenr + x0 + b);
				err = -EIO;
				break;
			}
		}
		if (!err && !is_direct)
			memcpy(buf + (s - off),
			       tmp + (fe->offset + (s - fe->file_off) - x0),
			       e - s);
	}
	/* past the last extent: zeros */
	if (!err && end > pos)
		memset(buf + (pos - off), 0, end - pos);
	free(v);
	free(tmp);
	free(csums);
	return err;
}

/*
 * A read's atime (touch_atime()): never under noatime, whenever it is
 * not now already under strictatime, when zcow_atime_needs_update() says
 * so under relatime (the default); the inode item is rewritten in the
 * running transaction as btrfs_update_time() dirties the inode in a transaction.
 * Not in a read-only snapshot or mount, nor after an error; a failed
 * reservation skips it (the read does not fail, as Linux ignores the
 * update's error).  It is not noted for the tree-log: an fsync does not
 * log an atime-only change, the next commit makes it durable.
 */
static void read_touch_atime_locked(struct zcow_file *f,
				    struct zcow_inode *in)
{
	struct zcow_fs *fs = f->fs;
	struct zcow_timespec now;
	uint64_t nodes = 0;
	int err;

	if (f->is_ro_tree || fs->read_only || fs->error ||
	    fs->files->atime == ZCOW_ATIME_NOATIME)
		return;
	zcow_files_now(fs, &now);
	if (fs->files->atime == ZCOW_ATIME_STRICTATIME ?
	    zcow_ts_eq(&in->atime, &now) : !zcow_atime_needs_update(in, &now))
		return;
	err = zcow_rsv_fs_items(fs, f->tree, 1, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, false);
	if (!err)	/* the reservation may have committed: read again */
		err = zcow_inode_get(f->tree, f->ino, in);
	if (!err) {
		in->atime = now;
		in->transid = fs->transid;
		err = zcow_inode_put(f->tree, in);
	}
	if (err)
		zlog(ZLOG_DEBUG, TAG, "inode %" PRIu64 ": atime not updated: %d",
		     f->ino, err);
}

int64_t zcow_pread(struct zcow_file *f, void *buf, uint64_t len, uint64_t off)
{
	struct zcow_inode in;
	int err;

	if (f->is_dir)
		return -EISDIR;
	LOCK(f->fs);
	err = zcow_inode_get(f->tree, f->ino, &in);
	if (err)
		goto out;
	if (len)
		read_touch_atime_locked(f, &in);
	if (off >= in.size) {
		len = 0;
		goto out;
	}
	if (len > in.size - off)
		len = in.size - off;
	err = read_raw_locked(f, buf, off, len);
out:
	UNLOCK(f->fs);
	return err ? err : (int64_t)len;
}

/* ---- writes -------------------------------------------------------- */

/*
 * The common overwrite (the same block range written again): update the
 * file extent item in place instead of delete + insert; the old extent
 * loses its reference.  -ENOENT when the range is not exactly one item.
 */
static int replace_same_range_locked(struct zcow_fs *fs, struct zcow_file *f,
				     const struct zcow_fext *fe,
				     uint64_t *dropped_ret)
{
	struct zcow_key k = { f->ino, ZCOW_EXTENT_DATA_KEY, fe->file_off };
	uint8_t buf[ZCOW_FILE_EXTENT_SIZE];
	struct zcow_fext old;
	uint32_t size;
	int err;

	err = zcow_tree_search(f->tree, &k, buf, sizeof(buf), &size);
	if (err)
		return err;
	if (size >= 21 && buf[20] == 0)
		return -ENOENT;	/* inline: dropped as a whole */
	err = zcow_fext_decode(buf, size, fe->file_off, &old);
	if (err)
		return err;
	if (old.num_bytes != fe->num_bytes)
		return -ENOENT;
	err = put_fext_locked(f->tree, f->ino, fe, false);
	if (err)
		return err;
	*dropped_ret = old.num_bytes;
	return zcow_data_ref_locked(fs, old.disk_bytenr, old.disk_num_bytes, -1,
				    f->root, f->ino,
				    old.file_off - old.offset);
}

/*
 * One data write command (one extent) on its way down: what the reserve
 * step hands to the submit step and the submit step to the record step.
 */
struct write_cmd {
	struct zcow_file *f;
	const uint8_t *buf;	/* block-aligned data */
	uint64_t len;		/* the reserve step may shorten it */
	uint64_t off;		/* block-aligned file offset */
	uint64_t min_size;	/* the inode's size becomes at least this */
	uint32_t *csums;	/* crc32c per block, little-endian */
	struct zcow_bg *bg;	/* the data group of the reservation */
	uint64_t logical;	/* the reservation */
	uint64_t landed;	/* where the device put the data */
	pthread_mutex_t *plock;	/* zone_append=off: held reserve..submit */
	/* The reservation's nodes for the whole, and the transaction and
	 * the trees' change counters it was computed at (write_record);
	 * while is_held, the nodes count in fs->rsv_held_nodes. */
	uint64_t nodes, transid, seq[3];
	bool is_held;
	/* The file extents [off, off + old_len) replaces as the
	 * reservation found them, and the fs tree's change counter and the
	 * transaction they were found at (put_write_fext_locked()). */
	struct zcow_fext *old;
	uint64_t nr_old, old_len, old_seq, old_transid;
};

/* The reservation of @wc given back to the fs (fs lock held); again: a
 * no-op. */
static void write_unhold_locked(struct write_cmd *wc)
{
	if (wc->is_held)
		wc->f->fs->rsv_held_nodes -= wc->nodes;
	wc->is_held = false;
}

/* The extents @v (@nr) that [wc->off, + @len) replaces, found now. */
static void write_set_old(struct write_cmd *wc, uint64_t len,
			  struct zcow_fext *v, uint64_t nr)
{
	free(wc->old);
	wc->old = v;
	wc->nr_old = nr;
	wc->old_len = len;
	wc->old_seq = wc->f->tree->seq;
	wc->old_transid = wc->f->fs->transid;
}

/*
 * The file extent item @fe of a write's part in place of what it
 * replaces: the same range as one item (the common overwrite) rewritten
 * in place, the old extent losing its reference; else the extents in the
 * range dropped and @fe inserted.  What the reservation found serves
 * while the fs tree has not changed since (a flush's commit or
 * relocation changes it); else it is looked up again.  The bytes dropped
 * into *@dropped_ret.
 */
static int put_write_fext_locked(struct write_cmd *wc,
				 const struct zcow_fext *fe,
				 uint64_t *dropped_ret)
{
	struct zcow_file *f = wc->f;
	struct zcow_fs *fs = f->fs;
	const struct zcow_fext *old = wc->old;
	uint64_t from = fe->file_off, to = from + fe->num_bytes;
	int err;

	*dropped_ret = 0;
	if (wc->old_len != fe->num_bytes || wc->old_seq != f->tree->seq ||
	    wc->old_transid != fs->transid) {
		err = replace_same_range_locked(fs, f, fe, dropped_ret);
		if (err != -ENOENT)
			return err;
		err = zcow_drop_extents_locked(fs, f->tree, f->root, f->ino,
					       from, to, dropped_ret);
		return err ? err : put_fext_locked(f->tree, f->ino, fe, true);
	}
	/* Items do not overlap: one that starts at @from and is as long
	 * is the only one in the range (replace_same_range_locked()). */
	if (wc->nr_old == 1 && old->file_off == from &&
	    old->num_bytes == fe->num_bytes) {
		err = put_fext_locked(f->tree, f->ino, fe, false);
		if (err)
			return err;
		*dropped_ret = old->num_bytes;
		return zcow_data_ref_locked(fs, old->disk_bytenr,
					    old->disk_num_bytes, -1, f->root,
					    f->ino, old->file_off - old->offset);
	}
	err = drop_inline_locked(f->tree, f->ino, from, to, dropped_ret);
	if (!err)
		err = drop_fexts_locked(fs, f->tree, f->root, f->ino, from, to,
					old, wc->nr_old, dropped_ret);
	return err ? err : put_fext_locked(f->tree, f->ino, fe, true);
}

/* The trees a write's reservation reads (rsv_write_locked()). */
static void rsv_write_seqs(const struct zcow_file *f, uint64_t seq[3])
{
	seq[0] = f->tree->seq;
	seq[1] = f->fs->extent_tree.seq;
	seq[2] = f->fs->csum_tree.seq;
}

/*
 * Step 3 of the header, reserve: under the fs lock, the metadata the
 * write's items need, then a data group picked by the zoned policy and
 * the part of wc->len it has room for (wc->len becomes that part: all of
 * it, or the rest of the group, at least one block) at its allocation
 * offset; the write counts as in flight for its inode.  Returns 0 with
 * the fs lock released (and, zone_append=off, the group's plain lock
 * held), or -errno with neither held and nothing reserved.
 */
static int write_reserve(struct write_cmd *wc)
{
	struct zcow_file *f = wc->f;
	struct zcow_fs *fs = f->fs;
	struct zcow_files *fl = fs->files;
	uint64_t nodes, gen = 0, len = wc->len, part = 0, nr_old;
	struct zcow_fext *old;
	struct zcow_bg *bg = NULL;
	bool is_hot = false;
	bool plain = !fl->zone_append;
	pthread_mutex_t *plock = NULL, *want;
	uint64_t plock_bg = 0;
	int err;

	for (;;) {
		LOCK(fs);
		err = fs->error ? -EIO : 0;
		/* Metadata first: no data is written for a write whose items
		 * could not be added (checked again after the write, for the
		 * part: its items are no larger than the whole's). */
		if (!err)
			err = rsv_write_locked(f, wc->off, len, &nodes, &gen,
					       &old, &nr_old);
		if (!err)
			write_set_old(wc, len, old, nr_old);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, false);
		if (!err) {
			wc->nodes = nodes;
			wc->transid = fs->transid;
			rsv_write_seqs(f, wc->seq);
			/* held until the record (write_record) */
			wc->is_held = true;
			fs->rsv_held_nodes += nodes;
		}
		/* hotcold=frequency: by how often its first range was
		 * written before; age: an overwrite by the age of what it
		 * replaces, new data is cold. */
		if (!err && fl->hotcold == ZCOW_HOTCOLD_FREQUENCY)
			is_hot = zcow_heat_is_hot(fs, f->root, f->ino,
						  wc->off);
		else if (!err && fl->hotcold == ZCOW_HOTCOLD_AGE)
			is_hot = gen && zcow_zoned_overwrite_is_hot(fs, gen);
		if (!err)
			err = zcow_zoned_pick_data_bg(fs, f->ino, is_hot, len,
						      &bg, &part);
		if (err || !plain)
			break;
		want = &fl->plain_locks[(bg->physical /
					 fs->dev->info.zone_size) %
					ZCOW_PLAIN_LOCKS];
		if (plock == want && plock_bg == bg->start)
			break;
		/*
		 * zone_append=off: reservation and plain write of one block
		 * group run under its plain lock, taken before the fs lock;
		 * check the pick again once it is held.
		 */
		plock_bg = bg->start;
		write_unhold_locked(wc);
		UNLOCK(fs);
		if (plock)
			pthread_mutex_unlock(plock);
		plock = want;
		pthread_mutex_lock(plock);
	}
	if (!err)
		err = zcow_bg_reserve_in(fs, bg, part, &wc->logical);
	if (!err && gen)
		zcow_zoned_note_overwrite(fs, gen);	/* once per write */
	if (!err && fl->hotcold == ZCOW_HOTCOLD_FREQUENCY)
		zcow_heat_note_write(fs, f->root, f->ino, wc->off, part);
	if (!err) {
		err = inflight_add_locked(fl, f->root, f->ino);
		if (err)	/* nothing written: the offset may rewind */
			zcow_bg_release(fs, wc->logical, part, false);
	}
	if (err)
		write_unhold_locked(wc);
	UNLOCK(fs);
	if (err) {
		if (plock)
			pthread_mutex_unlock(plock);
		return err;
	}
	wc->bg = bg;
	wc->len = part;
	wc->plock = plock;
	return 0;
}

/*
 * Step 4, submit: the device write, outside the fs lock, by the zoned
 * policy (Zone Append, or a plain write at the reservation).  Returns
 * with the fs lock held: 0, or -errno with the reservation given back
 * (its bytes unusable).
 */
static int write_submit(struct write_cmd *wc)
{
	struct zcow_fs *fs = wc->f->fs;
	struct zcow_files *fl = fs->files;
	struct zcow_bg *bg = wc->bg;
	uint64_t len = wc->len;
	int err;

	/*
	 * The device write, outside the fs lock.  @bg stays valid: it holds
	 * our reservation, so it cannot be removed.
	 */
	err = zcow_zoned_write_data(fs, bg, wc->logical, wc->buf, len,
				    &wc->landed);
	if (wc->plock)
		pthread_mutex_unlock(wc->plock);
	LOCK(fs);
	if (!err && (wc->landed < bg->start ||
		     wc->landed + len > bg->start + bg->alloc_offset)) {
		zlog_err(TAG, "append landed at %" PRIu64 ", outside the reservations of block group %" PRIu64,
			 wc->landed, bg->start);
		bg->is_wp_stale = true;
		err = -EIO;
	}
	if (err) {
		zlog_err(TAG, "data write of %" PRIu64 " bytes for inode %" PRIu64 " failed: %d",
			 len, wc->f->ino, err);
		write_unhold_locked(wc);
		zcow_bg_release(fs, wc->logical, len, true);
		/* The group's offset back at the device's write pointer now,
		 * or once its other writes in flight have landed (the next
		 * reservation in it). */
		zcow_bg_sync_wp(bg);
		return err;
	}
	if (zcow_zoned_use_append(fs, bg)) {
		fl->nr_appends++;
		fl->nr_appends_moved += wc->landed != wc->logical;
	} else {
		fl->nr_data_writes++;
	}
	return 0;
}

/*
 * Step 5, record, under the fs lock: the data's extent item, checksums and
 * file extent at the address where it landed, the extents it replaces
 * dropped, the inode item.  Returns 0 or -errno: before any item changed
 * the reservation is given back; after, the fs enters its error state.
 */
static int write_record(struct write_cmd *wc)
{
	struct zcow_file *f = wc->f;
	struct zcow_fs *fs = f->fs;
	struct zcow_files *fl = fs->files;
	uint64_t len = wc->len, off = wc->off, landed = wc->landed;
	uint64_t dropped = 0, nodes = 0, gen, seq[3], nr_old;
	struct zcow_fext *old;
	struct zcow_timespec now;
	struct zcow_inode in;
	struct zcow_fext fe;
	int err = 0;

	/*
	 * The reservation, held while the data was written (every check
	 * meanwhile counted it), covers the items when neither the
	 * transaction nor the trees it was counted from changed since (its
	 * count, for the whole, is no less than the part's).  Otherwise it
	 * is counted and checked again, under the lock held to the end:
	 * without room the write fails here, before any item changed; its
	 * data bytes become unusable.
	 */
	write_unhold_locked(wc);
	rsv_write_seqs(f, seq);
	if (wc->transid != fs->transid || memcmp(seq, wc->seq, sizeof(seq))) {
		err = rsv_write_locked(f, off, len, &nodes, &gen, &old,
				       &nr_old);
		if (!err)
			write_set_old(wc, len, old, nr_old);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, false);
	}
	if (err) {
		zcow_bg_release(fs, wc->logical, len, true);
		return err;
	}
	/* ORDER: the data is on the device (completion) before any item
	 * references its address; the commit makes both durable. */
	err = zcow_inode_get(f->tree, f->ino, &in);
	if (err) {
		zcow_bg_release(fs, wc->logical, len, true);
		return err;
	}
	err = extent_create_locked(fs, landed, len, wc->csums, f->root, f->ino,
				   off);
	fe.file_off = off;
	fe.generation = fs->transid;
	fe.disk_bytenr = landed;
	fe.disk_num_bytes = len;
	fe.offset = 0;
	fe.num_bytes = len;
	if (!err)
		err = put_write_fext_locked(wc, &fe, &dropped);
	zcow_files_now(fs, &now);
	if (!err && (wc->min_size > in.size || len != dropped ||
		     in.transid != fs->transid ||
		     !zcow_ts_eq(&in.mtime, &now) ||
		     !zcow_ts_eq(&in.ctime, &now))) {
		/* (A same-size overwrite in the same transaction and the
		 * same clock tick changes nothing of the inode item: it is
		 * not rewritten.) */
		if (wc->min_size > in.size)
			in.size = wc->min_size;
		in.nbytes = in.nbytes + len - dropped;
		in.transid = fs->transid;
		in.sequence++;
		zcow_inode_touch_mc(&in, &now);	/* file_update_time() */
		err = zcow_inode_put(f->tree, &in);
	}
	if (err) {
		/* Half-applied metadata: stop writing, keep the last commit. */
		zlog_err(TAG, "inode %" PRIu64 ": metadata update after the data write failed: %d",
			 f->ino, err);
		if (!fs->error)
			fs->error = err;
		return err;
	}
	if (f->root == ZCOW_FS_TREE_OBJECTID)
		zcow_log_note_range(fs, f->ino, off, len);
	fl->dirty_bytes += len;
	if (fl->commit_bytes && fl->dirty_bytes >= fl->commit_bytes)
		err = zcow_files_commit_locked(fs);
	return err;
}

/*
 * Give back the parts of a write that landed and were not recorded: their
 * bytes are written but referenced by nothing (unusable), the file keeps
 * what it had.  Under the fs lock.
 */
static void write_unwind_locked(struct write_cmd *wc, uint64_t nr)
{
	struct zcow_file *f;
	uint64_t k;

	for (k = 0; k < nr; k++) {
		f = wc[k].f;
		write_unhold_locked(&wc[k]);
		wc[k].bg->landed -= wc[k].len;
		zcow_bg_release(f->fs, wc[k].logical, wc[k].len, true);
		inflight_done_locked(f->fs->files, f->root, f->ino);
	}
}

/*
 * Write the block-aligned @buf at the block-aligned file offset @off; the
 * inode's size becomes at least @min_size.  One data extent, or several
 * when the piece is split at the end of a data block group (each part its
 * own extent, checksums and file extent item; the size grows with each
 * part).  The steps of the header: checksums, then per part reserve and
 * submit, and only once the last part has landed, the records of all.
 * A part that finds no room (-ENOSPC: data or metadata) or whose write
 * fails gives back the parts before it, written and never referenced:
 * the write changed nothing (docs/space.md).  Only a record that fails
 * after the parts before it were recorded leaves a prefix of them.
 */
static int write_extent(struct zcow_file *f, const uint8_t *buf,
			uint64_t len, uint64_t off, uint64_t min_size)
{
	struct zcow_fs *fs = f->fs;
	struct write_cmd *wc;
	uint32_t *csums;
	uint64_t b, done, nr = 0, nr_set = 0, k, nodes, gen;
	int err = 0;

	csums = malloc(len / BS * 4);
	wc = malloc(len / BS * sizeof(*wc));	/* parts: set one by one */
	if (!csums || !wc) {
		free(csums);
		free(wc);
		return -ENOMEM;
	}
	for (b = 0; b < len; b += BS)
		csums[b / BS] = htole32(zcow_crc32c(buf + b, BS));
	for (done = 0; done < len;) {
		struct write_cmd *w = &wc[nr];

		*w = (struct write_cmd){ .f = f, .buf = buf + done,
					 .len = len - done, .off = off + done,
					 .csums = csums + done / BS };
		nr_set = nr + 1;
		err = write_reserve(w);	/* w->len: this part */
		if (err) {
			LOCK(fs);
			break;
		}
		done += w->len;
		w->min_size = done < len && off + done < min_size ?
				      off + done : min_size;
		/* write_submit returns with the fs lock held */
		err = write_submit(w);
		if (err) {
			inflight_done_locked(fs->files, f->root, f->ino);
			break;
		}
		/*
		 * ORDER: nothing references a part until every part has
		 * room and has landed.  Its zone may be FULL now: a pick
		 * for the next part does not wait for it.
		 */
		w->bg->landed += w->len;
		nr++;
		if (done == len)
			break;
		UNLOCK(fs);
	}
	/* Split: the items of the whole admitted before any goes in (in
	 * place of its parts' reservations). */
	if (!err && nr > 1) {
		for (k = 0; k < nr; k++)
			write_unhold_locked(&wc[k]);
		err = rsv_write_locked(f, off, len, &nodes, &gen, NULL, NULL);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, false);
	}
	if (err) {
		write_unwind_locked(wc, nr);
		goto out;
	}
	for (k = 0; k < nr; k++) {
		wc[k].bg->landed -= wc[k].len;
		if (!err)
			err = write_record(&wc[k]);
		else {	/* after a record failed: given back */
			write_unhold_locked(&wc[k]);
			zcow_bg_release(fs, wc[k].logical, wc[k].len, true);
		}
		inflight_done_locked(fs->files, f->root, f->ino);
	}
out:
	UNLOCK(fs);
	for (k = 0; k < nr_set; k++)
		free(wc[k].old);
	free(wc);
	free(csums);
	return err;
}

/*
 * zcow writes no inline extent.  A write or truncate of a file that has
 * one (the kernel's) first rewrites it as a regular extent of one block
 * (its bytes, zeros after them), as the kernel turns an inline extent
 * into a regular one before the file grows past it: an inline extent
 * must stay the file's only one.  0 or -errno.
 */
static int expand_inline(struct zcow_file *f)
{
	uint8_t blk[BS];
	int err;

	if (f->no_inline)
		return 0;
	LOCK(f->fs);
	memset(blk, 0, sizeof(blk));
	err = read_inline_locked(f, blk, 0, BS);
	UNLOCK(f->fs);
	/* zcow never writes an inline extent: once gone, never back */
	if (!err)
		f->no_inline = true;
	if (err <= 0)
		return err;
	return write_extent(f, blk, BS, 0, 0);
}

static int64_t pwrite_at(struct zcow_file *f, const void *ubuf, uint64_t len,
			 uint64_t off)
{
	struct zcow_fs *fs = f->fs;
	uint64_t a = round_down(off), e = off + len, b = round_up(e), pos;
	uint64_t max = fs->files->max_extent;
	uint8_t *buf = NULL;
	int err = 0;

	if (f->is_dir)
		return -EISDIR;
	if (f->is_ro)
		return f->is_ro_tree ? -EROFS : -EBADF;
	if (fs->read_only)
		return -EROFS;
	if (len == 0)
		return 0;
	if (e < off)
		return -EFBIG;
	err = expand_inline(f);
	if (err)
		return err;
	for (pos = a; pos < b; pos += max) {
		uint64_t n = b - pos < max ? b - pos : max;
		uint64_t lo = pos > off ? pos : off;
		uint64_t hi = pos + n < e ? pos + n : e;

		/* A piece of whole blocks is written from the caller's
		 * buffer: its checksums and its device write read the same
		 * bytes, the buffer being the call's until it returns. */
		if (lo == pos && hi == pos + n) {
			err = write_extent(f, (const uint8_t *)ubuf + (pos - off),
					   n, pos, hi);
			if (err)
				break;
			continue;
		}
		if (!buf)
			buf = malloc(b - a > max ? max : b - a);
		if (!buf) {
			err = -ENOMEM;
			break;
		}
		/* Read-modify-write of partial first and last blocks. */
		LOCK(fs);
		memset(buf, 0, n);
		if (lo > pos)
			err = read_raw_locked(f, buf, pos, BS);
		/* the tail block, unless it is the head block */
		if (!err && hi < pos + n && !(lo > pos && n == BS))
			err = read_raw_locked(f, buf + n - BS, pos + n - BS,
					      BS);
		UNLOCK(fs);
		if (err)
			break;
		memcpy(buf + (lo - pos), (const uint8_t *)ubuf + (lo - off),
		       hi - lo);
		err = write_extent(f, buf, n, pos, hi);
		if (err)
			break;
	}
	free(buf);
	return err ? err : (int64_t)len;
}

int64_t zcow_pwrite(struct zcow_file *f, const void *ubuf, uint64_t len,
		    uint64_t off)
{
	struct zcow_fs *fs = f->fs;
	struct zcow_inode in;
	int64_t ret;
	int err;

	if (!f->is_append || f->is_dir || f->is_ro || fs->read_only || !len)
		return pwrite_at(f, ubuf, len, off);
	/*
	 * O_APPEND: at the end of the file whatever @off says (pwrite(2) on
	 * Linux); the size is read and the whole write done under the
	 * append lock, so two appends never take the same end.
	 */
	pthread_mutex_lock(&fs->files->append_lock);
	LOCK(fs);
	err = zcow_inode_get(f->tree, f->ino, &in);
	UNLOCK(fs);
	ret = err ? err : pwrite_at(f, ubuf, len, in.size);
	pthread_mutex_unlock(&fs->files->append_lock);
	return ret;
}

int zcow_truncate(struct zcow_file *f, uint64_t size)
{
	struct zcow_fs *fs = f->fs;
	struct zcow_inode in;
	uint64_t dropped = 0;
	int err;

	if (f->is_dir)
		return -EISDIR;
	if (f->is_ro)
		return f->is_ro_tree ? -EROFS : -EBADF;
	if (fs->read_only)
		return -EROFS;
	err = expand_inline(f);
	if (err)
		return err;
	LOCK(fs);
	err = zcow_inode_get(f->tree, f->ino, &in);
	UNLOCK(fs);
	if (err)
		return err;
	if (size < in.size && size % BS) {
		/* The block holding the new end: a copy with a zero tail, so
		 * bytes beyond EOF always read as zeros later. */
		uint8_t blk[BS];

		LOCK(fs);
		err = read_raw_locked(f, blk, round_down(size), BS);
		UNLOCK(fs);
		if (err)
			return err;
		memset(blk + size % BS, 0, BS - size % BS);
		err = write_extent(f, blk, BS, round_down(size), 0);
		if (err)
			return err;
	}
	LOCK(fs);
	err = fs->error ? -EIO : 0;
	if (!err) {
		uint64_t nodes = 0;

		/* the inode item, and the extents dropped */
		err = zcow_rsv_fs_items(fs, f->tree, 1, &nodes);
		if (!err && size < in.size)
			err = zcow_rsv_drop_extents_locked(fs, f->tree, f->ino,
							   round_up(size),
							   UINT64_MAX, &nodes);
		/* A shrink frees space: it may use the global reserve, as
		 * unlink does, so that it runs on a full fs. */
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes,
						       size < in.size);
	}
	if (!err && size < in.size)
		err = zcow_drop_extents_locked(fs, f->tree, f->root, f->ino,
					       round_up(size), UINT64_MAX,
					       &dropped);
	if (!err)
		err = zcow_inode_get(f->tree, f->ino, &in);
	if (!err) {
		struct zcow_timespec now;

		in.size = size;
		in.nbytes -= dropped < in.nbytes ? dropped : in.nbytes;
		in.transid = fs->transid;
		in.sequence++;
		/* do_truncate(): ATTR_MTIME | ATTR_CTIME, size changed or
		 * not */
		zcow_files_now(fs, &now);
		zcow_inode_touch_mc(&in, &now);
		err = zcow_inode_put(f->tree, &in);
	}
	if (!err && f->root == ZCOW_FS_TREE_OBJECTID)
		zcow_log_note_write(fs, f->ino);
	UNLOCK(fs);
	return err;
}

/* @fn (a tree-log entry point) for @f's inode, once the file's appends
 * have their final addresses. */
static int sync_inode(struct zcow_file *f,
		      int (*fn)(struct zcow_fs *fs, uint64_t ino))
{
	struct zcow_fs *fs = f->fs;
	struct zcow_files *fl = fs->files;
	int err;

	if (fs->read_only)
		return 0;
	LOCK(fs);
	while (inflight_find(fl, f->root, f->ino))
		pthread_cond_wait(&fl->cond, &fl->lock);
	/* The tree-log logs the fs tree only: a file of a writable
	 * snapshot is made durable by a commit (of a read-only one, it
	 * always is). */
	if (fs->error)
		err = -EIO;
	else if (f->root == ZCOW_FS_TREE_OBJECTID)
		err = fn(fs, f->ino);
	else if (zcow_root_is_rdonly_locked(fs, f->root))
		err = 0;
	else
		err = zcow_files_commit_locked(fs);
	UNLOCK(fs);
	return err;
}

int zcow_fsync(struct zcow_file *f)
{
	/* The tree-log (or, treelog=off, a full commit). */
	return sync_inode(f, zcow_log_fsync_locked);
}

int zcow_fsync_join(struct zcow_file *f)
{
	return sync_inode(f, zcow_log_join_locked);
}

int zcow_fdatasync(struct zcow_file *f)
{
	/* The inode item holds the size: logged as fsync logs it. */
	return zcow_fsync(f);
}

int zcow_sync(struct zcow_fs *fs)
{
	struct zcow_files *fl;
	int err;

	if (!fs || !fs->files)
		return -EINVAL;
	if (fs->read_only)
		return 0;
	fl = fs->files;
	LOCK(fs);
	while (fl->nr_inflight)
		pthread_cond_wait(&fl->cond, &fl->lock);
	err = fs->error ? -EIO : zcow_files_commit_locked(fs);
	UNLOCK(fs);
	return err;
}

int zcow_fallocate(struct zcow_file *f, uint64_t off, uint64_t len)
{
	(void)off;
	(void)len;
	/* debug only: callers get the errno for every call (fio's falloc
	 * engine makes one per I/O), as btrfs returns it silently */
	zlog(ZLOG_DEBUG, TAG, "inode %" PRIu64 ": fallocate refused: no preallocation on a zoned file system (the space could only be written once)",
	     f->ino);
	return -EOPNOTSUPP;
}

int zcow_set_nodatacow(struct zcow_file *f)
{
	zlog_err(TAG, "inode %" PRIu64 ": nodatacow refused: zoned file systems never overwrite data in place",
		 f->ino);
	return -EOPNOTSUPP;
}
