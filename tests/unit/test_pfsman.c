/*
 * test_pfsman.c - the PFS manifest format: a round trip with every chunk
 * kind and a base, every truncation and every single-bit flip rejected, and
 * each validation rule hit with an image whose CRC is correct, so that only
 * the rule can catch it; merges of parts, links, long paths.  The queries
 * (pfsman_data, pfsman_strip) are test_pfsman_data.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "codec.h"
#include "crc32c.h"
#include "pfsman.h"

#define IMG_MAX 8192
#define CHUNK   65536u

/* Offsets in the image. */
#define OFF_FORMAT 8
#define OFF_FLAGS  12
#define OFF_JOB    52

static char path0[] = "model/rank00.pt";
static char path1[] = "model/rank01.pt";
static char path2[] = "optim/empty.bin";
static char path3[] = "meta.json";

static struct pfs_file sample_files[4];
static struct pfs_chunk sample_chunks[6];

/*
 * Four files: one of three chunks (RAW, ZSTD, and a REF to a compressed
 * chunk of the base), one of a ZERO chunk, an empty one, and a short one
 * referenced raw in the base.
 */
static uint8_t pxattr[] = { 6, 'u', 's', 'e', 'r', '.', 'k', 2, 0, 'h', 'i' };

static void sample(struct pfsman *m)
{
	static const struct pfs_chunk chunks[5] = {
		{ 0, CHUNK, 0x11111111, CHUNK, PFS_RAW, 0 },
		{ 65536, CHUNK, 0x22222222, 1000, PFS_ZSTD, 0 },
		{ 777, 150000 - 2 * CHUNK, 0x33333333, 500, PFS_REF, PFS_ZSTD },
		{ 0, CHUNK, 0x44444444, 0, PFS_ZERO, 0 },
		{ 0, 10, 0x55555555, 10, PFS_REF, PFS_RAW },
	};

	memset(m, 0, sizeof(*m));
	m->flags = PFS_F_COMPRESSED | PFS_F_INCREMENTAL;
	m->seq = 42;
	m->sealed_ns = 1700000000123456789ull;
	m->drained_ns = 1700000099123456789ull;
	m->uid = 1000;
	m->chunk = CHUNK;
	m->shuffle = 2;
	strcpy(m->job, "llama70b/run3");
	strcpy(m->version, "step-001200");
	strcpy(m->base, "step-001100");
	sample_files[0] = (struct pfs_file){ path0, 150000, 0, 3,
		{ CKPT_ATTR_ALL, 0640, 1000, 100, 11, 22, 33, 0 }, pxattr,
		sizeof(pxattr), 0, 0 };
	sample_files[1] = (struct pfs_file){ .path = path1, .size = CHUNK,
					     .first = 3, .count = 1 };
	sample_files[2] = (struct pfs_file){ .path = path2, .first = 4 };
	sample_files[3] = (struct pfs_file){ .path = path3, .size = 10,
		.first = 4, .count = 1,
		.attr = { CKPT_ATTR_MODE, 0755, 0, 0, 0, 0, 0, 0 } };
	memset(sample_chunks, 0, sizeof(sample_chunks));
	memcpy(sample_chunks, chunks, sizeof(chunks));
	m->nfiles = 4;
	m->files = sample_files;
	m->nchunks = 5;
	m->chunks = sample_chunks;
}

static long encode(const struct pfsman *m, uint8_t *img)
{
	long n = pfsman_encode(m, img, IMG_MAX);

	CU_ASSERT_FATAL(n > 0);
	return n;
}

/* Recompute the trailing CRC after a deliberate edit. */
static void fix_crc(uint8_t *img, size_t len)
{
	put_le32(img + len - 4, crc32c(img, len - 4));
}

static int decode(const uint8_t *img, size_t len)
{
	struct pfsman m;
	int ret = pfsman_decode(img, len, &m);

	if (ret == 0)
		pfsman_release(&m);
	else
		CU_ASSERT_PTR_NULL(m.files);
	return ret;
}

static void assert_same(const struct pfsman *a, const struct pfsman *b)
{
	uint32_t i;

	CU_ASSERT_EQUAL(a->flags, b->flags);
	CU_ASSERT_EQUAL(a->seq, b->seq);
	CU_ASSERT_EQUAL(a->sealed_ns, b->sealed_ns);
	CU_ASSERT_EQUAL(a->drained_ns, b->drained_ns);
	CU_ASSERT_EQUAL(a->uid, b->uid);
	CU_ASSERT_EQUAL(a->chunk, b->chunk);
	CU_ASSERT_EQUAL(a->shuffle, b->shuffle);
	CU_ASSERT_STRING_EQUAL(a->job, b->job);
	CU_ASSERT_STRING_EQUAL(a->version, b->version);
	CU_ASSERT_STRING_EQUAL(a->base, b->base);
	CU_ASSERT_STRING_EQUAL(a->writer, b->writer);
	CU_ASSERT_EQUAL_FATAL(a->nfiles, b->nfiles);
	CU_ASSERT_EQUAL_FATAL(a->nchunks, b->nchunks);
	for (i = 0; i < a->nfiles; i++) {
		CU_ASSERT_STRING_EQUAL(a->files[i].path, b->files[i].path);
		CU_ASSERT_EQUAL(a->files[i].size, b->files[i].size);
		CU_ASSERT(memcmp(&a->files[i].attr, &b->files[i].attr,
				 sizeof(a->files[i].attr)) == 0);
		CU_ASSERT_EQUAL_FATAL(a->files[i].xlen, b->files[i].xlen);
		CU_ASSERT(!a->files[i].xlen ||
			  !memcmp(a->files[i].xattr, b->files[i].xattr,
				  a->files[i].xlen));
		CU_ASSERT_EQUAL(a->files[i].first, b->files[i].first);
		CU_ASSERT_EQUAL(a->files[i].count, b->files[i].count);
	}
	for (i = 0; i < a->nchunks; i++) {
		const struct pfs_chunk *x = &a->chunks[i], *y = &b->chunks[i];

		CU_ASSERT_EQUAL(x->file_off, y->file_off);
		CU_ASSERT_EQUAL(x->len, y->len);
		CU_ASSERT_EQUAL(x->crc, y->crc);
		CU_ASSERT_EQUAL(x->stored, y->stored);
		CU_ASSERT_EQUAL(x->kind, y->kind);
		CU_ASSERT_EQUAL(x->kind2, y->kind2);
	}
}

static void test_round_trip(void)
{
	uint8_t img[IMG_MAX];
	struct pfsman m, out;
	long n;

	sample(&m);
	n = encode(&m, img);
	CU_ASSERT_EQUAL(n, (long)pfsman_size(&m));
	CU_ASSERT(memcmp(img, "CKPTPFS1", 8) == 0);
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	assert_same(&m, &out);
	pfsman_release(&out);
	CU_ASSERT_PTR_NULL(out.files);
	CU_ASSERT_PTR_NULL(out.chunks);
	pfsman_release(&out);                   /* twice is harmless */

	/* A plain drain: no base, no flags, every chunk raw. */
	sample(&m);
	m.flags = 0;
	m.shuffle = 0;
	m.base[0] = '\0';
	m.chunks[1] = (struct pfs_chunk){ CHUNK, CHUNK, 2, CHUNK, PFS_RAW, 0 };
	m.chunks[2] = (struct pfs_chunk){ 2 * CHUNK, 150000 - 2 * CHUNK, 3,
					  150000 - 2 * CHUNK, PFS_RAW, 0 };
	m.chunks[4] = (struct pfs_chunk){ 0, 10, 5, 10, PFS_RAW, 0 };
	n = encode(&m, img);
	CU_ASSERT_EQUAL(n, (long)pfsman_size(&m));
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	assert_same(&m, &out);
	pfsman_release(&out);

	/* No files, no chunks. */
	m.nfiles = 0;
	m.nchunks = 0;
	n = encode(&m, img);
	CU_ASSERT_EQUAL(n, (long)pfsman_size(&m));
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	assert_same(&m, &out);
	pfsman_release(&out);
}

static void test_encode_cap(void)
{
	uint8_t img[IMG_MAX];
	struct pfsman m;
	long n;

	sample(&m);
	n = encode(&m, img);
	CU_ASSERT_EQUAL(pfsman_encode(&m, img, n - 1), -EMSGSIZE);
	CU_ASSERT_EQUAL(pfsman_encode(&m, img, n - 4), -EMSGSIZE);
	CU_ASSERT_EQUAL(pfsman_encode(&m, img, 0), -EMSGSIZE);
	CU_ASSERT_EQUAL(pfsman_encode(&m, img, n), n);

	/* A name without its NUL is refused, not read past. */
	memset(m.base, 'b', sizeof(m.base));
	CU_ASSERT_EQUAL(pfsman_encode(&m, img, IMG_MAX), -EMSGSIZE);
}

static void test_truncation(void)
{
	uint8_t img[IMG_MAX], cut[IMG_MAX];
	struct pfsman m;
	long n, i;

	sample(&m);
	n = encode(&m, img);
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(decode(img, i), 0);
	/* Also with the CRC recomputed over the shortened image, so that
	 * the structure checks, not the CRC, must catch it. */
	for (i = 4; i < n; i++) {
		memcpy(cut, img, i - 4);
		fix_crc(cut, i);
		CU_ASSERT_NOT_EQUAL(decode(cut, i), 0);
	}
}

static void test_bit_flips(void)
{
	uint8_t img[IMG_MAX];
	struct pfsman m;
	long n, i;
	int bit;

	sample(&m);
	n = encode(&m, img);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit++) {
			img[i] ^= 1u << bit;
			CU_ASSERT_NOT_EQUAL(decode(img, n), 0);
			img[i] ^= 1u << bit;
		}
	}
	/* Specific positions give specific errors. */
	img[0] ^= 1;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EBADMAGIC);
	img[0] ^= 1;
	img[OFF_FORMAT] ^= 8;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EVERSION);
	img[OFF_FORMAT] ^= 8;
	/* Format 1 had another layout on the PFS: not readable here. */
	CU_ASSERT_EQUAL(img[OFF_FORMAT], PFSMAN_FORMAT_V4);
	img[OFF_FORMAT] = 1;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EVERSION);
	img[OFF_FORMAT] = PFSMAN_FORMAT_V4;
	img[n / 2] ^= 0x80;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_ECORRUPT);
	img[n / 2] ^= 0x80;
	img[n - 1] ^= 0x01;
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_ECORRUPT);
	img[n - 1] ^= 0x01;
	CU_ASSERT_EQUAL(decode(img, n), 0);

	/* Unknown flags mean a format we cannot read. */
	put_le32(img + OFF_FLAGS, get_le32(img + OFF_FLAGS) | 0x4);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EVERSION);
}

/* Encode m (CRC and all) and expect decode to give want. */
static void expect_at(const struct pfsman *m, int want, int line)
{
	uint8_t img[IMG_MAX];
	long n = encode(m, img);
	int got = decode(img, n);

	CU_ASSERT_EQUAL(got, want);
	if (got != want)
		fprintf(stderr, "line %d: decode gave %d, want %d\n", line,
			got, want);
}

#define expect(m, want) expect_at(m, want, __LINE__)

/* Counts are checked against the bytes present before any allocation. */
static void test_counts(void)
{
	uint8_t img[IMG_MAX];
	struct pfsman m;
	size_t cnt;
	long n;

	sample(&m);
	n = encode(&m, img);
	/* The counts sit right after the three strings. */
	cnt = OFF_JOB + 2 + strlen(m.job) + 2 + strlen(m.version) + 2 +
	      strlen(m.base);
	CU_ASSERT_EQUAL(get_le32(img + cnt), 4);
	CU_ASSERT_EQUAL(get_le32(img + cnt + 4), 5);

	put_le32(img + cnt, 0xffffffffu);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt, PFSMAN_MAX_FILES);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt, PFSMAN_MAX_FILES + 1);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt, 5);                 /* one more than present */
	fix_crc(img, n);
	CU_ASSERT_NOT_EQUAL(decode(img, n), 0);
	put_le32(img + cnt, 3);                 /* one fewer */
	fix_crc(img, n);
	CU_ASSERT_NOT_EQUAL(decode(img, n), 0);
	put_le32(img + cnt, 4);
	put_le32(img + cnt + 4, PFSMAN_MAX_CHUNKS + 1);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt + 4, 0xffffffffu);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt + 4, 6);             /* one more than present */
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt + 4, 4);             /* one fewer: trailing bytes */
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	put_le32(img + cnt + 4, 5);
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), 0);

	/* A trailing byte before the CRC. */
	memmove(img + n, img + n - 4, 4);
	img[n - 4] = 0;
	fix_crc(img, n + 1);
	CU_ASSERT_EQUAL(decode(img, n + 1), -CKPT_EPROTO);

	/* The table counts, encoded consistently but wrong. */
	sample(&m);
	m.nchunks = 4;                          /* the last file's chunk */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	sample_chunks[5] = (struct pfs_chunk){ 0, 1, 0, 0, PFS_ZERO, 0 };
	m.nchunks = 6;                          /* a chunk of no file */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.nfiles = 0;                           /* chunks but no files */
	expect(&m, -CKPT_EPROTO);
}

/* Each file's chunk range: position in the table and length. */
static void test_ranges(void)
{
	struct pfsman m;

	sample(&m);
	expect(&m, 0);
	sample(&m);
	m.files[0].count = 2;                   /* ceil(150000/64K) is 3 */
	m.files[1].first = 2;
	m.files[2].first = 3;
	m.files[3].first = 3;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[0].count = 4;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[1].first = 2;                   /* overlaps file 0 */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[3].first = 5;                   /* past the table */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[3].first = 0xffffffffu;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[2].count = 1;                   /* an empty file has none */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[2].size = UINT64_MAX;           /* count cannot match */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[1].size = CHUNK + 1;            /* would need two chunks */
	expect(&m, -CKPT_EPROTO);
}

/* Chunk lengths must add up to the file's size, chunk by chunk. */
static void test_lengths(void)
{
	struct pfsman m;

	sample(&m);
	m.files[0].size = 150001;               /* same count, last len off */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.files[1].size = CHUNK - 1;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[0].len = CHUNK - 1;            /* short chunk not last */
	m.chunks[0].stored = CHUNK - 1;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[0].len = CHUNK + 1;
	m.chunks[0].stored = CHUNK + 1;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[2].len = 0;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[4].len = 11;
	m.chunks[4].stored = 11;
	expect(&m, -CKPT_EPROTO);
	/* A size that is an exact multiple of the chunk. */
	sample(&m);
	m.files[0].size = 3 * (uint64_t)CHUNK;
	m.chunks[2].len = CHUNK;
	expect(&m, 0);
}

/* Kinds, what each stores, and the flags and base they need. */
static void test_kinds(void)
{
	static const uint8_t bad_kinds[] = { 0, PFS_ZERO + 1, 0x80, 0xff };
	struct pfsman m;
	size_t i;

	for (i = 0; i < sizeof(bad_kinds); i++) {
		sample(&m);
		m.chunks[3].kind = bad_kinds[i];
		expect(&m, -CKPT_EPROTO);
		sample(&m);
		m.chunks[2].kind2 = bad_kinds[i];
		expect(&m, -CKPT_EPROTO);
	}
	/* RAW keeps every byte. */
	sample(&m);
	m.chunks[0].stored = CHUNK - 1;
	expect(&m, -CKPT_EPROTO);
	m.chunks[0].stored = CHUNK + 1;
	expect(&m, -CKPT_EPROTO);
	m.chunks[0].stored = 0;
	expect(&m, -CKPT_EPROTO);
	/* ZSTD: a frame, and smaller than the chunk. */
	sample(&m);
	m.chunks[1].stored = 0;
	expect(&m, -CKPT_EPROTO);
	m.chunks[1].stored = CHUNK;
	expect(&m, -CKPT_EPROTO);
	m.chunks[1].stored = CHUNK - 1;
	expect(&m, 0);
	/* ZERO stores nothing. */
	sample(&m);
	m.chunks[3].stored = 1;
	expect(&m, -CKPT_EPROTO);
	/* kind2 only for REF, and never REF again. */
	sample(&m);
	m.chunks[0].kind2 = PFS_RAW;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[3].kind2 = PFS_ZERO;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[2].kind2 = PFS_REF;
	expect(&m, -CKPT_EPROTO);
	/* A REF's stored follows its kind2. */
	sample(&m);
	m.chunks[4].stored = 9;                 /* kind2 RAW, len 10 */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[2].stored = 0;                 /* kind2 ZSTD */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[2].kind2 = PFS_ZERO;           /* stored 500 */
	expect(&m, -CKPT_EPROTO);
	m.chunks[2].stored = 0;
	m.chunks[2].file_off = 0;
	expect(&m, 0);
	/* REF only with a base and the incremental flag. */
	sample(&m);
	m.base[0] = '\0';
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.flags = PFS_F_COMPRESSED;
	expect(&m, -CKPT_EPROTO);
	/* ZSTD only with the compressed flag; a REF to a compressed chunk
	 * of the base needs no such flag here. */
	sample(&m);
	m.flags = PFS_F_INCREMENTAL;
	expect(&m, -CKPT_EPROTO);
	m.chunks[1] = (struct pfs_chunk){ CHUNK, CHUNK, 2, CHUNK, PFS_RAW, 0 };
	expect(&m, 0);
	/* file_off + stored must not wrap. */
	sample(&m);
	m.chunks[1].file_off = UINT64_MAX - 1000;
	expect(&m, 0);
	m.chunks[1].file_off = UINT64_MAX - 999;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunks[0].file_off = UINT64_MAX;
	expect(&m, -CKPT_EPROTO);
}

static void test_head_fields(void)
{
	struct pfsman m;

	sample(&m);
	m.chunk = 0;
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.chunk = 65536 + 512;                  /* not a multiple of 4096 */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.shuffle = 3;
	expect(&m, -CKPT_EPROTO);
	m.shuffle = 8;
	expect(&m, -CKPT_EPROTO);
	m.shuffle = 4;
	expect(&m, 0);
	m.shuffle = 0;
	expect(&m, 0);
	sample(&m);
	strcpy(m.base, m.version);              /* referencing itself */
	expect(&m, -CKPT_EPROTO);
	sample(&m);
	m.flags |= 0x80000000u;
	expect(&m, -CKPT_EVERSION);
}

static void test_names(void)
{
	static char bad_path[] = "model/../../etc/passwd";
	static char abs_path[] = "/abs";
	static char empty_path[] = "";
	static char old_name[] = ".ckpt-manifest";
	static char layout_name[] = "manifest";
	static char tmp_name[] = "manifest.tmp";
	static char dup_path[] = "model/rank00.pt";
	struct pfsman m;

	sample(&m);
	strcpy(m.job, "../job");
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	strcpy(m.job, "a//b");
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	strcpy(m.version, "a/b");
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	m.version[0] = '\0';
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	strcpy(m.base, "..");
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	strcpy(m.base, "x/y");
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	strcpy(m.base, ".");
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	m.files[2].path = bad_path;
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	m.files[0].path = abs_path;
	expect(&m, -CKPT_EBADNAME);
	sample(&m);
	m.files[3].path = empty_path;
	expect(&m, -CKPT_EBADNAME);
	/* Format 2: the manifest is not among the files, so any valid path is a
	 * file, the names of the manifest (format 1's too) included. */
	sample(&m);
	m.files[3].path = old_name;
	expect(&m, 0);
	m.files[3].path = layout_name;
	expect(&m, 0);
	m.files[3].path = tmp_name;
	expect(&m, 0);
	/* Two files, one path. */
	sample(&m);
	m.files[3].path = dup_path;
	expect(&m, -CKPT_EPROTO);
}

/* The format-2 encoder as it was (no file attributes): versions drained
 * by an older ckptd must stay readable. */
static long encode_v2(const struct pfsman *m, uint8_t *img)
{
	struct enc e;
	uint32_t i;

	enc_init(&e, img, IMG_MAX);
	enc_u64(&e, PFSMAN_MAGIC);
	enc_u32(&e, PFSMAN_FORMAT_V2);
	enc_u32(&e, m->flags);
	enc_u64(&e, m->seq);
	enc_u64(&e, m->sealed_ns);
	enc_u64(&e, m->drained_ns);
	enc_u32(&e, m->uid);
	enc_u32(&e, m->chunk);
	enc_u32(&e, m->shuffle);
	enc_str(&e, m->job);
	enc_str(&e, m->version);
	enc_str(&e, m->base);
	enc_u32(&e, m->nfiles);
	enc_u32(&e, m->nchunks);
	for (i = 0; i < m->nfiles; i++) {
		enc_str(&e, m->files[i].path);
		enc_u64(&e, m->files[i].size);
		enc_u32(&e, m->files[i].first);
		enc_u32(&e, m->files[i].count);
	}
	for (i = 0; i < m->nchunks; i++) {
		enc_u64(&e, m->chunks[i].file_off);
		enc_u32(&e, m->chunks[i].len);
		enc_u32(&e, m->chunks[i].crc);
		enc_u32(&e, m->chunks[i].stored);
		enc_u8(&e, m->chunks[i].kind);
		enc_u8(&e, m->chunks[i].kind2);
	}
	return enc_seal(&e);
}

static void test_format2(void)
{
	uint8_t img[IMG_MAX];
	struct pfsman m, out;
	long n, i;

	sample(&m);
	memset(&sample_files[0].attr, 0, sizeof(sample_files[0].attr));
	memset(&sample_files[3].attr, 0, sizeof(sample_files[3].attr));
	sample_files[0].xlen = 0;
	n = encode_v2(&m, img);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	assert_same(&m, &out);
	pfsman_release(&out);
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(decode(img, i), 0);
	/* Attribute rules: a type bit in mode, an unknown set bit. */
	sample(&m);
	sample_files[0].attr.mode = 0100644;
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	sample(&m);
	sample_files[0].attr.set = 0x40;
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
}

/* Split the sample into two parts (files 0-1 and 2-3, chunk tables
 * rebased), as two nodes of a cluster would drain them. */
static void split(const struct pfsman *m, struct pfsman *a, struct pfsman *b)
{
	static struct pfs_file fa[2], fb[2];

	*a = *m;
	*b = *m;
	memcpy(fa, m->files, sizeof(fa));
	memcpy(fb, m->files + 2, sizeof(fb));
	fb[0].first -= 4;
	fb[1].first -= 4;
	a->files = fa;
	a->nfiles = 2;
	a->chunks = m->chunks;
	a->nchunks = 4;
	b->files = fb;
	b->nfiles = 2;
	b->chunks = m->chunks + 4;
	b->nchunks = 1;
	b->seq = 7;
	b->sealed_ns = m->sealed_ns + 5;
	b->drained_ns = m->drained_ns - 5;
}

/* The union of parts is the whole, decodes, and keeps parts[0]'s seq and
 * the newest times; parts that disagree or share a path are refused. */
/* Hard links: a name with no chunks naming an earlier file; decode counts
 * the names; a link of a link, of a later entry, with chunks or with
 * xattrs of its own is refused; a merge moves the link with its part. */
static void test_links(void)
{
	static char lpath[] = "model/last.pt";
	struct pfs_file files[5];
	uint8_t img[IMG_MAX];
	struct pfsman m, out, parts[2];
	long n;

	sample(&m);
	memcpy(files, sample_files, sizeof(sample_files));
	files[4] = (struct pfs_file){ .path = lpath, .size = 150000,
				      .first = 5, .link = 1 };
	m.files = files;
	m.nfiles = 5;
	n = encode(&m, img);
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	CU_ASSERT_EQUAL(out.files[4].link, 1);
	CU_ASSERT_EQUAL(out.files[0].nlink, 2);
	CU_ASSERT_EQUAL(out.files[4].nlink, 1);
	CU_ASSERT_EQUAL(out.files[1].nlink, 1);
	CU_ASSERT_EQUAL(PFS_DATA(&out, 4), 0u);
	CU_ASSERT_EQUAL(PFS_DATA(&out, 1), 1u);
	CU_ASSERT_EQUAL(pfsman_find(&out, "model/last.pt", 0), 4);
	CU_ASSERT_EQUAL(pfsman_find(&out, "nope", 2), -ENOENT);

	/* Merged as the second part: the link follows its file. */
	parts[0] = out;
	parts[1] = out;
	CU_ASSERT_EQUAL(pfsman_merge(parts, 1, &m), 0);
	CU_ASSERT_EQUAL(m.files[4].link, 1);
	pfsman_release(&m);
	pfsman_release(&out);

	sample(&m);
	m.files = files;
	m.nfiles = 5;
	files[4].link = 5;                      /* itself */
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	files[4].link = 6;                      /* past the end */
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	files[4].link = 1;
	files[4].xattr = pxattr;                /* xattrs of its own */
	files[4].xlen = sizeof(pxattr);
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	files[4].xattr = NULL;
	files[4].xlen = 0;
	files[3].link = 1;                      /* a link with a chunk */
	n = encode(&m, img);
	CU_ASSERT_NOT_EQUAL(decode(img, n), 0);
	files[3].link = 0;
	files[4].link = 5;
	files[3].link = 0;
	files[2].link = 1;                      /* link of ... */
	files[4].link = 3;                      /* ... a link */
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
}

/* A directory both parts hold is merged into one entry (the first
 * part's); a link after a skipped one still names its file; a file
 * against a directory of the same path still clashes. */
static void test_merge_dirs(void)
{
	struct ckpt_attr dir = { .set = CKPT_ATTR_MODE,
				 .mode = CKPT_ATTR_IFDIR | 0755 };
	struct pfs_chunk k = { .len = 10, .stored = 10, .kind = PFS_RAW };
	struct pfs_file a[2] = {
		{ .path = "model", .attr = dir },
		{ .path = "model/a", .size = 10, .first = 0, .count = 1 },
	};
	struct pfs_file b[3] = {
		{ .path = "model", .attr = dir },
		{ .path = "model/b", .size = 10, .first = 0, .count = 1 },
		{ .path = "model/c", .size = 10, .first = 1, .link = 2 },
	};
	struct pfsman parts[2] = {
		{ .chunk = CHUNK, .nfiles = 2, .files = a, .nchunks = 1,
		  .chunks = &k, .job = "train/d", .version = "v1" },
		{ .chunk = CHUNK, .nfiles = 3, .files = b, .nchunks = 1,
		  .chunks = &k, .job = "train/d", .version = "v1" },
	}, out;
	uint8_t img[IMG_MAX];
	long n;

	CU_ASSERT_EQUAL_FATAL(pfsman_merge(parts, 2, &out), 0);
	CU_ASSERT_EQUAL_FATAL(out.nfiles, 4);
	CU_ASSERT_STRING_EQUAL(out.files[0].path, "model");
	CU_ASSERT_STRING_EQUAL(out.files[2].path, "model/b");
	CU_ASSERT_STRING_EQUAL(out.files[3].path, "model/c");
	CU_ASSERT_EQUAL(out.files[3].link, 3);
	CU_ASSERT_EQUAL(out.files[2].first, 1);
	n = encode(&out, img);
	CU_ASSERT_EQUAL(decode(img, n), 0);
	pfsman_release(&out);
	b[0].attr = (struct ckpt_attr){ 0 };     /* a regular file */
	CU_ASSERT_EQUAL(pfsman_merge(parts, 2, &out), -EEXIST);
}

static void test_merge(void)
{
	struct pfsman m, parts[2], out;
	uint8_t img[IMG_MAX];
	long n;

	sample(&m);
	split(&m, &parts[0], &parts[1]);
	/* Each part names its writer; the merged version names none. */
	strcpy(parts[0].writer, "n1");
	strcpy(parts[1].writer, "n2");
	strcpy(parts[0].node, "n1");
	parts[0].nparts = 2;
	CU_ASSERT_EQUAL_FATAL(pfsman_merge(parts, 2, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.writer, "");
	CU_ASSERT_STRING_EQUAL(out.node, "");
	CU_ASSERT_EQUAL(out.nparts, 0);
	CU_ASSERT_EQUAL(out.seq, m.seq);
	CU_ASSERT_EQUAL(out.sealed_ns, m.sealed_ns + 5);
	CU_ASSERT_EQUAL(out.drained_ns, m.drained_ns);
	out.sealed_ns = m.sealed_ns;
	assert_same(&m, &out);
	n = encode(&out, img);
	CU_ASSERT_EQUAL(decode(img, n), 0);
	pfsman_release(&out);
	/* One part alone is itself. */
	CU_ASSERT_EQUAL_FATAL(pfsman_merge(&m, 1, &out), 0);
	assert_same(&m, &out);
	pfsman_release(&out);
	CU_ASSERT_EQUAL(pfsman_merge(parts, 0, &out), -EINVAL);
	/* The same path in two parts. */
	split(&m, &parts[0], &parts[1]);
	parts[1].files[1].path = path0;
	CU_ASSERT_EQUAL(pfsman_merge(parts, 2, &out), -EEXIST);
	CU_ASSERT_PTR_NULL(out.files);
	/* Parts of different versions, uids, layouts or bases. */
	split(&m, &parts[0], &parts[1]);
	strcpy(parts[1].version, "step-000001");
	CU_ASSERT_EQUAL(pfsman_merge(parts, 2, &out), -CKPT_EPROTO);
	split(&m, &parts[0], &parts[1]);
	parts[1].uid++;
	CU_ASSERT_EQUAL(pfsman_merge(parts, 2, &out), -CKPT_EPROTO);
	split(&m, &parts[0], &parts[1]);
	parts[1].chunk *= 2;
	CU_ASSERT_EQUAL(pfsman_merge(parts, 2, &out), -CKPT_EPROTO);
	split(&m, &parts[0], &parts[1]);
	strcpy(parts[1].base, "step-000900");
	CU_ASSERT_EQUAL(pfsman_merge(parts, 2, &out), -CKPT_EPROTO);
	/* A part that is not incremental may have any base (none). */
	parts[1].flags = 0;
	parts[1].chunks[0].kind = PFS_RAW;
	parts[1].chunks[0].kind2 = 0;
	CU_ASSERT_EQUAL_FATAL(pfsman_merge(parts, 2, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.base, m.base);
	CU_ASSERT_EQUAL(out.flags, m.flags);
	pfsman_release(&out);
}

/* A path of n bytes in lp: components of 100 bytes. */
static const char *long_path(size_t n)
{
	static char lp[CKPT_PATH_MAX2 + 2];
	size_t i;

	for (i = 0; i < n; i++)
		lp[i] = i % 101 == 100 ? '/' : 'p';
	lp[n] = '\0';
	return lp;
}

/* m with a path of CKPT_PATH_MAX2 bytes: encoded as format (checked), it
 * decodes with that path; then the image, said to be format other, is
 * decoded again: what that answers. */
static int long_path_trip(struct pfsman *m, uint8_t *img, uint32_t format,
			  uint32_t other)
{
	struct pfsman out;
	long n;

	sample_files[2].path = (char *)long_path(CKPT_PATH_MAX2);
	n = encode(m, img);
	CU_ASSERT_EQUAL(get_le32(img + OFF_FORMAT), format);
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.files[2].path, long_path(CKPT_PATH_MAX2));
	pfsman_release(&out);
	put_le32(img + OFF_FORMAT, other);
	fix_crc(img, n);
	return decode(img, n);
}

/* Format 5 holds paths up to CKPT_PATH_MAX2 and is written only for a
 * version that has one (and no writer); format 4 still stops at
 * CKPT_PATH_MAX. */
static void test_long_paths(void)
{
	static uint8_t img[IMG_MAX];
	struct pfsman m;
	long n;

	sample(&m);
	/* The same bytes said to be format 4: past its limit. */
	CU_ASSERT_EQUAL(long_path_trip(&m, img, PFSMAN_FORMAT_V5,
				       PFSMAN_FORMAT_V4), -CKPT_EPROTO);
	/* 1024 bytes fit format 4, which is then written. */
	long_path(CKPT_PATH_MAX);
	n = encode(&m, img);
	CU_ASSERT_EQUAL(get_le32(img + OFF_FORMAT), PFSMAN_FORMAT_V4);
	CU_ASSERT_EQUAL(decode(img, n), 0);
	/* 4096 bytes, or a 256-byte component: refused. */
	long_path(CKPT_PATH_MAX2 + 1);
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	memset(sample_files[2].path, 'c', 256);
	sample_files[2].path[256] = '\0';
	n = encode(&m, img);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EBADNAME);
}

/* Format 6 carries the node that drained the version, and is written only
 * with one: a round trip, with a long path too; every truncation refused;
 * an empty writer refused (format 6 is never written without one); a
 * writer with a NUL or past CKPT_HOST_MAX refused. */
static void test_writer(void)
{
	static uint8_t img[IMG_MAX];
	struct pfsman m, out;
	size_t wo;
	long n, i;

	sample(&m);
	strcpy(m.writer, "n2");
	n = encode(&m, img);
	CU_ASSERT_EQUAL(n, (long)pfsman_size(&m));
	CU_ASSERT_EQUAL(get_le32(img + OFF_FORMAT), PFSMAN_FORMAT);
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	assert_same(&m, &out);
	pfsman_release(&out);
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(decode(img, i), 0);
	/* The writer's str, after base's. */
	wo = OFF_JOB + 2 + strlen(m.job) + 2 + strlen(m.version) + 2 +
	     strlen(m.base);
	CU_ASSERT_EQUAL_FATAL(img[wo] | img[wo + 1] << 8, 2);
	CU_ASSERT_EQUAL_FATAL(memcmp(img + wo + 2, "n2", 2), 0);
	img[wo + 3] = '\0';
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	/* Empty: the two bytes of the name taken out. */
	n = encode(&m, img);
	memmove(img + wo + 2, img + wo + 4, n - (wo + 4));
	img[wo] = img[wo + 1] = 0;
	n -= 2;
	fix_crc(img, n);
	CU_ASSERT_EQUAL(decode(img, n), -CKPT_EPROTO);
	/* The longest name fits. */
	memset(m.writer, 'w', CKPT_HOST_MAX);
	m.writer[CKPT_HOST_MAX] = '\0';
	n = encode(&m, img);
	CU_ASSERT_EQUAL_FATAL(pfsman_decode(img, n, &out), 0);
	CU_ASSERT_EQUAL(strlen(out.writer), CKPT_HOST_MAX);
	pfsman_release(&out);
	/* A long path and a writer: format 6 holds both; the same image
	 * said to be format 5 (no writer) is refused. */
	CU_ASSERT_NOT_EQUAL(long_path_trip(&m, img, PFSMAN_FORMAT,
					   PFSMAN_FORMAT_V5), 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "format2", test_format2 },
		{ "encode_cap", test_encode_cap },
		{ "truncation", test_truncation },
		{ "bit_flips", test_bit_flips },
		{ "counts", test_counts },
		{ "ranges", test_ranges },
		{ "lengths", test_lengths },
		{ "kinds", test_kinds },
		{ "head_fields", test_head_fields },
		{ "names", test_names },
		{ "merge", test_merge },
		{ "merge dirs", test_merge_dirs },
		{ "links", test_links },
		{ "long_paths", test_long_paths },
		{ "writer", test_writer },
		{ NULL, NULL }
	};

	return unit_run("pfsman", tests);
}
