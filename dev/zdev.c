// SPDX-License-Identifier: MIT
/*
 * The checked device wrappers, the spec parser and the backend registry.
 */
#include "zdev.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zlog.h"

#define MAX_BACKENDS 8

static const struct zdev_backend *backends[MAX_BACKENDS];
static unsigned int nr_backends;
static pthread_mutex_t backends_lock = PTHREAD_MUTEX_INITIALIZER;

int zdev_register_backend(const struct zdev_backend *backend)
{
	int ret = 0;
	unsigned int i;

	pthread_mutex_lock(&backends_lock);
	for (i = 0; i < nr_backends; i++) {
		if (strcmp(backends[i]->prefix, backend->prefix) == 0) {
			ret = backends[i] == backend ? 0 : -EEXIST;
			goto out;
		}
	}
	if (nr_backends == MAX_BACKENDS) {
		ret = -ENOSPC;
		goto out;
	}
	backends[nr_backends++] = backend;
out:
	pthread_mutex_unlock(&backends_lock);
	return ret;
}

static const struct zdev_backend *find_backend(const char *prefix, size_t len)
{
	const struct zdev_backend *found = NULL;
	unsigned int i;

	pthread_mutex_lock(&backends_lock);
	for (i = 0; i < nr_backends; i++) {
		if (strlen(backends[i]->prefix) == len &&
		    strncmp(backends[i]->prefix, prefix, len) == 0)
			found = backends[i];
	}
	pthread_mutex_unlock(&backends_lock);
	return found;
}

int zdev_open(const char *spec, struct zdev **dev_ret)
{
	const struct zdev_backend *backend;
	const char *colon;
	struct zdev *dev = NULL;
	int ret;

	*dev_ret = NULL;
	if (!spec || !*spec) {
		zlog_err("zdev", "empty device spec");
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(dev->spec)) {
		zlog_err("zdev", "device spec too long");
		return -EINVAL;
	}
	if (spec[0] == '/') {
		ret = zdev_zbd_open(spec, &dev);
	} else if (strncmp(spec, "file:", 5) == 0) {
		ret = zdev_file_open(spec + 5, &dev);
	} else {
		colon = strchr(spec, ':');
		backend = colon ? find_backend(spec, colon - spec) : NULL;
		if (!backend) {
			zlog_err("zdev",
				 "unknown device spec '%s' (expected sim:..., file:PATH,... or /dev/...)",
				 spec);
			return -EINVAL;
		}
		ret = backend->open(colon + 1, &dev);
	}
	if (ret)
		return ret;
	snprintf(dev->spec, sizeof(dev->spec), "%s", spec);
	*dev_ret = dev;
	return 0;
}

struct zdev *zdev_alloc(const struct zdev_ops *ops, const struct zdev_info *info,
			void *priv)
{
	struct zdev *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->ops = ops;
	dev->info = *info;
	dev->priv = priv;
	pthread_mutex_init(&dev->stats_lock, NULL);
	return dev;
}

void zdev_free(struct zdev *dev)
{
	if (!dev)
		return;
	pthread_mutex_destroy(&dev->stats_lock);
	free(dev);
}

int zdev_close(struct zdev *dev)
{
	int ret = 0;

	if (!dev)
		return 0;
	if (dev->ops->close)
		ret = dev->ops->close(dev);
	zdev_free(dev);
	return ret;
}

/* Count a completed command and hand it to the trace hook. */
static void account(struct zdev *dev, enum zdev_class cls, enum zdev_op op,
		    uint64_t off, uint64_t len, int result)
{
	struct zdev_trace_rec rec;
	zdev_trace_fn trace;

	pthread_mutex_lock(&dev->stats_lock);
	rec.seq = ++dev->seq;
	dev->stats.cmds[cls][op]++;
	if (result < 0)
		dev->stats.errors[cls][op]++;
	else
		dev->stats.bytes[cls][op] += len;
	trace = dev->trace;
	if (trace) {
		rec.cls = cls;
		rec.op = op;
		rec.zone = zdev_zone_start(dev, off);
		rec.off = off;
		rec.len = len;
		rec.result = result;
		trace(dev->trace_arg, &rec);
	}
	pthread_mutex_unlock(&dev->stats_lock);
}

static bool is_valid_class(enum zdev_class cls)
{
	return (unsigned int)cls < ZDEV_NR_CLASSES;
}

/* Alignment and bounds of a data command, as the kernel checks them. */
static int check_range(const struct zdev *dev, uint64_t len, uint64_t off)
{
	uint64_t lba = dev->info.lba_size;

	if (len == 0 || off % lba || len % lba)
		return -EINVAL;
	if (off >= dev->info.size || len > dev->info.size - off)
		return -EINVAL;
	return 0;
}

int zdev_report(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		unsigned int *nr_ret)
{
	int ret;

	if (from >= dev->info.size) {
		*nr_ret = 0;
		return -EINVAL;
	}
	ret = dev->ops->report(dev, from, zones, nr_ret);
	account(dev, ZDEV_CLASS_OTHER, ZDEV_OP_REPORT, from, 0, ret);
	return ret;
}

int zdev_report_zone(struct zdev *dev, uint64_t off, struct zdev_zone *zone_ret)
{
	unsigned int nr = 1;
	int ret;

	ret = zdev_report(dev, zdev_zone_start(dev, off), zone_ret, &nr);
	if (ret)
		return ret;
	return nr == 1 ? 0 : -EIO;
}

int zdev_read(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
	      enum zdev_class cls)
{
	int ret;

	if (!is_valid_class(cls))
		return -EINVAL;
	ret = check_range(dev, len, off);
	if (!ret)
		ret = dev->ops->read(dev, buf, len, off, cls);
	account(dev, cls, ZDEV_OP_READ, off, len, ret);
	return ret;
}

int zdev_write(struct zdev *dev, const void *buf, uint64_t len, uint64_t off,
	       unsigned int flags, enum zdev_class cls)
{
	int ret;

	if (!is_valid_class(cls))
		return -EINVAL;
	ret = check_range(dev, len, off);
	if (!ret)
		ret = dev->ops->write(dev, buf, len, off, flags, cls);
	account(dev, cls, ZDEV_OP_WRITE, off, len, ret);
	return ret;
}

int zdev_append(struct zdev *dev, const void *buf, uint64_t len, uint64_t zone,
		unsigned int flags, enum zdev_class cls, uint64_t *off_ret)
{
	uint64_t off = zone;
	int ret;

	if (!is_valid_class(cls))
		return -EINVAL;
	ret = check_range(dev, len, zone);
	if (!ret && !dev->ops->append)
		ret = -EOPNOTSUPP;
	if (!ret)
		ret = dev->ops->append(dev, buf, len, zone, flags, cls, &off);
	if (!ret && off_ret)
		*off_ret = off;
	account(dev, cls, ZDEV_OP_APPEND, off, len, ret);
	return ret;
}

int zdev_zone_mgmt(struct zdev *dev, enum zdev_zone_action action,
		   uint64_t start, uint64_t len, enum zdev_class cls)
{
	uint64_t zs = dev->info.zone_size;
	int ret = 0;

	if (!is_valid_class(cls))
		return -EINVAL;
	switch (action) {
	case ZDEV_ZONE_RESET:
	case ZDEV_ZONE_OPEN:
	case ZDEV_ZONE_CLOSE:
	case ZDEV_ZONE_FINISH:
		break;
	default:
		return -EINVAL;
	}
	/* start = 0, len = 0: all zones.  Otherwise whole zones in range. */
	if (!(start == 0 && len == 0) &&
	    (len == 0 || start % zs || len % zs || start >= dev->info.size ||
	     len > dev->info.size - start))
		ret = -EINVAL;
	if (!ret)
		ret = dev->ops->zone_mgmt(dev, action, start, len, cls);
	account(dev, cls, (enum zdev_op)action, start, len, ret);
	return ret;
}

int zdev_reset_zone(struct zdev *dev, uint64_t start, enum zdev_class cls)
{
	return zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, start, dev->info.zone_size,
			      cls);
}

int zdev_finish_zone(struct zdev *dev, uint64_t start, enum zdev_class cls)
{
	return zdev_zone_mgmt(dev, ZDEV_ZONE_FINISH, start, dev->info.zone_size,
			      cls);
}

int zdev_flush(struct zdev *dev)
{
	int ret = dev->ops->flush(dev);

	account(dev, ZDEV_CLASS_FLUSH, ZDEV_OP_FLUSH, 0, 0, ret);
	return ret;
}

void zdev_set_trace(struct zdev *dev, zdev_trace_fn fn, void *arg)
{
	pthread_mutex_lock(&dev->stats_lock);
	dev->trace = fn;
	dev->trace_arg = arg;
	pthread_mutex_unlock(&dev->stats_lock);
}

void zdev_get_stats(struct zdev *dev, struct zdev_stats *stats_ret)
{
	pthread_mutex_lock(&dev->stats_lock);
	*stats_ret = dev->stats;
	pthread_mutex_unlock(&dev->stats_lock);
}

static const char *const class_names[ZDEV_NR_CLASSES] = {
	[ZDEV_CLASS_SB] = "sb",	      [ZDEV_CLASS_META] = "meta",
	[ZDEV_CLASS_LOG] = "log",     [ZDEV_CLASS_DATA] = "data",
	[ZDEV_CLASS_ZONE] = "zone",   [ZDEV_CLASS_FLUSH] = "flush",
	[ZDEV_CLASS_OTHER] = "other", [ZDEV_CLASS_RELOC] = "reloc",
	[ZDEV_CLASS_REPLACE] = "replace",
};

static const char *const op_names[ZDEV_NR_OPS] = {
	[ZDEV_OP_READ] = "read",     [ZDEV_OP_WRITE] = "write",
	[ZDEV_OP_APPEND] = "append", [ZDEV_OP_RESET] = "reset",
	[ZDEV_OP_OPEN] = "open",     [ZDEV_OP_CLOSE] = "close",
	[ZDEV_OP_FINISH] = "finish", [ZDEV_OP_FLUSH] = "flush",
	[ZDEV_OP_REPORT] = "report",
};

const char *zdev_class_name(enum zdev_class cls)
{
	return is_valid_class(cls) ? class_names[cls] : "?";
}

int zdev_class_parse(const char *name)
{
	int i;

	for (i = 0; i < ZDEV_NR_CLASSES; i++)
		if (strcmp(name, class_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *zdev_op_name(enum zdev_op op)
{
	return (unsigned int)op < ZDEV_NR_OPS ? op_names[op] : "?";
}

/* Short names as blkzone prints them. */
const char *zdev_cond_name(enum zdev_zone_cond cond)
{
	switch (cond) {
	case ZDEV_COND_NOT_WP:
		return "nw";
	case ZDEV_COND_EMPTY:
		return "em";
	case ZDEV_COND_IMP_OPEN:
		return "oi";
	case ZDEV_COND_EXP_OPEN:
		return "oe";
	case ZDEV_COND_CLOSED:
		return "cl";
	case ZDEV_COND_READONLY:
		return "ro";
	case ZDEV_COND_FULL:
		return "fu";
	case ZDEV_COND_OFFLINE:
		return "of";
	}
	return "?";
}

const char *zdev_type_name(enum zdev_zone_type type)
{
	switch (type) {
	case ZDEV_ZONE_CONV:
		return "CONVENTIONAL";
	case ZDEV_ZONE_SEQ_REQ:
		return "SEQ_WRITE_REQUIRED";
	case ZDEV_ZONE_SEQ_PREF:
		return "SEQ_WRITE_PREFERRED";
	}
	return "?";
}

int zdev_fd_io(int fd, void *buf, uint64_t len, uint64_t off, bool is_write)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = is_write ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

int zdev_spec_next(const char **pos, char *key, size_t key_len, char *val,
		   size_t val_len)
{
	const char *p = *pos, *end, *eq;
	size_t klen, vlen;

	while (*p == ',')
		p++;
	if (!*p) {
		*pos = p;
		return 0;
	}
	end = strchr(p, ',');
	if (!end)
		end = p + strlen(p);
	eq = memchr(p, '=', end - p);
	klen = (eq ? eq : end) - p;
	vlen = eq ? (size_t)(end - eq - 1) : 0;
	if (klen >= key_len || vlen >= val_len)
		return -EINVAL;
	memcpy(key, p, klen);
	key[klen] = '\0';
	if (eq)
		memcpy(val, eq + 1, vlen);
	val[vlen] = '\0';
	*pos = end;
	return 1;
}

int zdev_parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*ret = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

int zdev_parse_size(const char *s, uint64_t *ret)
{
	unsigned int shift = 0;
	uint64_t v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		end++;
		if (tolower((unsigned char)end[0]) == 'i' &&
		    tolower((unsigned char)end[1]) == 'b')
			end += 2;
		else if (tolower((unsigned char)end[0]) == 'b')
			end++;
	}
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*ret = v << shift;
	return 0;
}
