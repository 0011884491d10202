/*
 * staging.c - leases of pre-faulted shared memory (see staging.h).
 *
 * A lease is a memfd sized with fallocate(), which allocates and zeroes its
 * pages once, then mapped MAP_POPULATE so that neither ckptd nor the client
 * takes page faults on the data path.  mlock is tried and not required.
 * Making a lease costs about 1 s per GiB of ordinary pages: staging_fill()
 * makes the budget's leases one after another on a thread of its own at
 * idle priority (SCHED_IDLE), so that ckptd serves from its start and the
 * fill takes only CPU nobody else wants.
 *
 * Lent leases are kept on a list too, so that what a uid holds is a walk of
 * it: there are at most budget / STAGING_MIN leases, a few hundred.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include "log.h"
#include "loop.h"
#include "pool.h"
#include "staging.h"

#define LEASE_ALIGN (2u << 20)
/* The pool of 2 MiB pages, whatever the default huge page size is. */
#define HUGE_DIR "/sys/kernel/mm/hugepages/hugepages-2048kB"
#ifndef MFD_HUGE_2MB                 /* linux/memfd.h; glibc lacks it */
#define MFD_HUGE_2MB (21u << 26)     /* log2(2 MiB) << MFD_HUGE_SHIFT */
#endif
#define NOBODY ((uid_t)-1)   /* a lease no client has seen yet */

/* (Re-)register l with the loop: the slot names the pages its memfd has
 * now.  A client may have punched some out (fallocate, MADV_REMOVE: its
 * seals do not stop that), and the old slot would still write the pinned
 * old pages while the checksum is taken from the mapping, which sees the
 * new ones; so a lease is registered afresh each time it is lent again. */
static void lease_register(struct staging *s, struct lease *l)
{
	int ret;

	if (!s->loop)
		return;
	loop_buf_del(s->loop, l->buf);
	l->buf = -1;
	ret = loop_buf_add(s->loop, l->map, l->size);
	if (ret >= 0) {
		l->buf = ret;
		return;
	}
	if (!s->unregistered++)
		log_printf(LOG_NOTICE, "staging: a lease of %zu bytes is not registered with io_uring (%s); disk writes from it pin its pages each time, which costs CPU",
			   l->size, ret == -ENOSPC ? "no slot left"
				    : strerror(-ret));
}

/* A sealed memfd of size bytes, its pages allocated and mapped at *map: of
 * huge pages from the kernel's pool if huge (-ENOSPC or -ENOMEM when the
 * pool has too few, the kernel's error where it has no hugetlbfs or cannot
 * map one, as under valgrind, which places mappings itself), else of
 * ordinary ones.  The fd or -errno. */
static int lease_memfd(size_t size, int huge, uint8_t **map)
{
	unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	int fd, ret;

	if (huge)
		flags |= MFD_HUGETLB | MFD_HUGE_2MB;
	fd = memfd_create("ckpt-staging", flags);
	if (fd < 0)
		return -errno;
	/* hugetlbfs stops allocating at any signal (EINTR, pages kept so
	 * far): go on, as many times as it takes.  Sealed at its size: a
	 * client holding the fd cannot grow it. */
	while ((ret = fallocate(fd, 0, 0, size)) < 0 && errno == EINTR)
		;
	if (ret < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		goto out_errno;
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, 0);
	if (*map == MAP_FAILED)
		goto out_errno;
	return fd;

out_errno:
	ret = -errno;
	close(fd);
	return ret;
}

/* A count of the pool of 2 MiB pages (HUGE_DIR/name), or -1. */
static long pool_count(const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", HUGE_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/* Whether the pool of 2 MiB pages has size bytes free now that nobody has
 * reserved (none where the kernel has no such pool).  Asked first, so that
 * a lease the pool cannot hold does not take and give back its pages one
 * by one, from everyone else using it. */
static int pool_has(size_t size)
{
	long free = pool_count("free_hugepages");
	long resv = pool_count("resv_hugepages");

	if (free < 0)
		return 0;
	if (resv > 0)
		free -= resv;
	return free >= (long)(size / LEASE_ALIGN);
}

/* A new lease's memfd on huge pages, mapped at *map: the fd, or -errno
 * (-ENOSPC: the pool has too few free now).  Any other error (no
 * hugetlbfs, a mapping the kernel or valgrind refuses, a cgroup's limit)
 * turns huge pages off for good, said once. */
static int lease_huge(struct staging *s, size_t size, uint8_t **map)
{
	int fd;

	if (s->huge_off || !pool_has(size))
		return -ENOSPC;
	fd = lease_memfd(size, 1, map);
	if (fd < 0 && fd != -ENOSPC && fd != -ENOMEM && fd != -EINTR) {
		s->huge_off = 1;
		log_printf(LOG_NOTICE, "staging: huge pages cannot be used (%s): root's leases are of 4 KiB pages",
			   strerror(-fd));
	}
	return fd;
}

/* The fd of a new lease of size bytes, mapped at *map: of huge pages for
 * PAGES_HUGE (-ENOSPC where the pool cannot make it), of huge pages where
 * the pool has them for PAGES_HUGE_OR_SMALL, else of ordinary pages.
 * *huge says which it got. */
enum { PAGES_SMALL, PAGES_HUGE_OR_SMALL, PAGES_HUGE };

static int lease_pages(struct staging *s, size_t size, int pages, int *huge,
		       uint8_t **map)
{
	int fd;

	*huge = 0;
	if (pages != PAGES_SMALL) {
		fd = lease_huge(s, size, map);
		if (fd >= 0 || pages == PAGES_HUGE) {
			*huge = fd >= 0;
			return fd;
		}
		if (!s->huge_refused++ && !s->huge_off)
			log_printf(LOG_INFO, "staging: no lease of %zu MiB on huge pages (the pool of 2 MiB pages has too few free: /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages sizes it): root's leases are of 4 KiB pages until it has room",
				   size >> 20);
	}
	return lease_memfd(size, 0, map);
}

/* A lease of the memfd fd mapped at map (size bytes), registered; NULL
 * (fd closed, map unmapped) without memory.  s->total is the caller's. */
static struct lease *lease_wrap(struct staging *s, int fd, uint8_t *map,
				size_t size, uid_t uid, int huge)
{
	struct lease *l = calloc(1, sizeof(*l));

	if (!l) {
		munmap(map, size);
		close(fd);
		return NULL;
	}
	l->fd = fd;
	l->map = map;
	l->size = size;
	l->uid = uid;
	l->huge = huge;
	l->buf = -1;
	lease_register(s, l);
	list_init(&l->link);
	if (huge)
		s->huge_total += size;
	return l;
}

/* Lock an ordinary lease's pages where asked (huge pages are never
 * swapped); any thread. */
static void lease_lock(unsigned flags, uint8_t *map, size_t size, int huge)
{
	if ((flags & STAGING_MLOCK) && !huge && mlock(map, size) < 0)
		log_printf(LOG_DEBUG, "staging: mlock of %zu bytes failed",
			   size);
}

static int lease_new(struct staging *s, uid_t uid, size_t size, int pages,
		     struct lease **out)
{
	uint8_t *map;
	int fd, huge;

	fd = lease_pages(s, size, pages, &huge, &map);
	if (fd < 0)
		return fd;
	lease_lock(s->flags, map, size, huge);
	*out = lease_wrap(s, fd, map, size, uid, huge);
	if (!*out)
		return -ENOMEM;
	s->total += size;
	return 0;
}

static void lease_free(struct staging *s, struct lease *l)
{
	if (s->loop)
		loop_buf_del(s->loop, l->buf);
	/* Free the pages now: a client that mapped the lease keeps the file
	 * alive, and without this its pages would stay ckptd's, past the
	 * budget (a client taking lease after lease).  Not a lease of huge
	 * pages, which is root's (staging.h): its client (a mount, across a
	 * restart of ckptd) may still copy into it before it finds the
	 * connection gone, and a punched huge page it touches is taken anew
	 * from the pool, SIGBUS when that is empty.  Its pages go back to the
	 * pool when root's client unmaps it. */
	if (!l->huge &&
	    fallocate(l->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
		      l->size) < 0)
		log_printf(LOG_DEBUG, "staging: punching a freed lease: %s",
			   strerror(errno));
	s->total -= l->size;
	if (l->huge)
		s->huge_total -= l->size;
	munmap(l->map, l->size);
	close(l->fd);
	free(l);
}

void staging_init(struct staging *s, uint64_t budget, uint64_t reserve,
		  unsigned flags, struct loop *loop)
{
	s->budget = budget;
	s->reserve = reserve < budget / 2 ? reserve : budget / 2;
	s->total = 0;
	s->lent = 0;
	s->flags = flags;
	s->huge_total = 0;
	s->huge_refused = 0;
	s->huge_off = 0;
	s->loop = loop;
	s->unregistered = 0;
	s->pool = NULL;
	s->filling = 0;
	list_init(&s->free);
	list_init(&s->lent_leases);
}

void staging_release(struct staging *s)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &s->free) {
		list_del(pos);
		lease_free(s, list_entry(pos, struct lease, link));
	}
}

/* Whether uid's new leases are to be of huge pages (staging.h: root's). */
static int huge_for(const struct staging *s, uid_t uid)
{
	return (s->flags & STAGING_HUGE) && uid == 0;
}

/* A free lease of exactly size bytes for uid, or NULL: one of huge pages
 * first for root, never one for another uid.  Never a larger one: a client
 * that asks for a size gets that size (its reads and writes come in pieces
 * of it). */
static struct lease *find_free(struct staging *s, uid_t uid, size_t size)
{
	struct lease *any = NULL;
	struct list *pos;

	for (pos = s->free.next; pos != &s->free; pos = pos->next) {
		struct lease *l = list_entry(pos, struct lease, link);

		if (l->size != size || (l->uid != uid && l->uid != NOBODY) ||
		    (l->huge && uid != 0))
			continue;
		if (l->huge == huge_for(s, uid))
			return l;
		if (!any)
			any = l;
	}
	return any;
}

/* Drop free leases (other sizes or uids) until size bytes fit the budget:
 * those of ordinary pages first, so that root's of huge pages stay. */
static void reclaim(struct staging *s, size_t size)
{
	struct list *pos, *tmp;
	int huge;

	for (huge = 0; huge <= 1; huge++)
		list_for_each_safe(pos, tmp, &s->free) {
			struct lease *l = list_entry(pos, struct lease, link);

			if (s->total + size <= s->budget)
				return;
			if (l->huge != huge)
				continue;
			list_del(pos);
			lease_free(s, l);
		}
}

/* Root found only a free lease l of ordinary pages: one of huge pages in its
 * place where the pool can make it now (l is then freed), else l. */
static struct lease *upgrade(struct staging *s, struct lease *l)
{
	struct lease *h;

	if (lease_new(s, NOBODY, l->size, PAGES_HUGE, &h) < 0)
		return l;
	list_del(&l->link);
	lease_free(s, l);
	list_add_tail(&s->free, &h->link);
	return h;
}

uint64_t staging_lent_to(const struct staging *s, uid_t uid)
{
	const struct list *pos;
	uint64_t n = 0;

	for (pos = s->lent_leases.next; pos != &s->lent_leases; pos = pos->next) {
		const struct lease *l = list_entry(pos, struct lease, link);

		if (l->uid == uid)
			n += l->size;
	}
	return n;
}

int staging_get_share(struct staging *s, uid_t uid, size_t want,
		      uint64_t share, struct lease **out)
{
	uint64_t room = s->budget - s->lent, mine = UINT64_MAX;
	size_t size;
	struct lease *l;
	int ret;

	size = (want + LEASE_ALIGN - 1) & ~(size_t)(LEASE_ALIGN - 1);
	if (size < STAGING_MIN)
		size = STAGING_MIN;
	if (share) {
		/* Uids with a share never take root's reserve. */
		room = s->lent + s->reserve < s->budget ?
		       s->budget - s->lent - s->reserve : 0;
		mine = staging_lent_to(s, uid);
		mine = mine < share ? share - mine : 0;
		if (size > mine)
			size = mine & ~(uint64_t)(LEASE_ALIGN - 1);
		if (size < STAGING_MIN)
			return -EDQUOT;
	}
	if (size > room)
		size = room & ~(uint64_t)(LEASE_ALIGN - 1);
	if (size < STAGING_MIN)
		return -EAGAIN;
	l = find_free(s, uid, size);
	if (l && !l->huge && huge_for(s, uid))
		l = upgrade(s, l);
	if (l) {
		list_del(&l->link);
		if (l->uid != NOBODY)   /* lent before: see lease_register() */
			lease_register(s, l);
		l->uid = uid;
		goto out_lend;
	}
	reclaim(s, size);
	ret = lease_new(s, uid, size, huge_for(s, uid) ? PAGES_HUGE_OR_SMALL :
			PAGES_SMALL, &l);
	if (ret < 0)
		return ret;
out_lend:
	s->lent += l->size;
	list_add_tail(&s->lent_leases, &l->link);
	*out = l;
	return 0;
}

int staging_prefault(struct staging *s, size_t lease_size, uint64_t bytes)
{
	size_t size = (lease_size + LEASE_ALIGN - 1) & ~(size_t)(LEASE_ALIGN - 1);
	struct lease *l;
	int ret;

	if (bytes > s->budget)
		bytes = s->budget;
	while (s->total + size <= bytes) {
		/* Root's reserve first, while the pool has room for it. */
		ret = lease_new(s, NOBODY, size, (s->flags & STAGING_HUGE) &&
				s->huge_total < s->reserve && !s->huge_refused ?
				PAGES_HUGE_OR_SMALL : PAGES_SMALL, &l);
		if (ret < 0)
			return ret;
		list_add_tail(&s->free, &l->link);
	}
	return 0;
}

int staging_prefault_huge(struct staging *s, size_t lease_size)
{
	size_t size = (lease_size + LEASE_ALIGN - 1) & ~(size_t)(LEASE_ALIGN - 1);
	struct lease *l;
	int n = 0, ret;

	while ((s->flags & STAGING_HUGE) && s->total + size <= s->reserve &&
	       s->total + size <= s->budget) {
		ret = lease_new(s, NOBODY, size, PAGES_HUGE, &l);
		if (ret < 0) {
			if (ret == -ENOSPC && !s->huge_refused++ && !s->huge_off)
				log_printf(LOG_INFO, "staging: no lease of %zu MiB on huge pages (the pool of 2 MiB pages has too few free: /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages sizes it): root's leases are of 4 KiB pages until it has room",
					   size >> 20);
			break;
		}
		list_add_tail(&s->free, &l->link);
		n++;
	}
	return n;
}

/* ---- the fill, on a worker --------------------------------------------- */

struct lease_make {             /* one lease being made on the pool */
	struct pool_task pt;
	struct staging *s;
	size_t size;
	unsigned flags;
	int fd;
	uint8_t *map;
};

static void fill_next(struct staging *s);

static int make_run(struct pool_task *t)
{
	struct lease_make *lm = (struct lease_make *)t;
	struct sched_param sp = { .sched_priority = 0 };

	/* the fill's own thread: it stays there */
	sched_setscheduler(0, SCHED_IDLE, &sp);

	lm->fd = lease_memfd(lm->size, 0, &lm->map);
	if (lm->fd < 0)
		return lm->fd;
	lease_lock(lm->flags, lm->map, lm->size, 0);
	return 0;
}

static void make_done(struct pool_task *t)
{
	struct lease_make *lm = (struct lease_make *)t;
	struct staging *s = lm->s;
	struct lease *l;

	s->filling = 0;
	l = t->result < 0 ? NULL
	    : lease_wrap(s, lm->fd, lm->map, lm->size, NOBODY, 0);
	if (!l) {
		s->total -= lm->size;    /* counted when it was asked for */
		log_printf(LOG_WARNING, "staging: a lease of %zu MiB cannot be made ahead (%s): %llu of %llu MiB are made; the rest is made as clients ask",
			   lm->size >> 20, strerror(t->result < 0 ? -t->result
							       : ENOMEM),
			   (unsigned long long)(s->total >> 20),
			   (unsigned long long)(s->budget >> 20));
		s->filling = -1;         /* over */
	} else if (s->total > s->budget) {
		/* a client's lease was made meanwhile, past what is left */
		lease_free(s, l);
	} else {
		list_add_tail(&s->free, &l->link);
	}
	free(lm);
	fill_next(s);
}

static void make_drop(struct pool_task *t)
{
	struct lease_make *lm = (struct lease_make *)t;

	/* at shutdown: made or not, it goes */
	if (lm->fd >= 0) {
		munmap(lm->map, lm->size);
		close(lm->fd);
	}
	lm->s->total -= lm->size;
	lm->s->filling = -1;
	free(lm);
}

static void fill_next(struct staging *s)
{
	struct lease_make *lm;

	if (!s->pool || s->filling)
		return;
	if (s->total + s->fill_size > s->budget) {
		log_printf(LOG_INFO, "staging: %llu MiB of leases made",
			   (unsigned long long)(s->total >> 20));
		s->filling = -1;
		return;
	}
	lm = calloc(1, sizeof(*lm));
	if (!lm) {
		s->filling = -1;
		return;
	}
	lm->s = s;
	lm->size = s->fill_size;
	lm->flags = s->flags;
	lm->fd = -1;
	s->total += lm->size;     /* the budget holds it while it is made */
	s->filling = 1;
	pool_task_init(&lm->pt, make_run, make_done, make_drop);
	pool_submit(s->pool, &lm->pt, 0);
}

int staging_fill(struct staging *s, struct loop *loop, size_t lease_size)
{
	int ret;

	s->fill_size = (lease_size + LEASE_ALIGN - 1) &
		       ~(size_t)(LEASE_ALIGN - 1);
	if (s->total + s->fill_size > s->budget)
		return 0;                /* nothing left to make */
	ret = pool_open(&s->pool, loop, 1, NULL);
	if (ret < 0) {
		s->pool = NULL;
		return ret;
	}
	fill_next(s);
	return 0;
}

void staging_fill_stop(struct staging *s)
{
	pool_close(s->pool);
	s->pool = NULL;
	s->filling = -1;
}

void staging_put(struct staging *s, struct lease *l)
{
	s->lent -= l->size;
	list_del(&l->link);
	list_add_tail(&s->free, &l->link);
}

#define HOLDERS_MAX 8

struct holder {
	uid_t uid;
	uint64_t bytes;
	unsigned leases;
};

/* Add l to the tally h[0..*n) (at most HOLDERS_MAX uids). */
static void tally(struct holder *h, unsigned *n, const struct lease *l)
{
	unsigned i;

	for (i = 0; i < *n && h[i].uid != l->uid; i++)
		;
	if (i == *n) {
		if (*n == HOLDERS_MAX)
			return;
		h[(*n)++] = (struct holder){ .uid = l->uid };
	}
	h[i].bytes += l->size;
	h[i].leases++;
}

void staging_holders(const struct staging *s, char *buf, size_t len)
{
	struct holder h[HOLDERS_MAX], t;
	const struct list *pos;
	unsigned n = 0, i, j;
	size_t off = 0;
	int w;

	for (pos = s->lent_leases.next; pos != &s->lent_leases; pos = pos->next)
		tally(h, &n, list_entry(pos, struct lease, link));
	for (i = 1; i < n; i++)         /* largest first; n is small */
		for (j = i; j > 0 && h[j].bytes > h[j - 1].bytes; j--) {
			t = h[j];
			h[j] = h[j - 1];
			h[j - 1] = t;
		}
	snprintf(buf, len, "nobody");
	for (i = 0; i < n && off < len; i++) {
		w = snprintf(buf + off, len - off, "%suid %u: %llu MiB in %u lease%s",
			     i ? ", " : "", (unsigned)h[i].uid,
			     (unsigned long long)(h[i].bytes >> 20), h[i].leases,
			     h[i].leases == 1 ? "" : "s");
		if (w < 0)
			break;
		off += (size_t)w;
	}
}
