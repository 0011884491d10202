/*
 * staging.c - leases of pre-faulted shared memory (see staging.h).
 *
 * A lease is a memfd sized with fallocate(), which allocates and zeroes its
 * pages once, then mapped MAP_POPULATE so that neither ckptd nor the client
 * takes page faults on the data path.  mlock is tried and not required.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include "log.h"
#include "staging.h"

#define LEASE_ALIGN (2u << 20)
#define NOBODY ((uid_t)-1)   /* a lease no client has seen yet */

static int lease_new(struct staging *s, uid_t uid, size_t size,
		     struct lease **out)
{
	struct lease *l;
	int ret;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fd = memfd_create("ckpt-staging", MFD_CLOEXEC);
	if (l->fd < 0) {
		ret = -errno;
		goto out_free;
	}
	if (fallocate(l->fd, 0, 0, size) < 0) {
		ret = -errno;
		goto out_close;
	}
	l->map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, l->fd, 0);
	if (l->map == MAP_FAILED) {
		ret = -errno;
		goto out_close;
	}
	if (s->mlock && mlock(l->map, size) < 0)
		log_printf(LOG_DEBUG, "staging: mlock of %zu bytes failed",
			   size);
	l->size = size;
	l->uid = uid;
	list_init(&l->link);
	s->total += size;
	*out = l;
	return 0;

out_close:
	close(l->fd);
out_free:
	free(l);
	return ret;
}

static void lease_free(struct staging *s, struct lease *l)
{
	s->total -= l->size;
	munmap(l->map, l->size);
	close(l->fd);
	free(l);
}

void staging_init(struct staging *s, uint64_t budget, int mlock)
{
	s->budget = budget;
	s->total = 0;
	s->lent = 0;
	s->mlock = mlock;
	list_init(&s->free);
}

void staging_release(struct staging *s)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &s->free) {
		list_del(pos);
		lease_free(s, list_entry(pos, struct lease, link));
	}
}

/* A free lease of exactly size bytes for uid, or NULL. */
static struct lease *find_free(struct staging *s, uid_t uid, size_t size)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &s->free) {
		struct lease *l = list_entry(pos, struct lease, link);

		if (l->size == size && (l->uid == uid || l->uid == NOBODY))
			return l;
	}
	return NULL;
}

/* Drop free leases (other sizes or uids) until size bytes fit the budget. */
static void reclaim(struct staging *s, size_t size)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &s->free) {
		if (s->total + size <= s->budget)
			return;
		list_del(pos);
		lease_free(s, list_entry(pos, struct lease, link));
	}
}

int staging_get(struct staging *s, uid_t uid, size_t want, struct lease **out)
{
	uint64_t room = s->budget - s->lent;
	size_t size;
	struct lease *l;
	int ret;

	size = (want + LEASE_ALIGN - 1) & ~(size_t)(LEASE_ALIGN - 1);
	if (size < STAGING_MIN)
		size = STAGING_MIN;
	if (size > room)
		size = room & ~(uint64_t)(LEASE_ALIGN - 1);
	if (size < STAGING_MIN)
		return -EAGAIN;
	l = find_free(s, uid, size);
	if (l) {
		list_del(&l->link);
		l->uid = uid;
		goto out_lend;
	}
	reclaim(s, size);
	ret = lease_new(s, uid, size, &l);
	if (ret < 0)
		return ret;
out_lend:
	s->lent += l->size;
	*out = l;
	return 0;
}

int staging_prefault(struct staging *s, size_t lease_size)
{
	size_t size = (lease_size + LEASE_ALIGN - 1) & ~(size_t)(LEASE_ALIGN - 1);
	struct lease *l;
	int ret;

	while (s->total + size <= s->budget) {
		ret = lease_new(s, NOBODY, size, &l);
		if (ret < 0)
			return ret;
		list_add_tail(&s->free, &l->link);
	}
	return 0;
}

void staging_put(struct staging *s, struct lease *l)
{
	s->lent -= l->size;
	list_add_tail(&s->free, &l->link);
}
