/*
 * loop.h - ckptd's event loop: one io_uring, completions dispatched to the
 * struct loop_op that each submission carries as its user data.
 *
 * Everything in ckptd runs on this one thread (socket receives and sends,
 * disk writes and reads, fsyncs and the periodic tick) except the blocking
 * work handed to the worker pool (pool.h).  An operation's owner
 * embeds a struct loop_op, sets ->fn, and keeps the op (and the buffers it
 * names) alive until fn has run.  fn receives cqe->res: >= 0 or -errno.
 */
#ifndef CKPTD_LOOP_H
#define CKPTD_LOOP_H

#include <liburing.h>

/*
 * The kernel fills receive and read buffers behind valgrind's back when the
 * operation goes through io_uring; tell memcheck those bytes are defined.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define loop_mark_defined(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef loop_mark_defined
#define loop_mark_defined(p, n) ((void)(p), (void)(n))
#endif

struct loop_op;
typedef void (*loop_fn)(struct loop_op *op, int res);

struct loop_op {
	loop_fn fn;
};

struct loop {
	struct io_uring ring;
	unsigned inflight;        /* submitted, not yet completed */
	int stop;                 /* set to leave loop_run() */
};

/* 0 or -errno from io_uring_queue_init(). */
int loop_init(struct loop *l, unsigned entries);
void loop_release(struct loop *l);
/* A free SQE with op attached as user data; submits to make room when the
 * ring is full, so it never returns NULL. */
struct io_uring_sqe *loop_sqe(struct loop *l, struct loop_op *op);
/* Complete op without the kernel (for injected faults): fn runs from the
 * loop with res, as if the kernel had returned it. */
void loop_fake(struct loop *l, struct loop_op *op, int res);
/* Run until l->stop is set.  Returns 0 or -errno of a fatal ring error. */
int loop_run(struct loop *l);

#endif
