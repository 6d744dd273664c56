/* SPDX-License-Identifier: MIT */
/*
 * zres: results folders and the files in them, for `zcow run`
 * (harness/run.c) and `zcow crash` (harness/crash.c).
 *
 * A results folder is PARENT/<UTC stamp>-<name>/ (stamp YYYYmmddTHHMMSSZ);
 * a second folder of the same name in the same second gets "-2", "-3",
 * ...: mkdir decides (EEXIST), so two processes never share a folder and
 * nothing is overwritten.  Every folder records the zcow version and the
 * git revision of the build (`git describe --always --dirty`, passed by
 * the Makefile).
 *
 * JSON and CSV are written with fprintf and one escaping rule for text:
 * '"' and '\' are backslash-escaped (JSON) or '"' doubled (CSV), and
 * every control character below 0x20 is written as \u00XX, never dropped.
 * No JSON library (jansson and json-c were considered): the files are
 * written as a stream in a fixed field order with fixed number formats
 * (%.3f, %.9f, integers), which the readers (the harness's Python
 * scripts, the tests' byte-for-byte comparisons of summary.json) rely
 * on; a library prints doubles its own way (%.17g) and would change the
 * text of every figure, and would be one more library for the static
 * build (make static).  What the writer needed from one is the string
 * escaping: zres_json_str().
 *
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_RESULTS_H
#define ZCOW_RESULTS_H

#include <stdio.h>
#include <time.h>

/* The zcow version and the git revision of this build ("unknown" when it
 * was built outside a git checkout). */
const char *zres_version(void);
const char *zres_git(void);

/*
 * Create PARENT/<stamp>-<name> (PARENT too, one level) for time @t, or
 * with "-N" (N = 2, 3, ...) when that folder exists.  On success
 * *dir_ret is the folder (malloc'd).  Returns 0 or -errno.
 * zres_make_dir() is zres_make_dir_at() at the current time.
 */
int zres_make_dir(const char *parent, const char *name, char **dir_ret);
int zres_make_dir_at(const char *parent, const char *name, time_t t,
		     char **dir_ret);

/* Open DIR/FILE for writing; NULL with errno set. */
FILE *zres_open(const char *dir, const char *file);

/* Copy the file @src into DIR under its own base name (the scenario as
 * it was read).  Returns 0 or -errno. */
int zres_copy_config(const char *dir, const char *src);

/* @s as a JSON string, quotes included (the escaping rule above). */
void zres_json_str(FILE *f, const char *s);
/* @s as a quoted CSV field (RFC 4180: '"' doubled; control characters
 * as \u00XX, so a field never spans lines). */
void zres_csv_str(FILE *f, const char *s);

#endif /* ZCOW_RESULTS_H */
