/*
 * session.h - one client connection: framing, replies, writer handles and
 * the waits it has asked for.
 *
 * A connection receives frames into its buffer with io_uring, decodes them
 * (proto.h) and dispatches each through one table (session.c) to the
 * module that handles its type: ops.h, ingest.h, reader.h, nsops.h,
 * lease.h.  Handlers answer through conn_reply*().  Lower layers never call
 * in here: they raise events (event.h) that ckptd.c wires to
 * session_notify(), or call the callbacks svc passed them.
 * Replies are queued in an output buffer that one io_uring send drains.  A
 * malformed frame gets an error and closes the connection, since the stream
 * can no longer be trusted; the daemon carries on.
 *
 * Lifetime: a conn is reference counted.  Disk operations that read its
 * staging lease, and waiters, hold references, so the lease is returned to
 * the staging pool only once nothing can read it any more.
 */
#ifndef CKPTD_SESSION_H
#define CKPTD_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "catalog.h"
#include "ctx.h"
#include "svc.h"
#include "proto.h"

struct writer {
	struct version *v;        /* holds a reference; NULL if free */
	int committed;
};

struct conn {
	struct list link;         /* in ckptd.conns */
	struct ckptd *d;
	int fd;
	uid_t uid;
	pid_t pid;
	uint32_t refs;
	int closed;               /* socket shut; no more replies */
	struct lease *lease;      /* staging lent to this client */

	struct loop_op recv_op;
	uint8_t *rbuf;
	size_t rlen;
	int paused;               /* not read: too many replies owed (no
				   * receive in flight) */
	uint32_t nwait;           /* its parked WAITs */
	uint32_t nreads;          /* its READs in progress or deferred */
	uint32_t nwrites;         /* its WRITEs in flight or parked */
	struct loop_op hup_op;    /* a poll for the client's hang-up, armed
				   * at the first pause */
	int hup_armed;

	struct loop_op send_op;
	uint8_t *wbuf;            /* replies being queued */
	size_t wlen, wcap;
	uint8_t *sbuf;            /* replies being sent */
	size_t slen, soff, scap;
	int sending;

	struct writer *w;         /* indexed by handle */
	uint32_t nw;

	struct list hello_link;   /* in ckptd.hello_wait while waiting */
	uint32_t hello_seq;
	uint64_t hello_want;
	uint64_t hello_since;     /* ckptd_now_ms() when it began to wait */
	int hello_ready;          /* lease lent, HELLO reply not yet sent: it
				   * waits for the replies ahead of it */
};

/* A WAIT that is not yet answered. */
struct waiter {
	struct list link;         /* in version.waiters */
	struct conn *conn;        /* holds a reference */
	uint32_t seq;
	uint32_t level;
};

/* Start serving an accepted socket (or refuse it: a uid over [ckptd]
 * max_conns_per_uid). */
void session_start(struct ckptd *d, int fd);
/* Send a client that will not be served a reply frame (HELLO, seq 0) with
 * status err, so that its first call reports why, then close fd. */
void session_refuse(int fd, int err);
/* 1 while something other than the connection itself, its receive, its
 * send and its WAITs holds c: a disk write, a read or a drain read that may
 * still use c's lease. */
int session_busy(struct conn *c);
/* Close every connection (shutdown). */
void session_close_all(struct ckptd *d);

static inline void conn_get(struct conn *c)
{
	c->refs++;
}
void conn_put(struct conn *c);

/* Queue a reply built from m (type gets PROTO_REPLY).  Errors close c. */
void conn_reply(struct conn *c, const struct proto_msg *m);
void conn_reply_status(struct conn *c, const struct proto_msg *req,
		       int status);
/* For replies with a list: start one (the encoder writes into c's output
 * buffer), then finish it. */
struct enc *conn_reply_begin(struct conn *c, const struct proto_msg *m,
			     struct enc *e);
void conn_reply_end(struct conn *c, struct enc *e);

/* Answer every waiter of v that its level or failure now settles. */
void session_notify(struct ckptd *d, struct version *v);
/* Add a waiter for req on v.  0 or -ENOMEM. */
int session_wait(struct conn *c, struct version *v,
		 const struct proto_msg *req);

/* A WAIT (req) on a version this node holds no part of but other nodes
 * do (the version over the cluster, cluster.h): answered now if it has
 * reached the level, failed, or is gone, else parked until a PART changes
 * it (session_notify_cluster()) or the connection closes.  0 (answered or
 * parked), -CKPT_ENOVERSION (no node holds it: nothing was sent), or
 * -ENOMEM. */
int session_wait_cluster(struct conn *c, const struct proto_msg *req);
/* Answer the WAITs of session_wait_cluster() on job/version (every one:
 * job NULL) that the cluster's parts now settle. */
void session_notify_cluster(struct ckptd *d, const char *job,
			    const char *version);

/* May uid see job?  0 or -EACCES. */
int session_may(const struct conn *c, const struct job *j);

#endif
