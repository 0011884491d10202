/*
 * mstats.h - the live record of what ckptd counts: versions reaching each
 * level and how long it took, writers' stalls, failures, read bytes by
 * source, and the gauges metrics_tick() fills in.
 *
 * Owned by the loop thread like every other piece of ckptd state (d->ms).
 * The mstats_*() hooks count events as they happen; metrics.c, at the top,
 * copies the record once a second into the snapshot its HTTP thread
 * serves (metrics.h).  A store-layer module: the hooks read versions.
 */
#ifndef CKPTD_MSTATS_H
#define CKPTD_MSTATS_H

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

/* Loop-thread hooks. */
void mstats_stall(struct ckptd *d, struct version *v, const struct vstall *s);
void mstats_sealing(struct ckptd *d, struct version *v);
void mstats_level(struct ckptd *d, struct version *v, uint32_t from,
		  uint32_t to);
void mstats_error(struct ckptd *d, enum merr kind);
void mstats_read(struct ckptd *d, uint32_t source, uint64_t bytes);

#endif
