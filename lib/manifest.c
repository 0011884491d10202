/*
 * manifest.c - the on-disk manifest of a sealed version, and the header
 * block of a store segment.
 *
 * Both formats are read back after crashes and from disks that may have been
 * damaged or tampered with, so decoding is a trust boundary.  The order of
 * checks is fixed: magic (is this ours at all?), format (can we read it?),
 * CRC (is it intact?), then every field.  Counts are checked against the
 * bytes actually present before anything is allocated, and every record is
 * checked against the file table, so that code reading a decoded manifest
 * can index files[] and add offsets without further thought.
 *
 * Encoding needs no allocation: the caller sizes the buffer with
 * manifest_size() and owns everything the struct points at.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "manifest.h"
#include "names.h"

#define SEGHDR_FORMAT 1
#define STORE_ALIGN   4096u

/* Fixed parts of the manifest: magic .. level, the two string lengths,
 * the two counts, and the trailing crc. */
#define MAN_HEAD_FIXED (8 + 4 + 4 + 8 + 8 + 8 + 4 + 4)
#define MAN_MIN_LEN    (MAN_HEAD_FIXED + 2 + 2 + 4 + 4 + 4)
#define MAN_NPARTS_LEN 4                /* format 3 */
/* Smallest file entry (a one-byte path) and the size of a record. */
#define MAN_FILE_MIN_V1 (2 + 1 + 8)
#define MAN_ATTR_LEN    ATTR_ENC_LEN
#define MAN_FILE_MIN   (MAN_FILE_MIN_V1 + MAN_ATTR_LEN + 4)
#define MAN_LINK_LEN   4                /* format 4 */
#define MAN_REC_LEN    (4 + 4 + 8 + 8 + 4 + 4)

size_t manifest_size(const struct manifest *m)
{
	size_t n = MAN_MIN_LEN + MAN_NPARTS_LEN;
	uint32_t i;

	n += strnlen(m->job, CKPT_JOB_MAX + 1);
	n += strnlen(m->version, CKPT_VERSION_MAX + 1);
	for (i = 0; i < m->nfiles; i++)
		n += 2 + strlen(m->files[i].path) + 8 + MAN_ATTR_LEN + 4 +
		     m->files[i].xlen + MAN_LINK_LEN;
	n += (size_t)m->nrecs * MAN_REC_LEN;
	if (m->holders) {
		const struct man_holders *h = m->holders;

		n += 12;
		for (i = 0; i + 1 < h->k + h->m && i < MAN_HOLDERS_MAX; i++)
			n += 2 + strnlen(h->name[i], MAN_NODE_MAX + 1);
		if (h->from[0])
			n += 2 + strnlen(h->from, MAN_NODE_MAX + 1) + 8;
	}
	return n;
}

int man_holders_check(const struct man_holders *h)
{
	uint32_t i, j;

	if (!h->k || !h->m || h->k + h->m > MAN_HOLDERS_MAX + 1 || !h->gen)
		return -CKPT_EPROTO;
	for (i = 0; i + 1 < h->k + h->m; i++) {
		if (name_check_node(h->name[i]))
			return -CKPT_EBADNAME;
		for (j = 0; j < i; j++)
			if (!strcmp(h->name[i], h->name[j]))
				return -CKPT_EPROTO;
	}
	if (h->from[0] && name_check_node(h->from))
		return -CKPT_EBADNAME;
	return 0;
}

/* The format m is written in: 7 with a holder record that has `from`, 6
 * with one that has not, else 5 only if a path needs it (manifest.h). */
static uint32_t man_format(const struct manifest *m)
{
	uint32_t i;

	if (m->holders)
		return m->holders->from[0] ? MANIFEST_FORMAT
					   : MANIFEST_FORMAT_V6;
	for (i = 0; i < m->nfiles; i++)
		if (strlen(m->files[i].path) > CKPT_PATH_MAX)
			return MANIFEST_FORMAT_V5;
	return MANIFEST_FORMAT_V4;
}

long manifest_encode(const struct manifest *m, void *buf, size_t cap)
{
	const struct man_rec *r;
	struct enc e;
	uint32_t i;

	if (m->holders && man_holders_check(m->holders))
		return -EINVAL;
	enc_init(&e, buf, cap);
	enc_u64(&e, MANIFEST_MAGIC);
	enc_u32(&e, man_format(m));
	enc_u32(&e, m->flags);
	enc_u64(&e, m->seq);
	enc_u64(&e, m->sealed_ns);
	enc_u64(&e, m->open_id);
	enc_u32(&e, m->uid);
	enc_u32(&e, m->level);
	enc_u32(&e, m->nparts ? m->nparts : 1);
	enc_strn(&e, m->job, CKPT_JOB_MAX);
	enc_strn(&e, m->version, CKPT_VERSION_MAX);
	enc_u32(&e, m->nfiles);
	enc_u32(&e, m->nrecs);
	for (i = 0; i < m->nfiles; i++) {
		enc_str(&e, m->files[i].path);
		enc_u64(&e, m->files[i].size);
		enc_attr(&e, &m->files[i].attr);
		enc_u32(&e, m->files[i].xlen);
		enc_bytes(&e, m->files[i].xattr, m->files[i].xlen);
		enc_u32(&e, m->files[i].link);
	}
	for (i = 0; i < m->nrecs; i++) {
		r = &m->recs[i];
		enc_u32(&e, r->file);
		enc_u32(&e, r->seg);
		enc_u64(&e, r->seg_off);
		enc_u64(&e, r->file_off);
		enc_u32(&e, r->len);
		enc_u32(&e, r->crc);
	}
	if (m->holders) {
		const struct man_holders *h = m->holders;

		enc_u32(&e, h->k);
		enc_u32(&e, h->m);
		enc_u32(&e, h->gen);
		for (i = 0; i + 1 < h->k + h->m; i++)
			enc_str(&e, h->name[i]);
		if (h->from[0]) {
			enc_str(&e, h->from);
			enc_u64(&e, h->from_id);
		}
	}
	return enc_seal(&e);
}


/* Everything up to and including the counts.  Fails unless the bytes left
 * can hold that many files and records, so the counts are safe to allocate
 * by. */
static int man_dec_head(struct dec *d, struct manifest *m, uint32_t format)
{
	uint64_t need;
	uint32_t flags;

	dec_u64(d);                             /* magic, checked */
	dec_u32(d);                             /* format, checked */
	flags = dec_u32(d);
	m->seq = dec_u64(d);
	m->sealed_ns = dec_u64(d);
	m->open_id = dec_u64(d);
	m->uid = dec_u32(d);
	m->level = dec_u32(d);
	m->nparts = format >= MANIFEST_FORMAT_V3 ? dec_u32(d) : 1;
	dec_str(d, m->job, CKPT_JOB_MAX);
	dec_str(d, m->version, CKPT_VERSION_MAX);
	m->nfiles = dec_u32(d);
	m->nrecs = dec_u32(d);
	if (d->err)
		return d->err;
	if (flags & ~MAN_F_KNOWN)
		return -CKPT_EVERSION;
	m->flags = flags;
	if (m->nparts < 1 || m->nparts > MANIFEST_MAX_PARTS)
		return -CKPT_EPROTO;
	if (m->level < CKPT_LOCAL || m->level > CKPT_DRAINED)
		return -CKPT_EPROTO;
	if (name_check_job(m->job) || name_check_version(m->version))
		return -CKPT_EBADNAME;
	if (m->nfiles > MANIFEST_MAX_FILES || m->nrecs > MANIFEST_MAX_RECORDS)
		return -CKPT_EPROTO;
	need = (uint64_t)m->nfiles *
	       (format == MANIFEST_FORMAT_V1 ? MAN_FILE_MIN_V1 : MAN_FILE_MIN) +
	       (format >= MANIFEST_FORMAT_V4 ? (uint64_t)m->nfiles * MAN_LINK_LEN : 0) +
	       (uint64_t)m->nrecs * MAN_REC_LEN;
	if (need > dec_left(d))
		return -CKPT_EPROTO;
	return 0;
}

/* Entry i's link names an earlier entry that is no link itself, and a link
 * has no extended attributes of its own; count the names of each file. */
static int man_link_check(struct manifest *m, uint32_t i)
{
	struct man_file *f = &m->files[i];

	f->nlink = 1;
	if (!f->link)
		return 0;
	if (f->link - 1 >= i || m->files[f->link - 1].link || f->xlen)
		return -CKPT_EPROTO;
	m->files[f->link - 1].nlink++;
	return 0;
}

/* The file table: m->nfiles validated paths, each its own allocation. */
static int man_dec_files(struct dec *d, struct manifest *m, uint32_t format)
{
	size_t max = format >= MANIFEST_FORMAT_V5 ? CKPT_PATH_MAX2 : CKPT_PATH_MAX;
	char path[CKPT_PATH_MAX2 + 1];
	uint32_t i;
	int ret;

	if (m->nfiles == 0)
		return 0;
	m->files = calloc(m->nfiles, sizeof(*m->files));
	if (!m->files)
		return -ENOMEM;
	for (i = 0; i < m->nfiles; i++) {
		dec_str(d, path, max);
		m->files[i].size = dec_u64(d);
		if (d->err)
			return d->err;
		if (name_check_path(path))
			return -CKPT_EBADNAME;
		if (format != MANIFEST_FORMAT_V1) {
			dec_attr(d, &m->files[i].attr);
			ret = dec_xattr(d, &m->files[i].xattr,
					&m->files[i].xlen);
			if (ret)
				return ret;
		}
		if (format >= MANIFEST_FORMAT_V4)
			m->files[i].link = dec_u32(d);
		m->files[i].path = strdup(path);
		if (!m->files[i].path)
			return -ENOMEM;
		ret = man_link_check(m, i);
		if (ret)
			return ret;
	}
	return d->err;
}

/* A record must name a file and sit 4 KiB-aligned after the segment header
 * (a zero record: at offset 0 of no segment), with no sum overflowing.  It
 * may reach past its file's size: a file truncated after a write keeps the
 * record, whose checksum covers all of it, and reads stop at the size. */
static int man_check_rec(const struct manifest *m, const struct man_rec *r)
{
	uint64_t padded;

	if (r->file >= m->nfiles || r->len == 0 || m->files[r->file].link)
		return -CKPT_EPROTO;
	if (r->seg == MAN_SEG_ZERO)
		return r->seg_off || r->file_off > UINT64_MAX - r->len ?
		       -CKPT_EPROTO : 0;
	if (r->seg_off % STORE_ALIGN || r->seg_off < SEGHDR_SIZE)
		return -CKPT_EPROTO;
	padded = ((uint64_t)r->len + STORE_ALIGN - 1) & ~(uint64_t)(STORE_ALIGN - 1);
	if (r->seg_off > UINT64_MAX - padded)
		return -CKPT_EPROTO;
	if (r->file_off > UINT64_MAX - r->len)
		return -CKPT_EPROTO;
	return 0;
}

static int man_dec_recs(struct dec *d, struct manifest *m)
{
	struct man_rec *r;
	uint32_t i;
	int ret;

	if (m->nrecs == 0)
		return 0;
	m->recs = calloc(m->nrecs, sizeof(*m->recs));
	if (!m->recs)
		return -ENOMEM;
	for (i = 0; i < m->nrecs; i++) {
		r = &m->recs[i];
		r->file = dec_u32(d);
		r->seg = dec_u32(d);
		r->seg_off = dec_u64(d);
		r->file_off = dec_u64(d);
		r->len = dec_u32(d);
		r->crc = dec_u32(d);
		if (d->err)
			return d->err;
		ret = man_check_rec(m, r);
		if (ret)
			return ret;
	}
	return 0;
}

static int man_dec_holders(struct dec *d, struct manifest *m,
			   uint32_t format)
{
	struct man_holders *h = calloc(1, sizeof(*h));
	uint32_t i;

	if (!h)
		return -ENOMEM;
	m->holders = h;
	h->k = dec_u32(d);
	h->m = dec_u32(d);
	h->gen = dec_u32(d);
	if (d->err)
		return d->err;
	if (!h->k || !h->m || h->k + h->m > MAN_HOLDERS_MAX + 1)
		return -CKPT_EPROTO;
	for (i = 0; i + 1 < h->k + h->m; i++) {
		dec_str(d, h->name[i], MAN_NODE_MAX);
		if (d->err)
			return d->err;
	}
	if (format >= MANIFEST_FORMAT) {
		dec_str(d, h->from, MAN_NODE_MAX);
		h->from_id = dec_u64(d);
		if (d->err)
			return d->err;
		if (!h->from[0])
			return -CKPT_EPROTO;   /* written only when set */
	}
	return man_holders_check(h);
}

int manifest_decode(const void *buf, size_t len, struct manifest *m)
{
	uint32_t format = MANIFEST_FORMAT;
	struct dec d;
	int ret;

	memset(m, 0, sizeof(*m));
	/* Format 1 (before file attributes) is read too: stores keep
	 * their manifests across an upgrade. */
	if (len >= 12 && get_le32((const uint8_t *)buf + 8) >= MANIFEST_FORMAT_V1 &&
	    get_le32((const uint8_t *)buf + 8) < MANIFEST_FORMAT)
		format = get_le32((const uint8_t *)buf + 8);
	ret = image_check(buf, len, MANIFEST_MAGIC, format, MAN_MIN_LEN);
	if (ret)
		return ret;
	dec_init(&d, buf, len - 4);
	ret = man_dec_head(&d, m, format);
	if (ret)
		goto out_clear;
	ret = man_dec_files(&d, m, format);
	if (ret)
		goto out_release;
	ret = man_dec_recs(&d, m);
	if (ret)
		goto out_release;
	if (format >= MANIFEST_FORMAT_V6) {
		ret = man_dec_holders(&d, m, format);
		if (ret)
			goto out_release;
	}
	if (dec_left(&d)) {
		ret = -CKPT_EPROTO;
		goto out_release;
	}
	return 0;

out_release:
	manifest_release(m);
out_clear:
	memset(m, 0, sizeof(*m));
	return ret;
}

int manifest_peek(const void *buf, size_t len, struct manifest *m)
{
	const uint8_t *p = buf;
	struct dec d;

	memset(m, 0, sizeof(*m));
	if (len < 16 || get_le64(p) != MANIFEST_MAGIC)
		return -CKPT_EBADMAGIC;
	dec_init(&d, buf, len);
	dec_u64(&d);                            /* magic, checked */
	dec_u32(&d);                            /* format: any */
	dec_u32(&d);                            /* flags */
	m->seq = dec_u64(&d);
	m->sealed_ns = dec_u64(&d);
	m->open_id = dec_u64(&d);
	m->uid = dec_u32(&d);
	m->level = dec_u32(&d);
	if (get_le32(p + 8) >= MANIFEST_FORMAT_V3)
		m->nparts = dec_u32(&d);
	dec_str(&d, m->job, CKPT_JOB_MAX);
	dec_str(&d, m->version, CKPT_VERSION_MAX);
	if (d.err || name_check_job(m->job) ||
	    name_check_version(m->version)) {
		memset(m, 0, sizeof(*m));
		return -CKPT_ECORRUPT;
	}
	return 0;
}

void manifest_release(struct manifest *m)
{
	uint32_t i;

	if (m->files) {
		for (i = 0; i < m->nfiles; i++) {
			free(m->files[i].path);
			free(m->files[i].xattr);
		}
	}
	free(m->files);
	free(m->recs);
	free(m->holders);
	m->files = NULL;
	m->recs = NULL;
	m->holders = NULL;
	m->nfiles = 0;
	m->nrecs = 0;
}

int seghdr_encode(const struct seghdr *h, void *buf)
{
	struct enc e;

	memset(buf, 0, SEGHDR_SIZE);
	enc_init(&e, buf, SEGHDR_SIZE - 4);
	enc_u64(&e, SEGHDR_MAGIC);
	enc_u32(&e, SEGHDR_FORMAT);
	enc_u32(&e, h->seg);
	enc_u64(&e, h->open_id);
	enc_u32(&e, h->uid);
	enc_strn(&e, h->job, CKPT_JOB_MAX);
	enc_strn(&e, h->version, CKPT_VERSION_MAX);
	if (e.err)
		return -EMSGSIZE;
	put_le32((uint8_t *)buf + SEGHDR_SIZE - 4,
		 crc32c(buf, SEGHDR_SIZE - 4));
	return 0;
}

int seghdr_decode(const void *buf, struct seghdr *h)
{
	const uint8_t *p = buf;
	struct dec d;
	size_t i;

	if (get_le64(p) != SEGHDR_MAGIC)
		return -CKPT_EBADMAGIC;
	if (get_le32(p + 8) != SEGHDR_FORMAT)
		return -CKPT_EVERSION;
	if (crc32c(p, SEGHDR_SIZE - 4) != get_le32(p + SEGHDR_SIZE - 4))
		return -CKPT_ECORRUPT;
	memset(h, 0, sizeof(*h));
	dec_init(&d, p + 12, SEGHDR_SIZE - 4 - 12);
	h->seg = dec_u32(&d);
	h->open_id = dec_u64(&d);
	h->uid = dec_u32(&d);
	dec_str(&d, h->job, CKPT_JOB_MAX);
	dec_str(&d, h->version, CKPT_VERSION_MAX);
	if (d.err)
		return d.err;
	if (name_check_job(h->job) || name_check_version(h->version))
		return -CKPT_EBADNAME;
	/* The padding is covered by the CRC, but must also be zero, so that
	 * a later format cannot be misread as this one. */
	for (i = d.pos; i < d.len; i++) {
		if (d.buf[i])
			return -CKPT_EPROTO;
	}
	return 0;
}
