// SPDX-License-Identifier: MIT
/*
 * zrun_ctl: errors, exits, latency target and steady state in simulated
 * time (see run_ctl.h), as fio's backend.c, td_error.c, io_u.c
 * (lat_target_*) and steadystate.c define them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"
#include "run.h"
#include "run_ctl.h"

#define NS		1000000000ull
#define SS_TICK_NS	NS	/* fio checks steady state once a second */

/* The last I/O of a slot, until its completion has been seen. */
struct ctl_rec {
	uint64_t done, len, lat;
	int op;
	bool is_pending, is_err;
};

/* A steadystate unit's window: the last @dur samples (one a second). */
struct ss_win {
	uint64_t *iops, *bw;
	uint32_t dur, nr, head;		/* head: the oldest sample */
	bool is_attained, has_value;
	uint64_t attained_at, checks;
	double criterion, slope, deviation;
};

struct zrun_ctl_job {
	unsigned int group;		/* fio's reporting group (groupid) */
	struct zrun_job *ss_holder;	/* the job that judges its unit */
	struct ss_win ss;		/* the holder's */
	bool is_ramp_over;
	uint64_t ss_prev_ios, ss_prev_bytes, ss_prev_t;
	struct ctl_rec *recs;		/* per slot */
	uint64_t *sorted;		/* latency_target: slots, sorted */
	uint64_t done_ios, done_bytes;	/* completions seen */
	/* errors */
	uint64_t nr_errors;
	int first_error;
	int fail_err;			/* the error that ended it; 0 */
	uint64_t fail_at;
	char fail_msg[ZFIO_ERR_LEN];
	char ended_by[ZFIO_ERR_LEN];	/* "" = its own end */
	/* latency_target (fio's latency_qd, _low, _high) */
	uint32_t qd, qd_low, qd_high, stable;
	uint64_t cycle_start, cycle_ios, cycle_failed, nr_steps;
	bool is_end_run, is_lat_done;
	uint64_t lat_found_at;
};

struct zrun_ctl {
	bool has_exitall, has_ss;
	uint64_t next_tick;
};

static struct zrun_ctl_job *cj(const struct zrun_job *j)
{
	return j->ctl;
}

static bool has_ss(const struct zfio_job *f)
{
	return f->ctl.ss_dur_ns >= NS;	/* fio counts whole seconds */
}

/* ---- set-up ----------------------------------------------------------- */

int zrun_ctl_setup(struct zrun *run)
{
	unsigned int i, k, group = 0, in_group = 0;
	const struct zfio_job *prev = NULL;

	run->ctl = calloc(1, sizeof(*run->ctl));
	if (!run->ctl)
		return -ENOMEM;
	run->ctl->next_tick = SS_TICK_NS;
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *j = &run->jobs[i];
		const struct zfio_job *f = j->fio;
		struct zrun_ctl_job *c = calloc(1, sizeof(*c));

		if (!c)
			return -ENOMEM;
		j->ctl = c;
		c->recs = calloc(f->iodepth, sizeof(*c->recs));
		if (!c->recs)
			return -ENOMEM;
		if (f->ctl.lat_target_ns) {
			c->sorted = calloc(f->iodepth, sizeof(*c->sorted));
			if (!c->sorted)
				return -ENOMEM;
		}
		/* fio's groupid: a job with stonewall or new_group after
		 * jobs of the group starts the next; clones share it */
		if (f != prev && (f->stonewall || f->ctl.new_group) &&
		    in_group) {
			group++;
			in_group = 0;
		}
		if (f != prev)
			in_group++;
		prev = f;
		c->group = group;
		c->qd = f->ctl.lat_target_ns ? 1 : f->iodepth;
		c->qd_low = 1;
		c->qd_high = f->iodepth;
		run->ctl->has_exitall |= f->ctl.exitall;
		run->ctl->has_ss |= has_ss(f);
		if (f->zcow_loadfile[0] && (has_ss(f) || f->ctl.lat_target_ns))
			return zrun_opt_err(run, f, ZFIO_OPT_ZCOW_LOADFILE,
					    "a loadfile's steps are not I/Os "
					    "steadystate or latency_target can "
					    "measure");
	}
	/* steadystate's units: a job, or with group_reporting its group,
	 * judged by its last job (fio's steadystate_setup()); fio rejects
	 * options that differ within a group */
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *j = &run->jobs[i];
		const struct zfio_ctl *a = &j->fio->ctl;

		for (k = 0; k < run->nr_jobs; k++) {
			const struct zfio_ctl *b = &run->jobs[k].fio->ctl;

			if (cj(&run->jobs[k])->group != cj(j)->group ||
			    (!has_ss(j->fio) && !has_ss(run->jobs[k].fio)))
				continue;
			if (a->ss_dur_ns / NS != b->ss_dur_ns / NS ||
			    a->ss_ramp_ns != b->ss_ramp_ns || a->ss != b->ss ||
			    a->ss_is_pct != b->ss_is_pct ||
			    a->ss_limit != b->ss_limit)
				return zrun_opt_err(run, run->jobs[k].fio,
						    ZFIO_OPT_STEADYSTATE,
						    "job '%s' and job '%s' are "
						    "in one reporting group: "
						    "their steadystate options "
						    "must agree (as fio)",
						    j->fio->name,
						    run->jobs[k].fio->name);
		}
		if (!has_ss(j->fio))
			continue;
		cj(j)->ss_holder = j;
		if (!a->group_reporting)
			continue;
		for (k = i + 1; k < run->nr_jobs; k++)
			if (cj(&run->jobs[k])->group == cj(j)->group &&
			    run->jobs[k].fio->ctl.group_reporting)
				cj(j)->ss_holder = &run->jobs[k];
	}
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *j = &run->jobs[i];
		struct ss_win *w = &cj(j)->ss;

		if (cj(j)->ss_holder != j)
			continue;
		w->dur = (uint32_t)(j->fio->ctl.ss_dur_ns / NS);
		w->iops = calloc(w->dur, sizeof(*w->iops));
		w->bw = calloc(w->dur, sizeof(*w->bw));
		if (!w->iops || !w->bw)
			return -ENOMEM;
	}
	return 0;
}

void zrun_ctl_free(struct zrun *run)
{
	unsigned int i;

	for (i = 0; run->jobs && i < run->nr_jobs; i++) {
		struct zrun_ctl_job *c = run->jobs[i].ctl;

		if (!c)
			continue;
		free(c->recs);
		free(c->sorted);
		free(c->ss.iops);
		free(c->ss.bw);
		free(c);
		run->jobs[i].ctl = NULL;
	}
	free(run->ctl);
	run->ctl = NULL;
}

/* ---- stopping jobs ------------------------------------------------------ */

/*
 * Job @j is ended at @t by @why: one not started yet never runs (fio
 * kills it before it is created), a running one issues nothing more (its
 * I/Os in flight complete).
 */
static void stop_job(struct zrun *run, struct zrun_job *j, uint64_t t,
		     const char *why)
{
	struct zrun_ctl_job *c = cj(j);

	if (j->is_done || (j->has_stop && j->stop_at <= t))
		return;
	if (!c->ended_by[0])
		snprintf(c->ended_by, sizeof(c->ended_by), "%s", why);
	if (j->is_waiting) {
		j->is_waiting = false;
		j->is_done = true;
		j->start = j->last_done = t;
		if (t > run->now_max)
			run->now_max = t;
		return;
	}
	j->has_stop = true;
	j->stop_at = t;
}

/* The job fails with @err (the first failure stays) at @t. */
static void fail_job(struct zrun *run, struct zrun_job *j, int err,
		     const char *msg, uint64_t t)
{
	struct zrun_ctl_job *c = cj(j);

	if (c->fail_err)
		return;
	c->fail_err = err;
	c->fail_at = t;
	snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", msg);
	stop_job(run, j, t, "its error");
}

bool zrun_ctl_has_failed(const struct zrun_job *j)
{
	return j->ctl && cj(j)->fail_err;
}

void zrun_ctl_job_ended(struct zrun *run, struct zrun_job *j)
{
	static const char *const what[] = { "group", "stonewall", "all" };
	const struct zfio_ctl *f = &j->fio->ctl;
	uint64_t t = j->last_done;
	char why[ZFIO_ERR_LEN];
	unsigned int i;

	if (!run->ctl->has_exitall &&
	    !(f->exitall_on_error && cj(j)->fail_err))
		return;
	snprintf(why, sizeof(why), "%s: job '%s' ended (exit_what=%s)",
		 run->ctl->has_exitall ? "exitall" : "exitall_on_error",
		 j->fio->name, what[f->exit_what]);
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *o = &run->jobs[i];
		bool is_hit;

		if (o == j || o->is_done)
			continue;
		switch (f->exit_what) {
		case ZFIO_EXIT_GROUP:
			is_hit = cj(o)->group == cj(j)->group;
			break;
		case ZFIO_EXIT_STONEWALL:	/* running now, any group */
			is_hit = !o->is_waiting && o->start <= t;
			break;
		default:
			is_hit = true;
			break;
		}
		if (is_hit)
			stop_job(run, o, t, why);
	}
}

/* ---- errors ------------------------------------------------------------ */

static void count_error(struct zrun_ctl_job *c, int err)
{
	if (!c->nr_errors++)
		c->first_error = err;
}

int zrun_ctl_io_error(struct zrun *run, struct zrun_job *j, int op,
		      uint64_t done)
{
	const struct zfio_ctl *f = &j->fio->ctl;
	int err = run->io_err;
	enum zfio_err_class cls = zfio_err_class_of(op == ZRUN_OP_READ, err);

	run->io_err = 0;
	if (zfio_ctl_is_non_fatal(f, cls, err)) {
		count_error(cj(j), err);
		if (f->error_dump)
			fprintf(stderr, "zcow run: %s (counted: the job goes "
				"on)\n", run->io_err_msg);
		return 0;
	}
	fail_job(run, j, err, run->io_err_msg, done);
	return 1;
}

bool zrun_ctl_verify_error(struct zrun *run, struct zrun_job *j, int err,
			   const char *msg, uint64_t t)
{
	const struct zfio_ctl *f = &j->fio->ctl;
	enum zfio_err_class cls = zfio_err_class_of(false, err);

	if (!j->ctl)		/* before the jobs run: nothing goes on */
		return false;
	if (zfio_ctl_is_non_fatal(f, cls, err)) {
		count_error(cj(j), err);
		if (f->error_dump)
			fprintf(stderr, "zcow run: %s (counted: the job goes "
				"on)\n", msg);
		return true;
	}
	fail_job(run, j, err, msg, t);
	return false;
}

int zrun_ctl_result(struct zrun *run)
{
	const struct zrun_ctl_job *first = NULL;
	unsigned int i;

	for (i = 0; i < run->nr_jobs; i++) {
		const struct zrun_ctl_job *c = run->jobs[i].ctl;

		if (c && c->fail_err && (!first || c->fail_at < first->fail_at))
			first = c;
	}
	if (!first)
		return 0;
	snprintf(run->err, sizeof(run->err), "%s", first->fail_msg);
	return -first->fail_err;
}

/* ---- latency_target (fio's io_u.c lat_target_*) ------------------------ */

static void reap(struct zrun *run, struct zrun_job *j, uint64_t t);

static void new_cycle(struct zrun_ctl_job *c, uint64_t t)
{
	c->cycle_start = t;
	c->cycle_ios = c->done_ios;
	c->cycle_failed = 0;
}

/* fio's io_u_quiesce(): wait for every I/O in flight; returns when. */
static uint64_t quiesce(struct zrun *run, struct zrun_job *j, uint64_t t)
{
	uint64_t m = zrun_max_slot(j);
	uint32_t i;

	if (m < t)
		m = t;
	for (i = 0; i < j->fio->iodepth; i++)
		j->slots[i] = m;
	reap(run, j, m);
	return m;
}

/* An I/O above the target, or a window that missed the percentile:
 * halve towards the lowest depth that passed.  true at depth 1. */
static bool lat_failed(struct zrun *run, struct zrun_job *j, uint64_t t)
{
	struct zrun_ctl_job *c = cj(j);

	if (c->qd == 1)
		return true;
	c->qd_high = c->qd;
	if (c->qd == c->qd_low)
		c->qd_low--;
	c->qd = (c->qd + c->qd_low) / 2;
	c->stable = 0;
	c->nr_steps++;
	new_cycle(c, quiesce(run, j, t));
	return false;
}

/*
 * A window that kept the percentile: double the depth (or bisect towards
 * the lowest that failed); the same depth twice is the answer: one more
 * window at it, measured alone (the statistics restart, and the
 * runtime, as fio's reset_all_stats()), then the job ends (unless
 * latency_run: it goes on adjusting).
 */
static void lat_success(struct zrun *run, struct zrun_job *j, uint64_t t)
{
	const struct zfio_job *f = j->fio;
	struct zrun_ctl_job *c = cj(j);
	uint32_t qd = c->qd;

	c->qd_low = c->qd;
	if (c->qd + 1 == c->qd_high && ++c->stable >= 3) {
		c->qd_high++;
		c->stable = 0;
	}
	if (c->qd_high != f->iodepth)
		c->qd = (c->qd + c->qd_high) / 2;
	else
		c->qd *= 2;
	if (c->qd > f->iodepth)
		c->qd = f->iodepth;
	if (c->qd != qd) {
		uint32_t i;

		/* the deeper queue's slots are free from now on */
		for (i = 0; i < f->iodepth; i++)
			if (j->slots[i] < t)
				j->slots[i] = t;
		c->nr_steps++;
	}
	if (!f->ctl.lat_run && c->qd == qd) {
		if (c->is_end_run) {
			c->is_lat_done = true;
			c->lat_found_at = t;
			stop_job(run, j, t, "latency_target: the depth is "
				 "found");
		} else {
			t = quiesce(run, j, t);
			c->is_end_run = true;
			j->nr_samples = 0;
			memset(j->stat_bytes, 0, sizeof(j->stat_bytes));
			memset(j->stat_ios, 0, sizeof(j->stat_ios));
			j->stats_from = t;
			if (f->runtime_ns)
				j->end_limit = t + f->runtime_ns;
		}
	}
	new_cycle(c, t);
}

/* fio's lat_target_check() at @t, after the job's completions. */
static void lat_check(struct zrun *run, struct zrun_job *j, uint64_t t)
{
	const struct zfio_ctl *f = &j->fio->ctl;
	struct zrun_ctl_job *c = cj(j);
	uint64_t ios;
	double ok;

	if (!f->lat_target_ns || c->is_lat_done || j->is_done ||
	    t < j->start + j->fio->ramp_time_ns || t < c->cycle_start ||
	    t - c->cycle_start < f->lat_window_ns)
		return;
	ios = c->done_ios - c->cycle_ios;
	/* no I/O in the window: 0 / 0, which fio's >= never passes */
	ok = (double)(ios - c->cycle_failed) / (double)ios * 100.0;
	if (ok >= f->lat_pct)
		lat_success(run, j, t);
	else
		(void)lat_failed(run, j, t);
}

/* A completion the job has just seen at @t. */
static void complete(struct zrun *run, struct zrun_job *j,
		     struct ctl_rec *r, uint64_t t)
{
	const struct zfio_ctl *f = &j->fio->ctl;
	struct zrun_ctl_job *c = cj(j);
	char msg[ZFIO_ERR_LEN];
	int err;

	r->is_pending = false;
	if (r->is_err)
		return;
	c->done_ios++;
	c->done_bytes += r->len;
	if (!f->lat_target_ns || r->op == ZRUN_OP_TRIM ||
	    r->lat <= f->lat_target_ns)
		return;
	if (f->lat_pct < 100.0) {
		c->cycle_failed++;
		return;
	}
	if (!lat_failed(run, j, t))
		return;
	/* fio's lat_fatal(): ETIMEDOUT at depth 1, an error of the I/O */
	err = ETIMEDOUT;
	snprintf(msg, sizeof(msg), "job '%s': latency of %llu nsec exceeds "
		 "specified max (%llu nsec)", j->fio->name,
		 (unsigned long long)r->lat,
		 (unsigned long long)f->lat_target_ns);
	if (zfio_ctl_is_non_fatal(f, zfio_err_class_of(r->op == ZRUN_OP_READ,
						       err), err))
		count_error(c, err);
	else
		fail_job(run, j, err, msg, t);
}

/* Every completion of the job up to @t, in completion order. */
static void reap(struct zrun *run, struct zrun_job *j, uint64_t t)
{
	struct zrun_ctl_job *c = cj(j);

	for (;;) {
		struct ctl_rec *best = NULL;
		uint32_t i;

		for (i = 0; i < j->fio->iodepth; i++) {
			struct ctl_rec *r = &c->recs[i];

			if (r->is_pending && r->done <= t &&
			    (!best || r->done < best->done))
				best = r;
		}
		if (!best)
			return;
		complete(run, j, best, best->done > t ? t : best->done);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t zrun_ctl_io_due(const struct zrun_job *j, uint32_t *slot_ret)
{
	const struct zrun_ctl_job *c = cj(j);
	uint32_t n = j->fio->iodepth, i, best = 0;

	for (i = 1; i < n; i++)
		if (j->slots[i] < j->slots[best])
			best = i;
	*slot_ret = best;
	if (!c || c->qd >= n)
		return j->slots[best];
	/* at most qd in flight: when the (n - qd + 1)-th earliest slot is
	 * free, n - qd + 1 are, so at most qd - 1 are still busy */
	memcpy(c->sorted, j->slots, n * sizeof(*c->sorted));
	qsort(c->sorted, n, sizeof(*c->sorted), cmp_u64);
	return c->sorted[n - c->qd];
}

void zrun_ctl_io_done(struct zrun *run, struct zrun_job *j, uint32_t slot,
		     int op, uint64_t due, uint64_t t, uint64_t done,
		     uint64_t len, bool is_err)
{
	struct zrun_ctl_job *c = cj(j);
	struct ctl_rec *r = &c->recs[slot];

	/* only latency_target and steadystate look at completions */
	if (!j->fio->ctl.lat_target_ns && !c->ss_holder)
		return;
	reap(run, j, t);
	if (r->is_pending)	/* the slot's last I/O: done by now */
		complete(run, j, r, t);
	r->done = done;
	r->len = len;
	r->lat = done - due;
	r->op = op;
	r->is_err = is_err;
	r->is_pending = true;
	lat_check(run, j, t);
}

/* ---- steadystate (fio's steadystate.c) --------------------------------- */

/* Is @j running at @t (started, not yet at its end)? */
static bool is_running(const struct zrun_job *j, uint64_t t)
{
	return !j->is_waiting && j->start <= t &&
	       !(j->is_done && j->last_done <= t);
}

/* Add a sample; with the window full, its criterion: true when met. */
static bool ss_judge(const struct zfio_ctl *f, struct ss_win *w,
		     uint64_t iops, uint64_t bw)
{
	bool is_iops = f->ss == ZFIO_SS_IOPS || f->ss == ZFIO_SS_IOPS_SLOPE;
	bool is_slope = f->ss == ZFIO_SS_IOPS_SLOPE || f->ss == ZFIO_SS_BW_SLOPE;
	uint64_t sum_y = 0, i, n = w->dur;
	double sum_xy = 0, mean, v;

	if (w->nr < w->dur) {
		w->iops[(w->head + w->nr) % w->dur] = iops;
		w->bw[(w->head + w->nr) % w->dur] = bw;
		w->nr++;
	} else {
		w->iops[w->head] = iops;
		w->bw[w->head] = bw;
		w->head = (w->head + 1) % w->dur;
	}
	if (w->nr < w->dur)
		return false;
	w->checks++;
	for (i = 0; i < n; i++) {
		uint64_t y = is_iops ? w->iops[(w->head + i) % n] :
				       w->bw[(w->head + i) % n];

		sum_y += y;
		sum_xy += (double)i * (double)y;
	}
	w->has_value = true;
	if (is_slope) {
		/* least squares over x = 0 .. n-1, as fio (its mean for the
		 * percentage in integer arithmetic) */
		double sum_x = (double)(n * (n - 1) / 2);
		double sum_x_sq = (double)((n - 1) * n * (2 * n - 1) / 6);

		w->slope = (sum_xy - sum_x * (double)sum_y / (double)n) /
			   (sum_x_sq - sum_x * sum_x / (double)n);
		w->criterion = f->ss_is_pct ? 100.0 * w->slope /
					      (double)(sum_y / n) : w->slope;
		return fabs(w->criterion) < f->ss_limit;
	}
	mean = (double)sum_y / (double)n;
	w->deviation = 0.0;
	for (i = 0; i < n; i++) {
		v = fabs((double)(is_iops ? w->iops[i] : w->bw[i]) - mean);
		if (v > w->deviation)
			w->deviation = v;
	}
	w->criterion = f->ss_is_pct ? 100.0 * w->deviation / mean :
				      w->deviation;
	return w->criterion < f->ss_limit;
}

/* The check at @t of the unit judged by @h. */
static void ss_check(struct zrun *run, struct zrun_job *h, uint64_t t)
{
	const struct zfio_ctl *f = &h->fio->ctl;
	uint64_t sum_iops = 0, sum_bw = 0;
	unsigned int i, nr_over = 0;

	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *m = &run->jobs[i];
		struct zrun_ctl_job *c = cj(m);
		uint64_t ms;

		if (c->ss_holder != h || !is_running(m, t))
			continue;
		if (!c->ss_prev_t)
			c->ss_prev_t = m->start;
		if (!f->ss_ramp_ns || t - m->start >= f->ss_ramp_ns + NS)
			c->is_ramp_over = true;
		reap(run, m, t);
		ms = (t - c->ss_prev_t) / 1000000;
		if (!ms)
			ms = 1;
		if (c->is_ramp_over) {
			sum_iops += 1000 * (c->done_ios - c->ss_prev_ios) / ms;
			sum_bw += 1000 * (c->done_bytes - c->ss_prev_bytes) / ms;
			nr_over++;
		}
		c->ss_prev_t = t;
		c->ss_prev_ios = c->done_ios;
		c->ss_prev_bytes = c->done_bytes;
	}
	/* fio judges at the unit's last job, while it runs */
	if (!nr_over || !is_running(h, t) ||
	    !ss_judge(f, &cj(h)->ss, sum_iops, sum_bw))
		return;
	cj(h)->ss.is_attained = true;
	cj(h)->ss.attained_at = t;
	for (i = 0; i < run->nr_jobs; i++)
		if (cj(&run->jobs[i])->ss_holder == h)
			stop_job(run, &run->jobs[i], t, "steadystate: "
				 "attained");
}

void zrun_ctl_tick(struct zrun *run, uint64_t t)
{
	struct zrun_ctl *ctl = run->ctl;
	unsigned int i;

	if (!ctl || !ctl->has_ss)
		return;
	for (; ctl->next_tick <= t; ctl->next_tick += SS_TICK_NS) {
		for (i = 0; i < run->nr_jobs; i++) {
			struct zrun_job *j = &run->jobs[i];

			if (cj(j)->ss_holder == j && !cj(j)->ss.is_attained)
				ss_check(run, j, ctl->next_tick);
		}
	}
}

/* ---- summary.json ------------------------------------------------------- */

static void put_u64s(FILE *f, const struct ss_win *w, const uint64_t *v)
{
	uint32_t i;

	fprintf(f, "[");
	for (i = 0; i < w->nr; i++)
		fprintf(f, "%s%llu", i ? ", " : "",
			(unsigned long long)v[(w->head + i) % w->dur]);
	fprintf(f, "]");
}

static void put_double(FILE *f, bool has, double v)
{
	if (has && isfinite(v))
		fprintf(f, "%.6f", v);
	else
		fprintf(f, "null");
}

void zrun_ctl_put_job(FILE *f, const struct zrun *run,
		      const struct zrun_job *j, const char *ind)
{
	static const char *const ss[] = { "iops", "iops_slope", "bw",
					  "bw_slope" };
	const struct zrun_ctl_job *c = cj(j);
	const struct zfio_ctl *o = &j->fio->ctl;
	char name[32];

	(void)run;
	if (!c)
		return;
	fprintf(f, "%s\"errors\": {\"total\": %llu, \"first_error\": ", ind,
		(unsigned long long)c->nr_errors);
	if (c->nr_errors)
		fprintf(f, "%d, \"first_error_name\": \"%s\"}", c->first_error,
			zfio_errno_name(c->first_error, name, sizeof(name)));
	else
		fprintf(f, "null, \"first_error_name\": null}");
	fprintf(f, ",\n%s\"error\": ", ind);
	if (c->fail_err) {
		fprintf(f, "{\"errno\": %d, \"name\": \"%s\", \"message\": ",
			c->fail_err,
			zfio_errno_name(c->fail_err, name, sizeof(name)));
		zres_json_str(f, c->fail_msg);
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n%s\"ended_by\": ", ind);
	if (c->ended_by[0])
		zres_json_str(f, c->ended_by);
	else
		fprintf(f, "null");
	fprintf(f, ",\n%s\"latency_target\": ", ind);
	if (o->lat_target_ns)
		fprintf(f, "{\"target_ns\": %llu, \"window_ns\": %llu, "
			   "\"percentile\": %.6g, \"depth\": %u, "
			   "\"depth_low\": %u, \"depth_high\": %u, "
			   "\"steps\": %llu, \"found\": %s, "
			   "\"final_window\": %s}",
			(unsigned long long)o->lat_target_ns,
			(unsigned long long)o->lat_window_ns, o->lat_pct,
			c->qd, c->qd_low, c->qd_high,
			(unsigned long long)c->nr_steps,
			c->is_lat_done ? "true" : "false",
			c->is_end_run ? "true" : "false");
	else
		fprintf(f, "null");
	fprintf(f, ",\n%s\"steadystate\": ", ind);
	if (c->ss_holder) {
		const struct ss_win *w = &cj(c->ss_holder)->ss;

		fprintf(f, "{\"criterion\": \"%s\", \"limit\": %.6g, "
			   "\"percent\": %s, \"duration_s\": %u, "
			   "\"ramp_ns\": %llu, \"judged_by\": ",
			ss[o->ss], o->ss_limit, o->ss_is_pct ? "true" : "false",
			w->dur, (unsigned long long)o->ss_ramp_ns);
		zres_json_str(f, c->ss_holder->fio->name);
		fprintf(f, ", \"judged_by_clone\": %u, \"attained\": %s, "
			   "\"attained_at_ns\": ", c->ss_holder->clone,
			w->is_attained ? "true" : "false");
		if (w->is_attained)
			fprintf(f, "%llu", (unsigned long long)w->attained_at);
		else
			fprintf(f, "null");
		fprintf(f, ", \"checks\": %llu, \"value\": ",
			(unsigned long long)w->checks);
		put_double(f, w->has_value, w->criterion);
		fprintf(f, ", \"iops\": ");
		put_u64s(f, w, w->iops);
		fprintf(f, ", \"bw_bytes_per_s\": ");
		put_u64s(f, w, w->bw);
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n");
}
