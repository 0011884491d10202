/*
 * drain.h - the background drain of committed versions to the parallel file
 * system.
 *
 * The loop thread decides (what to drain, in which order, what to skip,
 * retries, levels, retention); the daemon's worker pool (pool.h) does the
 * blocking PFS work (pfs.h), at most `[drain] threads` copies at a time, and
 * hands results back to the loop.  Versions drain oldest committed first; `[drain] every = N`
 * drains every Nth committed version of a job and may skip the others once a
 * newer one exists (the newest is always drained); `ckptctl drain --now`
 * puts one first.  A failed copy is retried with exponential backoff up to
 * `[drain] retry_max` seconds; the error shows in `ckptctl status` and the
 * log.  `[drain] bandwidth` caps the bytes written per second, across all
 * threads.
 *
 * With a drain target set, local retention (`[ckptd] keep`, retain.c)
 * evicts the local copy of older versions once they are DRAINED (they stay
 * listed, and reads go to the PFS) and removes those that will never be
 * drained (skipped, or retired from the PFS); `[drain] keep` bounds the
 * versions kept on the PFS, never removing the newest drained one or one a
 * kept version refers to, and a local version whose PFS copy it retires is
 * never drained again (MAN_F_RETIRED, manifest.h).
 *
 * In a cluster, a version written in parts drains part by part, each node
 * its own, and is published on the PFS by one node (enum drain_publish).
 */
#ifndef CKPTD_DRAIN_H
#define CKPTD_DRAIN_H

#include <stdint.h>

#include "ckpt.h"

struct ckptd;
struct job;
struct version;
struct drain;
struct pfscache;

enum drain_state {
	DR_NONE = 0,      /* not to be drained (no target, or open) */
	DR_QUEUED,        /* waiting for a thread (or for its retry time) */
	DR_RUNNING,
	DR_DONE,
	DR_SKIPPED,       /* superseded ([drain] every) */
};

/*
 * A version in parts (nparts > 1, one per cluster node): each node drains
 * its own part, which is DRAINED once its part manifest is durable on the
 * PFS (pfs.h).  The whole version is DRAINED when all its parts are; it is
 * then published (its PFS manifest written, readers see it) by the node
 * whose name sorts first among the parts' nodes, which checks after its
 * own part is written and again on the retry schedule while parts are
 * missing, also after a restart.  Other nodes never write the manifest, but
 * look for it on the same schedule until it is there, and at once when a
 * peer says its part changed (drain_part_news()): a waiter for DRAINED on
 * a part is answered once the version is published (drain_wait_level()),
 * as only then can it be restored from the PFS.
 */
enum drain_publish {
	PUB_NONE = 0,     /* one part, or not drained yet */
	PUB_WAIT,         /* to check (again) at publish_due_ms */
	PUB_RUNNING,      /* a check runs on the pool */
	PUB_DONE,         /* published: its manifest is on the PFS */
};

/* Start the threads and find what is left to drain or only on the PFS.
 * No-op (0) without a target.  0 or -errno. */
int drain_open(struct ckptd *d);
/* Shutting down: copies running give up at their next chunk.  Then close
 * the pool (which drops the drain's tasks), then drain_close(). */
void drain_cancel(struct ckptd *d);
/* After the pool is closed: no task of the drain may be left. */
void drain_close(struct ckptd *d);
int drain_enabled(const struct ckptd *d);
/* The manifests reads from the PFS take (pfscache.h), or NULL without a
 * drain.  Any thread, from drain_open() to drain_close(). */
struct pfscache *drain_manifests(const struct ckptd *d);
/* The target's mark (pfsmark.h), or NULL without a drain.  Any thread, from
 * drain_open() to drain_close(). */
struct pfsmark *drain_mark(struct ckptd *d);
/* Is name the incremental base of a drained version of j (or may it be, as
 * a copy of j is running)?  Then its PFS copy holds chunks another version
 * reads, and must stay. */
int drain_is_base(const struct job *j, const char *name);
/* Can v, below level, still reach it?  -CKPT_ESKIPPED where only its drain
 * could take it there and it will never be drained: [drain] every skipped
 * it, or [drain] keep retired its PFS copy.  Else 0 (also without a
 * drain: op_wait() answers that itself).  For the waiters (session.h). */
int drain_wait_check(const struct ckptd *d, const struct version *v,
		     uint32_t level);
/* j's newest sealed version, if it is local and was skipped ([drain]
 * every) or retired ([drain] keep), is drained after all: the newest is
 * always drained.  After an rm (remove.c), and at start; it is queued, for
 * the next drain_tick().  j may be NULL. */
void drain_newest_due(struct ckptd *d, struct job *j);
/* v was just sealed: queue it, and apply local retention to its job. */
void drain_sealed(struct ckptd *d, struct version *v);
/* The version_changed event (ckptd.h): a change of v's level is recorded.
 * Local retention passes over a version while a change of its level is
 * queued (version_level_busy()); the last one recorded applies it again,
 * so that a drained copy kept for a PROTECTED record, say, is evicted. */
void drain_level_settled(struct ckptd *d, struct version *v);
/* 1 if v is DRAINED and its whole version is on the PFS: a version of one
 * part, or one in parts this node knows published (PUB_DONE, or listed
 * from the PFS); else 0.  Peers hear it in v's PART (PEER_PART_PUBLISHED). */
int drain_published(const struct ckptd *d, const struct version *v);
/* The level v has reached for a waiter (ops.c, session.c): v->level, but
 * a part of a version in parts is DRAINED only once the version is
 * published; until then it is at the level its other copies give. */
uint32_t drain_wait_level(const struct ckptd *d, const struct version *v);
/* A peer said its part of job/version (of uid) changed: this node's part,
 * waiting for the version's publication, checks at the next tick. */
void drain_part_news(struct ckptd *d, const char *job, const char *version,
		     uint32_t uid);
/* From the daemon's tick: start due work. */
void drain_tick(struct ckptd *d);
/* Pause (1) or resume (0) the drain: copies running wait between chunks,
 * and none starts, nor does a publish check.  0, or -ENOTSUP without a target. */
int drain_pause(struct ckptd *d, int paused);
/* Drain v (sealed) next, before every other, never skipped.  0 (also when
 * it is drained or draining already), -ENOTSUP without a target, or
 * -CKPT_ENOVERSION if v is not sealed. */
int drain_now(struct ckptd *d, struct version *v);
/* Take the target as it is (pfsmark_adopt()), and drain at once what waited
 * for its mark.  0, or -ENOTSUP without a target. */
int drain_adopt(struct ckptd *d);
/* v's drain in out's drain fields (ckpt.h: enum ckpt_drain_state): where
 * it stands and, while it waits to be tried again, why.  All 0 without a
 * target. */
void drain_info(const struct ckptd *d, const struct version *v,
		struct ckpt_version_info *out);
/* Figures for STATUS. */
void drain_status(const struct ckptd *d, struct ckpt_status *s);

#endif
