// SPDX-License-Identifier: MIT
/*
 * zcow crash SCENARIO [--quick] [--results DIR] [--no-results] [--max N]
 *	[--treelog on|off|both] [--replay-cuts off|log|every] [--btrfs-check N]
 *	[--ops FILE] [--sample N] [--shard I/N]
 * zcow crash --merge [--results DIR] SHARD_DIR...
 * zcow crash --ops FILE [options]
 * zcow crash --repro 'LINE'
 * (harness/crash.h, docs/crash.md).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "crash.h"
#include "zlog.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: zcow crash SCENARIO [--quick] [--results DIR] [--no-results]\n"
		"                  [--max N] [--treelog on|off|both]\n"
		"                  [--replay-cuts off|log|every] [--btrfs-check N]\n"
		"                  [--ops FILE] [--sample N] [--shard I/N]\n"
		"       zcow crash --ops FILE [the options above]\n"
		"       zcow crash --merge [--results DIR] SHARD_DIR...\n"
		"       zcow crash --repro 'LINE'\n"
		"Run a crash-consistency campaign (configs/crash-*.scenario): every\n"
		"crash point x loss policy x seed, power cycle, mount, oracles.\n"
		"--treelog and --replay-cuts override the scenario's [zcow] treelog=\n"
		"and [crash] replay_cuts= (cut the recovery mount again at each of\n"
		"its persist points: for states with a log, or every state).\n"
		"--btrfs-check N: on every Nth state also run btrfs check --readonly\n"
		"(btrfs-progs) on the crash state and on its recovery, written as a\n"
		"plain file (the device: sim:...,zone_size=256M,conv=ZONES,emulated=on).\n"
		"--ops FILE: replay a recorded-operations file (zcow fuse --record)\n"
		"as the workload; without a scenario: persist=every end x every loss\n"
		"policy, both tree-log modes (--quick: every 4th point, drop,prefix).\n"
		"--sample N: N crash points drawn with the scenario's seed, and the end.\n"
		"--shard I/N: only the I-th of N disjoint parts of the states (the\n"
		"states whose place in the campaign is I-1 modulo N, each with its\n"
		"recovery cuts), 1 <= I <= N; --merge joins the N shards' results\n"
		"folders into the whole campaign's (under --results DIR, default\n"
		"the first shard's parent folder).\n"
		"Prints a table and a repro: line per violation; exit 1 on any,\n"
		"2 on a bad scenario or option or when the campaign cannot run\n"
		"(the error on stderr).\n");
}

/* A decimal count >= 1 ending at @stop (or the string's end), no sign,
 * no overflow.  0, or -1. */
static int parse_count(const char *s, char stop, uint64_t *v_ret)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v_ret = strtoull(s, &end, 10);
	if (errno || *end != stop || !*v_ret)
		return -1;
	return 0;
}

/* --shard I/N: 1 <= I <= N, decimal.  0, or -1 (said). */
static int parse_shard(const char *s, uint64_t *i_ret, uint64_t *n_ret)
{
	const char *slash = strchr(s, '/');

	if (!slash || parse_count(s, '/', i_ret) ||
	    parse_count(slash + 1, 0, n_ret) || *i_ret > *n_ret)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "zcow crash: --shard '%s': I/N with 1 <= I <= N (the I-th of N shards)\n",
		s);
	return -1;
}

/* Does option @a take a value? */
static bool is_valued(const char *a)
{
	static const char *const v[] = { "--repro", "--results", "--treelog",
					 "--replay-cuts", "--btrfs-check",
					 "--ops", "--sample", "--shard",
					 "--max" };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(a, v[i]))
			return true;
	return false;
}

int cmd_crash(int argc, char **argv)
{
	struct zcrash_opts o = { 0 };
	struct zcrash_summary sum;
	const char *scenario = NULL;
	char **merge = NULL;
	int i, ret, nr_merge = 0;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--quick")) {
			o.quick = true;
		} else if (!strcmp(argv[i], "--repro") && i + 1 < argc) {
			o.repro = argv[++i];
		} else if (!strcmp(argv[i], "--results") && i + 1 < argc) {
			o.results = argv[++i];
		} else if (!strcmp(argv[i], "--no-results")) {
			o.no_results = true;
		} else if (!strcmp(argv[i], "--treelog") && i + 1 < argc) {
			o.treelog = argv[++i];
		} else if (!strcmp(argv[i], "--replay-cuts") && i + 1 < argc) {
			o.replay_cuts = argv[++i];
		} else if (!strcmp(argv[i], "--btrfs-check") && i + 1 < argc) {
			if (parse_count(argv[++i], 0, &o.btrfs_check)) {
				fprintf(stderr, "zcow crash: --btrfs-check '%s': a number of states >= 1 (every Nth state is checked)\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			o.ops = argv[++i];
		} else if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
			if (parse_count(argv[++i], 0, &o.sample)) {
				fprintf(stderr, "zcow crash: --sample '%s': a number of crash points >= 1\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
			if (parse_shard(argv[++i], &o.shard_i, &o.shard_n))
				return 2;
		} else if (!strcmp(argv[i], "--merge")) {
			/* the rest: shard folders (and --results DIR) */
			merge = calloc(argc, sizeof(*merge));
			if (!merge) {
				fprintf(stderr, "zcow crash: out of memory\n");
				return 2;
			}
			for (i++; i < argc; i++) {
				if (!strcmp(argv[i], "--results") && i + 1 < argc &&
				    !o.results)
					o.results = argv[++i];
				else if (argv[i][0] == '-' || scenario || o.ops ||
					 o.repro || o.shard_n)
					break;
				else
					merge[nr_merge++] = argv[i];
			}
			if (i < argc || !nr_merge || scenario || o.ops ||
			    o.repro || o.shard_n || o.quick || o.no_results ||
			    o.treelog || o.replay_cuts || o.btrfs_check ||
			    o.sample || o.max_cases) {
				fprintf(stderr, "zcow crash: --merge takes shard results folders and --results DIR only\n");
				free(merge);
				return 2;
			}
			ret = zcrash_merge(merge, nr_merge, o.results);
			free(merge);
			return ret < 0 ? 2 : ret;
		} else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
			if (parse_count(argv[++i], 0, &o.max_cases)) {
				fprintf(stderr, "zcow crash: --max '%s': a number of states >= 1\n",
					argv[i]);
				return 2;
			}
		} else if (argv[i][0] != '-' && !scenario) {
			scenario = argv[i];
		} else {
			fprintf(stderr, "zcow crash: '%s': %s\n", argv[i],
				argv[i][0] != '-' ? "a second scenario" :
				is_valued(argv[i]) ? "needs a value" :
						     "unknown option");
			usage(stderr);
			return 2;
		}
	}
	if (!scenario && !o.repro && !o.ops) {
		usage(stderr);
		return 2;
	}
	/* power cuts make commits fail on purpose: quiet the core (a repro
	 * run keeps its messages: they explain the violation) */
	zlog_set_level(o.repro ? ZLOG_DEBUG : ZLOG_SILENT);
	ret = zcrash_run(scenario, &o, &sum);
	if (ret < 0)
		return 2;
	return ret ? 1 : 0;
}
