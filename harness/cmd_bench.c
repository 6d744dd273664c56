// SPDX-License-Identifier: MIT
/*
 * zcow bench-dev: in-memory simulator throughput, one thread, wall clock.
 * (a) 4 KiB zone appends round-robin across 16 zones, (b) 128 KiB
 * sequential writes.  Zones are reset as they fill, so memory stays bounded
 * (16 zones, kept for reuse) and each run lasts about 1.5 s.  Commands go through the
 * checked zdev_*() wrappers, as the file system's would.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "zdev.h"
#include "zsim.h"

#define BENCH_SECONDS 1.5
#define BENCH_ZONES 16
#define TARGET_APPENDS 1e6	/* 4 KiB appends per second */
#define TARGET_GBPS 2.0		/* 128 KiB writes, GB/s (1e9 bytes) */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Append @bs bytes round-robin over BENCH_ZONES zones; returns commands. */
static int run_appends(struct zdev *dev, const void *buf, uint64_t bs,
		       uint64_t *nr_ret, double *secs_ret)
{
	uint64_t zs = dev->info.zone_size, cap = dev->info.zone_capacity;
	uint64_t fill[BENCH_ZONES] = { 0 }, n = 0, off;
	double t0 = now(), t;
	unsigned int z;
	int ret;

	for (;;) {
		for (z = 0; z < BENCH_ZONES; z++) {
			if (fill[z] + bs > cap) {
				ret = zdev_reset_zone(dev, z * zs,
						      ZDEV_CLASS_ZONE);
				if (ret)
					return ret;
				fill[z] = 0;
			}
			ret = zdev_append(dev, buf, bs, z * zs, 0,
					  ZDEV_CLASS_DATA, &off);
			if (ret)
				return ret;
			fill[z] += bs;
		}
		n += BENCH_ZONES;
		if (n % 4096 == 0 && (t = now() - t0) >= BENCH_SECONDS)
			break;
	}
	*nr_ret = n;
	*secs_ret = t;
	return 0;
}

/* Sequential writes of @bs bytes zone after zone over BENCH_ZONES zones. */
static int run_writes(struct zdev *dev, const void *buf, uint64_t bs,
		      uint64_t *nr_ret, double *secs_ret)
{
	uint64_t zs = dev->info.zone_size, cap = dev->info.zone_capacity;
	uint64_t n = 0, wp = 0;
	unsigned int z = 0;
	double t0 = now(), t;
	int ret;

	for (;;) {
		if (wp + bs > cap) {
			z = (z + 1) % BENCH_ZONES;
			wp = 0;
			ret = zdev_reset_zone(dev, z * zs, ZDEV_CLASS_ZONE);
			if (ret)
				return ret;
		}
		ret = zdev_write(dev, buf, bs, z * zs + wp, 0, ZDEV_CLASS_DATA);
		if (ret)
			return ret;
		wp += bs;
		n++;
		if (n % 256 == 0 && (t = now() - t0) >= BENCH_SECONDS)
			break;
	}
	*nr_ret = n;
	*secs_ret = t;
	return 0;
}

/* Time zsim_create() + close of a sparse 1 TiB device of 16k zones. */
static int time_big_open(double *secs_ret)
{
	struct zsim_config big = { .nr_zones = 16384, .zone_size = 64 << 20 };
	struct zdev *dev;
	double t0 = now();
	int ret;

	ret = zsim_create(&big, &dev);
	if (ret)
		return ret;
	*secs_ret = now() - t0;
	return zdev_close(dev);
}

/*
 * Fill every bench zone once with 128 KiB writes and reset them: the first
 * touch of fresh memory costs page faults (and, in a VM, the host's), which
 * is not the simulator's steady state, where reset zones recycle their
 * memory.  Returns the cold fill rate in GB/s through *gbps_ret.
 */
static int warm_up(struct zdev *dev, const void *buf, double *gbps_ret)
{
	uint64_t zs = dev->info.zone_size, cap = dev->info.zone_capacity;
	uint64_t off, bs = 128 * 1024;
	double t0 = now();
	unsigned int z;
	int ret;

	for (z = 0; z < BENCH_ZONES; z++) {
		for (off = 0; off + bs <= cap; off += bs) {
			ret = zdev_write(dev, buf, bs, z * zs + off, 0,
					 ZDEV_CLASS_DATA);
			if (ret)
				return ret;
		}
	}
	*gbps_ret = BENCH_ZONES * (double)(cap - cap % bs) / (now() - t0) / 1e9;
	return zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 0, 0, ZDEV_CLASS_ZONE);
}

int cmd_bench_dev(int argc, char **argv)
{
	struct zsim_config cfg = {
		.nr_zones = BENCH_ZONES,
		.zone_size = 64ull << 20,
	};
	const char *csv_path = NULL;
	struct zdev *dev = NULL;
	double secs, rate, gbps;
	FILE *csv = NULL;
	uint64_t n;
	void *buf;
	int ret, i, status = 0;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: zcow bench-dev [--zone-size SIZE] [--csv FILE]\n\n"
			       "Simulator throughput, in memory, one thread, wall clock:\n"
			       "4 KiB appends round-robin across %d zones, and 128 KiB\n"
			       "sequential writes.  Targets: >= 1M appends/s, >= 2 GB/s.\n"
			       "--zone-size  zone size of the simulated device (default 64M)\n"
			       "--csv FILE   also write benchmark,metric,value,target rows\n",
			       BENCH_ZONES);
			return 0;
		}
		if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
			csv_path = argv[++i];
		} else if (strcmp(argv[i], "--zone-size") == 0 && i + 1 < argc) {
			if (parse_size_arg("zone size", argv[++i],
					   &cfg.zone_size))
				return 2;
		} else {
			fprintf(stderr, "zcow bench-dev: unexpected argument '%s'\n",
				argv[i]);
			return 2;
		}
	}
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			fprintf(stderr, "zcow bench-dev: cannot write %s: %s\n",
				csv_path, strerror(errno));
			return 1;
		}
		fprintf(csv, "benchmark,metric,value,target\n");
	}
	buf = malloc(128 * 1024);
	if (!buf) {
		fprintf(stderr, "zcow bench-dev: out of memory\n");
		return 1;
	}
	memset(buf, 0x5a, 128 * 1024);
	ret = zsim_create(&cfg, &dev);
	if (ret) {
		fprintf(stderr, "zcow bench-dev: cannot create the simulator: %s\n",
			strerror(-ret));
		free(buf);
		return 1;
	}
	ret = time_big_open(&secs);
	if (ret)
		goto out;
	printf("open of a 1 TiB device with 16384 zones: %.1f ms\n",
	       secs * 1e3);
	ret = warm_up(dev, buf, &gbps);
	if (ret)
		goto out;
	printf("device: %d zones of %" PRIu64 " MiB; first fill of fresh memory "
	       "(not timed below): %.2f GB/s\n", BENCH_ZONES,
	       cfg.zone_size >> 20, gbps);
	ret = run_appends(dev, buf, 4096, &n, &secs);
	if (ret)
		goto out;
	rate = n / secs;
	printf("4 KiB appends, %d zones: %.2f M appends/s, %.2f GB/s "
	       "(target >= 1 M appends/s) %s\n",
	       BENCH_ZONES, rate / 1e6, rate * 4096 / 1e9,
	       rate >= TARGET_APPENDS ? "ok" : "BELOW TARGET");
	if (csv)
		fprintf(csv, "4k_append_16_zones,M appends/s,%.4f,1\n",
			rate / 1e6);
	ret = zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 0, 0, ZDEV_CLASS_ZONE);
	if (ret)
		goto out;
	ret = run_writes(dev, buf, 128 * 1024, &n, &secs);
	if (ret)
		goto out;
	gbps = n * 128.0 * 1024 / secs / 1e9;
	printf("128 KiB sequential writes: %.2f GB/s, %.0f writes/s "
	       "(target >= 2 GB/s) %s\n",
	       gbps, n / secs, gbps >= TARGET_GBPS ? "ok" : "BELOW TARGET");
	if (csv)
		fprintf(csv, "128k_seq_write,GB/s,%.4f,%.1f\n", gbps,
			TARGET_GBPS);
	printf("simulator memory at the end: %.1f MiB\n",
	       zsim_mem_bytes(zsim_from_dev(dev)) / 1048576.0);
out:
	if (ret) {
		fprintf(stderr, "zcow bench-dev: device command failed: %s\n",
			strerror(-ret));
		status = 1;
	}
	if (csv && fclose(csv)) {
		fprintf(stderr, "zcow bench-dev: writing %s failed\n", csv_path);
		status = 1;
	}
	free(buf);
	return close_dev(dev, status);
}
