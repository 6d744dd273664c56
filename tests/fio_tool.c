// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the suites of the fio job parser (harness/fio.h) and
 * the runner (harness/run.h): parse a job file's text as "t.fio" and
 * require that it parses, or that it is refused with a given message; run
 * a job file's text in this process, its stderr captured.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fio.h"
#include "run.h"
#include "tests.h"

struct zfio_spec *zcow_test_parse_ok(const char *text)
{
	struct zfio_spec *spec = NULL;
	char err[ZFIO_ERR_LEN];
	int ret = zfio_parse_text("t.fio", text, NULL, 0, &spec, err,
				  sizeof(err));

	ck_assert_msg(ret == 0, "parse failed: %s", err);
	return spec;
}

/* The message of @text's refusal (-EINVAL) in @err. */
static void parse_refused(const char *text, char *err, size_t len)
{
	struct zfio_spec *spec = NULL;
	int ret = zfio_parse_text("t.fio", text, NULL, 0, &spec, err, len);

	ck_assert_msg(ret == -EINVAL, "'%s' parsed (%d)", text, ret);
}

void zcow_test_parse_err(const char *text, const char *want)
{
	char err[ZFIO_ERR_LEN];

	parse_refused(text, err, sizeof(err));
	ck_assert_str_eq(err, want);
}

void zcow_test_parse_err_has(const char *text, const char *want)
{
	char err[ZFIO_ERR_LEN];

	parse_refused(text, err, sizeof(err));
	ck_assert_msg(strstr(err, want), "error '%s' lacks '%s'", err, want);
}

int zcow_test_scenario(const char *path, const char *text,
		       const char *const *sets, unsigned int nr,
		       const char *res, char **dir_ret, char **err_ret)
{
	char err_path[1024];
	FILE *f = fopen(path, "w");
	int saved, fd, ret;

	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	snprintf(err_path, sizeof(err_path), "%s.err", path);
	fflush(stderr);
	saved = dup(2);
	fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	*dir_ret = NULL;
	ret = zrun_scenario(path, sets, nr, res, true, dir_ret);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*err_ret = zcow_test_read_path(err_path);
	unlink(err_path);
	unlink(path);
	return ret;
}
