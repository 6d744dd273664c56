// SPDX-License-Identifier: MIT
/*
 * The runner's data and verification (run.h, "Data and verification";
 * fio's semantics: harness/fio_verify.h).
 *
 * Every job clone fills its writes through zfio_buf_fill() (the buffer
 * options, or fio's verify data and headers).  A job with verify= that
 * writes (and do_verify) records each write as a piece: where the
 * scheduler issued it, what fio's header names (file, offset), its seed
 * and write number.  As fio's io_hist rbtree, a later write replaces the
 * pieces it overlaps and the verify reads go in offset order;
 * experimental_verify keeps every write in issue order instead (fio
 * replays the writes; one overwritten reads back the later data and
 * fails, as fio's does).
 *
 * When the pieces are read back (fio's thread_main() and do_verify()):
 *   - after each loop's writes (the loop's bytes done; time_based: every
 *     size bytes), and at the job's end (its size, number_ios, or no
 *     room left), unless the runtime ended it: fio skips the verify of a
 *     job its runtime stopped, and a verify phase ends with the runtime
 *     too;
 *   - with verify_backlog=N, a batch of verify_backlog_batch (default N)
 *     reads whenever the job's pieces reach a multiple of N after a
 *     write (fio's check_get_verify()).
 * A verify read is a read of the job in its statistics (as fio's), and
 * does not count toward size or number_ios.  A job that only reads with
 * verify= checks every read as a block written before (no seed or write
 * number known: fio's read-only checks).
 *
 * A failure ends its job (fio: the job stops with EILSEQ; verify_fatal=0
 * only lets the rest of that block be checked); the other jobs go on, the
 * results are written and the run fails with the first message.  A job
 * whose continue_on_error takes the failure's class (run_ctl.c) counts it
 * and goes on.
 *
 * sg_write_mode (fio's sg engine): write_same repeats the first logical
 * block of the buffer over the write, write_same_ndob writes zeros,
 * verify_bytchk_00 reads the range and compares nothing,
 * verify_bytchk_01 compares it with the buffer the write would carry,
 * verify_bytchk_11 every logical block of it with the buffer's first; a
 * miscompare fails the job with EIO, as the device's VERIFY command
 * fails fio's I/O.  The logical block: the device's LBA on the raw
 * target, 4 KiB on files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio_log.h"
#include "grow.h"
#include "prng.h"
#include "results.h"
#include "run.h"
#include "run_ctl.h"
#include "zdev.h"

#define MAX_MESSAGES	64	/* summary.json keeps the first ones */
#define FS_LBA		4096u	/* the fs target's logical block */

enum io_kind {
	IO_NORMAL,
	IO_VERIFY,		/* a verify read of piece vj->cur */
	IO_DRY,			/* verify_only: a write not issued */
	IO_SG_VERIFY,		/* sg_write_mode=verify_bytchk_*: a read */
};

struct vpiece {
	uint64_t io_off;		/* as the scheduler issues it */
	uint64_t seq;			/* issue order */
	struct zfio_vwrite w;		/* off, len, seed, number, time */
	const char *file;		/* the target's; stable for the run */
	bool is_dead;			/* overwritten by a later piece */
};

struct zrun_vjob {
	struct zfio_buf_state bs;
	uint32_t interval;
	bool logs;			/* records its writes */
	bool reads_verify;		/* only reads: verify each */
	unsigned int checks;		/* ZFIO_CHECK_* of its verify */
	struct vpiece *h;
	uint64_t nr, head, cap, seq;
	bool is_sorted;
	uint64_t batch;			/* verify_backlog reads left */
	bool in_phase;			/* a verify phase is on */
	uint64_t io_bytes;		/* the job's own I/O, bytes */
	uint64_t loop_bytes, loop_end;
	uint16_t numberio;
	int last_op;
	enum io_kind kind;
	/* the current write's piece was added to the history: dropped
	 * again if the write wrote nothing (fill_device's ENOSPC) */
	bool is_added;
	struct vpiece cur;
	uint64_t now;
	bool is_failed;
	uint32_t lba;
	uint8_t *ebuf;			/* expected bytes */
	uint64_t ebuf_len;
};

struct zrun_verify {
	struct zrun_vstats st;
	bool has_verify;
	char first[ZFIO_ERR_LEN];
	char (*msgs)[ZFIO_ERR_LEN];
	uint64_t nr_msgs;
	uint64_t *ws_seeds;
};

static bool is_checking(int v)
{
	return v != ZFIO_VERIFY_NONE && v != ZFIO_VERIFY_NULL;
}

static bool is_sg_verify(int m)
{
	return m == ZFIO_SG_VERIFY_00 || m == ZFIO_SG_VERIFY_01 ||
	       m == ZFIO_SG_VERIFY_11;
}

/* What zcow refuses of a job's verify options on this target. */
static int check_job(struct zrun *run, const struct zrun_job *j)
{
	const struct zfio_job *f = j->fio;
	const struct zfio_vopts *vo = &f->vo;
	bool logs = is_checking(vo->verify) && vo->do_verify &&
		    zfio_rw_has_write(f->rw);

	if (!is_checking(vo->verify))
		return 0;
	if (f->zcow_loadfile[0] || f->is_filecreate)
		return zrun_opt_err(run, f, ZFIO_OPT_VERIFY, "a %s job has no "
				    "data of its own to verify",
				    f->is_filecreate ? "filecreate" :
						       "loadfile");
	if (logs && (f->zcow_rename_pct || f->zcow_unlink_pct))
		return zrun_opt_err(run, f, ZFIO_OPT_VERIFY, "the verify reads "
				    "back files that zcow_rename_pct and "
				    "zcow_unlink_pct take away");
	if (run->ops != &zrun_raw_target || !logs)
		return 0;
	if (vo->verify_only)
		return zrun_opt_err(run, f, ZFIO_OPT_VERIFY, "verify_only on "
				    "the raw target: its writes go to the "
				    "write pointers, so a dry run cannot know "
				    "where they went");
	if (f->zone_reset_frequency > 0)
		return zrun_opt_err(run, f, ZFIO_OPT_VERIFY, "zone_reset_"
				    "frequency resets zones holding data the "
				    "job verifies");
	return 0;
}

/* The bytes of one loop of @j (time_based: size, or io_size). */
static uint64_t loop_bytes(const struct zrun *run, const struct zrun_job *j)
{
	const struct zfio_job *f = j->fio;

	if (!f->time_based && j->bytes_goal)
		return j->bytes_goal / (f->loops ? f->loops : 1);
	if (f->io_size.is_set)
		return zfio_size_bytes(&f->io_size, j->range_len,
				       run->dev->info.zone_size, f->bs);
	return j->range_len;
}

int zrun_verify_setup(struct zrun *run)
{
	struct zrun_verify *v = calloc(1, sizeof(*v));
	unsigned int i;
	int ret;

	if (!v)
		return -ENOMEM;
	run->verify = v;
	v->ws_seeds = calloc(run->nr_jobs + 1, sizeof(*v->ws_seeds));
	if (!v->ws_seeds)
		return -ENOMEM;
	for (i = 0; i < run->nr_jobs; i++)
		v->ws_seeds[i] = zcow_mix64(run->jobs[i].rng ^ 0xb0ffe125ull);
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *j = &run->jobs[i];
		const struct zfio_job *f = j->fio;
		const struct zfio_vopts *vo = &f->vo;
		struct zrun_vjob *vj;
		uint64_t wmin = f->bs_min_d[ZFIO_DDIR_WRITE];
		uint64_t wmax = f->bs_max_d[ZFIO_DDIR_WRITE];
		uint64_t bmax = f->bs_max;

		/* a replay's I/Os are as long as its log says (fio raises
		 * max_bs to the log's largest) */
		if (zfio_replay_is(j)) {
			const char *const *paths;
			uint64_t extent, rmax;
			uint32_t nr;
			bool has_reads;

			zfio_replay_files(j, &paths, &nr, &extent, &rmax,
					  &has_reads);
			wmax = wmax > rmax ? wmax : rmax;
			bmax = bmax > rmax ? bmax : rmax;
		}
		ret = check_job(run, j);
		if (ret)
			return ret;
		vj = calloc(1, sizeof(*vj));
		if (!vj)
			return -ENOMEM;
		j->vj = vj;
		ret = zfio_buf_init(&vj->bs, vo, v->ws_seeds[i], wmin, wmax,
				    j->range_len, vo->dedupe_global ?
					v->ws_seeds : NULL,
				    run->nr_jobs, i);
		if (ret)
			return ret;
		vj->ebuf = malloc(bmax);
		if (!vj->ebuf)
			return -ENOMEM;
		vj->ebuf_len = bmax;
		vj->lba = run->ops == &zrun_raw_target ?
				  run->dev->info.lba_size : FS_LBA;
		vj->last_op = -1;
		vj->interval = zfio_verify_interval(vo, wmin, wmax,
			zfio_rw_has_read(f->rw) ?
				f->bs_min_d[ZFIO_DDIR_READ] : 0);
		vj->logs = is_checking(vo->verify) && vo->do_verify &&
			   zfio_rw_has_write(f->rw);
		vj->reads_verify = is_checking(vo->verify) &&
				   !zfio_rw_has_write(f->rw) &&
				   zfio_rw_has_read(f->rw);
		/* fio's numberio check; the seed unless the blocks are
		 * another run's (verify_only) */
		vj->checks = (wmin == wmax && !f->time_based &&
			      !vo->verify_only ? ZFIO_CHECK_NUMBERIO : 0) |
			     (vo->verify_only ? 0 : ZFIO_CHECK_SEED);
		vj->loop_bytes = loop_bytes(run, j);
		vj->loop_end = vj->loop_bytes;
		v->has_verify |= is_checking(vo->verify) ||
				 is_sg_verify(vo->sg_mode);
	}
	return 0;
}

void zrun_verify_free(struct zrun *run)
{
	unsigned int i;

	for (i = 0; run->jobs && i < run->nr_jobs; i++) {
		struct zrun_vjob *vj = run->jobs[i].vj;

		if (!vj)
			continue;
		zfio_buf_free(&vj->bs);
		free(vj->h);
		free(vj->ebuf);
		free(vj);
		run->jobs[i].vj = NULL;
	}
	if (run->verify) {
		free(run->verify->ws_seeds);
		free(run->verify->msgs);
		free(run->verify);
		run->verify = NULL;
	}
}

/* ---- the pieces -------------------------------------------------------- */

static int cmp_piece(const void *a, const void *b)
{
	const struct vpiece *x = a, *y = b;

	if (x->io_off != y->io_off)
		return x->io_off < y->io_off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Offset order, without the pieces a later write overlaps (fio's rbtree
 * insert erases them).  Sorted by offset, the pieces overlapping one
 * follow it, so each overlapping pair is seen once.
 */
static void normalize(struct zrun_vjob *vj)
{
	uint64_t i, k, n = 0;

	if (vj->is_sorted || vj->bs.o->experimental_verify)
		return;
	if (vj->head) {
		memmove(vj->h, vj->h + vj->head,
			(vj->nr - vj->head) * sizeof(*vj->h));
		vj->nr -= vj->head;
		vj->head = 0;
	}
	qsort(vj->h, vj->nr, sizeof(*vj->h), cmp_piece);
	for (i = 0; i < vj->nr; i++) {
		struct vpiece *a = &vj->h[i];
		uint64_t end = a->io_off + a->w.len;

		for (k = i + 1; k < vj->nr && vj->h[k].io_off < end; k++) {
			if (vj->h[k].seq > a->seq)
				a->is_dead = true;
			else
				vj->h[k].is_dead = true;
		}
	}
	for (i = 0; i < vj->nr; i++)
		if (!vj->h[i].is_dead)
			vj->h[n++] = vj->h[i];
	vj->nr = n;
	vj->is_sorted = true;
}

static uint64_t nr_pieces(const struct zrun_vjob *vj)
{
	return vj->nr - vj->head;
}

static int add_piece(struct zrun_vjob *vj, const struct vpiece *p)
{
	if (vj->head && vj->head == vj->nr)
		vj->head = vj->nr = 0;
	if (ZCOW_GROW_ONE(&vj->h, vj->nr, &vj->cap))
		return -ENOMEM;
	vj->h[vj->nr] = *p;
	vj->h[vj->nr].seq = vj->seq++;
	vj->nr++;
	vj->is_sorted = false;
	return 0;
}

/* ---- the scheduler's side ---------------------------------------------- */

bool zrun_verify_due(struct zrun *run, struct zrun_job *j, bool is_end)
{
	struct zrun_vjob *vj = j->vj;

	(void)run;
	if (!vj || vj->is_failed || !vj->logs)
		return false;
	if (is_end && nr_pieces(vj))
		vj->in_phase = true;
	if (!nr_pieces(vj)) {
		vj->in_phase = false;
		vj->batch = 0;
		return false;
	}
	return vj->in_phase || vj->batch;
}

void zrun_verify_take(struct zrun *run, struct zrun_job *j, uint64_t *off,
		      uint64_t *len)
{
	struct zrun_vjob *vj = j->vj;

	(void)run;
	normalize(vj);
	vj->cur = vj->h[vj->head++];
	if (vj->batch && !vj->in_phase)
		vj->batch--;
	*off = vj->cur.io_off;
	*len = vj->cur.w.len;
}

enum zrun_op zrun_verify_io_start(struct zrun *run, struct zrun_job *j,
				  enum zrun_op op, bool is_verify, uint64_t t)
{
	struct zrun_vjob *vj = j->vj;
	const struct zfio_vopts *vo = &j->fio->vo;

	(void)run;
	if (!vj)
		return op;
	vj->now = t;
	vj->kind = is_verify ? IO_VERIFY : IO_NORMAL;
	if (is_verify || op != ZRUN_OP_WRITE)
		return op;
	if (is_sg_verify(vo->sg_mode)) {
		vj->kind = IO_SG_VERIFY;
		return ZRUN_OP_READ;
	}
	if (vo->verify_only && vj->logs)
		vj->kind = IO_DRY;
	return op;
}

void zrun_verify_io_done(struct zrun *run, struct zrun_job *j,
			 enum zrun_op op, uint64_t len)
{
	struct zrun_vjob *vj = j->vj;
	const struct zfio_vopts *vo = &j->fio->vo;
	enum io_kind kind;

	(void)run;
	if (!vj)
		return;
	kind = vj->kind;
	vj->kind = IO_NORMAL;
	if (vj->is_added && !len)
		vj->nr--;
	vj->is_added = false;
	if (kind == IO_VERIFY) {
		vj->last_op = ZRUN_OP_READ;
		return;
	}
	vj->io_bytes += len;
	if (vj->loop_bytes && vj->io_bytes >= vj->loop_end) {
		vj->loop_end += vj->loop_bytes;
		if (vj->logs && nr_pieces(vj))
			vj->in_phase = true;
	}
	if (vj->logs && vo->verify_backlog && op == ZRUN_OP_WRITE &&
	    kind != IO_SG_VERIFY && vj->last_op != ZRUN_OP_READ && !vj->batch) {
		normalize(vj);
		if (nr_pieces(vj) && nr_pieces(vj) % vo->verify_backlog == 0)
			vj->batch = vo->verify_batch ? vo->verify_batch :
						       vo->verify_backlog;
	}
	vj->last_op = op;
}

bool zrun_verify_failed(const struct zrun_job *j)
{
	return j->vj && j->vj->is_failed;
}

bool zrun_io_is_exact(const struct zrun_job *j)
{
	return j->vj && (j->vj->kind == IO_VERIFY ||
			 j->vj->kind == IO_SG_VERIFY);
}

bool zrun_io_is_verify(const struct zrun_job *j)
{
	return j->vj && j->vj->kind == IO_VERIFY;
}

/* ---- the targets' side ------------------------------------------------- */

int zrun_data_write(struct zrun *run, struct zrun_job *j, uint64_t io_off,
		    const char *file, uint64_t off, void *buf, uint64_t len)
{
	struct zrun_vjob *vj = j->vj;
	const struct zfio_vopts *vo = &j->fio->vo;
	struct vpiece p = { .io_off = io_off, .file = file };
	uint64_t i;
	int ret;

	(void)run;
	if (!vj)
		return 0;
	p.w.off = off;
	p.w.len = len;
	p.w.numberio = vj->numberio++;
	p.w.thread = (uint16_t)(j->idx + 1);
	p.w.time_ns = vj->now;
	switch (vo->sg_mode) {
	case ZFIO_SG_WRITE_SAME_NDOB:
		memset(buf, 0, len);
		break;
	case ZFIO_SG_WRITE_SAME:
		zfio_buf_fill(&vj->bs, buf, &p.w, vj->interval);
		for (i = vj->lba; i + vj->lba <= len; i += vj->lba)
			memcpy((uint8_t *)buf + i, buf, vj->lba);
		break;
	default:
		zfio_buf_fill(&vj->bs, buf, &p.w, vj->interval);
		break;
	}
	if (vj->logs) {
		ret = add_piece(vj, &p);
		if (ret)
			return ret;
		vj->is_added = true;
	}
	return vj->kind == IO_DRY;
}

/* verify_dump: the block read and the one expected, in the results
 * folder as fio names them (FILE.OFFSET.received, .expected). */
static void dump(struct zrun *run, const char *file, uint64_t off,
		 const void *got, const void *want, uint64_t len)
{
	const char *base = strrchr(file, '/');
	char name[ZFIO_PATH_LEN];
	FILE *f;

	if (!run->res_dir)
		return;
	base = base ? base + 1 : file;
	snprintf(name, sizeof(name), "%s.%llu.received", base,
		 (unsigned long long)off);
	f = zres_open(run->res_dir, name);
	if (f) {
		fwrite(got, 1, len, f);
		fclose(f);
	}
	if (!want)
		return;
	snprintf(name, sizeof(name), "%s.%llu.expected", base,
		 (unsigned long long)off);
	f = zres_open(run->res_dir, name);
	if (f) {
		fwrite(want, 1, len, f);
		fclose(f);
	}
}

/*
 * Job @j failed with @msg (@nr blocks; the job's error @err: EILSEQ, EIO
 * for an sg command): counted, and the job goes on when its
 * continue_on_error or ignore_error says so (run_ctl.c), else it ends and
 * the run keeps the failure.
 */
static int fail_job(struct zrun *run, struct zrun_job *j, uint64_t nr,
		    int err, const char *msg)
{
	struct zrun_verify *v = run->verify;
	char line[ZFIO_ERR_LEN];

	v->st.failures += nr;
	snprintf(line, sizeof(line), "job '%s': %s", j->fio->name, msg);
	if (!zrun_ctl_verify_error(run, j, err, line, j->vj->now)) {
		j->vj->is_failed = true;
		if (!v->first[0])
			snprintf(v->first, sizeof(v->first), "%s", line);
	}
	if (v->nr_msgs < MAX_MESSAGES) {
		char (*m)[ZFIO_ERR_LEN] = realloc(v->msgs,
			(v->nr_msgs + 1) * sizeof(*m));

		if (!m)
			return -ENOMEM;
		v->msgs = m;
		snprintf(m[v->nr_msgs++], ZFIO_ERR_LEN, "%s", line);
	}
	return 0;
}

/* An sg verify command over @buf (fio's device-side VERIFY). */
static int sg_verify(struct zrun *run, struct zrun_job *j, const char *file,
		     uint64_t off, const uint8_t *buf, uint64_t len)
{
	struct zrun_vjob *vj = j->vj;
	int mode = j->fio->vo.sg_mode;
	struct zfio_vwrite w = { .off = off, .len = len,
				 .numberio = vj->numberio++,
				 .thread = (uint16_t)(j->idx + 1),
				 .time_ns = vj->now };
	static const char *const names[] = {
		[ZFIO_SG_VERIFY_01] = "verify_bytchk_01",
		[ZFIO_SG_VERIFY_11] = "verify_bytchk_11",
	};
	char msg[ZFIO_ERR_LEN];
	uint64_t i;

	if (mode == ZFIO_SG_VERIFY_00)
		return 0;	/* a medium check: the read succeeded */
	zfio_buf_fill(&vj->bs, vj->ebuf, &w, vj->interval);
	run->verify->st.blocks++;
	run->verify->st.bytes += len;
	for (i = 0; i < len; i++) {
		uint8_t want = mode == ZFIO_SG_VERIFY_01 ? vj->ebuf[i] :
				vj->ebuf[i % vj->lba];

		if (buf[i] == want)
			continue;
		snprintf(msg, sizeof(msg), "io_u error on file %s: "
			 "Input/output error: write offset=%llu, "
			 "buflen=%llu (sg_write_mode=%s: the device's "
			 "VERIFY miscompares at offset %llu: got %02x, "
			 "wanted %02x)", file, (unsigned long long)off,
			 (unsigned long long)len, names[mode],
			 (unsigned long long)(off + i), buf[i], want);
		return fail_job(run, j, 1, EIO, msg);
	}
	return 0;
}

int zrun_data_read(struct zrun *run, struct zrun_job *j, const char *file,
		   uint64_t off, void *buf, uint64_t len)
{
	struct zrun_vjob *vj = j->vj;
	const struct zfio_vopts *vo = &j->fio->vo;
	struct zrun_verify *v = run->verify;
	char msg[ZFIO_ERR_LEN];
	uint32_t nr_bad = 0;
	int ret;

	if (!vj || vj->is_failed)
		return 0;
	if (vj->kind == IO_SG_VERIFY)
		return sg_verify(run, j, file, off, buf, len);
	if (vj->kind == IO_VERIFY) {
		const struct zfio_vwrite *w = &vj->cur.w;

		v->st.blocks++;
		v->st.bytes += len;
		if (len != w->len) {
			snprintf(msg, sizeof(msg), "verify: short read of "
				 "%llu bytes, wanted %llu at file %s offset "
				 "%llu", (unsigned long long)len,
				 (unsigned long long)w->len, file,
				 (unsigned long long)off);
			return fail_job(run, j, 1, EILSEQ, msg);
		}
		ret = zfio_verify_check(vo, vj->interval, buf, len, off, file,
					w, vj->checks, &nr_bad, msg,
					sizeof(msg));
		if (!ret)
			return 0;
		if (vo->verify_dump) {
			zfio_buf_expected(&vj->bs, vj->ebuf, w, vj->interval);
			dump(run, file, off, buf, vj->ebuf, len);
		}
		return fail_job(run, j, nr_bad, EILSEQ, msg);
	}
	if (!vj->reads_verify || !len)
		return 0;
	v->st.blocks++;
	v->st.bytes += len;
	ret = zfio_verify_check(vo, vj->interval, buf, len, off, file, NULL,
				0, &nr_bad, msg, sizeof(msg));
	if (!ret)
		return 0;
	if (vo->verify_dump)
		dump(run, file, off, buf, NULL, len);
	return fail_job(run, j, nr_bad, EILSEQ, msg);
}

/* ---- results ----------------------------------------------------------- */

void zrun_verify_stats(const struct zrun *run, struct zrun_vstats *st)
{
	memset(st, 0, sizeof(*st));
	if (run->verify)
		*st = run->verify->st;
}

void zrun_verify_first(const struct zrun *run, char *buf, size_t len)
{
	const struct zrun_verify *v = run->verify;

	buf[0] = '\0';
	if (!v || !v->first[0])
		return;
	if (v->st.failures > 1)
		snprintf(buf, len, "%s (%llu failures in all: summary.json)",
			 v->first, (unsigned long long)v->st.failures);
	else
		snprintf(buf, len, "%s", v->first);
}

void zrun_verify_summary(const struct zrun *run, const struct zrun_vstats *st,
			 FILE *f)
{
	const struct zrun_verify *v = run->verify;
	uint64_t i;

	if (!v || !v->has_verify)
		return;
	fprintf(f, "  \"verify\": {\"blocks_verified\": %llu, "
		   "\"bytes_verified\": %llu, \"failures\": %llu, "
		   "\"messages\": [",
		(unsigned long long)st->blocks, (unsigned long long)st->bytes,
		(unsigned long long)st->failures);
	for (i = 0; i < v->nr_msgs; i++) {
		fprintf(f, "%s", i ? ", " : "");
		zres_json_str(f, v->msgs[i]);
	}
	fprintf(f, "]},\n");
}
