// SPDX-License-Identifier: MIT
/*
 * The recorded-operations format (docs/ops-format.md): the percent-
 * encoding, every line kind byte for byte, and the recorder's file
 * (header, handle numbers, lines on disk at an fsync).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_record.h"
#include "tests.h"

/* @op's line must be exactly @want. */
static void assert_line(const struct ops_op *op, const char *want)
{
	char *line = NULL;
	int64_t n = ops_encode(op, &line);

	ck_assert_msg(n >= 0, "encode %s: %d", ops_kind_name(op->kind),
		      (int)n);
	ck_assert_str_eq(line, want);
	ck_assert_int_eq(n, (int64_t)strlen(want));
	free(line);
}

START_TEST(test_ops_percent_encodes_controls_space_percent_and_high_bytes)
{
	char out[64];

	ck_assert_int_eq(ops_percent_encode(out, sizeof(out), "/a b%c"), 10);
	ck_assert_str_eq(out, "/a%20b%25c");
	ck_assert_int_eq(ops_percent_encode(out, sizeof(out),
					    "\x01\t\n\x7f\xc3\xa9~!"),
			 20);
	ck_assert_str_eq(out, "%01%09%0A%7F%C3%A9~!");
	/* printable ASCII other than '%' passes unchanged */
	ops_percent_encode(out, sizeof(out), "/x-_.=+,:;'\"()[]{}<>?*&^$#@");
	ck_assert_str_eq(out, "/x-_.=+,:;'\"()[]{}<>?*&^$#@");
	/* too small a buffer: the full length, a terminated prefix */
	ck_assert_int_eq(ops_percent_encode(out, 4, "% %"), 9);
	ck_assert_str_eq(out, "%25");
}
END_TEST

START_TEST(test_ops_encode_each_line_kind_exactly)
{
	static const uint8_t xv[] = { 0x00, 0xab, 0x7f };

	assert_line(&(struct ops_op){ .kind = OPS_MKDIR, .path = "/d",
				      .mode = 040755, .uid = 1000,
				      .gid = 100 },
		    "mkdir /d 0755 1000 100\n");
	assert_line(&(struct ops_op){ .kind = OPS_CREATE, .fh = 3,
				      .path = "/d/f 1", .mode = 0600,
				      .flags = O_CREAT | O_EXCL | O_RDWR,
				      .uid = 0, .gid = 0 },
		    "create 3 /d/f%201 0600 194 0 0\n");
	assert_line(&(struct ops_op){ .kind = OPS_OPEN, .fh = 1,
				      .path = "/f",
				      .flags = O_WRONLY | O_APPEND },
		    "open 1 /f 1025\n");
	assert_line(&(struct ops_op){ .kind = OPS_CLOSE, .fh = 12 },
		    "close 12\n");
	assert_line(&(struct ops_op){ .kind = OPS_WRITE, .fh = 2,
				      .off = 8192, .len = 4096,
				      .crc = 0xe3069283 },
		    "write 2 8192 4096 e3069283\n");
	assert_line(&(struct ops_op){ .kind = OPS_WRITE, .fh = 2, .off = 0,
				      .len = 1, .crc = 0x1f },
		    "write 2 0 1 0000001f\n");
	assert_line(&(struct ops_op){ .kind = OPS_TRUNCATE, .path = "/f",
				      .size = 12345678901ULL },
		    "truncate /f 12345678901\n");
	assert_line(&(struct ops_op){ .kind = OPS_FSYNC, .fh = 1 },
		    "fsync 1 0\n");
	assert_line(&(struct ops_op){ .kind = OPS_FSYNC, .fh = 1,
				      .datasync = true },
		    "fsync 1 1\n");
	assert_line(&(struct ops_op){ .kind = OPS_FSYNCDIR, .path = "/" },
		    "fsyncdir /\n");
	assert_line(&(struct ops_op){ .kind = OPS_UNLINK, .path = "/%" },
		    "unlink /%25\n");
	assert_line(&(struct ops_op){ .kind = OPS_RMDIR, .path = "/d" },
		    "rmdir /d\n");
	assert_line(&(struct ops_op){ .kind = OPS_RENAME, .path = "/a",
				      .to = "/b c", .flags = 2 },
		    "rename /a /b%20c 2\n");
	assert_line(&(struct ops_op){ .kind = OPS_LINK, .path = "/a",
				      .to = "/b" },
		    "link /a /b\n");
	assert_line(&(struct ops_op){ .kind = OPS_SYMLINK, .to = "../t x",
				      .path = "/l", .uid = 5, .gid = 6 },
		    "symlink ../t%20x /l 5 6\n");
	assert_line(&(struct ops_op){ .kind = OPS_CHMOD, .path = "/f",
				      .mode = 0100644 | 04000 },
		    "chmod /f 4644\n");
	assert_line(&(struct ops_op){ .kind = OPS_CHOWN, .path = "/f",
				      .uid = OPS_ID_UNCHANGED, .gid = 7 },
		    "chown /f 4294967295 7\n");
	assert_line(&(struct ops_op){ .kind = OPS_UTIMENS, .path = "/f",
				      .asec = 1700000000, .ansec = 1073741823,
				      .msec = -1, .mnsec = 999999999 },
		    "utimens /f 1700000000 1073741823 -1 999999999\n");
	assert_line(&(struct ops_op){ .kind = OPS_SETXATTR, .path = "/f",
				      .name = "user.a b", .flags = 1,
				      .value = xv, .value_len = 3 },
		    "setxattr /f user.a%20b 1 00ab7f\n");
	assert_line(&(struct ops_op){ .kind = OPS_SETXATTR, .path = "/f",
				      .name = "user.e", .value = "",
				      .value_len = 0 },
		    "setxattr /f user.e 0 -\n");
	assert_line(&(struct ops_op){ .kind = OPS_REMOVEXATTR, .path = "/f",
				      .name = "user.e" },
		    "removexattr /f user.e\n");
	assert_line(&(struct ops_op){ .kind = OPS_FALLOCATE, .fh = 4,
				      .mode = 3, .off = 4096, .len = 65536 },
		    "fallocate 4 3 4096 65536\n");
	assert_line(&(struct ops_op){ .kind = OPS_SYNC }, "sync\n");
}
END_TEST

START_TEST(test_ops_encode_refuses_missing_names_and_bad_kinds)
{
	char *line = (char *)"x";

	ck_assert_int_eq(ops_encode(&(struct ops_op){ .kind = OPS_UNLINK },
				    &line),
			 -EINVAL);
	ck_assert_ptr_null(line);
	line = (char *)"x";
	ck_assert_int_eq(ops_encode(&(struct ops_op){ .kind = OPS_RENAME,
						      .path = "/a",
						      .to = "" },
				    &line),
			 -EINVAL);
	ck_assert_ptr_null(line);
	line = (char *)"x";
	ck_assert_int_eq(ops_encode(&(struct ops_op){ .kind = OPS_NR_KINDS },
				    &line),
			 -EINVAL);
	ck_assert_ptr_null(line);
	ck_assert_ptr_null(ops_kind_name(OPS_NR_KINDS));
	ck_assert_str_eq(ops_kind_name(OPS_REMOVEXATTR), "removexattr");
}
END_TEST

/* The whole file at @path. */
static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 4096);
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(test_ops_recorder_writes_header_lines_and_syncs_at_fsync)
{
	char path[] = "/tmp/zcow-ops-XXXXXX";
	struct ops_rec *rec;
	uint64_t a, b, c;
	char *text;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(ops_rec_open(path, &rec), 0);
	text = read_all(path);
	ck_assert_str_eq(text, "zcow-ops 1\n");
	free(text);

	ops_rec_lock(rec);
	a = ops_rec_fh_get_locked(rec);
	b = ops_rec_fh_get_locked(rec);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 2);
	ck_assert_int_eq(ops_rec_add_locked(rec, &(struct ops_op){
		.kind = OPS_CREATE, .fh = a, .path = "/f", .mode = 0644,
		.flags = O_CREAT | O_RDWR }), 0);
	ck_assert_int_eq(ops_rec_add_locked(rec, &(struct ops_op){
		.kind = OPS_FSYNC, .fh = a }), 0);
	ops_rec_unlock(rec);
	/* on disk at the fsync, before the close */
	text = read_all(path);
	ck_assert_str_eq(text, "zcow-ops 1\ncreate 1 /f 0644 66 0 0\n"
			       "fsync 1 0\n");
	free(text);

	ops_rec_lock(rec);
	/* a number is reused only after its close */
	ops_rec_fh_put_locked(rec, a);
	c = ops_rec_fh_get_locked(rec);
	ck_assert_uint_eq(c, 1);
	ck_assert_uint_eq(ops_rec_fh_get_locked(rec), 3);
	/* a line that cannot be encoded stops the recording */
	ck_assert_int_eq(ops_rec_add_locked(rec, &(struct ops_op){
		.kind = OPS_UNLINK }), -EINVAL);
	ck_assert_int_eq(ops_rec_add_locked(rec, &(struct ops_op){
		.kind = OPS_SYNC }), -EINVAL);
	ops_rec_unlock(rec);
	ck_assert_int_eq(ops_rec_error(rec), -EINVAL);
	ck_assert_int_eq(ops_rec_close(rec), -EINVAL);
	text = read_all(path);
	ck_assert_str_eq(text, "zcow-ops 1\ncreate 1 /f 0644 66 0 0\n"
			       "fsync 1 0\n");
	free(text);
	unlink(path);
}
END_TEST

START_TEST(test_ops_recorder_open_fails_with_errno)
{
	struct ops_rec *rec = (struct ops_rec *)1;

	ck_assert_int_eq(ops_rec_open("/nonexistent-dir/x", &rec), -ENOENT);
	ck_assert_ptr_null(rec);
}
END_TEST

Suite *ops_record_suite(void)
{
	Suite *s = suite_create("ops_record_suite");
	TCase *tc = tcase_create("encode");

	tcase_add_test(tc,
		       test_ops_percent_encodes_controls_space_percent_and_high_bytes);
	tcase_add_test(tc, test_ops_encode_each_line_kind_exactly);
	tcase_add_test(tc, test_ops_encode_refuses_missing_names_and_bad_kinds);
	tcase_add_test(tc,
		       test_ops_recorder_writes_header_lines_and_syncs_at_fsync);
	tcase_add_test(tc, test_ops_recorder_open_fails_with_errno);
	suite_add_tcase(s, tc);
	return s;
}
