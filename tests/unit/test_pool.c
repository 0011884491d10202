/*
 * test_pool.c - ckptd's worker pool (server/core/pool.c): every task submitted
 * ends exactly once, through ->done on the loop thread after ->run on a
 * worker, or through ->drop at pool_close(); tasks a ->drop submits while
 * the pool closes are dropped too (they were leaked before), and urgent
 * tasks go before the others waiting.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "loop.h"
#include "pool.h"

struct ttask {
	struct pool_task pt;
	struct pool *pool;
	struct loop *loop;
	int id;
	int resubmit;             /* drops to chain from ->drop */
	int *ran, *done, *dropped;   /* counters, per id */
	int *order, *norder;      /* ->run order (under order_mu) */
	pthread_mutex_t *gate;    /* ->run waits for it when set, */
	sem_t *started;           /* after posting this */
};

static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;
static int left;              /* ->done still to come (loop thread) */

static int t_run(struct pool_task *t)
{
	struct ttask *tt = (struct ttask *)t;

	if (tt->gate) {
		sem_post(tt->started);
		pthread_mutex_lock(tt->gate);
		pthread_mutex_unlock(tt->gate);
	}
	pthread_mutex_lock(&order_mu);
	tt->ran[tt->id]++;
	if (tt->order)
		tt->order[(*tt->norder)++] = tt->id;
	pthread_mutex_unlock(&order_mu);
	return -tt->id;
}

static void t_done(struct pool_task *t)
{
	struct ttask *tt = (struct ttask *)t;

	CU_ASSERT_EQUAL(t->result, -tt->id);
	tt->done[tt->id]++;
	if (--left == 0)
		tt->loop->stop = 1;
	free(tt);
}

static struct ttask *mk(struct ttask *like, int id);

static void t_drop(struct pool_task *t)
{
	struct ttask *tt = (struct ttask *)t;

	tt->dropped[tt->id]++;
	if (tt->resubmit > 0) {
		struct ttask *n = mk(tt, tt->id + 1);

		CU_ASSERT_FATAL(n != NULL);
		n->resubmit = tt->resubmit - 1;
		pool_submit(tt->pool, &n->pt, 0);
	}
	free(tt);
}

static struct ttask *mk(struct ttask *like, int id)
{
	struct ttask *tt = malloc(sizeof(*tt));

	if (!tt)
		return NULL;
	*tt = *like;
	tt->id = id;
	tt->resubmit = 0;
	pool_task_init(&tt->pt, t_run, t_done, t_drop);
	return tt;
}

#define N 64

/* N tasks on 3 workers: each runs once and its ->done runs once, on the
 * loop, with run's result. */
static void test_run_done(void)
{
	int ran[N] = { 0 }, done[N] = { 0 }, dropped[N] = { 0 }, i;
	struct loop l;
	struct pool *p;
	struct ttask like = { .ran = ran, .done = done, .dropped = dropped };

	CU_ASSERT_FATAL(loop_init(&l, 16) == 0);
	CU_ASSERT_FATAL(pool_open(&p, &l, 3, NULL) == 0);
	like.pool = p;
	like.loop = &l;
	left = N;
	for (i = 0; i < N; i++) {
		struct ttask *tt = mk(&like, i);

		CU_ASSERT_FATAL(tt != NULL);
		pool_submit(p, &tt->pt, i & 1);
	}
	CU_ASSERT_EQUAL(pool_pending(p), N);
	CU_ASSERT_EQUAL(loop_run(&l), 0);
	CU_ASSERT_EQUAL(pool_pending(p), 0);
	for (i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(ran[i], 1);
		CU_ASSERT_EQUAL(done[i], 1);
		CU_ASSERT_EQUAL(dropped[i], 0);
	}
	pool_close(p);
	loop_release(&l);
}

/* Tasks whose ->done has not run when the pool closes are dropped, and
 * each drop here submits another task, three deep: all of them are dropped
 * (none runs after the close), none is leaked. */
static void test_close_drops_resubmits(void)
{
	int ran[N] = { 0 }, done[N] = { 0 }, dropped[N] = { 0 }, i;
	struct loop l;
	struct pool *p;
	struct ttask like = { .ran = ran, .done = done, .dropped = dropped };

	CU_ASSERT_FATAL(loop_init(&l, 16) == 0);
	CU_ASSERT_FATAL(pool_open(&p, &l, 2, NULL) == 0);
	like.pool = p;
	like.loop = &l;
	/* Ids 0, 4, 8 and 12, each chaining 3 more: 16 drops in all.  The
	 * loop is never run, so no ->done can run. */
	for (i = 0; i < 16; i += 4) {
		struct ttask *tt = mk(&like, i);

		CU_ASSERT_FATAL(tt != NULL);
		tt->resubmit = 3;
		pool_submit(p, &tt->pt, 0);
	}
	pool_close(p);
	for (i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL(done[i], 0);
		CU_ASSERT_EQUAL(dropped[i], 1);
		/* The chained ones were submitted after the workers left. */
		if (i % 4)
			CU_ASSERT_EQUAL(ran[i], 0);
	}
	loop_release(&l);
}

/* With the one worker held, urgent tasks submitted later run before the
 * plain ones waiting, last urgent first. */
static void test_urgent_first(void)
{
	int ran[N] = { 0 }, done[N] = { 0 }, dropped[N] = { 0 };
	int order[N], norder = 0, i;
	static const int want[] = { 0, 4, 3, 1, 2 };
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	sem_t started;
	struct loop l;
	struct pool *p;
	struct ttask like = { .ran = ran, .done = done, .dropped = dropped,
			      .order = order, .norder = &norder };
	struct ttask *tt;

	CU_ASSERT_FATAL(loop_init(&l, 16) == 0);
	CU_ASSERT_FATAL(pool_open(&p, &l, 1, NULL) == 0);
	like.pool = p;
	like.loop = &l;
	left = 5;
	CU_ASSERT_FATAL(sem_init(&started, 0, 0) == 0);
	pthread_mutex_lock(&gate);
	/* Task 0 holds the worker until the gate opens; the others are
	 * submitted once it has started. */
	tt = mk(&like, 0);
	CU_ASSERT_FATAL(tt != NULL);
	tt->gate = &gate;
	tt->started = &started;
	pool_submit(p, &tt->pt, 0);
	while (sem_wait(&started) < 0 && errno == EINTR)
		;
	for (i = 1; i <= 4; i++) {
		tt = mk(&like, i);
		CU_ASSERT_FATAL(tt != NULL);
		pool_submit(p, &tt->pt, i >= 3);
	}
	pthread_mutex_unlock(&gate);
	CU_ASSERT_EQUAL(loop_run(&l), 0);
	CU_ASSERT_EQUAL_FATAL(norder, 5);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(order[i], want[i]);
	pool_close(p);
	loop_release(&l);
	pthread_mutex_destroy(&gate);
	sem_destroy(&started);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "run_done", test_run_done },
		{ "close_drops_resubmits", test_close_drops_resubmits },
		{ "urgent_first", test_urgent_first },
		{ NULL, NULL }
	};

	return unit_run("pool", tests);
}
