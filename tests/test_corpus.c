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

#include "fuzz.h"
#include "tests.h"

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

Suite *corpus_suite(void)
{
	Suite *s = suite_create("corpus");
	TCase *tc = tcase_create("replay");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_corpus_replays_clean, 0, NR_HARNESSES);
	suite_add_tcase(s, tc);
	return s;
}
