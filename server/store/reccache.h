/*
 * reccache.h - records read whole and checked, shared by the reads that
 * need pieces of them.
 *
 * A record is checked against its CRC32C as a whole, so a read of a piece
 * of it reads and checks all of it.  Reads that cut a large record into
 * pieces (another node's reads of this node's files come in pieces of at
 * most PEER_MAX_SHARD, 4 MiB, while a record is up to [ckptd] chunk, which
 * may be 256 MiB) would read it once per piece: up to 64 times.  Here
 * the first reader of a record reads and checks it into a buffer; readers
 * of the same record meanwhile wait for it and copy from that buffer, and
 * it is kept for those that come next while the cache holds no more than
 * its budget of records nobody uses (the one released last is kept
 * whatever its size).  A record whose read failed is never found again:
 * the next reader reads it anew.
 *
 * A record is known by the open_id of its part, its segment and offset,
 * its length and CRC: open_ids are never used twice on a node, so a
 * segment recycled for another part never hits an old entry.
 *
 * Threads: every call may run on any thread (the pool's workers); a call
 * that finds the record being read by another waits for it.  The one
 * reading never waits for another, so the waits always end.
 */
#ifndef CKPTD_RECCACHE_H
#define CKPTD_RECCACHE_H

#include <stdint.h>

#include "manifest.h"

struct reccache;
struct rcent;

/* A cache keeping at most max bytes of records nobody uses.  0 or
 * -ENOMEM. */
int reccache_new(uint64_t max, struct reccache **out);
/* Free c and every entry: no call may be running. */
void reccache_free(struct reccache *c);

/* Record r of part open_id, read from fd (its segment) when the cache
 * does not have it, checked against r->crc: *e holds it, its bytes at
 * reccache_bytes(*e), until reccache_put().  0, or -CKPT_ECORRUPT (the
 * bytes fail their CRC), -EIO (short), -ENOMEM, -errno; *e is NULL then. */
int reccache_read(struct reccache *c, uint64_t open_id,
		  const struct man_rec *r, int fd, struct rcent **e);
const uint8_t *reccache_bytes(const struct rcent *e);
void reccache_put(struct reccache *c, struct rcent *e);

/* For status and tests: reads served from the cache, and records read. */
void reccache_counts(struct reccache *c, uint64_t *hits, uint64_t *loads);

#endif
