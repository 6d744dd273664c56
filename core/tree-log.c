// SPDX-License-Identifier: MIT
/*
 * The tree-log: fsync without a full transaction commit (seed 010).
 *
 * What it is: btrfs's log tree in the simplest form that stays exact.
 * fsync of inode X logs, into a log tree of the fs tree (owner
 * BTRFS_TREE_LOG_OBJECTID), the whole current item set of every inode
 * that must come back with X for the recovered namespace to be
 * consistent:
 *   - X itself (inode item, inode refs, file extents, and the checksum
 *     items of extents written since the last commit); a regular file
 *     whose extents changed only by data writes by its changes: the
 *     file extents of the ranges written since it was last logged, and
 *     an EXTENT_LOG item telling replay to replace only what lies under
 *     them (log_file_ranges(), replay_ranges()), so that an fsync of a
 *     large file costs what was written, not the file's size;
 *   - every directory X was linked into or unlinked from since the last
 *     commit (so a new name, a rename's new and old parent, an unlink are
 *     all durable), logged by its changes as btrfs logs a directory: its
 *     inode item and refs, the entries (un)linked since the last commit
 *     as they are now (DIR_INDEX, and the DIR_ITEM of each such name's
 *     hash), and DIR_LOG_INDEX items (btrfs key type 72, offset = first
 *     index, item = last) whose ranges cover exactly those indexes, which
 *     tell replay that committed entries of a range missing from the log
 *     were removed: an fsync costs what changed, not the directory's
 *     size;
 *   - every directory above X renamed since the last commit (X's path
 *     goes through it), whether or not X itself changed;
 *   - transitively, every inode linked into or unlinked from a logged
 *     directory since the last commit (its inode refs must agree with the
 *     directory's entries).
 * An inode already logged and unchanged since is not logged again, and
 * an inode unchanged since the last commit needs no log at all.  The
 * namespace changes of the running transaction are recorded in memory
 * (zcow_log_note_link(), zcow_log_note_write()) and forgotten at commit.
 *
 * The log's nodes live only in the dedicated tree-log block group (seed
 * 010, zcow_bg_reserve_treelog()); no other metadata goes there.  An
 * fsync writes the log's dirty nodes at that group's meta write pointer,
 * then the superblock whose log_root points at the log root tree (a
 * superblock log entry of the same generation, numbered by
 * log_root_transid).  The log's nodes carry no extent items: after the
 * next commit (which writes log_root = 0) their bytes are zone_unusable.
 *
 * An fsync falls back to a full commit (counted in nr_log_fallbacks, by
 * cause: enum zcow_log_fallback) when the log would not be replayable:
 * the log references a block group whose chunk the committed chunk tree
 * lacks (a logged file extent or a log node in a chunk allocated in the
 * running transaction: replay could not map it), a system chunk is new
 * (the log's superblock would carry it in its sys_chunk_array), more
 * than LOG_MAX_INODES inodes to log, or an error while building the log.
 * Chunks of the running transaction the log does not reference do not
 * matter: after a crash their zones hold data no committed item or log
 * item names, and the allocator resets such a zone before it reuses it
 * (core/volumes.c:find_free_zone).
 *
 * Replay (mount, before anything else writes): every logged inode's items
 * replace the fs tree's (a directory's: its inode item and refs, the
 * DIR_ITEMs the log holds, the DIR_INDEX items in its logged ranges); a
 * logged directory's committed entries in a logged range that are not in
 * the log are unlinked from their (unlogged) inodes, which are deleted at
 * their last link; data references follow; then a commit.  A log that
 * fails its checksums is ignored with a warning: the committed state is
 * consistent without it, and the fsyncs it held are reported lost
 * (zcow_statfs log_lost).
 *
 * Locking: everything here runs under files->lock.
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
#include "le.h"
#include "prng.h"
#include "zlog.h"
#include "zoned.h"

#define TAG "treelog"
#define LOG_MAX_INODES		4096
#define DIR_LOG_ITEM_SIZE	8u	/* struct btrfs_dir_log_item */
#define LOG_GROUP_ROOM		8	/* nodes a prepared log group holds */
/* Written ranges kept per inode; beyond, every extent is logged. */
#define LOG_MAX_RANGES		65536

/* File bytes [start, end) written since the inode was last logged. */
struct frange {
	uint64_t start, end;
};

/* A directory entry linked or unlinked in the running transaction. */
struct dent {
	uint64_t index;		/* its DIR_INDEX key offset */
	uint64_t hash;		/* its DIR_ITEM key offset (name hash) */
};

/* One inode changed in the running transaction. */
struct touch {
	uint64_t ino;		/* 0: a free slot */
	uint64_t change;	/* bumped by every change */
	uint64_t logged;	/* @change when last logged, 0 = never */
	uint64_t mark;		/* closure epoch */
	uint64_t *dirs;		/* directories it was (un)linked in */
	uint64_t *kids;		/* inodes (un)linked in it */
	struct dent *ents;	/* its entries (un)linked (a directory) */
	uint64_t nr_dirs, cap_dirs, nr_kids, cap_kids, nr_ents, cap_ents;
	struct frange *rngs;	/* written since last logged (a file) */
	uint64_t nr_rngs, cap_rngs;
	bool is_full;		/* its extents changed otherwise (truncate,
				 * attributes...): log them all */
};

struct zcow_log {
	bool enabled;			/* treelog=on */
	bool is_wanted;			/* an fsync wanted the log: commits
					 * keep its group ready */
	struct zcow_node_store store;	/* allocates in the tree-log group */
	bool is_active;			/* the log trees exist */
	struct zcow_tree tree;		/* the fs tree's log */
	struct zcow_tree root_tree;	/* the log root tree */
	uint64_t synced_root;		/* log root tree root at the last
					 * sync, 0 = none */
	int synced_level;
	uint64_t *allocs;		/* log nodes reserved since commit */
	uint64_t nr_allocs, cap_allocs;
	uint64_t *redirty;		/* freed before written: zeroed */
	uint64_t nr_redirty, cap_redirty;
	struct touch *tab;		/* open addressing by inode */
	uint64_t tab_size, nr_tab;
	uint64_t epoch;
	bool is_overflow;		/* a change could not be recorded */
	uint64_t seq;			/* log syncs in this transaction */
	bool is_pending;		/* inodes added, the log not written */
	bool has_new_data;		/* the log tree references data in a
					 * chunk of the running transaction:
					 * it may not be written until the
					 * commit (which drops it) */
	bool may_have_new_data;		/* a data chunk of the running
					 * transaction exists (log_add()) */
	uint64_t nr_fsyncs, nr_log_syncs, nr_fallbacks;
	uint64_t nr_fallbacks_by[ZCOW_LOG_NR_FALLBACKS];
	uint64_t nr_replayed;		/* inodes replayed at mount */
	bool is_lost;			/* a log was ignored at mount */
};

static int push64(uint64_t **v, uint64_t *nr, uint64_t *cap, uint64_t x)
{
	if (ZCOW_GROW_ONE(v, *nr, cap))
		return -ENOMEM;
	(*v)[(*nr)++] = x;
	return 0;
}

/* ---- the changes of the running transaction ------------------------- */

static uint64_t tab_slot(uint64_t ino, uint64_t size)
{
	return (ino * ZCOW_GOLDEN64) >> 20 & (size - 1);
}

static struct touch *tab_find(struct zcow_log *lg, uint64_t ino)
{
	uint64_t i;

	if (!lg->tab_size)
		return NULL;
	for (i = tab_slot(ino, lg->tab_size);; i = (i + 1) & (lg->tab_size - 1)) {
		if (lg->tab[i].ino == ino)
			return &lg->tab[i];
		if (!lg->tab[i].ino)
			return NULL;
	}
}

static struct touch *tab_get(struct zcow_log *lg, uint64_t ino)
{
	struct touch *t = tab_find(lg, ino);
	uint64_t i;

	if (t)
		return t;
	if ((lg->nr_tab + 1) * 2 > lg->tab_size) {
		uint64_t size = lg->tab_size ? lg->tab_size * 2 : 256, j;
		struct touch *tab = calloc(size, sizeof(*tab));

		if (!tab)
			return NULL;
		for (j = 0; j < lg->tab_size; j++) {
			if (!lg->tab[j].ino)
				continue;
			for (i = tab_slot(lg->tab[j].ino, size); tab[i].ino;
			     i = (i + 1) & (size - 1))
				;
			tab[i] = lg->tab[j];
		}
		free(lg->tab);
		lg->tab = tab;
		lg->tab_size = size;
	}
	for (i = tab_slot(ino, lg->tab_size); lg->tab[i].ino;
	     i = (i + 1) & (lg->tab_size - 1))
		;
	t = &lg->tab[i];
	memset(t, 0, sizeof(*t));
	t->ino = ino;
	lg->nr_tab++;
	return t;
}

static int add_unique(uint64_t **v, uint64_t *nr, uint64_t *cap, uint64_t x)
{
	uint64_t i;

	for (i = 0; i < *nr; i++)
		if ((*v)[i] == x)
			return 0;
	return push64(v, nr, cap, x);
}

static void tab_clear(struct zcow_log *lg)
{
	uint64_t i;

	for (i = 0; i < lg->tab_size; i++) {
		free(lg->tab[i].dirs);
		free(lg->tab[i].kids);
		free(lg->tab[i].ents);
		free(lg->tab[i].rngs);
	}
	if (lg->tab)
		memset(lg->tab, 0, lg->tab_size * sizeof(*lg->tab));
	lg->nr_tab = 0;
	lg->is_overflow = false;
}

void zcow_log_note_link(struct zcow_fs *fs, uint64_t dir, uint64_t ino,
			uint64_t index, uint64_t hash)
{
	struct zcow_log *lg = fs->log;
	struct touch *t, *d;

	if (!lg)
		return;
	t = tab_get(lg, ino);
	if (!t || add_unique(&t->dirs, &t->nr_dirs, &t->cap_dirs, dir)) {
		lg->is_overflow = true;
		return;
	}
	t->change++;
	d = tab_get(lg, dir);
	if (!d || add_unique(&d->kids, &d->nr_kids, &d->cap_kids, ino) ||
	    ZCOW_GROW_ONE(&d->ents, d->nr_ents, &d->cap_ents)) {
		lg->is_overflow = true;
		return;
	}
	d->ents[d->nr_ents++] = (struct dent){ index, hash };
	d->change++;
}

/* A change of @ino: its entry, counted changed; NULL without a log or
 * when the table is full (the log then overflows: fsyncs commit). */
static struct touch *note_change(struct zcow_fs *fs, uint64_t ino)
{
	struct zcow_log *lg = fs->log;
	struct touch *t;

	if (!lg)
		return NULL;
	t = tab_get(lg, ino);
	if (!t) {
		lg->is_overflow = true;
		return NULL;
	}
	t->change++;
	return t;
}

void zcow_log_note_write(struct zcow_fs *fs, uint64_t ino)
{
	struct touch *t = note_change(fs, ino);

	if (!t)
		return;
	t->is_full = true;
	t->nr_rngs = 0;
}

void zcow_log_note_orphan(struct zcow_fs *fs)
{
	if (fs->log)
		fs->log->is_overflow = true;
}

void zcow_log_note_range(struct zcow_fs *fs, uint64_t ino, uint64_t off,
			 uint64_t len)
{
	struct touch *t = note_change(fs, ino);

	if (!t)
		return;
	if (t->is_full)
		return;
	/* A write right after the last one (sequential) extends it. */
	if (t->nr_rngs && t->rngs[t->nr_rngs - 1].end == off) {
		t->rngs[t->nr_rngs - 1].end = off + len;
		return;
	}
	if (t->nr_rngs >= LOG_MAX_RANGES ||
	    ZCOW_GROW_ONE(&t->rngs, t->nr_rngs, &t->cap_rngs)) {
		t->is_full = true;
		t->nr_rngs = 0;
		return;
	}
	t->rngs[t->nr_rngs++] = (struct frange){ off, off + len };
}

/* ---- the log's node store ------------------------------------------- */

static int log_alloc(void *arg, uint64_t owner, int level,
		     uint64_t *bytenr_ret)
{
	struct zcow_fs *fs = arg;
	int ret;

	(void)owner;
	(void)level;
	if (fs->error)
		return fs->error;
	ret = zcow_bg_reserve_treelog(fs, fs->nodesize, bytenr_ret);
	if (ret)
		return ret;
	return push64(&fs->log->allocs, &fs->log->nr_allocs,
		      &fs->log->cap_allocs, *bytenr_ret);
}

static void log_free(void *arg, uint64_t bytenr, uint64_t gen)
{
	struct zcow_fs *fs = arg;
	struct zcow_bg *bg = zcow_bg_lookup(fs, bytenr);

	(void)gen;
	/* Written at an earlier fsync: garbage until the commit drops the
	 * log.  Not written yet: it keeps its place in the zone's sequence
	 * and is written zeroed at the next sync (seed 007's redirty). */
	if (bg && bytenr - bg->start >= bg->meta_wp &&
	    push64(&fs->log->redirty, &fs->log->nr_redirty,
		   &fs->log->cap_redirty, bytenr))
		fs->error = -ENOMEM;
}

static int ro_alloc(void *arg, uint64_t owner, int level, uint64_t *bytenr_ret)
{
	(void)arg;
	(void)owner;
	(void)level;
	(void)bytenr_ret;
	return -EROFS;
}

int zcow_log_init(struct zcow_fs *fs, bool enabled)
{
	struct zcow_log *lg = calloc(1, sizeof(*lg));

	if (!lg)
		return -ENOMEM;
	lg->enabled = enabled;
	lg->store = fs->store;	/* reads as the fs does (arg: @fs) */
	lg->store.alloc = log_alloc;
	lg->store.free = log_free;
	fs->log = lg;
	/* An empty metadata group (mkfs leaves one) becomes the log's now;
	 * none: the first fsync commits and readies one. */
	if (enabled && !fs->read_only)
		zcow_treelog_bg_prepare(fs, LOG_GROUP_ROOM * fs->nodesize,
					false);
	return 0;
}

static void log_release_trees(struct zcow_log *lg)
{
	if (lg->is_active) {
		zcow_tree_release(&lg->tree);
		zcow_tree_release(&lg->root_tree);
	}
	lg->is_active = false;
	lg->synced_root = 0;
	lg->synced_level = 0;
}

void zcow_log_free(struct zcow_fs *fs)
{
	struct zcow_log *lg = fs->log;

	if (!lg)
		return;
	log_release_trees(lg);
	tab_clear(lg);
	free(lg->tab);
	free(lg->allocs);
	free(lg->redirty);
	free(lg);
	fs->log = NULL;
}

void zcow_log_commit_prepare(struct zcow_fs *fs)
{
	/*
	 * zcow's log must not need a chunk the committed chunk tree lacks
	 * (replay could not map it): the log's group is picked, or its chunk
	 * allocated, by the commit before the log is used.  Without room
	 * (ENOSPC) the next fsync falls back to a commit.
	 */
	if (fs->log && fs->log->is_wanted && !fs->read_only)
		zcow_treelog_bg_prepare(fs, LOG_GROUP_ROOM * fs->nodesize,
					true);
}

bool zcow_log_is_wanted(struct zcow_fs *fs)
{
	return fs->log && fs->log->enabled && fs->log->is_wanted;
}

void zcow_log_commit_done(struct zcow_fs *fs)
{
	struct zcow_log *lg = fs->log;
	struct zcow_bg *bg;
	uint64_t i;

	if (!lg)
		return;
	/* ORDER: the commit that dropped the log (log_root = 0) is durable:
	 * the log's nodes are garbage now, unusable until the zone reset. */
	for (i = 0; i < lg->nr_allocs; i++)
		zcow_bg_release(fs, lg->allocs[i], fs->nodesize, true);
	lg->nr_allocs = 0;
	lg->nr_redirty = 0;
	lg->seq = 0;
	lg->is_pending = false;	/* the commit made them durable */
	lg->has_new_data = false;	/* its chunks are committed now */
	log_release_trees(lg);
	tab_clear(lg);
	bg = fs->treelog_bg ? zcow_bg_lookup(fs, fs->treelog_bg) : NULL;
	if (bg && !zcow_bg_has_room(bg, ZCOW_BG_METADATA, fs->nodesize))
		fs->treelog_bg = 0;
}

/* ---- building the log ------------------------------------------------ */

/* Does @logical lie in a block group whose chunk the committed chunk tree
 * lacks (allocated in the running transaction), or in none? */
static bool is_in_new_chunk(struct zcow_fs *fs, uint64_t logical)
{
	struct zcow_bg *bg = zcow_bg_lookup(fs, logical);

	return !bg || bg->is_new;
}

/* Has a chunk of type @flags been allocated in the running transaction? */
static bool has_new_chunk(struct zcow_fs *fs, uint64_t flags)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->is_new && (fs->bgs[i]->flags & flags))
			return true;
	return false;
}

/*
 * Can the log as it is now be replayed by a mount that sees only the
 * committed chunk tree?  Not when a log node (lg->allocs) or a logged
 * file extent (lg->has_new_data) lies in a chunk of the running
 * transaction, nor when a system chunk is new: the log's superblock
 * copies fs->sb, whose sys_chunk_array already holds it, without its
 * block group item.  True, or false with the cause in *why_ret.
 */
static bool is_replayable(struct zcow_fs *fs, enum zcow_log_fallback *why_ret)
{
	struct zcow_log *lg = fs->log;
	uint64_t i;

	*why_ret = ZCOW_LOG_FB_NEW_SYSTEM_CHUNK;
	if (has_new_chunk(fs, ZCOW_BG_SYSTEM))
		return false;
	*why_ret = ZCOW_LOG_FB_NEW_LOG_CHUNK;
	for (i = 0; i < lg->nr_allocs; i++)
		if (is_in_new_chunk(fs, lg->allocs[i]))
			return false;
	*why_ret = ZCOW_LOG_FB_NEW_DATA_CHUNK;
	return !lg->has_new_data;
}

/*
 * Copy the checksum item of the data extent at @bytenr into the log.  It
 * goes from the checksum tree's node straight into the log (one lookup;
 * the insert changes the log tree only).
 */
static int log_csums(struct zcow_fs *fs, uint64_t bytenr)
{
	struct zcow_key k = { ZCOW_CSUM_OBJECTID, ZCOW_EXTENT_CSUM_KEY,
			      bytenr }, found;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	err = zcow_tree_search(&fs->log->tree, &k, NULL, 0, NULL);
	if (!err)
		return 0;
	if (err != -ENOENT)
		return err;
	zcow_tree_iter_init(&it, &fs->csum_tree, &k);
	err = zcow_tree_iter_next(&it, &found, &data, &len);
	if (!err && zcow_key_cmp(&found, &k))
		err = -ENOENT;
	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	return zcow_tree_insert(&fs->log->tree, &k, data, len);
}

/* Every item type (log_keys(), copy_items()). */
#define ALL_TYPES 256u

/* The keys of @tree from @start on while they are @start's inode's, of a
 * type below @type_end and (the last type) of an offset below @off_end
 * (UINT64_MAX: any), in order. */
static int keys_from(struct zcow_tree *tree, const struct zcow_key *start,
		     unsigned int type_end, uint64_t off_end,
		     struct zcow_key **keys_ret, uint64_t *nr_ret)
{
	struct zcow_key k, *v = NULL;
	uint64_t nr = 0, cap = 0;
	struct zcow_tree_iter it;
	int err;

	zcow_tree_iter_init(&it, tree, start);
	while (!(err = zcow_tree_iter_next(&it, &k, NULL, NULL)) &&
	       k.objectid == start->objectid && k.type < type_end &&
	       (k.type + 1u < type_end || off_end == UINT64_MAX ||
		k.offset < off_end)) {
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			free(v);
			return -ENOMEM;
		}
		v[nr++] = k;
	}
	if (err && err != -ENOENT) {
		free(v);
		return err;
	}
	*keys_ret = v;
	*nr_ret = nr;
	return 0;
}

/* The keys of @ino's items of types below @type_end in the log, in
 * order. */
static int log_keys(struct zcow_tree *log, uint64_t ino, unsigned int type_end,
		    struct zcow_key **keys_ret, uint64_t *nr_ret)
{
	struct zcow_key start = { ino, 0, 0 };

	return keys_from(log, &start, type_end, UINT64_MAX, keys_ret, nr_ret);
}

/* Make the log's copy of item @k equal to @data: only a changed item
 * touches (and CoWs) a log leaf. */
static int log_item(struct zcow_tree *log, const struct zcow_key *k,
		    const void *data, uint32_t len, bool is_in_log,
		    uint8_t *scratch, uint32_t scratch_len)
{
	uint32_t size;
	int err;

	if (!is_in_log)
		return zcow_tree_insert(log, k, data, len);
	err = zcow_tree_search(log, k, scratch, scratch_len, &size);
	if (err)
		return err;
	if (size == len && !memcmp(scratch, data, len))
		return 0;
	return zcow_tree_update(log, k, data, len);
}

/* An item a directory's log must hold. */
struct want {
	struct zcow_key key;
	uint8_t *data;
	uint32_t len;
};

static int cmp_want(const void *a, const void *b)
{
	return zcow_key_cmp(&((const struct want *)a)->key,
			    &((const struct want *)b)->key);
}

static int cmp_key(const void *a, const void *b)
{
	return zcow_key_cmp(a, b);
}

static int cmp_dent(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static int push_want(struct want **v, uint64_t *nr, uint64_t *cap,
		     const struct zcow_key *k, const void *data, uint32_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy || ZCOW_GROW_ONE(v, *nr, cap)) {
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, data, len);
	(*v)[(*nr)++] = (struct want){ *k, copy, len };
	return 0;
}

/* Add item @k of the fs tree to @v if it exists. */
static int want_fs_item(struct zcow_fs *fs, struct want **v, uint64_t *nr,
			uint64_t *cap, const struct zcow_key *k, uint8_t *buf)
{
	uint32_t size;
	int err = zcow_tree_search(&fs->fs_tree, k, buf, fs->nodesize, &size);

	if (err == -ENOENT)
		return 0;
	if (!err && size > fs->nodesize)
		err = -EUCLEAN;
	return err ? err : push_want(v, nr, cap, k, buf, size);
}

/*
 * The items directory @ino's log must hold (btrfs's
 * log_directory_changes): its inode item and refs; for every entry
 * (un)linked since the last commit, the DIR_INDEX item if the entry
 * still exists and the DIR_ITEM of its name hash as the fs tree holds
 * it now (every name of that hash); and DIR_LOG_INDEX items whose ranges
 * (key offset .. item) cover exactly those indexes, so that replay
 * removes the committed entries of a range the log does not hold.
 * Sorted by key, unique.
 */
static int dir_wants(struct zcow_fs *fs, uint64_t ino, struct want **v_ret,
		     uint64_t *nr_ret)
{
	struct touch *t = tab_find(fs->log, ino);
	struct zcow_key start = { ino, 0, 0 }, k;
	struct want *v = NULL;
	uint64_t nr = 0, cap = 0, i, j, n;
	struct dent *e = NULL;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	uint8_t *buf = malloc(fs->nodesize), end[DIR_LOG_ITEM_SIZE];
	int err;

	if (!buf)
		return -ENOMEM;
	zcow_tree_iter_init(&it, &fs->fs_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == ino && k.type < ZCOW_DIR_LOG_INDEX_KEY) {
		err = push_want(&v, &nr, &cap, &k, data, len);
		if (err)
			goto out;
	}
	if (err && err != -ENOENT)
		goto out;
	err = 0;
	n = t ? t->nr_ents : 0;
	if (n) {
		e = malloc(n * sizeof(*e));
		if (!e) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(e, t->ents, n * sizeof(*e));
		qsort(e, n, sizeof(*e), cmp_dent);
	}
	for (i = 0; !err && i < n; i++) {
		struct zcow_key ik = { ino, ZCOW_DIR_INDEX_KEY, e[i].index };
		struct zcow_key hk = { ino, ZCOW_DIR_ITEM_KEY, e[i].hash };

		err = want_fs_item(fs, &v, &nr, &cap, &ik, buf);
		if (!err)
			err = want_fs_item(fs, &v, &nr, &cap, &hk, buf);
	}
	/* One range per run of consecutive indexes. */
	for (i = 0; !err && i < n; i = j) {
		struct zcow_key rk = { ino, ZCOW_DIR_LOG_INDEX_KEY,
				       e[i].index };

		for (j = i + 1; j < n && e[j].index <= e[j - 1].index + 1; j++)
			;
		put64(end, e[j - 1].index);
		err = push_want(&v, &nr, &cap, &rk, end, sizeof(end));
	}
	if (err)
		goto out;
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_want);
	for (i = 0, j = 0; i < nr; i++) {
		if (j && !zcow_key_cmp(&v[j - 1].key, &v[i].key)) {
			free(v[i].data);	/* a hash two entries share */
			continue;
		}
		v[j++] = v[i];
	}
	nr = j;
out:
	free(e);
	free(buf);
	if (err) {
		for (i = 0; i < nr; i++)
			free(v[i].data);
		free(v);
		return err;
	}
	*v_ret = v;
	*nr_ret = nr;
	return 0;
}

/* Log directory @ino by its changes since the last commit (dir_wants()):
 * an fsync costs what changed, not the size of the directory. */
static int log_dir(struct zcow_fs *fs, uint64_t ino)
{
	struct zcow_log *lg = fs->log;
	struct zcow_key *keys = NULL;
	struct want *v = NULL;
	uint64_t nr_keys = 0, nr = 0, i;
	uint8_t *scratch = malloc(fs->nodesize);
	int err;

	if (!scratch)
		return -ENOMEM;
	err = dir_wants(fs, ino, &v, &nr);
	if (!err)
		err = log_keys(&lg->tree, ino, ALL_TYPES, &keys,
			       &nr_keys);
	/* What the log holds and the directory no longer needs. */
	for (i = 0; !err && i < nr_keys; i++) {
		struct want w = { keys[i], NULL, 0 };

		if (!nr || !bsearch(&w, v, nr, sizeof(*v), cmp_want))
			err = zcow_tree_delete(&lg->tree, &keys[i]);
	}
	for (i = 0; !err && i < nr; i++)
		err = log_item(&lg->tree, &v[i].key, v[i].data, v[i].len,
			       nr_keys && bsearch(&v[i].key, keys, nr_keys,
						  sizeof(*keys), cmp_key),
			       scratch, fs->nodesize);
	for (i = 0; i < nr; i++)
		free(v[i].data);
	free(v);
	free(keys);
	free(scratch);
	return err;
}

/* Note extent @fe of a logged item: its checksums go into the log when
 * written in this transaction; one in a chunk of the running transaction
 * makes the log unreplayable until the commit (is_replayable()):
 * -EAGAIN, the build stops there (log_add()). */
static int log_fext(struct zcow_fs *fs, const struct zcow_fext *fe)
{
	struct zcow_log *lg = fs->log;

	if (!fe->disk_bytenr)
		return 0;	/* a hole */
	if (lg->may_have_new_data && is_in_new_chunk(fs, fe->disk_bytenr)) {
		lg->has_new_data = true;
		return -EAGAIN;
	}
	if (fe->generation == fs->transid)
		return log_csums(fs, fe->disk_bytenr);
	return 0;
}

/*
 * Make the log's items of @ino with types below @type_end equal to the
 * fs tree's (an inode that no longer exists, @is_gone, loses them): only
 * a changed item touches (and CoWs) a log leaf.  *last_ext_ret: the key
 * of the last file extent item copied (type 0: none).
 */
static int copy_items(struct zcow_fs *fs, uint64_t ino, unsigned int type_end,
		      bool is_gone, struct zcow_key *last_ext_ret)
{
	struct zcow_log *lg = fs->log;
	struct zcow_key start = { ino, 0, 0 }, k, *keys = NULL;
	uint64_t nr_keys = 0, j = 0;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	uint8_t *scratch;
	int err;

	err = log_keys(&lg->tree, ino, type_end, &keys, &nr_keys);
	if (err)
		return err;
	scratch = malloc(fs->nodesize);
	if (!scratch) {
		free(keys);
		return -ENOMEM;
	}
	if (is_gone)
		goto rest;
	zcow_tree_iter_init(&it, &fs->fs_tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == ino && k.type < type_end) {
		bool is_in_log;

		while (j < nr_keys && zcow_key_cmp(&keys[j], &k) < 0) {
			err = zcow_tree_delete(&lg->tree, &keys[j++]);
			if (err)
				goto out;
		}
		is_in_log = j < nr_keys && !zcow_key_cmp(&keys[j], &k);
		if (is_in_log)
			j++;
		if (k.type == ZCOW_EXTENT_DATA_KEY &&
		    !zcow_fext_is_inline(data, len)) {
			struct zcow_fext fe;

			err = zcow_fext_decode(data, len, k.offset, &fe);
			if (!err)
				err = log_fext(fs, &fe);
			if (err)
				goto out;
			*last_ext_ret = k;
		}
		/* (The fs tree does not change here: @data stays valid.) */
		err = log_item(&lg->tree, &k, data, len, is_in_log, scratch,
			       fs->nodesize);
		if (err)
			goto out;
	}
	if (err && err != -ENOENT)
		goto out;
rest:
	err = 0;
	for (; j < nr_keys && !err; j++)
		err = zcow_tree_delete(&lg->tree, &keys[j]);
out:
	free(scratch);
	free(keys);
	return err;
}

/*
 * Widen [*s, *e) to cover whole every file extent item of @ino in @tree
 * that overlaps it; *grew_ret set when it grew.
 */
static int widen(struct zcow_tree *tree, uint64_t ino, uint64_t *s,
		 uint64_t *e, bool *grew_ret)
{
	struct zcow_fext *v = NULL;
	uint64_t nr = 0, i;
	int err = zcow_collect_extents_locked(tree, ino, *s, *e, &v, &nr);

	for (i = 0; !err && i < nr; i++) {
		if (v[i].file_off < *s) {
			*s = v[i].file_off;
			*grew_ret = true;
		}
		if (v[i].file_off + v[i].num_bytes > *e) {
			*e = v[i].file_off + v[i].num_bytes;
			*grew_ret = true;
		}
	}
	free(v);
	return err;
}

/* The keys of @ino's file extent items in @tree with offsets in [s, e). */
static int ext_keys(struct zcow_tree *tree, uint64_t ino, uint64_t s,
		    uint64_t e, struct zcow_key **keys_ret, uint64_t *nr_ret)
{
	struct zcow_key start = { ino, ZCOW_EXTENT_DATA_KEY, s };

	return keys_from(tree, &start, ZCOW_EXTENT_DATA_KEY + 1u, e, keys_ret,
			 nr_ret);
}

/*
 * Make the log's file extent items of @ino in range [s, e) equal to the
 * fs tree's: the range is widened until no item of either tree crosses
 * its ends, so the items it ends up holding in the log tile exactly what
 * the file holds there now (replay drops the fs tree's extents under
 * each logged item, then inserts it).  *last_ext_ret: the last item put.
 */
static int log_range(struct zcow_fs *fs, uint64_t ino, uint64_t s,
		     uint64_t e, struct zcow_key *last_ext_ret)
{
	struct zcow_log *lg = fs->log;
	struct zcow_key *keys = NULL, k;
	struct zcow_tree_iter it;
	uint64_t nr = 0, i;
	const void *data;
	uint32_t len;
	bool grew = true;
	int err = 0;

	while (!err && grew) {
		grew = false;
		err = widen(&lg->tree, ino, &s, &e, &grew);
		if (!err)
			err = widen(&fs->fs_tree, ino, &s, &e, &grew);
	}
	if (!err)
		err = ext_keys(&lg->tree, ino, s, e, &keys, &nr);
	for (i = 0; !err && i < nr; i++)
		err = zcow_tree_delete(&lg->tree, &keys[i]);
	free(keys);
	k = (struct zcow_key){ ino, ZCOW_EXTENT_DATA_KEY, s };
	zcow_tree_iter_init(&it, &fs->fs_tree, &k);
	while (!err && !(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == ino && k.type == ZCOW_EXTENT_DATA_KEY &&
	       k.offset < e) {
		struct zcow_fext fe;

		err = zcow_fext_decode(data, len, k.offset, &fe);
		if (!err)
			err = log_fext(fs, &fe);
		/* (The fs tree does not change here: @data stays valid.) */
		if (!err)
			err = zcow_tree_insert(&lg->tree, &k, data, len);
		if (!err)
			*last_ext_ret = k;
	}
	return err == -ENOENT ? 0 : err;
}

static int cmp_frange(const void *a, const void *b)
{
	const struct frange *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Does @tree hold an inline file extent of @ino (at offset 0)? */
static int has_inline(struct zcow_tree *tree, uint64_t ino, bool *is_ret)
{
	struct zcow_key k = { ino, ZCOW_EXTENT_DATA_KEY, 0 };
	uint8_t *item;
	uint32_t size;
	int err;

	*is_ret = false;
	err = zcow_tree_search(tree, &k, NULL, 0, &size);
	if (err)
		return err == -ENOENT ? 0 : err;
	item = malloc(size ? size : 1);
	if (!item)
		return -ENOMEM;
	err = zcow_tree_search(tree, &k, item, size, NULL);
	if (!err)
		*is_ret = zcow_fext_is_inline(item, size);
	free(item);
	return err;
}

/* Is item @k in @tree? */
static int has_item(struct zcow_tree *tree, const struct zcow_key *k,
		    bool *is_ret)
{
	int err = zcow_tree_search(tree, k, NULL, 0, NULL);

	*is_ret = !err;
	return err == -ENOENT ? 0 : err;
}

/*
 * Log regular file @ino by its changes (t's ranges, none when @t is
 * NULL): its other items as they are, the file extent items of the
 * ranges written since it was last logged.  The first time in a
 * transaction, a ZCOW_EXTENT_LOG_KEY item tells replay that the log holds
 * only the extents of those ranges; a file logged whole earlier in the
 * transaction (no such item) stays whole: the ranges keep its extent
 * items equal to the file's.
 */
static int log_file_ranges(struct zcow_fs *fs, uint64_t ino,
			   struct touch *t, struct zcow_key *last_ext_ret)
{
	struct zcow_log *lg = fs->log;
	struct zcow_key ik = { ino, ZCOW_INODE_ITEM_KEY, 0 };
	struct zcow_key mk = { ino, ZCOW_EXTENT_LOG_KEY, 0 };
	uint64_t i, s, e, zero = 0;
	bool had_inode, had_mark;
	int err;

	err = has_item(&lg->tree, &ik, &had_inode);
	if (!err)
		err = has_item(&lg->tree, &mk, &had_mark);
	if (!err)
		err = copy_items(fs, ino, ZCOW_EXTENT_DATA_KEY, false,
				 last_ext_ret);
	if (err)
		return err;
	if (t && t->nr_rngs) {
		qsort(t->rngs, t->nr_rngs, sizeof(*t->rngs), cmp_frange);
		i = 0;
		while (!err && i < t->nr_rngs) {
			s = t->rngs[i].start;
			e = t->rngs[i].end;
			/* (overlapping or touching ranges go as one) */
			for (i++; i < t->nr_rngs && t->rngs[i].start <= e; i++)
				if (t->rngs[i].end > e)
					e = t->rngs[i].end;
			err = log_range(fs, ino, s, e, last_ext_ret);
		}
	}
	if (!err && !had_inode && !had_mark)
		err = zcow_tree_insert(&lg->tree, &mk, &zero, sizeof(zero));
	return err;
}

/*
 * Log inode @ino as it is now: the log's items of @ino become the fs
 * tree's (an inode that no longer exists loses its items; its
 * directories carry the unlink); a directory by its changes (log_dir());
 * a regular file whose extents changed only by data writes by those
 * (log_file_ranges()).
 */
static int log_inode(struct zcow_fs *fs, uint64_t ino, uint64_t fsynced)
{
	struct zcow_log *lg = fs->log;
	struct zcow_key last_ext = { 0, 0, 0 };
	struct touch *t = tab_find(lg, ino);
	struct zcow_inode in;
	bool is_gone, is_inline = false, is_log_inline = false;
	int err;

	err = zcow_inode_get(&fs->fs_tree, ino, &in);
	if (err && err != -ENOENT)
		return err;
	is_gone = err == -ENOENT;	/* deleted: drop what the log holds */
	if (!is_gone && S_ISDIR(in.mode))
		return log_dir(fs, ino);
	if (!is_gone && S_ISREG(in.mode) && !(t && t->is_full)) {
		err = has_inline(&fs->fs_tree, ino, &is_inline);
		if (!err)
			err = has_inline(&lg->tree, ino, &is_log_inline);
		if (err)
			return err;
	}
	if (!is_gone && S_ISREG(in.mode) && !(t && t->is_full) &&
	    !is_inline && !is_log_inline)
		err = log_file_ranges(fs, ino, t, &last_ext);
	else
		err = copy_items(fs, ino, ALL_TYPES, is_gone, &last_ext);
	if (err)
		return err;
	if (t) {
		t->is_full = false;
		t->nr_rngs = 0;
	}
	/* Test-only mutation (docs/crash.md): lose the fsynced file's last
	 * extent item. */
	if (fs->mutation == ZCOW_MUT_LOG_DROP_ITEM && ino == fsynced &&
	    last_ext.type == ZCOW_EXTENT_DATA_KEY)
		err = zcow_tree_delete(&lg->tree, &last_ext);
	return err;
}

static int log_start(struct zcow_fs *fs)
{
	struct zcow_log *lg = fs->log;
	int err;

	if (lg->is_active)
		return 0;
	err = zcow_tree_init(&lg->tree, &lg->store, ZCOW_TREE_LOG_OBJECTID,
			     ZCOW_NO_ROOT, 0, fs->generation);
	if (err)
		return err;
	err = zcow_tree_init(&lg->root_tree, &lg->store,
			     ZCOW_TREE_LOG_OBJECTID, ZCOW_NO_ROOT, 0,
			     fs->generation);
	if (err) {
		zcow_tree_release(&lg->tree);
		return err;
	}
	lg->is_active = true;
	err = zcow_tree_create_root(&lg->tree);
	if (!err)
		err = zcow_tree_create_root(&lg->root_tree);
	return err;
}

/* The inodes to log with those of @start (see the header comment), in
 * *set_ret. */
static int closure(struct zcow_log *lg, const uint64_t *start,
		   uint64_t nr_start, uint64_t **set_ret, uint64_t *nr_ret)
{
	uint64_t *queue = NULL, nq = 0, cq = 0, *set = NULL, ns = 0, cs = 0;
	uint64_t i;
	int err = 0;

	lg->epoch++;
	for (i = 0; !err && i < nr_start; i++)
		err = push64(&queue, &nq, &cq, start[i]);
	while (!err && nq) {
		struct touch *t = tab_find(lg, queue[--nq]);

		if (!t || t->mark == lg->epoch)
			continue;
		t->mark = lg->epoch;
		if (t->logged == t->change)
			continue;	/* in the log as it is */
		if (ns >= LOG_MAX_INODES) {
			err = -E2BIG;
			break;
		}
		err = push64(&set, &ns, &cs, t->ino);
		for (i = 0; !err && i < t->nr_dirs; i++)
			err = push64(&queue, &nq, &cq, t->dirs[i]);
		for (i = 0; !err && i < t->nr_kids; i++)
			err = push64(&queue, &nq, &cq, t->kids[i]);
	}
	free(queue);
	if (err) {
		free(set);
		return err;
	}
	*set_ret = set;
	*nr_ret = ns;
	return 0;
}

struct wlist {
	struct zcow_wnode *v;
	uint64_t nr, cap;
	uint32_t nodesize;
};

static int collect(void *arg, uint64_t bytenr, const void *buf)
{
	struct wlist *wl = arg;
	struct zcow_wnode *w;

	if (ZCOW_GROW_ONE(&wl->v, wl->nr, &wl->cap))
		return -ENOMEM;
	w = &wl->v[wl->nr];
	w->bytenr = bytenr;
	w->buf = NULL;
	if (buf) {
		w->buf = malloc(wl->nodesize);
		if (!w->buf)
			return -ENOMEM;
		memcpy(w->buf, buf, wl->nodesize);
	}
	wl->nr++;
	return 0;
}

/* Write the log's dirty nodes (and those freed before written, zeroed)
 * in address order at the meta write pointer of the tree-log group. */
static int write_log_nodes(struct zcow_fs *fs)
{
	struct zcow_log *lg = fs->log;
	struct wlist wl = { .nodesize = fs->nodesize };
	uint64_t i;
	int err;

	err = zcow_tree_for_each_dirty(&lg->tree, collect, &wl);
	if (!err)
		err = zcow_tree_for_each_dirty(&lg->root_tree, collect, &wl);
	for (i = 0; !err && i < lg->nr_redirty; i++)
		err = collect(&wl, lg->redirty[i], NULL);
	/* (Only log nodes live in the groups they were allocated from, the
	 * current tree-log group or one it replaced: zcow check verifies.) */
	if (!err)
		err = zcow_write_node_list(fs, wl.v, wl.nr);
	if (!err)
		lg->nr_redirty = 0;
	for (i = 0; i < wl.nr; i++)
		free(wl.v[i].buf);
	free(wl.v);
	return err;
}

/*
 * Put the inodes of @set into the log tree (memory only): 0, -EAGAIN
 * with *why_ret when the log is not replayable (is_replayable()), or a
 * tree errno.  A log that refers to data in a chunk of the running
 * transaction is written by no fsync until the commit drops it, so its
 * build stops at the first such extent (log_fext()), and none starts
 * while the log holds one: the fsync commits, with the log's items in
 * memory only, as when a build fails.
 */
static int log_add(struct zcow_fs *fs, const uint64_t *set, uint64_t nr,
		   uint64_t ino, enum zcow_log_fallback *why_ret)
{
	struct zcow_log *lg = fs->log;
	struct zcow_key rk = { ZCOW_TREE_LOG_OBJECTID, ZCOW_ROOT_ITEM_KEY,
			       ZCOW_FS_TREE_OBJECTID };
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	uint64_t i;
	int err;

	if (lg->has_new_data) {
		is_replayable(fs, why_ret);
		return -EAGAIN;
	}
	/* Only then can a logged extent lie in a new chunk (log_inode()). */
	lg->may_have_new_data = has_new_chunk(fs, ZCOW_BG_DATA);
	err = log_start(fs);
	for (i = 0; !err && i < nr; i++)
		err = log_inode(fs, set[i], ino);
	if (err == -EAGAIN && lg->has_new_data) {
		is_replayable(fs, why_ret);
		return -EAGAIN;
	}
	if (!err) {
		zcow_root_item_encode(item, &lg->tree, fs->nodesize);
		err = zcow_tree_put(&lg->root_tree, &rk, item, sizeof(item));
	}
	if (err)
		return err;
	/* The items stay in the log tree: while lg->has_new_data, no log
	 * write happens until the commit drops the log. */
	if (!is_replayable(fs, why_ret))
		return -EAGAIN;
	for (i = 0; i < nr; i++) {
		struct touch *t = tab_find(lg, set[i]);

		if (t)
			t->logged = t->change;
	}
	lg->is_pending = true;
	return 0;
}

/* Write the log (every inode added since the last sync) and the
 * superblock that points at it. */
static int log_write(struct zcow_fs *fs)
{
	struct zcow_log *lg = fs->log;
	struct zcow_super_block *sb;
	uint64_t bytenr, gen;
	int level, err;

	/*
	 * ORDER: the log's nodes are written (sequentially in the tree-log
	 * group) before the superblock that points at them; the flush in
	 * zcow_sb_write_all() makes them, and the file's data (its appends
	 * completed), durable before that superblock is written with FUA.
	 */
	err = write_log_nodes(fs);
	if (err && err != -ENOMEM && !fs->error) {
		/*
		 * A log node was refused (nothing points at the log yet): a
		 * full commit makes the fsync durable instead and drops the
		 * log; the log's group takes its offset from the device's
		 * write pointer at its next reservation (zcow_bg_sync_wp).
		 */
		zlog_warn(TAG, "writing the log failed: %d: full commit instead",
			  err);
		lg->nr_fallbacks++;
		return zcow_files_commit_locked(fs);
	}
	if (err)
		goto fail;
	sb = malloc(sizeof(*sb));
	if (!sb) {
		err = -ENOMEM;
		goto fail;
	}
	*sb = fs->sb;
	zcow_tree_root(&lg->root_tree, &bytenr, &level, &gen);
	sb->generation = htole64(fs->generation);
	sb->log_root = htole64(bytenr);
	sb->log_root_level = (uint8_t)level;
	sb->log_root_transid = htole64(lg->seq + 1);
	sb->flags |= htole64(ZCOW_SUPER_FLAG_WRITTEN);
	err = zcow_fs_write_super(fs, sb);
	free(sb);
	if (err)
		goto fail;
	lg->seq++;
	lg->synced_root = bytenr;
	lg->synced_level = level;
	zcow_tree_mark_clean(&lg->tree);
	zcow_tree_mark_clean(&lg->root_tree);
	lg->is_pending = false;
	lg->nr_log_syncs++;
	return 0;
fail:
	zlog_err(TAG, "writing the log failed: %d", err);
	fs->error = err;
	return err;
}

/* The directories above directory @cur (itself included) that were
 * linked or unlinked since the last commit and are not in the log as
 * they are, appended to *start. */
static int dirs_above(struct zcow_fs *fs, uint64_t cur, uint64_t **start,
		      uint64_t *nr, uint64_t *cap)
{
	struct zcow_log *lg = fs->log;
	int depth, err = 0;

	for (depth = 0; depth < 4096; depth++) {
		struct zcow_key k = { cur, ZCOW_INODE_REF_KEY, 0 }, f;
		struct zcow_tree_iter it;
		struct touch *t = tab_find(lg, cur);

		if (t && t->nr_dirs && t->logged != t->change) {
			err = push64(start, nr, cap, cur);
			if (err)
				return err;
		}
		if (cur == ZCOW_ROOT_DIR_INO)
			return 0;
		/* A directory has one name: its first INODE_REF. */
		zcow_tree_iter_init(&it, &fs->fs_tree, &k);
		err = zcow_tree_iter_next(&it, &f, NULL, NULL);
		if (err == -ENOENT || (!err && (f.objectid != cur ||
						f.type != ZCOW_INODE_REF_KEY)))
			return 0;	/* deleted, or no parent */
		if (err)
			return err;
		cur = f.offset;
	}
	return 0;
}

/*
 * @ino and every directory above each of its parents (a file with hard
 * links has several) that was linked or unlinked (renamed) since the
 * last commit and is not in the log as it is: the inodes whose state
 * makes @ino's paths.  In *start (start[0] = @ino, always).
 */
static int path_starts(struct zcow_fs *fs, uint64_t ino, uint64_t **start,
		       uint64_t *nr)
{
	struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, 0 }, f;
	struct zcow_tree_iter it;
	uint64_t cap = 0, *parents = NULL, nr_parents = 0, cap_parents = 0;
	uint64_t i;
	int err;

	*start = NULL;
	*nr = 0;
	err = push64(start, nr, &cap, ino);
	if (!err && ino != ZCOW_ROOT_DIR_INO) {
		zcow_tree_iter_init(&it, &fs->fs_tree, &k);
		while (!(err = zcow_tree_iter_next(&it, &f, NULL, NULL)) &&
		       f.objectid == ino && f.type == ZCOW_INODE_REF_KEY) {
			err = push64(&parents, &nr_parents, &cap_parents,
				     f.offset);
			if (err)
				break;
		}
		if (err == -ENOENT || !err)
			err = 0;
	}
	for (i = 0; !err && i < nr_parents; i++)
		err = dirs_above(fs, parents[i], start, nr, &cap);
	free(parents);
	if (err) {
		free(*start);
		*start = NULL;
	}
	return err;
}

/* Not a fallback cause: treelog=off commits at every fsync (uncounted). */
#define FB_TREELOG_OFF ZCOW_LOG_NR_FALLBACKS

static const char *const fallback_names[ZCOW_LOG_NR_FALLBACKS] = {
	[ZCOW_LOG_FB_NO_LOG_GROUP] = "no_log_group",
	[ZCOW_LOG_FB_NEW_DATA_CHUNK] = "new_data_chunk",
	[ZCOW_LOG_FB_NEW_LOG_CHUNK] = "new_log_chunk",
	[ZCOW_LOG_FB_NEW_SYSTEM_CHUNK] = "new_system_chunk",
	[ZCOW_LOG_FB_TOO_MANY_INODES] = "too_many_inodes",
	[ZCOW_LOG_FB_NOT_RECORDED] = "not_recorded",
	[ZCOW_LOG_FB_BUILD_ERROR] = "build_error",
};

const char *zcow_log_fallback_name(int i)
{
	return i >= 0 && i < ZCOW_LOG_NR_FALLBACKS ? fallback_names[i] : NULL;
}

/* Whether @ino (and the path to it) needs logging: 1 yes, with its
 * path's start inodes in *start; 0 durable already; -EAGAIN with *why_ret
 * when only a commit can make it durable; -errno.  Whether the log it
 * makes can be replayed is log_add()'s to say. */
static int log_needed(struct zcow_fs *fs, uint64_t ino, uint64_t **start,
		      uint64_t *nr_start, enum zcow_log_fallback *why_ret)
{
	struct zcow_log *lg = fs->log;
	struct touch *t = tab_find(lg, ino);
	int err;

	err = path_starts(fs, ino, start, nr_start);
	if (err)
		return err;
	/* Unchanged since the last commit, on a path unchanged since:
	 * durable already (btrfs skips such an fsync too, in both modes). */
	if (!t && *nr_start == 1 && !lg->is_overflow)
		return 0;
	*why_ret = FB_TREELOG_OFF;
	if (!lg->enabled)
		return -EAGAIN;
	lg->is_wanted = true;
	*why_ret = ZCOW_LOG_FB_NOT_RECORDED;
	if (lg->is_overflow)
		return -EAGAIN;
	if ((!t || t->logged == t->change) && *nr_start == 1)
		return 0;	/* logged as it is */
	*why_ret = ZCOW_LOG_FB_NO_LOG_GROUP;
	if (!fs->treelog_bg)
		return -EAGAIN;
	return 1;
}

/*
 * Log @ino (memory only): 1 added (a log write is pending), 0 nothing to
 * log (committed or logged as it is), -EAGAIN with *why_ret when only a
 * full commit can make it durable, or another -errno.
 */
static int log_prepare(struct zcow_fs *fs, uint64_t ino,
		       enum zcow_log_fallback *why_ret)
{
	uint64_t *set = NULL, nr = 0, *start = NULL, nr_start = 0;
	int err;

	err = log_needed(fs, ino, &start, &nr_start, why_ret);
	if (err > 0)
		err = closure(fs->log, start, nr_start, &set, &nr);
	else
		nr_start = 0;	/* nothing to log, or a commit */
	free(start);
	if (err == -E2BIG) {
		*why_ret = ZCOW_LOG_FB_TOO_MANY_INODES;
		return -EAGAIN;
	}
	if (err || !nr_start)
		return err;
	err = log_add(fs, set, nr, ino, why_ret);
	free(set);
	if (!err)
		return 1;
	if (fs->error)
		return err;
	if (err != -EAGAIN)
		*why_ret = ZCOW_LOG_FB_BUILD_ERROR;
	return -EAGAIN;
}

int zcow_log_fsync_locked(struct zcow_fs *fs, uint64_t ino)
{
	struct zcow_log *lg = fs->log;
	enum zcow_log_fallback why = FB_TREELOG_OFF;
	int err;

	if (fs->error)
		return -EIO;
	lg->nr_fsyncs++;
	err = log_prepare(fs, ino, &why);
	/*
	 * Nothing of @ino to add, but inodes joined before (is_pending): a
	 * join refused since may have left items in the log that replay
	 * could not map, or a build that stopped part way (log_add()); such
	 * a log is not written, the commit makes them durable.
	 */
	if (!err && lg->is_pending && !is_replayable(fs, &why))
		err = -EAGAIN;
	if (err == -EAGAIN) {
		if (lg->enabled && why < ZCOW_LOG_NR_FALLBACKS) {
			lg->nr_fallbacks++;
			lg->nr_fallbacks_by[why]++;
			zlog(ZLOG_DEBUG, TAG, "inode %" PRIu64 ": full commit: %s",
			     ino, fallback_names[why]);
		}
		return zcow_files_commit_locked(fs);
	}
	if (err < 0)
		return err;
	/* Inodes other fsyncs added (zcow_log_join_locked()) go too. */
	return lg->is_pending ? log_write(fs) : 0;
}

int zcow_log_join_locked(struct zcow_fs *fs, uint64_t ino)
{
	struct zcow_log *lg = fs->log;
	enum zcow_log_fallback why = FB_TREELOG_OFF;
	int err;

	if (fs->error)
		return -EIO;
	err = log_prepare(fs, ino, &why);
	if (err >= 0)
		lg->nr_fsyncs++;
	return err;
}

void zcow_log_stats(struct zcow_fs *fs, uint64_t *fsyncs, uint64_t *syncs,
		    uint64_t *fallbacks, uint64_t *fallbacks_by,
		    uint64_t *replayed, bool *is_lost)
{
	struct zcow_log *lg = fs->log;
	int i;

	for (i = 0; i < ZCOW_LOG_NR_FALLBACKS; i++)
		fallbacks_by[i] = lg ? lg->nr_fallbacks_by[i] : 0;

	*fsyncs = lg ? lg->nr_fsyncs : 0;
	*syncs = lg ? lg->nr_log_syncs : 0;
	*fallbacks = lg ? lg->nr_fallbacks : 0;
	*replayed = lg ? lg->nr_replayed : 0;
	*is_lost = lg && lg->is_lost;
}

bool zcow_log_root(struct zcow_fs *fs, uint64_t *bytenr_ret, int *level_ret)
{
	struct zcow_log *lg = fs->log;

	if (lg && lg->synced_root) {
		*bytenr_ret = lg->synced_root;
		*level_ret = lg->synced_level;
		return true;
	}
	*bytenr_ret = le64toh(fs->sb.log_root);
	*level_ret = fs->sb.log_root_level;
	return *bytenr_ret != 0;
}

/* ---- replay ----------------------------------------------------------- */

struct replay {
	struct zcow_fs *fs;
	struct zcow_node_store store;	/* read-only */
	struct zcow_tree root_tree;
	struct zcow_tree tree;
	uint64_t *logged;		/* inodes with an inode item, sorted */
	uint64_t nr_logged, cap_logged;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_logged(const struct replay *rp, uint64_t ino)
{
	return bsearch(&ino, rp->logged, rp->nr_logged, sizeof(ino),
		       cmp_u64) != NULL;
}

/* Read and verify every node below @bytenr; claim its space. */
static int verify_nodes(struct replay *rp, uint64_t bytenr, int level,
			uint8_t *buf)
{
	struct zcow_fs *fs = rp->fs;
	uint32_t nr, i;
	int err;

	if (level < 0 || level >= ZCOW_MAX_LEVEL)
		return -EUCLEAN;
	err = fs->store.read(fs->store.arg, bytenr, buf);
	if (err)
		return err;
	err = zcow_node_verify(&fs->store, buf, bytenr, ZCOW_TREE_LOG_OBJECTID,
			       level, fs->generation + 1);
	if (err)
		return err;
	zcow_bg_claim_written(fs, bytenr, fs->nodesize);
	if (!level)
		return 0;
	nr = get32(buf + 0x60);
	for (i = 0; i < nr; i++) {
		const uint8_t *p = buf + 101 + i * 33u;
		uint8_t *child = malloc(fs->nodesize);

		if (!child)
			return -ENOMEM;
		err = verify_nodes(rp, get64(p + 17), level - 1, child);
		free(child);
		if (err)
			return err;
	}
	return 0;
}

/* Open the log, verify all of it, list the logged inodes. */
static int replay_open(struct replay *rp)
{
	struct zcow_fs *fs = rp->fs;
	struct zcow_key rk = { ZCOW_TREE_LOG_OBJECTID, ZCOW_ROOT_ITEM_KEY,
			       ZCOW_FS_TREE_OBJECTID };
	struct zcow_key start = { 0, 0, 0 }, k;
	struct zcow_tree_iter it;
	uint8_t item[ZCOW_ROOT_ITEM_SIZE], *buf;
	const void *data;
	uint32_t size, len;
	int err;

	rp->store = fs->store;
	rp->store.alloc = ro_alloc;
	rp->store.free = NULL;
	buf = malloc(fs->nodesize);
	if (!buf)
		return -ENOMEM;
	err = verify_nodes(rp, le64toh(fs->sb.log_root), fs->sb.log_root_level,
			   buf);
	if (!err)
		err = zcow_tree_init(&rp->root_tree, &rp->store,
				     ZCOW_TREE_LOG_OBJECTID,
				     le64toh(fs->sb.log_root),
				     fs->sb.log_root_level,
				     fs->generation + 1);
	if (!err)
		err = zcow_tree_search(&rp->root_tree, &rk, item, sizeof(item),
				       &size);
	if (!err && size != ZCOW_ROOT_ITEM_SIZE)
		err = -EUCLEAN;
	if (!err && !get64(item + 176))
		err = -EUCLEAN;
	if (!err)
		err = verify_nodes(rp, get64(item + 176), item[238], buf);
	if (!err)
		err = zcow_tree_init(&rp->tree, &rp->store,
				     ZCOW_TREE_LOG_OBJECTID, get64(item + 176),
				     item[238], get64(item + 160));
	free(buf);
	if (err)
		return err == -ENOENT ? -EUCLEAN : err;
	zcow_tree_iter_init(&it, &rp->tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		switch (k.type) {
		case ZCOW_INODE_ITEM_KEY:
			if (len < ZCOW_INODE_ITEM_SIZE)
				return -EUCLEAN;
			err = push64(&rp->logged, &rp->nr_logged,
				     &rp->cap_logged, k.objectid);
			break;
		case ZCOW_EXTENT_DATA_KEY: {
			struct zcow_fext fe;

			if (zcow_fext_is_inline(data, len))
				break;	/* a symlink's: no data extent */
			err = zcow_fext_decode(data, len, k.offset, &fe);
			if (err)
				return err;
			if (fe.disk_bytenr)
				zcow_bg_claim_written(fs, fe.disk_bytenr,
						      fe.disk_num_bytes);
			break;
		}
		case ZCOW_INODE_REF_KEY:
		case ZCOW_XATTR_ITEM_KEY:
		case ZCOW_DIR_ITEM_KEY:
		case ZCOW_DIR_INDEX_KEY:
		case ZCOW_DIR_LOG_INDEX_KEY:
		case ZCOW_EXTENT_LOG_KEY:
		case ZCOW_EXTENT_CSUM_KEY:
			break;
		default:
			zlog_err(TAG, "log item (%" PRIu64 " %u %" PRIu64 "): unknown type",
				 k.objectid, k.type, k.offset);
			return -EUCLEAN;
		}
		if (err)
			return err;
	}
	if (err != -ENOENT)
		return err;
	qsort(rp->logged, rp->nr_logged, sizeof(*rp->logged), cmp_u64);
	return 0;
}

struct old_item {
	struct zcow_key key;
	struct zcow_fext fe;	/* EXTENT_DATA only */
};

/* The items of @ino in the fs tree. */
static int collect_items(struct zcow_tree *tree, uint64_t ino,
			 struct old_item **v_ret, uint64_t *nr_ret)
{
	struct zcow_key start = { ino, 0, 0 }, k;
	struct old_item *v = NULL;
	uint64_t nr = 0, cap = 0;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == ino) {
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			free(v);
			return -ENOMEM;
		}
		memset(&v[nr], 0, sizeof(v[nr]));
		v[nr].key = k;
		if (k.type == ZCOW_EXTENT_DATA_KEY &&
		    !zcow_fext_is_inline(data, len)) {
			err = zcow_fext_decode(data, len, k.offset,
					       &v[nr].fe);
			if (err) {
				free(v);
				return err;
			}
		}
		nr++;
	}
	if (err && err != -ENOENT) {
		free(v);
		return err;
	}
	*v_ret = v;
	*nr_ret = nr;
	return 0;
}

/* Delete the items @v from the fs tree (references: drop_refs()). */
static int delete_items(struct zcow_fs *fs, const struct old_item *v,
			uint64_t nr)
{
	uint64_t i;
	int err;

	for (i = 0; i < nr; i++) {
		err = zcow_tree_delete(&fs->fs_tree, &v[i].key);
		if (err)
			return err;
	}
	return 0;
}

static int drop_refs(struct zcow_fs *fs, uint64_t ino,
		     const struct old_item *v, uint64_t nr)
{
	uint64_t i;
	int err;

	for (i = 0; i < nr; i++) {
		const struct zcow_fext *fe = &v[i].fe;

		if (v[i].key.type != ZCOW_EXTENT_DATA_KEY || !fe->disk_bytenr)
			continue;
		err = zcow_data_ref_locked(fs, fe->disk_bytenr,
					   fe->disk_num_bytes, -1,
					   ZCOW_FS_TREE_OBJECTID, ino,
					   fe->file_off - fe->offset);
		if (err)
			return err;
	}
	return 0;
}

/* A logged file extent is referenced again: +1, or a new extent item
 * with the log's checksums. */
static int replay_extent_ref(struct replay *rp, uint64_t ino,
			     const struct zcow_fext *fe)
{
	struct zcow_fs *fs = rp->fs;
	struct zcow_key ek = { fe->disk_bytenr, ZCOW_EXTENT_ITEM_KEY,
			       fe->disk_num_bytes };
	struct zcow_key ck = { ZCOW_CSUM_OBJECTID, ZCOW_EXTENT_CSUM_KEY,
			       fe->disk_bytenr };
	uint8_t *csums;
	uint32_t size;
	int err;

	err = zcow_tree_search(&fs->extent_tree, &ek, NULL, 0, NULL);
	if (!err)
		return zcow_data_ref_locked(fs, fe->disk_bytenr,
					    fe->disk_num_bytes, +1,
					    ZCOW_FS_TREE_OBJECTID, ino,
					    fe->file_off - fe->offset);
	if (err != -ENOENT)
		return err;
	err = zcow_tree_search(&rp->tree, &ck, NULL, 0, &size);
	if (err || size != fe->disk_num_bytes / ZCOW_SECTORSIZE * 4) {
		zlog_err(TAG, "log: extent %" PRIu64 " of inode %" PRIu64 " has no checksums",
			 fe->disk_bytenr, ino);
		return -EUCLEAN;
	}
	csums = malloc(size);
	if (!csums)
		return -ENOMEM;
	err = zcow_tree_search(&rp->tree, &ck, csums, size, NULL);
	if (!err)
		err = zcow_data_extent_insert_locked(
			fs, fe->disk_bytenr, fe->disk_num_bytes,
			(const uint32_t *)csums, ZCOW_FS_TREE_OBJECTID, ino,
			fe->file_off - fe->offset);
	free(csums);
	if (!err)
		zcow_bg_unusable_to_used(fs, fe->disk_bytenr,
					 fe->disk_num_bytes);
	return err;
}

/*
 * Of a logged directory's items in the fs tree (@v, *nr), keep those the
 * log replaces: the inode item and refs, the DIR_ITEMs the log holds,
 * the DIR_INDEX items in the ranges @r (pairs first, last).
 */
static int dir_replaced(struct replay *rp, struct old_item *v, uint64_t *nr,
			const uint64_t *r, uint64_t nr_r)
{
	uint64_t i, j, n = 0;
	int err;

	for (i = 0; i < *nr; i++) {
		const struct zcow_key *k = &v[i].key;
		bool keep = k->type < ZCOW_DIR_LOG_INDEX_KEY;

		if (k->type == ZCOW_DIR_ITEM_KEY) {
			err = zcow_tree_search(&rp->tree, k, NULL, 0, NULL);
			if (err && err != -ENOENT)
				return err;
			keep = !err;
		} else if (k->type == ZCOW_DIR_INDEX_KEY) {
			for (j = 0; j < nr_r && !keep; j++)
				keep = k->offset >= r[2 * j] &&
				       k->offset <= r[2 * j + 1];
		}
		if (keep)
			v[n++] = v[i];
	}
	*nr = n;
	return 0;
}

/* A file extent item of the log (replay_ranges()). */
struct log_ext {
	struct zcow_key key;
	struct zcow_fext fe;
	uint8_t *data;
	uint32_t len;
};

/*
 * The file extent items of a file logged by its changes
 * (ZCOW_EXTENT_LOG_KEY), as btrfs replays a logged extent: each replaces
 * what the fs tree holds under its file range.  The logged extents are
 * referenced first, so that an extent both hold stays; then the fs
 * tree's extents under each item are dropped (split at the ends as a
 * write splits them) and the item inserted.
 */
static int replay_ranges(struct replay *rp, uint64_t ino)
{
	struct zcow_fs *fs = rp->fs;
	struct zcow_key start = { ino, ZCOW_EXTENT_DATA_KEY, 0 }, k;
	struct log_ext *v = NULL;
	uint64_t nr = 0, cap = 0, i;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, &rp->tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == ino && k.type == ZCOW_EXTENT_DATA_KEY) {
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			err = -ENOMEM;
			break;
		}
		memset(&v[nr], 0, sizeof(v[nr]));
		v[nr].key = k;
		v[nr].data = malloc(len ? len : 1);
		if (!v[nr].data) {
			err = -ENOMEM;
			break;
		}
		memcpy(v[nr].data, data, len);
		v[nr].len = len;
		nr++;
		/* (log_file_ranges() logs no inline extent) */
		err = zcow_fext_is_inline(data, len) ? -EUCLEAN :
			zcow_fext_decode(data, len, k.offset, &v[nr - 1].fe);
		if (err)
			break;
	}
	if (err == -ENOENT)
		err = 0;
	for (i = 0; !err && i < nr; i++)
		if (v[i].fe.disk_bytenr)
			err = replay_extent_ref(rp, ino, &v[i].fe);
	for (i = 0; !err && i < nr; i++) {
		err = zcow_drop_extents_locked(fs, &fs->fs_tree,
					       ZCOW_FS_TREE_OBJECTID, ino,
					       v[i].fe.file_off,
					       v[i].fe.file_off +
						       v[i].fe.num_bytes,
					       NULL);
		if (!err)
			err = zcow_tree_insert(&fs->fs_tree, &v[i].key,
					       v[i].data, v[i].len);
	}
	for (i = 0; i < nr; i++)
		free(v[i].data);
	free(v);
	return err;
}

/* Put the log's items of @ino in place of the fs tree's; a directory's
 * (the log's inode item says) only where the log covers it (@nr_r
 * ranges in @r, none for a directory logged for its own refs); a file
 * logged by its changes (ZCOW_EXTENT_LOG_KEY) all but its file extent
 * items, which replace only what lies under them (replay_ranges()). */
static int replay_inode(struct replay *rp, uint64_t ino, const uint64_t *r,
			uint64_t nr_r)
{
	struct zcow_fs *fs = rp->fs;
	struct zcow_key start = { ino, 0, 0 }, k;
	struct old_item *old = NULL;
	struct zcow_inode in;
	struct zcow_tree_iter it;
	uint64_t nr_old = 0;
	const void *data;
	uint32_t len;
	bool is_ranges = false;
	int err;

	err = zcow_inode_get(&rp->tree, ino, &in);
	if (!err && S_ISREG(in.mode)) {
		struct zcow_key mk = { ino, ZCOW_EXTENT_LOG_KEY, 0 };

		err = zcow_tree_search(&rp->tree, &mk, NULL, 0, NULL);
		is_ranges = !err;
		if (err == -ENOENT)
			err = 0;
	}
	if (!err)
		err = collect_items(&fs->fs_tree, ino, &old, &nr_old);
	if (!err && S_ISDIR(in.mode))
		err = dir_replaced(rp, old, &nr_old, r, nr_r);
	/* By its changes: its extents are replay_ranges()'. */
	while (!err && is_ranges && nr_old &&
	       old[nr_old - 1].key.type >= ZCOW_EXTENT_DATA_KEY)
		nr_old--;
	if (err) {
		free(old);
		return err;
	}
	/* Old references are dropped last: an extent both had stays. */
	err = delete_items(fs, old, nr_old);
	zcow_tree_iter_init(&it, &rp->tree, &start);
	while (!err && !(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == ino) {
		if (k.type == ZCOW_DIR_LOG_INDEX_KEY ||
		    k.type == ZCOW_EXTENT_LOG_KEY ||
		    (is_ranges && k.type == ZCOW_EXTENT_DATA_KEY))
			continue;
		err = zcow_tree_insert(&fs->fs_tree, &k, data, len);
		if (!err && k.type == ZCOW_EXTENT_DATA_KEY &&
		    !zcow_fext_is_inline(data, len)) {
			struct zcow_fext fe;

			err = zcow_fext_decode(data, len, k.offset, &fe);
			if (!err && fe.disk_bytenr)
				err = replay_extent_ref(rp, ino, &fe);
		}
	}
	if (err == -ENOENT || (!err && k.objectid != ino))
		err = 0;
	if (!err)
		err = drop_refs(fs, ino, old, nr_old);
	if (!err && is_ranges)
		err = replay_ranges(rp, ino);
	free(old);
	return err;
}

struct old_entry {
	uint64_t index;
	uint64_t ino;
	uint16_t len;
	char name[256];
};

/* Append the DIR_INDEX entries of @dir in @tree with an index in
 * [@lo, @hi] to *v_ret (*nr_ret of *cap_ret; the caller frees it, also
 * on an error). */
static int dir_entries(struct zcow_tree *tree, uint64_t dir, uint64_t lo,
		       uint64_t hi, struct old_entry **v_ret, uint64_t *nr_ret,
		       uint64_t *cap_ret)
{
	struct zcow_key start = { dir, ZCOW_DIR_INDEX_KEY, lo }, k;
	struct old_entry *v = *v_ret;
	uint64_t nr = *nr_ret, cap = *cap_ret;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == dir && k.type == ZCOW_DIR_INDEX_KEY &&
	       k.offset <= hi) {
		const uint8_t *d = data;
		uint16_t nlen;

		if (len < ZCOW_DIR_ITEM_HDR ||
		    (nlen = get16(d + 27)) > 255 ||
		    ZCOW_DIR_ITEM_HDR + nlen > len) {
			err = -EUCLEAN;
			break;
		}
		if (ZCOW_GROW_ONE(&v, nr, &cap)) {
			err = -ENOMEM;
			break;
		}
		v[nr].index = k.offset;
		v[nr].ino = get64(d);
		v[nr].len = nlen;
		memcpy(v[nr].name, d + ZCOW_DIR_ITEM_HDR, nlen);
		v[nr].name[nlen] = 0;
		nr++;
	}
	*v_ret = v;
	*nr_ret = nr;
	*cap_ret = cap;
	return err == -ENOENT ? 0 : err;
}

/* Is entry @e (name, inode) in the log's entries of @dir? */
static int in_log_dir(struct replay *rp, uint64_t dir,
		      const struct old_entry *e)
{
	uint64_t ino;
	int err = zcow_dir_lookup(&rp->tree, dir, e->name, e->len, &ino, NULL);

	if (err == -ENOENT)
		return 0;
	return err ? err : ino == e->ino;
}

static int replay_unlink(struct replay *rp, uint64_t dir,
			 const struct old_entry *e, int depth);

/* The last link of @ino went: delete it (a directory: what is left in it,
 * unless logged elsewhere). */
static int replay_delete(struct replay *rp, uint64_t ino, int depth)
{
	struct zcow_fs *fs = rp->fs;
	struct old_entry *ents = NULL;
	struct old_item *old = NULL;
	uint64_t nr_ents = 0, cap_ents = 0, nr_old = 0, i;
	struct zcow_inode in;
	int err;

	if (depth > 4096)
		return -EUCLEAN;
	err = zcow_inode_get(&fs->fs_tree, ino, &in);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (S_ISDIR(in.mode)) {
		err = dir_entries(&fs->fs_tree, ino, 0, UINT64_MAX, &ents,
				  &nr_ents, &cap_ents);
		for (i = 0; !err && i < nr_ents; i++)
			if (!is_logged(rp, ents[i].ino))
				err = replay_unlink(rp, ino, &ents[i],
						    depth + 1);
		free(ents);
		if (err)
			return err;
	}
	err = collect_items(&fs->fs_tree, ino, &old, &nr_old);
	if (!err)
		err = delete_items(fs, old, nr_old);
	if (!err)
		err = drop_refs(fs, ino, old, nr_old);
	free(old);
	return err;
}

/* Entry @e (of inode e->ino) in @dir removed by the log: drop its name
 * from the inode's INODE_REF of @dir (its other names there stay) and,
 * at the last link, the inode. */
static int replay_unlink(struct replay *rp, uint64_t dir,
			 const struct old_entry *e, int depth)
{
	struct zcow_fs *fs = rp->fs;
	uint64_t ino = e->ino;
	struct zcow_inode in;
	int err;

	err = zcow_inode_ref_del(&fs->fs_tree, ino, dir, e->name, e->len,
				 NULL);
	if (err && err != -ENOENT)
		return err;
	err = zcow_inode_get(&fs->fs_tree, ino, &in);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (in.nlink <= 1)
		return replay_delete(rp, ino, depth);
	in.nlink--;
	in.transid = fs->transid;
	return zcow_inode_put(&fs->fs_tree, &in);
}

static void replay_close(struct replay *rp)
{
	if (rp->tree.hash)
		zcow_tree_release(&rp->tree);
	if (rp->root_tree.hash)
		zcow_tree_release(&rp->root_tree);
	free(rp->logged);
}

/* The DIR_LOG_INDEX ranges of @dir in the log, as pairs first, last
 * (none: @dir is not logged as a directory). */
static int log_ranges(struct replay *rp, uint64_t dir, uint64_t **r_ret,
		      uint64_t *nr_ret)
{
	struct zcow_key start = { dir, ZCOW_DIR_LOG_INDEX_KEY, 0 }, k;
	uint64_t *r = NULL, n = 0, cap = 0;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	int err;

	zcow_tree_iter_init(&it, &rp->tree, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len)) &&
	       k.objectid == dir && k.type == ZCOW_DIR_LOG_INDEX_KEY) {
		if (len < DIR_LOG_ITEM_SIZE || get64(data) < k.offset) {
			err = -EUCLEAN;
			break;
		}
		err = push64(&r, &n, &cap, k.offset);
		if (!err)
			err = push64(&r, &n, &cap, get64(data));
		if (err)
			break;
	}
	if (err && err != -ENOENT) {
		free(r);
		return err;
	}
	*r_ret = r;
	*nr_ret = n / 2;
	return 0;
}

/*
 * A committed entry @e of logged directory @dir, in a logged range, that
 * the log does not hold was unlinked: its name leaves the DIR_ITEM of its
 * hash unless the log replaced that item (no name of that hash was left
 * at the fsync: the unlink noted the hash, so the item was logged if it
 * existed), and its inode loses the link unless logged itself (its refs
 * came with it).
 */
static int replay_stale_entry(struct replay *rp, uint64_t dir,
			      const struct old_entry *e)
{
	struct zcow_key hk = { dir, ZCOW_DIR_ITEM_KEY,
			       zcow_name_hash(e->name, e->len) };
	int err = in_log_dir(rp, dir, e);

	if (err)
		return err > 0 ? 0 : err;
	err = zcow_tree_search(&rp->tree, &hk, NULL, 0, NULL);
	if (err == -ENOENT) {
		err = zcow_tree_delete(&rp->fs->fs_tree, &hk);
		if (err == -ENOENT)
			err = 0;
	}
	if (err)
		return err;
	return is_logged(rp, e->ino) ? 0 : replay_unlink(rp, dir, e, 0);
}

/* Replay into the fs tree (no commit yet). */
static int replay_apply(struct replay *rp)
{
	struct zcow_fs *fs = rp->fs;
	struct old_entry **ents;
	uint64_t *nr_ents, **ranges, *nr_ranges, i, j, cap;
	int err = 0;

	ents = calloc(rp->nr_logged + 1, sizeof(*ents));
	nr_ents = calloc(rp->nr_logged + 1, sizeof(*nr_ents));
	ranges = calloc(rp->nr_logged + 1, sizeof(*ranges));
	nr_ranges = calloc(rp->nr_logged + 1, sizeof(*nr_ranges));
	if (!ents || !nr_ents || !ranges || !nr_ranges) {
		err = -ENOMEM;
		goto out;
	}
	/* The committed entries in the logged ranges of every logged
	 * directory, first. */
	for (i = 0; !err && i < rp->nr_logged; i++) {
		err = log_ranges(rp, rp->logged[i], &ranges[i], &nr_ranges[i]);
		for (j = 0, cap = 0; !err && j < nr_ranges[i]; j++)
			err = dir_entries(&fs->fs_tree, rp->logged[i],
					  ranges[i][2 * j],
					  ranges[i][2 * j + 1], &ents[i],
					  &nr_ents[i], &cap);
	}
	for (i = 0; !err && i < rp->nr_logged; i++)
		err = replay_inode(rp, rp->logged[i], ranges[i], nr_ranges[i]);
	/* Entries the log's directories no longer hold were unlinked. */
	for (i = 0; !err && i < rp->nr_logged; i++)
		for (j = 0; !err && j < nr_ents[i]; j++)
			err = replay_stale_entry(rp, rp->logged[i],
						 &ents[i][j]);
out:
	for (i = 0; ents && ranges && i < rp->nr_logged; i++) {
		free(ents[i]);
		free(ranges[i]);
	}
	free(ents);
	free(nr_ents);
	free(ranges);
	free(nr_ranges);
	return err;
}

int zcow_log_replay(struct zcow_fs *fs)
{
	struct replay rp = { .fs = fs };
	uint64_t gen = fs->generation;
	int err;

	if (!fs->sb.log_root)
		return 0;
	if (fs->read_only) {
		zlog_warn(TAG, "read-only mount: the tree-log of generation %" PRIu64 " is not replayed (fsyncs since that commit are not visible)",
			  gen);
		return 0;
	}
	err = replay_open(&rp);
	if (err == -ENOMEM) {
		replay_close(&rp);
		return err;
	}
	if (err) {
		/* The committed state stands on its own: ignore the log, and
		 * say that the fsyncs it held are lost. */
		zlog_warn(TAG, "tree-log at %" PRIu64 " unreadable or corrupt (%d): ignored; the fsyncs acknowledged since generation %" PRIu64 " are lost",
			  (uint64_t)le64toh(fs->sb.log_root), err, gen);
		fs->log->is_lost = true;
		replay_close(&rp);
		return zcow_files_commit_locked(fs);
	}
	err = replay_apply(&rp);
	fs->log->nr_replayed = rp.nr_logged;
	replay_close(&rp);
	if (err) {
		zlog_err(TAG, "tree-log replay failed: %d (the device still holds the log)",
			 err);
		fs->error = err;
		return err;
	}
	err = zcow_files_rescan(fs);
	if (err)
		return err;
	zlog(ZLOG_INFO, TAG, "replayed the tree-log: %" PRIu64 " inodes", fs->log->nr_replayed);
	/* ORDER: the replayed state is committed (log_root = 0) before
	 * anything else writes; a cut before leaves the log to replay. */
	return zcow_files_commit_locked(fs);
}
