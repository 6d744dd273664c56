// SPDX-License-Identifier: MIT
/*
 * The raw-device target: fio's zonemode=zbd on the device itself.
 *
 * As fio does it (fio HOWTO "zonemode=zbd"; zbd.c): every write goes to
 * the write pointer of a sequential zone, also for rw=randwrite, where the
 * random offset only picks the zone.  A set of open zones shared by all
 * jobs is capped at max_open_zones (default: the device's max_open); when
 * the set is full a write goes to one of the open zones instead (picked
 * with the job's PRNG).  A zone without room for the next block is
 * finished (its remainder is not written) and leaves the set; a full zone
 * picked again is reset first (the job wraps).  With zone_reset_frequency
 * f > 0, once the valid data in the range reaches zone_reset_threshold of
 * it, each write resets its target zone first with probability f (fio's
 * "simulate garbage collection").  Reads (read_beyond_wp=0) read only
 * below the write pointer; trims reset zones.  zone_append (zcow setting)
 * or write_mode=zone_append sends Zone Appends instead of writes.
 *
 * All device commands go through the zdev wrappers (class "other"); their
 * time comes from the timing model attached to the simulator.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fio_log.h"
#include "run.h"
#include "zdev.h"
#include "ztime.h"

struct raw_zone {
	uint64_t wp;		/* bytes from the zone start */
	bool is_open;		/* in the open set */
};

struct raw {
	struct raw_zone *zones;
	uint64_t *open;		/* the open set (zone numbers) */
	uint32_t nr_open, max_open;
	uint64_t valid;		/* bytes below the wps (sequential zones) */
	void *buf;
	uint64_t buf_len;
};

static struct raw *to_raw(struct zrun *run)
{
	return run->tpriv;
}

/* A job whose writes are verified: fio resets its zones before it
 * writes and never resets a full one while it runs (zbd.c). */
static bool keeps_data(const struct zfio_job *f)
{
	return f->vo.verify != ZFIO_VERIFY_NONE &&
	       f->vo.verify != ZFIO_VERIFY_NULL && f->vo.do_verify &&
	       zfio_rw_has_write(f->rw);
}

/* What fio's messages call the device: the job's filename, else the
 * device spec. */
static const char *dev_name(const struct zrun *run, const struct zrun_job *job)
{
	return job->fio->filename[0] ? job->fio->filename : run->dev->spec;
}

/* Detach (@is_on) or re-attach the timing model for untimed set-up.
 * ztime_attach() fails only on a device that is not simulated, which has
 * no model (run->time NULL): nothing to check. */
static void untimed(struct zrun *run, bool is_on)
{
	if (run->time)
		(void)ztime_attach(run->dev, is_on ? NULL : run->time);
}

static int raw_open(struct zrun *run)
{
	const struct zdev_info *info = &run->dev->info;
	struct zdev_zone *zz = NULL;
	struct raw *raw;
	uint64_t z, from = 0;
	unsigned int i, n;
	int ret = 0;

	for (i = 0; i < run->spec->nr_jobs; i++) {
		const struct zfio_job *f = &run->spec->jobs[i];

		if (f->zonemode == ZFIO_ZONEMODE_ZBD && !info->is_zoned) {
			zrun_errf(run, "zonemode=zbd needs a zoned device "
				       "('%s' is not)", run->dev->spec);
			return -EINVAL;
		}
		if (f->zonemode != ZFIO_ZONEMODE_ZBD &&
		    info->nr_conv < info->nr_zones)
			return zrun_opt_err(run, f, ZFIO_OPT_RW, "target=raw "
					    "without zonemode=zbd writes in "
					    "place: it needs a device without "
					    "sequential zones ('%s' has %llu)",
					    run->dev->spec,
					    (unsigned long long)(info->nr_zones -
								 info->nr_conv));
	}
	raw = calloc(1, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	run->tpriv = raw;
	raw->zones = calloc(info->nr_zones, sizeof(*raw->zones));
	raw->open = calloc(info->nr_zones, sizeof(*raw->open));
	zz = calloc(256, sizeof(*zz));
	if (!raw->zones || !raw->open || !zz) {
		ret = -ENOMEM;
		goto out;
	}
	/* The device may hold data (an image): start from its wps. */
	for (z = 0; z < info->nr_zones;) {
		n = 256;
		ret = zdev_report(run->dev, from, zz, &n);
		if (ret || !n) {
			zrun_errf(run, "report zones: %s",
				  strerror(ret ? -ret : EIO));
			ret = ret ? ret : -EIO;
			goto out;
		}
		for (i = 0; i < n && z < info->nr_zones; i++, z++) {
			uint64_t wp = 0;

			if (z < info->nr_conv)
				continue;
			if (zz[i].cond == ZDEV_COND_FULL)
				wp = info->zone_capacity;
			else
				wp = zz[i].wp - zz[i].start;
			/*
			 * A zone a previous user left open or closed is
			 * active and counts against the device's limits
			 * (writes to new zones would fail with EOVERFLOW):
			 * an empty one is reset, one with data finished
			 * (its data stays readable).  Untimed set-up.
			 */
			if (zz[i].cond == ZDEV_COND_IMP_OPEN ||
			    zz[i].cond == ZDEV_COND_EXP_OPEN ||
			    zz[i].cond == ZDEV_COND_CLOSED) {
				enum zdev_zone_action act = wp ?
					ZDEV_ZONE_FINISH : ZDEV_ZONE_RESET;

				untimed(run, true);
				ret = zdev_zone_mgmt(run->dev, act,
						     zz[i].start,
						     info->zone_size,
						     ZDEV_CLASS_ZONE);
				untimed(run, false);
				if (ret) {
					zrun_errf(run, "closing the active "
						       "zone at %llu: %s",
						  (unsigned long long)
							  zz[i].start,
						  strerror(-ret));
					goto out;
				}
				if (wp)
					wp = info->zone_capacity;
			}
			raw->zones[z].wp = wp;
			raw->valid += wp;
		}
		from = z * info->zone_size;
	}
	raw->max_open = info->max_open ? info->max_open :
					 (uint32_t)info->nr_zones;
out:
	free(zz);
	return ret;
}

static int zone_cmd(struct zrun *run, uint64_t z, enum zdev_zone_action act);

/* The I/O buffer holds the largest I/O of every job. */
static int need_buf(struct raw *raw, uint64_t len)
{
	void *b;

	if (len <= raw->buf_len)
		return 0;
	b = realloc(raw->buf, len);
	if (!b)
		return -ENOMEM;
	memset(b, 0, len);
	raw->buf = b;
	raw->buf_len = len;
	return 0;
}

/*
 * A job without zonemode=zbd (target=raw on a device without sequential
 * zones, raw_open() checked): fio on a plain block device, I/O in place
 * at its offsets.  Its range is offset (+ offset_increment per clone)
 * for size bytes (the rest of the device without size), whole blocks;
 * size x loops bytes unless time_based.
 */
static int plain_job_init(struct zrun *run, struct zrun_job *job)
{
	const struct zfio_job *f = job->fio;
	const struct zdev_info *info = &run->dev->info;
	uint64_t off, size;

	if (!zfio_bs_is_multiple(f, info->lba_size))
		return zrun_opt_err(run, f, f->bs_opt, "%llu is not a multiple "
				    "of the device's %u-byte block",
				    (unsigned long long)f->bs, info->lba_size);
	off = zfio_size_bytes(&f->offset, info->size, 0, f->bs) +
	      zfio_size_bytes(&f->offset_increment, info->size, 0, f->bs) *
		      job->clone;
	if (off % info->lba_size || off >= info->size) {
		zrun_errf(run, "%s:%d: job '%s': offset %llu is not a block "
			       "of the device (%llu bytes, blocks of %u)",
			  f->file, f->line, f->name, (unsigned long long)off,
			  (unsigned long long)info->size, info->lba_size);
		return -EINVAL;
	}
	size = f->size.is_set ? zfio_size_bytes(&f->size, info->size, 0,
						f->bs) : info->size - off;
	if (size > info->size - off)
		size = info->size - off;
	size -= size % f->bs;
	if (!size) {
		zrun_errf(run, "%s:%d: job '%s': the range holds no block of "
			       "bs=%llu", f->file, f->line, f->name,
			  (unsigned long long)f->bs);
		return -EINVAL;
	}
	job->range_start = off;
	job->range_len = size;
	job->seq_by_target = false;	/* in place: the scheduler's offsets */
	job->bytes_goal = size * f->loops;
	return need_buf(to_raw(run), f->bs_max);
}

static int raw_job_init(struct zrun *run, struct zrun_job *job)
{
	const struct zfio_job *f = job->fio;
	const struct zdev_info *info = &run->dev->info;
	struct raw *raw = to_raw(run);
	uint64_t zs = info->zone_size, off, size, inc;

	if (f->is_filecreate)
		return zrun_opt_err(run, f, ZFIO_OPT_IOENGINE, "filecreate "
				    "creates files: it needs the fs target, "
				    "not zonemode=zbd");
	if (f->ctl.engine != ZFIO_ENGINE_PLAIN)	/* fio_ctl.h */
		return zrun_opt_err(run, f, ZFIO_OPT_IOENGINE, "ioengine=%s "
				    "works on files: it needs the fs target, "
				    "not zonemode=zbd",
				    f->ctl.engine == ZFIO_ENGINE_HTTP ? "http" :
				    "falloc");
	if (f->zonesize && f->zonesize != zs) {
		zrun_errf(run, "%s:%d: job '%s': zonesize=%llu differs from "
			       "the device's zone size %llu", f->file, f->line,
			  f->name, (unsigned long long)f->zonesize,
			  (unsigned long long)zs);
		return -EINVAL;
	}
	if (f->max_open_zones && !f->ignore_zone_limits &&
	    info->max_open && f->max_open_zones > info->max_open) {
		zrun_errf(run, "%s:%d: job '%s': max_open_zones=%u exceeds "
			       "the device's limit %u", f->file, f->line,
			  f->name, f->max_open_zones, info->max_open);
		return -EINVAL;
	}
	if (f->max_open_zones && f->max_open_zones < raw->max_open)
		raw->max_open = f->max_open_zones;
	if (!zfio_bs_is_multiple(f, info->lba_size) ||
	    f->bs_max > info->zone_capacity) {
		zrun_errf(run, "%s:%d: job '%s': bs=%llu must be a multiple of "
			       "the %u-byte block and fit a zone%s", f->file,
			  f->line, f->name, (unsigned long long)f->bs,
			  info->lba_size, f->bs_max == f->bs ? "" :
			  " (every size bsrange/bssplit may draw)");
		return -EINVAL;
	}
	if (f->zonemode != ZFIO_ZONEMODE_ZBD)
		return plain_job_init(run, job);
	off = zfio_size_bytes(&f->offset, info->size, zs, zs);
	inc = zfio_size_bytes(&f->offset_increment, info->size, zs, zs);
	off += inc * job->clone;
	off = (off + zs - 1) / zs * zs;		/* fio aligns up in zbd */
	if (off >= info->size) {
		zrun_errf(run, "%s:%d: job '%s': offset %llu is beyond the "
			       "device (%llu bytes)", f->file, f->line,
			  f->name, (unsigned long long)off,
			  (unsigned long long)info->size);
		return -EINVAL;
	}
	size = f->size.is_set ? zfio_size_bytes(&f->size, info->size, zs, zs) :
				info->size - off;
	if (size > info->size - off)
		size = info->size - off;
	size -= size % zs;
	if (!size) {
		zrun_errf(run, "%s:%d: job '%s': the range holds no whole zone",
			  f->file, f->line, f->name);
		return -EINVAL;
	}
	job->range_start = off;
	job->range_len = size;
	job->seq_by_target = true;
	job->io_path = run->dev->spec;	/* the iolog's file */
	if (zfio_log_file(run, job, run->dev->spec, ZFIO_FILE_ADD) ||
	    zfio_log_file(run, job, run->dev->spec, ZFIO_FILE_OPEN))
		return -ENOMEM;
	/* Not time based: write the capacity of the range, loops times. */
	job->bytes_goal = size / zs * info->zone_capacity * f->loops;
	if (need_buf(raw, f->bs_max))
		return -ENOMEM;
	if (keeps_data(f)) {
		/* fio resets the job's zones before writing what it will
		 * verify (zbd_file_reset()); untimed set-up */
		uint64_t z;
		int ret = 0;

		untimed(run, true);
		for (z = off / zs; z < (off + size) / zs && !ret; z++)
			if (z >= info->nr_conv && raw->zones[z].wp)
				ret = zone_cmd(run, z, ZDEV_ZONE_RESET);
		untimed(run, false);
		run->zone_resets = 0;
		if (ret)
			return ret;
	}
	if (run->set.prefill && !zfio_rw_has_write(f->rw)) {
		/* Fill the range untimed so reads find data. */
		uint64_t z;
		int ret = 0;

		untimed(run, true);
		for (z = off / zs; z < (off + size) / zs && !ret; z++) {
			struct raw_zone *rz = &raw->zones[z];

			if (z < info->nr_conv)
				continue;
			while (!ret && rz->wp + f->bs <= info->zone_capacity) {
				ret = zdev_write(run->dev, raw->buf, f->bs,
						 z * zs + rz->wp, 0,
						 ZDEV_CLASS_OTHER);
				rz->wp += f->bs;
				raw->valid += f->bs;
			}
		}
		untimed(run, false);
		if (ret) {
			zrun_errf(run, "prefill: %s", strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static void open_remove(struct raw *raw, uint64_t z)
{
	uint32_t i;

	for (i = 0; i < raw->nr_open; i++) {
		if (raw->open[i] == z) {
			raw->open[i] = raw->open[--raw->nr_open];
			break;
		}
	}
	raw->zones[z].is_open = false;
}

static int zone_cmd(struct zrun *run, uint64_t z, enum zdev_zone_action act)
{
	const struct zdev_info *info = &run->dev->info;
	struct raw *raw = to_raw(run);
	int ret;

	ret = zdev_zone_mgmt(run->dev, act, z * info->zone_size,
			     info->zone_size, ZDEV_CLASS_ZONE);
	if (ret) {
		zrun_errf(run, "zone %s at %llu: %s",
			  act == ZDEV_ZONE_RESET ? "reset" : "finish",
			  (unsigned long long)(z * info->zone_size),
			  strerror(-ret));
		return ret;
	}
	if (act == ZDEV_ZONE_RESET) {
		raw->valid -= raw->zones[z].wp;
		raw->zones[z].wp = 0;
		run->zone_resets++;
	} else {
		raw->zones[z].wp = info->zone_capacity;
		run->zone_finishes++;
	}
	return 0;
}

/* Write or append @len at the wp of zone @z; the caller checked room. */
static int zone_write(struct zrun *run, struct zrun_job *job, uint64_t z,
		      uint64_t len)
{
	const struct zdev_info *info = &run->dev->info;
	struct raw *raw = to_raw(run);
	uint64_t start = z * info->zone_size, done = 0, chunk, landed;
	uint64_t at = start + raw->zones[z].wp;
	bool is_append = run->set.zone_append || job->fio->zone_append;
	int ret;

	/* the bytes of the write, for where it lands: the write pointer
	 * (appends land there too: the device runs one at a time) */
	ret = zrun_data_write(run, job, at, dev_name(run, job), at, raw->buf,
			      len);
	if (ret)
		return ret < 0 ? ret : -EINVAL;	/* no dry run here */
	job->io_off = start + raw->zones[z].wp;	/* where it lands */
	while (done < len) {
		chunk = len - done;
		if (is_append) {
			if (!info->max_append) {
				zrun_errf(run, "the device has no Zone Append");
				return -EOPNOTSUPP;
			}
			if (chunk > info->max_append)
				chunk = info->max_append;
			ret = zdev_append(run->dev, (uint8_t *)raw->buf + done,
					  chunk, start, 0, ZDEV_CLASS_OTHER,
					  &landed);
			if (!ret && landed != start + raw->zones[z].wp) {
				zrun_errf(run, "append at zone %llu landed at "
					       "%llu, not at the write pointer",
					  (unsigned long long)start,
					  (unsigned long long)landed);
				return -EIO;
			}
		} else {
			ret = zdev_write(run->dev, (uint8_t *)raw->buf + done,
					 chunk, start + raw->zones[z].wp, 0,
					 ZDEV_CLASS_OTHER);
		}
		if (ret) {
			zrun_errf(run, "%s of %llu at zone %llu (wp +%llu): %s",
				  is_append ? "append" : "write",
				  (unsigned long long)chunk,
				  (unsigned long long)start,
				  (unsigned long long)raw->zones[z].wp,
				  strerror(-ret));
			return ret;
		}
		raw->zones[z].wp += chunk;
		raw->valid += chunk;
		done += chunk;
	}
	return 0;
}

static int raw_write(struct zrun *run, struct zrun_job *job, uint64_t off,
		     uint64_t len)
{
	const struct zdev_info *info = &run->dev->info;
	const struct zfio_job *f = job->fio;
	struct raw *raw = to_raw(run);
	uint64_t zs = info->zone_size, cap = info->zone_capacity;
	uint64_t z0 = job->range_start / zs;
	uint64_t nz = job->range_len / zs;
	uint64_t z = off / zs, tries;
	int ret;

	if (z < info->nr_conv) {	/* conventional: write in place */
		ret = zrun_data_write(run, job, off, dev_name(run, job), off,
				      raw->buf, len);
		if (ret)
			return ret < 0 ? ret : -EINVAL;
		job->io_off = off;
		ret = zdev_write(run->dev, raw->buf, len, off, 0,
				 ZDEV_CLASS_OTHER);
		if (ret)
			zrun_errf(run, "write at %llu: %s",
				  (unsigned long long)off, strerror(-ret));
		job->seq_pos = off + len - job->range_start;
		if (job->seq_pos >= job->range_len)
			job->seq_pos = 0;
		return ret;
	}
	for (tries = 0; tries < 2 * nz + 2; tries++) {
		struct raw_zone *rz = &raw->zones[z];

		if (!rz->is_open) {
			if (raw->nr_open >= raw->max_open) {
				z = raw->open[zrun_rand(job) % raw->nr_open];
				continue;
			}
			if (rz->wp + len > cap && keeps_data(f)) {
				/* fio skips a full zone (its data is to
				 * be verified) */
				z = z0 + (z - z0 + 1) % nz;
				continue;
			}
			if (rz->wp + len > cap) {
				ret = zone_cmd(run, z, ZDEV_ZONE_RESET);
				if (ret)
					return ret;
			}
			rz->is_open = true;
			raw->open[raw->nr_open++] = z;
		}
		if (rz->wp + len > cap) {
			if (rz->wp < cap) {
				ret = zone_cmd(run, z, ZDEV_ZONE_FINISH);
				if (ret)
					return ret;
			}
			open_remove(raw, z);
			z = z0 + (z - z0 + 1) % nz;
			continue;
		}
		if (f->zone_reset_frequency > 0 && rz->wp &&
		    (double)raw->valid >=
			    f->zone_reset_threshold * (double)job->range_len &&
		    (double)(zrun_rand(job) >> 11) * 0x1.0p-53 <
			    f->zone_reset_frequency) {
			ret = zone_cmd(run, z, ZDEV_ZONE_RESET);
			if (ret)
				return ret;
		}
		ret = zone_write(run, job, z, len);
		if (ret)
			return ret;
		if (rz->wp + f->bs > cap) {
			if (rz->wp < cap)
				ret = zone_cmd(run, z, ZDEV_ZONE_FINISH);
			open_remove(raw, z);
			if (ret)
				return ret;
		}
		/* Sequential jobs continue where this write ended. */
		job->seq_pos = z * zs + rz->wp - job->range_start;
		if (rz->wp + f->bs > cap)
			job->seq_pos = ((z - z0 + 1) % nz) * zs;
		return 0;
	}
	if (keeps_data(f))
		return 1;	/* the range is full: the writes end */
	zrun_errf(run, "job '%s': no zone to write in [%llu, +%llu)", f->name,
		  (unsigned long long)job->range_start,
		  (unsigned long long)job->range_len);
	return -ENOSPC;
}

/* Read below the wp; *len_ret = 0 when the range holds no data. */
static int raw_read(struct zrun *run, struct zrun_job *job, uint64_t off,
		    uint64_t len, uint64_t *len_ret)
{
	const struct zdev_info *info = &run->dev->info;
	const struct zfio_job *f = job->fio;
	struct raw *raw = to_raw(run);
	uint64_t zs = info->zone_size, z0 = job->range_start / zs;
	uint64_t nz = job->range_len / zs, z = off / zs, i, rel, lim;
	int ret;

	*len_ret = 0;
	if (zrun_io_is_exact(job)) {
		/* a verify read, an sg verify: there, whatever is there */
		ret = zdev_read(run->dev, raw->buf, len, off,
				ZDEV_CLASS_OTHER);
		if (ret) {
			zrun_errf(run, "read at %llu: %s",
				  (unsigned long long)off, strerror(-ret));
			return ret;
		}
		if (!zrun_io_is_verify(job)) {
			job->seq_pos = off + len - job->range_start;
			if (job->seq_pos >= job->range_len)
				job->seq_pos = 0;
		}
		*len_ret = len;
		return zrun_data_read(run, job, dev_name(run, job), off,
				      raw->buf, len);
	}
	for (i = 0; i <= nz; i++) {
		lim = z < info->nr_conv || f->read_beyond_wp ? zs :
							       raw->zones[z].wp;
		rel = off - z * zs;
		if (lim >= len && rel + len <= lim)
			break;
		if (lim >= len && zfio_rw_is_random(f->rw)) {
			rel = (zrun_rand(job) % (lim / len)) * len;
			off = z * zs + rel;
			break;
		}
		z = z0 + (z - z0 + 1) % nz;
		off = z * zs;
	}
	if (i > nz)
		return 0;	/* nothing written to read */
	job->io_off = off;
	ret = zdev_read(run->dev, raw->buf, len, off, ZDEV_CLASS_OTHER);
	if (ret) {
		zrun_errf(run, "read at %llu: %s", (unsigned long long)off,
			  strerror(-ret));
		return ret;
	}
	job->seq_pos = off + len - job->range_start;
	if (job->seq_pos >= job->range_len)
		job->seq_pos = 0;
	*len_ret = len;
	return zrun_data_read(run, job, dev_name(run, job), off, raw->buf,
			      len);
}

static int raw_do_io(struct zrun *run, struct zrun_job *job, enum zrun_op op,
		     uint64_t off, uint64_t len, uint64_t now,
		     uint64_t *len_ret, uint64_t *done_ret)
{
	const struct zdev_info *info = &run->dev->info;
	struct zrun_tick tk;
	int ret = 0;

	zrun_tick_start(run, &tk, now);
	*len_ret = len;
	switch (op) {
	case ZRUN_OP_WRITE:
		ret = raw_write(run, job, off, len);
		if (ret == 1) {		/* no room left */
			*len_ret = 0;
			ret = 0;
		}
		break;
	case ZRUN_OP_READ:
		ret = raw_read(run, job, off, len, len_ret);
		break;
	default: {
		uint64_t z = off / info->zone_size;

		job->io_off = z * info->zone_size;
		if (z >= info->nr_conv)
			ret = zone_cmd(run, z, ZDEV_ZONE_RESET);
		job->seq_pos = (z + 1) * info->zone_size - job->range_start;
		if (job->seq_pos >= job->range_len)
			job->seq_pos = 0;
		break;
	}
	}
	*done_ret = zrun_tick_done(run, &tk);
	return ret;
}

static int raw_fsync(struct zrun *run, struct zrun_job *job, bool is_data,
		     bool is_all, uint64_t now, uint64_t *done_ret)
{
	struct zrun_tick tk;
	int ret;

	(void)job;
	(void)is_data;
	(void)is_all;
	zrun_tick_start(run, &tk, now);
	ret = zdev_flush(run->dev);
	if (ret)
		zrun_errf(run, "flush: %s", strerror(-ret));
	*done_ret = zrun_tick_done(run, &tk);
	return ret;
}

static int raw_close(struct zrun *run)
{
	struct raw *raw = to_raw(run);

	if (!raw)
		return 0;
	free(raw->zones);
	free(raw->open);
	free(raw->buf);
	free(raw);
	run->tpriv = NULL;
	return 0;
}

const struct zrun_target_ops zrun_raw_target = {
	.name = "raw",
	.open = raw_open,
	.job_init = raw_job_init,
	.do_io = raw_do_io,
	.fsync = raw_fsync,
	.close = raw_close,
};
