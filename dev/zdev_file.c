// SPDX-License-Identifier: MIT
/*
 * The emulated-zones backend (seed 002, "zoned mode on non-zoned devices"):
 * a regular file or a non-zoned block device sliced into fake CONVENTIONAL
 * zones of the file system's zone size.
 *
 *   file:PATH,zone_size=64M[,size=1G][,lba=4096][,create]
 *
 * What it is: random-write zones without write pointers, so the core runs
 * its conventional-zone code paths (allocation offset from the last extent,
 * fixed superblock location) on any storage.  What it is not: a zoned
 * device.  There is no zone append (the wrapper gets -EOPNOTSUPP) and every
 * zone management command fails with -EIO, as Linux (null_blk, SCSI ZBC)
 * fails a reset/open/close/finish of a conventional zone.
 *
 * Geometry: device size = the file (or size=) rounded down to whole zones;
 * a trailing partial zone is ignored with a warning.
 *
 * Durability: writes go to the page cache; flush = fdatasync(), a FUA write
 * = pwrite() + fdatasync().
 */
#include "zdev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zlog.h"

#define TAG	    "file"
#define DEFAULT_LBA 4096

struct file_dev {
	int fd;
};

/* The parsed spec. */
struct file_spec {
	char path[4096];
	uint64_t zone_size; /* bytes, required */
	uint64_t size;	    /* bytes, 0 = the whole file */
	uint64_t lba;	    /* bytes */
	bool create;	    /* extend an existing file to size= */
};

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static struct file_dev *priv(struct zdev *dev)
{
	return dev->priv;
}

static int file_report(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		       unsigned int *nr_ret)
{
	uint64_t zs = dev->info.zone_size;
	uint64_t no = from / zs;
	unsigned int i;

	for (i = 0; i < *nr_ret && no < dev->info.nr_zones; i++, no++) {
		zones[i].start = no * zs;
		zones[i].len = zs;
		zones[i].capacity = zs;
		zones[i].wp = zones[i].start + zs;
		zones[i].type = ZDEV_ZONE_CONV;
		zones[i].cond = ZDEV_COND_NOT_WP;
	}
	*nr_ret = i;
	return 0;
}

static int file_read(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
		     enum zdev_class cls)
{
	int ret;

	(void)cls;
	ret = zdev_fd_io(priv(dev)->fd, buf, len, off, false);
	if (ret == -EIO)
		/* The file ended before the device did: it shrank under us. */
		zlog_err(TAG, "short read at %llu: file truncated?",
			 (unsigned long long)off);
	return ret;
}

static int sync_data(struct zdev *dev)
{
	if (fdatasync(priv(dev)->fd))
		return -errno;
	return 0;
}

static int file_write(struct zdev *dev, const void *buf, uint64_t len,
		      uint64_t off, unsigned int flags, enum zdev_class cls)
{
	int ret;

	(void)cls;
	ret = zdev_fd_io(priv(dev)->fd, (void *)buf, len, off, true);
	if (!ret && (flags & ZDEV_WRITE_FUA))
		ret = sync_data(dev);
	return ret;
}

/*
 * Every zone is conventional: reset, open, close and finish are refused
 * with -EIO, as a Linux zoned device refuses them on a conventional zone.
 */
static int file_zone_mgmt(struct zdev *dev, enum zdev_zone_action action,
			  uint64_t start, uint64_t len, enum zdev_class cls)
{
	(void)dev;
	(void)action;
	(void)start;
	(void)len;
	(void)cls;
	return -EIO;
}

static int file_flush(struct zdev *dev)
{
	return sync_data(dev);
}

static int file_close(struct zdev *dev)
{
	struct file_dev *fdev = priv(dev);
	int ret = 0;

	if (close(fdev->fd))
		ret = -errno;
	free(fdev);
	return ret;
}

static const struct zdev_ops file_ops = {
	.report = file_report,
	.read = file_read,
	.write = file_write,
	.append = NULL, /* no zone append on conventional zones */
	.zone_mgmt = file_zone_mgmt,
	.flush = file_flush,
	.close = file_close,
};

static int parse_spec(const char *params, struct file_spec *spec)
{
	const char *comma = strchr(params, ',');
	size_t plen = comma ? (size_t)(comma - params) : strlen(params);
	const char *pos = params + plen;
	char key[32], val[64];
	int ret;

	memset(spec, 0, sizeof(*spec));
	spec->lba = DEFAULT_LBA;
	if (plen == 0) {
		zlog_err(TAG, "missing path (file:PATH,zone_size=SIZE)");
		return -EINVAL;
	}
	if (plen >= sizeof(spec->path)) {
		zlog_err(TAG, "path too long");
		return -EINVAL;
	}
	memcpy(spec->path, params, plen);
	spec->path[plen] = '\0';

	while ((ret = zdev_spec_next(&pos, key, sizeof(key), val,
				     sizeof(val))) > 0) {
		if (strcmp(key, "zone_size") == 0) {
			ret = zdev_parse_size(val, &spec->zone_size);
		} else if (strcmp(key, "size") == 0) {
			ret = zdev_parse_size(val, &spec->size);
		} else if (strcmp(key, "lba") == 0) {
			ret = zdev_parse_size(val, &spec->lba);
		} else if (strcmp(key, "create") == 0) {
			spec->create = true;
			ret = val[0] ? -EINVAL : 0;
		} else {
			zlog_err(TAG,
				 "unknown key '%s' (expected zone_size, size, "
				 "lba, create)",
				 key);
			return -EINVAL;
		}
		if (ret) {
			zlog_err(TAG, "bad value '%s' for key '%s'", val, key);
			return -EINVAL;
		}
	}
	if (ret < 0) {
		zlog_err(TAG, "key or value too long in '%s'", params);
		return -EINVAL;
	}
	if (!spec->zone_size) {
		zlog_err(TAG, "key 'zone_size' is required");
		return -EINVAL;
	}
	if (!is_pow2(spec->zone_size)) {
		zlog_err(TAG, "key 'zone_size': %llu is not a power of two",
			 (unsigned long long)spec->zone_size);
		return -EINVAL;
	}
	if (!is_pow2(spec->lba) || spec->lba < 512 ||
	    spec->lba > spec->zone_size) {
		zlog_err(TAG,
			 "key 'lba': %llu is not a power of two in "
			 "512..zone_size",
			 (unsigned long long)spec->lba);
		return -EINVAL;
	}
	if (spec->create && !spec->size) {
		zlog_err(TAG, "key 'create' needs 'size'");
		return -EINVAL;
	}
	return 0;
}

/* Open (or create) the file; *size_ret = its usable size in bytes. */
static int open_backing(const struct file_spec *spec, int *fd_ret,
			uint64_t *size_ret)
{
	uint64_t have;
	struct stat st;
	int fd, ret = 0;

	fd = open(spec->path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && spec->size)
		fd = open(spec->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			  0644);
	if (fd < 0) {
		ret = -errno;
		zlog_err(TAG, "cannot open '%s': %s%s", spec->path,
			 strerror(errno),
			 errno == ENOENT ? " (give size= to create it)" : "");
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &have)) {
			ret = -errno;
			zlog_err(TAG, "'%s': cannot get the device size",
				 spec->path);
			goto out;
		}
	} else if (S_ISREG(st.st_mode)) {
		have = st.st_size;
		if (spec->size > have && (spec->create || have == 0)) {
			/* Sparse: nothing is allocated until written. */
			if (ftruncate(fd, spec->size)) {
				ret = -errno;
				zlog_err(TAG,
					 "'%s': cannot size it to %llu: %s",
					 spec->path,
					 (unsigned long long)spec->size,
					 strerror(errno));
				goto out;
			}
			have = spec->size;
		}
	} else {
		zlog_err(TAG,
			 "'%s' is neither a regular file nor a block device",
			 spec->path);
		ret = -EINVAL;
		goto out;
	}
	if (spec->size) {
		if (spec->size > have) {
			zlog_err(TAG,
				 "key 'size': %llu is larger than '%s' (%llu "
				 "bytes; add 'create' to extend a file)",
				 (unsigned long long)spec->size, spec->path,
				 (unsigned long long)have);
			ret = -EINVAL;
			goto out;
		}
		have = spec->size;
	}
	*size_ret = have;
	*fd_ret = fd;
out:
	if (ret)
		close(fd);
	return ret;
}

int zdev_file_open(const char *params, struct zdev **dev_ret)
{
	struct file_dev *fdev = NULL;
	struct file_spec *spec;
	struct zdev_info info;
	uint64_t size = 0;
	int fd = -1, ret;

	*dev_ret = NULL;
	spec = malloc(sizeof(*spec));
	if (!spec)
		return -ENOMEM;
	ret = parse_spec(params, spec);
	if (ret)
		goto out;
	ret = open_backing(spec, &fd, &size);
	if (ret)
		goto out;

	memset(&info, 0, sizeof(info));
	info.zone_size = spec->zone_size;
	info.zone_capacity = spec->zone_size;
	info.nr_zones = size / spec->zone_size;
	info.nr_conv = info.nr_zones;
	info.size = info.nr_zones * spec->zone_size;
	info.max_append = 0;
	info.lba_size = spec->lba;
	info.is_zoned = false;
	snprintf(info.model, sizeof(info.model), "file");
	if (!info.nr_zones) {
		zlog_err(TAG,
			 "'%s' (%llu bytes) holds no whole zone of %llu bytes",
			 spec->path, (unsigned long long)size,
			 (unsigned long long)spec->zone_size);
		ret = -EINVAL;
		goto out;
	}
	if (size != info.size)
		zlog_warn(TAG,
			  "'%s': ignoring the trailing %llu bytes (not a whole "
			  "zone)",
			  spec->path, (unsigned long long)(size - info.size));

	fdev = calloc(1, sizeof(*fdev));
	if (!fdev) {
		ret = -ENOMEM;
		goto out;
	}
	fdev->fd = fd;
	*dev_ret = zdev_alloc(&file_ops, &info, fdev);
	if (!*dev_ret) {
		ret = -ENOMEM;
		goto out;
	}
	fd = -1;
	fdev = NULL;
out:
	free(fdev);
	if (fd >= 0)
		close(fd);
	free(spec);
	return ret;
}
