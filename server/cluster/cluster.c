/*
 * cluster.c - membership: the node list, placement, the key and the
 * listener at start; the tick, events, status and the node table
 * (LIST_NODES: each peer's state, since when, its last error, when it was
 * last heard, its lag) after (see cluster.h).
 * The links themselves are link.c's; shards held, hold.c's; this node's
 * protection, protect.c's; the namespace, parts.c's (cluster_i.h).
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

#include "cluster.h"
#include "cluster_i.h"
#include "hostlist.h"

static struct cluster *cl_of(const struct ckptd *d)
{
	return d->cluster;
}

static const char *name_of(const struct cluster *cl, uint32_t id)
{
	return cl_name(cl, id);
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
	cl->hb_timeout_ms = conf->cluster_heartbeat_timeout;
	/* A peer pings at most every ping_ms (and ticks are 250 ms): a third
	 * of the timeout leaves room for a tick and the network. */
	cl->ping_ms = cl->hb_timeout_ms / 3 < CLUSTER_PING_MS ?
		      cl->hb_timeout_ms / 3 : CLUSTER_PING_MS;
	list_init(&cl->links);
	bwlimit_init(&cl->bw, conf->cluster_bandwidth, 0);
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
	ckptd_conf_self(conf, host, sizeof(host));
	self = host;
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
	cl->peers = calloc(cl->place.n + CLUSTER_RETIRED_MAX,
			   sizeof(*cl->peers));
	cl->retired = calloc(CLUSTER_RETIRED_MAX, sizeof(*cl->retired));
	if (!cl->peers || !cl->retired)
		goto out_free;
	for (i = 0; i < cl->place.n + CLUSTER_RETIRED_MAX; i++) {
		cl->peers[i].id = i;
		cl->peers[i].since_ms = ckptd_now_ms();
	}
	for (i = 0; i < cl->place.n; i++) {
		struct peer *p = &cl->peers[i];

		p->id = i;
		p->since_ms = ckptd_now_ms();
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
	d->node = (struct node_self){ cl_name(cl, cl->self), cl->self,
				      cl->place.n };
	ret = hold_open(cl);
	if (ret == 0)
		ret = protect_open(cl);
	if (ret == 0)
		ret = parts_open(cl);
	if (ret == 0)
		hold_learn_parts(cl);
	if (ret == 0)
		ret = peerread_open(cl);
	if (ret == 0)
		ret = rebuild_open(cl);
	if (ret == 0)
		ret = adopt_open(cl);
	if (ret < 0)
		return ret;     /* d->cluster set: see cluster.h */
	describe(cl);
	link_accept_arm(cl);
	cluster_tick(d);
	return 0;

out_free:
	bwlimit_release(&cl->bw);
	free(pn);
	free(cl->peers);
	free(cl->retired);
	place_release(&cl->place);
	nodes_release(&cl->nodes);
	free(cl);
	return ret;
}

int cl_node_id(struct cluster *cl, const char *name, int add)
{
	int id = place_find(&cl->place, name);
	uint32_t i;

	if (id >= 0)
		return id;
	for (i = 0; i < cl->nretired; i++)
		if (!strcmp(cl->retired[i], name))
			return (int)(cl->place.n + i);
	if (!add || !name[0] || strlen(name) > PLACE_NAME_MAX)
		return -ENOENT;
	if (cl->nretired == CLUSTER_RETIRED_MAX)
		return -ENOSPC;
	snprintf(cl->retired[cl->nretired], sizeof(cl->retired[0]), "%s", name);
	log_printf(LOG_NOTICE, "cluster: %s is no longer a node, but owns parts whose shards are held: its parts stay listed and are read decoded",
		   name);
	return (int)(cl->place.n + cl->nretired++);
}

/* ---- running ------------------------------------------------------------ */

void cluster_tick(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);
	uint64_t now = ckptd_now_ms();
	uint32_t i;

	if (!cl || cl->stopping)
		return;
	link_tick(cl, now);
	hold_tick(cl, now);
	rebuild_tick(cl);
	adopt_tick(cl);
	for (i = 0; i < cl->place.n; i++) {
		struct peer *p = &cl->peers[i];

		if (i == cl->self || !p->outgoing || p->l || now < p->retry_ms)
			continue;
		link_connect(cl, p);
	}
	protect_tick(cl);
}

void cluster_version_changed(struct ckptd *d, struct version *v)
{
	struct cluster *cl = cl_of(d);

	if (!cl || cl->stopping)
		return;
	parts_announce(cl, v);
	protect_version(cl, v);
}

void cluster_start(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);
	struct list *jp, *vp;

	if (!cl)
		return;
	/* Parts sealed before a restart that are not protected yet. */
	list_for_each(jp, &d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions)
			protect_version(cl, list_entry(vp, struct version, link));
	}
}

void cluster_stop(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);

	if (!cl || cl->stopping)
		return;
	cl->stopping = 1;
	shutdown(cl->listen_fd, SHUT_RDWR);
	link_close_all(cl);
}

void cluster_close(struct ckptd *d)
{
	struct cluster *cl = cl_of(d);

	if (!cl)
		return;
	protect_close(cl);
	link_free_all(cl);
	peerread_close(cl);
	adopt_close(cl);
	rebuild_close(cl);
	parts_close(cl);
	hold_close(cl);
	if (cl->listen_fd >= 0)
		close(cl->listen_fd);
	free(cl->peers);
	free(cl->retired);
	place_release(&cl->place);
	nodes_release(&cl->nodes);
	memset(cl->key, 0, sizeof(cl->key));
	bwlimit_release(&cl->bw);
	free(cl);
	d->cluster = NULL;
	d->node = (struct node_self){ NULL, 0, 0 };
}

int cluster_rebuild(struct ckptd *d)
{
	return cl_of(d) ? rebuild_start(cl_of(d)) : -ENOTSUP;
}

uint32_t cluster_nodes(const struct ckptd *d)
{
	return cl_of(d) ? cl_of(d)->place.n : 0;
}

const char *cluster_self_name(const struct ckptd *d)
{
	return cl_of(d) ? cl_name(cl_of(d), cl_of(d)->self) : NULL;
}

uint32_t cluster_self(const struct ckptd *d)
{
	return cl_of(d) ? cl_of(d)->self : 0;
}

const char *cluster_node_name(const struct ckptd *d, uint32_t node)
{
	const struct cluster *cl = cl_of(d);

	return cl && node < cl->place.n + cl->nretired ? cl_name(cl, node) : "";
}

int cluster_node_id(const struct ckptd *d, const char *name)
{
	const struct cluster *cl = cl_of(d);

	return cl ? place_find(&cl->place, name) : -ENOENT;
}

int cluster_node_up(const struct ckptd *d, uint32_t node)
{
	const struct cluster *cl = cl_of(d);

	if (!cl || node >= cl->place.n)
		return 0;
	return node == cl->self || cl->peers[node].st == P_UP;
}

void cluster_reach(const struct ckptd *d, uint32_t owner, uint64_t open_id,
		   struct cluster_reach *r)
{
	const struct cluster *cl = cl_of(d);
	const struct man_holders *rec;
	uint32_t s, w, ids[32];

	memset(r, 0, sizeof(*r));
	if (!cl || owner >= cl->place.n + cl->nretired)
		return;
	rec = holders_of(cl, owner, open_id, ids);
	r->k = rec ? rec->k : cl->place.k;
	w = rec ? rec->k + rec->m - 1 : cl->place.k + cl->place.m - 1;
	for (s = 1; s <= w; s++) {
		r->shards++;
		if (ids[s - 1] != HOLDER_NONE)
			r->reachable += cluster_node_up(d, ids[s - 1]);
	}
}

/* Peers whose oldest request has waited CLUSTER_LAG_MS or more, or with
 * CLUSTER_LAG_BYTES queued: "n3 12.0s 24MiB, n5 ...". */
static void lag_report(const struct cluster *cl, char *buf, size_t cap)
{
	uint64_t now = ckptd_now_ms(), oldest;
	size_t queued, n = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < cl->place.n; i++) {
		uint64_t age;

		if (i == cl->self)
			continue;
		link_lag(cl, i, &queued, &oldest);
		age = oldest ? now - oldest : 0;
		if (age < CLUSTER_LAG_MS && queued < CLUSTER_LAG_BYTES)
			continue;
		n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0,
				      "%s%s %.1fs %zuMiB", n ? ", " : "",
				      name_of(cl, i), age / 1000.0,
				      queued >> 20);
		if (n >= cap) {
			buf[cap - 1] = 0;
			return;
		}
	}
}

/* Node id as a LIST_NODES entry, at now. */
static void node_info(const struct cluster *cl, uint32_t id, uint64_t now,
		      struct ckpt_node_info *n)
{
	static const uint32_t states[] = {
		[P_DOWN] = CKPT_NODE_DOWN,
		[P_CONNECTING] = CKPT_NODE_CONNECTING,
		[P_UP] = CKPT_NODE_UP,
	};
	const struct peer *p = &cl->peers[id];
	uint64_t oldest;
	size_t queued;

	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name_of(cl, id));
	snprintf(n->domain, sizeof(n->domain), "%s",
		 cl->place.nodes[id].domain);
	if (id == cl->self) {
		n->state = CKPT_NODE_SELF;
		n->since_ms_ago = now - cl->d->st.start_ms;
		return;
	}
	n->state = states[p->st];
	n->last_error = p->st == P_UP ? 0 : p->last_err;
	n->since_ms_ago = now - p->since_ms;
	n->heard_ms_ago = p->heard_ms ? now - p->heard_ms : CKPT_NODE_NEVER;
	link_lag(cl, id, &queued, &oldest);
	n->lag_ms = oldest ? now - oldest : 0;
	n->queued_bytes = queued;
}

int cluster_list_nodes(const struct ckptd *d, struct cluster_reply *out)
{
	const struct cluster *cl = cl_of(d);
	struct ckpt_node_info n;
	uint64_t now = ckptd_now_ms();
	struct enc *e;
	uint32_t i;

	if (!cl)
		return -ENOENT;
	if (!(e = out->begin(out, cl->place.n)))
		return 0;
	for (i = 0; i < cl->place.n; i++) {
		if (!out->take(out))
			continue;
		node_info(cl, i, now, &n);
		proto_enc_node_entry(e, &n);
	}
	out->end(out);
	return 0;
}

void cluster_status(const struct ckptd *d, struct ckpt_status *s)
{
	const struct cluster *cl = cl_of(d);
	struct cluster_prot_status ps;
	struct hold_space hs;
	uint32_t i;

	if (!cl)
		return;
	snprintf(s->node, sizeof(s->node), "%s", name_of(cl, cl->self));
	for (i = 0; i < cl->place.n; i++) {
		if (i == cl->self)
			continue;
		s->peers++;
		s->peers_up += cl->peers[i].st == P_UP;
	}
	protect_status(cl, &ps);
	s->protect_queued = ps.queued;
	s->protect_done = ps.done;
	s->protect_failures = ps.failures;
	s->protect_bytes = ps.bytes_sent;
	s->parts_degraded = ps.degraded;
	s->reprotect_done = ps.reprotected;
	s->holders_replaced = ps.replaced;
	snprintf(s->protect_waiting, sizeof(s->protect_waiting), "%s",
		 ps.waiting_for);
	hold_space(cl, &hs);
	s->shards_held = hs.nheld;
	s->shard_bytes = hs.held;
	s->shards_bad = hs.bad;
	s->shard_reserved = hs.reserved;
	s->shards_open = (uint32_t)hs.nopen;
	s->shards_refused_space = (uint32_t)hs.refused_space;
	s->shards_dropped = (uint32_t)hs.dropped;
	s->shard_room = hs.room;
	s->holder_reserve = hs.keep;
	adopt_counts(cl, &s->parts_adopting, &s->parts_adopted);
	s->ec_k = cl->place.k;
	s->ec_m = cl->place.m;
	lag_report(cl, s->peers_lagging, sizeof(s->peers_lagging));
	rebuild_status(cl, s);
}
