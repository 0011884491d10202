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
 * Threads: the loop thread, and the stripe task's run() on a worker, which
 * touches only its task and the job's read-only fields (recs, fds).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwlimit.h"
#include "catalog.h"
#include "cluster_i.h"
#include "crc32c.h"
#include "ec.h"
#include "level.h"
#include "manifest.h"
#include "pool.h"
#include "sys.h"

#define PROTECT_WINDOW       8
/* Stripe tasks of one part on the pool at once (each with its scratch):
 * one's reads from the disk overlap another's encode (cluster.h). */
#define PROTECT_ENCODERS     CLUSTER_ENCODERS
#define PROTECT_RETRY_MIN_MS 1000
#define PROTECT_RETRY_MAX_MS 60000
/* A holder that refused a shard for space gets no new one this long. */
#define PROTECT_FULL_MS      60000
/* How often protect_tick() looks for holders down past reprotect_after. */
#define PROTECT_SCAN_MS      1000

enum pj_state { PJ_WAIT, PJ_RUN, PJ_SEAL, PJ_REACH };

struct srec {                     /* a data record of the stream */
	uint32_t seg;
	uint32_t len, crc;
	uint64_t seg_off;
	uint64_t soff;            /* its first byte in the stream */
};

/* A stripe task's scratch, kept from stripe to stripe: the encode
 * tables, the k + m chunks and a record buffer.  Freed with the attempt,
 * never while a task has it. */
struct pscratch {
	struct ec *ec;
	uint8_t *frag[EC_MAX_FRAGS];
	uint8_t *rbuf;
	size_t rcap;
	uint32_t rec;             /* rbuf holds j->recs[rec - 1]; 0: none */
};

struct stripe_task;

struct pjob {
	struct list link;         /* in q->jobs, oldest first */
	struct protect_q *q;
	struct version *v;        /* referenced */
	enum pj_state st;
	uint8_t *man;             /* the part's encoded manifest */
	size_t manlen;
	struct srec *recs;
	uint32_t nrecs;
	int *fds;                 /* by segment id, opened by the first task */
	uint32_t nfds;
	char segdir[600];
	uint64_t stream_len, nstripes;
	uint64_t next;            /* next stripe to encode */
	uint64_t acked;           /* stripes every holder acknowledged */
	uint32_t encoding;        /* stripe tasks on the pool, or encoded and
				   * waiting in ready (<= PROTECT_ENCODERS) */
	uint64_t sendnext;        /* the next stripe to send: in order, so
				   * that each holder's shard opens with its
				   * first chunk (hold.c) */
	struct stripe_task *ready[PROTECT_ENCODERS]; /* encoded, waiting for
				   * an earlier stripe */
	uint32_t nready;
	int fds_open;             /* the first task opened fds: the others
				   * may run beside one another */
	uint32_t waiting;         /* stripes sent, replies pending */
	uint32_t seals;           /* SHARD_SEAL replies pending */
	int32_t err;              /* of this attempt */
	uint32_t tries;
	uint64_t retry_ms;
	uint64_t started_ms;
	/* This attempt's holders: hid[s - 1] holds shard s, as rec says;
	 * hups[s - 1] its link's ups when the attempt started: a holder whose
	 * link went down since (even with nothing in flight) may have lost
	 * the chunks it acknowledged, so the attempt fails. */
	uint32_t hid[EC_MAX_FRAGS];
	uint32_t hups[EC_MAX_FRAGS];
	struct man_holders rec;
	uint32_t keep;            /* bit s: shard s is sealed on its holder
				   * already (a re-protection): not resent */
	uint32_t skip;            /* bit s: its holder, the record's, is down
				   * and no node is left to replace it: the
				   * shard stays there as the record says,
				   * neither sent nor sealed */
	uint32_t lost;            /* bit s: its holder came back without the
				   * shard (rebuild.c's audit): sent again */
	uint32_t lost_late;       /* those of lost found while an attempt ran
				   * (it may have kept them): the next one's */
	int reprotect;            /* queued by protect_tick(): the part keeps
				   * PEERS meanwhile */
	int resend;               /* a holder kept lacked its shard: every
				   * shard is sent */
	uint32_t blame;           /* the holder that failed the attempt, or
				   * HOLDER_NONE */
	uint32_t avoid[EC_MAX_FRAGS]; /* holders that failed this part */
	uint32_t navoid;
	char waiting_for[160];    /* why it has not started, for status */
	struct pscratch scr[PROTECT_ENCODERS];
	uint32_t scr_busy;        /* bit i: scr[i] is a task's */
};

struct protect_q {
	struct cluster *cl;
	struct list jobs;
	uint64_t scan_ms;         /* protect_tick()'s last scan */
	uint32_t reprotected;     /* parts re-protected since start */
	uint32_t replaced;        /* holders replaced (down, full, failed) */
	uint64_t bytes_sent;      /* chunk bytes acknowledged since start */
	uint32_t done;            /* parts protected since start */
	uint32_t failures;        /* attempts that failed */
};

struct put_ref {                  /* one SHARD_PUT's reply */
	struct stripe_task *st;
	uint32_t node;
};

struct stripe_task {
	struct pool_task pt;
	struct pjob *j;
	struct pscratch *sc;      /* j->scr[sci], this task's while it runs */
	uint32_t sci;
	struct put_ref ref[EC_MAX_FRAGS];
	uint64_t stripe;
	uint32_t nframes;         /* k + m - 1 */
	uint32_t acks;            /* replies still to come */
	int32_t err;
	uint32_t seq[EC_MAX_FRAGS];
	uint8_t *frame[EC_MAX_FRAGS];
	size_t flen[EC_MAX_FRAGS];
};

static struct ckptd *dq(const struct protect_q *q)
{
	return q->cl->d;
}

static void pump(struct pjob *j);

/* ---- jobs --------------------------------------------------------------- */

static void job_reset(struct pjob *j)
{
	uint32_t i, c;

	for (c = 0; c < PROTECT_ENCODERS; c++) {
		struct pscratch *sc = &j->scr[c];

		ec_free(sc->ec);
		for (i = 0; i < EC_MAX_FRAGS; i++)
			free(sc->frag[i]);
		sys_dio_free(sc->rbuf, sc->rcap);
		memset(sc, 0, sizeof(*sc));
	}
	j->scr_busy = 0;
	j->fds_open = 0;
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
	version_put(dq(j->q)->cat, j->v);
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
static int job_wanted(const struct pjob *j)
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
static void job_blame(struct pjob *j, uint32_t node, int err)
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
	if (err == 0 || !job_wanted(j)) {
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
static void job_fail(struct pjob *j, int err)
{
	if (!j->err)
		j->err = err;
	if (!j->encoding && !j->waiting && !j->seals)
		job_end(j, j->err);
}

/* ---- choosing holders ------------------------------------------------------ */

enum elig { E_OK, E_WAIT, E_NO };

/* May node take a new shard of j's part now?  E_WAIT: down, but not for
 * long enough to place around it (a restart is waited for). */
static enum elig eligible(const struct pjob *j, uint32_t node, uint64_t now)
{
	const struct cluster *cl = j->q->cl;
	const struct peer *p = &cl->peers[node];
	uint64_t grace = cl->hb_timeout_ms;
	uint32_t i;

	if (node == cl->self)
		return E_NO;
	for (i = 0; i < j->navoid; i++)
		if (j->avoid[i] == node)
			return E_NO;
	if (now < p->refused_until_ms)
		return E_NO;
	if (p->st == P_UP)
		return E_OK;
	return now < p->since_ms + grace ? E_WAIT : E_NO;
}

static int may_take(void *arg, uint32_t node)
{
	struct pjob *j = arg;

	return eligible(j, node, ckptd_now_ms()) == E_OK;
}

/* choose_keeping_down()'s ok(): may_take, or one of the down holders the
 * record names that are kept (j->skip holds their shards' bits while it
 * chooses, translated to nodes by first). */
struct keep_arg {
	struct pjob *j;
	const uint32_t *first;
	uint32_t w, kept;
};

static int may_take_or_kept(void *arg, uint32_t node)
{
	struct keep_arg *ka = arg;
	uint32_t s;

	for (s = 1; s <= ka->w; s++)
		if ((ka->kept & (1u << s)) && ka->first[s - 1] == node)
			return 1;
	return may_take(ka->j, node);
}

/*
 * Too few nodes may take a shard, and the part has a record (its holders
 * all sealed their shards when it was made): keep holders of the record
 * that are down, as few as will do, the latest to go down first, so that
 * the part is protected around what cannot be replaced instead of waiting
 * for it.  Their shards stay where the record says (j->skip: neither sent
 * nor sealed); status counts them down.  0, or -EAGAIN with nothing down
 * to keep.
 */
static int choose_keeping_down(struct pjob *j, const uint32_t *first)
{
	struct cluster *cl = j->q->cl;
	struct keep_arg ka = { j, first, cl->place.k + cl->place.m - 1, 0 };
	uint64_t now = ckptd_now_ms();
	uint32_t s, pick;
	int ret = -EAGAIN;

	while (ret == -EAGAIN) {
		pick = 0;
		/* The local copy and the holders sealed must still be k. */
		if (1 + ka.w - (uint32_t)__builtin_popcount(ka.kept) <=
		    cl->place.k)
			return -EAGAIN;
		for (s = 1; s <= ka.w; s++) {
			uint32_t c = first[s - 1];

			/* Down past the grace only (a restart is waited
			 * for, even of a holder this part blamed). */
			if (c == HOLDER_NONE || (ka.kept & (1u << s)) ||
			    (j->lost & (1u << s)) ||
			    cl->peers[c].st == P_UP ||
			    now < cl->peers[c].since_ms + cl->hb_timeout_ms)
				continue;
			if (!pick || cl->peers[c].since_ms >
				     cl->peers[first[pick - 1]].since_ms)
				pick = s;
		}
		if (!pick)
			return -EAGAIN;
		ka.kept |= 1u << pick;
		ret = place_choose(&cl->place, cl->self, first,
				   may_take_or_kept, &ka, j->hid);
	}
	if (ret < 0)
		return ret;
	for (s = 1; s <= ka.w; s++)
		if ((ka.kept & (1u << s)) && j->hid[s - 1] == first[s - 1])
			j->skip |= 1u << s;
	return 0;
}

/* Choose this attempt's holders into j->hid and j->rec: the part's own
 * record's where it has one of this code (a re-protection, a node list
 * changed since), else place.h's; each replaced where it may not take a
 * shard.  0; -EAGAIN: not now (a first choice within its grace, or too few
 * nodes; waiting_for says which), the job waits. */
static int choose_holders(struct pjob *j)
{
	struct cluster *cl = j->q->cl;
	const struct man_holders *old = j->v->holders;
	uint32_t w = cl->place.k + cl->place.m - 1, s, up = 0, i;
	uint32_t first[EC_MAX_FRAGS];
	uint64_t now = ckptd_now_ms();
	int ret, same;

	if (old && (old->k != cl->place.k || old->m != cl->place.m))
		old = NULL;             /* coded otherwise: coded anew */
	holders_resolve(cl, old, cl->self, first);
	for (s = 1; s <= w; s++) {
		uint32_t c = first[s - 1];

		if (c != HOLDER_NONE && eligible(j, c, now) == E_WAIT) {
			snprintf(j->waiting_for, sizeof(j->waiting_for),
				 "holder %.63s down %llu s (grace %u s)",
				 cl_name(cl, c),
				 (unsigned long long)(now - cl->peers[c].since_ms) / 1000,
				 cl->hb_timeout_ms / 1000);
			return -EAGAIN;
		}
	}
	ret = place_choose(&cl->place, cl->self, first, may_take, j, j->hid);
	if (ret == -EAGAIN && j->navoid) {
		j->navoid = 0;          /* better the failed ones than none */
		ret = place_choose(&cl->place, cl->self, first, may_take, j,
				   j->hid);
	}
	j->skip = 0;
	if (ret == -EAGAIN && old)
		ret = choose_keeping_down(j, first);
	if (ret < 0) {
		for (i = 0; i < cl->place.n; i++)
			up += may_take(j, i);
		snprintf(j->waiting_for, sizeof(j->waiting_for),
			 "%u of the %u holders it needs can take shards", up, w);
		return ret;
	}
	j->waiting_for[0] = '\0';
	memset(&j->rec, 0, sizeof(j->rec));
	j->rec.k = cl->place.k;
	j->rec.m = cl->place.m;
	j->keep = 0;
	same = 1;
	for (s = 1; s <= w; s++) {
		snprintf(j->rec.name[s - 1], sizeof(j->rec.name[s - 1]), "%s",
			 cl_name(cl, j->hid[s - 1]));
		if (j->hid[s - 1] != first[s - 1])
			same = 0;
		else if (old && j->reprotect && !j->resend &&
			 !(j->lost & (1u << s)) && !(j->skip & (1u << s)))
			j->keep |= 1u << s;     /* sealed there already */
	}
	j->rec.gen = old ? old->gen + !same : 1;
	for (s = 1; s <= w; s++)
		j->hups[s - 1] = cl->peers[j->hid[s - 1]].ups;
	if (!same)
		j->q->replaced++;
	return 0;
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

	ret = choose_holders(j);
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
	snprintf(j->segdir, sizeof(j->segdir), "%s", dq(j->q)->segs->dir);
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
static int holder_same(const struct pjob *j, uint32_t s)
{
	const struct peer *p = &j->q->cl->peers[j->hid[s - 1]];

	return p->st == P_UP && p->ups == j->hups[s - 1];
}

/* ---- stripes ------------------------------------------------------------ */

/* Worker: the job's segment files, opened once by its first stripe task
 * (which runs alone: pump()). */
static int open_fds(struct pjob *j)
{
	char path[700];
	uint32_t i;

	if (j->fds)
		return 0;
	j->fds = malloc(j->nfds * sizeof(*j->fds));
	if (!j->fds)
		return -ENOMEM;
	for (i = 0; i < j->nfds; i++)
		j->fds[i] = -1;
	for (i = 0; i < j->nrecs; i++) {
		uint32_t s = j->recs[i].seg;

		if (j->fds[s] >= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%08u", j->segdir, s);
		/* Records are read whole from aligned offsets into an
		 * aligned buffer: past the page cache (the segments were
		 * written so; a cached copy would be read from the disk and
		 * then copied).  A file system without O_DIRECT reads
		 * through the cache. */
		j->fds[s] = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
		if (j->fds[s] < 0 && errno == EINVAL)
			j->fds[s] = open(path, O_RDONLY | O_CLOEXEC);
		if (j->fds[s] < 0)
			return -errno;
	}
	return 0;
}

/* Worker: the k chunks of stripe `stripe` of the stream into sc->frag
 * (zeros past the stream's end).  Each record it touches is read whole and
 * checked against its CRC once: the scratch keeps the last one read, so a
 * record longer than a stripe is read again only by another task. */
static int stripe_read(struct pjob *j, struct pscratch *sc, uint64_t stripe,
		       uint32_t k)
{
	uint64_t a = stripe * k * PROTECT_CHUNK, z = a + k * PROTECT_CHUNK;
	uint64_t pos, end = j->stream_len;
	uint32_t lo = 0, hi = j->nrecs, i;
	int ret;

	for (pos = end > a ? end : a; pos < z; ) {     /* past the end */
		uint64_t c = (pos - a) / PROTECT_CHUNK, o = (pos - a) % PROTECT_CHUNK;

		memset(sc->frag[c] + o, 0, PROTECT_CHUNK - o);
		pos += PROTECT_CHUNK - o;
	}
	while (lo < hi) {          /* the first record ending after a */
		uint32_t mid = lo + (hi - lo) / 2;

		if (j->recs[mid].soff + j->recs[mid].len <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < j->nrecs && j->recs[i].soff < z; i++) {
		const struct srec *r = &j->recs[i];
		uint64_t to = r->soff + r->len < z ? r->soff + r->len : z;

		if (sc->rec != i + 1) {
			size_t need = man_padded(r->len);

			sc->rec = 0;
			ret = sys_dio_fit((void **)&sc->rbuf, &sc->rcap, need);
			if (ret < 0)
				return ret;
			ret = sys_pread_all(j->fds[r->seg], sc->rbuf, need,
					    r->seg_off);
			if (ret < 0)
				return ret;
			if (crc32c(sc->rbuf, r->len) != r->crc)
				return -CKPT_ECORRUPT;
			sc->rec = i + 1;
		}
		for (pos = r->soff > a ? r->soff : a; pos < to; ) {
			uint64_t c = (pos - a) / PROTECT_CHUNK;
			uint64_t o = (pos - a) % PROTECT_CHUNK;
			uint64_t n = PROTECT_CHUNK - o < to - pos
				     ? PROTECT_CHUNK - o : to - pos;

			memcpy(sc->frag[c] + o, sc->rbuf + (pos - r->soff), n);
			pos += n;
		}
	}
	return 0;
}

static int stripe_run(struct pool_task *t)
{
	struct stripe_task *st = (struct stripe_task *)t;
	struct pjob *j = st->j;
	struct pscratch *sc = st->sc;
	struct cluster *cl = j->q->cl;
	uint32_t k = cl->place.k, m = cl->place.m, s;
	uint8_t **frag = sc->frag;
	int ret;

	ret = open_fds(j);
	if (ret < 0)
		return ret;
	for (s = 0; s < k + m; s++)
		if (!frag[s] && posix_memalign((void **)&frag[s], 64,
					       PROTECT_CHUNK))
			return -ENOMEM;
	if (!sc->ec && (ret = ec_new((int)k, (int)m, &sc->ec)) < 0)
		return ret;
	ret = stripe_read(j, sc, st->stripe, k);
	if (ret < 0)
		return ret;
	ec_encode(sc->ec, frag, frag + k, PROTECT_CHUNK);
	for (s = 1; s < k + m; s++) {
		struct peer_shard sh;
		size_t cap = PEER_FRAME_CAP(PROTECT_CHUNK);
		int n;

		if ((j->keep | j->skip) & (1u << s))
			continue;       /* its holder has it: not sent */
		memset(&sh, 0, sizeof(sh));
		snprintf(sh.owner, sizeof(sh.owner), "%s", cl_name(cl, cl->self));
		snprintf(sh.job, sizeof(sh.job), "%s", j->v->jobname);
		snprintf(sh.version, sizeof(sh.version), "%s", j->v->name);
		sh.seq = j->v->seq;
		sh.open_id = j->v->open_id;
		sh.k = k;
		sh.m = m;
		sh.shard = s;
		sh.stripe = st->stripe;
		sh.off = st->stripe * PROTECT_CHUNK;
		sh.len = PROTECT_CHUNK;
		sh.total = j->nstripes * PROTECT_CHUNK;
		sh.data = frag[s];
		sh.crc = crc32c(frag[s], PROTECT_CHUNK);
		/* Frames go to the links: each its own buffer (freed by
		 * stripe_free() if this fails). */
		st->frame[s - 1] = malloc(cap);
		if (!st->frame[s - 1])
			return -ENOMEM;
		n = peer_encode_shard(st->frame[s - 1], cap, st->seq[s - 1], &sh);
		if (n < 0)
			return n;
		st->flen[s - 1] = (size_t)n;
	}
	/* The cap counts what goes on the wire. */
	bwlimit_take(&j->q->cl->bw,
		     (uint64_t)(k + m - 1 -
				__builtin_popcount(j->keep | j->skip)) *
		     PROTECT_CHUNK);
	return 0;
}

static void stripe_free(struct stripe_task *st)
{
	uint32_t i;

	for (i = 0; i < st->nframes; i++)
		free(st->frame[i]);
	free(st);
}

/* Every reply of a stripe is in. */
static void stripe_settled(struct stripe_task *st)
{
	struct pjob *j = st->j;
	struct protect_q *q = j->q;

	j->waiting--;
	if (st->err) {
		job_fail(j, st->err);
	} else {
		j->acked++;
		q->bytes_sent += (uint64_t)(st->nframes -
				__builtin_popcount(j->keep | j->skip)) *
				 PROTECT_CHUNK;   /* the frames sent */
		if (j->err)
			job_fail(j, j->err);
		else
			pump(j);
	}
	stripe_free(st);
}

static void on_put_reply(struct ckptd *d, void *arg, int status,
			 const uint8_t *frame, size_t len)
{
	struct put_ref *ref = arg;
	struct stripe_task *st = ref->st;

	if (status < 0) {
		if (!st->err)
			st->err = status;
		job_blame(st->j, ref->node, status);
	}
	if (--st->acks == 0)
		stripe_settled(st);
}

/* A task's scratch back to its job. */
static void stripe_unscratch(struct stripe_task *st)
{
	if (st->sc) {
		st->j->scr_busy &= ~(1u << st->sci);
		st->sc = NULL;
	}
}

/* The tasks encoded but not sent go (the attempt failed). */
static void ready_flush(struct pjob *j)
{
	while (j->nready) {
		j->encoding--;
		stripe_free(j->ready[--j->nready]);
	}
}

/* Send st's frames (its stripe is j->sendnext). */
static void stripe_send(struct stripe_task *st)
{
	struct pjob *j = st->j;
	struct cluster *cl = j->q->cl;
	uint32_t s;
	int ret;

	j->encoding--;
	j->sendnext++;
	j->waiting++;
	st->acks = 1;                       /* held until every frame went */
	for (s = 1; s <= st->nframes; s++) {
		if ((j->keep | j->skip) & (1u << s))
			continue;           /* sealed there already */
		st->acks++;
		st->ref[s - 1] = (struct put_ref){ st, j->hid[s - 1] };
		ret = holder_same(j, s) ? 0 : -ECONNRESET;
		if (ret == 0)
			ret = link_request(cl, j->hid[s - 1], st->frame[s - 1],
					   st->flen[s - 1], st->seq[s - 1], 0,
					   on_put_reply, &st->ref[s - 1]);
		else
			free(st->frame[s - 1]);
		st->frame[s - 1] = NULL;    /* the link's now */
		if (ret < 0) {
			if (!st->err)
				st->err = ret;
			job_blame(j, j->hid[s - 1], ret);
			st->acks--;
		}
	}
	if (--st->acks == 0)
		stripe_settled(st);
}

static void stripe_done(struct pool_task *t)
{
	struct stripe_task *st = (struct stripe_task *)t;
	struct pjob *j = st->j;
	uint32_t i;
	int sent = 1;

	stripe_unscratch(st);
	if (t->result < 0 || j->err || !job_wanted(j)) {
		int err = t->result < 0 ? t->result
			  : j->err ? j->err : -ECANCELED;

		j->encoding--;
		stripe_free(st);
		ready_flush(j);
		job_fail(j, err);
		return;
	}
	j->fds_open = 1;
	j->ready[j->nready++] = st;
	/* Send what is next in order; a later stripe waits for it.  The
	 * attempt is pinned meanwhile (a send that fails at once settles its
	 * stripe, which must not end the attempt, nor free j, under us). */
	j->encoding++;
	while (sent && j->st == PJ_RUN && !j->err) {
		sent = 0;
		for (i = 0; i < j->nready; i++) {
			struct stripe_task *r = j->ready[i];

			if (r->stripe != j->sendnext)
				continue;
			j->ready[i] = j->ready[--j->nready];
			stripe_send(r);
			sent = 1;
			break;
		}
	}
	j->encoding--;
	if (j->err) {
		ready_flush(j);
		job_fail(j, j->err);
		return;
	}
	pump(j);
}

static void stripe_drop(struct pool_task *t)
{
	struct stripe_task *st = (struct stripe_task *)t;

	stripe_unscratch(st);
	st->j->encoding--;
	stripe_free(st);
}

static int stripe_submit(struct pjob *j)
{
	struct cluster *cl = j->q->cl;
	struct stripe_task *st = calloc(1, sizeof(*st));
	uint32_t i;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < PROTECT_ENCODERS; i++)
		if (!(j->scr_busy & (1u << i)))
			break;
	st->sci = i;                /* pump() saw one free */
	st->sc = &j->scr[i];
	j->scr_busy |= 1u << i;
	st->j = j;
	st->stripe = j->next++;
	st->nframes = cl->place.k + cl->place.m - 1;
	for (i = 0; i < st->nframes; i++)
		st->seq[i] = link_seq(cl);
	pool_task_init(&st->pt, stripe_run, stripe_done, stripe_drop);
	j->encoding++;
	pool_submit(dq(j->q)->pool, &st->pt, 0);
	return 0;
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
		job_blame(j, ref->node, status);
	}
	free(ref);
	if (--j->seals)
		return;
	if (j->err || !job_wanted(j)) {
		job_fail(j, j->err ? j->err : -ECANCELED);
		return;
	}
	/* Every holder has its shard durable under the new record: it is
	 * the part's now, written into its manifest at PROTECTED. */
	if (!v->holders && !(v->holders = malloc(sizeof(*v->holders)))) {
		job_fail(j, -ENOMEM);
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
		job_fail(j, -EAGAIN);
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
		if (buf && ref && !holder_same(j, s)) {
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
			job_blame(j, j->hid[s - 1], ret);
			if (--j->seals == 0) {
				job_fail(j, j->err);
				return;
			}
		}
	}
}

/* ---- the queue ---------------------------------------------------------- */

static void pump(struct pjob *j)
{
	if (j->st != PJ_RUN || j->err)
		return;
	/* The first task runs alone (it opens the segments); the stripes
	 * encoded and those sent stay within the window. */
	while (j->encoding < (!j->fds_open ? 1 : j->q->cl->bw.rate ? 1
			      : PROTECT_ENCODERS) &&
	       j->next < j->nstripes &&
	       j->waiting + j->encoding < PROTECT_WINDOW) {
		if (stripe_submit(j) < 0) {
			job_fail(j, -ENOMEM);
			return;
		}
	}
	if (j->acked == j->nstripes && !j->encoding && !j->waiting) {
		if (!job_wanted(j))     /* removed while its stripes went */
			job_fail(j, -ECANCELED);
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
			if (!job_wanted(j) && j->st == PJ_RUN)
				job_fail(j, -ECANCELED);
			return;             /* one part at a time */
		}
	}
	/* The oldest part that is due; one waiting to retry lets the
	 * younger ones go first. */
	list_for_each_safe(pos, tmp, &q->jobs) {
		struct pjob *j = list_entry(pos, struct pjob, link);

		if (!job_wanted(j)) {
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
		pump(j);
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

		ready_flush(j);
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
