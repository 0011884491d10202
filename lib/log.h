/*
 * log.h - levelled logging through one installable sink.
 *
 * Library code calls log_printf() and never writes to stderr itself.  Until a
 * program installs a sink with log_set_sink(), messages are dropped.  The
 * levels are syslog's.  The sink and the threshold are the only globals; they
 * are set once at start-up, before any thread runs.
 */
#ifndef CKPT_LOG_H
#define CKPT_LOG_H

#include <syslog.h>

typedef void (*log_sink_fn)(int level, const char *msg, void *arg);

void log_set_sink(log_sink_fn fn, void *arg);
void log_set_level(int level);          /* drop messages above level */
int log_level_parse(const char *s);     /* "debug".."err" -> LOG_*, or -EINVAL */
const char *log_level_name(int level);

void log_printf(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Ready-made sinks: stderr with a timestamp, and syslog(3). */
void log_sink_stderr(int level, const char *msg, void *arg);
void log_sink_syslog(int level, const char *msg, void *arg);

#endif
