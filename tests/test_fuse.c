// SPDX-License-Identifier: MIT
/*
 * zcow fuse with real programs on the mount (docs/fuse.md): each test makes
 * a file system on a simulator image, mounts it with `zcow fuse -f` in a
 * child, runs a program under the mount (fio, dbench, stress-ng, git, tar,
 * rocksdb's db_bench), unmounts with `fusermount3 -u`, requires zcow fuse
 * to exit 0 and `zcow check` to find no problem, and where it can mounts
 * again and compares what the program left.
 *
 * Without /dev/fuse, or when the FUSE mount itself cannot be made (no
 * fusermount3, no permission), a test passes after saying LOUDLY that it
 * was skipped; the last test of the suite counts the skips.  A failure of
 * zcow itself (the zcow mount, a program's error, the checker) fails.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "csum.h"
#include "tests.h"

/* The test device: 256 zones of 4 MiB (1 GiB), zoned, in an image. */
#define FZ_GEOMETRY ",zones=256,zone_size=4M"
/* Bound of one program's run (the programs are sized for seconds). */
#define FZ_TIMEOUT "90"

struct fz {
	char dir[64];		/* the test's directory */
	char dev[128];		/* sim:image=DIR/z.img */
	char mnt[96];		/* DIR/mnt */
	char log[96];		/* zcow fuse's stderr */
	pid_t pid;		/* zcow fuse -f, mounted */
};

/* The file counting skipped tests: one per run of the suite (the
 * runner's pid: each test is a child of it under CK_FORK). */
static void skips_path(char *buf, size_t size)
{
	const char *fork = getenv("CK_FORK");
	pid_t runner = fork && !strcmp(fork, "no") ? getpid() : getppid();

	snprintf(buf, size, "/tmp/zcow-fuse-skips-%d", (int)runner);
}

static void say_skipped(const char *test, const char *why)
{
	char path[64];
	FILE *f;

	fprintf(stderr,
		"\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
		"!!! FUSE TEST SKIPPED: %s\n!!! %s\n"
		"!!! zcow fuse was NOT tested with this program in this run.\n"
		"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n",
		test, why);
	skips_path(path, sizeof(path));
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%s: %s\n", test, why);
		fclose(f);
	}
}

/* The whole file at @path (malloc'd), "" if it cannot be read. */
static char *slurp_path(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	ck_assert_ptr_nonnull(m);
	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

/* `sh -c CMD` (printf-formatted), bounded by FZ_TIMEOUT seconds, its
 * stdout and stderr in *@out_ret (may be NULL: printed on failure).
 * Returns its exit status. */
static int sh(char **out_ret, const char *fmt, ...)
{
	char *cmd = NULL, *out = NULL;
	size_t len = 0;
	FILE *p, *m;
	va_list ap;
	int c, st;

	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	ck_assert_int_eq(setenv("ZF_CMD", cmd, 1), 0);
	fflush(NULL);
	p = popen("timeout " FZ_TIMEOUT " sh -c \"$ZF_CMD\" 2>&1 </dev/null",
		  "r");
	ck_assert_ptr_nonnull(p);
	m = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(m);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	fclose(m);
	st = pclose(p);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (st && !out_ret)	/* else the caller judges the output */
		fprintf(stderr, "fuse_suite: `%s` exited %d:\n%s\n", cmd, st,
			out);
	free(cmd);
	if (out_ret)
		*out_ret = out;
	else
		free(out);
	return st;
}

/*
 * A failed assertion ends the test process at once (no atexit, no
 * teardown) and Check kills its process group, zcow fuse included: a
 * guard in its own session waits for the test process to go (the end of
 * a pipe only it holds) and then lazily unmounts what is left.
 */
static void start_guard(const struct fz *z)
{
	int p[2], st;
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* a grandchild, so that nobody has to wait for it */
		if (fork() != 0)
			_exit(0);
		setsid();
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		/* gone: the test unmounted and removed it (a dead mount
		 * answers ENOTCONN, not ENOENT) */
		if (access(z->mnt, F_OK) && errno == ENOENT)
			_exit(0);
		execlp("fusermount3", "fusermount3", "-u", "-z", z->mnt,
		       (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	close(p[0]);
	/* p[1] stays open (close-on-exec) until the test process ends */
}

static bool is_mounted(const struct fz *z)
{
	struct stat a, b;

	return !stat(z->mnt, &a) && !stat(z->dir, &b) && a.st_dev != b.st_dev;
}

/*
 * zcow fuse -f DEV MNT [-o @opts] [--record @record] in a child, until
 * the mount is there.  False (with the reason in @why) when the FUSE
 * mount cannot be made; any other failure fails the test.
 */
static bool fz_mount(struct fz *z, const char *opts, const char *record,
		     char *why, size_t why_size)
{
	const char *argv[12];
	int argc = 0, st, i, fd;
	char *log;

	argv[argc++] = zcow_test_bin();
	argv[argc++] = "fuse";
	argv[argc++] = z->dev;
	argv[argc++] = z->mnt;
	argv[argc++] = "-f";
	if (opts) {
		argv[argc++] = "-o";
		argv[argc++] = opts;
	}
	if (record) {
		argv[argc++] = "--record";
		argv[argc++] = record;
	}
	argv[argc] = NULL;
	fflush(NULL);
	z->pid = fork();
	ck_assert_int_ge(z->pid, 0);
	if (z->pid == 0) {
		fd = open(z->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (i = 0; i < 200; i++) {
		if (is_mounted(z))
			return true;
		if (waitpid(z->pid, &st, WNOHANG) == z->pid)
			break;
		usleep(50 * 1000);
	}
	log = slurp_path(z->log);
	if (i == 200) {
		kill(z->pid, SIGKILL);
		waitpid(z->pid, &st, 0);
		ck_abort_msg("zcow fuse did not mount in 10 s:\n%s", log);
	}
	/* the FUSE mount refused (environment), not zcow */
	if (strstr(log, "cannot mount on")) {
		snprintf(why, why_size, "the FUSE mount cannot be made: %s",
			 log);
		free(log);
		z->pid = 0;
		return false;
	}
	ck_abort_msg("zcow fuse exited %d before mounting:\n%s",
		     WIFEXITED(st) ? WEXITSTATUS(st) : -1, log);
	return false;
}

/* fusermount3 -u, then zcow fuse must exit 0 (the final commit made). */
static void fz_umount(struct fz *z)
{
	int st;
	char *log;

	ck_assert_int_eq(sh(NULL, "fusermount3 -u %s", z->mnt), 0);
	ck_assert_int_eq(waitpid(z->pid, &st, 0), z->pid);
	log = slurp_path(z->log);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "zcow fuse exited %d:\n%s",
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, log);
	free(log);
	z->pid = 0;
}

/* zcow check DEV finds no problem. */
static void fz_check(struct fz *z)
{
	char *out = NULL, *err = NULL;
	int st = zcow_test_run(&out, &err, "check", z->dev, NULL);

	ck_assert_msg(st == 0, "zcow check %s: %d\n%s%s", z->dev, st, out,
		      err);
	free(out);
	free(err);
}

/*
 * A fresh directory and file system, mounted; false (the test then
 * returns, passed and counted as skipped) when FUSE is not usable here.
 */
static bool fz_start(struct fz *z, const char *test, const char *opts,
		     const char *record)
{
	char why[1024];
	char *out = NULL, *err = NULL;
	int st;

	memset(z, 0, sizeof(*z));
	if (access("/dev/fuse", R_OK | W_OK)) {
		say_skipped(test, "/dev/fuse is missing or not usable");
		return false;
	}
	snprintf(z->dir, sizeof(z->dir), "/tmp/zcow-fuse-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(z->dir));
	snprintf(z->dev, sizeof(z->dev), "sim:image=%s/z.img", z->dir);
	snprintf(z->mnt, sizeof(z->mnt), "%s/mnt", z->dir);
	snprintf(z->log, sizeof(z->log), "%s/fuse.log", z->dir);
	ck_assert_int_eq(mkdir(z->mnt, 0755), 0);
	start_guard(z);
	snprintf(why, sizeof(why), "%s" FZ_GEOMETRY, z->dev);
	st = zcow_test_run(&out, &err, "mkfs", why, NULL);
	ck_assert_msg(st == 0, "mkfs: %s%s", out, err);
	free(out);
	free(err);
	if (!fz_mount(z, opts, record, why, sizeof(why))) {
		say_skipped(test, why);
		return false;
	}
	return true;
}

/* Unmount, check, mount again (the same options). */
static void fz_remount(struct fz *z, const char *opts)
{
	char why[1024];

	fz_umount(z);
	fz_check(z);
	ck_assert_msg(fz_mount(z, opts, NULL, why, sizeof(why)), "%s", why);
}

/* Unmount, check, remove the test's directory. */
static void fz_finish(struct fz *z)
{
	fz_umount(z);
	fz_check(z);
	ck_assert_int_eq(sh(NULL, "rm -rf %s", z->dir), 0);
}

START_TEST(test_fuse_fio_random_writes_verify_after_fsync_and_remount)
{
	struct fz z;
	char *out;
	const char *job = "--name=fz --rw=randwrite --bs=4k --size=16M "
			  "--ioengine=psync --verify=crc32c --randseed=7 "
			  "--runtime=30 --verify_state_save=0";

	if (!fz_start(&z, "fio", NULL, NULL))
		return;
	/* fsync every 8 writes, then every write on a second file */
	ck_assert_int_eq(sh(&out, "fio %s --fsync=8 --directory=%s", job,
			    z.mnt), 0);
	ck_assert_msg(strstr(out, "err= 0"), "%s", out);
	free(out);
	ck_assert_int_eq(sh(&out, "fio %s --fsync=1 --size=2M "
				  "--filename=%s/one",
			    job, z.mnt), 0);
	ck_assert_msg(strstr(out, "err= 0"), "%s", out);
	free(out);
	/* after a remount, every block still holds what fio wrote */
	fz_remount(&z, NULL);
	ck_assert_int_eq(sh(&out, "fio %s --verify_only --directory=%s", job,
			    z.mnt), 0);
	ck_assert_msg(strstr(out, "err= 0"), "%s", out);
	free(out);
	fz_finish(&z);
}
END_TEST

START_TEST(test_fuse_dbench_four_clients_three_seconds)
{
	struct fz z;
	char *out;

	if (!fz_start(&z, "dbench", NULL, NULL))
		return;
	ck_assert_int_eq(sh(&out, "dbench -c /usr/share/dbench/client.txt "
				  "-D %s -t 3 4",
			    z.mnt), 0);
	ck_assert_msg(strstr(out, "Throughput") && !strstr(out, "ERROR"),
		      "%s", out);
	free(out);
	fz_finish(&z);
}
END_TEST

START_TEST(test_fuse_stress_ng_namespace_link_and_xattr_stressors)
{
	struct fz z;
	char *out;

	if (!fz_start(&z, "stress-ng", NULL, NULL))
		return;
	/* one link or symlink bogo-op is thousands of names */
	ck_assert_int_eq(sh(&out, "stress-ng --dir 1 --dir-ops 100 "
				  "--dentry 1 --dentry-ops 100 "
				  "--rename 1 --rename-ops 100 "
				  "--link 1 --link-ops 1 "
				  "--symlink 1 --symlink-ops 1 "
				  "--xattr 1 --xattr-ops 2 "
				  "--temp-path %s --timeout 20",
			    z.mnt), 0);
	ck_assert_msg(strstr(out, "successful run completed"), "%s", out);
	free(out);
	fz_finish(&z);
}
END_TEST

START_TEST(test_fuse_git_commit_then_fsck_and_log_after_remount)
{
	struct fz z;
	char base[PATH_MAX], *out;

	if (!fz_start(&z, "git", NULL, NULL))
		return;
	ck_assert_int_eq(sh(NULL, "cp -r base %s/repo && cd %s/repo && "
				  "git init -q && git add . && "
				  "git -c user.name=z -c user.email=z@z "
				  "commit -q -m 'a small tree' && "
				  "git fsck --strict",
			    z.mnt, z.mnt), 0);
	fz_remount(&z, NULL);
	ck_assert_ptr_nonnull(realpath("base", base));
	ck_assert_int_eq(sh(&out, "cd %s/repo && git fsck --strict --full && "
				  "git log --format=%%s && git status --short "
				  "&& diff -r -x .git %s .",
			    z.mnt, base), 0);
	ck_assert_str_eq(out, "a small tree\n");
	free(out);
	fz_finish(&z);
}
END_TEST

START_TEST(test_fuse_tar_extract_matches_the_tree_after_remount)
{
	struct fz z;

	if (!fz_start(&z, "tar", NULL, NULL))
		return;
	/* zcow's own sources, made into a tarball on the fly */
	ck_assert_int_eq(sh(NULL, "tar -cf %s/src.tar core harness && "
				  "mkdir %s/x && tar -C %s/x -xpf %s/src.tar "
				  "&& diff -r core %s/x/core && "
				  "diff -r harness %s/x/harness",
			    z.dir, z.mnt, z.mnt, z.dir, z.mnt, z.mnt), 0);
	fz_remount(&z, NULL);
	/* contents, and what tar compares: modes, times, sizes */
	ck_assert_int_eq(sh(NULL, "diff -r core %s/x/core && "
				  "diff -r harness %s/x/harness && "
				  "cd %s/x && tar -df %s/src.tar",
			    z.mnt, z.mnt, z.mnt, z.dir), 0);
	fz_finish(&z);
}
END_TEST

START_TEST(test_fuse_db_bench_fillrandom_overwrite_then_reads_after_remount)
{
	struct fz z;
	char *out;

	if (!fz_start(&z, "db_bench", NULL, NULL))
		return;
	ck_assert_int_eq(sh(&out, "db_bench --benchmarks=fillrandom,overwrite "
				  "--num=20000 --value_size=100 --db=%s/db",
			    z.mnt), 0);
	ck_assert_msg(strstr(out, "overwrite    :"), "%s", out);
	free(out);
	fz_remount(&z, NULL);
	/* every key the overwrite pass wrote reads back */
	ck_assert_int_eq(sh(&out, "db_bench --benchmarks=readseq "
				  "--use_existing_db=1 --num=20000 "
				  "--value_size=100 --db=%s/db",
			    z.mnt), 0);
	ck_assert_msg(strstr(out, "readseq      :"), "%s", out);
	free(out);
	fz_finish(&z);
}
END_TEST

/*
 * The recording of a short sequence of calls, byte for byte up to its
 * last fsync; the release of the last handle (sent by the kernel after
 * close(2) returns) and the final commit follow.
 */
START_TEST(test_fuse_record_writes_the_calls_in_order)
{
	struct fz z;
	char rec[128], path[160], path2[160], want[1024], *text;
	uint32_t crc = zcow_crc32c("hello", 5);
	mode_t old = umask(022);
	int fd;

	snprintf(rec, sizeof(rec), "/tmp/zcow-fuse-rec-%d", (int)getpid());
	if (!fz_start(&z, "record", NULL, rec)) {
		umask(old);
		return;
	}
	snprintf(path, sizeof(path), "%s/d", z.mnt);
	ck_assert_int_eq(mkdir(path, 0750), 0);
	snprintf(path, sizeof(path), "%s/d/f a", z.mnt);
	fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "hello", 5, 0), 5);
	ck_assert_int_eq(fsync(fd), 0);
	snprintf(path2, sizeof(path2), "%s/d/g%%", z.mnt);
	ck_assert_int_eq(rename(path, path2), 0);
	ck_assert_int_eq(ftruncate(fd, 2), 0);
	ck_assert_int_eq(chmod(path2, 0600), 0);
	ck_assert_int_eq(utimensat(AT_FDCWD, path2,
				   (struct timespec[2]){ { 5, 6 }, { 7, 8 } },
				   0),
			 0);
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(close(fd), 0);
	umask(old);
	fz_umount(&z);
	fz_check(&z);
	text = slurp_path(rec);
	snprintf(want, sizeof(want),
		 "zcow-ops 1\n"
		 "mkdir /d 0750 0 0\n"
		 "create 1 /d/f%%20a 0640 %d 0 0\n"
		 "write 1 0 5 %08x\n"
		 "fsync 1 0\n"
		 "rename /d/f%%20a /d/g%%25 0\n"
		 "truncate /d/g%%25 2\n"
		 "chmod /d/g%%25 0600\n"
		 "utimens /d/g%%25 5 6 7 8\n"
		 "fsync 1 1\n",
		 O_CREAT | O_EXCL | O_RDWR, crc);
	ck_assert_msg(!strncmp(text, want, strlen(want)),
		      "recording:\n%s\nwant first:\n%s", text, want);
	ck_assert_str_eq(text + strlen(want), "close 1\nsync\n");
	free(text);
	unlink(rec);
	ck_assert_int_eq(sh(NULL, "rm -rf %s", z.dir), 0);
}
END_TEST

/* An unlinked file stays usable through its descriptor, its directory
 * can go, and nothing of it is left after the last close. */
START_TEST(test_fuse_unlinked_open_file_lives_until_its_last_close)
{
	struct fz z;
	char path[160], buf[8] = { 0 }, *out;
	int fd;

	if (!fz_start(&z, "unlinked open file", NULL, NULL))
		return;
	snprintf(path, sizeof(path), "%s/d", z.mnt);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/d/f", z.mnt);
	fd = open(path, O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "abc", 3, 0), 3);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
	snprintf(path, sizeof(path), "%s/d", z.mnt);
	ck_assert_int_eq(rmdir(path), 0);
	ck_assert_int_eq(pwrite(fd, "de", 2, 3), 2);
	ck_assert_int_eq(ftruncate(fd, 4), 0);
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 0), 4);
	ck_assert_str_eq(buf, "abcd");
	/* nothing listed at the top while it is open */
	ck_assert_int_eq(sh(&out, "ls -A %s", z.mnt), 0);
	ck_assert_str_eq(out, "");
	free(out);
	ck_assert_int_eq(close(fd), 0);
	fz_umount(&z);
	fz_check(&z);
	/* no name left behind */
	ck_assert_int_eq(zcow_test_run(&out, NULL, "ls", z.dev, "/", NULL),
			 0);
	ck_assert_str_eq(out, "");
	free(out);
	ck_assert_int_eq(sh(NULL, "rm -rf %s", z.dir), 0);
}
END_TEST

/* The bytes `zcow df --raw` reports used in data groups. */
static uint64_t fz_data_used(const struct fz *z)
{
	unsigned long long used = ~0ULL;
	char *out = NULL, *line;

	ck_assert_int_eq(zcow_test_run(&out, NULL, "df", "--raw", z->dev,
				       NULL),
			 0);
	line = strstr(out, "Data, single:");
	ck_assert_msg(line && (line = strstr(line, "used=")) &&
			      sscanf(line, "used=%llu", &used) == 1,
		      "zcow df: %s", out);
	free(out);
	return used;
}

/* A file unlinked while open when zcow fuse is killed: an orphan item in
 * the tree (zcow check counts it and finds no problem), no name left, and
 * the next read-write mount deletes it and frees its data (issue 37: it
 * used to stay under /.zcow-orphans for good). */
START_TEST(test_fuse_file_unlinked_while_open_at_a_kill_is_deleted_at_the_next_mount)
{
	struct fz z;
	char path[160], why[1024], *out = NULL;
	static char buf[1 << 20];
	int fd, st;

	if (!fz_start(&z, "unlinked open file at a kill", NULL, NULL))
		return;
	snprintf(path, sizeof(path), "%s/f", z.mnt);
	fd = open(path, O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), 0), (int)sizeof(buf));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(pwrite(fd, buf, 4096, sizeof(buf)), 4096);
	/* killed with the file open: its last release never comes (the
	 * image is saved as the daemon exits, with the orphan committed) */
	ck_assert_int_eq(kill(z.pid, SIGTERM), 0);
	ck_assert_int_eq(waitpid(z.pid, &st, 0), z.pid);
	z.pid = 0;
	close(fd);	/* the daemon is gone */
	sh(&out, "fusermount3 -u -z %s", z.mnt);	/* if still there */
	free(out);
	st = zcow_test_run(&out, NULL, "check", z.dev, NULL);
	ck_assert_msg(st == 0 && strstr(out, "\n1 orphan inode ") &&
			      strstr(out, "no problems found"),
		      "zcow check: %d\n%s", st, out);
	free(out);
	ck_assert_int_eq(zcow_test_run(&out, NULL, "ls", z.dev, "/", NULL),
			 0);
	ck_assert_str_eq(out, "");
	free(out);
	ck_assert_uint_ge(fz_data_used(&z), sizeof(buf));
	/* the next read-write mount deletes it */
	ck_assert_msg(fz_mount(&z, NULL, NULL, why, sizeof(why)), "%s", why);
	fz_umount(&z);
	st = zcow_test_run(&out, NULL, "check", z.dev, NULL);
	ck_assert_msg(st == 0 && !strstr(out, "orphan"), "zcow check: %d\n%s",
		      st, out);
	free(out);
	ck_assert_uint_eq(fz_data_used(&z), 0);
	ck_assert_int_eq(sh(NULL, "rm -rf %s", z.dir), 0);
}
END_TEST

/* A file replaced by a rename while open stays readable through its
 * descriptor; a rename onto itself keeps it; nothing of the replaced file
 * is left after its last close. */
START_TEST(test_fuse_file_renamed_over_while_open_lives_until_its_last_close)
{
	struct fz z;
	char a[160], b[160], buf[8] = { 0 }, *out;
	int fd, fa;

	if (!fz_start(&z, "renamed over while open", NULL, NULL))
		return;
	snprintf(a, sizeof(a), "%s/a", z.mnt);
	snprintf(b, sizeof(b), "%s/b", z.mnt);
	fa = open(a, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fa, 0);
	ck_assert_int_eq(pwrite(fa, "new", 3, 0), 3);
	ck_assert_int_eq(close(fa), 0);
	fd = open(b, O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "old", 3, 0), 3);
	ck_assert_int_eq(rename(b, b), 0);
	ck_assert_int_eq(sh(&out, "ls -A %s", z.mnt), 0);
	ck_assert_str_eq(out, "a\nb\n");
	free(out);
	ck_assert_int_eq(rename(a, b), 0);
	ck_assert_int_eq(sh(&out, "ls -A %s && cat %s", z.mnt, b), 0);
	ck_assert_str_eq(out, "b\nnew");
	free(out);
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 0), 3);
	ck_assert_str_eq(buf, "old");
	ck_assert_int_eq(close(fd), 0);
	fz_umount(&z);
	fz_check(&z);
	ck_assert_int_eq(zcow_test_run(&out, NULL, "ls", z.dev, "/", NULL),
			 0);
	ck_assert_msg(strstr(out, "b") && !strstr(out, "zcow"), "%s", out);
	free(out);
	ck_assert_int_eq(sh(NULL, "rm -rf %s", z.dir), 0);
}
END_TEST

/* Hard links, symlinks and extended attributes through the mount: exact
 * link counts, targets, values and errnos, and the recording of each. */
START_TEST(test_fuse_links_symlinks_and_xattrs_are_exact_and_recorded)
{
	struct fz z;
	char rec[128], f[160], g[160], l[160], buf[64], want[1024], *text, *p;
	struct stat st;
	mode_t old = umask(022);
	ssize_t n;
	int fd;

	snprintf(rec, sizeof(rec), "/tmp/zcow-fuse-links-%d", (int)getpid());
	if (!fz_start(&z, "links", NULL, rec)) {
		umask(old);
		return;
	}
	snprintf(f, sizeof(f), "%s/f", z.mnt);
	snprintf(g, sizeof(g), "%s/g", z.mnt);
	snprintf(l, sizeof(l), "%s/l", z.mnt);
	fd = open(f, O_CREAT | O_EXCL | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_int_eq(link(f, g), 0);
	ck_assert_int_eq(stat(f, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 2);
	ck_assert_int_eq(link(f, g), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(symlink("f", l), 0);
	n = readlink(l, buf, sizeof(buf));
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(buf[0], 'f');
	ck_assert_int_eq(lstat(l, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(setxattr(f, "user.k", "v1", 2, XATTR_CREATE), 0);
	ck_assert_int_eq(setxattr(f, "user.k", "v2", 2, XATTR_CREATE), -1);
	ck_assert_int_eq(errno, EEXIST);
	n = getxattr(g, "user.k", buf, sizeof(buf));
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(memcmp(buf, "v1", 2), 0);
	ck_assert_int_eq(getxattr(f, "user.k", buf, 1), -1);
	ck_assert_int_eq(errno, ERANGE);
	n = listxattr(f, buf, sizeof(buf));
	ck_assert_int_eq(n, 7);
	ck_assert_str_eq(buf, "user.k");
	ck_assert_int_eq(removexattr(f, "user.k"), 0);
	ck_assert_int_eq(getxattr(f, "user.k", buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, ENODATA);
	ck_assert_int_eq(unlink(g), 0);
	ck_assert_int_eq(stat(f, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 1);
	umask(old);
	fz_umount(&z);
	fz_check(&z);
	text = slurp_path(rec);
	/* the release may come when the kernel sends it: take it out */
	p = strstr(text, "close 1\n");
	ck_assert_msg(p, "%s", text);
	memmove(p, p + 8, strlen(p + 8) + 1);
	snprintf(want, sizeof(want),
		 "zcow-ops 1\n"
		 "create 1 /f 0644 %d 0 0\n"
		 "link /f /g\n"
		 "symlink f /l 0 0\n"
		 "setxattr /f user.k 1 7631\n"
		 "removexattr /f user.k\n"
		 "unlink /g\n"
		 "sync\n",
		 O_CREAT | O_EXCL | O_WRONLY);
	ck_assert_str_eq(text, want);
	free(text);
	unlink(rec);
	ck_assert_int_eq(sh(NULL, "rm -rf %s", z.dir), 0);
}
END_TEST

START_TEST(test_fuse_statfs_and_refused_fallocate)
{
	struct fz z;
	char *out;

	if (!fz_start(&z, "statfs", NULL, NULL))
		return;
	/* 4 KiB blocks, 255-byte names, free space below the total */
	ck_assert_int_eq(sh(&out, "stat -f -c '%%S %%l %%b' %s", z.mnt), 0);
	ck_assert_msg(!strncmp(out, "4096 255 ", 9), "%s", out);
	free(out);
	/* no preallocation on a zoned file system: EOPNOTSUPP */
	ck_assert_int_ne(sh(&out, "fallocate -l 4096 %s/f", z.mnt), 0);
	ck_assert_msg(strstr(out, "Operation not supported"), "%s", out);
	free(out);
	fz_finish(&z);
}
END_TEST

START_TEST(test_fuse_mount_errors_are_clear_and_nonzero)
{
	char *out = NULL, *err = NULL;
	int st;

	/* no such device: zcow's error, before any FUSE mount */
	st = zcow_test_run(&out, &err, "fuse", "file:/nonexistent/z.img,"
			   "zone_size=4M", "/tmp", "-f", NULL);
	ck_assert_int_eq(st, 1);
	ck_assert_msg(strstr(err, "cannot open device"), "%s", err);
	free(out);
	free(err);
	/* a regular file, or nothing, as the mount point: refused before
	 * anything is opened (a regular file was mounted over) */
	{
		char reg[] = "/tmp/zcow-fuse-reg-XXXXXX";
		int fd = mkstemp(reg);

		ck_assert_int_ge(fd, 0);
		close(fd);
		st = zcow_test_run(&out, &err, "fuse",
				   "sim:zones=64,zone_size=4M", reg, NULL);
		ck_assert_int_eq(st, 2);
		ck_assert_msg(strstr(err, ": not a directory"), "%s", err);
		free(out);
		free(err);
		unlink(reg);
		st = zcow_test_run(&out, &err, "fuse",
				   "sim:zones=64,zone_size=4M", reg, NULL);
		ck_assert_int_eq(st, 2);
		ck_assert_msg(strstr(err, "No such file or directory"), "%s",
			      err);
		free(out);
		free(err);
	}
	/* a zcow mount option it does not know */
	st = zcow_test_run(&out, &err, "fuse", "sim:zones=64,zone_size=4M",
			   "/tmp", "-o", "allow_other,bogus=1", NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_msg(strstr(err, "unknown mount option 'bogus=1'"), "%s",
		      err);
	free(out);
	free(err);
	/* a mount flag zcow would not honour (sync): refused, not passed */
	st = zcow_test_run(&out, &err, "fuse", "sim:zones=64,zone_size=4M",
			   "/tmp", "-o", "noatime,sync", NULL);
	ck_assert_int_eq(st, 2);
	ck_assert_msg(strstr(err, "unknown mount option 'sync'"), "%s", err);
	free(out);
	free(err);
	/* options longer than zcow fuse keeps: refused, not cut short */
	{
		char *opts = malloc(5001);

		ck_assert_ptr_nonnull(opts);
		memset(opts, 'a', 5000);
		memcpy(opts, "fsname=", 7);
		opts[5000] = '\0';
		st = zcow_test_run(&out, &err, "fuse",
				   "sim:zones=64,zone_size=4M", "/tmp", "-o",
				   "ro", "-o", opts, NULL);
		ck_assert_int_eq(st, 2);
		ck_assert_msg(strstr(err, "zcow fuse: the -o options are longer than 4095 bytes"),
			      "%s", err);
		free(opts);
		free(out);
		free(err);
	}
	/* no device and mount point */
	ck_assert_int_eq(zcow_test_run(NULL, NULL, "fuse", "x", NULL), 2);
}
END_TEST

/* The last test: how many of this run's tests were skipped. */
START_TEST(test_fuse_suite_counts_its_skips)
{
	char path[64];
	char *text;
	int n = 0;
	const char *p;

	skips_path(path, sizeof(path));
	text = slurp_path(path);
	for (p = text; *p; p++)
		n += *p == '\n';
	if (n)
		fprintf(stderr,
			"\n!!! fuse_suite: %d test(s) SKIPPED, zcow fuse "
			"NOT tested with them:\n%s\n",
			n, text);
	free(text);
	unlink(path);
}
END_TEST

Suite *fuse_suite(void)
{
	Suite *s = suite_create("fuse_suite");
	TCase *tc = tcase_create("programs");

	/* each program runs a few seconds; under sanitizers more */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fuse_mount_errors_are_clear_and_nonzero);
	tcase_add_test(tc, test_fuse_record_writes_the_calls_in_order);
	tcase_add_test(tc, test_fuse_statfs_and_refused_fallocate);
	tcase_add_test(tc,
		       test_fuse_links_symlinks_and_xattrs_are_exact_and_recorded);
	tcase_add_test(tc,
		       test_fuse_unlinked_open_file_lives_until_its_last_close);
	tcase_add_test(tc,
		       test_fuse_file_unlinked_while_open_at_a_kill_is_deleted_at_the_next_mount);
	tcase_add_test(tc,
		       test_fuse_file_renamed_over_while_open_lives_until_its_last_close);
	tcase_add_test(tc,
		       test_fuse_fio_random_writes_verify_after_fsync_and_remount);
	tcase_add_test(tc, test_fuse_dbench_four_clients_three_seconds);
	tcase_add_test(tc,
		       test_fuse_stress_ng_namespace_link_and_xattr_stressors);
	tcase_add_test(tc, test_fuse_git_commit_then_fsck_and_log_after_remount);
	tcase_add_test(tc, test_fuse_tar_extract_matches_the_tree_after_remount);
	tcase_add_test(tc,
		       test_fuse_db_bench_fillrandom_overwrite_then_reads_after_remount);
	tcase_add_test(tc, test_fuse_suite_counts_its_skips);
	suite_add_tcase(s, tc);
	return s;
}
