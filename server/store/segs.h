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
 *
 * Room.  The store's file system is shared: by the segments, by the shards
 * this node holds for its peers (<store>/shards, server/cluster/hold.c), and
 * by whatever else writes there.  Its free bytes are read again (statvfs, on
 * the pool when there is one) at most every SEGS_FS_REFRESH_MS, so that
 * another file filling it is seen; between reads the bytes segments and
 * shards are known to have taken are subtracted (segs_fs_took()).  The rule:
 *
 *   room     = free - [ckptd] reserve - segment bytes being made
 *              - shard bytes promised but not yet written (others_unwritten)
 *   capacity = min(segment bytes (made or being made) + room,
 *                  [ckptd] capacity - every shard byte (others)
 *                  - segments moved aside)       (the second when set)
 *
 * so a new segment never counts on bytes a peer's shard was promised (the
 * holder reserves a shard's whole size at its first chunk, and pushes its
 * totals here with segs_set_others()), and a shard is never promised bytes
 * a segment is being made in (segs_room()).  The holder also keeps [cluster]
 * holder_reserve of the room for this node's own segments; the rest of the
 * room goes to whoever asks first.  A segment is allocated (fallocate)
 * before any data goes into it, so once a version has its segments its
 * writes cannot fail for room.
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
/* The file system's free bytes are read again at most this often. */
#define SEGS_FS_REFRESH_MS 1000

struct pool;

struct seg {
	int fd;             /* -1 for an id that has no file */
	uint64_t size;      /* file size */
	int used;           /* given to a version */
	int creating;       /* fd -1: a pool task is making this file */
	int clearing;       /* freed: a pool task zeroes its header; not
			     * free until it is done */
};

/* The store's file system as last read, and kept since (segs.c). */
struct segs_fs {
	uint64_t free;      /* bytes free to ckptd (f_bavail), less what was
			     * taken since the read (segs_fs_took()) */
	uint64_t size;      /* bytes of the file system (f_blocks) */
	uint64_t read_ms;   /* monotonic ms of the last read asked for */
	uint64_t took;      /* bytes taken since the read in flight began */
	int reading;        /* a read is on the pool */
	int err;            /* the last read's: 0 or -errno (values kept) */
};

struct segs {
	char dir[600];      /* <store>/seg */
	struct seg *v;      /* indexed by segment id */
	uint32_t n;         /* ids 0..n-1 exist or are holes */
	uint32_t nused;
	uint64_t seg_size;  /* size of new segments */
	uint64_t capacity;  /* bytes all segments may take now (the rule
			     * above; recomputed as its terms change) */
	uint64_t bytes;     /* bytes of all segment files */
	uint64_t limit;     /* [ckptd] capacity: segments and shards
			     * together; 0 = none */
	uint64_t reserve;   /* [ckptd] reserve: left free on the fs */
	uint64_t moved;     /* bytes of segments moved aside (segs_move) */
	uint64_t others;    /* shard bytes held, reserved or being written
			     * (segs_set_others()) */
	uint64_t others_unwritten; /* of those, not yet on the disk */
	struct segs_fs fs;
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
 * capacity 0 means "what the file system has, less reserve"; either way the
 * room is the rule above, from a first statvfs made here.  0 or -errno.
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
/* Read the file system's free bytes again if the last read is older than
 * SEGS_FS_REFRESH_MS (or force): on the pool when there is one (the values
 * change when it is back), else here.  The capacity follows.  A failed read
 * keeps the values it had (fs.err says why). */
void segs_refresh(struct segs *s, int force);
/* The holder's shards (hold.c): all bytes held, reserved or being written,
 * and of those the bytes not yet written.  The capacity follows. */
void segs_set_others(struct segs *s, uint64_t all, uint64_t unwritten);
/* bytes were written to the file system (by the holder) since the last
 * read: taken from fs.free until the next read sees them. */
void segs_fs_took(struct segs *s, uint64_t bytes);
/* Bytes of the file system that neither segments nor shards have or were
 * promised: the room of the rule above, less segment bytes being made. */
uint64_t segs_room(const struct segs *s);
/* Bytes shards may still take under [ckptd] capacity (UINT64_MAX when it
 * is not set): capacity less segments, shards and segments moved aside. */
uint64_t segs_limit_room(const struct segs *s);
static inline int segs_fd(const struct segs *s, uint32_t id)
{
	return id < s->n ? s->v[id].fd : -1;
}
static inline uint64_t segs_used_bytes(const struct segs *s)
{
	return (uint64_t)s->nused * s->seg_size;
}

#endif
