// SPDX-License-Identifier: MIT
/*
 * zcow conform DEV: the device rules of docs/device-rules.md, run through the
 * zdev_*() wrappers on any device spec, so that the simulator and a real
 * zoned device (QEMU NVMe ZNS in harness/qemu/) are held to the same
 * expectations.  The expectations are what Linux 6.1 + QEMU 7.2 returned
 * (/work/shared/notes/zone-rules-measured.md), written in terms of the
 * device's own geometry (zone size, capacity, max open/active, max append).
 *
 * One line per checked rule:
 *   rule NAME: expected RESULT got RESULT ok|DIFFER
 * RESULT = errno name (OK for success), then ",zK=cond+wp" for the zones the
 * rule looks at (zK = K-th sequential zone, wp in LBAs from the zone start,
 * as blkzone reports it), or ",data=N,zeros=M" for reads.  A rule that
 * cannot run on this geometry prints "rule NAME: skipped (why)".
 * A rule where the simulator deliberately differs from the kernel
 * (docs/device-rules.md) accepts the documented answer on the simulator
 * only, and says so on its line.
 * Last line: "conform: N rules, A agreed (K as documented differences),
 * D differed, S skipped".
 *
 * Every rule resets all zones first: the device is destroyed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zdev.h"

#define RES_LEN 256

struct conform {
	struct zdev *dev;
	uint64_t lba, zs, cap;
	uint64_t nr_seq;	/* sequential zones */
	uint8_t *buf;		/* cap bytes, lba-aligned, filled per write */
	uint8_t *rbuf;		/* read buffer, same size */
	unsigned int nr_rules, nr_ok, nr_differ, nr_skip, nr_documented;
	const char *only;	/* run only rules whose name contains this */
};

static const char *err_name(int ret)
{
	static char other[16];

	switch (ret) {
	case 0:
		return "OK";
	case -EIO:
		return "EIO";
	case -EINVAL:
		return "EINVAL";
	case -ETOOMANYREFS:
		return "ETOOMANYREFS";
	case -EOVERFLOW:
		return "EOVERFLOW";
	case -EOPNOTSUPP:
		return "EOPNOTSUPP";
	case -ENOSPC:
		return "ENOSPC";
	}
	snprintf(other, sizeof(other), "E%d", -ret);
	return other;
}

/* Byte offset of LBA @lba in the @k-th sequential zone. */
static uint64_t at(const struct conform *c, uint64_t k, uint64_t lba)
{
	return (c->dev->info.nr_conv + k) * c->zs + lba * c->lba;
}

static void res_add(char *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void res_add(char *s, const char *fmt, ...)
{
	size_t n = strlen(s);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s + n, RES_LEN - n, fmt, ap);
	va_end(ap);
}

/* Start a result with the errno name. */
static void res_start(char *s, int ret)
{
	s[0] = '\0';
	res_add(s, "%s", err_name(ret));
}

/* Expected zone state: ",zK=cond+wp". */
static void res_zone(char *s, uint64_t k, enum zdev_zone_cond cond,
		     uint64_t wp_lba)
{
	res_add(s, ",z%llu=%s+%llu", (unsigned long long)k,
		zdev_cond_name(cond), (unsigned long long)wp_lba);
}

/* The zone state as the device reports it. */
static void res_zone_got(struct conform *c, char *s, uint64_t k)
{
	struct zdev_zone z;
	int ret = zdev_report_zone(c->dev, at(c, k, 0), &z);

	if (ret) {
		res_add(s, ",z%llu=report:%s", (unsigned long long)k,
			err_name(ret));
		return;
	}
	res_zone(s, k, z.cond, (z.wp - z.start) / c->lba);
}

static bool is_selected(struct conform *c, const char *name)
{
	return !c->only || strstr(name, c->only);
}

static void verdict(struct conform *c, const char *name, const char *exp,
		    const char *got)
{
	bool is_ok = strcmp(exp, got) == 0;

	c->nr_rules++;
	if (is_ok)
		c->nr_ok++;
	else
		c->nr_differ++;
	printf("rule %s: expected %s got %s %s\n", name, exp, got,
	       is_ok ? "ok" : "DIFFER");
	fflush(stdout);
}

/*
 * A rule where the simulator deliberately differs from the kernel block
 * device (docs/device-rules.md): @alt is the documented answer.  It counts
 * as agreed, and the line says so.
 */
static void verdict_alt(struct conform *c, const char *name, const char *exp,
			const char *alt, const char *why, const char *got)
{
	if (strcmp(exp, got) == 0 || strcmp(alt, got) != 0 ||
	    strcmp(c->dev->info.model, "sim") != 0) {
		verdict(c, name, exp, got);
		return;
	}
	c->nr_rules++;
	c->nr_ok++;
	c->nr_documented++;
	printf("rule %s: expected %s got %s ok (documented difference: %s)\n",
	       name, exp, got, why);
	fflush(stdout);
}

static void skip(struct conform *c, const char *name, const char *why)
{
	c->nr_skip++;
	printf("rule %s: skipped (%s)\n", name, why);
	fflush(stdout);
}

/* A set-up step failed: the rule differs, with the step named. */
static void setup_failed(struct conform *c, const char *name, const char *step,
			 int ret)
{
	char got[RES_LEN];

	snprintf(got, sizeof(got), "setup:%s=%s", step, err_name(ret));
	verdict(c, name, "setup:OK", got);
}

static int reset_all(struct conform *c)
{
	return zdev_zone_mgmt(c->dev, ZDEV_ZONE_RESET, 0, 0, ZDEV_CLASS_OTHER);
}

/* Write @nr LBAs of byte @fill at LBA @lba of sequential zone @k. */
static int wr(struct conform *c, uint64_t k, uint64_t lba, uint64_t nr,
	      uint8_t fill)
{
	uint64_t len = nr * c->lba;
	uint64_t max = c->cap > c->lba * 2 ? c->cap : c->lba * 2;

	if (len > max)
		return -E2BIG;
	memset(c->buf, fill, len);
	return zdev_write(c->dev, c->buf, len, at(c, k, lba), 0,
			  ZDEV_CLASS_OTHER);
}

static int app(struct conform *c, uint64_t k, uint64_t nr, uint8_t fill,
	       uint64_t *off_ret)
{
	uint64_t len = nr * c->lba;

	memset(c->buf, fill, len);
	return zdev_append(c->dev, c->buf, len, at(c, k, 0), 0,
			   ZDEV_CLASS_OTHER, off_ret);
}

static int mgmt(struct conform *c, enum zdev_zone_action a, uint64_t k)
{
	return zdev_zone_mgmt(c->dev, a, at(c, k, 0), c->zs, ZDEV_CLASS_OTHER);
}

/*
 * Read @nr LBAs at LBA @lba of zone @k; the result counts the LBAs that hold
 * @fill and the ones that are all zeros.
 */
static void rd_res(struct conform *c, char *s, uint64_t k, uint64_t lba,
		   uint64_t nr, uint8_t fill)
{
	uint64_t i, j, nr_data = 0, nr_zero = 0;
	int ret;

	ret = zdev_read(c->dev, c->rbuf, nr * c->lba, at(c, k, lba),
			ZDEV_CLASS_OTHER);
	res_start(s, ret);
	if (ret)
		return;
	for (i = 0; i < nr; i++) {
		const uint8_t *b = c->rbuf + i * c->lba;
		bool is_fill = true, is_zero = true;

		for (j = 0; j < c->lba; j++) {
			is_fill &= b[j] == fill;
			is_zero &= b[j] == 0;
		}
		nr_data += is_fill;
		nr_zero += is_zero;
	}
	res_add(s, ",data=%llu,zeros=%llu", (unsigned long long)nr_data,
		(unsigned long long)nr_zero);
}

#define SETUP(c, name, expr)                                   \
	do {                                                   \
		int ret_ = (expr);                             \
		if (ret_) {                                    \
			setup_failed(c, name, #expr, ret_);    \
			return;                                \
		}                                              \
	} while (0)

/* Begin a rule: selected, and all zones reset.  False: do not run it. */
static bool begin(struct conform *c, const char *name)
{
	int ret;

	if (!is_selected(c, name))
		return false;
	ret = reset_all(c);
	if (ret) {
		setup_failed(c, name, "reset_all", ret);
		return false;
	}
	return true;
}

/* ---- 1-5: writes relative to the write pointer ---------------------- */

static void rule_writes(struct conform *c)
{
	char exp[RES_LEN], got[RES_LEN];
	const char *n;
	int ret;

	n = "write_at_wp_of_empty_opens_implicitly";
	if (begin(c, n)) {
		ret = wr(c, 0, 0, 1, 0xa1);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "write_below_wp_is_eio";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 2, 0xa2));
		ret = wr(c, 0, 1, 1, 0xa2);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "write_above_wp_is_eio";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 2, 0xa3));
		ret = wr(c, 0, 3, 1, 0xa3);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "write_overlapping_wp_is_eio_nothing_written";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 2, 0xa4));
		ret = wr(c, 0, 1, 2, 0xa4);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "write_above_wp_of_empty_stays_empty";
	if (begin(c, n)) {
		ret = wr(c, 0, 1, 1, 0xa5);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_EMPTY, 0);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "write_above_wp_of_closed_stays_closed";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 2, 0xa6));
		SETUP(c, n, mgmt(c, ZDEV_ZONE_CLOSE, 0));
		ret = wr(c, 0, 3, 1, 0xa6);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_CLOSED, 2);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "write_at_wp_of_closed_reopens_implicitly";
		ret = wr(c, 0, 2, 1, 0xa6);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 3);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "write_at_wp_of_explicit_open_stays_explicit";
	if (begin(c, n)) {
		SETUP(c, n, mgmt(c, ZDEV_ZONE_OPEN, 0));
		ret = wr(c, 0, 0, 1, 0xa7);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_EXP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}
}

/* ---- 4-5: capacity, zone end, full zones ----------------------------- */

#define SPLIT_WHY                                                          \
	"the simulator models one device command and refuses it whole; the " \
	"kernel splits block-device I/O at zone ends"

static void rule_capacity(struct conform *c)
{
	uint64_t cap_lbas = c->cap / c->lba, zs_lbas = c->zs / c->lba;
	char exp[RES_LEN], got[RES_LEN], alt[RES_LEN];
	const char *n;
	int ret;

	n = "write_crossing_capacity_is_eio";
	if (c->cap == c->zs) {
		if (is_selected(c, n))
			skip(c, n, "capacity = zone size");
	} else if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, cap_lbas - 1, 0xb1));
		ret = wr(c, 0, cap_lbas - 1, 2, 0xb1);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "write_in_gap_of_open_zone_is_eio";
		ret = wr(c, 0, cap_lbas, 1, 0xb1);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "read_gap_of_open_zone_returns_zeros";
		rd_res(c, got, 0, cap_lbas, 2, 0xb1);
		snprintf(exp, sizeof(exp), "OK,data=0,zeros=2");
		verdict(c, n, exp, got);
	}

	n = "write_reaching_capacity_makes_full_wp_at_zone_size";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, cap_lbas - 1, 0xb2));
		ret = wr(c, 0, cap_lbas - 1, 1, 0xb2);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_FULL, zs_lbas);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "write_to_full_zone_is_eio";
		ret = wr(c, 0, 0, 1, 0xb2);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_FULL, zs_lbas);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "read_whole_capacity_of_full_zone";
		rd_res(c, got, 0, 0, cap_lbas, 0xb2);
		snprintf(exp, sizeof(exp), "OK,data=%llu,zeros=0",
			 (unsigned long long)cap_lbas);
		verdict(c, n, exp, got);
	}

	/*
	 * The kernel splits a block-device write at the zone end; each piece
	 * lands at its zone's wp, so this succeeds on Linux (measured, case
	 * 4).  Needs capacity = zone size.
	 */
	n = "write_across_zone_end_into_empty_zone_is_split";
	if (c->cap != c->zs) {
		if (is_selected(c, n))
			skip(c, n, "capacity < zone size");
	} else if (c->nr_seq < 2) {
		if (is_selected(c, n))
			skip(c, n, "fewer than 2 sequential zones");
	} else if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, cap_lbas - 1, 0xb3));
		ret = wr(c, 0, cap_lbas - 1, 2, 0xb3);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_FULL, zs_lbas);
		res_zone(exp, 1, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		res_zone_got(c, got, 1);
		res_start(alt, -EIO);
		res_zone(alt, 0, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
		res_zone(alt, 1, ZDEV_COND_EMPTY, 0);
		verdict_alt(c, n, exp, alt, SPLIT_WHY, got);
	}
}

/* ---- 6: reads ------------------------------------------------------- */

static void rule_reads(struct conform *c)
{
	char exp[RES_LEN], got[RES_LEN];
	const char *n;

	n = "read_straddling_wp_gives_data_then_zeros";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 4, 0xc1));
		rd_res(c, got, 0, 2, 8, 0xc1);
		snprintf(exp, sizeof(exp), "OK,data=2,zeros=6");
		verdict(c, n, exp, got);

		n = "read_empty_zone_returns_zeros";
		rd_res(c, got, 1 < c->nr_seq ? 1 : 0, 0, 4, 0xc1);
		snprintf(exp, sizeof(exp), "OK,data=0,zeros=4");
		if (c->nr_seq < 2)
			snprintf(exp, sizeof(exp), "OK,data=4,zeros=0");
		verdict(c, n, exp, got);
	}

	n = "read_across_zone_end_is_split";
	if (c->nr_seq < 2) {
		if (is_selected(c, n))
			skip(c, n, "fewer than 2 sequential zones");
	} else if (begin(c, n)) {
		rd_res(c, got, 0, c->zs / c->lba - 1, 2, 0xc1);
		snprintf(exp, sizeof(exp), "OK,data=0,zeros=2");
		verdict_alt(c, n, exp, "EIO", SPLIT_WHY, got);
	}

	n = "reset_destroys_data";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 4, 0xc2));
		SETUP(c, n, mgmt(c, ZDEV_ZONE_RESET, 0));
		rd_res(c, got, 0, 0, 4, 0xc2);
		res_zone_got(c, got, 0);
		snprintf(exp, sizeof(exp), "OK,data=0,zeros=4");
		res_zone(exp, 0, ZDEV_COND_EMPTY, 0);
		verdict(c, n, exp, got);
	}
}

/* ---- 7: zone management transitions --------------------------------- */

/* One management op on zone 0 from a prepared state. */
static void transition(struct conform *c, const char *n, int prep,
		       enum zdev_zone_action a, int exp_ret,
		       enum zdev_zone_cond exp_cond, uint64_t exp_wp)
{
	char exp[RES_LEN], got[RES_LEN];
	int ret;

	if (!begin(c, n))
		return;
	/* prep: 0 empty, 1 implicitly open +2, 2 explicitly open +0,
	 * 3 closed +2, 4 full (finished empty). */
	switch (prep) {
	case 1:
		SETUP(c, n, wr(c, 0, 0, 2, 0xd1));
		break;
	case 2:
		SETUP(c, n, mgmt(c, ZDEV_ZONE_OPEN, 0));
		break;
	case 3:
		SETUP(c, n, wr(c, 0, 0, 2, 0xd1));
		SETUP(c, n, mgmt(c, ZDEV_ZONE_CLOSE, 0));
		break;
	case 4:
		SETUP(c, n, mgmt(c, ZDEV_ZONE_FINISH, 0));
		break;
	}
	ret = mgmt(c, a, 0);
	res_start(exp, exp_ret);
	res_zone(exp, 0, exp_cond, exp_wp);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	verdict(c, n, exp, got);
}

static void rule_transitions(struct conform *c)
{
	uint64_t zl = c->zs / c->lba;

	transition(c, "open_empty_gives_explicit_open", 0, ZDEV_ZONE_OPEN, 0,
		   ZDEV_COND_EXP_OPEN, 0);
	transition(c, "open_implicit_gives_explicit_open", 1, ZDEV_ZONE_OPEN,
		   0, ZDEV_COND_EXP_OPEN, 2);
	transition(c, "open_explicit_is_ok", 2, ZDEV_ZONE_OPEN, 0,
		   ZDEV_COND_EXP_OPEN, 0);
	transition(c, "open_closed_gives_explicit_open", 3, ZDEV_ZONE_OPEN, 0,
		   ZDEV_COND_EXP_OPEN, 2);
	transition(c, "open_full_is_eio", 4, ZDEV_ZONE_OPEN, -EIO,
		   ZDEV_COND_FULL, zl);
	transition(c, "close_empty_is_eio", 0, ZDEV_ZONE_CLOSE, -EIO,
		   ZDEV_COND_EMPTY, 0);
	transition(c, "close_implicit_gives_closed", 1, ZDEV_ZONE_CLOSE, 0,
		   ZDEV_COND_CLOSED, 2);
	transition(c, "close_explicit_at_zero_gives_closed_not_empty", 2,
		   ZDEV_ZONE_CLOSE, 0, ZDEV_COND_CLOSED, 0);
	transition(c, "close_closed_is_ok", 3, ZDEV_ZONE_CLOSE, 0,
		   ZDEV_COND_CLOSED, 2);
	transition(c, "close_full_is_eio", 4, ZDEV_ZONE_CLOSE, -EIO,
		   ZDEV_COND_FULL, zl);
	transition(c, "finish_empty_gives_full", 0, ZDEV_ZONE_FINISH, 0,
		   ZDEV_COND_FULL, zl);
	transition(c, "finish_implicit_gives_full", 1, ZDEV_ZONE_FINISH, 0,
		   ZDEV_COND_FULL, zl);
	transition(c, "finish_explicit_gives_full", 2, ZDEV_ZONE_FINISH, 0,
		   ZDEV_COND_FULL, zl);
	transition(c, "finish_closed_gives_full", 3, ZDEV_ZONE_FINISH, 0,
		   ZDEV_COND_FULL, zl);
	transition(c, "finish_full_is_ok", 4, ZDEV_ZONE_FINISH, 0,
		   ZDEV_COND_FULL, zl);
	transition(c, "reset_empty_is_ok", 0, ZDEV_ZONE_RESET, 0,
		   ZDEV_COND_EMPTY, 0);
	transition(c, "reset_implicit_gives_empty", 1, ZDEV_ZONE_RESET, 0,
		   ZDEV_COND_EMPTY, 0);
	transition(c, "reset_closed_gives_empty", 3, ZDEV_ZONE_RESET, 0,
		   ZDEV_COND_EMPTY, 0);
	transition(c, "reset_full_gives_empty", 4, ZDEV_ZONE_RESET, 0,
		   ZDEV_COND_EMPTY, 0);
}

/* ---- 8-9: open and active limits ------------------------------------ */

static void rule_limits(struct conform *c)
{
	uint32_t mo = c->dev->info.max_open, ma = c->dev->info.max_active;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t k, nr_closed;
	const char *n;
	int ret;

	n = "open_limit_closes_oldest_implicit_fifo";
	if (!mo) {
		if (is_selected(c, n))
			skip(c, n, "max_open = 0 (no open limit)");
	} else if (c->nr_seq < (uint64_t)mo + 2 ||
		   (ma && ma < mo + 1)) {
		if (is_selected(c, n))
			skip(c, n, "needs max_open + 2 zones and max_active "
				   "> max_open");
	} else if (begin(c, n)) {
		for (k = 0; k < mo; k++)
			SETUP(c, n, wr(c, k, 0, 1, 0xe1));
		ret = wr(c, mo, 0, 1, 0xe1);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_CLOSED, 1);
		res_zone(exp, 1, ZDEV_COND_IMP_OPEN, 1);
		res_zone(exp, mo, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		res_zone_got(c, got, 1);
		res_zone_got(c, got, mo);
		verdict(c, n, exp, got);

		n = "reopen_closed_evicts_next_oldest_implicit";
		ret = wr(c, 0, 1, 1, 0xe1);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2);
		res_zone(exp, 1, ZDEV_COND_CLOSED, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		res_zone_got(c, got, 1);
		verdict(c, n, exp, got);
	}

	n = "open_limit_all_explicit_is_etoomanyrefs";
	if (!mo) {
		if (is_selected(c, n))
			skip(c, n, "max_open = 0 (no open limit)");
	} else if (c->nr_seq < (uint64_t)mo + 2 || (ma && ma < mo + 1)) {
		if (is_selected(c, n))
			skip(c, n, "needs max_open + 2 zones and max_active "
				   "> max_open");
	} else if (begin(c, n)) {
		for (k = 0; k < mo; k++)
			SETUP(c, n, mgmt(c, ZDEV_ZONE_OPEN, k));
		ret = mgmt(c, ZDEV_ZONE_OPEN, mo);
		res_start(exp, -ETOOMANYREFS);
		res_zone(exp, mo, ZDEV_COND_EMPTY, 0);
		res_start(got, ret);
		res_zone_got(c, got, mo);
		verdict(c, n, exp, got);

		n = "write_with_all_explicit_open_is_etoomanyrefs";
		ret = wr(c, mo, 0, 1, 0xe2);
		res_start(exp, -ETOOMANYREFS);
		res_zone(exp, mo, ZDEV_COND_EMPTY, 0);
		res_start(got, ret);
		res_zone_got(c, got, mo);
		verdict(c, n, exp, got);

		n = "close_frees_an_open_slot";
		SETUP(c, n, mgmt(c, ZDEV_ZONE_CLOSE, 0));
		ret = wr(c, mo, 0, 1, 0xe2);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_CLOSED, 0);
		res_zone(exp, mo, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		res_zone_got(c, got, mo);
		verdict(c, n, exp, got);
	}

	/*
	 * Write one LBA to zones 0 .. ma in turn: the first ma succeed (the
	 * open limit closes the oldest ones), the next is EOVERFLOW and still
	 * closes the oldest implicitly open zone (measured, case 9).
	 */
	n = "active_limit_is_eoverflow_and_still_closes_oldest";
	if (!ma) {
		if (is_selected(c, n))
			skip(c, n, "max_active = 0 (no active limit)");
	} else if (c->nr_seq < (uint64_t)ma + 2) {
		if (is_selected(c, n))
			skip(c, n, "needs max_active + 2 zones");
	} else if (begin(c, n)) {
		for (k = 0; k < ma; k++)
			SETUP(c, n, wr(c, k, 0, 1, 0xe3));
		ret = wr(c, ma, 0, 1, 0xe3);
		nr_closed = 0;
		for (k = 0; k <= ma; k++) {
			struct zdev_zone z;

			if (!zdev_report_zone(c->dev, at(c, k, 0), &z) &&
			    z.cond == ZDEV_COND_CLOSED)
				nr_closed++;
		}
		res_start(exp, -EOVERFLOW);
		/* With a limit of 0 nothing is closed by the open limit. */
		res_add(exp, ",closed=%llu",
			(unsigned long long)(mo ? ma - mo + 1 : 0));
		res_zone(exp, ma, ZDEV_COND_EMPTY, 0);
		res_start(got, ret);
		res_add(got, ",closed=%llu", (unsigned long long)nr_closed);
		res_zone_got(c, got, ma);
		verdict(c, n, exp, got);

		n = "finish_empty_at_active_limit_needs_no_slot";
		ret = mgmt(c, ZDEV_ZONE_FINISH, ma);
		res_start(exp, 0);
		res_zone(exp, ma, ZDEV_COND_FULL, c->zs / c->lba);
		res_start(got, ret);
		res_zone_got(c, got, ma);
		verdict(c, n, exp, got);

		n = "finish_frees_an_active_slot";
		SETUP(c, n, mgmt(c, ZDEV_ZONE_FINISH, 0));
		ret = wr(c, ma + 1, 0, 1, 0xe3);
		res_start(exp, 0);
		res_zone(exp, ma + 1, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, ma + 1);
		verdict(c, n, exp, got);
	}

	n = "closed_at_zero_holds_an_active_slot";
	if (!ma) {
		if (is_selected(c, n))
			skip(c, n, "max_active = 0 (no active limit)");
	} else if (c->nr_seq < (uint64_t)ma + 1) {
		if (is_selected(c, n))
			skip(c, n, "needs max_active + 1 zones");
	} else if (begin(c, n)) {
		for (k = 0; k < ma; k++) {
			SETUP(c, n, mgmt(c, ZDEV_ZONE_OPEN, k));
			SETUP(c, n, mgmt(c, ZDEV_ZONE_CLOSE, k));
		}
		ret = wr(c, ma, 0, 1, 0xe4);
		res_start(exp, -EOVERFLOW);
		res_zone(exp, 0, ZDEV_COND_CLOSED, 0);
		res_zone(exp, ma, ZDEV_COND_EMPTY, 0);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		res_zone_got(c, got, ma);
		verdict(c, n, exp, got);
	}
}

/* ---- 10-11: zone append ---------------------------------------------- */

static void rule_append(struct conform *c)
{
	uint64_t cap_lbas = c->cap / c->lba, ma = c->dev->info.max_append;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t off = 0, off2 = 0, off3 = 0;
	const char *n;
	int ret;

	n = "append_at_zone_start_returns_wp_before";
	if (!ma) {
		if (is_selected(c, n))
			skip(c, n, "no zone append (max_append = 0)");
		return;
	}
	if (begin(c, n)) {
		ret = app(c, 0, 1, 0xf1, &off);
		res_start(exp, 0);
		res_add(exp, ",at=+0");
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_add(got, ",at=+%lld",
			(long long)(off - at(c, 0, 0)) / (long long)c->lba);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "appends_and_writes_share_one_wp";
		ret = app(c, 0, 2, 0xf1, &off2);
		if (!ret)
			ret = wr(c, 0, 3, 1, 0xf1);
		if (!ret)
			ret = app(c, 0, 1, 0xf1, &off3);
		res_start(exp, 0);
		res_add(exp, ",at=+1,+4");
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 5);
		res_start(got, ret);
		res_add(got, ",at=+%lld,+%lld",
			(long long)(off2 - at(c, 0, 0)) / (long long)c->lba,
			(long long)(off3 - at(c, 0, 0)) / (long long)c->lba);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "appended_data_reads_back";
		rd_res(c, got, 0, 0, 5, 0xf1);
		snprintf(exp, sizeof(exp), "OK,data=5,zeros=0");
		verdict(c, n, exp, got);
	}

	n = "append_not_at_zone_start_is_einval";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 1, 0xf2));
		memset(c->buf, 0xf2, c->lba);
		ret = zdev_append(c->dev, c->buf, c->lba, at(c, 0, 1), 0,
				  ZDEV_CLASS_OTHER, &off);
		res_start(exp, -EINVAL);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "append_of_max_append_is_ok";
	if (ma + c->lba > c->cap) {
		if (is_selected(c, n))
			skip(c, n, "max_append + 1 LBA above capacity");
	} else if (begin(c, n)) {
		ret = app(c, 0, ma / c->lba, 0xf3, &off);
		res_start(exp, 0);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, ma / c->lba);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "append_above_max_append_is_einval";
		ret = app(c, 0, ma / c->lba + 1, 0xf3, &off);
		res_start(exp, -EINVAL);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, ma / c->lba);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "append_crossing_capacity_is_eio";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, cap_lbas - 1, 0xf4));
		ret = app(c, 0, 2, 0xf4, &off);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "append_reaching_capacity_makes_full";
		ret = app(c, 0, 1, 0xf4, &off);
		res_start(exp, 0);
		res_add(exp, ",at=+%llu", (unsigned long long)(cap_lbas - 1));
		res_zone(exp, 0, ZDEV_COND_FULL, c->zs / c->lba);
		res_start(got, ret);
		res_add(got, ",at=+%lld",
			(long long)(off - at(c, 0, 0)) / (long long)c->lba);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);

		n = "append_to_full_zone_is_eio";
		ret = app(c, 0, 1, 0xf4, &off);
		res_start(exp, -EIO);
		res_zone(exp, 0, ZDEV_COND_FULL, c->zs / c->lba);
		res_start(got, ret);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}

	n = "append_to_closed_zone_reopens_implicitly";
	if (begin(c, n)) {
		SETUP(c, n, wr(c, 0, 0, 2, 0xf5));
		SETUP(c, n, mgmt(c, ZDEV_ZONE_CLOSE, 0));
		ret = app(c, 0, 1, 0xf5, &off);
		res_start(exp, 0);
		res_add(exp, ",at=+2");
		res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 3);
		res_start(got, ret);
		res_add(got, ",at=+%lld",
			(long long)(off - at(c, 0, 0)) / (long long)c->lba);
		res_zone_got(c, got, 0);
		verdict(c, n, exp, got);
	}
}

/* ---- the backend: caller buffers that are not lba-aligned ------------ */

static void rule_unaligned_buffers(struct conform *c)
{
	uint64_t nr = 3, len = nr * c->lba, off = 0, i;
	char exp[RES_LEN], got[RES_LEN];
	const char *n = "unaligned_buffers_write_append_read_back";
	uint8_t *src, *dst;
	bool is_same;
	int ret;

	if (!begin(c, n))
		return;
	/* One byte past an aligned start: every backend must bounce. */
	src = c->buf + 1;
	dst = c->rbuf + 1;
	for (i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	ret = zdev_write(c->dev, src, len, at(c, 0, 0), 0, ZDEV_CLASS_OTHER);
	if (!ret && c->dev->info.max_append >= len)
		ret = zdev_append(c->dev, src, len, at(c, 0, 0), 0,
				  ZDEV_CLASS_OTHER, &off);
	else if (!ret)
		ret = zdev_write(c->dev, src, len, at(c, 0, nr), 0,
				 ZDEV_CLASS_OTHER);
	memset(dst, 0, 2 * len);
	if (!ret)
		ret = zdev_read(c->dev, dst, 2 * len, at(c, 0, 0),
				ZDEV_CLASS_OTHER);
	is_same = !ret && !memcmp(dst, src, len) && !memcmp(dst + len, src, len);
	res_start(exp, 0);
	res_add(exp, ",same=yes");
	res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2 * nr);
	res_start(got, ret);
	res_add(got, ",same=%s", is_same ? "yes" : "no");
	res_zone_got(c, got, 0);
	verdict(c, n, exp, got);
}

/* FUA writes and appends (passthrough: cdw12 bit 30) and a flush. */
static void rule_fua_and_flush(struct conform *c)
{
	const char *n = "fua_write_append_and_flush";
	char exp[RES_LEN], got[RES_LEN];
	uint64_t off = 0;
	int ret;

	if (!begin(c, n))
		return;
	memset(c->buf, 0x5f, 2 * c->lba);
	ret = zdev_write(c->dev, c->buf, c->lba, at(c, 0, 0), ZDEV_WRITE_FUA,
			 ZDEV_CLASS_OTHER);
	if (!ret && c->dev->info.max_append)
		ret = zdev_append(c->dev, c->buf, c->lba, at(c, 0, 0),
				  ZDEV_WRITE_FUA, ZDEV_CLASS_OTHER, &off);
	else if (!ret)
		ret = zdev_write(c->dev, c->buf, c->lba, at(c, 0, 1),
				 ZDEV_WRITE_FUA, ZDEV_CLASS_OTHER);
	if (!ret)
		ret = zdev_flush(c->dev);
	res_start(exp, 0);
	res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	verdict(c, n, exp, got);
}

static void conform_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow conform DEV [--only SUBSTRING]\n"
		"  Check the device rules (docs/device-rules.md) on DEV through\n"
		"  the zdev layer; one line per rule, then a summary.\n"
		"  DESTROYS ALL DATA: every rule resets all zones first.\n"
		"  Exit status 0 when every rule agreed, 1 when one differed.\n");
}

int cmd_conform(int argc, char **argv)
{
	struct conform c = { 0 };
	const char *spec = NULL;
	uint64_t buf_len;
	int i, ret, status;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			conform_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			c.only = argv[++i];
		} else if (argv[i][0] != '-' && !spec) {
			spec = argv[i];
		} else {
			conform_usage(stderr);
			return 2;
		}
	}
	if (!spec) {
		conform_usage(stderr);
		return 2;
	}
	if (open_dev(spec, &c.dev))
		return 1;
	c.lba = c.dev->info.lba_size;
	c.zs = c.dev->info.zone_size;
	c.cap = c.dev->info.zone_capacity;
	c.nr_seq = c.dev->info.nr_zones - c.dev->info.nr_conv;
	printf("conform: device %s: %llu zones of %llu KiB, capacity %llu KiB, "
	       "%llu conventional, lba %llu, max_open %u, max_active %u, "
	       "max_append %llu KiB\n",
	       spec, (unsigned long long)c.dev->info.nr_zones,
	       (unsigned long long)(c.zs >> 10),
	       (unsigned long long)(c.cap >> 10),
	       (unsigned long long)c.dev->info.nr_conv,
	       (unsigned long long)c.lba, c.dev->info.max_open,
	       c.dev->info.max_active,
	       (unsigned long long)(c.dev->info.max_append >> 10));
	if (!c.dev->info.is_zoned || c.nr_seq < 1 || c.cap < 4 * c.lba) {
		fprintf(stderr, "zcow conform: '%s' has no sequential zones "
				"of at least 4 blocks\n", spec);
		return close_dev(c.dev, 1);
	}
	buf_len = c.cap > c.dev->info.max_append + c.lba
			  ? c.cap
			  : c.dev->info.max_append + c.lba;
	if (buf_len < 16 * c.lba)
		buf_len = 16 * c.lba;
	if (posix_memalign((void **)&c.buf, c.lba, buf_len) ||
	    posix_memalign((void **)&c.rbuf, c.lba, buf_len)) {
		fprintf(stderr, "zcow conform: out of memory\n");
		free(c.buf);
		return close_dev(c.dev, 1);
	}
	rule_writes(&c);
	rule_capacity(&c);
	rule_reads(&c);
	rule_transitions(&c);
	rule_limits(&c);
	rule_append(&c);
	rule_unaligned_buffers(&c);
	rule_fua_and_flush(&c);
	ret = reset_all(&c);
	if (ret)
		fprintf(stderr, "zcow conform: final reset failed: %s\n",
			strerror(-ret));
	printf("conform: %u rules, %u agreed (%u as documented "
	       "differences), %u differed, %u skipped\n",
	       c.nr_rules, c.nr_ok, c.nr_documented, c.nr_differ, c.nr_skip);
	free(c.buf);
	free(c.rbuf);
	status = c.nr_differ || ret ? 1 : 0;
	return close_dev(c.dev, status);
}
