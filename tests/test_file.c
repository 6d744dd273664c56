// SPDX-License-Identifier: MIT
/*
 * The data path (seed 006, core/file.c): zone append from many threads
 * lands in an order the device picks and every file still reads back;
 * data goes only as appends (or, zone_append=off, only as plain writes at
 * the write pointer); checksums catch corruption; ENOSPC fill / delete /
 * reuse; 16 threads on different files and on one file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"
#include "tests.h"
#include "fs.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)
#define NR_THREADS 16

static struct zdev *new_sim(uint64_t nr_zones, uint64_t nr_conv,
			    uint64_t zone_size)
{
	struct zsim_config cfg = { .nr_zones = nr_zones,
				   .zone_size = zone_size, .nr_conv = nr_conv,
				   .seed = 11, .max_append = 64 * 1024 };

	return zcow_test_sim(&cfg);
}

static struct zcow_fs *mkfs_mount(struct zdev *dev,
				  const struct zcow_mount_opts *opts)
{
	return zcow_test_mkfs_mount(dev, 2, opts);
}

/* Unmount, mount again with @opts, check clean. */
static struct zcow_fs *remount(struct zcow_fs *fs,
			       const struct zcow_mount_opts *opts)
{
	fs = zcow_test_remount(fs, opts);
	zcow_test_assert_clean(fs);
	return fs;
}

static uint8_t pattern(uint64_t file, uint64_t off)
{
	uint64_t z = file * ZCOW_GOLDEN64 + off / 8;

	z ^= z >> 29;
	return (uint8_t)(z * 0xbf58476d1ce4e5b9ULL >> 56);
}

struct job {
	struct zcow_fs *fs;
	int id;
	bool is_shared;		/* all threads write one file, own stripes */
	uint64_t bs;
	uint64_t nr;
	int err;
};

#define STRIPE (256 * 1024)

static void *writer(void *arg)
{
	struct job *j = arg;
	struct zcow_file *f;
	char path[32];
	uint8_t *buf = malloc(j->bs);
	uint64_t i, b;

	if (j->is_shared)
		snprintf(path, sizeof(path), "/shared");
	else
		snprintf(path, sizeof(path), "/f%d", j->id);
	j->err = zcow_open(j->fs, path, O_CREAT | O_RDWR, &f);
	if (j->err)
		goto out;
	for (i = 0; i < j->nr && !j->err; i++) {
		uint64_t off = j->is_shared ?
				       (uint64_t)j->id * STRIPE +
					       (i * j->bs) % STRIPE :
				       i * j->bs;
		int64_t n;

		for (b = 0; b < j->bs; b++)
			buf[b] = pattern(j->is_shared ? 0 : (uint64_t)j->id,
					 off + b);
		n = zcow_pwrite(f, buf, j->bs, off);
		if (n != (int64_t)j->bs)
			j->err = n < 0 ? (int)n : -EIO;
		if (i % 16 == 15 && !j->err)
			j->err = zcow_fsync(f);
	}
	zcow_close(f);
out:
	free(buf);
	return NULL;
}

static void verify_file(struct zcow_fs *fs, const char *path, uint64_t id,
			uint64_t size)
{
	struct zcow_file *f;
	uint8_t *buf = malloc(size);
	uint64_t b;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pread(f, buf, size, 0), (int64_t)size);
	for (b = 0; b < size; b++)
		if (buf[b] != pattern(id, b))
			ck_abort_msg("%s: byte %llu differs", path,
				     (unsigned long long)b);
	zcow_close(f);
	free(buf);
}

static void run_threads(struct zcow_fs *fs, bool is_shared, uint64_t bs,
			uint64_t nr)
{
	pthread_t th[NR_THREADS];
	struct job jobs[NR_THREADS];
	int i;

	for (i = 0; i < NR_THREADS; i++) {
		jobs[i] = (struct job){ .fs = fs, .id = i,
					.is_shared = is_shared, .bs = bs,
					.nr = nr };
		ck_assert_int_eq(pthread_create(&th[i], NULL, writer, &jobs[i]),
				 0);
	}
	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(jobs[i].err, 0);
	}
}

static void verify_all(struct zcow_fs *fs, bool is_shared, uint64_t size)
{
	char path[32];
	int i;

	if (is_shared) {
		verify_file(fs, "/shared", 0, (uint64_t)NR_THREADS * STRIPE);
		return;
	}
	for (i = 0; i < NR_THREADS; i++) {
		snprintf(path, sizeof(path), "/f%d", i);
		verify_file(fs, path, (uint64_t)i, size);
	}
}

struct tracer {
	pthread_mutex_t lock;
	uint64_t data_writes, data_appends, data_append_bytes;
};

static void trace(void *arg, const struct zdev_trace_rec *r)
{
	struct tracer *t = arg;

	if (r->cls != ZDEV_CLASS_DATA || r->result)
		return;
	pthread_mutex_lock(&t->lock);
	if (r->op == ZDEV_OP_WRITE)
		t->data_writes++;
	if (r->op == ZDEV_OP_APPEND) {
		t->data_appends++;
		t->data_append_bytes += r->len;
	}
	pthread_mutex_unlock(&t->lock);
}

START_TEST(test_data_threads_append_one_bg_reorders_and_reads_back)
{
	/* Large zones, one data zone: every thread's appends go to the
	 * same block group. */
	struct zcow_mount_opts mo = { .data_zones = 1 };
	struct zdev *dev = new_sim(16, 0, 64 * MiB);
	struct zcow_fs *fs = mkfs_mount(dev, &mo);
	struct tracer tr = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct zcow_statfs st;

	uint64_t rounds = 0;

	zdev_set_trace(dev, trace, &tr);
	/* 16 x 1 MiB, again while the host happened to run the threads one
	 * after the other (nothing to reorder then) */
	do {
		run_threads(fs, false, 16384, 64);
		rounds++;
		ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	} while (!st.nr_appends_moved && rounds < 8);
	ck_assert_uint_eq(st.nr_appends, NR_THREADS * 64 * rounds);
	/* The device, not the submitter, chose the order. */
	ck_assert_uint_gt(st.nr_appends_moved, 0);
	ck_assert_uint_eq(tr.data_writes, 0);
	ck_assert_uint_eq(tr.data_appends, NR_THREADS * 64 * rounds);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP), 0);
	verify_all(fs, false, 64 * 16384);
	zdev_set_trace(dev, NULL, NULL);
	fs = remount(fs, &mo);
	verify_all(fs, false, 64 * 16384);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_data_large_write_split_at_max_append)
{
	struct zdev *dev = new_sim(16, 0, 64 * MiB);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct tracer tr = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct zcow_file *f;
	uint64_t len = 1 * MiB + 8192, b;
	uint8_t *buf = malloc(len);

	for (b = 0; b < len; b++)
		buf[b] = pattern(99, b);
	zdev_set_trace(dev, trace, &tr);
	ck_assert_int_eq(zcow_create(fs, "/big", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, 0), (int64_t)len);
	zcow_close(f);
	/* max_append 64 KiB: one command = one extent of at most that. */
	ck_assert_uint_eq(tr.data_appends, (len + 65535) / 65536);
	ck_assert_uint_eq(tr.data_append_bytes, len);
	zdev_set_trace(dev, NULL, NULL);
	fs = remount(fs, NULL);
	verify_file(fs, "/big", 99, len);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

START_TEST(test_data_plain_writes_serialized_at_wp)
{
	struct zcow_mount_opts mo = { .no_zone_append = true };
	struct zdev *dev = new_sim(16, 0, 64 * MiB);
	struct zcow_fs *fs = mkfs_mount(dev, &mo);
	struct tracer tr = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct zcow_statfs st;

	zdev_set_trace(dev, trace, &tr);
	run_threads(fs, false, 8192, 32);
	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	ck_assert_uint_eq(st.nr_appends, 0);
	ck_assert_uint_eq(tr.data_appends, 0);
	ck_assert_uint_eq(tr.data_writes, NR_THREADS * 32);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP), 0);
	zdev_set_trace(dev, NULL, NULL);
	fs = remount(fs, &mo);
	verify_all(fs, false, 32 * 8192);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_data_16_threads_one_file_and_many_files)
{
	struct zcow_mount_opts mo = { .commit_bytes = 2 * MiB };
	struct zdev *dev = new_sim(48, 0, ZS);
	struct zcow_fs *fs = mkfs_mount(dev, &mo);

	run_threads(fs, true, 4096, 96);
	run_threads(fs, false, 4096 * 3, 24);
	verify_all(fs, true, 0);
	verify_all(fs, false, 24 * 4096 * 3);
	fs = remount(fs, &mo);
	verify_all(fs, true, 0);
	verify_all(fs, false, 24 * 4096 * 3);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * data_zones=4: 4 writer threads on 4 files (consecutive inode numbers,
 * slots ino % 4) fill 4 different data block groups (zones) at once, one
 * file per zone, with appends or (plain) writes at each zone's write
 * pointer; every file reads back exactly, before and after a remount.  A
 * device allowing 8 active zones gets 2 (8 - 6 kept for non-data).
 */
START_TEST(test_data_4_zones_4_writers)
{
	struct zcow_mount_opts mo = { .no_zone_append = _i % 2 };
	struct zdev *dev = new_sim(16, 0, 64 * MiB);
	struct zcow_fs *fs;
	struct zcow_mount_opts parsed = { 0 };
	pthread_t th[4];
	struct job jobs[4];
	char path[32];
	uint64_t i, nr_data = 0;
	int t;

	ck_assert_int_eq(zcow_mount_opts_parse("data_zones=4", &parsed), 0);
	ck_assert_uint_eq(parsed.data_zones, 4);
	ck_assert_int_eq(zcow_mount_opts_parse("data_zones=0", &parsed),
			 -EINVAL);
	mo.data_zones = 4;
	fs = mkfs_mount(dev, &mo);
	for (t = 0; t < 4; t++) {
		jobs[t] = (struct job){ .fs = fs, .id = t, .bs = 8192,
					.nr = 64 };
		ck_assert_int_eq(pthread_create(&th[t], NULL, writer, &jobs[t]),
				 0);
	}
	for (t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		ck_assert_int_eq(jobs[t].err, 0);
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	/* One file per zone: 4 data groups holding 512 KiB each. */
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];

		if (!(bg->flags & ZCOW_BG_DATA) || !bg->used)
			continue;
		nr_data++;
		ck_assert_uint_eq(bg->used, 64 * 8192);
	}
	ck_assert_uint_eq(nr_data, 4);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP), 0);
	for (t = 0; t < 4; t++) {
		snprintf(path, sizeof(path), "/f%d", t);
		verify_file(fs, path, (uint64_t)t, 64 * 8192);
	}
	fs = remount(fs, &mo);
	for (t = 0; t < 4; t++) {
		snprintf(path, sizeof(path), "/f%d", t);
		verify_file(fs, path, (uint64_t)t, 64 * 8192);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);

	/* max_active 8 (6 kept: the one superblock-log mirror of 16
	 * zones, system, metadata and the next metadata group, the
	 * tree-log group, the data relocation group): data_zones=4 is
	 * clamped to 2. */
	{
		struct zsim_config cfg = { .nr_zones = 16,
					   .zone_size = 64 * MiB, .seed = 11,
					   .max_append = 64 * 1024,
					   .max_open = 8, .max_active = 8 };

		ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	}
	fs = mkfs_mount(dev, &mo);
	for (t = 0; t < 4; t++) {
		jobs[t] = (struct job){ .fs = fs, .id = t, .bs = 8192,
					.nr = 16 };
		ck_assert_int_eq(pthread_create(&th[t], NULL, writer, &jobs[t]),
				 0);
	}
	for (t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		ck_assert_int_eq(jobs[t].err, 0);
	}
	nr_data = 0;
	for (i = 0; i < fs->nr_bgs; i++)
		if ((fs->bgs[i]->flags & ZCOW_BG_DATA) && fs->bgs[i]->used)
			nr_data++;
	ck_assert_uint_eq(nr_data, 2);
	fs = remount(fs, &mo);
	for (t = 0; t < 4; t++) {
		snprintf(path, sizeof(path), "/f%d", t);
		verify_file(fs, path, (uint64_t)t, 16 * 8192);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_data_corrupt_block_is_eio)
{
	/* Conventional zones: the test may overwrite data in place. */
	struct zdev *dev = new_sim(16, 16, ZS);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t buf[3 * 4096], junk[4096];
	struct zcow_file *f;
	uint64_t i, data_phys = 0;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = pattern(5, i);
	ck_assert_int_eq(zcow_create(fs, "/c", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), 0),
			 (int64_t)sizeof(buf));
	ck_assert_int_eq(zcow_fsync(f), 0);
	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i]->flags & ZCOW_BG_DATA)
			data_phys = fs->bgs[i]->physical;
	ck_assert_uint_ne(data_phys, 0);
	memset(junk, 0x5a, sizeof(junk));
	/* The second block of the file's one extent. */
	ck_assert_int_eq(zdev_write(dev, junk, 4096, data_phys + 4096, 0,
				    ZDEV_CLASS_OTHER), 0);
	ck_assert_int_eq(zcow_pread(f, buf, 4096, 0), 4096);	/* intact */
	ck_assert_int_eq(zcow_pread(f, buf, 10, 4100), -EIO);
	ck_assert_int_eq(zcow_pread(f, buf, sizeof(buf), 0), -EIO);
	/* A partial overwrite must not hide it either (read-modify-write). */
	ck_assert_int_eq(zcow_pwrite(f, "x", 1, 4097), -EIO);
	zcow_close(f);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_data_enospc_fill_delete_reuse)
{
	struct zdev *dev = new_sim(16, 0, ZS);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	uint8_t *buf = malloc(MiB);
	int cycle;
	uint64_t first = 0;

	memset(buf, 0x33, MiB);
	for (cycle = 0; cycle < 3; cycle++) {
		uint64_t written = 0;
		struct zcow_file *f;
		char path[32];
		int64_t n = 0;
		int nf;

		for (nf = 0; n >= 0; nf++) {
			snprintf(path, sizeof(path), "/fill%d", nf);
			ck_assert_int_eq(zcow_create(fs, path, &f), 0);
			while ((n = zcow_pwrite(f, buf, MiB, 0 + (written %
							     (4 * MiB)))) > 0) {
				written += MiB;
				if (written % (4 * MiB) == 0)
					break;
			}
			zcow_close(f);
		}
		ck_assert_int_eq(n, -ENOSPC);
		ck_assert_uint_gt(written, 8 * MiB);
		if (!cycle)
			first = written;
		/* Nothing corrupt: sync, remount, check. */
		ck_assert_int_eq(zcow_sync(fs), 0);
		fs = remount(fs, NULL);
		for (; nf >= 0; nf--) {
			snprintf(path, sizeof(path), "/fill%d", nf);
			zcow_unlink(fs, path);
		}
		ck_assert_int_eq(zcow_sync(fs), 0);
		fs = remount(fs, NULL);
		/* The space came back. */
		ck_assert_uint_ge(written + 4 * MiB, first);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

/*
 * A data write's metadata reservation is held from its reserve step to
 * its record step (fs->rsv_held_nodes, docs/space.md rule 3): every
 * check meanwhile counts it, and it is given back on every way out (a
 * write that landed, a device write that failed, a write of several
 * pieces).  Nodes held beyond the room refuse what needs metadata.
 */
START_TEST(test_data_write_reservation_held_only_in_flight)
{
	struct zdev *dev = new_sim(16, 0, ZS);
	struct zcow_fs *fs = mkfs_mount(dev, NULL);
	struct zsim_fault fault = { .op = ZDEV_OP_APPEND, .ordinal = 1 };
	uint8_t *buf = malloc(MiB), got[4096];
	struct zcow_file *f;

	memset(buf, 0x5a, MiB);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, 4096, 0), 4096);
	ck_assert_uint_eq(fs->rsv_held_nodes, 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, MiB, 8192), (int64_t)MiB);
	ck_assert_uint_eq(fs->rsv_held_nodes, 0);
	/* the device refuses the data: given back, nothing recorded */
	ck_assert_int_eq(zsim_add_fault(zsim_from_dev(dev), &fault), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf + 1, 4096, 0), -EIO);
	ck_assert_uint_eq(fs->rsv_held_nodes, 0);
	zsim_clear_faults(zsim_from_dev(dev));
	ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0), 4096);
	ck_assert(!memcmp(got, buf, sizeof(got)));
	/* writes in flight holding more than the room (reserved with no
	 * grant left: core/file.c): refused at once */
	fs->rsv_held_nodes = UINT64_MAX / 2 / fs->nodesize;
	fs->meta_grant.nodes = 0;
	ck_assert_int_eq(zcow_pwrite(f, buf, 4096, 0), -ENOSPC);
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), -ENOSPC);
	fs->rsv_held_nodes = 0;
	ck_assert_int_eq(zcow_mkdir(fs, "/d"), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, 4096, 0), 4096);
	ck_assert_uint_eq(fs->rsv_held_nodes, 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

/* An empty file at @path: 0 or the create's errno. */
static int create_empty(struct zcow_fs *fs, const char *path)
{
	struct zcow_file *f;
	int err = zcow_create(fs, path, &f);

	if (!err)
		err = zcow_close(f);
	return err;
}

/*
 * The grant (docs/space.md) never admits what the full check would
 * refuse: every draw is checked in full as well (fs->grant_audit) while
 * files are written at random places, fsynced, created and removed until
 * the device is full and after, with reclaim on and the tree-log, and
 * with neither.  The grant is used (most reservations draw on it while
 * there is room), a removal never fails with reclaim on, and the file
 * system checks clean after a remount.
 */
START_TEST(test_data_grant_never_admits_what_the_check_refuses)
{
	struct zcow_mount_opts opts[2] = {
		{ .reclaim = ZCOW_RECLAIM_GREEDY },
		{ .no_treelog = true, .reclaim = ZCOW_RECLAIM_OFF },
	};
	const uint64_t fsize = 2 * MiB;
	uint8_t *buf = malloc(256 * 1024);
	int v;

	for (v = 0; v < 2; v++) {
		struct zcow_mkfs_opts mk = { .seed = 2, .nodesize = 4096 };
		struct zdev *dev = new_sim(32, 0, ZS);
		struct zcow_fs *fs = NULL;
		uint64_t rng = 7, i, nr_ok = 0, nr_full = 0;
		bool live[64] = { false };

		ck_assert_int_eq(zcow_mkfs(dev, &mk), 0);
		ck_assert_int_eq(zcow_mount(dev, &opts[v], &fs), 0);
		fs->grant_audit.is_on = true;
		for (i = 0; i < 12000; i++) {
			uint64_t r = (rng = zcow_mix64(rng + ZCOW_GOLDEN64));
			unsigned int n = (unsigned int)(r % 64);
			uint64_t len = 4096ULL << (r >> 60) % 7;
			uint64_t at = (r >> 8) % (fsize / len) * len;
			struct zcow_file *f;
			char path[32];
			int err;

			if ((r >> 16) % 4 != 0) {
				/* metadata only: an empty file, now and then
				 * an old one removed */
				snprintf(path, sizeof(path), "/e%" PRIu64,
					 (r >> 16) % 8 == 1 ? (r >> 32) % (i + 1) :
							      i);
				err = (r >> 16) % 8 == 1 ?
					      zcow_unlink(fs, path) :
					      create_empty(fs, path);
				ck_assert_msg(err == 0 || err == -ENOENT ||
						      err == -ENOSPC,
					      "%s: %d", path, err);
				nr_full += err == -ENOSPC;
				continue;
			}
			snprintf(path, sizeof(path), "/f%u", n);
			if (live[n] && (r >> 20) % 64 == 0) {
				err = zcow_unlink(fs, path);
				/* reclaim off: each removal on the full
				 * device takes reserve room no reset gives
				 * back (docs/space.md) */
				ck_assert_msg(err == 0 || err == -ENOENT ||
						      (v && err == -ENOSPC),
					      "unlink %s: %d", path, err);
				live[n] = live[n] && err == -ENOSPC;
				continue;
			}
			err = zcow_open(fs, path, O_RDWR | O_CREAT, &f);
			if (err == -ENOSPC) {
				nr_full++;
				continue;
			}
			ck_assert_int_eq(err, 0);
			live[n] = true;
			memset(buf, (int)(r >> 40), len);
			err = (int)zcow_pwrite(f, buf, len, at);
			ck_assert(err == (int)len || err == -ENOSPC);
			nr_ok += err > 0;
			nr_full += err < 0;
			if ((r >> 24) % 8 == 0) {
				err = zcow_fsync(f);
				ck_assert(err == 0 || err == -ENOSPC);
			}
			ck_assert_int_eq(zcow_close(f), 0);
			if (i % 500 == 499)
				ck_assert_int_eq(zcow_sync(fs), 0);
		}
		ck_assert_int_eq(fs->error, 0);
		ck_assert_uint_gt(nr_full, 0);
		ck_assert_uint_gt(nr_ok, 1000);
		ck_assert_uint_gt(fs->grant_audit.draws, nr_ok / 2);
		ck_assert_uint_eq(fs->grant_audit.bad, 0);
		ck_assert_int_eq(zcow_sync(fs), 0);
		fs = remount(fs, &opts[v]);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
	}
	free(buf);
}
END_TEST

/*
 * A write refused with ENOSPC changed nothing (docs/space.md), also when
 * its piece is split at the end of a data group: the part that fits the
 * group is not recorded when the rest finds no room.  A 7 MiB file on 16
 * zones of 1 MiB capacity (reclaim on, nearly full), overwritten 64 KiB
 * at a time at pseudo-random places with a sync every 8 writes, as
 * configs/crash-reclaim-full.scenario with size=7M: after each write the
 * range reads back the new bytes (success) or the old ones (ENOSPC).
 * The split that once recorded its first part and then failed is among
 * the first 30 writes.
 */
START_TEST(test_data_enospc_split_write_changes_nothing)
{
	struct zsim_config cfg = {
		.nr_zones = 16, .zone_size = ZS, .zone_capacity = MiB,
		.seed = 1,
	};
	const uint64_t size = 7 * MiB, piece = 64 * 1024;
	struct zcow_mkfs_opts mk = { .seed = 1 };
	struct zcow_mount_opts mo = { .no_treelog = true,
				      .reclaim = ZCOW_RECLAIM_GREEDY };
	uint8_t *shadow = malloc(size), *got = malloc(piece);
	uint64_t rng = 1, i, b, nr_enospc = 0, nr_ok = 0;
	uint8_t buf[64 * 1024];
	struct zdev *dev = NULL;
	struct zcow_file *f, *g;
	struct zcow_fs *fs = NULL;
	int64_t n;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mk), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	for (b = 0; b < size; b++)
		shadow[b] = pattern(1, b);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, shadow, size, 0), (int64_t)size);
	memset(buf, 0xb0, sizeof(buf));
	ck_assert_int_eq(zcow_create(fs, "/b", &g), 0);
	ck_assert_int_eq(zcow_pwrite(g, buf, 32768, 0), 32768);
	ck_assert_int_eq(zcow_sync(fs), 0);
	for (i = 0; i < 40; i++) {
		uint64_t at = (rng = zcow_mix64(rng + ZCOW_GOLDEN64)) %
			      (size / piece) * piece;

		for (b = 0; b < piece; b++)
			buf[b] = pattern(100 + i, b);
		n = zcow_pwrite(f, buf, piece, at);
		ck_assert(n == (int64_t)piece || n == -ENOSPC);
		if (n > 0) {
			memcpy(shadow + at, buf, piece);
			nr_ok++;
		} else {
			nr_enospc++;
		}
		/* given back, written or refused, split or whole */
		ck_assert_uint_eq(fs->rsv_held_nodes, 0);
		ck_assert_int_eq(zcow_pread(f, got, piece, at),
				 (int64_t)piece);
		ck_assert_msg(!memcmp(got, shadow + at, piece),
			      "write %" PRIu64 " at %" PRIu64 " (%s): the range holds neither its old nor only its new bytes",
			      i, at, n > 0 ? "done" : "ENOSPC");
		if (i % 16 == 15)
			zcow_pwrite(g, buf, 32768, 0);
		if (i % 8 == 7)
			ck_assert_int_eq(zcow_sync(fs), 0);
	}
	ck_assert_uint_gt(nr_enospc, 0);
	ck_assert_uint_gt(nr_ok, 0);
	zcow_close(f);
	zcow_close(g);
	ck_assert_int_eq(zcow_sync(fs), 0);
	fs = remount(fs, &mo);
	ck_assert_int_eq(zcow_open(fs, "/a", O_RDONLY, &f), 0);
	for (b = 0; b < size; b += piece) {
		ck_assert_int_eq(zcow_pread(f, got, piece, b), (int64_t)piece);
		ck_assert(!memcmp(got, shadow + b, piece));
	}
	zcow_close(f);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(shadow);
	free(got);
}
END_TEST

/*
 * A data group left with less room than the next write (one 64 KiB
 * append) still holds an active zone.  With the device's active zones all
 * taken (superblock logs, system, metadata, the tree-log group, that data
 * group) the write must not fail with ENOSPC while zones are free: its
 * first 8 KiB fill the group to its capacity (the zone turns FULL with
 * that write, no zone finish, nothing unusable) and the rest goes to a
 * new group.
 */
START_TEST(test_data_short_group_is_filled_then_a_new_one)
{
	struct zsim_config cfg = {
		.nr_zones = 32, .zone_size = ZS, .seed = 11,
		.max_append = 64 * 1024, .max_open = 4, .max_active = 6,
	};
	struct zdev *dev = NULL;
	struct zcow_fs *fs;
	struct zcow_file *f;
	struct zcow_mount_opts mo = { 0 };
	uint8_t *buf = malloc(ZS);
	uint64_t before_finish, i, nr_data = 0, nr_spare = 0;
	struct zdev_stats st0, st1;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	fs = mkfs_mount(dev, &mo);
	memset(buf, 0x5c, ZS);
	/* The tree-log group holds an active zone once a log is written. */
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, 4096, 0), 4096);
	ck_assert_int_eq(zcow_fsync(f), 0);
	/* Fill the data group but for 8 KiB. */
	ck_assert_int_eq(zcow_pwrite(f, buf, ZS - 4096 - 8192, 4096),
			 (int64_t)(ZS - 4096 - 8192));
	zcow_close(f);
	zdev_get_stats(dev, &st0);
	before_finish = st0.cmds[ZDEV_CLASS_ZONE][ZDEV_OP_FINISH];
	ck_assert_int_eq(zcow_create(fs, "/b", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, MiB, 0), (int64_t)MiB);
	zcow_close(f);
	zdev_get_stats(dev, &st1);
	ck_assert_uint_eq(st1.cmds[ZDEV_CLASS_ZONE][ZDEV_OP_FINISH],
			  before_finish);
	ck_assert_int_eq(zcow_sync(fs), 0);
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];
		struct zdev_zone z;

		if (!(bg->flags & ZCOW_BG_DATA))
			continue;
		/* The empty group kept committed ahead once an fsync used
		 * the log (core/zoned.c:keep_spare()). */
		if (!bg->alloc_offset) {
			nr_spare++;
			continue;
		}
		nr_data++;
		ck_assert_uint_eq(bg->zone_unusable, 0);
		ck_assert_uint_eq(bg->used, bg->alloc_offset);
		ck_assert_int_eq(zdev_report_zone(dev, bg->physical, &z), 0);
		ck_assert_uint_eq(bg->alloc_offset,
				  nr_data == 1 ? bg->capacity : MiB - 8192);
		ck_assert_uint_eq(z.cond == ZDEV_COND_FULL, nr_data == 1);
	}
	ck_assert_uint_eq(nr_data, 2);
	ck_assert_uint_le(nr_spare, 1);
	zcow_test_assert_clean(fs);
	fs = remount(fs, &mo);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
	free(buf);
}
END_TEST

/* Write files of 40 KiB + fsync each; returns how many were acknowledged. */
static int crash_workload(struct zdev *dev, const struct zcow_mount_opts *mo)
{
	struct zcow_fs *fs = NULL;
	uint8_t buf[40960];
	int i, acked = 0;

	if (zcow_mount(dev, mo, &fs))
		return 0;
	for (i = 0; i < 12; i++) {
		struct zcow_file *f;
		char path[32];
		uint64_t b;

		snprintf(path, sizeof(path), "/c%d", i);
		for (b = 0; b < sizeof(buf); b++)
			buf[b] = pattern((uint64_t)i + 100, b);
		if (zcow_open(fs, path, O_CREAT | O_TRUNC | O_RDWR, &f))
			break;
		if (zcow_pwrite(f, buf, sizeof(buf), 0) != sizeof(buf) ||
		    zcow_pwrite(f, buf, 5000, 3000) != 5000 ||
		    zcow_fsync(f)) {
			zcow_close(f);
			break;
		}
		zcow_close(f);
		acked++;
	}
	zcow_unmount(fs);
	return acked;
}

START_TEST(test_data_power_cut_keeps_every_fsynced_file)
{
	static const enum zsim_loss losses[] = { ZSIM_LOSS_DROP,
						 ZSIM_LOSS_PREFIX,
						 ZSIM_LOSS_TORN };
	struct zcow_mount_opts mo = { .no_zone_append = _i % 2 };
	enum zsim_loss loss = losses[_i / 2];
	struct zdev *dev;
	uint64_t nr_persist, n, p0;
	struct zcow_fs *fs;

	/* The number of persist points of an uncut run. */
	dev = new_sim(16, 0, ZS);
	fs = mkfs_mount(dev, &mo);
	zcow_unmount(fs);
	p0 = zsim_nr_persist(zsim_from_dev(dev));
	ck_assert_int_eq(crash_workload(dev, &mo), 12);
	nr_persist = zsim_nr_persist(zsim_from_dev(dev)) - p0;
	zdev_close(dev);
	for (n = 1; n <= nr_persist; n += 1 + nr_persist / 40) {
		struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST,
					.ordinal = n,
					.when = ZSIM_CUT_AFTER, .loss = loss,
					.seed = n };
		struct zsim *sim;
		int acked, i, ret;

		dev = new_sim(16, 0, ZS);
		fs = mkfs_mount(dev, &mo);
		zcow_unmount(fs);
		sim = zsim_from_dev(dev);
		ck_assert_int_eq(zsim_arm_cut(sim, &cut), 0);
		acked = crash_workload(dev, &mo);
		if (zsim_is_cut(sim))
			ck_assert_int_eq(zsim_power_cycle(sim), 0);
		ret = zcow_mount(dev, &mo, &fs);
		ck_assert_msg(ret == 0, "repro: data-crash loss=%s append=%d persist=%llu: mount %d",
			      zsim_loss_name(loss), !mo.no_zone_append,
			      (unsigned long long)n, ret);
		ck_assert_msg(zcow_check(fs, zcow_test_print_problem,
					 NULL) == 0,
			      "repro: data-crash loss=%s append=%d persist=%llu: check",
			      zsim_loss_name(loss), !mo.no_zone_append,
			      (unsigned long long)n);
		for (i = 0; i < acked; i++) {
			uint8_t want[40960], got[40960];
			struct zcow_file *f;
			char path[32];
			uint64_t b;

			for (b = 0; b < sizeof(want); b++)
				want[b] = pattern((uint64_t)i + 100, b);
			memmove(want + 3000, want, 5000);
			snprintf(path, sizeof(path), "/c%d", i);
			ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
			ck_assert_int_eq(zcow_pread(f, got, sizeof(got), 0),
					 (int64_t)sizeof(got));
			ck_assert_msg(!memcmp(got, want, sizeof(got)),
				      "repro: data-crash loss=%s persist=%llu: /c%d differs",
				      zsim_loss_name(loss),
				      (unsigned long long)n, i);
			zcow_close(f);
		}
		ret = zcow_unmount(fs);
		ck_assert_msg(ret == 0, "repro: data-crash loss=%s append=%d persist=%llu: unmount %d (%s)",
			      zsim_loss_name(loss), !mo.no_zone_append,
			      (unsigned long long)n, ret,
			      zsim_rule_name(zsim_last_violation(sim)));
		/* And it goes on writing where the write pointers are. */
		ck_assert_int_gt(crash_workload(dev, &mo), 0);
		ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
		zcow_test_assert_clean(fs);
		ck_assert_int_eq(zcow_unmount(fs), 0);
		zdev_close(dev);
	}
}
END_TEST

Suite *file_suite(void)
{
	Suite *s = suite_create("file_suite");
	TCase *tc = tcase_create("data");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_data_threads_append_one_bg_reorders_and_reads_back);
	tcase_add_test(tc, test_data_large_write_split_at_max_append);
	tcase_add_test(tc, test_data_plain_writes_serialized_at_wp);
	tcase_add_test(tc, test_data_16_threads_one_file_and_many_files);
	tcase_add_loop_test(tc, test_data_4_zones_4_writers, 0, 2);
	tcase_add_test(tc, test_data_corrupt_block_is_eio);
	tcase_add_test(tc, test_data_enospc_fill_delete_reuse);
	tcase_add_test(tc, test_data_enospc_split_write_changes_nothing);
	tcase_add_test(tc, test_data_write_reservation_held_only_in_flight);
	tcase_add_test(tc, test_data_grant_never_admits_what_the_check_refuses);
	tcase_add_test(tc, test_data_short_group_is_filled_then_a_new_one);
	tcase_add_loop_test(tc, test_data_power_cut_keeps_every_fsynced_file,
			    0, 6);
	suite_add_tcase(s, tc);
	return s;
}
