// SPDX-License-Identifier: MIT
/*
 * zcow zones: print the zones as `blkzone report` prints them, or
 * (--limits) the device's queue limits and the size zcow gives each kind
 * of command, or (--append-test N) issue N Zone Appends of the largest
 * size the device takes and read every one back.
 * zcow zone: reset, open, close or finish one zone or all of them; turn a
 * zone of a simulator image offline or read-only.
 *
 * The sector mode reproduces util-linux blkzone's report line byte for byte
 * (512-byte sectors in hex, wptr relative to the zone start, 0 for a
 * conventional zone as blkzone prints it), so the output diffs against a
 * report taken from the kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zdev.h"
#include "zdev_zbd.h"
#include "zsim.h"

/* blkzone prints 512-byte sectors whatever the logical block size. */
#define BLKZONE_SECTOR 512
/* Zones per report call. */
#define REPORT_BATCH 4096
/*
 * --append-test: every other append comes from a buffer this many bytes
 * past a page, where malloc() puts a large block (the backend bounces
 * it); the others from a page-aligned buffer (handed to the kernel as it
 * is).
 */
#define APPEND_TEST_MISALIGN 16

static void zones_usage(FILE *out)
{
	fprintf(out, "usage: zcow zones DEV [--bytes]\n"
		     "       zcow zones DEV --limits\n"
		     "       zcow zones DEV --append-test N\n\n"
		     "Print every zone of DEV like `blkzone report`: start, "
		     "len, cap and\n"
		     "wptr (relative to the zone start) in 512-byte sectors, "
		     "condition and\n"
		     "type.  --bytes prints the same fields in bytes (decimal) "
		     "under a\n"
		     "header line.\n"
		     "--limits prints the limits of DEV instead: on a real "
		     "device every\n"
		     "queue limit zcow reads from sysfs (\"absent\" for a file "
		     "that does not\n"
		     "exist), then the bytes zcow puts in one command of each "
		     "kind (append\n"
		     "passthru, append emulated, write, read) and the limit "
		     "that decided it;\n"
		     "on the simulator and a file, the limits of its spec.\n"
		     "--append-test N DESTROYS THE DATA on DEV: N Zone "
		     "Appends of the\n"
		     "device's max_append, each of its own pattern, zone after "
		     "zone from the\n"
		     "first sequential one; every other append from a "
		     "page-aligned buffer,\n"
		     "the others from one 16 bytes past a page.  A zone is read "
		     "back and\n"
		     "compared append by append when no further append fits, "
		     "then reset.\n"
		     "Exit status 1 at the first append or read that fails or "
		     "differs.\n");
}

/* One row of the per-command table. */
static void print_cmd_row(const char *kind, uint64_t bytes, const char *why)
{
	char num[24] = "-";

	if (bytes)
		snprintf(num, sizeof(num), "%" PRIu64, bytes);
	printf("  %-16s %10s  %s\n", kind, num, why);
}

/* The queue limits of a real device and the size of each command. */
static void print_zbd_limits(const struct zdev *dev,
			     const struct zdev_zbd_limits *lim,
			     bool is_passthru)
{
	enum zdev_zbd_limit l;
	enum zdev_zbd_cmd c;
	char why[160];

	printf("queue limits (%s):\n",
	       lim->dir[0] ? lim->dir : "no queue directory");
	for (l = 0; l < ZDEV_ZBD_NR_LIMITS; l++) {
		if (lim->is_present[l])
			printf("  %-24s %" PRIu64 "\n", zdev_zbd_limit_name(l),
			       lim->val[l]);
		else
			printf("  %-24s absent\n", zdev_zbd_limit_name(l));
	}
	printf("  %-24s %" PRIu64 "\n", "page size (host)",
	       lim->page_size);
	printf("per command (bytes; buffers not aligned to %" PRIu64
	       " bytes are bounced):\n",
	       zdev_zbd_buf_align(lim));
	for (c = 0; c < ZDEV_ZBD_NR_CMDS; c++)
		print_cmd_row(zdev_zbd_cmd_name(c),
			      zdev_zbd_cmd_max(lim, c, NULL),
			      zdev_zbd_bound_str(lim, c, why, sizeof(why)));
	printf("zone append: %s, at most %" PRIu64
	       " bytes (the file system's max_append)\n",
	       is_passthru ? "NVMe passthrough" : "emulated by writes",
	       dev->info.max_append);
	printf("writes and reads above their limit are split into several "
	       "commands\n");
}

/* The simulator and the file backend: their spec is all there is. */
static void print_spec_limits(struct zdev *dev)
{
	bool is_sim = zsim_from_dev(dev) != NULL;
	const struct zdev_info *info = &dev->info;

	printf("no queue limits: %s device; its limits are its spec's (%s)\n",
	       is_sim ? "a simulated" : "an emulated-zones file",
	       dev->spec);
	printf("  %-24s %" PRIu32 "\n", "logical block size", info->lba_size);
	printf("  %-24s %" PRIu32 "%s\n", "max_open", info->max_open,
	       info->max_open ? "" : " (no limit)");
	printf("  %-24s %" PRIu32 "%s\n", "max_active", info->max_active,
	       info->max_active ? "" : " (no limit)");
	printf("per command (bytes):\n");
	print_cmd_row("append", info->max_append,
		      info->max_append ? "max_append of the spec"
				       : "no Zone Append");
	print_cmd_row("write", 0, "no per-command limit");
	print_cmd_row("read", 0, "no per-command limit");
}

static int print_limits(const char *spec)
{
	struct zdev_zbd_limits lim;
	bool is_passthru = false;
	struct zdev *dev;
	int ret;

	ret = open_dev("zones", spec, &dev);
	if (ret)
		return ret;
	if (zdev_zbd_dev_limits(dev, &lim, &is_passthru) == 0)
		print_zbd_limits(dev, &lim, is_passthru);
	else
		print_spec_limits(dev);
	if (fflush(stdout)) {
		fprintf(stderr, "zcow zones: writing the output failed\n");
		return close_dev(dev, 1);
	}
	return close_dev(dev, 0);
}

/* The bytes of append @n: a function of @n and the position only. */
static void fill_pattern(uint8_t *p, uint64_t len, uint64_t n)
{
	uint64_t i, v;

	for (i = 0; i + sizeof(v) <= len; i += sizeof(v)) {
		v = (n << 40) ^ (i * 0x9e3779b97f4a7c15ull);
		memcpy(p + i, &v, sizeof(v));
	}
}

/*
 * Read back the @nr appends of @len bytes that zone @zone holds, append
 * @first first, each against its pattern, then reset the zone.  @exp and
 * @got hold @len bytes.  Returns 0, or 1 with the reason on stderr.
 */
static int verify_zone(struct zdev *dev, uint64_t zone, uint64_t nr,
		       uint64_t first, uint64_t len, uint8_t *exp,
		       uint8_t *got)
{
	uint64_t k;
	int ret;

	for (k = 0; k < nr; k++) {
		fill_pattern(exp, len, first + k);
		ret = zdev_read(dev, got, len, zone + k * len,
				ZDEV_CLASS_OTHER);
		if (ret) {
			fprintf(stderr, "zcow zones: read of append %" PRIu64
				" at %" PRIu64 " failed: %s\n", first + k,
				zone + k * len, strerror(-ret));
			return 1;
		}
		if (memcmp(exp, got, len)) {
			fprintf(stderr, "zcow zones: append %" PRIu64
				" at %" PRIu64 " reads back different\n",
				first + k, zone + k * len);
			return 1;
		}
	}
	ret = zdev_reset_zone(dev, zone, ZDEV_CLASS_ZONE);
	if (ret) {
		fprintf(stderr, "zcow zones: reset of the zone at %" PRIu64
			" failed: %s\n", zone, strerror(-ret));
		return 1;
	}
	return 0;
}

/*
 * --append-test: @nr appends of max_append bytes, zone after zone (wrapping
 * to the first sequential zone), alternately from a page-aligned buffer and
 * one APPEND_TEST_MISALIGN bytes past a page.  Each must land at the write
 * pointer (one at a time, nothing else writes); each zone is read back and
 * reset once no further append fits, the last one at the end.
 */
static int append_test(const char *spec, uint64_t nr)
{
	uint64_t zs, len, per_zone, zone, n, k = 0, first = 0, landed;
	uint64_t nr_zones = 0, nr_aligned = 0;
	uint8_t *buf = NULL, *exp = NULL, *got = NULL, *p;
	struct zdev *dev;
	int ret, status = 1;

	ret = open_dev("zones", spec, &dev);
	if (ret)
		return ret;
	zs = dev->info.zone_size;
	len = dev->info.max_append;
	per_zone = len ? dev->info.zone_capacity / len : 0;
	if (!per_zone || dev->info.nr_conv >= dev->info.nr_zones) {
		fprintf(stderr, "zcow zones: --append-test: %s\n",
			!len ? "the device has no Zone Append" :
			!per_zone ? "max_append is above the zone capacity" :
				    "the device has no sequential zone");
		return close_dev(dev, 1);
	}
	if (posix_memalign((void **)&buf, 4096, len + 4096) ||
	    posix_memalign((void **)&exp, 4096, len) ||
	    posix_memalign((void **)&got, 4096, len)) {
		fprintf(stderr, "zcow zones: out of memory\n");
		goto out;
	}
	zone = dev->info.nr_conv * zs;
	ret = zdev_reset_zone(dev, zone, ZDEV_CLASS_ZONE);
	for (n = 0; !ret && n < nr; n++) {
		if (k == per_zone) {
			if (verify_zone(dev, zone, k, first, len, exp, got))
				goto out;
			nr_zones++;
			zone += zs;
			if (zone >= dev->info.size)
				zone = dev->info.nr_conv * zs;
			ret = zdev_reset_zone(dev, zone, ZDEV_CLASS_ZONE);
			if (ret)
				break;
			k = 0;
			first = n;
		}
		p = n % 2 ? buf + APPEND_TEST_MISALIGN : buf;
		nr_aligned += !(n % 2);
		fill_pattern(p, len, n);
		ret = zdev_append(dev, p, len, zone, 0, ZDEV_CLASS_DATA,
				  &landed);
		if (ret) {
			fprintf(stderr, "zcow zones: append %" PRIu64 " of %"
				PRIu64 " bytes (%s buffer) to the zone at %"
				PRIu64 " failed: %s\n", n, len,
				n % 2 ? "unaligned" : "page-aligned", zone,
				strerror(-ret));
			goto out;
		}
		if (landed != zone + k * len) {
			fprintf(stderr, "zcow zones: append %" PRIu64
				" landed at %" PRIu64 ", not at the write "
				"pointer %" PRIu64 "\n", n, landed,
				zone + k * len);
			goto out;
		}
		k++;
	}
	if (ret) {
		fprintf(stderr, "zcow zones: reset of the zone at %" PRIu64
			" failed: %s\n", zone, strerror(-ret));
		goto out;
	}
	if (verify_zone(dev, zone, k, first, len, exp, got))
		goto out;
	nr_zones += k > 0;
	printf("append test: %" PRIu64 " appends of %" PRIu64 " bytes (%"
	       PRIu64 " from page-aligned buffers, %" PRIu64
	       " from buffers %d bytes past a page), %" PRIu64
	       " per zone, %" PRIu64 " zones written; every append landed "
	       "at the write pointer and read back identical\n",
	       nr, len, nr_aligned, nr - nr_aligned, APPEND_TEST_MISALIGN,
	       per_zone, nr_zones);
	status = 0;
out:
	free(buf);
	free(exp);
	free(got);
	if (fflush(stdout) && !status) {
		fprintf(stderr, "zcow zones: writing the output failed\n");
		status = 1;
	}
	return close_dev(dev, status);
}

static void print_zone_sectors(const struct zdev_zone *z)
{
	uint64_t wptr = z->type == ZDEV_ZONE_CONV ? 0 : z->wp - z->start;

	printf("  start: 0x%09" PRIx64 ", len 0x%06" PRIx64 ", cap 0x%06" PRIx64
	       ", wptr 0x%06" PRIx64
	       " reset:%u non-seq:%u, zcond:%2u(%s) [type: %u(%s)]\n",
	       z->start / BLKZONE_SECTOR, z->len / BLKZONE_SECTOR,
	       z->capacity / BLKZONE_SECTOR, wptr / BLKZONE_SECTOR, 0u, 0u,
	       (unsigned int)z->cond,
	       zdev_cond_name((enum zdev_zone_cond)z->cond),
	       (unsigned int)z->type,
	       zdev_type_name((enum zdev_zone_type)z->type));
}

static void print_zone_bytes(const struct zdev_zone *z)
{
	uint64_t wptr = z->type == ZDEV_ZONE_CONV ? 0 : z->wp - z->start;

	printf("%15" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64
	       " %3u(%s) %u(%s)\n",
	       z->start, z->len, z->capacity, wptr, (unsigned int)z->cond,
	       zdev_cond_name((enum zdev_zone_cond)z->cond),
	       (unsigned int)z->type,
	       zdev_type_name((enum zdev_zone_type)z->type));
}

int cmd_zones(int argc, char **argv)
{
	struct zdev_zone *zones = NULL;
	const char *spec = NULL;
	bool in_bytes = false, is_limits = false;
	const char *nr_appends = NULL;
	struct zdev *dev;
	unsigned int nr, i;
	uint64_t from, nr_app;
	int ret, status = 0, a;

	for (a = 1; a < argc; a++) {
		if (is_help(argv[a])) {
			zones_usage(stdout);
			return 0;
		} else if (strcmp(argv[a], "--bytes") == 0) {
			in_bytes = true;
		} else if (strcmp(argv[a], "--limits") == 0) {
			is_limits = true;
		} else if (strcmp(argv[a], "--append-test") == 0 &&
			   a + 1 < argc) {
			nr_appends = argv[++a];
		} else if (argv[a][0] == '-' && argv[a][1]) {
			fprintf(stderr, "zcow zones: unknown option '%s'\n",
				argv[a]);
			zones_usage(stderr);
			return 2;
		} else if (!spec) {
			spec = argv[a];
		} else {
			fprintf(stderr,
				"zcow zones: unexpected argument '%s'\n",
				argv[a]);
			zones_usage(stderr);
			return 2;
		}
	}
	if (!spec) {
		zones_usage(stderr);
		return 2;
	}
	if (is_limits && in_bytes) {
		fprintf(stderr, "zcow zones: --limits prints no zones: "
				"--bytes does not go with it\n");
		return 2;
	}
	if (nr_appends && (is_limits || in_bytes)) {
		fprintf(stderr, "zcow zones: --append-test goes with no other "
				"option\n");
		return 2;
	}
	if (nr_appends) {
		if (zdev_parse_u64(nr_appends, &nr_app)) {
			fprintf(stderr, "zcow zones: bad --append-test count "
					"'%s'\n", nr_appends);
			return 2;
		}
		return append_test(spec, nr_app);
	}
	if (is_limits)
		return print_limits(spec);
	ret = open_dev("zones", spec, &dev);
	if (ret)
		return ret;
	zones = calloc(REPORT_BATCH, sizeof(*zones));
	if (!zones) {
		fprintf(stderr, "zcow zones: out of memory\n");
		status = 1;
		goto out;
	}
	if (in_bytes)
		printf("%15s %12s %12s %12s %7s %s\n", "start", "len", "cap",
		       "wptr", "zcond", "type");
	for (from = 0; from < dev->info.size;) {
		nr = REPORT_BATCH;
		ret = zdev_report(dev, from, zones, &nr);
		if (ret) {
			fprintf(stderr,
				"zcow zones: report at %" PRIu64
				" failed: %s\n",
				from, strerror(-ret));
			status = 1;
			goto out;
		}
		if (!nr)
			break;
		for (i = 0; i < nr; i++) {
			if (in_bytes)
				print_zone_bytes(&zones[i]);
			else
				print_zone_sectors(&zones[i]);
		}
		from = zones[nr - 1].start + zones[nr - 1].len;
	}
out:
	free(zones);
	if (fflush(stdout) && !status) {
		fprintf(stderr, "zcow zones: writing the output failed\n");
		status = 1;
	}
	return close_dev(dev, status);
}

static void zone_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow zone DEV reset|open|close|finish OFFSET|all\n"
		"       zcow zone DEV offline|readonly OFFSET\n\n"
		"Run one zone management command on the zone starting at "
		"OFFSET\n"
		"(bytes, suffixes k/M/G/T, or 0x hex; must be a zone start), "
		"or on\n"
		"every zone with 'all'.  Exit status 1 with the device's error "
		"on\n"
		"stderr when the device refuses it.\n"
		"offline and readonly turn one zone of a simulator image "
		"(DEV sim:image=PATH)\n"
		"offline or read-only, as a device may on its own, and save "
		"the image.\n");
}

static const struct {
	const char *name;
	enum zdev_zone_action action;
} zone_actions[] = {
	{ "reset", ZDEV_ZONE_RESET },
	{ "open", ZDEV_ZONE_OPEN },
	{ "close", ZDEV_ZONE_CLOSE },
	{ "finish", ZDEV_ZONE_FINISH },
};

/* A short explanation of a refused zone command, or "". */
static const char *hint(struct zdev *dev, uint64_t off, int err)
{
	struct zdev_zone z;

	if (err == -EINVAL && off % dev->info.zone_size)
		return " (not a zone start)";
	if (err == -EINVAL && off >= dev->info.size)
		return " (past the end of the device)";
	if (err == -EIO && !zdev_report_zone(dev, off, &z) &&
	    z.type == ZDEV_ZONE_CONV)
		return " (a conventional zone has no write pointer)";
	return "";
}

/*
 * Turn the zone at @off of the simulator image @spec offline or
 * read-only; the image is saved when the device is closed.
 */
static int fail_zone(const char *spec, const char *what, uint64_t off,
		     enum zdev_zone_cond cond)
{
	struct zdev *dev;
	struct zsim *sim;
	int ret;

	ret = open_dev("zone", spec, &dev);
	if (ret)
		return ret;
	sim = zsim_from_dev(dev);
	if (!sim || !zsim_image_path(sim)) {
		fprintf(stderr,
			"zcow zone: %s needs a simulator image (sim:image=PATH): "
			"on %s the change would be lost\n",
			what, spec);
		return close_dev(dev, 1);
	}
	if (off % dev->info.zone_size || off >= dev->info.size) {
		fprintf(stderr, "zcow zone: %s of the zone at %" PRIu64
			" failed: %s\n", what, off,
			off % dev->info.zone_size ?
			"not a zone start" : "past the end of the device");
		return close_dev(dev, 1);
	}
	ret = zsim_set_zone_cond(sim, off, cond);
	if (ret) {
		fprintf(stderr, "zcow zone: %s of the zone at %" PRIu64
			" failed: %s\n", what, off, strerror(-ret));
		return close_dev(dev, 1);
	}
	return close_dev(dev, 0);
}

int cmd_zone(int argc, char **argv)
{
	const char *args[3];
	unsigned int nr_args = 0, i;
	enum zdev_zone_action action = ZDEV_ZONE_RESET;
	bool is_all, found = false;
	uint64_t off = 0, len = 0;
	struct zdev *dev;
	int ret, a;

	for (a = 1; a < argc; a++) {
		if (is_help(argv[a])) {
			zone_usage(stdout);
			return 0;
		}
		if (nr_args == 3) {
			fprintf(stderr, "zcow zone: unexpected argument '%s'\n",
				argv[a]);
			zone_usage(stderr);
			return 2;
		}
		args[nr_args++] = argv[a];
	}
	if (nr_args != 3) {
		zone_usage(stderr);
		return 2;
	}
	if (strcmp(args[1], "offline") == 0 ||
	    strcmp(args[1], "readonly") == 0) {
		if (strcmp(args[2], "all") == 0) {
			fprintf(stderr,
				"zcow zone: %s takes one zone's OFFSET, not "
				"'all'\n",
				args[1]);
			return 2;
		}
		ret = parse_size_arg("offset", args[2], &off);
		if (ret)
			return ret;
		return fail_zone(args[0], args[1], off,
				 args[1][0] == 'o' ? ZDEV_COND_OFFLINE :
						     ZDEV_COND_READONLY);
	}
	for (i = 0; i < sizeof(zone_actions) / sizeof(zone_actions[0]); i++) {
		if (strcmp(args[1], zone_actions[i].name) == 0) {
			action = zone_actions[i].action;
			found = true;
		}
	}
	if (!found) {
		fprintf(stderr,
			"zcow zone: unknown action '%s' (reset, open, close, "
			"finish, offline, readonly)\n",
			args[1]);
		return 2;
	}
	is_all = strcmp(args[2], "all") == 0;
	if (!is_all) {
		ret = parse_size_arg("offset", args[2], &off);
		if (ret)
			return ret;
	}
	ret = open_dev("zone", args[0], &dev);
	if (ret)
		return ret;
	if (!is_all)
		len = dev->info.zone_size;
	ret = zdev_zone_mgmt(dev, action, off, len, ZDEV_CLASS_ZONE);
	if (ret) {
		if (is_all)
			fprintf(stderr,
				"zcow zone: %s of all zones failed: %s\n",
				args[1], strerror(-ret));
		else
			fprintf(stderr,
				"zcow zone: %s of the zone at %" PRIu64
				" failed: %s%s\n",
				args[1], off, strerror(-ret),
				hint(dev, off, ret));
		return close_dev(dev, 1);
	}
	return close_dev(dev, 0);
}
