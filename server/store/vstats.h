/*
 * vstats.h - per-version statistics kept for operators: when the version's
 * last writer committed, and each writer's stall.
 *
 * A writer's stall is the time its writes spent blocked in libckpt (waiting
 * for a staging lease, or for ring space that only ckptd's WACKs free), as
 * the client measured it and sent with its COMMIT.  At the seal ckptd sums
 * them up (p50, p99, max, slowest writer) for `ckptctl ls`, the metrics and
 * a straggler log line: a writer whose stall is over [ckptd]
 * straggler_factor times the median (and at least VSTATS_STRAGGLER_MIN_NS)
 * is logged with the cause ckptd can name from what the client reported.
 *
 * The numbers live in memory only (a restart forgets them: the manifest
 * format is unchanged) and are best effort: when memory is short a stall is
 * dropped rather than a commit failed.
 *
 * Threads: the loop thread only.  v->vstats is owned here; vstats_free()
 * runs when the version is destroyed.
 */
#ifndef CKPTD_VSTATS_H
#define CKPTD_VSTATS_H

#include <stdint.h>
#include <sys/types.h>

#include "ckpt.h"

struct version;

#define VSTATS_STRAGGLER_MIN_NS 10000000ull  /* 10 ms: below it, noise */
#define VSTATS_STRAGGLER_LOG_MAX 8           /* lines per version; then one
					      * line counts the rest */

/* One writer's report. */
struct vstall {
	uint64_t stall_ns;        /* blocked in all */
	uint64_t staging_ns;      /* of which waiting for staging */
	pid_t pid;                /* from SO_PEERCRED, not from the client */
	int32_t rank;             /* -1: none in its environment */
};

struct vstats {
	uint64_t commit_ms;       /* ckptd_now_ms() at the seal, 0 before */
	struct vstall *w;         /* owned, nw used of cw */
	uint32_t nw, cw;
};

/* Over a version's writers: what `ckptctl ls` and the metrics show. */
struct vstall_sum {
	uint32_t n;               /* writers that reported */
	uint64_t p50_ns, p99_ns, max_ns;
	struct vstall slowest;    /* valid when n > 0 */
};

/* Record one writer's stall at its COMMIT.  Best effort (see above). */
void vstats_stall(struct version *v, const struct vstall *s);
/* The version is sealing: note the time. */
void vstats_sealing(struct version *v, uint64_t now_ms);
/* ckptd_now_ms() at the seal, or 0 if unknown (recovered versions). */
uint64_t vstats_commit_ms(const struct version *v);
/* Sum up v's stalls into *out (all zero when none were reported). */
void vstats_sum(const struct version *v, struct vstall_sum *out);
/* Fill the stall fields of a listing entry (hostname: this node's). */
void vstats_info(const struct version *v, struct ckpt_version_info *out);
/*
 * Log the stragglers of v, writers over factor x the median (0: never), at
 * most VSTATS_STRAGGLER_LOG_MAX lines.  Returns how many there were.
 */
uint32_t vstats_stragglers(const struct version *v, uint32_t factor);
void vstats_free(struct version *v);

#endif
