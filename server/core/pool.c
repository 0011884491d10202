/*
 * pool.c - worker threads for blocking work (see pool.h).
 *
 * Tasks go to the workers through a mutex-protected list; a worker runs one
 * and puts it on the done list, then bumps an eventfd whose read the loop
 * keeps armed in io_uring, and the loop runs the done functions.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "pool.h"

struct pool {
	struct loop *loop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct list todo;         /* under mu */
	struct list done;         /* under mu */
	int stop;                 /* under mu */
	pthread_t *thr;
	unsigned nthr;
	void (*thread_exit)(void);
	int efd;
	uint64_t efd_val;
	struct loop_op efd_op;
	unsigned pending;         /* submitted, ->done not run (loop) */
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	struct pool_task *t;
	uint64_t one = 1;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (list_empty(&p->todo) && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		t = list_entry(p->todo.next, struct pool_task, link);
		list_del(&t->link);
		pthread_mutex_unlock(&p->mu);
		t->result = t->run(t);
		pthread_mutex_lock(&p->mu);
		list_add_tail(&p->done, &t->link);
		if (write(p->efd, &one, sizeof(one)) < 0)
			log_printf(LOG_ERR, "pool: eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&p->mu);
	if (p->thread_exit)
		p->thread_exit();
	return NULL;
}

void pool_submit(struct pool *p, struct pool_task *t, int urgent)
{
	p->pending++;
	pthread_mutex_lock(&p->mu);
	if (urgent) {
		/* At the head: before copies and reads waiting. */
		t->link.next = p->todo.next;
		t->link.prev = &p->todo;
		p->todo.next->prev = &t->link;
		p->todo.next = &t->link;
	} else {
		list_add_tail(&p->todo, &t->link);
	}
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

unsigned pool_pending(const struct pool *p)
{
	return p ? p->pending : 0;
}

static void arm_efd(struct pool *p);

static void on_efd(struct loop_op *op, int res)
{
	struct pool *p = (struct pool *)((char *)op - offsetof(struct pool, efd_op));
	struct list done, *pos, *tmp;

	(void)res;
	loop_mark_defined(&p->efd_val, sizeof(p->efd_val));
	list_init(&done);
	pthread_mutex_lock(&p->mu);
	list_for_each_safe(pos, tmp, &p->done) {
		list_del(pos);
		list_add_tail(&done, pos);
	}
	pthread_mutex_unlock(&p->mu);
	/* Re-armed first: a done function may submit again. */
	arm_efd(p);
	list_for_each_safe(pos, tmp, &done) {
		struct pool_task *t = list_entry(pos, struct pool_task, link);

		list_del(pos);
		p->pending--;
		t->done(t);
	}
}

static void arm_efd(struct pool *p)
{
	struct io_uring_sqe *sqe;

	p->efd_op.fn = on_efd;
	sqe = loop_sqe(p->loop, &p->efd_op);
	io_uring_prep_read(sqe, p->efd, &p->efd_val, sizeof(p->efd_val), 0);
}

static int start_threads(struct pool *p, unsigned n)
{
	int ret;

	p->thr = calloc(n, sizeof(*p->thr));
	if (!p->thr)
		return -ENOMEM;
	for (p->nthr = 0; p->nthr < n; p->nthr++) {
		ret = -pthread_create(&p->thr[p->nthr], NULL, worker, p);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int pool_open(struct pool **out, struct loop *loop, unsigned nthreads,
	      void (*thread_exit)(void))
{
	struct pool *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->loop = loop;
	p->thread_exit = thread_exit;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	list_init(&p->todo);
	list_init(&p->done);
	p->efd = eventfd(0, EFD_CLOEXEC);
	if (p->efd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = start_threads(p, nthreads ? nthreads : 1);
	if (ret < 0)
		goto out_close;
	arm_efd(p);
	*out = p;
	return 0;

out_close:
	pool_close(p);      /* joins the threads started, closes the efd */
	return ret;
out_free:
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
	return ret;
}

void pool_close(struct pool *p)
{
	struct list *pos, *tmp;
	unsigned i;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	/* Tasks never run, or run and not finished: their owners drop them.
	 * A drop may submit again (a stripe fetch whose local shard read is
	 * dropped asks for another shard, or submits its decode), so this
	 * runs until a pass finds both lists empty; each such task is then
	 * dropped in turn, never run. */
	for (;;) {
		struct pool_task *t;

		list_for_each_safe(pos, tmp, &p->todo)
			list_add_tail(&p->done, (list_del(pos), pos));
		if (list_empty(&p->done))
			break;
		pos = p->done.next;
		list_del(pos);
		t = list_entry(pos, struct pool_task, link);
		t->drop(t);
	}
	free(p->thr);
	close(p->efd);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
