/*
 * ops.c - handlers of the control requests: BEGIN, COMMIT, ABORT, WAIT,
 * LATEST, the listings, REMOVE and STATUS (HELLO and RELEASE: lease.c).
 *
 * Each handler validates what it was sent against the catalog and the
 * caller's uid, answers exactly once, and never trusts a handle, a name or a
 * level it has not checked.  Names were already validated by proto_decode().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster.h"
#include "drain.h"
#include "ingest.h"
#include "log.h"
#include "mstats.h"
#include "ops.h"
#include "plan.h"
#include "remove.h"
#include "session.h"
#include "vstats.h"

/* ---- writers ------------------------------------------------------------ */

static int writer_slot(struct conn *c)
{
	struct writer *w;
	uint32_t i;

	for (i = 0; i < c->nw; i++)
		if (!c->w[i].v)
			return i;
	if (c->nw >= 4096)
		return -EMFILE;
	w = realloc(c->w, (c->nw + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	c->w = w;
	c->w[c->nw] = (struct writer){ 0 };
	return c->nw++;
}

static void writer_release(struct conn *c, uint32_t h)
{
	struct version *v = c->w[h].v;

	c->w[h].v = NULL;
	version_put(c->d->cat, v);
}

struct writer *writer_of(struct conn *c, const struct proto_msg *req)
{
	if (req->handle >= c->nw || !c->w[req->handle].v) {
		conn_reply_status(c, req, -EBADF);
		return NULL;
	}
	return &c->w[req->handle];
}

/* A FAILED, INCOMPLETE or DAMAGED version that nobody writes any more may
 * be written again from scratch under the same name (a damaged copy stays
 * in quarantine). */
static int stale(const struct version *v)
{
	return version_dead(v) && v->refs == 1;
}

/* The parts a version begun with want (0: as said before, else 1) has: on
 * a node alone, always 1 (a count from the environment, say Slurm's, does
 * not make a lone node wait for others); in a cluster, at most its nodes,
 * and what the first writer said.  >= 1, or -EINVAL. */
static int begin_nparts(struct ckptd *d, const struct version *v,
			uint32_t want)
{
	uint32_t nodes = cluster_nodes(d);

	if (!nodes)
		return 1;
	if (want > nodes)
		return -EINVAL;
	if (v)
		return want && want != v->nparts ? -EINVAL : (int)v->nparts;
	return want ? (int)want : 1;
}

void op_begin(struct conn *c, const struct proto_msg *req)
{
	struct catalog *cat = c->d->cat;
	struct job *j = catalog_job(cat, req->job);
	struct version *v = NULL;
	uid_t uid = c->uid;
	int h, ret, nparts;

	/* Root (ckptfs) may write on behalf of the user it serves. */
	if (req->uid != CKPT_UID_SELF && req->uid != c->uid) {
		ret = -EPERM;
		if (c->uid != 0)
			goto out_reply;
		uid = req->uid;
	}
	ret = -EACCES;
	if (j && uid != 0 && uid != j->uid)
		goto out_reply;
	if (j)
		v = catalog_version(cat, req->job, req->version);
	if (v && stale(v)) {
		ret = catalog_remove(cat, v);
		if (ret < 0)
			goto out_reply;
		v = NULL;
	}
	if (v && v->state != CKPT_ST_OPEN) {
		ret = v->state == CKPT_ST_FAILED ? -CKPT_EABORTED
						 : -CKPT_ESEALED;
		goto out_reply;
	}
	nparts = begin_nparts(c->d, v, req->nparts);
	if (nparts < 0) {
		ret = nparts;
		goto out_reply;
	}
	h = writer_slot(c);
	if (h < 0) {
		ret = h;
		goto out_reply;
	}
	if (!v) {
		ret = catalog_create(cat, req->job, req->version, uid, &v);
		if (ret < 0)
			goto out_reply;
		v->nparts = (uint32_t)nparts;
		log_printf(LOG_INFO, "version %s/%s: opened by pid %d%s%.0u%s",
			   req->job, req->version, c->pid,
			   nparts > 1 ? " (part of " : "",
			   nparts > 1 ? (unsigned)nparts : 0,
			   nparts > 1 ? " nodes)" : "");
	}
	version_get(v);
	v->writers++;
	c->w[h] = (struct writer){ .v = v };
	{
		struct proto_msg r = { .type = PROTO_BEGIN, .seq = req->seq,
				       .handle = h };

		conn_reply(c, &r);
	}
	return;
out_reply:
	conn_reply_status(c, req, ret);
}

/* No commit of v while a live file of it was left by a writer that died
 * with it open (CKPT_XATTR_FAILED, ckpt.h): -CKPT_ECUTSHORT, the file named in the
 * log; the version and its writers stay as they are.  0: none. */
static int failed_file_refuses(const struct conn *c, const struct version *v,
			       const char *how)
{
	int fi = version_failed_file(v);

	if (fi < 0)
		return 0;
	log_printf(LOG_ERR, "version %s/%s: commit (%s, pid %d) refused: %s may be cut short (its writer died with it open); remove it or rewrite it from offset 0",
		   v->job->name, v->name, how, c->pid, v->files[fi].path);
	return -CKPT_ECUTSHORT;
}

void op_commit(struct conn *c, const struct proto_msg *req)
{
	struct writer *w = writer_of(c, req);
	struct version *v;
	int ret = 0;

	if (!w)
		return;
	v = w->v;
	/* Committed by name meanwhile (ckptctl commit): that included this
	 * writer's bytes, so its commit is done too. */
	if (v->state == CKPT_ST_SEALING || v->state == CKPT_ST_SEALED)
		goto out_release;
	if (v->state != CKPT_ST_OPEN) {
		ret = v->error ? v->error : -CKPT_EABORTED;
		goto out_release;
	}
	ret = failed_file_refuses(c, v, "by its writer");
	if (ret < 0) {          /* the writer stays: it may commit later */
		conn_reply_status(c, req, ret);
		return;
	}
	w->committed = 1;
	v->committed++;
	mstats_stall(c->d, v, &(struct vstall){
		.stall_ns = req->stall, .staging_ns = req->stall_staging,
		.pid = c->pid,
		.rank = req->rank == PROTO_RANK_NONE ? -1 : (int32_t)req->rank });
	if (v->committed == v->writers)
		ret = ingest_seal(c->d, v);
out_release:
	writer_release(c, req->handle);
	conn_reply_status(c, req, ret);
}

void op_abort(struct conn *c, const struct proto_msg *req)
{
	struct writer *w = writer_of(c, req);

	if (!w)
		return;
	if (w->v->state == CKPT_ST_OPEN) {
		log_printf(LOG_INFO, "version %s/%s: aborted by pid %d",
			   w->v->job->name, w->v->name, c->pid);
		ingest_abandon(c->d, w->v, -CKPT_EABORTED);
	}
	writer_release(c, req->handle);
	conn_reply_status(c, req, 0);
}

/* ---- queries ------------------------------------------------------------ */

/* Look up req's job/version for c, answering the error if there is none. */
static struct version *lookup(struct conn *c, const struct proto_msg *req)
{
	struct job *j = catalog_job(c->d->cat, req->job);
	struct version *v;
	int ret;

	if (!j) {
		ret = -CKPT_ENOJOB;
		goto out_reply;
	}
	ret = session_may(c, j);
	if (ret < 0)
		goto out_reply;
	v = catalog_version(c->d->cat, req->job, req->version);
	if (v)
		return v;
	ret = -CKPT_ENOVERSION;
out_reply:
	conn_reply_status(c, req, ret);
	return NULL;
}

void op_commit_name(struct conn *c, const struct proto_msg *req)
{
	struct version *v = lookup(c, req);
	int ret;

	if (!v)
		return;
	if (v->state != CKPT_ST_OPEN) {
		conn_reply_status(c, req, v->state == CKPT_ST_FAILED ?
				  (v->error ? v->error : -CKPT_EABORTED) :
				  -CKPT_ESEALED);
		return;
	}
	ret = failed_file_refuses(c, v, "by name");
	if (ret < 0) {
		conn_reply_status(c, req, ret);
		return;
	}
	log_printf(LOG_INFO, "version %s/%s: committed by name (uid %u) for %u writers",
		   req->job, req->version, c->uid, v->writers - v->committed);
	v->committed = v->writers;
	conn_reply_status(c, req, ingest_seal(c->d, v));
}

/* Can a copy at level come at all?  Without a drain target (or, for
 * PROTECTED, peers) a wait would never end. */
static int level_possible(struct ckptd *d, uint32_t level)
{
	return !((level == CKPT_DRAINED && !drain_enabled(d)) ||
		 (level == CKPT_PROTECTED && !drain_enabled(d) &&
		  !cluster_nodes(d)));
}

/* WAIT on a version this node holds no part of: the version over the
 * cluster, if other nodes hold it. */
static void wait_cluster(struct conn *c, const struct proto_msg *req)
{
	int ret = ops_may_see(c, req->job);

	if (ret == 0 && !level_possible(c->d, req->level))
		ret = -ENOTSUP;
	if (ret == 0)
		ret = session_wait_cluster(c, req);
	if (ret < 0)
		conn_reply_status(c, req, ret);
}

void op_wait(struct conn *c, const struct proto_msg *req)
{
	struct proto_msg r = { .type = PROTO_WAIT, .seq = req->seq };
	struct version *v;

	if (req->level < CKPT_STAGED || req->level > CKPT_DRAINED) {
		conn_reply_status(c, req, -EINVAL);
		return;
	}
	if (!catalog_version(c->d->cat, req->job, req->version) &&
	    cluster_nodes(c->d)) {
		wait_cluster(c, req);
		return;
	}
	v = lookup(c, req);
	if (!v)
		return;
	r.level = drain_wait_level(c->d, v);
	if (r.level >= req->level) {
		conn_reply(c, &r);
	} else if (version_dead(v)) {
		conn_reply_status(c, req, v->error ? v->error : -CKPT_EFAILED);
	} else if (!level_possible(c->d, req->level)) {
		conn_reply_status(c, req, -ENOTSUP);
	} else if (drain_wait_check(c->d, v, req->level) < 0) {
		conn_reply_status(c, req, -CKPT_ESKIPPED);
	} else if (session_wait(c, v, req) < 0) {
		conn_reply_status(c, req, -ENOMEM);
	}
}

int ops_may_see(struct conn *c, const char *job)
{
	struct job *j = catalog_job(c->d->cat, job);
	int uid;

	if (j)
		return session_may(c, j);
	uid = cluster_job_uid(c->d, job, (uint32_t)c->uid);
	if (uid < 0)
		return -CKPT_ENOJOB;
	return c->uid == 0 || c->uid == (uid_t)uid ? 0 : -EACCES;
}

/* LATEST over a cluster: the newest complete version that can be read
 * whole (plan.h), by its newest part's seal. */
struct latest {
	const struct ckptd *d;
	uint32_t caller;
	const char *job;
	uint32_t level;
	char best[CKPT_VERSION_MAX + 1];
	uint64_t best_ns;
};

static void latest_consider(void *arg, const char *job, const char *version,
			    uint64_t sealed_ns)
{
	struct latest *l = arg;

	const struct version *v =
		catalog_version((struct catalog *)l->d->cat, l->job, version);

	if ((!l->best[0] || sealed_ns > l->best_ns) &&
	    cluster_version_ready(l->d, l->job, version, v, l->caller,
				  l->level) &&
	    plan_version_readable(l->d, l->job, version, v, l->caller)) {
		snprintf(l->best, sizeof(l->best), "%s", version);
		l->best_ns = sealed_ns;
	}
}

void op_latest(struct conn *c, const struct proto_msg *req)
{
	struct job *j = catalog_job(c->d->cat, req->job);
	struct proto_msg r = { .type = PROTO_LATEST, .seq = req->seq };
	struct latest l = { c->d, (uint32_t)c->uid, req->job, req->level, "", 0 };
	struct version *best = NULL;
	struct list *pos, *tmp;
	int ret;

	ret = ops_may_see(c, req->job);
	if (ret < 0)
		goto out_reply;
	list_for_each_safe(pos, tmp, j ? &j->versions : &c->d->cat->jobs) {
		struct version *v = list_entry(pos, struct version, link);

		if (!j)
			break;      /* only other nodes hold the job */
		if (!cluster_nodes(c->d)) {
			if (v->state == CKPT_ST_SEALED && v->level >= req->level &&
			    (!best || v->seq > best->seq))
				best = v;
		} else if (v->state == CKPT_ST_SEALED) {
			latest_consider(&l, req->job, v->name,
					cluster_version_newest(c->d, req->job,
							       v->name, v,
							       (uint32_t)c->uid));
		}
	}
	if (cluster_nodes(c->d))
		cluster_each_remote(c->d, req->job, (uint32_t)c->uid,
				    latest_consider, &l);
	if (best)
		r.version = best->name;
	else if (l.best[0])
		r.version = l.best;
	if (!r.version) {
		ret = -CKPT_ENOVERSION;
		goto out_reply;
	}
	conn_reply(c, &r);
	return;
out_reply:
	conn_reply_status(c, req, ret);
}

int page_begin(struct conn *c, const struct proto_msg *req,
		      uint64_t total, struct page *p)
{
	memset(p, 0, sizeof(*p));
	p->r.type = req->type;
	p->r.seq = req->seq;
	p->r.size = total;
	p->off = req->off > UINT32_MAX ? UINT32_MAX : (uint32_t)req->off;
	if (!conn_reply_begin(c, &p->r, &p->e))
		return -1;
	p->count_at = p->e.buf + p->e.len;
	enc_u32(&p->e, 0);
	p->start = p->e.len;
	return 0;
}

int page_take(struct page *p)
{
	uint32_t i = p->index++;

	if (i < p->off || p->full)
		return 0;
	if (p->e.len - p->start > PROTO_LIST_BUDGET) {
		p->full = 1;
		return 0;
	}
	p->count++;
	return 1;
}

void page_end(struct conn *c, struct page *p)
{
	put_le32(p->count_at, p->count);
	conn_reply_end(c, &p->e);
}

/* Jobs and versions only other nodes hold: counted, then listed. */
struct remote_list {
	struct conn *c;
	struct page *p;           /* NULL: count only */
	uint32_t n;
};

static void remote_entry(void *arg, const char *job, const char *version,
			 uint64_t sealed_ns)
{
	struct remote_list *rl = arg;
	struct ckpt_version_info info;

	rl->n++;
	if (!rl->p || !page_take(rl->p))
		return;
	if (!version) {
		proto_enc_job_entry(&rl->p->e, job);
		return;
	}
	memset(&info, 0, sizeof(info));
	info.slow_rank = -1;
	cluster_version_view(rl->c->d, job, version, NULL,
			     (uint32_t)rl->c->uid, &info);
	proto_enc_version_entry(&rl->p->e, &info);
}

/* The uid whose jobs c sees (0: all). */
static uint32_t seen_uid(const struct conn *c)
{
	return c->uid == 0 ? 0 : (uint32_t)c->uid;
}

void op_list_jobs(struct conn *c, const struct proto_msg *req)
{
	struct remote_list rl = { c, NULL, 0 };
	struct list *pos, *tmp;
	uint32_t n = 0;
	struct page p;

	list_for_each_safe(pos, tmp, &c->d->cat->jobs)
		if (!session_may(c, list_entry(pos, struct job, link)))
			n++;
	cluster_each_remote(c->d, NULL, seen_uid(c), remote_entry, &rl);
	if (page_begin(c, req, n + rl.n, &p) < 0)
		return;
	list_for_each_safe(pos, tmp, &c->d->cat->jobs) {
		struct job *j = list_entry(pos, struct job, link);

		if (!session_may(c, j) && page_take(&p))
			proto_enc_job_entry(&p.e, j->name);
	}
	rl.p = &p;
	cluster_each_remote(c->d, NULL, seen_uid(c), remote_entry, &rl);
	page_end(c, &p);
}

/* v's entry: its own, and over the cluster its whole version's. */
static void version_view(const struct conn *c, const struct version *v,
			 struct ckpt_version_info *info)
{
	version_info(v, info);
	drain_info(c->d, v, info);
	info->nparts = 1;
	info->parts_sealed = v->state == CKPT_ST_SEALED;
	if (v->job)
		cluster_version_view(c->d, v->job->name, v->name, v,
				     (uint32_t)c->uid, info);
}

void op_list_versions(struct conn *c, const struct proto_msg *req)
{
	struct job *j = catalog_job(c->d->cat, req->job);
	struct remote_list rl = { c, NULL, 0 };
	struct ckpt_version_info info;
	struct list *pos, *tmp;
	struct page p;
	int ret;

	ret = ops_may_see(c, req->job);
	if (ret < 0) {
		conn_reply_status(c, req, ret);
		return;
	}
	cluster_each_remote(c->d, req->job, (uint32_t)c->uid, remote_entry,
			    &rl);
	if (page_begin(c, req, (j ? j->nversions : 0) + rl.n, &p) < 0)
		return;
	if (j) {
		list_for_each_safe(pos, tmp, &j->versions) {
			if (!page_take(&p))
				continue;
			version_view(c, list_entry(pos, struct version, link),
				     &info);
			proto_enc_version_entry(&p.e, &info);
		}
	}
	rl.p = &p;
	cluster_each_remote(c->d, req->job, (uint32_t)c->uid, remote_entry,
			    &rl);
	page_end(c, &p);
}

/* c's view of req's job/version: this node's part in *out, NULL when only
 * other nodes hold the version.  0, or -1 after answering why not. */
static int lookup_any(struct conn *c, const struct proto_msg *req,
		      struct version **out)
{
	struct ckpt_version_info tmp;
	int ret = ops_may_see(c, req->job);

	*out = NULL;
	if (ret == 0) {
		*out = catalog_version(c->d->cat, req->job, req->version);
		if (*out || cluster_version_view(c->d, req->job, req->version,
						 NULL, (uint32_t)c->uid,
						 &tmp) == 0)
			return 0;
		ret = -CKPT_ENOVERSION;
	}
	conn_reply_status(c, req, ret);
	return -1;
}

/* A cluster listing or lookup answered on c (cluster.h: struct
 * cluster_reply): paged (a listing) or one reply (a lookup). */
struct creply {
	struct cluster_reply r;
	struct conn *c;
	const struct proto_msg *req;
	int paged;
	struct page pg;
	struct enc e;
};

static struct creply *creply_of(struct cluster_reply *r)
{
	return (struct creply *)((char *)r - offsetof(struct creply, r));
}

static struct enc *creply_begin(struct cluster_reply *r, uint64_t total)
{
	struct creply *cr = creply_of(r);

	if (cr->paged)
		return page_begin(cr->c, cr->req, total, &cr->pg) < 0
		       ? NULL : &cr->pg.e;
	return conn_reply_begin(cr->c, cr->req, &cr->e) ? &cr->e : NULL;
}

static int creply_take(struct cluster_reply *r)
{
	struct creply *cr = creply_of(r);

	return cr->paged ? page_take(&cr->pg) : 1;
}

static void creply_end(struct cluster_reply *r)
{
	struct creply *cr = creply_of(r);

	if (cr->paged)
		page_end(cr->c, &cr->pg);
	else
		conn_reply_end(cr->c, &cr->e);
}

static struct cluster_reply *creply_init(struct creply *cr, struct conn *c,
					 const struct proto_msg *req,
					 int paged)
{
	cr->r = (struct cluster_reply){ creply_begin, creply_take,
					creply_end };
	cr->c = c;
	cr->req = req;
	cr->paged = paged;
	return &cr->r;
}

/* LIST_PARTS: every part of the version; alone, this node's. */
void op_list_parts(struct conn *c, const struct proto_msg *req)
{
	struct creply cr;
	struct ckpt_version_info info;
	struct version *v;
	struct page p;

	if (lookup_any(c, req, &v) < 0 ||
	    cluster_list_parts(c->d, (uint32_t)c->uid, req, v,
			       creply_init(&cr, c, req, 1)) == 0)
		return;
	if (page_begin(c, req, 1, &p) < 0)
		return;
	if (page_take(&p)) {
		version_view(c, v, &info);
		proto_enc_version_entry(&p.e, &info);
	}
	page_end(c, &p);
}

/* LIST_NODES: the cluster's nodes (cluster.c); alone, none. */
void op_list_nodes(struct conn *c, const struct proto_msg *req)
{
	struct creply cr;
	struct page p;

	if (cluster_list_nodes(c->d, creply_init(&cr, c, req, 1)) == 0 || page_begin(c, req, 0, &p) < 0)
		return;
	page_end(c, &p);
}

void op_list_files(struct conn *c, const struct proto_msg *req)
{
	struct creply cr;
	struct version *v;
	struct ckpt_file_info fi;
	struct page p;
	uint32_t i;

	if (lookup_any(c, req, &v) < 0 ||
	    cluster_list_files(c->d, (uint32_t)c->uid, req, v,
			       creply_init(&cr, c, req, 1)) == 0)
		return;
	if (!v || page_begin(c, req, v->nlive, &p) < 0)
		return;
	for (i = 0; i < v->nfiles; i++) {
		if (v->files[i].dead || !page_take(&p))
			continue;
		vfile_info(v, i, &fi);
		proto_enc_file_entry(&p.e, &fi);
	}
	page_end(c, &p);
}

void op_stat(struct conn *c, const struct proto_msg *req)
{
	struct ckpt_version_info info;
	struct version *v;
	struct enc e;

	if (lookup_any(c, req, &v) < 0 || !conn_reply_begin(c, req, &e))
		return;
	if (v) {
		version_view(c, v, &info);
	} else {
		memset(&info, 0, sizeof(info));
		info.slow_rank = -1;
		cluster_version_view(c->d, req->job, req->version, NULL,
				     (uint32_t)c->uid, &info);
	}
	proto_enc_version_entry(&e, &info);
	conn_reply_end(c, &e);
}

void op_stat_file(struct conn *c, const struct proto_msg *req)
{
	struct creply cr;
	struct ckpt_file_info fi;
	struct version *v;
	struct enc e;
	int i;

	if (lookup_any(c, req, &v) < 0)
		return;
	i = v ? version_name(v, req->path) : -ENOENT;
	if (i < 0 && cluster_stat_file(c->d, (uint32_t)c->uid, req,
				    creply_init(&cr, c, req, 0)) == 0)
		return;
	if (i < 0) {
		conn_reply_status(c, req, i);
		return;
	}
	if (!conn_reply_begin(c, req, &e))
		return;
	vfile_info(v, (uint32_t)i, &fi);
	proto_enc_file_entry(&e, &fi);
	conn_reply_end(c, &e);
}

/* GETXATTRS: the file's extended attributes, a blob after the fields. */
void op_getxattrs(struct conn *c, const struct proto_msg *req)
{
	struct creply cr;
	struct version *v;
	struct enc e;
	int i;

	if (lookup_any(c, req, &v) < 0)
		return;
	i = v ? version_file(v, req->path, 0) : -ENOENT;
	if (i < 0 && cluster_getxattrs(c->d, (uint32_t)c->uid, req,
				    creply_init(&cr, c, req, 0)) == 0)
		return;
	if (i < 0) {
		conn_reply_status(c, req, i);
		return;
	}
	if (!conn_reply_begin(c, req, &e))
		return;
	enc_u32(&e, v->files[i].xlen);
	enc_bytes(&e, v->files[i].xattr, v->files[i].xlen);
	conn_reply_end(c, &e);
}

/*
 * REMOVE's condition (ckpt_remove_if()): is v still the version the caller
 * saw?  The same seal, and the local and quarantined copies it saw still
 * there; a copy gained (the PFS, the peers' shards) does not matter.
 * Checked in the same loop turn that starts the removal, so two rms that
 * saw one version cannot both act.  The seal is its seq (unique on this
 * node: a version written again gets a new one) and sealed_ns, which a
 * version being sealed has only once the seal ends (ingest.c): a caller
 * that saw it sealing (sealed_ns 0) saw the same version.  And an rm
 * refused meanwhile as CKPT_EUNPUBLISHED (rm_asked) turns the next one
 * into the removal of the part from the PFS too: only a caller that saw
 * that (rm_part_pfs) may do it.  0, -EINVAL or -CKPT_ECHANGED.
 */
static int remove_expected(const struct version *v,
			   const struct proto_msg *req)
{
	const uint32_t kept = PROTO_REMOVE_COPIES;

	if (!req->id)
		return 0;
	if ((req->id & ~(PROTO_REMOVE_IF | PROTO_REMOVE_PART_PFS | kept)) ||
	    !(req->id & PROTO_REMOVE_IF))
		return -EINVAL;
	if (v->seq != req->off || (req->aux && v->sealed_ns != req->aux) ||
	    (req->id & kept & ~v->copies) ||
	    !(req->id & PROTO_REMOVE_PART_PFS) != !v->rm_asked)
		return -CKPT_ECHANGED;
	return 0;
}

/* A REMOVE on the pool (remove.h): the connection it answers, referenced
 * until then, and the request's type and sequence. */
struct rm_answer {
	struct conn *c;
	uint32_t seq;
	uint16_t type;
};

static void rm_answered(void *arg, int status)
{
	struct rm_answer *a = arg;
	struct proto_msg r;

	if (status != REMOVE_DROPPED) {
		memset(&r, 0, sizeof(r));
		r.type = a->type;
		r.seq = a->seq;
		r.status = status;
		conn_reply(a->c, &r);
	}
	conn_put(a->c);
	free(a);
}

static void rm_start(struct conn *c, const struct proto_msg *req,
		     struct version *v, enum rm_kind kind)
{
	struct rm_answer *a = malloc(sizeof(*a));
	int ret = -ENOMEM;

	if (!a)
		goto out_reply;
	*a = (struct rm_answer){ c, req->seq, req->type };
	conn_get(c);
	ret = remove_start(c->d, v, kind, rm_answered, a);
	if (ret == 0)
		return;
	conn_put(c);
	free(a);
out_reply:
	conn_reply_status(c, req, ret);
}

void op_remove(struct conn *c, const struct proto_msg *req)
{
	struct version *v = lookup(c, req);
	enum rm_kind kind = RM_LOCAL;
	int ret;

	if (!v)
		return;
	ret = remove_expected(v, req);
	if (ret < 0) {
		conn_reply_status(c, req, ret);
		return;
	}
	if (v->removing || v->state == CKPT_ST_SEALING || v->inflight ||
	    v->drain == DR_RUNNING || version_level_busy(v) ||
	    (v->state == CKPT_ST_OPEN && v->writers != v->committed)) {
		conn_reply_status(c, req, -EBUSY);
		return;
	}
	/* A drained version keeps its PFS copy: rm drops the local copy and
	 * the version stays listed, read from the PFS.  rm it again to remove
	 * it from the PFS too.  A drained part whose version is not published
	 * is refused (CKPT_EUNPUBLISHED): the second rm removes the part from
	 * the PFS and the local store.  Served from the PFS with a damaged
	 * local copy in quarantine: rm discards the quarantine first, as it
	 * drops a local copy.  A version only on the PFS is removed there, unless a newer
	 * drained version refers to its chunks (incremental). */
	if (!version_remote(v) && v->level >= CKPT_DRAINED &&
	    drain_enabled(c->d))
		kind = v->rm_asked ? RM_PART : RM_EVICT;
	else if (version_remote(v) && v->qdir)
		kind = RM_QUARANTINE;
	else if (version_remote(v) && v->pfs)
		kind = RM_PFS;
	if (kind == RM_PFS && drain_is_base(v->job, v->name)) {
		log_printf(LOG_NOTICE, "version %s/%s: not removed from the PFS: it is the incremental base of a newer drained version",
			   req->job, req->version);
		conn_reply_status(c, req, -CKPT_EBASE);
		return;
	}
	log_printf(LOG_INFO, "version %s/%s: removed by uid %u", req->job,
		   req->version, c->uid);
	if (kind != RM_LOCAL || remove_needs_disk(c->d, v)) {
		rm_start(c, req, v, kind);      /* answers when durable */
		return;
	}
	/* Nothing on disk to remove (open, nobody writing; failed). */
	v->error = -CKPT_ENOVERSION;
	/* Its waiters hear once it is removed (v->removed). */
	version_get(v);
	ret = catalog_remove(c->d->cat, v);
	ckptd_version_changed(c->d, v);
	version_put(c->d->cat, v);
	conn_reply_status(c, req, ret);
}

void op_status(struct conn *c, const struct proto_msg *req)
{
	struct ckptd *d = c->d;
	struct ckpt_status s;
	struct list *pos, *tmp;
	struct enc e;

	memset(&s, 0, sizeof(s));
	s.proto_version = PROTO_VERSION;
	s.clients = d->svc->nconns;
	list_for_each_safe(pos, tmp, &d->cat->jobs)
		s.jobs++;
	s.versions = d->cat->nversions;
	s.open_versions = d->cat->nopen;
	s.queue_depth = d->loop.inflight;
	s.staging_total = d->staging.budget;
	s.staging_used = d->staging.lent;
	s.capacity = d->segs->capacity;
	s.store_used = segs_used_bytes(d->segs);
	s.ingest_bytes = d->st.ingest_bytes;
	s.ingest_rate = d->st.ingest_rate;
	s.uptime_ms = ckptd_now_ms() - d->st.start_ms;
	s.pid = getpid();
	snprintf(s.store, sizeof(s.store), "%.*s", (int)sizeof(s.store) - 1,
		 d->conf->store);
	drain_status(d, &s);
	cluster_status(d, &s);
	if (!conn_reply_begin(c, req, &e))
		return;
	proto_enc_status(&e, &s);
	conn_reply_end(c, &e);
}

void op_drain(struct conn *c, const struct proto_msg *req)
{
	int ret = -ENOTSUP;

	if (!drain_enabled(c->d))
		goto out_reply;
	ret = -EPERM;
	if (c->uid != 0 && c->uid != getuid())
		goto out_reply;
	ret = -EINVAL;
	if (req->level != CKPT_DRAIN_PAUSE && req->level != CKPT_DRAIN_RESUME &&
	    req->level != CKPT_DRAIN_ADOPT)
		goto out_reply;
	log_printf(LOG_NOTICE, "drain: %s by uid %u",
		   req->level == CKPT_DRAIN_PAUSE ? "paused" :
		   req->level == CKPT_DRAIN_RESUME ? "resumed" :
						     "the target taken as it is",
		   c->uid);
	ret = req->level == CKPT_DRAIN_ADOPT ?
		drain_adopt(c->d) : drain_pause(c->d, req->level == CKPT_DRAIN_PAUSE);
out_reply:
	conn_reply_status(c, req, ret);
}

void op_rebuild(struct conn *c, const struct proto_msg *req)
{
	int ret = -EPERM;

	if (c->uid != 0 && c->uid != getuid())
		goto out_reply;
	log_printf(LOG_NOTICE, "rebuild asked by uid %u", c->uid);
	ret = cluster_rebuild(c->d);
out_reply:
	conn_reply_status(c, req, ret);
}

void op_drain_now(struct conn *c, const struct proto_msg *req)
{
	struct job *j = catalog_job(c->d->cat, req->job);
	struct version *v;
	int ret = -ENOTSUP;

	if (!drain_enabled(c->d))
		goto out_reply;
	ret = j ? session_may(c, j) : -CKPT_ENOJOB;
	if (ret < 0)
		goto out_reply;
	v = catalog_version(c->d->cat, req->job, req->version);
	ret = v ? drain_now(c->d, v) : -CKPT_ENOVERSION;
out_reply:
	conn_reply_status(c, req, ret);
}
