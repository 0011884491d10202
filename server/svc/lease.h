/*
 * lease.h - staging for connections (lease.c).
 *
 * HELLO asks for a lease and waits, in order, while the budget or the uid's
 * share ([ckptd] staging_per_uid) has none to spare, at most [ckptd]
 * staging_wait seconds (then -ENOBUFS, and ckptd logs who holds the
 * staging).  RELEASE gives the lease back, or cancels a HELLO still waiting
 * (which gets -ECANCELED).
 *
 * Owns the queue of connections waiting for staging (ckptd.hello_wait);
 * the leases themselves are staging.h's.  The handlers are called by
 * session.c's dispatch table; lease_freed by session.c when a connection
 * lets its lease go; lease_tick by the daemon's tick; lease_send_hello by
 * session.c's sender.
 *
 * Threads: the loop thread only.
 */
#ifndef CKPTD_LEASE_H
#define CKPTD_LEASE_H

#include "proto.h"

struct ckptd;
struct conn;

void lease_op_hello(struct conn *c, const struct proto_msg *req);
void lease_op_release(struct conn *c, const struct proto_msg *req);
/* Staging was returned: lend it to the clients waiting in HELLO. */
void lease_freed(struct ckptd *d);
/* Fail the HELLOs that waited longer than staging_wait (from the tick). */
void lease_tick(struct ckptd *d);
/* c's send queue is empty and c->hello_ready: send the HELLO reply (with
 * the memfd) now. */
void lease_send_hello(struct conn *c);
/* c's lease if the client can have it: lent, and the HELLO reply that
 * carries it sent.  A WRITE or READ naming staging before that is a
 * protocol error; accepted, it could outlive the lease, which RELEASE takes
 * back at once while its reply is unsent.  NULL otherwise. */
struct lease *lease_of(const struct conn *c);

#endif
