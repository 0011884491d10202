/*
 * ckpt_probe.c - latency probe for the integration tests (t_loop_latency).
 *
 * Measures how long ckptd takes to answer small requests while other clients
 * keep it busy: a STATUS on an open connection, a read of a committed
 * version, and a new client's connect + HELLO (ckpt_staging) + disconnect.
 * One round does each of the three once; rounds start every -i ms until -n
 * rounds are done.  Prints "OP p50=.. p99=.. max=.. ms" per op.
 *
 *   ckpt_probe -s SOCKET -j JOB -v VERSION -f PATH [-n ROUNDS (100)]
 *              [-i INTERVAL_MS (20)] [-b BOUND_MS (0: no bound)]
 *              [-w WITNESS_FILE]
 *
 * The disk witness (-w).  A read of a committed version reads the disk, and
 * a disk can stall every read for hundreds of ms by itself: on this
 * machine kind an O_DIRECT read waits behind the fsync of a few hundred MB
 * of dirty pages (the PFS copies of the drain are on the same disk in the
 * tests).  That is the device, not ckptd.  With -w, a thread reads 4 KiB of
 * WITNESS_FILE (created on the same file system, O_DIRECT) every
 * WITNESS_GAP_MS while the rounds run, and each read of ckptd is charged
 * only what it took beyond the slowest witness read that overlapped it in
 * time (the time the witness spent inside reads during it): a stall of the
 * device shows in both, a stall of ckptd (its loop waiting for something)
 * only in ckptd's.  Both figures are printed.  Blind spot: ckptd's loop
 * waiting synchronously on the disk while the disk itself stalls is
 * excused in a READ; STATUS and connect+hello, which are not corrected,
 * still see such a stall when it falls on them.
 *
 * Exit status: 0 ok (every p99 under the bound), 1 a p99 over the bound or
 * a request failed, 2 usage.  Uses only the public API (include/ckpt.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"

#define PROBE_MAX 10000
#define READ_LEN 65536
#define WITNESS_MAX 65536       /* witness reads recorded */
#define WITNESS_GAP_MS 2
#define WITNESS_LEN 4096
#define WITNESS_FILE (1 << 20)

enum { OP_STATUS, OP_READ, OP_HELLO, OP_N };
static const char *const op_name[OP_N] = { "status", "read", "connect+hello" };

struct args {
	const char *sock, *job, *version, *path, *witness;
	int rounds, interval_ms;
	double bound_ms;
};

/* The disk witness: its reads' start and end, ms from the probe's start. */
struct witness {
	int fd;                   /* O_DIRECT; -1: no witness */
	double start;
	void *buf;
	double *t0, *t1;
	int n;
	atomic_int stop;
	pthread_t thr;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *witness_run(void *arg)
{
	struct witness *w = arg;
	struct timespec gap = { 0, WITNESS_GAP_MS * 1000000L };

	while (!atomic_load(&w->stop) && w->n < WITNESS_MAX) {
		off_t off = (off_t)(w->n % (WITNESS_FILE / WITNESS_LEN)) *
			    WITNESS_LEN;

		w->t0[w->n] = now_ms() - w->start;
		if (pread(w->fd, w->buf, WITNESS_LEN, off) != WITNESS_LEN) {
			/* no more excuses: the reads are charged in full */
			fprintf(stderr, "ckpt_probe: witness read: %s\n",
				strerror(errno ? errno : EIO));
			break;
		}
		w->t1[w->n] = now_ms() - w->start;
		w->n++;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/* Create path (WITNESS_FILE bytes, on disk) and start reading it O_DIRECT.
 * 0, 1 if the file system has no O_DIRECT (no witness then), or -errno. */
static int witness_start(struct witness *w, const char *path, double start)
{
	char block[WITNESS_LEN];
	int fd, i, ret;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	memset(block, 0x5a, sizeof(block));
	for (i = 0; i < WITNESS_FILE / WITNESS_LEN; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			break;
	ret = i == WITNESS_FILE / WITNESS_LEN && fsync(fd) == 0 ? 0 : -EIO;
	close(fd);
	if (ret < 0)
		return ret;
	w->fd = open(path, O_RDONLY | O_DIRECT);
	if (w->fd < 0)
		return errno == EINVAL ? 1 : -errno;
	unlink(path);           /* read through the fd only */
	w->start = start;
	w->t0 = calloc(WITNESS_MAX, sizeof(double));
	w->t1 = calloc(WITNESS_MAX, sizeof(double));
	ret = -ENOMEM;
	if (!w->t0 || !w->t1 || posix_memalign(&w->buf, 4096, WITNESS_LEN))
		goto out_close;
	ret = -pthread_create(&w->thr, NULL, witness_run, w);
	if (ret == 0)
		return 0;
	free(w->buf);
out_close:
	free(w->t0);
	free(w->t1);
	close(w->fd);
	w->fd = -1;
	return ret;
}

/* Stop reading; the reads recorded stay until witness_free(). */
static void witness_stop(struct witness *w)
{
	if (w->fd < 0 || atomic_exchange(&w->stop, 1))
		return;
	pthread_join(w->thr, NULL);
}

static void witness_free(struct witness *w)
{
	if (w->fd < 0)
		return;
	witness_stop(w);
	close(w->fd);
	w->fd = -1;
	free(w->buf);
	free(w->t0);
	free(w->t1);
}

/* How long the witness was inside a read during [t0, t1]: the sum of its
 * reads' overlaps with it (they follow each other, never overlap). */
static double witness_during(const struct witness *w, double t0, double t1)
{
	double sum = 0, a, b;
	int i;

	for (i = 0; i < w->n; i++) {
		a = w->t0[i] > t0 ? w->t0[i] : t0;
		b = w->t1[i] < t1 ? w->t1[i] : t1;
		if (b > a)
			sum += b - a;
	}
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int do_hello(const char *sock)
{
	struct ckpt_client *c;
	size_t size;
	int ret;

	ret = ckpt_connect(sock, &c);
	if (ret < 0)
		return ret;
	ret = ckpt_staging(c, &size);
	ckpt_disconnect(c);
	return ret;
}

/* One op on client c; 0 or a negative error. */
static int do_op(int op, const struct args *a, struct ckpt_client *c,
		 void *buf)
{
	struct ckpt_status st;
	size_t got;

	switch (op) {
	case OP_STATUS:
		return ckpt_status(c, &st);
	case OP_READ:
		return ckpt_read(c, a->job, a->version, a->path, buf, READ_LEN,
				 0, &got);
	default:
		return do_hello(a->sock);
	}
}

/* The wall time rounds start from, in ckptd's log format. */
static void print_start(void)
{
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("rounds start at %s.%03ld\n", when, ts.tv_nsec / 1000000);
	fflush(stdout);
}

/* The p50, p99 and max of the n samples at v (sorted in place). */
static void pcts(double *v, int n, double out[3])
{
	qsort(v, n, sizeof(*v), cmp_double);
	out[0] = v[n / 2];
	out[1] = v[(n * 99 + 99) / 100 - 1];
	out[2] = v[n - 1];
}

/* Print op's percentiles; 1 if its p99 is over the bound.  Samples over
 * the bound are listed first, with when they started (ms from the first
 * round), to be matched with ckptd's log.  With a witness (w), a sample is
 * charged its time beyond the slowest witness read during it, and the
 * charged p99 is the one judged. */
static int report(int op, double *v, const double *at, int n, double bound,
		  const struct witness *w)
{
	double p[3], *wl;
	int i;

	for (i = 0; w && i < n; i++) {
		double disk = witness_during(w, at[i], at[i] + v[i]);

		if (bound > 0 && v[i] > bound)
			printf("%-14s round %d at %.0f ms took %.2f ms, the disk's own reads %.2f ms of it\n",
			       op_name[op], i, at[i], v[i], disk);
		v[i] = v[i] > disk ? v[i] - disk : 0;
	}
	for (i = 0; bound > 0 && i < n; i++)
		if (v[i] > bound)
			printf("%-14s round %d at %.0f ms took %.2f ms%s\n",
			       op_name[op], i, at[i], v[i],
			       w ? " beyond the disk's own reads" : "");
	pcts(v, n, p);
	printf("%-14s n=%d p50=%.2f p99=%.2f max=%.2f ms%s\n", op_name[op], n,
	       p[0], p[1], p[2], w ? " (beyond the disk's own reads)" : "");
	if (w && w->n) {
		wl = malloc(sizeof(*wl) * (size_t)w->n);
		if (wl) {
			for (i = 0; i < w->n; i++)
				wl[i] = w->t1[i] - w->t0[i];
			pcts(wl, w->n, p);
			printf("%-14s n=%d p50=%.2f p99=%.2f max=%.2f ms (O_DIRECT %d bytes, no ckptd)\n",
			       "disk witness", w->n, p[0], p[1], p[2],
			       WITNESS_LEN);
			free(wl);
		}
	}
	return bound > 0 && v[(n * 99 + 99) / 100 - 1] > bound;
}

static int probe(const struct args *a, double start, double *lat[OP_N],
		 double *at[OP_N])
{
	struct ckpt_client *c;
	struct timespec gap;
	void *buf;
	int i, op, ret;

	buf = malloc(READ_LEN);
	if (!buf)
		return -ENOMEM;
	ret = ckpt_connect(a->sock, &c);
	if (ret < 0)
		goto out_free;
	gap.tv_sec = a->interval_ms / 1000;
	gap.tv_nsec = (long)(a->interval_ms % 1000) * 1000000;
	for (i = 0; i < a->rounds; i++) {
		for (op = 0; op < OP_N; op++) {
			double t0 = now_ms();

			at[op][i] = t0 - start;
			ret = do_op(op, a, c, buf);
			lat[op][i] = now_ms() - t0;
			if (ret < 0) {
				fprintf(stderr, "ckpt_probe: %s: %s\n",
					op_name[op], ckpt_strerror(ret));
				goto out_disconnect;
			}
		}
		nanosleep(&gap, NULL);   /* pacing between samples */
	}
	ret = 0;
out_disconnect:
	ckpt_disconnect(c);
out_free:
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	struct args a = { .rounds = 100, .interval_ms = 20 };
	double *lat[OP_N], *at[OP_N], start;
	struct witness w = { .fd = -1 };
	int o, op, ret, bad = 0;

	while ((o = getopt(argc, argv, "s:j:v:f:n:i:b:w:")) != -1) {
		switch (o) {
		case 's': a.sock = optarg; break;
		case 'j': a.job = optarg; break;
		case 'v': a.version = optarg; break;
		case 'f': a.path = optarg; break;
		case 'n': a.rounds = atoi(optarg); break;
		case 'i': a.interval_ms = atoi(optarg); break;
		case 'b': a.bound_ms = atof(optarg); break;
		case 'w': a.witness = optarg; break;
		default: return 2;
		}
	}
	if (!a.sock || !a.job || !a.version || !a.path || a.rounds < 1 ||
	    a.rounds > PROBE_MAX || a.interval_ms < 0) {
		fprintf(stderr, "usage: ckpt_probe -s SOCK -j JOB -v VERSION -f PATH [-n N] [-i MS] [-b MS] [-w FILE]\n");
		return 2;
	}
	for (op = 0; op < OP_N; op++) {
		lat[op] = calloc(a.rounds, sizeof(double));
		at[op] = calloc(a.rounds, sizeof(double));
		if (!lat[op] || !at[op])
			return 1;
	}
	start = now_ms();
	if (a.witness) {
		ret = witness_start(&w, a.witness, start);
		if (ret < 0) {
			fprintf(stderr, "ckpt_probe: witness %s: %s\n", a.witness,
				strerror(-ret));
			return 1;
		}
		if (ret > 0)
			printf("no disk witness: %s has no O_DIRECT\n", a.witness);
	}
	print_start();
	ret = probe(&a, start, lat, at);
	witness_stop(&w);
	if (ret < 0) {
		witness_free(&w);
		return 1;
	}
	for (op = 0; op < OP_N; op++) {
		bad |= report(op, lat[op], at[op], a.rounds, a.bound_ms,
			      op == OP_READ && w.fd >= 0 ? &w : NULL);
		free(lat[op]);
		free(at[op]);
	}
	witness_free(&w);
	if (bad)
		fprintf(stderr, "ckpt_probe: a p99 is over %.0f ms\n", a.bound_ms);
	return bad;
}
