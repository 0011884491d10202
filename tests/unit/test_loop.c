/*
 * test_loop.c - registered buffers of ckptd's io_uring (server/core/loop.c) and
 * the staging leases that use them (server/core/staging.c): a write_fixed from a
 * registered buffer lands on disk byte for byte, slots run out with -ENOSPC
 * and come back when freed, unregistering is a no-op where there is nothing
 * to do (after loop_release() too), each lease gets a slot that it gives
 * back when freed, and a lease lent again is registered afresh (a client
 * may have punched its pages out).  Skipped (77) where memory cannot be
 * pinned.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "unit.h"

#include "loop.h"
#include "pool.h"
#include "staging.h"

struct wr {
	struct loop_op op;
	struct loop *l;
	int res;
};

static void wr_done(struct loop_op *op, int res)
{
	struct wr *w = (struct wr *)op;

	w->res = res;
	w->l->stop = 1;
}

/* Write len bytes of the registered p (slot) at off of fd through the loop;
 * the write's result. */
static int write_fixed(struct loop *l, int fd, void *p, unsigned len,
		       off_t off, int slot)
{
	struct wr w = { .op.fn = wr_done, .l = l, .res = -EINPROGRESS };
	struct io_uring_sqe *sqe = loop_sqe(l, &w.op);

	io_uring_prep_write_fixed(sqe, fd, p, len, off, slot);
	l->stop = 0;
	if (loop_run(l) < 0)
		return -EIO;
	return w.res;
}

static void test_write_fixed(void)
{
	const unsigned len = 1u << 20;
	char dir[256], path[300];
	struct loop l;
	uint8_t *p = NULL, *back;
	unsigned i;
	int slot, fd;

	CU_ASSERT_FATAL(unit_mkdtemp(dir, sizeof(dir), "loop") != NULL);
	snprintf(path, sizeof(path), "%s/f", dir);
	CU_ASSERT_FATAL(loop_init(&l, 8) == 0);
	CU_ASSERT_FATAL(l.nbufs == LOOP_BUFS);
	CU_ASSERT_FATAL(posix_memalign((void **)&p, 4096, len) == 0);
	back = malloc(len);
	CU_ASSERT_FATAL(back != NULL);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + i / 4096);
	slot = loop_buf_add(&l, p, len);
	CU_ASSERT_FATAL(slot >= 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	/* All of it, then a piece from inside it at another offset. */
	CU_ASSERT_EQUAL(write_fixed(&l, fd, p, len, 0, slot), (int)len);
	CU_ASSERT_EQUAL(write_fixed(&l, fd, p + 8192, 4096, len, slot), 4096);
	CU_ASSERT_EQUAL(pread(fd, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, p, len) == 0);
	CU_ASSERT_EQUAL(pread(fd, back, 4096, len), 4096);
	CU_ASSERT(memcmp(back, p + 8192, 4096) == 0);
	/* Outside the registered range: the kernel refuses it. */
	CU_ASSERT(write_fixed(&l, fd, p + len, 4096, 0, slot) < 0);
	loop_buf_del(&l, slot);
	/* An emptied slot names nothing. */
	CU_ASSERT(write_fixed(&l, fd, p, 4096, 0, slot) < 0);
	close(fd);
	unlink(path);
	rmdir(dir);
	loop_release(&l);
	free(back);
	free(p);
}

static void test_slots(void)
{
	struct loop l;
	uint8_t *p = NULL;
	unsigned i;
	int ok = 1;

	CU_ASSERT_FATAL(loop_init(&l, 8) == 0);
	CU_ASSERT_FATAL(posix_memalign((void **)&p, 4096, 4096) == 0);
	CU_ASSERT_EQUAL(loop_buf_add(&l, p, 0), -EINVAL);
	CU_ASSERT_EQUAL(loop_buf_add(&l, p, LOOP_BUF_MAX + 4096), -EINVAL);
	for (i = 0; i < LOOP_BUFS; i++)
		ok &= loop_buf_add(&l, p, 4096) == (int)i;
	CU_ASSERT(ok);
	CU_ASSERT_EQUAL(loop_buf_add(&l, p, 4096), -ENOSPC);
	loop_buf_del(&l, 7);
	loop_buf_del(&l, 7);                /* twice: nothing left to do */
	loop_buf_del(&l, -1);
	loop_buf_del(&l, LOOP_BUFS);
	CU_ASSERT_EQUAL(loop_buf_add(&l, p, 4096), 7);
	CU_ASSERT_EQUAL(loop_buf_add(&l, p, 4096), -ENOSPC);
	loop_release(&l);
	loop_buf_del(&l, 3);                /* the ring is gone: a no-op */
	free(p);
}

static void test_leases(void)
{
	struct staging s;
	struct lease *a, *b;
	struct loop l;
	int sa, sb;

	CU_ASSERT_FATAL(loop_init(&l, 8) == 0);
	staging_init(&s, 64u << 20, 0, 0, &l);
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &a) == 0);
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &b) == 0);
	sa = a->buf;
	sb = b->buf;
	CU_ASSERT_FATAL(sa >= 0 && sb >= 0 && sa != sb);
	CU_ASSERT(l.buf_used[sa] && l.buf_used[sb]);
	staging_put(&s, a);
	staging_put(&s, b);
	staging_release(&s);                /* frees both: slots come back */
	CU_ASSERT(!l.buf_used[sa] && !l.buf_used[sb]);
	loop_release(&l);
}

/* A client punches pages out of its lease (its seals allow that) and
 * writes new bytes; the next time the lease is lent, a write_fixed from it
 * must write what the mapping shows (the bytes the checksum is taken
 * from), not the pages the old registration pinned. */
static void test_lease_punched(void)
{
	const size_t len = 1u << 20;
	char dir[256], path[300];
	struct staging s;
	struct lease *a, *again;
	struct loop l;
	uint8_t *back;
	int fd;

	CU_ASSERT_FATAL(unit_mkdtemp(dir, sizeof(dir), "loop") != NULL);
	snprintf(path, sizeof(path), "%s/f", dir);
	back = malloc(len);
	CU_ASSERT_FATAL(back != NULL);
	CU_ASSERT_FATAL(loop_init(&l, 8) == 0);
	staging_init(&s, 16u << 20, 0, 0, &l);
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &a) == 0);
	memset(a->map, 'A', len);
	staging_put(&s, a);
	CU_ASSERT_FATAL(fallocate(a->fd, FALLOC_FL_PUNCH_HOLE |
				  FALLOC_FL_KEEP_SIZE, 0, len) == 0);
	memset(a->map, 'B', len);           /* new pages */
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &again) == 0);
	CU_ASSERT_FATAL(again == a);        /* the same lease, lent again */
	CU_ASSERT_FATAL(a->buf >= 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write_fixed(&l, fd, a->map, len, 0, a->buf), (int)len);
	CU_ASSERT_EQUAL(pread(fd, back, len, 0), (ssize_t)len);
	CU_ASSERT(memcmp(back, a->map, len) == 0);
	CU_ASSERT_EQUAL(back[0], 'B');
	close(fd);
	unlink(path);
	rmdir(dir);
	staging_put(&s, a);
	staging_release(&s);
	loop_release(&l);
	free(back);
}

/* Free leases marked as of huge pages (root's, staging.h) by hand, so that
 * no pool is needed: another uid never gets one, even when they are the only
 * free leases of its size; making room drops ordinary leases first; root
 * gets a marked one. */
static unsigned nhuge_free(struct staging *s)
{
	struct list *pos;
	unsigned n = 0;

	for (pos = s->free.next; pos != &s->free; pos = pos->next)
		n += list_entry(pos, struct lease, link)->huge;
	return n;
}

static void test_lease_huge_root_only(void)
{
	const size_t mb8 = 8u << 20;
	struct lease *u, *u2, *r;
	struct staging s;
	struct list *pos;
	unsigned i = 0;

	staging_init(&s, 3 * mb8, 0, STAGING_HUGE, NULL);
	CU_ASSERT_FATAL(staging_prefault(&s, mb8, s.budget) == 0);   /* 3 leases */
	for (pos = s.free.next; pos != &s.free; pos = pos->next) {
		struct lease *l = list_entry(pos, struct lease, link);

		CU_ASSERT_FATAL(!l->huge);    /* reserve 0: none made huge */
		if (i++ < 2) {
			l->huge = 1;
			s.huge_total += l->size;
		}
	}
	CU_ASSERT_EQUAL_FATAL(nhuge_free(&s), 2);
	/* uid 1000, 8 MiB: the one ordinary lease. */
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, mb8, 0, &u) == 0);
	CU_ASSERT(!u->huge);
	/* uid 1000 again: only marked ones are free; room is made by dropping
	 * one of them, and the new lease is ordinary. */
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, mb8, 0, &u2) == 0);
	CU_ASSERT(!u2->huge);
	CU_ASSERT_EQUAL(nhuge_free(&s), 1);
	CU_ASSERT_EQUAL(s.huge_total, mb8);
	staging_put(&s, u2);
	/* Root, 4 MiB (no free lease of that size): room comes from the
	 * user's ordinary lease, not root's marked one. */
	CU_ASSERT_FATAL(staging_get_share(&s, 0, 4u << 20, 0, &r) == 0);
	CU_ASSERT_EQUAL(nhuge_free(&s), 1);
	staging_put(&s, r);
	/* Root, 8 MiB: the marked one. */
	CU_ASSERT_FATAL(staging_get_share(&s, 0, mb8, 0, &r) == 0);
	CU_ASSERT(r->huge);
	staging_put(&s, r);
	staging_put(&s, u);
	staging_release(&s);
	CU_ASSERT_EQUAL(s.total, 0);
	CU_ASSERT_EQUAL(s.huge_total, 0);

	/* Root prefers a marked lease to an ordinary one ahead of it. */
	staging_init(&s, 2 * mb8, 0, STAGING_HUGE, NULL);
	CU_ASSERT_FATAL(staging_prefault(&s, mb8, s.budget) == 0);   /* 2 leases */
	u = list_entry(s.free.next->next, struct lease, link);
	u->huge = 1;
	s.huge_total += u->size;
	CU_ASSERT_FATAL(staging_get_share(&s, 0, mb8, 0, &r) == 0);
	CU_ASSERT(r == u && r->huge);
	staging_put(&s, r);
	staging_release(&s);
	CU_ASSERT_EQUAL(s.huge_total, 0);
}

/* The fill on a worker: leases join the free ones until the budget is
 * full, never past it while a client's lease is made meanwhile; the loop
 * polls until the fill says it is over (filling -1), 10 s at most. */
struct fillwait {
	struct loop *l;
	struct staging *s;
	unsigned ticks;
};

static void fill_poll(void *arg)
{
	struct fillwait *w = arg;

	if (w->s->filling < 0 || ++w->ticks > 2000)
		w->l->stop = 1;
	else
		loop_after(w->l, 5, fill_poll, w);
}

static unsigned nfree(const struct staging *s)
{
	const struct list *pos;
	unsigned n = 0;

	for (pos = s->free.next; pos != &s->free; pos = pos->next)
		n++;
	return n;
}

static void test_fill(void)
{
	const size_t mb8 = 8u << 20;
	struct fillwait w;
	struct staging s;
	struct lease *u;
	struct loop l;

	CU_ASSERT_FATAL(loop_init(&l, 16) == 0);
	staging_init(&s, 3 * mb8, 0, 0, &l);
	CU_ASSERT_FATAL(staging_prefault(&s, mb8, 0) == 0);   /* none */
	CU_ASSERT_EQUAL(s.total, 0);
	CU_ASSERT_FATAL(staging_fill(&s, &l, mb8) == 0);
	CU_ASSERT_EQUAL(s.filling, 1);
	CU_ASSERT_EQUAL(s.total, mb8);      /* held while it is made */
	/* A client asks meanwhile: its lease is made at once. */
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, mb8, 0, &u) == 0);
	CU_ASSERT_EQUAL(s.total, 2 * mb8);
	w.l = &l;
	w.s = &s;
	w.ticks = 0;
	CU_ASSERT_FATAL(loop_after(&l, 5, fill_poll, &w) == 0);
	CU_ASSERT_EQUAL(loop_run(&l), 0);
	CU_ASSERT_EQUAL(s.filling, -1);     /* over, not timed out */
	CU_ASSERT(w.ticks <= 2000);
	CU_ASSERT_EQUAL(s.total, 3 * mb8);
	CU_ASSERT_EQUAL(nfree(&s), 2);
	staging_fill_stop(&s);
	staging_put(&s, u);
	staging_release(&s);
	CU_ASSERT_EQUAL(s.total, 0);

	/* Closed while a lease is being made: it goes, counted out. */
	staging_init(&s, 4 * mb8, 0, 0, &l);
	CU_ASSERT_FATAL(staging_fill(&s, &l, mb8) == 0);
	CU_ASSERT_EQUAL(s.filling, 1);
	staging_fill_stop(&s);
	CU_ASSERT_EQUAL(s.filling, -1);
	CU_ASSERT_PTR_NULL(s.pool);
	staging_release(&s);
	CU_ASSERT_EQUAL(s.total, 0);
	loop_release(&l);
}

/* Registering pins memory: an unprivileged user under the usual 8 MiB
 * RLIMIT_MEMLOCK cannot pin what these tests do (16 MiB), and ckptd would
 * not register there either (ckptd.c: pin_unlimited). */
static int can_pin(void)
{
	struct rlimit r;

	if (geteuid() == 0)
		return 1;
	return getrlimit(RLIMIT_MEMLOCK, &r) == 0 &&
	       (r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= (64u << 20));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "write_fixed", test_write_fixed },
		{ "slots", test_slots },
		{ "leases", test_leases },
		{ "lease_punched", test_lease_punched },
		{ "lease_huge_root_only", test_lease_huge_root_only },
		{ "fill", test_fill },
		{ NULL, NULL }
	};

	if (!can_pin()) {
		printf("test_loop: skipped: RLIMIT_MEMLOCK too low to register buffers\n");
		return 77;
	}
	return unit_run("loop", tests);
}
