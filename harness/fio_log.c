// SPDX-License-Identifier: MIT
/*
 * zfio logs: fio's I/O logs, iolog, replay and fill_device in simulated
 * time (fio_log.h).
 *
 * The logs are made at a job's end from its samples, put in completion
 * order (the slat log in issue order), as fio's stat.c makes them while
 * it runs:
 *
 *   log_avg_msec = 0   one line per I/O: lat = done - due, clat = done -
 *                      issue, slat = issue - due (the wait for the fs's
 *                      locks before the call: zcow submits each I/O at
 *                      its slot's time), bw = bytes x 10^6 / clat (fio's
 *                      add_bw_sample), iops = 1; the time is the
 *                      completion's (slat: the issue's), in ms from the
 *                      job's epoch, truncated.
 *   log_avg_msec = W   lat, slat, clat: per direction, the samples go into
 *                      a window; one whose time is W or more past the
 *                      window's start closes it (fio's add_log_sample):
 *                      a line at its time with the mean (rounded) or
 *                      max, the next window starting at the time rounded
 *                      down to W; at the job's end the open windows close
 *                      at its end's time.  bw, iops (window min(W,
 *                      bwavgtime)): per direction, the bytes (I/Os)
 *                      completed in each W ms, as KiB/s (I/Os per s), at
 *                      the window's end; a window without any, no line
 *                      (fio's __add_samples on its helper's ticks).
 *   log_hist_msec = H  clat histograms: a line when a sample comes H ms
 *                      or more after the last line of its direction, with
 *                      the bins counted since (fio's add_clat_sample).
 *
 * The iolog is kept as text while the jobs run and written at the end.
 * A replay reads its log once through at set-up (its files, its extent,
 * every line checked); read_iolog_chunked reads the actions again, a line
 * at a time, while the job runs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"
#include "fio_log.h"
#include "grow.h"
#include "prng.h"
#include "results.h"

#define MS		1000000ull	/* ns */
#define PRIO_CLASS_RT	1u
#define PRIO_CLASS_BE	2u
#define PRIO_SHIFT	13

/* ---- the parser's side ------------------------------------------------ */

static const char *const lopt_names[ZFIO_NR_LOPTS] = {
	[ZFIO_LOPT_WRITE_BW_LOG] = "write_bw_log",
	[ZFIO_LOPT_WRITE_LAT_LOG] = "write_lat_log",
	[ZFIO_LOPT_WRITE_IOPS_LOG] = "write_iops_log",
	[ZFIO_LOPT_WRITE_HIST_LOG] = "write_hist_log",
	[ZFIO_LOPT_WRITE_IOLOG] = "write_iolog",
	[ZFIO_LOPT_READ_IOLOG] = "read_iolog",
	[ZFIO_LOPT_FILL_DEVICE] = "fill_device",
	[ZFIO_LOPT_LOG_HIST_MSEC] = "log_hist_msec",
	[ZFIO_LOPT_LOG_ISSUE_TIME] = "log_issue_time",
	[ZFIO_LOPT_LOG_STORE_COMPRESSED] = "log_store_compressed",
	[ZFIO_LOPT_REPLAY_REDIRECT] = "replay_redirect",
};

void zfio_log_defaults(struct zfio_logopts *lo)
{
	memset(lo, 0, sizeof(*lo));
	lo->per_job_logs = true;
	lo->time_scale = 100;
	lo->replay_scale = 1;
}

void zfio_log_note(struct zfio_logopts *lo, const struct zfio_kv *kv)
{
	const char *k = !strcmp(kv->key, "fill_fs") ? "fill_device" : kv->key;
	unsigned int i;

	for (i = 0; i < ZFIO_NR_LOPTS; i++) {
		if (strcmp(k, lopt_names[i]))
			continue;
		snprintf(lo->at[i].file, sizeof(lo->at[i].file), "%s",
			 kv->file);
		lo->at[i].line = kv->line;
	}
}

static bool wants_logs(const struct zfio_logopts *lo);

/* The first write_<kind>_log set (one is). */
static enum zfio_lopt first_log(const struct zfio_logopts *lo)
{
	unsigned int k;

	for (k = 0; k < ZFIO_NR_LOG_KINDS && !lo->want[k].is_set; k++)
		;
	return (enum zfio_lopt)(ZFIO_LOPT_WRITE_BW_LOG + k);
}

/* "FILE:LINE: option 'KEY': message" about option @o of job @j. */
static int lfail(char *err, size_t len, const struct zfio_job *j,
		 enum zfio_lopt o, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int lfail(char *err, size_t len, const struct zfio_job *j,
		 enum zfio_lopt o, const char *fmt, ...)
{
	const struct zfio_lat *at = &j->log.at[o];
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err && len)
		snprintf(err, len, "%s:%d: option '%s': %s",
			 at->line ? at->file : j->file,
			 at->line ? at->line : j->line, lopt_names[o], msg);
	return -EINVAL;
}

int zfio_log_check(const struct zfio_job *j, char *err, size_t len)
{
	const struct zfio_logopts *lo = &j->log;

	if (lo->store_compressed)
		return lfail(err, len, j, ZFIO_LOPT_LOG_STORE_COMPRESSED,
			     "zcow writes its logs as text; fio's compressed "
			     ".fz files are not written");
	if (lo->issue_time &&
	    (!lo->want[ZFIO_LOG_LAT].is_set || !lo->offset))
		return lfail(err, len, j, ZFIO_LOPT_LOG_ISSUE_TIME,
			     "needs write_lat_log and log_offset (fio)");
	if (lo->read_iolog[0] && lo->write_iolog[0])
		return lfail(err, len, j, ZFIO_LOPT_WRITE_IOLOG,
			     "a job that replays read_iolog writes no iolog "
			     "(fio ignores it): drop one of the two");
	if (lo->write_iolog[0] && j->numjobs > 1)
		return lfail(err, len, j, ZFIO_LOPT_WRITE_IOLOG,
			     "%u clones would write one file interspersed "
			     "(fio): give each job its own, numjobs=1",
			     j->numjobs);
	if (lo->redirect[0] && !lo->read_iolog[0])
		return lfail(err, len, j, ZFIO_LOPT_REPLAY_REDIRECT,
			     "needs read_iolog");
	if (lo->fill_device && !lo->read_iolog[0] &&
	    !zfio_rw_has_write(j->rw))
		return lfail(err, len, j, ZFIO_LOPT_FILL_DEVICE,
			     "rw=%s: fio fills the file system first, then "
			     "reads; only writing jobs are modelled",
			     zfio_rw_name(j->rw));
	if (j->zcow_loadfile[0] &&
	    (wants_logs(lo) || lo->write_iolog[0] || lo->read_iolog[0] ||
	     lo->fill_device))
		return lfail(err, len, j, lo->read_iolog[0] ?
			     ZFIO_LOPT_READ_IOLOG : lo->write_iolog[0] ?
			     ZFIO_LOPT_WRITE_IOLOG : lo->fill_device ?
			     ZFIO_LOPT_FILL_DEVICE : first_log(lo),
			     "a zcow_loadfile job's operations are dbench's, "
			     "not fio's I/Os: fio's logs do not apply");
	if (lo->fill_device && lo->read_iolog[0])
		return lfail(err, len, j, ZFIO_LOPT_FILL_DEVICE,
			     "a replay's I/O is the log's: drop fill_device "
			     "or read_iolog");
	return 0;
}

void zfio_log_print(FILE *out, const struct zfio_job *j)
{
	static const char *const kinds[] = { "bw", "lat", "iops", "hist" };
	static const char *const win[] = { "avg", "max", "both" };
	const struct zfio_logopts *lo = &j->log;
	unsigned int k, d;

	for (k = 0; k < ZFIO_NR_LOG_KINDS; k++)
		if (lo->want[k].is_set)
			fprintf(out, "write_%s_log=%s\n", kinds[k],
				lo->want[k].name);
	for (k = 0; k < ZFIO_NR_LOG_KINDS && !lo->want[k].is_set; k++)
		;
	if (k < ZFIO_NR_LOG_KINDS)
		fprintf(out, "per_job_logs=%d\nlog_avg_msec=%u\n"
			     "log_hist_msec=%u\nlog_hist_coarseness=%u\n"
			     "log_window_value=%s\nlog_offset=%d\n"
			     "log_prio=%d\nlog_issue_time=%d\n"
			     "log_alternate_epoch=%d\n", lo->per_job_logs,
			lo->avg_msec, lo->hist_msec, lo->hist_coarseness,
			win[lo->window], lo->offset, lo->prio,
			lo->issue_time, lo->alt_epoch);
	if (lo->bw_avg_msec)
		fprintf(out, "bwavgtime=%u\n", lo->bw_avg_msec);
	if (lo->iops_avg_msec)
		fprintf(out, "iopsavgtime=%u\n", lo->iops_avg_msec);
	if (lo->write_iolog[0])
		fprintf(out, "write_iolog=%s\n", lo->write_iolog);
	if (lo->read_iolog[0]) {
		fprintf(out, "read_iolog=%s\nread_iolog_chunked=%d\n"
			     "replay_no_stall=%d\nreplay_time_scale=%u\n"
			     "replay_align=%u\nreplay_scale=%u\n",
			lo->read_iolog, lo->iolog_chunked, lo->no_stall,
			lo->time_scale, lo->replay_align, lo->replay_scale);
		if (lo->redirect[0])
			fprintf(out, "replay_redirect=%s\n", lo->redirect);
		if (lo->replay_skip)
			fprintf(out, "replay_skip=%s%s%s%s\n",
				lo->replay_skip & ZFIO_SKIP_READ ? "read," : "",
				lo->replay_skip & ZFIO_SKIP_WRITE ? "write," :
								    "",
				lo->replay_skip & ZFIO_SKIP_TRIM ? "trim," : "",
				lo->replay_skip & ZFIO_SKIP_SYNC ? "sync" : "");
	}
	if (lo->fill_device)
		fprintf(out, "fill_device=1\n");
	if (lo->has_prio)
		fprintf(out, "prioclass=%u\nprio=%u\n", lo->prio_class,
			lo->prio_level);
	if (lo->cmdprio_pct[0] || lo->cmdprio_pct[1] || lo->has_cmdprio_bs)
		fprintf(out, "cmdprio_class=%u,%u\ncmdprio=%u,%u\n",
			lo->cmdprio_class[0], lo->cmdprio_class[1],
			lo->cmdprio_level[0], lo->cmdprio_level[1]);
	if (lo->cmdprio_pct[0] || lo->cmdprio_pct[1])
		fprintf(out, "cmdprio_percentage=%u,%u\n", lo->cmdprio_pct[0],
			lo->cmdprio_pct[1]);
	if (!lo->has_cmdprio_bs)
		return;
	fprintf(out, "cmdprio_bssplit=");
	for (d = 0; d < 2; d++) {
		for (k = 0; k < lo->nr_cmdprio_bs[d]; k++) {
			const struct zfio_cmdprio *e = &lo->cmdprio_bs[d][k];

			fprintf(out, "%s%llu/%u", k ? ":" : "",
				(unsigned long long)e->bs, e->pct);
			if (e->cls >= 0)
				fprintf(out, "/%d/%d", e->cls, e->lvl);
		}
		fprintf(out, "%s", d ? "\n" : ",");
	}
}

/* ---- values ----------------------------------------------------------- */

unsigned int zfio_hist_bin(uint64_t ns)
{
	unsigned int msb, err_bits, base, off;

	if (!ns)
		return 0;
	msb = 63 - (unsigned int)__builtin_clzll(ns);
	if (msb <= ZFIO_HIST_BITS)
		return (unsigned int)ns;
	err_bits = msb - ZFIO_HIST_BITS;
	base = (err_bits + 1) << ZFIO_HIST_BITS;
	off = (unsigned int)((ns >> err_bits) & ((1u << ZFIO_HIST_BITS) - 1));
	return base + off < ZFIO_HIST_NR - 1 ? base + off : ZFIO_HIST_NR - 1;
}

uint32_t zfio_ioprio(uint32_t cls, uint32_t lvl)
{
	return (cls ? cls : PRIO_CLASS_BE) << PRIO_SHIFT | lvl;
}

/* ---- the per-job state ------------------------------------------------ */

/* One completed I/O (or, for slat, issued), in simulated ns. */
struct sample {
	uint64_t due, t, done;
	uint64_t len, off;
	uint32_t prio;
	uint8_t op;
};

/* One line of a log (a histogram line points at its bins). */
struct line {
	uint64_t ms;
	int64_t v0, v1;
	uint64_t bs, off, issue;
	uint32_t prio;
	uint8_t ddir;
	uint64_t *bins;		/* hist: ZFIO_HIST_NR counts, malloc'd */
};

/* The logs of a job, in fio's order of writing them. */
enum sub {
	SUB_BW,
	SUB_LAT,
	SUB_SLAT,
	SUB_CLAT,
	SUB_IOPS,
	SUB_HIST,
	NR_SUBS
};

static const char *const sub_names[NR_SUBS] = {
	"bw", "lat", "slat", "clat", "iops", "clat_hist",
};

static const enum zfio_log_kind sub_kind[NR_SUBS] = {
	ZFIO_LOG_BW, ZFIO_LOG_LAT, ZFIO_LOG_LAT, ZFIO_LOG_LAT, ZFIO_LOG_IOPS,
	ZFIO_LOG_HIST,
};

struct sublog {
	struct line *v;
	uint64_t nr, cap;
};

/* One replayed action, parsed. */
enum ract { RA_ADD, RA_OPEN, RA_CLOSE, RA_READ, RA_WRITE, RA_TRIM, RA_SYNC,
	    RA_DATASYNC, RA_WAIT };

struct ract_rec {
	uint8_t act;
	uint32_t file;
	uint64_t off, len;
	uint64_t delay_ns;	/* v3: since the last action; wait: until */
};

struct replay {
	char path[ZFIO_LOG_PATH_LEN];
	int version;
	char **files;		/* as the log adds them */
	uint32_t nr_files;
	uint64_t extent, max_len;
	bool has_reads;
	struct ract_rec *acts;	/* the whole log; chunked: NULL */
	uint64_t nr_acts, acts_cap, next;
	FILE *f;		/* chunked: the log, read on */
	int lineno;
	uint64_t last_ttime;	/* v3: the last action's time, us */
	uint64_t last_issue;	/* sim ns */
	bool has_issue;
	struct zfio_replay_io pend;	/* given, not issued yet */
	bool has_pend;
	uint32_t sync_file;		/* of the last sync given */
};

struct ljob {
	struct sample *s;
	uint64_t nr, cap;
	struct sublog sub[NR_SUBS];
	bool is_ended;
	FILE *iolog;		/* open_memstream */
	char *iolog_buf;
	size_t iolog_len;
	char **open;		/* iolog: files open, to close at the end */
	uint32_t nr_open;
	uint64_t prio_rng;
	struct replay *rp;
	bool is_enospc;
	uint64_t fill_bytes;
	uint64_t last_off;	/* offset of the last I/O (sync lines) */
};

/* The run's list of files written (summary.json). */
struct lrun {
	char **names;
	uint64_t nr, cap;
	bool is_running;
};

static struct ljob *lj(const struct zrun_job *j)
{
	return j->lpriv;
}

static bool wants_logs(const struct zfio_logopts *lo)
{
	unsigned int k;

	for (k = 0; k < ZFIO_NR_LOG_KINDS; k++)
		if (lo->want[k].is_set)
			return true;
	return false;
}

static uint64_t epoch(const struct zrun_job *j)
{
	return j->start + j->fio->ramp_time_ns;
}

/* ---- the iolog writer ------------------------------------------------- */

static const char *const io_act[ZRUN_NR_OPS] = { "read", "write", "trim" };

/* A time in the iolog: us from the job's start. */
static unsigned long long io_us(const struct zrun_job *j, uint64_t t)
{
	return (unsigned long long)((t > j->start ? t - j->start : 0) / 1000);
}

static int note_open(struct ljob *l, const char *path, bool is_open)
{
	uint32_t i;
	char **n;

	for (i = 0; i < l->nr_open; i++)
		if (!strcmp(l->open[i], path))
			break;
	if (!is_open) {
		if (i == l->nr_open)
			return 0;
		free(l->open[i]);
		l->open[i] = l->open[--l->nr_open];
		return 0;
	}
	if (i < l->nr_open)
		return 0;
	n = realloc(l->open, (l->nr_open + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	l->open = n;
	n[l->nr_open] = strdup(path);
	if (!n[l->nr_open])
		return -ENOMEM;
	l->nr_open++;
	return 0;
}

void zfio_log_start(struct zrun *run)
{
	struct lrun *lr = run->logs;

	if (lr)
		lr->is_running = true;
}

int zfio_log_file(struct zrun *run, struct zrun_job *j, const char *path,
		  enum zfio_file_act act)
{
	static const char *const names[] = { "add", "open", "close" };
	struct lrun *lr = run->logs;
	struct ljob *l = lj(j);
	uint64_t t;
	int ret;

	if (!l || !l->iolog)
		return 0;
	t = lr && lr->is_running ? run->tick_now : j->start;
	if (act == ZFIO_FILE_OPEN || act == ZFIO_FILE_CLOSE) {
		ret = note_open(l, path, act == ZFIO_FILE_OPEN);
		if (ret)
			return ret;
	}
	fprintf(l->iolog, "%llu %s %s\n", io_us(j, t), path, names[act]);
	return 0;
}

int zfio_log_sync(struct zrun *run, struct zrun_job *j, bool is_data,
		  uint64_t t)
{
	struct ljob *l = lj(j);

	(void)run;
	if (!l || !l->iolog || !j->io_path)
		return 0;
	fprintf(l->iolog, "%llu %s %s %llu 0\n", io_us(j, t), j->io_path,
		is_data ? "datasync" : "sync",
		(unsigned long long)l->last_off);
	return 0;
}

/* ---- priorities ------------------------------------------------------- */

/* The priority of an I/O of @op, @len bytes (fio's cmdprio, drawn from
 * the job's own priority stream so the I/O stream is the same). */
static uint32_t io_prio(const struct zrun_job *j, struct ljob *l,
			enum zrun_op op, uint64_t len)
{
	const struct zfio_logopts *lo = &j->fio->log;
	uint32_t def = lo->has_prio ? zfio_ioprio(lo->prio_class,
						  lo->prio_level) : 0;
	uint32_t p = 0, r, acc = 0, k, cls;
	unsigned int d = op == ZRUN_OP_READ ? 0 : 1;

	if (op == ZRUN_OP_TRIM)
		return def;
	cls = lo->cmdprio_class[d] ? lo->cmdprio_class[d] : PRIO_CLASS_RT;
	if (lo->has_cmdprio_bs) {
		for (k = 0; k < lo->nr_cmdprio_bs[d]; k++)
			if (lo->cmdprio_bs[d][k].bs == len)
				p += lo->cmdprio_bs[d][k].pct;
	} else {
		p = lo->cmdprio_pct[d];
	}
	if (!p)
		return def;
	r = (uint32_t)(zcow_rand64(&l->prio_rng) % 100);
	if (r >= p)
		return def;
	if (!lo->has_cmdprio_bs)
		return zfio_ioprio(cls, lo->cmdprio_level[d]);
	for (k = 0; k < lo->nr_cmdprio_bs[d]; k++) {
		const struct zfio_cmdprio *e = &lo->cmdprio_bs[d][k];

		if (e->bs != len)
			continue;
		acc += e->pct;
		if (r < acc)
			return e->cls < 0 ?
			       zfio_ioprio(cls, lo->cmdprio_level[d]) :
			       zfio_ioprio((uint32_t)e->cls, (uint32_t)e->lvl);
	}
	return def;	/* not reached: r < p, the entries' sum */
}

/* ---- samples ---------------------------------------------------------- */

int zfio_log_io(struct zrun *run, struct zrun_job *j, enum zrun_op op,
		uint64_t len, uint64_t due, uint64_t t, uint64_t done)
{
	struct ljob *l = lj(j);
	struct sample *s;

	(void)run;
	if (!l)
		return 0;
	if (op == ZRUN_OP_WRITE)
		l->fill_bytes += len;
	if (l->iolog && j->io_path)
		fprintf(l->iolog, "%llu %s %s %llu %llu\n", io_us(j, t),
			j->io_path, io_act[op], (unsigned long long)j->io_off,
			(unsigned long long)len);
	l->last_off = j->io_off;
	if (!wants_logs(&j->fio->log) || due < epoch(j))
		return 0;
	if (ZCOW_GROW_ONE(&l->s, l->nr, &l->cap))
		return -ENOMEM;
	s = &l->s[l->nr++];
	s->due = due;
	s->t = t;
	s->done = done;
	s->len = len;
	s->off = j->io_off;
	s->op = (uint8_t)op;
	s->prio = io_prio(j, l, op, len);
	return 0;
}

static struct line *add_line(struct sublog *sl)
{
	struct line *ln;

	if (ZCOW_GROW_ONE(&sl->v, sl->nr, &sl->cap))
		return NULL;
	ln = &sl->v[sl->nr++];
	memset(ln, 0, sizeof(*ln));
	return ln;
}

/* Stable orders for qsort: by completion, by issue (ties: index). */
static int by_done(const void *a, const void *b)
{
	const struct sample *x = *(struct sample *const *)a;
	const struct sample *y = *(struct sample *const *)b;

	if (x->done != y->done)
		return x->done < y->done ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_issue(const void *a, const void *b)
{
	const struct sample *x = *(struct sample *const *)a;
	const struct sample *y = *(struct sample *const *)b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A window of values (fio's io_stat as add_log_sample uses it). */
struct window {
	uint64_t n;
	double mean;
	int64_t max;
	uint64_t last;		/* ms: the window's start */
};

static void win_add(struct window *w, int64_t v)
{
	double delta = (double)v - w->mean;

	w->n++;
	if (delta != 0.0)
		w->mean += delta / (double)w->n;
	if (w->n == 1 || v > w->max)
		w->max = v;
}

/* Close window @w of direction @d as a line at @ms (fio's
 * __add_stat_to_log); nothing when it holds no sample. */
static int win_close(struct sublog *sl, struct window *w, unsigned int d,
		     uint64_t ms, int how)
{
	struct line *ln;

	if (!w->n)
		return 0;
	ln = add_line(sl);
	if (!ln)
		return -ENOMEM;
	ln->ms = ms;
	ln->ddir = (uint8_t)d;
	ln->v0 = how == ZFIO_WINDOW_MAX ? w->max :
		 (int64_t)(w->mean + 0.50);
	ln->v1 = how == ZFIO_WINDOW_BOTH ? w->max : 0;
	w->n = 0;
	w->mean = 0.0;
	w->max = 0;
	return 0;
}

/* The value of sample @s in log @sub (ns, KiB/s, 1). */
static int64_t value_of(enum sub sub, const struct sample *s)
{
	uint64_t clat = s->done - s->t;

	switch (sub) {
	case SUB_LAT:
		return (int64_t)(s->done - s->due);
	case SUB_SLAT:
		return (int64_t)(s->t - s->due);
	case SUB_CLAT:
		return (int64_t)clat;
	case SUB_BW:
		return clat ? (int64_t)(s->len * 1000000ull / clat) : 0;
	default:
		return 1;
	}
}

/* Per I/O (W 0) or by window (lat, slat, clat). */
static int make_unit(const struct zrun_job *j, enum sub sub,
		     struct sample **ord, uint64_t nr, uint64_t w_ms,
		     uint64_t end_ms)
{
	const struct zfio_logopts *lo = &j->fio->log;
	struct sublog *sl = &lj(j)->sub[sub];
	struct window win[ZRUN_NR_OPS];
	uint64_t i, ep = epoch(j);
	unsigned int d;
	int ret;

	memset(win, 0, sizeof(win));
	for (i = 0; i < nr; i++) {
		const struct sample *s = ord[i];
		uint64_t at = sub == SUB_SLAT ? s->t : s->done;
		uint64_t ms = (at > ep ? at - ep : 0) / MS;
		struct window *w = &win[s->op];
		struct line *ln;

		if (!w_ms) {
			ln = add_line(sl);
			if (!ln)
				return -ENOMEM;
			ln->ms = ms;
			ln->v0 = value_of(sub, s);
			ln->ddir = s->op;
			ln->bs = s->len;
			ln->off = s->off;
			ln->prio = s->prio;
			if (lo->issue_time &&
			    (sub == SUB_SLAT || sub == SUB_CLAT))
				ln->issue = s->t > ep ? s->t - ep : 0;
			continue;
		}
		win_add(w, value_of(sub, s));
		if (ms < w->last || ms - w->last < w_ms)
			continue;
		ret = win_close(sl, w, s->op, ms, lo->window);
		if (ret)
			return ret;
		w->last = ms - ms % w_ms;
	}
	for (d = 0; d < ZRUN_NR_OPS && w_ms; d++) {
		ret = win_close(sl, &win[d], d, end_ms, lo->window);
		if (ret)
			return ret;
	}
	return 0;
}

/* bw and iops by window of @w_ms: per direction, what completed in each
 * window, at its end. */
static int make_rate(const struct zrun_job *j, enum sub sub,
		     struct sample **ord, uint64_t nr, uint64_t w_ms)
{
	const struct zfio_logopts *lo = &j->fio->log;
	struct sublog *sl = &lj(j)->sub[sub];
	uint64_t i = 0, k, ep = epoch(j);

	for (k = 1; i < nr; k++) {
		uint64_t sum[ZRUN_NR_OPS] = { 0 };
		unsigned int d;

		for (; i < nr && (ord[i]->done - ep) / MS < k * w_ms; i++)
			sum[ord[i]->op] += sub == SUB_BW ? ord[i]->len : 1;
		for (d = 0; d < ZRUN_NR_OPS; d++) {
			struct line *ln;

			if (!sum[d])
				continue;
			ln = add_line(sl);
			if (!ln)
				return -ENOMEM;
			ln->ms = k * w_ms;
			ln->ddir = (uint8_t)d;
			ln->v0 = (int64_t)(sub == SUB_BW ?
					   sum[d] * 1000 / w_ms / 1024 :
					   sum[d] * 1000 / w_ms);
			ln->v1 = lo->window == ZFIO_WINDOW_BOTH ? ln->v0 : 0;
			if (j->fio->bs_min_d[d] == j->fio->bs_max_d[d])
				ln->bs = j->fio->bs_min_d[d];
		}
	}
	return 0;
}

/* clat histograms every @h_ms (fio's add_clat_sample). */
static int make_hist(const struct zrun_job *j, struct sample **ord,
		     uint64_t nr, uint64_t h_ms)
{
	struct sublog *sl = &lj(j)->sub[SUB_HIST];
	uint64_t *cum[ZRUN_NR_OPS] = { NULL }, *last[ZRUN_NR_OPS] = { NULL };
	uint64_t hist_last[ZRUN_NR_OPS] = { 0 }, i, ep = epoch(j);
	unsigned int d, b;
	int ret = -ENOMEM;

	for (d = 0; d < ZRUN_NR_OPS; d++) {
		cum[d] = calloc(ZFIO_HIST_NR, sizeof(uint64_t));
		last[d] = calloc(ZFIO_HIST_NR, sizeof(uint64_t));
		if (!cum[d] || !last[d])
			goto out;
	}
	for (i = 0; i < nr; i++) {
		const struct sample *s = ord[i];
		uint64_t ms = (s->done - ep) / MS, this;
		struct line *ln;

		d = s->op;
		cum[d][zfio_hist_bin(s->done - s->t)]++;
		if (!hist_last[d])
			hist_last[d] = ms;
		this = ms - hist_last[d];
		if (this < h_ms)
			continue;
		ln = add_line(sl);
		if (!ln)
			goto out;
		ln->bins = malloc(ZFIO_HIST_NR * sizeof(uint64_t));
		if (!ln->bins)
			goto out;
		for (b = 0; b < ZFIO_HIST_NR; b++)
			ln->bins[b] = cum[d][b] - last[d][b];
		memcpy(last[d], cum[d], ZFIO_HIST_NR * sizeof(uint64_t));
		ln->ms = ms;
		ln->ddir = (uint8_t)d;
		ln->bs = s->len;
		hist_last[d] = ms - (this - h_ms);
	}
	ret = 0;
out:
	for (d = 0; d < ZRUN_NR_OPS; d++) {
		free(cum[d]);
		free(last[d]);
	}
	return ret;
}

static uint64_t min_u(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int zfio_log_job_end(struct zrun *run, struct zrun_job *j)
{
	const struct zfio_logopts *lo = &j->fio->log;
	struct ljob *l = lj(j);
	struct sample **ord = NULL;
	uint64_t i, ep, end_ms, w;
	uint32_t k;
	int ret = 0;

	(void)run;
	if (!l || l->is_ended)
		return 0;
	l->is_ended = true;
	for (k = 0; l->iolog && k < l->nr_open; k++)
		fprintf(l->iolog, "%llu %s close\n", io_us(j, j->last_done),
			l->open[k]);
	if (!wants_logs(lo))
		return 0;
	ep = epoch(j);
	end_ms = (j->last_done > ep ? j->last_done - ep : 0) / MS;
	if (l->nr) {
		ord = malloc(l->nr * sizeof(*ord));
		if (!ord)
			return -ENOMEM;
	}
	for (i = 0; i < l->nr; i++)
		ord[i] = &l->s[i];
	if (lo->want[ZFIO_LOG_LAT].is_set) {
		qsort(ord, l->nr, sizeof(*ord), by_issue);
		ret = make_unit(j, SUB_SLAT, ord, l->nr, lo->avg_msec, end_ms);
	}
	qsort(ord, l->nr, sizeof(*ord), by_done);
	if (!ret && lo->want[ZFIO_LOG_LAT].is_set)
		ret = make_unit(j, SUB_LAT, ord, l->nr, lo->avg_msec, end_ms) ?:
		      make_unit(j, SUB_CLAT, ord, l->nr, lo->avg_msec,
				end_ms);
	/* fio: a bw or iops log's window is min(log_avg_msec, bwavgtime)
	 * when bwavgtime is set (0 wins: per I/O) */
	w = lo->bw_avg_msec ? min_u(lo->avg_msec, lo->bw_avg_msec) :
			      lo->avg_msec;
	if (!ret && lo->want[ZFIO_LOG_BW].is_set)
		ret = w ? make_rate(j, SUB_BW, ord, l->nr, w) :
			  make_unit(j, SUB_BW, ord, l->nr, 0, end_ms);
	w = lo->iops_avg_msec ? min_u(lo->avg_msec, lo->iops_avg_msec) :
				lo->avg_msec;
	if (!ret && lo->want[ZFIO_LOG_IOPS].is_set)
		ret = w ? make_rate(j, SUB_IOPS, ord, l->nr, w) :
			  make_unit(j, SUB_IOPS, ord, l->nr, 0, end_ms);
	if (!ret && lo->want[ZFIO_LOG_HIST].is_set && lo->hist_msec)
		ret = make_hist(j, ord, l->nr, lo->hist_msec);
	free(ord);
	free(l->s);
	l->s = NULL;
	l->nr = l->cap = 0;
	return ret;
}

/* ---- writing ---------------------------------------------------------- */

static void put_line(FILE *f, const struct zfio_logopts *lo, enum sub sub,
		     const struct line *ln, uint64_t add_ms)
{
	unsigned int b, stride = 1u << lo->hist_coarseness;

	if (sub == SUB_HIST) {
		fprintf(f, "%llu, %u, %llu, ",
			(unsigned long long)(ln->ms + add_ms), ln->ddir,
			(unsigned long long)ln->bs);
		for (b = 0; b < ZFIO_HIST_NR; b += stride) {
			uint64_t sum = 0;
			unsigned int k;

			for (k = 0; k < stride; k++)
				sum += ln->bins[b + k];
			fprintf(f, "%llu%s", (unsigned long long)sum,
				b + stride < ZFIO_HIST_NR ? ", " : "\n");
		}
		return;
	}
	fprintf(f, "%llu, %lld", (unsigned long long)(ln->ms + add_ms),
		(long long)ln->v0);
	if (lo->avg_msec && lo->window == ZFIO_WINDOW_BOTH)
		fprintf(f, ", %lld", (long long)ln->v1);
	fprintf(f, ", %u, %llu", ln->ddir, (unsigned long long)ln->bs);
	if (lo->offset)
		fprintf(f, ", %llu", (unsigned long long)ln->off);
	if (lo->prio)
		fprintf(f, ", 0x%04x", ln->prio);
	else
		fprintf(f, ", %u", ln->prio >> PRIO_SHIFT == PRIO_CLASS_RT);
	if (lo->issue_time)
		fprintf(f, ", %llu", (unsigned long long)ln->issue);
	fputc('\n', f);
}

static int remember(struct lrun *lr, const char *name, bool *was_ret)
{
	uint64_t i;

	for (i = 0; i < lr->nr; i++)
		if (!strcmp(lr->names[i], name))
			break;
	*was_ret = i < lr->nr;
	if (*was_ret)
		return 0;
	if (ZCOW_GROW_ONE(&lr->names, lr->nr, &lr->cap))
		return -ENOMEM;
	lr->names[lr->nr] = strdup(name);
	if (!lr->names[lr->nr])
		return -ENOMEM;
	lr->nr++;
	return 0;
}

/* Open @name in @dir: new, or appended to when written before. */
static FILE *open_log(struct zrun *run, const char *dir, const char *name,
		      int *ret)
{
	char path[ZFIO_PATH_LEN + ZFIO_LOG_NAME_LEN + 64];
	bool was;
	FILE *f;

	*ret = remember(run->logs, name, &was);
	if (*ret)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, was ? "a" : "w");
	if (!f) {
		*ret = -errno;
		zrun_errf(run, "writing '%s': %s", path, strerror(errno));
	}
	return f;
}

int zfio_log_write(struct zrun *run, const char *dir)
{
	unsigned int i, s;
	int ret = 0;

	if (!run->logs)
		return 0;
	for (i = 0; i < run->nr_jobs && !ret; i++) {
		struct zrun_job *j = &run->jobs[i];
		const struct zfio_logopts *lo = &j->fio->log;
		struct ljob *l = lj(j);
		uint64_t add = lo->alt_epoch ? epoch(j) / MS : 0;

		if (!l)
			continue;
		if (l->iolog) {
			FILE *f;

			fflush(l->iolog);
			f = open_log(run, dir, lo->write_iolog, &ret);
			if (!f)
				break;
			fwrite(l->iolog_buf, 1, l->iolog_len, f);
			if (fclose(f))
				ret = -EIO;
		}
		for (s = 0; s < NR_SUBS && !ret; s++) {
			const struct zfio_logname *n = &lo->want[sub_kind[s]];
			char name[ZFIO_LOG_NAME_LEN + 64];
			uint64_t k;
			FILE *f;

			if (!n->is_set)
				continue;
			if (lo->per_job_logs)
				snprintf(name, sizeof(name), "%s_%s.%u.log",
					 n->name[0] ? n->name : j->fio->name,
					 sub_names[s], j->idx + 1);
			else
				snprintf(name, sizeof(name), "%s_%s.log",
					 n->name[0] ? n->name : j->fio->name,
					 sub_names[s]);
			f = open_log(run, dir, name, &ret);
			if (!f)
				break;
			for (k = 0; k < l->sub[s].nr; k++)
				put_line(f, lo, s, &l->sub[s].v[k], add);
			if (fclose(f))
				ret = -EIO;
		}
	}
	if (ret == -EIO)
		zrun_errf(run, "writing the logs in '%s': %s", dir,
			  strerror(EIO));
	return ret;
}

void zfio_log_put_json(FILE *f, const struct zrun *run)
{
	const struct lrun *lr = run->logs;
	unsigned int i, n = 0;
	uint64_t k;

	fprintf(f, "  \"logs\": [");
	for (k = 0; lr && k < lr->nr; k++) {
		fprintf(f, "%s", k ? ", " : "");
		zres_json_str(f, lr->names[k]);
	}
	fprintf(f, "],\n  \"fill_device\": [");
	for (i = 0; i < run->nr_jobs; i++) {
		const struct zrun_job *j = &run->jobs[i];

		if (!zfio_log_fills(j))
			continue;
		fprintf(f, "%s{\"name\": ", n++ ? ", " : "");
		zres_json_str(f, j->fio->name);
		fprintf(f, ", \"clone\": %u, \"bytes_written\": %llu, "
			   "\"enospc\": %s}", j->clone,
			(unsigned long long)lj(j)->fill_bytes,
			lj(j)->is_enospc ? "true" : "false");
	}
	fprintf(f, "],\n");
}

void zfio_log_enospc(struct zrun_job *j)
{
	if (lj(j))
		lj(j)->is_enospc = true;
}

bool zfio_log_fills(const struct zrun_job *j)
{
	return lj(j) && j->fio->log.fill_device;
}

static void replay_free(struct replay *rp)
{
	uint32_t i;

	if (!rp)
		return;
	for (i = 0; i < rp->nr_files; i++)
		free(rp->files[i]);
	free(rp->files);
	free(rp->acts);
	if (rp->f)
		fclose(rp->f);
	free(rp);
}

void zfio_log_job_free(struct zrun_job *j)
{
	struct ljob *l = lj(j);
	unsigned int s;
	uint64_t k;
	uint32_t i;

	if (!l)
		return;
	for (s = 0; s < NR_SUBS; s++) {
		for (k = 0; k < l->sub[s].nr; k++)
			free(l->sub[s].v[k].bins);
		free(l->sub[s].v);
	}
	if (l->iolog)
		fclose(l->iolog);
	free(l->iolog_buf);
	for (i = 0; i < l->nr_open; i++)
		free(l->open[i]);
	free(l->open);
	free(l->s);
	replay_free(l->rp);
	free(l);
	j->lpriv = NULL;
}

void zfio_log_free(struct zrun *run)
{
	struct lrun *lr = run->logs;
	uint64_t k;

	if (!lr)
		return;
	for (k = 0; k < lr->nr; k++)
		free(lr->names[k]);
	free(lr->names);
	free(lr);
	run->logs = NULL;
}

/* ---- replay ----------------------------------------------------------- */

/* "PATH:LINE: message" as the run's error, behind the option's place. */
static int rp_err(struct zrun *run, const struct zrun_job *j,
		  const struct replay *rp, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int rp_err(struct zrun *run, const struct zrun_job *j,
		  const struct replay *rp, int line, const char *fmt, ...)
{
	const struct zfio_lat *at = &j->fio->log.at[ZFIO_LOPT_READ_IOLOG];
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		zrun_errf(run, "%s:%d: option 'read_iolog': %s:%d: %s",
			  at->file, at->line, rp->path, line, msg);
	else
		zrun_errf(run, "%s:%d: option 'read_iolog': %s: %s", at->file,
			  at->line, rp->path, msg);
	return -EINVAL;
}

static int file_index(struct replay *rp, const char *name, bool is_add,
		      uint32_t *idx)
{
	uint32_t i;
	char **n;

	for (i = 0; i < rp->nr_files; i++)
		if (!strcmp(rp->files[i], name))
			break;
	*idx = i;
	if (i < rp->nr_files || !is_add)
		return i < rp->nr_files ? 0 : -ENOENT;
	n = realloc(rp->files, (rp->nr_files + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	rp->files = n;
	n[i] = strdup(name);
	if (!n[i])
		return -ENOMEM;
	rp->nr_files++;
	return 0;
}

/*
 * One line of the log into *@a: 1 (an action), 0 (nothing to do:
 * skipped by replay_skip, a wait with replay_no_stall, an empty line),
 * or -errno (recorded).  @is_scan: the first pass, which adds files and
 * measures the extent.
 */
static int parse_line(struct zrun *run, const struct zrun_job *j,
		      struct replay *rp, char *line, bool is_scan,
		      struct ract_rec *a)
{
	static const char *const acts[] = { "add", "open", "close", "read",
					    "write", "trim", "sync",
					    "datasync", "wait" };
	const struct zfio_logopts *lo = &j->fio->log;
	char name[ZFIO_LOG_NAME_LEN], act[16], extra[8];
	unsigned long long tt = 0, off = 0, len = 0;
	const char *file;
	int n, want_io = rp->version == 3 ? 5 : 4, ret;
	size_t i;

	memset(a, 0, sizeof(*a));
	line[strcspn(line, "\r\n")] = '\0';
	if (!line[strspn(line, " \t")])
		return 0;
	if (rp->version == 3)
		n = sscanf(line, "%llu %255s %15s %llu %llu %7s", &tt, name,
			   act, &off, &len, extra);
	else
		n = sscanf(line, "%255s %15s %llu %llu %7s", name, act, &off,
			   &len, extra);
	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (n >= want_io - 2 && !strcmp(act, acts[i]))
			break;
	if (i == sizeof(acts) / sizeof(acts[0]))
		return rp_err(run, j, rp, rp->lineno, "not an iolog v%d line "
			      "(%sFILE ACTION [OFFSET LENGTH])", rp->version,
			      rp->version == 3 ? "TIME " : "");
	if (n != (i < RA_READ ? want_io - 2 : want_io))
		return rp_err(run, j, rp, rp->lineno, "'%s' takes %s",
			      acts[i], i < RA_READ ? "no offset or length" :
			      "an offset and a length");
	if (i == RA_WAIT && rp->version == 3)
		return rp_err(run, j, rp, rp->lineno, "'wait' is not an "
			      "action of version 3 (its times say when)");
	a->act = (uint8_t)i;
	if (rp->version == 3) {
		/* fio's delay_since_ttime(): none for the first, an earlier
		 * time or replay_no_stall; else scaled by
		 * replay_time_scale */
		if (rp->last_ttime && !lo->no_stall && tt >= rp->last_ttime)
			a->delay_ns = (tt - rp->last_ttime) * 1000 * 100 /
				      lo->time_scale;
		rp->last_ttime = tt;
	}
	if (i == RA_WAIT) {
		if (lo->no_stall)
			return 0;
		a->delay_ns = off * MS;	/* fio: ms from the start */
		return 1;
	}
	if ((i == RA_READ && lo->replay_skip & ZFIO_SKIP_READ) ||
	    (i == RA_WRITE && lo->replay_skip & ZFIO_SKIP_WRITE) ||
	    (i == RA_TRIM && lo->replay_skip & ZFIO_SKIP_TRIM) ||
	    (i == RA_SYNC && lo->replay_skip & ZFIO_SKIP_SYNC))
		return 0;
	file = lo->redirect[0] ? lo->redirect : name;
	if (i == RA_ADD && is_scan) {
		ret = file_index(rp, file, true, &a->file);
		if (ret)
			return ret;
	} else if (file_index(rp, file, false, &a->file)) {
		return rp_err(run, j, rp, rp->lineno, "'%s' was not added "
			      "(an 'add' line comes first)", file);
	}
	if (i == RA_TRIM && run->ops == &zrun_fs_target)
		return rp_err(run, j, rp, rp->lineno, "trim: files on the fs "
			      "target have no trim (replay_skip=trim leaves "
			      "them out)");
	if (i < RA_READ || i >= RA_SYNC)
		return 1;
	off /= lo->replay_scale;
	if (lo->replay_align)
		off &= ~((unsigned long long)lo->replay_align - 1);
	if (!len)
		return rp_err(run, j, rp, rp->lineno, "a %s of 0 bytes",
			      acts[i]);
	if (len > ZFIO_MAX_BS)
		return rp_err(run, j, rp, rp->lineno, "%llu bytes is above "
			      "the limit of %llu (256 MiB)", len,
			      (unsigned long long)ZFIO_MAX_BS);
	a->off = off;
	a->len = len;
	if (is_scan) {
		if (off + len > rp->extent)
			rp->extent = off + len;
		if (len > rp->max_len)
			rp->max_len = len;
		rp->has_reads |= i == RA_READ;
	}
	return 1;
}

/* The log's version line. */
static int read_version(struct zrun *run, const struct zrun_job *j,
			struct replay *rp, FILE *f)
{
	unsigned char magic[4];
	char line[256];
	uint32_t m;

	rp->lineno = 1;
	if (fread(magic, 1, 4, f) == 4) {
		m = (uint32_t)magic[0] | (uint32_t)magic[1] << 8 |
		    (uint32_t)magic[2] << 16 | (uint32_t)magic[3] << 24;
		/* blktrace's BLK_IO_TRACE_MAGIC, either byte order */
		if ((m & 0xffffff00u) == 0x65617400u ||
		    (__builtin_bswap32(m) & 0xffffff00u) == 0x65617400u)
			return rp_err(run, j, rp, 0, "a blktrace binary trace: "
				      "zcow replays fio's iolog (versions 2 "
				      "and 3) only, not blktrace");
	}
	rewind(f);
	if (!fgets(line, sizeof(line), f))
		return rp_err(run, j, rp, 1, "empty: not an iolog");
	line[strcspn(line, "\r\n")] = '\0';
	if (!strcmp(line, "fio version 2 iolog"))
		rp->version = 2;
	else if (!strcmp(line, "fio version 3 iolog"))
		rp->version = 3;
	else
		return rp_err(run, j, rp, 1, "not 'fio version 2 iolog' or "
			      "'fio version 3 iolog' (version 1 is no longer "
			      "read by fio either)");
	return 0;
}

/* Read the log through: its files and extent; the actions too unless
 * chunked (then reopened at its second line). */
static int replay_open(struct zrun *run, struct zrun_job *j,
		       struct replay *rp)
{
	const struct zfio_logopts *lo = &j->fio->log;
	char line[4096];
	struct ract_rec a;
	FILE *f;
	int ret;

	f = fopen(rp->path, "r");
	if (!f)
		return rp_err(run, j, rp, 0, "%s", strerror(errno));
	ret = read_version(run, j, rp, f);
	while (!ret && fgets(line, sizeof(line), f)) {
		rp->lineno++;
		ret = parse_line(run, j, rp, line, true, &a);
		if (ret <= 0)
			continue;
		ret = 0;
		if (lo->iolog_chunked)
			continue;
		if (ZCOW_GROW_ONE(&rp->acts, rp->nr_acts, &rp->acts_cap))
			ret = -ENOMEM;
		else
			rp->acts[rp->nr_acts++] = a;
	}
	if (!ret && !rp->nr_files)
		ret = rp_err(run, j, rp, 0, "adds no file: nothing to replay");
	if (ret || !lo->iolog_chunked) {
		fclose(f);
		rp->last_ttime = 0;
		return ret;
	}
	/* chunked: the actions are read again while the job runs */
	rewind(f);
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return rp_err(run, j, rp, 1, "could not be read again");
	}
	rp->f = f;
	rp->lineno = 1;
	rp->last_ttime = 0;
	return 0;
}

bool zfio_replay_is(const struct zrun_job *j)
{
	return lj(j) && lj(j)->rp;
}

void zfio_replay_files(const struct zrun_job *j, const char *const **paths,
		       uint32_t *nr, uint64_t *extent, uint64_t *max_len,
		       bool *has_reads)
{
	const struct replay *rp = lj(j)->rp;

	*paths = (const char *const *)rp->files;
	*nr = rp->nr_files;
	*extent = rp->extent;
	*max_len = rp->max_len;
	*has_reads = rp->has_reads;
}

/* The next parsed action: 1, 0 at the end, or -errno. */
static int next_act(struct zrun *run, struct zrun_job *j, struct replay *rp,
		    struct ract_rec *a)
{
	char line[4096];
	int ret;

	if (!rp->f) {
		if (rp->next == rp->nr_acts)
			return 0;
		*a = rp->acts[rp->next++];
		return 1;
	}
	while (fgets(line, sizeof(line), rp->f)) {
		rp->lineno++;
		ret = parse_line(run, j, rp, line, false, a);
		if (ret)
			return ret;
	}
	return 0;
}

int zfio_replay_next(struct zrun *run, struct zrun_job *j, uint64_t now,
		     struct zfio_replay_io *io)
{
	struct replay *rp = lj(j)->rp;
	struct ract_rec a;
	uint64_t at = now;
	int ret;

	if (rp->has_pend) {
		*io = rp->pend;
		return 0;
	}
	memset(io, 0, sizeof(*io));
	for (;;) {
		ret = next_act(run, j, rp, &a);
		if (ret < 0)
			return ret;
		if (!ret) {
			io->is_end = true;
			io->not_before = at;
			return 0;
		}
		if (a.act == RA_WAIT) {
			/* fio's read_iolog_get(): until that many ms after
			 * the start (of the run, its genesis) */
			if (a.delay_ns > at)
				at = a.delay_ns;
			continue;
		}
		/* fio's iolog_delay(): the delay counts from the last
		 * action issued */
		if (rp->has_issue && rp->last_issue + a.delay_ns > at)
			at = rp->last_issue + a.delay_ns;
		if (a.act < RA_READ) {
			/* a file action: the files stay open (set-up
			 * opened them); its time still paces the log */
			rp->last_issue = at;
			rp->has_issue = true;
			continue;
		}
		break;
	}
	io->not_before = at;
	io->file = a.file;
	if (a.act == RA_SYNC || a.act == RA_DATASYNC) {
		io->sync = a.act == RA_SYNC ? ZRUN_SYNC_FSYNC :
					      ZRUN_SYNC_FDATASYNC;
		rp->sync_file = a.file;
	} else {
		io->op = a.act == RA_READ ? ZRUN_OP_READ :
			 a.act == RA_WRITE ? ZRUN_OP_WRITE : ZRUN_OP_TRIM;
		io->off = a.off;
		io->len = a.len;
		io->cand = a.file * (j->range_len / rp->nr_files) + a.off;
	}
	rp->pend = *io;
	rp->has_pend = true;
	return 0;
}

uint32_t zfio_replay_sync_file(const struct zrun_job *j)
{
	return lj(j)->rp->sync_file;
}

void zfio_replay_issued(struct zrun_job *j, uint64_t t)
{
	struct replay *rp = lj(j)->rp;

	rp->last_issue = t;
	rp->has_issue = true;
	rp->has_pend = false;
}

/* ---- set-up ----------------------------------------------------------- */

int zfio_log_job_init(struct zrun *run, struct zrun_job *j)
{
	const struct zfio_job *f = j->fio;
	const struct zfio_logopts *lo = &f->log;
	struct ljob *l;
	int ret;

	if (!wants_logs(lo) && !lo->write_iolog[0] && !lo->read_iolog[0] &&
	    !lo->fill_device)
		return 0;
	if (!run->logs) {
		run->logs = calloc(1, sizeof(struct lrun));
		if (!run->logs)
			return -ENOMEM;
	}
	if (lo->fill_device && run->ops != &zrun_fs_target) {
		zrun_errf(run, "%s:%d: option 'fill_device': the %s target "
			       "has no file system to say ENOSPC (fio: a raw "
			       "device does not return it): target=fs",
			  lo->at[ZFIO_LOPT_FILL_DEVICE].file,
			  lo->at[ZFIO_LOPT_FILL_DEVICE].line, run->ops->name);
		return -EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	j->lpriv = l;
	/* the priorities' own stream: the same I/O with or without them */
	l->prio_rng = zcow_mix64(j->rng ^ 0x9e10a7e5ull);
	if (lo->write_iolog[0]) {
		l->iolog = open_memstream(&l->iolog_buf, &l->iolog_len);
		if (!l->iolog)
			return -ENOMEM;
		fprintf(l->iolog, "fio version 3 iolog\n");
	}
	if (!lo->read_iolog[0])
		return 0;
	if (run->ops != &zrun_fs_target) {
		zrun_errf(run, "%s:%d: option 'read_iolog': the %s target "
			       "writes at the zones' write pointers, not at "
			       "the log's offsets: replay on the fs target "
			       "(target=fs)",
			  lo->at[ZFIO_LOPT_READ_IOLOG].file,
			  lo->at[ZFIO_LOPT_READ_IOLOG].line, run->ops->name);
		return -EINVAL;
	}
	l->rp = calloc(1, sizeof(*l->rp));
	if (!l->rp)
		return -ENOMEM;
	{
		/* fio: the clones take the ':'-separated logs in turn */
		const char *p = lo->read_iolog;
		unsigned int n = 1, k, pick;
		size_t len;

		for (k = 0; p[k]; k++)
			n += p[k] == ':';
		pick = j->clone % n;
		for (k = 0; k < pick; k++)
			p = strchr(p, ':') + 1;
		len = strcspn(p, ":");
		snprintf(l->rp->path, sizeof(l->rp->path), "%.*s", (int)len,
			 p);
	}
	ret = replay_open(run, j, l->rp);
	return ret;
}
