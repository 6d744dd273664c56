// SPDX-License-Identifier: MIT
/*
 * The file-system target: fio jobs on files of a zcow file system (the
 * seed experiment: 16 jobs of 4 KiB random writes, zone_append on/off).
 *
 * open:     every zone the device holds open, closed or written is reset
 *           first (a previous user may have left zones active; mkfs would
 *           reset only the non-empty ones), then mkfs (nodesize, uuids from
 *           the run's seed) and mount (zone_append=off: no_zone_append;
 *           treelog=off: no_treelog).
 *           Set-up is untimed: the timing model is detached.
 * job_init: the job's files, as fio names and sizes them: filename= (one
 *           file shared by every clone) or nrfiles files named by
 *           filename_format ($jobname.$jobnum.$filenum by default; $jobnum
 *           is the clone) in directory=; the directories are created with
 *           their parents (untimed); filesize= per file, else
 *           size/nrfiles; the job's range is the files one after the
 *           other (file = offset / filesize: fio's
 *           file_service_type=sequential, not roundrobin).  First the
 *           files must fit the fs (check_room()).  Without
 *           create_on_open the files are created here one by one
 *           (untimed), and laid out with data for jobs that read, as fio
 *           does; with it, each is created when the job first opens it
 *           (no layout, as in fio).  Either way at most openfiles are
 *           open at once.  ioengine=filecreate: an operation only opens
 *           its file (fio's filecreate engine), no data moves.
 * do_io:    zcow_pwrite / zcow_pread at the offset in the file, one call
 *           per operation (a job that syncs buffers its writes until the
 *           sync: is_buffered()), timed: ztime_set_now(now) before the
 *           call, the completion is ztime_max_done() = the last device
 *           command the call caused (data write, and any commit it
 *           triggered).  The
 *           same tick covers what the job does before that I/O: the
 *           namespace operation of the file it finished last, the unlinks
 *           of unlink_each_loop when a new loop starts, closing a file
 *           beyond openfiles, creating the file (create_on_open).  A trim
 *           is fio's BLKDISCARD ioctl on a file: ENOTTY.  ioengine=falloc:
 *           every I/O is zcow_fallocate() (EOPNOTSUPP on zoned storage,
 *           as btrfs); ioengine=http: objects (obj_do_io()).  An I/O's
 *           own error goes to run_ctl.c (run->io_err).
 * fsync:    the buffered writes back, then zcow_fsync / zcow_fdatasync of
 *           the file of the last write (fio's fsync=N), or of every open
 *           file (end_fsync), timed.
 * job_end:  the buffered writes back, the last file's namespace
 *           operation, unlink_each_loop.
 * replay:   a loadfile job's (zcow_loadfile) next line, through
 *           harness/dbench.h, on clients/clientN under directory=;
 *           timed as do_io; a Flush names its file, which fsync and
 *           sync_join then sync as the job's sync.
 * finish:   fs counters for summary.json (zone resets from the device
 *           counters, zone_unusable, block groups, commits, the statfs
 *           fsync counters).
 * close:    unlink the files of jobs with unlink=1, unmount (untimed);
 *           the first error of these fails the run.
 *
 * Namespace operations (zcow_rename_pct, zcow_unlink_pct; sequential
 * jobs only): once the job has written a file's last block (and its
 * fsync=N sync, which the scheduler runs next, is done), one draw of the
 * job's PRNG renames the file to "NAME.renamed" (replacing an earlier
 * one) with zcow_rename_pct percent, or unlinks it with zcow_unlink_pct
 * percent.  Either way the job's file NAME is gone and is created anew
 * when a later loop writes it again.
 *
 * Concurrency.  The scheduler submits one operation at a time, so the fs
 * never sees two writers at once; the overlap of concurrent jobs lives in
 * the timing model.  zcow_pwrite issues its device command at once and
 * returns, the model charges it from the job's submit time.  Each job's
 * file goes to one of the data_zones (default 4) open data block groups
 * (inode number % data_zones): with zone_append=on its Zone Append
 * shares that zone's append slots (several in flight); with
 * zone_append=off the plain write at the write pointer waits for the
 * zone write lock, i.e. for the previous write to that zone to complete.
 * That is the fs's per-block-group plain lock (allocation + submission
 * serialized per block group) as the device sees it: writes to one data
 * block group are strictly one after the other in simulated time, the
 * groups run side by side.  The fs lock itself is applied by the
 * scheduler: after each timed call this target says what the call held
 * (held_done(): a commit every operation, a log sync every sync) and
 * no other call starts before its completion (docs/timing.md).  An
 * fsync without the log under commit_model=btrfs holds the others only
 * until its commit's critical section ends (fsync_btrfs(): btrfs's
 * transaction states, docs/timing.md "Transactions").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fio_log.h"
#include "grow.h"
#include "run.h"
#include "zcow.h"
#include "zdev.h"
#include "zsim.h"
#include "ztime.h"

#define FS_PATH_LEN	(ZFIO_VAL_LEN * 3 + 64)
#define RENAMED_SUFFIX	".renamed"
#define NO_FILE		UINT32_MAX	/* fs_job.last/pending: none */

/* A write held in the page cache until its file's sync (is_buffered()). */
struct fs_pend {
	uint64_t off, len;
	void *data;			/* malloc'd copy of the job's bytes */
};

struct fs_file {
	char *path;			/* malloc'd */
	struct zcow_file *f;		/* NULL: closed */
	bool is_created;		/* exists under path */
	bool is_dirty;			/* written since its last sync */
	struct fs_pend *pend;		/* buffered writes, in order */
	uint64_t nr_pend, pend_cap;
};

struct fs_job {
	struct fs_file *files;
	uint32_t nr_files;
	uint32_t nr_open;
	uint64_t filesize;
	uint32_t last;			/* file of the last I/O */
	uint32_t pending;		/* finished file, namespace op due */
	uint64_t nr_io;			/* I/Os done (loop detection) */
	struct zdb_client *db;		/* zcow_loadfile: the client */
};

/* A file named by filename=, which every job naming it shares (fio). */
struct named_file {
	char *path;
	uint64_t bytes;		/* counted in fs_run.files_bytes */
};

struct fs_run {
	struct zcow_fs *fs;
	void *buf;
	uint64_t buf_len;
	uint64_t commits_base;
	uint64_t nodes_base[ZCOW_COMMIT_NR_TREES];	/* commit nodes by tree */
	struct zcow_reclaim_stats reclaim_base;
	struct zcow_statfs st_base;
	bool has_base;
	uint64_t files_bytes;		/* the jobs' files so far, bytes */
	/* the files jobs name (filename=): each counted in files_bytes
	 * once, at the most any job needs of it */
	struct named_file *named;
	uint32_t nr_named;
	uint64_t cap_named;
	uint64_t writable_bytes;	/* the fs's (zcow_fs_info), at mount */
	struct zrun_txns txns;		/* the commits in simulated time */
};

static struct fs_run *to_fs(struct zrun *run)
{
	return run->tpriv;
}

/* Detach (@is_on) or re-attach the timing model.  ztime_attach() fails
 * only on a device that is not simulated, which has no model (run->time
 * NULL): nothing to check. */
static void untimed(struct zrun *run, bool is_on)
{
	unsigned int i;

	if (run->time)
		(void)ztime_attach(run->dev, is_on ? NULL : run->time);
	for (i = 0; i < run->nr_more; i++)
		if (run->more[i].time)
			(void)ztime_attach(run->more[i].dev,
					   is_on ? NULL : run->more[i].time);
}

/* Reset every sequential zone that is not empty or is open/closed. */
static int reset_active(struct zrun *run, struct zdev *dev)
{
	const struct zdev_info *info = &dev->info;
	struct zdev_zone *zz;
	uint64_t z = 0, from = 0;
	unsigned int i, n;
	int ret = 0;

	if (!info->is_zoned)
		return 0;
	zz = calloc(256, sizeof(*zz));
	if (!zz)
		return -ENOMEM;
	while (z < info->nr_zones && !ret) {
		n = 256;
		ret = zdev_report(dev, from, zz, &n);
		if (!ret && !n)
			ret = -EIO;
		for (i = 0; !ret && i < n && z < info->nr_zones; i++, z++) {
			enum zdev_zone_cond c = zz[i].cond;

			if (c == ZDEV_COND_IMP_OPEN || c == ZDEV_COND_EXP_OPEN ||
			    c == ZDEV_COND_CLOSED || c == ZDEV_COND_FULL)
				ret = zdev_zone_mgmt(dev, ZDEV_ZONE_RESET,
						     zz[i].start,
						     info->zone_size,
						     ZDEV_CLASS_ZONE);
		}
		from = z * info->zone_size;
	}
	free(zz);
	if (ret)
		zrun_errf(run, "resetting the active zones of '%s': %s",
			  dev->spec, strerror(-ret));
	return ret;
}

/*
 * The inode times of a run in simulated time: a fixed epoch plus the
 * simulated time of the call being made (run->tick_now, ns), so that a
 * scenario run twice writes the same image.  A device without a timing
 * model runs on the wall clock: the fs takes the real time (no clock).
 */
#define FS_EPOCH_SEC 1735689600	/* 2025-01-01T00:00:00Z */

static void fs_clock(struct zcow_timespec *now, void *arg)
{
	const struct zrun *run = arg;

	now->sec = FS_EPOCH_SEC + (int64_t)(run->tick_now / 1000000000u);
	now->nsec = (uint32_t)(run->tick_now % 1000000000u);
}

static int fs_open(struct zrun *run)
{
	struct zcow_mkfs_opts mko = { .nodesize = run->set.nodesize,
				      .seed = run->seed };
	struct zcow_mount_opts mo = {
		.no_zone_append = !run->set.zone_append,
		.no_treelog = !run->set.treelog,
		.reclaim = run->set.reclaim,
		.reclaim_threshold = run->set.reclaim_threshold,
		.reclaim_high = run->set.reclaim_high,
		.hotcold = run->set.hotcold,
		/* background: steps of the scheduler in simulated time, the
		 * fs's thread on the wall clock */
		.cleaner = !run->set.cleaner_background ? ZCOW_CLEANER_WRITER :
			   run->time ? ZCOW_CLEANER_STEPS :
				       ZCOW_CLEANER_THREAD,
		.data_zones = run->set.data_zones,
		.commit_bytes = run->set.commit_bytes,
		.clock = run->time ? fs_clock : NULL,
		.clock_arg = run,
	};
	struct zdev *devs[ZRUN_MAX_DEVS];
	struct fs_run *fr;
	unsigned int i;
	int ret;

	for (i = 0; i <= run->nr_more; i++) {
		const struct zdev *d = i ? run->more[i - 1].dev : run->dev;

		if (!strstr(d->spec, "data=off"))
			continue;
		zrun_errf(run, "target fs: the device '%s' keeps no data "
			       "(data=off) but the file system reads its "
			       "metadata back; drop data=off", d->spec);
		return -EINVAL;
	}
	fr = calloc(1, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	run->tpriv = fr;
	untimed(run, true);
	/* the run's device, or every device of its list */
	devs[0] = run->dev;
	for (i = 0; i < run->nr_more; i++)
		devs[i + 1] = run->more[i].dev;
	for (i = 0, ret = 0; i <= run->nr_more && !ret; i++)
		ret = reset_active(run, devs[i]);
	if (!ret) {
		ret = zcow_mkfs_devs(devs, run->nr_more + 1, &mko);
		if (ret)
			zrun_errf(run, "mkfs on '%s': %s", run->dev->spec,
				  strerror(-ret));
	}
	if (!ret) {
		ret = zcow_mount_devs(devs, run->nr_more + 1, &mo, &fr->fs);
		if (ret)
			zrun_errf(run, "mount '%s': %s", run->dev->spec,
				  strerror(-ret));
	}
	if (!ret) {
		struct zcow_fs_info info;

		ret = zcow_fs_info(fr->fs, &info);
		fr->writable_bytes = info.writable_bytes;
	}
	untimed(run, false);
	return ret;
}

/* mkdir -p of @dir (untimed); an error names option @opt of @job's
 * file, line (where @dir comes from). */
static int make_dirs(struct zrun *run, struct zrun_job *job,
		     enum zfio_opt opt, const char *dir)
{
	char p[FS_PATH_LEN];
	size_t i, len;
	int ret;

	snprintf(p, sizeof(p), "%s", dir);
	len = strlen(p);
	for (i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		if (i && p[i - 1] == '/')
			continue;
		p[i] = '\0';
		if (p[0] && strcmp(p, "/")) {
			ret = zcow_mkdir(to_fs(run)->fs, p);
			if (ret && ret != -EEXIST) {
				zrun_opt_err(run, job->fio, opt,
					     "mkdir '%s': %s", p,
					     strerror(-ret));
				return ret;
			}
		}
		if (i < len)
			p[i] = '/';
	}
	return 0;
}

static int file_err(struct zrun *run, struct zrun_job *job, const char *what,
		    const char *path, int ret)
{
	zrun_errf(run, "%s:%d: job '%s': %s '%s': %s", job->fio->file,
		  job->fio->line, job->fio->name, what, path, strerror(-ret));
	return ret;
}

/*
 * Buffered writes (btrfs's delayed allocation).  A job that syncs
 * (fsync=N, fdatasync=N, a replayed log with syncs) writes through the
 * page cache as fio's default
 * buffered I/O does: its write only dirties the page cache (no device
 * time), and the sync writes the data back first (btrfs_sync_file:
 * start_ordered_ops), so the extent is allocated, written and its items
 * inserted in the sync, in the transaction running then, never in a
 * commit another job ran in between.  Other jobs write at once (their
 * data would be written back soon anyway; zcow models no writeback
 * timer), as do loadfile jobs (sync_transid()).  A file's buffered
 * writes also go out before it is read, closed or the job ends, each as
 * it was made (the page cache would write a rewritten page once), with
 * the bytes the job wrote (a copy: verify reads them back).  A
 * fill_device job writes at once: its ENOSPC must end it at the write
 * that found the file system full (btrfs reserves a buffered write's
 * space in write()).
 */
static bool is_buffered(const struct zrun_job *job)
{
	const struct zfio_job *f = job->fio;

	return (f->fsync || f->fdatasync || zfio_replay_syncs(job)) &&
	       !f->is_filecreate &&
	       !f->zcow_loadfile[0] && !zfio_log_fills(job);
}

/* Forget @ff's buffered writes (written back, or the run failed). */
static void drop_pend(struct fs_file *ff)
{
	uint64_t i;

	for (i = 0; i < ff->nr_pend; i++)
		free(ff->pend[i].data);
	ff->nr_pend = 0;
}

/* Hold the write of @len bytes of @buf at @off in @ff's page cache
 * until its sync: returns @len, or -ENOMEM. */
static int64_t buffer_write(struct fs_file *ff, const void *buf,
			    uint64_t len, uint64_t off)
{
	struct fs_pend *p;

	if (ZCOW_GROW_ONE(&ff->pend, ff->nr_pend, &ff->pend_cap))
		return -ENOMEM;
	p = &ff->pend[ff->nr_pend];
	p->data = malloc(len);
	if (!p->data)
		return -ENOMEM;
	memcpy(p->data, buf, len);
	p->off = off;
	p->len = len;
	ff->nr_pend++;
	return (int64_t)len;
}

/* Write @ff's buffered writes back; an error is the run's. */
static int write_back(struct zrun *run, struct zrun_job *job,
		      struct fs_file *ff)
{
	uint64_t i;
	int64_t n;

	for (i = 0; i < ff->nr_pend; i++) {
		const struct fs_pend *p = &ff->pend[i];

		n = zcow_pwrite(ff->f, p->data, p->len, p->off);
		if (n != (int64_t)p->len) {
			zrun_errf(run, "job '%s': write-back of %llu at %llu "
				  "in '%s': %s", job->fio->name,
				  (unsigned long long)p->len,
				  (unsigned long long)p->off, ff->path,
				  n < 0 ? strerror((int)-n) : "short write");
			drop_pend(ff);
			return n < 0 ? (int)n : -EIO;
		}
	}
	drop_pend(ff);
	return 0;
}

/* Every buffered write of the job back, at @now (job end). */
static int write_back_all(struct zrun *run, struct zrun_job *job)
{
	struct fs_job *fj = job->tpriv;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < fj->nr_files && !ret; i++)
		if (fj->files[i].nr_pend)
			ret = write_back(run, job, &fj->files[i]);
	return ret;
}

static int close_file(struct zrun *run, struct zrun_job *job,
		      struct fs_file *ff)
{
	struct fs_job *fj = job->tpriv;
	int ret;

	if (!ff->f)
		return 0;
	ret = write_back(run, job, ff);
	if (ret)
		return ret;
	ret = zcow_close(ff->f);
	ff->f = NULL;
	fj->nr_open--;
	if (ret)
		return file_err(run, job, "close", ff->path, ret);
	return zfio_log_file(run, job, ff->path, ZFIO_FILE_CLOSE);
}

/* Open file @i (creating it if it does not exist), first closing the
 * lowest-numbered other open file when openfiles are open already. */
static int open_file(struct zrun *run, struct zrun_job *job, uint32_t i)
{
	struct fs_job *fj = job->tpriv;
	struct fs_file *ff = &fj->files[i];
	uint32_t k;
	int ret;

	if (ff->f)
		return 0;
	if (job->fio->openfiles && fj->nr_open >= job->fio->openfiles) {
		for (k = 0; k < fj->nr_files; k++) {
			if (k != i && fj->files[k].f) {
				ret = close_file(run, job, &fj->files[k]);
				if (ret)
					return ret;
				break;
			}
		}
	}
	ret = zcow_open(to_fs(run)->fs, ff->path,
			O_RDWR | (job->fio->allow_file_create ? O_CREAT : 0),
			&ff->f);
	if (ret == -ENOENT && !job->fio->allow_file_create)
		return zrun_opt_err(run, job->fio, ZFIO_OPT_ALLOW_FILE_CREATE,
				    "'%s' does not exist and the job may not "
				    "create it", ff->path);
	if (ret)
		return file_err(run, job, "open", ff->path, ret);
	if (++fj->nr_open > job->max_open)
		job->max_open = fj->nr_open;
	if (!ff->is_created)
		job->nr_creates++;
	ff->is_created = true;
	return zfio_log_file(run, job, ff->path, ZFIO_FILE_OPEN);
}

/* Remove the job's file @i from its name: rename (to NAME.renamed) or
 * unlink. */
static int remove_file(struct zrun *run, struct zrun_job *job, uint32_t i,
		       bool is_rename)
{
	struct fs_job *fj = job->tpriv;
	struct fs_file *ff = &fj->files[i];
	char to[FS_PATH_LEN + sizeof(RENAMED_SUFFIX)];
	int ret;

	if (!ff->is_created)
		return 0;
	ret = close_file(run, job, ff);
	if (ret)
		return ret;
	if (is_rename) {
		snprintf(to, sizeof(to), "%s%s", ff->path, RENAMED_SUFFIX);
		ret = zcow_rename(to_fs(run)->fs, ff->path, to);
		if (ret)
			return file_err(run, job, "rename", ff->path, ret);
		job->nr_renames++;
	} else {
		ret = zcow_unlink(to_fs(run)->fs, ff->path);
		if (ret)
			return file_err(run, job, "unlink", ff->path, ret);
		job->nr_unlinks++;
	}
	ff->is_created = false;
	ff->is_dirty = false;
	return 0;
}

/* The namespace operation of the file the job finished last, if due. */
static int pending_op(struct zrun *run, struct zrun_job *job)
{
	struct fs_job *fj = job->tpriv;
	uint32_t i = fj->pending, r;

	if (i == NO_FILE)
		return 0;
	fj->pending = NO_FILE;
	r = (uint32_t)(zrun_rand(job) % 100);
	if (r < job->fio->zcow_rename_pct)
		return remove_file(run, job, i, true);
	if (r < job->fio->zcow_rename_pct + job->fio->zcow_unlink_pct)
		return remove_file(run, job, i, false);
	return 0;
}

/* unlink_each_loop: the job's files go after every loop. */
static int unlink_loop(struct zrun *run, struct zrun_job *job)
{
	struct fs_job *fj = job->tpriv;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < fj->nr_files && !ret; i++)
		ret = remove_file(run, job, i, false);
	return ret;
}

/* fio's filename_format: $jobname, $jobnum (the clone), $filenum, in any
 * case (fio's strcasestr()), and $clientuid: fio's address as a
 * client/server client, empty when it runs alone (zcow always does). */
static void format_name(const struct zfio_job *f, unsigned int clone,
			uint32_t filenum, char *out, size_t len)
{
	const char *fmt = f->filename_format[0] ? f->filename_format :
						  "$jobname.$jobnum.$filenum";
	size_t n = 0;

	out[0] = '\0';
	while (*fmt && n + 1 < len) {
		int w = 0;

		if (!strncasecmp(fmt, "$jobname", 8)) {
			w = snprintf(out + n, len - n, "%s", f->name);
			fmt += 8;
		} else if (!strncasecmp(fmt, "$jobnum", 7)) {
			w = snprintf(out + n, len - n, "%u", clone);
			fmt += 7;
		} else if (!strncasecmp(fmt, "$filenum", 8)) {
			w = snprintf(out + n, len - n, "%u", filenum);
			fmt += 8;
		} else if (!strncasecmp(fmt, "$clientuid", 10)) {
			fmt += 10;
		} else {
			out[n] = *fmt++;
			out[n + 1] = '\0';
			w = 1;
		}
		n += (size_t)w < len - n ? (size_t)w : len - n - 1;
	}
}

static int need_buf(struct fs_run *fr, uint64_t len)
{
	void *b;

	if (len <= fr->buf_len)
		return 0;
	b = realloc(fr->buf, len);
	if (!b)
		return -ENOMEM;
	memset(b, 0xa5, len);
	fr->buf = b;
	fr->buf_len = len;
	return 0;
}

/*
 * The job's files must fit the file system before anything is allocated
 * for them, with the files of the jobs before: every file costs at least
 * one 4 KiB block (a file written once; an empty one costs metadata), a
 * file laid out at set-up (a reader's, without create_on_open) its whole
 * size.  Clones have their own files; a file filename= names is
 * shared by every job and clone naming it, counted once.  A
 * necessary bound only: metadata needs room too, and a writer may still
 * run out of space later (ENOSPC, reported by the I/O).
 */
static int check_room(struct zrun *run, struct zrun_job *job, uint32_t nr,
		      uint64_t fsize, bool is_laid_out, const char *named)
{
	const struct zfio_job *f = job->fio;
	struct fs_run *fr = to_fs(run);
	uint64_t total = fr->writable_bytes, per, need, had = 0;
	struct named_file *nf = NULL;
	enum zfio_opt opt;
	uint32_t i;

	per = is_laid_out ? fsize : ZCOW_SECTORSIZE;
	need = (unsigned __int128)nr * per > UINT64_MAX ? UINT64_MAX :
							  nr * per;
	for (i = 0; named && i < fr->nr_named; i++)
		if (!strcmp(fr->named[i].path, named))
			nf = &fr->named[i];
	if (nf && nf->bytes >= need)
		return 0;	/* counted for an earlier job (or clone) */
	if (nf)
		had = nf->bytes;
	if (need - had <= total && fr->files_bytes <= total - (need - had)) {
		fr->files_bytes += need - had;
		if (nf) {
			nf->bytes = need;
		} else if (named) {
			if (ZCOW_GROW_ONE(&fr->named, fr->nr_named,
					  &fr->cap_named))
				return -ENOMEM;
			nf = &fr->named[fr->nr_named];
			nf->path = strdup(named);
			if (!nf->path)
				return -ENOMEM;
			nf->bytes = need;
			fr->nr_named++;
		}
		return 0;
	}
	opt = nr > 1 && (!is_laid_out || f->at[ZFIO_OPT_NRFILES].line) ?
		      ZFIO_OPT_NRFILES :
	      f->filesize.is_set ? ZFIO_OPT_FILESIZE : ZFIO_OPT_SIZE;
	return zrun_opt_err(run, f, opt, "%u file(s) of at least %llu bytes "
			    "(%s; clone %u, after %llu bytes for the files "
			    "before) do not fit the file system's %llu "
			    "writable bytes", nr, (unsigned long long)per,
			    is_laid_out ? "laid out for reading" :
					  "one 4 KiB block each",
			    job->clone, (unsigned long long)fr->files_bytes,
			    (unsigned long long)total);
}

/* Lay file @i out with data up to @fsize, as fio does for reads (open
 * first: with openfiles it may be closed). */
static int lay_out(struct zrun *run, struct zrun_job *job, uint32_t i,
		   uint64_t fsize)
{
	struct fs_run *fr = to_fs(run);
	struct fs_file *ff = &((struct fs_job *)job->tpriv)->files[i];
	/* in pieces of bs, whole 4 KiB blocks (a sub-block bs: one) */
	uint64_t chunk = (job->fio->bs + ZCOW_SECTORSIZE - 1) /
			 ZCOW_SECTORSIZE * ZCOW_SECTORSIZE;
	struct zcow_stat st;
	uint64_t off;
	int ret;

	ret = zcow_fstat(ff->f, &st);
	for (off = st.size; !ret && off < fsize; off += chunk) {
		uint64_t n = fsize - off < chunk ? fsize - off : chunk;
		int64_t w = zcow_pwrite(ff->f, fr->buf, n, off);

		ret = w < 0 ? (int)w : 0;
	}
	return ret ? file_err(run, job, "laying out", ff->path, ret) : 0;
}

/*
 * A loadfile job (zcow_loadfile, harness/dbench.h): the loadfile's
 * operations are the job's, so the options that would choose other ones
 * are refused; the clones of one job share the parsed file.  Client N is
 * the clone N, under directory= (created, untimed).
 */
static int loadfile_init(struct zrun *run, struct zrun_job *job)
{
	const struct zfio_job *f = job->fio;
	struct zdb_load *load = NULL;
	struct fs_job *fj;
	char err[ZFIO_ERR_LEN];
	const char *bad = NULL;
	unsigned int i;
	int ret;

	if (f->filename[0])
		bad = "filename";
	else if (f->size.is_set || f->filesize.is_set)
		bad = f->size.is_set ? "size" : "filesize";
	else if (f->nrfiles > 1 || f->openfiles)
		bad = f->openfiles ? "openfiles" : "nrfiles";
	else if (f->fsync || f->fdatasync || f->end_fsync)
		bad = f->fsync ? "fsync" : f->fdatasync ? "fdatasync" :
							  "end_fsync";
	else if (f->zcow_rename_pct || f->zcow_unlink_pct)
		bad = "zcow_rename_pct/zcow_unlink_pct";
	else if (f->iodepth > 1)
		bad = "iodepth";
	else if (f->unlink || f->unlink_each_loop || f->create_on_open)
		bad = f->unlink ? "unlink" : f->unlink_each_loop ?
			"unlink_each_loop" : "create_on_open";
	else if (f->is_filecreate || f->filename_format[0])
		bad = f->is_filecreate ? "ioengine=filecreate" :
					 "filename_format";
	else if (f->at[ZFIO_OPT_RW].line || f->at[ZFIO_OPT_BS].line)
		bad = f->at[ZFIO_OPT_RW].line ? "rw" : "bs";
	if (bad)
		return zrun_opt_err(run, f, ZFIO_OPT_ZCOW_LOADFILE, "the "
				    "loadfile's operations are the job's: "
				    "drop %s", bad);
	for (i = 0; i < job->idx && !load; i++) {
		const struct fs_job *o = run->jobs[i].tpriv;

		if (run->jobs[i].fio == f && o && o->db)
			load = o->db->load;
	}
	if (load) {
		zdb_get(load);
	} else {
		ret = zdb_load(f->zcow_loadfile, &load, err, sizeof(err));
		if (ret)
			return zrun_opt_err(run, f, ZFIO_OPT_ZCOW_LOADFILE,
					    "%s", err);
	}
	fj = calloc(1, sizeof(*fj));
	if (fj)
		fj->db = calloc(1, sizeof(*fj->db));
	if (!fj || !fj->db) {
		free(fj);
		zdb_put(load);
		return -ENOMEM;
	}
	job->tpriv = fj;
	fj->last = NO_FILE;
	fj->pending = NO_FILE;
	ret = zdb_client_init(fj->db, load, to_fs(run)->fs, f->directory,
			      job->clone);
	zdb_put(load);
	if (ret)
		return zrun_opt_err(run, f, ZFIO_OPT_DIRECTORY, "%s",
				    strerror(-ret));
	job->range_start = job->range_len = 0;
	job->bytes_goal = 0;
	if (!f->directory[0])
		return 0;
	untimed(run, true);
	ret = make_dirs(run, job, ZFIO_OPT_DIRECTORY, f->directory);
	untimed(run, false);
	return ret;
}

/* @job's target state with @nr files of @fsize bytes, none open
 * (job->tpriv, freed by fs_close() even when half made); NULL: no
 * memory. */
static struct fs_job *new_fs_job(struct zrun_job *job, uint32_t nr,
				 uint64_t fsize)
{
	struct fs_job *fj = calloc(1, sizeof(*fj));

	if (!fj)
		return NULL;
	job->tpriv = fj;
	fj->files = calloc(nr, sizeof(*fj->files));
	if (!fj->files)
		return NULL;
	fj->nr_files = nr;
	fj->filesize = fsize;
	fj->last = NO_FILE;
	fj->pending = NO_FILE;
	return fj;
}

/*
 * A replay job (read_iolog, harness/fio_log.h): its files are the ones
 * the log adds, at the paths it names (their directories made, a
 * relative name under '/'), created at set-up, each as large as the
 * largest reach of the log's I/Os (the job's range is the files one
 * after the other, as any job's) and laid out with data up to it when
 * the log reads, as fio lays out files for reading.
 */
static int replay_init(struct zrun *run, struct zrun_job *job)
{
	const char *const *paths;
	struct fs_job *fj;
	uint64_t extent, fsize, max_len;
	bool has_reads;
	uint32_t i, nr;
	int ret;

	zfio_replay_files(job, &paths, &nr, &extent, &max_len, &has_reads);
	fsize = (extent + ZCOW_SECTORSIZE - 1) / ZCOW_SECTORSIZE *
		ZCOW_SECTORSIZE;
	if (!fsize)
		fsize = ZCOW_SECTORSIZE;
	ret = check_room(run, job, nr, fsize, has_reads, NULL);
	if (ret)
		return ret;
	fj = new_fs_job(job, nr, fsize);
	if (!fj)
		return -ENOMEM;
	job->range_start = 0;
	job->range_len = fsize * nr;
	job->bytes_goal = 0;
	ret = need_buf(to_fs(run), max_len > job->fio->bs ? max_len :
						       job->fio->bs);
	if (ret)
		return ret;
	untimed(run, true);
	for (i = 0; i < nr && !ret; i++) {
		struct fs_file *ff = &fj->files[i];
		char *slash;

		if (asprintf(&ff->path, "%s%s", paths[i][0] == '/' ? "" : "/",
			     paths[i]) < 0) {
			ff->path = NULL;
			ret = -ENOMEM;
			break;
		}
		slash = strrchr(ff->path, '/');
		if (slash != ff->path) {
			*slash = '\0';
			ret = make_dirs(run, job, ZFIO_OPT_FILENAME, ff->path);
			*slash = '/';
		}
		ret = ret ?: open_file(run, job, i);
		if (!ret && has_reads)
			ret = lay_out(run, job, i, fsize);
	}
	if (!ret) {
		job->nr_creates = 0;
		job->max_open = 0;
	}
	if (!ret && has_reads) {
		ret = zcow_sync(to_fs(run)->fs);
		if (ret)
			zrun_errf(run, "job '%s': laying out the files: %s",
				  job->fio->name, strerror(-ret));
	}
	untimed(run, false);
	return ret;
}

/* The path of the job's file @name under @dir (@sep between): an
 * absolute name (filename=, the http engine's objects) is a path from
 * the root, under directory= when one is given (fio joins the two).
 * NULL: no memory. */
static char *file_path(const char *dir, const char *sep, const char *name)
{
	bool is_abs = name[0] == '/';
	char *path;

	if (asprintf(&path, "%s%s%s", dir, is_abs ? "" : sep,
		     is_abs && dir[strlen(dir) - 1] == '/' ? name + 1 :
							      name) < 0)
		return NULL;
	return path;
}

static int fs_job_init(struct zrun *run, struct zrun_job *job)
{
	const struct zfio_job *f = job->fio;
	struct fs_run *fr = to_fs(run);
	uint64_t total = fr->writable_bytes, zs = run->dev->info.zone_size;
	uint64_t size, fsize;
	struct fs_job *fj;
	uint32_t i, nr = f->filename[0] ? 1 : f->nrfiles;
	const char *dir = f->directory[0] ? f->directory : "/";
	const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
	bool is_reader = zfio_rw_has_read(f->rw) && !f->is_filecreate;
	bool is_http = f->ctl.engine == ZFIO_ENGINE_HTTP;
	char *named = NULL;
	int ret;

	if (f->zcow_loadfile[0])
		return loadfile_init(run, job);
	if (zfio_replay_is(job))
		return replay_init(run, job);
	if (!nr)
		nr = 1;
	size = f->size.is_set ? zfio_size_bytes(&f->size, total, zs, f->bs) : 0;
	fsize = f->filesize.is_set ?
			zfio_size_bytes(&f->filesize, total, zs, f->bs) :
			size / nr;
	if (f->log.fill_device)	/* fio: "something really large" */
		fsize = total;
	if (!size || f->log.fill_device)
		size = fsize * nr;
	fsize -= fsize % f->bs;
	if (!fsize) {
		zrun_errf(run, "%s:%d: job '%s': a file needs size= or "
			       "filesize= of at least bs (%llu bytes)",
			  f->file, f->line, f->name,
			  (unsigned long long)f->bs);
		return -EINVAL;
	}
	/* any size: zcow_pwrite reads, modifies and writes the 4 KiB
	 * blocks a write covers in part, as a buffered write on btrfs */
	if (is_http) {		/* objects, made by writes: no layout */
		is_reader = false;
		nr = 1;
	}
	if (f->filename[0] && !(named = file_path(dir, sep, f->filename)))
		return -ENOMEM;
	ret = check_room(run, job, nr, fsize, is_reader && !f->create_on_open,
			 named);
	free(named);
	if (ret)
		return ret;

	fj = new_fs_job(job, nr, fsize);
	if (!fj)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		struct fs_file *ff = &fj->files[i];
		char name[ZFIO_VAL_LEN * 2];

		if (f->filename[0])
			snprintf(name, sizeof(name), "%s", f->filename);
		else
			format_name(f, job->clone, i, name, sizeof(name));
		ff->path = file_path(dir, sep, name);
		if (!ff->path)
			return -ENOMEM;
		ret = zfio_log_file(run, job, ff->path, ZFIO_FILE_ADD);
		if (ret)
			return ret;
	}
	job->range_start = 0;
	job->range_len = fsize * nr;
	job->bytes_goal = size * f->loops;	/* run.c drops it if time_based */
	/* lay_out() writes whole blocks */
	ret = need_buf(fr, (f->bs_max + ZCOW_SECTORSIZE - 1) /
			   ZCOW_SECTORSIZE * ZCOW_SECTORSIZE);
	if (ret)
		return ret;
	untimed(run, true);
	ret = make_dirs(run, job, ZFIO_OPT_DIRECTORY, dir);
	for (i = 0; i < nr && !ret; i++) {
		/* filename_format directories (fio creates them too); a
		 * filename= path's directories, which the host has (/dev,
		 * /tmp) and a new file system does not */
		char *slash = strrchr(fj->files[i].path, '/');

		if (!slash || slash == fj->files[i].path)
			continue;
		*slash = '\0';
		ret = make_dirs(run, job, f->filename[0] ? ZFIO_OPT_FILENAME :
				ZFIO_OPT_FILENAME_FORMAT, fj->files[i].path);
		*slash = '/';
	}
	/*
	 * fio: without create_on_open the files are made at set-up (laid
	 * out with data when the job reads); with it, a file is created
	 * when the job first opens it (no layout), and at most openfiles
	 * are open at once either way.
	 */
	for (i = 0; i < nr && !ret && !f->create_on_open && !is_http; i++) {
		ret = open_file(run, job, i);
		if (!ret && is_reader)
			ret = lay_out(run, job, i, fsize);
	}
	if (!ret) {	/* set-up creates and opens are not the job's */
		job->nr_creates = 0;
		job->max_open = 0;
	}
	if (!ret && is_reader && !f->create_on_open) {
		ret = zcow_sync(fr->fs);
		if (ret)
			zrun_errf(run, "%s:%d: job '%s': laying out the files: "
				       "%s", f->file, f->line, f->name,
				  strerror(-ret));
	}
	untimed(run, false);
	return ret;
}

/* The latest commit's completion in simulated time (0: none yet). */
static uint64_t last_done(const struct zrun_txns *t)
{
	return t->nr ? t->v[t->nr - 1].done : 0;
}

int zrun_txn_note(struct zrun_txns *t, uint64_t gen, uint64_t start,
		  uint64_t done)
{
	struct zrun_txn *c;

	if (t->nr && t->v[t->nr - 1].gen >= gen)
		return 0;
	/* btrfs_commit_transaction waits for the previous transaction */
	if (done < last_done(t))
		done = last_done(t);
	if (ZCOW_GROW_ONE(&t->v, t->nr, &t->cap))
		return -ENOMEM;
	c = &t->v[t->nr++];
	c->gen = gen;
	c->start = start;
	c->done = done;
	return 0;
}

bool zrun_txn_is_durable(const struct zrun_txns *t, uint64_t transid,
			 uint64_t now)
{
	uint64_t lo = 0, hi = t->nr;

	/* the first commit that made a generation >= @transid */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].gen >= transid)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < t->nr && t->v[lo].done <= now;
}

uint64_t zrun_txn_running(const struct zrun_txns *t, uint64_t gen,
			  uint64_t now)
{
	const struct zrun_txn *last = t->nr ? &t->v[t->nr - 1] : NULL;

	if (last && last->start == now && last->gen == gen)
		return gen;
	return gen + 1;
}

enum zrun_txn_fsync zrun_txn_fsync(const struct zrun_txns *t,
				   uint64_t transid, uint64_t now,
				   uint64_t *at_ret)
{
	const struct zrun_txn *last = t->nr ? &t->v[t->nr - 1] : NULL;

	*at_ret = now;
	if (zrun_txn_is_durable(t, transid, now))
		return ZRUN_TXN_DURABLE;
	if (last && last->start == now && last->gen >= transid) {
		*at_ret = last->done;
		return ZRUN_TXN_SHARE;
	}
	if (last_done(t) > now)
		*at_ret = last_done(t);
	return ZRUN_TXN_COMMIT;
}

/* The fs's generation is durable at @done, its commit run by a call that
 * started at @start. */
static int note_commit(struct zrun *run, uint64_t start, uint64_t done)
{
	struct fs_run *fr = to_fs(run);

	return zrun_txn_note(&fr->txns, zcow_fs_generation(fr->fs), start,
			     done);
}

/* zcow_statfs() for the runner's counters; an error is the run's. */
static int statfs_of(struct zrun *run, struct zcow_statfs *st)
{
	int ret = zcow_statfs(to_fs(run)->fs, st);

	if (ret)
		zrun_errf(run, "statfs: %s", strerror(-ret));
	return ret;
}

/* The fs counters at the start of the jobs (set-up is not counted). */
static int take_base(struct zrun *run)
{
	struct fs_run *fr = to_fs(run);
	struct zcow_fs_info info;
	int ret;

	if (fr->has_base)
		return 0;
	ret = zcow_fs_info(fr->fs, &info);
	if (ret)
		return ret;
	fr->commits_base = info.commits.nr_commits;
	memcpy(fr->nodes_base, info.commits.nodes_by_tree,
	       sizeof(fr->nodes_base));
	fr->reclaim_base = info.reclaim_stats;
	ret = statfs_of(run, &fr->st_base);
	fr->has_base = !ret;
	/* The set-up's generations are durable when the jobs start. */
	return ret ?: note_commit(run, 0, 0);
}

/*
 * What a timed call held (run.h, enum zrun_excl): zcow holds its fs lock
 * (files->lock) through a commit, device I/O included, as a btrfs commit
 * blocks transaction joins: a call that committed (statfs nr_commits went
 * up) keeps every other operation out until it completes, plain writes
 * too (zcow reserves their space under the fs lock, and inserts their
 * extent items under it after the data landed).  A log sync without a
 * commit keeps only the other syncs out (btrfs's log mutex).  The one
 * exception is the fsync that commits under commit_model=btrfs
 * (fsync_btrfs()), which holds the others only until its critical
 * section ends.
 */
struct fs_held {
	uint64_t nr_commits, nr_log_syncs;
};

static int held_start(struct zrun *run, struct fs_held *h)
{
	struct zcow_statfs st;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = statfs_of(run, &st);
	if (ret)
		return ret;
	h->nr_commits = st.nr_commits;
	h->nr_log_syncs = st.nr_log_syncs;
	return 0;
}

/* The call started at @start and completed at @done: what it held, and
 * the commit it ran. */
static int held_done(struct zrun *run, const struct fs_held *h,
		     uint64_t start, uint64_t done)
{
	struct zcow_statfs st;
	int ret = statfs_of(run, &st);

	if (ret)
		return ret;
	if (st.nr_commits != h->nr_commits) {
		run->op_excl = ZRUN_EXCL_ALL;
		return note_commit(run, start, done);
	}
	if (st.nr_log_syncs != h->nr_log_syncs)
		run->op_excl = ZRUN_EXCL_SYNCS;
	return 0;
}

/* What the job does before its I/O to file @i: the namespace operation
 * of the file it finished last; at the start of a new loop (a sequential
 * job back at its first byte), unlink_each_loop. */
static int before_io(struct zrun *run, struct zrun_job *job, uint64_t off)
{
	struct fs_job *fj = job->tpriv;
	int ret;

	ret = pending_op(run, job);
	if (!ret && fj->nr_io && off == 0 && !zfio_rw_is_random(job->fio->rw) &&
	    job->fio->unlink_each_loop)
		ret = unlink_loop(run, job);
	return ret;
}

/*
 * ioengine=http (fio's engines/http.c): every I/O is a request for one
 * object, named FILE_OFFSET_LENGTH after the job's first file (its path:
 * filename= or filename_format=, under directory=): a write PUTs it (the
 * object made or replaced whole with the I/O's bytes), a read GETs it
 * (an object that does not exist reads as zeros, as fio takes a 404),
 * a trim DELETEs it (one that does not exist is fine).  Here an object is
 * a file of zcow at that path: created or truncated and written, read,
 * or unlinked; each request opens and closes it.
 */
static int obj_do_io(struct zrun *run, struct zrun_job *job, enum zrun_op op,
		     uint64_t off, uint64_t len, uint64_t now,
		     uint64_t *len_ret, uint64_t *done_ret)
{
	static const char *const what[] = { "GET", "PUT", "DELETE" };
	struct fs_run *fr = to_fs(run);
	struct fs_job *fj = job->tpriv;
	struct zcow_file *f = NULL;
	struct zcow_stat st;
	struct zrun_tick tk;
	struct fs_held h;
	uint64_t io_off = off;
	char *path;
	int64_t n = 0;
	int ret;

	ret = take_base(run);
	ret = ret ?: held_start(run, &h);
	if (ret)
		return ret;
	off -= job->range_start;
	if (len > job->range_len - off)
		len = job->range_len - off;
	if (asprintf(&path, "%s_%llu_%llu", fj->files[0].path,
		     (unsigned long long)off, (unsigned long long)len) < 0)
		return -ENOMEM;
	zrun_tick_start(run, &tk, now);
	if (op == ZRUN_OP_TRIM) {
		n = zcow_unlink(fr->fs, path);
		if (!n)
			job->nr_unlinks++;
		n = n == -ENOENT ? 0 : n;
	} else if (op == ZRUN_OP_READ) {
		n = zcow_open(fr->fs, path, O_RDONLY, &f);
		if (!n) {
			n = zcow_pread(f, fr->buf, len, 0);
		} else if (n == -ENOENT) {
			/* a missing object reads as zeros */
			memset(fr->buf, 0, len);
			n = (int64_t)len;
		}
		/* the object's bytes as the job's (run_verify.c) */
		ret = n < 0 ? 0 : zrun_data_read(run, job, path, 0, fr->buf,
						 (uint64_t)n);
	} else {
		/* the job's bytes (run_verify.c); 1: a dry run */
		ret = zrun_data_write(run, job, io_off, path, 0, fr->buf, len);
		if (!ret && zcow_stat(fr->fs, path, &st) == -ENOENT)
			job->nr_creates++;
		if (!ret)
			n = zcow_open(fr->fs, path,
				      O_RDWR | O_CREAT | O_TRUNC, &f);
		if (!ret && !n)
			n = zcow_pwrite(f, fr->buf, len, 0);
		ret = ret < 0 ? ret : 0;
	}
	if (f)
		zcow_close(f);
	if (ret) {
		free(path);
		return ret;
	}
	if (n < 0) {
		run->io_err = (int)-n;
		snprintf(run->io_err_msg, sizeof(run->io_err_msg),
			 "job '%s': %s of object '%s': %s", job->fio->name,
			 what[op], path, strerror((int)-n));
	}
	free(path);
	*len_ret = len;
	*done_ret = zrun_tick_done(run, &tk);
	return held_done(run, &h, now, *done_ret);
}

static int fs_do_io(struct zrun *run, struct zrun_job *job, enum zrun_op op,
		    uint64_t off, uint64_t len, uint64_t now,
		    uint64_t *len_ret, uint64_t *done_ret)
{
	struct fs_run *fr = to_fs(run);
	struct fs_job *fj = job->tpriv;
	struct fs_file *ff;
	struct zrun_tick tk;
	struct fs_held h;
	uint64_t io_off;
	uint32_t i;
	int64_t n;
	int ret;

	*len_ret = 0;
	*done_ret = now;
	if (job->fio->ctl.engine == ZFIO_ENGINE_HTTP)
		return obj_do_io(run, job, op, off, len, now, len_ret,
				 done_ret);
	ret = take_base(run);
	ret = ret ?: held_start(run, &h);
	if (ret)
		return ret;
	zrun_tick_start(run, &tk, now);
	/* a verify read is not the job's own I/O: no namespace work */
	ret = zrun_io_is_verify(job) ? 0 :
	      before_io(run, job, off - job->range_start);
	io_off = off;
	i = (uint32_t)((off / fj->filesize) % fj->nr_files);
	ret = ret ?: open_file(run, job, i);
	if (ret)
		return ret;
	ff = &fj->files[i];
	off %= fj->filesize;
	if (len > fj->filesize - off)
		len = fj->filesize - off;
	if (job->fio->is_filecreate) {	/* the open was the operation */
		n = (int64_t)len;
	} else if (job->fio->ctl.engine == ZFIO_ENGINE_FALLOC) {
		/* fio's falloc engine: every I/O an fallocate() (a read
		 * KEEP_SIZE, a write mode 0, a trim PUNCH_HOLE); a zoned
		 * file system refuses every mode, as zcow_fallocate() */
		ret = zcow_fallocate(ff->f, off, len);
		n = ret ? ret : (int64_t)len;
	} else if (op == ZRUN_OP_TRIM) {	/* fio: BLKDISCARD on the file */
		n = -ENOTTY;
	} else if (op == ZRUN_OP_WRITE) {
		/* the job's bytes (run_verify.c); 1: a dry run */
		ret = zrun_data_write(run, job, io_off, ff->path, off, fr->buf,
				      len);
		if (ret < 0)
			return ret;
		if (ret)
			n = (int64_t)len;
		else if (is_buffered(job))
			n = buffer_write(ff, fr->buf, len, off);
		else
			n = zcow_pwrite(ff->f, fr->buf, len, off);
		ff->is_dirty |= !ret;
	} else {
		ret = write_back(run, job, ff);
		if (ret)
			return ret;
		n = zcow_pread(ff->f, fr->buf, len, off);
		ret = n < 0 ? 0 : zrun_data_read(run, job, ff->path, off,
						 fr->buf, (uint64_t)n);
		if (ret)
			return ret;
	}
	job->io_path = ff->path;
	job->io_off = off;
	if (n == -ENOSPC && zfio_log_fills(job)) {
		/* fill_device: the file system is full, the job ends */
		zfio_log_enospc(job);
		*done_ret = zrun_tick_done(run, &tk);
		return held_done(run, &h, now, *done_ret);
	}
	if (n < 0) {
		static const char *const verb[2][3] = {
			{ "read", "write", "trim" },
			{ "fallocate (keep size)", "fallocate (allocate)",
			  "fallocate (punch hole)" },
		};
		bool is_falloc = job->fio->ctl.engine == ZFIO_ENGINE_FALLOC;
		const struct zfio_at *at = &job->fio->at[is_falloc ?
				ZFIO_OPT_IOENGINE : ZFIO_OPT_RW];
		char where[ZFIO_PATH_LEN + 16] = "";

		/* the I/O's own error: run_ctl.c decides whether the job
		 * goes on (continue_on_error, ignore_error); a trim's, or
		 * an fallocate's, names the option that asked for it */
		if ((op == ZRUN_OP_TRIM || is_falloc) && at->line)
			snprintf(where, sizeof(where), "%.*s:%d: ",
				 ZFIO_PATH_LEN - 1, at->file, at->line);
		run->io_err = (int)-n;
		snprintf(run->io_err_msg, sizeof(run->io_err_msg),
			 "%sjob '%s': %s of %llu at %llu in '%s': %s%s", where,
			 job->fio->name, verb[is_falloc][op],
			 (unsigned long long)len, (unsigned long long)off,
			 ff->path, strerror((int)-n),
			 is_falloc ? " (a zoned file system refuses fallocate "
			 "in every mode, as btrfs does)" :
			 op == ZRUN_OP_TRIM ? " (fio trims a file with the "
			 "BLKDISCARD ioctl, which only a block device takes)" :
			 "");
		fj->last = i;
		*len_ret = len;
		*done_ret = zrun_tick_done(run, &tk);
		return held_done(run, &h, now, *done_ret);
	}
	fj->last = i;
	fj->nr_io++;
	/* A sequential writer has finished the file: its namespace
	 * operation comes after the sync fsync=N may owe it. */
	if (op == ZRUN_OP_WRITE && !zfio_rw_is_random(job->fio->rw) &&
	    off + (uint64_t)n == fj->filesize &&
	    (job->fio->zcow_rename_pct || job->fio->zcow_unlink_pct))
		fj->pending = i;
	*len_ret = op == ZRUN_OP_READ && !n ? len : (uint64_t)n;
	*done_ret = zrun_tick_done(run, &tk);
	if (zrun_unusable_due(run, *done_ret)) {
		struct zcow_fs_info info;

		if (!zcow_fs_info(fr->fs, &info))
			zrun_note_unusable(run, *done_ret, &info);
	}
	return held_done(run, &h, now, *done_ret);
}

/*
 * The next line of a loadfile job, timed as an I/O (a commit it caused
 * holds the others off: held_done()).  A Flush only names its file here:
 * the scheduler runs it next as the job's sync (fs_fsync), so it batches
 * with the other clients' as fsync=N does.  Without time_based the job
 * ends after loops passes; with it, a pass that took no simulated time
 * could never reach runtime and is an error.
 */
static int fs_replay(struct zrun *run, struct zrun_job *job, uint64_t now,
		     struct zrun_replay *r)
{
	struct fs_job *fj = job->tpriv;
	struct zdb_client *c = fj->db;
	struct zdb_result res;
	struct zrun_tick tk;
	struct fs_held h;
	char err[ZFIO_ERR_LEN];
	uint64_t pass_start = c->pass_start;
	int ret;

	r->done = now;
	ret = take_base(run);
	ret = ret ?: held_start(run, &h);
	if (ret)
		return ret;
	if (!fj->nr_io++)
		c->pass_start = now;
	c->count_from = job->start + job->fio->ramp_time_ns;
	zrun_tick_start(run, &tk, now);
	ret = zdb_step(c, now, &res, err, sizeof(err));
	if (ret) {
		zrun_errf(run, "job '%s': %s", job->fio->name, err);
		return ret;
	}
	switch (res.step) {
	case ZDB_STEP_WAIT:
		r->done = res.wait;
		return 0;
	case ZDB_STEP_PASS:
		if (!job->fio->time_based) {
			r->is_end = c->st.passes >= job->fio->loops;
			return 0;
		}
		if (now > pass_start)
			return 0;
		zrun_errf(run, "job '%s': a pass over '%s' took no simulated "
			       "time (no device I/O): time_based would never "
			       "reach runtime", job->fio->name,
			  job->fio->zcow_loadfile);
		return -EINVAL;
	case ZDB_STEP_FLUSH:
		r->is_sync = true;
		break;
	case ZDB_STEP_DONE:
		break;
	}
	r->op = res.written ? ZRUN_OP_WRITE : ZRUN_OP_READ;
	r->len = res.written ? res.written : res.read;
	r->done = zrun_tick_done(run, &tk);
	if (zrun_unusable_due(run, r->done)) {
		struct zcow_fs_info info;

		if (!zcow_fs_info(to_fs(run)->fs, &info))
			zrun_note_unusable(run, r->done, &info);
	}
	return held_done(run, &h, now, r->done);
}

/* The file fio's fsync=N syncs: the last I/O's; a replay's, the one its
 * log names. */
static uint32_t sync_one(const struct zrun_job *job)
{
	const struct fs_job *fj = job->tpriv;

	return zfio_replay_is(job) ? zfio_replay_sync_file(job) : fj->last;
}

/* zcow_fsync / zcow_fdatasync of the files a sync covers (the file of
 * the last write, or every open file). */
static int sync_files(struct zrun *run, struct zrun_job *job,
		      bool is_data_only, bool is_all)
{
	struct fs_job *fj = job->tpriv;
	uint32_t i, one = sync_one(job);
	int ret = 0;

	if (fj->db)	/* a loadfile's Flush (fs_replay) */
		ret = zcow_fsync(fj->db->flush);
	for (i = 0; i < fj->nr_files && !ret; i++) {
		struct zcow_file *f = fj->files[i].f;

		if (!f || (!is_all && i != one))
			continue;
		ret = write_back(run, job, &fj->files[i]);
		if (ret)
			return ret;
		ret = is_data_only ? zcow_fdatasync(f) : zcow_fsync(f);
		fj->files[i].is_dirty = false;
	}
	if (ret)
		zrun_errf(run, "job '%s': %s: %s", job->fio->name,
			  is_data_only ? "fdatasync" : "fsync", strerror(-ret));
	return ret;
}

/*
 * The last transaction that changed the files a sync covers (0: none),
 * and whether one of them was written since its last sync.  btrfs takes
 * a buffered write into the page cache (delayed allocation): its extent
 * is allocated, written and its file extent item inserted when the
 * fsync starts the writeback (btrfs_sync_file: start_ordered_ops, then
 * btrfs_finish_ordered_io joins the transaction running then), so a
 * commit between the write and the fsync carries none of it, and the
 * fsync must commit the transaction running at its start
 * (zrun_txn_running()).  zcow has no page cache: zcow_pwrite inserts
 * the items at once, in the transaction of the write, which another
 * job's commit may have made durable since.  (Background writeback,
 * which btrfs runs on old or excess dirty data, is not modelled: a file
 * stays dirty until it is synced.)
 */
static int sync_transid(struct zrun *run, struct zrun_job *job, bool is_all,
			uint64_t *transid_ret, bool *is_dirty_ret,
			bool *has_pend_ret)
{
	struct fs_job *fj = job->tpriv;
	struct zcow_stat st;
	uint32_t i;
	int ret;

	*transid_ret = 0;
	*is_dirty_ret = *has_pend_ret = false;
	if (fj->db) {	/* a loadfile's Flush (fs_replay) */
		ret = zcow_fstat(fj->db->flush, &st);
		if (ret) {
			zrun_errf(run, "job '%s': fstat of the Flush's file: %s",
				  job->fio->name, strerror(-ret));
			return ret;
		}
		*transid_ret = st.transid;
		*is_dirty_ret = fj->db->flush_is_dirty;
	}
	for (i = 0; i < fj->nr_files; i++) {
		struct zcow_file *f = fj->files[i].f;

		if (!f || (!is_all && i != sync_one(job)))
			continue;
		ret = zcow_fstat(f, &st);
		if (ret) {
			zrun_errf(run, "job '%s': fstat of '%s': %s",
				  job->fio->name, fj->files[i].path,
				  strerror(-ret));
			return ret;
		}
		if (st.transid > *transid_ret)
			*transid_ret = st.transid;
		*is_dirty_ret |= fj->files[i].is_dirty;
		*has_pend_ret |= fj->files[i].nr_pend != 0;
	}
	return 0;
}

/*
 * An fsync without the tree-log under commit_model=btrfs, in simulated
 * time, as btrfs_sync_file() runs it (Linux 6.1 fs/btrfs/file.c,
 * transaction.c):
 *
 *   the files' last transaction durable at @now (skip_inode_logging():
 *     last_trans <= last_trans_committed)   -> nothing to do;
 *   a commit started at @now that covers it (the handle joined that
 *     transaction before its commit began: the waiters released by the
 *     same unblocking)                      -> wait for that commit;
 *   else                                    -> btrfs_start_transaction()
 *     joins the running transaction and btrfs_commit_transaction()
 *     commits it, even when the files' change is in a commit still
 *     writing (last_trans_committed moves only once it is durable):
 *     COMMIT_START first waits for the previous commit to be durable
 *     (TRANS_STATE_SUPER_COMMITTED, in_fsync), then the critical section
 *     (no device time in the model) and TRANS_STATE_UNBLOCKED at t0; its
 *     nodes, flushes and superblocks are issued at t0.
 *
 * The running transaction blocks TRANS_START (creates, namespace
 * operations, the other fsyncs' handles) from COMMIT_START to UNBLOCKED:
 * every other call is held until t0, not until the commit is durable; a
 * call after t0 is in the next transaction (in zcow: a commit of its
 * own, after this one).  zcow's commit stays one call under the fs lock
 * (every crash-ordering rule as it was): the transaction it closes holds
 * exactly the calls that started before it, as btrfs's does.
 */
static int fsync_btrfs(struct zrun *run, struct zrun_job *job,
		       bool is_data_only, bool is_all, uint64_t now,
		       uint64_t *done_ret)
{
	struct fs_run *fr = to_fs(run);
	enum zrun_txn_fsync what;
	uint64_t transid, gen, at;
	struct zrun_tick tk;
	struct fs_held h;
	bool is_dirty, has_pend;
	int ret;

	ret = sync_transid(run, job, is_all, &transid, &is_dirty, &has_pend);
	ret = ret ?: held_start(run, &h);
	if (ret)
		return ret;
	/* Delayed allocation (sync_transid()): buffered writes go into
	 * the transaction running now, which zcow opens after its last
	 * commit; writes already made join the commit of the calls
	 * released with this one, if one began now. */
	if (has_pend) {
		transid = zcow_fs_generation(fr->fs) + 1;
	} else if (is_dirty) {
		gen = zrun_txn_running(&fr->txns, zcow_fs_generation(fr->fs),
				       now);
		if (gen > transid)
			transid = gen;
	}
	what = zrun_txn_fsync(&fr->txns, transid, now, &at);
	run->nr_txn_fsyncs[what]++;
	if (what != ZRUN_TXN_COMMIT) {
		/* zcow commits nothing here: the change is in a commit */
		zrun_tick_start(run, &tk, now);
		ret = sync_files(run, job, is_data_only, is_all);
		if (ret)
			return ret;
		*done_ret = what == ZRUN_TXN_SHARE ? at :
						     zrun_tick_done(run, &tk);
		return held_done(run, &h, now, *done_ret);
	}
	zrun_tick_start(run, &tk, at);
	gen = zcow_fs_generation(fr->fs);
	ret = sync_files(run, job, is_data_only, is_all);
	if (!ret && zcow_fs_generation(fr->fs) == gen) {
		/* the files' change is in the commit still writing */
		ret = zcow_sync(fr->fs);
		if (ret)
			zrun_errf(run, "job '%s': commit: %s", job->fio->name,
				  strerror(-ret));
	}
	if (ret)
		return ret;
	*done_ret = zrun_tick_done(run, &tk);
	ret = note_commit(run, now, *done_ret);
	if (!ret && at > run->excl_all_until)
		run->excl_all_until = at;
	return ret;
}

static int fs_fsync(struct zrun *run, struct zrun_job *job, bool is_data_only,
		    bool is_all, uint64_t now, uint64_t *done_ret)
{
	struct zrun_tick tk;
	struct fs_held h;
	int ret = 0;

	*done_ret = now;
	ret = take_base(run);
	if (ret)
		return ret;
	if (run->set.commit_model == ZRUN_COMMIT_BTRFS && !run->set.treelog)
		return fsync_btrfs(run, job, is_data_only, is_all, now,
				   done_ret);
	ret = held_start(run, &h);
	if (ret)
		return ret;
	zrun_tick_start(run, &tk, now);
	ret = sync_files(run, job, is_data_only, is_all);
	if (ret)
		return ret;
	*done_ret = zrun_tick_done(run, &tk);
	return held_done(run, &h, now, *done_ret);
}

/* @ff's buffered writes back, timed from the job's sync due time (the
 * completion of its last slot); a commit they cause is noted as one. */
static int write_back_due(struct zrun *run, struct zrun_job *job,
			  struct fs_file *ff)
{
	uint64_t due = 0, done;
	struct zrun_tick tk;
	struct fs_held h;
	uint32_t i;
	int ret;

	for (i = 0; i < job->fio->iodepth; i++)
		if (job->slots[i] > due)
			due = job->slots[i];
	ret = held_start(run, &h);
	if (ret)
		return ret;
	zrun_tick_start(run, &tk, due);
	ret = write_back(run, job, ff);
	if (ret)
		return ret;
	done = zrun_tick_done(run, &tk);
	return held_done(run, &h, due, done);
}

/* Log-sync batching: the file fio's fsync=N syncs joins the next log
 * write (zcow_fsync_join; fdatasync logs what fsync logs). */
static int fs_sync_join(struct zrun *run, struct zrun_job *job,
			bool is_data_only)
{
	struct fs_job *fj = job->tpriv;
	uint32_t one = sync_one(job);
	struct zcow_file *f;
	int ret;

	(void)is_data_only;
	if (fj->db)	/* a loadfile's Flush (fs_replay) */
		f = fj->db->flush;
	else if (one >= fj->nr_files || !(f = fj->files[one].f))
		return 0;
	/* commit_model=btrfs without the log: whether the sync waits, shares
	 * a commit or commits depends on its start (fsync_btrfs()). */
	if (run->set.commit_model == ZRUN_COMMIT_BTRFS && !run->set.treelog)
		return -EAGAIN;
	ret = take_base(run);
	if (ret)
		return ret;
	if (!fj->db && fj->files[fj->last].nr_pend) {
		/* Buffered writes: without the log the sync is a commit of
		 * its own; with it, btrfs's fsync wrote them back before it
		 * waited for the log (is_buffered()): at the sync's due
		 * time, the last of the job's slots. */
		if (!run->set.treelog)
			return -EAGAIN;
		ret = write_back_due(run, job, &fj->files[fj->last]);
		if (ret)
			return ret;
	}
	ret = zcow_fsync_join(f);
	if (ret < 0 && ret != -EAGAIN)
		zrun_errf(run, "job '%s': fsync of '%s': %s", job->fio->name,
			  fj->db ? "a Flush handle" : fj->files[one].path,
			  strerror(-ret));
	return ret;
}

static int fs_job_end(struct zrun *run, struct zrun_job *job, uint64_t now,
		      uint64_t *done_ret)
{
	struct fs_job *fj = job->tpriv;
	struct zrun_tick tk;
	struct fs_held h;
	int ret;

	*done_ret = now;
	if (!fj->nr_io)
		return 0;
	ret = held_start(run, &h);
	if (ret)
		return ret;
	zrun_tick_start(run, &tk, now);
	ret = write_back_all(run, job);
	ret = ret ?: pending_op(run, job);
	if (!ret && job->fio->unlink_each_loop &&
	    !zfio_rw_is_random(job->fio->rw))
		ret = unlink_loop(run, job);
	if (ret)
		return ret;
	*done_ret = zrun_tick_done(run, &tk);
	return held_done(run, &h, now, *done_ret);
}

/* The loadfile jobs' counters, over ramp_time's end (the first of them)
 * to the last client's end: dbench's execute phase. */
static void loadfile_finish(struct zrun *run)
{
	uint64_t from = UINT64_MAX, to = 0;
	unsigned int i;

	memset(&run->dbench, 0, sizeof(run->dbench));
	run->dbench_clients = 0;
	for (i = 0; i < run->nr_jobs; i++) {
		const struct zrun_job *j = &run->jobs[i];
		const struct fs_job *fj = j->tpriv;

		if (!fj || !fj->db)
			continue;
		zdb_stats_add(&run->dbench, &fj->db->st);
		run->dbench_clients++;
		if (j->start + j->fio->ramp_time_ns < from)
			from = j->start + j->fio->ramp_time_ns;
		if (j->last_done > to)
			to = j->last_done;
	}
	run->has_dbench = run->dbench_clients > 0;
	run->dbench_secs = to > from ? (double)(to - from) / 1e9 : 0.0;
}

static int fs_finish(struct zrun *run)
{
	struct fs_run *fr = to_fs(run);
	struct zdev_stats now;
	struct zcow_statfs st;
	struct zcow_fs_info info;
	const struct zcow_statfs *b = &fr->st_base;
	unsigned int c;
	int ret;

	ret = zcow_fs_info(fr->fs, &info);
	if (ret)
		return ret;
	/* Freed below the write pointers; not the capacity gaps. */
	run->fs_zone_unusable = info.zone_unusable;
	run->fs_block_groups = info.nr_block_groups;
	run->fs_commits = info.commits.nr_commits -
			  (fr->has_base ? fr->commits_base : 0);
	for (c = 0; c < ZCOW_COMMIT_NR_TREES; c++)
		run->fs_commit_nodes[c] = info.commits.nodes_by_tree[c] -
					  (fr->has_base ? fr->nodes_base[c] : 0);
	run->fs_reclaim_policy = info.reclaim;
	run->fs_reclaim_threshold = info.reclaim_threshold;
	run->fs_reclaim_high = info.reclaim_high;
	run->fs_reclaimable = info.reclaimable;
	run->fs_data_live = info.data_live_bytes;
	run->fs_data_space = info.data_space_bytes;
	run->fs_pending_zones = info.nr_pending_zones;
	run->fs_data_zones = info.data_zones;
	zcow_reclaim_stats_sub(&run->fs_reclaim, &info.reclaim_stats,
			       fr->has_base ? &fr->reclaim_base : NULL);
	ret = statfs_of(run, &st);
	if (ret)
		return ret;
	run->fs_fsyncs = st.nr_fsyncs - b->nr_fsyncs;
	run->fs_log_syncs = st.nr_log_syncs - b->nr_log_syncs;
	run->fs_log_fallbacks = st.nr_log_fallbacks - b->nr_log_fallbacks;
	for (c = 0; c < ZCOW_LOG_NR_FALLBACKS; c++)
		run->fs_log_fallbacks_by[c] = st.nr_log_fallbacks_by[c] -
					      b->nr_log_fallbacks_by[c];
	run->fs_statfs_commits = st.nr_commits - b->nr_commits;
	run->fs_data_used = st.data_used;
	run->has_fs_stats = true;
	loadfile_finish(run);
	zrun_dev_stats(run, &now);	/* every device, since the jobs began */
	run->zone_resets = 0;
	run->zone_finishes = 0;
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		run->zone_resets += now.cmds[c][ZDEV_OP_RESET];
		run->zone_finishes += now.cmds[c][ZDEV_OP_FINISH];
	}
	return 0;
}

/* Keep the first error of a clean-up step (reported), carry on. */
static void keep_err(struct zrun *run, int *ret, int r, const char *what,
		     const char *path)
{
	if (!r || *ret)
		return;
	*ret = r;
	zrun_errf(run, "%s%s%s: %s", what, path ? " " : "", path ? path : "",
		  strerror(-r));
}

/* The device replace of the run (run_replace.c): start it, or copy the
 * next group and finish after the last; held like a commit. */
static int fs_replace(struct zrun *run, bool step, uint64_t now,
		      uint64_t *done_ret, bool *finished_ret)
{
	struct fs_run *fr = to_fs(run);
	struct zrun_tick tk;
	struct fs_held h;
	bool is_copied = false;
	int ret;

	*finished_ret = false;
	ret = held_start(run, &h);
	if (ret)
		return ret;
	zrun_tick_start(run, &tk, now);
	if (!step) {
		ret = zcow_replace_start(fr->fs, run->set.replace_devid,
					 run->rp_dev);
	} else {
		ret = zcow_replace_step(fr->fs, ZRUN_REPLACE_PIECE,
					&is_copied);
		if (!ret && is_copied) {
			ret = zcow_replace_finish(fr->fs);
			*finished_ret = !ret;
		}
	}
	*done_ret = zrun_tick_done(run, &tk);
	ret = ret ?: held_done(run, &h, now, *done_ret);
	(void)zcow_replace_status(fr->fs, &run->rp_st);
	if (ret)
		zrun_errf(run, "replace of devid %llu onto '%s': %s",
			  (unsigned long long)run->set.replace_devid,
			  run->set.replace_target, strerror(-ret));
	return ret;
}

/* A call of the fs beside the jobs (a snapshot, a cleaner step), timed
 * from @now: @call(fs, @arg); held as what it did (held_done()). */
static int timed_fs_call(struct zrun *run, uint64_t now, uint64_t *done_ret,
			 int (*call)(struct zcow_fs *fs, void *arg), void *arg)
{
	struct zrun_tick tk;
	struct fs_held h;
	int ret;

	ret = held_start(run, &h);
	if (ret)
		return ret;
	zrun_tick_start(run, &tk, now);
	ret = call(to_fs(run)->fs, arg);
	*done_ret = zrun_tick_done(run, &tk);
	return ret ?: held_done(run, &h, now, *done_ret);
}

struct snapshot_call {
	const char *name;
	uint64_t *id_ret;
};

static int snapshot_call(struct zcow_fs *fs, void *arg)
{
	struct snapshot_call *sc = arg;

	return zcow_snapshot(fs, sc->name, sc->id_ret);
}

/* A read-only snapshot of the file system (snapshot_interval=): it
 * commits, so it is held like a commit. */
static int fs_snapshot(struct zrun *run, const char *name, uint64_t now,
		       uint64_t *done_ret, uint64_t *id_ret)
{
	struct snapshot_call sc = { .name = name, .id_ret = id_ret };
	int ret = timed_fs_call(run, now, done_ret, snapshot_call, &sc);

	if (ret)
		zrun_errf(run, "snapshot %s at %.6f s: %s", name, now / 1e9,
			  strerror(-ret));
	return ret;
}

/* The background cleaner in simulated time (struct zrun_ops): a step
 * holds what a commit holds only when it committed (held_done()); its
 * relocation runs beside the jobs, as btrfs's reclaim worker does. */
static bool fs_cleaner_due(struct zrun *run)
{
	return zcow_cleaner_due(to_fs(run)->fs);
}

static bool fs_cleaner_behind(struct zrun *run)
{
	return zcow_cleaner_behind(to_fs(run)->fs);
}

static int cleaner_call(struct zcow_fs *fs, void *arg)
{
	(void)arg;
	return zcow_cleaner_step(fs);
}

static int fs_cleaner_step(struct zrun *run, uint64_t now,
			   uint64_t *done_ret)
{
	int ret = timed_fs_call(run, now, done_ret, cleaner_call, NULL);

	if (ret)
		zrun_errf(run, "background cleaner at %.6f s: %s", now / 1e9,
			  strerror(-ret));
	return ret;
}

static int fs_close(struct zrun *run)
{
	struct fs_run *fr = to_fs(run);
	unsigned int i;
	uint32_t k;
	int ret = 0;

	if (!fr)
		return 0;
	untimed(run, true);
	for (i = 0; i < run->nr_jobs; i++) {
		struct zrun_job *j = &run->jobs[i];
		struct fs_job *fj = j->tpriv;

		if (!fj)
			continue;
		if (fj->db) {
			keep_err(run, &ret, zdb_client_free(fj->db),
				 "close of a loadfile handle", NULL);
			free(fj->db);
		}
		for (k = 0; k < fj->nr_files; k++) {
			struct fs_file *ff = &fj->files[k];

			if (ff->f)
				keep_err(run, &ret, zcow_close(ff->f), "close",
					 ff->path);
			if (fr->fs && j->fio->unlink && ff->is_created) {
				int r = zcow_unlink(fr->fs, ff->path);

				/* filename=: the clones share one file */
				if (r == -ENOENT && j->fio->filename[0])
					r = 0;
				keep_err(run, &ret, r, "unlink=1: unlink",
					 ff->path);
			}
			free(ff->path);
			drop_pend(ff);
			free(ff->pend);
		}
		free(fj->files);
		free(fj);
		j->tpriv = NULL;
	}
	if (fr->fs)
		keep_err(run, &ret, zcow_unmount(fr->fs), "unmount", NULL);
	untimed(run, false);
	for (i = 0; i < fr->nr_named; i++)
		free(fr->named[i].path);
	free(fr->named);
	free(fr->buf);
	free(fr->txns.v);
	free(fr);
	run->tpriv = NULL;
	return ret;
}

const struct zrun_target_ops zrun_fs_target = {
	.name = "fs",
	.open = fs_open,
	.job_init = fs_job_init,
	.do_io = fs_do_io,
	.fsync = fs_fsync,
	.sync_join = fs_sync_join,
	.replay = fs_replay,
	.job_end = fs_job_end,
	.replace = fs_replace,
	.snapshot = fs_snapshot,
	.cleaner_due = fs_cleaner_due,
	.cleaner_behind = fs_cleaner_behind,
	.cleaner_step = fs_cleaner_step,
	.finish = fs_finish,
	.close = fs_close,
};
