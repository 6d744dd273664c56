/* SPDX-License-Identifier: MIT */
/*
 * zsim: the in-process zone simulator.
 *
 * A zdev backend with the zone semantics of an NVMe ZNS namespace as QEMU
 * emulates it and a Linux kernel reports it (docs/device-rules.md; measured
 * rules win over null_blk where they differ), plus what no real device
 * offers a test: a volatile write cache with injectable power cuts and
 * seeded loss policies, fault injection, a command trace, per-rule violation
 * counters, and image files that carry the whole device state between
 * processes.
 *
 * What it is not: a timing model (see sim/ztime.h), or a block-layer
 * emulation (a command that crosses a zone boundary is refused whole, as the
 * device does; the kernel's splitting is not modelled).
 *
 * Who may include this: sim/, harness/, tests/.  Never core/.
 */
#ifndef ZCOW_ZSIM_H
#define ZCOW_ZSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "zdev.h"

/*
 * Limits of a simulated device: beyond what a real zoned device has (the
 * largest SMR disks have ~120,000 zones of 256 MiB, ZNS SSDs zones of up
 * to 2 GiB and appends of a few MiB; zone sizes up to 64 GiB leave room
 * to test btrfs's 8 GiB limit from both sides), and low enough that the
 * per-zone state (about 56 bytes a zone, allocated at open) stays below
 * 64 MiB.
 * Checked before anything is allocated (docs/device-spec.md).
 */
#define ZSIM_MAX_ZONES (1ull << 20)		/* zones */
#define ZSIM_MAX_ZONE_SIZE (64ull << 30)	/* bytes per zone */
#define ZSIM_MAX_DEV_SIZE (1ull << 50)		/* bytes: zones x size */
#define ZSIM_MAX_APPEND_LIMIT (64ull << 20)	/* bytes per append */
#define ZSIM_MAX_LBA (1u << 20)			/* bytes per block */

/*
 * Geometry and behaviour of a simulated device.  A zeroed config is valid:
 * every 0 field takes the default given beside it.
 */
struct zsim_config {
	uint64_t nr_zones;	/* 0 = 64 */
	uint64_t zone_size;	/* bytes, power of two; 0 = 64 MiB */
	uint64_t zone_capacity;	/* bytes <= zone_size; 0 = zone_size */
	uint64_t nr_conv;	/* conventional zones at the start; 0 = none */
	uint32_t max_open;	/* 0 = no limit */
	uint32_t max_active;	/* 0 = no limit */
	uint32_t lba_size;	/* bytes; 0 = 4096 */
	uint64_t max_append;	/* bytes; 0 = 512 KiB */
	uint64_t seed;		/* PRNG seed for loss policies and faults */
	bool no_auto_close;	/* true: QEMU zoned.auto_transition=false */
	bool no_data;		/* true: keep no data (reads return zeros);
				 * for performance runs (spec data=off) */
	bool is_emulated;	/* true: not a zoned device but a plain disk
				 * in emulated zones, as file: (is_zoned
				 * false); every zone conventional (spec
				 * emulated=on) */
};

/* Which zone rule a refused command broke (docs/device-rules.md). */
enum zsim_rule {
	ZSIM_RULE_NONE,
	ZSIM_RULE_WRITE_NOT_AT_WP,	/* -EIO (Zone Invalid Write) */
	ZSIM_RULE_WRITE_BOUNDARY,	/* -EIO past capacity or zone end */
	ZSIM_RULE_WRITE_FULL,		/* -EIO (Zone Is Full) */
	ZSIM_RULE_WRITE_READONLY,	/* -EIO */
	ZSIM_RULE_ZONE_OFFLINE,		/* -EIO, any command on it */
	ZSIM_RULE_TOO_MANY_OPEN,	/* -ETOOMANYREFS */
	ZSIM_RULE_TOO_MANY_ACTIVE,	/* -EOVERFLOW */
	ZSIM_RULE_APPEND_NOT_ZONE_START,/* -EINVAL */
	ZSIM_RULE_APPEND_TOO_LARGE,	/* -EINVAL (above max_append) */
	ZSIM_RULE_APPEND_CONV,		/* -EINVAL (append to a conventional zone) */
	ZSIM_RULE_BAD_TRANSITION,	/* -EIO (Invalid Zone State Transition) */
	ZSIM_RULE_READ_BOUNDARY,	/* -EIO read across a zone end */
	ZSIM_RULE_POWER_OFF,		/* -EIO after a power cut */
	ZSIM_RULE_INJECTED,		/* -EIO injected fault */
	ZSIM_NR_RULES
};

/* What survives of the volatile (unflushed, non-FUA) writes at a cut. */
enum zsim_loss {
	ZSIM_LOSS_KEEP,		/* everything written survives */
	ZSIM_LOSS_DROP,		/* every unflushed write is lost */
	ZSIM_LOSS_PREFIX,	/* each sequential zone keeps a random
				 * lba-granular prefix of its unflushed tail;
				 * conventional zones as SUBSET */
	ZSIM_LOSS_TORN,		/* all but the last write survive; the last
				 * keeps a random strict prefix of its blocks
				 * (seq: the wp ends after that prefix; conv:
				 * the rest reads as nonzero garbage) */
	ZSIM_LOSS_SUBSET,	/* conventional: any subset of the unflushed
				 * writes; sequential zones as PREFIX */
	ZSIM_NR_LOSS
};

/* Where a named crash point cuts relative to its command. */
enum zsim_when {
	ZSIM_CUT_BEFORE,	/* the command never reaches the device */
	ZSIM_CUT_AFTER,		/* the command completes, then power fails */
	ZSIM_CUT_TORN,		/* power fails during it: a prefix lands */
};

/*
 * Which commands a named crash point counts.  A class kind counts the
 * write and append commands of that class; the others count commands of
 * that kind whatever their class.
 */
enum zsim_cut_kind {
	ZSIM_CUT_NONE,
	ZSIM_CUT_PERSIST,	/* every persist point: write, append, zone
				 * op, flush (after=N: cut after the Nth) */
	ZSIM_CUT_CLASS,		/* writes/appends of @cls */
	ZSIM_CUT_RESET,
	ZSIM_CUT_FINISH,
	ZSIM_CUT_ZONE_OP,	/* any zone management command */
	ZSIM_CUT_FLUSH,
};

struct zsim_cut {
	enum zsim_cut_kind kind;
	enum zdev_class cls;	/* for ZSIM_CUT_CLASS */
	uint64_t ordinal;	/* 1-based: the Nth matching command */
	enum zsim_when when;
	enum zsim_loss loss;
	uint64_t seed;		/* seeds the loss policy */
	/*
	 * When the point fires, the device goes down (commands fail) with
	 * its volatile writes held, @loss not applied: for
	 * zsim_checkpoint(), then zsim_cut_now() with a loss (below).
	 */
	bool hold;
};

/*
 * Fault injection: a matching command fails with -EIO before it reaches
 * the media (nothing of it lands), counted as ZSIM_RULE_INJECTED.
 */
enum zsim_fault_match {
	ZSIM_MATCH_OP,		/* commands of @op, any class */
	ZSIM_MATCH_CLASS,	/* commands of class @cls except reads:
				 * writes, appends, zone commands, flushes */
	ZSIM_MATCH_CLASS_OP,	/* commands of @op with class @cls */
	ZSIM_MATCH_ANY,		/* every command (a report is none) */
};

struct zsim_fault {
	enum zdev_op op;	/* ZDEV_OP_READ / WRITE / APPEND / ... */
	uint64_t ordinal;	/* fail the Nth matching command (1-based);
				 * 0 = use @rate_ppm instead */
	uint32_t rate_ppm;	/* fail this many per million, seeded by
				 * the config's seed */
	enum zsim_fault_match match;	/* 0: by @op */
	enum zdev_class cls;	/* for ZSIM_MATCH_CLASS[_OP] */
};

#define ZSIM_PPM 1000000u	/* rate_ppm of a command that always fails */

struct zsim;

/* The registered "sim:" backend (spec keys in docs/device-spec.md). */
extern const struct zdev_backend zsim_backend;

/*
 * Create an in-memory simulated device.  Returns 0, or -EINVAL for a bad
 * geometry (zone size not a power of two, capacity > size, lba size not a
 * power of two >= 512, capacity or max_append not lba-aligned, nr_conv >
 * nr_zones), or -ENOMEM.
 */
int zsim_create(const struct zsim_config *cfg, struct zdev **dev_ret);

/* The simulator behind @dev, or NULL if @dev is not simulated. */
struct zsim *zsim_from_dev(struct zdev *dev);

/* Rule counters. */
enum zsim_rule zsim_last_violation(const struct zsim *sim);
uint64_t zsim_nr_violations(const struct zsim *sim, enum zsim_rule rule);
const char *zsim_rule_name(enum zsim_rule rule);

/*
 * Power.  A device is in a power domain, alone unless linked: the armed
 * crash point, the persist count and a power cut belong to the domain.
 */
/* Arm @cut on the domain of @sim (a ZSIM_CUT_NONE cut disarms it): its
 * ordinal counts the commands of every device of the domain. */
int zsim_arm_cut(struct zsim *sim, const struct zsim_cut *cut);
/* Cut power now, applying @loss, on every device of the domain of @sim.
 * Returns 0. */
int zsim_cut_now(struct zsim *sim, enum zsim_loss loss, uint64_t seed);
bool zsim_is_cut(const struct zsim *sim);
/* Bring a cut device back: commands work again, wps are what survived.
 * One device: the others of its domain stay cut until cycled. */
int zsim_power_cycle(struct zsim *sim);
/* Persist points (write, append, zone op, flush) completed so far by
 * every device of the domain of @sim, each since its open. */
uint64_t zsim_nr_persist(const struct zsim *sim);

/*
 * Checkpoints: one state, several losses (a crash campaign cuts one
 * replay of its workload under every loss policy and seed).  A device
 * held down (zsim_cut.hold fired, or zsim_hold_now()) keeps its volatile
 * writes: zsim_cut_now() applies a loss to them as the cut would have
 * (the torn command included).  zsim_checkpoint() saves the state of a
 * device alone in its domain; zsim_restore() brings the device back to
 * it, undoing everything since (a loss, a power cycle, writes, resets),
 * as often as wanted: the chunks it held are kept aside, and the bytes of
 * them a later write overwrites are saved first.  Without trace or
 * timing model only (their output is not rewound).
 */
/* The device goes down now, holding its volatile writes.  Returns 0. */
int zsim_hold_now(struct zsim *sim);
/* 0, -EINVAL (linked to another device), -EOPNOTSUPP (trace or timing
 * model), -ENOMEM.  A checkpoint taken before is dropped. */
int zsim_checkpoint(struct zsim *sim);
/* 0, -ENOENT (no checkpoint) or -ENOMEM (the device is then as after
 * zsim_checkpoint_drop(): its state undefined until closed). */
int zsim_restore(struct zsim *sim);
void zsim_checkpoint_drop(struct zsim *sim);
/*
 * A digest of what the last loss applied (a cut, zsim_cut_now()) kept of
 * the volatile writes: every zone's surviving write pointer, every
 * conventional write kept or undone, a torn write's cut and garbage.
 * Two losses applied to one state (a held device restored from its
 * checkpoint) with equal digests leave equal bytes, write pointers and
 * conditions: a campaign recovers such a state once.
 */
uint64_t zsim_loss_digest(const struct zsim *sim);
/*
 * Link @b into the power domain of @a: from now on they lose power at the
 * same instant, as devices on one power supply.  Persist points are
 * counted across the domain in the order the devices were given the
 * commands (one lock orders the commands of every device of a domain),
 * so that a crash point (persist=N, CLASS:N, reset:N...) numbers the
 * union of their commands; an armed point firing on any device cuts every
 * device with the same loss policy, each applying it to its own volatile
 * writes with its own seed (the seed of the cut for the first device of
 * the domain, a seed derived from it and the device's place for each
 * device linked later).  Power cycles stay per device.  A device leaves
 * its domain when it is closed.  Link before the devices take commands
 * from several threads.  Returns 0, -EINVAL (@a is @b, or they share a
 * domain already), -EBUSY (@b is linked to others, or a crash point is
 * armed on either), -ENOSPC (ZSIM_MAX_LINKED devices in the domain).
 */
#define ZSIM_MAX_LINKED	16
int zsim_link_power(struct zsim *a, struct zsim *b);
/*
 * Parse a crash point: "persist=N", "sb:3:before", "meta:10:after",
 * "data:7:torn", "reset:1:before", "finish:2:after", "zone:4:after",
 * "flush:5:after".  Classes: sb, meta, log, data, other.  Loss and seed are
 * left for the caller.  Returns 0 or -EINVAL.
 */
int zsim_parse_cut(const char *s, struct zsim_cut *cut_ret);
const char *zsim_loss_name(enum zsim_loss loss);
/* Returns the policy or -EINVAL. */
int zsim_loss_parse(const char *name);

/*
 * Faults.  zsim_add_fault() returns 0, -EINVAL for a bad fault, -ENOSPC
 * when ZSIM_MAX_FAULTS are armed.  zsim_clear_faults() disarms every fault
 * and every pending zone failure.
 */
#define ZSIM_MAX_FAULTS	16
int zsim_add_fault(struct zsim *sim, const struct zsim_fault *fault);
void zsim_clear_faults(struct zsim *sim);
/* Turn a zone read-only or offline (as a device may on its own). */
int zsim_set_zone_cond(struct zsim *sim, uint64_t zone_start,
		       enum zdev_zone_cond cond);
/*
 * Turn the zone at @zone_start read-only or offline just before command
 * number @at_cmd (zsim_nr_commands() counting; at or below the count so
 * far: now).  Returns 0, -EINVAL, or -ENOSPC (ZSIM_MAX_FAULTS pending).
 */
int zsim_fail_zone_at(struct zsim *sim, uint64_t zone_start,
		      enum zdev_zone_cond cond, uint64_t at_cmd);
/* Restart the fault-rate PRNG from @seed (as the spec key seed= does). */
void zsim_reseed(struct zsim *sim, uint64_t seed);
/* The image file the device is saved to on close, or NULL. */
const char *zsim_image_path(const struct zsim *sim);
/* Was that image made by this open (no file was there to load)? */
bool zsim_image_is_new(const struct zsim *sim);
/* Commands (read, write, append, zone, flush; not report) since open. */
uint64_t zsim_nr_commands(const struct zsim *sim);
/*
 * Parse the value of the spec key fail= ("write:5", "meta:3",
 * "meta/read:2", "any:7"; docs/device-spec.md) into @fault_ret (ordinal
 * set), or, when @is_rate, of fail_rate= ("write:2%", "data:500ppm",
 * "20000", "0.5%": rate_ppm set, WHAT: defaults to any).  Returns 0 or
 * -EINVAL.
 */
int zsim_parse_fault(const char *s, bool is_rate,
		     struct zsim_fault *fault_ret);

/*
 * Trace every command as CSV to @out (NULL stops):
 * seq,class,op,zone,offset,length,result,durability
 */
void zsim_trace_csv(struct zsim *sim, FILE *out);

/* Bytes of data held in memory (sparse storage). */
uint64_t zsim_mem_bytes(const struct zsim *sim);

/*
 * Images: the whole device state (geometry, zones, data, what is durable).
 * A cut device saves as the power-cycled device.  Returns 0 or -errno.
 */
int zsim_save(struct zsim *sim, const char *path);
int zsim_load(const char *path, struct zdev **dev_ret);
/*
 * Write what the device reads back as a plain file at @path (created or
 * truncated): zone n at byte n x zone size, the file as long as the
 * device; a sequential zone's bytes up to its wp, a conventional zone's
 * chunks that were written; holes elsewhere (they read as zeros, as the
 * device does).  This is the `file:PATH,zone_size=...` image of the same
 * geometry (docs/device-spec.md), e.g. for btrfs-progs.  The device must
 * have power (-EIO when cut).  Returns 0 or -errno (the error logged).
 */
int zsim_export_file(struct zsim *sim, const char *path);

/*
 * Import a real device's captured state: DIR/report.txt (`blkzone report`
 * output) and DIR/zones/<n>.bin (zone n from its start to its wp).
 */
int zsim_import(const char *dir, struct zdev **dev_ret);

#endif /* ZCOW_ZSIM_H */
