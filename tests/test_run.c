// SPDX-License-Identifier: MIT
/*
 * The runner end to end: raw-device runs in simulated time, determinism of
 * summary.json, the fs target (counters, determinism, append vs write),
 * the seed-treelog workload (fsync counts, namespace operations, the
 * files left behind), profile=instant with time_based, and sweep.py +
 * plot.py.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"
#include "run.h"
#include "zcow.h"
#include "zdev.h"
#include "tests.h"

#define RES "/tmp/zcow-test-run"

static double json_num(const char *json, const char *key)
{
	const char *p = strstr(json, key);

	ck_assert_msg(p != NULL, "no %s", key);
	return strtod(p + strlen(key) + 2, NULL);
}

/* json_num() of @key after the first @section of @json. */
static double json_num_in(const char *json, const char *section,
			  const char *key)
{
	const char *p = strstr(json, section);

	ck_assert_msg(p != NULL, "no %s", section);
	return json_num(p, key);
}

static char *run_raw(const char *const *sets, unsigned int nr)
{
	return zcow_test_scenario_ok("configs/raw-randwrite-4k.scenario",
				     sets, nr, RES);
}

/* Two runs of one scenario (result folders @d1, @d2, freed here): the same
 * summary (wall-clock fields aside) and byte-identical intervals.csv. */
static void assert_same_runs(char *d1, char *d2)
{
	char *s1 = zcow_test_summary_no_wall(d1),
	     *s2 = zcow_test_summary_no_wall(d2);
	char p1[1024], p2[1024], *i1, *i2;

	ck_assert_str_ne(d1, d2);
	ck_assert_str_eq(s1, s2);
	snprintf(p1, sizeof(p1), "%s/intervals.csv", d1);
	snprintf(p2, sizeof(p2), "%s/intervals.csv", d2);
	i1 = zcow_test_read_path(p1);
	i2 = zcow_test_read_path(p2);
	ck_assert_str_eq(i1, i2);
	free(i1);
	free(i2);
	free(s1);
	free(s2);
	free(d1);
	free(d2);
}

START_TEST(test_run_same_scenario_twice_is_byte_identical)
{
	const char *sets[] = { "runtime=20ms", "numjobs=4" };
	char *d1 = run_raw(sets, 2), *d2 = run_raw(sets, 2);

	assert_same_runs(d1, d2);
}
END_TEST

START_TEST(test_run_raw_16_jobs_writes_182k_appends_132k)
{
	const char *w[] = { "runtime=50ms", "numjobs=16" };
	const char *a[] = { "runtime=50ms", "numjobs=16", "zone_append=on" };
	char *dw = run_raw(w, 2), *da = run_raw(a, 3);
	char *sw = zcow_test_summary_no_wall(dw),
	     *sa = zcow_test_summary_no_wall(da);
	double iw = json_num(sw, "\"iops\""), ia = json_num(sa, "\"iops\"");

	ck_assert_msg(iw > 182000 * 0.99 && iw < 182000 * 1.01, "%f", iw);
	ck_assert_msg(ia > 132000 * 0.99 && ia < 132000 * 1.01, "%f", ia);
	ck_assert(strstr(sw, "\"zone_unusable\": 0"));
	ck_assert(strstr(sw, "\"git_commit\": "));
	free(sw);
	free(sa);
	free(dw);
	free(da);
}
END_TEST

START_TEST(test_run_raw_1_job_write_qd1_85k)
{
	const char *w[] = { "runtime=50ms", "numjobs=1" };
	char *dw = run_raw(w, 2), *sw = zcow_test_summary_no_wall(dw);
	double iw = json_num(sw, "\"iops\"");

	ck_assert_msg(iw > 85100 * 0.99 && iw < 85100 * 1.01, "%f", iw);
	free(sw);
	free(dw);
}
END_TEST

START_TEST(test_run_seq_128k_reaches_bandwidth_ceiling)
{
	const char *sets[] = { "runtime=50ms" };
	char *dir = NULL, *s;
	double bw;

	ck_assert_int_eq(zrun_scenario("configs/raw-seqwrite-128k.scenario",
				       sets, 1, RES, true, &dir), 0);
	s = zcow_test_summary_no_wall(dir);
	bw = json_num(s, "\"bw_mib_per_s\"");
	ck_assert_msg(bw > 1146 * 0.99 && bw < 1146 * 1.01, "%f", bw);
	free(s);
	free(dir);
}
END_TEST

START_TEST(test_run_zone_reset_gc_example_resets_zones)
{
	const char *sets[] = { "runtime=10" };
	char *dir = NULL, *s;

	ck_assert_int_eq(zrun_scenario(
		"configs/fio-examples/zbd-rand-write-zone-reset-gc.scenario",
		sets, 1, RES, true, &dir), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert(json_num(s, "\"zone_resets\"") > 0);
	free(s);
	free(dir);
}
END_TEST

static char *run_fs(const char *const *sets, unsigned int nr)
{
	return zcow_test_scenario_ok("configs/seed-zone-append.scenario",
				     sets, nr, RES);
}

START_TEST(test_run_fs_seed_counts_commits_bgs_and_exact_bytes)
{
	const char *sets[] = { "runtime=10ms", "numjobs=4" };
	char *d = run_fs(sets, 2), *s = zcow_test_summary_no_wall(d);
	double wr = json_num(s, "\"write_bytes\""), data;
	double sb, meta, log, wa;

	ck_assert(strstr(s, "\"target\": \"fs\""));
	/* end_fsync x 4: the first commits (it makes the tree-log's block
	 * group), the others find their files committed or log them. */
	ck_assert(json_num(s, "\"nr_fsyncs\"") == 4);
	ck_assert(json_num(s, "\"commits\"") >= 1);
	ck_assert(json_num(s, "\"nr_log_syncs\"") +
			  json_num(s, "\"nr_log_fallbacks\"") <= 4);
	ck_assert(json_num(s, "\"block_groups\"") >= 3);
	ck_assert(wr > 0);
	/* Every 4 KiB write is one 4 KiB data command, nothing else. */
	data = json_num(s, "\"data\"");
	ck_assert_msg(data == wr, "data %f != written %f", data, wr);
	sb = json_num(s, "\"sb\"");
	meta = json_num(s, "\"meta\"");
	log = json_num(s, "\"log\"");
	ck_assert(meta > 0 && sb > 0);
	wa = json_num(s, "\"write_amplification\"");
	ck_assert_msg(wa > (data + sb + meta + log) / wr - 1e-6 &&
		      wa < (data + sb + meta + log) / wr + 1e-6, "wa %f", wa);
	ck_assert(json_num(s, "\"append\"") * 4096 == data);
	free(s);
	free(d);
}
END_TEST

START_TEST(test_run_fs_same_scenario_twice_is_byte_identical)
{
	const char *sets[] = { "runtime=5ms", "numjobs=3", "zone_append=on" };
	char *d1 = run_fs(sets, 3), *d2 = run_fs(sets, 3);

	assert_same_runs(d1, d2);
}
END_TEST

/* 16 jobs over data_zones=4 (default) data block groups: plain writes
 * wait only for their own zone's write lock and reach the many-zone write
 * limit (~174K), appends stay at the device's append limit (~128K); with
 * one data zone (the seed) it was ~132K vs ~85K. */
START_TEST(test_run_fs_16_jobs_write_beats_append_over_4_zones)
{
	const char *a[] = { "runtime=10ms", "zone_append=on" };
	const char *w[] = { "runtime=10ms", "zone_append=off" };
	char *da = run_fs(a, 2), *dw = run_fs(w, 2);
	char *sa = zcow_test_summary_no_wall(da),
	     *sw = zcow_test_summary_no_wall(dw);
	double ia = json_num(sa, "\"iops\""), iw = json_num(sw, "\"iops\"");

	ck_assert_msg(iw / ia > 1.25 && iw / ia < 1.5, "%f / %f", ia, iw);
	ck_assert(json_num(sw, "\"write\"") > 0);
	free(sa);
	free(sw);
	free(da);
	free(dw);
}
END_TEST

/* profile=instant: a time_based job ends (1 us charged per operation). */
START_TEST(test_run_instant_time_based_ends)
{
	const char *sets[] = { "runtime=2ms", "numjobs=2",
			       "profile=instant" };
	char *d = run_fs(sets, 3), *s = zcow_test_summary_no_wall(d);

	ck_assert(json_num(s, "\"ios\"") > 0);
	free(s);
	free(d);
	d = run_raw(sets, 3);
	free(d);
}
END_TEST

/* docs/vm.md: a run that starts on zones a previous user left open hit
 * EOVERFLOW; both targets now make them inactive first. */
START_TEST(test_run_starts_on_zones_left_open)
{
	const char *img = "/tmp/zcow-test-run-open.img";
	static const char *const targets[] = { "raw", "fs" };
	char dev[256], buf[4096] = { 0 }, *dir = NULL;
	struct zdev *d;
	unsigned int t, z;
	FILE *f;

	for (t = 0; t < 2; t++) {
		unlink(img);
		snprintf(dev, sizeof(dev), "sim:image=%s,zones=32,"
			 "zone_size=8M,max_open=8,max_active=8", img);
		ck_assert_int_eq(zdev_open(dev, &d), 0);
		for (z = 0; z < 8; z++)	/* 8 active zones: the limit */
			ck_assert_int_eq(zdev_write(d, buf, sizeof(buf),
						    (uint64_t)(z + 16) << 23,
						    0, ZDEV_CLASS_OTHER), 0);
		zdev_close(d);
		f = fopen("/tmp/zcow-test-open.scenario", "w");
		fprintf(f, "[j]\nrw=randwrite\nbs=4k\nsize=%s\n%s"
			   "numjobs=2\ntime_based\nruntime=2ms\n"
			   "[zcow]\nprofile=zn540\ndevice=sim:image=%s\n"
			   "zone_append=on\n",
			(t & 1) ? "8m" : "64m", (t & 1) ? "" : "zonemode=zbd\n", img);
		fclose(f);
		ck_assert_msg(zrun_scenario("/tmp/zcow-test-open.scenario",
					    NULL, 0, RES, true, &dir) == 0,
			      "target %s (%u)", targets[t & 1], t);
		free(dir);
		dir = NULL;
	}
	unlink(img);
	unlink("/tmp/zcow-test-open.scenario");
}
END_TEST

/* A device without a timing model: rates over the wall time of the run. */
START_TEST(test_run_fs_on_file_device_rates_over_wall_time)
{
	const char *sets[] = { "runtime=3ms", "numjobs=2",
			       "device=file:/tmp/zcow-test-run.img,"
			       "zone_size=8M,size=128M,create" };
	char *d, *s;

	unlink("/tmp/zcow-test-run.img");
	d = run_fs(sets, 3);
	s = zcow_test_summary_no_wall(d);
	ck_assert(strstr(s, "\"rate_basis\": \"wall\""));
	ck_assert(strstr(s, "\"simulated\": false"));
	ck_assert(json_num(s, "\"iops\"") > 0);
	unlink("/tmp/zcow-test-run.img");
	free(s);
	free(d);
}
END_TEST

/* A random overwrite of 40 MiB on 24 zones of 4 MiB, @zcow_key added to
 * its [zcow] section: zrun_scenario()'s return, *dir_ret its folder. */
static int run_reclaim_scenario(const char *zcow_key, char **dir_ret)
{
	FILE *f = fopen("/tmp/zcow-test-reclaim.scenario", "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "[j]\nrw=randwrite\nbs=4k\nsize=40m\nloops=3\n"
		   "filename=big\n[zcow]\nprofile=instant\n"
		   "device=sim:zones=24,zone_size=4M\n%s", zcow_key);
	fclose(f);
	return zrun_scenario("/tmp/zcow-test-reclaim.scenario", NULL, 0, RES,
			     true, dir_ret);
}

/*
 * reclaim=, reclaim_threshold= and reclaim_high= are scenario keys: a
 * bad value is refused naming file, line and option; a 4 KiB random
 * overwrite of a file of about 60% of a small device runs three times
 * over with the default policy, and summary.json says what reclaim relocated;
 * intervals.csv carries the zone_unusable column.
 */
START_TEST(test_run_reclaim_keys_and_counters)
{
	char *dir = NULL, *s, path[1024], *iv;

	ck_assert_int_eq(run_reclaim_scenario("reclaim=sometimes\n", &dir),
			 -EINVAL);
	ck_assert_int_eq(run_reclaim_scenario("reclaim_threshold=50\n", &dir),
			 -EINVAL);
	ck_assert_int_eq(run_reclaim_scenario("reclaim_high=4\n", &dir),
			 -EINVAL);
	ck_assert_int_eq(run_reclaim_scenario("", &dir), 0);
	unlink("/tmp/zcow-test-reclaim.scenario");
	s = zcow_test_summary_no_wall(dir);
	ck_assert_msg(strstr(s, "\"reclaim\": {\"policy\": \"greedy\", "
				"\"threshold\": null, \"high_zones\": 6,"),
		      "%s", s);
	ck_assert(json_num(s, "\"groups_relocated\"") > 0);
	ck_assert(json_num(s, "\"data_bytes_relocated\"") > 0);
	ck_assert(json_num(s, "\"zones_reset\"") > 0);
	ck_assert(json_num(s, "\"reloc\"") > 0);
	ck_assert(json_num(s, "\"write_bytes\"") == 3.0 * 40 * 1048576);
	/* what cleaning cost per host byte, and the utilization the data
	 * cycled through (a 40 MiB file on about 70 MiB data could use) */
	ck_assert(json_num(s, "\"data_wa\"") > 1.0);
	ck_assert(json_num(s, "\"meta_per_host\"") > 0.0);
	ck_assert(json_num(s, "\"commits_per_gib\"") > 0.0);
	ck_assert(json_num(s, "\"data_utilization_end\"") > 0.4);
	ck_assert(json_num(s, "\"data_utilization_end\"") < 1.0);
	snprintf(path, sizeof(path), "%s/intervals.csv", dir);
	iv = zcow_test_read_path(path);
	ck_assert_ptr_nonnull(strstr(iv, ",wa,zone_unusable,data_wa,"
					 "data_utilization,commits\n"));
	free(iv);
	free(s);
	free(dir);
}
END_TEST

/*
 * replace_target=/replace_at=: a device replace while a job overwrites
 * its file: it starts at the given simulated time, copies every group,
 * finishes while the job runs, and summary.json says so; afterwards the
 * new device alone is the file system (check clean, the file's size),
 * the old one no longer mounts.  A replace on the raw target is refused.
 */
START_TEST(test_run_replace_during_overwrite)
{
	const char *src = "/tmp/zcow-test-rp-src.img";
	const char *tgt = "/tmp/zcow-test-rp-tgt.img";
	char *dir = NULL, *s, spec[256];
	struct zcow_fs *fs = NULL;
	struct zcow_stat st;
	struct zcow_file *file;
	struct zdev *dev;
	FILE *f;

	unlink(src);
	unlink(tgt);
	f = fopen("/tmp/zcow-test-rp.scenario", "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[j]\nrw=randwrite\nbs=64k\nsize=24m\nloops=4\n"
		   "filename=big\n[zcow]\nprofile=zn540\n"
		   "device=sim:zones=24,zone_size=4M,image=%s\n"
		   "replace_target=sim:zones=24,zone_size=4M,image=%s\n"
		   "replace_at=20ms\n", src, tgt);
	fclose(f);
	ck_assert_int_eq(zrun_scenario("/tmp/zcow-test-rp.scenario", NULL, 0,
				       RES, true, &dir), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert_msg(strstr(s, "\"finished\": true"), "%s", s);
	ck_assert(json_num(s, "\"start_s\"") == 0.02);
	ck_assert(json_num(s, "\"groups_copied\"") > 0);
	ck_assert(json_num(s, "\"bytes_copied\"") > 0);
	ck_assert(json_num(s, "\"replace\": ") >= 0);
	free(s);
	free(dir);

	snprintf(spec, sizeof(spec), "sim:image=%s", tgt);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDONLY, &file), 0);
	ck_assert_int_eq(zcow_fstat(file, &st), 0);
	ck_assert_uint_eq(st.size, 24 * 1048576);
	ck_assert_int_eq(zcow_close(file), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	snprintf(spec, sizeof(spec), "sim:image=%s", src);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), -ENOENT);
	zdev_close(dev);
	unlink(src);
	unlink(tgt);

	/* the raw target has no file system to replace under */
	f = fopen("/tmp/zcow-test-rp.scenario", "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[j]\nrw=write\nbs=64k\nsize=4m\nzonemode=zbd\n"
		   "[zcow]\nprofile=instant\ndevice=sim:zones=24,zone_size=4M\n"
		   "replace_target=sim:zones=24,zone_size=4M\n");
	fclose(f);
	ck_assert_int_eq(zrun_scenario("/tmp/zcow-test-rp.scenario", NULL, 0,
				       RES, true, &dir), -EINVAL);
	unlink("/tmp/zcow-test-rp.scenario");
}
END_TEST

/*
 * snapshot_interval=: read-only snapshots snap-1, snap-2, ... at every
 * interval of simulated time while the jobs run (300, 600, 900 ms of a
 * 1 s job: 3), snapshot_max= caps them (also by --set); summary.json
 * counts them and the data they keep (data_used above the run without
 * snapshots: the extents the job overwrote stay referenced); zcow subvol
 * list on the image the run leaves lists them.  The raw target, which
 * has no file system, refuses the key, naming file, line and option.
 */
#define SN_IMG "/tmp/zcow-test-snap.img"
#define SN_SCN "/tmp/zcow-test-snap.scenario"

static char *snap_run(const char *const *sets, unsigned int nr)
{
	char *dir = NULL, *err = NULL, *s;
	int ret;

	unlink(SN_IMG);
	ret = zcow_test_scenario(SN_SCN, "[j]\nrw=randwrite\nbs=64k\n"
				 "size=4m\nfilename=f\nrate=16m\n"
				 "time_based\nruntime=1s\n[zcow]\n"
				 "profile=zn540\ndevice=sim:zones=32,"
				 "zone_size=4M,image=" SN_IMG "\n",
				 sets, nr, RES, &dir, &err);
	ck_assert_msg(ret == 0, "run: %d %s", ret, err);
	free(err);
	s = zcow_test_summary_no_wall(dir);
	free(dir);
	return s;
}

START_TEST(test_run_snapshot_interval_takes_snapshots_while_jobs_run)
{
	const char *every[] = { "snapshot_interval=300ms" };
	const char *two[] = { "snapshot_interval=300ms", "snapshot_max=2" };
	char *s, *out = NULL, *err = NULL, *dir = NULL;
	double kept, plain;
	int ret;

	s = snap_run(NULL, 0);
	ck_assert_msg(strstr(s, "\"snapshots\": {\"interval_s\": null, "
				"\"max\": null, \"taken\": 0,"), "%s", s);
	plain = json_num_in(s, "\"snapshots\"", "\"data_used_bytes\"");
	free(s);

	s = snap_run(every, 1);
	ck_assert_msg(strstr(s, "\"snapshots\": {\"interval_s\": 0.300000, "
				"\"max\": null, \"taken\": 3,"), "%s", s);
	ck_assert_msg(strstr(s, "\"names\": [\"snap-1\", \"snap-2\", "
				"\"snap-3\"]"), "%s", s);
	kept = json_num_in(s, "\"snapshots\"", "\"data_used_bytes\"");
	ck_assert_msg(kept > plain, "with snapshots %.0f, without %.0f",
		      kept, plain);
	free(s);
	ret = zcow_test_run(&out, &err, "subvol", "list",
			    "sim:image=" SN_IMG, NULL);
	ck_assert_msg(ret == 0, "subvol list: %s", err);
	ck_assert_msg(strstr(out, "ID 256 gen ") &&
		      strstr(out, " top level 5 path snap-1\nID 257 gen ") &&
		      strstr(out, " top level 5 path snap-2\nID 258 gen ") &&
		      strstr(out, " top level 5 path snap-3\n"), "%s", out);
	ck_assert_msg(!strstr(out, "snap-4"), "%s", out);
	free(out);
	free(err);

	s = snap_run(two, 2);
	ck_assert_msg(strstr(s, "\"snapshots\": {\"interval_s\": 0.300000, "
				"\"max\": 2, \"taken\": 2,"), "%s", s);
	free(s);
	ret = zcow_test_run(&out, &err, "subvol", "list",
			    "sim:image=" SN_IMG, NULL);
	ck_assert_int_eq(ret, 0);
	ck_assert_msg(!strstr(out, "snap-3") && strstr(out, "path snap-2\n"),
		      "%s", out);
	free(out);
	free(err);
	unlink(SN_IMG);

	/* the raw target has no file system to snapshot */
	ret = zcow_test_scenario(SN_SCN, "[j]\nrw=write\nbs=64k\nsize=4m\n"
				 "zonemode=zbd\n[zcow]\nprofile=instant\n"
				 "device=sim:zones=24,zone_size=4M\n"
				 "snapshot_interval=10ms\n",
				 NULL, 0, RES, &dir, &err);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_msg(strstr(err, SN_SCN ":9: option 'snapshot_interval': a "
				  "snapshot is of the fs target's file "
				  "system; the raw target (zonemode=zbd "
				  "jobs) has none\n"), "%s", err);
	free(err);
	free(dir);
	/* a bad value names the key */
	ret = zcow_test_scenario(SN_SCN, "[j]\nrw=write\nsize=1m\n[zcow]\n"
				 "snapshot_interval=0\n",
				 NULL, 0, RES, &dir, &err);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_msg(strstr(err, SN_SCN ":5: option 'snapshot_interval': "
				  "not a time above 0 (e.g. 500ms, 2s)\n"),
		      "%s", err);
	free(err);
	free(dir);
	ret = zcow_test_scenario(SN_SCN, "[j]\nrw=write\nsize=1m\n[zcow]\n"
				 "snapshot_max=0\n",
				 NULL, 0, RES, &dir, &err);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_msg(strstr(err, SN_SCN ":5: option 'snapshot_max': "
				  "not a number of snapshots in 1..65535\n"),
		      "%s", err);
	free(err);
	free(dir);
	ret = zcow_test_scenario(SN_SCN, "[j]\nrw=write\nsize=1m\n[zcow]\n"
				 "snapshot_max=2\n",
				 NULL, 0, RES, &dir, &err);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_msg(strstr(err, SN_SCN ":5: option 'snapshot_max': caps "
				  "the snapshots of snapshot_interval, which "
				  "is not set\n"), "%s", err);
	free(err);
	free(dir);
}
END_TEST

START_TEST(test_run_bad_zcow_option_names_file_line)
{
	FILE *f = fopen("/tmp/zcow-test-bad.scenario", "w");
	char *dir = NULL;

	fprintf(f, "[j]\nzonemode=zbd\n[zcow]\nprofile=warp\n");
	fclose(f);
	ck_assert_int_eq(zrun_scenario("/tmp/zcow-test-bad.scenario", NULL,
				       0, RES, true, &dir), -EINVAL);
	unlink("/tmp/zcow-test-bad.scenario");
}
END_TEST

START_TEST(test_run_sweep_and_plot_write_png_svg_tables)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[2048];
	static const char *const files[] = {
		RES "/plot/iops.png", RES "/plot/iops.svg",
		RES "/plot/table.md", RES "/plot/table.csv",
		RES "/plot/wa_time.png", RES "/plot/wa_time.svg",
		RES "/plot/wa_time.csv", RES "/plot/iops_time.png",
		RES "/plot/iops_time.svg", RES "/plot/iops_time.csv",
	};
	struct stat st;
	size_t i;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set: run through make "
				   "test");
	snprintf(cmd, sizeof(cmd),
		 "rm -rf " RES "/sweep " RES "/plot && "
		 "python3 harness/sweep.py --zcow %s --results " RES "/sweep "
		 "--set runtime=10ms configs/raw-randwrite-4k.scenario "
		 "--grid numjobs=1,4 zone_append=on,off >/dev/null && "
		 "python3 harness/plot.py --out " RES "/plot --x numjobs "
		 "--series zone_append --wa-time --iops-time " RES "/sweep "
		 ">/dev/null",
		 bin);
	ck_assert_int_eq(system(cmd), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ck_assert_msg(stat(files[i], &st) == 0, "%s missing",
			      files[i]);
		ck_assert_msg(st.st_size > 0, "%s empty", files[i]);
	}
}
END_TEST

/* IOPS of the run of @sweep (sweep.csv: zone_append,layout,folder)
 * at @point ("on,btrfs-5.12"). */
static double sweep_iops(const char *sweep, const char *point)
{
	char path[1024], *text, *p, *s;
	double v;

	snprintf(path, sizeof(path), "%s/sweep.csv", sweep);
	text = zcow_test_read_path(path);
	p = strstr(text, point);
	ck_assert_msg(p && p[strlen(point)] == ',', "no %s", point);
	p += strlen(point) + 1;
	p[strcspn(p, "\r\n")] = '\0';	/* csv rows end in CRLF */
	s = zcow_test_summary_no_wall(p);
	v = json_num(s, "\"iops\"");
	free(s);
	free(text);
	return v;
}

/*
 * The seed experiment's plot: --series layout+label names the fs runs
 * "zcow append, layout=..." (the raw runs just "raw device"), --panel
 * layout draws the layouts side by side with the raw device in both,
 * the anchor is marked in its panel, and --ratio-at 16 tables each
 * append/write ratio at 16 jobs as the curve computes it.
 */
START_TEST(test_run_plot_layouts_side_by_side_with_ratios_at_16)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[4096], want[512], *md, *svg;
	double r[2];
	const char *lay[2] = { "btrfs-5.12", "zcow" };
	unsigned int i;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set: run through make "
				   "test");
	snprintf(cmd, sizeof(cmd),
		 "rm -rf " RES "/lsweep " RES "/lraw " RES "/lplot && "
		 "python3 harness/sweep.py --zcow %s --results " RES "/lsweep "
		 "--set runtime=10ms --set numjobs=16 "
		 "configs/seed-zone-append.scenario "
		 "--grid zone_append=on,off layout=btrfs-5.12,zcow >/dev/null "
		 "&& python3 harness/sweep.py --zcow %s --results " RES
		 "/lraw --set runtime=10ms configs/raw-randwrite-4k.scenario "
		 "--grid numjobs=16 >/dev/null && "
		 "python3 harness/plot.py --out " RES "/lplot --x numjobs "
		 "--series layout+label --panel layout "
		 "--ratio 'zcow append, layout=btrfs-5.12/zcow write, "
		 "layout=btrfs-5.12' "
		 "--ratio 'zcow append, layout=zcow/zcow write, layout=zcow' "
		 "--anchor 'zcow append, layout=btrfs-5.12/zcow write, "
		 "layout=btrfs-5.12@16=1.36:seed: append +36%%' "
		 "--ratio-at 16 " RES "/lsweep " RES "/lraw >/dev/null",
		 bin, bin);
	ck_assert_int_eq(system(cmd), 0);
	for (i = 0; i < 2; i++) {
		char on[32], off[32];

		snprintf(on, sizeof(on), "on,%s", lay[i]);
		snprintf(off, sizeof(off), "off,%s", lay[i]);
		r[i] = sweep_iops(RES "/lsweep", on) /
		       sweep_iops(RES "/lsweep", off);
	}
	/* one data group: append beats the one zone write lock */
	ck_assert_msg(r[0] > 1.3 && r[1] < 0.8, "%f %f", r[0], r[1]);
	md = zcow_test_read_path(RES "/lplot/ratio_at.md");
	snprintf(want, sizeof(want),
		 "| ratio | numjobs=16 |\n|---|---|\n"
		 "| zcow append, layout=btrfs-5.12 / zcow write, "
		 "layout=btrfs-5.12 | %.3f |\n"
		 "| zcow append, layout=zcow / zcow write, layout=zcow | "
		 "%.3f |\n", r[0], r[1]);
	ck_assert_str_eq(md, want);
	free(md);
	svg = zcow_test_read_path(RES "/lplot/iops.svg");
	ck_assert(strstr(svg, "layout=btrfs-5.12</text>"));
	ck_assert(strstr(svg, "layout=zcow</text>"));
	ck_assert(strstr(svg, "seed: append +36%</text>"));
	ck_assert(strstr(svg, ">raw device</text>"));
	free(svg);
}
END_TEST

/*
 * configs/gc-sustained.scenario on half its zones, 2 s: the fill (16 x
 * 88 MiB of the 1768 MiB a sequential fill of 64 such zones writes, cut
 * short by the runtime) fills most of the device, the 16 jobs' random writes
 * run out of free zones, reclaim relocates groups and resets their
 * zones, and no write ends in ENOSPC (zrun_scenario() returns 0).
 */
START_TEST(test_run_gc_sustained_reclaims_without_enospc)
{
	const char *sets[] = {
		"runtime=2s", "size=88m",
		"device=sim:zones=64,zone_size=64M,zone_cap=34M,max_open=14,"
		"max_active=14",
	};
	char *dir = NULL, *s;

	ck_assert_int_eq(zrun_scenario("configs/gc-sustained.scenario", sets,
				       3, RES, true, &dir), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert(strstr(s, "\"policy\": \"greedy\"") != NULL);
	ck_assert(json_num(s, "\"groups_relocated\"") > 0);
	ck_assert(json_num(s, "\"zones_reset\"") > 0);
	ck_assert(json_num(s, "\"data_bytes_relocated\"") > 0);
	/* The 2 s runtime ends the fill at about 63 MiB per job; the
	 * overwrite adds to it: the host wrote more than 16 x 80 MiB */
	ck_assert(json_num(s, "\"write_bytes\"") > 16.0 * 80 * 1048576);
	free(s);
	free(dir);
}
END_TEST

static char *run_treelog(const char *const *sets, unsigned int nr)
{
	return zcow_test_scenario_ok("configs/seed-treelog.scenario", sets, nr,
				     RES);
}

/*
 * configs/fsync-overwrite.scenario made small: a 16 MiB file filled
 * (end_fsync) and overwritten once with an fsync every 1024 writes on
 * 8 MiB zones: 5 fsyncs; the fill's end_fsync and one of the
 * overwrite's find their file's data in a data chunk of the running
 * transaction and commit (new_data_chunk), the other three write the
 * log (a data chunk is kept committed ahead once fsyncs use the log).
 * summary.json says so, cause by cause (the run is deterministic).
 */
START_TEST(test_run_fsync_fallbacks_by_cause_in_summary)
{
	const char *sets[] = { "size=16m", "loops=1",
			       "device=sim:zones=16,zone_size=8M,max_open=14,"
			       "max_active=14" };
	char *dir = NULL, *s;

	ck_assert_int_eq(zrun_scenario("configs/fsync-overwrite.scenario",
				       sets, 3, RES, true, &dir), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert(json_num(s, "\"fsyncs\"") == 5);
	ck_assert(json_num(s, "\"fsync_fallbacks\"") == 2);
	ck_assert(json_num(s, "\"nr_log_syncs\"") == 3);
	ck_assert_msg(strstr(s, "\"fsync_fallback_causes\": {"
				"\"no_log_group\": 0, \"new_data_chunk\": 2, "
				"\"new_log_chunk\": 0, "
				"\"new_system_chunk\": 0, "
				"\"too_many_inodes\": 0, \"not_recorded\": 0, "
				"\"build_error\": 0}"), "%s", s);
	free(s);
	free(dir);
}
END_TEST

START_TEST(test_run_treelog_same_seed_same_numbers)
{
	const char *sets[] = { "numjobs=4", "loops=2" };
	char *d1 = run_treelog(sets, 2), *d2 = run_treelog(sets, 2);
	char *s1 = zcow_test_summary_no_wall(d1),
	     *s2 = zcow_test_summary_no_wall(d2);

	ck_assert_str_eq(s1, s2);
	ck_assert(json_num(s1, "\"syncs_per_s\"") > 0);
	ck_assert(json_num(s1, "\"renames\"") > 0);
	free(s1);
	free(s2);
	free(d1);
	free(d2);
}
END_TEST

/* 3 clients x 2 loops x 4 files of 8 KiB, bs 4 KiB, fsync=2: one fsync
 * per file, 24 in all, whichever the tree-log mode; every file is
 * created anew in every loop (unlink_each_loop). */
START_TEST(test_run_treelog_fsync_count_is_the_job_files)
{
	static const char *const modes[] = { "treelog=on", "treelog=off" };
	unsigned int m;

	for (m = 0; m < 2; m++) {
		const char *sets[] = { "numjobs=3", "loops=2", "nrfiles=4",
				       modes[m] };
		char *d = run_treelog(sets, 4),
		     *s = zcow_test_summary_no_wall(d);

		ck_assert_msg(json_num(s, "\"syncs\"") == 24, "%s", modes[m]);
		ck_assert(json_num(s, "\"write_ios\"") == 48);
		ck_assert(json_num(s, "\"creates\"") == 24);
		ck_assert(strstr(s, m ? "\"treelog\": false" :
					"\"treelog\": true"));
		ck_assert(strstr(s, "\"fs_fsync\": {\"nr_fsyncs\": "));
		ck_assert(strstr(s, "\"log\": {\"read\": "));
		free(s);
		free(d);
	}
}
END_TEST

/*
 * The fs's locks in simulated time: a full commit holds every other
 * operation off until it completes, a log sync every other sync.  Each
 * commit costs at least flush + superblock write, each log sync a log
 * write + flush + superblock write, one after the other (a flush waits
 * for what came before it in the call), so the run lasts at least their
 * sum; one client never waits for itself, eight do.
 */
#define MIN_COMMIT_NS	(20000.0 + 11751.0)
#define MIN_LOG_SYNC_NS	(11751.0 + 20000.0 + 11751.0)

START_TEST(test_run_treelog_commits_and_log_syncs_do_not_overlap)
{
	static const char *const modes[] = { "treelog=on", "treelog=off" };
	static const char *const jobs[] = { "numjobs=1", "numjobs=8" };
	unsigned int m, n;

	for (m = 0; m < 2; m++) {
		for (n = 0; n < 2; n++) {
			const char *sets[] = { jobs[n], "loops=2", modes[m] };
			char *d = run_treelog(sets, 3);
			char *s = zcow_test_summary_no_wall(d);
			double sim = json_num(s, "\"sim_time_s\"") * 1e9;
			double commits = json_num(s, "\"nr_commits\"");
			double logs = json_num(s, "\"nr_log_syncs\"");
			double waits = json_num(s, "\"nr_waits\"");

			ck_assert_msg(commits + logs > 0, "%s", modes[m]);
			ck_assert_msg(sim >= commits * MIN_COMMIT_NS +
						     logs * MIN_LOG_SYNC_NS,
				      "%s %s: %.0f ns < %.0f commits + %.0f "
				      "log syncs", modes[m], jobs[n], sim,
				      commits, logs);
			if (n == 0)
				ck_assert(waits == 0);
			else
				ck_assert(waits > 0);
			free(s);
			free(d);
		}
	}
}
END_TEST

/* Log-sync batching: with eight clients, syncs waiting on the log join
 * the next log write, so there are fewer log writes than fsyncs that
 * wrote; every fsync is still counted once by the fs. */
START_TEST(test_run_treelog_waiting_syncs_join_one_log_write)
{
	const char *sets[] = { "numjobs=8", "loops=2", "treelog=on" };
	char *d = run_treelog(sets, 3), *s = zcow_test_summary_no_wall(d);
	double joined = json_num(s, "\"syncs_joined\"");
	double logs = json_num(s, "\"nr_log_syncs\"");
	double fsyncs = json_num(s, "\"nr_fsyncs\"");

	ck_assert(fsyncs == json_num(s, "\"syncs\""));
	ck_assert_msg(joined > 0, "no sync joined a log write");
	ck_assert_msg(logs + joined <= fsyncs, "%.0f log writes + %.0f joined > %.0f fsyncs",
		      logs, joined, fsyncs);
	free(s);
	free(d);
}
END_TEST

/*
 * commit_model=btrfs, the state machine of the commits in simulated time
 * (btrfs_sync_file without the log, btrfs_commit_transaction): the set-up
 * made generation 5 durable at 0.  Two fsyncs of changes in the running
 * transaction 6 released at 100 share one commit (the second joined it
 * before its commit began); a third at 130, while that commit writes,
 * waits for it (durable at 160) and then commits transaction 7, which
 * holds what was written after 100; an fsync at 160 of transaction 6
 * returns at once.
 */
START_TEST(test_run_txn_fsync_waits_shares_or_commits)
{
	struct zrun_txns t = { 0 };
	uint64_t at;

	ck_assert_int_eq(zrun_txn_note(&t, 5, 0, 0), 0);
	ck_assert_int_eq(zrun_txn_fsync(&t, 5, 100, &at), ZRUN_TXN_DURABLE);
	ck_assert_uint_eq(at, 100);
	/* the first fsync commits 6: no commit in progress, unblocked at
	 * once; durable at 160 */
	ck_assert_int_eq(zrun_txn_fsync(&t, 6, 100, &at), ZRUN_TXN_COMMIT);
	ck_assert_uint_eq(at, 100);
	ck_assert_int_eq(zrun_txn_note(&t, 6, 100, 160), 0);
	/* released with it: shares it */
	ck_assert_int_eq(zrun_txn_fsync(&t, 6, 100, &at), ZRUN_TXN_SHARE);
	ck_assert_uint_eq(at, 160);
	/* during its writing phase: wait for it, then commit the next */
	ck_assert(!zrun_txn_is_durable(&t, 6, 130));
	ck_assert_int_eq(zrun_txn_fsync(&t, 6, 130, &at), ZRUN_TXN_COMMIT);
	ck_assert_uint_eq(at, 160);
	ck_assert_int_eq(zrun_txn_note(&t, 7, 130, 220), 0);
	/* a writer of the writing phase (transaction 7) */
	ck_assert_int_eq(zrun_txn_fsync(&t, 7, 200, &at), ZRUN_TXN_COMMIT);
	ck_assert_uint_eq(at, 220);
	ck_assert(zrun_txn_is_durable(&t, 6, 160));
	ck_assert_int_eq(zrun_txn_fsync(&t, 6, 160, &at), ZRUN_TXN_DURABLE);
	ck_assert(!zrun_txn_is_durable(&t, 7, 219));
	ck_assert(zrun_txn_is_durable(&t, 7, 220));
	ck_assert(!zrun_txn_is_durable(&t, 8, 1000));
	/* a generation seen already is not a commit; no commit is durable
	 * before the one before it */
	ck_assert_int_eq(zrun_txn_note(&t, 7, 300, 400), 0);
	ck_assert_int_eq(zrun_txn_note(&t, 9, 230, 100), 0);
	ck_assert_uint_eq(t.nr, 4);
	ck_assert_uint_eq(t.v[3].gen, 9);
	ck_assert_uint_eq(t.v[3].done, 220);
	ck_assert(zrun_txn_is_durable(&t, 8, 220));
	free(t.v);
}
END_TEST

/*
 * seed-treelog without the log, 32 clients, 2 loops (1024 fsyncs of
 * 8 KiB files).  Each client writes through the page cache (fsync=2:
 * buffered writes, btrfs's delayed allocation), so each fsync writes its
 * file back first, into the transaction running then: no fsync finds its
 * change in another client's commit, whichever model places the commits
 * (commit_model=global holds every client until a commit is durable,
 * btrfs only until its critical section ends).  Every one of the 1024
 * fsyncs commits (commit_model=btrfs counts what each did:
 * txn_committed), plus the few commits nothing synced.
 */
START_TEST(test_run_treelog_off_every_fsync_commits_its_buffered_writes)
{
	static const char *const models[] = { "commit_model=global",
					      "commit_model=btrfs" };
	unsigned int m;

	for (m = 0; m < 2; m++) {
		const char *sets[] = { "numjobs=32", "loops=2", "treelog=off",
				       models[m] };
		char *d = run_treelog(sets, 4),
		     *s = zcow_test_summary_no_wall(d);
		double commits = json_num(s, "\"nr_commits\"");

		ck_assert(json_num(s, "\"nr_fsyncs\"") == 1024);
		ck_assert(strstr(s, m ? "\"commit_model\": \"btrfs\"" :
					"\"commit_model\": \"global\""));
		ck_assert_msg(commits >= 1024 && commits <= 1024 + 8,
			      "%s: %.0f commits", models[m], commits);
		ck_assert(json_num(s, "\"txn_durable\"") == 0);
		ck_assert(json_num(s, "\"txn_shared\"") == 0);
		ck_assert(json_num(s, "\"txn_committed\"") == (m ? 1024 : 0));
		free(s);
		free(d);
	}
}
END_TEST

/*
 * The transaction a change joins (delayed allocation, fsync_btrfs()): the
 * running one, or the one whose commit began at the same instant.
 */
START_TEST(test_run_txn_running_is_the_commit_begun_now_or_the_next)
{
	struct zrun_txns t = { 0 };

	ck_assert_int_eq(zrun_txn_note(&t, 5, 0, 0), 0);
	ck_assert_uint_eq(zrun_txn_running(&t, 5, 100), 6);
	ck_assert_int_eq(zrun_txn_note(&t, 6, 100, 160), 0);
	ck_assert_uint_eq(zrun_txn_running(&t, 6, 100), 6);
	ck_assert_uint_eq(zrun_txn_running(&t, 6, 130), 7);
	free(t.v);
}
END_TEST

static char *run_kernel_fsync(const char *const *sets, unsigned int nr)
{
	return zcow_test_scenario_ok("configs/kernel-fsync.scenario", sets, nr,
				     RES);
}

/*
 * The kernel's fio job (configs/kernel-fsync.fio, the command line of
 * the kernel measurement as a job file, unchanged), 1 job for 5 ms of
 * simulated time: every 4 KiB write is followed by an fsync, every file
 * gets two writes and is created at its first (create_on_open); the
 * writes are buffered, so a write costs no device time and each fsync
 * writes its block back.  Each log sync and each commit issues one
 * flush.
 */
START_TEST(test_run_kernel_fsync_job_runs_unchanged)
{
	const char *sets[] = { "numjobs=1", "runtime=5ms" };
	char *d = run_kernel_fsync(sets, 2), *s = zcow_test_summary_no_wall(d);
	double ios = json_num(s, "\"write_ios\"");

	ck_assert(ios > 10);
	ck_assert(json_num(s, "\"syncs\"") == ios);
	ck_assert(json_num(s, "\"nr_fsyncs\"") == ios);
	ck_assert(json_num(s, "\"creates\"") == (double)(((long)ios + 1) / 2));
	ck_assert(json_num(s, "\"max_open_files\"") == 1);
	ck_assert(json_num(s, "\"sim_time_s\"") >= 0.005);
	/* buffered: the writes complete at once */
	ck_assert(json_num(s, "\"lat_ns\": {\"mean\"") == 0);
	ck_assert(json_num_in(s, "\"device_commands\"", "\"flush\"") ==
		  json_num(s, "\"nr_log_syncs\"") +
			  json_num(s, "\"nr_commits\""));
	ck_assert(strstr(s, "\"scenario\": \"kernel-fsync\""));
	free(s);
	free(d);
}
END_TEST

/*
 * The same job without the log, 8 jobs: each fsync writes its block back
 * into the running transaction, so none finds its change committed by
 * another job's commit and none shares one (the jobs' fsyncs reach the
 * running transaction one after the other): one commit per fsync, one
 * flush each, and each writes the fsynced file's checksum leaf, its
 * fs-tree leaf and the root tree's leaf (commit_nodes_by_tree).
 */
#define NODES "\"commit_nodes_by_tree\""

START_TEST(test_run_buffered_writes_each_fsync_commits_its_own)
{
	const char *sets[] = { "numjobs=8", "runtime=5ms", "treelog=off" };
	char *d = run_kernel_fsync(sets, 3), *s = zcow_test_summary_no_wall(d);
	double fsyncs = json_num(s, "\"nr_fsyncs\"");

	ck_assert(fsyncs > 8);
	ck_assert(json_num(s, "\"txn_committed\"") == fsyncs);
	ck_assert(json_num(s, "\"txn_durable\"") == 0);
	ck_assert(json_num(s, "\"txn_shared\"") == 0);
	ck_assert(json_num(s, "\"nr_commits\"") == fsyncs);
	ck_assert(json_num_in(s, "\"device_commands\"", "\"flush\"") ==
		  fsyncs);
	ck_assert(json_num_in(s, NODES, "\"csum\"") == fsyncs);
	ck_assert(json_num_in(s, NODES, "\"root\"") == fsyncs);
	ck_assert(json_num_in(s, NODES, "\"fs\"") >= fsyncs);
	free(s);
	free(d);
}
END_TEST

#define TL_IMG "/tmp/zcow-test-treelog.img"

/* Run the treelog workload on an image (3 clients, 1 loop of 2 files,
 * files kept), then mount the image. */
static struct zcow_fs *run_treelog_image(const char *rename_pct,
					 const char *unlink_pct,
					 struct zdev **dev_ret)
{
	const char *sets[] = {
		"device=sim:image=" TL_IMG ",zones=64,zone_size=64M,"
		"zone_cap=34M,max_open=14,max_active=14",
		"numjobs=3", "loops=1", "nrfiles=2", "unlink_each_loop=0",
		rename_pct, unlink_pct, "buffer_pattern=0xa5",
	};
	struct zcow_mount_opts mo = { .read_only = true };
	struct zcow_fs *fs = NULL;
	char *d;

	unlink(TL_IMG);
	d = run_treelog(sets, 8);
	free(d);
	ck_assert_int_eq(zdev_open("sim:image=" TL_IMG, dev_ret), 0);
	ck_assert_int_eq(zcow_mount(*dev_ret, &mo, &fs), 0);
	return fs;
}

static void done_image(struct zcow_fs *fs, struct zdev *dev)
{
	zcow_unmount(fs);
	zdev_close(dev);
	unlink(TL_IMG);
}

START_TEST(test_run_treelog_client_dirs_hold_exact_files)
{
	struct zdev *dev;
	struct zcow_fs *fs = run_treelog_image("zcow_rename_pct=0",
					       "zcow_unlink_pct=0", &dev);
	struct zcow_dirent *ents;
	uint64_t nr;
	unsigned int c, k;
	char path[128], want[8192], got[8192 + 1];

	memset(want, 0xa5, sizeof(want));
	ck_assert_int_eq(zcow_readdir(fs, "/clients", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 3);
	for (c = 0; c < 3; c++) {
		snprintf(path, sizeof(path), "client%u", c);
		ck_assert_str_eq(ents[c].name, path);
	}
	free(ents);
	for (c = 0; c < 3; c++) {
		snprintf(path, sizeof(path), "/clients/client%u", c);
		ck_assert_int_eq(zcow_readdir(fs, path, &ents, &nr), 0);
		ck_assert_uint_eq(nr, 2);
		free(ents);
		for (k = 0; k < 2; k++) {
			struct zcow_file *f;

			snprintf(path, sizeof(path),
				 "/clients/client%u/dbench.%u", c, k);
			ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
			ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0),
					 8192);
			ck_assert(!memcmp(got, want, sizeof(want)));
			zcow_close(f);
		}
	}
	done_image(fs, dev);
}
END_TEST

START_TEST(test_run_treelog_renames_and_unlinks_leave_their_names)
{
	static const char *const pcts[][2] = {
		{ "zcow_rename_pct=100", "zcow_unlink_pct=0" },
		{ "zcow_rename_pct=0", "zcow_unlink_pct=100" },
	};
	unsigned int m, c;

	for (m = 0; m < 2; m++) {
		struct zdev *dev;
		struct zcow_fs *fs = run_treelog_image(pcts[m][0], pcts[m][1],
						       &dev);

		for (c = 0; c < 3; c++) {
			struct zcow_dirent *ents;
			uint64_t nr;
			char path[64];

			snprintf(path, sizeof(path), "/clients/client%u", c);
			ck_assert_int_eq(zcow_readdir(fs, path, &ents, &nr), 0);
			ck_assert_uint_eq(nr, m ? 0 : 2);
			if (!m) {
				ck_assert_str_eq(ents[0].name,
						 "dbench.0.renamed");
				ck_assert_str_eq(ents[1].name,
						 "dbench.1.renamed");
			}
			free(ents);
		}
		done_image(fs, dev);
	}
}
END_TEST

/* ---- write amplification: intervals.csv and the breakdown --------- */

/* The column of intervals.csv named @name (from its header @hdr). */
static int csv_col(const char *hdr, const char *name)
{
	size_t n = strlen(name);
	const char *p = hdr;
	int i = 0;

	for (;;) {
		if (!strncmp(p, name, n) &&
		    (p[n] == ',' || p[n] == '\n' || p[n] == '\0'))
			return i;
		p = strpbrk(p, ",\n");
		if (!p || *p == '\n')
			break;
		p++;
		i++;
	}
	ck_abort_msg("intervals.csv has no column %s", name);
	return -1;
}

/* Field @col of the CSV line @line (no quoting in intervals.csv). */
static void csv_field(const char *line, int col, char *out, size_t len)
{
	size_t n;

	for (; col > 0; col--) {
		line = strpbrk(line, ",\n");
		ck_assert_msg(line && *line == ',', "short intervals.csv row");
		line++;
	}
	n = strcspn(line, ",\n");
	ck_assert(n < len);
	memcpy(out, line, n);
	out[n] = '\0';
}

static uint64_t csv_u64(const char *line, int col)
{
	char v[64];

	csv_field(line, col, v, sizeof(v));
	return strtoull(v, NULL, 10);
}

/* intervals.csv of @dir: its lines in *lines_ret (NULL-terminated, the
 * header first); free with free(lines[0]) and free(lines). */
static char **interval_lines(const char *dir)
{
	char path[1024], *text, **lines = NULL, *p;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/intervals.csv", dir);
	text = zcow_test_read_path(path);
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 :
						     NULL) {
		lines = realloc(lines, (n + 2) * sizeof(*lines));
		lines[n++] = p;
	}
	ck_assert(n >= 2);
	lines[n] = NULL;
	return lines;
}

/*
 * Over all intervals, the device's bytes per class add up to the run's
 * device_bytes_written, exactly, and the host's bytes to the breakdown's
 * host_bytes_written; returns the summary (without wall-clock lines).
 */
static char *assert_intervals_add_up(const char *dir)
{
	char *s = zcow_test_summary_no_wall(dir), **lines = interval_lines(dir);
	const char *whole = strstr(s, "\"device_bytes_written\": {");
	const char *bd = strstr(s, "\"write_amplification_breakdown\": {");
	uint64_t host = 0, total = 0;
	unsigned int c, i;

	ck_assert_ptr_nonnull(whole);
	ck_assert_ptr_nonnull(bd);
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		char col[64], key[32];
		uint64_t sum = 0;
		int k;

		snprintf(col, sizeof(col), "device_bytes_written_%s",
			 zdev_class_name(c));
		snprintf(key, sizeof(key), "\"%s\"", zdev_class_name(c));
		k = csv_col(lines[0], col);
		for (i = 1; lines[i]; i++)
			sum += csv_u64(lines[i], k);
		ck_assert_msg(sum == (uint64_t)json_num(whole, key),
			      "%s: intervals %llu, whole run %.0f", col,
			      (unsigned long long)sum, json_num(whole, key));
		total += sum;
	}
	for (i = 1; lines[i]; i++)
		host += csv_u64(lines[i], csv_col(lines[0],
						  "host_bytes_written"));
	ck_assert_uint_eq(host, (uint64_t)json_num(bd,
						   "\"host_bytes_written\""));
	ck_assert_uint_eq(total, (uint64_t)json_num(bd,
				  "\"device_bytes_written_total\""));
	free(lines[0]);
	free(lines);
	return s;
}

/*
 * The raw device writes what the jobs write, nothing else: in every
 * interval its bytes (class "other": the raw target's commands) equal the
 * host's, WA 1.000000 exactly, whatever the interval's width.
 */
START_TEST(test_run_raw_randwrite_wa_is_one_in_every_interval)
{
	const char *sets[] = { "runtime=20ms", "numjobs=4", "interval=1ms" };
	char *d = run_raw(sets, 3), **lines = interval_lines(d), v[64];
	int host, other, dev, wa, data;
	unsigned int i;

	host = csv_col(lines[0], "host_bytes_written");
	other = csv_col(lines[0], "device_bytes_written_other");
	data = csv_col(lines[0], "device_bytes_written_data");
	dev = csv_col(lines[0], "device_bytes_written");
	wa = csv_col(lines[0], "wa");
	/* The existing columns come first, unchanged. */
	ck_assert(!strncmp(lines[0], "t_start_s,t_end_s,ios,bytes,iops,"
			   "mib_per_s,lat_mean_us,lat_max_us,", 54));
	for (i = 1; lines[i]; i++) {
		uint64_t h = csv_u64(lines[i], host);

		ck_assert_msg(h > 0, "interval %u wrote nothing", i);
		ck_assert_uint_eq(csv_u64(lines[i], other), h);
		ck_assert_uint_eq(csv_u64(lines[i], dev), h);
		ck_assert_uint_eq(csv_u64(lines[i], data), 0);
		csv_field(lines[i], wa, v, sizeof(v));
		ck_assert_str_eq(v, "1.000000");
	}
	ck_assert_uint_ge(i, 21);	/* 20 ms in 1 ms intervals */
	free(lines[0]);
	free(lines);
	free(assert_intervals_add_up(d));
	free(d);
}
END_TEST

/* Every class's intervals add up to the whole run's figure: the raw
 * device, the fs in simulated time, the fs on a file (wall clock). */
START_TEST(test_run_interval_bytes_add_up_to_the_whole_run)
{
	const char *raw[] = { "runtime=10ms", "numjobs=16", "interval=300us",
			      "zone_append=on" };
	const char *fs[] = { "runtime=10ms", "numjobs=4", "interval=700us" };
	const char *file[] = { "runtime=3ms", "numjobs=2", "interval=100us",
			       "device=file:/tmp/zcow-test-run-wa.img,"
			       "zone_size=8M,size=128M,create" };
	char *d;

	d = run_raw(raw, 4);
	free(assert_intervals_add_up(d));
	free(d);
	d = run_fs(fs, 3);
	free(assert_intervals_add_up(d));
	free(d);
	unlink("/tmp/zcow-test-run-wa.img");
	d = run_fs(file, 4);
	free(assert_intervals_add_up(d));
	free(d);
	unlink("/tmp/zcow-test-run-wa.img");
}
END_TEST

/*
 * A file system with fsync writes more than the data: its metadata, its
 * tree-log and its superblock columns are not zero, its WA is above 1,
 * and the breakdown's ratios add up to it.
 */
START_TEST(test_run_fs_fsync_wa_counts_meta_log_and_superblock)
{
	const char *sets[] = { "numjobs=4", "loops=2", "interval=200us" };
	char *d = run_treelog(sets, 3), *s = assert_intervals_add_up(d);
	char **lines = interval_lines(d), v[64];
	static const char *const cls[] = { "meta", "log", "sb", "data" };
	const char *bd = strstr(s, "\"write_amplification_breakdown\": {");
	const char *ratio = strstr(bd, "\"ratio_to_host\": {");
	double wa = json_num(bd, "\"write_amplification\""), sum = 0;
	unsigned int c, i;
	bool is_above = false;

	for (c = 0; c < sizeof(cls) / sizeof(cls[0]); c++) {
		char col[64];
		uint64_t n = 0;
		int k;

		snprintf(col, sizeof(col), "device_bytes_written_%s", cls[c]);
		k = csv_col(lines[0], col);
		for (i = 1; lines[i]; i++)
			n += csv_u64(lines[i], k);
		ck_assert_msg(n > 0, "no %s bytes", cls[c]);
	}
	for (c = 0; c < ZDEV_NR_CLASSES; c++) {
		char key[32];

		snprintf(key, sizeof(key), "\"%s\"", zdev_class_name(c));
		sum += json_num(ratio, key);
	}
	ck_assert_msg(wa > 1.0, "wa %f", wa);
	ck_assert_msg(sum > wa - 1e-5 && sum < wa + 1e-5, "%f != %f", sum, wa);
	/* No ramp_time: the breakdown's WA is the run's. */
	ck_assert_msg(wa > json_num(s, "\"write_amplification\"") - 1e-6 &&
		      wa < json_num(s, "\"write_amplification\"") + 1e-6,
		      "%f", wa);
	/* Some interval's WA is above 1; an interval without host writes
	 * has none. */
	for (i = 1; lines[i]; i++) {
		csv_field(lines[i], csv_col(lines[0], "wa"), v, sizeof(v));
		if (!csv_u64(lines[i], csv_col(lines[0],
					       "host_bytes_written")))
			ck_assert_str_eq(v, "");
		else if (strtod(v, NULL) > 1.0)
			is_above = true;
	}
	ck_assert(is_above);
	free(lines[0]);
	free(lines);
	free(s);
	free(d);
}
END_TEST

#define T_FIO	"/tmp/zcow-test-t.fio"
#define T_IMG	"/tmp/zcow-test-t.img"

/*
 * Run @text as the job file T_FIO with @sets; returns zrun_scenario()'s
 * result, the results folder in *dir_ret (0) and what it printed on
 * stderr, without "zcow run: " and the newline, in @err.
 */
static int run_text(const char *text, const char *const *sets,
		    unsigned int nr, char **dir_ret, char *err, size_t len)
{
	char *msg, *p;
	int ret = zcow_test_scenario(T_FIO, text, sets, nr, RES, dir_ret,
				     &msg);

	p = strncmp(msg, "zcow run: ", 10) ? msg : msg + 10;
	p[strcspn(p, "\n")] = '\0';
	snprintf(err, len, "%s", p);
	free(msg);
	return ret;
}

/* The run must fail with -EINVAL and a message starting with @want. */
static void run_refused(const char *text, const char *const *sets,
			unsigned int nr, const char *want)
{
	char err[1024], *dir;

	ck_assert_int_eq(run_text(text, sets, nr, &dir, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(!strncmp(err, want, strlen(want)),
		      "error '%s' does not start with '%s'", err, want);
	ck_assert_ptr_null(dir);
}

/* A job's "start_ns"/"end_ns" in summary.json (the @n-th job entry). */
static uint64_t job_ns(const char *json, unsigned int n, const char *key)
{
	const char *p = strstr(json, "\"jobs\": [");
	char k[64];

	ck_assert_ptr_nonnull(p);
	snprintf(k, sizeof(k), "\"%s\": ", key);
	for (; n + 1; n--) {
		p = strstr(p + 1, k);
		ck_assert_ptr_nonnull(p);
	}
	return strtoull(p + strlen(k), NULL, 10);
}

/* More files than the file system can hold even at one block each, or
 * laid out for reading, are refused at set-up, before any file is made,
 * naming the option. */
START_TEST(test_run_files_beyond_the_device_refused_at_setup)
{
	const char *dev[] = { "device=sim:zones=16,zone_size=64M" };

	run_refused("[a]\nrw=write\nnrfiles=1048576\nfilesize=4k\n", dev, 1,
		    T_FIO ":3: option 'nrfiles': 1048576 file(s) of at least "
		    "4096 bytes (one 4 KiB block each; clone 0, after 0 bytes "
		    "for the files before) do not fit the file system's ");
	run_refused("[a]\nrw=read\nnrfiles=32\nfilesize=64m\n", dev, 1,
		    T_FIO ":3: option 'nrfiles': 32 file(s) of at least "
		    "67108864 bytes (laid out for reading; clone 0, after 0 "
		    "bytes for the files before) do not fit");
	run_refused("[a]\nrw=read\nfilesize=512m\n[b]\nrw=read\nsize=512m\n",
		    dev, 1, T_FIO ":6: option 'size': 1 file(s) of at least "
		    "536870912 bytes (laid out for reading; clone 0, after "
		    "536870912 bytes for the files before) do not fit");
}
END_TEST

/* Jobs that name one file (filename=) share it, as fio's do: it is laid
 * out once and counted once against the file system's room, however
 * many jobs read it.  Two files of that size would not fit. */
START_TEST(test_run_jobs_naming_one_file_share_its_room)
{
	const char *dev[] = { "device=sim:zones=16,zone_size=64M" };
	char err[1024], *dir;

	ck_assert_int_eq(run_text("[global]\nfilename=shared\nsize=450m\n"
				  "bs=1m\nruntime=10ms\n[a]\nrw=read\n"
				  "stonewall\n[b]\nrw=randread\nstonewall\n",
				  dev, 1, &dir, err, sizeof(err)), 0);
	free(dir);
	run_refused("[a]\nrw=read\nfilename=one\nsize=450m\n[b]\n"
		    "rw=read\nfilename=two\nsize=450m\n", dev, 1,
		    T_FIO ":8: option 'size': 1 file(s) of at least "
		    "471859200 bytes (laid out for reading; clone 0, after "
		    "471859200 bytes for the files before) do not fit");
}
END_TEST

/* A network engine's job runs as plain writes of the target: the same
 * bytes as the job without the engine, its options listed as ignored. */
START_TEST(test_run_engine_options_run_as_plain_io)
{
	char err[1024], *dir, *s;

	ck_assert_int_eq(run_text("[a]\nioengine=net\nhostname=h\nport=1\n"
				  "rw=write\nsize=64k\n", NULL, 0, &dir, err,
				  sizeof(err)), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert_ptr_nonnull(strstr(s, "\"write_bytes\": 65536,"));
	ck_assert_ptr_nonnull(strstr(s, "\"ignored_options\": [\"ioengine\", "
				     "\"hostname\", \"port\"]"));
	free(s);
	free(dir);
}
END_TEST

/* allow_file_create=0: the job's files must exist already (an earlier
 * job made them); creating one is an error naming the option. */
START_TEST(test_run_allow_file_create_0_needs_existing_files)
{
	char err[1024], *dir, *s;

	run_refused("[a]\nrw=write\nsize=64k\nallow_file_create=0\n", NULL,
		    0, T_FIO ":4: option 'allow_file_create': '/a.0.0' does "
		    "not exist and the job may not create it");
	ck_assert_int_eq(run_text("[a]\nrw=write\nsize=64k\nfilename=f\n"
				  "[b]\nstonewall\nrw=read\nsize=64k\n"
				  "filename=f\nallow_file_create=0\n", NULL, 0,
				  &dir, err, sizeof(err)), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert_ptr_nonnull(strstr(s, "\"read_ios\": 16,"));
	free(s);
	free(dir);
}
END_TEST

/* filename= with directories (a device path, /tmp/...): the directories
 * are made on the new file system, as the host has them, and the job
 * runs on that file. */
START_TEST(test_run_filename_directories_are_created)
{
	char err[1024], *dir, *s;

	ck_assert_int_eq(run_text("[a]\nrw=write\nsize=64k\n"
				  "filename=/dev/sdb1\n[b]\nrw=write\n"
				  "size=64k\nfilename=tmp/x/data\n", NULL, 0,
				  &dir, err, sizeof(err)), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert_ptr_nonnull(strstr(s, "\"write_bytes\": 131072,"));
	free(s);
	free(dir);
}
END_TEST

/* fio's io_size: io_size x loops bytes within the range (going round
 * it, or stopping short); a percent is of the range. */
START_TEST(test_run_io_size_sets_the_bytes_of_io)
{
	static const char *const jobs[] = {
		"[a]\nrw=write\nsize=64k\nio_size=256k\n",
		"[a]\nrw=write\nsize=1m\nio_limit=64k\nloops=2\n",
		"[a]\nrw=write\nsize=1m\nio_size=50%\n",
	};
	static const char *const want[] = {
		"\"write_bytes\": 262144,", "\"write_bytes\": 131072,",
		"\"write_bytes\": 524288,",
	};
	char err[1024], *dir, *s;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(run_text(jobs[i], NULL, 0, &dir, err,
					  sizeof(err)), 0);
		s = zcow_test_summary_no_wall(dir);
		ck_assert_msg(strstr(s, want[i]), "job %u", i);
		free(s);
		free(dir);
	}
	run_refused("[a]\nrw=write\nsize=1m\nio_size=1k\n", NULL, 0,
		    T_FIO ":4: option 'io_size': 1024 bytes is less than one "
		    "block of bs=4096");
}
END_TEST

START_TEST(test_run_directory_error_names_file_line_option)
{
	run_refused("[a]\nrw=write\nsize=64k\ndirectory=/..\n", NULL, 0,
		    T_FIO ":4: option 'directory': mkdir '/..': ");
}
END_TEST

/* fio's stonewall: the jobs from a stonewall job on start when every
 * earlier job has finished, at the last one's end, together. */
START_TEST(test_run_stonewall_starts_a_later_phase_at_the_last_end)
{
	static const char text[] = "[a]\nrw=write\nsize=1m\n[b]\nrw=write\n"
				   "size=2m\n[c]\nstonewall\nrw=write\n"
				   "size=1m\n[d]\nrw=write\nsize=1m\n";
	const char *off[] = { "stonewall=0" };
	char err[1024], *dir, *s;
	uint64_t a_end, b_end;

	ck_assert_int_eq(run_text(text, NULL, 0, &dir, err, sizeof(err)), 0);
	s = zcow_test_summary_no_wall(dir);
	a_end = job_ns(s, 0, "end_ns");
	b_end = job_ns(s, 1, "end_ns");
	ck_assert(a_end > 0 && b_end > a_end);
	ck_assert_uint_eq(job_ns(s, 0, "start_ns"), 0);
	ck_assert_uint_eq(job_ns(s, 1, "start_ns"), 0);
	ck_assert_uint_eq(job_ns(s, 2, "start_ns"), b_end);
	ck_assert_uint_eq(job_ns(s, 3, "start_ns"), b_end);
	ck_assert_uint_eq(job_ns(s, 2, "phase"), 1);
	ck_assert_uint_eq(job_ns(s, 3, "phase"), 1);
	ck_assert(job_ns(s, 2, "end_ns") > b_end);
	ck_assert(!strstr(s, "\"ignored_options\": [\"stonewall\""));
	free(s);
	free(dir);

	/* Without it every job starts at 0. */
	ck_assert_int_eq(run_text(text, off, 1, &dir, err, sizeof(err)), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert_uint_eq(job_ns(s, 2, "start_ns"), 0);
	ck_assert_uint_eq(job_ns(s, 3, "start_ns"), 0);
	ck_assert_uint_eq(job_ns(s, 3, "phase"), 0);
	free(s);
	free(dir);
}
END_TEST

START_TEST(test_run_wait_for_starts_at_its_waitee_end)
{
	char err[1024], *dir, *s;

	ck_assert_int_eq(run_text("[a]\nrw=write\nsize=1m\n[b]\nrw=write\n"
				  "size=1m\nwait_for=a\n[c]\nrw=write\n"
				  "size=1m\n", NULL, 0, &dir, err,
				  sizeof(err)), 0);
	s = zcow_test_summary_no_wall(dir);
	ck_assert(job_ns(s, 0, "end_ns") > 0);
	ck_assert_uint_eq(job_ns(s, 1, "start_ns"), job_ns(s, 0, "end_ns"));
	ck_assert_uint_eq(job_ns(s, 2, "start_ns"), 0);
	free(s);
	free(dir);
	run_refused("[a]\nrw=write\nsize=1m\n[b]\nrw=write\nsize=1m\n"
		    "wait_for=nosuch\n", NULL, 0,
		    T_FIO ":7: option 'wait_for': no job named 'nosuch'");
}
END_TEST

/* Run @text on the image T_IMG, then mount it read-only. */
static struct zcow_fs *run_on_image(const char *text, char **summary_ret,
				    struct zdev **dev_ret)
{
	const char *sets[] = { "device=sim:image=" T_IMG ",zones=32,"
			       "zone_size=64M,zone_cap=34M,max_open=14,"
			       "max_active=14", "buffer_pattern=0xa5" };
	struct zcow_mount_opts mo = { .read_only = true };
	struct zcow_fs *fs = NULL;
	char err[1024], *dir;

	unlink(T_IMG);
	ck_assert_msg(run_text(text, sets, 2, &dir, err, sizeof(err)) == 0,
		      "%s", err);
	*summary_ret = zcow_test_summary_no_wall(dir);
	free(dir);
	ck_assert_int_eq(zdev_open("sim:image=" T_IMG, dev_ret), 0);
	ck_assert_int_eq(zcow_mount(*dev_ret, &mo, &fs), 0);
	return fs;
}

/* Every file @fmt % (clone, file) of @nr_clones x @nr_files exists with
 * @size bytes of 0xa5 (buffer_pattern=0xa5, and the fs target's read
 * layout); nothing else in @dir. */
static void assert_files(struct zcow_fs *fs, const char *dir, const char *fmt,
			 unsigned int nr_clones, unsigned int nr_files,
			 uint64_t size)
{
	static char got[65536], want[65536];
	struct zcow_dirent *ents;
	unsigned int c, k;
	uint64_t nr;

	memset(want, 0xa5, sizeof(want));
	ck_assert_int_eq(zcow_readdir(fs, dir, &ents, &nr), 0);
	ck_assert_uint_eq(nr, (uint64_t)nr_clones * nr_files);
	free(ents);
	for (c = 0; c < nr_clones; c++) {
		for (k = 0; k < nr_files; k++) {
			struct zcow_stat st;
			struct zcow_file *f;
			char path[128];

			snprintf(path, sizeof(path), fmt, c, k);
			ck_assert_msg(zcow_stat(fs, path, &st) == 0, "%s", path);
			ck_assert_uint_eq(st.size, size);
			ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
			ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0),
					 (int64_t)size);
			ck_assert(!memcmp(got, want, size));
			zcow_close(f);
		}
	}
}

static void done_fs(struct zcow_fs *fs, struct zdev *dev)
{
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zdev_close(dev), 0);
	unlink(T_IMG);
}

/*
 * create_on_open with openfiles below nrfiles (fio's
 * filecreate-ioengine.fio example, the kernel's fsync job): each file is
 * created when the job first opens it, at most openfiles are open at
 * once, and the job runs to its end.  filecreate moves no data: its
 * files stay empty, as fio leaves them.
 */
START_TEST(test_run_create_on_open_below_nrfiles_creates_every_file)
{
	struct zdev *dev;
	struct zcow_fs *fs;
	char *s;

	/* fio's filecreate-ioengine.fio, 40 files per job, not 31250. */
	fs = run_on_image("[global]\ncreate_on_open=1\nnrfiles=40\n"
			  "ioengine=filecreate\nfallocate=none\nfilesize=4k\n"
			  "openfiles=1\n\n[t0]\n[t1]\n[t2]\n", &s, &dev);
	ck_assert(strstr(s, "\"namespace\": {\"creates\": 120, "
			    "\"renames\": 0, \"unlinks\": 0, "
			    "\"max_open_files\": 1}"));
	ck_assert_uint_eq(json_num(s, "\"ios\""), 120);
	ck_assert(strstr(s, "\"data\": {\"read\": 0, \"write\": 0, "
			    "\"append\": 0"));
	assert_files(fs, "/", "/t%u.0.%u", 3, 40, 0);
	free(s);
	done_fs(fs, dev);

	/* The kernel's fsync job, scaled: 4 jobs x 40 files of 8 KiB. */
	fs = run_on_image("[f]\ndirectory=/w\nnrfiles=40\nfilesize=8k\n"
			  "bs=4k\nrw=write\nfsync=1\nnumjobs=4\n"
			  "create_on_open=1\nopenfiles=1\n"
			  "file_service_type=sequential\nfallocate=none\n"
			  "runtime=20\n", &s, &dev);
	ck_assert(strstr(s, "\"creates\": 160, \"renames\": 0, "
			    "\"unlinks\": 0, \"max_open_files\": 1}"));
	ck_assert_uint_eq(json_num(s, "\"syncs\""), 320);
	assert_files(fs, "/w", "/w/f.%u.%u", 4, 40, 8192);
	free(s);
	done_fs(fs, dev);
}
END_TEST

/* A reader's files are laid out one by one at set-up (each opened
 * first, openfiles or not); with create_on_open they are created at the
 * first read, empty, as fio does. */
START_TEST(test_run_readers_with_openfiles_below_nrfiles_run)
{
	struct zdev *dev;
	struct zcow_fs *fs;
	char *s;

	fs = run_on_image("[r]\nrw=read\nnrfiles=6\nfilesize=16k\n"
			  "openfiles=2\nnumjobs=2\n", &s, &dev);
	ck_assert(strstr(s, "\"creates\": 0, \"renames\": 0, "
			    "\"unlinks\": 0, \"max_open_files\": 2}"));
	ck_assert_uint_eq(json_num(s, "\"read_ios\""), 2 * 6 * 4);
	assert_files(fs, "/", "/r.%u.%u", 2, 6, 16384);
	free(s);
	done_fs(fs, dev);

	fs = run_on_image("[r]\nrw=read\nnrfiles=6\nfilesize=16k\n"
			  "openfiles=2\ncreate_on_open=1\n", &s, &dev);
	ck_assert(strstr(s, "\"creates\": 6, \"renames\": 0, "
			    "\"unlinks\": 0, \"max_open_files\": 2}"));
	assert_files(fs, "/", "/r.%u.%u", 1, 6, 0);
	free(s);
	done_fs(fs, dev);
}
END_TEST

/* --set and [zcow]: a bare zcow key, an empty or unsafe value, and the
 * numbering of overrides (zcow keys count). */
START_TEST(test_run_set_and_zcow_values_name_file_line_option)
{
	const char *bare[] = { "profile" };
	const char *num[] = { "profile=instant", "nope=1" };
	const char *reclaim_off[] = { "reclaim=off" };
	const char *high_set[] = { "reclaim_high=9" };
	static const struct {
		const char *key, *val, *want;
	} bad[] = {
		{ "results", "", "f:3: option 'results': needs a value" },
		{ "device", "", "f:3: option 'device': needs a value" },
		{ "scenario", "../x", "f:3: option 'scenario': not a folder "
				      "name (no '/', '.' or '..')" },
		{ "scenario", "..", "f:3: option 'scenario': not a folder" },
		{ "seed", "-1", "f:3: option 'seed': not a number in "
				"0..18446744073709551615" },
		{ "repetitions", "1001", "f:3: option 'repetitions': not a "
					 "number in 1..1000" },
		{ "commit_model", "lazy", "f:3: option 'commit_model': not "
					  "btrfs or global" },
		{ "cleaner", "thread", "f:3: option 'cleaner': not background "
				       "or writer" },
		{ "cleaner", "", "f:3: option 'cleaner': needs a value" },
		{ "commit_model", "", "f:3: option 'commit_model': needs a "
				      "value" },
	};
	struct zrun_settings set;
	char err[1024];
	unsigned int i;

	run_refused("[a]\nrw=write\nsize=64k\n", bare, 1,
		    "--set:1: option 'profile': not key=value");
	/* A policy's knob without the policy: the knob's place is named,
	 * before anything is mounted. */
	run_refused("[zcow]\nreclaim=greedy\nreclaim_threshold=60\n"
		    "[a]\nrw=write\nsize=64k\n", NULL, 0,
		    T_FIO ":3: option 'reclaim_threshold': only "
		    "reclaim=threshold has a threshold (reclaim=greedy)");
	run_refused("[zcow]\nreclaim_threshold=60\n"
		    "[a]\nrw=write\nsize=64k\n", NULL, 0,
		    T_FIO ":2: option 'reclaim_threshold': only "
		    "reclaim=threshold has a threshold (reclaim=greedy)");
	run_refused("[zcow]\nreclaim_high=9\n"
		    "[a]\nrw=write\nsize=64k\n", reclaim_off, 1,
		    T_FIO ":2: option 'reclaim_high': only greedy, "
		    "cost-benefit and hotcold-greedy have a watermark "
		    "(reclaim=off)");
	run_refused("[zcow]\nreclaim=threshold\n[a]\nrw=write\n"
		    "size=64k\n", high_set, 1,
		    "--set:1: option 'reclaim_high': only greedy, "
		    "cost-benefit and hotcold-greedy have a watermark "
		    "(reclaim=threshold)");
	run_refused("[a]\nrw=write\nsize=64k\n", num, 2,
		    "--set:2: option 'nope': unknown option");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct zfio_kv kv = { .has_val = true, .line = 3 };

		snprintf(kv.key, sizeof(kv.key), "%s", bad[i].key);
		snprintf(kv.val, sizeof(kv.val), "%s", bad[i].val);
		snprintf(kv.file, sizeof(kv.file), "f");
		zrun_settings_default(&set);
		ck_assert_int_eq(zrun_settings_apply(&set, &kv, err,
						     sizeof(err)), -EINVAL);
		ck_assert_msg(!strncmp(err, bad[i].want,
				       strlen(bad[i].want)),
			      "'%s' does not start with '%s'", err,
			      bad[i].want);
	}
}
END_TEST

/* Apply "key=value" @kvs in order (file "f", line = index + 1) to
 * fresh settings in *@set; returns the first error (message in @err). */
static int apply_keys(struct zrun_settings *set, const char *const *kvs,
		      unsigned int nr, char *err, size_t len)
{
	unsigned int i;
	int ret = 0;

	zrun_settings_default(set);
	for (i = 0; i < nr && !ret; i++) {
		struct zfio_kv kv = { .line = (int)i + 1 };
		const char *eq = strchr(kvs[i], '=');

		kv.has_val = eq != NULL;
		snprintf(kv.key, sizeof(kv.key), "%.*s",
			 eq ? (int)(eq - kvs[i]) : (int)strlen(kvs[i]),
			 kvs[i]);
		snprintf(kv.val, sizeof(kv.val), "%s", eq ? eq + 1 : "");
		snprintf(kv.file, sizeof(kv.file), "f");
		ret = zrun_zcow_apply(set, &kv, err, len);
	}
	return ret ? ret : zrun_settings_check(set, err, len);
}

/* data_zones, commit_bytes, layout and read_only: each bad value named
 * by file, line and option, with its range. */
START_TEST(test_run_mount_keys_refuse_bad_values_naming_file_line_option)
{
	static const struct {
		const char *kv, *want;
	} bad[] = {
		{ "data_zones=0", "f:1: option 'data_zones': not a number of "
				  "data block groups in 1..16" },
		{ "data_zones=17", "f:1: option 'data_zones': not a number of "
				   "data block groups in 1..16" },
		{ "data_zones=two", "f:1: option 'data_zones': not a number "
				    "of data block groups in 1..16" },
		{ "data_zones=", "f:1: option 'data_zones': needs a value" },
		{ "commit_bytes=1k", "f:1: option 'commit_bytes': not a size "
				     "in 4k..1t" },
		{ "commit_bytes=2t", "f:1: option 'commit_bytes': not a size "
				     "in 4k..1t" },
		{ "commit_bytes=50%", "f:1: option 'commit_bytes': not a size "
				      "in 4k..1t" },
		{ "layout=btrfs", "f:1: option 'layout': not btrfs-5.12 or "
				  "zcow" },
		{ "layout=", "f:1: option 'layout': needs a value" },
		{ "hotcold=warm", "f:1: option 'hotcold': not on, off, "
				  "frequency or age" },
		{ "read_only=on", "f:1: option 'read_only': refused: every "
				  "run makes a new file system and lays out "
				  "the jobs' files (mkfs, writes), which a "
				  "read-only mount cannot do" },
		{ "read_only", "f:1: option 'read_only': refused: every run "
			       "makes a new file system" },
	};
	const char *hot_one[] = { "hotcold=on", "layout=btrfs-5.12" };
	const char *one_hot[] = { "data_zones=1", "reclaim=greedy",
				  "hotcold" };
	const char *knob[] = { "reclaim_threshold=60", "layout=btrfs-5.12" };
	struct zrun_settings set;
	char err[1024];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(apply_keys(&set, &bad[i].kv, 1, err,
					    sizeof(err)), -EINVAL);
		ck_assert_msg(!strncmp(err, bad[i].want,
				       strlen(bad[i].want)),
			      "'%s' does not start with '%s'", err,
			      bad[i].want);
	}
	/* hotcold needs 2 data slots: refused where hotcold was set,
	 * whether data_zones=1 came from the layout or was given */
	ck_assert_int_eq(apply_keys(&set, hot_one, 2, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "f:1: option 'hotcold': needs 2 data slots "
			      "(data_zones=1)");
	ck_assert_int_eq(apply_keys(&set, one_hot, 3, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "f:3: option 'hotcold': needs 2 data slots "
			      "(data_zones=1)");
	/* the layout's reclaim=off has no threshold */
	ck_assert_int_eq(apply_keys(&set, knob, 2, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "f:1: option 'reclaim_threshold': only "
			      "reclaim=threshold has a threshold "
			      "(reclaim=off)");
	/* the raw target mounts nothing: its mount keys are refused */
	run_refused("[a]\nrw=write\nsize=64k\nzonemode=zbd\n"
		    "[zcow]\ndata_zones=2\n", NULL, 0,
		    T_FIO ":6: option 'data_zones': a mount option of the fs "
		    "target; the raw target (zonemode=zbd jobs) mounts no "
		    "file system");
	run_refused("[a]\nrw=write\nsize=64k\nzonemode=zbd\n", hot_one + 1,
		    1, "--set:1: option 'layout': a mount option of the fs "
		    "target");
}
END_TEST

/* Good values reach the settings; a layout sets only the keys not given
 * explicitly, before or after it; the last layout is the one recorded. */
START_TEST(test_run_layout_preset_yields_to_explicit_keys_in_any_order)
{
	const char *sizes[] = { "data_zones=16", "commit_bytes=64m" };
	const char *before[] = { "data_zones=2", "reclaim=greedy",
				 "layout=btrfs-5.12" };
	const char *after[] = { "layout=btrfs-5.12", "data_zones=2",
				"reclaim=greedy" };
	const char *hot[] = { "hotcold=on", "data_zones=2",
			      "layout=btrfs-5.12" };
	const char *age[] = { "hotcold=age", "data_zones=2" };
	const char *plain[] = { "hotcold", "data_zones=2" };
	const char *both[] = { "layout=btrfs-5.12", "layout=zcow" };
	const char *back[] = { "layout=zcow", "layout=btrfs-5.12" };
	struct zrun_settings set;
	char err[1024];

	ck_assert_int_eq(apply_keys(&set, sizes, 2, err, sizeof(err)), 0);
	ck_assert_uint_eq(set.data_zones, 16);
	ck_assert_uint_eq(set.commit_bytes, 64ull << 20);
	ck_assert_int_eq(set.layout, ZRUN_LAYOUT_ZCOW);
	ck_assert_int_eq(apply_keys(&set, before, 3, err, sizeof(err)), 0);
	ck_assert_int_eq(set.layout, ZRUN_LAYOUT_BTRFS_5_12);
	ck_assert_uint_eq(set.data_zones, 2);
	ck_assert_int_eq(set.reclaim, ZCOW_RECLAIM_GREEDY);
	ck_assert(!set.hotcold);
	ck_assert_int_eq(apply_keys(&set, after, 3, err, sizeof(err)), 0);
	ck_assert_int_eq(set.layout, ZRUN_LAYOUT_BTRFS_5_12);
	ck_assert_uint_eq(set.data_zones, 2);
	ck_assert_int_eq(set.reclaim, ZCOW_RECLAIM_GREEDY);
	ck_assert_int_eq(apply_keys(&set, hot, 3, err, sizeof(err)), 0);
	ck_assert_int_eq(set.hotcold, ZCOW_HOTCOLD_FREQUENCY);
	ck_assert_uint_eq(set.data_zones, 2);
	ck_assert_int_eq(set.reclaim, ZCOW_RECLAIM_OFF);
	ck_assert_int_eq(apply_keys(&set, age, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(set.hotcold, ZCOW_HOTCOLD_AGE);
	ck_assert_int_eq(apply_keys(&set, plain, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(set.hotcold, ZCOW_HOTCOLD_FREQUENCY);
	ck_assert_int_eq(apply_keys(&set, both, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(set.layout, ZRUN_LAYOUT_ZCOW);
	ck_assert_uint_eq(set.data_zones, 0);
	ck_assert_int_eq(set.reclaim, ZCOW_RECLAIM_DEFAULT);
	ck_assert_int_eq(apply_keys(&set, back, 2, err, sizeof(err)), 0);
	ck_assert_int_eq(set.layout, ZRUN_LAYOUT_BTRFS_5_12);
	ck_assert_uint_eq(set.data_zones, 1);
	ck_assert_int_eq(set.reclaim, ZCOW_RECLAIM_OFF);
	ck_assert_str_eq(zrun_layout_name(ZRUN_LAYOUT_BTRFS_5_12),
			 "btrfs-5.12");
}
END_TEST

/* trace.csv of @dir: how many zones its data commands went to, and how
 * often one data command went to another zone than the one before. */
static void data_zones_of(const char *dir, unsigned int *nr_ret,
			  unsigned int *switches_ret)
{
	char path[1024], *text, *p, zone[32], prev[32] = "";
	char seen[64][32];
	int ccls, czone;
	unsigned int i;

	snprintf(path, sizeof(path), "%s/trace.csv", dir);
	text = zcow_test_read_path(path);
	ccls = csv_col(text, "class");
	czone = csv_col(text, "zone");
	*nr_ret = *switches_ret = 0;
	for (p = strchr(text, '\n'); p && p[1]; p = strchr(p, '\n')) {
		char cls[16];

		p++;
		csv_field(p, ccls, cls, sizeof(cls));
		if (strcmp(cls, "data"))
			continue;
		csv_field(p, czone, zone, sizeof(zone));
		if (prev[0] && strcmp(prev, zone))
			(*switches_ret)++;
		snprintf(prev, sizeof(prev), "%s", zone);
		for (i = 0; i < *nr_ret && strcmp(seen[i], zone); i++)
			;
		if (i == *nr_ret) {
			ck_assert(*nr_ret < 64);
			snprintf(seen[(*nr_ret)++], 32, "%s", zone);
		}
	}
	free(text);
}

/*
 * layout=btrfs-5.12 writes one data block group at a time: 16 jobs of
 * 4 KiB Zone Appends (10 ms, ~5.3 MB) on 4 MiB zone capacities fill one
 * data group, then go on in the next, never back (1 switch); zcow's
 * layout round-robins 4 groups.  summary.json and config.fio record
 * the layout and the options in force; commit_bytes commits after every
 * that many bytes of data.
 */
START_TEST(test_run_btrfs_5_12_layout_writes_one_data_group_at_a_time)
{
	const char *old[] = { "runtime=10ms", "trace=on", "zone_append=on",
			      "layout=btrfs-5.12", "device=sim:zones=64,"
			      "zone_size=8M,zone_cap=4M,max_open=14,"
			      "max_active=14" };
	const char *cur[] = { "runtime=10ms", "trace=on", "zone_append=on",
			      "layout=zcow", "device=sim:zones=64,"
			      "zone_size=8M,zone_cap=4M,max_open=14,"
			      "max_active=14" };
	const char *commit[] = { "runtime=10ms", "zone_append=off",
				 "commit_bytes=1m", "layout=btrfs-5.12",
				 "device=sim:zones=64,zone_size=8M,"
				 "zone_cap=4M,max_open=14,max_active=14" };
	char *d, *s, path[1024], *cfg;
	unsigned int nr, sw;
	double wr;

	d = run_fs(old, 5);
	data_zones_of(d, &nr, &sw);
	ck_assert_uint_eq(nr, 2);
	ck_assert_uint_eq(sw, 1);
	s = zcow_test_summary_no_wall(d);
	ck_assert(strstr(s, "\n  \"layout\": \"btrfs-5.12\",\n  "
			    "\"mount_options\": {\"zone_append\": true, "
			    "\"treelog\": true, \"data_zones\": 1, "
			    "\"commit_bytes\": 268435456, \"reclaim\": "
			    "\"off\", \"hotcold\": \"off\", \"cleaner\": "
			    "\"writer\"},\n"));
	snprintf(path, sizeof(path), "%s/config.fio", d);
	cfg = zcow_test_read_path(path);
	ck_assert(strstr(cfg, "\nreclaim=off\nlayout=btrfs-5.12\n"
			      "data_zones=1\n"));
	free(cfg);
	free(s);
	free(d);
	d = run_fs(cur, 5);
	data_zones_of(d, &nr, &sw);
	ck_assert_uint_eq(nr, 4);
	ck_assert_uint_gt(sw, 1000);
	s = zcow_test_summary_no_wall(d);
	ck_assert(strstr(s, "\n  \"layout\": \"zcow\",\n  "
			    "\"mount_options\": {\"zone_append\": true, "
			    "\"treelog\": true, \"data_zones\": 4, "
			    "\"commit_bytes\": 268435456, \"reclaim\": "
			    "\"greedy\", \"hotcold\": \"off\", \"cleaner\": "
			    "\"writer\"},\n"));
	free(s);
	free(d);
	d = run_fs(commit, 5);
	s = zcow_test_summary_no_wall(d);
	ck_assert(strstr(s, "\"data_zones\": 1, \"commit_bytes\": 1048576, "
			    "\"reclaim\": \"off\""));
	/* one commit per full MiB of data; end_fsync logs the rest */
	wr = json_num(s, "\"write_bytes\"");
	ck_assert(wr >= 3 << 20);
	ck_assert_uint_eq((uint64_t)json_num(s, "\"commits\""),
			  (uint64_t)wr >> 20);
	free(s);
	free(d);
}
END_TEST

/* @s through @put (zres_json_str or zres_csv_str), as written. */
static char *written(void (*put)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(m);
	put(m, s);
	fclose(m);
	return buf;
}

/*
 * One escaping rule for the results' text: quotes and backslashes
 * escaped, every control character written \u00XX (crash.json used to
 * drop them, crash.csv dropped quotes), byte for byte.
 */
START_TEST(test_run_list_options_names_every_option_the_parser_knows)
{
	char *out = NULL, *err = NULL;

	ck_assert_int_eq(zcow_test_run(&out, &err, "run", "--list-options",
				       NULL), 0);
	/* One a line: a modelled option, an alias, an ignored one. */
	ck_assert_ptr_nonnull(strstr(out, "\nbs (alias blocksize)\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nrwmixread\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ndirect (ignored)\n"));
	/* An engine's own option, ignored or refused with the reason. */
	ck_assert_ptr_nonnull(strstr(out, "\nhostname (ignored: network "
				     "engine (net, rdma, librpma): the I/O "
				     "goes to the zcow target)\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nprogram (refused: "
				     "ioengine=exec runs a program and does "
				     "no I/O: nothing for zcow to run)\n"));
	ck_assert_str_eq(err, "");
	free(out);
	free(err);
}
END_TEST

START_TEST(test_results_json_and_csv_escape_control_characters)
{
	static const char label[] = "a\"b\\c\001d\te\nf\037g";
	char *s;

	s = written(zres_json_str, label);
	ck_assert_str_eq(s, "\"a\\\"b\\\\c\\u0001d\\u0009e\\u000af\\u001fg\"");
	free(s);
	s = written(zres_csv_str, label);
	ck_assert_str_eq(s, "\"a\"\"b\\c\\u0001d\\u0009e\\u000af\\u001fg\"");
	free(s);
}
END_TEST

/* Two results folders of one name in the same second: two folders, the
 * second "-2", neither overwritten. */
START_TEST(test_results_folders_in_the_same_second_are_distinct)
{
	char parent[] = "/tmp/zcow-test-res-XXXXXX", *d1 = NULL, *d2 = NULL;
	char *d3 = NULL;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	ck_assert_int_eq(zres_make_dir_at(parent, "x", 86400, &d1), 0);
	ck_assert_int_eq(zres_make_dir_at(parent, "x", 86400, &d2), 0);
	ck_assert_int_eq(zres_make_dir(parent, "x", &d3), 0);
	ck_assert_str_ne(d1, d2);
	ck_assert_str_ne(d2, d3);
	ck_assert_ptr_nonnull(strstr(d1, "/19700102T000000Z-x"));
	ck_assert_ptr_nonnull(strstr(d2, "/19700102T000000Z-x-2"));
	ck_assert_int_eq(stat(d1, &st), 0);
	ck_assert_int_eq(stat(d2, &st), 0);
	free(d1);
	free(d2);
	free(d3);
}
END_TEST

Suite *run_suite(void)
{
	Suite *s = suite_create("run_suite");
	TCase *tc = tcase_create("raw");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_same_scenario_twice_is_byte_identical);
	tcase_add_test(tc, test_run_raw_16_jobs_writes_182k_appends_132k);
	tcase_add_test(tc, test_run_raw_1_job_write_qd1_85k);
	tcase_add_test(tc, test_run_seq_128k_reaches_bandwidth_ceiling);
	tcase_add_test(tc, test_run_zone_reset_gc_example_resets_zones);
	tcase_add_test(tc, test_run_fs_seed_counts_commits_bgs_and_exact_bytes);
	tcase_add_test(tc, test_run_fs_same_scenario_twice_is_byte_identical);
	tcase_add_test(tc, test_run_fs_16_jobs_write_beats_append_over_4_zones);
	tcase_add_test(tc, test_run_instant_time_based_ends);
	tcase_add_test(tc, test_run_starts_on_zones_left_open);
	tcase_add_test(tc, test_run_fs_on_file_device_rates_over_wall_time);
	tcase_add_test(tc, test_run_bad_zcow_option_names_file_line);
	tcase_add_test(tc, test_run_reclaim_keys_and_counters);
	tcase_add_test(tc, test_run_replace_during_overwrite);
	tcase_add_test(tc,
		       test_run_snapshot_interval_takes_snapshots_while_jobs_run);
	tcase_add_test(tc, test_run_sweep_and_plot_write_png_svg_tables);
	tcase_add_test(tc, test_run_gc_sustained_reclaims_without_enospc);
	tcase_add_test(tc, test_run_treelog_same_seed_same_numbers);
	tcase_add_test(tc, test_run_fsync_fallbacks_by_cause_in_summary);
	tcase_add_test(tc, test_run_treelog_fsync_count_is_the_job_files);
	tcase_add_test(tc,
		       test_run_treelog_commits_and_log_syncs_do_not_overlap);
	tcase_add_test(tc, test_run_treelog_waiting_syncs_join_one_log_write);
	tcase_add_test(tc, test_run_txn_fsync_waits_shares_or_commits);
	tcase_add_test(
		tc, test_run_treelog_off_every_fsync_commits_its_buffered_writes);
	tcase_add_test(tc,
		       test_run_txn_running_is_the_commit_begun_now_or_the_next);
	tcase_add_test(tc, test_run_kernel_fsync_job_runs_unchanged);
	tcase_add_test(tc, test_run_buffered_writes_each_fsync_commits_its_own);
	tcase_add_test(tc, test_run_treelog_client_dirs_hold_exact_files);
	tcase_add_test(tc,
		       test_run_treelog_renames_and_unlinks_leave_their_names);
	tcase_add_test(tc, test_run_files_beyond_the_device_refused_at_setup);
	tcase_add_test(tc, test_run_jobs_naming_one_file_share_its_room);
	tcase_add_test(tc, test_run_directory_error_names_file_line_option);
	tcase_add_test(tc, test_run_engine_options_run_as_plain_io);
	tcase_add_test(tc, test_run_allow_file_create_0_needs_existing_files);
	tcase_add_test(tc, test_run_filename_directories_are_created);
	tcase_add_test(tc, test_run_io_size_sets_the_bytes_of_io);
	tcase_add_test(tc,
		       test_run_stonewall_starts_a_later_phase_at_the_last_end);
	tcase_add_test(tc, test_run_wait_for_starts_at_its_waitee_end);
	tcase_add_test(tc,
		       test_run_create_on_open_below_nrfiles_creates_every_file);
	tcase_add_test(tc, test_run_readers_with_openfiles_below_nrfiles_run);
	tcase_add_test(tc, test_run_set_and_zcow_values_name_file_line_option);
	tcase_add_test(tc, test_run_list_options_names_every_option_the_parser_knows);
	tcase_add_test(tc, test_results_json_and_csv_escape_control_characters);
	tcase_add_test(tc, test_results_folders_in_the_same_second_are_distinct);
	tcase_add_test(tc, test_run_raw_randwrite_wa_is_one_in_every_interval);
	tcase_add_test(tc, test_run_interval_bytes_add_up_to_the_whole_run);
	tcase_add_test(tc, test_run_fs_fsync_wa_counts_meta_log_and_superblock);
	suite_add_tcase(s, tc);
	/* the fs target's mount keys and the layout presets */
	tc = tcase_create("layout");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		test_run_mount_keys_refuse_bad_values_naming_file_line_option);
	tcase_add_test(tc,
		test_run_layout_preset_yields_to_explicit_keys_in_any_order);
	tcase_add_test(tc,
		test_run_btrfs_5_12_layout_writes_one_data_group_at_a_time);
	tcase_add_test(tc, test_run_plot_layouts_side_by_side_with_ratios_at_16);
	suite_add_tcase(s, tc);
	return s;
}
