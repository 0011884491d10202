/*
 * reader.h - READ: a byte range of a file of a version into the client's
 * staging lease, verified (reader.c).
 *
 * A local copy is read with io_uring, record by record, each record checked
 * against its CRC32C before any of its bytes are copied.  A version whose
 * local copy is gone (evicted) is read from its PFS copy, and a drained
 * version whose local record fails its CRC from the PFS copy too; those
 * reads block, so they run on the worker pool (pool.h) and answer from its
 * completion.  Reads of an open version wait (v->deferred) until its writes
 * in flight are on disk.
 *
 * Owns the record buffers it keeps for reuse (struct reader_bufs, one per
 * daemon in struct ckptd) and the deferred reads.  op_read is called by
 * session.c's dispatch table; reader_kick by ingest.c when a version's
 * writes in flight are done; reader_open/reader_close by ckptd.c.
 *
 * Threads: the loop thread only (the PFS reads run on a worker, touching
 * only what their task carries).
 */
#ifndef CKPTD_READER_H
#define CKPTD_READER_H

#include <stddef.h>

#include "proto.h"

struct ckptd;
struct conn;
struct version;

#define READER_KEEP 16            /* record buffers kept for reuse */

/* Record buffers of one size (the store's chunk), kept between reads. */
struct reader_bufs {
	void *buf[READER_KEEP];
	unsigned n;
	size_t size;
};

/* Records are at most chunk bytes: keep buffers of that size. */
void reader_open(struct reader_bufs *rb, size_t chunk);
/* Free the kept buffers (shutdown). */
void reader_close(struct reader_bufs *rb);

void op_read(struct conn *c, const struct proto_msg *req);
/* v has no write in flight any more: serve the reads that waited. */
void reader_kick(struct ckptd *d, struct version *v);

#endif
