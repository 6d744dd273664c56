/* SPDX-License-Identifier: MIT */
/*
 * zlog: one place where core/ and sim/ report what happened.
 *
 * Messages carry a module tag ("sb", "sim", "zbd", ...) and a level.  They go
 * to stderr by default; a program or test may raise the threshold or install
 * its own sink (tests capture warnings to assert on them).  Log once, where
 * the context is; never print and continue elsewhere.
 */
#ifndef ZCOW_ZLOG_H
#define ZCOW_ZLOG_H

enum zlog_level {
	ZLOG_DEBUG,
	ZLOG_INFO,
	ZLOG_WARN,
	ZLOG_ERR,
	ZLOG_SILENT,	/* as a threshold: print nothing */
};

typedef void (*zlog_sink_fn)(void *arg, enum zlog_level level,
			     const char *tag, const char *msg);

/* Messages below @level are dropped (default ZLOG_INFO). */
void zlog_set_level(enum zlog_level level);
/* Install a sink (NULL restores stderr). */
void zlog_set_sink(zlog_sink_fn fn, void *arg);
/* Number of warnings and errors logged since start (for tests). */
unsigned long zlog_nr_warnings(void);

void zlog(enum zlog_level level, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define zlog_info(tag, ...) zlog(ZLOG_INFO, tag, __VA_ARGS__)
#define zlog_warn(tag, ...) zlog(ZLOG_WARN, tag, __VA_ARGS__)
#define zlog_err(tag, ...) zlog(ZLOG_ERR, tag, __VA_ARGS__)

#endif /* ZCOW_ZLOG_H */
