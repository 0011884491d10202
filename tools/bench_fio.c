/*
 * bench_fio.c - run fio as the reference writer for `ckptctl bench`.
 *
 * fio is started with fork/execvp; its stdout (the JSON report) and stderr
 * are collected through two pipes drained with poll(), so that neither can
 * fill up and stall fio.  The JSON is not parsed in full: the report has one
 * group (--group_reporting), and the fields we need are the first
 * "runtime", "bw_bytes" and "io_bytes" inside its "write" object, which
 * lists them before any nested object.  Files are
 * named with an explicit --filename_format so that cleanup knows them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_fio.h"
#include "ctl.h"

#define FIO_OUT_MAX (4u << 20)  /* fio's JSON for one group is ~10 KiB */
#define FIO_ERR_MAX 4096

int fio_available(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	const char *p, *colon;
	size_t n;

	for (p = path ? path : "/usr/bin:/bin"; *p; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		if (n && n + 5 < sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/fio", (int)n, p);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		if (!colon)
			break;
	}
	return 0;
}

/* A growable byte buffer with a hard cap; excess input is dropped. */
struct cap_buf {
	char *s;
	size_t len, cap, max;
};

/* Read what fd has into b; 0 at EOF, 1 if more may come, -errno. */
static int cap_read(int fd, struct cap_buf *b)
{
	char tmp[16384];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	size_t take;

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	if (n == 0)
		return 0;
	take = b->len + (size_t)n > b->max ? b->max - b->len : (size_t)n;
	if (b->len + take + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		char *s;

		while (cap < b->len + take + 1)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, tmp, take);
	b->len += take;
	b->s[b->len] = '\0';
	return 1;
}

/* Drain both pipes until fio closes them. */
static int drain_pipes(int out_fd, int err_fd, struct cap_buf *out,
		       struct cap_buf *err)
{
	struct pollfd pfd[2] = { { .fd = out_fd, .events = POLLIN },
				 { .fd = err_fd, .events = POLLIN } };
	struct cap_buf *b[2] = { out, err };
	int i, r, open = 2;

	while (open) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			r = cap_read(pfd[i].fd, b[i]);
			if (r < 0)
				return r;
			if (r == 0) {
				pfd[i].fd = -1;
				open--;
			}
		}
	}
	return 0;
}

/* The number after "key": at or after from; 0 if not found. */
static int json_u64_after(const char *from, const char *key, uint64_t *out)
{
	char pat[64];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = from ? strstr(from, pat) : NULL;
	if (!p)
		return -ENOENT;
	p += strlen(pat);
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':')
		p++;
	*out = strtoull(p, &end, 10);
	return end == p ? -ENOENT : 0;
}

/* The first "key" : { after from: an object member, not a string value
 * such as the "rw" : "write" of fio's job options. */
static const char *json_obj_after(const char *from, const char *key)
{
	char pat[64];
	const char *p = from, *q;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	while (p && (p = strstr(p, pat))) {
		p += strlen(pat);
		for (q = p; *q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'; q++)
			;
		if (*q++ != ':')
			continue;
		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		if (*q == '{')
			return q;
	}
	return NULL;
}

static int fio_parse(const char *json, struct fio_result *res)
{
	const char *jobs = json ? strstr(json, "\"jobs\"") : NULL;
	const char *wr = jobs ? json_obj_after(jobs, "write") : NULL;

	if (!wr || json_u64_after(wr, "bw_bytes", &res->bw_bytes) ||
	    json_u64_after(wr, "io_bytes", &res->io_bytes) ||
	    json_u64_after(wr, "runtime", &res->runtime_ms))
		return -CKPT_EPROTO;
	return res->bw_bytes ? 0 : -CKPT_EPROTO;
}

/* Child side: wire the pipes to stdout/stderr and exec fio. */
static void __attribute__((noreturn))
fio_exec(const char *dir, int procs, uint64_t size, int out_fd, int err_fd)
{
	char a_dir[4200], a_jobs[32], a_size[48];
	char *argv[] = { "fio", "--name=burst", a_dir, "--ioengine=io_uring",
			 "--direct=1", "--bs=1M", "--rw=write", a_jobs, a_size,
			 "--end_fsync=1", "--group_reporting",
			 "--filename_format=burst.$jobnum.$filenum",
			 "--output-format=json", NULL };

	snprintf(a_dir, sizeof(a_dir), "--directory=%s", dir);
	snprintf(a_jobs, sizeof(a_jobs), "--numjobs=%d", procs);
	snprintf(a_size, sizeof(a_size), "--size=%" PRIu64, size);
	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
		_exit(126);
	execvp("fio", argv);
	_exit(127);
}

/* Last non-empty line of fio's stderr, for the report. */
static void last_line(const char *s, char *out, size_t cap)
{
	const char *end, *start;

	if (!s || !*s) {
		snprintf(out, cap, "no message");
		return;
	}
	end = s + strlen(s);
	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	for (start = end; start > s && start[-1] != '\n'; start--)
		;
	snprintf(out, cap, "%.*s", (int)(end - start), start);
}

static int fio_wait(pid_t pid, const struct cap_buf *err,
		    struct fio_result *res)
{
	char msg[200];
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	last_line(err->s, msg, sizeof(msg));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snprintf(res->why, sizeof(res->why), "fio could not be run");
	else if (WIFEXITED(st))
		snprintf(res->why, sizeof(res->why), "fio exited with %d: %s",
			 WEXITSTATUS(st), msg);
	else
		snprintf(res->why, sizeof(res->why), "fio killed by signal %d",
			 WTERMSIG(st));
	return -ECHILD;
}

int fio_burst(const char *dir, int procs, uint64_t size,
	      struct fio_result *res)
{
	struct cap_buf out = { .max = FIO_OUT_MAX }, err = { .max = FIO_ERR_MAX };
	int opipe[2], epipe[2], rc;
	uint64_t t0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe2(opipe, O_CLOEXEC))
		return -errno;
	if (pipe2(epipe, O_CLOEXEC)) {
		rc = -errno;
		goto out_close_out;
	}
	fflush(NULL);
	t0 = ctl_now_ns();
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto out_close_err;
	}
	if (pid == 0)
		fio_exec(dir, procs, size, opipe[1], epipe[1]);
	close(opipe[1]);
	close(epipe[1]);
	opipe[1] = epipe[1] = -1;
	rc = drain_pipes(opipe[0], epipe[0], &out, &err);
	if (rc)
		kill(pid, SIGKILL);
	rc = fio_wait(pid, &err, res) ?: rc;
	res->wall_ns = ctl_now_ns() - t0;
	if (!rc && fio_parse(out.s, res)) {
		snprintf(res->why, sizeof(res->why),
			 "no write bandwidth in fio's JSON output");
		rc = -CKPT_EPROTO;
	}
	if (rc && !res->why[0])
		snprintf(res->why, sizeof(res->why), "%s", ckpt_strerror(rc));
out_close_err:
	close(epipe[0]);
	if (epipe[1] >= 0)
		close(epipe[1]);
out_close_out:
	close(opipe[0]);
	if (opipe[1] >= 0)
		close(opipe[1]);
	free(out.s);
	free(err.s);
	return rc;
}

int fio_cleanup(const char *dir, int procs)
{
	char path[4200];
	int i, err = 0;

	for (i = 0; i < procs; i++) {
		snprintf(path, sizeof(path), "%s/burst.%d.0", dir, i);
		if (unlink(path) && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}
