/* SPDX-License-Identifier: MIT */
/*
 * zsim internals shared by sim/zsim.c (zone rules, power, faults, trace)
 * and sim/zsim_image.c (images and import).  Not a public header: only
 * the sim/ sources may include it.
 *
 * Storage: every zone holds an array of fixed-size chunk pointers, grown
 * lazily (a chunk is allocated on the first write into it, never moved), so
 * memory follows the data written and a write is a memcpy.  Sequential
 * zones read back only below their wp, so a chunk recycled after a reset
 * needs no clearing; conventional zones get zeroed chunks.
 */
#ifndef ZCOW_ZSIM_INT_H
#define ZCOW_ZSIM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "zsim.h"
#include "ztime.h"

#define ZSIM_CHUNK_MAX	(2u << 20)	/* bytes per chunk, at most: one
					 * transparent huge page */
#define ZSIM_NO_ZONE	UINT64_MAX	/* list end / "no zone" sentinel */

struct zsim_zone {
	uint8_t type;		/* enum zdev_zone_type */
	uint8_t cond;		/* enum zdev_zone_cond */
	bool is_dirty;		/* on the dirty list (seq: wp > durable) */
	/*
	 * Bytes from the zone start.  @wp is the end of the data: a zone
	 * finished at wp=5 keeps wp=5 here and reports start + zone size.
	 * [0, durable) survives any power cut; [durable, wp) is volatile.
	 */
	uint64_t wp;
	uint64_t durable;
	uint64_t prev, next;	/* implicitly-open FIFO (zone numbers) */
	uint8_t **chunks;	/* NULL until the first write */
};

/* An unflushed write to a conventional zone (undo/redo record). */
struct zsim_undo {
	uint64_t off;		/* device byte offset */
	uint64_t len;
	uint8_t *old_data;	/* contents before the write */
	uint8_t *new_data;	/* what the write stored */
	bool is_durable;	/* FUA: survives every loss policy */
};

/* The last volatile write: what ZSIM_LOSS_TORN tears. */
struct zsim_last {
	bool is_valid;
	uint64_t zone;		/* zone number */
	uint64_t off;		/* bytes from the zone start */
	uint64_t len;
	uint64_t undo_idx;	/* conventional: its undo record */
};

struct zsim_ckpt;

struct zsim_fault_slot {
	struct zsim_fault fault;
	uint64_t seen;		/* matching commands seen since added */
};

/* A zone that fails at a command count (zsim_fail_zone_at). */
struct zsim_zone_fail {
	uint64_t zno;
	uint8_t cond;		/* READONLY or OFFLINE */
	uint64_t at_cmd;	/* before this command (1-based) */
};

/*
 * A power domain (zsim_link_power()): the devices that lose power at the
 * same instant.  Every device is in one, alone until linked.  Its lock is
 * the command lock of all its members, so that their commands have one
 * order: the armed crash point counts the members' commands in that
 * order, and when it fires every member is cut (each applies the loss
 * policy to its own volatile writes, seeded by its place in the domain).
 */
struct zsim_power {
	pthread_mutex_t lock;
	struct zsim *members[ZSIM_MAX_LINKED];
	unsigned int nr_members;
	unsigned int nr_linked;		/* places handed out (never reused) */
	bool is_armed;
	struct zsim_cut cut;
	uint64_t cut_count;		/* matching commands since arming */
	uint64_t nr_persist;		/* of every member since its open */
};

struct zsim {
	struct zsim_power *power;	/* its domain: the lock of every
					 * command (zsim_lock()) */
	unsigned int power_idx;		/* its place there: 0 alone */
	struct zsim_config cfg;		/* defaults filled in */
	struct zdev *dev;
	uint64_t chunk_size;
	uint64_t chunks_per_zone;
	struct zsim_zone *zones;

	/* Open/active accounting (sequential zones only). */
	uint32_t nr_open;		/* IO + EO */
	uint32_t nr_active;		/* IO + EO + CL */
	uint64_t imp_head, imp_tail;	/* FIFO of IO zones by open time */

	/* Volatile cache. */
	uint64_t *dirty;		/* seq zones with wp > durable */
	uint64_t nr_dirty;
	struct zsim_undo *undo;		/* conventional zones, in order */
	uint64_t nr_undo, undo_cap;
	struct zsim_last last;

	/* Power (the armed crash point and the persist count are the
	 * domain's). */
	bool is_cut;
	bool is_held;			/* cut, its loss not applied yet */
	struct zsim_last held_torn;	/* the command in flight then */
	uint64_t loss_digest;		/* zsim_loss_digest() */
	struct zsim_ckpt *ckpt;		/* zsim_checkpoint(); NULL: none */

	/* Faults. */
	struct zsim_fault_slot faults[ZSIM_MAX_FAULTS];
	unsigned int nr_faults;
	struct zsim_zone_fail zone_fails[ZSIM_MAX_FAULTS];
	unsigned int nr_zone_fails;
	uint64_t nr_cmds;		/* commands since open (not reports) */
	uint64_t rng;			/* splitmix64 state, from cfg.seed */

	/* Rules. */
	uint64_t violations[ZSIM_NR_RULES];
	enum zsim_rule last_violation;

	/* Trace. */
	FILE *trace;
	uint64_t trace_seq;

	/* Timing model (sim/ztime.c): charged per completed command. */
	struct ztime *timing;		/* NULL: none */

	/* Memory. */
	uint64_t mem_bytes;
	uint8_t **free_chunks;		/* recycled chunks (grows to the peak) */
	uint64_t nr_free_chunks;
	uint64_t max_free_chunks;	/* capacity (zcow_grow()) */

	char *image_path;		/* saved on close; NULL: none */
	/* the image this device was loaded from, open and flock()ed while
	 * the device is (has_image_lock): one process at a time */
	int image_lock_fd;
	bool has_image_lock;
};

/* Take and release the command lock of @sim (its power domain's). */
static inline void zsim_lock(struct zsim *sim)
{
	pthread_mutex_lock(&sim->power->lock);
}

static inline void zsim_unlock(struct zsim *sim)
{
	pthread_mutex_unlock(&sim->power->lock);
}

/* Fill in defaults and check a config; -EINVAL with a message. */
int zsim_check_config(struct zsim_config *cfg);

/* Allocate a device with all zones empty (conv zones NOT_WP). */
int zsim_new(const struct zsim_config *cfg, struct zsim **sim_ret);
void zsim_destroy(struct zsim *sim);

/*
 * Store @len bytes at byte @off of zone @zno (must not cross the zone);
 * allocates chunks.  Returns 0 or -ENOMEM.  Copy out: zeros for absent
 * chunks (the caller clamps sequential zones to the wp).
 */
int zsim_store_locked(struct zsim *sim, uint64_t zno, uint64_t off,
		      const void *buf, uint64_t len);
void zsim_load_locked(struct zsim *sim, uint64_t zno, uint64_t off,
		      void *buf, uint64_t len);

/* Rebuild nr_open/nr_active and the IO FIFO from the zone conditions, in
 * zone order for IO zones. */
void zsim_recount_locked(struct zsim *sim);

/* The condition a zone has after a power cycle. */
uint8_t zsim_cycled_cond(const struct zsim *sim, const struct zsim_zone *z);

/* Wrap a struct zsim into a struct zdev. */
int zsim_attach(struct zsim *sim, struct zdev **dev_ret);

#endif /* ZCOW_ZSIM_INT_H */
