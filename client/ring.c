/*
 * ring.c - reservations in the staging lease.
 *
 * The lease is used as a ring.  A reservation takes len bytes (a 4 KiB
 * multiple) at the head; one that would cross the end first wastes the tail
 * of the ring with a reservation that is already done.  Reservations are
 * freed in FIFO order, when ckptd's WACK says the bytes are on disk (or at
 * once, for a cancelled zero-copy buffer or a finished read).  While the
 * ring is full the caller waits for WACKs, which is the backpressure of the
 * whole write path, or for other threads' copies.
 */
#include <errno.h>
#include <stdlib.h>

#include "client_i.h"

#define ALIGN 4096u

static struct resv *at(struct ckpt_client *c, uint32_t i)
{
	return &c->fifo[(c->ffront + i) % c->fcap];
}

static int fifo_push(struct ckpt_client *c, uint64_t len, uint8_t state,
		     uint32_t serial)
{
	struct resv *r;
	uint32_t i;

	if (c->fcount == c->fcap) {
		uint32_t cap = c->fcap ? c->fcap * 2 : 64;
		struct resv *n = malloc(cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (i = 0; i < c->fcount; i++)
			n[i] = *at(c, i);
		free(c->fifo);
		c->fifo = n;
		c->fcap = cap;
		c->ffront = 0;
	}
	r = at(c, c->fcount++);
	*r = (struct resv){ .start = c->head, .len = len, .state = state,
			    .serial = serial };
	c->head += len;
	return 0;
}

/* Free the done reservations at the front. */
static void fifo_pop(struct ckpt_client *c)
{
	while (c->fcount && at(c, 0)->state == RESV_DONE) {
		c->tail = at(c, 0)->start + at(c, 0)->len;
		c->ffront = (c->ffront + 1) % c->fcap;
		c->fcount--;
	}
	if (!c->fcount)
		c->tail = c->head;
}

static int any_sent(struct ckpt_client *c)
{
	uint32_t i;

	for (i = 0; i < c->fcount; i++)
		if (at(c, i)->state == RESV_SENT)
			return 1;
	return 0;
}


/* Whether n bytes (a 4 KiB multiple) fit at the head now; *waste is the
 * tail of the ring they would skip. */
static int fits(const struct ckpt_client *c, uint64_t n, uint64_t *waste)
{
	uint64_t pos = c->head % c->size;

	*waste = pos + n > c->size ? c->size - pos : 0;
	return c->size - (c->head - c->tail) >= n + *waste;
}

int ring_fits(const struct ckpt_client *c, size_t len)
{
	uint64_t waste;

	return fits(c, (len + ALIGN - 1) & ~(uint64_t)(ALIGN - 1), &waste);
}

int ring_reserve(struct ckpt_client *c, size_t len, uint32_t serial,
		 uint8_t state, uint64_t *off)
{
	uint64_t n = (len + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
	uint64_t pos, waste;
	int ret;

	if (n > c->size)
		return -EINVAL;
	for (;;) {
		if (fits(c, n, &waste))
			break;
		/* Only WACKs free space.  With nothing in flight, either
		 * other threads are copying (their WRITEs come next) or lent
		 * buffers fill it, which only their holders give back: no
		 * wait for those (the holder may be this thread, or wait for
		 * it). */
		if (!any_sent(c)) {
			if (!c->copying)
				return -ENOBUFS;
			c->ring_waiters++;
			pthread_cond_wait(&c->ring_cv, &c->mu);
			c->ring_waiters--;
			continue;
		}
		ret = cl_pump(c);
		if (ret < 0)
			return ret;
	}
	pos = c->head % c->size;
	if (waste) {
		ret = fifo_push(c, waste, RESV_DONE, 0);
		if (ret < 0)
			return ret;
		pos = 0;
	}
	ret = fifo_push(c, n, state, serial);
	if (ret < 0)
		return ret;
	*off = pos;
	return 0;
}

static int held(const struct resv *r)
{
	return r->state == RESV_OWN || r->state == RESV_LENT;
}

struct resv *ring_find_off(struct ckpt_client *c, uint64_t off)
{
	uint32_t i;

	for (i = 0; i < c->fcount; i++) {
		struct resv *r = at(c, i);

		if (held(r) && r->start % c->size == off)
			return r;
	}
	return NULL;
}

struct resv *ring_find_lent(struct ckpt_client *c, uint64_t off,
			    uint32_t serial)
{
	struct resv *r = ring_find_off(c, off);

	return r && r->state == RESV_LENT && r->serial == serial ? r : NULL;
}

void ring_done(struct ckpt_client *c, uint64_t off)
{
	struct resv *r = ring_find_off(c, off);

	if (r)
		r->state = RESV_DONE;
	fifo_pop(c);
}

void ring_cancel_lent(struct ckpt_client *c, uint32_t serial)
{
	uint32_t i;

	for (i = 0; i < c->fcount; i++) {
		struct resv *r = at(c, i);

		if (r->state == RESV_LENT && r->serial == serial)
			r->state = RESV_DONE;
	}
	fifo_pop(c);
}

void ring_wack(struct ckpt_client *c, uint32_t id, int status)
{
	struct list *pos, *tmp;
	struct resv *r = NULL;
	uint32_t i;

	for (i = 0; i < c->fcount; i++) {
		r = at(c, i);
		if (r->state == RESV_SENT && r->id == id)
			break;
	}
	if (i == c->fcount)
		return;
	r->state = RESV_DONE;
	if (status < 0) {
		list_for_each_safe(pos, tmp, &c->versions) {
			struct ckpt_version *v =
				list_entry(pos, struct ckpt_version, link);

			if (v->serial == r->serial && !v->err)
				v->err = status;
		}
	}
	fifo_pop(c);
}

int ring_drain(struct ckpt_client *c)
{
	int ret;

	while (any_sent(c)) {
		ret = cl_pump(c);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int ring_held(struct ckpt_client *c)
{
	uint32_t i;

	for (i = 0; i < c->fcount; i++)
		if (held(at(c, i)))
			return 1;
	return 0;
}

int ring_busy(struct ckpt_client *c)
{
	return ring_held(c) || c->copying || c->ring_waiters;
}

void ring_reset(struct ckpt_client *c)
{
	c->head = c->tail = 0;
	c->ffront = c->fcount = 0;
}
