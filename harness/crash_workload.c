// SPDX-License-Identifier: MIT
/*
 * zcrash workloads (harness/crash_int.h, docs/crash.md): the ops a
 * campaign replays, the generators that make them from the scenario, the
 * fault trials of workload=faults, and the oracles' bookkeeping of the
 * uncut run: an in-memory model of the namespace and contents, a snapshot
 * at every commit, every state each path had, and what each acknowledged
 * fsync, fdatasync or sync made durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc64.h>

#include "crash_int.h"
#include "grow.h"

const char *const op_names[] = {
	"create", "mkdir", "write", "truncate", "rename", "unlink",
	"fsync", "fdatasync", "sync", "mark", "rmdir", "fallocate",
	"chmod", "chown", "utimens",
	"link", "symlink", "setxattr", "removexattr",
	"replace-start", "replace-step", "replace-finish",
	"snapshot", "subvol-delete"
};

struct op *zcrash_wl_push(struct wl *w, enum op_kind k, const char *a,
			  const char *b, uint64_t off, uint64_t len)
{
	struct op *o;

	if (ZCOW_GROW_ONE(&w->ops, w->nr, &w->cap))
		return NULL;
	o = &w->ops[w->nr++];
	memset(o, 0, sizeof(*o));
	o->kind = k;
	snprintf(o->a, sizeof(o->a), "%s", a ? a : "");
	snprintf(o->b, sizeof(o->b), "%s", b ? b : "");
	o->off = off;
	o->len = len;
	return o;
}

static void wl_add(struct wl *w, enum op_kind k, const char *a, const char *b,
		   uint64_t off, uint64_t len)
{
	struct op *o;

	/* a failure sticks: zcrash_make_wl() returns it */
	if (w->err)
		return;
	o = zcrash_wl_push(w, k, a, b, off, len);
	if (!o) {
		w->err = -ENOMEM;
		return;
	}
	o->tag = w->nr * ZCOW_GOLDEN64 + 17;
}

static uint64_t fill_word(uint64_t tag, uint64_t pos)
{
	return zcrash_mix64(tag ^ (pos * 0x100000001b3ULL));
}

void zcrash_fill(uint8_t *buf, uint64_t len, uint64_t tag, uint64_t off)
{
	uint64_t i, v;

	/* whole words with a constant-size copy (no memcpy call per word:
	 * every state's replay fills every write), then the tail */
	for (i = 0; i + 8 <= len; i += 8) {
		v = fill_word(tag, off + i);
		memcpy(buf + i, &v, 8);
	}
	if (i < len) {
		v = fill_word(tag, off + i);
		memcpy(buf + i, &v, len - i);
	}
}

struct ent *zcrash_m_find(struct model *m, const char *p)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->e[i].path, p))
			return &m->e[i];
	return NULL;
}

static struct ent *m_add(struct model *m, const char *p, bool is_dir)
{
	struct ent *e;

	if (m->nr >= MAX_ENT)
		return NULL;
	e = &m->e[m->nr++];
	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "%s", p);
	e->is_dir = is_dir;
	e->ino = ++m->last_ino;
	return e;
}

static void m_del(struct model *m, struct ent *e)
{
	free(e->data);
	*e = m->e[--m->nr];
}

static int m_resize(struct ent *e, uint64_t size)
{
	if (size > e->cap) {
		uint64_t cap = size + BLK;
		uint8_t *n = realloc(e->data, cap);

		if (!n)
			return -ENOMEM;
		e->data = n;
		memset(e->data + e->cap, 0, cap - e->cap);
		e->cap = cap;
	}
	if (size < e->size)
		memset(e->data + size, 0, e->size - size);
	e->size = size;
	return 0;
}

/* Salt of a symlink's state hash. */
#define SYMLINK_SALT 0x73796d6c696e6bULL

uint64_t zcrash_state_hash(bool is_symlink, const uint8_t *p, uint64_t n)
{
	return zcrash_hash_bytes(p, n) ^ (is_symlink ? SYMLINK_SALT : 0);
}

/*
 * Content hash of a file state (size included): 64 bits, compared only
 * inside one run (the model's states against what a recovery reads).
 * ISA-L's CRC-64 (Jones polynomial), seeded with the mixed size: the
 * oracles hash every byte of every recovered file twice, and the folded
 * carry-less multiply runs at memory speed, several times a 64-bit
 * multiply chain.  A CRC also catches every burst of up to 64 bits.
 */
uint64_t zcrash_hash_begin(uint64_t n)
{
	return zcrash_mix64(n);
}

uint64_t zcrash_hash_more(uint64_t h, const uint8_t *p, uint64_t len)
{
	return crc64_jones_refl(h, p, len);
}

uint64_t zcrash_hash_bytes(const uint8_t *p, uint64_t n)
{
	return zcrash_hash_more(zcrash_hash_begin(n), p, n);
}

const uint8_t *zcrash_ent_blk(const struct ent *e, uint64_t b)
{
	return e->blk ? e->blk[b] : e->data + b * BLK;
}

/* Bytes of block @b of an entry of @size bytes. */
static uint64_t blk_len(uint64_t size, uint64_t b)
{
	return size - b * BLK < BLK ? size - b * BLK : BLK;
}

bool zcrash_ent_same_data(const struct ent *a, const struct ent *b)
{
	uint64_t k;

	if (a->size != b->size)
		return false;
	for (k = 0; k * BLK < a->size; k++) {
		const uint8_t *x = zcrash_ent_blk(a, k), *y = zcrash_ent_blk(b, k);

		if (x != y && memcmp(x, y, blk_len(a->size, k)))
			return false;
	}
	return true;
}

uint64_t zcrash_ent_hash(struct ent *e)
{
	uint64_t h, k;

	if (e->is_hashed)
		return e->hash;
	h = zcrash_hash_begin(e->size);
	for (k = 0; k * BLK < e->size; k++)
		h = zcrash_hash_more(h, zcrash_ent_blk(e, k),
				     blk_len(e->size, k));
	e->hash = h ^ (e->is_symlink ? SYMLINK_SALT : 0);
	e->is_hashed = true;
	return e->hash;
}

/*
 * Copy the live model @src into snapshot @dst, each entry's data in
 * blocks: a block equal to the same block of the same entry of @prev
 * (may be NULL: the previous snapshot) is @prev's, shared; only the
 * blocks an op changed since cost a copy (a reclaim workload overwrites
 * a few blocks of a large file between commits).  0 or -ENOMEM (@dst
 * holds what was copied: free it with m_free()).
 */
static int m_copy(struct model *dst, const struct model *src,
		  const struct model *prev)
{
	unsigned int i;

	dst->nr = src->nr;
	dst->last_ino = src->last_ino;
	for (i = 0; i < src->nr; i++) {
		const struct ent *x = &src->e[i], *p = NULL;
		struct ent *d = &dst->e[i];
		uint64_t nb = (x->size + BLK - 1) / BLK, k, n;

		*d = *x;
		d->data = NULL;
		d->cap = 0;
		d->blk = NULL;
		d->own = NULL;
		d->is_hashed = false;
		if (!x->size)
			continue;
		if (prev && i < prev->nr && prev->e[i].blk &&
		    prev->e[i].is_symlink == x->is_symlink &&
		    !strcmp(prev->e[i].path, x->path))
			p = &prev->e[i];
		d->blk = calloc(nb, sizeof(*d->blk));
		d->own = calloc((nb + 63) / 64, sizeof(*d->own));
		if (!d->blk || !d->own) {
			dst->nr = i + 1;	/* what m_free() frees */
			return -ENOMEM;
		}
		for (k = 0; k < nb; k++) {
			n = blk_len(x->size, k);
			if (p && k * BLK < p->size &&
			    blk_len(p->size, k) == n &&
			    !memcmp(p->blk[k], x->data + k * BLK, n)) {
				d->blk[k] = p->blk[k];
				continue;
			}
			d->blk[k] = malloc(n);
			if (!d->blk[k]) {
				dst->nr = i + 1;
				return -ENOMEM;
			}
			memcpy(d->blk[k], x->data + k * BLK, n);
			d->own[k / 64] |= 1ULL << (k % 64);
		}
	}
	return 0;
}

/* The snapshots are freed together: a shared block with its owner. */
static void m_free(struct model *m)
{
	unsigned int i;
	uint64_t k;

	for (i = 0; i < m->nr; i++) {
		struct ent *e = &m->e[i];

		if (!e->blk) {
			free(e->data);
			continue;
		}
		for (k = 0; k * BLK < e->size; k++)
			if (e->own && e->own[k / 64] & (1ULL << (k % 64)))
				free(e->blk[k]);
		free(e->blk);
		free(e->own);
	}
	m->nr = 0;
}

/* @p is @q or lies below it ("/A/foo" under "/A"); an empty @q holds
 * nothing. */
static bool is_under(const char *p, const char *q)
{
	size_t l = strlen(q);

	return l && !strncmp(p, q, l) && (p[l] == 0 || p[l] == '/');
}

/* @p is a direct entry of directory @d ("/": the top level). */
static bool is_child(const char *p, const char *d)
{
	size_t l = strlen(d);

	if (l == 1 && d[0] == '/')
		return p[0] == '/' && p[1] && !strchr(p + 1, '/');

	return !strncmp(p, d, l) && p[l] == '/' && p[l + 1] &&
	       !strchr(p + l + 1, '/');
}


/*
 * A read-only snapshot of the top level at @at ("/NAME"): a copy of every
 * entry below it, made before its own entry; an earlier snapshot's root
 * is copied as an empty directory (zcow shows it as the kernel does, the
 * subvolume's parent being the top level), nothing below it.
 */
static int m_snapshot(struct model *m, const char *at)
{
	unsigned int i, nr = m->nr;
	struct ent *root;

	for (i = 0; i < nr; i++) {
		const struct ent *e = &m->e[i];
		char np[PATH_LEN];
		struct ent *c;
		bool in_subvol = false;
		unsigned int j;

		for (j = 0; j < nr; j++)
			in_subvol |= m->e[j].is_subvol &&
				     strcmp(m->e[j].path, e->path) &&
				     is_under(e->path, m->e[j].path);
		if (in_subvol)
			continue;
		if (snprintf(np, sizeof(np), "%s%s", at, e->path) >= PATH_LEN)
			return -E2BIG;
		c = m_add(m, np, e->is_dir);
		if (!c)
			return -E2BIG;
		if (e->size) {
			int ret = m_resize(c, e->size);

			if (ret)
				return ret;
			memcpy(c->data, m->e[i].data, m->e[i].size);
		}
	}
	root = m_add(m, at, true);
	if (!root)
		return -E2BIG;
	root->is_subvol = true;
	return 0;
}

/* @e's other names (hard links) take its size and content. */
static int m_sync_links(struct model *m, const struct ent *e)
{
	unsigned int i;
	int ret;

	for (i = 0; i < m->nr; i++) {
		struct ent *l = &m->e[i];

		if (l == e || l->ino != e->ino || l->is_dir)
			continue;
		ret = m_resize(l, e->size);
		if (ret)
			return ret;
		if (e->size)
			memcpy(l->data, e->data, e->size);
	}
	return 0;
}

/* A new name @p for @e's inode, or (@e NULL) a symlink @p to @target. */
static int m_add_named(struct model *m, const char *p, const struct ent *e,
		       const uint8_t *target, uint64_t len)
{
	struct ent *n = m_add(m, p, false);
	int ret;

	if (!n)
		return -E2BIG;
	if (e) {	/* m_add() appends: @e stays where it is */
		n->ino = e->ino;
		m->last_ino--;
		target = e->data;
		len = e->size;
	} else {
		n->is_symlink = true;
	}
	ret = m_resize(n, len);
	if (!ret && len)
		memcpy(n->data, target, len);
	return ret;
}

/* @p with its prefix @from replaced by @to, into @np; false when @p is
 * not at or below @from. */
static bool re_root(const char *p, const char *from, const char *to,
		    char *np)
{
	size_t l = strlen(from);

	if (strncmp(p, from, l) || (p[l] && p[l] != '/'))
		return false;
	snprintf(np, PATH_LEN, "%s%s", to, p + l);
	return true;
}

/* renameat2(RENAME_EXCHANGE): the entries at and below @a and @b swap
 * places (neither lies below the other). */
static int m_exchange(struct model *m, const char *a, const char *b)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++) {
		char np[PATH_LEN];

		if (re_root(m->e[i].path, a, b, np) ||
		    re_root(m->e[i].path, b, a, np))
			memcpy(m->e[i].path, np, PATH_LEN);
	}
	return 0;
}

int zcrash_m_apply(struct model *m, const struct op *o)
{
	struct ent *e = zcrash_m_find(m, o->a), *t;
	size_t la = strlen(o->a);
	unsigned int i;
	int ret;

	switch (o->kind) {
	case OP_CREATE:
	case OP_MKDIR:
		if (!m_add(m, o->a, o->kind == OP_MKDIR))
			return -E2BIG;
		break;
	case OP_WRITE:
		if (o->len && o->off + o->len > e->size) {
			ret = m_resize(e, o->off + o->len);
			if (ret)
				return ret;
		}
		if (o->data)
			memcpy(e->data + o->off, o->data, o->len);
		else
			zcrash_fill(e->data + o->off, o->len, o->tag, 0);
		return m_sync_links(m, e);
	case OP_TRUNC:
		ret = m_resize(e, o->off);
		return ret ?: m_sync_links(m, e);
	case OP_LINK:
		return m_add_named(m, o->b, e, NULL, 0);
	case OP_SYMLINK:
		return m_add_named(m, o->a, NULL, o->value, o->value_len);
	case OP_RENAME:
		if (o->flags & ZCOW_RENAME_EXCHANGE)
			return m_exchange(m, o->a, o->b);
		t = zcrash_m_find(m, o->b);
		if (t && t != e && t->ino == e->ino)
			break;	/* two names of one inode: rename(2) keeps both */
		if (t && t != e)
			m_del(m, t);
		e = zcrash_m_find(m, o->a);
		for (i = 0; i < m->nr; i++) {
			char np[PATH_LEN];

			if (strncmp(m->e[i].path, o->a, la) ||
			    (m->e[i].path[la] && m->e[i].path[la] != '/'))
				continue;
			snprintf(np, sizeof(np), "%s%s", o->b,
				 m->e[i].path + la);
			memcpy(m->e[i].path, np, PATH_LEN);
		}
		(void)e;
		break;
	case OP_UNLINK:
	case OP_RMDIR:
		m_del(m, e);
		break;
	case OP_SNAPSHOT:
		return m_snapshot(m, o->a);
	case OP_SUBVOL_DELETE:
		for (i = m->nr; i-- > 0;)
			if (is_under(m->e[i].path, o->a))
				m_del(m, &m->e[i]);
		break;
	default:
		break;
	}
	return 0;
}

int zcrash_is_sync_op(enum op_kind k)
{
	return k == OP_FSYNC || k == OP_FDATASYNC || k == OP_SYNC;
}

/* One op against the fs. */
int zcrash_do_op(struct zcow_fs *fs, struct zdev *tgt, const struct op *o,
		 uint8_t *tmp)
{
	struct zcow_cred cred = { .uid = o->uid, .gid = o->gid };
	struct zcow_file *f = NULL;
	int ret = 0, r2;
	bool done;
	int64_t n;

	switch (o->kind) {
	case OP_CREATE:		/* workload=ops: the recorded mode, owner */
		ret = o->line ? zcow_open_as(fs, o->a, O_CREAT | O_EXCL | O_RDWR,
					     o->mode, &cred, &f) :
				zcow_create(fs, o->a, &f);
		break;
	case OP_MKDIR:
		return o->line ? zcow_mkdir_as(fs, o->a, o->mode, &cred) :
				 zcow_mkdir(fs, o->a);
	case OP_RENAME:
		return zcow_rename2(fs, o->a, o->b, o->flags);
	case OP_CHMOD:
		return zcow_chmod(fs, o->a, o->mode);
	case OP_CHOWN:
		return zcow_chown(fs, o->a, o->uid, o->gid);
	case OP_UTIMENS:
		return zcow_utimens(fs, o->a, o->ts);
	case OP_UNLINK:
		return zcow_unlink(fs, o->a);
	case OP_RMDIR:
		return zcow_rmdir(fs, o->a);
	case OP_LINK:
		return zcow_link(fs, o->a, o->b);
	case OP_SYMLINK:
		return zcow_symlink(fs, (const char *)o->value, o->a, &cred);
	case OP_SETXATTR:
		return zcow_setxattr(fs, o->a, o->b, o->value, o->value_len,
				     o->flags);
	case OP_REMOVEXATTR:
		return zcow_removexattr(fs, o->a, o->b);
	case OP_SYNC:
		return zcow_sync(fs);
	case OP_MARK:
		return 0;
	case OP_REPLACE_START:
		return tgt ? zcow_replace_start(fs, o->off, tgt) : -EINVAL;
	case OP_REPLACE_STEP:		/* one block group */
		return zcow_replace_step(fs, 0, &done);
	case OP_REPLACE_FINISH:
		return zcow_replace_finish(fs);
	case OP_SNAPSHOT:	/* off 1: writable */
		return zcow_subvol_snapshot(fs, o->a + 1, o->off != 1, NULL);
	case OP_SUBVOL_DELETE:
		return zcow_subvol_delete(fs, o->a + 1);
	case OP_TRUNC:
		if (o->line)	/* workload=ops: truncate(2) by path */
			return zcow_truncate_path(fs, o->a, o->off);
		/* fall through */
	case OP_WRITE:
	case OP_FALLOCATE:
		ret = zcow_open(fs, o->a, O_RDWR, &f);
		if (ret)
			return ret;
		if (o->kind == OP_TRUNC) {
			ret = zcow_truncate(f, o->off);
		} else if (o->kind == OP_FALLOCATE) {
			ret = zcow_fallocate(f, o->off, o->len);
		} else {
			const uint8_t *src = o->data;

			if (!src) {
				zcrash_fill(tmp, o->len, o->tag, 0);
				src = tmp;
			}
			n = zcow_pwrite(f, src, o->len, o->off);
			ret = n < 0 ? (int)n : n == (int64_t)o->len ? 0 : -EIO;
		}
		break;
	case OP_FSYNC:
	case OP_FDATASYNC:
		ret = zcow_open(fs, o->a, O_RDONLY, &f);
		if (ret)
			return ret;
		ret = o->kind == OP_FSYNC ? zcow_fsync(f) : zcow_fdatasync(f);
		break;
	}
	if (f) {
		r2 = zcow_close(f);
		if (!ret)
			ret = r2;
	}
	return ret;
}

int zcrash_add_snap(struct rec *r, uint64_t gen, bool exact,
		    const struct model *m)
{
	struct snap *s;

	if (ZCOW_GROW_ONE(&r->snaps, r->nr_snaps, &r->snaps_cap))
		return -ENOMEM;
	s = &r->snaps[r->nr_snaps++];
	memset(s, 0, sizeof(*s));
	s->gen = gen;
	s->exact = exact;
	return m_copy(&s->m, m, r->nr_snaps > 1 ? &s[-1].m : NULL);
}

void zcrash_rec_free(struct rec *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_snaps; i++)
		m_free(&r->snaps[i].m);
	free(r->snaps);
	free(r->past);
	free(r->obl);
	free(r->ret);
	free(r->gen_after);
	m_free(&r->final);
	memset(r, 0, sizeof(*r));
}

uint64_t zcrash_max_write_len(const struct wl *w)
{
	uint64_t m = 2 * BLK;
	unsigned int i;

	for (i = 0; i < w->nr; i++)
		if (w->ops[i].kind == OP_WRITE && w->ops[i].len > m)
			m = w->ops[i].len;
	return m;
}

static int add_past(struct rec *r, const struct ent *e, unsigned int b)
{
	uint64_t h = e->is_dir ? 0 : zcrash_state_hash(e->is_symlink, e->data,
							e->size);
	struct past *q;
	unsigned int i;

	for (i = 0; i < r->nr_past; i++) {
		q = &r->past[i];
		if (q->ino == e->ino && q->is_dir == e->is_dir &&
		    q->size == e->size && q->hash == h &&
		    !strcmp(q->path, e->path))
			return 0;
	}
	if (ZCOW_GROW_ONE(&r->past, r->nr_past, &r->past_cap))
		return -ENOMEM;
	q = &r->past[r->nr_past++];
	memcpy(q->path, e->path, PATH_LEN);
	q->is_dir = e->is_dir;
	q->ino = e->ino;
	q->size = e->size;
	q->hash = h;
	q->first = b;
	return 0;
}

/* Op @o completed (@b ops done): record the states it gave, every entry
 * at or below its paths. */
int zcrash_note_past(struct rec *r, const struct op *o, unsigned int b)
{
	const struct model *m = &r->final;
	const struct ent *x = zcrash_m_find((struct model *)m, o->a);
	unsigned int i;
	int ret = 0;

	/* and every other name of a file written through @o->a */
	for (i = 0; i < m->nr && !ret; i++)
		if (is_under(m->e[i].path, o->a) ||
		    is_under(m->e[i].path, o->b) ||
		    (x && !x->is_dir && m->e[i].ino == x->ino))
			ret = add_past(r, &m->e[i], b);
	return ret;
}

void zcrash_void_inode(struct rec *r, const struct op *o, unsigned int i)
{
	const struct ent *x;
	unsigned int k;

	if (o->kind != OP_WRITE && o->kind != OP_TRUNC)
		return;
	x = zcrash_m_find(&r->final, o->a);
	for (k = 0; x && k < r->nr_obl; k++)
		if (r->obl[k].ino == x->ino && !r->obl[k].is_dir &&
		    r->obl[k].void_at == NO_OP)
			r->obl[k].void_at = i;
}

static bool has_obl(const struct rec *r, unsigned int op, const char *path)
{
	unsigned int i;

	for (i = r->nr_obl; i-- && r->obl[i].op == op;)
		if (!strcmp(r->obl[i].path, path))
			return true;
	return false;
}

static int add_obl(struct rec *r, unsigned int op, const char *path,
		   const struct ent *e, bool has_data)
{
	struct oblig *o;

	if (has_obl(r, op, path))
		return 0;
	if (ZCOW_GROW_ONE(&r->obl, r->nr_obl, &r->obl_cap))
		return -ENOMEM;
	o = &r->obl[r->nr_obl++];
	memset(o, 0, sizeof(*o));
	o->op = op;
	o->void_at = NO_OP;
	o->is_absent = !e;
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (e) {
		o->ino = e->ino;
		o->is_dir = e->is_dir;
		o->has_data = has_data && !e->is_dir;
		o->size = e->size;
		o->hash = o->has_data ? zcrash_state_hash(e->is_symlink, e->data,
							  e->size) : 0;
	}
	return 0;
}

/*
 * An earlier name @path of the fsynced file @x: gone as a name of @x.
 * Another file may lie there again, reached through a directory whose
 * own rename the fsync did not make durable (a RENAME_EXCHANGE moved
 * it there, say): the path is absent or holds other than @x's content
 * (an oblig is_absent with has_data: @x's size and hash).
 */
static int add_obl_gone(struct rec *r, unsigned int op, const char *path,
			const struct ent *x)
{
	int ret = add_obl(r, op, path, NULL, false);
	struct oblig *o = &r->obl[r->nr_obl - 1];

	if (ret || strcmp(o->path, path) || !o->is_absent || o->op != op)
		return ret;
	o->has_data = !x->is_dir;
	o->size = x->size;
	o->hash = zcrash_state_hash(x->is_symlink, x->data, x->size);
	return 0;
}

/*
 * What persistence op @i (@o, acknowledged) makes durable with the
 * tree-log on (docs/crash.md, oracle 7):
 *   sync             every entry with its content; every name the
 *                    workload used so far and that is gone, absent;
 *   fsync of file X  X at its path with its content; X's earlier names
 *                    (renamed away) absent, or holding another file
 *                    (not X's content: add_obl_gone());
 *   fsync of dir D   D and each entry in it; names D held before, absent.
 * fdatasync is held to fsync's guarantees.
 */
int zcrash_note_durable(struct rec *r, const struct op *o, unsigned int i)
{
	const struct model *m = &r->final;
	const struct ent *x = NULL;
	const char *dir = NULL;		/* fsync of a directory: its path */
	bool is_all = o->kind == OP_SYNC;
	unsigned int k;
	int ret = 0;

	if (!is_all && !strcmp(o->a, "/")) {
		dir = "/";	/* the top level: no entry of the model */
	} else if (!is_all) {
		x = zcrash_m_find((struct model *)m, o->a);
		if (!x)
			return 0;
		ret = add_obl(r, i, x->path, x, true);
		if (x->is_dir)
			dir = x->path;
	}
	for (k = 0; k < m->nr && !ret; k++)
		if (is_all || (dir && is_child(m->e[k].path, dir)))
			ret = add_obl(r, i, m->e[k].path, &m->e[k], is_all);
	for (k = 0; k < r->nr_past && !ret; k++) {
		const struct past *q = &r->past[k];

		if (zcrash_m_find((struct model *)m, q->path))
			continue;
		if (is_all || dir)
			ret = is_all || is_child(q->path, dir) ?
			      add_obl(r, i, q->path, NULL, false) : 0;
		else if (q->ino == x->ino)
			ret = add_obl_gone(r, i, q->path, x);
	}
	return ret;
}

/* Op @o changes what lies at @path (or could, had it succeeded). */
bool zcrash_op_touches(const struct op *o, const char *path)
{
	switch (o->kind) {
	case OP_CREATE:
	case OP_MKDIR:
	case OP_WRITE:
	case OP_TRUNC:
	case OP_UNLINK:
	case OP_RMDIR:
	case OP_RENAME:
	case OP_SNAPSHOT:
	case OP_SUBVOL_DELETE:
		return is_under(path, o->a) || is_under(path, o->b);
	case OP_LINK:		/* the new name; the old one keeps its state */
		return is_under(path, o->b);
	case OP_SYMLINK:
		return is_under(path, o->a);
	default:
		return false;
	}
}

/* The op after which each obligation no longer holds. */
void zcrash_void_obligations(const struct wl *w, struct rec *r)
{
	unsigned int i, j;

	for (i = 0; i < r->nr_obl; i++) {
		struct oblig *o = &r->obl[i];

		/* the first such op (a write through another name of the
		 * inode may have voided it already: zcrash_void_inode()) */
		for (j = o->op + 1; j < w->nr && j < o->void_at; j++)
			if (!r->ret[j] && zcrash_op_touches(&w->ops[j], o->path))
				o->void_at = j;
	}
}


/* ---- workloads from the scenario --------------------------------- */

static void gen_fio(const struct camp *c, struct wl *w)
{
	uint64_t nf = c->nrfiles ? c->nrfiles : 1;
	uint64_t fsz = (c->size ? c->size : 1 << 20) / nf;
	uint64_t bs = c->bs ? c->bs : BLK, nblk = fsz / bs, i, f, n = 0;
	bool rnd = strstr(c->rw, "rand") != NULL;
	uint64_t rng = c->seed;
	char p[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "fio rw=%s bs=%" PRIu64 " size=%" PRIu64 " nrfiles=%" PRIu64 " fsync=%" PRIu64,
		 c->rw, bs, fsz * nf, nf, c->fsync_every);
	for (f = 0; f < nf; f++) {
		snprintf(p, sizeof(p), "/job.%" PRIu64, f);
		wl_add(w, OP_CREATE, p, NULL, 0, 0);
	}
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < nblk; i++) {
		for (f = 0; f < nf; f++) {
			uint64_t blk = i;

			if (rnd)
				blk = (rng = zcrash_mix64(rng)) % nblk;
			snprintf(p, sizeof(p), "/job.%" PRIu64, f);
			wl_add(w, OP_WRITE, p, NULL, blk * bs, bs);
			if (c->fsync_every && ++n % c->fsync_every == 0)
				wl_add(w, OP_FSYNC, p, NULL, 0, 0);
		}
	}
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
}

/* crash-commit: a multi-transaction metadata workload. */
static void gen_meta(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 60;
	uint64_t se = c->sync_every ? c->sync_every : 6, i, rng = c->seed;
	char p[PATH_LEN], q[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "meta ops=%" PRIu64 " sync_every=%" PRIu64, n, se);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		uint64_t d = i / 8, r = (rng = zcrash_mix64(rng));

		snprintf(p, sizeof(p), "/d%" PRIu64 "/f%" PRIu64, d, i);
		if (i % 8 == 0) {
			snprintf(q, sizeof(q), "/d%" PRIu64, d);
			wl_add(w, OP_MKDIR, q, NULL, 0, 0);
		}
		wl_add(w, OP_CREATE, p, NULL, 0, 0);
		wl_add(w, OP_WRITE, p, NULL, 0, BLK * (1 + r % 3));
		if (i >= 2 && r % 4 == 0) {
			snprintf(q, sizeof(q), "/d%" PRIu64 "/f%" PRIu64, (i - 2) / 8, i - 2);
			wl_add(w, OP_UNLINK, q, NULL, 0, 0);
		} else if (i >= 1 && r % 4 == 1) {
			snprintf(q, sizeof(q), "/d%" PRIu64 "/f%" PRIu64, (i - 1) / 8, i - 1);
			snprintf(p, sizeof(p), "/d%" PRIu64 "/r%" PRIu64, d, i);
			wl_add(w, OP_RENAME, q, p, 0, 0);
		}
		if ((i + 1) % se == 0)
			wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	}
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
}

/* crash-sblog: many small commits so the superblock log wraps. */
static void gen_sblog(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 40, i;
	char p[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "sblog commits=%" PRIu64, n);
	wl_add(w, OP_CREATE, "/f", NULL, 0, 0);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "/f");
		wl_add(w, OP_WRITE, p, NULL, (i % 4) * BLK, BLK);
		wl_add(w, i % 2 ? OP_FSYNC : OP_SYNC, p, NULL, 0, 0);
	}
}

/* crash-reset: fill block groups, free them, commit: zones are reset. */
static void gen_reset(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 6, i;
	uint64_t len = c->size ? c->size : 256 * 1024;
	char p[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "reset rounds=%" PRIu64 " file=%" PRIu64, n, len);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "/r%" PRIu64, i);
		wl_add(w, OP_CREATE, p, NULL, 0, 0);
		wl_add(w, OP_WRITE, p, NULL, 0, len);
		wl_add(w, OP_FSYNC, p, NULL, 0, 0);
		wl_add(w, OP_WRITE, p, NULL, 0, len);	/* overwrite: old unusable */
		wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
		if (i) {
			snprintf(p, sizeof(p), "/r%" PRIu64, i - 1);
			wl_add(w, OP_UNLINK, p, NULL, 0, 0);
			wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
		}
	}
}

/*
 * crash-reclaim: a file of @size overwritten RECLAIM_PIECE bytes at a
 * time at pseudo-random places, with a sync every sync_every writes and
 * an fsync of the file every third sync, on a device small enough that
 * free zones run out and reclaim relocates groups (data and metadata) and
 * resets their zones; a second file is rewritten whole now and then so
 * that groups empty at different speeds.  hot_writes=P: P % of the
 * overwrites go to the file's first fifth (a skew, so that hot/cold
 * separation has hot data to keep apart), the rest anywhere.
 */
#define RECLAIM_PIECE (16 * BLK)
static void gen_reclaim(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 200;
	uint64_t se = c->sync_every ? c->sync_every : 8, i, rng = c->seed;
	uint64_t len = c->size ? c->size : 1024 * 1024;
	uint64_t nblk = len / RECLAIM_PIECE;
	uint64_t nhot = nblk / 5 ? nblk / 5 : 1;

	snprintf(w->desc, sizeof(w->desc), "reclaim ops=%" PRIu64 " file=%" PRIu64 " sync_every=%" PRIu64 "%s",
		 n, len, se, c->hot_writes ? " hot_writes" : "");
	wl_add(w, OP_CREATE, "/a", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/a", NULL, 0, len);
	wl_add(w, OP_CREATE, "/b", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/b", NULL, 0, 8 * BLK);
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		uint64_t r = (rng = zcrash_mix64(rng));
		uint64_t at = (r >> 32) % 100 < c->hot_writes ?
				      r % nhot * RECLAIM_PIECE :
				      r % nblk * RECLAIM_PIECE;

		wl_add(w, OP_WRITE, "/a", NULL, at, RECLAIM_PIECE);
		if (i % 16 == 15)
			wl_add(w, OP_WRITE, "/b", NULL, 0, 8 * BLK);
		if ((i + 1) % se == 0)
			wl_add(w, (i + 1) % (3 * se) ? OP_SYNC : OP_FSYNC,
			       (i + 1) % (3 * se) ? NULL : "/a", NULL, 0, 0);
	}
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
}

/*
 * crash-replace: the file system's one device replaced while files are
 * written.  Files spread over several data groups are written and
 * synced, then the ops: overwrites of /a, new files (some fsynced), an
 * append to /b, unlinks, a sync every sync_every ops; the replace starts
 * after a third of them, copies one block group every ops/20 ops (every
 * op in a workload of fewer than 40), and finishes after two thirds
 * (copying what is left), so that writes into groups not copied yet,
 * copies, and writes cloned into copied groups interleave (a short
 * workload copies its groups early: its last ops before the finish are
 * cloned); the ops after the finish run on the target.
 */
#define REPLACE_PIECE (4 * BLK)
static void gen_replace(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 36;
	uint64_t se = c->sync_every ? c->sync_every : 6, i, rng = c->seed;
	uint64_t len = c->size ? c->size : 512 * 1024;
	uint64_t start = n / 3, finish = 2 * n / 3, step = n / 20 ? n / 20 : 1;
	uint64_t nblk = len / REPLACE_PIECE ? len / REPLACE_PIECE : 1;
	uint64_t nr_files = 0, next_gone = 0;
	char p[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "replace ops=%" PRIu64 " file=%" PRIu64 " sync_every=%" PRIu64 " start@%" PRIu64 " finish@%" PRIu64,
		 n, len, se, start, finish);
	wl_add(w, OP_MKDIR, "/d", NULL, 0, 0);
	wl_add(w, OP_CREATE, "/a", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/a", NULL, 0, len);
	wl_add(w, OP_CREATE, "/b", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/b", NULL, 0, 4 * BLK);
	wl_add(w, OP_FSYNC, "/b", NULL, 0, 0);
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		uint64_t r = (rng = zcrash_mix64(rng));

		if (i == start)		/* devid 1: mkfs's one device */
			wl_add(w, OP_REPLACE_START, NULL, NULL, 1, 0);
		else if (i == finish)
			wl_add(w, OP_REPLACE_FINISH, NULL, NULL, 0, 0);
		else if (i > start && i < finish && (i - start) % step == 0)
			wl_add(w, OP_REPLACE_STEP, NULL, NULL, 0, 0);
		switch (r % 6) {
		case 0:
		case 1:		/* overwrite acknowledged data */
			wl_add(w, OP_WRITE, "/a", NULL,
			       r / 8 % nblk * REPLACE_PIECE, REPLACE_PIECE);
			break;
		case 2:
			snprintf(p, sizeof(p), "/d/f%" PRIu64, nr_files++);
			wl_add(w, OP_CREATE, p, NULL, 0, 0);
			wl_add(w, OP_WRITE, p, NULL, 0, BLK * (1 + r / 8 % 3));
			if (r & 0x100)
				wl_add(w, OP_FSYNC, p, NULL, 0, 0);
			break;
		case 3:		/* the oldest file still there */
			if (next_gone == nr_files) {
				wl_add(w, OP_FSYNC, "/a", NULL, 0, 0);
				break;
			}
			snprintf(p, sizeof(p), "/d/f%" PRIu64, next_gone++);
			wl_add(w, OP_UNLINK, p, NULL, 0, 0);
			break;
		case 4:		/* append */
			wl_add(w, OP_WRITE, "/b", NULL, (4 + i) * BLK, BLK);
			wl_add(w, OP_FDATASYNC, "/b", NULL, 0, 0);
			break;
		default:
			wl_add(w, OP_WRITE, "/a", NULL,
			       r / 8 % nblk * REPLACE_PIECE, REPLACE_PIECE);
			wl_add(w, OP_FSYNC, "/a", NULL, 0, 0);
			break;
		}
		if ((i + 1) % se == 0)
			wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	}
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
}

/*
 * crash-faults: acknowledged files overwritten and fsynced, new files,
 * renames, unlinks, fdatasync and sync, so an injected fault lands on
 * data, metadata, log and superblock writes alike.
 */
static void gen_faults(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 24;
	uint64_t se = c->sync_every ? c->sync_every : 8, i, rng = c->seed;
	char p[PATH_LEN], q[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "faults ops=%" PRIu64 " sync_every=%" PRIu64,
		 n, se);
	wl_add(w, OP_MKDIR, "/d", NULL, 0, 0);
	wl_add(w, OP_CREATE, "/a", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/a", NULL, 0, 3 * BLK);
	wl_add(w, OP_CREATE, "/d/b", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/d/b", NULL, 0, BLK);
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		uint64_t r = (rng = zcrash_mix64(rng));

		snprintf(p, sizeof(p), "/d/f%" PRIu64, i);
		switch (r % 8) {
		case 0:
		case 1:
			wl_add(w, OP_CREATE, p, NULL, 0, 0);
			wl_add(w, OP_WRITE, p, NULL, 0, BLK * (1 + r / 8 % 4));
			if (r & 0x100)
				wl_add(w, OP_FSYNC, p, NULL, 0, 0);
			break;
		case 2:		/* overwrite acknowledged data */
			wl_add(w, OP_WRITE, "/a", NULL, (r / 8 % 4) * BLK, BLK);
			wl_add(w, OP_FSYNC, "/a", NULL, 0, 0);
			break;
		case 3:
			wl_add(w, OP_WRITE, "/d/b", NULL, (i % 5) * BLK, BLK);
			wl_add(w, OP_FDATASYNC, "/d/b", NULL, 0, 0);
			break;
		case 4:		/* rename an earlier file */
			snprintf(p, sizeof(p), "/d/f%" PRIu64, i / 2);
			snprintf(q, sizeof(q), "/d/g%" PRIu64, i);
			wl_add(w, OP_RENAME, p, q, 0, 0);
			wl_add(w, OP_FSYNC, "/d", NULL, 0, 0);
			break;
		case 5:
			snprintf(p, sizeof(p), "/d/f%" PRIu64, i / 3);
			wl_add(w, OP_UNLINK, p, NULL, 0, 0);
			break;
		case 6:
			wl_add(w, OP_TRUNC, "/a", NULL, BLK * (1 + r / 8 % 3), 0);
			break;
		default:
			wl_add(w, OP_WRITE, "/a", NULL, 0, 2 * BLK);
			break;
		}
		if ((i + 1) % se == 0)
			wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	}
	/* no final sync: at the end cut, what the last fsyncs acknowledged
	 * lives in the tree-log (treelog=on) */
	wl_add(w, OP_WRITE, "/d/b", NULL, 0, 2 * BLK);
	wl_add(w, OP_FSYNC, "/d/b", NULL, 0, 0);
	wl_add(w, OP_FSYNC, "/a", NULL, 0, 0);
}

/*
 * crash-snapshot: files around snapshots of the top level (/s1 writable,
 * written into now and then once it is there).
 * Twenty small files (with 4 KiB nodes the fs tree has several levels),
 * then ops: overwrites and appends of /a, new files, renames, unlinks, an
 * fsync now and then, a sync every sync_every ops; a snapshot /s0, /s1,
 * ... every ops/3 ops, and after the second one the first deleted, so
 * that cuts land in the copy-on-write of shared nodes (their backrefs
 * changing), in a snapshot's two commits and in a snapshot's drop.
 */
static void gen_snapshot(const struct camp *c, struct wl *w)
{
	uint64_t n = c->quick && c->qops ? c->qops : c->ops ? c->ops : 24;
	uint64_t se = c->sync_every ? c->sync_every : 6, i, rng = c->seed;
	uint64_t every = n / 3 ? n / 3 : 1, nr_snaps = 0;
	char p[PATH_LEN], q[PATH_LEN];

	snprintf(w->desc, sizeof(w->desc), "snapshot ops=%" PRIu64 " sync_every=%" PRIu64 " snapshot_every=%" PRIu64,
		 n, se, every);
	wl_add(w, OP_MKDIR, "/d", NULL, 0, 0);
	wl_add(w, OP_CREATE, "/a", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/a", NULL, 0, 4 * BLK);
	for (i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "/d/f%02" PRIu64, i);
		wl_add(w, OP_CREATE, p, NULL, 0, 0);
		wl_add(w, OP_WRITE, p, NULL, 0, BLK);
	}
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	for (i = 0; i < n; i++) {
		uint64_t r = (rng = zcrash_mix64(rng));

		if (i % every == every - 1) {
			snprintf(p, sizeof(p), "/s%" PRIu64, nr_snaps++);
			/* /s1 writable */
			wl_add(w, OP_SNAPSHOT, p, NULL, nr_snaps == 2, 0);
			if (nr_snaps == 2)
				wl_add(w, OP_SUBVOL_DELETE, "/s0", NULL, 0, 0);
		}
		/* once /s1 is there: now and then a write into it */
		if (nr_snaps >= 2 && r % 3 == 0) {
			snprintf(p, sizeof(p), "/s1/d/w%" PRIu64, i);
			wl_add(w, OP_CREATE, p, NULL, 0, 0);
			wl_add(w, OP_WRITE, p, NULL, 0, BLK);
			wl_add(w, OP_WRITE, "/s1/a", NULL, (r / 8 % 4) * BLK,
			       BLK);
			if (r & 0x200)
				wl_add(w, OP_FSYNC, "/s1/a", NULL, 0, 0);
		}
		switch (r % 6) {
		case 0:		/* overwrite acknowledged data */
			wl_add(w, OP_WRITE, "/a", NULL, (r / 8 % 4) * BLK,
			       BLK);
			break;
		case 1:
			snprintf(p, sizeof(p), "/d/f%02" PRIu64, r / 8 % 20);
			wl_add(w, OP_WRITE, p, NULL, 0, 2 * BLK);
			if (r & 0x100)
				wl_add(w, OP_FSYNC, p, NULL, 0, 0);
			break;
		case 2:
			snprintf(p, sizeof(p), "/d/n%" PRIu64, i);
			wl_add(w, OP_CREATE, p, NULL, 0, 0);
			wl_add(w, OP_WRITE, p, NULL, 0, BLK);
			break;
		case 3:
			snprintf(p, sizeof(p), "/d/f%02" PRIu64, r / 8 % 20);
			snprintf(q, sizeof(q), "/d/g%" PRIu64, i);
			wl_add(w, OP_RENAME, p, q, 0, 0);
			break;
		case 4:
			snprintf(p, sizeof(p), "/d/f%02" PRIu64, r / 8 % 20);
			wl_add(w, OP_UNLINK, p, NULL, 0, 0);
			break;
		default:	/* append */
			wl_add(w, OP_WRITE, "/a", NULL, (4 + i) * BLK, BLK);
			wl_add(w, OP_FDATASYNC, "/a", NULL, 0, 0);
			break;
		}
		if ((i + 1) % se == 0)
			wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	}
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
}

/* crash-fsync (ACE): 14 op instances, sequences of 1..len, 6 persistence
 * variants. */
#define ACE_OPS 14
#define ACE_PERS 6
static void ace_op(struct wl *w, unsigned int k)
{
	static const char *const f[2] = { "/A/foo", "/B/bar" };
	const char *x = f[k & 1], *y = f[!(k & 1)];

	switch (k >> 1) {
	case 0: wl_add(w, OP_CREATE, x, NULL, 0, 0); break;
	case 1: wl_add(w, OP_WRITE, x, NULL, 2 * BLK, BLK); break;	/* append */
	case 2: wl_add(w, OP_WRITE, x, NULL, 0, BLK); break;		/* overwrite */
	case 3: wl_add(w, OP_TRUNC, x, NULL, 2048, 0); break;
	case 4: wl_add(w, OP_RENAME, x, y, 0, 0); break;
	case 5: wl_add(w, OP_UNLINK, x, NULL, 0, 0); break;
	default: wl_add(w, OP_MKDIR, k & 1 ? "/B/C" : "/A/C", NULL, 0, 0); break;
	}
}

static uint64_t ace_count(uint64_t len)
{
	uint64_t n = 0, p = 1, l;

	for (l = 1; l <= len; l++)
		n += (p *= ACE_OPS);
	return n * ACE_PERS;
}

static void gen_ace(uint64_t idx, struct wl *w)
{
	static const char *const pers[ACE_PERS] = {
		"fsync /A/foo", "fsync /B/bar", "fdatasync /A/foo",
		"fdatasync /B/bar", "fsync /A", "sync"
	};
	unsigned int pv = idx % ACE_PERS, seq[3], len = 1, i;
	uint64_t s = idx / ACE_PERS, lim = ACE_OPS;
	size_t dl;

	while (s >= lim) {
		s -= lim;
		lim *= ACE_OPS;
		len++;
	}
	for (i = 0; i < len; i++) {
		seq[len - 1 - i] = s % ACE_OPS;
		s /= ACE_OPS;
	}
	wl_add(w, OP_MKDIR, "/A", NULL, 0, 0);
	wl_add(w, OP_MKDIR, "/B", NULL, 0, 0);
	wl_add(w, OP_CREATE, "/A/foo", NULL, 0, 0);
	wl_add(w, OP_WRITE, "/A/foo", NULL, 0, 2 * BLK);
	wl_add(w, OP_SYNC, NULL, NULL, 0, 0);
	wl_add(w, OP_MARK, NULL, NULL, 0, 0);
	snprintf(w->desc, sizeof(w->desc), "ace");
	for (i = 0; i < len; i++) {
		ace_op(w, seq[i]);
		if (w->err)
			return;
		dl = strlen(w->desc);
		snprintf(w->desc + dl, sizeof(w->desc) - dl, " %s %s",
			 op_names[w->ops[w->nr - 1].kind], w->ops[w->nr - 1].a);
	}
	switch (pv) {
	case 0: wl_add(w, OP_FSYNC, "/A/foo", NULL, 0, 0); break;
	case 1: wl_add(w, OP_FSYNC, "/B/bar", NULL, 0, 0); break;
	case 2: wl_add(w, OP_FDATASYNC, "/A/foo", NULL, 0, 0); break;
	case 3: wl_add(w, OP_FDATASYNC, "/B/bar", NULL, 0, 0); break;
	case 4: wl_add(w, OP_FSYNC, "/A", NULL, 0, 0); break;
	default: wl_add(w, OP_SYNC, NULL, NULL, 0, 0); break;
	}
	dl = strlen(w->desc);
	snprintf(w->desc + dl, sizeof(w->desc) - dl, "; %s", pers[pv]);
}

uint64_t zcrash_nr_workloads(const struct camp *c)
{
	if (!strcmp(c->workload, "faults"))
		return c->nr_ft;
	if (!strcmp(c->workload, "ace")) {
		uint64_t n = ace_count(c->quick && c->qace_len ? c->qace_len :
				       c->ace_len ? c->ace_len : 2);

		if (c->quick && c->qworkloads && c->qworkloads < n)
			return c->qworkloads;
		return n;
	}
	return 1;
}

void zcrash_wl_fill(struct wl *w)
{
	uint64_t total = 0, pos = 0;
	unsigned int i;

	for (i = 0; i < w->nr; i++)
		if (w->ops[i].kind == OP_WRITE)
			total += w->ops[i].len;
	if (!total || total > ZCRASH_FILL_MAX || w->fill)
		return;
	w->fill = malloc(total);
	if (!w->fill)
		return;
	for (i = 0; i < w->nr; i++) {
		struct op *o = &w->ops[i];

		if (o->kind != OP_WRITE)
			continue;
		zcrash_fill(w->fill + pos, o->len, o->tag, 0);
		o->data = w->fill + pos;
		pos += o->len;
	}
}

void zcrash_wl_free(struct wl *w)
{
	free(w->ops);
	free(w->fill);
	w->ops = NULL;
	w->fill = NULL;
}

/* Workload @idx; quick ACE takes an evenly spread sample. */
int zcrash_make_wl(const struct camp *c, uint64_t idx, struct wl *w)
{
	memset(w, 0, sizeof(*w));
	if (!strcmp(c->workload, "ace")) {
		uint64_t all = ace_count(c->quick && c->qace_len ? c->qace_len :
					 c->ace_len ? c->ace_len : 2);
		uint64_t n = zcrash_nr_workloads(c);

		gen_ace(n < all ? idx * all / n : idx, w);
	} else if (!strcmp(c->workload, "meta")) {
		gen_meta(c, w);
	} else if (!strcmp(c->workload, "sblog")) {
		gen_sblog(c, w);
	} else if (!strcmp(c->workload, "reset")) {
		gen_reset(c, w);
	} else if (!strcmp(c->workload, "reclaim")) {
		gen_reclaim(c, w);
	} else if (!strcmp(c->workload, "replace")) {
		gen_replace(c, w);
	} else if (!strcmp(c->workload, "snapshot")) {
		gen_snapshot(c, w);
	} else if (!strcmp(c->workload, "ops")) {
		/* the ops file's, translated once at load (crash_ops.c) */
		w->ops = malloc(c->ops_wl.nr * sizeof(*w->ops) + 1);
		if (!w->ops)
			return -ENOMEM;
		memcpy(w->ops, c->ops_wl.ops, c->ops_wl.nr * sizeof(*w->ops));
		w->nr = w->cap = c->ops_wl.nr;
		snprintf(w->desc, sizeof(w->desc), "%s", c->ops_wl.desc);
	} else if (!strcmp(c->workload, "faults")) {
		gen_faults(c, w);
		if (idx < c->nr_ft) {
			size_t l = strlen(w->desc);

			w->ft = &c->ft[idx];
			snprintf(w->desc + l, sizeof(w->desc) - l, "; %s",
				 w->ft->name);
		}
	} else {
		gen_fio(c, w);
	}
	return w->err;
}

/* ---- fault trials (workload=faults) ------------------------------ */

/* Commands of the fault-free run (after its mount) that @f matches. */
static uint64_t nr_matching(const struct rec *r, const struct zsim_fault *f)
{
	uint64_t n = 0;
	int k, op;

	for (k = 0; k < ZDEV_NR_CLASSES; k++)
		for (op = 0; op < ZDEV_NR_OPS; op++) {
			bool m = false;

			if (op == ZDEV_OP_REPORT)
				continue;
			switch (f->match) {
			case ZSIM_MATCH_OP:
				m = (int)f->op == op;
				break;
			case ZSIM_MATCH_CLASS:
				m = (int)f->cls == k && op != ZDEV_OP_READ;
				break;
			case ZSIM_MATCH_CLASS_OP:
				m = (int)f->cls == k && (int)f->op == op;
				break;
			case ZSIM_MATCH_ANY:
				m = true;
				break;
			}
			if (m)
				n += r->cmds[k][op];
		}
	return n;
}

static struct ftrial *ft_add(struct camp *c, enum ft_kind kind)
{
	struct ftrial *t;

	if (ZCOW_GROW_ONE(&c->ft, c->nr_ft, &c->ft_cap))
		return NULL;
	t = &c->ft[c->nr_ft++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	return t;
}

/*
 * The trials of a faults campaign, from the fault-free run @r: each
 * fail=WHAT swept over the ordinals 1..(WHAT's commands in @r) by
 * fail_step; each fail_rate x rate_seeds; each zone_fail condition x
 * every zone_step-th zone x zone_points command counts spread over @r.
 */
int zcrash_build_trials(struct camp *c, const struct rec *r)
{
	uint64_t step = c->quick && c->qfail_step ? c->qfail_step :
			c->fail_step ? c->fail_step : 1;
	const uint64_t *rs = c->quick && c->nr_qrate_seeds ? c->qrate_seeds :
			     c->rate_seeds;
	unsigned int nr_rs = c->quick && c->nr_qrate_seeds ? c->nr_qrate_seeds :
			     c->nr_rate_seeds;
	uint64_t zp = c->quick && c->qzone_points ? c->qzone_points :
		      c->zone_points ? c->zone_points : 2;
	uint64_t zstep = c->quick && c->qzone_step ? c->qzone_step :
			 c->zone_step ? c->zone_step : 1;
	struct zsim_fault f;
	struct ftrial *t;
	char what[80];
	uint64_t n, i, z;
	unsigned int k, si;
	int ci;

	free(c->ft);
	c->ft = NULL;
	c->nr_ft = c->ft_cap = 0;
	for (k = 0; k < c->nr_fail; k++) {
		snprintf(what, sizeof(what), "%s:1", c->fail[k]);
		if (zsim_parse_fault(what, false, &f))
			continue;	/* checked at load */
		n = nr_matching(r, &f);
		for (i = 1; i <= n; i += step) {
			t = ft_add(c, FT_FAIL);
			if (!t)
				return -ENOMEM;
			t->f = f;
			t->f.ordinal = i;
			snprintf(t->name, sizeof(t->name), "fail=%s:%" PRIu64,
				 c->fail[k], i);
		}
	}
	for (k = 0; k < c->nr_rates; k++) {
		if (zsim_parse_fault(c->rates[k], true, &f))
			continue;
		for (si = 0; si < nr_rs; si++) {
			t = ft_add(c, FT_RATE);
			if (!t)
				return -ENOMEM;
			t->f = f;
			t->seed = rs[si];
			snprintf(t->name, sizeof(t->name),
				 "fail_rate=%s seed=%" PRIu64, c->rates[k],
				 rs[si]);
		}
	}
	for (ci = 0; ci < c->nr_zone_conds; ci++)
		for (z = 0; z < r->nr_zones; z += zstep)
			for (i = 0; i < zp; i++) {
				t = ft_add(c, FT_ZONE);
				if (!t)
					return -ENOMEM;
				t->cond = c->zone_conds[ci];
				t->zno = z;
				t->at_cmd = 1 + i * r->nr_cmds / zp;
				snprintf(t->name, sizeof(t->name),
					 "zone_fail=%s:%" PRIu64 "@+%" PRIu64,
					 t->cond == ZDEV_COND_OFFLINE ?
					 "offline" : "readonly", z, t->at_cmd);
			}
	return 0;
}
