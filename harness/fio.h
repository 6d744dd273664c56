/* SPDX-License-Identifier: MIT */
/*
 * zfio: fio job files in fio's own syntax (configs/README.md).
 *
 * An INI file of [global] and job sections.  A [global] section sets
 * defaults for the job sections below it (several are allowed, as in fio);
 * options are key=value or bare boolean keys; ';' and '#' start comments;
 * `include FILE` pulls in another file (relative to the including file).
 * Sizes take fio's suffixes (k, m, g, t, p; binary unless kb_base=1000 or
 * a "KiB"-style suffix in fio's compatibility mode says otherwise), '%' of
 * the target, and 'z' (zones) with zonemode=zbd.  A [zcow] section is not
 * fio's: it is kept raw for the runner (harness/run.c) to interpret; a
 * [crash] section likewise for zcow crash (harness/crash.h), and a file
 * with one needs no job section.
 *
 * Options fio has that mean nothing here (direct, thread, ...) are
 * accepted and listed once in zfio_spec.ignored; ioengine too, except
 * ioengine=filecreate, which is modelled (zfio_job.is_filecreate), and
 * http and falloc (zfio_job.ctl.engine: objects; refused).  An option
 * line's ${VAR} is substituted from the environment, as fio does.  Job keys starting
 * with "zcow_" are zcow's own (no fio equivalent; configs/README.md).  An unknown option or a
 * bad value is -EINVAL with the message "FILE:LINE: option 'x': reason".
 *
 * Also here: fio's random_distribution and percentage_random, parsed and
 * drawn from (zfio_dist_*): what offsets a random pattern picks is fio's
 * semantics, the runner only asks for the next one.  Likewise the size of
 * each I/O (bs, bsrange, bssplit: zfio_next_bs(), in fio_gen.c).
 *
 * What it is not: a runner (harness/run.c) or fio's command-line parser.
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_FIO_H
#define ZCOW_FIO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fio_verify.h"
#include "fio_logopt.h"
#include "fio_ctl.h"

#define ZFIO_NAME_LEN	64
#define ZFIO_VAL_LEN	256
#define ZFIO_PATH_LEN	512
#define ZFIO_ERR_LEN	768

/*
 * Limits checked while parsing, before anything is sized from them
 * (configs/README.md, "Limits").  fio's own: at most 4096 jobs, clones
 * included (fio's REAL_MAX_JOBS).  zcow's: files and iodepth slots are
 * allocated per clone up front, so their totals are capped too.
 */
#define ZFIO_MAX_JOBS		4096u		/* numjobs clones, all jobs */
#define ZFIO_MAX_FILES		1048576u	/* nrfiles x clones, all jobs */
#define ZFIO_MAX_IODEPTH	4096u		/* per job */
#define ZFIO_MAX_BS		(256ull << 20)	/* bytes; one I/O buffer */

enum zfio_rw {
	ZFIO_READ,
	ZFIO_WRITE,
	ZFIO_RANDREAD,
	ZFIO_RANDWRITE,
	ZFIO_RW,		/* rw, readwrite: sequential mix */
	ZFIO_RANDRW,
	ZFIO_TRIM,		/* zonemode=zbd: zone resets */
	ZFIO_RANDTRIM,
};

enum zfio_unit {
	ZFIO_BYTES,
	ZFIO_PERCENT,		/* of the target (device or file) size */
	ZFIO_ZONES,		/* 'z' suffix: zones (zonemode=zbd only) */
};

enum zfio_zonemode {
	ZFIO_ZONEMODE_NONE,
	ZFIO_ZONEMODE_STRIDED,
	ZFIO_ZONEMODE_ZBD,
};

/* A size option as written: resolved against the target by the runner. */
struct zfio_size {
	uint64_t val;		/* bytes, percent or zones per @unit */
	enum zfio_unit unit;
	bool is_set;
};

/* One raw key=value as read, with where it came from. */
struct zfio_kv {
	char key[ZFIO_NAME_LEN];
	char val[ZFIO_VAL_LEN];
	bool has_val;		/* false: a bare key */
	char file[ZFIO_PATH_LEN];	/* "--set" for command-line overrides */
	int line;
	/* the first ${VAR} of the line that the environment does not set
	 * (substituted with nothing, as fio does); "" = none */
	char unset_var[ZFIO_NAME_LEN];
};

/* Options whose value the runner checks against the target: where
 * each was set last, so its errors name the file, line and option. */
enum zfio_opt {
	ZFIO_OPT_NRFILES,
	ZFIO_OPT_NUMJOBS,
	ZFIO_OPT_SIZE,
	ZFIO_OPT_FILESIZE,
	ZFIO_OPT_BS,
	ZFIO_OPT_DIRECTORY,
	ZFIO_OPT_FILENAME,
	ZFIO_OPT_FILENAME_FORMAT,
	ZFIO_OPT_LOOPS,
	ZFIO_OPT_WAIT_FOR,
	ZFIO_OPT_IOENGINE,
	ZFIO_OPT_RANDOM_DISTRIBUTION,
	ZFIO_OPT_ZCOW_LOADFILE,
	ZFIO_OPT_BSRANGE,
	ZFIO_OPT_BSSPLIT,
	ZFIO_OPT_RATE,
	ZFIO_OPT_RW,
	ZFIO_OPT_ALLOW_FILE_CREATE,
	ZFIO_OPT_IO_SIZE,
	ZFIO_OPT_VERIFY,
	ZFIO_OPT_BLOCKALIGN,
	ZFIO_OPT_STEADYSTATE,
	ZFIO_NR_OPTS
};

/* fio's data directions, for its per-direction values (a,b,c: reads,
 * writes, trims); the same order as the runner's enum zrun_op. */
enum zfio_ddir {
	ZFIO_DDIR_READ,
	ZFIO_DDIR_WRITE,
	ZFIO_DDIR_TRIM,
	ZFIO_NR_DDIR
};

/* random_distribution: how a random pattern picks its blocks (fio's
 * names; zfio_dist_next() says how each is drawn). */
enum zfio_dist {
	ZFIO_DIST_RANDOM,	/* uniform: fio's default */
	ZFIO_DIST_ZIPF,		/* zipf:theta[:center] */
	ZFIO_DIST_PARETO,	/* pareto:h[:center] */
	ZFIO_DIST_NORMAL,	/* normal:dev%[:center] */
	ZFIO_DIST_ZONED,	/* zoned:access%/range%:... */
	ZFIO_DIST_ZONED_ABS,	/* zoned_abs:access%/bytes:... */
};

/* Zones of a zoned or zoned_abs distribution, per direction.  fio
 * allows 256 (ZONESPLIT_MAX); a value of ZFIO_VAL_LEN - 1 characters
 * holds at most 125 ("zoned:" and "0:" each), so this loses nothing. */
#define ZFIO_MAX_DIST_ZONES	128u

/* One zone of a zoned (percent of the range) or zoned_abs (bytes)
 * distribution: @access_pct of the accesses fall in @size, uniformly;
 * the zones follow each other from the start of the job's range. */
struct zfio_dist_zone {
	uint32_t access_pct;	/* 0..100; a direction's zones sum to 100 */
	uint64_t size;		/* percent (zoned) or bytes (zoned_abs) */
};

/* bssplit entries per direction (fio's BSSPLIT_MAX). */
#define ZFIO_MAX_BSSPLIT	64u

/* One bssplit entry: @pct percent of the I/Os are @bs bytes. */
struct zfio_bssplit {
	uint64_t bs;		/* bytes */
	uint32_t pct;		/* 0..100 */
};

/* Where an option was set: line 0 = not set (a default). */
struct zfio_at {
	char file[ZFIO_PATH_LEN];	/* "--set" for an override */
	int line;
};

/* One job section, resolved (global defaults + section + overrides). */
struct zfio_job {
	char name[ZFIO_NAME_LEN];	/* name= or the section name */
	char section[ZFIO_NAME_LEN];
	enum zfio_rw rw;
	uint32_t rwmixread;		/* percent reads in rw/randrw; 50 */
	/* The block: the smallest I/O of the directions the job issues,
	 * the unit of its offsets and ranges; bytes, 4096 */
	uint64_t bs;
	uint64_t bs_max;		/* the largest I/O; bytes, = bs */
	/* Block sizes per direction (fio's min_bs/max_bs): bs= sets both,
	 * bsrange= a range, bssplit= a weighted list (sorted by percent,
	 * as fio); @bs_opt says which of the three was set last */
	uint64_t bs_min_d[ZFIO_NR_DDIR], bs_max_d[ZFIO_NR_DDIR];
	struct zfio_bssplit bssplit[ZFIO_NR_DDIR][ZFIO_MAX_BSSPLIT];
	uint32_t nr_bssplit[ZFIO_NR_DDIR];
	enum zfio_opt bs_opt;
	bool bs_unaligned;		/* sizes not rounded to the smallest */
	bool bs_is_seq_rand;		/* the "read" sizes are for sequential
					 * I/O, the "write" ones for random */
	/* rate, rate_iops (rate wins), rate_min, rate_iops_min, per
	 * direction: bytes/s, I/Os per s; 0 = none (fio_gen.c) */
	uint64_t rate[ZFIO_NR_DDIR], rate_min[ZFIO_NR_DDIR];
	uint32_t rate_iops[ZFIO_NR_DDIR], rate_iops_min[ZFIO_NR_DDIR];
	bool rate_poisson;		/* rate_process=poisson (linear) */
	uint32_t ratecycle_ms;		/* rate_min's period; 1000 */
	/* thinktime: a stall after every thinktime_blocks I/Os (issued,
	 * or completed: fio's thinktime_blocks_type); ns, 0 = none */
	uint64_t thinktime_ns, thinktime_spin_ns;
	uint32_t thinktime_blocks;	/* 1 */
	bool thinktime_issue;		/* count issued I/Os (complete) */
	/* rw=PATTERN:N (fio's offset modifier): a random pattern draws a
	 * new offset every @rw_seq_nr I/Os (1), the others follow
	 * rw_sequencer (sequential: after the last I/O; identical: the
	 * last I/O's offset again); a sequential one adds @rw_seq_add
	 * bytes (negative: backwards) to every offset but the first */
	uint32_t rw_seq_nr;
	int64_t rw_seq_add;
	bool rw_identical;		/* rw_sequencer=identical */
	/* startdelay=T or T1-T2 (drawn per clone): ns after the run's
	 * start; number_ios: stop after number_ios x loops issued I/Os
	 * (0 = no limit) */
	uint64_t startdelay_ns, startdelay_hi_ns;
	uint64_t number_ios;
	/* flow: the job's weight among the running jobs of its flow_id
	 * (0 = no flow control); flow_sleep: ns a job ahead of its share
	 * sleeps (0: it waits for another job of the group to issue) */
	uint32_t flow, flow_id;
	uint64_t flow_sleep_ns;
	struct zfio_size size;		/* not set: the whole target */
	struct zfio_size filesize;	/* per file; not set: size / nrfiles */
	struct zfio_size offset;
	/* io_size (io_limit): bytes of I/O per loop within the range (a
	 * percent is of the job's range); not set: the range's size */
	struct zfio_size io_size;
	struct zfio_size offset_increment;	/* per numjobs clone */
	uint32_t nrfiles;		/* 1 */
	char filename[ZFIO_VAL_LEN];	/* "" = none given */
	char directory[ZFIO_VAL_LEN];
	uint32_t numjobs;		/* 1 */
	uint32_t iodepth;		/* 1 */
	uint64_t runtime_ns;		/* 0 = until size is done */
	bool time_based;
	uint64_t ramp_time_ns;
	uint32_t loops;			/* 1 */
	uint32_t fsync;			/* fsync every N writes; 0 = never */
	uint32_t fdatasync;		/* fdatasync every N writes; 0 */
	bool end_fsync;
	bool create_on_open;
	/* false: a file the job needs must exist already (an earlier job
	 * made it), it is an error to create it (fio); true */
	bool allow_file_create;
	bool unlink;
	bool unlink_each_loop;		/* unlink the files after each loop */
	/* fio's $jobname/$jobnum/$filenum pattern, may hold '/' (the
	 * directories are created); "" = $jobname.$jobnum.$filenum */
	char filename_format[ZFIO_VAL_LEN];
	/* file_service_type: only fio's "sequential" is modelled (finish
	 * one file before the next); is_set records that it was given */
	bool fst_sequential;
	uint32_t openfiles;		/* files open at once; 0 = nrfiles */
	/* zcow job keys (no fio equivalent), configs/README.md: after a
	 * file's last write (and its fsync), rename it (percent of files)
	 * or unlink it; the two draws are one: rename first, then unlink */
	uint32_t zcow_rename_pct;	/* 0..100; 0 = never */
	uint32_t zcow_unlink_pct;	/* 0..100 - zcow_rename_pct; 0 */
	/* a dbench loadfile each clone replays (harness/dbench.h), as
	 * given, relative to the file that set it; "" = none */
	char zcow_loadfile[ZFIO_PATH_LEN];
	uint64_t randseed;
	bool has_randseed;
	enum zfio_zonemode zonemode;
	uint32_t max_open_zones;	/* 0 = the device's limit */
	uint32_t job_max_open_zones;	/* 0 = none */
	bool ignore_zone_limits;
	double zone_reset_threshold;	/* 0..1 */
	double zone_reset_frequency;	/* 0..1; 0 = no resets */
	uint64_t zonesize;		/* bytes; 0 = the device's */
	uint64_t zonerange;		/* bytes; 0 = zonesize */
	uint64_t zonecapacity;		/* bytes; 0 = the device's */
	uint64_t zoneskip;		/* strided only */
	bool read_beyond_wp;
	bool zone_append;		/* write_mode=zone_append */
	uint32_t kb_base;		/* 1024 or 1000 */
	char wait_for[ZFIO_NAME_LEN];	/* start after this job ends; an
					 * earlier job's unique name */
	/* stonewall (fio's alias wait_for_previous): start once every
	 * earlier job has finished: the first job of a later phase */
	bool stonewall;
	/* ioengine=filecreate: every operation only opens its file
	 * (creating it), no data moves (fio's filecreate engine) */
	bool is_filecreate;
	/* random_distribution (random patterns only, as fio): @dist_param
	 * is zipf's theta, pareto's h or normal's deviation (percent of
	 * the range); @dist_center 0..1, or -1 when not given.  Zoned
	 * kinds: per direction, nr 0 = uniform for that direction. */
	enum zfio_dist dist;
	double dist_param;
	double dist_center;
	struct zfio_dist_zone dist_zones[ZFIO_NR_DDIR][ZFIO_MAX_DIST_ZONES];
	uint32_t nr_dist_zones[ZFIO_NR_DDIR];
	char dist_spec[ZFIO_VAL_LEN];	/* as written; "" = random */
	/* percentage_random, per direction: percent of a random pattern's
	 * offsets drawn at random, the others continue sequentially from
	 * the last I/O (fio); 100 */
	uint32_t pct_random[ZFIO_NR_DDIR];
	/* verify and buffer contents (harness/fio_verify.h) */
	struct zfio_vopts vo;
	/* fio's I/O logs, iolog, fill_device, priorities (fio_logopt.h) */
	struct zfio_logopts log;
	/* errors, exits, latency target, steady state, blockalign, the
	 * modelled engines (fio_ctl.h) */
	struct zfio_ctl ctl;
	struct zfio_at at[ZFIO_NR_OPTS];	/* enum zfio_opt */
	char file[ZFIO_PATH_LEN];	/* where the section starts */
	int line;
};

struct zfio_spec {
	struct zfio_job *jobs;		/* sections, in order (not cloned) */
	unsigned int nr_jobs;
	struct zfio_kv *zcow;		/* the raw [zcow] section(s) */
	unsigned int nr_zcow;
	struct zfio_kv *crash;		/* the raw [crash] section(s) */
	unsigned int nr_crash;
	char (*ignored)[ZFIO_NAME_LEN];	/* ignored option names, once each */
	unsigned int nr_ignored;
	/* Private: raw storage. */
	struct zfio_kv *kvs;
	unsigned int nr_kvs;
	uint64_t kvs_cap;
	struct zfio_sect *sects;
	unsigned int nr_sects;
	uint64_t sects_cap;
};

/*
 * Parse @path (or @text named @name) and resolve every job, applying the
 * @nr_sets overrides ("key=value" strings) to every job last.  A NULL
 * override is skipped (the caller's own key); its number still counts:
 * errors name the Nth override "--set:N".  Returns 0,
 * -EINVAL with the message in @err, -ENOENT/-errno when a file cannot be
 * read (message in @err), or -ENOMEM.  Free with zfio_free().
 */
int zfio_parse_file(const char *path, const char *const *sets,
		    unsigned int nr_sets, struct zfio_spec **spec_ret,
		    char *err, size_t err_len);
int zfio_parse_text(const char *name, const char *text,
		    const char *const *sets, unsigned int nr_sets,
		    struct zfio_spec **spec_ret, char *err, size_t err_len);
void zfio_free(struct zfio_spec *spec);

/* Value parsers (fio's rules).  Return 0 or -EINVAL. */
int zfio_parse_size(const char *s, uint32_t kb_base, struct zfio_size *ret);
int zfio_parse_time(const char *s, uint64_t *ns_ret);	/* default unit s */
int zfio_parse_bool(const char *s, bool *ret);

/* Resolve a size against a target of @total bytes with @zone_size zones.
 * Percent rounds down to @align.  Returns bytes. */
uint64_t zfio_size_bytes(const struct zfio_size *sz, uint64_t total,
			 uint64_t zone_size, uint64_t align);

const char *zfio_rw_name(enum zfio_rw rw);
bool zfio_rw_is_random(enum zfio_rw rw);
bool zfio_rw_has_write(enum zfio_rw rw);
bool zfio_rw_has_read(enum zfio_rw rw);

/*
 * "FILE:LINE: option 'KEY'" for option @opt of job @j into @buf: where it
 * was set, or, for a default, the job's section and "(default)".
 */
void zfio_opt_where(const struct zfio_job *j, enum zfio_opt opt, char *buf,
		    size_t len);
/* "WHERE: MESSAGE" (zfio_opt_where() and @fmt) into @err; -EINVAL. */
int zfio_opt_verr(char *err, size_t len, const struct zfio_job *j,
		  enum zfio_opt opt, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));
/* The same with its arguments (an error about option @opt of @j). */
int zfio_err(char *err, size_t len, const struct zfio_job *j,
	     enum zfio_opt opt, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
const char *zfio_opt_name(enum zfio_opt opt);

/*
 * The job options the parser knows, one a line, as harness/fio.c's option
 * table lists them: "NAME" or "NAME (alias OTHER)"; then the options fio
 * has that are accepted and ignored here, "NAME (ignored)"; fio's
 * engine-only options, ignored or refused with the reason, "NAME (ignored:
 * REASON)" and "NAME (refused: REASON)".  Any other key is an "unknown
 * option" error.
 */
void zfio_list_options(FILE *out);

/*
 * The offsets of a random pattern (random_distribution and
 * percentage_random), per job clone: blocks 0 .. @nr_blocks - 1 of its
 * range, drawn from the clone's PRNG state (base/prng.h) so that a seed
 * gives one sequence.  The uniform default draws exactly one value per
 * offset (zcow_rand64() % nr_blocks), and percentage_random=100 none, so
 * a job without these options draws what it always did.
 */
struct zfio_dist_state {
	const struct zfio_job *job;
	uint64_t nr_blocks;
	uint64_t bs;		/* the unit: zfio_rand_unit(job) */
	/* zipf, pareto, normal: rank r goes to block (perm(r) + rot) mod
	 * nr_blocks, perm a keyed bijection (zfio_dist_next()) */
	uint64_t keys[4];
	unsigned int half_bits;
	uint64_t rot;
	double c[3];		/* the kind's constants */
};

/*
 * Set @st up for job @j's clone over @nr_blocks blocks of
 * zfio_rand_unit(@j) bytes (zfio_rand_blocks()).
 * @seed is the job's seed (shared by its clones: one scramble), @clone
 * the clone's PRNG state (read, not advanced: its own rotation).
 * Returns 0, or -EINVAL when zoned_abs zones do not fit the range
 * ("FILE:LINE: option 'random_distribution': ..." in @err).
 */
int zfio_dist_init(struct zfio_dist_state *st, const struct zfio_job *j,
		   uint64_t nr_blocks, uint64_t seed, uint64_t clone,
		   char *err, size_t err_len);
/* Whether the next offset of direction @d is random (percentage_random);
 * draws from *@rng only when the percentage is not 100. */
bool zfio_dist_is_random(const struct zfio_dist_state *st,
			 enum zfio_ddir d, uint64_t *rng);
/* The next random block (0 .. nr_blocks - 1; 0 when there are none) of
 * direction @d, advancing *@rng. */
uint64_t zfio_dist_next(const struct zfio_dist_state *st, enum zfio_ddir d,
			uint64_t *rng);

/* zipf, pareto, normal: the block that rank @rank is scrambled to (a
 * bijection on the blocks); other kinds: @rank.  A zipf or pareto rank
 * is a popularity (0: the most likely), a normal one a position in the
 * bell (nr_blocks / 2: the most likely). */
uint64_t zfio_dist_block_of_rank(const struct zfio_dist_state *st,
				 uint64_t rank);

/*
 * The size of the next I/O of direction @d (fio's get_next_buflen()):
 * the fixed size without a draw; else a bsrange or bssplit draw from
 * *@rng that fits the @room bytes left in the job's range, redrawn when
 * it does not (at most ZFIO_BS_DRAWS times, then the smallest).  Returns
 * 0 when not even the smallest size fits.  In harness/fio_gen.c.
 */
#define ZFIO_BS_DRAWS	1000u
uint64_t zfio_next_bs(const struct zfio_job *j, enum zfio_ddir d,
		      bool is_random, uint64_t room, uint64_t *rng);
/* Is every size job @j may issue a multiple of @align bytes? */
bool zfio_bs_is_multiple(const struct zfio_job *j, uint64_t align);

/*
 * The offsets of a job clone (fio's get_next_block()): rw=PATTERN:N's
 * count and the last I/O's offset.  Start with nr_left 1.
 */
struct zfio_offsets {
	uint32_t nr_left;	/* I/Os until a new draw (fio's ddir_seq_nr) */
	uint64_t last_start;	/* relative; rw_sequencer=identical */
};

/*
 * The offset, relative to the job's range of @range_len bytes, of its
 * next I/O of direction @d, @seq_pos being the end of its last one: a
 * random pattern with rw=PATTERN:N draws every Nth time (the first I/O
 * draws) and between follows rw_sequencer; a draw is random (@dist,
 * *@rng; *@is_rand_ret true) or, by percentage_random, sequential.  A
 * sequential offset is @seq_pos plus rw=PATTERN:N's step but for the
 * first, wrapping as fio's get_next_seq_offset(): past the end forwards
 * to 0, backwards to the end less the step.  The default draws one value
 * per random offset, as it always did.
 */
uint64_t zfio_next_offset(const struct zfio_job *j,
			  const struct zfio_dist_state *dist,
			  struct zfio_offsets *st, enum zfio_ddir d,
			  uint64_t seq_pos, uint64_t range_len, uint64_t *rng,
			  bool *is_rand_ret);

/*
 * fio's rate control in simulated time (fio_gen.c; fio's rate_ddir() and
 * usec_for_io()): per direction, the bytes issued and when the next I/O
 * may be issued, in us from the job's start, as fio computes them; and
 * rate_min's last check.  Zeroed by zfio_rate_init().
 */
struct zfio_rate {
	uint64_t bps[ZFIO_NR_DDIR];	/* 0: no rate for the direction */
	uint64_t issued[ZFIO_NR_DDIR];	/* bytes */
	uint64_t next_us[ZFIO_NR_DDIR];
	uint64_t last_us[ZFIO_NR_DDIR];	/* poisson, rate_iops + bssplit */
	/* completed I/Os, and at rate_min's last check (its time, ms) */
	uint64_t done_bytes[ZFIO_NR_DDIR], done_ios[ZFIO_NR_DDIR];
	uint64_t chk_bytes[ZFIO_NR_DDIR], chk_ios[ZFIO_NR_DDIR];
	uint64_t chk_ms[ZFIO_NR_DDIR];
};

/* Does job @j use rate control (any rate option)? */
bool zfio_rate_is_set(const struct zfio_job *j);
void zfio_rate_init(struct zfio_rate *r, const struct zfio_job *j);
/*
 * The direction to issue instead of @d at @now_us, and from when
 * (*at_us_ret, >= @now_us): @d when it is behind its rate, else a mixed
 * job's other direction when that one is behind, else the one due first
 * (fio's rate_ddir()); @end_us caps the wait (the runtime; 0 = none).
 */
enum zfio_ddir zfio_rate_ddir(const struct zfio_rate *r,
			      const struct zfio_job *j, enum zfio_ddir d,
			      uint64_t now_us, uint64_t end_us,
			      uint64_t *at_us_ret);
/* An I/O of @len bytes of @d was issued: when the next may be (poisson
 * draws from *@rng). */
void zfio_rate_issued(struct zfio_rate *r, const struct zfio_job *j,
		      enum zfio_ddir d, uint64_t len, uint64_t *rng);
/*
 * An I/O of @len bytes of @d completed at @now_ms (from the job's
 * start): rate_min and rate_iops_min, checked as fio does (not in the
 * first 2 s, then once per ratecycle).  Returns 0, or -EIO with fio's
 * message ("NAME: rate_min=NB/s not met, got MB/s") in @err.
 */
int zfio_rate_done(struct zfio_rate *r, const struct zfio_job *j,
		   enum zfio_ddir d, uint64_t len, uint64_t now_ms,
		   char *err, size_t err_len);

/* Print one job's resolved options in fio syntax (for the results). */
void zfio_print_job(FILE *out, const struct zfio_job *job);

#endif /* ZCOW_FIO_H */
