/*
 * plan.h - the restore planner: where a file of a version can be read from
 * now, fastest first, and why (ckpt.h: enum ckpt_source).
 *
 * The sources, in the order a read tries them:
 *
 *   LOCAL   this node's own part, its local copy;
 *   OWNER   another node's part, read over the link from that node, which
 *           must be up and still have its local copy;
 *   SHARDS  decoded from k of the part's shards (the part is PROTECTED and
 *           at least k of its shard holders are up, this node counting);
 *   PFS     the part's drained copy (a drain target here, the part
 *           DRAINED).
 *
 * A plan is a snapshot: reader.c takes its first source and, when that one
 * fails (a CRC mismatch, a node that went down meanwhile, a copy evicted),
 * the next, each time finding the part again by name.  PLAN (op_plan) sends
 * every file's plan to ckptctl restore --plan; LATEST skips versions with a
 * part no source can serve (plan_version_readable).  The planner decides and
 * reads nothing.
 *
 * Threads: the loop thread only.
 */
#ifndef CKPTD_PLAN_H
#define CKPTD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"

struct ckptd;
struct conn;
struct proto_msg;
struct version;

#define PLAN_MAX 4                /* sources a file can have */
#define PLAN_NO_NODE UINT32_MAX   /* plan.node: no node's part known */

struct plan {
	uint32_t n;               /* usable sources, kind[0] first */
	uint32_t kind[PLAN_MAX];  /* enum ckpt_source */
	uint32_t node;            /* the part's node (cluster index; 0 alone;
				   * PLAN_NO_NODE: none known) */
	int own;                  /* the part is this node's (catalog) */
	uint64_t size;            /* the file's size */
	int32_t err;              /* n == 0: why (-ENOENT, -CKPT_ENOVERSION,
				   * -CKPT_ECORRUPT, -CKPT_ELOST) */
};

/*
 * The sources of job/version/path for a client of uid caller (who may see
 * the job: the caller checked) into *p; why (cap bytes, may be NULL) gets
 * the reason in words.  Returns p->n, or p->err when it is 0.
 */
int plan_file(struct ckptd *d, const char *job, const char *version,
	      uint32_t caller, const char *path, struct plan *p, char *why,
	      size_t cap);
/* Can every part of job/version (v: this node's part, or NULL) be read
 * from some source now?  1 or 0. */
int plan_version_readable(const struct ckptd *d, const char *job,
			  const char *version, const struct version *v,
			  uint32_t caller);
/* The sources of a part of another node (owner, its open_id) with copies
 * (CKPT_COPY_*), as plan_file() gives them (kinds into p, n returned);
 * why as there.  Called by parts.c for each part it knows. */
uint32_t plan_part(const struct ckptd *d, uint32_t owner, uint64_t open_id,
		   uint32_t copies, struct plan *p, char *why, size_t cap);
/* CKPT_COPY_PFS if the whole version (this node's part v, or NULL) was
 * found published on the PFS, so that every other part is there too, or v
 * is a whole version found there of which this node holds no part
 * (no_part); 0 otherwise. */
uint32_t plan_pfs_whole(const struct version *v);

/* PLAN: every file of a version with its plan (struct ckpt_plan_entry). */
void op_plan(struct conn *c, const struct proto_msg *req);

#endif
