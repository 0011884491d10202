/*
 * drainscan.c - the drain's scan of the PFS (drain_i.h): the versions only
 * the PFS has, listed, and what a local record lost (the DRAINED level, the
 * incremental base, a whole copy of a version damaged here) taken from the
 * PFS manifests.
 *
 * The scan runs at the start, on the loop, before anything is queued.  A
 * target that is not there then, or does not carry its mark (pfsmark.h: a
 * PFS not mounted), is not scanned: what it holds is not this store's,
 * nor is the absence of a copy there an answer.  It is scanned later, on
 * the pool, once it carries its mark; the manifests found are applied on
 * the loop, skipping the versions a task holds meanwhile.  Until a scan
 * succeeds [drain] keep removes nothing from the PFS (retain.c), since the
 * bases of incremental copies are known only from their manifests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "drain.h"
#include "drain_i.h"
#include "level.h"
#include "log.h"

int drain_store_drained(const struct catalog *cat)
{
	struct list *jp, *vp;

	for (jp = cat->jobs.next; jp != &cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next)
			if (list_entry(vp, struct version, link)->level >=
			    CKPT_DRAINED)
				return 1;
	}
	return 0;
}

/* Is m the PFS copy of local version v, not of an older version of that
 * name (drained, then removed here while only on the PFS, and the name
 * used again)?  A whole version's manifest carries this node's seq; a
 * version in parts', the latest seal of its parts, so not earlier than
 * this node's part's. */
static int same_incarnation(const struct version *v, const struct pfsman *m)
{
	if (version_remote(v) || v->state != CKPT_ST_SEALED)
		return 1;
	if (v->nparts > 1)
		return m->sealed_ns >= v->sealed_ns;
	return m->seq == v->seq;
}

/* v, remote now, listed from a manifest pfs_scan_own_part() gave: with own,
 * this node's part of a version in nparts parts, as a runtime eviction
 * leaves it; else the whole version, which, when another node's (others),
 * is not announced as this node's (v->no_part, parts.c): the other nodes'
 * parts of a version in nparts > 1 parts, or another node's version. */
static void remote_part(struct version *v, uint32_t nparts, int own,
			int others)
{
	if (others) {
		v->no_part = 1;
		return;
	}
	if (nparts <= 1)
		return;
	v->nparts = nparts;
	v->publish = PUB_DONE;
	v->pfs_whole = 1;
}

/* Is m, as pfs_scan_own_part() left it, none of this node's?  A version in
 * parts is, unless m is this node's part; a whole one is if another node
 * of the cluster drained it (its writer, format 6).  One without a writer
 * (a single node's, or drained before format 6) is taken as this node's. */
static int others_version(const struct drain *dr, const struct pfsman *m)
{
	if (m->nparts > 1)
		return !m->node[0];
	return m->writer[0] && dr->self[0] && strcmp(m->writer, dr->self);
}

/* A drained version found on the PFS (its manifest m, taken), at the start
 * or, late, while ckptd runs. */
static void found(struct ckptd *d, struct pfsman *m, int late)
{
	struct job *j = catalog_job(d->cat, m->job);
	struct version *v = catalog_version(d->cat, m->job, m->version);
	uint32_t nparts = m->nparts;
	int own = m->node[0] != 0, others = others_version(drain_of(d), m);

	/* A job is one uid's.  Another uid's manifest under its name (a node
	 * sharing the target, or a forgery) must neither be served to this
	 * job's owner nor mark its versions drained. */
	if (j && j->uid != m->uid) {
		log_printf(LOG_WARNING, "recovery: %s/%s on the PFS is uid %u's, but job %s is uid %u's here: ignored",
			   m->job, m->version, m->uid, m->job, (unsigned)j->uid);
		goto out_release;
	}
	/* Late: a version a task holds (a copy, a removal, a publish check)
	 * is that task's to settle. */
	if (v && late && (v->removing || v->removed || v->drain == DR_RUNNING ||
			  v->publish == PUB_RUNNING))
		goto out_release;
	if (v && !same_incarnation(v, m)) {
		/* An older version of that name, removed here while it was
		 * only on the PFS: the local one drains and replaces it. */
		log_printf(LOG_INFO, "drain: %s/%s on the PFS is an older version of that name than the local one: not its copy",
			   m->job, m->version);
		goto out_release;
	}
	if (v && (v->state == CKPT_ST_INCOMPLETE || v->state == CKPT_ST_DAMAGED)) {
		/* Recovery could not load its local copy (evicted before a
		 * crash, or damaged): the PFS copy is whole, serve it. */
		log_printf(LOG_NOTICE, "recovery: %s/%s (%s locally) is served from its PFS copy",
			   m->job, m->version, ckpt_state_name(v->state));
		if (catalog_adopt_remote(d->cat, v, m) < 0)
			goto out_release;
		v->drain = DR_DONE;
		remote_part(v, nparts, own, others);
		return;
	}
	if (v && v->nparts > 1) {
		v->publish = PUB_DONE;  /* no check at start (drain_open) */
		v->pfs_whole = 1;
	}
	if (v) {
		/* The incremental base lives only in the PFS manifest: without
		 * it, [drain] keep and rm could remove a base still needed. */
		if (v->state == CKPT_ST_SEALED && !version_remote(v))
			snprintf(v->base, sizeof(v->base), "%s", m->base);
		/* Drained before a crash that lost the local record of it. */
		if (v->state == CKPT_ST_SEALED && !version_remote(v) &&
		    v->level < CKPT_DRAINED) {
			v->drain = DR_DONE;
			v->pfs_retired = 0;
			version_reach(d, v, CKPT_COPY_PFS, 0, 0, NULL);
		}
		goto out_release;
	}
	if (catalog_add_remote(d->cat, m, &v) < 0)
		goto out_release;
	v->drain = DR_DONE;
	remote_part(v, nparts, own, others);
	return;
out_release:
	pfsman_release(m);
}

/* Scan the target after pfsmark_check()'s answer ret?  Not one without its
 * mark or not there; but one that carries no mark and cannot be given one
 * (read-only to this ckptd: a node that only restores) is read all the
 * same, as writes fail there anyway. */
static int scannable(int ret)
{
	return ret != -CKPT_ETARGET && ret != -ENOENT;
}

/* An error a later scan may not meet (the scan stops, and is retried). */
static int transient(int err)
{
	return err == -ENOMEM || err == -EIO || err == -EMFILE ||
	       err == -ENFILE || err == -EINTR || err == -EAGAIN;
}

/* In a cluster, a version in parts is this node's part of it
 * (pfs_scan_own_part()): announced as this node's (parts.c), the whole
 * version would say the other nodes' files and seal are this node's, and
 * their reads through it would ask for this node's part manifest with the
 * whole version's seal.  Not when the version is this node's alone, or
 * another node's (no part of this one's): those stay whole. */
static int own_part(struct drain *dr, struct pfsman *m)
{
	int ret = pfs_scan_own_part(dr->opts.target, dr->self, m);

	if (ret >= 0 || ret == -ENOENT)
		return 0;      /* -ENOENT: removed meanwhile */
	log_printf(LOG_WARNING, "drain: %s/%s on the PFS: reading this node's part: %s%s",
		   m->job, m->version, strerror(-ret),
		   transient(ret) ? " (scanned again later)"
				  : " (the whole version is listed)");
	if (!transient(ret))
		return 0;
	pfsman_release(m);
	return ret;
}

static int found_at_start(void *arg, struct pfsman *m)
{
	struct ckptd *d = arg;
	int ret = own_part(drain_of(d), m);

	if (ret == 0)
		found(d, m, 0);
	return ret;
}

void drain_scan(struct ckptd *d)
{
	struct drain *dr = drain_of(d);
	const char *target = d->conf->drain_target;
	int ret;

	ret = pfsmark_check(&dr->tmark);
	if (scannable(ret)) {
		catalog_load_begin(d->cat);
		ret = pfs_scan(target, found_at_start, d);
		catalog_load_end(d->cat);
	}
	dr->scanned = ret == 0;
	if (ret == -ENOENT || ret == -CKPT_ETARGET)
		log_printf(LOG_WARNING, "drain: the target %s %s: not scanned, so the versions only there are not listed, and [drain] keep removes nothing until it is",
			   target, ret == -ENOENT ? "does not exist (is the PFS mounted?)"
						  : "is not there or lacks its mark");
	else if (ret < 0)
		log_printf(LOG_WARNING, "drain: scanning %s: %s (PFS versions not listed, PFS retention off until a scan succeeds)",
			   target, strerror(-ret));
}

/* ---- later, on the pool ---------------------------------------------------- */

struct rescan_task {
	struct task t;            /* t.v: NULL */
	struct pfsman *found;     /* owned, each until applied; stripped, as
				   * the catalog keeps them */
	size_t n, cap;
	uint64_t removals;        /* the catalog's count at the start */
};

static int collect(void *arg, struct pfsman *m)
{
	struct rescan_task *rt = arg;
	struct pfsman *grown;
	int ret = own_part(rt->t.dr, m);

	if (ret < 0)
		return ret;
	if (rt->n == rt->cap) {
		rt->cap = rt->cap ? 2 * rt->cap : 64;
		grown = realloc(rt->found, rt->cap * sizeof(*grown));
		if (!grown) {
			pfsman_release(m);
			return -ENOMEM;
		}
		rt->found = grown;
	}
	pfsman_strip(m);
	rt->found[rt->n++] = *m;
	return 0;
}

static int rescan_run(struct pool_task *pt)
{
	struct rescan_task *rt = (struct rescan_task *)task_of(pt);
	struct drain *dr = rt->t.dr;
	int ret = pfsmark_check(&dr->tmark);

	if (!scannable(ret))
		return ret;
	ret = pfs_scan(dr->opts.target, collect, rt);
	if (ret < 0)
		return ret;
	/* Gone during the scan (which takes a missing target as empty)? */
	ret = pfsmark_check(&dr->tmark);
	return scannable(ret) ? 0 : ret;
}

static void rescan_free(struct rescan_task *rt, size_t from)
{
	size_t i;

	for (i = from; i < rt->n; i++)
		pfsman_release(&rt->found[i]);
	free(rt->found);
	free(rt);
}

static void rescan_done(struct pool_task *pt)
{
	struct rescan_task *rt = (struct rescan_task *)task_of(pt);
	struct drain *dr = rt->t.dr;
	struct ckptd *d = dr->d;
	size_t i;

	dr->rescanning = 0;
	/* A version removed meanwhile may be among those found: its copy
	 * there may be gone too, or going.  Scanned again at once. */
	if (pt->result == 0 && d->cat->removals != rt->removals) {
		dr->rescan_due_ms = 0;
		rescan_free(rt, 0);
		return;
	}
	if (pt->result < 0) {
		dr->rescan_due_ms = ckptd_now_ms() +
				    drain_backoff_ms(d, dr->rescan_tries++);
		rescan_free(rt, 0);
		return;
	}
	catalog_load_begin(d->cat);
	for (i = 0; i < rt->n; i++)
		found(d, &rt->found[i], 1);
	catalog_load_end(d->cat);
	dr->scanned = 1;
	log_printf(LOG_NOTICE, "drain: the target %s is scanned (%zu versions' manifests there): PFS retention is on",
		   dr->opts.target, rt->n);
	rescan_free(rt, rt->n);
	drain_tick(d);
}

static void rescan_drop(struct pool_task *pt)
{
	rescan_free((struct rescan_task *)task_of(pt), 0);
}

void drain_rescan_tick(struct ckptd *d, uint64_t now)
{
	struct drain *dr = drain_of(d);
	struct rescan_task *rt;

	if (dr->rescanning || now < dr->rescan_due_ms)
		return;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return;
	pool_task_init(&rt->t.pt, rescan_run, rescan_done, rescan_drop);
	rt->removals = d->cat->removals;
	dr->rescanning = 1;
	submit(dr, &rt->t);
}
