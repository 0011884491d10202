/*
 * test_pfsman_data.c - the queries of a PFS manifest: pfsman_data() against
 * the chunk kinds byte by byte, and pfsman_strip(): a stripped manifest
 * answers pfsman_data() and pfsman_file_data() as the whole table did;
 * pfsman_held() against what glibc's malloc holds.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "heap.h"
#include "pfsman.h"

#define CHUNK   65536u

/* pfsman_data() against the chunk kinds byte by byte: a file of six
 * chunks (the last short) with every kind, and a link that shares them. */
static int data_at(const struct pfs_chunk *k, uint64_t size, uint64_t b)
{
	const struct pfs_chunk *c = &k[b / CHUNK];

	return b < size && c->kind != PFS_ZERO &&
	       !(c->kind == PFS_REF && c->kind2 == PFS_ZERO);
}

static void test_data(void)
{
	static char p0[] = "a", p1[] = "b";
	struct pfs_chunk k[6] = {
		{ .len = CHUNK, .kind = PFS_ZERO },
		{ .len = CHUNK, .stored = CHUNK, .kind = PFS_RAW },
		{ .len = CHUNK, .stored = CHUNK, .kind = PFS_REF,
		  .kind2 = PFS_RAW },
		{ .len = CHUNK, .kind = PFS_ZERO },
		{ .len = CHUNK, .kind = PFS_REF, .kind2 = PFS_ZERO },
		{ .len = 100, .stored = 50, .kind = PFS_ZSTD },
	};
	const uint64_t size = 5 * (uint64_t)CHUNK + 100;
	struct pfs_file files[2] = {
		{ .path = p0, .size = size, .first = 0, .count = 6 },
		{ .path = p1, .size = size, .first = 6, .link = 1 },
	};
	struct pfsman m = { .chunk = CHUNK, .nfiles = 2, .files = files,
			    .nchunks = 6, .chunks = k };
	uint64_t seed = 7, off, end, b, d, len;
	int i, ret;

	CU_ASSERT_EQUAL(pfsman_data(&m, 0, 0, size, &d, &len), 0);
	CU_ASSERT(d == CHUNK && len == 2 * (uint64_t)CHUNK);
	CU_ASSERT_EQUAL(pfsman_data(&m, 1, 3 * (uint64_t)CHUNK, ~0ull, &d,
				    &len), 0);
	CU_ASSERT(d == 5 * (uint64_t)CHUNK && len == 100);
	CU_ASSERT_EQUAL(pfsman_data(&m, 0, size, ~0ull, &d, &len), -ENXIO);
	CU_ASSERT_EQUAL(pfsman_data(&m, 0, 3 * (uint64_t)CHUNK,
				    5 * (uint64_t)CHUNK, &d, &len), -ENXIO);
	for (i = 0; i < 300; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		off = (seed >> 20) % (size + CHUNK);
		end = off + (seed >> 40) % (size + CHUNK);
		for (b = off; b < end && b < size && !data_at(k, size, b); b++)
			;
		ret = pfsman_data(&m, (uint32_t)i & 1, off, end, &d, &len);
		if (b >= end || b >= size) {
			CU_ASSERT_EQUAL(ret, -ENXIO);
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(ret, 0);
		CU_ASSERT_EQUAL(d, b);
		for (; b < end && data_at(k, size, b); b++)
			;
		CU_ASSERT_EQUAL(d + len, b);
	}
}

/* pfsman_strip(): a stripped manifest answers pfsman_data() and
 * pfsman_file_data() as the table did, over files of every kind of chunk
 * in random runs (holes crossing from one file into the next included), and
 * refuses what needs the table. */
static int no_data(const struct pfs_chunk *k)
{
	return k->kind == PFS_ZERO || (k->kind == PFS_REF &&
				       k->kind2 == PFS_ZERO);
}

/* The next random (file, [off, end)) of test_strip(): the file returned. */
static uint32_t strip_range(uint64_t *seed, uint64_t *off, uint64_t *end)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	*off = (*seed >> 20) % (18ull * CHUNK);
	*end = *off + (*seed >> 38) % (18ull * CHUNK);
	return (uint32_t)(*seed >> 60) % 4;
}

static void test_strip(void)
{
	static char p0[] = "a", p1[] = "b", p2[] = "c", p3[] = "d";
	const uint32_t counts[4] = { 9, 0, 17, 5 };
	struct pfs_file files[4] = {
		{ .path = p0 }, { .path = p1 }, { .path = p2 }, { .path = p3 },
	};
	struct pfsman m = { .chunk = CHUNK, .nfiles = 4, .files = files };
	uint64_t seed = 11, off, end, d, l, want[4];
	static uint64_t d0[400], l0[400];
	uint32_t i, f, at = 0, runs = 0;
	uint8_t img[4096];
	int r0[400];

	for (f = 0; f < 4; f++) {
		files[f].first = at;
		files[f].count = counts[f];
		files[f].size = counts[f] ? (uint64_t)(counts[f] - 1) * CHUNK +
					    1 + f * 7 : 0;
		at += counts[f];
	}
	m.nchunks = at;
	m.chunks = calloc(at, sizeof(*m.chunks));
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.chunks);
	for (i = 0; i < at; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		switch ((seed >> 33) % 4) {
		case 0: m.chunks[i].kind = PFS_ZERO; break;
		case 1: m.chunks[i].kind = PFS_RAW; break;
		case 2: m.chunks[i].kind = PFS_REF;
			m.chunks[i].kind2 = PFS_ZERO; break;
		default: m.chunks[i].kind = PFS_ZSTD; break;
		}
		if ((seed >> 40) % 3 == 0 && i)   /* longer runs */
			m.chunks[i] = m.chunks[i - 1];
	}
	/* a hole from file a's last chunk into c's first */
	m.chunks[8].kind = m.chunks[9].kind = PFS_ZERO;
	m.chunks[0].kind = PFS_RAW;
	for (i = 0; i < at; i++)
		runs += no_data(&m.chunks[i]) &&
			(i == 0 || !no_data(&m.chunks[i - 1]));
	for (f = 0; f < 4; f++)
		want[f] = pfsman_file_data(&m, f);
	seed = 5;
	for (i = 0; i < 400; i++) {
		f = strip_range(&seed, &off, &end);
		r0[i] = pfsman_data(&m, f, off, end, &d0[i], &l0[i]);
	}
	CU_ASSERT_EQUAL_FATAL(pfsman_strip(&m), 0);
	CU_ASSERT_PTR_NULL(m.chunks);
	CU_ASSERT_EQUAL(m.nholes, runs);
	CU_ASSERT(m.nholes && m.holes[0].first > 0);
	for (i = 0; i < m.nholes; i++)
		if (m.holes[i].first <= 8 && m.holes[i].first +
		    m.holes[i].count >= 10)
			break;
	CU_ASSERT(i < m.nholes);   /* the run across two files is one */
	for (f = 0; f < 4; f++)
		CU_ASSERT_EQUAL(pfsman_file_data(&m, f), want[f]);
	seed = 5;
	for (i = 0; i < 400; i++) {
		f = strip_range(&seed, &off, &end);
		CU_ASSERT_EQUAL(pfsman_data(&m, f, off, end, &d, &l), r0[i]);
		if (r0[i] == 0)
			CU_ASSERT(d == d0[i] && l == l0[i]);
	}
	CU_ASSERT_EQUAL(pfsman_strip(&m), 0);          /* again: no change */
	CU_ASSERT_EQUAL(pfsman_encode(&m, img, sizeof(img)), -EINVAL);
	CU_ASSERT_EQUAL(pfsman_find(&m, "c", 0), 2);
	free(m.holes);
}

/*
 * pfsman_held() is what the allocator holds for a decoded manifest: with
 * glibc's malloc (not under a sanitizer or valgrind, whose allocators round
 * otherwise), heap_held(n) is a malloc(n)'s chunk, and the arena's bytes in
 * use grow by pfsman_held() less the struct (here on the stack) across a
 * decode, and shrink by the chunk table less the holes across a strip,
 * within 1 KiB: freed chunks in the allocator's per-thread cache count as
 * in use, and a decode may take one of them.  The file table (1,000
 * entries) stays under the mmap threshold, so that all of it is in the
 * arena.
 */
static int near(size_t got, size_t want)
{
	if (got + 1024 >= want && got <= want + 1024)
		return 1;
	fprintf(stderr, "pfsman_data: the arena grew by %zu bytes, pfsman_held() says %zu\n",
		got, want);
	return 0;
}

static void test_held(void)
{
	enum { N = 1000 };
	static struct pfs_file files[N];
	static struct pfs_chunk chunks[N];
	static char names[N][16];
	struct pfsman m = { .chunk = CHUNK, .nfiles = N, .nchunks = N,
			    .files = files, .chunks = chunks }, d;
	struct mallinfo2 a, b;
	size_t held, whole, n;
	uint8_t *img;
	void *p;
	long len;
	int glibc;
	uint32_t i;

	snprintf(m.job, sizeof(m.job), "j");
	snprintf(m.version, sizeof(m.version), "v");
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "f%014u", i);
		files[i] = (struct pfs_file){ .path = names[i], .size = 1,
					      .first = i, .count = 1 };
		chunks[i] = (struct pfs_chunk){ .len = 1, .kind = i % 3 ?
						PFS_ZERO : PFS_RAW,
						.stored = i % 3 ? 0 : 1 };
	}
	p = malloc(1);
	glibc = p && malloc_usable_size(p) == 24;
	free(p);
	for (n = 1; glibc && n <= 4096; n++) {
		p = malloc(n);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL(heap_held(n), malloc_usable_size(p) + 8);
		free(p);
	}
	CU_ASSERT_EQUAL(heap_held(0), 0);
	len = (long)pfsman_size(&m);
	img = malloc((size_t)len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(img);
	CU_ASSERT_EQUAL_FATAL(pfsman_encode(&m, img, (size_t)len), len);
	a = mallinfo2();
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, (size_t)len, &d), 0);
	b = mallinfo2();
	whole = pfsman_held(&d);
	/* 15-character names: the entries and their names hold more than
	 * the manifest's bytes */
	CU_ASSERT(whole > (size_t)len);
	if (glibc)
		CU_ASSERT(near(b.uordblks - a.uordblks, whole - heap_held(sizeof(d))));
	CU_ASSERT_EQUAL_FATAL(pfsman_strip(&d), 0);
	held = pfsman_held(&d);
	CU_ASSERT_EQUAL(whole - held, heap_held(N * sizeof(*chunks)) -
		        heap_held(d.nholes * sizeof(*d.holes)));
	if (glibc)
		CU_ASSERT(near(mallinfo2().uordblks - a.uordblks,
			       held - heap_held(sizeof(d))));
	if (!glibc)
		fprintf(stderr, "pfsman_data: not glibc's malloc here: the allocator checks of held are skipped\n");
	pfsman_release(&d);
	free(img);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "data", test_data },
		{ "strip", test_strip },
		{ "held", test_held },
		{ NULL, NULL }
	};

	return unit_run("pfsman_data", tests);
}
