// SPDX-License-Identifier: MIT
/*
 * What the benchmark commands share (harness/cmds.h): a table-driven
 * option parser and a monotonic clock.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "zdev.h"

double zcow_now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int zcow_opt_parse(const char *cmd, const char *help,
		   const struct zcow_opt *opts, int argc, char **argv,
		   const char **dev_ret)
{
	const struct zcow_opt *o;
	int a;

	if (dev_ret)
		*dev_ret = NULL;
	for (a = 1; a < argc; a++) {
		if (is_help(argv[a])) {
			fputs(help, stdout);
			return -1;
		}
		if (argv[a][0] != '-' && dev_ret) {
			if (*dev_ret) {
				fprintf(stderr, "zcow %s: one device only ('%s' and '%s')\n",
					cmd, *dev_ret, argv[a]);
				return 2;
			}
			*dev_ret = argv[a];
			continue;
		}
		for (o = opts; o->name && strcmp(o->name, argv[a]); o++)
			;
		if (!o->name) {
			fprintf(stderr, "zcow %s: unexpected argument '%s' (see --help)\n",
				cmd, argv[a]);
			return 2;
		}
		if (o->kind == ZOPT_FLAG) {
			*(bool *)o->dst = true;
			continue;
		}
		if (a + 1 >= argc) {
			fprintf(stderr, "zcow %s: option %s needs a value\n",
				cmd, o->name);
			return 2;
		}
		a++;
		if (o->kind == ZOPT_STR) {
			*(const char **)o->dst = argv[a];
			continue;
		}
		if (o->kind == ZOPT_SIZE ? zdev_parse_size(argv[a], o->dst) :
					   zdev_parse_u64(argv[a], o->dst)) {
			fprintf(stderr, "zcow %s: bad %s '%s' (expected %s)\n",
				cmd, o->name, argv[a],
				o->kind == ZOPT_SIZE ?
					"bytes, e.g. 4096, 4k, 0x1000, 64M" :
					"a number");
			return 2;
		}
		if (o->is_nonzero && !*(uint64_t *)o->dst) {
			fprintf(stderr, "zcow %s: %s must be above 0\n", cmd,
				o->name);
			return 2;
		}
	}
	if (dev_ret && !*dev_ret) {
		fprintf(stderr, "zcow %s: no device given (see --help)\n", cmd);
		return 2;
	}
	return 0;
}
