// SPDX-License-Identifier: MIT
/*
 * zcrash: crash-consistency campaigns (harness/crash.h, docs/crash.md).
 *
 * Every crash state is built in-process on a fresh simulated device: the
 * device spec is opened, formatted and the workload replayed up to the
 * armed cut.  A fresh simulator plus mkfs costs a few microseconds (the
 * simulator stores data sparsely), so no image snapshot is needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "prng.h"
#include "fs.h"
#include "zdev.h"
#include "zsim.h"

#define BLK 4096u
#define MAX_ENT 128
#define PATH_LEN 64
#define MAX_POINTS_SPEC 16

/* ---- workload ---------------------------------------------------- */

enum op_kind {
	OP_CREATE, OP_MKDIR, OP_WRITE, OP_TRUNC, OP_RENAME, OP_UNLINK,
	OP_FSYNC, OP_FDATASYNC, OP_SYNC, OP_MARK
};

static const char *const op_names[] = {
	"create", "mkdir", "write", "truncate", "rename", "unlink",
	"fsync", "fdatasync", "sync", "mark"
};

struct op {
	enum op_kind kind;
	char a[PATH_LEN], b[PATH_LEN];
	uint64_t off, len;	/* write: range; trunc: size in off */
	uint64_t tag;		/* write: content seed */
};

/* One fault trial of a workload=faults campaign (armed after the
 * workload's mount, so ordinals count the workload's commands). */
enum ft_kind { FT_NONE, FT_FAIL, FT_RATE, FT_ZONE };

struct ftrial {
	enum ft_kind kind;
	struct zsim_fault f;		/* FT_FAIL, FT_RATE */
	uint64_t seed;			/* FT_RATE: the fault PRNG's seed */
	uint64_t zno, at_cmd;		/* FT_ZONE: zone, before command */
	enum zdev_zone_cond cond;	/* FT_ZONE */
	char name[48];
};

struct wl {
	struct op *ops;
	unsigned int nr, cap;
	char desc[160];
	const struct ftrial *ft;	/* NULL: no faults */
};

static void wl_add(struct wl *w, enum op_kind k, const char *a, const char *b,
		   uint64_t off, uint64_t len)
{
	struct op *o;

	if (w->nr == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		w->ops = realloc(w->ops, w->cap * sizeof(*w->ops));
		if (!w->ops)
			abort();
	}
	o = &w->ops[w->nr++];
	memset(o, 0, sizeof(*o));
	o->kind = k;
	snprintf(o->a, sizeof(o->a), "%s", a ? a : "");
	snprintf(o->b, sizeof(o->b), "%s", b ? b : "");
	o->off = off;
	o->len = len;
	o->tag = w->nr * ZCOW_GOLDEN64 + 17;
}

static uint64_t mix64(uint64_t z)
{
	return zcow_mix64(z + ZCOW_GOLDEN64);
}

static void fill(uint8_t *buf, uint64_t len, uint64_t tag, uint64_t off)
{
	uint64_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = mix64(tag ^ ((off + i) * 0x100000001b3ULL));

		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* ---- the model --------------------------------------------------- */

struct ent {
	char path[PATH_LEN];
	bool is_dir;
	uint64_t ino;		/* the model's own number: kept by rename */
	uint8_t *data;
	uint64_t size, cap;
};

struct model {
	struct ent e[MAX_ENT];
	unsigned int nr;
	uint64_t last_ino;
};

static struct ent *m_find(struct model *m, const char *p)
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
		abort();
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

static void m_resize(struct ent *e, uint64_t size)
{
	if (size > e->cap) {
		uint64_t cap = size + BLK;

		e->data = realloc(e->data, cap);
		if (!e->data)
			abort();
		memset(e->data + e->cap, 0, cap - e->cap);
		e->cap = cap;
	}
	if (size < e->size)
		memset(e->data + size, 0, e->size - size);
	e->size = size;
}

static void m_copy(struct model *dst, const struct model *src)
{
	unsigned int i;

	dst->nr = src->nr;
	dst->last_ino = src->last_ino;
	for (i = 0; i < src->nr; i++) {
		dst->e[i] = src->e[i];
		dst->e[i].data = NULL;
		dst->e[i].cap = 0;
		if (src->e[i].size) {
			dst->e[i].data = malloc(src->e[i].size);
			if (!dst->e[i].data)
				abort();
			memcpy(dst->e[i].data, src->e[i].data, src->e[i].size);
			dst->e[i].cap = src->e[i].size;
		}
	}
}

static void m_free(struct model *m)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		free(m->e[i].data);
	m->nr = 0;
}

/* @p is @q or lies below it ("/A/foo" under "/A"); an empty @q holds
 * nothing. */
static bool is_under(const char *p, const char *q)
{
	size_t l = strlen(q);

	return l && !strncmp(p, q, l) && (p[l] == 0 || p[l] == '/');
}

/* @p is a direct entry of directory @d. */
static bool is_child(const char *p, const char *d)
{
	size_t l = strlen(d);

	return !strncmp(p, d, l) && p[l] == '/' && p[l + 1] &&
	       !strchr(p + l + 1, '/');
}

/* Content hash of a file state (size included). */
static uint64_t hash_bytes(const uint8_t *p, uint64_t n)
{
	uint64_t h = mix64(n), i, v;

	for (i = 0; i < n; i += 8) {
		v = 0;
		memcpy(&v, p + i, n - i < 8 ? n - i : 8);
		h = mix64(h ^ v);
	}
	return h;
}

static void m_apply(struct model *m, const struct op *o, uint8_t *tmp)
{
	struct ent *e = m_find(m, o->a), *t;
	size_t la = strlen(o->a);
	unsigned int i;

	switch (o->kind) {
	case OP_CREATE:
		m_add(m, o->a, false);
		break;
	case OP_MKDIR:
		m_add(m, o->a, true);
		break;
	case OP_WRITE:
		if (o->off + o->len > e->size)
			m_resize(e, o->off + o->len);
		fill(tmp, o->len, o->tag, 0);
		memcpy(e->data + o->off, tmp, o->len);
		break;
	case OP_TRUNC:
		m_resize(e, o->off);
		break;
	case OP_RENAME:
		t = m_find(m, o->b);
		if (t && t != e)
			m_del(m, t);
		e = m_find(m, o->a);
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
		m_del(m, e);
		break;
	default:
		break;
	}
}

/* ---- running a workload ------------------------------------------ */

struct snap {
	uint64_t gen;
	bool exact;		/* taken at a commit that ended an op */
	struct model m;
};

/*
 * A state one path had at an op boundary (treelog=on, oracle 8).  Op
 * boundary b is "after b ops"; the recovered state may only hold states
 * reached by the op in progress at the cut.
 */
struct past {
	char path[PATH_LEN];
	bool is_dir;
	uint64_t ino, size, hash;
	unsigned int first;	/* first op boundary with this state */
};

/*
 * What one acknowledged fsync, fdatasync or sync made durable
 * (treelog=on, oracle 7): @path present (a file with @size and @hash when
 * has_data), or absent.  It holds while no later op touched @path
 * (wrote it, renamed or removed it or a directory above it, created it):
 * up to op @void_at, exclusive.
 */
struct oblig {
	unsigned int op;	/* the fsync/fdatasync/sync */
	unsigned int void_at;	/* first later op touching @path; NO_OP */
	bool is_absent;
	bool is_dir;
	bool has_data;
	char path[PATH_LEN];
	uint64_t size, hash;
};

#define NO_OP UINT32_MAX	/* sentinel: no op (never voided) */

struct rec {			/* the uncut run of one workload */
	int *ret;		/* per op */
	uint64_t *gen_after;	/* fs generation after each op */
	struct snap *snaps;
	unsigned int nr_snaps;
	struct past *past;	/* every path state, deduplicated */
	unsigned int nr_past, past_cap;
	struct oblig *obl;	/* by op, ascending */
	unsigned int nr_obl, obl_cap;
	uint64_t mount_gen;
	uint64_t persist, mark_persist;
	uint64_t cls[ZDEV_NR_CLASSES];
	uint64_t resets, finishes, flushes, zone_ops;
	uint64_t cmds[ZDEV_NR_CLASSES][ZDEV_NR_OPS];	/* after the mount */
	uint64_t nr_cmds;		/* zsim_nr_commands() after the mount */
	uint64_t nr_zones;
	struct model final;
};

struct camp {
	char path[512], name[64];
	char spec[512];
	char workload[16];
	uint64_t seed;
	uint32_t nodesize;
	/* fio */
	char rw[16];
	uint64_t bs, size, nrfiles, fsync_every;
	/* generators */
	uint64_t ops, sync_every, ace_len;
	char points[MAX_POINTS_SPEC][64];
	unsigned int nr_points;
	char qpoints[MAX_POINTS_SPEC][64];
	unsigned int nr_qpoints;
	int loss[ZSIM_NR_LOSS], nr_loss, qloss[ZSIM_NR_LOSS], nr_qloss;
	uint64_t seeds[16], qseeds[16];
	unsigned int nr_seeds, nr_qseeds;
	uint64_t qops, qace_len, qworkloads;
	bool quick;
	unsigned int treelog;	/* ZCRASH_TREELOG_* mask */
	int replay_cuts, qreplay_cuts;	/* enum replay_cuts; -1 = unset */
	/* workload=faults: the sweep (docs/crash.md) */
	char fail[MAX_POINTS_SPEC][64];	/* WHAT of fail=WHAT:N, swept */
	unsigned int nr_fail;
	uint64_t fail_step, qfail_step;
	char rates[MAX_POINTS_SPEC][64];	/* fail_rate= values */
	unsigned int nr_rates;
	uint64_t rate_seeds[16], qrate_seeds[16];
	unsigned int nr_rate_seeds, nr_qrate_seeds;
	int zone_conds[2], nr_zone_conds;
	uint64_t zone_points, qzone_points, zone_step, qzone_step;
	struct ftrial *ft;		/* the trials of the current mode */
	uint64_t nr_ft;
};

/* Recovery cuts: which crash states get their recovery mount cut again
 * at every persist point it issues (mount, log replay, first commit). */
enum replay_cuts {
	RC_OFF,
	RC_LOG,			/* states whose durable superblock has a log */
	RC_EVERY,		/* every state */
};

static const char *const rc_names[] = { "off", "log", "every" };

static int parse_treelog(const char *v, unsigned int *mask_ret)
{
	if (!strcmp(v, "on"))
		*mask_ret = ZCRASH_TREELOG_ON;
	else if (!strcmp(v, "off"))
		*mask_ret = ZCRASH_TREELOG_OFF;
	else if (!strcmp(v, "both"))
		*mask_ret = ZCRASH_TREELOG_BOTH;
	else
		return -EINVAL;
	return 0;
}

static int parse_rc(const char *v, int *rc_ret)
{
	int i;

	for (i = 0; i <= RC_EVERY; i++)
		if (!strcmp(v, rc_names[i])) {
			*rc_ret = i;
			return 0;
		}
	return -EINVAL;
}

static int is_sync_op(enum op_kind k)
{
	return k == OP_FSYNC || k == OP_FDATASYNC || k == OP_SYNC;
}

/* One op against the fs. */
static int do_op(struct zcow_fs *fs, const struct op *o, uint8_t *tmp)
{
	struct zcow_file *f = NULL;
	int ret = 0, r2;
	int64_t n;

	switch (o->kind) {
	case OP_CREATE:
		ret = zcow_create(fs, o->a, &f);
		break;
	case OP_MKDIR:
		return zcow_mkdir(fs, o->a);
	case OP_RENAME:
		return zcow_rename(fs, o->a, o->b);
	case OP_UNLINK:
		return zcow_unlink(fs, o->a);
	case OP_SYNC:
		return zcow_sync(fs);
	case OP_MARK:
		return 0;
	case OP_WRITE:
	case OP_TRUNC:
		ret = zcow_open(fs, o->a, O_RDWR, &f);
		if (ret)
			return ret;
		if (o->kind == OP_TRUNC) {
			ret = zcow_truncate(f, o->off);
		} else {
			fill(tmp, o->len, o->tag, 0);
			n = zcow_pwrite(f, tmp, o->len, o->off);
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

static int fresh_dev(const struct camp *c, struct zdev **dev_ret)
{
	struct zcow_mkfs_opts mo = { .seed = c->seed, .nodesize = c->nodesize };
	struct zdev *dev = NULL;
	int ret;

	ret = zdev_open(c->spec, &dev);
	if (ret)
		return ret;
	if (!zsim_from_dev(dev)) {
		zdev_close(dev);
		return -EINVAL;
	}
	ret = zcow_mkfs(dev, &mo);
	if (ret) {
		zdev_close(dev);
		return ret;
	}
	*dev_ret = dev;
	return 0;
}

/* Arm fault trial @ft (NULL: none) on a device just after its mount. */
static int arm_trial(struct zdev *dev, const struct ftrial *ft)
{
	struct zsim *sim = zsim_from_dev(dev);

	if (!ft)
		return 0;
	switch (ft->kind) {
	case FT_NONE:
		return 0;
	case FT_RATE:
		zsim_reseed(sim, ft->seed);
		/* fall through */
	case FT_FAIL:
		return zsim_add_fault(sim, &ft->f);
	case FT_ZONE:
		return zsim_fail_zone_at(sim, ft->zno * dev->info.zone_size,
					 ft->cond,
					 zsim_nr_commands(sim) + ft->at_cmd);
	}
	return -EINVAL;
}

static void add_snap(struct rec *r, uint64_t gen, bool exact,
		     const struct model *m)
{
	struct snap *s;

	r->snaps = realloc(r->snaps, (r->nr_snaps + 1) * sizeof(*r->snaps));
	if (!r->snaps)
		abort();
	s = &r->snaps[r->nr_snaps++];
	s->gen = gen;
	s->exact = exact;
	m_copy(&s->m, m);
}

static void rec_free(struct rec *r)
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

static uint64_t max_write_len(const struct wl *w)
{
	uint64_t m = 2 * BLK;
	unsigned int i;

	for (i = 0; i < w->nr; i++)
		if (w->ops[i].kind == OP_WRITE && w->ops[i].len > m)
			m = w->ops[i].len;
	return m;
}

static void add_past(struct rec *r, const struct ent *e, unsigned int b)
{
	uint64_t h = e->is_dir ? 0 : hash_bytes(e->data, e->size);
	struct past *q;
	unsigned int i;

	for (i = 0; i < r->nr_past; i++) {
		q = &r->past[i];
		if (q->ino == e->ino && q->is_dir == e->is_dir &&
		    q->size == e->size && q->hash == h &&
		    !strcmp(q->path, e->path))
			return;
	}
	if (r->nr_past == r->past_cap) {
		r->past_cap = r->past_cap ? 2 * r->past_cap : 64;
		r->past = realloc(r->past, r->past_cap * sizeof(*r->past));
		if (!r->past)
			abort();
	}
	q = &r->past[r->nr_past++];
	memcpy(q->path, e->path, PATH_LEN);
	q->is_dir = e->is_dir;
	q->ino = e->ino;
	q->size = e->size;
	q->hash = h;
	q->first = b;
}

/* Op @o completed (@b ops done): record the states it gave, every entry
 * at or below its paths. */
static void note_past(struct rec *r, const struct op *o, unsigned int b)
{
	const struct model *m = &r->final;
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		if (is_under(m->e[i].path, o->a) ||
		    is_under(m->e[i].path, o->b))
			add_past(r, &m->e[i], b);
}

static bool has_obl(const struct rec *r, unsigned int op, const char *path)
{
	unsigned int i;

	for (i = r->nr_obl; i-- && r->obl[i].op == op;)
		if (!strcmp(r->obl[i].path, path))
			return true;
	return false;
}

static void add_obl(struct rec *r, unsigned int op, const char *path,
		    const struct ent *e, bool has_data)
{
	struct oblig *o;

	if (has_obl(r, op, path))
		return;
	if (r->nr_obl == r->obl_cap) {
		r->obl_cap = r->obl_cap ? 2 * r->obl_cap : 64;
		r->obl = realloc(r->obl, r->obl_cap * sizeof(*r->obl));
		if (!r->obl)
			abort();
	}
	o = &r->obl[r->nr_obl++];
	memset(o, 0, sizeof(*o));
	o->op = op;
	o->void_at = NO_OP;
	o->is_absent = !e;
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (e) {
		o->is_dir = e->is_dir;
		o->has_data = has_data && !e->is_dir;
		o->size = e->size;
		o->hash = o->has_data ? hash_bytes(e->data, e->size) : 0;
	}
}

/*
 * What persistence op @i (@o, acknowledged) makes durable with the
 * tree-log on (docs/crash.md, oracle 7):
 *   sync             every entry with its content; every name the
 *                    workload used so far and that is gone, absent;
 *   fsync of file X  X at its path with its content; X's earlier names
 *                    (renamed away) absent;
 *   fsync of dir D   D and each entry in it; names D held before, absent.
 * fdatasync is held to fsync's guarantees.
 */
static void note_durable(struct rec *r, const struct op *o, unsigned int i)
{
	const struct model *m = &r->final;
	const struct ent *x = NULL;
	unsigned int k;

	if (o->kind != OP_SYNC) {
		x = m_find((struct model *)m, o->a);
		if (!x)
			return;
		add_obl(r, i, x->path, x, true);
	}
	for (k = 0; k < m->nr; k++)
		if (!x || (x->is_dir && is_child(m->e[k].path, x->path)))
			add_obl(r, i, m->e[k].path, &m->e[k], !x);
	for (k = 0; k < r->nr_past; k++) {
		const struct past *q = &r->past[k];

		if (m_find((struct model *)m, q->path))
			continue;
		if (!x || (x->is_dir ? is_child(q->path, x->path) :
			   q->ino == x->ino))
			add_obl(r, i, q->path, NULL, false);
	}
}

/* Op @o changes what lies at @path (or could, had it succeeded). */
static bool op_touches(const struct op *o, const char *path)
{
	switch (o->kind) {
	case OP_CREATE:
	case OP_MKDIR:
	case OP_WRITE:
	case OP_TRUNC:
	case OP_UNLINK:
	case OP_RENAME:
		return is_under(path, o->a) || is_under(path, o->b);
	default:
		return false;
	}
}

/* The op after which each obligation no longer holds. */
static void void_obligations(const struct wl *w, struct rec *r)
{
	unsigned int i, j;

	for (i = 0; i < r->nr_obl; i++) {
		struct oblig *o = &r->obl[i];

		for (j = o->op + 1; j < w->nr && o->void_at == NO_OP; j++)
			if (!r->ret[j] && op_touches(&w->ops[j], o->path))
				o->void_at = j;
	}
}

/* The uncut run: counts and the model at every commit, every path state
 * and what each persistence op made durable. */
static int record(const struct camp *c, const struct wl *w,
		  const struct zcow_mount_opts *mo, struct rec *r,
		  uint8_t *tmp, char *err, size_t elen)
{
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	struct zdev_stats s0, s1, sm;
	struct zsim *sim;
	uint64_t p0, gen;
	unsigned int i;
	int ret, k;

	memset(r, 0, sizeof(*r));
	r->ret = calloc(w->nr + 1, sizeof(*r->ret));
	r->gen_after = calloc(w->nr + 1, sizeof(*r->gen_after));
	if (!r->ret || !r->gen_after)
		return -ENOMEM;
	ret = fresh_dev(c, &dev);
	if (ret) {
		snprintf(err, elen, "device %s: mkfs: %s", c->spec,
			 strerror(-ret));
		return ret;
	}
	sim = zsim_from_dev(dev);
	zdev_get_stats(dev, &s0);
	p0 = zsim_nr_persist(sim);
	ret = zcow_mount(dev, mo, &fs);
	if (ret) {
		snprintf(err, elen, "mount after mkfs: %s", strerror(-ret));
		zdev_close(dev);
		return ret;
	}
	r->mount_gen = fs->generation;
	r->nr_zones = dev->info.nr_zones;
	add_snap(r, fs->generation, true, &r->final);
	zdev_get_stats(dev, &sm);
	r->nr_cmds = zsim_nr_commands(sim);
	ret = arm_trial(dev, w->ft);
	if (ret) {
		snprintf(err, elen, "fault %s: %s", w->ft->name,
			 strerror(-ret));
		zcow_unmount(fs);
		zdev_close(dev);
		return ret;
	}
	for (i = 0; i < w->nr; i++) {
		const struct op *o = &w->ops[i];

		if (o->kind == OP_MARK)
			r->mark_persist = zsim_nr_persist(sim) - p0;
		gen = fs->generation;
		r->ret[i] = do_op(fs, o, tmp);
		if (!r->ret[i]) {
			m_apply(&r->final, o, tmp);
			note_past(r, o, i + 1);
			if (is_sync_op(o->kind))
				note_durable(r, o, i);
		}
		r->gen_after[i] = fs->generation;
		if (fs->generation != gen)
			add_snap(r, fs->generation,
				 is_sync_op(o->kind) && r->ret[i] == 0,
				 &r->final);
		if (fs->error && !w->ft) {
			snprintf(err, elen, "uncut run: op %u (%s %s) put the fs in the error state: %s",
				 i, op_names[o->kind], o->a,
				 strerror(-fs->error));
			zcow_unmount(fs);
			zdev_close(dev);
			return -EIO;
		}
	}
	void_obligations(w, r);
	r->persist = zsim_nr_persist(sim) - p0;
	zdev_get_stats(dev, &s1);
	r->nr_cmds = zsim_nr_commands(sim) - r->nr_cmds;
	for (k = 0; k < ZDEV_NR_CLASSES; k++) {
		int op;

		for (op = 0; op < ZDEV_NR_OPS; op++)
			r->cmds[k][op] = s1.cmds[k][op] - sm.cmds[k][op];
		r->cls[k] = s1.cmds[k][ZDEV_OP_WRITE] - s0.cmds[k][ZDEV_OP_WRITE] +
			    s1.cmds[k][ZDEV_OP_APPEND] - s0.cmds[k][ZDEV_OP_APPEND];
		r->resets += s1.cmds[k][ZDEV_OP_RESET] - s0.cmds[k][ZDEV_OP_RESET];
		r->finishes += s1.cmds[k][ZDEV_OP_FINISH] - s0.cmds[k][ZDEV_OP_FINISH];
		r->flushes += s1.cmds[k][ZDEV_OP_FLUSH] - s0.cmds[k][ZDEV_OP_FLUSH];
		r->zone_ops += s1.cmds[k][ZDEV_OP_RESET] - s0.cmds[k][ZDEV_OP_RESET] +
			       s1.cmds[k][ZDEV_OP_OPEN] - s0.cmds[k][ZDEV_OP_OPEN] +
			       s1.cmds[k][ZDEV_OP_CLOSE] - s0.cmds[k][ZDEV_OP_CLOSE] +
			       s1.cmds[k][ZDEV_OP_FINISH] - s0.cmds[k][ZDEV_OP_FINISH];
	}
	/* no unmount: it would commit; the fs is dropped with power off */
	zsim_cut_now(sim, ZSIM_LOSS_KEEP, 0);
	zcow_unmount(fs);
	zdev_close(dev);
	return 0;
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
				blk = (rng = mix64(rng)) % nblk;
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
		uint64_t d = i / 8, r = (rng = mix64(rng));

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
		uint64_t r = (rng = mix64(rng));

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

static uint64_t nr_workloads(const struct camp *c)
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

/* Workload @idx; quick ACE takes an evenly spread sample. */
static void make_wl(const struct camp *c, uint64_t idx, struct wl *w)
{
	memset(w, 0, sizeof(*w));
	if (!strcmp(c->workload, "ace")) {
		uint64_t all = ace_count(c->quick && c->qace_len ? c->qace_len :
					 c->ace_len ? c->ace_len : 2);
		uint64_t n = nr_workloads(c);

		gen_ace(n < all ? idx * all / n : idx, w);
	} else if (!strcmp(c->workload, "meta")) {
		gen_meta(c, w);
	} else if (!strcmp(c->workload, "sblog")) {
		gen_sblog(c, w);
	} else if (!strcmp(c->workload, "reset")) {
		gen_reset(c, w);
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

	if (!(c->nr_ft & (c->nr_ft + 1))) {	/* 0, 1, 3, 7, ...: grow */
		c->ft = realloc(c->ft, 2 * (c->nr_ft + 1) * sizeof(*c->ft));
		if (!c->ft)
			abort();
	}
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
static void build_trials(struct camp *c, const struct rec *r)
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
	c->nr_ft = 0;
	for (k = 0; k < c->nr_fail; k++) {
		snprintf(what, sizeof(what), "%s:1", c->fail[k]);
		if (zsim_parse_fault(what, false, &f))
			continue;	/* checked at load */
		n = nr_matching(r, &f);
		for (i = 1; i <= n; i += step) {
			t = ft_add(c, FT_FAIL);
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
				t->cond = c->zone_conds[ci];
				t->zno = z;
				t->at_cmd = 1 + i * r->nr_cmds / zp;
				snprintf(t->name, sizeof(t->name),
					 "zone_fail=%s:%" PRIu64 "@+%" PRIu64,
					 t->cond == ZDEV_COND_OFFLINE ?
					 "offline" : "readonly", z, t->at_cmd);
			}
}

/* ---- crash points ------------------------------------------------ */

struct cutpt {
	struct zsim_cut cut;
	bool is_end;		/* no cut: power fails after the workload */
	char name[48];
};

struct cutlist {
	struct cutpt *p;
	uint64_t nr, cap;
};

static void cl_add(struct cutlist *l, enum zsim_cut_kind kind,
		   enum zdev_class cls, uint64_t ord, enum zsim_when when,
		   const char *name)
{
	struct cutpt *c;

	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->p = realloc(l->p, l->cap * sizeof(*l->p));
		if (!l->p)
			abort();
	}
	c = &l->p[l->nr++];
	memset(c, 0, sizeof(*c));
	c->cut.kind = kind;
	c->cut.cls = cls;
	c->cut.ordinal = ord;
	c->cut.when = when;
	c->is_end = kind == ZSIM_CUT_NONE;
	snprintf(c->name, sizeof(c->name), "%s", name);
}

static const char *const when_names[] = { "before", "after", "torn" };

static int point_from_name(const char *s, struct cutpt *pt)
{
	memset(pt, 0, sizeof(*pt));
	snprintf(pt->name, sizeof(pt->name), "%s", s);
	if (!strcmp(s, "end")) {
		pt->is_end = true;
		return 0;
	}
	return zsim_parse_cut(s, &pt->cut);
}

static void add_every(struct cutlist *l, const char *what, enum zsim_cut_kind k,
		      enum zdev_class cls, uint64_t n, int nr_when)
{
	char name[48];
	uint64_t i;
	int wi;

	for (i = 1; i <= n; i++)
		for (wi = 0; wi < nr_when; wi++) {
			snprintf(name, sizeof(name), "%s:%" PRIu64 ":%s", what, i,
				 when_names[wi]);
			cl_add(l, k, cls, i, (enum zsim_when)wi, name);
		}
}

/* Expand one point spec against the counts of the uncut run. */
static int expand(const char *s, const struct rec *r, uint64_t seed,
		  struct cutlist *l, char *err, size_t elen)
{
	static const char *const cls_names[] = { "sb", "meta", "log", "data",
						 NULL, NULL, "other" };
	char name[48], what[16];
	uint64_t i, n, step;
	struct cutpt pt;
	const char *eq = strchr(s, '=');
	int k;

	if (!strcmp(s, "persist=every") || !strcmp(s, "persist=after-ack")) {
		i = s[8] == 'e' ? 1 : r->mark_persist + 1;
		for (; i <= r->persist; i++) {
			snprintf(name, sizeof(name), "persist=%" PRIu64, i);
			cl_add(l, ZSIM_CUT_PERSIST, 0, i, ZSIM_CUT_AFTER, name);
		}
		return 0;
	}
	if (!strncmp(s, "every:step=", 11)) {
		step = strtoull(s + 11, NULL, 0);
		if (!step)
			goto bad;
		for (i = 1; i <= r->persist; i += step) {
			snprintf(name, sizeof(name), "persist=%" PRIu64, i);
			cl_add(l, ZSIM_CUT_PERSIST, 0, i, ZSIM_CUT_AFTER, name);
		}
		return 0;
	}
	if (!strncmp(s, "random:count=", 13)) {
		uint64_t rng = seed * 7919 + 1;

		n = strtoull(s + 13, NULL, 0);
		if (!n)
			goto bad;
		for (i = 0; i < n && r->persist; i++) {
			uint64_t o = (rng = mix64(rng)) % r->persist + 1;

			snprintf(name, sizeof(name), "persist=%" PRIu64, o);
			cl_add(l, ZSIM_CUT_PERSIST, 0, o, ZSIM_CUT_AFTER, name);
		}
		return 0;
	}
	if (eq && !strcmp(eq + 1, "every") && (size_t)(eq - s) < sizeof(what)) {
		memcpy(what, s, eq - s);
		what[eq - s] = 0;
		for (k = 0; k < 7; k++)
			if (cls_names[k] && !strcmp(what, cls_names[k])) {
				add_every(l, what, ZSIM_CUT_CLASS,
					  (enum zdev_class)k, r->cls[k], 3);
				return 0;
			}
		if (!strcmp(what, "reset"))
			add_every(l, what, ZSIM_CUT_RESET, 0, r->resets, 2);
		else if (!strcmp(what, "finish"))
			add_every(l, what, ZSIM_CUT_FINISH, 0, r->finishes, 2);
		else if (!strcmp(what, "flush"))
			add_every(l, what, ZSIM_CUT_FLUSH, 0, r->flushes, 2);
		else if (!strcmp(what, "zone"))
			add_every(l, what, ZSIM_CUT_ZONE_OP, 0, r->zone_ops, 2);
		else
			goto bad;
		return 0;
	}
	if (point_from_name(s, &pt))
		goto bad;
	cl_add(l, pt.cut.kind, pt.cut.cls, pt.cut.ordinal, pt.cut.when, s);
	if (pt.is_end)
		l->p[l->nr - 1].is_end = true;
	return 0;
bad:
	snprintf(err, elen, "crash point '%s': not a point (persist=N|every|after-ack, CLASS:N:before|after|torn, CLASS=every, every:step=N, random:count=N, end)", s);
	return -EINVAL;
}

/* ---- oracles ----------------------------------------------------- */

static const char *const oracle_names[ZCRASH_NR_ORACLES] = {
	"ok", "mount", "check", "generation", "acked", "atomic", "device",
	"fsync", "no-garbage", "reported"
};

struct verdict {
	bool bad[ZCRASH_NR_ORACLES];
	char msg[640];
	uint64_t gen, ack_gen;
	uint64_t nr_recovery_persist;	/* issued by the recovery mount and
					 * its first commit */
	uint64_t nr_injected, nr_zone_fails, nr_errors;	/* faults */
	bool is_degraded;
};

static void fail(struct verdict *v, enum zcrash_oracle o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct verdict *v, enum zcrash_oracle o, const char *fmt, ...)
{
	size_t n = strlen(v->msg);
	va_list ap;

	/* the first message of each oracle, in the order they failed */
	if (!v->bad[o] && n + 32 < sizeof(v->msg)) {
		n += snprintf(v->msg + n, sizeof(v->msg) - n, "%soracle %d %s: ",
			      n ? "; " : "", o, oracle_names[o]);
		va_start(ap, fmt);
		vsnprintf(v->msg + n, sizeof(v->msg) - n, fmt, ap);
		va_end(ap);
	}
	v->bad[o] = true;
}

static void check_report(void *arg, const char *msg)
{
	struct verdict *v = arg;

	fail(v, ZCRASH_CHECK, "check: %s", msg);
}

struct rent {
	char path[PATH_LEN];
	bool is_dir;
};

static int walk(struct zcow_fs *fs, const char *dir, struct rent *out,
		unsigned int *nr)
{
	struct zcow_dirent *ents = NULL;
	uint64_t n = 0, i;
	int ret;

	ret = zcow_readdir(fs, dir, &ents, &n);
	if (ret)
		return ret;
	for (i = 0; i < n && !ret; i++) {
		struct rent *e;

		if (*nr >= MAX_ENT) {
			ret = -E2BIG;
			break;
		}
		if (!strcmp(dir, "/") && !strcmp(ents[i].name, ".zcrash"))
			continue;
		e = &out[(*nr)++];
		{
			char full[600];

			snprintf(full, sizeof(full), "%s/%s",
				 strcmp(dir, "/") ? dir : "", ents[i].name);
			snprintf(e->path, sizeof(e->path), "%.63s", full);
		}
		e->is_dir = ents[i].type == 2;
		if (e->is_dir)
			ret = walk(fs, e->path, out, nr);
	}
	free(ents);
	return ret;
}

static const struct snap *find_snap(const struct rec *r, uint64_t gen)
{
	const struct snap *s = NULL;
	unsigned int i;

	for (i = 0; i < r->nr_snaps; i++)
		if (r->snaps[i].gen == gen)
			s = &r->snaps[i];
	return s;
}

/* Block @b of @e (zeros past the end), @len valid bytes in *len_ret. */
static const uint8_t *blk_of(const struct ent *e, uint64_t b,
			     const uint8_t *zero)
{
	if (!e || e->is_dir || b * BLK >= e->size)
		return zero;
	if ((b + 1) * BLK > e->size)
		return NULL;	/* partial: compared by the caller */
	return e->data + b * BLK;
}

static bool blk_eq(const struct ent *e, uint64_t b, const uint8_t *got,
		   uint64_t got_size, const uint8_t *zero)
{
	const uint8_t *want = blk_of(e, b, zero);
	uint64_t n = BLK;

	if (e && b * BLK < e->size && (b + 1) * BLK > e->size)
		n = e->size - b * BLK;
	if (b * BLK + n > got_size)
		n = got_size > b * BLK ? got_size - b * BLK : 0;
	if (!want)
		want = e->data + b * BLK;
	return !memcmp(want, got + b * BLK, n);
}

static void compare(struct zcow_fs *fs, const struct rec *r, uint64_t ack_gen,
		    uint64_t gen, struct verdict *v, uint8_t *buf,
		    uint64_t buf_len)
{
	static const uint8_t zero[BLK];
	const struct snap *A = find_snap(r, ack_gen), *S = find_snap(r, gen);
	const struct model *cand[256];
	struct rent got[MAX_ENT];
	unsigned int nr_got = 0, nc = 0, i, j;
	int ret;

	if (S && !S->exact)
		S = NULL;
	if (S) {
		cand[nc++] = &S->m;
	} else {
		for (i = 0; i < r->nr_snaps && nc < 255; i++)
			if (r->snaps[i].gen >= ack_gen)
				cand[nc++] = &r->snaps[i].m;
		cand[nc++] = &r->final;
	}
	ret = walk(fs, "/", got, &nr_got);
	if (ret) {
		fail(v, ZCRASH_ACKED, "readdir: %s", strerror(-ret));
		return;
	}
	/* namespace: every recovered entry exists in a candidate */
	for (i = 0; i < nr_got; i++) {
		bool ok = false;

		for (j = 0; j < nc && !ok; j++) {
			struct ent *e = m_find((struct model *)cand[j], got[i].path);

			ok = e && e->is_dir == got[i].is_dir;
		}
		if (!ok)
			fail(v, S && gen > ack_gen ? ZCRASH_ATOMIC : ZCRASH_ACKED,
			     "gen %" PRIu64 ": unexpected %s %s", gen,
			     got[i].is_dir ? "dir" : "file", got[i].path);
	}
	/* every entry all candidates agree on is recovered */
	for (i = 0; A && i < A->m.nr + (S ? S->m.nr : 0); i++) {
		const struct ent *e = i < A->m.nr ? &A->m.e[i] : &S->m.e[i - A->m.nr];
		bool all = true, found = false;

		for (j = 0; j < nc && all; j++) {
			struct ent *c = m_find((struct model *)cand[j], e->path);

			all = c && c->is_dir == e->is_dir;
		}
		if (!all)
			continue;
		for (j = 0; j < nr_got && !found; j++)
			found = !strcmp(got[j].path, e->path);
		if (!found)
			fail(v, S && i >= A->m.nr && !m_find((struct model *)&A->m, e->path) ?
				ZCRASH_ATOMIC : ZCRASH_ACKED,
			     "gen %" PRIu64 ": %s %s missing", gen,
			     e->is_dir ? "dir" : "file", e->path);
	}
	/* contents */
	for (i = 0; i < nr_got; i++) {
		struct zcow_file *f = NULL;
		struct ent *ae = A ? m_find((struct model *)&A->m, got[i].path) : NULL;
		struct zcow_stat st;
		uint64_t b, nb;
		int64_t n;
		bool size_ok = false;

		if (got[i].is_dir)
			continue;
		ret = zcow_open(fs, got[i].path, O_RDONLY, &f);
		if (!ret)
			ret = zcow_fstat(f, &st);
		if (ret) {
			fail(v, ae ? ZCRASH_ACKED : ZCRASH_ATOMIC, "%s: open: %s",
			     got[i].path, strerror(-ret));
			if (f)
				zcow_close(f);
			continue;
		}
		if (st.size > buf_len) {
			fail(v, ZCRASH_ATOMIC, "%s: size %" PRIu64 " beyond any written",
			     got[i].path, st.size);
			zcow_close(f);
			continue;
		}
		n = st.size ? zcow_pread(f, buf, st.size, 0) : 0;
		zcow_close(f);
		if (n != (int64_t)st.size) {
			fail(v, ae ? ZCRASH_ACKED : ZCRASH_ATOMIC,
			     "%s: read: %s", got[i].path,
			     n < 0 ? strerror((int)-n) : "short");
			continue;
		}
		for (j = 0; j < nc && !size_ok; j++) {
			struct ent *c = m_find((struct model *)cand[j], got[i].path);

			size_ok = c && c->size == st.size;
		}
		if (!size_ok)
			fail(v, S && !(ae && ae->size == st.size) && gen == ack_gen ?
				ZCRASH_ACKED : ZCRASH_ATOMIC,
			     "gen %" PRIu64 ": %s: size %" PRIu64 " not as committed",
			     gen, got[i].path, st.size);
		nb = (st.size + BLK - 1) / BLK;
		for (b = 0; b < nb; b++) {
			bool ok = false, acked;

			for (j = 0; j < nc && !ok; j++) {
				struct ent *c = m_find((struct model *)cand[j], got[i].path);

				ok = c && !c->is_dir && blk_eq(c, b, buf, st.size, zero);
			}
			if (ok)
				continue;
			/* acked: the block was acknowledged and nothing
			 * since changed it */
			acked = ae && blk_eq(ae, b, ae->data ? ae->data : zero,
					     ae->size, zero);
			for (j = 0; j < nc && acked; j++) {
				struct ent *c = m_find((struct model *)cand[j], got[i].path);

				acked = c && ae->size == c->size &&
					(!c->size || !memcmp(c->data, ae->data, c->size));
			}
			fail(v, acked ? ZCRASH_ACKED : ZCRASH_ATOMIC,
			     "gen %" PRIu64 ": %s block %" PRIu64 " is neither old nor new content",
			     gen, got[i].path, b);
			break;
		}
	}
}

/* Oracle 6b: a block group the durable superblock references holds no
 * more used bytes than its zones hold written (a reset zone would not). */
static void check_bgs(struct zcow_fs *fs, struct verdict *v)
{
	uint64_t i;

	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];
		uint64_t off, written = 0;

		if (!bg->is_seq || bg->is_deleted)
			continue;
		for (off = 0; off < bg->length; off += fs->dev->info.zone_size) {
			struct zdev_zone z;

			if (zdev_report_zone(fs->dev, bg->physical + off, &z))
				return;
			written += z.wp - z.start;
		}
		if (bg->item_used > written)
			fail(v, ZCRASH_DEVICE,
			     "block group %" PRIu64 " (zone %" PRIu64 ") referenced with %" PRIu64 " used bytes, zone holds %" PRIu64 " (reset too early?)",
			     bg->start, zdev_zone_no(fs->dev, bg->physical),
			     bg->item_used, written);
	}
}

/* ---- treelog=on: oracles 7 and 8 -------------------------------- */

/* The recovered namespace and every file's size and content hash. */
struct scan {
	struct rent e[MAX_ENT];
	uint64_t size[MAX_ENT], hash[MAX_ENT];
	int err[MAX_ENT];	/* a file's open/read error; -EFBIG: larger
				 * than any file the workload wrote */
	unsigned int nr;
};

static int scan_fs(struct zcow_fs *fs, struct scan *s, uint8_t *buf,
		   uint64_t buf_len)
{
	unsigned int i;
	int ret;

	s->nr = 0;
	ret = walk(fs, "/", s->e, &s->nr);
	if (ret)
		return ret;
	for (i = 0; i < s->nr; i++) {
		struct zcow_file *f = NULL;
		struct zcow_stat st;
		int64_t n;

		s->size[i] = s->hash[i] = 0;
		s->err[i] = 0;
		if (s->e[i].is_dir)
			continue;
		ret = zcow_open(fs, s->e[i].path, O_RDONLY, &f);
		if (!ret)
			ret = zcow_fstat(f, &st);
		if (!ret && st.size > buf_len)
			ret = -EFBIG;
		if (!ret) {
			n = st.size ? zcow_pread(f, buf, st.size, 0) : 0;
			ret = n < 0 ? (int)n : n != (int64_t)st.size ? -EIO : 0;
		}
		if (f)
			zcow_close(f);
		s->err[i] = ret;
		if (!ret) {
			s->size[i] = st.size;
			s->hash[i] = hash_bytes(buf, st.size);
		}
	}
	return 0;
}

static int scan_find(const struct scan *s, const char *path)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->e[i].path, path))
			return (int)i;
	return -1;
}

/* A crash state: the device after the workload's power cut. */
struct cstate {
	struct zdev *dev;
	unsigned int cut_op;	/* op in progress at the cut; w->nr: none */
	int last_sync;		/* last acknowledged sync op; -1: none */
	uint64_t ack_gen;	/* the generation oracle 3 requires */
	uint64_t log_root;	/* of the durable superblock; 0: no log */
	bool has_offline;	/* a zone went offline (faults) */
};

/* Path @p was touched by an op of @w, before op @end, that failed: it
 * may hold part of that op's effect (a failed op may change part of what
 * it touches and still fail). */
static bool is_touched_by_failure(const struct wl *w, const struct rec *r,
				  const char *p, unsigned int end)
{
	unsigned int i;

	for (i = 0; i < end && i < w->nr; i++)
		if (r->ret[i] && op_touches(&w->ops[i], p))
			return true;
	return false;
}

/*
 * Oracle 9 (workload=faults): at the end of the workload, before the
 * power cut, the live fs reads back what the ops that succeeded wrote
 * (the model), or fails: never other content with success.  Paths a
 * failed op touched may hold part of its effect.
 */
static void check_live(struct zcow_fs *fs, const struct wl *w,
		       const struct rec *r, struct verdict *v, uint8_t *buf,
		       uint64_t buf_len)
{
	struct scan *s = malloc(sizeof(*s));
	unsigned int i;

	if (!s)
		abort();
	if (scan_fs(fs, s, buf, buf_len))
		goto out;	/* an error, reported: allowed */
	for (i = 0; i < s->nr; i++) {
		const struct rent *e = &s->e[i];
		struct ent *m = m_find((struct model *)&r->final, e->path);

		if (is_touched_by_failure(w, r, e->path, w->nr))
			continue;
		if (!m)
			fail(v, ZCRASH_REPORTED, "live: unexpected %s %s",
			     e->is_dir ? "dir" : "file", e->path);
		else if (m->is_dir != e->is_dir)
			fail(v, ZCRASH_REPORTED, "live: %s is a %s", e->path,
			     e->is_dir ? "dir" : "file");
		else if (!e->is_dir && !s->err[i] &&
			 (s->size[i] != m->size ||
			  s->hash[i] != hash_bytes(m->data, m->size)))
			fail(v, ZCRASH_REPORTED, "live: %s reads back size %" PRIu64 " and content other than the ops that succeeded wrote (size %" PRIu64 ")",
			     e->path, s->size[i], m->size);
	}
	for (i = 0; i < r->final.nr; i++) {
		const struct ent *m = &r->final.e[i];

		if (scan_find(s, m->path) < 0 &&
		    !is_touched_by_failure(w, r, m->path, w->nr))
			fail(v, ZCRASH_REPORTED, "live: %s %s missing",
			     m->is_dir ? "dir" : "file", m->path);
	}
out:
	free(s);
}

/*
 * The obligations in force (oracle 7): made by the last acknowledged
 * sync or an acknowledged fsync/fdatasync after it, and not voided by an
 * op up to the one in progress at the cut (which may have touched its
 * path already).
 */
static bool is_in_force(const struct oblig *o, const struct cstate *st)
{
	return (int)o->op >= st->last_sync && o->op < st->cut_op &&
	       o->void_at > st->cut_op;
}

static void fail_obl(struct verdict *v, const struct wl *w,
		     const struct oblig *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail_obl(struct verdict *v, const struct wl *w,
		     const struct oblig *o, const char *fmt, ...)
{
	const struct op *p = &w->ops[o->op];
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fail(v, ZCRASH_FSYNC, "op %u (%s%s%s): %s", o->op, op_names[p->kind],
	     p->a[0] ? " " : "", p->a, what);
}

/*
 * Oracles 7 and 8 (treelog=on) on the recovered namespace @s: every
 * obligation in force holds, and every recovered path and file is a state
 * it had by the cut.
 */
static void check_logged(const struct wl *w, const struct rec *r,
			 const struct cstate *st, const struct scan *s,
			 struct verdict *v)
{
	unsigned int i, j;
	int k;

	for (i = 0; i < s->nr; i++) {
		const struct rent *e = &s->e[i];
		bool ok = false;

		for (j = 0; j < r->nr_past && !ok; j++) {
			const struct past *q = &r->past[j];

			ok = q->first <= st->cut_op + 1 &&
			     q->is_dir == e->is_dir && !strcmp(q->path, e->path) &&
			     (e->is_dir || (!s->err[i] && q->size == s->size[i] &&
					    q->hash == s->hash[i]));
		}
		if (ok)
			continue;
		if (s->err[i])
			fail(v, ZCRASH_GARBAGE, "file %s: %s", e->path,
			     s->err[i] == -EFBIG ? "larger than any written" :
			     strerror(-s->err[i]));
		else if (e->is_dir)
			fail(v, ZCRASH_GARBAGE, "dir %s: no such dir by op %u",
			     e->path, st->cut_op);
		else
			fail(v, ZCRASH_GARBAGE, "file %s: size %" PRIu64 " and content of no state it had by op %u",
			     e->path, s->size[i], st->cut_op);
	}
	for (i = 0; i < r->nr_obl; i++) {
		const struct oblig *o = &r->obl[i];

		if (!is_in_force(o, st))
			continue;
		k = scan_find(s, o->path);
		if (o->is_absent) {
			if (k >= 0)
				fail_obl(v, w, o, "%s present, removed or renamed before it",
					 o->path);
		} else if (k < 0) {
			fail_obl(v, w, o, "%s %s missing",
				 o->is_dir ? "dir" : "file", o->path);
		} else if (s->e[k].is_dir != o->is_dir) {
			fail_obl(v, w, o, "%s is a %s", o->path,
				 s->e[k].is_dir ? "dir" : "file");
		} else if (o->has_data && s->err[k]) {
			fail_obl(v, w, o, "%s: read: %s", o->path,
				 strerror(-s->err[k]));
		} else if (o->has_data && s->size[k] != o->size) {
			fail_obl(v, w, o, "%s: size %" PRIu64 ", %" PRIu64 " when acknowledged",
				 o->path, s->size[k], o->size);
		} else if (o->has_data && s->hash[k] != o->hash) {
			fail_obl(v, w, o, "%s: content differs from the acknowledged",
				 o->path);
		}
	}
}

/* Nothing could be read back (@why): every obligation in force is lost,
 * oracle 7 names the latest.  Returns false when none was in force. */
static bool lost_all(const struct wl *w, const struct rec *r,
		     const struct cstate *st, struct verdict *v,
		     const char *why)
{
	unsigned int i;

	for (i = r->nr_obl; i--;)	/* the latest op first */
		if (is_in_force(&r->obl[i], st) && !r->obl[i].is_absent) {
			fail_obl(v, w, &r->obl[i], "%s lost: %s",
				 r->obl[i].path, why);
			return true;
		}
	return false;
}

/* ---- one crash state --------------------------------------------- */

/*
 * Build a crash state on a fresh device: mkfs, mount, replay the
 * workload up to the armed cut (or to its end, then cut), power-cycle.
 * Returns 0 (st->dev set) or -errno when the setup itself failed.
 */
static int build_state(const struct camp *c, const struct wl *w,
		       const struct rec *r, const struct cutpt *pt, int loss,
		       uint64_t seed, const struct zcow_mount_opts *mo,
		       uint8_t *tmp, uint8_t *buf, uint64_t buf_len,
		       struct cstate *st, struct verdict *v)
{
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	struct zsim *sim;
	unsigned int i;
	int ret;

	memset(st, 0, sizeof(*st));
	st->cut_op = w->nr;
	st->last_sync = -1;
	st->ack_gen = r->mount_gen;
	ret = fresh_dev(c, &dev);
	if (ret)
		return ret;
	sim = zsim_from_dev(dev);
	if (!pt->is_end) {
		struct zsim_cut cut = pt->cut;

		cut.loss = (enum zsim_loss)loss;
		cut.seed = seed;
		if (zsim_arm_cut(sim, &cut)) {
			zdev_close(dev);
			return -EINVAL;
		}
	}
	ret = zcow_mount(dev, mo, &fs);
	if (ret) {
		zdev_close(dev);
		return ret;
	}
	ret = arm_trial(dev, w->ft);
	if (ret) {
		zcow_unmount(fs);
		zdev_close(dev);
		return ret;
	}
	for (i = 0; i < w->nr; i++) {
		enum op_kind k = w->ops[i].kind;

		ret = do_op(fs, &w->ops[i], tmp);
		if (zsim_is_cut(sim)) {
			st->cut_op = i;
			break;
		}
		if (ret && w->ft)
			v->nr_errors++;
		if (ret != r->ret[i]) {
			fail(v, ZCRASH_ACKED, "replay diverged at op %u (%s %s): %d, uncut %d",
			     i, op_names[k], w->ops[i].a, ret, r->ret[i]);
			st->cut_op = i;
			break;
		}
		if (ret || !is_sync_op(k))
			continue;
		/* with the log, only sync promises a commit */
		if (mo->no_treelog || k == OP_SYNC)
			st->ack_gen = r->gen_after[i];
		if (k == OP_SYNC)
			st->last_sync = (int)i;
	}
	if (w->ft && !zsim_is_cut(sim))
		check_live(fs, w, r, v, buf, buf_len);
	if (w->ft)
		v->nr_injected = zsim_nr_violations(sim, ZSIM_RULE_INJECTED);
	if (!zsim_is_cut(sim))
		zsim_cut_now(sim, (enum zsim_loss)loss, seed);
	zcow_unmount(fs);	/* fails (power is off) and frees */
	zsim_power_cycle(sim);
	if (w->ft) {
		uint64_t z;

		/* EIO faults are transient; failed zones stay failed */
		zsim_clear_faults(sim);
		for (z = 0; z < dev->info.nr_zones; z++) {
			struct zdev_zone zz;

			if (zdev_report_zone(dev, z * dev->info.zone_size,
					     &zz))
				continue;
			if (zz.cond == ZDEV_COND_OFFLINE)
				st->has_offline = true;
			if (zz.cond == ZDEV_COND_OFFLINE ||
			    zz.cond == ZDEV_COND_READONLY)
				v->nr_zone_fails++;
		}
	}
	if (!zcow_sb_read_latest(dev, &sb, &copy))
		st->log_root = le64toh(sb.log_root);
	st->dev = dev;
	v->ack_gen = st->ack_gen;
	return 0;
}

/* The recovered fs keeps working: write and sync /.zcrash (it may be
 * there already from a recovery that was cut). */
static int write_probe(struct zcow_fs *fs, uint8_t *tmp)
{
	struct zcow_file *f = NULL;
	int ret, r2;

	ret = zcow_open(fs, "/.zcrash", O_RDWR | O_CREAT, &f);
	if (ret)
		return ret;
	fill(tmp, 2 * BLK, 99, 0);
	ret = zcow_pwrite(f, tmp, 2 * BLK, 0) < 0 ? -EIO : 0;
	r2 = zcow_close(f);
	if (!ret)
		ret = r2;
	if (!ret)
		ret = zcow_sync(fs);
	return ret;
}

static bool is_probe_intact(struct zcow_fs *fs, uint8_t *tmp, uint8_t *buf)
{
	struct zcow_file *f = NULL;
	int64_t n;

	if (zcow_open(fs, "/.zcrash", O_RDONLY, &f))
		return false;
	n = zcow_pread(f, buf, 2 * BLK, 0);
	zcow_close(f);
	fill(tmp, 2 * BLK, 99, 0);
	return n == 2 * BLK && !memcmp(buf, tmp, 2 * BLK);
}

static void check_report2(void *arg, const char *msg)
{
	struct verdict *v = arg;

	fail(v, ZCRASH_CHECK, "second mount: check: %s", msg);
}

/*
 * Cut the recovery of crash state @st at its @n-th persist point (the
 * mount with its log replay and commits, then the probe write and its
 * commit), and power-cycle: a second power failure during recovery.
 */
static void cut_recovery(struct cstate *st, const struct zcow_mount_opts *mo,
			 uint64_t n, int loss, uint64_t seed, uint8_t *tmp)
{
	struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST, .ordinal = n,
				.when = ZSIM_CUT_AFTER,
				.loss = (enum zsim_loss)loss, .seed = seed };
	struct zsim *sim = zsim_from_dev(st->dev);
	struct zcow_fs *fs = NULL;

	zsim_arm_cut(sim, &cut);
	if (!zcow_mount(st->dev, mo, &fs)) {
		if (!zsim_is_cut(sim))
			write_probe(fs, tmp);
		if (!zsim_is_cut(sim))
			zsim_cut_now(sim, (enum zsim_loss)loss, seed);
		zcow_unmount(fs);
	}
	if (!zsim_is_cut(sim))	/* the count came out short: cut anyway */
		zsim_cut_now(sim, (enum zsim_loss)loss, seed);
	zsim_power_cycle(sim);
}

/*
 * Recover crash state @st and run the oracles: mount (1), check (2),
 * generation (3), contents (4, 5 with treelog=off; 7, 8 with treelog=on),
 * block groups (6); then write and sync a probe file (1), unmount, mount
 * again: check (2), the same namespace and contents, the probe (1).
 * @base_gen (0: none) is the generation an uncut recovery of the same
 * state mounted: a cut recovery may have committed above it (the probe),
 * so treelog=off compares against the commit of @base_gen then.
 */
static void recover(const struct wl *w, const struct rec *r,
		    const struct cstate *st, const struct zcow_mount_opts *mo,
		    uint64_t base_gen, uint8_t *tmp, uint8_t *buf,
		    uint64_t buf_len, struct verdict *v)
{
	struct zsim *sim = zsim_from_dev(st->dev);
	struct scan *s1 = malloc(sizeof(*s1)), *s2 = malloc(sizeof(*s2));
	bool is_on = !mo->no_treelog, is_scanned, is_synced;
	struct zcow_fs *fs = NULL;
	uint64_t p0 = zsim_nr_persist(sim);
	unsigned int i;
	int ret;

	if (!s1 || !s2)
		abort();
	/* 1: mount */
	ret = zcow_mount(st->dev, mo, &fs);
	if (ret) {
		fail(v, ZCRASH_MOUNT, "mount: %s", strerror(-ret));
		if (is_on)
			lost_all(w, r, st, v, "no mount");
		goto out;
	}
	v->gen = fs->generation;
	/* 7: a tree-log the mount had to ignore (corrupt): the fsyncs it
	 * held are lost, never silently */
	if (is_on) {
		struct zcow_statfs sf;

		if (!zcow_statfs(fs, &sf) && sf.log_lost &&
		    !lost_all(w, r, st, v, "the mount ignored a corrupt tree-log"))
			fail(v, ZCRASH_FSYNC, "the mount ignored a corrupt tree-log");
	}
	/* 2: check */
	ret = zcow_check(fs, check_report, v);
	if (ret < 0)
		fail(v, ZCRASH_CHECK, "check: %s", strerror(-ret));
	/* 3: generation; 4, 5: one commit's state (treelog=off) */
	if (fs->generation < st->ack_gen)
		fail(v, ZCRASH_GEN, "generation %" PRIu64 " < acknowledged %" PRIu64,
		     fs->generation, st->ack_gen);
	else if (!is_on)
		compare(fs, r, st->ack_gen,
			base_gen && fs->generation > base_gen ? base_gen :
			fs->generation, v, buf, buf_len);
	/* 7, 8: the last commit and the log (treelog=on) */
	ret = scan_fs(fs, s1, buf, buf_len);
	is_scanned = !ret;
	if (ret && is_on && !lost_all(w, r, st, v, "no readdir"))
		fail(v, ZCRASH_GARBAGE, "readdir: %s", strerror(-ret));
	else if (!ret && is_on)
		check_logged(w, r, st, s1, v);
	/* 6: block groups vs zones; 1: the recovered fs keeps working */
	check_bgs(fs, v);
	ret = write_probe(fs, tmp);
	if (ret && ret != -ENOSPC)
		fail(v, ZCRASH_MOUNT, "write after recovery: %s", strerror(-ret));
	is_synced = !ret;
	v->nr_recovery_persist = zsim_nr_persist(sim) - p0;
	zcow_unmount(fs);

	/* 1, 2 again on a second mount: the recovery holds */
	ret = zcow_mount(st->dev, mo, &fs);
	if (ret) {
		fail(v, ZCRASH_MOUNT, "second mount: %s", strerror(-ret));
		goto out;
	}
	ret = zcow_check(fs, check_report2, v);
	if (ret < 0)
		fail(v, ZCRASH_CHECK, "second mount: check: %s", strerror(-ret));
	if (is_scanned && !scan_fs(fs, s2, buf, buf_len)) {
		for (i = 0; i < s1->nr || i < s2->nr; i++) {
			const struct rent *e = i < s1->nr ? &s1->e[i] : &s2->e[i];

			if (i < s1->nr && i < s2->nr &&
			    !strcmp(s1->e[i].path, s2->e[i].path) &&
			    s1->e[i].is_dir == s2->e[i].is_dir &&
			    s1->size[i] == s2->size[i] &&
			    s1->hash[i] == s2->hash[i] &&
			    s1->err[i] == s2->err[i])
				continue;
			fail(v, ZCRASH_CHECK, "second mount: %s differs from the first recovery",
			     e->path);
			break;
		}
	}
	if (is_synced && !is_probe_intact(fs, tmp, buf))
		fail(v, ZCRASH_MOUNT, "second mount: /.zcrash, synced after recovery, lost");
	zcow_unmount(fs);
out:
	if (zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP))
		fail(v, ZCRASH_DEVICE, "%" PRIu64 " writes off a write pointer",
		     zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP));
	free(s1);
	free(s2);
}

/*
 * Recovery of a state with an offline zone (workload=faults): the device
 * lost that zone's data, so the mount may fail and a file or directory
 * may fail to read (the state counts as degraded), but whatever reads
 * back with success is right: every path and file a state it had by the
 * cut (8), every acknowledged promise in force kept or its path failing
 * with an error (7 and 4: what is acknowledged never reads back other
 * content, never silently goes missing).
 */
static void recover_degraded(const struct wl *w, const struct rec *r,
			     const struct cstate *st,
			     const struct zcow_mount_opts *mo, uint8_t *buf,
			     uint64_t buf_len, struct verdict *v)
{
	enum zcrash_oracle lost = mo->no_treelog ? ZCRASH_ACKED : ZCRASH_FSYNC;
	struct scan *s = malloc(sizeof(*s));
	struct zcow_fs *fs = NULL;
	unsigned int i, j;
	int k;

	if (!s)
		abort();
	if (zcow_mount(st->dev, mo, &fs)) {
		v->is_degraded = true;
		goto out;
	}
	v->gen = fs->generation;
	if (scan_fs(fs, s, buf, buf_len)) {
		v->is_degraded = true;
		goto unmount;
	}
	for (i = 0; i < s->nr; i++) {
		const struct rent *e = &s->e[i];
		bool ok = false;

		if (s->err[i]) {
			v->is_degraded = true;
			continue;
		}
		if (is_touched_by_failure(w, r, e->path, st->cut_op + 1))
			continue;
		for (j = 0; j < r->nr_past && !ok; j++) {
			const struct past *q = &r->past[j];

			ok = q->first <= st->cut_op + 1 &&
			     q->is_dir == e->is_dir && !strcmp(q->path, e->path) &&
			     (e->is_dir || (q->size == s->size[i] &&
					    q->hash == s->hash[i]));
		}
		if (!ok)
			fail(v, ZCRASH_GARBAGE, "offline zone: %s %s: no state it had by op %u",
			     e->is_dir ? "dir" : "file", e->path, st->cut_op);
	}
	for (i = 0; i < r->nr_obl; i++) {
		const struct oblig *o = &r->obl[i];

		if (!is_in_force(o, st) ||
		    is_touched_by_failure(w, r, o->path, st->cut_op + 1))
			continue;
		k = scan_find(s, o->path);
		if (k >= 0 && s->err[k])
			continue;	/* lost with an error: the device's */
		if (o->is_absent ? k >= 0 :
		    k < 0 || s->e[k].is_dir != o->is_dir ||
		    (o->has_data && (s->size[k] != o->size ||
				     s->hash[k] != o->hash)))
			fail(v, lost, "offline zone: op %u (%s %s): %s %s",
			     o->op, op_names[w->ops[o->op].kind],
			     w->ops[o->op].a, o->path,
			     o->is_absent ? "present, removed before it" :
			     k < 0 ? "missing without an error" :
			     "reads back other than acknowledged");
	}
unmount:
	zcow_unmount(fs);
out:
	free(s);
}

/*
 * One crash state: the workload cut at @pt, then (@cut2 > 0) its recovery
 * cut at persist point @cut2, then the oracles (@base_gen: see recover()).
 * *log_root_ret: the log
 * root of the durable superblock after the first cut.  Returns 0 (the
 * verdict in @v) or -errno when the setup failed.
 */
static int run_case(const struct camp *c, const struct wl *w,
		    const struct rec *r, const struct cutpt *pt, int loss,
		    uint64_t seed, const struct zcow_mount_opts *mo,
		    uint64_t cut2, uint64_t base_gen, uint8_t *tmp, uint8_t *buf,
		    uint64_t buf_len, struct verdict *v, uint64_t *log_root_ret)
{
	struct cstate st;
	int ret;

	memset(v, 0, sizeof(*v));
	ret = build_state(c, w, r, pt, loss, seed, mo, tmp, buf, buf_len, &st,
			  v);
	if (ret)
		return ret;
	*log_root_ret = st.log_root;
	if (cut2)
		cut_recovery(&st, mo, cut2, loss, seed, tmp);
	if (st.has_offline)
		recover_degraded(w, r, &st, mo, buf, buf_len, v);
	else
		recover(w, r, &st, mo, base_gen, tmp, buf, buf_len, v);
	zdev_close(st.dev);
	return 0;
}

/* ---- the scenario ------------------------------------------------ */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = 0;
	return s;
}

static int parse_u64(const char *v, uint64_t *ret)
{
	return zdev_parse_size(v, ret);
}

static int add_list(const char *v, char (*out)[64], unsigned int *nr)
{
	char tmp[512], *save = NULL, *t;

	snprintf(tmp, sizeof(tmp), "%s", v);
	for (t = strtok_r(tmp, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (*nr >= MAX_POINTS_SPEC)
			return -E2BIG;
		snprintf(out[(*nr)++], 64, "%s", t);
	}
	return 0;
}

static int parse_loss(const char *v, int *out, int *nr)
{
	char tmp[256], *save = NULL, *t;
	int l;

	*nr = 0;
	snprintf(tmp, sizeof(tmp), "%s", v);
	for (t = strtok_r(tmp, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		if (!strcmp(t, "all")) {
			for (l = 0; l < ZSIM_NR_LOSS; l++)
				out[l] = l;
			*nr = ZSIM_NR_LOSS;
			continue;
		}
		l = zsim_loss_parse(t);
		if (l < 0 || *nr >= ZSIM_NR_LOSS)
			return -EINVAL;
		out[(*nr)++] = l;
	}
	return *nr ? 0 : -EINVAL;
}

static int parse_seeds(const char *v, uint64_t *out, unsigned int *nr)
{
	char tmp[256], *save = NULL, *t, *dots;

	*nr = 0;
	snprintf(tmp, sizeof(tmp), "%s", v);
	for (t = strtok_r(tmp, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		uint64_t a = strtoull(t, &dots, 0), b = a;

		if (!strncmp(dots, "..", 2))
			b = strtoull(dots + 2, NULL, 0);
		for (; a <= b && *nr < 16; a++)
			out[(*nr)++] = a;
	}
	return *nr ? 0 : -EINVAL;
}

/* A count that must be > 0. */
static int parse_pos(const char *v, uint64_t *ret)
{
	return parse_u64(v, ret) ?: *ret ? 0 : -EINVAL;
}

/* fail= (WHATs: "write meta/read any") or fail_rate= ("2% data:0.5%"):
 * space separated, each checked as the sim: spec key checks it. */
static int parse_fail_list(const char *v, char (*out)[64], unsigned int *nr,
			   bool is_rate)
{
	char tmp[512], what[80], *save = NULL, *t;
	struct zsim_fault f;

	*nr = 0;
	snprintf(tmp, sizeof(tmp), "%s", v);
	for (t = strtok_r(tmp, " \t", &save); t;
	     t = strtok_r(NULL, " \t", &save)) {
		snprintf(what, sizeof(what), "%s:1", t);
		if (*nr >= MAX_POINTS_SPEC || strlen(t) >= 64 ||
		    zsim_parse_fault(is_rate ? t : what, is_rate, &f))
			return -EINVAL;
		snprintf(out[(*nr)++], 64, "%s", t);
	}
	return *nr ? 0 : -EINVAL;
}

/* zone_fail=offline readonly */
static int parse_conds(const char *v, struct camp *c)
{
	char tmp[128], *save = NULL, *t;

	c->nr_zone_conds = 0;
	snprintf(tmp, sizeof(tmp), "%s", v);
	for (t = strtok_r(tmp, " ,\t", &save); t;
	     t = strtok_r(NULL, " ,\t", &save)) {
		if (c->nr_zone_conds == 2)
			return -EINVAL;
		if (!strcmp(t, "offline"))
			c->zone_conds[c->nr_zone_conds++] = ZDEV_COND_OFFLINE;
		else if (!strcmp(t, "readonly"))
			c->zone_conds[c->nr_zone_conds++] = ZDEV_COND_READONLY;
		else
			return -EINVAL;
	}
	return c->nr_zone_conds ? 0 : -EINVAL;
}

/* The campaign workloads (docs/crash.md); anything else is refused. */
static int parse_workload(const char *v, char *buf, size_t len)
{
	static const char *const names[] = { "fio", "ace", "meta", "sblog",
					     "reset", "faults" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i])) {
			snprintf(buf, len, "%s", v);
			return 0;
		}
	return -EINVAL;
}

static int parse_file(struct camp *c, const char *path, bool is_fio,
		      char *err, size_t elen)
{
	char line[1024], sect[64] = "", *s, *k, *v, *eq;
	unsigned int lno = 0;
	FILE *fp = fopen(path, "r");
	int ret = 0;

	if (!fp) {
		snprintf(err, elen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), fp)) {
		lno++;
		s = trim(line);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (!strncmp(s, "include ", 8)) {
			char inc[1024], dir[512];
			const char *sl = strrchr(path, '/');

			snprintf(dir, sizeof(dir), "%.*s",
				 sl ? (int)(sl - path) : 1, sl ? path : ".");
			snprintf(inc, sizeof(inc), "%s/%s", dir, trim(s + 8));
			ret = parse_file(c, inc, true, err, elen);
			if (ret)
				break;
			continue;
		}
		if (*s == '[') {
			snprintf(sect, sizeof(sect), "%.*s", (int)strcspn(s + 1, "]"), s + 1);
			continue;
		}
		eq = strchr(s, '=');
		k = s;
		v = eq ? trim(eq + 1) : (char *)"";
		if (eq)
			*eq = 0;
		k = trim(k);
		if (is_fio) {
			if (!strcmp(k, "rw") || !strcmp(k, "readwrite"))
				snprintf(c->rw, sizeof(c->rw), "%s", v);
			else if (!strcmp(k, "bs"))
				ret = parse_u64(v, &c->bs);
			else if (!strcmp(k, "size"))
				ret = parse_u64(v, &c->size);
			else if (!strcmp(k, "nrfiles"))
				ret = parse_u64(v, &c->nrfiles);
			else if (!strcmp(k, "fsync"))
				ret = parse_u64(v, &c->fsync_every);
			/* other fio keys do not shape a crash workload */
		} else if (!strcmp(sect, "zcow")) {
			if (!strcmp(k, "device"))
				snprintf(c->spec, sizeof(c->spec), "%s", v);
			else if (!strcmp(k, "seed"))
				ret = parse_u64(v, &c->seed);
			else if (!strcmp(k, "nodesize")) {
				uint64_t n;

				ret = parse_u64(v, &n);
				c->nodesize = (uint32_t)n;
			} else if (!strcmp(k, "crash"))
				ret = add_list(v, c->points, &c->nr_points);
			else if (!strcmp(k, "treelog"))
				ret = parse_treelog(v, &c->treelog);
			else if (!strcmp(k, "name"))
				snprintf(c->name, sizeof(c->name), "%s", v);
		} else if (!strcmp(sect, "crash")) {
			if (!strcmp(k, "workload"))
				ret = parse_workload(v, c->workload,
						     sizeof(c->workload));
			else if (!strcmp(k, "points"))
				ret = add_list(v, c->points, &c->nr_points);
			else if (!strcmp(k, "quick_points"))
				ret = add_list(v, c->qpoints, &c->nr_qpoints);
			else if (!strcmp(k, "loss"))
				ret = parse_loss(v, c->loss, &c->nr_loss);
			else if (!strcmp(k, "quick_loss"))
				ret = parse_loss(v, c->qloss, &c->nr_qloss);
			else if (!strcmp(k, "seeds"))
				ret = parse_seeds(v, c->seeds, &c->nr_seeds);
			else if (!strcmp(k, "quick_seeds"))
				ret = parse_seeds(v, c->qseeds, &c->nr_qseeds);
			else if (!strcmp(k, "ops"))
				ret = parse_u64(v, &c->ops);
			else if (!strcmp(k, "quick_ops"))
				ret = parse_u64(v, &c->qops);
			else if (!strcmp(k, "sync_every"))
				ret = parse_u64(v, &c->sync_every);
			else if (!strcmp(k, "size"))
				ret = parse_u64(v, &c->size);
			else if (!strcmp(k, "ace_len"))
				ret = parse_u64(v, &c->ace_len);
			else if (!strcmp(k, "quick_ace_len"))
				ret = parse_u64(v, &c->qace_len);
			else if (!strcmp(k, "quick_workloads"))
				ret = parse_u64(v, &c->qworkloads);
			else if (!strcmp(k, "replay_cuts"))
				ret = parse_rc(v, &c->replay_cuts);
			else if (!strcmp(k, "quick_replay_cuts"))
				ret = parse_rc(v, &c->qreplay_cuts);
			else if (!strcmp(k, "fail"))
				ret = parse_fail_list(v, c->fail, &c->nr_fail,
						      false);
			else if (!strcmp(k, "fail_rate"))
				ret = parse_fail_list(v, c->rates, &c->nr_rates,
						      true);
			else if (!strcmp(k, "fail_step"))
				ret = parse_pos(v, &c->fail_step);
			else if (!strcmp(k, "quick_fail_step"))
				ret = parse_pos(v, &c->qfail_step);
			else if (!strcmp(k, "rate_seeds"))
				ret = parse_seeds(v, c->rate_seeds, &c->nr_rate_seeds);
			else if (!strcmp(k, "quick_rate_seeds"))
				ret = parse_seeds(v, c->qrate_seeds, &c->nr_qrate_seeds);
			else if (!strcmp(k, "zone_fail"))
				ret = parse_conds(v, c);
			else if (!strcmp(k, "zone_points"))
				ret = parse_pos(v, &c->zone_points);
			else if (!strcmp(k, "quick_zone_points"))
				ret = parse_pos(v, &c->qzone_points);
			else if (!strcmp(k, "zone_step"))
				ret = parse_pos(v, &c->zone_step);
			else if (!strcmp(k, "quick_zone_step"))
				ret = parse_pos(v, &c->qzone_step);
			else
				ret = -ENOENT;
		}
		if (ret) {
			snprintf(err, elen, "%s:%u: option '%s': %s", path, lno,
				 k, ret == -ENOENT ? "unknown key" : "bad value");
			ret = -EINVAL;
			break;
		}
	}
	fclose(fp);
	return ret;
}

static int load_camp(struct camp *c, const char *path, bool quick, char *err,
		     size_t elen)
{
	const char *b = strrchr(path, '/');
	int ret;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->name, sizeof(c->name), "%.*s", (int)strcspn(b ? b + 1 : path, "."),
		 b ? b + 1 : path);
	snprintf(c->rw, sizeof(c->rw), "write");
	snprintf(c->workload, sizeof(c->workload), "fio");
	snprintf(c->spec, sizeof(c->spec), "sim:zones=32,zone_size=4M,zone_cap=1M");
	c->seed = 1;
	c->quick = quick;
	c->treelog = ZCRASH_TREELOG_ON;	/* the file system's default */
	c->replay_cuts = c->qreplay_cuts = -1;
	ret = parse_file(c, path, false, err, elen);
	if (ret)
		return ret;
	if (quick && c->qreplay_cuts >= 0)
		c->replay_cuts = c->qreplay_cuts;
	if (c->replay_cuts < 0)
		c->replay_cuts = RC_OFF;
	if (!c->nr_loss) {
		c->loss[0] = ZSIM_LOSS_DROP;
		c->nr_loss = 1;
	}
	if (!c->nr_seeds) {
		c->seeds[0] = 1;
		c->nr_seeds = 1;
	}
	if (!c->nr_points) {
		snprintf(c->points[0], 64, "persist=every");
		c->nr_points = 1;
	}
	if (quick) {
		if (c->nr_qpoints) {
			memcpy(c->points, c->qpoints, sizeof(c->points));
			c->nr_points = c->nr_qpoints;
		}
		if (c->nr_qloss) {
			memcpy(c->loss, c->qloss, sizeof(c->loss));
			c->nr_loss = c->nr_qloss;
		}
		if (c->nr_qseeds) {
			memcpy(c->seeds, c->qseeds, sizeof(c->seeds));
			c->nr_seeds = c->nr_qseeds;
		}
	}
	if (strncmp(c->spec, "sim:", 4)) {
		snprintf(err, elen, "%s: crash campaigns need a simulated device (device=sim:...)", path);
		return -EINVAL;
	}
	if (strcmp(c->workload, "faults") &&
	    (c->nr_fail || c->nr_rates || c->nr_zone_conds)) {
		snprintf(err, elen, "%s: fail, fail_rate and zone_fail need workload=faults", path);
		return -EINVAL;
	}
	if (!strcmp(c->workload, "faults")) {
		if (!c->nr_fail && !c->nr_rates && !c->nr_zone_conds) {
			snprintf(err, elen, "%s: workload=faults needs fail, fail_rate or zone_fail", path);
			return -EINVAL;
		}
		if (c->nr_rates && !c->nr_rate_seeds) {
			c->rate_seeds[0] = 1;
			c->nr_rate_seeds = 1;
		}
	}
	return 0;
}

/* ---- the campaign ------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void json_esc(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

struct repro {
	char scenario[512];
	bool quick;
	uint64_t w;
	char cut[48];
	int loss;
	uint64_t seed;
	unsigned int treelog;	/* 0: the scenario's first mode */
	uint64_t cut2;		/* 0: the recovery is not cut */
};

static int parse_repro(const char *line, struct repro *rp)
{
	char tmp[1024], *save = NULL, *t;
	bool have_cut = false;

	memset(rp, 0, sizeof(*rp));
	rp->loss = -1;
	snprintf(tmp, sizeof(tmp), "%s", line);
	for (t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (!strcmp(t, "--quick") || !strcmp(t, "quick"))
			rp->quick = true;
		else if (!strncmp(t, "w=", 2))
			rp->w = strtoull(t + 2, NULL, 0);
		else if (!strncmp(t, "cut=", 4)) {
			snprintf(rp->cut, sizeof(rp->cut), "%s", t + 4);
			have_cut = true;
		} else if (!strncmp(t, "cut2=persist=", 13)) {
			rp->cut2 = strtoull(t + 13, NULL, 0);
			if (!rp->cut2)
				return -EINVAL;
		} else if (!strncmp(t, "treelog=", 8)) {
			if (parse_treelog(t + 8, &rp->treelog) ||
			    rp->treelog == ZCRASH_TREELOG_BOTH)
				return -EINVAL;
		} else if (!strncmp(t, "loss=", 5))
			rp->loss = zsim_loss_parse(t + 5);
		else if (!strncmp(t, "seed=", 5))
			rp->seed = strtoull(t + 5, NULL, 0);
		else
			snprintf(rp->scenario, sizeof(rp->scenario), "%s", t);
	}
	return rp->scenario[0] && have_cut && rp->loss >= 0 ? 0 : -EINVAL;
}

/* Where the states of a campaign are counted and reported. */
struct tally {
	const struct camp *c;
	const struct zcrash_opts *o;
	struct zcrash_summary *sum;
	FILE *csv, *js;
	bool tty, first_viol;
	double last;
	uint64_t nwl;
};

/* Count one checked state: summary, table, repro line, csv, json. */
static void tally_state(struct tally *x, const struct wl *w, uint64_t wi,
			bool is_on, const struct cutpt *pt, uint64_t cut2,
			int loss, uint64_t seed, const struct verdict *v)
{
	struct zcrash_summary *sum = x->sum;
	char line[700], ors[96] = "", c2[48] = "";
	int k;

	sum->tried++;
	sum->tried_treelog[is_on]++;
	sum->nr_injected += v->nr_injected;
	sum->nr_zone_fails += v->nr_zone_fails;
	sum->nr_faulted += v->nr_injected || v->nr_zone_fails;
	sum->nr_errors += v->nr_errors;
	sum->nr_degraded += v->is_degraded;
	if (cut2) {
		sum->tried_replay++;
		snprintf(c2, sizeof(c2), " cut2=persist=%" PRIu64, cut2);
	}
	snprintf(line, sizeof(line), "%s%s w=%" PRIu64 " treelog=%s cut=%s loss=%s seed=%" PRIu64 "%s",
		 x->c->path, x->c->quick ? " quick" : "", wi,
		 is_on ? "on" : "off", pt->name, zsim_loss_name(loss), seed, c2);
	for (k = 1; k < ZCRASH_NR_ORACLES; k++)
		if (v->bad[k]) {
			size_t l = strlen(ors);

			snprintf(ors + l, sizeof(ors) - l, "%s%s",
				 l ? "+" : "", oracle_names[k]);
			sum->by_oracle[k]++;
		}
	if (ors[0]) {
		sum->violations++;
		sum->violations_treelog[is_on]++;
		if (!sum->first_repro[0])
			snprintf(sum->first_repro, sizeof(sum->first_repro),
				 "%.500s", line);
		if (!x->o->is_quiet) {
			if (x->tty)
				fprintf(stderr, "\r\033[K");
			printf("violation: %s (%s): %s\nrepro: %s\n", w->desc,
			       ors, v->msg, line);
		}
		if (x->js) {
			fprintf(x->js, "%s\n    {\"repro\": ",
				x->first_viol ? "" : ",");
			json_esc(x->js, line);
			fprintf(x->js, ", \"workload\": ");
			json_esc(x->js, w->desc);
			fprintf(x->js, ", \"oracles\": \"%s\", \"message\": ", ors);
			json_esc(x->js, v->msg);
			fprintf(x->js, "}");
			x->first_viol = false;
		}
	} else {
		sum->passed++;
	}
	if (x->csv) {
		fprintf(x->csv, "%" PRIu64 ",%s,%s,%" PRIu64 ",%s,%" PRIu64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",\"",
			wi, is_on ? "on" : "off", pt->name, cut2,
			zsim_loss_name(loss), seed, ors[0] ? "violation" : "pass",
			ors[0] ? ors : "", v->gen, v->ack_gen);
		for (k = 0; v->msg[k]; k++)
			if (v->msg[k] != '"')
				fputc(v->msg[k], x->csv);
		fprintf(x->csv, "\"\n");
	}
	if (x->tty && now_s() - x->last > 0.25) {
		x->last = now_s();
		fprintf(stderr, "\r\033[K%s: treelog=%s workload %" PRIu64 "/%" PRIu64 ", %" PRIu64 " states, %" PRIu64 " violations",
			x->c->name, is_on ? "on" : "off", wi + 1, x->nwl,
			sum->tried, sum->violations);
	}
}

static void json_head(FILE *js, const struct camp *c)
{
	unsigned int pi, si;
	int li;

	fprintf(js, "{\n  \"scenario\": ");
	json_esc(js, c->path);
	fprintf(js, ",\n  \"quick\": %s,\n  \"device\": ", c->quick ? "true" : "false");
	json_esc(js, c->spec);
	fprintf(js, ",\n  \"workload\": ");
	json_esc(js, c->workload);
	fprintf(js, ",\n  \"treelog\": [%s%s%s]",
		c->treelog & ZCRASH_TREELOG_OFF ? "\"off\"" : "",
		c->treelog == ZCRASH_TREELOG_BOTH ? ", " : "",
		c->treelog & ZCRASH_TREELOG_ON ? "\"on\"" : "");
	fprintf(js, ",\n  \"replay_cuts\": \"%s\"", rc_names[c->replay_cuts]);
	fprintf(js, ",\n  \"points\": [");
	for (pi = 0; pi < c->nr_points; pi++) {
		fprintf(js, "%s", pi ? ", " : "");
		json_esc(js, c->points[pi]);
	}
	fprintf(js, "],\n  \"loss\": [");
	for (li = 0; li < c->nr_loss; li++)
		fprintf(js, "%s\"%s\"", li ? ", " : "", zsim_loss_name(c->loss[li]));
	fprintf(js, "],\n  \"seeds\": [");
	for (si = 0; si < c->nr_seeds; si++)
		fprintf(js, "%s%" PRIu64, si ? ", " : "", c->seeds[si]);
	fprintf(js, "],\n  \"violations\": [");
}

/* The largest file any state of @r holds, rounded up, with room. */
static uint64_t read_buf_len(const struct rec *r)
{
	uint64_t n = 0, i;
	unsigned int e;

	for (i = 0; i < r->final.nr; i++)
		if (r->final.e[i].size > n)
			n = r->final.e[i].size;
	for (i = 0; i < r->nr_snaps; i++)
		for (e = 0; e < r->snaps[i].m.nr; e++)
			if (r->snaps[i].m.e[e].size > n)
				n = r->snaps[i].m.e[e].size;
	for (i = 0; i < r->nr_past; i++)
		if (r->past[i].size > n)
			n = r->past[i].size;
	return (n + BLK - 1) / BLK * BLK + 8 * BLK;
}

int zcrash_run(const char *scenario, const struct zcrash_opts *opts,
	       struct zcrash_summary *sum)
{
	struct zcrash_opts o0 = { 0 };
	const struct zcrash_opts *o = opts ? opts : &o0;
	struct camp *c = calloc(1, sizeof(*c));
	struct repro rp;
	struct cutlist cl = { 0 };
	struct tally x = { .o = o, .sum = sum, .first_viol = true };
	char err[600] = "", dir[600] = "", path[700];
	uint8_t *tmp = NULL, *buf = NULL;
	uint64_t wi, nwl, w0 = 0, i, buf_len, tmp_len;
	double t0 = now_s();
	int ret = 0, li, mi;
	unsigned int si;

	memset(sum, 0, sizeof(*sum));
	if (!c)
		return -ENOMEM;
	x.c = c;
	x.tty = isatty(2) && !o->is_quiet;
	x.last = t0;
	if (o->repro) {
		if (parse_repro(o->repro, &rp)) {
			fprintf(stderr, "zcow crash: bad repro line '%s' (SCENARIO [quick] w=N [treelog=on|off] cut=POINT loss=POLICY seed=N [cut2=persist=N])\n",
				o->repro);
			free(c);
			return -EINVAL;
		}
		scenario = rp.scenario;
	}
	ret = load_camp(c, scenario, o->repro ? rp.quick : o->quick, err, sizeof(err));
	if (!ret && o->treelog && parse_treelog(o->treelog, &c->treelog)) {
		snprintf(err, sizeof(err), "treelog '%s': on, off or both", o->treelog);
		ret = -EINVAL;
	}
	if (!ret && o->replay_cuts && parse_rc(o->replay_cuts, &c->replay_cuts)) {
		snprintf(err, sizeof(err), "replay cuts '%s': off, log or every", o->replay_cuts);
		ret = -EINVAL;
	}
	if (ret) {
		fprintf(stderr, "zcow crash: %s\n", err);
		free(c);
		return ret;
	}
	if (o->repro)	/* the line's mode, else the scenario's first */
		c->treelog = rp.treelog ? rp.treelog :
			     c->treelog & ZCRASH_TREELOG_OFF ? ZCRASH_TREELOG_OFF :
			     ZCRASH_TREELOG_ON;
	nwl = nr_workloads(c);
	if (o->repro) {
		w0 = rp.w;
		nwl = rp.w + 1;
	}
	x.nwl = nwl;
	if (!o->no_results && !o->repro) {
		time_t now = time(NULL);
		struct tm tm;
		char ts[32];

		gmtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(dir, sizeof(dir), "%s/%s-%s%s", o->results ? o->results : "results",
			 ts, c->name, c->quick ? "-quick" : "");
		mkdir(o->results ? o->results : "results", 0755);
		if (mkdir(dir, 0755) && errno != EEXIST) {
			fprintf(stderr, "zcow crash: %s: %s\n", dir, strerror(errno));
			free(c);
			return -errno;
		}
		snprintf(sum->dir, sizeof(sum->dir), "%.500s", dir);
		snprintf(path, sizeof(path), "%s/crash.csv", dir);
		x.csv = fopen(path, "w");
		snprintf(path, sizeof(path), "%s/crash.json", dir);
		x.js = fopen(path, "w");
		if (!x.csv || !x.js) {
			fprintf(stderr, "zcow crash: %s: %s\n", path, strerror(errno));
			ret = -EIO;
			goto out;
		}
		fprintf(x.csv, "workload,treelog,point,recovery_cut,loss,seed,result,oracles,generation,acked_generation,message\n");
		json_head(x.js, c);
	}
	/* treelog=off first: its exact oracles are today's baseline */
	for (mi = 0; mi < 2; mi++) {
		struct zcow_mount_opts mo = { .no_treelog = mi == 0 };

		if (!(c->treelog & (mi ? ZCRASH_TREELOG_ON : ZCRASH_TREELOG_OFF)))
			continue;
		if (!strcmp(c->workload, "faults")) {
			/* the fault-free run sizes the sweep */
			struct wl w;
			struct rec r;

			c->nr_ft = 0;
			make_wl(c, 0, &w);
			tmp_len = max_write_len(&w);
			free(tmp);
			tmp = malloc(tmp_len);
			ret = record(c, &w, &mo, &r, tmp, err, sizeof(err));
			free(w.ops);
			if (ret) {
				fprintf(stderr, "zcow crash: %s: treelog=%s fault-free run: %s\n",
					c->path, mi ? "on" : "off", err);
				goto out;
			}
			build_trials(c, &r);
			rec_free(&r);
			if (!o->repro)
				nwl = c->nr_ft;
			else if (rp.w >= c->nr_ft) {
				fprintf(stderr, "zcow crash: w=%" PRIu64 ": the campaign has %" PRIu64 " trials\n",
					rp.w, c->nr_ft);
				ret = -EINVAL;
				goto out;
			}
			x.nwl = nwl;
		}
		for (wi = w0; wi < nwl; wi++) {
			struct wl w;
			struct rec r;

			make_wl(c, wi, &w);
			tmp_len = max_write_len(&w);
			free(tmp);
			tmp = malloc(tmp_len);
			ret = record(c, &w, &mo, &r, tmp, err, sizeof(err));
			if (ret) {
				fprintf(stderr, "zcow crash: %s: treelog=%s workload %" PRIu64 " (%s): %s\n",
					c->path, mi ? "on" : "off", wi, w.desc, err);
				free(w.ops);
				goto out;
			}
			buf_len = read_buf_len(&r);
			free(buf);
			buf = malloc(buf_len);
			cl.nr = 0;
			if (o->repro) {
				struct cutpt pt;

				if (point_from_name(rp.cut, &pt)) {
					fprintf(stderr, "zcow crash: bad cut '%s'\n", rp.cut);
					ret = -EINVAL;
					rec_free(&r);
					free(w.ops);
					goto out;
				}
				cl_add(&cl, pt.cut.kind, pt.cut.cls, pt.cut.ordinal,
				       pt.cut.when, rp.cut);
				cl.p[0].is_end = pt.is_end;
			} else {
				unsigned int pi;

				for (pi = 0; pi < c->nr_points; pi++) {
					ret = expand(c->points[pi], &r, c->seed, &cl, err, sizeof(err));
					if (ret) {
						fprintf(stderr, "zcow crash: %s: %s\n", c->path, err);
						rec_free(&r);
						free(w.ops);
						goto out;
					}
				}
			}
			sum->nr_workloads++;
			sum->nr_points += cl.nr;
			for (i = 0; i < cl.nr; i++)
				for (li = 0; li < c->nr_loss; li++)
					for (si = 0; si < c->nr_seeds; si++) {
						int loss = o->repro ? rp.loss : c->loss[li];
						uint64_t seed = o->repro ? rp.seed : c->seeds[si];
						uint64_t log_root = 0, n, nr_rc;
						struct verdict v;

						if (o->repro && (li || si))
							continue;
						if (o->max_cases && sum->tried >= o->max_cases)
							goto done;
						ret = run_case(c, &w, &r, &cl.p[i], loss, seed, &mo,
							       0, 0, tmp, buf, buf_len, &v, &log_root);
						if (ret)
							goto setup_failed;
						if (o->repro && rp.cut2) {
							uint64_t g = v.gen;

							ret = run_case(c, &w, &r, &cl.p[i], loss, seed, &mo,
								       rp.cut2, g, tmp, buf, buf_len, &v,
								       &log_root);
							if (ret)
								goto setup_failed;
							tally_state(&x, &w, wi, mi, &cl.p[i], rp.cut2,
								    loss, seed, &v);
							continue;
						}
						tally_state(&x, &w, wi, mi, &cl.p[i], 0, loss, seed, &v);
						if (o->repro || c->replay_cuts == RC_OFF ||
						    (c->replay_cuts == RC_LOG && !log_root))
							continue;
						/* the recovery itself cut at each of its
						 * persist points (bounded: 0 when the
						 * mount failed) */
						nr_rc = v.nr_recovery_persist;
						for (n = 1; n <= nr_rc; n++) {
							struct verdict v2;

							if (o->max_cases && sum->tried >= o->max_cases)
								goto done;
							ret = run_case(c, &w, &r, &cl.p[i], loss, seed,
								       &mo, n, v.gen, tmp, buf, buf_len,
								       &v2, &log_root);
							if (ret)
								goto setup_failed;
							tally_state(&x, &w, wi, mi, &cl.p[i], n, loss,
								    seed, &v2);
						}
					}
			rec_free(&r);
			free(w.ops);
			continue;
setup_failed:
			fprintf(stderr, "zcow crash: case setup failed: %s\n",
				strerror(-ret));
			rec_free(&r);
			free(w.ops);
			goto out;
done:
			rec_free(&r);
			free(w.ops);
			goto finished;
		}
	}
finished:
	ret = 0;
	if (x.tty)
		fprintf(stderr, "\r\033[K");
	sum->seconds = now_s() - t0;
	if (!o->is_quiet) {
		int k;

		printf("campaign %s%s: %" PRIu64 " workloads, %" PRIu64 " crash points, %d loss policies x %u seeds, treelog=%s, replay cuts %s\n",
		       c->name, c->quick ? " (quick)" : "", sum->nr_workloads,
		       sum->nr_points, o->repro ? 1 : c->nr_loss, o->repro ? 1 : c->nr_seeds,
		       c->treelog == ZCRASH_TREELOG_BOTH ? "both" :
		       c->treelog == ZCRASH_TREELOG_ON ? "on" : "off",
		       rc_names[c->replay_cuts]);
		printf("%-22s %10s\n", "crash states tried", "");
		printf("  %-20s %10" PRIu64 "\n", "tried", sum->tried);
		printf("  %-20s %10" PRIu64 "\n", "passed", sum->passed);
		printf("  %-20s %10" PRIu64 "\n", "violations", sum->violations);
		for (k = 1; k < ZCRASH_NR_ORACLES; k++)
			printf("  %d %-18s %10" PRIu64 "\n", k, oracle_names[k], sum->by_oracle[k]);
		for (k = 0; k < 2; k++)
			if (c->treelog & (k ? ZCRASH_TREELOG_ON : ZCRASH_TREELOG_OFF))
				printf("  treelog=%-12s %10" PRIu64 " (%" PRIu64 " violations)\n",
				       k ? "on" : "off", sum->tried_treelog[k],
				       sum->violations_treelog[k]);
		printf("  %-20s %10" PRIu64 "\n", "recovery cut again", sum->tried_replay);
		if (!strcmp(c->workload, "faults")) {
			printf("  %-20s %10" PRIu64 "\n", "states with a fault", sum->nr_faulted);
			printf("  %-20s %10" PRIu64 "\n", "commands failed", sum->nr_injected);
			printf("  %-20s %10" PRIu64 "\n", "zones failed", sum->nr_zone_fails);
			printf("  %-20s %10" PRIu64 "\n", "errors reported", sum->nr_errors);
			printf("  %-20s %10" PRIu64 "\n", "degraded (offline)", sum->nr_degraded);
		}
		printf("  %-20s %10.2f (%.0f states/min)\n", "seconds", sum->seconds,
		       sum->seconds > 0 ? sum->tried * 60.0 / sum->seconds : 0.0);
		if (dir[0])
			printf("results: %s\n", dir);
	}
	if (x.js) {
		int k;

		fprintf(x.js, "%s],\n  \"workloads\": %" PRIu64 ",\n  \"crash_points\": %" PRIu64 ",\n  \"tried\": %" PRIu64 ",\n  \"passed\": %" PRIu64 ",\n  \"violations\": %" PRIu64 ",\n  \"by_oracle\": {",
			x.first_viol ? "" : "\n  ", sum->nr_workloads, sum->nr_points,
			sum->tried, sum->passed, sum->violations);
		for (k = 1; k < ZCRASH_NR_ORACLES; k++)
			fprintf(x.js, "%s\"%s\": %" PRIu64, k > 1 ? ", " : "", oracle_names[k],
				sum->by_oracle[k]);
		fprintf(x.js, "},\n  \"by_treelog\": {\"off\": {\"tried\": %" PRIu64 ", \"violations\": %" PRIu64 "}, \"on\": {\"tried\": %" PRIu64 ", \"violations\": %" PRIu64 "}},\n  \"recovery_cut_states\": %" PRIu64,
			sum->tried_treelog[0], sum->violations_treelog[0],
			sum->tried_treelog[1], sum->violations_treelog[1],
			sum->tried_replay);
		if (!strcmp(c->workload, "faults"))
			fprintf(x.js, ",\n  \"faults\": {\"states_with_a_fault\": %" PRIu64 ", \"commands_failed\": %" PRIu64 ", \"zones_failed\": %" PRIu64 ", \"errors_reported\": %" PRIu64 ", \"degraded\": %" PRIu64 "}",
				sum->nr_faulted, sum->nr_injected, sum->nr_zone_fails,
				sum->nr_errors, sum->nr_degraded);
		fprintf(x.js, ",\n  \"seconds\": %.3f,\n  \"states_per_minute\": %.0f\n}\n",
			sum->seconds, sum->seconds > 0 ? sum->tried * 60.0 / sum->seconds : 0.0);
	}
	ret = sum->violations ? 1 : 0;
out:
	if (x.csv)
		fclose(x.csv);
	if (x.js)
		fclose(x.js);
	free(cl.p);
	free(tmp);
	free(buf);
	free(c->ft);
	free(c);
	return ret;
}
