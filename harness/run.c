// SPDX-License-Identifier: MIT
/*
 * zrun: settings, the discrete-event scheduler and the results folder
 * (see run.h, configs/README.md, docs/timing.md).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devlist.h"
#include "fio_log.h"
#include "grow.h"
#include "prng.h"
#include "results.h"
#include "run.h"
#include "run_ctl.h"
#include "zdev.h"
#include "zsim.h"
#include "ztime.h"

#define NS	1000000000ull
#define PROGRESS_AFTER_NS	(3 * NS)	/* wall clock */

/* Device a profile runs on when the scenario names none (scaled down). */
static const struct {
	const char *profile, *device;
} default_devices[] = {
	{ "zn540", "sim:zones=256,zone_size=64M,zone_cap=34M,max_open=14,"
		   "max_active=14,data=off" },
	{ "smr", "sim:zones=256,zone_size=256M,data=off" },
	{ "instant", "sim:zones=64,zone_size=64M,data=off" },
};

void zrun_settings_default(struct zrun_settings *set)
{
	memset(set, 0, sizeof(*set));
	snprintf(set->profile, sizeof(set->profile), "zn540");
	snprintf(set->target, sizeof(set->target), "auto");
	set->nodesize = 16384;
	set->treelog = true;
	set->repetitions = 1;
	set->seed = 1;
	snprintf(set->results, sizeof(set->results), "results");
	set->interval_ns = 10000000ull;
	set->replace_devid = 1;
}

static const char *const zcow_keys[] = {
	"device", "profile", "target", "zone_append", "nodesize", "treelog",
	"repetitions", "seed", "crash", "results", "trace", "interval",
	"prefill", "scenario", "reclaim", "reclaim_threshold", "reclaim_high",
	"hotcold", "cleaner", "replace_target", "replace_devid", "replace_at",
	"data_zones", "commit_bytes", "layout", "read_only",
	"commit_model", "snapshot_interval", "snapshot_max",
};

/* The layout presets (enum zrun_layout, run.h): the values each sets
 * for the keys the scenario did not give. */
static const struct {
	const char *name;
	uint32_t data_zones;
	int reclaim;
	int hotcold;
} layouts[ZRUN_NR_LAYOUTS] = {
	[ZRUN_LAYOUT_ZCOW] = { "zcow", 0, ZCOW_RECLAIM_DEFAULT,
			       ZCOW_HOTCOLD_OFF },
	[ZRUN_LAYOUT_BTRFS_5_12] = { "btrfs-5.12", 1, ZCOW_RECLAIM_OFF,
				     ZCOW_HOTCOLD_OFF },
};

const char *zrun_layout_name(int layout)
{
	return layout >= 0 && layout < ZRUN_NR_LAYOUTS ?
	       layouts[layout].name : "?";
}

/* layout=@l: every preset key the scenario did not give explicitly. */
static void apply_layout(struct zrun_settings *set, int l)
{
	set->layout = l;
	if (!(set->explicit_keys & ZRUN_KEY_DATA_ZONES))
		set->data_zones = layouts[l].data_zones;
	if (!(set->explicit_keys & ZRUN_KEY_RECLAIM))
		set->reclaim = layouts[l].reclaim;
	if (!(set->explicit_keys & ZRUN_KEY_HOTCOLD))
		set->hotcold = layouts[l].hotcold;
}

bool zrun_is_zcow_key(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(zcow_keys) / sizeof(zcow_keys[0]); i++)
		if (!strcmp(key, zcow_keys[i]))
			return true;
	return false;
}

static int bad(char *err, size_t len, const struct zfio_kv *kv,
	       const char *why)
{
	snprintf(err, len, "%s:%d: option '%s': %s", kv->file, kv->line,
		 kv->key, why);
	return -EINVAL;
}

int zrun_settings_apply(struct zrun_settings *set, const struct zfio_kv *kv,
			char *err, size_t len)
{
	const char *k = kv->key, *v = kv->val;
	struct zfio_size sz;
	bool b;

	if (!zrun_is_zcow_key(k))
		return -ENOENT;
	if ((!kv->has_val || !v[0]) && strcmp(k, "zone_append") &&
	    strcmp(k, "treelog") && strcmp(k, "trace") &&
	    strcmp(k, "prefill") && strcmp(k, "hotcold") &&
	    strcmp(k, "read_only"))
		return bad(err, len, kv, "needs a value");
	if (!strcmp(k, "device")) {
		if (strlen(v) >= sizeof(set->device))
			return bad(err, len, kv, "too long");
		snprintf(set->device, sizeof(set->device), "%s", v);
	} else if (!strcmp(k, "profile")) {
		struct ztime_profile p;

		if (ztime_profile_get(v, &p))
			return bad(err, len, kv,
				   "unknown profile (zn540, smr, instant)");
		snprintf(set->profile, sizeof(set->profile), "%.15s", v);
	} else if (!strcmp(k, "target")) {
		if (strcmp(v, "auto") && strcmp(v, "raw") && strcmp(v, "fs"))
			return bad(err, len, kv, "not auto, raw or fs");
		snprintf(set->target, sizeof(set->target), "%.7s", v);
	} else if (!strcmp(k, "hotcold")) {
		int mode = ZCOW_HOTCOLD_FREQUENCY;

		if (kv->has_val && !zfio_parse_bool(v, &b))
			mode = b ? ZCOW_HOTCOLD_FREQUENCY : ZCOW_HOTCOLD_OFF;
		else if (kv->has_val && (mode = zcow_hotcold_parse(v)) < 0)
			return bad(err, len, kv,
				   "not on, off, frequency or age");
		set->hotcold = mode;
		set->explicit_keys |= ZRUN_KEY_HOTCOLD;
		set->hotcold_at = *kv;
	} else if (!strcmp(k, "zone_append") || !strcmp(k, "treelog") ||
		   !strcmp(k, "trace") || !strcmp(k, "prefill")) {
		if (!kv->has_val)
			b = true;
		else if (zfio_parse_bool(v, &b))
			return bad(err, len, kv, "not a boolean (on/off)");
		if (k[0] == 'z')
			set->zone_append = b;
		else if (!strcmp(k, "treelog"))
			set->treelog = b;
		else if (!strcmp(k, "trace"))
			set->trace = b;
		else
			set->prefill = b;
	} else if (!strcmp(k, "nodesize")) {
		if (zfio_parse_size(v, 1024, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 4096 || sz.val > 65536 || (sz.val & (sz.val - 1)))
			return bad(err, len, kv,
				   "not a power of two in 4K..64K");
		set->nodesize = (uint32_t)sz.val;
	} else if (!strcmp(k, "repetitions")) {
		if (zfio_parse_size(v, 1024, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 1 || sz.val > 1000)
			return bad(err, len, kv, "not a number in 1..1000");
		set->repetitions = (uint32_t)sz.val;
	} else if (!strcmp(k, "seed")) {
		char *end;

		errno = 0;
		set->seed = strtoull(v, &end, 0);
		if (errno || *end || !isdigit((unsigned char)v[0]))
			return bad(err, len, kv, "not a number in "
				   "0..18446744073709551615");
	} else if (!strcmp(k, "crash")) {
		/* zcow run never cuts power: a crash point only a campaign
		 * (zcow crash, a [crash] section) would honour is refused,
		 * not recorded and ignored. */
		return bad(err, len, kv, "cut only by zcow crash (a [crash] "
			   "section, docs/crash.md), never by zcow run");
	} else if (!strcmp(k, "reclaim")) {
		int p = zcow_reclaim_parse(v);

		if (p < 0) {
			char names[128], why[160];

			zcow_reclaim_names(names, sizeof(names));
			snprintf(why, sizeof(why), "not %s", names);
			return bad(err, len, kv, why);
		}
		set->reclaim = p;
		set->reclaim_at = *kv;
		set->explicit_keys |= ZRUN_KEY_RECLAIM;
	} else if (!strcmp(k, "cleaner")) {
		if (strcmp(v, "background") && strcmp(v, "writer"))
			return bad(err, len, kv, "not background or writer");
		set->cleaner_background = !strcmp(v, "background");
		set->mount_at = *kv;
	} else if (!strcmp(k, "reclaim_threshold")) {
		if (zfio_parse_size(v, 1000, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 51 || sz.val > 100)
			return bad(err, len, kv, "not a percentage in 51..100");
		set->reclaim_threshold = (uint32_t)sz.val;
		set->threshold_at = *kv;
	} else if (!strcmp(k, "reclaim_high")) {
		if (zfio_parse_size(v, 1000, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val <= ZCOW_RECLAIM_LOW_ZONES ||
		    sz.val > ZCOW_RECLAIM_MAX_HIGH)
			return bad(err, len, kv, "not a number of free zones "
				   "in 5..65535");
		set->reclaim_high = (uint32_t)sz.val;
		set->high_at = *kv;
	} else if (!strcmp(k, "data_zones")) {
		if (zfio_parse_size(v, 1000, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 1 || sz.val > ZCOW_MAX_DATA_ZONES)
			return bad(err, len, kv, "not a number of data block "
				   "groups in 1..16");
		set->data_zones = (uint32_t)sz.val;
		set->explicit_keys |= ZRUN_KEY_DATA_ZONES;
		set->mount_at = *kv;
	} else if (!strcmp(k, "commit_bytes")) {
		if (zfio_parse_size(v, 1024, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 4096 || sz.val > (1ull << 40))
			return bad(err, len, kv, "not a size in 4k..1t");
		set->commit_bytes = sz.val;
		set->mount_at = *kv;
	} else if (!strcmp(k, "layout")) {
		int l;

		for (l = 0; l < ZRUN_NR_LAYOUTS; l++)
			if (!strcmp(v, layouts[l].name))
				break;
		if (l == ZRUN_NR_LAYOUTS)
			return bad(err, len, kv, "not btrfs-5.12 or zcow");
		apply_layout(set, l);
		set->mount_at = *kv;
	} else if (!strcmp(k, "read_only")) {
		/* Each run makes its file system: a read-only mount could
		 * not lay out the files a read-only job reads. */
		return bad(err, len, kv, "refused: every run makes a new "
			   "file system and lays out the jobs' files (mkfs, "
			   "writes), which a read-only mount cannot do");
	} else if (!strcmp(k, "replace_target")) {
		if (strlen(v) >= sizeof(set->replace_target))
			return bad(err, len, kv, "too long");
		snprintf(set->replace_target, sizeof(set->replace_target),
			 "%s", v);
		set->replace_at = *kv;
	} else if (!strcmp(k, "replace_devid")) {
		if (zfio_parse_size(v, 1000, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 1 || sz.val > 16)
			return bad(err, len, kv, "not a devid in 1..16");
		set->replace_devid = sz.val;
	} else if (!strcmp(k, "replace_at")) {
		if (zfio_parse_time(v, &set->replace_at_ns))
			return bad(err, len, kv, "not a time (e.g. 2s, 500ms)");
	} else if (!strcmp(k, "snapshot_interval")) {
		if (zfio_parse_time(v, &set->snapshot_interval_ns) ||
		    !set->snapshot_interval_ns)
			return bad(err, len, kv, "not a time above 0 (e.g. "
				   "500ms, 2s)");
		set->snapshot_at = *kv;
	} else if (!strcmp(k, "snapshot_max")) {
		if (zfio_parse_size(v, 1000, &sz) || sz.unit != ZFIO_BYTES ||
		    sz.val < 1 || sz.val > 65535)
			return bad(err, len, kv, "not a number of snapshots "
				   "in 1..65535");
		set->snapshot_max = (uint32_t)sz.val;
		set->snapshot_max_at = *kv;
	} else if (!strcmp(k, "commit_model")) {
		if (!strcmp(v, "btrfs"))
			set->commit_model = ZRUN_COMMIT_BTRFS;
		else if (!strcmp(v, "global"))
			set->commit_model = ZRUN_COMMIT_GLOBAL;
		else
			return bad(err, len, kv, "not btrfs or global");
	} else if (!strcmp(k, "results")) {
		if (strlen(v) >= sizeof(set->results))
			return bad(err, len, kv, "too long");
		snprintf(set->results, sizeof(set->results), "%s", v);
	} else if (!strcmp(k, "interval")) {
		if (zfio_parse_time(v, &set->interval_ns) ||
		    set->interval_ns < 1000)
			return bad(err, len, kv, "not a time >= 1us");
	} else if (!strcmp(k, "scenario")) {
		if (strlen(v) >= sizeof(set->name))
			return bad(err, len, kv, "too long");
		/* It names a folder under results: one path component. */
		if (strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, ".."))
			return bad(err, len, kv, "not a folder name (no '/', "
				   "'.' or '..')");
		snprintf(set->name, sizeof(set->name), "%.63s", v);
	}
	return 0;
}

const char *zrun_commit_model_name(int model)
{
	return model == ZRUN_COMMIT_GLOBAL ? "global" : "btrfs";
}

int zrun_settings_check(const struct zrun_settings *set, char *err,
			size_t len)
{
	const char *why, *knob = zcow_reclaim_knob_refused(
		set->reclaim, set->reclaim_threshold, set->reclaim_high, &why);
	char msg[96];

	/* snapshot_max caps snapshot_interval's snapshots: alone it would
	 * do nothing */
	if (set->snapshot_max && !set->snapshot_interval_ns)
		return bad(err, len, &set->snapshot_max_at, "caps the "
			   "snapshots of snapshot_interval, which is not set");
	if (zcow_reclaim_needs_hotcold(set->reclaim) && !set->hotcold) {
		snprintf(msg, sizeof(msg), "reclaim=%s needs hotcold=on",
			 zcow_reclaim_name(set->reclaim));
		return bad(err, len, &set->reclaim_at, msg);
	}
	/* data_zones=1 (given, or by a layout) leaves hotcold one slot */
	if (set->hotcold && set->data_zones == 1)
		return bad(err, len, &set->hotcold_at, "needs 2 data slots "
			   "(data_zones=1)");
	if (!knob)
		return 0;
	snprintf(msg, sizeof(msg), "%s (reclaim=%s)", why,
		 zcow_reclaim_name(set->reclaim));
	return bad(err, len,
		   strcmp(knob, "reclaim_threshold") ? &set->high_at :
						       &set->threshold_at,
		   msg);
}

int zrun_zcow_apply(struct zrun_settings *set, const struct zfio_kv *kv,
		    char *err, size_t len)
{
	int ret = zrun_settings_apply(set, kv, err, len);

	if (ret == -ENOENT)
		ret = bad(err, len, kv, "unknown zcow option");
	return ret;
}

void zrun_errf(struct zrun *run, const char *fmt, ...)
{
	va_list ap;

	if (run->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(run->err, sizeof(run->err), fmt, ap);
	va_end(ap);
}

int zrun_opt_err(struct zrun *run, const struct zfio_job *j,
		 enum zfio_opt opt, const char *fmt, ...)
{
	va_list ap;

	if (run->err[0])	/* the first error stays, as zrun_errf() */
		return -EINVAL;
	va_start(ap, fmt);
	zfio_opt_verr(run->err, sizeof(run->err), j, opt, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

uint64_t zrun_rand(struct zrun_job *job)
{
	return zcow_rand64(&job->rng);
}

/* ---- the schedule ---------------------------------------------------- */

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t max_slot(const struct zrun_job *j)
{
	uint64_t m = 0;
	uint32_t i;

	for (i = 0; i < j->fio->iodepth; i++)
		if (j->slots[i] > m)
			m = j->slots[i];
	return m;
}

uint64_t zrun_max_slot(const struct zrun_job *j)
{
	return max_slot(j);
}

static uint32_t min_slot(const struct zrun_job *j)
{
	uint32_t i, best = 0;

	for (i = 1; i < j->fio->iodepth; i++)
		if (j->slots[i] < j->slots[best])
			best = i;
	return best;
}

/* The job sleeps until @t (fio's rate wait and thinktime): every slot is
 * free from then on. */
static void sleep_until(struct zrun_job *j, uint64_t t)
{
	uint32_t i;

	for (i = 0; i < j->fio->iodepth; i++)
		j->slots[i] = t;
}

/*
 * fio's flow control (flow.c): the jobs with flow of one flow_id share a
 * count of I/Os; a job whose share of it is above its share of the
 * running jobs' weights does not issue: with flow_sleep it waits for its
 * I/Os in flight and sleeps that long, else it waits until another job
 * of the group issues (fio retries at once; in simulated time nothing
 * changes until then) or ends.
 */
static void flow_unblock(struct zrun *run, unsigned int grp, uint64_t t)
{
	unsigned int i;
	uint32_t s;

	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *c = &run->jobs[i];

		if (!c->is_flow_blocked || c->flow_grp != grp)
			continue;
		c->is_flow_blocked = false;
		for (s = 0; s < c->fio->iodepth; s++)
			if (c->slots[s] < t)
				c->slots[s] = t;
	}
}

/* A flow job starts (@on) or ends running: its weight counts or not. */
static void flow_weigh(struct zrun *run, struct zrun_job *j, bool on,
		       uint64_t t)
{
	struct zrun_flow *g;

	if (!j->fio->flow || j->is_flow_weighed == on)
		return;
	g = &run->flows[j->flow_grp];
	j->is_flow_weighed = on;
	if (on) {
		g->weight += j->fio->flow;
		return;
	}
	g->weight -= j->fio->flow;
	flow_unblock(run, j->flow_grp, t);
}

/* fio's flow_threshold_exceeded() before an I/O at @t: true when the job
 * may not issue now (it sleeps or is blocked); else the I/O is counted. */
static bool flow_held(struct zrun *run, struct zrun_job *j, uint64_t t)
{
	struct zrun_flow *g;

	if (!j->fio->flow)
		return false;
	g = &run->flows[j->flow_grp];
	/* 0 / 0 is NaN: not above, as in fio */
	if ((double)j->flow_count / (double)g->count >
	    (double)j->fio->flow / (double)g->weight) {
		if (j->fio->flow_sleep_ns)
			sleep_until(j, max_slot(j) + j->fio->flow_sleep_ns);
		else
			j->is_flow_blocked = true;
		return true;
	}
	g->count++;
	j->flow_count++;
	flow_unblock(run, j->flow_grp, t);
	return false;
}

/* The flow groups, one per flow_id of the jobs with flow. */
static int setup_flows(struct zrun *run)
{
	unsigned int i, k;

	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *j = &run->jobs[i];

		if (!j->fio->flow)
			continue;
		if (!run->flows) {
			run->flows = calloc(run->nr_jobs, sizeof(*run->flows));
			if (!run->flows)
				return -ENOMEM;
		}
		for (k = 0; k < run->nr_flows; k++)
			if (run->flows[k].id == j->fio->flow_id)
				break;
		if (k == run->nr_flows)
			run->flows[run->nr_flows++].id = j->fio->flow_id;
		j->flow_grp = k;
	}
	return 0;
}

static int add_sample(struct zrun_job *j, uint64_t done, uint64_t lat,
		      uint64_t bytes, enum zrun_op op)
{
	struct zrun_sample *s;

	if (ZCOW_GROW_ONE(&j->samples, j->nr_samples, &j->samples_cap))
		return -ENOMEM;
	s = &j->samples[j->nr_samples++];
	s->done = done;
	s->lat = lat > UINT32_MAX ? UINT32_MAX : (uint32_t)lat;
	s->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	s->op = (uint8_t)op;
	j->stat_bytes[op] += bytes;
	j->stat_ios[op]++;
	return 0;
}

static int add_sync_lat(struct zrun_job *j, uint64_t lat)
{
	if (ZCOW_GROW_ONE(&j->sync_lat, j->nr_sync_lat, &j->sync_lat_cap))
		return -ENOMEM;
	j->sync_lat[j->nr_sync_lat++] = lat > UINT32_MAX ? UINT32_MAX :
							   (uint32_t)lat;
	return 0;
}

/* ---- write amplification by interval ------------------------------- */

/* intervals.csv has at most this many rows; later times go to the last. */
#define MAX_INTERVALS	1000000ull

/* One interval: bytes the jobs wrote, bytes the device wrote per class. */
struct wa_bucket {
	uint64_t host;
	uint64_t dev[ZDEV_NR_CLASSES];
	/* fs target: zone_unusable as the interval's first operation
	 * that completed in it left it */
	uint64_t unusable;
	bool has_unusable;
	/* ... and the data's live bytes, the space it cycles through and
	 * the fs's commits then */
	uint64_t live, space, commits;
};

struct zrun_wa {
	struct wa_bucket *b;		/* intervals 0 .. nr-1 */
	uint64_t nr, cap;
	uint64_t iv;			/* interval, ns */
	bool is_on;			/* the trace hook is installed */
	zdev_trace_fn prev;		/* the hook it replaced, chained */
	void *prev_arg;
	int err;			/* -ENOMEM: a count was lost */
};

/* The interval that holds time @t, grown and zeroed up to it; NULL (and
 * wa->err set) when memory runs out. */
static struct wa_bucket *wa_bucket(struct zrun_wa *wa, uint64_t t)
{
	uint64_t b = t / wa->iv;

	if (b >= MAX_INTERVALS)
		b = MAX_INTERVALS - 1;
	if (b >= wa->nr) {
		if (zcow_grow(&wa->b, &wa->cap, b + 1, sizeof(*wa->b))) {
			wa->err = -ENOMEM;
			return NULL;
		}
		memset(wa->b + wa->nr, 0, (b + 1 - wa->nr) * sizeof(*wa->b));
		wa->nr = b + 1;
	}
	return &wa->b[b];
}

/*
 * When the device command just accounted completed: with a timing model,
 * the completion it charged for it (the simulator charges a command when
 * it completes, before the wrapper accounts it; the targets detach the
 * model only for set-up and tear-down, outside the jobs); without one,
 * the wall clock from the start of the target call, as zrun_tick_done()
 * times the call.
 */
static uint64_t cmd_done(const struct zrun_dev *zd)
{
	if (zd->time)
		return ztime_last_done(zd->time);
	return zd->run->tick_now + (wall_ns() - zd->run->tick_w0);
}

/*
 * The device's trace hook while the jobs run (called under the device's
 * counter lock, once per command the wrappers counted): the bytes of a
 * write or an append go to its class in the interval of its completion,
 * exactly what the device counters add to device_bytes_written.
 */
static void wa_trace(void *arg, const struct zdev_trace_rec *rec)
{
	struct zrun_dev *zd = arg;
	struct zrun_wa *wa = zd->run->wa;
	struct wa_bucket *b;

	if (wa->prev && zd == &zd->run->trace0)
		wa->prev(wa->prev_arg, rec);
	if (rec->result < 0 ||
	    (rec->op != ZDEV_OP_WRITE && rec->op != ZDEV_OP_APPEND))
		return;
	b = wa_bucket(wa, cmd_done(zd));
	if (b)
		b->dev[rec->cls] += rec->len;
}

/* A write operation of the jobs wrote @len bytes, completing at @done. */
static void wa_host(struct zrun *run, uint64_t done, uint64_t len)
{
	struct wa_bucket *b;

	if (!run->wa)
		return;
	b = wa_bucket(run->wa, done);
	if (b)
		b->host += len;
}

bool zrun_unusable_due(struct zrun *run, uint64_t t)
{
	uint64_t b;

	if (!run->wa)
		return false;
	b = t / run->wa->iv;
	if (b >= MAX_INTERVALS)
		b = MAX_INTERVALS - 1;
	return b >= run->wa->nr || !run->wa->b[b].has_unusable;
}

void zrun_note_unusable(struct zrun *run, uint64_t t,
			const struct zcow_fs_info *info)
{
	struct wa_bucket *b;

	if (!run->wa)
		return;
	b = wa_bucket(run->wa, t);
	if (b) {
		b->unusable = info->zone_unusable;
		b->live = info->data_live_bytes;
		b->space = info->data_space_bytes;
		b->commits = info->commits.nr_commits;
		b->has_unusable = true;
	}
}

/* Start counting: the device counters were just taken as the base. */
static int wa_start(struct zrun *run)
{
	struct zrun_wa *wa = calloc(1, sizeof(*wa));
	unsigned int i;

	if (!wa)
		return -ENOMEM;
	wa->iv = run->set.interval_ns;
	wa->prev = run->dev->trace;
	wa->prev_arg = run->dev->trace_arg;
	run->wa = wa;
	run->trace0 = (struct zrun_dev){ run, run->dev, run->time, NULL };
	zdev_set_trace(run->dev, wa_trace, &run->trace0);
	for (i = 0; i < run->nr_more; i++)
		zdev_set_trace(run->more[i].dev, wa_trace, &run->more[i]);
	if (run->rp_dev) {
		run->trace_rp = (struct zrun_dev){ run, run->rp_dev,
						   run->rp_time, NULL };
		zdev_set_trace(run->rp_dev, wa_trace, &run->trace_rp);
	}
	wa->is_on = true;
	return 0;
}

/* Stop counting (again: a no-op); 0 or the count's error. */
static int wa_stop(struct zrun *run)
{
	struct zrun_wa *wa = run->wa;
	unsigned int i;

	if (!wa)
		return 0;
	if (wa->is_on && run->dev)
		zdev_set_trace(run->dev, wa->prev, wa->prev_arg);
	if (wa->is_on && run->rp_dev)
		zdev_set_trace(run->rp_dev, NULL, NULL);
	for (i = 0; wa->is_on && i < run->nr_more; i++)
		zdev_set_trace(run->more[i].dev, NULL, NULL);
	wa->is_on = false;
	return wa->err;
}

static void wa_free(struct zrun *run)
{
	if (!run->wa)
		return;
	free(run->wa->b);
	free(run->wa);
	run->wa = NULL;
}

/* Bytes the jobs wrote over the whole run. */
static uint64_t wa_host_total(const struct zrun_wa *wa)
{
	uint64_t i, s = 0;

	for (i = 0; i < wa->nr; i++)
		s += wa->b[i].host;
	return s;
}

/* The data utilization samples of the intervals: their sum and count. */
static void wa_utilization(const struct zrun_wa *wa, double *sum_ret,
			   uint64_t *nr_ret)
{
	uint64_t i;

	*sum_ret = 0;
	*nr_ret = 0;
	for (i = 0; wa && i < wa->nr; i++)
		if (wa->b[i].has_unusable && wa->b[i].space) {
			*sum_ret += (double)wa->b[i].live /
				    (double)wa->b[i].space;
			(*nr_ret)++;
		}
}

/*
 * The fs's locks in simulated time.  The fs runs one call at a time, so
 * its locks never block anyone in host time; the target says what a call
 * held (run->op_excl) and the scheduler holds the others back until that
 * call's completion:
 *
 *   the call                 op_excl          blocks until its completion
 *   full commit              ZRUN_EXCL_ALL    every operation and sync
 *   log sync (no commit)     ZRUN_EXCL_SYNCS  every sync
 *   anything else            ZRUN_EXCL_NONE   nothing
 *
 * An operation due at @t starts at gate(t); its latency counts from @t
 * (the wait is inside the call, as for a blocked mutex).
 */
static uint64_t gate(const struct zrun *run, uint64_t t, bool is_sync)
{
	if (t < run->excl_all_until)
		t = run->excl_all_until;
	if (is_sync && t < run->excl_sync_until)
		t = run->excl_sync_until;
	return t;
}

/* Start a call due at @due that the locks let go at @t. */
static void call_start(struct zrun *run, uint64_t due, uint64_t t)
{
	run->op_excl = ZRUN_EXCL_NONE;
	run->call_t = t;
	if (t > due) {
		run->nr_excl_waits++;
		run->excl_wait_ns += t - due;
	}
}

/* The call completed at @done: keep what it held until then. */
static void call_done(struct zrun *run, uint64_t done)
{
	if (run->op_excl == ZRUN_EXCL_ALL && done > run->excl_all_until)
		run->excl_all_until = done;
	if (run->op_excl == ZRUN_EXCL_SYNCS && done > run->excl_sync_until)
		run->excl_sync_until = done;
	run->op_excl = ZRUN_EXCL_NONE;
}

/* A sync waits for every slot of the job: it is due at the last slot's
 * completion, starts when the locks let it, and holds every slot until
 * it completes. */
/* A sync of @j completed at @done (due at @due). */
static int sync_done(struct zrun_job *j, uint64_t due, uint64_t done)
{
	uint32_t i;

	for (i = 0; i < j->fio->iodepth; i++)
		j->slots[i] = done;
	j->nr_syncs++;
	if (due >= j->start + j->fio->ramp_time_ns)
		return add_sync_lat(j, done - due);
	return 0;
}

/*
 * Log-sync batching (btrfs: fsyncs waiting on the log mutex have put
 * their changes into the log; the one that gets the mutex writes them
 * all): every other job whose sync was due by @t, and so waits for the
 * lock, joins the sync that starts at @t (their ids go to @joined); one
 * with nothing to write completes at @t.
 */
static int join_waiting_syncs(struct zrun *run, const struct zrun_job *j,
			      uint64_t t, unsigned int *joined,
			      unsigned int *nr_joined)
{
	unsigned int i;
	int ret;

	*nr_joined = 0;
	if (!run->ops->sync_join)
		return 0;
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *c = &run->jobs[i];

		if (c == j || c->is_done || c->is_waiting ||
		    c->sync_due == ZRUN_SYNC_NONE || max_slot(c) > t)
			continue;
		ret = run->ops->sync_join(run, c,
					  c->sync_due == ZRUN_SYNC_FDATASYNC);
		if (ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		if (ret == 0) {
			/* Durable already: done when the lock let it run. */
			c->sync_due = ZRUN_SYNC_NONE;
			ret = sync_done(c, max_slot(c), t);
			if (ret)
				return ret;
			continue;
		}
		joined[(*nr_joined)++] = i;
	}
	return 0;
}

static int job_fsync(struct zrun *run, struct zrun_job *j, bool is_data,
		     bool is_all)
{
	uint64_t due = max_slot(j), t = gate(run, due, true), done = t;
	unsigned int *joined = NULL, nr_joined = 0, k;
	int ret;

	if (!is_all && run->nr_jobs > 1) {
		joined = malloc(run->nr_jobs * sizeof(*joined));
		if (!joined)
			return -ENOMEM;
		ret = join_waiting_syncs(run, j, t, joined, &nr_joined);
		if (ret)
			goto out;
	}
	if (!is_all) {	/* fio logs fsync=N's syncs, not end_fsync */
		ret = zfio_log_sync(run, j, is_data, t);
		if (ret)
			goto out;
	}
	call_start(run, due, t);
	ret = run->ops->fsync(run, j, is_data, is_all, t, &done);
	if (ret)
		goto out;
	if (done < t)
		done = t;
	call_done(run, done);
	ret = sync_done(j, due, done);
	/* The joined syncs completed with this one. */
	for (k = 0; !ret && k < nr_joined; k++) {
		struct zrun_job *c = &run->jobs[joined[k]];

		c->sync_due = ZRUN_SYNC_NONE;
		run->nr_sync_joins++;
		ret = sync_done(c, max_slot(c), done);
	}
out:
	free(joined);
	return ret;
}

/* The job's end: end_fsync, then the target's job_end, at the last slot's
 * completion. */
static int finish_job(struct zrun *run, struct zrun_job *j)
{
	int ret = 0;

	if (j->sync_due != ZRUN_SYNC_NONE)
		ret = job_fsync(run, j, j->sync_due == ZRUN_SYNC_FDATASYNC,
				false);
	j->sync_due = ZRUN_SYNC_NONE;
	/* a job that failed ends without end_fsync, as in fio */
	if (!ret && j->fio->end_fsync && j->nr_writes &&
	    !zrun_ctl_has_failed(j))
		ret = job_fsync(run, j, false, true);
	if (!ret && run->ops->job_end) {
		uint64_t due = max_slot(j), t = gate(run, due, false);
		uint64_t done = t;
		uint32_t i;

		call_start(run, due, t);
		ret = run->ops->job_end(run, j, t, &done);
		if (done < t)
			done = t;
		if (!ret)
			call_done(run, done);
		for (i = 0; !ret && i < j->fio->iodepth; i++)
			j->slots[i] = done;
	}
	j->is_done = true;
	j->is_ending = false;
	j->last_done = max_slot(j);
	ret = ret ?: zfio_log_job_end(run, j);
	flow_weigh(run, j, false, j->last_done);
	if (j->last_done > run->now_max)
		run->now_max = j->last_done;
	if (!ret)
		zrun_ctl_job_ended(run, j);	/* exitall, exitall_on_error */
	return ret;
}

/* Is the job's next call a sync (a due sync, or its end's end_fsync)? */
static bool is_sync_next(const struct zrun_job *j)
{
	return j->sync_due != ZRUN_SYNC_NONE ||
	       (j->is_ending && j->fio->end_fsync && j->nr_writes &&
		!zrun_ctl_has_failed(j));
}

/*
 * When the job's next event is due: its earliest free slot for I/O; its
 * last slot's completion when a sync or its end is due (both wait for
 * every slot).  It happens when the fs's locks let it (gate()).  The
 * scheduler submits events in time order, so the timing model's FIFO
 * resources see commands in the order of their submit times.
 */
static uint64_t next_due(const struct zrun_job *j)
{
	uint32_t s;

	if (j->sync_due != ZRUN_SYNC_NONE || j->is_ending)
		return max_slot(j);
	return zrun_ctl_io_due(j, &s);	/* latency_target's depth */
}

/*
 * Start the jobs that may start: a job waits for every job of a lower
 * stonewall phase (fio's stonewall: a later phase starts once all earlier
 * jobs have finished) and for every clone of its wait_for job; it starts
 * when the last of them finished.
 */
static void release_waiters(struct zrun *run)
{
	unsigned int i, k;

	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *w = &run->jobs[i];
		uint64_t start = 0;
		bool is_ready = true;
		uint32_t s;

		if (!w->is_waiting)
			continue;
		for (k = 0; k < run->nr_jobs && is_ready; k++) {
			const struct zrun_job *o = &run->jobs[k];

			if (o->phase >= w->phase &&
			    (!w->fio->wait_for[0] ||
			     strcmp(o->fio->name, w->fio->wait_for)))
				continue;
			if (!o->is_done)
				is_ready = false;
			else if (o->last_done > start)
				start = o->last_done;
		}
		if (!is_ready)
			continue;
		w->is_waiting = false;
		w->start = start > w->delay ? start : w->delay;
		for (s = 0; s < w->fio->iodepth; s++)
			w->slots[s] = w->start;
		if (w->end_limit)
			w->end_limit += w->start;
		flow_weigh(run, w, true, w->start);
	}
}

_Static_assert((int)ZRUN_OP_READ == (int)ZFIO_DDIR_READ &&
	       (int)ZRUN_OP_WRITE == (int)ZFIO_DDIR_WRITE &&
	       (int)ZRUN_OP_TRIM == (int)ZFIO_DDIR_TRIM,
	       "an operation is its fio data direction");

/*
 * fio's rate_ddir() before an I/O of direction *@op due at @t: the
 * direction may change (a mixed job's other one when it is behind its
 * rate); when both are ahead the job waits for its I/Os in flight (fio's
 * io_u_quiesce()), then sleeps as long as it was ahead, and issues that
 * direction then without a new check.  Returns true when it sleeps.
 */
static bool rate_wait(struct zrun_job *j, enum zrun_op *op, uint64_t t)
{
	uint64_t now_us, at_us, end_us = 0;
	enum zfio_ddir d;

	if (j->rate_op >= 0) {
		*op = (enum zrun_op)j->rate_op;
		j->rate_op = -1;
		return false;
	}
	if (!j->has_rate)
		return false;
	if (!j->is_rate_ramped) {
		j->rate_epoch = j->start;
		j->is_rate_ramped = !j->fio->ramp_time_ns;
	}
	if (!j->is_rate_ramped && t >= j->start + j->fio->ramp_time_ns) {
		zfio_rate_init(&j->rate, j->fio);
		j->rate_epoch = t;
		j->is_rate_ramped = true;
	}
	now_us = (t - j->rate_epoch) / 1000;
	if (j->end_limit)
		end_us = (j->end_limit - j->rate_epoch) / 1000;
	d = zfio_rate_ddir(&j->rate, j->fio, (enum zfio_ddir)*op, now_us,
			   end_us, &at_us);
	*op = (enum zrun_op)d;
	if (at_us <= now_us)
		return false;
	sleep_until(j, max_slot(j) + (at_us - now_us) * 1000);
	j->rate_op = (int)d;
	return true;
}

/*
 * fio's handle_thinktime() after an I/O issued at @t: once
 * thinktime_blocks more I/Os were issued (thinktime_blocks_type=issue)
 * or completed (complete, the default: those done when fio gets there,
 * after reaping one I/O if the queue is full, so at iodepth 1 the one
 * just issued), the job waits for its I/Os in flight and stalls for
 * thinktime (thinktime_spin is part of it), at most until its runtime
 * ends.
 */
static void think(struct zrun_job *j, uint64_t t)
{
	const struct zfio_job *f = j->fio;
	uint64_t count = j->nr_ios, wake, from, now = t;
	uint32_t i;

	if (!f->thinktime_ns)
		return;
	if (j->slots[min_slot(j)] > t)
		now = j->slots[min_slot(j)];	/* full: reap one */
	if (!f->thinktime_issue)
		for (i = 0; i < f->iodepth; i++)
			count -= j->slots[i] > now;
	if (count < j->think_last + f->thinktime_blocks)
		return;
	from = max_slot(j);
	wake = from + f->thinktime_ns;
	if (j->end_limit && wake > j->end_limit)
		wake = j->end_limit > from ? j->end_limit : from;
	sleep_until(j, wake);
	j->think_last = count;
}

static enum zrun_op pick_op(struct zrun_job *j)
{
	switch (j->fio->rw) {
	case ZFIO_READ:
	case ZFIO_RANDREAD:
		return ZRUN_OP_READ;
	case ZFIO_WRITE:
	case ZFIO_RANDWRITE:
		return ZRUN_OP_WRITE;
	case ZFIO_TRIM:
	case ZFIO_RANDTRIM:
		return ZRUN_OP_TRIM;
	default:
		return zrun_rand(j) % 100 < j->fio->rwmixread ? ZRUN_OP_READ :
								ZRUN_OP_WRITE;
	}
}

static void progress(struct zrun *run, uint64_t t, uint64_t w0, uint64_t *last)
{
	uint64_t w = wall_ns();

	if (run->is_quiet || !isatty(2) || w - w0 < PROGRESS_AFTER_NS ||
	    w - *last < NS / 2)
		return;
	*last = w;
	fprintf(stderr, "\rzcow run: %.3f s simulated, %.1f s wall   ",
		(double)t / NS, (double)(w - w0) / NS);
}

/*
 * A model that charges nothing (profile=instant): simulated time never
 * advances, so a time_based job would never reach its runtime.  Every
 * operation of a time_based job is charged at least FREE_OP_NS there, so
 * runtime bounds it to runtime / FREE_OP_NS operations per iodepth slot
 * (configs/README.md).
 */
#define FREE_OP_NS	1000ull

static bool is_free_model(const struct zrun *run)
{
	struct ztime_profile zero;
	const struct ztime_profile *p;

	if (!run->time)
		return false;
	p = ztime_get_profile(run->time);
	memset(&zero, 0, sizeof(zero));
	memcpy(zero.name, p->name, sizeof(zero.name));
	return !memcmp(&zero, p, sizeof(zero));
}

/*
 * One step of a loadfile job (its slot @s due at @due, let go by the
 * locks at @t): the target replays the next line; a ReadX or WriteX is
 * an I/O of the job (samples, bytes), a Flush makes the job's sync due,
 * a pacing wait only moves the slot.  With a model that charges nothing
 * a time_based job's step costs FREE_OP_NS, as any operation.
 */
static int replay_step(struct zrun *run, struct zrun_job *j, uint32_t s,
		       uint64_t due, uint64_t t, bool is_free)
{
	struct zrun_replay r = { .done = t };
	int ret;

	call_start(run, due, t);
	ret = run->ops->replay(run, j, t, &r);
	if (ret)
		return ret;
	if (r.done < t)
		r.done = t;
	call_done(run, r.done);
	if (r.is_end) {
		j->is_ending = true;
		return 0;
	}
	if (is_free && j->fio->time_based && r.done < t + FREE_OP_NS)
		r.done = t + FREE_OP_NS;
	j->slots[s] = r.done;
	if (r.is_sync)
		j->sync_due = ZRUN_SYNC_FSYNC;
	if (!r.len)
		return 0;
	j->nr_ios++;
	j->bytes_done += r.len;
	if (r.op == ZRUN_OP_WRITE) {
		j->nr_writes++;
		wa_host(run, r.done, r.len);
	}
	if (due >= j->start + j->fio->ramp_time_ns)
		return add_sample(j, r.done, r.done - due, r.len, r.op);
	return 0;
}

/*
 * A verify read of @j (run_verify.c: the next piece of its verify phase
 * or backlog batch) in slot @s: a read of the job, timed as any.
 */
static int verify_step(struct zrun *run, struct zrun_job *j, uint32_t s,
		       uint64_t due, uint64_t t)
{
	uint64_t off, len, got = 0, done = t;
	int ret;

	zrun_verify_take(run, j, &off, &len);
	call_start(run, due, t);
	zrun_verify_io_start(run, j, ZRUN_OP_READ, true, t);
	ret = run->ops->do_io(run, j, ZRUN_OP_READ, off, len, t, &got, &done);
	zrun_verify_io_done(run, j, ZRUN_OP_READ, got);
	if (ret)
		return ret;
	if (done < t)
		done = t;
	call_done(run, done);
	j->slots[s] = done;
	if (zrun_verify_failed(j))
		j->is_ending = true;
	ret = zfio_log_io(run, j, ZRUN_OP_READ, got, due, t, done);
	if (ret)
		return ret;
	if (due >= j->start + j->fio->ramp_time_ns)
		return add_sample(j, done, done - due, got, ZRUN_OP_READ);
	return 0;
}

/*
 * A replay job's next action (read_iolog, harness/fio_log.h) for its
 * slot @s due at @due: an I/O goes on as any (*op, *cand, *bs; returns
 * 0); the log's timing moves the slot, a sync becomes due, the log's
 * end ends the job (1).  The log's timing replaces rate, thinktime and
 * flow, and its syncs fsync=N's.
 */
static int replay_io(struct zrun *run, struct zrun_job *j, uint32_t s,
		     uint64_t due, uint64_t t, enum zrun_op *op,
		     uint64_t *cand, uint64_t *bs)
{
	struct zfio_replay_io io;
	int ret = zfio_replay_next(run, j, due, &io);

	if (ret)
		return ret;
	if (io.is_end) {
		j->is_ending = true;
		return 1;
	}
	if (io.not_before > due) {
		j->slots[s] = io.not_before;
		return 1;
	}
	if (io.sync) {
		zfio_replay_issued(j, max_slot(j) > t ? max_slot(j) : t);
		j->sync_due = io.sync;
		return 1;
	}
	zfio_replay_issued(j, t);
	*op = io.op;
	*cand = io.cand;
	*bs = io.len;
	return 0;
}

/*
 * snapshot_interval=: the snapshot due now, taken at @t (the locks let
 * it go then) and named snap-N, N counting from 1 in each repetition;
 * the next one is due an interval after this one was, unless
 * snapshot_max is reached.  *done_ret: its completion.
 */
static int take_snapshot(struct zrun *run, uint64_t t, uint64_t *done_ret)
{
	char name[32];
	uint64_t id = 0;
	int ret;

	snprintf(name, sizeof(name), "snap-%llu",
		 (unsigned long long)run->sn_taken + 1);
	*done_ret = t;
	ret = run->ops->snapshot(run, name, t, done_ret, &id);
	if (ret)
		return ret;
	if (*done_ret < t)
		*done_ret = t;
	run->sn_taken++;
	if (run->set.snapshot_max && run->sn_taken >= run->set.snapshot_max)
		run->sn_due = UINT64_MAX;
	else
		run->sn_due += run->set.snapshot_interval_ns;
	return 0;
}

static int schedule(struct zrun *run)
{
	uint64_t w0 = wall_ns(), wlast = 0, steps = 0;
	bool is_free = is_free_model(run);
	unsigned int k;
	int ret = 0;

	run->op_excl = ZRUN_EXCL_NONE;
	run->excl_all_until = run->excl_sync_until = 0;
	run->cl_due = UINT64_MAX;
	run->cl_free = run->call_t = 0;
	run->nr_excl_waits = run->excl_wait_ns = 0;
	run->nr_sync_joins = 0;
	memset(run->nr_txn_fsyncs, 0, sizeof(run->nr_txn_fsyncs));
	for (k = 0; k < run->nr_jobs; k++)
		if (!run->jobs[k].is_waiting)
			flow_weigh(run, &run->jobs[k], true,
				   run->jobs[k].start);
	release_waiters(run);
	for (;;) {
		struct zrun_job *j = NULL;
		uint64_t best = UINT64_MAX, best_due = UINT64_MAX, held = 0;
		uint64_t due, t, len = 0, done = 0, off, cand, bs;
		unsigned int i;
		uint32_t s;
		enum zrun_op op, top;
		bool is_waiting = false, is_rand, is_end;

		/* The background cleaner (cleaner=background) is woken at
		 * the start of the call that made a step due, then runs its
		 * steps back to back.  When it fell behind, the jobs wait
		 * for its steps (a btrfs space ticket). */
		if (run->cl_due == UINT64_MAX && run->ops->cleaner_due &&
		    run->ops->cleaner_due(run))
			run->cl_due = run->call_t > run->cl_free ?
					      run->call_t : run->cl_free;
		if (run->cl_due != UINT64_MAX && run->ops->cleaner_behind(run))
			held = run->cl_due;
		/* The earliest event; on a tie the one due first (it has
		 * waited longest for the lock), then the lowest index. */
		for (i = 0; i < run->nr_jobs; i++) {
			struct zrun_job *c = &run->jobs[i];
			uint64_t n, d;

			if (c->is_done)
				continue;
			if (c->is_waiting || c->is_flow_blocked) {
				is_waiting = true;
				continue;
			}
			d = next_due(c);
			n = gate(run, d, is_sync_next(c));
			if (n < held)
				n = held;
			if (n < best || (n == best && d < best_due)) {
				best = n;
				best_due = d;
				j = c;
			}
		}
		/* The replace's next event (run_replace.c), held like a
		 * commit; on a tie the jobs' waiting operations go first. */
		due = zrun_replace_due(run);
		if (due != UINT64_MAX &&
		    (!j || gate(run, due, false) < best)) {
			t = gate(run, due, false);
			call_start(run, due, t);
			ret = zrun_replace_event(run, t);
			if (ret)
				return ret;
			call_done(run, run->rp_due);
			continue;
		}
		/* A snapshot (snapshot_interval=), while a job still runs,
		 * held like the commit it is; on a tie the jobs' waiting
		 * operations go first. */
		if (j && run->sn_due != UINT64_MAX &&
		    gate(run, run->sn_due, false) < best) {
			due = run->sn_due;
			t = gate(run, due, false);
			call_start(run, due, t);
			ret = take_snapshot(run, t, &done);
			if (ret)
				return ret;
			call_done(run, done);
			continue;
		}
		/* The cleaner's step, while a job runs; on a tie the jobs'
		 * waiting operations go first, unless they wait for it. */
		if (j && run->cl_due != UINT64_MAX &&
		    (gate(run, run->cl_due, false) < best ||
		     (held && gate(run, run->cl_due, false) <= best))) {
			due = run->cl_due;
			t = gate(run, due, false);
			call_start(run, due, t);
			ret = run->ops->cleaner_step(run, t, &done);
			if (ret)
				return ret;
			if (done < t)
				done = t;
			call_done(run, done);
			run->cl_free = done;
			run->cl_due = run->ops->cleaner_due(run) ? done :
								   UINT64_MAX;
			continue;
		}
		if (j)	/* steadystate's checks up to it */
			zrun_ctl_tick(run, best);
		if (!j) {
			if (!is_waiting)
				break;
			/* Not reached: the shares of a flow group's running
			 * jobs sum to one, so one of them is not above its
			 * own; released all the same rather than stuck. */
			for (k = 0; k < run->nr_jobs; k++)
				if (run->jobs[k].is_flow_blocked)
					break;
			if (k < run->nr_jobs) {
				flow_unblock(run, run->jobs[k].flow_grp, 0);
				continue;
			}
			/* Not reached: wait_for names an earlier job
			 * (fio.c), so some job can always run. */
			zrun_errf(run, "jobs wait for each other");
			return -EINVAL;
		}
		if (j->sync_due != ZRUN_SYNC_NONE) {
			ret = job_fsync(run, j,
					j->sync_due == ZRUN_SYNC_FDATASYNC,
					false);
			j->sync_due = ZRUN_SYNC_NONE;
			if (ret)
				return ret;
			continue;
		}
		if (j->is_ending) {
			ret = finish_job(run, j);
			if (ret)
				return ret;
			release_waiters(run);
			continue;
		}
		due = zrun_ctl_io_due(j, &s);
		t = gate(run, due, false);
		if ((j->end_limit && due >= j->end_limit) ||
		    (j->has_stop && due >= j->stop_at)) {
			j->is_ending = true;
			continue;
		}
		/* fio: the verify of what the job wrote (a backlog batch,
		 * or the phase after its loop) before it goes on or ends */
		is_end = (j->bytes_goal && j->bytes_done >= j->bytes_goal) ||
			 (j->fio->number_ios &&
			  j->nr_ios >= j->fio->number_ios * j->fio->loops);
		if (zrun_verify_due(run, j, is_end)) {
			ret = verify_step(run, j, s, due, t);
			if (ret)
				return ret;
			continue;
		}
		if (is_end) {
			j->is_ending = true;
			continue;
		}
		if (j->fio->zcow_loadfile[0]) {
			ret = replay_step(run, j, s, due, t, is_free);
			if (ret)
				return ret;
			continue;
		}
		if (zfio_replay_is(j)) {
			ret = replay_io(run, j, s, due, t, &op, &cand, &bs);
			if (ret < 0)
				return ret;
			if (ret)
				continue;
			goto issue;
		}
		if (j->rate_op < 0 && flow_held(run, j, t))
			continue;
		op = j->rate_op >= 0 ? (enum zrun_op)j->rate_op : pick_op(j);
		if (rate_wait(j, &op, t))
			continue;
		/* fio's rw=PATTERN:N, random_distribution and
		 * percentage_random (fio_gen.c); the default draws one
		 * zrun_rand() % blocks, as always */
		cand = zfio_next_offset(j->fio, &j->dist, &j->offs,
					(enum zfio_ddir)op, j->seq_pos,
					j->range_len, &j->rng, &is_rand);
		/* bsrange, bssplit (fio_gen.c): fixed sizes draw nothing */
		bs = zfio_next_bs(j->fio, (enum zfio_ddir)op, is_rand,
				  j->range_len > cand ? j->range_len - cand : 0,
				  &j->rng);
		if (!bs) {
			if (!zrun_verify_due(run, j, true))
				j->is_ending = true;
			continue;
		}
issue:
		off = j->range_start + cand;
		call_start(run, due, t);
		/* the target's direction (an sg verify command reads) */
		top = zrun_verify_io_start(run, j, op, false, t);
		ret = run->ops->do_io(run, j, top, off, bs, t, &len, &done);
		zrun_verify_io_done(run, j, op, len);
		if (ret)
			return ret;
		if (done < t)
			done = t;
		call_done(run, done);
		if (!len) {
			if (!zrun_verify_due(run, j, true))
				j->is_ending = true;
			continue;
		}
		if (zrun_verify_failed(j))
			j->is_ending = true;
		if (is_free && j->fio->time_based && done < t + FREE_OP_NS)
			done = t + FREE_OP_NS;
		if (run->io_err) {
			/* counted and the job goes on, or it ends failing;
			 * either way not a sample (fio counts no bytes) */
			j->slots[s] = done;
			zrun_ctl_io_done(run, j, s, op, due, t, done, len,
					 true);
			j->nr_ios++;
			j->bytes_done += len;
			if (!j->seq_by_target && j->range_len)
				j->seq_pos = (cand + len) % j->range_len;
			if (zrun_ctl_io_error(run, j, op, done))
				j->is_ending = true;
			continue;
		}
		if (j->has_rate) {
			char msg[ZFIO_ERR_LEN];

			zfio_rate_issued(&j->rate, j->fio, (enum zfio_ddir)op,
					 bs, &j->rng);
			ret = zfio_rate_done(&j->rate, j->fio,
					     (enum zfio_ddir)op, len,
					     (done - j->rate_epoch) / 1000000,
					     msg,
					     sizeof(msg));
			if (ret) {
				zrun_errf(run, "%s", msg);
				return ret;
			}
		}
		if (!j->seq_by_target && j->range_len)
			j->seq_pos = (cand + len) % j->range_len;
		j->slots[s] = done;
		/* completions so far; latency_target's depth */
		zrun_ctl_io_done(run, j, s, op, due, t, done, len, false);
		j->nr_ios++;
		j->bytes_done += len;
		think(j, t);
		if (due >= j->start + j->fio->ramp_time_ns &&
		    due >= j->stats_from) {
			ret = add_sample(j, done, done - due, len, op);
			if (ret)
				return ret;
		}
		ret = zfio_log_io(run, j, op, len, due, t, done);
		if (ret)
			return ret;
		if (op == ZRUN_OP_WRITE && top == ZRUN_OP_WRITE) {
			j->nr_writes++;
			wa_host(run, done, len);
			/* a replay syncs where its log says only */
			if (zfio_replay_is(j))
				goto synced;
			if (j->fio->fsync && j->nr_writes % j->fio->fsync == 0)
				j->sync_due = ZRUN_SYNC_FSYNC;
			else if (j->fio->fdatasync &&
				 j->nr_writes % j->fio->fdatasync == 0)
				j->sync_due = ZRUN_SYNC_FDATASYNC;
		}
synced:
		if ((++steps & 4095) == 0)
			progress(run, t, w0, &wlast);
	}
	if (wlast)
		fprintf(stderr, "\r%60s\r", "");
	return 0;
}

/* ---- set-up ---------------------------------------------------------- */

static const char *default_device(const char *profile)
{
	size_t i;

	for (i = 0; i < sizeof(default_devices) / sizeof(default_devices[0]);
	     i++)
		if (!strcmp(default_devices[i].profile, profile))
			return default_devices[i].device;
	return default_devices[0].device;
}

/* The device spec that runs: the device setting, else the profile's
 * default; the fs target reads its metadata back, so its default keeps
 * data (no data=off). */
static const char *run_device(struct zrun *run)
{
	static __thread char buf[ZRUN_SPEC_LEN];
	const char *d = default_device(run->set.profile);
	const char *p;

	if (run->set.device[0])
		return run->set.device;
	if (run->ops != &zrun_fs_target || !(p = strstr(d, ",data=off")))
		return d;
	snprintf(buf, sizeof(buf), "%.*s%s", (int)(p - d), d, p + 9);
	return buf;
}

static int pick_target(struct zrun *run)
{
	unsigned int i;
	bool all_zbd = true;

	for (i = 0; i < run->spec->nr_jobs; i++)
		if (run->spec->jobs[i].zonemode != ZFIO_ZONEMODE_ZBD)
			all_zbd = false;
	/* target=raw with jobs without zonemode=zbd: fio on a plain block
	 * device, in place (run_raw.c checks the device has no sequential
	 * zones) */
	if (!strcmp(run->set.target, "raw") ||
	    (!strcmp(run->set.target, "auto") && all_zbd)) {
		run->ops = &zrun_raw_target;
		if (run->set.mount_at.key[0])
			return bad(run->err, sizeof(run->err),
				   &run->set.mount_at, "a mount option of the "
				   "fs target; the raw target (zonemode=zbd "
				   "jobs) mounts no file system");
		if (run->set.snapshot_at.key[0])
			return bad(run->err, sizeof(run->err),
				   &run->set.snapshot_at, "a snapshot is of "
				   "the fs target's file system; the raw "
				   "target (zonemode=zbd jobs) has none");
	} else {
		run->ops = &zrun_fs_target;
	}
	return 0;
}

/* Open @spec into *@dev_ret with a timing model of the run's profile
 * when it is simulated (*@time_ret NULL otherwise). */
static int open_one(struct zrun *run, const char *spec, struct zdev **dev_ret,
		    struct ztime **time_ret)
{
	struct ztime_profile prof;
	int ret;

	*time_ret = NULL;
	ret = zdev_open(spec, dev_ret);
	if (ret) {
		zrun_errf(run, "cannot open device '%s': %s", spec,
			  strerror(-ret));
		return ret;
	}
	if (!zsim_from_dev(*dev_ret))
		return 0;	/* a real device: wall clock only */
	ret = ztime_profile_get(run->set.profile, &prof);
	ret = ret ?: ztime_create(&prof, &(*dev_ret)->info, time_ret);
	ret = ret ?: ztime_attach(*dev_ret, *time_ret);
	if (ret)
		zrun_errf(run, "timing model: %s", strerror(-ret));
	return ret;
}

/*
 * The run's device, or a device list (device=A+B, fs target): the first
 * is run->dev, the others run->more[], each with its own timing model;
 * simulated and real devices are not mixed (one clock).
 */
static int open_device(struct zrun *run)
{
	const char *spec = run_device(run);
	struct zdevs_list *list;
	unsigned int i;
	int ret;

	if (!strcmp(spec, "filename"))
		spec = run->spec->jobs[0].filename;
	run->nr_more = 0;
	if (!zdevs_is_list(spec))
		return open_one(run, spec, &run->dev, &run->time);
	if (run->ops != &zrun_fs_target) {
		zrun_errf(run, "device '%s' is a list of devices: only the fs target runs on several",
			  spec);
		return -EINVAL;
	}
	list = malloc(sizeof(*list));
	if (!list)
		return -ENOMEM;
	ret = zdevs_parse(spec, list, run->err, sizeof(run->err));
	ret = ret ?: open_one(run, list->spec[0], &run->dev, &run->time);
	for (i = 1; !ret && i < list->nr; i++) {
		struct zrun_dev *zd = &run->more[run->nr_more];

		memset(zd, 0, sizeof(*zd));
		zd->run = run;
		ret = open_one(run, list->spec[i], &zd->dev, &zd->time);
		if (zd->dev)
			run->nr_more++;
		if (!ret && !zd->time != !run->time) {
			zrun_errf(run, "device '%s': simulated and real devices in one list",
				  spec);
			ret = -EINVAL;
		}
	}
	free(list);
	return ret;
}

void zrun_dev_stats(struct zrun *run, struct zdev_stats *sum)
{
	struct zdev_stats t;
	unsigned int i, k;

	zdev_get_stats(run->dev, sum);
	for (k = 0; run->base && k < ZDEV_NR_CLASSES * ZDEV_NR_OPS; k++) {
		(&sum->cmds[0][0])[k] -= (&run->base->cmds[0][0])[k];
		(&sum->bytes[0][0])[k] -= (&run->base->bytes[0][0])[k];
	}
	for (i = 0; i < run->nr_more; i++) {
		const struct zrun_dev *zd = &run->more[i];

		zdev_get_stats(zd->dev, &t);
		for (k = 0; k < ZDEV_NR_CLASSES * ZDEV_NR_OPS; k++) {
			(&sum->cmds[0][0])[k] += (&t.cmds[0][0])[k] -
				(zd->base ? (&zd->base->cmds[0][0])[k] : 0);
			(&sum->bytes[0][0])[k] += (&t.bytes[0][0])[k] -
				(zd->base ? (&zd->base->bytes[0][0])[k] : 0);
		}
	}
	if (run->rp_dev) {	/* everything it did is the run's */
		zdev_get_stats(run->rp_dev, &t);
		for (k = 0; k < ZDEV_NR_CLASSES * ZDEV_NR_OPS; k++) {
			(&sum->cmds[0][0])[k] += (&t.cmds[0][0])[k];
			(&sum->bytes[0][0])[k] += (&t.bytes[0][0])[k];
		}
	}
}

static uint64_t seed_mix(uint64_t a, uint64_t b)
{
	struct zrun_job tmp = { .rng = a ^ (b * ZCOW_GOLDEN64) };

	return zrun_rand(&tmp);
}

/* fio's startdelay: the job starts that long after the run (a range:
 * drawn per clone, in whole us); a job that waits for others starts at
 * the later of the two. */
static void start_delay(struct zrun_job *j)
{
	const struct zfio_job *f = j->fio;
	uint64_t span = (f->startdelay_hi_ns - f->startdelay_ns) / 1000;
	uint32_t s;

	j->delay = f->startdelay_ns;
	if (span)
		j->delay += zrun_rand(j) % (span + 1) * 1000;
	if (j->is_waiting || !j->delay)
		return;
	j->start = j->delay;
	for (s = 0; s < f->iodepth; s++)
		j->slots[s] = j->start;
	if (j->end_limit)
		j->end_limit += j->start;
}

/* rw=PATTERN:N against the job's range: the raw target writes at the
 * zones' write pointers (no offsets of its own to move); a hole or step
 * is whole blocks, shorter than the range. */
static int check_seq_mod(struct zrun *run, const struct zrun_job *j)
{
	const struct zfio_job *f = j->fio;
	uint64_t step = f->rw_seq_add < 0 ? -(uint64_t)f->rw_seq_add :
					    (uint64_t)f->rw_seq_add;

	if (f->rw_seq_nr == 1 && !step)
		return 0;
	if (j->seq_by_target)
		return zrun_opt_err(run, f, ZFIO_OPT_RW, "an offset modifier "
				    "(:N) is not modelled on the raw target "
				    "(writes go to the zones' write pointers)");
	if (step % f->bs || step >= j->range_len)
		return zrun_opt_err(run, f, ZFIO_OPT_RW, "a step of %llu "
				    "bytes must be whole blocks of %llu bytes "
				    "and shorter than the job's %llu bytes",
				    (unsigned long long)step,
				    (unsigned long long)f->bs,
				    (unsigned long long)j->range_len);
	return 0;
}

/*
 * fio's io_size: the job does io_size x loops bytes of I/O within its
 * range (less than the range, or going round it again), instead of the
 * range's size x loops.
 */
static int io_size_goal(struct zrun *run, struct zrun_job *j)
{
	const struct zfio_job *f = j->fio;
	uint64_t io = zfio_size_bytes(&f->io_size, j->range_len,
				      run->dev->info.zone_size, f->bs);

	if (io < f->bs)
		return zrun_opt_err(run, f, ZFIO_OPT_IO_SIZE, "%llu bytes is "
				    "less than one block of bs=%llu",
				    (unsigned long long)io,
				    (unsigned long long)f->bs);
	if (f->loops > UINT64_MAX / io)
		return zrun_opt_err(run, f, ZFIO_OPT_LOOPS, "%u loops of "
				    "%llu bytes overflow", f->loops,
				    (unsigned long long)io);
	j->bytes_goal = io * f->loops;
	return 0;
}

static int setup_jobs(struct zrun *run)
{
	unsigned int i, c, n = 0, phase = 0;
	int ret;

	/* fio.c capped the clones (ZFIO_MAX_JOBS) before this. */
	for (i = 0; i < run->spec->nr_jobs; i++)
		n += run->spec->jobs[i].numjobs;
	run->jobs = calloc(n, sizeof(*run->jobs));
	if (!run->jobs)
		return -ENOMEM;
	for (i = 0; i < run->spec->nr_jobs; i++) {
		const struct zfio_job *f = &run->spec->jobs[i];

		if (f->stonewall && i)
			phase++;
		if (f->zcow_loadfile[0] && !run->ops->replay)
			return zrun_opt_err(run, f, ZFIO_OPT_ZCOW_LOADFILE,
					    "the %s target has no files to "
					    "replay it on (target=fs)",
					    run->ops->name);
		if (f->time_based && !f->runtime_ns) {
			zrun_errf(run, "%s:%d: job '%s': time_based needs "
				       "runtime", f->file, f->line, f->name);
			return -EINVAL;
		}
		for (c = 0; c < f->numjobs; c++) {
			struct zrun_job *j = &run->jobs[run->nr_jobs];

			j->fio = f;
			j->idx = run->nr_jobs++;
			j->clone = c;
			j->phase = phase;
			j->rng = seed_mix(f->has_randseed ? f->randseed :
							    run->seed,
					  j->idx + 1);
			j->has_rate = zfio_rate_is_set(f);
			zfio_rate_init(&j->rate, f);
			j->rate_op = -1;
			j->offs.nr_left = 1;
			j->slots = calloc(f->iodepth, sizeof(*j->slots));
			if (!j->slots)
				return -ENOMEM;
			j->is_waiting = phase || f->wait_for[0] != '\0';
			if (f->runtime_ns) {
				if (f->ramp_time_ns > UINT64_MAX -
						      f->runtime_ns) {
					zrun_errf(run, "%s:%d: job '%s': "
						       "ramp_time + runtime "
						       "overflows", f->file,
						  f->line, f->name);
					return -EINVAL;
				}
				j->end_limit = f->ramp_time_ns + f->runtime_ns;
			}
			start_delay(j);
			ret = zfio_log_job_init(run, j);
			ret = ret ?: run->ops->job_init(run, j);
			ret = ret ?: check_seq_mod(run, j);
			if (ret)
				return ret;
			ret = zfio_dist_init(&j->dist, f,
					     zfio_rand_blocks(f, j->range_len),
					     f->has_randseed ? f->randseed :
							       run->seed,
					     j->rng, run->err,
					     sizeof(run->err));
			if (ret)
				return ret;
			if (!f->time_based && !j->bytes_goal) {
				if (j->range_len &&
				    f->loops > UINT64_MAX / j->range_len)
					return zrun_opt_err(run, f,
						ZFIO_OPT_LOOPS, "%u loops of "
						"%llu bytes overflow", f->loops,
						(unsigned long long)
							j->range_len);
				j->bytes_goal = j->range_len * f->loops;
			}
			if (f->io_size.is_set) {
				ret = io_size_goal(run, j);
				if (ret)
					return ret;
			}
			if (f->time_based || zfio_replay_is(j))
				j->bytes_goal = 0;	/* the log ends it */
		}
	}
	return 0;
}

/* Close the target (unmount); 0 or its error.  The jobs stay. */
static int close_target(struct zrun *run)
{
	if (!run->ops || !run->tpriv)
		return 0;
	return run->ops->close(run);
}

/* Close the target and the device; 0 or the target's close error. */
static int teardown(struct zrun *run)
{
	unsigned int i;
	int ret;

	(void)wa_stop(run);	/* a failed repetition: stop counting */
	ret = close_target(run);
	zrun_verify_free(run);
	zrun_ctl_free(run);
	for (i = 0; i < run->nr_jobs; i++) {
		free(run->jobs[i].slots);
		free(run->jobs[i].samples);
		free(run->jobs[i].sync_lat);
		zfio_log_job_free(&run->jobs[i]);
	}
	free(run->jobs);
	run->jobs = NULL;
	run->nr_jobs = 0;
	free(run->flows);
	run->flows = NULL;
	run->nr_flows = 0;
	free(run->base);
	run->base = NULL;
	run->tpriv = NULL;
	if (run->dev) {
		int r = run->time ? ztime_attach(run->dev, NULL) : 0;

		r = zdev_close(run->dev) ?: r;	/* saves images */
		if (r && !ret) {
			zrun_errf(run, "closing the device: %s", strerror(-r));
			ret = r;
		}
	}
	run->dev = NULL;
	ztime_destroy(run->time);
	run->time = NULL;
	for (i = 0; i < run->nr_more; i++) {
		struct zrun_dev *zd = &run->more[i];
		int r = zd->time ? ztime_attach(zd->dev, NULL) : 0;

		r = zdev_close(zd->dev) ?: r;
		if (r && !ret) {
			zrun_errf(run, "closing the device: %s", strerror(-r));
			ret = r;
		}
		ztime_destroy(zd->time);
		free(zd->base);
		memset(zd, 0, sizeof(*zd));
	}
	run->nr_more = 0;
	{
		int r = zrun_replace_close(run);

		ret = ret ?: r;
	}
	wa_free(run);
	return ret;
}

/* ---- statistics and output ------------------------------------------ */

struct stats {
	uint64_t ios, bytes, rd_ios, rd_bytes, wr_ios, wr_bytes, tr_ios;
	uint64_t t0, t1;		/* measured window, simulated ns */
	uint64_t wall_ns;		/* not simulated: the window, wall ns */
	double lat_mean;
	uint64_t p50, p99, p999, lat_max;
	/* fsync/fdatasync calls, latencies of those after ramp_time */
	uint64_t syncs;
	double sync_mean;
	uint64_t sync_p50, sync_p99, sync_max;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const uint32_t *v, uint64_t n, double p)
{
	uint64_t k;

	if (!n)
		return 0;
	k = (uint64_t)ceil(p * (double)n);
	if (k < 1)
		k = 1;
	return v[k - 1];
}

/* Stats over jobs [a, b). */
static int stats_of(const struct zrun *run, unsigned int a, unsigned int b,
		    struct stats *st)
{
	uint64_t n = 0, k, i;
	uint32_t *lat;
	double sum = 0;
	unsigned int j;

	memset(st, 0, sizeof(*st));
	st->t0 = UINT64_MAX;
	for (j = a; j < b; j++)
		n += run->jobs[j].nr_samples;
	lat = malloc((n + 1) * sizeof(*lat));
	if (!lat)
		return -ENOMEM;
	k = 0;
	for (j = a; j < b; j++) {
		const struct zrun_job *jb = &run->jobs[j];
		uint64_t m0 = jb->start + jb->fio->ramp_time_ns;

		if (jb->stats_from > m0)	/* latency_target's last window */
			m0 = jb->stats_from;

		if (m0 < st->t0)
			st->t0 = m0;
		if (jb->last_done > st->t1)
			st->t1 = jb->last_done;
		for (i = 0; i < jb->nr_samples; i++) {
			const struct zrun_sample *s = &jb->samples[i];

			lat[k++] = s->lat;
			sum += s->lat;
			st->ios++;
			if (s->op != ZRUN_OP_TRIM)	/* resets move no data */
				st->bytes += s->bytes;
			if (s->op == ZRUN_OP_READ) {
				st->rd_ios++;
				st->rd_bytes += s->bytes;
			} else if (s->op == ZRUN_OP_WRITE) {
				st->wr_ios++;
				st->wr_bytes += s->bytes;
			} else {
				st->tr_ios++;
			}
		}
	}
	if (st->t0 == UINT64_MAX || st->t0 > st->t1)
		st->t0 = st->t1;
	/* A real device: the jobs' clocks are only their own commands'
	 * wall latencies one after the other; rates are over wall time. */
	st->wall_ns = run->time ? 0 : run->sched_wall_ns;
	qsort(lat, n, sizeof(*lat), cmp_u32);
	st->lat_mean = n ? sum / (double)n : 0;
	st->p50 = pct(lat, n, 0.50);
	st->p99 = pct(lat, n, 0.99);
	st->p999 = pct(lat, n, 0.999);
	st->lat_max = n ? lat[n - 1] : 0;
	free(lat);

	n = 0;
	for (j = a; j < b; j++) {
		n += run->jobs[j].nr_sync_lat;
		st->syncs += run->jobs[j].nr_syncs;
	}
	lat = malloc((n + 1) * sizeof(*lat));
	if (!lat)
		return -ENOMEM;
	k = 0;
	sum = 0;
	for (j = a; j < b; j++) {
		for (i = 0; i < run->jobs[j].nr_sync_lat; i++) {
			lat[k++] = run->jobs[j].sync_lat[i];
			sum += run->jobs[j].sync_lat[i];
		}
	}
	qsort(lat, n, sizeof(*lat), cmp_u32);
	st->sync_mean = n ? sum / (double)n : 0;
	st->sync_p50 = pct(lat, n, 0.50);
	st->sync_p99 = pct(lat, n, 0.99);
	st->sync_max = n ? lat[n - 1] : 0;
	free(lat);
	return 0;
}

static void put_stats(FILE *f, const struct stats *st, const char *ind)
{
	double secs = (double)(st->t1 - st->t0) / NS;
	double rsecs = st->wall_ns ? (double)st->wall_ns / NS : secs;
	double iops = rsecs > 0 ? (double)st->ios / rsecs : 0;
	double bw = rsecs > 0 ? (double)st->bytes / rsecs : 0;

	fprintf(f, "%s\"ios\": %llu,\n", ind, (unsigned long long)st->ios);
	fprintf(f, "%s\"bytes\": %llu,\n", ind, (unsigned long long)st->bytes);
	fprintf(f, "%s\"read_ios\": %llu,\n", ind,
		(unsigned long long)st->rd_ios);
	fprintf(f, "%s\"write_ios\": %llu,\n", ind,
		(unsigned long long)st->wr_ios);
	fprintf(f, "%s\"trim_ios\": %llu,\n", ind,
		(unsigned long long)st->tr_ios);
	fprintf(f, "%s\"write_bytes\": %llu,\n", ind,
		(unsigned long long)st->wr_bytes);
	fprintf(f, "%s\"sim_time_s\": %.9f,\n", ind, secs);
	fprintf(f, "%s\"rate_basis\": \"%s\",\n", ind,
		st->wall_ns ? "wall" : "simulated");
	fprintf(f, "%s\"iops\": %.3f,\n", ind, iops);
	fprintf(f, "%s\"bw_bytes_per_s\": %.3f,\n", ind, bw);
	fprintf(f, "%s\"bw_mib_per_s\": %.3f,\n", ind, bw / 1048576.0);
	fprintf(f, "%s\"syncs\": %llu,\n", ind, (unsigned long long)st->syncs);
	fprintf(f, "%s\"syncs_per_s\": %.3f,\n", ind,
		rsecs > 0 ? (double)st->syncs / rsecs : 0.0);
	fprintf(f, "%s\"sync_lat_ns\": {\"mean\": %.3f, \"p50\": %llu, "
		   "\"p99\": %llu, \"max\": %llu},\n",
		ind, st->sync_mean, (unsigned long long)st->sync_p50,
		(unsigned long long)st->sync_p99,
		(unsigned long long)st->sync_max);
	fprintf(f, "%s\"lat_ns\": {\"mean\": %.3f, \"p50\": %llu, "
		   "\"p99\": %llu, \"p99.9\": %llu, \"max\": %llu}\n",
		ind, st->lat_mean, (unsigned long long)st->p50,
		(unsigned long long)st->p99, (unsigned long long)st->p999,
		(unsigned long long)st->lat_max);
}

struct rep_result {
	struct stats total;
	struct zdev_stats dev;
	uint64_t resets, finishes, user_writes;
	uint64_t host_written;	/* the jobs' writes, ramp included */
	uint64_t zone_unusable, block_groups, commits;
	uint64_t snapshots;	/* taken during the jobs (snapshot_interval) */
	uint64_t data_used;	/* fs: data bytes referenced at the end */
	struct zcow_reclaim_stats reclaim;
	int reclaim_policy;
	uint32_t reclaim_threshold, reclaim_high;
	uint64_t reclaimable;
	uint64_t data_live, data_space, pending_zones;
	double util_sum;	/* data utilization summed over the samples */
	uint64_t util_nr;
	bool has_fs;
	uint64_t fs_fsyncs, fs_log_syncs, fs_log_fallbacks, fs_statfs_commits;
	uint64_t fs_log_fallbacks_by[ZCOW_LOG_NR_FALLBACKS];
	uint64_t txn_fsyncs[ZRUN_TXN_NR];
	uint64_t commit_nodes[ZCOW_COMMIT_NR_TREES];
	uint64_t excl_waits, excl_wait_ns, sync_joins;
	uint64_t creates, renames, unlinks;
	uint32_t max_open;
	double wall_s;
	uint64_t nr_jobs;
	bool has_dbench;
	struct zdb_stats dbench;
	unsigned int dbench_clients;
	double dbench_secs;
	struct zrun_vstats verify;	/* run_verify.c */
	char verify_first[ZFIO_ERR_LEN];	/* its first failure; "" */
};

/*
 * "gc" (fs target): what cleaning cost, per host byte written: data
 * (data + relocated data) and metadata (all of it, and the nodes
 * relocation moved), commits per GiB; and the utilization the data
 * cycled through (live / the space data could use, pending zones
 * counted: docs/reclaim.md), the mean of the interval samples and at
 * the end, beside the pending zones at the end.
 */
static void put_gc(FILE *f, const struct rep_result *r,
		   const uint64_t *cls_written)
{
	double host = (double)r->host_written;

	if (!r->has_fs || !r->host_written)
		return;
	fprintf(f, "  \"gc\": {\"data_wa\": %.6f, \"meta_per_host\": %.6f, "
		   "\"reloc_meta_per_host\": %.6f, \"commits_per_gib\": %.3f, "
		   "\"data_utilization_mean\": ",
		(double)(cls_written[ZDEV_CLASS_DATA] +
			 cls_written[ZDEV_CLASS_RELOC]) / host,
		(double)cls_written[ZDEV_CLASS_META] / host,
		(double)r->reclaim.meta_bytes / host,
		(double)r->commits / (host / 1073741824.0));
	if (r->util_nr)
		fprintf(f, "%.6f", r->util_sum / (double)r->util_nr);
	else
		fprintf(f, "null");
	fprintf(f, ", \"data_utilization_end\": ");
	if (r->data_space)
		fprintf(f, "%.6f", (double)r->data_live / (double)r->data_space);
	else
		fprintf(f, "null");
	fprintf(f, ", \"pending_zones_at_end\": %llu},\n",
		(unsigned long long)r->pending_zones);
}

/* "reclaim" (fs target): the policy, its knob (the other one null), and
 * what it did during the jobs. */
static void put_reclaim(FILE *f, const struct rep_result *r)
{
	const struct zcow_reclaim_stats *s = &r->reclaim;
	int p = r->reclaim_policy;
	char threshold[16] = "null", high[16] = "null";
	const char *why;

	if (!r->has_fs)
		return;
	if (p == ZCOW_RECLAIM_THRESHOLD)
		snprintf(threshold, sizeof(threshold), "%u",
			 r->reclaim_threshold);
	if (!zcow_reclaim_knob_refused(p, 0, 1, &why))	/* has a watermark */
		snprintf(high, sizeof(high), "%u", r->reclaim_high);
	fprintf(f, "  \"reclaim\": {\"policy\": \"%s\", \"threshold\": %s, "
		   "\"high_zones\": %s, "
		   "\"passes\": %llu, \"groups_relocated\": %llu, "
		   "\"data_groups\": %llu, \"meta_groups\": %llu, "
		   "\"data_bytes_relocated\": %llu, "
		   "\"data_extents_relocated\": %llu, "
		   "\"meta_bytes_relocated\": %llu, "
		   "\"meta_nodes_relocated\": %llu, \"zones_reset\": %llu, "
		   "\"cleaner_steps\": %llu, \"writer_runs\": %llu, "
		   "\"reclaimable_at_end\": %llu},\n",
		zcow_reclaim_name(p), threshold, high,
		(unsigned long long)s->nr_passes,
		(unsigned long long)s->groups_relocated,
		(unsigned long long)s->data_groups,
		(unsigned long long)s->meta_groups,
		(unsigned long long)s->data_bytes,
		(unsigned long long)s->data_extents,
		(unsigned long long)s->meta_bytes,
		(unsigned long long)s->meta_nodes,
		(unsigned long long)s->zones_reset,
		(unsigned long long)s->cleaner_steps,
		(unsigned long long)s->writer_runs,
		(unsigned long long)r->reclaimable);
}

/* A ratio to the host's bytes; null when the jobs wrote nothing. */
static void put_ratio(FILE *f, uint64_t bytes, uint64_t host)
{
	if (host)
		fprintf(f, "%.6f", (double)bytes / (double)host);
	else
		fprintf(f, "null");
}

/*
 * "write_amplification_breakdown": the bytes the jobs wrote (every write
 * operation, ramp_time included, as the device counters), the device's
 * bytes written per I/O class (device_bytes_written), each class's ratio
 * to the host's bytes and their sum, the run's write amplification.
 */
static void put_wa_breakdown(FILE *f, uint64_t host,
			     const uint64_t cls_written[ZDEV_NR_CLASSES])
{
	uint64_t total = 0;
	unsigned int c;

	fprintf(f, "  \"write_amplification_breakdown\": {\n"
		   "    \"host_bytes_written\": %llu,\n"
		   "    \"device_bytes_written\": {", (unsigned long long)host);
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		fprintf(f, "%s\"%s\": %llu", c ? ", " : "",
			zdev_class_name(c),
			(unsigned long long)cls_written[c]);
		total += cls_written[c];
	}
	fprintf(f, "},\n    \"ratio_to_host\": {");
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		fprintf(f, "%s\"%s\": ", c ? ", " : "", zdev_class_name(c));
		put_ratio(f, cls_written[c], host);
	}
	fprintf(f, "},\n    \"device_bytes_written_total\": %llu,\n"
		   "    \"write_amplification\": ",
		(unsigned long long)total);
	put_ratio(f, total, host);
	fprintf(f, "\n  },\n");
}

/* "layout" and "mount_options" (fs target; null on the raw one): the
 * options the fs was mounted with, as in force (data_zones and reclaim
 * as the mount resolved them). */
static void put_mount(const struct zrun *run, FILE *f)
{
	const struct zrun_settings *set = &run->set;

	if (strcmp(run->ops->name, "fs")) {
		fprintf(f, "  \"layout\": null,\n  \"mount_options\": null,\n");
		return;
	}
	fprintf(f, "  \"layout\": \"%s\",\n", zrun_layout_name(set->layout));
	fprintf(f, "  \"mount_options\": {\"zone_append\": %s, \"treelog\": %s, "
		   "\"data_zones\": %u, \"commit_bytes\": %llu, "
		   "\"reclaim\": \"%s\", \"hotcold\": \"%s\", \"cleaner\": \"%s\"},\n",
		set->zone_append ? "true" : "false",
		set->treelog ? "true" : "false", run->fs_data_zones,
		(unsigned long long)(set->commit_bytes ? set->commit_bytes :
				     ZCOW_DEFAULT_COMMIT_BYTES),
		zcow_reclaim_name(run->fs_reclaim_policy),
		zcow_hotcold_name(set->hotcold),
		set->cleaner_background ? "background" : "writer");
}

/* "snapshots" (fs target; null on the raw one): snapshot_interval and
 * snapshot_max as set (null: not set), the snapshots taken during the
 * jobs and their names, and the data bytes the file system references
 * at the end (what the snapshots keep of the data the jobs overwrote or
 * deleted counts in it). */
static void put_snapshots(const struct zrun *run, const struct rep_result *r,
			  FILE *f)
{
	uint64_t i;

	if (strcmp(run->ops->name, "fs")) {
		fprintf(f, "  \"snapshots\": null,\n");
		return;
	}
	fprintf(f, "  \"snapshots\": {\"interval_s\": ");
	if (run->set.snapshot_interval_ns)
		fprintf(f, "%.6f", run->set.snapshot_interval_ns / 1e9);
	else
		fprintf(f, "null");
	fprintf(f, ", \"max\": ");
	if (run->set.snapshot_max)
		fprintf(f, "%u", run->set.snapshot_max);
	else
		fprintf(f, "null");
	fprintf(f, ", \"taken\": %llu, \"names\": [",
		(unsigned long long)r->snapshots);
	for (i = 0; i < r->snapshots; i++)
		fprintf(f, "%s\"snap-%llu\"", i ? ", " : "",
			(unsigned long long)i + 1);
	fprintf(f, "], \"data_used_bytes\": %llu},\n",
		(unsigned long long)r->data_used);
}

static int write_summary(struct zrun *run, const char *dir,
			 const char *scenario, const struct rep_result *reps,
			 unsigned int nr_reps)
{
	const struct rep_result *r0 = &reps[0];
	uint64_t dev_written = 0, cls_written[ZDEV_NR_CLASSES] = { 0 };
	unsigned int i, c;
	FILE *f;
	int ret = 0;

	f = zres_open(dir, "summary.json");
	if (!f)
		return -errno;
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		cls_written[c] = r0->dev.bytes[c][ZDEV_OP_WRITE] +
				 r0->dev.bytes[c][ZDEV_OP_APPEND];
		dev_written += cls_written[c];
	}
	fprintf(f, "{\n  \"zcow_version\": ");
	zres_json_str(f, zres_version());
	fprintf(f, ",\n  \"git_commit\": ");
	zres_json_str(f, zres_git());
	fprintf(f, ",\n  \"scenario\": ");
	zres_json_str(f, scenario);
	fprintf(f, ",\n  \"target\": ");
	zres_json_str(f, run->ops->name);
	fprintf(f, ",\n  \"device\": ");
	zres_json_str(f, run_device(run));
	fprintf(f, ",\n  \"profile\": ");
	zres_json_str(f, run->time ? run->set.profile : "none (wall clock)");
	fprintf(f, ",\n  \"zone_append\": %s,\n", run->set.zone_append ?
						      "true" : "false");
	fprintf(f, "  \"treelog\": %s,\n", run->set.treelog ? "true" : "false");
	put_mount(run, f);
	fprintf(f, "  \"commit_model\": \"%s\",\n",
		zrun_commit_model_name(run->set.commit_model));
	fprintf(f, "  \"seed\": %llu,\n  \"repetitions\": %u,\n",
		(unsigned long long)run->set.seed, nr_reps);
	fprintf(f, "  \"simulated\": %s,\n", run->time ? "true" : "false");
	zrun_replace_summary(run, f);
	put_snapshots(run, r0, f);
	fprintf(f, "  \"wall_time_s\": %.3f,\n", r0->wall_s);
	fprintf(f, "  \"total\": {\n");
	put_stats(f, &r0->total, "    ");
	fprintf(f, "  },\n  \"jobs\": [\n");
	for (i = 0; i < run->nr_jobs; i++) {
		struct stats st;
		const struct zrun_job *j = &run->jobs[i];

		ret = stats_of(run, i, i + 1, &st);
		if (ret)
			goto out;
		fprintf(f, "    {\n      \"name\": ");
		zres_json_str(f, j->fio->name);
		fprintf(f, ",\n      \"clone\": %u,\n      \"rw\": \"%s\",\n"
			   "      \"bs\": %llu,\n      \"iodepth\": %u,\n",
			j->clone, zfio_rw_name(j->fio->rw),
			(unsigned long long)j->fio->bs, j->fio->iodepth);
		/* When it started (its stonewall phase, wait_for) and
		 * ended, simulated ns. */
		fprintf(f, "      \"phase\": %u,\n      \"start_ns\": %llu,\n"
			   "      \"end_ns\": %llu,\n", j->phase,
			(unsigned long long)j->start,
			(unsigned long long)j->last_done);
		zrun_ctl_put_job(f, run, j, "      ");
		put_stats(f, &st, "      ");
		fprintf(f, "    }%s\n", i + 1 < run->nr_jobs ? "," : "");
	}
	fprintf(f, "  ],\n  \"device_bytes_written\": {");
	for (c = 0; c < ZDEV_NR_CLASSES; c++)
		fprintf(f, "%s\"%s\": %llu", c ? ", " : "",
			zdev_class_name(c),
			(unsigned long long)cls_written[c]);
	fprintf(f, "},\n  \"device_bytes_read\": %llu,\n",
		(unsigned long long)({
			uint64_t s = 0;
			for (c = 0; c < ZDEV_NR_CLASSES; c++)
				s += r0->dev.bytes[c][ZDEV_OP_READ];
			s;
		}));
	fprintf(f, "  \"device_commands\": {");
	for (c = 0; c < ZDEV_NR_OPS; c++) {
		uint64_t s = 0;
		unsigned int k;

		for (k = 0; k < ZDEV_NR_CLASSES; k++)
			s += r0->dev.cmds[k][c];
		fprintf(f, "%s\"%s\": %llu", c ? ", " : "", zdev_op_name(c),
			(unsigned long long)s);
	}
	fprintf(f, "},\n  \"write_amplification\": %.6f,\n",
		r0->total.wr_bytes ? (double)dev_written /
					     (double)r0->total.wr_bytes : 0.0);
	put_wa_breakdown(f, r0->host_written, cls_written);
	fprintf(f, "  \"zone_resets\": %llu,\n  \"zone_finishes\": %llu,\n",
		(unsigned long long)r0->resets,
		(unsigned long long)r0->finishes);
	fprintf(f, "  \"zone_unusable\": %llu,\n  \"block_groups\": %llu,\n"
		   "  \"commits\": %llu,\n",
		(unsigned long long)r0->zone_unusable,
		(unsigned long long)r0->block_groups,
		(unsigned long long)r0->commits);
	put_reclaim(f, r0);
	put_gc(f, r0, cls_written);
	zrun_verify_summary(run, &r0->verify, f);
	/* Where the time goes: commands and bytes per I/O class, and the
	 * fs's own fsync counters (zcow_statfs). */
	fprintf(f, "  \"device_commands_by_class\": {\n");
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		unsigned int k;

		fprintf(f, "    \"%s\": {", zdev_class_name(c));
		for (k = 0; k < ZDEV_NR_OPS; k++)
			fprintf(f, "%s\"%s\": %llu", k ? ", " : "",
				zdev_op_name(k),
				(unsigned long long)r0->dev.cmds[c][k]);
		fprintf(f, "}%s\n", c + 1 < ZDEV_NR_CLASSES ? "," : "");
	}
	fprintf(f, "  },\n  \"device_bytes_read_by_class\": {");
	for (c = 0; c < ZDEV_NR_CLASSES; c++)
		fprintf(f, "%s\"%s\": %llu", c ? ", " : "",
			zdev_class_name(c),
			(unsigned long long)r0->dev.bytes[c][ZDEV_OP_READ]);
	fprintf(f, "},\n  \"fs_fsync\": {\"nr_fsyncs\": %llu, "
		   "\"nr_log_syncs\": %llu, \"nr_log_fallbacks\": %llu, "
		   "\"nr_commits\": %llu, \"txn_durable\": %llu, "
		   "\"txn_shared\": %llu, \"txn_committed\": %llu},\n",
		(unsigned long long)r0->fs_fsyncs,
		(unsigned long long)r0->fs_log_syncs,
		(unsigned long long)r0->fs_log_fallbacks,
		(unsigned long long)r0->fs_statfs_commits,
		(unsigned long long)r0->txn_fsyncs[ZRUN_TXN_DURABLE],
		(unsigned long long)r0->txn_fsyncs[ZRUN_TXN_SHARE],
		(unsigned long long)r0->txn_fsyncs[ZRUN_TXN_COMMIT]);
	/* The fsyncs and the full commits they fell back to, by cause
	 * (zcow_log_fallback_name()); 0 on the raw target. */
	fprintf(f, "  \"fsyncs\": %llu,\n  \"fsync_fallbacks\": %llu,\n"
		   "  \"fsync_fallback_causes\": {",
		(unsigned long long)r0->fs_fsyncs,
		(unsigned long long)r0->fs_log_fallbacks);
	for (c = 0; c < ZCOW_LOG_NR_FALLBACKS; c++)
		fprintf(f, "%s\"%s\": %llu", c ? ", " : "",
			zcow_log_fallback_name((int)c),
			(unsigned long long)r0->fs_log_fallbacks_by[c]);
	fprintf(f, "},\n");
	fprintf(f, "  \"commit_nodes_by_tree\": {");
	for (c = 0; c < ZCOW_COMMIT_NR_TREES; c++)
		fprintf(f, "%s\"%s\": %llu", c ? ", " : "",
			zcow_commit_tree_name((int)c),
			(unsigned long long)r0->commit_nodes[c]);
	fprintf(f, "},\n");
	fprintf(f, "  \"lock_waits\": {\"nr_waits\": %llu, "
		   "\"wait_s\": %.9f, \"syncs_joined\": %llu},\n",
		(unsigned long long)r0->excl_waits,
		(double)r0->excl_wait_ns / NS,
		(unsigned long long)r0->sync_joins);
	fprintf(f, "  \"namespace\": {\"creates\": %llu, \"renames\": %llu, "
		   "\"unlinks\": %llu, \"max_open_files\": %u},\n",
		(unsigned long long)r0->creates,
		(unsigned long long)r0->renames,
		(unsigned long long)r0->unlinks, r0->max_open);
	if (r0->has_dbench)
		zdb_put_json(f, &r0->dbench, r0->dbench_secs,
			     r0->dbench_clients,
			     r0->dbench.done[ZDB_FLUSH], "  ");
	fprintf(f, "  \"crash_points\": [");
	for (i = 0; i < run->set.nr_crash; i++) {
		fprintf(f, "%s", i ? ", " : "");
		zres_json_str(f, run->set.crash[i]);
	}
	fprintf(f, "],\n");
	zfio_log_put_json(f, run);
	fprintf(f, "  \"ignored_options\": [");
	for (i = 0; i < run->spec->nr_ignored; i++) {
		fprintf(f, "%s", i ? ", " : "");
		zres_json_str(f, run->spec->ignored[i]);
	}
	fprintf(f, "],\n  \"runs\": [\n");
	for (i = 0; i < nr_reps; i++) {
		const struct stats *rt = &reps[i].total;
		uint64_t win = rt->wall_ns ? rt->wall_ns : rt->t1 - rt->t0;

		fprintf(f, "    {\"seed\": %llu, \"iops\": %.3f, "
			   "\"bw_mib_per_s\": %.3f, \"lat_mean_ns\": %.3f, "
			   "\"sim_time_s\": %.9f, \"wall_time_s\": %.3f}%s\n",
			(unsigned long long)(run->set.seed + i),
			win ? (double)rt->ios * NS / (double)win : 0.0,
			win ? (double)rt->bytes * NS / (double)win /
				      1048576.0 : 0.0,
			reps[i].total.lat_mean,
			(double)(reps[i].total.t1 - reps[i].total.t0) / NS,
			reps[i].wall_s, i + 1 < nr_reps ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
out:
	if (fclose(f) && !ret)
		ret = -EIO;
	return ret;
}

/* dbench.txt: dbench's report of the loadfile jobs (first repetition). */
static int write_dbench(const char *dir, const struct rep_result *r0)
{
	FILE *f;

	if (!r0->has_dbench)
		return 0;
	f = zres_open(dir, "dbench.txt");
	if (!f)
		return -errno;
	zdb_put_text(f, &r0->dbench, r0->dbench_secs, r0->dbench_clients,
		     r0->dbench.done[ZDB_FLUSH]);
	return fclose(f) ? -EIO : 0;
}

/*
 * intervals.csv, one row per interval of the run: the jobs' operations
 * completed in it (IOPS, MiB/s, latency), then its write amplification:
 * the bytes the jobs' writes wrote, the device's bytes written per I/O
 * class and in all, and their ratio ("" when the jobs wrote nothing).
 */
static int write_intervals(struct zrun *run, const char *dir)
{
	uint64_t iv = run->set.interval_ns, nb, b, i;
	unsigned int j, c;
	uint64_t *ios, *bytes;
	struct wa_bucket *wa;
	double *lsum;
	uint32_t *lmax;
	FILE *f;

	nb = run->now_max / iv + 1;
	if (nb > MAX_INTERVALS)
		nb = MAX_INTERVALS;
	ios = calloc(nb, sizeof(*ios));
	bytes = calloc(nb, sizeof(*bytes));
	lsum = calloc(nb, sizeof(*lsum));
	lmax = calloc(nb, sizeof(*lmax));
	wa = calloc(nb, sizeof(*wa));
	f = zres_open(dir, "intervals.csv");
	if (!ios || !bytes || !lsum || !lmax || !wa || !f) {
		int ret = f ? -ENOMEM : -errno;

		free(ios);
		free(bytes);
		free(lsum);
		free(lmax);
		free(wa);
		if (f)
			fclose(f);
		return ret;
	}
	for (j = 0; j < run->nr_jobs; j++) {
		const struct zrun_job *jb = &run->jobs[j];

		for (i = 0; i < jb->nr_samples; i++) {
			const struct zrun_sample *s = &jb->samples[i];

			b = s->done / iv;
			if (b >= nb)
				b = nb - 1;
			ios[b]++;
			bytes[b] += s->bytes;
			lsum[b] += s->lat;
			if (s->lat > lmax[b])
				lmax[b] = s->lat;
		}
	}
	/* Every command completes by the jobs' end (now_max); a later one
	 * would go to the last row, as samples do. */
	for (i = 0; run->wa && i < run->wa->nr; i++) {
		const struct wa_bucket *w = &run->wa->b[i];

		b = i < nb ? i : nb - 1;
		wa[b].host += w->host;
		for (c = 0; c < ZDEV_NR_CLASSES; c++)
			wa[b].dev[c] += w->dev[c];
		if (w->has_unusable) {
			wa[b].unusable = w->unusable;
			wa[b].live = w->live;
			wa[b].space = w->space;
			wa[b].commits = w->commits;
			wa[b].has_unusable = true;
		}
	}
	fprintf(f, "t_start_s,t_end_s,ios,bytes,iops,mib_per_s,"
		   "lat_mean_us,lat_max_us,host_bytes_written");
	for (c = 0; c < ZDEV_NR_CLASSES; c++)
		fprintf(f, ",device_bytes_written_%s", zdev_class_name(c));
	fprintf(f, ",device_bytes_written,wa,zone_unusable,data_wa,"
		   "data_utilization,commits\n");
	for (b = 0; b < nb; b++) {
		double secs = (double)iv / NS;
		uint64_t dev = 0;

		fprintf(f, "%.6f,%.6f,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%llu",
			(double)(b * iv) / NS, (double)((b + 1) * iv) / NS,
			(unsigned long long)ios[b],
			(unsigned long long)bytes[b], (double)ios[b] / secs,
			(double)bytes[b] / secs / 1048576.0,
			ios[b] ? lsum[b] / (double)ios[b] / 1000.0 : 0.0,
			(double)lmax[b] / 1000.0,
			(unsigned long long)wa[b].host);
		for (c = 0; c < ZDEV_NR_CLASSES; c++) {
			fprintf(f, ",%llu", (unsigned long long)wa[b].dev[c]);
			dev += wa[b].dev[c];
		}
		fprintf(f, ",%llu,", (unsigned long long)dev);
		if (wa[b].host)
			fprintf(f, "%.6f", (double)dev / (double)wa[b].host);
		fprintf(f, ",");
		if (wa[b].has_unusable)
			fprintf(f, "%llu", (unsigned long long)wa[b].unusable);
		fprintf(f, ",");
		if (wa[b].host)
			fprintf(f, "%.6f",
				(double)(wa[b].dev[ZDEV_CLASS_DATA] +
					 wa[b].dev[ZDEV_CLASS_RELOC]) /
					(double)wa[b].host);
		fprintf(f, ",");
		if (wa[b].has_unusable && wa[b].space)
			fprintf(f, "%.6f",
				(double)wa[b].live / (double)wa[b].space);
		fprintf(f, ",");
		if (wa[b].has_unusable)
			fprintf(f, "%llu", (unsigned long long)wa[b].commits);
		fprintf(f, "\n");
	}
	free(ios);
	free(bytes);
	free(lsum);
	free(lmax);
	free(wa);
	return fclose(f) ? -EIO : 0;
}

static int write_config(struct zrun *run, const char *dir, const char *src,
			const char *const *sets, unsigned int nr_sets)
{
	unsigned int i;
	FILE *f;

	f = zres_open(dir, "config.fio");
	if (!f)
		return -errno;
	fprintf(f, "; resolved from %s", src);
	for (i = 0; i < nr_sets; i++)
		fprintf(f, " --set %s", sets[i]);
	fprintf(f, "\n; every job with all of its options after [global]\n"
		   "; inheritance and --set; the [zcow] section as applied\n\n");
	fprintf(f, "[zcow]\ndevice=%s\nprofile=%s\ntarget=%s\n"
		   "zone_append=%s\nnodesize=%u\ntreelog=%s\n"
		   "repetitions=%u\nseed=%llu\ntrace=%s\ninterval=%lluus\n"
		   "prefill=%s\nreclaim=%s\n",
		run_device(run),
		run->set.profile, run->ops->name,
		run->set.zone_append ? "on" : "off", run->set.nodesize,
		run->set.treelog ? "on" : "off", run->set.repetitions,
		(unsigned long long)run->set.seed,
		run->set.trace ? "on" : "off",
		(unsigned long long)(run->set.interval_ns / 1000),
		run->set.prefill ? "on" : "off",
		zcow_reclaim_name(run->set.reclaim));
	if (run->set.reclaim_threshold)
		fprintf(f, "reclaim_threshold=%u\n",
			run->set.reclaim_threshold);
	if (run->set.reclaim_high)
		fprintf(f, "reclaim_high=%u\n", run->set.reclaim_high);
	if (run->set.hotcold)
		fprintf(f, "hotcold=%s\n", zcow_hotcold_name(run->set.hotcold));
	if (run->set.cleaner_background)
		fprintf(f, "cleaner=background\n");
	if (!strcmp(run->ops->name, "fs"))
		fprintf(f, "layout=%s\n", zrun_layout_name(run->set.layout));
	if (run->set.data_zones)
		fprintf(f, "data_zones=%u\n", run->set.data_zones);
	if (run->set.commit_bytes)
		fprintf(f, "commit_bytes=%llu\n",
			(unsigned long long)run->set.commit_bytes);
	if (run->set.snapshot_interval_ns)
		fprintf(f, "snapshot_interval=%lluus\n",
			(unsigned long long)(run->set.snapshot_interval_ns /
					     1000));
	if (run->set.snapshot_max)
		fprintf(f, "snapshot_max=%u\n", run->set.snapshot_max);
	fprintf(f, "commit_model=%s\n",
		zrun_commit_model_name(run->set.commit_model));
	for (i = 0; i < run->set.nr_crash; i++)
		fprintf(f, "crash=%s\n", run->set.crash[i]);
	fprintf(f, "\n");
	for (i = 0; i < run->spec->nr_jobs; i++)
		zfio_print_job(f, &run->spec->jobs[i]);
	return fclose(f) ? -EIO : 0;
}

static void scenario_name(const char *path, char *name, size_t len)
{
	const char *b = strrchr(path, '/');
	const char *dot;

	b = b ? b + 1 : path;
	dot = strrchr(b, '.');
	snprintf(name, len, "%.*s", (int)(dot && dot != b ? dot - b :
					   (long)strlen(b)), b);
}

static int one_rep(struct zrun *run, const char *dir, struct rep_result *r)
{
	uint64_t w0 = wall_ns();
	unsigned int m;
	FILE *trace = NULL;
	int ret;

	ret = open_device(run);
	if (ret)
		return ret;
	if (run->set.trace && dir && zsim_from_dev(run->dev)) {
		trace = zres_open(dir, "trace.csv");
		if (!trace)
			return -errno;
		fprintf(trace, "seq,class,op,zone,offset,length,result,"
			       "durability\n");
		zsim_trace_csv(zsim_from_dev(run->dev), trace);
	}
	run->res_dir = dir;
	ret = run->ops->open(run);
	ret = ret ?: setup_jobs(run);
	ret = ret ?: zrun_verify_setup(run);
	ret = ret ?: setup_flows(run);
	ret = ret ?: zrun_ctl_setup(run);
	ret = ret ?: zrun_replace_open(run);
	run->sn_taken = 0;
	run->sn_due = run->set.snapshot_interval_ns ?
		      run->set.snapshot_interval_ns : UINT64_MAX;
	if (!ret && run->set.snapshot_interval_ns && !run->ops->snapshot) {
		/* not reached: pick_target() refuses it on the raw target */
		zrun_errf(run, "snapshot_interval= needs the fs target");
		ret = -EINVAL;
	}
	if (!ret) {
		/* Prefill and set-up are not part of the measurement. */
		run->base = calloc(1, sizeof(*run->base));
		if (!run->base)
			ret = -ENOMEM;
		else
			zdev_get_stats(run->dev, run->base);
		for (m = 0; !ret && m < run->nr_more; m++) {
			run->more[m].base = calloc(1, sizeof(*run->base));
			if (!run->more[m].base)
				ret = -ENOMEM;
			else
				zdev_get_stats(run->more[m].dev,
					       run->more[m].base);
		}
		run->zone_resets = 0;
		run->zone_finishes = 0;
		/* Device bytes by interval: from the same point on. */
		ret = ret ?: wa_start(run);
	}
	if (!ret) {
		uint64_t s0 = wall_ns();

		zfio_log_start(run);
		ret = schedule(run);
		run->sched_wall_ns = wall_ns() - s0;
	}
	if (!ret) {
		unsigned int i;

		for (i = 0; i < run->nr_jobs && !ret; i++)
			if (!run->jobs[i].is_done)
				ret = finish_job(run, &run->jobs[i]);
	}
	if (!ret && run->ops->finish)
		ret = run->ops->finish(run);
	if (!ret && dir)
		ret = zfio_log_write(run, dir);
	{
		/* The counters below end here too. */
		int e = wa_stop(run);

		ret = ret ?: e;
	}
	if (!ret) {
		unsigned int i;

		r->host_written = wa_host_total(run->wa);

		r->zone_unusable = run->fs_zone_unusable;
		r->block_groups = run->fs_block_groups;
		r->commits = run->fs_commits;
		r->snapshots = run->sn_taken;
		r->data_used = run->fs_data_used;
		r->has_fs = run->has_fs_stats;
		r->reclaim = run->fs_reclaim;
		r->reclaim_policy = run->fs_reclaim_policy;
		r->reclaim_threshold = run->fs_reclaim_threshold;
		r->reclaim_high = run->fs_reclaim_high;
		r->reclaimable = run->fs_reclaimable;
		r->data_live = run->fs_data_live;
		r->data_space = run->fs_data_space;
		r->pending_zones = run->fs_pending_zones;
		wa_utilization(run->wa, &r->util_sum, &r->util_nr);
		r->fs_fsyncs = run->fs_fsyncs;
		r->fs_log_syncs = run->fs_log_syncs;
		r->fs_log_fallbacks = run->fs_log_fallbacks;
		memcpy(r->fs_log_fallbacks_by, run->fs_log_fallbacks_by,
		       sizeof(r->fs_log_fallbacks_by));
		r->fs_statfs_commits = run->fs_statfs_commits;
		memcpy(r->txn_fsyncs, run->nr_txn_fsyncs,
		       sizeof(r->txn_fsyncs));
		memcpy(r->commit_nodes, run->fs_commit_nodes,
		       sizeof(r->commit_nodes));
		r->excl_waits = run->nr_excl_waits;
		r->excl_wait_ns = run->excl_wait_ns;
		r->sync_joins = run->nr_sync_joins;
		r->creates = r->renames = r->unlinks = 0;
		r->max_open = 0;
		for (i = 0; i < run->nr_jobs; i++) {
			r->creates += run->jobs[i].nr_creates;
			r->renames += run->jobs[i].nr_renames;
			r->unlinks += run->jobs[i].nr_unlinks;
			if (run->jobs[i].max_open > r->max_open)
				r->max_open = run->jobs[i].max_open;
		}
		ret = stats_of(run, 0, run->nr_jobs, &r->total);
		zrun_dev_stats(run, &r->dev);
		r->resets = run->zone_resets;
		r->finishes = run->zone_finishes;
		r->nr_jobs = run->nr_jobs;
		r->has_dbench = run->has_dbench;
		r->dbench = run->dbench;
		r->dbench_clients = run->dbench_clients;
		r->dbench_secs = run->dbench_secs;
		zrun_verify_stats(run, &r->verify);
		zrun_verify_first(run, r->verify_first,
				  sizeof(r->verify_first));
	}
	if (trace) {
		zsim_trace_csv(zsim_from_dev(run->dev), NULL);
		if (fclose(trace) && !ret) {
			zrun_errf(run, "writing trace.csv: %s", strerror(errno));
			ret = -EIO;
		}
	}
	r->wall_s = (double)(wall_ns() - w0) / NS;
	return ret;
}

int zrun_scenario(const char *path, const char *const *sets,
		  unsigned int nr_sets, const char *results_parent,
		  bool is_quiet, char **dir_ret)
{
	return zrun_scenario_in(path, sets, nr_sets, results_parent, NULL,
				is_quiet, dir_ret);
}

/* The results folder @exact itself: created, never one that exists. */
static int make_exact_dir(const char *exact, char **dir_ret)
{
	char *dir;

	if (mkdir(exact, 0777))
		return -errno;
	dir = strdup(exact);
	if (!dir) {
		rmdir(exact);
		return -ENOMEM;
	}
	*dir_ret = dir;
	return 0;
}

int zrun_scenario_in(const char *path, const char *const *sets,
		     unsigned int nr_sets, const char *results_parent,
		     const char *exact, bool is_quiet, char **dir_ret)
{
	struct zrun *run = calloc(1, sizeof(*run));
	const char **fio_sets = calloc(nr_sets + 1, sizeof(*fio_sets));
	struct rep_result *reps = NULL;
	unsigned int i;
	char name[64], *dir = NULL;
	bool has_results = false;
	int ret;

	if (!run || !fio_sets) {
		free(run);
		free(fio_sets);
		return -ENOMEM;
	}
	run->is_quiet = is_quiet;
	zrun_settings_default(&run->set);
	/* --set: zcow keys here, the rest go to every job. */
	for (i = 0; i < nr_sets; i++) {
		const char *eq = strchr(sets[i], '=');
		char key[ZFIO_NAME_LEN];

		snprintf(key, sizeof(key), "%.*s",
			 eq ? (int)(eq - sets[i]) : (int)strlen(sets[i]),
			 sets[i]);
		fio_sets[i] = zrun_is_zcow_key(key) ? NULL : sets[i];
	}
	ret = zfio_parse_file(path, fio_sets, nr_sets, &run->spec, run->err,
			      sizeof(run->err));
	if (ret)
		goto out;
	/* A [crash] section makes a crash campaign (docs/crash.md). */
	if (run->spec->nr_crash || !run->spec->nr_jobs) {
		if (run->spec->nr_crash)
			snprintf(run->err, sizeof(run->err),
				 "%s:%d: a [crash] section: a crash campaign, "
				 "run it with zcow crash",
				 run->spec->crash[0].file,
				 run->spec->crash[0].line);
		else
			snprintf(run->err, sizeof(run->err),
				 "%s: a [crash] section and no job: a crash "
				 "campaign, run it with zcow crash", path);
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < run->spec->nr_zcow; i++) {
		ret = zrun_zcow_apply(&run->set, &run->spec->zcow[i],
				      run->err, sizeof(run->err));
		if (ret)
			goto out;
	}
	for (i = 0; i < nr_sets; i++) {
		struct zfio_kv kv = { .has_val = true, .line = (int)i + 1 };
		const char *eq = strchr(sets[i], '=');

		if (!eq) {
			/* A bare zcow key never reaches the fio parser. */
			snprintf(kv.key, sizeof(kv.key), "%s", sets[i]);
			snprintf(kv.file, sizeof(kv.file), "--set");
			if (!zrun_is_zcow_key(kv.key))
				continue;	/* the fio parser reported it */
			ret = bad(run->err, sizeof(run->err), &kv,
				  "not key=value");
			goto out;
		}
		snprintf(kv.key, sizeof(kv.key), "%.*s", (int)(eq - sets[i]),
			 sets[i]);
		snprintf(kv.val, sizeof(kv.val), "%s", eq + 1);
		snprintf(kv.file, sizeof(kv.file), "--set");
		ret = zrun_settings_apply(&run->set, &kv, run->err,
					  sizeof(run->err));
		if (ret == -ENOENT)
			ret = 0;
		if (ret)
			goto out;
	}
	ret = zrun_settings_check(&run->set, run->err, sizeof(run->err));
	if (ret)
		goto out;
	ret = pick_target(run);
	if (ret)
		goto out;
	if (run->set.name[0])
		snprintf(name, sizeof(name), "%s", run->set.name);
	else
		scenario_name(path, name, sizeof(name));
	reps = calloc(run->set.repetitions, sizeof(*reps));
	if (!reps) {
		ret = -ENOMEM;
		goto out;
	}
	if (exact) {
		ret = make_exact_dir(exact, &dir);
		if (ret) {
			zrun_errf(run, "cannot create the results folder "
				       "'%s': %s", exact, strerror(-ret));
			goto out;
		}
	} else {
		ret = zres_make_dir(results_parent ? results_parent :
				    run->set.results, name, &dir);
	}
	if (ret) {
		zrun_errf(run, "cannot create the results folder under '%s': "
			       "%s", results_parent ? results_parent :
			  run->set.results, strerror(-ret));
		goto out;
	}
	for (i = 0; i < run->set.repetitions; i++) {
		run->seed = run->set.seed + i;
		ret = i ? teardown(run) : 0;
		ret = ret ?: one_rep(run, i == 0 ? dir : NULL, &reps[i]);
		if (ret)
			goto out;
		if (i == 0) {
			ret = write_intervals(run, dir);
			if (ret)
				goto out;
		}
		if (i + 1 < run->set.repetitions)
			continue;
	}
	/* The per-job figures are the last repetition's; re-run rep 0
	 * when there were several so jobs[] matches total (rep 0). */
	if (run->set.repetitions > 1) {
		run->seed = run->set.seed;
		ret = teardown(run);
		ret = ret ?: one_rep(run, NULL, &reps[0]);
		if (ret)
			goto out;
	}
	/* The file system is unmounted before the results are written: a
	 * failed unmount fails the run. */
	ret = close_target(run);
	ret = ret ?: write_config(run, dir, path, sets, nr_sets);
	ret = ret ?: write_summary(run, dir, name, reps,
				   run->set.repetitions);
	ret = ret ?: write_dbench(dir, &reps[0]);
	/* A job that failed (run_ctl.c) or failed verification fails
	 * the run, its results written: the folder is the caller's too
	 * (fio: the job's error, the exit status). */
	has_results = !ret;
	for (i = 0; !ret && i < run->set.repetitions; i++) {
		if (!reps[i].verify_first[0])
			continue;
		zrun_errf(run, "%s", reps[i].verify_first);
		ret = -EILSEQ;
	}
	ret = ret ?: zrun_ctl_result(run);
out:
	{
		int r = teardown(run);

		ret = ret ?: r;
	}
	if (ret && !run->err[0])
		zrun_errf(run, "%s", strerror(-ret));
	if (ret)
		fprintf(stderr, "zcow run: %s\n", run->err);
	if (has_results && dir_ret)
		*dir_ret = dir;
	else
		free(dir);
	zfio_log_free(run);
	zfio_free(run->spec);
	free(reps);
	free(fio_sets);
	free(run);
	return ret;
}

void zrun_tick_start(struct zrun *run, struct zrun_tick *tk, uint64_t now)
{
	unsigned int i;

	tk->now = now;
	tk->w0 = run->time ? 0 : wall_ns();
	run->tick_now = tk->now;
	run->tick_w0 = tk->w0;
	if (run->time)
		ztime_set_now(run->time, now);
	if (run->rp_time)
		ztime_set_now(run->rp_time, now);
	for (i = 0; i < run->nr_more; i++)
		if (run->more[i].time)
			ztime_set_now(run->more[i].time, now);
}

uint64_t zrun_tick_done(struct zrun *run, const struct zrun_tick *tk)
{
	uint64_t done;
	unsigned int i;

	if (!run->time)
		return tk->now + (wall_ns() - tk->w0);
	done = ztime_max_done(run->time);
	if (run->rp_time && ztime_max_done(run->rp_time) > done)
		done = ztime_max_done(run->rp_time);
	for (i = 0; i < run->nr_more; i++)
		if (run->more[i].time &&
		    ztime_max_done(run->more[i].time) > done)
			done = ztime_max_done(run->more[i].time);
	return done;
}
