// SPDX-License-Identifier: MIT
/*
 * zsim: zone rules, volatile cache and power cuts, faults and trace.
 *
 * The rules are those measured on Linux 6.1 + QEMU 7.2 NVMe ZNS
 * (docs/device-rules.md).  Every command runs under one mutex per power
 * domain (a device alone, or the devices linked by zsim_link_power()):
 * check the rules, memcpy, update the zone, unlock.
 *
 * Zone state machine (sequential zones), as the code below decodes it:
 *
 *   from \ cmd | write/append   | open      | close     | finish | reset
 *   -----------+----------------+-----------+-----------+--------+------
 *   EMPTY      | IO  (act+open) | EO (a+o)  | error     | FULL   | EMPTY
 *   IMP_OPEN   | IO             | EO        | CLOSED    | FULL   | EMPTY
 *   EXP_OPEN   | EO             | EO        | CLOSED    | FULL   | EMPTY
 *   CLOSED     | IO  (open)     | EO (open) | CLOSED    | FULL   | EMPTY
 *   FULL       | error (FULL)   | error     | error     | FULL   | EMPTY
 *   READONLY   | error (RO)     | error     | error     | error  | error
 *   OFFLINE    | error (OFFL)   | error     | error     | error  | error
 *
 * "act" needs an active slot, "open" an open slot (see open_locked()).
 * A write that brings the wp to the capacity makes the zone FULL.
 */
#include "zsim_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "grow.h"
#include "prng.h"
#include "zlog.h"

static const struct zdev_ops zsim_ops;

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int zsim_check_config(struct zsim_config *cfg)
{
	if (!cfg->nr_zones)
		cfg->nr_zones = 64;
	if (!cfg->zone_size)
		cfg->zone_size = 64ull << 20;
	if (!cfg->zone_capacity)
		cfg->zone_capacity = cfg->zone_size;
	if (!cfg->lba_size)
		cfg->lba_size = 4096;
	if (!cfg->max_append)
		cfg->max_append = 512 * 1024;
	/* Limits first: nothing is allocated from an unchecked size. */
	if (cfg->nr_zones > ZSIM_MAX_ZONES) {
		zlog_err("sim", "zones=%llu: more than %llu zones",
			 (unsigned long long)cfg->nr_zones, ZSIM_MAX_ZONES);
		return -EINVAL;
	}
	if (cfg->zone_size > ZSIM_MAX_ZONE_SIZE) {
		zlog_err("sim", "zone_size=%llu: above %llu bytes (64 GiB)",
			 (unsigned long long)cfg->zone_size,
			 ZSIM_MAX_ZONE_SIZE);
		return -EINVAL;
	}
	if (cfg->nr_zones * cfg->zone_size > ZSIM_MAX_DEV_SIZE) {
		zlog_err("sim", "zones=%llu x zone_size=%llu: device above %llu bytes (1 PiB)",
			 (unsigned long long)cfg->nr_zones,
			 (unsigned long long)cfg->zone_size, ZSIM_MAX_DEV_SIZE);
		return -EINVAL;
	}
	if (cfg->max_append > ZSIM_MAX_APPEND_LIMIT) {
		zlog_err("sim", "max_append=%llu: above %llu bytes (64 MiB)",
			 (unsigned long long)cfg->max_append,
			 ZSIM_MAX_APPEND_LIMIT);
		return -EINVAL;
	}
	if (cfg->lba_size < 512 || cfg->lba_size > ZSIM_MAX_LBA ||
	    !is_pow2(cfg->lba_size)) {
		zlog_err("sim", "lba=%u: the logical block size is not a power of two in 512 .. 1 MiB",
			 cfg->lba_size);
		return -EINVAL;
	}
	if (!is_pow2(cfg->zone_size) || cfg->zone_size < cfg->lba_size) {
		zlog_err("sim", "zone_size=%llu: not a power of two >= lba",
			 (unsigned long long)cfg->zone_size);
		return -EINVAL;
	}
	if (cfg->zone_capacity > cfg->zone_size ||
	    cfg->zone_capacity % cfg->lba_size) {
		zlog_err("sim", "zone_cap=%llu: above zone_size or not lba-aligned",
			 (unsigned long long)cfg->zone_capacity);
		return -EINVAL;
	}
	if (cfg->max_append % cfg->lba_size) {
		zlog_err("sim", "max_append=%llu: not lba-aligned",
			 (unsigned long long)cfg->max_append);
		return -EINVAL;
	}
	if (cfg->nr_conv > cfg->nr_zones) {
		zlog_err("sim", "conv=%llu: more than zones=%llu",
			 (unsigned long long)cfg->nr_conv,
			 (unsigned long long)cfg->nr_zones);
		return -EINVAL;
	}
	if (cfg->is_emulated && cfg->nr_conv != cfg->nr_zones) {
		zlog_err("sim", "emulated=on: every zone is conventional: conv=%llu, zones=%llu",
			 (unsigned long long)cfg->nr_conv,
			 (unsigned long long)cfg->nr_zones);
		return -EINVAL;
	}
	if (cfg->max_active && cfg->max_open > cfg->max_active) {
		zlog_err("sim", "max_open=%u: above max_active=%u",
			 cfg->max_open, cfg->max_active);
		return -EINVAL;
	}
	return 0;
}

int zsim_new(const struct zsim_config *cfg_in, struct zsim **sim_ret)
{
	struct zsim_config cfg = *cfg_in;
	struct zsim *sim;
	uint64_t i;
	int ret;

	*sim_ret = NULL;
	ret = zsim_check_config(&cfg);
	if (ret)
		return ret;
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -ENOMEM;
	sim->power = calloc(1, sizeof(*sim->power));
	if (!sim->power) {
		free(sim);
		return -ENOMEM;
	}
	sim->cfg = cfg;
	/*
	 * Storage chunk: the largest power of two <= min(capacity, 2 MiB),
	 * so a small-capacity zone (crash tests) costs a small chunk.
	 */
	sim->chunk_size = ZSIM_CHUNK_MAX;
	while (sim->chunk_size > cfg.lba_size &&
	       sim->chunk_size > cfg.zone_capacity)
		sim->chunk_size >>= 1;
	sim->chunks_per_zone = cfg.zone_size / sim->chunk_size;
	sim->zones = calloc(cfg.nr_zones, sizeof(*sim->zones));
	sim->dirty = calloc(cfg.nr_zones, sizeof(*sim->dirty));
	if (!sim->zones || !sim->dirty) {
		free(sim->zones);
		free(sim->dirty);
		free(sim->power);
		free(sim);
		return -ENOMEM;
	}
	for (i = 0; i < cfg.nr_zones; i++) {
		struct zsim_zone *z = &sim->zones[i];

		if (i < cfg.nr_conv) {
			z->type = ZDEV_ZONE_CONV;
			z->cond = ZDEV_COND_NOT_WP;
		} else {
			z->type = ZDEV_ZONE_SEQ_REQ;
			z->cond = ZDEV_COND_EMPTY;
		}
		z->prev = z->next = ZSIM_NO_ZONE;
	}
	sim->imp_head = sim->imp_tail = ZSIM_NO_ZONE;
	sim->rng = cfg.seed;
	/* a domain of its own */
	pthread_mutex_init(&sim->power->lock, NULL);
	sim->power->members[0] = sim;
	sim->power->nr_members = 1;
	sim->power->nr_linked = 1;
	*sim_ret = sim;
	return 0;
}

static void free_undo_locked(struct zsim *sim)
{
	uint64_t i;

	for (i = 0; i < sim->nr_undo; i++) {
		sim->mem_bytes -= 2 * sim->undo[i].len;
		free(sim->undo[i].old_data);
		free(sim->undo[i].new_data);
	}
	sim->nr_undo = 0;
}

/*
 * Chunks that devices closed gave back, for the next device of the
 * process: a crash campaign builds its states on fresh devices, and a
 * fresh chunk costs the host zeroing and page faults (a huge page: 2 MiB
 * of zeroing; a smaller chunk: a fault per 4 KiB), a freed one an
 * munmap.  What a chunk held is never seen again: reads above a
 * sequential zone's write pointer return zeros, and a conventional
 * zone's chunk is zeroed when taken (get_chunk()), as a chunk reused
 * inside one device always was.  Chunks of one size at a time (the
 * devices of a campaign share their geometry), at most POOL_MAX of them
 * and POOL_BYTES; the rest are freed.
 */
#define POOL_MAX 256
#define POOL_BYTES (128ULL << 20)
static struct {
	pthread_mutex_t lock;
	uint8_t *chunks[POOL_MAX];
	unsigned int nr;
	uint64_t size;		/* of every chunk kept */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint8_t *pool_get(uint64_t size)
{
	uint8_t *c = NULL;

	pthread_mutex_lock(&pool.lock);
	if (pool.nr && pool.size == size)
		c = pool.chunks[--pool.nr];
	pthread_mutex_unlock(&pool.lock);
	return c;
}

/* Free chunk @c of @sim, or keep it for the next device. */
static void release_chunk(const struct zsim *sim, uint8_t *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&pool.lock);
	if (!pool.nr)
		pool.size = sim->chunk_size;
	if (pool.size == sim->chunk_size && pool.nr < POOL_MAX &&
	    (pool.nr + 1) * pool.size <= POOL_BYTES) {
		pool.chunks[pool.nr++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&pool.lock);
	free(c);
}

static void ckpt_drop_locked(struct zsim *sim);

/* @sim leaves its power domain; the last one out frees it. */
static void leave_power(struct zsim *sim)
{
	struct zsim_power *pw = sim->power;
	unsigned int i, nr;

	pthread_mutex_lock(&pw->lock);
	for (i = 0; i < pw->nr_members; i++)
		if (pw->members[i] == sim) {
			pw->members[i] = pw->members[--pw->nr_members];
			break;
		}
	nr = pw->nr_members;
	pthread_mutex_unlock(&pw->lock);
	if (!nr) {
		pthread_mutex_destroy(&pw->lock);
		free(pw);
	}
	sim->power = NULL;
}

void zsim_destroy(struct zsim *sim)
{
	uint64_t i, c;

	if (!sim)
		return;
	ckpt_drop_locked(sim);
	leave_power(sim);
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		struct zsim_zone *z = &sim->zones[i];

		if (!z->chunks)
			continue;
		for (c = 0; c < sim->chunks_per_zone; c++)
			release_chunk(sim, z->chunks[c]);
		free(z->chunks);
	}
	for (i = 0; i < sim->nr_free_chunks; i++)
		release_chunk(sim, sim->free_chunks[i]);
	free(sim->free_chunks);
	free_undo_locked(sim);
	free(sim->undo);
	free(sim->zones);
	free(sim->dirty);
	free(sim->image_path);
	if (sim->has_image_lock)
		close(sim->image_lock_fd);
	free(sim);
}

/* ---- storage ---------------------------------------------------------- */

/*
 * A fresh chunk.  Chunks of the largest size are aligned to and advised as
 * transparent huge pages: first writes then fault once per 2 MiB instead of
 * once per 4 KiB, which keeps a long sequential run memcpy-bound.
 */
static uint8_t *new_chunk(struct zsim *sim)
{
	void *c = pool_get(sim->chunk_size);

	if (c)
		return c;
	if (sim->chunk_size != ZSIM_CHUNK_MAX)
		return malloc(sim->chunk_size);
	if (posix_memalign(&c, ZSIM_CHUNK_MAX, ZSIM_CHUNK_MAX))
		return NULL;
	madvise(c, ZSIM_CHUNK_MAX, MADV_HUGEPAGE);
	return c;
}

static uint8_t *get_chunk(struct zsim *sim, bool is_conv)
{
	uint8_t *c;

	if (sim->nr_free_chunks)
		c = sim->free_chunks[--sim->nr_free_chunks];
	else
		c = new_chunk(sim);
	if (c && is_conv)
		memset(c, 0, sim->chunk_size);
	if (c)
		sim->mem_bytes += sim->chunk_size;
	return c;
}

/*
 * Recycle a chunk.  The free list is never longer than the peak number of
 * chunks in use, so memory stays at the peak written volume; reusing warm
 * chunks keeps appends memcpy-bound instead of page-fault-bound.
 */
static void put_chunk(struct zsim *sim, uint8_t *c)
{
	sim->mem_bytes -= sim->chunk_size;
	if (ZCOW_GROW_ONE(&sim->free_chunks, sim->nr_free_chunks,
			  &sim->max_free_chunks)) {
		release_chunk(sim, c);
		return;
	}
	sim->free_chunks[sim->nr_free_chunks++] = c;
}

/* ---- checkpoints (zsim_checkpoint()) ----------------------------------- */

/* Bytes of a chunk of the checkpoint a later write overwrote. */
struct ckpt_save {
	uint8_t *chunk;
	uint64_t off, len;	/* in the chunk */
	uint8_t *old;		/* what they held */
};

/*
 * The state of a device when checkpointed.  Its chunks stay where they
 * are (the device's and the checkpoint's at once: "frozen") until the
 * device resets their zone, which then leaves them to the checkpoint;
 * a write into a frozen chunk saves the bytes it overwrites that the
 * checkpoint's state holds (below its write pointer, or any of a
 * conventional zone) first.
 */
struct zsim_ckpt {
	struct zsim s;			/* the device's fields */
	struct zsim_zone *zones;	/* with arrays of their own */
	uint64_t *dirty;
	struct zsim_undo *undo;		/* deep copies */
	bool is_armed;			/* the domain's */
	struct zsim_cut cut;
	uint64_t cut_count, nr_persist;
	struct ckpt_save *saves;
	uint64_t nr_saves, saves_cap;
};

static bool is_frozen(const struct zsim *sim, uint64_t zno, uint64_t ci,
		      const uint8_t *c)
{
	const struct zsim_ckpt *ck = sim->ckpt;

	return ck && c && ck->zones[zno].chunks &&
	       ck->zones[zno].chunks[ci] == c;
}

/* A write of [co, co + n) into frozen chunk @ci of zone @zno: save what
 * of it the checkpoint holds.  0 or -ENOMEM. */
static int ckpt_save_locked(struct zsim *sim, uint64_t zno, uint64_t ci,
			    uint64_t co, uint64_t n)
{
	struct zsim_ckpt *ck = sim->ckpt;
	const struct zsim_zone *cz = &ck->zones[zno];
	uint64_t cs = sim->chunk_size, end = cs, base = ci * cs;
	struct ckpt_save *sv;

	if (cz->type != ZDEV_ZONE_CONV)
		end = cz->wp <= base ? 0 : cz->wp - base < cs ? cz->wp - base :
								 cs;
	if (co >= end)
		return 0;
	if (co + n > end)
		n = end - co;
	if (ZCOW_GROW_ONE(&ck->saves, ck->nr_saves, &ck->saves_cap))
		return -ENOMEM;
	sv = &ck->saves[ck->nr_saves];
	sv->chunk = sim->zones[zno].chunks[ci];
	sv->off = co;
	sv->len = n;
	sv->old = malloc(n);
	if (!sv->old)
		return -ENOMEM;
	memcpy(sv->old, sv->chunk + co, n);
	ck->nr_saves++;
	return 0;
}

static void free_undo_copies(struct zsim_undo *u, uint64_t nr)
{
	uint64_t i;

	for (i = 0; u && i < nr; i++) {
		free(u[i].old_data);
		free(u[i].new_data);
	}
	free(u);
}

/* Deep copies of @nr undo records into *@dst (its capacity *@cap, may
 * grow).  0 or -ENOMEM (*@dst holds the first copies: free them). */
static int copy_undo(struct zsim_undo **dst, uint64_t *cap,
		     const struct zsim_undo *src, uint64_t nr,
		     uint64_t *nr_ret)
{
	uint64_t i;

	*nr_ret = 0;
	if (nr > *cap) {
		struct zsim_undo *v = realloc(*dst, nr * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*dst = v;
		*cap = nr;
	}
	for (i = 0; i < nr; i++) {
		struct zsim_undo *u = &(*dst)[i];

		*u = src[i];
		u->old_data = malloc(u->len);
		u->new_data = malloc(u->len);
		if (!u->old_data || !u->new_data) {
			free(u->old_data);
			free(u->new_data);
			return -ENOMEM;
		}
		memcpy(u->old_data, src[i].old_data, u->len);
		memcpy(u->new_data, src[i].new_data, u->len);
		*nr_ret = i + 1;
	}
	return 0;
}

static void ckpt_drop_locked(struct zsim *sim)
{
	struct zsim_ckpt *ck = sim->ckpt;
	uint64_t i, c;

	if (!ck)
		return;
	for (i = 0; i < ck->nr_saves; i++)
		free(ck->saves[i].old);
	free(ck->saves);
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		uint8_t **v = ck->zones[i].chunks;

		for (c = 0; v && c < sim->chunks_per_zone; c++)
			if (v[c] && sim->zones[i].chunks[c] != v[c])
				release_chunk(sim, v[c]);	/* its only */
		free(v);
	}
	free(ck->zones);
	free(ck->dirty);
	free_undo_copies(ck->undo, ck->s.nr_undo);
	free(ck);
	sim->ckpt = NULL;
}

/* Release the chunks of a sequential zone (reset); frozen ones stay the
 * checkpoint's. */
static void drop_data_locked(struct zsim *sim, struct zsim_zone *z)
{
	uint64_t c, zno = (uint64_t)(z - sim->zones);

	if (!z->chunks)
		return;
	for (c = 0; c < sim->chunks_per_zone; c++) {
		if (z->chunks[c]) {
			if (!is_frozen(sim, zno, c, z->chunks[c]))
				put_chunk(sim, z->chunks[c]);
			z->chunks[c] = NULL;
		}
	}
}

int zsim_store_locked(struct zsim *sim, uint64_t zno, uint64_t off,
		      const void *buf, uint64_t len)
{
	struct zsim_zone *z = &sim->zones[zno];
	bool is_conv = z->type == ZDEV_ZONE_CONV;
	const uint8_t *src = buf;
	uint64_t cs = sim->chunk_size;

	if (sim->cfg.no_data)	/* data=off: wps move, nothing is kept */
		return 0;
	if (!z->chunks) {
		z->chunks = calloc(sim->chunks_per_zone, sizeof(*z->chunks));
		if (!z->chunks)
			return -ENOMEM;
	}
	while (len) {
		uint64_t ci = off / cs, co = off % cs;
		uint64_t n = cs - co < len ? cs - co : len;

		if (!z->chunks[ci]) {
			z->chunks[ci] = get_chunk(sim, is_conv);
			if (!z->chunks[ci])
				return -ENOMEM;
		} else if (is_frozen(sim, zno, ci, z->chunks[ci])) {
			int ret = ckpt_save_locked(sim, zno, ci, co, n);

			if (ret)
				return ret;
		}
		memcpy(z->chunks[ci] + co, src, n);
		src += n;
		off += n;
		len -= n;
	}
	return 0;
}

void zsim_load_locked(struct zsim *sim, uint64_t zno, uint64_t off, void *buf,
		      uint64_t len)
{
	struct zsim_zone *z = &sim->zones[zno];
	uint64_t cs = sim->chunk_size;
	uint8_t *dst = buf;

	while (len) {
		uint64_t ci = off / cs, co = off % cs;
		uint64_t n = cs - co < len ? cs - co : len;

		if (z->chunks && z->chunks[ci])
			memcpy(dst, z->chunks[ci] + co, n);
		else
			memset(dst, 0, n);
		dst += n;
		off += n;
		len -= n;
	}
}

/* ---- rules and accounting --------------------------------------------- */

static int violate(struct zsim *sim, enum zsim_rule rule, int err)
{
	sim->violations[rule]++;
	sim->last_violation = rule;
	return err;
}

static bool is_seq(const struct zsim_zone *z)
{
	return z->type != ZDEV_ZONE_CONV;
}

static bool is_open_cond(uint8_t cond)
{
	return cond == ZDEV_COND_IMP_OPEN || cond == ZDEV_COND_EXP_OPEN;
}

static bool is_active_cond(uint8_t cond)
{
	return is_open_cond(cond) || cond == ZDEV_COND_CLOSED;
}

static void imp_remove(struct zsim *sim, uint64_t zno)
{
	struct zsim_zone *z = &sim->zones[zno];

	if (z->prev != ZSIM_NO_ZONE)
		sim->zones[z->prev].next = z->next;
	else
		sim->imp_head = z->next;
	if (z->next != ZSIM_NO_ZONE)
		sim->zones[z->next].prev = z->prev;
	else
		sim->imp_tail = z->prev;
	z->prev = z->next = ZSIM_NO_ZONE;
}

static void imp_append(struct zsim *sim, uint64_t zno)
{
	struct zsim_zone *z = &sim->zones[zno];

	z->prev = sim->imp_tail;
	z->next = ZSIM_NO_ZONE;
	if (sim->imp_tail != ZSIM_NO_ZONE)
		sim->zones[sim->imp_tail].next = zno;
	else
		sim->imp_head = zno;
	sim->imp_tail = zno;
}

/*
 * Move zone @zno to @cond, keeping the open/active counts and the FIFO of
 * implicitly open zones (ordered by the time they became IO) right.
 */
static void set_cond(struct zsim *sim, uint64_t zno, uint8_t cond)
{
	struct zsim_zone *z = &sim->zones[zno];
	uint8_t old = z->cond;

	if (old == cond)
		return;
	if (old == ZDEV_COND_IMP_OPEN)
		imp_remove(sim, zno);
	if (is_open_cond(old))
		sim->nr_open--;
	if (is_active_cond(old))
		sim->nr_active--;
	z->cond = cond;
	if (cond == ZDEV_COND_IMP_OPEN)
		imp_append(sim, zno);
	if (is_open_cond(cond))
		sim->nr_open++;
	if (is_active_cond(cond))
		sim->nr_active++;
}

void zsim_recount_locked(struct zsim *sim)
{
	uint64_t i;

	sim->nr_open = sim->nr_active = 0;
	sim->imp_head = sim->imp_tail = ZSIM_NO_ZONE;
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		struct zsim_zone *z = &sim->zones[i];

		z->prev = z->next = ZSIM_NO_ZONE;
		if (z->cond == ZDEV_COND_IMP_OPEN)
			imp_append(sim, i);
		if (is_open_cond(z->cond))
			sim->nr_open++;
		if (is_active_cond(z->cond))
			sim->nr_active++;
	}
}

/*
 * Make zone @zno open (implicitly for a write or append, explicitly for an
 * open command), as QEMU's nvme_zrm_open_flags() does:
 *   - from EMPTY it needs an active slot and an open slot, from CLOSED only
 *     an open slot;
 *   - with auto-close on and the open count at the limit, the oldest
 *     implicitly open zone is closed first, and that close stays even when
 *     the command then fails;
 *   - the active check comes first: EOVERFLOW wins over ETOOMANYREFS.
 */
static int open_locked(struct zsim *sim, uint64_t zno, bool is_explicit)
{
	struct zsim_zone *z = &sim->zones[zno];
	uint32_t max_open = sim->cfg.max_open;
	uint32_t max_active = sim->cfg.max_active;
	bool needs_active = false;

	switch (z->cond) {
	case ZDEV_COND_EMPTY:
		needs_active = true;
		/* fall through */
	case ZDEV_COND_CLOSED:
		if (!sim->cfg.no_auto_close && max_open &&
		    sim->nr_open >= max_open && sim->imp_head != ZSIM_NO_ZONE)
			set_cond(sim, sim->imp_head, ZDEV_COND_CLOSED);
		if (needs_active && max_active && sim->nr_active >= max_active)
			return violate(sim, ZSIM_RULE_TOO_MANY_ACTIVE,
				       -EOVERFLOW);
		if (max_open && sim->nr_open >= max_open)
			return violate(sim, ZSIM_RULE_TOO_MANY_OPEN,
				       -ETOOMANYREFS);
		set_cond(sim, zno, is_explicit ? ZDEV_COND_EXP_OPEN :
						 ZDEV_COND_IMP_OPEN);
		return 0;
	case ZDEV_COND_IMP_OPEN:
		if (is_explicit)
			set_cond(sim, zno, ZDEV_COND_EXP_OPEN);
		return 0;
	case ZDEV_COND_EXP_OPEN:
		return 0;
	default:
		return violate(sim, ZSIM_RULE_BAD_TRANSITION, -EIO);
	}
}

static void mark_dirty(struct zsim *sim, uint64_t zno)
{
	struct zsim_zone *z = &sim->zones[zno];

	if (!z->is_dirty) {
		z->is_dirty = true;
		sim->dirty[sim->nr_dirty++] = zno;
	}
}

/* ORDER: everything written before the flush is durable after it. */
static void flush_locked(struct zsim *sim)
{
	uint64_t i;

	for (i = 0; i < sim->nr_dirty; i++) {
		struct zsim_zone *z = &sim->zones[sim->dirty[i]];

		z->durable = z->wp;
		z->is_dirty = false;
	}
	sim->nr_dirty = 0;
	free_undo_locked(sim);
	sim->last.is_valid = false;
}

/* Make one sequential zone's data durable (finish, FUA). */
static void persist_zone_locked(struct zsim *sim, uint64_t zno)
{
	struct zsim_zone *z = &sim->zones[zno];

	z->durable = z->wp;
	if (sim->last.is_valid && sim->last.zone == zno)
		sim->last.is_valid = false;
}

/* ---- faults, cut points, trace ----------------------------------------- */

static bool fault_matches(const struct zsim_fault *f, enum zdev_op op,
			  enum zdev_class cls)
{
	switch (f->match) {
	case ZSIM_MATCH_OP:
		return f->op == op;
	case ZSIM_MATCH_CLASS:
		return f->cls == cls && op != ZDEV_OP_READ;
	case ZSIM_MATCH_CLASS_OP:
		return f->cls == cls && f->op == op;
	case ZSIM_MATCH_ANY:
		return true;
	}
	return false;
}

static bool fault_hits(struct zsim *sim, enum zdev_op op, enum zdev_class cls)
{
	bool hit = false;
	unsigned int i;

	for (i = 0; i < sim->nr_faults; i++) {
		struct zsim_fault_slot *f = &sim->faults[i];

		if (!fault_matches(&f->fault, op, cls))
			continue;
		f->seen++;
		if (f->fault.ordinal) {
			if (f->seen == f->fault.ordinal)
				hit = true;
		} else if (zcow_rand64(&sim->rng) % 1000000 <
			   f->fault.rate_ppm) {
			hit = true;
		}
	}
	return hit;
}

static bool cut_matches(struct zsim *sim, enum zdev_op op,
			enum zdev_class cls)
{
	bool is_data = op == ZDEV_OP_WRITE || op == ZDEV_OP_APPEND;
	bool is_zone = op == ZDEV_OP_RESET || op == ZDEV_OP_OPEN ||
		       op == ZDEV_OP_CLOSE || op == ZDEV_OP_FINISH;
	struct zsim_power *pw = sim->power;
	bool match = false;

	if (!pw->is_armed)
		return false;
	switch (pw->cut.kind) {
	case ZSIM_CUT_NONE:
		break;
	case ZSIM_CUT_PERSIST:
		match = is_data || is_zone || op == ZDEV_OP_FLUSH;
		break;
	case ZSIM_CUT_CLASS:
		match = is_data && cls == pw->cut.cls;
		break;
	case ZSIM_CUT_RESET:
		match = op == ZDEV_OP_RESET;
		break;
	case ZSIM_CUT_FINISH:
		match = op == ZDEV_OP_FINISH;
		break;
	case ZSIM_CUT_ZONE_OP:
		match = is_zone;
		break;
	case ZSIM_CUT_FLUSH:
		match = op == ZDEV_OP_FLUSH;
		break;
	}
	if (!match)
		return false;
	return ++pw->cut_count == pw->cut.ordinal;
}

static void trace_locked(struct zsim *sim, enum zdev_class cls,
			 enum zdev_op op, uint64_t off, uint64_t len, int ret,
			 bool is_durable)
{
	const char *dur;

	/* Timing hook (sim/ztime.c): one charge per completed command. */
	if (sim->timing && ret == 0)
		ztime_charge(sim->timing, op, off, len);
	if (!sim->trace)
		return;
	if (op == ZDEV_OP_READ || op == ZDEV_OP_REPORT)
		dur = "-";
	else
		dur = is_durable ? "durable" : "volatile";
	fprintf(sim->trace, "%llu,%s,%s,%llu,%llu,%llu,%d,%s\n",
		(unsigned long long)++sim->trace_seq, zdev_class_name(cls),
		zdev_op_name(op),
		(unsigned long long)(off - off % sim->cfg.zone_size),
		(unsigned long long)off, (unsigned long long)len, ret, dur);
}

static void garbage(uint64_t *rng, uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(zcow_rand64(rng) % 255 + 1);
}

/* Fold @x into the digest of the loss being applied. */
static void digest(struct zsim *sim, uint64_t x)
{
	sim->loss_digest = zcow_mix64(sim->loss_digest ^ x);
}

/*
 * Apply a loss policy to the volatile state and freeze the device.
 * @torn, if set, is a write that must be torn whatever the policy (a named
 * TORN crash point); with ZSIM_LOSS_TORN the last volatile write is torn.
 * What survives becomes durable; conditions are fixed at the power cycle.
 */
static void cut_locked(struct zsim *sim, enum zsim_loss loss, uint64_t seed,
		       const struct zsim_last *torn_in)
{
	uint64_t lba = sim->cfg.lba_size;
	struct zsim_last torn = { .is_valid = false };
	uint64_t rng = seed ^ 0x5a17c0de5a17c0deull;
	uint64_t i;

	if (sim->is_cut && !sim->is_held)
		return;
	sim->loss_digest = ZCOW_GOLDEN64;
	if (sim->is_held && !torn_in)	/* the loss of a held cut */
		torn_in = &sim->held_torn;
	if (torn_in && torn_in->is_valid)
		torn = *torn_in;
	else if (loss == ZSIM_LOSS_TORN && sim->last.is_valid)
		torn = sim->last;

	/* Sequential zones: keep a prefix of [durable, wp). */
	for (i = 0; i < sim->nr_dirty; i++) {
		uint64_t zno = sim->dirty[i];
		struct zsim_zone *z = &sim->zones[zno];
		uint64_t lo = z->durable, hi = z->wp, nw;

		if (torn.is_valid && torn.zone == zno && is_seq(z) &&
		    torn.off >= lo && torn.off + torn.len == hi) {
			uint64_t nb = torn.len / lba;

			hi = torn.off + (zcow_rand64(&rng) % nb) * lba;
		}
		switch (loss) {
		case ZSIM_LOSS_KEEP:
		case ZSIM_LOSS_TORN:
			nw = hi;
			break;
		case ZSIM_LOSS_DROP:
			nw = lo;
			break;
		default:
			nw = lo + zcow_rand64(&rng) % ((hi - lo) / lba + 1) * lba;
			break;
		}
		digest(sim, zno);
		digest(sim, nw);
		if (nw != z->wp && z->cond == ZDEV_COND_FULL)
			z->cond = nw ? ZDEV_COND_CLOSED : ZDEV_COND_EMPTY;
		z->wp = z->durable = nw;
		z->is_dirty = false;
	}
	sim->nr_dirty = 0;

	/*
	 * Conventional zones: undo every unflushed write (newest first), then
	 * redo the ones that survive (oldest first); FUA writes always do.
	 */
	for (i = sim->nr_undo; i-- > 0;) {
		struct zsim_undo *u = &sim->undo[i];
		uint64_t zno = u->off / sim->cfg.zone_size;

		zsim_store_locked(sim, zno, u->off % sim->cfg.zone_size,
				  u->old_data, u->len);
	}
	for (i = 0; i < sim->nr_undo; i++) {
		struct zsim_undo *u = &sim->undo[i];
		uint64_t zno = u->off / sim->cfg.zone_size;
		bool is_torn = torn.is_valid && torn.undo_idx == i &&
			       torn.zone == zno;
		bool keep;

		switch (loss) {
		case ZSIM_LOSS_KEEP:
		case ZSIM_LOSS_TORN:
			keep = true;
			break;
		case ZSIM_LOSS_DROP:
			keep = false;
			break;
		default:
			keep = zcow_rand64(&rng) & 1;
			break;
		}
		if (u->is_durable)
			keep = true;
		digest(sim, i);
		digest(sim, keep);
		if (!keep)
			continue;
		if (is_torn) {
			uint64_t k = (zcow_rand64(&rng) % (u->len / lba)) * lba;

			/* the garbage is the PRNG's from here */
			digest(sim, k);
			digest(sim, rng);
			garbage(&rng, u->new_data + k, u->len - k);
		}
		zsim_store_locked(sim, zno, u->off % sim->cfg.zone_size,
				  u->new_data, u->len);
	}
	free_undo_locked(sim);
	sim->last.is_valid = false;
	sim->is_cut = true;
	sim->is_held = false;
}

/*
 * The power of the domain of @sim fails: every device loses its volatile
 * writes by @loss, the first device of the domain with @seed, a device
 * linked later with a seed of its own derived from @seed and its place;
 * @torn (a named TORN point) is the command of @sim in flight.  The
 * armed point is spent (unless every device was down already).
 */
static void cut_domain_locked(struct zsim *sim, enum zsim_loss loss,
			      uint64_t seed, const struct zsim_last *torn)
{
	struct zsim_power *pw = sim->power;
	bool was_up = false;
	unsigned int i;

	for (i = 0; i < pw->nr_members; i++) {
		struct zsim *m = pw->members[i];
		uint64_t s = m->power_idx ?
			zcow_mix64(seed + m->power_idx * ZCOW_GOLDEN64) : seed;

		was_up |= !m->is_cut;
		cut_locked(m, loss, s, m == sim ? torn : NULL);
	}
	if (was_up)
		pw->is_armed = false;
}

/*
 * The armed point of the domain of @sim fires (@torn: as for
 * cut_domain_locked()): cut, or with zsim_cut.hold every device goes
 * down holding its volatile writes.
 */
static void fire_locked(struct zsim *sim, const struct zsim_last *torn)
{
	struct zsim_power *pw = sim->power;
	unsigned int i;

	if (!pw->cut.hold) {
		cut_domain_locked(sim, pw->cut.loss, pw->cut.seed, torn);
		return;
	}
	for (i = 0; i < pw->nr_members; i++) {
		struct zsim *m = pw->members[i];

		if (m->is_cut)
			continue;
		m->is_cut = m->is_held = true;
		m->held_torn.is_valid = false;
		if (m == sim && torn && torn->is_valid)
			m->held_torn = *torn;
		pw->is_armed = false;
	}
}

/*
 * A zone after a power cycle: open zones close (or go back to EMPTY when
 * nothing of them survived); CLOSED with wp 0 is EMPTY; FULL stays.
 */
uint8_t zsim_cycled_cond(const struct zsim *sim, const struct zsim_zone *z)
{
	(void)sim;
	if (is_active_cond(z->cond))
		return z->wp ? ZDEV_COND_CLOSED : ZDEV_COND_EMPTY;
	return z->cond;
}

/* ---- commands --------------------------------------------------------- */

static struct zsim *to_sim(struct zdev *dev)
{
	return dev->priv;
}

/* The zone turns read-only or offline: its data is what the media holds
 * now, so it is made durable first. */
static void fail_zone_locked(struct zsim *sim, uint64_t zno, uint8_t cond)
{
	if (is_seq(&sim->zones[zno]))
		persist_zone_locked(sim, zno);
	set_cond(sim, zno, cond);
}

/* Apply the zone failures due at this command (sim->nr_cmds). */
static void zone_fails_locked(struct zsim *sim)
{
	unsigned int i = 0;

	while (i < sim->nr_zone_fails) {
		struct zsim_zone_fail *f = &sim->zone_fails[i];

		if (f->at_cmd > sim->nr_cmds) {
			i++;
			continue;
		}
		fail_zone_locked(sim, f->zno, f->cond);
		*f = sim->zone_fails[--sim->nr_zone_fails];
	}
}

/*
 * Common entry of a command: power, then the due zone failures, then the
 * armed crash point, then the
 * injected faults.  Returns 1 to go on, 0 with *ret set to stop here; sets
 * *when_ret to the crash point to apply after the command (or -1).
 */
static int enter_locked(struct zsim *sim, enum zdev_op op, enum zdev_class cls,
			int *ret, int *when_ret)
{
	bool is_persist = op != ZDEV_OP_READ && op != ZDEV_OP_REPORT;
	struct zsim_power *pw = sim->power;

	*when_ret = -1;
	if (sim->is_cut) {
		*ret = violate(sim, ZSIM_RULE_POWER_OFF, -EIO);
		return 0;
	}
	sim->nr_cmds++;
	if (sim->nr_zone_fails)
		zone_fails_locked(sim);
	if (is_persist)
		pw->nr_persist++;
	if (cut_matches(sim, op, cls)) {
		if (pw->cut.when == ZSIM_CUT_BEFORE ||
		    (pw->cut.when == ZSIM_CUT_TORN && op != ZDEV_OP_WRITE &&
		     op != ZDEV_OP_APPEND)) {
			/* Resets and finishes are atomic: torn = before. */
			pw->nr_persist--;
			fire_locked(sim, NULL);
			*ret = violate(sim, ZSIM_RULE_POWER_OFF, -EIO);
			return 0;
		}
		*when_ret = pw->cut.when;
	}
	if (fault_hits(sim, op, cls)) {
		*ret = violate(sim, ZSIM_RULE_INJECTED, -EIO);
		return 0;
	}
	return 1;
}

/* Finish a command that hit an AFTER or TORN crash point. */
static int leave_locked(struct zsim *sim, int when, int ret,
			const struct zsim_last *torn)
{
	if (when < 0)
		return ret;
	if (when == ZSIM_CUT_TORN) {
		fire_locked(sim, torn);
		return violate(sim, ZSIM_RULE_POWER_OFF, -EIO);
	}
	fire_locked(sim, NULL);
	return ret;
}

static int zsim_report(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		       unsigned int *nr_ret)
{
	struct zsim *sim = to_sim(dev);
	uint64_t zs = sim->cfg.zone_size;
	uint64_t zno = from / zs;
	unsigned int n = 0;
	int ret = 0;

	zsim_lock(sim);
	if (sim->is_cut) {
		ret = violate(sim, ZSIM_RULE_POWER_OFF, -EIO);
		*nr_ret = 0;
		goto out;
	}
	for (; n < *nr_ret && zno < sim->cfg.nr_zones; n++, zno++) {
		const struct zsim_zone *z = &sim->zones[zno];
		struct zdev_zone *r = &zones[n];

		r->start = zno * zs;
		r->len = zs;
		r->type = z->type;
		r->cond = z->cond;
		if (!is_seq(z)) {
			r->capacity = zs;
			r->wp = r->start + zs;
		} else {
			r->capacity = sim->cfg.zone_capacity;
			r->wp = z->cond == ZDEV_COND_FULL ? r->start + zs :
							    r->start + z->wp;
		}
	}
	*nr_ret = n;
out:
	zsim_unlock(sim);
	return ret;
}

static int zsim_read(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
		     enum zdev_class cls)
{
	struct zsim *sim = to_sim(dev);
	uint64_t zs = sim->cfg.zone_size;
	uint64_t zno = off / zs, rel = off % zs;
	struct zsim_zone *z = &sim->zones[zno];
	int ret = 0, when;

	zsim_lock(sim);
	if (!enter_locked(sim, ZDEV_OP_READ, cls, &ret, &when))
		goto out;
	if (len > zs - rel) {
		ret = violate(sim, ZSIM_RULE_READ_BOUNDARY, -EIO);
		goto out;
	}
	if (z->cond == ZDEV_COND_OFFLINE) {
		ret = violate(sim, ZSIM_RULE_ZONE_OFFLINE, -EIO);
		goto out;
	}
	if (is_seq(z)) {
		/* Above the wp (gap, empty, after reset): zeros. */
		uint64_t n = rel < z->wp ? z->wp - rel : 0;

		if (n > len)
			n = len;
		zsim_load_locked(sim, zno, rel, buf, n);
		memset((uint8_t *)buf + n, 0, len - n);
	} else {
		zsim_load_locked(sim, zno, rel, buf, len);
	}
out:
	trace_locked(sim, cls, ZDEV_OP_READ, off, len, ret, false);
	zsim_unlock(sim);
	return ret;
}

/* A conventional-zone write: record the undo entry unless all is durable. */
static int write_conv_locked(struct zsim *sim, uint64_t zno, uint64_t rel,
			     const void *buf, uint64_t len, bool is_fua)
{
	struct zsim_undo *u;
	int ret;

	if (is_fua && !sim->nr_undo)
		return zsim_store_locked(sim, zno, rel, buf, len);
	if (ZCOW_GROW_ONE(&sim->undo, sim->nr_undo, &sim->undo_cap))
		return -ENOMEM;
	u = &sim->undo[sim->nr_undo];
	u->off = zno * sim->cfg.zone_size + rel;
	u->len = len;
	u->is_durable = is_fua;
	u->old_data = malloc(len);
	u->new_data = malloc(len);
	if (!u->old_data || !u->new_data) {
		free(u->old_data);
		free(u->new_data);
		return -ENOMEM;
	}
	zsim_load_locked(sim, zno, rel, u->old_data, len);
	memcpy(u->new_data, buf, len);
	ret = zsim_store_locked(sim, zno, rel, buf, len);
	if (ret) {
		free(u->old_data);
		free(u->new_data);
		return ret;
	}
	sim->mem_bytes += 2 * len;
	if (!is_fua) {
		sim->last.is_valid = true;
		sim->last.zone = zno;
		sim->last.off = rel;
		sim->last.len = len;
		sim->last.undo_idx = sim->nr_undo;
	}
	sim->nr_undo++;
	return 0;
}

/*
 * Write (or append, when @is_append: @off is the zone start) under the
 * lock.  Checks in the order QEMU makes them: zone state (offline, full,
 * read-only), then the wp, then the capacity/zone end, then the open and
 * active resources.
 */
static int write_locked(struct zsim *sim, const void *buf, uint64_t len,
			uint64_t off, bool is_fua, bool is_append,
			uint64_t *off_ret)
{
	uint64_t zs = sim->cfg.zone_size;
	uint64_t zno = off / zs, rel = off % zs;
	struct zsim_zone *z = &sim->zones[zno];
	int ret;

	if (is_append) {
		if (!is_seq(z))
			return violate(sim, ZSIM_RULE_APPEND_CONV, -EINVAL);
		if (rel)
			return violate(sim, ZSIM_RULE_APPEND_NOT_ZONE_START,
				       -EINVAL);
		if (len > sim->cfg.max_append)
			return violate(sim, ZSIM_RULE_APPEND_TOO_LARGE,
				       -EINVAL);
	}
	if (z->cond == ZDEV_COND_OFFLINE)
		return violate(sim, ZSIM_RULE_ZONE_OFFLINE, -EIO);
	if (z->cond == ZDEV_COND_READONLY)
		return violate(sim, ZSIM_RULE_WRITE_READONLY, -EIO);
	if (!is_seq(z)) {
		if (len > zs - rel)
			return violate(sim, ZSIM_RULE_WRITE_BOUNDARY, -EIO);
		*off_ret = off;
		return write_conv_locked(sim, zno, rel, buf, len, is_fua);
	}
	if (z->cond == ZDEV_COND_FULL)
		return violate(sim, ZSIM_RULE_WRITE_FULL, -EIO);
	if (is_append)
		rel = z->wp;
	else if (rel != z->wp)
		return violate(sim, ZSIM_RULE_WRITE_NOT_AT_WP, -EIO);
	if (len > sim->cfg.zone_capacity - rel)
		return violate(sim, ZSIM_RULE_WRITE_BOUNDARY, -EIO);
	ret = open_locked(sim, zno, false);
	if (ret)
		return ret;
	ret = zsim_store_locked(sim, zno, rel, buf, len);
	if (ret)
		return ret;
	z->wp = rel + len;
	*off_ret = zno * zs + rel;
	if (z->wp == sim->cfg.zone_capacity)
		set_cond(sim, zno, ZDEV_COND_FULL);
	if (is_fua) {
		persist_zone_locked(sim, zno);
	} else {
		mark_dirty(sim, zno);
		sim->last.is_valid = true;
		sim->last.zone = zno;
		sim->last.off = rel;
		sim->last.len = len;
	}
	return 0;
}

static int do_write(struct zdev *dev, const void *buf, uint64_t len,
		    uint64_t off, unsigned int flags, enum zdev_class cls,
		    bool is_append, uint64_t *off_ret)
{
	enum zdev_op op = is_append ? ZDEV_OP_APPEND : ZDEV_OP_WRITE;
	struct zsim *sim = to_sim(dev);
	bool is_fua = flags & ZDEV_WRITE_FUA;
	struct zsim_last torn = { .is_valid = false };
	uint64_t where = off;
	int ret = 0, when;

	zsim_lock(sim);
	if (!enter_locked(sim, op, cls, &ret, &when))
		goto out;
	/* A torn command never completes: it cannot be durable. */
	if (when == ZSIM_CUT_TORN)
		is_fua = false;
	ret = write_locked(sim, buf, len, off, is_fua, is_append, &where);
	if (!ret && when == ZSIM_CUT_TORN)
		torn = sim->last;
	ret = leave_locked(sim, when, ret, &torn);
out:
	if (off_ret)
		*off_ret = where;
	trace_locked(sim, cls, op, where, len, ret, is_fua);
	zsim_unlock(sim);
	return ret;
}

static int zsim_write(struct zdev *dev, const void *buf, uint64_t len,
		      uint64_t off, unsigned int flags, enum zdev_class cls)
{
	return do_write(dev, buf, len, off, flags, cls, false, NULL);
}

static int zsim_append(struct zdev *dev, const void *buf, uint64_t len,
		       uint64_t zone, unsigned int flags, enum zdev_class cls,
		       uint64_t *off_ret)
{
	return do_write(dev, buf, len, zone, flags, cls, true, off_ret);
}

/* Reset: ORDER: atomic and durable on completion; drops volatile data. */
static void reset_zone_locked(struct zsim *sim, uint64_t zno)
{
	struct zsim_zone *z = &sim->zones[zno];

	set_cond(sim, zno, ZDEV_COND_EMPTY);
	drop_data_locked(sim, z);
	z->wp = z->durable = 0;
	if (sim->last.is_valid && sim->last.zone == zno)
		sim->last.is_valid = false;
}

/* One zone of a management command.  State table at the top of the file. */
static int zone_action_locked(struct zsim *sim, enum zdev_zone_action action,
			      uint64_t zno)
{
	struct zsim_zone *z = &sim->zones[zno];

	if (z->cond == ZDEV_COND_OFFLINE)
		return violate(sim, ZSIM_RULE_ZONE_OFFLINE, -EIO);
	if (!is_seq(z) || z->cond == ZDEV_COND_READONLY)
		return violate(sim, ZSIM_RULE_BAD_TRANSITION, -EIO);
	switch (action) {
	case ZDEV_ZONE_OPEN:
		return open_locked(sim, zno, true);
	case ZDEV_ZONE_CLOSE:
		if (z->cond == ZDEV_COND_EMPTY || z->cond == ZDEV_COND_FULL)
			return violate(sim, ZSIM_RULE_BAD_TRANSITION, -EIO);
		set_cond(sim, zno, ZDEV_COND_CLOSED);
		return 0;
	case ZDEV_ZONE_FINISH:
		/* ORDER: the zone's data is durable before it reads FULL. */
		set_cond(sim, zno, ZDEV_COND_FULL);
		persist_zone_locked(sim, zno);
		return 0;
	case ZDEV_ZONE_RESET:
		reset_zone_locked(sim, zno);
		return 0;
	}
	return -EINVAL;
}

/*
 * For "all zones" (start = 0, len = 0) the zones an NVMe Select All
 * command touches: open: CLOSED; close: open; finish: open or closed;
 * reset: anything not empty.  Conventional, read-only and offline zones
 * are skipped.
 */
static bool is_selected_all(const struct zsim_zone *z,
			    enum zdev_zone_action action)
{
	if (!is_seq(z) || z->cond == ZDEV_COND_READONLY ||
	    z->cond == ZDEV_COND_OFFLINE)
		return false;
	switch (action) {
	case ZDEV_ZONE_OPEN:
		return z->cond == ZDEV_COND_CLOSED;
	case ZDEV_ZONE_CLOSE:
		return is_open_cond(z->cond);
	case ZDEV_ZONE_FINISH:
		return is_active_cond(z->cond);
	case ZDEV_ZONE_RESET:
		return z->cond != ZDEV_COND_EMPTY;
	}
	return false;
}

static int zsim_zone_mgmt(struct zdev *dev, enum zdev_zone_action action,
			  uint64_t start, uint64_t len, enum zdev_class cls)
{
	struct zsim *sim = to_sim(dev);
	uint64_t zs = sim->cfg.zone_size;
	bool is_all = start == 0 && len == 0;
	uint64_t first = start / zs;
	uint64_t end = is_all ? sim->cfg.nr_zones : (start + len) / zs;
	uint64_t zno;
	int ret = 0, err, when;

	zsim_lock(sim);
	if (!enter_locked(sim, (enum zdev_op)action, cls, &ret, &when))
		goto out;
	/* Zone by zone, not stopping at an error; the first error is kept. */
	for (zno = first; zno < end; zno++) {
		if (is_all && !is_selected_all(&sim->zones[zno], action))
			continue;
		err = zone_action_locked(sim, action, zno);
		if (err && !ret)
			ret = err;
	}
	ret = leave_locked(sim, when, ret, NULL);
out:
	trace_locked(sim, cls, (enum zdev_op)action, start, len, ret, true);
	zsim_unlock(sim);
	return ret;
}

static int zsim_flush(struct zdev *dev)
{
	struct zsim *sim = to_sim(dev);
	int ret = 0, when;

	zsim_lock(sim);
	if (!enter_locked(sim, ZDEV_OP_FLUSH, ZDEV_CLASS_FLUSH, &ret, &when))
		goto out;
	flush_locked(sim);
	ret = leave_locked(sim, when, 0, NULL);
out:
	trace_locked(sim, ZDEV_CLASS_FLUSH, ZDEV_OP_FLUSH, 0, 0, ret, true);
	zsim_unlock(sim);
	return ret;
}

static int zsim_close(struct zdev *dev)
{
	struct zsim *sim = to_sim(dev);
	int ret = 0;

	if (sim->image_path)
		ret = zsim_save(sim, sim->image_path);
	zsim_destroy(sim);
	return ret;
}

static const struct zdev_ops zsim_ops = {
	.report = zsim_report,
	.read = zsim_read,
	.write = zsim_write,
	.append = zsim_append,
	.zone_mgmt = zsim_zone_mgmt,
	.flush = zsim_flush,
	.close = zsim_close,
};

int zsim_attach(struct zsim *sim, struct zdev **dev_ret)
{
	struct zdev_info info = { 0 };
	struct zdev *dev;

	info.zone_size = sim->cfg.zone_size;
	info.zone_capacity = sim->cfg.zone_capacity;
	info.nr_zones = sim->cfg.nr_zones;
	info.nr_conv = sim->cfg.nr_conv;
	info.size = sim->cfg.nr_zones * sim->cfg.zone_size;
	info.max_open = sim->cfg.max_open;
	info.max_active = sim->cfg.max_active;
	info.max_append = sim->cfg.max_append;
	info.lba_size = sim->cfg.lba_size;
	info.is_zoned = !sim->cfg.is_emulated;
	snprintf(info.model, sizeof(info.model), "sim");
	dev = zdev_alloc(&zsim_ops, &info, sim);
	if (!dev)
		return -ENOMEM;
	sim->dev = dev;
	*dev_ret = dev;
	return 0;
}

int zsim_create(const struct zsim_config *cfg, struct zdev **dev_ret)
{
	struct zsim *sim;
	int ret;

	*dev_ret = NULL;
	ret = zsim_new(cfg, &sim);
	if (ret)
		return ret;
	ret = zsim_attach(sim, dev_ret);
	if (ret)
		zsim_destroy(sim);
	return ret;
}

struct zsim *zsim_from_dev(struct zdev *dev)
{
	return dev && dev->ops == &zsim_ops ? dev->priv : NULL;
}

/* ---- public accessors --------------------------------------------------- */

enum zsim_rule zsim_last_violation(const struct zsim *sim)
{
	return sim->last_violation;
}

uint64_t zsim_nr_violations(const struct zsim *sim, enum zsim_rule rule)
{
	return (unsigned int)rule < ZSIM_NR_RULES ? sim->violations[rule] : 0;
}

static const char *const rule_names[ZSIM_NR_RULES] = {
	[ZSIM_RULE_NONE] = "none",
	[ZSIM_RULE_WRITE_NOT_AT_WP] = "write-not-at-wp",
	[ZSIM_RULE_WRITE_BOUNDARY] = "write-boundary",
	[ZSIM_RULE_WRITE_FULL] = "write-full",
	[ZSIM_RULE_WRITE_READONLY] = "write-readonly",
	[ZSIM_RULE_ZONE_OFFLINE] = "zone-offline",
	[ZSIM_RULE_TOO_MANY_OPEN] = "too-many-open",
	[ZSIM_RULE_TOO_MANY_ACTIVE] = "too-many-active",
	[ZSIM_RULE_APPEND_NOT_ZONE_START] = "append-not-zone-start",
	[ZSIM_RULE_APPEND_TOO_LARGE] = "append-too-large",
	[ZSIM_RULE_APPEND_CONV] = "append-conv",
	[ZSIM_RULE_BAD_TRANSITION] = "bad-transition",
	[ZSIM_RULE_READ_BOUNDARY] = "read-boundary",
	[ZSIM_RULE_POWER_OFF] = "power-off",
	[ZSIM_RULE_INJECTED] = "injected",
};

const char *zsim_rule_name(enum zsim_rule rule)
{
	return (unsigned int)rule < ZSIM_NR_RULES ? rule_names[rule] : "?";
}

int zsim_arm_cut(struct zsim *sim, const struct zsim_cut *cut)
{
	if (cut->kind == ZSIM_CUT_NONE) {
		zsim_lock(sim);
		sim->power->is_armed = false;
		zsim_unlock(sim);
		return 0;
	}
	if (!cut->ordinal || (unsigned int)cut->loss >= ZSIM_NR_LOSS ||
	    (cut->kind == ZSIM_CUT_CLASS &&
	     (unsigned int)cut->cls >= ZDEV_NR_CLASSES))
		return -EINVAL;
	zsim_lock(sim);
	sim->power->cut = *cut;
	sim->power->cut_count = 0;
	sim->power->is_armed = true;
	zsim_unlock(sim);
	return 0;
}

int zsim_cut_now(struct zsim *sim, enum zsim_loss loss, uint64_t seed)
{
	zsim_lock(sim);
	cut_domain_locked(sim, loss, seed, NULL);
	zsim_unlock(sim);
	return 0;
}

bool zsim_is_cut(const struct zsim *sim)
{
	return sim->is_cut;
}

int zsim_power_cycle(struct zsim *sim)
{
	uint64_t i;

	zsim_lock(sim);
	if (!sim->is_cut || sim->is_held)
		cut_locked(sim, ZSIM_LOSS_KEEP, 0, NULL);
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		struct zsim_zone *z = &sim->zones[i];

		z->cond = zsim_cycled_cond(sim, z);
	}
	zsim_recount_locked(sim);
	sim->is_cut = false;
	zsim_unlock(sim);
	return 0;
}

uint64_t zsim_nr_persist(const struct zsim *sim)
{
	return sim->power->nr_persist;
}

uint64_t zsim_loss_digest(const struct zsim *sim)
{
	return sim->loss_digest;
}

int zsim_hold_now(struct zsim *sim)
{
	struct zsim_power *pw = sim->power;
	unsigned int i;

	zsim_lock(sim);
	for (i = 0; i < pw->nr_members; i++) {
		struct zsim *m = pw->members[i];

		if (m->is_cut)
			continue;
		m->is_cut = m->is_held = true;
		m->held_torn.is_valid = false;
		pw->is_armed = false;
	}
	zsim_unlock(sim);
	return 0;
}

int zsim_checkpoint(struct zsim *sim)
{
	struct zsim_ckpt *ck;
	uint64_t i, nz = sim->cfg.nr_zones, nr;
	int ret = -ENOMEM;

	zsim_lock(sim);
	ckpt_drop_locked(sim);
	if (sim->power->nr_members != 1) {
		ret = -EINVAL;
		goto out;
	}
	if (sim->trace || sim->timing) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	ck = calloc(1, sizeof(*ck));
	if (!ck)
		goto out;
	sim->ckpt = ck;		/* what is filled in is freed by a drop */
	ck->s = *sim;
	ck->s.nr_undo = 0;
	ck->zones = calloc(nz, sizeof(*ck->zones));
	ck->dirty = malloc(nz * sizeof(*ck->dirty));
	if (!ck->zones || !ck->dirty)
		goto fail;
	for (i = 0; i < nz; i++) {
		const struct zsim_zone *z = &sim->zones[i];

		ck->zones[i] = *z;
		ck->zones[i].chunks = NULL;
		if (!z->chunks)
			continue;
		ck->zones[i].chunks = malloc(sim->chunks_per_zone *
					     sizeof(*z->chunks));
		if (!ck->zones[i].chunks)
			goto fail;
		memcpy(ck->zones[i].chunks, z->chunks,
		       sim->chunks_per_zone * sizeof(*z->chunks));
	}
	memcpy(ck->dirty, sim->dirty, sim->nr_dirty * sizeof(*ck->dirty));
	nr = 0;
	ret = copy_undo(&ck->undo, &nr, sim->undo, sim->nr_undo,
			&ck->s.nr_undo);
	if (ret)
		goto fail;
	ck->is_armed = sim->power->is_armed;
	ck->cut = sim->power->cut;
	ck->cut_count = sim->power->cut_count;
	ck->nr_persist = sim->power->nr_persist;
	ret = 0;
	goto out;
fail:
	ret = -ENOMEM;
	ckpt_drop_locked(sim);
out:
	zsim_unlock(sim);
	return ret;
}

int zsim_restore(struct zsim *sim)
{
	struct zsim_ckpt *ck = sim->ckpt;
	const struct zsim *cs;
	uint64_t i, c;
	int ret;

	if (!ck)
		return -ENOENT;
	cs = &ck->s;
	zsim_lock(sim);
	/* the bytes written over, newest first */
	for (i = ck->nr_saves; i-- > 0;) {
		struct ckpt_save *sv = &ck->saves[i];

		memcpy(sv->chunk + sv->off, sv->old, sv->len);
		free(sv->old);
	}
	ck->nr_saves = 0;
	/* the chunks: the checkpoint's back, the later ones recycled */
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		struct zsim_zone *z = &sim->zones[i];
		uint8_t **v = ck->zones[i].chunks;

		for (c = 0; z->chunks && c < sim->chunks_per_zone; c++) {
			uint8_t *q = v ? v[c] : NULL;

			if (z->chunks[c] == q)
				continue;
			if (z->chunks[c])
				put_chunk(sim, z->chunks[c]);
			z->chunks[c] = q;
		}
		v = z->chunks;
		*z = ck->zones[i];
		z->chunks = v;
	}
	memcpy(sim->dirty, ck->dirty, cs->nr_dirty * sizeof(*sim->dirty));
	sim->nr_dirty = cs->nr_dirty;
	free_undo_locked(sim);
	ret = copy_undo(&sim->undo, &sim->undo_cap, ck->undo, cs->nr_undo,
			&sim->nr_undo);
	sim->nr_open = cs->nr_open;
	sim->nr_active = cs->nr_active;
	sim->imp_head = cs->imp_head;
	sim->imp_tail = cs->imp_tail;
	sim->last = cs->last;
	sim->is_cut = cs->is_cut;
	sim->is_held = cs->is_held;
	sim->held_torn = cs->held_torn;
	memcpy(sim->faults, cs->faults, sizeof(sim->faults));
	sim->nr_faults = cs->nr_faults;
	memcpy(sim->zone_fails, cs->zone_fails, sizeof(sim->zone_fails));
	sim->nr_zone_fails = cs->nr_zone_fails;
	sim->nr_cmds = cs->nr_cmds;
	sim->rng = cs->rng;
	memcpy(sim->violations, cs->violations, sizeof(sim->violations));
	sim->last_violation = cs->last_violation;
	sim->trace_seq = cs->trace_seq;
	sim->mem_bytes = cs->mem_bytes;
	sim->power->is_armed = ck->is_armed;
	sim->power->cut = ck->cut;
	sim->power->cut_count = ck->cut_count;
	sim->power->nr_persist = ck->nr_persist;
	if (ret)
		ckpt_drop_locked(sim);
	zsim_unlock(sim);
	return ret;
}

void zsim_checkpoint_drop(struct zsim *sim)
{
	zsim_lock(sim);
	ckpt_drop_locked(sim);
	zsim_unlock(sim);
}

int zsim_link_power(struct zsim *a, struct zsim *b)
{
	struct zsim_power *pa = a->power, *pb = b->power;
	int ret = 0;

	if (a == b || pa == pb)
		return -EINVAL;
	/* b is alone: nothing else takes its lock while we hold a's */
	pthread_mutex_lock(&pa->lock);
	pthread_mutex_lock(&pb->lock);
	if (pb->nr_members != 1 || pa->is_armed || pb->is_armed)
		ret = -EBUSY;
	else if (pa->nr_members == ZSIM_MAX_LINKED)
		ret = -ENOSPC;
	if (!ret) {
		pa->members[pa->nr_members++] = b;
		pa->nr_persist += pb->nr_persist;
		b->power_idx = pa->nr_linked++;
		b->power = pa;
	}
	pthread_mutex_unlock(&pb->lock);
	pthread_mutex_unlock(&pa->lock);
	if (!ret) {
		pthread_mutex_destroy(&pb->lock);
		free(pb);
	}
	return ret;
}

static const char *const loss_names[ZSIM_NR_LOSS] = {
	[ZSIM_LOSS_KEEP] = "keep",	   [ZSIM_LOSS_DROP] = "drop",
	[ZSIM_LOSS_PREFIX] = "prefix", [ZSIM_LOSS_TORN] = "torn",
	[ZSIM_LOSS_SUBSET] = "subset",
};

const char *zsim_loss_name(enum zsim_loss loss)
{
	return (unsigned int)loss < ZSIM_NR_LOSS ? loss_names[loss] : "?";
}

int zsim_loss_parse(const char *name)
{
	int i;

	for (i = 0; i < ZSIM_NR_LOSS; i++)
		if (strcmp(name, loss_names[i]) == 0)
			return i;
	return -EINVAL;
}

int zsim_parse_cut(const char *s, struct zsim_cut *cut_ret)
{
	char kind[16], when[16];
	const char *c1, *c2;
	uint64_t n;
	size_t klen;
	char num[32];
	int cls;

	memset(cut_ret, 0, sizeof(*cut_ret));
	if (strncmp(s, "persist=", 8) == 0) {
		if (zdev_parse_u64(s + 8, &n) || !n)
			return -EINVAL;
		cut_ret->kind = ZSIM_CUT_PERSIST;
		cut_ret->ordinal = n;
		cut_ret->when = ZSIM_CUT_AFTER;
		return 0;
	}
	c1 = strchr(s, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2 || strchr(c2 + 1, ':'))
		return -EINVAL;
	klen = c1 - s;
	if (klen >= sizeof(kind) || (size_t)(c2 - c1 - 1) >= sizeof(num) ||
	    strlen(c2 + 1) >= sizeof(when))
		return -EINVAL;
	memcpy(kind, s, klen);
	kind[klen] = '\0';
	memcpy(num, c1 + 1, c2 - c1 - 1);
	num[c2 - c1 - 1] = '\0';
	strcpy(when, c2 + 1);
	if (zdev_parse_u64(num, &n) || !n)
		return -EINVAL;
	cut_ret->ordinal = n;
	if (strcmp(when, "before") == 0)
		cut_ret->when = ZSIM_CUT_BEFORE;
	else if (strcmp(when, "after") == 0)
		cut_ret->when = ZSIM_CUT_AFTER;
	else if (strcmp(when, "torn") == 0)
		cut_ret->when = ZSIM_CUT_TORN;
	else
		return -EINVAL;
	if (strcmp(kind, "reset") == 0) {
		cut_ret->kind = ZSIM_CUT_RESET;
	} else if (strcmp(kind, "finish") == 0) {
		cut_ret->kind = ZSIM_CUT_FINISH;
	} else if (strcmp(kind, "zone") == 0) {
		cut_ret->kind = ZSIM_CUT_ZONE_OP;
	} else if (strcmp(kind, "flush") == 0) {
		cut_ret->kind = ZSIM_CUT_FLUSH;
	} else {
		cls = zdev_class_parse(kind);
		if (cls < 0 || cls == ZDEV_CLASS_ZONE ||
		    cls == ZDEV_CLASS_FLUSH)
			return -EINVAL;
		cut_ret->kind = ZSIM_CUT_CLASS;
		cut_ret->cls = cls;
	}
	return 0;
}

int zsim_add_fault(struct zsim *sim, const struct zsim_fault *fault)
{
	int ret = 0;

	if ((unsigned int)fault->op >= ZDEV_NR_OPS ||
	    (unsigned int)fault->match > ZSIM_MATCH_ANY ||
	    (unsigned int)fault->cls >= ZDEV_NR_CLASSES ||
	    (!fault->ordinal && !fault->rate_ppm) ||
	    fault->rate_ppm > ZSIM_PPM)
		return -EINVAL;
	zsim_lock(sim);
	if (sim->nr_faults == ZSIM_MAX_FAULTS) {
		ret = -ENOSPC;
		goto out;
	}
	sim->faults[sim->nr_faults].fault = *fault;
	sim->faults[sim->nr_faults].seen = 0;
	sim->nr_faults++;
out:
	zsim_unlock(sim);
	return ret;
}

void zsim_clear_faults(struct zsim *sim)
{
	zsim_lock(sim);
	sim->nr_faults = 0;
	sim->nr_zone_fails = 0;
	zsim_unlock(sim);
}

int zsim_set_zone_cond(struct zsim *sim, uint64_t zone_start,
		       enum zdev_zone_cond cond)
{
	uint64_t zno = zone_start / sim->cfg.zone_size;
	int ret = 0;

	if (zone_start % sim->cfg.zone_size || zno >= sim->cfg.nr_zones ||
	    (cond != ZDEV_COND_READONLY && cond != ZDEV_COND_OFFLINE))
		return -EINVAL;
	zsim_lock(sim);
	fail_zone_locked(sim, zno, cond);
	zsim_unlock(sim);
	return ret;
}

int zsim_fail_zone_at(struct zsim *sim, uint64_t zone_start,
		      enum zdev_zone_cond cond, uint64_t at_cmd)
{
	uint64_t zno = zone_start / sim->cfg.zone_size;
	int ret = 0;

	if (zone_start % sim->cfg.zone_size || zno >= sim->cfg.nr_zones ||
	    (cond != ZDEV_COND_READONLY && cond != ZDEV_COND_OFFLINE))
		return -EINVAL;
	zsim_lock(sim);
	if (at_cmd <= sim->nr_cmds) {
		fail_zone_locked(sim, zno, cond);
	} else if (sim->nr_zone_fails == ZSIM_MAX_FAULTS) {
		ret = -ENOSPC;
	} else {
		sim->zone_fails[sim->nr_zone_fails++] =
			(struct zsim_zone_fail){ .zno = zno, .cond = cond,
						 .at_cmd = at_cmd };
	}
	zsim_unlock(sim);
	return ret;
}

void zsim_reseed(struct zsim *sim, uint64_t seed)
{
	zsim_lock(sim);
	sim->rng = seed;
	zsim_unlock(sim);
}

const char *zsim_image_path(const struct zsim *sim)
{
	return sim->image_path;
}

bool zsim_image_is_new(const struct zsim *sim)
{
	/* a loaded image is flock()ed for the device's lifetime */
	return sim->image_path && !sim->has_image_lock;
}

uint64_t zsim_nr_commands(const struct zsim *sim)
{
	return sim->nr_cmds;
}

/* "2%", "0.5%", "500ppm", "20000" (ppm) into *ppm_ret. */
static int parse_rate(const char *s, uint32_t *ppm_ret)
{
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > ZSIM_PPM)
			return -EINVAL;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale >= 10000)	/* 0.0001% = 1 ppm */
				return -EINVAL;
			frac = frac * 10 + (*p - '0');
			scale *= 10;
		}
		if (scale == 1 || strcmp(p, "%"))
			return -EINVAL;
	}
	if (strcmp(p, "%") == 0) {
		if (whole > 100)
			return -EINVAL;
		whole = whole * 10000 + frac * 10000 / scale;
	} else if (*p && strcmp(p, "ppm")) {
		return -EINVAL;
	}
	if (!whole || whole > ZSIM_PPM)
		return -EINVAL;
	*ppm_ret = (uint32_t)whole;
	return 0;
}

/* A command name ("read", "write", "append", "reset", "open", "close",
 * "finish", "flush"); -EINVAL otherwise (reports are not commands). */
static int parse_op(const char *s)
{
	int op;

	for (op = 0; op < ZDEV_NR_OPS; op++)
		if (op != ZDEV_OP_REPORT &&
		    strcmp(s, zdev_op_name((enum zdev_op)op)) == 0)
			return op;
	return -EINVAL;
}

/* WHAT: an op, a class, CLASS/OP, or "any". */
static int parse_what(const char *s, struct zsim_fault *f)
{
	char cls[16];
	const char *slash = strchr(s, '/');
	int c, op;

	if (strcmp(s, "any") == 0) {
		f->match = ZSIM_MATCH_ANY;
		return 0;
	}
	if (slash) {
		if ((size_t)(slash - s) >= sizeof(cls))
			return -EINVAL;
		memcpy(cls, s, slash - s);
		cls[slash - s] = '\0';
		c = zdev_class_parse(cls);
		op = parse_op(slash + 1);
		if (c < 0 || op < 0)
			return -EINVAL;
		f->match = ZSIM_MATCH_CLASS_OP;
		f->cls = c;
		f->op = op;
		return 0;
	}
	op = parse_op(s);
	if (op >= 0) {
		f->match = ZSIM_MATCH_OP;
		f->op = op;
		return 0;
	}
	c = zdev_class_parse(s);
	if (c < 0)
		return -EINVAL;
	f->match = ZSIM_MATCH_CLASS;
	f->cls = c;
	return 0;
}

int zsim_parse_fault(const char *s, bool is_rate, struct zsim_fault *fault_ret)
{
	const char *colon = strrchr(s, ':');
	char what[32];

	memset(fault_ret, 0, sizeof(*fault_ret));
	if (!colon) {
		if (!is_rate)
			return -EINVAL;
		fault_ret->match = ZSIM_MATCH_ANY;
		return parse_rate(s, &fault_ret->rate_ppm);
	}
	if ((size_t)(colon - s) >= sizeof(what))
		return -EINVAL;
	memcpy(what, s, colon - s);
	what[colon - s] = '\0';
	if (parse_what(what, fault_ret))
		return -EINVAL;
	if (is_rate)
		return parse_rate(colon + 1, &fault_ret->rate_ppm);
	if (zdev_parse_u64(colon + 1, &fault_ret->ordinal) ||
	    !fault_ret->ordinal)
		return -EINVAL;
	return 0;
}

void zsim_trace_csv(struct zsim *sim, FILE *out)
{
	zsim_lock(sim);
	sim->trace = out;
	if (out)
		fprintf(out,
			"seq,class,op,zone,offset,length,result,durability\n");
	zsim_unlock(sim);
}

uint64_t zsim_mem_bytes(const struct zsim *sim)
{
	return sim->mem_bytes;
}
