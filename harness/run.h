/* SPDX-License-Identifier: MIT */
/*
 * zrun: the workload runner.  A scenario (configs/README.md) is fio jobs
 * (harness/fio.h) plus zcow settings; zrun runs the jobs against a target
 * in simulated time and writes the results folder.
 *
 * Simulated time is a deterministic discrete-event schedule: every job
 * (every numjobs clone) has iodepth slots, each free at some simulated
 * time; the scheduler always lets the job whose earliest slot frees first
 * (ties: lowest job index) submit one operation at that time, and the
 * timing model (sim/ztime.h), attached to the simulator, says when the
 * device commands it caused complete; what a call held (the fs's locks:
 * enum zrun_excl) keeps the other jobs' calls from starting before it
 * completes.  The same scenario and seed give
 * the same numbers on any machine.  On a device that is not simulated,
 * only wall-clock time applies.
 *
 * Targets plug in through struct zrun_target_ops: the raw device (fio's
 * zonemode=zbd) is run_raw.c, the file-system target (files of a zcow
 * file system) run_fs.c.
 *
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_RUN_H
#define ZCOW_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dbench.h"
#include "fio.h"
#include "zcow.h"

struct zdev;
struct ztime;
struct zrun_wa;
struct zrun_vjob;
struct zrun_verify;

#define ZRUN_MAX_CRASH	16
#define ZRUN_SPEC_LEN	512

/*
 * layout=NAME: a preset of the fs target's mount keys (configs/README.md):
 *   ZRUN_LAYOUT_ZCOW: zcow's defaults (data_zones default, reclaim
 *	default, hotcold off);
 *   ZRUN_LAYOUT_BTRFS_5_12: the allocator of the seed (btrfs zoned v15,
 *	Linux 5.12): one data block group written at a time
 *	(data_zones=1), no reclaim (reclaim=off), hotcold off.
 * A key the scenario or --set gives explicitly wins over the preset,
 * whichever comes first.
 */
enum zrun_layout {
	ZRUN_LAYOUT_ZCOW,
	ZRUN_LAYOUT_BTRFS_5_12,
	ZRUN_NR_LAYOUTS
};
/* "zcow", "btrfs-5.12". */
const char *zrun_layout_name(int layout);

/* The mount keys a layout presets (struct zrun_settings.explicit_keys). */
enum {
	ZRUN_KEY_DATA_ZONES = 1u << 0,
	ZRUN_KEY_RECLAIM = 1u << 1,
	ZRUN_KEY_HOTCOLD = 1u << 2,
};

/*
 * How the fs target places a commit in simulated time (commit_model=,
 * docs/timing.md, "Transactions"):
 *   ZRUN_COMMIT_BTRFS   btrfs's transaction states: the other jobs are
 *                       held only until the commit's critical section
 *                       ends (TRANS_STATE_UNBLOCKED); they run on into
 *                       the next transaction while it writes, and a
 *                       commit waits for the one before it to be durable;
 *   ZRUN_COMMIT_GLOBAL  a commit holds every job until it is durable.
 */
enum zrun_commit_model {
	ZRUN_COMMIT_BTRFS,
	ZRUN_COMMIT_GLOBAL,
};

/*
 * commit_model=btrfs: the commits of a run in simulated time, in
 * generation order (the fs target keeps them, run_fs.c).  Each commit
 * made generation @gen durable (TRANS_STATE_SUPER_COMMITTED) at @done;
 * the call that ran it started at @start.  A commit is never durable
 * before the one before it.
 */
struct zrun_txn {
	uint64_t gen, start, done;
};

struct zrun_txns {
	struct zrun_txn *v;
	uint64_t nr, cap;
};

/* What an fsync without the tree-log does at its start (btrfs_sync_file,
 * docs/timing.md "Transactions"). */
enum zrun_txn_fsync {
	ZRUN_TXN_DURABLE,	/* its change is durable: nothing to do */
	ZRUN_TXN_SHARE,		/* a commit that covers it began at the
				 * same time: wait for that commit */
	ZRUN_TXN_COMMIT,	/* commit the running transaction, after
				 * the commit in progress */
	ZRUN_TXN_NR,
};

/* Record generation @gen durable at @done (raised to the last commit's
 * done), run by a call that started at @start; a @gen not above the last
 * one is ignored.  0 or -ENOMEM. */
int zrun_txn_note(struct zrun_txns *t, uint64_t gen, uint64_t start,
		  uint64_t done);
/* Is transaction @transid durable at simulated time @now? */
bool zrun_txn_is_durable(const struct zrun_txns *t, uint64_t transid,
			 uint64_t now);
/*
 * The transaction a change made at @now joins, the fs's last commit
 * being generation @gen: @gen when that commit's call started at @now
 * (the calls released at one instant all join the transaction before
 * the first of them moves it to COMMIT_START: the model charges no CPU
 * time), else @gen + 1, the running one.
 */
uint64_t zrun_txn_running(const struct zrun_txns *t, uint64_t gen,
			  uint64_t now);
/*
 * An fsync at @now of a change in transaction @transid: what it does,
 * and *at_ret: DURABLE @now; SHARE the done of the commit it shares;
 * COMMIT the end of its commit's critical section (TRANS_STATE_UNBLOCKED:
 * @now, or the done of the commit in progress), when its device I/O
 * starts and the other jobs may run again.
 */
enum zrun_txn_fsync zrun_txn_fsync(const struct zrun_txns *t,
				   uint64_t transid, uint64_t now,
				   uint64_t *at_ret);

/* The [zcow] settings of a scenario; a zeroed struct is not valid, use
 * zrun_settings_default(). */
struct zrun_settings {
	char device[ZRUN_SPEC_LEN];	/* device spec; "" = profile default;
					 * "filename" = the jobs' filename */
	char profile[16];		/* timing profile: zn540, smr, instant */
	char target[8];			/* auto, raw, fs */
	bool zone_append;		/* fs: data by Zone Append; raw: appends */
	uint32_t nodesize;		/* fs: tree node size, bytes (16K) */
	bool treelog;			/* fs: tree-log for fsync (on) */
	uint32_t repetitions;		/* runs, seeds seed .. seed+N-1 (1) */
	uint64_t seed;			/* the one PRNG seed (1) */
	char crash[ZRUN_MAX_CRASH][64];	/* crash points (crash issue) */
	unsigned int nr_crash;
	char results[ZRUN_SPEC_LEN];	/* parent of result folders */
	bool trace;			/* write trace.csv (device commands) */
	uint64_t interval_ns;		/* intervals.csv bucket; 10 ms */
	bool prefill;			/* fill read ranges before the run */
	char name[64];			/* scenario name ("" = file name) */
	int reclaim;			/* fs: enum zcow_reclaim (default) */
	uint32_t reclaim_threshold;	/* fs: percent; 0 = 75 */
	uint32_t reclaim_high;		/* fs: free zones; 0 = default */
	int hotcold;			/* fs: hotcold= (enum zcow_hotcold) */
	/* fs: cleaner=background (in simulated time the scheduler's
	 * cleaner events, on the wall clock the fs's thread); writer */
	bool cleaner_background;
	uint32_t data_zones;		/* fs: active data groups; 0 = default */
	uint64_t commit_bytes;		/* fs: bytes; 0 = 256 MiB */
	int layout;			/* enum zrun_layout (zcow) */
	/* ZRUN_KEY_* bits: the mount keys a layout preset leaves alone
	 * because the scenario or --set gave them (explicit keys win) */
	unsigned int explicit_keys;
	/* where reclaim_threshold, reclaim_high and hotcold were set last */
	struct zfio_kv threshold_at, high_at, hotcold_at, reclaim_at;
	/* where data_zones, commit_bytes or layout was set last (key ""
	 * when none): the raw target mounts nothing and refuses them */
	struct zfio_kv mount_at;
	int commit_model;		/* fs: enum zrun_commit_model (btrfs) */
	/* fs: a device replace during the jobs (docs/devices.md): onto
	 * replace_target (a spec; "" = none), of devid replace_devid,
	 * starting at simulated time replace_at_ns */
	char replace_target[ZRUN_SPEC_LEN];
	uint64_t replace_devid;		/* 1 */
	uint64_t replace_at_ns;		/* 0 */
	struct zfio_kv replace_at;	/* where replace_target was set */
	/* fs: read-only snapshots snap-1, snap-2, ... of the file system
	 * at every snapshot_interval_ns of simulated time while the jobs
	 * run (0 = none), at most snapshot_max (0 = no limit) */
	uint64_t snapshot_interval_ns;
	uint32_t snapshot_max;
	struct zfio_kv snapshot_at;	/* where snapshot_interval was set */
	struct zfio_kv snapshot_max_at;	/* where snapshot_max was set */
};

/* Operations a job asks of a target. */
enum zrun_op {
	ZRUN_OP_READ,
	ZRUN_OP_WRITE,
	ZRUN_OP_TRIM,
	ZRUN_NR_OPS
};

struct zrun;
struct zrun_job;

/* One step of a loadfile job (zfio_job.zcow_loadfile, the replay hook). */
struct zrun_replay {
	enum zrun_op op;	/* READ or WRITE when len > 0 */
	uint64_t len;		/* bytes read or written; 0: no data */
	uint64_t done;		/* completion (or pacing wait), sim ns */
	bool is_sync;		/* a Flush: the job's sync is due next */
	bool is_end;		/* the job has nothing left to do */
};

/*
 * The target interface.  Every function returns 0 or -errno and reports
 * its errors itself (zrun_errf()).  Times are simulated ns: @now is when
 * the job submits, *done_ret when the operation completes.
 */
struct zrun_target_ops {
	const char *name;
	/* Prepare the target (the device is open): mkfs/mount, zone state. */
	int (*open)(struct zrun *run);
	/* Per job (clone): files, ranges. */
	int (*job_init)(struct zrun *run, struct zrun_job *job);
	/* One operation at the job's candidate offset; *len_ret = bytes done
	 * (0 with return 0: the job has nothing left to do). */
	int (*do_io)(struct zrun *run, struct zrun_job *job, enum zrun_op op,
		     uint64_t off, uint64_t len, uint64_t now,
		     uint64_t *len_ret, uint64_t *done_ret);
	/* fsync (is_data_only: fdatasync) of the job's files / the device:
	 * fio's fsync=N syncs the file of the last write (is_all false),
	 * end_fsync every file of the job (is_all true). */
	int (*fsync)(struct zrun *run, struct zrun_job *job, bool is_data_only,
		     bool is_all, uint64_t now, uint64_t *done_ret);
	/* Optional: log-sync batching.  @job's sync (fio's fsync=N: the
	 * file of the last write) waits on the log while another job's
	 * sync is about to write it: put its changes in that write.  Returns
	 * 1 (joined: done when that sync is), 0 (nothing to write: done
	 * now), -EAGAIN (cannot join: it syncs alone later), or -errno.
	 * Untimed: it issues no device command. */
	int (*sync_join)(struct zrun *run, struct zrun_job *job,
			 bool is_data_only);
	/* Optional: the job has ended (after its end_fsync): what the
	 * target does last for it (the fs: the last file's namespace
	 * operation, unlink_each_loop), timed from @now. */
	int (*job_end)(struct zrun *run, struct zrun_job *job, uint64_t now,
		       uint64_t *done_ret);
	/* Optional: the next step of a loadfile job (harness/dbench.h),
	 * submitted at @now.  A Flush sets r->is_sync: the scheduler runs
	 * it as the job's sync (fsync, with log-sync batching), through
	 * fsync and sync_join. */
	int (*replay)(struct zrun *run, struct zrun_job *job, uint64_t now,
		      struct zrun_replay *r);
	/* Optional: the replace of settings replace_target (@step false:
	 * start it, true: copy the next group, and finish after the last,
	 * *finished_ret true then), timed from @now. */
	int (*replace)(struct zrun *run, bool step, uint64_t now,
		       uint64_t *done_ret, bool *finished_ret);
	/* Optional: a read-only snapshot @name of the file system
	 * (snapshot_interval=), timed from @now; its root id in *id_ret. */
	int (*snapshot)(struct zrun *run, const char *name, uint64_t now,
			uint64_t *done_ret, uint64_t *id_ret);
	/* Optional: the background cleaner (cleaner=background in
	 * simulated time): is its next step due, and that step, timed
	 * from @now. */
	bool (*cleaner_due)(struct zrun *run);
	bool (*cleaner_behind)(struct zrun *run);	/* the jobs wait */
	int (*cleaner_step)(struct zrun *run, uint64_t now,
			    uint64_t *done_ret);
	/* Optional: after the jobs, before the statistics are taken: fill
	 * zone_resets/zone_finishes and the fs_* counters of struct zrun. */
	int (*finish)(struct zrun *run);
	/* Tear down (unmount, unlink=1): 0 or the first error, reported
	 * (zrun_errf()); everything is released either way. */
	int (*close)(struct zrun *run);
};

extern const struct zrun_target_ops zrun_raw_target;
extern const struct zrun_target_ops zrun_fs_target;

/*
 * What a target call held until its completion, in simulated time (the
 * fs's locks; docs/timing.md).  The target sets struct zrun.op_excl
 * during a timed call; the scheduler resets it before each call.
 */
enum zrun_excl {
	ZRUN_EXCL_NONE,		/* nothing: others run alongside */
	ZRUN_EXCL_SYNCS,	/* every other sync (a log sync: the log
				 * mutex) */
	ZRUN_EXCL_ALL,		/* every other operation (a full commit:
				 * the fs lock, transaction join) */
};

/* A sync the scheduler owes a job. */
enum {
	ZRUN_SYNC_NONE,
	ZRUN_SYNC_FSYNC,
	ZRUN_SYNC_FDATASYNC,
};

/* Per-operation latency sample. */
struct zrun_sample {
	uint64_t done;		/* completion, simulated ns */
	uint32_t lat;		/* ns (saturates) */
	uint32_t bytes;
	uint8_t op;		/* enum zrun_op */
};

/* One job clone at run time. */
struct zrun_job {
	const struct zfio_job *fio;
	unsigned int idx;		/* global clone index */
	unsigned int clone;		/* 0 .. numjobs-1 */
	uint64_t rng;			/* splitmix64 state */
	uint64_t *slots;		/* iodepth completion times */
	uint64_t start, end_limit;	/* simulated ns; end_limit 0 = none */
	uint64_t range_start, range_len;	/* target byte range */
	uint64_t seq_pos;		/* next sequential offset (relative) */
	struct zfio_dist_state dist;	/* random offsets (fio.h) */
	/* fio's rate and thinktime (fio_gen.c): the rate state, the
	 * direction a rate wait chose (-1: none; issued after the wait
	 * without a new check, as fio), the thinktime count at the last
	 * stall */
	struct zfio_rate rate;
	bool has_rate;
	int rate_op;
	uint64_t think_last;
	/* the rate's clock starts at the job's start, and again at the
	 * first I/O after ramp_time (fio resets its counters then) */
	uint64_t rate_epoch;
	bool is_rate_ramped;
	struct zfio_offsets offs;	/* rw=PATTERN:N (fio_gen.c) */
	uint64_t delay;			/* startdelay, drawn; ns */
	/* flow (run.c): the job's I/Os counted for its group, its group
	 * (an index into zrun.flows), whether it waits for another job of
	 * the group to issue, and whether its weight counts (running) */
	uint64_t flow_count;
	unsigned int flow_grp;
	bool is_flow_blocked, is_flow_weighed;
	uint64_t bytes_goal;		/* 0 = time only */
	uint64_t bytes_done, nr_ios, nr_writes;
	/* fsync/fdatasync calls (fsync=N, fdatasync=N, end_fsync) and their
	 * latencies (ns, saturating; only after ramp_time) */
	uint64_t nr_syncs;
	uint32_t *sync_lat;
	uint64_t nr_sync_lat, sync_lat_cap;
	/* A sync is due (ZRUN_SYNC_*): the job's next event, at its last
	 * slot's completion, is that sync; is_ending: its end (end_fsync,
	 * job_end) likewise. */
	int sync_due;
	bool is_ending;
	/* Namespace operations the target did for the job (fs target),
	 * and the most files it had open at once (openfiles caps it). */
	uint64_t nr_creates, nr_renames, nr_unlinks;
	uint32_t max_open;
	uint64_t stat_bytes[ZRUN_NR_OPS], stat_ios[ZRUN_NR_OPS];
	uint64_t first_stat, last_done;
	bool is_done, is_waiting;
	/* stonewall phase: 0, +1 at every job with stonewall after the
	 * first; a job starts once every job of a lower phase is done */
	unsigned int phase;
	bool seq_by_target;		/* the target moves seq_pos itself */
	struct zrun_sample *samples;
	uint64_t nr_samples, samples_cap;
	void *tpriv;			/* the target's per-job state */
	struct zrun_vjob *vj;		/* verify and contents (run_verify.c) */
	/* fio's logs and iolog (harness/fio_log.h): their per-job state;
	 * where the target did the last I/O: its file (the device's spec
	 * on the raw target) and the offset in it */
	void *lpriv;
	const char *io_path;
	uint64_t io_off;
	/* run_ctl.c: errors, exits, latency target, steady state; a job
	 * stopped early (exitall, steadystate, latency_target) issues
	 * nothing at or after stop_at; its statistics count from
	 * stats_from when that is later than its ramp_time's end */
	struct zrun_ctl_job *ctl;
	bool has_stop;
	uint64_t stop_at, stats_from;
};

/* One device of a run: the first (run->dev), one more of a device list
 * (device=A+B, fs target), or the replace target; its timing model, its
 * counters when the jobs start, and the run (the trace hook's argument). */
struct zrun_dev {
	struct zrun *run;
	struct zdev *dev;
	struct ztime *time;		/* NULL: not simulated */
	struct zdev_stats *base;	/* more devices: at the jobs' start */
};

#define ZRUN_MAX_DEVS 16	/* a device list's length (include/zcow.h) */

struct zrun {
	struct zrun_settings set;
	struct zfio_spec *spec;
	const struct zrun_target_ops *ops;
	struct zdev *dev;
	struct ztime *time;		/* NULL: not simulated (wall clock) */
	/* The other devices of a device list, in the list's order (the fs
	 * target makes and mounts the file system on all of them). */
	struct zrun_dev more[ZRUN_MAX_DEVS - 1];
	unsigned int nr_more;
	struct zrun_dev trace0, trace_rp;	/* trace hook arguments */
	struct zrun_job *jobs;
	unsigned int nr_jobs;
	uint64_t seed;			/* this repetition's seed */
	uint64_t now_max;		/* simulated end */
	uint64_t zone_resets, zone_finishes;
	struct zdev_stats *base;	/* device counters before the jobs */
	/* File-system counters (fs target, its finish hook). */
	bool has_fs_stats;
	uint64_t fs_zone_unusable;	/* bytes freed below wps, no cap gap */
	uint64_t fs_block_groups;	/* block groups at the end */
	uint64_t fs_commits;		/* commits during the jobs */
	uint64_t fs_commit_nodes[ZCOW_COMMIT_NR_TREES];	/* ... their nodes
							 * by tree */
	/* zcow_statfs fsync counters during the jobs (filled by the
	 * tree-log; 0 where the fs does not count them) */
	uint64_t fs_fsyncs, fs_log_syncs, fs_log_fallbacks, fs_statfs_commits;
	/* ... the fallbacks by cause (enum zcow_log_fallback) */
	uint64_t fs_log_fallbacks_by[ZCOW_LOG_NR_FALLBACKS];
	/* commit_model=btrfs without the log: the fsyncs by what each did
	 * at its start (enum zrun_txn_fsync; fsync_btrfs() in run_fs.c) */
	uint64_t nr_txn_fsyncs[ZRUN_TXN_NR];
	/* reclaim during the jobs (zcow_fs_info), the policy in force and
	 * what relocation could still win back at the end */
	struct zcow_reclaim_stats fs_reclaim;
	int fs_reclaim_policy;
	uint32_t fs_reclaim_threshold;
	uint32_t fs_reclaim_high;
	uint64_t fs_reclaimable;
	uint64_t fs_data_live, fs_data_space, fs_pending_zones;
	/* loadfile jobs (finish hook): their clients' counters, and the
	 * simulated seconds they count over (ramp_time's end to the last
	 * client's end) */
	bool has_dbench;
	struct zdb_stats dbench;
	unsigned int dbench_clients;
	double dbench_secs;
	uint32_t fs_data_zones;		/* data block groups written at once */
	/* fio's flow groups (one per flow_id of the jobs with flow): the
	 * I/Os of the group and the weight of its running jobs */
	struct zrun_flow {
		uint32_t id;
		uint64_t count;
		uint64_t weight;
	} *flows;
	unsigned int nr_flows;
	uint64_t sched_wall_ns;		/* wall time of the jobs' phase */
	/* The fs's locks in simulated time: what the current call holds
	 * (enum zrun_excl, set by the target), and until when the calls so
	 * far hold them: no operation starts before excl_all_until, no
	 * sync before excl_sync_until.  Operations that had to wait for
	 * them, and how long in all (ns). */
	int op_excl;
	uint64_t excl_all_until, excl_sync_until;
	uint64_t nr_excl_waits, excl_wait_ns;
	uint64_t nr_sync_joins;		/* syncs done by another's log write */
	/* Write amplification by interval (run.c), kept while the jobs
	 * run: the bytes every device write or append wrote, per I/O
	 * class, in the interval of the command's completion (the device's
	 * trace hook), and the bytes every write operation of the jobs
	 * wrote, in the interval of the operation's completion.  NULL
	 * outside a repetition's jobs. */
	struct zrun_wa *wa;
	/* The target call being timed (zrun_tick_start()): its start, in
	 * the jobs' clock and in wall ns (a device without a timing model
	 * times its commands by the wall clock). */
	uint64_t tick_now, tick_w0;
	void *tpriv;			/* the target's state */
	void *logs;			/* fio_log.c: the logs written */
	/* The device replace during the jobs (run_replace.c). */
	struct zdev *rp_dev;		/* the new device */
	struct ztime *rp_time;		/* its timing model */
	int rp_phase;			/* 0 none, 1 due, 2 copying, 3 done */
	uint64_t rp_due;		/* its next event, simulated ns */
	uint64_t rp_start_ns, rp_end_ns;	/* simulated */
	uint64_t rp_steps;		/* step calls */
	struct zcow_replace_status rp_st;	/* at its end */
	/* snapshot_interval=: the snapshots taken in this repetition and
	 * the simulated time the next one is due (UINT64_MAX: none) */
	uint64_t sn_taken, sn_due;
	/* the background cleaner: its next step's due time (UINT64_MAX:
	 * asleep), the completion of its last step, the start of the
	 * latest call (a call that makes a step due wakes it then) */
	uint64_t cl_due, cl_free, call_t;
	uint64_t fs_data_used;		/* fs: data bytes referenced at the
					 * end (zcow_statfs data_used) */
	struct zrun_verify *verify;	/* verify of the run (run_verify.c) */
	const char *res_dir;		/* results folder (rep 0); NULL */
	/* The operation the target just ran failed (an errno, 0: none;
	 * the message names the job, file and offset): run_ctl.c applies
	 * continue_on_error / ignore_error to it.  The target returns 0
	 * then, with the time the failed operation took. */
	int io_err;
	char io_err_msg[ZFIO_ERR_LEN];
	struct zrun_ctl *ctl;		/* run_ctl.c */
	char err[ZFIO_ERR_LEN];
	bool is_quiet;
};

void zrun_settings_default(struct zrun_settings *set);
/* Apply one zcow key (from the [zcow] section or --set).  Returns 0,
 * -ENOENT when @key is not a zcow key, or -EINVAL with "FILE:LINE: option
 * 'x': reason" in @err. */
int zrun_settings_apply(struct zrun_settings *set, const struct zfio_kv *kv,
			char *err, size_t err_len);
bool zrun_is_zcow_key(const char *key);
/* "btrfs" or "global" (enum zrun_commit_model). */
const char *zrun_commit_model_name(int model);
/* After the last key: the keys that depend on each other (a policy's
 * knob needs that policy).  Returns 0 or -EINVAL with "FILE:LINE:
 * option 'x': reason" in @err, naming where the knob was set. */
int zrun_settings_check(const struct zrun_settings *set, char *err,
			size_t err_len);
/* One key of a scenario's [zcow] section (zcow run and zcow crash): as
 * zrun_settings_apply(), but a key that is not a zcow key is -EINVAL,
 * "FILE:LINE: option 'x': unknown zcow option". */
int zrun_zcow_apply(struct zrun_settings *set, const struct zfio_kv *kv,
		    char *err, size_t err_len);

/* Record an error message for the run (first one wins). */
void zrun_errf(struct zrun *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record "FILE:LINE: option 'KEY': message" about option @opt of @j
 * (zfio_opt_where()) as the run's error; returns -EINVAL. */
int zrun_opt_err(struct zrun *run, const struct zfio_job *j,
		 enum zfio_opt opt, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* What every device of the run did since the jobs started (the first
 * device's counters minus run->base, plus the other devices'). */
void zrun_dev_stats(struct zrun *run, struct zdev_stats *sum);

/* The per-clone PRNG (splitmix64). */
uint64_t zrun_rand(struct zrun_job *job);
/* When @j's last busy slot frees (the latest of its iodepth slots). */
uint64_t zrun_max_slot(const struct zrun_job *j);

/*
 * Run a scenario file: parse, run every repetition, write the results
 * folder under the results setting (or @results_parent when not NULL).
 * @sets are "key=value" overrides.  On success *dir_ret (if not NULL)
 * receives the folder (malloc'd); also when a job failed, its results
 * written: an I/O error its job did not go on after (run_ctl.c; the
 * return is that job's -errno) or a failed verification (or an sg verify
 * command; -EILSEQ).  Returns 0 or -errno, printing errors to stderr.
 */
int zrun_scenario(const char *path, const char *const *sets,
		  unsigned int nr_sets, const char *results_parent,
		  bool is_quiet, char **dir_ret);
/* zrun_scenario() into the results folder @exact itself when not NULL
 * (created: a folder that exists is refused, -EEXIST), for callers that
 * name each run's folder (harness/sweep.py). */
int zrun_scenario_in(const char *path, const char *const *sets,
		     unsigned int nr_sets, const char *results_parent,
		     const char *exact, bool is_quiet, char **dir_ret);

/*
 * Timing of one target command: zrun_tick_start() before it at the job's
 * clock @now, zrun_tick_done() after it returns its completion time, from
 * the timing model when one is attached (simulated), else wall clock.
 */
struct zrun_tick {
	uint64_t now, w0;
};

void zrun_tick_start(struct zrun *run, struct zrun_tick *tk, uint64_t now);
uint64_t zrun_tick_done(struct zrun *run, const struct zrun_tick *tk);

/*
 * The device replace of a run (run_replace.c): open the new device and
 * its timing model (before the jobs), the simulated time of its next
 * event (UINT64_MAX: none), run that event at @t (held like a commit:
 * every other operation waits), its summary.json section, and release
 * the device (after the target closed).  0 or -errno (reported).
 */
#define ZRUN_REPLACE_PIECE (1024 * 1024)	/* bytes copied per event */
int zrun_replace_open(struct zrun *run);
uint64_t zrun_replace_due(const struct zrun *run);
int zrun_replace_event(struct zrun *run, uint64_t t);
void zrun_replace_summary(const struct zrun *run, FILE *f);
int zrun_replace_close(struct zrun *run);

/*
 * intervals.csv's zone_unusable column (fs target): is the interval that
 * holds simulated time @t still without a value?  zrun_note_unusable()
 * gives it one: @bytes, the fs's zone_unusable after an operation that
 * completed at @t.
 */
bool zrun_unusable_due(struct zrun *run, uint64_t t);
/* The fs's zone_unusable, the space its data cycles through (live and
 * space bytes) and its commits, sampled at simulated time @t. */
void zrun_note_unusable(struct zrun *run, uint64_t t,
			const struct zcow_fs_info *info);

/*
 * Data and verification (run_verify.c, fio's semantics: fio_verify.h).
 *
 * The scheduler asks, per job: is a verify read due (a verify_backlog
 * batch, or the verify phase after a loop's writes)?  zrun_verify_take()
 * gives its offset and length; before every operation
 * zrun_verify_io_start() says what kind of I/O it is, after it
 * zrun_verify_io_done() counts the loop's writes and starts the phase or
 * a batch; a job whose verification failed ends (as fio's job does) and
 * the run fails after its results are written.
 *
 * The targets call zrun_data_write() before a write (it fills the buffer
 * and records the piece; 1: a dry run, write nothing) and
 * zrun_data_read() after a read (it verifies a verify read, a read of a
 * job with verify that only reads, and an sg_write_mode verify
 * command).  @io_off is the offset the scheduler names the I/O by (what
 * do_io got), @file and @off what fio's header and messages name (the
 * file and the offset in it; the device and the device offset on the
 * raw target).  zrun_io_is_exact(): the read must be at exactly the
 * offset given (a verify read), not moved by the target.
 */
struct zrun_vstats {
	uint64_t blocks, bytes;		/* verified */
	uint64_t failures;		/* blocks (or sg commands) that failed */
};

int zrun_verify_setup(struct zrun *run);
void zrun_verify_free(struct zrun *run);
/* @is_end: the job's writes are over (size, number_ios, no room): its
 * verify phase starts if it has pieces left. */
bool zrun_verify_due(struct zrun *run, struct zrun_job *j, bool is_end);
void zrun_verify_take(struct zrun *run, struct zrun_job *j, uint64_t *off,
		      uint64_t *len);
/* The operation @op of @j due at @t is about to go to the target:
 * returns the direction the target sees (an sg verify command reads). */
enum zrun_op zrun_verify_io_start(struct zrun *run, struct zrun_job *j,
				  enum zrun_op op, bool is_verify, uint64_t t);
void zrun_verify_io_done(struct zrun *run, struct zrun_job *j,
			 enum zrun_op op, uint64_t len);
/* Did @j fail (verify, sg miscompare)?  It issues nothing more. */
bool zrun_verify_failed(const struct zrun_job *j);
bool zrun_io_is_exact(const struct zrun_job *j);
/* A verify read (not a job's own I/O: no namespace work before it, no
 * sequential position moved by it). */
bool zrun_io_is_verify(const struct zrun_job *j);
int zrun_data_write(struct zrun *run, struct zrun_job *j, uint64_t io_off,
		    const char *file, uint64_t off, void *buf, uint64_t len);
int zrun_data_read(struct zrun *run, struct zrun_job *j, const char *file,
		   uint64_t off, void *buf, uint64_t len);
/* The run's figures so far, and its first failure ("" when none; "job
 * 'NAME': MESSAGE" and how many more). */
void zrun_verify_stats(const struct zrun *run, struct zrun_vstats *st);
void zrun_verify_first(const struct zrun *run, char *buf, size_t len);
/* summary.json's "verify" member (nothing when no job verifies). */
void zrun_verify_summary(const struct zrun *run, const struct zrun_vstats *st,
			 FILE *f);

#endif /* ZCOW_RUN_H */
