/*
 * test_extmap.c - unit tests for lib/extmap: a file's read index.
 *
 * Random record sets (overlapping writes, rewrites, zero records, empty
 * records, records of other files) are indexed and compared, byte by byte,
 * with the rule itself: the newest record covering a byte owns it, and a
 * byte no record covers is a hole.  The extents must be sorted, disjoint,
 * merged where one record continues, and at most 2n - 1; extmap_find()
 * must land on the first extent ending after any offset.
 *
 * The maps grown as records arrive (extmap_apply one at a time,
 * extmap_merge of a batch's map) must equal, extent for extent, the map
 * built from the same records at once, and the byte model, at every step.
 * extmap_by_file() groups a slice of records by file in write order.
 */
#include <errno.h>
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

/* Byte b of the model holds data (not a hole, not a zero record)? */
static int model_data(const struct man_rec *recs, const int32_t *owner,
		      uint64_t b)
{
	return owner[b] >= 0 && recs[owner[b]].seg != MAN_SEG_ZERO;
}

/* extmap_data() over random ranges against the byte model: the first
 * byte of data in the range, and the run of data bytes from it. */
static void check_data(const struct extmap *m, const struct man_rec *recs,
		       const int32_t *owner)
{
	uint64_t off, end, b, d, len;
	int i, ret;

	for (i = 0; i < 200; i++) {
		off = rnd(2 * SPAN);
		end = i % 4 == 0 ? 2 * SPAN : off + rnd(2 * SPAN - (uint32_t)off + 1);
		for (b = off; b < end && !model_data(recs, owner, b); b++)
			;
		ret = extmap_data(m, recs, off, end, &d, &len);
		if (b == end) {
			CU_ASSERT_EQUAL(ret, -ENXIO);
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(ret, 0);
		CU_ASSERT_EQUAL(d, b);
		for (; b < end && model_data(recs, owner, b); b++)
			;
		CU_ASSERT_EQUAL(d + len, b);
	}
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
	check_data(&m, recs, owner);
	extmap_release(&m);
	free(idx);
	free(recs);
}

/* A run of more extents than EXTMAP_RUN_MAX comes in parts, each asked
 * from the end of the one before, and they add up to the run. */
static void test_data_long_run(void)
{
	const uint32_t n = EXTMAP_RUN_MAX + 1000;
	struct man_rec *recs = calloc(n, sizeof(*recs));
	uint32_t *idx = calloc(n, sizeof(*idx));
	uint64_t at = 0, d, len;
	struct extmap m;
	int parts = 0;
	uint32_t i;

	CU_ASSERT_FATAL(recs && idx);
	for (i = 0; i < n; i++) {
		recs[i] = (struct man_rec){ .seg = 1, .file_off = 4096ull * i,
					    .len = 4096 };
		idx[i] = i;
	}
	CU_ASSERT_EQUAL_FATAL(extmap_build(recs, idx, n, &m), 0);
	CU_ASSERT_EQUAL(m.n, n);
	while (extmap_data(&m, recs, at, UINT64_MAX, &d, &len) == 0) {
		CU_ASSERT_EQUAL(d, at);
		CU_ASSERT(len <= 4096ull * EXTMAP_RUN_MAX);
		at = d + len;
		parts++;
	}
	CU_ASSERT_EQUAL(at, 4096ull * n);
	CU_ASSERT_EQUAL(parts, 2);
	extmap_release(&m);
	free(idx);
	free(recs);
}

/* Past EXTMAP_RUN_MAX zero records before the data, one is answered as a
 * run (zeros a reader reads, never data it misses): the walk still ends
 * at the data, in a few asks. */
static void test_data_long_zeros(void)
{
	const uint32_t n = EXTMAP_RUN_MAX + 1000;
	struct man_rec *recs = calloc(n + 1, sizeof(*recs));
	uint32_t *idx = calloc(n + 1, sizeof(*idx));
	uint64_t at = 0, d = 0, len = 0;
	struct extmap m;
	int asks = 0;
	uint32_t i;

	CU_ASSERT_FATAL(recs && idx);
	for (i = 0; i <= n; i++) {
		recs[i] = (struct man_rec){ .seg = i < n ? MAN_SEG_ZERO : 1,
					    .file_off = 4096ull * i,
					    .len = 4096 };
		idx[i] = i;
	}
	CU_ASSERT_EQUAL_FATAL(extmap_build(recs, idx, n + 1, &m), 0);
	while (extmap_data(&m, recs, at, UINT64_MAX, &d, &len) == 0) {
		CU_ASSERT(d >= at && len > 0);
		if (d < 4096ull * n)            /* a zero record, one */
			CU_ASSERT(len == 4096 &&
				  d >= 4096ull * (EXTMAP_RUN_MAX - 1));
		at = d + len;
		asks++;
	}
	CU_ASSERT_EQUAL(d, 4096ull * n);
	CU_ASSERT_EQUAL(at, 4096ull * (n + 1));
	CU_ASSERT(asks >= 2 && asks <= 3);
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

/* m against the byte model owner[0 .. span) (record index or -1): every
 * extent owned by its record, sorted, disjoint, canonical; every byte not
 * in an extent a hole. */
static void check_model(const struct extmap *m, const int32_t *owner,
			uint64_t span)
{
	uint64_t b;
	uint32_t e;
	int ok = 1;

	for (e = 0; e < m->n; e++) {
		ok &= m->v[e].len > 0 && m->v[e].off + m->v[e].len <= span;
		if (e) {
			ok &= m->v[e - 1].off + m->v[e - 1].len <= m->v[e].off;
			ok &= !(m->v[e - 1].rec == m->v[e].rec &&
				m->v[e - 1].off + m->v[e - 1].len == m->v[e].off);
		}
		CU_ASSERT_FATAL(ok);
		for (b = m->v[e].off; b < m->v[e].off + m->v[e].len; b++)
			ok &= owner[b] == (int32_t)m->v[e].rec;
	}
	for (b = 0, e = 0; b < span; b++) {
		while (e < m->n && m->v[e].off + m->v[e].len <= b)
			e++;
		if (!(e < m->n && m->v[e].off <= b))
			ok &= owner[b] == -1;
	}
	CU_ASSERT_FATAL(ok);
}

/* Extent for extent (not memcmp: struct ext has padding). */
static int same_map(const struct extmap *a, const struct extmap *b)
{
	uint32_t e;

	if (a->n != b->n)
		return 0;
	for (e = 0; e < a->n; e++)
		if (a->v[e].off != b->v[e].off || a->v[e].len != b->v[e].len ||
		    a->v[e].rec != b->v[e].rec)
			return 0;
	return 1;
}

/*
 * A random sequence of nrec records of file 0 (writes, zero records,
 * rewrites of the same range, empty records, some of file 1 in between)
 * over span bytes: applied one by one to one map and in random batches
 * (extmap_build of the batch, extmap_merge) to another, both checked
 * against the byte model and against extmap_build of every record so far.
 */
static void check_sequence(uint32_t nrec, uint32_t span, uint32_t maxlen)
{
	struct man_rec *recs = calloc(nrec, sizeof(*recs));
	uint32_t *idx = calloc(nrec, sizeof(*idx));
	int32_t *owner = malloc(sizeof(*owner) * span);
	struct extmap one = { 0 }, batched = { 0 }, built, part;
	uint32_t i, n = 0, pending = 0, b;

	CU_ASSERT_FATAL(recs && idx && owner);
	for (b = 0; b < span; b++)
		owner[b] = -1;
	for (i = 0; i < nrec; i++) {
		struct man_rec *r = &recs[i];

		r->file = rnd(6) == 0 ? 1 : 0;
		if (i && rnd(8) == 0) {          /* the same range again */
			r->file_off = recs[i - 1].file_off;
			r->len = recs[i - 1].len;
		} else {
			r->len = rnd(10) == 0 ? 0 : 1 + rnd(maxlen);
			r->file_off = rnd(span - r->len + 1);
		}
		r->seg = rnd(5) == 0 ? MAN_SEG_ZERO : 1;
		if (r->file)
			continue;
		idx[n++] = i;
		for (b = (uint32_t)r->file_off; b < r->file_off + r->len; b++)
			owner[b] = (int32_t)i;
		CU_ASSERT_EQUAL_FATAL(extmap_apply(&one, recs, i), 0);
		pending++;
		if (rnd(4) == 0 || i + 1 == nrec) {
			CU_ASSERT_EQUAL_FATAL(extmap_build(recs, idx + n - pending,
							   pending, &part), 0);
			CU_ASSERT_EQUAL_FATAL(extmap_merge(&batched, &part), 0);
			extmap_release(&part);
			pending = 0;
			check_model(&batched, owner, span);
		}
		if (rnd(16) == 0 || i + 1 == nrec) {
			check_model(&one, owner, span);
			CU_ASSERT_EQUAL_FATAL(extmap_build(recs, idx, n, &built), 0);
			check_model(&built, owner, span);
			CU_ASSERT_FATAL(same_map(&one, &built));
			if (!pending)
				CU_ASSERT_FATAL(same_map(&batched, &built));
			extmap_release(&built);
		}
	}
	extmap_release(&one);
	extmap_release(&batched);
	free(owner);
	free(idx);
	free(recs);
}

static void test_apply(void)
{
	uint32_t t;

	for (t = 0; t < 2000; t++)
		check_sequence(1 + rnd(40), 64 + rnd(256), 1 + rnd(64));
	for (t = 0; t < 200; t++)
		check_sequence(200 + rnd(400), 4096, 1 + rnd(600));
	for (t = 0; t < 5; t++)
		check_sequence(5000, 1 << 16, 1 + rnd(3000));
}

/* Sequential small writes, applied one at a time: each one lands at the
 * end (no extent moves); a rewrite of the start replaces one extent. */
static void test_apply_sequential(void)
{
	uint32_t n = 100000, i;
	struct man_rec *recs = calloc(n + 1, sizeof(*recs));
	struct extmap m = { 0 };

	CU_ASSERT_FATAL(recs != NULL);
	for (i = 0; i < n; i++) {
		recs[i] = (struct man_rec){ .seg = 1, .file_off = 100ull * i,
					    .len = 100 };
		CU_ASSERT_EQUAL_FATAL(extmap_apply(&m, recs, i), 0);
	}
	CU_ASSERT_EQUAL(m.n, n);
	recs[n] = (struct man_rec){ .seg = MAN_SEG_ZERO, .file_off = 0,
				    .len = 100 };
	CU_ASSERT_EQUAL(extmap_apply(&m, recs, n), 0);
	CU_ASSERT_EQUAL(m.n, n);
	CU_ASSERT_EQUAL(m.v[0].rec, n);
	CU_ASSERT_EQUAL(extmap_find(&m, 100ull * 54321 + 99), 54321);
	CU_ASSERT_EQUAL(m.v[54321].rec, 54321);
	extmap_release(&m);
	free(recs);
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

/* extmap_by_file(): a random slice of records of a few files comes back
 * grouped by file in ascending order, each file's in write order, every
 * record once. */
static void test_by_file(void)
{
	uint32_t n = 5000, first = 123, k = n - first - 77, i, *idx, *seen;
	struct man_rec *recs = calloc(n, sizeof(*recs));

	idx = malloc(sizeof(*idx) * k);
	seen = calloc(n, sizeof(*seen));
	CU_ASSERT_FATAL(recs && idx && seen);
	for (i = 0; i < n; i++)
		recs[i].file = rnd(7) * 1000003u % 65537u;
	CU_ASSERT_EQUAL_FATAL(extmap_by_file(recs, first, k, idx), 0);
	for (i = 0; i < k; i++) {
		CU_ASSERT_FATAL(idx[i] >= first && idx[i] < first + k);
		CU_ASSERT_EQUAL(seen[idx[i]]++, 0);
		if (!i)
			continue;
		if (recs[idx[i]].file == recs[idx[i - 1]].file) {
			CU_ASSERT(idx[i] > idx[i - 1]);
		} else {
			CU_ASSERT(recs[idx[i]].file > recs[idx[i - 1]].file);
		}
	}
	CU_ASSERT_EQUAL(extmap_by_file(recs, 0, 0, idx), 0);
	free(seen);
	free(idx);
	free(recs);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "random", test_random },
		{ "data_long_run", test_data_long_run },
		{ "data_long_zeros", test_data_long_zeros },
		{ "sequential", test_sequential },
		{ "apply", test_apply },
		{ "apply_sequential", test_apply_sequential },
		{ "by_file", test_by_file },
		{ NULL, NULL }
	};

	return unit_run("extmap", tests);
}
