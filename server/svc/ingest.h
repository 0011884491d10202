/*
 * ingest.h - WRITE: a client's bytes from its staging lease to the store,
 * through io_uring, and the seal of a version once every writer committed
 * (ingest.c).
 *
 * Owns the disk writes in flight (v->inflight counts them) and the seal's
 * steps (v->pending).  op_write is called by session.c's dispatch table;
 * ingest_abandon and ingest_seal by ops.c (commit, abort) and session.c (a
 * writer's connection closing).  A sealed version goes to level.h for LOCAL
 * and to drain.h for the PFS.
 *
 * Threads: the loop thread only.
 */
#ifndef CKPTD_INGEST_H
#define CKPTD_INGEST_H

#include "proto.h"

struct ckptd;
struct conn;
struct version;

void op_write(struct conn *c, const struct proto_msg *req);
/* A writer of v leaves without committing (disconnect or ABORT): v fails
 * with err. */
void ingest_abandon(struct ckptd *d, struct version *v, int err);
/* Every writer committed: start sealing v.  A version whose names its
 * drain and restore could not make (version_check(): "a" a file with
 * "a/b" below it, a malformed symbolic link) fails instead, and that
 * error is returned: every writer and waiter sees it.  0 or -errno. */
int ingest_seal(struct ckptd *d, struct version *v);

#endif
