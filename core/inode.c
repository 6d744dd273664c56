// SPDX-License-Identifier: MIT
/*
 * The namespace of the file layer: inode items, directory entries (DIR_ITEM
 * keyed by name hash, DIR_INDEX keyed by sequence, INODE_REF back to the
 * parent), path lookup, create/open/unlink/mkdir/rmdir/rename/readdir/stat,
 * and the mount hooks.  Items are btrfs's (docs/format.md, "Files").
 *
 * Every tree operation runs under files->lock; see core/files.h.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "csum.h"
#include "files.h"
#include "grow.h"
#include "reclaim.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "files"

void zcow_files_now(struct zcow_fs *fs, struct zcow_timespec *now)
{
	struct zcow_files *fl = fs->files;
	struct timespec ts;

	if (fl && fl->clock) {
		fl->clock(now, fl->clock_arg);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now->sec = ts.tv_sec;
	now->nsec = (uint32_t)ts.tv_nsec;
}

void zcow_inode_touch_mc(struct zcow_inode *in,
			 const struct zcow_timespec *now)
{
	in->mtime = *now;
	in->ctime = *now;
}

static int ts_cmp(const struct zcow_timespec *a,
		  const struct zcow_timespec *b)
{
	if (a->sec != b->sec)
		return a->sec < b->sec ? -1 : 1;
	if (a->nsec != b->nsec)
		return a->nsec < b->nsec ? -1 : 1;
	return 0;
}

bool zcow_atime_needs_update(const struct zcow_inode *in,
			     const struct zcow_timespec *now)
{
	if (!ts_cmp(&in->atime, now))
		return false;
	if (ts_cmp(&in->mtime, &in->atime) >= 0 ||
	    ts_cmp(&in->ctime, &in->atime) >= 0)
		return true;
	return now->sec - in->atime.sec >= 24 * 60 * 60;
}

static void put_ts(uint8_t *p, const struct zcow_timespec *ts)
{
	put64(p, (uint64_t)ts->sec);
	put32(p + 8, ts->nsec);
}

static void get_ts(const uint8_t *p, struct zcow_timespec *ts)
{
	ts->sec = (int64_t)get64(p);
	ts->nsec = get32(p + 8);
}

/* struct btrfs_inode_item: offsets in docs/format.md. */
void zcow_inode_encode(const struct zcow_inode *ino, uint8_t *buf)
{
	memset(buf, 0, ZCOW_INODE_ITEM_SIZE);
	put64(buf + 0, ino->generation);
	put64(buf + 8, ino->transid);
	put64(buf + 16, ino->size);
	put64(buf + 24, ino->nbytes);
	put32(buf + 40, ino->nlink);
	put32(buf + 44, ino->uid);
	put32(buf + 48, ino->gid);
	put32(buf + 52, ino->mode);
	put64(buf + 56, ino->rdev);
	put64(buf + 64, ino->flags);
	put64(buf + 72, ino->sequence);
	put_ts(buf + 112, &ino->atime);
	put_ts(buf + 124, &ino->ctime);
	put_ts(buf + 136, &ino->mtime);
	put_ts(buf + 148, &ino->otime);
}

void zcow_inode_decode(const uint8_t *buf, uint64_t objectid,
		       struct zcow_inode *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->ino = objectid;
	ret->generation = get64(buf + 0);
	ret->transid = get64(buf + 8);
	ret->size = get64(buf + 16);
	ret->nbytes = get64(buf + 24);
	ret->nlink = get32(buf + 40);
	ret->uid = get32(buf + 44);
	ret->gid = get32(buf + 48);
	ret->mode = get32(buf + 52);
	ret->rdev = get64(buf + 56);
	ret->flags = get64(buf + 64);
	ret->sequence = get64(buf + 72);
	get_ts(buf + 112, &ret->atime);
	get_ts(buf + 124, &ret->ctime);
	get_ts(buf + 136, &ret->mtime);
	get_ts(buf + 148, &ret->otime);
}

int zcow_inode_get(struct zcow_tree *tree, uint64_t ino,
		   struct zcow_inode *ret)
{
	struct zcow_key key = { ino, ZCOW_INODE_ITEM_KEY, 0 };
	uint8_t buf[ZCOW_INODE_ITEM_SIZE];
	uint32_t size;
	int err;

	err = zcow_tree_search(tree, &key, buf, sizeof(buf), &size);
	if (err)
		return err;
	if (size != ZCOW_INODE_ITEM_SIZE)
		return -EUCLEAN;
	zcow_inode_decode(buf, ino, ret);
	return 0;
}

int zcow_inode_put(struct zcow_tree *tree, const struct zcow_inode *ino)
{
	struct zcow_key key = { ino->ino, ZCOW_INODE_ITEM_KEY, 0 };
	uint8_t buf[ZCOW_INODE_ITEM_SIZE];
	int err;

	zcow_inode_encode(ino, buf);
	err = zcow_tree_update(tree, &key, buf, sizeof(buf));
	if (err == -ENOENT)
		err = zcow_tree_insert(tree, &key, buf, sizeof(buf));
	return err;
}

/* ---- directory entries --------------------------------------------------- */

/*
 * Find @name in the DIR_ITEM of @dir (entries with the same hash are
 * concatenated in one item, as btrfs does).  0 and *ino_ret (the location
 * key's objectid: an inode, or a subvolume's root id), *type_ret and
 * *ltype_ret (the location key's type: INODE_ITEM, or ROOT_ITEM for a
 * subvolume entry), the last two may be NULL; -ENOENT, or a tree errno.
 */
/*
 * The entry @name in the item @key of @tree (a DIR_ITEM or XATTR_ITEM:
 * struct btrfs_dir_item entries one after another), read into @buf (@max
 * bytes; *@size_ret its size, 0 when there is no item): its offset and
 * length in it.  0, -ENOENT (no item, or not in it), -EUCLEAN (an entry
 * overruns the item, or the item @max), or a tree errno.
 */
int zcow_dir_item_find(struct zcow_tree *tree, const struct zcow_key *key,
		       const char *name, size_t len, uint8_t *buf,
		       uint32_t max, uint32_t *size_ret, uint32_t *off_ret,
		       uint32_t *elen_ret)
{
	uint32_t size, off = 0;
	int err;

	*size_ret = 0;
	err = zcow_tree_search(tree, key, buf, max, &size);
	if (err)
		return err;
	if (size > max)
		return -EUCLEAN;
	*size_ret = size;
	while (off + ZCOW_DIR_ITEM_HDR <= size) {
		uint16_t nlen = get16(buf + off + 27);
		uint32_t elen = ZCOW_DIR_ITEM_HDR + nlen +
				get16(buf + off + 25);

		if (off + elen > size)
			return -EUCLEAN;
		if (nlen == len &&
		    !memcmp(buf + off + ZCOW_DIR_ITEM_HDR, name, len)) {
			*off_ret = off;
			*elen_ret = elen;
			return 0;
		}
		off += elen;
	}
	return off == size ? -ENOENT : -EUCLEAN;
}

/* The entry @name in DIR_ITEM (@dir, hash of @name) of @tree, read into
 * @buf (4096 bytes), as zcow_dir_item_find(). */
static int dir_item_entry(struct zcow_tree *tree, uint64_t dir,
			  const char *name, size_t len, uint8_t *buf,
			  uint32_t *size_ret, uint32_t *off_ret,
			  uint32_t *elen_ret)
{
	struct zcow_key key = { dir, ZCOW_DIR_ITEM_KEY,
				zcow_name_hash(name, len) };

	return zcow_dir_item_find(tree, &key, name, len, buf, 4096, size_ret,
				  off_ret, elen_ret);
}

static int dir_lookup_loc(struct zcow_tree *tree, uint64_t dir,
			  const char *name, size_t len, uint64_t *ino_ret,
			  uint8_t *type_ret, uint8_t *ltype_ret)
{
	uint8_t buf[4096];
	uint32_t size, off, elen;
	int err = dir_item_entry(tree, dir, name, len, buf, &size, &off,
				 &elen);

	if (err)
		return err;
	*ino_ret = get64(buf + off);
	if (type_ret)
		*type_ret = buf[off + 29];
	if (ltype_ret)
		*ltype_ret = buf[off + 8];
	return 0;
}

int zcow_dir_lookup(struct zcow_tree *tree, uint64_t dir, const char *name,
		    size_t len, uint64_t *ino_ret, uint8_t *type_ret)
{
	return dir_lookup_loc(tree, dir, name, len, ino_ret, type_ret, NULL);
}

/* struct btrfs_dir_item + name: an inode's entry has the location
 * (ino, INODE_ITEM, 0), a subvolume's (root id, ROOT_ITEM, -1). */
static void encode_dir_item_loc(uint8_t *d, uint64_t objectid, uint8_t ltype,
				uint64_t loffset, uint8_t type,
				uint64_t transid, const char *name, size_t len)
{
	put64(d, objectid);			/* location.objectid */
	d[8] = ltype;				/* location.type */
	put64(d + 9, loffset);			/* location.offset */
	put64(d + 17, transid);
	put16(d + 25, 0);			/* data_len */
	put16(d + 27, (uint16_t)len);
	d[29] = type;
	memcpy(d + ZCOW_DIR_ITEM_HDR, name, len);
}

static void encode_dir_item(uint8_t *d, uint64_t ino, uint8_t type,
			    uint64_t transid, const char *name, size_t len)
{
	encode_dir_item_loc(d, ino, ZCOW_INODE_ITEM_KEY, 0, type, transid,
			    name, len);
}

static int next_index_locked(struct zcow_tree *tree, uint64_t dir,
			     uint64_t *index_ret)
{
	struct zcow_key start = { dir, ZCOW_DIR_INDEX_KEY, UINT64_MAX }, k;
	struct zcow_tree_iter it;
	int err;

	zcow_tree_iter_init(&it, tree, &start);
	err = zcow_tree_iter_prev(&it, &k, NULL, NULL);
	if (err && err != -ENOENT)
		return err;
	if (!err && k.objectid == dir && k.type == ZCOW_DIR_INDEX_KEY)
		*index_ret = k.offset + 1;
	else
		*index_ret = 2;	/* btrfs: 0 and 1 are "." and ".." */
	return 0;
}

static int dir_size_add_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			       uint64_t dir, int64_t delta)
{
	struct zcow_timespec now;
	struct zcow_inode di;
	int err = zcow_inode_get(tree, dir, &di);

	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	di.size += (uint64_t)delta;
	di.transid = fs->transid;
	di.sequence++;
	zcow_files_now(fs, &now);
	zcow_inode_touch_mc(&di, &now);	/* an entry came or went */
	return zcow_inode_put(tree, &di);
}

/* Put the entry @ent (@elen bytes, name @name) into @dir's DIR_ITEM of
 * its name hash and as DIR_INDEX @index. */
static int insert_dir_items(struct zcow_tree *tree, uint64_t dir,
			    const char *name, size_t len, const uint8_t *ent,
			    uint32_t elen, uint64_t index)
{
	struct zcow_key key = { dir, ZCOW_DIR_ITEM_KEY,
				zcow_name_hash(name, len) };
	uint8_t buf[4096];
	uint32_t size;
	int err;

	err = zcow_tree_search(tree, &key, buf, sizeof(buf), &size);
	if (err == -ENOENT) {
		err = zcow_tree_insert(tree, &key, ent, elen);
	} else if (!err) {
		/* A hash collision: append to the item. */
		if (size + elen > sizeof(buf))
			return -EOVERFLOW;
		memcpy(buf + size, ent, elen);
		err = zcow_tree_update(tree, &key, buf, size + elen);
	}
	if (err)
		return err;
	key.type = ZCOW_DIR_INDEX_KEY;
	key.offset = index;
	return zcow_tree_insert(tree, &key, ent, elen);
}

/* Take @name out of @dir's DIR_ITEM of its hash (the item goes with its
 * last name).  0, -EUCLEAN (not there), or a tree errno. */
static int delete_dir_item_name(struct zcow_tree *tree, uint64_t dir,
				const char *name, size_t len)
{
	struct zcow_key key = { dir, ZCOW_DIR_ITEM_KEY,
				zcow_name_hash(name, len) };
	uint8_t buf[4096];
	uint32_t size, off, elen;
	int err = dir_item_entry(tree, dir, name, len, buf, &size, &off,
				 &elen);

	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	if (elen == size)
		return zcow_tree_delete(tree, &key);
	memmove(buf + off, buf + off + elen, size - off - elen);
	return zcow_tree_update(tree, &key, buf, size - elen);
}

/* Link @ino (of @type) as @name in @dir: DIR_ITEM, DIR_INDEX, INODE_REF. */
int zcow_entry_add_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			  uint64_t dir, const char *name, size_t len,
			  uint64_t ino, uint8_t type)
{
	uint8_t ent[ZCOW_DIR_ITEM_HDR + 256];
	uint64_t index;
	int err;

	err = next_index_locked(tree, dir, &index);
	if (err)
		return err;
	/* The name must fit @ino's INODE_REF of @dir before anything
	 * changes (btrfs without extended refs: EMLINK). */
	err = zcow_inode_ref_add(tree, ino, dir, name, len, index, true);
	if (err)
		return err;
	encode_dir_item(ent, ino, type, fs->transid, name, len);
	err = insert_dir_items(tree, dir, name, len, ent,
			       ZCOW_DIR_ITEM_HDR + (uint32_t)len, index);
	if (err)
		return err;
	err = zcow_inode_ref_add(tree, ino, dir, name, len, index, false);
	if (err)
		return err;
	if (tree == &fs->fs_tree)
		zcow_log_note_link(fs, dir, ino, index,
				   zcow_name_hash(name, len));
	return dir_size_add_locked(fs, tree, dir, 2 * (int64_t)len);
}

/* Unlink @name (inode @ino) from @dir: the three items of add_entry. */
static int del_entry_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			    uint64_t dir, const char *name, size_t len,
			    uint64_t ino)
{
	struct zcow_key key;
	uint64_t index;
	int err;

	/* Only this name: the inode's other names in @dir stay. */
	err = zcow_inode_ref_del(tree, ino, dir, name, len, &index);
	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	key.objectid = dir;
	key.type = ZCOW_DIR_INDEX_KEY;
	key.offset = index;
	err = zcow_tree_delete(tree, &key);
	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	err = delete_dir_item_name(tree, dir, name, len);
	if (err)
		return err;
	if (tree == &fs->fs_tree)
		zcow_log_note_link(fs, dir, ino, index,
				   zcow_name_hash(name, len));
	return dir_size_add_locked(fs, tree, dir, -2 * (int64_t)len);
}

/* ---- subvolume entries ------------------------------------------------ */

int zcow_subvol_name_free_locked(struct zcow_fs *fs, const char *name,
				 size_t len)
{
	uint64_t dummy;
	int err;

	err = dir_lookup_loc(&fs->fs_tree, ZCOW_ROOT_DIR_INO, name, len,
			     &dummy, NULL, NULL);
	if (!err)
		return -EEXIST;
	return err == -ENOENT ? 0 : err;
}

int zcow_subvol_link_locked(struct zcow_fs *fs, const char *name, size_t len,
			    uint64_t id, uint64_t *index_ret)
{
	struct zcow_tree *tree = &fs->fs_tree;
	uint8_t ent[ZCOW_DIR_ITEM_HDR + 256];
	uint64_t index;
	int err;

	if (!len || len > 255)
		return -EINVAL;
	err = zcow_root_dir_locked(fs);
	if (!err)
		err = zcow_subvol_name_free_locked(fs, name, len);
	if (!err)
		err = next_index_locked(tree, ZCOW_ROOT_DIR_INO, &index);
	if (err)
		return err;
	/* No INODE_REF: the subvolume's root inode has its own ".." one
	 * inside its tree (btrfs). */
	encode_dir_item_loc(ent, id, ZCOW_ROOT_ITEM_KEY, UINT64_MAX,
			    ZCOW_FT_DIR, fs->transid, name, len);
	err = insert_dir_items(tree, ZCOW_ROOT_DIR_INO, name, len, ent,
			       ZCOW_DIR_ITEM_HDR + (uint32_t)len, index);
	if (!err)
		err = dir_size_add_locked(fs, tree, ZCOW_ROOT_DIR_INO,
					  2 * (int64_t)len);
	if (!err && index_ret)
		*index_ret = index;
	return err;
}

int zcow_subvol_unlink_locked(struct zcow_fs *fs, const char *name,
			      size_t len, uint64_t id)
{
	struct zcow_tree *tree = &fs->fs_tree;
	struct zcow_key start = { ZCOW_ROOT_DIR_INO, ZCOW_DIR_INDEX_KEY, 0 };
	struct zcow_key k;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t dlen;
	uint64_t ino;
	uint8_t ltype;
	bool found = false;
	int err;

	err = dir_lookup_loc(tree, ZCOW_ROOT_DIR_INO, name, len, &ino, NULL,
			     &ltype);
	if (err)
		return err;
	if (ltype != ZCOW_ROOT_ITEM_KEY || ino != id)
		return -EINVAL;
	/* The DIR_INDEX naming the subvolume (no INODE_REF holds its
	 * index). */
	zcow_tree_iter_init(&it, tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &dlen))) {
		const uint8_t *d = data;

		if (k.objectid != ZCOW_ROOT_DIR_INO ||
		    k.type != ZCOW_DIR_INDEX_KEY)
			break;
		if (dlen >= ZCOW_DIR_ITEM_HDR + len && get64(d) == id &&
		    d[8] == ZCOW_ROOT_ITEM_KEY && get16(d + 27) == len &&
		    !memcmp(d + ZCOW_DIR_ITEM_HDR, name, len)) {
			found = true;
			break;
		}
	}
	if (err && err != -ENOENT)
		return err;
	if (!found)
		return -EUCLEAN;
	err = zcow_tree_delete(tree, &k);
	if (!err)
		err = delete_dir_item_name(tree, ZCOW_ROOT_DIR_INO, name, len);
	if (!err)
		err = dir_size_add_locked(fs, tree, ZCOW_ROOT_DIR_INO,
					  -2 * (int64_t)len);
	return err;
}

static int is_dir_empty_locked(struct zcow_tree *tree, uint64_t dir)
{
	struct zcow_key start = { dir, ZCOW_DIR_INDEX_KEY, 0 }, k;
	struct zcow_tree_iter it;
	int err;

	zcow_tree_iter_init(&it, tree, &start);
	err = zcow_tree_iter_next(&it, &k, NULL, NULL);
	if (err == -ENOENT)
		return 1;
	if (err)
		return err;
	return !(k.objectid == dir && k.type == ZCOW_DIR_INDEX_KEY);
}

/* ---- paths ----------------------------------------------------------- */

/* (struct zpath: core/files.h) */

/*
 * Step from @zp's tree through the subvolume entry of root @id into that
 * subvolume's root directory: 0 and *dir_ret, -EUCLEAN (no such root).
 * The entries a snapshot copied from the fs tree name subvolumes whose
 * parent is the fs tree, not the snapshot: the kernel shows them as an
 * empty directory (BTRFS_EMPTY_SUBVOL_DIR_OBJECTID), so does zcow
 * (zp->is_stub, *dir_ret 2).  Every subvolume zcow makes is read-only.
 */
static int cross_locked(struct zcow_fs *fs, struct zpath *zp, uint64_t id,
			uint64_t *dir_ret)
{
	struct zcow_tree *t;

	zp->is_ro = true;
	if (zp->root != ZCOW_FS_TREE_OBJECTID) {
		zp->is_stub = true;
		*dir_ret = ZCOW_EMPTY_SUBVOL_DIR_INO;
		return 0;
	}
	t = zcow_root_tree_locked(fs, id);
	if (!t) {
		zlog_err(TAG, "subvolume entry of root %" PRIu64 ": no such root",
			 id);
		return -EUCLEAN;
	}
	zp->tree = t;
	zp->root = id;
	zp->is_ro = zcow_root_is_rdonly_locked(fs, id);
	*dir_ret = ZCOW_ROOT_DIR_INO;
	return 0;
}

/*
 * Walk @path to its parent directory, crossing into subvolumes through
 * their entries.  Returns 0, -ENOENT, -ENOTDIR, -ENAMETOOLONG, -EINVAL
 * (empty component "." or ".."), -EUCLEAN, or a tree errno.
 */
int zcow_path_resolve_locked(struct zcow_fs *fs, const char *path,
			     struct zpath *zp)
{
	const char *p = path, *end;
	uint64_t dir = ZCOW_ROOT_DIR_INO;
	int err;

	if (!path)
		return -EINVAL;
	memset(zp, 0, sizeof(*zp));
	zp->tree = &fs->fs_tree;
	zp->root = ZCOW_FS_TREE_OBJECTID;
	while (*p == '/')
		p++;
	if (!*p) {
		zp->is_root = true;
		zp->dir = dir;
		return 0;
	}
	for (;;) {
		size_t len;
		uint64_t ino;
		uint8_t type, ltype;

		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len > 255)
			return -ENAMETOOLONG;
		if ((len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		while (end && *end == '/')
			end++;
		if (!end || !*end) {
			memcpy(zp->name, p, len);
			zp->name[len] = '\0';
			zp->len = len;
			zp->dir = dir;
			return 0;
		}
		if (zp->is_stub)
			return -ENOENT;	/* the empty directory */
		err = dir_lookup_loc(zp->tree, dir, p, len, &ino, &type,
				     &ltype);
		if (err)
			return err;
		if (type != ZCOW_FT_DIR)
			return -ENOTDIR;
		if (ltype == ZCOW_ROOT_ITEM_KEY) {
			err = cross_locked(fs, zp, ino, &ino);
			if (err)
				return err;
		}
		dir = ino;
		p = end;
	}
}

/* Resolve the whole path to an inode.  *type_ret may be NULL.  A
 * subvolume entry resolves to its root directory (zp->is_subvol). */
int zcow_path_lookup_locked(struct zcow_fs *fs, const char *path,
			    struct zpath *zp, uint64_t *ino_ret,
			    uint8_t *type_ret)
{
	uint8_t ltype;
	int err = zcow_path_resolve_locked(fs, path, zp);

	if (err)
		return err;
	zp->is_parent_found = true;
	if (zp->is_root) {
		*ino_ret = zp->dir;
		if (type_ret)
			*type_ret = ZCOW_FT_DIR;
		return 0;
	}
	if (zp->is_stub)
		return -ENOENT;
	err = dir_lookup_loc(zp->tree, zp->dir, zp->name, zp->len, ino_ret,
			     type_ret, &ltype);
	if (err || ltype != ZCOW_ROOT_ITEM_KEY)
		return err;
	zp->is_subvol = true;
	return cross_locked(fs, zp, *ino_ret, ino_ret);
}

int zcow_path_writable(struct zcow_fs *fs)
{
	if (fs->read_only)
		return -EROFS;
	if (fs->error)
		return -EIO;
	return 0;
}

static struct zcow_files *files_of(struct zcow_fs *fs)
{
	return fs ? fs->files : NULL;
}

#define LOCK(fs) pthread_mutex_lock(&(fs)->files->lock)
#define UNLOCK(fs) pthread_mutex_unlock(&(fs)->files->lock)

/* Make a new inode of @mode (type and permission bits) owned by @cred
 * (NULL: root) and link it as @zp's last component.  Its four times are
 * now (btrfs_new_inode). */
int zcow_new_inode_locked(struct zcow_fs *fs, struct zpath *zp, uint32_t mode,
			  const struct zcow_cred *cred, uint64_t *ino_ret)
{
	struct zcow_inode in;
	uint64_t ino, dummy;
	int err;

	if (zp->is_ro)
		return -EROFS;
	if (zp->is_root)
		return -EEXIST;
	err = zcow_root_dir_locked(fs);
	if (err)
		return err;
	err = zcow_dir_lookup(zp->tree, zp->dir, zp->name, zp->len, &dummy,
			    NULL);
	if (!err)
		return -EEXIST;
	if (err != -ENOENT)
		return err;
	ino = fs->files->next_ino;
	memset(&in, 0, sizeof(in));
	in.ino = ino;
	in.generation = in.transid = fs->transid;
	in.nlink = 1;
	in.mode = mode;
	in.uid = cred ? cred->uid : 0;
	in.gid = cred ? cred->gid : 0;
	zcow_files_now(fs, &in.otime);
	in.atime = in.mtime = in.ctime = in.otime;
	err = zcow_inode_put(zp->tree, &in);
	if (err)
		return err;
	err = zcow_entry_add_locked(fs, zp->tree, zp->dir, zp->name, zp->len,
				    ino, zcow_ft_of_mode(mode));
	if (err) {
		struct zcow_key k = { ino, ZCOW_INODE_ITEM_KEY, 0 };

		zcow_tree_delete(zp->tree, &k);
		return err;
	}
	fs->files->next_ino++;
	*ino_ret = ino;
	return 0;
}

/*
 * Metadata reservations of the namespace operations (docs/space.md), taken
 * under the lock before anything changes.  A new inode: its inode item,
 * the three items of its entry, the directory's inode item, and the root
 * directory's two items when it is made first.
 */
#define RSV_NEW_INODE_ITEMS	7u
/* An entry removed or added: three items and the directory's inode. */
#define RSV_ENTRY_ITEMS		4u

static int rsv_new_inode_locked(struct zcow_fs *fs, struct zpath *zp)
{
	uint64_t nodes = 0;
	int err = zcow_rsv_fs_items(fs, zp->tree, RSV_NEW_INODE_ITEMS, &nodes);

	return err ? err : zcow_meta_reserve_locked(fs, nodes, false);
}

/* Removing @zp's entry of inode @ino: the entry, the inode item, and at
 * its last link its file extents. */
static int rsv_remove_locked(struct zcow_fs *fs, struct zpath *zp,
			     uint64_t ino, uint64_t *nodes_ret)
{
	int err = zcow_rsv_fs_items(fs, zp->tree, RSV_ENTRY_ITEMS + 1,
				    nodes_ret);

	if (!err)
		err = zcow_rsv_drop_extents_locked(fs, zp->tree, ino, 0,
						   UINT64_MAX, nodes_ret);
	if (!err)
		err = zcow_rsv_xattrs_locked(fs, zp->tree, ino, nodes_ret);
	return err;
}

static int open_as(struct zcow_fs *fs, const char *path, int flags,
		   uint32_t mode, const struct zcow_cred *cred,
		   struct zcow_file **file_ret)
{
	struct zcow_file *f;
	struct zpath zp;
	uint64_t ino;
	uint8_t type;
	int acc = flags & O_ACCMODE, err;

	*file_ret = NULL;
	if (!files_of(fs))
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, path, &zp, &ino, &type);
	if (err == -ENOENT && (flags & O_CREAT) && zp.is_parent_found) {
		err = zcow_path_writable(fs);
		if (!err && !zp.is_ro)
			err = rsv_new_inode_locked(fs, &zp);
		if (!err)
			err = zcow_new_inode_locked(fs, &zp, S_IFREG | mode,
						    cred, &ino);
		type = ZCOW_FT_REG_FILE;
		if (err)
			goto out;
	} else if (err) {
		goto out;
	} else if ((flags & O_CREAT) && (flags & O_EXCL)) {
		err = -EEXIST;
		goto out;
	}
	if (type == ZCOW_FT_SYMLINK) {
		err = -ELOOP;	/* the core follows no symlink: O_NOFOLLOW */
		goto out;
	}
	if (type == ZCOW_FT_DIR && acc != O_RDONLY) {
		err = -EISDIR;
		goto out;
	}
	if (acc != O_RDONLY && (zp.is_ro || fs->read_only)) {
		err = -EROFS;
		goto out;
	}
	f->fs = fs;
	f->tree = zp.tree;
	f->root = zp.root;
	f->ino = ino;
	f->is_ro = acc == O_RDONLY;
	f->is_ro_tree = zp.is_ro;
	f->is_dir = type == ZCOW_FT_DIR;
	f->is_append = flags & O_APPEND;
	if ((flags & O_TRUNC) && !f->is_ro) {
		UNLOCK(fs);
		err = zcow_truncate(f, 0);
		LOCK(fs);
		if (err)
			goto out;
	}
	*file_ret = f;
	f = NULL;
out:
	UNLOCK(fs);
	free(f);
	return err;
}


/* The permission bits of @mode when its type bits are @type or none:
 * 0, else -EINVAL. */
static int perm_of(uint32_t mode, uint32_t type, uint32_t *perm_ret)
{
	if ((mode & S_IFMT) && (mode & S_IFMT) != type)
		return -EINVAL;
	if (mode & ~(uint32_t)(S_IFMT | 07777))
		return -EINVAL;
	*perm_ret = mode & 07777;
	return 0;
}

int zcow_open_as(struct zcow_fs *fs, const char *path, int flags,
		 uint32_t mode, const struct zcow_cred *cred,
		 struct zcow_file **file_ret)
{
	uint32_t perm;

	*file_ret = NULL;
	if (flags & ~(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND) ||
	    (flags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	if (perm_of(mode, S_IFREG, &perm))
		return -EINVAL;
	return open_as(fs, path, flags, perm, cred, file_ret);
}

int zcow_open(struct zcow_fs *fs, const char *path, int flags,
	      struct zcow_file **file_ret)
{
	return zcow_open_as(fs, path, flags, 0644, NULL, file_ret);
}

int zcow_create(struct zcow_fs *fs, const char *path,
		struct zcow_file **file_ret)
{
	return zcow_open(fs, path, O_CREAT | O_EXCL | O_RDWR, file_ret);
}

int zcow_close(struct zcow_file *file)
{
	free(file);
	return 0;
}

/* The empty directory a snapshot shows for a subvolume entry it copied
 * (cross_locked()): read-only, no items behind it. */
static void fill_stub_stat(struct zcow_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->ino = ZCOW_EMPTY_SUBVOL_DIR_INO;
	st->mode = S_IFDIR | 0755;
	st->nlink = 1;
}

static void fill_stat(const struct zcow_inode *in, struct zcow_stat *st)
{
	st->ino = in->ino;
	st->mode = in->mode;
	st->nlink = in->nlink;
	st->size = in->size;
	st->nbytes = in->nbytes;
	st->generation = in->generation;
	st->transid = in->transid;
	st->uid = in->uid;
	st->gid = in->gid;
	st->rdev = in->rdev;
	st->atime = in->atime;
	st->mtime = in->mtime;
	st->ctime = in->ctime;
	st->otime = in->otime;
}

int zcow_stat(struct zcow_fs *fs, const char *path, struct zcow_stat *st)
{
	struct zcow_inode in;
	struct zpath zp;
	uint64_t ino = 0;
	int err;

	if (!files_of(fs))
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, path, &zp, &ino, NULL);
	if (!err && zp.is_stub)
		fill_stub_stat(st);
	else if (!err)
		err = zcow_inode_get(zp.tree, ino, &in);
	if (!err && !zp.is_stub)
		fill_stat(&in, st);
	UNLOCK(fs);
	return err;
}

int zcow_fstat(struct zcow_file *file, struct zcow_stat *st)
{
	struct zcow_inode in;
	int err;

	LOCK(file->fs);
	if (file->ino == ZCOW_EMPTY_SUBVOL_DIR_INO) {
		fill_stub_stat(st);
		err = 0;
	} else {
		err = zcow_inode_get(file->tree, file->ino, &in);
		if (!err)
			fill_stat(&in, st);
	}
	UNLOCK(file->fs);
	return err;
}

int zcow_mkdir(struct zcow_fs *fs, const char *path)
{
	return zcow_mkdir_as(fs, path, 0755, NULL);
}

int zcow_mkdir_as(struct zcow_fs *fs, const char *path, uint32_t mode,
		  const struct zcow_cred *cred)
{
	struct zpath zp;
	uint32_t perm;
	uint64_t ino;
	int err;

	if (!files_of(fs) || perm_of(mode, S_IFDIR, &perm))
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_resolve_locked(fs, path, &zp);
	if (!err && zp.is_ro)
		err = zp.is_root ? -EEXIST : -EROFS;
	if (!err && zp.is_root)
		err = -EEXIST;
	if (!err)
		err = zcow_path_writable(fs);
	if (!err)
		err = rsv_new_inode_locked(fs, &zp);
	if (!err)
		err = zcow_new_inode_locked(fs, &zp, S_IFDIR | perm, cred,
					    &ino);
	UNLOCK(fs);
	return err;
}

/* ---- attributes ------------------------------------------------------ */

/* What one attribute call changes. */
struct setattr {
	enum { SET_MODE, SET_OWNER, SET_TIMES } what;
	uint32_t mode;
	uint32_t uid, gid;
	const struct zcow_timespec *ts;	/* [2]; NULL: both now */
};

/* Apply @sa to @in at @now: false when nothing changes (utimens with
 * both times omitted). */
static bool setattr_apply(const struct setattr *sa, struct zcow_inode *in,
			  const struct zcow_timespec *now)
{
	switch (sa->what) {
	case SET_MODE:
		in->mode = (in->mode & S_IFMT) | (sa->mode & 07777);
		break;
	case SET_OWNER:
		if (sa->uid != UINT32_MAX)
			in->uid = sa->uid;
		if (sa->gid != UINT32_MAX)
			in->gid = sa->gid;
		/* chown_common(): ATTR_KILL_SUID, and KILL_SGID when the
		 * group may execute (setattr_should_drop_sgid()). */
		if (!S_ISDIR(in->mode)) {
			in->mode &= ~(uint32_t)S_ISUID;
			if (in->mode & S_IXGRP)
				in->mode &= ~(uint32_t)S_ISGID;
		}
		break;
	case SET_TIMES:
		if (!sa->ts) {
			in->atime = in->mtime = *now;
			break;
		}
		if (sa->ts[0].nsec == ZCOW_UTIME_OMIT &&
		    sa->ts[1].nsec == ZCOW_UTIME_OMIT)
			return false;	/* vfs_utimes(): nothing at all */
		if (sa->ts[0].nsec != ZCOW_UTIME_OMIT)
			in->atime = sa->ts[0].nsec == ZCOW_UTIME_NOW ?
					    *now : sa->ts[0];
		if (sa->ts[1].nsec != ZCOW_UTIME_OMIT)
			in->mtime = sa->ts[1].nsec == ZCOW_UTIME_NOW ?
					    *now : sa->ts[1];
		break;
	}
	in->ctime = *now;
	return true;
}

/*
 * Change an attribute of the inode at @path and its ctime, in the running
 * transaction; noted for the tree-log, so that an fsync of the file
 * makes the change durable.
 */
static int setattr_path(struct zcow_fs *fs, const char *path,
			const struct setattr *sa)
{
	struct zcow_timespec now;
	struct zcow_inode in;
	struct zpath zp;
	uint64_t ino, nodes = 0;
	int err;

	if (!files_of(fs))
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, path, &zp, &ino, NULL);
	if (err)
		goto out;
	if (zp.is_ro) {
		err = -EROFS;
		goto out;
	}
	err = zcow_path_writable(fs);
	if (!err)
		err = zcow_rsv_fs_items(fs, zp.tree, 1, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, false);
	if (!err)
		err = zcow_inode_get(zp.tree, ino, &in);
	if (err)
		goto out;
	zcow_files_now(fs, &now);
	if (!setattr_apply(sa, &in, &now))
		goto out;
	in.transid = fs->transid;
	in.sequence++;
	err = zcow_inode_put(zp.tree, &in);
	if (!err && zp.tree == &fs->fs_tree)
		zcow_log_note_write(fs, ino);
out:
	UNLOCK(fs);
	return err;
}

int zcow_chmod(struct zcow_fs *fs, const char *path, uint32_t mode)
{
	struct setattr sa = { .what = SET_MODE, .mode = mode };

	return setattr_path(fs, path, &sa);
}

int zcow_chown(struct zcow_fs *fs, const char *path, uint32_t uid,
	       uint32_t gid)
{
	struct setattr sa = { .what = SET_OWNER, .uid = uid, .gid = gid };

	return setattr_path(fs, path, &sa);
}

static bool is_ts_valid(const struct zcow_timespec *ts)
{
	return ts->nsec < 1000000000u || ts->nsec == ZCOW_UTIME_NOW ||
	       ts->nsec == ZCOW_UTIME_OMIT;
}

int zcow_utimens(struct zcow_fs *fs, const char *path,
		 const struct zcow_timespec ts[2])
{
	struct setattr sa = { .what = SET_TIMES, .ts = ts };

	if (ts && (!is_ts_valid(&ts[0]) || !is_ts_valid(&ts[1])))
		return -EINVAL;
	return setattr_path(fs, path, &sa);
}

int zcow_truncate_path(struct zcow_fs *fs, const char *path, uint64_t size)
{
	struct zcow_file *f;
	int err;

	err = zcow_open(fs, path, O_RDONLY, &f);
	if (err)
		return err;
	if (f->is_dir)
		err = -EISDIR;
	else if (f->is_ro_tree || fs->read_only)
		err = -EROFS;
	if (!err) {
		f->is_ro = false;	/* as truncate(2): no descriptor */
		err = zcow_truncate(f, size);
	}
	zcow_close(f);
	return err;
}

/* Drop inode @ino's last link's inode: its extents and items. */
static int free_inode_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			     uint64_t root, uint64_t ino)
{
	struct zcow_key k = { ino, ZCOW_INODE_ITEM_KEY, 0 };
	int err;

	err = zcow_drop_extents_locked(fs, tree, root, ino,
				       0, UINT64_MAX, NULL);
	if (!err)
		err = zcow_xattrs_drop_locked(tree, ino);
	if (err)
		return err;
	return zcow_tree_delete(tree, &k);
}

/* Remove @zp's entry (inode @ino): unlink semantics, @is_dir checked. */
static int remove_locked(struct zcow_fs *fs, struct zpath *zp, uint64_t ino,
			 bool is_dir)
{
	struct zcow_inode in;
	int err;

	if (is_dir) {
		err = is_dir_empty_locked(zp->tree, ino);
		if (err < 0)
			return err;
		if (!err)
			return -ENOTEMPTY;
	}
	err = del_entry_locked(fs, zp->tree, zp->dir, zp->name, zp->len, ino);
	if (err)
		return err;
	err = zcow_inode_get(zp->tree, ino, &in);
	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	if (in.nlink <= 1)
		return free_inode_locked(fs, zp->tree, zp->root, ino);
	in.nlink--;
	in.transid = fs->transid;
	in.sequence++;
	zcow_files_now(fs, &in.ctime);	/* its link count changed */
	return zcow_inode_put(zp->tree, &in);
}

static int unlink_or_rmdir(struct zcow_fs *fs, const char *path, bool is_dir)
{
	struct zpath zp;
	uint64_t ino;
	uint8_t type;
	int err;

	if (!files_of(fs))
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, path, &zp, &ino, &type);
	if (err)
		goto out;
	if (zp.is_subvol) {
		/* A subvolume goes by its own command (btrfs subvolume
		 * delete), not by unlink or rmdir. */
		err = -EPERM;
		goto out;
	}
	if (zp.is_ro) {
		err = -EROFS;
		goto out;
	}
	if (zp.is_root) {
		err = is_dir ? -EBUSY : -EISDIR;
		goto out;
	}
	if (is_dir && type != ZCOW_FT_DIR) {
		err = -ENOTDIR;
		goto out;
	}
	if (!is_dir && type == ZCOW_FT_DIR) {
		err = -EISDIR;
		goto out;
	}
	err = zcow_path_writable(fs);
	if (!err) {
		uint64_t nodes = 0;

		/* Unlink and rmdir free space: they may use the global
		 * reserve (btrfs's fallback to it), so they run on a full
		 * fs. */
		err = rsv_remove_locked(fs, &zp, ino, &nodes);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, true);
	}
	if (!err)
		err = remove_locked(fs, &zp, ino, is_dir);
out:
	UNLOCK(fs);
	return err;
}

int zcow_unlink(struct zcow_fs *fs, const char *path)
{
	return unlink_or_rmdir(fs, path, false);
}

int zcow_rmdir(struct zcow_fs *fs, const char *path)
{
	return unlink_or_rmdir(fs, path, true);
}

/* ---- inodes unlinked while open (btrfs's orphan items) ----------------
 *
 * An inode whose last name goes while a caller holds it open
 * (zcow_unlink_open()) stays with nlink 0, and an ORPHAN_ITEM (key
 * (ZCOW_ORPHAN_OBJECTID, ZCOW_ORPHAN_ITEM_KEY, ino), no data) in the fs
 * tree says so, in the same transaction as the unlink: a crash after the
 * commit leaves an inode no name reaches, and the item is how the next
 * mount finds it.  The caller's last handle deletes it
 * (zcow_orphan_release()); what a crash or a failed release leaves,
 * zcow_orphan_cleanup() deletes at the next read-write mount, after the
 * tree-log replay.  State of an inode of the fs tree:
 *
 *   nlink  orphan item  what it is
 *   > 0    no           linked
 *   0      yes          unlinked while open: deleted at release or mount
 *   > 0    yes          linked again (only by a replayed log): the item
 *                       goes at the next mount, the inode stays
 *   0      no           damage (fcheck.c: "orphan (no reference)")
 *
 * The tree-log carries no orphan item: a transaction that made or deleted
 * an orphan commits at every fsync (zcow_log_note_orphan()).
 */

static struct zcow_key orphan_key(uint64_t ino)
{
	return (struct zcow_key){ ZCOW_ORPHAN_OBJECTID, ZCOW_ORPHAN_ITEM_KEY,
				  ino };
}

bool zcow_has_orphan_item(struct zcow_tree *tree, uint64_t ino)
{
	struct zcow_key k = orphan_key(ino);

	return !zcow_tree_search(tree, &k, NULL, 0, NULL);
}

int zcow_unlink_open(struct zcow_fs *fs, const char *path)
{
	struct zcow_key ok;
	struct zcow_inode in;
	struct zpath zp;
	uint64_t ino, nodes = 0;
	uint8_t type;
	int err;

	if (!files_of(fs))
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, path, &zp, &ino, &type);
	if (err)
		goto out;
	if (type != ZCOW_FT_REG_FILE || zp.is_subvol || zp.is_ro ||
	    zp.is_root || zp.tree != &fs->fs_tree)
		goto plain;	/* zcow_unlink()'s rules and errnos */
	err = zcow_inode_get(zp.tree, ino, &in);
	if (err)
		goto out;
	if (in.nlink > 1)
		goto plain;
	err = zcow_path_writable(fs);
	/* the entry, the inode item and the orphan item; may use the
	 * global reserve, as unlink */
	if (!err)
		err = zcow_rsv_fs_items(fs, zp.tree, RSV_ENTRY_ITEMS + 2,
					&nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, true);
	if (!err)
		err = del_entry_locked(fs, zp.tree, zp.dir, zp.name, zp.len,
				       ino);
	if (err)
		goto out;
	in.nlink = 0;
	in.transid = fs->transid;
	in.sequence++;
	zcow_files_now(fs, &in.ctime);	/* its link count changed */
	err = zcow_inode_put(zp.tree, &in);
	ok = orphan_key(ino);
	if (!err)
		err = zcow_tree_insert(zp.tree, &ok, NULL, 0);
	if (!err) {
		zcow_log_note_orphan(fs);
		err = 1;
	}
	goto out;
plain:
	UNLOCK(fs);
	return zcow_unlink(fs, path);
out:
	UNLOCK(fs);
	return err;
}

/* File bytes an orphan's deletion drops per metadata reservation at
 * first: the worst case of a whole large file's extents is more than a
 * full fs may reserve at once; a step's is small, and a commit between
 * steps (one the reservation makes) turns the space the last steps freed
 * usable.  A step refused is halved, down to one block. */
#define ORPHAN_DROP_STEP	(1ULL << 20)

/* Drop orphan @in's extents from its end down, a step at a time, each
 * step reserved on its own; the size and nbytes follow, so that every
 * state a commit may catch is consistent (as btrfs truncates an orphan
 * in several transactions). */
static int orphan_truncate_locked(struct zcow_fs *fs, struct zcow_tree *tree,
				  uint64_t root, struct zcow_inode *in)
{
	uint64_t step = ORPHAN_DROP_STEP;
	int err;

	while (S_ISREG(in->mode) && in->size) {
		uint64_t end = (in->size + ZCOW_SECTORSIZE - 1) /
			       ZCOW_SECTORSIZE * ZCOW_SECTORSIZE;
		uint64_t from = end > step ? end - step : 0;
		uint64_t nodes = 0, dropped = 0;

		err = zcow_rsv_fs_items(fs, tree, 1, &nodes);
		if (!err)
			err = zcow_rsv_drop_extents_locked(fs, tree, in->ino,
							   from, UINT64_MAX,
							   &nodes);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, true);
		if (err == -ENOSPC && step > ZCOW_SECTORSIZE) {
			step /= 2;
			continue;
		}
		if (!err)
			err = zcow_drop_extents_locked(fs, tree, root, in->ino,
						       from, UINT64_MAX,
						       &dropped);
		if (!err)
			err = zcow_inode_get(tree, in->ino, in);
		if (err)
			return err;
		in->size = from;
		in->nbytes -= dropped < in->nbytes ? dropped : in->nbytes;
		in->transid = fs->transid;
		in->sequence++;
		err = zcow_inode_put(tree, in);
		if (err)
			return err;
	}
	return 0;
}

/* Delete orphan @ino of @tree (root @root): the inode with its extents
 * and xattrs unless it has a link again, then its orphan item. */
static int orphan_delete_locked(struct zcow_fs *fs, struct zcow_tree *tree,
				uint64_t root, uint64_t ino)
{
	struct zcow_key ok = orphan_key(ino);
	struct zcow_inode in;
	uint64_t nodes = 0;
	bool has_inode;
	int err;

	err = zcow_inode_get(tree, ino, &in);
	if (err && err != -ENOENT)
		return err;
	has_inode = !err && in.nlink == 0;
	zcow_log_note_orphan(fs);
	if (has_inode) {
		err = orphan_truncate_locked(fs, tree, root, &in);
		if (err)
			return err;
	}
	/* as rsv_remove_locked(): the items, what extents are left (an
	 * inline one), the xattrs */
	err = zcow_rsv_fs_items(fs, tree, 2, &nodes);
	if (!err && has_inode)
		err = zcow_rsv_drop_extents_locked(fs, tree, ino, 0,
						   UINT64_MAX, &nodes);
	if (!err && has_inode)
		err = zcow_rsv_xattrs_locked(fs, tree, ino, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, true);
	if (!err && has_inode)
		err = free_inode_locked(fs, tree, root, ino);
	if (!err)
		err = zcow_tree_delete(tree, &ok);
	return err;
}

int zcow_orphan_release(struct zcow_file *file)
{
	struct zcow_fs *fs = file->fs;
	int err = 0;

	LOCK(fs);
	if (file->tree == &fs->fs_tree && !fs->read_only &&
	    zcow_has_orphan_item(file->tree, file->ino)) {
		err = zcow_path_writable(fs);
		if (!err)
			err = orphan_delete_locked(fs, file->tree, file->root,
						   file->ino);
		if (err)
			zlog_warn(TAG, "inode %" PRIu64 ": unlinked while open, not deleted at its release (%d): the next mount deletes it",
				  file->ino, err);
	}
	UNLOCK(fs);
	return err;
}

int zcow_orphan_cleanup(struct zcow_fs *fs)
{
	struct zcow_key start = { ZCOW_ORPHAN_OBJECTID, ZCOW_ORPHAN_ITEM_KEY,
				  0 }, k;
	struct zcow_tree_iter it;
	uint64_t *inos = NULL, nr = 0, cap = 0, i;
	int err;

	LOCK(fs);
	/* the items first: deleting while iterating would move them */
	zcow_tree_iter_init(&it, &fs->fs_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, NULL, NULL))) {
		if (k.objectid != ZCOW_ORPHAN_OBJECTID ||
		    k.type != ZCOW_ORPHAN_ITEM_KEY)
			break;
		if (ZCOW_GROW_ONE(&inos, nr, &cap)) {
			err = -ENOMEM;
			break;
		}
		inos[nr++] = k.offset;
	}
	if (err == -ENOENT)
		err = 0;
	for (i = 0; !err && i < nr; i++)
		err = orphan_delete_locked(fs, &fs->fs_tree,
					   ZCOW_FS_TREE_OBJECTID, inos[i]);
	if (err == -ENOSPC) {
		/* a full fs still mounts: the items stay for the next
		 * mount (the part deleted is consistent and committed) */
		zlog_warn(TAG, "%" PRIu64 " of %" PRIu64 " inodes unlinked while open not deleted: no metadata space; the next mount tries again",
			  nr - i + 1, nr);
		err = 0;
	}
	/* committed at once, so that the space is back and the checker
	 * (the committed state) sees no orphan; a crash before it only
	 * leaves the items for the next mount */
	if (!err && nr) {
		zlog_info(TAG, "deleted inodes unlinked while open (%" PRIu64 " orphan items)",
			  nr);
		err = zcow_files_commit_locked(fs);
	}
	UNLOCK(fs);
	free(inos);
	return err;
}

/* Is @dir (in the fs tree) @anc or below it?  Walks the INODE_REFs up. */
static int is_below_locked(struct zcow_tree *tree, uint64_t dir, uint64_t anc)
{
	int depth = 0;

	while (depth++ < 4096) {
		struct zcow_key k = { dir, ZCOW_INODE_REF_KEY, 0 }, f;
		struct zcow_tree_iter it;
		int err;

		if (dir == anc)
			return 1;
		if (dir == ZCOW_ROOT_DIR_INO)
			return 0;
		zcow_tree_iter_init(&it, tree, &k);
		err = zcow_tree_iter_next(&it, &f, NULL, NULL);
		if (err)
			return err == -ENOENT ? -EUCLEAN : err;
		if (f.objectid != dir || f.type != ZCOW_INODE_REF_KEY)
			return -EUCLEAN;
		dir = f.offset;
	}
	return -EUCLEAN;
}

/* A rename moved inode @ino to another entry: its ctime becomes now
 * (btrfs_rename()), noted for the tree-log with the link. */
static int touch_ctime_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			      uint64_t ino)
{
	struct zcow_inode in;
	int err = zcow_inode_get(tree, ino, &in);

	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	zcow_files_now(fs, &in.ctime);
	in.transid = fs->transid;
	in.sequence++;
	return zcow_inode_put(tree, &in);
}

/*
 * RENAME_EXCHANGE of @src (inode @sino, type @stype) and @dst (@dino,
 * @dtype), both checked: each entry is removed and made again with the
 * other inode (new DIR_INDEXes, as btrfs_rename_exchange() takes), so the
 * INODE_REFs name the new parents; each directory loses and gains a name
 * of the same length, its size is unchanged.
 */
static int exchange_locked(struct zcow_fs *fs, struct zpath *src,
			   uint64_t sino, uint8_t stype, struct zpath *dst,
			   uint64_t dino, uint8_t dtype)
{
	int err;

	err = del_entry_locked(fs, src->tree, src->dir, src->name, src->len,
			       sino);
	if (!err)
		err = del_entry_locked(fs, dst->tree, dst->dir, dst->name,
				       dst->len, dino);
	if (!err)
		err = zcow_entry_add_locked(fs, dst->tree, dst->dir, dst->name,
					    dst->len, sino, stype);
	if (!err)
		err = zcow_entry_add_locked(fs, src->tree, src->dir, src->name,
					    src->len, dino, dtype);
	if (!err)
		err = touch_ctime_locked(fs, src->tree, sino);
	if (!err)
		err = touch_ctime_locked(fs, dst->tree, dino);
	return err;
}

int zcow_rename(struct zcow_fs *fs, const char *from, const char *to)
{
	return zcow_rename2(fs, from, to, 0);
}

int zcow_rename2(struct zcow_fs *fs, const char *from, const char *to,
		 unsigned int flags)
{
	struct zpath src, dst;
	uint64_t sino, dino = 0, nodes = 0;
	uint8_t stype, dtype = 0;
	bool has_dst, is_exchange = flags & ZCOW_RENAME_EXCHANGE;
	int err;

	if (!files_of(fs))
		return -EINVAL;
	if (flags & ~(ZCOW_RENAME_NOREPLACE | ZCOW_RENAME_EXCHANGE) ||
	    flags == (ZCOW_RENAME_NOREPLACE | ZCOW_RENAME_EXCHANGE))
		return -EINVAL;	/* as renameat2(2) */
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, from, &src, &sino, &stype);
	if (err)
		goto out;
	err = zcow_path_resolve_locked(fs, to, &dst);
	if (err)
		goto out;
	/* btrfs moves no entry across subvolumes (EXDEV); zcow moves no
	 * subvolume entry at all. */
	if (src.is_subvol) {
		err = -EXDEV;
		goto out;
	}
	if (!dst.is_root && !dst.is_stub) {
		uint64_t dummy;
		uint8_t ltype;

		err = dir_lookup_loc(dst.tree, dst.dir, dst.name, dst.len,
				     &dummy, NULL, &ltype);
		if (!err && ltype == ZCOW_ROOT_ITEM_KEY) {
			err = -EXDEV;
			goto out;
		}
		if (err && err != -ENOENT)
			goto out;
		err = 0;
	}
	if (src.is_ro || dst.is_ro) {
		err = -EROFS;
		goto out;
	}
	if (src.tree != dst.tree) {	/* across subvolumes: as btrfs */
		err = -EXDEV;
		goto out;
	}
	if (src.is_root || dst.is_root) {
		err = -EBUSY;
		goto out;
	}
	err = zcow_path_writable(fs);
	if (err)
		goto out;
	err = zcow_dir_lookup(dst.tree, dst.dir, dst.name, dst.len, &dino,
			    &dtype);
	has_dst = !err;
	if (err && err != -ENOENT)
		goto out;
	err = 0;
	if (is_exchange && !has_dst)
		err = -ENOENT;
	else if ((flags & ZCOW_RENAME_NOREPLACE) && has_dst)
		err = -EEXIST;
	if (err)
		goto out;
	/* A directory moved into its own subtree (either one, for an
	 * exchange): -EINVAL, as lock_rename()'s trap. */
	if (stype == ZCOW_FT_DIR) {
		err = is_below_locked(dst.tree, dst.dir, sino);
		if (err) {
			err = err > 0 ? -EINVAL : err;
			goto out;
		}
	}
	if (is_exchange && dtype == ZCOW_FT_DIR) {
		err = is_below_locked(src.tree, src.dir, dino);
		if (err) {
			err = err > 0 ? -EINVAL : err;
			goto out;
		}
	}
	if (has_dst && dino == sino) {
		err = 0;
		goto out;	/* same inode: nothing to do */
	}
	if (is_exchange) {
		err = zcow_rsv_fs_items(fs, src.tree, 4 * RSV_ENTRY_ITEMS + 2,
					&nodes);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, false);
		if (err)
			goto out;
		/* One transaction (commits take the same lock): atomic. */
		err = exchange_locked(fs, &src, sino, stype, &dst, dino,
				      dtype);
		if (err) {
			zlog_err(TAG, "rename exchange %s <-> %s failed halfway: %d",
				 from, to, err);
			fs->error = err;
		}
		goto out;
	}
	if (has_dst) {
		if (stype == ZCOW_FT_DIR && dtype != ZCOW_FT_DIR) {
			err = -ENOTDIR;
			goto out;
		}
		if (stype != ZCOW_FT_DIR && dtype == ZCOW_FT_DIR) {
			err = -EISDIR;
			goto out;
		}
		if (dtype == ZCOW_FT_DIR) {
			err = is_dir_empty_locked(dst.tree, dino);
			if (err <= 0) {
				err = err < 0 ? err : -ENOTEMPTY;
				goto out;
			}
		}
	}
	/* Both entries and the replaced inode, reserved before any change:
	 * a rename is all or nothing. */
	err = zcow_rsv_fs_items(fs, src.tree, 2 * RSV_ENTRY_ITEMS + 1, &nodes);
	if (!err && has_dst)
		err = rsv_remove_locked(fs, &dst, dino, &nodes);
	/* Over a target it removes one: the global reserve, as unlink. */
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, has_dst);
	if (!err && has_dst)
		err = remove_locked(fs, &dst, dino, dtype == ZCOW_FT_DIR);
	if (err)
		goto out;
	/* One transaction (commits take the same lock): atomic. */
	err = del_entry_locked(fs, src.tree, src.dir, src.name, src.len, sino);
	if (!err)
		err = zcow_entry_add_locked(fs, dst.tree, dst.dir, dst.name,
					    dst.len, sino, stype);
	if (!err)
		err = touch_ctime_locked(fs, src.tree, sino);
	if (err) {
		zlog_err(TAG, "rename %s -> %s failed halfway: %d", from, to,
			 err);
		fs->error = err;
	}
out:
	UNLOCK(fs);
	return err;
}

static int cmp_dirent(const void *a, const void *b)
{
	return strcmp(((const struct zcow_dirent *)a)->name,
		      ((const struct zcow_dirent *)b)->name);
}

/* The entries of @path from DIR_INDEX @from on, at most @max, in index
 * order (zcow_readdir() sorts them by name). */
static int readdir_index(struct zcow_fs *fs, const char *path, uint64_t from,
			 uint64_t max, struct zcow_dirent **ents_ret,
			 uint64_t *nr_ret)
{
	struct zcow_dirent *ents = NULL, *e;
	uint64_t nr = 0, cap = 0, ino;
	struct zcow_tree_iter it;
	struct zcow_key k, start;
	struct zpath zp;
	const void *data;
	uint32_t len;
	uint8_t type;
	int err;

	*ents_ret = NULL;
	*nr_ret = 0;
	if (!files_of(fs))
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, path, &zp, &ino, &type);
	if (!err && zp.is_stub)
		goto done;	/* the empty directory */
	if (err)
		goto out;
	if (type != ZCOW_FT_DIR) {
		err = -ENOTDIR;
		goto out;
	}
	start.objectid = ino;
	start.type = ZCOW_DIR_INDEX_KEY;
	start.offset = from;
	zcow_tree_iter_init(&it, zp.tree, &start);
	while (nr < max && !(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		const uint8_t *d = data;
		uint16_t nlen;

		if (k.objectid != ino || k.type != ZCOW_DIR_INDEX_KEY)
			break;
		if (len < ZCOW_DIR_ITEM_HDR)
			continue;
		nlen = get16(d + 27);
		if (nlen > 255 || ZCOW_DIR_ITEM_HDR + nlen > len)
			continue;
		if (ZCOW_GROW_ONE(&ents, nr, &cap)) {
			err = -ENOMEM;
			goto out;
		}
		e = &ents[nr++];
		e->ino = get64(d);
		e->type = d[29];
		e->off = k.offset;
		memcpy(e->name, d + ZCOW_DIR_ITEM_HDR, nlen);
		e->name[nlen] = '\0';
	}
	if (err && err != -ENOENT)
		goto out;
	err = 0;
done:
	*ents_ret = ents;
	*nr_ret = nr;
	ents = NULL;
out:
	UNLOCK(fs);
	free(ents);
	return err;
}

int zcow_readdir(struct zcow_fs *fs, const char *path,
		 struct zcow_dirent **ents_ret, uint64_t *nr_ret)
{
	int err = readdir_index(fs, path, 0, UINT64_MAX, ents_ret, nr_ret);

	if (!err && *nr_ret)
		qsort(*ents_ret, *nr_ret, sizeof(**ents_ret), cmp_dirent);
	return err;
}

int zcow_readdir_at(struct zcow_fs *fs, const char *path, uint64_t from,
		    uint64_t max, struct zcow_dirent **ents_ret,
		    uint64_t *nr_ret)
{
	return readdir_index(fs, path, from, max, ents_ret, nr_ret);
}

int zcow_statfs(struct zcow_fs *fs, struct zcow_statfs *st)
{
	uint64_t zs, i, alloc = 0;

	if (!files_of(fs))
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	LOCK(fs);
	zs = fs->dev->info.zone_size;
	st->bsize = ZCOW_SECTORSIZE;
	st->total = fs->writable_bytes;
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (bg->flags & ZCOW_BG_DATA)
			st->data_used += bg->used;
		else
			st->meta_used += bg->used;
		st->zone_unusable += bg->zone_unusable;
		if (!bg->is_ro && !bg->is_removing && !bg->is_deleted)
			st->free += bg->capacity - bg->alloc_offset;
		alloc += bg->length;
	}
	if (fs->writable_bytes > alloc)
		st->free += (fs->writable_bytes - alloc) / zs *
			    (fs->dev->info.is_zoned &&
					     fs->dev->info.nr_conv <
						     fs->dev->info.nr_zones ?
				     fs->dev->info.zone_capacity :
				     zs);
	st->nr_inodes = fs->files->next_ino - ZCOW_FIRST_FREE_OBJECTID;
	st->nr_appends = fs->files->nr_appends;
	st->nr_appends_moved = fs->files->nr_appends_moved;
	st->nr_data_writes = fs->files->nr_data_writes;
	zcow_log_stats(fs, &st->nr_fsyncs, &st->nr_log_syncs,
		       &st->nr_log_fallbacks, st->nr_log_fallbacks_by,
		       &st->log_replayed,
		       &st->log_lost);
	st->nr_commits = fs->cstats.nr_commits;
	st->nr_groups_relocated = fs->rstats.groups_relocated;
	st->reloc_data_bytes = fs->rstats.data_bytes;
	st->reloc_meta_bytes = fs->rstats.meta_bytes;
	st->nr_zones_reset = fs->rstats.zones_reset;
	st->reclaimable = zcow_reclaimable(fs);
	UNLOCK(fs);
	return 0;
}

/* ---- mkfs, mount, unmount hooks ----------------------------------------- */

int zcow_root_dir_locked(struct zcow_fs *fs)
{
	/* mkfs makes the root directory (docs/format.md, "mkfs"), as
	 * btrfs-progs does; a fs tree without it is damaged. */
	if (fs->files->has_root_dir)
		return 0;
	zlog_err(TAG, "the fs tree has no root directory (inode 256)");
	return -EUCLEAN;
}

int zcow_files_raise_next_ino(struct zcow_fs *fs, struct zcow_tree *t)
{
	struct zcow_files *fl = fs->files;
	struct zcow_key start = { UINT64_MAX, 0, 0 }, k;
	struct zcow_tree_iter it;
	int err;

	zcow_tree_iter_init(&it, t, &start);
	while (!(err = zcow_tree_iter_prev(&it, &k, NULL, NULL))) {
		if (k.objectid < ZCOW_FIRST_FREE_OBJECTID ||
		    k.objectid >= (uint64_t)-256)
			continue;
		if (k.objectid + 1 > fl->next_ino)
			fl->next_ino = k.objectid + 1;
		break;
	}
	return err == -ENOENT ? 0 : err;
}

int zcow_files_rescan(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;
	struct zcow_inode rd;
	uint64_t i;
	int err;

	/* The highest objectid of the fs tree + 1 (btrfs: find_highest),
	 * and of every writable snapshot's (one counter for all trees: a
	 * number new in one tree is new in each). */
	fl->next_ino = ZCOW_FIRST_FREE_OBJECTID + 1;
	err = zcow_files_raise_next_ino(fs, &fs->fs_tree);
	for (i = 0; !err && i < fl->nr_snaps; i++) {
		struct zcow_tree *t = zcow_root_tree_locked(fs,
							    fl->snaps[i].id);

		err = t ? zcow_files_raise_next_ino(fs, t) : -EIO;
	}
	if (err)
		return err;
	/* -EUCLEAN: not an inode item (a tree used without files, as the
	 * metadata tests do); the checker judges. */
	err = zcow_inode_get(&fs->fs_tree, ZCOW_ROOT_DIR_INO, &rd);
	if (err && err != -ENOENT && err != -EUCLEAN)
		return err;
	fl->has_root_dir = !err;
	return 0;
}

/*
 * The reclaim options: a known policy; reclaim_threshold= (51..100) only
 * with reclaim=threshold and reclaim_high= only with greedy or
 * cost-benefit (the default is greedy), the knob each policy has: an
 * option the policy would ignore is refused.
 */
static int check_reclaim_opts(const struct zcow_mount_opts *opts)
{
	const char *knob, *why;
	int p;

	if (!opts)
		return 0;
	p = opts->reclaim;
	if (p < ZCOW_RECLAIM_DEFAULT || p > ZCOW_RECLAIM_HOTCOLD_GREEDY) {
		zlog_err(TAG, "reclaim policy %d: unknown", p);
		return -EINVAL;
	}
	if (opts->cleaner < ZCOW_CLEANER_WRITER ||
	    opts->cleaner > ZCOW_CLEANER_STEPS) {
		zlog_err(TAG, "cleaner %d: unknown", opts->cleaner);
		return -EINVAL;
	}
	if (opts->reclaim_threshold &&
	    (opts->reclaim_threshold < 51 || opts->reclaim_threshold > 100)) {
		zlog_err(TAG, "reclaim_threshold=%u: need a percent in 51..100",
			 opts->reclaim_threshold);
		return -EINVAL;
	}
	if (opts->reclaim_high &&
	    (opts->reclaim_high <= ZCOW_RECLAIM_LOW_ZONES ||
	     opts->reclaim_high > ZCOW_RECLAIM_MAX_HIGH)) {
		zlog_err(TAG, "reclaim_high=%u: need a number of free zones in %u..%u",
			 opts->reclaim_high, ZCOW_RECLAIM_LOW_ZONES + 1,
			 ZCOW_RECLAIM_MAX_HIGH);
		return -EINVAL;
	}
	knob = zcow_reclaim_knob_refused(p, opts->reclaim_threshold,
					 opts->reclaim_high, &why);
	if (knob) {
		zlog_err(TAG, "%s with reclaim=%s: %s", knob,
			 zcow_reclaim_name(p), why);
		return -EINVAL;
	}
	return 0;
}

int zcow_files_mount(struct zcow_fs *fs, const struct zcow_mount_opts *opts)
{
	struct zcow_files *fl;
	uint32_t data_zones;
	uint64_t max_append;
	unsigned int d;
	int i;
	int err;

	err = check_reclaim_opts(opts);
	if (err)
		return err;
	if (opts && (opts->atime < ZCOW_ATIME_RELATIME ||
		     opts->atime > ZCOW_ATIME_STRICTATIME)) {
		zlog_err(TAG, "atime policy %d: unknown", opts->atime);
		return -EINVAL;
	}
	zcow_reclaim_init(fs, opts ? opts->reclaim : 0,
			  opts ? opts->reclaim_threshold : 0,
			  opts ? opts->reclaim_high : 0);
	if (opts && (opts->hotcold < ZCOW_HOTCOLD_OFF ||
		     opts->hotcold > ZCOW_HOTCOLD_AGE)) {
		zlog_err(TAG, "hotcold %d: unknown", opts->hotcold);
		return -EINVAL;
	}
	if (opts && !opts->hotcold && zcow_reclaim_needs_hotcold(opts->reclaim)) {
		zlog_err(TAG, "reclaim=%s: needs hotcold=on (it orders hot and cold groups)",
			 zcow_reclaim_name(opts->reclaim));
		return -EINVAL;
	}
	data_zones = zcow_zoned_data_zones(fs, opts ? opts->data_zones : 0,
					   !(opts && opts->no_treelog));
	if (opts && opts->hotcold && data_zones < 2) {
		/* A hot and a cold slot at least, or the option would not
		 * do what it says. */
		zlog_err(TAG, "mount option hotcold=on: needs 2 data slots, the device leaves %u",
			 data_zones);
		return -EINVAL;
	}
	fl = calloc(1, sizeof(*fl));
	if (!fl)
		return -ENOMEM;
	pthread_mutex_init(&fl->lock, NULL);
	pthread_cond_init(&fl->cond, NULL);
	for (i = 0; i < ZCOW_PLAIN_LOCKS; i++)
		pthread_mutex_init(&fl->plain_locks[i], NULL);
	/* the smallest append limit of the devices (0: one cannot) */
	max_append = fs->dev->info.max_append;
	for (d = 1; d < fs->nr_devs; d++)
		if (fs->devs[d].zdev->info.max_append < max_append)
			max_append = fs->devs[d].zdev->info.max_append;
	fl->zone_append = !(opts && opts->no_zone_append) && max_append > 0;
	fl->max_extent = ZCOW_MAX_EXTENT;
	if (fl->zone_append && max_append < fl->max_extent)
		fl->max_extent = max_append - max_append % ZCOW_SECTORSIZE;
	fl->commit_bytes = opts && opts->commit_bytes ? opts->commit_bytes :
							ZCOW_DEFAULT_COMMIT_BYTES;
	fl->data_zones = data_zones;
	fl->hotcold = opts ? opts->hotcold : ZCOW_HOTCOLD_OFF;
	fl->hot_age = UINT64_MAX;
	fl->gen_base = fs->transid;
	fl->clock = opts ? opts->clock : NULL;
	fl->clock_arg = opts ? opts->clock_arg : NULL;
	fl->atime = opts ? opts->atime : ZCOW_ATIME_RELATIME;
	pthread_mutex_init(&fl->append_lock, NULL);
	fs->files = fl;
	err = zcow_files_rescan(fs);
	if (!err && fl->hotcold == ZCOW_HOTCOLD_FREQUENCY)
		err = zcow_heat_init(fs);
	if (!err)
		err = zcow_log_init(fs, !(opts && opts->no_treelog));
	if (err)
		goto fail;
	err = zcow_snaps_load(fs);
	if (!err)	/* the snapshots' inode numbers too */
		err = zcow_files_rescan(fs);
	if (!err)
		err = zcow_cleaner_start(fs, opts ? opts->cleaner : 0);
	if (err)
		goto fail;
	return 0;
fail:
	zcow_files_unmount(fs);
	return err;
}

void zcow_files_wait_idle(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;

	if (!fl)
		return;
	pthread_mutex_lock(&fl->lock);
	while (fl->nr_inflight)
		pthread_cond_wait(&fl->cond, &fl->lock);
	pthread_mutex_unlock(&fl->lock);
}

void zcow_files_unmount(struct zcow_fs *fs)
{
	struct zcow_files *fl = fs->files;
	int i;

	if (!fl)
		return;
	zcow_cleaner_stop(fs);
	zcow_files_wait_idle(fs);
	zcow_snaps_free(fs);
	free(fl->inflight);
	free(fl->gen_clock);
	zcow_heat_free(fs);
	pthread_mutex_destroy(&fl->lock);
	pthread_mutex_destroy(&fl->append_lock);
	pthread_cond_destroy(&fl->cond);
	for (i = 0; i < ZCOW_PLAIN_LOCKS; i++)
		pthread_mutex_destroy(&fl->plain_locks[i]);
	free(fl);
	fs->files = NULL;
}

