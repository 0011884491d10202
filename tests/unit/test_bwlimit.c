/*
 * test_bwlimit.c - the token bucket of the drain's bandwidth cap.
 *
 * Most tests run on a simulated clock: a sleep moves the clock forward
 * instead of waiting, so minutes of capped traffic take milliseconds.  With
 * several threads the clock is the latest time any thread has slept to, and
 * each thread remembers the time it last saw, so that the moment a take
 * returns is known exactly.  Every take is logged, and every window between
 * two logged moments is checked against rate * window + burst (never more)
 * and, for takers that never pause, against 95% of rate * window over
 * windows long enough for that to be fair (never much less).  One short
 * test runs on the real clock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"

#include "bwlimit.h"

#define NS     1000000000ull
#define MB     1000000ull
#define MiB    (1ull << 20)

/* The simulated clock, shared by the threads of a test. */
static uint64_t sim_now_ns;
static uint64_t sim_sleeps;
static uint64_t sim_slept_ns;
static uint64_t sim_late_ns;            /* sleeps overrun by up to this */
static __thread uint64_t tl_seen;       /* this thread's time */
static __thread uint64_t tl_rng = 1;

static uint64_t sim_now(void *arg)
{
	tl_seen = __atomic_load_n(&sim_now_ns, __ATOMIC_SEQ_CST);
	return tl_seen;
}

static void sim_sleep(void *arg, uint64_t ns)
{
	uint64_t target = tl_seen + ns;
	uint64_t cur = __atomic_load_n(&sim_now_ns, __ATOMIC_SEQ_CST);

	if (sim_late_ns) {
		/* A busy scheduler: wake up late by a random amount. */
		tl_rng = tl_rng * 6364136223846793005ull +
			 1442695040888963407ull;
		target += (tl_rng >> 33) % sim_late_ns;
	}

	while (cur < target &&
	       !__atomic_compare_exchange_n(&sim_now_ns, &cur, target, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	__atomic_add_fetch(&sim_sleeps, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&sim_slept_ns, ns, __ATOMIC_SEQ_CST);
	tl_seen = target;
}

static void sim_start(struct bwlimit *b, uint64_t rate, uint64_t burst)
{
	sim_now_ns = 1000 * NS;         /* not 0: nothing may assume it */
	sim_sleeps = 0;
	sim_slept_ns = 0;
	sim_late_ns = 0;
	bwlimit_init(b, rate, burst);
	bwlimit_set_clock(b, sim_now, sim_sleep, NULL);
}

/* The log of takes: when each returned and how much it took. */
struct event {
	uint64_t t;
	uint64_t n;
};

#define MAX_EVENTS 8192

static struct event events[MAX_EVENTS];
static unsigned nevents;
static pthread_mutex_t events_mu = PTHREAD_MUTEX_INITIALIZER;

static void take_logged(struct bwlimit *b, uint64_t n)
{
	bwlimit_take(b, n);
	pthread_mutex_lock(&events_mu);
	if (nevents < MAX_EVENTS)
		events[nevents++] = (struct event){ tl_seen, n };
	pthread_mutex_unlock(&events_mu);
}

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * Over every window [t_i, t_j] between two logged takes, the bytes that
 * returned in it stay within rate * (t_j - t_i) + burst.  With hungry
 * takers, every window of at least min_ns from the first take on also
 * reaches 95% of rate * window.  A failure says by how much.
 */
static void check_windows(uint64_t rate, uint64_t burst, uint64_t min_ns)
{
	uint64_t bytes, allowed, low_fail = 0, high_fail = 0;
	unsigned i, j;
	double floor;

	qsort(events, nevents, sizeof(events[0]), event_cmp);
	for (i = 0; i < nevents; i++) {
		bytes = 0;
		for (j = i; j < nevents; j++) {
			uint64_t w = events[j].t - events[i].t;

			bytes += events[j].n;
			/* Whole nanoseconds of rounding per take. */
			allowed = rate * w / NS + burst + (j - i + 1);
			if (bytes > allowed && bytes - allowed > high_fail)
				high_fail = bytes - allowed;
			/* Takes that returned at t_i or later but before
			 * t_j, against the rate over [t_i, t_j). */
			floor = 0.95 * (double)rate * (double)w / NS;
			if (min_ns && w >= min_ns && (double)(bytes -
			    events[j].n) < floor)
				low_fail++;
		}
	}
	CU_ASSERT_EQUAL(high_fail, 0);
	CU_ASSERT_EQUAL(low_fail, 0);
	if (high_fail || low_fail)
		fprintf(stderr, "windows: %llu bytes over the cap, %llu windows under 95%%\n",
			(unsigned long long)high_fail,
			(unsigned long long)low_fail);
}

static void test_defaults(void)
{
	struct bwlimit b;

	bwlimit_init(&b, 1000 * MB, 0);
	CU_ASSERT_EQUAL(b.burst, 100 * MB);
	bwlimit_release(&b);
	bwlimit_init(&b, 1 * MB, 0);
	CU_ASSERT_EQUAL(b.burst, MiB);
	bwlimit_release(&b);
	bwlimit_init(&b, 0, 0);
	CU_ASSERT_EQUAL(b.burst, MiB);
	bwlimit_release(&b);
	bwlimit_init(&b, 1000 * MB, 12345);
	CU_ASSERT_EQUAL(b.burst, 12345);
	bwlimit_release(&b);
}

/* One hungry taker, several step sizes: the cap and the floor hold. */
static void test_one_taker(void)
{
	static const uint64_t steps[] = { 4096, 65536, MiB, 3 * MiB + 7 };
	const uint64_t rate = 100 * MB, burst = 10 * MB;
	struct bwlimit b;
	size_t s;
	unsigned i;

	for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		sim_start(&b, rate, burst);
		nevents = 0;
		for (i = 0; i < 3000; i++)
			take_logged(&b, steps[s]);
		check_windows(rate, burst, NS / 2);
		/* The total over the run, from the first take. */
		CU_ASSERT(3000 * steps[s] <= rate * (events[nevents - 1].t -
			  events[0].t) / NS + burst + nevents);
		bwlimit_release(&b);
	}
}

struct taker {
	struct bwlimit *b;
	uint64_t seed;
	uint64_t until_ns;               /* simulated time to stop at */
	uint64_t max_step;
};

static void *taker_main(void *arg)
{
	struct taker *t = arg;
	uint64_t x = t->seed, n;

	tl_seen = 0;
	tl_rng = t->seed;
	while (sim_now(NULL) < t->until_ns) {
		/* xorshift: steps of 1 byte up to max_step */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = x % t->max_step + 1;
		take_logged(t->b, n);
	}
	return NULL;
}

/* Four hungry threads with steps of every size up to the bucket, waking
 * on time or up to late_ns late.  Returns the bytes taken per second. */
static double run_threads(uint64_t rate, uint64_t burst, uint64_t late_ns)
{
	struct taker t[4];
	pthread_t th[4];
	struct bwlimit b;
	uint64_t total = 0, span, until;
	unsigned i;

	sim_start(&b, rate, burst);
	sim_late_ns = late_ns;
	nevents = 0;
	until = sim_now_ns + 60 * NS;
	for (i = 0; i < 4; i++) {
		t[i] = (struct taker){ &b, 0x9e3779b97f4a7c15ull * (i + 1),
				       until, burst };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, taker_main,
						     &t[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CU_ASSERT(nevents > 100 && nevents < MAX_EVENTS);
	/* Late wake-ups may cost throughput, never the cap. */
	check_windows(rate, burst, late_ns ? 0 : 10 * NS);
	for (i = 0; i < nevents; i++)
		total += events[i].n;
	span = events[nevents - 1].t - events[0].t;
	CU_ASSERT(total <= rate * span / NS + burst + nevents);
	bwlimit_release(&b);
	return (double)total * NS / (double)span;
}

static void test_threads(void)
{
	const uint64_t rate = 50 * MB, burst = 4 * MB;
	double got;

	got = run_threads(rate, burst, 0);
	CU_ASSERT(got >= 0.95 * rate);
	/* Even waking up to 20 ms late, the cap holds and little is lost:
	 * tokens wait in the bucket for whoever wakes. */
	got = run_threads(rate, burst, 20 * 1000 * 1000);
	CU_ASSERT(got >= 0.9 * rate);
}

/* Rate 0 is no cap: nothing ever sleeps, whatever is taken. */
static void test_unlimited(void)
{
	struct bwlimit b;
	unsigned i;

	sim_start(&b, 0, 0);
	for (i = 0; i < 1000; i++)
		bwlimit_take(&b, 1ull << 40);
	bwlimit_take(&b, UINT64_MAX);
	CU_ASSERT_EQUAL(sim_sleeps, 0);
	bwlimit_release(&b);

	/* Nor does taking nothing under a cap. */
	sim_start(&b, 1, 1);
	bwlimit_take(&b, 1);
	bwlimit_take(&b, 0);
	CU_ASSERT_EQUAL(sim_sleeps, 0);
	bwlimit_release(&b);
}

/* Bytes taken in d seconds of simulated time by a hungry taker. */
static uint64_t run_for(struct bwlimit *b, uint64_t d_ns, uint64_t step)
{
	uint64_t end = sim_now_ns + d_ns, total = 0;

	while (sim_now(NULL) < end) {
		bwlimit_take(b, step);
		total += step;
	}
	return total;
}

static void test_set(void)
{
	const uint64_t burst = 2 * MB, step = 256 * 1024;
	struct bwlimit b;
	uint64_t got;

	sim_start(&b, 100 * MB, burst);
	got = run_for(&b, 10 * NS, step);
	CU_ASSERT(got >= 950 * MB && got <= 1000 * MB + burst + step);

	bwlimit_set(&b, 10 * MB);
	got = run_for(&b, 10 * NS, step);
	CU_ASSERT(got >= 95 * MB && got <= 100 * MB + step);

	/* Lifted: no sleeps at all. */
	bwlimit_set(&b, 0);
	sim_sleeps = 0;
	bwlimit_take(&b, 1ull << 40);
	CU_ASSERT_EQUAL(sim_sleeps, 0);

	/* Back on, from a full bucket. */
	bwlimit_set(&b, 50 * MB);
	got = run_for(&b, 10 * NS, step);
	CU_ASSERT(got >= 475 * MB && got <= 500 * MB + burst + step);

	/* Raised: the faster rate shows at once. */
	bwlimit_set(&b, 200 * MB);
	got = run_for(&b, 10 * NS, step);
	CU_ASSERT(got >= 1900 * MB && got <= 2000 * MB + step);
	bwlimit_release(&b);
}

/* n larger than the bucket goes in bucket-sized steps. */
static void test_big_take(void)
{
	const uint64_t rate = 10 * MB, burst = MiB;
	struct bwlimit b;
	uint64_t t0;

	sim_start(&b, rate, burst);
	t0 = sim_now_ns;
	/* The first MiB is in the bucket; nine more need 9 MiB / rate. */
	bwlimit_take(&b, 10 * MiB);
	CU_ASSERT_EQUAL(sim_sleeps, 9);
	CU_ASSERT(sim_now_ns - t0 >= 9 * MiB * NS / rate);
	CU_ASSERT(sim_now_ns - t0 <= 9 * MiB * NS / rate + 100);
	/* No sleep may be longer than a bucket takes to fill. */
	CU_ASSERT(sim_slept_ns / sim_sleeps <= burst * NS / rate + 1);

	/* A huge take still finishes, at the rate (less the crumb of a
	 * token the last rounded-up sleep left in the bucket). */
	t0 = sim_now_ns;
	bwlimit_take(&b, 1000 * MiB + 1);
	CU_ASSERT(sim_now_ns - t0 >= (1000 * MiB + 1) * NS / rate - 10);
	CU_ASSERT(sim_now_ns - t0 <= (1000 * MiB + 1) * NS / rate + 2000);
	bwlimit_release(&b);
}

/* The real clock: two threads taking 1 MiB at a time for about 0.5 s at
 * 200 MB/s move at most 100 MB (+10%), and not far less. */
static struct {
	struct bwlimit b;
	pthread_mutex_t mu;
	uint64_t start, stop;
	uint64_t last;                  /* latest return, under mu */
	uint64_t total;                 /* bytes taken, under mu */
} rt = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void *rt_main(void *arg)
{
	uint64_t t;

	while (mono_ns() < rt.stop) {
		bwlimit_take(&rt.b, MiB);
		t = mono_ns();
		pthread_mutex_lock(&rt.mu);
		rt.total += MiB;
		if (t > rt.last)
			rt.last = t;
		pthread_mutex_unlock(&rt.mu);
	}
	return NULL;
}

static void test_real_time(void)
{
	const uint64_t rate = 200 * MB;
	pthread_t th[2];
	double want;
	int i;

	bwlimit_init(&rt.b, rate, MiB);
	rt.total = 0;
	rt.start = mono_ns();
	rt.last = rt.start;
	rt.stop = rt.start + NS / 2;
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, rt_main,
						     NULL), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	want = (double)rate * (double)(rt.last - rt.start) / NS;
	/* The cap is the property: never more than the rate (plus its one
	 * burst).  Less only means the threads did not get the CPU (a loaded
	 * machine, a sanitizer), so the floor is loose. */
	CU_ASSERT(rt.total >= 0.5 * want && rt.total <= 1.1 * want + MiB);
	if (rt.total < 0.5 * want || rt.total > 1.1 * want + MiB)
		fprintf(stderr, "real time: %llu bytes in %.3f s, want %.0f\n",
			(unsigned long long)rt.total,
			(double)(rt.last - rt.start) / NS, want);
	CU_ASSERT(rt.last - rt.start < NS);
	bwlimit_release(&rt.b);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "defaults", test_defaults },
		{ "one taker", test_one_taker },
		{ "threads", test_threads },
		{ "unlimited", test_unlimited },
		{ "set", test_set },
		{ "big take", test_big_take },
		{ "real time", test_real_time },
		{ NULL, NULL }
	};

	return unit_run("bwlimit", tests);
}
