/*
 * remove.h - REMOVE (ckptctl rm) with its disk work on the worker pool.
 *
 * op_remove (ops.c) checks the request and decides what rm means for the
 * version; remove_start() does it without blocking the loop thread.  The
 * version is marked removing (catalog.h) from then until the answer: a
 * second rm gets -EBUSY, retention, eviction, the drain and level changes
 * leave it alone, reads and WAITs are served as before (a WAIT the removal
 * settles gets -CKPT_ENOVERSION).
 *
 * Threads: the loop thread only (the disk work runs on a worker).
 */
#ifndef CKPTD_REMOVE_H
#define CKPTD_REMOVE_H

#include <limits.h>

#include "catalog.h"
#include "ctx.h"

/* What an rm does to a version, by what the node holds of it. */
enum rm_kind {
	RM_EVICT,       /* drained, local copy: drop the local copy; it stays
			 * listed, read from the PFS */
	RM_QUARANTINE,  /* remote with a damaged local copy in quarantine:
			 * discard the quarantine */
	RM_PFS,         /* remote only: remove it from the PFS, then list */
	RM_LOCAL,       /* the rest: drop the manifest (if sealed), the drain
			 * journal and the quarantine, then unlist */
	RM_PART,        /* a drained part whose version is not published, rm'd
			 * again after CKPT_EUNPUBLISHED: its part leaves the
			 * PFS, then as RM_LOCAL (RM_EVICT if it was published
			 * meanwhile) */
};

/* Would RM_LOCAL of v touch the disk at all?  If not, the caller may remove
 * it at once (an open version nobody writes, a failed one). */
int remove_needs_disk(const struct ckptd *d, const struct version *v);
/*
 * The end of a removal, on the loop: status 0 (durable), -errno, or
 * REMOVE_DROPPED (shutting down: nothing to answer; the next start reads
 * what the disk says).  Called exactly once per started removal.
 */
#define REMOVE_DROPPED INT_MIN     /* no errno: never a real result */
typedef void (*remove_done_fn)(void *arg, int status);
/* Do rm kind of v on the pool and call done(arg, status) from the loop
 * once done.  0: started; or -ENOMEM / -errno: nothing started, done is
 * never called.  v must not be removing already. */
int remove_start(struct ckptd *d, struct version *v, enum rm_kind kind,
		 remove_done_fn done, void *arg);

#endif
