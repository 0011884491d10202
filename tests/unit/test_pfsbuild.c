/*
 * test_pfsbuild.c - rebuilding a file's chunks from records
 * (server/pfs/pfsbuild.h): records that do not line up with chunks, overwrites,
 * a zero record, holes and a tail; every chunk byte for byte, each record
 * read once when a builder goes through its pieces in order (buffered, and
 * direct with its reads ahead through io_uring); pieces cut
 * only where no record crosses; a record whose CRC32C does not match is
 * refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "crc32c.h"
#include "err.h"
#include "pfsbuild.h"

#define CHUNK 65536u
#define FSIZE (10u * CHUNK + 1234u)
#define NREC 7

/* The file as a trainer wrote it: record i's bytes are (i + 1) * 37 + k. */
struct fixture {
	char dir[256];
	int fd;
	struct pfs_job job;
	struct man_rec recs[NREC];
	struct man_file files[1];
	int fds[1];
	uint8_t want[FSIZE];
};

/* file_off, len (seg MAN_SEG_ZERO for the zero record, index 3) */
static const uint64_t layout[NREC][2] = {
	{ 0, 150000 },                /* chunks 0..2, crosses 1 and 2 */
	{ 150000, 250001 },           /* crosses 3..6 */
	{ 100000, 100 },              /* overwrites a piece of record 0 */
	{ 140000, 20000 },            /* zero record over 0 and 1 */
	{ 600000, 55360 },            /* after a hole */
	{ 9u * CHUNK, CHUNK + 1234 }, /* the tail, a chunk and a bit */
	{ 10u * CHUNK - 10, 20 },     /* overwrites across the last boundary */
};

static void setup(struct fixture *x)
{
	uint64_t seg_off = 0;
	uint8_t *buf;
	int i;

	memset(x, 0, sizeof(*x));
	CU_ASSERT_FATAL(unit_mkdtemp(x->dir, sizeof(x->dir), "pfsbuild") != NULL);
	snprintf(x->job.segdir, sizeof(x->job.segdir), "%s", x->dir);
	snprintf(x->dir + strlen(x->dir), sizeof(x->dir) - strlen(x->dir),
		 "/%08u", 0u);
	x->fd = open(x->dir, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(x->fd >= 0);
	buf = calloc(1, 4 * CHUNK);      /* the longest record fits */
	CU_ASSERT_FATAL(buf != NULL);
	for (i = 0; i < NREC; i++) {
		struct man_rec *r = &x->recs[i];
		uint32_t k;

		r->file = 0;
		r->file_off = layout[i][0];
		r->len = (uint32_t)layout[i][1];
		if (i == 3) {
			r->seg = MAN_SEG_ZERO;
			memset(x->want + r->file_off, 0, r->len);
			continue;
		}
		for (k = 0; k < r->len; k++)
			buf[k] = (uint8_t)((i + 1) * 37 + k);
		r->seg = 0;
		r->seg_off = seg_off;
		r->crc = crc32c(buf, r->len);
		CU_ASSERT_FATAL(pwrite(x->fd, buf, r->len, (off_t)seg_off) ==
				(ssize_t)r->len);
		memcpy(x->want + r->file_off, buf, r->len);
		seg_off += (r->len + 4095) & ~4095u;
	}
	free(buf);
	/* Records are stored padded to 4 KiB, and read so. */
	CU_ASSERT_FATAL(ftruncate(x->fd, (off_t)seg_off) == 0);
	x->files[0].size = FSIZE;
	x->fds[0] = x->fd;
	x->job.nfiles = 1;
	x->job.files = x->files;
	x->job.nrecs = NREC;
	x->job.recs = x->recs;
	x->job.fds = x->fds;
	x->job.nfds = 1;
}

static void teardown(struct fixture *x)
{
	close(x->fd);
	unlink(x->dir);
	*strrchr(x->dir, '/') = 0;
	rmdir(x->dir);
}

static int all_zero(const uint8_t *p, size_t n)
{
	while (n && !*p)
		p++, n--;
	return n == 0;
}

/* Chunks no record with bytes overlaps (holes), from the layout. */
static uint32_t count_holes(uint32_t count)
{
	uint32_t idx, holes = 0, i;

	for (idx = 0; idx < count; idx++) {
		uint64_t a = (uint64_t)idx * CHUNK, z = a + CHUNK;
		int data = 0;

		for (i = 0; i < NREC; i++)
			data |= i != 3 && layout[i][0] < z &&
				layout[i][0] + layout[i][1] > a;
		holes += !data;
	}
	return holes;
}

/* Build every chunk of pieces cut at target, in order, with one builder
 * (direct or buffered), and compare: a hole fills nothing. */
static void build_all(struct fixture *x, uint32_t target, int direct)
{
	uint32_t count = (FSIZE + CHUNK - 1) / CHUNK, ends[16], idx, first;
	uint32_t holes = 0;
	struct pfs_builder b;
	struct pfs_index ix;
	struct pfs_span sp;
	uint8_t *buf = malloc(CHUNK);
	long n, p;

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT_FATAL(pfs_index_init(&ix, &x->job) == 0);
	CU_ASSERT_FATAL(pfs_builder_init(&b, &ix, direct) == 0);
	n = pfs_index_cut(&ix, 0, count, CHUNK, target, ends);
	CU_ASSERT(n >= 1);
	CU_ASSERT(ends[n - 1] == count);
	for (p = 0, first = 0; p < n; first = ends[p++]) {
		/* direct: the piece's records read ahead (io_uring) */
		pfs_builder_plan(&b, 0, (uint64_t)first * CHUNK,
				 (uint64_t)(ends[p] - first) * CHUNK, CHUNK);
		for (idx = first; idx < ends[p]; idx++) {
			uint64_t off = (uint64_t)idx * CHUNK;
			uint32_t len = FSIZE - off < CHUNK ? FSIZE - off : CHUNK;

			CU_ASSERT_FATAL(pfs_builder_span(&b, 0, off, len, buf,
							 &sp) == 0);
			if (sp.zero) {   /* a hole: nothing filled */
				CU_ASSERT(sp.p == NULL);
				CU_ASSERT(all_zero(x->want + off, len));
				holes++;
				continue;
			}
			CU_ASSERT(memcmp(sp.p, x->want + off, len) == 0);
			if (sp.have_crc)
				CU_ASSERT(sp.crc == crc32c(sp.p, len));
		}
	}
	/* Six records with data, each read once. */
	CU_ASSERT(b.reads == NREC - 1);
	CU_ASSERT(holes >= 1 && holes == count_holes(count));
	pfs_builder_release(&b);
	pfs_index_release(&ix);
	free(buf);
}

static void test_chunks(void)
{
	struct fixture *x = malloc(sizeof(*x));

	CU_ASSERT_FATAL(x != NULL);
	setup(x);
	build_all(x, 1, 0);
	build_all(x, 1, 1);
	build_all(x, 3, 0);
	build_all(x, 100, 0);
	teardown(x);
	free(x);
}

/* Pieces end only at boundaries no record with data crosses. */
static void test_cut(void)
{
	uint32_t count = (FSIZE + CHUNK - 1) / CHUNK, ends[16];
	struct fixture *x = malloc(sizeof(*x));
	struct pfs_index ix;
	long n, p;
	int i;

	CU_ASSERT_FATAL(x != NULL);
	setup(x);
	CU_ASSERT_FATAL(pfs_index_init(&ix, &x->job) == 0);
	n = pfs_index_cut(&ix, 0, count, CHUNK, 1, ends);
	/* Records 0 and 1 (and the zero one, which does not count) hold
	 * boundaries 1..6 together; 7, 8, 9 are free; 10 is crossed by the
	 * last record... which ends the file: the pieces are [0,7), [7,8),
	 * [8,9), [9,11). */
	CU_ASSERT(n == 4);
	CU_ASSERT(ends[0] == 7 && ends[1] == 8 && ends[2] == 9 && ends[3] == 11);
	for (p = 0; p < n - 1; p++)
		for (i = 0; i < NREC; i++) {
			uint64_t b = (uint64_t)ends[p] * CHUNK;
			const struct man_rec *r = &x->recs[i];

			if (r->seg != MAN_SEG_ZERO)
				CU_ASSERT(!(r->file_off < b &&
					    r->file_off + r->len > b));
		}
	/* A file of no chunks is one empty piece. */
	CU_ASSERT(pfs_index_cut(&ix, 0, 0, CHUNK, 1, ends) == 1);
	CU_ASSERT(ends[0] == 0);
	pfs_index_release(&ix);
	teardown(x);
	free(x);
}

/* A record whose bytes do not match its CRC32C is refused. */
static void test_corrupt(void)
{
	struct fixture *x = malloc(sizeof(*x));
	struct pfs_builder b;
	struct pfs_index ix;
	struct pfs_span sp;
	uint8_t *buf = malloc(CHUNK);

	CU_ASSERT_FATAL(x != NULL && buf != NULL);
	setup(x);
	x->recs[4].crc ^= 1;
	CU_ASSERT_FATAL(pfs_index_init(&ix, &x->job) == 0);
	CU_ASSERT_FATAL(pfs_builder_init(&b, &ix, 0) == 0);
	CU_ASSERT(pfs_builder_span(&b, 0, 0, CHUNK, buf, &sp) == 0);
	CU_ASSERT(pfs_builder_span(&b, 0, 8 * CHUNK, CHUNK, buf, &sp) == 0);
	CU_ASSERT(pfs_builder_span(&b, 0, 9 * CHUNK, CHUNK, buf, &sp) ==
		  -CKPT_ECORRUPT);
	pfs_builder_release(&b);
	pfs_index_release(&ix);
	teardown(x);
	free(buf);
	free(x);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "chunks", test_chunks },
		{ "cut", test_cut },
		{ "corrupt", test_corrupt },
		{ NULL, NULL }
	};

	return unit_run("pfsbuild", tests);
}
