// SPDX-License-Identifier: MIT
/*
 * zcow run SCENARIO [--set key=value ...] [--results DIR | --dir DIR]
 *          [--quiet]
 * zcow run --list-options
 *
 * Runs one scenario (configs/README.md) and prints the results folder on
 * stdout (its last line), with a one-line summary before it; also when a
 * job failed (exit status 1, the error on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "fio.h"
#include "run.h"

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow run SCENARIO [--set key=value ...] "
		"[--results DIR | --dir DIR] [--quiet]\n"
		"       zcow run --list-options\n"
		"  SCENARIO  a .scenario file (include + [zcow]) or a fio job "
		"file\n"
		"  --set     override a fio option (every job) or a [zcow] "
		"option\n"
		"  --results parent folder of the result folder (default: "
		"the scenario's results=, else results/)\n"
		"  --dir     the result folder itself, created (never one "
		"that exists)\n"
		"  --list-options  the fio job options zcow runs, and those "
		"it accepts and ignores\n"
		"See configs/README.md.\n");
}

int cmd_run(int argc, char **argv)
{
	const char **sets = calloc(argc + 1, sizeof(*sets));
	const char *path = NULL, *results = NULL, *exact = NULL;
	unsigned int nr_sets = 0;
	bool is_quiet = false;
	char *dir = NULL;
	int i, ret;

	if (!sets)
		return 1;
	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			run_usage(stdout);
			free(sets);
			return 0;
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			sets[nr_sets++] = argv[++i];
		} else if (!strncmp(argv[i], "--set=", 6)) {
			sets[nr_sets++] = argv[i] + 6;
		} else if (!strcmp(argv[i], "--results") && i + 1 < argc) {
			results = argv[++i];
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			exact = argv[++i];
		} else if (!strcmp(argv[i], "--list-options")) {
			zfio_list_options(stdout);
			free(sets);
			return 0;
		} else if (!strcmp(argv[i], "--quiet")) {
			is_quiet = true;
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			fprintf(stderr, "zcow run: bad argument '%s'\n",
				argv[i]);
			run_usage(stderr);
			free(sets);
			return 2;
		}
	}
	if (results && exact) {
		fprintf(stderr, "zcow run: --results and --dir: give one\n");
		free(sets);
		return 2;
	}
	if (!path) {
		run_usage(stderr);
		free(sets);
		return 2;
	}
	ret = zrun_scenario_in(path, sets, nr_sets, results, exact, is_quiet,
			       &dir);
	free(sets);
	/* a failed job or verify: its results are written all the same */
	if (dir)
		printf("%s\n", dir);
	free(dir);
	return ret ? 1 : 0;
}
