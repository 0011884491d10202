/*
 * test_reccache.c - records read whole and checked, shared (reccache.h),
 * over a real file in a private temporary directory: eight threads reading
 * pieces of one large record at once read it from the file once and all
 * get its bytes; a record that fails its CRC fails every reader and is not
 * kept; the budget drops records nobody uses, oldest first, but never the
 * most recent one; two parts (open_ids) never share an entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "ckpt.h"
#include "crc32c.h"
#include "reccache.h"

#define BIG   (8u << 20)          /* one large record */
#define SMALL (1u << 20)

static char top[512], path[600];
static uint8_t *bytes;            /* the file's */
static int fd = -1;

static int suite_init(void)
{
	uint32_t i, seed = 7;

	if (!unit_mkdtemp(top, sizeof(top), "test_reccache"))
		return 1;
	snprintf(path, sizeof(path), "%s/seg", top);
	bytes = malloc(BIG + 4 * SMALL);
	if (!bytes)
		return 1;
	for (i = 0; i < BIG + 4 * SMALL; i++) {
		seed = seed * 1103515245u + 12345u;
		bytes[i] = (uint8_t)(seed >> 16);
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return fd < 0 || write(fd, bytes, BIG + 4 * SMALL) !=
			 (ssize_t)(BIG + 4 * SMALL);
}

static int suite_clean(void)
{
	char cmd[700];

	if (fd >= 0)
		close(fd);
	free(bytes);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) != 0;
}

static struct man_rec rec_at(uint64_t off, uint32_t len)
{
	struct man_rec r;

	memset(&r, 0, sizeof(r));
	r.seg = 3;
	r.seg_off = off;
	r.len = len;
	r.crc = crc32c(bytes + off, len);
	return r;
}

struct reader {
	pthread_t t;
	struct reccache *c;
	struct man_rec r;
	uint32_t piece;           /* which 1 MiB of the record to check */
	int ret, same;
};

static void *read_piece(void *arg)
{
	struct reader *rd = arg;
	struct rcent *e;

	rd->ret = reccache_read(rd->c, 42, &rd->r, fd, &e);
	if (rd->ret == 0) {
		rd->same = !memcmp(reccache_bytes(e) + rd->piece * SMALL,
				   bytes + rd->r.seg_off + rd->piece * SMALL,
				   SMALL);
		reccache_put(rd->c, e);
	}
	return NULL;
}

/* Eight readers of one record at once: it is read once. */
static void test_shared(void)
{
	struct reader rd[8];
	struct reccache *c;
	uint64_t hits, loads;
	int i;

	CU_ASSERT_EQUAL_FATAL(reccache_new(64u << 20, &c), 0);
	for (i = 0; i < 8; i++) {
		rd[i] = (struct reader){ .c = c, .r = rec_at(0, BIG),
					 .piece = (uint32_t)i };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&rd[i].t, NULL, read_piece,
						     &rd[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(rd[i].t, NULL);
		CU_ASSERT_EQUAL(rd[i].ret, 0);
		CU_ASSERT(rd[i].same);
	}
	reccache_counts(c, &hits, &loads);
	CU_ASSERT_EQUAL(loads, 1);
	CU_ASSERT_EQUAL(hits, 7);
	/* Another part's record at the same place is another entry. */
	{
		struct man_rec r = rec_at(0, BIG);
		struct rcent *e;

		CU_ASSERT_EQUAL(reccache_read(c, 43, &r, fd, &e), 0);
		reccache_put(c, e);
		reccache_counts(c, &hits, &loads);
		CU_ASSERT_EQUAL(loads, 2);
	}
	reccache_free(c);
}

/* A record whose CRC does not match: every reader fails, nothing kept. */
static void test_corrupt(void)
{
	struct reccache *c;
	struct man_rec r = rec_at(BIG, SMALL);
	struct rcent *e = (struct rcent *)1;
	uint64_t hits, loads;

	CU_ASSERT_EQUAL_FATAL(reccache_new(64u << 20, &c), 0);
	r.crc ^= 1;
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r, fd, &e), -CKPT_ECORRUPT);
	CU_ASSERT_PTR_NULL(e);
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r, fd, &e), -CKPT_ECORRUPT);
	reccache_counts(c, &hits, &loads);
	CU_ASSERT_EQUAL(loads, 2);           /* not kept: read again */
	/* Past the end of the file: short. */
	r = rec_at(0, SMALL);
	r.seg_off = BIG + 4 * SMALL;
	CU_ASSERT_NOT_EQUAL(reccache_read(c, 42, &r, fd, &e), 0);
	reccache_free(c);
}

/* The budget: records nobody uses go, oldest first; the newest stays even
 * when it alone is over the budget. */
static void test_budget(void)
{
	struct reccache *c;
	struct man_rec r[4];
	struct rcent *e;
	uint64_t hits, loads;
	int i;

	CU_ASSERT_EQUAL_FATAL(reccache_new(2 * SMALL, &c), 0);
	for (i = 0; i < 4; i++) {
		r[i] = rec_at(BIG + (uint64_t)i * SMALL, SMALL);
		CU_ASSERT_EQUAL(reccache_read(c, 42, &r[i], fd, &e), 0);
		reccache_put(c, e);
	}
	/* r[2] and r[3] are kept, r[0] and r[1] went. */
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r[3], fd, &e), 0);
	reccache_put(c, e);
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r[2], fd, &e), 0);
	reccache_put(c, e);
	reccache_counts(c, &hits, &loads);
	CU_ASSERT_EQUAL(hits, 2);
	CU_ASSERT_EQUAL(loads, 4);
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r[0], fd, &e), 0);
	reccache_put(c, e);
	reccache_counts(c, &hits, &loads);
	CU_ASSERT_EQUAL(loads, 5);
	/* One record over the whole budget, the newest: kept. */
	r[0] = rec_at(0, BIG);
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r[0], fd, &e), 0);
	reccache_put(c, e);
	CU_ASSERT_EQUAL(reccache_read(c, 42, &r[0], fd, &e), 0);
	CU_ASSERT(!memcmp(reccache_bytes(e), bytes, BIG));
	reccache_put(c, e);
	reccache_counts(c, &hits, &loads);
	CU_ASSERT_EQUAL(loads, 6);
	reccache_free(c);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "shared", test_shared },
		{ "corrupt", test_corrupt },
		{ "budget", test_budget },
		{ NULL, NULL }
	};

	return unit_run_suite("reccache", suite_init, suite_clean, tests);
}
