/*
 * reader.h - READ: a byte range of a file of a version into the client's
 * staging lease, verified (reader.c).
 *
 * Where a file is read from is the restore planner's (plan.h): this
 * node's copy, the node that holds the file (cluster.h), its shards, or its
 * PFS copy, the next one tried when one fails.  A local copy is read with
 * io_uring, record by record, each record checked against its CRC32C
 * before any of its bytes are copied.  A PFS copy (evicted, or the local
 * copy failed) is read on the worker pool (pool.h), since those reads
 * block, and answers from its completion.  Reads of an open version wait
 * (v->deferred) until its writes in flight are on disk.
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

#include "cluster.h"
#include "list.h"
#include "plan.h"
#include "proto.h"

struct ckptd;
struct conn;
struct version;

#define READER_KEEP 16            /* record buffers kept for reuse */
#define READER_BUDGET (256u << 20) /* record buffer bytes in use at once */

/* Record buffers of one size (the store's chunk), kept between reads, and
 * the window over all local reads: record reads start while the buffers in
 * use stay within READER_BUDGET (one read may always start), and the reads
 * that must wait for room queue in arrival order. */
struct reader_bufs {
	void *buf[READER_KEEP];
	unsigned n;
	size_t size;
	size_t used;              /* bytes of buffers of reads in flight */
	struct list waiting;      /* struct rreq.link, in order */
};

/* Records are at most chunk bytes: keep buffers of that size. */
void reader_open(struct reader_bufs *rb, size_t chunk);
/* Free the kept buffers (shutdown). */
void reader_close(struct reader_bufs *rb);

/*
 * One client READ on its way through its file's sources (plan.h): the
 * first source of the plan is tried, and on a failure the next, until one
 * serves the range or none is left; the client then gets the first
 * failure.  A source that started owns t and ends it with read_answer()
 * (or read_drop() at shutdown), exactly once.
 */
struct rtry {
	struct ckptd *d;
	struct conn *c;           /* referenced until answered */
	struct proto_msg req;     /* its strings are the fields below */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char path[CKPT_PATH_MAX2 + 1];
	struct plan plan;
	uint32_t at;              /* plan.kind[at] is being tried */
	int32_t err;              /* the first failure, or 0 */
	struct cluster_read cr;   /* the source the cluster serves */
};

/* The source being tried is done: 0 (size bytes are in the client's
 * lease) or err.  A failure goes on to the next source; the client is
 * answered when one succeeds or none is left.  t is gone after. */
void read_answer(struct rtry *t, int32_t err, uint64_t size);
/* Shutting down: t is gone without an answer. */
void read_drop(struct rtry *t);
/* May c read job's versions (its own job, root, or the uid a cluster peer
 * names for a job this node has no part of)?  0, -CKPT_ENOJOB or
 * -EACCES. */
int read_may(struct conn *c, const char *job);

void op_read(struct conn *c, const struct proto_msg *req);
/* v has no write in flight any more: serve the reads that waited. */
void reader_kick(struct ckptd *d, struct version *v);

#endif
