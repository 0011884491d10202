/*
 * ingest.c - the write path and the seal.
 *
 * WRITE: a client has copied a piece (at most [ckptd] chunk bytes) into its
 * staging lease.  ckptd checks it, reserves a 4 KiB-aligned extent at the
 * tail of the version's current segment, records it in the index in arrival
 * order, and submits one io_uring write straight from staging to the segment
 * (O_DIRECT where possible).  When the write completes, the piece's CRC32C is
 * taken from staging (the ingest checksum) and the WACK that frees the
 * client's staging is sent; the client never waits for it unless its staging
 * is full.
 *
 * A write that needs a new segment when none is free waits, never blocking
 * the loop on fallocate: segs_alloc says -EAGAIN while the pool makes one,
 * and the write is parked in segs.waiting with its record already in the
 * index (so that the arrival order, which decides overlaps, holds) and a
 * segment still to be chosen.  Later writes of the same version park behind
 * it.  When a segment is ready, seg_ready() places the parked writes in
 * order; when none can be made, they fail as a write that found the store
 * full always has (-ENOSPC to the writer, the version FAILED).  A parked
 * write counts as in flight: the seal, reads and rm wait for it.
 *
 * SEAL: when every writer has committed, the version is STAGED.  Once its
 * writes have completed, its symbolic links' targets are read back and
 * checked (linkcheck.h), every segment it used is fdatasync'd (io_uring), and
 * then its manifest is written durably by a worker thread (version_reach,
 * level.h): from then on it is LOCAL and immutable.  Any failed step fails the version, clearly,
 * and gives its segments back; other versions are untouched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crc32c.h"
#include "drain.h"
#include "ingest.h"
#include "lease.h"
#include "linkcheck.h"
#include "level.h"
#include "log.h"
#include "mstats.h"
#include "reader.h"
#include "session.h"
#include "sys.h"

struct wop {
	struct loop_op op;
	struct list link;         /* in segs.waiting while parked */
	struct ckptd *d;
	struct conn *c;           /* NULL for a segment header */
	struct version *v;
	uint32_t id;
	uint32_t len;             /* bytes submitted */
	uint32_t rec;             /* index of the record in v->recs */
	const uint8_t *src;       /* the bytes in staging */
	void *hdr;                /* segment header buffer, owned */
	/* While an injected delay holds it (issue_late()): the write. */
	const void *late_buf;
	uint64_t late_off;
	uint32_t late_seg;
};

static void seal_step(struct ckptd *d, struct version *v);

/* The segment of a parked write's record, until it is placed (never a
 * segment id: those are below SEGS_MAX_ID). */
#define SEG_PARKED (MAN_SEG_ZERO - 1)

static void wack(struct conn *c, uint32_t id, int status)
{
	struct proto_msg r;

	memset(&r, 0, sizeof(r));
	r.type = PROTO_WACK;
	r.id = id;
	r.status = status;
	conn_reply(c, &r);
}

static void fail(struct ckptd *d, struct version *v, int err)
{
	if (v->state == CKPT_ST_FAILED)
		return;
	log_printf(LOG_ERR, "version %s/%s: failed: %s",
		   v->job ? v->job->name : "?", v->name, ckpt_strerror(err));
	catalog_fail(d->cat, v, err);
	mstats_error(d, err == -CKPT_EABORTED ? MERR_ABORTED : MERR_WRITE);
	ckptd_version_changed(d, v);
}

void ingest_abandon(struct ckptd *d, struct version *v, int err)
{
	fail(d, v, err);
}

static void on_write(struct loop_op *op, int res)
{
	struct wop *w = (struct wop *)op;
	struct version *v = w->v;
	struct ckptd *d = w->d;
	int err = 0;

	if (res != (int)w->len) {
		err = res < 0 ? res : -EIO;
		fail(d, v, err);
	} else if (w->c) {
		/* The ingest checksum, taken from staging once the disk has
		 * the bytes and before the client may reuse them: later than at
		 * submission, so that it does not compete with the writer's
		 * own copy for memory bandwidth. */
		v->recs[w->rec].crc = crc32c(w->src, v->recs[w->rec].len);
		v->stored += w->len;
		d->st.ingest_bytes += w->len;
	}
	if (w->c) {
		w->c->nwrites--;
		wack(w->c, w->id, err);
		conn_put(w->c);
	}
	v->inflight--;
	catalog_settle(d->cat, v);
	if (!v->inflight)
		reader_kick(d, v);
	if (v->state == CKPT_ST_SEALING && !v->inflight && !v->pending)
		seal_step(d, v);
	version_put(d->cat, v);
	free(w->hdr);
	free(w);
}

/* w's write is in flight from now (submitted or parked). */
static void track(struct ckptd *d, struct wop *w)
{
	w->op.fn = on_write;
	w->d = d;
	version_get(w->v);
	w->v->inflight++;
}

/* The registered buffer slot (loop.h) of the lease that holds w's len
 * bytes at buf, or -1 (a segment header, an unregistered lease). */
static int fixed_slot(const struct wop *w, const void *buf, uint32_t len)
{
	const struct lease *l = w->c ? w->c->lease : NULL;
	const uint8_t *p = buf;

	if (!l || l->buf < 0 || p < l->map || len > l->size ||
	    (size_t)(p - l->map) > l->size - len)
		return -1;
	return l->buf;
}

static void issue_now(struct ckptd *d, struct wop *w, uint32_t seg,
		      const void *buf, uint32_t len, uint64_t off);

/* A delayed write's time has come. */
static void issue_late(void *arg)
{
	struct wop *w = arg;

	issue_now(w->d, w, w->late_seg, w->late_buf, w->len, w->late_off);
}

/* Submit w (tracked) as a write of len bytes at buf to segment seg at off:
 * at once, or failed or late as the fault seam says (CKPT_FAULT's pwrite
 * rules: a delay holds the write on a timer, never the loop). */
static void issue(struct ckptd *d, struct wop *w, uint32_t seg,
		  const void *buf, uint32_t len, uint64_t off)
{
	unsigned ms;
	int ret;

	w->len = len;
	ret = sys_inject_delay(SYS_PWRITE, &ms);
	if (ret < 0) {
		loop_fake(&d->loop, &w->op, ret);
		return;
	}
	if (ms) {
		w->late_seg = seg;
		w->late_buf = buf;
		w->late_off = off;
		if (loop_after(&d->loop, ms, issue_late, w) == 0)
			return;
	}
	issue_now(d, w, seg, buf, len, off);
}

static void issue_now(struct ckptd *d, struct wop *w, uint32_t seg,
		      const void *buf, uint32_t len, uint64_t off)
{
	struct io_uring_sqe *sqe;
	int slot;

	sqe = loop_sqe(&d->loop, &w->op);
	slot = fixed_slot(w, buf, len);
	if (slot >= 0)
		io_uring_prep_write_fixed(sqe, segs_fd(d->segs, seg), buf, len,
					  off, slot);
	else
		io_uring_prep_write(sqe, segs_fd(d->segs, seg), buf, len, off);
}

static void submit_write(struct ckptd *d, struct wop *w, uint32_t seg,
			 const void *buf, uint32_t len, uint64_t off)
{
	track(d, w);
	issue(d, w, seg, buf, len, off);
}

static int write_seghdr(struct ckptd *d, struct version *v, uint32_t seg)
{
	struct seghdr h;
	struct wop *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	ret = posix_memalign(&w->hdr, 4096, SEGHDR_SIZE);
	if (ret) {
		free(w);
		return -ret;
	}
	memset(&h, 0, sizeof(h));
	h.seg = seg;
	h.open_id = v->open_id;
	h.uid = v->job->uid;
	snprintf(h.job, sizeof(h.job), "%s", v->job->name);
	snprintf(h.version, sizeof(h.version), "%s", v->name);
	seghdr_encode(&h, w->hdr);
	w->v = v;
	submit_write(d, w, seg, w->hdr, SEGHDR_SIZE, 0);
	return 0;
}

/* Check a WRITE against c's lease and writer table; 0 or -errno. */
static int write_check(struct conn *c, const struct proto_msg *req,
		       struct version **out)
{
	const struct conf *conf = c->d->conf;
	uint64_t rlen = man_padded(req->len);
	struct version *v;

	if (!lease_of(c))
		return -CKPT_EPROTO;
	if (req->handle >= c->nw || !c->w[req->handle].v)
		return -EBADF;
	v = c->w[req->handle].v;
	if (v->state != CKPT_ST_OPEN)
		return v->error ? v->error : -CKPT_EABORTED;
	/* From here on a refused write fails the version: a commit must
	 * never seal it without the bytes this write carried. */
	*out = v;
	if (req->len == 0 || req->len > conf->chunk || req->ring_off % 4096 ||
	    req->ring_off > c->lease->size ||
	    rlen > c->lease->size - req->ring_off ||
	    req->off > UINT64_MAX - req->len)
		return -EINVAL;
	if (req->off + req->len > CKPT_FILE_MAX)
		return -EFBIG;
	*out = v;
	return 0;
}

/* Does v have writes parked, waiting for a segment?  Then a new write of v
 * parks behind them, whatever room its segment has. */
static int parked(const struct ckptd *d, const struct version *v)
{
	const struct list *pos;

	for (pos = d->segs->waiting.next; pos != &d->segs->waiting;
	     pos = pos->next)
		if (list_entry(pos, struct wop, link)->v == v)
			return 1;
	return 0;
}

static void log_full(const struct ckptd *d, const struct version *v, int err)
{
	if (err == -ENOSPC || err == -EFBIG)
		log_printf(LOG_WARNING, "version %s/%s: store full (capacity %llu bytes)",
			   v->job ? v->job->name : "?", v->name,
			   (unsigned long long)d->segs->capacity);
}

/* Give parked write w its place in a segment (its record says where); the
 * caller submits it.  0, -EAGAIN (still none free), or -errno (w's version
 * fails). */
static int place(struct ckptd *d, struct wop *w)
{
	struct version *v = w->v;
	uint32_t len = v->recs[w->rec].len, seg;
	uint64_t off;
	int new_seg, ret;

	if (v->state == CKPT_ST_FAILED)
		return v->error ? v->error : -CKPT_EABORTED;
	ret = version_reserve(d->cat, v, len, &seg, &off, &new_seg);
	if (ret < 0)
		return ret;
	if (new_seg) {
		ret = write_seghdr(d, v, seg);
		if (ret < 0)
			return ret;
	}
	v->recs[w->rec].seg = seg;
	v->recs[w->rec].seg_off = off;
	return 0;
}

/* segs->ready: place the parked writes in order while segments last; with
 * err (none could be made), the first that finds none fails with it. */
static void seg_ready(void *arg, int err)
{
	struct ckptd *d = arg;
	struct list *pos, *tmp;
	int ret;

	list_for_each_safe(pos, tmp, &d->segs->waiting) {
		struct wop *w = list_entry(pos, struct wop, link);
		const struct man_rec *r = &w->v->recs[w->rec];
		uint32_t rlen = (uint32_t)man_padded(r->len);

		ret = err == -ECANCELED ? err : place(d, w);
		if (ret == -EAGAIN && err) {
			ret = err;
			err = 0;
		}
		if (ret == -EAGAIN)
			return;
		/* Off the list before w can complete (and be freed). */
		list_del(&w->link);
		if (ret == 0) {
			issue(d, w, r->seg, w->src, rlen, r->seg_off);
			continue;
		}
		log_full(d, w->v, ret);
		w->len = rlen;
		on_write(&w->op, ret);   /* fails v, answers the WACK */
	}
}

/* Park w (its record added) until a segment is ready. */
static void park(struct ckptd *d, struct wop *w)
{
	track(d, w);
	d->segs->ready = seg_ready;
	d->segs->ready_arg = d;
	if (list_empty(&d->segs->waiting))   /* once while any wait */
		log_printf(LOG_INFO, "store: no free segment; writes wait for one from the pool");
	list_add_tail(&d->segs->waiting, &w->link);
}

void op_write(struct conn *c, const struct proto_msg *req)
{
	struct ckptd *d = c->d;
	struct version *v = NULL;
	const uint8_t *src;
	struct man_rec rec;
	struct wop *w;
	int new_seg = 0, ret;

	ret = write_check(c, req, &v);
	if (ret < 0 && v)
		goto out_fail;
	if (ret < 0)
		goto out_wack;
	w = calloc(1, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto out_fail;
	}
	ret = version_file(v, req->path, 1);
	if (ret < 0)
		goto out_free;
	rec.file = ret;
	rec.seg = SEG_PARKED;
	rec.seg_off = 0;
	ret = parked(d, v) ? -EAGAIN :
	      version_reserve(d->cat, v, req->len, &rec.seg, &rec.seg_off,
			      &new_seg);
	if (ret < 0 && ret != -EAGAIN)
		goto out_free;
	if (new_seg) {
		ret = write_seghdr(d, v, rec.seg);
		if (ret < 0)
			goto out_free;
	}
	src = c->lease->map + req->ring_off;
	rec.file_off = req->off;
	rec.len = req->len;
	rec.crc = 0;            /* taken when the write completes */
	ret = version_add_rec(v, &rec);
	if (ret < 0)
		goto out_free;
	w->c = c;
	w->v = v;
	w->id = req->id;
	w->rec = v->nrecs - 1;
	w->src = src;
	conn_get(c);
	c->nwrites++;
	if (rec.seg == SEG_PARKED)
		park(d, w);
	else
		submit_write(d, w, rec.seg, src, (uint32_t)man_padded(req->len),
			     rec.seg_off);
	return;

out_free:
	free(w);
out_fail:
	log_full(d, v, ret);
	fail(d, v, ret);
out_wack:
	wack(c, req->id, ret);
}

/* ---- seal --------------------------------------------------------------- */

struct fop {
	struct loop_op op;
	struct ckptd *d;
	struct version *v;
};

/* The manifest is durable (v is LOCAL, its waiters told), or not: v fails. */
static void sealed(struct ckptd *d, struct version *v, int err)
{
	if (err < 0) {
		fail(d, v, err);
		return;
	}
	v->state = CKPT_ST_SEALED;
	d->cat->nopen--;
	log_printf(LOG_INFO, "version %s/%s: local (%u files, %llu bytes stored)",
		   v->job->name, v->name, v->nfiles,
		   (unsigned long long)v->stored);
	v->ordinal = ++v->job->nsealed;
	if (drain_enabled(d))
		drain_sealed(d, v);
	else
		catalog_retain(d->cat, v->job, d->conf->keep);
}

/* Segments synced: write the manifest (on a worker) at LOCAL.  The version
 * stays SEALING (and open, for shutdown) until the write is durable; then it
 * is SEALED and LOCAL. */
static void seal_finish(struct ckptd *d, struct version *v)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	v->sealed_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	version_reach(d, v, CKPT_COPY_LOCAL, 0, LEVEL_DURABLE, sealed);
}

static void on_fsync(struct loop_op *op, int res)
{
	struct fop *f = (struct fop *)op;
	struct version *v = f->v;
	struct ckptd *d = f->d;

	if (res < 0 && !v->error)
		v->error = res;
	v->inflight--;
	if (!v->inflight)
		reader_kick(d, v);   /* reads that arrived while sealing */
	if (--v->pending == 0 && v->state == CKPT_ST_SEALING) {
		if (v->error) {
			v->state = CKPT_ST_SEALING;
			fail(d, v, v->error);
		} else {
			seal_finish(d, v);
		}
	}
	catalog_settle(d->cat, v);
	version_put(d->cat, v);
	free(f);
}

/* Every write of v has completed and its links are whole: fdatasync its
 * segments. */
static void seal_sync(struct ckptd *d, struct version *v)
{
	struct io_uring_sqe *sqe;
	struct fop *f;
	uint32_t i;
	int ret;

	if (!v->nsegs) {
		seal_finish(d, v);
		return;
	}
	for (i = 0; i < v->nsegs; i++) {
		f = calloc(1, sizeof(*f));
		if (!f) {
			if (!v->error)
				v->error = -ENOMEM;
			break;
		}
		f->op.fn = on_fsync;
		f->d = d;
		f->v = v;
		version_get(v);
		v->inflight++;
		v->pending++;
		ret = sys_inject(SYS_FSYNC);
		if (ret < 0) {
			loop_fake(&d->loop, &f->op, ret);
			continue;
		}
		sqe = loop_sqe(&d->loop, &f->op);
		io_uring_prep_fsync(sqe, segs_fd(d->segs, v->segs[i]),
				    IORING_FSYNC_DATASYNC);
	}
	if (!v->pending)
		fail(d, v, v->error);
}

static void links_checked(struct ckptd *d, struct version *v, int err,
			  uint32_t bad)
{
	if (err < 0) {
		log_printf(LOG_ERR, "version %s/%s: not sealed: symbolic link %s: %s",
			   v->job->name, v->name, v->files[bad].path,
			   err == -EINVAL ? "a NUL or a hole in its target" :
			   ckpt_strerror(err));
		fail(d, v, err);
		return;
	}
	seal_sync(d, v);
}

/* Every write of v has completed: its links read back (linkcheck.h), then
 * its segments synced. */
static void seal_step(struct ckptd *d, struct version *v)
{
	int ret = link_check(d, v, links_checked);

	if (ret < 0)
		fail(d, v, ret);
	else if (ret == 0)
		seal_sync(d, v);
}

int ingest_seal(struct ckptd *d, struct version *v)
{
	uint32_t bad;
	int ret = version_check(v, &bad);

	if (ret < 0) {
		log_printf(LOG_ERR, "version %s/%s: not committed: %s: %s",
			   v->job->name, v->name, v->files[bad].path,
			   ckpt_strerror(ret));
		fail(d, v, ret);
		return ret;
	}
	v->state = CKPT_ST_SEALING;
	v->seq = d->cat->next_seq++;
	mstats_sealing(d, v);
	log_printf(LOG_DEBUG, "version %s/%s: staged, sealing as #%llu",
		   v->job->name, v->name, (unsigned long long)v->seq);
	version_staged(d, v);
	if (!v->inflight)
		seal_step(d, v);
	return 0;
}
