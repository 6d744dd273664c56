// SPDX-License-Identifier: MIT
/*
 * The file-system target: fio jobs on files of a zcow file system (the
 * seed experiment: 16 jobs of 4 KiB random writes, zone_append on/off).
 *
 * NOT BUILT YET: it needs the file layer (zcow_create / zcow_pwrite /
 * zcow_fsync / zcow_unlink over the zone-append data path, in core/).
 * Until then every scenario that is not zonemode=zbd fails cleanly here.
 *
 * What the file layer fills in (this file only; run.c stays as it is):
 *   fs_open:     mkfs + mount on run->dev with run->set.nodesize,
 *                run->set.treelog, run->set.zone_append; keep the mount in
 *                run->tpriv.
 *   fs_job_init: create the job's nrfiles files (filename/directory,
 *                filesize or size/nrfiles; create_on_open), set
 *                job->range_len to the file bytes.
 *   fs_do_io:    ztime_set_now(run->time, now) if run->time, then
 *                zcow_pwrite/zcow_pread at the offset in the job's file;
 *                *done_ret = ztime_max_done(run->time) (the completion of
 *                the device commands the call issued).
 *   fs_fsync:    zcow_fsync / fdatasync the job's files, same timing.
 *   fs_close:    unlink (if the job says so) and unmount; fill
 *                run->zone_resets from the fs; summary.json's
 *                zone_unusable, block_groups and commits come from the fs
 *                stats (write_summary() in run.c prints 0 for now).
 */
#include <errno.h>

#include "run.h"

static int fs_open(struct zrun *run)
{
	zrun_errf(run, "target fs: the file layer is not built yet (needs "
		       "zcow_create/zcow_pwrite/zcow_fsync in core/; fill in "
		       "harness/run_fs.c). Jobs without zonemode=zbd run on "
		       "files; use zonemode=zbd for the raw device");
	return -EOPNOTSUPP;
}

static int fs_job_init(struct zrun *run, struct zrun_job *job)
{
	(void)job;
	return fs_open(run);
}

static int fs_do_io(struct zrun *run, struct zrun_job *job, enum zrun_op op,
		    uint64_t off, uint64_t len, uint64_t now,
		    uint64_t *len_ret, uint64_t *done_ret)
{
	(void)job;
	(void)op;
	(void)off;
	(void)len;
	*len_ret = 0;
	*done_ret = now;
	return fs_open(run);
}

static int fs_fsync(struct zrun *run, struct zrun_job *job, bool is_data_only,
		    uint64_t now, uint64_t *done_ret)
{
	(void)job;
	(void)is_data_only;
	*done_ret = now;
	return fs_open(run);
}

static void fs_close(struct zrun *run)
{
	(void)run;
}

const struct zrun_target_ops zrun_fs_target = {
	.name = "fs",
	.open = fs_open,
	.job_init = fs_job_init,
	.do_io = fs_do_io,
	.fsync = fs_fsync,
	.close = fs_close,
};
