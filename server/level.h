/*
 * level.h - the one place a sealed version's level changes.
 *
 * A committed version's level (LOCAL, DRAINED) is what its manifest says:
 * version_reach() writes the manifest at the new level through the worker
 * pool (pool.h) and, once the write is durable, sets v->level and wakes the
 * version's waiters (session_notify).  The loop encodes the manifest (CPU
 * only); a worker writes it (tmp, fsync, rename, fsync the directory).
 *
 * Ordering: writes of one version run one at a time, in the order asked (a
 * second waits in v->levelq behind the one in flight), so two never race on
 * <seq>.tmp; each is encoded when it starts, from the version as it is then.
 * While any is in flight or queued the version holds a reference and may not
 * be removed or evicted (version_level_busy(), catalog.h).
 *
 * A raise takes effect only once durable.  A lowering (the `[drain] keep`
 * downgrade to LOCAL) takes effect at once, since claiming less is always
 * safe, and is persisted behind it.  STAGED (ingest_seal) is in memory only
 * and does not come here.  Recovery (catalog_load) sets levels as found.
 *
 * Threads: the loop thread only (the write itself runs on a worker).
 */
#ifndef CKPTD_LEVEL_H
#define CKPTD_LEVEL_H

#include "ckpt.h"

struct ckptd;
struct version;

/* Called on the loop once the level change is over: err 0 (durable), or
 * why the manifest could not be written.  v is still referenced. */
typedef void (*level_fn)(struct ckptd *d, struct version *v, int err);

/* The level holds only if the manifest is durable (the seal's LOCAL): a
 * failed write leaves v->level as it was.  Without it the level is true
 * whatever the local record says (DRAINED: the PFS copy is complete) and is
 * set even if the write fails (logged; the next start finds it again). */
#define LEVEL_DURABLE 1u

/* Take v (sealed, or sealing with its segments synced) to level: persist,
 * set, then done(d, v, err) (done may be NULL), then notify the waiters.  done runs exactly once: from the write's completion, or
 * before this returns when the write cannot be queued (-ENOMEM). */
void version_reach(struct ckptd *d, struct version *v, enum ckpt_level level,
		   unsigned flags, level_fn done);

#endif
