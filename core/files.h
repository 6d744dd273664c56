/* SPDX-License-Identifier: MIT */
/*
 * files: the file layer of zcow (inodes, directories, file extents,
 * checksums, data extent references, snapshots) -- internal header.
 *
 * What it is: the state and helpers shared by core/inode.c (namespace:
 * paths, inodes, directory entries), core/file.c (the data path of seed
 * 006: zone append, checksums, copy-on-write extents, truncate),
 * core/snapshot.c (read-only snapshots), core/zoned.c (the data slots)
 * and core/fcheck.c (the fs-tree part of zcow check).  The public API is
 * the "files" section of include/zcow.h.
 *
 * Locking: one mutex per file system (files->lock) serializes every tree
 * operation and every change of block-group accounting.  Device writes of
 * file data run outside it (zone append lets them complete in any order);
 * files->plain_locks[zone % ZCOW_PLAIN_LOCKS] serializes reservation +
 * plain write per sequential data block group when zone_append=off (lock
 * order: plain lock, then files->lock).  Up to data_zones data block
 * groups are written at once: a write of inode I goes to slot I % N.
 *
 * Who may include it: core/ only.
 */
#ifndef ZCOW_FILES_H
#define ZCOW_FILES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "le.h"
#include "fs.h"

#define ZCOW_FIRST_FREE_OBJECTID	256ULL
#define ZCOW_ROOT_DIR_INO		256ULL
/* The inode number of the empty directory a subvolume entry shows where
 * it does not lead into its subvolume (btrfs's
 * BTRFS_EMPTY_SUBVOL_DIR_OBJECTID): no item holds it. */
#define ZCOW_EMPTY_SUBVOL_DIR_INO	2ULL
#define ZCOW_CSUM_OBJECTID		((uint64_t)-10)
#define ZCOW_TREE_BLOCK_REF_KEY		176
#define ZCOW_EXTENT_DATA_REF_KEY	178
#define ZCOW_SHARED_BLOCK_REF_KEY	182
#define ZCOW_SHARED_DATA_REF_KEY	184
#define ZCOW_EXTENT_FLAG_DATA		1ULL
#define ZCOW_BLOCK_FLAG_FULL_BACKREF	(1ULL << 8)
#define ZCOW_ROOT_BACKREF_KEY		144
#define ZCOW_ROOT_SUBVOL_RDONLY		(1ULL << 0)
/* A root item's inode flags: its fields are of the current format. */
#define ZCOW_INODE_ROOT_ITEM_INIT	(1ULL << 31)

/* btrfs item sizes. */
#define ZCOW_INODE_ITEM_SIZE		160u
#define ZCOW_DIR_ITEM_HDR		30u	/* struct btrfs_dir_item */
#define ZCOW_INODE_REF_HDR		10u	/* struct btrfs_inode_ref */
#define ZCOW_FILE_EXTENT_SIZE		53u	/* regular extent */
#define ZCOW_DATA_EXTENT_ITEM_SIZE	53u	/* extent item + one data ref */
/* Inline EXTENT_DATA_REFs one data extent item holds at most. */
#define ZCOW_MAX_INLINE_DATA_REFS	64u
/* Inline references of any kind one extent item holds at most. */
#define ZCOW_MAX_INLINE_REFS		ZCOW_MAX_INLINE_DATA_REFS
#define ZCOW_ROOT_ITEM_SIZE		439u
#define ZCOW_ROOT_REF_HDR		18u	/* struct btrfs_root_ref */

/* btrfs dir entry types. */
#define ZCOW_FT_REG_FILE		1
#define ZCOW_FT_DIR			2
#define ZCOW_FT_SYMLINK			7
#define ZCOW_FT_XATTR			8	/* an XATTR_ITEM's entries */

/* The entry type of an inode of @mode (btrfs's fs_ftype()). */
static inline uint8_t zcow_ft_of_mode(uint32_t mode)
{
	if (S_ISLNK(mode))
		return ZCOW_FT_SYMLINK;
	return S_ISDIR(mode) ? ZCOW_FT_DIR : ZCOW_FT_REG_FILE;
}

/* Names an inode may have (btrfs's BTRFS_LINK_MAX). */
#define ZCOW_LINK_MAX			65535u
/* The file extent item header before inline data (offsetof
 * btrfs_file_extent_item.disk_bytenr). */
#define ZCOW_FEXT_INLINE_HDR		21u

/* Largest data extent (one write command) when the device has no append
 * limit (conventional zones, zone_append=off). */
#define ZCOW_MAX_EXTENT			(1ULL << 20)
/* Plain-write order locks, one per zone modulo this (zone_append=off). */
#define ZCOW_PLAIN_LOCKS		64

/* Decoded struct btrfs_inode_item (the fields zcow uses). */
struct zcow_inode {
	uint64_t ino;
	uint64_t generation;
	uint64_t transid;
	uint64_t size;
	uint64_t nbytes;
	uint32_t nlink;
	uint32_t mode;
	uint64_t flags;
	uint64_t sequence;
	uint32_t uid, gid;
	uint64_t rdev;
	struct zcow_timespec atime, ctime, mtime, otime;
};

/* Decoded struct btrfs_file_extent_item (regular extents only). */
struct zcow_fext {
	uint64_t file_off;	/* key offset */
	uint64_t generation;
	uint64_t disk_bytenr;
	uint64_t disk_num_bytes;
	uint64_t offset;	/* into the disk extent */
	uint64_t num_bytes;
};

/* In-flight data writes of one inode (fsync waits for them). */
struct zcow_inflight {
	uint64_t root;
	uint64_t ino;
	uint64_t nr;
};

/* A read-only snapshot: its own tree, loaded on demand. */
struct zcow_snap {
	uint64_t id;		/* root objectid >= 256 */
	char name[256];
	struct zcow_tree *tree;	/* NULL until first used */
	bool is_rdonly;		/* its root item's RDONLY, read with tree */
};

struct zcow_files {
	pthread_mutex_t lock;		/* metadata: trees, accounting */
	pthread_cond_t cond;		/* an in-flight write finished */
	/* zone_append=off: reservation + plain write of a block group run
	 * under plain_locks[zone % ZCOW_PLAIN_LOCKS] (per-bg order) */
	pthread_mutex_t plain_locks[ZCOW_PLAIN_LOCKS];
	uint32_t data_zones;		/* active data block groups (slots) */
	/* logical start of each slot's data block group, 0 = none yet */
	uint64_t data_active[ZCOW_MAX_DATA_ZONES];
	/* the spare data group keep_spare() found last (core/zoned.c), a
	 * hint checked again before use; 0 = none */
	uint64_t spare_bg;
	bool zone_append;
	/*
	 * hotcold=on (core/zoned.c, "hot and cold"): slots
	 * [0, data_zones - data_zones / 2) take cold writes, the rest hot
	 * ones.  hot_age: the hot threshold (alloc clock bytes; UINT64_MAX
	 * until known), the mean age of the blocks overwritten between the
	 * last two commits that saw overwrites; ow_age_sum / nr_ow: the ages
	 * of the blocks overwritten since the last commit.  gen_clock[i]:
	 * fs->alloc_clock when transaction gen_base + i began (the write
	 * time of data of that generation), nr_gen of them, at most
	 * ZCOW_HOTCOLD_MAX_GENS (the older half is dropped then).
	 */
	int hotcold;			/* enum zcow_hotcold */
	struct zcow_heat *heat;		/* FREQUENCY: core/heat.c */
	uint64_t hot_age;
	double ow_age_sum;
	uint64_t nr_ow, nr_ow_hot;
	uint64_t gen_base;
	uint64_t *gen_clock;
	uint64_t nr_gen, cap_gen;
	uint64_t next_ino;
	uint64_t max_extent;		/* bytes per data write command */
	struct zcow_inflight *inflight;
	uint64_t nr_inflight, cap_inflight;
	struct zcow_snap *snaps;
	uint64_t nr_snaps, cap_snaps;
	uint64_t dirty_bytes;		/* data written since the last commit */
	uint64_t commit_bytes;		/* commit after this many (0 = never) */
	uint64_t nr_appends;		/* zone appends of data */
	uint64_t nr_appends_moved;	/* landed elsewhere than reserved */
	uint64_t nr_data_writes;	/* plain data writes */
	bool has_root_dir;		/* inode 256 exists (mkfs makes it) */
	/* the clock of inode times (zcow_mount_opts.clock; NULL: real) */
	void (*clock)(struct zcow_timespec *now, void *arg);
	void *clock_arg;
	int atime;	/* zcow_mount_opts.atime: ZCOW_ATIME_* */
	/* O_APPEND writes hold it from reading the size to their last
	 * extent: appends never overlap (lock order: before plain locks
	 * and files->lock) */
	pthread_mutex_t append_lock;
};

struct zcow_file {
	struct zcow_fs *fs;
	struct zcow_tree *tree;		/* fs tree or a snapshot's */
	uint64_t root;
	uint64_t ino;
	bool is_ro;
	bool is_ro_tree;	/* in a read-only snapshot */
	bool is_dir;
	bool is_append;		/* O_APPEND: writes go to the end */
	bool no_inline;		/* has no inline extent (expand_inline) */
};

static inline bool zcow_ts_eq(const struct zcow_timespec *a,
			      const struct zcow_timespec *b)
{
	return a->sec == b->sec && a->nsec == b->nsec;
}
/* Now, by the mount's clock (files->clock, else CLOCK_REALTIME). */
void zcow_files_now(struct zcow_fs *fs, struct zcow_timespec *now);
/* Time updates of an inode: mtime and ctime (data or entries changed),
 * ctime only (attributes, link count). */
void zcow_inode_touch_mc(struct zcow_inode *in,
			 const struct zcow_timespec *now);
/*
 * Relatime (Linux's relatime_need_update() and atime_needs_update()):
 * the atime of @in needs an update at @now when it is not @now already
 * and it is not after the mtime or the ctime, or more than a day old.
 */
bool zcow_atime_needs_update(const struct zcow_inode *in,
			     const struct zcow_timespec *now);

/* The entry @name of a DIR_ITEM or XATTR_ITEM @key (core/inode.c). */
int zcow_dir_item_find(struct zcow_tree *tree, const struct zcow_key *key,
		       const char *name, size_t len, uint8_t *buf,
		       uint32_t max, uint32_t *size_ret, uint32_t *off_ret,
		       uint32_t *elen_ret);
void zcow_inode_encode(const struct zcow_inode *ino, uint8_t *buf);
void zcow_inode_decode(const uint8_t *buf, uint64_t ino,
		       struct zcow_inode *ret);
/*
 * Decode a file extent item of @len bytes at file offset @file_off.  zcow
 * writes only a regular extent (type 1), uncompressed, unencrypted; the
 * read path and the checker also take an uncompressed inline extent (as
 * the kernel writes small files), which this function refuses.  Returns
 * 0, -EOPNOTSUPP (inline, preallocated, compressed or encrypted: a btrfs
 * image may hold them; logged) or -EUCLEAN (a regular extent item that
 * is not 53 bytes, or an unknown type).
 */
int zcow_fext_decode(const uint8_t *buf, uint32_t len, uint64_t file_off,
		     struct zcow_fext *ret);
void zcow_fext_encode(const struct zcow_fext *fe, uint8_t *buf);

/*
 * Checksums of the data blocks [@bytenr, @bytenr + @len) (block-aligned)
 * from the csum tree @t, whatever the layout of its items: btrfs keys an
 * item by the logical address of its first block, and the kernel extends
 * one item over adjacent extents and splits one where a leaf ends, so a
 * range may start inside an item and span several.  Fills @csums (may be
 * NULL: only whether all are there) with @len / 4096 little-endian
 * crc32c values.  Returns 0, -ENOENT (a block without checksum), -EUCLEAN
 * (an item that is not whole checksums) or a tree errno.
 */
int zcow_csum_lookup(struct zcow_tree *t, uint64_t bytenr, uint64_t len,
		     uint32_t *csums);
/*
 * Remove the checksums of [@bytenr, @bytenr + @len) from @t: items inside
 * the range are deleted, an item reaching into it is cut, one reaching
 * across it is cut in two.  Returns 0 (also when there were none), or
 * the errors of zcow_csum_lookup() and of tree updates.
 */
int zcow_csum_delete(struct zcow_tree *t, uint64_t bytenr, uint64_t len);

/*
 * Find @name in directory @dir's DIR_ITEM of @tree (names with the same
 * hash share one item, as btrfs does): 0 and *ino_ret / *type_ret (may be
 * NULL), -ENOENT, -EUCLEAN, or a tree errno.
 */
int zcow_dir_lookup(struct zcow_tree *tree, uint64_t dir, const char *name,
		    size_t len, uint64_t *ino_ret, uint8_t *type_ret);

/*
 * Subvolume entries (btrfs subvolume snapshot): the name @name (@len
 * bytes) in the root directory 256 of the fs tree, as a DIR_ITEM and a
 * DIR_INDEX whose location is (@id, ROOT_ITEM, (u64)-1), type directory,
 * and no INODE_REF (the subvolume's root inode refers to itself by "..");
 * the directory's size grows by 2 x @len.  Paths cross such an entry into
 * the subvolume's tree (read-only).  _locked: under files->lock.
 *
 * zcow_subvol_name_free_locked(): 0 when "/@name" is free, -EEXIST when
 * any entry (file, directory, subvolume) holds it, or a tree errno.
 * zcow_subvol_link_locked(): 0 and *@index_ret (may be NULL; the
 * DIR_INDEX index, the ROOT_REF's sequence), -EEXIST, -EINVAL (@len 0 or
 * above 255), -EUCLEAN (no root directory), or a tree errno.
 * zcow_subvol_unlink_locked(): removes the entry made by the link (the
 * DIR_ITEM name, the DIR_INDEX, 2 x @len of the directory's size): 0,
 * -ENOENT (no entry @name), -EINVAL (the entry is not subvolume @id's),
 * -EUCLEAN (its DIR_INDEX is missing), or a tree errno.
 */
int zcow_subvol_name_free_locked(struct zcow_fs *fs, const char *name,
				 size_t len);
int zcow_subvol_link_locked(struct zcow_fs *fs, const char *name, size_t len,
			    uint64_t id, uint64_t *index_ret);
int zcow_subvol_unlink_locked(struct zcow_fs *fs, const char *name,
			      size_t len, uint64_t id);

/* Inode items of @tree: 0, -ENOENT, or a tree errno. */
int zcow_inode_get(struct zcow_tree *tree, uint64_t ino,
		   struct zcow_inode *ret);
int zcow_inode_put(struct zcow_tree *tree, const struct zcow_inode *ino);

/* The tree of root @root (5 or a snapshot), or NULL (snapshot.c).
 * _locked. */
struct zcow_tree *zcow_root_tree_locked(struct zcow_fs *fs, uint64_t root);
/* One ROOT_REF (5, ROOT_REF, id): the subvolume's entry in the top level. */
struct zcow_root_ref {
	uint64_t dirid, sequence;	/* its DIR_INDEX (dirid, sequence) */
	uint16_t nlen;
	const char *name;		/* not NUL-terminated */
};
/* Call @fn for each ROOT_REF of the top level in @root_tree, in id order
 * (@ref NULL: a malformed item); stops at @fn's first non-zero return.
 * 0, @fn's return or a tree errno. */
int zcow_root_refs_walk(struct zcow_tree *root_tree,
			int (*fn)(void *arg, uint64_t id,
				  const struct zcow_root_ref *ref),
			void *arg);
/* The ROOT_ITEM of tree @id in @root_tree, whatever its key offset
 * (0, or for a snapshot the transaction that made it): its key, the
 * item (ZCOW_ROOT_ITEM_SIZE bytes into @item, may be NULL), its size.
 * 0, -ENOENT, -EUCLEAN (too short) or a tree errno. */
/* Is subvolume @id read-only (its root item's RDONLY flag)?  A root
 * that cannot be read counts as read-only.  _locked. */
bool zcow_root_is_rdonly_locked(struct zcow_fs *fs, uint64_t id);
/* Raise files->next_ino above every inode number of tree @t. */
int zcow_files_raise_next_ino(struct zcow_fs *fs, struct zcow_tree *t);
int zcow_root_item_find(struct zcow_tree *root_tree, uint64_t id,
			struct zcow_key *key_ret, uint8_t *item,
			uint32_t *size_ret);

/* ---- extent references (backref.c); _locked: under files->lock ---- */

/* One inline reference of an extent item, decoded. */
struct zcow_eref {
	uint8_t type;		/* ZCOW_*_REF_KEY */
	uint64_t root;		/* TREE_BLOCK_REF, EXTENT_DATA_REF */
	uint64_t parent;	/* SHARED_BLOCK_REF, SHARED_DATA_REF */
	uint64_t ino, offset;	/* EXTENT_DATA_REF */
	uint32_t count;		/* 1 for tree block references */
};

/* The inline references of extent item @d (@len bytes) into @v (at most
 * @max).  0 or -EUCLEAN (unknown type, truncated, too many). */
int zcow_extent_item_parse(const uint8_t *d, uint32_t len,
			   struct zcow_eref *v, uint32_t max, uint32_t *nr_ret);
/*
 * Add (@delta > 0) or drop a reference of data extent @bytenr+@len by
 * root @root's inode @ino at file offset - extent offset @offset, or
 * (_shared) by the leaf @parent.  The last drop removes the extent item
 * and its checksums and pins the bytes.  0, -EUCLEAN (no such item or
 * reference), -EOVERFLOW (too many references) or a tree errno.
 */
int zcow_data_ref_locked(struct zcow_fs *fs, uint64_t bytenr, uint64_t len,
			 int delta, uint64_t root, uint64_t ino,
			 uint64_t offset);
int zcow_data_ref_shared_locked(struct zcow_fs *fs, uint64_t bytenr,
				uint64_t len, int delta, uint64_t parent);
/* A tree block's reference by root @root or (@parent != 0) by the node
 * @parent, changed in its extent item at once.  Never drops the last. */
int zcow_tree_block_ref(struct zcow_fs *fs, uint64_t bytenr, int level,
			uint64_t root, uint64_t parent, int delta);
/* A tree block's refs and flags from its extent item. */
int zcow_tree_block_info(struct zcow_fs *fs, uint64_t bytenr, int level,
			 uint64_t *refs_ret, uint64_t *flags_ret);
/* zcow_tree_block_ref() that also sets @flags (FULL_BACKREF) in the
 * same item update. */
int zcow_tree_block_ref_flags(struct zcow_fs *fs, uint64_t bytenr, int level,
			      uint64_t root, uint64_t parent, int delta,
			      uint64_t flags);
/* Add or drop the references node image @buf holds on its children or
 * file extents: by root @root (and inode), or by @parent if not 0. */
int zcow_node_refs(struct zcow_fs *fs, const uint8_t *buf, uint64_t root,
		   uint64_t parent, int delta);
/*
 * Metadata nodes @nr_refs reference changes may dirty in the extent tree:
 * each item's path copied once at most (never more than the extent
 * tree's nodes), and the leaves the items' growth (an inline reference
 * each) may split.  Added to *@nodes_ret; 0 or the walk's errno.
 */
int zcow_rsv_ref_changes(struct zcow_fs *fs, uint64_t nr_refs,
			 uint64_t *nodes_ret);
/* The node store's release callback (ctree.h): a shared node's copy on
 * write. */
int zcow_store_release(void *arg, struct zcow_tree *tree, uint64_t bytenr,
		       uint64_t gen, uint64_t owner, int level,
		       const void *buf);
/* The file extent items (not inline ones) of @ino in @tree overlapping
 * [@from, @to), the one before @from that reaches in included, in order,
 * into a malloc'ed *@v_ret.  0, -ENOMEM or a tree errno. */
int zcow_collect_extents_locked(struct zcow_tree *tree, uint64_t ino,
				uint64_t from, uint64_t to,
				struct zcow_fext **v_ret, uint64_t *nr_ret);
/* Drop every file extent of @ino in [@from, end of file); the block
 * holding @from must be block-aligned. */
int zcow_drop_extents_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			     uint64_t root, uint64_t ino, uint64_t from,
			     uint64_t to, uint64_t *dropped_ret);
/* Commit from the file layer or a flush (fs->files->lock held;
 * transaction.c): zcow_commit(), then once more when it left whole
 * unusable groups it could not remove itself (system groups, groups of
 * its own transaction: transaction.c:mark_emptied removes the others in
 * the commit that empties them).  The data bytes written since are
 * counted from 0 again. */
int zcow_files_commit_locked(struct zcow_fs *fs);

/* Does the running transaction hold anything a commit would write
 * (dirty nodes, delayed references)?  Under files->lock. */
bool zcow_txn_dirty_locked(struct zcow_fs *fs);

/*
 * Metadata reservation (docs/space.md), under files->lock before an
 * operation changes anything: 0 when @nodes (its worst case, from the
 * zcow_rsv_* helpers) fit with the commit's needs and, unless
 * @may_use_global, the global reserve; otherwise one commit to flush the
 * running transaction and a second look.  -ENOSPC (nothing changed), -EIO
 * (the fs is in its error state), -EROFS, or a commit errno.
 */
int zcow_meta_reserve_locked(struct zcow_fs *fs, uint64_t nodes,
			     bool may_use_global);
/* Bytes the reservation charges per extent-tree item of a data extent
 * (an extent item with every inline reference; an upper bound). */
#define ZCOW_RSV_EXTENT_ITEM	(24u + ZCOW_MAX_INLINE_DATA_REFS * 29u)
/* Add to *nodes_ret: @nr_items fs-tree items of @tree (an inode, a
 * directory entry); UINT64_MAX: the whole tree. */
int zcow_rsv_fs_items(struct zcow_fs *fs, struct zcow_tree *tree,
		      uint64_t nr_items, uint64_t *nodes_ret);
/* Add to *nodes_ret: dropping @ino's file extents in [@from, @to) (their
 * items, references and checksums). */
int zcow_rsv_drop_extents_locked(struct zcow_fs *fs, struct zcow_tree *tree,
				 uint64_t ino, uint64_t from, uint64_t to,
				 uint64_t *nodes_ret);

/* Before a new name is linked: 0 when the fs tree has its root directory
 * (inode 256, made by mkfs), else -EUCLEAN with a message. */
int zcow_root_dir_locked(struct zcow_fs *fs);

/*
 * A data extent at @bytenr is referenced by one file extent: its extent
 * item (refs 1) and its checksum item (@csums, one crc32c per 4 KiB,
 * little-endian).  No space accounting (the caller's).  _locked.
 */
int zcow_data_extent_insert_locked(struct zcow_fs *fs, uint64_t bytenr,
				   uint64_t len, const uint32_t *csums,
				   uint64_t root, uint64_t ino,
				   uint64_t offset);

/* After the fs tree changed under the file layer (log replay): the next
 * inode number and the root directory, found again.  0 or -errno. */
int zcow_files_rescan(struct zcow_fs *fs);

/* ==== names and links (core/inode.c's paths, core/link.c) ==== */

/* The result of resolving a path up to its last component. */
struct zpath {
	struct zcow_tree *tree;
	uint64_t root;
	bool is_ro;		/* in a snapshot */
	bool is_root;		/* the path names the root directory */
	uint64_t dir;		/* parent directory */
	char name[256];		/* last component */
	size_t len;
	bool is_parent_found;	/* resolve reached the last component */
	/* lookup_path_locked(): the last component is a subvolume entry of
	 * directory dir (tree and root are then the subvolume's); is_stub:
	 * one inside a snapshot, an empty directory (below). */
	bool is_subvol;
	bool is_stub;
};

/*
 * Paths (inode.c), under files->lock.  zcow_path_resolve_locked(): walk
 * @path to its parent directory (a symlink or file in the middle:
 * -ENOTDIR; -ENOENT, -ENAMETOOLONG, -EINVAL for "." or "..").
 * zcow_path_lookup_locked(): the whole path to an inode, *type_ret its
 * entry's FT_* (may be NULL).  zcow_path_writable(): 0, -EROFS, or -EIO
 * (the fs is in its error state).
 */
int zcow_path_resolve_locked(struct zcow_fs *fs, const char *path,
			     struct zpath *zp);
int zcow_path_lookup_locked(struct zcow_fs *fs, const char *path,
			    struct zpath *zp, uint64_t *ino_ret,
			    uint8_t *type_ret);
int zcow_path_writable(struct zcow_fs *fs);
/* A new inode of @mode (type and permission bits) owned by @cred (NULL:
 * 0, 0) linked as @zp's last component: 0, -EEXIST, -EROFS, or a tree
 * errno.  The caller reserved the metadata. */
int zcow_new_inode_locked(struct zcow_fs *fs, struct zpath *zp,
			  uint32_t mode, const struct zcow_cred *cred,
			  uint64_t *ino_ret);
/* @ino (of entry type @type) gets the name @name in @dir: DIR_ITEM,
 * DIR_INDEX, the name added to its INODE_REF of @dir; the directory's
 * size.  Not its nlink (the caller's).  0, -EMLINK (the INODE_REF item
 * would not fit a leaf: zcow writes no INODE_EXTREF; nothing changed),
 * or a tree errno. */
int zcow_entry_add_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			  uint64_t dir, const char *name, size_t len,
			  uint64_t ino, uint8_t type);

/*
 * INODE_REF items (link.c): one item (ino, INODE_REF, parent dir) holds
 * every name of the inode in that directory, each a struct
 * btrfs_inode_ref (index le64, name_len le16) and the name, packed.
 * zcow_inode_ref_find(): the name's entry in item @d of @size bytes: 0
 * and its offset, length and index (each may be NULL), -ENOENT, or
 * -EUCLEAN (an entry overruns the item).
 * zcow_inode_ref_add(): the name with @index added (the item made when
 * it is the first name): 0, -EEXIST (the name is there), -EMLINK (the
 * item would pass a leaf's largest item; nothing changed), or a tree
 * errno.  With @is_dry_run only the check is made.
 * zcow_inode_ref_del(): the name taken out (the item goes with its last
 * name): 0 and *index_ret (may be NULL), -ENOENT (no such name),
 * -EUCLEAN, or a tree errno.
 */
int zcow_inode_ref_find(const uint8_t *d, uint32_t size, const char *name,
			size_t len, uint32_t *off_ret, uint32_t *elen_ret,
			uint64_t *index_ret);
int zcow_inode_ref_add(struct zcow_tree *tree, uint64_t ino, uint64_t dir,
		       const char *name, size_t len, uint64_t index,
		       bool is_dry_run);
int zcow_inode_ref_del(struct zcow_tree *tree, uint64_t ino, uint64_t dir,
		       const char *name, size_t len, uint64_t *index_ret);
/* Is the file extent item @d (@len bytes) an inline one (type 0)? */
static inline bool zcow_fext_is_inline(const uint8_t *d, uint32_t len)
{
	return len >= ZCOW_FEXT_INLINE_HDR && d[20] == 0;
}
/* The longest symlink target (btrfs: below a block, and the inline
 * data a leaf holds). */
uint32_t zcow_symlink_max(const struct zcow_fs *fs);
/* The longest xattr name + value (btrfs's BTRFS_MAX_XATTR_SIZE: a leaf's
 * largest item less a struct btrfs_dir_item). */
uint32_t zcow_xattr_max(const struct zcow_fs *fs);
/* Add to *nodes_ret: deleting the XATTR_ITEMs of @ino (at its last
 * name).  0 or a tree errno. */
int zcow_rsv_xattrs_locked(struct zcow_fs *fs, struct zcow_tree *tree,
			   uint64_t ino, uint64_t *nodes_ret);
/* Delete every XATTR_ITEM of @ino in @tree (the inode goes).  0 or a
 * tree errno. */
int zcow_xattrs_drop_locked(struct zcow_tree *tree, uint64_t ino);

/* ==== the tree-log (core/tree-log.c, seed 010) ====
 * Every call runs under files->lock (mount: single-threaded). */
int zcow_log_init(struct zcow_fs *fs, bool enabled);
void zcow_log_free(struct zcow_fs *fs);
/* @ino was linked into or unlinked from directory @dir, by the entry of
 * index @index and name hash @hash. */
void zcow_log_note_link(struct zcow_fs *fs, uint64_t dir, uint64_t ino,
			uint64_t index, uint64_t hash);
/* @ino's data, size or attributes changed: its next log holds all of
 * its file extents. */
void zcow_log_note_write(struct zcow_fs *fs, uint64_t ino);
/* A data write replaced @ino's bytes [@off, @off + @len) and nothing
 * else of its extents: its next log holds the extents of that range. */
void zcow_log_note_range(struct zcow_fs *fs, uint64_t ino, uint64_t off,
			 uint64_t len);
/* An inode became an orphan or an orphan was deleted (inode.c): the log
 * carries no orphan item, so every fsync commits until the next commit
 * (counted as the fallback "not_recorded"). */
void zcow_log_note_orphan(struct zcow_fs *fs);
/* fsync of @ino (its writes completed): log it, or commit (treelog=off,
 * or when it cannot be logged).  0 or -errno. */
int zcow_log_fsync_locked(struct zcow_fs *fs, uint64_t ino);
/* Has an fsync wanted the log since mount (treelog=on)?  Then the data
 * placement keeps a data chunk committed ahead (core/zoned.c). */
bool zcow_log_is_wanted(struct zcow_fs *fs);
/* A commit starts: the tree-log group is made ready (in its chunks). */
void zcow_log_commit_prepare(struct zcow_fs *fs);
/* Batched fsync (btrfs's log batching): log @ino into the log tree, to
 * be written by the next fsync.  1 added, 0 nothing to do (durable
 * already), -EAGAIN only a full commit can make it durable (fsync it
 * alone), or -errno. */
int zcow_log_join_locked(struct zcow_fs *fs, uint64_t ino);
/* The commit that wrote log_root = 0 is durable: drop the log. */
void zcow_log_commit_done(struct zcow_fs *fs);
/* Mount: replay the superblock's log, then commit.  0 or -errno. */
int zcow_log_replay(struct zcow_fs *fs);
/* The log root on the device (last sync, or the mounted superblock's):
 * false when there is none. */
bool zcow_log_root(struct zcow_fs *fs, uint64_t *bytenr_ret, int *level_ret);
/* The tree-log's counters since mount; @fallbacks_by has
 * ZCOW_LOG_NR_FALLBACKS entries (enum zcow_log_fallback). */
void zcow_log_stats(struct zcow_fs *fs, uint64_t *fsyncs, uint64_t *syncs,
		    uint64_t *fallbacks, uint64_t *fallbacks_by,
		    uint64_t *replayed, bool *is_lost);

/* Read-write mount, after the log replay (fs.c): delete every inode an
 * orphan item of the fs tree names (an inode linked again keeps its
 * links: only the item goes), then commit.  0 or -errno. */
int zcow_orphan_cleanup(struct zcow_fs *fs);
/* Does @tree hold the orphan item of inode @ino (inode.c)? */
bool zcow_has_orphan_item(struct zcow_tree *tree, uint64_t ino);
/* Snapshot loading at mount (snapshot.c). */
int zcow_snaps_load(struct zcow_fs *fs);
void zcow_snaps_free(struct zcow_fs *fs);

/* The fs-tree checker (fcheck.c), called from zcow_check(). */
int zcow_files_check(struct zcow_fs *fs,
		     void (*report)(void *arg, const char *msg), void *arg);

#endif /* ZCOW_FILES_H */
