/*
 * link.c - the TCP links between cluster nodes (see cluster_i.h).
 *
 * A link is one TCP connection driven by io_uring on the loop: a connect,
 * one receive always armed (unless its handlers hold LINK_MAX_HOLDS frames'
 * worth of work), and one send at a time from a queue of whole frames.  It
 * is reference counted by its operations in flight and its holders, so that
 * closing it (shutdown, then close once nothing is in flight) never leaves
 * the kernel writing into freed memory.  The handshake is a small state
 * machine:
 *
 *   connecting side:  CONNECT -> HELLO sent -> CHALLENGE checked, AUTH sent
 *                     -> AUTH's reply 0 -> UP
 *   accepting side:   HELLO read -> CHALLENGE sent -> AUTH checked, reply
 *                     sent -> UP
 *
 * Before UP a frame may carry at most LINK_HS_MAX payload bytes, so an
 * unauthenticated connection costs a few KiB at most.  On an UP link,
 * requests go to their handlers (hold.c, parts.c) and replies to the
 * request that waits for them (struct preq), matched by seq.
 *
 * The heartbeat (cluster.h) runs from link_tick(): a link notes when it
 * last queued or sent a frame (sent_ms) and when it last received a byte
 * (heard_ms).  An UP link with nothing queued that sent nothing for
 * CLUSTER_PING_MS (a third of the timeout if that is less) sends a PING,
 * which the peer answers; so a live peer is heard at least that often, and
 * one silent for heartbeat_timeout is taken for hung.  A link whose receive is not armed (its handlers hold too
 * much, may_read()) hears nothing by this node's choice: its silence clock
 * restarts at every tick until it reads again.  A tick that comes late
 * (this node's loop was stalled, or the process stopped) excuses the
 * stall: what the peer sent meanwhile may still wait in the ring.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_i.h"

#define LINK_HS_MAX   4096              /* payload bytes before UP */
#define LINK_RBUF_MIN (64u << 10)
#define LINK_RBUF_KEEP (8u << 20)       /* shrink a buffer past this */
#define LINK_TICK_MS   250              /* ckptd's tick (link_tick()) */

enum link_state {
	L_CONNECT,        /* connecting side: connect in flight */
	L_HELLO_SENT,     /* connecting side: waits for CHALLENGE */
	L_AUTH_SENT,      /* connecting side: waits for AUTH's reply */
	L_WAIT_HELLO,     /* accepting side: waits for HELLO */
	L_CHALLENGED,     /* accepting side: waits for AUTH */
	L_UP,
	L_CLOSED,
};

struct oframe {
	struct list link;
	uint8_t *buf;
	size_t len;
	int reply;                /* an answer to the peer's request */
};

struct preq {
	struct list link;         /* in link->reqs, oldest first */
	uint32_t seq;
	uint64_t sent_ms;
	uint64_t deadline_ms;     /* 0: none */
	link_reply_fn fn;
	void *arg;
};

struct link {
	struct list link;         /* in cluster.links */
	struct cluster *cl;
	struct peer *peer;        /* NULL until the HELLO names it */
	int fd;
	int outgoing;
	enum link_state st;
	uint32_t refs;            /* the link itself, each op, each hold */
	uint32_t holds;           /* handlers' holds (LINK_MAX_HOLDS) */
	int recv_armed;
	int processing;           /* link_process() runs */
	uint64_t deadline_ms;     /* of the handshake */
	uint64_t sent_ms;         /* a frame last queued or sent */
	uint64_t heard_ms;        /* a byte last received (or reading resumed) */
	uint8_t my_nonce[PEER_NONCE_LEN], their_nonce[PEER_NONCE_LEN];
	struct loop_op connect_op, recv_op, send_op;
	uint8_t *rbuf;
	size_t rcap, rlen;
	struct list outq;         /* struct oframe; the first is sending */
	size_t queued;            /* bytes in outq not yet sent */
	size_t replies;           /* of which, replies (whole frames) */
	size_t soff;              /* of the first frame */
	int sending;
	struct list reqs;         /* struct preq */
};

static struct ckptd *dm(const struct link *l)
{
	return l->cl->d;
}

uint32_t link_seq(struct cluster *cl)
{
	if (++cl->next_seq == 0)
		cl->next_seq = 1;
	return cl->next_seq;
}

uint32_t link_node(const struct link *l)
{
	return l->peer->id;
}

static void oframe_free(struct oframe *o)
{
	free(o->buf);
	free(o);
}

static void oframe_gone(struct link *l, struct oframe *o)
{
	if (o->reply)
		l->replies -= o->len;
	list_del(&o->link);
	oframe_free(o);
}

static void link_put(struct link *l)
{
	struct list *pos, *tmp;

	if (--l->refs)
		return;
	if (l->fd >= 0)
		close(l->fd);
	list_for_each_safe(pos, tmp, &l->outq) {
		list_del(pos);
		oframe_free(list_entry(pos, struct oframe, link));
	}
	list_del(&l->link);
	free(l->rbuf);
	free(l);
}

void peer_set(struct cluster *cl, struct peer *p, enum peer_state st,
	      int err)
{
	const char *nm = cl_name(cl, p->id);
	enum peer_state was = p->st;

	if ((st == P_UP) != (was == P_UP))
		p->since_ms = ckptd_now_ms();
	if (st == P_UP && was != P_UP)
		p->ups++;
	if (st == P_UP) {
		log_printf(LOG_NOTICE, "cluster: peer %s up", nm);
		p->backoff_ms = 0;
		p->last_err = 0;
	} else if (st == P_DOWN && p->st == P_UP) {
		log_printf(LOG_WARNING, "cluster: peer %s down: %s", nm,
			   err ? ckpt_strerror(err) : "connection closed");
	}
	if (st == P_DOWN) {
		if (err)
			p->last_err = err;
		p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2
					      : CLUSTER_BACKOFF_MIN_MS;
		if (p->backoff_ms > CLUSTER_BACKOFF_MAX_MS)
			p->backoff_ms = CLUSTER_BACKOFF_MAX_MS;
		p->retry_ms = ckptd_now_ms() + p->backoff_ms;
	}
	p->st = st;
	if (st == P_UP && was != P_UP && !cl->stopping) {
		parts_peer_up(cl, p->id);
		protect_peer_up(cl, p->id);
		rebuild_peer_up(cl, p->id);
	}
}

/* Fail every request still waiting on l. */
static void fail_requests(struct link *l, int err)
{
	struct list reqs, *pos, *tmp;

	list_init(&reqs);
	list_splice_tail(&reqs, &l->reqs);
	list_for_each_safe(pos, tmp, &reqs) {
		struct preq *r = list_entry(pos, struct preq, link);

		list_del(&r->link);
		r->fn(dm(l), r->arg, err, NULL, 0);
		free(r);
	}
}

/* Close l (err: why, for the log and the peer); its memory goes once the
 * operations in flight and the holds are back. */
static void link_close(struct link *l, int err)
{
	struct cluster *cl = l->cl;
	struct list *pos, *tmp;

	if (l->st == L_CLOSED)
		return;
	l->st = L_CLOSED;
	if (l->fd >= 0)
		shutdown(l->fd, SHUT_RDWR);
	/* Unsent frames go now, but the one being sent stays for its op. */
	list_for_each_safe(pos, tmp, &l->outq) {
		if (l->sending && pos == l->outq.next)
			continue;
		oframe_gone(l, list_entry(pos, struct oframe, link));
	}
	l->queued = 0;
	if (l->peer && l->peer->l == l) {
		l->peer->l = NULL;
		peer_set(cl, l->peer, P_DOWN, err);
	}
	fail_requests(l, -ENOTCONN);
	link_put(l);
}

/* A handshake or a frame that fails: logged (rate-limited: any host may
 * connect), the link closed with err (the peer's last error). */
static void link_fail(struct link *l, const char *why, int err)
{
	struct cluster *cl = l->cl;

	if (log_rl_ok(&cl->bad_rl, 10, ckptd_now_ms(), "cluster: refused links"))
		log_printf(LOG_WARNING, "cluster: %s link%s%s refused: %s",
			   l->outgoing ? "outgoing" : "incoming",
			   l->peer ? " with " : "",
			   l->peer ? cl_name(cl, l->peer->id) : "", why);
	link_close(l, err);
}

static void link_refuse(struct link *l, const char *why)
{
	link_fail(l, why, -EACCES);
}

static void link_recv_arm(struct link *l);
static void link_process(struct link *l);
static void send_next(struct link *l);

/* May l read more frames?  Not while its handlers hold LINK_MAX_HOLDS
 * frames' worth of work, nor while LINK_MAX_QUEUED bytes of replies wait to
 * be sent to it: a peer that sends requests and never reads the replies
 * stops being read, and its TCP window closes, so its cost stays bounded.
 * Only replies count: a node's own requests are bounded by its own windows
 * (protect.c), and two nodes that both stopped reading for their requests
 * would wait on each other. */
static int may_read(const struct link *l)
{
	return l->holds < LINK_MAX_HOLDS && l->replies < LINK_MAX_QUEUED;
}


static void on_send(struct loop_op *op, int res)
{
	struct link *l = (struct link *)((char *)op - offsetof(struct link, send_op));
	struct oframe *o = list_entry(l->outq.next, struct oframe, link);

	l->sending = 0;
	if (res <= 0) {
		oframe_gone(l, o);
		link_close(l, res < 0 ? res : -EPIPE);
	} else if (l->st == L_CLOSED) {
		oframe_gone(l, o);
	} else {
		l->soff += (size_t)res;
		l->queued -= (size_t)res;
		l->sent_ms = ckptd_now_ms();
		if (l->soff == o->len) {
			oframe_gone(l, o);
			l->soff = 0;
		}
		send_next(l);
		if (l->st == L_UP && !l->recv_armed && may_read(l))
			link_process(l);
	}
	link_put(l);
}

static void send_next(struct link *l)
{
	struct io_uring_sqe *sqe;
	struct oframe *o;

	if (l->sending || l->st == L_CLOSED || list_empty(&l->outq))
		return;
	o = list_entry(l->outq.next, struct oframe, link);
	l->sending = 1;
	l->refs++;
	l->send_op.fn = on_send;
	sqe = loop_sqe(&dm(l)->loop, &l->send_op);
	io_uring_prep_send(sqe, l->fd, o->buf + l->soff, o->len - l->soff,
			   MSG_NOSIGNAL);
}

/* Queue buf (malloc'd, len bytes; ownership passes); reply: an answer. */
static int link_queue(struct link *l, void *buf, size_t len, int reply)
{
	struct oframe *o;

	if (l->st == L_CLOSED) {
		free(buf);
		return -ENOTCONN;
	}
	o = malloc(sizeof(*o));
	if (!o) {
		free(buf);
		return -ENOMEM;
	}
	o->buf = buf;
	o->len = len;
	o->reply = reply;
	list_add_tail(&l->outq, &o->link);
	l->queued += len;
	l->sent_ms = ckptd_now_ms();
	if (reply)
		l->replies += len;
	send_next(l);
	return 0;
}

/* Encode with enc into a fresh buffer of cap bytes and queue it; an
 * encode error closes the link. */
static void link_send_small(struct link *l, int n, uint8_t *buf)
{
	if (n < 0) {
		free(buf);
		link_close(l, n);
		return;
	}
	if (link_queue(l, buf, (size_t)n, 0) < 0)
		link_close(l, -ENOMEM);
}

void link_answer(struct link *l, void *buf, size_t len)
{
	if (l->st != L_UP) {
		free(buf);
		return;
	}
	if (link_queue(l, buf, len, 1) < 0)
		link_close(l, -ENOMEM);
}

void link_answer_status(struct link *l, uint16_t type, uint32_t seq,
			int32_t status)
{
	uint8_t *buf = malloc(PEER_HDR_LEN);
	int n;

	if (!buf) {
		link_close(l, -ENOMEM);
		return;
	}
	n = peer_encode_status(buf, PEER_HDR_LEN, type & ~PEER_REPLY, seq,
			       status);
	if (n < 0) {
		free(buf);
		link_close(l, n);
		return;
	}
	link_answer(l, buf, (size_t)n);
}

int link_request(struct cluster *cl, uint32_t node, void *buf, size_t len,
		 uint32_t seq, int timeout_ms, link_reply_fn fn, void *arg)
{
	struct peer *p = &cl->peers[node];
	struct link *l = p->l;
	struct preq *r;
	int ret;

	if (!l || p->st != P_UP || l->st != L_UP) {
		free(buf);
		return -ENOTCONN;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(buf);
		return -ENOMEM;
	}
	r->seq = seq;
	r->sent_ms = ckptd_now_ms();
	r->deadline_ms = timeout_ms > 0 ? r->sent_ms + (uint64_t)timeout_ms : 0;
	r->fn = fn;
	r->arg = arg;
	ret = link_queue(l, buf, len, 0);
	if (ret < 0) {
		free(r);
		return ret;
	}
	list_add_tail(&l->reqs, &r->link);
	return 0;
}

struct link *link_hold(struct link *l)
{
	l->refs++;
	l->holds++;
	return l;
}

void link_drop(struct link *l)
{
	l->holds--;
	if (l->st == L_UP && !l->recv_armed && may_read(l))
		link_process(l);
	link_put(l);
}

void link_lag(const struct cluster *cl, uint32_t node, size_t *queued,
	      uint64_t *oldest_ms)
{
	const struct link *l = cl->peers[node].l;

	*queued = 0;
	*oldest_ms = 0;
	if (!l || l->st != L_UP)
		return;
	*queued = l->queued;
	if (!list_empty(&l->reqs))
		*oldest_ms = list_entry(l->reqs.next, struct preq, link)->sent_ms;
}

/* ---- the handshake ------------------------------------------------------ */

static void send_hello(struct link *l, uint16_t type, const uint8_t *proof)
{
	struct peer_hello h;
	uint8_t *buf = malloc(512);

	if (!buf) {
		link_close(l, -ENOMEM);
		return;
	}
	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", cl_name(l->cl, l->cl->self));
	memcpy(h.nonce, l->my_nonce, PEER_NONCE_LEN);
	if (proof)
		memcpy(h.proof, proof, PEER_PROOF_LEN);
	link_send_small(l, peer_encode_hello(buf, 512, type, 1, &h), buf);
}

/* l is authenticated: it becomes its peer's link. */
static void link_up(struct link *l)
{
	struct peer *p = l->peer;

	if (p->l && p->l != l)
		link_close(p->l, 0);    /* an older one: this one wins */
	p->l = l;
	l->st = L_UP;
	l->heard_ms = p->heard_ms = ckptd_now_ms();
	peer_set(l->cl, p, P_UP, 0);
}

/* Accepting side: HELLO names a member of the cluster that makes links to
 * this node. */
static void got_hello(struct link *l, const uint8_t *f, size_t n)
{
	struct cluster *cl = l->cl;
	struct peer_hello h;
	uint8_t proof[PEER_PROOF_LEN];
	int id;

	if (peer_decode_hello(f, n, &h) < 0)
		return link_refuse(l, "bad HELLO");
	id = place_find(&cl->place, h.name);
	if (id < 0 || (uint32_t)id == cl->self || cl->peers[id].outgoing)
		return link_refuse(l, "HELLO from a node that is not a peer of this one");
	l->peer = &cl->peers[id];
	memcpy(l->their_nonce, h.nonce, PEER_NONCE_LEN);
	if (peer_nonce(l->my_nonce) < 0 ||
	    peer_proof(cl->key, cl->keylen, 'A', l->their_nonce, l->my_nonce,
		       h.name, cl_name(cl, cl->self), proof) < 0)
		return link_refuse(l, "cannot make a proof");
	l->st = L_CHALLENGED;
	send_hello(l, PEER_CHALLENGE, proof);
}

/* Connecting side: the CHALLENGE must prove the key, and name the peer. */
static void got_challenge(struct link *l, const uint8_t *f, size_t n)
{
	struct cluster *cl = l->cl;
	struct peer_hello h;
	struct peer_auth a;
	uint8_t want[PEER_PROOF_LEN], *buf;

	if (peer_decode_hello(f, n, &h) < 0)
		return link_refuse(l, "bad CHALLENGE");
	if (strcmp(h.name, cl_name(cl, l->peer->id)))
		return link_refuse(l, "the node that answered is another one");
	memcpy(l->their_nonce, h.nonce, PEER_NONCE_LEN);
	if (peer_proof(cl->key, cl->keylen, 'A', l->my_nonce, l->their_nonce,
		       cl_name(cl, cl->self), h.name, want) < 0 ||
	    !peer_proof_ok(want, h.proof))
		return link_refuse(l, "the peer does not hold the cluster key");
	if (peer_proof(cl->key, cl->keylen, 'C', l->my_nonce, l->their_nonce,
		       cl_name(cl, cl->self), h.name, a.proof) < 0)
		return link_refuse(l, "cannot make a proof");
	l->st = L_AUTH_SENT;
	buf = malloc(512);
	if (!buf)
		return link_close(l, -ENOMEM);
	link_send_small(l, peer_encode_auth(buf, 512, 2, &a), buf);
}

/* Accepting side: AUTH must prove the key. */
static void got_auth(struct link *l, const uint8_t *f, size_t n)
{
	struct cluster *cl = l->cl;
	uint8_t want[PEER_PROOF_LEN], *buf;
	struct peer_auth a;

	if (peer_decode_auth(f, n, &a) < 0)
		return link_refuse(l, "bad AUTH");
	if (peer_proof(cl->key, cl->keylen, 'C', l->their_nonce, l->my_nonce,
		       cl_name(cl, l->peer->id), cl_name(cl, cl->self),
		       want) < 0 || !peer_proof_ok(want, a.proof))
		return link_refuse(l, "the peer does not hold the cluster key");
	buf = malloc(PEER_HDR_LEN);
	if (!buf)
		return link_close(l, -ENOMEM);
	link_send_small(l, peer_encode_status(buf, PEER_HDR_LEN, PEER_AUTH, 2,
					      0), buf);
	if (l->st != L_CLOSED)
		link_up(l);
}

/* ---- frames on an UP link ------------------------------------------------ */

static void got_reply(struct link *l, const uint8_t *f, size_t n,
		      const struct peer_hdr *h)
{
	struct list *pos;

	list_for_each(pos, &l->reqs) {
		struct preq *r = list_entry(pos, struct preq, link);

		if (r->seq != h->seq)
			continue;
		list_del(&r->link);
		r->fn(dm(l), r->arg, h->status, f, n);
		free(r);
		return;
	}
	/* A reply to a request that timed out: nothing waits for it. */
}

static void got_request(struct link *l, const uint8_t *f, size_t n,
			const struct peer_hdr *h)
{
	struct cluster *cl = l->cl;

	switch (h->type) {
	case PEER_SHARD_PUT:
		return hold_on_put(cl, l, f, n, h);
	case PEER_SHARD_SEAL:
		return hold_on_seal(cl, l, f, n, h);
	case PEER_PART:
		return parts_on_part(cl, l, f, n, h);
	case PEER_READ:
		return peerread_on_read(cl, l, f, n, h);
	case PEER_SYNC:
		return parts_on_sync(cl, l, f, n, h);
	case PEER_SHARD_GET:
		return hold_on_sget(cl, l, f, n, h);
	case PEER_HELD:
		return hold_on_held(cl, l, f, n, h);
	case PEER_PING:
		return link_answer_status(l, PEER_PING, h->seq, 0);
	default:
		return link_refuse(l, "a handshake frame on an established link");
	}
}

/* One whole, checked frame. */
static void got_frame(struct link *l, const uint8_t *f, size_t n,
		      const struct peer_hdr *h)
{
	switch (l->st) {
	case L_WAIT_HELLO:
		if (h->type == PEER_HELLO)
			return got_hello(l, f, n);
		break;
	case L_HELLO_SENT:
		if (h->type == PEER_CHALLENGE)
			return got_challenge(l, f, n);
		break;
	case L_CHALLENGED:
		if (h->type == PEER_AUTH)
			return got_auth(l, f, n);
		break;
	case L_AUTH_SENT:
		if (h->type == (PEER_AUTH | PEER_REPLY)) {
			if (h->status)
				return link_refuse(l, ckpt_strerror(h->status));
			return link_up(l);
		}
		break;
	case L_UP:
		if (h->type & PEER_REPLY)
			return got_reply(l, f, n, h);
		return got_request(l, f, n, h);
	default:
		return;
	}
	link_refuse(l, "frame out of turn in the handshake");
}

/* Room for a frame of flen bytes at the start of rbuf.  0 or -ENOMEM. */
static int rbuf_room(struct link *l, size_t flen)
{
	uint8_t *nb;
	size_t cap = l->rcap ? l->rcap : LINK_RBUF_MIN;

	while (cap < flen)
		cap *= 2;
	if (cap == l->rcap)
		return 0;
	nb = realloc(l->rbuf, cap);
	if (!nb)
		return -ENOMEM;
	l->rbuf = nb;
	l->rcap = cap;
	return 0;
}

/* Handle the whole frames in rbuf while l may read (may_read()), then
 * arm the receive if it still may.  Not re-entered: a handler that gives a
 * hold back (link_drop) while frames are handled leaves them to the loop
 * that runs. */
static void link_process(struct link *l)
{
	struct peer_hdr h;
	size_t used = 0, flen, max;
	int ret;

	if (l->processing || l->st == L_CLOSED)
		return;
	l->processing = 1;
	l->refs++;
	while (l->st != L_CLOSED && l->rlen - used >= PEER_HDR_LEN &&
	       may_read(l)) {
		ret = peer_peek(l->rbuf + used, l->rlen - used, &h);
		max = l->st == L_UP ? PEER_MAX_PAYLOAD : LINK_HS_MAX;
		if (ret < 0 || h.len > max) {
			link_refuse(l, ret < 0 ? ckpt_strerror(ret)
					       : "frame too large");
			break;
		}
		flen = PEER_HDR_LEN + (size_t)h.len;
		if (l->rlen - used < flen)
			break;
		ret = peer_check(l->rbuf + used, flen, &h);
		if (ret < 0) {
			link_refuse(l, ckpt_strerror(ret));
			break;
		}
		got_frame(l, l->rbuf + used, flen, &h);
		used += flen;
	}
	if (l->st == L_CLOSED)
		goto out;
	memmove(l->rbuf, l->rbuf + used, l->rlen - used);
	l->rlen -= used;
	/* Room for the whole frame that has begun, whatever its size. */
	flen = LINK_RBUF_MIN;
	if (l->rlen >= PEER_HDR_LEN && peer_peek(l->rbuf, l->rlen, &h) == 0)
		flen = PEER_HDR_LEN + (size_t)h.len;
	if (l->rcap > LINK_RBUF_KEEP && l->rlen <= LINK_RBUF_MIN &&
	    flen <= LINK_RBUF_MIN) {
		uint8_t *nb = realloc(l->rbuf, LINK_RBUF_MIN);

		if (nb) {
			l->rbuf = nb;
			l->rcap = LINK_RBUF_MIN;
		}
	}
	if (rbuf_room(l, flen > l->rlen + 1 ? flen : l->rlen + 1) < 0) {
		link_close(l, -ENOMEM);
		goto out;
	}
	if (may_read(l) && !l->recv_armed)
		link_recv_arm(l);
out:
	l->processing = 0;
	link_put(l);
}

static void on_recv(struct loop_op *op, int res)
{
	struct link *l = (struct link *)((char *)op - offsetof(struct link, recv_op));

	l->recv_armed = 0;
	if (res <= 0 || l->st == L_CLOSED) {
		/* The peer closed its end (0): its last error says so. */
		link_close(l, res < 0 ? res : -ECONNRESET);
	} else {
		l->heard_ms = ckptd_now_ms();
		if (l->st == L_UP)
			l->peer->heard_ms = l->heard_ms;
		loop_mark_defined(l->rbuf + l->rlen, res);
		l->rlen += (size_t)res;
		link_process(l);
	}
	link_put(l);
}

/*
 * How much the next receive asks for.  rbuf starts at a frame boundary
 * (link_process() moves what follows the whole frames to its start), so a
 * large frame begun there is received to its end and no further: nothing
 * of the next frame comes with it that would have to be moved down (a
 * shard or data frame is 1 MiB: moving half of one for each was a fifth of
 * a receiving node's CPU).  A frame not begun yet is asked for with at most
 * LINK_RBUF_MIN bytes, its header first, so that small frames still come
 * many at once.
 */
static size_t recv_len(const struct link *l)
{
	size_t len = l->rcap - l->rlen, flen;
	struct peer_hdr h;

	if (l->rlen < PEER_HDR_LEN)
		return len < LINK_RBUF_MIN ? len : LINK_RBUF_MIN;
	if (peer_peek(l->rbuf, l->rlen, &h) < 0)
		return len;         /* refused when processed */
	flen = PEER_HDR_LEN + (size_t)h.len;
	if (flen > LINK_RBUF_MIN && flen > l->rlen && flen - l->rlen < len)
		return flen - l->rlen;
	return len;
}

static void link_recv_arm(struct link *l)
{
	struct io_uring_sqe *sqe;

	l->recv_armed = 1;
	l->refs++;
	l->recv_op.fn = on_recv;
	sqe = loop_sqe(&dm(l)->loop, &l->recv_op);
	io_uring_prep_recv(sqe, l->fd, l->rbuf + l->rlen, recv_len(l), 0);
}

static struct link *link_new(struct cluster *cl, int fd, int outgoing)
{
	struct link *l = calloc(1, sizeof(*l));
	int one = 1;

	if (!l || rbuf_room(l, LINK_RBUF_MIN) < 0) {
		if (l)
			free(l);
		close(fd);
		return NULL;
	}
	l->cl = cl;
	l->fd = fd;
	l->outgoing = outgoing;
	l->refs = 1;
	l->sent_ms = l->heard_ms = ckptd_now_ms();
	l->deadline_ms = l->sent_ms + CLUSTER_HANDSHAKE_MS;
	list_init(&l->outq);
	list_init(&l->reqs);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	list_add_tail(&cl->links, &l->link);
	return l;
}

static void on_connect(struct loop_op *op, int res)
{
	struct link *l = (struct link *)((char *)op - offsetof(struct link, connect_op));

	if (l->st == L_CLOSED) {
		link_put(l);
		return;
	}
	if (res < 0) {
		link_close(l, res);
	} else if (peer_nonce(l->my_nonce) < 0) {
		link_close(l, -EIO);
	} else {
		l->st = L_HELLO_SENT;
		link_recv_arm(l);
		send_hello(l, PEER_HELLO, NULL);
	}
	link_put(l);
}

void link_connect(struct cluster *cl, struct peer *p)
{
	struct io_uring_sqe *sqe;
	struct link *l;
	int fd;

	if (!p->alen) {
		peer_set(cl, p, P_DOWN, -EHOSTUNREACH);
		return;
	}
	fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		peer_set(cl, p, P_DOWN, -errno);
		return;
	}
	l = link_new(cl, fd, 1);
	if (!l) {
		peer_set(cl, p, P_DOWN, -ENOMEM);
		return;
	}
	l->peer = p;
	l->st = L_CONNECT;
	p->l = l;
	p->st = P_CONNECTING;
	l->refs++;
	l->connect_op.fn = on_connect;
	sqe = loop_sqe(&cl->d->loop, &l->connect_op);
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&p->addr, p->alen);
}

static void on_accept(struct loop_op *op, int res)
{
	struct cluster *cl = (struct cluster *)((char *)op - offsetof(struct cluster, accept_op));
	struct link *l;

	if (cl->stopping) {
		if (res >= 0)
			close(res);
		return;
	}
	if (res >= 0) {
		l = link_new(cl, res, 0);
		if (l) {
			l->st = L_WAIT_HELLO;
			link_recv_arm(l);
		}
	} else if (res != -EINTR && res != -ECONNABORTED &&
		   log_rl_ok(&cl->bad_rl, 10, ckptd_now_ms(), "cluster: accept")) {
		log_printf(LOG_WARNING, "cluster: accept: %s", strerror(-res));
	}
	link_accept_arm(cl);
}

void link_accept_arm(struct cluster *cl)
{
	struct io_uring_sqe *sqe;

	cl->accept_op.fn = on_accept;
	sqe = loop_sqe(&cl->d->loop, &cl->accept_op);
	io_uring_prep_accept(sqe, cl->listen_fd, NULL, NULL, SOCK_CLOEXEC);
}

/* Queue a PING on l (an empty request; its reply matches no request). */
static void link_ping(struct link *l)
{
	uint8_t *buf = malloc(PEER_HDR_LEN);

	if (!buf) {
		link_close(l, -ENOMEM);
		return;
	}
	link_send_small(l, peer_encode_ping(buf, PEER_HDR_LEN,
					    link_seq(l->cl)), buf);
}

/* The heartbeat of an UP link (see the top of the file); stall: ms this
 * node's loop did not run (a late tick), not the peer's silence. */
static void link_heartbeat(struct link *l, uint64_t now, uint64_t stall)
{
	struct cluster *cl = l->cl;

	if (!l->recv_armed)
		l->heard_ms = now;
	else
		l->heard_ms = now - l->heard_ms > stall ? l->heard_ms + stall
							: now;
	if (now - l->heard_ms >= cl->hb_timeout_ms) {
		log_printf(LOG_WARNING, "cluster: %s is down: nothing heard for %.1f s",
			   cl_name(cl, l->peer->id),
			   (double)(now - l->heard_ms) / 1000.0);
		link_close(l, -ETIMEDOUT);
		return;
	}
	if (list_empty(&l->outq) && now - l->sent_ms >= cl->ping_ms)
		link_ping(l);
}

void link_tick(struct cluster *cl, uint64_t now)
{
	struct list *pos, *tmp, *rp, *rtmp;
	uint64_t gap = cl->tick_ms ? now - cl->tick_ms : 0;
	uint64_t stall = gap > 2 * LINK_TICK_MS ? gap - LINK_TICK_MS : 0;

	cl->tick_ms = now;
	list_for_each_safe(pos, tmp, &cl->links) {
		struct link *l = list_entry(pos, struct link, link);

		if (l->st != L_UP && l->st != L_CLOSED && now >= l->deadline_ms) {
			link_fail(l, "handshake not finished in time",
				  -ETIMEDOUT);
			continue;
		}
		if (l->st != L_UP)
			continue;
		l->refs++;      /* a callback may close it */
		link_heartbeat(l, now, stall);
		list_for_each_safe(rp, rtmp, &l->reqs) {
			struct preq *r = list_entry(rp, struct preq, link);

			if (!r->deadline_ms || now < r->deadline_ms)
				continue;
			list_del(&r->link);
			r->fn(cl->d, r->arg, -ETIMEDOUT, NULL, 0);
			free(r);
			if (l->st != L_UP)
				break;
		}
		link_put(l);
	}
}

void link_close_all(struct cluster *cl)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &cl->links)
		link_close(list_entry(pos, struct link, link), 0);
}

void link_free_all(struct cluster *cl)
{
	struct list *pos, *tmp;

	/* The loop is gone: nothing is in flight any more. */
	list_for_each_safe(pos, tmp, &cl->links) {
		struct link *l = list_entry(pos, struct link, link);

		l->refs = 1;
		l->sending = 0;
		link_put(l);
	}
}
