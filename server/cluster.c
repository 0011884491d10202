/*
 * cluster.c - membership and authenticated peer links (see cluster.h).
 *
 * A link (struct link) is one TCP connection driven by io_uring on the
 * loop: a connect, one receive always armed, and one send at a time.  It
 * is reference counted by its operations in flight, so that closing it
 * (shutdown, then close once nothing is in flight) never leaves the kernel
 * writing into freed memory.  The handshake is a small state machine:
 *
 *   connecting side:  CONNECT -> HELLO sent -> CHALLENGE checked, AUTH sent
 *                     -> AUTH's reply 0 -> UP
 *   accepting side:   HELLO read -> CHALLENGE sent -> AUTH checked, reply
 *                     sent -> UP
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ckptd.h"
#include "cluster.h"
#include "hostlist.h"
#include "log.h"
#include "nodes.h"
#include "peer.h"
#include "place.h"

#define LINK_RBUF (PEER_HDR_LEN + 4096)  /* the handshake's frames */

enum link_state {
	L_CONNECT,        /* connecting side: connect in flight */
	L_HELLO_SENT,     /* connecting side: waits for CHALLENGE */
	L_AUTH_SENT,      /* connecting side: waits for AUTH's reply */
	L_WAIT_HELLO,     /* accepting side: waits for HELLO */
	L_CHALLENGED,     /* accepting side: waits for AUTH */
	L_UP,
	L_CLOSED,
};

enum peer_state { P_DOWN, P_CONNECTING, P_UP };

struct peer;

struct link {
	struct list link;         /* in cluster.links */
	struct cluster *cl;
	struct peer *peer;        /* NULL until the HELLO names it */
	int fd;
	int outgoing;
	enum link_state st;
	uint32_t refs;            /* the link itself, and each op in flight */
	uint64_t deadline_ms;     /* of the handshake */
	uint8_t my_nonce[PEER_NONCE_LEN], their_nonce[PEER_NONCE_LEN];
	struct loop_op connect_op, recv_op, send_op;
	uint8_t rbuf[LINK_RBUF];
	size_t rlen;
	uint8_t sbuf[512];
	size_t slen, soff;
	int sending;
};

struct peer {
	uint32_t id;              /* node index in the placement */
	struct sockaddr_storage addr;
	socklen_t alen;           /* 0: the address did not resolve */
	int outgoing;             /* this node makes the link */
	enum peer_state st;
	struct link *l;           /* the link UP, or being made */
	uint64_t retry_ms;
	uint32_t backoff_ms;
	int32_t last_err;
};

struct cluster {
	struct ckptd *d;
	struct node_list nodes;
	struct placement place;
	uint32_t self;            /* this node's index */
	struct peer *peers;       /* indexed by node id; only group members
				   * but self are used */
	uint8_t key[PEER_KEY_MAX];
	size_t keylen;
	int listen_fd;
	struct loop_op accept_op;
	struct list links;
	struct log_rl bad_rl;
	int stopping;
};

static struct cluster *cl_of(const struct ckptd *d)
{
	return d->cluster;
}

static const char *name_of(const struct cluster *cl, uint32_t id)
{
	return cl->place.nodes[id].name;
}

/* ---- links ---------------------------------------------------------- */

static void link_put(struct link *l)
{
	if (--l->refs)
		return;
	if (l->fd >= 0)
		close(l->fd);
	list_del(&l->link);
	free(l);
}

static void peer_set(struct cluster *cl, struct peer *p, enum peer_state st,
		     int err)
{
	const char *nm = name_of(cl, p->id);

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
}

/* Close l (err: why, for the log and the peer); its memory goes once the
 * operations in flight are back. */
static void link_close(struct link *l, int err)
{
	struct cluster *cl = l->cl;

	if (l->st == L_CLOSED)
		return;
	l->st = L_CLOSED;
	if (l->fd >= 0)
		shutdown(l->fd, SHUT_RDWR);
	if (l->peer && l->peer->l == l) {
		l->peer->l = NULL;
		peer_set(cl, l->peer, P_DOWN, err);
	}
	link_put(l);
}

/* A handshake that fails: logged (rate-limited: any host may connect). */
static void link_refuse(struct link *l, const char *why)
{
	struct cluster *cl = l->cl;

	if (log_rl_ok(&cl->bad_rl, 10, ckptd_now_ms(), "cluster: refused links"))
		log_printf(LOG_WARNING, "cluster: %s link%s%s refused: %s",
			   l->outgoing ? "outgoing" : "incoming",
			   l->peer ? " with " : "",
			   l->peer ? name_of(cl, l->peer->id) : "", why);
	link_close(l, -EACCES);
}

static void link_recv_arm(struct link *l);

static void on_send(struct loop_op *op, int res)
{
	struct link *l = (struct link *)((char *)op - offsetof(struct link, send_op));

	l->sending = 0;
	if (res <= 0) {
		link_close(l, res < 0 ? res : -EPIPE);
	} else if (l->st != L_CLOSED) {
		l->soff += (size_t)res;
		if (l->soff < l->slen) {
			struct io_uring_sqe *sqe;

			l->sending = 1;
			l->refs++;
			sqe = loop_sqe(&l->cl->d->loop, &l->send_op);
			io_uring_prep_send(sqe, l->fd, l->sbuf + l->soff,
					   l->slen - l->soff, MSG_NOSIGNAL);
		}
	}
	link_put(l);
}

/* Send the frame in l->sbuf (n bytes, or a negative encode error). */
static void link_send(struct link *l, int n)
{
	struct io_uring_sqe *sqe;

	if (n < 0 || l->sending) {  /* the handshake sends one at a time */
		link_close(l, n < 0 ? n : -EPROTO);
		return;
	}
	l->slen = (size_t)n;
	l->soff = 0;
	l->sending = 1;
	l->refs++;
	l->send_op.fn = on_send;
	sqe = loop_sqe(&l->cl->d->loop, &l->send_op);
	io_uring_prep_send(sqe, l->fd, l->sbuf, l->slen, MSG_NOSIGNAL);
}

static void send_hello(struct link *l, uint16_t type, const uint8_t *proof)
{
	struct peer_hello h;

	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", name_of(l->cl, l->cl->self));
	memcpy(h.nonce, l->my_nonce, PEER_NONCE_LEN);
	if (proof)
		memcpy(h.proof, proof, PEER_PROOF_LEN);
	link_send(l, peer_encode_hello(l->sbuf, sizeof(l->sbuf), type, 1, &h));
}

/* l is authenticated: it becomes its peer's link. */
static void link_up(struct link *l)
{
	struct peer *p = l->peer;

	if (p->l && p->l != l)
		link_close(p->l, 0);    /* an older one: this one wins */
	p->l = l;
	l->st = L_UP;
	peer_set(l->cl, p, P_UP, 0);
}

/* Accepting side: HELLO names a member of this node's group that makes
 * links to it. */
static void got_hello(struct link *l, const uint8_t *f, size_t n)
{
	struct cluster *cl = l->cl;
	struct peer_hello h;
	uint8_t proof[PEER_PROOF_LEN];
	int id;

	if (peer_decode_hello(f, n, &h) < 0)
		return link_refuse(l, "bad HELLO");
	id = place_find(&cl->place, h.name);
	if (id < 0 || (uint32_t)id == cl->self ||
	    cl->place.group[id] != cl->place.group[cl->self] ||
	    cl->peers[id].outgoing)
		return link_refuse(l, "HELLO from a node that is not a peer of this one");
	l->peer = &cl->peers[id];
	memcpy(l->their_nonce, h.nonce, PEER_NONCE_LEN);
	if (peer_nonce(l->my_nonce) < 0 ||
	    peer_proof(cl->key, cl->keylen, 'A', l->their_nonce, l->my_nonce,
		       h.name, name_of(cl, cl->self), proof) < 0)
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
	uint8_t want[PEER_PROOF_LEN];

	if (peer_decode_hello(f, n, &h) < 0)
		return link_refuse(l, "bad CHALLENGE");
	if (strcmp(h.name, name_of(cl, l->peer->id)))
		return link_refuse(l, "the node that answered is another one");
	memcpy(l->their_nonce, h.nonce, PEER_NONCE_LEN);
	if (peer_proof(cl->key, cl->keylen, 'A', l->my_nonce, l->their_nonce,
		       name_of(cl, cl->self), h.name, want) < 0 ||
	    !peer_proof_ok(want, h.proof))
		return link_refuse(l, "the peer does not hold the cluster key");
	if (peer_proof(cl->key, cl->keylen, 'C', l->my_nonce, l->their_nonce,
		       name_of(cl, cl->self), h.name, a.proof) < 0)
		return link_refuse(l, "cannot make a proof");
	l->st = L_AUTH_SENT;
	link_send(l, peer_encode_auth(l->sbuf, sizeof(l->sbuf), 2, &a));
}

/* Accepting side: AUTH must prove the key. */
static void got_auth(struct link *l, const uint8_t *f, size_t n)
{
	struct cluster *cl = l->cl;
	uint8_t want[PEER_PROOF_LEN];
	struct peer_auth a;

	if (peer_decode_auth(f, n, &a) < 0)
		return link_refuse(l, "bad AUTH");
	if (peer_proof(cl->key, cl->keylen, 'C', l->their_nonce, l->my_nonce,
		       name_of(cl, l->peer->id), name_of(cl, cl->self),
		       want) < 0 || !peer_proof_ok(want, a.proof))
		return link_refuse(l, "the peer does not hold the cluster key");
	link_send(l, peer_encode_status(l->sbuf, sizeof(l->sbuf), PEER_AUTH, 2,
					0));
	if (l->st != L_CLOSED)
		link_up(l);
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
		/* Shards come with the next step; nothing else is spoken. */
		return link_refuse(l, "unexpected frame on an established link");
	default:
		return;
	}
	link_refuse(l, "frame out of turn in the handshake");
}

static void on_recv(struct loop_op *op, int res)
{
	struct link *l = (struct link *)((char *)op - offsetof(struct link, recv_op));
	struct peer_hdr h;
	size_t used = 0, flen;
	int ret;

	if (res <= 0 || l->st == L_CLOSED) {
		link_close(l, res < 0 ? res : 0);
		goto out_put;
	}
	loop_mark_defined(l->rbuf + l->rlen, res);
	l->rlen += (size_t)res;
	while (l->st != L_CLOSED && l->rlen - used >= PEER_HDR_LEN) {
		ret = peer_peek(l->rbuf + used, l->rlen - used, &h);
		if (ret < 0 || h.len > LINK_RBUF - PEER_HDR_LEN) {
			link_refuse(l, ret < 0 ? ckpt_strerror(ret)
					       : "frame too large for the handshake");
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
	if (l->st != L_CLOSED) {
		memmove(l->rbuf, l->rbuf + used, l->rlen - used);
		l->rlen -= used;
		link_recv_arm(l);
	}
out_put:
	link_put(l);
}

static void link_recv_arm(struct link *l)
{
	struct io_uring_sqe *sqe;

	l->refs++;
	l->recv_op.fn = on_recv;
	sqe = loop_sqe(&l->cl->d->loop, &l->recv_op);
	io_uring_prep_recv(sqe, l->fd, l->rbuf + l->rlen, LINK_RBUF - l->rlen,
			   0);
}

static struct link *link_new(struct cluster *cl, int fd, int outgoing)
{
	struct link *l = calloc(1, sizeof(*l));
	int one = 1;

	if (!l) {
		close(fd);
		return NULL;
	}
	l->cl = cl;
	l->fd = fd;
	l->outgoing = outgoing;
	l->refs = 1;
	l->deadline_ms = ckptd_now_ms() + CLUSTER_HANDSHAKE_MS;
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

static void peer_connect(struct cluster *cl, struct peer *p)
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

static void arm_accept(struct cluster *cl);

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
	arm_accept(cl);
}

static void arm_accept(struct cluster *cl)
{
	struct io_uring_sqe *sqe;

	cl->accept_op.fn = on_accept;
	sqe = loop_sqe(&cl->d->loop, &cl->accept_op);
	io_uring_prep_accept(sqe, cl->listen_fd, NULL, NULL, SOCK_CLOEXEC);
}

/* ---- start-up ----------------------------------------------------------- */

/* nodes = slurm: SLURM_JOB_NODELIST expanded (hostlist.h), each host a
 * node of its own domain at [cluster] port, as node list text.  0 or
 * -errno (logged); *text malloc'd. */
static int slurm_nodes(const struct conf *conf, char **text, size_t *len)
{
	const char *expr = getenv("SLURM_JOB_NODELIST");
	struct hostlist hl = { NULL, 0 };
	size_t i, cap, n = 0;
	char *p;
	int ret;

	if (!expr || !expr[0]) {
		log_printf(LOG_ERR, "cluster: nodes = slurm, but SLURM_JOB_NODELIST is not set");
		return -EINVAL;
	}
	ret = hostlist_expand(expr, NODES_MAX, &hl);
	if (ret < 0) {
		log_printf(LOG_ERR, "cluster: SLURM_JOB_NODELIST '%.80s': %s", expr,
			   strerror(-ret));
		return ret;
	}
	cap = hl.n * (2 * HOSTLIST_NAME_MAX + 16) + 1;
	p = malloc(cap);
	if (!p) {
		hostlist_release(&hl);
		return -ENOMEM;
	}
	for (i = 0; i < hl.n; i++)
		n += (size_t)snprintf(p + n, cap - n, "%s %s:%u\n", hl.hosts[i],
				      hl.hosts[i], conf->cluster_port);
	hostlist_release(&hl);
	*text = p;
	*len = n;
	return 0;
}

/* The node list `[cluster] nodes` names.  0 or -errno / -EINVAL (logged). */
static int load_nodes(const struct conf *conf, struct node_list *out)
{
	const struct conf_list *l = &conf->cluster_nodes;
	struct conf_err err;
	char *text, *p;
	size_t len;
	uint32_t i;
	int ret;

	memset(&err, 0, sizeof(err));
	if (l->n == 1 && !strcmp(l->item[0], "slurm")) {
		ret = slurm_nodes(conf, &text, &len);
		if (ret < 0)
			return ret;
		ret = nodes_parse(text, len, "SLURM_JOB_NODELIST", out, &err);
		free(text);
	} else if (l->n == 1 && l->item[0][0] == '/') {
		ret = nodes_load(l->item[0], out, &err);
	} else {
		text = calloc(l->n, CONF_ITEM_MAX + 2);
		if (!text)
			return -ENOMEM;
		for (i = 0, p = text; i < l->n; i++) {
			const char *at = strchr(l->item[i], '@');

			if (!at) {
				log_printf(LOG_ERR, "cluster: nodes: '%s' is neither a path nor NAME@HOST:PORT",
					   l->item[i]);
				free(text);
				return -EINVAL;
			}
			p += sprintf(p, "%.*s %s\n", (int)(at - l->item[i]),
				     l->item[i], at + 1);
		}
		ret = nodes_parse(text, (size_t)(p - text), "[cluster] nodes",
				  out, &err);
		free(text);
	}
	if (ret < 0)
		log_printf(LOG_ERR, "cluster: %s%s%.0d: %s", err.file,
			   err.line ? " line " : "", err.line, err.msg);
	return ret;
}

static int resolve(const struct node_entry *e, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	struct addrinfo hints, *res;
	char port[8];
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%u", e->port);
	ret = getaddrinfo(e->host, port, &hints, &res);
	if (ret)
		return -EHOSTUNREACH;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int listen_on(struct cluster *cl)
{
	const struct node_entry *me = NULL;
	struct sockaddr_storage ss;
	socklen_t len;
	uint32_t i;
	int fd, one = 1, ret;

	for (i = 0; i < cl->nodes.n; i++)
		if (!strcmp(cl->nodes.v[i].name, name_of(cl, cl->self)))
			me = &cl->nodes.v[i];
	ret = resolve(me, &ss, &len);
	if (ret < 0) {
		log_printf(LOG_ERR, "cluster: this node's address %s does not resolve",
			   me->host);
		return ret;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		ret = -errno;
		log_printf(LOG_ERR, "cluster: listen on %s:%u: %s", me->host,
			   me->port, strerror(-ret));
		close(fd);
		return ret;
	}
	cl->listen_fd = fd;
	return 0;
}

/* Say what a failure of one domain costs, and who this node's peers are. */
static void describe(const struct cluster *cl)
{
	const struct placement *p = &cl->place;
	uint32_t i, w = p->k + p->m - 1, g = p->group[cl->self], members = 0;

	for (i = 0; i < p->n; i++)
		members += p->group[i] == g;
	log_printf(LOG_NOTICE, "cluster: node %s, %u nodes in %u groups, ec %u+%u: group %u has %u members",
		   name_of(cl, cl->self), p->n, p->ngroups, p->k, p->m, g,
		   members);
	if (p->worst > 1)
		log_printf(LOG_WARNING, "cluster: the failure domains are too few or too uneven: a stripe puts up to %u of its %u shards in one domain, so %u whole domain(s) may be lost (m = %u); any %u nodes still may",
			   p->worst, w + 1, place_domains_lost_ok(p), p->m,
			   p->m);
	for (i = 1; i <= w; i++)
		log_printf(LOG_INFO, "cluster: shard %u of this node's stripes goes to %s",
			   i, name_of(cl, place_peer(p, cl->self, i)));
}

int cluster_open(struct ckptd *d)
{
	const struct conf *conf = d->conf;
	struct place_node *pn = NULL;
	struct cluster *cl;
	char host[256];
	const char *self;
	uint32_t i, j;
	int ret, id;

	if (!conf->cluster_nodes.n)
		return 0;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	cl->d = d;
	cl->listen_fd = -1;
	list_init(&cl->links);
	ret = load_nodes(conf, &cl->nodes);
	if (ret < 0)
		goto out_free;
	ret = -ENOMEM;
	pn = nodes_places(&cl->nodes);
	if (!pn)
		goto out_free;
	ret = place_compute(pn, cl->nodes.n, conf->cluster_k, conf->cluster_m,
			    &cl->place);
	if (ret < 0) {
		log_printf(LOG_ERR, "cluster: %u nodes cannot hold ec %u+%u: a stripe needs %u nodes",
			   cl->nodes.n, conf->cluster_k, conf->cluster_m,
			   conf->cluster_k + conf->cluster_m);
		goto out_free;
	}
	self = conf->cluster_node;
	if (!self[0]) {
		if (gethostname(host, sizeof(host)) < 0)
			host[0] = 0;
		host[sizeof(host) - 1] = 0;
		host[strcspn(host, ".")] = 0;
		self = host;
	}
	id = place_find(&cl->place, self);
	if (id < 0) {
		log_printf(LOG_ERR, "cluster: this node, '%s', is not in the node list (set [cluster] node)",
			   self);
		ret = -ENOENT;
		goto out_free;
	}
	cl->self = (uint32_t)id;
	ret = peer_key_load(conf->cluster_key, cl->key, &cl->keylen);
	if (ret < 0) {
		log_printf(LOG_ERR, "cluster: key %s: %s", conf->cluster_key,
			   ret == -EPERM ? "refused: readable or writable by group or others, or not a regular file (chmod 600)"
			   : ret == -EINVAL ? "must hold 32 to 1024 bytes"
			   : strerror(-ret));
		goto out_free;
	}
	ret = -ENOMEM;
	cl->peers = calloc(cl->place.n, sizeof(*cl->peers));
	if (!cl->peers)
		goto out_free;
	for (i = 0; i < cl->place.n; i++) {
		struct peer *p = &cl->peers[i];

		p->id = i;
		p->outgoing = strcmp(name_of(cl, cl->self), name_of(cl, i)) < 0;
		for (j = 0; j < cl->nodes.n; j++)
			if (!strcmp(cl->nodes.v[j].name, name_of(cl, i)) &&
			    resolve(&cl->nodes.v[j], &p->addr, &p->alen) < 0)
				log_printf(LOG_WARNING, "cluster: peer %s: address %s does not resolve",
					   name_of(cl, i), cl->nodes.v[j].host);
	}
	ret = listen_on(cl);
	if (ret < 0)
		goto out_free;
	free(pn);
	d->cluster = cl;
	describe(cl);
	arm_accept(cl);
	cluster_tick(d);
	return 0;

out_free:
	free(pn);
	free(cl->peers);
	place_release(&cl->place);
	nodes_release(&cl->nodes);
	free(cl);
	return ret;
}

/* ---- running ------------------------------------------------------------ */

void cluster_tick(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);
	uint64_t now = ckptd_now_ms();
	struct list *pos, *tmp;
	uint32_t i;

	if (!cl || cl->stopping)
		return;
	list_for_each_safe(pos, tmp, &cl->links) {
		struct link *l = list_entry(pos, struct link, link);

		if (l->st != L_UP && l->st != L_CLOSED && now >= l->deadline_ms)
			link_refuse(l, "handshake not finished in time");
	}
	for (i = 0; i < cl->place.n; i++) {
		struct peer *p = &cl->peers[i];

		if (i == cl->self || !p->outgoing || p->l ||
		    cl->place.group[i] != cl->place.group[cl->self] ||
		    now < p->retry_ms)
			continue;
		peer_connect(cl, p);
	}
}

void cluster_stop(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);
	struct list *pos, *tmp;

	if (!cl || cl->stopping)
		return;
	cl->stopping = 1;
	shutdown(cl->listen_fd, SHUT_RDWR);
	list_for_each_safe(pos, tmp, &cl->links)
		link_close(list_entry(pos, struct link, link), 0);
}

void cluster_close(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);
	struct list *pos, *tmp;

	if (!cl)
		return;
	/* The loop is gone: nothing is in flight any more. */
	list_for_each_safe(pos, tmp, &cl->links) {
		struct link *l = list_entry(pos, struct link, link);

		if (l->fd >= 0)
			close(l->fd);
		list_del(&l->link);
		free(l);
	}
	if (cl->listen_fd >= 0)
		close(cl->listen_fd);
	free(cl->peers);
	place_release(&cl->place);
	nodes_release(&cl->nodes);
	memset(cl->key, 0, sizeof(cl->key));
	free(cl);
	d->cluster = NULL;
}

uint32_t cluster_nodes(const struct ckptd *d)
{
	return cl_of(d) ? cl_of(d)->place.n : 0;
}

void cluster_status(const struct ckptd *d, struct ckpt_status *s)
{
	const struct cluster *cl = cl_of(d);
	uint32_t i;

	if (!cl)
		return;
	snprintf(s->node, sizeof(s->node), "%s", name_of(cl, cl->self));
	for (i = 0; i < cl->place.n; i++) {
		if (i == cl->self ||
		    cl->place.group[i] != cl->place.group[cl->self])
			continue;
		s->peers++;
		s->peers_up += cl->peers[i].st == P_UP;
	}
}
