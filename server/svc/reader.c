/*
 * reader.c - READ: serve a byte range of a committed file into the client's
 * staging lease, verified.
 *
 * A file is the records written to it, a later record winning where two
 * overlap; bytes no record covers read as zeros.  A read resolves its range
 * into intervals, each taken from the newest record covering it.  Each record
 * needed is read whole (its CRC32C covers all of it) into a buffer from a
 * small pool, verified, and only then are its intervals copied into the
 * lease.  A mismatch fails the read with -CKPT_ECORRUPT: bad bytes are never
 * returned.  The buffers are huge-page backed (sys_dio_alloc()), so a
 * record's O_DIRECT read goes to the disk in requests of megabytes; reading
 * into the lease itself (4 KiB shmem pages: requests of 512 KiB on
 * virtio-blk) made a restore from LOCAL 30% slower than this copy (see
 * docs/benchmarks.md, "Restore from LOCAL through huge-page buffers").
 * Zero records (truncation) read as zeros without I/O.
 *
 * A version still open may be read (ckptfs reads back files it writes): the
 * read waits until the version has no write in flight, since the records of
 * those writes have no data on disk (and no checksum) yet.
 *
 * Intervals come from the version's read index (rindex.h), found in log
 * time in the file's records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "crc32c.h"
#include "drain.h"
#include "lease.h"
#include "log.h"
#include "mstats.h"
#include "pfs.h"
#include "pfscache.h"
#include "pfsmark.h"
#include "pool.h"
#include "reader.h"
#include "rindex.h"
#include "session.h"
#include "sys.h"

#define READ_MAX   (64u << 20)  /* bytes one READ may ask for */

struct rreq {
	struct ckptd *d;
	struct rtry *t;           /* the client's READ (its conn, seq) */
	struct version *v;
	/* the request's numbers (its strings live only while it is
	 * dispatched: the file is fi) */
	uint32_t fi;
	uint64_t off, ring_off;
	struct rpiece *pieces;
	uint32_t npieces;
	uint32_t *first;          /* rindex_chain()'s, while submitting */
	uint32_t next;            /* the next piece to submit a read for */
	struct list link;         /* in reader_bufs.waiting, or empty */
	uint32_t pending;         /* record reads in flight, and 1 while
				   * pieces are left to submit */
	uint64_t size;            /* bytes in the answer */
	int err;
};

struct rop {
	struct loop_op op;
	struct rreq *r;
	uint32_t rec;
	uint32_t first;           /* its first piece; the rest by ->next */
	void *buf;                /* from rbufs */
};

static void *buf_get(struct reader_bufs *rb, size_t size)
{
	if (size == rb->size && rb->n)
		return rb->buf[--rb->n];
	return sys_dio_alloc(size);
}

static void buf_put(struct reader_bufs *rb, void *p, size_t size)
{
	if (size == rb->size && rb->n < READER_KEEP)
		rb->buf[rb->n++] = p;
	else
		sys_dio_free(p, size);
}

void reader_open(struct reader_bufs *rb, size_t chunk)
{
	memset(rb, 0, sizeof(*rb));
	rb->size = chunk;
	list_init(&rb->waiting);
}

void reader_close(struct reader_bufs *rb)
{
	while (rb->n)
		sys_dio_free(rb->buf[--rb->n], rb->size);
}

/* ---- reads from the PFS copy ------------------------------------------ */

/* A read served from a PFS copy, on a worker (reader.h).  The worker
 * takes the manifest from the drain's cache (pfscache.h): the version's
 * (node "") or node's part manifest, of the incarnation read (seq alone,
 * else sealed_ns and uid), and finds the file in it by name. */
struct pfs_read {
	struct pool_task pt;
	struct rtry *t;           /* the client's READ */
	const char *target;       /* [drain] target, fixed for the run */
	struct pfscache *cache;
	struct pfsmark *mark;     /* the target's */
	uint32_t fi;              /* where the catalog has the name: a hint */
	uint64_t off, len;
	uint8_t *dst;             /* in the client's lease */
	long got;
	char node[CKPT_HOST_MAX + 1];
	int by_seq;
	uint64_t vseq, sealed_ns;
	uint32_t uid;
};

static struct pfs_read *pfs_read_of(struct pool_task *pt)
{
	return (struct pfs_read *)((char *)pt - offsetof(struct pfs_read, pt));
}

static int pfs_read_run(struct pool_task *pt)
{
	struct pfs_read *pr = pfs_read_of(pt);
	const struct rtry *t = pr->t;   /* its names: the task owns t */
	const struct pfsc_want w = {
		.job = t->job, .version = t->version, .node = pr->node,
		.by_seq = pr->by_seq, .seq = pr->vseq,
		.sealed_ns = pr->sealed_ns, .uid = pr->uid,
	};
	const struct pfsman *m;
	struct pfsc_entry *e;
	int ret;

	ret = pfscache_get(pr->cache, &w, &m, &e);
	if (ret < 0)
		goto out_mark;
	/* The catalog's index is a hint: a version evicted where it was
	 * written still lists the names it unlinked. */
	ret = pfscache_find(e, t->path, pr->fi);
	if (ret >= 0) {
		pr->got = pfs_read(pr->target, m, (uint32_t)ret, pr->off, pr->len,
				   pr->dst);
		ret = pr->got < 0 ? (int)pr->got : 0;
	}
	pfscache_put(pr->cache, e);
out_mark:
	/* A copy missing on a target without its mark: not mounted, rather
	 * than lost. */
	if ((ret == -ENOENT || ret == -CKPT_ENOVERSION) &&
	    pfsmark_check(pr->mark) == -CKPT_ETARGET)
		ret = -CKPT_ETARGET;
	return ret;
}

static void pfs_read_done(struct pool_task *pt)
{
	struct pfs_read *pr = pfs_read_of(pt);

	read_answer(pr->t, pt->result, pt->result ? 0 : (uint64_t)pr->got);
	free(pr);
}

/* Shutting down: the client is gone with the daemon. */
static void pfs_read_drop(struct pool_task *pt)
{
	struct pfs_read *pr = pfs_read_of(pt);

	read_drop(pr->t);
	free(pr);
}

/* The PFS source of t: this node's version (remote: the PFS manifest it
 * was loaded from; a local one: the PFS copy of the same incarnation, its
 * part's in a cluster) or another node's part.  0 (started) or -errno. */
static int read_pfs(struct rtry *t)
{
	struct ckptd *d = t->d;
	struct version *v = NULL;
	struct cluster_part cp;
	struct pfs_read *pr;
	int fi = -1;

	if (!drain_enabled(d))
		return -EIO;
	if (t->plan.own) {
		v = catalog_version(d->cat, t->req.job, t->req.version);
		if (!v || version_dead(v) || v->state != CKPT_ST_SEALED)
			return -ENOENT;
		if (!v->pfs && v->level < CKPT_DRAINED)
			return -ENODATA;
		if (version_remote(v) && (fi = version_name(v, t->req.path)) < 0)
			return fi;
	} else if (cluster_part_of(d, t->req.job, t->req.version,
				   (uint32_t)t->c->uid, t->req.path, &cp) < 0) {
		return -ENOENT;
	} else if (!((cp.copies | plan_pfs_whole(catalog_version(d->cat,
			t->req.job, t->req.version))) & CKPT_COPY_PFS)) {
		return -ENODATA;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	pool_task_init(&pr->pt, pfs_read_run, pfs_read_done, pfs_read_drop);
	pr->t = t;
	pr->target = d->conf->drain_target;
	pr->cache = drain_manifests(d);
	pr->mark = drain_mark(d);
	pr->off = t->req.off;
	pr->len = t->req.len;
	pr->dst = t->c->lease->map + t->req.ring_off;
	if (fi >= 0 && v->pfs) {
		/* the manifest the catalog stripped, as it was loaded */
		pr->fi = (uint32_t)fi;
		snprintf(pr->node, sizeof(pr->node), "%s", v->pfs->node);
		pr->vseq = v->pfs->seq;
		pr->sealed_ns = v->pfs->sealed_ns;
		pr->uid = v->pfs->uid;
	} else if (v) {
		pr->vseq = v->seq;
		pr->uid = v->job->uid;
		if (v->nparts > 1 && cluster_nodes(d)) {
			snprintf(pr->node, sizeof(pr->node), "%s",
				 cluster_node_name(d, cluster_self(d)));
			pr->sealed_ns = v->sealed_ns;
		}
	} else if (cp.nparts > 1) {
		snprintf(pr->node, sizeof(pr->node), "%s",
			 cluster_node_name(d, cp.node));
		pr->sealed_ns = cp.sealed_ns;
		pr->uid = cp.uid;
	} else {
		/* Another node's version alone: the version's manifest. */
		pr->vseq = cp.seq;
		pr->uid = cp.uid;
	}
	pr->by_seq = !pr->node[0];
	pool_submit(d->pool, &pr->pt, 0);
	return 0;
}

/* ---- reads from the local store ---------------------------------------- */

static void rreq_finish(struct rreq *r)
{
	read_answer(r->t, r->err, r->err ? 0 : r->size);
	version_put(r->d->cat, r->v);
	free(r->first);
	free(r->pieces);
	free(r);
}

static int submit_more(struct rreq *r);

/* Buffers were freed: start the waiting reads, in order, while they fit. */
static void reads_kick(struct reader_bufs *rb)
{
	while (!list_empty(&rb->waiting))
		if (submit_more(list_entry(rb->waiting.next, struct rreq, link)))
			break;          /* still waits: no room */
}

static void on_read(struct loop_op *op, int res)
{
	struct rop *o = (struct rop *)op;
	struct rreq *r = o->r;
	struct reader_bufs *rb = &r->d->svc->rbufs;
	const struct man_rec *m = &r->v->recs[o->rec];
	size_t rlen = man_padded(m->len);
	uint32_t i;

	if (res > 0)
		loop_mark_defined(o->buf, res);
	if (res < (int)m->len) {
		if (!r->err)
			r->err = res < 0 ? res : -EIO;
	} else if (crc32c(o->buf, m->len) != m->crc) {
		log_printf(LOG_ERR, "read: %s/%s: checksum mismatch in segment %u at %llu",
			   r->v->job ? r->v->job->name : "?", r->v->name,
			   m->seg, (unsigned long long)m->seg_off);
		if (!r->err)
			r->err = -CKPT_ECORRUPT;
	} else if (!r->t->c->closed) {
		uint8_t *dst = r->t->c->lease->map + r->ring_off;

		for (i = o->first; i != RPIECE_END; i = r->pieces[i].next)
			memcpy(dst + r->pieces[i].dst,
			       (uint8_t *)o->buf + r->pieces[i].src,
			       r->pieces[i].len);
	}
	buf_put(rb, o->buf, rlen);
	rb->used -= rlen;
	free(o);
	if (--r->pending == 0)
		rreq_finish(r);
	reads_kick(rb);
}

/* Submit one read per distinct record among the pieces, from r->next on,
 * while the window has room; r waits in rb->waiting for the rest.  When
 * every piece is submitted (or a failure or a closed client ends the
 * submitting), r's hold on pending is dropped, which may finish (free) r.
 * 1 if r waits for room, else 0. */
static int submit_more(struct rreq *r)
{
	struct reader_bufs *rb = &r->d->svc->rbufs;
	struct io_uring_sqe *sqe;
	struct rop *o;
	int ret;

	if (list_empty(&r->link) && !list_empty(&rb->waiting) &&
	    r->next < r->npieces) {
		list_add_tail(&rb->waiting, &r->link);  /* behind the others */
		return 1;
	}
	for (; r->next < r->npieces && !r->err && !r->t->c->closed; r->next++) {
		uint32_t i = r->next;
		const struct man_rec *m = &r->v->recs[r->pieces[i].rec];
		size_t rlen = man_padded(m->len);

		if (r->first[i] == RPIECE_END)
			continue;     /* already being read */
		if (rb->used && rb->used + rlen > READER_BUDGET) {
			if (list_empty(&r->link))
				list_add_tail(&rb->waiting, &r->link);
			return 1;
		}
		o = calloc(1, sizeof(*o));
		if (o)
			o->buf = buf_get(rb, rlen);
		if (!o || !o->buf) {
			free(o);
			r->err = -ENOMEM;
			break;
		}
		rb->used += rlen;
		o->op.fn = on_read;
		o->r = r;
		o->rec = r->pieces[i].rec;
		o->first = i;
		r->pending++;
		ret = sys_inject(SYS_PREAD);
		if (ret < 0) {
			loop_fake(&r->d->loop, &o->op, ret);
			continue;
		}
		sqe = loop_sqe(&r->d->loop, &o->op);
		io_uring_prep_read(sqe, segs_fd(r->d->segs, m->seg), o->buf,
				   rlen, m->seg_off);
	}
	if (r->t->c->closed && !r->err)
		r->err = -ECONNABORTED;
	r->next = r->npieces;
	list_del(&r->link);
	if (--r->pending == 0)
		rreq_finish(r);
	return 0;
}

/* Chain the pieces by record and start submitting.  0, or -errno before
 * anything was submitted (the caller answers). */
static int submit_reads(struct rreq *r)
{
	int ret;

	r->first = malloc(sizeof(*r->first) * (r->npieces ? r->npieces : 1));
	if (!r->first)
		return -ENOMEM;
	ret = rindex_chain(r->pieces, r->npieces, r->first);
	if (ret < 0)
		return ret;
	list_init(&r->link);
	r->pending = 1;         /* held until every read is submitted */
	(void)submit_more(r);
	return 0;
}

/* A read of an open version that waits for the writes in flight: the
 * request, with its own copies of its strings. */
struct deferred {
	struct list link;         /* in version.deferred */
	struct conn *c;           /* holds a reference */
	struct version *v;        /* holds a reference */
	struct proto_msg req;     /* strings point below */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char path[CKPT_PATH_MAX2 + 1];
};

/* A copy of req that outlives the handler: its names in the caller's
 * buffers (job, version, path: CKPT_JOB_MAX + 1, CKPT_VERSION_MAX + 1 and
 * CKPT_PATH_MAX2 + 1 bytes), no second path. */
static void req_keep(struct proto_msg *dst, char *job, char *version,
		     char *path, const struct proto_msg *src)
{
	*dst = *src;
	snprintf(job, CKPT_JOB_MAX + 1, "%s", src->job);
	snprintf(version, CKPT_VERSION_MAX + 1, "%s", src->version);
	snprintf(path, CKPT_PATH_MAX2 + 1, "%s", src->path);
	dst->job = job;
	dst->version = version;
	dst->path = path;
	dst->path2 = "";
}

void reader_kick(struct ckptd *d, struct version *v)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &v->deferred) {
		struct deferred *w = list_entry(pos, struct deferred, link);

		list_del(&w->link);
		w->c->nreads--;
		if (!w->c->closed)
			op_read(w->c, &w->req);
		conn_put(w->c);
		version_put(d->cat, w->v);
		free(w);
	}
}

static int defer(struct conn *c, struct version *v,
		 const struct proto_msg *req)
{
	struct deferred *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->c = c;
	w->v = v;
	req_keep(&w->req, w->job, w->version, w->path, req);
	conn_get(c);
	version_get(v);
	list_add_tail(&v->deferred, &w->link);
	c->nreads++;
	return 0;
}

/* ---- the sources, in the plan's order -------------------------------------- */

/* The LOCAL source: this node's copy.  0 (started) or -errno. */
static int read_local(struct rtry *t)
{
	const struct proto_msg *req = &t->req;
	struct version *v = catalog_version(t->d->cat, req->job, req->version);
	struct rreq *r;
	uint64_t end;
	int fi, ret;

	if (!v || version_dead(v) || version_remote(v))
		return -ENOENT;
	fi = version_file(v, req->path, 0);
	if (fi < 0)
		return fi;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->d = t->d;
	r->t = t;
	r->v = v;
	r->fi = fi;
	r->off = req->off;
	r->ring_off = req->ring_off;
	end = v->files[fi].size;
	if (req->off < end) {
		if (end - req->off > req->len)
			end = req->off + req->len;
		r->size = end - req->off;
		ret = rindex_resolve(v, fi, req->off, end,
				     t->c->lease->map + req->ring_off,
				     &r->pieces, &r->npieces);
		if (ret < 0) {
			free(r);
			return ret;
		}
	}
	version_get(v);
	ret = submit_reads(r);
	if (ret < 0) {
		r->err = ret;
		rreq_finish(r);
	}
	return 0;
}

static void rtry_reply(struct rtry *t, int32_t err, uint64_t size)
{
	struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_READ;
	m.seq = t->req.seq;
	m.status = err;
	m.size = err ? 0 : size;
	conn_reply(t->c, &m);
	read_drop(t);
}

/* Worth trying another source after err?  op_read checked the request
 * itself, so any failure is the source's (a peer's bad reply is EPROTO
 * too), except a permission refused. */
static int retryable(int err)
{
	return err != -EACCES;
}

/* The cluster's end of a source (cluster.h: struct cluster_read). */
static void on_cluster_done(struct cluster_read *cr, int32_t err,
			    uint64_t size)
{
	read_answer((struct rtry *)((char *)cr - offsetof(struct rtry, cr)),
		    err, size);
}

static void on_cluster_drop(struct cluster_read *cr)
{
	read_drop((struct rtry *)((char *)cr - offsetof(struct rtry, cr)));
}

/* t as a read the cluster serves: its request, the client's uid and where
 * the bytes go. */
static struct cluster_read *cluster_req(struct rtry *t)
{
	t->cr = (struct cluster_read){
		.d = t->d,
		.req = &t->req,
		.uid = (uint32_t)t->c->uid,
		.own = t->plan.own,
		.dst = t->c->lease ? t->c->lease->map + t->req.ring_off : NULL,
		.done = on_cluster_done,
		.drop = on_cluster_drop,
	};
	return &t->cr;
}

/* Start the source t->at, or the next ones while they cannot start;
 * answer the client when none can. */
static void read_next(struct rtry *t)
{
	int ret = -CKPT_ELOST;

	for (; t->at < t->plan.n; t->at++) {
		switch (t->plan.kind[t->at]) {
		case CKPT_SRC_LOCAL:
			ret = read_local(t);
			break;
		case CKPT_SRC_OWNER:
			ret = cluster_read_owner(cluster_req(t));
			break;
		case CKPT_SRC_SHARDS:
			ret = cluster_read_shards(cluster_req(t));
			break;
		case CKPT_SRC_PFS:
			ret = read_pfs(t);
			break;
		default:
			ret = -EINVAL;
		}
		if (ret == 0)
			return;
		if (!t->err)
			t->err = ret;
		if (!retryable(ret))
			break;
	}
	rtry_reply(t, t->err ? t->err : ret, 0);
}

void read_answer(struct rtry *t, int32_t err, uint64_t size)
{
	if (!err) {
		if (t->at)
			log_printf(LOG_NOTICE, "read: %s/%s/%s: served from source %s (the first failed: %s)",
				   t->job, t->version, t->path,
				   ckpt_source_name(t->plan.kind[t->at]),
				   ckpt_strerror(t->err));
		mstats_read(t->d, t->plan.kind[t->at], size);
		rtry_reply(t, 0, size);
		return;
	}
	if (!t->err)
		t->err = err;
	if (t->c->closed || t->d->stopping || !retryable(err) ||
	    t->at + 1 >= t->plan.n) {
		rtry_reply(t, t->err, 0);
		return;
	}
	log_printf(LOG_WARNING, "read: %s/%s/%s: source %s failed (%s); trying %s",
		   t->job, t->version, t->path,
		   ckpt_source_name(t->plan.kind[t->at]), ckpt_strerror(err),
		   ckpt_source_name(t->plan.kind[t->at + 1]));
	t->at++;
	read_next(t);
}

void read_drop(struct rtry *t)
{
	t->c->nreads--;
	conn_put(t->c);
	free(t);
}

int read_may(struct conn *c, const char *job)
{
	struct job *j = catalog_job(c->d->cat, job);
	int ret = j ? session_may(c, j) : -CKPT_ENOJOB;
	int owner;

	if (ret == -CKPT_ENOJOB &&
	    (owner = cluster_job_uid(c->d, job, (uint32_t)c->uid)) >= 0)
		ret = c->uid == 0 || c->uid == (uid_t)owner ? 0 : -EACCES;
	return ret;
}

void op_read(struct conn *c, const struct proto_msg *req)
{
	struct job *j = catalog_job(c->d->cat, req->job);
	struct version *v = NULL;
	struct rtry *t;
	int ret;

	ret = read_may(c, req->job);
	if (ret < 0)
		goto out_reply;
	v = j ? catalog_version(c->d->cat, req->job, req->version) : NULL;
	/* An open version is read once the writes sent before are on disk,
	 * so that a writer reads back what it wrote. */
	if (v && !version_dead(v) && v->inflight) {
		ret = defer(c, v, req);
		if (ret == 0)
			return;
		goto out_reply;
	}
	ret = -CKPT_EPROTO;
	if (!lease_of(c) || req->len > READ_MAX || req->ring_off > c->lease->size ||
	    req->len > c->lease->size - req->ring_off)
		goto out_reply;
	t = calloc(1, sizeof(*t));
	ret = -ENOMEM;
	if (!t)
		goto out_reply;
	t->d = c->d;
	t->c = c;
	req_keep(&t->req, t->job, t->version, t->path, req);
	ret = plan_file(c->d, req->job, req->version, (uint32_t)c->uid,
			req->path, &t->plan, NULL, 0);
	if (ret < 0) {
		free(t);
		goto out_reply;
	}
	conn_get(c);
	c->nreads++;
	read_next(t);
	return;
out_reply:
	conn_reply_status(c, req, ret);
}
