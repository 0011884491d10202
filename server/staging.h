/*
 * staging.h - the staging memory that clients copy their checkpoints into.
 *
 * Staging is a set of leases, one per connected client, each a memfd that
 * ckptd maps and hands to the client with SCM_RIGHTS.  The total is bounded
 * by [ckptd] staging.  Memory is pre-faulted when a lease is made (first
 * touch runs at ~1 GB/s, a touched page at memcpy speed) and kept: a
 * returned lease goes on a free list and is given again to the next client
 * of the same uid.  A lease is never given to another uid, whose client
 * could still have the old one mapped: for another uid the memfd is replaced
 * by a fresh one.
 *
 * Ownership: struct staging owns every lease.  staging_get() lends one to a
 * connection until staging_put().  Single-threaded (the loop thread).
 */
#ifndef CKPTD_STAGING_H
#define CKPTD_STAGING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "list.h"

struct lease {
	struct list link;   /* on staging.free while not lent */
	int fd;             /* memfd */
	uint8_t *map;       /* ckptd's mapping, size bytes */
	size_t size;
	uid_t uid;          /* the uid whose clients have seen it */
};

struct staging {
	uint64_t budget;    /* [ckptd] staging */
	uint64_t total;     /* bytes of all leases, lent or free */
	uint64_t lent;      /* bytes of lent leases */
	int mlock;
	struct list free;
};

void staging_init(struct staging *s, uint64_t budget, int mlock);
void staging_release(struct staging *s);
/*
 * Lend a lease of want bytes (rounded up to 2 MiB) to uid.  When the budget
 * has not that much left, a smaller one down to STAGING_MIN.  -EAGAIN when
 * even that is not free now (the caller waits for staging_put), -ENOMEM or
 * another -errno if memory cannot be made.
 */
#define STAGING_MIN (4u << 20)
int staging_get(struct staging *s, uid_t uid, size_t want, struct lease **out);
void staging_put(struct staging *s, struct lease *l);
/* Make the whole budget into free leases of lease_size now, so that no
 * client pays for first touches (start-up cost: ~1 s per GiB).  0 or
 * -errno. */
int staging_prefault(struct staging *s, size_t lease_size);

#endif
