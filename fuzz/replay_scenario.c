// SPDX-License-Identifier: MIT
/*
 * fuzz: the scenario harness: harness/fio.c and the [zcow] settings of
 * harness/run.c on arbitrary text.
 *
 * The input is the text of a scenario (or fio job file), named
 * "configs/fuzz.scenario" so that `include NAME` finds the files of
 * configs/ when run from the repository root.  Inputs that include an
 * absolute path or a path with ".." are skipped: the harness reads only
 * the repository's configs.  The text is parsed, every [zcow] key applied
 * as zrun_scenario() does, every job printed; nothing is run.
 *
 * Oracle: a refused input comes with a message (configs name the file,
 * line and option).
 */
#include "fuzz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"
#include "run.h"

#define SCENARIO_NAME "configs/fuzz.scenario"

/* true when some line includes a path outside configs/. */
static bool is_unsafe(const char *text)
{
	const char *p = text;

	while ((p = strstr(p, "include"))) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (memchr(p, '/', n) || memmem(p, n, "..", 2))
			return true;
		p += 7;
	}
	return false;
}

static FILE *null_out(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

int zfuzz_scenario_one(const uint8_t *data, size_t size, char *msg)
{
	struct zrun_settings set;
	struct zfio_spec *spec = NULL;
	char err[ZFIO_ERR_LEN];
	char *text;
	unsigned int i;
	int ret, failed = 0;

	msg[0] = '\0';
	zfuzz_init();
	text = malloc(size + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, data, size);
	text[size] = '\0';
	if (is_unsafe(text))
		goto out;
	ret = zfio_parse_text(SCENARIO_NAME, text, NULL, 0, &spec, err,
			      sizeof(err));
	if (ret) {
		if (!err[0]) {
			snprintf(msg, ZFUZZ_MSG_LEN,
				 "zfio_parse_text refused the input (%d) "
				 "without a message", ret);
			failed = 1;
		}
		goto out;
	}
	zrun_settings_default(&set);
	for (i = 0; i < spec->nr_zcow; i++) {
		err[0] = '\0';
		ret = zrun_settings_apply(&set, &spec->zcow[i], err,
					  sizeof(err));
		if (ret && ret != -ENOENT && !err[0]) {
			snprintf(msg, ZFUZZ_MSG_LEN,
				 "zrun_settings_apply refused '%s' (%d) "
				 "without a message", spec->zcow[i].key, ret);
			failed = 1;
			goto out;
		}
	}
	for (i = 0; i < spec->nr_jobs && null_out(); i++)
		zfio_print_job(null_out(), &spec->jobs[i]);
out:
	zfio_free(spec);
	free(text);
	return failed;
}
