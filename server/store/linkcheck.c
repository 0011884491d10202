/*
 * linkcheck.c - a sealing version's symbolic links read back before it
 * seals (see linkcheck.h).
 *
 * On the loop, the records that hold bytes of a link's target are copied
 * out, grouped by link in write order (a counting sort: O(records)); on a
 * worker each target is rebuilt in a 4 KiB buffer, noting which of its
 * bytes some record gave, and checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "catalog.h"
#include "ctx.h"
#include "crc32c.h"
#include "linkcheck.h"
#include "manifest.h"
#include "pool.h"

struct lc_rec {
	int fd;                   /* -1: a zero record */
	uint64_t seg_off;
	uint32_t at;              /* offset in the target */
	uint32_t n;               /* bytes of it this record gives */
	uint32_t len, crc;        /* the whole record's */
};

struct lc {
	struct pool_task pt;
	struct ckptd *d;
	struct version *v;        /* referenced */
	link_check_fn done;
	uint32_t nlinks;
	uint32_t *file;           /* link k: its entry in v->files */
	uint32_t *size;           /* its target's length */
	uint32_t *start;          /* its records: recs[start[k] .. start[k+1]) */
	struct lc_rec *recs;
	uint32_t bad;             /* out: the link found wrong */
};

static struct lc *lc_of(struct pool_task *pt)
{
	return (struct lc *)((char *)pt - offsetof(struct lc, pt));
}

static void lc_free(struct lc *l)
{
	free(l->file);
	free(l->size);
	free(l->start);
	free(l->recs);
	free(l);
}

/* Rebuild link k's target into tgt; 0 or -errno. */
static int rebuild(const struct lc *l, uint32_t k, uint8_t *io, uint8_t *tgt,
		   uint8_t *have)
{
	const struct lc_rec *r;
	uint32_t i;
	ssize_t got;

	memset(have, 0, l->size[k]);
	for (i = l->start[k]; i < l->start[k + 1]; i++) {
		r = &l->recs[i];
		if (r->fd < 0) {
			memset(tgt + r->at, 0, r->n);
		} else {
			got = pread(r->fd, io, man_padded(r->n), (off_t)r->seg_off);
			if (got < 0)    /* EINVAL is the target's */
				return errno == EINVAL ? -EIO : -errno;
			if ((uint64_t)got < r->n)
				return -EIO;
			if (r->n == r->len && crc32c(io, r->len) != r->crc)
				return -CKPT_ECORRUPT;
			memcpy(tgt + r->at, io, r->n);
		}
		memset(have + r->at, 1, r->n);
	}
	return 0;
}

/* On a worker: only what the task carries. */
static int lc_run(struct pool_task *pt)
{
	struct lc *l = lc_of(pt);
	uint8_t *io, tgt[CKPT_PATH_MAX2], have[CKPT_PATH_MAX2];
	uint32_t k;
	int ret = 0;

	if (posix_memalign((void **)&io, 4096, 4096))   /* O_DIRECT segments */
		return -ENOMEM;
	for (k = 0; k < l->nlinks && !ret; k++) {
		ret = rebuild(l, k, io, tgt, have);
		if (!ret && (memchr(have, 0, l->size[k]) ||
			     memchr(tgt, 0, l->size[k])))
			ret = -EINVAL;
		if (ret)
			l->bad = l->file[k];
	}
	free(io);
	return ret;
}

static void lc_done(struct pool_task *pt)
{
	struct lc *l = lc_of(pt);
	struct version *v = l->v;

	v->pending--;
	if (v->state == CKPT_ST_SEALING)
		l->done(l->d, v, pt->result, l->bad);
	version_put(l->d->cat, v);
	lc_free(l);
}

/* Shutting down: the version is still sealing, and is not sealed. */
static void lc_drop(struct pool_task *pt)
{
	struct lc *l = lc_of(pt);

	l->v->pending--;
	version_put(l->d->cat, l->v);
	lc_free(l);
}

/* A link's target: a live holder of data (not a hard link's entry; a
 * holder unlinked while other names remain takes one of them and stays
 * live, version_unlink_file()), typed IFLNK.  version_check() bounded its
 * size. */
static int is_link(const struct version *v, uint32_t i)
{
	const struct vfile *f = &v->files[i];

	return !f->link && !f->dead &&
	       attr_is_type(&f->attr, CKPT_ATTR_IFLNK) &&
	       f->size <= CKPT_PATH_MAX2;
}

/* Copy out v's links and the parts of their records within their targets. */
static int snapshot(struct lc *l, const struct ckptd *d,
		    const struct version *v, uint32_t *slot)
{
	const struct man_rec *r;
	uint64_t end;
	uint32_t i, k, nrecs = 0;

	for (i = 0; i < v->nfiles; i++)
		if (is_link(v, i))
			slot[i] = ++l->nlinks;
	if (!l->nlinks)
		return 0;
	l->file = calloc(l->nlinks, sizeof(*l->file));
	l->size = calloc(l->nlinks, sizeof(*l->size));
	l->start = calloc(l->nlinks + 1, sizeof(*l->start));
	if (!l->file || !l->size || !l->start)
		return -ENOMEM;
	for (i = 0; i < v->nfiles; i++) {
		if (!slot[i])
			continue;
		l->file[slot[i] - 1] = i;
		l->size[slot[i] - 1] = (uint32_t)v->files[i].size;
	}
	/* Count each link's records, then place them, in write order. */
	for (i = 0; i < v->nrecs; i++) {
		r = &v->recs[i];
		if (slot[r->file] && r->file_off < v->files[r->file].size) {
			l->start[slot[r->file]]++;
			nrecs++;
		}
	}
	for (k = 1; k <= l->nlinks; k++)
		l->start[k] += l->start[k - 1];
	l->recs = calloc(nrecs ? nrecs : 1, sizeof(*l->recs));
	if (!l->recs)
		return -ENOMEM;
	for (i = 0; i < v->nrecs; i++) {
		r = &v->recs[i];
		if (!slot[r->file] || r->file_off >= v->files[r->file].size)
			continue;
		k = slot[r->file] - 1;
		end = r->file_off + r->len;
		if (end > v->files[r->file].size)
			end = v->files[r->file].size;
		/* start[k] is where link k's next record goes, until the
		 * shift below makes it its first again. */
		l->recs[l->start[k]++] = (struct lc_rec){
			.fd = r->seg == MAN_SEG_ZERO ? -1 :
				segs_fd(d->segs, r->seg),
			.seg_off = r->seg_off, .at = (uint32_t)r->file_off,
			.n = (uint32_t)(end - r->file_off),
			.len = r->len, .crc = r->crc };
	}
	memmove(l->start + 1, l->start, l->nlinks * sizeof(*l->start));
	l->start[0] = 0;
	return 0;
}

int link_check(struct ckptd *d, struct version *v, link_check_fn done)
{
	uint32_t *slot;
	struct lc *l;
	int ret;

	slot = calloc(v->nfiles ? v->nfiles : 1, sizeof(*slot));
	l = calloc(1, sizeof(*l));
	ret = -ENOMEM;
	if (!slot || !l)
		goto out;
	ret = snapshot(l, d, v, slot);
	if (ret < 0 || !l->nlinks)
		goto out;
	pool_task_init(&l->pt, lc_run, lc_done, lc_drop);
	l->d = d;
	l->v = v;
	l->done = done;
	version_get(v);
	v->pending++;
	pool_submit(d->pool, &l->pt, 1);
	free(slot);
	return 1;
out:
	if (l)
		lc_free(l);
	free(slot);
	return ret;
}
