/*
 * fuzz_pfsman.c - libFuzzer harness for pfsman_decode().  As well as the
 * raw input, a copy with its trailing CRC made right is decoded, so that
 * mutations get past the checksum.  A manifest that decodes is checked
 * against what the decoder promises, and encoded again to the same bytes.
 *
 * Random bytes seldom make a chunk table whose lengths add up, so the input
 * also drives a builder: it picks files, sizes and chunk kinds for a valid
 * manifest (which must decode), then overwrites one byte of its image, so
 * that the checks deep in the chunk table see near misses.
 *
 * fuzz-sources: lib/pfsman.c lib/codec.c lib/crc32c.c lib/names.c lib/xattr.c
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "pfsman.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What decode promises: the files tile the chunk table, and each chunk has
 * its exact length, a known kind and a stored size to match. */
static void check(const struct pfsman *m)
{
	const struct pfs_chunk *c;
	uint64_t sum;
	uint32_t i, j, next = 0;

	for (i = 0; i < m->nfiles; i++) {
		if (m->files[i].first != next ||
		    m->files[i].count > m->nchunks - next)
			abort();
		sum = 0;
		for (j = 0; j < m->files[i].count; j++) {
			c = &m->chunks[next + j];
			if (c->len == 0 || c->len > m->chunk)
				abort();
			if (c->kind < PFS_RAW || c->kind > PFS_ZERO)
				abort();
			if (c->kind == PFS_REF && !m->base[0])
				abort();
			if (c->kind == PFS_RAW && c->stored != c->len)
				abort();
			if (c->file_off + c->stored < c->file_off)
				abort();
			sum += c->len;
		}
		if (sum != m->files[i].size)
			abort();
		next += m->files[i].count;
	}
	if (next != m->nchunks)
		abort();
}

/* Decode, and check what decoded; returns what decode did. */
static int decode_one(const uint8_t *buf, size_t len)
{
	struct pfsman m;
	uint8_t *again;
	long n;
	int ret;

	ret = pfsman_decode(buf, len, &m);
	if (ret)
		return ret;
	check(&m);
	if (pfsman_size(&m) != len || !(again = malloc(len)))
		abort();
	n = pfsman_encode(&m, again, len);
	/* The same bytes, but for the format: 5 is written only when a path
	 * needs it, and read whenever it is there, so a format 5 image of
	 * short paths comes back as 4 (and its CRC with it); 6, which has a
	 * writer, always comes back as 6. */
	if (n != (long)len || memcmp(again, buf, 8) ||
	    memcmp(again + 12, buf + 12, len - 16) ||
	    (memcmp(again + 8, buf + 8, 4) &&
	     (get_le32(buf + 8) != PFSMAN_FORMAT_V5 ||
	      get_le32(again + 8) != PFSMAN_FORMAT_V4)))
		abort();
	free(again);
	pfsman_release(&m);
	return 0;
}

#define B_FILES 4
#define B_CHUNKS 4

/* One valid chunk of len bytes, its kind and stored size from byte v. */
static void build_chunk(struct pfs_chunk *c, uint32_t len, uint8_t v)
{
	static const uint8_t kind2[3] = { PFS_RAW, PFS_ZSTD, PFS_ZERO };

	c->len = len;
	c->crc = v * 0x01010101u;
	c->file_off = (uint64_t)v << 12;
	c->kind = v % 4 + 1;
	c->kind2 = c->kind == PFS_REF ? kind2[v / 4 % 3] : 0;
	/* A one-byte chunk cannot have a smaller frame: store it raw. */
	if (len == 1 && c->kind == PFS_ZSTD)
		c->kind = PFS_RAW;
	if (len == 1 && c->kind2 == PFS_ZSTD)
		c->kind2 = PFS_RAW;
	switch (c->kind == PFS_REF ? c->kind2 : c->kind) {
	case PFS_RAW:
		c->stored = len;
		break;
	case PFS_ZSTD:
		c->stored = 1 + v % (len - 1);
		break;
	default:
		c->stored = 0;
	}
}

static void build(const uint8_t *data, size_t size)
{
	static char paths[B_FILES][4] = { "f0", "d/f1", "f2", "e/f" };
	struct pfs_chunk chunks[B_FILES * B_CHUNKS];
	struct pfs_file files[B_FILES];
	uint8_t img[1024];
	struct pfsman m;
	uint32_t i, j, left;
	size_t k = 2;
	long n;

	if (size < 2 + 2 * B_FILES + B_FILES * B_CHUNKS + 3)
		return;
	memset(&m, 0, sizeof(m));
	memset(chunks, 0, sizeof(chunks));
	memset(files, 0, sizeof(files));
	m.flags = PFS_F_COMPRESSED | PFS_F_INCREMENTAL;
	m.chunk = 4096 * (data[0] % 2 + 1);
	m.shuffle = data[1] % 3 * 2;
	strcpy(m.job, "j/a");
	strcpy(m.version, "v1");
	strcpy(m.base, "v0");
	if (data[0] & 2)
		strcpy(m.writer, "n1");     /* format 6 */
	m.nfiles = data[1] / 3 % B_FILES + 1;
	m.files = files;
	m.chunks = chunks;
	for (i = 0; i < m.nfiles; i++, k += 2) {
		files[i].path = paths[i];
		files[i].size = (data[k] | data[k + 1] << 8) %
				(B_CHUNKS * m.chunk + 1);
		files[i].first = m.nchunks;
		files[i].count = (files[i].size + m.chunk - 1) / m.chunk;
		left = files[i].size;
		for (j = 0; j < files[i].count; j++) {
			build_chunk(&chunks[m.nchunks++],
				    left < m.chunk ? left : m.chunk,
				    data[2 + 2 * B_FILES + m.nchunks]);
			left -= chunks[m.nchunks - 1].len;
		}
	}
	n = pfsman_encode(&m, img, sizeof(img));
	if (n < 0 || pfsman_size(&m) != (size_t)n)
		abort();
	if (decode_one(img, (size_t)n))
		abort();                        /* a valid manifest must pass */
	/* One byte changed, the CRC made right again. */
	k = 2 + 2 * B_FILES + B_FILES * B_CHUNKS;
	img[(data[k] | data[k + 1] << 8) % (size_t)(n - 4)] ^= data[k + 2] | 1;
	put_le32(img + n - 4, crc32c(img, (size_t)n - 4));
	(void)decode_one(img, (size_t)n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	build(data, size);

	(void)decode_one(data, size);
	if (size < 4 || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	put_le32(copy + size - 4, crc32c(copy, size - 4));
	(void)decode_one(copy, size);
	free(copy);
	return 0;
}
