/*
 * pool.h - the daemon's worker threads: blocking work off the loop thread.
 *
 * The loop thread makes a task (a struct pool_task embedded in the caller's
 * own struct) and submits it; a worker thread runs ->run, which may block
 * (file I/O, the PFS) and must touch nothing but what the task carries; then
 * the loop thread runs ->done, through an eventfd the pool keeps armed in
 * io_uring.  A task holds the references it needs (a version, a connection)
 * from submission until ->done or ->drop releases them.
 *
 * Threads: pool_open, pool_submit and pool_close are called on the loop
 * thread only; ->run runs on a worker, ->done and ->drop on the loop thread.
 * The pool owns its threads, its eventfd and the task lists; a task's memory
 * is its owner's, handed back through ->done or ->drop.
 */
#ifndef CKPTD_POOL_H
#define CKPTD_POOL_H

#include "list.h"
#include "loop.h"

struct pool;

struct pool_task {
	struct list link;         /* the pool's, while submitted */
	int (*run)(struct pool_task *t);    /* worker: 0 or -errno */
	void (*done)(struct pool_task *t);  /* loop: t->result is run's */
	/* loop, from pool_close(): the task never ran, or ran and its ->done
	 * never will; release what it holds and free it.  Required. */
	void (*drop)(struct pool_task *t);
	int result;
};

/* Give t its three functions (the rest of t is the pool's). */
static inline void pool_task_init(struct pool_task *t,
				  int (*run)(struct pool_task *),
				  void (*done)(struct pool_task *),
				  void (*drop)(struct pool_task *))
{
	t->run = run;
	t->done = done;
	t->drop = drop;
}

/* Threads for the daemon's own blocking work (manifest writes and drops,
 * spare segments), on top of the drain's copy threads. */
#define POOL_SPARE_THREADS 3

/* Start nthreads workers completing through loop; thread_exit (may be
 * NULL) runs on each worker as it leaves.  0 or -errno. */
int pool_open(struct pool **out, struct loop *loop, unsigned nthreads,
	      void (*thread_exit)(void));
/* Queue t for a worker; urgent tasks (short ones a client waits on) go
 * before the others waiting. */
void pool_submit(struct pool *p, struct pool_task *t, int urgent);
/* Tasks submitted whose ->done has not run yet. */
unsigned pool_pending(const struct pool *p);
/* Join the workers (the task each runs finishes first: callers that need
 * it to end soon tell it through their own flags) and ->drop every task
 * whose ->done has not run, including tasks a ->drop submits while this
 * runs (they are dropped too, never run).  NULL is a no-op. */
void pool_close(struct pool *p);

#endif
