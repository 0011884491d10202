/*
 * degraded.c - a READ of a file whose node is down, decoded from the
 * shards its peers hold (see cluster_i.h: degraded_read).
 *
 * The part's stream (protect.c) is its manifest's data records in manifest
 * order, cut into stripes of k chunks of PROTECT_CHUNK bytes; chunk 0 of a
 * stripe was in the owner's local copy (lost with it), shards 1..k+m-1 are
 * on the peers place.h names.  A read takes the records of the file that
 * touch the range asked, the stream span that holds those records whole,
 * and, stripe by stripe, k chunks from the holders that are up (this node's
 * own shard is read from its store): data chunks first, parity to fill.
 * Each chunk comes with its holder's CRC check; one that fails (or a
 * holder that does not answer) is replaced by another shard while any is
 * left.  ISA-L rebuilds the data chunks (lib/ec, on the worker pool); then
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
#include "ec.h"
#include "manifest.h"
#include "pool.h"
#include "session.h"

#define DREAD_MAX_SPAN (256ull << 20)   /* stream bytes one read may need */

struct drec {                    /* a record of the file, in manifest order */
	uint64_t file_off;
	uint32_t len, crc;
	int zero;                /* stands for zeros: no bytes in the stream */
	uint64_t soff;           /* data: its first byte in the stream */
};

struct dread {
	struct pool_task pt;
	struct cluster *cl;
	struct conn *c;          /* referenced: its lease stays */
	uint32_t seq;
	uint8_t *dst;            /* in c's lease */
	uint64_t off, size;      /* in the file: what the reply gives */
	uint32_t owner;
	uint64_t open_id;
	uint32_t k, m;
	struct drec *recs;
	uint32_t nrecs;
	uint64_t first;          /* first stripe of the span */
	uint64_t nstripes;       /* stripes of the span */
	uint8_t *span;           /* nstripes * k * chunk bytes */
	uint64_t stripe;         /* the one being fetched: first + i */
	uint8_t *frag[EC_MAX_FRAGS];   /* its k + m chunks */
	uint8_t want[EC_MAX_FRAGS];    /* asked for this stripe */
	uint8_t have[EC_MAX_FRAGS];    /* arrived, checked */
	uint8_t bad[EC_MAX_FRAGS];     /* failed for this read: not again */
	uint32_t pending;        /* chunk requests in flight */
	int task;                /* 1: decoding a stripe, 2: assembling */
	int32_t err;
	char what[256];          /* job/version/path, for the log */
};

static void dread_free(struct dread *r)
{
	uint32_t i;

	for (i = 0; i < r->k + r->m; i++)
		free(r->frag[i]);
	free(r->span);
	free(r->recs);
	free(r);
}

static void dread_finish(struct dread *r)
{
	struct proto_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_READ;
	msg.seq = r->seq;
	msg.status = r->err;
	msg.size = r->err ? 0 : r->size;
	conn_reply(r->c, &msg);
	conn_put(r->c);
	dread_free(r);
}

static void fetch_stripe(struct dread *r);
static void stripe_reset(struct dread *r);

/* Is shard s of the owner's stripes readable now: held here, or its holder
 * up? */
static int shard_reachable(const struct dread *r, uint32_t s)
{
	const struct cluster *cl = r->cl;
	uint32_t h = place_peer(&cl->place, r->owner, s);

	return h == cl->self || cl->peers[h].st == P_UP;
}

/* ---- decode and assembly, on the pool ----------------------------------- */

static int decode_run(struct dread *r)
{
	uint8_t lost[EC_MAX_FRAGS] = { 0 };
	uint32_t i, n = r->k + r->m;
	struct ec *ec;
	int ret;

	for (i = 0; i < n; i++)
		lost[i] = !r->have[i];
	ret = ec_new((int)r->k, (int)r->m, &ec);
	if (ret < 0)
		return ret;
	ret = ec_reconstruct(ec, r->frag, lost, PROTECT_CHUNK);
	ec_free(ec);
	if (ret < 0)
		return -EIO;
	for (i = 0; i < r->k; i++)
		memcpy(r->span + ((r->stripe - r->first) * r->k + i) *
		       (uint64_t)PROTECT_CHUNK, r->frag[i], PROTECT_CHUNK);
	return 0;
}

/* Every record checked, then laid over the range in manifest order. */
static int assemble_run(struct dread *r)
{
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

static int dtask_run(struct pool_task *t)
{
	struct dread *r = (struct dread *)t;

	return r->task == 1 ? decode_run(r) : assemble_run(r);
}

static void dtask_done(struct pool_task *t)
{
	struct dread *r = (struct dread *)t;
	int task = r->task;

	r->task = 0;
	if (t->result < 0) {
		r->err = t->result;
		log_printf(LOG_ERR, "degraded read of %s: %s", r->what,
			   ckpt_strerror(t->result));
		dread_finish(r);
		return;
	}
	if (task == 2 || r->stripe + 1 == r->first + r->nstripes) {
		if (task == 2) {
			dread_finish(r);
			return;
		}
		r->task = 2;
		pool_submit(r->cl->d->pool, &r->pt, 1);
		return;
	}
	r->stripe++;
	stripe_reset(r);
	fetch_stripe(r);
}

static void dtask_drop(struct pool_task *t)
{
	struct dread *r = (struct dread *)t;

	conn_put(r->c);
	dread_free(r);
}

/* ---- fetching a stripe's chunks ------------------------------------------ */

struct dchunk {
	struct dread *r;
	uint32_t shard;
};

static void chunk_back(struct dread *r, uint32_t s, int status)
{
	if (status == 0) {
		r->have[s] = 1;
	} else {
		r->bad[s] = 1;
		log_printf(LOG_WARNING, "degraded read of %s: shard %u of stripe %llu from %s: %s; trying another",
			   r->what, s, (unsigned long long)r->stripe,
			   cl_name(r->cl, place_peer(&r->cl->place, r->owner, s)),
			   ckpt_strerror(status));
	}
	if (--r->pending == 0)
		fetch_stripe(r);
}

static void on_local_chunk(struct ckptd *d, void *arg, int status)
{
	struct dchunk *dc = arg;

	chunk_back(dc->r, dc->shard, status);
	free(dc);
}

static void on_chunk_reply(struct ckptd *d, void *arg, int status,
			   const uint8_t *frame, size_t len)
{
	struct dchunk *dc = arg;
	struct dread *r = dc->r;
	struct peer_data pd;
	int ret = status;

	if (ret == 0) {
		ret = peer_decode_data_for(frame, len, PEER_SHARD_GET, &pd);
		if (ret == 0 && pd.len != PROTECT_CHUNK)
			ret = -CKPT_EPROTO;
		if (ret == 0)
			memcpy(r->frag[dc->shard], pd.data, PROTECT_CHUNK);
	}
	chunk_back(r, dc->shard, ret);
	free(dc);
}

/* Ask for shard s of the current stripe.  0, or -errno (not asked). */
static int ask(struct dread *r, uint32_t s)
{
	struct cluster *cl = r->cl;
	uint32_t h = place_peer(&cl->place, r->owner, s), seq;
	struct dchunk *dc = malloc(sizeof(*dc));
	struct peer_sget g;
	uint8_t *buf;
	int n, ret;

	if (!dc)
		return -ENOMEM;
	dc->r = r;
	dc->shard = s;
	if (h == cl->self) {
		ret = hold_chunk(cl, r->owner, r->open_id, s, r->stripe,
				 r->frag[s], on_local_chunk, dc);
		if (ret < 0)
			free(dc);
		return ret;
	}
	memset(&g, 0, sizeof(g));
	snprintf(g.owner, sizeof(g.owner), "%s", cl_name(cl, r->owner));
	g.open_id = r->open_id;
	g.shard = s;
	g.stripe = r->stripe;
	seq = link_seq(cl);
	buf = malloc(PEER_FRAME_CAP(0));
	n = buf ? peer_encode_sget(buf, PEER_FRAME_CAP(0), seq, &g) : -ENOMEM;
	if (n < 0) {
		free(buf);
		free(dc);
		return n;
	}
	ret = link_request(cl, h, buf, (size_t)n, seq, CLUSTER_READ_MS,
			   on_chunk_reply, dc);
	if (ret < 0)
		free(dc);
	return ret;
}

/* Ask for what the current stripe still needs; decode once k are in. */
static void fetch_stripe(struct dread *r)
{
	uint32_t s, n = r->k + r->m, have = 0, asked = 0;

	if (r->pending)
		return;
	for (s = 0; s < n; s++)
		have += r->have[s];
	if (have >= r->k) {
		r->task = 1;
		pool_submit(r->cl->d->pool, &r->pt, 1);
		return;
	}
	/* Data shards first (no decode work for them), then parity. */
	for (s = 1; s < n && have + asked < r->k; s++) {
		if (r->have[s] || r->bad[s] || r->want[s] ||
		    !shard_reachable(r, s))
			continue;
		r->want[s] = 1;
		if (ask(r, s) < 0) {
			r->bad[s] = 1;
			continue;
		}
		r->pending++;
		asked++;
	}
	if (!asked) {
		r->err = -EIO;
		log_printf(LOG_ERR, "degraded read of %s: stripe %llu has only %u of the %u shards it needs",
			   r->what, (unsigned long long)r->stripe, have, r->k);
		dread_finish(r);
	}
}

/* A new stripe: nothing asked or had yet (bad shards stay bad). */
static void stripe_reset(struct dread *r)
{
	memset(r->want, 0, sizeof(r->want));
	memset(r->have, 0, sizeof(r->have));
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

int degraded_read(struct cluster *cl, struct conn *c,
		  const struct proto_msg *req, const struct part_loc *loc)
{
	struct dread *r = calloc(1, sizeof(*r));
	uint32_t i;
	int ret = -ENOMEM;

	if (!r)
		return ret;
	r->cl = cl;
	r->seq = req->seq;
	r->owner = loc->node;
	r->open_id = loc->open_id;
	r->k = cl->place.k;
	r->m = cl->place.m;
	r->off = req->off;
	r->size = req->off >= loc->size ? 0 : loc->size - req->off;
	if (r->size > req->len)
		r->size = req->len;
	r->dst = c->lease->map + req->ring_off;
	snprintf(r->what, sizeof(r->what), "%.60s/%.40s/%.50s (%s is down)",
		 req->job, req->version, req->path, cl_name(cl, loc->node));
	for (i = 0; i < r->k + r->m; i++)
		if (!(r->frag[i] = malloc(PROTECT_CHUNK)))
			goto out_free;
	ret = plan(r, loc->man, loc->fi);
	if (ret < 0)
		goto out_free;
	pool_task_init(&r->pt, dtask_run, dtask_done, dtask_drop);
	r->c = c;
	conn_get(c);
	log_printf(LOG_INFO, "degraded read of %s: %llu bytes from %llu stripes",
		   r->what, (unsigned long long)r->size,
		   (unsigned long long)r->nstripes);
	if (!r->nstripes) {
		r->task = 2;
		pool_submit(cl->d->pool, &r->pt, 1);
		return 0;
	}
	r->stripe = r->first;
	stripe_reset(r);
	fetch_stripe(r);
	return 0;

out_free:
	dread_free(r);
	return ret;
}
