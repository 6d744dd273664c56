// SPDX-License-Identifier: MIT
/*
 * zcow: the command-line driver.  `zcow COMMAND --help` for each command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zdev.h"
#include "zlog.h"
#include "zsim.h"

/* Commands live in their own files; weak so a missing one reads "not built". */
#define CMD(name, fn, summary) int fn(int argc, char **argv) __attribute__((weak));
ZCOW_COMMANDS
#undef CMD

static const struct zcow_cmd commands[] = {
#define CMD(name, fn, summary) { name, fn, summary },
	ZCOW_COMMANDS
#undef CMD
};

bool is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int open_dev(const char *spec, struct zdev **dev_ret)
{
	int ret = zdev_open(spec, dev_ret);

	if (ret) {
		fprintf(stderr, "zcow: cannot open device '%s': %s\n", spec,
			strerror(-ret));
		return 1;
	}
	return 0;
}

int close_dev(struct zdev *dev, int status)
{
	int ret = zdev_close(dev);

	if (ret) {
		fprintf(stderr, "zcow: closing the device failed: %s\n",
			strerror(-ret));
		return 1;
	}
	return status;
}

int parse_size_arg(const char *what, const char *s, uint64_t *ret)
{
	if (zdev_parse_size(s, ret)) {
		fprintf(stderr, "zcow: bad %s '%s' (expected bytes, e.g. 4096, 0x1000, 64M)\n",
			what, s);
		return 2;
	}
	return 0;
}

static void usage(FILE *out)
{
	unsigned int i;

	fprintf(out, "usage: zcow COMMAND [ARGS]   (zcow COMMAND --help)\n\n"
		     "Device specs: sim:KEY=VAL,...  file:PATH,zone_size=SIZE  /dev/nvmeXnY\n"
		     "(see docs/device-spec.md)\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].fn)
			fprintf(out, "  %-12s %s\n", commands[i].name,
				commands[i].summary);
}

int main(int argc, char **argv)
{
	unsigned int i;

	zdev_register_backend(&zsim_backend);
	/* ZCOW_LOG=debug: every module's debug messages on stderr. */
	if (getenv("ZCOW_LOG") && !strcmp(getenv("ZCOW_LOG"), "debug"))
		zlog_set_level(ZLOG_DEBUG);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (is_help(argv[1])) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		if (!commands[i].fn) {
			fprintf(stderr, "zcow: command '%s' is not built in\n",
				argv[1]);
			return 2;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "zcow: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
