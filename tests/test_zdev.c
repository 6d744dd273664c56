// SPDX-License-Identifier: MIT
/*
 * The checked zdev_*() wrappers and the spec helpers, against a tiny fake
 * backend defined here (no simulator): the wrappers must refuse what the
 * kernel refuses before the backend sees it, count per class and op, and
 * feed the trace hook.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "zdev.h"

#define FAKE_ZONE     (1u << 20)
#define FAKE_NR_ZONES 4
#define FAKE_LBA      4096

/* The fake backend: a flat buffer, counts the calls that reach it. */
struct fake {
	char data[FAKE_ZONE * FAKE_NR_ZONES];
	unsigned int nr_calls;
	int next_result;    /* returned by the next data command */
	uint64_t append_at; /* where an append lands */
};

static struct fake *fake_of(struct zdev *dev)
{
	return dev->priv;
}

static int fake_report(struct zdev *dev, uint64_t from, struct zdev_zone *zones,
		       unsigned int *nr_ret)
{
	uint64_t no = from / FAKE_ZONE;
	unsigned int i;

	fake_of(dev)->nr_calls++;
	for (i = 0; i < *nr_ret && no < FAKE_NR_ZONES; i++, no++) {
		zones[i].start = no * FAKE_ZONE;
		zones[i].len = FAKE_ZONE;
		zones[i].capacity = FAKE_ZONE;
		zones[i].wp = zones[i].start;
		zones[i].type = ZDEV_ZONE_SEQ_REQ;
		zones[i].cond = ZDEV_COND_EMPTY;
	}
	*nr_ret = i;
	return 0;
}

static int fake_read(struct zdev *dev, void *buf, uint64_t len, uint64_t off,
		     enum zdev_class cls)
{
	(void)cls;
	fake_of(dev)->nr_calls++;
	memcpy(buf, fake_of(dev)->data + off, len);
	return fake_of(dev)->next_result;
}

static int fake_write(struct zdev *dev, const void *buf, uint64_t len,
		      uint64_t off, unsigned int flags, enum zdev_class cls)
{
	(void)cls;
	(void)flags;
	fake_of(dev)->nr_calls++;
	memcpy(fake_of(dev)->data + off, buf, len);
	return fake_of(dev)->next_result;
}

static int fake_append(struct zdev *dev, const void *buf, uint64_t len,
		       uint64_t zone, unsigned int flags, enum zdev_class cls,
		       uint64_t *off_ret)
{
	(void)buf;
	(void)len;
	(void)zone;
	(void)flags;
	(void)cls;
	fake_of(dev)->nr_calls++;
	*off_ret = fake_of(dev)->append_at;
	return fake_of(dev)->next_result;
}

static int fake_zone_mgmt(struct zdev *dev, enum zdev_zone_action action,
			  uint64_t start, uint64_t len, enum zdev_class cls)
{
	(void)action;
	(void)start;
	(void)len;
	(void)cls;
	fake_of(dev)->nr_calls++;
	return 0;
}

static int fake_flush(struct zdev *dev)
{
	fake_of(dev)->nr_calls++;
	return 0;
}

static int fake_close(struct zdev *dev)
{
	free(dev->priv);
	return 0;
}

static const struct zdev_ops fake_ops = {
	.report = fake_report,
	.read = fake_read,
	.write = fake_write,
	.append = fake_append,
	.zone_mgmt = fake_zone_mgmt,
	.flush = fake_flush,
	.close = fake_close,
};

static struct zdev *fake_open(void)
{
	struct zdev_info info = {
		.zone_size = FAKE_ZONE,
		.zone_capacity = FAKE_ZONE,
		.nr_zones = FAKE_NR_ZONES,
		.size = (uint64_t)FAKE_ZONE * FAKE_NR_ZONES,
		.max_append = 64 * 1024,
		.lba_size = FAKE_LBA,
		.is_zoned = true,
	};
	struct fake *f = calloc(1, sizeof(*f));
	struct zdev *dev;

	ck_assert_ptr_nonnull(f);
	dev = zdev_alloc(&fake_ops, &info, f);
	ck_assert_ptr_nonnull(dev);
	return dev;
}

static char buf[64 * 1024];

START_TEST(test_zdev_unaligned_offset_or_length_is_einval)
{
	struct zdev *dev = fake_open();

	ck_assert_int_eq(
		zdev_write(dev, buf, FAKE_LBA, 512, 0, ZDEV_CLASS_DATA),
		-EINVAL);
	ck_assert_int_eq(zdev_write(dev, buf, 512, 0, 0, ZDEV_CLASS_DATA),
			 -EINVAL);
	ck_assert_int_eq(zdev_read(dev, buf, FAKE_LBA + 1, 0, ZDEV_CLASS_DATA),
			 -EINVAL);
	ck_assert_int_eq(zdev_read(dev, buf, 0, 0, ZDEV_CLASS_DATA), -EINVAL);
	ck_assert_int_eq(
		zdev_append(dev, buf, FAKE_LBA, 100, 0, ZDEV_CLASS_DATA, NULL),
		-EINVAL);
	ck_assert_uint_eq(fake_of(dev)->nr_calls, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zdev_out_of_bounds_is_einval)
{
	struct zdev *dev = fake_open();
	uint64_t size = dev->info.size;

	ck_assert_int_eq(zdev_read(dev, buf, FAKE_LBA, size, ZDEV_CLASS_DATA),
			 -EINVAL);
	ck_assert_int_eq(zdev_write(dev, buf, 2 * FAKE_LBA, size - FAKE_LBA, 0,
				    ZDEV_CLASS_DATA),
			 -EINVAL);
	/* Huge length must not wrap around. */
	ck_assert_int_eq(zdev_read(dev, buf, UINT64_MAX - 4095, FAKE_LBA,
				   ZDEV_CLASS_DATA),
			 -EINVAL);
	ck_assert_int_eq(zdev_report_zone(dev, size, &(struct zdev_zone){ 0 }),
			 -EINVAL);
	ck_assert_uint_eq(fake_of(dev)->nr_calls, 0);
	/* The last block is fine. */
	ck_assert_int_eq(zdev_write(dev, buf, FAKE_LBA, size - FAKE_LBA, 0,
				    ZDEV_CLASS_DATA),
			 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zdev_zone_op_not_zone_aligned_is_einval)
{
	struct zdev *dev = fake_open();

	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, FAKE_LBA,
					FAKE_ZONE, ZDEV_CLASS_ZONE),
			 -EINVAL);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_OPEN, 0, FAKE_ZONE / 2,
					ZDEV_CLASS_ZONE),
			 -EINVAL);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_FINISH, FAKE_ZONE, 0,
					ZDEV_CLASS_ZONE),
			 -EINVAL);
	ck_assert_int_eq(zdev_reset_zone(dev, dev->info.size, ZDEV_CLASS_ZONE),
			 -EINVAL);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_CLOSE, 0,
					dev->info.size + FAKE_ZONE,
					ZDEV_CLASS_ZONE),
			 -EINVAL);
	ck_assert_int_eq(zdev_zone_mgmt(dev,
					(enum zdev_zone_action)ZDEV_OP_READ, 0,
					FAKE_ZONE, ZDEV_CLASS_ZONE),
			 -EINVAL);
	ck_assert_uint_eq(fake_of(dev)->nr_calls, 0);
	/* One zone, a range of zones, and all (0, 0) reach the backend. */
	ck_assert_int_eq(zdev_reset_zone(dev, FAKE_ZONE, ZDEV_CLASS_ZONE), 0);
	ck_assert_int_eq(zdev_zone_mgmt(dev, ZDEV_ZONE_CLOSE, 0, 2 * FAKE_ZONE,
					ZDEV_CLASS_ZONE),
			 0);
	ck_assert_int_eq(
		zdev_zone_mgmt(dev, ZDEV_ZONE_RESET, 0, 0, ZDEV_CLASS_ZONE), 0);
	ck_assert_uint_eq(fake_of(dev)->nr_calls, 3);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zdev_invalid_class_is_einval)
{
	struct zdev *dev = fake_open();

	ck_assert_int_eq(zdev_write(dev, buf, FAKE_LBA, 0, 0,
				    (enum zdev_class)ZDEV_NR_CLASSES),
			 -EINVAL);
	ck_assert_int_eq(
		zdev_read(dev, buf, FAKE_LBA, 0, (enum zdev_class) - 1),
		-EINVAL);
	ck_assert_uint_eq(fake_of(dev)->nr_calls, 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zdev_stats_count_commands_and_bytes_per_class)
{
	struct zdev *dev = fake_open();
	struct zdev_stats st;
	uint64_t off;

	ck_assert_int_eq(
		zdev_write(dev, buf, 2 * FAKE_LBA, 0, 0, ZDEV_CLASS_SB), 0);
	ck_assert_int_eq(
		zdev_write(dev, buf, FAKE_LBA, FAKE_ZONE, 0, ZDEV_CLASS_META),
		0);
	ck_assert_int_eq(zdev_write(dev, buf, FAKE_LBA, FAKE_ZONE + FAKE_LBA,
				    ZDEV_WRITE_FUA, ZDEV_CLASS_META),
			 0);
	ck_assert_int_eq(zdev_read(dev, buf, 3 * FAKE_LBA, 0, ZDEV_CLASS_DATA),
			 0);
	fake_of(dev)->append_at = 2 * FAKE_ZONE + FAKE_LBA;
	ck_assert_int_eq(zdev_append(dev, buf, FAKE_LBA, 2 * FAKE_ZONE, 0,
				     ZDEV_CLASS_DATA, &off),
			 0);
	ck_assert_uint_eq(off, 2 * FAKE_ZONE + FAKE_LBA);
	ck_assert_int_eq(zdev_reset_zone(dev, 0, ZDEV_CLASS_ZONE), 0);
	ck_assert_int_eq(zdev_flush(dev), 0);
	/* A failing command counts as a command and an error, no bytes. */
	fake_of(dev)->next_result = -EIO;
	ck_assert_int_eq(zdev_write(dev, buf, FAKE_LBA, 0, 0, ZDEV_CLASS_SB),
			 -EIO);
	/* A refused one too. */
	ck_assert_int_eq(zdev_write(dev, buf, 100, 0, 0, ZDEV_CLASS_LOG),
			 -EINVAL);

	zdev_get_stats(dev, &st);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE], 2);
	ck_assert_uint_eq(st.bytes[ZDEV_CLASS_SB][ZDEV_OP_WRITE], 2 * FAKE_LBA);
	ck_assert_uint_eq(st.errors[ZDEV_CLASS_SB][ZDEV_OP_WRITE], 1);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_META][ZDEV_OP_WRITE], 2);
	ck_assert_uint_eq(st.bytes[ZDEV_CLASS_META][ZDEV_OP_WRITE],
			  2 * FAKE_LBA);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_DATA][ZDEV_OP_READ], 1);
	ck_assert_uint_eq(st.bytes[ZDEV_CLASS_DATA][ZDEV_OP_READ],
			  3 * FAKE_LBA);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_DATA][ZDEV_OP_APPEND], 1);
	ck_assert_uint_eq(st.bytes[ZDEV_CLASS_DATA][ZDEV_OP_APPEND], FAKE_LBA);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_ZONE][ZDEV_OP_RESET], 1);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_FLUSH][ZDEV_OP_FLUSH], 1);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_LOG][ZDEV_OP_WRITE], 1);
	ck_assert_uint_eq(st.errors[ZDEV_CLASS_LOG][ZDEV_OP_WRITE], 1);
	ck_assert_uint_eq(st.bytes[ZDEV_CLASS_LOG][ZDEV_OP_WRITE], 0);
	ck_assert_uint_eq(st.cmds[ZDEV_CLASS_DATA][ZDEV_OP_WRITE], 0);
	zdev_close(dev);
}
END_TEST

struct trace_log {
	struct zdev_trace_rec recs[8];
	unsigned int nr;
	void *arg_seen;
};

static void record(void *arg, const struct zdev_trace_rec *rec)
{
	struct trace_log *log = arg;

	log->arg_seen = arg;
	if (log->nr < 8)
		log->recs[log->nr++] = *rec;
}

START_TEST(test_zdev_trace_hook_sees_each_command_with_its_fields)
{
	struct zdev *dev = fake_open();
	struct trace_log log = { .nr = 0 };
	uint64_t off;

	zdev_set_trace(dev, record, &log);
	ck_assert_int_eq(zdev_write(dev, buf, FAKE_LBA, FAKE_ZONE + FAKE_LBA, 0,
				    ZDEV_CLASS_META),
			 0);
	fake_of(dev)->append_at = 3 * FAKE_ZONE + 2 * FAKE_LBA;
	ck_assert_int_eq(zdev_append(dev, buf, 2 * FAKE_LBA, 3 * FAKE_ZONE, 0,
				     ZDEV_CLASS_DATA, &off),
			 0);
	ck_assert_int_eq(zdev_write(dev, buf, 100, 0, 0, ZDEV_CLASS_SB),
			 -EINVAL);
	ck_assert_int_eq(zdev_finish_zone(dev, 2 * FAKE_ZONE, ZDEV_CLASS_ZONE),
			 0);
	ck_assert_ptr_eq(log.arg_seen, &log);
	ck_assert_uint_eq(log.nr, 4);

	ck_assert_uint_eq(log.recs[0].seq, 1);
	ck_assert_int_eq(log.recs[0].cls, ZDEV_CLASS_META);
	ck_assert_int_eq(log.recs[0].op, ZDEV_OP_WRITE);
	ck_assert_uint_eq(log.recs[0].zone, FAKE_ZONE);
	ck_assert_uint_eq(log.recs[0].off, FAKE_ZONE + FAKE_LBA);
	ck_assert_uint_eq(log.recs[0].len, FAKE_LBA);
	ck_assert_int_eq(log.recs[0].result, 0);

	/* An append is traced where it landed. */
	ck_assert_uint_eq(log.recs[1].seq, 2);
	ck_assert_int_eq(log.recs[1].op, ZDEV_OP_APPEND);
	ck_assert_int_eq(log.recs[1].cls, ZDEV_CLASS_DATA);
	ck_assert_uint_eq(log.recs[1].zone, 3 * FAKE_ZONE);
	ck_assert_uint_eq(log.recs[1].off, 3 * FAKE_ZONE + 2 * FAKE_LBA);
	ck_assert_uint_eq(log.recs[1].len, 2 * FAKE_LBA);

	ck_assert_uint_eq(log.recs[2].seq, 3);
	ck_assert_int_eq(log.recs[2].result, -EINVAL);
	ck_assert_int_eq(log.recs[2].cls, ZDEV_CLASS_SB);

	ck_assert_int_eq(log.recs[3].op, ZDEV_OP_FINISH);
	ck_assert_int_eq(log.recs[3].cls, ZDEV_CLASS_ZONE);
	ck_assert_uint_eq(log.recs[3].zone, 2 * FAKE_ZONE);
	ck_assert_uint_eq(log.recs[3].len, FAKE_ZONE);

	/* Removed: no more records. */
	zdev_set_trace(dev, NULL, NULL);
	ck_assert_int_eq(zdev_flush(dev), 0);
	ck_assert_uint_eq(log.nr, 4);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zdev_read_write_reach_backend_with_data)
{
	struct zdev *dev = fake_open();
	char out[FAKE_LBA];
	struct zdev_zone z;

	memset(buf, 0x5a, FAKE_LBA);
	ck_assert_int_eq(zdev_write(dev, buf, FAKE_LBA, 2 * FAKE_LBA, 0,
				    ZDEV_CLASS_DATA),
			 0);
	ck_assert_int_eq(
		zdev_read(dev, out, FAKE_LBA, 2 * FAKE_LBA, ZDEV_CLASS_DATA),
		0);
	ck_assert_int_eq(memcmp(out, buf, FAKE_LBA), 0);
	ck_assert_int_eq(zdev_report_zone(dev, 2 * FAKE_ZONE + 77, &z), 0);
	ck_assert_uint_eq(z.start, 2 * FAKE_ZONE);
	zdev_close(dev);
}
END_TEST

START_TEST(test_zdev_parse_size_takes_binary_suffixes)
{
	uint64_t v;

	ck_assert_int_eq(zdev_parse_size("512", &v), 0);
	ck_assert_uint_eq(v, 512);
	ck_assert_int_eq(zdev_parse_size("4k", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(zdev_parse_size("4K", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(zdev_parse_size("64M", &v), 0);
	ck_assert_uint_eq(v, 64ull << 20);
	ck_assert_int_eq(zdev_parse_size("1G", &v), 0);
	ck_assert_uint_eq(v, 1ull << 30);
	ck_assert_int_eq(zdev_parse_size("2t", &v), 0);
	ck_assert_uint_eq(v, 2ull << 40);
	ck_assert_int_eq(zdev_parse_size("64MiB", &v), 0);
	ck_assert_uint_eq(v, 64ull << 20);
	ck_assert_int_eq(zdev_parse_size("8kB", &v), 0);
	ck_assert_uint_eq(v, 8192);
	ck_assert_int_eq(zdev_parse_size("0x4000000", &v), 0);
	ck_assert_uint_eq(v, 0x4000000);
}
END_TEST

START_TEST(test_zdev_parse_size_rejects_garbage_and_overflow)
{
	uint64_t v;

	ck_assert_int_eq(zdev_parse_size("", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("M", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("-4k", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("4x", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("4kk", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("4 k", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("99999999999999999999", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size("16777216T", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_size(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_zdev_parse_u64_takes_decimal_and_hex_only)
{
	uint64_t v;

	ck_assert_int_eq(zdev_parse_u64("7", &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(zdev_parse_u64("0x10", &v), 0);
	ck_assert_uint_eq(v, 16);
	ck_assert_int_eq(zdev_parse_u64("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(zdev_parse_u64("4k", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_u64("-1", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_u64(" 1", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_u64("", &v), -EINVAL);
	ck_assert_int_eq(zdev_parse_u64("18446744073709551616", &v), -EINVAL);
}
END_TEST

START_TEST(test_zdev_spec_next_walks_key_value_pairs)
{
	const char *pos = "zones=64,,zone_size=64M,create,x=";
	char key[16], val[16];

	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)), 1);
	ck_assert_str_eq(key, "zones");
	ck_assert_str_eq(val, "64");
	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)), 1);
	ck_assert_str_eq(key, "zone_size");
	ck_assert_str_eq(val, "64M");
	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)), 1);
	ck_assert_str_eq(key, "create");
	ck_assert_str_eq(val, "");
	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)), 1);
	ck_assert_str_eq(key, "x");
	ck_assert_str_eq(val, "");
	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)), 0);
	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)), 0);
}
END_TEST

START_TEST(test_zdev_spec_next_refuses_too_long_key_or_value)
{
	const char *pos = "averyveryverylongkey=1";
	const char *pos2 = "k=averyveryverylongvalue";
	char key[8], val[8];

	ck_assert_int_eq(
		zdev_spec_next(&pos, key, sizeof(key), val, sizeof(val)),
		-EINVAL);
	ck_assert_int_eq(
		zdev_spec_next(&pos2, key, sizeof(key), val, sizeof(val)),
		-EINVAL);
}
END_TEST

START_TEST(test_zdev_open_unknown_prefix_or_empty_spec_is_einval)
{
	struct zdev *dev = (struct zdev *)1;

	ck_assert_int_eq(zdev_open("nosuch:foo=1", &dev), -EINVAL);
	ck_assert_ptr_null(dev);
	ck_assert_int_eq(zdev_open("relative/path", &dev), -EINVAL);
	ck_assert_int_eq(zdev_open("", &dev), -EINVAL);
	ck_assert_int_eq(zdev_open(NULL, &dev), -EINVAL);
}
END_TEST

START_TEST(test_zdev_names_match_blkzone)
{
	ck_assert_str_eq(zdev_cond_name(ZDEV_COND_NOT_WP), "nw");
	ck_assert_str_eq(zdev_cond_name(ZDEV_COND_IMP_OPEN), "oi");
	ck_assert_str_eq(zdev_cond_name(ZDEV_COND_FULL), "fu");
	ck_assert_str_eq(zdev_type_name(ZDEV_ZONE_SEQ_REQ),
			 "SEQ_WRITE_REQUIRED");
	ck_assert_str_eq(zdev_class_name(ZDEV_CLASS_LOG), "log");
	ck_assert_int_eq(zdev_class_parse("meta"), ZDEV_CLASS_META);
	ck_assert_int_eq(zdev_class_parse("bogus"), -EINVAL);
	ck_assert_str_eq(zdev_op_name(ZDEV_OP_APPEND), "append");
}
END_TEST

Suite *zdev_suite(void)
{
	Suite *s = suite_create("zdev_suite");
	TCase *tc = tcase_create("wrappers");

	tcase_add_test(tc, test_zdev_unaligned_offset_or_length_is_einval);
	tcase_add_test(tc, test_zdev_out_of_bounds_is_einval);
	tcase_add_test(tc, test_zdev_zone_op_not_zone_aligned_is_einval);
	tcase_add_test(tc, test_zdev_invalid_class_is_einval);
	tcase_add_test(tc, test_zdev_stats_count_commands_and_bytes_per_class);
	tcase_add_test(tc,
		       test_zdev_trace_hook_sees_each_command_with_its_fields);
	tcase_add_test(tc, test_zdev_read_write_reach_backend_with_data);
	suite_add_tcase(s, tc);

	tc = tcase_create("spec");
	tcase_add_test(tc, test_zdev_parse_size_takes_binary_suffixes);
	tcase_add_test(tc, test_zdev_parse_size_rejects_garbage_and_overflow);
	tcase_add_test(tc, test_zdev_parse_u64_takes_decimal_and_hex_only);
	tcase_add_test(tc, test_zdev_spec_next_walks_key_value_pairs);
	tcase_add_test(tc, test_zdev_spec_next_refuses_too_long_key_or_value);
	tcase_add_test(tc,
		       test_zdev_open_unknown_prefix_or_empty_spec_is_einval);
	tcase_add_test(tc, test_zdev_names_match_blkzone);
	suite_add_tcase(s, tc);
	return s;
}
