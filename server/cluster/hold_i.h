/*
 * hold_i.h - what hold.c (the shards this node holds for its peers) offers
 * the rest of the cluster folder beyond its entries in cluster_i.h: the
 * room it keeps for this node's own parts, and its timer.  Private to
 * server/cluster/ (a candidate for cluster_i.h's hold.c section).
 *
 * Loop thread only, like the rest of hold.c.
 */
#ifndef CKPT_HOLD_I_H
#define CKPT_HOLD_I_H

#include <stdint.h>

struct cluster;

/* A shard that got chunks but no SHARD_SEAL, and no chunk for this long,
 * is dropped (its owner's attempt failed or went elsewhere). */
#define HOLD_OPEN_IDLE_MS 60000
#define HOLD_IDLE_TEXT    "60 s"          /* the same, for the log */
/* hold_tick() looks for such shards, and reads the file system's free
 * bytes again, at most this often. */
#define HOLD_SWEEP_MS     1000

/* Where the holder stands, for `ckptctl status` and the metrics. */
struct hold_space {
	uint64_t held;            /* bytes of the shards held (sealed) */
	uint64_t nheld;           /* shards held */
	uint64_t reserved;        /* bytes reserved for shards being written
				   * (each its whole size from its first
				   * chunk), not yet sealed */
	uint64_t unwritten;       /* of reserved, bytes not written yet */
	uint64_t nopen;           /* shards being written */
	uint64_t refused;         /* requests refused since start */
	uint64_t refused_space;   /* of those, for room (-ENOSPC) */
	uint64_t dropped;         /* shards never sealed that were dropped
				   * (their attempt abandoned) */
	uint64_t room;            /* bytes a peer's shard may still be given
				   * now */
	uint64_t keep;            /* [cluster] holder_reserve as applied:
				   * bytes kept for this node's own parts */
};

/* Fill *out (zeros without a holder). */
void hold_space(const struct cluster *cl, struct hold_space *out);

/* From the cluster's tick: drop the shards whose attempt was abandoned
 * (their owner's link went down, HOLD_OPEN_IDLE_MS without a chunk) and
 * read the file system's free bytes again, each at most every
 * HOLD_SWEEP_MS.  now_ms: ckptd_now_ms(). */
void hold_tick(struct cluster *cl, uint64_t now_ms);

#endif
