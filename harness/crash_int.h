/* SPDX-License-Identifier: MIT */
/*
 * zcrash internals: what the parts of a campaign share (harness/crash.h is
 * the public entry, docs/crash.md the guarantees).
 *
 *   crash_workload.c  the workloads (ops, generators, fault trials) and
 *                     their oracle bookkeeping: the model of the namespace
 *                     and contents, the snapshots at each commit, every
 *                     state a path had, what each fsync/sync promised
 *   crash_oracle.c    the runs on the file system: the uncut run of a
 *                     workload, each crash state (replay, cut, power
 *                     cycle), its recovery and the oracles (verdicts).
 *   crash_btrfs.c     oracle 11: btrfs check --readonly (btrfs-progs)
 *                     on a state's device written as a plain file
 *   crash_replace.c   workload=replace: the replace's target (a second
 *                     device in the source's power domain), the device a
 *                     crash state mounts, and the replace oracle
 *   crash_scenario.c  the scenario: the [zcow] and [crash] keys, read by
 *                     the fio reader (harness/fio.h) as `zcow run` reads
 *                     its scenarios
 *   crash.c           the campaign: workloads x crash points x loss
 *                     policies x seeds, the recovery cuts, repro lines,
 *                     the table, crash.csv and crash.json
 *
 * Functions return 0 or -errno (-ENOMEM when memory runs out: the
 * campaign stops and `zcow crash` says so); none aborts.
 *
 * Who may include this: harness/crash*.c only.
 */
#ifndef ZCOW_CRASH_INT_H
#define ZCOW_CRASH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash.h"
#include "ops_parse.h"
#include "prng.h"
#include "zcow.h"
#include "zcow_super.h"
#include "zdev.h"
#include "zsim.h"

#define BLK 4096u
#define MAX_ENT 256		/* entries a model holds */
#define PATH_LEN 256		/* a path's bytes in the model, NUL included */
#define MAX_POINTS_SPEC 16

/* ---- workload ---------------------------------------------------- */

enum op_kind {
	OP_CREATE, OP_MKDIR, OP_WRITE, OP_TRUNC, OP_RENAME, OP_UNLINK,
	OP_FSYNC, OP_FDATASYNC, OP_SYNC, OP_MARK,
	/* workload=ops: an empty directory removed; a fallocate, which
	 * zoned storage refuses (-EOPNOTSUPP); the attribute calls (the
	 * model keeps no attributes: they change no path's state) */
	OP_RMDIR, OP_FALLOCATE, OP_CHMOD, OP_CHOWN, OP_UTIMENS,
	/* workload=ops: a hard link b of a; a symlink a to value; an
	 * xattr b of a set to value, removed (not judged) */
	OP_LINK, OP_SYMLINK, OP_SETXATTR, OP_REMOVEXATTR,
	/* workload=replace: start (devid in off), one step, finish */
	OP_REPLACE_START, OP_REPLACE_STEP, OP_REPLACE_FINISH,
	/* workload=snapshot: a read-only snapshot of the top level as
	 * a ("/NAME"); the delete of snapshot a */
	OP_SNAPSHOT, OP_SUBVOL_DELETE
};

extern const char *const op_names[];

struct op {
	enum op_kind kind;
	char a[PATH_LEN], b[PATH_LEN];
	uint64_t off, len;	/* write: range; trunc: size in off */
	uint64_t tag;		/* write: content seed */
	unsigned int line;	/* workload=ops: its line in the ops file;
				 * 0 for the generated workloads */
	int expect;		/* workload=ops: the result the uncut run
				 * must give (0; fallocate -EOPNOTSUPP) */
	/* workload=ops: mkdir/create/chmod mode; create/mkdir/chown
	 * owner; rename RENAME_* flags; utimens times ([0] atime) */
	uint32_t mode, uid, gid, flags;
	struct zcow_timespec ts[2];
	/* workload=ops: a symlink's target (NUL-terminated), an xattr's
	 * value; owned by the campaign's parsed ops file */
	const uint8_t *value;
	uint64_t value_len;
	/* write: its content (zcrash_fill() of tag), filled once into the
	 * workload's fill buffer by zcrash_wl_fill(); NULL: filled at each
	 * use */
	const uint8_t *data;
};

/* One fault trial of a workload=faults campaign (armed after the
 * workload's mount, so ordinals count the workload's commands). */
enum ft_kind { FT_NONE, FT_FAIL, FT_RATE, FT_ZONE };

struct ftrial {
	enum ft_kind kind;
	struct zsim_fault f;		/* FT_FAIL, FT_RATE */
	uint64_t seed;			/* FT_RATE: the fault PRNG's seed */
	uint64_t zno, at_cmd;		/* FT_ZONE: zone, before command */
	enum zdev_zone_cond cond;	/* FT_ZONE */
	char name[48];
};

struct wl {
	struct op *ops;
	unsigned int nr;
	uint64_t cap;
	char desc[160];
	const struct ftrial *ft;	/* NULL: no faults */
	int err;		/* -ENOMEM once an op could not be added */
	uint8_t *fill;		/* the writes' contents (op.data), or NULL */
};

static inline uint64_t zcrash_mix64(uint64_t z)
{
	return zcow_mix64(z + ZCOW_GOLDEN64);
}

/* ---- the model --------------------------------------------------- */

struct ent {
	char path[PATH_LEN];
	bool is_dir;
	bool is_symlink;	/* data: its target */
	bool is_subvol;		/* a snapshot's root ("/NAME") */
	uint64_t ino;		/* the model's own number: kept by rename */
	uint8_t *data;		/* the live model's; NULL in a snapshot */
	uint64_t size, cap;
	/* a snapshot's data: block k of BLK bytes (the last up to size)
	 * in blk[k], shared with the previous snapshot where equal; its
	 * own blocks (allocated by this snapshot) marked in own */
	uint8_t **blk;
	uint64_t *own;
	bool is_hashed;		/* hash holds zcrash_ent_hash(): set once
				 * the model is recorded */
	uint64_t hash;
};

struct model {
	struct ent e[MAX_ENT];
	unsigned int nr;
	uint64_t last_ino;
};

/* ---- running a workload ------------------------------------------ */

struct snap {
	uint64_t gen;
	bool exact;		/* taken at a commit that ended an op */
	struct model m;
};

/*
 * A state one path had at an op boundary (treelog=on, oracle 8).  Op
 * boundary b is "after b ops"; the recovered state may only hold states
 * reached by the op in progress at the cut.
 */
struct past {
	char path[PATH_LEN];
	bool is_dir;
	uint64_t ino, size, hash;
	unsigned int first;	/* first op boundary with this state */
};

/*
 * What one acknowledged fsync, fdatasync or sync made durable
 * (treelog=on, oracle 7): @path present (a file with @size and @hash when
 * has_data), or absent (with has_data: absent or not a file with @size
 * and @hash, an earlier name of an fsynced file).  It holds while no later op touched @path
 * (wrote it, renamed or removed it or a directory above it, created it):
 * up to op @void_at, exclusive.
 */
struct oblig {
	unsigned int op;	/* the fsync/fdatasync/sync */
	unsigned int void_at;	/* first later op touching @path; NO_OP */
	bool is_absent;
	bool is_dir;
	bool has_data;
	char path[PATH_LEN];
	uint64_t size, hash;
	uint64_t ino;		/* the model's inode at @path (0: absent) */
};

#define NO_OP UINT32_MAX	/* sentinel: no op (never voided) */

struct rec {			/* the uncut run of one workload */
	int *ret;		/* per op */
	uint64_t *gen_after;	/* fs generation after each op */
	struct snap *snaps;
	unsigned int nr_snaps;
	uint64_t snaps_cap;
	struct past *past;	/* every path state, deduplicated */
	unsigned int nr_past;
	uint64_t past_cap;
	struct oblig *obl;	/* by op, ascending */
	unsigned int nr_obl;
	uint64_t obl_cap;
	uint64_t mount_gen;
	uint64_t persist, mark_persist;
	uint64_t cls[ZDEV_NR_CLASSES];
	uint64_t resets, finishes, flushes, zone_ops;
	uint64_t cmds[ZDEV_NR_CLASSES][ZDEV_NR_OPS];	/* after the mount */
	uint64_t nr_cmds;		/* zsim_nr_commands() after the mount */
	uint64_t nr_zones;
	struct model final;
};

/* may_fail= bits. */
#define ZCRASH_MAY_ENOSPC	1u	/* enospc: ENOSPC */
#define ZCRASH_MAY_NAMESPACE	2u	/* namespace: ENOENT, EEXIST, ... */
#define ZCRASH_MAY_ANY		4u	/* any: every errno (faults) */
#define ZCRASH_MAY_UNSUPPORTED	8u	/* unsupported: EOPNOTSUPP, ENOSYS */

struct camp {
	char path[512], name[64];
	char spec[512];
	char workload[16];
	char results[512];	/* [zcow] results=: parent folder */
	uint64_t seed;
	uint32_t nodesize;
	bool zone_append;	/* [zcow] zone_append= (on) */
	int reclaim;		/* [zcow] reclaim= (the default policy) */
	uint32_t reclaim_threshold;	/* [zcow] reclaim_threshold= */
	uint32_t reclaim_high;		/* [zcow] reclaim_high= */
	int hotcold;			/* [zcow] hotcold= (off) */
	/* fio */
	char rw[16];
	uint64_t bs, size, nrfiles, fsync_every;
	/* generators */
	uint64_t ops, sync_every, ace_len;
	uint64_t hot_writes;	/* reclaim: % of overwrites to its first fifth */
	/* may_fail=: the uncut run's operations allowed to fail
	 * (ZCRASH_MAY_*; default: a name missing or taken, and for
	 * recorded operations also one zcow does not support; the faults
	 * workload: anything); any other failure fails the campaign */
	unsigned int may_fail;
	bool has_may_fail;
	char points[MAX_POINTS_SPEC][64];
	unsigned int nr_points;
	char qpoints[MAX_POINTS_SPEC][64];
	unsigned int nr_qpoints;
	int loss[ZSIM_NR_LOSS], nr_loss, qloss[ZSIM_NR_LOSS], nr_qloss;
	uint64_t seeds[16], qseeds[16];
	unsigned int nr_seeds, nr_qseeds;
	uint64_t qops, qace_len, qworkloads;
	bool quick;
	unsigned int treelog;	/* ZCRASH_TREELOG_* mask */
	int replay_cuts, qreplay_cuts;	/* enum replay_cuts; -1 = unset */
	/* workload=faults: the sweep (docs/crash.md) */
	char fail[MAX_POINTS_SPEC][64];	/* WHAT of fail=WHAT:N, swept */
	unsigned int nr_fail;
	uint64_t fail_step, qfail_step;
	char rates[MAX_POINTS_SPEC][64];	/* fail_rate= values */
	unsigned int nr_rates;
	uint64_t rate_seeds[16], qrate_seeds[16];
	unsigned int nr_rate_seeds, nr_qrate_seeds;
	int zone_conds[2], nr_zone_conds;
	uint64_t zone_points, qzone_points, zone_step, qzone_step;
	struct ftrial *ft;		/* the trials of the current mode */
	uint64_t nr_ft, ft_cap;
	/* workload=ops: the recorded-operations file (resolved against
	 * the scenario's folder), how it was named on the command line
	 * (--ops; "" from the scenario), and its ops (crash_ops.c) */
	char ops_file[512];
	char ops_arg[512];
	struct wl ops_wl;
	struct zops *ops_parsed;	/* the file read: what ops point into */
};

/* Recovery cuts: which crash states get their recovery mount cut again
 * at every persist point it issues (mount, log replay, first commit). */
enum replay_cuts {
	RC_OFF,
	RC_LOG,			/* states whose durable superblock has a log */
	RC_EVERY,		/* every state */
};

extern const char *const rc_names[];


struct cutpt {
	struct zsim_cut cut;
	bool is_end;		/* no cut: power fails after the workload */
	char name[48];
};

struct verdict {
	bool bad[ZCRASH_NR_ORACLES];
	char msg[640];
	uint64_t gen, ack_gen;
	uint64_t nr_recovery_persist;	/* issued by the recovery mount and
					 * its first commit */
	uint64_t nr_injected, nr_zone_fails, nr_errors;	/* faults */
	bool is_degraded;
	bool is_on_target;	/* workload=replace: the fs on the target */
	bool is_btrfs_checked;	/* oracle 11 ran on this state */
	bool is_same_image;	/* an earlier state's image: its verdict */
	unsigned int nr_btrfs_images;	/* images btrfs check read */
};

extern const char *const oracle_names[ZCRASH_NR_ORACLES];

/* ---- crash_workload.c -------------------------------------------- */

/* The 64-bit content of @len bytes written by a write with tag @tag at
 * file offset @off. */
void zcrash_fill(uint8_t *buf, uint64_t len, uint64_t tag, uint64_t off);
/* Content hash of a file state (size included); the same hash of @n
 * bytes in pieces: h = zcrash_hash_begin(n), then h =
 * zcrash_hash_more(h, piece, len) over the pieces in order. */
uint64_t zcrash_hash_bytes(const uint8_t *p, uint64_t n);
uint64_t zcrash_hash_begin(uint64_t n);
uint64_t zcrash_hash_more(uint64_t h, const uint8_t *p, uint64_t len);
/* The hash of a path's state as the oracles compare it: a file's
 * content, a symlink's target (salted: never equal to a file's). */
uint64_t zcrash_state_hash(bool is_symlink, const uint8_t *p, uint64_t n);
struct ent *zcrash_m_find(struct model *m, const char *p);
/* Block @b of @e's data (a live or a snapshot entry): BLK bytes, the
 * last block up to its size. */
const uint8_t *zcrash_ent_blk(const struct ent *e, uint64_t b);
/* @a and @b (entries of one path) hold the same bytes. */
bool zcrash_ent_same_data(const struct ent *a, const struct ent *b);
/* zcrash_state_hash() of @e's data, computed once: only for a model no
 * op changes any more (a recorded run's snapshots and final model). */
uint64_t zcrash_ent_hash(struct ent *e);
/* Apply op @o (that succeeded) to model @m (a write's content: its
 * data, or filled in place).  0, -ENOMEM or -E2BIG (more than MAX_ENT
 * entries). */
int zcrash_m_apply(struct model *m, const struct op *o);
int zcrash_is_sync_op(enum op_kind k);
/* One op against the fs; @tgt: the target of a replace start (NULL
 * without a replace). */
int zcrash_do_op(struct zcow_fs *fs, struct zdev *tgt, const struct op *o,
		 uint8_t *tmp);
/* Op @o changes what lies at @path (or could, had it succeeded). */
bool zcrash_op_touches(const struct op *o, const char *path);
/* The recording of the uncut run (record(), crash_oracle.c): 0 or
 * -ENOMEM/-E2BIG. */
int zcrash_add_snap(struct rec *r, uint64_t gen, bool exact,
		    const struct model *m);
int zcrash_note_past(struct rec *r, const struct op *o, unsigned int b);
int zcrash_note_durable(struct rec *r, const struct op *o, unsigned int i);
void zcrash_void_obligations(const struct wl *w, struct rec *r);
/* Op @i (@o) is about to change the content of an inode: the promises
 * made before it about any name of that inode (hard links) no longer
 * hold from @i on. */
void zcrash_void_inode(struct rec *r, const struct op *o, unsigned int i);
void zcrash_rec_free(struct rec *r);
uint64_t zcrash_max_write_len(const struct wl *w);
/* Append a zeroed op of kind @k, names @a/@b, range @off/@len to @w:
 * the op (its other fields for the caller), or NULL out of memory. */
struct op *zcrash_wl_push(struct wl *w, enum op_kind k, const char *a,
			  const char *b, uint64_t off, uint64_t len);
/* Workload @idx of the campaign into @w (free w->ops): 0 or -ENOMEM. */
int zcrash_make_wl(const struct camp *c, uint64_t idx, struct wl *w);
/*
 * Fill the contents of @w's writes once (op.data), when they total at
 * most ZCRASH_FILL_MAX bytes: every state replays the workload, and
 * filling was a sixth of a campaign's time.  Nothing is cached (the
 * writes fill at each use) when they are larger or memory runs out.
 */
#define ZCRASH_FILL_MAX (256ULL << 20)
void zcrash_wl_fill(struct wl *w);
/* Free @w's ops and fill buffer. */
void zcrash_wl_free(struct wl *w);
uint64_t zcrash_nr_workloads(const struct camp *c);
/* The fault trials of a workload=faults campaign from its fault-free
 * run @r into c->ft: 0 or -ENOMEM. */
int zcrash_build_trials(struct camp *c, const struct rec *r);

/* ---- crash_oracle.c ---------------------------------------------- */

/* The uncut run of @w: counts, the model at every commit, every path
 * state and what each persistence op made durable.  0 or -errno (the
 * message in @err). */
int zcrash_record(const struct camp *c, const struct wl *w,
		  const struct zcow_mount_opts *mo, struct rec *r,
		  uint8_t *tmp, char *err, size_t elen);
/*
 * The device a replay left held at its cut (zsim_cut.hold), checkpointed
 * (zsim_checkpoint()), with what the replay found: the next states of
 * the same point (another loss policy or seed, a recovery cut) restore
 * it and apply their loss instead of replaying the workload.  One per
 * campaign; NULL: every state replays.
 */
struct zcrash_held;
/* NULL when memory runs out (then every state replays). */
struct zcrash_held *zcrash_held_new(void);
/* Close the device kept and free @h (may be NULL). */
void zcrash_held_free(struct zcrash_held *h);
/* One crash state and its verdict (crash_oracle.c, run_case()); @bc
 * (NULL: none) adds oracle 11.  @held (may be NULL) keeps the replay of
 * the point @key names (one key per workload, tree-log mode and point)
 * for the next state of the same key. */
struct zcrash_btrfs;
int zcrash_run_case(struct zcrash_held *held, uint64_t key,
		    const struct camp *c, const struct wl *w,
		    const struct rec *r, const struct cutpt *pt, int loss,
		    uint64_t seed, const struct zcow_mount_opts *mo,
		    uint64_t cut2, uint64_t base_gen, struct zcrash_btrfs *bc,
		    uint8_t *tmp, uint8_t *buf, uint64_t buf_len,
		    struct verdict *v, uint64_t *log_root_ret);

/* ---- crash_btrfs.c ----------------------------------------------- */

/*
 * Oracle 11's checker for campaign @c: its device must be conventional
 * zones of 256 MiB (the emulated zones btrfs-progs assumes for a plain
 * file), and btrfs-progs must run (the clean lines are taken from
 * btrfs check on a mkfs.btrfs file system of the device's size).
 * 0, or -EINVAL (geometry), -ENOENT (btrfs-progs missing), -errno, with
 * the reason in @err.
 */
int zcrash_btrfs_open(const struct camp *c, struct zcrash_btrfs **b_ret,
		      char *err, size_t elen);
void zcrash_btrfs_close(struct zcrash_btrfs *b);
/*
 * btrfs check --readonly on the contents of simulated device @dev (its
 * plain file): 0 clean, 1 a complaint (the exit status and the lines a
 * clean file system does not print, as printed, in @msg), -errno when it
 * could not run.
 */
int zcrash_btrfs_check(struct zcrash_btrfs *b, struct zdev *dev, char *msg,
		       size_t mlen);

/* ---- crash_replace.c --------------------------------------------- */

/*
 * The devices of a run of workload=replace: the source (mkfs'd, the fs's
 * device 1) and the target, linked in one power domain.  After a crash,
 * zcrash_replace_pick() says which of them holds the file system.
 */
struct zcrash_pair {
	struct zdev *src;
	struct zdev *tgt;	/* NULL: not a replace campaign */
	uint8_t fsid[16];	/* of the fs mkfs made on the source */
	/* zcrash_replace_pick(): [0] source, [1] target */
	bool has_sb[2];		/* a valid superblock of this fs */
	uint64_t gen[2];	/* its generation (0: none) */
	bool on_target;		/* the fs lives on the target */
};

/* workload=replace: open the target (the spec of @src, a fresh device)
 * and link it to the power of @src, just mkfs'd; otherwise no target.
 * 0 or -errno. */
int zcrash_replace_open(const struct camp *c, struct zdev *src,
			struct zcrash_pair *p);
/* Close the target (the source is the caller's). */
void zcrash_replace_close(struct zcrash_pair *p);
/* After a power cut and cycle: which device holds the fs.  The target
 * when it has a valid superblock of it newer than the source's (or the
 * source has none), else the source.  Returns the device to mount. */
struct zdev *zcrash_replace_pick(struct zcrash_pair *p);
/*
 * Oracle 10 on a recovered crash state (@fs: the picked device mounted,
 * NULL when the mount failed; @cut_op: the op in progress at the cut,
 * w->nr for none): the replace ran to its end (the fs on the target,
 * state FINISHED, the source no newer fs) or was cancelled with the
 * source intact (state CANCELED, or NEVER_STARTED when the cut came
 * before the start's commit); an acknowledged start or finish is never
 * undone.  Each problem goes to @report.
 */
void zcrash_replace_check(const struct wl *w, const struct zcrash_pair *p,
			  unsigned int cut_op, struct zcow_fs *fs,
			  void (*report)(void *arg, const char *msg),
			  void *arg);

/* ---- crash_ops.c ------------------------------------------------- */

/*
 * workload=ops: read c->ops_file and turn its lines into c->ops_wl (the
 * ops of the campaign's one workload), following its handles and names
 * through the recording.  0; -EINVAL with "FILE:LINE: what" in @err for
 * a malformed file, one inconsistent with itself (a write on a handle
 * not open, a mkdir whose parent is missing, ...) or one that uses a
 * call this core lacks; -errno when it cannot be read; -ENOMEM.
 */
int zcrash_ops_load(struct camp *c, char *err, size_t elen);

/* ---- crash_scenario.c -------------------------------------------- */

int zcrash_parse_treelog(const char *v, unsigned int *mask_ret);
int zcrash_parse_rc(const char *v, int *rc_ret);
/* Read scenario @path into @c (the --quick variant when @quick); @ops
 * (NULL: none) is --ops FILE: the workload is that ops file, and with
 * @path NULL the campaign takes the defaults of an ops campaign
 * (docs/crash.md).  0, -EINVAL with "FILE:LINE: option 'KEY': reason"
 * (or "FILE: ...") in @err, -errno when a file cannot be read, or
 * -ENOMEM.  Free @c's parts with zcrash_camp_free(), even on failure. */
int zcrash_load_camp(struct camp *c, const char *path, const char *ops,
		     bool quick, char *err, size_t elen);
/* Free @c and what it holds (NULL: nothing). */
void zcrash_camp_free(struct camp *c);

#endif /* ZCOW_CRASH_INT_H */
