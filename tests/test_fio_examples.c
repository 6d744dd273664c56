// SPDX-License-Identifier: MIT
/*
 * fio's own example job files (Debian's fio-examples package, in
 * /usr/share/doc/fio/examples), unchanged, through `zcow run FILE --set
 * runtime=100ms` (configs/fio-examples/NAME.scenario instead when there is
 * one, to give the example its device).  configs/README.md's table
 * "fio's examples" says what each does: runs, is refused with an exact
 * message, or runs but is not run here (minutes of set-up).  The test
 * holds zcow to that table both ways: an example that starts to run, or
 * stops, or is refused for another reason, fails it.  ZCOW_EXAMPLES_ALL=1
 * (make examples-all) runs the long ones too.  The examples get
 * the environment variables they take credentials and paths from (env[]
 * below, as the table says).
 */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define EXAMPLES	"/usr/share/doc/fio/examples"
#define README		"configs/README.md"
#define TABLE		"## fio's examples"	/* its section */
#define MAX_EXAMPLES	256
/* per process: a test run beside another one (make examples-all) must
 * not have its results removed under it */
#define RES_DIR_FMT	"/tmp/zcow-test-fio-examples.%d"

/*
 * The examples that run (those marked "runs" in the table, whether run
 * here or not): changing what runs changes this and the table together.
 */
#define NR_RUN		69u

enum outcome {
	RUNS,
	REFUSED,
	RUNS_NOT_RUN,		/* runs; not run here (minutes of set-up) */
	REFUSED_NOT_RUN,	/* refused after minutes of set-up */
	RUNS_FAILS,		/* runs, and fails as fio does on a correct
				 * device (the example's purpose) */
};

struct example {
	char name[128];
	enum outcome outcome;
	char msg[512];		/* REFUSED, RUNS_FAILS: zcow run's message */
};

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	long len;
	char *buf;

	ck_assert_msg(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

/*
 * The table's rows: "| `NAME.fio` | runs |", "| `NAME.fio` | refused:
 * `MESSAGE` |", or, for the examples whose set-up takes minutes,
 * "| `NAME.fio` | runs, not run here: REASON |" and "| `NAME.fio` |
 * refused, not run here: REASON |".
 */
static unsigned int read_table(struct example *ex, unsigned int max)
{
	char *doc = slurp_file(README), *line, *save = NULL;
	unsigned int n = 0;

	bool in_table = false;

	for (line = strtok_r(doc, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name, *end, *what;

		if (line[0] == '#')	/* the table's section only */
			in_table = !strcmp(line, TABLE);
		if (!in_table || strncmp(line, "| `", 3) ||
		    !strstr(line, ".fio` | "))
			continue;
		name = line + 3;
		end = strstr(name, "` | ");
		what = end + 4;
		ck_assert_uint_lt(n, max);
		snprintf(ex[n].name, sizeof(ex[n].name), "%.*s",
			 (int)(end - name), name);
		if (!strcmp(what, "runs |")) {
			ex[n].outcome = RUNS;
		} else if (!strncmp(what, "refused: `", 10)) {
			char *m = what + 10, *q = strstr(m, "` |");

			ck_assert_msg(q, "README row '%s': no closing quote",
				      line);
			ex[n].outcome = REFUSED;
			snprintf(ex[n].msg, sizeof(ex[n].msg), "%.*s",
				 (int)(q - m), m);
		} else if (!strncmp(what, "runs, fails as fio does: `", 26)) {
			char *m = what + 26, *q = strstr(m, "` |");

			ck_assert_msg(q, "README row '%s': no closing quote",
				      line);
			ex[n].outcome = RUNS_FAILS;
			snprintf(ex[n].msg, sizeof(ex[n].msg), "%.*s",
				 (int)(q - m), m);
		} else if (!strncmp(what, "runs, not run here: ", 20)) {
			ex[n].outcome = RUNS_NOT_RUN;
		} else {
			char *m = strchr(what, '`'), *q;

			ck_assert_msg(!strncmp(what, "refused, not run here: ",
					       23) && m && (q = strstr(m, "` |")),
				      "README row '%s': unknown outcome", line);
			ex[n].outcome = REFUSED_NOT_RUN;
			snprintf(ex[n].msg, sizeof(ex[n].msg), "%.*s",
				 (int)(q - m - 1), m + 1);
		}
		n++;
	}
	free(doc);
	return n;
}

static const struct example *find(const struct example *ex, unsigned int n,
				  const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(ex[i].name, name))
			return &ex[i];
	return NULL;
}

/* @s without every EXAMPLES "/" (messages name the file as given). */
static void strip_dir(char *s)
{
	const char *dir = EXAMPLES "/";
	char *p;

	while ((p = strstr(s, dir)))
		memmove(p, p + strlen(dir), strlen(p + strlen(dir)) + 1);
}

static int is_fio(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return len > 4 && !strcmp(d->d_name + len - 4, ".fio");
}

/* What configs/README.md says the examples are run with. */
static const char *const env[][2] = {
	{ "S3_KEY", "key" }, { "S3_ID", "id" }, { "SSE_KEY", "sse" },
	{ "STORAGE_CLASS", "STANDARD" }, { "SWIFT_id", "token" },
	{ "FIO_DIR", "/gds" }, { "GPU_DEV_IDS", "0" }, { "POOL", "pool" },
	{ "CONT", "cont" },
};

START_TEST(test_fio_examples_run_or_are_refused_as_listed)
{
	static struct example ex[MAX_EXAMPLES];
	unsigned int nr = read_table(ex, MAX_EXAMPLES), i, nr_runs = 0;
	struct dirent **files;
	int nr_files = scandir(EXAMPLES, &files, is_fio, alphasort), k;
	/* ZCOW_EXAMPLES_ALL=1 (make examples-all): the long ones too */
	bool is_all = getenv("ZCOW_EXAMPLES_ALL") != NULL;
	char res[64], cmd[96];

	snprintf(res, sizeof(res), RES_DIR_FMT, (int)getpid());
	ck_assert_msg(nr_files > 0, "no %s/*.fio: install fio-examples",
		      EXAMPLES);
	/* The variables the examples take their credentials and paths
	 * from (fio substitutes ${VAR}); xnvme's optional overrides
	 * (FIO_RW, FIO_BS, FIO_IODEPTH) stay unset, as the table says. */
	for (k = 0; k < (int)(sizeof(env) / sizeof(env[0])); k++)
		ck_assert_int_eq(setenv(env[k][0], env[k][1], 1), 0);
	unsetenv("FIO_RW");
	unsetenv("FIO_BS");
	unsetenv("FIO_IODEPTH");
	/* Every example is in the table, and nothing else. */
	ck_assert_uint_eq(nr, (unsigned int)nr_files);
	for (k = 0; k < nr_files; k++) {
		const struct example *e = find(ex, nr, files[k]->d_name);
		char path[sizeof(EXAMPLES) + sizeof(e->name)];
		char scen[sizeof(e->name) + 64], *out = NULL, *err = NULL;
		const char *arg = path;
		int status;

		ck_assert_msg(e, "%s is not in %s", files[k]->d_name, README);
		if (!is_all && (e->outcome == RUNS_NOT_RUN ||
				e->outcome == REFUSED_NOT_RUN)) {
			free(files[k]);
			continue;
		}
		snprintf(path, sizeof(path), EXAMPLES "/%.127s", e->name);
		snprintf(scen, sizeof(scen), "configs/fio-examples/%.*s"
			 ".scenario", (int)(strlen(e->name) - 4), e->name);
		if (access(scen, R_OK) == 0)
			arg = scen;
		status = zcow_test_run(&out, &err, "run", arg, "--set",
				       "runtime=100ms", "--results", res, NULL);
		strip_dir(err);
		/* Images of the file: devices (configs/fio-examples) */
		ck_assert_int_eq(system("rm -f /tmp/zcow-example-*.img"), 0);
		if (e->outcome == RUNS || e->outcome == RUNS_NOT_RUN) {
			ck_assert_msg(status == 0 && !err[0],
				      "%s: exit %d, '%s'", e->name, status, err);
			if (e->outcome == RUNS)
				nr_runs++;
		} else if (e->outcome == REFUSED_NOT_RUN) {
			ck_assert_msg(status != 0 && strstr(err, e->msg),
				      "%s: exit %d, '%s', want '%s'", e->name,
				      status, err, e->msg);
		} else {
			nr_runs += e->outcome == RUNS_FAILS;
			char want[600];

			snprintf(want, sizeof(want), "zcow run: %s\n", e->msg);
			ck_assert_msg(status != 0 && !strcmp(err, want),
				      "%s: exit %d, '%s', want '%s'", e->name,
				      status, err, want);
		}
		free(out);
		free(err);
		free(files[k]);
	}
	free(files);
	for (i = 0; i < nr; i++)
		if (ex[i].outcome == RUNS_NOT_RUN)
			nr_runs++;
	ck_assert_uint_eq(nr_runs, NR_RUN);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", res);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *fio_examples_suite(void)
{
	Suite *s = suite_create("fio_examples_suite");
	TCase *tc = tcase_create("examples");

	/* all: each long example lays out up to 16 GiB (about a minute) */
	tcase_set_timeout(tc, getenv("ZCOW_EXAMPLES_ALL") ? 3600 : 300);
	tcase_add_test(tc, test_fio_examples_run_or_are_refused_as_listed);
	suite_add_tcase(s, tc);
	return s;
}
