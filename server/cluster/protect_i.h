/*
 * protect_i.h - what protect.c (the queue, attempts, seals), pchoose.c
 * (choosing an attempt's holders) and pstripe.c (its stripes: read, encode,
 * send) share; private to server/cluster/.  Everything runs on the loop
 * thread but a stripe task's run() (pstripe.c), which touches only its task,
 * its scratch and the job's read-only fields (recs, fds, keep, skip).
 */
#ifndef CKPTD_PROTECT_I_H
#define CKPTD_PROTECT_I_H

#include <stdint.h>

#include "cluster_i.h"
#include "ec.h"
#include "manifest.h"

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

static inline struct ckptd *pj_d(const struct protect_q *q)
{
	return q->cl->d;
}

/* protect.c */
void pj_pump(struct pjob *j);                 /* start what may start */
void pj_fail(struct pjob *j, int err);        /* ends once idle */
void pj_blame(struct pjob *j, uint32_t node, int err);
int pj_wanted(const struct pjob *j);          /* still to protect? */
int pj_holder_same(const struct pjob *j, uint32_t s); /* link up since? */

/* pchoose.c: this attempt's holders into j->hid, j->rec, keep and skip.
 * 0; -EAGAIN: not now (waiting_for says why). */
int pj_choose_holders(struct pjob *j);

/* pstripe.c */
int pj_stripe_submit(struct pjob *j);         /* the next stripe: 0, -ENOMEM */
void pj_ready_flush(struct pjob *j);          /* encoded, not sent: freed */
void pj_scratch_free(struct pjob *j);         /* no task may hold one */

#endif
