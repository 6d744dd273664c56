/* SPDX-License-Identifier: MIT */
/*
 * ztime: the timing model of the simulator (docs/timing.md).
 *
 * A pure, deterministic model that charges every device command a
 * completion time in simulated nanoseconds from its submit time and the
 * busy-until times of the device's resources: command processors
 * ("channels"), the transfer bandwidth, the host's zone write lock (one
 * plain write in flight per sequential zone, as Linux's zone write locking
 * and zone write plugging enforce) and the device's per-zone Zone Append
 * slots.  Rotational profiles (smr) add seeks.  It never looks at a clock.
 *
 * What it is not: a scheduler.  The caller (harness/run.c) owns the jobs'
 * virtual clocks; it says when a command is submitted (ztime_set_now()) and
 * reads back when it completes.  A zsim device with a timing model attached
 * (ztime_attach()) charges each command it completes through ztime_charge().
 *
 * Who may include this: sim/, harness/, tests/.  Never core/.
 */
#ifndef ZCOW_ZTIME_H
#define ZCOW_ZTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "zdev.h"

#define ZTIME_NAME_LEN	16

/*
 * A device profile.  Times are nanoseconds, bandwidths bytes per second.
 * A zeroed profile is valid and costs nothing (the "instant" profile).
 *
 * A command of @op and @len submitted at t0 (after the zone write lock or
 * an append slot let it go) completes at
 *   max(ctrl_end, bus_end, t0 + max(lat_ns[op], xfer + tail_ns[op]))
 * where xfer = len / bw, ctrl_end = the end of its ctrl_ns[op] on the
 * earliest free of nr_ctrl command processors, bus_end = the end of its
 * xfer on the one shared transfer path.  Rotational profiles instead
 * serialize every command on the one head: overhead + seek (if the command
 * does not start where the previous one ended) + xfer.
 */
struct ztime_profile {
	char name[ZTIME_NAME_LEN];
	uint32_t nr_ctrl;		/* command processors; 0 = no limit */
	uint64_t ctrl_ns[ZDEV_NR_OPS];	/* processor occupancy per command */
	uint64_t lat_ns[ZDEV_NR_OPS];	/* minimum latency per command */
	uint64_t tail_ns[ZDEV_NR_OPS];	/* latency >= xfer + tail */
	uint64_t write_bw;		/* writes and appends; 0 = infinite */
	uint64_t read_bw;		/* 0 = infinite */
	uint32_t append_slots;		/* appends in flight per zone; 0 = no
					 * limit */
	bool no_zone_write_lock;	/* true: plain writes to one zone may
					 * overlap (not Linux's behaviour) */
	bool finish_pads;		/* finish costs the unwritten capacity
					 * at write_bw (the device pads) */
	bool is_rotational;		/* one head: seeks, no overlap */
	uint64_t seek_ns;		/* rotational: average seek + rotation */
	uint64_t track_seek_ns;		/* rotational: short (next zone) seek */
};

struct ztime;

/* Copy the named built-in profile ("zn540", "smr", "instant").  Returns 0
 * or -EINVAL for an unknown name. */
int ztime_profile_get(const char *name, struct ztime_profile *prof_ret);
/* Comma-separated list of the built-in profile names. */
const char *ztime_profile_names(void);

/* A model for a device of this geometry.  Returns 0, -EINVAL or -ENOMEM. */
int ztime_create(const struct ztime_profile *prof,
		 const struct zdev_info *info, struct ztime **t_ret);
void ztime_destroy(struct ztime *t);
const struct ztime_profile *ztime_get_profile(const struct ztime *t);

/*
 * Charge one command submitted at @now; returns its completion time (ns).
 * @off is the command's offset (an append: where it landed; a zone op: the
 * zone start, with @len 0 for "all zones").  Reads and writes are in
 * bytes.  Deterministic: the same command sequence gives the same times.
 */
uint64_t ztime_submit(struct ztime *t, enum zdev_op op, uint64_t off,
		      uint64_t len, uint64_t now);

/*
 * The hook interface used by an attached simulator: ztime_set_now() starts
 * a call (one fs or target operation) at @now; each ztime_charge() submits
 * one command of it and remembers its completion (ztime_last_done()) and
 * the latest completion since ztime_set_now() (ztime_max_done()).
 * Commands are submitted at @now, except across a flush, which orders the
 * call as the host does: a flush is submitted when every command charged
 * before it (since ztime_set_now()) has completed, and every command
 * after it when the flush has completed.  Commands between flushes
 * overlap as the device allows.
 */
void ztime_set_now(struct ztime *t, uint64_t now);
void ztime_charge(struct ztime *t, enum zdev_op op, uint64_t off,
		  uint64_t len);
uint64_t ztime_last_done(const struct ztime *t);
uint64_t ztime_max_done(const struct ztime *t);
/* Commands charged since create. */
uint64_t ztime_nr_charged(const struct ztime *t);

/*
 * Attach @t to the simulator behind @dev (NULL detaches): from then on every
 * command the simulator completes successfully is charged.  Returns 0 or
 * -EINVAL when @dev is not simulated.
 */
int ztime_attach(struct zdev *dev, struct ztime *t);

#endif /* ZCOW_ZTIME_H */
