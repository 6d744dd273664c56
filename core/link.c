// SPDX-License-Identifier: MIT
/*
 * Hard links and symlinks of the file layer, as btrfs stores them.
 *
 * A hard link is one more name of an inode: a DIR_ITEM and a DIR_INDEX in
 * the new parent, and the name in the inode's INODE_REF item of that
 * parent, which packs every name the inode has there (struct
 * btrfs_inode_ref {index le64, name_len le16} + name, repeated).  zcow
 * writes no INODE_EXTREF (its superblock has no EXTENDED_IREF): a name
 * that would make the item pass a leaf's largest item is refused with
 * EMLINK, as btrfs without extended refs does.  nlink counts the names.
 *
 * A symlink is an inode of mode S_IFLNK | 0777 whose target is its one
 * file extent, inline (type 0, uncompressed, ram_bytes = length) at
 * offset 0; its size and nbytes are the target's length (btrfs_symlink).
 * The core follows no symlink: opening one gives ELOOP (as O_NOFOLLOW),
 * one in the middle of a path ENOTDIR; FUSE's kernel side resolves them.
 *
 * Every tree operation runs under files->lock; see core/files.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "zlog.h"

#define TAG "files"

#define LOCK(fs) pthread_mutex_lock(&(fs)->files->lock)
#define UNLOCK(fs) pthread_mutex_unlock(&(fs)->files->lock)

/* Metadata a link changes: its entry's three items, the directory's and
 * the inode's inode items. */
#define RSV_LINK_ITEMS		5u
/* A symlink: a new inode's items (inode.c's RSV_NEW_INODE_ITEMS) and its
 * inline extent. */
#define RSV_SYMLINK_ITEMS	8u

/* ---- INODE_REF items --------------------------------------------------- */

int zcow_inode_ref_find(const uint8_t *d, uint32_t size, const char *name,
			size_t len, uint32_t *off_ret, uint32_t *elen_ret,
			uint64_t *index_ret)
{
	uint32_t off = 0;

	while (off + ZCOW_INODE_REF_HDR <= size) {
		uint16_t nlen = get16(d + off + 8);
		uint32_t elen = ZCOW_INODE_REF_HDR + nlen;

		if (off + elen > size)
			return -EUCLEAN;
		if (nlen == len &&
		    !memcmp(d + off + ZCOW_INODE_REF_HDR, name, len)) {
			if (off_ret)
				*off_ret = off;
			if (elen_ret)
				*elen_ret = elen;
			if (index_ret)
				*index_ret = get64(d + off);
			return 0;
		}
		off += elen;
	}
	return off == size ? -ENOENT : -EUCLEAN;
}

/* The INODE_REF item (@ino, @dir) into a new buffer of the largest item
 * size: *buf_ret (free()), *size_ret (0: no item). */
static int ref_read(struct zcow_tree *tree, uint64_t ino, uint64_t dir,
		    uint8_t **buf_ret, uint32_t *size_ret, uint32_t *max_ret)
{
	struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, dir };
	uint32_t max = zcow_leaf_max_item_size(tree->store->nodesize);
	uint8_t *buf = malloc(max);
	uint32_t size = 0;
	int err;

	if (!buf)
		return -ENOMEM;
	err = zcow_tree_search(tree, &k, buf, max, &size);
	if (err == -ENOENT) {
		size = 0;
		err = 0;
	}
	if (!err && size > max)
		err = -EUCLEAN;
	if (err) {
		free(buf);
		return err;
	}
	*buf_ret = buf;
	*size_ret = size;
	*max_ret = max;
	return 0;
}

int zcow_inode_ref_add(struct zcow_tree *tree, uint64_t ino, uint64_t dir,
		       const char *name, size_t len, uint64_t index,
		       bool is_dry_run)
{
	struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, dir };
	uint32_t size, max, elen = ZCOW_INODE_REF_HDR + (uint32_t)len;
	uint8_t *buf;
	int err;

	err = ref_read(tree, ino, dir, &buf, &size, &max);
	if (err)
		return err;
	err = size ? zcow_inode_ref_find(buf, size, name, len, NULL, NULL,
					 NULL) :
		     -ENOENT;
	if (!err)
		err = -EEXIST;
	else if (err == -ENOENT)
		err = size + elen > max ? -EMLINK : 0;
	if (err || is_dry_run)
		goto out;
	put64(buf + size, index);
	put16(buf + size + 8, (uint16_t)len);
	memcpy(buf + size + ZCOW_INODE_REF_HDR, name, len);
	if (size)
		err = zcow_tree_update(tree, &k, buf, size + elen);
	else
		err = zcow_tree_insert(tree, &k, buf, elen);
out:
	free(buf);
	return err;
}

int zcow_inode_ref_del(struct zcow_tree *tree, uint64_t ino, uint64_t dir,
		       const char *name, size_t len, uint64_t *index_ret)
{
	struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, dir };
	uint32_t size, max, off, elen;
	uint64_t index;
	uint8_t *buf;
	int err;

	err = ref_read(tree, ino, dir, &buf, &size, &max);
	if (err)
		return err;
	err = size ? zcow_inode_ref_find(buf, size, name, len, &off, &elen,
					 &index) :
		     -ENOENT;
	if (err)
		goto out;
	if (elen == size) {
		err = zcow_tree_delete(tree, &k);
	} else {
		memmove(buf + off, buf + off + elen, size - off - elen);
		err = zcow_tree_update(tree, &k, buf, size - elen);
	}
	if (!err && index_ret)
		*index_ret = index;
out:
	free(buf);
	return err;
}

/* ---- hard links ------------------------------------------------------ */

int zcow_link(struct zcow_fs *fs, const char *from, const char *to)
{
	struct zpath src, dst;
	struct zcow_inode in;
	uint64_t ino, dummy, nodes = 0;
	uint8_t type;
	int err;

	if (!fs || !fs->files)
		return -EINVAL;
	LOCK(fs);
	err = zcow_path_lookup_locked(fs, from, &src, &ino, &type);
	if (err)
		goto out;
	err = zcow_path_resolve_locked(fs, to, &dst);
	if (err)
		goto out;
	/* The checks in the order of vfs_link() and btrfs_link(): the new
	 * name, a read-only tree, a directory, another subvolume, the
	 * count. */
	if (dst.is_root) {
		err = -EEXIST;
		goto out;
	}
	if (dst.is_stub) {
		err = -ENOENT;
		goto out;
	}
	err = zcow_dir_lookup(dst.tree, dst.dir, dst.name, dst.len, &dummy,
			      NULL);
	if (!err) {
		err = -EEXIST;
		goto out;
	}
	if (err != -ENOENT)
		goto out;
	if (dst.is_ro) {
		err = -EROFS;
		goto out;
	}
	if (type == ZCOW_FT_DIR || src.is_subvol || src.is_root) {
		err = -EPERM;
		goto out;
	}
	if (src.tree != dst.tree) {
		err = -EXDEV;
		goto out;
	}
	err = zcow_path_writable(fs);
	if (err)
		goto out;
	err = zcow_inode_get(src.tree, ino, &in);
	if (err) {
		err = err == -ENOENT ? -EUCLEAN : err;
		goto out;
	}
	if (in.nlink >= ZCOW_LINK_MAX) {
		err = -EMLINK;
		goto out;
	}
	err = zcow_rsv_fs_items(fs, dst.tree, RSV_LINK_ITEMS, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, false);
	if (err)
		goto out;
	/* -EMLINK here (the INODE_REF item is full) changes nothing. */
	err = zcow_entry_add_locked(fs, dst.tree, dst.dir, dst.name, dst.len,
				    ino, type);
	if (err)
		goto out;
	in.nlink++;
	in.transid = fs->transid;
	in.sequence++;
	zcow_files_now(fs, &in.ctime);	/* its link count changed */
	err = zcow_inode_put(dst.tree, &in);
	if (err) {
		zlog_err(TAG, "link %s -> %s failed halfway: %d", from, to,
			 err);
		fs->error = err;
	}
out:
	UNLOCK(fs);
	return err;
}

/* ---- symlinks -------------------------------------------------------- */

uint32_t zcow_symlink_max(const struct zcow_fs *fs)
{
	uint32_t leaf = zcow_leaf_max_item_size(fs->nodesize) -
			ZCOW_FEXT_INLINE_HDR;

	/* btrfs_symlink(): below the sector size and within
	 * BTRFS_MAX_INLINE_DATA_SIZE. */
	return leaf < ZCOW_SECTORSIZE - 1 ? leaf : ZCOW_SECTORSIZE - 1;
}

int zcow_symlink(struct zcow_fs *fs, const char *target, const char *path,
		 const struct zcow_cred *cred)
{
	struct zcow_key k;
	struct zcow_inode in;
	struct zpath zp;
	uint64_t ino, dummy, nodes = 0;
	uint8_t *item = NULL;
	size_t len;
	int err;

	if (!fs || !fs->files || !target)
		return -EINVAL;
	len = strlen(target);
	if (!len)
		return -ENOENT;		/* symlink(2) with "" */
	if (len > zcow_symlink_max(fs))
		return -ENAMETOOLONG;
	LOCK(fs);
	err = zcow_path_resolve_locked(fs, path, &zp);
	if (err)
		goto out;
	if (zp.is_root) {
		err = -EEXIST;
		goto out;
	}
	if (zp.is_stub) {
		err = -ENOENT;
		goto out;
	}
	err = zcow_dir_lookup(zp.tree, zp.dir, zp.name, zp.len, &dummy, NULL);
	if (!err) {
		err = -EEXIST;
		goto out;
	}
	if (err != -ENOENT)
		goto out;
	err = zp.is_ro ? -EROFS : zcow_path_writable(fs);
	if (!err)
		err = zcow_rsv_fs_items(fs, zp.tree, RSV_SYMLINK_ITEMS, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, false);
	if (err)
		goto out;
	item = malloc(ZCOW_FEXT_INLINE_HDR + len);
	if (!item) {
		err = -ENOMEM;
		goto out;
	}
	err = zcow_new_inode_locked(fs, &zp, S_IFLNK | 0777, cred, &ino);
	if (err)
		goto out;
	/* struct btrfs_file_extent_item, inline: generation, ram_bytes,
	 * compression 0, encryption 0, other_encoding 0, type 0, data. */
	memset(item, 0, ZCOW_FEXT_INLINE_HDR);
	put64(item, fs->transid);
	put64(item + 8, len);
	memcpy(item + ZCOW_FEXT_INLINE_HDR, target, len);
	k.objectid = ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	err = zcow_tree_insert(zp.tree, &k, item,
			       ZCOW_FEXT_INLINE_HDR + (uint32_t)len);
	if (!err)
		err = zcow_inode_get(zp.tree, ino, &in);
	if (!err) {
		in.size = len;
		in.nbytes = len;	/* inode_set_bytes(inode, name_len) */
		err = zcow_inode_put(zp.tree, &in);
	}
	if (err) {
		zlog_err(TAG, "symlink %s failed halfway: %d", path, err);
		fs->error = err;
	}
out:
	UNLOCK(fs);
	free(item);
	return err;
}

int64_t zcow_readlink(struct zcow_fs *fs, const char *path, char *buf,
		      uint64_t size)
{
	struct zcow_key k;
	struct zpath zp;
	uint64_t ino;
	uint8_t type, *item = NULL;
	uint32_t len, max;
	int64_t ret;

	/* readlink(2): a size of 0 is EINVAL */
	if (!fs || !fs->files || !buf || !size)
		return -EINVAL;
	max = zcow_leaf_max_item_size(fs->nodesize);
	item = malloc(max);
	if (!item)
		return -ENOMEM;
	LOCK(fs);
	ret = zcow_path_lookup_locked(fs, path, &zp, &ino, &type);
	if (!ret && (zp.is_stub || type != ZCOW_FT_SYMLINK))
		ret = -EINVAL;
	if (ret)
		goto out;
	k.objectid = ino;
	k.type = ZCOW_EXTENT_DATA_KEY;
	k.offset = 0;
	ret = zcow_tree_search(zp.tree, &k, item, max, &len);
	if (ret || len > max || !zcow_fext_is_inline(item, len) ||
	    item[16] || item[17] || item[18] || item[19] ||
	    get64(item + 8) != len - ZCOW_FEXT_INLINE_HDR) {
		zlog_err(TAG, "symlink %s (inode %" PRIu64 "): no plain inline extent (%" PRId64 ")",
			 path, ino, ret);
		ret = -EUCLEAN;
		goto out;
	}
	len -= ZCOW_FEXT_INLINE_HDR;
	if (len > size)
		len = (uint32_t)size;
	memcpy(buf, item + ZCOW_FEXT_INLINE_HDR, len);
	ret = len;
out:
	UNLOCK(fs);
	free(item);
	return ret;
}
