/* SPDX-License-Identifier: MIT */
/*
 * zfio_ctl: the fio job options that control a job's run as a whole
 * (configs/README.md, "Errors, exits, latency target, steady state"):
 *
 *   errors       continue_on_error, ignore_error, error_dump (fio's
 *                td_error.c: which I/O errors a job counts and goes on
 *                after, per class READ / WRITE / VERIFY);
 *   exits        exitall, exitall_on_error, exit_what, and the reporting
 *                groups they act on (new_group, stonewall);
 *   latency      latency_target, latency_window, latency_percentile,
 *                latency_run (fio's queue-depth search, io_u.c);
 *   steadystate  ss, ss_dur, ss_ramp (fio's steadystate.c), judged per
 *                job or per reporting group (group_reporting);
 *   blockalign   ba: the unit of a random pattern's offsets;
 *   the engines  ioengine=http (objects), ioengine=falloc (refused).
 *
 * Parsed here (fio.c's option rows call these), run by harness/run_ctl.c.
 * What it is not: the scheduler.  Who may include this: harness/ (through
 * fio.h) and tests/.
 */
#ifndef ZCOW_FIO_CTL_H
#define ZCOW_FIO_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* fio's error classes (td_error.h): an error of a read is READ, EILSEQ
 * (a verify failure) VERIFY, any other (write, trim, sync) WRITE. */
enum zfio_err_class {
	ZFIO_ERR_READ,
	ZFIO_ERR_WRITE,
	ZFIO_ERR_VERIFY,
	ZFIO_NR_ERR_CLASSES
};

#define ZFIO_ERR_ALL	((1u << ZFIO_NR_ERR_CLASSES) - 1)

/* Errors one class of ignore_error may list (fio grows its list without
 * bound; a value of ZFIO_VAL_LEN characters holds at most 127). */
#define ZFIO_MAX_IGNORE	128u

/* exit_what: which jobs a finished job ends under exitall (fio's
 * TERMINATE_GROUP, TERMINATE_STONEWALL, TERMINATE_ALL). */
enum zfio_exit_what {
	ZFIO_EXIT_GROUP,	/* its reporting group */
	ZFIO_EXIT_STONEWALL,	/* every job running now, any group */
	ZFIO_EXIT_ALL,		/* every job, those not started too */
};

/* steadystate's criterion (fio's FIO_SS_*): IOPS or bandwidth, the
 * largest deviation from the window's mean or its least-squares slope. */
enum zfio_ss {
	ZFIO_SS_IOPS,
	ZFIO_SS_IOPS_SLOPE,
	ZFIO_SS_BW,
	ZFIO_SS_BW_SLOPE,
};

/* The I/O engines the runner models beyond plain reads and writes. */
enum zfio_engine {
	ZFIO_ENGINE_PLAIN,	/* any other: plain reads and writes */
	ZFIO_ENGINE_HTTP,	/* objects named FILE_OFFSET_LENGTH */
	ZFIO_ENGINE_FALLOC,	/* every I/O an fallocate() (run_fs.c) */
};

struct zfio_ctl {
	/* continue_on_error: the classes (1 << class) whose listed errors
	 * a job counts and goes on after; ignore_error replaces a class's
	 * list (and adds the class); nr 0: fio's default, EIO and EILSEQ */
	uint32_t continue_on;
	int ignore[ZFIO_NR_ERR_CLASSES][ZFIO_MAX_IGNORE];
	uint32_t nr_ignore[ZFIO_NR_ERR_CLASSES];
	bool error_dump;		/* print errors it goes on after; 1 */
	bool exitall;			/* a finished job ends others */
	bool exitall_on_error;		/* ... when it failed */
	enum zfio_exit_what exit_what;	/* group */
	bool new_group;			/* starts a reporting group */
	bool group_reporting;		/* steadystate per group */
	/* blockalign per direction (bytes; 0: the direction's smallest
	 * size), and the resolved unit of random offsets (0: the job's
	 * block, zfio_job.bs) */
	uint64_t ba[3];
	uint64_t rand_unit;
	/* latency_target (ns; 0: none), latency_window (ns),
	 * latency_percentile (0..100; 100) and latency_run */
	uint64_t lat_target_ns, lat_window_ns;
	double lat_pct;
	bool lat_run;
	/* steadystate: the criterion, its limit (a percentage of the
	 * window's mean when @ss_is_pct), ss_dur (ns; whole seconds count,
	 * 0: off) and ss_ramp (ns) */
	enum zfio_ss ss;
	bool ss_is_pct;
	double ss_limit;
	uint64_t ss_dur_ns, ss_ramp_ns;
	enum zfio_engine engine;
};

struct zfio_job;

/* The defaults (fio's): error_dump on, latency_percentile 100, ss
 * iops_slope:0.01%. */
void zfio_ctl_defaults(struct zfio_ctl *c);

/*
 * Value parsers of fio.c's option rows: 0, or -EINVAL with the reason
 * (no file or line: the caller adds them) in @why.
 */
int zfio_ctl_continue_on_error(struct zfio_ctl *c, const char *val,
			       char *why, size_t len);
int zfio_ctl_ignore_error(struct zfio_ctl *c, const char *val, char *why,
			  size_t len);
int zfio_ctl_steadystate(struct zfio_ctl *c, const char *val, uint32_t kb_base,
			 char *why, size_t len);
int zfio_ctl_percentile(struct zfio_ctl *c, const char *val, char *why,
			size_t len);
/* ioengine=NAME: the engine it models (any other is plain). */
enum zfio_engine zfio_ctl_engine(const char *name);

/*
 * The resolved job: the unit of its random offsets (blockalign of the
 * directions it issues, which must agree), ioengine=falloc refused.
 * Returns 0 or -EINVAL with "FILE:LINE: option 'x': reason" in @err.
 */
int zfio_ctl_check(struct zfio_job *j, char *err, size_t err_len);

/* The unit of job @j's random offsets: blockalign, else its block. */
uint64_t zfio_rand_unit(const struct zfio_job *j);
/* The units a random offset of @j may start at in a range of
 * @range_len bytes (fio's last_block(): an alignment below the smallest
 * I/O leaves room for that I/O at the last one). */
uint64_t zfio_rand_blocks(const struct zfio_job *j, uint64_t range_len);

/* Errno @err's symbolic name ("ENOSPC"), or its number as text when it
 * has none; into @buf. */
const char *zfio_errno_name(int err, char *buf, size_t len);

/* Is error @err of class @cls one the job counts and goes on after
 * (fio's td_non_fatal_error)? */
bool zfio_ctl_is_non_fatal(const struct zfio_ctl *c, enum zfio_err_class cls,
			   int err);
/* fio's td_error_type(): the class of @err on a read (@is_read) or any
 * other operation. */
enum zfio_err_class zfio_err_class_of(bool is_read, int err);

/* The options set, in fio syntax (config.fio). */
void zfio_ctl_print(FILE *out, const struct zfio_job *j);

#endif /* ZCOW_FIO_CTL_H */
