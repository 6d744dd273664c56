// SPDX-License-Identifier: MIT
#include "zlog.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static enum zlog_level threshold = ZLOG_INFO;
static zlog_sink_fn sink;
static void *sink_arg;
static unsigned long nr_warnings;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {
	[ZLOG_DEBUG] = "debug",
	[ZLOG_INFO] = "info",
	[ZLOG_WARN] = "warning",
	[ZLOG_ERR] = "error",
	[ZLOG_SILENT] = "",
};

void zlog_set_level(enum zlog_level level)
{
	threshold = level;
}

void zlog_set_sink(zlog_sink_fn fn, void *arg)
{
	pthread_mutex_lock(&lock);
	sink = fn;
	sink_arg = arg;
	pthread_mutex_unlock(&lock);
}

unsigned long zlog_nr_warnings(void)
{
	return __atomic_load_n(&nr_warnings, __ATOMIC_RELAXED);
}

void zlog(enum zlog_level level, const char *tag, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level >= ZLOG_WARN)
		__atomic_fetch_add(&nr_warnings, 1, __ATOMIC_RELAXED);
	if (level < threshold && !sink)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&lock);
	if (sink)
		sink(sink_arg, level, tag, msg);
	else if (level >= threshold)
		fprintf(stderr, "zcow: %s: %s: %s\n", tag, level_names[level],
			msg);
	pthread_mutex_unlock(&lock);
}
