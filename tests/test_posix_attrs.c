// SPDX-License-Identifier: MIT
/*
 * The POSIX attributes of the file layer (core/inode.c, core/file.c):
 * the four inode times under a test clock (creation, write, truncate,
 * entry changes, relatime), owner and mode (open_as, mkdir_as, chmod,
 * chown, utimens), O_APPEND, rename2 (NOREPLACE, EXCHANGE), readdir_at,
 * sparse files; times and attributes through unmount/mount and through
 * an fsync and a power cut; the checker's time rule.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "tests.h"
#include "zcow.h"
#include "zdev.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)
#define NSEC_HALF 500000000u
#define DAY (24 * 60 * 60)

/* The test clock: what the fs reads as now. */
struct tclock {
	struct zcow_timespec now;
	uint64_t nr_reads;
};

static void tclock_read(struct zcow_timespec *now, void *arg)
{
	struct tclock *c = arg;

	*now = c->now;
	c->nr_reads++;
}

static void tclock_set(struct tclock *c, int64_t sec, uint32_t nsec)
{
	c->now.sec = sec;
	c->now.nsec = nsec;
}

static struct zdev *new_dev(void)
{
	struct zsim_config cfg = { .nr_zones = 32, .zone_size = ZS,
				   .seed = 19 };

	return zcow_test_sim(&cfg);
}

static struct zcow_fs *mount_clock(struct zdev *dev, struct tclock *c)
{
	/* one data group: an fsync's data lies in a committed chunk */
	struct zcow_mount_opts mo = { .clock = tclock_read, .clock_arg = c,
				      .data_zones = 1 };
	struct zcow_fs *fs = NULL;

	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	return fs;
}

static struct zcow_fs *fresh(struct zdev *dev, struct tclock *c)
{
	struct zcow_mkfs_opts mo = { .seed = 5 };

	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	return mount_clock(dev, c);
}

static void done(struct zcow_fs *fs, struct zdev *dev)
{
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}

static void assert_ts(struct zcow_timespec ts, int64_t sec,
		      uint32_t nsec, const char *what)
{
	ck_assert_msg(ts.sec == sec && ts.nsec == nsec,
		      "%s: %lld.%09u, want %lld.%09u", what,
		      (long long)ts.sec, ts.nsec, (long long)sec, nsec);
}

static struct zcow_stat stat_of(struct zcow_fs *fs, const char *path)
{
	struct zcow_stat st;

	ck_assert_msg(zcow_stat(fs, path, &st) == 0, "stat %s", path);
	return st;
}

static void write_path(struct zcow_fs *fs, const char *path, const void *buf,
		       uint64_t len, uint64_t off)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_CREAT | O_RDWR, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, off), (int64_t)len);
	zcow_close(f);
}

static int64_t read_path(struct zcow_fs *fs, const char *path, void *buf,
			 uint64_t len, uint64_t off)
{
	struct zcow_file *f;
	int64_t n;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	n = zcow_pread(f, buf, len, off);
	zcow_close(f);
	return n;
}

static void expect_bytes(struct zcow_fs *fs, const char *path,
			 const char *want)
{
	size_t len = strlen(want);
	char got[256];

	ck_assert_uint_lt(len, sizeof(got));
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(read_path(fs, path, got, sizeof(got), 0),
			 (int64_t)len);
	ck_assert_str_eq(got, want);
}

/* Create at 100.5, write at 200: mtime/ctime 200, atime/otime 100.5;
 * the parent's mtime and ctime follow its entries; a truncate changes
 * mtime and ctime even to the same size. */
START_TEST(test_times_follow_the_clock_on_create_write_and_truncate)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	struct zcow_file *f;
	struct zcow_stat st;

	tclock_set(&c, 50, 0);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	tclock_set(&c, 100, NSEC_HALF);
	ck_assert_int_eq(zcow_create(fs, "/d/f", &f), 0);
	st = stat_of(fs, "/d/f");
	ck_assert_uint_eq(st.mode, S_IFREG | 0644);
	assert_ts(st.atime, 100, NSEC_HALF, "atime at create");
	assert_ts(st.mtime, 100, NSEC_HALF, "mtime at create");
	assert_ts(st.ctime, 100, NSEC_HALF, "ctime at create");
	assert_ts(st.otime, 100, NSEC_HALF, "otime at create");
	st = stat_of(fs, "/d");
	assert_ts(st.mtime, 100, NSEC_HALF, "parent mtime after create");
	assert_ts(st.ctime, 100, NSEC_HALF, "parent ctime after create");
	assert_ts(st.otime, 50, 0, "parent otime");
	tclock_set(&c, 200, 0);
	ck_assert_int_eq(zcow_pwrite(f, "abc", 3, 0), 3);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	assert_ts(st.mtime, 200, 0, "mtime after write");
	assert_ts(st.ctime, 200, 0, "ctime after write");
	assert_ts(st.atime, 100, NSEC_HALF, "atime after write");
	assert_ts(st.otime, 100, NSEC_HALF, "otime after write");
	assert_ts(stat_of(fs, "/d").mtime, 100, NSEC_HALF,
		  "parent mtime after a write");
	/* a same-size overwrite in the same transaction, later */
	tclock_set(&c, 201, 7);
	ck_assert_int_eq(zcow_pwrite(f, "xyz", 3, 0), 3);
	st = stat_of(fs, "/d/f");
	assert_ts(st.mtime, 201, 7, "mtime after an overwrite");
	tclock_set(&c, 300, 1);
	ck_assert_int_eq(zcow_truncate(f, 3), 0);
	st = stat_of(fs, "/d/f");
	ck_assert_uint_eq(st.size, 3);
	assert_ts(st.mtime, 300, 1, "mtime after truncate");
	assert_ts(st.ctime, 300, 1, "ctime after truncate");
	tclock_set(&c, 400, 0);
	ck_assert_int_eq(zcow_truncate_path(fs, "/d/f", 10), 0);
	st = stat_of(fs, "/d/f");
	ck_assert_uint_eq(st.size, 10);
	assert_ts(st.mtime, 400, 0, "mtime after truncate_path");
	zcow_close(f);
	ck_assert_int_eq(zcow_truncate_path(fs, "/d", 0), -EISDIR);
	ck_assert_int_eq(zcow_truncate_path(fs, "/nope", 0), -ENOENT);
	/* removing an entry: the parent's mtime and ctime */
	tclock_set(&c, 500, 0);
	ck_assert_int_eq(zcow_unlink(fs, "/d/f"), 0);
	st = stat_of(fs, "/d");
	assert_ts(st.mtime, 500, 0, "parent mtime after unlink");
	assert_ts(st.ctime, 500, 0, "parent ctime after unlink");
	done(fs, dev);
}
END_TEST

/* Relatime: a read updates atime when it is not after mtime or ctime, or
 * is a day old; never in the same tick, never through a read-only mount. */
START_TEST(test_read_updates_atime_as_relatime)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	struct zcow_mount_opts ro = { .read_only = true, .clock = tclock_read,
				      .clock_arg = &c };
	char buf[8];

	tclock_set(&c, 100, 0);
	fs = fresh(dev, &c);
	write_path(fs, "/f", "hello", 5, 0);
	tclock_set(&c, 150, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 150, 0, "first read");
	tclock_set(&c, 160, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 150, 0,
		  "atime after mtime: kept");
	/* a read past the end is an access too; a zero-length one is not */
	tclock_set(&c, 150 + DAY, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 0, 0), 0);
	assert_ts(stat_of(fs, "/f").atime, 150, 0, "zero-length read");
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 100), 0);
	assert_ts(stat_of(fs, "/f").atime, 150 + DAY, 0, "a day later");
	/* written again: the next read updates */
	tclock_set(&c, 200 + DAY, 0);
	write_path(fs, "/f", "J", 1, 0);
	tclock_set(&c, 201 + DAY, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 201 + DAY, 0, "after a write");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	/* read-only: never written */
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_utimens(fs, "/f", NULL), -EROFS);
	tclock_set(&c, 900 + 2 * DAY, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 201 + DAY, 0, "read-only mount");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* mkfs gives the root directory the four times it is told (zero: the
 * epoch); zcow mkfs without --seed tells it now. */
START_TEST(test_mkfs_sets_the_root_directory_times)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_mkfs_opts mo = { .seed = 5, .time = { 1700000000, 42 } };
	struct zcow_fs *fs;
	struct zcow_stat st;
	char spec[160], img[64] = "/tmp/zcow-mkfs-time-XXXXXX";
	time_t t0 = time(NULL);
	int fd;

	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	fs = mount_clock(dev, &c);
	st = stat_of(fs, "/");
	assert_ts(st.atime, 1700000000, 42, "root atime");
	assert_ts(st.ctime, 1700000000, 42, "root ctime");
	assert_ts(st.mtime, 1700000000, 42, "root mtime");
	assert_ts(st.otime, 1700000000, 42, "root otime");
	done(fs, dev);
	/* the tool, without --seed: now */
	fd = mkstemp(img);	/* a name of our own; the tool makes it */
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(img);
	snprintf(spec, sizeof(spec), "sim:image=%s,zones=32,zone_size=4M",
		 img);
	ck_assert_int_eq(zcow_test_run(NULL, NULL, "mkfs", spec, NULL), 0);
	snprintf(spec, sizeof(spec), "sim:image=%s", img);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	st = stat_of(fs, "/");
	ck_assert_int_ge(st.otime.sec, (int64_t)t0);
	ck_assert_int_le(st.otime.sec, (int64_t)time(NULL));
	ck_assert_int_eq(st.mtime.sec, st.otime.sec);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	unlink(img);
}
END_TEST

/* noatime: a read never changes atime; strictatime: every read that is
 * not at the same instant does; the options parse and a value is
 * refused. */
START_TEST(test_noatime_and_strictatime_modes)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	struct zcow_mount_opts o = { .clock = tclock_read, .clock_arg = &c };
	char buf[8];

	tclock_set(&c, 100, 0);
	fs = fresh(dev, &c);
	write_path(fs, "/f", "hello", 5, 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount_opts_parse("noatime", &o), 0);
	ck_assert_int_eq(o.atime, ZCOW_ATIME_NOATIME);
	ck_assert_int_eq(zcow_mount(dev, &o, &fs), 0);
	tclock_set(&c, 150, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 100, 0, "noatime");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount_opts_parse("strictatime", &o), 0);
	ck_assert_int_eq(o.atime, ZCOW_ATIME_STRICTATIME);
	ck_assert_int_eq(zcow_mount(dev, &o, &fs), 0);
	tclock_set(&c, 160, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 160, 0, "strictatime, first read");
	tclock_set(&c, 170, 0);
	ck_assert_int_eq(read_path(fs, "/f", buf, 8, 0), 5);
	assert_ts(stat_of(fs, "/f").atime, 170, 0,
		  "strictatime: atime after mtime is updated too");
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount_opts_parse("relatime", &o), 0);
	ck_assert_int_eq(o.atime, ZCOW_ATIME_RELATIME);
	ck_assert_int_eq(zcow_mount_opts_parse("noatime=1", &o), -EINVAL);
	ck_assert_int_eq(zcow_mount_opts_parse("lazytime", &o), -EINVAL);
	zdev_close(dev);
}
END_TEST

/* chmod keeps the type bits; chown (uint32_t)-1 leaves an id and clears
 * set-user-ID (and set-group-ID with group execute) of a file; each sets
 * ctime only. */
START_TEST(test_chmod_and_chown_change_only_what_they_name)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_cred cred = { 1000, 100 };
	struct zcow_file *f;
	struct zcow_fs *fs;
	struct zcow_stat st;

	tclock_set(&c, 10, 0);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_open_as(fs, "/f", O_CREAT | O_EXCL | O_WRONLY,
				      0600, &cred, &f), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_mkdir_as(fs, "/d", S_IFDIR | 0750, &cred), 0);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.mode, S_IFREG | 0600);
	ck_assert_uint_eq(st.uid, 1000);
	ck_assert_uint_eq(st.gid, 100);
	ck_assert_uint_eq(st.rdev, 0);
	ck_assert_uint_eq(st.nlink, 1);
	st = stat_of(fs, "/d");
	ck_assert_uint_eq(st.mode, S_IFDIR | 0750);
	ck_assert_uint_eq(st.uid, 1000);
	tclock_set(&c, 20, 3);
	ck_assert_int_eq(zcow_chmod(fs, "/f", S_IFDIR | 06755), 0);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.mode, S_IFREG | 06755);
	assert_ts(st.ctime, 20, 3, "ctime after chmod");
	assert_ts(st.mtime, 10, 0, "mtime after chmod");
	tclock_set(&c, 30, 0);
	ck_assert_int_eq(zcow_chown(fs, "/f", UINT32_MAX, 7), 0);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.uid, 1000);
	ck_assert_uint_eq(st.gid, 7);
	ck_assert_uint_eq(st.mode, S_IFREG | 0755);	/* suid, sgid gone */
	assert_ts(st.ctime, 30, 0, "ctime after chown");
	assert_ts(st.mtime, 10, 0, "mtime after chown");
	ck_assert_int_eq(zcow_chmod(fs, "/f", 02745), 0);
	ck_assert_int_eq(zcow_chown(fs, "/f", 5, UINT32_MAX), 0);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.uid, 5);
	ck_assert_uint_eq(st.gid, 7);
	ck_assert_uint_eq(st.mode, S_IFREG | 02745);	/* no g+x: sgid kept */
	ck_assert_int_eq(zcow_chmod(fs, "/d", 03777), 0);
	ck_assert_int_eq(zcow_chown(fs, "/d", UINT32_MAX, UINT32_MAX), 0);
	st = stat_of(fs, "/d");
	ck_assert_uint_eq(st.mode, S_IFDIR | 03777);	/* a directory keeps */
	ck_assert_uint_eq(st.uid, 1000);
	ck_assert_uint_eq(st.gid, 100);
	ck_assert_int_eq(zcow_chmod(fs, "/nope", 0644), -ENOENT);
	ck_assert_int_eq(zcow_chown(fs, "/nope/x", 1, 1), -ENOENT);
	/* refused flags and modes */
	ck_assert_int_eq(zcow_open_as(fs, "/g", O_CREAT | O_RDWR | O_SYNC,
				      0644, NULL, &f), -EINVAL);
	ck_assert_int_eq(zcow_open_as(fs, "/g", O_CREAT | O_RDWR,
				      S_IFDIR | 0644, NULL, &f), -EINVAL);
	ck_assert_int_eq(zcow_mkdir_as(fs, "/g", S_IFREG | 0755, NULL),
			 -EINVAL);
	ck_assert_int_eq(zcow_stat(fs, "/g", &st), -ENOENT);
	done(fs, dev);
}
END_TEST

START_TEST(test_utimens_sets_omits_and_takes_now)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_timespec ts[2];
	struct zcow_fs *fs;
	struct zcow_stat st;

	tclock_set(&c, 10, 0);
	fs = fresh(dev, &c);
	write_path(fs, "/f", "x", 1, 0);
	tclock_set(&c, 20, 0);
	ts[0] = (struct zcow_timespec){ 1234, 5 };
	ts[1] = (struct zcow_timespec){ -7, 999999999 };
	ck_assert_int_eq(zcow_utimens(fs, "/f", ts), 0);
	st = stat_of(fs, "/f");
	assert_ts(st.atime, 1234, 5, "atime set");
	assert_ts(st.mtime, -7, 999999999, "mtime set (before 1970)");
	assert_ts(st.ctime, 20, 0, "ctime is now");
	assert_ts(st.otime, 10, 0, "otime kept");
	tclock_set(&c, 30, 0);
	ts[0].nsec = ZCOW_UTIME_OMIT;
	ts[1].nsec = ZCOW_UTIME_NOW;
	ck_assert_int_eq(zcow_utimens(fs, "/f", ts), 0);
	st = stat_of(fs, "/f");
	assert_ts(st.atime, 1234, 5, "atime omitted");
	assert_ts(st.mtime, 30, 0, "mtime now");
	assert_ts(st.ctime, 30, 0, "ctime");
	/* both omitted: nothing, ctime included */
	tclock_set(&c, 40, 0);
	ts[0].nsec = ts[1].nsec = ZCOW_UTIME_OMIT;
	ck_assert_int_eq(zcow_utimens(fs, "/f", ts), 0);
	assert_ts(stat_of(fs, "/f").ctime, 30, 0, "both omitted");
	ck_assert_int_eq(zcow_utimens(fs, "/f", NULL), 0);
	st = stat_of(fs, "/f");
	assert_ts(st.atime, 40, 0, "NULL: atime now");
	assert_ts(st.mtime, 40, 0, "NULL: mtime now");
	ts[0] = (struct zcow_timespec){ 1, 1000000000u };
	ts[1].nsec = ZCOW_UTIME_OMIT;
	ck_assert_int_eq(zcow_utimens(fs, "/f", ts), -EINVAL);
	ck_assert_int_eq(zcow_utimens(fs, "/", NULL), 0);
	assert_ts(stat_of(fs, "/").mtime, 40, 0, "root dir");
	done(fs, dev);
}
END_TEST

/* O_APPEND: every write lands at the end, the offset ignored. */
START_TEST(test_append_writes_land_at_the_end)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_file *f;
	struct zcow_fs *fs;

	tclock_set(&c, 1, 0);
	fs = fresh(dev, &c);
	write_path(fs, "/f", "0123456789", 10, 0);
	ck_assert_int_eq(zcow_open_as(fs, "/f", O_WRONLY | O_APPEND, 0, NULL,
				      &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "ab", 2, 0), 2);
	ck_assert_int_eq(zcow_pwrite(f, "cd", 2, 3), 2);
	ck_assert_int_eq(zcow_pwrite(f, "", 0, 3), 0);
	zcow_close(f);
	expect_bytes(fs, "/f", "0123456789abcd");
	ck_assert_int_eq(zcow_open_as(fs, "/f", O_RDWR | O_APPEND | O_TRUNC,
				      0, NULL, &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "Z", 1, 100), 1);
	zcow_close(f);
	expect_bytes(fs, "/f", "Z");
	done(fs, dev);
}
END_TEST

struct appender {
	struct zcow_fs *fs;
	char byte;
};

static void *append_many(void *arg)
{
	struct appender *a = arg;
	struct zcow_file *f;
	char rec[5000];
	int i;

	memset(rec, a->byte, sizeof(rec));
	ck_assert_int_eq(zcow_open_as(a->fs, "/log", O_WRONLY | O_APPEND, 0,
				      NULL, &f), 0);
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(zcow_pwrite(f, rec, sizeof(rec), 0),
				 (int64_t)sizeof(rec));
	zcow_close(f);
	return NULL;
}

/* Appends from 4 threads at once: none overlaps another. */
START_TEST(test_concurrent_appends_never_overlap)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct appender a[4];
	pthread_t th[4];
	struct zcow_file *f;
	struct zcow_fs *fs;
	uint64_t n[4] = { 0 }, off;
	char *buf;
	int i;

	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_create(fs, "/log", &f), 0);
	zcow_close(f);
	for (i = 0; i < 4; i++) {
		a[i].fs = fs;
		a[i].byte = (char)('A' + i);
		ck_assert_int_eq(pthread_create(&th[i], NULL, append_many,
						&a[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(stat_of(fs, "/log").size, 4 * 20 * 5000);
	buf = malloc(4 * 20 * 5000);
	ck_assert_int_eq(read_path(fs, "/log", buf, 4 * 20 * 5000, 0),
			 4 * 20 * 5000);
	/* every record whole: 5000 bytes of one writer's byte */
	for (off = 0; off < 4 * 20 * 5000; off += 5000) {
		int w = buf[off] - 'A';

		ck_assert_int_ge(w, 0);
		ck_assert_int_lt(w, 4);
		for (i = 1; i < 5000; i++)
			ck_assert_int_eq(buf[off + i], buf[off]);
		n[w]++;
	}
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(n[i], 20);
	free(buf);
	done(fs, dev);
}
END_TEST

/* rename2's errnos, in renameat2's order. */
START_TEST(test_rename2_errnos)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;

	fs = fresh(dev, &c);
	write_path(fs, "/a", "A", 1, 0);
	write_path(fs, "/b", "B", 1, 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d/e"), 0);
	ck_assert_int_eq(zcow_rename2(fs, "/a", "/b", ZCOW_RENAME_NOREPLACE),
			 -EEXIST);
	ck_assert_int_eq(zcow_rename2(fs, "/a", "/c", ZCOW_RENAME_EXCHANGE),
			 -ENOENT);
	ck_assert_int_eq(zcow_rename2(fs, "/c", "/a", ZCOW_RENAME_EXCHANGE),
			 -ENOENT);
	ck_assert_int_eq(zcow_rename2(fs, "/a", "/b",
				      ZCOW_RENAME_NOREPLACE |
					      ZCOW_RENAME_EXCHANGE),
			 -EINVAL);
	ck_assert_int_eq(zcow_rename2(fs, "/a", "/b", 4), -EINVAL);
	/* a directory into its own subtree, either way of an exchange */
	ck_assert_int_eq(zcow_rename2(fs, "/d", "/d/e/x", 0), -EINVAL);
	ck_assert_int_eq(zcow_rename2(fs, "/d", "/d/e",
				      ZCOW_RENAME_EXCHANGE), -EINVAL);
	ck_assert_int_eq(zcow_rename2(fs, "/d/e", "/d",
				      ZCOW_RENAME_EXCHANGE), -EINVAL);
	ck_assert_int_eq(zcow_rename2(fs, "/", "/a", ZCOW_RENAME_EXCHANGE),
			 -EBUSY);
	/* nothing changed */
	expect_bytes(fs, "/a", "A");
	expect_bytes(fs, "/b", "B");
	ck_assert_uint_eq(stat_of(fs, "/d/e").mode, S_IFDIR | 0755);
	/* NOREPLACE to a free name: a rename */
	ck_assert_int_eq(zcow_rename2(fs, "/a", "/c", ZCOW_RENAME_NOREPLACE),
			 0);
	expect_bytes(fs, "/c", "A");
	ck_assert_int_eq(zcow_stat(fs, "/a", &(struct zcow_stat){ 0 }),
			 -ENOENT);
	done(fs, dev);
}
END_TEST

/* EXCHANGE swaps two files, and a file with a directory across
 * directories: contents, types, parents' sizes, the checker's refs, and
 * the times (the moved inodes' ctime, both parents' mtime and ctime). */
START_TEST(test_rename_exchange_swaps_files_and_dirs_across_dirs)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_dirent *ents;
	struct zcow_fs *fs;
	struct zcow_stat st, p, q, pd, qd;
	uint64_t nr, ino_f, ino_d;

	tclock_set(&c, 10, 0);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_mkdir(fs, "/p"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/q"), 0);
	write_path(fs, "/p/one", "first", 5, 0);
	write_path(fs, "/q/two", "second", 6, 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/q/dir"), 0);
	write_path(fs, "/q/dir/inner", "in", 2, 0);
	p = stat_of(fs, "/p");
	q = stat_of(fs, "/q");
	tclock_set(&c, 20, 0);
	ck_assert_int_eq(zcow_rename2(fs, "/p/one", "/q/two",
				      ZCOW_RENAME_EXCHANGE), 0);
	expect_bytes(fs, "/p/one", "second");
	expect_bytes(fs, "/q/two", "first");
	ck_assert_uint_eq(stat_of(fs, "/p").size, p.size);
	ck_assert_uint_eq(stat_of(fs, "/q").size, q.size);
	assert_ts(stat_of(fs, "/p/one").ctime, 20, 0, "exchanged ctime");
	assert_ts(stat_of(fs, "/p/one").mtime, 10, 0, "exchanged mtime");
	assert_ts(stat_of(fs, "/q").mtime, 20, 0, "parent mtime");
	zcow_test_assert_clean(fs);
	/* a file with a directory, across directories */
	ino_f = stat_of(fs, "/p/one").ino;
	ino_d = stat_of(fs, "/q/dir").ino;
	tclock_set(&c, 30, 0);
	ck_assert_int_eq(zcow_rename2(fs, "/p/one", "/q/dir",
				      ZCOW_RENAME_EXCHANGE), 0);
	st = stat_of(fs, "/p/one");
	ck_assert_uint_eq(st.ino, ino_d);
	ck_assert_uint_eq(st.mode, S_IFDIR | 0755);
	assert_ts(st.ctime, 30, 0, "exchanged dir ctime");
	st = stat_of(fs, "/q/dir");
	ck_assert_uint_eq(st.ino, ino_f);
	ck_assert_uint_eq(st.mode, S_IFREG | 0644);
	expect_bytes(fs, "/q/dir", "second");
	expect_bytes(fs, "/p/one/inner", "in");
	ck_assert_int_eq(zcow_readdir(fs, "/p", &ents, &nr), 0);
	ck_assert_uint_eq(nr, 1);
	ck_assert_str_eq(ents[0].name, "one");
	ck_assert_uint_eq(ents[0].type, ZCOW_FT_DIR);
	ck_assert_uint_eq(ents[0].ino, ino_d);
	free(ents);
	pd = stat_of(fs, "/p");
	qd = stat_of(fs, "/q");
	ck_assert_uint_eq(pd.size, p.size);
	ck_assert_uint_eq(qd.size, q.size);
	assert_ts(pd.mtime, 30, 0, "old parent mtime");
	assert_ts(qd.ctime, 30, 0, "new parent ctime");
	/* the moved directory's parent is /p now: an rmdir of /p fails, of
	 * its inside works */
	ck_assert_int_eq(zcow_rmdir(fs, "/p"), -ENOTEMPTY);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = mount_clock(dev, &c);
	expect_bytes(fs, "/q/dir", "second");
	expect_bytes(fs, "/p/one/inner", "in");
	ck_assert_int_eq(zcow_unlink(fs, "/p/one/inner"), 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/p/one"), 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/p"), 0);
	done(fs, dev);
}
END_TEST

/* A rename sets the moved inode's ctime and both parents' times. */
START_TEST(test_rename_sets_ctime_and_both_parents_times)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	struct zcow_stat st;

	tclock_set(&c, 10, 0);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_mkdir(fs, "/p"), 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/q"), 0);
	write_path(fs, "/p/f", "f", 1, 0);
	tclock_set(&c, 20, 9);
	ck_assert_int_eq(zcow_rename(fs, "/p/f", "/q/g"), 0);
	st = stat_of(fs, "/q/g");
	assert_ts(st.ctime, 20, 9, "moved ctime");
	assert_ts(st.mtime, 10, 0, "moved mtime");
	assert_ts(stat_of(fs, "/p").mtime, 20, 9, "old parent");
	assert_ts(stat_of(fs, "/q").mtime, 20, 9, "new parent");
	assert_ts(stat_of(fs, "/").mtime, 10, 0, "grandparent");
	done(fs, dev);
}
END_TEST

START_TEST(test_link_symlink_and_xattr_set_their_times)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	struct zcow_stat st;
	struct zcow_cred cred = { 1000, 100 };

	tclock_set(&c, 10, 0);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_path(fs, "/f", "f", 1, 0);
	tclock_set(&c, 20, 5);
	ck_assert_int_eq(zcow_link(fs, "/f", "/d/g"), 0);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.nlink, 2);
	assert_ts(st.ctime, 20, 5, "linked ctime");
	assert_ts(st.mtime, 10, 0, "linked mtime");
	assert_ts(stat_of(fs, "/d").mtime, 20, 5, "link's parent");
	tclock_set(&c, 30, 0);
	ck_assert_int_eq(zcow_symlink(fs, "f", "/d/s", &cred), 0);
	st = stat_of(fs, "/d/s");
	ck_assert_uint_eq(st.mode, S_IFLNK | 0777);
	ck_assert_uint_eq(st.uid, 1000);
	ck_assert_uint_eq(st.gid, 100);
	assert_ts(st.otime, 30, 0, "symlink otime");
	assert_ts(st.mtime, 30, 0, "symlink mtime");
	assert_ts(stat_of(fs, "/d").mtime, 30, 0, "symlink's parent");
	tclock_set(&c, 40, 7);
	ck_assert_int_eq(zcow_setxattr(fs, "/f", "user.k", "v", 1, 0), 0);
	assert_ts(stat_of(fs, "/f").ctime, 40, 7, "setxattr ctime");
	tclock_set(&c, 50, 0);
	ck_assert_int_eq(zcow_removexattr(fs, "/f", "user.k"), 0);
	st = stat_of(fs, "/f");
	assert_ts(st.ctime, 50, 0, "removexattr ctime");
	assert_ts(st.mtime, 10, 0, "xattr calls leave mtime");
	tclock_set(&c, 60, 0);
	ck_assert_int_eq(zcow_unlink(fs, "/d/g"), 0);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.nlink, 1);
	assert_ts(st.ctime, 60, 0, "unlinked name's ctime");
	done(fs, dev);
}
END_TEST

static void names_of(struct zcow_dirent *e, uint64_t nr, char *out)
{
	uint64_t i;

	*out = '\0';
	for (i = 0; i < nr; i++) {
		strcat(out, e[i].name);
		strcat(out, " ");
	}
}

/* readdir_at: DIR_INDEX order, off = index, paging from off + 1 stays
 * right when an entry already listed is removed. */
START_TEST(test_readdir_at_pages_by_index_across_a_delete)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_dirent *e;
	struct zcow_fs *fs;
	uint64_t nr, next;
	char names[256];

	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_path(fs, "/d/zz", "1", 1, 0);
	ck_assert_int_eq(zcow_mkdir(fs, "/d/aa"), 0);
	write_path(fs, "/d/mm", "1", 1, 0);
	write_path(fs, "/d/bb", "1", 1, 0);
	ck_assert_int_eq(zcow_readdir_at(fs, "/d", 0, 2, &e, &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(e[0].name, "zz");
	ck_assert_uint_eq(e[0].off, 2);	/* btrfs: 0, 1 are "." and ".." */
	ck_assert_uint_eq(e[0].type, ZCOW_FT_REG_FILE);
	ck_assert_str_eq(e[1].name, "aa");
	ck_assert_uint_eq(e[1].off, 3);
	ck_assert_uint_eq(e[1].type, ZCOW_FT_DIR);
	ck_assert_uint_eq(e[1].ino, stat_of(fs, "/d/aa").ino);
	next = e[1].off + 1;
	free(e);
	/* an entry already listed goes; a new one comes last */
	ck_assert_int_eq(zcow_unlink(fs, "/d/zz"), 0);
	write_path(fs, "/d/new", "1", 1, 0);
	ck_assert_int_eq(zcow_readdir_at(fs, "/d", next, 100, &e, &nr), 0);
	names_of(e, nr, names);
	ck_assert_str_eq(names, "mm bb new ");
	ck_assert_uint_eq(e[0].off, 4);
	ck_assert_uint_eq(e[2].off, 6);
	free(e);
	ck_assert_int_eq(zcow_readdir_at(fs, "/d", 7, 100, &e, &nr), 0);
	ck_assert_uint_eq(nr, 0);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(zcow_readdir_at(fs, "/d", 0, 0, &e, &nr), 0);
	ck_assert_uint_eq(nr, 0);
	ck_assert_int_eq(zcow_readdir_at(fs, "/d/mm", 0, 10, &e, &nr),
			 -ENOTDIR);
	ck_assert_int_eq(zcow_readdir_at(fs, "/x", 0, 10, &e, &nr), -ENOENT);
	/* zcow_readdir: sorted by name, with their offs */
	ck_assert_int_eq(zcow_readdir(fs, "/d", &e, &nr), 0);
	names_of(e, nr, names);
	ck_assert_str_eq(names, "aa bb mm new ");
	ck_assert_uint_eq(e[0].off, 3);
	free(e);
	done(fs, dev);
}
END_TEST

static void expect_zeros_then(struct zcow_fs *fs, const char *path,
			      uint64_t zeros, const char *tail)
{
	uint64_t len = zeros + strlen(tail), i;
	char *buf = malloc(len + 10);

	memset(buf, 0x5a, len + 10);
	ck_assert_int_eq(read_path(fs, path, buf, len + 10, 0), (int64_t)len);
	for (i = 0; i < zeros; i++)
		ck_assert_msg(buf[i] == 0, "%s: byte %llu is %d", path,
			      (unsigned long long)i, buf[i]);
	ck_assert_int_eq(memcmp(buf + zeros, tail, strlen(tail)), 0);
	free(buf);
}

/* Sparse files read zeros in holes, and no stale data comes back. */
START_TEST(test_sparse_files_read_zeros_and_never_stale_data)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_file *f;
	struct zcow_fs *fs;
	char blk[8192];

	fs = fresh(dev, &c);
	write_path(fs, "/s", "END", 3, MiB);
	ck_assert_uint_eq(stat_of(fs, "/s").size, MiB + 3);
	ck_assert_uint_eq(stat_of(fs, "/s").nbytes, 4096);
	expect_zeros_then(fs, "/s", MiB, "END");
	ck_assert_int_eq(zcow_create(fs, "/t", &f), 0);
	memset(blk, 'x', sizeof(blk));
	ck_assert_int_eq(zcow_pwrite(f, blk, sizeof(blk), 0), 8192);
	ck_assert_int_eq(zcow_truncate(f, 10), 0);
	ck_assert_int_eq(zcow_truncate(f, 3 * 4096 + 5), 0);
	zcow_close(f);
	ck_assert_uint_eq(stat_of(fs, "/t").size, 3 * 4096 + 5);
	memset(blk, 0x5a, sizeof(blk));
	ck_assert_int_eq(read_path(fs, "/t", blk, sizeof(blk), 0), 8192);
	ck_assert_int_eq(memcmp(blk, "xxxxxxxxxx", 10), 0);
	{
		int i;

		for (i = 10; i < 8192; i++)
			ck_assert_msg(blk[i] == 0, "byte %d is %d", i, blk[i]);
	}
	ck_assert_int_eq(zcow_truncate_path(fs, "/u", 5), -ENOENT);
	write_path(fs, "/u", "", 0, 0);
	ck_assert_int_eq(zcow_truncate_path(fs, "/u", 2 * MiB), 0);
	expect_zeros_then(fs, "/u", 2 * MiB, "");
	ck_assert_uint_eq(stat_of(fs, "/u").nbytes, 0);
	/* rmdir of a directory with an entry */
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	write_path(fs, "/d/x", "", 0, 0);
	ck_assert_int_eq(zcow_rmdir(fs, "/d"), -ENOTEMPTY);
	done(fs, dev);
}
END_TEST

/* Times, owner and mode through unmount and mount. */
START_TEST(test_attributes_survive_unmount_and_mount)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_cred cred = { 42, 43 };
	struct zcow_timespec ts[2] = { { 77, 1 }, { 88, 999999999 } };
	struct zcow_file *f;
	struct zcow_fs *fs;
	struct zcow_stat st;

	tclock_set(&c, 1000, 123456789);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_open_as(fs, "/f", O_CREAT | O_RDWR, 0640, &cred,
				      &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, "data", 4, 0), 4);
	zcow_close(f);
	tclock_set(&c, 2000, 5);
	ck_assert_int_eq(zcow_utimens(fs, "/f", ts), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	tclock_set(&c, 3000, 0);
	fs = mount_clock(dev, &c);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.mode, S_IFREG | 0640);
	ck_assert_uint_eq(st.uid, 42);
	ck_assert_uint_eq(st.gid, 43);
	assert_ts(st.atime, 77, 1, "atime");
	assert_ts(st.mtime, 88, 999999999, "mtime");
	assert_ts(st.ctime, 2000, 5, "ctime");
	assert_ts(st.otime, 1000, 123456789, "otime");
	done(fs, dev);
}
END_TEST

/* Power fails now: every unflushed write is lost. */
static void crash(struct zcow_fs *fs)
{
	struct zsim *sim = zsim_from_dev(fs->dev);

	ck_assert_int_eq(zsim_cut_now(sim, ZSIM_LOSS_DROP, 5), 0);
	zcow_unmount(fs);
	ck_assert_int_eq(zsim_power_cycle(sim), 0);
}

static void fsync_path(struct zcow_fs *fs, const char *path)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
}

/* chmod, chown and utimens are logged by an fsync: after a power cut the
 * replayed inode has them; an unsynced chmod of another file is lost. */
START_TEST(test_fsync_after_chmod_keeps_it_through_a_power_cut)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_timespec ts[2] = { { 5, 0 }, { 6, 0 } };
	struct zcow_statfs sf;
	struct zcow_fs *fs;
	struct zcow_stat st;
	uint64_t commits;

	tclock_set(&c, 100, 0);
	fs = fresh(dev, &c);
	write_path(fs, "/f", "x", 1, 0);
	write_path(fs, "/g", "y", 1, 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	commits = sf.nr_commits;
	tclock_set(&c, 200, 0);
	ck_assert_int_eq(zcow_chmod(fs, "/f", 0600), 0);
	ck_assert_int_eq(zcow_chown(fs, "/f", 9, 8), 0);
	ck_assert_int_eq(zcow_utimens(fs, "/f", ts), 0);
	ck_assert_int_eq(zcow_chmod(fs, "/g", 0700), 0);
	fsync_path(fs, "/f");
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	ck_assert_uint_eq(sf.nr_commits, commits);	/* the log did it */
	ck_assert_uint_eq(sf.nr_log_syncs, 1);
	crash(fs);
	fs = mount_clock(dev, &c);
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	ck_assert_uint_eq(sf.log_replayed, 1);
	st = stat_of(fs, "/f");
	ck_assert_uint_eq(st.mode, S_IFREG | 0600);
	ck_assert_uint_eq(st.uid, 9);
	ck_assert_uint_eq(st.gid, 8);
	assert_ts(st.atime, 5, 0, "atime");
	assert_ts(st.mtime, 6, 0, "mtime");
	assert_ts(st.ctime, 200, 0, "ctime");
	ck_assert_uint_eq(stat_of(fs, "/g").mode, S_IFREG | 0644);
	done(fs, dev);
}
END_TEST

/* A directory's chmod and utimens, fsynced through the directory, come
 * back after a power cut. */
START_TEST(test_fsync_of_a_directory_keeps_its_attributes)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_timespec ts[2] = { { 11, 12 }, { 13, 14 } };
	struct zcow_statfs sf;
	struct zcow_fs *fs;
	struct zcow_stat st;

	tclock_set(&c, 100, 0);
	fs = fresh(dev, &c);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	tclock_set(&c, 300, 0);
	ck_assert_int_eq(zcow_chmod(fs, "/d", 0711), 0);
	ck_assert_int_eq(zcow_utimens(fs, "/d", ts), 0);
	fsync_path(fs, "/d");
	ck_assert_int_eq(zcow_statfs(fs, &sf), 0);
	ck_assert_uint_eq(sf.nr_log_syncs, 1);
	crash(fs);
	fs = mount_clock(dev, &c);
	st = stat_of(fs, "/d");
	ck_assert_uint_eq(st.mode, S_IFDIR | 0711);
	assert_ts(st.atime, 11, 12, "atime");
	assert_ts(st.mtime, 13, 14, "mtime");
	assert_ts(st.ctime, 300, 0, "ctime");
	done(fs, dev);
}
END_TEST

/* The checker reports a time whose nanoseconds are not below 10^9. */
START_TEST(test_check_reports_nanoseconds_out_of_range)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_inode in;
	struct zcow_fs *fs;
	uint64_t ino;

	fs = fresh(dev, &c);
	write_path(fs, "/f", "x", 1, 0);
	ino = stat_of(fs, "/f").ino;
	ck_assert_int_eq(zcow_inode_get(&fs->fs_tree, ino, &in), 0);
	in.mtime.nsec = 1000000000u;
	ck_assert_int_eq(zcow_inode_put(&fs->fs_tree, &in), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_check(fs, zcow_test_print_problem, NULL), 1);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/* Attribute changes inside a writable snapshot (its tree shares nodes
 * with the fs tree): committed cleanly, the fs tree's copy unchanged. */
START_TEST(test_attributes_change_inside_a_writable_snapshot)
{
	struct tclock c = { 0 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	char name[32], buf[8];
	int i;

	tclock_set(&c, 10, 0);
	fs = fresh(dev, &c);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "/f%03d", i);
		write_path(fs, name, "x", 1, 0);
	}
	ck_assert_int_eq(zcow_subvol_snapshot(fs, "w", false, NULL), 0);
	tclock_set(&c, 20, 0);
	ck_assert_int_eq(zcow_chmod(fs, "/w/f010", 0600), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = mount_clock(dev, &c);
	zcow_test_assert_clean(fs);
	ck_assert_uint_eq(stat_of(fs, "/w/f010").mode, S_IFREG | 0600);
	ck_assert_uint_eq(stat_of(fs, "/f010").mode, S_IFREG | 0644);
	tclock_set(&c, 30, 0);
	ck_assert_int_eq(read_path(fs, "/w/f020", buf, 8, 0), 1);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = mount_clock(dev, &c);
	zcow_test_assert_clean(fs);
	assert_ts(stat_of(fs, "/w/f020").atime, 30, 0, "snapshot atime");
	assert_ts(stat_of(fs, "/f020").atime, 10, 0, "fs tree atime");
	done(fs, dev);
}
END_TEST

/* Without a clock the real time is taken. */
START_TEST(test_no_clock_takes_the_real_time)
{
	struct zcow_mkfs_opts mo = { .seed = 5 };
	struct zdev *dev = new_dev();
	struct zcow_fs *fs;
	struct zcow_stat st;
	struct timespec t0, t1;

	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	clock_gettime(CLOCK_REALTIME, &t0);
	write_path(fs, "/f", "x", 1, 0);
	clock_gettime(CLOCK_REALTIME, &t1);
	st = stat_of(fs, "/f");
	ck_assert_int_ge(st.mtime.sec, t0.tv_sec);
	ck_assert_int_le(st.mtime.sec, t1.tv_sec);
	ck_assert_uint_lt(st.mtime.nsec, 1000000000u);
	done(fs, dev);
}
END_TEST

Suite *posix_attrs_suite(void)
{
	Suite *s = suite_create("posix_attrs_suite");
	TCase *tc = tcase_create("attrs");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_times_follow_the_clock_on_create_write_and_truncate);
	tcase_add_test(tc, test_read_updates_atime_as_relatime);
	tcase_add_test(tc, test_noatime_and_strictatime_modes);
	tcase_add_test(tc, test_mkfs_sets_the_root_directory_times);
	tcase_add_test(tc, test_chmod_and_chown_change_only_what_they_name);
	tcase_add_test(tc, test_utimens_sets_omits_and_takes_now);
	tcase_add_test(tc, test_append_writes_land_at_the_end);
	tcase_add_test(tc, test_concurrent_appends_never_overlap);
	tcase_add_test(tc, test_rename2_errnos);
	tcase_add_test(tc, test_rename_exchange_swaps_files_and_dirs_across_dirs);
	tcase_add_test(tc, test_rename_sets_ctime_and_both_parents_times);
	tcase_add_test(tc, test_link_symlink_and_xattr_set_their_times);
	tcase_add_test(tc, test_readdir_at_pages_by_index_across_a_delete);
	tcase_add_test(tc, test_sparse_files_read_zeros_and_never_stale_data);
	tcase_add_test(tc, test_attributes_survive_unmount_and_mount);
	tcase_add_test(tc, test_fsync_after_chmod_keeps_it_through_a_power_cut);
	tcase_add_test(tc, test_fsync_of_a_directory_keeps_its_attributes);
	tcase_add_test(tc, test_check_reports_nanoseconds_out_of_range);
	tcase_add_test(tc, test_attributes_change_inside_a_writable_snapshot);
	tcase_add_test(tc, test_no_clock_takes_the_real_time);
	suite_add_tcase(s, tc);
	return s;
}
