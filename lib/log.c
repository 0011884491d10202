/*
 * log.c - levelled logging through one installable sink.
 *
 * Every message in the project goes through log_printf(), which formats it
 * into a bounded buffer on the stack and hands the finished string to the
 * sink that the program installed.  The library never decides where a
 * message ends up: until main() calls log_set_sink() messages are dropped,
 * which keeps unit tests and library users quiet by default.
 *
 * The sink, its argument and the threshold are the only globals in lib/.  They
 * are written once at start-up, before any thread runs, and only read after
 * that, so they need no lock.  log_printf() itself is reentrant: it allocates
 * nothing and keeps errno intact, so it is safe to call on error paths.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* Longest message passed to a sink; longer ones end in LOG_TRUNC_MARK. */
#define LOG_MSG_MAX 2048
#define LOG_TRUNC_MARK "..."

static log_sink_fn log_sink;
static void *log_sink_arg;
static int log_threshold = LOG_INFO;

/* Level names, indexed by syslog level (LOG_EMERG = 0 .. LOG_DEBUG = 7). */
static const char *const log_names[] = {
	[LOG_EMERG] = "emerg",
	[LOG_ALERT] = "alert",
	[LOG_CRIT] = "crit",
	[LOG_ERR] = "err",
	[LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

/* Spellings accepted by log_level_parse() besides the names above. */
static const struct {
	const char *name;
	int level;
} log_aliases[] = {
	{ "error", LOG_ERR },
	{ "warn", LOG_WARNING },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Install fn as the sink; NULL drops every message from now on. */
void log_set_sink(log_sink_fn fn, void *arg)
{
	log_sink = fn;
	log_sink_arg = arg;
}

/* Messages with a level numerically above level (less severe) are dropped. */
void log_set_level(int level)
{
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	log_threshold = level;
}

/* Map a level name, in any case, to its LOG_* value. */
int log_level_parse(const char *s)
{
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(log_names); i++)
		if (!strcasecmp(s, log_names[i]))
			return (int)i;
	for (i = 0; i < ARRAY_SIZE(log_aliases); i++)
		if (!strcasecmp(s, log_aliases[i].name))
			return log_aliases[i].level;
	return -EINVAL;
}

/* The canonical name of level, or "unknown" when it is out of range. */
const char *log_level_name(int level)
{
	if (level < LOG_EMERG || level > LOG_DEBUG)
		return "unknown";
	return log_names[level];
}

/*
 * Copy src into dst (cap bytes), control bytes written as \xHH: names are
 * any bytes, and a name with a newline must not make a line of its own (one
 * that looks like ckptd's, about another user's job).  No message ckptd
 * writes has a control byte of its own.  Returns the length written;
 * *cut is set if src did not fit.
 */
static size_t log_escape(char *dst, size_t cap, const char *src, int *cut)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *src; src++) {
		unsigned char c = (unsigned char)*src;

		if (c >= 0x20 && c != 0x7f) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)c;
			continue;
		}
		if (o + 4 >= cap)
			break;
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[c >> 4];
		dst[o++] = hex[c & 15];
	}
	dst[o] = '\0';
	*cut = *src != '\0';
	return o;
}

/*
 * Format the message and pass it to the sink.  The level test comes first so
 * that a debug message costs one comparison when debug logging is off.
 */
void log_printf(int level, const char *fmt, ...)
{
	char raw[LOG_MSG_MAX], msg[LOG_MSG_MAX];
	log_sink_fn sink = log_sink;
	int saved_errno = errno;
	va_list ap;
	size_t len;
	int n, cut;

	if (!sink || level > log_threshold)
		return;

	va_start(ap, fmt);
	n = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (n < 0)
		goto out_restore_errno;
	len = log_escape(msg, sizeof(msg), raw, &cut);
	if (cut || (size_t)n >= sizeof(raw)) {
		if (len > sizeof(msg) - sizeof(LOG_TRUNC_MARK))
			len = sizeof(msg) - sizeof(LOG_TRUNC_MARK);
		memcpy(msg + len, LOG_TRUNC_MARK, sizeof(LOG_TRUNC_MARK));
	}

	sink(level, msg, log_sink_arg);
out_restore_errno:
	errno = saved_errno;
}

/*
 * "2024-05-01 12:00:00.123 warning: msg\n" on fd 2.  The line is built first
 * and written with one write(2), so lines from several threads or processes
 * sharing stderr do not interleave.  arg is unused.
 */
void log_sink_stderr(int level, const char *msg, void *arg)
{
	char line[LOG_MSG_MAX + 64];
	struct timespec ts;
	struct tm tm;
	size_t off;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	off = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
	n = snprintf(line + off, sizeof(line) - off, ".%03ld %s: %s\n",
		     ts.tv_nsec / 1000000, log_level_name(level), msg);
	if (n < 0)
		return;
	off += (size_t)n;
	if (off >= sizeof(line)) {
		off = sizeof(line) - 1;
		line[off - 1] = '\n';
	}
	/* Nothing useful can be done if stderr is gone. */
	if (write(STDERR_FILENO, line, off) < 0)
		return;
}

/* syslog(3) with the message's own level; openlog() is the program's job. */
void log_sink_syslog(int level, const char *msg, void *arg)
{
	syslog(level, "%s", msg);
}

int log_rl_ok(struct log_rl *rl, unsigned max, uint64_t now_ms,
	      const char *what)
{
	uint64_t now = now_ms / 1000;

	if (now != rl->window) {
		if (rl->dropped)
			log_printf(LOG_WARNING, "%s: %u more not logged", what,
				   rl->dropped);
		rl->window = now;
		rl->n = rl->dropped = 0;
	}
	if (rl->n < max) {
		rl->n++;
		return 1;
	}
	rl->dropped++;
	return 0;
}
