/*
 * bwlimit.c - the drain's bandwidth cap: a token bucket shared by threads.
 *
 * The bucket fills at rate bytes per second up to burst bytes.  A taker
 * takes its step (at most a bucketful) only when the bucket holds it, and
 * otherwise sleeps for as long as the refill needs and looks again.  The
 * tokens leave the bucket at the moment the taker returns, so the bytes
 * returned over any window stay within rate * window + burst whatever the
 * scheduler does to sleeping threads: one that wakes late finds the tokens
 * still there, unless the bucket overflowed meanwhile, which only happens
 * when nobody was taking anyway.
 *
 * A sleep lasts at most BW_MAX_SLEEP, so that bwlimit_set() - a faster rate,
 * or no cap - reaches threads already asleep soon.  Sleepers are not
 * queued: with the drain's equal chunks, whoever wakes first goes first.
 *
 * A test may install its own clock and sleep; now() is called with the
 * mutex held, sleep() without.
 */
#include <errno.h>
#include <time.h>

#include "bwlimit.h"

#define NSEC_PER_SEC 1000000000ull
#define BW_MIN_BURST (1ull << 20)
#define BW_MAX_SLEEP (NSEC_PER_SEC / 4)

static uint64_t bw_clock_now(void *arg)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Sleep ns on CLOCK_MONOTONIC, to an absolute deadline so that signals do
 * not stretch it. */
static void bw_clock_sleep(void *arg, uint64_t ns)
{
	uint64_t end = bw_clock_now(arg) + ns;
	struct timespec ts = {
		.tv_sec = (time_t)(end / NSEC_PER_SEC),
		.tv_nsec = (long)(end % NSEC_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

void bwlimit_init(struct bwlimit *b, uint64_t rate, uint64_t burst)
{
	pthread_mutex_init(&b->mu, NULL);
	b->rate = rate;
	if (!burst)
		burst = rate / 10 > BW_MIN_BURST ? rate / 10 : BW_MIN_BURST;
	b->burst = burst;
	b->tokens = (double)burst;
	b->now = bw_clock_now;
	b->sleep = bw_clock_sleep;
	b->clock_arg = NULL;
	b->last_ns = b->now(b->clock_arg);
}

void bwlimit_release(struct bwlimit *b)
{
	pthread_mutex_destroy(&b->mu);
}

void bwlimit_set_clock(struct bwlimit *b, uint64_t (*now)(void *),
		       void (*sleep)(void *, uint64_t), void *arg)
{
	pthread_mutex_lock(&b->mu);
	b->now = now;
	b->sleep = sleep;
	b->clock_arg = arg;
	b->last_ns = now(arg);
	b->tokens = (double)b->burst;
	pthread_mutex_unlock(&b->mu);
}

/* Add what the bucket earned since last_ns, up to burst.  Called locked. */
static void bw_refill(struct bwlimit *b, uint64_t now)
{
	if (now <= b->last_ns)
		return;
	if (b->rate) {
		b->tokens += (double)(now - b->last_ns) * (double)b->rate /
			     (double)NSEC_PER_SEC;
		if (b->tokens > (double)b->burst)
			b->tokens = (double)b->burst;
	}
	b->last_ns = now;
}

uint64_t bwlimit_rate(struct bwlimit *b)
{
	uint64_t rate;

	pthread_mutex_lock(&b->mu);
	rate = b->rate;
	pthread_mutex_unlock(&b->mu);
	return rate;
}

void bwlimit_set(struct bwlimit *b, uint64_t rate)
{
	pthread_mutex_lock(&b->mu);
	bw_refill(b, b->now(b->clock_arg));
	/* A cap that starts after none starts with a full bucket, as at
	 * init. */
	if (!b->rate && rate)
		b->tokens = (double)b->burst;
	b->rate = rate;
	pthread_mutex_unlock(&b->mu);
}

/* Try to take the next step of the n bytes still wanted: at most a
 * bucketful under a cap, all of them without one.  Sets *step; returns 0
 * if taken, else how long to sleep before trying again, in ns. */
static uint64_t bw_try(struct bwlimit *b, uint64_t n, uint64_t *step)
{
	uint64_t wait = 0;
	double need;

	pthread_mutex_lock(&b->mu);
	bw_refill(b, b->now(b->clock_arg));
	*step = n;
	if (b->rate) {
		if (*step > b->burst)
			*step = b->burst;
		need = (double)*step - b->tokens;
		if (need <= 0) {
			b->tokens -= (double)*step;
		} else {
			/* Round up: waking early only costs another try. */
			wait = (uint64_t)(need * (double)NSEC_PER_SEC /
					  (double)b->rate) + 1;
			if (wait > BW_MAX_SLEEP)
				wait = BW_MAX_SLEEP;
		}
	}
	pthread_mutex_unlock(&b->mu);
	return wait;
}

void bwlimit_take(struct bwlimit *b, uint64_t n)
{
	uint64_t step, wait;

	while (n) {
		wait = bw_try(b, n, &step);
		if (wait)
			b->sleep(b->clock_arg, wait);
		else
			n -= step;
	}
}
