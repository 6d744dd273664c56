// SPDX-License-Identifier: MIT
/*
 * zcow conform DEV: the device rules of docs/device-rules.md, run through the
 * zdev_*() wrappers on any device spec, so that the simulator and a real
 * zoned device (QEMU NVMe ZNS in harness/qemu/) are held to the same
 * expectations.  The expectations are what Linux 6.1 + QEMU 7.2 returned
 * (docs/device-rules.md, each case measured there), written in terms of the
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
 * The rules are one table, rules[] at the end: a name, where the rule is
 * stated (docs/device-rules.md section, measured case), the check, and
 * when the geometry cannot hold it; `zcow conform --list` prints it.  A
 * set-up step that fails is its rule's DIFFER line ("setup:STEP=ERR").
 *
 * Every rule resets all zones first (a chained rule goes on from the zones
 * its predecessor left): the device is destroyed.
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

/* ---- rules ---------------------------------------------------------- */

/* How transition() prepares zone 0 before its management op. */
enum prep {
	PREP_EMPTY,
	PREP_IMP_OPEN,		/* implicitly open at +2 */
	PREP_EXP_OPEN,		/* explicitly open at +0 */
	PREP_CLOSED,		/* closed at +2 */
	PREP_FULL,		/* finished while empty */
};

/* An expected wp of the zone size in LBAs: where a FULL zone reports it. */
#define WP_ZONE_END UINT64_MAX

/* One zone management case: op @action on zone 0 prepared as @prep. */
struct transition {
	enum prep prep;
	enum zdev_zone_action action;
	int ret;			/* expected: 0 or -errno */
	enum zdev_zone_cond cond;	/* expected condition after */
	uint64_t wp;			/* expected wp, LBAs; WP_ZONE_END */
};

/* One row of the rule table (rules[] below). */
struct rule {
	const char *name;	/* the rule's line: "rule NAME: ..." */
	const char *source;	/* where it is stated and measured */
	/*
	 * Check the rule; the zones were reset, unless it is chained.
	 * Returns 0 once it reported its line, or the errno of a set-up
	 * step, reported by SETUP() (its chained rules then do not run).
	 */
	int (*check)(struct conform *c, const struct rule *r);
	/* NULL, or why this device cannot hold the rule (then skipped) */
	const char *(*cannot_run)(const struct conform *c);
	bool is_chained;	/* runs on the zones its predecessor left */
	struct transition tr;	/* transition()'s case */
};

/*
 * The rule's line for a command that returned @ret, looking at zone @k:
 * expected @exp_ret and @cond at @wp (LBAs from the zone start).
 */
static void verdict_zone(struct conform *c, const struct rule *r, uint64_t k,
			 int ret, int exp_ret, enum zdev_zone_cond cond,
			 uint64_t wp)
{
	char exp[RES_LEN], got[RES_LEN];

	res_start(exp, exp_ret);
	res_zone(exp, k, cond, wp);
	res_start(got, ret);
	res_zone_got(c, got, k);
	verdict(c, r->name, exp, got);
}

#define SETUP(c, name, expr)                                   \
	do {                                                   \
		int ret_ = (expr);                             \
		if (ret_) {                                    \
			setup_failed(c, name, #expr, ret_);    \
			return ret_;                           \
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

static int write_at_wp_of_empty(struct conform *c, const struct rule *r)
{
	int ret;

	ret = wr(c, 0, 0, 1, 0xa1);
	verdict_zone(c, r, 0, ret, 0, ZDEV_COND_IMP_OPEN, 1);
	return 0;
}

static int write_below_wp(struct conform *c, const struct rule *r)
{
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, 2, 0xa2));
	ret = wr(c, 0, 1, 1, 0xa2);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_IMP_OPEN, 2);
	return 0;
}

static int write_above_wp(struct conform *c, const struct rule *r)
{
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, 2, 0xa3));
	ret = wr(c, 0, 3, 1, 0xa3);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_IMP_OPEN, 2);
	return 0;
}

static int write_overlapping_wp(struct conform *c, const struct rule *r)
{
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, 2, 0xa4));
	ret = wr(c, 0, 1, 2, 0xa4);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_IMP_OPEN, 2);
	return 0;
}

static int write_above_wp_of_empty(struct conform *c, const struct rule *r)
{
	int ret;

	ret = wr(c, 0, 1, 1, 0xa5);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_EMPTY, 0);
	return 0;
}

static int write_above_wp_of_closed(struct conform *c, const struct rule *r)
{
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, 2, 0xa6));
	SETUP(c, r->name, mgmt(c, ZDEV_ZONE_CLOSE, 0));
	ret = wr(c, 0, 3, 1, 0xa6);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_CLOSED, 2);
	return 0;
}

/* Chained: zone 0 closed at +2. */
static int write_at_wp_of_closed(struct conform *c, const struct rule *r)
{
	int ret;

	ret = wr(c, 0, 2, 1, 0xa6);
	verdict_zone(c, r, 0, ret, 0, ZDEV_COND_IMP_OPEN, 3);
	return 0;
}

static int write_at_wp_of_explicit(struct conform *c, const struct rule *r)
{
	int ret;

	SETUP(c, r->name, mgmt(c, ZDEV_ZONE_OPEN, 0));
	ret = wr(c, 0, 0, 1, 0xa7);
	verdict_zone(c, r, 0, ret, 0, ZDEV_COND_EXP_OPEN, 1);
	return 0;
}

/* ---- 4-5: capacity, zone end, full zones ----------------------------- */

#define SPLIT_WHY                                                          \
	"the simulator models one device command and refuses it whole; the " \
	"kernel splits block-device I/O at zone ends"

static const char *no_gap(const struct conform *c)
{
	return c->cap == c->zs ? "capacity = zone size" : NULL;
}

static int write_crossing_capacity(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba;
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, cap_lbas - 1, 0xb1));
	ret = wr(c, 0, cap_lbas - 1, 2, 0xb1);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
	return 0;
}

/* Chained: zone 0 open at capacity - 1. */
static int write_in_gap(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba;
	int ret;

	ret = wr(c, 0, cap_lbas, 1, 0xb1);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
	return 0;
}

/* Chained: zone 0 open at capacity - 1. */
static int read_gap(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];

	rd_res(c, got, 0, c->cap / c->lba, 2, 0xb1);
	snprintf(exp, sizeof(exp), "OK,data=0,zeros=2");
	verdict(c, r->name, exp, got);
	return 0;
}

static int write_reaching_capacity(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba, zs_lbas = c->zs / c->lba;
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, cap_lbas - 1, 0xb2));
	ret = wr(c, 0, cap_lbas - 1, 1, 0xb2);
	verdict_zone(c, r, 0, ret, 0, ZDEV_COND_FULL, zs_lbas);
	return 0;
}

/* Chained: zone 0 full of 0xb2. */
static int write_to_full(struct conform *c, const struct rule *r)
{
	int ret;

	ret = wr(c, 0, 0, 1, 0xb2);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_FULL, c->zs / c->lba);
	return 0;
}

/* Chained: zone 0 full of 0xb2. */
static int read_full_capacity(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba;
	char exp[RES_LEN], got[RES_LEN];

	rd_res(c, got, 0, 0, cap_lbas, 0xb2);
	snprintf(exp, sizeof(exp), "OK,data=%llu,zeros=0",
		 (unsigned long long)cap_lbas);
	verdict(c, r->name, exp, got);
	return 0;
}

static const char *no_split_geometry(const struct conform *c)
{
	if (c->cap != c->zs)
		return "capacity < zone size";
	if (c->nr_seq < 2)
		return "fewer than 2 sequential zones";
	return NULL;
}

/*
 * The kernel splits a block-device write at the zone end; each piece
 * lands at its zone's wp, so this succeeds on Linux (measured, case
 * 4).  Needs capacity = zone size.
 */
static int write_across_zone_end(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba, zs_lbas = c->zs / c->lba;
	char exp[RES_LEN], got[RES_LEN], alt[RES_LEN];
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, cap_lbas - 1, 0xb3));
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
	verdict_alt(c, r->name, exp, alt, SPLIT_WHY, got);
	return 0;
}

/* ---- 6: reads ------------------------------------------------------- */

static int read_straddling_wp(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];

	SETUP(c, r->name, wr(c, 0, 0, 4, 0xc1));
	rd_res(c, got, 0, 2, 8, 0xc1);
	snprintf(exp, sizeof(exp), "OK,data=2,zeros=6");
	verdict(c, r->name, exp, got);
	return 0;
}

/* Chained: zone 0 holds 4 LBAs of 0xc1 (the only zone: its data). */
static int read_empty_zone(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];

	rd_res(c, got, 1 < c->nr_seq ? 1 : 0, 0, 4, 0xc1);
	snprintf(exp, sizeof(exp), "OK,data=0,zeros=4");
	if (c->nr_seq < 2)
		snprintf(exp, sizeof(exp), "OK,data=4,zeros=0");
	verdict(c, r->name, exp, got);
	return 0;
}

static const char *one_zone(const struct conform *c)
{
	return c->nr_seq < 2 ? "fewer than 2 sequential zones" : NULL;
}

static int read_across_zone_end(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];

	rd_res(c, got, 0, c->zs / c->lba - 1, 2, 0xc1);
	snprintf(exp, sizeof(exp), "OK,data=0,zeros=2");
	verdict_alt(c, r->name, exp, "EIO", SPLIT_WHY, got);
	return 0;
}

static int reset_destroys_data(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];

	SETUP(c, r->name, wr(c, 0, 0, 4, 0xc2));
	SETUP(c, r->name, mgmt(c, ZDEV_ZONE_RESET, 0));
	rd_res(c, got, 0, 0, 4, 0xc2);
	res_zone_got(c, got, 0);
	snprintf(exp, sizeof(exp), "OK,data=0,zeros=4");
	res_zone(exp, 0, ZDEV_COND_EMPTY, 0);
	verdict(c, r->name, exp, got);
	return 0;
}

/* ---- 7: zone management transitions --------------------------------- */

/* One management op on zone 0 from a prepared state (struct transition). */
static int transition(struct conform *c, const struct rule *r)
{
	const struct transition *t = &r->tr;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t wp = t->wp == WP_ZONE_END ? c->zs / c->lba : t->wp;
	int ret;

	switch (t->prep) {
	case PREP_EMPTY:
		break;
	case PREP_IMP_OPEN:
		SETUP(c, r->name, wr(c, 0, 0, 2, 0xd1));
		break;
	case PREP_EXP_OPEN:
		SETUP(c, r->name, mgmt(c, ZDEV_ZONE_OPEN, 0));
		break;
	case PREP_CLOSED:
		SETUP(c, r->name, wr(c, 0, 0, 2, 0xd1));
		SETUP(c, r->name, mgmt(c, ZDEV_ZONE_CLOSE, 0));
		break;
	case PREP_FULL:
		SETUP(c, r->name, mgmt(c, ZDEV_ZONE_FINISH, 0));
		break;
	}
	ret = mgmt(c, t->action, 0);
	res_start(exp, t->ret);
	res_zone(exp, 0, t->cond, wp);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	verdict(c, r->name, exp, got);
	return 0;
}

/* ---- 8-9: open and active limits ------------------------------------ */

static const char *no_open_limit_room(const struct conform *c)
{
	uint32_t mo = c->dev->info.max_open, ma = c->dev->info.max_active;

	if (!mo)
		return "max_open = 0 (no open limit)";
	if (c->nr_seq < (uint64_t)mo + 2 || (ma && ma < mo + 1))
		return "needs max_open + 2 zones and max_active > max_open";
	return NULL;
}

static int open_limit_fifo(struct conform *c, const struct rule *r)
{
	uint32_t mo = c->dev->info.max_open;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t k;
	int ret;

	for (k = 0; k < mo; k++)
		SETUP(c, r->name, wr(c, k, 0, 1, 0xe1));
	ret = wr(c, mo, 0, 1, 0xe1);
	res_start(exp, 0);
	res_zone(exp, 0, ZDEV_COND_CLOSED, 1);
	res_zone(exp, 1, ZDEV_COND_IMP_OPEN, 1);
	res_zone(exp, mo, ZDEV_COND_IMP_OPEN, 1);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	res_zone_got(c, got, 1);
	res_zone_got(c, got, mo);
	verdict(c, r->name, exp, got);
	return 0;
}

/* Chained: zone 0 closed at +1, zones 1 .. max_open open at +1. */
static int reopen_closed_evicts(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];
	int ret;

	ret = wr(c, 0, 1, 1, 0xe1);
	res_start(exp, 0);
	res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 2);
	res_zone(exp, 1, ZDEV_COND_CLOSED, 1);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	res_zone_got(c, got, 1);
	verdict(c, r->name, exp, got);
	return 0;
}

static int open_all_explicit(struct conform *c, const struct rule *r)
{
	uint32_t mo = c->dev->info.max_open;
	uint64_t k;
	int ret;

	for (k = 0; k < mo; k++)
		SETUP(c, r->name, mgmt(c, ZDEV_ZONE_OPEN, k));
	ret = mgmt(c, ZDEV_ZONE_OPEN, mo);
	verdict_zone(c, r, mo, ret, -ETOOMANYREFS, ZDEV_COND_EMPTY, 0);
	return 0;
}

/* Chained: zones 0 .. max_open - 1 explicitly open. */
static int write_all_explicit(struct conform *c, const struct rule *r)
{
	uint32_t mo = c->dev->info.max_open;
	int ret;

	ret = wr(c, mo, 0, 1, 0xe2);
	verdict_zone(c, r, mo, ret, -ETOOMANYREFS, ZDEV_COND_EMPTY, 0);
	return 0;
}

/* Chained: zones 0 .. max_open - 1 explicitly open. */
static int close_frees_open_slot(struct conform *c, const struct rule *r)
{
	uint32_t mo = c->dev->info.max_open;
	char exp[RES_LEN], got[RES_LEN];
	int ret;

	SETUP(c, r->name, mgmt(c, ZDEV_ZONE_CLOSE, 0));
	ret = wr(c, mo, 0, 1, 0xe2);
	res_start(exp, 0);
	res_zone(exp, 0, ZDEV_COND_CLOSED, 0);
	res_zone(exp, mo, ZDEV_COND_IMP_OPEN, 1);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	res_zone_got(c, got, mo);
	verdict(c, r->name, exp, got);
	return 0;
}

static const char *no_active_limit_room(const struct conform *c)
{
	uint32_t ma = c->dev->info.max_active;

	if (!ma)
		return "max_active = 0 (no active limit)";
	if (c->nr_seq < (uint64_t)ma + 2)
		return "needs max_active + 2 zones";
	return NULL;
}

/*
 * Write one LBA to zones 0 .. ma in turn: the first ma succeed (the
 * open limit closes the oldest ones), the next is EOVERFLOW and still
 * closes the oldest implicitly open zone (measured, case 9).
 */
static int active_limit(struct conform *c, const struct rule *r)
{
	uint32_t mo = c->dev->info.max_open, ma = c->dev->info.max_active;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t k, nr_closed;
	int ret;

	for (k = 0; k < ma; k++)
		SETUP(c, r->name, wr(c, k, 0, 1, 0xe3));
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
	verdict(c, r->name, exp, got);
	return 0;
}

/* Chained: zones 0 .. max_active - 1 active, zone max_active empty. */
static int finish_empty_at_limit(struct conform *c, const struct rule *r)
{
	uint32_t ma = c->dev->info.max_active;
	int ret;

	ret = mgmt(c, ZDEV_ZONE_FINISH, ma);
	verdict_zone(c, r, ma, ret, 0, ZDEV_COND_FULL, c->zs / c->lba);
	return 0;
}

/* Chained: zones 0 .. max_active - 1 active. */
static int finish_frees_active_slot(struct conform *c, const struct rule *r)
{
	uint32_t ma = c->dev->info.max_active;
	int ret;

	SETUP(c, r->name, mgmt(c, ZDEV_ZONE_FINISH, 0));
	ret = wr(c, ma + 1, 0, 1, 0xe3);
	verdict_zone(c, r, ma + 1, ret, 0, ZDEV_COND_IMP_OPEN, 1);
	return 0;
}

static const char *no_active_limit(const struct conform *c)
{
	uint32_t ma = c->dev->info.max_active;

	if (!ma)
		return "max_active = 0 (no active limit)";
	if (c->nr_seq < (uint64_t)ma + 1)
		return "needs max_active + 1 zones";
	return NULL;
}

static int closed_at_zero_active(struct conform *c, const struct rule *r)
{
	uint32_t ma = c->dev->info.max_active;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t k;
	int ret;

	for (k = 0; k < ma; k++) {
		SETUP(c, r->name, mgmt(c, ZDEV_ZONE_OPEN, k));
		SETUP(c, r->name, mgmt(c, ZDEV_ZONE_CLOSE, k));
	}
	ret = wr(c, ma, 0, 1, 0xe4);
	res_start(exp, -EOVERFLOW);
	res_zone(exp, 0, ZDEV_COND_CLOSED, 0);
	res_zone(exp, ma, ZDEV_COND_EMPTY, 0);
	res_start(got, ret);
	res_zone_got(c, got, 0);
	res_zone_got(c, got, ma);
	verdict(c, r->name, exp, got);
	return 0;
}

/* ---- 10-11: zone append ---------------------------------------------- */

static const char *no_append(const struct conform *c)
{
	return c->dev->info.max_append ? NULL :
					 "no zone append (max_append = 0)";
}

/* Where an append landed, in LBAs from the start of zone 0. */
static long long landed(const struct conform *c, uint64_t off)
{
	return (long long)(off - at(c, 0, 0)) / (long long)c->lba;
}

static int append_at_zone_start(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];
	uint64_t off = 0;
	int ret;

	ret = app(c, 0, 1, 0xf1, &off);
	res_start(exp, 0);
	res_add(exp, ",at=+0");
	res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 1);
	res_start(got, ret);
	res_add(got, ",at=+%lld", landed(c, off));
	res_zone_got(c, got, 0);
	verdict(c, r->name, exp, got);
	return 0;
}

/* Chained: one LBA of 0xf1 appended to zone 0. */
static int appends_and_writes_share_wp(struct conform *c,
				       const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];
	uint64_t off2 = 0, off3 = 0;
	int ret;

	ret = app(c, 0, 2, 0xf1, &off2);
	if (!ret)
		ret = wr(c, 0, 3, 1, 0xf1);
	if (!ret)
		ret = app(c, 0, 1, 0xf1, &off3);
	res_start(exp, 0);
	res_add(exp, ",at=+1,+4");
	res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 5);
	res_start(got, ret);
	res_add(got, ",at=+%lld,+%lld", landed(c, off2), landed(c, off3));
	res_zone_got(c, got, 0);
	verdict(c, r->name, exp, got);
	return 0;
}

/* Chained: 5 LBAs of 0xf1 in zone 0. */
static int appended_data_reads_back(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];

	rd_res(c, got, 0, 0, 5, 0xf1);
	snprintf(exp, sizeof(exp), "OK,data=5,zeros=0");
	verdict(c, r->name, exp, got);
	return 0;
}

static int append_not_at_zone_start(struct conform *c, const struct rule *r)
{
	uint64_t off = 0;
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, 1, 0xf2));
	memset(c->buf, 0xf2, c->lba);
	ret = zdev_append(c->dev, c->buf, c->lba, at(c, 0, 1), 0,
			  ZDEV_CLASS_OTHER, &off);
	verdict_zone(c, r, 0, ret, -EINVAL, ZDEV_COND_IMP_OPEN, 1);
	return 0;
}

static const char *no_max_append_room(const struct conform *c)
{
	uint64_t ma = c->dev->info.max_append;

	if (!ma)
		return no_append(c);
	return ma + c->lba > c->cap ? "max_append + 1 LBA above capacity" :
				      NULL;
}

static int append_of_max_append(struct conform *c, const struct rule *r)
{
	uint64_t ma = c->dev->info.max_append;
	uint64_t off = 0;
	int ret;

	ret = app(c, 0, ma / c->lba, 0xf3, &off);
	verdict_zone(c, r, 0, ret, 0, ZDEV_COND_IMP_OPEN, ma / c->lba);
	return 0;
}

/* Chained: max_append bytes appended to zone 0. */
static int append_above_max_append(struct conform *c, const struct rule *r)
{
	uint64_t ma = c->dev->info.max_append;
	uint64_t off = 0;
	int ret;

	ret = app(c, 0, ma / c->lba + 1, 0xf3, &off);
	verdict_zone(c, r, 0, ret, -EINVAL, ZDEV_COND_IMP_OPEN, ma / c->lba);
	return 0;
}

static int append_crossing_capacity(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba;
	uint64_t off = 0;
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, cap_lbas - 1, 0xf4));
	ret = app(c, 0, 2, 0xf4, &off);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_IMP_OPEN, cap_lbas - 1);
	return 0;
}

/* Chained: zone 0 open at capacity - 1. */
static int append_reaching_capacity(struct conform *c, const struct rule *r)
{
	uint64_t cap_lbas = c->cap / c->lba;
	char exp[RES_LEN], got[RES_LEN];
	uint64_t off = 0;
	int ret;

	ret = app(c, 0, 1, 0xf4, &off);
	res_start(exp, 0);
	res_add(exp, ",at=+%llu", (unsigned long long)(cap_lbas - 1));
	res_zone(exp, 0, ZDEV_COND_FULL, c->zs / c->lba);
	res_start(got, ret);
	res_add(got, ",at=+%lld", landed(c, off));
	res_zone_got(c, got, 0);
	verdict(c, r->name, exp, got);
	return 0;
}

/* Chained: zone 0 full. */
static int append_to_full(struct conform *c, const struct rule *r)
{
	uint64_t off = 0;
	int ret;

	ret = app(c, 0, 1, 0xf4, &off);
	verdict_zone(c, r, 0, ret, -EIO, ZDEV_COND_FULL, c->zs / c->lba);
	return 0;
}

static int append_to_closed(struct conform *c, const struct rule *r)
{
	char exp[RES_LEN], got[RES_LEN];
	uint64_t off = 0;
	int ret;

	SETUP(c, r->name, wr(c, 0, 0, 2, 0xf5));
	SETUP(c, r->name, mgmt(c, ZDEV_ZONE_CLOSE, 0));
	ret = app(c, 0, 1, 0xf5, &off);
	res_start(exp, 0);
	res_add(exp, ",at=+2");
	res_zone(exp, 0, ZDEV_COND_IMP_OPEN, 3);
	res_start(got, ret);
	res_add(got, ",at=+%lld", landed(c, off));
	res_zone_got(c, got, 0);
	verdict(c, r->name, exp, got);
	return 0;
}

/* ---- the backend: caller buffers that are not lba-aligned ------------ */

static int unaligned_buffers(struct conform *c, const struct rule *r)
{
	uint64_t nr = 3, len = nr * c->lba, off = 0, i;
	char exp[RES_LEN], got[RES_LEN];
	uint8_t *src, *dst;
	bool is_same;
	int ret;

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
	verdict(c, r->name, exp, got);
	return 0;
}

/* FUA writes and appends (passthrough: cdw12 bit 30) and a flush. */
static int fua_and_flush(struct conform *c, const struct rule *r)
{
	uint64_t off = 0;
	int ret;

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
	verdict_zone(c, r, 0, ret, 0, ZDEV_COND_IMP_OPEN, 2);
	return 0;
}

/* ---- the rule table ------------------------------------------------- */

/*
 * The rules in the order they run.  SOURCE names the section of
 * docs/device-rules.md that states the rule and the measured case it
 * comes from.  A rule with
 * a cannot_run() that answers is reported "skipped (why)"; a CHAINED rule
 * runs on the zones its predecessor left (no reset), only after it ran,
 * and is selected (--only) with it.
 */
#define RULE(n, src, fn, cant)						\
	{ .name = n, .source = src, .check = fn, .cannot_run = cant }
#define CHAINED(n, src, fn)						\
	{ .name = n, .source = src, .check = fn, .is_chained = true }
#define TRANSITION(n, src, p, a, r, cnd, w)				\
	{ .name = n, .source = src, .check = transition,		\
	  .tr = { p, a, r, cnd, w } }

static const struct rule rules[] = {
	/* 1-5: writes relative to the write pointer */
	RULE("write_at_wp_of_empty_opens_implicitly",
	     "Writes: a write at the wp opens EMPTY implicitly (case 1)",
	     write_at_wp_of_empty, NULL),
	RULE("write_below_wp_is_eio",
	     "Writes: not exactly at the wp, below (case 2)",
	     write_below_wp, NULL),
	RULE("write_above_wp_is_eio",
	     "Writes: not exactly at the wp, above (case 3)",
	     write_above_wp, NULL),
	RULE("write_overlapping_wp_is_eio_nothing_written",
	     "Writes: not exactly at the wp, overlapping; nothing changes "
	     "(case 3)",
	     write_overlapping_wp, NULL),
	RULE("write_above_wp_of_empty_stays_empty",
	     "Writes: not at the wp, an EMPTY zone is not opened (case 3)",
	     write_above_wp_of_empty, NULL),
	RULE("write_above_wp_of_closed_stays_closed",
	     "Writes: not at the wp, a CLOSED zone is not opened (case 3)",
	     write_above_wp_of_closed, NULL),
	CHAINED("write_at_wp_of_closed_reopens_implicitly",
		"Writes: a write at the wp opens CLOSED implicitly (case 3)",
		write_at_wp_of_closed),
	RULE("write_at_wp_of_explicit_open_stays_explicit",
	     "Writes: a write at the wp, EXP_OPEN stays (case 13)",
	     write_at_wp_of_explicit, NULL),

	/* 4-5: capacity, zone end, full zones */
	RULE("write_crossing_capacity_is_eio",
	     "Writes: crossing the capacity, refused whole (case 4 B)",
	     write_crossing_capacity, no_gap),
	CHAINED("write_in_gap_of_open_zone_is_eio",
		"Writes: in the gap of a non-full zone, not at the wp "
		"(case 4 B)",
		write_in_gap),
	CHAINED("read_gap_of_open_zone_returns_zeros",
		"Reads: the cap..size gap reads zeros (case 6 B)", read_gap),
	RULE("write_reaching_capacity_makes_full_wp_at_zone_size",
	     "Zones and report: FULL at the capacity, wp = start + zone "
	     "size (cases 4, 12)",
	     write_reaching_capacity, NULL),
	CHAINED("write_to_full_zone_is_eio",
		"Writes: zone FULL, checked before the wp (case 5)",
		write_to_full),
	CHAINED("read_whole_capacity_of_full_zone",
		"Reads: below the wp the data (case 6)", read_full_capacity),
	RULE("write_across_zone_end_into_empty_zone_is_split",
	     "Writes: crossing the zone end; the kernel splits, the "
	     "simulator refuses (case 4 A; documented difference)",
	     write_across_zone_end, no_split_geometry),

	/* 6: reads */
	RULE("read_straddling_wp_gives_data_then_zeros",
	     "Reads: data below the wp, zeros above (case 6)",
	     read_straddling_wp, NULL),
	CHAINED("read_empty_zone_returns_zeros",
		"Reads: an empty zone reads zeros (case 6)", read_empty_zone),
	RULE("read_across_zone_end_is_split",
	     "Reads: crossing a zone end; the kernel splits, the simulator "
	     "refuses READ_BOUNDARY (case 6; documented difference)",
	     read_across_zone_end, one_zone),
	RULE("reset_destroys_data",
	     "Zone management: reset destroys the data (case 6)",
	     reset_destroys_data, NULL),

	/* 7: zone management transitions */
	TRANSITION("open_empty_gives_explicit_open",
		   "Zone management: EMPTY x open (case 7)", PREP_EMPTY,
		   ZDEV_ZONE_OPEN, 0, ZDEV_COND_EXP_OPEN, 0),
	TRANSITION("open_implicit_gives_explicit_open",
		   "Zone management: IMP_OPEN x open (case 7)", PREP_IMP_OPEN,
		   ZDEV_ZONE_OPEN, 0, ZDEV_COND_EXP_OPEN, 2),
	TRANSITION("open_explicit_is_ok",
		   "Zone management: EXP_OPEN x open (case 7)", PREP_EXP_OPEN,
		   ZDEV_ZONE_OPEN, 0, ZDEV_COND_EXP_OPEN, 0),
	TRANSITION("open_closed_gives_explicit_open",
		   "Zone management: CLOSED x open (case 7)", PREP_CLOSED,
		   ZDEV_ZONE_OPEN, 0, ZDEV_COND_EXP_OPEN, 2),
	TRANSITION("open_full_is_eio",
		   "Zone management: FULL x open (case 7)", PREP_FULL,
		   ZDEV_ZONE_OPEN, -EIO, ZDEV_COND_FULL, WP_ZONE_END),
	TRANSITION("close_empty_is_eio",
		   "Zone management: EMPTY x close (case 7)", PREP_EMPTY,
		   ZDEV_ZONE_CLOSE, -EIO, ZDEV_COND_EMPTY, 0),
	TRANSITION("close_implicit_gives_closed",
		   "Zone management: IMP_OPEN x close (case 7)",
		   PREP_IMP_OPEN, ZDEV_ZONE_CLOSE, 0, ZDEV_COND_CLOSED, 2),
	TRANSITION("close_explicit_at_zero_gives_closed_not_empty",
		   "Zone management: EXP_OPEN x close, CL+0 not EMPTY "
		   "(case 7, measured)",
		   PREP_EXP_OPEN, ZDEV_ZONE_CLOSE, 0, ZDEV_COND_CLOSED, 0),
	TRANSITION("close_closed_is_ok",
		   "Zone management: CLOSED x close (case 7)", PREP_CLOSED,
		   ZDEV_ZONE_CLOSE, 0, ZDEV_COND_CLOSED, 2),
	TRANSITION("close_full_is_eio",
		   "Zone management: FULL x close (case 7)", PREP_FULL,
		   ZDEV_ZONE_CLOSE, -EIO, ZDEV_COND_FULL, WP_ZONE_END),
	TRANSITION("finish_empty_gives_full",
		   "Zone management: EMPTY x finish (case 7)", PREP_EMPTY,
		   ZDEV_ZONE_FINISH, 0, ZDEV_COND_FULL, WP_ZONE_END),
	TRANSITION("finish_implicit_gives_full",
		   "Zone management: IMP_OPEN x finish (case 7)",
		   PREP_IMP_OPEN, ZDEV_ZONE_FINISH, 0, ZDEV_COND_FULL,
		   WP_ZONE_END),
	TRANSITION("finish_explicit_gives_full",
		   "Zone management: EXP_OPEN x finish (case 7)",
		   PREP_EXP_OPEN, ZDEV_ZONE_FINISH, 0, ZDEV_COND_FULL,
		   WP_ZONE_END),
	TRANSITION("finish_closed_gives_full",
		   "Zone management: CLOSED x finish (case 7)", PREP_CLOSED,
		   ZDEV_ZONE_FINISH, 0, ZDEV_COND_FULL, WP_ZONE_END),
	TRANSITION("finish_full_is_ok",
		   "Zone management: FULL x finish (case 7)", PREP_FULL,
		   ZDEV_ZONE_FINISH, 0, ZDEV_COND_FULL, WP_ZONE_END),
	TRANSITION("reset_empty_is_ok",
		   "Zone management: EMPTY x reset (case 7)", PREP_EMPTY,
		   ZDEV_ZONE_RESET, 0, ZDEV_COND_EMPTY, 0),
	TRANSITION("reset_implicit_gives_empty",
		   "Zone management: IMP_OPEN x reset (case 7)",
		   PREP_IMP_OPEN, ZDEV_ZONE_RESET, 0, ZDEV_COND_EMPTY, 0),
	TRANSITION("reset_closed_gives_empty",
		   "Zone management: CLOSED x reset (case 7)", PREP_CLOSED,
		   ZDEV_ZONE_RESET, 0, ZDEV_COND_EMPTY, 0),
	TRANSITION("reset_full_gives_empty",
		   "Zone management: FULL x reset (case 7)", PREP_FULL,
		   ZDEV_ZONE_RESET, 0, ZDEV_COND_EMPTY, 0),

	/* 8-9: open and active limits */
	RULE("open_limit_closes_oldest_implicit_fifo",
	     "Open and active limits, 1: the oldest-opened IMP_OPEN zone is "
	     "closed, FIFO (case 8, measured)",
	     open_limit_fifo, no_open_limit_room),
	CHAINED("reopen_closed_evicts_next_oldest_implicit",
		"Open and active limits, 1: reopening a CLOSED zone evicts "
		"too (case 8)",
		reopen_closed_evicts),
	RULE("open_limit_all_explicit_is_etoomanyrefs",
	     "Open and active limits, 3: only explicitly open zones "
	     "(case 8)",
	     open_all_explicit, no_open_limit_room),
	CHAINED("write_with_all_explicit_open_is_etoomanyrefs",
		"Open and active limits, 3: a write needs an open slot "
		"(case 8)",
		write_all_explicit),
	CHAINED("close_frees_an_open_slot",
		"Open and active limits: closing frees slots (case 8)",
		close_frees_open_slot),
	RULE("active_limit_is_eoverflow_and_still_closes_oldest",
	     "Open and active limits, 1-2: EOVERFLOW, the close stays "
	     "(case 9, measured)",
	     active_limit, no_active_limit_room),
	CHAINED("finish_empty_at_active_limit_needs_no_slot",
		"Open and active limits: finishing an EMPTY zone needs no "
		"slot (case 9)",
		finish_empty_at_limit),
	CHAINED("finish_frees_an_active_slot",
		"Open and active limits: finishing frees slots (case 9)",
		finish_frees_active_slot),
	RULE("closed_at_zero_holds_an_active_slot",
	     "Open and active limits: CLOSED with wp = start is active "
	     "(case 9, measured)",
	     closed_at_zero_active, no_active_limit),

	/* 10-11: zone append */
	RULE("append_at_zone_start_returns_wp_before",
	     "Zone append: success returns the wp before (case 10)",
	     append_at_zone_start, no_append),
	CHAINED("appends_and_writes_share_one_wp",
		"Zone append: appends and writes share one wp (case 11)",
		appends_and_writes_share_wp),
	CHAINED("appended_data_reads_back",
		"Zone append: the data reads back (case 10)",
		appended_data_reads_back),
	RULE("append_not_at_zone_start_is_einval",
	     "Zone append: offset not a zone start, even at the wp "
	     "(case 10, measured)",
	     append_not_at_zone_start, no_append),
	RULE("append_of_max_append_is_ok",
	     "Zone append: a length of max_append (case 10)",
	     append_of_max_append, no_max_append_room),
	CHAINED("append_above_max_append_is_einval",
		"Zone append: length above max_append (case 10 B)",
		append_above_max_append),
	RULE("append_crossing_capacity_is_eio",
	     "Zone append: crossing the capacity, Zone Boundary Error "
	     "(case 10, measured)",
	     append_crossing_capacity, no_append),
	CHAINED("append_reaching_capacity_makes_full",
		"Zone append: reaching the capacity makes the zone FULL "
		"(case 10)",
		append_reaching_capacity),
	CHAINED("append_to_full_zone_is_eio",
		"Zone append: full, as for writes (case 10)", append_to_full),
	RULE("append_to_closed_zone_reopens_implicitly",
	     "Zone append: as for writes, CLOSED opens implicitly (case 10)",
	     append_to_closed, no_append),

	/* the zdev layer and the backends */
	RULE("unaligned_buffers_write_append_read_back",
	     "dev/zdev.h: any caller buffer; a backend bounces unaligned "
	     "ones",
	     unaligned_buffers, NULL),
	RULE("fua_write_append_and_flush",
	     "Volatile write cache: FUA writes and appends, flush",
	     fua_and_flush, NULL),
};

/*
 * Run every rule of the table: selected by --only, skipped when the
 * geometry cannot hold it, else on reset zones (a chained rule on the
 * zones its predecessor left, if that one ran).
 */
static void run_rules(struct conform *c)
{
	bool has_run = false;	/* the last rule ran: chained ones may */
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct rule *r = &rules[i];
		const char *why;

		if (r->is_chained) {
			if (has_run)
				has_run = !r->check(c, r);
			continue;
		}
		has_run = false;
		if (!is_selected(c, r->name))
			continue;
		why = r->cannot_run ? r->cannot_run(c) : NULL;
		if (why) {
			skip(c, r->name, why);
			continue;
		}
		if (begin(c, r->name))
			has_run = !r->check(c, r);
	}
}

/* --list: "NAME: SOURCE" per rule, in order. */
static void list_rules(void)
{
	size_t i;

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		printf("%s: %s\n", rules[i].name, rules[i].source);
}

static void conform_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow conform DEV [--only SUBSTRING]\n"
		"       zcow conform --list\n"
		"  Check the device rules (docs/device-rules.md) on DEV through\n"
		"  the zdev layer; one line per rule, then a summary.\n"
		"  DESTROYS ALL DATA: every rule resets all zones first.\n"
		"  Exit status 0 when every rule agreed, 1 when one differed.\n"
		"  --list: the rules and where each is stated, no device.\n");
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
		if (strcmp(argv[i], "--list") == 0) {
			list_rules();
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
	ret = open_dev("conform", spec, &c.dev);
	if (ret)
		return ret;
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
	run_rules(&c);
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
