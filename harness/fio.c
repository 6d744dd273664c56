// SPDX-License-Identifier: MIT
/*
 * zfio: the fio job-file parser (see fio.h).
 *
 * Two steps.  Reading collects every section as a list of raw key=value
 * records with their file and line (includes expanded in place); a job
 * section remembers how much of the [global] list existed when it began
 * (fio: a [global] only affects the jobs below it).  Resolving applies, in
 * order, the globals seen so far, the section's own options and the --set
 * overrides to a job of fio's defaults; every value error names the record
 * that carried it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"
#include "grow.h"
#include "prng.h"

#define MAX_INCLUDE_DEPTH	8
#define MAX_LINE		4096

enum sect_kind { SECT_GLOBAL, SECT_JOB, SECT_ZCOW, SECT_CRASH };

struct zfio_sect {
	enum sect_kind kind;
	char name[ZFIO_NAME_LEN];
	char file[ZFIO_PATH_LEN];
	int line;
	unsigned int *kv;	/* indices into spec->kvs */
	unsigned int nr_kv;
	uint64_t kv_cap;
	unsigned int nr_globals;	/* job: globals (kv indices) in force */
	unsigned int *globals;
};

/* Options fio knows that have no meaning for zcow: accepted, listed. */
static const char *const ignored_opts[] = {
	"direct", "buffered", "thread",
	"lat_percentiles", "clat_percentiles", "slat_percentiles",
	"percentile_list", "sqthread_poll", "hipri", "fixedbufs",
	"registerfiles", "norandommap", "randrepeat", "invalidate",
	"allow_mounted_write", "ioscheduler",
	"cpus_allowed", "cpumask", "numa_cpu_nodes",
	"disable_lat", "disable_clat", "disable_slat",
	"disable_bw_measurement", "gtod_reduce",
	"iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete",
	"iodepth_batch_complete_min", "iodepth_batch_complete_max",
	"iodepth_low", "fallocate",
	"lockfile", "output-format",
	"recover_zbd_write_error", "overwrite", "nice",
	"userspace_reap", "fadvise_hint",
	"clocksource", "unified_rw_reporting", "description",
	"pre_read", "sync", "end_fsync_on_close", "nowait", "atomic",
};

/* ---- engine-only options: ignored or refused, with the reason ---------- */

/*
 * fio's I/O engines (network, RDMA, HTTP, NFS, GPU, ...) and its host
 * tuning (NUMA, CPU placement, submission threads) have options of their
 * own.  zcow maps every engine's I/O to its plain reads and writes of the
 * target, so these options are accepted and listed (ignored_options in
 * summary.json), each with the reason (zcow run --list-options).  Options
 * whose job has no reads or writes to map (the engine runs a program or
 * burns CPU) are refused with the reason instead.
 */
struct opt_why {
	const char *name;
	const char *why;
};

#define WHY_NET		"network engine (net, rdma, librpma): the I/O goes to " \
			"the zcow target"
#define WHY_HTTP	"http engine (S3, Swift, WebDAV): objects are zcow " \
			"files"
#define WHY_REMOTE	"remote storage engine (nfs, nbd, dfs, gfapi, rados, " \
			"rbd, hdfs): the I/O goes to the zcow target"
#define WHY_GPU		"GPU buffers (libcufile, gpudirect): zcow moves no " \
			"host or GPU memory"
#define WHY_MEM		"I/O buffer memory (malloc, shm, mmap, cudamalloc): " \
			"zcow moves no host memory"
#define WHY_HOST	"host placement (NUMA, CPU affinity): the simulated " \
			"device has no host"
#define WHY_ENGINE	"engine tuning: zcow submits each I/O as one plain " \
			"read or write"

static const struct opt_why engine_opts[] = {
	{ "hostname", WHY_NET }, { "port", WHY_NET }, { "protocol", WHY_NET },
	{ "listen", WHY_NET }, { "pingpong", WHY_NET }, { "ttl", WHY_NET },
	{ "interface", WHY_NET }, { "nodelay", WHY_NET },
	{ "window_size", WHY_NET }, { "mss", WHY_NET }, { "verb", WHY_NET },
	{ "bindname", WHY_NET }, { "serverip", WHY_NET },
	{ "busy_wait_polling", WHY_NET }, { "direct_write_to_pmem", WHY_NET },
	{ "http_verbose", WHY_HTTP }, { "http_mode", WHY_HTTP },
	{ "http_host", WHY_HTTP }, { "https", WHY_HTTP },
	{ "http_user", WHY_HTTP }, { "http_pass", WHY_HTTP },
	{ "http_s3_key", WHY_HTTP }, { "http_s3_keyid", WHY_HTTP },
	{ "http_s3_region", WHY_HTTP }, { "http_s3_storage_class", WHY_HTTP },
	{ "http_s3_sse_customer_key", WHY_HTTP },
	{ "http_s3_sse_customer_algorithm", WHY_HTTP },
	{ "http_swift_auth_token", WHY_HTTP },
	{ "nfs_url", WHY_REMOTE }, { "uri", WHY_REMOTE },
	{ "pool", WHY_REMOTE }, { "cont", WHY_REMOTE },
	{ "chunk_size", WHY_REMOTE }, { "object_class", WHY_REMOTE },
	{ "svcl", WHY_REMOTE }, { "volume", WHY_REMOTE },
	{ "brick", WHY_REMOTE }, { "clientname", WHY_REMOTE },
	{ "rbdname", WHY_REMOTE }, { "conf", WHY_REMOTE },
	{ "busy_poll", WHY_REMOTE }, { "namenode", WHY_REMOTE },
	{ "hdfsdirectory", WHY_REMOTE },
	{ "gpu_dev_id", WHY_GPU }, { "gpu_dev_ids", WHY_GPU },
	{ "cuda_io", WHY_GPU }, { "mem", WHY_MEM }, { "iomem", WHY_MEM },
	{ "numa_mem_policy", WHY_HOST }, { "cpus_allowed_policy", WHY_HOST },
	{ "sqthread_poll_cpu", WHY_HOST }, { "threads",
	  "not fio's spelling (thread): jobs are neither threads nor "
	  "processes here" },
	{ "io_submit_mode", WHY_ENGINE }, { "cmd_type", WHY_ENGINE },
	{ "nonvectored", WHY_ENGINE }, { "donorname",
	  "e4defrag engine: the extent moves are plain writes of the file" },
	{ "inplace",
	  "e4defrag engine: the extent moves are plain writes of the file" },
	{ "skip_bad", "mtd engine: the device has no bad blocks" },
	{ "create_serialize",
	  "files are laid out before the measured run, one after the other" },
};

static const struct opt_why refused_opts[] = {
	{ "cpuload", "ioengine=cpuio burns CPU and does no I/O: nothing for "
		     "zcow to run" },
	{ "cpumode", "ioengine=cpuio burns CPU and does no I/O: nothing for "
		     "zcow to run" },
	{ "program", "ioengine=exec runs a program and does no I/O: nothing "
		     "for zcow to run" },
};

/* The row of @key in @tab (@n rows); NULL: not there. */
static const struct opt_why *find_why(const struct opt_why *tab, size_t n,
				      const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(key, tab[i].name))
			return &tab[i];
	return NULL;
}

#define ENGINE_OPT(key)							\
	find_why(engine_opts, sizeof(engine_opts) / sizeof(engine_opts[0]), \
		 key)
#define REFUSED_OPT(key)						\
	find_why(refused_opts,						\
		 sizeof(refused_opts) / sizeof(refused_opts[0]), key)

/* ---- end of the engine-only options ---------------------------------- */

/* "FILE:LINE: [option 'KEY': ]message" into @err; returns -EINVAL. */
static int vfail(char *err, size_t len, const char *file, int line,
		 const char *key, const char *fmt, va_list ap)
{
	char msg[256];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err && len && key)
		snprintf(err, len, "%s:%d: option '%s': %s", file, line, key,
			 msg);
	else if (err && len)
		snprintf(err, len, "%s:%d: %s", file, line, msg);
	return -EINVAL;
}

static int fail_at(char *err, size_t len, const char *file, int line,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail_at(char *err, size_t len, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(err, len, file, line, NULL, fmt, ap);
	va_end(ap);
	return ret;
}

/* An error about option @kv: file, line and option name first. */
static int fail(char *err, size_t len, const struct zfio_kv *kv,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, const struct zfio_kv *kv,
		const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail(err, len, kv->file, kv->line, kv->key, fmt, ap);
	va_end(ap);
	if (err && len && kv->unset_var[0]) {
		size_t n = strlen(err);

		snprintf(err + n, len - n, " (%s is not set: fio puts nothing "
			 "for ${%s})", kv->unset_var, kv->unset_var);
	}
	return ret;
}

/* ---- value parsers ---------------------------------------------------- */

int zfio_parse_bool(const char *s, bool *ret)
{
	if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") ||
	    !strcasecmp(s, "on")) {
		*ret = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") ||
	    !strcasecmp(s, "off")) {
		*ret = false;
		return 0;
	}
	return -EINVAL;
}

/*
 * fio's size suffixes: k m g t p, case-insensitive, optional trailing b.
 * With kb_base=1024 (fio's default "compatibility mode") "k"/"kb" are
 * powers of 2 and the IEC spellings ("kib") powers of 10; with
 * kb_base=1000 it is the other way round (fio HOWTO, "kb_base").
 */
int zfio_parse_size(const char *s, uint32_t kb_base, struct zfio_size *ret)
{
	unsigned long long v;
	char *end;
	uint64_t mult = 1, base;
	int shift = 0;
	bool is_iec = false;
	char suf[8];
	size_t n, i;

	memset(ret, 0, sizeof(*ret));
	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	n = strlen(end);
	while (n && isspace((unsigned char)end[n - 1]))
		n--;
	if (n >= sizeof(suf))
		return -EINVAL;
	for (i = 0; i < n; i++)
		suf[i] = tolower((unsigned char)end[i]);
	suf[n] = '\0';
	ret->is_set = true;
	if (!strcmp(suf, "%")) {
		if (v > 100)
			return -EINVAL;
		ret->unit = ZFIO_PERCENT;
		ret->val = v;
		return 0;
	}
	if (!strcmp(suf, "z")) {
		ret->unit = ZFIO_ZONES;
		ret->val = v;
		return 0;
	}
	if (n) {
		switch (suf[0]) {
		case 'k': shift = 1; break;
		case 'm': shift = 2; break;
		case 'g': shift = 3; break;
		case 't': shift = 4; break;
		case 'p': shift = 5; break;
		case 'b': shift = 0; break;
		default: return -EINVAL;
		}
		if (suf[0] == 'b') {
			if (n != 1)
				return -EINVAL;
		} else if (!strcmp(suf + 1, "") || !strcmp(suf + 1, "b")) {
			is_iec = false;
		} else if (!strcmp(suf + 1, "i") || !strcmp(suf + 1, "ib")) {
			is_iec = true;
		} else {
			return -EINVAL;
		}
	}
	if (kb_base == 1000)
		base = is_iec ? 1024 : 1000;
	else
		base = is_iec ? 1000 : 1024;
	while (shift--)
		mult *= base;
	if (mult > 1 && v > UINT64_MAX / mult)
		return -EINVAL;
	ret->unit = ZFIO_BYTES;
	ret->val = v * mult;
	return 0;
}

/* fio time: a number with us/usec, ms/msec, s/sec, m/min, h, d; s if none. */
int zfio_parse_time(const char *s, uint64_t *ns_ret)
{
	static const struct { const char *suf; uint64_t ns; } units[] = {
		{ "", 1000000000ull }, { "s", 1000000000ull },
		{ "sec", 1000000000ull }, { "us", 1000ull },
		{ "usec", 1000ull }, { "ms", 1000000ull },
		{ "msec", 1000000ull }, { "m", 60000000000ull },
		{ "min", 60000000000ull }, { "h", 3600000000000ull },
		{ "d", 86400000000000ull },
	};
	unsigned long long v;
	char *end;
	size_t i;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suf))
			continue;
		if (v > UINT64_MAX / units[i].ns)
			return -EINVAL;
		*ns_ret = v * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

uint64_t zfio_size_bytes(const struct zfio_size *sz, uint64_t total,
			 uint64_t zone_size, uint64_t align)
{
	uint64_t v;

	if (!sz->is_set)
		return 0;
	switch (sz->unit) {
	case ZFIO_PERCENT:
		v = (uint64_t)((unsigned __int128)total * sz->val / 100);
		return align ? v - v % align : v;
	case ZFIO_ZONES:
		return sz->val * zone_size;
	default:
		return sz->val;
	}
}

static const char *const rw_names[] = {
	[ZFIO_READ] = "read", [ZFIO_WRITE] = "write",
	[ZFIO_RANDREAD] = "randread", [ZFIO_RANDWRITE] = "randwrite",
	[ZFIO_RW] = "rw", [ZFIO_RANDRW] = "randrw",
	[ZFIO_TRIM] = "trim", [ZFIO_RANDTRIM] = "randtrim",
};

const char *zfio_rw_name(enum zfio_rw rw)
{
	return rw_names[rw];
}

bool zfio_rw_is_random(enum zfio_rw rw)
{
	return rw == ZFIO_RANDREAD || rw == ZFIO_RANDWRITE ||
	       rw == ZFIO_RANDRW || rw == ZFIO_RANDTRIM;
}

bool zfio_rw_has_write(enum zfio_rw rw)
{
	return rw == ZFIO_WRITE || rw == ZFIO_RANDWRITE || rw == ZFIO_RW ||
	       rw == ZFIO_RANDRW;
}

bool zfio_rw_has_read(enum zfio_rw rw)
{
	return rw == ZFIO_READ || rw == ZFIO_RANDREAD || rw == ZFIO_RW ||
	       rw == ZFIO_RANDRW;
}

/* ---- reading ---------------------------------------------------------- */

static int add_kv(struct zfio_spec *spec, const struct zfio_kv *kv,
		  unsigned int *idx_ret)
{
	if (ZCOW_GROW_ONE(&spec->kvs, spec->nr_kvs, &spec->kvs_cap))
		return -ENOMEM;
	spec->kvs[spec->nr_kvs] = *kv;
	*idx_ret = spec->nr_kvs++;
	return 0;
}

static int sect_add(struct zfio_sect *s, unsigned int idx)
{
	if (ZCOW_GROW_ONE(&s->kv, s->nr_kv, &s->kv_cap))
		return -ENOMEM;
	s->kv[s->nr_kv++] = idx;
	return 0;
}

static struct zfio_sect *new_sect(struct zfio_spec *spec)
{
	struct zfio_sect *s;

	if (ZCOW_GROW_ONE(&spec->sects, spec->nr_sects, &spec->sects_cap))
		return NULL;
	s = &spec->sects[spec->nr_sects++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* Reader state across includes. */
struct reader {
	struct zfio_spec *spec;
	int cur;		/* current section index, -1: none yet */
	char *err;
	size_t err_len;
	int depth;
};

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int read_text(struct reader *r, const char *name, const char *text);

static int read_include(struct reader *r, const char *from, int line,
			const char *arg)
{
	char path[ZFIO_PATH_LEN];
	const char *slash;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if (r->depth >= MAX_INCLUDE_DEPTH)
		return fail_at(r->err, r->err_len, from, line,
			       "include '%s': nested too deep", arg);
	slash = strrchr(from, '/');
	if (arg[0] != '/' && slash)
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - from),
			 from, arg);
	else
		snprintf(path, sizeof(path), "%s", arg);
	f = fopen(path, "r");
	if (!f)	/* a config error at the include line */
		return fail_at(r->err, r->err_len, from, line,
			       "include '%s': %s", path, strerror(errno));
	{
		FILE *m = open_memstream(&buf, &len);
		char chunk[4096];
		size_t n;

		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, m);
		fclose(m);
	}
	fclose(f);
	r->depth++;
	ret = read_text(r, path, buf ? buf : "");
	r->depth--;
	free(buf);
	return ret;
}

/*
 * fio's ${VAR} substitution (options.c fio_option_dup_subs()): every
 * "${NAME}" of an option line becomes the value of the environment
 * variable NAME, or nothing when it is not set (the first such NAME goes
 * to @unset, for the option's error); a "${" without its "}" stays.
 * Returns 0, or -E2BIG when the result does not fit @len.
 */
static int subst_env(const char *in, char *out, size_t len, char *unset,
		     size_t unset_len)
{
	size_t n = 0;

	unset[0] = '\0';
	while (*in) {
		const char *close = in[0] == '$' && in[1] == '{' ?
				    strchr(in + 2, '}') : NULL;
		const char *v = NULL;
		size_t k;

		if (close) {
			char var[ZFIO_NAME_LEN];

			snprintf(var, sizeof(var), "%.*s",
				 (int)(close - in - 2), in + 2);
			v = getenv(var);
			if (!v && !unset[0])
				snprintf(unset, unset_len, "%s", var);
			in = close + 1;
			k = v ? strlen(v) : 0;
		} else {
			v = in++;
			k = 1;
		}
		if (n + k >= len)
			return -E2BIG;
		memcpy(out + n, v ? v : "", k);
		n += k;
	}
	out[n] = '\0';
	return 0;
}

static int read_line(struct reader *r, const char *name, int lineno,
		     char *line)
{
	struct zfio_spec *spec = r->spec;
	struct zfio_kv kv;
	char *p, *eq, subst[MAX_LINE];
	unsigned int idx;
	int ret;

	/* fio strips everything from ';' or '#' on. */
	p = strpbrk(line, ";#");
	if (p)
		*p = '\0';
	p = trim(line);
	if (!*p)
		return 0;
	if (*p == '[') {
		struct zfio_sect *s;
		char *e = strchr(p, ']');

		if (!e || e[1] != '\0' || e == p + 1)
			return fail_at(r->err, r->err_len, name, lineno,
				       "bad section header '%s'", p);
		*e = '\0';
		p = trim(p + 1);
		if (strlen(p) >= ZFIO_NAME_LEN)
			return fail_at(r->err, r->err_len, name, lineno,
				       "section name too long");
		s = new_sect(spec);
		if (!s)
			return -ENOMEM;
		snprintf(s->name, sizeof(s->name), "%s", p);
		snprintf(s->file, sizeof(s->file), "%s", name);
		s->line = lineno;
		s->kind = !strcmp(p, "global") ? SECT_GLOBAL :
			  !strcmp(p, "zcow") ? SECT_ZCOW :
			  !strcmp(p, "crash") ? SECT_CRASH : SECT_JOB;
		r->cur = spec->nr_sects - 1;
		return 0;
	}
	if (!strncmp(p, "include", 7) && isspace((unsigned char)p[7]))
		return read_include(r, name, lineno, trim(p + 7));
	if (r->cur < 0)
		return fail_at(r->err, r->err_len, name, lineno,
			       "option outside of a section: '%s'", p);
	memset(&kv, 0, sizeof(kv));
	if (strstr(p, "${")) {
		if (subst_env(p, subst, sizeof(subst), kv.unset_var,
			      sizeof(kv.unset_var)))
			return fail_at(r->err, r->err_len, name, lineno,
				       "line too long once ${...} is "
				       "substituted");
		p = trim(subst);
	}
	eq = strchr(p, '=');
	if (eq) {
		*eq = '\0';
		snprintf(kv.val, sizeof(kv.val), "%s", trim(eq + 1));
		if (strlen(trim(eq + 1)) >= sizeof(kv.val))
			return fail_at(r->err, r->err_len, name, lineno,
				       "value too long");
		kv.has_val = true;
	}
	p = trim(p);
	if (!*p || strlen(p) >= sizeof(kv.key))
		return fail_at(r->err, r->err_len, name, lineno,
			       "bad option name '%s'", p);
	snprintf(kv.key, sizeof(kv.key), "%s", p);
	snprintf(kv.file, sizeof(kv.file), "%s", name);
	kv.line = lineno;
	ret = add_kv(spec, &kv, &idx);
	return ret ?: sect_add(&spec->sects[r->cur], idx);
}

static int read_text(struct reader *r, const char *name, const char *text)
{
	char line[MAX_LINE];
	int lineno = 0, ret;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);

		lineno++;
		if (n >= sizeof(line))
			return fail_at(r->err, r->err_len, name, lineno,
				       "line too long");
		memcpy(line, text, n);
		line[n] = '\0';
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		ret = read_line(r, name, lineno, line);
		if (ret)
			return ret;
		text += n + (nl ? 1 : 0);
	}
	return 0;
}

/* ---- resolving -------------------------------------------------------- */

static void job_defaults(struct zfio_job *j)
{
	memset(j, 0, sizeof(*j));
	j->rw = ZFIO_READ;	/* fio's default */
	j->rwmixread = 50;
	j->bs = j->bs_max = 4096;
	j->bs_min_d[ZFIO_DDIR_READ] = j->bs_max_d[ZFIO_DDIR_READ] = 4096;
	j->bs_min_d[ZFIO_DDIR_WRITE] = j->bs_max_d[ZFIO_DDIR_WRITE] = 4096;
	j->bs_min_d[ZFIO_DDIR_TRIM] = j->bs_max_d[ZFIO_DDIR_TRIM] = 4096;
	j->bs_opt = ZFIO_OPT_BS;
	j->ratecycle_ms = 1000;
	j->thinktime_blocks = 1;
	j->rw_seq_nr = 1;
	j->nrfiles = 1;
	j->numjobs = 1;
	j->iodepth = 1;
	j->loops = 1;
	j->kb_base = 1024;
	j->zone_reset_threshold = 0;
	j->zone_reset_frequency = 0;
	j->create_on_open = false;
	j->allow_file_create = true;
	j->dist = ZFIO_DIST_RANDOM;
	j->dist_center = -1.0;
	j->pct_random[ZFIO_DDIR_READ] = 100;
	j->pct_random[ZFIO_DDIR_WRITE] = 100;
	j->pct_random[ZFIO_DDIR_TRIM] = 100;
	zfio_vopts_default(&j->vo);
	zfio_log_defaults(&j->log);
	zfio_ctl_defaults(&j->ctl);
}

static int get_u32(const struct zfio_kv *kv, uint32_t kb_base, uint32_t min,
		   uint32_t *ret, char *err, size_t len)
{
	struct zfio_size sz;

	if (!kv->has_val)
		return fail(err, len, kv, "needs a value");
	if (zfio_parse_size(kv->val, kb_base, &sz) || sz.unit != ZFIO_BYTES ||
	    sz.val > UINT32_MAX || sz.val < min)
		return fail(err, len, kv, "'%s' is not an integer >= %u",
			    kv->val, min);
	*ret = (uint32_t)sz.val;
	return 0;
}

/* An integer in @min..@max, @max a documented limit (fio.h). */
static int get_u32_max(const struct zfio_kv *kv, uint32_t kb_base,
		       uint32_t min, uint32_t max, uint32_t *ret, char *err,
		       size_t len)
{
	struct zfio_size sz;

	if (!kv->has_val)
		return fail(err, len, kv, "needs a value");
	if (zfio_parse_size(kv->val, kb_base, &sz) || sz.unit != ZFIO_BYTES ||
	    sz.val < min || sz.val > max)
		return fail(err, len, kv, "'%s' is not an integer in %u..%u",
			    kv->val, min, max);
	*ret = (uint32_t)sz.val;
	return 0;
}

static int get_bool(const struct zfio_kv *kv, bool *ret, char *err,
		    size_t len)
{
	if (!kv->has_val) {
		*ret = true;
		return 0;
	}
	if (zfio_parse_bool(kv->val, ret))
		return fail(err, len, kv, "'%s' is not a boolean", kv->val);
	return 0;
}

static int get_size(const struct zfio_kv *kv, uint32_t kb_base,
		    bool allow_rel, struct zfio_size *ret, char *err,
		    size_t len)
{
	if (!kv->has_val)
		return fail(err, len, kv, "needs a value");
	if (zfio_parse_size(kv->val, kb_base, ret))
		return fail(err, len, kv, "'%s' is not a size", kv->val);
	if (!allow_rel && ret->unit != ZFIO_BYTES)
		return fail(err, len, kv, "'%s': %% and z are not allowed here",
			    kv->val);
	return 0;
}

static int get_bytes(const struct zfio_kv *kv, uint32_t kb_base,
		     uint64_t *ret, char *err, size_t len)
{
	struct zfio_size sz;
	int r = get_size(kv, kb_base, false, &sz, err, len);

	if (!r)
		*ret = sz.val;
	return r;
}

static int get_ratio(const struct zfio_kv *kv, double *ret, char *err,
		     size_t len)
{
	char *end;
	double v;

	if (!kv->has_val)
		return fail(err, len, kv, "needs a value");
	errno = 0;
	v = strtod(kv->val, &end);
	if (errno || *end || end == kv->val || !(v >= 0.0 && v <= 1.0))
		return fail(err, len, kv, "'%s' is not a number in 0..1",
			    kv->val);
	*ret = v;
	return 0;
}

static int get_str(const struct zfio_kv *kv, char *dst, size_t dst_len,
		   char *err, size_t len)
{
	if (!kv->has_val || !kv->val[0])
		return fail(err, len, kv, "needs a value");
	if (strlen(kv->val) >= dst_len)
		return fail(err, len, kv, "value too long");
	snprintf(dst, dst_len, "%s", kv->val);
	return 0;
}

/*
 * filename_format: fio's keywords $jobname, $jobnum, $filenum and
 * $clientuid (fio's client address in client/server mode; zcow runs no
 * server, so it is empty, as in fio's own standalone runs), in any case
 * (fio matches them with strcasestr()).  A relative path is under
 * directory=; an absolute one (the http engine's object names,
 * "/bucket/name") is that path from the file system's root, under
 * directory= when one is given.  The runner creates the directories.
 */
static int get_format(const struct zfio_kv *kv, char *dst, size_t dst_len,
		      char *err, size_t len)
{
	static const char *const words[] = { "$jobname", "$jobnum",
					     "$filenum", "$clientuid" };
	const char *p;
	size_t i;
	int r = get_str(kv, dst, dst_len, err, len);

	if (r)
		return r;
	for (p = strchr(dst, '$'); p; p = strchr(p + 1, '$')) {
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strncasecmp(p, words[i], strlen(words[i])))
				break;
		if (i == sizeof(words) / sizeof(words[0]))
			return fail(err, len, kv, "unknown keyword at '%s' "
				    "($jobname, $jobnum, $filenum, "
				    "$clientuid)", p);
	}
	if (strstr(dst, "//") || dst[strlen(dst) - 1] == '/')
		return fail(err, len, kv, "'%s' is not a file path (no "
			    "empty directory name, no trailing '/')", dst);
	return 0;
}

static bool is_ignored(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(ignored_opts) / sizeof(ignored_opts[0]); i++)
		if (!strcmp(key, ignored_opts[i]))
			return true;
	return ENGINE_OPT(key) != NULL;
}

static int note_ignored(struct zfio_spec *spec, const char *key)
{
	unsigned int i;
	char (*n)[ZFIO_NAME_LEN];

	for (i = 0; i < spec->nr_ignored; i++)
		if (!strcmp(spec->ignored[i], key))
			return 0;
	n = realloc(spec->ignored, (spec->nr_ignored + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	spec->ignored = n;
	snprintf(n[spec->nr_ignored++], ZFIO_NAME_LEN, "%s", key);
	return 0;
}

/* ---- the job options -------------------------------------------------- */

/*
 * One row per job option (opts[] below): its name and fio's other
 * spelling, the parser (the value's type, its limits, its error text) and
 * the field of struct zfio_job it sets.  apply() looks a key up there; a
 * key that is not there is accepted and listed when fio has it and it
 * means nothing here (ignored_opts), else an error.  Adding an option is
 * one row (and its field, default in job_defaults(), and its line in
 * zfio_print_job() and configs/README.md).
 */

/* What a parser works on: the record being applied to job @j. */
struct opt_arg {
	struct zfio_spec *spec;
	struct zfio_job *j;
	const struct zfio_kv *kv;
	char *err;
	size_t len;
};

/* A name a value may take (set_enum), and what it stores. */
struct opt_val {
	const char *name;
	int val;
};

struct opt {
	const char *name;
	const char *alias;	/* fio's other name for it; NULL: none */
	/* Parse a->kv into the field; 0, -EINVAL (message) or -ENOMEM. */
	int (*set)(const struct opt *o, const struct opt_arg *a);
	size_t off;		/* the field in struct zfio_job ... */
	size_t size;		/* ... and its size */
	uint32_t min, max;	/* limits, for the parsers that take them */
	const char *note;	/* --list-options: what it maps to; NULL */
	const struct opt_val *vals;	/* set_enum: the names, NULL-ended */
	const char *err;	/* set_enum: a bad value ("%s": the value) */
};

/*
 * Field @f of struct zfio_job for a parser that stores a @type: a field of
 * another type is a compile-time error (comparison of distinct pointer
 * types), so a row cannot point a parser at the wrong field.
 */
#define JOB_FIELD(f, type)						\
	.off = offsetof(struct zfio_job, f) +				\
	       0 * sizeof(&((struct zfio_job *)0)->f == (type *)0),	\
	.size = sizeof(((struct zfio_job *)0)->f)
/* A string field: a char array. */
#define JOB_STR(f)							\
	.off = offsetof(struct zfio_job, f) +				\
	       0 * sizeof(((struct zfio_job *)0)->f == (char *)0),	\
	.size = sizeof(((struct zfio_job *)0)->f)

static void *field(const struct opt *o, const struct opt_arg *a)
{
	return (char *)a->j + o->off;
}

/* A name from o->vals into an enum or a bool field. */
static int set_enum(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	const struct opt_val *v;

	if (!kv->has_val)
		return fail(a->err, a->len, kv, "needs a value");
	for (v = o->vals; v->name; v++) {
		if (strcmp(kv->val, v->name))
			continue;
		if (o->size == sizeof(bool))
			*(bool *)field(o, a) = v->val;
		else
			*(int *)field(o, a) = v->val;	/* an enum */
		return 0;
	}
	return fail(a->err, a->len, kv, o->err, kv->val);
}

/* An enum field is stored as an int (set_enum). */
_Static_assert(sizeof(enum zfio_rw) == sizeof(int) &&
	       sizeof(enum zfio_zonemode) == sizeof(int) &&
	       sizeof(enum zfio_exit_what) == sizeof(int),
	       "set_enum stores enums as int");

/* An integer >= o->min (fio's size syntax: 1k is 1024). */
static int set_u32(const struct opt *o, const struct opt_arg *a)
{
	return get_u32(a->kv, a->j->kb_base, o->min, field(o, a), a->err,
		       a->len);
}

/* An integer in o->min..o->max, the max a documented limit (fio.h). */
static int set_u32_range(const struct opt *o, const struct opt_arg *a)
{
	return get_u32_max(a->kv, a->j->kb_base, o->min, o->max,
			   field(o, a), a->err, a->len);
}

/* A percentage, 0..100. */
static int set_pct(const struct opt *o, const struct opt_arg *a)
{
	uint32_t u;
	int r = get_u32(a->kv, a->j->kb_base, 0, &u, a->err, a->len);

	if (r)
		return r;
	if (u > 100)
		return fail(a->err, a->len, a->kv, "%u is not a percentage",
			    u);
	*(uint32_t *)field(o, a) = u;
	return 0;
}

/* rwmixwrite=N: the field is the read percentage, 100 - N. */
static int set_pct_complement(const struct opt *o, const struct opt_arg *a)
{
	int r = set_pct(o, a);

	if (!r)
		*(uint32_t *)field(o, a) = 100 - *(uint32_t *)field(o, a);
	return r;
}

static int set_bool(const struct opt *o, const struct opt_arg *a)
{
	return get_bool(a->kv, field(o, a), a->err, a->len);
}

/* A size that may be relative to the target: N%, Nz. */
static int set_size(const struct opt *o, const struct opt_arg *a)
{
	return get_size(a->kv, a->j->kb_base, true, field(o, a), a->err,
			a->len);
}

/* A size in bytes (no % or z). */
static int set_bytes(const struct opt *o, const struct opt_arg *a)
{
	return get_bytes(a->kv, a->j->kb_base, field(o, a), a->err, a->len);
}

static int set_str(const struct opt *o, const struct opt_arg *a)
{
	return get_str(a->kv, field(o, a), o->size, a->err, a->len);
}

/* zcow_loadfile: a path; a relative one is relative to the file that
 * sets it (as include), or to the working directory for --set. */
static int set_loadfile(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	const char *slash = strrchr(kv->file, '/');
	char *dst = field(o, a);
	int n;

	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	if (kv->val[0] != '/' && slash && strcmp(kv->file, "--set"))
		n = snprintf(dst, o->size, "%.*s/%s", (int)(slash - kv->file),
			     kv->file, kv->val);
	else
		n = snprintf(dst, o->size, "%s", kv->val);
	if (n < 0 || (size_t)n >= o->size)
		return fail(a->err, a->len, kv, "path too long");
	return 0;
}

static int set_format(const struct opt *o, const struct opt_arg *a)
{
	return get_format(a->kv, field(o, a), o->size, a->err, a->len);
}

/* A duration (zfio_parse_time()), in ns. */
static int set_time(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;

	if (!kv->has_val || zfio_parse_time(kv->val, field(o, a)))
		return fail(a->err, a->len, kv, "'%s' is not a time",
			    kv->has_val ? kv->val : "");
	return 0;
}

static int set_ratio(const struct opt *o, const struct opt_arg *a)
{
	return get_ratio(a->kv, field(o, a), a->err, a->len);
}

/* ioengine=filecreate is modelled; any other engine is ignored (listed). */
static int set_ioengine(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	bool *is_filecreate = field(o, a);

	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	*is_filecreate = !strcmp(kv->val, "filecreate");
	/* http: objects; falloc: fallocate() calls (run_fs.c) */
	a->j->ctl.engine = zfio_ctl_engine(kv->val);
	return *is_filecreate || a->j->ctl.engine != ZFIO_ENGINE_PLAIN ? 0 :
	       note_ignored(a->spec, kv->key);
}

/*
 * random_generator: fio's tausworthe, tausworthe64 and lfsr are mapped to
 * zcow's PRNG (base/prng.h): listed as ignored.  zcow draws offsets with
 * repeats whichever is named (fio's lfsr, and its default random map,
 * hit every block once per pass; zcow models neither).
 */
static int set_rand_gen(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;

	(void)o;
	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	if (!strcmp(kv->val, "tausworthe") ||
	    !strcmp(kv->val, "tausworthe64") || !strcmp(kv->val, "lfsr"))
		return note_ignored(a->spec, kv->key);
	return fail(a->err, a->len, kv, "'%s' is not tausworthe, "
		    "tausworthe64 or lfsr", kv->val);
}

static int set_randseed(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	uint64_t *seed = field(o, a);
	char *end;

	if (!kv->has_val || !isdigit((unsigned char)kv->val[0]))
		return fail(a->err, a->len, kv, "needs a number");
	errno = 0;
	*seed = strtoull(kv->val, &end, 0);
	if (errno || *end)
		return fail(a->err, a->len, kv, "'%s' is not a number",
			    kv->val);
	a->j->has_randseed = true;
	return 0;
}

/* kb_base: 1000 or 1024 (itself read with fio's default, 1024). */
static int set_kb_base(const struct opt *o, const struct opt_arg *a)
{
	uint32_t u;
	int r = get_u32(a->kv, 1024, 0, &u, a->err, a->len);

	if (r)
		return r;
	if (u != 1000 && u != 1024)
		return fail(a->err, a->len, a->kv, "%u is not 1000 or 1024", u);
	*(uint32_t *)field(o, a) = u;
	return 0;
}

/* ---- random_distribution and percentage_random ------------------------ */

/*
 * fio's per-direction values (HOWTO, blocksize): "a" is for reads, writes
 * and trims; "a,b" a for reads, b for writes and trims; "a,b,c" one each.
 * An empty part keeps the default, and a value not followed by a comma
 * applies to the directions after it too.  Splits @buf in place; a NULL
 * part keeps the default.
 */
static int split_ddir(const struct opt_arg *a, char *buf,
		      const char *parts[ZFIO_NR_DDIR])
{
	unsigned int d, k;
	char *p = buf;

	for (d = 0; d < ZFIO_NR_DDIR; d++)
		parts[d] = NULL;
	for (d = 0;; d++) {
		char *comma = strchr(p, ',');

		if (d == ZFIO_NR_DDIR)
			return fail(a->err, a->len, a->kv, "more than 3 "
				    "comma-separated values (reads, writes, "
				    "trims)");
		if (comma)
			*comma = '\0';
		parts[d] = *p ? p : NULL;
		if (!comma) {
			for (k = d + 1; k < ZFIO_NR_DDIR; k++)
				parts[k] = parts[d];
			return 0;
		}
		p = comma + 1;
	}
}

/* A whole-number percentage 0..100 in all of @s. */
static bool get_pct_str(const char *s, uint32_t *ret)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 100)
		return false;
	*ret = (uint32_t)v;
	return true;
}

/*
 * percentage_random=int[,int][,int] (per direction, split_ddir()), and
 * fio's inverse percentage_sequential (o->min 1: 100 - N is stored).
 */
static int set_pct_random(const struct opt *o, const struct opt_arg *a)
{
	uint32_t *pct = field(o, a);
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	int r;

	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	snprintf(buf, sizeof(buf), "%s", a->kv->val);
	r = split_ddir(a, buf, parts);
	if (r)
		return r;
	for (d = 0; d < ZFIO_NR_DDIR; d++) {
		uint32_t v;

		if (!parts[d])
			continue;
		if (!get_pct_str(parts[d], &v))
			return fail(a->err, a->len, a->kv, "'%s' is not a "
				    "percentage (0..100)", parts[d]);
		pct[d] = o->min ? 100 - v : v;
	}
	return 0;
}

/* A float in the whole of @s. */
static bool get_double(const char *s, double *ret)
{
	char *end;

	errno = 0;
	*ret = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*ret);
}

/*
 * zipf, pareto, normal: "[VALUE[:CENTER]]" in @rest (NULL: none), with
 * fio's defaults (zipf 1.1, pareto 0.2, normal 0) and fio's ranges,
 * except that zipf's theta must also be above 0.
 */
static int parse_dist_param(const struct opt_arg *a, const char *name,
			    char *rest)
{
	struct zfio_job *j = a->j;
	char *colon;

	j->dist_param = j->dist == ZFIO_DIST_ZIPF ? 1.1 :
			j->dist == ZFIO_DIST_PARETO ? 0.2 : 0.0;
	if (!rest)
		return 0;
	if (strchr(rest, ','))
		return fail(a->err, a->len, a->kv, "'%s' takes one value; "
			    "per-direction values (a,b,c) are only for zoned "
			    "and zoned_abs", name);
	colon = strchr(rest, ':');
	if (colon) {
		*colon = '\0';
		if (!get_double(colon + 1, &j->dist_center) ||
		    j->dist_center < 0.0 || j->dist_center > 1.0)
			return fail(a->err, a->len, a->kv, "center '%s' is "
				    "not a number in 0..1", colon + 1);
	}
	if (!get_double(rest, &j->dist_param))
		return fail(a->err, a->len, a->kv, "'%s' is not a number",
			    rest);
	switch (j->dist) {
	case ZFIO_DIST_ZIPF:
		if (!(j->dist_param > 0.0) || j->dist_param == 1.0)
			return fail(a->err, a->len, a->kv, "zipf theta %g "
				    "must be above 0 and not 1", j->dist_param);
		break;
	case ZFIO_DIST_PARETO:
		if (!(j->dist_param > 0.0 && j->dist_param < 1.0))
			return fail(a->err, a->len, a->kv, "pareto h %g must "
				    "be above 0 and below 1", j->dist_param);
		break;
	default:
		if (!(j->dist_param >= 0.0 && j->dist_param < 100.0))
			return fail(a->err, a->len, a->kv, "normal deviation "
				    "%g must be at least 0 and below 100",
				    j->dist_param);
		break;
	}
	return 0;
}

/*
 * One direction's zones, "A/S:A/S:...": A the percent of the accesses,
 * S the percent of the range (zoned; left out or 0, the zones without
 * one share what the others leave, as fio) or a size (zoned_abs,
 * required).  The accesses must add up to 100, the ranges to at most
 * 100 (fio's rules); at most ZFIO_MAX_DIST_ZONES zones.
 */
static int parse_zones(const struct opt_arg *a, enum zfio_ddir d, char *s)
{
	struct zfio_job *j = a->j;
	bool is_abs = j->dist == ZFIO_DIST_ZONED_ABS;
	struct zfio_dist_zone *z = j->dist_zones[d];
	uint32_t nr = 0, acc = 0, pct = 0, nr_missing = 0, i;
	char *p = s;

	for (;;) {
		char *colon = strchr(p, ':'), *slash;

		if (colon)
			*colon = '\0';
		if (!*p)
			return fail(a->err, a->len, a->kv, "an empty zone "
				    "(zones are ACCESS%%/%s:...)",
				    is_abs ? "SIZE" : "RANGE%");
		if (nr == ZFIO_MAX_DIST_ZONES)
			return fail(a->err, a->len, a->kv, "more than %u zones",
				    ZFIO_MAX_DIST_ZONES);
		slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		if (!get_pct_str(p, &z[nr].access_pct))
			return fail(a->err, a->len, a->kv, "zone %u: access "
				    "'%s' is not a percentage (0..100)",
				    nr + 1, p);
		acc += z[nr].access_pct;
		if (is_abs) {
			struct zfio_size sz;

			if (!slash || zfio_parse_size(slash + 1, j->kb_base,
						      &sz) ||
			    sz.unit != ZFIO_BYTES || !sz.val)
				return fail(a->err, a->len, a->kv, "zone %u: "
					    "'%s' is not a size above 0 "
					    "(zoned_abs zones are "
					    "ACCESS%%/SIZE)", nr + 1,
					    slash ? slash + 1 : "");
			z[nr].size = sz.val;
		} else if (!slash || !slash[1] || !strcmp(slash + 1, "0")) {
			/* fio: no range, an empty one ("20/") or 0 */
			z[nr].size = 0;
			nr_missing++;
		} else {
			uint32_t v;

			if (!get_pct_str(slash + 1, &v))
				return fail(a->err, a->len, a->kv, "zone %u: "
					    "range '%s' is not a percentage "
					    "(0..100)", nr + 1, slash + 1);
			z[nr].size = v;
			pct += v;
		}
		nr++;
		if (!colon)
			break;
		p = colon + 1;
	}
	if (acc != 100)
		return fail(a->err, a->len, a->kv, "the access percentages "
			    "add up to %u, not 100", acc);
	if (pct > 100)
		return fail(a->err, a->len, a->kv, "the range percentages "
			    "add up to %u, above 100", pct);
	for (i = 0; i < nr && nr_missing; i++) {
		if (z[i].size)
			continue;
		z[i].size = (100 - pct) / nr_missing;
		if (!z[i].size)
			return fail(a->err, a->len, a->kv, "zone %u: no range "
				    "is left for it (the others take %u%%)",
				    i + 1, pct);
	}
	j->nr_dist_zones[d] = nr;
	return 0;
}

/*
 * random_distribution=NAME[:...] (fio's): random, zipf[:theta[:center]],
 * pareto[:h[:center]], normal[:dev[:center]], zoned:ZONES[,ZONES[,ZONES]]
 * and zoned_abs likewise.  What fio has beyond these is refused.
 */
static int set_dist(const struct opt *o, const struct opt_arg *a)
{
	static const struct opt_val names[] = {
		{ "random", ZFIO_DIST_RANDOM }, { "zipf", ZFIO_DIST_ZIPF },
		{ "pareto", ZFIO_DIST_PARETO }, { "normal", ZFIO_DIST_NORMAL },
		{ "zoned", ZFIO_DIST_ZONED },
		{ "zoned_abs", ZFIO_DIST_ZONED_ABS }, { NULL, 0 },
	};
	struct zfio_job *j = a->j;
	const struct zfio_kv *kv = a->kv;
	const char *parts[ZFIO_NR_DDIR];
	const struct opt_val *v;
	char buf[ZFIO_VAL_LEN], *rest;
	unsigned int d;
	int r;

	(void)o;
	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	snprintf(buf, sizeof(buf), "%s", kv->val);
	rest = strchr(buf, ':');
	if (rest)
		*rest++ = '\0';
	for (v = names; v->name && strcmp(v->name, buf); v++)
		;
	if (!v->name && !strcmp(buf, "gauss"))
		return fail(a->err, a->len, kv, "'gauss' is not a "
			    "random_distribution (fio's name is normal)");
	if (!v->name && !strcmp(buf, "sequence"))
		return fail(a->err, a->len, kv, "'sequence' (fio's fixed "
			    "block sequence) is not modelled");
	if (!v->name)
		return fail(a->err, a->len, kv, "'%s' is not random, zipf, "
			    "pareto, normal, zoned or zoned_abs", buf);
	/* A later setting replaces an earlier one whole. */
	j->dist = v->val;
	j->dist_param = 0.0;
	j->dist_center = -1.0;
	memset(j->nr_dist_zones, 0, sizeof(j->nr_dist_zones));
	snprintf(j->dist_spec, sizeof(j->dist_spec), "%s", kv->val);
	switch (j->dist) {
	case ZFIO_DIST_RANDOM:
		if (rest)
			return fail(a->err, a->len, kv, "'random' takes no "
				    "value");
		return 0;
	case ZFIO_DIST_ZONED:
	case ZFIO_DIST_ZONED_ABS:
		if (!rest || !*rest)
			return fail(a->err, a->len, kv, "'%s' needs its zones "
				    "(%s:ACCESS%%/%s:...)", buf, buf,
				    j->dist == ZFIO_DIST_ZONED ? "RANGE%" :
				    "SIZE");
		r = split_ddir(a, rest, parts);
		for (d = 0; !r && d < ZFIO_NR_DDIR; d++) {
			/* A direction with its parts shared: parsed once
			 * per direction, from a copy. */
			char one[ZFIO_VAL_LEN];

			if (!parts[d])
				continue;
			snprintf(one, sizeof(one), "%s", parts[d]);
			r = parse_zones(a, d, one);
		}
		return r;
	default:
		return parse_dist_param(a, buf, rest);
	}
}


/* ---- the options that shape the I/O stream ---------------------------- */

/*
 * bs, bsrange, bssplit: the sizes of a job's I/Os, per direction
 * (split_ddir(), as fio), in struct zfio_job's bs_min_d/bs_max_d and
 * bssplit; check_job() derives the job's block (bs) and largest I/O
 * (bs_max) from the directions it issues.
 */

/* A block size in bytes in @s: not 0, at most o->max. */
static int get_bs_str(const struct opt *o, const struct opt_arg *a,
		      const char *s, uint64_t *ret)
{
	struct zfio_size sz;

	if (zfio_parse_size(s, a->j->kb_base, &sz) || sz.unit != ZFIO_BYTES)
		return fail(a->err, a->len, a->kv, "'%s' is not a size", s);
	if (!sz.val)
		return fail(a->err, a->len, a->kv, "block size 0");
	if (sz.val > o->max)
		return fail(a->err, a->len, a->kv, "%llu bytes is above the "
			    "limit of %llu (256 MiB)",
			    (unsigned long long)sz.val,
			    (unsigned long long)o->max);
	*ret = sz.val;
	return 0;
}

/* Copy the value (it must have one) and split it per direction. */
static int split_val(const struct opt_arg *a, char *buf, size_t len,
		     const char *parts[ZFIO_NR_DDIR])
{
	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	snprintf(buf, len, "%s", a->kv->val);
	return split_ddir(a, buf, parts);
}

/* bs=int[,int][,int]: one size per direction. */
static int set_bs(const struct opt *o, const struct opt_arg *a)
{
	struct zfio_job *j = a->j;
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	uint64_t v;
	int r = split_val(a, buf, sizeof(buf), parts);

	for (d = 0; !r && d < ZFIO_NR_DDIR; d++) {
		if (!parts[d] || (r = get_bs_str(o, a, parts[d], &v)))
			continue;
		j->bs_min_d[d] = j->bs_max_d[d] = v;
		j->nr_bssplit[d] = 0;
	}
	if (!r)
		j->bs_opt = ZFIO_OPT_BS;
	return r;
}

/* bsrange=min-max[,min-max][,min-max] ("min:max" too; fio swaps a
 * reversed pair). */
static int set_bsrange(const struct opt *o, const struct opt_arg *a)
{
	struct zfio_job *j = a->j;
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	int r = split_val(a, buf, sizeof(buf), parts);

	for (d = 0; !r && d < ZFIO_NR_DDIR; d++) {
		char one[ZFIO_VAL_LEN], *sep;
		uint64_t lo, hi;

		if (!parts[d])
			continue;
		snprintf(one, sizeof(one), "%s", parts[d]);
		sep = strchr(one, '-');
		if (!sep)
			sep = strchr(one, ':');
		if (!sep)
			return fail(a->err, a->len, a->kv, "'%s' is not a "
				    "range (min-max)", parts[d]);
		*sep = '\0';
		r = get_bs_str(o, a, one, &lo);
		r = r ?: get_bs_str(o, a, sep + 1, &hi);
		if (r)
			return r;
		j->bs_min_d[d] = lo < hi ? lo : hi;
		j->bs_max_d[d] = lo < hi ? hi : lo;
		j->nr_bssplit[d] = 0;
	}
	if (!r)
		j->bs_opt = ZFIO_OPT_BSRANGE;
	return r;
}

/*
 * One direction of bssplit: "bs[/pct]:bs[/pct]:..." (fio's
 * bssplit_ddir()).  An entry without a percentage, or with 0, shares
 * what the others leave of 100 (integer division, as fio); the list is
 * sorted by percentage, ties in written order.
 */
static int parse_bssplit(const struct opt *o, const struct opt_arg *a,
			 enum zfio_ddir d, char *s)
{
	struct zfio_job *j = a->j;
	struct zfio_bssplit *e = j->bssplit[d];
	uint32_t n = 0, i, k, sum = 0, nr_missing = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	char *tok, *save = NULL;
	int r;

	for (tok = strtok_r(s, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(tok, '/');
		uint32_t pct = 0;

		if (n == ZFIO_MAX_BSSPLIT)
			return fail(a->err, a->len, a->kv, "more than %u "
				    "entries", ZFIO_MAX_BSSPLIT);
		if (slash) {
			*slash = '\0';
			if (!get_pct_str(slash + 1, &pct))
				return fail(a->err, a->len, a->kv, "'%s' is "
					    "not a percentage (0..100)",
					    slash + 1);
		}
		r = get_bs_str(o, a, tok, &e[n].bs);
		if (r)
			return r;
		e[n].pct = pct;
		if (!pct)
			nr_missing++;
		sum += pct;
		lo = e[n].bs < lo ? e[n].bs : lo;
		hi = e[n].bs > hi ? e[n].bs : hi;
		n++;
	}
	if (!n)
		return fail(a->err, a->len, a->kv, "no block sizes");
	if (sum > 100)
		return fail(a->err, a->len, a->kv, "percentages add to %u, "
			    "more than 100", sum);
	for (i = 0; i < n && nr_missing; i++)
		if (!e[i].pct)
			e[i].pct = n == 1 ? 0 : (100 - sum) / nr_missing;
	for (i = 1; i < n; i++) {	/* stable insertion sort */
		struct zfio_bssplit x = e[i];

		for (k = i; k && e[k - 1].pct > x.pct; k--)
			e[k] = e[k - 1];
		e[k] = x;
	}
	j->nr_bssplit[d] = n;
	j->bs_min_d[d] = lo;
	j->bs_max_d[d] = hi;
	return 0;
}

/* bssplit=list[,list][,list] */
static int set_bssplit(const struct opt *o, const struct opt_arg *a)
{
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	int r = split_val(a, buf, sizeof(buf), parts);

	for (d = 0; !r && d < ZFIO_NR_DDIR; d++) {
		char one[ZFIO_VAL_LEN];

		if (!parts[d])
			continue;
		snprintf(one, sizeof(one), "%s", parts[d]);
		r = parse_bssplit(o, a, (enum zfio_ddir)d, one);
	}
	if (!r)
		a->j->bs_opt = ZFIO_OPT_BSSPLIT;
	return r;
}


/*
 * @a's value split per direction (split_val()): each part given a byte
 * size of at most @max into @v[d], @has[d] set; a part that is not is
 * refused as "'part' is not @what".
 */
static int ddir_bytes(const struct opt_arg *a, uint64_t max, const char *what,
		      uint64_t v[ZFIO_NR_DDIR], bool has[ZFIO_NR_DDIR])
{
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	int r = split_val(a, buf, sizeof(buf), parts);

	for (d = 0; !r && d < ZFIO_NR_DDIR; d++) {
		struct zfio_size sz;

		has[d] = parts[d] != NULL;
		if (!parts[d])
			continue;
		if (zfio_parse_size(parts[d], a->j->kb_base, &sz) ||
		    sz.unit != ZFIO_BYTES || sz.val > max)
			return fail(a->err, a->len, a->kv, "'%s' is not %s",
				    parts[d], what);
		v[d] = sz.val;
	}
	return r;
}

/*
 * rate, rate_min (bytes/s) and rate_iops, rate_iops_min (I/Os per s):
 * per direction (split_ddir()), 0 = none.  o->min 1: an integer.
 */
static int set_rate(const struct opt *o, const struct opt_arg *a)
{
	uint64_t v[ZFIO_NR_DDIR];
	bool has[ZFIO_NR_DDIR];
	unsigned int d;
	int r = ddir_bytes(a, o->min ? UINT32_MAX : UINT64_MAX,
			   o->min ? "an integer" : "a size", v, has);

	for (d = 0; !r && d < ZFIO_NR_DDIR; d++) {
		if (!has[d])
			continue;
		if (o->min)
			((uint32_t *)field(o, a))[d] = (uint32_t)v[d];
		else
			((uint64_t *)field(o, a))[d] = v[d];
	}
	return r;
}

/* thinktime, thinktime_spin: a time, microseconds without a unit
 * (fio's is_time options). */
static int set_time_us(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	uint64_t *ns = field(o, a);
	const char *p;

	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	for (p = kv->val; isdigit((unsigned char)*p); p++)
		;
	if (!*p) {
		char *end;
		unsigned long long us;

		errno = 0;
		us = strtoull(kv->val, &end, 10);
		if (errno || us > UINT64_MAX / 1000)
			return fail(a->err, a->len, kv, "'%s' is not a time",
				    kv->val);
		*ns = us * 1000;
		return 0;
	}
	if (zfio_parse_time(kv->val, ns))
		return fail(a->err, a->len, kv, "'%s' is not a time", kv->val);
	return 0;
}

static const struct opt_val rate_process_vals[] = {
	{ "linear", false }, { "poisson", true }, { NULL, 0 },
};

static const struct opt_val think_type_vals[] = {
	{ "complete", false }, { "issue", true }, { NULL, 0 },
};


/*
 * rw=PATTERN[:N] (fio's str_rw_cb): N is a count (1.., fio's size
 * suffixes) for a random pattern, a size that may be negative for a
 * sequential one; without it, 1 and 0.
 */
static int set_rw(const struct opt *o, const struct opt_arg *a)
{
	struct zfio_job *j = a->j;
	struct zfio_kv kv = *a->kv;
	const struct opt_arg pat = { .spec = a->spec, .j = j, .kv = &kv,
				     .err = a->err, .len = a->len };
	char *colon = strchr(kv.val, ':');
	const char *n;
	struct zfio_size sz;
	int r;

	if (colon)
		*colon = '\0';
	r = set_enum(o, &pat);
	if (r)
		return r;
	j->rw_seq_nr = 1;
	j->rw_seq_add = 0;
	if (!colon)
		return 0;
	n = colon + 1;
	if (zfio_rw_is_random(j->rw)) {
		if (zfio_parse_size(n, j->kb_base, &sz) ||
		    sz.unit != ZFIO_BYTES || !sz.val || sz.val > UINT32_MAX)
			return fail(a->err, a->len, a->kv, "'%s' is not a "
				    "count of I/Os in 1..%u", n, UINT32_MAX);
		j->rw_seq_nr = (uint32_t)sz.val;
		return 0;
	}
	if (zfio_parse_size(n + (*n == '-'), j->kb_base, &sz) ||
	    sz.unit != ZFIO_BYTES || sz.val > INT64_MAX)
		return fail(a->err, a->len, a->kv, "'%s' is not a size (a "
			    "hole, or backwards with '-')", n);
	j->rw_seq_add = *n == '-' ? -(int64_t)sz.val : (int64_t)sz.val;
	return 0;
}

static const struct opt_val rw_seq_vals[] = {
	{ "sequential", false }, { "identical", true }, { NULL, 0 },
};


/* startdelay=T or T1-T2 (fio's irange of times, seconds without a
 * unit; a range is drawn per clone when the run starts). */
static int set_startdelay(const struct opt *o, const struct opt_arg *a)
{
	struct zfio_job *j = a->j;
	char buf[ZFIO_VAL_LEN], *dash;
	uint64_t lo, hi;

	(void)o;
	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	snprintf(buf, sizeof(buf), "%s", a->kv->val);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (zfio_parse_time(buf, &lo) ||
	    (dash && zfio_parse_time(dash + 1, &hi)))
		return fail(a->err, a->len, a->kv, "'%s' is not a time or a "
			    "range of times", a->kv->val);
	if (!dash)
		hi = lo;
	j->startdelay_ns = lo < hi ? lo : hi;
	j->startdelay_hi_ns = lo < hi ? hi : lo;
	return 0;
}

/* ---- error, exit, latency and steady-state options (fio_ctl.c) ------- */

/* A value parsed by fio_ctl.c: its reason behind the file, line, option. */
static int set_ctl(const struct opt_arg *a,
		   int (*parse)(struct zfio_ctl *c, const char *val,
				char *why, size_t len))
{
	char why[256];

	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	if (parse(&a->j->ctl, a->kv->val, why, sizeof(why)))
		return fail(a->err, a->len, a->kv, "%s", why);
	return 0;
}

static int set_continue_on_error(const struct opt *o, const struct opt_arg *a)
{
	(void)o;
	return set_ctl(a, zfio_ctl_continue_on_error);
}

static int set_ignore_error(const struct opt *o, const struct opt_arg *a)
{
	(void)o;
	return set_ctl(a, zfio_ctl_ignore_error);
}

static int set_latency_percentile(const struct opt *o,
				  const struct opt_arg *a)
{
	(void)o;
	return set_ctl(a, zfio_ctl_percentile);
}

static int set_steadystate(const struct opt *o, const struct opt_arg *a)
{
	char why[256];

	(void)o;
	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	if (zfio_ctl_steadystate(&a->j->ctl, a->kv->val, a->j->kb_base, why,
				 sizeof(why)))
		return fail(a->err, a->len, a->kv, "%s", why);
	return 0;
}

/* exitall: fio's callback turns it on whatever the value (exitall=0
 * too); the value must still be an integer or a boolean. */
static int set_exitall(const struct opt *o, const struct opt_arg *a)
{
	bool b;
	int r = get_bool(a->kv, &b, a->err, a->len);

	if (!r)
		*(bool *)field(o, a) = true;
	return r;
}

/* new_group, group_reporting: zcow reports per clone and in total
 * (listed as ignored), but the groups decide what exitall ends and
 * whether steadystate is judged per job or per group. */
static int set_group_bool(const struct opt *o, const struct opt_arg *a)
{
	return set_bool(o, a) ?: note_ignored(a->spec, a->kv->key);
}

/* blockalign=int[,int][,int] (alias ba): per direction, as bs; 0 is the
 * direction's smallest size (fio's default). */
static int set_blockalign(const struct opt *o, const struct opt_arg *a)
{
	uint64_t v[ZFIO_NR_DDIR];
	bool has[ZFIO_NR_DDIR];
	char what[64];
	unsigned int d;
	int r;

	snprintf(what, sizeof(what), "a size of at most %llu (256 MiB)",
		 (unsigned long long)o->max);
	r = ddir_bytes(a, o->max, what, v, has);
	for (d = 0; !r && d < ZFIO_NR_DDIR; d++)
		if (has[d])
			a->j->ctl.ba[d] = v[d];
	return r;
}

static const struct opt_val exit_what_vals[] = {
	{ "group", ZFIO_EXIT_GROUP }, { "stonewall", ZFIO_EXIT_STONEWALL },
	{ "all", ZFIO_EXIT_ALL }, { NULL, 0 },
};

/* ---- end of the error, exit, latency and steady-state options -------- */

static const struct opt_val rw_vals[] = {
	{ "read", ZFIO_READ }, { "write", ZFIO_WRITE },
	{ "randread", ZFIO_RANDREAD }, { "randwrite", ZFIO_RANDWRITE },
	{ "rw", ZFIO_RW }, { "readwrite", ZFIO_RW },
	{ "randrw", ZFIO_RANDRW }, { "trim", ZFIO_TRIM },
	{ "randtrim", ZFIO_RANDTRIM }, { NULL, 0 },
};

static const struct opt_val fst_vals[] = {
	{ "sequential", true }, { NULL, 0 },
};

static const struct opt_val zonemode_vals[] = {
	{ "none", ZFIO_ZONEMODE_NONE }, { "strided", ZFIO_ZONEMODE_STRIDED },
	{ "zbd", ZFIO_ZONEMODE_ZBD }, { NULL, 0 },
};

static const struct opt_val write_mode_vals[] = {
	{ "write", false }, { "zone_append", true }, { NULL, 0 },
};

/* ---- data and verify options (harness/fio_verify.h) ------------------- */

/* verify=NAME: fio's checksum names, meta, pattern, null, 0. */
static int set_verify(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	int t;

	(void)o;
	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	t = zfio_verify_by_name(kv->val);
	if (!strcmp(kv->val, "pattern_hdr"))
		return fail(a->err, a->len, kv, "'pattern_hdr' is a later "
			    "fio's: verify_pattern without verify= gives a "
			    "pattern with a header");
	if (t < 0)
		return fail(a->err, a->len, kv, "'%s' is not md5, crc64, "
			    "crc32c, crc32c-intel, crc32, crc16, crc7, xxhash, "
			    "sha1, sha256, sha512, sha3-224, sha3-256, "
			    "sha3-384, sha3-512, meta, pattern, null or 0",
			    kv->val);
	a->j->vo.verify = t;
	a->j->vo.is_verify_set = true;
	return 0;
}

/* verify_pattern (with %o) and buffer_pattern (o->min 1: without):
 * fio's pattern syntax.  fio's side effects: a verify_pattern makes
 * verify pattern-with-header unless verify= came before; a
 * buffer_pattern turns scramble_buffers and zero_buffers off. */
static int set_pattern(const struct opt *o, const struct opt_arg *a)
{
	struct zfio_vopts *vo = &a->j->vo;
	char why[ZFIO_ERR_LEN];

	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	if (zfio_pattern_parse(a->kv->val, !o->min, field(o, a), why,
			       sizeof(why)))
		return fail(a->err, a->len, a->kv, "%s", why);
	if (!o->min && !vo->is_verify_set)
		vo->verify = ZFIO_VERIFY_PATTERN;
	if (o->min)
		vo->scramble_buffers = vo->zero_buffers = false;
	return 0;
}

/* refill_buffers: remembered as given (fio turns it on for verify,
 * compression and dedupe unless it was set). */
static int set_refill(const struct opt *o, const struct opt_arg *a)
{
	a->j->vo.is_refill_set = true;
	return get_bool(a->kv, field(o, a), a->err, a->len);
}

/* A size in bytes within a 32-bit field, at least o->min. */
static int set_bytes32(const struct opt *o, const struct opt_arg *a)
{
	uint64_t v;
	int r = get_bytes(a->kv, a->j->kb_base, &v, a->err, a->len);

	if (r)
		return r;
	if (v < o->min || v > UINT32_MAX)
		return fail(a->err, a->len, a->kv, "%llu is not a size of %u "
			    "bytes or more (below 4 GiB)",
			    (unsigned long long)v, o->min);
	*(uint32_t *)field(o, a) = (uint32_t)v;
	return 0;
}

/* Accepted, means nothing here (o->note says why): listed as ignored.
 * An integer (verify_async) or anything (verify_async_cpus). */
static int set_ignored_note(const struct opt *o, const struct opt_arg *a)
{
	uint32_t u;

	if (o->min && get_u32(a->kv, a->j->kb_base, 0, &u, a->err, a->len))
		return -EINVAL;
	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	return note_ignored(a->spec, a->kv->key);
}

/* A boolean whose true zcow does not model (o->note says why). */
static int set_false_only(const struct opt *o, const struct opt_arg *a)
{
	bool v;
	int r = get_bool(a->kv, &v, a->err, a->len);

	if (!r && v)
		return fail(a->err, a->len, a->kv, "%s", o->note);
	return r;
}

/* trim_percentage: 0..100; only 0 is modelled (o->note). */
static int set_trim_pct(const struct opt *o, const struct opt_arg *a)
{
	uint32_t u;
	int r = get_u32(a->kv, a->j->kb_base, 0, &u, a->err, a->len);

	if (r)
		return r;
	if (u > 100)
		return fail(a->err, a->len, a->kv, "%u is not a percentage",
			    u);
	if (u)
		return fail(a->err, a->len, a->kv, "%s", o->note);
	return 0;
}

static const struct opt_val dedupe_mode_vals[] = {
	{ "repeat", ZFIO_DEDUPE_REPEAT },
	{ "working_set", ZFIO_DEDUPE_WORKING_SET }, { NULL, 0 },
};

static const struct opt_val sg_mode_vals[] = {
	{ "write", ZFIO_SG_WRITE },
	{ "write_and_verify", ZFIO_SG_WRITE_VERIFY },
	{ "verify", ZFIO_SG_WRITE_VERIFY },	/* fio: deprecated alias */
	{ "write_same", ZFIO_SG_WRITE_SAME },
	{ "same", ZFIO_SG_WRITE_SAME },		/* fio: deprecated alias */
	{ "write_same_ndob", ZFIO_SG_WRITE_SAME_NDOB },
	{ "verify_bytchk_00", ZFIO_SG_VERIFY_00 },
	{ "verify_bytchk_01", ZFIO_SG_VERIFY_01 },
	{ "verify_bytchk_11", ZFIO_SG_VERIFY_11 }, { NULL, 0 },
};

/* The last record of @key among the job's @nr records; NULL: none. */
static const struct zfio_kv *last_kv(const struct zfio_kv *const *src,
				     unsigned int nr, const char *key)
{
	const struct zfio_kv *kv = NULL;
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(src[i]->key, key))
			kv = src[i];
	return kv;
}

/* An error about option @key of @j: where it was set last, else the
 * job's section. */
static int fail_key(char *err, size_t len, const struct zfio_job *j,
		    const struct zfio_kv *const *src, unsigned int nr,
		    const char *key, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static int fail_key(char *err, size_t len, const struct zfio_job *j,
		    const struct zfio_kv *const *src, unsigned int nr,
		    const char *key, const char *fmt, ...)
{
	const struct zfio_kv *kv = last_kv(src, nr, key);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (kv)
		return fail(err, len, kv, "%s", msg);
	return fail_at(err, len, j->file, j->line, "job '%s': option '%s': "
		       "%s", j->name, key, msg);
}

/*
 * The verify and buffer options of a resolved job, as fio's
 * fixup_options() settles them, and what zcow refuses: refill_buffers
 * defaults on for verify, dedupe and compression below 100% (and for a
 * buffer_pattern of a reader or with compression), the interval must
 * hold the header (fio: "Blocksize too small"), verify_offset must leave
 * it inside the interval, verify=pattern needs a verify_pattern,
 * verify_only cannot be time_based, dedupe_mode=working_set needs size=
 * and one file (fio's HOWTO).
 */
static int check_verify(struct zfio_job *j, const struct zfio_kv *const *src,
			unsigned int nr, char *err, size_t len)
{
	struct zfio_vopts *vo = &j->vo;
	uint64_t wmin = j->bs_min_d[ZFIO_DDIR_WRITE];
	uint64_t wmax = j->bs_max_d[ZFIO_DDIR_WRITE];
	uint32_t iv, hl;
	bool has_v = vo->verify != ZFIO_VERIFY_NONE;

	if (!vo->is_refill_set)
		vo->refill_buffers = has_v || vo->dedupe_pct ||
				     (vo->compress_pct &&
				      vo->compress_pct != 100) ||
				     (vo->buffer_pattern.len &&
				      (vo->compress_pct ||
				       zfio_rw_has_read(j->rw)));
	if (vo->dedupe_pct && vo->dedupe_mode == ZFIO_DEDUPE_WORKING_SET &&
	    (!j->size.is_set || (!j->filename[0] && j->nrfiles > 1)))
		return fail_key(err, len, j, src, nr, "dedupe_mode",
				"working_set needs size= and one file per "
				"job");
	if (!has_v || vo->verify == ZFIO_VERIFY_NULL)
		return 0;
	if (vo->verify == ZFIO_VERIFY_PATTERN_NO_HDR &&
	    !vo->verify_pattern.len)
		return fail_key(err, len, j, src, nr, "verify",
				"verify=pattern needs verify_pattern");
	if (vo->verify_only && j->time_based)
		return fail_key(err, len, j, src, nr, "verify_only",
				"verify_only does not support time_based "
				"(fio)");
	iv = zfio_verify_interval(vo, wmin, wmax,
				  zfio_rw_has_read(j->rw) ?
					  j->bs_min_d[ZFIO_DDIR_READ] : 0);
	hl = zfio_verify_hdr_len(vo->verify);
	if (iv <= hl)
		return fail_key(err, len, j, src, nr, vo->verify_interval ?
				"verify_interval" : "verify",
				"a verify interval of %u bytes does not hold "
				"the %u-byte header of %s (fio: Blocksize too "
				"small)", iv, hl, zfio_verify_name(vo->verify));
	if (vo->verify_offset && vo->verify_offset + hl > iv)
		return fail_key(err, len, j, src, nr, "verify_offset",
				"%u + the %u-byte header is beyond the verify "
				"interval of %u bytes (fio: verify_offset too "
				"large)", vo->verify_offset, hl, iv);
	return 0;
}

/* ---- end of the data and verify options ------------------------------- */
/* ---- fio's I/O logs, iolog, fill_device and priorities ---------------- */

/*
 * What these options do at run time is harness/fio_log.c; here they are
 * parsed into struct zfio_logopts (fio_logopt.h) with fio's spellings
 * and ranges.
 */

/* A name in the results folder: no directory part. */
static int get_log_file(const struct opt_arg *a, char *dst, size_t dst_len)
{
	const char *v = a->kv->has_val ? a->kv->val : "";

	if (strchr(v, '/'))
		return fail(a->err, a->len, a->kv, "'%s': logs are written "
			    "in the run's results folder: give a file name, "
			    "without '/'", v);
	if (strlen(v) >= dst_len)
		return fail(a->err, a->len, a->kv, "value too long");
	snprintf(dst, dst_len, "%s", v);
	return 0;
}

/* write_bw_log[=NAME] and its kin: bare or empty, the job's name. */
static int set_logname(const struct opt *o, const struct opt_arg *a)
{
	struct zfio_logname *n = field(o, a);
	int r = get_log_file(a, n->name, sizeof(n->name));

	if (!r)
		n->is_set = true;
	return r;
}

/* write_iolog=NAME */
static int set_write_iolog(const struct opt *o, const struct opt_arg *a)
{
	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	return get_log_file(a, field(o, a), o->size);
}

/* read_iolog=PATH[:PATH...]: one per clone, in turn (fio); a relative
 * path is relative to the file that sets it, as zcow_loadfile. */
static int set_read_iolog(const struct opt *o, const struct opt_arg *a)
{
	const struct zfio_kv *kv = a->kv;
	const char *slash = strrchr(kv->file, '/'), *p = kv->val;
	char *dst = field(o, a);
	size_t n = 0;

	if (!kv->has_val || !kv->val[0])
		return fail(a->err, a->len, kv, "needs a value");
	if (!strcmp(kv->val, "-"))
		return fail(a->err, a->len, kv, "'-' (standard input) cannot "
			    "be replayed: a run reads its inputs before it "
			    "starts");
	dst[0] = '\0';
	while (*p) {
		size_t len = strcspn(p, ":");
		int w;

		if (!len)
			return fail(a->err, a->len, kv, "an empty file name");
		if (p[0] != '/' && slash && strcmp(kv->file, "--set"))
			w = snprintf(dst + n, o->size - n, "%s%.*s/%.*s",
				     n ? ":" : "", (int)(slash - kv->file),
				     kv->file, (int)len, p);
		else
			w = snprintf(dst + n, o->size - n, "%s%.*s",
				     n ? ":" : "", (int)len, p);
		if (w < 0 || (size_t)w >= o->size - n)
			return fail(a->err, a->len, kv, "path too long");
		n += (size_t)w;
		p += len + (p[len] == ':');
	}
	return 0;
}

/* A power of 2 (replay_align); 0 = none. */
static int set_pow2(const struct opt *o, const struct opt_arg *a)
{
	uint32_t *v = field(o, a);
	int r = get_u32(a->kv, a->j->kb_base, 0, v, a->err, a->len);

	if (!r && (*v & (*v - 1)))
		return fail(a->err, a->len, a->kv, "%u is not a power of 2",
			    *v);
	return r;
}

/* replay_skip=read,write,trim,sync (fio's list). */
static int set_replay_skip(const struct opt *o, const struct opt_arg *a)
{
	static const char *const names[] = { "read", "write", "trim",
					     "sync" };
	uint32_t *bits = field(o, a);
	char buf[ZFIO_VAL_LEN], *tok, *save = NULL;
	size_t i;

	if (!a->kv->has_val || !a->kv->val[0])
		return fail(a->err, a->len, a->kv, "needs a value");
	snprintf(buf, sizeof(buf), "%s", a->kv->val);
	*bits = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return fail(a->err, a->len, a->kv, "'%s' is not read, "
				    "write, trim or sync", tok);
		*bits |= 1u << i;
	}
	return 0;
}

/* An option that changes nothing zcow writes: checked, then listed as
 * ignored with o->note's reason (--list-options). */
static int set_checked_ignored(const struct opt *o, const struct opt_arg *a)
{
	uint32_t v;
	int r = get_u32_max(a->kv, a->j->kb_base, o->min, o->max, &v, a->err,
			    a->len);

	return r ?: note_ignored(a->spec, a->kv->key);
}

/* An option fio has that zcow refuses: o->note is why. */
static int set_refused(const struct opt *o, const struct opt_arg *a)
{
	return fail(a->err, a->len, a->kv, "%s", o->note);
}

/* prio (0..7) and prioclass (0..3): the job's I/O priority. */
static int set_prio(const struct opt *o, const struct opt_arg *a)
{
	int r = set_u32_range(o, a);

	if (!r)
		a->j->log.has_prio = true;
	return r;
}

/* cmdprio_percentage, cmdprio_class, cmdprio: int[,int] (reads,
 * writes; a trims part is taken and unused, as fio), o->min..o->max. */
static int set_cmdprio(const struct opt *o, const struct opt_arg *a)
{
	uint32_t *v = field(o, a);
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	int r = split_val(a, buf, sizeof(buf), parts);

	for (d = 0; !r && d < 2; d++) {
		struct zfio_size sz;

		if (!parts[d])
			continue;
		if (zfio_parse_size(parts[d], 1024, &sz) ||
		    sz.unit != ZFIO_BYTES || sz.val < o->min ||
		    sz.val > o->max)
			return fail(a->err, a->len, a->kv, "'%s' is not an "
				    "integer in %u..%u", parts[d], o->min,
				    o->max);
		v[d] = (uint32_t)sz.val;
	}
	return r;
}

/* Do the percentages of the entries of each size add up to 100 at
 * most?  (fio's limit is per size.)  The first size above it, or 0. */
static uint64_t cmdprio_over(const struct zfio_cmdprio *e, uint32_t n,
			     uint32_t *sum_ret)
{
	uint32_t i, k;

	for (i = 0; i < n; i++) {
		*sum_ret = 0;
		for (k = 0; k < n; k++)
			if (e[k].bs == e[i].bs)
				*sum_ret += e[k].pct;
		if (*sum_ret > 100)
			return e[i].bs;
	}
	return 0;
}

/* One direction of cmdprio_bssplit: "bs/pct[/class/level]:..." */
static int parse_cmdprio_bs(const struct opt_arg *a, unsigned int d, char *s)
{
	struct zfio_logopts *lo = &a->j->log;
	char *tok, *save = NULL;
	uint32_t n = 0, sum;
	uint64_t over;

	for (tok = strtok_r(s, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save)) {
		struct zfio_cmdprio *e = &lo->cmdprio_bs[d][n];
		char *f[4] = { tok, NULL, NULL, NULL };
		struct zfio_size sz;
		unsigned int k;

		if (n == ZFIO_MAX_CMDPRIO)
			return fail(a->err, a->len, a->kv, "more than %u "
				    "entries", ZFIO_MAX_CMDPRIO);
		/* k: the fields, BS/PCT or BS/PCT/CLASS/LEVEL */
		for (k = 1; k < 4 && (f[k] = strchr(f[k - 1], '/')); k++)
			*f[k]++ = '\0';
		if (k == 4 && strchr(f[3], '/'))
			k = 5;
		if (zfio_parse_size(f[0], a->j->kb_base, &sz) ||
		    sz.unit != ZFIO_BYTES || !sz.val || k < 2 || k == 3 ||
		    k > 4 || !get_pct_str(f[1], &e->pct))
			return fail(a->err, a->len, a->kv, "entry %u: not "
				    "BS/PERCENT or BS/PERCENT/CLASS/LEVEL",
				    n + 1);
		e->bs = sz.val;
		e->cls = e->lvl = -1;
		if (k == 4) {
			uint32_t c, l;

			if (!get_pct_str(f[2], &c) || c < 1 || c > 3 ||
			    !get_pct_str(f[3], &l) || l > 7)
				return fail(a->err, a->len, a->kv, "entry %u: "
					    "class %s is not 1..3 or level %s "
					    "not 0..7", n + 1, f[2], f[3]);
			e->cls = (int32_t)c;
			e->lvl = (int32_t)l;
		}
		n++;
	}
	if (!n)
		return fail(a->err, a->len, a->kv, "no entries");
	over = cmdprio_over(lo->cmdprio_bs[d], n, &sum);
	if (over)
		return fail(a->err, a->len, a->kv, "the percentages of %llu-"
			    "byte I/Os add up to %u, above 100",
			    (unsigned long long)over, sum);
	lo->nr_cmdprio_bs[d] = n;
	return 0;
}

/* cmdprio_bssplit=list[,list] (reads, writes). */
static int set_cmdprio_bssplit(const struct opt *o, const struct opt_arg *a)
{
	const char *parts[ZFIO_NR_DDIR];
	char buf[ZFIO_VAL_LEN];
	unsigned int d;
	int r = split_val(a, buf, sizeof(buf), parts);

	(void)o;
	for (d = 0; !r && d < 2; d++) {
		char one[ZFIO_VAL_LEN];

		if (!parts[d])
			continue;
		snprintf(one, sizeof(one), "%s", parts[d]);
		r = parse_cmdprio_bs(a, d, one);
	}
	if (!r)
		a->j->log.has_cmdprio_bs = true;
	return r;
}

static const struct opt_val log_window_vals[] = {
	{ "avg", ZFIO_WINDOW_AVG }, { "max", ZFIO_WINDOW_MAX },
	{ "both", ZFIO_WINDOW_BOTH }, { "0", ZFIO_WINDOW_AVG },
	{ "1", ZFIO_WINDOW_MAX }, { NULL, 0 },
};

#define WHY_BLKTRACE	"merges blktrace binary traces: zcow replays fio's " \
			"iolog (versions 2 and 3) only"

/* ---- end of the I/O logs' parsers ------------------------------------- */

static const struct opt opts[] = {
	{ "rw", "readwrite", set_rw, JOB_FIELD(rw, enum zfio_rw),
	  .vals = rw_vals, .err = "unknown pattern '%s'" },
	{ "rwmixread", NULL, set_pct, JOB_FIELD(rwmixread, uint32_t) },
	{ "rwmixwrite", NULL, set_pct_complement,
	  JOB_FIELD(rwmixread, uint32_t) },
	{ "bs", "blocksize", set_bs, JOB_FIELD(bs_min_d[0], uint64_t),
	  .max = ZFIO_MAX_BS },
	{ "size", NULL, set_size, JOB_FIELD(size, struct zfio_size) },
	{ "filesize", NULL, set_size, JOB_FIELD(filesize, struct zfio_size) },
	{ "offset", NULL, set_size, JOB_FIELD(offset, struct zfio_size) },
	{ "offset_increment", NULL, set_size,
	  JOB_FIELD(offset_increment, struct zfio_size) },
	{ "nrfiles", "nr_files", set_u32_range, JOB_FIELD(nrfiles, uint32_t),
	  .min = 1, .max = ZFIO_MAX_FILES },
	{ "filename", NULL, set_str, JOB_STR(filename) },
	{ "directory", NULL, set_str, JOB_STR(directory) },
	{ "name", NULL, set_str, JOB_STR(name) },
	{ "wait_for", NULL, set_str, JOB_STR(wait_for) },
	{ "numjobs", NULL, set_u32_range, JOB_FIELD(numjobs, uint32_t),
	  .min = 1, .max = ZFIO_MAX_JOBS },
	{ "iodepth", NULL, set_u32_range, JOB_FIELD(iodepth, uint32_t),
	  .min = 1, .max = ZFIO_MAX_IODEPTH },
	{ "stonewall", "wait_for_previous", set_bool,
	  JOB_FIELD(stonewall, bool) },
	{ "ioengine", NULL, set_ioengine, JOB_FIELD(is_filecreate, bool) },
	{ "loops", NULL, set_u32, JOB_FIELD(loops, uint32_t), .min = 1 },
	{ "fsync", NULL, set_u32, JOB_FIELD(fsync, uint32_t) },
	{ "fdatasync", NULL, set_u32, JOB_FIELD(fdatasync, uint32_t) },
	{ "runtime", "timeout", set_time, JOB_FIELD(runtime_ns, uint64_t) },
	{ "ramp_time", NULL, set_time, JOB_FIELD(ramp_time_ns, uint64_t) },
	{ "time_based", NULL, set_bool, JOB_FIELD(time_based, bool) },
	{ "end_fsync", NULL, set_bool, JOB_FIELD(end_fsync, bool) },
	{ "create_on_open", NULL, set_bool,
	  JOB_FIELD(create_on_open, bool) },
	{ "unlink", NULL, set_bool, JOB_FIELD(unlink, bool) },
	{ "unlink_each_loop", NULL, set_bool,
	  JOB_FIELD(unlink_each_loop, bool) },
	{ "filename_format", NULL, set_format, JOB_STR(filename_format) },
	{ "file_service_type", NULL, set_enum,
	  JOB_FIELD(fst_sequential, bool), .vals = fst_vals,
	  .err = "'%s': only sequential is modelled (files are served one "
		 "after the other)" },
	{ "openfiles", NULL, set_u32, JOB_FIELD(openfiles, uint32_t),
	  .min = 1 },
	/* The sum of the two is checked on the resolved job (check_job). */
	{ "zcow_rename_pct", NULL, set_pct,
	  JOB_FIELD(zcow_rename_pct, uint32_t) },
	{ "zcow_unlink_pct", NULL, set_pct,
	  JOB_FIELD(zcow_unlink_pct, uint32_t) },
	{ "zcow_loadfile", NULL, set_loadfile, JOB_STR(zcow_loadfile) },
	{ "read_beyond_wp", NULL, set_bool, JOB_FIELD(read_beyond_wp, bool) },
	{ "ignore_zone_limits", NULL, set_bool,
	  JOB_FIELD(ignore_zone_limits, bool) },
	{ "randseed", NULL, set_randseed, JOB_FIELD(randseed, uint64_t) },
	{ "zonemode", NULL, set_enum, JOB_FIELD(zonemode, enum zfio_zonemode),
	  .vals = zonemode_vals, .err = "'%s' is not none, strided or zbd" },
	{ "max_open_zones", NULL, set_u32,
	  JOB_FIELD(max_open_zones, uint32_t) },
	{ "job_max_open_zones", NULL, set_u32,
	  JOB_FIELD(job_max_open_zones, uint32_t) },
	{ "zone_reset_threshold", NULL, set_ratio,
	  JOB_FIELD(zone_reset_threshold, double) },
	{ "zone_reset_frequency", NULL, set_ratio,
	  JOB_FIELD(zone_reset_frequency, double) },
	{ "zonesize", NULL, set_bytes, JOB_FIELD(zonesize, uint64_t) },
	{ "zonerange", NULL, set_bytes, JOB_FIELD(zonerange, uint64_t) },
	{ "zonecapacity", NULL, set_bytes,
	  JOB_FIELD(zonecapacity, uint64_t) },
	{ "zoneskip", NULL, set_bytes, JOB_FIELD(zoneskip, uint64_t) },
	{ "write_mode", NULL, set_enum, JOB_FIELD(zone_append, bool),
	  .vals = write_mode_vals,
	  .err = "'%s': only write and zone_append are modelled" },
	{ "kb_base", NULL, set_kb_base, JOB_FIELD(kb_base, uint32_t) },
	{ "random_distribution", NULL, set_dist,
	  JOB_FIELD(dist, enum zfio_dist) },
	/* no field: the PRNGs are mapped to zcow's (listed as ignored) */
	{ .name = "random_generator", .set = set_rand_gen,
	  .note = "tausworthe, tausworthe64, lfsr: zcow's PRNG, offsets "
		  "with repeats" },
	{ "percentage_random", NULL, set_pct_random,
	  JOB_FIELD(pct_random[0], uint32_t) },
	/* fio's inverse of percentage_random (min 1: 100 - N stored) */
	{ "percentage_sequential", NULL, set_pct_random,
	  JOB_FIELD(pct_random[0], uint32_t),
	  .min = 1 },
	/* ---- the options that shape the I/O stream (sizes, rates) ---- */
	{ "bsrange", "blocksize_range", set_bsrange,
	  JOB_FIELD(bs_min_d[0], uint64_t), .max = ZFIO_MAX_BS },
	{ "bssplit", NULL, set_bssplit, JOB_FIELD(bs_min_d[0], uint64_t),
	  .max = ZFIO_MAX_BS },
	{ "bs_unaligned", "blocksize_unaligned", set_bool,
	  JOB_FIELD(bs_unaligned, bool) },
	{ "bs_is_seq_rand", NULL, set_bool, JOB_FIELD(bs_is_seq_rand, bool) },
	{ "rate", NULL, set_rate, JOB_FIELD(rate[0], uint64_t) },
	{ "rate_min", "ratemin", set_rate, JOB_FIELD(rate_min[0], uint64_t) },
	{ "rate_iops", NULL, set_rate, JOB_FIELD(rate_iops[0], uint32_t),
	  .min = 1 },
	{ "rate_iops_min", NULL, set_rate,
	  JOB_FIELD(rate_iops_min[0], uint32_t), .min = 1 },
	{ "rate_process", NULL, set_enum, JOB_FIELD(rate_poisson, bool),
	  .vals = rate_process_vals, .err = "'%s' is not linear or poisson" },
	{ "rate_cycle", "ratecycle", set_u32,
	  JOB_FIELD(ratecycle_ms, uint32_t) },
	{ "thinktime", NULL, set_time_us, JOB_FIELD(thinktime_ns, uint64_t) },
	{ "thinktime_spin", NULL, set_time_us,
	  JOB_FIELD(thinktime_spin_ns, uint64_t) },
	{ "thinktime_blocks", NULL, set_u32,
	  JOB_FIELD(thinktime_blocks, uint32_t), .min = 1 },
	{ "startdelay", NULL, set_startdelay,
	  JOB_FIELD(startdelay_ns, uint64_t) },
	{ "number_ios", NULL, set_bytes, JOB_FIELD(number_ios, uint64_t) },
	{ "flow", NULL, set_u32_range, JOB_FIELD(flow, uint32_t),
	  .max = 1000 },	/* fio's FLOW_MAX_WEIGHT */
	{ "flow_id", NULL, set_u32, JOB_FIELD(flow_id, uint32_t) },
	{ "flow_sleep", NULL, set_time_us,
	  JOB_FIELD(flow_sleep_ns, uint64_t) },
	{ "rw_sequencer", NULL, set_enum, JOB_FIELD(rw_identical, bool),
	  .vals = rw_seq_vals, .err = "'%s' is not sequential or identical" },
	{ "thinktime_blocks_type", NULL, set_enum,
	  JOB_FIELD(thinktime_issue, bool), .vals = think_type_vals,
	  .err = "'%s' is not complete or issue" },
	/* ---- end of the I/O stream options ---- */
	/* ---- data, verify, iolog and log options ---- */
	{ "io_size", "io_limit", set_size,
	  JOB_FIELD(io_size, struct zfio_size) },
	{ "allow_file_create", NULL, set_bool,
	  JOB_FIELD(allow_file_create, bool) },
	/* verify and buffer contents: check_verify() settles them */
	{ "verify", NULL, set_verify, JOB_FIELD(vo.verify, int) },
	{ "do_verify", NULL, set_bool, JOB_FIELD(vo.do_verify, bool) },
	{ "verify_only", NULL, set_bool, JOB_FIELD(vo.verify_only, bool) },
	{ "verify_fatal", NULL, set_bool, JOB_FIELD(vo.verify_fatal, bool) },
	{ "verify_dump", NULL, set_bool, JOB_FIELD(vo.verify_dump, bool) },
	{ "experimental_verify", NULL, set_bool,
	  JOB_FIELD(vo.experimental_verify, bool) },
	/* fio's minima: two headers, one header */
	{ "verify_interval", NULL, set_bytes32,
	  JOB_FIELD(vo.verify_interval, uint32_t), .min = 2 * ZFIO_VHDR_LEN },
	{ "verify_offset", NULL, set_bytes32,
	  JOB_FIELD(vo.verify_offset, uint32_t), .min = ZFIO_VHDR_LEN },
	{ "verify_backlog", NULL, set_bytes,
	  JOB_FIELD(vo.verify_backlog, uint64_t) },
	{ "verify_backlog_batch", NULL, set_u32,
	  JOB_FIELD(vo.verify_batch, uint32_t) },
	{ "verify_pattern", NULL, set_pattern,
	  JOB_FIELD(vo.verify_pattern, struct zfio_pattern) },
	{ "buffer_pattern", NULL, set_pattern,
	  JOB_FIELD(vo.buffer_pattern, struct zfio_pattern), .min = 1 },
	{ "refill_buffers", NULL, set_refill,
	  JOB_FIELD(vo.refill_buffers, bool) },
	{ "scramble_buffers", NULL, set_bool,
	  JOB_FIELD(vo.scramble_buffers, bool) },
	{ "zero_buffers", NULL, set_bool, JOB_FIELD(vo.zero_buffers, bool) },
	{ "buffer_compress_percentage", NULL, set_pct,
	  JOB_FIELD(vo.compress_pct, uint32_t),
	  .note = "contents only: zcow does not compress" },
	{ "buffer_compress_chunk", NULL, set_bytes32,
	  JOB_FIELD(vo.compress_chunk, uint32_t) },
	{ "dedupe_percentage", NULL, set_pct,
	  JOB_FIELD(vo.dedupe_pct, uint32_t),
	  .note = "contents only: zcow does not deduplicate" },
	{ "dedupe_mode", NULL, set_enum, JOB_FIELD(vo.dedupe_mode, int),
	  .vals = dedupe_mode_vals,
	  .err = "'%s' is not repeat or working_set" },
	{ "dedupe_working_set_percentage", NULL, set_pct,
	  JOB_FIELD(vo.dedupe_ws_pct, uint32_t) },
	{ "dedupe_global", NULL, set_bool,
	  JOB_FIELD(vo.dedupe_global, bool) },
	{ "sg_write_mode", NULL, set_enum, JOB_FIELD(vo.sg_mode, int),
	  .vals = sg_mode_vals,
	  .err = "'%s' is not write, write_and_verify, verify, write_same, "
		 "same, write_same_ndob, verify_bytchk_00, verify_bytchk_01 "
		 "or verify_bytchk_11 (write_stream is not modelled)" },
	{ "trim_verify_zero", NULL, set_bool,
	  JOB_FIELD(vo.trim_verify_zero, bool) },
	/* no field: refused above 0, or ignored */
	{ .name = "trim_percentage", .set = set_trim_pct,
	  .note = "above 0 is not modelled: trimming verified blocks is not modelled (the fs target "
		  "has no trim, the raw target's trim resets a whole zone)" },
	{ .name = "verify_state_save", .set = set_false_only,
	  .note = "1 is not modelled: zcow writes no verify state file (fio's record of a "
		  "write phase cut short): set verify_state_save=0" },
	{ .name = "verify_state_load", .set = set_false_only,
	  .note = "1 is not modelled: zcow keeps no verify state file to load: a verify phase "
		  "reads back what the job wrote in this run" },
	{ .name = "verify_async", .set = set_ignored_note, .min = 1,
	  .note = "ignored: engine tuning, zcow verifies each read as it "
		  "completes" },
	{ .name = "verify_async_cpus", .set = set_ignored_note,
	  .note = "ignored: " WHY_HOST },
	/* ---- fio's I/O logs, iolog, fill_device, priorities (fio_log.c) */
	{ "write_bw_log", NULL, set_logname,
	  JOB_FIELD(log.want[ZFIO_LOG_BW], struct zfio_logname) },
	{ "write_lat_log", NULL, set_logname,
	  JOB_FIELD(log.want[ZFIO_LOG_LAT], struct zfio_logname) },
	{ "write_iops_log", NULL, set_logname,
	  JOB_FIELD(log.want[ZFIO_LOG_IOPS], struct zfio_logname) },
	{ "write_hist_log", NULL, set_logname,
	  JOB_FIELD(log.want[ZFIO_LOG_HIST], struct zfio_logname) },
	{ "per_job_logs", NULL, set_bool, JOB_FIELD(log.per_job_logs, bool) },
	{ "log_avg_msec", NULL, set_u32, JOB_FIELD(log.avg_msec, uint32_t) },
	{ "log_hist_msec", NULL, set_u32, JOB_FIELD(log.hist_msec, uint32_t) },
	{ "log_hist_coarseness", NULL, set_u32_range,
	  JOB_FIELD(log.hist_coarseness, uint32_t), .max = 6 },
	{ "log_window_value", "log_max_value", set_enum,
	  JOB_FIELD(log.window, int), .vals = log_window_vals,
	  .err = "'%s' is not avg, max, both, 0 or 1" },
	{ "log_offset", NULL, set_bool, JOB_FIELD(log.offset, bool) },
	{ "log_prio", NULL, set_bool, JOB_FIELD(log.prio, bool) },
	{ "log_issue_time", NULL, set_bool, JOB_FIELD(log.issue_time, bool) },
	{ "log_alternate_epoch", "log_unix_epoch", set_bool,
	  JOB_FIELD(log.alt_epoch, bool) },
	{ "bwavgtime", NULL, set_u32, JOB_FIELD(log.bw_avg_msec, uint32_t),
	  .min = 1 },
	{ "iopsavgtime", NULL, set_u32, JOB_FIELD(log.iops_avg_msec, uint32_t),
	  .min = 1 },
	{ .name = "log_compression", .set = set_checked_ignored,
	  .min = 1024, .max = 512u << 20,
	  .note = "fio compresses its logs in memory while it runs; the "
		  "files are the same" },
	{ "log_store_compressed", NULL, set_bool,
	  JOB_FIELD(log.store_compressed, bool) },
	{ .name = "log_entries", .set = set_checked_ignored, .min = 1,
	  .max = UINT32_MAX,
	  .note = "fio's initial log buffer; zcow's grows as needed, the "
		  "logs are the same" },
	{ .name = "log_compression_cpus", .set = set_refused,
	  .note = "CPUs for fio's in-memory log compression, which zcow "
		  "does not do" },
	{ .name = "log_alternate_epoch_clock_id", .set = set_refused,
	  .note = "a host clock: the simulated clock is the only one "
		  "(log_alternate_epoch counts from the run's start)" },
	{ "write_iolog", NULL, set_write_iolog, JOB_STR(log.write_iolog) },
	{ "read_iolog", NULL, set_read_iolog, JOB_STR(log.read_iolog) },
	{ "read_iolog_chunked", NULL, set_bool,
	  JOB_FIELD(log.iolog_chunked, bool) },
	{ "replay_no_stall", NULL, set_bool, JOB_FIELD(log.no_stall, bool) },
	{ "replay_time_scale", NULL, set_u32,
	  JOB_FIELD(log.time_scale, uint32_t), .min = 1 },
	{ "replay_redirect", NULL, set_str, JOB_STR(log.redirect) },
	{ "replay_align", NULL, set_pow2, JOB_FIELD(log.replay_align,
						    uint32_t) },
	{ "replay_scale", NULL, set_u32, JOB_FIELD(log.replay_scale, uint32_t),
	  .min = 1 },
	{ "replay_skip", NULL, set_replay_skip,
	  JOB_FIELD(log.replay_skip, uint32_t) },
	{ .name = "merge_blktrace_file", .set = set_refused,
	  .note = WHY_BLKTRACE },
	{ .name = "merge_blktrace_scalars", .set = set_refused,
	  .note = WHY_BLKTRACE },
	{ .name = "merge_blktrace_iters", .set = set_refused,
	  .note = WHY_BLKTRACE },
	{ "fill_device", "fill_fs", set_bool, JOB_FIELD(log.fill_device, bool) },
	{ "prio", NULL, set_prio, JOB_FIELD(log.prio_level, uint32_t),
	  .max = 7 },
	{ "prioclass", NULL, set_prio, JOB_FIELD(log.prio_class, uint32_t),
	  .max = 3 },
	{ "cmdprio_percentage", NULL, set_cmdprio,
	  JOB_FIELD(log.cmdprio_pct[0], uint32_t), .max = 100 },
	{ "cmdprio_class", NULL, set_cmdprio,
	  JOB_FIELD(log.cmdprio_class[0], uint32_t), .min = 1, .max = 3 },
	{ "cmdprio", NULL, set_cmdprio,
	  JOB_FIELD(log.cmdprio_level[0], uint32_t), .max = 7 },
	{ "cmdprio_bssplit", NULL, set_cmdprio_bssplit,
	  JOB_FIELD(log.nr_cmdprio_bs[0], uint32_t) },
	/* ---- end of fio's I/O logs, iolog, fill_device, priorities ---- */
	/* ---- end of the data, verify, iolog and log options ---- */
	/* ---- error, exit, latency and steady-state options ---- */
	{ "continue_on_error", NULL, set_continue_on_error,
	  JOB_FIELD(ctl.continue_on, uint32_t) },
	{ "ignore_error", NULL, set_ignore_error,
	  JOB_FIELD(ctl.continue_on, uint32_t) },
	{ "error_dump", NULL, set_bool, JOB_FIELD(ctl.error_dump, bool) },
	{ "exitall", NULL, set_exitall, JOB_FIELD(ctl.exitall, bool) },
	{ "exitall_on_error", NULL, set_bool,
	  JOB_FIELD(ctl.exitall_on_error, bool) },
	{ "exit_what", NULL, set_enum,
	  JOB_FIELD(ctl.exit_what, enum zfio_exit_what),
	  .vals = exit_what_vals,
	  .err = "'%s' is not group, stonewall or all" },
	{ "new_group", NULL, set_group_bool, JOB_FIELD(ctl.new_group, bool) },
	{ "group_reporting", NULL, set_group_bool,
	  JOB_FIELD(ctl.group_reporting, bool) },
	{ "blockalign", "ba", set_blockalign, JOB_FIELD(ctl.ba[0], uint64_t),
	  .max = ZFIO_MAX_BS },
	{ "latency_target", NULL, set_time_us,
	  JOB_FIELD(ctl.lat_target_ns, uint64_t) },
	{ "latency_window", NULL, set_time_us,
	  JOB_FIELD(ctl.lat_window_ns, uint64_t) },
	{ "latency_percentile", NULL, set_latency_percentile,
	  JOB_FIELD(ctl.lat_pct, double) },
	{ "latency_run", NULL, set_bool, JOB_FIELD(ctl.lat_run, bool) },
	{ "steadystate", "ss", set_steadystate,
	  JOB_FIELD(ctl.ss, enum zfio_ss) },
	{ "steadystate_duration", "ss_dur", set_time,
	  JOB_FIELD(ctl.ss_dur_ns, uint64_t) },
	{ "steadystate_ramp_time", "ss_ramp", set_time,
	  JOB_FIELD(ctl.ss_ramp_ns, uint64_t) },
	/* ---- end of the error, exit, latency and steady-state options ---- */
};

/* The row of option @key (its name or alias); NULL: not a job option. */
static const struct opt *find_opt(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(key, opts[i].name) ||
		    (opts[i].alias && !strcmp(key, opts[i].alias)))
			return &opts[i];
	return NULL;
}

void zfio_list_options(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (opts[i].alias)
			fprintf(out, "%s (alias %s)\n", opts[i].name,
				opts[i].alias);
		else if (opts[i].note)
			fprintf(out, "%s (%s%s)\n", opts[i].name,
				opts[i].set == set_refused ? "refused: " :
				opts[i].set == set_checked_ignored ?
				"ignored: " : "",
				opts[i].note);
		else
			fprintf(out, "%s\n", opts[i].name);
	}
	for (i = 0; i < sizeof(ignored_opts) / sizeof(ignored_opts[0]); i++)
		fprintf(out, "%s (ignored)\n", ignored_opts[i]);
	for (i = 0; i < sizeof(engine_opts) / sizeof(engine_opts[0]); i++)
		fprintf(out, "%s (ignored: %s)\n", engine_opts[i].name,
			engine_opts[i].why);
	for (i = 0; i < sizeof(refused_opts) / sizeof(refused_opts[0]); i++)
		fprintf(out, "%s (refused: %s)\n", refused_opts[i].name,
			refused_opts[i].why);
}

/* Apply record @kv to job @j: its row's parser, or ignored, or an error. */
static int apply(struct zfio_spec *spec, struct zfio_job *j,
		 const struct zfio_kv *kv, char *err, size_t len)
{
	const struct opt_arg a = { .spec = spec, .j = j, .kv = kv,
				   .err = err, .len = len };
	const struct opt *o = find_opt(kv->key);
	const struct opt_why *no = REFUSED_OPT(kv->key);

	/* fio refuses an empty value (but for a few options), also the one
	 * an unset ${VAR} leaves; ignored options too */
	if (kv->unset_var[0] && kv->has_val && !kv->val[0])
		return fail(err, len, kv, "needs a value");
	if (o)
		return o->set(o, &a);
	if (no)
		return fail(err, len, kv, "%s", no->why);
	if (is_ignored(kv->key))
		return note_ignored(spec, kv->key);
	return fail(err, len, kv, "unknown option");
}

/* enum zfio_opt: the option names (the first of any aliases). */
static const char *const opt_names[ZFIO_NR_OPTS] = {
	[ZFIO_OPT_NRFILES] = "nrfiles", [ZFIO_OPT_NUMJOBS] = "numjobs",
	[ZFIO_OPT_SIZE] = "size", [ZFIO_OPT_FILESIZE] = "filesize",
	[ZFIO_OPT_BS] = "bs", [ZFIO_OPT_DIRECTORY] = "directory",
	[ZFIO_OPT_FILENAME] = "filename",
	[ZFIO_OPT_FILENAME_FORMAT] = "filename_format",
	[ZFIO_OPT_LOOPS] = "loops", [ZFIO_OPT_WAIT_FOR] = "wait_for",
	[ZFIO_OPT_IOENGINE] = "ioengine",
	[ZFIO_OPT_RANDOM_DISTRIBUTION] = "random_distribution",
	[ZFIO_OPT_ZCOW_LOADFILE] = "zcow_loadfile",
	[ZFIO_OPT_BSRANGE] = "bsrange", [ZFIO_OPT_BSSPLIT] = "bssplit",
	[ZFIO_OPT_RATE] = "rate", [ZFIO_OPT_RW] = "rw",
	[ZFIO_OPT_ALLOW_FILE_CREATE] = "allow_file_create",
	[ZFIO_OPT_IO_SIZE] = "io_size",
	[ZFIO_OPT_VERIFY] = "verify",
	[ZFIO_OPT_BLOCKALIGN] = "blockalign",
	[ZFIO_OPT_STEADYSTATE] = "steadystate",
};

const char *zfio_opt_name(enum zfio_opt opt)
{
	return opt_names[opt];
}

/* Remember where a tracked option of @j was set (the last setting). */
static void note_at(struct zfio_job *j, const struct zfio_kv *kv)
{
	const struct opt *row = find_opt(kv->key);
	const char *k = row ? row->name : kv->key;
	unsigned int o;

	for (o = 0; o < ZFIO_NR_OPTS; o++) {
		if (strcmp(k, opt_names[o]))
			continue;
		snprintf(j->at[o].file, sizeof(j->at[o].file), "%s", kv->file);
		j->at[o].line = kv->line;
	}
}

void zfio_opt_where(const struct zfio_job *j, enum zfio_opt opt, char *buf,
		    size_t len)
{
	const struct zfio_at *at = &j->at[opt];

	if (at->line)
		snprintf(buf, len, "%s:%d: option '%s'", at->file, at->line,
			 opt_names[opt]);
	else
		snprintf(buf, len, "%s:%d: job '%s': option '%s' (default)",
			 j->file, j->line, j->name, opt_names[opt]);
}

int zfio_opt_verr(char *err, size_t len, const struct zfio_job *j,
		  enum zfio_opt opt, const char *fmt, va_list ap)
{
	char where[ZFIO_PATH_LEN + 128], msg[384];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	zfio_opt_where(j, opt, where, sizeof(where));
	if (err && len)
		snprintf(err, len, "%s: %s", where, msg);
	return -EINVAL;
}

int zfio_err(char *err, size_t len, const struct zfio_job *j,
	     enum zfio_opt opt, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = zfio_opt_verr(err, len, j, opt, fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * What spans the jobs, checked before anything is sized from it: the
 * clones and files of all jobs (fio.h limits), and wait_for, as fio has
 * it: the waitee is an earlier job (no forward references, so no cycles)
 * whose name no other earlier job has.
 */
static int check_spec(struct zfio_spec *spec, char *err, size_t len)
{
	uint64_t clones = 0, files = 0;
	unsigned int i, k;

	for (i = 0; i < spec->nr_jobs; i++) {
		const struct zfio_job *j = &spec->jobs[i];
		unsigned int nr_named = 0;

		clones += j->numjobs;
		if (clones > ZFIO_MAX_JOBS)
			return zfio_err(err, len, j, ZFIO_OPT_NUMJOBS,
					"%llu clones in all is above the limit "
					"of %u jobs", (unsigned long long)clones,
					ZFIO_MAX_JOBS);
		files += (uint64_t)(j->filename[0] ? 1 : j->nrfiles) *
			 j->numjobs;
		if (files > ZFIO_MAX_FILES)
			return zfio_err(err, len, j, j->filename[0] ||
					j->nrfiles == 1 ? ZFIO_OPT_NUMJOBS :
					ZFIO_OPT_NRFILES,
					"%llu files in all (nrfiles x numjobs) "
					"is above the limit of %u",
					(unsigned long long)files,
					ZFIO_MAX_FILES);
		if (!j->wait_for[0])
			continue;
		for (k = 0; k < i; k++)
			if (!strcmp(spec->jobs[k].name, j->wait_for))
				nr_named++;
		if (!nr_named)
			return zfio_err(err, len, j, ZFIO_OPT_WAIT_FOR,
					"no job named '%s' before job '%s' "
					"(the waitee must come first)",
					j->wait_for, j->name);
		if (nr_named > 1)
			return zfio_err(err, len, j, ZFIO_OPT_WAIT_FOR,
					"%u earlier jobs are named '%s'; a "
					"waitee's name must be unique",
					nr_named, j->wait_for);
	}
	return 0;
}

/* A size option that may be relative to the target (set_size rows). */
static bool is_relative_size(const struct zfio_kv *kv)
{
	const struct opt *o = find_opt(kv->key);

	return o && o->set == set_size;
}

/*
 * The job's block and largest I/O from the sizes of the directions it
 * issues (bs_is_seq_rand: the "read" sizes where its offsets are
 * sequential, the "write" ones where random).  fio keeps an offset unit
 * per direction; zcow one per job, so the directions a job issues must
 * share their smallest size.
 */
static int resolve_bs(struct zfio_job *j, char *err, size_t len)
{
	static const char *const names[ZFIO_NR_DDIR] = { "reads", "writes",
							 "trims" };
	bool is_used[ZFIO_NR_DDIR] = { false };
	bool is_rand = zfio_rw_is_random(j->rw);
	unsigned int d, first = ZFIO_NR_DDIR;

	if (j->bs_is_seq_rand) {
		bool has_seq = !is_rand, has_rand = false;

		for (d = 0; d < ZFIO_NR_DDIR && is_rand; d++) {
			has_seq |= j->pct_random[d] < 100;
			has_rand |= j->pct_random[d] > 0;
		}
		is_used[ZFIO_DDIR_READ] = has_seq;
		is_used[ZFIO_DDIR_WRITE] = has_rand;
	} else {
		is_used[ZFIO_DDIR_READ] = zfio_rw_has_read(j->rw);
		is_used[ZFIO_DDIR_WRITE] = zfio_rw_has_write(j->rw);
		is_used[ZFIO_DDIR_TRIM] = j->rw == ZFIO_TRIM ||
					  j->rw == ZFIO_RANDTRIM;
	}
	j->bs_max = 0;
	for (d = 0; d < ZFIO_NR_DDIR; d++) {
		if (!is_used[d])
			continue;
		if (first == ZFIO_NR_DDIR)
			first = d;
		if (j->bs_min_d[d] != j->bs_min_d[first])
			return zfio_err(err, len, j, j->bs_opt, "the smallest "
					"I/O of %s is %llu bytes, of %s %llu: "
					"a job's directions must share it (its "
					"offset unit)", names[first],
					(unsigned long long)j->bs_min_d[first],
					names[d],
					(unsigned long long)j->bs_min_d[d]);
		if (j->bs_max_d[d] > j->bs_max)
			j->bs_max = j->bs_max_d[d];
	}
	j->bs = j->bs_min_d[first];
	return 0;
}

/* rate_process=poisson draws gaps of 1 / (rate / bs) s: fio divides by
 * zero below one I/O per second; refused here.  fio clamps
 * thinktime_spin to thinktime. */
static int check_rate(struct zfio_job *j, char *err, size_t len)
{
	unsigned int d;

	if (j->thinktime_spin_ns > j->thinktime_ns)
		j->thinktime_spin_ns = j->thinktime_ns;
	for (d = 0; d < ZFIO_NR_DDIR && j->rate_poisson; d++)
		if (j->rate[d] && j->rate[d] < j->bs_min_d[d])
			return zfio_err(err, len, j, ZFIO_OPT_RATE, "%llu "
					"bytes/s is below one I/O of %llu bytes "
					"per second (rate_process=poisson)",
					(unsigned long long)j->rate[d],
					(unsigned long long)j->bs_min_d[d]);
	return 0;
}

/* Options that only make sense in zonemode=zbd, 'z' sizes, and the
 * rename + unlink percentages (at most 100 once resolved). */
static int check_job(struct zfio_job *j, const struct zfio_kv *const *src,
		     unsigned int nr, char *err, size_t len)
{
	const struct zfio_kv *last_pct = NULL;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		const struct zfio_kv *kv = src[i];
		struct zfio_size sz;

		if (!strcmp(kv->key, "zcow_rename_pct") ||
		    !strcmp(kv->key, "zcow_unlink_pct"))
			last_pct = kv;

		if (j->zonemode != ZFIO_ZONEMODE_ZBD && is_relative_size(kv) &&
		    !zfio_parse_size(kv->val, j->kb_base, &sz) &&
		    sz.unit == ZFIO_ZONES)
			return fail(err, len, kv,
				    "the 'z' (zones) suffix needs zonemode=zbd");
		if (j->zonemode != ZFIO_ZONEMODE_ZBD &&
		    !strcmp(kv->key, "write_mode") && j->zone_append)
			return fail(err, len, kv,
				    "zone_append needs zonemode=zbd");
	}
	if (last_pct && j->zcow_rename_pct + j->zcow_unlink_pct > 100)
		return fail(err, len, last_pct,
			    "zcow_rename_pct + zcow_unlink_pct = %u is above "
			    "100", j->zcow_rename_pct + j->zcow_unlink_pct);
	if (j->zonesize && j->zonerange && j->zonerange != j->zonesize &&
	    j->zonemode == ZFIO_ZONEMODE_ZBD)
		return fail_at(err, len, j->file, j->line,
			       "job '%s': zonerange must equal zonesize with "
			       "zonemode=zbd", j->name);
	if (j->zonecapacity && j->zonesize && j->zonecapacity > j->zonesize)
		return fail_at(err, len, j->file, j->line,
			       "job '%s': zonecapacity above zonesize",
			       j->name);
	return resolve_bs(j, err, len) ?: check_rate(j, err, len) ?:
	       check_verify(j, src, nr, err, len) ?:
	       zfio_log_check(j, err, len) ?: zfio_ctl_check(j, err, len);
}

static int resolve(struct zfio_spec *spec, const char *const *sets,
		   unsigned int nr_sets, char *err, size_t len)
{
	struct zfio_kv *setkv = NULL;
	const struct zfio_kv **src = NULL;
	unsigned int i, g, nr_globals = 0, *globals = NULL, nr_jobs = 0;
	unsigned int nr_all = nr_sets;
	bool has_raw_crash = false;
	int ret = 0;

	if (nr_sets) {
		setkv = calloc(nr_sets, sizeof(*setkv));
		if (!setkv)
			return -ENOMEM;
	}
	for (i = 0, nr_sets = 0; i < nr_all; i++) {
		const char *eq;
		struct zfio_kv *kv = &setkv[nr_sets];

		if (!sets[i])
			continue;	/* not ours; its number still counts */
		nr_sets++;
		eq = strchr(sets[i], '=');
		snprintf(kv->file, sizeof(kv->file), "--set");
		kv->line = (int)i + 1;
		if (!eq || eq == sets[i] ||
		    (size_t)(eq - sets[i]) >= sizeof(kv->key) ||
		    strlen(eq + 1) >= sizeof(kv->val)) {
			snprintf(kv->key, sizeof(kv->key), "%.*s",
				 (int)sizeof(kv->key) - 1, sets[i]);
			ret = fail(err, len, kv, "not key=value");
			goto out;
		}
		snprintf(kv->key, sizeof(kv->key), "%.*s",
			 (int)(eq - sets[i]), sets[i]);
		snprintf(kv->val, sizeof(kv->val), "%s", eq + 1);
		kv->has_val = true;
	}

	/* Snapshot the globals in force at each job section. */
	globals = calloc(spec->nr_kvs + 1, sizeof(*globals));
	src = calloc(spec->nr_kvs + nr_sets + 1, sizeof(*src));
	spec->jobs = calloc(spec->nr_sects + 1, sizeof(*spec->jobs));
	if (!globals || !src || !spec->jobs) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < spec->nr_sects; i++) {
		struct zfio_sect *s = &spec->sects[i];
		struct zfio_job *j;
		unsigned int nr = 0, k;

		if (s->kind == SECT_GLOBAL) {
			for (k = 0; k < s->nr_kv; k++)
				globals[nr_globals++] = s->kv[k];
			continue;
		}
		if (s->kind == SECT_ZCOW || s->kind == SECT_CRASH) {
			has_raw_crash |= s->kind == SECT_CRASH;
			continue;
		}
		for (g = 0; g < nr_globals; g++)
			src[nr++] = &spec->kvs[globals[g]];
		for (k = 0; k < s->nr_kv; k++)
			src[nr++] = &spec->kvs[s->kv[k]];
		for (k = 0; k < nr_sets; k++)
			src[nr++] = &setkv[k];
		j = &spec->jobs[nr_jobs];
		job_defaults(j);
		snprintf(j->section, sizeof(j->section), "%s", s->name);
		snprintf(j->name, sizeof(j->name), "%s", s->name);
		snprintf(j->file, sizeof(j->file), "%s", s->file);
		j->line = s->line;
		/* kb_base first: it changes how every size parses. */
		for (k = 0; k < nr; k++) {
			if (strcmp(src[k]->key, "kb_base"))
				continue;
			ret = apply(spec, j, src[k], err, len);
			if (ret)
				goto out;
		}
		for (k = 0; k < nr; k++) {
			ret = apply(spec, j, src[k], err, len);
			if (ret)
				goto out;
			note_at(j, src[k]);
			zfio_log_note(&j->log, src[k]);
		}
		ret = check_job(j, src, nr, err, len);
		if (ret)
			goto out;
		nr_jobs++;
	}
	spec->nr_jobs = nr_jobs;

	/* The [zcow] and [crash] sections, kept raw, in order. */
	for (i = 0; i < spec->nr_sects; i++) {
		struct zfio_sect *s = &spec->sects[i];
		bool is_crash = s->kind == SECT_CRASH;
		struct zfio_kv **raw = is_crash ? &spec->crash : &spec->zcow;
		unsigned int *nr_raw = is_crash ? &spec->nr_crash :
				       &spec->nr_zcow;
		unsigned int k;

		if (s->kind != SECT_ZCOW && !is_crash)
			continue;
		for (k = 0; k < s->nr_kv; k++) {
			struct zfio_kv *n = realloc(*raw,
				(*nr_raw + 1) * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				goto out;
			}
			*raw = n;
			n[(*nr_raw)++] = spec->kvs[s->kv[k]];
		}
	}
	/* A crash campaign (a [crash] section) may have no job. */
	if (!nr_jobs && has_raw_crash)
		goto out;
	if (!nr_jobs && !nr_sets) {
		ret = fail_at(err, len, spec->nr_sects ? spec->sects[0].file :
			      "(input)", 1, "no job section");
		goto out;
	}
	if (!nr_jobs) {
		ret = fail_at(err, len, "(input)", 1, "no job section");
		goto out;
	}
	ret = check_spec(spec, err, len);
out:
	free(setkv);
	free(src);
	free(globals);
	return ret;
}

int zfio_parse_text(const char *name, const char *text,
		    const char *const *sets, unsigned int nr_sets,
		    struct zfio_spec **spec_ret, char *err, size_t err_len)
{
	struct zfio_spec *spec = calloc(1, sizeof(*spec));
	struct reader r = { .spec = spec, .cur = -1, .err = err,
			    .err_len = err_len };
	int ret;

	if (err && err_len)
		err[0] = '\0';
	if (!spec)
		return -ENOMEM;
	ret = read_text(&r, name, text);
	ret = ret ?: resolve(spec, sets, nr_sets, err, err_len);
	if (ret) {
		zfio_free(spec);
		return ret;
	}
	*spec_ret = spec;
	return 0;
}

int zfio_parse_file(const char *path, const char *const *sets,
		    unsigned int nr_sets, struct zfio_spec **spec_ret,
		    char *err, size_t err_len)
{
	struct zfio_spec *spec = calloc(1, sizeof(*spec));
	struct reader r = { .spec = spec, .cur = -1, .err = err,
			    .err_len = err_len };
	char *buf = NULL;
	size_t len = 0;
	FILE *f, *m;
	char chunk[4096];
	size_t n;
	int ret;

	if (err && err_len)
		err[0] = '\0';
	if (!spec)
		return -ENOMEM;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		if (err && err_len)
			snprintf(err, err_len, "%s: %s", path, strerror(errno));
		free(spec);
		return ret;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		fclose(f);
		free(spec);
		return -ENOMEM;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(m);
	fclose(f);
	ret = read_text(&r, path, buf ? buf : "");
	free(buf);
	ret = ret ?: resolve(spec, sets, nr_sets, err, err_len);
	if (ret) {
		zfio_free(spec);
		return ret;
	}
	*spec_ret = spec;
	return 0;
}

void zfio_free(struct zfio_spec *spec)
{
	unsigned int i;

	if (!spec)
		return;
	for (i = 0; i < spec->nr_sects; i++) {
		free(spec->sects[i].kv);
		free(spec->sects[i].globals);
	}
	free(spec->sects);
	free(spec->kvs);
	free(spec->jobs);
	free(spec->zcow);
	free(spec->crash);
	free(spec->ignored);
	free(spec);
}

/* ---- the offset distributions ----------------------------------------- */

/* A uniform double in [0, 1): the top 53 bits of one draw. */
static double unit(uint64_t *rng)
{
	return (double)(zcow_rand64(rng) >> 11) * 0x1.0p-53;
}

/*
 * Zipf by rejection-inversion (Hoermann and Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * ACM TOMACS 6(3), 1996): exact for any theta > 0 and any number of
 * blocks, O(1) memory (three constants) and O(1) expected time (a
 * rejection is rare: under 10% of draws for theta near 1, far fewer
 * above).  Over ranks k = 1..n, P(k) ~ k^-theta; H is the integral of
 * x^-theta, continued at theta = 1 by log (the helpers keep it
 * accurate near there).
 */
static double log1p_x(double x)		/* log(1 + x) / x */
{
	return fabs(x) > 1e-8 ? log1p(x) / x :
				1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

static double expm1_x(double x)		/* (exp(x) - 1) / x */
{
	return fabs(x) > 1e-8 ? expm1(x) / x :
				1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

static double zipf_h(double x, double theta)
{
	return exp(-theta * log(x));
}

static double zipf_hint(double x, double theta)
{
	double lx = log(x);

	return expm1_x((1.0 - theta) * lx) * lx;
}

static double zipf_hint_inv(double x, double theta)
{
	double t = x * (1.0 - theta);

	if (t < -1.0)
		t = -1.0;	/* rounding: keep the log's argument >= 0 */
	return exp(log1p_x(t) * x);
}

/* c[0] = H(1.5) - 1, c[1] = H(n + 0.5), c[2] = the squeeze constant. */
static void zipf_init(struct zfio_dist_state *st, double theta)
{
	st->c[0] = zipf_hint(1.5, theta) - 1.0;
	st->c[1] = zipf_hint((double)st->nr_blocks + 0.5, theta);
	st->c[2] = 2.0 - zipf_hint_inv(zipf_hint(2.5, theta) -
				       zipf_h(2.0, theta), theta);
}

/* A rank 0 .. n - 1, rank 0 the most likely. */
static uint64_t zipf_rank(const struct zfio_dist_state *st, double theta,
			  uint64_t *rng)
{
	double n = (double)st->nr_blocks;

	for (;;) {
		double u = st->c[1] + unit(rng) * (st->c[0] - st->c[1]);
		double x = zipf_hint_inv(u, theta);
		double k = floor(x + 0.5);

		if (k < 1.0)
			k = 1.0;
		else if (k > n)
			k = n;
		if (k - x <= st->c[2] ||
		    u >= zipf_hint(k + 0.5, theta) - zipf_h(k, theta))
			return (uint64_t)k - 1;
	}
}

/*
 * The rank -> block scramble (fio hashes a zipf, pareto or normal rank so
 * that the hot blocks are spread over the range, then rotates it by a
 * random offset or by center x range).  Here a bijection, so that every
 * block keeps exactly its rank's probability: a 4-round Feistel network
 * on 2 x half_bits bits keyed from the seed, cycle-walked into
 * 0 .. n - 1 (under 4 rounds of it per block on average, as
 * 2^(2 x half_bits) < 4n).
 */
static uint64_t feistel(const struct zfio_dist_state *st, uint64_t x)
{
	uint64_t mask = (1ull << st->half_bits) - 1;
	uint64_t l = x >> st->half_bits, r = x & mask, t;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		t = r;
		r = l ^ (zcow_mix64(r ^ st->keys[i]) & mask);
		l = t;
	}
	return (l << st->half_bits) | r;
}

static uint64_t scramble(const struct zfio_dist_state *st, uint64_t rank)
{
	uint64_t x = rank;

	do
		x = feistel(st, x);
	while (x >= st->nr_blocks);
	return (x + st->rot) % st->nr_blocks;
}

/*
 * fio's normal: the mean of 12 uniform draws over the range (a bell
 * around its middle, standard deviation about n / 12), moved by a uniform
 * deviation in [-dev/2, dev/2) with dev = dev% of the range (halved until
 * the block stays in the range).  c[0] = dev in blocks.
 */
static uint64_t normal_rank(const struct zfio_dist_state *st, uint64_t *rng)
{
	uint64_t n = st->nr_blocks, sum = 0, dev = (uint64_t)st->c[0];
	int64_t d, v;
	unsigned int i;

	for (i = 0; i < 12; i++)
		sum += zcow_rand64(rng) % n;
	v = (int64_t)((sum + 11) / 12);
	if (!dev)
		return (uint64_t)v;
	d = (int64_t)(unit(rng) * (double)dev) - (int64_t)(dev / 2);
	while (v + d < 0 || v + d >= (int64_t)n)
		d /= 2;
	return (uint64_t)(v + d);
}

/* Zone @i of direction @d: its first block and number of blocks. */
static void zone_blocks(const struct zfio_dist_state *st, enum zfio_ddir d,
			uint32_t i, uint64_t *start_ret, uint64_t *len_ret)
{
	const struct zfio_job *j = st->job;
	const struct zfio_dist_zone *z = j->dist_zones[d];
	uint64_t n = st->nr_blocks, prev = 0, end;
	uint32_t k;

	for (k = 0; k < i; k++)
		prev += z[k].size;
	end = prev + z[i].size;
	if (j->dist == ZFIO_DIST_ZONED) {	/* percent of the range */
		prev = prev * n / 100;
		end = end * n / 100;
	} else {				/* bytes */
		prev /= st->bs;
		end /= st->bs;
	}
	/* A zone below one block still holds one (the range allowing). */
	if (end <= prev)
		end = prev + 1;
	if (end > n) {
		end = n;
		prev = prev < n ? prev : n - 1;
	}
	*start_ret = prev;
	*len_ret = end - prev;
}

int zfio_dist_init(struct zfio_dist_state *st, const struct zfio_job *j,
		   uint64_t nr_blocks, uint64_t seed, uint64_t clone,
		   char *err, size_t err_len)
{
	unsigned int i, d, bits = 1;

	memset(st, 0, sizeof(*st));
	st->job = j;
	st->nr_blocks = nr_blocks;
	st->bs = zfio_rand_unit(j);	/* blockalign, else the block */
	if (!nr_blocks)
		return 0;
	while (bits < 64 && (1ull << bits) < nr_blocks)
		bits++;
	st->half_bits = (bits + 1) / 2;
	for (i = 0; i < 4; i++)
		st->keys[i] = zcow_mix64(seed ^ ((i + 1) * ZCOW_GOLDEN64));
	switch (j->dist) {
	case ZFIO_DIST_ZIPF:
	case ZFIO_DIST_PARETO:
		/* fio: a random rotation per clone, or center x range */
		st->rot = j->dist_center >= 0.0 ?
			  (uint64_t)(j->dist_center * (double)nr_blocks) :
			  zcow_mix64(clone ^ 0x5a17ull) % nr_blocks;
		st->rot %= nr_blocks;
		if (j->dist == ZFIO_DIST_ZIPF)
			zipf_init(st, j->dist_param);
		else	/* P(rank < h x n) = 1 - h: fio's power */
			st->c[0] = log(j->dist_param) /
				   log(1.0 - j->dist_param);
		break;
	case ZFIO_DIST_NORMAL:
		/* fio: no rotation, or (center - 0.5) x range */
		if (j->dist_center >= 0.0) {
			int64_t r = (int64_t)floor((j->dist_center - 0.5) *
						   (double)nr_blocks);
			int64_t n = (int64_t)nr_blocks;

			st->rot = (uint64_t)((r % n + n) % n);
		}
		st->c[0] = ceil((double)nr_blocks * j->dist_param / 100.0);
		if (st->c[0] > (double)(nr_blocks / 2))
			st->c[0] = (double)(nr_blocks / 2);
		break;
	case ZFIO_DIST_ZONED_ABS:
		/* fio fails when a zone beyond the range is drawn; here
		 * before the run */
		for (d = 0; d < ZFIO_NR_DDIR; d++) {
			uint64_t sum = 0;

			for (i = 0; i < j->nr_dist_zones[d]; i++)
				sum += j->dist_zones[d][i].size;
			if (sum / st->bs > nr_blocks)
				return zfio_err(err, err_len, j,
						ZFIO_OPT_RANDOM_DISTRIBUTION,
						"the zoned_abs zones add up to "
						"%llu bytes, above the job's "
						"range of %llu bytes",
						(unsigned long long)sum,
						(unsigned long long)(nr_blocks *
								     st->bs));
		}
		break;
	default:
		break;
	}
	return 0;
}

uint64_t zfio_dist_block_of_rank(const struct zfio_dist_state *st,
				 uint64_t rank)
{
	switch (st->job->dist) {
	case ZFIO_DIST_ZIPF:
	case ZFIO_DIST_PARETO:
	case ZFIO_DIST_NORMAL:
		return st->nr_blocks ? scramble(st, rank) : 0;
	default:
		return rank;
	}
}

bool zfio_dist_is_random(const struct zfio_dist_state *st,
			 enum zfio_ddir d, uint64_t *rng)
{
	uint32_t pct = st->job->pct_random[d];

	/* fio draws 1..100 and takes v <= pct; 100 draws nothing */
	return pct == 100 || zcow_rand64(rng) % 100 < pct;
}

uint64_t zfio_dist_next(const struct zfio_dist_state *st, enum zfio_ddir d,
			uint64_t *rng)
{
	const struct zfio_job *j = st->job;
	uint64_t n = st->nr_blocks, start, len, v;
	uint32_t i, acc = 0;

	if (!n)
		return 0;
	switch (j->dist) {
	case ZFIO_DIST_ZIPF:
		return scramble(st, zipf_rank(st, j->dist_param, rng));
	case ZFIO_DIST_PARETO:
		/* fio's: rank = (n - 1) x U^power */
		return scramble(st, (uint64_t)((double)(n - 1) *
					       pow(unit(rng), st->c[0])));
	case ZFIO_DIST_NORMAL:
		return scramble(st, normal_rank(st, rng));
	case ZFIO_DIST_ZONED:
	case ZFIO_DIST_ZONED_ABS:
		if (!j->nr_dist_zones[d])
			break;	/* no zones for this direction: uniform */
		/* fio: v in 1..100 picks the zone of the v-th percent */
		v = zcow_rand64(rng) % 100;
		for (i = 0; i < j->nr_dist_zones[d] - 1; i++) {
			acc += j->dist_zones[d][i].access_pct;
			if (v < acc)
				break;
		}
		zone_blocks(st, d, i, &start, &len);
		return start + zcow_rand64(rng) % len;
	default:
		break;
	}
	return zcow_rand64(rng) % n;	/* uniform: the runner's own draw */
}

static void print_size(FILE *out, const char *key, const struct zfio_size *s)
{
	if (!s->is_set)
		return;
	fprintf(out, "%s=%llu%s\n", key, (unsigned long long)s->val,
		s->unit == ZFIO_PERCENT ? "%" : s->unit == ZFIO_ZONES ? "z" :
									"");
}

/* Variable sizes, per direction: bsrange, then any bssplit lists. */
static void print_bs(FILE *out, const struct zfio_job *j)
{
	unsigned int d, i;

	if (j->bs_max == j->bs && j->bs_opt == ZFIO_OPT_BS)
		return;
	fprintf(out, "bsrange=");
	for (d = 0; d < ZFIO_NR_DDIR; d++)
		fprintf(out, "%llu-%llu%s", (unsigned long long)j->bs_min_d[d],
			(unsigned long long)j->bs_max_d[d],
			d + 1 < ZFIO_NR_DDIR ? "," : "\n");
	if (!j->nr_bssplit[0] && !j->nr_bssplit[1] && !j->nr_bssplit[2])
		goto flags;
	fprintf(out, "bssplit=");
	for (d = 0; d < ZFIO_NR_DDIR; d++) {
		for (i = 0; i < j->nr_bssplit[d]; i++)
			fprintf(out, "%s%llu/%u", i ? ":" : "",
				(unsigned long long)j->bssplit[d][i].bs,
				j->bssplit[d][i].pct);
		fprintf(out, "%s", d + 1 < ZFIO_NR_DDIR ? "," : "\n");
	}
flags:
	fprintf(out, "bs_unaligned=%d\nbs_is_seq_rand=%d\n", j->bs_unaligned,
		j->bs_is_seq_rand);
}

/* rate and thinktime, when set. */
static void print_rate(FILE *out, const struct zfio_job *j)
{
	if (zfio_rate_is_set(j))
		fprintf(out, "rate=%llu,%llu,%llu\nrate_iops=%u,%u,%u\n"
			     "rate_min=%llu,%llu,%llu\n"
			     "rate_iops_min=%u,%u,%u\nrate_process=%s\n"
			     "rate_cycle=%u\n",
			(unsigned long long)j->rate[0],
			(unsigned long long)j->rate[1],
			(unsigned long long)j->rate[2], j->rate_iops[0],
			j->rate_iops[1], j->rate_iops[2],
			(unsigned long long)j->rate_min[0],
			(unsigned long long)j->rate_min[1],
			(unsigned long long)j->rate_min[2],
			j->rate_iops_min[0], j->rate_iops_min[1],
			j->rate_iops_min[2],
			j->rate_poisson ? "poisson" : "linear",
			j->ratecycle_ms);
	if (j->thinktime_ns)
		fprintf(out, "thinktime=%lluus\nthinktime_spin=%lluus\n"
			     "thinktime_blocks=%u\n"
			     "thinktime_blocks_type=%s\n",
			(unsigned long long)(j->thinktime_ns / 1000),
			(unsigned long long)(j->thinktime_spin_ns / 1000),
			j->thinktime_blocks,
			j->thinktime_issue ? "issue" : "complete");
}

void zfio_print_job(FILE *out, const struct zfio_job *j)
{
	static const char *const zm[] = { "none", "strided", "zbd" };

	fprintf(out, "[%s]\n", j->section);
	fprintf(out, "name=%s\nrw=%s", j->name, zfio_rw_name(j->rw));
	if (j->rw_seq_nr > 1)
		fprintf(out, ":%u", j->rw_seq_nr);
	if (j->rw_seq_add)
		fprintf(out, ":%lld", (long long)j->rw_seq_add);
	fprintf(out, "\nrwmixread=%u\nbs=%llu\n", j->rwmixread,
		(unsigned long long)j->bs);
	if (j->rw_identical)
		fprintf(out, "rw_sequencer=identical\n");
	print_bs(out, j);
	print_rate(out, j);
	if (j->startdelay_hi_ns)
		fprintf(out, "startdelay=%lluus-%lluus\n",
			(unsigned long long)(j->startdelay_ns / 1000),
			(unsigned long long)(j->startdelay_hi_ns / 1000));
	if (j->number_ios)
		fprintf(out, "number_ios=%llu\n",
			(unsigned long long)j->number_ios);
	if (j->flow)
		fprintf(out, "flow=%u\nflow_id=%u\nflow_sleep=%lluus\n",
			j->flow, j->flow_id,
			(unsigned long long)(j->flow_sleep_ns / 1000));
	print_size(out, "size", &j->size);
	print_size(out, "filesize", &j->filesize);
	print_size(out, "offset", &j->offset);
	print_size(out, "offset_increment", &j->offset_increment);
	fprintf(out, "nrfiles=%u\n", j->nrfiles);
	if (j->filename[0])
		fprintf(out, "filename=%s\n", j->filename);
	if (j->directory[0])
		fprintf(out, "directory=%s\n", j->directory);
	fprintf(out, "numjobs=%u\niodepth=%u\nruntime=%lluus\ntime_based=%d\n"
		     "ramp_time=%lluus\nloops=%u\nfsync=%u\nfdatasync=%u\n"
		     "end_fsync=%d\ncreate_on_open=%d\nunlink=%d\n",
		j->numjobs, j->iodepth,
		(unsigned long long)(j->runtime_ns / 1000), j->time_based,
		(unsigned long long)(j->ramp_time_ns / 1000), j->loops,
		j->fsync, j->fdatasync, j->end_fsync, j->create_on_open,
		j->unlink);
	if (j->unlink_each_loop)
		fprintf(out, "unlink_each_loop=1\n");
	if (!j->allow_file_create)
		fprintf(out, "allow_file_create=0\n");
	print_size(out, "io_size", &j->io_size);
	if (j->filename_format[0])
		fprintf(out, "filename_format=%s\n", j->filename_format);
	if (j->fst_sequential)
		fprintf(out, "file_service_type=sequential\n");
	if (j->openfiles)
		fprintf(out, "openfiles=%u\n", j->openfiles);
	if (j->zcow_rename_pct || j->zcow_unlink_pct)
		fprintf(out, "zcow_rename_pct=%u\nzcow_unlink_pct=%u\n",
			j->zcow_rename_pct, j->zcow_unlink_pct);
	if (j->zcow_loadfile[0])
		fprintf(out, "zcow_loadfile=%s\n", j->zcow_loadfile);
	if (j->has_randseed)
		fprintf(out, "randseed=%llu\n",
			(unsigned long long)j->randseed);
	fprintf(out, "zonemode=%s\n", zm[j->zonemode]);
	if (j->zonemode == ZFIO_ZONEMODE_ZBD) {
		fprintf(out, "max_open_zones=%u\njob_max_open_zones=%u\n"
			     "zone_reset_threshold=%.6g\n"
			     "zone_reset_frequency=%.6g\nread_beyond_wp=%d\n"
			     "ignore_zone_limits=%d\nwrite_mode=%s\n",
			j->max_open_zones, j->job_max_open_zones,
			j->zone_reset_threshold, j->zone_reset_frequency,
			j->read_beyond_wp, j->ignore_zone_limits,
			j->zone_append ? "zone_append" : "write");
	}
	if (j->zonesize)
		fprintf(out, "zonesize=%llu\n", (unsigned long long)j->zonesize);
	if (j->zonecapacity)
		fprintf(out, "zonecapacity=%llu\n",
			(unsigned long long)j->zonecapacity);
	if (j->wait_for[0])
		fprintf(out, "wait_for=%s\n", j->wait_for);
	if (j->stonewall)
		fprintf(out, "stonewall=1\n");
	if (j->is_filecreate)
		fprintf(out, "ioengine=filecreate\n");
	if (j->dist_spec[0])
		fprintf(out, "random_distribution=%s\n", j->dist_spec);
	if (j->pct_random[0] != 100 || j->pct_random[1] != 100 ||
	    j->pct_random[2] != 100)
		fprintf(out, "percentage_random=%u,%u,%u\n", j->pct_random[0],
			j->pct_random[1], j->pct_random[2]);
	zfio_vopts_print(out, &j->vo);
	zfio_log_print(out, j);
	zfio_ctl_print(out, j);
	fprintf(out, "kb_base=%u\n\n", j->kb_base);
}
