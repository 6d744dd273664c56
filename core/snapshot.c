// SPDX-License-Identifier: MIT
/*
 * Read-only snapshots of the fs tree (btrfs subvolume snapshot -r), as
 * btrfs makes them (docs/format.md, "Snapshots: shared tree blocks"):
 *   - zcow_snapshot(): a commit, then the snapshot's root is a copy of the
 *     fs tree's root node and every node below is shared, each child
 *     gaining a reference of the snapshot (core/backref.c keeps the
 *     references when either tree later copies a shared node); its
 *     ROOT_ITEM (keyed by the transaction, RDONLY, a uuid and the fs
 *     tree's as parent_uuid) with its uuid-tree entry, ROOT_REF and
 *     ROOT_BACKREF in the root tree, and its entry /NAME in the root
 *     directory (core/inode.c); a commit;
 *   - zcow_subvol_delete(): the snapshot's references dropped (nodes only
 *     it holds freed, with the data extents only they hold), its items
 *     and entry removed, in one commit;
 *   - zcow_subvol_list(): the snapshots, as btrfs subvolume list.
 * Snapshot trees are loaded on demand (zcow_root_tree_locked()).
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
#include "prng.h"
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

int zcow_root_item_find(struct zcow_tree *root_tree, uint64_t id,
			struct zcow_key *key_ret, uint8_t *item,
			uint32_t *size_ret)
{
	struct zcow_key start = { id, ZCOW_ROOT_ITEM_KEY, 0 };
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, root_tree, &start);
	err = zcow_tree_iter_next(&it, key_ret, &data, &len);
	if (err)
		return err;
	if (key_ret->objectid != id || key_ret->type != ZCOW_ROOT_ITEM_KEY)
		return -ENOENT;
	if (len < ZCOW_ROOT_ITEM_SIZE)
		return -EUCLEAN;
	if (item)
		memcpy(item, data, ZCOW_ROOT_ITEM_SIZE);
	if (size_ret)
		*size_ret = len;
	return 0;
}

static struct zcow_snap *find_snap(struct zcow_fs *fs, uint64_t id)
{
	uint64_t i;

	for (i = 0; i < fs->files->nr_snaps; i++)
		if (fs->files->snaps[i].id == id)
			return &fs->files->snaps[i];
	return NULL;
}

bool zcow_root_is_rdonly_locked(struct zcow_fs *fs, uint64_t id)
{
	struct zcow_snap *s;

	if (id == ZCOW_FS_TREE_OBJECTID)
		return false;
	/* the flag is read with the tree, once */
	if (!zcow_root_tree_locked(fs, id))
		return true;
	s = find_snap(fs, id);
	return !s || s->is_rdonly;
}

struct zcow_tree *zcow_root_tree_locked(struct zcow_fs *fs, uint64_t root)
{
	struct zcow_key k = { root, ZCOW_ROOT_ITEM_KEY, 0 };
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	struct zcow_snap *s;
	struct zcow_tree *t;
	uint32_t size;

	if (root == ZCOW_FS_TREE_OBJECTID)
		return &fs->fs_tree;
	s = find_snap(fs, root);
	if (!s)
		return NULL;
	if (s->tree)
		return s->tree;
	if (zcow_root_item_find(&fs->root_tree, root, &k, item, &size))
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
	t->share_gen = get64(item + 200);	/* last_snapshot */
	s->is_rdonly = get64(item + 208) & ZCOW_ROOT_SUBVOL_RDONLY;
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

int zcow_root_refs_walk(struct zcow_tree *root_tree,
			int (*fn)(void *arg, uint64_t id,
				  const struct zcow_root_ref *ref),
			void *arg)
{
	struct zcow_key start = { ZCOW_FS_TREE_OBJECTID, ZCOW_ROOT_REF_KEY, 0 };
	struct zcow_key k;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, root_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		const uint8_t *d = data;
		struct zcow_root_ref ref;

		if (k.objectid != ZCOW_FS_TREE_OBJECTID ||
		    k.type != ZCOW_ROOT_REF_KEY)
			break;
		if (len < ZCOW_ROOT_REF_HDR ||
		    ZCOW_ROOT_REF_HDR + get16(d + 16) > len) {
			err = fn(arg, k.offset, NULL);
		} else {
			ref.dirid = get64(d);
			ref.sequence = get64(d + 8);
			ref.nlen = get16(d + 16);
			ref.name = (const char *)d + ZCOW_ROOT_REF_HDR;
			err = fn(arg, k.offset, &ref);
		}
		if (err)
			return err;
	}
	return err == -ENOENT ? 0 : err;
}

static int load_one(void *arg, uint64_t id, const struct zcow_root_ref *ref)
{
	if (!ref)
		return -EUCLEAN;
	return add_snap(arg, id, ref->name, ref->nlen);
}

int zcow_snaps_load(struct zcow_fs *fs)
{
	return zcow_root_refs_walk(&fs->root_tree, load_one, fs->files);
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

/* Commits a snapshot makes at most to start from a clean transaction. */
#define SNAP_COMMIT_ROUNDS	4
#define ROOT_ITEM_UUID		247u	/* uuid, then parent_uuid */
#define ROOT_ITEM_PARENT_UUID	263u

/*
 * A snapshot's uuid: btrfs takes a random one; zcow's follows from the
 * file system's, the snapshot's id and transaction, so that a run is
 * reproducible.
 */
static void snap_uuid(const struct zcow_fs *fs, uint64_t id, uint8_t *uuid)
{
	uint64_t st = get64(fs->store.fsid) ^ get64(fs->store.fsid + 8) ^
		      zcow_mix64(id) ^ zcow_mix64(fs->transid + 1);

	put64(uuid, zcow_rand64(&st));
	put64(uuid + 8, zcow_rand64(&st));
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);	/* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);	/* variant */
}

/* The uuid tree's entry of subvolume @id with @uuid: add or (@delta < 0)
 * delete (btrfs's btrfs_uuid_tree_add/remove; one id per uuid). */
static int uuid_entry(struct zcow_fs *fs, const uint8_t *uuid, uint64_t id,
		      int delta)
{
	struct zcow_key k = { get64(uuid), ZCOW_UUID_KEY_SUBVOL,
			      get64(uuid + 8) };
	uint8_t v[8];

	put64(v, id);
	return delta > 0 ? zcow_tree_insert(&fs->uuid_tree, &k, v, sizeof(v)) :
			   zcow_tree_delete(&fs->uuid_tree, &k);
}

static void encode_snap_root_item(struct zcow_fs *fs, struct zcow_tree *t,
				  bool is_rdonly, uint8_t *buf)
{
	uint8_t src[ZCOW_ROOT_ITEM_SIZE];
	struct zcow_key k;
	uint64_t bytenr, gen;
	int level;

	zcow_tree_root(t, &bytenr, &level, &gen);
	memset(buf, 0, ZCOW_ROOT_ITEM_SIZE);
	put64(buf + 0, 1);			/* inode.generation */
	put32(buf + 40, 1);			/* inode.nlink */
	put32(buf + 52, S_IFDIR | 0755);	/* inode.mode */
	/* inode.flags: BTRFS_INODE_ROOT_ITEM_INIT.  Without it the kernel
	 * takes the item for one of an old format and clears its flags
	 * (btrfs_check_and_init_root_item): the snapshot would be
	 * writable. */
	put64(buf + 64, ZCOW_INODE_ROOT_ITEM_INIT);
	put64(buf + 160, gen);		/* generation */
	put64(buf + 168, ZCOW_ROOT_DIR_INO);	/* root_dirid */
	put64(buf + 176, bytenr);
	put64(buf + 192, fs->nodesize);	/* bytes_used (approx.) */
	put64(buf + 200, fs->transid);	/* last_snapshot */
	put64(buf + 208, is_rdonly ? ZCOW_ROOT_SUBVOL_RDONLY : 0); /* flags */
	put32(buf + 216, 1);			/* refs */
	buf[238] = (uint8_t)level;
	put64(buf + 239, gen);		/* generation_v2 */
	snap_uuid(fs, t->owner, buf + ROOT_ITEM_UUID);
	if (!zcow_root_item_find(&fs->root_tree, ZCOW_FS_TREE_OBJECTID, &k,
				 src, NULL))
		memcpy(buf + ROOT_ITEM_PARENT_UUID, src + ROOT_ITEM_UUID,
		       ZCOW_UUID_SIZE);
	put64(buf + 295, fs->transid);	/* ctransid */
	put64(buf + 303, fs->transid);	/* otransid */
}

int zcow_snapshot(struct zcow_fs *fs, const char *name, uint64_t *id_ret)
{
	return zcow_subvol_snapshot(fs, name, true, id_ret);
}

int zcow_subvol_snapshot(struct zcow_fs *fs, const char *name, bool is_rdonly,
			 uint64_t *id_ret)
{
	struct zcow_files *fl;
	struct zcow_key k;
	struct zcow_tree *t = NULL;
	uint8_t item[ZCOW_ROOT_ITEM_SIZE], ref[ZCOW_ROOT_REF_HDR + 256];
	uint8_t *buf = NULL;
	uint64_t id = 256, i, index = 0;
	size_t nlen;
	int err, round;

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
	if (!err)
		err = zcow_subvol_name_free_locked(fs, name, nlen);
	/* Each tree sharing a node holds one inline reference on it. */
	if (!err && fl->nr_snaps + 1 >= ZCOW_MAX_INLINE_REFS) {
		zlog_err(TAG, "snapshot %s: at most %u snapshots (references of a shared tree block are kept inline)",
			 name, ZCOW_MAX_INLINE_REFS - 1);
		err = -EMLINK;
	}
	/* Everything the source holds on the device and in the extent
	 * tree first: the copy shares committed nodes only.  The
	 * reservation may make room by relocating, and a commit may start
	 * the next transaction's relocation: commit again until the
	 * reservation leaves the transaction clean. */
	for (round = 0; !err; round++) {
		uint64_t nodes = 1;

		err = zcow_files_commit_locked(fs);
		/* The root's copy, a reference per child (or file extent
		 * of a root leaf: a leaf's items at most), the root tree's
		 * three items. */
		if (!err)
			err = zcow_rsv_ref_changes(fs, fs->nodesize / 25,
						   &nodes);
		/* its entry in the root directory (two items, the
		 * directory's inode) */
		if (!err)
			err = zcow_rsv_fs_items(fs, &fs->fs_tree, 3, &nodes);
		if (!err)
			err = zcow_rsv_nodes(fs, &fs->root_tree, 4,
					     ZCOW_ROOT_ITEM_SIZE, &nodes);
		if (!err)
			err = zcow_meta_reserve_locked(fs, nodes, false);
		if (!err && !zcow_txn_dirty_locked(fs))
			break;
		if (!err && round == SNAP_COMMIT_ROUNDS)
			err = -ENOSPC;
	}
	if (err)
		goto out;
	t = calloc(1, sizeof(*t));
	buf = malloc(fs->nodesize);
	if (!t || !buf) {
		err = -ENOMEM;
		goto out;
	}
	err = zcow_tree_init(t, &fs->store, id, ZCOW_NO_ROOT, 0,
			     fs->generation);
	if (!err)
		err = zcow_tree_set_transid(t, fs->transid);
	if (err)
		goto out;
	/* btrfs_copy_root(): the snapshot's root is a copy of the source's,
	 * its children shared, each with a reference of the snapshot. */
	err = zcow_tree_copy_root(t, &fs->fs_tree, buf);
	if (!err)
		err = zcow_node_refs(fs, buf, id, 0, +1);
	if (err)
		goto fail;
	t->share_gen = fs->transid;
	fs->fs_tree.share_gen = fs->transid;
	err = add_snap(fl, id, name, nlen);
	if (err)
		goto fail;
	fl->snaps[fl->nr_snaps - 1].tree = t;
	fl->snaps[fl->nr_snaps - 1].is_rdonly = is_rdonly;
	encode_snap_root_item(fs, t, is_rdonly, item);
	/* keyed as btrfs keys a snapshot's: by the transaction that made
	 * it (readers take the newest: zcow_root_item_find()) */
	k.objectid = id;
	k.type = ZCOW_ROOT_ITEM_KEY;
	k.offset = fs->transid;
	err = zcow_tree_insert(&fs->root_tree, &k, item, sizeof(item));
	if (!err)
		err = uuid_entry(fs, item + ROOT_ITEM_UUID, id, +1);
	if (!err)
		err = zcow_subvol_link_locked(fs, name, nlen, id, &index);
	put64(ref, ZCOW_ROOT_DIR_INO);	/* dirid */
	put64(ref + 8, index);		/* sequence: the DIR_INDEX */
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
	t = NULL;
out:
	if (t && (!fs->files->nr_snaps ||
		  fs->files->snaps[fs->files->nr_snaps - 1].tree != t)) {
		zcow_tree_release(t);
		free(t);
	}
	free(buf);
	UNLOCK(fs);
	return err;
}

/*
 * Drop tree @t's reference to its node @bytenr at @level (generation
 * @gen), held by root @ref_root or, if not 0, by the node @ref_parent
 * (btrfs's walk_down_proc()/walk_up_proc() of a snapshot drop): a node
 * another tree shares only loses the reference (its children are first
 * given references by its address if @t made it, since @t goes); the
 * last reference frees the node after what it references.
 */
static int drop_node(struct zcow_fs *fs, struct zcow_tree *t, uint64_t bytenr,
		     int level, uint64_t gen, uint64_t ref_root,
		     uint64_t ref_parent)
{
	uint64_t refs, flags, owner;
	uint8_t *buf = malloc(fs->nodesize);
	uint32_t nr, i;
	int err;

	if (!buf)
		return -ENOMEM;
	err = zcow_tree_block_info(fs, bytenr, level, &refs, &flags);
	if (!err)
		err = fs->store.read(fs, bytenr, buf);
	if (err)
		goto out;
	owner = get64(buf + 0x58);
	if (refs > 1) {
		uint64_t set = owner == t->owner &&
				       !(flags & ZCOW_BLOCK_FLAG_FULL_BACKREF) ?
			       ZCOW_BLOCK_FLAG_FULL_BACKREF :
			       0;

		if (set) {	/* its children's references move to it */
			err = zcow_node_refs(fs, buf, 0, bytenr, +1);
			if (!err)
				err = zcow_node_refs(fs, buf, owner, 0, -1);
		}
		if (!err)
			err = zcow_tree_block_ref_flags(fs, bytenr, level,
							ref_root, ref_parent,
							-1, set);
		goto out;
	}
	nr = get32(buf + 0x60);
	if (!level) {
		err = flags & ZCOW_BLOCK_FLAG_FULL_BACKREF ?
			      zcow_node_refs(fs, buf, 0, bytenr, -1) :
			      zcow_node_refs(fs, buf, owner, 0, -1);
	}
	for (i = 0; !err && level && i < nr; i++) {
		const uint8_t *p = buf + 101 + i * 33u;

		err = flags & ZCOW_BLOCK_FLAG_FULL_BACKREF ?
			      drop_node(fs, t, get64(p + 17), level - 1,
					get64(p + 25), 0, bytenr) :
			      drop_node(fs, t, get64(p + 17), level - 1,
					get64(p + 25), owner, 0);
	}
	if (!err)
		fs->store.free(fs, bytenr, gen);
out:
	free(buf);
	return err;
}

/* Delete the root tree's items of snapshot @s: ROOT_ITEM, ROOT_REF,
 * ROOT_BACKREF. */
static int delete_root_items(struct zcow_fs *fs, const struct zcow_snap *s)
{
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	static const uint8_t zero[ZCOW_UUID_SIZE];
	struct zcow_key k;
	int err = zcow_root_item_find(&fs->root_tree, s->id, &k, item, NULL);

	if (!err && memcmp(item + ROOT_ITEM_UUID, zero, sizeof(zero)))
		err = uuid_entry(fs, item + ROOT_ITEM_UUID, s->id, -1);
	if (err == -ENOENT)
		err = 0;	/* an older zcow put no uuid entry */
	if (!err)
		err = zcow_root_item_find(&fs->root_tree, s->id, &k, NULL,
					  NULL);
	if (!err)
		err = zcow_tree_delete(&fs->root_tree, &k);

	k.objectid = ZCOW_FS_TREE_OBJECTID;
	k.type = ZCOW_ROOT_REF_KEY;
	k.offset = s->id;
	if (!err)
		err = zcow_tree_delete(&fs->root_tree, &k);
	k.objectid = s->id;
	k.type = ZCOW_ROOT_BACKREF_KEY;
	k.offset = ZCOW_FS_TREE_OBJECTID;
	if (!err)
		err = zcow_tree_delete(&fs->root_tree, &k);
	return err;
}

int zcow_subvol_delete(struct zcow_fs *fs, const char *name)
{
	struct zcow_files *fl;
	struct zcow_tree *t;
	struct zcow_snap *s = NULL;
	uint64_t i, bytenr, gen, nodes = 0;
	int64_t nr;
	int level, err;

	if (!fs || !fs->files || !name)
		return -EINVAL;
	if (fs->read_only)
		return -EROFS;
	fl = fs->files;
	LOCK(fs);
	while (fl->nr_inflight)
		pthread_cond_wait(&fl->cond, &fl->lock);
	err = fs->error ? -EIO : -ENOENT;
	for (i = 0; fs->error == 0 && i < fl->nr_snaps; i++)
		if (!strcmp(fl->snaps[i].name, name)) {
			s = &fl->snaps[i];
			err = 0;
		}
	/* The snapshot's nodes are all on the device and in the extent
	 * tree first: a drop reads them. */
	if (!err)
		err = zcow_files_commit_locked(fs);
	t = err ? NULL : zcow_root_tree_locked(fs, s->id);
	if (!err && !t)
		err = -EIO;
	if (!err) {
		/* Every extent item may change (at most every node of the
		 * extent tree, once), the root tree's three items go. */
		nr = zcow_tree_nr_nodes(&fs->extent_tree);
		err = nr < 0 ? (int)nr : 0;
		nodes = (uint64_t)nr + 2 * ((uint64_t)
					   fs->extent_tree.root_level + 2);
	}
	if (!err)
		err = zcow_rsv_nodes(fs, &fs->root_tree, 4,
				     ZCOW_ROOT_ITEM_SIZE, &nodes);
	/* its entry in the root directory (two items, the inode) */
	if (!err)
		err = zcow_rsv_fs_items(fs, &fs->fs_tree, 3, &nodes);
	if (!err)
		err = zcow_meta_reserve_locked(fs, nodes, true);
	if (err)
		goto out;
	zcow_tree_root(t, &bytenr, &level, &gen);
	if (bytenr != ZCOW_NO_ROOT)
		err = drop_node(fs, t, bytenr, level, gen, s->id, 0);
	if (!err)
		err = zcow_subvol_unlink_locked(fs, s->name, strlen(s->name),
						s->id);
	if (!err)
		err = delete_root_items(fs, s);
	if (err) {
		zlog_err(TAG, "deleting subvolume %s: %d", name, err);
		if (!fs->error)
			fs->error = err;
		goto out;
	}
	zcow_tree_release(t);
	free(t);
	memmove(s, s + 1, (size_t)(fl->snaps + fl->nr_snaps - (s + 1)) *
				  sizeof(*s));
	fl->nr_snaps--;
	err = zcow_files_commit_locked(fs);
out:
	UNLOCK(fs);
	return err;
}

/* The ROOT_ITEM fields of subvolume @sv->id into @sv. */
static int subvol_root_locked(struct zcow_fs *fs, struct zcow_subvol *sv)
{
	struct zcow_key k;
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	int err;

	err = zcow_root_item_find(&fs->root_tree, sv->id, &k, item, NULL);
	if (err == -ENOENT)
		return -EUCLEAN;	/* a ROOT_REF without its root */
	if (err)
		return err;
	sv->gen = get64(item + 160);
	sv->otransid = get64(item + 303);
	sv->is_rdonly = get64(item + 208) & ZCOW_ROOT_SUBVOL_RDONLY;
	return 0;
}

struct subvols {
	struct zcow_subvol *v;
	uint64_t nr, cap;
};

static int list_one(void *arg, uint64_t id, const struct zcow_root_ref *ref)
{
	struct subvols *sv = arg;
	struct zcow_subvol *p;

	if (!ref || ref->nlen > sizeof(p->name) - 1)
		return -EUCLEAN;
	if (ZCOW_GROW_ONE(&sv->v, sv->nr, &sv->cap))
		return -ENOMEM;
	p = &sv->v[sv->nr++];
	memset(p, 0, sizeof(*p));
	p->id = id;
	memcpy(p->name, ref->name, ref->nlen);
	return 0;
}

int zcow_subvol_list(struct zcow_fs *fs, struct zcow_subvol **v_ret,
		     uint64_t *nr_ret)
{
	struct subvols sv = { NULL, 0, 0 };
	uint64_t i;
	int err;

	if (!fs || !fs->files || !v_ret || !nr_ret)
		return -EINVAL;
	LOCK(fs);
	/* ROOT_REF (5, ROOT_REF, id), in id order: the subvolumes under
	 * the top level, as btrfs subvolume list walks them; their
	 * ROOT_ITEMs are looked up once the walk is over. */
	err = zcow_root_refs_walk(&fs->root_tree, list_one, &sv);
	for (i = 0; !err && i < sv.nr; i++)
		err = subvol_root_locked(fs, &sv.v[i]);
	UNLOCK(fs);
	if (err) {
		free(sv.v);
		return err;
	}
	*v_ret = sv.v;
	*nr_ret = sv.nr;
	return 0;
}
