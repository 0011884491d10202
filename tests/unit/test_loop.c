/*
 * test_loop.c - registered buffers of ckptd's io_uring (server/loop.c) and
 * the staging leases that use them (server/staging.c): a write_fixed from a
 * registered buffer lands on disk byte for byte, slots run out with -ENOSPC
 * and come back when freed, unregistering is a no-op where there is nothing
 * to do (after loop_release() too), and each lease gets a slot, or -1
 * without a loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "../../server/loop.h"
#include "../../server/staging.h"

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
	CU_ASSERT_EQUAL(l.nbufs, 0);
	loop_buf_del(&l, 3);                /* the ring is gone: a no-op */
	free(p);
}

static void test_leases(void)
{
	struct staging s;
	struct lease *a, *b;
	struct loop l;

	CU_ASSERT_FATAL(loop_init(&l, 8) == 0);
	staging_init(&s, 64u << 20, 0, 0, &l);
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &a) == 0);
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &b) == 0);
	CU_ASSERT(a->buf >= 0);
	CU_ASSERT(b->buf >= 0);
	CU_ASSERT(a->buf != b->buf);
	CU_ASSERT(l.buf_used[a->buf] && l.buf_used[b->buf]);
	staging_put(&s, a);
	staging_put(&s, b);
	staging_release(&s);                /* frees both: slots come back */
	CU_ASSERT(!l.buf_used[0] && !l.buf_used[1]);
	loop_release(&l);

	staging_init(&s, 64u << 20, 0, 0, NULL);
	CU_ASSERT_FATAL(staging_get_share(&s, 1000, 8u << 20, 0, &a) == 0);
	CU_ASSERT_EQUAL(a->buf, -1);
	staging_put(&s, a);
	staging_release(&s);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "write_fixed", test_write_fixed },
		{ "slots", test_slots },
		{ "leases", test_leases },
		{ NULL, NULL }
	};

	return unit_run("loop", tests);
}
