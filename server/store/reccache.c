/*
 * reccache.c - records read whole and checked, shared (see reccache.h).
 *
 * Entries are in one list, least recently used first, under one mutex; a
 * condition variable wakes the readers that wait for an entry being read.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "crc32c.h"
#include "list.h"
#include "reccache.h"
#include "sys.h"

struct rcent {
	struct list link;         /* in c->lru */
	uint64_t open_id;
	struct man_rec rec;       /* seg, seg_off, len, crc: the key */
	uint8_t *buf;
	uint32_t refs;
	int ready;                /* read and checked (or failed: err) */
	int err;
};

struct reccache {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct list lru;
	uint64_t max;
	uint64_t idle;            /* bytes of entries nobody uses */
	uint64_t hits, loads;
};

static int same(const struct rcent *e, uint64_t open_id,
		const struct man_rec *r)
{
	return e->open_id == open_id && e->rec.seg == r->seg &&
	       e->rec.seg_off == r->seg_off && e->rec.len == r->len &&
	       e->rec.crc == r->crc;
}

static void ent_free(struct reccache *c, struct rcent *e)
{
	list_del(&e->link);
	free(e->buf);
	free(e);
}

/* Drop entries nobody uses, oldest first, while over the budget; never the
 * last in the list, the one released (or asked for) last: the one the next
 * piece of a large record wants. */
static void trim(struct reccache *c)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &c->lru) {
		struct rcent *e = list_entry(pos, struct rcent, link);

		if (c->idle <= c->max || pos == c->lru.prev)
			return;
		if (e->refs)
			continue;
		c->idle -= e->rec.len;
		ent_free(c, e);
	}
}

int reccache_new(uint64_t max, struct reccache **out)
{
	struct reccache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (pthread_mutex_init(&c->mu, NULL)) {
		free(c);
		return -ENOMEM;
	}
	if (pthread_cond_init(&c->cv, NULL)) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		return -ENOMEM;
	}
	list_init(&c->lru);
	c->max = max;
	*out = c;
	return 0;
}

void reccache_free(struct reccache *c)
{
	struct list *pos, *tmp;

	if (!c)
		return;
	list_for_each_safe(pos, tmp, &c->lru)
		ent_free(c, list_entry(pos, struct rcent, link));
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Read and check e's record from fd (no lock held). */
static int load(struct rcent *e, int fd)
{
	int ret = sys_pread_all(fd, e->buf, e->rec.len, (off_t)e->rec.seg_off);

	if (ret == 0 && crc32c(e->buf, e->rec.len) != e->rec.crc)
		ret = -CKPT_ECORRUPT;
	return ret;
}

int reccache_read(struct reccache *c, uint64_t open_id,
		  const struct man_rec *r, int fd, struct rcent **out)
{
	struct rcent *e = NULL;
	struct list *pos;
	int ret;

	*out = NULL;
	pthread_mutex_lock(&c->mu);
	list_for_each(pos, &c->lru)
		if (same(list_entry(pos, struct rcent, link), open_id, r)) {
			e = list_entry(pos, struct rcent, link);
			break;
		}
	if (e) {
		if (!e->refs++ && e->ready)
			c->idle -= e->rec.len;
		list_del(&e->link);             /* most recently used */
		list_add_tail(&c->lru, &e->link);
		while (!e->ready)
			pthread_cond_wait(&c->cv, &c->mu);
		ret = e->err;
		if (ret == 0)
			c->hits++;
		pthread_mutex_unlock(&c->mu);
		if (ret < 0) {
			reccache_put(c, e);
			return ret;
		}
		*out = e;
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (e)
		e->buf = malloc(r->len ? r->len : 1);
	if (!e || !e->buf) {
		pthread_mutex_unlock(&c->mu);
		free(e);
		return -ENOMEM;
	}
	e->open_id = open_id;
	e->rec = *r;
	e->refs = 1;
	list_add_tail(&c->lru, &e->link);
	c->loads++;
	pthread_mutex_unlock(&c->mu);

	ret = load(e, fd);

	pthread_mutex_lock(&c->mu);
	e->ready = 1;
	e->err = ret;
	if (ret < 0) {
		/* Found by no one from now on: the next reader reads anew
		 * (those waiting already share the failure). */
		list_del(&e->link);
		list_init(&e->link);
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (ret < 0) {
		reccache_put(c, e);
		return ret;
	}
	*out = e;
	return 0;
}

const uint8_t *reccache_bytes(const struct rcent *e)
{
	return e->buf;
}

void reccache_put(struct reccache *c, struct rcent *e)
{
	pthread_mutex_lock(&c->mu);
	if (--e->refs == 0) {
		if (e->err) {
			ent_free(c, e);         /* a failed read is not kept */
		} else {
			c->idle += e->rec.len;
			list_del(&e->link);     /* released last: kept */
			list_add_tail(&c->lru, &e->link);
		}
	}
	trim(c);
	pthread_mutex_unlock(&c->mu);
}

void reccache_counts(struct reccache *c, uint64_t *hits, uint64_t *loads)
{
	pthread_mutex_lock(&c->mu);
	*hits = c->hits;
	*loads = c->loads;
	pthread_mutex_unlock(&c->mu);
}
