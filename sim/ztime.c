// SPDX-License-Identifier: MIT
/*
 * ztime: the timing model (see ztime.h and docs/timing.md for the model
 * and where every figure comes from).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "zlog.h"
#include "zsim_int.h"
#include "ztime.h"

#define NS_PER_SEC	1000000000ull
#define US		1000ull
#define MS		1000000ull

/*
 * zn540: Western Digital Ultrastar DC ZN540 (NVMe ZNS, TLC).
 *
 * Calibrated to the raw fio JSON of the CLUSTER'23 characterization
 * (Doekemeijer, Tehrany, Chandrasekaran, Bjorling, Trivedi, "Performance
 * Characterization of NVMe Flash Devices with Zoned Namespaces (ZNS)",
 * arXiv 2310.19094; data: stonet-research/NVMeBenchmarks @01f40f1,
 * data/spdk/zns-a/lbaf2/{append,write}/<bs>bs/<n>zone/<qd>.json, SPDK,
 * 4 KiB LBA format):
 *   write 4 KiB QD1 one zone        85.1K IOPS -> lat 11.75 us
 *   write 16 KiB QD1 one zone       59.4K IOPS -> xfer 13.63 + tail 3.2 us
 *   write 4 KiB QD1 in 4..14 zones  180K..182K -> controller 5.49 us/cmd
 *   append 4 KiB QD1 one zone       65.7K IOPS -> lat 15.22 us
 *   append 16 KiB QD1 one zone      48.3K IOPS -> xfer 13.63 + tail 7.07 us
 *   append 4 KiB QD>=4 one zone     ~132K IOPS -> controller 7.58 us/cmd
 *   write/append >= 8 KiB, >= 4 streams: 1146 MiB/s -> write_bw
 *   appends scale within a zone up to QD ~4 then plateau -> 4 slots
 * Geometry (not part of the profile; the scenario's device spec): 2 GiB
 * zones, 1077 MiB capacity, 14 open/active zones (WD ZN540 product brief;
 * docs/timing.md, "Profiles and sources").
 * Assumed, not measured here (documented as such in docs/timing.md): read
 * latency 68 us and 3.2 GB/s, zone reset 2 ms, finish 2 ms plus padding of
 * the unwritten capacity at write_bw, open/close 10 us, flush 20 us (the
 * device has power-loss protection).
 */
static const struct ztime_profile zn540 = {
	.name = "zn540",
	.nr_ctrl = 1,
	.ctrl_ns = {
		[ZDEV_OP_READ] = 2 * US,
		[ZDEV_OP_WRITE] = 5494,
		[ZDEV_OP_APPEND] = 7576,
		[ZDEV_OP_RESET] = 10 * US,
		[ZDEV_OP_OPEN] = 2 * US,
		[ZDEV_OP_CLOSE] = 2 * US,
		[ZDEV_OP_FINISH] = 10 * US,
		[ZDEV_OP_FLUSH] = 2 * US,
	},
	.lat_ns = {
		[ZDEV_OP_READ] = 68 * US,
		[ZDEV_OP_WRITE] = 11751,
		[ZDEV_OP_APPEND] = 15221,
		[ZDEV_OP_RESET] = 2 * MS,
		[ZDEV_OP_OPEN] = 10 * US,
		[ZDEV_OP_CLOSE] = 10 * US,
		[ZDEV_OP_FINISH] = 2 * MS,
		[ZDEV_OP_FLUSH] = 20 * US,
	},
	.tail_ns = {
		[ZDEV_OP_READ] = 60 * US,
		[ZDEV_OP_WRITE] = 3200,
		[ZDEV_OP_APPEND] = 7070,
	},
	.write_bw = 1146ull << 20,
	.read_bw = 3200000000ull,
	.append_slots = 4,
	.finish_pads = true,
};

/*
 * smr: a 7200 rpm host-managed SMR drive (256 MiB zones in the device
 * spec).  Mechanics from the Western Digital Ultrastar DC HC310 OEM
 * specification (same 7200 rpm platform class; section 4.5.1): average
 * seek 7.4 ms read / 8.2 ms write, single-track seek 0.32 ms write,
 * average rotational latency 4.16 ms.  A command that does not start where
 * the previous one ended pays 8.2 + 4.16 ms (a neighbouring zone: 0.32 +
 * 4.16 ms).  Assumed: 250 MB/s media rate (HM-SMR datasheets list ~255
 * MB/s sustained), 50 us command overhead, zone reset 1 ms (a metadata
 * update on the drive), finish 1 ms.
 */
static const struct ztime_profile smr = {
	.name = "smr",
	.nr_ctrl = 1,
	.ctrl_ns = {
		[ZDEV_OP_READ] = 50 * US,
		[ZDEV_OP_WRITE] = 50 * US,
		[ZDEV_OP_APPEND] = 50 * US,
		[ZDEV_OP_RESET] = 1 * MS,
		[ZDEV_OP_OPEN] = 50 * US,
		[ZDEV_OP_CLOSE] = 50 * US,
		[ZDEV_OP_FINISH] = 1 * MS,
		[ZDEV_OP_FLUSH] = 100 * US,
	},
	.write_bw = 250000000ull,
	.read_bw = 250000000ull,
	.is_rotational = true,
	.seek_ns = 8200 * US + 4160 * US,
	.track_seek_ns = 320 * US + 4160 * US,
};

/* instant: every command completes when it is submitted. */
static const struct ztime_profile instant = {
	.name = "instant",
};

static const struct ztime_profile *const profiles[] = {
	&zn540, &smr, &instant,
};

struct ztime_zone {
	uint64_t write_free;	/* zone write lock released at */
	uint64_t written;	/* bytes since the last reset */
	uint64_t *slots;	/* append slot busy-until times */
};

struct ztime {
	struct ztime_profile prof;
	struct zdev_info info;
	uint64_t nr_zones;
	struct ztime_zone *zones;
	uint64_t *slot_mem;
	uint64_t *ctrl_free;	/* per command processor */
	uint32_t nr_ctrl;
	uint64_t bus_free;
	uint64_t head;		/* rotational: where the last command ended */
	uint64_t now, last_done, max_done, nr_charged;
};

int ztime_profile_get(const char *name, struct ztime_profile *prof_ret)
{
	size_t i;

	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		if (strcmp(profiles[i]->name, name) == 0) {
			*prof_ret = *profiles[i];
			return 0;
		}
	}
	return -EINVAL;
}

const char *ztime_profile_names(void)
{
	return "zn540, smr, instant";
}

int ztime_create(const struct ztime_profile *prof,
		 const struct zdev_info *info, struct ztime **t_ret)
{
	struct ztime *t;
	uint64_t i, nslots;

	if (!info->zone_size || !info->nr_zones)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->prof = *prof;
	t->info = *info;
	t->nr_zones = info->nr_zones;
	t->nr_ctrl = prof->nr_ctrl ? prof->nr_ctrl : 1;
	t->zones = calloc(t->nr_zones, sizeof(*t->zones));
	t->ctrl_free = calloc(t->nr_ctrl, sizeof(*t->ctrl_free));
	nslots = prof->append_slots;
	if (nslots)
		t->slot_mem = calloc(t->nr_zones * nslots, sizeof(uint64_t));
	if (!t->zones || !t->ctrl_free || (nslots && !t->slot_mem)) {
		ztime_destroy(t);
		return -ENOMEM;
	}
	for (i = 0; nslots && i < t->nr_zones; i++)
		t->zones[i].slots = t->slot_mem + i * nslots;
	*t_ret = t;
	return 0;
}

void ztime_destroy(struct ztime *t)
{
	if (!t)
		return;
	free(t->zones);
	free(t->slot_mem);
	free(t->ctrl_free);
	free(t);
}

const struct ztime_profile *ztime_get_profile(const struct ztime *t)
{
	return &t->prof;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Transfer time of @len bytes at @bw bytes/s, rounded up. */
static uint64_t xfer_ns(uint64_t len, uint64_t bw)
{
	if (!bw || !len)
		return 0;
	return (uint64_t)(((unsigned __int128)len * NS_PER_SEC + bw - 1) / bw);
}

/* The command processor that frees first (lowest index on a tie). */
static uint32_t pick_ctrl(const struct ztime *t)
{
	uint32_t i, best = 0;

	for (i = 1; i < t->nr_ctrl; i++)
		if (t->ctrl_free[i] < t->ctrl_free[best])
			best = i;
	return best;
}

static uint32_t pick_slot(const struct ztime *t, const struct ztime_zone *z)
{
	uint32_t i, best = 0;

	for (i = 1; i < t->prof.append_slots; i++)
		if (z->slots[i] < z->slots[best])
			best = i;
	return best;
}

static void zone_op_done(struct ztime *t, enum zdev_op op, uint64_t zno)
{
	struct ztime_zone *z = &t->zones[zno];

	if (op == ZDEV_OP_RESET)
		z->written = 0;
	else if (op == ZDEV_OP_FINISH)
		z->written = t->info.zone_capacity;
}

/* Rotational: everything waits for the one head. */
static uint64_t submit_rotational(struct ztime *t, enum zdev_op op,
				  uint64_t off, uint64_t len, uint64_t now)
{
	const struct ztime_profile *p = &t->prof;
	uint64_t start = max64(now, t->ctrl_free[0]);
	uint64_t cost = p->ctrl_ns[op];
	uint64_t bw = op == ZDEV_OP_READ ? p->read_bw : p->write_bw;

	if (op == ZDEV_OP_READ || op == ZDEV_OP_WRITE ||
	    op == ZDEV_OP_APPEND) {
		if (off != t->head) {
			uint64_t from = t->head / t->info.zone_size;
			uint64_t to = off / t->info.zone_size;
			uint64_t d = from > to ? from - to : to - from;

			cost += d <= 1 ? p->track_seek_ns : p->seek_ns;
		}
		cost += xfer_ns(len, bw);
		t->head = off + len;
	}
	t->ctrl_free[0] = start + cost;
	return start + cost;
}

uint64_t ztime_submit(struct ztime *t, enum zdev_op op, uint64_t off,
		      uint64_t len, uint64_t now)
{
	const struct ztime_profile *p = &t->prof;
	uint64_t zno = off / t->info.zone_size;
	struct ztime_zone *z;
	uint64_t t0 = now, xfer = 0, done, c, slot = 0;
	bool is_data = op == ZDEV_OP_READ || op == ZDEV_OP_WRITE ||
		       op == ZDEV_OP_APPEND;
	bool is_seq;

	if ((unsigned int)op >= ZDEV_NR_OPS || op == ZDEV_OP_REPORT)
		return now;
	if (zno >= t->nr_zones)
		zno = t->nr_zones - 1;
	z = &t->zones[zno];
	is_seq = zno >= t->info.nr_conv;

	if (p->is_rotational) {
		done = submit_rotational(t, op, off, len, now);
		goto account;
	}

	/* Host side: the zone write lock; device side: append slots. */
	if (op == ZDEV_OP_WRITE && is_seq && !p->no_zone_write_lock)
		t0 = max64(t0, z->write_free);
	if (op == ZDEV_OP_APPEND && p->append_slots) {
		slot = pick_slot(t, z);
		t0 = max64(t0, z->slots[slot]);
	}

	if (is_data)
		xfer = xfer_ns(len, op == ZDEV_OP_READ ? p->read_bw :
						       p->write_bw);
	if (op == ZDEV_OP_FINISH && p->finish_pads && len &&
	    z->written < t->info.zone_capacity)
		xfer = xfer_ns(t->info.zone_capacity - z->written,
			       p->write_bw);

	done = t0 + max64(p->lat_ns[op], xfer + p->tail_ns[op]);
	if (p->nr_ctrl && p->ctrl_ns[op]) {
		uint32_t i = pick_ctrl(t);

		c = max64(t0, t->ctrl_free[i]) + p->ctrl_ns[op];
		t->ctrl_free[i] = c;
		done = max64(done, c);
	}
	if (xfer) {
		c = max64(t0, t->bus_free) + xfer;
		t->bus_free = c;
		done = max64(done, c);
	}

	if (op == ZDEV_OP_WRITE && is_seq)
		z->write_free = done;
	if (op == ZDEV_OP_APPEND && p->append_slots)
		z->slots[slot] = done;
account:
	if (op == ZDEV_OP_WRITE || op == ZDEV_OP_APPEND)
		z->written += len;
	else if (op == ZDEV_OP_RESET || op == ZDEV_OP_FINISH) {
		if (len == 0) {	/* all zones */
			uint64_t i;

			for (i = t->info.nr_conv; i < t->nr_zones; i++)
				zone_op_done(t, op, i);
		} else {
			zone_op_done(t, op, zno);
		}
	}
	return done;
}

void ztime_set_now(struct ztime *t, uint64_t now)
{
	t->now = now;
	t->last_done = now;
	t->max_done = now;
}

/*
 * The host's order inside one call (one ztime_set_now()):
 *
 *   cmd cmd cmd | FLUSH | cmd cmd | FLUSH | ...
 *   \ overlap /          \overlap/
 *
 * Commands between two flushes are all submitted at the same time and
 * overlap where the device lets them (zone write lock, append slots,
 * command processors, transfer path).  A flush is a barrier: it is
 * submitted when every command charged before it in the call has
 * completed (the fs waits for its writes before it flushes), and the
 * commands after it are submitted when it completes (the superblock
 * write after the flush of a commit or a log sync, the flush after
 * that).
 */
void ztime_charge(struct ztime *t, enum zdev_op op, uint64_t off,
		  uint64_t len)
{
	/* ORDER: everything charged before the flush has completed. */
	if (op == ZDEV_OP_FLUSH)
		t->now = t->max_done;
	t->last_done = ztime_submit(t, op, off, len, t->now);
	t->max_done = max64(t->max_done, t->last_done);
	/* ORDER: what follows a flush waits for its completion. */
	if (op == ZDEV_OP_FLUSH)
		t->now = t->last_done;
	t->nr_charged++;
}

uint64_t ztime_last_done(const struct ztime *t)
{
	return t->last_done;
}

uint64_t ztime_max_done(const struct ztime *t)
{
	return t->max_done;
}

uint64_t ztime_nr_charged(const struct ztime *t)
{
	return t->nr_charged;
}

int ztime_attach(struct zdev *dev, struct ztime *t)
{
	struct zsim *sim = zsim_from_dev(dev);

	if (!sim)
		return -EINVAL;
	zsim_lock(sim);
	sim->timing = t;
	zsim_unlock(sim);
	return 0;
}
