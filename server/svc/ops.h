/*
 * ops.h - requests about versions as wholes: begin, commit, abort, wait,
 * latest, listings, stat, remove, status, and drain control (ops.c).
 *
 * Owns nothing long-lived: each handler reads or changes the catalog and
 * the writers of the connection, then answers.  Called by session.c's
 * dispatch table only (and writer_of by the other request handlers).
 *
 * Threads: the loop thread only.
 */
#ifndef CKPTD_OPS_H
#define CKPTD_OPS_H

#include "codec.h"
#include "proto.h"

struct conn;

void op_begin(struct conn *c, const struct proto_msg *req);
void op_commit(struct conn *c, const struct proto_msg *req);
void op_commit_name(struct conn *c, const struct proto_msg *req);
void op_abort(struct conn *c, const struct proto_msg *req);
void op_wait(struct conn *c, const struct proto_msg *req);
void op_latest(struct conn *c, const struct proto_msg *req);
void op_list_jobs(struct conn *c, const struct proto_msg *req);
void op_list_versions(struct conn *c, const struct proto_msg *req);
void op_list_files(struct conn *c, const struct proto_msg *req);
void op_list_parts(struct conn *c, const struct proto_msg *req);
void op_list_nodes(struct conn *c, const struct proto_msg *req);
void op_stat(struct conn *c, const struct proto_msg *req);
void op_stat_file(struct conn *c, const struct proto_msg *req);
void op_getxattrs(struct conn *c, const struct proto_msg *req);
void op_remove(struct conn *c, const struct proto_msg *req);
void op_status(struct conn *c, const struct proto_msg *req);
/* PROTO_DRAIN (pause, resume) and PROTO_DRAIN_NOW (job/version next). */
void op_drain(struct conn *c, const struct proto_msg *req);
void op_drain_now(struct conn *c, const struct proto_msg *req);
void op_rebuild(struct conn *c, const struct proto_msg *req);
/* May c see job, which this node or only other nodes hold?  0, or
 * -CKPT_ENOJOB / -EACCES. */
int ops_may_see(struct conn *c, const char *job);

/*
 * Listings are paged (proto.h): a reply carries the entries from req->off
 * on, as many as fit in PROTO_LIST_BUDGET bytes, and the total in size.
 * page_begin() starts the reply (-1: no memory, answered); page_take()
 * says whether entry number p->index goes in this page (counting it either
 * way); page_end() sends it.  Shared with parts.c's listings.
 */
struct page {
	struct enc e;
	struct proto_msg r;
	size_t start;             /* e.len where the entries begin */
	uint32_t index;           /* entries seen */
	uint32_t count;           /* entries encoded */
	uint32_t off;             /* first entry wanted */
	uint8_t *count_at;        /* where the count goes */
	int full;
};

int page_begin(struct conn *c, const struct proto_msg *req, uint64_t total,
	       struct page *p);
int page_take(struct page *p);
void page_end(struct conn *c, struct page *p);

/* The writer named by req->handle, or NULL after answering the error. */
struct writer *writer_of(struct conn *c, const struct proto_msg *req);

#endif
