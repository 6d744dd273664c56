// SPDX-License-Identifier: MIT
/*
 * A full file system can always delete (docs/space.md, "Deleting on a
 * full file system"): filled until -ENOSPC by a file written in 4 KiB
 * pieces at random places, or by many small files, unlink, rmdir,
 * truncate and rename-over still run, the space comes back and is
 * written again, with reclaim on and off, and the check is clean, also
 * after a remount.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "tests.h"
#include "zcow.h"
#include "zsim.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)
#define BS 4096ULL

/* @nr_zones zones of 4 MiB, mkfs, mount with @mo. */
static struct zcow_fs *new_fs(uint64_t nr_zones,
			      const struct zcow_mount_opts *mo)
{
	struct zsim_config cfg = { .nr_zones = nr_zones, .zone_size = 4 * MiB,
				   .seed = 5, .max_append = 64 * KiB };

	return zcow_test_sim_fs(&cfg, 3, mo);
}

/* Unmount, check the image clean, mount again. */
static struct zcow_fs *remount_clean(struct zcow_fs *fs,
				     const struct zcow_mount_opts *mo)
{
	zcow_test_assert_clean(fs);
	fs = zcow_test_remount(fs, mo);
	zcow_test_assert_clean(fs);
	return fs;
}

static uint8_t pat(uint64_t off, uint32_t ver)
{
	return (uint8_t)((off / BS) * 131 + ver * 29 + (off % BS) / 512 + 1);
}

static void fill(uint8_t *buf, uint64_t off, uint64_t len, uint32_t ver)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(off + i, ver);
}

static uint64_t next(uint64_t *rng)
{
	*rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return *rng >> 20;
}

/* Write @path from 0 in 1 MiB pieces of version @ver until -ENOSPC or
 * @max bytes; the bytes written. */
static uint64_t refill(struct zcow_fs *fs, const char *path, uint64_t max,
		       uint32_t ver)
{
	uint8_t *buf = malloc(MiB);
	struct zcow_file *f;
	uint64_t off = 0;
	int64_t n = 0;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(zcow_open(fs, path, O_RDWR | O_CREAT, &f), 0);
	while (off < max) {
		fill(buf, off, MiB, ver);
		n = zcow_pwrite(f, buf, MiB, off);
		if (n <= 0)
			break;
		off += (uint64_t)n;
	}
	ck_assert_msg(off >= max || n == -ENOSPC, "refill: %lld",
		      (long long)n);
	ck_assert_int_eq(zcow_close(f), 0);
	free(buf);
	return off;
}

/* [0, @len) of @path reads back as version @ver. */
static void expect(struct zcow_fs *fs, const char *path, uint64_t len,
		   uint32_t ver)
{
	uint8_t *buf = malloc(MiB), *want = malloc(MiB);
	struct zcow_file *f;
	uint64_t off;

	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	for (off = 0; off < len; off += MiB) {
		uint64_t n = len - off < MiB ? len - off : MiB;

		ck_assert_int_eq(zcow_pread(f, buf, n, off), (int64_t)n);
		fill(want, off, n, ver);
		ck_assert_msg(!memcmp(buf, want, n), "%s at %llu differs",
			      path, (unsigned long long)off);
	}
	ck_assert_int_eq(zcow_close(f), 0);
	free(buf);
	free(want);
}

/*
 * After everything was removed: no data left once committed, a file of
 * 96 MiB written and read back, also after a clean remount.
 */
static struct zcow_fs *expect_space_back(struct zcow_fs *fs,
					 const struct zcow_mount_opts *mo)
{
	struct zcow_statfs st;

	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	ck_assert_uint_eq(st.data_used, 0);
	ck_assert_uint_eq(refill(fs, "/again", 96 * MiB, 2), 96 * MiB);
	expect(fs, "/again", 96 * MiB, 2);
	fs = remount_clean(fs, mo);
	expect(fs, "/again", 96 * MiB, 2);
	return fs;
}

/*
 * One file written in 4 KiB pieces at random places of 192 MiB until the
 * device (64 x 4 MiB) is full: an extent per piece, and removing it
 * changes every leaf of the fs, extent and checksum trees.  The unlink
 * succeeds, no data is left, a file of 96 MiB fits again.
 */
START_TEST(test_space_full_fs_deletes_a_fragmented_file)
{
	struct zcow_mount_opts mo = { .reclaim = _i ? ZCOW_RECLAIM_OFF :
						      ZCOW_RECLAIM_GREEDY };
	uint64_t rng = 7, nr = 0, span = 192 * MiB;
	struct zcow_file *f;
	struct zcow_fs *fs;
	uint8_t buf[BS];
	int64_t ret = 0;

	fs = new_fs(64, &mo);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDWR | O_CREAT, &f), 0);
	while (ret >= 0 && nr++ < 200000) {
		uint64_t at = next(&rng) % (span / BS) * BS;

		fill(buf, at, BS, 1);
		ret = zcow_pwrite(f, buf, BS, at);
	}
	ck_assert_int_eq(ret, -ENOSPC);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_unlink(fs, "/big"), 0);
	fs = expect_space_back(fs, &mo);
	ck_assert_int_eq(zcow_open(fs, "/big", O_RDONLY, &f), -ENOENT);
	zcow_test_close_fs(fs);
}
END_TEST

/*
 * Many small files in directories written by 4 KiB random writes until
 * the device is full.  Then on the full fs: a truncate down, a
 * rename over an existing file, every unlink and rmdir succeed; the
 * space comes back: a file of 96 MiB fits.
 */
START_TEST(test_space_full_fs_deletes_many_files)
{
	struct zcow_mount_opts mo = { .reclaim = _i ? ZCOW_RECLAIM_OFF :
						      ZCOW_RECLAIM_GREEDY };
	enum { DIRS = 8, FILES = 64 };
	uint64_t rng = 11, size = 512 * KiB;
	struct zcow_file *fv[DIRS * FILES];
	struct zcow_fs *fs;
	char path[64];
	uint8_t buf[BS];
	int64_t ret = 0;
	unsigned int i;

	fs = new_fs(64, &mo);
	for (i = 0; i < DIRS; i++) {
		snprintf(path, sizeof(path), "/d%u", i);
		ck_assert_int_eq(zcow_mkdir(fs, path), 0);
	}
	for (i = 0; i < DIRS * FILES; i++) {
		snprintf(path, sizeof(path), "/d%u/f%u", i % DIRS, i);
		ck_assert_int_eq(zcow_open(fs, path, O_RDWR | O_CREAT,
					   &fv[i]), 0);
	}
	while (ret >= 0) {
		uint64_t at = next(&rng) % (size / BS) * BS;

		i = (unsigned int)(next(&rng) % (DIRS * FILES));
		fill(buf, at, BS, i);
		ret = zcow_pwrite(fv[i], buf, BS, at);
	}
	ck_assert_int_eq(ret, -ENOSPC);
	for (i = 0; i < DIRS * FILES; i++)
		ck_assert_int_eq(zcow_close(fv[i]), 0);

	ck_assert_int_eq(zcow_truncate_path(fs, "/d0/f0", 4 * KiB), 0);
	ck_assert_int_eq(zcow_rename(fs, "/d1/f1", "/d2/f2"), 0);
	for (i = 0; i < DIRS * FILES; i++) {
		if (i == 1)
			continue;
		snprintf(path, sizeof(path), "/d%u/f%u", i % DIRS, i);
		ck_assert_msg(zcow_unlink(fs, path) == 0, "unlink %s", path);
	}
	for (i = 0; i < DIRS; i++) {
		snprintf(path, sizeof(path), "/d%u", i);
		ck_assert_int_eq(zcow_rmdir(fs, path), 0);
	}
	fs = expect_space_back(fs, &mo);
	zcow_test_close_fs(fs);
}
END_TEST

Suite *space_suite(void)
{
	Suite *s = suite_create("space_suite");
	TCase *tc = tcase_create("full");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_space_full_fs_deletes_a_fragmented_file,
			    0, 2);
	tcase_add_loop_test(tc, test_space_full_fs_deletes_many_files, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
