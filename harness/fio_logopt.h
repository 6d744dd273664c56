/* SPDX-License-Identifier: MIT */
/*
 * zfio log options: fio's I/O logs (write_bw_log, write_lat_log,
 * write_iops_log, write_hist_log and their log_* knobs), its iolog
 * (write_iolog, read_iolog and the replay_* knobs), fill_device and the
 * I/O priorities the logs show (prio, prioclass, cmdprio_*), as a job
 * carries them once parsed (harness/fio.c, its "data, verify, iolog and
 * log options" rows).  What they do at run time is harness/fio_log.h.
 *
 * What it is not: a runner, or a parser of its own.
 * Who may include this: harness/fio.h (which every user includes).
 */
#ifndef ZCOW_FIO_LOGOPT_H
#define ZCOW_FIO_LOGOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ZFIO_LOG_NAME_LEN	256	/* a log's name as written */
#define ZFIO_LOG_PATH_LEN	512	/* read_iolog, resolved */
#define ZFIO_MAX_CMDPRIO	64u	/* cmdprio_bssplit entries per dir */

/* The kinds of fio's I/O logs (write_<kind>_log). */
enum zfio_log_kind {
	ZFIO_LOG_BW,		/* NAME_bw: KiB/s */
	ZFIO_LOG_LAT,		/* NAME_lat, NAME_slat, NAME_clat: ns */
	ZFIO_LOG_IOPS,		/* NAME_iops */
	ZFIO_LOG_HIST,		/* NAME_clat_hist: clat histograms */
	ZFIO_NR_LOG_KINDS
};

/* log_window_value (alias log_max_value): what a window logs. */
enum zfio_log_window {
	ZFIO_WINDOW_AVG,	/* the mean, rounded (fio's default) */
	ZFIO_WINDOW_MAX,	/* the largest value */
	ZFIO_WINDOW_BOTH,	/* mean, then max: an extra column */
};

/* replay_skip: bits of the actions a replay leaves out. */
enum {
	ZFIO_SKIP_READ = 1u << 0,
	ZFIO_SKIP_WRITE = 1u << 1,
	ZFIO_SKIP_TRIM = 1u << 2,
	ZFIO_SKIP_SYNC = 1u << 3,	/* sync; datasync is kept, as fio */
};

/* The options of this block whose errors at run time name where they
 * were set (zfio_log_where()). */
enum zfio_lopt {
	ZFIO_LOPT_WRITE_BW_LOG,		/* in enum zfio_log_kind's order */
	ZFIO_LOPT_WRITE_LAT_LOG,
	ZFIO_LOPT_WRITE_IOPS_LOG,
	ZFIO_LOPT_WRITE_HIST_LOG,
	ZFIO_LOPT_WRITE_IOLOG,
	ZFIO_LOPT_READ_IOLOG,
	ZFIO_LOPT_FILL_DEVICE,
	ZFIO_LOPT_LOG_HIST_MSEC,
	ZFIO_LOPT_LOG_ISSUE_TIME,
	ZFIO_LOPT_LOG_STORE_COMPRESSED,
	ZFIO_LOPT_REPLAY_REDIRECT,
	ZFIO_NR_LOPTS
};

/* A write_<kind>_log: set, and its name ("": the job's name). */
struct zfio_logname {
	bool is_set;
	char name[ZFIO_LOG_NAME_LEN];
};

/* One cmdprio_bssplit entry: @pct percent of the I/Os of @bs bytes
 * carry priority class @cls, level @lvl (-1: cmdprio_class's or
 * cmdprio's, fio's implicit entry). */
struct zfio_cmdprio {
	uint64_t bs;
	uint32_t pct;
	int32_t cls, lvl;
};

/* Where an option of this block was set: line 0 = not set. */
struct zfio_lat {
	char file[512];
	int line;
};

struct zfio_logopts {
	/* write_bw_log, write_lat_log, write_iops_log, write_hist_log */
	struct zfio_logname want[ZFIO_NR_LOG_KINDS];
	bool per_job_logs;		/* NAME_kind.N.log; true */
	uint32_t avg_msec;		/* log_avg_msec; 0 = every I/O */
	uint32_t hist_msec;		/* log_hist_msec; 0 = no histograms */
	uint32_t hist_coarseness;	/* 0..6 */
	int window;			/* enum zfio_log_window */
	bool offset;			/* log_offset: the offset column */
	bool prio;			/* log_prio: the priority in hex */
	bool issue_time;		/* log_issue_time: ns column (lat) */
	bool alt_epoch;			/* log_alternate_epoch (unix_epoch) */
	/* bwavgtime, iopsavgtime (ms; 0 = not set: fio's 500 serves only
	 * its own reports): a bw or iops log's window is the smaller of
	 * this and log_avg_msec, as fio */
	uint32_t bw_avg_msec, iops_avg_msec;
	uint64_t compression;		/* log_compression: bytes; 0 none */
	bool store_compressed;		/* log_store_compressed: refused */
	/* write_iolog (a name in the results folder; "" = none) and
	 * read_iolog (paths separated by ':', relative ones to the job
	 * file; "" = none), and the replay's knobs */
	char write_iolog[ZFIO_LOG_NAME_LEN];
	char read_iolog[ZFIO_LOG_PATH_LEN];
	bool iolog_chunked;		/* read_iolog_chunked */
	bool no_stall;			/* replay_no_stall */
	uint32_t time_scale;		/* replay_time_scale, percent; 100 */
	char redirect[ZFIO_LOG_NAME_LEN];	/* replay_redirect; "" */
	uint32_t replay_align;		/* bytes, a power of 2; 0 = none */
	uint32_t replay_scale;		/* offsets divided by it; 1 */
	uint32_t replay_skip;		/* ZFIO_SKIP_* bits */
	bool fill_device;		/* fill_device, alias fill_fs */
	/* The priority every I/O carries (prio, prioclass: fio's
	 * ioprio_value(); 0 = none set) and cmdprio_*'s share of them,
	 * per direction (reads, writes): a percentage with one priority,
	 * or per I/O size (cmdprio_bssplit) */
	uint32_t prio_level, prio_class;
	bool has_prio;
	uint32_t cmdprio_pct[2], cmdprio_class[2], cmdprio_level[2];
	struct zfio_cmdprio cmdprio_bs[2][ZFIO_MAX_CMDPRIO];
	uint32_t nr_cmdprio_bs[2];
	bool has_cmdprio_bs;
	struct zfio_lat at[ZFIO_NR_LOPTS];
};

struct zfio_kv;
struct zfio_job;

/* The parser's side (harness/fio_log.c): fio's defaults; where an option
 * of this block was set (called for every record applied to a job); the
 * checks across options once a job is resolved (0, or -EINVAL with
 * "FILE:LINE: option 'KEY': reason" in @err); the resolved options in
 * fio syntax (config.fio). */
void zfio_log_defaults(struct zfio_logopts *lo);
void zfio_log_note(struct zfio_logopts *lo, const struct zfio_kv *kv);
int zfio_log_check(const struct zfio_job *j, char *err, size_t len);
void zfio_log_print(FILE *out, const struct zfio_job *j);

#endif /* ZCOW_FIO_LOGOPT_H */
