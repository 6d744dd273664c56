// SPDX-License-Identifier: MIT
/*
 * zcow dev add|list: the devices of a file system (docs/devices.md).
 *
 * FS_DEVS names every device of the file system (one spec, or specs
 * joined by '+', any order: docs/device-spec.md, "Several devices").
 * `dev list` prints one line per device, in devid order:
 *
 *   devid N size BYTES used BYTES groups N spec SPEC
 *
 * size is the device's size in the file system, used the bytes of its
 * block groups (device extents), groups their number, spec the spec it is
 * open on (the last field: it runs to the end of the line).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zcow.h"

static const char dev_usage[] =
	"usage: zcow dev add FS_DEVS NEWDEV [--force]\n"
	"       zcow dev list FS_DEVS\n"
	"  FS_DEVS  every device of the file system: DEV or DEV+DEV+... (any order)\n"
	"  add      reset NEWDEV's zones and add it to the file system (the next\n"
	"           devid; new block groups may go there at once); prints the\n"
	"           device list to mount it with from now on; a NEWDEV holding\n"
	"           a zcow or btrfs superblock is refused without --force\n"
	"  list     one line per device, in devid order:\n"
	"           devid N size BYTES used BYTES groups N spec SPEC\n"
	"           (used: bytes in block groups; groups: their number)\n";

static int dev_list(const char *fs_devs)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_dev_info di;
	struct zcow_fs *fs = NULL;
	struct zcow_devs devs;
	unsigned int i;
	int ret, status = 0;

	ret = open_devs("dev list", fs_devs, &devs);
	if (ret)
		return ret;
	ret = mount_devs("dev list", &devs, &ro, &fs);
	if (ret) {
		fprintf(stderr, "zcow dev list: mount %s: %s\n", fs_devs,
			strerror(-ret));
		return close_devs(&devs, 1);
	}
	for (i = 0; i < zcow_fs_nr_devices(fs); i++) {
		ret = zcow_fs_device_info(fs, i, &di);
		if (ret) {
			fprintf(stderr, "zcow dev list: device %u: %s\n", i,
				strerror(-ret));
			status = 1;
			break;
		}
		printf("devid %" PRIu64 " size %" PRIu64 " used %" PRIu64
		       " groups %" PRIu64 " spec %s\n",
		       di.devid, di.total_bytes, di.bytes_used, di.nr_groups,
		       di.spec);
	}
	ret = zcow_unmount(fs);
	if (ret) {
		fprintf(stderr, "zcow dev list: unmount: %s\n", strerror(-ret));
		status = 1;
	}
	return close_devs(&devs, status);
}

/*
 * Whether "@fs_devs+@new_spec" names @nr + 1 devices: a spec holding '+'
 * cannot be in a list, so a file system with such a device could not be
 * named once it has two (docs/device-spec.md).
 */
static bool is_listable(const char *fs_devs, const char *new_spec,
			unsigned int nr)
{
	struct zdevs_list *l = malloc(sizeof(*l));
	char err[512], *joined = NULL;
	bool ok;

	ok = l && asprintf(&joined, "%s+%s", fs_devs, new_spec) >= 0 &&
	     !zdevs_parse(joined, l, err, sizeof(err)) && l->nr == nr + 1;
	free(joined);
	free(l);
	return ok;
}

static int dev_add(const char *fs_devs, const char *new_spec, bool force)
{
	struct zcow_dev_info di = { 0 };
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	struct zcow_devs devs;
	int ret, status = 1;

	ret = open_devs("dev add", fs_devs, &devs);
	if (ret)
		return ret;
	if (!is_listable(fs_devs, new_spec, devs.nr)) {
		fprintf(stderr, "zcow dev add: '%s+%s' would not name the file system's devices: a spec holding '+' cannot be in a device list\n",
			fs_devs, new_spec);
		return close_devs(&devs, 2);
	}
	ret = check_new_image("dev add", &devs, new_spec);
	if (ret)
		return close_devs(&devs, ret);
	ret = open_dev("dev add", new_spec, &dev);
	if (!ret)
		ret = check_new_dev("dev add", &devs, dev);
	if (!ret)
		ret = check_blank_dev("dev add", dev, force);
	if (ret) {
		status = dev ? close_dev(dev, ret) : ret;
		return close_devs(&devs, status);
	}
	ret = mount_devs("dev add", &devs, NULL, &fs);
	if (ret) {
		fprintf(stderr, "zcow dev add: mount %s: %s\n", fs_devs,
			strerror(-ret));
		goto out;
	}
	ret = zcow_dev_add(fs, dev);
	if (ret)
		fprintf(stderr, "zcow dev add: %s: %s\n", new_spec,
			strerror(-ret));
	else
		ret = zcow_fs_device_info(fs, zcow_fs_nr_devices(fs) - 1, &di);
	if (!ret)
		status = 0;
	/* the device item is committed already: the unmount adds nothing */
	ret = zcow_unmount(fs);
	if (ret) {
		fprintf(stderr, "zcow dev add: unmount: %s\n", strerror(-ret));
		status = 1;
	}
out:
	/* success only once every device (an image: its file) is saved */
	status = close_dev(dev, status);
	status = close_devs(&devs, status);
	if (!status)
		printf("added %s as devid %" PRIu64 "\ndevices: %s+%s\n",
		       new_spec, di.devid, fs_devs, new_spec);
	return status;
}

int cmd_dev(int argc, char **argv)
{
	if (argc >= 2 && is_help(argv[1])) {
		fputs(dev_usage, stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "list") && !is_help(argv[2]))
		return dev_list(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "add") && !is_help(argv[2]))
		return dev_add(argv[2], argv[3], false);
	if (argc == 5 && !strcmp(argv[1], "add") && !is_help(argv[2]) &&
	    !strcmp(argv[4], "--force"))
		return dev_add(argv[2], argv[3], true);
	if (argc >= 3 && is_help(argv[2])) {
		fputs(dev_usage, stdout);
		return 0;
	}
	fputs(dev_usage, stderr);
	return 2;
}
