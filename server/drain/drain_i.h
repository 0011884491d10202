/*
 * drain_i.h - what drain.c (copies, publishing, start-up) and retain.c
 * (retention with a drain) share: the drain's state, its pool tasks, and
 * the entry points of retention.  Loop thread only, like drain.h.
 */
#ifndef CKPTD_DRAIN_I_H
#define CKPTD_DRAIN_I_H

#include <stddef.h>
#include <stdint.h>

#include "bwlimit.h"
#include "catalog.h"
#include "ctx.h"
#include "pfs.h"
#include "pfsmark.h"
#include "pool.h"

/* A drain task: the pool's task, the drain it is for, and the version it
 * holds a reference on. */
struct task {
	struct pool_task pt;
	struct drain *dr;
	struct version *v;        /* holds a reference */
};

struct drain {
	struct ckptd *d;
	struct pfs_opts opts;
	struct bwlimit bw;
	volatile int paused;
	int scanned;              /* a scan of the PFS succeeded (at the
				   * start, or later: drainscan.c) */
	int rescanning;           /* a scan runs on the pool */
	char self[CKPT_HOST_MAX + 1]; /* this node's name in the cluster, or
				   * "" (fixed: the scans read it) */
	uint32_t rescan_tries;
	uint64_t rescan_due_ms;
	volatile int cancel;      /* shutting down: copies give up */
	unsigned nthr;            /* [drain] threads: copies at once, and
				   * copy threads in all (pfs.h) */
	int spare;                /* copy threads free (pfs_opts.spare) */
	struct pfscache *manifests; /* for reads from the PFS (any thread) */
	struct pfsmark tmark;     /* the target's mark (any thread) */
	unsigned copying;         /* copy tasks handed out (loop) */
	/* figures for status (loop) */
	uint64_t bytes, rate, mark;
	uint32_t errors;
	int32_t last_err;
	char last_path[256];
};

static inline struct drain *drain_of(const struct ckptd *d)
{
	return d->drain;
}

/* The task t is part of. */
static inline struct task *task_of(struct pool_task *pt)
{
	return (struct task *)((char *)pt - offsetof(struct task, pt));
}

/* Hand t to the pool (its version referenced by the caller). */
static inline void submit(struct drain *dr, struct task *t)
{
	t->dr = dr;
	pool_submit(dr->d->pool, &t->pt, 0);
}

/* The PFS scan (drainscan.c).  drain_scan(): at the start, on the loop,
 * lists the versions only on the PFS and completes what the local records
 * lost, if the target carries its mark; else drain_rescan_tick() scans it
 * on the pool once it does (the catalog changed on the loop), and until
 * then [drain] keep removes nothing from the PFS. */
int drain_store_drained(const struct catalog *cat);
void drain_scan(struct ckptd *d);
void drain_rescan_tick(struct ckptd *d, uint64_t now);
/* The copies' back-off after tries failures: 1 s doubling up to [drain]
 * retry_max. */
uint64_t drain_backoff_ms(const struct ckptd *d, uint32_t tries);

/* The newest sealed version of v's job?  A walk of the job. */
int drain_newest(const struct version *v);
/* Queue v (sealed, below DRAINED) to drain first and never be skipped,
 * retired or not: asked for (--now), the newest again, or a PFS copy lost.
 * For the next drain_tick(). */
void drain_requeue(struct version *v);

/* With a drain, after a seal or a drain of one of j's versions (retain.c):
 * local_retain() keeps j's newest `[ckptd] keep` local copies, evicting
 * older drained ones and removing those that will never be drained;
 * pfs_retain() keeps the newest `[drain] keep` drained versions on the
 * PFS, retiring the PFS copies of older ones (never a base). */
void local_retain(struct ckptd *d, struct job *j);
void pfs_retain(struct ckptd *d, struct job *j);

#endif
