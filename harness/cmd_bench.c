// SPDX-License-Identifier: MIT
/*
 * The benchmarks, one thread, wall clock, on the in-memory simulator:
 *   zcow bench-dev   the simulator alone: (a) 4 KiB zone appends
 *                    round-robin across 16 zones, (b) 128 KiB sequential
 *                    writes.  Zones are reset as they fill, so memory stays
 *                    bounded (16 zones, kept for reuse) and each run lasts
 *                    about 1.5 s.  Commands go through the checked zdev_*()
 *                    wrappers, as the file system's would.
 *   zcow bench-meta  the metadata engine: tree inserts and commits
 *                    (zcow_bench_tree_insert()), nodes written per commit.
 *   zcow bench-fs    the whole file layer: sequential and random writes.
 * They share the clock and the option parser (harness/cmds.h), the
 * set-up of a simulated file system and the clean-up with its messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "prng.h"
#include "zbench.h"
#include "zcow.h"
#include "zdev.h"
#include "zlog.h"
#include "zsim.h"

/* ---- shared: clock, options, a simulated file system ------------------- */

/* A simulated device @cfg with a new file system on it, mounted. */
static int bench_fs_setup(const struct zsim_config *cfg,
			  const struct zcow_mkfs_opts *mko,
			  const struct zcow_mount_opts *mo,
			  struct zdev **dev_ret, struct zcow_fs **fs_ret)
{
	int ret;

	ret = zsim_create(cfg, dev_ret);
	if (!ret)
		ret = zcow_mkfs(*dev_ret, mko);
	if (!ret)
		ret = zcow_mount(*dev_ret, mo, fs_ret);
	return ret;
}

/*
 * The end of a file-system benchmark: report @ret (what failed: @what,
 * may be NULL), unmount @fs and close @dev (either may be NULL),
 * reporting their first error.  Returns the exit status.
 */
static int bench_fs_end(const char *cmd, const char *what, struct zcow_fs *fs,
			struct zdev *dev, int ret)
{
	int r;

	if (ret)
		fprintf(stderr, "zcow %s: %s%s%s\n", cmd, what ? what : "",
			what ? ": " : "", strerror(-ret));
	if (fs && (r = zcow_unmount(fs)) && !ret) {
		fprintf(stderr, "zcow %s: unmount: %s\n", cmd, strerror(-r));
		ret = r;
	}
	if (dev && (r = zdev_close(dev)) && !ret) {
		fprintf(stderr, "zcow %s: closing the device: %s\n", cmd,
			strerror(-r));
		ret = r;
	}
	return ret ? 1 : 0;
}

/* ---- bench-dev: the simulator ------------------------------------------ */

#define BENCH_SECONDS 1.5
#define BENCH_ZONES 16
#define BENCH_ZONES_STR "16"	/* BENCH_ZONES, for the help text */
#define TARGET_APPENDS 1e6	/* 4 KiB appends per second */
#define TARGET_GBPS 2.0		/* 128 KiB writes, GB/s (1e9 bytes) */

/* Append @bs bytes round-robin over BENCH_ZONES zones; returns commands. */
static int run_appends(struct zdev *dev, const void *buf, uint64_t bs,
		       uint64_t *nr_ret, double *secs_ret)
{
	uint64_t zs = dev->info.zone_size, cap = dev->info.zone_capacity;
	uint64_t fill[BENCH_ZONES] = { 0 }, n = 0, off;
	double t0 = zcow_now_sec(), t;
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
		if (n % 4096 == 0 && (t = zcow_now_sec() - t0) >= BENCH_SECONDS)
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
	double t0 = zcow_now_sec(), t;
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
		if (n % 256 == 0 && (t = zcow_now_sec() - t0) >= BENCH_SECONDS)
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
	double t0 = zcow_now_sec();
	int ret;

	ret = zsim_create(&big, &dev);
	if (ret)
		return ret;
	*secs_ret = zcow_now_sec() - t0;
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
	double t0 = zcow_now_sec();
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
	*gbps_ret = BENCH_ZONES * (double)(cap - cap % bs) / (zcow_now_sec() - t0) / 1e9;
	return zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 0, 0, ZDEV_CLASS_ZONE);
}

int cmd_bench_dev(int argc, char **argv)
{
	struct zsim_config cfg = {
		.nr_zones = BENCH_ZONES,
		.zone_size = 64ull << 20,
	};
	const char *csv_path = NULL;
	const struct zcow_opt opts[] = {
		{ "--zone-size", ZOPT_SIZE, &cfg.zone_size, true },
		{ "--csv", ZOPT_STR, &csv_path, false },
		{ NULL, ZOPT_FLAG, NULL, false },
	};
	struct zdev *dev = NULL;
	double secs, rate, gbps;
	FILE *csv = NULL;
	uint64_t n;
	void *buf;
	int ret, status = 0;

	_Static_assert(BENCH_ZONES == 16, "BENCH_ZONES_STR");
	ret = zcow_opt_parse("bench-dev",
			  "usage: zcow bench-dev [--zone-size SIZE] [--csv FILE]\n\n"
			  "Simulator throughput, in memory, one thread, wall clock:\n"
			  "4 KiB appends round-robin across " BENCH_ZONES_STR " zones, and 128 KiB\n"
			  "sequential writes.  Targets: >= 1M appends/s, >= 2 GB/s.\n"
			  "--zone-size  zone size of the simulated device (default 64M)\n"
			  "--csv FILE   also write benchmark,metric,value,target rows\n",
			  opts, argc, argv, NULL);
	if (ret)
		return ret < 0 ? 0 : ret;

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

/* ---- bench-meta: the metadata engine ----------------------------------- */

int cmd_bench_meta(int argc, char **argv)
{
	struct zsim_config cfg = { .nr_zones = 256, .zone_size = 64ULL << 20 };
	uint64_t items = 1000000, every = 10000, seed = 1, done = 0;
	bool is_seq = false;
	const struct zcow_opt opts[] = {
		{ "--items", ZOPT_U64, &items, false },
		{ "--commit-every", ZOPT_U64, &every, true },
		{ "--seed", ZOPT_U64, &seed, false },
		{ "--seq", ZOPT_FLAG, &is_seq, false },
		{ NULL, ZOPT_FLAG, NULL, false },
	};
	struct zcow_fs_info info;
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	struct zdev_stats st;
	const struct zcow_commit_stats *cs = &info.commits;
	char what[64];
	double t0, t1;
	int ret;

	ret = zcow_opt_parse("bench-meta",
			  "usage: zcow bench-meta [--items N] [--commit-every N] [--seq] [--seed N]\n"
			  "Insert N items (16-byte values, random keys unless --seq) into the fs\n"
			  "tree on an in-memory simulator, committing every N items; report\n"
			  "nodes written per commit and wall-clock time.\n",
			  opts, argc, argv, NULL);
	if (ret)
		return ret < 0 ? 0 : ret;
	zlog_set_level(ZLOG_WARN);
	ret = bench_fs_setup(&cfg, NULL, NULL, &dev, &fs);
	if (ret)
		return bench_fs_end("bench-meta", "setup failed", fs, dev, ret);
	t0 = zcow_now_sec();
	ret = zcow_bench_tree_insert(fs, items, every, is_seq, seed, &done);
	t1 = zcow_now_sec();
	if (ret) {
		snprintf(what, sizeof(what), "failed after %" PRIu64 " items",
			 done);
		return bench_fs_end("bench-meta", what, fs, dev, ret);
	}
	zdev_get_stats(dev, &st);
	zcow_fs_info(fs, &info);
	printf("items=%" PRIu64 " keys=%s commit_every=%" PRIu64 " nodesize=%u\n",
	       items, is_seq ? "sequential" : "random", every, info.nodesize);
	printf("commits=%" PRIu64 " nodes_written=%" PRIu64 " nodes_per_commit=%.1f last_commit_nodes=%" PRIu64 " redirtied=%" PRIu64 " meta_write_cmds=%" PRIu64 " max_rounds=%" PRIu64 "\n",
	       cs->nr_commits, cs->nodes_written,
	       cs->nr_commits ? (double)cs->nodes_written / cs->nr_commits :
				0.0,
	       cs->last_nodes_written, cs->nodes_redirtied, cs->write_cmds,
	       cs->max_rounds);
	printf("meta_bytes_written=%" PRIu64 " wall_seconds=%.3f items_per_second=%.0f\n",
	       st.bytes[ZDEV_CLASS_META][ZDEV_OP_WRITE], t1 - t0,
	       (double)items / (t1 - t0));
	return bench_fs_end("bench-meta", NULL, fs, dev, 0);
}

/* ---- bench-fs: the file layer ------------------------------------------ */

int cmd_bench_fs(int argc, char **argv)
{
	struct zsim_config cfg = { .nr_zones = 128, .zone_size = 256ULL << 20,
				   .seed = 1 };
	struct zcow_mkfs_opts mko = { .seed = 1 };
	struct zcow_mount_opts mo = { 0 };
	uint64_t seq_bytes = 1ULL << 30, nr_rand = 500000, file = 256ULL << 20;
	uint64_t rng = 42, i, warm, nodesize = 0;
	const char *mount_opts = NULL;
	const struct zcow_opt opts[] = {
		{ "--seq", ZOPT_SIZE, &seq_bytes, false },
		{ "--rand", ZOPT_U64, &nr_rand, false },
		{ "--nodesize", ZOPT_SIZE, &nodesize, false },
		{ "--no-data", ZOPT_FLAG, &cfg.no_data, false },
		{ "-o", ZOPT_STR, &mount_opts, false },
		{ NULL, ZOPT_FLAG, NULL, false },
	};
	struct zcow_fs_info info;
	struct zcow_fs *fs = NULL;
	struct zcow_file *f = NULL;
	struct zdev *dev = NULL;
	struct zcow_statfs st;
	double t0, seq_s, rand_s;
	uint8_t *buf;
	int ret, a;

	ret = zcow_opt_parse("bench-fs",
			  "usage: zcow bench-fs [--seq BYTES] [--rand N] [--nodesize B] [--no-data] [-o MOUNT_OPTS]\n"
			  "  in-memory simulator, one thread, wall clock (after an untimed\n"
			  "  warm-up that faults in the simulator's memory): BYTES of 128 KiB\n"
			  "  sequential writes, then N 4 KiB random writes into a 256 MiB\n"
			  "  file, through the whole file layer (allocation, checksums,\n"
			  "  tree updates, commits every 256 MiB).  --no-data drops the data\n"
			  "  bytes in the simulator (breaks mount: superblocks are data too)\n",
			  opts, argc, argv, NULL);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (nodesize > UINT32_MAX) {
		fprintf(stderr, "zcow bench-fs: --nodesize %" PRIu64 " too large\n",
			nodesize);
		return 2;
	}
	mko.nodesize = (uint32_t)nodesize;
	if (mount_opts && zcow_mount_opts_parse(mount_opts, &mo)) {
		fprintf(stderr, "zcow bench-fs: bad mount options '%s'\n",
			mount_opts);
		return 2;
	}
	buf = malloc(128 << 10);
	if (!buf) {
		fprintf(stderr, "zcow bench-fs: out of memory\n");
		return 1;
	}
	for (i = 0; i < (128 << 10); i++)
		buf[i] = (uint8_t)(i * 7);
	ret = bench_fs_setup(&cfg, &mko, &mo, &dev, &fs);
	/*
	 * Warm-up, untimed: the simulator's memory for the data of both
	 * phases is faulted in once (the host's page zeroing is not the file system's
	 * cost); deleting the file resets the zones, and their memory is
	 * reused by the timed passes.  The random phase runs while the
	 * sequential file's last zones are still pinned (up to seq_bytes),
	 * and its node writes add about a tenth to its data: fault in the
	 * sum, with a quarter for metadata and a zone of slack.
	 */
	warm = seq_bytes + nr_rand * 4096 + nr_rand * 4096 / 4;
	if (warm < file)
		warm = file;
	warm = (warm + (256ULL << 20)) / 2;
	for (a = 0; a < 2 && !ret; a++) {
		char name[32];

		snprintf(name, sizeof(name), "/warm%d", a);
		ret = zcow_create(fs, name, &f);
		for (i = 0; i < warm && !ret; i += 128 << 10) {
			int64_t n = zcow_pwrite(f, buf, 128 << 10, i);

			ret = n < 0 ? (int)n : 0;
		}
		if (f) {
			int cret = zcow_close(f);

			if (!ret)
				ret = cret;
		}
		f = NULL;
	}
	for (a = 0; a < 2 && !ret; a++) {
		char name[32];

		snprintf(name, sizeof(name), "/warm%d", a);
		ret = zcow_unlink(fs, name);
	}
	if (!ret)
		ret = zcow_sync(fs);
	if (!ret)
		ret = zcow_create(fs, "/seq", &f);
	if (ret)
		goto out;
	t0 = zcow_now_sec();
	for (i = 0; i < seq_bytes && !ret; i += 128 << 10) {
		int64_t n = zcow_pwrite(f, buf, 128 << 10, i);

		ret = n < 0 ? (int)n : 0;
	}
	if (!ret)
		ret = zcow_fsync(f);
	seq_s = zcow_now_sec() - t0;
	a = zcow_close(f);
	if (!ret)
		ret = a;
	f = NULL;
	if (ret)
		goto out;
	printf("seq 128KiB: %" PRIu64 " MiB in %.3f s = %.2f GB/s (%.0f writes/s)\n",
	       seq_bytes >> 20, seq_s, (double)seq_bytes / seq_s / 1e9,
	       (double)seq_bytes / (128 << 10) / seq_s);
	ret = zcow_unlink(fs, "/seq");
	if (!ret)
		ret = zcow_sync(fs);
	if (!ret)
		ret = zcow_statfs(fs, &st);
	if (!ret) {
		printf("after delete + sync: zone_unusable %" PRIu64 " MiB, sim memory %" PRIu64 " MiB\n",
		       st.zone_unusable >> 20,
		       zsim_mem_bytes(zsim_from_dev(dev)) >> 20);
	}
	if (!ret)
		ret = zcow_create(fs, "/rand", &f);
	if (!ret)
		ret = zcow_truncate(f, file);
	if (ret)
		goto out;
	t0 = zcow_now_sec();
	for (i = 0; i < nr_rand && !ret; i++) {
		uint64_t off = zcow_rand64(&rng) % (file / 4096) * 4096;
		int64_t n = zcow_pwrite(f, buf, 4096, off);

		ret = n < 0 ? (int)n : 0;
	}
	if (!ret)
		ret = zcow_fsync(f);
	rand_s = zcow_now_sec() - t0;
	if (!ret)
		ret = zcow_statfs(fs, &st);
	if (ret)
		goto out;
	printf("rand 4KiB: %" PRIu64 " writes in %.3f s = %.0f writes/s (%.2f GB/s)\n",
	       nr_rand, rand_s, (double)nr_rand / rand_s,
	       (double)nr_rand * 4096 / rand_s / 1e9);
	zcow_fs_info(fs, &info);
	printf("commits: %" PRIu64 ", nodes written: %" PRIu64 ", zone_unusable: %" PRIu64 " MiB, appends: %" PRIu64 "\n",
	       info.commits.nr_commits, info.commits.nodes_written,
	       st.zone_unusable >> 20, st.nr_appends);
out:
	if (f && (a = zcow_close(f)) && !ret)
		ret = a;
	free(buf);
	return bench_fs_end("bench-fs", NULL, fs, dev, ret);
}
