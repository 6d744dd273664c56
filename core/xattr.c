// SPDX-License-Identifier: MIT
/*
 * Extended attributes of the file layer, as btrfs stores them: an
 * XATTR_ITEM (inode, 24, crc32c name hash as for DIR_ITEM) whose body is
 * a struct btrfs_dir_item (location zeroed, transid, data_len = the
 * value's length, name_len, type FT_XATTR) followed by the name and the
 * value; names with one hash are packed in one item, as directory
 * entries are.
 *
 * The limits are Linux's and btrfs's: a name of 1..255 bytes (ERANGE),
 * a value of at most XATTR_SIZE_MAX (E2BIG, the VFS), name + value within
 * BTRFS_MAX_XATTR_SIZE (ENOSPC, btrfs: a leaf's largest item less the
 * dir item header).  The namespaces are user., trusted. and security.
 * (stored as they are); system. (POSIX ACLs) and btrfs. (properties)
 * would need semantics zcow does not implement, and any other prefix has
 * no handler in Linux: EOPNOTSUPP.  As xattr_permission(), user.*
 * attributes exist only on regular files and directories (a symlink:
 * EPERM to set, ENODATA to get).
 *
 * A change marks the inode changed (fsync logs all of its items, the
 * XATTR_ITEMs with them; replay puts back exactly the logged ones, so a
 * removal is durable too).  The items go with the inode.
 *
 * Every tree operation runs under files->lock; see core/files.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csum.h"
#include "files.h"
#include "zlog.h"

#define TAG "files"

#define LOCK(fs) pthread_mutex_lock(&(fs)->files->lock)
#define UNLOCK(fs) pthread_mutex_unlock(&(fs)->files->lock)

/* The VFS's XATTR_NAME_MAX and XATTR_SIZE_MAX. */
#define XATTR_NAME_MAX		255u
#define XATTR_SIZE_MAX		65536u
/* A set: its XATTR_ITEM and the inode item. */
#define RSV_XATTR_ITEMS		2u

uint32_t zcow_xattr_max(const struct zcow_fs *fs)
{
	return zcow_leaf_max_item_size(fs->nodesize) - ZCOW_DIR_ITEM_HDR;
}

/* The name checks of setxattr(2)/getxattr(2) and of the namespaces
 * (header comment): 0, -ERANGE, -EOPNOTSUPP; *is_user_ret. */
static int check_name(const char *name, size_t *len_ret, bool *is_user_ret)
{
	static const char *const prefixes[] = { "user.", "trusted.",
						 "security." };
	size_t len, i;

	if (!name)
		return -EINVAL;
	len = strnlen(name, XATTR_NAME_MAX + 1);
	if (!len || len > XATTR_NAME_MAX)
		return -ERANGE;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		/* A bare prefix names nothing (the VFS: EINVAL). */
		if (!strncmp(name, prefixes[i], n)) {
			*len_ret = len;
			*is_user_ret = i == 0;
			return len == n ? -EINVAL : 0;
		}
	}
	return -EOPNOTSUPP;
}

/*
 * Entry @name of the XATTR_ITEM of @ino (read into @buf, @max bytes;
 * *size_ret the item's size, 0 when there is none): its offset and
 * length.  0, -ENOENT (no item, or not in it), -EUCLEAN, or a tree
 * errno.
 */
static int xattr_entry(struct zcow_tree *tree, uint64_t ino, const char *name,
		       size_t len, uint8_t *buf, uint32_t max,
		       uint32_t *size_ret, uint32_t *off_ret,
		       uint32_t *elen_ret)
{
	struct zcow_key k = { ino, ZCOW_XATTR_ITEM_KEY,
			      zcow_name_hash(name, len) };

	return zcow_dir_item_find(tree, &k, name, len, buf, max, size_ret,
				  off_ret, elen_ret);
}

/* The inode at @path for an xattr call: 0 and *zp, *ino_ret, *type_ret. */
static int xattr_inode_locked(struct zcow_fs *fs, const char *path,
			      struct zpath *zp, uint64_t *ino_ret,
			      uint8_t *type_ret)
{
	int err = zcow_path_lookup_locked(fs, path, zp, ino_ret, type_ret);

	if (!err && zp->is_stub)
		err = -EOPNOTSUPP;	/* the empty directory has no items */
	return err;
}

/* Set (@value non-NULL) or remove @name of @ino, the flags checked. */
static int xattr_change_locked(struct zcow_fs *fs, struct zpath *zp,
			       uint64_t ino, const char *name, size_t len,
			       const void *value, uint64_t size,
			       unsigned int flags)
{
	struct zcow_key k = { ino, ZCOW_XATTR_ITEM_KEY,
			      zcow_name_hash(name, len) };
	uint32_t max = zcow_leaf_max_item_size(fs->nodesize);
	uint32_t isize, off = 0, elen = 0, nsize;
	uint64_t nodes = 0;
	struct zcow_inode in;
	uint8_t *buf, *e;
	bool has;
	int err;

	buf = malloc(max);
	if (!buf)
		return -ENOMEM;
	err = xattr_entry(zp->tree, ino, name, len, buf, max, &isize, &off,
			  &elen);
	if (err && err != -ENOENT)
		goto out;
	has = !err;
	err = 0;
	if (has && (flags & ZCOW_XATTR_CREATE))
		err = -EEXIST;
	else if (!has && ((flags & ZCOW_XATTR_REPLACE) || !value))
		err = -ENODATA;
	if (err)
		goto out;
	/* The item without the old entry, then with the new one at its
	 * end (btrfs deletes the name, then inserts it again). */
	if (has) {
		memmove(buf + off, buf + off + elen, isize - off - elen);
		isize -= elen;
	}
	nsize = isize;
	if (value) {
		uint32_t add = ZCOW_DIR_ITEM_HDR + (uint32_t)len +
			       (uint32_t)size;

		if (isize + add > max) {
			err = -ENOSPC;	/* names of one hash fill the item */
			goto out;
		}
		e = buf + isize;
		memset(e, 0, 17);			/* location */
		put64(e + 17, fs->transid);
		put16(e + 25, (uint16_t)size);		/* data_len */
		put16(e + 27, (uint16_t)len);
		e[29] = ZCOW_FT_XATTR;
		memcpy(e + ZCOW_DIR_ITEM_HDR, name, len);
		if (size)
			memcpy(e + ZCOW_DIR_ITEM_HDR + len, value, size);
		nsize += add;
	}
	err = zcow_rsv_fs_items(fs, zp->tree, RSV_XATTR_ITEMS, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, !value);
	if (err)
		goto out;
	err = zcow_inode_get(zp->tree, ino, &in);
	if (err) {
		err = err == -ENOENT ? -EUCLEAN : err;
		goto out;
	}
	if (!nsize)
		err = zcow_tree_delete(zp->tree, &k);
	else if (has || isize)
		err = zcow_tree_update(zp->tree, &k, buf, nsize);
	else
		err = zcow_tree_insert(zp->tree, &k, buf, nsize);
	if (err)
		goto out;
	in.transid = fs->transid;
	zcow_files_now(fs, &in.ctime);	/* setxattr, removexattr */
	in.sequence++;
	err = zcow_inode_put(zp->tree, &in);
	if (err) {
		zlog_err(TAG, "xattr of inode %" PRIu64 " failed halfway: %d",
			 ino, err);
		fs->error = err;
		goto out;
	}
	if (zp->tree == &fs->fs_tree)
		zcow_log_note_write(fs, ino);
out:
	free(buf);
	return err;
}

/* The inode at @path, for a change of its xattrs: -EPERM for a user.*
 * name on what is neither a file nor a directory (Linux), -EROFS. */
static int xattr_writable_locked(struct zcow_fs *fs, const char *path,
				 bool is_user, struct zpath *zp,
				 uint64_t *ino_ret)
{
	uint8_t type;
	int err = xattr_inode_locked(fs, path, zp, ino_ret, &type);

	if (!err && is_user && type != ZCOW_FT_REG_FILE &&
	    type != ZCOW_FT_DIR)
		err = -EPERM;
	if (!err && zp->is_ro)
		err = -EROFS;
	if (!err)
		err = zcow_path_writable(fs);
	return err;
}

int zcow_setxattr(struct zcow_fs *fs, const char *path, const char *name,
		  const void *value, uint64_t size, unsigned int flags)
{
	struct zpath zp;
	uint64_t ino;
	bool is_user;
	size_t len;
	int err;

	if (!fs || !fs->files || (!value && size) ||
	    (flags & ~(ZCOW_XATTR_CREATE | ZCOW_XATTR_REPLACE)))
		return -EINVAL;
	err = check_name(name, &len, &is_user);
	if (err)
		return err;
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	if (len + size > zcow_xattr_max(fs))
		return -ENOSPC;		/* btrfs: BTRFS_MAX_XATTR_SIZE */
	LOCK(fs);
	err = xattr_writable_locked(fs, path, is_user, &zp, &ino);
	if (!err)
		err = xattr_change_locked(fs, &zp, ino, name, len,
					  value ? value : "", size, flags);
	UNLOCK(fs);
	return err;
}

int zcow_removexattr(struct zcow_fs *fs, const char *path, const char *name)
{
	struct zpath zp;
	uint64_t ino;
	bool is_user;
	size_t len;
	int err;

	if (!fs || !fs->files)
		return -EINVAL;
	err = check_name(name, &len, &is_user);
	if (err)
		return err;
	LOCK(fs);
	err = xattr_writable_locked(fs, path, is_user, &zp, &ino);
	if (!err)
		err = xattr_change_locked(fs, &zp, ino, name, len, NULL, 0,
					  ZCOW_XATTR_REPLACE);
	UNLOCK(fs);
	return err;
}

int64_t zcow_getxattr(struct zcow_fs *fs, const char *path, const char *name,
		      void *buf, uint64_t size)
{
	struct zpath zp;
	uint32_t max, isize, off, elen;
	uint64_t ino;
	uint8_t type, *item;
	bool is_user;
	size_t len;
	int64_t ret;

	if (!fs || !fs->files || (!buf && size))
		return -EINVAL;
	ret = check_name(name, &len, &is_user);
	if (ret)
		return ret;
	max = zcow_leaf_max_item_size(fs->nodesize);
	item = malloc(max);
	if (!item)
		return -ENOMEM;
	LOCK(fs);
	ret = xattr_inode_locked(fs, path, &zp, &ino, &type);
	if (!ret && is_user && type != ZCOW_FT_REG_FILE &&
	    type != ZCOW_FT_DIR)
		ret = -ENODATA;
	if (!ret)
		ret = xattr_entry(zp.tree, ino, name, len, item, max, &isize,
				  &off, &elen);
	if (ret == -ENOENT)
		ret = -ENODATA;
	if (!ret) {
		uint16_t dlen = get16(item + off + 25);

		if (size && dlen > size) {
			ret = -ERANGE;
		} else {
			if (size)
				memcpy(buf, item + off + ZCOW_DIR_ITEM_HDR + len,
				       dlen);
			ret = dlen;
		}
	}
	UNLOCK(fs);
	free(item);
	return ret;
}

int64_t zcow_listxattr(struct zcow_fs *fs, const char *path, char *buf,
		       uint64_t size)
{
	struct zcow_key start, k;
	struct zcow_tree_iter it;
	struct zpath zp;
	const void *data;
	uint64_t ino, total = 0;
	uint32_t dlen;
	uint8_t type;
	int64_t ret;
	int err;

	if (!fs || !fs->files || (!buf && size))
		return -EINVAL;
	LOCK(fs);
	ret = xattr_inode_locked(fs, path, &zp, &ino, &type);
	if (ret)
		goto out;
	start.objectid = ino;
	start.type = ZCOW_XATTR_ITEM_KEY;
	start.offset = 0;
	zcow_tree_iter_init(&it, zp.tree, &start);
	/* In key (hash) order, as btrfs_listxattr(). */
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &dlen)) &&
	       k.objectid == ino && k.type == ZCOW_XATTR_ITEM_KEY) {
		const uint8_t *d = data;
		uint32_t off = 0;

		while (off + ZCOW_DIR_ITEM_HDR <= dlen) {
			uint16_t nlen = get16(d + off + 27);
			uint32_t elen = ZCOW_DIR_ITEM_HDR + nlen +
					get16(d + off + 25);

			if (off + elen > dlen) {
				err = -EUCLEAN;
				break;
			}
			if (size) {
				if (total + nlen + 1 > size) {
					ret = -ERANGE;
					goto out;
				}
				memcpy(buf + total, d + off + ZCOW_DIR_ITEM_HDR,
				       nlen);
				buf[total + nlen] = '\0';
			}
			total += nlen + 1u;
			off += elen;
		}
		if (err)
			break;
	}
	if (err && err != -ENOENT) {
		ret = err;
		goto out;
	}
	ret = (int64_t)total;
out:
	UNLOCK(fs);
	return ret;
}

int zcow_rsv_xattrs_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			   uint64_t ino, uint64_t *nodes_ret)
{
	struct zcow_key start = { ino, ZCOW_XATTR_ITEM_KEY, 0 }, k;
	struct zcow_tree_iter it;
	uint64_t nr = 0;
	int err;

	zcow_tree_iter_init(&it, tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, NULL, NULL)) &&
	       k.objectid == ino && k.type == ZCOW_XATTR_ITEM_KEY)
		nr++;
	if (err && err != -ENOENT)
		return err;
	return nr ? zcow_rsv_fs_items(fs, tree, nr, nodes_ret) : 0;
}

int zcow_xattrs_drop_locked(struct zcow_tree *tree, uint64_t ino)
{
	struct zcow_key start = { ino, ZCOW_XATTR_ITEM_KEY, 0 }, k;
	struct zcow_tree_iter it;
	int err;

	/* One at a time: a delete invalidates the iterator. */
	for (;;) {
		zcow_tree_iter_init(&it, tree, &start);
		err = zcow_tree_iter_next(&it, &k, NULL, NULL);
		if (err == -ENOENT ||
		    (!err && (k.objectid != ino ||
			      k.type != ZCOW_XATTR_ITEM_KEY)))
			return 0;
		if (!err)
			err = zcow_tree_delete(tree, &k);
		if (err)
			return err;
	}
}
