/*
 * linkcheck.h - a sealing version's symbolic links read back before it
 * seals (linkcheck.c).
 *
 * A symbolic link's bytes are its target (ckpt.h, CKPT_ATTR_IFLNK).  The
 * commit's name check (version_check(), catalog.h) sees only sizes; a
 * target with a NUL in it, or with a hole in its middle (bytes no write
 * stored read as zeros), passes it, yet its drain and restore cannot make
 * it.  Once every write of the version has completed, link_check() reads
 * each link's target from the segments, as its writes left it (later
 * writes win, a truncate's zero records count as zeros), on a worker, and
 * says whether every one is whole and free of NULs.
 *
 * Ownership: the check holds a reference on v and v->pending (so that no
 * other seal step starts) until it calls done on the loop; a check that
 * never ran (shutdown) drops both and calls nothing.  The segment fds are
 * the store's, borrowed: the version keeps its segments while it seals.
 *
 * Threads: link_check and done on the loop thread; the reads on a worker.
 */
#ifndef CKPTD_LINKCHECK_H
#define CKPTD_LINKCHECK_H

#include <stdint.h>

struct ckptd;
struct version;

/* err: 0, -EINVAL (a NUL or a hole in a target; *bad, an index into
 * v->files, names it), -CKPT_ECORRUPT, -EIO, -ENOMEM or -errno of a read. */
typedef void (*link_check_fn)(struct ckptd *d, struct version *v, int err,
			      uint32_t bad);

/* Start the check of v's links: 1 (done will be called), 0 (v has no
 * symbolic link: nothing to check, done is not called) or -ENOMEM. */
int link_check(struct ckptd *d, struct version *v, link_check_fn done);

#endif
