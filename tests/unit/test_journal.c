/*
 * test_journal.c - the drain journal format: records written by
 * journal_append() come back through journal_load() field for field; a torn
 * last record is ignored; a flipped byte, a foreign file, an old-format
 * journal, an unknown format or a huge count stop the load where they are;
 * the path is built in one place; journal_begin() makes an empty journal and
 * leaves one with records as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "ckpt.h"
#include "codec.h"
#include "crc32c.h"
#include "journal.h"

#define MAX_FILES 8
#define MAX_CHUNKS 8

static char dir[512];
static char path[600];

/* What journal_load() handed over. */
struct got {
	uint32_t nrec;
	uint32_t file[MAX_FILES];
	uint32_t n[MAX_FILES];
	struct pfs_chunk c[MAX_FILES][MAX_CHUNKS];
	uint32_t stop_at;         /* refuse the record with this index */
};

static int take(void *arg, const struct journal_rec *r)
{
	struct got *g = arg;

	if (g->nrec >= MAX_FILES || r->n > MAX_CHUNKS || g->nrec == g->stop_at)
		return 1;
	g->file[g->nrec] = r->file;
	g->n[g->nrec] = r->n;
	journal_rec_chunks(r, g->c[g->nrec]);
	g->nrec++;
	return 0;
}

static int load(struct got *g)
{
	memset(g, 0, sizeof(*g));
	g->stop_at = UINT32_MAX;
	return journal_load(path, take, g);
}

static void sample_chunks(struct pfs_chunk *c, uint32_t n, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		c[i].file_off = ((uint64_t)seed << 40) + i * 65536ull;
		c[i].len = 65536 - seed;
		c[i].crc = 0xdeadbeef ^ (seed * 31 + i);
		c[i].stored = 1000 + i;
		c[i].kind = (uint8_t)(1 + (i + seed) % 4);
		c[i].kind2 = (uint8_t)(i % 3);
	}
}

/* Field by field: struct pfs_chunk has padding. */
static int same_chunks(const struct pfs_chunk *a, const struct pfs_chunk *b,
		       uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (a[i].file_off != b[i].file_off || a[i].len != b[i].len ||
		    a[i].crc != b[i].crc || a[i].stored != b[i].stored ||
		    a[i].kind != b[i].kind || a[i].kind2 != b[i].kind2)
			return 0;
	}
	return 1;
}

/* Write the journal: file f (for f < nfiles) with f + 1 chunks. */
static void write_sample(uint32_t nfiles)
{
	struct pfs_chunk c[MAX_CHUNKS];
	uint32_t f;

	unlink(path);
	for (f = 0; f < nfiles; f++) {
		sample_chunks(c, f + 1, f);
		CU_ASSERT_EQUAL(journal_append(path, f, c, f + 1), 0);
	}
}

static void check_sample(const struct got *g, uint32_t nrec)
{
	struct pfs_chunk c[MAX_CHUNKS];
	uint32_t f;

	CU_ASSERT_EQUAL_FATAL(g->nrec, nrec);
	for (f = 0; f < nrec; f++) {
		sample_chunks(c, f + 1, f);
		CU_ASSERT_EQUAL(g->file[f], f);
		CU_ASSERT_EQUAL(g->n[f], f + 1);
		CU_ASSERT(same_chunks(g->c[f], c, f + 1));
	}
}

static off_t file_size(void)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void write_bytes(const void *buf, size_t len, int append)
{
	int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC),
		      0600);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(write(fd, buf, len) == (ssize_t)len);
	close(fd);
}

static void test_path(void)
{
	char out[64];

	CU_ASSERT_EQUAL(journal_path(out, sizeof(out), "/s", 0x2a), 0);
	CU_ASSERT_STRING_EQUAL(out, "/s/drain/000000000000002a.journal");
	CU_ASSERT_EQUAL(journal_path(out, 20, "/s", 0x2a), -ENAMETOOLONG);
}

static void test_round_trip(void)
{
	struct pfs_chunk c[MAX_CHUNKS], d[MAX_CHUNKS];
	uint8_t buf[512];
	struct journal_rec r;
	struct got g;
	long len;

	sample_chunks(c, 3, 7);
	len = journal_encode(5, c, 3, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(len, (long)journal_rec_size(3));
	CU_ASSERT_EQUAL(get_le64(buf), JOURNAL_MAGIC);
	CU_ASSERT_EQUAL(get_le32(buf + 8), JOURNAL_FORMAT);
	CU_ASSERT_EQUAL(journal_decode(buf, (size_t)len, &r), len);
	CU_ASSERT_EQUAL(r.file, 5);
	CU_ASSERT_EQUAL_FATAL(r.n, 3);
	journal_rec_chunks(&r, d);
	CU_ASSERT(same_chunks(c, d, 3));
	/* Too small a buffer, and an empty record. */
	CU_ASSERT_EQUAL(journal_encode(5, c, 3, buf, (size_t)len - 1),
			-EMSGSIZE);
	CU_ASSERT_EQUAL(journal_encode(1, c, 0, buf, sizeof(buf)),
			JOURNAL_REC_FIXED);
	CU_ASSERT_EQUAL(journal_decode(buf, JOURNAL_REC_FIXED, &r),
			JOURNAL_REC_FIXED);
	CU_ASSERT_EQUAL(r.n, 0);

	write_sample(4);
	CU_ASSERT_EQUAL(load(&g), 4);
	check_sample(&g, 4);
	/* The caller's refusal stops the load there. */
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	CU_ASSERT_EQUAL(journal_load(path, take, &g), 2);
	/* No journal; an empty one. */
	unlink(path);
	CU_ASSERT_EQUAL(load(&g), -ENOENT);
	write_bytes("", 0, 0);
	CU_ASSERT_EQUAL(load(&g), 0);
}

/* Every cut inside the last record: the ones before it stand. */
static void test_torn_tail(void)
{
	uint8_t *img;
	off_t full, last;
	size_t cut;
	struct got g;
	int fd;

	write_sample(3);
	full = file_size();
	last = full - (off_t)journal_rec_size(3);
	img = malloc((size_t)full);
	CU_ASSERT_FATAL(img != NULL);
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(read(fd, img, (size_t)full) == full);
	close(fd);
	for (cut = (size_t)last; cut < (size_t)full; cut++) {
		write_bytes(img, cut, 0);
		CU_ASSERT_EQUAL(load(&g), 2);
		check_sample(&g, 2);
		CU_ASSERT_EQUAL(journal_decode(img + last, cut - (size_t)last,
					       &(struct journal_rec){ 0 }), 0);
	}
	free(img);
}

/* Any byte of record 1 flipped: record 0 only. */
static void test_flipped_byte(void)
{
	uint8_t *img;
	size_t i, r1, r2;
	off_t full;
	struct got g;
	int fd, ok = 1;

	write_sample(3);
	full = file_size();
	r1 = journal_rec_size(1);
	r2 = r1 + journal_rec_size(2);
	img = malloc((size_t)full);
	CU_ASSERT_FATAL(img != NULL);
	fd = open(path, O_RDONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(read(fd, img, (size_t)full) == full);
	close(fd);
	for (i = r1; i < r2; i++) {
		img[i] ^= 0x10;
		write_bytes(img, (size_t)full, 0);
		if (load(&g) != 1 || g.nrec != 1 || g.file[0] != 0)
			ok = 0;
		CU_ASSERT(journal_decode(img + r1, (size_t)full - r1,
					 &(struct journal_rec){ 0 }) <= 0);
		img[i] ^= 0x10;
	}
	CU_ASSERT(ok);
	free(img);
}

/* Not a journal, the format before this one, a future format. */
static void test_foreign(void)
{
	static const char text[] = "this is not a journal, just some text\n";
	uint8_t old[16 + 22 + 4], buf[64];
	struct journal_rec r;
	struct pfs_chunk c;
	struct got g;

	write_bytes(text, sizeof(text), 0);
	CU_ASSERT_EQUAL(load(&g), 0);
	CU_ASSERT_EQUAL(journal_decode(text, sizeof(text), &r),
			-CKPT_EBADMAGIC);
	/* The old format: u32 "DJNL", u32 file, u32 n, chunks, u32 crc. */
	memset(old, 0, sizeof(old));
	put_le32(old, 0x4c4e4a44u);
	put_le32(old + 8, 1);
	put_le32(old + sizeof(old) - 4, crc32c(old, sizeof(old) - 4));
	write_bytes(old, sizeof(old), 0);
	CU_ASSERT_EQUAL(load(&g), 0);
	CU_ASSERT_EQUAL(journal_decode(old, sizeof(old), &r),
			-CKPT_EBADMAGIC);
	/* A good record after foreign bytes is not reached. */
	write_sample(1);
	write_bytes(text, sizeof(text), 0);
	sample_chunks(&c, 1, 0);
	CU_ASSERT_EQUAL(journal_append(path, 0, &c, 1), 0);
	CU_ASSERT_EQUAL(load(&g), 0);
	/* Format 2, CRC right: not read. */
	CU_ASSERT_EQUAL(journal_encode(0, &c, 1, buf, sizeof(buf)),
			(long)journal_rec_size(1));
	put_le32(buf + 8, JOURNAL_FORMAT + 1);
	put_le32(buf + journal_rec_size(1) - 4,
		 crc32c(buf, journal_rec_size(1) - 4));
	CU_ASSERT_EQUAL(journal_decode(buf, journal_rec_size(1), &r),
			-CKPT_EVERSION);
	write_bytes(buf, journal_rec_size(1), 0);
	CU_ASSERT_EQUAL(load(&g), 0);
}

/* A count past the limit is bad; one within it but past the bytes is a
 * torn tail; neither allocates or reads beyond the buffer. */
static void test_huge_counts(void)
{
	struct pfs_chunk c;
	uint8_t buf[64];
	struct journal_rec r;
	struct got g;

	sample_chunks(&c, 1, 0);
	CU_ASSERT_EQUAL(journal_encode(0, &c, JOURNAL_MAX_CHUNKS + 1, buf,
				       sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(journal_append(path, 0, &c, JOURNAL_MAX_CHUNKS + 1),
			-EINVAL);
	CU_ASSERT_EQUAL(journal_encode(0, &c, 1, buf, sizeof(buf)),
			(long)journal_rec_size(1));
	put_le32(buf + 16, UINT32_MAX);
	CU_ASSERT_EQUAL(journal_decode(buf, journal_rec_size(1), &r),
			-CKPT_EPROTO);
	put_le32(buf + 16, JOURNAL_MAX_CHUNKS + 1);
	CU_ASSERT_EQUAL(journal_decode(buf, journal_rec_size(1), &r),
			-CKPT_EPROTO);
	put_le32(buf + 16, JOURNAL_MAX_CHUNKS);
	CU_ASSERT_EQUAL(journal_decode(buf, journal_rec_size(1), &r), 0);
	/* Same after a good record in a file. */
	write_sample(2);
	write_bytes(buf, journal_rec_size(1), 1);
	CU_ASSERT_EQUAL(load(&g), 2);
	check_sample(&g, 2);
	/* A file index the version does not have is the caller's check: the
	 * record decodes. */
	CU_ASSERT_EQUAL(journal_encode(UINT32_MAX, &c, 1, buf, sizeof(buf)),
			(long)journal_rec_size(1));
	CU_ASSERT_EQUAL(journal_decode(buf, journal_rec_size(1), &r),
			(long)journal_rec_size(1));
	CU_ASSERT_EQUAL(r.file, UINT32_MAX);
	/* A file over the largest journal is not read. */
	write_bytes("", 0, 0);
	CU_ASSERT_EQUAL(truncate(path, (off_t)JOURNAL_MAX_BYTES + 1), 0);
	CU_ASSERT_EQUAL(load(&g), -EFBIG);
	unlink(path);
}

static void test_begin(void)
{
	struct got g;

	unlink(path);
	CU_ASSERT_EQUAL(journal_begin(path), 0);
	CU_ASSERT_EQUAL(file_size(), 0);
	CU_ASSERT_EQUAL(load(&g), 0);
	/* A record appended after it. */
	sample_chunks(g.c[0], 2, 9);
	CU_ASSERT_EQUAL(journal_append(path, 4, g.c[0], 2), 0);
	CU_ASSERT_EQUAL(load(&g), 1);
	CU_ASSERT_EQUAL(g.file[0], 4);
	/* A second begin keeps the records there. */
	write_sample(3);
	CU_ASSERT_EQUAL(journal_begin(path), 0);
	CU_ASSERT_EQUAL(load(&g), 3);
	check_sample(&g, 3);
	CU_ASSERT_EQUAL(journal_begin("no-directory.journal"), -EINVAL);
	CU_ASSERT_EQUAL(journal_begin("/nonexistent-ckpt-dir/1.journal"),
			-ENOENT);
	unlink(path);
}

static int suite_init(void)
{
	if (!unit_mkdtemp(dir, sizeof(dir), "test_journal"))
		return -1;
	snprintf(path, sizeof(path), "%s/0000000000000001.journal", dir);
	return 0;
}

static int suite_clean(void)
{
	unlink(path);
	return rmdir(dir) < 0 ? -1 : 0;
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "path", test_path },
		{ "round_trip", test_round_trip },
		{ "torn_tail", test_torn_tail },
		{ "flipped_byte", test_flipped_byte },
		{ "foreign", test_foreign },
		{ "huge_counts", test_huge_counts },
		{ "begin", test_begin },
		{ NULL, NULL }
	};

	return unit_run_suite("journal", suite_init, suite_clean, tests);
}
