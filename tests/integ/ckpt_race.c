/*
 * ckpt_race.c - a commit that races writes of the same version on one
 * client (t_mtwrite, "race").
 *
 *   ckpt_race -s SOCKET [-T THREADS] [-r ROUNDS] [-c CHUNK] [-m MODE]
 *             JOB VERSION
 *
 * Each round: version VERSION.<round> is begun on one client shared by
 * THREADS writer threads (4).  Thread t writes file t<t>.bin front to back
 * in CHUNK-byte writes (1 MiB) with ckpt_write() until a write answers
 * -CKPT_ESEALED, counting the bytes whose write returned 0.  MODE: write
 * (ckpt_write(), the default; a CHUNK above the lease's piece is sent in
 * several pieces), truncate (each write followed by a ckpt_truncate() to
 * the bytes written so far, which changes nothing), or zerocopy
 * (ckpt_buf_get() and ckpt_buf_submit(), cancelled once sealed), or stale
 * (ckpt_write(), while one more thread keeps handing back a buffer of
 * CHUNK bytes it took and cancelled at the start, with ckpt_buf_cancel()
 * and ckpt_buf_submit() of stale.bin, as a buggy caller would: the writers'
 * reservations come round to its offset while they copy).  Once the
 * threads have written 8 chunks in all, the main thread commits, begins
 * VERSION.<round>.next on the same client at once (it may get the handle
 * ckptd just freed), writes next.bin (one chunk) into it, and commits it,
 * while the writers still run into the seal.
 *
 * Mode lend is no race but the rules of lent buffers, once per round: a
 * thread that takes buffers (ckpt_buf_get) until staging is full gets
 * -ENOBUFS, from ckpt_buf_get() and then from ckpt_write(), and does not
 * hang; another version cannot cancel them; half of them are submitted,
 * the version committed (a submit after it: -CKPT_ESEALED) and freed with
 * the rest still lent, which gives those back: twice staging's worth of
 * versions of one CHUNK each are written after it, and every byte reads
 * back.
 *
 * Checks, every round:
 *  - every writer stopped on -CKPT_ESEALED, nothing else;
 *  - each t<t>.bin of the first version is exactly as long as the bytes
 *    whose write returned 0, and holds the right bytes: a write that
 *    returned 0 was sent before the COMMIT, one that answered ESEALED sent
 *    nothing;
 *  - the second version holds next.bin only, with its bytes: no write of
 *    the first version followed the COMMIT into the handle;
 *  - stale: every stale call answered -EINVAL (or -CKPT_ESEALED once
 *    sealed), and the first version has no stale.bin.
 *
 * Exit status: 0 ok, 1 a check failed (message on stderr), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"

#define MAX_THREADS 16

struct race {
	struct ckpt_client *c;
	struct ckpt_version *v;
	const char *mode;
	const char *job;
	size_t chunk;
	unsigned round;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned chunks;          /* under mu: writes that returned 0 */
	unsigned stopped;         /* under mu: writers that stopped */
	unsigned writers;         /* started */
	int stale_bad;            /* stale: a stale call's wrong answer */
	void *stale;              /* stale: the buffer handed back */
	unsigned long stale_calls;
};

struct writer {
	struct race *r;
	unsigned t;
	uint64_t acked;           /* bytes whose write returned 0 */
	int stop;                 /* the error that stopped it (read after
				   * the join) */
	pthread_t thr;
};

/* Byte i of file t in round r: a function of all three. */
static void pattern(unsigned round, unsigned t, uint64_t off, uint8_t *p,
		    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = (off + i) * 0x9e3779b97f4a7c15ull ^
			     ((uint64_t)round << 40 | (uint64_t)t << 32);

		p[i] = (uint8_t)(x >> 29 ^ x >> 17 ^ t);
	}
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ckpt_race: %s: %s\n", what, ckpt_strerror(err));
	return 1;
}

/* One chunk at off, as the mode says. */
static int put(struct race *r, const char *path, const uint8_t *buf,
	       uint64_t off)
{
	void *zb;
	int ret;

	if (strcmp(r->mode, "zerocopy"))
		return ckpt_write(r->v, path, buf, r->chunk, off);
	/* -ENOBUFS: the ring is full behind another thread's buffer, which
	 * it is filling; ckpt_buf_get() does not wait for lent buffers. */
	for (int tries = 0;; tries++) {
		ret = ckpt_buf_get(r->v, r->chunk, &zb);
		if (ret != -ENOBUFS || tries == 100000)
			break;
		sched_yield();
	}
	if (ret < 0)
		return ret;
	memcpy(zb, buf, r->chunk);
	ret = ckpt_buf_submit(r->v, path, zb, r->chunk, off);
	if (ret == -CKPT_ESEALED)
		ckpt_buf_cancel(r->v, zb);
	return ret;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct race *r = w->r;
	uint8_t *buf = malloc(r->chunk);
	char path[32];
	int ret;

	if (!buf) {
		w->stop = -ENOMEM;
		return NULL;
	}
	snprintf(path, sizeof(path), "t%u.bin", w->t);
	for (;;) {
		pattern(r->round, w->t, w->acked, buf, r->chunk);
		ret = put(r, path, buf, w->acked);
		if (ret < 0)
			break;
		w->acked += r->chunk;
		pthread_mutex_lock(&r->mu);
		r->chunks++;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (!strcmp(r->mode, "truncate")) {
			ret = ckpt_truncate(r->v, path, w->acked);
			if (ret < 0)
				break;
		}
	}
	w->stop = ret;
	free(buf);
	pthread_mutex_lock(&r->mu);
	r->stopped++;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* Mode stale: hand r->stale (a buffer taken and cancelled before the
 * writers started: while lent, it would make their full ring answer
 * -ENOBUFS) back until every writer has stopped.  Nothing may take it. */
static void *stale_main(void *arg)
{
	struct race *r = arg;
	void *p = r->stale;
	int ret, done = 0;

	while (!done) {
		ret = ckpt_buf_cancel(r->v, p);
		if (ret == 0)
			break;
		ret = ckpt_buf_submit(r->v, "stale.bin", p, r->chunk, 0);
		if (ret != -EINVAL && ret != -CKPT_ESEALED)
			break;
		r->stale_calls++;
		pthread_mutex_lock(&r->mu);
		done = r->stopped == r->writers;
		pthread_mutex_unlock(&r->mu);
	}
	if (!done)
		r->stale_bad = ret ? ret : 1;
	return NULL;
}

/* Mode lend: see the top. */
static int check_bytes(struct race *r, const char *version, const char *path,
		       unsigned t)
{
	uint8_t *want = malloc(r->chunk), *got = malloc(r->chunk + 4096);
	char what[CKPT_VERSION_MAX + 64];
	size_t n;
	int ret;

	if (!want || !got) {
		ret = fail("malloc", -ENOMEM);
		goto out;
	}
	pattern(r->round, t, 0, want, r->chunk);
	snprintf(what, sizeof(what), "%s/%s", version, path);
	ret = ckpt_read(r->c, r->job, version, path, got, r->chunk + 4096, 0, &n);
	if (ret < 0)
		ret = fail(what, ret);
	else if ((ret = n != r->chunk || memcmp(want, got, n)))
		fprintf(stderr, "ckpt_race: %s differs\n", what);
out:
	free(want);
	free(got);
	return ret;
}

/* Begin version on the client, write chunk t of the pattern as path into
 * it, commit it.  With retry, -ENOBUFS is waited out: zerocopy writers of
 * a version just committed may still hold lent buffers, until they find it
 * sealed and cancel them. */
static int write_one(struct race *r, const char *version, const char *path,
		     unsigned t, int retry)
{
	struct ckpt_version *v;
	uint8_t *buf = malloc(r->chunk);
	char what[CKPT_VERSION_MAX + 64];
	int ret;

	if (!buf)
		return fail("malloc", -ENOMEM);
	pattern(r->round, t, 0, buf, r->chunk);
	snprintf(what, sizeof(what), "%s/%s", version, path);
	ret = ckpt_begin(r->c, r->job, version, &v);
	if (ret < 0) {
		free(buf);
		return fail("begin", ret);
	}
	for (int tries = 0;; tries++) {
		ret = ckpt_write(v, path, buf, r->chunk, 0);
		if (ret != -ENOBUFS || !retry || tries == 100000)
			break;
		sched_yield();
	}
	if (ret < 0)
		ret = fail(what, ret);
	else if ((ret = ckpt_commit(v)) < 0)
		ret = fail("commit", ret);
	ckpt_version_free(v);
	free(buf);
	return ret;
}

static int lend_round(const char *version, struct race *r)
{
	struct ckpt_version *other = NULL;
	void *held[1024];
	char v1[CKPT_VERSION_MAX + 1], v2[CKPT_VERSION_MAX + 1], path[32];
	unsigned n = 0, i;
	size_t size;
	int ret, bad = 0;

	snprintf(v1, sizeof(v1), "%s.%u", version, r->round);
	snprintf(v2, sizeof(v2), "%s.%u.after", version, r->round);
	ret = ckpt_staging(r->c, &size);
	if (ret < 0)
		return fail("staging", ret);
	if (size / r->chunk >= 1024)
		return fail("staging is too large for -m lend", -EINVAL);
	ret = ckpt_begin(r->c, r->job, v1, &r->v);
	if (ret < 0)
		return fail("begin", ret);
	while (n < 1024 &&
	       (ret = ckpt_buf_get(r->v, r->chunk, &held[n])) == 0) {
		pattern(r->round, n, 0, held[n], r->chunk);
		n++;
	}
	if (ret != -ENOBUFS || n + 1 < size / r->chunk) {
		fprintf(stderr, "ckpt_race: %u lent buffers of %zu bytes in %zu, then \"%s\"; want ENOBUFS\n",
			n, r->chunk, size, ckpt_strerror(ret));
		bad = 1;
	}
	ret = n ? ckpt_write(r->v, "w.bin", held[0], r->chunk, 0) : -ENOBUFS;
	if (!bad && ret != -ENOBUFS)
		bad = fail("ckpt_write with staging full of lent buffers", ret);
	/* A buffer is its version's. */
	ret = ckpt_begin(r->c, r->job, v2, &other);
	if (!bad && ret < 0)
		bad = fail("begin", ret);
	if (!bad && n && (ret = ckpt_buf_cancel(other, held[0])) != -EINVAL)
		bad = fail("a cancel through another version", ret);
	if (other) {
		ckpt_abort(other);
		ckpt_version_free(other);
	}
	/* The first half submitted, the rest still lent at the commit. */
	for (i = 0; !bad && i < n / 2; i++) {
		snprintf(path, sizeof(path), "b%u.bin", i);
		ret = ckpt_buf_submit(r->v, path, held[i], r->chunk, 0);
		if (ret < 0)
			bad = fail("submit", ret);
	}
	ret = ckpt_commit(r->v);
	if (!bad && ret < 0)
		bad = fail("commit", ret);
	if (!bad && i < n &&
	    (ret = ckpt_buf_submit(r->v, "late.bin", held[i], r->chunk, 0)) !=
	    -CKPT_ESEALED)
		bad = fail("a submit after the commit", ret);
	/* Frees the buffers still lent: staging is whole again. */
	ckpt_version_free(r->v);
	for (i = 0; !bad && i < n / 2; i++) {
		snprintf(path, sizeof(path), "b%u.bin", i);
		bad = check_bytes(r, v1, path, i);
	}
	for (i = 0; !bad && i < 2 * n; i++) {
		snprintf(v2, sizeof(v2), "%s.%u.after%u", version, r->round, i);
		bad = write_one(r, v2, "a.bin", 999, 0) ||
		      check_bytes(r, v2, "a.bin", 999);
	}
	return bad;
}

/* The first version's file of writer w: exactly its acknowledged bytes. */
static int check_file(const char *job, const char *version,
		      const struct race *r, const struct writer *w)
{
	char path[32], what[CKPT_VERSION_MAX + 64];
	uint8_t *want, *got;
	size_t n;
	int ret = 1;

	snprintf(path, sizeof(path), "t%u.bin", w->t);
	want = malloc(w->acked + 1);
	got = malloc(w->acked + 4096);
	if (!want || !got) {
		ret = fail("malloc", -ENOMEM);
		goto out;
	}
	pattern(r->round, w->t, 0, want, w->acked);
	ret = ckpt_read(r->c, job, version, path, got, w->acked + 4096, 0, &n);
	if (ret == -ENOENT && w->acked == 0) {
		ret = 0;        /* no write of it returned 0: no file */
		goto out;
	}
	if (ret < 0) {
		snprintf(what, sizeof(what), "%s: read %s", version, path);
		ret = fail(what, ret);
		goto out;
	}
	ret = 0;
	if (n != w->acked || memcmp(want, got, n)) {
		fprintf(stderr, "ckpt_race: %s/%s: %zu bytes, %llu acknowledged%s\n",
			version, path, n, (unsigned long long)w->acked,
			n == w->acked ? ", content differs" : "");
		ret = 1;
	}
out:
	free(want);
	free(got);
	return ret;
}

/* The second version: next.bin and nothing else. */
static int check_next(const char *job, const char *next,
		      const struct race *r, unsigned threads)
{
	struct ckpt_version_info vi;
	uint8_t *want = malloc(r->chunk), *got = malloc(r->chunk + 4096);
	char path[32];
	size_t n;
	int ret;

	if (!want || !got) {
		ret = fail("malloc", -ENOMEM);
		goto out;
	}
	ret = ckpt_stat_version(r->c, job, next, &vi);
	if (ret < 0) {
		ret = fail("stat the next version", ret);
		goto out;
	}
	if (vi.nfiles != 1 || vi.bytes != r->chunk) {
		fprintf(stderr, "ckpt_race: %s: %u files, %llu bytes; want next.bin alone\n",
			next, vi.nfiles, (unsigned long long)vi.bytes);
		ret = 1;
		goto out;
	}
	for (unsigned t = 0; t < threads; t++) {
		snprintf(path, sizeof(path), "t%u.bin", t);
		ret = ckpt_read(r->c, job, next, path, got, 1, 0, &n);
		if (ret != -ENOENT) {
			fprintf(stderr, "ckpt_race: %s/%s: a write of the committed version reached it (%s)\n",
				next, path, ckpt_strerror(ret));
			ret = 1;
			goto out;
		}
	}
	pattern(r->round, 999, 0, want, r->chunk);
	ret = ckpt_read(r->c, job, next, "next.bin", got, r->chunk + 4096, 0, &n);
	if (ret < 0) {
		ret = fail("read next.bin", ret);
		goto out;
	}
	ret = n != r->chunk || memcmp(want, got, n);
	if (ret)
		fprintf(stderr, "ckpt_race: %s/next.bin differs\n", next);
out:
	free(want);
	free(got);
	return ret;
}

static int one_round(const char *job, const char *version, struct race *r,
		     unsigned threads)
{
	struct writer w[MAX_THREADS];
	pthread_t stale;
	int stale_on = 0;
	char v1[CKPT_VERSION_MAX + 1], v2[CKPT_VERSION_MAX + 1];
	unsigned t, n = 0;
	int ret, bad = 0;

	snprintf(v1, sizeof(v1), "%s.%u", version, r->round);
	snprintf(v2, sizeof(v2), "%s.%u.next", version, r->round);
	ret = ckpt_begin(r->c, job, v1, &r->v);
	if (ret < 0)
		return fail("begin", ret);
	r->chunks = r->stopped = 0;
	r->writers = threads;
	r->stale_bad = 0;
	if (!strcmp(r->mode, "stale")) {
		ret = ckpt_buf_get(r->v, r->chunk, &r->stale);
		if (ret == 0)
			ret = ckpt_buf_cancel(r->v, r->stale);
		if (ret < 0) {
			ckpt_abort(r->v);
			ckpt_version_free(r->v);
			return fail("a buffer to hand back stale", ret);
		}
	}
	for (t = 0; t < threads; t++) {
		w[t] = (struct writer){ .r = r, .t = t };
		if (pthread_create(&w[t].thr, NULL, writer_main, &w[t])) {
			bad = fail("pthread_create", -EAGAIN);
			break;
		}
		n++;
	}
	if (n < threads) {
		pthread_mutex_lock(&r->mu);
		r->writers = n;
		pthread_mutex_unlock(&r->mu);
	}
	if (!bad && !strcmp(r->mode, "stale")) {
		if (pthread_create(&stale, NULL, stale_main, r))
			bad = fail("pthread_create", -EAGAIN);
		else
			stale_on = 1;
	}
	/* Commit while they write: after 8 chunks, or at once if a thread
	 * could not start or one stopped early (it says why below). */
	pthread_mutex_lock(&r->mu);
	while (!bad && r->chunks < 8 && !r->stopped)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	ret = ckpt_commit(r->v);
	if (ret < 0)
		bad = fail("commit", ret);
	if (!bad)
		bad = write_one(r, v2, "next.bin", 999, 1);
	for (t = 0; t < n; t++)
		pthread_join(w[t].thr, NULL);
	if (stale_on)
		pthread_join(stale, NULL);
	ckpt_version_free(r->v);
	if (r->stale_bad) {
		fprintf(stderr, "ckpt_race: %s: a stale buffer was taken: %s\n",
			v1, r->stale_bad < 0 ? ckpt_strerror(r->stale_bad) :
			"a cancel or submit succeeded");
		bad = 1;
	}
	for (t = 0; t < n; t++) {
		if (w[t].stop != -CKPT_ESEALED) {
			fprintf(stderr, "ckpt_race: %s: writer %u stopped on \"%s\", want the seal\n",
				v1, t, ckpt_strerror(w[t].stop));
			bad = 1;
		}
	}
	for (t = 0; !bad && t < n; t++)
		bad = check_file(job, v1, r, &w[t]);
	if (!bad)
		bad = check_next(job, v2, r, n);
	if (!bad && stale_on) {
		uint8_t b;
		size_t got;

		ret = ckpt_read(r->c, job, v1, "stale.bin", &b, 1, 0, &got);
		if (ret != -ENOENT)
			bad = fail("stale.bin is in the version", ret);
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct race r = { .chunk = 1 << 20, .mode = "write",
			  .mu = PTHREAD_MUTEX_INITIALIZER,
			  .cv = PTHREAD_COND_INITIALIZER };
	unsigned threads = 4, rounds = 10;
	const char *sock = NULL;
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "s:T:r:c:m:")) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'T': threads = (unsigned)atoi(optarg); break;
		case 'r': rounds = (unsigned)atoi(optarg); break;
		case 'c': r.chunk = strtoull(optarg, NULL, 0); break;
		case 'm': r.mode = optarg; break;
		default: return 2;
		}
	}
	if (argc - optind != 2 || threads < 1 || threads > MAX_THREADS ||
	    !r.chunk || r.chunk > (64u << 20) ||
	    (strcmp(r.mode, "write") && strcmp(r.mode, "truncate") &&
	     strcmp(r.mode, "zerocopy") && strcmp(r.mode, "stale") &&
	     strcmp(r.mode, "lend")))
		return 2;
	ret = ckpt_connect(sock, &r.c);
	if (ret < 0)
		return fail("connect", ret);
	r.job = argv[optind];
	for (r.round = 0; !ret && r.round < rounds; r.round++)
		ret = strcmp(r.mode, "lend") ?
		      one_round(argv[optind], argv[optind + 1], &r, threads) :
		      lend_round(argv[optind + 1], &r);
	if (!strcmp(r.mode, "stale"))
		printf("ckpt_race: %lu stale calls refused\n", r.stale_calls);
	ckpt_disconnect(r.c);
	return ret;
}
