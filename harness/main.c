// SPDX-License-Identifier: MIT
/*
 * The zcow tool's entry (main) and its command table: `zcow COMMAND
 * --help` for each command.  (Not include/zcow.h, the library's API.)
 */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zcow.h"
#include "zcow_super.h"
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

int open_dev(const char *cmd, const char *spec, struct zdev **dev_ret)
{
	int ret;

	*dev_ret = NULL;
	if (zdevs_is_list(spec)) {
		fprintf(stderr, "zcow %s: '%s' is a list of devices; %s works on one device: give one spec\n",
			cmd, spec, cmd);
		return 2;
	}
	ret = zdev_open(spec, dev_ret);
	if (ret) {
		fprintf(stderr, "zcow: cannot open device '%s': %s\n", spec,
			strerror(-ret));
		return 1;
	}
	return 0;
}

/*
 * The image @dev's open made (a sim: image that was not there), into
 * @buf (PATH_MAX bytes), or "" when it loaded one or has none: a command
 * that fails removes it, so that it leaves nothing behind (a refused
 * mkfs left a small image the corrected one then refused to resize; an
 * `ls` of a missing image made one).
 */
static void new_image(struct zdev *dev, char *buf)
{
	struct zsim *sim = zsim_from_dev(dev);

	buf[0] = '\0';
	if (sim && zsim_image_is_new(sim))
		snprintf(buf, PATH_MAX, "%s", zsim_image_path(sim));
}

int close_dev(struct zdev *dev, int status)
{
	char made[PATH_MAX];
	int ret;

	new_image(dev, made);
	ret = zdev_close(dev);
	if (status && made[0])
		unlink(made);

	if (ret) {
		fprintf(stderr, "zcow: closing the device failed: %s\n",
			strerror(-ret));
		return 1;
	}
	return status;
}

/*
 * The file behind @dev, canonical, into @buf (PATH_MAX bytes): the real
 * path of a sim: image, of a file: PATH or of a /dev/ path, or, for an
 * image not saved yet, of its directory and its name.  False for a device
 * with no file (an in-memory simulator).
 */
static bool backing_file(struct zdev *dev, char *buf)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct zsim *sim = zsim_from_dev(dev);
	const char *p = NULL, *name;
	size_t len = 0;

	if (sim) {
		p = zsim_image_path(sim);
		len = p ? strlen(p) : 0;
	} else if (!strncmp(dev->spec, "file:", 5)) {
		p = dev->spec + 5;
		len = strcspn(p, ",");
	} else if (dev->spec[0] == '/') {
		p = dev->spec;
		len = strcspn(p, "?");
	}
	if (!p || !len || len >= sizeof(path))
		return false;
	memcpy(path, p, len);
	path[len] = '\0';
	if (realpath(path, buf))
		return true;
	/* not there yet: its directory's real path and its name */
	name = strrchr(path, '/');
	if (!name)
		snprintf(dir, sizeof(dir), ".");
	else if (name == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(name - path), path);
	name = name ? name + 1 : path;
	if (!realpath(dir, buf) || strlen(buf) + strlen(name) + 2 > PATH_MAX)
		snprintf(buf, PATH_MAX, "%s", path);
	else
		strcat(strcmp(buf, "/") ? strcat(buf, "/") : buf, name);
	return true;
}

bool is_same_dev(struct zdev *a, struct zdev *b)
{
	char pa[PATH_MAX], pb[PATH_MAX];

	return backing_file(a, pa) && backing_file(b, pb) && !strcmp(pa, pb);
}

int check_new_dev(const char *cmd, const struct zcow_devs *devs,
		  struct zdev *dev)
{
	unsigned int i;

	for (i = 0; i < devs->nr; i++) {
		if (!is_same_dev(devs->dev[i], dev))
			continue;
		fprintf(stderr, "zcow %s: '%s' and '%s' are the same device\n",
			cmd, devs->dev[i]->spec, dev->spec);
		return 2;
	}
	return 0;
}

int check_blank_dev(const char *cmd, struct zdev *dev, bool force)
{
	struct zcow_super_block *sb = malloc(sizeof(*sb));
	struct zcow_sb_copy copy;
	int ret;

	if (!sb) {
		fprintf(stderr, "zcow %s: out of memory\n", cmd);
		return 1;
	}
	ret = force ? -ENOENT : zcow_sb_read_latest(dev, sb, &copy);
	free(sb);
	if (ret == -ENOENT)
		return 0;
	fprintf(stderr, "zcow %s: '%s' holds a %s superblock (a file system it would overwrite); --force to overwrite it\n",
		cmd, dev->spec, ret ? "damaged" : "zcow or btrfs");
	return 2;
}

/*
 * Before @spec is opened: a sim: image that a device of @devs already
 * holds (the simulator would refuse the second open, -EBUSY, as the
 * image of another process): the message of check_new_dev() and 2;
 * else 0.
 */
int check_new_image(const char *cmd, const struct zcow_devs *devs,
		    const char *spec)
{
	const char *p = strncmp(spec, "sim:", 4) ? NULL :
			strstr(spec, "image=");
	char path[PATH_MAX], real[PATH_MAX], other[PATH_MAX];
	size_t len;
	unsigned int i;

	if (!p)
		return 0;
	p += strlen("image=");
	len = strcspn(p, ",");
	if (!len || len >= sizeof(path))
		return 0;
	memcpy(path, p, len);
	path[len] = '\0';
	if (!realpath(path, real))
		return 0;
	for (i = 0; i < devs->nr; i++) {
		if (!backing_file(devs->dev[i], other) || strcmp(real, other))
			continue;
		fprintf(stderr, "zcow %s: '%s' and '%s' are the same device\n",
			cmd, devs->dev[i]->spec, spec);
		return 2;
	}
	return 0;
}

int open_devs(const char *cmd, const char *list, struct zcow_devs *devs)
{
	struct zdevs_list *l = malloc(sizeof(*l));
	char err[512];
	int ret, status = 0;

	devs->nr = 0;
	if (!l) {
		fprintf(stderr, "zcow %s: out of memory\n", cmd);
		return 1;
	}
	if (zdevs_parse(list, l, err, sizeof(err))) {
		fprintf(stderr, "zcow %s: %s\n", cmd, err);
		free(l);
		return 2;
	}
	for (devs->nr = 0; devs->nr < l->nr; devs->nr++) {
		status = check_new_image(cmd, devs, l->spec[devs->nr]);
		if (status) {
			status = close_devs(devs, status);
			break;
		}
		ret = zdev_open(l->spec[devs->nr], &devs->dev[devs->nr]);
		if (ret) {
			fprintf(stderr, "zcow: cannot open device '%s': %s\n",
				l->spec[devs->nr], strerror(-ret));
			status = close_devs(devs, 1);
			break;
		}
		/* two opens of one image would each save their own copy */
		status = check_new_dev(cmd, devs, devs->dev[devs->nr]);
		if (status) {
			devs->nr++;
			status = close_devs(devs, status);
			break;
		}
	}
	free(l);
	return status;
}

int close_devs(struct zcow_devs *devs, int status)
{
	unsigned int i;
	int ret;

	for (i = 0; i < devs->nr; i++) {
		char made[PATH_MAX];

		new_image(devs->dev[i], made);
		ret = zdev_close(devs->dev[i]);
		if (ret) {
			fprintf(stderr, "zcow: closing device '%s' failed: %s\n",
				devs->dev[i]->spec, strerror(-ret));
			status = 1;
		}
		if (status && made[0])
			unlink(made);
		devs->dev[i] = NULL;
	}
	devs->nr = 0;
	return status;
}

/*
 * After -ENODEV: which devids of the file system are not among @devs,
 * from the newest superblock of the devices given (its num_devices; the
 * devids of a file system are 1..num_devices, as mkfs and device add give
 * them).
 */
static void print_missing(const char *cmd, struct zcow_devs *devs)
{
	struct zcow_super_block *sb = malloc(sizeof(*sb));
	uint64_t devid[ZDEVS_MAX], gen = 0, want = 0, d;
	struct zcow_sb_copy copy;
	char given[1024] = "", missing[256] = "";
	size_t n = 0, m = 0;
	unsigned int i;

	if (!sb)
		return;
	for (i = 0; i < devs->nr; i++) {
		devid[i] = 0;
		if (zcow_sb_read_latest(devs->dev[i], sb, &copy))
			continue;
		devid[i] = le64toh(sb->dev_item.devid);
		if (le64toh(sb->generation) >= gen) {
			gen = le64toh(sb->generation);
			want = le64toh(sb->num_devices);
		}
		if (n < sizeof(given))
			n += (size_t)snprintf(given + n, sizeof(given) - n,
					      "%sdevid %llu %s", n ? ", " : "",
					      (unsigned long long)devid[i],
					      devs->dev[i]->spec);
	}
	free(sb);
	for (d = 1; d <= want && m < sizeof(missing); d++) {
		for (i = 0; i < devs->nr && devid[i] != d; i++)
			;
		if (i == devs->nr)
			m += (size_t)snprintf(missing + m, sizeof(missing) - m,
					      "%s%llu", m ? ", " : "",
					      (unsigned long long)d);
	}
	if (m)
		fprintf(stderr, "zcow %s: the file system has %llu devices; missing: devid %s (given: %s)\n",
			cmd, (unsigned long long)want, missing, given);
}

int mount_devs(const char *cmd, struct zcow_devs *devs,
	       const struct zcow_mount_opts *opts, struct zcow_fs **fs_ret)
{
	int ret = zcow_mount_devs(devs->dev, devs->nr, opts, fs_ret);

	if (ret == -ENODEV)
		print_missing(cmd, devs);
	return ret;
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
		     "A file system on several devices: SPEC+SPEC+... (any order)\n"
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
