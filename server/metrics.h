/*
 * metrics.h - Prometheus metrics of ckptd, served over HTTP at /metrics.
 *
 * Two halves, on two sides of one lock:
 *
 *  - struct mstats is the live record, owned by the loop thread like every
 *    other piece of ckptd state.  The mstats_*() hooks count events as they
 *    happen (a level reached, a writer's stall, a failure), and
 *    metrics_tick() fills in the gauges (staging, store, drain) and copies
 *    the whole record, once a second, into the published snapshot.
 *
 *  - struct metrics is the HTTP side: libmicrohttpd's own thread answers
 *    GET /metrics by copying the published snapshot under m->mu and
 *    formatting it.  It never reads anything else of ckptd, so a slow or
 *    hostile scraper can cost the loop at most one memcpy's wait on the lock.
 *
 * Without `[ckptd] metrics` (the default) struct metrics is not created and
 * the hooks only count.  Names follow Prometheus conventions: ckpt_ prefix,
 * base units (_seconds, _bytes), counters end in _total.  The list is in
 * docs/design.md.
 */
#ifndef CKPTD_METRICS_H
#define CKPTD_METRICS_H

#include <stdint.h>

#include "ckpt.h"

struct ckptd;
struct version;
struct vstall;

/* Histogram bucket bounds, seconds (le), +Inf implied. */
#define MHIST_BOUNDS { 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, \
		       5, 10, 30, 60, 300, 1800 }
#define MHIST_NB 15

struct mhist {
	uint64_t bucket[MHIST_NB + 1]; /* per bucket, not cumulative; last +Inf */
	uint64_t count;
	double sum;
};

/* The levels a version is counted at: STAGED .. DRAINED. */
#define MLEVELS (CKPT_DRAINED - CKPT_STAGED + 1)

enum merr {
	MERR_ABORTED,      /* a writer aborted or left without committing */
	MERR_WRITE,        /* a write to the local store failed */
	MERR_MANIFEST,     /* a level could not be made durable */
	MERR_N
};

struct mstats {
	/* counters, kept by the hooks */
	uint64_t versions[MLEVELS];     /* versions that reached each level */
	uint64_t level_bytes[MLEVELS];  /* their bytes */
	struct mhist to_level[MLEVELS]; /* seal (last commit) -> level */
	struct mhist stall;             /* each writer's stall */
	uint64_t stragglers;
	uint64_t errors[MERR_N];
	uint64_t read_bytes[CKPT_SRC_PFS + 1]; /* READ bytes served, by
					  * enum ckpt_source */
	/* the newest sealed version's stalls, and its slowest writer */
	uint64_t last_p50_ns, last_p99_ns, last_max_ns;
	uint32_t last_writers;
	char last_job[CKPT_JOB_MAX + 1];
	char last_version[CKPT_VERSION_MAX + 1];
	char last_host[CKPT_HOST_MAX + 1];
	int32_t last_pid, last_rank;
	/* gauges, filled by metrics_tick() */
	struct ckpt_status st;
	uint64_t drain_lag_ms;          /* oldest sealed version not drained */
	uint64_t staging_huge;          /* staging on huge pages (staging.h) */
	uint64_t manifest_loads;        /* PFS manifests loaded for reads */
	uint64_t manifest_hits;         /* reads that found theirs kept */
	uint64_t manifest_bytes;        /* kept now (pfscache.h) */
	uint32_t ticks;
};

struct metrics;

/*
 * Start serving on addr ("HOST:PORT", an IPv4 address; port 0 picks one).
 * The bound port is logged.  0 and *out, or -EINVAL (bad address),
 * -EADDRINUSE or another -errno (logged).  Call with signals already blocked
 * (the HTTP thread inherits the mask).
 */
int metrics_open(const char *addr, struct metrics **out);
/* Stop the HTTP thread and free.  NULL is a no-op. */
void metrics_close(struct metrics *m);

/* Loop-thread hooks. */
void mstats_stall(struct ckptd *d, struct version *v, const struct vstall *s);
void mstats_sealing(struct ckptd *d, struct version *v);
void mstats_level(struct ckptd *d, struct version *v, uint32_t from,
		  uint32_t to);
void mstats_error(struct ckptd *d, enum merr kind);
void mstats_read(struct ckptd *d, uint32_t source, uint64_t bytes);
/* From the 250 ms tick: gauges and publication, once a second. */
void metrics_tick(struct ckptd *d);

#endif
