/*
 * rebuild.c - what this node's holders keep of its parts, and rebuilding
 * this node's parts from their shards (see cluster_i.h).
 *
 * Inventory.  At every link up, this node asks the peer for the shards it
 * holds of this node's parts, one HELD round trip a shard (the holder's
 * shardmeta.h record: the part's manifest, open_id, seq, k, m, length).
 * When the answers are all in:
 *
 *   - a PROTECTED part of this node's that the peer should hold a shard of
 *     (its record) and does not has lost a shard (the peer was replaced,
 *     or its store was lost): protect.c sends that shard again
 *     (protect_lost(): a re-protection, the part stays PROTECTED, its
 *     other holders only seal theirs again), so the group can again lose
 *     m nodes;
 *   - during a rebuild, each part named that this node does not have is
 *     rebuilt.
 *
 * Rebuild.  A store that has never served as this node (no <store>/node)
 * and holds no version starts with a rebuild: the node may replace one
 * that was lost, under its name.  `ckptctl rebuild` starts one on any node.
 * <store>/rebuild marks it, durably, so a rebuild interrupted by a crash
 * goes on at the next start; <store>/node holds the node's name, and a
 * store that names another node is refused at start (a store never serves
 * two names).  While the rebuild is on, this node sends no SYNC, so no
 * holder drops a shard of a part it has not rebuilt yet.
 *
 * Each part found is adopted into the namespace at once (parts_adopt: the
 * part's files list and read everywhere, decoded from the shards), then
 * rebuilt, one at a time in the order they were sealed, by rbwrite.c:
 * stripe by stripe from k shards, every record checked against its CRC32C,
 * written to fresh segments, and sealed with the part's own open_id, seq
 * order and seal time, then loaded into the catalog as if found at start.  Its shards on the holders stay valid (same open_id,
 * same stream); it is LOCAL and protect.c brings it to PROTECTED,
 * resending only what holders lack.  Stripes are fetched and written one
 * after another; `[cluster] bandwidth` paces the fetches.
 *
 * A part whose shards are fewer than k over every holder that answered is
 * unrecoverable: logged by name, counted, and its shards kept.  The rebuild
 * ends when every holder of this node's shards has answered and every part
 * found is rebuilt or unrecoverable; then <store>/rebuild goes and SYNC is
 * sent (unless a part was unrecoverable).
 *
 * A part crashed mid-rebuild leaves segments with no manifest, which
 * recovery lists INCOMPLETE under the part's open_id: that entry is dropped
 * (never announced as removed) and the part rebuilt again.
 *
 * Threads: the loop thread only.
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
#include "level.h"
#include "shardmeta.h"
#include "sys.h"

#define REBUILD_RETRY_MS 5000    /* a part that failed is tried again */
/* Holders not up are taken for down only this long after the rebuild
 * started (or this node did): links take a moment to come up. */
#define REBUILD_GRACE_MS 10000

enum inv_state { INV_NONE, INV_ASKING, INV_DONE };

struct inv {                     /* one peer's answers to HELD */
	enum inv_state st;
	uint32_t gen;            /* replies of an older asking are dropped */
	uint64_t after_id;       /* the cursor */
	uint32_t after_shard;
	uint64_t retry_ms;       /* INV_NONE after a failure: ask again then */
	uint64_t *have;          /* (open_id, shard) pairs: open_id, shard */
	uint32_t nhave, chave;
};

enum rb_state { RP_WAIT, RP_RUN, RP_DONE, RP_LOST };

struct rbpart {                  /* a part of this node's to rebuild */
	struct list link;        /* in rb->parts, by seq */
	struct shard_meta m;     /* the first record heard (man, no crcs) */
	uint32_t held;           /* shards some holder said it has (bits) */
	uint32_t hnode[32];      /* node that said it has shard s */
	enum rb_state st;
	int32_t err;
	uint64_t retry_ms;
};

struct rebuild {
	struct cluster *cl;
	char marker[700];        /* <store>/rebuild */
	char store[600];
	int active;
	struct inv *inv;         /* by node */
	struct list parts;
	struct rbwrite *job;     /* the part being rebuilt, or NULL */
	struct rbpart *cur;      /* its part */
	uint32_t nparts, ndone, nlost;
	uint64_t bytes, bytes_done;
	uint64_t started_ms;
};

static struct rebuild *rb_of(const struct cluster *cl)
{
	return cl->rb;
}

int rebuild_active(const struct cluster *cl)
{
	return cl->rb && cl->rb->active;
}

static void rebuild_kick(struct rebuild *rb);

/* ---- the marker, and the node's name in the store --------------------- */

static int write_marker(struct rebuild *rb)
{
	int ret = sys_write_file(rb->marker, "rebuild\n", 8, 0600);

	if (ret == 0)
		ret = sys_fsync_dir(rb->store);
	return ret;
}

static void end_rebuild(struct rebuild *rb)
{
	struct cluster *cl = rb->cl;
	uint32_t i;

	if (unlink(rb->marker) < 0 && errno != ENOENT)
		log_printf(LOG_WARNING, "rebuild: cannot remove %s: %s",
			   rb->marker, strerror(errno));
	sys_fsync_dir(rb->store);
	rb->active = 0;
	log_printf(LOG_NOTICE, "rebuild: done in %.1f s: %u parts rebuilt (%llu MiB), %u unrecoverable",
		   (ckptd_now_ms() - rb->started_ms) / 1000.0, rb->ndone,
		   (unsigned long long)(rb->bytes_done >> 20), rb->nlost);
	if (rb->nlost)
		return;          /* their shards stay: no SYNC */
	for (i = 0; i < cl->place.n; i++)
		if (i != cl->self && cl->peers[i].st == P_UP)
			parts_sync(cl, i);
}

/* Check <store>/node against this node's name (writing it the first
 * time), and decide whether this start rebuilds.  0 or -errno (logged). */
static int check_store(struct rebuild *rb)
{
	struct cluster *cl = rb->cl;
	const char *self = cl_name(cl, cl->self);
	char path[700], name[PLACE_NAME_MAX + 2];
	ssize_t n = -1;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/node", rb->store);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n < 0)
			return -errno;
		name[n] = 0;
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, self)) {
			log_printf(LOG_ERR, "cluster: store %s belongs to node '%s', not '%s': refusing to serve it under another name",
				   rb->store, name, self);
			return -EEXIST;
		}
	} else if (errno != ENOENT) {
		return -errno;
	}
	rb->active = access(rb->marker, F_OK) == 0;
	if (fd >= 0)
		return 0;
	/* A store new to this node: with nothing in it, this may be the
	 * replacement of a node that was lost. */
	if (!cl->d->cat->nversions && !rb->active) {
		ret = write_marker(rb);
		if (ret < 0)
			return ret;
		rb->active = 1;
	}
	snprintf(name, sizeof(name), "%s\n", self);
	ret = sys_write_file(path, name, strlen(name), 0600);
	if (ret == 0)
		ret = sys_fsync_dir(rb->store);
	return ret;
}

/* ---- the parts found -------------------------------------------------------- */

static struct rbpart *part_find(struct rebuild *rb, uint64_t open_id)
{
	struct list *pos;

	list_for_each(pos, &rb->parts) {
		struct rbpart *p = list_entry(pos, struct rbpart, link);

		if (p->m.open_id == open_id)
			return p;
	}
	return NULL;
}

static void part_insert(struct rebuild *rb, struct rbpart *p)
{
	struct list *pos;

	list_for_each(pos, &rb->parts)
		if (list_entry(pos, struct rbpart, link)->m.seq > p->m.seq)
			break;
	list_add_tail(pos, &p->link);
}

static unsigned popcount(uint32_t x)
{
	return (unsigned)__builtin_popcount(x);
}

/* Does this node need the part m names?  1 yes, 0 no (it has it, or a part
 * of the same name that supersedes it). */
static int wanted(struct rebuild *rb, const struct shard_meta *m)
{
	struct ckptd *d = rb->cl->d;
	struct version *v = catalog_version(d->cat, m->job, m->version);
	struct job *j = catalog_job(d->cat, m->job);

	if (j && j->uid != m->uid) {
		log_printf(LOG_WARNING, "rebuild: %s/%s belongs to uid %u, but job %s here is uid %u's: not rebuilt",
			   m->job, m->version, m->uid, m->job, (unsigned)j->uid);
		return 0;
	}
	if (parts_taken_over(rb->cl, rb->cl->self, m->open_id, 1, NULL)) {
		log_printf(LOG_INFO, "rebuild: %s/%s was taken over by another node while this one was gone: not rebuilt",
			   m->job, m->version);
		return 0;
	}
	if (!v)
		return 1;
	if (v->open_id == m->open_id && version_dead(v)) {
		/* What an interrupted rebuild of it left: drop the entry
		 * (never announced as removed: its shards must stay). */
		return catalog_remove(d->cat, v) == 0;
	}
	if (v->open_id != m->open_id)
		log_printf(LOG_INFO, "rebuild: %s/%s here is another write of that name: the lost one is not rebuilt",
			   m->job, m->version);
	return 0;
}

/* Holder node said it has shard m->shard of part m->open_id. */
static void found(struct rebuild *rb, struct shard_meta *m, uint32_t node)
{
	struct rbpart *p = part_find(rb, m->open_id);
	int ret;

	if (p) {
		p->held |= 1u << m->shard;
		p->hnode[m->shard] = node;
		return;
	}
	if (!wanted(rb, m))
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->m = *m;               /* takes man; crcs are not kept */
	free(p->m.crcs);
	p->m.crcs = NULL;
	m->man = NULL;
	m->crcs = NULL;
	p->held = 1u << p->m.shard;
	p->hnode[p->m.shard] = node;
	ret = parts_adopt(rb->cl, &p->m);
	if (ret < 0 && ret != -EEXIST) {
		log_printf(LOG_ERR, "rebuild: %s/%s: its manifest does not decode: %s",
			   p->m.job, p->m.version, ckpt_strerror(ret));
		shardmeta_release(&p->m);
		free(p);
		return;
	}
	part_insert(rb, p);
	rb->nparts++;
	rb->bytes += p->m.stream_len;
	log_printf(LOG_INFO, "rebuild: found %s/%s (%llu bytes, open_id %016llx)",
		   p->m.job, p->m.version,
		   (unsigned long long)p->m.stream_len,
		   (unsigned long long)p->m.open_id);
}

/* ---- inventory: HELD, and what a peer should still hold ------------------ */

static int inv_add(struct inv *iv, uint64_t open_id, uint32_t shard)
{
	if (iv->nhave + 2 > iv->chave) {
		uint32_t c = iv->chave ? iv->chave * 2 : 64;
		uint64_t *n = realloc(iv->have, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		iv->have = n;
		iv->chave = c;
	}
	iv->have[iv->nhave++] = open_id;
	iv->have[iv->nhave++] = shard;
	return 0;
}

static int inv_has(const struct inv *iv, uint64_t open_id, uint32_t shard)
{
	uint32_t i;

	for (i = 0; i < iv->nhave; i += 2)
		if (iv->have[i] == open_id && iv->have[i + 1] == shard)
			return 1;
	return 0;
}

/* node answered all: the PROTECTED parts it lost a shard of are protected
 * again. */
static void audit(struct rebuild *rb, uint32_t node)
{
	struct cluster *cl = rb->cl;
	struct inv *iv = &rb->inv[node];
	struct list *jp, *vp;
	uint32_t s, w, ids[32];

	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->state != CKPT_ST_SEALED || v->removing ||
			    (v->copies & (CKPT_COPY_LOCAL | CKPT_COPY_PEERS)) !=
			    (CKPT_COPY_LOCAL | CKPT_COPY_PEERS))
				continue;
			holders_resolve(cl, v->holders, cl->self, ids);
			w = v->holders ? v->holders->k + v->holders->m - 1
				       : cl->place.k + cl->place.m - 1;
			for (s = 1; s <= w; s++) {
				if (ids[s - 1] != node ||
				    inv_has(iv, v->open_id, s))
					continue;
				log_printf(LOG_WARNING, "cluster: %s no longer holds shard %u of %s/%s: sending it again (the part stays PROTECTED: its other shards are there)",
					   cl_name(cl, node), s, j->name, v->name);
				protect_lost(cl, v, s);
			}
		}
	}
}

struct held_req {
	struct rebuild *rb;
	uint32_t node, gen;
};

static void ask_held(struct rebuild *rb, uint32_t node);

static void on_held(struct ckptd *d, void *arg, int status,
		    const uint8_t *frame, size_t len)
{
	struct held_req *hr = arg;
	struct rebuild *rb = hr->rb;
	struct inv *iv = &rb->inv[hr->node];
	struct cluster *cl = rb->cl;
	struct shard_meta m;
	struct peer_data pd;
	int ret = status;

	if (!rb->inv || iv->gen != hr->gen || iv->st != INV_ASKING) {
		free(hr);
		return;
	}
	if (ret == -ENOENT) {            /* all said */
		iv->st = INV_DONE;
		audit(rb, hr->node);
		free(hr);
		rebuild_kick(rb);
		return;
	}
	if (ret == 0)
		ret = peer_decode_data_for(frame, len, PEER_HELD, &pd);
	if (ret == 0)
		ret = shardmeta_decode(pd.data, pd.len, &m);
	if (ret < 0) {
		log_printf(LOG_WARNING, "cluster: asking %s what it holds: %s",
			   cl_name(cl, hr->node), ckpt_strerror(ret));
		iv->st = INV_NONE;       /* asked again soon */
		iv->retry_ms = ckptd_now_ms() + REBUILD_RETRY_MS;
		free(hr);
		return;
	}
	iv->after_id = m.open_id;
	iv->after_shard = m.shard;
	/* Any peer may hold a shard of this node's (the part's holder
	 * record chose it), and says so for itself. */
	if (!strcmp(m.owner, cl_name(cl, cl->self)) &&
	    m.k == cl->place.k && m.m == cl->place.m &&
	    m.shard < m.k + m.m) {
		inv_add(iv, m.open_id, m.shard);
		if (rb->active)
			found(rb, &m, hr->node);
	}
	shardmeta_release(&m);
	ask_held(rb, hr->node);
	free(hr);
}

static void ask_held(struct rebuild *rb, uint32_t node)
{
	struct cluster *cl = rb->cl;
	struct inv *iv = &rb->inv[node];
	struct held_req *hr = malloc(sizeof(*hr));
	struct peer_sget g;
	uint8_t *buf = malloc(PEER_FRAME_CAP(0));
	uint32_t seq = link_seq(cl);
	int n;

	memset(&g, 0, sizeof(g));
	snprintf(g.owner, sizeof(g.owner), "%s", cl_name(cl, cl->self));
	g.open_id = iv->after_id;
	g.shard = iv->after_shard;
	n = buf && hr ? peer_encode_held(buf, PEER_FRAME_CAP(0), seq, &g)
		      : -ENOMEM;
	if (n < 0)
		goto out_fail;
	hr->rb = rb;
	hr->node = node;
	hr->gen = iv->gen;
	if (link_request(cl, node, buf, (size_t)n, seq, CLUSTER_READ_MS,
			 on_held, hr) < 0) {
		buf = NULL;      /* freed by link_request */
		goto out_fail;
	}
	return;

out_fail:
	free(buf);
	free(hr);
	iv->st = INV_NONE;
	iv->retry_ms = ckptd_now_ms() + REBUILD_RETRY_MS;
}

/* May node hold shards of this node's parts?  Any peer may: a part's
 * holders are whatever its record says. */
static int holds_mine(const struct cluster *cl, uint32_t node)
{
	return node != cl->self;
}

void rebuild_peer_up(struct cluster *cl, uint32_t node)
{
	struct rebuild *rb = rb_of(cl);
	struct inv *iv;

	if (!rb || !holds_mine(cl, node))
		return;
	iv = &rb->inv[node];
	iv->gen++;
	iv->st = INV_ASKING;
	iv->after_id = 0;
	iv->after_shard = 0;
	iv->nhave = 0;
	ask_held(rb, node);
	rebuild_kick(rb);        /* parts that waited for this holder */
}

/* ---- a part's write (rbwrite.c) ------------------------------------------ */

static void on_written(void *arg, int err)
{
	struct rebuild *rb = arg;
	struct rbpart *p = rb->cur;

	rb->job = NULL;
	rb->cur = NULL;
	if (err == 0) {
		p->st = RP_DONE;
		rb->ndone++;
	} else {
		p->st = RP_WAIT;
		p->err = err;
		p->retry_ms = ckptd_now_ms() + REBUILD_RETRY_MS;
		if (err == -ECANCELED)
			return;
		log_printf(LOG_ERR, "rebuild: %s/%s: %s; trying again in %u s",
			   p->m.job, p->m.version, ckpt_strerror(err),
			   REBUILD_RETRY_MS / 1000);
	}
	rebuild_kick(rb);
}

static void job_start(struct rebuild *rb, struct rbpart *p)
{
	int ret;

	p->st = RP_RUN;
	rb->cur = p;
	ret = rbwrite_start(rb->cl, rb->cl->self, p->m.open_id, &p->m, p->held,
			    p->hnode, &rb->bytes_done, on_written, rb,
			    &rb->job);
	if (ret == 0)
		return;
	rb->cur = NULL;
	p->st = RP_WAIT;
	p->err = ret;
	p->retry_ms = ckptd_now_ms() + REBUILD_RETRY_MS;
	log_printf(LOG_ERR, "rebuild: %s/%s cannot start: %s", p->m.job,
		   p->m.version, ckpt_strerror(ret));
}

/* ---- what to do next -------------------------------------------------------- */

/* Shards of p whose holders are up now. */
static unsigned reachable(const struct cluster *cl, const struct rbpart *p)
{
	unsigned n = 0, s;

	for (s = 1; s < cl->place.k + cl->place.m; s++)
		if ((p->held & (1u << s)) && cl->peers[p->hnode[s]].st == P_UP)
			n++;
	return n;
}

/*
 * Start the next part that can be rebuilt, and end the rebuild when nothing
 * is left.  A holder that never answered (down since this node started)
 * counts against a part only while it could make the difference: a part
 * no holder up names has at most as many shards as holders unheard, so
 * once every holder up has answered and fewer than k are unheard, nothing
 * unnamed can be rebuilt, and a named part short of k shards counting the
 * unheard is unrecoverable.
 */
static void rebuild_kick(struct rebuild *rb)
{
	struct cluster *cl = rb->cl;
	uint64_t now = ckptd_now_ms();
	unsigned unheard = 0, asking = 0;
	struct list *pos;
	int open = 0;
	uint32_t i;

	if (!rb->active || rb->job || cl->stopping)
		return;
	for (i = 0; i < cl->place.n; i++) {
		if (i == cl->self || !holds_mine(cl, i) ||
		    rb->inv[i].st == INV_DONE)
			continue;
		unheard++;
		/* Up, or maybe about to be: its answers may still come. */
		asking += cl->peers[i].st == P_UP ||
			  now < rb->started_ms + REBUILD_GRACE_MS;
	}
	list_for_each(pos, &rb->parts) {
		struct rbpart *p = list_entry(pos, struct rbpart, link);

		if (p->st != RP_WAIT)
			continue;
		if (!asking && popcount(p->held) + unheard < cl->place.k) {
			p->st = RP_LOST;
			rb->nlost++;
			log_printf(LOG_ERR, "rebuild: %s/%s is unrecoverable: its holders keep %u of the %u shards it needs",
				   p->m.job, p->m.version, popcount(p->held),
				   cl->place.k);
			continue;
		}
		open++;
		if (now >= p->retry_ms && reachable(cl, p) >= cl->place.k) {
			job_start(rb, p);
			if (rb->job)
				return;
		}
	}
	if (!asking && unheard < cl->place.k && !open) {
		if (unheard)
			log_printf(LOG_NOTICE, "rebuild: %u holder(s) down and never asked: they cannot hold enough shards of any part to rebuild it",
				   unheard);
		end_rebuild(rb);
	}
}

void rebuild_tick(struct cluster *cl)
{
	struct rebuild *rb = rb_of(cl);
	uint32_t i;

	if (!rb)
		return;
	/* Holders up whose answers broke off are asked again. */
	for (i = 0; i < cl->place.n; i++)
		if (i != cl->self && rb->inv[i].st == INV_NONE &&
		    cl->peers[i].st == P_UP && holds_mine(cl, i) &&
		    ckptd_now_ms() >= rb->inv[i].retry_ms)
			rebuild_peer_up(cl, i);
	if (!rb->active)
		return;
	if (rb->job)
		rbwrite_tick(rb->job);   /* a stripe waiting for a segment */
	else
		rebuild_kick(rb);
}

int rebuild_start(struct cluster *cl)
{
	struct rebuild *rb = rb_of(cl);
	uint32_t i;
	int ret;

	if (!rb)
		return -ENOTSUP;
	if (rb->active)
		return 0;
	ret = write_marker(rb);
	if (ret < 0)
		return ret;
	rb->active = 1;
	rb->started_ms = ckptd_now_ms();
	rb->nparts = rb->ndone = rb->nlost = 0;
	rb->bytes = rb->bytes_done = 0;
	log_printf(LOG_NOTICE, "rebuild: started: asking the peers what they hold of this node's parts");
	for (i = 0; i < cl->place.n; i++)
		if (i != cl->self && cl->peers[i].st == P_UP)
			rebuild_peer_up(cl, i);
	rebuild_kick(rb);
	return 0;
}

void rebuild_status(const struct cluster *cl, struct ckpt_status *s)
{
	const struct rebuild *rb = rb_of(cl);
	uint32_t i;
	size_t at = 0;

	if (!rb)
		return;
	s->rebuild_state = rb->active ? CKPT_REBUILD_RUNNING
		: rb->started_ms ? CKPT_REBUILD_DONE : CKPT_REBUILD_NONE;
	s->rebuild_parts = rb->nparts;
	s->rebuild_parts_done = rb->ndone;
	s->rebuild_parts_lost = rb->nlost;
	s->rebuild_bytes = rb->bytes;
	s->rebuild_bytes_done = rb->bytes_done;
	s->rebuild_waiting[0] = 0;
	if (!rb->active)
		return;
	for (i = 0; i < cl->place.n; i++) {
		int n;

		if (i == cl->self || !holds_mine(cl, i) ||
		    rb->inv[i].st == INV_DONE)
			continue;
		n = snprintf(s->rebuild_waiting + at,
			     sizeof(s->rebuild_waiting) - at, "%s%s",
			     at ? " " : "", cl_name(cl, i));
		if (n < 0 || (size_t)n >= sizeof(s->rebuild_waiting) - at)
			break;
		at += (size_t)n;
	}
}

/* ---- life ---------------------------------------------------------------------- */

int rebuild_open(struct cluster *cl)
{
	struct rebuild *rb = calloc(1, sizeof(*rb));
	const struct conf *conf = cl->d->conf;
	int ret;

	if (!rb)
		return -ENOMEM;
	rb->cl = cl;
	list_init(&rb->parts);
	snprintf(rb->store, sizeof(rb->store), "%s", conf->store);
	snprintf(rb->marker, sizeof(rb->marker), "%s/rebuild", conf->store);
	rb->inv = calloc(cl->place.n, sizeof(*rb->inv));
	if (!rb->inv) {
		free(rb);
		return -ENOMEM;
	}
	cl->rb = rb;
	ret = check_store(rb);
	if (ret < 0) {
		if (ret != -EEXIST)
			log_printf(LOG_ERR, "cluster: store %s: %s", rb->store,
				   strerror(-ret));
		rebuild_close(cl);
		return ret;
	}
	if (rb->active) {
		rb->started_ms = ckptd_now_ms();
		log_printf(LOG_NOTICE, "rebuild: this node's store is new or was being rebuilt: asking the peers for the parts they hold shards of");
	}
	return 0;
}

void rebuild_close(struct cluster *cl)
{
	struct rebuild *rb = rb_of(cl);
	struct list *pos, *tmp;
	uint32_t i;

	if (!rb)
		return;
	/* A job the pool did not hold (it waited for a segment): its
	 * segments' headers make the next start list it INCOMPLETE, and the
	 * rebuild does it again. */
	if (rb->job)
		rbwrite_free(rb->job);
	list_for_each_safe(pos, tmp, &rb->parts) {
		struct rbpart *p = list_entry(pos, struct rbpart, link);

		list_del(&p->link);
		shardmeta_release(&p->m);
		free(p);
	}
	for (i = 0; i < cl->place.n; i++)
		free(rb->inv[i].have);
	free(rb->inv);
	rb->inv = NULL;
	free(rb);
	cl->rb = NULL;
}
