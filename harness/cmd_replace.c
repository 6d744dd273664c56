// SPDX-License-Identifier: MIT
/*
 * zcow replace: replace a device of a file system by a new one while it
 * stays mounted (seeds 008, 009; docs/devices.md), as btrfs replace start
 * -B does: start, copy step by step with a progress line per step on
 * stderr, finish, and print what it took and the device list to mount
 * the file system with from now on.  --status prints the state the file
 * system recorded of its last replace.
 *
 * Lines (fixed formats; the numbers are zcow_replace_status()'s):
 *   stderr, per step:
 *     replace: groups C/T, bytes copied B, zeroed Z, cloned K
 *   stdout, at the end:
 *     replaced devid N (SPEC) by SPEC: groups C/T, bytes copied B, zeroed Z, cloned K
 *     devices: LIST
 *   stdout, --status:
 *     state STATE, source devid N, cursor L
 * --status mounts read-only and prints what the dev-replace item keeps:
 * the state, the source devid ("-" once no replace runs, as btrfs writes
 * -1) and the cursor (the source offset copied up to).  The counts of a
 * replace are not kept on disk: its own progress lines give them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zcow.h"
#include "zdev.h"

static const char replace_usage[] =
	"usage: zcow replace FS_DEVS SRCDEVID NEWDEV [--step BYTES] [--force]\n"
	"       zcow replace FS_DEVS --status\n"
	"  FS_DEVS   every device of the file system: DEV or DEV+DEV+... (any order)\n"
	"  SRCDEVID  the devid of the device to replace (zcow dev list)\n"
	"  NEWDEV    the new device: not one of the file system's, at least as\n"
	"            large, same zone size and kind; its zones are reset\n"
	"  --step B  copy about B bytes of zone contents per step (default 0:\n"
	"            one block group per step); a progress line per step on stderr\n"
	"  --force   overwrite a NEWDEV that holds a zcow or btrfs superblock\n"
	"            (refused without it)\n"
	"  --status  print the state, source devid and cursor of the file\n"
	"            system's last replace, as its dev-replace item keeps them\n"
	"At the end it prints the device list to mount the file system with:\n"
	"FS_DEVS with the replaced device's spec changed to NEWDEV.\n";

/* "groups C/T, bytes copied B, zeroed Z, cloned K" */
static void print_counts(FILE *out, const struct zcow_replace_status *st)
{
	fprintf(out, "groups %" PRIu64 "/%" PRIu64 ", bytes copied %" PRIu64
		     ", zeroed %" PRIu64 ", cloned %" PRIu64,
		st->nr_copied, st->nr_to_copy, st->bytes_copied,
		st->bytes_zeroed, st->bytes_cloned);
}

static int replace_status(const char *fs_devs)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_replace_status st;
	struct zcow_fs *fs = NULL;
	struct zcow_devs devs;
	int ret;

	ret = open_devs("replace", fs_devs, &devs);
	if (ret)
		return ret;
	ret = mount_devs("replace", &devs, &ro, &fs);
	if (ret) {
		fprintf(stderr, "zcow replace: mount %s: %s\n", fs_devs,
			strerror(-ret));
		return close_devs(&devs, 1);
	}
	zcow_replace_status(fs, &st);
	printf("state %s, source devid ", zcow_replace_state_name(st.state));
	if (st.src_devid == UINT64_MAX)	/* btrfs's "none runs" */
		printf("-");
	else
		printf("%" PRIu64, st.src_devid);
	printf(", cursor %" PRIu64 "\n", st.cursor);
	ret = zcow_unmount(fs);
	if (ret)
		fprintf(stderr, "zcow replace: unmount: %s\n", strerror(-ret));
	return close_devs(&devs, ret ? 1 : 0);
}

/*
 * The device list after the replace: the specs of @devs in the order
 * given, the one at @src changed to @tgt; malloc'd, NULL when it does not
 * name @devs->nr devices (@tgt holds '+', which a list cannot).
 */
static char *new_list(const struct zcow_devs *devs, unsigned int src,
		      const char *tgt)
{
	struct zdevs_list *l = malloc(sizeof(*l));
	size_t len = 1;
	char err[512], *s = NULL;
	unsigned int i;

	if (!l)
		return NULL;
	for (i = 0; i < devs->nr; i++)
		len += strlen(i == src ? tgt : devs->dev[i]->spec) + 1;
	s = malloc(len);
	if (!s)
		goto out;
	s[0] = '\0';
	for (i = 0; i < devs->nr; i++) {
		if (i)
			strcat(s, "+");
		strcat(s, i == src ? tgt : devs->dev[i]->spec);
	}
	if (zdevs_parse(s, l, err, sizeof(err)) || l->nr != devs->nr) {
		free(s);
		s = NULL;
	}
out:
	free(l);
	return s;
}

/* Which of @devs is devid @devid of @fs: its index, or -1 (no such devid;
 * the devids are listed on stderr). */
static int find_source(struct zcow_fs *fs, const struct zcow_devs *devs,
		       uint64_t devid)
{
	struct zcow_dev_info di;
	unsigned int i, k;

	for (i = 0; i < zcow_fs_nr_devices(fs); i++) {
		if (zcow_fs_device_info(fs, i, &di) || di.devid != devid)
			continue;
		for (k = 0; k < devs->nr; k++)
			if (!strcmp(devs->dev[k]->spec, di.spec))
				return (int)k;
	}
	fprintf(stderr, "zcow replace: the file system has no devid %" PRIu64
			" (devids:", devid);
	for (i = 0; i < zcow_fs_nr_devices(fs); i++)
		if (!zcow_fs_device_info(fs, i, &di))
			fprintf(stderr, " %" PRIu64, di.devid);
	fprintf(stderr, ")\n");
	return -1;
}

/* Copy every group, one step at a time; 0 or the -errno of a step. */
static int copy_all(struct zcow_fs *fs, uint64_t step)
{
	struct zcow_replace_status st;
	bool done = false;
	int ret;

	while (!done) {
		ret = zcow_replace_step(fs, step, &done);
		if (ret)
			return ret;
		zcow_replace_status(fs, &st);
		fprintf(stderr, "replace: ");
		print_counts(stderr, &st);
		fprintf(stderr, "\n");
	}
	return 0;
}

static int replace_run(const char *fs_devs, uint64_t src_devid,
		       const char *tgt_spec, uint64_t step, bool force)
{
	struct zcow_replace_status st = { 0 };
	struct zcow_fs *fs = NULL;
	struct zdev *tgt = NULL;
	struct zcow_devs devs;
	char *list = NULL, *src_spec = NULL;
	int ret, src, status = 1;

	ret = open_devs("replace", fs_devs, &devs);
	if (ret)
		return ret;
	ret = check_new_image("replace", &devs, tgt_spec);
	if (ret)
		return close_devs(&devs, ret);
	ret = open_dev("replace", tgt_spec, &tgt);
	if (!ret)
		ret = check_new_dev("replace", &devs, tgt);
	if (!ret)
		ret = check_blank_dev("replace", tgt, force);
	if (ret) {
		status = tgt ? close_dev(tgt, ret) : ret;
		return close_devs(&devs, status);
	}
	ret = mount_devs("replace", &devs, NULL, &fs);
	if (ret) {
		fprintf(stderr, "zcow replace: mount %s: %s\n", fs_devs,
			strerror(-ret));
		goto out;
	}
	src = find_source(fs, &devs, src_devid);
	if (src < 0)
		goto unmount;
	list = new_list(&devs, (unsigned int)src, tgt_spec);
	src_spec = strdup(devs.dev[src]->spec);
	if (!list || !src_spec) {
		fprintf(stderr, "zcow replace: %s\n",
			list ? "out of memory" :
			       "NEWDEV holds '+': the file system's device list could not name it");
		goto unmount;
	}
	ret = zcow_replace_start(fs, src_devid, tgt);
	if (ret) {
		fprintf(stderr, "zcow replace: start: %s\n", strerror(-ret));
		goto unmount;
	}
	ret = copy_all(fs, step);
	if (!ret)
		ret = zcow_replace_finish(fs);
	if (ret) {
		int cret = zcow_replace_cancel(fs);

		fprintf(stderr, "zcow replace: %s; the replace is %s\n",
			strerror(-ret), cret ? "not canceled" : "canceled: "
						"the source stays");
		goto unmount;
	}
	zcow_replace_status(fs, &st);
	status = 0;
unmount:
	ret = zcow_unmount(fs);
	if (ret) {
		fprintf(stderr, "zcow replace: unmount: %s\n", strerror(-ret));
		status = 1;
	}
out:
	/* success only once every device (an image: its file) is saved */
	status = close_dev(tgt, status);
	status = close_devs(&devs, status);
	if (!status) {
		printf("replaced devid %" PRIu64 " (%s) by %s: ", src_devid,
		       src_spec, tgt_spec);
		print_counts(stdout, &st);
		printf("\ndevices: %s\n", list);
	}
	free(list);
	free(src_spec);
	return status;
}

int cmd_replace(int argc, char **argv)
{
	const char *args[3] = { NULL, NULL, NULL };
	bool is_status = false, force = false;
	uint64_t step = 0, devid;
	int i, nr = 0;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(replace_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--status")) {
			is_status = true;
		} else if (!strcmp(argv[i], "--force")) {
			force = true;
		} else if (!strcmp(argv[i], "--step") && i + 1 < argc) {
			if (parse_size_arg("step", argv[++i], &step))
				return 2;
		} else if (argv[i][0] == '-' || nr == 3) {
			fprintf(stderr, "zcow replace: unexpected argument '%s'\n",
				argv[i]);
			fputs(replace_usage, stderr);
			return 2;
		} else {
			args[nr++] = argv[i];
		}
	}
	if (is_status && nr == 1)
		return replace_status(args[0]);
	if (is_status || nr != 3) {
		fputs(replace_usage, stderr);
		return 2;
	}
	if (zdev_parse_u64(args[1], &devid) || !devid) {
		fprintf(stderr, "zcow replace: bad devid '%s' (1, 2, ...: zcow dev list)\n",
			args[1]);
		return 2;
	}
	return replace_run(args[0], devid, args[2], step, force);
}
