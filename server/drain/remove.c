/*
 * remove.c - REMOVE with its disk work on the worker pool (see remove.h).
 *
 * A removal used to run on the loop thread: a PFS manifest load or a PFS
 * removal (seconds on a busy Lustre), the removal-log append and its fsync,
 * the manifest unlink and the directory fsync, a quarantine directory's
 * unlinks.  Now remove_start() marks the version removing, takes a
 * reference on it, and hands a task carrying copies of
 * what the worker needs (names, paths, the open_id and seq) to the pool.
 * The worker does the disk work in the order crash safety wants: the removal
 * log record is durable before the manifest is unlinked (catalog_manifest_
 * drop), so a crash leaves the version whole, or gone with its open_id in
 * the log (recovery clears its segments).  Only ->done, on the loop, changes
 * the catalog, wakes the version's waiters and calls the caller's done().  The answer still
 * means the removal is durable.
 *
 * Shutdown: a task never run changed nothing; one run whose ->done never
 * came left the disk as the next start reads it (see above); ->drop only
 * releases what the task holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drain.h"
#include "journal.h"
#include "log.h"
#include "pfs.h"
#include "pfsmark.h"
#include "pfsnames.h"
#include "pool.h"
#include "recover.h"
#include "remove.h"

struct rm_task {
	struct pool_task t;
	enum rm_kind kind;
	/* loop only */
	struct ckptd *d;
	struct version *v;        /* holds a reference */
	remove_done_fn done;      /* the caller's answer, once */
	void *arg;
	/* for the worker: copies, or what the references keep still */
	struct catalog *cat;      /* its paths only, fixed at open */
	const char *target;       /* [drain] target */
	struct pfsmark *mark;     /* its mark, or NULL without a drain */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	const struct pfsman *pfs; /* RM_PFS: v->pfs, unchanged while v is
				   * removing */
	int drop;                 /* drop the manifest of (open_id, seq) */
	uint64_t open_id, vseq;
	char journal[CONF_PATH_MAX + 64];  /* "" if none */
	char *qdir;               /* quarantine to discard, owned, or NULL */
	char node[64];            /* a part of a version in parts: this
				   * node (its PFS copy is part.<node>) */
	/* from the worker */
	struct pfsman m;          /* RM_EVICT (and RM_PART found published):
				   * the PFS manifest loaded */
	int loaded;
};

int remove_needs_disk(const struct ckptd *d, const struct version *v)
{
	return (v->copies & CKPT_COPY_LOCAL) || v->qdir ||
	       (drain_enabled(d) && v->seq && !version_remote(v));
}

/* ---- on the worker ------------------------------------------------------ */

static int rm_local_run(struct rm_task *rt)
{
	int ret;

	/* The journal of a drain it never finished goes with it. */
	if (rt->journal[0])
		unlink(rt->journal);
	if (rt->drop) {
		ret = catalog_manifest_drop(rt->cat, rt->open_id, rt->vseq);
		if (ret < 0)
			return ret;
	}
	if (rt->qdir)
		recover_discard(rt->cat, rt->qdir);
	/* A part never drained may have left its name list on the PFS. */
	if (rt->node[0] && rt->target)
		(void)pfs_names_drop(rt->target, rt->job, rt->version,
				     rt->node);
	return 0;
}

static int rm_run(struct pool_task *t)
{
	struct rm_task *rt = (struct rm_task *)t;
	int ret;

	/* Nothing is removed from, or taken as gone from, a target without
	 * its mark (pfsmark.h). */
	if (rt->mark && (rt->kind == RM_EVICT || rt->kind == RM_PART ||
			 rt->kind == RM_PFS)) {
		ret = pfsmark_check(rt->mark);
		if (ret < 0)
			return ret;
	}
	switch (rt->kind) {
	case RM_EVICT:
	case RM_PART:
		ret = pfs_load_evictable(rt->target, rt->job, rt->version,
					 rt->node, &rt->m);
		if (ret == -CKPT_EUNPUBLISHED && rt->kind == RM_PART) {
			ret = pfs_remove_part(rt->target, rt->job, rt->version,
					      rt->node, PFS_PART_UNPUBLISHED);
			if (ret != -EEXIST)
				return ret < 0 ? ret : rm_local_run(rt);
			/* Published meanwhile: evicted instead. */
			ret = pfs_load_evictable(rt->target, rt->job,
						 rt->version, rt->node, &rt->m);
		}
		if (ret < 0)
			return ret;
		rt->kind = RM_EVICT;
		rt->loaded = 1;
		return catalog_manifest_drop(rt->cat, rt->open_id, rt->vseq);
	case RM_QUARANTINE:
		recover_discard(rt->cat, rt->qdir);
		return 0;
	case RM_PFS:
		/* A part: the version is unpublished, this part goes. */
		if (rt->node[0])
			return pfs_remove_part(rt->target, rt->job, rt->version,
					       rt->node, PFS_PART_PUBLISHED);
		return pfs_remove(rt->target, rt->pfs);
	case RM_LOCAL:
		return rm_local_run(rt);
	}
	return -EINVAL;
}

/* ---- back on the loop --------------------------------------------------- */

static void rm_free(struct rm_task *rt)
{
	if (rt->loaded)
		pfsman_release(&rt->m);
	version_put(rt->d->cat, rt->v);
	free(rt->qdir);
	free(rt);
}

/* The worker's part succeeded: apply it to the catalog.  0 or -errno. */
static int rm_apply(struct rm_task *rt)
{
	struct version *v = rt->v;
	int ret;

	switch (rt->kind) {
	case RM_EVICT:
		ret = catalog_evict_dropped(rt->d->cat, v, &rt->m);
		if (ret < 0) {
			log_printf(LOG_ERR, "version %s/%s: local manifest removed but the eviction failed: %s; the next start serves it from the PFS",
				   rt->job, rt->version, strerror(-ret));
			return ret;
		}
		rt->loaded = 0;     /* v owns the manifest now */
		log_printf(LOG_INFO, "version %s/%s: local copy removed; still on the PFS",
			   rt->job, rt->version);
		/* Its copies changed: the other nodes read it from the PFS
		 * now, not from this node. */
		ckptd_version_changed(rt->d, v);
		return 0;
	case RM_QUARANTINE:
		free(v->qdir);
		v->qdir = NULL;
		v->reason[0] = 0;
		version_set_copies(v, v->copies & ~CKPT_COPY_QUARANTINE);
		return 0;
	case RM_PFS:
	case RM_LOCAL:
	case RM_PART:
		v->error = -CKPT_ENOVERSION;
		ret = catalog_remove_dropped(rt->d->cat, v);
		/* After the unlisting, so that a WAIT hears it is gone. */
		ckptd_version_changed(rt->d, v);
		/* A version left below DRAINED may be the newest now. */
		drain_newest_due(rt->d, catalog_job(rt->d->cat, rt->job));
		drain_tick(rt->d);
		return ret;
	}
	return -EINVAL;
}

static void rm_done(struct pool_task *t)
{
	struct rm_task *rt = (struct rm_task *)t;
	int ret = t->result;

	rt->v->removing = 0;
	/* The next rm removes the part from the PFS too (RM_PART). */
	rt->v->rm_asked = ret == -CKPT_EUNPUBLISHED;
	if (ret < 0)
		log_printf(ret == -CKPT_EUNPUBLISHED ? LOG_NOTICE : LOG_WARNING,
			   "version %s/%s: not removed: %s",
			   rt->job, rt->version, ckpt_strerror(ret));
	else
		ret = rm_apply(rt);
	rt->done(rt->arg, ret);
	rm_free(rt);
}

/* Shutting down: the next start reads what the disk says. */
static void rm_drop(struct pool_task *t)
{
	struct rm_task *rt = (struct rm_task *)t;

	rt->v->removing = 0;
	rt->done(rt->arg, REMOVE_DROPPED);
	rm_free(rt);
}

/* Fill what the worker needs for kind (copies of v's names and ids). */
static int rm_prepare(struct rm_task *rt, struct version *v)
{
	const struct ckptd *d = rt->d;

	snprintf(rt->job, sizeof(rt->job), "%s", v->job->name);
	snprintf(rt->version, sizeof(rt->version), "%s", v->name);
	rt->target = d->conf->drain_target;
	rt->mark = drain_mark(rt->d);
	rt->open_id = v->open_id;
	rt->vseq = v->seq;
	rt->pfs = v->pfs;
	if (v->nparts > 1 && d->node.name)
		snprintf(rt->node, sizeof(rt->node), "%s", d->node.name);
	if (rt->kind == RM_QUARANTINE ||
	    (rt->kind == RM_LOCAL && v->qdir)) {
		rt->qdir = strdup(v->qdir);
		if (!rt->qdir)
			return -ENOMEM;
	}
	if (rt->kind != RM_LOCAL && rt->kind != RM_PART)
		return 0;
	rt->drop = (v->copies & CKPT_COPY_LOCAL) != 0;
	if (drain_enabled(d) && v->seq && !version_remote(v) &&
	    journal_path(rt->journal, sizeof(rt->journal), d->conf->store,
			 v->seq) < 0)
		rt->journal[0] = 0;
	return 0;
}

int remove_start(struct ckptd *d, struct version *v, enum rm_kind kind,
		 remove_done_fn done, void *arg)
{
	struct rm_task *rt = calloc(1, sizeof(*rt));
	int ret;

	if (!rt)
		return -ENOMEM;
	rt->d = d;
	rt->kind = kind;
	ret = rm_prepare(rt, v);
	if (ret < 0)
		goto out_free;
	pool_task_init(&rt->t, rm_run, rm_done, rm_drop);
	rt->cat = d->cat;
	rt->v = v;
	rt->done = done;
	rt->arg = arg;
	version_get(v);
	v->removing = 1;
	/* Urgent: a client waits, and the work is short next to a copy. */
	pool_submit(d->pool, &rt->t, 1);
	return 0;

out_free:
	free(rt->qdir);
	free(rt);
	return ret;
}
