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
 * One uid may hold at most a share of the budget (the caller passes it to
 * staging_get_share(); 0 = no share, as for root), so that one user cannot take
 * the staging every other user needs.
 *
 * Root's leases (the mounts': ckptfs runs as root and serves every user of
 * its mount) are made of 2 MiB huge pages from the kernel's pool
 * (hugetlbfs, vm.nr_hugepages) when STAGING_HUGE is set and the pool has
 * them, else of ordinary pages.  A disk write from a lease goes to the
 * device as one segment per physically contiguous run of its pages; on a
 * virtio disk without indirect descriptors a request from scattered 4 KiB
 * pages takes a ring slot per page, and the mount's writes ran at one of two
 * speeds depending on how scattered its lease happened to be (docs/
 * benchmarks.md).  Huge pages are contiguous by construction.  Other uids
 * never get one: a client may punch pages out of its lease (fallocate,
 * MADV_REMOVE), and ckptd's next touch of them (the ingest checksum, a
 * read's copy) takes a new page from the pool, which another user can have
 * emptied (any user may make hugetlb memfds): that touch would be SIGBUS
 * in ckptd, where with ordinary pages it is an ordinary allocation.
 *
 * Each lease is registered with the loop's io_uring (loop.h: its pages
 * are pinned once, not on every disk write from it), when made and again
 * each time it is lent after the first; lease->buf is the slot, or -1 where
 * registration failed (the lease is used unregistered).
 *
 * Ownership: struct staging owns every lease.  staging_get_share() lends one to a
 * connection until staging_put().  Single-threaded (the loop thread).
 */
#ifndef CKPTD_STAGING_H
#define CKPTD_STAGING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "list.h"

struct lease {
	struct list link;   /* on staging.free, or staging.lent_leases while lent */
	int fd;             /* memfd */
	uint8_t *map;       /* ckptd's mapping, size bytes */
	size_t size;
	uid_t uid;          /* the uid whose clients have seen it */
	int huge;           /* 1: of huge pages (root's leases only) */
	int buf;            /* registered buffer slot of the loop, or -1 */
};

struct staging {
	uint64_t budget;    /* [ckptd] staging */
	uint64_t total;     /* bytes of all leases, lent or free */
	uint64_t lent;      /* bytes of lent leases */
	uint64_t reserve;   /* kept from uids with a share (not root): root
			     * (ckptfs, which serves every user of a mount, and
			     * the administrator) always finds this much */
	unsigned flags;     /* STAGING_* */
	uint64_t huge_total;  /* bytes of leases on huge pages */
	unsigned huge_refused;  /* huge leases the pool could not make */
	int huge_off;       /* huge pages failed otherwise: not tried again */
	struct loop *loop;  /* registers the leases; NULL: none */
	unsigned unregistered;  /* registrations refused (the first logged) */
	struct pool *pool;  /* staging_fill()'s thread, until staging_fill_stop() */
	size_t fill_size;
	int filling;        /* 1: a lease is being made; -1: the fill is over */
	struct list free;
	struct list lent_leases;  /* lent, in the order lent */
};

/* reserve: see struct staging (at most half of budget is kept).  flags:
 * STAGING_MLOCK tries to lock every lease in memory, STAGING_HUGE makes
 * root's leases of huge pages where the pool has them.  loop (or NULL) must
 * outlive the leases, or be released first (loop_release() forgets every
 * registration). */
#define STAGING_MLOCK 1u
#define STAGING_HUGE 2u
struct loop;
void staging_init(struct staging *s, uint64_t budget, uint64_t reserve,
		  unsigned flags, struct loop *loop);
void staging_release(struct staging *s);
/*
 * Lend a lease of want bytes (rounded up to 2 MiB) to uid.  When the budget,
 * or uid's share (bytes; 0 = none), has not that much left, a smaller one
 * down to STAGING_MIN.  -EAGAIN when the budget has not even that free now,
 * -EDQUOT when uid's share has not (either way the caller may wait for
 * staging_put), -ENOMEM or another -errno if memory cannot be made.
 */
#define STAGING_MIN (4u << 20)
int staging_get_share(struct staging *s, uid_t uid, size_t want,
		      uint64_t share, struct lease **out);
void staging_put(struct staging *s, struct lease *l);
/* Make free leases of lease_size now, until they hold `bytes` (at most the
 * budget), so that no client pays for first touches (~1 s per GiB).  With
 * STAGING_HUGE, root's reserve is made of huge pages where the pool has
 * them, for the mount that will take it.  0 or -errno. */
int staging_prefault(struct staging *s, size_t lease_size, uint64_t bytes);
/* Root's reserve of huge pages now (STAGING_HUGE), as far as the pool has
 * them: the leases made, 0 where none (said once).  The fill below makes
 * the rest; a huge page the pool is short of is never waited for. */
int staging_prefault_huge(struct staging *s, size_t lease_size);
/* The same as staging_prefault() in the background, after
 * staging_prefault_huge(): one
 * lease at a time on a thread of its own (a one-thread pool completing
 * through loop) at idle priority.  Each lease joins the free ones when made,
 * and counts in total from when it is asked for.  A lease that cannot be
 * made ends the fill, said once; clients then get leases made as they ask,
 * as always when none is free.  0, or -errno when the thread cannot start
 * (nothing is made then).  staging_fill_stop() ends it (a lease being made
 * is dropped) and joins the thread: before loop_release(). */
struct pool;
int staging_fill(struct staging *s, struct loop *loop, size_t lease_size);
void staging_fill_stop(struct staging *s);
/* Bytes lent to uid now. */
uint64_t staging_lent_to(const struct staging *s, uid_t uid);
/* Who holds the lent staging, for a log line: "uid 1001: 12 MiB in 3
 * leases, uid 0: 8 MiB in 1 lease" (the largest holders first, as many as
 * fit in len bytes), or "nobody". */
void staging_holders(const struct staging *s, char *buf, size_t len);

#endif
