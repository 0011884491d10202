/*
 * bases.h - the incremental bases of a job's drained versions: the names
 * that no drained version of the job may leave the PFS under while
 * another drained version refers to them (its chunks are REFs there).
 *
 * bases_of() collects and sorts them once, so that a pass of [drain] keep
 * (drain.c pfs_retain()) asks of each candidate in O(log n); before stop
 * 46 each question walked the job.  drain_is_base() (drain.h) asks once.
 *
 * Threads: the loop's (the catalog's).  A struct bases points into the
 * job's versions: release it before any of them can be freed.
 */
#ifndef CKPT_BASES_H
#define CKPT_BASES_H

#include <stdint.h>

struct job;

struct bases {
	const char **name;        /* sorted; malloc'd, the names the job's */
	uint32_t n;
	int any;                  /* a copy is running: any may be a base */
};

/* The bases of j's drained versions: 0, or -ENOMEM (*b then empty).
 * bases_release() after. */
int bases_of(const struct job *j, struct bases *b);
/* Whether name is one of b (or may be: b->any). */
int bases_has(const struct bases *b, const char *name);
void bases_release(struct bases *b);

#endif
