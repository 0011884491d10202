/*
 * bench_burst.c - the ckpt side of the burst-to-LOCAL measurement of
 * `ckptctl bench`: N writer processes, one version, one start signal.
 *
 * Each writer is forked, allocates and fills its S bytes, connects, and
 * begins the shared version before the barrier, so that none of that is
 * timed.  It then writes one byte on the ready pipe and blocks reading the
 * go pipe; the parent closes go's write end once every writer is ready,
 * which releases them all at the same instant (EOF).  Each writes
 * rank<i>.bin in b->piece ckpt_write() calls (8 MiB) and commits.  The
 * parent's clock
 * runs from the release until ckpt_wait_name(LOCAL) returns: the version is
 * LOCAL only when every writer that joined has committed and ckptd has
 * made all of it durable.
 *
 * A writer's outcome travels as one fixed-size message on the res pipe,
 * sent before anything that could get it killed, so that the parent can
 * name the writer and call that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "ctl.h"

#define READY_MS    120000  /* writers connected and data generated */

/* What a writer reports to the parent; smaller than PIPE_BUF, so atomic. */
struct burst_msg {
	int rank;
	int err;        /* 0 or the negative error */
	char what[48];  /* the call that failed */
	uint64_t copy_end;  /* stall mode: ctl_now_ns() when its memcpy ended */
	uint64_t write_end; /* ... and its last ckpt_write() returned */
};

/* Writers -> parent: ready, res.  Parent -> writers: go, closed to start;
 * in stall mode go2, closed to start the ckpt_write() phase once every
 * writer has said (on ready again) that its memcpy is done. */
struct burst_pipes {
	int ready[2];
	int go[2];
	int go2[2];
	int res[2];
};

static void burst_send(int fd, int rank, int err, const char *what,
		       uint64_t copy_end, uint64_t write_end)
{
	struct burst_msg m = { .rank = rank, .err = err, .copy_end = copy_end,
			       .write_end = write_end };
	ssize_t n;

	snprintf(m.what, sizeof(m.what), "%s", what);
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

/* A writer's work before the barrier: its data, connection and version. */
static int burst_prepare(const struct bench *b, int rank, char **buf,
			 struct ckpt_client **c, struct ckpt_version **v,
			 const char **what)
{
	int err;

	*what = "malloc";
	*buf = malloc((size_t)b->size);
	if (!*buf)
		return -ENOMEM;
	bench_fill(*buf, (size_t)b->size, 1000 + (uint64_t)rank);
	/* The lease a trainer would get, not the parent's small one. */
	if (b->user_lease[0])
		setenv("CKPT_STAGING", b->user_lease, 1);
	else
		unsetenv("CKPT_STAGING");
	*what = "connect";
	err = ckpt_connect(b->socket, c);
	if (err)
		return err;
	/* A trainer takes its staging lease at start-up, not in the burst. */
	*what = "staging";
	err = ckpt_staging(*c, NULL);
	if (err)
		return err;
	*what = "begin";
	return ckpt_begin(*c, b->job, b->burst_version, v);
}

/* Block until the parent closes the write end of pipe p (EOF). */
static void barrier(const int *p)
{
	char x;

	while (read(p[0], &x, 1) < 0 && errno == EINTR)
		;
}

/* The memcpy baseline of stall mode: the same bytes into pre-faulted
 * memory, in the same calls.  Returns the clock when it ended. */
static uint64_t burst_copy(const struct bench *b, const char *buf, char *dst)
{
	uint64_t off;
	size_t len;

	for (off = 0; off < b->size; off += len) {
		len = b->size - off < b->piece ? (size_t)(b->size - off) :
						 b->piece;
		memcpy(dst + off, buf + off, len);
	}
	__asm__ __volatile__("" : : "r"(dst) : "memory");
	return ctl_now_ns();
}

/* The writer's ckpt_write() calls; *end is the clock when the last one
 * returned.  0 or the first error. */
static int burst_writes(const struct bench *b, struct ckpt_version *v,
			int rank, const char *buf, uint64_t *end)
{
	char path[32];
	uint64_t off;
	size_t len;
	int err = 0;

	snprintf(path, sizeof(path), "rank%d.bin", rank);
	for (off = 0; off < b->size && !err; off += len) {
		len = b->size - off < b->piece ? (size_t)(b->size - off) :
						 b->piece;
		err = ckpt_write(v, path, buf + off, len, off);
	}
	*end = ctl_now_ns();
	return err;
}

/*
 * A writer process: prepare, wait at the barrier, write, commit.  In stall
 * mode it has two phases, each released for all writers at once: the
 * memcpy baseline and the writes, in the order b->writes_first says (the
 * benchmark alternates it, so that neither phase always runs on a machine
 * the other has just warmed or tired).  Each phase ends with the clock
 * reading sent to the parent, which measures from the phase's release:
 * that is what each writer waits, however the writers are scheduled.
 */
static void __attribute__((noreturn))
burst_child(const struct bench *b, const struct burst_pipes *bp, int rank)
{
	struct ckpt_client *c = NULL;
	struct ckpt_version *v = NULL;
	uint64_t copy_end = 0, write_end = 0;
	char *buf = NULL, *dst = NULL;
	const char *what;
	char x;
	int err;

	close(bp->ready[0]);
	close(bp->go[1]);
	close(bp->go2[1]);
	close(bp->res[0]);
	err = burst_prepare(b, rank, &buf, &c, &v, &what);
	if (!err && b->stall_mode) {
		what = "mmap";
		dst = bench_map_prefault((size_t)b->size);
		err = dst ? 0 : -ENOMEM;
	}
	if (err)
		burst_send(bp->res[1], rank, err, what, 0, 0);
	x = err ? 'e' : 'r';
	if (write(bp->ready[1], &x, 1) != 1 || err)
		goto out_exit;
	barrier(bp->go); /* EOF: the parent closed go, everyone starts */
	what = "ckpt_write";
	if (b->stall_mode) {
		if (b->writes_first)
			err = burst_writes(b, v, rank, buf, &write_end);
		else
			copy_end = burst_copy(b, buf, dst);
		x = err ? 'e' : 'm';
		if (write(bp->ready[1], &x, 1) != 1 && !err)
			err = -EPIPE;
		if (!err) {
			barrier(bp->go2);
			if (b->writes_first)
				copy_end = burst_copy(b, buf, dst);
			else
				err = burst_writes(b, v, rank, buf, &write_end);
		}
	} else {
		err = burst_writes(b, v, rank, buf, &write_end);
	}
	if (!err) {
		what = "commit";
		err = ckpt_commit(v);
	}
	burst_send(bp->res[1], rank, err, what, copy_end, write_end);
out_exit:
	ckpt_version_free(v);
	ckpt_disconnect(c);
	if (dst)
		munmap(dst, (size_t)b->size);
	free(buf);
	_exit(err ? 1 : 0);
}

/* Wait for every writer's byte `want` on ready: 0, or 1 if one failed or
 * is late. */
static int burst_ready(const struct bench *b, const struct burst_pipes *bp,
		       char want)
{
	struct pollfd pfd = { .fd = bp->ready[0], .events = POLLIN };
	uint64_t deadline = ctl_now_ns() + (uint64_t)READY_MS * 1000000u;
	int ready = 0;
	uint64_t now;
	ssize_t n;
	char x;

	while (ready < b->procs) {
		now = ctl_now_ns();
		if (now >= deadline ||
		    poll(&pfd, 1, (int)((deadline - now) / 1000000u)) == 0)
			return ctl_failx("bench: only %d of %d writers ready after %d s",
					 ready, b->procs, READY_MS / 1000);
		n = read(bp->ready[0], &x, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			return ctl_failx("bench: a writer died before the barrier");
		if (x != want)
			return CTL_EXIT_FAIL; /* its message is on res */
		ready++;
	}
	return 0;
}

/*
 * Read the writers' results for up to timeout_ms (< 0: until all are in or
 * gone).  Prints the first failure and returns 1, else 0; *got counts the
 * results read.
 */
static int burst_results(struct bench *b, const struct burst_pipes *bp,
			 int timeout_ms, int *got)
{
	struct pollfd pfd = { .fd = bp->res[0], .events = POLLIN };
	struct burst_msg m;
	ssize_t n;

	*got = 0;
	while (*got < b->procs) {
		if (poll(&pfd, 1, timeout_ms) == 0)
			return 0;
		n = read(bp->res[0], &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m))
			return 0; /* EOF: the rest died without a word */
		if (m.rank >= 0 && m.rank < BENCH_WRITERS_MAX && !m.err &&
		    b->stall_mode) {
			b->w_copy_ns[m.rank] = m.copy_end -
				(b->writes_first ? b->go2_ns : b->go_ns);
			b->w_write_ns[m.rank] = m.write_end -
				(b->writes_first ? b->go_ns : b->go2_ns);
		}
		++*got;
		if (m.err) {
			m.what[sizeof(m.what) - 1] = '\0';
			return ctl_fail(m.err, "bench: writer %d: %s", m.rank,
					m.what);
		}
	}
	return 0;
}

static void burst_reap(pid_t *pids, int n, int kill_them)
{
	int i;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		if (kill_them)
			kill(pids[i], SIGKILL);
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
		pids[i] = 0;
	}
}

static int burst_pipes_open(struct burst_pipes *bp)
{
	memset(bp, -1, sizeof(*bp));
	if (pipe2(bp->ready, O_CLOEXEC) || pipe2(bp->go, O_CLOEXEC) ||
	    pipe2(bp->go2, O_CLOEXEC) || pipe2(bp->res, O_CLOEXEC))
		return -errno;
	return 0;
}

static void burst_pipes_close(struct burst_pipes *bp)
{
	int *fd = (int *)bp;
	size_t i;

	for (i = 0; i < sizeof(*bp) / sizeof(int); i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* Release the ready writers together and time the climb to LOCAL. */
static int burst_time(struct bench *b, struct ckpt_client *c, pid_t *pids,
		      struct burst_pipes *bp)
{
	uint64_t t0;
	int err, rc, got;

	rc = burst_ready(b, bp, 'r');
	if (!rc && b->stall_mode) {
		b->go_ns = ctl_now_ns();
		close(bp->go[1]);  /* the first phase */
		bp->go[1] = -1;
		rc = burst_ready(b, bp, 'm');
	}
	if (rc) {
		burst_results(b, bp, 0, &got); /* a failed writer says why */
		return rc;
	}
	t0 = b->go2_ns = ctl_now_ns();
	close(b->stall_mode ? bp->go2[1] : bp->go[1]);
	if (b->stall_mode)
		bp->go2[1] = -1;
	else
		bp->go[1] = -1;
	err = ckpt_wait_name(c, b->job, b->burst_version, CKPT_LOCAL,
			     BENCH_WAIT_MS);
	b->burst_ns = ctl_now_ns() - t0;
	if (err) {
		/* A writer's own error is the cause; prefer it to the wait's. */
		if (!burst_results(b, bp, 1000, &got))
			ctl_fail(err, "bench: wait %s/%s LOCAL", b->job,
				 b->burst_version);
		return CTL_EXIT_FAIL;
	}
	rc = burst_results(b, bp, -1, &got);
	if (!rc && got < b->procs)
		rc = ctl_failx("bench: %d of %d writers exited without a result",
			       b->procs - got, b->procs);
	burst_reap(pids, b->procs, 0);
	return rc;
}

/* Fork the writers and time them; every writer is reaped on return. */
static int burst_run(struct bench *b, struct ckpt_client *c, pid_t *pids,
		     struct burst_pipes *bp)
{
	int i, rc;

	fflush(NULL);
	for (i = 0; i < b->procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			rc = ctl_fail(-errno, "bench: fork writer %d", i);
			goto out_kill;
		}
		if (pids[i] == 0)
			burst_child(b, bp, i);
	}
	close(bp->ready[1]);
	close(bp->res[1]);
	bp->ready[1] = bp->res[1] = -1;
	rc = burst_time(b, c, pids, bp);
out_kill:
	burst_reap(pids, b->procs, 1); /* no-op for those already reaped */
	return rc;
}

int bench_burst(struct bench *b, struct ckpt_client *c)
{
	struct burst_pipes bp;
	pid_t *pids;
	int err, rc;

	snprintf(b->burst_version, sizeof(b->burst_version), "burst-%ld-%d",
		 (long)getpid(), b->nbursts++);
	bench_track(b, b->burst_version);
	memset(b->w_copy_ns, 0, sizeof(b->w_copy_ns));
	memset(b->w_write_ns, 0, sizeof(b->w_write_ns));
	pids = calloc((size_t)b->procs, sizeof(*pids));
	if (!pids)
		return ctl_fail(-ENOMEM, "bench");
	err = burst_pipes_open(&bp);
	if (err) {
		rc = ctl_fail(err, "bench: pipe");
		goto out_close;
	}
	rc = burst_run(b, c, pids, &bp);
out_close:
	burst_pipes_close(&bp);
	free(pids);
	return rc;
}
