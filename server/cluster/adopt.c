/*
 * adopt.c - a survivor taking over the part of a node that is gone (see
 * cluster_i.h: adopt_tick).
 *
 * A part's owner keeps shard 0 (its own copy) and is the one that
 * re-protects it.  When the owner is lost, its part is still read decoded
 * from k of its holders, but nothing regenerates shard 0 and nothing
 * replaces a holder lost after it: the part survives m - 1 further losses,
 * not m.  So a part whose owner has been down longer than
 * [cluster] reprotect_after (or is no longer in the node list) is adopted:
 *
 *   - by one node: the first node of the list (by id) that is up and has
 *     no part of that version (a node holds one part of a version: a spare
 *     that replaced the lost node, typically), each node deciding from
 *     what it knows, so that two rarely both start;
 *   - the adopter decodes the part from k shards (rbwrite.c) into its own
 *     store under a new open_id of its own (open_ids are one node's), with
 *     a holder record that says it is the part `from` the lost node
 *     (manifest format 7: from, from_id), and loads it as its own part:
 *     LOCAL, read from it, announced;
 *   - protect.c protects it as any part of its own (the old record's
 *     holders first choices, a holder that is the adopter itself, or down,
 *     replaced): every shard is sent again under the new owner;
 *   - the old part is superseded: a node hearing the new part drops the
 *     old from its namespace (parts.c), and, once the new part is PROTECTED
 *     (every new shard durable), drops the shards it holds of the old; the
 *     lost node, should it return, removes its own copy then.
 *
 * A crash of the adopter mid-write leaves segments with no manifest,
 * listed INCOMPLETE under the new open_id, which <store>/adopting names
 * (written durably before the write starts, removed when it ends): that
 * entry is dropped here and the part adopted again.  A crash after the manifest is durable leaves a
 * LOCAL part of its own that protect.c takes from there.
 *
 * One part at a time; a failure waits ADOPT_RETRY_MS.  Threads: the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "ckpt.h"
#include "cluster_i.h"
#include "manifest.h"
#include "parts_i.h"
#include "remove.h"
#include "shardmeta.h"
#include "sys.h"

#define ADOPT_RETRY_MS 5000      /* after a failure, before the next */
#define ADOPT_BACKOFF_MAX_MS 300000  /* a part failing again waits longer */
#define ADOPT_SCAN_MS  1000
#define ADOPT_FAILS    16        /* parts whose failures are remembered */

struct adopt {
	struct cluster *cl;
	struct rbwrite *job;      /* the part being written, or NULL */
	char jobname[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t from;            /* its lost owner */
	uint64_t from_id;         /* and its open_id there */
	uint64_t new_id;          /* the open_id it gets here */
	uint64_t progress;
	uint64_t retry_ms;        /* no new adoption before then */
	uint64_t scan_ms;
	uint32_t done, failed;
	struct afail {            /* parts whose adoption failed lately */
		uint32_t owner;
		uint64_t open_id;
		uint64_t until_ms;
		uint32_t tries;
	} fails[ADOPT_FAILS];
	uint64_t stale_id;        /* the open_id of an adoption a crash cut
				   * short (the marker), or 0 */
	char marker[700];         /* <store>/adopting: the open_id being
				   * written, durably, while it is */
	char store[600];
};

/* Has node (up, or this one) a part of job/version? */
static int has_part(const struct cluster *cl, uint32_t node, const char *job,
		    const char *version)
{
	struct list *pos;

	if (node == cl->self)
		return catalog_version(cl->d->cat, job, version) != NULL;
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner == node && !strcmp(p->job, job) &&
		    !strcmp(p->version, version))
			return 1;
	}
	return 0;
}

/* Is this node the one to adopt p: the first node up (this one counts)
 * with no part of p's version? */
static int chosen(const struct cluster *cl, const struct rpart *p)
{
	uint32_t i;

	for (i = 0; i < cl->place.n; i++) {
		if (i != cl->self && cl->peers[i].st != P_UP)
			continue;
		if (!has_part(cl, i, p->job, p->version))
			return i == cl->self;
	}
	return 0;
}

/* Is p's owner gone: not in the list, or down past reprotect_after? */
static int owner_gone(const struct cluster *cl, const struct rpart *p,
		      uint64_t now)
{
	const struct peer *o;

	if (cl_retired(cl, p->owner))
		return 1;
	o = &cl->peers[p->owner];
	return o->st != P_UP &&
	       now >= o->since_ms + cl->d->conf->cluster_reprotect_after;
}

/* Shards of p's record whose holders are up (or this node). */
static uint32_t shards_up(const struct cluster *cl, const struct rpart *p)
{
	uint32_t ids[32], s, w = p->man.holders->k + p->man.holders->m - 1,
		 n = 0;

	holders_resolve(cl, p->man.holders, p->owner, ids);
	for (s = 1; s <= w; s++)
		n += ids[s - 1] != HOLDER_NONE &&
		     (ids[s - 1] == cl->self ||
		      cl->peers[ids[s - 1]].st == P_UP);
	return n;
}

/* Is p's adoption waiting after a failure? */
static int backing_off(const struct adopt *a, const struct rpart *p,
		       uint64_t now)
{
	uint32_t i;

	for (i = 0; i < ADOPT_FAILS; i++)
		if (a->fails[i].owner == p->owner &&
		    a->fails[i].open_id == p->open_id &&
		    now < a->fails[i].until_ms)
			return 1;
	return 0;
}

static void note_failure(struct adopt *a, uint32_t owner, uint64_t open_id,
			 uint64_t now)
{
	struct afail *f = NULL;
	uint64_t wait;
	uint32_t i;

	a->failed++;
	a->retry_ms = now + ADOPT_RETRY_MS;
	for (i = 0; i < ADOPT_FAILS && !f; i++)
		if (a->fails[i].owner == owner && a->fails[i].open_id == open_id)
			f = &a->fails[i];
	for (i = 0; i < ADOPT_FAILS && !f; i++)
		if (now >= a->fails[i].until_ms + ADOPT_BACKOFF_MAX_MS)
			f = &a->fails[i];          /* long over: reused */
	if (!f)
		f = &a->fails[open_id % ADOPT_FAILS];
	if (f->owner != owner || f->open_id != open_id)
		*f = (struct afail){ owner, open_id, 0, 0 };
	wait = (uint64_t)ADOPT_RETRY_MS << (f->tries < 6 ? f->tries : 6);
	f->tries++;
	f->until_ms = now + (wait < ADOPT_BACKOFF_MAX_MS ? wait
							 : ADOPT_BACKOFF_MAX_MS);
}

/* Is another part of p's version sealed somewhere (this node's own aside:
 * it has none)?  A version of several parts whose other parts are all
 * gone (retention removed them) is not worth taking over. */
static int version_lives(const struct cluster *cl, const struct rpart *p)
{
	struct list *pos;

	if (p->nparts <= 1)
		return 1;
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *q = list_entry(pos, struct rpart, link);

		if (q != p && q->owner != p->owner &&
		    q->state == CKPT_ST_SEALED && !strcmp(q->job, p->job) &&
		    !strcmp(q->version, p->version))
			return 1;
	}
	return 0;
}

/* Would this node's retention ([ckptd] keep) remove p's version at once:
 * has job j here as many sealed versions sealed after it? */
static int retained_away(const struct cluster *cl, struct job *j,
			 const struct rpart *p)
{
	uint32_t keep = cl->d->conf->keep ? cl->d->conf->keep : 1, newer = 0;
	struct list *pos;

	list_for_each(pos, &j->versions) {
		const struct version *v = list_entry(pos, struct version, link);

		newer += v->state == CKPT_ST_SEALED && !v->removing &&
			 v->sealed_ns > p->sealed_ns;
	}
	return newer >= keep;
}

/* May this node adopt p now?  A sealed part with a record, on no PFS,
 * coded as this cluster codes, its owner gone, k of its shards up, another
 * part of its version alive, not taken over by anyone yet, not backing off
 * after a failure, and no part of its version here. */
static int adoptable(struct adopt *a, const struct rpart *p, uint64_t now)
{
	struct cluster *cl = a->cl;
	const struct man_holders *rec = p->man.holders;
	struct job *j;

	if (p->owner == cl->self || p->state != CKPT_ST_SEALED || !rec ||
	    p->level >= CKPT_DRAINED || (p->copies & CKPT_COPY_PFS) ||
	    !(p->copies & CKPT_COPY_PEERS) || rec->k != cl->place.k ||
	    rec->m != cl->place.m || !owner_gone(cl, p, now) ||
	    backing_off(a, p, now))
		return 0;
	j = catalog_job(cl->d->cat, p->job);
	if (j && (j->uid != p->uid || retained_away(cl, j, p)))
		return 0;
	if (catalog_version(cl->d->cat, p->job, p->version))
		return 0;
	if (parts_taken_over(cl, p->owner, p->open_id, 0, NULL))
		return 0;       /* another node has it, LOCAL at least */
	return shards_up(cl, p) >= rec->k && version_lives(cl, p) &&
	       chosen(cl, p);
}

/* The entry an adoption cut short by a crash left (segments with no
 * manifest, listed INCOMPLETE under the open_id the marker names): dropped,
 * and announced as removed (no shard of that open_id exists), before any
 * adoption starts. */
static void drop_stale(struct adopt *a)
{
	struct cluster *cl = a->cl;
	struct list *jp, *vp, *tmp;

	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each_safe(vp, tmp, &j->versions) {
			struct version *v = list_entry(vp, struct version, link);
			int ret;

			if (v->open_id != a->stale_id || !version_dead(v) ||
			    v->removing)
				continue;
			log_printf(LOG_NOTICE, "adopt: dropping %s/%s, what the adoption cut short left",
				   j->name, v->name);
			version_get(v);
			v->error = -CKPT_ENOVERSION;
			ret = catalog_remove(cl->d->cat, v);
			if (ret == 0)
				ckptd_version_changed(cl->d, v);
			else
				log_printf(LOG_WARNING, "adopt: dropping it: %s",
					   ckpt_strerror(ret));
			version_put(cl->d->cat, v);
			a->stale_id = 0;
			return;          /* the job may be gone with it */
		}
	}
	a->stale_id = 0;
}

/* ---- the marker --------------------------------------------------------------- */

/* The marker, written whole or not at all (tmp, fsync, rename, fsync the
 * store). */
static int marker_write(struct adopt *a, uint64_t open_id)
{
	char buf[32], tmp[720];
	int n = snprintf(buf, sizeof(buf), "%016llx\n",
			 (unsigned long long)open_id);
	int ret;

	snprintf(tmp, sizeof(tmp), "%s.tmp", a->marker);
	ret = sys_write_file(tmp, buf, (size_t)n, 0600);
	if (ret == 0 && rename(tmp, a->marker) < 0)
		ret = -errno;
	return ret == 0 ? sys_fsync_dir(a->store) : ret;
}

static void marker_clear(struct adopt *a)
{
	if (unlink(a->marker) < 0 && errno != ENOENT)
		log_printf(LOG_WARNING, "adopt: cannot remove %s: %s",
			   a->marker, strerror(errno));
}

static void marker_read(struct adopt *a)
{
	char buf[32];
	ssize_t n;
	int fd = open(a->marker, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	a->stale_id = strtoull(buf, NULL, 16);
	log_printf(LOG_NOTICE, "adopt: an adoption was cut short (open_id %016llx): it starts again",
		   (unsigned long long)a->stale_id);
}

/* ---- the write ------------------------------------------------------------ */

static void own_removed(void *arg, int status);

static void on_written(void *arg, int err)
{
	struct adopt *a = arg;
	struct cluster *cl = a->cl;
	struct version *v;

	a->job = NULL;
	if (err == -ECANCELED)
		return;          /* shutting down: the marker stays */
	if (err < 0) {
		/* The marker stays until the next adoption: the failed
		 * write's segments are freed on the pool meanwhile. */
		note_failure(a, a->from, a->from_id, ckptd_now_ms());
		log_printf(LOG_ERR, "adopt: %s/%s of %s: %s; trying again later",
			   a->jobname, a->version, cl_name(cl, a->from),
			   ckpt_strerror(err));
		return;
	}
	marker_clear(a);
	v = catalog_version(cl->d->cat, a->jobname, a->version);
	if (v && v->open_id == a->new_id && !cl_retired(cl, a->from) &&
	    cl->peers[a->from].st == P_UP) {
		/* Its owner came back meanwhile (with its part, or to
		 * rebuild it under its name): the copy here is not needed. */
		log_printf(LOG_NOTICE, "adopt: %s/%s: its owner %s is back: the copy taken over is dropped",
			   a->jobname, a->version, cl_name(cl, a->from));
		if (!v->removing &&
		    remove_start(cl->d, v, RM_LOCAL, own_removed, a) < 0)
			log_printf(LOG_WARNING, "adopt: %s/%s: cannot drop the copy; it stays, superseding the old part once PROTECTED",
				   a->jobname, a->version);
		return;
	}
	a->done++;
	log_printf(LOG_NOTICE, "adopt: %s/%s, the part of %s, is this node's now: protecting it",
		   a->jobname, a->version, cl_name(cl, a->from));
	parts_superseded(cl, a->from, a->from_id);
}

/* The bytes of m's stream: its records that hold data, in order. */
static uint64_t stream_len(const struct manifest *m)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < m->nrecs; i++)
		if (m->recs[i].seg != MAN_SEG_ZERO)
			n += m->recs[i].len;
	return n;
}

static int start(struct adopt *a, const struct rpart *p)
{
	struct cluster *cl = a->cl;
	struct man_holders rec = *p->man.holders;
	struct manifest man = p->man;
	struct shard_meta m;
	uint64_t stripe = (uint64_t)rec.k * PROTECT_CHUNK;
	size_t size;
	long n;
	int ret;

	memset(&m, 0, sizeof(m));
	rec.gen++;
	snprintf(rec.from, sizeof(rec.from), "%s", cl_name(cl, p->owner));
	rec.from_id = p->open_id;
	man.holders = &rec;
	man.open_id = catalog_new_open_id(cl->d->cat);
	size = manifest_size(&man);
	m.man = malloc(size);
	if (!m.man)
		return -ENOMEM;
	n = manifest_encode(&man, m.man, size);
	if (n < 0) {
		ret = (int)n;
		goto out;
	}
	m.manlen = (uint32_t)n;
	snprintf(m.owner, sizeof(m.owner), "%s", cl_name(cl, cl->self));
	snprintf(m.job, sizeof(m.job), "%s", p->job);
	snprintf(m.version, sizeof(m.version), "%s", p->version);
	m.uid = p->uid;
	m.seq = p->seq;
	m.open_id = man.open_id;
	m.k = rec.k;
	m.m = rec.m;
	m.chunk = PROTECT_CHUNK;
	m.stream_len = stream_len(&p->man);
	m.nstripes = (m.stream_len + stripe - 1) / stripe;
	snprintf(a->jobname, sizeof(a->jobname), "%s", p->job);
	snprintf(a->version, sizeof(a->version), "%s", p->version);
	a->from = p->owner;
	a->from_id = p->open_id;
	a->new_id = man.open_id;
	ret = marker_write(a, man.open_id);
	if (ret < 0)
		goto out;
	log_printf(LOG_NOTICE, "adopt: %s/%s: its owner %s is gone (%s): decoding its part (%llu bytes) from its holders to take it over",
		   p->job, p->version, cl_name(cl, p->owner),
		   cl_retired(cl, p->owner) ? "no longer in the node list"
					    : "down past reprotect_after",
		   (unsigned long long)m.stream_len);
	ret = rbwrite_start(cl, p->owner, p->open_id, &m, 0, NULL,
			    &a->progress, on_written, a, &a->job);
out:
	free(m.man);
	return ret;
}

/* ---- this node's own part, taken over while it was gone --------------------- */

static void own_removed(void *arg, int status)
{
	struct adopt *a = arg;

	if (status != 0 && status != REMOVE_DROPPED)
		log_printf(LOG_WARNING, "adopt: removing this node's superseded copy: %s (the next start tries again)",
			   ckpt_strerror(status));
	(void)a;
}

void adopt_own_superseded(struct cluster *cl, uint64_t open_id)
{
	struct list *jp, *vp;

	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions) {
			struct version *v = list_entry(vp, struct version, link);
			int ret;

			if (v->open_id != open_id || v->removing ||
			    v->state != CKPT_ST_SEALED ||
			    v->level >= CKPT_DRAINED)
				continue;
			log_printf(LOG_NOTICE, "adopt: %s/%s: another node took this node's part over (%s), and has it PROTECTED: the copy here is removed",
				   j->name, v->name,
				   v->holders && v->holders->from[0]
					? "from the same lost node"
					: "while this node was gone");
			ret = remove_start(cl->d, v, RM_LOCAL, own_removed,
					   cl->adopt);
			if (ret < 0)
				log_printf(LOG_WARNING, "adopt: %s/%s: cannot remove the superseded copy: %s",
					   j->name, v->name, ckpt_strerror(ret));
			return;
		}
	}
}

void adopt_own_superseded_part(struct cluster *cl, uint32_t owner,
			       uint64_t from_id)
{
	const char *name = cl_name(cl, owner);
	struct list *jp, *vp;

	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->holders && v->holders->from_id == from_id &&
			    !strcmp(v->holders->from, name)) {
				adopt_own_superseded(cl, v->open_id);
				return;
			}
		}
	}
}

/* ---- the interface ---------------------------------------------------------- */

void adopt_tick(struct cluster *cl)
{
	struct adopt *a = cl->adopt;
	uint64_t now = ckptd_now_ms();
	struct list *pos;
	int ret;

	if (!a || cl->stopping)
		return;
	if (a->job) {
		rbwrite_tick(a->job);   /* a stripe waiting for a segment */
		return;
	}
	if (a->stale_id)
		drop_stale(a);
	if (rebuild_active(cl) || now < a->retry_ms ||
	    now < a->scan_ms + ADOPT_SCAN_MS)
		return;
	a->scan_ms = now;
	list_for_each(pos, &cl->parts->list) {
		struct rpart *p = list_entry(pos, struct rpart, link);

		if (!adoptable(a, p, now))
			continue;
		ret = start(a, p);
		if (ret < 0) {
			note_failure(a, p->owner, p->open_id, now);
			log_printf(LOG_ERR, "adopt: %s/%s of %s cannot start: %s",
				   p->job, p->version, cl_name(cl, p->owner),
				   ckpt_strerror(ret));
		}
		return;
	}
}

void adopt_counts(const struct cluster *cl, uint32_t *running,
		  uint32_t *done)
{
	const struct adopt *a = cl->adopt;

	*running = a && a->job;
	*done = a ? a->done : 0;
}

int adopt_open(struct cluster *cl)
{
	struct adopt *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->cl = cl;
	snprintf(a->store, sizeof(a->store), "%s", cl->d->conf->store);
	snprintf(a->marker, sizeof(a->marker), "%s/adopting",
		 cl->d->conf->store);
	marker_read(a);
	cl->adopt = a;
	return 0;
}

void adopt_close(struct cluster *cl)
{
	struct adopt *a = cl->adopt;

	if (!a)
		return;
	/* A write the pool did not hold (it waited for a segment): its
	 * segments' headers make the next start list it INCOMPLETE. */
	if (a->job)
		rbwrite_free(a->job);
	free(a);
	cl->adopt = NULL;
}
