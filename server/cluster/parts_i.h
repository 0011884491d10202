/*
 * parts_i.h - what parts.c (the parts other nodes hold: announcing and
 * hearing them) and partsview.c (the versions, listings and lookups made
 * of them) share.  Private to those two files and adopt.c, which looks
 * for the parts of nodes gone for good among them.
 *
 * The parts are the loop thread's: every function here runs on it.
 */
#ifndef CKPT_PARTS_I_H
#define CKPT_PARTS_I_H

#include <stdint.h>
#include <stdlib.h>

#include "cluster.h"
#include "cluster_i.h"
#include "extmap.h"
#include "list.h"
#include "manifest.h"

struct rpart {
	struct list link;         /* in parts.list */
	uint32_t owner;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t uid, state, level, copies, nparts, nfiles;
	uint32_t flags;           /* PEER_PART_* its owner last said */
	int behalf;               /* not its owner's word: learned from a
				   * shard held here, or announced by one of
				   * its holders while the owner is not up
				   * (parts.c); the owner's replaces it */
	uint64_t seq, open_id, sealed_ns, bytes;
	struct manifest man;      /* SEALED with a manifest; else zeroed */
	uint32_t *fhash;          /* man's files by path: index + 1, or 0 */
	uint32_t hcap;            /* a power of two, > 2 * man.nfiles */
	struct extmap *xmap;      /* per entry of man, the read index of its
				   * records (extmap.h), built whole at the
				   * first SEEK_DATA, STAT or listing
				   * (partsview.c: rpart_maps()); NULL: not
				   * yet.  man's records never change while
				   * it is kept, so neither do these */
	uint64_t *xdata;          /* per entry, its bytes of data (not holes,
				   * not zero records), with xmap */
};

/* Drop p's read maps, before p's manifest goes or is replaced. */
static inline void rpart_maps_release(struct rpart *p)
{
	uint32_t i;

	for (i = 0; p->xmap && i < p->man.nfiles; i++)
		extmap_release(&p->xmap[i]);
	free(p->xmap);
	free(p->xdata);
	p->xmap = NULL;
	p->xdata = NULL;
}

struct parts {
	struct cluster *cl;
	struct list list;
	int any_from;             /* a part that took over another (its
				   * record's `from`) was seen: only then
				   * is a PART checked against them */
};

static inline struct cluster *cl_of(const struct ckptd *d)
{
	return d->cluster;
}

#endif
