/*
 * protect.c - this node's parts reach PROTECTED: each sealed local part is
 * erasure-coded and its shards sent to the peers this node chooses for it,
 * its holders, named in the part's holder record (manifest.h).
 *
 * A part's stream is its manifest's data records, in manifest order, end
 * to end (zero records hold no bytes).  It is cut into stripes of k chunks
 * of PROTECT_CHUNK bytes (the last stripe padded with zeros); chunk 0 of
 * each stripe is left in the local copy, chunks 1..k-1 and the m parity
 * chunks go to the peers holding shards 1..k+m-1.  So each node sends
 * (k+m-1)/k bytes per byte it protects, and needs nobody else's part.
 *
 * One part is protected at a time, oldest seal first (struct pjob).  Its
 * stripes are read (O_DIRECT, as they were written), checked against their
 * records' CRCs and encoded on the worker pool, up to PROTECT_ENCODERS
 * stripe tasks at once (so that one's disk reads overlap another's encode;
 * one under [cluster] bandwidth, whose cap sleeps there), and sent in
 * stripe order; up to
 * PROTECT_WINDOW stripes may be encoding or wait for their holders'
 * replies.  When every chunk has been
 * acknowledged, each holder is told to seal its shard (SHARD_SEAL, with the
 * part's manifest); when every holder has replied that its shard is
 * durable, the part gains CKPT_COPY_PEERS through version_reach(), which
 * writes the local manifest at PROTECTED.
 *
 * Choosing holders (place_choose()): place.h's placement first; a node that
 * is down past a grace (heartbeat_timeout, so that a restart is waited
 * for), that refused a shard for space within PROTECT_FULL_MS, or that
 * failed this part's last attempt is replaced by the next eligible node
 * (its group first, the failure domains kept spread).  So a part reaches
 * PROTECTED whenever k+m distinct nodes are up.  The record goes to every
 * holder with SHARD_SEAL (in the manifest) and into the local manifest at
 * PROTECTED; a change of the node list never moves an existing part.
 *
 * A link that goes down, or a holder that refuses, fails the attempt: it
 * starts again from the first stripe, with that holder replaced, after
 * PROTECT_RETRY_MIN_MS; a failure no holder is to blame for backs off
 * (doubling to PROTECT_RETRY_MAX_MS).  Holders overwrite what they had.  A
 * holder that stops answering without closing its link stalls the part
 * (and the parts behind it) until the heartbeat takes its link down:
 * `ckptctl status` names it (cluster.c's lag report).
 *
 * Re-protection: a PROTECTED part (not on the PFS) whose holder has been
 * down longer than [cluster] reprotect_after loses PROTECTED and is
 * protected again around that holder (protect_tick()); the shards of the
 * holders kept are only sealed again with the new record, not resent.
 *
 * The code: this file has the queue, the attempts and the seals;
 * pchoose.c chooses an attempt's holders, pstripe.c runs its stripes;
 * protect_i.h is what the three share.
 *
 * Threads: the loop thread, and the stripe task's run() on a worker, which
 * touches only its task and the job's read-only fields (recs, fds).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "level.h"
#include "protect_i.h"
#include "sys.h"

/* ---- jobs --------------------------------------------------------------- */

static void job_reset(struct pjob *j)
{
	uint32_t i;

	pj_scratch_free(j);
	free(j->man);
	j->man = NULL;
	free(j->recs);
	j->recs = NULL;
	if (j->fds) {
		for (i = 0; i < j->nfds; i++)
			if (j->fds[i] >= 0)
				close(j->fds[i]);
		free(j->fds);
		j->fds = NULL;
	}
	j->nfds = 0;
}

static void job_free(struct pjob *j)
{
	job_reset(j);
	list_del(&j->link);
	version_put(pj_d(j->q)->cat, j->v);
	free(j);
}

/* Is v a part to protect: sealed, local, on neither the peers nor the
 * PFS? */
static int wanted(const struct version *v)
{
	return !v->removed && !v->removing && v->state == CKPT_ST_SEALED &&
	       (v->copies & CKPT_COPY_LOCAL) &&
	       !(v->copies & (CKPT_COPY_PEERS | CKPT_COPY_PFS));
}

/* Is the job's part still to protect?  A re-protection's part keeps
 * CKPT_COPY_PEERS meanwhile: k of its shards are still readable, it is
 * only below full redundancy. */
int pj_wanted(const struct pjob *j)
{
	const struct version *v = j->v;

	if (j->reprotect)
		return !v->removed && !v->removing &&
		       v->state == CKPT_ST_SEALED &&
		       (v->copies & CKPT_COPY_LOCAL) &&
		       !(v->copies & CKPT_COPY_PFS);
	return wanted(v);
}

/* Remember that node failed this part: its next attempt places around it
 * (while another node can take the shard).  Two refusals are the holder
 * tidying up after an earlier attempt, not a fault of its own, and keep
 * it: -EAGAIN (that attempt's shard is still being dropped there) and
 * -ESTALE (it dropped this attempt's shard: the link bounced, or no chunk
 * came for HOLD_OPEN_IDLE_MS).  The retry sends the shard whole again. */
void pj_blame(struct pjob *j, uint32_t node, int err)
{
	struct cluster *cl = j->q->cl;
	uint32_t i;

	if (node == HOLDER_NONE || node >= cl->place.n)
		return;
	if (j->blame == HOLDER_NONE)
		j->blame = node;
	if (err == -EAGAIN || err == -ESTALE)
		return;
	if (err == -ENOSPC || err == -EDQUOT) {
		cl->peers[node].refused_until_ms = ckptd_now_ms() + PROTECT_FULL_MS;
		cl->peers[node].refused_err = err;
	}
	for (i = 0; i < j->navoid; i++)
		if (j->avoid[i] == node)
			return;
	if (j->navoid < EC_MAX_FRAGS)
		j->avoid[j->navoid++] = node;
}

/* After an attempt that succeeded: the shards it did not send that must
 * go now, a holder it skipped (down) being up again or one found without
 * its shard while it ran (protect_lost()): sent by a re-protection at
 * once, the part PROTECTED meanwhile. */
static uint32_t job_owed(const struct pjob *j)
{
	const struct cluster *cl = j->q->cl;
	uint32_t s, w = cl->place.k + cl->place.m - 1, owed = j->lost_late;

	for (s = 1; s <= w; s++)
		if ((j->skip & (1u << s)) && cl->peers[j->hid[s - 1]].st == P_UP)
			owed |= 1u << s;
	return owed;
}

/* The attempt is over (err 0 or why not): retry, or drop the job. */
static void job_end(struct pjob *j, int err)
{
	struct protect_q *q = j->q;
	struct version *v = j->v;
	uint64_t wait;
	uint32_t owed;

	if (err == 0 && (owed = job_owed(j)) && !v->removed && !v->removing &&
	    !(v->copies & CKPT_COPY_PFS)) {
		j->lost = owed;
		j->lost_late = 0;
		j->reprotect = 1;
		j->retry_ms = 0;
		job_reset(j);
		j->st = PJ_WAIT;
		return;
	}
	if (err == 0 || !pj_wanted(j)) {
		job_free(j);
		return;
	}
	if (err == -EFBIG || err == -CKPT_ECORRUPT) {
		/* No retry mends these: a manifest too large for a frame, a
		 * local record that fails its CRC. */
		log_printf(LOG_ERR, "protect: %s/%s: %s; it stays LOCAL",
			   v->jobname, v->name, ckpt_strerror(err));
		q->failures++;
		job_free(j);
		return;
	}
	q->failures++;
	if (j->blame != HOLDER_NONE) {
		/* A holder failed it: the next attempt goes around that
		 * holder, soon. */
		wait = PROTECT_RETRY_MIN_MS;
		log_printf(LOG_WARNING, "protect: %s/%s: holder %s: %s; placing its shard elsewhere, again in %llu s",
			   v->jobname, v->name, cl_name(q->cl, j->blame),
			   ckpt_strerror(err), (unsigned long long)wait / 1000);
	} else {
		j->tries++;
		wait = j->tries >= 7 ? PROTECT_RETRY_MAX_MS
				     : (uint64_t)PROTECT_RETRY_MIN_MS << (j->tries - 1);
		log_printf(LOG_WARNING, "protect: %s/%s: %s; again in %llu s",
			   v->jobname, v->name, ckpt_strerror(err),
			   (unsigned long long)wait / 1000);
	}
	/* A re-protection whose kept shards were not there after all goes
	 * whole next time. */
	if (err == -ENODATA || err == -ENOENT)
		j->resend = 1;
	j->retry_ms = ckptd_now_ms() + wait;
	job_reset(j);
	j->st = PJ_WAIT;
}

/* Fail the attempt; it ends once nothing of it is in flight. */
void pj_fail(struct pjob *j, int err)
{
	if (!j->err)
		j->err = err;
	if (!j->encoding && !j->waiting && !j->seals)
		job_end(j, j->err);
}

/* Start an attempt: the manifest, the stream's records. */
static int job_start(struct pjob *j)
{
	struct cluster *cl = j->q->cl;
	struct version *v = j->v;
	uint64_t stripe = (uint64_t)cl->place.k * PROTECT_CHUNK, off = 0;
	struct manifest m;
	void *buf;
	size_t len;
	uint32_t i, maxseg = 0;
	int ret;

	ret = pj_choose_holders(j);
	if (ret < 0)
		return ret;
	j->lost_late = 0;       /* in lost, which this attempt honours */
	ret = catalog_manifest_encode_as(v, CKPT_LOCAL, &j->rec, &buf, &len);
	if (ret < 0)
		return ret;
	if (len > PEER_MAX_MAN) {
		free(buf);
		return -EFBIG;
	}
	ret = manifest_decode(buf, len, &m);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	j->man = buf;
	j->manlen = len;
	j->recs = calloc(m.nrecs ? m.nrecs : 1, sizeof(*j->recs));
	if (!j->recs) {
		manifest_release(&m);
		return -ENOMEM;
	}
	j->nrecs = 0;
	for (i = 0; i < m.nrecs; i++) {
		const struct man_rec *r = &m.recs[i];

		if (r->seg == MAN_SEG_ZERO || !r->len)
			continue;
		j->recs[j->nrecs++] = (struct srec){ r->seg, r->len, r->crc,
						     r->seg_off, off };
		off += r->len;
		if (r->seg > maxseg)
			maxseg = r->seg;
	}
	manifest_release(&m);
	j->nfds = maxseg + 1;
	j->stream_len = off;
	j->nstripes = (off + stripe - 1) / stripe;
	snprintf(j->segdir, sizeof(j->segdir), "%s", pj_d(j->q)->segs->dir);
	j->next = j->acked = 0;
	if ((uint32_t)__builtin_popcount(j->keep | j->skip) ==
	    cl->place.k + cl->place.m - 1)
		j->next = j->acked = j->nstripes;   /* nothing to send: seals */
	j->sendnext = j->next;
	j->nready = 0;
	j->err = 0;
	j->blame = HOLDER_NONE;
	j->st = PJ_RUN;
	j->started_ms = ckptd_now_ms();
	return 0;
}

/* Is the holder of shard s the one the attempt started with: its link up
 * all along since? */
int pj_holder_same(const struct pjob *j, uint32_t s)
{
	const struct peer *p = &j->q->cl->peers[j->hid[s - 1]];

	return p->st == P_UP && p->ups == j->hups[s - 1];
}

/* ---- seal --------------------------------------------------------------- */

static void on_reached(struct ckptd *d, struct version *v, int err)
{
	struct cluster *cl = d->cluster;
	struct list *pos;

	if (!cl)
		return;
	list_for_each(pos, &cl->prot->jobs) {
		struct pjob *j = list_entry(pos, struct pjob, link);

		if (j->v != v || j->st != PJ_REACH)
			continue;
		if (err == 0) {
			cl->prot->done++;
			log_printf(LOG_INFO, "protect: %s/%s: PROTECTED (%llu bytes, %llu stripes of %u+%u) in %llu ms",
				   v->jobname, v->name,
				   (unsigned long long)j->stream_len,
				   (unsigned long long)j->nstripes,
				   cl->place.k, cl->place.m,
				   (unsigned long long)(ckptd_now_ms() - j->started_ms));
		}
		job_end(j, err);
		break;
	}
	protect_kick(cl);
}

struct seal_ref {
	struct pjob *j;
	uint32_t node;
};

static void on_seal_reply(struct ckptd *d, void *arg, int status,
			  const uint8_t *frame, size_t len)
{
	struct seal_ref *ref = arg;
	struct pjob *j = ref->j;
	struct version *v = j->v;

	if (status < 0) {
		if (!j->err)
			j->err = status;
		pj_blame(j, ref->node, status);
	}
	free(ref);
	if (--j->seals)
		return;
	if (j->err || !pj_wanted(j)) {
		pj_fail(j, j->err ? j->err : -ECANCELED);
		return;
	}
	/* Every holder has its shard durable under the new record: it is
	 * the part's now, written into its manifest at PROTECTED. */
	if (!v->holders && !(v->holders = malloc(sizeof(*v->holders)))) {
		pj_fail(j, -ENOMEM);
		return;
	}
	*v->holders = j->rec;
	j->st = PJ_REACH;
	version_reach(d, v, CKPT_COPY_PEERS, 0, LEVEL_DURABLE, on_reached);
}

static void send_seals(struct pjob *j)
{
	struct cluster *cl = j->q->cl;
	struct version *v = j->v;
	uint32_t s, n = cl->place.k + cl->place.m - 1;
	int ret;

	j->st = PJ_SEAL;
	j->seals = n - (uint32_t)__builtin_popcount(j->skip);
	if (j->seals == 0) {    /* every holder down: nothing to confirm */
		pj_fail(j, -EAGAIN);
		return;
	}
	for (s = 1; s <= n; s++) {
		if (j->skip & (1u << s))
			continue;       /* down, kept: nothing to seal */
		struct peer_seal sl;
		size_t cap = PEER_FRAME_CAP(j->manlen);
		uint32_t seq = link_seq(cl);
		uint8_t *buf = malloc(cap);
		struct seal_ref *ref = malloc(sizeof(*ref));
		int len;

		memset(&sl, 0, sizeof(sl));
		snprintf(sl.owner, sizeof(sl.owner), "%s", cl_name(cl, cl->self));
		snprintf(sl.job, sizeof(sl.job), "%s", v->jobname);
		snprintf(sl.version, sizeof(sl.version), "%s", v->name);
		sl.uid = v->uid;
		sl.seq = v->seq;
		sl.open_id = v->open_id;
		sl.k = cl->place.k;
		sl.m = cl->place.m;
		sl.shard = s;
		sl.chunk = PROTECT_CHUNK;
		sl.stream_len = j->stream_len;
		sl.nstripes = j->nstripes;
		sl.manlen = (uint32_t)j->manlen;
		sl.man = j->man;
		ret = -ENOMEM;
		if (buf && ref && !pj_holder_same(j, s)) {
			ret = -ECONNRESET;
		} else if (buf && ref) {
			*ref = (struct seal_ref){ j, j->hid[s - 1] };
			len = peer_encode_seal(buf, cap, seq, &sl);
			ret = len < 0 ? len
			      : link_request(cl, j->hid[s - 1], buf,
					     (size_t)len, seq, 0,
					     on_seal_reply, ref);
			if (len < 0)
				free(buf);
			if (ret == 0)
				ref = NULL;         /* the reply's now */
			buf = NULL;                 /* freed either way */
		}
		free(buf);
		free(ref);
		if (ret < 0) {
			if (!j->err)
				j->err = ret;
			pj_blame(j, j->hid[s - 1], ret);
			if (--j->seals == 0) {
				pj_fail(j, j->err);
				return;
			}
		}
	}
}

/* ---- the queue ---------------------------------------------------------- */

void pj_pump(struct pjob *j)
{
	if (j->st != PJ_RUN || j->err)
		return;
	/* The first task runs alone (it opens the segments); the stripes
	 * encoded and those sent stay within the window. */
	while (j->encoding < (!j->fds_open ? 1 : j->q->cl->bw.rate ? 1
			      : PROTECT_ENCODERS) &&
	       j->next < j->nstripes &&
	       j->waiting + j->encoding < PROTECT_WINDOW) {
		if (pj_stripe_submit(j) < 0) {
			pj_fail(j, -ENOMEM);
			return;
		}
	}
	if (j->acked == j->nstripes && !j->encoding && !j->waiting) {
		if (!pj_wanted(j))     /* removed while its stripes went */
			pj_fail(j, -ECANCELED);
		else
			send_seals(j);
	}
}

void protect_kick(struct cluster *cl)
{
	struct protect_q *q = cl->prot;
	uint64_t now = ckptd_now_ms();
	struct list *pos, *tmp;
	int ret;

	if (!q || cl->stopping)
		return;
	list_for_each_safe(pos, tmp, &q->jobs) {
		struct pjob *j = list_entry(pos, struct pjob, link);

		if (j->st != PJ_WAIT) {
			if (!pj_wanted(j) && j->st == PJ_RUN)
				pj_fail(j, -ECANCELED);
			return;             /* one part at a time */
		}
	}
	/* The oldest part that is due; one waiting to retry lets the
	 * younger ones go first. */
	list_for_each_safe(pos, tmp, &q->jobs) {
		struct pjob *j = list_entry(pos, struct pjob, link);

		if (!pj_wanted(j)) {
			job_free(j);
			continue;
		}
		if (now < j->retry_ms)
			continue;
		ret = job_start(j);
		if (ret == -EAGAIN) {
			job_reset(j);       /* waits for holders: no failure */
			continue;
		}
		if (ret < 0) {
			job_end(j, ret);
			continue;
		}
		pj_pump(j);
		return;
	}
}

static struct pjob *job_find(const struct protect_q *q,
			     const struct version *v)
{
	struct list *pos;

	list_for_each(pos, &q->jobs)
		if (list_entry(pos, struct pjob, link)->v == v)
			return list_entry(pos, struct pjob, link);
	return NULL;
}

/* Queue v (once); reprotect: a PROTECTED part placed anew around a holder
 * gone, keeping the shards its other holders have.  0 or -ENOMEM
 * (logged). */
static int job_queue(struct protect_q *q, struct version *v, int reprotect)
{
	struct pjob *j = job_find(q, v);

	if (j)
		return 0;
	j = calloc(1, sizeof(*j));
	if (!j) {
		log_printf(LOG_ERR, "protect: %s/%s: out of memory; not protected until the next start",
			   v->jobname, v->name);
		return -ENOMEM;
	}
	j->q = q;
	j->v = v;
	j->reprotect = reprotect;
	j->blame = HOLDER_NONE;
	version_get(v);
	list_add_tail(&q->jobs, &j->link);
	return 0;
}

void protect_version(struct cluster *cl, struct version *v)
{
	if (!cl->prot || !wanted(v))
		return;
	if (job_queue(cl->prot, v, 0) == 0)
		protect_kick(cl);
}

void protect_peer_up(struct cluster *cl, uint32_t node)
{
	protect_kick(cl);
}

/* The holder of v's shards that has been down past after ms (or is no
 * longer in the node list), or HOLDER_NONE; *shard its shard. */
static uint32_t holder_gone(const struct cluster *cl, const struct version *v,
			    uint64_t now, uint64_t after, uint32_t *shard)
{
	uint32_t ids[EC_MAX_FRAGS], s, w;

	holders_resolve(cl, v->holders, cl->self, ids);
	w = v->holders ? v->holders->k + v->holders->m - 1
		       : cl->place.k + cl->place.m - 1;
	for (s = 1; s <= w; s++) {
		const struct peer *p;

		*shard = s;
		if (ids[s - 1] == HOLDER_NONE)
			return cl->self;   /* a node no longer listed */
		p = &cl->peers[ids[s - 1]];
		if (p->st != P_UP && now >= p->since_ms + after)
			return ids[s - 1];
	}
	return HOLDER_NONE;
}

/* Is a node up that could take a shard of v: not this one, not one of
 * its holders, not refusing for space?  Without one, a re-protection
 * would only keep what it has (choose_keeping_down()). */
static int replacement_up(const struct cluster *cl, const struct version *v,
			  uint64_t now)
{
	uint32_t ids[EC_MAX_FRAGS], s, w, i;

	holders_resolve(cl, v->holders, cl->self, ids);
	w = v->holders ? v->holders->k + v->holders->m - 1
		       : cl->place.k + cl->place.m - 1;
	for (i = 0; i < cl->place.n; i++) {
		const struct peer *p = &cl->peers[i];

		if (i == cl->self || p->st != P_UP || now < p->refused_until_ms)
			continue;
		for (s = 1; s <= w && ids[s - 1] != i; s++)
			;
		if (s > w)
			return 1;
	}
	return 0;
}

void protect_lost(struct cluster *cl, struct version *v, uint32_t shard)
{
	struct protect_q *q = cl->prot;
	struct pjob *j;

	if (!q || shard == 0 || shard >= EC_MAX_FRAGS)
		return;
	j = job_find(q, v);
	if (!j) {
		if (job_queue(q, v, 1) < 0)
			return;
		j = job_find(q, v);
		q->reprotected++;
	}
	j->lost |= 1u << shard;
	if (j->st != PJ_WAIT)   /* this attempt may keep it: the next sends */
		j->lost_late |= 1u << shard;
	protect_kick(cl);
}

void protect_tick(struct cluster *cl)
{
	struct protect_q *q = cl->prot;
	uint64_t now = ckptd_now_ms(), after;
	struct list *jp, *vp;
	uint32_t h, s;

	if (!q || cl->stopping || now < q->scan_ms + PROTECT_SCAN_MS)
		return;
	q->scan_ms = now;
	after = cl->d->conf->cluster_reprotect_after;
	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *jb = list_entry(jp, struct job, link);

		list_for_each(vp, &jb->versions) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->state != CKPT_ST_SEALED || v->removing ||
			    (v->copies & (CKPT_COPY_LOCAL | CKPT_COPY_PEERS |
					  CKPT_COPY_PFS)) !=
			    (CKPT_COPY_LOCAL | CKPT_COPY_PEERS))
				continue;
			if (job_find(q, v))
				continue;       /* being protected already */
			h = holder_gone(cl, v, now, after, &s);
			if (h == HOLDER_NONE || !replacement_up(cl, v, now))
				continue;
			if (h == cl->self)
				log_printf(LOG_NOTICE, "protect: %s/%s: the holder of shard %u, %s, is no longer a node of the cluster: placing the shard elsewhere",
					   jb->name, v->name, s,
					   v->holders ? v->holders->name[s - 1] : "?");
			else
				log_printf(LOG_NOTICE, "protect: %s/%s: holder %s of shard %u down for %llu s (reprotect_after %llu s): placing its shard elsewhere",
					   jb->name, v->name, cl_name(cl, h), s,
					   (unsigned long long)(now - cl->peers[h].since_ms) / 1000,
					   (unsigned long long)after / 1000);
			q->reprotected++;
			/* It stays PROTECTED (k shards are readable) and is
			 * counted below full redundancy until the new holder
			 * has its shard and the record names it. */
			job_queue(q, v, 1);
		}
	}
	protect_kick(cl);
}

int protect_open(struct cluster *cl)
{
	struct protect_q *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->cl = cl;
	list_init(&q->jobs);
	cl->prot = q;
	return 0;
}

void protect_close(struct cluster *cl)
{
	struct protect_q *q = cl->prot;
	struct list *pos, *tmp;

	if (!q)
		return;
	/* The pool is closed: its tasks were dropped; those encoded and
	 * not sent are the jobs'. */
	list_for_each_safe(pos, tmp, &q->jobs) {
		struct pjob *j = list_entry(pos, struct pjob, link);

		pj_ready_flush(j);
		job_free(j);
	}
	free(q);
	cl->prot = NULL;
}

/* Sealed parts of this node's, not on the PFS, short of a shard now:
 * LOCAL only, or with a holder down. */
static uint32_t degraded_parts(const struct cluster *cl)
{
	uint64_t now = ckptd_now_ms();
	struct list *jp, *vp;
	uint32_t n = 0, s;

	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *jb = list_entry(jp, struct job, link);

		list_for_each(vp, &jb->versions) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->state != CKPT_ST_SEALED || v->removing ||
			    (v->copies & CKPT_COPY_PFS) ||
			    !(v->copies & CKPT_COPY_LOCAL))
				continue;
			n += !(v->copies & CKPT_COPY_PEERS) ||
			     holder_gone(cl, v, now, 0, &s) != HOLDER_NONE;
		}
	}
	return n;
}

void protect_status(const struct cluster *cl, struct cluster_prot_status *s)
{
	const struct protect_q *q = cl->prot;
	struct list *pos;

	memset(s, 0, sizeof(*s));
	if (!q)
		return;
	list_for_each(pos, &q->jobs)
		s->queued++;
	s->done = q->done;
	s->failures = q->failures;
	s->bytes_sent = q->bytes_sent;
	s->reprotected = q->reprotected;
	s->replaced = q->replaced;
	s->degraded = degraded_parts(cl);
	list_for_each(pos, &q->jobs) {
		const struct pjob *j = list_entry(pos, struct pjob, link);

		if (j->st == PJ_WAIT && j->waiting_for[0]) {
			snprintf(s->waiting_for, sizeof(s->waiting_for),
				 "%.60s/%.40s: %.90s", j->v->jobname, j->v->name,
				 j->waiting_for);
			break;
		}
	}
}
