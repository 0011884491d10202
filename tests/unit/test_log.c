/*
 * test_log.c - unit tests for lib/log: levels and the installable sink.
 *
 * A capturing sink records what reaches it, so the tests can check that
 * nothing is delivered before a sink is installed, that the threshold drops
 * the right levels, that long messages are cut cleanly, and that errno
 * survives a log call.  The stderr sink is checked by pointing fd 2 at a file
 * in a private mkdtemp directory for the duration of one call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "log.h"

static struct {
	int calls;
	int level;
	char msg[4096];
	void *arg;
} cap;

static void capture_sink(int level, const char *msg, void *arg)
{
	cap.calls++;
	cap.level = level;
	cap.arg = arg;
	snprintf(cap.msg, sizeof(cap.msg), "%s", msg);
	errno = EBADF;          /* a sink that clobbers errno */
}

static void capture_reset(void)
{
	memset(&cap, 0, sizeof(cap));
}

static void test_no_sink_drops(void)
{
	capture_reset();
	log_set_sink(NULL, NULL);
	log_set_level(LOG_DEBUG);
	log_printf(LOG_ERR, "nobody hears this %d", 1);
	CU_ASSERT_EQUAL(cap.calls, 0);
}

static void test_sink_gets_message(void)
{
	int token;

	capture_reset();
	log_set_sink(capture_sink, &token);
	log_set_level(LOG_INFO);
	log_printf(LOG_WARNING, "drain: chunk=%s err=%d", "a.1", -5);
	CU_ASSERT_EQUAL(cap.calls, 1);
	CU_ASSERT_EQUAL(cap.level, LOG_WARNING);
	CU_ASSERT_PTR_EQUAL(cap.arg, &token);
	CU_ASSERT_STRING_EQUAL(cap.msg, "drain: chunk=a.1 err=-5");
	log_set_sink(NULL, NULL);
}

static void test_threshold(void)
{
	int lvl;

	capture_reset();
	log_set_sink(capture_sink, NULL);
	log_set_level(LOG_NOTICE);
	for (lvl = LOG_EMERG; lvl <= LOG_DEBUG; lvl++)
		log_printf(lvl, "level %d", lvl);
	/* emerg, alert, crit, err, warning, notice */
	CU_ASSERT_EQUAL(cap.calls, 6);
	CU_ASSERT_EQUAL(cap.level, LOG_NOTICE);

	capture_reset();
	log_set_level(LOG_DEBUG);
	log_printf(LOG_DEBUG, "debug on");
	CU_ASSERT_EQUAL(cap.calls, 1);

	capture_reset();
	log_set_level(LOG_ERR);
	log_printf(LOG_WARNING, "dropped");
	log_printf(LOG_ERR, "kept");
	CU_ASSERT_EQUAL(cap.calls, 1);
	CU_ASSERT_STRING_EQUAL(cap.msg, "kept");

	/* Out-of-range thresholds are clamped, not trusted. */
	capture_reset();
	log_set_level(99);
	log_printf(LOG_DEBUG, "x");
	CU_ASSERT_EQUAL(cap.calls, 1);
	log_set_level(LOG_INFO);
	log_set_sink(NULL, NULL);
}

static void test_long_message(void)
{
	char big[5000];
	size_t n;

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	capture_reset();
	log_set_sink(capture_sink, NULL);
	log_printf(LOG_ERR, "%s", big);
	CU_ASSERT_EQUAL(cap.calls, 1);
	n = strlen(cap.msg);
	CU_ASSERT(n > 1000 && n < sizeof(big) - 1);
	CU_ASSERT_STRING_EQUAL(cap.msg + n - 3, "...");
	log_set_sink(NULL, NULL);
}

/* Names are any bytes: one with a newline must not forge a line. */
static void test_control_bytes_escaped(void)
{
	char big[3000];
	size_t n;

	capture_reset();
	log_set_sink(capture_sink, NULL);
	log_printf(LOG_WARNING, "version %s/%s: straggler", "a\nwarning: version victim", "v\x1b[2J\x7f");
	CU_ASSERT_STRING_EQUAL(cap.msg, "version a\\x0awarning: version victim/v\\x1b[2J\\x7f: straggler");
	/* escaping that runs past the buffer still ends in the mark */
	memset(big, '\n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_printf(LOG_ERR, "%s", big);
	n = strlen(cap.msg);
	CU_ASSERT(n > 1000 && n < 2048);
	CU_ASSERT_STRING_EQUAL(cap.msg + n - 3, "...");
	CU_ASSERT_PTR_NULL(strchr(cap.msg, '\n'));
	log_set_sink(NULL, NULL);
}

static void test_errno_preserved(void)
{
	log_set_sink(capture_sink, NULL);
	errno = ENOSPC;
	log_printf(LOG_ERR, "write failed");
	CU_ASSERT_EQUAL(errno, ENOSPC);
	log_set_sink(NULL, NULL);
}

static void test_level_names(void)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err",
					     "warning", "notice", "info",
					     "debug" };
	int i;

	for (i = LOG_EMERG; i <= LOG_DEBUG; i++) {
		CU_ASSERT_STRING_EQUAL(log_level_name(i), names[i]);
		CU_ASSERT_EQUAL(log_level_parse(names[i]), i);
	}
	CU_ASSERT_EQUAL(log_level_parse("DEBUG"), LOG_DEBUG);
	CU_ASSERT_EQUAL(log_level_parse("error"), LOG_ERR);
	CU_ASSERT_EQUAL(log_level_parse("warn"), LOG_WARNING);
	CU_ASSERT_EQUAL(log_level_parse("loud"), -EINVAL);
	CU_ASSERT_EQUAL(log_level_parse(""), -EINVAL);
	CU_ASSERT_EQUAL(log_level_parse(NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(log_level_name(-1), "unknown");
	CU_ASSERT_STRING_EQUAL(log_level_name(8), "unknown");
}

/* Run the stderr sink with fd 2 redirected to a file, and read it back. */
static void test_stderr_sink(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 8], out[512];
	int fd, saved;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/tmp/test_log.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/err", dir);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0);
	CU_ASSERT_FATAL(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	log_set_sink(log_sink_stderr, NULL);
	log_set_level(LOG_INFO);
	log_printf(LOG_WARNING, "disk %s is %d%% full", "sda", 97);
	log_set_sink(NULL, NULL);
	dup2(saved, STDERR_FILENO);
	close(saved);

	n = pread(fd, out, sizeof(out) - 1, 0);
	CU_ASSERT_FATAL(n > 0);
	out[n] = '\0';
	/* "YYYY-mm-dd HH:MM:SS.mmm warning: disk sda is 97% full\n" */
	CU_ASSERT_EQUAL(strlen(out), 24 + strlen("warning: disk sda is 97% full\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, " warning: disk sda is 97% full\n"));
	CU_ASSERT_EQUAL(out[4], '-');
	CU_ASSERT_EQUAL(out[19], '.');

	close(fd);
	CU_ASSERT_EQUAL(unlink(path), 0);
	CU_ASSERT_EQUAL(rmdir(dir), 0);
}

/* At most max messages a second; the next second first says how many
 * were dropped. */
static void test_rate_limit(void)
{
	struct log_rl rl = { 0 };
	int i, ok = 0;

	capture_reset();
	log_set_sink(capture_sink, NULL);
	log_set_level(LOG_INFO);
	for (i = 0; i < 100; i++)
		ok += log_rl_ok(&rl, 10, 5000 + i, "session: bad frames");
	CU_ASSERT_EQUAL(ok, 10);
	CU_ASSERT_EQUAL(cap.calls, 0);
	CU_ASSERT_EQUAL(log_rl_ok(&rl, 10, 6000, "session: bad frames"), 1);
	CU_ASSERT_EQUAL(cap.calls, 1);
	CU_ASSERT_EQUAL(cap.level, LOG_WARNING);
	CU_ASSERT_STRING_EQUAL(cap.msg, "session: bad frames: 90 more not logged");
	/* A quiet second says nothing. */
	CU_ASSERT_EQUAL(log_rl_ok(&rl, 10, 9000, "x"), 1);
	CU_ASSERT_EQUAL(cap.calls, 1);
	log_set_sink(NULL, NULL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "no sink drops", test_no_sink_drops },
		{ "sink gets message", test_sink_gets_message },
		{ "threshold", test_threshold },
		{ "long message truncated", test_long_message },
		{ "control bytes escaped", test_control_bytes_escaped },
		{ "errno preserved", test_errno_preserved },
		{ "level names", test_level_names },
		{ "stderr sink", test_stderr_sink },
		{ "rate limit", test_rate_limit },
		{ NULL, NULL }
	};

	return unit_run("log", tests);
}
