/*
 * seek.h - SEEK_DATA: the first run of data in a range of a file of a
 * version, from what this node holds in memory (seek.c).  Called by
 * session.c's dispatch table.
 *
 * Threads: the loop thread only.
 */
#ifndef CKPTD_SEEK_H
#define CKPTD_SEEK_H

struct conn;
struct proto_msg;

/* Answers c: off and size of the run, or -ENXIO (none in the range), or
 * READ's errors (no such job, version or file; -EACCES). */
void op_seek_data(struct conn *c, const struct proto_msg *req);

#endif
