// SPDX-License-Identifier: MIT
/*
 * Device replace on zoned devices (seeds 008, 009): see core/replace.h.
 *
 * The order of a replace (btrfs's dev-replace.c and scrub.c, zoned):
 *   start   every group with a device extent on the source is marked
 *           to_copy (seed 008); the target's zones are reset; the
 *           dev-replace item (state STARTED) is committed.
 *   step    one group at a time, in the source's physical order.  Its
 *           start, under the file system's lock with no write in flight:
 *           a commit, so that the extent tree names every live extent
 *           and every node allocated is written; then the group is
 *           frozen (nothing is allocated in it, it is not removed).  Its
 *           copy, in pieces of at most 1 MiB, each found under the lock
 *           and read and written without it (the jobs' writes to other
 *           groups go on meanwhile): each live extent read from the
 *           source and written to the target at the same offset with
 *           plain writes, the holes between them (space freed before the
 *           copy) written as zeroes so that every write lands at the
 *           target's write pointer, and at the end the target zone
 *           levelled with the source's write pointer (seed 009);
 *           conventional zones get the extents only.  Then the group's
 *           to_copy is cleared and it is thawed: from now on its writes
 *           are cloned.
 *   finish  every group copied, every write pointer checked level, the
 *           source's devid (and uuid) moved to the target in memory and
 *           the FINISHED item committed: that commit writes the trees
 *           and the superblocks on the target.  Then the source's
 *           superblock copies are wiped, so that it no longer mounts.
 * A replace that was running when the file system went down is cancelled
 * at mount: until the finishing commit everything lives on the source
 * (every write goes there), so the source is intact; the target is not a
 * device of the file system until that commit.
 */
#include "replace.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "fs.h"
#include "le.h"
#include "zlog.h"

#define TAG "replace"

#define DEV_REPLACE_KEY		250	/* BTRFS_DEV_REPLACE_KEY */
#define DEV_REPLACE_ITEM_SIZE	72u	/* struct btrfs_dev_replace_item */
#define COPY_CHUNK		(1024 * 1024)	/* bytes per copy command */

bool zcow_replace_is_source(const struct zcow_fs *fs,
			    const struct zcow_device *zd)
{
	return fs->replace && fs->replace->src == zd;
}

/* ---- the file system's commands on source groups --------------------- */

static void clone_failed(struct zcow_replace *rp, struct zcow_bg *bg, int ret)
{
	if (rp->error)
		return;
	zlog_err(TAG, "writing the target for group %" PRIu64 " failed: %d; the replace cannot finish",
		 bg->start, ret);
	rp->error = ret;
}

/* The clone of a write of @bg that reached the source at @phys (io_lock
 * held): only once the group is copied, never after a failed clone. */
static void clone_write(struct zcow_fs *fs, struct zcow_bg *bg,
			const void *buf, uint64_t len, uint64_t phys,
			unsigned int flags, enum zdev_class cls)
{
	struct zcow_replace *rp = fs->replace;
	int ret;

	if (bg->to_copy || rp->error)
		return;
	ret = zdev_write(rp->tgt, buf, len, phys, flags, cls);
	if (ret)
		clone_failed(rp, bg, ret);
	else
		fs->replace_st.bytes_cloned += len;
}

int zcow_replace_write(struct zcow_fs *fs, struct zcow_bg *bg,
		       const void *buf, uint64_t len, uint64_t off,
		       unsigned int flags, enum zdev_class cls)
{
	struct zcow_replace *rp = fs->replace;
	int ret;

	pthread_mutex_lock(&rp->io_lock);
	ret = zdev_write(bg->dev->zdev, buf, len, bg->physical + off, flags,
			 cls);
	if (!ret)
		clone_write(fs, bg, buf, len, bg->physical + off, flags, cls);
	pthread_mutex_unlock(&rp->io_lock);
	return ret;
}

int zcow_replace_append(struct zcow_fs *fs, struct zcow_bg *bg,
			const void *buf, uint64_t len, unsigned int flags,
			enum zdev_class cls, uint64_t *off_ret)
{
	struct zcow_replace *rp = fs->replace;
	uint64_t phys;
	int ret;

	pthread_mutex_lock(&rp->io_lock);
	ret = zdev_append(bg->dev->zdev, buf, len, bg->physical, flags, cls,
			  &phys);
	if (!ret) {
		*off_ret = phys - bg->physical;
		/* the clone is a plain write where the append landed: the
		 * target's write pointer is there (the lock keeps the
		 * order) */
		clone_write(fs, bg, buf, len, phys, flags, cls);
	}
	pthread_mutex_unlock(&rp->io_lock);
	return ret;
}

int zcow_replace_zone_mgmt(struct zcow_fs *fs, struct zcow_bg *bg,
			   enum zdev_zone_action action)
{
	struct zcow_replace *rp = fs->replace;
	int ret, r;

	pthread_mutex_lock(&rp->io_lock);
	ret = zdev_zone_mgmt(bg->dev->zdev, action, bg->physical,
			     bg->length, ZDEV_CLASS_ZONE);
	if (!ret && !bg->to_copy && bg->is_seq && !rp->error) {
		r = zdev_zone_mgmt(rp->tgt, action, bg->physical, bg->length,
				   ZDEV_CLASS_ZONE);
		if (r)
			clone_failed(rp, bg, r);
	}
	pthread_mutex_unlock(&rp->io_lock);
	return ret;
}

int zcow_replace_new_group(struct zcow_fs *fs, struct zcow_bg *bg)
{
	struct zcow_replace *rp = fs->replace;
	struct zdev_zone z;
	int ret;

	if (!rp || bg->dev != rp->src || !bg->is_seq)
		return 0;
	ret = zdev_report_zone(rp->tgt, bg->physical, &z);
	if (!ret && z.cond != ZDEV_COND_EMPTY)
		ret = zdev_reset_zone(rp->tgt, bg->physical, ZDEV_CLASS_ZONE);
	return ret;
}

/* ---- the dev-replace item ---------------------------------------------- */

int zcow_replace_sync_item(struct zcow_fs *fs, bool *changed_ret)
{
	const struct zcow_replace_status *st = &fs->replace_st;
	struct zcow_key key = { 0, DEV_REPLACE_KEY, 0 };
	uint8_t item[DEV_REPLACE_ITEM_SIZE];
	bool is_running = st->state == ZCOW_REPLACE_STARTED ||
			  st->state == ZCOW_REPLACE_SUSPENDED;
	int ret;

	if (!fs->replace_item_dirty)
		return 0;
	memset(item, 0, sizeof(item));
	/* btrfs writes src_devid -1 once no replace runs */
	put64(item + 0, is_running ? st->src_devid : UINT64_MAX);
	put64(item + 8, st->cursor);		/* cursor_left */
	put64(item + 16, st->cursor);		/* cursor_right */
	put64(item + 24, 0);			/* read from the source */
	put64(item + 32, (uint64_t)st->state);
	/* time_started, time_stopped: zcow keeps no wall-clock time on
	 * disk (same workload, same image); the error counts are 0 */
	ret = zcow_tree_put(&fs->dev_tree, &key, item, sizeof(item));
	if (ret)
		return ret;
	fs->replace_item_dirty = false;
	*changed_ret = true;
	return 0;
}

int zcow_replace_load(struct zcow_fs *fs)
{
	struct zcow_key key = { 0, DEV_REPLACE_KEY, 0 };
	uint8_t item[DEV_REPLACE_ITEM_SIZE];
	struct zcow_replace_status *st = &fs->replace_st;
	uint32_t size;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = zcow_tree_search(&fs->dev_tree, &key, item, sizeof(item), &size);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	if (size != DEV_REPLACE_ITEM_SIZE) {
		/* btrfs ignores an item of another size */
		zlog_warn(TAG, "dev-replace item of %u bytes ignored", size);
		return 0;
	}
	st->src_devid = get64(item);
	st->cursor = get64(item + 8);
	st->state = (enum zcow_replace_state)get64(item + 32);
	if (st->state != ZCOW_REPLACE_STARTED &&
	    st->state != ZCOW_REPLACE_SUSPENDED)
		return 0;
	zlog_warn(TAG, "the replace of devid %" PRIu64 " did not finish (copied up to offset %" PRIu64 "): cancelled, devid %" PRIu64 " stays; start it again",
		  st->src_devid, st->cursor, st->src_devid);
	st->state = ZCOW_REPLACE_CANCELED;
	fs->replace_item_dirty = !fs->read_only;
	return 0;
}

/* ---- the copy ------------------------------------------------------------ */

/* Wait for every data write in flight (fs->files->lock held). */
static void drain_writes(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;

	while (fl->nr_inflight)
		pthread_cond_wait(&fl->cond, &fl->lock);
}

/* Write zeroes to the target over [@from, @to) of @bg (bytes from its
 * start). */
static int zero_fill(struct zcow_fs *fs, struct zcow_bg *bg, uint64_t from,
		     uint64_t to)
{
	static const uint8_t zeros[COPY_CHUNK];
	uint64_t n;
	int ret;

	while (from < to) {
		n = to - from < COPY_CHUNK ? to - from : COPY_CHUNK;
		ret = zdev_write(fs->replace->tgt, zeros, n,
				 bg->physical + from, 0, ZDEV_CLASS_REPLACE);
		if (ret)
			return ret;
		fs->replace_st.bytes_zeroed += n;
		from += n;
	}
	return 0;
}

/* Copy [@from, @to) of @bg from the source to the target. */
static int copy_range(struct zcow_fs *fs, struct zcow_bg *bg, uint8_t *buf,
		      uint64_t from, uint64_t to)
{
	uint64_t n;
	int ret;

	while (from < to) {
		n = to - from < COPY_CHUNK ? to - from : COPY_CHUNK;
		ret = zdev_read(bg->dev->zdev, buf, n, bg->physical + from,
				ZDEV_CLASS_REPLACE);
		if (!ret)
			ret = zdev_write(fs->replace->tgt, buf, n,
					 bg->physical + from, 0,
					 ZDEV_CLASS_REPLACE);
		if (ret)
			return ret;
		fs->replace_st.bytes_copied += n;
		from += n;
	}
	return 0;
}

/* Where the source zone of @bg is written to (bytes from its start),
 * and whether it is full. */
static int source_wp(struct zcow_bg *bg, uint64_t *wp_ret, bool *full_ret)
{
	struct zdev_zone z;
	int ret;

	ret = zdev_report_zone(bg->dev->zdev, bg->physical, &z);
	if (ret)
		return ret;
	if (z.cond == ZDEV_COND_OFFLINE) {
		zlog_err(TAG, "group %" PRIu64 ": source zone offline, cannot copy",
			 bg->start);
		return -EIO;
	}
	*full_ret = z.cond == ZDEV_COND_FULL || z.cond == ZDEV_COND_READONLY;
	*wp_ret = *full_ret ? z.capacity : z.wp - z.start;
	if (!zdev_zone_is_seq(&z))
		*wp_ret = bg->alloc_offset;
	return 0;
}

/*
 * Seed 009: bring the target zone of @bg level with the source's write
 * pointer: zeroes from the target's write pointer up to it, a zone
 * finish where the source zone is full (the same state, without writing
 * the rest of the zone).  A target ahead of the source is -EUCLEAN.
 */
static int level_zone(struct zcow_fs *fs, struct zcow_bg *bg)
{
	struct zdev_zone t;
	uint64_t swp, twp;
	bool full;
	int ret;

	if (!bg->is_seq)
		return 0;
	ret = source_wp(bg, &swp, &full);
	if (!ret)
		ret = zdev_report_zone(fs->replace->tgt, bg->physical, &t);
	if (ret)
		return ret;
	twp = t.cond == ZDEV_COND_FULL ? t.capacity : t.wp - t.start;
	if (twp > swp) {
		zlog_err(TAG, "group %" PRIu64 ": target written to %" PRIu64 ", source only to %" PRIu64,
			 bg->start, twp, swp);
		return -EUCLEAN;
	}
	if (twp < swp && (!full || swp < t.capacity))
		ret = zero_fill(fs, bg, twp, swp);
	if (!ret && full && t.cond != ZDEV_COND_FULL)
		ret = zdev_finish_zone(fs->replace->tgt, bg->physical,
				       ZDEV_CLASS_REPLACE);
	return ret;
}

/* The to_copy group lowest on the source, or NULL. */
static struct zcow_bg *next_to_copy(struct zcow_fs *fs)
{
	struct zcow_bg *best = NULL;
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (!bg->to_copy)
			continue;
		if (bg->is_deleted) {	/* its zone is reset: nothing live */
			bg->to_copy = false;
			continue;
		}
		if (!best || bg->physical < best->physical)
			best = bg;
	}
	return best;
}

/*
 * Lock held: the group being copied, or the next one begun.  Beginning a
 * group: no write in flight, a commit (the extent tree then names every
 * live extent, every node allocated is written), and the group frozen
 * (is_copying: nothing is allocated in it, it is not removed) until its
 * copy ends, so that its live extents and its write pointer stay as they
 * are while the copy runs without the lock.  *bg_ret NULL: all copied.
 */
static int current_group(struct zcow_fs *fs, struct zcow_bg **bg_ret)
{
	struct zcow_replace *rp = fs->replace;
	struct zcow_files *fl = fs->files;
	struct zcow_bg *bg;
	struct zdev_zone t;
	uint32_t s;
	int ret;

	*bg_ret = NULL;
	if (rp->cur) {
		*bg_ret = zcow_bg_lookup(fs, rp->cur);
		return 0;
	}
	if (!next_to_copy(fs))
		return 0;
	drain_writes(fs);
	ret = zcow_files_commit_locked(fs);
	if (ret)
		return ret;
	bg = next_to_copy(fs);
	if (!bg)
		return 0;
	/* a target zone left written (an earlier, cancelled replace) */
	ret = zdev_report_zone(rp->tgt, bg->physical, &t);
	if (!ret && bg->is_seq && t.cond != ZDEV_COND_EMPTY)
		ret = zdev_reset_zone(rp->tgt, bg->physical,
				      ZDEV_CLASS_REPLACE);
	if (ret)
		return ret;
	bg->is_copying = true;
	for (s = 0; fl && s < fl->data_zones; s++)
		if (fl->data_active[s] == bg->start)
			fl->data_active[s] = 0;
	rp->cur = bg->start;
	rp->cur_pos = 0;
	rp->ext_end = 0;
	fs->replace_st.cursor = bg->physical;
	*bg_ret = bg;
	return 0;
}

/*
 * Lock held: the next piece of @bg from rp->cur_pos: zeroes up to *@a
 * (a hole: space freed before the copy), then live bytes [*@a, *@b), at
 * most COPY_CHUNK of them, contiguous extents joined.  *@b == *@a: no
 * live byte is left (the tail up to the write pointer is levelled).
 */
static int next_piece(struct zcow_fs *fs, struct zcow_bg *bg, uint64_t *a,
		      uint64_t *b)
{
	struct zcow_replace *rp = fs->replace;
	struct zcow_key key = { bg->start + rp->cur_pos, 0, 0 };
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int ret;

	*a = *b = rp->cur_pos;
	if (rp->ext_end > rp->cur_pos) {	/* an extent begun before */
		*b = rp->ext_end;
		if (*b - *a > COPY_CHUNK)
			*b = *a + COPY_CHUNK;
	}
	zcow_tree_iter_init(&it, &fs->extent_tree, &key);
	while (!(ret = zcow_tree_iter_next(&it, &key, &data, &len))) {
		uint64_t ea, eb;

		if (key.objectid >= bg->start + bg->length)
			break;
		if (key.type == ZCOW_EXTENT_ITEM_KEY)
			eb = key.objectid + key.offset;
		else if (key.type == ZCOW_METADATA_ITEM_KEY)
			eb = key.objectid + fs->nodesize;
		else
			continue;
		ea = key.objectid - bg->start;
		eb -= bg->start;
		if (eb <= rp->cur_pos)
			continue;
		if (*b > *a && ea != *b)
			break;		/* not contiguous: the next piece */
		if (*b == *a)
			*a = *b = ea;
		*b = eb;
		rp->ext_end = eb;
		if (*b - *a >= COPY_CHUNK) {
			*b = *a + COPY_CHUNK;
			break;
		}
	}
	return ret == -ENOENT ? 0 : ret;
}

/*
 * Copy pieces until about @max_bytes are done (0: to the end of the
 * current group).  Takes and drops the lock: the I/O of a piece runs
 * without it.
 */
static int copy_some(struct zcow_fs *fs, uint64_t max_bytes, bool *done_ret)
{
	struct zcow_replace_status *st = &fs->replace_st;
	struct zcow_replace *rp = fs->replace;
	struct zcow_bg *bg;
	uint64_t done = 0, a, b, swp;
	uint8_t *buf;
	bool full;
	int ret;

	*done_ret = false;
	buf = malloc(COPY_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ret = rp->error;
		ret = ret ?: current_group(fs, &bg);
		if (ret || !bg) {
			*done_ret = !ret;
			break;
		}
		ret = next_piece(fs, bg, &a, &b);
		if (!ret && b > a) {
			if (b > bg->start + bg->length) {
				ret = -EUCLEAN;
				break;
			}
			/* the piece's I/O without the lock: the group is
			 * frozen, its zone on the target untouched by others */
			pthread_mutex_unlock(&fs->files->lock);
			ret = bg->is_seq && a > rp->cur_pos ?
				      zero_fill(fs, bg, rp->cur_pos, a) :
				      0;
			ret = ret ?: copy_range(fs, bg, buf, a, b);
			pthread_mutex_lock(&fs->files->lock);
			if (ret)
				break;
			rp->cur_pos = b;
			done += b - a;
		} else if (!ret) {
			/* every live byte copied: level (seed 009) */
			ret = source_wp(bg, &swp, &full);
			if (ret)
				break;
			pthread_mutex_unlock(&fs->files->lock);
			ret = bg->is_seq && swp > rp->cur_pos && !full ?
				      zero_fill(fs, bg, rp->cur_pos, swp) :
				      0;
			pthread_mutex_lock(&fs->files->lock);
			ret = ret ?: level_zone(fs, bg);
			if (ret)
				break;
			bg->to_copy = false;
			bg->is_copying = false;
			rp->cur = 0;
			st->nr_copied++;
			st->cursor = bg->physical + bg->length;
			fs->replace_item_dirty = true;
			zlog(ZLOG_DEBUG, TAG, "group %" PRIu64 " copied (%" PRIu64 " of %" PRIu64 ")",
			     bg->start, st->nr_copied, st->nr_to_copy);
			if (!max_bytes)
				break;
		}
		if (ret)
			break;
		if (max_bytes && done >= max_bytes)
			break;
	}
	free(buf);
	if (ret)
		zlog_err(TAG, "copying devid %" PRIu64 " failed: %d",
			 rp->src->devid, ret);
	return ret;
}

/* ---- the public calls ---------------------------------------------------- */

/* Do @a and @b keep their superblock copies in the same zones? */
static bool same_sb_zones(struct zcow_fs *fs, struct zdev *a, struct zdev *b)
{
	struct zcow_sb_loc la, lb;
	int m;

	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		zcow_sb_locate_mirror(a, fs->placement, m, &la);
		zcow_sb_locate_mirror(b, fs->placement, m, &lb);
		if (la.kind != lb.kind || la.nr_zones != lb.nr_zones ||
		    memcmp(la.zone, lb.zone, sizeof(la.zone)) ||
		    la.fixed != lb.fixed)
			return false;
	}
	return true;
}

/* What a sequential zone of @dev holds (its zone size when it reports
 * no capacity). */
static uint64_t zone_cap(const struct zdev *dev)
{
	return dev->info.zone_capacity ? dev->info.zone_capacity :
					 dev->info.zone_size;
}

static int check_target(struct zcow_fs *fs, struct zcow_device *src,
			struct zdev *tgt)
{
	const char *name = tgt->spec[0] ? tgt->spec : "the target";
	unsigned int d;
	int ret;

	for (d = 0; d < fs->nr_devs; d++)
		if (fs->devs[d].zdev == tgt) {
			zlog_err(TAG, "%s is devid %" PRIu64 " of this file system",
				 name, fs->devs[d].devid);
			return -EINVAL;
		}
	ret = zcow_devs_compatible(src->zdev, tgt);
	if (ret)
		return ret;
	if (tgt->info.size < zcow_device_size(src)) {
		zlog_err(TAG, "%s has %" PRIu64 " bytes, smaller than devid %" PRIu64 " (%" PRIu64 ")",
			 name, tgt->info.size, src->devid,
			 zcow_device_size(src));
		return -EINVAL;
	}
	if (zone_cap(tgt) < zone_cap(src->zdev)) {
		zlog_err(TAG, "%s: zones hold %" PRIu64 " bytes, fewer than devid %" PRIu64 "'s (%" PRIu64 ")",
			 name, zone_cap(tgt), src->devid,
			 zone_cap(src->zdev));
		return -EINVAL;
	}
	if (!same_sb_zones(fs, src->zdev, tgt)) {
		zlog_err(TAG, "%s keeps its superblock copies in other zones than devid %" PRIu64 " (sizes %" PRIu64 " and %" PRIu64 ")",
			 name, src->devid, tgt->info.size, src->zdev->info.size);
		return -EINVAL;
	}
	return zcow_dev_check_active_zones(tgt, fs->placement, "replace");
}

int zcow_replace_start(struct zcow_fs *fs, uint64_t src_devid,
		       struct zdev *tgt)
{
	struct zcow_device *src;
	struct zcow_replace *rp;
	uint64_t i;
	int ret;

	if (fs->read_only || fs->error)
		return -EROFS;
	if (!fs->has_trees || !fs->files)
		return -EINVAL;
	if (fs->replace) {
		zlog_err(TAG, "a replace of devid %" PRIu64 " runs already",
			 fs->replace->src->devid);
		return -EBUSY;
	}
	src = zcow_fs_device(fs, src_devid);
	if (!src) {
		zlog_err(TAG, "no devid %" PRIu64 " in this file system",
			 src_devid);
		return -ENOENT;
	}
	ret = check_target(fs, src, tgt);
	if (ret)
		return ret;
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	pthread_mutex_init(&rp->io_lock, NULL);
	rp->src = src;
	rp->tgt = tgt;
	pthread_mutex_lock(&fs->files->lock);
	drain_writes(fs);
	ret = zcow_dev_reset_zones(tgt);
	if (ret) {
		zlog_err(TAG, "resetting the target's zones failed: %d", ret);
		goto fail;
	}
	/* seed 008: the groups that exist now are the ones to copy */
	memset(&fs->replace_st, 0, sizeof(fs->replace_st));
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (bg->dev == src && !bg->is_deleted) {
			bg->to_copy = true;
			fs->replace_st.nr_to_copy++;
		}
	}
	fs->replace = rp;
	fs->replace_st.state = ZCOW_REPLACE_STARTED;
	fs->replace_st.src_devid = src_devid;
	fs->replace_item_dirty = true;
	ret = zcow_files_commit_locked(fs);
	if (ret) {
		zcow_replace_drop(fs);
		pthread_mutex_unlock(&fs->files->lock);
		return ret;
	}
	zlog_info(TAG, "replacing devid %" PRIu64 " (%s) by %s: %" PRIu64 " groups to copy",
		  src_devid, src->zdev->spec, tgt->spec,
		  fs->replace_st.nr_to_copy);
	pthread_mutex_unlock(&fs->files->lock);
	return 0;
fail:
	pthread_mutex_unlock(&fs->files->lock);
	pthread_mutex_destroy(&rp->io_lock);
	free(rp);
	return ret;
}

int zcow_replace_step(struct zcow_fs *fs, uint64_t max_bytes, bool *done_ret)
{
	int ret;

	*done_ret = false;
	if (!fs->files)
		return -EINVAL;
	pthread_mutex_lock(&fs->files->lock);
	if (!fs->replace)
		ret = -EINVAL;
	else if (fs->error)
		ret = -EROFS;
	else
		ret = copy_some(fs, max_bytes, done_ret);
	pthread_mutex_unlock(&fs->files->lock);
	return ret;
}

/* Wipe the superblock copies of @dev (btrfs_scratch_superblocks): its
 * log zones reset, a fixed copy overwritten with zeroes. */
static void wipe_supers(struct zcow_fs *fs, struct zdev *dev)
{
	static const uint8_t zeros[ZCOW_SB_SIZE];
	struct zcow_sb_loc loc;
	unsigned int i;
	int m, ret = 0;

	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		if (zcow_sb_locate_mirror(dev, fs->placement, m, &loc))
			continue;
		if (loc.kind == ZCOW_SB_LOC_FIXED)
			ret = zdev_write(dev, zeros, ZCOW_SB_SIZE, loc.fixed,
					 ZDEV_WRITE_FUA, ZDEV_CLASS_SB);
		for (i = 0; loc.kind == ZCOW_SB_LOC_LOG && i < loc.nr_zones;
		     i++)
			ret = ret ? ret :
				    zdev_reset_zone(dev, loc.zone[i],
						    ZDEV_CLASS_SB);
		if (ret)
			zlog_warn(TAG, "wiping superblock mirror %d of the old device failed: %d",
				  m, ret);
	}
}

/* Every group of the source level on the target (lock held). */
static int level_all(struct zcow_fs *fs)
{
	uint64_t i;
	int ret;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (bg->dev != fs->replace->src || bg->is_deleted)
			continue;
		ret = level_zone(fs, bg);
		if (ret)
			return ret;
	}
	return 0;
}

int zcow_replace_finish(struct zcow_fs *fs)
{
	struct zcow_replace *rp;
	struct zcow_device *src;
	struct zdev *old;
	bool done = false;
	int ret;

	if (!fs->files)
		return -EINVAL;
	pthread_mutex_lock(&fs->files->lock);
	rp = fs->replace;
	if (!rp) {
		ret = -EINVAL;
		goto out;
	}
	while (!done) {
		ret = copy_some(fs, UINT64_MAX, &done);
		if (ret)
			goto out;
	}
	/* seed 009: level every group (those made during the replace were
	 * cloned from their first write and are level already) */
	drain_writes(fs);
	ret = level_all(fs);
	if (!ret)
		ret = zdev_flush(rp->tgt);
	if (!ret)
		ret = rp->error;
	if (ret)
		goto out;
	/*
	 * The switch: the target takes the source's devid and uuid (its
	 * device item, dev extents and chunk stripes stay as they are) and
	 * the source's size in the file system.  ORDER: the commit below
	 * writes the trees and then the superblocks, on the target; before
	 * it is durable the source's superblock is the newest and the
	 * source holds everything.
	 */
	src = rp->src;
	old = src->zdev;
	src->zdev = rp->tgt;
	if (src == &fs->devs[0])
		fs->dev = rp->tgt;
	fs->replace = NULL;
	fs->replace_st.state = ZCOW_REPLACE_FINISHED;
	fs->replace_item_dirty = true;
	/* Test-only mutation (docs/crash.md): wipe the source while it is
	 * still the only device holding the file system */
	if (fs->mutation == ZCOW_MUT_REPLACE_WIPE_EARLY)
		wipe_supers(fs, old);
	ret = zcow_files_commit_locked(fs);
	if (ret) {
		zlog_err(TAG, "the commit that switches devid %" PRIu64 " failed: %d",
			 src->devid, ret);
		goto freed;
	}
	/* ORDER: after the switch is durable; a crash in between leaves a
	 * source whose newest superblock is older than the target's */
	if (fs->mutation != ZCOW_MUT_REPLACE_WIPE_EARLY)
		wipe_supers(fs, old);
	zlog_info(TAG, "devid %" PRIu64 " replaced: %" PRIu64 " groups, %" PRIu64 " bytes copied, %" PRIu64 " zeroed, %" PRIu64 " cloned",
		  src->devid, fs->replace_st.nr_copied,
		  fs->replace_st.bytes_copied, fs->replace_st.bytes_zeroed,
		  fs->replace_st.bytes_cloned);
freed:
	pthread_mutex_destroy(&rp->io_lock);
	free(rp);
out:
	pthread_mutex_unlock(&fs->files->lock);
	return ret;
}

void zcow_replace_drop(struct zcow_fs *fs)
{
	struct zcow_replace *rp = fs->replace;
	uint64_t i;

	if (!rp)
		return;
	for (i = 0; i < fs->nr_bgs; i++) {
		fs->bgs[i]->to_copy = false;
		fs->bgs[i]->is_copying = false;
	}
	fs->replace = NULL;
	fs->replace_st.state = ZCOW_REPLACE_CANCELED;
	fs->replace_item_dirty = true;
	pthread_mutex_destroy(&rp->io_lock);
	free(rp);
}

int zcow_replace_cancel(struct zcow_fs *fs)
{
	int ret;

	if (!fs->files)
		return -EINVAL;
	pthread_mutex_lock(&fs->files->lock);
	if (!fs->replace) {
		ret = -EINVAL;
	} else {
		drain_writes(fs);
		zcow_replace_drop(fs);
		ret = fs->error ? 0 : zcow_files_commit_locked(fs);
	}
	pthread_mutex_unlock(&fs->files->lock);
	return ret;
}

int zcow_replace_status(struct zcow_fs *fs, struct zcow_replace_status *st)
{
	if (fs->files)
		pthread_mutex_lock(&fs->files->lock);
	*st = fs->replace_st;
	if (fs->files)
		pthread_mutex_unlock(&fs->files->lock);
	return 0;
}

const char *zcow_replace_state_name(enum zcow_replace_state state)
{
	switch (state) {
	case ZCOW_REPLACE_NEVER_STARTED:
		return "never-started";
	case ZCOW_REPLACE_STARTED:
		return "started";
	case ZCOW_REPLACE_FINISHED:
		return "finished";
	case ZCOW_REPLACE_CANCELED:
		return "canceled";
	case ZCOW_REPLACE_SUSPENDED:
		return "suspended";
	}
	return "unknown";
}
