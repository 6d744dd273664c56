// SPDX-License-Identifier: MIT
/*
 * zfio_ctl: parsing and checking the options that control a job's run as
 * a whole (see fio_ctl.h); fio's rules (options.c, td_error.c,
 * steadystate.c), each error a reason for fio.c to put behind the file,
 * line and option.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"

void zfio_ctl_defaults(struct zfio_ctl *c)
{
	memset(c, 0, sizeof(*c));
	c->error_dump = true;		/* fio's fill_def_thread() */
	c->exit_what = ZFIO_EXIT_GROUP;
	c->lat_pct = 100.0;
	c->ss = ZFIO_SS_IOPS_SLOPE;	/* fio's "iops_slope:0.01%" */
	c->ss_is_pct = true;
	c->ss_limit = 0.01;
	c->engine = ZFIO_ENGINE_PLAIN;
}

static int why_fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int why_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- errors ----------------------------------------------------------- */

/* continue_on_error=none|read|write|io|verify|all|0|1 (fio's values). */
int zfio_ctl_continue_on_error(struct zfio_ctl *c, const char *val,
			       char *why, size_t len)
{
	static const struct {
		const char *name;
		uint32_t mask;
	} vals[] = {
		{ "none", 0 }, { "0", 0 },
		{ "read", 1u << ZFIO_ERR_READ },
		{ "write", 1u << ZFIO_ERR_WRITE },
		{ "io", (1u << ZFIO_ERR_READ) | (1u << ZFIO_ERR_WRITE) },
		{ "verify", 1u << ZFIO_ERR_VERIFY },
		{ "all", ZFIO_ERR_ALL }, { "1", ZFIO_ERR_ALL },
	};
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		if (strcmp(val, vals[i].name))
			continue;
		c->continue_on = vals[i].mask;
		return 0;
	}
	return why_fail(why, len, "'%s' is not none, read, write, io, verify "
			"or all (or 0, 1)", val);
}

/*
 * The error names fio's ignore_error knows (options.c str2error): errno 1
 * to 34, in order; any other error is given by its number.
 */
static const char *const err_names[] = {
	"EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG",
	"ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT",
	"ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR",
	"EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
	"ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
};

#define NR_ERR_NAMES	(sizeof(err_names) / sizeof(err_names[0]))

/* Errno numbers a list may hold: fio takes any positive int; errnos
 * above 4095 do not exist (Linux's MAX_ERRNO). */
#define MAX_ERRNO_NR	4095

const char *zfio_errno_name(int err, char *buf, size_t len)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%d", err);
	return buf;
}

/* One error of a list: a name of err_names[] or a number (a leading '-'
 * is dropped, as fio's atoi() and abs). */
static int parse_one_error(const char *s, int *ret, char *why, size_t len)
{
	const char *p = s;
	unsigned long v;
	char *end;
	size_t i;

	if (s[0] == 'E') {
		for (i = 0; i < NR_ERR_NAMES; i++)
			if (!strcmp(s, err_names[i])) {
				*ret = (int)i + 1;
				return 0;
			}
		return why_fail(why, len, "unknown error '%s' (fio knows "
				"EPERM..ERANGE, errno 1..34 by name: give "
				"others by number)", s);
	}
	if (*p == '-')
		p++;
	errno = 0;
	v = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : 0;
	if (!isdigit((unsigned char)*p) || errno || *end || !v ||
	    v > MAX_ERRNO_NR)
		return why_fail(why, len, "'%s' is not an error name or "
				"number (1..%u)", s, MAX_ERRNO_NR);
	*ret = (int)v;
	return 0;
}

/*
 * ignore_error=READS[,WRITES[,VERIFIES]], each a ':'-separated list of
 * errors (fio's str_ignore_error_cb): a class with a list gets that list
 * and continue_on_error for it; an empty part (or one that starts with
 * ':', where fio stops reading) leaves its class as it was.
 */
int zfio_ctl_ignore_error(struct zfio_ctl *c, const char *val, char *why,
			  size_t len)
{
	char buf[512], *part = buf, *next;
	unsigned int cls = 0;

	if (strlen(val) >= sizeof(buf))
		return why_fail(why, len, "value too long");
	snprintf(buf, sizeof(buf), "%s", val);
	for (; part; part = next, cls++) {
		char *tok, *rest;
		uint32_t n = 0;

		next = strchr(part, ',');
		if (next)
			*next++ = '\0';
		if (cls == ZFIO_NR_ERR_CLASSES)
			return why_fail(why, len, "more than 3 comma-separated "
					"lists (reads, writes, verifies)");
		for (rest = part; (tok = strsep(&rest, ":")) && *tok;) {
			int e = 0, r;

			if (n == ZFIO_MAX_IGNORE)
				return why_fail(why, len, "more than %u errors "
						"in one list", ZFIO_MAX_IGNORE);
			r = parse_one_error(tok, &e, why, len);
			if (r)
				return r;
			c->ignore[cls][n++] = e;
		}
		if (!n)
			continue;
		c->nr_ignore[cls] = n;
		c->continue_on |= 1u << cls;
	}
	return 0;
}

enum zfio_err_class zfio_err_class_of(bool is_read, int err)
{
	if (err == EILSEQ)
		return ZFIO_ERR_VERIFY;
	return is_read ? ZFIO_ERR_READ : ZFIO_ERR_WRITE;
}

bool zfio_ctl_is_non_fatal(const struct zfio_ctl *c, enum zfio_err_class cls,
			   int err)
{
	uint32_t i;

	if (!(c->continue_on & (1u << cls)))
		return false;
	if (!c->nr_ignore[cls])		/* fio's __NON_FATAL_ERR */
		return err == EIO || err == EILSEQ;
	for (i = 0; i < c->nr_ignore[cls]; i++)
		if (c->ignore[cls][i] == err)
			return true;
	return false;
}

/* ---- exits ------------------------------------------------------------ */

/* ---- latency target and steady state --------------------------------- */

static bool get_float(const char *s, double *ret)
{
	char *end;

	errno = 0;
	*ret = strtod(s, &end);
	while (end != s && isspace((unsigned char)*end))
		end++;
	return !errno && end != s && !*end && isfinite(*ret);
}

int zfio_ctl_percentile(struct zfio_ctl *c, const char *val, char *why,
			size_t len)
{
	double v;

	if (!get_float(val, &v) || v < 0.0 || v > 100.0)
		return why_fail(why, len, "'%s' is not a percentile in "
				"0..100", val);
	c->lat_pct = v;
	return 0;
}

/*
 * steadystate=CRITERION:LIMIT (fio's str_steadystate_cb): iops, iops_slope,
 * bw or bw_slope; the limit a percentage of the mean ("10%"), else a
 * number of I/Os per second (iops) or a size per second (bw, fio's size
 * syntax).
 */
int zfio_ctl_steadystate(struct zfio_ctl *c, const char *val, uint32_t kb_base,
			 char *why, size_t len)
{
	static const struct {
		const char *name;
		enum zfio_ss ss;
	} kinds[] = {
		{ "iops", ZFIO_SS_IOPS }, { "iops_slope", ZFIO_SS_IOPS_SLOPE },
		{ "bw", ZFIO_SS_BW }, { "bw_slope", ZFIO_SS_BW_SLOPE },
	};
	char buf[256], *lim, *pct;
	size_t i;
	double v;

	snprintf(buf, sizeof(buf), "%s", val);
	lim = strchr(buf, ':');
	if (lim)
		*lim++ = '\0';
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(buf, kinds[i].name))
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0]))
		return why_fail(why, len, "'%s' is not iops, iops_slope, bw or "
				"bw_slope", buf);
	if (!lim || !*lim)
		return why_fail(why, len, "'%s' needs its limit (%s:LIMIT, "
				"LIMIT a number or a percentage)", buf, buf);
	pct = strchr(lim, '%');
	if (pct) {
		*pct = '\0';
		if (pct[1] || !get_float(lim, &v))
			return why_fail(why, len, "limit '%s%%' is not a "
					"percentage", lim);
	} else if (kinds[i].ss == ZFIO_SS_IOPS ||
		   kinds[i].ss == ZFIO_SS_IOPS_SLOPE) {
		if (!get_float(lim, &v))
			return why_fail(why, len, "limit '%s' is not a number "
					"of I/Os per second", lim);
	} else {
		struct zfio_size sz;

		if (zfio_parse_size(lim, kb_base, &sz) ||
		    sz.unit != ZFIO_BYTES)
			return why_fail(why, len, "limit '%s' is not a "
					"bandwidth (bytes per second)", lim);
		v = (double)sz.val;
	}
	c->ss = kinds[i].ss;
	c->ss_is_pct = pct != NULL;
	c->ss_limit = v;
	return 0;
}

/* ---- the engines and the resolved job -------------------------------- */

enum zfio_engine zfio_ctl_engine(const char *name)
{
	if (!strcmp(name, "http"))
		return ZFIO_ENGINE_HTTP;
	if (!strcmp(name, "falloc"))
		return ZFIO_ENGINE_FALLOC;
	return ZFIO_ENGINE_PLAIN;
}

uint64_t zfio_rand_unit(const struct zfio_job *j)
{
	return j->ctl.rand_unit ? j->ctl.rand_unit : j->bs;
}

uint64_t zfio_rand_blocks(const struct zfio_job *j, uint64_t range_len)
{
	uint64_t unit = zfio_rand_unit(j);

	if (j->bs > unit) {
		if (range_len < j->bs - unit)
			return 0;
		range_len -= j->bs - unit;
	}
	return range_len / unit;
}

/*
 * blockalign: fio aligns a random pattern's offsets to it, per direction
 * (a sequential pattern, or a direction without it, uses its smallest
 * size).  zcow has one offset unit per job, so the directions the job
 * issues must agree.
 */
int zfio_ctl_check(struct zfio_job *j, char *err, size_t err_len)
{
	static const char *const names[3] = { "reads", "writes", "trims" };
	bool is_used[3] = {
		zfio_rw_has_read(j->rw), zfio_rw_has_write(j->rw),
		j->rw == ZFIO_TRIM || j->rw == ZFIO_RANDTRIM,
	};
	unsigned int d, first = 3;
	uint64_t unit = 0;

	j->ctl.rand_unit = 0;
	if (!zfio_rw_is_random(j->rw))
		return 0;
	for (d = 0; d < 3; d++) {
		uint64_t ba = j->ctl.ba[d] ? j->ctl.ba[d] : j->bs_min_d[d];

		if (!is_used[d])
			continue;
		if (first == 3) {
			first = d;
			unit = ba;
		} else if (ba != unit) {
			return zfio_err(err, err_len, j, ZFIO_OPT_BLOCKALIGN,
					"%s align to %llu bytes, %s to "
					"%llu: a job's directions must "
					"share it (its offset unit)",
					names[first],
					(unsigned long long)unit, names[d],
					(unsigned long long)ba);
		}
	}
	if (unit != j->bs)
		j->ctl.rand_unit = unit;
	return 0;
}

void zfio_ctl_print(FILE *out, const struct zfio_job *j)
{
	static const char *const what[] = { "group", "stonewall", "all" };
	static const char *const ss[] = { "iops", "iops_slope", "bw",
					  "bw_slope" };
	const struct zfio_ctl *c = &j->ctl;
	unsigned int k, i;
	char name[32];

	/* in fio's syntax: a class's list, or its default EIO:EILSEQ */
	if (c->continue_on) {
		fprintf(out, "continue_on_error=none\nignore_error=");
		for (k = 0; k < ZFIO_NR_ERR_CLASSES; k++) {
			fprintf(out, "%s", k ? "," : "");
			if (!(c->continue_on & (1u << k)))
				continue;
			if (!c->nr_ignore[k]) {
				fprintf(out, "EIO:%d", EILSEQ);
				continue;
			}
			for (i = 0; i < c->nr_ignore[k]; i++) {
				int e = c->ignore[k][i];

				if (e >= 1 && e <= (int)NR_ERR_NAMES)
					snprintf(name, sizeof(name), "%s",
						 err_names[e - 1]);
				else
					snprintf(name, sizeof(name), "%d", e);
				fprintf(out, "%s%s", i ? ":" : "", name);
			}
		}
		fprintf(out, "\n");
	}
	if (!c->error_dump)
		fprintf(out, "error_dump=0\n");
	if (c->exitall)
		fprintf(out, "exitall=1\n");
	if (c->exitall_on_error)
		fprintf(out, "exitall_on_error=1\n");
	if (c->new_group)
		fprintf(out, "new_group=1\n");
	if (c->group_reporting)
		fprintf(out, "group_reporting=1\n");
	if (c->exit_what != ZFIO_EXIT_GROUP)
		fprintf(out, "exit_what=%s\n", what[c->exit_what]);
	if (c->rand_unit)
		fprintf(out, "blockalign=%llu\n",
			(unsigned long long)c->rand_unit);
	if (c->lat_target_ns)
		fprintf(out, "latency_target=%lluus\nlatency_window=%lluus\n"
			     "latency_percentile=%.6g\nlatency_run=%d\n",
			(unsigned long long)(c->lat_target_ns / 1000),
			(unsigned long long)(c->lat_window_ns / 1000),
			c->lat_pct, c->lat_run);
	if (c->ss_dur_ns)
		fprintf(out, "steadystate=%s:%.6g%s\nsteadystate_duration=%llus"
			     "\nsteadystate_ramp_time=%lluus\n", ss[c->ss],
			c->ss_limit, c->ss_is_pct ? "%" : "",
			(unsigned long long)(c->ss_dur_ns / 1000000000ull),
			(unsigned long long)(c->ss_ramp_ns / 1000));
	if (c->engine == ZFIO_ENGINE_HTTP)
		fprintf(out, "ioengine=http\n");
	if (c->engine == ZFIO_ENGINE_FALLOC)
		fprintf(out, "ioengine=falloc\n");
}
