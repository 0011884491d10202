/*
 * level.h - the one place a version's copies, and so its level, change.
 *
 * A sealed version records the copies it has (v->copies, CKPT_COPY_*: its
 * local copy, its PFS copy, a damaged local copy kept in quarantine; the
 * cluster adds the peers' shards), and its level is what they give
 * (copies_level(), catalog.h): DRAINED with a PFS copy, else LOCAL with a
 * local one.  version_reach() records a change: it writes the manifest at
 * the new level through the worker pool (pool.h) and, once the write is
 * durable, sets the copies and the level and raises the version_changed
 * event (ckptd.h), which answers the version's waiters.  The loop encodes
 * the manifest (CPU only); a worker writes it (tmp, fsync, rename, fsync the
 * directory).  version_staged() is the level before any copy: every
 * writer committed, the seal under way (in memory only).
 *
 * Ordering: changes of one version run one at a time, in the order asked (a
 * second waits in v->levelq behind the one in flight), so two never race on
 * <seq>.tmp; each is encoded when it starts, from the version as it is then.
 * While any is in flight or queued the version holds a reference and may not
 * be removed or evicted (version_level_busy(), catalog.h).
 *
 * A gain takes effect only once durable.  A loss (the `[drain] keep`
 * removal of the PFS copy) takes effect at once, since claiming less is
 * always safe, and is persisted behind it.  Recovery and the catalog's own
 * records (catalog.h: load, the PFS scan, eviction) set copies as found.
 *
 * Threads: the loop thread only (the write itself runs on a worker).
 */
#ifndef CKPTD_LEVEL_H
#define CKPTD_LEVEL_H

#include <stdint.h>

#include "ckpt.h"

struct ckptd;
struct version;

/* Called on the loop once the level change is over: err 0 (durable), or
 * why the manifest could not be written.  v is still referenced. */
typedef void (*level_fn)(struct ckptd *d, struct version *v, int err);

/* The gain holds only if the manifest is durable (the seal's local copy):
 * a failed write leaves v as it was.  Without it the copy exists whatever
 * the local record says (the PFS copy is complete) and is recorded even if
 * the write fails (logged; the next start finds it again). */
#define LEVEL_DURABLE 1u

/* v (sealed, or sealing with its segments synced) gains the copies gain
 * and loses the copies lose (CKPT_COPY_*): persist, set, then done(d, v,
 * err) (done may be NULL), then raise version_changed.  done runs exactly
 * once: from the write's completion, or before this returns when the write
 * cannot be queued (-ENOMEM). */
void version_reach(struct ckptd *d, struct version *v, uint32_t gain,
		   uint32_t lose, unsigned flags, level_fn done);
/* Every writer of v committed and the seal began: STAGED, and the event. */
void version_staged(struct ckptd *d, struct version *v);

#endif
