/*
 * hold.c - the shards this node holds for its peers: the answers to
 * SHARD_PUT and SHARD_SEAL, the index of what is held, the room shards
 * being written are given, and dropping the shards of parts their owners
 * removed or abandoned (see cluster_i.h, shardstore.h).
 *
 * A request is checked on the loop before anything touches the disk: the
 * frame decodes, the sender is the owner it names (a peer cannot write
 * shards as another node), k and m are the cluster's (the owner chose this
 * node: its holder record, protect.c), and the shard fits in the room
 * (below).  The disk work (shardstore.h) runs on the worker pool; the reply
 * goes when it is done: for SHARD_PUT once written, for SHARD_SEAL once
 * durable.  A link keeps reading only while its handlers hold fewer than
 * LINK_MAX_HOLDS frames, which bounds the memory one peer can make this
 * node spend.
 *
 * Room.  The store's file system is shared with this node's own segments
 * (segs.h states the rule).  A shard is reserved whole at its first chunk
 * (struct hopen; SHARD_PUT's total, its nstripes * chunk; a frame without
 * one counts each chunk as it comes) and refused with -ENOSPC before a byte
 * of it is written when the reservation does not fit: peers' shards (held
 * and reserved) never take the file system below [cluster] holder_reserve
 * free bytes (beyond [ckptd] reserve), nor, with the segments, past
 * [ckptd] capacity (shardstore_room_fits()).  Later chunks are not charged
 * again; the seal turns the reservation into held bytes; a drop releases
 * it.  The totals go to segs (segs_set_others()), so that no segment is
 * made in bytes a shard was promised, and each chunk's bytes move from
 * promised to taken as they land (segs_fs_took()).  The file system's free
 * bytes are read again at most every HOLD_SWEEP_MS, so another file filling
 * it is seen.
 *
 * A shard being written starts at its first chunk (offset 0): an owner's
 * attempt sends its stripes in order, from the first, on one link.  A later
 * chunk of a shard not open here is refused (-ESTALE): its attempt was
 * dropped, and its bytes alone would seal into a shard with holes.  An open
 * shard is dropped (its .dat, its reservation) when its owner's link goes
 * down or comes up again, when no chunk came for HOLD_OPEN_IDLE_MS, when a
 * chunk fails, when its owner announces the part PROTECTED with a holder
 * record that gives the shard to another node, and with its part.  Its
 * tasks still on the pool are marked gone: the files go once the last of
 * them is back, and until then (and while the drop itself runs) a request
 * for that shard is refused (-EAGAIN), so that nothing an old attempt wrote
 * survives into a new one.
 *
 * The index (struct held) lists every sealed shard: found by the scan at
 * start-up (which removes shards never sealed) and added by each seal.
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
#include "segs.h"
#include "shardstore.h"
#include "sys.h"

struct held {
	struct list link;
	struct shard_meta m;      /* crcs and man owned; never changed */
	uint32_t seen;            /* hold.gen[owner] when last announced */
	uint32_t refs;            /* SHARD_GET tasks reading m */
	int detached;             /* out of the index, freed at refs 0 */
};

/* A shard whose chunks are coming: reserved here, not sealed yet. */
struct hopen {
	struct list link;         /* in hold.opens */
	char owner[PLACE_NAME_MAX + 1];
	uint32_t node;            /* the owner's index */
	uint64_t open_id;
	uint32_t shard;
	uint64_t total;           /* its SHARD_PUTs' total; 0: unknown */
	uint64_t claim;           /* bytes reserved (in hold.reserved) */
	uint64_t written;         /* bytes up to the furthest chunk written,
				   * <= claim; claim - written is in
				   * hold.unwritten */
	uint64_t last_ms;         /* its last chunk came, or was written */
	uint32_t gen;             /* hold.gen[node] at its first chunk */
	uint32_t tasks;           /* its PUT and SEAL tasks on the pool */
	/* The CRC each chunk came with (checked against its bytes), by
	 * stripe, as its PUT is written: with all nstripes of them the seal
	 * need not read the shard back (shardstore_seal_known()).  NULL when
	 * the first chunk did not say the shard's size. */
	uint32_t *crcs;
	uint8_t *got;             /* got[i]: crcs[i] is set */
	uint64_t nstripes, ncrcs;
	uint32_t chunk;
};

struct hold {
	struct cluster *cl;
	char root[700];           /* <store>/shards */
	struct list held;
	struct list opens;        /* struct hopen, shards being written */
	struct list busy;         /* PUT, SEAL and DROP tasks on the pool */
	uint64_t nheld, bytes;
	uint64_t nopen, reserved; /* shards open, the bytes they reserved */
	uint64_t unwritten;       /* of reserved, not yet on the disk */
	uint64_t refused;         /* requests refused since start */
	uint64_t refused_space;   /* of those, for room (-ENOSPC) */
	uint64_t dropped;         /* open shards dropped, never sealed */
	uint64_t bad;             /* shards that failed their CRC check */
	uint64_t sweep_ms;        /* hold_sweep()'s last run */
	struct log_rl space_rl;   /* the refusals for room */
	uint32_t *gen;            /* by owner: links up so far */
};

enum hold_op { H_PUT, H_SEAL, H_DROP, H_VERIFY, H_GET };

struct hold_task {
	struct pool_task pt;
	struct list busy;         /* PUT, SEAL, DROP: in h->busy while
				   * submitted */
	int gone;                 /* PUT, SEAL: dropped meanwhile: its shard
				   * gone_shard, or (0) its whole part */
	uint32_t gone_shard;
	struct hold *h;
	struct link *l;           /* held; NULL for a drop */
	enum hold_op op;
	uint32_t seq;
	char owner[PLACE_NAME_MAX + 1];
	uint64_t open_id, off;
	uint32_t shard;           /* PUT, SEAL; DROP: 0 = the whole part */
	struct hopen *o;          /* PUT, SEAL: its open shard (counted in
				   * o->tasks); NULL: none, or dropped */
	uint8_t *data;            /* PUT: the chunk, owned (sys_dio_alloc()) */
	size_t len;
	uint32_t crc;             /* PUT: the chunk's, as it came */
	uint32_t *known;          /* SEAL: the chunks' CRCs (o's, copied), or
				   * NULL: read back */
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

/* ---- room ---------------------------------------------------------------- */

/* The holder's totals to segs, whose capacity leaves them out. */
static void space_push(struct hold *h)
{
	segs_set_others(h->cl->d->segs, h->bytes + h->reserved, h->unwritten);
}

/* [cluster] holder_reserve as applied: 0 is a tenth of the store. */
static uint64_t keep_of(const struct hold *h)
{
	const struct ckptd *d = h->cl->d;

	if (d->conf->cluster_holder_reserve)
		return d->conf->cluster_holder_reserve;
	return (d->conf->capacity ? d->conf->capacity : d->segs->fs.size) / 10;
}

static void room_of(const struct hold *h, struct shardstore_room *r)
{
	r->fs_room = segs_room(h->cl->d->segs);
	r->keep = keep_of(h);
	r->limit_room = segs_limit_room(h->cl->d->segs);
}

/* Bytes peers' shards may still be given now. */
static uint64_t room_left(const struct hold *h)
{
	struct shardstore_room r;

	room_of(h, &r);
	return shardstore_room_left(&r);
}

/* May ask more bytes go to peers' shards?  0, or -ENOSPC with *left the
 * bytes they may still be given. */
static int room_fits(struct hold *h, uint64_t ask, uint64_t *left)
{
	struct shardstore_room r;

	*left = 0;
	if (!ask)
		return 0;
	segs_refresh(h->cl->d->segs, 0);
	room_of(h, &r);
	*left = shardstore_room_left(&r);
	return shardstore_room_fits(&r, ask);
}

/* ---- the index of held shards ------------------------------------------- */

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
	space_push(h);
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
	space_push(h);
	return 0;
}

/* ---- shards being written ------------------------------------------------ */

static struct hopen *open_find(const struct hold *h, const char *owner,
			       uint64_t open_id, uint32_t shard)
{
	struct list *pos;

	list_for_each(pos, &h->opens) {
		struct hopen *o = list_entry(pos, struct hopen, link);

		if (!strcmp(o->owner, owner) && o->open_id == open_id &&
		    o->shard == shard)
			return o;
	}
	return NULL;
}

/* A shard's first chunk is taken: open it (nothing reserved yet). */
static struct hopen *open_new(struct hold *h, const struct peer_shard *s,
			      uint32_t node, uint64_t now)
{
	struct hopen *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	snprintf(o->owner, sizeof(o->owner), "%s", s->owner);
	o->node = node;
	o->open_id = s->open_id;
	o->shard = s->shard;
	o->total = s->total;
	o->last_ms = now;
	o->gen = h->gen[node];
	if (s->total && s->len && s->total % s->len == 0 &&
	    s->total / s->len <= HOLD_CRCS_MAX) {
		o->nstripes = s->total / s->len;
		o->chunk = s->len;
		o->crcs = malloc(o->nstripes * sizeof(*o->crcs));
		o->got = calloc(o->nstripes, 1);
		if (!o->crcs || !o->got) {  /* the seal reads it back */
			free(o->crcs);
			free(o->got);
			o->crcs = NULL;
			o->got = NULL;
		}
	}
	list_add_tail(&h->opens, &o->link);
	h->nopen++;
	return o;
}

/* o's reservation grows to claim bytes (shardstore_put_ask()). */
static void open_claim(struct hold *h, struct hopen *o, uint64_t claim)
{
	if (claim <= o->claim)
		return;
	h->reserved += claim - o->claim;
	h->unwritten += claim - o->claim;
	o->claim = claim;
	space_push(h);
}

/* A chunk of o that ends at byte end is on the disk: its bytes move from
 * promised to taken. */
static void open_wrote(struct hold *h, struct hopen *o, uint64_t end)
{
	uint64_t delta;

	if (end > o->claim)
		end = o->claim;
	if (end <= o->written)
		return;         /* written before: an attempt sent again */
	delta = end - o->written;
	o->written = end;
	h->unwritten -= delta;
	segs_fs_took(h->cl->d->segs, delta);
	space_push(h);
}

/* Forget o and release its reservation; its tasks on the pool no longer
 * point at it.  Its files are the caller's. */
static void open_free(struct hold *h, struct hopen *o)
{
	struct list *pos;

	list_for_each(pos, &h->busy) {
		struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (b->o == o)
			b->o = NULL;
	}
	h->reserved -= o->claim;
	h->unwritten -= o->claim - o->written;
	h->nopen--;
	list_del(&o->link);
	free(o->crcs);
	free(o->got);
	free(o);
	space_push(h);
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
 * the reply: read straight into the frame, where the reply carries it
 * (PEER_DATA_AT), so neither it nor its CRC is passed over again. */
static int get_run(struct hold_task *ht)
{
	const struct shard_meta *m = &ht->e->m;
	size_t cap = PEER_FRAME_CAP(m->chunk);
	struct peer_data pd;
	int ret, n;

	ht->frame = malloc(cap);
	if (!ht->frame)
		return -ENOMEM;
	pd.data = ht->frame + PEER_DATA_AT;
	ret = shardstore_read(ht->h->root, m, ht->stripe,
			      ht->frame + PEER_DATA_AT);
	if (ret < 0)
		return ret;
	pd.len = m->chunk;
	pd.crc = m->crcs[ht->stripe];
	n = peer_encode_data_for(ht->frame, cap, PEER_SHARD_GET, ht->seq, &pd);
	ret = n < 0 ? n : 0;
	ht->flen = n < 0 ? 0 : (size_t)n;
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
		return ht->known ? shardstore_seal_known(ht->h->root, &ht->m,
							 ht->known)
				 : shardstore_seal(ht->h->root, &ht->m);
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
	if (ht->o)
		ht->o->tasks--;
	if (ht->l)
		link_drop(ht->l);
	if (ht->e && --ht->e->refs == 0 && ht->e->detached) {
		shardmeta_release(&ht->e->m);
		free(ht->e);
	}
	free(ht->frame);
	sys_dio_free(ht->data, ht->len);
	free(ht->known);
	shardmeta_release(&ht->m);
	free(ht);
}

static void drop_submit(struct hold *h, const char *owner, uint64_t open_id,
			uint32_t shard);

/* Is a PUT or SEAL of owner's part open_id on the pool (of its shard
 * `shard`; 0: of any)? */
static int busy_in(const struct hold *h, const char *owner, uint64_t open_id,
		   uint32_t shard)
{
	struct list *pos;

	list_for_each(pos, &h->busy) {
		const struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (b->op != H_DROP && !strcmp(b->owner, owner) &&
		    b->open_id == open_id && (!shard || b->shard == shard))
			return 1;
	}
	return 0;
}

/* Are the files of shard `shard` of owner's part open_id being dropped: a
 * DROP of it on the pool, or tasks of it marked gone (whose drop follows
 * them)?  A new request for it waits until that is over. */
static int dropping(const struct hold *h, const char *owner, uint64_t open_id,
		    uint32_t shard)
{
	struct list *pos;

	list_for_each(pos, &h->busy) {
		const struct hold_task *b = list_entry(pos, struct hold_task, busy);
		uint32_t scope;

		if (strcmp(b->owner, owner) || b->open_id != open_id)
			continue;
		if (b->op != H_DROP && !b->gone)
			continue;
		scope = b->op == H_DROP ? b->shard : b->gone_shard;
		if (!scope || scope == shard)
			return 1;
	}
	return 0;
}

/* Mark o's tasks on the pool gone (0 if it has none) and forget o: its
 * files go when the last task is back, or now. */
static void open_drop(struct hold *h, struct hopen *o, const char *why)
{
	char owner[PLACE_NAME_MAX + 1];
	uint64_t open_id = o->open_id;
	uint32_t shard = o->shard;
	struct list *pos;
	int busy = 0;

	log_printf(LOG_NOTICE, "cluster: dropping shard %u of %s's part %016llx, never sealed (%s): %llu bytes reserved, %llu written",
		   shard, o->owner, (unsigned long long)open_id, why,
		   (unsigned long long)o->claim,
		   (unsigned long long)o->written);
	list_for_each(pos, &h->busy) {
		struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (b->o != o)
			continue;
		if (!b->gone) {
			b->gone = 1;
			b->gone_shard = shard;
		}
		busy = 1;
	}
	snprintf(owner, sizeof(owner), "%s", o->owner);
	h->dropped++;
	open_free(h, o);
	if (!busy)
		drop_submit(h, owner, open_id, shard);
}

/* A PUT is back: o's bytes, or (a chunk failed) o dropped. */
static void put_done(struct hold *h, struct hold_task *ht, struct hopen *o,
		     int ret)
{
	if (ret == -ENOSPC) {
		h->refused_space++;
		log_printf(LOG_WARNING, "cluster: shard %u of %s's part %016llx: writing %zu bytes at %llu: %s (%llu bytes free for peers' shards)",
			   ht->shard, ht->owner,
			   (unsigned long long)ht->open_id, ht->len,
			   (unsigned long long)ht->off, ckpt_strerror(ret),
			   (unsigned long long)room_left(h));
	}
	if (o && ret == 0) {
		o->last_ms = ckptd_now_ms();
		open_wrote(h, o, ht->off + ht->len);
		if (o->crcs && ht->len == o->chunk &&
		    ht->stripe < o->nstripes &&
		    ht->off == ht->stripe * o->chunk) {
			o->ncrcs += !o->got[ht->stripe];
			o->got[ht->stripe] = 1;
			o->crcs[ht->stripe] = ht->crc;
		}
	} else if (o && ret != -EEXIST) {
		/* The owner's attempt fails with it, and starts again from
		 * the first stripe: what the shard has here goes now. */
		open_drop(h, o, "a chunk was not written");
	}
	link_answer_status(ht->l, PEER_SHARD_PUT | PEER_REPLY, ht->seq,
			   ret == -EEXIST ? 0 : ret);
}

/* A SEAL is back: its reservation becomes held bytes. */
static void seal_done(struct hold *h, struct hold_task *ht, struct hopen *o,
		      int ret)
{
	if (ret == 0)
		ret = held_add(h, &ht->m);
	if (ret == 0 && o)
		open_free(h, o);
	else if (o)
		o->last_ms = ckptd_now_ms();
	if (ret < 0)
		log_printf(LOG_WARNING, "cluster: shard %u of %s's part %s/%s not held: %s",
			   ht->m.shard, ht->m.owner, ht->m.job,
			   ht->m.version, ckpt_strerror(ret));
	link_answer_status(ht->l, PEER_SHARD_SEAL | PEER_REPLY, ht->seq, ret);
}

static void get_done(struct hold *h, struct hold_task *ht, int ret)
{
	if (ret == -CKPT_ECORRUPT)
		log_printf(LOG_ERR, "cluster: shard %u of %s's part %s/%s fails its CRC at stripe %llu (asked by %s)",
			   ht->e->m.shard, ht->e->m.owner, ht->e->m.job,
			   ht->e->m.version, (unsigned long long)ht->stripe,
			   ht->l ? cl_name(h->cl, link_node(ht->l))
				 : "this node");
	if (ht->fn) {
		ht->fn(h->cl->d, ht->arg, ret);
	} else if (ret < 0) {
		link_answer_status(ht->l, PEER_SHARD_GET | PEER_REPLY, ht->seq,
				   ret);
	} else {
		link_answer(ht->l, ht->frame, ht->flen);
		ht->frame = NULL;
	}
}

static void verify_done(struct hold *h, struct hold_task *ht, int ret)
{
	if (ret == -CKPT_ECORRUPT) {
		h->bad++;
		log_printf(LOG_ERR, "cluster: shard %u of %s's part %s/%s fails its CRC at stripe %llu: set aside (.meta.bad), no longer held",
			   ht->m.shard, ht->m.owner, ht->m.job, ht->m.version,
			   (unsigned long long)ht->bad_stripe);
		held_forget(h, ht->m.owner, ht->m.open_id, ht->m.shard);
	} else if (ret < 0) {
		log_printf(LOG_WARNING, "cluster: checking shard %u of %s's part %s/%s: %s",
			   ht->m.shard, ht->m.owner, ht->m.job, ht->m.version,
			   ckpt_strerror(ret));
	}
}

static void task_done(struct pool_task *t)
{
	struct hold_task *ht = (struct hold_task *)t;
	struct hold *h = ht->h;
	struct hopen *o = ht->o;
	int ret = t->result;

	/* Off the busy list and its open shard first: what follows sees
	 * only the others. */
	if (ht->busy.next) {
		list_del(&ht->busy);
		ht->busy.next = NULL;
	}
	if (o) {
		o->tasks--;
		ht->o = NULL;
	}
	if (ht->gone) {
		/* Its shard or part was dropped while this ran: what it
		 * wrote goes with the rest once the last such task is back. */
		if (ret == 0 || ret == -EEXIST)
			ret = -ECANCELED;
		if (!busy_in(h, ht->owner, ht->open_id, ht->gone_shard))
			drop_submit(h, ht->owner, ht->open_id, ht->gone_shard);
	}
	switch (ht->op) {
	case H_PUT:
		put_done(h, ht, o, ret);
		break;
	case H_SEAL:
		seal_done(h, ht, o, ret);
		break;
	case H_DROP:
		if (ret < 0)
			log_printf(LOG_WARNING, "cluster: dropping the shards of %s's part %016llx: %s",
				   ht->owner, (unsigned long long)ht->open_id,
				   ckpt_strerror(ret));
		break;
	case H_GET:
		get_done(h, ht, ret);
		break;
	case H_VERIFY:
		verify_done(h, ht, ret);
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

/* The checks every shard request passes first: 0 or the status to
 * answer.  The room is checked afterwards, for what the request adds. */
static int check_sender(struct cluster *cl, struct link *l, const char *owner,
			uint32_t k, uint32_t m)
{
	int id = place_find(&cl->place, owner);

	if (id < 0 || (uint32_t)id != link_node(l))
		return -EPERM;          /* only the owner sends its shards */
	/* The owner chose this node (its holder record, protect.c): any
	 * shard of a part coded as this cluster codes them. */
	if (k != cl->place.k || m != cl->place.m || (uint32_t)id == cl->self)
		return -EINVAL;
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

/* A request refused for room: what it asked, what is free (the sender is
 * the owner: check_sender()). */
static void refuse_space(struct hold *h, struct link *l, uint16_t type,
			 uint32_t seq, uint64_t open_id, uint32_t shard,
			 uint64_t ask, uint64_t left)
{
	h->refused++;
	h->refused_space++;
	if (log_rl_ok(&h->space_rl, 10, ckptd_now_ms(), "cluster: shards refused for room"))
		log_printf(LOG_WARNING, "cluster: %s from %s refused: %s: shard %u of its part %016llx asks %llu bytes, %llu free for peers' shards (%llu kept for this node's own parts)",
			   peer_type_name(type), cl_name(h->cl, link_node(l)),
			   ckpt_strerror(-ENOSPC), shard,
			   (unsigned long long)open_id,
			   (unsigned long long)ask, (unsigned long long)left,
			   (unsigned long long)keep_of(h));
	link_answer_status(l, type | PEER_REPLY, seq, -ENOSPC);
}

static void hold_sweep(struct hold *h, uint64_t now);

/* Where a PUT goes: its open shard (*op, NULL for a first chunk) and that
 * shard's claim once it is taken.  0, or the status to refuse it with
 * (-ENOSPC: *ask and *left say why). */
static int put_check(struct hold *h, const struct peer_shard *s,
		     struct hopen **op, uint64_t *claim, uint64_t *ask,
		     uint64_t *left)
{
	uint64_t end = s->off > UINT64_MAX - s->len ? UINT64_MAX
						    : s->off + s->len;
	struct hopen *o;

	*left = 0;
	if (dropping(h, s->owner, s->open_id, s->shard))
		return -EAGAIN;         /* an old attempt's files still go */
	o = open_find(h, s->owner, s->open_id, s->shard);
	if (!o && s->off)
		return -ESTALE;         /* not open: from its first chunk */
	if (o && o->total != s->total)
		return -EINVAL;         /* one shard, one size */
	*op = o;
	*ask = shardstore_put_ask(o ? o->claim : 0, s->total, end, claim);
	return room_fits(h, *ask, left);
}

void hold_on_put(struct cluster *cl, struct link *l, const uint8_t *f,
		 size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	uint64_t now = ckptd_now_ms(), claim = 0, ask = 0, left;
	struct hopen *o = NULL;
	struct hold_task *ht;
	struct peer_shard s;
	int ret;

	ret = peer_decode_shard(f, n, &s);
	if (ret == 0)
		ret = check_sender(cl, l, s.owner, s.k, s.m);
	if (ret < 0)
		return refuse(h, l, PEER_SHARD_PUT, hdr->seq, ret);
	/* A sealed shard is immutable; the owner sends it again when an
	 * attempt failed elsewhere (its bytes are the same: the encoding is
	 * deterministic), and its SEAL will find it sealed. */
	if (held_find(h, s.owner, s.open_id, s.shard))
		return link_answer_status(l, PEER_SHARD_PUT | PEER_REPLY,
					  hdr->seq, 0);
	hold_sweep(h, now);
	ret = put_check(h, &s, &o, &claim, &ask, &left);
	if (ret == -ENOSPC)
		return refuse_space(h, l, PEER_SHARD_PUT, hdr->seq, s.open_id,
				    s.shard, ask, left);
	if (ret < 0)
		return refuse(h, l, PEER_SHARD_PUT, hdr->seq, ret);
	ht = task_new(h, l, H_PUT, hdr->seq);
	if (ht && (ht->data = sys_dio_alloc(s.len)))
		ht->len = s.len;        /* aligned: shardstore_put() O_DIRECT */
	if (ht && ht->data && !o)
		o = open_new(h, &s, link_node(l), now);
	if (!ht || !ht->data || !o) {
		if (ht)
			task_free(ht);
		return refuse(h, l, PEER_SHARD_PUT, hdr->seq, -ENOMEM);
	}
	open_claim(h, o, claim);
	o->last_ms = now;
	o->tasks++;
	ht->o = o;
	memcpy(ht->data, s.data, s.len);
	ht->crc = s.crc;
	ht->stripe = s.stripe;
	snprintf(ht->owner, sizeof(ht->owner), "%s", s.owner);
	ht->open_id = s.open_id;
	ht->shard = s.shard;
	ht->off = s.off;
	list_add_tail(&h->busy, &ht->busy);
	pool_submit(cl->d->pool, &ht->pt, 0);
}

/* What a SEAL adds to the room its shard has here (held before, or
 * reserved by its chunks). */
static uint64_t seal_ask(const struct hold *h, const struct peer_seal *s,
			 const struct hopen *o)
{
	const struct held *e = held_find(h, s->owner, s->open_id, s->shard);
	uint64_t have = (e ? e->m.nstripes * e->m.chunk : 0) +
			(o ? o->claim : 0);
	uint64_t bytes = s->nstripes * s->chunk;

	return bytes > have ? bytes - have : 0;
}

/* The shard record a SEAL asks for, into ht. */
static int seal_fill(struct hold_task *ht, const struct peer_seal *s)
{
	ht->m.man = malloc(s->manlen);
	if (!ht->m.man)
		return -ENOMEM;
	memcpy(ht->m.man, s->man, s->manlen);
	ht->m.manlen = s->manlen;
	snprintf(ht->m.owner, sizeof(ht->m.owner), "%s", s->owner);
	snprintf(ht->m.job, sizeof(ht->m.job), "%s", s->job);
	snprintf(ht->m.version, sizeof(ht->m.version), "%s", s->version);
	ht->m.uid = s->uid;
	ht->m.seq = s->seq;
	ht->m.open_id = s->open_id;
	ht->m.k = s->k;
	ht->m.m = s->m;
	ht->m.shard = s->shard;
	ht->m.chunk = s->chunk;
	ht->m.stream_len = s->stream_len;
	ht->m.nstripes = s->nstripes;
	snprintf(ht->owner, sizeof(ht->owner), "%s", s->owner);
	ht->open_id = s->open_id;
	ht->shard = s->shard;
	return 0;
}

void hold_on_seal(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *hdr)
{
	struct hold *h = cl->hold;
	struct hold_task *ht;
	struct peer_seal s;
	struct hopen *o;
	uint64_t ask, left;
	int ret;

	ret = peer_decode_seal(f, n, &s);
	if (ret == 0)
		ret = check_sender(cl, l, s.owner, s.k, s.m);
	if (ret == 0 && dropping(h, s.owner, s.open_id, s.shard))
		ret = -EAGAIN;
	if (ret < 0)
		return refuse(h, l, PEER_SHARD_SEAL, hdr->seq, ret);
	hold_sweep(h, ckptd_now_ms());
	o = open_find(h, s.owner, s.open_id, s.shard);
	ask = seal_ask(h, &s, o);
	if (room_fits(h, ask, &left))
		return refuse_space(h, l, PEER_SHARD_SEAL, hdr->seq, s.open_id,
				    s.shard, ask, left);
	ht = task_new(h, l, H_SEAL, hdr->seq);
	if (!ht || seal_fill(ht, &s) < 0) {
		if (ht)
			task_free(ht);
		return refuse(h, l, PEER_SHARD_SEAL, hdr->seq, -ENOMEM);
	}
	if (o) {
		o->tasks++;
		o->last_ms = ckptd_now_ms();
		ht->o = o;
		/* Every chunk was put here, with its CRC: not read back. */
		if (o->crcs && o->ncrcs == o->nstripes &&
		    s.nstripes == o->nstripes && s.chunk == o->chunk &&
		    (ht->known = malloc(o->nstripes * sizeof(*o->crcs))))
			memcpy(ht->known, o->crcs,
			       o->nstripes * sizeof(*o->crcs));
	}
	list_add_tail(&h->busy, &ht->busy);
	pool_submit(cl->d->pool, &ht->pt, 0);
}

/* Drop shard `shard` of owner's part open_id (0: all of them) on the
 * pool.  Listed busy until done: a request for it waits (dropping()). */
static void drop_submit(struct hold *h, const char *owner, uint64_t open_id,
			uint32_t shard)
{
	struct hold_task *ht = task_new(h, NULL, H_DROP, 0);

	if (!ht)
		return;        /* the next start's scan keeps them: harmless */
	snprintf(ht->owner, sizeof(ht->owner), "%s", owner);
	ht->open_id = open_id;
	ht->shard = shard;
	list_add_tail(&h->busy, &ht->busy);
	pool_submit(h->cl->d->pool, &ht->pt, 0);
}

void hold_part_gone(struct cluster *cl, uint32_t owner, uint64_t open_id)
{
	struct hold *h = cl->hold;
	const char *name = cl_name(cl, owner);
	struct list *pos, *tmp;
	int busy = 0;

	if (!h)
		return;
	held_forget(h, name, open_id, 0);
	/* A PUT or SEAL of it still on the pool would write its file again
	 * after the drop: the drop waits for the last of them. */
	list_for_each(pos, &h->busy) {
		struct hold_task *b = list_entry(pos, struct hold_task, busy);

		if (b->op != H_DROP && !strcmp(b->owner, name) &&
		    b->open_id == open_id) {
			b->gone = 1;
			b->gone_shard = 0;
			busy = 1;
		}
	}
	/* Its shards being written go with it (their reservations too). */
	list_for_each_safe(pos, tmp, &h->opens) {
		struct hopen *o = list_entry(pos, struct hopen, link);

		if (o->open_id == open_id && !strcmp(o->owner, name))
			open_free(h, o);
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

/* Drop every shard owner was writing here: its link went down, or came up
 * again (either way the attempt that sent them failed). */
static void opens_of_owner_drop(struct hold *h, uint32_t owner,
				const char *why)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &h->opens) {
		struct hopen *o = list_entry(pos, struct hopen, link);

		if (o->node == owner)
			open_drop(h, o, why);
	}
}

void hold_owner_up(struct cluster *cl, uint32_t owner)
{
	if (!cl->hold)
		return;
	cl->hold->gen[owner]++;
	opens_of_owner_drop(cl->hold, owner, "its owner's link came up again");
}

/* Does rec, a whole holder record, give shard `shard` (coded k+m) to
 * another node (or code the part otherwise)? */
static int superseded(const struct cluster *cl, uint32_t k, uint32_t m,
		      uint32_t shard, const struct man_holders *rec)
{
	return k != rec->k || m != rec->m || shard >= rec->k + rec->m ||
	       strcmp(rec->name[shard - 1], cl_name(cl, cl->self));
}

/* The part is PROTECTED on its owner with rec: a shard of it still being
 * written here that rec gives to another node never will be sealed. */
static void opens_confirm(struct hold *h, const char *name, uint64_t open_id,
			  const struct man_holders *rec)
{
	const struct cluster *cl = h->cl;
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &h->opens) {
		struct hopen *o = list_entry(pos, struct hopen, link);

		if (o->open_id != open_id || strcmp(o->owner, name) ||
		    !superseded(cl, cl->place.k, cl->place.m, o->shard, rec))
			continue;
		open_drop(h, o, "its part is PROTECTED with the shard on another node");
	}
}

void hold_confirm(struct cluster *cl, uint32_t owner, uint64_t open_id,
		  const struct man_holders *rec)
{
	struct hold *h = cl->hold;
	const char *name = cl_name(cl, owner);
	struct list *pos, *tmp;

	if (!h)
		return;
	if (rec)
		opens_confirm(h, name, open_id, rec);
	list_for_each_safe(pos, tmp, &h->held) {
		struct held *e = list_entry(pos, struct held, link);
		uint32_t shard = e->m.shard;

		if (e->m.open_id != open_id || strcmp(e->m.owner, name))
			continue;
		e->seen = h->gen[owner];
		if (!rec || !superseded(cl, e->m.k, e->m.m, shard, rec) ||
		    busy_in(h, name, open_id, 0))
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

	/* Shards of a node no longer in the list are indexed too: it is
	 * retired (cluster_i.h), its parts listed and read decoded. */
	if (cl_node_id(h->cl, m->owner, 1) < 0)
		return 0;       /* kept, not indexed */
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
	list_init(&h->opens);
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
	space_push(h);
	log_printf(LOG_INFO, "cluster: holding %llu shards (%llu bytes) for peers%s; %llu bytes of the store kept for this node's own parts (holder_reserve)",
		   (unsigned long long)h->nheld, (unsigned long long)h->bytes,
		   st.partial || st.tmp ? "; removed shards never sealed" : "",
		   (unsigned long long)keep_of(h));
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
	list_for_each_safe(pos, tmp, &h->opens) {
		struct hopen *o = list_entry(pos, struct hopen, link);

		list_del(pos);
		free(o->crcs);
		free(o->got);
		free(o);
	}
	free(h->gen);
	free(h);
	cl->hold = NULL;
}

/* ---- room status, the sweep ---------------------------------------------- */

void hold_space(const struct cluster *cl, struct hold_space *out)
{
	struct hold *h = cl->hold;

	memset(out, 0, sizeof(*out));
	if (!h)
		return;
	hold_sweep(h, ckptd_now_ms());
	out->bad = h->bad;
	out->held = h->bytes;
	out->nheld = h->nheld;
	out->reserved = h->reserved;
	out->unwritten = h->unwritten;
	out->nopen = h->nopen;
	out->refused = h->refused;
	out->refused_space = h->refused_space;
	out->dropped = h->dropped;
	out->room = room_left(h);
	out->keep = keep_of(h);
}

/* Why o's attempt is over, or NULL while it may still go on. */
static const char *open_over(const struct hold *h, const struct hopen *o,
			     uint64_t now)
{
	if (h->cl->peers[o->node].st != P_UP)
		return "its owner's link is down";
	if (o->gen != h->gen[o->node])
		return "its owner's link came up again";
	if (!o->tasks && now - o->last_ms >= HOLD_OPEN_IDLE_MS)
		return "no chunk for " HOLD_IDLE_TEXT;
	return NULL;
}

/* At most every HOLD_SWEEP_MS: the shards being written whose attempt is
 * over are dropped, and the file system's free bytes read again. */
static void hold_sweep(struct hold *h, uint64_t now)
{
	struct list *pos, *tmp;

	if (h->sweep_ms && now - h->sweep_ms < HOLD_SWEEP_MS)
		return;
	h->sweep_ms = now;
	segs_refresh(h->cl->d->segs, 0);
	list_for_each_safe(pos, tmp, &h->opens) {
		struct hopen *o = list_entry(pos, struct hopen, link);
		const char *why = open_over(h, o, now);

		if (why)
			open_drop(h, o, why);
	}
}

void hold_tick(struct cluster *cl, uint64_t now_ms)
{
	if (cl->hold)
		hold_sweep(cl->hold, now_ms);
}
