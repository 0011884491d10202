/*
 * segs.h - the segment files of the local store.
 *
 * The store keeps data in append-only segment files, <store>/seg/NNNNNNNN,
 * each [ckptd] segment bytes, preallocated with fallocate and opened with
 * O_DIRECT where the file system allows it.  A segment belongs to one open
 * or sealed version at a time.  Freed segments are kept and recycled, since
 * overwriting allocated extents is faster than writing new files.  The
 * capacity bounds how many segments may exist.
 *
 * The first SEGHDR_SIZE bytes of a segment hold a header naming the version
 * it was given to (manifest.h); data starts after it.
 *
 * Single-threaded (the loop thread), except that fds may be used by the
 * kernel through io_uring, and that new segments are made ahead on the
 * worker pool (segs->pool): SEGS_SPARE free segments are kept ready so that
 * a version that needs one does not wait on fallocate on the loop.  A
 * worker only creates and fallocates a file under an id the loop reserved
 * for it (seg.creating); the loop installs it when the task completes.
 * With a pool, segs_alloc never creates a file on the loop: when none is
 * free it says -EAGAIN and the caller waits for segs->ready.  Freed
 * segments have their header zeroed on the pool too (seg.clearing) and are
 * handed out again only once that is done.
 */
#ifndef CKPTD_SEGS_H
#define CKPTD_SEGS_H

#include <stdint.h>

#include "list.h"

/* Segment ids are below this (64 TiB of 64 MiB segments); a larger name in
 * <store>/seg is not ours. */
#define SEGS_MAX_ID (1u << 20)

/* Free segments made ahead by the pool, so that segs_alloc need not create
 * one on the loop. */
#define SEGS_SPARE 4
/* Spare segments being made at once. */
#define SEGS_REFILL_MAX 2

struct pool;

struct seg {
	int fd;             /* -1 for an id that has no file */
	uint64_t size;      /* file size */
	int used;           /* given to a version */
	int creating;       /* fd -1: a pool task is making this file */
	int clearing;       /* freed: a pool task zeroes its header; not
			     * free until it is done */
};

struct segs {
	char dir[600];      /* <store>/seg */
	struct seg *v;      /* indexed by segment id */
	uint32_t n;         /* ids 0..n-1 exist or are holes */
	uint32_t nused;
	uint64_t seg_size;  /* size of new segments */
	uint64_t capacity;  /* bytes all segments may take */
	uint64_t bytes;     /* bytes of all segment files */
	int direct;         /* segments opened with O_DIRECT */
	struct pool *pool;  /* makes spare segments; NULL: none made ahead */
	unsigned refilling; /* pool tasks making spare segments */
	unsigned clearing;  /* pool tasks zeroing freed segments' headers */
	uint32_t nwait;     /* allocations that found none free (-EAGAIN) */
	struct list waiting;/* owned by ingest.c: writes waiting for a
			     * segment (segs_alloc said -EAGAIN), in order */
	/* Loop: a segment may be free now (made or cleared: err 0), or making
	 * one failed (err; -ECANCELED: shutting down, none will come).  Set by
	 * whoever waits (ingest.c); NULL: nobody. */
	void (*ready)(void *arg, int err);
	void *ready_arg;
};

/*
 * Open (creating) <store>/seg, and every segment in it, marked free.
 * capacity 0 means "what the file system has, less reserve".  0 or -errno.
 */
int segs_open(struct segs *s, const char *store, uint64_t seg_size,
	      uint64_t capacity, uint64_t reserve, int direct);
void segs_close(struct segs *s);
/* Mark id used (during recovery, for segments a manifest names).
 * -ENOENT if there is no such segment. */
int segs_claim(struct segs *s, uint32_t id);
/* A free segment, recycled or new.  -ENOSPC when the capacity is reached
 * or the file system is full, or another -errno.  With a pool, -EAGAIN
 * when none is free yet but one is being made or cleared: s->ready is
 * called (from the loop) when that is over; try again then. */
int segs_alloc(struct segs *s, uint32_t *id);
/* Keep SEGS_SPARE free segments ready: start making one on the pool if
 * fewer are free and the capacity allows (one at a time).  No-op without a
 * pool. */
void segs_refill(struct segs *s);
/* Return id to the free list.  Its header is zeroed (on the pool when there
 * is one, and then id is free only once that is done) so that a crash
 * cannot later report the old owner as incomplete. */
void segs_free(struct segs *s, uint32_t id);
/* Move segment id's file to path (recovery's quarantine, on the same file
 * system) and forget it: the id becomes a hole, and the capacity shrinks by
 * its size, since its bytes still take the disk.  0 or -errno. */
int segs_move(struct segs *s, uint32_t id, const char *path);
/* The path of segment id's file (for a worker that opens it itself).  0 or
 * -ENAMETOOLONG. */
int segs_path(const struct segs *s, uint32_t id, char *buf, size_t cap);
static inline int segs_fd(const struct segs *s, uint32_t id)
{
	return id < s->n ? s->v[id].fd : -1;
}
static inline uint64_t segs_used_bytes(const struct segs *s)
{
	return (uint64_t)s->nused * s->seg_size;
}

#endif
