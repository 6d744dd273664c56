// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the suites of the fio job parser (harness/fio.h):
 * parse a job file's text as "t.fio" and require that it parses, or that
 * it is refused with a given message.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "fio.h"
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
