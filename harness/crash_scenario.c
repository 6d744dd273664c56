// SPDX-License-Identifier: MIT
/*
 * zcrash scenarios (harness/crash_int.h, docs/crash.md).
 *
 * A campaign's scenario is read as `zcow run` reads its scenarios: the
 * fio reader (harness/fio.h: sections, comments, includes, an included
 * fio job resolved and checked by fio's rules), the [zcow] keys by
 * zrun_zcow_apply() (harness/run.h: the same keys, values and messages),
 * and the [crash] keys from the table crash_keys[] below.  An unknown key
 * anywhere is refused with "FILE:LINE: option 'KEY': reason".
 *
 * zcow crash reads two [zcow] keys its own way: treelog= also takes
 * "both" (the campaign runs once per mode), and crash= takes campaign
 * crash points (the [crash] points= grammar, appended to points=).  The
 * keys of zcow run's timing and output (profile, target, repetitions,
 * trace, interval, prefill, commit_model, snapshot_interval,
 * snapshot_max) are refused: a campaign has no use for them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_int.h"
#include "devlist.h"
#include "fio.h"
#include "run.h"

const char *const rc_names[] = { "off", "log", "every" };

int zcrash_parse_treelog(const char *v, unsigned int *mask_ret)
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

int zcrash_parse_rc(const char *v, int *rc_ret)
{
	int i;

	for (i = 0; i <= RC_EVERY; i++)
		if (!strcmp(v, rc_names[i])) {
			*rc_ret = i;
			return 0;
		}
	return -EINVAL;
}

/* ---- the scenario ------------------------------------------------ */

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

/* may_fail=: none, or a list of enospc, namespace, unsupported, any. */
static int parse_may_fail(const char *v, struct camp *c)
{
	char tmp[128], *t, *save = NULL;
	unsigned int m = 0;

	if (strlen(v) >= sizeof(tmp))
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), "%s", v);
	for (t = strtok_r(tmp, " ,\t", &save); t;
	     t = strtok_r(NULL, " ,\t", &save)) {
		if (!strcmp(t, "enospc"))
			m |= ZCRASH_MAY_ENOSPC;
		else if (!strcmp(t, "namespace"))
			m |= ZCRASH_MAY_NAMESPACE;
		else if (!strcmp(t, "any"))
			m |= ZCRASH_MAY_ANY;
		else if (!strcmp(t, "unsupported"))
			m |= ZCRASH_MAY_UNSUPPORTED;
		else if (strcmp(t, "none"))
			return -EINVAL;
	}
	c->may_fail = m;
	c->has_may_fail = true;
	return 0;
}

/* The campaign workloads (docs/crash.md); anything else is refused. */
static int parse_workload(const char *v, char *buf, size_t len)
{
	static const char *const names[] = { "fio", "ace", "meta", "sblog",
					     "reset", "faults", "reclaim",
					     "replace", "snapshot", "ops" };
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i])) {
			snprintf(buf, len, "%s", v);
			return 0;
		}
	return -EINVAL;
}

/* The [crash] keys (docs/crash.md): the field each sets and its grammar. */
enum ckey_type {
	CK_WORKLOAD,		/* parse_workload() */
	CK_POINTS,		/* crash points, appended (add_list()) */
	CK_LOSS,		/* parse_loss() */
	CK_SEEDS,		/* parse_seeds() */
	CK_U64,			/* a size or count */
	CK_POS,			/* a count > 0 */
	CK_RC,			/* off, log, every */
	CK_FAIL,		/* fail= WHATs */
	CK_RATE,		/* fail_rate= rates */
	CK_CONDS,		/* zone_fail= conditions */
	CK_FILE,		/* a file name (char[512]) */
	CK_MAYFAIL,		/* may_fail= kinds */
};

struct ckey {
	const char *name;
	enum ckey_type type;
	size_t off;		/* the field in struct camp */
	size_t nr_off;		/* lists: its count */
};

#define CK(n, t, f)	{ n, t, offsetof(struct camp, f), 0 }
#define CKL(n, t, f, nr) \
	{ n, t, offsetof(struct camp, f), offsetof(struct camp, nr) }

static const struct ckey crash_keys[] = {
	CK("workload", CK_WORKLOAD, workload),
	CKL("points", CK_POINTS, points, nr_points),
	CKL("quick_points", CK_POINTS, qpoints, nr_qpoints),
	CKL("loss", CK_LOSS, loss, nr_loss),
	CKL("quick_loss", CK_LOSS, qloss, nr_qloss),
	CKL("seeds", CK_SEEDS, seeds, nr_seeds),
	CKL("quick_seeds", CK_SEEDS, qseeds, nr_qseeds),
	CK("ops", CK_U64, ops),
	CK("quick_ops", CK_U64, qops),
	CK("sync_every", CK_U64, sync_every),
	CK("size", CK_U64, size),
	CK("hot_writes", CK_U64, hot_writes),
	CK("may_fail", CK_MAYFAIL, may_fail),
	CK("ace_len", CK_U64, ace_len),
	CK("quick_ace_len", CK_U64, qace_len),
	CK("quick_workloads", CK_U64, qworkloads),
	CK("replay_cuts", CK_RC, replay_cuts),
	CK("quick_replay_cuts", CK_RC, qreplay_cuts),
	CKL("fail", CK_FAIL, fail, nr_fail),
	CKL("fail_rate", CK_RATE, rates, nr_rates),
	CK("fail_step", CK_POS, fail_step),
	CK("quick_fail_step", CK_POS, qfail_step),
	CKL("rate_seeds", CK_SEEDS, rate_seeds, nr_rate_seeds),
	CKL("quick_rate_seeds", CK_SEEDS, qrate_seeds, nr_qrate_seeds),
	CK("zone_fail", CK_CONDS, zone_conds),
	CK("zone_points", CK_POS, zone_points),
	CK("quick_zone_points", CK_POS, qzone_points),
	CK("zone_step", CK_POS, zone_step),
	CK("quick_zone_step", CK_POS, qzone_step),
	CK("ops_file", CK_FILE, ops_file),
};

/* [zcow] crash=: campaign points, as [crash] points=. */
static const struct ckey zcow_crash_key =
	CKL("crash", CK_POINTS, points, nr_points);

/* zcow run's keys a campaign has no use for: refused. */
static const char *const run_only_keys[] = {
	"profile", "target", "repetitions", "trace", "interval", "prefill",
	"data_zones", "commit_bytes", "layout",
	"commit_model", "snapshot_interval", "snapshot_max",
	"cleaner",	/* a campaign's writer cleans: one order of events */
};

static int set_key(struct camp *c, const struct ckey *k, const char *v)
{
	void *f = (char *)c + k->off, *nr = (char *)c + k->nr_off;

	switch (k->type) {
	case CK_WORKLOAD:
		return parse_workload(v, f, sizeof(c->workload));
	case CK_POINTS:
		return add_list(v, f, nr);
	case CK_LOSS:
		return parse_loss(v, f, nr);
	case CK_SEEDS:
		return parse_seeds(v, f, nr);
	case CK_U64:
		return parse_u64(v, f);
	case CK_POS:
		return parse_pos(v, f);
	case CK_RC:
		return zcrash_parse_rc(v, f);
	case CK_FAIL:
		return parse_fail_list(v, f, nr, false);
	case CK_RATE:
		return parse_fail_list(v, f, nr, true);
	case CK_CONDS:
		return parse_conds(v, c);
	case CK_FILE:
		if (!*v || strlen(v) >= sizeof(c->ops_file))
			return -EINVAL;
		snprintf(f, sizeof(c->ops_file), "%s", v);
		return 0;
	case CK_MAYFAIL:
		return parse_may_fail(v, c);
	}
	return -EINVAL;
}

static int key_err(char *err, size_t elen, const struct zfio_kv *kv,
		   const char *why)
{
	snprintf(err, elen, "%s:%d: option '%s': %s", kv->file, kv->line,
		 kv->key, why);
	return -EINVAL;
}

static int apply_crash_key(struct camp *c, const struct zfio_kv *kv,
			   char *err, size_t elen)
{
	size_t i;

	for (i = 0; i < sizeof(crash_keys) / sizeof(crash_keys[0]); i++)
		if (!strcmp(kv->key, crash_keys[i].name))
			return set_key(c, &crash_keys[i], kv->val) ?
			       key_err(err, elen, kv, "bad value") : 0;
	return key_err(err, elen, kv, "unknown crash option");
}

static int apply_zcow_key(struct camp *c, struct zrun_settings *set,
			  const struct zfio_kv *kv, char *err, size_t elen)
{
	size_t i;
	int ret;

	if (!strcmp(kv->key, "treelog") && !strcmp(kv->val, "both")) {
		c->treelog = ZCRASH_TREELOG_BOTH;
		return 0;
	}
	if (!strcmp(kv->key, "crash"))
		return set_key(c, &zcow_crash_key, kv->val) ?
		       key_err(err, elen, kv, "bad value") : 0;
	for (i = 0; i < sizeof(run_only_keys) / sizeof(run_only_keys[0]); i++)
		if (!strcmp(kv->key, run_only_keys[i]))
			return key_err(err, elen, kv,
				       "a zcow run setting, not used by "
				       "zcow crash");
	ret = zrun_zcow_apply(set, kv, err, elen);
	if (!ret && !strcmp(kv->key, "treelog"))
		c->treelog = set->treelog ? ZCRASH_TREELOG_ON :
			     ZCRASH_TREELOG_OFF;
	return ret;
}

/* workload=fio: the one job of the included fio file. */
static int take_job(struct camp *c, const struct zfio_spec *spec, char *err,
		    size_t elen)
{
	const struct zfio_job *j = &spec->jobs[0];

	if (spec->nr_jobs > 1) {
		snprintf(err, elen, "%s:%d: job '%s': zcow crash replays one "
			 "fio job (the first is '%s')", spec->jobs[1].file,
			 spec->jobs[1].line, spec->jobs[1].name, j->name);
		return -EINVAL;
	}
	if (j->rw != ZFIO_WRITE && j->rw != ZFIO_RANDWRITE) {
		snprintf(err, elen, "%s:%d: job '%s': rw=%s: zcow crash "
			 "replays rw=write or randwrite", j->file, j->line,
			 j->name, zfio_rw_name(j->rw));
		return -EINVAL;
	}
	if (j->size.is_set && j->size.unit != ZFIO_BYTES) {
		char where[ZFIO_PATH_LEN + 2 * ZFIO_NAME_LEN];

		zfio_opt_where(j, ZFIO_OPT_SIZE, where, sizeof(where));
		snprintf(err, elen, "%s: zcow crash takes a size in bytes",
			 where);
		return -EINVAL;
	}
	if (j->bs_max != j->bs || j->bs_opt != ZFIO_OPT_BS) {
		char where[ZFIO_PATH_LEN + 2 * ZFIO_NAME_LEN];

		zfio_opt_where(j, j->bs_opt, where, sizeof(where));
		snprintf(err, elen, "%s: zcow crash replays one block size",
			 where);
		return -EINVAL;
	}
	snprintf(c->rw, sizeof(c->rw), "%s", zfio_rw_name(j->rw));
	c->bs = j->bs;
	c->size = j->size.is_set ? j->size.val : 0;
	c->nrfiles = j->nrfiles;
	c->fsync_every = j->fsync;
	return 0;
}

/* Read @path: its fio job, then [zcow], then [crash]. */
static int read_scenario(struct camp *c, const char *path, char *err,
			 size_t elen)
{
	struct zrun_settings set;
	struct zfio_spec *spec = NULL;
	unsigned int i;
	int ret;

	zrun_settings_default(&set);
	/* a campaign mounts as zcow_mount() does by default: Zone Append */
	set.zone_append = true;
	ret = zfio_parse_file(path, NULL, 0, &spec, err, elen);
	if (ret)
		return ret;
	if (spec->nr_jobs)
		ret = take_job(c, spec, err, elen);
	for (i = 0; i < spec->nr_zcow && !ret; i++)
		ret = apply_zcow_key(c, &set, &spec->zcow[i], err, elen);
	for (i = 0; i < spec->nr_crash && !ret; i++)
		ret = apply_crash_key(c, &spec->crash[i], err, elen);
	if (!ret)
		ret = zrun_settings_check(&set, err, elen);
	zfio_free(spec);
	if (ret)
		return ret;
	if (set.device[0])
		snprintf(c->spec, sizeof(c->spec), "%s", set.device);
	c->seed = set.seed;
	c->nodesize = set.nodesize;
	snprintf(c->results, sizeof(c->results), "%s", set.results);
	if (set.name[0])
		snprintf(c->name, sizeof(c->name), "%s", set.name);
	c->zone_append = set.zone_append;
	c->reclaim = set.reclaim;
	c->reclaim_threshold = set.reclaim_threshold;
	c->reclaim_high = set.reclaim_high;
	c->hotcold = set.hotcold;
	return 0;
}

/* The campaign of `zcow crash --ops FILE` without a scenario: every
 * persist point and the end x every loss policy, both tree-log modes,
 * the recovery cut again where a log is (docs/crash.md). */
static void ops_defaults(struct camp *c)
{
	snprintf(c->workload, sizeof(c->workload), "ops");
	c->treelog = ZCRASH_TREELOG_BOTH;
	c->replay_cuts = RC_LOG;
	snprintf(c->points[0], 64, "persist=every");
	snprintf(c->points[1], 64, "end");
	c->nr_points = 2;
	parse_loss("all", c->loss, &c->nr_loss);
	snprintf(c->qpoints[0], 64, "every:step=4");
	snprintf(c->qpoints[1], 64, "end");
	c->nr_qpoints = 2;
	parse_loss("drop,prefix", c->qloss, &c->nr_qloss);
}

/* workload=ops: the file (ops_file= resolved against the scenario's
 * folder, --ops as given), read and walked (crash_ops.c). */
static int load_ops(struct camp *c, const char *path, const char *ops,
		    char *err, size_t elen)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	char f[512];

	if (ops) {
		snprintf(c->workload, sizeof(c->workload), "ops");
		snprintf(c->ops_file, sizeof(c->ops_file), "%s", ops);
		snprintf(c->ops_arg, sizeof(c->ops_arg), "%s", ops);
	} else if (c->ops_file[0] && c->ops_file[0] != '/' && slash) {
		if (snprintf(f, sizeof(f), "%.*s/%s", (int)(slash - path),
			     path, c->ops_file) >= (int)sizeof(f)) {
			snprintf(err, elen, "%s: ops_file=%s: path too long",
				 path, c->ops_file);
			return -EINVAL;
		}
		memcpy(c->ops_file, f, sizeof(f));
	}
	if (strcmp(c->workload, "ops")) {
		if (!c->ops_file[0])
			return 0;
		snprintf(err, elen, "%s: ops_file needs workload=ops", path);
		return -EINVAL;
	}
	if (!c->ops_file[0]) {
		snprintf(err, elen, "%s: workload=ops needs ops_file=FILE (or --ops FILE)",
			 path);
		return -EINVAL;
	}
	return zcrash_ops_load(c, err, elen);
}

void zcrash_camp_free(struct camp *c)
{
	if (!c)
		return;
	free(c->ft);
	free(c->ops_wl.ops);
	zops_free(c->ops_parsed);
	free(c);
}

int zcrash_load_camp(struct camp *c, const char *path, const char *ops,
		     bool quick, char *err, size_t elen)
{
	const char *name = path ? path : ops;
	const char *b = strrchr(name, '/');
	int ret;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path ? path : "");
	snprintf(c->name, sizeof(c->name), "%.*s", (int)strcspn(b ? b + 1 : name, "."),
		 b ? b + 1 : name);
	snprintf(c->rw, sizeof(c->rw), "write");
	snprintf(c->workload, sizeof(c->workload), "fio");
	snprintf(c->spec, sizeof(c->spec), "sim:zones=32,zone_size=4M,zone_cap=1M");
	snprintf(c->results, sizeof(c->results), "results");
	c->seed = 1;
	c->quick = quick;
	c->treelog = ZCRASH_TREELOG_ON;	/* the file system's default */
	c->replay_cuts = c->qreplay_cuts = -1;
	if (!path) {
		ops_defaults(c);
		ret = 0;
	} else {
		ret = read_scenario(c, path, err, elen);
	}
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
	/* power cuts, crash points and loss policies are one device's */
	if (zdevs_is_list(c->spec)) {
		snprintf(err, elen, "%s: device= is a list of devices: zcow crash runs on one device", path);
		return -EINVAL;
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
	if (!c->has_may_fail)
		c->may_fail = !strcmp(c->workload, "faults") ? ZCRASH_MAY_ANY :
			      !strcmp(c->workload, "ops") ?
					ZCRASH_MAY_NAMESPACE |
						ZCRASH_MAY_UNSUPPORTED :
					ZCRASH_MAY_NAMESPACE;
	if (c->hot_writes && strcmp(c->workload, "reclaim")) {
		snprintf(err, elen, "%s: hot_writes needs workload=reclaim", path);
		return -EINVAL;
	}
	if (c->hot_writes > 100) {
		snprintf(err, elen, "%s: hot_writes=%" PRIu64 ": a percentage (0..100)",
			 path, c->hot_writes);
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
	return load_ops(c, path, ops, err, elen);
}
