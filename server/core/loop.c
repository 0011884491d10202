/*
 * loop.c - the io_uring event loop.
 *
 * Each SQE carries a struct loop_op pointer; each CQE runs op->fn.  A fault
 * injected by the system-call seam must still complete asynchronously, so
 * that callers see one code path: loop_fake() queues a NOP whose completion
 * is rewritten to the injected result.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "loop.h"
#include "log.h"

/* A NOP standing in for an operation the fault seam failed. */
struct fake_op {
	struct loop_op op;
	struct loop_op *target;
	int res;
};

static void fake_done(struct loop_op *op, int res)
{
	struct fake_op *f = (struct fake_op *)op;

	(void)res;
	f->target->fn(f->target, f->res);
	free(f);
}

/* A timeout whose expiry calls fn(arg) (loop_after()). */
struct later_op {
	struct loop_op op;
	struct __kernel_timespec ts;    /* read by the kernel at submission */
	void (*fn)(void *arg);
	void *arg;
};

static void later_done(struct loop_op *op, int res)
{
	struct later_op *t = (struct later_op *)op;

	(void)res;                      /* -ETIME: it expired */
	t->fn(t->arg);
	free(t);
}

int loop_after(struct loop *l, unsigned ms, void (*fn)(void *arg), void *arg)
{
	struct later_op *t = malloc(sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->op.fn = later_done;
	t->ts.tv_sec = ms / 1000;
	t->ts.tv_nsec = (long long)(ms % 1000) * 1000000;
	t->fn = fn;
	t->arg = arg;
	io_uring_prep_timeout(loop_sqe(l, &t->op), &t->ts, 0, 0);
	return 0;
}

int loop_init(struct loop *l, unsigned entries)
{
	struct io_uring_params p = { 0 };
	int ret;

	l->inflight = 0;
	l->stop = 0;
	l->nbufs = 0;
	l->buf_used = NULL;
	p.flags = IORING_SETUP_CLAMP;
	ret = io_uring_queue_init_params(entries, &l->ring, &p);
	if (ret < 0)
		return ret;
	/* An empty table to fill slot by slot; a kernel without it (before
	 * 5.19) runs without registered buffers. */
	l->buf_used = calloc(LOOP_BUFS, 1);
	ret = l->buf_used ? io_uring_register_buffers_sparse(&l->ring, LOOP_BUFS)
			  : -ENOMEM;
	if (ret == 0) {
		l->nbufs = LOOP_BUFS;
	} else {
		free(l->buf_used);
		l->buf_used = NULL;
		log_printf(LOG_NOTICE, "io_uring: no registered buffers (%s): disk writes from staging pin its pages each time",
			   strerror(-ret));
	}
	return 0;
}

void loop_release(struct loop *l)
{
	io_uring_queue_exit(&l->ring);  /* unregisters every buffer */
	free(l->buf_used);
	l->buf_used = NULL;
	l->nbufs = 0;
}

/* Point slot at len bytes at p (NULL, 0: empty it).  0 or -errno. */
static int buf_set(struct loop *l, unsigned slot, void *p, size_t len)
{
	struct iovec iov = { .iov_base = p, .iov_len = len };
	__u64 tag = 0;
	int ret;

	ret = io_uring_register_buffers_update_tag(&l->ring, slot, &iov, &tag,
						   1);
	return ret < 0 ? ret : ret == 1 ? 0 : -EIO;
}

int loop_buf_add(struct loop *l, void *p, size_t len)
{
	unsigned i;
	int ret;

	if (!len || len > LOOP_BUF_MAX)
		return -EINVAL;
	if (!l->nbufs)
		return -EOPNOTSUPP;
	for (i = 0; i < l->nbufs && l->buf_used[i]; i++)
		;
	if (i == l->nbufs)
		return -ENOSPC;
	ret = buf_set(l, i, p, len);
	if (ret < 0)
		return ret;
	l->buf_used[i] = 1;
	return (int)i;
}

void loop_buf_del(struct loop *l, int slot)
{
	int ret;

	if (slot < 0 || (unsigned)slot >= l->nbufs || !l->buf_used[slot])
		return;
	ret = buf_set(l, (unsigned)slot, NULL, 0);
	if (ret < 0)    /* the slot stays taken: never named again */
		log_printf(LOG_WARNING, "io_uring: unregistering buffer %d: %s",
			   slot, strerror(-ret));
	else
		l->buf_used[slot] = 0;
}

struct io_uring_sqe *loop_sqe(struct loop *l, struct loop_op *op)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&l->ring)))
		io_uring_submit(&l->ring);
	io_uring_sqe_set_data(sqe, op);
	l->inflight++;
	return sqe;
}

void loop_fake(struct loop *l, struct loop_op *op, int res)
{
	struct fake_op *f = malloc(sizeof(*f));

	if (!f) {
		/* Out of memory for the stand-in: complete synchronously. */
		op->fn(op, res);
		return;
	}
	f->op.fn = fake_done;
	f->target = op;
	f->res = res;
	io_uring_prep_nop(loop_sqe(l, &f->op));
}

/*
 * Under valgrind a thread blocked in io_uring_enter() keeps valgrind's big
 * lock, so the drain threads would never run: there, wait in poll() on the
 * ring's fd (readable when completions are ready), which lets them.
 */
static int wait_cqe(struct loop *l)
{
#ifdef RUNNING_ON_VALGRIND
	if (RUNNING_ON_VALGRIND) {
		struct pollfd p = { .fd = l->ring.ring_fd, .events = POLLIN };
		int ret = io_uring_submit(&l->ring);

		if (ret < 0 || io_uring_cq_ready(&l->ring))
			return ret;
		return poll(&p, 1, -1) < 0 ? -errno : 0;
	}
#endif
	return io_uring_submit_and_wait(&l->ring, 1);
}

int loop_run(struct loop *l)
{
	struct io_uring_cqe *cqe;
	unsigned head, n;
	int ret;

	while (!l->stop) {
		ret = wait_cqe(l);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY) {
			log_printf(LOG_ERR, "loop: io_uring_submit_and_wait: %d",
				   ret);
			return ret;
		}
		n = 0;
		io_uring_for_each_cqe(&l->ring, head, cqe) {
			struct loop_op *op = io_uring_cqe_get_data(cqe);
			int res = cqe->res;

			n++;
			io_uring_cqe_seen(&l->ring, cqe);
			l->inflight--;
			if (op)
				op->fn(op, res);
		}
		(void)n;
	}
	return 0;
}
