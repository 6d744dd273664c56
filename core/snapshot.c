// SPDX-License-Identifier: MIT
/*
 * Read-only snapshots of the fs tree (btrfs subvolume snapshots, flag
 * RDONLY): a snapshot is a copy of every item of the fs tree into a new
 * tree whose ROOT_ITEM, ROOT_REF and ROOT_BACKREF go into the root tree;
 * every file extent copied takes one more data reference (core/file.c,
 * zcow_data_ref_locked()), so the data stays while a snapshot points at
 * it.  Snapshot trees are loaded on demand (zcow_root_tree_locked()).
 *
 * Every tree operation runs under files->lock; see core/files.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "grow.h"
#include "zlog.h"

#define TAG "files"

#define LOCK(fs) pthread_mutex_lock(&(fs)->files->lock)
#define UNLOCK(fs) pthread_mutex_unlock(&(fs)->files->lock)

uint64_t zcow_files_nr_trees(struct zcow_fs *fs)
{
	return fs->files ? fs->files->nr_snaps : 0;
}

struct zcow_tree *zcow_files_tree_nr(struct zcow_fs *fs, uint64_t i)
{
	if (!fs->files || i >= fs->files->nr_snaps)
		return NULL;
	return fs->files->snaps[i].tree;
}

struct zcow_tree *zcow_root_tree_locked(struct zcow_fs *fs, uint64_t root)
{
	struct zcow_key k = { root, ZCOW_ROOT_ITEM_KEY, 0 };
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	struct zcow_snap *s = NULL;
	struct zcow_tree *t;
	uint32_t size;
	uint64_t i;

	if (root == ZCOW_FS_TREE_OBJECTID)
		return &fs->fs_tree;
	for (i = 0; i < fs->files->nr_snaps; i++)
		if (fs->files->snaps[i].id == root)
			s = &fs->files->snaps[i];
	if (!s)
		return NULL;
	if (s->tree)
		return s->tree;
	if (zcow_tree_search(&fs->root_tree, &k, item, sizeof(item), &size) ||
	    size < ZCOW_ROOT_ITEM_SIZE)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (zcow_tree_init(t, &fs->store, root, get64(item + 176),
			   item[238], get64(item + 160)) ||
	    zcow_tree_set_transid(t, fs->transid)) {
		free(t);
		return NULL;
	}
	s->tree = t;
	return t;
}

static int add_snap(struct zcow_files *fl, uint64_t id, const char *name,
		    size_t len)
{
	struct zcow_snap *p;

	if (ZCOW_GROW_ONE(&fl->snaps, fl->nr_snaps, &fl->cap_snaps))
		return -ENOMEM;
	p = &fl->snaps[fl->nr_snaps++];
	memset(p, 0, sizeof(*p));
	p->id = id;
	if (len > 255)
		len = 255;
	memcpy(p->name, name, len);
	p->name[len] = '\0';
	return 0;
}

int zcow_snaps_load(struct zcow_fs *fs)
{
	struct zcow_key start = { ZCOW_FS_TREE_OBJECTID, ZCOW_ROOT_REF_KEY, 0 };
	struct zcow_key k;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	/* ROOT_REF (5, ROOT_REF, id): struct btrfs_root_ref + name. */
	zcow_tree_iter_init(&it, &fs->root_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		const uint8_t *d = data;
		uint16_t nlen;

		if (k.objectid != ZCOW_FS_TREE_OBJECTID ||
		    k.type != ZCOW_ROOT_REF_KEY)
			break;
		if (len < ZCOW_ROOT_REF_HDR)
			return -EUCLEAN;
		nlen = get16(d + 16);
		if (ZCOW_ROOT_REF_HDR + nlen > len)
			return -EUCLEAN;
		err = add_snap(fs->files, k.offset,
			       (const char *)d + ZCOW_ROOT_REF_HDR, nlen);
		if (err)
			return err;
	}
	return err == -ENOENT ? 0 : err;
}

void zcow_snaps_free(struct zcow_fs *fs)
{
	uint64_t i;

	for (i = 0; i < fs->files->nr_snaps; i++) {
		if (fs->files->snaps[i].tree) {
			zcow_tree_release(fs->files->snaps[i].tree);
			free(fs->files->snaps[i].tree);
		}
	}
	free(fs->files->snaps);
	fs->files->snaps = NULL;
	fs->files->nr_snaps = 0;
	fs->files->cap_snaps = 0;
}

static void encode_snap_root_item(struct zcow_fs *fs, struct zcow_tree *t,
				  uint8_t *buf)
{
	uint64_t bytenr, gen;
	int level;

	zcow_tree_root(t, &bytenr, &level, &gen);
	memset(buf, 0, ZCOW_ROOT_ITEM_SIZE);
	put64(buf + 0, 1);			/* inode.generation */
	put32(buf + 40, 1);			/* inode.nlink */
	put32(buf + 52, S_IFDIR | 0755);	/* inode.mode */
	put64(buf + 160, gen);		/* generation */
	put64(buf + 168, ZCOW_ROOT_DIR_INO);	/* root_dirid */
	put64(buf + 176, bytenr);
	put64(buf + 192, fs->nodesize);	/* bytes_used (approx.) */
	put64(buf + 200, fs->transid);	/* last_snapshot */
	put64(buf + 208, ZCOW_ROOT_SUBVOL_RDONLY); /* flags */
	put32(buf + 216, 1);			/* refs */
	buf[238] = (uint8_t)level;
	put64(buf + 239, gen);		/* generation_v2 */
	put64(buf + 303, fs->transid);	/* otransid */
}

int zcow_snapshot(struct zcow_fs *fs, const char *name, uint64_t *id_ret)
{
	struct zcow_files *fl;
	struct zcow_key start = { 0, 0, 0 }, k;
	struct zcow_tree_iter it;
	struct zcow_tree *t = NULL;
	uint8_t item[ZCOW_ROOT_ITEM_SIZE], ref[ZCOW_ROOT_REF_HDR + 256];
	uint64_t id = 256, i;
	size_t nlen;
	const void *data;
	uint32_t len;
	int err;

	if (!fs || !fs->files || !name)
		return -EINVAL;
	fl = fs->files;
	nlen = strlen(name);
	if (nlen > 255)
		return -ENAMETOOLONG;
	if (!nlen || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	if (fs->read_only)
		return -EROFS;
	LOCK(fs);
	while (fl->nr_inflight)
		pthread_cond_wait(&fl->cond, &fl->lock);
	err = fs->error ? -EIO : 0;
	for (i = 0; !err && i < fl->nr_snaps; i++) {
		if (!strcmp(fl->snaps[i].name, name))
			err = -EEXIST;
		if (fl->snaps[i].id >= id)
			id = fl->snaps[i].id + 1;
	}
	if (!err) {
		uint64_t nodes = 0;

		/* The copy of the fs tree, a reference per file extent, the
		 * root tree's three items. */
		err = zcow_rsv_fs_items(fs, &fs->fs_tree, UINT64_MAX, &nodes);
		if (!err)
			err = zcow_rsv_nodes(fs, &fs->extent_tree, UINT64_MAX,
					     ZCOW_RSV_EXTENT_ITEM, &nodes);
		if (!err)
			err = zcow_rsv_nodes(fs, &fs->root_tree, 3,
					     ZCOW_ROOT_ITEM_SIZE, &nodes);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, false);
	}
	if (err)
		goto out;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	err = zcow_tree_init(t, &fs->store, id, ZCOW_NO_ROOT, 0,
			     fs->generation);
	if (!err)
		err = zcow_tree_set_transid(t, fs->transid);
	if (!err)
		err = zcow_tree_create_root(t);
	if (err)
		goto fail;
	/* Copy every item; every file extent takes a data reference. */
	zcow_tree_iter_init(&it, &fs->fs_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		struct zcow_fext fe;

		if (k.type == ZCOW_EXTENT_DATA_KEY) {
			err = zcow_fext_decode(data, len, k.offset, &fe);
			if (!err)
				err = zcow_data_ref_locked(fs, fe.disk_bytenr,
						   fe.disk_num_bytes, +1, id,
						   k.objectid,
						   k.offset - fe.offset);
			if (err)
				goto fail;
		}
		err = zcow_tree_insert(t, &k, data, len);
		if (err)
			goto fail;
	}
	if (err != -ENOENT)
		goto fail;
	err = add_snap(fl, id, name, nlen);
	if (err)
		goto fail;
	fl->snaps[fl->nr_snaps - 1].tree = t;
	encode_snap_root_item(fs, t, item);
	k.objectid = id;
	k.type = ZCOW_ROOT_ITEM_KEY;
	k.offset = 0;
	err = zcow_tree_insert(&fs->root_tree, &k, item, sizeof(item));
	put64(ref, ZCOW_ROOT_DIR_INO);	/* dirid */
	put64(ref + 8, id);			/* sequence */
	put16(ref + 16, (uint16_t)nlen);
	memcpy(ref + ZCOW_ROOT_REF_HDR, name, nlen);
	k.objectid = ZCOW_FS_TREE_OBJECTID;
	k.type = ZCOW_ROOT_REF_KEY;
	k.offset = id;
	if (!err)
		err = zcow_tree_insert(&fs->root_tree, &k, ref,
				       ZCOW_ROOT_REF_HDR + (uint32_t)nlen);
	k.objectid = id;
	k.type = ZCOW_ROOT_BACKREF_KEY;
	k.offset = ZCOW_FS_TREE_OBJECTID;
	if (!err)
		err = zcow_tree_insert(&fs->root_tree, &k, ref,
				       ZCOW_ROOT_REF_HDR + (uint32_t)nlen);
	if (!err)
		err = zcow_files_commit_locked(fs);
	if (err) {
		zlog_err(TAG, "snapshot %s: %d", name, err);
		if (!fs->error)
			fs->error = err;
	}
	if (!err && id_ret)
		*id_ret = id;
	goto out;
fail:
	/* Nothing referenced the new tree yet; its nodes are dropped with
	 * the transaction (the fs enters the error state). */
	zlog_err(TAG, "snapshot %s failed: %d", name, err);
	if (!fs->error)
		fs->error = err;
	zcow_tree_release(t);
	free(t);
out:
	UNLOCK(fs);
	return err;
}

/* The ROOT_ITEM fields of subvolume @sv->id into @sv. */
static int subvol_root_locked(struct zcow_fs *fs, struct zcow_subvol *sv)
{
	struct zcow_key k = { sv->id, ZCOW_ROOT_ITEM_KEY, 0 };
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	uint32_t size;
	int err;

	err = zcow_tree_search(&fs->root_tree, &k, item, sizeof(item), &size);
	if (err == -ENOENT || (!err && size < ZCOW_ROOT_ITEM_SIZE))
		return -EUCLEAN;	/* a ROOT_REF without its root */
	if (err)
		return err;
	sv->gen = get64(item + 160);
	sv->otransid = get64(item + 303);
	sv->is_rdonly = get64(item + 208) & ZCOW_ROOT_SUBVOL_RDONLY;
	return 0;
}

int zcow_subvol_list(struct zcow_fs *fs, struct zcow_subvol **v_ret,
		     uint64_t *nr_ret)
{
	struct zcow_key start = { ZCOW_FS_TREE_OBJECTID, ZCOW_ROOT_REF_KEY, 0 };
	struct zcow_key k;
	struct zcow_tree_iter it;
	struct zcow_subvol *v = NULL;
	uint64_t nr = 0, cap = 0, i;
	const void *data;
	uint32_t len;
	int err;

	if (!fs || !fs->files || !v_ret || !nr_ret)
		return -EINVAL;
	LOCK(fs);
	/* ROOT_REF (5, ROOT_REF, id), in id order: the subvolumes under
	 * the top level, as btrfs subvolume list walks them; their
	 * ROOT_ITEMs are looked up once the walk is over. */
	zcow_tree_iter_init(&it, &fs->root_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		const uint8_t *d = data;
		uint16_t nlen;

		if (k.objectid != ZCOW_FS_TREE_OBJECTID ||
		    k.type != ZCOW_ROOT_REF_KEY)
			break;
		nlen = len < ZCOW_ROOT_REF_HDR ? 0 : get16(d + 16);
		if (len < ZCOW_ROOT_REF_HDR || ZCOW_ROOT_REF_HDR + nlen > len ||
		    nlen > sizeof(v->name) - 1) {
			err = -EUCLEAN;
			goto out;
		}
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			err = -ENOMEM;
			goto out;
		}
		memset(&v[nr], 0, sizeof(v[nr]));
		v[nr].id = k.offset;
		memcpy(v[nr].name, d + ZCOW_ROOT_REF_HDR, nlen);
		nr++;
	}
	if (err != -ENOENT && err)
		goto out;
	err = 0;
	for (i = 0; !err && i < nr; i++)
		err = subvol_root_locked(fs, &v[i]);
out:
	UNLOCK(fs);
	if (err) {
		free(v);
		return err;
	}
	*v_ret = v;
	*nr_ret = nr;
	return 0;
}
