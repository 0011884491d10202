/*
 * test_extmap.c - unit tests for lib/extmap: a file's read index.
 *
 * Random record sets (overlapping writes, rewrites, zero records, empty
 * records, records of other files) are indexed and compared, byte by byte,
 * with the rule itself: the newest record covering a byte owns it, and a
 * byte no record covers is a hole.  The extents must be sorted, disjoint,
 * merged where one record continues, and at most 2n - 1; extmap_find()
 * must land on the first extent ending after any offset.
 */
#include <stdlib.h>
#include <string.h>

#include "extmap.h"
#include "unit.h"

#define SPAN 4096

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void check_case(uint32_t nrec)
{
	struct man_rec *recs = calloc(nrec ? nrec : 1, sizeof(*recs));
	uint32_t *idx = calloc(nrec ? nrec : 1, sizeof(*idx));
	int32_t owner[2 * SPAN];
	uint32_t i, n = 0, e;
	uint64_t b;
	struct extmap m;

	CU_ASSERT_FATAL(recs && idx);
	for (i = 0; i < nrec; i++) {
		recs[i].file = rnd(4) == 0 ? 1 : 0;    /* some of another file */
		recs[i].file_off = rnd(SPAN);
		recs[i].len = rnd(8) == 0 ? 0 : 1 + rnd(SPAN / 4);
		recs[i].seg = rnd(5) == 0 ? MAN_SEG_ZERO : 1;
		if (recs[i].file == 0)
			idx[n++] = i;
	}
	for (b = 0; b < 2 * SPAN; b++)
		owner[b] = -1;
	for (i = 0; i < n; i++) {
		const struct man_rec *r = &recs[idx[i]];

		for (b = r->file_off; b < r->file_off + r->len; b++)
			owner[b] = (int32_t)idx[i];
	}
	CU_ASSERT_EQUAL_FATAL(extmap_build(recs, idx, n, &m), 0);
	CU_ASSERT(m.n <= (n ? 2 * n - 1 : 0));
	for (e = 0; e < m.n; e++) {
		CU_ASSERT(m.v[e].len > 0);
		if (e) {
			CU_ASSERT(m.v[e - 1].off + m.v[e - 1].len <= m.v[e].off);
			/* merged: one record does not continue across two */
			CU_ASSERT(!(m.v[e - 1].rec == m.v[e].rec &&
				    m.v[e - 1].off + m.v[e - 1].len == m.v[e].off));
		}
		for (b = m.v[e].off; b < m.v[e].off + m.v[e].len; b++)
			CU_ASSERT_EQUAL(owner[b], (int32_t)m.v[e].rec);
	}
	/* Every owned byte is in some extent; holes are in none. */
	for (b = 0, e = 0; b < 2 * SPAN; b++) {
		while (e < m.n && m.v[e].off + m.v[e].len <= b)
			e++;
		if (e < m.n && m.v[e].off <= b)
			continue;
		CU_ASSERT_EQUAL(owner[b], -1);
	}
	for (b = 0; b < 2 * SPAN; b += 7) {
		uint32_t f = extmap_find(&m, b);

		CU_ASSERT(f == m.n || m.v[f].off + m.v[f].len > b);
		CU_ASSERT(f == 0 || m.v[f - 1].off + m.v[f - 1].len <= b);
	}
	extmap_release(&m);
	free(idx);
	free(recs);
}

static void test_random(void)
{
	uint32_t t;

	for (t = 0; t < 3000; t++)
		check_case(rnd(40));
	for (t = 0; t < 20; t++)
		check_case(2000 + rnd(2000));
}

/* A big sequential file: one extent per record, found in log time. */
static void test_sequential(void)
{
	uint32_t n = 1u << 18, i;
	struct man_rec *recs = calloc(n, sizeof(*recs));
	uint32_t *idx = calloc(n, sizeof(*idx));
	struct extmap m;

	CU_ASSERT_FATAL(recs && idx);
	for (i = 0; i < n; i++) {
		recs[i].file_off = (uint64_t)i << 22;
		recs[i].len = 1u << 22;
		recs[i].seg = 1;
		idx[i] = i;
	}
	CU_ASSERT_EQUAL_FATAL(extmap_build(recs, idx, n, &m), 0);
	CU_ASSERT_EQUAL(m.n, n);
	CU_ASSERT_EQUAL(extmap_find(&m, (12345ull << 22) + 17), 12345);
	CU_ASSERT_EQUAL(extmap_find(&m, (uint64_t)n << 22), n);
	extmap_release(&m);
	CU_ASSERT_EQUAL(extmap_build(recs, idx, 0, &m), 0);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_EQUAL(extmap_find(&m, 0), 0);
	extmap_release(&m);
	free(idx);
	free(recs);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "random", test_random },
		{ "sequential", test_sequential },
		{ NULL, NULL }
	};

	return unit_run("extmap", tests);
}
