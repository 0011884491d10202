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
 *
 * Exit status: 0 ok (every p99 under the bound), 1 a p99 over the bound or
 * a request failed, 2 usage.  Uses only the public API (include/ckpt.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"

#define PROBE_MAX 10000
#define READ_LEN 65536

enum { OP_STATUS, OP_READ, OP_HELLO, OP_N };
static const char *const op_name[OP_N] = { "status", "read", "connect+hello" };

struct args {
	const char *sock, *job, *version, *path;
	int rounds, interval_ms;
	double bound_ms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

/* Print op's percentiles; 1 if its p99 is over the bound. */
static int report(int op, double *v, int n, double bound)
{
	double p50, p99;

	qsort(v, n, sizeof(*v), cmp_double);
	p50 = v[n / 2];
	p99 = v[(n * 99 + 99) / 100 - 1];
	printf("%-14s n=%d p50=%.2f p99=%.2f max=%.2f ms\n", op_name[op], n,
	       p50, p99, v[n - 1]);
	return bound > 0 && p99 > bound;
}

static int probe(const struct args *a, double *lat[OP_N])
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
	double *lat[OP_N];
	int o, op, bad = 0;

	while ((o = getopt(argc, argv, "s:j:v:f:n:i:b:")) != -1) {
		switch (o) {
		case 's': a.sock = optarg; break;
		case 'j': a.job = optarg; break;
		case 'v': a.version = optarg; break;
		case 'f': a.path = optarg; break;
		case 'n': a.rounds = atoi(optarg); break;
		case 'i': a.interval_ms = atoi(optarg); break;
		case 'b': a.bound_ms = atof(optarg); break;
		default: return 2;
		}
	}
	if (!a.sock || !a.job || !a.version || !a.path || a.rounds < 1 ||
	    a.rounds > PROBE_MAX || a.interval_ms < 0) {
		fprintf(stderr, "usage: ckpt_probe -s SOCK -j JOB -v VERSION -f PATH [-n N] [-i MS] [-b MS]\n");
		return 2;
	}
	for (op = 0; op < OP_N; op++) {
		lat[op] = calloc(a.rounds, sizeof(double));
		if (!lat[op])
			return 1;
	}
	if (probe(&a, lat) < 0)
		return 1;
	for (op = 0; op < OP_N; op++) {
		bad |= report(op, lat[op], a.rounds, a.bound_ms);
		free(lat[op]);
	}
	if (bad)
		fprintf(stderr, "ckpt_probe: a p99 is over %.0f ms\n", a.bound_ms);
	return bad;
}
