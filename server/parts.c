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
 * Reads of other nodes' files are peerread.c's; parts_locate() tells it
 * which node holds a path.
 *
 * Threads: the loop thread; the read task's run() on a worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "cluster.h"
#include "cluster_i.h"
#include "crc32c.h"
#include "manifest.h"
#include "ops.h"
#include "plan.h"
#include "pool.h"
#include "session.h"
#include "shardmeta.h"
#include "sys.h"

struct rpart {
	struct list link;         /* in parts.list */
	uint32_t owner;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t uid, state, level, copies, nparts, nfiles;
	uint64_t seq, open_id, sealed_ns, bytes;
	struct manifest man;      /* SEALED with a manifest; else zeroed */
	uint32_t *fhash;          /* man's files by path: index + 1, or 0 */
	uint32_t hcap;            /* a power of two, > 2 * man.nfiles */
};

struct parts {
	struct cluster *cl;
	struct list list;
};

static struct cluster *cl_of(const struct ckptd *d)
{
	return d->cluster;
}

static void rpart_free(struct rpart *p)
{
	list_del(&p->link);
	manifest_release(&p->man);
	free(p->fhash);
	free(p);
}

static uint32_t path_hash(const char *s)
{
	uint32_t h = 2166136261u;     /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
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
		k = path_hash(p->man.files[i].path) & (cap - 1);
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

/*
 * The uid a job name belongs to, as a caller of uid `caller` sees it: this
 * node's job's, else caller's if some part of it is caller's, else that of
 * the first part heard.  -ENOENT if nothing of the job is known.  Job names
 * are not coordinated between nodes, so two uids may each hold a job of the
 * same name on different nodes: only the parts of this one uid make up the
 * job's versions, so that neither sees, lists or reads the other's.
 */
static int job_owner(const struct ckptd *d, const char *job, uint32_t caller)
{
	const struct cluster *cl = cl_of(d);
	struct job *j = catalog_job((struct catalog *)&d->cat, job);
	struct list *pos;
	int first = -ENOENT;

	if (j)
		return (int)j->uid;
	if (!cl || !cl->parts)
		return -ENOENT;
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);

		if (strcmp(p->job, job))
			continue;
		if (caller && p->uid == caller)
			return (int)p->uid;
		if (first < 0)
			first = (int)p->uid;
	}
	return first;
}

/* The owner uid of v's job, or for the caller (see job_owner). */
static uint32_t owner_of(const struct ckptd *d, const char *job,
			 const struct version *v, uint32_t caller)
{
	int u;

	if (v && v->job)
		return v->job->uid;
	u = job_owner(d, job, caller);
	return u < 0 ? caller : (uint32_t)u;
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

/* The same for a part of this node's being rebuilt (an rpart of its own). */
static uint8_t *rpart_frame(struct cluster *cl, const struct rpart *p,
			    uint32_t seq, size_t *len)
{
	struct peer_part pp;
	uint8_t *man, *buf;
	size_t size = manifest_size(&p->man);
	long n;

	memset(&pp, 0, sizeof(pp));
	snprintf(pp.owner, sizeof(pp.owner), "%s", cl_name(cl, cl->self));
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
	    v->state == CKPT_ST_SEALING)
		return 0;
	return send_to(cl, node, version_frame, v, v->jobname, v->name);
}

void parts_announce(struct cluster *cl, const struct version *v)
{
	announce_to(cl, v, cl->self);
}

/* Tell node (or every peer up: node == self) about p, a part of this
 * node's being rebuilt.  The number of peers that could not be told. */
static int announce_own(struct cluster *cl, const struct rpart *p,
			uint32_t node)
{
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
	list_for_each(jp, &cl->d->cat.jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions)
			failed += announce_to(cl, list_entry(vp, struct version,
							     link), node);
	}
	list_for_each(pos, &ps->list) {
		struct rpart *p = list_entry(pos, struct rpart, link);

		if (p->owner == cl->self)
			failed += announce_own(cl, p, node);
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
	int owner = place_find(&cl->place, m->owner);

	/* What its owner says when it comes up replaces this. */
	if (owner >= 0 && (uint32_t)owner != cl->self)
		rpart_from_meta(cl, (uint32_t)owner, m, CKPT_LOCAL,
				CKPT_COPY_LOCAL | CKPT_COPY_PEERS, &p);
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

void parts_on_part(struct cluster *cl, struct link *l, const uint8_t *f,
		   size_t n, const struct peer_hdr *h)
{
	struct parts *ps = cl->parts;
	uint32_t owner = link_node(l);
	struct peer_part pp;
	struct rpart *p;
	int ret;

	ret = peer_decode_part(f, n, &pp);
	if (ret == 0 && strcmp(pp.owner, cl_name(cl, owner)))
		ret = -EPERM;          /* a node speaks for its own parts */
	if (ret < 0) {
		link_answer_status(l, PEER_PART | PEER_REPLY, h->seq, ret);
		return;
	}
	p = rpart_find(ps, owner, pp.job, pp.version);
	if (p && (pp.state == 0 || p->open_id != pp.open_id)) {
		/* Removed, or written anew under the name: the shards held
		 * of the old one go. */
		hold_part_gone(cl, owner, p->open_id);
		rpart_free(p);
		p = NULL;
	}
	if (pp.state == 0) {
		hold_part_gone(cl, owner, pp.open_id);
		link_answer_status(l, PEER_PART | PEER_REPLY, h->seq, 0);
		return;
	}
	hold_confirm(cl, owner, pp.open_id);
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
	link_answer_status(l, PEER_PART | PEER_REPLY, h->seq, ret < 0 ? ret : 0);
}

/* ---- views ----------------------------------------------------------------- */

struct vsum {
	uint32_t nparts, sealed, failed, known, level;
	uint32_t nfiles;
	uint64_t bytes, sealed_ns;
};

static void sum_part(struct vsum *s, uint32_t state, uint32_t level,
		     uint32_t nparts, uint32_t nfiles, uint64_t bytes,
		     uint64_t sealed_ns)
{
	s->known++;
	if (nparts > s->nparts)
		s->nparts = nparts;
	if (state == CKPT_ST_SEALED) {
		s->sealed++;
		if (level < s->level)
			s->level = level;
	} else if (state == CKPT_ST_FAILED || state == CKPT_ST_INCOMPLETE ||
		   state == CKPT_ST_DAMAGED) {
		s->failed++;
	}
	s->nfiles += nfiles;
	s->bytes += bytes;
	if (sealed_ns > s->sealed_ns)
		s->sealed_ns = sealed_ns;
}

/* Sum the parts of job/version: v (this node's, may be NULL) and the
 * others'.  0, or -ENOENT when there is no cluster or other nodes hold
 * nothing of it (the local part alone says all). */
static int summarize(const struct ckptd *d, const char *job,
		     const char *version, const struct version *v,
		     uint32_t caller, struct vsum *s)
{
	const struct cluster *cl = cl_of(d);
	struct list *pos;
	int others = 0;
	uint32_t uid;

	memset(s, 0, sizeof(*s));
	s->level = CKPT_DRAINED;
	if (!cl || !cl->parts)
		return -ENOENT;
	uid = owner_of(d, job, v, caller);
	if (v) {
		struct ckpt_version_info vi;

		version_info(v, &vi);
		sum_part(s, v->state, v->level, v->nparts, vi.nfiles, vi.bytes,
			 v->sealed_ns);
	}
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);

		if (strcmp(p->job, job) || strcmp(p->version, version) ||
		    p->uid != uid)
			continue;
		sum_part(s, p->state, p->level, p->nparts, p->nfiles, p->bytes,
			 p->sealed_ns);
		others++;
	}
	if (!others && (!v || v->nparts <= 1))
		return -ENOENT;
	if (!s->nparts)
		s->nparts = 1;
	return 0;
}

int cluster_version_view(const struct ckptd *d, const char *job,
			 const char *version, const struct version *v,
			 uint32_t caller, struct ckpt_version_info *info)
{
	struct vsum s;

	if (summarize(d, job, version, v, caller, &s) < 0)
		return -ENOENT;
	info->nparts = s.nparts;
	info->parts_sealed = s.sealed;
	if (!v) {
		snprintf(info->job, sizeof(info->job), "%s", job);
		snprintf(info->version, sizeof(info->version), "%s", version);
		info->nfiles = s.nfiles;
		info->bytes = s.bytes;
		info->sealed_ns = s.sealed_ns;
		info->uid = owner_of(d, job, NULL, caller);
	} else {
		info->nfiles = s.nfiles;
		info->bytes = s.bytes;
	}
	if (s.failed) {
		info->state = CKPT_ST_FAILED;
		info->level = CKPT_NONE;
	} else if (s.sealed < s.nparts) {
		info->state = CKPT_ST_OPEN;
		info->level = CKPT_NONE;
	} else {
		info->state = CKPT_ST_SEALED;
		info->level = s.level;
	}
	return 0;
}

uint64_t cluster_version_newest(const struct ckptd *d, const char *job,
				const char *version, const struct version *v,
				uint32_t caller)
{
	struct vsum s;

	if (summarize(d, job, version, v, caller, &s) < 0)
		return v ? v->sealed_ns : 0;
	return s.sealed_ns;
}

int cluster_version_ready(const struct ckptd *d, const char *job,
			  const char *version, const struct version *v,
			  uint32_t caller, uint32_t level)
{
	struct vsum s;

	if (summarize(d, job, version, v, caller, &s) < 0)
		return v && v->state == CKPT_ST_SEALED && v->level >= level;
	return !s.failed && s.sealed >= s.nparts && s.level >= level;
}

void cluster_each_remote(const struct ckptd *d, const char *job, uint32_t uid,
			 void (*fn)(void *arg, const char *job,
				    const char *version, uint64_t sealed_ns),
			 void *arg)
{
	const struct cluster *cl = cl_of(d);
	struct list *pos, *q;

	if (!cl || !cl->parts)
		return;
	if (job)         /* the versions of the job as uid sees it */
		uid = owner_of(d, job, NULL, uid);
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);
		uint64_t newest = 0;
		int first = 1;

		if ((uid || job) && p->uid != uid)
			continue;
		if (job ? strcmp(p->job, job) != 0
			: catalog_job((struct catalog *)&d->cat, p->job) != NULL)
			continue;
		if (job && catalog_version((struct catalog *)&d->cat, job,
					   p->version))
			continue;
		/* Once per name: at its first entry in the list. */
		for (q = cl->parts->list.next; q != pos; q = q->next) {
			const struct rpart *o = list_entry(q, struct rpart, link);

			if (!strcmp(o->job, p->job) &&
			    (!job || !strcmp(o->version, p->version))) {
				first = 0;
				break;
			}
		}
		if (!first)
			continue;
		for (q = cl->parts->list.next; q != &cl->parts->list; q = q->next) {
			const struct rpart *o = list_entry(q, struct rpart, link);

			if (!strcmp(o->job, p->job) && !strcmp(o->version, p->version) &&
			    o->uid == p->uid && o->sealed_ns > newest)
				newest = o->sealed_ns;
		}
		fn(arg, p->job, job ? p->version : NULL, newest);
	}
}

int cluster_job_uid(const struct ckptd *d, const char *job, uint32_t caller)
{
	const struct cluster *cl = cl_of(d);

	if (!cl || !cl->parts)
		return -ENOENT;
	return job_owner(d, job, caller);
}

/* ---- listings ---------------------------------------------------------------- */

/* The other nodes' parts of job/version of uid, in the list's order. */
#define for_each_rpart(ps, pos, p, jb, vr, u)                               \
	list_for_each(pos, &(ps)->list)                                     \
		if ((p = list_entry(pos, struct rpart, link)),              \
		    strcmp(p->job, jb) || strcmp(p->version, vr) ||         \
		    p->uid != (u)) {                                        \
		} else

int cluster_list_parts(struct conn *c, const struct proto_msg *req,
		       const struct version *v)
{
	struct cluster *cl = cl_of(c->d);
	struct ckpt_version_info info;
	struct list *pos;
	struct rpart *p;
	uint32_t n = v ? 1 : 0, uid;
	struct page pg;

	if (!cl || !cl->parts)
		return -ENOENT;
	uid = owner_of(c->d, req->job, v, c->uid);
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid)
		n++;
	if (!n)
		return -ENOENT;
	if (page_begin(c, req, n, &pg) < 0)
		return 0;
	if (v && page_take(&pg)) {
		version_info(v, &info);
		info.nparts = v->nparts;
		info.parts_sealed = v->state == CKPT_ST_SEALED;
		snprintf(info.node, sizeof(info.node), "%s", cl_name(cl, cl->self));
		proto_enc_version_entry(&pg.e, &info);
	}
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid) {
		if (!page_take(&pg))
			continue;
		memset(&info, 0, sizeof(info));
		snprintf(info.job, sizeof(info.job), "%s", p->job);
		snprintf(info.version, sizeof(info.version), "%s", p->version);
		snprintf(info.node, sizeof(info.node), "%s", cl_name(cl, p->owner));
		info.state = p->state;
		info.level = p->level;
		info.uid = p->uid;
		info.copies = p->copies;
		info.nfiles = p->nfiles;
		info.bytes = p->bytes;
		info.seq = p->seq;
		info.sealed_ns = p->sealed_ns;
		info.nparts = p->nparts;
		info.parts_sealed = p->state == CKPT_ST_SEALED;
		info.slow_rank = -1;
		proto_enc_version_entry(&pg.e, &info);
	}
	page_end(c, &pg);
	return 0;
}

/* Does the part own path, and is it the one the namespace shows?  Its
 * file index, or -1. */
static int rpart_file(const struct rpart *p, const char *path)
{
	uint32_t k, i;

	if (!p->hcap)
		return -1;
	k = path_hash(path) & (p->hcap - 1);
	for (; p->fhash[k]; k = (k + 1) & (p->hcap - 1)) {
		i = p->fhash[k] - 1;
		if (!strcmp(p->man.files[i].path, path))
			return (int)i;
	}
	return -1;
}

/* The part that shows path (not this node's), and its file index. */
static struct rpart *path_owner(const struct cluster *cl, const char *job,
				const char *version, uint32_t uid,
				const char *path, int *fi)
{
	struct rpart *p, *best = NULL;
	struct list *pos;
	int i;

	for_each_rpart(cl->parts, pos, p, job, version, uid) {
		i = rpart_file(p, path);
		if (i < 0)
			continue;
		if (!best || strcmp(cl_name(cl, p->owner),
				    cl_name(cl, best->owner)) < 0) {
			best = p;
			*fi = i;
		}
	}
	return best;
}

/* The listing entry of file i of p.  Its ino is unique across the parts
 * of a version: the owner's number above the file's index (this node's
 * own files have none, vfile_info()). */
static void file_entry(struct ckpt_file_info *fi, const struct rpart *p,
		       uint32_t i)
{
	uint32_t d = MAN_DATA(&p->man, i);

	memset(fi, 0, sizeof(*fi));
	fi->name = p->man.files[i].path;   /* as vfile_info() */
	fi->size = p->man.files[d].size;
	fi->attr = p->man.files[d].attr;
	fi->ino = ((uint64_t)(p->owner + 1) << 32) | (d + 1);
	fi->nlink = p->man.files[d].nlink;
}

/* Is file i of p shown (not shadowed by this node's part or another)? */
static int shown(const struct cluster *cl, const struct rpart *p, uint32_t i,
		 const struct version *v)
{
	int fi;

	if (v && version_file((struct version *)v, p->man.files[i].path, 0) >= 0)
		return 0;
	return path_owner(cl, p->job, p->version, p->uid,
			  p->man.files[i].path, &fi) == p;
}

int cluster_list_files(struct conn *c, const struct proto_msg *req,
		       const struct version *v)
{
	struct cluster *cl = cl_of(c->d);
	struct ckpt_file_info fi;
	struct list *pos;
	struct rpart *p;
	uint32_t n = v ? v->nlive : 0, i, uid;
	struct page pg;
	int any = 0;

	if (!cl || !cl->parts)
		return -ENOENT;
	uid = owner_of(c->d, req->job, v, c->uid);
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid) {
		any = 1;
		for (i = 0; i < p->man.nfiles; i++)
			n += shown(cl, p, i, v);
	}
	if (!any)
		return -ENOENT;
	if (page_begin(c, req, n, &pg) < 0)
		return 0;
	for (i = 0; v && i < v->nfiles; i++) {
		if (v->files[i].dead || !page_take(&pg))
			continue;
		vfile_info(v, i, &fi);
		proto_enc_file_entry(&pg.e, &fi);
	}
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid) {
		for (i = 0; i < p->man.nfiles; i++) {
			if (!shown(cl, p, i, v) || !page_take(&pg))
				continue;
			file_entry(&fi, p, i);
			proto_enc_file_entry(&pg.e, &fi);
		}
	}
	page_end(c, &pg);
	return 0;
}

/* The part holding the file req names (job, version, path) in another
 * node's part, and the name's index in it (*i), or NULL. */
static const struct rpart *req_file(struct conn *c,
				    const struct proto_msg *req, int *i)
{
	struct cluster *cl = cl_of(c->d);

	if (!cl || !cl->parts)
		return NULL;
	return path_owner(cl, req->job, req->version,
			  owner_of(c->d, req->job, NULL, c->uid), req->path, i);
}

int cluster_stat_file(struct conn *c, const struct proto_msg *req)
{
	struct ckpt_file_info fi;
	const struct rpart *p;
	struct enc e;
	int i;

	p = req_file(c, req, &i);
	if (!p)
		return -ENOENT;
	if (!conn_reply_begin(c, req, &e))
		return 0;
	file_entry(&fi, p, (uint32_t)i);
	proto_enc_file_entry(&e, &fi);
	conn_reply_end(c, &e);
	return 0;
}

int cluster_getxattrs(struct conn *c, const struct proto_msg *req)
{
	const struct man_file *f;
	const struct rpart *p;
	struct enc e;
	int i;

	p = req_file(c, req, &i);
	if (!p)
		return -ENOENT;
	f = &p->man.files[MAN_DATA(&p->man, i)];
	if (!conn_reply_begin(c, req, &e))
		return 0;
	enc_u32(&e, f->xlen);
	enc_bytes(&e, f->xattr, f->xlen);
	conn_reply_end(c, &e);
	return 0;
}

/* The node whose part shows path (not this one) and the file's size, for
 * peerread.c.  0 or -ENOENT. */
int parts_locate(struct cluster *cl, const char *job, const char *version,
		 uint32_t caller, const char *path, struct part_loc *out)
{
	struct rpart *p;
	int fi;

	if (!cl->parts)
		return -ENOENT;
	p = path_owner(cl, job, version, owner_of(cl->d, job, NULL, caller),
		       path, &fi);
	if (!p)
		return -ENOENT;
	fi = (int)MAN_DATA(&p->man, fi);  /* a hard link reads its file */
	out->node = p->owner;
	out->size = p->man.files[fi].size;
	out->fi = (uint32_t)fi;
	out->open_id = p->open_id;
	out->copies = p->copies;
	out->uid = p->uid;
	out->sealed_ns = p->sealed_ns;
	out->man = &p->man;
	return 0;
}

int cluster_part_of(const struct ckptd *d, const char *job,
		    const char *version, uint32_t caller, const char *path,
		    struct cluster_part *out)
{
	struct part_loc loc;

	if (!cl_of(d) ||
	    parts_locate(cl_of(d), job, version, caller, path, &loc) < 0)
		return -ENOENT;
	*out = (struct cluster_part){ loc.node, loc.copies, loc.uid, loc.size,
				      loc.sealed_ns };
	return 0;
}

int cluster_parts_readable(const struct ckptd *d, const char *job,
			   const char *version, const struct version *v,
			   uint32_t caller)
{
	const struct cluster *cl = cl_of(d);
	struct list *pos;
	struct rpart *p;
	struct plan pl;

	if (!cl || !cl->parts)
		return 1;
	for_each_rpart(cl->parts, pos, p, job, version,
		       owner_of(d, job, v, caller))
		if (p->state == CKPT_ST_SEALED &&
		    !plan_part(d, p->owner, p->copies | plan_pfs_whole(v),
			       &pl, NULL, 0))
			return 0;
	return 1;
}

int cluster_each_file(const struct ckptd *d, const char *job,
		      const char *version, const struct version *v,
		      uint32_t caller,
		      void (*fn)(void *arg, const char *path), void *arg)
{
	const struct cluster *cl = cl_of(d);
	struct list *pos;
	struct rpart *p;
	uint32_t i, uid;
	int any = v != NULL;

	for (i = 0; v && i < v->nfiles; i++)
		if (!v->files[i].dead)
			fn(arg, v->files[i].path);
	if (cl && cl->parts) {
		uid = owner_of(d, job, v, caller);
		for_each_rpart(cl->parts, pos, p, job, version, uid) {
			any = 1;
			for (i = 0; i < p->man.nfiles; i++)
				if (shown(cl, p, i, v))
					fn(arg, p->man.files[i].path);
		}
	}
	return any ? 0 : -CKPT_ENOVERSION;
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
