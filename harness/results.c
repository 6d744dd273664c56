// SPDX-License-Identifier: MIT
/*
 * zres: results folders, the build's revision, JSON and CSV text
 * (harness/results.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "results.h"

#ifndef ZCOW_VERSION
#define ZCOW_VERSION "0.1"
#endif
#ifndef ZCOW_GIT
#define ZCOW_GIT "unknown"
#endif

const char *zres_version(void)
{
	return ZCOW_VERSION;
}

const char *zres_git(void)
{
	return ZCOW_GIT;
}

int zres_make_dir_at(const char *parent, const char *name, time_t t,
		     char **dir_ret)
{
	char stamp[32], *dir;
	struct tm tm;
	size_t len = strlen(parent) + strlen(name) + 64;
	int n;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (mkdir(parent, 0777) && errno != EEXIST)
		return -errno;
	dir = malloc(len);
	if (!dir)
		return -ENOMEM;
	for (n = 1; n < 10000; n++) {
		if (n == 1)
			snprintf(dir, len, "%s/%s-%s", parent, stamp, name);
		else
			snprintf(dir, len, "%s/%s-%s-%d", parent, stamp, name,
				 n);
		if (!mkdir(dir, 0777)) {
			*dir_ret = dir;
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	n = -errno;
	free(dir);
	return n ? n : -EEXIST;
}

int zres_make_dir(const char *parent, const char *name, char **dir_ret)
{
	return zres_make_dir_at(parent, name, time(NULL), dir_ret);
}

FILE *zres_open(const char *dir, const char *file)
{
	size_t len = strlen(dir) + strlen(file) + 2;
	char *path = malloc(len);
	FILE *f;
	int err;

	if (!path) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(path, len, "%s/%s", dir, file);
	f = fopen(path, "w");
	err = errno;
	free(path);
	errno = err;
	return f;
}

int zres_copy_config(const char *dir, const char *src)
{
	const char *base = strrchr(src, '/');
	char chunk[4096];
	FILE *in, *out;
	size_t n;
	int ret = 0;

	in = fopen(src, "r");
	if (!in)
		return -errno;
	out = zres_open(dir, base ? base + 1 : src);
	if (!out) {
		ret = -errno;
		fclose(in);
		return ret;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		if (fwrite(chunk, 1, n, out) != n) {
			ret = -EIO;
			break;
		}
	if (ferror(in))
		ret = -EIO;
	fclose(in);
	if (fclose(out) && !ret)
		ret = -EIO;
	return ret;
}

/* The one rule for control characters, JSON and CSV alike. */
static void put_ctl(FILE *f, unsigned char c)
{
	fprintf(f, "\\u%04x", c);
}

void zres_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			put_ctl(f, c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void zres_csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"')
			fputs("\"\"", f);
		else if (c < 0x20)
			put_ctl(f, c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
