// SPDX-License-Identifier: MIT
/*
 * Reclaim experiments on small zones (docs/reclaim-experiments-small.md),
 * through the public API only (include/zcow.h), on any device spec:
 *   zcow bench-commits  N times {create a file (empty or SIZE bytes),
 *                       full commit or fsync}; a CSV row of the space
 *                       and reclaim counters every N ops.
 *   zcow bench-refill   fill to ENOSPC with files of one size, delete
 *                       every other file, refill, R rounds; a CSV row
 *                       per round with the space check at each ENOSPC.
 * Both make a new file system on DEV (its contents are lost), mount it
 * with -o MOUNT_OPTS and end with a verdict line.  Exit status: 0 when
 * the run ended (all ops done, or stopped by ENOSPC: a result, printed),
 * 1 on any other error or a --check problem, 2 on a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zcow.h"
#include "zdev.h"
#include "zlog.h"

#define MiB (1024.0 * 1024.0)
#define BUF_SIZE (1u << 20)	/* bytes per pwrite */

/* ---- shared: options, set-up, tear-down ---------------------------- */

/* A run: the devices, the mounted fs, the CSV, the data it writes. */
struct gc_run {
	const char *cmd;
	uint8_t *buf;		/* BUF_SIZE bytes of one value */
	struct zcow_devs devs;
	struct zcow_fs *fs;
	FILE *csv;
	const char *csv_path;
	uint64_t zone_room;	/* bytes a zone holds (the smallest capacity
				 * of the devices: every group's) */
	uint64_t nr_zones;	/* writable zones (outside the sb zones) */
	double t0;
};

/* Parse @mount_opts, fill r->buf with @byte, open @spec, mkfs, mount,
 * open the CSV.  Returns 0, 1 (printed) or 2 (bad mount options). */
static int gc_setup(struct gc_run *r, const char *spec,
		    const char *mount_opts, uint8_t byte)
{
	struct zcow_mount_opts mo = { 0 };
	struct zcow_mkfs_opts mko = { .seed = 1 };
	struct zcow_fs_info info;
	unsigned int i;
	int ret;

	r->buf = malloc(BUF_SIZE);
	if (!r->buf) {
		fprintf(stderr, "zcow %s: out of memory\n", r->cmd);
		return 1;
	}
	memset(r->buf, byte, BUF_SIZE);

	if (mount_opts && zcow_mount_opts_parse(mount_opts, &mo)) {
		fprintf(stderr, "zcow %s: bad mount options '%s'\n", r->cmd,
			mount_opts);
		return 2;
	}
	if (mo.read_only) {
		fprintf(stderr, "zcow %s: a read-only mount cannot run it\n",
			r->cmd);
		return 2;
	}
	ret = open_devs(r->cmd, spec, &r->devs);
	if (ret)
		return ret;
	ret = zcow_mkfs_devs(r->devs.dev, r->devs.nr, &mko);
	if (ret) {
		fprintf(stderr, "zcow %s: mkfs: %s\n", r->cmd, strerror(-ret));
		return 1;
	}
	ret = mount_devs(r->cmd, &r->devs, &mo, &r->fs);
	if (ret) {
		fprintf(stderr, "zcow %s: mount: %s\n", r->cmd, strerror(-ret));
		return 1;
	}
	zcow_fs_info(r->fs, &info);
	r->zone_room = UINT64_MAX;
	for (i = 0; i < r->devs.nr; i++) {
		const struct zdev_info *di = &r->devs.dev[i]->info;
		uint64_t room = di->zone_capacity ? di->zone_capacity :
						    di->zone_size;

		if (room < r->zone_room)
			r->zone_room = room;
	}
	r->nr_zones = info.writable_bytes / r->devs.dev[0]->info.zone_size;
	if (r->csv_path) {
		r->csv = fopen(r->csv_path, "w");
		if (!r->csv) {
			fprintf(stderr, "zcow %s: cannot write %s: %s\n",
				r->cmd, r->csv_path, strerror(errno));
			return 1;
		}
	}
	r->t0 = zcow_now_sec();
	return 0;
}

static void report_problem(void *arg, const char *msg)
{
	fprintf(stderr, "zcow %s: check: %s\n", (const char *)arg, msg);
}

/* --check: the checker on the committed state; returns problems (or 1
 * on an error of its own). */
static int gc_check(struct gc_run *r)
{
	int n;

	if (zcow_fs_error(r->fs)) {
		printf("check: skipped (a commit failed: %s)\n",
		       strerror(-zcow_fs_error(r->fs)));
		return 0;
	}
	n = zcow_commit(r->fs);
	if (n) {
		fprintf(stderr, "zcow %s: commit before check: %s\n", r->cmd,
			strerror(-n));
		return 1;
	}
	n = zcow_check(r->fs, report_problem, (void *)r->cmd);
	if (n < 0) {
		fprintf(stderr, "zcow %s: check: %s\n", r->cmd, strerror(-n));
		return 1;
	}
	printf("check: %d problems\n", n);
	return n;
}

/* Unmount (a fs whose commit failed is freed without one), close the CSV
 * and the device.  Returns @status, or 1 if any of them failed. */
static int gc_end(struct gc_run *r, int status)
{
	int ret;

	free(r->buf);
	if (r->fs) {
		bool failed = zcow_fs_error(r->fs) != 0;

		ret = zcow_unmount(r->fs);
		if (ret && !failed) {
			fprintf(stderr, "zcow %s: unmount: %s\n", r->cmd,
				strerror(-ret));
			status = 1;
		}
	}
	if (r->csv && fclose(r->csv)) {
		fprintf(stderr, "zcow %s: writing %s failed\n", r->cmd,
			r->csv_path);
		status = 1;
	}
	return close_devs(&r->devs, status);
}

/* Zone-unusable bytes of one space type (capacity gaps included, as btrfs
 * counts them). */
static uint64_t unusable(const struct zcow_fs_info *info, int t)
{
	return info->space[t].zone_unusable;
}

static uint64_t unusable_all(const struct zcow_fs_info *info)
{
	return unusable(info, ZCOW_FS_SPACE_DATA) +
	       unusable(info, ZCOW_FS_SPACE_METADATA) +
	       unusable(info, ZCOW_FS_SPACE_SYSTEM);
}

/* Write @size bytes of @buf into a new file @name.  Returns 0 or -errno
 * (a partly written file stays). */
static int put_file(struct zcow_fs *fs, const char *name, const void *buf,
		    uint64_t size, bool do_fsync)
{
	struct zcow_file *f;
	uint64_t off;
	int ret, r;

	ret = zcow_create(fs, name, &f);
	if (ret)
		return ret;
	for (off = 0; off < size && !ret; off += BUF_SIZE) {
		uint64_t n = size - off < BUF_SIZE ? size - off : BUF_SIZE;
		int64_t w = zcow_pwrite(f, buf, n, off);

		ret = w < 0 ? (int)w : 0;
	}
	if (!ret && do_fsync)
		ret = zcow_fsync(f);
	r = zcow_close(f);
	return ret ? ret : r;
}

/* ---- bench-commits -------------------------------------------------- */

#define COMMITS_HELP                                                          \
	"usage: zcow bench-commits [-o MOUNT_OPTS] [--ops N] [--size BYTES]\n" \
	"                          [--sync commit|fsync] [--every N] [--csv FILE]\n" \
	"                          [--check] DEV\n\n"                          \
	"Small commits on a new file system on DEV (mkfs: its contents are lost):\n" \
	"N times {create file /fNNNNNNN, write BYTES into it (0: empty), then a\n" \
	"full commit (--sync commit: zcow_sync) or zcow_fsync (--sync fsync; a\n" \
	"full commit with -o treelog=off)}.  Stops at the first error; ENOSPC is\n" \
	"a result (exit 0), any other error exits 1.\n"                       \
	"  --ops N        operations (default 100000)\n"                       \
	"  --size BYTES   bytes per file, 0 or a multiple of 4 KiB up to 1 MiB (default 0)\n" \
	"  --sync MODE    commit (default) or fsync\n"                          \
	"  --every N      a CSV row every N ops (default 1000)\n"               \
	"  --csv FILE     write the rows: ops, zone_unusable per type, share of\n" \
	"                 the writable bytes, free zones, reclaim counters\n"   \
	"  --check        run zcow check on the committed state at the end\n"  \
	"Verdict: \"completed K of N ops\" or \"stopped by ENOSPC at op K of N\",\n" \
	"the largest and the final unusable share, and what reclaim did.\n"

/* The rows' columns (one sample). */
static void commits_csv_head(FILE *csv)
{
	fprintf(csv, "ops,commits,data_used,meta_used,data_total,meta_total,"
		     "unusable_data,unusable_meta,unusable_sys,unusable,"
		     "unusable_share,free_zones,groups_relocated,"
		     "data_groups_relocated,meta_groups_relocated,"
		     "reloc_data_bytes,reloc_meta_bytes,zones_reset,wall_s\n");
}

/* The largest unusable share seen and where. */
struct commits_peak {
	double share;
	uint64_t ops, data, meta;
	uint64_t min_free;
};

static int commits_sample(struct gc_run *r, uint64_t ops,
			  struct commits_peak *pk)
{
	struct zcow_fs_info info;
	const struct zcow_reclaim_stats *rs = &info.reclaim_stats;
	uint64_t u;
	double share;

	zcow_fs_info(r->fs, &info);
	u = unusable_all(&info);
	share = info.writable_bytes ? (double)u / info.writable_bytes : 0;
	if (share > pk->share) {
		pk->share = share;
		pk->ops = ops;
		pk->data = unusable(&info, ZCOW_FS_SPACE_DATA);
		pk->meta = unusable(&info, ZCOW_FS_SPACE_METADATA);
	}
	if (info.nr_free_zones < pk->min_free)
		pk->min_free = info.nr_free_zones;
	if (!r->csv)
		return 0;
	fprintf(r->csv,
		"%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f\n",
		ops, info.commits.nr_commits,
		info.space[ZCOW_FS_SPACE_DATA].used,
		info.space[ZCOW_FS_SPACE_METADATA].used +
			info.space[ZCOW_FS_SPACE_SYSTEM].used,
		info.space[ZCOW_FS_SPACE_DATA].total,
		info.space[ZCOW_FS_SPACE_METADATA].total,
		unusable(&info, ZCOW_FS_SPACE_DATA),
		unusable(&info, ZCOW_FS_SPACE_METADATA),
		unusable(&info, ZCOW_FS_SPACE_SYSTEM), u, share,
		info.nr_free_zones, rs->groups_relocated, rs->data_groups,
		rs->meta_groups, rs->data_bytes, rs->meta_bytes,
		rs->zones_reset, zcow_now_sec() - r->t0);
	return ferror(r->csv) ? -EIO : 0;
}

int cmd_bench_commits(int argc, char **argv)
{
	uint64_t ops = 100000, size = 0, every = 1000, done = 0, i;
	const char *mount_opts = NULL, *sync = "commit", *spec;
	bool do_check = false, is_fsync;
	struct gc_run r = { .cmd = "bench-commits" };
	const struct zcow_opt opts[] = {
		{ "-o", ZOPT_STR, &mount_opts, false },
		{ "--ops", ZOPT_U64, &ops, true },
		{ "--size", ZOPT_SIZE, &size, false },
		{ "--sync", ZOPT_STR, &sync, false },
		{ "--every", ZOPT_U64, &every, true },
		{ "--csv", ZOPT_STR, &r.csv_path, false },
		{ "--check", ZOPT_FLAG, &do_check, false },
		{ NULL, ZOPT_FLAG, NULL, false },
	};
	struct commits_peak pk = { .min_free = UINT64_MAX };
	struct zcow_fs_info info;
	const struct zcow_reclaim_stats *rs = &info.reclaim_stats;
	int ret, status = 0;
	char name[32];
	double wall;

	ret = zcow_opt_parse(r.cmd, COMMITS_HELP, opts, argc, argv, &spec);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (ops > 99999999) {
		fprintf(stderr, "zcow bench-commits: --ops %" PRIu64 ": at most 99999999\n",
			ops);
		return 2;
	}
	if (size % 4096 || size > BUF_SIZE) {
		fprintf(stderr, "zcow bench-commits: --size %" PRIu64 ": 0 or a multiple of 4 KiB up to 1 MiB\n",
			size);
		return 2;
	}
	if (strcmp(sync, "commit") && strcmp(sync, "fsync")) {
		fprintf(stderr, "zcow bench-commits: --sync '%s': expected commit or fsync\n",
			sync);
		return 2;
	}
	is_fsync = !strcmp(sync, "fsync");
	if (!getenv("ZCOW_LOG"))
		zlog_set_level(ZLOG_ERR);
	ret = gc_setup(&r, spec, mount_opts, 0x6b);
	if (ret)
		return gc_end(&r, ret);
	if (r.csv)
		commits_csv_head(r.csv);
	ret = commits_sample(&r, 0, &pk);
	for (i = 0; i < ops && !ret; i++) {
		snprintf(name, sizeof(name), "/f%08" PRIu64, i);
		ret = put_file(r.fs, name, r.buf, size, is_fsync);
		if (!ret && !is_fsync)
			ret = zcow_sync(r.fs);
		if (ret)
			break;
		done++;
		if (done % every == 0 || done == ops)
			ret = commits_sample(&r, done, &pk);
	}
	wall = zcow_now_sec() - r.t0;
	if (ret == -ENOSPC)
		commits_sample(&r, done, &pk);
	zcow_fs_info(r.fs, &info);
	if (ret == -ENOSPC)
		printf("stopped by ENOSPC at op %" PRIu64 " of %" PRIu64,
		       done + 1, ops);
	else if (!ret)
		printf("completed %" PRIu64 " of %" PRIu64 " ops", done, ops);
	else {
		fprintf(stderr, "zcow bench-commits: op %" PRIu64 ": %s\n",
			done + 1, strerror(-ret));
		status = 1;
		printf("failed at op %" PRIu64 " of %" PRIu64, done + 1, ops);
	}
	printf(" (%s, size %" PRIu64 ", %s); unusable max %.1f%% at op %" PRIu64
	       " (data %.1f MiB, metadata %.1f MiB), final %.1f%% (data %.1f MiB,"
	       " metadata %.1f MiB); free zones min %" PRIu64 ", final %" PRIu64
	       "; groups relocated %" PRIu64 " (data %" PRIu64 ", metadata %"
	       PRIu64 "), bytes relocated %.1f MiB (data %.1f, metadata %.1f),"
	       " zones reset %" PRIu64 "; commits %" PRIu64 "; wall %.1f s\n",
	       zcow_reclaim_name(info.reclaim), size, sync, pk.share * 100,
	       pk.ops, pk.data / MiB, pk.meta / MiB,
	       info.writable_bytes ?
		       100.0 * unusable_all(&info) / info.writable_bytes :
		       0.0,
	       unusable(&info, ZCOW_FS_SPACE_DATA) / MiB,
	       unusable(&info, ZCOW_FS_SPACE_METADATA) / MiB, pk.min_free,
	       info.nr_free_zones, rs->groups_relocated, rs->data_groups,
	       rs->meta_groups, (rs->data_bytes + rs->meta_bytes) / MiB,
	       rs->data_bytes / MiB, rs->meta_bytes / MiB, rs->zones_reset,
	       info.commits.nr_commits, wall);
	if (do_check && (status == 0) && gc_check(&r))
		status = 1;
	return gc_end(&r, status);
}

/* ---- bench-refill --------------------------------------------------- */

#define REFILL_HELP                                                           \
	"usage: zcow bench-refill [-o MOUNT_OPTS] [--rounds N] [--file-size BYTES]\n" \
	"                         [--csv FILE] [--check] DEV\n\n"              \
	"Fill, delete, refill on a new file system on DEV (mkfs: its contents\n" \
	"are lost): round 0 fills it with files of BYTES until ENOSPC (the\n"  \
	"file that hit it is removed); each of rounds 1..N deletes every other\n" \
	"live file (oldest first), commits and fills again to ENOSPC.  At each\n" \
	"ENOSPC, after a commit, the space check (docs/reclaim-experiments-small.md):\n" \
	"  slack = C - (L + M + S + R) - A\n"                                   \
	"C writable bytes (zones x capacity), L live data, M the metadata\n"   \
	"groups' zones, S the system groups' zones, R the free zones held back\n" \
	"(metadata reserve, data relocation zone), A one zone per active data\n" \
	"slot (a write is never split across zones); ENOSPC is justified when\n" \
	"slack <= 0.\n"                                                         \
	"  --rounds N        delete/refill rounds after the first fill (default 5)\n" \
	"  --file-size BYTES 4 KiB..64 MiB, a multiple of 4 KiB (default 256k)\n" \
	"  --csv FILE        one row per round\n"                               \
	"  --check           run zcow check on the committed state at the end,\n" \
	"                    and fail (exit 1) on an ENOSPC with room left\n" \
	"                    (slack > 0 in some round)\n"

struct refill_round {
	uint64_t deleted, freed;	/* files and bytes deleted */
	uint64_t files, filled;		/* files and bytes written */
	int64_t slack;
};

/* Fill with files /rNNNNNNN of @size until ENOSPC; the ids of the files
 * written are appended to @ids.  Returns 0 (ENOSPC reached) or -errno. */
static int refill_fill(struct gc_run *r, const void *buf, uint64_t size,
		       uint64_t **ids, uint64_t *nr, uint64_t *cap,
		       uint64_t *next_id, struct refill_round *rd)
{
	char name[32];
	int ret;

	for (;;) {
		snprintf(name, sizeof(name), "/r%08" PRIu64, *next_id);
		ret = put_file(r->fs, name, buf, size, false);
		if (ret == -ENOSPC) {
			/* The file that hit it goes (if it was created). */
			ret = zcow_unlink(r->fs, name);
			if (ret && ret != -ENOENT)
				return ret;
			(*next_id)++;
			return zcow_sync(r->fs);
		}
		if (ret)
			return ret;
		if (*nr == *cap) {
			uint64_t n = *cap ? *cap * 2 : 1024;
			uint64_t *p = realloc(*ids, n * sizeof(*p));

			if (!p)
				return -ENOMEM;
			*ids = p;
			*cap = n;
		}
		(*ids)[(*nr)++] = (*next_id)++;
		rd->files++;
		rd->filled += size;
		if (*next_id > 99999999)
			return -EOVERFLOW;
	}
}

/* Delete every other file of @ids (positions 0, 2, 4, ...), keep the
 * rest in order, commit. */
static int refill_delete(struct gc_run *r, uint64_t size, uint64_t *ids,
			 uint64_t *nr, struct refill_round *rd)
{
	uint64_t i, k = 0;
	char name[32];
	int ret;

	for (i = 0; i < *nr; i++) {
		if (i % 2) {
			ids[k++] = ids[i];
			continue;
		}
		snprintf(name, sizeof(name), "/r%08" PRIu64, ids[i]);
		ret = zcow_unlink(r->fs, name);
		if (ret)
			return ret;
		rd->deleted++;
		rd->freed += size;
	}
	*nr = k;
	return zcow_sync(r->fs);
}

static int refill_row(struct gc_run *r, unsigned int round,
		      struct refill_round *rd)
{
	struct zcow_fs_info info;
	const struct zcow_reclaim_stats *rs = &info.reclaim_stats;
	uint64_t z = r->zone_room, c, a, l, m, mz, s, res, sys_groups;
	double fit;

	zcow_fs_info(r->fs, &info);
	sys_groups = info.space[ZCOW_FS_SPACE_SYSTEM].nr_groups;
	c = r->nr_zones * z;
	a = (uint64_t)info.data_zones * z;
	l = info.space[ZCOW_FS_SPACE_DATA].used;
	m = info.space[ZCOW_FS_SPACE_METADATA].used;
	mz = info.space[ZCOW_FS_SPACE_METADATA].total;
	s = sys_groups * z;
	res = (info.nr_meta_reserve_zones + info.nr_reloc_held_zones) * z;
	/* slack: room left beyond live data and what data cannot use; the
	 * open data zones may strand up to a zone each (a write is never
	 * split across zones), so ENOSPC is justified when slack <= a. */
	rd->slack = (int64_t)c - (int64_t)(l + mz + s + res) - (int64_t)a;
	fit = rd->freed ? 100.0 * rd->filled / rd->freed : 0;
	printf("round %u: deleted %" PRIu64 " files (%.1f MiB), filled %" PRIu64
	       " files (%.1f MiB, %.1f%% of the freed); at ENOSPC: live data %.1f MiB,"
	       " metadata %.1f MiB, free zones %" PRIu64 " (reserve %" PRIu64
	       ", relocation %" PRIu64 "), system groups %" PRIu64
	       ", unusable data %.1f MiB metadata %.1f MiB; slack %.1f MiB\n",
	       round, rd->deleted, rd->freed / MiB, rd->files,
	       rd->filled / MiB, fit, l / MiB, m / MiB, info.nr_free_zones,
	       info.nr_meta_reserve_zones, info.nr_reloc_held_zones,
	       sys_groups, unusable(&info, ZCOW_FS_SPACE_DATA) / MiB,
	       unusable(&info, ZCOW_FS_SPACE_METADATA) / MiB,
	       rd->slack / MiB);
	if (!r->csv)
		return 0;
	fprintf(r->csv,
		"%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%.3f\n",
		round, rd->deleted, rd->freed, rd->files, rd->filled, fit, l, m,
		info.nr_free_zones, info.nr_meta_reserve_zones,
		info.nr_reloc_held_zones, sys_groups, (uint64_t)info.data_zones,
		unusable(&info, ZCOW_FS_SPACE_DATA),
		unusable(&info, ZCOW_FS_SPACE_METADATA), c, z, a, rd->slack,
		rs->groups_relocated, rs->data_bytes + rs->meta_bytes,
		rs->zones_reset, zcow_now_sec() - r->t0);
	return ferror(r->csv) ? -EIO : 0;
}

int cmd_bench_refill(int argc, char **argv)
{
	uint64_t rounds = 5, size = 256 << 10, *ids = NULL, nr = 0, cap = 0;
	uint64_t next_id = 0, min_fit_round = 0, max_slack_round = 0;
	const char *mount_opts = NULL, *spec;
	bool do_check = false;
	struct gc_run r = { .cmd = "bench-refill" };
	const struct zcow_opt opts[] = {
		{ "-o", ZOPT_STR, &mount_opts, false },
		{ "--rounds", ZOPT_U64, &rounds, false },
		{ "--file-size", ZOPT_SIZE, &size, false },
		{ "--csv", ZOPT_STR, &r.csv_path, false },
		{ "--check", ZOPT_FLAG, &do_check, false },
		{ NULL, ZOPT_FLAG, NULL, false },
	};
	struct refill_round rd;
	double min_fit = -1, fit;
	int64_t max_slack = INT64_MIN;
	unsigned int round;
	int ret, status = 0;

	ret = zcow_opt_parse(r.cmd, REFILL_HELP, opts, argc, argv, &spec);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (rounds > 1000) {
		fprintf(stderr, "zcow bench-refill: --rounds %" PRIu64 ": at most 1000\n",
			rounds);
		return 2;
	}
	if (!size || size % 4096 || size > (64u << 20)) {
		fprintf(stderr, "zcow bench-refill: --file-size %" PRIu64 ": a multiple of 4 KiB from 4 KiB to 64 MiB\n",
			size);
		return 2;
	}
	if (!getenv("ZCOW_LOG"))
		zlog_set_level(ZLOG_ERR);
	ret = gc_setup(&r, spec, mount_opts, 0x3c);
	if (ret)
		return gc_end(&r, ret);
	if (r.csv)
		fprintf(r.csv, "round,deleted_files,freed_bytes,filled_files,"
			       "filled_bytes,fit_pct,live_data,meta_used,"
			       "free_zones,meta_reserve_zones,reloc_held_zones,"
			       "system_groups,data_slots,unusable_data,"
			       "unusable_meta,capacity,zone_capacity,"
			       "slot_allowance,slack,groups_relocated,"
			       "bytes_relocated,zones_reset,wall_s\n");
	for (round = 0; round <= rounds && !ret; round++) {
		memset(&rd, 0, sizeof(rd));
		if (round)
			ret = refill_delete(&r, size, ids, &nr, &rd);
		if (!ret)
			ret = refill_fill(&r, r.buf, size, &ids, &nr, &cap,
					  &next_id, &rd);
		if (!ret)
			ret = refill_row(&r, round, &rd);
		if (ret)
			break;
		if (rd.slack > max_slack) {
			max_slack = rd.slack;
			max_slack_round = round;
		}
		fit = rd.freed ? 100.0 * rd.filled / rd.freed : 0;
		if (round && (min_fit < 0 || fit < min_fit)) {
			min_fit = fit;
			min_fit_round = round;
		}
	}
	if (ret) {
		fprintf(stderr, "zcow bench-refill: round %u: %s\n", round,
			strerror(-ret));
		status = 1;
		printf("failed in round %u of %" PRIu64, round, rounds);
	} else {
		printf("completed %" PRIu64 " rounds", rounds);
	}
	printf(" (file size %" PRIu64 " KiB); refill min %.1f%% of the freed"
	       " (round %" PRIu64 "); slack max %.1f MiB: ENOSPC %s; wall %.1f s\n",
	       size >> 10, min_fit < 0 ? 0.0 : min_fit, min_fit_round,
	       max_slack == INT64_MIN ? 0.0 : max_slack / MiB,
	       max_slack <= 0 ? "justified in every round" :
				"with room left (slack > 0)",
	       zcow_now_sec() - r.t0);
	if (do_check && !status && gc_check(&r))
		status = 1;
	/* An unjustified ENOSPC is a failure of the check, as a problem
	 * of the checker is. */
	if (do_check && max_slack > 0) {
		fprintf(stderr, "zcow bench-refill: check: round %" PRIu64
			": ENOSPC with room left (slack %.1f MiB)\n",
			max_slack_round, max_slack / MiB);
		status = 1;
	}
	free(ids);
	return gc_end(&r, status);
}
