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

#include <stdint.h>
#include <syslog.h>

typedef void (*log_sink_fn)(int level, const char *msg, void *arg);

void log_set_sink(log_sink_fn fn, void *arg);
void log_set_level(int level);          /* drop messages above level */
int log_level_parse(const char *s);     /* "debug".."err" -> LOG_*, or -EINVAL */
const char *log_level_name(int level);

void log_printf(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A rate limit for messages that a client can cause at will (bad frames,
 * refused connections): at most max messages a second per limiter.  The
 * caller owns the struct (zeroed to start) and keeps it for the process's
 * life; it is not thread-safe, so each limiter belongs to one thread.
 *
 * log_rl_ok() returns 1 if one more message may be logged now.  When a new
 * second starts and the last one dropped messages, it first logs
 * "<what>: N more not logged" at LOG_WARNING.  now_ms is any monotonic
 * clock in milliseconds.
 */
struct log_rl {
	uint64_t window;        /* the second being counted */
	unsigned n;             /* messages logged in it */
	unsigned dropped;       /* messages not logged in it */
};

int log_rl_ok(struct log_rl *rl, unsigned max, uint64_t now_ms,
	      const char *what);

/* Ready-made sinks: stderr with a timestamp, and syslog(3). */
void log_sink_stderr(int level, const char *msg, void *arg);
void log_sink_syslog(int level, const char *msg, void *arg);

#endif
