/*
 * nsops.h - changes to an open version's namespace by one of its writers:
 * TRUNCATE, UNLINK, RENAME, LINK, and file attributes: SETATTR, SETXATTR
 * (nsops.c).
 *
 * Owns nothing: each changes the version's file table (catalog.h) and
 * answers.  Called by session.c's dispatch table only.
 *
 * Threads: the loop thread only.
 */
#ifndef CKPTD_NSOPS_H
#define CKPTD_NSOPS_H

#include "proto.h"

struct conn;

void op_truncate(struct conn *c, const struct proto_msg *req);
void op_unlink(struct conn *c, const struct proto_msg *req);
void op_rename(struct conn *c, const struct proto_msg *req);
void op_link(struct conn *c, const struct proto_msg *req);
void op_setattr(struct conn *c, const struct proto_msg *req);
void op_setxattr(struct conn *c, const struct proto_msg *req);

#endif
