// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the suites: running the zcow tool (the binary named
 * by $ZCOW_BIN, set by `make test`) in a child process with its stdout,
 * stderr and exit status returned to the test; writing a file through the
 * API and checking that it reads back exactly.
 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "zcow.h"

#define MAX_ARGS 16

const char *zcow_test_bin(void)
{
	const char *bin = getenv("ZCOW_BIN");

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set: run through `make "
				   "test` or set it to the zcow binary");
	ck_assert_msg(access(bin, X_OK) == 0, "ZCOW_BIN=%s is not executable",
		      bin);
	return bin;
}

/* The whole of @fd (a temporary file) as a string; closes @fd. */
static char *slurp(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf;

	ck_assert_int_ge(len, 0);
	buf = calloc(1, (size_t)len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	return buf;
}

int zcow_test_runv(char **out_ret, char **err_ret, const char *arg, va_list ap)
{
	const char *argv[MAX_ARGS + 1];
	char out_path[] = "/tmp/zcow-test-out-XXXXXX";
	char err_path[] = "/tmp/zcow-test-err-XXXXXX";
	int out_fd, err_fd, st, argc = 0;
	char *out, *err;
	pid_t pid;

	argv[argc++] = zcow_test_bin();
	for (; arg; arg = va_arg(ap, const char *)) {
		ck_assert_msg(argc < MAX_ARGS, "more than %d arguments",
			      MAX_ARGS - 1);
		argv[argc++] = arg;
	}
	argv[argc] = NULL;
	out_fd = mkstemp(out_path);
	err_fd = mkstemp(err_path);
	ck_assert_int_ge(out_fd, 0);
	ck_assert_int_ge(err_fd, 0);
	unlink(out_path);
	unlink(err_path);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out_fd, 1);
		dup2(err_fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	out = slurp(out_fd);
	err = slurp(err_fd);
	if (out_ret)
		*out_ret = out;
	else
		free(out);
	if (err_ret)
		*err_ret = err;
	else
		free(err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int zcow_test_run(char **out_ret, char **err_ret, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = zcow_test_runv(out_ret, err_ret, arg, ap);
	va_end(ap);
	return ret;
}

void zcow_test_run_into(struct zcow_test_res *res, const char *arg,
			va_list ap)
{
	char *out, *err;

	res->status = zcow_test_runv(&out, &err, arg, ap);
	snprintf(res->out, sizeof(res->out), "%s", out);
	snprintf(res->err, sizeof(res->err), "%s", err);
	free(out);
	free(err);
}

void zcow_test_run_res(struct zcow_test_res *res, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	zcow_test_run_into(res, arg, ap);
	va_end(ap);
}

void zcow_test_put(struct zcow_fs *fs, const char *path, const void *buf,
		   uint64_t len)
{
	struct zcow_file *f;

	ck_assert_int_eq(zcow_open(fs, path, O_CREAT | O_TRUNC | O_RDWR, &f),
			 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, len, 0), (int64_t)len);
	ck_assert_int_eq(zcow_close(f), 0);
}

void zcow_test_fill(uint8_t *buf, uint64_t size, int seed)
{
	uint64_t b, s = (uint64_t)seed;

	for (b = 0; b < size; b++)
		buf[b] = (uint8_t)((b * 131 + s * 17) ^ (b >> 11) ^ s);
}

void zcow_test_files(struct zcow_fs *fs, int first, int n, uint64_t size,
		     bool is_put)
{
	uint8_t *buf = malloc(size);
	char name[32];
	int i;

	ck_assert_ptr_nonnull(buf);
	for (i = first; i < first + n; i++) {
		zcow_test_fill(buf, size, i);
		snprintf(name, sizeof(name), "/f%d", i);
		if (is_put)
			zcow_test_put(fs, name, buf, size);
		else
			zcow_test_expect(fs, name, buf, size);
	}
	free(buf);
}

void zcow_test_expect(struct zcow_fs *fs, const char *path, const void *want,
		      uint64_t len)
{
	struct zcow_file *f;
	struct zcow_stat st;
	uint8_t *got = malloc(len + 1);

	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(zcow_open(fs, path, O_RDONLY, &f), 0);
	ck_assert_int_eq(zcow_fstat(f, &st), 0);
	ck_assert_uint_eq(st.size, len);
	ck_assert_int_eq(zcow_pread(f, got, len + 1, 0), (int64_t)len);
	ck_assert_msg(!memcmp(got, want, len), "%s: contents differ", path);
	ck_assert_int_eq(zcow_close(f), 0);
	free(got);
}

char *zcow_test_read_all(FILE *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	ck_assert_ptr_nonnull(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	return buf;
}

char *zcow_test_read_path(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	buf = zcow_test_read_all(f);
	fclose(f);
	return buf;
}

char *zcow_test_capture(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	char *buf;
	int st;

	ck_assert_msg(p != NULL, "cannot run %s", cmd);
	buf = zcow_test_read_all(p);
	st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}
