// SPDX-License-Identifier: MIT
/*
 * zcrash: crash-consistency campaigns (harness/crash.h, docs/crash.md).
 * This file is the campaign: per tree-log mode, every workload recorded
 * uncut, its crash points expanded against that run, every (point x loss
 * policy x seed) state run and judged (crash_oracle.c), the recovery cut
 * again at its persist points (replay_cuts), repro lines, the table and
 * the results folder (harness/results.h: crash.csv, crash.json, the
 * scenario).  The other parts are listed in crash_int.h.
 *
 * Every crash state is built in-process on a fresh simulated device: the
 * device spec is opened, formatted and the workload replayed up to the
 * armed cut.  A fresh simulator plus mkfs costs a few microseconds (the
 * simulator stores data sparsely), so no image snapshot is needed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash_int.h"
#include "grow.h"
#include "results.h"

/* ---- crash points ------------------------------------------------ */

struct cutlist {
	struct cutpt *p;
	uint64_t nr, cap;
	int err;		/* -ENOMEM once a point could not be added */
};

static void cl_add(struct cutlist *l, enum zsim_cut_kind kind,
		   enum zdev_class cls, uint64_t ord, enum zsim_when when,
		   const char *name)
{
	struct cutpt *c;

	/* a failure sticks: the caller checks l->err */
	if (l->err || (l->err = ZCOW_GROW_ONE(&l->p, l->nr, &l->cap)))
		return;
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * random:count=@n: @n distinct persist points of the @persist of the
 * uncut run, drawn by a partial Fisher-Yates shuffle seeded by @seed, in
 * ascending order; all of them when @n is as many or more (so a huge @n
 * costs what persist=every does).  -ENOMEM in @l's error.
 */
static int add_random(struct cutlist *l, uint64_t persist, uint64_t n,
		      uint64_t seed)
{
	uint64_t rng = seed * 7919 + 1, *v, i, j, t;
	char name[48];

	if (n > persist)
		n = persist;
	if (!n)
		return 0;
	v = malloc(persist * sizeof(*v));
	if (!v) {
		l->err = -ENOMEM;
		return 0;
	}
	for (i = 0; i < persist; i++)
		v[i] = i + 1;
	for (i = 0; i < n; i++) {
		j = i + (rng = zcrash_mix64(rng)) % (persist - i);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "persist=%" PRIu64, v[i]);
		cl_add(l, ZSIM_CUT_PERSIST, 0, v[i], ZSIM_CUT_AFTER, name);
	}
	free(v);
	return 0;
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
		n = strtoull(s + 13, NULL, 0);
		if (!n)
			goto bad;
		return add_random(l, r->persist, n, seed);
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
	if (!l->err && pt.is_end)
		l->p[l->nr - 1].is_end = true;
	return 0;
bad:
	snprintf(err, elen, "crash point '%s': not a point (persist=N|every|after-ack, CLASS:N:before|after|torn, CLASS=every, every:step=N, random:count=N, end)", s);
	return -EINVAL;
}

/* ---- the campaign ------------------------------------------------ */

/* Memory ran out: say so once; -ENOMEM for the command. */
static int oom(void)
{
	fprintf(stderr, "zcow crash: out of memory\n");
	return -ENOMEM;
}

/* Workload @idx in *@w and a write buffer for its largest write in
 * *@tmp (the previous one freed).  0 or -ENOMEM (said; *@w freed). */
static int make_wl(const struct camp *c, uint64_t idx, struct wl *w,
		   uint8_t **tmp)
{
	int ret = zcrash_make_wl(c, idx, w);

	free(*tmp);
	*tmp = ret ? NULL : malloc(zcrash_max_write_len(w));
	if (!*tmp) {
		zcrash_wl_free(w);
		return oom();
	}
	zcrash_wl_fill(w);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct repro {
	char scenario[512];
	char ops[512];		/* ops=FILE: the campaign's --ops */
	bool quick;
	uint64_t w;
	char cut[48];
	int loss;
	uint64_t seed;
	unsigned int treelog;	/* 0: the scenario's first mode */
	uint64_t cut2;		/* 0: the recovery is not cut */
	bool btrfs_check;	/* oracle 11 (btrfs check) on the state */
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
			if (zcrash_parse_treelog(t + 8, &rp->treelog) ||
			    rp->treelog == ZCRASH_TREELOG_BOTH)
				return -EINVAL;
		} else if (!strcmp(t, "btrfs-check"))
			rp->btrfs_check = true;
		else if (!strncmp(t, "loss=", 5))
			rp->loss = zsim_loss_parse(t + 5);
		else if (!strncmp(t, "ops=", 4) && t[4])
			snprintf(rp->ops, sizeof(rp->ops), "%s", t + 4);
		else if (!strncmp(t, "seed=", 5))
			rp->seed = strtoull(t + 5, NULL, 0);
		else
			snprintf(rp->scenario, sizeof(rp->scenario), "%s", t);
	}
	return (rp->scenario[0] || rp->ops[0]) && have_cut && rp->loss >= 0 ?
	       0 : -EINVAL;
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

/* The repro line of state @wi/@is_on/@cut/@loss/@seed of campaign @c
 * (@tail: cut2=, btrfs-check) into @buf of @len bytes. */
static void repro_line(const struct camp *c, uint64_t wi, bool is_on,
		       const char *cut, int loss, uint64_t seed,
		       const char *tail, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%.300s%s w=%" PRIu64 " treelog=%s cut=%s loss=%s seed=%" PRIu64 "%s",
		 c->path, c->ops_arg[0] ? c->path[0] ? " ops=" : "ops=" : "",
		 c->ops_arg, c->quick ? " quick" : "", wi, is_on ? "on" : "off",
		 cut, zsim_loss_name(loss), seed, tail);
}

/* Count one checked state: summary, table, repro line, csv, json. */
static void tally_state(struct tally *x, const struct wl *w, uint64_t wi,
			bool is_on, const struct cutpt *pt, uint64_t cut2,
			int loss, uint64_t seed, const struct verdict *v)
{
	struct zcrash_summary *sum = x->sum;
	char line[1200], ors[96] = "", c2[48] = "";
	int k;

	sum->tried++;
	sum->tried_treelog[is_on]++;
	sum->nr_injected += v->nr_injected;
	sum->nr_zone_fails += v->nr_zone_fails;
	sum->nr_faulted += v->nr_injected || v->nr_zone_fails;
	sum->nr_errors += v->nr_errors;
	sum->nr_degraded += v->is_degraded;
	sum->nr_on_target += v->is_on_target;
	sum->tried_same += v->is_same_image;
	if (cut2) {
		sum->tried_replay++;
		snprintf(c2, sizeof(c2), " cut2=persist=%" PRIu64, cut2);
	}
	if (v->is_btrfs_checked) {
		sum->btrfs_states++;
		sum->btrfs_images += v->nr_btrfs_images;
	}
	if (v->is_btrfs_checked)
		snprintf(c2 + strlen(c2), sizeof(c2) - strlen(c2),
			 " btrfs-check");
	repro_line(x->c, wi, is_on, pt->name, loss, seed, c2, line,
		   sizeof(line));
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
				 "%.511s", line);
		if (!x->o->is_quiet) {
			if (x->tty)
				fprintf(stderr, "\r\033[K");
			printf("violation: %s (%s): %s\nrepro: %s\n", w->desc,
			       ors, v->msg, line);
		}
		if (x->js) {
			fprintf(x->js, "%s\n    {\"repro\": ",
				x->first_viol ? "" : ",");
			zres_json_str(x->js, line);
			fprintf(x->js, ", \"workload\": ");
			zres_json_str(x->js, w->desc);
			fprintf(x->js, ", \"oracles\": \"%s\", \"message\": ", ors);
			zres_json_str(x->js, v->msg);
			fprintf(x->js, "}");
			x->first_viol = false;
		}
	} else {
		sum->passed++;
	}
	if (x->csv) {
		fprintf(x->csv, "%" PRIu64 ",%s,%s,%" PRIu64 ",%s,%" PRIu64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",",
			wi, is_on ? "on" : "off", pt->name, cut2,
			zsim_loss_name(loss), seed, ors[0] ? "violation" : "pass",
			ors[0] ? ors : "", v->gen, v->ack_gen);
		zres_csv_str(x->csv, v->msg);
		fputc('\n', x->csv);
	}
	if (x->tty && now_s() - x->last > 0.25) {
		x->last = now_s();
		fprintf(stderr, "\r\033[K%s: treelog=%s workload %" PRIu64 "/%" PRIu64 ", %" PRIu64 " states, %" PRIu64 " violations",
			x->c->name, is_on ? "on" : "off", wi + 1, x->nwl,
			sum->tried, sum->violations);
	}
}

/* The checker when the next state is one --btrfs-check picks (every
 * Nth state: the 1st, the N+1th, ...; a repro line's state when it says
 * so), else NULL. */
static struct zcrash_btrfs *pick_btrfs(const struct zcrash_opts *o,
				       struct zcrash_btrfs *bc,
				       const struct zcrash_summary *sum)
{
	if (!bc)
		return NULL;
	if (o->repro)
		return bc;
	return sum->tried % o->btrfs_check == 0 ? bc : NULL;
}

static void json_head(FILE *js, const struct camp *c,
		      const struct zcrash_opts *o)
{
	unsigned int pi, si;
	int li;

	fprintf(js, "{\n  \"zcow_version\": ");
	zres_json_str(js, zres_version());
	fprintf(js, ",\n  \"git_commit\": ");
	zres_json_str(js, zres_git());
	fprintf(js, ",\n  \"scenario\": ");
	zres_json_str(js, c->path);
	if (!strcmp(c->workload, "ops")) {
		fprintf(js, ",\n  \"ops_file\": ");
		zres_json_str(js, c->ops_file);
	}
	fprintf(js, ",\n  \"quick\": %s,\n  \"device\": ", c->quick ? "true" : "false");
	zres_json_str(js, c->spec);
	fprintf(js, ",\n  \"workload\": ");
	zres_json_str(js, c->workload);
	fprintf(js, ",\n  \"treelog\": [%s%s%s]",
		c->treelog & ZCRASH_TREELOG_OFF ? "\"off\"" : "",
		c->treelog == ZCRASH_TREELOG_BOTH ? ", " : "",
		c->treelog & ZCRASH_TREELOG_ON ? "\"on\"" : "");
	fprintf(js, ",\n  \"replay_cuts\": \"%s\"", rc_names[c->replay_cuts]);
	fprintf(js, ",\n  \"points\": [");
	for (pi = 0; pi < c->nr_points; pi++) {
		fprintf(js, "%s", pi ? ", " : "");
		zres_json_str(js, c->points[pi]);
	}
	fprintf(js, "],\n  \"loss\": [");
	for (li = 0; li < c->nr_loss; li++)
		fprintf(js, "%s\"%s\"", li ? ", " : "", zsim_loss_name(c->loss[li]));
	fprintf(js, "],\n  \"seeds\": [");
	for (si = 0; si < c->nr_seeds; si++)
		fprintf(js, "%s%" PRIu64, si ? ", " : "", c->seeds[si]);
	fprintf(js, "]");
	/* a line of its own: zcow crash --merge leaves it out */
	if (o->shard_n)
		fprintf(js, ",\n  \"shard\": {\"index\": %" PRIu64 ", \"of\": %" PRIu64 "}",
			o->shard_i, o->shard_n);
	fprintf(js, ",\n  \"violations\": [");
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

/*
 * The inode times of every mount of a campaign: a fixed instant, so
 * that a case replayed with its cut armed writes the bytes the uncut run
 * wrote (a repro line rebuilds the very state) whatever the wall clock.
 */
#define CRASH_EPOCH_SEC 1735689600	/* 2025-01-01T00:00:00Z */

static void crash_clock(struct zcow_timespec *now, void *arg)
{
	(void)arg;
	now->sec = CRASH_EPOCH_SEC;
	now->nsec = 0;
}

/* ---- shards ------------------------------------------------------ */

/* FNV-1a 64 over @len bytes of @p, continuing from @h. */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* Hash a file's bytes into @h (a missing file hashes its absence). */
static uint64_t fnv_file(uint64_t h, const char *path)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return fnv(h, "-", 1);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = fnv(h, buf, n);
	fclose(f);
	return h;
}

/*
 * What makes two runs the same campaign: the scenario file's and the ops
 * file's bytes and every setting that decides its list of states (the
 * device, the workload, the modes, the points after --quick and --sample,
 * the loss policies, the seeds, --btrfs-check).  The shards of one
 * campaign hash the same; zcow crash --merge refuses others.
 */
static uint64_t camp_hash(const struct camp *c, const struct zcrash_opts *o)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char line[1024];
	unsigned int i;
	int li;

	if (c->path[0])
		h = fnv_file(h, c->path);
	if (!strcmp(c->workload, "ops"))
		h = fnv_file(h, c->ops_file);
	snprintf(line, sizeof(line), "%s|%s|%d|%u|%d|%" PRIu64 "|%" PRIu64 "|",
		 c->spec, c->workload, c->quick, c->treelog, c->replay_cuts,
		 c->seed, o->btrfs_check);
	h = fnv(h, line, strlen(line));
	for (i = 0; i < c->nr_points; i++)
		h = fnv(h, c->points[i], strlen(c->points[i]) + 1);
	for (li = 0; li < c->nr_loss; li++)
		h = fnv(h, &c->loss[li], sizeof(c->loss[li]));
	for (i = 0; i < c->nr_seeds; i++)
		h = fnv(h, &c->seeds[i], sizeof(c->seeds[i]));
	return h;
}

/*
 * DIR/shard.json, written after crash.json is complete (its presence
 * says the shard finished): which shard, of which campaign, how many
 * uncut-recovery states the whole campaign has (the shard's I-1 modulo
 * N of them), and
 * the summary, one "key": value a line for zcow crash --merge
 * (crash_merge.c).
 */
static int write_shard(const char *dir, const struct camp *c,
		       const struct zcrash_opts *o, const struct zcrash_head *h,
		       const struct zcrash_summary *sum, uint64_t nr_base)
{
	FILE *f = zres_open(dir, "shard.json");
	int k, ret;

	if (!f) {
		ret = -errno;
		fprintf(stderr, "zcow crash: %s/shard.json: %s\n", dir,
			strerror(-ret));
		return ret;
	}
	fprintf(f, "{\n  \"shard\": %" PRIu64 ",\n  \"of\": %" PRIu64 ",\n  \"zcow_version\": ",
		o->shard_i, o->shard_n);
	zres_json_str(f, zres_version());
	fprintf(f, ",\n  \"git_commit\": ");
	zres_json_str(f, zres_git());
	fprintf(f, ",\n  \"campaign_hash\": \"%016" PRIx64 "\",\n  \"seed\": %" PRIu64 ",\n  \"name\": ",
		camp_hash(c, o), c->seed);
	zres_json_str(f, h->name);
	fprintf(f, ",\n  \"quick\": %d,\n  \"treelog\": %u,\n  \"replay_cuts\": %d,\n  \"nr_loss\": %d,\n  \"nr_seeds\": %u,\n  \"workload\": ",
		h->quick, h->treelog, h->replay_cuts, h->nr_loss, h->nr_seeds);
	zres_json_str(f, h->workload);
	fprintf(f, ",\n  \"btrfs_every\": %" PRIu64 ",\n  \"campaign_states\": %" PRIu64 ",\n  \"workloads\": %" PRIu64 ",\n  \"crash_points\": %" PRIu64 ",\n  \"tried\": %" PRIu64 ",\n  \"passed\": %" PRIu64 ",\n  \"violations\": %" PRIu64 ",\n",
		h->btrfs_every, nr_base, sum->nr_workloads,
		sum->nr_points, sum->tried, sum->passed, sum->violations);
	for (k = 1; k < ZCRASH_NR_ORACLES; k++)
		fprintf(f, "  \"oracle_%d\": %" PRIu64 ",\n", k, sum->by_oracle[k]);
	fprintf(f, "  \"tried_off\": %" PRIu64 ",\n  \"tried_on\": %" PRIu64 ",\n  \"violations_off\": %" PRIu64 ",\n  \"violations_on\": %" PRIu64 ",\n  \"tried_replay\": %" PRIu64 ",\n  \"tried_same\": %" PRIu64 ",\n  \"btrfs_states\": %" PRIu64 ",\n  \"btrfs_images\": %" PRIu64 ",\n",
		sum->tried_treelog[0], sum->tried_treelog[1],
		sum->violations_treelog[0], sum->violations_treelog[1],
		sum->tried_replay, sum->tried_same, sum->btrfs_states,
		sum->btrfs_images);
	fprintf(f, "  \"nr_ops\": %" PRIu64 ",\n  \"nr_ops_ok\": %" PRIu64 ",\n  \"nr_ops_enospc\": %" PRIu64 ",\n  \"nr_ops_namespace\": %" PRIu64 ",\n  \"nr_ops_other\": %" PRIu64 ",\n  \"nr_ops_undeclared\": %" PRIu64 ",\n",
		sum->nr_ops, sum->nr_ops_ok, sum->nr_ops_enospc,
		sum->nr_ops_namespace, sum->nr_ops_other,
		sum->nr_ops_undeclared);
	fprintf(f, "  \"nr_injected\": %" PRIu64 ",\n  \"nr_zone_fails\": %" PRIu64 ",\n  \"nr_faulted\": %" PRIu64 ",\n  \"nr_errors\": %" PRIu64 ",\n  \"nr_on_target\": %" PRIu64 ",\n  \"nr_degraded\": %" PRIu64 ",\n  \"seconds\": %.3f,\n  \"complete\": true\n}\n",
		sum->nr_injected, sum->nr_zone_fails, sum->nr_faulted,
		sum->nr_errors, sum->nr_on_target, sum->nr_degraded,
		sum->seconds);
	if (fclose(f)) {
		ret = -errno;
		fprintf(stderr, "zcow crash: %s/shard.json: %s\n", dir,
			strerror(-ret));
		return ret;
	}
	return 0;
}

/* A refusal the generated workloads meet by design: a name missing or
 * taken (an unlink of a file an earlier op removed, Ace's sequences). */
static bool is_namespace_refusal(int ret)
{
	return ret == -ENOENT || ret == -EEXIST || ret == -ENOTEMPTY ||
	       ret == -ENOTDIR || ret == -EISDIR;
}

/* Does the campaign's may_fail= allow an operation to fail with @ret? */
static bool may_fail(const struct camp *c, int ret)
{
	if (c->may_fail & ZCRASH_MAY_ANY)
		return true;
	if (ret == -ENOSPC)
		return c->may_fail & ZCRASH_MAY_ENOSPC;
	if (ret == -EOPNOTSUPP || ret == -ENOSYS)
		return c->may_fail & ZCRASH_MAY_UNSUPPORTED;
	return is_namespace_refusal(ret) &&
	       (c->may_fail & ZCRASH_MAY_NAMESPACE);
}

/*
 * The uncut run's results, by kind (OP_MARK is no operation).  A failure
 * may_fail= does not allow fails the campaign: counted, the first one
 * printed and its repro line (the uncut run: cut=end) kept as the
 * campaign's first repro.
 */
static void count_ops(const struct camp *c, const struct zcrash_opts *o,
		      const struct wl *w, uint64_t wi, bool is_on,
		      const struct rec *r, struct zcrash_summary *sum)
{
	unsigned int i;

	for (i = 0; i < w->nr; i++) {
		if (w->ops[i].kind == OP_MARK)
			continue;
		sum->nr_ops++;
		if (!r->ret[i])
			sum->nr_ops_ok++;
		else if (r->ret[i] == -ENOSPC)
			sum->nr_ops_enospc++;
		else if (is_namespace_refusal(r->ret[i]))
			sum->nr_ops_namespace++;
		else
			sum->nr_ops_other++;
		if (!r->ret[i] || may_fail(c, r->ret[i]))
			continue;
		if (!sum->nr_ops_undeclared++) {
			char line[1200];

			repro_line(c, wi, is_on, "end", ZSIM_LOSS_KEEP, 1,
				   "", line, sizeof(line));
			if (!sum->first_repro[0])
				snprintf(sum->first_repro,
					 sizeof(sum->first_repro), "%.511s",
					 line);
			if (!o->is_quiet)
				printf("undeclared failure: %s: operation %u of the uncut run failed: %s (may_fail= does not allow it)\nrepro: %s\n",
				       w->desc, i, strerror(-r->ret[i]), line);
		}
	}
}

void zcrash_print_table(const struct zcrash_head *h,
			const struct zcrash_summary *sum, const char *dir)
{
	char shard[48] = "";
	int k;

	if (h->shard_n)
		snprintf(shard, sizeof(shard), ", shard %" PRIu64 "/%" PRIu64,
			 h->shard_i, h->shard_n);
	printf("campaign %s%s: %" PRIu64 " workloads, %" PRIu64 " crash points, %d loss policies x %u seeds, treelog=%s, replay cuts %s%s\n",
	       h->name, h->quick ? " (quick)" : "", sum->nr_workloads,
	       sum->nr_points, h->nr_loss, h->nr_seeds,
	       h->treelog == ZCRASH_TREELOG_BOTH ? "both" :
	       h->treelog == ZCRASH_TREELOG_ON ? "on" : "off",
	       rc_names[h->replay_cuts], shard);
	printf("%-22s %10" PRIu64 " (%" PRIu64 " succeeded, %" PRIu64 " ENOSPC, %" PRIu64 " name missing or taken, %" PRIu64 " other errors; %" PRIu64 " not allowed by may_fail=)\n",
	       "uncut-run operations", sum->nr_ops, sum->nr_ops_ok,
	       sum->nr_ops_enospc, sum->nr_ops_namespace,
	       sum->nr_ops_other, sum->nr_ops_undeclared);
	printf("%-22s %10s\n", "crash states tried", "");
	printf("  %-20s %10" PRIu64 "\n", "tried", sum->tried);
	printf("  %-20s %10" PRIu64 "\n", "passed", sum->passed);
	printf("  %-20s %10" PRIu64 "\n", "violations", sum->violations);
	for (k = 1; k < ZCRASH_NR_ORACLES; k++)
		printf("  %d %-*s %10" PRIu64 "\n", k, k < 10 ? 18 : 17,
		       oracle_names[k], sum->by_oracle[k]);
	for (k = 0; k < 2; k++)
		if (h->treelog & (k ? ZCRASH_TREELOG_ON : ZCRASH_TREELOG_OFF))
			printf("  treelog=%-12s %10" PRIu64 " (%" PRIu64 " violations)\n",
			       k ? "on" : "off", sum->tried_treelog[k],
			       sum->violations_treelog[k]);
	printf("  %-20s %10" PRIu64 "\n", "recovery cut again", sum->tried_replay);
	printf("  %-20s %10" PRIu64 " (the image of an earlier loss of the point: its verdict)\n",
	       "same image", sum->tried_same);
	if (h->btrfs_every)
		printf("  %-20s %10" PRIu64 " (%" PRIu64 " images)\n",
		       "btrfs checked", sum->btrfs_states, sum->btrfs_images);
	if (!strcmp(h->workload, "faults")) {
		printf("  %-20s %10" PRIu64 "\n", "states with a fault", sum->nr_faulted);
		printf("  %-20s %10" PRIu64 "\n", "commands failed", sum->nr_injected);
		printf("  %-20s %10" PRIu64 "\n", "zones failed", sum->nr_zone_fails);
		printf("  %-20s %10" PRIu64 "\n", "errors reported", sum->nr_errors);
		printf("  %-20s %10" PRIu64 "\n", "degraded (offline)", sum->nr_degraded);
	}
	if (!strcmp(h->workload, "replace")) {
		printf("  %-20s %10" PRIu64 "\n", "fs on the target", sum->nr_on_target);
		printf("  %-20s %10" PRIu64 "\n", "fs on the source", sum->tried - sum->nr_on_target);
	}
	printf("  %-20s %10.2f (%.0f states/min)\n", "seconds", sum->seconds,
	       sum->seconds > 0 ? sum->tried * 60.0 / sum->seconds : 0.0);
	if (dir)
		printf("results: %s\n", dir);
}

void zcrash_json_tail(FILE *js, const struct zcrash_head *h,
		      const struct zcrash_summary *sum, bool has_viol)
{
	int k;

	fprintf(js, "%s],\n  \"workloads\": %" PRIu64 ",\n  \"crash_points\": %" PRIu64 ",\n  \"tried\": %" PRIu64 ",\n  \"passed\": %" PRIu64 ",\n  \"violations\": %" PRIu64 ",\n  \"by_oracle\": {",
		has_viol ? "\n  " : "", sum->nr_workloads, sum->nr_points,
		sum->tried, sum->passed, sum->violations);
	for (k = 1; k < ZCRASH_NR_ORACLES; k++)
		fprintf(js, "%s\"%s\": %" PRIu64, k > 1 ? ", " : "", oracle_names[k],
			sum->by_oracle[k]);
	fprintf(js, "},\n  \"by_treelog\": {\"off\": {\"tried\": %" PRIu64 ", \"violations\": %" PRIu64 "}, \"on\": {\"tried\": %" PRIu64 ", \"violations\": %" PRIu64 "}},\n  \"recovery_cut_states\": %" PRIu64,
		sum->tried_treelog[0], sum->violations_treelog[0],
		sum->tried_treelog[1], sum->violations_treelog[1],
		sum->tried_replay);
	fprintf(js, ",\n  \"uncut_ops\": {\"run\": %" PRIu64 ", \"succeeded\": %" PRIu64 ", \"enospc\": %" PRIu64 ", \"name_missing_or_taken\": %" PRIu64 ", \"other\": %" PRIu64 ", \"undeclared\": %" PRIu64 "}",
		sum->nr_ops, sum->nr_ops_ok, sum->nr_ops_enospc,
		sum->nr_ops_namespace, sum->nr_ops_other,
		sum->nr_ops_undeclared);
	if (h->btrfs_every)
		fprintf(js, ",\n  \"btrfs_check\": {\"every\": %" PRIu64 ", \"states\": %" PRIu64 ", \"images\": %" PRIu64 "}",
			h->btrfs_every, sum->btrfs_states, sum->btrfs_images);
	if (!strcmp(h->workload, "faults"))
		fprintf(js, ",\n  \"faults\": {\"states_with_a_fault\": %" PRIu64 ", \"commands_failed\": %" PRIu64 ", \"zones_failed\": %" PRIu64 ", \"errors_reported\": %" PRIu64 ", \"degraded\": %" PRIu64 "}",
			sum->nr_faulted, sum->nr_injected, sum->nr_zone_fails,
			sum->nr_errors, sum->nr_degraded);
	if (!strcmp(h->workload, "replace"))
		fprintf(js, ",\n  \"replace\": {\"on_target\": %" PRIu64 ", \"on_source\": %" PRIu64 "}",
			sum->nr_on_target, sum->tried - sum->nr_on_target);
	fprintf(js, ",\n  \"seconds\": %.3f,\n  \"states_per_minute\": %.0f\n}\n",
		sum->seconds, sum->seconds > 0 ? sum->tried * 60.0 / sum->seconds : 0.0);
}

int zcrash_run(const char *scenario, const struct zcrash_opts *opts,
	       struct zcrash_summary *sum)
{
	struct zcrash_opts o0 = { 0 };
	const struct zcrash_opts *o = opts ? opts : &o0;
	const char *ops = o->ops;
	struct camp *c = calloc(1, sizeof(*c));
	struct repro rp;
	struct cutlist cl = { 0 };
	struct tally x = { .o = o, .sum = sum, .first_viol = true };
	struct zcrash_btrfs *bc = NULL;
	struct zcrash_head h;
	char err[600] = "", name[120], *dir = NULL;
	/* uncut-recovery states of the campaign */
	uint64_t nr_base = 0;
	/* the replay of the last point, held for its next states; keys
	 * name a point of a workload in a tree-log mode */
	struct zcrash_held *held = NULL;
	uint64_t next_key = 0, key0;
	uint8_t *tmp = NULL, *buf = NULL;
	uint64_t wi, nwl, w0 = 0, i, buf_len;
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
			fprintf(stderr, "zcow crash: bad repro line '%s' ([SCENARIO] [ops=FILE] [quick] w=N [treelog=on|off] cut=POINT loss=POLICY seed=N [cut2=persist=N] [btrfs-check])\n",
				o->repro);
			free(c);
			return -EINVAL;
		}
		scenario = rp.scenario[0] ? rp.scenario : NULL;
		ops = rp.ops[0] ? rp.ops : NULL;
	}
	ret = zcrash_load_camp(c, scenario, ops, o->repro ? rp.quick : o->quick, err, sizeof(err));
	if (!ret && o->treelog && zcrash_parse_treelog(o->treelog, &c->treelog)) {
		snprintf(err, sizeof(err), "treelog '%s': on, off or both", o->treelog);
		ret = -EINVAL;
	}
	if (!ret && o->sample && !o->repro) {
		snprintf(c->points[0], sizeof(c->points[0]),
			 "random:count=%" PRIu64, o->sample);
		snprintf(c->points[1], sizeof(c->points[1]), "end");
		c->nr_points = 2;
	}
	if (!ret && o->replay_cuts && zcrash_parse_rc(o->replay_cuts, &c->replay_cuts)) {
		snprintf(err, sizeof(err), "replay cuts '%s': off, log or every", o->replay_cuts);
		ret = -EINVAL;
	}
	if (!ret && o->repro && (o->ops || o->sample)) {
		snprintf(err, sizeof(err), "--repro: not with %s",
			 o->ops ? "--ops (the line names its ops file)" :
			 "--sample (a repro line is one state)");
		ret = -EINVAL;
	}
	if (!ret && o->shard_n && (o->repro || o->max_cases)) {
		snprintf(err, sizeof(err), "--shard: not with %s",
			 o->repro ? "--repro (a repro line is one state)" :
			 "--max (it stops the whole campaign after N states)");
		ret = -EINVAL;
	}
	if (!ret && o->shard_n > 1 && o->btrfs_check > 1) {
		snprintf(err, sizeof(err), "--shard: --btrfs-check %" PRIu64 " picks states by their place in the whole campaign: with shards only --btrfs-check 1",
			 o->btrfs_check);
		ret = -EINVAL;
	}
	if (!ret && (o->repro ? rp.btrfs_check : o->btrfs_check > 0))
		ret = zcrash_btrfs_open(c, &bc, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "zcow crash: %s\n", err);
		zcrash_camp_free(c);
		return ret;
	}
	if (o->repro)	/* the line's mode, else the scenario's first */
		c->treelog = rp.treelog ? rp.treelog :
			     c->treelog & ZCRASH_TREELOG_OFF ? ZCRASH_TREELOG_OFF :
			     ZCRASH_TREELOG_ON;
	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", c->name);
	h.quick = c->quick;
	h.treelog = c->treelog;
	h.replay_cuts = c->replay_cuts;
	h.nr_loss = o->repro ? 1 : c->nr_loss;
	h.nr_seeds = o->repro ? 1 : c->nr_seeds;
	snprintf(h.workload, sizeof(h.workload), "%s", c->workload);
	h.btrfs_every = bc ? o->btrfs_check ? o->btrfs_check : 1 : 0;
	h.shard_i = o->shard_i;
	h.shard_n = o->shard_n;
	nwl = zcrash_nr_workloads(c);
	if (o->repro && strcmp(c->workload, "faults") && rp.w >= nwl) {
		/* (the faults sweep's trials are counted below) */
		fprintf(stderr, "zcow crash: w=%" PRIu64 ": the campaign has %" PRIu64 " workload%s\n",
			rp.w, nwl, nwl == 1 ? "" : "s");
		ret = -EINVAL;
		goto out;
	}
	if (o->repro) {
		w0 = rp.w;
		nwl = rp.w + 1;
	}
	x.nwl = nwl;
	if (!o->no_results && !o->repro) {
		const char *parent = o->results ? o->results : c->results;

		snprintf(name, sizeof(name), "%s%s", c->name,
			 c->quick ? "-quick" : "");
		if (o->shard_n)
			snprintf(name + strlen(name), sizeof(name) - strlen(name),
				 "-shard-%" PRIu64 "-of-%" PRIu64, o->shard_i,
				 o->shard_n);
		ret = zres_make_dir(parent, name, &dir);
		if (ret) {
			fprintf(stderr, "zcow crash: cannot create the results folder under '%s': %s\n",
				parent, strerror(-ret));
			zcrash_camp_free(c);
			return ret;
		}
		snprintf(sum->dir, sizeof(sum->dir), "%.500s", dir);
		/* the scenario and the ops file it replays */
		ret = c->path[0] ? zres_copy_config(dir, c->path) : 0;
		if (!ret && !strcmp(c->workload, "ops"))
			ret = zres_copy_config(dir, c->ops_file);
		if (ret) {
			fprintf(stderr, "zcow crash: %s: copying %s: %s\n",
				dir, c->path[0] ? c->path : c->ops_file,
				strerror(-ret));
			goto out;
		}
		x.csv = zres_open(dir, "crash.csv");
		if (x.csv)
			x.js = zres_open(dir, "crash.json");
		if (!x.csv || !x.js) {
			ret = -errno;
			fprintf(stderr, "zcow crash: %s/%s: %s\n", dir,
				x.csv ? "crash.json" : "crash.csv",
				strerror(-ret));
			goto out;
		}
		fprintf(x.csv, "workload,treelog,point,recovery_cut,loss,seed,result,oracles,generation,acked_generation,message\n");
		json_head(x.js, c, o);
	}
	held = zcrash_held_new();
	if (!held) {
		ret = oom();
		goto out;
	}
	/* treelog=off first: its exact oracles are today's baseline */
	for (mi = 0; mi < 2; mi++) {
		struct zcow_mount_opts mo = {
			.clock = crash_clock,
			.no_treelog = mi == 0,
			.no_zone_append = !c->zone_append,
			.reclaim = c->reclaim,
			.reclaim_threshold = c->reclaim_threshold,
			.reclaim_high = c->reclaim_high,
			.hotcold = c->hotcold,
			.mutation = o->mutation,
		};

		if (!(c->treelog & (mi ? ZCRASH_TREELOG_ON : ZCRASH_TREELOG_OFF)))
			continue;
		if (!strcmp(c->workload, "faults")) {
			/* the fault-free run sizes the sweep */
			struct wl w;
			struct rec r;

			c->nr_ft = 0;
			ret = make_wl(c, 0, &w, &tmp);
			if (ret)
				goto out;
			ret = zcrash_record(c, &w, &mo, &r, tmp, err, sizeof(err));
			zcrash_wl_free(&w);
			if (ret) {
				fprintf(stderr, "zcow crash: %s: treelog=%s fault-free run: %s\n",
					c->path, mi ? "on" : "off", err);
				zcrash_rec_free(&r);
				goto out;
			}
			ret = zcrash_build_trials(c, &r);
			zcrash_rec_free(&r);
			if (ret) {
				ret = oom();
				goto out;
			}
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

			ret = make_wl(c, wi, &w, &tmp);
			if (ret)
				goto out;
			ret = zcrash_record(c, &w, &mo, &r, tmp, err, sizeof(err));
			if (ret) {
				fprintf(stderr, "zcow crash: %s: treelog=%s workload %" PRIu64 " (%s): %s\n",
					c->path, mi ? "on" : "off", wi, w.desc, err);
				zcrash_rec_free(&r);
				zcrash_wl_free(&w);
				goto out;
			}
			buf_len = read_buf_len(&r);
			free(buf);
			buf = malloc(buf_len);
			if (!buf) {
				zcrash_rec_free(&r);
				zcrash_wl_free(&w);
				ret = oom();
				goto out;
			}
			cl.nr = 0;
			if (o->repro) {
				struct cutpt pt;

				if (point_from_name(rp.cut, &pt)) {
					fprintf(stderr, "zcow crash: bad cut '%s'\n", rp.cut);
					ret = -EINVAL;
					zcrash_rec_free(&r);
					zcrash_wl_free(&w);
					goto out;
				}
				cl_add(&cl, pt.cut.kind, pt.cut.cls, pt.cut.ordinal,
				       pt.cut.when, rp.cut);
				if (!cl.err)
					cl.p[0].is_end = pt.is_end;
			} else {
				unsigned int pi;

				for (pi = 0; pi < c->nr_points; pi++) {
					ret = expand(c->points[pi], &r, c->seed, &cl, err, sizeof(err));
					if (ret) {
						fprintf(stderr, "zcow crash: %s: %s\n", c->path, err);
						zcrash_rec_free(&r);
						zcrash_wl_free(&w);
						goto out;
					}
				}
			}
			if (cl.err) {
				zcrash_rec_free(&r);
				zcrash_wl_free(&w);
				ret = oom();
				goto out;
			}
			sum->nr_workloads++;
			sum->nr_points += cl.nr;
			count_ops(c, o, &w, wi, mi, &r, sum);
			key0 = next_key;
			next_key += cl.nr;
			for (i = 0; i < cl.nr; i++)
				for (li = 0; li < c->nr_loss; li++)
					for (si = 0; si < c->nr_seeds; si++) {
						int loss = o->repro ? rp.loss : c->loss[li];
						uint64_t seed = o->repro ? rp.seed : c->seeds[si];
						uint64_t log_root = 0, n, nr_rc;
						struct verdict v;

						if (o->repro && (li || si))
							continue;
						/* --shard I/N: the state and its
						 * recovery cuts when its place is
						 * I-1 modulo N (round robin: the
						 * costly stretches of a campaign
						 * spread over every shard) */
						if (o->shard_n &&
						    nr_base++ % o->shard_n != o->shard_i - 1)
							continue;
						if (o->max_cases && sum->tried >= o->max_cases)
							goto done;
						ret = zcrash_run_case(held, key0 + i, c, &w, &r, &cl.p[i], loss, seed, &mo,
							       0, 0, pick_btrfs(o, bc, sum), tmp,
							       buf, buf_len, &v, &log_root);
						if (ret)
							goto setup_failed;
						if (o->repro && rp.cut2) {
							uint64_t g = v.gen;

							ret = zcrash_run_case(held, key0 + i, c, &w, &r, &cl.p[i], loss, seed, &mo,
								       rp.cut2, g, bc, tmp, buf,
								       buf_len, &v, &log_root);
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
							ret = zcrash_run_case(held, key0 + i, c, &w, &r, &cl.p[i], loss, seed,
								       &mo, n, v.gen,
								       pick_btrfs(o, bc, sum), tmp,
								       buf, buf_len, &v2, &log_root);
							if (ret)
								goto setup_failed;
							tally_state(&x, &w, wi, mi, &cl.p[i], n, loss,
								    seed, &v2);
						}
					}
			zcrash_rec_free(&r);
			zcrash_wl_free(&w);
			continue;
setup_failed:
			if (ret == -ENOMEM)
				oom();
			else
				fprintf(stderr, "zcow crash: case setup failed: %s\n",
					strerror(-ret));
			zcrash_rec_free(&r);
			zcrash_wl_free(&w);
			goto out;
done:
			zcrash_rec_free(&r);
			zcrash_wl_free(&w);
			goto finished;
		}
	}
finished:
	ret = 0;
	if (x.tty)
		fprintf(stderr, "\r\033[K");
	sum->seconds = now_s() - t0;
	if (!o->is_quiet)
		zcrash_print_table(&h, sum, dir);
	if (x.js) {
		zcrash_json_tail(x.js, &h, sum, !x.first_viol);
		/* shard.json last: its presence says the shard finished */
		if (o->shard_n) {
			fclose(x.js);
			x.js = NULL;
			ret = write_shard(dir, c, o, &h, sum, nr_base);
			if (ret)
				goto out;
		}
	}
	ret = sum->violations || sum->nr_ops_undeclared ? 1 : 0;
out:
	zcrash_held_free(held);
	if (x.csv)
		fclose(x.csv);
	if (x.js)
		fclose(x.js);
	free(cl.p);
	free(tmp);
	free(buf);
	zcrash_btrfs_close(bc);
	zcrash_camp_free(c);
	free(dir);
	return ret;
}
