/*
 * level.c - level changes of sealed versions, persisted off the loop (see
 * level.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "ctx.h"
#include "level.h"
#include "log.h"
#include "mstats.h"
#include "pool.h"

struct level_req {
	struct pool_task pt;
	struct list link;         /* in v->levelq */
	struct ckptd *d;
	struct version *v;        /* holds a reference */
	uint32_t gain, lose;      /* CKPT_COPY_* */
	unsigned flags;
	level_fn done;
	void *buf;                /* the encoded manifest, owned */
	size_t len;
	uint64_t seq;
	const struct catalog *cat;
	int started;              /* handed to the pool (or settled) */
};

static struct level_req *req_of(struct pool_task *pt)
{
	return (struct level_req *)((char *)pt - offsetof(struct level_req, pt));
}

/* On a worker: only what the request carries. */
static int store_run(struct pool_task *pt)
{
	struct level_req *r = req_of(pt);

	return catalog_manifest_store(r->cat, r->seq, r->buf, r->len);
}

static void req_free(struct level_req *r)
{
	free(r->buf);
	free(r);
}

/* Settle r (the write is over, or never started): level, waiters, done. */
static void finish(struct level_req *r, int err)
{
	struct ckptd *d = r->d;
	struct version *v = r->v;
	uint32_t from;

	list_del(&r->link);
	if (err)
		mstats_error(d, MERR_MANIFEST);
	if (!err || !(r->flags & LEVEL_DURABLE)) {
		from = v->level;
		version_set_copies(v, (v->copies & ~r->lose) | r->gain);
		mstats_level(d, v, from, v->level);
	}
	if (err && !(r->flags & LEVEL_DURABLE))
		log_printf(LOG_WARNING, "version %s/%s: recording %s locally: %s",
			   v->job ? v->job->name : "?", v->name,
			   ckpt_level_name(v->level), ckpt_strerror(err));
	/* done first: the seal's makes v SEALED before its waiters hear. */
	if (r->done)
		r->done(d, v, err);
	if (!err || !(r->flags & LEVEL_DURABLE))
		ckptd_version_changed(d, v);
	version_put(d->cat, v);
	req_free(r);
}

static void start(struct level_req *r);

/* The next queued change of v, if any, starts once one is over. */
static void next(struct version *v)
{
	struct level_req *r;

	if (list_empty(&v->levelq))
		return;
	/* A done callback may have asked for a change meanwhile, which found
	 * the queue empty and started at once: never start it twice. */
	r = list_entry(v->levelq.next, struct level_req, link);
	if (!r->started)
		start(r);
}

/* r is over with err: settle it and start the next change of its version. */
static void complete(struct level_req *r, int err)
{
	struct ckptd *d = r->d;
	struct version *v = r->v;

	version_get(v);           /* across finish(), for next() */
	finish(r, err);
	next(v);
	version_put(d->cat, v);
}

static void store_done(struct pool_task *pt)
{
	complete(req_of(pt), pt->result);
}

/* Shutting down: the write never ran or its result is lost; the manifest
 * on disk is the old one or the new one, both whole.  The references go
 * with the catalog (catalog_close frees every version). */
static void store_drop(struct pool_task *pt)
{
	struct level_req *r = req_of(pt);
	struct version *v = r->v;
	struct list *pos, *tmp;

	/* The head of v->levelq is the one in the pool: the rest go too. */
	list_for_each_safe(pos, tmp, &v->levelq) {
		list_del(pos);
		req_free(list_entry(pos, struct level_req, link));
	}
}

/* Encode r's manifest now (the version as it is) and hand it to a worker. */
static void start(struct level_req *r)
{
	struct version *v = r->v;
	int ret;

	r->started = 1;
	ret = catalog_manifest_encode(v, copies_level((v->copies & ~r->lose) |
						      r->gain),
				      &r->buf, &r->len);
	if (ret < 0) {
		complete(r, ret);
		return;
	}
	r->seq = v->seq;
	r->cat = r->d->cat;
	pool_submit(r->d->pool, &r->pt, 1);
}

void version_reach(struct ckptd *d, struct version *v, uint32_t gain,
		   uint32_t lose, unsigned flags, level_fn done)
{
	struct level_req *r = calloc(1, sizeof(*r));
	int first;

	if (lose & v->copies)     /* a loss holds at once */
		version_set_copies(v, v->copies & ~lose);
	if (!r) {
		if (!(flags & LEVEL_DURABLE))
			version_set_copies(v, v->copies | gain);
		if (done)
			done(d, v, -ENOMEM);
		return;
	}
	pool_task_init(&r->pt, store_run, store_done, store_drop);
	r->d = d;
	r->v = v;
	r->gain = gain;
	r->lose = lose;
	r->flags = flags;
	r->done = done;
	version_get(v);
	first = list_empty(&v->levelq);
	list_add_tail(&v->levelq, &r->link);
	if (first)
		start(r);
}

void version_staged(struct ckptd *d, struct version *v)
{
	v->level = CKPT_STAGED;
	ckptd_version_changed(d, v);
}
