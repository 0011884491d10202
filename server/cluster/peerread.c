/*
 * peerread.c - reads of files that another node's part holds: forwarding a
 * client's READ to that node, and serving such READs from this node's
 * local copy (see cluster.h: cluster_read; cluster_i.h).
 *
 * Forwarding: parts.c says which node holds the path.  The client's READ
 * (at most READ_MAX bytes, as on the local path) is cut into pieces of at
 * most PEER_MAX_SHARD bytes; each goes as a PEER_READ and comes back with
 * the CRC32C of its bytes, checked before they reach the client's lease.
 * Pieces to one node wait in a FIFO while PEERREAD_BUDGET bytes of reads
 * to it are in flight: a node never asks another for more than that at
 * once, so the replies it asked for can never fill the other's reply cap
 * (LINK_MAX_QUEUED) and stop it reading this node, whatever the clients
 * do.  A piece whose node is down fails the read with EHOSTDOWN; one not
 * answered within CLUSTER_READ_MS with ETIMEDOUT.
 *
 * Serving: a PEER_READ of a file of this node's sealed local part is
 * resolved on the loop through the version's read index (rindex.h: only
 * the records the range needs, found in log time) and read on the worker
 * pool, each record read whole once and checked against its CRC before its
 * pieces are copied, as the local read path does; a record the range takes
 * only pieces of comes from the record cache (reccache.h), since the
 * asking node cuts a client's READ into pieces of PEER_MAX_SHARD.  A part
 * whose local copy was evicted answers ENODATA (the PFS copy is not read
 * for a peer yet).
 *
 * Threads: the loop thread; the serving task's run() on a worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "cluster.h"
#include "cluster_i.h"
#include "crc32c.h"
#include "manifest.h"
#include "pool.h"
#include "reccache.h"
#include "rindex.h"
#include "sys.h"

#define PEERREAD_BUDGET (32u << 20)   /* READ bytes in flight to a node */
/* Records read whole for served pieces, kept for the next pieces while
 * nobody uses them (reccache.h): the most recent one whatever its size. */
#define PEERREAD_CACHE  (64u << 20)

struct fpiece {
	struct list wlink;        /* in peerreads.wait[node] while waiting */
	struct fread *r;
	uint64_t at;              /* offset in dst */
	uint32_t len;
};

struct fread {
	struct ckptd *d;
	struct cluster_read *t;   /* the client's READ (cluster.h) */
	uint32_t node;
	uint8_t *dst;             /* t->dst */
	uint64_t size;            /* bytes the reply will say */
	uint64_t off;             /* in the file */
	uint32_t pending;
	int32_t err;
	struct fpiece *pieces;
};

struct peerreads {
	uint64_t *inflight;       /* by node: READ bytes asked, not answered */
	struct list *wait;        /* by node: struct fpiece, FIFO */
	struct reccache *recs;    /* served: records of which a read takes
				   * pieces (any thread) */
};

static struct peerreads *pr_of(const struct cluster *cl)
{
	return cl->reads;
}

static void fread_finish(struct fread *r)
{
	r->t->done(r->t, r->err, r->size);
	free(r->pieces);
	free(r);
}

static void piece_settle(struct fpiece *pc, int err)
{
	struct fread *r = pc->r;

	if (err < 0 && !r->err)
		r->err = err == -ENOTCONN ? -EHOSTDOWN : err;
	if (--r->pending == 0)
		fread_finish(r);
}

static void pump(struct cluster *cl, uint32_t node);

static void on_read_reply(struct ckptd *d, void *arg, int status,
			  const uint8_t *frame, size_t len)
{
	struct fpiece *pc = arg;
	struct fread *r = pc->r;
	struct cluster *cl = d->cluster;
	uint32_t node = r->node;
	struct peer_data pd;
	int ret = status;

	if (ret == 0) {
		ret = peer_decode_data(frame, len, &pd);
		if (ret == 0 && pd.len != pc->len)
			ret = -CKPT_EPROTO;
		if (ret == 0)
			memcpy(r->dst + pc->at, pd.data, pd.len);
	}
	if (cl)
		pr_of(cl)->inflight[node] -= pc->len;
	piece_settle(pc, ret);
	if (cl)
		pump(cl, node);
}

/* Send pc's PEER_READ; settles it at once if that fails. */
static void piece_send(struct cluster *cl, struct fpiece *pc)
{
	struct fread *r = pc->r;
	struct peer_read prq;
	size_t cap = PEER_FRAME_CAP(0);
	uint32_t seq = link_seq(cl);
	uint8_t *buf;
	int n, ret;

	memset(&prq, 0, sizeof(prq));
	snprintf(prq.job, sizeof(prq.job), "%s", r->t->req->job);
	snprintf(prq.version, sizeof(prq.version), "%s", r->t->req->version);
	snprintf(prq.path, sizeof(prq.path), "%s", r->t->req->path);
	prq.off = r->off + pc->at;
	prq.len = pc->len;
	buf = malloc(cap);
	n = buf ? peer_encode_read(buf, cap, seq, &prq) : -ENOMEM;
	if (n < 0) {
		free(buf);
		ret = n;
	} else {
		ret = link_request(cl, r->node, buf, (size_t)n, seq,
				   CLUSTER_READ_MS, on_read_reply, pc);
	}
	if (ret < 0) {
		piece_settle(pc, ret);
		return;
	}
	pr_of(cl)->inflight[r->node] += pc->len;
}

/* Send what waits for node while its budget allows (always one). */
static void pump(struct cluster *cl, uint32_t node)
{
	struct peerreads *prs = pr_of(cl);
	struct list *w = &prs->wait[node];

	while (!list_empty(w)) {
		struct fpiece *pc = list_entry(w->next, struct fpiece, wlink);

		if (prs->inflight[node] &&
		    prs->inflight[node] + pc->len > PEERREAD_BUDGET)
			return;
		list_del(&pc->wlink);
		piece_send(cl, pc);
	}
}

/* A read of t's file from the node whose part holds it: loc from
 * parts_locate(). */
static int forward(struct cluster *cl, struct cluster_read *t,
		   const struct part_loc *loc)
{
	const struct proto_msg *req = t->req;
	struct fread *r;
	uint64_t size, at;
	uint32_t i, np, node = loc->node;

	if (node == cl->self || cl->peers[node].st != P_UP)
		return -EHOSTDOWN;
	if (!(loc->copies & CKPT_COPY_LOCAL))
		return -ENODATA;
	size = req->off >= loc->size ? 0 : loc->size - req->off;
	if (size > req->len)
		size = req->len;
	r = calloc(1, sizeof(*r));
	np = (uint32_t)((size + PEER_MAX_SHARD - 1) / PEER_MAX_SHARD);
	if (!r || !(r->pieces = calloc(np ? np : 1, sizeof(*r->pieces)))) {
		free(r);
		return -ENOMEM;
	}
	r->d = cl->d;
	r->t = t;
	r->node = node;
	r->dst = t->dst;
	r->size = size;
	r->off = req->off;
	r->pending = 1 + np;
	for (i = 0, at = 0; i < np; i++, at += PEER_MAX_SHARD) {
		struct fpiece *pc = &r->pieces[i];

		pc->r = r;
		pc->at = at;
		pc->len = (uint32_t)(size - at < PEER_MAX_SHARD ? size - at
							       : PEER_MAX_SHARD);
		list_add_tail(&pr_of(cl)->wait[node], &pc->wlink);
	}
	pump(cl, node);
	if (--r->pending == 0)
		fread_finish(r);
	return 0;
}

int cluster_read_owner(struct cluster_read *t)
{
	struct cluster *cl = t->d->cluster;
	struct part_loc loc;

	if (!cl || !pr_of(cl) ||
	    parts_locate(cl, t->req->job, t->req->version, t->uid,
			 t->req->path, &loc) < 0)
		return -ENOENT;
	return forward(cl, t, &loc);
}

/* This node's own part v, as parts_locate() gives another's, its manifest
 * decoded into *man (released by the caller).  0 or -errno. */
static int own_loc(struct version *v, const char *path, struct manifest *man,
		   struct part_loc *loc)
{
	void *buf = NULL;
	size_t len = 0;
	uint32_t i;
	int ret;

	ret = catalog_manifest_encode(v, v->level, &buf, &len);
	if (ret < 0)
		return ret;
	ret = manifest_decode(buf, len, man);
	free(buf);
	if (ret < 0)
		return ret;
	for (i = 0; i < man->nfiles; i++)
		if (!strcmp(man->files[i].path, path))
			break;
	if (i == man->nfiles) {
		manifest_release(man);
		return -ENOENT;
	}
	loc->fi = MAN_DATA(man, i);     /* a hard link reads its file */
	loc->size = man->files[loc->fi].size;
	loc->open_id = v->open_id;
	loc->copies = v->copies;
	loc->man = man;
	return 0;
}

int cluster_read_shards(struct cluster_read *t)
{
	struct cluster *cl = t->d->cluster;
	struct part_loc loc;
	struct manifest man;
	struct version *v;
	int ret, own = t->own;

	if (!cl || !pr_of(cl))
		return -ENOENT;
	if (own) {
		/* this node's copy failed: decode it from its shards */
		v = catalog_version(cl->d->cat, t->req->job, t->req->version);
		if (!v || v->state != CKPT_ST_SEALED || version_dead(v))
			return -ENOENT;
		memset(&loc, 0, sizeof(loc));
		loc.node = cl->self;
		ret = own_loc(v, t->req->path, &man, &loc);
		if (ret < 0)
			return ret;
	} else {
		ret = parts_locate(cl, t->req->job, t->req->version,
				   t->uid, t->req->path, &loc);
		if (ret < 0)
			return ret;
	}
	/* degraded_read() may answer t (and free it) before it returns */
	ret = loc.copies & CKPT_COPY_PEERS ? degraded_read(cl, t, &loc)
					   : -ENODATA;
	if (own)
		manifest_release(&man);
	return ret;
}

/* ---- reads: serving ---------------------------------------------------------- */

/* A record a served read needs, with the pieces it gives (rindex.h). */
struct srec {
	struct man_rec rec;       /* a copy: the task does not touch v */
	uint32_t first;           /* its first piece in sread.pieces */
};

struct sread {
	struct pool_task pt;
	struct cluster *cl;
	struct link *l;           /* held */
	struct version *v;        /* referenced */
	uint64_t open_id;         /* v's */
	struct reccache *cache;   /* peerreads.recs */
	uint32_t seq;
	uint64_t off;
	uint32_t len;
	char segdir[600];
	struct rpiece *pieces;    /* the range's, chained by record */
	struct srec *recs;        /* each record once, in file order */
	uint32_t nrecs;
	uint8_t *frame;
	size_t flen;
};

/* Open the segment of record r as *fd (*fdseg's, reopened when the
 * segment changes).  0 or -errno. */
static int sread_fd(const struct sread *s, const struct man_rec *r, int *fd,
		    uint32_t *fdseg)
{
	char path[700];

	if (*fd >= 0 && *fdseg == r->seg)
		return 0;
	if (*fd >= 0)
		close(*fd);
	snprintf(path, sizeof(path), "%s/%08u", s->segdir, r->seg);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*fdseg = r->seg;
	return 0;
}

/*
 * Build the reply in s->frame: the range's bytes go straight to their
 * place in the frame (PEER_DATA_AT), each record read once and checked
 * against its CRC32C first.  A record the range takes whole is read into
 * the frame itself; one it takes part of (at most the first and the last)
 * comes from the record cache (reccache.h: read and checked once for all
 * the pieces of it that the asking node's reads cut it into) and its
 * pieces are copied from there.  A range that is one whole record sends
 * that record's CRC as the data's.
 */
static int sread_run(struct pool_task *t)
{
	struct sread *s = (struct sread *)t;
	size_t cap = PEER_FRAME_CAP(s->len);
	uint64_t covered = 0;
	struct peer_data pd;
	uint32_t i, p, fdseg = 0;
	struct rcent *e;
	uint8_t *out;
	int fd = -1, n, ret = 0;

	s->frame = malloc(cap);
	if (!s->frame)
		return -ENOMEM;
	out = s->frame + PEER_DATA_AT;
	for (i = 0; i < s->nrecs; i++)
		for (p = s->recs[i].first; p != RPIECE_END;
		     p = s->pieces[p].next)
			covered += s->pieces[p].len;
	if (covered != s->len)
		memset(out, 0, s->len);          /* holes read as zeros */
	for (i = 0; i < s->nrecs && ret == 0; i++) {
		const struct man_rec *r = &s->recs[i].rec;
		const struct rpiece *pc = &s->pieces[s->recs[i].first];
		int whole = pc->src == 0 && pc->len == r->len &&
			    pc->next == RPIECE_END;
		uint8_t *buf = out + pc->dst;

		ret = sread_fd(s, r, &fd, &fdseg);
		if (ret == 0 && whole) {
			ret = sys_pread_all(fd, buf, r->len, r->seg_off);
			if (ret == 0 && crc32c(buf, r->len) != r->crc)
				ret = -CKPT_ECORRUPT;
			continue;
		}
		if (ret == 0)
			ret = reccache_read(s->cache, s->open_id, r, fd, &e);
		if (ret < 0)
			break;
		for (p = s->recs[i].first; p != RPIECE_END;
		     p = s->pieces[p].next)
			memcpy(out + s->pieces[p].dst,
			       reccache_bytes(e) + s->pieces[p].src,
			       s->pieces[p].len);
		reccache_put(s->cache, e);
	}
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		return ret;
	pd.len = s->len;
	pd.data = out;
	if (s->nrecs == 1 && covered == s->len &&
	    s->recs[0].rec.len == s->len)
		pd.crc = s->recs[0].rec.crc;     /* the range is the record */
	else
		pd.crc = crc32c(out, s->len);
	n = peer_encode_data(s->frame, cap, s->seq, &pd);
	if (n < 0)
		return n;
	s->flen = (size_t)n;
	return 0;
}

static void sread_free(struct sread *s)
{
	version_put(s->cl->d->cat, s->v);
	link_drop(s->l);
	free(s->pieces);
	free(s->recs);
	free(s->frame);
	free(s);
}

static void sread_done(struct pool_task *t)
{
	struct sread *s = (struct sread *)t;

	if (t->result < 0) {
		link_answer_status(s->l, PEER_READ | PEER_REPLY, s->seq,
				   t->result);
	} else {
		link_answer(s->l, s->frame, s->flen);
		s->frame = NULL;
	}
	sread_free(s);
}

static void sread_drop(struct pool_task *t)
{
	sread_free((struct sread *)t);
}

/*
 * The records s's range needs, through v's read index: s->pieces chained
 * by record, and each record's copy once in s->recs.  Loop thread (the
 * index is v's).  0, or -ENOMEM with nothing left allocated.
 */
static int sread_plan(struct sread *s, struct version *v, uint32_t fi)
{
	uint32_t i, np, *first = NULL;
	int ret;

	ret = rindex_resolve(v, fi, s->off, s->off + s->len, NULL, &s->pieces,
			     &np);
	if (ret < 0)
		return ret;
	first = malloc(sizeof(*first) * (np ? np : 1));
	s->recs = calloc(np ? np : 1, sizeof(*s->recs));
	ret = -ENOMEM;
	if (!first || !s->recs)
		goto out;
	ret = rindex_chain(s->pieces, np, first);
	if (ret < 0)
		goto out;
	for (i = 0; i < np; i++) {
		if (first[i] == RPIECE_END)
			continue;
		s->recs[s->nrecs].rec = v->recs[s->pieces[i].rec];
		s->recs[s->nrecs++].first = i;
	}
out:
	free(first);
	if (ret < 0) {
		free(s->pieces);
		free(s->recs);
		s->pieces = NULL;
		s->recs = NULL;
	}
	return ret;
}

void peerread_on_read(struct cluster *cl, struct link *l, const uint8_t *f,
		   size_t n, const struct peer_hdr *h)
{
	struct ckptd *d = cl->d;
	struct peer_read pr;
	struct version *v;
	struct sread *s;
	uint64_t size;
	int fi, ret;

	ret = peer_decode_read(f, n, &pr);
	if (ret < 0)
		goto out_refuse;
	v = catalog_version(d->cat, pr.job, pr.version);
	ret = -CKPT_ENOVERSION;
	if (!v || v->state != CKPT_ST_SEALED)
		goto out_refuse;
	ret = -ENODATA;          /* evicted: read it from the PFS */
	if (!(v->copies & CKPT_COPY_LOCAL))
		goto out_refuse;
	fi = version_file(v, pr.path, 0);
	if (fi < 0) {
		ret = fi;
		goto out_refuse;
	}
	size = v->files[fi].size;
	ret = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out_refuse;
	s->off = pr.off;
	s->len = pr.off >= size ? 0
		 : (uint32_t)(size - pr.off < pr.len ? size - pr.off : pr.len);
	ret = sread_plan(s, v, (uint32_t)fi);
	if (ret < 0) {
		free(s);
		goto out_refuse;
	}
	s->cl = cl;
	s->l = link_hold(l);
	s->v = v;
	version_get(v);
	s->open_id = v->open_id;
	s->cache = cl->reads->recs;
	s->seq = h->seq;
	snprintf(s->segdir, sizeof(s->segdir), "%s", d->segs->dir);
	pool_task_init(&s->pt, sread_run, sread_done, sread_drop);
	pool_submit(d->pool, &s->pt, 1);
	return;
out_refuse:
	link_answer_status(l, PEER_READ | PEER_REPLY, h->seq, ret);
}


/* ---- life ------------------------------------------------------------------ */

int peerread_open(struct cluster *cl)
{
	struct peerreads *prs = calloc(1, sizeof(*prs));
	uint32_t i;

	if (!prs)
		return -ENOMEM;
	prs->inflight = calloc(cl->place.n, sizeof(*prs->inflight));
	prs->wait = calloc(cl->place.n, sizeof(*prs->wait));
	if (!prs->inflight || !prs->wait ||
	    reccache_new(PEERREAD_CACHE, &prs->recs) < 0) {
		free(prs->inflight);
		free(prs->wait);
		free(prs);
		return -ENOMEM;
	}
	for (i = 0; i < cl->place.n; i++)
		list_init(&prs->wait[i]);
	cl->reads = prs;
	return 0;
}

void peerread_close(struct cluster *cl)
{
	struct peerreads *prs = cl->reads;
	struct list *pos, *tmp;
	uint32_t i;

	if (!prs)
		return;
	/* Pieces still waiting (shutdown): their reads fail. */
	for (i = 0; i < cl->place.n; i++)
		list_for_each_safe(pos, tmp, &prs->wait[i]) {
			struct fpiece *pc = list_entry(pos, struct fpiece, wlink);

			list_del(&pc->wlink);
			piece_settle(pc, -ECANCELED);
		}
	free(prs->inflight);
	free(prs->wait);
	reccache_free(prs->recs);   /* the pool is closed: no task reads */
	free(prs);
	cl->reads = NULL;
}
