// SPDX-License-Identifier: MIT
/*
 * zcow crash SCENARIO [--quick] [--results DIR] [--no-results] [--max N]
 *	[--treelog on|off|both] [--replay-cuts off|log|every] [--btrfs-check N]
 *	[--ops FILE] [--sample N]
 * zcow crash --ops FILE [options]
 * zcow crash --repro 'LINE'
 * (harness/crash.h, docs/crash.md).
 */
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
		"                  [--ops FILE] [--sample N]\n"
		"       zcow crash --ops FILE [the options above]\n"
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
		"Prints a table and a repro: line per violation; exit 1 on any,\n"
		"2 on a bad scenario or option or when the campaign cannot run\n"
		"(the error on stderr).\n");
}

int cmd_crash(int argc, char **argv)
{
	struct zcrash_opts o = { 0 };
	struct zcrash_summary sum;
	const char *scenario = NULL;
	int i, ret;

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
			char *end;

			o.btrfs_check = strtoull(argv[++i], &end, 10);
			if (!o.btrfs_check || *end || argv[i][0] == '-') {
				fprintf(stderr, "zcow crash: --btrfs-check '%s': a number of states >= 1 (every Nth state is checked)\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			o.ops = argv[++i];
		} else if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
			char *end;

			o.sample = strtoull(argv[++i], &end, 10);
			if (!o.sample || *end || argv[i][0] == '-') {
				fprintf(stderr, "zcow crash: --sample '%s': a number of crash points >= 1\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
			o.max_cases = strtoull(argv[++i], NULL, 0);
		} else if (argv[i][0] != '-' && !scenario) {
			scenario = argv[i];
		} else {
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
