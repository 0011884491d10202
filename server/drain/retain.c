/*
 * retain.c - retention with a drain (drain_i.h): which local copies go
 * (evicted once drained, removed when they will never be drained) and which
 * PFS copies go ([drain] keep).  The PFS work runs on the daemon's worker
 * pool; the loop decides and records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bases.h"
#include "drain.h"
#include "drain_i.h"
#include "level.h"
#include "log.h"

/* A retention step whose PFS work runs on the pool: the version is marked
 * removing (no rm, no other retention, no level change) until ->done. */
struct retain_task {
	struct task t;
	const char *target;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char node[64];            /* a part of a version in parts: this
				   * node, else "" */
	struct pfsman m;          /* loaded on the worker */
	int loaded;
};

/* The local copy goes once the PFS has it: the version's manifest, or for
 * a part, its part manifest (DRAINED as soon as that is durable, maybe
 * before the version is published).  The version then holds just the
 * files of its part, as it did locally. */
static int evict_run(struct pool_task *pt)
{
	struct retain_task *rt = (struct retain_task *)task_of(pt);
	int ret;

	/* A target without its mark is rather a PFS not mounted than one that
	 * lost the copy. */
	ret = pfsmark_check(&rt->t.dr->tmark);
	if (ret < 0)
		return ret;
	ret = pfs_load_evictable(rt->target, rt->job, rt->version, rt->node,
				 &rt->m);
	rt->loaded = ret == 0;
	return ret;
}

static void retain_free(struct retain_task *rt)
{
	struct version *v = rt->t.v;

	v->removing = 0;
	if (rt->loaded)
		pfsman_release(&rt->m);
	version_put(rt->t.dr->d->cat, v);
	free(rt);
}

/* The PFS manifest is loaded: drop the local copy (its manifest on the pool,
 * catalog_evict_bg), if the version is still a local one. */
static void evict_done(struct pool_task *pt)
{
	struct retain_task *rt = (struct retain_task *)task_of(pt);
	struct ckptd *d = rt->t.dr->d;
	struct version *v = rt->t.v;

	v->removing = 0;
	if (v->removed || version_remote(v) || v->state != CKPT_ST_SEALED ||
	    v->level < CKPT_DRAINED)
		goto out_free;
	if (pt->result == -ENOENT && v->nparts <= 1) {
		/* Its PFS copy is gone (removed by hand, the target moved, or a
		 * [drain] keep removal killed before it recorded the loss):
		 * the local copy stays, and the version drains again. */
		log_printf(LOG_WARNING, "retention: %s/%s is recorded drained but %s has no copy of it: drained again before its local copy may go",
			   rt->job, rt->version, rt->target);
		drain_requeue(v);   /* drained before: never skipped now */
		version_reach(d, v, 0, CKPT_COPY_PFS, 0, NULL);
		goto out_free;
	}
	if (pt->result < 0) {
		log_printf(LOG_WARNING, "retention: %s/%s stays in the local store: its PFS copy: %s; tried again at the next pass",
			   rt->job, rt->version,
			   ckpt_strerror(pt->result));
		goto out_free;
	}
	if (catalog_evict_bg(d->cat, v, &rt->m) < 0)
		goto out_free;
	rt->loaded = 0;           /* v owns it now */
	log_printf(LOG_INFO, "retention: %s/%s evicted from the local store (drained; keep=%u)",
		   rt->job, rt->version, d->conf->keep);
	/* Its copies changed: the other nodes read it from the PFS now, not
	 * from this node (as rm's eviction, remove.c). */
	ckptd_version_changed(d, v);
out_free:
	retain_free(rt);
}

static void retain_drop(struct pool_task *pt)
{
	retain_free((struct retain_task *)task_of(pt));
}

/* Start a retention task on v: run on a worker, done on the loop.  0 or
 * -ENOMEM. */
static int retain_start(struct ckptd *d, struct version *v,
			int (*run)(struct pool_task *),
			void (*done)(struct pool_task *))
{
	struct retain_task *rt = calloc(1, sizeof(*rt));

	if (!rt)
		return -ENOMEM;
	pool_task_init(&rt->t.pt, run, done, retain_drop);
	rt->t.v = v;
	rt->target = d->conf->drain_target;
	snprintf(rt->job, sizeof(rt->job), "%s", v->job->name);
	snprintf(rt->version, sizeof(rt->version), "%s", v->name);
	if (v->nparts > 1 && d->node.name)
		snprintf(rt->node, sizeof(rt->node), "%s", d->node.name);
	version_get(v);
	v->removing = 1;
	submit(drain_of(d), &rt->t);
	return 0;
}

/* v will never be drained: superseded ([drain] every), or its PFS copy
 * retired by [drain] keep (not while it still has one). */
static int never_drained(const struct version *v)
{
	return v->level < CKPT_DRAINED &&
	       (v->drain == DR_SKIPPED || v->pfs_retired);
}

int drain_wait_check(const struct ckptd *d, const struct version *v,
		     uint32_t level)
{
	/* Without the drain: LOCAL, and PROTECTED with peers. */
	uint32_t reach = d->node.nodes ? CKPT_PROTECTED : CKPT_LOCAL;

	if (!drain_of(d) || v->state != CKPT_ST_SEALED || level <= reach ||
	    !never_drained(v))
		return 0;
	return -CKPT_ESKIPPED;
}

/* Remove v, which will never be drained and is not its job's last
 * version, from the catalog and the store (a failure is logged). */
static void remove_undrained(struct ckptd *d, struct version *v)
{
	int ret;

	log_printf(LOG_INFO, "retention: removing %s/%s (keep=%u; %s)",
		   v->job->name, v->name, d->conf->keep,
		   v->pfs_retired ? "its PFS copy was retired by [drain] keep"
				  : "superseded by a newer drained version ([drain] every)");
	version_get(v);             /* across the event */
	ret = catalog_remove_bg(d->cat, v);
	if (ret < 0)
		log_printf(LOG_WARNING, "retention: %s/%s: %s", v->job->name,
			   v->name, strerror(-ret));
	else
		ckptd_version_changed(d, v);    /* its waiters */
	version_put(d->cat, v);
}

/* With a drain: the newest `keep` sealed versions of j keep their local
 * copies, as retention without a drain keeps them (never the newest one).
 * An older one leaves the local store once DRAINED, becoming remote (its
 * PFS manifest is loaded on the pool, evict_done goes on); one that will
 * never be drained is removed once a newer version is DRAINED; one still
 * waiting for its drain stays. */
void local_retain(struct ckptd *d, struct job *j)
{
	uint32_t keep = d->conf->keep, newer = 0;
	uint64_t drained_seq = 0;   /* the newest DRAINED version's */
	struct list *pos, *tmp;

	list_for_each(pos, &j->versions) {
		struct version *v = list_entry(pos, struct version, link);

		if (v->state != CKPT_ST_SEALED)
			continue;
		newer++;
		if (v->level >= CKPT_DRAINED && v->seq > drained_seq)
			drained_seq = v->seq;
	}
	/* Sealed versions are in seq order, oldest first. */
	list_for_each_safe(pos, tmp, &j->versions) {
		struct version *v = list_entry(pos, struct version, link);

		if (v->state != CKPT_ST_SEALED)
			continue;
		newer--;                    /* sealed versions after v */
		if (newer < keep || newer == 0)
			return;             /* v is one of the newest keep */
		if (version_remote(v) || v->removing || version_level_busy(v))
			continue;
		if (never_drained(v)) {
			if (v->seq < drained_seq)  /* superseded */
				remove_undrained(d, v);
			continue;
		}
		if (v->level < CKPT_DRAINED)
			continue;   /* never evict what the PFS lacks */
		/* A part: not before its version is published (this node is
		 * its publisher, still waiting; else evict_run() asks). */
		if (v->nparts > 1 && d->node.name &&
		    v->publish != PUB_DONE)
			continue;
		retain_start(d, v, evict_run, evict_done);
	}
}

/* Worker: remove the version from the PFS (its manifest first).  A part
 * of a version not published (or no longer: another node removed it)
 * removes its own files and part manifest. */
static int unpublish_run(struct pool_task *pt)
{
	struct retain_task *rt = (struct retain_task *)task_of(pt);
	int ret = pfsmark_check(&rt->t.dr->tmark);

	if (ret < 0)
		return ret;
	ret = pfs_load(rt->target, rt->job, rt->version, &rt->m);
	if (ret == -ENOENT && rt->node[0]) {
		ret = pfs_remove_part(rt->target, rt->job, rt->version,
				      rt->node, PFS_PART_UNPUBLISHED);
		if (ret != -EEXIST)
			return ret;
		/* Published meanwhile: the version goes whole. */
		ret = pfs_load(rt->target, rt->job, rt->version, &rt->m);
		if (ret == -ENOENT)
			ret = -EAGAIN;  /* and gone again: the next pass */
	}
	rt->loaded = ret == 0;
	return ret < 0 ? ret : pfs_remove(rt->target, &rt->m);
}

/* The retirement is recorded (or could not be: logged, and the next start
 * drains v again): v may now be one local copy too many. */
static void retired(struct ckptd *d, struct version *v, int err)
{
	(void)err;
	if (!v->removed)
		local_retain(d, v->job);
}

/* The PFS copy is gone (or was not there): a remote version leaves the
 * catalog, a local one is LOCAL again. */
static void unpublish_done(struct pool_task *pt)
{
	struct retain_task *rt = (struct retain_task *)task_of(pt);
	struct ckptd *d = rt->t.dr->d;
	struct version *v = rt->t.v;

	v->removing = 0;
	/* Not removed (or not known to be): it stays as it is, and the next
	 * pass of retention tries again. */
	if (pt->result < 0 && pt->result != -ENOENT) {
		log_printf(LOG_WARNING, "retention: removing %s/%s from the PFS: %s; tried again later",
			   rt->job, rt->version, ckpt_strerror(pt->result));
		goto out_free;
	}
	log_printf(LOG_INFO, "retention: %s/%s removed from the PFS (drain keep=%u)",
		   rt->job, rt->version, d->conf->drain_keep);
	if (v->removed)
		goto out_free;
	if (version_remote(v)) {
		catalog_remove(d->cat, v);
		ckptd_version_changed(d, v);
	} else {
		/* Persisted with the loss, so that no start drains it again. */
		v->drain = DR_DONE;
		v->pfs_retired = 1;
		version_reach(d, v, 0, CKPT_COPY_PFS, 0, retired);
	}
out_free:
	retain_free(rt);
}

/* [drain] keep: the newest `keep` drained versions stay on the PFS.  The
 * removals run on the pool (unpublish_run). */
void pfs_retain(struct ckptd *d, struct job *j)
{
	uint32_t keep = d->conf->drain_keep, drained = 0;
	struct list *pos, *tmp;
	struct bases b = { 0 };  /* sorted once a version may go */

	/* Until a scan of the PFS succeeded, the bases of versions drained
	 * before this start are unknown: remove nothing. */
	if (!keep || !drain_of(d)->scanned)
		return;
	/* Versions already leaving (rm, retention) do not count. */
	list_for_each_safe(pos, tmp, &j->versions) {
		struct version *v = list_entry(pos, struct version, link);

		drained += v->level >= CKPT_DRAINED && !v->removing;
	}
	/* Only the drained versions older than the newest `keep` ones may go
	 * (oldest first; bases stay): never a newer one in place of a base. */
	list_for_each_safe(pos, tmp, &j->versions) {
		struct version *v = list_entry(pos, struct version, link);

		if (drained <= keep || drained <= 1)
			break;
		if (v->level < CKPT_DRAINED || v->removing)
			continue;
		drained--;      /* v is past the newest `keep` from here on */
		if (!b.name && bases_of(j, &b) < 0)
			return;     /* the next pass */
		if (bases_has(&b, v->name))
			continue;
		retain_start(d, v, unpublish_run, unpublish_done);
	}
	bases_release(&b);
}
