/*
 * plan.c - the restore planner (see plan.h): which sources can serve a file
 * now, in the order local, owner, shards, PFS, and why.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cluster.h"
#include "drain.h"
#include "ops.h"
#include "pfsman.h"
#include "plan.h"
#include "session.h"

/* The reason in words, clauses joined by "; ". */
struct why {
	char *buf;
	size_t cap, len;
};

static void why_add(struct why *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void why_add(struct why *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!w->buf || w->len + 1 >= w->cap)
		return;
	if (w->len) {
		n = snprintf(w->buf + w->len, w->cap - w->len, "; ");
		w->len += (size_t)n < w->cap - w->len ? (size_t)n
						      : w->cap - w->len - 1;
	}
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		w->len += (size_t)n < w->cap - w->len ? (size_t)n
						      : w->cap - w->len - 1;
}

static void take(struct plan *p, uint32_t kind)
{
	if (p->n < PLAN_MAX)
		p->kind[p->n++] = kind;
}

/* SHARDS and PFS of a part of owner with copies; w gets the reasons (the
 * first source taken is described, the ones before it say why not). */
static void tail_sources(const struct ckptd *d, uint32_t owner,
			 uint64_t open_id, uint32_t copies, struct plan *p,
			 struct why *w)
{
	struct cluster_reach r;

	/* An evicted part (no local copy, on the PFS) has dropped its
	 * records: its shards cannot be told apart. */
	if ((copies & CKPT_COPY_PEERS) &&
	    (copies & (CKPT_COPY_LOCAL | CKPT_COPY_PFS)) == CKPT_COPY_PFS) {
		if (!p->n)
			why_add(w, "evicted: its shards have no records");
	} else if (copies & CKPT_COPY_PEERS) {
		cluster_reach(d, owner, open_id, &r);
		if (r.reachable >= r.k) {
			if (!p->n)
				why_add(w, "decoded from %u of %u shards reachable (%u needed)",
					r.reachable, r.shards, r.k);
			take(p, CKPT_SRC_SHARDS);
		} else if (!p->n) {
			why_add(w, "only %u of %u shards reachable, %u needed",
				r.reachable, r.shards, r.k);
		}
	} else if (!p->n && cluster_nodes(d)) {
		why_add(w, "not erasure-coded");
	}
	if ((copies & CKPT_COPY_PFS) && drain_enabled(d)) {
		if (!p->n)
			why_add(w, "the drained PFS copy");
		take(p, CKPT_SRC_PFS);
	} else if (!p->n) {
		why_add(w, (copies & CKPT_COPY_PFS) ? "drained, but no drain target here"
						      : "not drained");
	}
}

uint32_t plan_part(const struct ckptd *d, uint32_t owner, uint64_t open_id,
		   uint32_t copies, struct plan *p, char *why, size_t cap)
{
	struct why w = { why, cap, 0 };
	const char *name = cluster_node_name(d, owner);

	memset(p, 0, sizeof(*p));
	if (why && cap)
		why[0] = '\0';
	p->node = owner;
	if (owner != cluster_self(d)) {
		if (!cluster_node_up(d, owner))
			why_add(&w, "%s is down", name);
		else if (!(copies & CKPT_COPY_LOCAL))
			why_add(&w, "%s has no local copy", name);
		else {
			why_add(&w, "read from %s, which holds it", name);
			take(p, CKPT_SRC_OWNER);
		}
	} else {
		why_add(&w, "this node's part has no copy here (rebuilding)");
	}
	tail_sources(d, owner, open_id, copies, p, &w);
	return p->n;
}

/* v, of which this node holds no part (no_part: its whole PFS manifest),
 * holds the file and no peer lists a part that does: the PFS.  The part
 * is its writer's (format 6), when that is a node of the cluster; else
 * no node's. */
static void plan_none_here(const struct ckptd *d, const struct version *v,
			   struct plan *p, struct why *w)
{
	int id = v->pfs ? cluster_node_id(d, v->pfs->writer) : -ENOENT;

	p->node = id >= 0 ? (uint32_t)id : PLAN_NO_NODE;
	why_add(w, "no part of it on this node, and no peer lists one");
	if (drain_enabled(d)) {
		why_add(w, "the drained PFS copy");
		take(p, CKPT_SRC_PFS);
	} else {
		why_add(w, "no drain target here");
	}
}

/* This node's part v holds the file. */
static void plan_own(const struct ckptd *d, const struct version *v,
		     struct plan *p, struct why *w)
{
	p->own = 1;
	p->node = cluster_self(d);
	if (v->no_part) {
		plan_none_here(d, v, p, w);
		return;
	}
	if (!version_remote(v)) {
		why_add(w, "this node's copy");
		take(p, CKPT_SRC_LOCAL);
		if (v->state != CKPT_ST_SEALED)
			return;         /* open: nothing else has it yet */
	} else {
		why_add(w, v->copies & CKPT_COPY_QUARANTINE
			   ? "local copy damaged (in quarantine)"
			   : "local copy evicted");
	}
	if (cluster_nodes(d))
		tail_sources(d, p->node, v->open_id, v->copies, p, w);
	else if ((version_remote(v) || (v->copies & CKPT_COPY_PFS)) &&
		 drain_enabled(d)) {
		if (!p->n)
			why_add(w, "the drained PFS copy");
		take(p, CKPT_SRC_PFS);
	} else if (!p->n) {
		why_add(w, drain_enabled(d) ? "not drained" : "no drain target here");
	}
}

uint32_t plan_pfs_whole(const struct version *v)
{
	return v && (v->pfs_whole || v->no_part) ? CKPT_COPY_PFS : 0;
}

int plan_file(struct ckptd *d, const char *job, const char *version,
	      uint32_t caller, const char *path, struct plan *p, char *why,
	      size_t cap)
{
	struct version *v = catalog_version(d->cat, job, version);
	struct why w = { why, cap, 0 };
	struct cluster_part cp;
	int fi;

	memset(p, 0, sizeof(*p));
	if (why && cap)
		why[0] = '\0';
	fi = v && !version_dead(v) ? version_file(v, path, 0) : -1;
	/* Another node's part, or a version of which this node holds none
	 * (no_part: its whole PFS manifest), whose part's owner or shards
	 * come before the PFS while the part is known. */
	if ((fi < 0 || v->no_part) &&
	    cluster_part_of(d, job, version, caller, path, &cp) == 0) {
		plan_part(d, cp.node, cp.open_id, cp.copies | plan_pfs_whole(v),
			  p, why, cap);
		p->size = cp.size;      /* after plan_part(), which zeroes p */
	} else if (fi >= 0) {
		p->size = v->files[fi].size;
		plan_own(d, v, p, &w);
	} else {
		p->err = !v ? -CKPT_ENOVERSION
			    : v->state == CKPT_ST_DAMAGED ? -CKPT_ECORRUPT
			    : version_dead(v) ? -CKPT_ENOVERSION : fi;
		return p->err;
	}
	if (!p->n)
		p->err = -CKPT_ELOST;
	return p->n ? (int)p->n : p->err;
}

/* cluster_each_sealed_part()'s step: 1 (stop) at a part with no
 * source. */
struct unreadable {
	const struct ckptd *d;
	const struct version *v;
};

static int part_unreadable(void *arg, uint32_t owner, uint64_t open_id,
			   uint32_t copies)
{
	const struct unreadable *u = arg;
	struct plan pl;

	return !plan_part(u->d, owner, open_id,
			  copies | plan_pfs_whole(u->v), &pl, NULL, 0);
}

int plan_version_readable(const struct ckptd *d, const char *job,
			  const char *version, const struct version *v,
			  uint32_t caller)
{
	struct why w = { NULL, 0, 0 };
	struct plan p;

	if (v) {
		if (v->state != CKPT_ST_SEALED)
			return 0;
		memset(&p, 0, sizeof(p));
		plan_own(d, v, &p, &w);
		if (!p.n)
			return 0;
	}
	return !cluster_each_sealed_part(d, job, version, v, caller,
					 part_unreadable,
					 &(struct unreadable){ d, v });
}

/* ---- PLAN ---------------------------------------------------------------- */

struct plan_page {
	struct conn *c;
	const struct proto_msg *req;
	struct page pg;
	uint32_t n;               /* files counted (first pass) */
};

static void plan_entry(struct plan_page *pp, const char *path)
{
	struct ckpt_plan_entry e;
	struct plan p;
	uint32_t i;

	memset(&e, 0, sizeof(e));
	e.name = path;          /* encoded whole; path[] unused */
	plan_file(pp->c->d, pp->req->job, pp->req->version,
		  (uint32_t)pp->c->uid, path, &p, e.why, sizeof(e.why));
	e.size = p.size;
	e.source = p.n ? p.kind[0] : CKPT_SRC_NONE;
	for (i = 0; i < p.n; i++)
		e.sources |= 1u << p.kind[i];
	if (cluster_nodes(pp->c->d))
		snprintf(e.node, sizeof(e.node), "%s",
			 cluster_node_name(pp->c->d, p.node));
	proto_enc_plan_entry(&pp->pg.e, &e);
}

static void count_file(void *arg, const char *path)
{
	(void)path;
	((struct plan_page *)arg)->n++;
}

static void page_file(void *arg, const char *path)
{
	struct plan_page *pp = arg;

	if (page_take(&pp->pg))
		plan_entry(pp, path);
}

void op_plan(struct conn *c, const struct proto_msg *req)
{
	struct plan_page pp = { .c = c, .req = req };
	struct version *v;
	int ret;

	ret = ops_may_see(c, req->job);
	if (ret < 0)
		goto out_reply;
	v = catalog_version(c->d->cat, req->job, req->version);
	if (v && version_dead(v))
		v = NULL;
	ret = cluster_each_file(c->d, req->job, req->version, v,
				(uint32_t)c->uid, count_file, &pp);
	if (ret < 0)
		goto out_reply;
	if (page_begin(c, req, pp.n, &pp.pg) < 0)
		return;
	cluster_each_file(c->d, req->job, req->version, v, (uint32_t)c->uid,
			  page_file, &pp);
	page_end(c, &pp.pg);
	return;
out_reply:
	conn_reply_status(c, req, ret);
}
