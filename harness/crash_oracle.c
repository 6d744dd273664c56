// SPDX-License-Identifier: MIT
/*
 * zcrash runs and oracles (harness/crash_int.h, docs/crash.md): the
 * uncut run of a workload (record), each crash state (a fresh simulated
 * device, mkfs, the workload replayed up to the armed cut, power cycle),
 * an optional second cut during its recovery, and the recovery judged by
 * the oracles: one verdict per state.
 *
 * The file system is read through its public API only (include/zcow.h):
 * its generation and error state, and the checker's zone rule
 * (zcow_check_zones(), oracle 6b).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_int.h"


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

/* Close the devices of a run: the fs's and the replace's target. */
static void close_devs(struct zcrash_pair *p)
{
	zcrash_replace_close(p);
	zdev_close(p->src);
}

/* The command counts of the devices of a run, summed. */
static void get_stats(const struct zcrash_pair *p, struct zdev_stats *s)
{
	struct zdev_stats t;
	int k, op;

	zdev_get_stats(p->src, s);
	if (!p->tgt)
		return;
	zdev_get_stats(p->tgt, &t);
	for (k = 0; k < ZDEV_NR_CLASSES; k++)
		for (op = 0; op < ZDEV_NR_OPS; op++)
			s->cmds[k][op] += t.cmds[k][op];
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

/* The uncut run: counts and the model at every commit, every path state
 * and what each persistence op made durable (crash_int.h). */
int zcrash_record(const struct camp *c, const struct wl *w,
		  const struct zcow_mount_opts *mo, struct rec *r,
		  uint8_t *tmp, char *err, size_t elen)
{
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	struct zdev_stats s0, s1, sm;
	struct zcrash_pair pair;
	struct zsim *sim;
	uint64_t p0, gen;
	unsigned int i;
	int ret, k;

	memset(r, 0, sizeof(*r));
	r->ret = calloc(w->nr + 1, sizeof(*r->ret));
	r->gen_after = calloc(w->nr + 1, sizeof(*r->gen_after));
	if (!r->ret || !r->gen_after) {
		snprintf(err, elen, "recording the uncut run: %s",
			 strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = fresh_dev(c, &dev);
	if (ret) {
		snprintf(err, elen, "device %s: mkfs: %s", c->spec,
			 strerror(-ret));
		return ret;
	}
	ret = zcrash_replace_open(c, dev, &pair);
	if (ret) {
		snprintf(err, elen, "device %s: the replace's target: %s",
			 c->spec, strerror(-ret));
		zdev_close(dev);
		return ret;
	}
	sim = zsim_from_dev(dev);
	get_stats(&pair, &s0);
	p0 = zsim_nr_persist(sim);
	ret = zcow_mount(dev, mo, &fs);
	if (ret) {
		snprintf(err, elen, "mount after mkfs: %s", strerror(-ret));
		close_devs(&pair);
		return ret;
	}
	r->mount_gen = zcow_fs_generation(fs);
	r->nr_zones = dev->info.nr_zones;
	ret = zcrash_add_snap(r, zcow_fs_generation(fs), true, &r->final);
	if (ret) {
		snprintf(err, elen, "recording the uncut run: %s",
			 strerror(-ret));
		zcow_unmount(fs);
		close_devs(&pair);
		return ret;
	}
	get_stats(&pair, &sm);
	r->nr_cmds = zsim_nr_commands(sim);
	ret = arm_trial(dev, w->ft);
	if (ret) {
		snprintf(err, elen, "fault %s: %s", w->ft->name,
			 strerror(-ret));
		zcow_unmount(fs);
		close_devs(&pair);
		return ret;
	}
	for (i = 0; i < w->nr; i++) {
		const struct op *o = &w->ops[i];

		if (o->kind == OP_MARK)
			r->mark_persist = zsim_nr_persist(sim) - p0;
		gen = zcow_fs_generation(fs);
		r->ret[i] = zcrash_do_op(fs, pair.tgt, o, tmp);
		ret = 0;
		/* a recorded call: the replay must give what the recording
		 * got (success; fallocate is refused on zoned storage) */
		if (o->line && r->ret[i] != o->expect) {
			snprintf(err, elen, "%s:%u: %s %s%s%s: the replay returned %d (%s), the recording %d",
				 c->ops_file, o->line, op_names[o->kind], o->a,
				 o->b[0] ? " " : "", o->b, r->ret[i],
				 r->ret[i] ? strerror(-r->ret[i]) : "success",
				 o->expect);
			zcow_unmount(fs);
			close_devs(&pair);
			return r->ret[i] ? r->ret[i] : -EINVAL;
		}
		/*
		 * The op committed on its way (a flush or a reclaim pass
		 * before its data was recorded, or between the parts of a
		 * split write): such a commit holds the ops before it and
		 * part of this one, so the model before the op is a
		 * candidate of those generations too, the first and the
		 * last of them (a reclaim pass commits several times; not
		 * exact; the model after it is added below).
		 */
		if (zcow_fs_generation(fs) != gen && o->kind != OP_SYNC) {
			ret = zcrash_add_snap(r, gen + 1, false, &r->final);
			if (!ret && zcow_fs_generation(fs) > gen + 1)
				ret = zcrash_add_snap(r,
						      zcow_fs_generation(fs),
						      false, &r->final);
		}
		if (!ret && !r->ret[i]) {
			zcrash_void_inode(r, o, i);
			ret = zcrash_m_apply(&r->final, o);
			ret = ret ?: zcrash_note_past(r, o, i + 1);
			if (!ret && zcrash_is_sync_op(o->kind))
				ret = zcrash_note_durable(r, o, i);
		}
		r->gen_after[i] = zcow_fs_generation(fs);
		/* a snapshot and its delete end in their own commit */
		if (!ret && zcow_fs_generation(fs) != gen)
			ret = zcrash_add_snap(r, zcow_fs_generation(fs),
				 (zcrash_is_sync_op(o->kind) ||
				  o->kind == OP_SNAPSHOT ||
				  o->kind == OP_SUBVOL_DELETE) &&
					 r->ret[i] == 0,
				 &r->final);
		if (ret) {
			snprintf(err, elen, "recording the uncut run: op %u (%s %s): %s",
				 i, op_names[o->kind], o->a,
				 ret == -E2BIG ? "more entries than the model holds" :
				 strerror(-ret));
			zcow_unmount(fs);
			close_devs(&pair);
			return ret;
		}
		if (zcow_fs_error(fs) && !w->ft) {
			snprintf(err, elen, "uncut run: op %u (%s %s) put the fs in the error state: %s",
				 i, op_names[o->kind], o->a,
				 strerror(-zcow_fs_error(fs)));
			zcow_unmount(fs);
			close_devs(&pair);
			return -EIO;
		}
		if (r->ret[i] && o->kind >= OP_REPLACE_START) {
			snprintf(err, elen, "uncut run: op %u (%s) failed: %s",
				 i, op_names[o->kind], strerror(-r->ret[i]));
			zcow_unmount(fs);
			close_devs(&pair);
			return r->ret[i];
		}
	}
	zcrash_void_obligations(w, r);
	r->persist = zsim_nr_persist(sim) - p0;
	get_stats(&pair, &s1);
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
	close_devs(&pair);
	return 0;
}

/* ---- oracles ----------------------------------------------------- */

const char *const oracle_names[ZCRASH_NR_ORACLES] = {
	"ok", "mount", "check", "generation", "acked", "atomic", "device",
	"fsync", "no-garbage", "reported", "replace", "btrfs"
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
	bool is_symlink;
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
			snprintf(e->path, sizeof(e->path), "%.*s",
				 PATH_LEN - 1, full);
		}
		e->is_dir = ents[i].type == 2;
		e->is_symlink = ents[i].type == 7;
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
	return zcrash_ent_blk(e, b);
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
		want = zcrash_ent_blk(e, b);
	return !memcmp(want, got + b * BLK, n);
}

/* The recovered namespace and every file's size and content hash. */
struct scan {
	struct rent e[MAX_ENT];
	uint64_t size[MAX_ENT], hash[MAX_ENT];
	int err[MAX_ENT];	/* a file's open/read error; -EFBIG: larger
				 * than any file the workload wrote */
	unsigned int nr;
};

/* Bytes of a file read and hashed at a time: hashed while in cache. */
#define SCAN_CHUNK (256 * 1024)

/*
 * Read open file @f whole, @size bytes, and hash it in pieces of
 * SCAN_CHUNK (the hash of the whole, zcrash_hash_bytes()): 0, or the
 * read's -errno (-EIO: short).
 */
static int hash_file(struct zcow_file *f, uint64_t size, uint8_t *buf,
		     uint64_t buf_len, uint64_t *hash)
{
	uint64_t chunk = buf_len < SCAN_CHUNK ? buf_len : SCAN_CHUNK;
	uint64_t h = zcrash_hash_begin(size), off, n;
	int64_t got;

	for (off = 0; off < size; off += n) {
		n = size - off < chunk ? size - off : chunk;
		got = zcow_pread(f, buf, n, off);
		if (got < 0)
			return (int)got;
		if ((uint64_t)got != n)
			return -EIO;
		h = zcrash_hash_more(h, buf, n);
	}
	*hash = h;
	return 0;
}

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
		if (s->e[i].is_symlink) {	/* its target is its content */
			n = zcow_readlink(fs, s->e[i].path, (char *)buf,
					  buf_len);
			s->err[i] = n < 0 ? (int)n : 0;
			if (n >= 0) {
				s->size[i] = (uint64_t)n;
				s->hash[i] = zcrash_state_hash(true, buf, s->size[i]);
			}
			continue;
		}
		ret = zcow_open(fs, s->e[i].path, O_RDONLY, &f);
		if (!ret)
			ret = zcow_fstat(f, &st);
		if (!ret && st.size > buf_len)
			ret = -EFBIG;
		if (!ret)
			ret = hash_file(f, st.size, buf, buf_len, &s->hash[i]);
		if (f)
			zcow_close(f);
		s->err[i] = ret;
		if (!ret)
			s->size[i] = st.size;
		else
			s->hash[i] = 0;
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

/* Recovered file @i of @sc reads back whole as one of the candidates. */
static bool is_whole_candidate(const struct scan *sc, unsigned int i,
			       const struct model *const *cand,
			       unsigned int nc)
{
	unsigned int j;

	if (sc->err[i])
		return false;
	for (j = 0; j < nc; j++) {
		struct ent *c = zcrash_m_find((struct model *)cand[j], sc->e[i].path);

		if (c && !c->is_dir && c->is_symlink == sc->e[i].is_symlink &&
		    c->size == sc->size[i] && zcrash_ent_hash(c) == sc->hash[i])
			return true;
	}
	return false;
}

/*
 * Oracles 4 and 5 (treelog=off) over @sc, the scan of the recovered fs
 * (@scan_ret its error): the namespace and every file one commit's.  A
 * file that reads back whole as a candidate passes on its hash; any
 * other is read again and compared block by block, which says which
 * block is wrong.
 */
static void compare(struct zcow_fs *fs, const struct rec *r, uint64_t ack_gen,
		    uint64_t gen, struct verdict *v, const struct scan *sc,
		    int scan_ret, uint8_t *buf, uint64_t buf_len)
{
	static const uint8_t zero[BLK];
	const struct snap *A = find_snap(r, ack_gen), *S = find_snap(r, gen);
	const struct model *cand[256];
	const struct rent *got = sc->e;
	unsigned int nr_got = sc->nr, nc = 0, i, j;
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
	if (scan_ret) {
		fail(v, ZCRASH_ACKED, "readdir: %s", strerror(-scan_ret));
		return;
	}
	/* namespace: every recovered entry exists in a candidate */
	for (i = 0; i < nr_got; i++) {
		bool ok = false;

		for (j = 0; j < nc && !ok; j++) {
			struct ent *e = zcrash_m_find((struct model *)cand[j], got[i].path);

			ok = e && e->is_dir == got[i].is_dir &&
			     e->is_symlink == got[i].is_symlink;
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
			struct ent *c = zcrash_m_find((struct model *)cand[j], e->path);

			all = c && c->is_dir == e->is_dir;
		}
		if (!all)
			continue;
		for (j = 0; j < nr_got && !found; j++)
			found = !strcmp(got[j].path, e->path);
		if (!found)
			fail(v, S && i >= A->m.nr && !zcrash_m_find((struct model *)&A->m, e->path) ?
				ZCRASH_ATOMIC : ZCRASH_ACKED,
			     "gen %" PRIu64 ": %s %s missing", gen,
			     e->is_dir ? "dir" : "file", e->path);
	}
	/* contents */
	for (i = 0; i < nr_got; i++) {
		struct zcow_file *f = NULL;
		struct ent *ae = A ? zcrash_m_find((struct model *)&A->m, got[i].path) : NULL;
		struct zcow_stat st;
		uint64_t b, nb;
		int64_t n;
		bool size_ok = false;

		if (got[i].is_dir || is_whole_candidate(sc, i, cand, nc))
			continue;
		if (got[i].is_symlink) {	/* its target is its content */
			n = zcow_readlink(fs, got[i].path, (char *)buf,
					  buf_len);
			if (n < 0) {
				fail(v, ae ? ZCRASH_ACKED : ZCRASH_ATOMIC,
				     "%s: readlink: %s", got[i].path,
				     strerror((int)-n));
				continue;
			}
			st.size = (uint64_t)n;
			goto compare;
		}
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
compare:
		for (j = 0; j < nc && !size_ok; j++) {
			struct ent *c = zcrash_m_find((struct model *)cand[j], got[i].path);

			size_ok = c && c->size == st.size &&
				  c->is_symlink == got[i].is_symlink;
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
				struct ent *c = zcrash_m_find((struct model *)cand[j], got[i].path);

				ok = c && !c->is_dir &&
				     c->is_symlink == got[i].is_symlink &&
				     blk_eq(c, b, buf, st.size, zero);
			}
			if (ok)
				continue;
			/* acked: the file was acknowledged and nothing
			 * since changed it */
			acked = ae;
			for (j = 0; j < nc && acked; j++) {
				struct ent *c = zcrash_m_find((struct model *)cand[j], got[i].path);

				acked = c && zcrash_ent_same_data(c, ae);
			}
			fail(v, acked ? ZCRASH_ACKED : ZCRASH_ATOMIC,
			     "gen %" PRIu64 ": %s block %" PRIu64 " is neither old nor new content",
			     gen, got[i].path, b);
			break;
		}
	}
}

/* Oracle 6b: a block group the durable superblock references holds no
 * more used bytes than its zones hold written (a reset zone would not):
 * the checker's rule, each problem a device verdict. */
static void device_problem(void *arg, const char *msg)
{
	fail(arg, ZCRASH_DEVICE, "%s", msg);
}

static void check_bgs(struct zcow_fs *fs, struct verdict *v)
{
	zcow_check_zones(fs, device_problem, v);
}

/* Oracle 10 (workload=replace): each problem a replace verdict. */
static void replace_problem(void *arg, const char *msg)
{
	fail(arg, ZCRASH_REPLACE, "%s", msg);
}

/* ---- treelog=on: oracles 7 and 8 -------------------------------- */

/* A crash state: the device after the workload's power cut. */
struct cstate {
	struct zdev *dev;	/* the device mounted: the fs's, or with
				 * workload=replace the one holding it */
	struct zcrash_pair pair;	/* the devices, to close */
	unsigned int cut_op;	/* op in progress at the cut; w->nr: none */
	int last_sync;		/* last acknowledged sync op; -1: none */
	uint64_t ack_gen;	/* the generation oracle 3 requires */
	uint64_t log_root;	/* of the durable superblock; 0: no log */
	bool has_offline;	/* a zone went offline (faults) */
	bool is_kept;		/* the device is a zcrash_held's: kept */
};

/* struct zcrash_held (crash_int.h): the replay of the point @key. */
/* States of one held point recovered, by loss digest. */
#define NR_SEEN 16

struct zcrash_held {
	bool is_valid;
	uint64_t key;
	struct cstate st;	/* as the replay left it, held */
	struct verdict v;	/* what the replay recorded */
	/* the images of @key's losses recovered so far: a loss that
	 * leaves one of them again gets its verdict (zsim_loss_digest()) */
	struct {
		uint64_t digest, log_root;
		struct verdict v;
	} seen[NR_SEEN];
	unsigned int nr_seen;
};

struct zcrash_held *zcrash_held_new(void)
{
	return calloc(1, sizeof(struct zcrash_held));
}

static void held_drop(struct zcrash_held *h)
{
	if (h && h->is_valid) {
		close_devs(&h->st.pair);
		h->is_valid = false;
	}
	if (h)
		h->nr_seen = 0;
}

void zcrash_held_free(struct zcrash_held *h)
{
	held_drop(h);
	free(h);
}

/* Path @p was touched by an op of @w, before op @end, that failed: it
 * may hold part of that op's effect (a failed op may change part of what
 * it touches and still fail). */
static bool is_touched_by_failure(const struct wl *w, const struct rec *r,
				  const char *p, unsigned int end)
{
	unsigned int i;

	for (i = 0; i < end && i < w->nr; i++)
		if (r->ret[i] && zcrash_op_touches(&w->ops[i], p))
			return true;
	return false;
}

/*
 * Oracle 9 (workload=faults): at the end of the workload, before the
 * power cut, the live fs reads back what the ops that succeeded wrote
 * (the model), or fails: never other content with success.  Paths a
 * failed op touched may hold part of its effect.
 */
static int check_live(struct zcow_fs *fs, const struct wl *w,
		      const struct rec *r, struct verdict *v, uint8_t *buf,
		      uint64_t buf_len)
{
	struct scan *s = malloc(sizeof(*s));
	unsigned int i;

	if (!s)
		return -ENOMEM;
	if (scan_fs(fs, s, buf, buf_len))
		goto out;	/* an error, reported: allowed */
	for (i = 0; i < s->nr; i++) {
		const struct rent *e = &s->e[i];
		struct ent *m = zcrash_m_find((struct model *)&r->final, e->path);

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
			  s->hash[i] != zcrash_ent_hash(m)))
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
	return 0;
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

/* Entry @k of @s is not what an "absent, or another file" obligation
 * @o forbids: @o names an earlier name of an fsynced file (has_data)
 * and @k is a directory or a file of another size or content. */
static bool is_other_file(const struct scan *s, int k, const struct oblig *o)
{
	return o->has_data &&
	       (s->e[k].is_dir || s->err[k] || s->size[k] != o->size ||
		s->hash[k] != o->hash);
}

static void fail_obl(struct verdict *v, const struct wl *w,
		     const struct oblig *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail_obl(struct verdict *v, const struct wl *w,
		     const struct oblig *o, const char *fmt, ...)
{
	const struct op *p = &w->ops[o->op];
	char what[256], line[24] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	if (p->line)	/* workload=ops: where the file has it */
		snprintf(line, sizeof(line), ", line %u", p->line);
	fail(v, ZCRASH_FSYNC, "op %u (%s%s%s%s): %s", o->op, op_names[p->kind],
	     p->a[0] ? " " : "", p->a, line, what);
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
			if (k >= 0 && !is_other_file(s, k, o))
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
 * With @held (one device, no faults) the cut holds the device, which is
 * checkpointed and kept in @held under @key before the loss is applied;
 * the next state of @key restores it and applies its loss (docs/crash.md
 * "How a case runs").  Returns 0 (st->dev set) or -errno when the setup
 * itself failed.
 */
static int build_state(struct zcrash_held *held, uint64_t key,
		       const struct camp *c, const struct wl *w,
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
	bool is_hold = false;
	unsigned int i;
	int ret;

	/*
	 * The same point as the state before: its replay, held at the cut
	 * and checkpointed, restored; only the loss differs.
	 */
	if (held && held->is_valid && held->key == key) {
		sim = zsim_from_dev(held->st.pair.src);
		if (!zsim_restore(sim)) {
			*st = held->st;
			*v = held->v;
			dev = st->dev;
			goto cut;
		}
	}
	held_drop(held);
	memset(st, 0, sizeof(*st));
	st->cut_op = w->nr;
	st->last_sync = -1;
	st->ack_gen = r->mount_gen;
	ret = fresh_dev(c, &dev);
	if (ret)
		return ret;
	ret = zcrash_replace_open(c, dev, &st->pair);
	if (ret) {
		zdev_close(dev);
		return ret;
	}
	sim = zsim_from_dev(dev);
	/* one device, no faults: hold it at the cut for the next states */
	is_hold = held && !st->pair.tgt && !w->ft;
	if (!pt->is_end) {
		struct zsim_cut cut = pt->cut;

		cut.loss = (enum zsim_loss)loss;
		cut.seed = seed;
		cut.hold = is_hold;
		if (zsim_arm_cut(sim, &cut)) {
			close_devs(&st->pair);
			return -EINVAL;
		}
	}
	ret = zcow_mount(dev, mo, &fs);
	if (ret) {
		close_devs(&st->pair);
		return ret;
	}
	ret = arm_trial(dev, w->ft);
	if (ret) {
		zcow_unmount(fs);
		close_devs(&st->pair);
		return ret;
	}
	for (i = 0; i < w->nr; i++) {
		enum op_kind k = w->ops[i].kind;

		ret = zcrash_do_op(fs, st->pair.tgt, &w->ops[i], tmp);
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
		if (ret || !zcrash_is_sync_op(k))
			continue;
		/* with the log, only sync promises a commit */
		if (mo->no_treelog || k == OP_SYNC)
			st->ack_gen = r->gen_after[i];
		if (k == OP_SYNC)
			st->last_sync = (int)i;
	}
	if (w->ft && !zsim_is_cut(sim)) {
		ret = check_live(fs, w, r, v, buf, buf_len);
		if (ret) {
			zcow_unmount(fs);
			close_devs(&st->pair);
			return ret;
		}
	}
	if (w->ft)
		v->nr_injected = zsim_nr_violations(sim, ZSIM_RULE_INJECTED);
	if (!zsim_is_cut(sim) && is_hold)
		zsim_hold_now(sim);
	else if (!zsim_is_cut(sim))
		zsim_cut_now(sim, (enum zsim_loss)loss, seed);
	zcow_unmount(fs);	/* fails (power is off) and frees */
	st->dev = dev;
	if (is_hold && !zsim_checkpoint(sim)) {
		st->is_kept = true;
		held->st = *st;
		held->v = *v;
		held->key = key;
		held->is_valid = true;
	}
cut:
	/* held: the loss now, as the cut would have applied it */
	if (is_hold || st->is_kept)
		zsim_cut_now(sim, (enum zsim_loss)loss, seed);
	zsim_power_cycle(sim);
	if (st->pair.tgt) {	/* cut with the source: its power domain */
		zsim_power_cycle(zsim_from_dev(st->pair.tgt));
		dev = zcrash_replace_pick(&st->pair);
		v->is_on_target = st->pair.on_target;
	}
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
	int64_t n;
	int ret, r2;

	ret = zcow_open(fs, "/.zcrash", O_RDWR | O_CREAT, &f);
	if (ret)
		return ret;
	zcrash_fill(tmp, 2 * BLK, 99, 0);
	n = zcow_pwrite(f, tmp, 2 * BLK, 0);
	ret = n < 0 ? (int)n : n == 2 * BLK ? 0 : -EIO;
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
	zcrash_fill(tmp, 2 * BLK, 99, 0);
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
	if (st->pair.tgt)	/* the other device of the power domain */
		zsim_power_cycle(zsim_from_dev(st->dev == st->pair.tgt ?
					       st->pair.src : st->pair.tgt));
}

/* Writes off a write pointer on the devices of @st (oracle 6). */
static uint64_t nr_off_wp(const struct cstate *st)
{
	uint64_t n = zsim_nr_violations(zsim_from_dev(st->pair.src),
					ZSIM_RULE_WRITE_NOT_AT_WP);

	if (st->pair.tgt)
		n += zsim_nr_violations(zsim_from_dev(st->pair.tgt),
					ZSIM_RULE_WRITE_NOT_AT_WP);
	return n;
}

/*
 * Recover crash state @st and run the oracles: mount (1), the replace
 * (10, workload=replace), check (2), generation (3), contents (4, 5 with
 * treelog=off; 7, 8 with treelog=on), block groups (6); then write and
 * sync a probe file (1), unmount, mount again: check (2), the same
 * namespace and contents, the probe (1).
 * @base_gen (0: none) is the generation an uncut recovery of the same
 * state mounted: a cut recovery may have committed above it (the probe),
 * so treelog=off compares against the commit of @base_gen then.
 */
static int recover(const struct wl *w, const struct rec *r,
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

	if (!s1 || !s2) {
		free(s1);
		free(s2);
		return -ENOMEM;
	}
	/* 1: mount */
	ret = zcow_mount(st->dev, mo, &fs);
	/* 10: the replace finished on the target or was cancelled */
	if (st->pair.tgt)
		zcrash_replace_check(w, &st->pair, st->cut_op, ret ? NULL : fs,
				     replace_problem, v);
	if (ret) {
		fail(v, ZCRASH_MOUNT, "mount: %s", strerror(-ret));
		if (is_on)
			lost_all(w, r, st, v, "no mount");
		goto out;
	}
	v->gen = zcow_fs_generation(fs);
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
	if (zcow_fs_generation(fs) < st->ack_gen)
		fail(v, ZCRASH_GEN, "generation %" PRIu64 " < acknowledged %" PRIu64,
		     zcow_fs_generation(fs), st->ack_gen);
	ret = scan_fs(fs, s1, buf, buf_len);
	is_scanned = !ret;
	if (zcow_fs_generation(fs) >= st->ack_gen && !is_on)
		compare(fs, r, st->ack_gen,
			base_gen && zcow_fs_generation(fs) > base_gen ? base_gen :
			zcow_fs_generation(fs), v, s1, ret, buf, buf_len);
	/* 7, 8: the last commit and the log (treelog=on) */
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
	if (nr_off_wp(st))
		fail(v, ZCRASH_DEVICE, "%" PRIu64 " writes off a write pointer",
		     nr_off_wp(st));
	free(s1);
	free(s2);
	return 0;
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
static int recover_degraded(const struct wl *w, const struct rec *r,
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
		return -ENOMEM;
	if (zcow_mount(st->dev, mo, &fs)) {
		v->is_degraded = true;
		goto out;
	}
	v->gen = zcow_fs_generation(fs);
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
		if (o->is_absent ? k >= 0 && !is_other_file(s, k, o) :
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
	return 0;
}

/* Oracle 11 on the device of @st as it is now (@what names the image in
 * the message).  0, or -errno when btrfs check could not run. */
static int btrfs_oracle(struct zcrash_btrfs *bc, const struct cstate *st,
			const char *what, struct verdict *v)
{
	char msg[480];
	int ret = zcrash_btrfs_check(bc, st->dev, msg, sizeof(msg));

	if (ret < 0)
		return ret;
	v->nr_btrfs_images++;
	if (ret)
		fail(v, ZCRASH_BTRFS, "btrfs check on the %s: %s", what, msg);
	return 0;
}

/*
 * One crash state: the workload cut at @pt, then (@cut2 > 0) its recovery
 * cut at persist point @cut2, then the oracles (@base_gen: see recover()).
 * *log_root_ret: the log
 * root of the durable superblock after the first cut.  Returns 0 (the
 * verdict in @v) or -errno when the setup failed.
 */
int zcrash_run_case(struct zcrash_held *held, uint64_t key,
		    const struct camp *c, const struct wl *w,
		    const struct rec *r, const struct cutpt *pt, int loss,
		    uint64_t seed, const struct zcow_mount_opts *mo,
		    uint64_t cut2, uint64_t base_gen, struct zcrash_btrfs *bc,
		    uint8_t *tmp, uint8_t *buf, uint64_t buf_len,
		    struct verdict *v, uint64_t *log_root_ret)
{
	struct cstate st;
	uint64_t digest = 0;
	bool is_dedup;
	unsigned int i;
	int ret;

	memset(v, 0, sizeof(*v));
	ret = build_state(held, key, c, w, r, pt, loss, seed, mo, tmp, buf,
			  buf_len, &st, v);
	if (ret)
		return ret;
	*log_root_ret = st.log_root;
	/*
	 * A held point's loss that leaves the image an earlier loss left:
	 * the recovery is deterministic, so is its verdict (not with a
	 * recovery cut or oracle 11, which run per state).
	 */
	is_dedup = st.is_kept && !cut2 && !bc;
	if (is_dedup) {
		digest = zsim_loss_digest(zsim_from_dev(st.dev));
		for (i = 0; i < held->nr_seen; i++) {
			if (held->seen[i].digest != digest)
				continue;
			*v = held->seen[i].v;
			v->is_same_image = true;
			*log_root_ret = held->seen[i].log_root;
			return 0;
		}
	}
	if (cut2)
		cut_recovery(&st, mo, cut2, loss, seed, tmp);
	/* 11: the state as the power cut left it, before zcow recovers */
	v->is_btrfs_checked = bc && !st.has_offline;
	if (v->is_btrfs_checked) {
		ret = btrfs_oracle(bc, &st, "crash state", v);
		if (ret)
			goto out;
	}
	if (st.has_offline)
		ret = recover_degraded(w, r, &st, mo, buf, buf_len, v);
	else
		ret = recover(w, r, &st, mo, base_gen, tmp, buf, buf_len, v);
	/* 11: after zcow's recovery, its probe write and second mount */
	if (!ret && bc && !st.has_offline)
		ret = btrfs_oracle(bc, &st, "recovered", v);
	if (!ret && is_dedup && held->nr_seen < NR_SEEN) {
		held->seen[held->nr_seen].digest = digest;
		held->seen[held->nr_seen].log_root = st.log_root;
		held->seen[held->nr_seen].v = *v;
		held->nr_seen++;
	}
out:
	if (!st.is_kept)
		close_devs(&st.pair);
	return ret;
}
