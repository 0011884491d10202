/*
 * partsview.c - the cluster's versions as this node sees them: a version
 * made of this node's part and the parts other nodes announced (parts.c),
 * its summary and level, the listings of its parts and files, and which
 * node holds a path (cluster.h).
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
#include "extmap.h"
#include "manifest.h"
#include "namehash.h"
#include "parts_i.h"

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
	struct job *j = catalog_job((struct catalog *)d->cat, job);
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

/* ---- views ----------------------------------------------------------------- */

/* A version over the cluster.  A part's level counts as DRAINED only once
 * some node knows the version published (its manifest on the PFS, so that
 * it can be restored from there): until then each part counts at the
 * level its other copies give (held: drain_wait_level()'s rule). */
struct vsum {
	uint32_t nparts, sealed, failed, known;
	uint32_t level;           /* the lowest sealed part's level */
	uint32_t held;            /* the same, DRAINED not counted */
	int published;            /* a part's node knows it published */
	uint32_t nfiles;
	uint64_t bytes, sealed_ns;
};

static void sum_part(struct vsum *s, uint32_t state, uint32_t level,
		     uint32_t held, uint32_t nparts, uint32_t nfiles,
		     uint64_t bytes, uint64_t sealed_ns)
{
	s->known++;
	if (nparts > s->nparts)
		s->nparts = nparts;
	if (state == CKPT_ST_SEALED) {
		s->sealed++;
		if (level < s->level)
			s->level = level;
		if (held < s->held)
			s->held = held;
	} else if (state == CKPT_ST_FAILED || state == CKPT_ST_INCOMPLETE ||
		   state == CKPT_ST_DAMAGED) {
		s->failed++;
	}
	s->nfiles += nfiles;
	s->bytes += bytes;
	if (sealed_ns > s->sealed_ns)
		s->sealed_ns = sealed_ns;
}

/* p's level but DRAINED, as drain_wait_level() has it for a part of this
 * node's: what its other copies give (copies_level()). */
static uint32_t rpart_held(const struct rpart *p)
{
	if (p->level < CKPT_DRAINED || p->nparts <= 1)
		return p->level;
	return copies_level(p->copies & ~CKPT_COPY_PFS);
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
	s->level = s->held = CKPT_DRAINED;
	if (!cl || !cl->parts)
		return -ENOENT;
	uid = owner_of(d, job, v, caller);
	/* The whole version, published, listed from the PFS on a node with
	 * no part of it (no_part) says all: complete, and on the PFS. */
	if (v && v->no_part)
		return -ENOENT;
	if (v) {
		struct ckpt_version_info vi;

		version_info(v, &vi);
		sum_part(s, v->state, v->level, drain_wait_level(d, v),
			 v->nparts, vi.nfiles, vi.bytes, v->sealed_ns);
		s->published |= drain_published(d, v);
	}
	list_for_each(pos, &cl->parts->list) {
		const struct rpart *p = list_entry(pos, struct rpart, link);

		if (strcmp(p->job, job) || strcmp(p->version, version) ||
		    p->uid != uid)
			continue;
		sum_part(s, p->state, p->level, rpart_held(p), p->nparts,
			 p->nfiles, p->bytes, p->sealed_ns);
		s->published |= !!(p->flags & PEER_PART_PUBLISHED);
		others++;
	}
	if (!others && (!v || v->nparts <= 1))
		return -ENOENT;
	if (!s->nparts)
		s->nparts = 1;
	if (!s->published)
		s->level = s->held;
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
		return v && v->state == CKPT_ST_SEALED &&
		       drain_wait_level(d, v) >= level;
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
			: catalog_job((struct catalog *)d->cat, p->job) != NULL)
			continue;
		if (job && catalog_version((struct catalog *)d->cat, job,
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

/* The node v, listed here, is the part of: this one, unless v is a whole
 * version found on the PFS of which this node holds no part (no_part): the
 * node that drained it, as its manifest says (format 6), or none known
 * ("": a version in parts, merged). */
static const char *part_node(const struct cluster *cl, const struct version *v)
{
	if (v->no_part)
		return v->pfs ? v->pfs->writer : "";
	return cl_name(cl, cl->self);
}

int cluster_list_parts(struct ckptd *d, uint32_t caller,
		       const struct proto_msg *req, const struct version *v,
		       struct cluster_reply *out)
{
	struct cluster *cl = cl_of(d);
	struct ckpt_version_info info;
	struct list *pos;
	struct rpart *p;
	uint32_t n = v ? 1 : 0, uid;
	struct enc *e;

	if (!cl || !cl->parts)
		return -ENOENT;
	uid = owner_of(d, req->job, v, caller);
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid)
		n++;
	/* The whole version listed on a node with no part of it is none of
	 * its parts (the others are), unless none of those is known. */
	if (v && v->no_part && n > 1) {
		v = NULL;
		n--;
	}
	if (!n)
		return -ENOENT;
	if (!(e = out->begin(out, n)))
		return 0;
	if (v && out->take(out)) {
		version_info(v, &info);
		drain_info(d, v, &info);
		info.nparts = v->nparts;
		info.parts_sealed = v->state == CKPT_ST_SEALED;
		snprintf(info.node, sizeof(info.node), "%s", part_node(cl, v));
		holders_info(cl, cl->self, v->holders, v->copies, &info);
		proto_enc_version_entry(e, &info);
	}
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid) {
		if (!out->take(out))
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
		holders_info(cl, p->owner, p->man.holders, p->copies, &info);
		proto_enc_version_entry(e, &info);
	}
	out->end(out);
	return 0;
}

/* Does the part own path, and is it the one the namespace shows?  Its
 * file index, or -1. */
static int rpart_file(const struct rpart *p, const char *path)
{
	uint32_t k, i;

	if (!p->hcap)
		return -1;
	k = name_hash(path) & (p->hcap - 1);
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

/*
 * Build p's read maps (parts_i.h: xmap, xdata) once: its records grouped
 * by entry in write order (manifest order), each entry's laid into its map,
 * and the bytes of data each map holds within the entry's size.  0,
 * -ENODATA (the manifest has no records: see below), or -ENOMEM with
 * nothing kept (the next ask tries again).
 */
static int rpart_maps(struct rpart *p)
{
	const struct manifest *m = &p->man;
	uint32_t nf = m->nfiles, s, i, f, e, *idx = NULL;
	int ret = -ENOMEM;

	if (p->xmap)
		return 0;
	/* No records: an evicted copy's manifest (its records went with it,
	 * as degraded.c knows), which says nothing of where the data is. */
	if (!m->nrecs)
		return -ENODATA;
	p->xmap = calloc(nf ? nf : 1, sizeof(*p->xmap));
	p->xdata = calloc(nf ? nf : 1, sizeof(*p->xdata));
	idx = malloc(sizeof(*idx) * m->nrecs);
	if (!p->xmap || !p->xdata || !idx ||
	    (ret = extmap_by_file(m->recs, 0, m->nrecs, idx)) < 0)
		goto out_drop;
	for (s = 0; s < m->nrecs; s = i) {
		f = m->recs[idx[s]].file;     /* < nf: manifest_decode() */
		for (i = s; i < m->nrecs && m->recs[idx[i]].file == f; i++)
			;
		ret = extmap_build(m->recs, idx + s, i - s, &p->xmap[f]);
		if (ret < 0)
			goto out_drop;
		extmap_trim(&p->xmap[f]);     /* kept as long as the part */
		for (e = 0; e < p->xmap[f].n; e++) {
			const struct ext *x = &p->xmap[f].v[e];

			if (m->recs[x->rec].seg == MAN_SEG_ZERO ||
			    x->off >= m->files[f].size)
				continue;
			p->xdata[f] += x->len < m->files[f].size - x->off
				       ? x->len : m->files[f].size - x->off;
		}
	}
	free(idx);
	return 0;
out_drop:
	free(idx);
	rpart_maps_release(p);
	return ret;
}

/* The listing entry of file i of p.  Its ino is unique across the parts
 * of a version: the owner's number above the file's index (this node's
 * own files have none, vfile_info()). */
static void file_entry(struct ckpt_file_info *fi, struct rpart *p,
		       uint32_t i)
{
	uint32_t d = MAN_DATA(&p->man, i);

	memset(fi, 0, sizeof(*fi));
	fi->name = p->man.files[i].path;   /* as vfile_info() */
	fi->size = p->man.files[d].size;
	fi->attr = p->man.files[d].attr;
	fi->ino = ((uint64_t)(p->owner + 1) << 32) | (d + 1);
	fi->nlink = p->man.files[d].nlink;
	/* without the maps (no memory, no records), all of it is data */
	fi->data = rpart_maps(p) == 0 ? p->xdata[d] : fi->size;
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

int cluster_list_files(struct ckptd *d, uint32_t caller,
		       const struct proto_msg *req, const struct version *v,
		       struct cluster_reply *out)
{
	struct cluster *cl = cl_of(d);
	struct ckpt_file_info fi;
	struct list *pos;
	struct rpart *p;
	uint32_t n = v ? v->nlive : 0, i, uid;
	struct enc *e;
	int any = 0;

	if (!cl || !cl->parts)
		return -ENOENT;
	uid = owner_of(d, req->job, v, caller);
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid) {
		any = 1;
		for (i = 0; i < p->man.nfiles; i++)
			n += shown(cl, p, i, v);
	}
	if (!any)
		return -ENOENT;
	if (!(e = out->begin(out, n)))
		return 0;
	for (i = 0; v && i < v->nfiles; i++) {
		if (v->files[i].dead || !out->take(out))
			continue;
		vfile_info(v, i, &fi);
		proto_enc_file_entry(e, &fi);
	}
	for_each_rpart(cl->parts, pos, p, req->job, req->version, uid) {
		for (i = 0; i < p->man.nfiles; i++) {
			if (!shown(cl, p, i, v) || !out->take(out))
				continue;
			file_entry(&fi, p, i);
			proto_enc_file_entry(e, &fi);
		}
	}
	out->end(out);
	return 0;
}

/* The part holding the file req names (job, version, path) in another
 * node's part, and the name's index in it (*i), or NULL. */
static struct rpart *req_file(const struct ckptd *d, uint32_t caller,
			      const struct proto_msg *req, int *i)
{
	struct cluster *cl = cl_of(d);

	if (!cl || !cl->parts)
		return NULL;
	return path_owner(cl, req->job, req->version,
			  owner_of(d, req->job, NULL, caller), req->path, i);
}

int cluster_stat_file(struct ckptd *d, uint32_t caller,
		      const struct proto_msg *req, struct cluster_reply *out)
{
	struct ckpt_file_info fi;
	struct rpart *p;
	struct enc *e;
	int i;

	p = req_file(d, caller, req, &i);
	if (!p)
		return -ENOENT;
	if (!(e = out->begin(out, 1)))
		return 0;
	file_entry(&fi, p, (uint32_t)i);
	proto_enc_file_entry(e, &fi);
	out->end(out);
	return 0;
}

int cluster_getxattrs(struct ckptd *d, uint32_t caller,
		      const struct proto_msg *req, struct cluster_reply *out)
{
	const struct man_file *f;
	const struct rpart *p;
	struct enc *e;
	int i;

	p = req_file(d, caller, req, &i);
	if (!p)
		return -ENOENT;
	f = &p->man.files[MAN_DATA(&p->man, i)];
	if (!(e = out->begin(out, 1)))
		return 0;
	enc_u32(e, f->xlen);
	enc_bytes(e, f->xattr, f->xlen);
	out->end(out);
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
	out->nparts = p->nparts;
	out->seq = p->seq;
	out->man = &p->man;
	return 0;
}

int cluster_seek_data(const struct ckptd *d, const char *job,
		      const char *version, uint32_t caller, const char *path,
		      uint64_t off, uint64_t end, uint64_t *data,
		      uint64_t *len)
{
	struct cluster *cl = cl_of(d);
	struct rpart *p;
	uint32_t f;
	int fi, ret;

	if (!cl || !cl->parts)
		return -ENOENT;
	p = path_owner(cl, job, version, owner_of(d, job, NULL, caller), path,
		       &fi);
	if (!p)
		return -ENOENT;
	ret = rpart_maps(p);
	if (ret == -ENODATA)
		return -ENOENT;          /* the caller answers "all data" */
	if (ret < 0)
		return ret;
	f = MAN_DATA(&p->man, fi);        /* a hard link reads its file */
	if (end > p->man.files[f].size)
		end = p->man.files[f].size;
	return extmap_data(&p->xmap[f], p->man.recs, off, end, data, len);
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
				      loc.sealed_ns, loc.nparts, loc.seq,
				      loc.open_id };
	return 0;
}

int cluster_each_sealed_part(const struct ckptd *d, const char *job,
			     const char *version, const struct version *v,
			     uint32_t caller,
			     int (*fn)(void *arg, uint32_t owner,
				       uint64_t open_id, uint32_t copies),
			     void *arg)
{
	const struct cluster *cl = cl_of(d);
	struct list *pos;
	struct rpart *p;
	int ret;

	if (!cl || !cl->parts)
		return 0;
	for_each_rpart(cl->parts, pos, p, job, version,
		       owner_of(d, job, v, caller))
		if (p->state == CKPT_ST_SEALED &&
		    (ret = fn(arg, p->owner, p->open_id, p->copies)) != 0)
			return ret;
	return 0;
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
