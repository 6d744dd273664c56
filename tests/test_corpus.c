// SPDX-License-Identifier: MIT
/*
 * The fuzz corpus replay: every file of tests/corpus/<harness>/ goes
 * through the harness's replay entry (fuzz/fuzz.h), the function the
 * libFuzzer binary calls.  Each file is an input a fuzzer once crashed
 * on or that broke an oracle; it must now pass.  `make asan` runs them
 * under the address and undefined sanitizers.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include "fuzz.h"
#include "tests.h"
#include "zcow.h"
#include "zsim.h"

#define CORPUS_DIR "tests/corpus"

typedef int (*replay_fn)(const uint8_t *data, size_t size, char *msg);

static const struct {
	const char *name;
	replay_fn fn;
} harnesses[] = {
	{ "image", zfuzz_image_one },
	{ "sblog", zfuzz_sblog_one },
	{ "scenario", zfuzz_scenario_one },
	{ "devspec", zfuzz_devspec_one },
};

#define NR_HARNESSES (sizeof(harnesses) / sizeof(harnesses[0]))

static uint8_t *slurp(const char *path, size_t *len_ret)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_ge(len, 0);
	rewind(f);
	buf = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, len, f), (size_t)len);
	fclose(f);
	*len_ret = len;
	return buf;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every file of one harness's folder; returns how many. */
static unsigned int replay_dir(const char *name, replay_fn fn)
{
	char dir[256], path[512], msg[ZFUZZ_MSG_LEN];
	char *names[1024];
	unsigned int nr = 0, i;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", CORPUS_DIR, name);
	d = opendir(dir);
	ck_assert_msg(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		ck_assert_uint_lt(nr, 1024);
		names[nr] = strdup(e->d_name);
		ck_assert_ptr_nonnull(names[nr]);
		nr++;
	}
	closedir(d);
	qsort(names, nr, sizeof(names[0]), by_name);
	for (i = 0; i < nr; i++) {
		uint8_t *data;
		size_t len;
		int ret;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		data = slurp(path, &len);
		ret = fn(data, len, msg);
		ck_assert_msg(ret == 0, "repro: %s: %s (%d)", path,
			      ret > 0 ? msg : strerror(-ret), ret);
		free(data);
		free(names[i]);
	}
	return nr;
}

/* Loop test: one iteration per harness. */
START_TEST(test_corpus_replays_clean)
{
	ck_assert_uint_gt(replay_dir(harnesses[_i].name, harnesses[_i].fn),
			  0);
}
END_TEST

/* A saved zsim image in memory (malloc'd). */
static uint8_t *save_image(struct zdev *dev, size_t *len_ret)
{
	char path[] = "/tmp/zcow-corpus-XXXXXX";
	uint8_t *data;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(zsim_save(zsim_from_dev(dev), path), 0);
	data = slurp(path, len_ret);
	unlink(path);
	return data;
}

/* Every generated seed image passes the oracle as it is. */
START_TEST(test_image_seed_passes_oracle)
{
	char path[] = "/tmp/zcow-seed-XXXXXX", msg[ZFUZZ_MSG_LEN];
	uint8_t *data;
	size_t len;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(zfuzz_image_seed(_i, path), 0);
	data = slurp(path, &len);
	unlink(path);
	ck_assert_int_eq(zfuzz_image_one(data, len, msg), 0);
	free(data);
}
END_TEST

/* The image oracle is not vacuous: a file whose data is not the pattern
 * of its name (checksums all valid) is a wrong answer. */
START_TEST(test_image_oracle_flags_wrong_data)
{
	struct zsim_config cfg = { .nr_zones = 20, .zone_size = 4 << 20,
				   .zone_capacity = 1 << 20 };
	struct zcow_mkfs_opts mo = { .seed = 1 };
	struct zcow_mount_opts mount = { 0 };
	char msg[ZFUZZ_MSG_LEN];
	uint8_t buf[4096] = { 0 }, *data;
	struct zcow_file *f;
	struct zcow_fs *fs;
	struct zdev *dev;
	size_t len;

	buf[0] = zfuzz_pattern("a", 0);
	buf[1] = zfuzz_pattern("a", 1) ^ 1;	/* wrong from byte 1 */
	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, &mount, &fs), 0);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), 0), sizeof(buf));
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	data = save_image(dev, &len);
	ck_assert_int_eq(zdev_close(dev), 0);
	ck_assert_int_eq(zfuzz_image_one(data, len, msg), 1);
	ck_assert_str_eq(msg, "/a: wrong data at 1");
	free(data);
}
END_TEST

/* The image file's FNV-1a 64 trailer over everything before it. */
static void reseal(uint8_t *data, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len - 8; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	for (i = 0; i < 8; i++)
		data[len - 8 + i] = h >> (8 * i);
}

/* The trailer is resealed, so a mutated image reaches the loader and
 * the file system: a flipped data byte of /c is a read error (crc32c),
 * which the oracle takes as a right answer. */
START_TEST(test_image_corrupt_data_reads_as_error)
{
	char path[] = "/tmp/zcow-seed-XXXXXX", msg[ZFUZZ_MSG_LEN];
	struct zcow_mount_opts ro = { .read_only = true };
	uint8_t *data, want[64], *hit, buf[4096];
	struct zcow_file *f;
	struct zcow_fs *fs;
	struct zdev *dev;
	size_t len;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(zfuzz_image_seed(1, path), 0);
	data = slurp(path, &len);
	zfuzz_fill_pattern(want, "c", 0, sizeof(want));
	hit = memmem(data, len, want, sizeof(want));
	ck_assert_ptr_nonnull(hit);
	hit[10] ^= 0x40;
	ck_assert_int_eq(zfuzz_image_one(data, len, msg), 0);
	reseal(data, len);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	ck_assert_int_eq(zsim_load(path, &dev), 0);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_open(fs, "/c", O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_pread(f, buf, sizeof(buf), 0), -EIO);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zdev_close(dev), 0);
	free(data);
	unlink(path);
}
END_TEST

/* zsim_load() of @data (trailer resealed) from a temporary file. */
static int load_image(uint8_t *data, size_t len, struct zdev **dev_ret)
{
	char path[] = "/tmp/zcow-corpus-XXXXXX";
	int fd = mkstemp(path), ret;

	ck_assert_int_ge(fd, 0);
	reseal(data, len);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	ret = zsim_load(path, dev_ret);
	unlink(path);
	return ret;
}

/* Found by the image fuzzer: a 310-byte image whose header claims 754M
 * zones made the loader allocate 6 GiB and initialise every zone before
 * reading the first record (a timeout); 2^40 zones failed with -ENOMEM.
 * The zone count must fit in the file: -EUCLEAN before allocating. */
START_TEST(test_image_loader_refuses_zone_count_beyond_file)
{
	struct zdev *dev = NULL;
	uint8_t *data;
	size_t len;
	int i;

	data = slurp(CORPUS_DIR "/image/oom-header-claims-754m-zones", &len);
	ck_assert_int_eq(load_image(data, len, &dev), -EUCLEAN);
	for (i = 0; i < 8; i++)		/* nr_zones = 2^40 */
		data[16 + i] = i == 5;
	ck_assert_int_eq(load_image(data, len, &dev), -EUCLEAN);
	ck_assert_ptr_null(dev);
	free(data);
}
END_TEST

Suite *corpus_suite(void)
{
	Suite *s = suite_create("corpus");
	TCase *tc = tcase_create("replay");
	TCase *oc = tcase_create("oracle");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_corpus_replays_clean, 0, NR_HARNESSES);
	suite_add_tcase(s, tc);
	tcase_set_timeout(oc, 60);
	tcase_add_loop_test(oc, test_image_seed_passes_oracle, 0,
			    ZFUZZ_NR_IMAGE_SEEDS);
	tcase_add_test(oc, test_image_oracle_flags_wrong_data);
	tcase_add_test(oc, test_image_corrupt_data_reads_as_error);
	tcase_add_test(oc, test_image_loader_refuses_zone_count_beyond_file);
	suite_add_tcase(s, oc);
	return s;
}
