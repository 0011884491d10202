/*
 * parts.c - one namespace over the cluster: what this node knows of the
 * parts other nodes hold, and the requests that need them (cluster.h).
 *
 * Each node is the authority on its own parts (the versions in its
 * catalog).  It announces each to every peer with a PART frame: when a link
 * comes up (all of them), and whenever one changes (the version_changed
 * event: sealed, failed, a level gained or lost, removed).  A SEALED part's
 * PART carries its manifest, so that every node can list its files and
 * send reads of them to their owner.  A node keeps the latest PART of each
 * (owner, job, version) in memory (struct rpart); when a link to an owner
 * comes up it forgets that owner's parts first, since the owner is about to
 * say all of them again (so a part removed while the link was down does
 * not linger).  A part whose owner is down stays known: its files are
 * listed, and reads of them fail until it is back.
 *
 * A version is complete when as many parts as its writers said (nparts,
 * the largest any part states) are SEALED, and its level is then the
 * lowest of its parts'.  A path is expected in one part only; were it in
 * two, this node's own part wins, then the owner whose name sorts first.
 *
 * What these parts make (versions, listings, which node holds a path) is
 * partsview.c's; reads of other nodes' files are peerread.c's.
 *
 * Threads: the loop thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cluster.h"
#include "cluster_i.h"
#include "drain.h"
#include "manifest.h"
#include "namehash.h"
#include "parts_i.h"
#include "shardmeta.h"

/* Tell the layers above that job's version (NULL, NULL: any) changed on
 * another node (event.h: EV_PART_CHANGED). */
static void part_changed(struct cluster *cl, const char *job,
			 const char *version)
{
	struct event_part ep = { job, version };

	event_raise(&cl->d->ev, EV_PART_CHANGED, &ep);
}

static void rpart_free(struct rpart *p)
{
	list_del(&p->link);
	rpart_maps_release(p);
	manifest_release(&p->man);
	free(p->fhash);
	free(p);
}

/* Index p's files by path (listings and reads look paths up in every
 * part: a scan would make listing a part of n files cost n^2).  0 or
 * -ENOMEM. */
static int rpart_index(struct rpart *p)
{
	uint32_t cap = 16, i, k;

	free(p->fhash);
	p->fhash = NULL;
	p->hcap = 0;
	while (cap <= 2 * (uint64_t)p->man.nfiles)
		cap *= 2;
	p->fhash = calloc(cap, sizeof(*p->fhash));
	if (!p->fhash)
		return -ENOMEM;
	p->hcap = cap;
	for (i = 0; i < p->man.nfiles; i++) {
		k = name_hash(p->man.files[i].path) & (cap - 1);
		while (p->fhash[k])
			k = (k + 1) & (cap - 1);
		p->fhash[k] = i + 1;
	}
	return 0;
}

static struct rpart *rpart_find(const struct parts *ps, uint32_t owner,
				const char *job, const char *version)
{
	struct list *pos;

	list_for_each(pos, &ps->list) {
		struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner == owner && !strcmp(p->job, job) &&
		    !strcmp(p->version, version))
			return p;
	}
	return NULL;
}

const struct man_holders *parts_holders(const struct cluster *cl,
					uint32_t owner, uint64_t open_id)
{
	struct list *pos;

	if (!cl->parts)
		return NULL;
	list_for_each(pos, &cl->parts->list) {
		struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner == owner && p->open_id == open_id)
			return p->man.holders;
	}
	return NULL;
}

/* ---- parts taken over (adopt.c) ------------------------------------------ */

/* Does rec say its part took over owner's part open_id? */
static int rec_from(const struct cluster *cl, const struct man_holders *rec,
		    uint32_t owner, uint64_t open_id)
{
	return rec && rec->from[0] && rec->from_id == open_id &&
	       !strcmp(rec->from, cl_name(cl, owner));
}

/* Is a part with these copies durable beyond its owner: every shard
 * sealed on its holders, or on the PFS? */
static int durable(uint32_t copies)
{
	return (copies & (CKPT_COPY_PEERS | CKPT_COPY_PFS)) != 0;
}

static void note_from(struct parts *ps, const struct man_holders *rec)
{
	if (rec && rec->from[0])
		ps->any_from = 1;
}

int parts_taken_over(const struct cluster *cl, uint32_t owner,
		     uint64_t open_id, int durable_only, uint32_t *by)
{
	struct list *pos, *jp, *vp;

	/* This node's own parts (few) always; others' only once a part
	 * that took over another was seen (this is asked of every PART). */
	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions) {
			const struct version *v =
				list_entry(vp, struct version, link);

			if (v->state == CKPT_ST_SEALED &&
			    (!durable_only || durable(v->copies)) &&
			    rec_from(cl, v->holders, owner, open_id)) {
				if (by)
					*by = cl->self;
				return 1;
			}
		}
	}
	if (!cl->parts || !cl->parts->any_from)
		return 0;
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner != owner && p->state == CKPT_ST_SEALED &&
		    (!durable_only || durable(p->copies)) &&
		    rec_from(cl, p->man.holders, owner, open_id)) {
			if (by)
				*by = p->owner;
			return 1;
		}
	}
	return 0;
}

void parts_superseded(struct cluster *cl, uint32_t owner, uint64_t open_id)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &cl->parts->list) {
		struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner == owner && p->open_id == open_id) {
			char job[CKPT_JOB_MAX + 1], version[CKPT_VERSION_MAX + 1];

			snprintf(job, sizeof(job), "%s", p->job);
			snprintf(version, sizeof(version), "%s", p->version);
			rpart_free(p);
			part_changed(cl, job, version);
		}
	}
}

/*
 * owner's part open_id, whose record rec says it took over another, is
 * durable (PROTECTED, or on the PFS): the old one is gone from the
 * namespace, its shards held here are dropped (every shard of the new one
 * is durable), and, were it this node's own (it was lost and came back),
 * its copy here goes.  Where two nodes took the same part over (they saw
 * the nodes up differently), the one first in the list keeps it: this
 * node's copy goes if another first in the list has one durable too.
 */
static void took_over(struct cluster *cl, uint32_t owner, uint64_t open_id,
		      const struct man_holders *rec)
{
	int old = cl_node_id(cl, rec->from, 0);
	uint32_t by = owner;
	uint64_t from_id = rec->from_id;
	struct list *pos;

	if (old < 0)
		return;
	parts_superseded(cl, (uint32_t)old, from_id);
	hold_part_gone(cl, (uint32_t)old, from_id);
	if ((uint32_t)old == cl->self) {
		adopt_own_superseded(cl, from_id);
		return;
	}
	if (owner != cl->self) {
		/* Another took it over: this node's own copy, if any, goes
		 * when that node is first in the list. */
		uint32_t mine;

		if (owner < cl->self && parts_taken_over(cl, (uint32_t)old,
							 from_id, 0, &mine) &&
		    mine == cl->self)
			adopt_own_superseded_part(cl, (uint32_t)old, from_id);
		return;
	}
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner < by && p->state == CKPT_ST_SEALED &&
		    durable(p->copies) &&
		    rec_from(cl, p->man.holders, (uint32_t)old, from_id))
			by = p->owner;
	}
	if (by != cl->self)
		adopt_own_superseded(cl, open_id);
}

/* ---- announcing this node's parts ---------------------------------------- */

static void on_part_reply(struct ckptd *d, void *arg, int status,
			  const uint8_t *frame, size_t len)
{
	/* Nothing to do: a peer that missed it hears all again on reconnect. */
}

/* A PART frame for pp (its man set or not; malloc'd, *len bytes), or
 * NULL. */
static uint8_t *pp_frame(const struct peer_part *pp, uint32_t seq,
			 size_t *len)
{
	size_t cap = PEER_FRAME_CAP(pp->manlen);
	uint8_t *buf = malloc(cap);
	int n = buf ? peer_encode_part(buf, cap, seq, pp) : -ENOMEM;

	if (n < 0) {
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

/* A PART frame for v (malloc'd, *len bytes), or NULL. */
static uint8_t *part_frame(struct cluster *cl, const struct version *v,
			   uint32_t seq, size_t *len)
{
	struct peer_part pp;
	void *man = NULL;
	size_t manlen = 0;
	uint8_t *buf;

	memset(&pp, 0, sizeof(pp));
	snprintf(pp.owner, sizeof(pp.owner), "%s", cl_name(cl, cl->self));
	snprintf(pp.job, sizeof(pp.job), "%s", v->jobname);
	snprintf(pp.version, sizeof(pp.version), "%s", v->name);
	pp.uid = v->uid;
	pp.state = v->removed ? 0 : v->state;
	pp.level = v->level;
	pp.copies = v->copies;
	pp.nparts = v->nparts ? v->nparts : 1;
	pp.seq = v->seq;
	pp.open_id = v->open_id;
	pp.sealed_ns = v->sealed_ns;
	pp.nfiles = v->nlive;
	pp.bytes = version_bytes(v);
	if (drain_published(cl->d, v))
		pp.flags = PEER_PART_PUBLISHED;
	if (pp.state == CKPT_ST_SEALED &&
	    catalog_manifest_encode(v, v->level, &man, &manlen) == 0 &&
	    manlen <= PEER_MAX_MAN) {
		pp.man = man;
		pp.manlen = (uint32_t)manlen;
	}
	buf = pp_frame(&pp, seq, len);
	free(man);
	return buf;
}

/* The same for an rpart: a part of this node's being rebuilt, or one this
 * node announces for its owner (announce_behalf()). */
static uint8_t *rpart_frame(struct cluster *cl, const struct rpart *p,
			    uint32_t seq, size_t *len)
{
	struct peer_part pp;
	uint8_t *man, *buf;
	size_t size = manifest_size(&p->man);
	long n;

	memset(&pp, 0, sizeof(pp));
	snprintf(pp.owner, sizeof(pp.owner), "%s", cl_name(cl, p->owner));
	snprintf(pp.job, sizeof(pp.job), "%s", p->job);
	snprintf(pp.version, sizeof(pp.version), "%s", p->version);
	pp.uid = p->uid;
	pp.state = p->state;
	pp.level = p->level;
	pp.copies = p->copies;
	pp.nparts = p->nparts;
	pp.seq = p->seq;
	pp.open_id = p->open_id;
	pp.sealed_ns = p->sealed_ns;
	pp.nfiles = p->nfiles;
	pp.bytes = p->bytes;
	pp.flags = p->flags;
	man = size <= PEER_MAX_MAN ? malloc(size) : NULL;
	n = man ? manifest_encode(&p->man, man, size) : -ENOMEM;
	if (n > 0) {
		pp.man = man;
		pp.manlen = (uint32_t)n;
	}
	buf = pp_frame(&pp, seq, len);
	free(man);
	return buf;
}

/* Send a PART frame (built for seq) to node.  0 or -1 (logged). */
static int send_part(struct cluster *cl, uint32_t node, uint8_t *buf,
		     size_t len, uint32_t seq, const char *job,
		     const char *version)
{
	if (!buf || link_request(cl, node, buf, len, seq, 0, on_part_reply,
				 NULL) < 0) {
		log_printf(LOG_WARNING, "cluster: cannot tell %s about %s/%s",
			   cl_name(cl, node), job, version);
		return -1;
	}
	return 0;
}

/* A PART frame for seq of what (a version, or an rpart of this node's). */
typedef uint8_t *(*frame_fn)(struct cluster *cl, const void *what,
			     uint32_t seq, size_t *len);

static uint8_t *version_frame(struct cluster *cl, const void *what,
			      uint32_t seq, size_t *len)
{
	return part_frame(cl, what, seq, len);
}

static uint8_t *own_frame(struct cluster *cl, const void *what,
			  uint32_t seq, size_t *len)
{
	return rpart_frame(cl, what, seq, len);
}

/* Send the frames fn builds of what to node (or every peer up: node ==
 * self).  The number of peers that could not be told (logged). */
static int send_to(struct cluster *cl, uint32_t node, frame_fn fn,
		   const void *what, const char *job, const char *version)
{
	uint32_t i, seq;
	uint8_t *buf;
	size_t len;
	int failed = 0;

	for (i = 0; i < cl->place.n; i++) {
		if (i == cl->self || (node != cl->self && i != node) ||
		    cl->peers[i].st != P_UP)
			continue;
		seq = link_seq(cl);
		buf = fn(cl, what, seq, &len);
		if (send_part(cl, i, buf, len, seq, job, version) < 0)
			failed++;
	}
	return failed;
}

/* Tell node (or every peer up: node == self) about v. */
static int announce_to(struct cluster *cl, const struct version *v,
		       uint32_t node)
{
	/* A removed one (job NULL) is announced too: state 0, so that the
	 * others forget it and drop the shards they hold of it. */
	if (!v->jobname[0] || v->state == CKPT_ST_OPEN ||
	    v->state == CKPT_ST_SEALING || v->no_part)
		return 0;
	return send_to(cl, node, version_frame, v, v->jobname, v->name);
}

void parts_announce(struct cluster *cl, const struct version *v)
{
	announce_to(cl, v, cl->self);
	if (v->state == CKPT_ST_SEALED && !v->removed && durable(v->copies) &&
	    v->holders && v->holders->from[0])
		took_over(cl, cl->self, v->open_id, v->holders);
}

/* Tell node (or every peer up: node == self) about p, a part of this
 * node's being rebuilt.  The number of peers that could not be told. */
static int announce_own(struct cluster *cl, const struct rpart *p,
			uint32_t node)
{
	return send_to(cl, node, own_frame, p, p->job, p->version);
}

/* Does rec give node a shard? */
static int rec_names(const struct cluster *cl, const struct man_holders *rec,
		     uint32_t node)
{
	uint32_t s;

	for (s = 0; rec && s + 1 < rec->k + rec->m; s++)
		if (!strcmp(rec->name[s], cl_name(cl, node)))
			return 1;
	return 0;
}

/*
 * Speak for p, another node's part this node holds a shard of, to node
 * while its owner is not up: a node that never heard the owner (started
 * after it went down, or it was removed from the list: retired) still
 * lists the part and reads it decoded.  The owner's own word replaces it
 * once it is up again (parts_peer_up()).  The peers that could not be told.
 */
static int announce_behalf(struct cluster *cl, const struct rpart *p,
			   uint32_t node)
{
	if (p->owner == cl->self || p->owner == node ||
	    cl->peers[p->owner].st == P_UP || p->state != CKPT_ST_SEALED ||
	    !p->man.nfiles || !rec_names(cl, p->man.holders, cl->self))
		return 0;
	return send_to(cl, node, own_frame, p, p->job, p->version);
}

void parts_sync(struct cluster *cl, uint32_t node)
{
	uint8_t *buf = malloc(PEER_FRAME_CAP(0));
	uint32_t seq = link_seq(cl);
	int n;

	n = buf ? peer_encode_sync(buf, PEER_FRAME_CAP(0), seq,
				   cl_name(cl, cl->self)) : -ENOMEM;
	if (n < 0) {
		free(buf);
		return;
	}
	link_request(cl, node, buf, (size_t)n, seq, 0, on_part_reply, NULL);
}

void parts_peer_up(struct cluster *cl, uint32_t node)
{
	struct parts *ps = cl->parts;
	struct list *pos, *tmp, *jp, *vp;
	int failed = 0;

	if (!ps)
		return;
	/* It is about to say all its parts again; the shards held of them
	 * are confirmed as they come, and its SYNC drops the others. */
	list_for_each_safe(pos, tmp, &ps->list)
		if (list_entry(pos, struct rpart, link)->owner == node)
			rpart_free(list_entry(pos, struct rpart, link));
	hold_owner_up(cl, node);
	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions)
			failed += announce_to(cl, list_entry(vp, struct version,
							     link), node);
	}
	list_for_each(pos, &ps->list) {
		struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner == cl->self)
			failed += announce_own(cl, p, node);
		else    /* not counted: the owner's SYNC is not at stake */
			announce_behalf(cl, p, node);
	}
	/* All said: the peer may drop the shards of parts this node no
	 * longer has (removed while the link was down).  Not after a part
	 * that could not be said: it would lose that part's shards; nor
	 * while this node is being rebuilt: it has not heard of all its parts
	 * yet (rebuild.c sends SYNC when it is done). */
	if (failed || rebuild_active(cl))
		return;
	parts_sync(cl, node);
}

/* A part known from a shard's record m (its owner's manifest in it): the
 * rpart of owner, SEALED at level with copies.  0, -EEXIST, -ENOMEM, or a
 * manifest_decode() error. */
static int rpart_from_meta(struct cluster *cl, uint32_t owner,
			   const struct shard_meta *m, uint32_t level,
			   uint32_t copies, struct rpart **out)
{
	struct parts *ps = cl->parts;
	struct rpart *p;
	uint32_t i;
	int ret;

	if (rpart_find(ps, owner, m->job, m->version))
		return -EEXIST;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = manifest_decode(m->man, m->manlen, &p->man);
	if (ret == 0 && (strcmp(p->man.job, m->job) ||
			 strcmp(p->man.version, m->version)))
		ret = -CKPT_EPROTO;
	if (ret < 0) {
		free(p);
		return ret;
	}
	ret = rpart_index(p);
	if (ret < 0) {
		manifest_release(&p->man);
		free(p);
		return ret;
	}
	p->owner = owner;
	snprintf(p->job, sizeof(p->job), "%s", m->job);
	snprintf(p->version, sizeof(p->version), "%s", m->version);
	p->uid = m->uid;
	p->state = CKPT_ST_SEALED;
	p->level = level;
	p->copies = copies;
	p->nparts = p->man.nparts ? p->man.nparts : 1;
	p->nfiles = p->man.nfiles;
	for (i = 0; i < p->man.nfiles; i++)
		if (!p->man.files[i].link)      /* each file once */
			p->bytes += p->man.files[i].size;
	p->seq = m->seq;
	p->open_id = m->open_id;
	p->sealed_ns = p->man.sealed_ns;
	note_from(ps, p->man.holders);
	list_add_tail(&ps->list, &p->link);
	*out = p;
	return 0;
}

int parts_adopt(struct cluster *cl, const struct shard_meta *m)
{
	struct rpart *p;
	int ret;

	/* Readable, decoded from the peers: no local copy yet. */
	ret = rpart_from_meta(cl, cl->self, m, CKPT_LOCAL, CKPT_COPY_PEERS, &p);
	if (ret == 0)
		announce_own(cl, p, cl->self);
	return ret;
}

void parts_learn_held(struct cluster *cl, const struct shard_meta *m)
{
	struct rpart *p;
	int owner = cl_node_id(cl, m->owner, 1);

	/* What its owner says when it comes up replaces this. */
	if (owner >= 0 && (uint32_t)owner != cl->self &&
	    !parts_taken_over(cl, (uint32_t)owner, m->open_id, 1, NULL) &&
	    rpart_from_meta(cl, (uint32_t)owner, m, CKPT_LOCAL,
			    CKPT_COPY_LOCAL | CKPT_COPY_PEERS, &p) == 0)
		p->behalf = 1;
}

void parts_forget_own(struct cluster *cl, const char *job,
		      const char *version)
{
	struct rpart *p = cl->parts ? rpart_find(cl->parts, cl->self, job,
						 version) : NULL;

	if (p)
		rpart_free(p);
}

/* ---- hearing other nodes' parts ------------------------------------------ */

/*
 * A PART from `from` about another node's part (announce_behalf()): taken
 * when its owner is not up, the part is sealed, and its holder record names
 * `from` (only a holder speaks for a part); its owner may be a node no
 * longer in the list (made a retired one here).  *owner: its id.  0 (take
 * it), 1 (nothing new, or the owner's own word is known: ignore it), or
 * -EPERM / a manifest_decode() error.
 */
static int behalf_check(struct cluster *cl, uint32_t from,
			const struct peer_part *pp, uint32_t *owner)
{
	struct manifest man;
	const struct rpart *p;
	int ret, id, named;

	if (pp->state != CKPT_ST_SEALED || !pp->manlen)
		return -EPERM;
	ret = manifest_decode(pp->man, pp->manlen, &man);
	if (ret < 0)
		return ret;
	named = rec_names(cl, man.holders, from);
	manifest_release(&man);
	if (!named)
		return -EPERM;
	id = cl_node_id(cl, pp->owner, 1);
	if (id < 0 || (uint32_t)id == cl->self ||
	    cl->peers[id].st == P_UP)
		return -EPERM;
	*owner = (uint32_t)id;
	p = rpart_find(cl->parts, *owner, pp->job, pp->version);
	return p && (!p->behalf || p->open_id == pp->open_id) ? 1 : 0;
}

void parts_on_part(struct cluster *cl, struct link *l, const uint8_t *f,
		   size_t n, const struct peer_hdr *h)
{
	struct parts *ps = cl->parts;
	uint32_t owner = link_node(l);
	struct peer_part pp;
	struct rpart *p;
	int ret, behalf = 0;

	ret = peer_decode_part(f, n, &pp);
	if (ret == 0 && strcmp(pp.owner, cl_name(cl, owner))) {
		behalf = 1;    /* a holder speaking for a part's owner */
		ret = behalf_check(cl, link_node(l), &pp, &owner);
	}
	/* A part taken over by another node (PROTECTED there): its old
	 * owner's word, or a holder's for it, is old news. */
	if (ret == 0 && pp.state &&
	    parts_taken_over(cl, owner, pp.open_id, 1, NULL))
		ret = 1;
	if (ret != 0) {
		link_answer_status(l, PEER_PART | PEER_REPLY, h->seq,
				   ret < 0 ? ret : 0);
		return;
	}
	p = rpart_find(ps, owner, pp.job, pp.version);
	if (p && (pp.state == 0 || p->open_id != pp.open_id)) {
		/* Removed, or written anew under the name: the shards held
		 * of the old one go (on its owner's word only). */
		if (!behalf)
			hold_part_gone(cl, owner, p->open_id);
		rpart_free(p);
		p = NULL;
	}
	if (pp.state == 0) {
		hold_part_gone(cl, owner, pp.open_id);
		link_answer_status(l, PEER_PART | PEER_REPLY, h->seq, 0);
		part_changed(cl, pp.job, pp.version);
		return;
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			link_answer_status(l, PEER_PART | PEER_REPLY, h->seq,
					   -ENOMEM);
			return;
		}
		p->owner = owner;
		snprintf(p->job, sizeof(p->job), "%s", pp.job);
		snprintf(p->version, sizeof(p->version), "%s", pp.version);
		list_add_tail(&ps->list, &p->link);
	}
	rpart_maps_release(p);
	manifest_release(&p->man);
	memset(&p->man, 0, sizeof(p->man));
	free(p->fhash);
	p->fhash = NULL;
	p->hcap = 0;
	if (pp.manlen) {
		ret = manifest_decode(pp.man, pp.manlen, &p->man);
		if (ret == 0 && (strcmp(p->man.job, pp.job) ||
				 strcmp(p->man.version, pp.version))) {
			manifest_release(&p->man);
			ret = -CKPT_EPROTO;
		}
		if (ret == 0 && rpart_index(p) < 0) {
			manifest_release(&p->man);
			ret = -ENOMEM;
		}
		if (ret < 0) {
			memset(&p->man, 0, sizeof(p->man));
			log_printf(LOG_WARNING, "cluster: the manifest of %s's part %s/%s does not decode: %s",
				   cl_name(cl, owner), pp.job, pp.version,
				   ckpt_strerror(ret));
		}
	}
	if (!behalf)
		hold_confirm(cl, owner, pp.open_id,
			     (pp.copies & CKPT_COPY_PEERS) ? p->man.holders
							   : NULL);
	p->behalf = behalf;
	p->uid = pp.uid;
	p->state = pp.state;
	p->level = pp.level;
	p->copies = pp.copies;
	p->nparts = pp.nparts;
	p->nfiles = pp.nfiles;
	p->seq = pp.seq;
	p->open_id = pp.open_id;
	p->sealed_ns = pp.sealed_ns;
	p->bytes = pp.bytes;
	p->flags = pp.flags;
	/* Its part is on the PFS (or the version published by it, which
	 * says so again): this node's, waiting, looks at once. */
	if (pp.state == CKPT_ST_SEALED && pp.level >= CKPT_DRAINED)
		drain_part_news(cl->d, pp.job, pp.version, pp.uid);
	link_answer_status(l, PEER_PART | PEER_REPLY, h->seq, ret < 0 ? ret : 0);
	part_changed(cl, pp.job, pp.version);
	/* The owner's own word only: a holder speaking for a part never
	 * makes another's shards go. */
	note_from(ps, p->man.holders);
	if (!behalf && ret == 0 && pp.state == CKPT_ST_SEALED &&
	    durable(pp.copies) && p->man.holders && p->man.holders->from[0]) {
		struct man_holders rec = *p->man.holders;

		/* p's fields are not used after: what it drops may be
		 * another rpart only, never p (the owners differ) */
		took_over(cl, owner, pp.open_id, &rec);
	}
}

void parts_on_sync(struct cluster *cl, struct link *l, const uint8_t *f,
		   size_t n, const struct peer_hdr *h)
{
	hold_on_sync(cl, l, f, n, h);
	/* Its sender has said every part it has: a wait on one it no
	 * longer has (removed while the link was down) ends. */
	part_changed(cl, NULL, NULL);
}

/* ---- life --------------------------------------------------------------------- */

int parts_open(struct cluster *cl)
{
	struct parts *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	ps->cl = cl;
	list_init(&ps->list);
	cl->parts = ps;
	return 0;
}

void parts_close(struct cluster *cl)
{
	struct parts *ps = cl->parts;
	struct list *pos, *tmp;

	if (!ps)
		return;
	list_for_each_safe(pos, tmp, &ps->list)
		rpart_free(list_entry(pos, struct rpart, link));
	free(ps);
	cl->parts = NULL;
}
