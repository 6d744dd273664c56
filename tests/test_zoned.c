// SPDX-License-Identifier: MIT
/*
 * The zoned space policy (core/zoned.c): the data slots keep their own
 * groups, data leaves the last free zones to metadata, the submission
 * mode follows the zone type and the mount, and large writes are split at
 * the end of a group so that every data zone is filled to its capacity.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctree.h"
#include "files.h"
#include "prng.h"
#include "tests.h"
#include "zcow.h"
#include "zoned.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

static struct zcow_fs *sim_fs_conv(uint64_t nr_zones, uint64_t nr_conv,
				   uint64_t zone_cap, uint64_t max_append,
				   uint32_t max_active,
				   const struct zcow_mount_opts *opts)
{
	struct zsim_config cfg = {
		.nr_zones = nr_zones, .zone_size = ZS, .seed = 11,
		.nr_conv = nr_conv,
		.zone_capacity = zone_cap, .max_append = max_append,
		.max_open = max_active, .max_active = max_active,
	};

	return zcow_test_sim_fs(&cfg, 2, opts);
}

static struct zcow_fs *sim_fs_cap(uint64_t nr_zones, uint64_t zone_cap,
				  uint64_t max_append, uint32_t max_active,
				  const struct zcow_mount_opts *opts)
{
	return sim_fs_conv(nr_zones, 0, zone_cap, max_append, max_active,
			   opts);
}

static struct zcow_fs *sim_fs(uint64_t nr_zones,
			      const struct zcow_mount_opts *opts)
{
	return sim_fs_cap(nr_zones, 0, 64 * 1024, 0, opts);
}

/*
 * data_zones=2: inode I writes to slot I % 2.  Each slot gets a group of
 * its own (a second one is opened rather than sharing the first), and
 * keeps it while it has room.
 */
START_TEST(test_zoned_each_data_slot_keeps_its_own_group)
{
	struct zcow_mount_opts mo = { .data_zones = 2 };
	struct zcow_fs *fs = sim_fs(32, &mo);
	struct zcow_bg *a, *b, *bg;
	uint64_t len;

	ck_assert_uint_eq(fs->files->data_zones, 2);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 256, false, 4096, &a, &len), 0);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 257, false, 4096, &b, &len), 0);
	ck_assert_ptr_ne(a, b);
	ck_assert(a->flags & ZCOW_BG_DATA);
	ck_assert(b->flags & ZCOW_BG_DATA);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 258, false, 4096, &bg, &len), 0);
	ck_assert_ptr_eq(bg, a);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 259, false, 4096, &bg, &len), 0);
	ck_assert_ptr_eq(bg, b);
	/* Sequential zones, zone append on: data goes by Zone Append. */
	ck_assert(zcow_zoned_use_append(fs, a));
	pthread_mutex_unlock(&fs->files->lock);
	zcow_test_close_fs(fs);
}
END_TEST

/* zone_append=off: plain writes at the write pointer. */
START_TEST(test_zoned_no_zone_append_mount_writes_plain)
{
	struct zcow_mount_opts mo = { .no_zone_append = true };
	struct zcow_fs *fs = sim_fs(32, &mo);
	struct zcow_bg *bg;
	uint64_t len;

	pthread_mutex_lock(&fs->files->lock);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 256, false, 4096, &bg, &len), 0);
	ck_assert(bg->is_seq);
	ck_assert(!zcow_zoned_use_append(fs, bg));
	pthread_mutex_unlock(&fs->files->lock);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * Filling the fs with data stops with ENOSPC while two zones are still
 * free: they are the commit's, for metadata, so that creating a file
 * (and the commit after it) still works.  (reclaim=off: with reclaim a
 * third one is held for the data relocation group, test_reclaim.c.)
 */
START_TEST(test_zoned_data_leaves_the_last_two_free_zones_to_metadata)
{
	struct zcow_mount_opts mo = { .reclaim = ZCOW_RECLAIM_OFF };
	struct zcow_fs *fs = sim_fs(32, &mo);
	uint8_t *buf = malloc(MiB);
	struct zcow_file *f;
	uint64_t off = 0;
	int64_t n;

	memset(buf, 0x6b, MiB);
	ck_assert_int_eq(zcow_create(fs, "/fill", &f), 0);
	while ((n = zcow_pwrite(f, buf, MiB, off)) > 0)
		off += MiB;
	ck_assert_int_eq(n, -ENOSPC);
	zcow_close(f);
	ck_assert_uint_gt(off, 16 * MiB);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_zoned_nr_free_zones(fs), 2);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_create(fs, "/after", &f), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_sync(fs), 0);
	zcow_test_close_fs(fs);
	free(buf);
}
END_TEST

/* ---- large writes split at the end of a group ------------------------ */

/* A zone capacity no write size divides: 3 MiB + 100 KiB of 4 MiB. */
#define SPLIT_CAP (3 * MiB + 100 * 1024)
#define SPLIT_APPEND (512 * 1024)

static uint8_t split_byte(uint64_t file, uint64_t off)
{
	return (uint8_t)(zcow_mix64(file * 0x100000000ULL + off / 8) >> 56);
}

static void split_fill(uint8_t *buf, uint64_t file, uint64_t off,
		       uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		buf[i] = split_byte(file, off + i);
}

/* Write @len bytes of file @file's pattern at @off in @bs-byte writes. */
static void split_write(struct zcow_file *f, uint64_t file, uint64_t off,
			uint64_t len, uint64_t bs)
{
	uint8_t *buf = malloc(bs);
	uint64_t pos, n;

	ck_assert_ptr_nonnull(buf);
	for (pos = off; pos < off + len; pos += n) {
		n = off + len - pos < bs ? off + len - pos : bs;
		split_fill(buf, file, pos, n);
		ck_assert_int_eq(zcow_pwrite(f, buf, n, pos), (int64_t)n);
	}
	free(buf);
}

static void split_read_back(struct zcow_file *f, uint64_t file, uint64_t len)
{
	uint8_t *buf = malloc(len), *want = malloc(len);

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(want);
	split_fill(want, file, 0, len);
	ck_assert_int_eq(zcow_pread(f, buf, len, 0), (int64_t)len);
	ck_assert(memcmp(buf, want, len) == 0);
	free(buf);
	free(want);
}

/* The file extents of @f, in file order: at most @max, returns how many. */
static uint64_t split_extents(struct zcow_file *f, struct zcow_fext *v,
			      uint64_t max)
{
	struct zcow_key start = { f->ino, ZCOW_EXTENT_DATA_KEY, 0 }, k;
	struct zcow_tree_iter it;
	const void *data;
	uint32_t len;
	uint64_t nr = 0;

	pthread_mutex_lock(&f->fs->files->lock);
	zcow_tree_iter_init(&it, f->tree, &start);
	while (zcow_tree_iter_next(&it, &k, &data, &len) == 0 &&
	       k.objectid == f->ino && k.type == ZCOW_EXTENT_DATA_KEY) {
		ck_assert_uint_lt(nr, max);
		ck_assert_int_eq(zcow_fext_decode(data, len, k.offset,
						  &v[nr]), 0);
		nr++;
	}
	pthread_mutex_unlock(&f->fs->files->lock);
	return nr;
}

/*
 * Every data group the fs finished is full by its writes to its capacity
 * (the zone FULL, no zone finish command, used = capacity, zone_unusable
 * only the capacity gap); the one still open has its write pointer at
 * its allocation offset.  No extent crosses a group.  Returns the data
 * bytes used.
 */
static uint64_t split_check_groups(struct zcow_fs *fs, uint64_t *nr_full_ret)
{
	struct zdev_stats st;
	uint64_t i, used = 0, nr_full = 0;

	zdev_get_stats(fs->dev, &st);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_ZONE][ZDEV_OP_FINISH], 0);
	pthread_mutex_lock(&fs->files->lock);
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zcow_bg *bg = fs->bgs[i];
		struct zdev_zone z;

		if (!(bg->flags & ZCOW_BG_DATA))
			continue;
		ck_assert_int_eq(zdev_report_zone(fs->dev, bg->physical, &z),
				 0);
		ck_assert_uint_eq(bg->capacity, z.capacity);
		ck_assert_uint_eq(bg->reserved, 0);
		ck_assert_uint_eq(bg->pinned, 0);
		ck_assert_uint_eq(bg->zone_unusable, bg->length - bg->capacity);
		ck_assert_uint_eq(bg->used, bg->alloc_offset);
		if (!bg->is_seq) {	/* conventional: no write pointer */
			nr_full += bg->alloc_offset == bg->capacity;
		} else if (bg->alloc_offset == bg->capacity) {
			ck_assert_uint_eq(z.cond, ZDEV_COND_FULL);
			nr_full++;
		} else {
			ck_assert_uint_ne(z.cond, ZDEV_COND_FULL);
			ck_assert_uint_eq(z.wp, z.start + bg->alloc_offset);
		}
		used += bg->used;
	}
	pthread_mutex_unlock(&fs->files->lock);
	*nr_full_ret = nr_full;
	return used;
}

/* Each extent lies in one data group (an extent never crosses one). */
static void split_check_extents_in_groups(struct zcow_fs *fs,
					  const struct zcow_fext *v,
					  uint64_t nr)
{
	uint64_t i;

	pthread_mutex_lock(&fs->files->lock);
	for (i = 0; i < nr; i++) {
		struct zcow_bg *bg = zcow_bg_lookup(fs, v[i].disk_bytenr);

		ck_assert_ptr_nonnull(bg);
		ck_assert(bg->flags & ZCOW_BG_DATA);
		ck_assert_uint_le(v[i].disk_bytenr + v[i].disk_num_bytes,
				  bg->start + bg->capacity);
		ck_assert_uint_eq(v[i].num_bytes, v[i].disk_num_bytes);
		ck_assert_uint_eq(v[i].offset, 0);
	}
	pthread_mutex_unlock(&fs->files->lock);
}

/*
 * One file, 60 KiB then 24 MiB in 1 MiB writes, zone capacity 3 MiB +
 * 100 KiB: the pieces (max_extent) do not divide the capacity.  Each zone
 * is filled to its capacity, a piece that crosses it split in two extents
 * (the model below gives every extent's length), the file reads back,
 * the checker is clean before and after a remount.  _i = 0: zone append;
 * 1: zone_append=off (plain writes at the write pointer); 2: conventional
 * zones (emulated, capacity = zone size; plain writes anywhere).
 */
START_TEST(test_zoned_large_write_splits_at_group_end)
{
	struct zcow_mount_opts mo = { .no_zone_append = _i == 1 };
	struct zcow_fs *fs = sim_fs_conv(32, _i == 2 ? 32 : 0, SPLIT_CAP,
					 SPLIT_APPEND, 0, &mo);
	const uint64_t first = 60 * 1024, total = first + 24 * MiB;
	const uint64_t cap = _i == 2 ? ZS : SPLIT_CAP;
	struct zcow_fext v[64];
	uint64_t max = fs->files->max_extent, room = cap, pos, nr, i;
	uint64_t nr_full, want_lens[64], nr_want = 0;
	struct zcow_file *f;
	struct zdev *dev;

	ck_assert_uint_eq(max, _i == 1 ? MiB : SPLIT_APPEND);
	ck_assert_int_eq(zcow_create(fs, "/big", &f), 0);
	split_write(f, 1, 0, first, first);
	split_write(f, 1, first, total - first, MiB);
	/* The model: pieces of max_extent (the first write one of its
	 * own), each split where a group ends. */
	for (pos = 0; pos < total;) {
		uint64_t piece = pos ? (total - pos < max ? total - pos : max) :
				       first;

		pos += piece;
		while (piece) {
			uint64_t part = piece < room ? piece : room;

			want_lens[nr_want++] = part;
			piece -= part;
			room -= part;
			if (!room)
				room = cap;
		}
	}
	nr = split_extents(f, v, 64);
	ck_assert_uint_eq(nr, nr_want);
	for (i = 0, pos = 0; i < nr; pos += v[i].num_bytes, i++) {
		ck_assert_uint_eq(v[i].file_off, pos);
		ck_assert_uint_eq(v[i].num_bytes, want_lens[i]);
	}
	split_check_extents_in_groups(fs, v, nr);
	ck_assert_uint_eq(split_check_groups(fs, &nr_full), total);
	ck_assert_uint_eq(nr_full, total / cap);
	split_read_back(f, 1, total);
	zcow_close(f);
	zcow_test_assert_clean(fs);
	dev = fs->dev;
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_uint_eq(split_check_groups(fs, &nr_full), total);
	ck_assert_uint_eq(nr_full, total / cap);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDONLY, &f), 0);
	split_read_back(f, 1, total);
	zcow_close(f);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A write that ends exactly at the capacity is not split: 100 KiB, then
 * 3 MiB (pieces of max_extent) fill the group's 3 MiB + 100 KiB; its zone
 * is FULL by the last write (no finish), and the next write opens a new
 * group.
 */
START_TEST(test_zoned_write_filling_zone_exactly_not_split)
{
	struct zcow_mount_opts mo = { .no_zone_append = _i == 1 };
	struct zcow_fs *fs = sim_fs_cap(32, SPLIT_CAP, SPLIT_APPEND, 0, &mo);
	const uint64_t first = SPLIT_CAP - 6 * SPLIT_APPEND;
	struct zcow_fext v[16];
	uint64_t nr, nr_full, i;
	struct zcow_bg *a, *b;
	struct zcow_file *f;

	ck_assert_int_eq(zcow_create(fs, "/exact", &f), 0);
	split_write(f, 2, 0, first, first);
	split_write(f, 2, first, 6 * SPLIT_APPEND, 6 * SPLIT_APPEND);
	nr = split_extents(f, v, 16);
	ck_assert_uint_eq(nr, _i == 1 ? 4 : 7);
	ck_assert_uint_eq(v[0].num_bytes, first);
	for (i = 1; i < nr; i++)	/* pieces of max_extent, none split */
		ck_assert_uint_eq(v[i].num_bytes, fs->files->max_extent);
	ck_assert_uint_eq(split_check_groups(fs, &nr_full), SPLIT_CAP);
	ck_assert_uint_eq(nr_full, 1);
	pthread_mutex_lock(&fs->files->lock);
	a = zcow_bg_lookup(fs, v[0].disk_bytenr);
	ck_assert_uint_eq(a->alloc_offset, a->capacity);
	pthread_mutex_unlock(&fs->files->lock);
	split_write(f, 2, SPLIT_CAP, 4096, 4096);
	nr = split_extents(f, v, 16);
	pthread_mutex_lock(&fs->files->lock);
	b = zcow_bg_lookup(fs, v[nr - 1].disk_bytenr);
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq(b->alloc_offset, 4096);
	pthread_mutex_unlock(&fs->files->lock);
	split_read_back(f, 2, SPLIT_CAP + 4096);
	zcow_close(f);
	zcow_test_assert_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

#define SPLIT_THREADS 16
#define SPLIT_FILE (3 * MiB)

struct split_job {
	struct zcow_fs *fs;
	uint64_t id;
};

static void *split_thread(void *arg)
{
	struct split_job *j = arg;
	struct zcow_file *f;
	char path[32];
	uint8_t *buf = malloc(768 * 1024);
	uint64_t pos, n;
	int err;

	snprintf(path, sizeof(path), "/t%llu", (unsigned long long)j->id);
	err = buf ? zcow_create(j->fs, path, &f) : -ENOMEM;
	/* 768 KiB writes: pieces of 512 and 256 KiB, all sizes at once. */
	for (pos = 0; !err && pos < SPLIT_FILE; pos += n) {
		n = SPLIT_FILE - pos < 768 * 1024 ? SPLIT_FILE - pos :
						    768 * 1024;
		split_fill(buf, 100 + j->id, pos, n);
		err = zcow_pwrite(f, buf, n, pos) == (int64_t)n ? 0 : -EIO;
	}
	if (!err)
		zcow_close(f);
	free(buf);
	return err ? (void *)1 : NULL;
}

/*
 * 16 threads write 3 MiB files each in 768 KiB writes on 4 data slots:
 * zone appends land in the order the device picks, reservations end at
 * the capacity while other appends are in flight.  Every finished zone
 * is full to its capacity, no extent crosses a group, every file reads
 * back, the checker is clean.  _i & 1: zone_append=off; _i & 2: the
 * device allows 11 active (and open) zones, so the 4 data slots take
 * all it leaves to data (the data relocation group holds one more): a zone allocated full holds its active zone
 * until its last write lands, and a new group must wait for that (the
 * device refuses a write that would open one zone too many).
 */
START_TEST(test_zoned_split_from_16_threads_fills_zones)
{
	struct zcow_mount_opts mo = { .data_zones = 4,
				      .no_zone_append = _i & 1 };
	struct zcow_fs *fs = sim_fs_cap(32, SPLIT_CAP, SPLIT_APPEND,
					_i & 2 ? 11 : 0, &mo);
	struct split_job jobs[SPLIT_THREADS];
	pthread_t th[SPLIT_THREADS];
	struct zcow_fext v[64];
	uint64_t i, nr, nr_full, sum;
	struct zcow_file *f;
	char path[32];
	void *rv;

	/* _i & 2: the 4 slots are what the device's limit leaves to data */
	ck_assert_uint_eq(fs->files->data_zones, 4);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(zcow_zoned_data_zones(fs, 5, true), _i & 2 ? 4 : 5);
	pthread_mutex_unlock(&fs->files->lock);
	for (i = 0; i < SPLIT_THREADS; i++) {
		jobs[i].fs = fs;
		jobs[i].id = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL, split_thread,
						&jobs[i]), 0);
	}
	for (i = 0; i < SPLIT_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &rv), 0);
		ck_assert_ptr_null(rv);
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_uint_eq(split_check_groups(fs, &nr_full),
			  SPLIT_THREADS * SPLIT_FILE);
	/* The open groups (at most the 4 slots') hold the rest. */
	ck_assert_uint_ge(nr_full, SPLIT_THREADS * SPLIT_FILE / SPLIT_CAP - 4);
	for (i = 0; i < SPLIT_THREADS; i++) {
		snprintf(path, sizeof(path), "/t%llu", (unsigned long long)i);
		ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
		nr = split_extents(f, v, 64);
		split_check_extents_in_groups(fs, v, nr);
		for (sum = 0; nr; nr--)
			sum += v[nr - 1].num_bytes;
		ck_assert_uint_eq(sum, SPLIT_FILE);
		split_read_back(f, 100 + i, SPLIT_FILE);
		zcow_close(f);
	}
	zcow_test_assert_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

struct wait_job {
	struct zcow_fs *fs;
	struct zcow_bg *bg;	/* its reservation is given back */
	uint64_t logical, len;
	bool released;
};

static void *release_later(void *arg)
{
	struct wait_job *j = arg;
	struct zcow_files *fl = j->fs->files;

	usleep(100 * 1000);
	pthread_mutex_lock(&fl->lock);
	zcow_bg_release(j->fs, j->logical, j->len, true);
	j->released = true;
	pthread_cond_broadcast(&fl->cond);
	pthread_mutex_unlock(&fl->lock);
	return NULL;
}

/*
 * The device leaves 4 active zones to data and 4 groups are allocated to
 * their capacity with writes in flight: their zones are still active, so
 * a pick opens no fifth group but waits until one's writes are done, then
 * opens one (deterministic: the writes in flight are reservations given
 * back by another thread).
 */
START_TEST(test_zoned_pick_waits_for_full_groups_writes)
{
	struct zcow_mount_opts mo = { .data_zones = 4 };
	struct zcow_fs *fs = sim_fs_cap(32, SPLIT_CAP, SPLIT_APPEND, 11, &mo);
	struct zcow_files *fl = fs->files;
	struct zcow_bg *bg[4], *nb;
	uint64_t logical[4], len, i;
	struct wait_job job = { .fs = fs };
	pthread_t th;

	ck_assert_uint_eq(fl->data_zones, 4);
	pthread_mutex_lock(&fl->lock);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 256 + i, false, 8 * MiB,
							 &bg[i], &len), 0);
		ck_assert_uint_eq(len, bg[i]->capacity);
		ck_assert_int_eq(zcow_bg_reserve_in(fs, bg[i], len,
						    &logical[i]), 0);
	}
	job.bg = bg[2];
	job.logical = logical[2];
	job.len = bg[2]->capacity;
	ck_assert_int_eq(pthread_create(&th, NULL, release_later, &job), 0);
	ck_assert_int_eq(zcow_zoned_pick_data_bg(fs, 256, false, 4096, &nb, &len),
			 0);
	ck_assert(job.released);
	for (i = 0; i < 4; i++)
		ck_assert_ptr_ne(nb, bg[i]);
	ck_assert_uint_eq(len, 4096);
	for (i = 0; i < 4; i++)
		if (i != 2)
			zcow_bg_release(fs, logical[i], bg[i]->capacity,
					true);
	pthread_mutex_unlock(&fl->lock);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	zcow_test_close_fs(fs);
}
END_TEST


/* ---- the active-zone budget near a full device ------------------------ */

/* Zones of @dev open or closed (active), by the device's report. */
static uint32_t dev_nr_active(struct zdev *dev)
{
	struct zdev_zone z;
	uint32_t n = 0;
	uint64_t i;

	for (i = 0; i < dev->info.nr_zones; i++) {
		ck_assert_int_eq(zdev_report_zone(dev, i * dev->info.zone_size,
						  &z), 0);
		n += z.cond == ZDEV_COND_IMP_OPEN ||
		     z.cond == ZDEV_COND_EXP_OPEN || z.cond == ZDEV_COND_CLOSED;
	}
	return n;
}

/* Live files of a refill run (their numbers, oldest first). */
struct refill {
	struct zcow_fs *fs;
	uint64_t prng;
	uint64_t *ids;
	uint64_t nr, next;
	uint8_t *buf;
};

/* One file /rN of 4 KiB..512 KiB, fsynced one time in four: 0, or
 * -ENOSPC with the file removed.  Anything else fails the test. */
static int refill_one(struct refill *r)
{
	uint64_t size = 4096 * (1 + zcow_rand_below(&r->prng, 128));
	uint64_t id = r->next++;
	struct zcow_file *f;
	char name[32];
	int64_t n = 0;
	int err;

	snprintf(name, sizeof(name), "/r%" PRIu64, id);
	err = zcow_create(r->fs, name, &f);
	if (!err) {
		n = zcow_pwrite(f, r->buf, size, 0);
		err = n < 0 ? (int)n : 0;
		if (!err && id % 4 == 3)
			err = zcow_fsync(f);
		ck_assert_int_eq(zcow_close(f), 0);
	}
	ck_assert_msg(!err || err == -ENOSPC, "file %" PRIu64 ": %d", id, err);
	ck_assert_int_eq(zcow_fs_error(r->fs), 0);
	if (err) {
		err = zcow_unlink(r->fs, name);
		ck_assert_msg(!err || err == -ENOENT, "unlink: %d", err);
		return -ENOSPC;
	}
	r->ids[r->nr++] = id;
	return 0;
}

/*
 * Fill, delete every other file, refill, five rounds, on 32 zones of
 * 4 MiB with the tree-log on and off, at max_active 14, 8 and 6: data, the
 * tree-log, relocation and the commits share the active-zone budget, so
 * every operation ends with 0 or ENOSPC, never -EOVERFLOW or -EIO, the fs
 * never enters its error state, the check is clean, and no zone is
 * written beyond the device's limit; every round refills, and stops
 * only when live data fills the space data may use.
 */
static const uint32_t refill_active[] = { 14, 8, 6 };

START_TEST(test_zoned_refill_with_fsync_stays_in_active_budget)
{
	/* _i / 3: the tree-log off, every fsync a commit */
	struct zcow_mount_opts mo = { .no_treelog = _i / 3 };
	struct refill r = { .prng = 7 + (uint64_t)(_i % 3) };
	struct zdev *dev;
	uint64_t i, k, violations;
	struct zcow_fs_info fi;
	char name[32];
	int round;

	r.fs = sim_fs_cap(32, 0, 0, refill_active[_i % 3], &mo);
	dev = r.fs->dev;
	violations = zsim_nr_violations(zsim_from_dev(dev),
					ZSIM_RULE_TOO_MANY_ACTIVE);
	r.buf = malloc(512 * 1024);
	r.ids = malloc(65536 * sizeof(*r.ids));
	ck_assert_ptr_nonnull(r.buf);
	ck_assert_ptr_nonnull(r.ids);
	memset(r.buf, 0x5a, 512 * 1024);
	for (round = 0; round <= 5; round++) {
		uint64_t filled = 0;

		for (i = 0, k = 0; round && i < r.nr; i++) {
			if (i % 2) {
				r.ids[k++] = r.ids[i];
				continue;
			}
			snprintf(name, sizeof(name), "/r%" PRIu64, r.ids[i]);
			ck_assert_int_eq(zcow_unlink(r.fs, name), 0);
		}
		r.nr = k;
		ck_assert_int_eq(zcow_sync(r.fs), 0);
		while (r.nr < 65536 && !refill_one(&r))
			filled++;
		/* Every round refills, at 6 too (a dropped log's
		 * unwritten nodes kept the tree-log group's zone, and from
		 * round 2 on no write found a zone, half the device free). */
		ck_assert_msg(filled, "round %d wrote nothing", round);
		/* ... and stops only when live data fills the space data
		 * may use, but for a partly filled group per data slot and
		 * the relocation group's. */
		ck_assert_int_eq(zcow_fs_info(r.fs, &fi), 0);
		ck_assert_msg(fi.data_live_bytes + (fi.data_zones + 1) * ZS >=
				      fi.data_space_bytes,
			      "round %d: ENOSPC with %" PRIu64 " live of %" PRIu64,
			      round, fi.data_live_bytes, fi.data_space_bytes);
		ck_assert_int_eq(zcow_sync(r.fs), 0);
		ck_assert_int_eq(zcow_fs_error(r.fs), 0);
		/* The budget counts every zone the device has active. */
		ck_assert_uint_le(dev_nr_active(dev),
				  zcow_zoned_nr_active(r.fs, &r.fs->devs[0]));
		ck_assert_uint_le(zcow_zoned_nr_active(r.fs, &r.fs->devs[0]),
				  refill_active[_i % 3]);
	}
	ck_assert_int_eq(zcow_check(r.fs, zcow_test_print_problem, NULL), 0);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					      ZSIM_RULE_TOO_MANY_ACTIVE),
			  violations);
	free(r.ids);
	free(r.buf);
	zcow_test_close_fs(r.fs);
}
END_TEST

static int zone_cond(struct zcow_bg *bg, uint64_t *wp_ret)
{
	struct zdev_zone z;

	ck_assert_int_eq(zdev_report_zone(bg->dev->zdev, bg->physical, &z), 0);
	if (wp_ret)
		*wp_ret = z.wp - z.start;
	return z.cond;
}

/* One 4 KiB file @path of bytes @byte; returns zcow_pwrite()'s result. */
static int64_t put_4k(struct zcow_fs *fs, const char *path, int byte)
{
	uint8_t buf[4096];
	struct zcow_file *f;
	int64_t n;

	memset(buf, byte, sizeof(buf));
	ck_assert_int_eq(zcow_create(fs, path, &f), 0);
	n = zcow_pwrite(f, buf, sizeof(buf), 0);
	zcow_close(f);
	return n;
}

/*
 * max_active 6, tree-log on, step by step: superblock log (2), system and
 * metadata hold 4 zones, the tree-log group's claim a fifth.  The claim
 * stands in for the metadata's reserve (metadata can always take it
 * back), so the first data group opens the sixth.  The relocation group
 * then gets a zone by letting the log's claim go and finishing the
 * slot's group (FULL, its tail unusable); a new log group may take the
 * reserve's place again, and metadata takes it back; data, which may cut
 * neither a slot's group nor a metadata group, gets -ENOSPC.
 */
START_TEST(test_zoned_budget_gives_zones_back_by_who_opens)
{
	struct zcow_mount_opts mo = { 0 };
	struct zcow_fs *fs = sim_fs_cap(32, 0, 0, 6, &mo);
	const struct zcow_device *zd = &fs->devs[0];
	struct zcow_bg *g, *g2;
	uint64_t wp;

	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_ne(fs->treelog_bg, 0);
	ck_assert_uint_eq(zcow_zoned_nr_active(fs, zd), 5);
	pthread_mutex_unlock(&fs->files->lock);

	ck_assert_int_eq(put_4k(fs, "/a", 1), 4096);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_ne(fs->treelog_bg, 0);
	g = zcow_bg_lookup(fs, fs->files->data_active[0]);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(zone_cond(g, &wp), ZDEV_COND_IMP_OPEN);
	ck_assert_uint_eq(wp, 4096);
	ck_assert_uint_eq(zcow_zoned_nr_active(fs, zd), 6);
	ck_assert_uint_le(dev_nr_active(fs->dev), 6);

	ck_assert_int_eq(zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_RELOC), 0);
	ck_assert_uint_eq(fs->treelog_bg, 0);
	ck_assert(g->is_finished);
	ck_assert_int_eq(zone_cond(g, NULL), ZDEV_COND_FULL);
	ck_assert_uint_eq(g->alloc_offset, g->capacity);
	ck_assert_uint_eq(g->zone_unusable, g->capacity - 4096);
	ck_assert_uint_eq(fs->files->data_active[0], 0);
	ck_assert_uint_eq(zcow_zoned_nr_active(fs, zd), 4);
	pthread_mutex_unlock(&fs->files->lock);

	ck_assert_int_eq(put_4k(fs, "/b", 2), 4096);
	pthread_mutex_lock(&fs->files->lock);
	g2 = zcow_bg_lookup(fs, fs->files->data_active[0]);
	ck_assert_ptr_nonnull(g2);
	ck_assert_ptr_ne(g2, g);
	ck_assert_uint_eq(zcow_zoned_nr_active(fs, zd), 5);
	ck_assert_int_eq(zcow_treelog_bg_prepare(fs, 65536, true), 0);
	ck_assert_uint_ne(fs->treelog_bg, 0);
	ck_assert_uint_eq(zcow_zoned_nr_active(fs, zd), 6);
	ck_assert_int_eq(zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_META), 0);
	ck_assert_uint_eq(fs->treelog_bg, 0);
	ck_assert_uint_eq(zcow_zoned_nr_active(fs, zd), 5);
	ck_assert_int_eq(zcow_zoned_open_zone(fs, NULL, ZCOW_ZONE_DATA),
			 -ENOSPC);
	ck_assert_int_eq(zone_cond(g2, &wp), ZDEV_COND_IMP_OPEN);
	ck_assert_uint_eq(wp, 4096);
	ck_assert_uint_le(dev_nr_active(fs->dev), 5);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_fs_error(fs), 0);
	zcow_test_assert_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A data write the device refuses (an injected -EIO) leaves nothing on
 * the device: the group's allocation offset goes back to the write
 * pointer, so the next plain write lands at it instead of failing "not
 * at the write pointer" (zone_append=off), and by Zone Append the same.
 */
START_TEST(test_zoned_failed_data_write_rolls_back_to_the_write_pointer)
{
	struct zcow_mount_opts mo = { .data_zones = 1,
				      .no_zone_append = _i == 0 };
	struct zcow_fs *fs = sim_fs_cap(32, 0, 0, 14, &mo);
	struct zsim *sim = zsim_from_dev(fs->dev);
	struct zsim_fault fault = {
		.op = _i == 0 ? ZDEV_OP_WRITE : ZDEV_OP_APPEND, .ordinal = 1,
		.match = ZSIM_MATCH_CLASS_OP, .cls = ZDEV_CLASS_DATA,
	};
	struct zcow_bg *g;
	uint64_t wp, unusable;

	ck_assert_int_eq(put_4k(fs, "/a", 1), 4096);
	pthread_mutex_lock(&fs->files->lock);
	g = zcow_bg_lookup(fs, fs->files->data_active[0]);
	unusable = g->zone_unusable;
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(zsim_add_fault(sim, &fault), 0);
	ck_assert_int_eq(put_4k(fs, "/b", 2), -EIO);
	pthread_mutex_lock(&fs->files->lock);
	ck_assert_uint_eq(g->alloc_offset, 4096);
	ck_assert_uint_eq(g->zone_unusable, unusable);
	ck_assert(!g->is_wp_stale);
	ck_assert_int_eq(zone_cond(g, &wp), ZDEV_COND_IMP_OPEN);
	ck_assert_uint_eq(wp, 4096);
	pthread_mutex_unlock(&fs->files->lock);
	ck_assert_int_eq(put_4k(fs, "/c", 3), 4096);
	ck_assert_int_eq(zone_cond(g, &wp), ZDEV_COND_IMP_OPEN);
	ck_assert_uint_eq(wp, 8192);
	ck_assert_uint_eq(zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP),
			  0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_fs_error(fs), 0);
	zcow_test_assert_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * A tree-log node the device refuses: the fsync commits instead (0, not
 * the error state), and the next fsync logs again at the log group's
 * write pointer.
 */
START_TEST(test_zoned_failed_log_write_commits_instead)
{
	struct zcow_mount_opts mo = { 0 };
	struct zcow_fs *fs = sim_fs_cap(32, 0, 0, 14, &mo);
	struct zsim *sim = zsim_from_dev(fs->dev);
	struct zsim_fault fault = {
		.op = ZDEV_OP_WRITE, .ordinal = 1,
		.match = ZSIM_MATCH_CLASS_OP, .cls = ZDEV_CLASS_LOG,
	};
	uint8_t buf[4096];
	struct zcow_file *f;
	int i;

	memset(buf, 7, sizeof(buf));
	ck_assert_int_eq(zcow_create(fs, "/f", &f), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zsim_add_fault(sim, &fault), 0);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), i * 4096),
				 4096);
		ck_assert_int_eq(zcow_fsync(f), 0);
		ck_assert_int_eq(zcow_fs_error(fs), 0);
	}
	zcow_close(f);
	ck_assert_uint_eq(zsim_nr_violations(sim, ZSIM_RULE_INJECTED), 1);
	ck_assert_uint_eq(zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP),
			  0);
	zcow_test_assert_clean(fs);
	zcow_test_close_fs(fs);
}
END_TEST

/* The device saw no zone opened beyond its limit and no write off a
 * write pointer, the check is clean; then the fs and device close. */
static void expect_rules_kept_and_close(struct zcow_fs *fs, struct zsim *sim)
{
	ck_assert_uint_eq(zsim_nr_violations(sim, ZSIM_RULE_TOO_MANY_ACTIVE),
			  0);
	ck_assert_uint_eq(zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP),
			  0);
	zcow_test_assert_clean(fs);
	zcow_test_close_fs(fs);
}

/* ---- zones a crash left active outside every block group --------------- */

/*
 * A zone written but in no block group (a chunk no commit recorded, as a
 * crash leaves it) is active on the device, which counts it against
 * max_active while the fs's budget does not.  A read-write mount resets
 * it before anything is written; a read-only mount leaves it; afterwards
 * files fill the device at max_active 6 with only ENOSPC at the end (no
 * EOVERFLOW from a zone the fs did not know was open), and the device
 * saw no zone opened beyond its limit.
 */
START_TEST(test_zoned_mount_resets_active_zones_outside_groups)
{
	struct zcow_mount_opts ro = { .read_only = true }, rw = { 0 };
	struct zcow_fs *fs = sim_fs_cap(32, 0, 64 * 1024, 6, &rw);
	struct zdev *dev = fs->dev;
	struct zsim *sim = zsim_from_dev(dev);
	uint64_t zs = dev->info.zone_size, orphan[2], i;
	uint8_t *buf = calloc(1, MiB);
	struct zdev_zone z;
	struct zcow_file *f;
	int64_t n;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	/* The two highest zones: free on a fresh fs; one left open, one
	 * closed by an explicit close. */
	orphan[0] = 30 * zs;
	orphan[1] = 31 * zs;
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(zdev_report_zone(dev, orphan[i], &z), 0);
		ck_assert_int_eq(z.cond, ZDEV_COND_EMPTY);
		ck_assert_int_eq(zdev_write(dev, buf, 4096, orphan[i], 0,
					    ZDEV_CLASS_DATA), 0);
	}
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_CLOSE, orphan[1], zs,
					ZDEV_CLASS_ZONE), 0);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zdev_report_zone(dev, orphan[0], &z), 0);
	ck_assert_int_eq(z.cond, ZDEV_COND_IMP_OPEN);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(dev, &rw, &fs), 0);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(zdev_report_zone(dev, orphan[i], &z), 0);
		ck_assert_int_eq(z.cond, ZDEV_COND_EMPTY);
	}
	ck_assert_int_eq(zcow_create(fs, "/fill", &f), 0);
	for (i = 0; (n = zcow_pwrite(f, buf, MiB, i * MiB)) > 0; i++)
		;
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_fs_error(fs), 0);
	ck_assert_uint_gt(i, 16);
	free(buf);
	expect_rules_kept_and_close(fs, sim);
}
END_TEST

/* ---- 32 writers on a full device ---------------------------------------- */

#define FULL_THREADS 32
#define FULL_OPS 40

struct full_job {
	struct zcow_fs *fs;
	uint64_t id;
	int bad;		/* the first result other than 0 or -ENOSPC */
	uint64_t nr_enospc;
};

/* One writer: files of 4..128 KiB, fsync one in four; at ENOSPC its
 * oldest file goes.  Every call must end with 0 or -ENOSPC. */
static void *full_thread(void *arg)
{
	struct full_job *j = arg;
	uint64_t prng = 1000 + j->id, first = 0, k;
	uint8_t *buf = malloc(128 * 1024);
	struct zcow_file *f;
	char path[32];
	int err;

	if (!buf) {
		j->bad = -ENOMEM;
		return NULL;
	}
	memset(buf, (int)j->id, 128 * 1024);
	for (k = 0; k < FULL_OPS && !j->bad; k++) {
		uint64_t size = 4096 * (1 + zcow_rand_below(&prng, 32));
		int64_t n;

		snprintf(path, sizeof(path), "/w%" PRIu64 "_%" PRIu64, j->id, k);
		err = zcow_create(j->fs, path, &f);
		if (!err) {
			n = zcow_pwrite(f, buf, size, 0);
			err = n < 0 ? (int)n : 0;
			if (!err && k % 4 == 3)
				err = zcow_fsync(f);
			zcow_close(f);
		}
		if (err == -ENOSPC) {
			j->nr_enospc++;
			zcow_unlink(j->fs, path);
			snprintf(path, sizeof(path), "/w%" PRIu64 "_%" PRIu64,
				 j->id, first++);
			err = zcow_unlink(j->fs, path);
			if (err == -ENOENT || err == -ENOSPC)
				err = 0;
		}
		if (err && !j->bad)
			j->bad = err;
	}
	free(buf);
	return NULL;
}

/*
 * 32 threads write, fsync and delete files on 32 zones of 4 MiB filled
 * to a few MiB of free space, at max_active 6 with the tree-log on; two
 * more rounds delete every other file first (half-empty groups:
 * relocation's work) and write again.  The data slots, the tree-log,
 * relocation and the commits share the budget while writes are in
 * flight.  Every call returns 0 or -ENOSPC (some do: the device is
 * full), the fs never enters its error state, no zone is opened beyond
 * the limit, the check is clean; with the writers cleaning and with the
 * background cleaner's thread.
 */
START_TEST(test_zoned_32_writers_on_full_device_get_only_enospc)
{
	/* _i 1: with the background cleaner's thread beside them */
	struct zcow_mount_opts mo = {
		.cleaner = _i ? ZCOW_CLEANER_THREAD : ZCOW_CLEANER_WRITER,
	};
	struct zcow_fs *fs = sim_fs_cap(32, 0, 0, 6, &mo);
	struct zsim *sim = zsim_from_dev(fs->dev);
	struct full_job jobs[FULL_THREADS];
	pthread_t th[FULL_THREADS];
	uint64_t i, nr_enospc = 0;
	uint8_t *buf = malloc(MiB);
	struct zcow_file *f;
	char path[48];
	int64_t n = 0;
	int round;

	/* Fill to ENOSPC with one file, then give back 8 MiB. */
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0x11, MiB);
	ck_assert_int_eq(zcow_create(fs, "/fill", &f), 0);
	for (i = 0; (n = zcow_pwrite(f, buf, MiB, i * MiB)) > 0; i++)
		;
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_int_eq(zcow_truncate(f, i > 8 ? (i - 8) * MiB : 0), 0);
	zcow_close(f);
	ck_assert_int_eq(zcow_sync(fs), 0);
	for (round = 0; round < 3; round++) {
		/* Rounds after the first: every other file goes (the groups
		 * half empty: relocation's work), then 32 writers again. */
		for (i = 0; round && i < FULL_THREADS * FULL_OPS; i += 2) {
			snprintf(path, sizeof(path), "/w%" PRIu64 "_%" PRIu64,
				 (round - 1) * FULL_THREADS + i % FULL_THREADS,
				 i / FULL_THREADS);
			zcow_unlink(fs, path);
		}
		for (i = 0; i < FULL_THREADS; i++) {
			jobs[i] = (struct full_job){
				.fs = fs, .id = round * FULL_THREADS + i };
			ck_assert_int_eq(pthread_create(&th[i], NULL,
							full_thread, &jobs[i]),
					 0);
		}
		for (i = 0; i < FULL_THREADS; i++) {
			ck_assert_int_eq(pthread_join(th[i], NULL), 0);
			ck_assert_msg(!jobs[i].bad, "round %d writer %" PRIu64
				      ": %d", round, i, jobs[i].bad);
			nr_enospc += jobs[i].nr_enospc;
		}
		ck_assert_int_eq(zcow_fs_error(fs), 0);
	}
	ck_assert_uint_gt(nr_enospc, 0);
	ck_assert_int_eq(zcow_fs_error(fs), 0);
	ck_assert_int_eq(zcow_sync(fs), 0);
	free(buf);
	expect_rules_kept_and_close(fs, sim);
}
END_TEST

Suite *zoned_suite(void)
{
	Suite *s = suite_create("zoned_suite");
	TCase *tc = tcase_create("zoned");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_zoned_each_data_slot_keeps_its_own_group);
	tcase_add_test(tc, test_zoned_no_zone_append_mount_writes_plain);
	tcase_add_test(tc,
		       test_zoned_data_leaves_the_last_two_free_zones_to_metadata);
	tcase_add_loop_test(tc, test_zoned_large_write_splits_at_group_end,
			    0, 3);
	tcase_add_loop_test(tc,
			    test_zoned_write_filling_zone_exactly_not_split,
			    0, 2);
	tcase_add_loop_test(tc, test_zoned_split_from_16_threads_fills_zones,
			    0, 4);
	tcase_add_test(tc, test_zoned_pick_waits_for_full_groups_writes);
	tcase_add_loop_test(tc,
			    test_zoned_refill_with_fsync_stays_in_active_budget,
			    0, 6);
	tcase_add_test(tc,
		       test_zoned_budget_gives_zones_back_by_who_opens);
	tcase_add_loop_test(tc,
			    test_zoned_failed_data_write_rolls_back_to_the_write_pointer,
			    0, 2);
	tcase_add_test(tc, test_zoned_failed_log_write_commits_instead);
	tcase_add_loop_test(tc,
			    test_zoned_32_writers_on_full_device_get_only_enospc,
			    0, 2);
	tcase_add_test(tc, test_zoned_mount_resets_active_zones_outside_groups);
	suite_add_tcase(s, tc);
	return s;
}
