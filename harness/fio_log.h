/* SPDX-License-Identifier: MIT */
/*
 * zfio logs: fio's I/O logs, its iolog and fill_device, in simulated
 * time (configs/README.md, "I/O logs and replay"; the options are
 * harness/fio_logopt.h).
 *
 * - The bw, iops, lat (lat, slat, clat) and clat histogram logs: every
 *   completed I/O of a job is kept (zfio_log_io()); at the job's end the
 *   samples are put in completion order and turned into fio's lines,
 *   per I/O or by window (log_avg_msec, log_hist_msec), as fio's stat.c
 *   makes them; zfio_log_write() writes them into the results folder
 *   with fio's names (NAME_bw.N.log, NAME_bw.log with per_job_logs=0).
 * - write_iolog: fio's iolog version 3 (add/open/close, read, write,
 *   trim, sync, datasync lines, microseconds from the job's start).
 * - read_iolog: a job that replays an iolog of version 2 or 3 instead of
 *   its own pattern (zfio_replay_next(), asked by harness/run.c), on the
 *   fs target's files named by the log (zfio_replay_files()).
 * - fill_device: the fs target writes until the file system says
 *   -ENOSPC (zfio_log_enospc()), then the job ends.
 *
 * Times: simulated ns.  A job's epoch (time 0 of its logs) is its start
 * plus ramp_time, as fio resets its clock when the ramp ends; nothing of
 * the ramp is logged (the iolog logs every I/O, from the job's start).
 *
 * What it is not: the parser (fio.c) or the scheduler (run.c).
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_FIO_LOG_H
#define ZCOW_FIO_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run.h"

/* fio's latency histogram: 29 groups of 64 bins (stat.h) */
#define ZFIO_HIST_BITS		6
#define ZFIO_HIST_GROUPS	29
#define ZFIO_HIST_NR		(ZFIO_HIST_GROUPS << ZFIO_HIST_BITS)

/* The bin of a latency of @ns ns (fio's plat_val_to_idx()). */
unsigned int zfio_hist_bin(uint64_t ns);

/* fio's ioprio value of class @cls (0: best effort, as fio) and level
 * @lvl: class << 13 | level. */
uint32_t zfio_ioprio(uint32_t cls, uint32_t lvl);

/*
 * Set up job @j's logs, iolog and replay, before the target's job_init
 * (which asks for a replay's files).  Reads a read_iolog through (a
 * chunked one only for its files).  0, or -EINVAL/-ENOENT/-ENOMEM with
 * the error recorded (zrun_errf()).
 */
int zfio_log_job_init(struct zrun *run, struct zrun_job *j);
/* Does @j replay an iolog (read_iolog)? */
bool zfio_replay_is(const struct zrun_job *j);
/*
 * A replay's files, in the order the log adds them (one, replay_redirect,
 * when set): their paths, as the log names them; how far its I/Os reach
 * in the largest file and its largest I/O (bytes); @has_reads: some I/O
 * reads.
 */
void zfio_replay_files(const struct zrun_job *j, const char *const **paths,
		       uint32_t *nr, uint64_t *extent, uint64_t *max_len,
		       bool *has_reads);

/* The next action of a replay (zfio_replay_next()). */
struct zfio_replay_io {
	enum zrun_op op;	/* READ, WRITE or TRIM when len > 0 */
	uint32_t file;		/* its file (zfio_replay_files()) */
	uint64_t off, len;	/* in the file, bytes */
	uint64_t cand;		/* in the job's range: file x (range /
				 * files) + off */
	uint64_t not_before;	/* the log's timing: not issued earlier */
	int sync;		/* ZRUN_SYNC_*: a sync of the last file */
	bool is_end;		/* the log is done */
};

/*
 * The next action of replay job @j, whose clock is at @now: an I/O, a
 * sync, or the end, and from when the log lets it be issued.  The same
 * action comes back until zfio_replay_issued() says it was issued.  0,
 * or -EINVAL (a line that does not parse, read_iolog_chunked) with the
 * error recorded.
 */
int zfio_replay_next(struct zrun *run, struct zrun_job *j, uint64_t now,
		     struct zfio_replay_io *io);
/* The file a replayed sync syncs (the sync given last; fio syncs the file
 * its log names, not always the last I/O's). */
uint32_t zfio_replay_sync_file(const struct zrun_job *j);
/* The action zfio_replay_next() gave was issued at @t. */
void zfio_replay_issued(struct zrun_job *j, uint64_t t);

/*
 * An I/O of job @j completed: @op of @len bytes at j->io_path/io_off,
 * due at @due, issued at @t (after the fs's locks), done at @done.
 * Kept for the logs (not during ramp_time) and written to the iolog.
 * 0 or -ENOMEM.
 */
int zfio_log_io(struct zrun *run, struct zrun_job *j, enum zrun_op op,
		uint64_t len, uint64_t due, uint64_t t, uint64_t done);
/* A sync of the file of the last I/O (fsync=N, fdatasync=N, a replayed
 * one) issued at @t: the iolog's sync or datasync line.  0 or -ENOMEM. */
int zfio_log_sync(struct zrun *run, struct zrun_job *j, bool is_data,
		  uint64_t t);

/* What happened to a file (the iolog's file lines). */
enum zfio_file_act {
	ZFIO_FILE_ADD,
	ZFIO_FILE_OPEN,
	ZFIO_FILE_CLOSE,
};
/* Target @j's file @path: @act, at the current call's time (run->
 * tick_now) once the jobs run, before that at the job's start. */
int zfio_log_file(struct zrun *run, struct zrun_job *j, const char *path,
		  enum zfio_file_act act);
/* fill_device: the file system said -ENOSPC to @j's write: it ends. */
void zfio_log_enospc(struct zrun_job *j);
/* Is @j a fill_device job on the fs target? */
bool zfio_log_fills(const struct zrun_job *j);

/* The jobs start: file lines from now on carry the call's time. */
void zfio_log_start(struct zrun *run);
/* Job @j has ended (its last I/O and sync are done): its windows close,
 * its open files are closed in the iolog.  0 or -ENOMEM. */
int zfio_log_job_end(struct zrun *run, struct zrun_job *j);
/*
 * Write every job's logs and iologs into @dir (a job sharing a file
 * name with an earlier one, per_job_logs=0, appends to it, as fio) and
 * remember their names for summary.json.  0 or -errno (recorded).
 */
int zfio_log_write(struct zrun *run, const char *dir);
/* summary.json's "logs" (the files written, in order) and "fill"
 * (fill_device jobs: bytes written, whether -ENOSPC ended them) lines,
 * each ending with ",\n". */
void zfio_log_put_json(FILE *f, const struct zrun *run);
/* Free job @j's log state (teardown) and the run's list (its end). */
void zfio_log_job_free(struct zrun_job *j);
void zfio_log_free(struct zrun *run);

#endif /* ZCOW_FIO_LOG_H */
