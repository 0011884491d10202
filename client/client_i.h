/*
 * client_i.h - libckpt's private structures (not installed).
 *
 * struct ckpt_client holds one connection to ckptd, the staging lease mapped
 * from the memfd ckptd passed, and the ring of reservations in that lease.
 * Writes reserve ring space, copy, and send a WRITE; ckptd answers each with a
 * WACK once the bytes are on disk, which frees the space.  Reservations are
 * released strictly in order (a FIFO), so the ring never fragments.
 *
 * Locking: c->mu serialises every use of the socket, the ring and the version
 * list, with one exception: a writer copies into a reservation it holds
 * without c->mu (write.c, copy_send()), so that writers on several
 * threads of one client copy at once.  While any such copy is running
 * (c->copying), the reservation keeps the lease, and a writer that finds
 * the ring full with no WRITE in flight waits on c->ring_cv for the
 * copier's WRITE instead of failing (never for buffers ckpt_buf_get()
 * lent: only their holder gives them back, and it may be the one waiting,
 * or waiting for the waiter).  While copies run, buffers are lent or
 * threads wait
 * (ring_busy()), ckpt_staging_release() answers -EBUSY.  A commit or
 * abort sets v->sealing and waits for the writes of its version in
 * progress (v->writers) to send all their pieces, so that a write is in
 * the version whole, or (begun after the commit began) refused with
 * -CKPT_ESEALED without sending anything; namespace calls and
 * ckpt_buf_submit() check the same under mu, just before they send, since
 * ckptd gives a committed version's handle to the next version begun.
 * ckpt_wait*() use a private connection and take no lock.
 */
#ifndef CKPT_CLIENT_I_H
#define CKPT_CLIENT_I_H

#include <pthread.h>
#include <stdint.h>
#include <sys/un.h>

#include "ckpt.h"
#include "list.h"
#include "proto.h"

/* A reservation is the library's while a copy or a READ fills it (OWN), or
 * the caller's between ckpt_buf_get() and ckpt_buf_submit() or
 * ckpt_buf_cancel() (LENT): only a LENT one answers to a caller's pointer,
 * so that a stale one cannot reach a buffer the library is filling. */
enum resv_state { RESV_FREE = 0, RESV_OWN, RESV_LENT, RESV_SENT, RESV_DONE };

struct resv {
	uint64_t start;           /* ring byte counter at the start */
	uint64_t len;             /* bytes, 4 KiB multiple (waste included) */
	uint32_t id;              /* WRITE id once sent */
	uint32_t serial;          /* the version's serial */
	uint8_t state;            /* enum resv_state */
};

struct async_req {
	struct list link;
	struct ckpt_version *v;
	char *path;               /* owned */
	const void *buf;
	size_t len;
	uint64_t off;
	ckpt_done_fn done;
	void *arg;
};

struct ckpt_client {
	pthread_mutex_t mu;
	int fd;
	uint32_t seq;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int broken;               /* the connection failed: every call errs */

	int lease_fd;
	uint8_t *map;             /* staging lease, size bytes */
	size_t size;
	size_t piece;             /* largest WRITE ckptd takes */
	int passed_fd;            /* fd received with the last frame, or -1 */
	uint64_t lease_want;      /* bytes to ask for (ckpt_staging_request);
				   * 0: $CKPT_STAGING or ckptd's default */
	uint32_t hello_seq;       /* seq of the HELLO waiting for its lease */
	int hello_err;            /* how the last HELLO failed, once */

	uint64_t head, tail;      /* ring counters; head - tail bytes in use */
	struct resv *fifo;        /* circular, fcap entries */
	uint32_t ffront, fcount, fcap;
	uint32_t next_id;
	uint32_t next_serial;
	uint32_t copying;         /* copies running without mu (see above) */
	uint32_t ring_waiters;    /* threads waiting on ring_cv */
	pthread_cond_t ring_cv;   /* a copy ended: its WRITE is sent */

	uint8_t *rbuf;            /* one received frame */
	struct list versions;

	/* ckpt_write_async() worker, started on first use */
	pthread_t thr;
	int thr_started, thr_stop;
	pthread_cond_t cv;        /* work queued or stop */
	pthread_cond_t done_cv;   /* an async request finished */
	struct list queue;
};

struct ckpt_version {
	struct list link;         /* in client->versions */
	struct ckpt_client *c;
	uint32_t handle;          /* ckptd's writer handle */
	uint32_t serial;          /* unique in the client */
	int committed;
	int sealing;              /* a commit or abort is waiting for its
				   * writers: no write or namespace call
				   * starts any more (-CKPT_ESEALED) */
	int err;                  /* first error of a background write */
	uint32_t async_pending;
	int async_err;
	uint32_t writers;         /* ckpt_write()s of it in progress (all of
				   * their pieces), on any thread */
	uint64_t stall_ns;        /* its writes were blocked, in all (sent
				   * with the COMMIT) */
	uint64_t stall_staging_ns;/* of which waiting for the lease */
	char job[CKPT_JOB_MAX + 1];
	char name[CKPT_VERSION_MAX + 1];
};

/* client.c: the connection */
int cl_connect_fd(const char *path, int *out);
/* Send req and receive its reply into *rep (WACKs that arrive meanwhile are
 * handled).  The payload after the fixed fields is left in *rest, valid
 * until the next call.  timeout_ms < 0 waits forever.  0, or -errno; the
 * reply's status is returned as is. */
int cl_rpc(struct ckpt_client *c, struct proto_msg *req,
	   struct proto_msg *rep, struct dec *rest, int timeout_ms);
int cl_send(struct ckpt_client *c, struct proto_msg *m);
/* Receive the next frame that answers a call into *rep, handling WACKs, a
 * lease's HELLO reply and a refusal on the way (as cl_rpc; replies to other
 * calls are the caller's to match by seq).  deadline_ms on the monotonic
 * clock in ms, < 0 for none.  0 or -errno. */
int cl_reply(struct ckpt_client *c, struct proto_msg *rep, struct dec *rest,
	     int64_t deadline_ms);
/* Read and handle one frame (blocking).  0 or -errno. */
int cl_pump(struct ckpt_client *c);
/* Take the lease (see ckpt_staging_timed), waiting as long as ckptd lets
 * it wait. */
int cl_ensure_lease(struct ckpt_client *c);

/* copy.c: copy into staging with streaming stores (see there). */
void cl_copy(void *dst, const void *src, size_t n);

/* ring.c: reservations in the lease */
/* Reserve len bytes as state (RESV_OWN or RESV_LENT), waiting for WACKs (cl_pump(): a frame that answers a
 * call is dropped on the way) while the ring is full, and on c->ring_cv for
 * the copies of other threads (c->copying) while those are all that fill
 * it.  -ENOBUFS when only lent buffers (and done ones) fill it. */
int ring_reserve(struct ckpt_client *c, size_t len, uint32_t serial,
		 uint8_t state, uint64_t *off);
/* Whether ring_reserve(len) would take its bytes without waiting. */
int ring_fits(const struct ckpt_client *c, size_t len);
void ring_done(struct ckpt_client *c, uint64_t off);
/* Give back every buffer still lent for the version of serial serial. */
void ring_cancel_lent(struct ckpt_client *c, uint32_t serial);
/* The reservation at ring offset off not yet sent or done (OWN or LENT),
 * or NULL; ring_find_lent() only one LENT for the version of serial. */
struct resv *ring_find_off(struct ckpt_client *c, uint64_t off);
struct resv *ring_find_lent(struct ckpt_client *c, uint64_t off,
			    uint32_t serial);
void ring_wack(struct ckpt_client *c, uint32_t id, int status);
/* Wait until every sent write is acknowledged. */
int ring_drain(struct ckpt_client *c);
/* 1 if a reservation is held, not yet sent or done: a zero-copy buffer
 * lent to the caller, or one the library fills. */
int ring_held(struct ckpt_client *c);
/* 1 if the lease is in use without mu: a reservation held, a copy
 * running, or a thread waiting for one (the lease must not go). */
int ring_busy(struct ckpt_client *c);
/* Forget the ring (its lease was given back; nothing is in flight). */
void ring_reset(struct ckpt_client *c);

#endif
