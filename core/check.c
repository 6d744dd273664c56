// SPDX-License-Identifier: MIT
/*
 * The checker (zcow check): reads the last committed state from the device,
 * node by node, without the trees' caches, and cross-checks the trees.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "files.h"
#include "fs.h"
#include "grow.h"
#include "le.h"
#include "zlog.h"

#define HDR 101u

struct ck_node {
	uint64_t bytenr;
	uint64_t owner;		/* the tree walked (log nodes) or the header's */
	int level;
};

struct ck_ext {
	uint64_t bytenr;
	uint64_t len;
	uint64_t refs;
	uint64_t flags;
	int level;		/* -1: data extent */
	uint64_t first_ref;	/* its inline references: erefs[first, +nr) */
	uint32_t nr_refs;
};

/* A pointer to a tree block: from a root item (@parent 0: by @root) or
 * from the node @parent made by @parent_owner. */
struct ck_bref {
	uint64_t child;
	uint64_t parent, parent_owner, root;
};

/* A file extent item of a subvolume tree's leaf (each leaf counted once). */
struct ck_dref {
	uint64_t bytenr, len;
	uint64_t leaf, leaf_owner;
	uint64_t ino, offset;	/* the data reference's: file off - extent off */
};

struct ck_range {
	uint64_t start;
	uint64_t len;
	uint64_t val;		/* bg item: used; chunk: physical */
	uint64_t devid;		/* chunk, device extent: the device */
};

#define ARR(type, name) \
	type *name;     \
	uint64_t nr_##name, cap_##name

struct ck {
	struct zcow_fs *fs;
	void (*report)(void *arg, const char *msg);
	void *arg;
	int nr_errors;
	bool is_nomem;
	ARR(struct ck_node, nodes);
	ARR(struct ck_ext, exts);
	ARR(struct zcow_eref, erefs);
	ARR(struct ck_bref, brefs);
	ARR(struct ck_dref, drefs);
	/* Tree blocks walked already (open addressing, 0 = empty). */
	uint64_t *seen;
	uint64_t nr_seen, seen_size;
	ARR(struct ck_range, bgis);
	ARR(struct ck_range, chunks);
	ARR(struct ck_range, devexts);
	uint64_t nr_dev_items;		/* DEV_ITEMs of devices of the fs */
	ARR(struct ck_range, roots);	/* start = objectid, len = bytenr,
					 * val = gen << 8 | level */
	uint64_t *zone_wp;		/* per in-memory bg */
	/* The tree-log (issue 9): walked with is_log set. */
	bool is_log;
	uint64_t log_tree, log_tree_gen;	/* from the log root tree */
	int log_tree_level;
	ARR(struct ck_node, log_nodes);
	ARR(struct ck_range, log_exts);	/* start, len; val = file inode */
	ARR(struct ck_range, log_csums);	/* start, len = item bytes */
};

static void problem(struct ck *ck, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct ck *ck, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ck->nr_errors++;
	if (ck->report)
		ck->report(ck->arg, msg);
}

static void *grow(struct ck *ck, void **arr, uint64_t *nr, uint64_t *cap,
		  size_t size)
{
	if (zcow_grow(arr, cap, *nr + 1, size)) {
		ck->is_nomem = true;
		return NULL;
	}
	return (char *)*arr + (*nr)++ * size;
}

#define PUSH(ck, name)                                                        \
	((__typeof__((ck)->name))grow(ck, (void **)&(ck)->name,              \
				      &(ck)->nr_##name, &(ck)->cap_##name,   \
				      sizeof(*(ck)->name)))

static void get_key(struct zcow_key *k, const uint8_t *p)
{
	k->objectid = get64(p);
	k->type = p[8];
	k->offset = get64(p + 9);
}

static int bg_index(struct zcow_fs *fs, const struct zcow_bg *bg)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i] == bg)
			return (int)i;
	return -1;
}

/* An item of the log root tree or of the log (seed 010 / btrfs items). */
static void log_item(struct ck *ck, const struct zcow_key *k, const uint8_t *d,
		     uint32_t size)
{
	struct ck_range *r;

	switch (k->type) {
	case ZCOW_ROOT_ITEM_KEY:
		if (k->objectid != ZCOW_TREE_LOG_OBJECTID ||
		    k->offset != ZCOW_FS_TREE_OBJECTID || size < 247 ||
		    ck->log_tree) {
			problem(ck, "tree-log: unexpected root item (%" PRIu64 " %u %" PRIu64 ")",
				k->objectid, k->type, k->offset);
			return;
		}
		ck->log_tree = get64(d + 176);
		ck->log_tree_gen = get64(d + 160);
		ck->log_tree_level = d[238];
		return;
	case ZCOW_EXTENT_DATA_KEY:
		if (size < ZCOW_FILE_EXTENT_SIZE) {
			problem(ck, "tree-log: inode %" PRIu64 ": short file extent item",
				k->objectid);
			return;
		}
		if (!get64(d + 21))
			return;	/* a hole */
		r = PUSH(ck, log_exts);
		if (r)
			*r = (struct ck_range){ .start = get64(d + 21),
						.len = get64(d + 29),
						.val = k->objectid };
		return;
	case ZCOW_EXTENT_CSUM_KEY:
		r = PUSH(ck, log_csums);
		if (r)
			*r = (struct ck_range){ .start = k->offset,
						.len = size };
		return;
	case ZCOW_INODE_ITEM_KEY:
	case ZCOW_INODE_REF_KEY:
	case ZCOW_DIR_ITEM_KEY:
	case ZCOW_DIR_INDEX_KEY:
	case ZCOW_DIR_LOG_INDEX_KEY:
	case ZCOW_EXTENT_LOG_KEY:
		return;
	default:
		problem(ck, "tree-log: item (%" PRIu64 " %u %" PRIu64 ") of a type a log does not hold",
			k->objectid, k->type, k->offset);
	}
}

/* The inline references of extent item @d into ck->erefs, in order. */
static void add_erefs(struct ck *ck, struct ck_ext *e, const uint8_t *d,
		      uint32_t size)
{
	struct zcow_eref v[ZCOW_MAX_INLINE_REFS];
	uint32_t nr, i;

	e->first_ref = ck->nr_erefs;
	e->nr_refs = 0;
	if (zcow_extent_item_parse(d, size, v, ZCOW_MAX_INLINE_REFS, &nr)) {
		problem(ck, "extent %" PRIu64 ": inline references malformed",
			e->bytenr);
		return;
	}
	for (i = 0; i < nr; i++) {
		struct zcow_eref *r = PUSH(ck, erefs);

		if (!r)
			return;
		*r = v[i];
		e->nr_refs++;
	}
}

static void leaf_item(struct ck *ck, uint64_t owner, const struct zcow_key *k,
		      const uint8_t *d, uint32_t size)
{
	struct ck_range *r;
	struct ck_ext *e;

	if (ck->is_log) {
		log_item(ck, k, d, size);
		return;
	}
	switch (owner) {
	case ZCOW_CHUNK_TREE_OBJECTID:
		if (k->type == ZCOW_CHUNK_ITEM_KEY) {
			struct zcow_bg bg;

			if (zcow_chunk_decode(d, size, k->offset, &bg)) {
				problem(ck, "chunk %" PRIu64 ": bad chunk item",
					k->offset);
				return;
			}
			r = PUSH(ck, chunks);
			if (r)
				*r = (struct ck_range){ bg.start, bg.length,
							bg.physical, bg.devid };
			if (!zcow_fs_device(ck->fs, bg.devid))
				problem(ck, "chunk %" PRIu64 ": on devid %" PRIu64 ", not a device of this file system",
					bg.start, bg.devid);
		} else if (k->type == ZCOW_DEV_ITEM_KEY &&
			   k->objectid == ZCOW_DEV_ITEMS_OBJECTID) {
			if (!zcow_fs_device(ck->fs, k->offset))
				problem(ck, "device item of devid %" PRIu64 ": not a device of this file system",
					k->offset);
			else
				ck->nr_dev_items++;
		}
		break;
	case ZCOW_DEV_TREE_OBJECTID:
		if (k->type == ZCOW_DEV_EXTENT_KEY && size >= 32) {
			r = PUSH(ck, devexts);
			if (r)
				*r = (struct ck_range){ get64(d + 16),
							get64(d + 24),
							k->offset,
							k->objectid };
		}
		break;
	case ZCOW_ROOT_TREE_OBJECTID:
		if (k->type == ZCOW_ROOT_ITEM_KEY && size >= 247) {
			r = PUSH(ck, roots);
			if (r)
				*r = (struct ck_range){
					.start = k->objectid,
					.len = get64(d + 176),
					.val = get64(d + 160) << 8 | d[238] };
		}
		break;
	case ZCOW_EXTENT_TREE_OBJECTID:
		if (k->type == ZCOW_BLOCK_GROUP_ITEM_KEY && size >= 24) {
			r = PUSH(ck, bgis);
			if (r)
				*r = (struct ck_range){ .start = k->objectid,
							.len = k->offset,
							.val = get64(d) };
		} else if (k->type == ZCOW_METADATA_ITEM_KEY ||
			   k->type == ZCOW_EXTENT_ITEM_KEY) {
			if (size < 24) {
				problem(ck, "extent item %" PRIu64 " too short",
					k->objectid);
				return;
			}
			e = PUSH(ck, exts);
			if (!e)
				return;
			e->bytenr = k->objectid;
			e->refs = get64(d);
			e->flags = get64(d + 16);
			if (k->type == ZCOW_METADATA_ITEM_KEY) {
				e->len = ck->fs->nodesize;
				e->level = (int)k->offset;
			} else {
				e->len = k->offset;
				e->level = -1;
			}
			add_erefs(ck, e, d, size);
		}
		break;
	default:
		break;
	}
}

/* Mark @bytenr walked; false if it was already. */
static bool see(struct ck *ck, uint64_t bytenr)
{
	uint64_t i, mask;

	if (2 * (ck->nr_seen + 1) > ck->seen_size) {
		uint64_t *old = ck->seen, n = ck->seen_size, j;
		uint64_t size = n ? 2 * n : 1024;

		ck->seen = calloc(size, sizeof(*ck->seen));
		if (!ck->seen) {
			ck->seen = old;
			ck->is_nomem = true;
			return true;
		}
		ck->seen_size = size;
		ck->nr_seen = 0;
		for (j = 0; j < n; j++)
			if (old[j])
				see(ck, old[j]);
		free(old);
	}
	mask = ck->seen_size - 1;
	for (i = (bytenr >> 12) * 0x9e3779b97f4a7c15ULL & mask; ck->seen[i];
	     i = (i + 1) & mask)
		if (ck->seen[i] == bytenr)
			return false;
	ck->seen[i] = bytenr;
	ck->nr_seen++;
	return true;
}

/* A file extent of a subvolume tree's leaf @leaf (made by @leaf_owner). */
static void add_dref(struct ck *ck, uint64_t leaf, uint64_t leaf_owner,
		     const struct zcow_key *k, const uint8_t *d, uint32_t size)
{
	struct zcow_fext fe;
	struct ck_dref *r;

	if (size < 21 || d[20] == 0 ||
	    zcow_fext_decode(d, size, k->offset, &fe) || !fe.disk_bytenr)
		return;	/* inline, a hole, or reported by the file layer */
	r = PUSH(ck, drefs);
	if (r)
		*r = (struct ck_dref){ fe.disk_bytenr, fe.disk_num_bytes, leaf,
				       leaf_owner, k->objectid,
				       fe.file_off - fe.offset };
}

/*
 * Walk the subtree at @bytenr.  @lo: the key the parent points with (the
 * node's first key must equal it), @hi: the parent's next key (every key
 * must sort below it), NULL when unbounded.
 */
static void walk(struct ck *ck, uint64_t owner, uint64_t bytenr, int level,
		 uint64_t gen, const struct zcow_key *lo,
		 const struct zcow_key *hi, uint64_t parent,
		 uint64_t parent_owner)
{
	bool is_subvol = zcow_is_subvol_id(owner);
	struct zcow_fs *fs = ck->fs;
	uint32_t ns = fs->nodesize, nr, i;
	struct zcow_bg *bg = zcow_bg_lookup(fs, bytenr);
	struct zcow_key key, next;
	struct ck_node *n;
	uint64_t hgen;
	uint8_t *buf;
	int idx;

	if (!bg || bytenr + ns > bg->start + bg->length) {
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " lies in no block group",
			owner, bytenr);
		return;
	}
	/* (A crashed log on conventional zones lies above the offset that
	 * the committed extent items give; replay claims it.) */
	if (bytenr + ns > bg->start + bg->alloc_offset &&
	    (bg->is_seq || !ck->is_log))
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " beyond block group %" PRIu64 "'s allocation offset %" PRIu64,
			owner, bytenr, bg->start, bg->alloc_offset);
	idx = bg_index(fs, bg);
	if (bg->is_seq && idx >= 0 &&
	    bg->physical + (bytenr - bg->start) + ns > ck->zone_wp[idx])
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " beyond its zone's write pointer",
			owner, bytenr);
	if (!ck->is_log) {
		struct ck_bref *b = PUSH(ck, brefs);

		if (b)
			*b = (struct ck_bref){ bytenr, parent, parent_owner,
					       parent ? 0 : owner };
		/* Snapshots share nodes: each is walked once. */
		if (!see(ck, bytenr)) {
			if (!is_subvol)
				problem(ck, "tree block %" PRIu64 " referenced twice",
					bytenr);
			return;
		}
	}
	buf = malloc(ns);
	if (!buf) {
		ck->is_nomem = true;
		return;
	}
	if (fs->store.read(fs, bytenr, buf)) {
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " unreadable",
			owner, bytenr);
		goto out;
	}
	if (zcow_node_verify(&fs->store, buf, bytenr,
			     is_subvol && !ck->is_log ? ZCOW_OWNER_ANY_SUBVOL :
							owner,
			     level, 0)) {
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " (level %d) fails verification (checksum, header or key order)",
			owner, bytenr, level);
		goto out;
	}
	hgen = get64(buf + 0x50);
	/* A tree-log is written in the transaction after the last commit. */
	if (hgen > fs->generation + ck->is_log)
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " generation %" PRIu64 " newer than the superblock's %" PRIu64,
			owner, bytenr, hgen, fs->generation);
	if (gen && hgen != gen)
		problem(ck, "tree %" PRIu64 ": node %" PRIu64 " generation %" PRIu64 ", parent expects %" PRIu64,
			owner, bytenr, hgen, gen);
	n = ck->is_log ? PUSH(ck, log_nodes) : PUSH(ck, nodes);
	if (n)
		*n = (struct ck_node){ bytenr,
				       ck->is_log ? owner : get64(buf + 0x58),
				       level };
	nr = get32(buf + 0x60);
	if (level == 0 && nr == 0 && lo)
		problem(ck, "tree %" PRIu64 ": empty non-root leaf %" PRIu64,
			owner, bytenr);
	for (i = 0; i < nr; i++) {
		const uint8_t *p = buf + HDR + i * (level ? 33u : 25u);

		get_key(&key, p);
		if (i == 0 && lo && zcow_key_cmp(&key, lo))
			problem(ck, "tree %" PRIu64 ": node %" PRIu64 " first key differs from its parent's",
				owner, bytenr);
		if (hi && zcow_key_cmp(&key, hi) >= 0)
			problem(ck, "tree %" PRIu64 ": node %" PRIu64 " key (%" PRIu64 " %u %" PRIu64 ") not below the parent's next key",
				owner, bytenr, key.objectid, key.type,
				key.offset);
		if (level) {
			const struct zcow_key *nhi = hi;

			if (i + 1 < nr) {
				get_key(&next, p + 33);
				nhi = &next;
			}
			walk(ck, owner, get64(p + 17), level - 1,
			     get64(p + 25), &key, nhi, bytenr,
			     get64(buf + 0x58));
		} else {
			leaf_item(ck, owner, &key, buf + HDR + get32(p + 17),
				  get32(p + 21));
			if (is_subvol && !ck->is_log &&
			    key.type == ZCOW_EXTENT_DATA_KEY)
				add_dref(ck, bytenr, get64(buf + 0x58), &key,
					 buf + HDR + get32(p + 17),
					 get32(p + 21));
		}
	}
out:
	free(buf);
}

static int cmp_node(const void *a, const void *b)
{
	const struct ck_node *x = a, *y = b;

	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

static int cmp_ext(const void *a, const void *b)
{
	const struct ck_ext *x = a, *y = b;

	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

static const struct ck_range *find_range(const struct ck_range *v, uint64_t n,
					 uint64_t start)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (v[i].start == start)
			return &v[i];
	return NULL;
}

static int cmp_bref(const void *a, const void *b)
{
	const struct ck_bref *x = a, *y = b;

	return x->child < y->child ? -1 : x->child > y->child;
}

static int cmp_dref(const void *a, const void *b)
{
	const struct ck_dref *x = a, *y = b;
	uint64_t u[5] = { x->bytenr, x->leaf, x->ino, x->offset, x->len };
	uint64_t v[5] = { y->bytenr, y->leaf, y->ino, y->offset, y->len };
	int i;

	for (i = 0; i < 5; i++)
		if (u[i] != v[i])
			return u[i] < v[i] ? -1 : 1;
	return 0;
}

static const struct ck_ext *find_ext(const struct ck *ck, uint64_t bytenr)
{
	uint64_t lo = 0, hi = ck->nr_exts;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ck->exts[mid].bytenr < bytenr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ck->nr_exts && ck->exts[lo].bytenr == bytenr ?
		       &ck->exts[lo] :
		       NULL;
}

/* Is the node @bytenr FULL_BACKREF (its children know it by address)? */
static bool is_full_backref(const struct ck *ck, uint64_t bytenr)
{
	const struct ck_ext *e = find_ext(ck, bytenr);

	return e && (e->flags & ZCOW_BLOCK_FLAG_FULL_BACKREF);
}

/* Where inline reference @r sorts inside its type (descending). */
static uint64_t eref_order(const struct zcow_eref *r)
{
	switch (r->type) {
	case ZCOW_TREE_BLOCK_REF_KEY:
		return r->root;
	case ZCOW_EXTENT_DATA_REF_KEY:
		return zcow_data_ref_hash(r->root, r->ino, r->offset);
	default:
		return r->parent;
	}
}

static bool eref_same(const struct zcow_eref *x, const struct zcow_eref *y)
{
	return x->type == y->type && x->root == y->root &&
	       x->parent == y->parent && x->ino == y->ino &&
	       x->offset == y->offset;
}

static void eref_name(const struct zcow_eref *r, char *buf, size_t len)
{
	switch (r->type) {
	case ZCOW_TREE_BLOCK_REF_KEY:
		snprintf(buf, len, "tree block backref of root %" PRIu64,
			 r->root);
		break;
	case ZCOW_SHARED_BLOCK_REF_KEY:
		snprintf(buf, len, "shared block backref of parent %" PRIu64,
			 r->parent);
		break;
	case ZCOW_EXTENT_DATA_REF_KEY:
		snprintf(buf, len, "data backref of root %" PRIu64 " inode %" PRIu64 " offset %" PRIu64,
			 r->root, r->ino, r->offset);
		break;
	default:
		snprintf(buf, len, "shared data backref of parent %" PRIu64,
			 r->parent);
	}
}

/*
 * The inline references of @e against @want[0..nr) (each with its
 * count; equal ones merged): the same references with the same counts,
 * in btrfs's order, adding up to refs (btrfs check's backref classes:
 * missing backref, backref without a reference, count mismatch).
 */
static void match_refs(struct ck *ck, const struct ck_ext *e,
		       struct zcow_eref *want, uint64_t nr)
{
	const struct zcow_eref *have = &ck->erefs[e->first_ref];
	const char *what = e->level < 0 ? "data extent" : "tree block";
	uint64_t sum = 0, i, j;
	char name[128];

	for (i = 0; i < e->nr_refs; i++) {
		if (i && (have[i].type < have[i - 1].type ||
			  (have[i].type == have[i - 1].type &&
			   eref_order(&have[i]) > eref_order(&have[i - 1]))))
			problem(ck, "%s %" PRIu64 ": inline references out of order",
				what, e->bytenr);
		sum += have[i].count;
		for (j = 0; j < nr && !eref_same(&want[j], &have[i]); j++)
			;
		eref_name(&have[i], name, sizeof(name));
		if (j == nr) {
			problem(ck, "%s %" PRIu64 ": %s matches no reference found",
				what, e->bytenr, name);
			continue;
		}
		if (want[j].count != have[i].count)
			problem(ck, "%s %" PRIu64 ": %s: count %u, %u found",
				what, e->bytenr, name, have[i].count,
				want[j].count);
		want[j].count = 0;
	}
	for (j = 0; j < nr; j++) {
		if (!want[j].count)
			continue;
		eref_name(&want[j], name, sizeof(name));
		problem(ck, "%s %" PRIu64 ": %s missing (%u found)", what,
			e->bytenr, name, want[j].count);
	}
	if (sum != e->refs)
		problem(ck, "%s %" PRIu64 ": refs %" PRIu64 ", its backrefs count %" PRIu64,
			what, e->bytenr, e->refs, sum);
}

/* Add @r to @v (merging an equal one): false on no memory. */
static bool want_add(struct zcow_eref **v, uint64_t *nr, uint64_t *cap,
		     const struct zcow_eref *r)
{
	uint64_t i;

	for (i = 0; i < *nr; i++)
		if (eref_same(&(*v)[i], r)) {
			(*v)[i].count++;
			return true;
		}
	if (ZCOW_GROW_ONE(v, *nr, cap))
		return false;
	(*v)[(*nr)++] = *r;
	return true;
}

/* Every tree block: one extent item, of its level, whose backrefs are
 * the pointers found to it. */
static void check_tree_block_refs(struct ck *ck)
{
	struct zcow_eref *want = NULL;
	uint64_t i, b = 0, nr, cap = 0;

	for (i = 0; i < ck->nr_nodes; i++) {
		const struct ck_node *n = &ck->nodes[i];
		const struct ck_ext *e = find_ext(ck, n->bytenr);

		while (b < ck->nr_brefs && ck->brefs[b].child < n->bytenr)
			b++;
		if (!e) {
			problem(ck, "tree block %" PRIu64 " (level %d) has no extent item",
				n->bytenr, n->level);
			continue;
		}
		if (e->level != n->level)
			problem(ck, "tree block %" PRIu64 ": extent level %d, node level %d",
				n->bytenr, e->level, n->level);
		for (nr = 0; b < ck->nr_brefs && ck->brefs[b].child == n->bytenr;
		     b++) {
			const struct ck_bref *p = &ck->brefs[b];
			struct zcow_eref r = { .count = 1 };

			if (!p->parent) {
				r.type = ZCOW_TREE_BLOCK_REF_KEY;
				r.root = p->root;
			} else if (is_full_backref(ck, p->parent)) {
				r.type = ZCOW_SHARED_BLOCK_REF_KEY;
				r.parent = p->parent;
			} else {
				r.type = ZCOW_TREE_BLOCK_REF_KEY;
				r.root = p->parent_owner;
			}
			if (!want_add(&want, &nr, &cap, &r)) {
				ck->is_nomem = true;
				goto out;
			}
		}
		match_refs(ck, e, want, nr);
	}
	/* Extent items of tree blocks no tree reaches. */
	for (i = 0; i < ck->nr_exts; i++) {
		const struct ck_ext *e = &ck->exts[i];
		struct ck_node key = { .bytenr = e->bytenr };

		if (e->level >= 0 &&
		    (!ck->nr_nodes ||
		     !bsearch(&key, ck->nodes, ck->nr_nodes, sizeof(key),
			      cmp_node)))
			problem(ck, "extent item %" PRIu64 " references no tree block",
				e->bytenr);
	}
out:
	free(want);
}

/* Every data extent: its backrefs are the file extents of the subvolume
 * trees' leaves that point at it (by the leaf's owner, or by the leaf
 * when it is FULL_BACKREF). */
static void check_data_refs(struct ck *ck)
{
	struct zcow_eref *want = NULL;
	uint64_t i, d = 0, nr, cap = 0;

	for (i = 0; i < ck->nr_exts; i++) {
		const struct ck_ext *e = &ck->exts[i];

		if (e->level >= 0)
			continue;
		for (; d < ck->nr_drefs && ck->drefs[d].bytenr < e->bytenr; d++)
			problem(ck, "data extent %" PRIu64 ": referenced, no extent item",
				ck->drefs[d].bytenr);
		if (d == ck->nr_drefs || ck->drefs[d].bytenr != e->bytenr) {
			problem(ck, "data extent %" PRIu64 ": refs %" PRIu64 ", no file extent",
				e->bytenr, e->refs);
			continue;
		}
		for (nr = 0; d < ck->nr_drefs && ck->drefs[d].bytenr == e->bytenr;
		     d++) {
			const struct ck_dref *f = &ck->drefs[d];
			struct zcow_eref r = { .count = 1 };

			if (f->len != e->len)
				problem(ck, "data extent %" PRIu64 ": length %" PRIu64 ", file extents say %" PRIu64,
					e->bytenr, e->len, f->len);
			if (is_full_backref(ck, f->leaf)) {
				r.type = ZCOW_SHARED_DATA_REF_KEY;
				r.parent = f->leaf;
			} else {
				r.type = ZCOW_EXTENT_DATA_REF_KEY;
				r.root = f->leaf_owner;
				r.ino = f->ino;
				r.offset = f->offset;
			}
			if (!want_add(&want, &nr, &cap, &r)) {
				ck->is_nomem = true;
				goto out;
			}
		}
		match_refs(ck, e, want, nr);
	}
	for (; d < ck->nr_drefs; d++)
		problem(ck, "data extent %" PRIu64 ": referenced, no extent item",
			ck->drefs[d].bytenr);
out:
	free(want);
}

static void cross_check(struct ck *ck)
{
	struct zcow_fs *fs = ck->fs;
	uint64_t i, j;

	/* (qsort() and bsearch() take no NULL array, even empty) */
	if (ck->nr_nodes)
		qsort(ck->nodes, ck->nr_nodes, sizeof(*ck->nodes), cmp_node);
	if (ck->nr_exts)
		qsort(ck->exts, ck->nr_exts, sizeof(*ck->exts), cmp_ext);
	if (ck->nr_brefs)
		qsort(ck->brefs, ck->nr_brefs, sizeof(*ck->brefs), cmp_bref);
	if (ck->nr_drefs)
		qsort(ck->drefs, ck->nr_drefs, sizeof(*ck->drefs), cmp_dref);
	check_tree_block_refs(ck);
	check_data_refs(ck);
	/* Chunks, device extents and block group items agree. */
	for (i = 0; i < ck->nr_chunks; i++) {
		const struct ck_range *c = &ck->chunks[i];
		const struct ck_range *bgi = find_range(ck->bgis, ck->nr_bgis,
							c->start);
		bool has_de = false;

		for (j = 0; j < ck->nr_devexts; j++)
			if (ck->devexts[j].start == c->start &&
			    ck->devexts[j].len == c->len &&
			    ck->devexts[j].val == c->val &&
			    ck->devexts[j].devid == c->devid)
				has_de = true;
		if (!has_de)
			problem(ck, "chunk %" PRIu64 " has no matching device extent",
				c->start);
		if (!bgi || bgi->len != c->len)
			problem(ck, "chunk %" PRIu64 " has no matching block group item",
				c->start);
	}
	if (ck->nr_dev_items != ck->fs->nr_devs)
		problem(ck, "%" PRIu64 " device items for %u devices",
			ck->nr_dev_items, ck->fs->nr_devs);
	if (ck->nr_devexts != ck->nr_chunks)
		problem(ck, "%" PRIu64 " device extents for %" PRIu64 " chunks",
			ck->nr_devexts, ck->nr_chunks);
	/* Block group used == the sum of its extents. */
	for (i = 0; i < ck->nr_bgis; i++) {
		const struct ck_range *b = &ck->bgis[i];
		uint64_t sum = 0;

		if (!find_range(ck->chunks, ck->nr_chunks, b->start))
			problem(ck, "block group item %" PRIu64 " has no chunk",
				b->start);
		for (j = 0; j < ck->nr_exts; j++)
			if (ck->exts[j].bytenr >= b->start &&
			    ck->exts[j].bytenr < b->start + b->len)
				sum += ck->exts[j].len;
		if (sum != b->val)
			problem(ck, "block group %" PRIu64 ": used %" PRIu64 ", extents sum to %" PRIu64,
				b->start, b->val, sum);
	}
	(void)fs;
}

/*
 * The tree-log on the device (the last log sync, or the superblock's log
 * when mounted without replay): every node verifies, lies below its
 * group's write pointer, and the log's groups hold no node of the
 * committed trees, nor the committed trees' groups a log node (seed 010:
 * two write streams); every logged data extent is committed already or
 * has its checksums in the log.
 */
static void check_log(struct ck *ck)
{
	struct zcow_fs *fs = ck->fs;
	uint8_t *has_meta = calloc(fs->nr_bgs ? fs->nr_bgs : 1, 1);
	uint64_t root, i, j;
	int level;

	if (!has_meta) {
		ck->is_nomem = true;
		return;
	}
	if (!zcow_log_root(fs, &root, &level))
		goto out;
	ck->is_log = true;
	walk(ck, ZCOW_TREE_LOG_OBJECTID, root, level, fs->generation + 1,
	     NULL, NULL, 0, 0);
	if (!ck->log_tree)
		problem(ck, "tree-log: the log root tree holds no log of the fs tree");
	else
		walk(ck, ZCOW_TREE_LOG_OBJECTID, ck->log_tree,
		     ck->log_tree_level, ck->log_tree_gen, NULL, NULL, 0, 0);
	ck->is_log = false;
	for (i = 0; i < ck->nr_nodes; i++) {
		int idx = bg_index(fs, zcow_bg_lookup(fs, ck->nodes[i].bytenr));

		if (idx >= 0)
			has_meta[idx] = 1;
	}
	for (i = 0; i < ck->nr_log_nodes; i++) {
		struct zcow_bg *bg = zcow_bg_lookup(fs, ck->log_nodes[i].bytenr);
		int idx = bg_index(fs, bg);

		if (idx < 0)
			continue;	/* reported by walk() */
		if (!(bg->flags & ZCOW_BG_METADATA))
			problem(ck, "tree-log node %" PRIu64 " in block group %" PRIu64 ", not a metadata group",
				ck->log_nodes[i].bytenr, bg->start);
		if (has_meta[idx])
			problem(ck, "tree-log node %" PRIu64 " shares block group %" PRIu64 " with nodes of the committed trees",
				ck->log_nodes[i].bytenr, bg->start);
	}
	for (i = 0; i < ck->nr_log_exts; i++) {
		const struct ck_range *e = &ck->log_exts[i];
		struct zcow_bg *bg = zcow_bg_lookup(fs, e->start);
		bool ok = false;

		if (!bg || !(bg->flags & ZCOW_BG_DATA) ||
		    (bg->is_seq &&
		     e->start + e->len > bg->start + bg->alloc_offset)) {
			problem(ck, "tree-log: inode %" PRIu64 " extent %" PRIu64 "+%" PRIu64 " outside the written part of a data group",
				e->val, e->start, e->len);
			continue;
		}
		for (j = 0; j < ck->nr_exts && !ok; j++)
			ok = ck->exts[j].bytenr == e->start &&
			     ck->exts[j].level < 0;
		for (j = 0; j < ck->nr_log_csums && !ok; j++)
			ok = ck->log_csums[j].start == e->start &&
			     ck->log_csums[j].len ==
				     e->len / ZCOW_SECTORSIZE * 4;
		if (!ok)
			problem(ck, "tree-log: inode %" PRIu64 " extent %" PRIu64 ": neither committed nor checksummed in the log",
				e->val, e->start);
	}
out:
	free(has_meta);
}

/*
 * Block groups against their zones: a group the committed state
 * references holds no more used bytes than its zones hold written (a
 * zone reset too early, or behind the file system's back, would not).
 */
static void check_zones(struct ck *ck)
{
	struct zcow_fs *fs = ck->fs;
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];
		uint64_t off, written = 0;
		bool is_lost = false;

		/* read-only/offline zones: what they hold is the device's */
		if (!bg->is_seq || bg->is_deleted || bg->is_ro)
			continue;
		for (off = 0; off < bg->length && !is_lost;
		     off += fs->dev->info.zone_size) {
			struct zdev_zone z;

			/* an unreportable zone: zcow_check() names it */
			if (zdev_report_zone(zcow_bg_zdev(bg), bg->physical + off,
					     &z))
				return;
			is_lost = z.cond == ZDEV_COND_OFFLINE ||
				  z.cond == ZDEV_COND_READONLY;
			written += z.wp - z.start;
		}
		if (!is_lost && bg->item_used > written)
			problem(ck, "block group %" PRIu64 " (zone %" PRIu64 ") referenced with %" PRIu64 " used bytes, zone holds %" PRIu64 " (reset too early?)",
				bg->start,
				zdev_zone_no(zcow_bg_zdev(bg), bg->physical),
				bg->item_used, written);
	}
}

int zcow_check_zones(struct zcow_fs *fs,
		     void (*report)(void *arg, const char *msg), void *arg)
{
	struct ck ck = { .fs = fs, .report = report, .arg = arg };

	check_zones(&ck);
	return ck.nr_errors;
}

int zcow_check(struct zcow_fs *fs, void (*report)(void *arg, const char *msg),
	       void *arg)
{
	/* The trees every file system has a root item for (btrfs-progs'
	 * mkfs makes the same ones, and a free-space tree). */
	static const uint64_t rooted[] = {
		ZCOW_EXTENT_TREE_OBJECTID, ZCOW_DEV_TREE_OBJECTID,
		ZCOW_FS_TREE_OBJECTID, ZCOW_CSUM_TREE_OBJECTID,
		ZCOW_UUID_TREE_OBJECTID, ZCOW_DATA_RELOC_TREE_OBJECTID,
	};
	struct ck ck = { .fs = fs, .report = report, .arg = arg };
	uint64_t i;
	int ret;

	if (!fs->has_trees) {
		if (report)
			report(arg, "no trees: the superblock's trees could not be loaded");
		return -EINVAL;
	}
	ck.zone_wp = calloc(fs->nr_bgs ? fs->nr_bgs : 1, sizeof(*ck.zone_wp));
	if (!ck.zone_wp)
		return -ENOMEM;
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zdev_zone z;

		if (zdev_report_zone(zcow_bg_zdev(fs->bgs[i]),
				     fs->bgs[i]->physical, &z)) {
			problem(&ck, "zone of block group %" PRIu64 " unreportable",
				fs->bgs[i]->start);
			continue;
		}
		ck.zone_wp[i] = z.cond == ZDEV_COND_FULL ? z.start + z.capacity :
							  z.wp;
	}
	walk(&ck, ZCOW_CHUNK_TREE_OBJECTID, le64toh(fs->sb.chunk_root),
	     fs->sb.chunk_root_level, le64toh(fs->sb.chunk_root_generation),
	     NULL, NULL, 0, 0);
	/* Every commit writes a new root tree (btrfs-progs reads it with
	 * the superblock's generation as the expected transid). */
	walk(&ck, ZCOW_ROOT_TREE_OBJECTID, le64toh(fs->sb.root),
	     fs->sb.root_level, fs->generation, NULL, NULL, 0, 0);
	for (i = 0; i < ck.nr_roots; i++) {
		const struct ck_range *r = &ck.roots[i];

		walk(&ck, r->start, r->len, (int)(r->val & 0xff), r->val >> 8,
		     NULL, NULL, 0, 0);
	}
	for (i = 0; i < sizeof(rooted) / sizeof(rooted[0]); i++)
		if (!find_range(ck.roots, ck.nr_roots, rooted[i]))
			problem(&ck, "root item of tree %" PRIu64 " missing",
				rooted[i]);
	cross_check(&ck);
	check_zones(&ck);
	check_log(&ck);					/* tree-log (issue 9) */
	ret = zcow_files_check(fs, report, arg);	/* files (issue 5) */
	if (ret < 0)
		ck.is_nomem = true;
	else
		ck.nr_errors += ret;
	/* The in-memory accounting invariant of every group (volumes.h). */
	for (i = 0; i < fs->nr_bgs; i++) {
		const struct zcow_bg *bg = fs->bgs[i];

		if (bg->used + bg->reserved + bg->pinned + bg->zone_unusable !=
			    bg->alloc_offset + (bg->length - bg->capacity) ||
		    bg->alloc_offset > bg->capacity)
			problem(&ck, "block group %" PRIu64 ": used %" PRIu64 " + reserved %" PRIu64 " + pinned %" PRIu64 " + unusable %" PRIu64 " do not add up to offset %" PRIu64,
				bg->start, bg->used, bg->reserved, bg->pinned,
				bg->zone_unusable, bg->alloc_offset);
	}
	ret = ck.is_nomem ? -ENOMEM : ck.nr_errors;
	free(ck.nodes);
	free(ck.exts);
	free(ck.erefs);
	free(ck.brefs);
	free(ck.drefs);
	free(ck.seen);
	free(ck.bgis);
	free(ck.chunks);
	free(ck.devexts);
	free(ck.roots);
	free(ck.zone_wp);
	free(ck.log_nodes);
	free(ck.log_exts);
	free(ck.log_csums);
	return ret;
}
