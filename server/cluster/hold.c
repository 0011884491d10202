/*
 * hold.c - the shards this node holds for its peers: the answers to
 * SHARD_PUT and SHARD_SEAL, the index of what is held, and dropping the
 * shards of parts their owners removed (see cluster_i.h, shardstore.h).
 *
 * A request is checked on the loop before anything touches the disk: the
 * frame decodes, the sender is the owner it names (a peer cannot write
 * shards as another node), this node is the one place.h gives that shard
 * of the owner's stripes, k and m are the cluster's, and the shard fits in
 * the store's capacity.  The disk work (shardstore.h) runs on the worker
 * pool; the reply goes when it is done: for SHARD_PUT once written, for
 * SHARD_SEAL once durable.  A link keeps reading only while its handlers
 * hold fewer than LINK_MAX_HOLDS frames, which bounds the memory one peer
 * can make this node spend.
 *
 * The index (struct held) lists every sealed shard: found by the scan at
 * start-up (which removes shards never sealed) and added by each seal.
 * Shards count against the store's capacity with the segments.
 *
 * Threads: the loop thread; the tasks' run() on a worker touches only its
 * task.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_i.h"
#include "crc32c.h"
#include "pool.h"
#include "shardstore.h"
#include "sys.h"

struct held {
	struct list link;
	struct shard_meta m;      /* crcs and man owned; never changed */
	uint32_t seen;            /* hold.gen[owner] when last announced */
	uint32_t refs;            /* SHARD_GET tasks reading m */
	int detached;             /* out of the index, freed at refs 0 */
};

struct hold {
	struct cluster *cl;
	char root[700];           /* <store>/shards */
	struct list held;
	struct list busy;         /* PUT and SEAL tasks on the pool */
	uint64_t nheld, bytes;
	uint64_t pending;         /* bytes of puts on the pool */
	uint64_t refused;         /* requests refused since start */
	uint64_t bad;             /* shards that failed their CRC check */
	uint32_t *gen;            /* by owner: links up so far */
};

enum hold_op { H_PUT, H_SEAL, H_DROP, H_VERIFY, H_GET };

struct hold_task {
	struct pool_task pt;
	struct list busy;         /* PUT, SEAL: in h->busy while submitted */
	int gone;                 /* its part was removed meanwhile */
	struct hold *h;
	struct link *l;           /* held; NULL for a drop */
	enum hold_op op;
	uint32_t seq;
	char owner[PLACE_NAME_MAX + 1];
	uint64_t open_id, off;
	uint32_t shard;
	uint8_t *data;            /* PUT: the chunk, owned */
	size_t len;
	struct shard_meta m;      /* SEAL: man owned, crcs set by run;
				   * VERIFY: a copy of the held one's */
	uint64_t bad_stripe;      /* VERIFY */
	struct held *e;           /* GET: the shard (referenced) */
	uint64_t stripe;          /* GET */
	uint8_t *frame;           /* GET: the reply, built by run */
	size_t flen;
	hold_chunk_fn fn;         /* GET for this node (l NULL): the chunk */
	void *arg;
	void *dst;
};

static void held_free(struct held *e)
{
	list_del(&e->link);
	if (e->refs) {          /* a SHARD_GET still reads it */
		e->detached = 1;
		return;
	}
	shardmeta_release(&e->m);
	free(e);
}

static void held_forget(struct hold *h, const char *owner, uint64_t open_id,
			uint32_t shard)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &h->held) {
		struct held *e = list_entry(pos, struct held, link);

		if (strcmp(e->m.owner, owner) || e->m.open_id != open_id ||
		    (shard && e->m.shard != shard))
			continue;
		h->nheld--;
		h->bytes -= e->m.nstripes * e->m.chunk;
		held_free(e);
	}
}

static struct held *held_find(const struct hold *h, const char *owner,
			      uint64_t open_id, uint32_t shard)
{
	struct list *pos;

	list_for_each(pos, &h->held) {
		struct held *e = list_entry(pos, struct held, link);

		if (!strcmp(e->m.owner, owner) && e->m.open_id == open_id &&
		    e->m.shard == shard)
			return e;
	}
	return NULL;
}

/* Take m's allocations into the index. */
static int held_add(struct hold *h, struct shard_meta *m)
{
	struct held *e = calloc(1, sizeof(*e));
	int owner;

	if (!e)
		return -ENOMEM;
	held_forget(h, m->owner, m->open_id, m->shard);
	/* Sealed since the owner's link came up: it has the part (a SYNC
	 * racing the seal must not drop it). */
	owner = place_find(&h->cl->place, m->owner);
	if (owner >= 0)
		e->seen = h->gen[owner];
	e->m = *m;
	m->crcs = NULL;
	m->man = NULL;
	list_add_tail(&h->held, &e->link);
	h->nheld++;
	h->bytes += e->m.nstripes * e->m.chunk;
	return 0;
}

/* ---- tasks ------------------------------------------------------------- */

/* Worker: check every chunk of a held shard against its CRC; a shard
 * that fails is set aside (its .meta renamed to .meta.bad, so that the
 * next start does not hold it either). */
static int verify_run(struct hold_task *ht)
{
	char from[900], to[910];
	int ret;

	ret = shardstore_verify(ht->h->root, &ht->m, &ht->bad_stripe);
	if (ret != -CKPT_ECORRUPT)
		return ret;
	snprintf(from, sizeof(from), "%s/%s/%016llx.%u.meta", ht->h->root,
		 ht->m.owner, (unsigned long long)ht->m.open_id, ht->m.shard);
	snprintf(to, sizeof(to), "%s.bad", from);
	sys_rename(from, to);
	return ret;
}

/* Worker: one chunk of a held shard, checked against its CRC, framed as
 * the reply. */
static int get_run(struct hold_task *ht)
{
	const struct shard_meta *m = &ht->e->m;
	size_t cap = PEER_FRAME_CAP(m->chunk);
	struct peer_data pd;
	uint8_t *buf;
	int ret, n;

	buf = malloc(m->chunk);
	ht->frame = malloc(cap);
	ret = -ENOMEM;
	if (!buf || !ht->frame)
		goto out;
	ret = shardstore_read(ht->h->root, m, ht->stripe, buf);
	if (ret < 0)
		goto out;
	pd.len = m->chunk;
	pd.crc = m->crcs[ht->stripe];
	pd.data = buf;
	n = peer_encode_data_for(ht->frame, cap, PEER_SHARD_GET, ht->seq, &pd);
	ret = n < 0 ? n : 0;
	ht->flen = n < 0 ? 0 : (size_t)n;
out:
	free(buf);
	return ret;
}

static int task_run(struct pool_task *t)
{
	struct hold_task *ht = (struct hold_task *)t;

	switch (ht->op) {
	case H_PUT:
		return shardstore_put(ht->h->root, ht->owner, ht->open_id,
				      ht->shard, ht->off, ht->data, ht->len);
	case H_SEAL:
		return shardstore_seal(ht->h->root, &ht->m);
	case H_DROP:
		return shardstore_drop(ht->h->root, ht->owner, ht->open_id,
				       ht->shard);
	case H_VERIFY:
		return verify_run(ht);
	case H_GET:
		return ht->fn ? shardstore_read(ht->h->root, &ht->e->m,
						ht->stripe, ht->dst)
			      : get_run(ht);
	}
	return -EINVAL;
}

static void task_free(struct hold_task *ht)
{
	if (ht->busy.next)
		list_del(&ht->busy);
	if (ht->op == H_PUT)
		ht->h->pending -= ht->len;
	if (ht->l)
		link_drop(ht->l);
	if (ht->e && --ht->e->refs == 0 && ht->e->detached) {
		shardmeta_release(&ht->e->m);
		free(ht->e);
	}
	free(ht->frame);
	free(ht->data);
	shardmeta_release(&ht->m);
	free(ht);
}

static void drop_submit(struct hold *h, const char *owner, uint64_t open_id,
			uint32_t shard);

/* Is a PUT or SEAL of owner's part open_id on the pool? */
static int busy_with(const struct hold *h, const char *owner,
		     uint64_t open_id)
{
	struct list *pos;

	list_for_each(pos, &h->busy) {
		const struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (!strcmp(b->owner, owner) && b->open_id == open_id)
			return 1;
	}
	return 0;
}

static void task_done(struct pool_task *t)
{
	struct hold_task *ht = (struct hold_task *)t;
	struct hold *h = ht->h;
	int ret = t->result;

	if (ht->gone) {
		/* The part was removed while this ran: what it wrote goes
		 * with the rest once the last such task is back. */
		list_del(&ht->busy);
		ht->busy.next = NULL;
		if (ret == 0)
			ret = -ECANCELED;
		if (!busy_with(h, ht->owner, ht->open_id))
			drop_submit(h, ht->owner, ht->open_id, 0);
	}
	switch (ht->op) {
	case H_PUT:
		link_answer_status(ht->l, PEER_SHARD_PUT | PEER_REPLY, ht->seq,
				   ret == -EEXIST ? 0 : ret);
		break;
	case H_SEAL:
		if (ret == 0)
			ret = held_add(h, &ht->m);
		if (ret < 0)
			log_printf(LOG_WARNING, "cluster: shard %u of %s's part %s/%s not held: %s",
				   ht->m.shard, ht->m.owner, ht->m.job,
				   ht->m.version, ckpt_strerror(ret));
		link_answer_status(ht->l, PEER_SHARD_SEAL | PEER_REPLY,
				   ht->seq, ret);
		break;
	case H_DROP:
		if (ret < 0)
			log_printf(LOG_WARNING, "cluster: dropping the shards of %s's part %016llx: %s",
				   ht->owner, (unsigned long long)ht->open_id,
				   ckpt_strerror(ret));
		break;
	case H_GET:
		if (ret == -CKPT_ECORRUPT)
			log_printf(LOG_ERR, "cluster: shard %u of %s's part %s/%s fails its CRC at stripe %llu (asked by %s)",
				   ht->e->m.shard, ht->e->m.owner, ht->e->m.job,
				   ht->e->m.version,
				   (unsigned long long)ht->stripe,
				   ht->l ? cl_name(h->cl, link_node(ht->l))
					 : "this node");
		if (ht->fn) {
			ht->fn(h->cl->d, ht->arg, ret);
		} else if (ret < 0) {
			link_answer_status(ht->l, PEER_SHARD_GET | PEER_REPLY,
					   ht->seq, ret);
		} else {
			link_answer(ht->l, ht->frame, ht->flen);
			ht->frame = NULL;
		}
		break;
	case H_VERIFY:
		if (ret == -CKPT_ECORRUPT) {
			h->bad++;
			log_printf(LOG_ERR, "cluster: shard %u of %s's part %s/%s fails its CRC at stripe %llu: set aside (.meta.bad), no longer held",
				   ht->m.shard, ht->m.owner, ht->m.job,
				   ht->m.version,
				   (unsigned long long)ht->bad_stripe);
			held_forget(h, ht->m.owner, ht->m.open_id, ht->m.shard);
		} else if (ret < 0) {
			log_printf(LOG_WARNING, "cluster: checking shard %u of %s's part %s/%s: %s",
				   ht->m.shard, ht->m.owner, ht->m.job,
				   ht->m.version, ckpt_strerror(ret));
		}
		break;
	}
	task_free(ht);
}

static void task_drop(struct pool_task *t)
{
	task_free((struct hold_task *)t);
}

static struct hold_task *task_new(struct hold *h, struct link *l,
				  enum hold_op op, uint32_t seq)
{
	struct hold_task *ht = calloc(1, sizeof(*ht));

	if (!ht)
		return NULL;
	ht->h = h;
	ht->op = op;
	ht->seq = seq;
	ht->l = l ? link_hold(l) : NULL;
	pool_task_init(&ht->pt, task_run, task_done, task_drop);
	return ht;
}

/* ---- requests ----------------------------------------------------------- */

/* The checks every shard request passes: 0 or the status to answer.
 * bytes: what the shard will take on disk once the request is done (a
 * PUT's end offset: a chunk far past what a shard can be would make a
 * sparse file that a SEAL could then claim, and CRC, whole). */
static int check_shard(struct cluster *cl, struct link *l, const char *owner,
		       uint32_t k, uint32_t m, uint32_t shard, uint64_t bytes)
{
	const struct ckptd *d = cl->d;
	int id = place_find(&cl->place, owner);

	if (id < 0 || (uint32_t)id != link_node(l))
		return -EPERM;          /* only the owner sends its shards */
	/* The owner chose this node (its holder record, protect.c): any
	 * shard of a part coded as this cluster codes them. */
	if (k != cl->place.k || m != cl->place.m || (uint32_t)id == cl->self)
		return -EINVAL;
	if (d->segs->capacity &&
	    (bytes > d->segs->capacity ||
	     d->segs->bytes + cl->hold->bytes + cl->hold->pending + bytes >
	     d->segs->capacity))
		return -ENOSPC;
	return 0;
}

static void refuse(struct hold *h, struct link *l, uint16_t type,
		   uint32_t seq, int err)
{
	h->refused++;
	if (log_rl_ok(&h->cl->bad_rl, 10, ckptd_now_ms(), "cluster: refused shards"))
		log_printf(LOG_WARNING, "cluster: %s from %s refused: %s",
			   peer_type_name(type), cl_name(h->cl, link_node(l)),
			   ckpt_strerror(err));
	link_answer_status(l, type | PEER_REPLY, seq, err);
}

void hold_on_put(struct cluster *cl, struct link *l, const uint8_t *f,
		 size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	struct hold_task *ht;
	struct peer_shard s;
	int ret;

	ret = peer_decode_shard(f, n, &s);
	if (ret == 0)
		ret = check_shard(cl, l, s.owner, s.k, s.m, s.shard,
				  s.off > UINT64_MAX - s.len ? UINT64_MAX
							     : s.off + s.len);
	if (ret < 0)
		return refuse(h, l, PEER_SHARD_PUT, hdr->seq, ret);
	/* A sealed shard is immutable; the owner sends it again when an
	 * attempt failed elsewhere (its bytes are the same: the encoding is
	 * deterministic), and its SEAL will find it sealed. */
	if (held_find(h, s.owner, s.open_id, s.shard))
		return link_answer_status(l, PEER_SHARD_PUT | PEER_REPLY,
					  hdr->seq, 0);
	ht = task_new(h, l, H_PUT, hdr->seq);
	if (ht)
		ht->data = malloc(s.len);
	if (!ht || !ht->data) {
		if (ht)
			task_free(ht);
		return refuse(h, l, PEER_SHARD_PUT, hdr->seq, -ENOMEM);
	}
	memcpy(ht->data, s.data, s.len);
	ht->len = s.len;
	snprintf(ht->owner, sizeof(ht->owner), "%s", s.owner);
	ht->open_id = s.open_id;
	ht->shard = s.shard;
	ht->off = s.off;
	h->pending += s.len;
	list_add_tail(&h->busy, &ht->busy);
	pool_submit(cl->d->pool, &ht->pt, 0);
}

void hold_on_seal(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	struct hold_task *ht;
	struct peer_seal s;
	int ret;

	ret = peer_decode_seal(f, n, &s);
	if (ret == 0) {
		/* Its bytes count from now on (less a seal it replaces). */
		struct held *e = held_find(h, s.owner, s.open_id, s.shard);
		uint64_t bytes = s.nstripes * s.chunk;

		if (e)
			bytes = bytes > e->m.nstripes * e->m.chunk
				? bytes - e->m.nstripes * e->m.chunk : 0;
		ret = check_shard(cl, l, s.owner, s.k, s.m, s.shard, bytes);
	}
	if (ret < 0)
		return refuse(h, l, PEER_SHARD_SEAL, hdr->seq, ret);
	ht = task_new(h, l, H_SEAL, hdr->seq);
	if (ht)
		ht->m.man = malloc(s.manlen);
	if (!ht || !ht->m.man) {
		if (ht)
			task_free(ht);
		return refuse(h, l, PEER_SHARD_SEAL, hdr->seq, -ENOMEM);
	}
	memcpy(ht->m.man, s.man, s.manlen);
	ht->m.manlen = s.manlen;
	snprintf(ht->m.owner, sizeof(ht->m.owner), "%s", s.owner);
	snprintf(ht->m.job, sizeof(ht->m.job), "%s", s.job);
	snprintf(ht->m.version, sizeof(ht->m.version), "%s", s.version);
	ht->m.uid = s.uid;
	ht->m.seq = s.seq;
	ht->m.open_id = s.open_id;
	ht->m.k = s.k;
	ht->m.m = s.m;
	ht->m.shard = s.shard;
	ht->m.chunk = s.chunk;
	ht->m.stream_len = s.stream_len;
	ht->m.nstripes = s.nstripes;
	snprintf(ht->owner, sizeof(ht->owner), "%s", s.owner);
	ht->open_id = s.open_id;
	list_add_tail(&h->busy, &ht->busy);
	pool_submit(cl->d->pool, &ht->pt, 0);
}

/* Drop shard `shard` of owner's part open_id (0: all of them) on the
 * pool. */
static void drop_submit(struct hold *h, const char *owner, uint64_t open_id,
			uint32_t shard)
{
	struct hold_task *ht = task_new(h, NULL, H_DROP, 0);

	if (!ht)
		return;        /* the next start's scan keeps them: harmless */
	snprintf(ht->owner, sizeof(ht->owner), "%s", owner);
	ht->open_id = open_id;
	ht->shard = shard;
	pool_submit(h->cl->d->pool, &ht->pt, 0);
}

void hold_part_gone(struct cluster *cl, uint32_t owner, uint64_t open_id)
{
	struct hold *h = cl->hold;
	const char *name = cl_name(cl, owner);
	struct list *pos;
	int busy = 0;

	if (!h)
		return;
	held_forget(h, name, open_id, 0);
	/* A PUT or SEAL of it still on the pool would write its file again
	 * after the drop: the drop waits for the last of them. */
	list_for_each(pos, &h->busy) {
		struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (!strcmp(b->owner, name) && b->open_id == open_id) {
			b->gone = 1;
			busy = 1;
		}
	}
	if (!busy)
		drop_submit(h, name, open_id, 0);
}

void hold_on_sget(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	struct hold_task *ht;
	struct peer_sget g;
	struct held *e;
	int ret;

	ret = peer_decode_sget(f, n, &g);
	if (ret < 0)
		return refuse(h, l, PEER_SHARD_GET, hdr->seq, ret);
	e = held_find(h, g.owner, g.open_id, g.shard);
	if (!e || g.stripe >= e->m.nstripes)
		return link_answer_status(l, PEER_SHARD_GET | PEER_REPLY,
					  hdr->seq, -ENOENT);
	ht = task_new(h, l, H_GET, hdr->seq);
	if (!ht)
		return refuse(h, l, PEER_SHARD_GET, hdr->seq, -ENOMEM);
	ht->e = e;
	e->refs++;
	ht->stripe = g.stripe;
	pool_submit(cl->d->pool, &ht->pt, 1);
}

int hold_chunk(struct cluster *cl, uint32_t owner, uint64_t open_id,
	       uint32_t shard, uint64_t stripe, void *dst, hold_chunk_fn fn,
	       void *arg)
{
	struct hold *h = cl->hold;
	struct hold_task *ht;
	struct held *e;

	e = h ? held_find(h, cl_name(cl, owner), open_id, shard) : NULL;
	if (!e || stripe >= e->m.nstripes)
		return -ENOENT;
	ht = task_new(h, NULL, H_GET, 0);
	if (!ht)
		return -ENOMEM;
	ht->e = e;
	e->refs++;
	ht->stripe = stripe;
	ht->dst = dst;
	ht->fn = fn;
	ht->arg = arg;
	pool_submit(cl->d->pool, &ht->pt, 1);
	return 0;
}

/* Is (open_id, shard) of e after the cursor (a, b)? */
static int after(const struct held *e, uint64_t a, uint32_t b)
{
	return e->m.open_id > a || (e->m.open_id == a && e->m.shard > b);
}

void hold_on_held(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	struct held *next = NULL;
	struct peer_data pd;
	struct peer_sget g;
	struct list *pos;
	uint8_t *img = NULL, *buf = NULL;
	size_t size;
	long len;
	int ret;

	ret = peer_decode_held(f, n, &g);
	if (ret == 0 && strcmp(g.owner, cl_name(cl, link_node(l))))
		ret = -EPERM;          /* a node asks for its own shards only */
	if (ret < 0)
		return refuse(h, l, PEER_HELD, hdr->seq, ret);
	list_for_each(pos, &h->held) {
		struct held *e = list_entry(pos, struct held, link);

		if (strcmp(e->m.owner, g.owner) || !after(e, g.open_id, g.shard))
			continue;
		if (!next || after(next, e->m.open_id, e->m.shard))
			next = e;
	}
	if (!next)
		return link_answer_status(l, PEER_HELD | PEER_REPLY, hdr->seq,
					  -ENOENT);
	ret = -EMSGSIZE;
	size = shardmeta_size(&next->m);
	if (size > PEER_MAX_HELD)
		goto out_refuse;
	ret = -ENOMEM;
	img = malloc(size);
	buf = malloc(PEER_FRAME_CAP(size));
	if (!img || !buf)
		goto out_refuse;
	len = shardmeta_encode(&next->m, img, size);
	ret = (int)len;
	if (len < 0)
		goto out_refuse;
	pd.len = (uint32_t)len;
	pd.crc = crc32c(img, pd.len);
	pd.data = img;
	ret = peer_encode_data_for(buf, PEER_FRAME_CAP(size), PEER_HELD,
				   hdr->seq, &pd);
	if (ret < 0)
		goto out_refuse;
	free(img);
	link_answer(l, buf, (size_t)ret);
	return;

out_refuse:
	free(img);
	free(buf);
	link_answer_status(l, PEER_HELD | PEER_REPLY, hdr->seq, ret);
}

void hold_owner_up(struct cluster *cl, uint32_t owner)
{
	if (cl->hold)
		cl->hold->gen[owner]++;
}

/* Does rec, a whole holder record, give shard e to another node (or code
 * the part otherwise)? */
static int superseded(const struct cluster *cl, const struct held *e,
		      const struct man_holders *rec)
{
	return e->m.k != rec->k || e->m.m != rec->m ||
	       e->m.shard >= rec->k + rec->m ||
	       strcmp(rec->name[e->m.shard - 1], cl_name(cl, cl->self));
}

/* Is a PUT or SEAL of owner's part open_id on the pool? */
static int part_busy(const struct hold *h, const char *owner,
		     uint64_t open_id)
{
	struct list *pos;

	list_for_each(pos, &h->busy) {
		struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (!strcmp(b->owner, owner) && b->open_id == open_id)
			return 1;
	}
	return 0;
}

void hold_confirm(struct cluster *cl, uint32_t owner, uint64_t open_id,
		  const struct man_holders *rec)
{
	struct hold *h = cl->hold;
	const char *name = cl_name(cl, owner);
	struct list *pos, *tmp;

	if (!h)
		return;
	list_for_each_safe(pos, tmp, &h->held) {
		struct held *e = list_entry(pos, struct held, link);
		uint32_t shard = e->m.shard;

		if (e->m.open_id != open_id || strcmp(e->m.owner, name))
			continue;
		e->seen = h->gen[owner];
		if (!rec || !superseded(cl, e, rec) || part_busy(h, name, open_id))
			continue;
		/* The record is whole (the part PROTECTED on its owner):
		 * every shard it names is durable where it says. */
		log_printf(LOG_NOTICE, "cluster: %s's part %s/%s (%016llx) has shard %u on %s now: dropping the copy held here",
			   name, e->m.job, e->m.version,
			   (unsigned long long)open_id, shard,
			   shard < rec->k + rec->m ? rec->name[shard - 1] : "no node");
		held_forget(h, name, open_id, shard);
		drop_submit(h, name, open_id, shard);
		tmp = h->held.next;     /* held_forget may have freed tmp */
	}
}

void hold_on_sync(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	uint32_t owner = link_node(l);
	char name[PLACE_NAME_MAX + 1];
	struct list *pos, *tmp;
	int ret;

	ret = peer_decode_sync(f, n, name);
	if (ret == 0 && strcmp(name, cl_name(cl, owner)))
		ret = -EPERM;
	if (ret < 0)
		return refuse(h, l, PEER_SYNC, hdr->seq, ret);
	list_for_each_safe(pos, tmp, &h->held) {
		struct held *e = list_entry(pos, struct held, link);

		if (e->seen == h->gen[owner] || strcmp(e->m.owner, name))
			continue;
		log_printf(LOG_INFO, "cluster: %s no longer has its part %s/%s (%016llx): dropping the shards held of it",
			   name, e->m.job, e->m.version,
			   (unsigned long long)e->m.open_id);
		/* Drops every held shard of that part: tmp may go. */
		hold_part_gone(cl, owner, e->m.open_id);
		tmp = h->held.next;
	}
	link_answer_status(l, PEER_SYNC | PEER_REPLY, hdr->seq, 0);
}

/* ---- start-up, status --------------------------------------------------- */

static int scan_one(void *arg, struct shard_meta *m, const void *img,
		    size_t len)
{
	struct hold *h = arg;

	/* Shards of nodes no longer in the list are kept, not indexed. */
	if (place_find(&h->cl->place, m->owner) < 0)
		return 0;
	return held_add(h, m);
}

/* At start: check every held shard against its CRCs, on the pool, one
 * task each (behind the daemon's own work). */
static void verify_all(struct hold *h)
{
	struct list *pos;

	list_for_each(pos, &h->held) {
		struct held *e = list_entry(pos, struct held, link);
		struct hold_task *ht = task_new(h, NULL, H_VERIFY, 0);

		if (!ht)
			return;
		/* The task's own copy: the index entry may go meanwhile. */
		ht->m = e->m;
		ht->m.crcs = malloc(e->m.nstripes * sizeof(uint32_t) + 1);
		ht->m.man = malloc(e->m.manlen);
		if (!ht->m.crcs || !ht->m.man) {
			task_free(ht);
			return;
		}
		memcpy(ht->m.crcs, e->m.crcs, e->m.nstripes * sizeof(uint32_t));
		memcpy(ht->m.man, e->m.man, e->m.manlen);
		pool_submit(h->cl->d->pool, &ht->pt, 0);
	}
}

int hold_open(struct cluster *cl)
{
	struct hold *h = calloc(1, sizeof(*h));
	struct shardstore_scan_stats st;
	int ret;

	if (!h)
		return -ENOMEM;
	h->cl = cl;
	list_init(&h->held);
	h->gen = calloc(cl->place.n, sizeof(*h->gen));
	if (!h->gen) {
		free(h);
		return -ENOMEM;
	}
	list_init(&h->busy);
	snprintf(h->root, sizeof(h->root), "%s/shards", cl->d->conf->store);
	cl->hold = h;
	ret = shardstore_init(h->root);
	if (ret == 0)
		ret = shardstore_scan(h->root, scan_one, h, &st);
	if (ret < 0) {
		log_printf(LOG_ERR, "cluster: shard store %s: %s", h->root,
			   ckpt_strerror(ret));
		return ret;
	}
	verify_all(h);
	log_printf(LOG_INFO, "cluster: holding %llu shards (%llu bytes) for peers%s",
		   (unsigned long long)h->nheld, (unsigned long long)h->bytes,
		   st.partial || st.tmp ? "; removed shards never sealed" : "");
	if (st.bad)
		log_printf(LOG_WARNING, "cluster: %llu shard records failed their check and were set aside (.bad in %s)",
			   (unsigned long long)st.bad, h->root);
	return 0;
}

void hold_learn_parts(struct cluster *cl)
{
	struct list *pos;

	if (!cl->hold)
		return;
	list_for_each(pos, &cl->hold->held)
		parts_learn_held(cl, &list_entry(pos, struct held, link)->m);
}

void hold_close(struct cluster *cl)
{
	struct hold *h = cl->hold;
	struct list *pos, *tmp;

	if (!h)
		return;
	list_for_each_safe(pos, tmp, &h->held)
		held_free(list_entry(pos, struct held, link));
	free(h->gen);
	free(h);
	cl->hold = NULL;
}

void hold_status(const struct cluster *cl, uint64_t *nheld, uint64_t *bytes,
		 uint64_t *bad)
{
	*nheld = cl->hold ? cl->hold->nheld : 0;
	*bytes = cl->hold ? cl->hold->bytes : 0;
	*bad = cl->hold ? cl->hold->bad : 0;
}
