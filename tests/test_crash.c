// SPDX-License-Identifier: MIT
/*
 * Crash-consistency campaigns (harness/crash.h, docs/crash.md): the quick
 * variant of every configs/crash-*.scenario runs clean, and each
 * test-only ordering mutation of core/ (zcrash_opts.mutation, a mount
 * option of the fs under test) is caught by
 * the campaign that targets it, in the tree-log mode it targets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "results.h"
#include "tests.h"
#include "fs.h"

static void print_summary(const char *name, const char *treelog, int mutation,
			  const struct zcrash_summary *sum)
{
	int k;

	fprintf(stderr, "%s treelog=%s mutation %d: %llu of %llu states violate (",
		name, treelog ? treelog : "scenario", mutation,
		(unsigned long long)sum->violations,
		(unsigned long long)sum->tried);
	for (k = 1; k < ZCRASH_NR_ORACLES; k++)
		fprintf(stderr, "%s%d %llu", k > 1 ? ", " : "", k,
			(unsigned long long)sum->by_oracle[k]);
	fprintf(stderr, "); first repro: %s\n", sum->first_repro);
}

/* The quick variant of configs/crash-@name.scenario; @treelog and
 * @replay_cuts NULL: the scenario's. */
static struct zcrash_summary run_modes(const char *name, const char *treelog,
				       const char *replay_cuts, int mutation)
{
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .no_results = true, .treelog = treelog,
				 .replay_cuts = replay_cuts, .mutation = mutation };
	struct zcrash_summary sum;
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "configs/crash-%s.scenario", name);
	ret = zcrash_run(path, &o, &sum);
	ck_assert_int_ge(ret, 0);
	ck_assert_uint_gt(sum.tried, 0);
	if (sum.violations)
		print_summary(name, treelog, mutation, &sum);
	return sum;
}

static struct zcrash_summary run(const char *name, int mutation)
{
	return run_modes(name, NULL, NULL, mutation);
}

/*
 * Whether an fsync on a fresh treelog=on mount is answered by the
 * tree-log (statfs nr_log_syncs): else the log mutations would have
 * nothing to break.
 */
static bool is_fsync_logged(void)
{
	static const char *const spec = "sim:zones=16,zone_size=4M,zone_cap=1M";
	struct zcow_statfs st = { 0 };
	struct zcow_file *f = NULL;
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	uint8_t b[4096];

	memset(b, 0x5a, sizeof(b));
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_create(fs, "/f", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, b, sizeof(b), 0), sizeof(b));
	ck_assert_int_eq(zcow_fsync(f), 0);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	zcow_unmount(fs);
	zdev_close(dev);
	return st.nr_log_syncs > 0;
}

START_TEST(test_quick_clean)
{
	static const char *const names[] = { "sblog", "commit", "fsync", "reset",
					     "reclaim", "snapshot",
					     "hotreloc" };
	struct zcrash_summary s = run(names[_i], 0);

	ck_assert_uint_eq(s.violations, 0);
	ck_assert_uint_eq(s.passed, s.tried);
	/* The uncut runs' operations are counted, and none failed but
	 * with ENOSPC (refused before it changed anything: the states
	 * above found nothing of it) or a name missing or taken (the
	 * generated sequences meet those by design). */
	ck_assert_uint_gt(s.nr_ops_ok, 0);
	ck_assert_uint_eq(s.nr_ops, s.nr_ops_ok + s.nr_ops_enospc +
					    s.nr_ops_namespace +
					    s.nr_ops_other);
	ck_assert_uint_eq(s.nr_ops_other, 0);
	ck_assert_uint_eq(s.nr_ops_undeclared, 0);
	/* The reclaim campaigns' operations all succeed (2 x 124 ops,
	 * quick; crash-reclaim-full is the device that runs full). */
	if (!strcmp(names[_i], "reclaim")) {
		ck_assert_uint_eq(s.nr_ops, 248);
		ck_assert_uint_eq(s.nr_ops_ok, 248);
	}
	if (!strcmp(names[_i], "hotreloc"))
		ck_assert_uint_eq(s.nr_ops_ok, s.nr_ops);
}
END_TEST

/* crash-commit quick, its points replaced by --sample @n. */
static struct zcrash_summary run_sample(uint64_t n)
{
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .no_results = true, .treelog = "off",
				 .sample = n };
	struct zcrash_summary sum;

	ck_assert_int_ge(zcrash_run("configs/crash-commit.scenario", &o, &sum),
			 0);
	ck_assert_uint_eq(sum.violations, 0);
	return sum;
}

/*
 * --sample N draws N distinct persist points of the uncut run (all of
 * them when N is as many or more) and the uncut end: a huge N is the
 * whole space, not N draws (it grew memory without bound, and a space of
 * 30 states sampled 10,000 times ran 30,003 states); a small N is N
 * points, none twice.
 */
START_TEST(test_sample_is_bounded_and_without_repetition)
{
	struct zcrash_summary all = run_sample(1000000000000ULL);
	struct zcrash_summary many = run_sample(100000);
	struct zcrash_summary three = run_sample(3);
	struct zcrash_summary one = run_sample(1);

	ck_assert_uint_eq(all.tried, many.tried);
	/* per point the same loss policies: 3 points and the end take 4
	 * times what the end alone with 1 point takes half of */
	ck_assert_uint_eq(three.tried * 2, one.tried * 4);
	ck_assert_uint_lt(three.tried, all.tried);
}
END_TEST

/*
 * An operation of the uncut run that fails with an errno the campaign's
 * may_fail= does not allow fails the campaign (exit status 1), with the
 * uncut run's repro line: crash-reclaim-full without its may_fail=enospc
 * (29 of its quick operations get ENOSPC with treelog=on, whose log
 * group takes a zone); with it the campaign passes.
 */
START_TEST(test_undeclared_enospc_fails_the_campaign)
{
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .no_results = true, .treelog = "on",
				 .sample = 2 };
	char path[] = "/tmp/zcow-undeclared-XXXXXX.scenario", line[256];
	struct zcrash_summary sum;
	FILE *in, *out;
	int fd;

	fd = mkstemps(path, 9);
	ck_assert_int_ge(fd, 0);
	out = fdopen(fd, "w");
	in = fopen("configs/crash-reclaim-full.scenario", "r");
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(in);
	while (fgets(line, sizeof(line), in))
		if (strncmp(line, "may_fail=", 9))
			fputs(line, out);
	fclose(in);
	fclose(out);
	ck_assert_int_eq(zcrash_run(path, &o, &sum), 1);
	ck_assert_uint_eq(sum.violations, 0);
	ck_assert_uint_gt(sum.nr_ops_enospc, 0);
	ck_assert_uint_eq(sum.nr_ops_undeclared, sum.nr_ops_enospc);
	ck_assert_msg(strstr(sum.first_repro, " w=0 treelog=on cut=end"),
		      "repro: %s", sum.first_repro);
	unlink(path);
	ck_assert_int_eq(zcrash_run("configs/crash-reclaim-full.scenario",
				    &o, &sum), 0);
	ck_assert_uint_gt(sum.nr_ops_enospc, 0);
	ck_assert_uint_eq(sum.nr_ops_undeclared, 0);
}
END_TEST

START_TEST(test_mutation_reset_caught)
{
	struct zcrash_summary s = run("reset", ZCOW_MUT_RESET_BEFORE_COMMIT);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

/*
 * Relocation that resets a group's zone as soon as its contents are
 * copied, before the commit pointing at the copies is durable: a cut in
 * between leaves the committed trees pointing into a reset zone.
 */
START_TEST(test_mutation_reloc_reset_early_caught)
{
	struct zcrash_summary s = run("reclaim", ZCOW_MUT_RELOC_RESET_EARLY);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

/*
 * The commit that removes the groups reclaim emptied resets their zones
 * before its superblock: a cut in between leaves the previous superblock
 * pointing at data in reset zones.
 */
START_TEST(test_mutation_cleaned_reset_early_caught)
{
	struct zcrash_summary s = run("reclaim", ZCOW_MUT_CLEANED_RESET_EARLY);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

/*
 * A device replace cut by power at every persist point of the source and
 * of the target (one power domain), under drop and prefix, in both
 * tree-log modes: no violation, and the states fall on both sides of the
 * switch (the fs mounted on the target in some, on the source in others).
 */
START_TEST(test_replace_campaign_clean_on_both_sides_of_the_switch)
{
	struct zcrash_summary s = run("replace", 0);

	ck_assert_uint_eq(s.violations, 0);
	ck_assert_uint_eq(s.passed, s.tried);
	ck_assert_uint_gt(s.tried_treelog[0], 0);
	ck_assert_uint_gt(s.tried_treelog[1], 0);
	ck_assert_uint_gt(s.nr_on_target, 0);
	ck_assert_uint_gt(s.tried - s.nr_on_target, 0);
}
END_TEST

/*
 * A replace that wipes the source's superblocks before the commit that
 * switches to the target is durable: a cut in between leaves no device
 * with a superblock of the fs.  Oracle 10 (replace) names it.
 */
START_TEST(test_mutation_replace_wipe_early_caught)
{
	struct zcrash_summary s = run("replace", ZCOW_MUT_REPLACE_WIPE_EARLY);

	ck_assert_uint_gt(s.by_oracle[ZCRASH_REPLACE], 0);
}
END_TEST

START_TEST(test_mutation_sb_flush_caught)
{
	struct zcrash_summary s = run("commit", ZCOW_MUT_SB_BEFORE_FLUSH);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

/* treelog=on, no mutation: the log oracles (7, 8) hold on every state. */
START_TEST(test_treelog_on_clean_without_mutation)
{
	struct zcrash_summary s = run_modes("fsync", "on", NULL, 0);

	ck_assert_uint_eq(s.violations, 0);
	ck_assert_uint_eq(s.tried_treelog[1], s.tried);
}
END_TEST

/* An fsync whose commit is not flushed before its superblock loses the
 * fsynced data: oracle 7 (fsync durability) names it with treelog=on. */
START_TEST(test_treelog_on_fsync_oracle_catches_unflushed_commit)
{
	struct zcrash_summary s = run_modes("fsync", "on", NULL,
					    ZCOW_MUT_SB_BEFORE_FLUSH);

	ck_assert_uint_gt(s.by_oracle[ZCRASH_FSYNC], 0);
}
END_TEST

START_TEST(test_treelog_mutation_drop_item_caught)
{
	struct zcrash_summary s;

	ck_assert(is_fsync_logged());
	s = run_modes("fsync", "on", NULL, ZCOW_MUT_LOG_DROP_ITEM);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_FSYNC], 0);
}
END_TEST

START_TEST(test_treelog_mutation_sb_before_log_flush_caught)
{
	struct zcrash_summary s;

	ck_assert(is_fsync_logged());
	s = run_modes("fsync", "on", NULL, ZCOW_MUT_LOG_SB_BEFORE_FLUSH);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_FSYNC], 0);
}
END_TEST

/* A second power cut at every persist point of the recovery (mount, log
 * replay, the first commit), then recovery again: the same oracles hold,
 * in both modes. */
START_TEST(test_recovery_cut_again_clean)
{
	struct zcrash_summary s = run_modes("commit", "both", "every", 0);

	ck_assert_uint_gt(s.tried_replay, 0);
	ck_assert_uint_gt(s.tried_treelog[0], 0);
	ck_assert_uint_gt(s.tried_treelog[1], 0);
	ck_assert_uint_eq(s.violations, 0);
}
END_TEST

START_TEST(test_repro_line_recovery_cut)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
		.repro = "configs/crash-commit.scenario quick w=0 treelog=on cut=persist=5 loss=drop seed=1 cut2=persist=2" };
	struct zcrash_summary sum;

	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	ck_assert_uint_eq(sum.tried_replay, 1);
	ck_assert_uint_eq(sum.tried_treelog[1], 1);
}
END_TEST

/* One state, replayed from its repro line: no violation. */
static void expect_repro_clean(const char *line)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
				 .repro = line };
	struct zcrash_summary sum;

	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	ck_assert_uint_eq(sum.violations, 0);
}

/*
 * Untuned geometry (configs/crash-reclaim-untuned.scenario: 2
 * conventional zones, capacity below the zone size, max_active 6), the
 * tree-log on: the crash left a zone written by a chunk no commit
 * recorded open on the device; the probe write after recovery was
 * refused with EOVERFLOW (one zone over the limit the fs did not know
 * was open) until the mount reset it (docs/space.md, "After a crash").
 */
START_TEST(test_repro_zone_left_open_outside_every_group)
{
	static const char *const lines[] = {
		"configs/crash-reclaim-untuned.scenario quick w=0 treelog=on cut=persist=358 loss=prefix seed=1",
		"configs/crash-reclaim-untuned.scenario quick w=0 treelog=on cut=persist=459 loss=prefix seed=1",
		"configs/crash-reclaim-untuned.scenario quick w=0 treelog=on cut=persist=558 loss=prefix seed=1",
	};
	unsigned int i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		expect_repro_clean(lines[i]);
}
END_TEST

/*
 * A write whose reservation ran a reclaim pass committed twice on its way
 * (generations 135 and 136 of this state's uncut run), before its own
 * items; a cut in commit 137 recovers generation 136, which rightly holds
 * /b as it was before the write.  The model before the write was recorded
 * for the first of those generations only, so the atomic oracle refused
 * the older content (a false violation, at every loss policy).
 */
START_TEST(test_repro_op_that_committed_twice_on_its_way)
{
	static const char *const lines[] = {
		"configs/crash-reclaim-full.scenario w=0 treelog=off cut=persist=987 loss=keep seed=1",
		"configs/crash-reclaim-full.scenario w=0 treelog=off cut=persist=990 loss=drop seed=2",
		"configs/crash-reclaim-full.scenario w=0 treelog=off cut=persist=996 loss=torn seed=1",
	};
	unsigned int i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		expect_repro_clean(lines[i]);
}
END_TEST

/*
 * The write after recovery (oracle 1) at a state of the full crash-hotcold
 * campaign where every group with garbage was a data group left open by
 * the mount: the write failed with ENOSPC (reclaim took only full groups),
 * which the probe reported as EIO, a violation.  Now such groups are
 * candidates (test_reclaim_takes_open_groups_no_slot_fills), so the write
 * succeeds; the probe also reports its own errno now, which this state no
 * longer reaches.
 */
START_TEST(test_repro_write_after_recovery_cleans_open_groups)
{
	expect_repro_clean("configs/crash-hotcold.scenario w=0 treelog=on cut=persist=93 loss=keep seed=1");
}
END_TEST

START_TEST(test_repro_line)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
		.repro = "configs/crash-commit.scenario quick w=0 cut=persist=5 loss=drop seed=1" };
	struct zcrash_summary sum;
	char line[512];

	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	o.mutation = ZCOW_MUT_SB_BEFORE_FLUSH;
	o.repro = NULL;
	o.quick = true;
	ck_assert_int_eq(zcrash_run("configs/crash-commit.scenario", &o, &sum), 1);
	snprintf(line, sizeof(line), "%s", sum.first_repro);
	o.repro = line;
	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 1);
	ck_assert_uint_eq(sum.tried, 1);
}
END_TEST

/*
 * workload=faults: EIO on the Nth command, EIO rates, zones failing, then
 * a power cut; faults fire, errors reach the callers, and nothing
 * acknowledged is lost (no violation), in both tree-log modes.
 */
START_TEST(test_faults_campaign_reports_errors_and_loses_no_acked_write)
{
	struct zcrash_summary s = run("faults", 0);

	ck_assert_uint_eq(s.violations, 0);
	ck_assert_uint_gt(s.tried_treelog[0], 0);
	ck_assert_uint_gt(s.tried_treelog[1], 0);
	ck_assert_uint_gt(s.nr_faulted, s.tried / 2);
	ck_assert_uint_gt(s.nr_injected, 0);
	ck_assert_uint_gt(s.nr_zone_fails, 0);
	ck_assert_uint_gt(s.nr_errors, 0);
}
END_TEST

/* The faults campaign runs the recovery oracles: a tree-log that drops
 * the fsynced inode's last extent is caught under oracle 7. */
START_TEST(test_faults_campaign_catches_log_drop_item)
{
	struct zcrash_summary s;

	ck_assert(is_fsync_logged());
	s = run_modes("faults", "on", NULL, ZCOW_MUT_LOG_DROP_ITEM);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_FSYNC], 0);
}
END_TEST

/* A repro line names one fault trial (w=N) and replays it alone. */
START_TEST(test_faults_repro_line_replays_one_trial)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
		.repro = "configs/crash-faults.scenario quick w=3 treelog=on cut=end loss=drop seed=1" };
	struct zcrash_summary sum;

	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	ck_assert_uint_eq(sum.nr_faulted, 1);
	o.repro = "configs/crash-faults.scenario quick w=100000 treelog=on cut=end loss=drop seed=1";
	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), -EINVAL);
}
END_TEST

/* Run a campaign from @text (a scenario written to a temp file); its
 * stderr in @err. */
static int run_text(const char *text, char *err, size_t elen)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
				 .quick = true };
	char path[] = "/tmp/zcrash-scn-XXXXXX", epath[] = "/tmp/zcrash-err-XXXXXX";
	struct zcrash_summary sum;
	int fd = mkstemp(path), efd = mkstemp(epath), saved, ret;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	fflush(stderr);
	saved = dup(2);
	dup2(efd, 2);
	ret = zcrash_run(path, &o, &sum);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(efd, err, elen - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(efd);
	unlink(path);
	unlink(epath);
	return ret;
}

/* Bad fault keys: -EINVAL, the message naming file, line and option. */
START_TEST(test_faults_scenario_refuses_bad_keys_naming_line)
{
	static const char head[] = "[zcow]\ndevice=sim:zones=16,zone_size=4M,zone_cap=1M\n[crash]\nworkload=faults\n";
	static const struct {
		const char *line, *option;
	} bad[] = {
		{ "fail=bogus", "'fail'" },
		{ "fail=write:3", "'fail'" },
		{ "fail_rate=101%", "'fail_rate'" },
		{ "fail_rate=write:0", "'fail_rate'" },
		{ "zone_fail=melted", "'zone_fail'" },
		{ "fail_step=0", "'fail_step'" },
		{ "zone_points=x", "'zone_points'" },
	};
	char text[512], err[1024];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s\n", head, bad[i].line);
		ck_assert_int_eq(run_text(text, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, ":5: option ") &&
			      strstr(err, bad[i].option),
			      "%s: %s", bad[i].line, err);
	}
	/* An unknown workload is refused, not run as fio. */
	snprintf(text, sizeof(text),
		 "[zcow]\ndevice=sim:\n[crash]\nworkload=metaa\n");
	ck_assert_int_eq(run_text(text, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, ":4: option 'workload'"), "%s", err);
	/* No fault to inject, or fault keys for another workload. */
	ck_assert_int_eq(run_text(head, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "needs fail"));
	snprintf(text, sizeof(text), "[zcow]\ndevice=sim:\n[crash]\nworkload=meta\nfail=write\n");
	ck_assert_int_eq(run_text(text, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "need workload=faults"));
	/* Well-formed fault keys: the campaign runs clean. */
	snprintf(text, sizeof(text), "%sfail=meta\nfail_rate=write:7\n", head);
	ck_assert_int_eq(run_text(text, err, sizeof(err)), 0);
}
END_TEST

/* A scenario file @name under a fresh folder (its path in @path). */
static void put_scenario(char *path, size_t len, const char *name,
			 const char *text)
{
	char dir[] = "/tmp/zcrash-scn-XXXXXX";
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static const char small_meta[] =
	"[zcow]\ndevice=sim:zones=16,zone_size=4M,zone_cap=1M\n"
	"[crash]\nworkload=meta\nops=4\npoints=end\n";

/*
 * A crash scenario is read as zcow run reads its scenarios: an unknown
 * [zcow] key is refused by zcow crash (it was ignored), naming the file,
 * the line and the key, with the exit status of a bad scenario (2; 1
 * means a violation); so are an unknown [crash] key and a zcow run key a
 * campaign has no use for; zcow run refuses a crash campaign.
 */
START_TEST(test_scenario_unknown_zcow_key_refused_naming_file_line)
{
	char path[256], want[400], text[512], *out = NULL, *err = NULL;

	snprintf(text, sizeof(text), "[zcow]\n"
		 "device=sim:zones=16,zone_size=4M,zone_cap=1M\n"
		 "bogus_key=1\n[crash]\nworkload=meta\nops=4\n");
	put_scenario(path, sizeof(path), "unknown.scenario", text);
	ck_assert_int_eq(zcow_test_run(&out, &err, "crash", path, "--quick",
				       "--no-results", NULL), 2);
	snprintf(want, sizeof(want),
		 "%s:3: option 'bogus_key': unknown zcow option", path);
	ck_assert_msg(strstr(err, want), "stderr: %s", err);
	ck_assert_ptr_null(strstr(out, "campaign"));
	free(out);
	free(err);
	ck_assert_int_eq(run_text(text, want, sizeof(want)), -EINVAL);
	ck_assert_msg(strstr(want, ":3: option 'bogus_key': unknown zcow option"),
		      "%s", want);
	ck_assert_int_eq(run_text("[zcow]\ndevice=sim:zones=16,zone_size=4M,"
				  "zone_cap=1M\n[crash]\nworkload=meta\n"
				  "opps=4\n", want, sizeof(want)), -EINVAL);
	ck_assert_msg(strstr(want, ":5: option 'opps': unknown crash option"),
		      "%s", want);
	ck_assert_int_eq(run_text("[zcow]\nprofile=zn540\n[crash]\n"
				  "workload=meta\n", want, sizeof(want)),
			 -EINVAL);
	ck_assert_msg(strstr(want, ":2: option 'profile': a zcow run setting"),
		      "%s", want);
	/* zcow run's mount keys: a campaign mounts its own way */
	ck_assert_int_eq(run_text("[zcow]\nlayout=btrfs-5.12\n[crash]\n"
				  "workload=meta\n", want, sizeof(want)),
			 -EINVAL);
	ck_assert_msg(strstr(want, ":2: option 'layout': a zcow run setting, "
				   "not used by zcow crash"), "%s", want);
	ck_assert_int_eq(run_text("[zcow]\ncommit_model=global\n[crash]\n"
				  "workload=meta\n", want, sizeof(want)),
			 -EINVAL);
	ck_assert_msg(strstr(want, ":2: option 'commit_model': a zcow run "
				   "setting"), "%s", want);
	ck_assert_int_eq(run_text("[zcow]\ncleaner=background\n[crash]\n"
				  "workload=meta\n", want, sizeof(want)),
			 -EINVAL);
	ck_assert_msg(strstr(want, ":2: option 'cleaner': a zcow run "
				   "setting"), "%s", want);
	/* the shared keys keep zcow run's values: nodesize is checked */
	ck_assert_int_eq(run_text("[zcow]\nnodesize=3000\n[crash]\n"
				  "workload=meta\n", want, sizeof(want)),
			 -EINVAL);
	ck_assert_msg(strstr(want, ":2: option 'nodesize': not a power of two"),
		      "%s", want);
	/* a policy's knob without the policy, as zcow run refuses it */
	ck_assert_int_eq(run_text("[zcow]\nreclaim=off\nreclaim_high=9\n"
				  "[crash]\nworkload=meta\n", want,
				  sizeof(want)),
			 -EINVAL);
	ck_assert_msg(strstr(want, ":3: option 'reclaim_high': only greedy, "
				   "cost-benefit and hotcold-greedy have a "
				   "watermark (reclaim=off)"),
		      "%s", want);
	ck_assert_int_eq(zcow_test_run(&out, &err, "run",
				       "configs/crash-commit.scenario",
				       "--results", "/tmp/zcrash-no-results",
				       NULL), 1);
	ck_assert_msg(strstr(err, "configs/crash-commit.scenario:11: a [crash] "
			     "section: a crash campaign, run it with zcow crash"),
		      "stderr: %s", err);
	free(out);
	free(err);	/* a crash point in zcow run would be ignored: refused instead */
	ck_assert_int_eq(zcow_test_run(&out, &err, "run",
				       "configs/raw-randwrite-4k.scenario",
				       "--set", "crash=persist=5", "--results",
				       "/tmp/zcrash-no-results", NULL), 1);
	ck_assert_msg(strstr(err, "option 'crash': cut only by zcow crash"),
		      "stderr: %s", err);
	free(out);
	free(err);
}
END_TEST

/* A small campaign of @path with its results under @parent. */
static void run_into(const char *path, const char *parent,
		     struct zcrash_summary *sum)
{
	struct zcrash_opts o = { .is_quiet = true, .quick = true,
				 .results = parent, .max_cases = 1 };

	ck_assert_int_eq(zcrash_run(path, &o, sum), 0);
	ck_assert_uint_eq(sum->tried, 1);
	ck_assert(sum->dir[0]);
}

static char *slurp_in(const char *dir, const char *file)
{
	char path[700];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	ck_assert_int_eq(fread(buf, 1, n, f), n);
	fclose(f);
	return buf;
}

/*
 * The results of a campaign: crash.json carries the zcow version and the
 * git revision of the build, and the scenario copied; two campaigns in
 * the same second get two folders (the second used to overwrite the
 * first).
 */
START_TEST(test_results_carry_git_revision_and_never_overwrite)
{
	char path[256], parent[] = "/tmp/zcrash-res-XXXXXX", want[256];
	struct zcrash_summary s1, s2;
	char *js, *copy;

	put_scenario(path, sizeof(path), "small.scenario", small_meta);
	ck_assert_ptr_nonnull(mkdtemp(parent));
	run_into(path, parent, &s1);
	run_into(path, parent, &s2);
	ck_assert_str_ne(s1.dir, s2.dir);
	js = slurp_in(s1.dir, "crash.json");
	snprintf(want, sizeof(want), "\"git_commit\": \"%s\"", zres_git());
	ck_assert_msg(strstr(js, want), "%s", js);
	snprintf(want, sizeof(want), "\"zcow_version\": \"%s\"",
		 zres_version());
	ck_assert_msg(strstr(js, want), "%s", js);
	free(js);
	js = slurp_in(s2.dir, "crash.json");
	ck_assert_ptr_nonnull(strstr(js, "\"tried\": 1,"));
	free(js);
	copy = slurp_in(s2.dir, "small.scenario");
	ck_assert_str_eq(copy, small_meta);
	free(copy);
}
END_TEST

/*
 * Text in crash.json is escaped, never dropped: a scenario path with a
 * control character (0x01, a tab) is written \u0001 and \u0009.
 */
START_TEST(test_json_escapes_control_characters_in_the_scenario_path)
{
	char path[256], parent[] = "/tmp/zcrash-res-XXXXXX", want[400];
	struct zcrash_summary s;
	char *js, *p;

	put_scenario(path, sizeof(path), "a\001b\tc.scenario", small_meta);
	ck_assert_ptr_nonnull(mkdtemp(parent));
	run_into(path, parent, &s);
	js = slurp_in(s.dir, "crash.json");
	p = strrchr(path, '/');
	snprintf(want, sizeof(want),
		 "\"scenario\": \"%.*s/a\\u0001b\\u0009c.scenario\",",
		 (int)(p - path), path);
	ck_assert_msg(strstr(js, want), "want %s in %s", want, js);
	free(js);
}
END_TEST

Suite *crash_suite(void)
{
	Suite *s = suite_create("crash_suite");
	TCase *tc = tcase_create("campaigns");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_quick_clean, 0, 7);
	tcase_add_test(tc, test_sample_is_bounded_and_without_repetition);
	tcase_add_test(tc, test_undeclared_enospc_fails_the_campaign);
	tcase_add_test(tc, test_mutation_reset_caught);
	tcase_add_test(tc, test_mutation_cleaned_reset_early_caught);
	tcase_add_test(tc, test_mutation_reloc_reset_early_caught);
	tcase_add_test(tc, test_mutation_sb_flush_caught);
	tcase_add_test(tc,
		       test_replace_campaign_clean_on_both_sides_of_the_switch);
	tcase_add_test(tc, test_mutation_replace_wipe_early_caught);
	tcase_add_test(tc, test_repro_line);
	tcase_add_test(tc, test_repro_op_that_committed_twice_on_its_way);
	tcase_add_test(tc, test_repro_zone_left_open_outside_every_group);
	tcase_add_test(tc, test_repro_write_after_recovery_cleans_open_groups);
	tcase_add_test(tc, test_treelog_on_clean_without_mutation);
	tcase_add_test(tc, test_treelog_on_fsync_oracle_catches_unflushed_commit);
	tcase_add_test(tc, test_treelog_mutation_drop_item_caught);
	tcase_add_test(tc, test_treelog_mutation_sb_before_log_flush_caught);
	tcase_add_test(tc, test_recovery_cut_again_clean);
	tcase_add_test(tc, test_repro_line_recovery_cut);
	tcase_add_test(tc,
		       test_faults_campaign_reports_errors_and_loses_no_acked_write);
	tcase_add_test(tc, test_faults_campaign_catches_log_drop_item);
	tcase_add_test(tc, test_faults_repro_line_replays_one_trial);
	tcase_add_test(tc, test_faults_scenario_refuses_bad_keys_naming_line);
	tcase_add_test(tc,
		       test_scenario_unknown_zcow_key_refused_naming_file_line);
	tcase_add_test(tc, test_results_carry_git_revision_and_never_overwrite);
	tcase_add_test(tc,
		       test_json_escapes_control_characters_in_the_scenario_path);
	suite_add_tcase(s, tc);
	return s;
}
