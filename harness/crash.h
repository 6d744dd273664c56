/* SPDX-License-Identifier: MIT */
/*
 * zcrash: crash-consistency campaigns (docs/crash.md).
 *
 * A campaign is a scenario file (configs/crash-*.scenario) naming a device,
 * a workload (the fio job it includes, or a built-in generator), crash
 * points, loss policies and seeds.  zcrash runs each workload once uncut
 * on the simulator to count its persist points and to record what was
 * acknowledged (an in-memory model of the namespace and file contents at
 * every commit, and every state each path had), then for every (crash
 * point x loss policy x seed) replays the workload on a fresh simulated
 * device up to the cut, power-cycles, mounts and runs the oracles.  A
 * campaign runs with the tree-log off (every fsync a full commit: the
 * recovered state is one commit's), on (fsync writes the log: the last
 * commit plus the fsynced inodes), or both, and may cut the recovery
 * mount again at every persist point it issues.
 *
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_CRASH_H
#define ZCOW_CRASH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The oracles (docs/crash.md); index 0 is unused.  4 and 5 hold with
 * treelog=off (the recovered state is one commit's), 7 and 8 with
 * treelog=on (the last commit plus what the log holds); 9 in fault
 * campaigns only, 10 in device-replace campaigns only, 11 on the states
 * --btrfs-check picks; the others in both modes.
 */
enum zcrash_oracle {
	ZCRASH_OK,
	ZCRASH_MOUNT,		/* 1: mount succeeds, the fs stays writable */
	ZCRASH_CHECK,		/* 2: zcow_check finds nothing, twice */
	ZCRASH_GEN,		/* 3: sb generation >= last acknowledged */
	ZCRASH_ACKED,		/* 4: acknowledged data and namespace */
	ZCRASH_ATOMIC,		/* 5: unsynced data old or new per block */
	ZCRASH_DEVICE,		/* 6: device trace (wp, resets) */
	ZCRASH_FSYNC,		/* 7: what each acked fsync/sync persisted */
	ZCRASH_GARBAGE,		/* 8: every path and file a past state */
	ZCRASH_REPORTED,	/* 9: workload=faults: what the ops that
				 * succeeded wrote reads back, or an error */
	ZCRASH_REPLACE,		/* 10: workload=replace: finished on the
				 * target or cancelled on the source */
	ZCRASH_BTRFS,		/* 11: --btrfs-check: btrfs check --readonly
				 * is clean on the state and its recovery */
	ZCRASH_NR_ORACLES
};

/* Tree-log modes (a mask): which mounts a campaign runs. */
#define ZCRASH_TREELOG_OFF	(1u << 0)	/* treelog=off */
#define ZCRASH_TREELOG_ON	(1u << 1)	/* treelog=on */
#define ZCRASH_TREELOG_BOTH	(ZCRASH_TREELOG_OFF | ZCRASH_TREELOG_ON)

struct zcrash_opts {
	bool quick;		/* the campaign's quick variant */
	bool is_quiet;		/* no table, no repro lines on stdout */
	bool no_results;	/* write no results folder */
	const char *results;	/* parent of the results folder; NULL:
				 * the scenario's or "results" */
	const char *repro;	/* run only this repro line */
	/* --ops FILE: the workload is this recorded-operations file
	 * (workload=ops); with no scenario, the campaign takes an ops
	 * campaign's defaults (docs/crash.md); NULL = the scenario's */
	const char *ops;
	/* --sample N: the campaign's crash points replaced by N persist
	 * points drawn with the scenario's seed (random:count=N) and the
	 * end; 0 = the scenario's points */
	uint64_t sample;
	uint64_t max_cases;	/* 0 = all */
	const char *treelog;	/* "on", "off", "both"; NULL = the scenario's */
	const char *replay_cuts; /* "off", "log", "every"; NULL = the
				  * scenario's */
	/* Oracle 11 on every Nth state (the 1st, the N+1th, ... of the
	 * campaign, recovery cuts included): btrfs check --readonly on the
	 * crash state and on its recovery; 0 = none.  The device must be
	 * emulated zones of 256 MiB (emulated=on; -EINVAL otherwise). */
	uint64_t btrfs_check;
	/* TEST-ONLY: every mount of the campaign breaks this ordering rule
	 * (enum zcow_mutation, include/zcow.h), to prove the oracles catch
	 * it; 0 = none.  No command sets it. */
	int mutation;
	/* --shard I/N: run the I-th of N disjoint parts of the campaign
	 * (1 <= I <= N): the states whose place among the campaign's
	 * uncut-recovery states, counted from 0 in the order they run, is
	 * I-1 modulo N, each with its recovery cuts (docs/crash.md,
	 * Shards); 0/0 = the whole campaign.  The results folder gets a
	 * shard.json for zcow crash --merge. */
	uint64_t shard_i, shard_n;
};

struct zcrash_summary {
	uint64_t nr_workloads;
	uint64_t nr_points;	/* crash points (per workload, summed) */
	uint64_t tried;		/* crash states checked */
	uint64_t passed;
	uint64_t violations;	/* cases with at least one violation */
	uint64_t by_oracle[ZCRASH_NR_ORACLES];
	uint64_t tried_treelog[2];	/* states per mode: [0] off, [1] on */
	uint64_t violations_treelog[2];
	uint64_t tried_replay;	/* of tried: recovery mount cut again */
	/* of tried: the device image an earlier state of its crash point
	 * left (equal loss digests), its verdict reused */
	uint64_t tried_same;
	/* --btrfs-check: states checked, images btrfs check read (the
	 * crash state and the recovered one) */
	uint64_t btrfs_states, btrfs_images;
	/* workload=faults (0 otherwise), summed over the states tried */
	uint64_t nr_injected;	/* commands failed by an injected fault */
	uint64_t nr_zone_fails;	/* zones turned read-only or offline */
	uint64_t nr_faulted;	/* states with a fault that fired */
	uint64_t nr_errors;	/* ops that returned an error to the caller */
	/* workload=replace (0 otherwise): states whose fs was on the
	 * target (the replace finished), the others on the source */
	uint64_t nr_on_target;
	uint64_t nr_degraded;	/* states with an offline zone whose
				 * acknowledged data read back with an error
				 * or did not mount (the device lost it) */
	/* The uncut runs' operations (OP_MARK not counted), by result:
	 * a campaign whose operations fail tests a file system that
	 * refuses them. */
	uint64_t nr_ops, nr_ops_ok, nr_ops_enospc;
	uint64_t nr_ops_namespace;	/* ENOENT, EEXIST, ENOTEMPTY, ENOTDIR,
					 * EISDIR: by the workload's design */
	uint64_t nr_ops_other;
	uint64_t nr_ops_undeclared;	/* failures may_fail= does not allow:
					 * the campaign fails */
	double seconds;
	char first_repro[512];	/* the first violation's repro line */
	char dir[512];		/* results folder ("" if none) */
};

/*
 * What the table and crash.json's counts say about a campaign besides
 * its summary: the settings they print.
 */
struct zcrash_head {
	char name[64];		/* the campaign's name */
	bool quick;
	unsigned int treelog;	/* ZCRASH_TREELOG_* mask */
	int replay_cuts;	/* 0 off, 1 log, 2 every */
	int nr_loss;
	unsigned int nr_seeds;
	char workload[16];
	uint64_t btrfs_every;	/* --btrfs-check N; 0 = none */
	uint64_t shard_i, shard_n;	/* 0/0: not a shard */
};

/* The campaign's table on stdout (and "results: DIR" when @dir). */
void zcrash_print_table(const struct zcrash_head *h,
			const struct zcrash_summary *sum, const char *dir);
/* crash.json from the end of its violations list to its end. */
void zcrash_json_tail(FILE *js, const struct zcrash_head *h,
		      const struct zcrash_summary *sum, bool has_viol);

/*
 * Run a campaign (or one repro line when opts->repro is set; @scenario
 * may then be NULL, and also when opts->ops names an ops file).  The scenario is read as zcow run reads scenarios
 * (configs/README.md): an unknown key is -EINVAL.  Returns 0 when every
 * case passed, 1 when a violation was found, or -errno (a bad scenario
 * or option, a results folder that cannot be written, -ENOMEM; the error
 * printed to stderr).  The internals: harness/crash_int.h.
 */
int zcrash_run(const char *scenario, const struct zcrash_opts *opts,
	       struct zcrash_summary *sum);

/*
 * zcow crash --merge: the shards' results folders @dirs (each a run of
 * --shard I/N of one campaign, every I once) merged into a new results
 * folder under @parent (NULL: the first shard's parent folder) that
 * holds what the whole campaign's run writes: crash.csv and crash.json
 * in its order, the scenario copies; the violations and the table
 * printed as it prints them.  Returns 0 (no violation), 1 (violations)
 * or -errno: -EINVAL for shards of different campaigns, a shard missing
 * or given twice, or one that did not finish (said on stderr).
 */
int zcrash_merge(char *const *dirs, int nr, const char *parent);

#endif /* ZCOW_CRASH_H */
