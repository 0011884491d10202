/*
 * parts_i.h - what parts.c (the parts other nodes hold: announcing and
 * hearing them) and partsview.c (the versions, listings and lookups made
 * of them) share.  Private to those two files.
 *
 * The parts are the loop thread's: every function here runs on it.
 */
#ifndef CKPT_PARTS_I_H
#define CKPT_PARTS_I_H

#include <stdint.h>

#include "cluster.h"
#include "cluster_i.h"
#include "list.h"
#include "manifest.h"

struct rpart {
	struct list link;         /* in parts.list */
	uint32_t owner;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t uid, state, level, copies, nparts, nfiles;
	uint64_t seq, open_id, sealed_ns, bytes;
	struct manifest man;      /* SEALED with a manifest; else zeroed */
	uint32_t *fhash;          /* man's files by path: index + 1, or 0 */
	uint32_t hcap;            /* a power of two, > 2 * man.nfiles */
};

struct parts {
	struct cluster *cl;
	struct list list;
};

static inline struct cluster *cl_of(const struct ckptd *d)
{
	return d->cluster;
}

#endif
