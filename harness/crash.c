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
#include "zcow.h"
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

struct wl {
	struct op *ops;
	unsigned int nr, cap;
	char desc[160];
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
	o->tag = w->nr * 0x9e3779b97f4a7c15ULL + 17;
}

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
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
	uint8_t *data;
	uint64_t size, cap;
};

struct model {
	struct ent e[MAX_ENT];
	unsigned int nr;
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

struct rec {			/* the uncut run of one workload */
	int *ret;		/* per op */
	uint64_t *gen_after;	/* fs generation after each op */
	struct snap *snaps;
	unsigned int nr_snaps;
	uint64_t mount_gen;
	uint64_t persist, mark_persist;
	uint64_t cls[ZDEV_NR_CLASSES];
	uint64_t resets, finishes, flushes, zone_ops;
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
};

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

/* The uncut run: counts and the model at every commit. */
static int record(const struct camp *c, const struct wl *w, struct rec *r,
		  uint8_t *tmp, char *err, size_t elen)
{
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	struct zdev_stats s0, s1;
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
	ret = zcow_mount(dev, NULL, &fs);
	if (ret) {
		snprintf(err, elen, "mount after mkfs: %s", strerror(-ret));
		zdev_close(dev);
		return ret;
	}
	r->mount_gen = fs->generation;
	add_snap(r, fs->generation, true, &r->final);
	for (i = 0; i < w->nr; i++) {
		const struct op *o = &w->ops[i];

		if (o->kind == OP_MARK)
			r->mark_persist = zsim_nr_persist(sim) - p0;
		gen = fs->generation;
		r->ret[i] = do_op(fs, o, tmp);
		if (!r->ret[i])
			m_apply(&r->final, o, tmp);
		r->gen_after[i] = fs->generation;
		if (fs->generation != gen)
			add_snap(r, fs->generation,
				 is_sync_op(o->kind) && r->ret[i] == 0,
				 &r->final);
		if (fs->error) {
			snprintf(err, elen, "uncut run: op %u (%s %s) put the fs in the error state: %s",
				 i, op_names[o->kind], o->a,
				 strerror(-fs->error));
			zcow_unmount(fs);
			zdev_close(dev);
			return -EIO;
		}
	}
	r->persist = zsim_nr_persist(sim) - p0;
	zdev_get_stats(dev, &s1);
	for (k = 0; k < ZDEV_NR_CLASSES; k++) {
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
	} else {
		gen_fio(c, w);
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

struct verdict {
	bool bad[ZCRASH_NR_ORACLES];
	char msg[256];
	uint64_t gen, ack_gen;
};

static void fail(struct verdict *v, enum zcrash_oracle o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct verdict *v, enum zcrash_oracle o, const char *fmt, ...)
{
	va_list ap;

	if (!v->msg[0]) {
		int n = snprintf(v->msg, sizeof(v->msg), "oracle %d: ", o);

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

/* ---- one crash state --------------------------------------------- */

static int run_case(const struct camp *c, const struct wl *w,
		    const struct rec *r, const struct cutpt *pt, int loss,
		    uint64_t seed, uint8_t *tmp, uint8_t *buf, uint64_t buf_len,
		    struct verdict *v)
{
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	struct zcow_file *f = NULL;
	struct zsim *sim;
	uint64_t ack_gen = r->mount_gen;
	unsigned int i;
	int ret;

	memset(v, 0, sizeof(*v));
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
	ret = zcow_mount(dev, NULL, &fs);
	if (ret) {
		zdev_close(dev);
		return ret;
	}
	for (i = 0; i < w->nr; i++) {
		ret = do_op(fs, &w->ops[i], tmp);
		if (zsim_is_cut(sim))
			break;
		if (ret != r->ret[i]) {
			fail(v, ZCRASH_ACKED, "replay diverged at op %u (%s %s): %d, uncut %d",
			     i, op_names[w->ops[i].kind], w->ops[i].a, ret,
			     r->ret[i]);
			break;
		}
		if (!ret && is_sync_op(w->ops[i].kind))
			ack_gen = r->gen_after[i];
	}
	if (!zsim_is_cut(sim))
		zsim_cut_now(sim, (enum zsim_loss)loss, seed);
	zcow_unmount(fs);	/* fails (power is off) and frees */
	fs = NULL;
	zsim_power_cycle(sim);
	v->ack_gen = ack_gen;

	/* 1: mount */
	ret = zcow_mount(dev, NULL, &fs);
	if (ret) {
		fail(v, ZCRASH_MOUNT, "mount: %s", strerror(-ret));
		zdev_close(dev);
		return 0;
	}
	v->gen = fs->generation;
	/* 2: check */
	ret = zcow_check(fs, check_report, v);
	if (ret < 0)
		fail(v, ZCRASH_CHECK, "check: %s", strerror(-ret));
	/* 3: generation */
	if (fs->generation < ack_gen)
		fail(v, ZCRASH_GEN, "generation %" PRIu64 " < acknowledged %" PRIu64,
		     fs->generation, ack_gen);
	/* 4, 5: contents */
	else
		compare(fs, r, ack_gen, fs->generation, v, buf, buf_len);
	/* 6: block groups vs zones, then the recovered fs keeps working */
	check_bgs(fs, v);
	ret = zcow_create(fs, "/.zcrash", &f);
	if (!ret) {
		fill(tmp, 2 * BLK, 99, 0);
		if (zcow_pwrite(f, tmp, 2 * BLK, 0) < 0)
			ret = -EIO;
		zcow_close(f);
	}
	if (!ret)
		ret = zcow_sync(fs);
	if (ret && ret != -ENOSPC)
		fail(v, ZCRASH_MOUNT, "write after recovery: %s", strerror(-ret));
	zcow_unmount(fs);
	if (zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP))
		fail(v, ZCRASH_DEVICE, "%" PRIu64 " writes off a write pointer",
		     zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP));
	zdev_close(dev);
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
			else if (!strcmp(k, "name"))
				snprintf(c->name, sizeof(c->name), "%s", v);
		} else if (!strcmp(sect, "crash")) {
			if (!strcmp(k, "workload"))
				snprintf(c->workload, sizeof(c->workload), "%s", v);
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
	ret = parse_file(c, path, false, err, elen);
	if (ret)
		return ret;
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

static const char *const oracle_names[ZCRASH_NR_ORACLES] = {
	"ok", "mount", "check", "generation", "acked", "atomic", "device"
};

struct repro {
	char scenario[512];
	bool quick;
	uint64_t w;
	char cut[48];
	int loss;
	uint64_t seed;
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
		} else if (!strncmp(t, "loss=", 5))
			rp->loss = zsim_loss_parse(t + 5);
		else if (!strncmp(t, "seed=", 5))
			rp->seed = strtoull(t + 5, NULL, 0);
		else
			snprintf(rp->scenario, sizeof(rp->scenario), "%s", t);
	}
	return rp->scenario[0] && have_cut && rp->loss >= 0 ? 0 : -EINVAL;
}

int zcrash_run(const char *scenario, const struct zcrash_opts *opts,
	       struct zcrash_summary *sum)
{
	struct zcrash_opts o0 = { 0 };
	const struct zcrash_opts *o = opts ? opts : &o0;
	struct camp *c = calloc(1, sizeof(*c));
	struct repro rp;
	struct cutlist cl = { 0 };
	FILE *csv = NULL, *js = NULL;
	char err[600] = "", dir[600] = "", path[700];
	uint8_t *tmp = NULL, *buf = NULL;
	uint64_t wi, nwl, w0 = 0, i, buf_len = 0, tmp_len;
	bool tty = isatty(2) && !o->is_quiet, first_viol = true;
	double t0 = now_s(), last = t0;
	int ret = 0, li;
	unsigned int si, pi;

	memset(sum, 0, sizeof(*sum));
	if (!c)
		return -ENOMEM;
	if (o->repro) {
		if (parse_repro(o->repro, &rp)) {
			fprintf(stderr, "zcow crash: bad repro line '%s' (SCENARIO [quick] w=N cut=POINT loss=POLICY seed=N)\n",
				o->repro);
			free(c);
			return -EINVAL;
		}
		scenario = rp.scenario;
	}
	ret = load_camp(c, scenario, o->repro ? rp.quick : o->quick, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "zcow crash: %s\n", err);
		free(c);
		return ret;
	}
	nwl = nr_workloads(c);
	if (o->repro) {
		w0 = rp.w;
		nwl = rp.w + 1;
	}
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
		csv = fopen(path, "w");
		snprintf(path, sizeof(path), "%s/crash.json", dir);
		js = fopen(path, "w");
		if (!csv || !js) {
			fprintf(stderr, "zcow crash: %s: %s\n", path, strerror(errno));
			ret = -EIO;
			goto out;
		}
		fprintf(csv, "workload,point,loss,seed,result,oracles,generation,acked_generation,message\n");
		fprintf(js, "{\n  \"scenario\": ");
		json_esc(js, c->path);
		fprintf(js, ",\n  \"quick\": %s,\n  \"device\": ", c->quick ? "true" : "false");
		json_esc(js, c->spec);
		fprintf(js, ",\n  \"workload\": ");
		json_esc(js, c->workload);
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
	for (wi = w0; wi < nwl; wi++) {
		struct wl w;
		struct rec r;

		make_wl(c, wi, &w);
		tmp_len = max_write_len(&w);
		free(tmp);
		tmp = malloc(tmp_len);
		ret = record(c, &w, &r, tmp, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "zcow crash: %s: workload %" PRIu64 " (%s): %s\n",
				c->path, wi, w.desc, err);
			free(w.ops);
			goto out;
		}
		for (i = 0; i < r.final.nr; i++)
			if (r.final.e[i].size > buf_len)
				buf_len = r.final.e[i].size;
		for (i = 0; i < r.nr_snaps; i++) {
			unsigned int e;

			for (e = 0; e < r.snaps[i].m.nr; e++)
				if (r.snaps[i].m.e[e].size > buf_len)
					buf_len = r.snaps[i].m.e[e].size;
		}
		buf_len = (buf_len + BLK - 1) / BLK * BLK + 8 * BLK;
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
					struct verdict v;
					char line[700], ors[64] = "";
					int k;

					if (o->repro && (li || si))
						continue;
					if (o->max_cases && sum->tried >= o->max_cases)
						goto done;
					ret = run_case(c, &w, &r, &cl.p[i], loss, seed,
						       tmp, buf, buf_len, &v);
					if (ret) {
						fprintf(stderr, "zcow crash: case setup failed: %s\n",
							strerror(-ret));
						rec_free(&r);
						free(w.ops);
						goto out;
					}
					sum->tried++;
					snprintf(line, sizeof(line), "%s%s w=%" PRIu64 " cut=%s loss=%s seed=%" PRIu64,
						 c->path, c->quick ? " quick" : "", wi,
						 cl.p[i].name, zsim_loss_name(loss), seed);
					for (k = 1; k < ZCRASH_NR_ORACLES; k++)
						if (v.bad[k]) {
							size_t l = strlen(ors);

							snprintf(ors + l, sizeof(ors) - l, "%s%s",
								 l ? "+" : "", oracle_names[k]);
							sum->by_oracle[k]++;
						}
					if (ors[0]) {
						sum->violations++;
						if (!sum->first_repro[0])
							snprintf(sum->first_repro, sizeof(sum->first_repro), "%.500s", line);
						if (!o->is_quiet) {
							if (tty)
								fprintf(stderr, "\r\033[K");
							printf("violation: %s (%s): %s\nrepro: %s\n",
							       w.desc, ors, v.msg, line);
						}
						if (js) {
							fprintf(js, "%s\n    {\"repro\": ", first_viol ? "" : ",");
							json_esc(js, line);
							fprintf(js, ", \"workload\": ");
							json_esc(js, w.desc);
							fprintf(js, ", \"oracles\": \"%s\", \"message\": ", ors);
							json_esc(js, v.msg);
							fprintf(js, "}");
							first_viol = false;
						}
					} else {
						sum->passed++;
					}
					if (csv) {
						fprintf(csv, "%" PRIu64 ",%s,%s,%" PRIu64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",\"",
							wi, cl.p[i].name, zsim_loss_name(loss), seed,
							ors[0] ? "violation" : "pass", ors[0] ? ors : "",
							v.gen, v.ack_gen);
						for (k = 0; v.msg[k]; k++)
							if (v.msg[k] != '"')
								fputc(v.msg[k], csv);
						fprintf(csv, "\"\n");
					}
					if (tty && now_s() - last > 0.25) {
						last = now_s();
						fprintf(stderr, "\r\033[K%s: workload %" PRIu64 "/%" PRIu64 ", %" PRIu64 " states, %" PRIu64 " violations",
							c->name, wi + 1, nwl, sum->tried, sum->violations);
					}
				}
		rec_free(&r);
		free(w.ops);
		continue;
done:
		rec_free(&r);
		free(w.ops);
		break;
	}
	ret = 0;
	if (tty)
		fprintf(stderr, "\r\033[K");
	sum->seconds = now_s() - t0;
	if (!o->is_quiet) {
		int k;

		printf("campaign %s%s: %" PRIu64 " workloads, %" PRIu64 " crash points, %d loss policies x %u seeds\n",
		       c->name, c->quick ? " (quick)" : "", sum->nr_workloads,
		       sum->nr_points, o->repro ? 1 : c->nr_loss, o->repro ? 1 : c->nr_seeds);
		printf("%-22s %10s\n", "crash states tried", "");
		printf("  %-20s %10" PRIu64 "\n", "tried", sum->tried);
		printf("  %-20s %10" PRIu64 "\n", "passed", sum->passed);
		printf("  %-20s %10" PRIu64 "\n", "violations", sum->violations);
		for (k = 1; k < ZCRASH_NR_ORACLES; k++)
			printf("  %d %-18s %10" PRIu64 "\n", k, oracle_names[k], sum->by_oracle[k]);
		printf("  %-20s %10.2f (%.0f states/min)\n", "seconds", sum->seconds,
		       sum->seconds > 0 ? sum->tried * 60.0 / sum->seconds : 0.0);
		if (dir[0])
			printf("results: %s\n", dir);
	}
	if (js) {
		int k;

		fprintf(js, "%s],\n  \"workloads\": %" PRIu64 ",\n  \"crash_points\": %" PRIu64 ",\n  \"tried\": %" PRIu64 ",\n  \"passed\": %" PRIu64 ",\n  \"violations\": %" PRIu64 ",\n  \"by_oracle\": {",
			first_viol ? "" : "\n  ", sum->nr_workloads, sum->nr_points,
			sum->tried, sum->passed, sum->violations);
		for (k = 1; k < ZCRASH_NR_ORACLES; k++)
			fprintf(js, "%s\"%s\": %" PRIu64, k > 1 ? ", " : "", oracle_names[k],
				sum->by_oracle[k]);
		fprintf(js, "},\n  \"seconds\": %.3f,\n  \"states_per_minute\": %.0f\n}\n",
			sum->seconds, sum->seconds > 0 ? sum->tried * 60.0 / sum->seconds : 0.0);
	}
	ret = sum->violations ? 1 : 0;
out:
	if (csv)
		fclose(csv);
	if (js)
		fclose(js);
	free(cl.p);
	free(tmp);
	free(buf);
	free(c);
	return ret;
}
