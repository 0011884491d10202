/*
 * degraded.c - a READ of a file whose node is down, decoded from the
 * shards its peers hold (see cluster_i.h: degraded_read).
 *
 * The part's stream (protect.c) is its manifest's data records in manifest
 * order, cut into stripes of k chunks of PROTECT_CHUNK bytes; chunk 0 of a
 * stripe was in the owner's local copy (lost with it), shards 1..k+m-1 are
 * on the peers place.h names.  A read takes the records of the file that
 * touch the range asked, the stream span that holds those records whole,
 * and, stripe by stripe, k chunks from the holders that are up (sfetch.c:
 * data chunks first, parity to fill, a chunk that fails its holder's CRC
 * replaced by another shard while one is left, ISA-L on the pool).  Then
 * every record is checked against its CRC32C before its bytes reach the
 * client's lease, later records over earlier ones, zero records as zeros.
 *
 * Stripes are fetched one after another (the k chunks of one in parallel),
 * so one read holds at most its span plus k chunks.  More than m shards of
 * a stripe unreadable: the read fails with EIO, and the log says which.
 *
 * Threads: the loop thread; the decode and assembly tasks on a worker
 * touch only their read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cluster.h"
#include "cluster_i.h"
#include "crc32c.h"
#include "manifest.h"
#include "pool.h"

#define DREAD_MAX_SPAN (256ull << 20)   /* stream bytes one read may need */

struct drec {                    /* a record of the file, in manifest order */
	uint64_t file_off;
	uint32_t len, crc;
	int zero;                /* stands for zeros: no bytes in the stream */
	uint64_t soff;           /* data: its first byte in the stream */
};

struct dread {
	struct pool_task pt;     /* the assembly */
	struct sfetch f;         /* the stripe being fetched */
	struct cluster *cl;
	struct cluster_read *t;  /* the client's READ (cluster.h) */
	uint8_t *dst;            /* t->dst */
	uint64_t off, size;      /* in the file: what the reply gives */
	uint32_t k, m;
	struct drec *recs;
	uint32_t nrecs;
	uint64_t first;          /* first stripe of the span */
	uint64_t nstripes;       /* stripes of the span */
	uint8_t *span;           /* nstripes * k * chunk bytes */
	int32_t err;
	char what[256];          /* job/version/path, for the log */
};

static void dread_free(struct dread *r)
{
	sfetch_release(&r->f);
	free(r->span);
	free(r->recs);
	free(r);
}

static void dread_finish(struct dread *r)
{
	r->t->done(r->t, r->err, r->size);
	dread_free(r);
}

/* ---- assembly, on the pool ------------------------------------------------ */

/* Every record checked, then laid over the range in manifest order. */
static int assemble_run(struct pool_task *t)
{
	struct dread *r = (struct dread *)t;
	uint64_t base = r->first * r->k * (uint64_t)PROTECT_CHUNK;
	uint32_t i;

	memset(r->dst, 0, r->size);
	for (i = 0; i < r->nrecs; i++) {
		const struct drec *d = &r->recs[i];
		uint64_t a = d->file_off > r->off ? d->file_off : r->off;
		uint64_t z = d->file_off + d->len < r->off + r->size
			     ? d->file_off + d->len : r->off + r->size;
		const uint8_t *src;

		if (a >= z)
			continue;
		if (d->zero) {
			memset(r->dst + (a - r->off), 0, z - a);
			continue;
		}
		src = r->span + (d->soff - base);
		if (crc32c(src, d->len) != d->crc)
			return -CKPT_ECORRUPT;
		memcpy(r->dst + (a - r->off), src + (a - d->file_off), z - a);
	}
	return 0;
}

static void assemble_done(struct pool_task *t)
{
	struct dread *r = (struct dread *)t;

	if (t->result < 0) {
		r->err = t->result;
		log_printf(LOG_ERR, "degraded read of %s: %s", r->what,
			   ckpt_strerror(t->result));
	}
	dread_finish(r);
}

static void assemble_drop(struct pool_task *t)
{
	struct dread *r = (struct dread *)t;

	r->t->drop(r->t);
	dread_free(r);
}

/* ---- the span, stripe by stripe -------------------------------------------- */

static uint8_t *stripe_out(struct dread *r, uint64_t stripe)
{
	return r->span + (stripe - r->first) * r->k * (uint64_t)PROTECT_CHUNK;
}

static void on_stripe(struct sfetch *f, int err)
{
	struct dread *r = (struct dread *)((char *)f -
					   offsetof(struct dread, f));

	if (err == -ECANCELED) {     /* the pool is closing */
		r->t->drop(r->t);
		dread_free(r);
		return;
	}
	if (err < 0) {
		r->err = err;
		dread_finish(r);
		return;
	}
	if (f->stripe + 1 < r->first + r->nstripes) {
		sfetch_stripe(f, f->stripe + 1, stripe_out(r, f->stripe + 1));
		return;
	}
	pool_submit(r->cl->d->pool, &r->pt, 1);
}

/* ---- the read ------------------------------------------------------------ */

/* The file's records (every record's stream place computed on the way)
 * and the span of stripes that holds those touching [off, off + size). */
static int plan(struct dread *r, const struct manifest *man, uint32_t fi)
{
	uint64_t soff = 0, lo = UINT64_MAX, hi = 0, sb;
	uint32_t i, n = 0;

	r->recs = calloc(man->nrecs ? man->nrecs : 1, sizeof(*r->recs));
	if (!r->recs)
		return -ENOMEM;
	for (i = 0; i < man->nrecs; i++) {
		const struct man_rec *mr = &man->recs[i];
		int zero = mr->seg == MAN_SEG_ZERO;
		uint64_t at = soff;

		if (!zero)
			soff += mr->len;
		if (mr->file != fi || mr->file_off >= r->off + r->size ||
		    mr->file_off + mr->len <= r->off)
			continue;
		r->recs[n++] = (struct drec){ mr->file_off, mr->len, mr->crc,
					      zero, at };
		if (!zero && mr->len) {
			lo = at < lo ? at : lo;
			hi = at + mr->len > hi ? at + mr->len : hi;
		}
	}
	r->nrecs = n;
	/* A manifest without records for a file with bytes: an evicted
	 * copy's (its records dropped), not one the shards can serve. */
	if (!man->nrecs && man->files[fi].size)
		return -ENODATA;
	if (lo == UINT64_MAX) {      /* only zeros, or nothing stored */
		r->nstripes = 0;
		return 0;
	}
	sb = (uint64_t)r->k * PROTECT_CHUNK;
	r->first = lo / sb;
	r->nstripes = (hi + sb - 1) / sb - r->first;
	if (r->nstripes * sb > DREAD_MAX_SPAN)
		return -EFBIG;
	r->span = malloc(r->nstripes * sb);
	return r->span ? 0 : -ENOMEM;
}

int degraded_read(struct cluster *cl, struct cluster_read *t,
		  const struct part_loc *loc)
{
	const struct proto_msg *req = t->req;
	struct dread *r = calloc(1, sizeof(*r));
	int ret = -ENOMEM;

	if (!r)
		return ret;
	r->cl = cl;
	r->off = req->off;
	r->size = req->off >= loc->size ? 0 : loc->size - req->off;
	if (r->size > req->len)
		r->size = req->len;
	r->dst = t->dst;
	snprintf(r->what, sizeof(r->what), "%.60s/%.40s/%.50s (of %s)",
		 req->job, req->version, req->path, cl_name(cl, loc->node));
	ret = sfetch_init(&r->f, cl, loc->node, loc->open_id, on_stripe);
	if (ret < 0)
		goto out_free;
	r->k = r->f.k;            /* the part's code, as its record says */
	r->m = r->f.m;
	snprintf(r->f.what, sizeof(r->f.what), "degraded read of %.130s", r->what);
	ret = plan(r, loc->man, loc->fi);
	if (ret < 0)
		goto out_free;
	pool_task_init(&r->pt, assemble_run, assemble_done, assemble_drop);
	r->t = t;
	log_printf(LOG_INFO, "degraded read of %s: %llu bytes from %llu stripes",
		   r->what, (unsigned long long)r->size,
		   (unsigned long long)r->nstripes);
	if (!r->nstripes) {
		pool_submit(cl->d->pool, &r->pt, 1);
		return 0;
	}
	sfetch_stripe(&r->f, r->first, stripe_out(r, r->first));
	return 0;

out_free:
	dread_free(r);
	return ret;
}
