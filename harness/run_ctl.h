/* SPDX-License-Identifier: MIT */
/*
 * zrun_ctl: what controls a job's run as a whole, in simulated time
 * (harness/fio_ctl.h has the options; configs/README.md, "Errors, exits,
 * latency target, steady state"):
 *
 *   errors        an I/O the target failed (struct zrun.io_err) is counted
 *                 and the job goes on when continue_on_error/ignore_error
 *                 list it for its class, else the job ends in error (no
 *                 end_fsync) and the run fails once every job is done;
 *   exits         a job that ends ends others: exitall (every job's end)
 *                 or exitall_on_error (an end in error), the jobs that
 *                 exit_what names, by fio's reporting groups;
 *   latency       latency_target's search for the deepest queue that keeps
 *                 latency_percentile of the I/Os of each latency_window
 *                 under the target (fio's io_u.c), the depth limiting the
 *                 I/Os in flight;
 *   steadystate   once a second of the run, each job's (or reporting
 *                 group's) IOPS and bandwidth of the second; once ss_dur
 *                 seconds of them meet the criterion, the jobs end.
 *
 * The scheduler (run.c) calls these hooks; a job without these options
 * runs as it did.  Completions are seen at their simulated time: each
 * slot's last I/O is kept until the job reuses the slot or a check looks
 * past its completion.
 *
 * Who may include this: harness/run*.c and tests/.
 */
#ifndef ZCOW_RUN_CTL_H
#define ZCOW_RUN_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct zrun;
struct zrun_job;

/* After the jobs are set up: reporting groups, the per-job state, the
 * checks that span jobs (steadystate options agree within a group).
 * 0, -ENOMEM, or -EINVAL with the run's error naming the option. */
int zrun_ctl_setup(struct zrun *run);
void zrun_ctl_free(struct zrun *run);

/* When the job's next I/O may be issued and the slot it takes: its
 * earliest free slot, or, under latency_target's depth, the time that
 * depth allows one more I/O in flight. */
uint64_t zrun_ctl_io_due(const struct zrun_job *j, uint32_t *slot_ret);

/* Steady-state checks of every second up to @t (the next event's time):
 * may stop jobs. */
void zrun_ctl_tick(struct zrun *run, uint64_t t);

/*
 * The job issued an I/O at @t into @slot (due at @due) that completes at
 * @done with @len bytes of op @op (enum zrun_op); @is_err: it failed
 * (zrun_ctl_io_error() decides).  Completions up to @t are counted and
 * latency_target adjusts its depth (at depth 1 an I/O above the target
 * is fio's ETIMEDOUT error of the job).
 */
void zrun_ctl_io_done(struct zrun *run, struct zrun_job *j, uint32_t slot,
		     int op, uint64_t due, uint64_t t, uint64_t done,
		     uint64_t len, bool is_err);

/*
 * The target failed the job's I/O of op @op, which took until @done
 * (run->io_err, its message in run->io_err_msg; cleared here).  Returns
 * 0 when the job counts it and goes on (printed with error_dump), 1 when
 * the job ends in error (at @done).
 */
int zrun_ctl_io_error(struct zrun *run, struct zrun_job *j, int op,
		      uint64_t done);

/*
 * The job's verification failed at @t (run_verify.c; @err: EILSEQ, or EIO
 * for an sg VERIFY command, a write's error) with @msg.  Returns true when
 * the job counts it and goes on (continue_on_error, ignore_error; printed
 * with error_dump), false when the job ends in error (exitall_on_error
 * acts at its end).
 */
bool zrun_ctl_verify_error(struct zrun *run, struct zrun_job *j, int err,
			   const char *msg, uint64_t t);

/* Has the job ended in error (no end_fsync then)? */
bool zrun_ctl_has_failed(const struct zrun_job *j);

/* The job has ended (finish_job()): exitall and exitall_on_error end the
 * jobs its exit_what names, at its end. */
void zrun_ctl_job_ended(struct zrun *run, struct zrun_job *j);

/* summary.json: the job's errors, what ended it, its latency target and
 * steady state, one "key": value line each (ending in ','). */
void zrun_ctl_put_job(FILE *f, const struct zrun *run,
		      const struct zrun_job *j, const char *ind);

/* After the results: 0, or the first failed job's errno (negative) with
 * its message as the run's error. */
int zrun_ctl_result(struct zrun *run);

#endif /* ZCOW_RUN_CTL_H */
