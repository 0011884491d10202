/*
 * pstripe.c - a protection attempt's stripes (see protect.c's header): each
 * stripe task reads its k chunks of the part's stream from the segments
 * (O_DIRECT, each record once, checked against its CRC), encodes the m
 * parity chunks and frames chunks 1..k+m-1 on a worker; back on the loop
 * the stripes are sent in order to the attempt's holders, and each settles
 * when every holder has answered.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwlimit.h"
#include "crc32c.h"
#include "pool.h"
#include "protect_i.h"
#include "sys.h"

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

/* ---- stripes ------------------------------------------------------------ */

/* Worker: the job's segment files, opened once by its first stripe task
 * (which runs alone: pj_pump()). */
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
		pj_fail(j, st->err);
	} else {
		j->acked++;
		q->bytes_sent += (uint64_t)(st->nframes -
				__builtin_popcount(j->keep | j->skip)) *
				 PROTECT_CHUNK;   /* the frames sent */
		if (j->err)
			pj_fail(j, j->err);
		else
			pj_pump(j);
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
		pj_blame(st->j, ref->node, status);
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
void pj_ready_flush(struct pjob *j)
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
		ret = pj_holder_same(j, s) ? 0 : -ECONNRESET;
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
			pj_blame(j, j->hid[s - 1], ret);
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
	if (t->result < 0 || j->err || !pj_wanted(j)) {
		int err = t->result < 0 ? t->result
			  : j->err ? j->err : -ECANCELED;

		j->encoding--;
		stripe_free(st);
		pj_ready_flush(j);
		pj_fail(j, err);
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
		pj_ready_flush(j);
		pj_fail(j, j->err);
		return;
	}
	pj_pump(j);
}

static void stripe_drop(struct pool_task *t)
{
	struct stripe_task *st = (struct stripe_task *)t;

	stripe_unscratch(st);
	st->j->encoding--;
	stripe_free(st);
}

int pj_stripe_submit(struct pjob *j)
{
	struct cluster *cl = j->q->cl;
	struct stripe_task *st = calloc(1, sizeof(*st));
	uint32_t i;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < PROTECT_ENCODERS; i++)
		if (!(j->scr_busy & (1u << i)))
			break;
	st->sci = i;                /* pj_pump() saw one free */
	st->sc = &j->scr[i];
	j->scr_busy |= 1u << i;
	st->j = j;
	st->stripe = j->next++;
	st->nframes = cl->place.k + cl->place.m - 1;
	for (i = 0; i < st->nframes; i++)
		st->seq[i] = link_seq(cl);
	pool_task_init(&st->pt, stripe_run, stripe_done, stripe_drop);
	j->encoding++;
	pool_submit(pj_d(j->q)->pool, &st->pt, 0);
	return 0;
}

void pj_scratch_free(struct pjob *j)
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
}
