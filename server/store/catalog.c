/*
 * catalog.c - jobs, versions, their segments and their manifests.
 *
 * The in-memory index of a version is an array of records in arrival order
 * (a later record wins where two overlap) and a file table (vfiles.c).
 * Sealing writes the whole index into one manifest (built, stored and
 * removed by catman.c); recovery reads it back.  See catalog.h for the
 * rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "recover.h"
#include "rmlog.h"
#include "log.h"
#include "namehash.h"
#include "pool.h"
#include "sys.h"
#include "vstats.h"

int catalog_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n = *cap ? *cap : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* ---- jobs and versions ------------------------------------------------ */

struct job *catalog_job(struct catalog *cat, const char *name)
{
	struct hnode *n;

	for (n = htab_find(&cat->jobidx, name_hash(name)); n; n = htab_next(n)) {
		struct job *j = list_entry(n, struct job, hnode);

		if (!strcmp(j->name, name))
			return j;
	}
	return NULL;
}

static struct version *job_version(struct job *j, const char *name)
{
	struct hnode *n;

	for (n = htab_find(&j->vidx, name_hash(name)); n; n = htab_next(n)) {
		struct version *v = list_entry(n, struct version, hnode);

		if (!strcmp(v->name, name))
			return v;
	}
	return NULL;
}

struct version *catalog_version(struct catalog *cat, const char *job,
				const char *name)
{
	struct job *j = catalog_job(cat, job);

	return j ? job_version(j, name) : NULL;
}

static int job_get(struct catalog *cat, const char *name, uid_t uid,
		   struct job **out)
{
	struct job *j = catalog_job(cat, name);

	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j)
			return -ENOMEM;
		if (htab_init(&j->vidx, 0) < 0) {
			free(j);
			return -ENOMEM;
		}
		snprintf(j->name, sizeof(j->name), "%s", name);
		j->uid = uid;
		list_init(&j->versions);
		list_add_tail(&cat->jobs, &j->link);
		htab_add(&cat->jobidx, &j->hnode, name_hash(j->name));
	}
	*out = j;
	return 0;
}

/* Drop j, which has no version left. */
static void job_drop(struct catalog *cat, struct job *j)
{
	list_del(&j->link);
	htab_del(&cat->jobidx, &j->hnode);
	htab_free(&j->vidx);
	free(j);
}

/*
 * Put v in its job's list: sealed versions stay ordered by seq (open ones,
 * seq 0, go last), v before the first sealed one with a greater seq.  From
 * the tail back, so that a version sealed now, or versions found in seq
 * order (recovery sorts them), cost a step or two.  While the catalog
 * loads (catalog_load_begin()), at the tail: catalog_load_end() sorts.
 */
static void job_place(const struct catalog *cat, struct job *j,
		      struct version *v)
{
	struct list *pos, *before = &j->versions;

	if (v->seq && !cat->loading) {
		for (pos = j->versions.prev; pos != &j->versions;
		     pos = pos->prev) {
			const struct version *o =
				list_entry(pos, struct version, link);

			if (o->seq && o->seq <= v->seq)
				break;
			if (o->seq)
				before = pos;
		}
	}
	list_add_tail(before, &v->link);
}

/* Add v to job j: its list and its index. */
static void job_insert(struct catalog *cat, struct job *j, struct version *v)
{
	job_place(cat, j, v);
	htab_add(&j->vidx, &v->hnode, name_hash(v->name));
	j->nversions++;
	v->job = j;
	snprintf(v->jobname, sizeof(v->jobname), "%s", j->name);
	v->uid = (uint32_t)j->uid;
}

static struct version *version_alloc(const char *name, uid_t uid)
{
	struct version *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	snprintf(v->name, sizeof(v->name), "%s", name);
	list_init(&v->waiters);
	list_init(&v->deferred);
	list_init(&v->levelq);
	list_init(&v->link);
	v->refs = 1;            /* the catalog's */
	(void)uid;
	return v;
}

int catalog_create(struct catalog *cat, const char *job, const char *name,
		   uid_t uid, struct version **out)
{
	struct version *v;
	struct job *j;
	int ret;

	ret = job_get(cat, job, uid, &j);
	if (ret < 0)
		return ret;
	v = version_alloc(name, uid);
	if (!v) {
		ret = -ENOMEM;
		goto out_drop_job;
	}
	v->state = CKPT_ST_OPEN;
	v->open_id = cat->next_open_id++;
	job_insert(cat, j, v);
	cat->nversions++;
	cat->nopen++;
	*out = v;
	return 0;

out_drop_job:
	if (!j->nversions)
		job_drop(cat, j);
	return ret;
}

static void version_free_segs(struct catalog *cat, struct version *v)
{
	uint32_t i;

	for (i = 0; i < v->nsegs; i++)
		segs_free(cat->segs, v->segs[i]);
	v->nsegs = 0;
}

void version_drop_index(struct version *v)
{
	uint32_t i;

	v->rapplied = 0;
	if (!v->rindex)
		return;
	for (i = 0; i < v->nrindex; i++)
		extmap_release(&v->rindex[i]);
	free(v->rindex);
	v->rindex = NULL;
	v->nrindex = 0;
}

static void version_destroy(struct version *v)
{
	uint32_t i;

	version_drop_index(v);
	for (i = 0; i < v->nfiles; i++) {
		free(v->files[i].path);
		free(v->files[i].xattr);
	}
	free(v->files);
	free(v->fhash);
	free(v->recs);
	free(v->segs);
	free(v->holders);
	if (v->pfs) {
		pfsman_release(v->pfs);
		free(v->pfs);
	}
	free(v->qdir);
	vstats_free(v);
	free(v);
}

void version_put(struct catalog *cat, struct version *v)
{
	/* Evicted while a read held it: the segments go back once only the
	 * catalog's reference is left. */
	if (--v->refs == 1 && version_remote(v) && !v->removed)
		version_free_segs(cat, v);
	if (v->refs)
		return;
	version_free_segs(cat, v);
	version_destroy(v);
}

/* Take v out of its job (and drop the job when it empties). */
static void version_unlink(struct catalog *cat, struct version *v)
{
	struct job *j = v->job;

	if (v->removed)
		return;
	v->removed = 1;
	cat->removals++;
	if (v->state == CKPT_ST_OPEN || v->state == CKPT_ST_SEALING)
		cat->nopen--;
	list_del(&v->link);
	htab_del(&j->vidx, &v->hnode);
	cat->nversions--;
	if (--j->nversions == 0)
		job_drop(cat, j);
	v->job = NULL;
}

/* ---- segments of a version --------------------------------------------- */

int version_reserve(struct catalog *cat, struct version *v, uint32_t len,
		    uint32_t *seg, uint64_t *seg_off, int *new_seg)
{
	uint64_t rlen = man_padded(len);
	uint32_t id;
	int ret;

	*new_seg = 0;
	if (!v->nsegs ||
	    v->tail + rlen > cat->segs->v[v->segs[v->nsegs - 1]].size) {
		ret = catalog_grow((void **)&v->segs, &v->csegs, v->nsegs + 1,
			   sizeof(*v->segs));
		if (ret < 0)
			return ret;
		ret = segs_alloc(cat->segs, &id);
		if (ret < 0)
			return ret;
		if (SEGHDR_SIZE + rlen > cat->segs->v[id].size) {
			segs_free(cat->segs, id);
			return -EFBIG;
		}
		v->segs[v->nsegs++] = id;
		v->tail = SEGHDR_SIZE;
		*new_seg = 1;
	}
	*seg = v->segs[v->nsegs - 1];
	*seg_off = v->tail;
	v->tail += rlen;
	return 0;
}

/* ---- removing a manifest on purpose -------------------------------------- */

static int manifest_drop(struct catalog *cat, struct version *v)
{
	return catalog_manifest_drop(cat, v->open_id, v->seq);
}

/* A manifest drop on a worker (retention, eviction).  The task holds a
 * reference on the version, so that its segments are not recycled before
 * the manifest naming them is gone. */
struct drop_task {
	struct pool_task t;
	struct catalog *cat;
	struct version *v;
	uint64_t open_id, seq;
};

static int drop_run(struct pool_task *t)
{
	struct drop_task *dt = (struct drop_task *)t;

	return catalog_manifest_drop(dt->cat, dt->open_id, dt->seq);
}

static void drop_done(struct pool_task *t)
{
	struct drop_task *dt = (struct drop_task *)t;

	if (t->result < 0) {
		/* The manifest may still name the segments: keep them (and
		 * the version's memory) until the next start. */
		log_printf(LOG_WARNING, "store: removing the manifest of seq %llu: %s; its segments are kept until restart",
			   (unsigned long long)dt->seq, strerror(-t->result));
		dt->v->nsegs = 0;
	}
	version_put(dt->cat, dt->v);
	free(dt);
}

/* Shutdown: the manifest may still be there; forget the segments without
 * clearing their headers (the next start sorts them out). */
static void drop_drop(struct pool_task *t)
{
	struct drop_task *dt = (struct drop_task *)t;

	dt->v->nsegs = 0;
	version_put(dt->cat, dt->v);
	free(dt);
}

/* manifest_drop() on the pool when there is one; v keeps its segments until
 * it is done.  0 or -errno (nothing was started). */
static int manifest_drop_bg(struct catalog *cat, struct version *v)
{
	struct drop_task *dt;

	if (!cat->pool)
		return manifest_drop(cat, v);
	dt = calloc(1, sizeof(*dt));
	if (!dt)
		return -ENOMEM;
	pool_task_init(&dt->t, drop_run, drop_done, drop_drop);
	dt->cat = cat;
	dt->v = v;
	dt->open_id = v->open_id;
	dt->seq = v->seq;
	v->refs++;
	pool_submit(cat->pool, &dt->t, 0);
	return 0;
}

/* A quarantine directory discarded on a worker: the version has left the
 * catalog already; a crash before it is gone lists it DAMAGED again at the
 * next start (recover.h), which is where it was. */
struct discard_task {
	struct pool_task t;
	struct catalog *cat;        /* its qdir only, fixed at open */
	char *name;                 /* owned */
};

static int discard_run(struct pool_task *t)
{
	struct discard_task *dt = (struct discard_task *)t;

	recover_discard(dt->cat, dt->name);
	return 0;
}

static void discard_free(struct pool_task *t)
{
	struct discard_task *dt = (struct discard_task *)t;

	free(dt->name);
	free(dt);
}

/* Shutdown: discard it here, or the next start lists it again. */
static void discard_drop(struct pool_task *t)
{
	struct discard_task *dt = (struct discard_task *)t;

	recover_discard(dt->cat, dt->name);
	discard_free(t);
}

/* recover_discard(v->qdir) on the pool when there is one (and memory for
 * the task), else here. */
static void qdir_discard(struct catalog *cat, const struct version *v)
{
	struct discard_task *dt = NULL;

	if (cat->pool)
		dt = calloc(1, sizeof(*dt));
	if (dt)
		dt->name = strdup(v->qdir);
	if (!dt || !dt->name) {
		free(dt);
		recover_discard(cat, v->qdir);
		return;
	}
	pool_task_init(&dt->t, discard_run, discard_free, discard_drop);
	dt->cat = cat;
	pool_submit(cat->pool, &dt->t, 0);
}

void catalog_fail(struct catalog *cat, struct version *v, int err)
{
	if (v->state == CKPT_ST_FAILED)
		return;
	if (v->state == CKPT_ST_OPEN || v->state == CKPT_ST_SEALING)
		cat->nopen--;
	v->state = CKPT_ST_FAILED;
	v->error = err;
	catalog_settle(cat, v);
}

void catalog_settle(struct catalog *cat, struct version *v)
{
	if (v->state == CKPT_ST_FAILED && !v->inflight)
		version_free_segs(cat, v);
}

/* How a removal or an eviction drops the manifest: here (blocking), on the
 * pool, or not at all since the caller's worker did (catalog_*_dropped). */
enum drop_mode { DROP_HERE, DROP_POOL, DROP_DONE };

static int version_remove(struct catalog *cat, struct version *v,
			  enum drop_mode mode)
{
	int ret;

	if (version_level_busy(v) || v->removing)
		return -EBUSY;

	if ((v->copies & CKPT_COPY_LOCAL) && mode != DROP_DONE) {
		ret = mode == DROP_POOL ? manifest_drop_bg(cat, v)
					: manifest_drop(cat, v);
		if (ret < 0)
			return ret;
	}
	if (v->qdir && mode != DROP_DONE)
		qdir_discard(cat, v);
	version_unlink(cat, v);
	version_put(cat, v);
	return 0;
}

void catalog_discard_quarantine(struct catalog *cat, struct version *v)
{
	if (!v->qdir)
		return;
	recover_discard(cat, v->qdir);
	free(v->qdir);
	v->qdir = NULL;
	v->reason[0] = 0;
	version_set_copies(v, v->copies & ~CKPT_COPY_QUARANTINE);
}

int catalog_remove(struct catalog *cat, struct version *v)
{
	return version_remove(cat, v, DROP_HERE);
}

int catalog_remove_bg(struct catalog *cat, struct version *v)
{
	return version_remove(cat, v, DROP_POOL);
}

int catalog_remove_dropped(struct catalog *cat, struct version *v)
{
	return version_remove(cat, v, DROP_DONE);
}

/* ---- versions recovery found ------------------------------------------ */

/* Claim segment seg for v (once). */
static int version_claim(struct catalog *cat, struct version *v, uint32_t seg)
{
	uint32_t k;
	int ret;

	for (k = 0; k < v->nsegs; k++)
		if (v->segs[k] == seg)
			return 0;
	ret = segs_claim(cat->segs, seg);
	if (ret < 0)
		return ret;
	ret = catalog_grow((void **)&v->segs, &v->csegs, v->nsegs + 1,
		   sizeof(*v->segs));
	if (ret < 0)
		return ret;
	v->segs[v->nsegs++] = seg;
	return 0;
}

/* Add a sealed or damaged version found at start-up to its job. */
static void catalog_insert_found(struct catalog *cat, struct job *j,
				 struct version *v)
{
	job_insert(cat, j, v);
	cat->nversions++;
	if (v->seq >= cat->next_seq)
		cat->next_seq = v->seq + 1;
}

/* Undo version_new_in(): free v (if any) and drop j if it has no version. */
static void version_abandon(struct catalog *cat, struct job *j,
			    struct version *v)
{
	if (v) {
		version_free_segs(cat, v);
		version_destroy(v);
	}
	if (!j->nversions)
		job_drop(cat, j);
}

/* A new version named name in job (made for uid if missing): *jp, *vp.
 * -EEXIST if the job has it already, -ENOMEM. */
static int version_new_in(struct catalog *cat, const char *job,
			  const char *name, uid_t uid, struct job **jp,
			  struct version **vp)
{
	int ret;

	if (catalog_version(cat, job, name))
		return -EEXIST;
	ret = job_get(cat, job, uid, jp);
	if (ret < 0)
		return ret;
	*vp = version_alloc(name, uid);
	if (*vp)
		return 0;
	version_abandon(cat, *jp, NULL);
	return -ENOMEM;
}

int catalog_load(struct catalog *cat, const struct manifest *m)
{
	struct version *v;
	struct job *j;
	uint32_t i;
	int ret;

	ret = version_new_in(cat, m->job, m->version, m->uid, &j, &v);
	if (ret < 0)
		return ret;
	v->state = CKPT_ST_SEALED;
	version_set_copies(v, CKPT_COPY_LOCAL |
			   (m->level >= CKPT_DRAINED ? CKPT_COPY_PFS : 0) |
			   (m->level == CKPT_PROTECTED ? CKPT_COPY_PEERS : 0));
	v->nparts = m->nparts;
	v->seq = m->seq;
	v->sealed_ns = m->sealed_ns;
	/* Carried so that a later rewrite (a level change) still names the
	 * segment headers: a manifest with another open_id is stale. */
	v->open_id = m->open_id;
	v->pfs_retired = m->level < CKPT_DRAINED && (m->flags & MAN_F_RETIRED);
	if (m->holders) {
		ret = -ENOMEM;
		v->holders = malloc(sizeof(*v->holders));
		if (!v->holders)
			goto out_destroy;
		*v->holders = *m->holders;
	}
	for (i = 0; i < m->nfiles; i++) {
		ret = m->files[i].link ?
		      version_link(v, m->files[i].link - 1, m->files[i].path) :
		      version_file(v, m->files[i].path, 1);
		if (ret < 0)
			goto out_destroy;
	}
	for (i = 0; i < m->nrecs; i++) {
		const struct man_rec *r = &m->recs[i];

		if (r->seg != MAN_SEG_ZERO) {
			ret = version_claim(cat, v, r->seg);
			if (ret < 0)
				goto out_destroy;
			v->stored += man_padded(r->len);
		}
		ret = version_add_rec(v, r);
		if (ret < 0)
			goto out_destroy;
	}
	for (i = 0; i < m->nfiles; i++) { /* truncation-proof: trust the seal */
		v->files[i].size = m->files[i].size;
		v->files[i].attr = m->files[i].attr;
		v->files[i].xattr = m->files[i].xattr;   /* taken over */
		v->files[i].xlen = m->files[i].xlen;
		m->files[i].xattr = NULL;
		m->files[i].xlen = 0;
	}
	v->ordinal = ++j->nsealed;
	catalog_insert_found(cat, j, v);
	return 0;

out_destroy:
	version_abandon(cat, j, v);
	return ret;
}

int catalog_add_damaged(struct catalog *cat, const struct manifest *head,
			const char *qdir, const char *reason)
{
	struct version *v;
	struct job *j;
	int ret;

	ret = version_new_in(cat, head->job, head->version, head->uid, &j, &v);
	if (ret < 0)
		return ret;
	if (qdir && !(v->qdir = strdup(qdir))) {
		version_abandon(cat, j, v);
		return -ENOMEM;
	}
	version_set_copies(v, qdir ? CKPT_COPY_QUARANTINE : 0);
	v->state = CKPT_ST_DAMAGED;
	v->error = -CKPT_ECORRUPT;
	v->seq = head->seq;
	v->sealed_ns = head->sealed_ns;
	v->open_id = head->open_id;
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
	catalog_insert_found(cat, j, v);
	return 0;
}

/* Give v the files of PFS manifest m and m itself: a remote version. */
static int version_set_remote(struct catalog *cat, struct version *v,
			      struct pfsman *m)
{
	uint32_t i;
	int ret;

	for (i = 0; i < m->nfiles; i++) {
		if (m->files[i].link) {
			ret = version_link(v, m->files[i].link - 1,
					   m->files[i].path);
			if (ret < 0)
				return ret;
			continue;
		}
		ret = version_file(v, m->files[i].path, 1);
		if (ret < 0)
			return ret;
		v->files[ret].size = m->files[i].size;
		v->files[ret].stored = pfsman_file_data(m, i);
		v->files[ret].attr = m->files[i].attr;
		if (m->files[i].xlen) {
			v->files[ret].xattr = malloc(m->files[i].xlen);
			if (!v->files[ret].xattr)
				return -ENOMEM;
			memcpy(v->files[ret].xattr, m->files[i].xattr,
			       m->files[i].xlen);
			v->files[ret].xlen = m->files[i].xlen;
		}
	}
	v->pfs = malloc(sizeof(*v->pfs));
	if (!v->pfs)
		return -ENOMEM;
	*v->pfs = *m;          /* ownership moves */
	memset(m, 0, sizeof(*m));
	/* Its chunk table is for reads, which load it (pfscache.h); without
	 * memory to strip it, it stays whole. */
	pfsman_strip(v->pfs);
	v->state = CKPT_ST_SEALED;
	version_set_copies(v, CKPT_COPY_PFS |
			   (v->copies & CKPT_COPY_QUARANTINE));
	v->seq = v->pfs->seq;
	v->sealed_ns = v->pfs->sealed_ns;
	/* Versions committed here from now on are newer than any found on
	 * the PFS (ckpt_latest orders by seq). */
	if (v->seq >= cat->next_seq)
		cat->next_seq = v->seq + 1;
	snprintf(v->base, sizeof(v->base), "%s", v->pfs->base);
	return 0;
}

int catalog_adopt_remote(struct catalog *cat, struct version *v,
			 struct pfsman *m)
{
	struct job *j = v->job;
	int ret;

	if (v->files || v->nrecs || v->nsegs)
		return -EBUSY;       /* only versions recovery listed bare */
	ret = version_set_remote(cat, v, m);
	if (ret < 0)
		return ret;
	v->error = 0;
	/* Move to its place by seq (its index entry stays). */
	list_del(&v->link);
	job_place(cat, j, v);
	v->ordinal = ++j->nsealed;
	return 0;
}

int catalog_add_remote(struct catalog *cat, struct pfsman *m,
		       struct version **out)
{
	struct version *v;
	struct job *j;
	int ret;

	ret = version_new_in(cat, m->job, m->version, m->uid, &j, &v);
	if (ret < 0)
		return ret;
	ret = version_set_remote(cat, v, m);
	if (ret < 0) {
		version_abandon(cat, j, v);
		return ret;
	}
	job_insert(cat, j, v);
	v->ordinal = ++j->nsealed;
	cat->nversions++;
	*out = v;
	return 0;
}

static int version_evict(struct catalog *cat, struct version *v,
			 struct pfsman *m, enum drop_mode mode)
{
	int ret = 0;

	if (version_level_busy(v) || v->removing)
		return -EBUSY;

	v->pfs = malloc(sizeof(*v->pfs));
	if (!v->pfs)
		return -ENOMEM;
	if (mode == DROP_POOL)
		ret = manifest_drop_bg(cat, v);
	else if (mode == DROP_HERE)
		ret = manifest_drop(cat, v);
	if (ret < 0) {
		free(v->pfs);
		v->pfs = NULL;
		return ret;
	}
	*v->pfs = *m;
	memset(m, 0, sizeof(*m));
	pfsman_strip(v->pfs);     /* as version_set_remote() */
	version_set_copies(v, (v->copies & ~CKPT_COPY_LOCAL) | CKPT_COPY_PFS);
	/* Reads go to the PFS from now on; the segments go back once no
	 * local read holds the version. */
	if (v->refs == 1)
		version_free_segs(cat, v);
	version_drop_index(v);
	v->nrecs = 0;
	return 0;
}

int catalog_evict(struct catalog *cat, struct version *v, struct pfsman *m)
{
	return version_evict(cat, v, m, DROP_HERE);
}

int catalog_evict_bg(struct catalog *cat, struct version *v, struct pfsman *m)
{
	return version_evict(cat, v, m, DROP_POOL);
}

int catalog_evict_dropped(struct catalog *cat, struct version *v,
			  struct pfsman *m)
{
	return version_evict(cat, v, m, DROP_DONE);
}

void version_info(const struct version *v, struct ckpt_version_info *out)
{
	uint64_t bytes;

	memset(out, 0, sizeof(*out));
	if (v->job) {
		snprintf(out->job, sizeof(out->job), "%s", v->job->name);
		out->uid = v->job->uid;
	}
	snprintf(out->version, sizeof(out->version), "%s", v->name);
	bytes = version_bytes(v);
	out->state = v->state;
	out->level = v->level;
	out->writers = v->writers;
	out->committed = v->committed;
	out->nfiles = v->nlive;
	out->bytes = bytes;
	out->stored = v->stored;
	out->seq = v->seq;
	out->sealed_ns = v->sealed_ns;
	out->error = v->error;
	out->copies = v->copies;
	out->rm_part_pfs = !!v->rm_asked;
	snprintf(out->reason, sizeof(out->reason), "%s", v->reason);
	/* What the local store holds of it, not what it once held. */
	if (version_remote(v))
		out->stored = 0;
	vstats_info(v, out);
}

void catalog_load_begin(struct catalog *cat)
{
	cat->loading = 1;
}

struct placed {
	uint64_t key;             /* seq; open versions (0) last */
	uint32_t i;               /* position in the list: a stable sort */
	struct version *v;
};

static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Order j's list by seq, open versions (seq 0) last, ties as they were. */
static void job_sort(struct catalog *cat, struct job *j)
{
	struct list *pos, *tmp;
	struct placed *p;
	uint32_t n = 0, i;

	p = malloc((size_t)j->nversions * sizeof(*p));
	if (!p) {
		/* Place them one at a time (a walk each). */
		struct list all;

		list_init(&all);
		list_for_each_safe(pos, tmp, &j->versions) {
			list_del(pos);
			list_add_tail(&all, pos);
		}
		list_for_each_safe(pos, tmp, &all) {
			list_del(pos);
			job_place(cat, j, list_entry(pos, struct version, link));
		}
		return;
	}
	list_for_each(pos, &j->versions) {
		struct version *v = list_entry(pos, struct version, link);

		p[n] = (struct placed){ v->seq ? v->seq : UINT64_MAX, n, v };
		n++;
	}
	qsort(p, n, sizeof(*p), cmp_placed);
	list_init(&j->versions);
	for (i = 0; i < n; i++)
		list_add_tail(&j->versions, &p[i].v->link);
	free(p);
}

void catalog_load_end(struct catalog *cat)
{
	struct list *pos;

	cat->loading = 0;
	list_for_each(pos, &cat->jobs)
		job_sort(cat, list_entry(pos, struct job, link));
}

int catalog_open(struct catalog *cat, const char *store, struct segs *segs)
{
	int n;

	memset(cat, 0, sizeof(*cat));
	list_init(&cat->jobs);
	if (htab_init(&cat->jobidx, 0) < 0)
		return -ENOMEM;
	cat->segs = segs;
	cat->next_seq = 1;
	cat->next_open_id = (uint64_t)time(NULL) << 20;
	n = snprintf(cat->mandir, sizeof(cat->mandir), "%s/man", store);
	if (n < 0 || (size_t)n >= sizeof(cat->mandir))
		return -ENAMETOOLONG;
	n = snprintf(cat->qdir, sizeof(cat->qdir), "%s/quarantine", store);
	if (n < 0 || (size_t)n >= sizeof(cat->qdir))
		return -ENAMETOOLONG;
	n = snprintf(cat->rmlog, sizeof(cat->rmlog), "%s/removed", store);
	if (n < 0 || (size_t)n >= sizeof(cat->rmlog))
		return -ENAMETOOLONG;
	if (mkdir(cat->mandir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir(cat->qdir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return recover_store(cat);
}

void catalog_close(struct catalog *cat)
{
	struct list *jp, *jt, *vp, *vt;

	list_for_each_safe(jp, jt, &cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each_safe(vp, vt, &j->versions) {
			struct version *v = list_entry(vp, struct version, link);

			/* An evicted version whose segments a read still held
			 * when it left: clear their headers now, or the next
			 * start would take them for an uncommitted version. */
			if (version_remote(v))
				version_free_segs(cat, v);
			version_destroy(v);
		}
		htab_free(&j->vidx);
		free(j);
	}
	list_init(&cat->jobs);
	htab_free(&cat->jobidx);
}
