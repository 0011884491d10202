/*
 * sfetch.c - one stripe of an owner's part, fetched from the shards its
 * peers hold and decoded (see cluster_i.h: struct sfetch), for degraded
 * reads and rebuilds.
 *
 * Chunk 0 of a stripe is in the owner's own copy, which is what is missing
 * when this runs; shards 1..k+m-1 are on the peers the part's holder record
 * names (holders.c; place.h's placement for a part coded before records).  k of
 * them are asked for at once from holders that are up (this node's own
 * shard is read from its store): data shards first, which need no decode
 * work, then parity.  Each chunk comes checked against its holder's CRC; one
 * that fails, or a holder that does not answer, is marked bad for the
 * fetch and replaced by another shard while one is left.  ISA-L rebuilds
 * the missing data chunks on the worker pool, from tables kept for the
 * last erasure pattern (lib/ec), so a fetch that loses the same shards in
 * every stripe builds them once.
 *
 * Threads: the loop; the decode runs on a worker and touches only f.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_i.h"
#include "ec.h"
#include "pool.h"

struct schunk {
	struct sfetch *f;
	uint32_t shard;
};

static void fetch_more(struct sfetch *f);

/* Is shard s readable now: held here, or its holder up? */
static int reachable(const struct sfetch *f, uint32_t s)
{
	const struct cluster *cl = f->cl;
	uint32_t h = f->holder[s];

	if (h == HOLDER_NONE)
		return 0;              /* shard 0: the copy that is missing */
	return h == cl->self || cl->peers[h].st == P_UP;
}

static void finish(struct sfetch *f, int err)
{
	f->busy = 0;
	f->done(f, err);
}

/* ---- the decode, on the pool ------------------------------------------- */

static int decode_run(struct pool_task *t)
{
	struct sfetch *f = (struct sfetch *)t;
	uint8_t lost[EC_MAX_FRAGS] = { 0 };
	uint32_t i, n = f->k + f->m, need = 0;
	int ret;

	for (i = 0; i < n; i++) {
		lost[i] = !f->have[i];
		need |= i < f->k && lost[i];
	}
	if (need) {
		ret = ec_reconstruct(f->ec, f->frag, lost, PROTECT_CHUNK);
		if (ret < 0)
			return -EIO;
	}
	if (f->out)
		for (i = 0; i < f->k; i++)
			memcpy(f->out + (uint64_t)i * PROTECT_CHUNK, f->frag[i],
			       PROTECT_CHUNK);
	return 0;
}

static void decode_done(struct pool_task *t)
{
	struct sfetch *f = (struct sfetch *)t;

	if (t->result < 0)
		log_printf(LOG_ERR, "%s: stripe %llu does not decode: %s",
			   f->what, (unsigned long long)f->stripe,
			   ckpt_strerror(t->result));
	finish(f, t->result);
}

static void decode_drop(struct pool_task *t)
{
	finish((struct sfetch *)t, -ECANCELED);
}

/* ---- the chunks ----------------------------------------------------------- */

static void chunk_back(struct sfetch *f, uint32_t s, int status)
{
	if (status == 0) {
		f->have[s] = 1;
	} else {
		f->bad[s] = 1;
		log_printf(LOG_WARNING, "%s: shard %u of stripe %llu from %s: %s; trying another",
			   f->what, s, (unsigned long long)f->stripe,
			   f->holder[s] == HOLDER_NONE ? "no node"
						       : cl_name(f->cl, f->holder[s]),
			   ckpt_strerror(status));
	}
	if (--f->pending == 0)
		fetch_more(f);
}

static void on_local_chunk(struct ckptd *d, void *arg, int status)
{
	struct schunk *sc = arg;

	chunk_back(sc->f, sc->shard, status);
	free(sc);
}

static void on_chunk_reply(struct ckptd *d, void *arg, int status,
			   const uint8_t *frame, size_t len)
{
	struct schunk *sc = arg;
	struct sfetch *f = sc->f;
	struct peer_data pd;
	int ret = status;

	if (ret == 0) {
		ret = peer_decode_data_for(frame, len, PEER_SHARD_GET, &pd);
		if (ret == 0 && pd.len != PROTECT_CHUNK)
			ret = -CKPT_EPROTO;
		if (ret == 0)
			memcpy(f->frag[sc->shard], pd.data, PROTECT_CHUNK);
	}
	chunk_back(f, sc->shard, ret);
	free(sc);
}

/* Ask for shard s of the stripe.  0, or -errno (not asked). */
static int ask(struct sfetch *f, uint32_t s)
{
	struct cluster *cl = f->cl;
	uint32_t h = f->holder[s], seq;
	struct schunk *sc = malloc(sizeof(*sc));
	struct peer_sget g;
	uint8_t *buf;
	int n, ret;

	if (!sc)
		return -ENOMEM;
	sc->f = f;
	sc->shard = s;
	if (h == cl->self) {
		ret = hold_chunk(cl, f->owner, f->open_id, s, f->stripe,
				 f->frag[s], on_local_chunk, sc);
		if (ret < 0)
			free(sc);
		return ret;
	}
	memset(&g, 0, sizeof(g));
	snprintf(g.owner, sizeof(g.owner), "%s", cl_name(cl, f->owner));
	g.open_id = f->open_id;
	g.shard = s;
	g.stripe = f->stripe;
	seq = link_seq(cl);
	buf = malloc(PEER_FRAME_CAP(0));
	n = buf ? peer_encode_sget(buf, PEER_FRAME_CAP(0), seq, &g) : -ENOMEM;
	if (n < 0) {
		free(buf);
		free(sc);
		return n;
	}
	ret = link_request(cl, h, buf, (size_t)n, seq, CLUSTER_READ_MS,
			   on_chunk_reply, sc);
	if (ret < 0)
		free(sc);
	return ret;
}

/* Ask for what the stripe still needs; decode once k are in. */
static void fetch_more(struct sfetch *f)
{
	uint32_t s, n = f->k + f->m, have = 0, asked = 0;

	if (f->pending)
		return;
	for (s = 0; s < n; s++)
		have += f->have[s];
	if (have >= f->k) {
		pool_submit(f->cl->d->pool, &f->pt, 1);
		return;
	}
	for (s = 1; s < n && have + asked < f->k; s++) {
		if (f->have[s] || f->bad[s] || f->want[s] || !reachable(f, s))
			continue;
		f->want[s] = 1;
		if (ask(f, s) < 0) {
			f->bad[s] = 1;
			continue;
		}
		f->pending++;
		asked++;
	}
	if (!asked) {
		log_printf(LOG_ERR, "%s: stripe %llu has only %u of the %u shards it needs",
			   f->what, (unsigned long long)f->stripe, have, f->k);
		finish(f, -EIO);
	}
}

/* ---- the interface -------------------------------------------------------- */

int sfetch_init(struct sfetch *f, struct cluster *cl, uint32_t owner,
		uint64_t open_id, sfetch_fn done)
{
	uint32_t i;
	int ret;

	const struct man_holders *rec;

	memset(f, 0, sizeof(*f));
	f->cl = cl;
	f->owner = owner;
	f->open_id = open_id;
	rec = holders_of(cl, owner, open_id, f->holder + 1);
	f->holder[0] = HOLDER_NONE;
	f->k = rec ? rec->k : cl->place.k;
	f->m = rec ? rec->m : cl->place.m;
	f->done = done;
	snprintf(f->what, sizeof(f->what), "%s's part %016llx",
		 cl_name(cl, owner), (unsigned long long)open_id);
	pool_task_init(&f->pt, decode_run, decode_done, decode_drop);
	ret = ec_new((int)f->k, (int)f->m, &f->ec);
	if (ret < 0)
		return ret;
	for (i = 0; i < f->k + f->m; i++)
		if (!(f->frag[i] = malloc(PROTECT_CHUNK))) {
			sfetch_release(f);
			return -ENOMEM;
		}
	return 0;
}

void sfetch_release(struct sfetch *f)
{
	uint32_t i;

	for (i = 0; i < EC_MAX_FRAGS; i++) {
		free(f->frag[i]);
		f->frag[i] = NULL;
	}
	ec_free(f->ec);
	f->ec = NULL;
}

void sfetch_stripe(struct sfetch *f, uint64_t stripe, uint8_t *out)
{
	f->stripe = stripe;
	f->out = out;
	f->busy = 1;
	memset(f->want, 0, sizeof(f->want));
	memset(f->have, 0, sizeof(f->have));
	fetch_more(f);
}
