/*
 * bwlimit.h - a bandwidth cap shared by the drain's threads.
 *
 * A token bucket: rate bytes per second, holding at most burst bytes.  A
 * thread about to write n bytes calls bwlimit_take(), which returns at once
 * when the bucket holds n tokens and otherwise sleeps until it does, so
 * that over any window the bytes taken stay within rate * window + burst.
 * Rate 0 means no cap.  Thread-safe.  The clock is CLOCK_MONOTONIC unless a
 * test installs its own (then sleeps advance the test clock instead).
 */
#ifndef CKPT_BWLIMIT_H
#define CKPT_BWLIMIT_H

#include <pthread.h>
#include <stdint.h>

struct bwlimit {
	pthread_mutex_t mu;
	uint64_t rate;            /* bytes per second; 0 = unlimited */
	uint64_t burst;           /* bucket size, bytes */
	double tokens;
	uint64_t last_ns;         /* when tokens were last refilled */
	uint64_t (*now)(void *);  /* clock, ns */
	void (*sleep)(void *, uint64_t ns);
	void *clock_arg;
};

/* burst 0 picks max(rate / 10, 1 MiB). */
void bwlimit_init(struct bwlimit *b, uint64_t rate, uint64_t burst);
void bwlimit_release(struct bwlimit *b);
/* Change the rate at run time (0 lifts the cap). */
void bwlimit_set(struct bwlimit *b, uint64_t rate);
/* The rate now (0: no cap). */
uint64_t bwlimit_rate(struct bwlimit *b);
/* Block until n bytes may be sent.  n larger than the bucket is taken in
 * bucket-sized steps. */
void bwlimit_take(struct bwlimit *b, uint64_t n);
/* Tests: replace the clock and the sleep. */
void bwlimit_set_clock(struct bwlimit *b, uint64_t (*now)(void *),
		       void (*sleep)(void *, uint64_t), void *arg);

#endif
