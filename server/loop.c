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

int loop_init(struct loop *l, unsigned entries)
{
	struct io_uring_params p = { 0 };

	l->inflight = 0;
	l->stop = 0;
	p.flags = IORING_SETUP_CLAMP;
	return io_uring_queue_init_params(entries, &l->ring, &p);
}

void loop_release(struct loop *l)
{
	io_uring_queue_exit(&l->ring);
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
