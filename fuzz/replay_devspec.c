// SPDX-License-Identifier: MIT
/*
 * fuzz: the device-spec harness: zdev_open() on arbitrary spec strings.
 *
 * The input is one spec string.  It is opened in a private temporary
 * directory (the entry changes into it and back), so "file:NAME" and
 * "sim:image=NAME" create their files there; the directory is emptied
 * after each input.  Specs holding a '/' are skipped: they would name
 * files elsewhere or real devices (/dev/...).  An opened device reports
 * its zones, reads its first block and is closed.
 *
 * Oracle: an opened device has a geometry the device layer can use
 * (power-of-two zone size, capacity within the zone, whole zones).
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zdev.h"

static char sandbox[64];

static int sandbox_dir(void)
{
	if (sandbox[0])
		return 0;
	snprintf(sandbox, sizeof(sandbox), "/tmp/zfuzz-devspec-XXXXXX");
	if (!mkdtemp(sandbox)) {
		sandbox[0] = '\0';
		return -errno;
	}
	return 0;
}

static void empty_sandbox(void)
{
	DIR *d = opendir(".");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(e->d_name);
	closedir(d);
}

static int check_dev(struct zdev *dev, char *msg)
{
	const struct zdev_info *in = &dev->info;
	struct zdev_zone zones[16];
	unsigned int nr = 16;
	void *buf;

	if (!in->zone_size || (in->zone_size & (in->zone_size - 1)) ||
	    in->zone_capacity > in->zone_size || !in->nr_zones ||
	    in->size != in->nr_zones * in->zone_size ||
	    in->nr_conv > in->nr_zones || !in->lba_size) {
		snprintf(msg, ZFUZZ_MSG_LEN,
			 "'%s' opened with a bad geometry: zone_size %llu "
			 "cap %llu zones %llu conv %llu size %llu lba %u",
			 dev->spec, (unsigned long long)in->zone_size,
			 (unsigned long long)in->zone_capacity,
			 (unsigned long long)in->nr_zones,
			 (unsigned long long)in->nr_conv,
			 (unsigned long long)in->size, in->lba_size);
		return 1;
	}
	zdev_report(dev, 0, zones, &nr);
	buf = aligned_alloc(4096, in->lba_size < 4096 ? 4096 : in->lba_size);
	if (buf) {
		zdev_read(dev, buf, in->lba_size, 0, ZDEV_CLASS_OTHER);
		free(buf);
	}
	return 0;
}

int zfuzz_devspec_one(const uint8_t *data, size_t size, char *msg)
{
	struct zdev *dev = NULL;
	char *spec;
	int cwd, ret, failed = 0;

	msg[0] = '\0';
	zfuzz_init();
	if (memchr(data, '/', size))
		return 0;
	ret = sandbox_dir();
	if (ret)
		return ret;
	spec = malloc(size + 1);
	if (!spec)
		return -ENOMEM;
	memcpy(spec, data, size);
	spec[size] = '\0';
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || chdir(sandbox)) {
		ret = -errno;
		goto out;
	}
	if (!zdev_open(spec, &dev)) {
		failed = check_dev(dev, msg);
		zdev_close(dev);
	}
	empty_sandbox();
	if (fchdir(cwd))
		ret = -errno;
out:
	if (cwd >= 0)
		close(cwd);
	free(spec);
	return ret ? ret : failed;
}
