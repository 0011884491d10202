/*
 * pfsman.c - the manifest of a version drained to the parallel file system.
 *
 * The manifest is what makes a directory on the PFS a drained version: a
 * restore, `ckptctl verify` and reads through ckpt trust it to say which
 * files exist, how each chunk is stored and where, and what its CRC32C is.
 * The PFS is shared, outlives ckptd and may be written by anyone with access
 * to the target, so decoding is a trust boundary, with the same fixed order
 * of checks as manifest.c: magic, format, CRC, then every field.  Counts are
 * checked against the bytes present before anything is allocated.  After a
 * successful decode a reader may take for granted that
 *   - every name is valid (names.h) and no two files share a path;
 *   - the files' chunk ranges tile the chunk table in order, each file
 *     having ceil(size / chunk) chunks of exactly chunk bytes but the last,
 *     which holds the rest, so the lengths add up to the size;
 *   - every kind is known, with its stored size consistent with it, a
 *     reference appears only with a base, and file_off + stored does not
 *     overflow.
 * What the decoder cannot know - that the stored bytes are where file_off
 * says and match the CRC - is for the reader to check as it reads.
 *
 * Encoding needs no allocation: the caller sizes the buffer with
 * pfsman_size() and owns everything the struct points at.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "codec.h"
#include "crc32c.h"
#include "extmap.h"
#include "heap.h"
#include "names.h"
#include "pfsman.h"

#define PFS_F_KNOWN   (PFS_F_COMPRESSED | PFS_F_INCREMENTAL)
#define PFS_ALIGN     4096u

/* Fixed parts: magic .. shuffle, three string lengths, two counts, crc. */
#define PFS_HEAD_FIXED (8 + 4 + 4 + 8 + 8 + 8 + 4 + 4 + 4)
#define PFS_MIN_LEN    (PFS_HEAD_FIXED + 2 + 2 + 2 + 4 + 4 + 4)
/* Smallest file entry (a one-byte path) and the size of a chunk entry. */
#define PFS_FILE_MIN_V2 (2 + 1 + 8 + 4 + 4)
#define PFS_FILE_MIN   (PFS_FILE_MIN_V2 + ATTR_ENC_LEN + 4)
#define PFS_LINK_LEN   4                /* format 4 */
#define PFS_CHUNK_LEN  (8 + 4 + 4 + 4 + 1 + 1)

int pfsman_find(const struct pfsman *m, const char *path, uint32_t hint)
{
	uint32_t i;

	if (hint < m->nfiles && !strcmp(m->files[hint].path, path))
		return (int)hint;
	for (i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].path, path))
			return (int)i;
	return -ENOENT;
}

static int chunk_data(const struct pfs_chunk *k)
{
	return k->kind != PFS_ZERO &&
	       !(k->kind == PFS_REF && k->kind2 == PFS_ZERO);
}

/* Does chunk idx of the table hold data?  A stripped m answers from its
 * holes (binary search). */
static int idx_data(const struct pfsman *m, uint32_t idx)
{
	uint32_t lo = 0, hi = m->nholes, mid;

	if (!m->stripped)
		return chunk_data(&m->chunks[idx]);
	while (lo < hi) {          /* the first hole ending past idx */
		mid = lo + (hi - lo) / 2;
		if (m->holes[mid].first + (uint64_t)m->holes[mid].count <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == m->nholes || m->holes[lo].first > idx;
}

/* Bytes of chunk i of file f: every chunk but a file's last is whole
 * (pfsman_decode() checks it). */
static uint64_t file_chunk_len(const struct pfsman *m,
			       const struct pfs_file *f, uint64_t i)
{
	return i + 1 < f->count ? m->chunk : f->size - i * m->chunk;
}

int pfsman_data(const struct pfsman *m, uint32_t fi, uint64_t off,
		uint64_t end, uint64_t *data, uint64_t *len)
{
	const struct pfs_file *f = &m->files[PFS_DATA(m, fi)];
	uint64_t i, b, n;

	if (end > f->size)
		end = f->size;
	if (off >= end)
		return -ENXIO;
	/* ZERO chunks before the data: past EXTMAP_RUN_MAX of them, the next
	 * is answered as data (it reads as zeros: safe) */
	for (i = off / m->chunk, n = 0; i < f->count &&
	     !idx_data(m, f->first + i) && ++n < EXTMAP_RUN_MAX; i++)
		if ((i + 1) * m->chunk >= end)
			return -ENXIO;
	if (i == f->count)
		return -ENXIO;
	*data = i * m->chunk > off ? i * m->chunk : off;
	b = i * m->chunk + file_chunk_len(m, f, i);
	if (idx_data(m, f->first + i))
		for (i++, n = 1; i < f->count && b < end &&
		     n++ < EXTMAP_RUN_MAX && idx_data(m, f->first + i); i++)
			b += file_chunk_len(m, f, i);
	*len = (b < end ? b : end) - *data;
	return 0;
}

uint64_t pfsman_file_data(const struct pfsman *m, uint32_t fi)
{
	const struct pfs_file *f = &m->files[PFS_DATA(m, fi)];
	uint64_t bytes = 0;
	uint32_t i;

	for (i = 0; i < f->count; i++)
		if (idx_data(m, f->first + i))
			bytes += file_chunk_len(m, f, i);
	return bytes;
}

int pfsman_strip(struct pfsman *m)
{
	struct pfs_hole *h = NULL;
	uint32_t i, n = 0, k;

	if (m->stripped)
		return 0;
	for (i = 0; i < m->nchunks; i++)      /* count the runs */
		if (!chunk_data(&m->chunks[i]) &&
		    (i == 0 || chunk_data(&m->chunks[i - 1])))
			n++;
	if (n && !(h = malloc(n * sizeof(*h))))
		return -ENOMEM;
	for (i = 0, k = 0; i < m->nchunks; i++) {
		if (chunk_data(&m->chunks[i]))
			continue;
		if (i == 0 || chunk_data(&m->chunks[i - 1]))
			h[k++] = (struct pfs_hole){ i, 0 };
		h[k - 1].count++;
	}
	free(m->chunks);
	m->chunks = NULL;
	m->holes = h;
	m->nholes = n;
	m->stripped = 1;
	return 0;
}

size_t pfsman_size(const struct pfsman *m)
{
	size_t n = PFS_MIN_LEN;
	uint32_t i;

	n += strnlen(m->job, CKPT_JOB_MAX + 1);
	n += strnlen(m->version, CKPT_VERSION_MAX + 1);
	n += strnlen(m->base, CKPT_VERSION_MAX + 1);
	if (m->writer[0])
		n += 2 + strnlen(m->writer, CKPT_HOST_MAX + 1);
	for (i = 0; i < m->nfiles; i++)
		n += 2 + strlen(m->files[i].path) + 8 + 4 + 4 + ATTR_ENC_LEN +
		     4 + m->files[i].xlen + PFS_LINK_LEN;
	return n + (size_t)m->nchunks * PFS_CHUNK_LEN;
}

size_t pfsman_names_held(const struct pfsman *m)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < m->nfiles; i++)
		n += heap_held(strlen(m->files[i].path) + 1) +
		     heap_held(m->files[i].xlen);
	return n;
}

size_t pfsman_held(const struct pfsman *m)
{
	size_t n = heap_held(sizeof(*m)) +
		   heap_held((size_t)m->nfiles * sizeof(*m->files)) +
		   pfsman_names_held(m);

	if (m->chunks)               /* stripped: NULL, nchunks kept */
		n += heap_held((size_t)m->nchunks * sizeof(*m->chunks));
	return n + heap_held((size_t)m->nholes * sizeof(*m->holes));
}

/* The format m is written in: 6 only with a writer, else 5 only if a path
 * needs it (pfsman.h). */
static uint32_t pfs_format(const struct pfsman *m)
{
	uint32_t i;

	if (m->writer[0])
		return PFSMAN_FORMAT;
	for (i = 0; i < m->nfiles; i++)
		if (strlen(m->files[i].path) > CKPT_PATH_MAX)
			return PFSMAN_FORMAT_V5;
	return PFSMAN_FORMAT_V4;
}

long pfsman_encode(const struct pfsman *m, void *buf, size_t cap)
{
	const struct pfs_chunk *c;
	uint32_t i, format;
	struct enc e;

	if (m->stripped)
		return -EINVAL;
	enc_init(&e, buf, cap);
	enc_u64(&e, PFSMAN_MAGIC);
	format = pfs_format(m);
	enc_u32(&e, format);
	enc_u32(&e, m->flags);
	enc_u64(&e, m->seq);
	enc_u64(&e, m->sealed_ns);
	enc_u64(&e, m->drained_ns);
	enc_u32(&e, m->uid);
	enc_u32(&e, m->chunk);
	enc_u32(&e, m->shuffle);
	enc_strn(&e, m->job, CKPT_JOB_MAX);
	enc_strn(&e, m->version, CKPT_VERSION_MAX);
	enc_strn(&e, m->base, CKPT_VERSION_MAX);
	if (format >= PFSMAN_FORMAT)
		enc_strn(&e, m->writer, CKPT_HOST_MAX);
	enc_u32(&e, m->nfiles);
	enc_u32(&e, m->nchunks);
	for (i = 0; i < m->nfiles; i++) {
		enc_str(&e, m->files[i].path);
		enc_u64(&e, m->files[i].size);
		enc_u32(&e, m->files[i].first);
		enc_u32(&e, m->files[i].count);
		enc_attr(&e, &m->files[i].attr);
		enc_u32(&e, m->files[i].xlen);
		enc_bytes(&e, m->files[i].xattr, m->files[i].xlen);
		enc_u32(&e, m->files[i].link);
	}
	for (i = 0; i < m->nchunks; i++) {
		c = &m->chunks[i];
		enc_u64(&e, c->file_off);
		enc_u32(&e, c->len);
		enc_u32(&e, c->crc);
		enc_u32(&e, c->stored);
		enc_u8(&e, c->kind);
		enc_u8(&e, c->kind2);
	}
	return enc_seal(&e);
}


/* The scalar fields of the head, once read. */
static int pfs_check_head(const struct pfsman *m)
{
	if (m->flags & ~PFS_F_KNOWN)
		return -CKPT_EVERSION;
	if (m->chunk == 0 || m->chunk % PFS_ALIGN)
		return -CKPT_EPROTO;
	if (m->shuffle != 0 && m->shuffle != 2 && m->shuffle != 4)
		return -CKPT_EPROTO;
	if (name_check_job(m->job) || name_check_version(m->version))
		return -CKPT_EBADNAME;
	if (m->base[0] && name_check_version(m->base))
		return -CKPT_EBADNAME;
	/* A version cannot reference itself. */
	if (!strcmp(m->base, m->version))
		return -CKPT_EPROTO;
	if (m->nfiles > PFSMAN_MAX_FILES || m->nchunks > PFSMAN_MAX_CHUNKS)
		return -CKPT_EPROTO;
	return 0;
}

/* Everything up to and including the counts.  Fails unless the bytes left
 * can hold that many files and chunks, so the counts are safe to allocate
 * by. */
static int pfs_dec_head(struct dec *d, struct pfsman *m, uint32_t format)
{
	uint64_t need;
	int ret;

	dec_u64(d);                             /* magic, checked */
	dec_u32(d);                             /* format, checked */
	m->flags = dec_u32(d);
	m->seq = dec_u64(d);
	m->sealed_ns = dec_u64(d);
	m->drained_ns = dec_u64(d);
	m->uid = dec_u32(d);
	m->chunk = dec_u32(d);
	m->shuffle = dec_u32(d);
	dec_str(d, m->job, CKPT_JOB_MAX);
	dec_str(d, m->version, CKPT_VERSION_MAX);
	dec_str(d, m->base, CKPT_VERSION_MAX);
	if (format >= PFSMAN_FORMAT)
		dec_str(d, m->writer, CKPT_HOST_MAX);
	m->nfiles = dec_u32(d);
	m->nchunks = dec_u32(d);
	if (d->err)
		return d->err;
	if (format >= PFSMAN_FORMAT && !m->writer[0])
		return -CKPT_EPROTO;    /* 6 is written only with one */
	ret = pfs_check_head(m);
	if (ret)
		return ret;
	need = (uint64_t)m->nfiles *
	       (format == PFSMAN_FORMAT_V2 ? PFS_FILE_MIN_V2 : PFS_FILE_MIN) +
	       (format >= PFSMAN_FORMAT_V4 ? (uint64_t)m->nfiles * PFS_LINK_LEN : 0) +
	       (uint64_t)m->nchunks * PFS_CHUNK_LEN;
	if (need > dec_left(d))
		return -CKPT_EPROTO;
	return 0;
}

/* A file's chunk range must start where the previous file's ended (*next)
 * and hold exactly ceil(size / chunk) chunks; a hard link holds none. */
static int pfs_check_range(const struct pfsman *m, const struct pfs_file *f,
			   uint32_t *next)
{
	uint64_t want = f->link ? 0 : f->size / m->chunk + (f->size % m->chunk != 0);

	if (f->first != *next || f->count != want)
		return -CKPT_EPROTO;
	if (f->count > m->nchunks - *next)
		return -CKPT_EPROTO;
	*next += f->count;
	return 0;
}

/* The file table: validated paths, each its own allocation, with chunk
 * ranges that tile the chunk table. */
static int pfs_dec_files(struct dec *d, struct pfsman *m, uint32_t format)
{
	size_t max = format >= PFSMAN_FORMAT_V5 ? CKPT_PATH_MAX2 : CKPT_PATH_MAX;
	char path[CKPT_PATH_MAX2 + 1];
	struct pfs_file *f;
	uint32_t i, next = 0;
	int ret;

	if (m->nfiles == 0)
		return m->nchunks ? -CKPT_EPROTO : 0;
	m->files = calloc(m->nfiles, sizeof(*m->files));
	if (!m->files)
		return -ENOMEM;
	for (i = 0; i < m->nfiles; i++) {
		f = &m->files[i];
		dec_str(d, path, max);
		f->size = dec_u64(d);
		f->first = dec_u32(d);
		f->count = dec_u32(d);
		if (format != PFSMAN_FORMAT_V2) {
			dec_attr(d, &f->attr);
			dec_xattr(d, &f->xattr, &f->xlen);
		}
		if (format >= PFSMAN_FORMAT_V4)
			f->link = dec_u32(d);
		if (d->err)
			return d->err;
		if (name_check_path(path))
			return -CKPT_EBADNAME;
		f->nlink = 1;
		if (f->link && (f->link - 1 >= i ||
				m->files[f->link - 1].link || f->xlen))
			return -CKPT_EPROTO;
		if (f->link)
			m->files[f->link - 1].nlink++;
		ret = pfs_check_range(m, f, &next);
		if (ret)
			return ret;
		f->path = strdup(path);
		if (!f->path)
			return -ENOMEM;
	}
	return next == m->nchunks ? 0 : -CKPT_EPROTO;
}

static int pfs_cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* No two files may share a path: a restore would write one over the other.
 * Sorting a copy of the path pointers keeps this O(n log n). */
static int pfs_check_unique(const struct pfsman *m)
{
	char **paths;
	uint32_t i;
	int ret = 0;

	if (m->nfiles < 2)
		return 0;
	paths = malloc(m->nfiles * sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	for (i = 0; i < m->nfiles; i++)
		paths[i] = m->files[i].path;
	qsort(paths, m->nfiles, sizeof(*paths), pfs_cmp_path);
	for (i = 1; i < m->nfiles && !ret; i++) {
		if (!strcmp(paths[i - 1], paths[i]))
			ret = -CKPT_EPROTO;
	}
	free(paths);
	return ret;
}

/* How a chunk of len bytes may be stored as kind: RAW keeps every byte,
 * ZSTD only a frame smaller than the chunk (zip.h stores the rest raw),
 * ZERO nothing. */
static int pfs_check_stored(uint8_t kind, uint32_t len, uint32_t stored)
{
	switch (kind) {
	case PFS_RAW:
		return stored == len ? 0 : -CKPT_EPROTO;
	case PFS_ZSTD:
		return stored > 0 && stored < len ? 0 : -CKPT_EPROTO;
	case PFS_ZERO:
		return stored == 0 ? 0 : -CKPT_EPROTO;
	}
	return -CKPT_EPROTO;
}

/* Chunk idx of file f: exact length, known kind, consistent storage. */
static int pfs_check_chunk(const struct pfsman *m, const struct pfs_file *f,
			   const struct pfs_chunk *c, uint32_t idx)
{
	uint64_t left = f->size - (uint64_t)idx * m->chunk;
	uint64_t want = left < m->chunk ? left : m->chunk;

	if (c->len != want)
		return -CKPT_EPROTO;
	if (c->file_off > UINT64_MAX - c->stored)
		return -CKPT_EPROTO;
	if (c->kind == PFS_ZSTD && !(m->flags & PFS_F_COMPRESSED))
		return -CKPT_EPROTO;
	if (c->kind == PFS_REF) {
		if (!m->base[0] || !(m->flags & PFS_F_INCREMENTAL))
			return -CKPT_EPROTO;
		if (c->kind2 == PFS_REF)
			return -CKPT_EPROTO;    /* never more than one hop */
		return pfs_check_stored(c->kind2, c->len, c->stored);
	}
	if (c->kind2 != 0)
		return -CKPT_EPROTO;
	return pfs_check_stored(c->kind, c->len, c->stored);
}

static int pfs_dec_chunks(struct dec *d, struct pfsman *m)
{
	const struct pfs_file *f;
	struct pfs_chunk *c;
	uint32_t i, j;
	int ret;

	if (m->nchunks == 0)
		return 0;
	m->chunks = calloc(m->nchunks, sizeof(*m->chunks));
	if (!m->chunks)
		return -ENOMEM;
	for (i = 0; i < m->nchunks; i++) {
		c = &m->chunks[i];
		c->file_off = dec_u64(d);
		c->len = dec_u32(d);
		c->crc = dec_u32(d);
		c->stored = dec_u32(d);
		c->kind = dec_u8(d);
		c->kind2 = dec_u8(d);
		if (d->err)
			return d->err;
	}
	for (i = 0; i < m->nfiles; i++) {
		f = &m->files[i];
		for (j = 0; j < f->count; j++) {
			c = &m->chunks[f->first + j];
			ret = pfs_check_chunk(m, f, c, j);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int pfsman_decode(const void *buf, size_t len, struct pfsman *m)
{
	uint32_t format = PFSMAN_FORMAT;
	struct dec d;
	int ret;

	memset(m, 0, sizeof(*m));
	/* Formats 2 (before file attributes), 3 (before links), 4 (paths up
	 * to CKPT_PATH_MAX) and 5 (before the writer) are read too: drained
	 * versions stay readable across an upgrade. */
	if (len >= 12 && get_le32((const uint8_t *)buf + 8) >= PFSMAN_FORMAT_V2 &&
	    get_le32((const uint8_t *)buf + 8) < PFSMAN_FORMAT)
		format = get_le32((const uint8_t *)buf + 8);
	ret = image_check(buf, len, PFSMAN_MAGIC, format, PFS_MIN_LEN);
	if (ret)
		return ret;
	dec_init(&d, buf, len - 4);
	ret = pfs_dec_head(&d, m, format);
	if (ret)
		goto out_clear;
	ret = pfs_dec_files(&d, m, format);
	if (ret)
		goto out_release;
	ret = pfs_check_unique(m);
	if (ret)
		goto out_release;
	ret = pfs_dec_chunks(&d, m);
	if (ret)
		goto out_release;
	if (dec_left(&d)) {
		ret = -CKPT_EPROTO;
		goto out_release;
	}
	return 0;

out_release:
	pfsman_release(m);
out_clear:
	memset(m, 0, sizeof(*m));
	return ret;
}

void pfsman_release(struct pfsman *m)
{
	uint32_t i;

	if (m->files) {
		for (i = 0; i < m->nfiles; i++) {
			free(m->files[i].path);
			free(m->files[i].xattr);
		}
	}
	free(m->files);
	free(m->chunks);
	free(m->holes);
	m->files = NULL;
	m->chunks = NULL;
	m->holes = NULL;
	m->nfiles = 0;
	m->nchunks = 0;
	m->nholes = 0;
	m->stripped = 0;
}

/* ---- merging the parts of a version --------------------------------------- */

/* Do part p agree with the first one on everything the union keeps once? */
static int pfs_merge_check(const struct pfsman *first, const struct pfsman *p,
			   const char **base)
{
	if (strcmp(p->job, first->job) || strcmp(p->version, first->version) ||
	    p->uid != first->uid || p->chunk != first->chunk ||
	    p->shuffle != first->shuffle)
		return -CKPT_EPROTO;
	if (!(p->flags & PFS_F_INCREMENTAL))
		return 0;
	if (*base && strcmp(*base, p->base))
		return -CKPT_EPROTO;    /* one base per version */
	*base = p->base;
	return 0;
}

/* A directory entry of a part, for pfs_merge_dirs(). */
struct pfs_dirref {
	const char *path;
	uint32_t part, idx;
};

static int pfs_cmp_dirref(const void *a, const void *b)
{
	const struct pfs_dirref *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : x->part < y->part ? -1 : x->part > y->part;
}


/*
 * Directories that more than one part holds (ranks on several nodes that
 * each made a shared parent): the merge keeps the first part's entry, so
 * *skip (malloc'd, one byte per file of all parts, in order) marks the
 * others.  Files, and a file against a directory, still clash
 * (pfs_check_unique()).
 */
static int pfs_merge_dirs(const struct pfsman *parts, uint32_t n,
			  uint64_t nfiles, uint8_t **skip)
{
	struct pfs_dirref *refs;
	uint64_t nref = 0, k, *base;
	uint32_t i, j;

	*skip = calloc(nfiles + 1, 1);
	base = calloc(n, sizeof(*base));
	refs = malloc((nfiles + 1) * sizeof(*refs));
	if (!*skip || !base || !refs) {
		free(base);
		free(refs);
		return -ENOMEM;
	}
	for (i = 0, k = 0; i < n; k += parts[i++].nfiles) {
		base[i] = k;
		for (j = 0; j < parts[i].nfiles; j++)
			if (attr_is_type(&parts[i].files[j].attr, CKPT_ATTR_IFDIR))
				refs[nref++] = (struct pfs_dirref){
					parts[i].files[j].path, i, j };
	}
	qsort(refs, nref, sizeof(*refs), pfs_cmp_dirref);
	for (k = 1; k < nref; k++)
		if (!strcmp(refs[k - 1].path, refs[k].path))
			(*skip)[base[refs[k].part] + refs[k].idx] = 1;
	free(base);
	free(refs);
	return 0;
}

/* Append part p's files (but those skip marks) and chunks to out (sized
 * for them). */
static int pfs_merge_add(struct pfsman *out, const struct pfsman *p,
			 const uint8_t *skip)
{
	uint32_t i, chunk0 = out->nchunks, *map;

	map = malloc((p->nfiles + 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	memcpy(out->chunks + out->nchunks, p->chunks,
	       (size_t)p->nchunks * sizeof(*p->chunks));
	out->nchunks += p->nchunks;
	for (i = 0; i < p->nfiles; i++) {
		struct pfs_file *f = &out->files[out->nfiles];

		if (skip[i])
			continue;       /* a directory an earlier part has */
		map[i] = out->nfiles;
		*f = p->files[i];
		f->first = chunk0 + p->files[i].first;
		/* A link names an earlier entry of its part: a file, never
		 * a skipped directory. */
		f->link = f->link ? map[f->link - 1] + 1 : 0;
		f->path = strdup(p->files[i].path);
		f->xattr = NULL;
		out->nfiles++;
		if (!f->path)
			break;
		if (!p->files[i].xlen)
			continue;
		f->xattr = malloc(p->files[i].xlen);
		if (!f->xattr)
			break;
		memcpy(f->xattr, p->files[i].xattr, p->files[i].xlen);
	}
	free(map);
	return i == p->nfiles ? 0 : -ENOMEM;
}

int pfsman_merge(const struct pfsman *parts, uint32_t n, struct pfsman *out)
{
	const char *base = NULL;
	uint64_t nfiles = 0, nchunks = 0, at = 0;
	uint8_t *skip = NULL;
	uint32_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (parts[i].stripped)
			return -EINVAL;
		ret = pfs_merge_check(&parts[0], &parts[i], &base);
		if (ret < 0)
			return ret;
		nfiles += parts[i].nfiles;
		nchunks += parts[i].nchunks;
	}
	if (nfiles > PFSMAN_MAX_FILES || nchunks > PFSMAN_MAX_CHUNKS)
		return -EFBIG;
	*out = parts[0];
	out->nfiles = out->nchunks = 0;
	out->flags = 0;
	/* The version's, not parts[0]'s node's (format 6 is not written). */
	out->writer[0] = out->node[0] = '\0';
	out->nparts = 0;
	snprintf(out->base, sizeof(out->base), "%s", base ? base : "");
	out->files = calloc(nfiles + 1, sizeof(*out->files));
	out->chunks = calloc(nchunks + 1, sizeof(*out->chunks));
	ret = out->files && out->chunks ? 0 : -ENOMEM;
	if (ret == 0)
		ret = pfs_merge_dirs(parts, n, nfiles, &skip);
	for (i = 0; i < n && ret == 0; at += parts[i++].nfiles) {
		out->flags |= parts[i].flags;
		if (parts[i].sealed_ns > out->sealed_ns)
			out->sealed_ns = parts[i].sealed_ns;
		if (parts[i].drained_ns > out->drained_ns)
			out->drained_ns = parts[i].drained_ns;
		ret = pfs_merge_add(out, &parts[i], skip + at);
	}
	free(skip);
	if (ret == 0) {
		ret = pfs_check_unique(out);
		if (ret == -CKPT_EPROTO)
			ret = -EEXIST;
	}
	if (ret < 0) {
		pfsman_release(out);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}
