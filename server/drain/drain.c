/*
 * drain.c - the loop side of the drain (see drain.h): what to copy and when,
 * the threads that copy, and what their results mean for levels, retention
 * and readers.
 *
 * A task is made on the loop thread and run on the daemon's worker pool
 * (pool.h), which hands it back to the loop to finish.  At most `[drain]
 * threads` copies run at once; the pool has threads to spare for other
 * work.  Only the loop touches the catalog, references and connections; a
 * copy task carries a snapshot of the version (pfs.h) and a reference that
 * keeps its segments from being recycled meanwhile.  Level changes (DRAINED,
 * and back to LOCAL) go through version_reach() (level.h).
 *
 * A version in parts (nparts > 1, in a cluster) is drained by each node as
 * its own part: the copy writes part.<node> instead of the manifest, and
 * this node's part is DRAINED once that is durable.  Publishing the whole
 * version (pfs_publish(), run on the pool like a copy) is a separate step
 * with its own schedule (enum drain_publish): right after the part, then
 * with the copies' backoff while parts are missing and this node may be
 * the publisher, and again at start-up for a part drained before a crash
 * whose version the PFS scan did not find published.
 *
 * Retention with a drain (which local copies and which PFS copies go) is
 * retain.c's; the state both share is in drain_i.h.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "ctx.h"
#include "drain.h"
#include "drain_i.h"
#include "journal.h"
#include "level.h"
#include "log.h"
#include "pfs.h"
#include "pfscache.h"
#include "pool.h"

int drain_enabled(const struct ckptd *d)
{
	return d->drain != NULL;
}

struct pfscache *drain_manifests(const struct ckptd *d)
{
	return d->drain ? d->drain->manifests : NULL;
}

struct pfsmark *drain_mark(struct ckptd *d)
{
	return d->drain ? &d->drain->tmark : NULL;
}

/* ---- copying ------------------------------------------------------------ */

struct copy_task {
	struct task t;
	struct pfs_job *job;
};


static int copy_run(struct pool_task *pt)
{
	struct task *t = task_of(pt);
	int ret = pfsmark_check(&t->dr->tmark);

	return ret < 0 ? ret : pfs_copy(&t->dr->opts, ((struct copy_task *)t)->job);
}

/* Shutting down: the copy resumes from its journal at the next start. */
static void copy_drop(struct pool_task *pt)
{
	struct copy_task *ct = (struct copy_task *)task_of(pt);

	pfs_job_free(ct->job);
	free(ct);
}

/* The newest version of v's job drained (or draining), for incremental. */
static const char *base_of(const struct version *v)
{
	const struct version *best = NULL;
	struct list *pos;

	for (pos = v->job->versions.next; pos != &v->job->versions;
	     pos = pos->next) {
		const struct version *o = list_entry(pos, struct version, link);

		/* Not one whose PFS copy is being removed (remove.h). */
		if (o != v && o->seq < v->seq && o->level >= CKPT_DRAINED &&
		    !o->removing && (!best || o->seq > best->seq))
			best = o;
	}
	return best ? best->name : "";
}

/* Snapshot v (live files, records, segment fds) for a thread. */
static struct pfs_job *snapshot(struct ckptd *d, struct version *v)
{
	struct pfs_job *j = calloc(1, sizeof(*j));
	struct manifest m;
	uint32_t i;

	if (!j)
		return NULL;
	snprintf(j->job, sizeof(j->job), "%s", v->job->name);
	snprintf(j->version, sizeof(j->version), "%s", v->name);
	if (d->conf->drain_incremental)
		snprintf(j->base, sizeof(j->base), "%s", base_of(v));
	j->uid = v->job->uid;
	j->seq = v->seq;
	j->sealed_ns = v->sealed_ns;
	if (journal_path(j->journal, sizeof(j->journal), d->conf->store,
			 v->seq) < 0)
		goto out_free;
	j->nparts = v->nparts ? v->nparts : 1;
	if (d->node.name)
		snprintf(j->writer, sizeof(j->writer), "%s",
			 d->node.name);
	if (j->nparts > 1)
		snprintf(j->node, sizeof(j->node), "%s", j->writer);
	j->fds = calloc(d->segs->n + 1, sizeof(*j->fds));
	if (!j->fds || version_manifest(v, v->level, &m) < 0)
		goto out_free;
	/* The view borrows v's paths and xattrs: the job keeps copies. */
	j->files = m.files;
	j->recs = m.recs;
	j->nrecs = m.nrecs;
	for (i = 0; i < m.nfiles; i++) {
		struct man_file *f = &j->files[i];
		const uint8_t *x = f->xattr;

		f->path = strdup(f->path);
		f->xattr = NULL;
		j->nfiles = i + 1;
		if (!f->path || (f->xlen && !(f->xattr = malloc(f->xlen))))
			goto out_free;
		if (f->xlen)
			memcpy(f->xattr, x, f->xlen);
	}
	for (i = 0; i < d->segs->n; i++)
		j->fds[i] = d->segs->v[i].fd;
	j->nfds = d->segs->n;
	snprintf(j->segdir, sizeof(j->segdir), "%s", d->segs->dir);
	return j;
out_free:
	pfs_job_free(j);
	return NULL;
}

/* Is v past [drain] deadline (seconds since its seal)? */
static int late(const struct ckptd *d, const struct version *v)
{
	struct timespec ts;
	uint64_t now_ns;

	if (!d->conf->drain_deadline || !v->sealed_ns)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	now_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	return now_ns > v->sealed_ns &&
	       (now_ns - v->sealed_ns) / 1000000000ull >= d->conf->drain_deadline;
}

/* The DRAINED level is recorded (or could not be: the PFS copy is complete
 * all the same, and the next start finds it there). */
static void drained(struct ckptd *d, struct version *v, int err)
{
	if (v->removed)
		return;
	pfs_retain(d, v->job);
	if (!v->removed)
		local_retain(d, v->job);
}

int drain_published(const struct ckptd *d, const struct version *v)
{
	return v->level >= CKPT_DRAINED &&
	       (v->nparts <= 1 || !drain_of(d) || !d->node.name ||
		version_remote(v) || v->publish == PUB_DONE);
}

uint32_t drain_wait_level(const struct ckptd *d, const struct version *v)
{
	if (v->level < CKPT_DRAINED || drain_published(d, v))
		return v->level;
	return copies_level(v->copies & ~CKPT_COPY_PFS);
}

void drain_part_news(struct ckptd *d, const char *job, const char *version,
		     uint32_t uid)
{
	struct version *v;

	if (!drain_of(d))
		return;
	v = catalog_version(d->cat, job, version);
	if (v && v->job && v->job->uid == uid && v->publish == PUB_WAIT)
		v->publish_due_ms = 0;
}

void drain_level_settled(struct ckptd *d, struct version *v)
{
	if (!drain_of(d) || d->stopping || !v->job || v->removed ||
	    v->removing || v->state != CKPT_ST_SEALED ||
	    version_remote(v) || version_level_busy(v) ||
	    v->level < CKPT_DRAINED)
		return;
	local_retain(d, v->job);
}

/* ---- publishing a version in parts ---------------------------------------- */

/* The copies' backoff: 1 s doubling up to [drain] retry_max. */
uint64_t drain_backoff_ms(const struct ckptd *d, uint32_t tries)
{
	uint64_t wait = 1000ull << (tries < 16 ? tries : 16);

	if (wait > d->conf->drain_retry_max * 1000ull)
		wait = d->conf->drain_retry_max * 1000ull;
	return wait;
}

/* The milliseconds from now to due_ms (0 if past), at most UINT32_MAX. */
static uint32_t ms_until(uint64_t due_ms, uint64_t now)
{
	if (due_ms <= now)
		return 0;
	return due_ms - now > UINT32_MAX ? UINT32_MAX : (uint32_t)(due_ms - now);
}

void drain_info(const struct ckptd *d, const struct version *v,
		struct ckpt_version_info *out)
{
	uint64_t now = ckptd_now_ms();

	out->drain = CKPT_DS_NONE;
	out->drain_error = 0;
	out->drain_tries = 0;
	out->drain_retry_ms = 0;
	if (!drain_of(d))
		return;
	switch (v->drain) {
	case DR_QUEUED:
		out->drain = v->drain_err ? CKPT_DS_RETRY : CKPT_DS_QUEUED;
		out->drain_error = v->drain_err;
		out->drain_tries = v->drain_tries;
		out->drain_retry_ms = ms_until(v->drain_due_ms, now);
		break;
	case DR_RUNNING:
		out->drain = CKPT_DS_RUNNING;
		out->drain_error = v->drain_err;
		out->drain_tries = v->drain_tries;
		break;
	case DR_SKIPPED:
		out->drain = CKPT_DS_SKIPPED;
		break;
	case DR_DONE:
		if (v->pfs_retired) {
			out->drain = CKPT_DS_RETIRED;
		} else if (v->publish == PUB_WAIT || v->publish == PUB_RUNNING) {
			out->drain = CKPT_DS_PUBLISH;
			out->drain_error = v->publish_err;
			out->drain_tries = v->publish_tries;
			if (v->publish == PUB_WAIT)
				out->drain_retry_ms = ms_until(v->publish_due_ms,
							       now);
		} else {
			out->drain = CKPT_DS_DONE;
		}
		break;
	default:
		if (v->level >= CKPT_DRAINED)
			out->drain = CKPT_DS_DONE;
		break;
	}
}

/* What pfs_publish() said for v (this node's part is drained): 0 or 2,
 * the version is published (by this node now, or found so); 1, it is
 * another node's to publish, and this one looks for its manifest until it
 * is there. */
static void published(struct ckptd *d, struct version *v, int res)
{
	uint64_t wait;

	v->publish_err = res < 0 && res != -EAGAIN ? res : 0;
	if (res == 0 || res == 2) {
		v->publish = PUB_DONE;
		log_printf(LOG_INFO, res == 0 ? "drain: %s/%s published on the PFS (%u parts)"
					      : "drain: %s/%s: the version of its %u parts is on the PFS",
			   v->job->name, v->name, v->nparts);
		ckptd_version_changed(d, v);   /* waiters, retention */
		return;
	}
	wait = drain_backoff_ms(d, v->publish_tries);
	if (res == 1 && !v->publish_tries)
		log_printf(LOG_INFO, "drain: %s/%s: part drained; another node publishes the version once its %u parts are on the PFS",
			   v->job->name, v->name, v->nparts);
	else if (res == -EAGAIN && !v->publish_tries)
		log_printf(LOG_INFO, "drain: %s/%s: part drained; the version is published once its %u parts are on the PFS",
			   v->job->name, v->name, v->nparts);
	else if (res == -EEXIST)
		log_printf(LOG_ERR, "drain: %s/%s: two parts on the PFS name the same path; not published (retry %u in %llu s)",
			   v->job->name, v->name, v->publish_tries + 1,
			   (unsigned long long)(wait / 1000));
	else if (res == -ESTALE)
		log_printf(LOG_WARNING, "drain: %s/%s: a part was removed from the PFS while the version was being published: not published (retry %u in %llu s)",
			   v->job->name, v->name, v->publish_tries + 1,
			   (unsigned long long)(wait / 1000));
	else if (res != -EAGAIN && res != 1)
		log_printf(LOG_ERR, "drain: %s/%s: publishing: %s (retry %u in %llu s)",
			   v->job->name, v->name, ckpt_strerror(res),
			   v->publish_tries + 1, (unsigned long long)(wait / 1000));
	v->publish_tries++;
	v->publish = PUB_WAIT;
	v->publish_due_ms = ckptd_now_ms() + wait;
}

struct publish_task {
	struct task t;
	const char *target;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char node[64];
	uint32_t uid, nparts;
};

static int publish_run(struct pool_task *pt)
{
	struct publish_task *p = (struct publish_task *)task_of(pt);
	int ret = pfsmark_check(&p->t.dr->tmark);

	return ret < 0 ? ret : pfs_publish(p->target, p->job, p->version,
					   p->uid, p->nparts, p->node);
}

static void publish_done(struct pool_task *pt)
{
	struct publish_task *p = (struct publish_task *)task_of(pt);
	struct ckptd *d = p->t.dr->d;
	struct version *v = p->t.v;

	if (!v->removed && v->publish == PUB_RUNNING)
		published(d, v, pt->result);
	version_put(d->cat, v);
	free(p);
}

/* Shutting down: the next start checks again (drain_open). */
static void publish_drop(struct pool_task *pt)
{
	struct publish_task *p = (struct publish_task *)task_of(pt);

	version_put(p->t.dr->d->cat, p->t.v);
	free(p);
}

static int start_publish(struct ckptd *d, struct version *v)
{
	struct publish_task *p;
	const char *self = d->node.name;

	if (!self)
		return -ENOTSUP;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pool_task_init(&p->t.pt, publish_run, publish_done, publish_drop);
	p->t.v = v;
	p->target = d->conf->drain_target;
	snprintf(p->job, sizeof(p->job), "%s", v->job->name);
	snprintf(p->version, sizeof(p->version), "%s", v->name);
	snprintf(p->node, sizeof(p->node), "%s", self);
	p->uid = v->job->uid;
	p->nparts = v->nparts;
	version_get(v);
	v->publish = PUB_RUNNING;
	submit(drain_of(d), &p->t);
	return 0;
}

/* Start the publish checks that are due. */
static void publish_tick(struct ckptd *d, uint64_t now)
{
	struct list *jp, *vp;

	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->publish != PUB_WAIT || v->publish_due_ms > now ||
			    v->removing)
				continue;
			if (start_publish(d, v) < 0)
				v->publish_due_ms = now + 1000;
		}
	}
}

static void copy_done(struct pool_task *pt)
{
	struct task *t = task_of(pt);
	struct copy_task *ct = (struct copy_task *)t;
	struct drain *dr = t->dr;
	struct ckptd *d = dr->d;
	struct version *v = t->v;
	uint64_t wait;

	dr->copying--;
	dr->bytes += ct->job->bytes_out;
	if (v->removed) {
		/* Removed while copying: the copy is an orphan on the PFS. */
		goto out_free;
	}
	if (pt->result < 0) {
		dr->errors++;
		dr->last_err = pt->result;
		snprintf(dr->last_path, sizeof(dr->last_path), "%.255s",
			 ct->job->failed_path);
		v->drain_err = pt->result;
		wait = drain_backoff_ms(d, v->drain_tries);
		v->drain_tries++;
		v->drain = DR_QUEUED;
		v->drain_due_ms = ckptd_now_ms() + wait;
		if (pt->result == -EEXIST && ct->job->clash_node[0])
			log_printf(LOG_ERR, "drain: %s/%s: %s clashes with node %s's part of this version (two parts may not name one path, nor put a file where the other has a directory): this part is not drained (retry %u in %llu s)",
				   v->job->name, v->name, ct->job->failed_path,
				   ct->job->clash_node, v->drain_tries,
				   (unsigned long long)(wait / 1000));
		else
			log_printf(LOG_ERR, "drain: %s/%s: %s%s%s%s%s; retry %u in %llu s",
				   v->job->name, v->name,
				   ckpt_strerror(pt->result),
				   ct->job->failed_path[0] ? " at " : "",
				   ct->job->failed_path,
				   ct->job->clash_node[0] ? " in the name list of node " : "",
				   ct->job->clash_node, v->drain_tries,
				   (unsigned long long)(wait / 1000));
		goto out_free;
	}
	if (late(d, v))
		log_printf(LOG_WARNING, "drain: %s/%s drained after its deadline of %u s",
			   v->job->name, v->name, d->conf->drain_deadline);
	v->drain = DR_DONE;
	v->drain_err = 0;
	v->drain_tries = 0;
	snprintf(v->base, sizeof(v->base), "%s", ct->job->base);
	log_printf(LOG_INFO, "drain: %s/%s drained (%llu bytes, %llu written, %llu of them direct, %llu referenced)",
		   v->job->name, v->name,
		   (unsigned long long)ct->job->bytes_in,
		   (unsigned long long)ct->job->bytes_out,
		   (unsigned long long)ct->job->bytes_direct,
		   (unsigned long long)ct->job->bytes_ref);
	version_reach(d, v, CKPT_COPY_PFS, 0, 0, drained);
	if (ct->job->node[0]) {
		v->publish_tries = 0;
		published(d, v, ct->job->publish);
	}
out_free:
	pfs_job_free(ct->job);
	version_put(d->cat, v);
	free(ct);
	drain_tick(d);
}

static int start_copy(struct ckptd *d, struct version *v)
{
	struct copy_task *ct;

	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return -ENOMEM;
	ct->job = snapshot(d, v);
	if (!ct->job) {
		free(ct);
		return -ENOMEM;
	}
	pool_task_init(&ct->t.pt, copy_run, copy_done, copy_drop);
	ct->t.v = v;
	version_get(v);
	v->drain = DR_RUNNING;
	drain_of(d)->copying++;
	submit(drain_of(d), &ct->t);
	return 0;
}

int drain_newest(const struct version *v)
{
	struct list *pos;

	for (pos = v->job->versions.next; pos != &v->job->versions;
	     pos = pos->next) {
		const struct version *o = list_entry(pos, struct version, link);

		if (o->state == CKPT_ST_SEALED && o->seq > v->seq)
			return 0;
	}
	return 1;
}

/* Priority: --now, then versions past their deadline, then the rest. */
static int rank(const struct ckptd *d, const struct version *v, uint64_t now)
{
	(void)now;
	return v->drain_now ? 2 : late(d, v);
}

/* The next version to copy: by rank, then the oldest committed. */
static struct version *next_copy(struct ckptd *d, uint64_t now)
{
	uint32_t every = d->conf->drain_every;
	struct version *best = NULL;
	struct list *jp, *vp;

	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->drain != DR_QUEUED || v->drain_due_ms > now ||
			    v->removing)
				continue;
			/* Never a version in parts: its nodes would not skip
			 * it alike (their ordinals and their view of the
			 * newest differ), and a version some parts of which
			 * are skipped is never published, while the skipping
			 * nodes remove their parts. */
			if (!v->drain_now && every > 1 && v->nparts <= 1 &&
			    v->ordinal % every && !drain_newest(v)) {
				v->drain = DR_SKIPPED;
				log_printf(LOG_INFO, "drain: %s/%s skipped (every=%u, superseded)",
					   j->name, v->name, every);
				ckptd_version_changed(d, v); /* its waiters */
				continue;
			}
			if (!best || rank(d, v, now) > rank(d, best, now) ||
			    (rank(d, v, now) == rank(d, best, now) &&
			     v->seq < best->seq))
				best = v;
		}
	}
	return best;
}

void drain_newest_due(struct ckptd *d, struct job *j)
{
	struct version *v = NULL;
	struct list *pos;

	if (!drain_of(d) || !j)
		return;
	list_for_each(pos, &j->versions) {
		struct version *o = list_entry(pos, struct version, link);

		if (o->state == CKPT_ST_SEALED && (!v || o->seq > v->seq))
			v = o;
	}
	if (!v || version_remote(v) || v->level >= CKPT_DRAINED ||
	    v->removing ||
	    !(v->drain == DR_SKIPPED || (v->drain == DR_DONE && v->pfs_retired)))
		return;
	log_printf(LOG_NOTICE, "drain: %s/%s is the newest version of its job now (%s): drained after all",
		   j->name, v->name,
		   v->pfs_retired ? "its PFS copy had been retired" : "it had been skipped");
	drain_requeue(v);
}

void drain_requeue(struct version *v)
{
	v->pfs_retired = 0;
	v->drain = DR_QUEUED;
	v->drain_now = 1;
	v->drain_due_ms = 0;
}

void drain_tick(struct ckptd *d)
{
	struct drain *dr = drain_of(d);
	uint64_t now = ckptd_now_ms();
	struct version *v;

	if (!dr)
		return;
	dr->rate = (dr->rate * 3 + (dr->bytes - dr->mark) * 4) / 4;
	dr->mark = dr->bytes;
	/* Paused: copies running wait between chunks, and none starts. */
	while (!d->stopping && !dr->paused && dr->copying < dr->nthr &&
	       (v = next_copy(d, now))) {
		if (start_copy(d, v) < 0) {
			v->drain_due_ms = now + 1000;
			break;
		}
	}
	if (!d->stopping && !dr->paused)
		publish_tick(d, now);
	if (!d->stopping && !dr->scanned)
		drain_rescan_tick(d, now);
}

void drain_sealed(struct ckptd *d, struct version *v)
{
	v->drain = DR_QUEUED;
	v->drain_due_ms = 0;
	local_retain(d, v->job);
	drain_tick(d);
}

/* ---- control and status ------------------------------------------------- */

int drain_pause(struct ckptd *d, int paused)
{
	struct drain *dr = drain_of(d);

	if (!dr)
		return -ENOTSUP;
	dr->paused = paused;
	drain_tick(d);
	return 0;
}

int drain_now(struct ckptd *d, struct version *v)
{
	if (!drain_of(d))
		return -ENOTSUP;
	if (v->state != CKPT_ST_SEALED)
		return -CKPT_ENOVERSION;
	if (v->drain == DR_RUNNING || v->level >= CKPT_DRAINED ||
	    (v->drain == DR_DONE && !v->pfs_retired))
		return 0;
	/* Asked for: also one whose PFS copy [drain] keep retired (which may
	 * retire it again once drained, if newer ones are kept). */
	drain_requeue(v);
	drain_tick(d);
	return 0;
}

int drain_adopt(struct ckptd *d)
{
	struct drain *dr = drain_of(d);
	struct list *jp, *vp;

	if (!dr)
		return -ENOTSUP;
	pfsmark_adopt(&dr->tmark);
	dr->rescan_due_ms = 0;
	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->drain == DR_QUEUED && v->drain_err == -CKPT_ETARGET)
				v->drain_due_ms = 0;
		}
	}
	drain_tick(d);
	return 0;
}

void drain_status(const struct ckptd *d, struct ckpt_status *s)
{
	const struct drain *dr = drain_of(d);
	struct list *jp, *vp;

	if (!dr)
		return;
	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next)
			s->drain_queued += list_entry(vp, struct version,
						      link)->drain == DR_QUEUED;
	}
	s->drain_running = dr->copying;
	s->drain_paused = dr->paused;
	s->drain_errors = dr->errors;
	s->drain_bytes = dr->bytes;
	s->drain_rate = dr->rate;
	s->drain_bandwidth = d->conf->drain_bandwidth;
	s->drain_last_error = dr->last_err;
	snprintf(s->drain_target, sizeof(s->drain_target), "%.255s",
		 d->conf->drain_target);
	snprintf(s->drain_last_path, sizeof(s->drain_last_path), "%s",
		 dr->last_path);
}

/* ---- start-up ----------------------------------------------------------- */

/* Whether the catalog has a version sealed as seq. */
static int catalog_has_seq(const struct catalog *cat, uint64_t seq)
{
	const struct list *jp, *vp;

	for (jp = cat->jobs.next; jp != &cat->jobs; jp = jp->next) {
		const struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next)
			if (list_entry(vp, struct version, link)->seq == seq)
				return 1;
	}
	return 0;
}

/* Remove the journals (dir, <store>/drain) of versions the store no longer
 * has: a removal killed before it unlinked one, or a version removed while
 * the drain was off.  A journal of a version still here stays (for a part
 * it marks a copy that went on, pfsnames.h). */
static void journals_sweep(const struct catalog *cat, const char *dir)
{
	char path[CONF_PATH_MAX + 64];
	unsigned long long seq;
	struct dirent *e;
	int n;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return;
	while ((e = readdir(dp))) {
		n = 0;
		if (sscanf(e->d_name, "%16llx.journal%n", &seq, &n) != 1 ||
		    n != 24 || e->d_name[n] || catalog_has_seq(cat, seq))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
		    (int)sizeof(path) && unlink(path) == 0)
			log_printf(LOG_INFO, "drain: removed the journal %s of a version no longer here",
				   e->d_name);
	}
	closedir(dp);
}

int drain_open(struct ckptd *d)
{
	const struct conf *conf = d->conf;
	struct list *jp, *vp;
	struct drain *dr;
	char dir[CONF_PATH_MAX + 16];
	int ret, drained;

	if (!conf->drain_target[0])
		return 0;
	dr = calloc(1, sizeof(*dr));
	if (!dr)
		return -ENOMEM;
	dr->d = d;
	ckptd_conf_self(conf, dr->self, sizeof(dr->self));
	dr->nthr = conf->drain_threads ? conf->drain_threads : 1;
	dr->spare = (int)dr->nthr;
	bwlimit_init(&dr->bw, conf->drain_bandwidth, 0);
	dr->opts = (struct pfs_opts){
		.target = conf->drain_target, .chunk = conf->drain_chunk,
		.compress = conf->drain_compress,
		.shuffle = (int)conf->drain_shuffle,
		.incremental = conf->drain_incremental, .bw = &dr->bw,
		.threads = dr->nthr, .spare = &dr->spare,
		/* Several threads overlap reads and writes themselves:
		 * read past the page cache (pfs.h). */
		.direct = dr->nthr > 1,
		.pause = &dr->paused, .stop = &dr->cancel,
	};
	dr->manifests = pfscache_new(conf->drain_target,
				     conf->drain_manifest_cache);
	if (!dr->manifests) {
		ret = -ENOMEM;
		goto out_free;
	}
	snprintf(dir, sizeof(dir), "%s/drain", conf->store);
	/* Drained before: a drain ran on this store (its versions may all be
	 * evicted since), or a version is recorded DRAINED. */
	drained = access(dir, F_OK) == 0 || drain_store_drained(d->cat);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		goto out_free;
	}
	ret = pfsmark_open(&dr->tmark, conf->drain_target, dir, drained);
	if (ret < 0)
		goto out_free;
	dr->tmark.mount = conf->drain_mount[0] ? conf->drain_mount : NULL;
	d->drain = dr;
	drain_scan(d);
	/* Resume: every sealed local version not yet drained.  Ordinals
	 * ([drain] every) follow the commit order, which the list keeps. */
	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		j->nsealed = 0;
		for (vp = j->versions.next; vp != &j->versions; vp = vp->next) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->state != CKPT_ST_SEALED)
				continue;
			v->ordinal = ++j->nsealed;
			/* found() recorded it DRAINED (the level follows
			 * once its manifest is written) */
			if (v->level < CKPT_DRAINED && v->drain != DR_DONE)
				v->drain = v->pfs_retired ? DR_DONE : DR_QUEUED;
			/* A part drained before a crash, its version not
			 * found published: this node may be its publisher. */
			if (v->nparts > 1 && v->level >= CKPT_DRAINED &&
			    !version_remote(v) && v->publish == PUB_NONE)
				v->publish = PUB_WAIT;
		}
	}
	/* The newest version is always drained, also one retired before an
	 * rm of the newer ones. */
	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next)
		drain_newest_due(d, list_entry(jp, struct job, link));
	journals_sweep(d->cat, dir);
	log_printf(LOG_NOTICE, "drain: to %s, %u threads, cap %llu B/s",
		   conf->drain_target, dr->nthr,
		   (unsigned long long)conf->drain_bandwidth);
	return 0;

out_free:
	pfscache_free(dr->manifests);
	bwlimit_release(&dr->bw);
	free(dr);
	return ret;
}

void drain_cancel(struct ckptd *d)
{
	struct drain *dr = drain_of(d);

	if (dr)
		dr->cancel = 1;
}

void drain_close(struct ckptd *d)
{
	struct drain *dr = drain_of(d);

	if (!dr)
		return;
	bwlimit_release(&dr->bw);
	pfscache_free(dr->manifests);
	pfsmark_close(&dr->tmark);
	free(dr);
	d->drain = NULL;
}
