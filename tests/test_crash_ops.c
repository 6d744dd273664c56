// SPDX-License-Identifier: MIT
/*
 * Recorded operations replayed as a crash campaign's workload
 * (harness/ops_parse.h, harness/crash_ops.c, docs/crash.md): the reader
 * takes every call of the format with its exact fields and refuses a
 * malformed line naming file and line; the replay refuses calls this core
 * lacks and recordings inconsistent with themselves, naming the line; a
 * handwritten ops campaign runs clean in both tree-log modes, and the
 * oracles catch the ordering mutations on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "ops_parse.h"
#include "tests.h"
#include "zcow.h"

static struct zops *parse_ok(const char *text)
{
	struct zops *z = NULL;
	char err[512] = "";

	ck_assert_msg(!zops_parse_buf("t.ops", text, strlen(text), &z, err,
				      sizeof(err)), "%s", err);
	return z;
}

START_TEST(test_parse_every_line_kind_with_exact_fields)
{
	static const char text[] =
		"zcow-ops 1\n"
		"# a comment\n"
		"\n"
		"mkdir /d 0700 1000 100\n"
		"create 3 /d/f 0644 193 1000 100\n"
		"open 4 /d/f 1026\n"
		"close 4\n"
		"write 3 4096 8192 E3069283\n"
		"truncate /d/f 12345\n"
		"fsync 3 1\n"
		"fsyncdir /d\n"
		"unlink /d/g\n"
		"rmdir /d/e\n"
		"rename /d/f /d/h 1\n"
		"link /d/h /d/i\n"
		"symlink ../x%20y /d/s 7 8\n"
		"chmod /d/h 04755\n"
		"chown /d/h 4294967295 5\n"
		"utimens /d/h -5 1073741823 1700000000 999999999\n"
		"setxattr /d/h user.k%3D 2 00ff10\n"
		"setxattr /d/h user.e 0 -\n"
		"removexattr /d/h user.k%3D\n"
		"fallocate 3 1 0 65536\n"
		"sync\n";
	struct zops *z = parse_ok(text);
	const struct zops_line *l = z->l;

	ck_assert_uint_eq(z->nr, 21);
	ck_assert_int_eq(l[0].kind, OPS_MKDIR);
	ck_assert_uint_eq(l[0].line, 4);
	ck_assert_str_eq(l[0].path, "/d");
	ck_assert_uint_eq(l[0].mode, 0700);
	ck_assert_uint_eq(l[0].uid, 1000);
	ck_assert_uint_eq(l[0].gid, 100);
	ck_assert_int_eq(l[1].kind, OPS_CREATE);
	ck_assert_uint_eq(l[1].fh, 3);
	ck_assert_str_eq(l[1].path, "/d/f");
	ck_assert_uint_eq(l[1].mode, 0644);
	ck_assert_uint_eq(l[1].flags, O_CREAT | O_EXCL | O_WRONLY);
	ck_assert_uint_eq(l[1].uid, 1000);
	ck_assert_int_eq(l[2].kind, OPS_OPEN);
	ck_assert_uint_eq(l[2].fh, 4);
	ck_assert_uint_eq(l[2].flags, O_APPEND | O_RDWR);
	ck_assert_int_eq(l[3].kind, OPS_CLOSE);
	ck_assert_uint_eq(l[3].fh, 4);
	ck_assert_int_eq(l[4].kind, OPS_WRITE);
	ck_assert_uint_eq(l[4].off, 4096);
	ck_assert_uint_eq(l[4].len, 8192);
	ck_assert_uint_eq(l[4].crc, 0xe3069283u);
	ck_assert_int_eq(l[5].kind, OPS_TRUNCATE);
	ck_assert_uint_eq(l[5].size, 12345);
	ck_assert_int_eq(l[6].kind, OPS_FSYNC);
	ck_assert(l[6].is_datasync);
	ck_assert_int_eq(l[7].kind, OPS_FSYNCDIR);
	ck_assert_str_eq(l[7].path, "/d");
	ck_assert_int_eq(l[8].kind, OPS_UNLINK);
	ck_assert_int_eq(l[9].kind, OPS_RMDIR);
	ck_assert_str_eq(l[9].path, "/d/e");
	ck_assert_int_eq(l[10].kind, OPS_RENAME);
	ck_assert_str_eq(l[10].path, "/d/f");
	ck_assert_str_eq(l[10].path2, "/d/h");
	ck_assert_uint_eq(l[10].flags, 1);
	ck_assert_int_eq(l[11].kind, OPS_LINK);
	ck_assert_str_eq(l[11].path2, "/d/i");
	ck_assert_int_eq(l[12].kind, OPS_SYMLINK);
	ck_assert_str_eq(l[12].path, "../x y");
	ck_assert_str_eq(l[12].path2, "/d/s");
	ck_assert_uint_eq(l[12].uid, 7);
	ck_assert_uint_eq(l[12].gid, 8);
	ck_assert_int_eq(l[13].kind, OPS_CHMOD);
	ck_assert_uint_eq(l[13].mode, 04755);
	ck_assert_int_eq(l[14].kind, OPS_CHOWN);
	ck_assert_uint_eq(l[14].uid, 4294967295u);
	ck_assert_uint_eq(l[14].gid, 5);
	ck_assert_int_eq(l[15].kind, OPS_UTIMENS);
	ck_assert_int_eq(l[15].asec, -5);
	ck_assert_uint_eq(l[15].ansec, OPS_UTIME_NOW);
	ck_assert_int_eq(l[15].msec, 1700000000);
	ck_assert_uint_eq(l[15].mnsec, 999999999);
	ck_assert_int_eq(l[16].kind, OPS_SETXATTR);
	ck_assert_str_eq(l[16].name, "user.k=");
	ck_assert_uint_eq(l[16].flags, 2);
	ck_assert_uint_eq(l[16].value_len, 3);
	ck_assert_mem_eq(l[16].value, "\x00\xff\x10", 3);
	ck_assert_uint_eq(l[17].value_len, 0);
	ck_assert_ptr_null(l[17].value);
	ck_assert_int_eq(l[18].kind, OPS_REMOVEXATTR);
	ck_assert_str_eq(l[18].name, "user.k=");
	ck_assert_int_eq(l[19].kind, OPS_FALLOCATE);
	ck_assert_uint_eq(l[19].fh, 3);
	ck_assert_uint_eq(l[19].mode, 1);
	ck_assert_uint_eq(l[19].off, 0);
	ck_assert_uint_eq(l[19].len, 65536);
	ck_assert_int_eq(l[20].kind, OPS_SYNC);
	ck_assert_uint_eq(l[20].line, 24);
	zops_free(z);
}
END_TEST

/* %XX (upper-case hex) decodes every byte; anything else is refused. */
START_TEST(test_percent_decoding_exact_and_strict)
{
	static const struct {
		const char *in;
		int ret;
		const char *out;	/* decoded, or a word of the reason */
	} cases[] = {
		{ "/a%20b%25c", 0, "/a b%c" },
		{ "%0A%7F%FF", 0, "\n\x7f\xff" },
		{ "/%41", 0, "/A" },
		{ "/a b", -EINVAL, "not percent-encoded" },
		{ "/\xc3\xa9", -EINVAL, "not percent-encoded" },
		{ "/a%2", -EINVAL, "two hex digits" },
		{ "/a%", -EINVAL, "two hex digits" },
		{ "/a%G0", -EINVAL, "two hex digits" },
		{ "/a%0a", -EINVAL, "lower-case" },
		{ "/a%00", -EINVAL, "NUL" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;
		char *out = NULL;
		size_t n = 0;
		int ret = zops_decode(cases[i].in, strlen(cases[i].in), false,
				      &out, &n, &why);

		ck_assert_msg(ret == cases[i].ret, "%s: %d", cases[i].in, ret);
		if (!ret) {
			ck_assert_uint_eq(n, strlen(cases[i].out));
			ck_assert_mem_eq(out, cases[i].out, n);
		} else {
			ck_assert_msg(strstr(why, cases[i].out), "%s: %s",
				      cases[i].in, why);
		}
		free(out);
	}
}
END_TEST

/* Each malformed line: -EINVAL, "t.ops:LINE: " and what is wrong. */
START_TEST(test_parse_errors_name_file_line_and_reason)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "frob /a", "unknown call 'frob'" },
		{ "mkdir /a 0755 0", "mkdir takes 4 fields, the line has 3" },
		{ "sync now", "sync takes 0 fields, the line has 1" },
		{ "mkdir  /a 0755 0 0", "two spaces" },
		{ "mkdir /a 0755 0 0 ", "a space at the end" },
		{ " sync", "starting with a space" },
		{ "mkdir /a 0855 0 0", "MODE '0855'" },
		{ "mkdir /a 017777 0 0", "MODE '017777'" },
		{ "mkdir a 0755 0 0", "not an absolute path" },
		{ "mkdir /a/../b 0755 0 0", "'..' component" },
		{ "mkdir /a//b 0755 0 0", "empty component" },
		{ "mkdir /a/ 0755 0 0", "ends in '/'" },
		{ "mkdir /a 0755 -1 0", "UID '-1'" },
		{ "mkdir /a 0755 4294967296 0", "UID 4294967296: larger" },
		{ "create 0 /a 0644 193 0 0", "FH 0" },
		{ "write 1 0 10 e306928", "CRC32C 'e306928'" },
		{ "write 1 0 10 e306928x", "CRC32C 'e306928x'" },
		{ "write 1 00 10 e3069283", "leading zeros" },
		{ "write 1 0 99999999999999999999 e3069283", "too large" },
		{ "fsync 1 2", "DATASYNC 2" },
		{ "utimens /a 0 1000000000 0 0", "ANSEC 1000000000" },
		{ "setxattr /a user.x 0 0F", "lower-case hex" },
		{ "setxattr /a user.x 0 abc", "even number" },
		{ "symlink %00 /s 0 0", "NUL" },
		{ "rename /a b 0", "TO 'b'" },
	};
	char text[512], err[512], want[600];
	struct zops *z;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "zcow-ops 1\n# c\nsync\n%s\nsync\n",
			 bad[i].line);
		z = (struct zops *)1;
		ck_assert_int_eq(zops_parse_buf("t.ops", text, strlen(text), &z,
						err, sizeof(err)), -EINVAL);
		ck_assert_ptr_null(z);
		snprintf(want, sizeof(want), "t.ops:4: ");
		ck_assert_msg(!strncmp(err, want, strlen(want)) &&
			      strstr(err, bad[i].why), "%s: %s", bad[i].line,
			      err);
	}
	/* the header: first line, exact */
	ck_assert_int_eq(zops_parse_buf("t.ops", "sync\n", 5, &z, err,
					sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "t.ops:1: the first line must be 'zcow-ops 1'"),
		      "%s", err);
	ck_assert_int_eq(zops_parse_buf("t.ops", "zcow-ops 2\n", 11, &z, err,
					sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "t.ops:1:"), "%s", err);
	ck_assert_int_eq(zops_parse_buf("t.ops", "", 0, &z, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "t.ops:1: empty"), "%s", err);
	/* a file that cannot be read */
	ck_assert_int_eq(zops_parse_file("/nonexistent/x.ops", &z, err,
					 sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/x.ops: "), "%s", err);
}
END_TEST

/* @text into a fresh file; its path in @path. */
static void put_file(char *path, size_t len, const char *text)
{
	char tmpl[] = "/tmp/zcrash-ops-XXXXXX";
	int fd = mkstemp(tmpl);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(path, len, "%s", tmpl);
}

/* zcow crash --ops on @text (quick, quiet): the return, the summary, and
 * the stderr in @err; @mutation and @treelog as zcrash_opts. */
static int run_ops(const char *text, const char *treelog, int mutation,
		   struct zcrash_summary *sum, char *path, size_t plen,
		   char *err, size_t elen)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
				 .quick = true, .treelog = treelog,
				 .mutation = mutation };
	char epath[] = "/tmp/zcrash-err-XXXXXX";
	int efd = mkstemp(epath), saved, ret;
	ssize_t n;

	put_file(path, plen, text);
	o.ops = path;
	ck_assert_int_ge(efd, 0);
	fflush(stderr);
	saved = dup(2);
	dup2(efd, 2);
	ret = zcrash_run(NULL, &o, sum);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(efd, err, elen - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(efd);
	unlink(epath);
	return ret;
}

/*
 * The replay refuses, naming file, line and call: a call this core lacks
 * (never skipped), and a recording inconsistent with a replay from an
 * empty file system.
 */
START_TEST(test_replay_refuses_missing_calls_and_inconsistent_lines)
{
	static const struct {
		const char *lines, *why;
	} bad[] = {
		{ "write 1 0 10 00000000\n", ":2: write: handle 1 is not open" },
		{ "mkdir /x/y 0755 0 0\n", ":2: mkdir: /x/y: its directory /x does not exist" },
		{ "create 1 /a 0644 193 0 0\ncreate 2 /a 0644 193 0 0\n", ":3: create: /a exists, yet O_EXCL succeeded" },
		{ "create 1 /a 0644 193 0 0\ncreate 1 /b 0644 193 0 0\n", ":3: create: handle 1 is open already" },
		{ "create 1 /a 0644 193 0 0\nunlink /a\nwrite 1 0 1 00000000\n", ":4: write: handle 1: its file has no name left" },
		{ "mkdir /d 0755 0 0\nmkdir /d/e 0755 0 0\nrmdir /d\n", ":4: rmdir: /d: not empty" },
		{ "mkdir /d 0755 0 0\nunlink /d\n", ":3: unlink: /d: a directory" },
		{ "mkdir /d 0755 0 0\nmkdir /e 0755 0 0\nmkdir /e/f 0755 0 0\nrename /d /e 0\n", ":5: rename: /d over the directory /e, which is not empty" },
		{ "mkdir /d 0755 0 0\nrename /d /d/e 0\n", ":3: rename: /d/e: into itself" },
		{ "create 1 /a 0644 193 0 0\ncreate 2 /b 0644 193 0 0\nrename /a /b 1\n", ":4: rename: /b exists, yet RENAME_NOREPLACE succeeded" },
		{ "fsyncdir /nope\n", ":2: fsyncdir: /nope: no such directory" },
		{ "mkdir /d 0755 0 0\nlink /d /e\n", ":3: link: /d: a directory" },
		{ "create 1 /a 0644 193 0 0\nlink /a /a\n", ":3: link: /a: exists already" },
		{ "symlink /t /s 0 0\nopen 1 /s 0\n", ":3: open: /s: a symlink" },
		{ "setxattr /nope user.x 0 -\n", ":2: setxattr: /nope: no such file or directory" },
		{ "chmod /nope 0600\n", ":2: chmod: /nope: no such file or directory" },
		{ "create 1 /a 0644 193 0 0\nrename /a /b 2\n", ":3: rename: /b: no such file or directory (RENAME_EXCHANGE needs both)" },
		{ "create 1 /a 0644 193 0 0\nrename /a /b 7\n", ":3: rename: FLAGS 7" },
		{ "create 1 /a 0644 193 0 0\nrename /a /b 3\n", ":3: rename: FLAGS 3" },
		{ "# only a comment\n", "no calls to replay" },
	};
	struct zcrash_summary sum;
	char text[512], path[64], err[1024], want[128];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "zcow-ops 1\n%s", bad[i].lines);
		ck_assert_int_eq(run_ops(text, NULL, 0, &sum, path, sizeof(path),
					 err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "zcow crash: %s", path);
		ck_assert_msg(strstr(err, want) && strstr(err, bad[i].why),
			      "%s: %s", bad[i].lines, err);
		ck_assert_uint_eq(sum.tried, 0);
		unlink(path);
	}
}
END_TEST

/* The command: a malformed ops file is exit status 2 with the file, the
 * line and what is wrong on stderr, and no campaign. */
START_TEST(test_cli_malformed_ops_file_exits_2_naming_line)
{
	char path[64], want[160], *out = NULL, *err = NULL;

	put_file(path, sizeof(path), "zcow-ops 1\nmkdir /a 0755 0 0\nwrite 1 x 3 00000000\n");
	ck_assert_int_eq(zcow_test_run(&out, &err, "crash", "--ops", path,
				       "--quick", "--no-results", NULL), 2);
	snprintf(want, sizeof(want), "%s:3: OFF 'x': not a decimal number", path);
	ck_assert_msg(strstr(err, want), "stderr: %s", err);
	ck_assert_ptr_null(strstr(out, "campaign"));
	free(out);
	free(err);
	unlink(path);
}
END_TEST

static struct zcrash_summary run_scenario(const char *path,
					  const char *treelog, int mutation)
{
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .no_results = true, .treelog = treelog,
				 .mutation = mutation };
	struct zcrash_summary sum;

	ck_assert_int_ge(zcrash_run(path, &o, &sum), 0);
	ck_assert_uint_gt(sum.tried, 0);
	if (sum.violations)
		fprintf(stderr, "%s treelog=%s mutation %d: %llu of %llu states violate, first: %s\n",
			path, treelog ? treelog : "scenario", mutation,
			(unsigned long long)sum.violations,
			(unsigned long long)sum.tried, sum.first_repro);
	return sum;
}

static struct zcrash_summary run_atomic(const char *treelog, int mutation)
{
	return run_scenario("configs/crash-ops-atomic.scenario", treelog,
			    mutation);
}

/* The shipped ops campaigns, quick: two handwritten (an application's
 * atomic replace, a key-value store's log and tables) and two recorded
 * on a FUSE mount (git init/add/commit, with git's defaults and with
 * core.fsync=all), and one of the POSIX calls around fsync (links,
 * RENAME_EXCHANGE, symlinks, xattrs): both tree-log modes, recovery cuts where a log is: no
 * violation. */
START_TEST(test_shipped_ops_campaigns_clean)
{
	static const struct {
		const char *path;
		bool has_fsync;	/* git's defaults fsync nothing */
	} c[] = {
		{ "configs/crash-ops-atomic.scenario", true },
		{ "configs/crash-ops-db.scenario", true },
		{ "configs/crash-ops-git.scenario", false },
		{ "configs/crash-ops-git-fsync.scenario", true },
		{ "configs/crash-ops-posix.scenario", true },
	};
	struct zcrash_summary s = run_scenario(c[_i].path, NULL, 0);

	ck_assert_uint_eq(s.violations, 0);
	ck_assert_uint_eq(s.passed, s.tried);
	ck_assert_uint_gt(s.tried_treelog[0], 0);
	ck_assert_uint_gt(s.tried_treelog[1], 0);
	/* fsyncs answered by the log: states with a log to replay */
	if (c[_i].has_fsync)
		ck_assert_uint_gt(s.tried_replay, 0);
	else
		ck_assert_uint_eq(s.tried_replay, 0);
}
END_TEST

/* The fsync oracle on the ops campaign: an fsync that leaves the file's
 * last extent item out of the log, or writes the superblock pointing at
 * the log before the log's nodes are flushed, loses acknowledged data. */
START_TEST(test_atomic_replace_catches_log_mutations)
{
	char dir[] = "/tmp/zcrash-res-XXXXXX", json[700], *text;
	struct zcrash_opts o = { .quick = true, .is_quiet = true,
				 .treelog = "on",
				 .mutation = ZCOW_MUT_LOG_DROP_ITEM };
	struct zcrash_summary s;
	long n;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	o.results = dir;
	ck_assert_int_eq(zcrash_run("configs/crash-ops-atomic.scenario", &o,
				    &s), 1);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_FSYNC], 0);
	/* the message names the fsync's line in the ops file, and the
	 * results hold the ops file beside the scenario */
	snprintf(json, sizeof(json), "%s/crash.json", s.dir);
	f = fopen(json, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, n + 1);
	ck_assert_int_eq(fread(text, 1, n, f), n);
	fclose(f);
	ck_assert_msg(strstr(text, "oracle 7 fsync: op ") &&
		      strstr(text, ", line "), "%.600s", text);
	ck_assert_ptr_nonnull(strstr(text, "\"ops_file\": \"configs/ops/atomic-replace.ops\""));
	free(text);
	snprintf(json, sizeof(json), "%s/atomic-replace.ops", s.dir);
	ck_assert_int_eq(access(json, R_OK), 0);
	s = run_atomic("on", ZCOW_MUT_LOG_SB_BEFORE_FLUSH);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_FSYNC], 0);
}
END_TEST

/* git's fsyncs (core.fsync=all) answered by a log that leaves the last
 * extent item of the fsynced file out.  git links each fsynced object
 * into place and unlinks its temporary name before the next persist
 * point, which voids the fsync oracle's hold on that name; the object's
 * lost data is named by the no-garbage oracle (a file of no past state)
 * and the checker (its inode's nbytes against its extents). */
START_TEST(test_git_fsync_campaign_catches_dropped_log_item)
{
	struct zcrash_summary s = run_scenario("configs/crash-ops-git-fsync.scenario",
					       "on", ZCOW_MUT_LOG_DROP_ITEM);

	ck_assert_uint_gt(s.by_oracle[ZCRASH_GARBAGE], 0);
	ck_assert_uint_gt(s.by_oracle[ZCRASH_CHECK], 0);
}
END_TEST

/* treelog=off: a commit whose superblock is written before its trees
 * are flushed is caught by the one-commit oracles. */
START_TEST(test_atomic_replace_catches_unflushed_commit)
{
	struct zcrash_summary s = run_atomic("off", ZCOW_MUT_SB_BEFORE_FLUSH);

	ck_assert_uint_gt(s.violations, 0);
}
END_TEST

/*
 * Handles are followed by name: a write and an fsync on a handle whose
 * file was renamed (and whose directory was renamed) reach it under its
 * new name; an O_TRUNC open truncates; fallocate is refused by zoned
 * storage (-EOPNOTSUPP) as the replay expects; an fsync of the top level
 * promises its entries.  The campaign runs clean.
 */
START_TEST(test_handles_followed_through_renames_clean)
{
	static const char text[] =
		"zcow-ops 1\n"
		"mkdir /d 0755 0 0\n"
		"create 1 /d/a 0644 66 0 0\n"
		"write 1 0 5000 00000000\n"
		"rename /d/a /d/b 0\n"
		"rename /d /e 0\n"
		"write 1 5000 3000 00000000\n"
		"fsync 1 0\n"
		"fallocate 1 0 0 4096\n"
		"close 1\n"
		"open 2 /e/b 514\n"
		"write 2 0 100 00000000\n"
		"fsync 2 1\n"
		"create 3 /top 0644 66 0 0\n"
		"fsyncdir /\n";
	struct zcrash_summary sum;
	char path[64], err[1024];

	ck_assert_msg(run_ops(text, "both", 0, &sum, path, sizeof(path), err,
			      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(sum.tried_treelog[0], 0);
	ck_assert_uint_gt(sum.tried_treelog[1], 0);
	ck_assert_uint_eq(sum.violations, 0);
	unlink(path);
}
END_TEST

/*
 * Hard links, symlinks and xattrs replay as recorded: a write through
 * one name is the content of every name of the inode (the model keeps
 * them together, and a promise about one name ends with a write through
 * another); a rename between two names of one inode keeps both, as
 * rename(2) does; a handle whose first name was removed reaches its file by
 * the name left; a symlink's target is its content (readlink after the
 * cut); xattrs are set and removed (not judged).  Clean in both modes.
 */
START_TEST(test_links_symlinks_xattrs_replay_clean)
{
	static const char text[] =
		"zcow-ops 1\n"
		"mkdir /d 0755 0 0\n"
		"create 1 /d/a 0644 66 0 0\n"
		"write 1 0 6000 00000000\n"
		"link /d/a /d/b\n"
		"fsync 1 0\n"
		"write 1 0 100 00000000\n"
		"symlink ../a%20target /d/s 0 0\n"
		"setxattr /d/a user.k 0 00ff\n"
		"setxattr /d user.e 0 -\n"
		"removexattr /d/a user.k\n"
		"fsyncdir /d\n"
		"unlink /d/a\n"
		"fsync 1 1\n"
		"sync\n"
		"link /d/b /c\n"
		"rename /d/b /c 0\n"	/* one inode's two names: a no-op */
		"write 1 100 50 00000000\n"
		"fsync 1 0\n"
		"symlink /c /d/t 0 0\n"
		"rename /d/s /d/u 0\n"
		"fsyncdir /d\n"
		"symlink x /d/v 0 0\n"	/* unlink removes the symlink */
		"unlink /d/v\n"
		"fsyncdir /d\n";
	struct zcrash_summary sum;
	char path[64], err[1024];

	ck_assert_msg(run_ops(text, "both", 0, &sum, path, sizeof(path), err,
			      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(sum.tried_treelog[0], 0);
	ck_assert_uint_gt(sum.tried_treelog[1], 0);
	ck_assert_uint_eq(sum.violations, 0);
	unlink(path);
}
END_TEST

/*
 * The attribute calls replay as recorded: a directory 0700 and a file
 * 0444 of another owner (zcow_mkdir_as, zcow_open_as), chmod, chown,
 * utimens (UTIME_NOW and UTIME_OMIT too), truncate by path,
 * RENAME_NOREPLACE, and RENAME_EXCHANGE of a file with a directory,
 * whose names the model swaps (the fsyncs after it promise the swapped
 * contents).  Every call returns what the recording got; the campaign
 * runs clean in both modes.
 */
START_TEST(test_attribute_calls_and_exchange_replay_clean)
{
	static const char text[] =
		"zcow-ops 1\n"
		"mkdir /d 0700 1000 100\n"
		"create 1 /d/obj 0444 193 1000 100\n"
		"write 1 0 7000 00000000\n"
		"close 1\n"
		"chmod /d/obj 0640\n"
		"chown /d/obj 4294967295 0\n"
		"utimens /d/obj 1700000000 5 0 1073741822\n"
		"utimens /d 0 1073741823 0 1073741823\n"
		"create 2 /x 0644 66 0 0\n"
		"write 2 0 3000 00000000\n"
		"truncate /x 2000\n"
		"rename /x /y 1\n"
		"mkdir /e 0755 0 0\n"
		"create 3 /e/in 0644 66 0 0\n"
		"write 3 0 100 00000000\n"
		"rename /y /e 2\n"
		"fsync 2 0\n"
		"fsync 3 0\n"
		"fsyncdir /\n"
		"write 2 0 10 00000000\n"
		"sync\n"
		"chmod / 0711\n";
	struct zcrash_summary sum;
	char path[64], err[1024];

	ck_assert_msg(run_ops(text, "both", 0, &sum, path, sizeof(path), err,
			      sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(sum.tried_treelog[0], 0);
	ck_assert_uint_gt(sum.tried_treelog[1], 0);
	ck_assert_uint_eq(sum.violations, 0);
	unlink(path);
}
END_TEST

/* A repro line of an ops campaign names the ops file and replays one
 * state. */
START_TEST(test_repro_line_of_an_ops_campaign)
{
	struct zcrash_opts o = { .is_quiet = true, .no_results = true,
		.repro = "ops=configs/ops/atomic-replace.ops quick w=0 treelog=on cut=persist=9 loss=prefix seed=1" };
	struct zcrash_summary sum;

	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	ck_assert_uint_eq(sum.tried_treelog[1], 1);
	ck_assert_uint_eq(sum.violations, 0);
	o.repro = "configs/crash-ops-atomic.scenario quick w=0 treelog=off cut=persist=3 loss=drop seed=1";
	ck_assert_int_eq(zcrash_run(NULL, &o, &sum), 0);
	ck_assert_uint_eq(sum.tried, 1);
	ck_assert_uint_eq(sum.tried_treelog[0], 1);
}
END_TEST

/* A repro line names its ops file and is one state: --ops and --sample
 * beside --repro are refused, not dropped. */
START_TEST(test_repro_refuses_ops_and_sample)
{
	static const char line[] = "ops=configs/ops/atomic-replace.ops quick w=0 treelog=on cut=persist=9 loss=prefix seed=1";
	char *out, *err;
	int st;

	st = zcow_test_run(&out, &err, "crash", "--repro", line, "--ops",
			   "configs/ops/posix-mix.ops", NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(err, "zcow crash: --repro: not with --ops (the line names its ops file)\n");
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
	st = zcow_test_run(&out, &err, "crash", "--sample", "3", "--repro",
			   line, NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_str_eq(err, "zcow crash: --repro: not with --sample (a repro line is one state)\n");
	ck_assert_str_eq(out, "");
	free(out);
	free(err);
}
END_TEST

/*
 * Counts are decimal, at least 1 and within 64 bits (--shard's N of 20
 * digits saturated silently, --max -1 and 0 meant no limit); an unknown
 * option is named before the usage; a repro line's w= beyond the
 * campaign's workloads is refused (it ran nothing and exited 0).
 */
START_TEST(test_crash_cli_refuses_bad_counts_and_names_bad_options)
{
	static const struct {
		const char *opt, *val, *want;
	} bad[] = {
		{ "--shard", "1/99999999999999999999", "zcow crash: --shard '1/99999999999999999999': I/N with 1 <= I <= N (the I-th of N shards)\n" },
		{ "--max", "-1", "zcow crash: --max '-1': a number of states >= 1\n" },
		{ "--max", "0", "zcow crash: --max '0': a number of states >= 1\n" },
		{ "--sample", "18446744073709551616", "zcow crash: --sample '18446744073709551616': a number of crash points >= 1\n" },
		{ "--quik", NULL, "zcow crash: '--quik': unknown option\n" },
		{ "--max", NULL, "zcow crash: '--max': needs a value\n" },
	};
	char *out, *err;
	unsigned int i;
	int st;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st = zcow_test_run(&out, &err, "crash",
				   "configs/crash-commit.scenario", bad[i].opt,
				   bad[i].val, NULL);
		ck_assert_int_eq(st, 2);
		ck_assert_msg(!strncmp(err, bad[i].want, strlen(bad[i].want)),
			      "%s %s: %s", bad[i].opt, bad[i].val, err);
		free(out);
		free(err);
	}
	st = zcow_test_run(&out, &err, "crash", "--repro",
			   "configs/crash-reclaim.scenario w=99999 treelog=on cut=end loss=keep seed=1",
			   NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_msg(strstr(err, "zcow crash: w=99999: the campaign has 1 workload\n"),
		      "%s", err);
	free(out);
	free(err);
}
END_TEST

/* workload=ops needs ops_file=, and ops_file= needs workload=ops. */
START_TEST(test_scenario_ops_keys_go_together)
{
	char path[64], err[1024], *out = NULL, *e = NULL;

	put_file(path, sizeof(path), "[zcow]\ndevice=sim:zones=16,zone_size=4M,zone_cap=1M\n[crash]\nworkload=ops\n");
	ck_assert_int_eq(zcow_test_run(&out, &e, "crash", path, "--quick",
				       "--no-results", NULL), 2);
	ck_assert_msg(strstr(e, "workload=ops needs ops_file=FILE"), "%s", e);
	free(out);
	free(e);
	unlink(path);
	put_file(path, sizeof(path), "[zcow]\ndevice=sim:zones=16,zone_size=4M,zone_cap=1M\n[crash]\nworkload=meta\nops_file=/x.ops\n");
	ck_assert_int_eq(zcow_test_run(&out, &e, "crash", path, "--quick",
				       "--no-results", NULL), 2);
	ck_assert_msg(strstr(e, "ops_file needs workload=ops"), "%s", e);
	free(out);
	free(e);
	unlink(path);
	(void)err;
}
END_TEST

Suite *crash_ops_suite(void)
{
	Suite *s = suite_create("crash_ops_suite");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_parse_every_line_kind_with_exact_fields);
	tcase_add_test(tc, test_percent_decoding_exact_and_strict);
	tcase_add_test(tc, test_parse_errors_name_file_line_and_reason);
	tcase_add_test(tc, test_replay_refuses_missing_calls_and_inconsistent_lines);
	tcase_add_test(tc, test_cli_malformed_ops_file_exits_2_naming_line);
	tcase_add_loop_test(tc, test_shipped_ops_campaigns_clean, 0, 5);
	tcase_add_test(tc, test_git_fsync_campaign_catches_dropped_log_item);
	tcase_add_test(tc, test_atomic_replace_catches_log_mutations);
	tcase_add_test(tc, test_atomic_replace_catches_unflushed_commit);
	tcase_add_test(tc, test_handles_followed_through_renames_clean);
	tcase_add_test(tc, test_links_symlinks_xattrs_replay_clean);
	tcase_add_test(tc, test_attribute_calls_and_exchange_replay_clean);
	tcase_add_test(tc, test_repro_line_of_an_ops_campaign);
	tcase_add_test(tc, test_repro_refuses_ops_and_sample);
	tcase_add_test(tc, test_crash_cli_refuses_bad_counts_and_names_bad_options);
	tcase_add_test(tc, test_scenario_ops_keys_go_together);
	suite_add_tcase(s, tc);
	return s;
}
