// SPDX-License-Identifier: MIT
/*
 * zcow df, check, bench-meta: the metadata-engine commands.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "prng.h"
#include "zcow.h"
#include "zdev.h"
#include "zlog.h"
#include "zsim.h"

static void human(char *buf, size_t len, uint64_t v, bool raw)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	if (raw) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%.2f%s", d, units[u]);
}

/* Parse "[--raw] DEV" style arguments; returns 0, or an exit status. */
static int parse_dev_args(const char *cmd, const char *usage, int argc,
			  char **argv, const char **spec_ret, bool *raw_ret)
{
	int i;

	*spec_ret = NULL;
	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: zcow %s %s\n", cmd, usage);
			return -1;
		} else if (raw_ret && strcmp(argv[i], "--raw") == 0) {
			*raw_ret = true;
		} else if (argv[i][0] == '-' || *spec_ret) {
			fprintf(stderr, "zcow %s: unexpected argument '%s'\n",
				cmd, argv[i]);
			return 2;
		} else {
			*spec_ret = argv[i];
		}
	}
	if (!*spec_ret) {
		fprintf(stderr, "usage: zcow %s %s\n", cmd, usage);
		return 2;
	}
	return 0;
}

int cmd_df(int argc, char **argv)
{
	static const enum zcow_space_type order[] = {
		ZCOW_SPACE_DATA, ZCOW_SPACE_SYSTEM, ZCOW_SPACE_METADATA
	};
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_space_info info;
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	const char *spec;
	char a[32], b[32], c[32], d[32], e[32], f[32];
	bool raw = false;
	unsigned int i;
	int ret;

	ret = parse_dev_args("df", "[--raw] DEV", argc, argv, &spec, &raw);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (open_dev(spec, &dev))
		return 1;
	ret = zcow_mount(dev, &ro, &fs);
	if (ret) {
		fprintf(stderr, "zcow df: %s: %s\n", spec, strerror(-ret));
		return close_dev(dev, 1);
	}
	if (!fs->has_trees) {
		fprintf(stderr, "zcow df: %s: no trees\n", spec);
		zcow_unmount(fs);
		return close_dev(dev, 1);
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		zcow_space_info(fs, order[i], &info);
		human(a, sizeof(a), info.total, raw);
		human(b, sizeof(b), info.used, raw);
		human(c, sizeof(c), info.zone_unusable, raw);
		human(d, sizeof(d), info.reserved, raw);
		human(e, sizeof(e), info.pinned, raw);
		human(f, sizeof(f), info.readonly, raw);
		printf("%s, single: total=%s, used=%s, zone_unusable=%s, reserved=%s, pinned=%s, readonly=%s, groups=%" PRIu64 "\n",
		       zcow_space_name(order[i]), a, b, c, d, e, f,
		       info.nr_groups);
	}
	if (fs->sb_failed_mirrors)
		printf("superblock log: degraded, mirrors 0x%x cannot be written\n",
		       fs->sb_failed_mirrors);
	ret = zcow_unmount(fs);
	if (ret)
		fprintf(stderr, "zcow df: unmount: %s\n", strerror(-ret));
	return close_dev(dev, ret ? 1 : 0);
}

static void print_problem(void *arg, const char *msg)
{
	(void)arg;
	printf("ERROR: %s\n", msg);
}

int cmd_check(int argc, char **argv)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	const char *spec;
	int ret;

	ret = parse_dev_args("check", "DEV", argc, argv, &spec, NULL);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (open_dev(spec, &dev))
		return 1;
	ret = zcow_mount(dev, &ro, &fs);
	if (ret) {
		printf("ERROR: mount failed: %s\n", strerror(-ret));
		return close_dev(dev, 1);
	}
	printf("checking %s: generation %" PRIu64 ", %" PRIu64 " block groups\n",
	       spec, fs->generation, fs->nr_bgs);
	ret = zcow_check(fs, print_problem, NULL);
	if (ret < 0)
		printf("ERROR: check could not run: %s\n", strerror(-ret));
	else if (ret > 0)
		printf("found %d problem%s\n", ret, ret == 1 ? "" : "s");
	else
		printf("no problems found\n");
	if (zcow_unmount(fs) && !ret)
		ret = 1;
	return close_dev(dev, ret ? 1 : 0);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_bench_meta(int argc, char **argv)
{
	struct zsim_config cfg = { .nr_zones = 256, .zone_size = 64ULL << 20 };
	uint64_t items = 1000000, every = 10000, seed = 1, i, rng;
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	struct zdev_stats st;
	bool is_seq = false;
	double t0, t1;
	uint8_t val[16];
	int ret, a;

	for (a = 1; a < argc; a++) {
		if (is_help(argv[a])) {
			printf("usage: zcow bench-meta [--items N] [--commit-every N] [--seq] [--seed N]\n"
			       "Insert N items (16-byte values, random keys unless --seq) into the fs\n"
			       "tree on an in-memory simulator, committing every N items; report\n"
			       "nodes written per commit and wall-clock time.\n");
			return 0;
		} else if (strcmp(argv[a], "--items") == 0 && a + 1 < argc) {
			if (zdev_parse_u64(argv[++a], &items))
				return 2;
		} else if (strcmp(argv[a], "--commit-every") == 0 &&
			   a + 1 < argc) {
			if (zdev_parse_u64(argv[++a], &every) || !every)
				return 2;
		} else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc) {
			if (zdev_parse_u64(argv[++a], &seed))
				return 2;
		} else if (strcmp(argv[a], "--seq") == 0) {
			is_seq = true;
		} else {
			fprintf(stderr, "zcow bench-meta: unexpected argument '%s'\n",
				argv[a]);
			return 2;
		}
	}
	zlog_set_level(ZLOG_WARN);
	ret = zsim_create(&cfg, &dev);
	if (!ret)
		ret = zcow_mkfs(dev, NULL);
	if (!ret)
		ret = zcow_mount(dev, NULL, &fs);
	if (ret) {
		fprintf(stderr, "zcow bench-meta: setup failed: %s\n",
			strerror(-ret));
		if (dev)
			zdev_close(dev);
		return 1;
	}
	rng = seed;
	t0 = now_sec();
	for (i = 0; i < items && !ret; i++) {
		struct zcow_key key = { 256, ZCOW_INODE_ITEM_KEY, 0 };

		key.objectid = is_seq ? 256 + i : zcow_rand64(&rng) >> 8;
		memcpy(val, &i, sizeof(i));
		memcpy(val + 8, &key.objectid, 8);
		ret = zcow_tree_insert(&fs->fs_tree, &key, val, sizeof(val));
		if (ret == -EEXIST)
			ret = 0;
		if (!ret && (i + 1) % every == 0)
			ret = zcow_commit(fs);
	}
	if (!ret)
		ret = zcow_commit(fs);
	t1 = now_sec();
	if (ret) {
		fprintf(stderr, "zcow bench-meta: failed after %" PRIu64 " items: %s\n",
			i, strerror(-ret));
		zcow_unmount(fs);
		zdev_close(dev);
		return 1;
	}
	zdev_get_stats(dev, &st);
	printf("items=%" PRIu64 " keys=%s commit_every=%" PRIu64 " nodesize=%u\n",
	       items, is_seq ? "sequential" : "random", every, fs->nodesize);
	printf("commits=%" PRIu64 " nodes_written=%" PRIu64 " nodes_per_commit=%.1f last_commit_nodes=%" PRIu64 " redirtied=%" PRIu64 " meta_write_cmds=%" PRIu64 " max_rounds=%" PRIu64 "\n",
	       fs->cstats.nr_commits, fs->cstats.nodes_written,
	       fs->cstats.nr_commits ? (double)fs->cstats.nodes_written /
					       fs->cstats.nr_commits :
				       0.0,
	       fs->cstats.last_nodes_written, fs->cstats.nodes_redirtied,
	       fs->cstats.write_cmds, fs->cstats.max_rounds);
	printf("meta_bytes_written=%" PRIu64 " wall_seconds=%.3f items_per_second=%.0f\n",
	       st.bytes[ZDEV_CLASS_META][ZDEV_OP_WRITE], t1 - t0,
	       (double)items / (t1 - t0));
	ret = zcow_unmount(fs);
	if (ret)
		fprintf(stderr, "zcow bench-meta: unmount: %s\n",
			strerror(-ret));
	return close_dev(dev, ret ? 1 : 0);
}
