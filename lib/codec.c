/*
 * codec.c - bounds-checked little-endian encoder and decoder.
 *
 * Both sides use a sticky error: the first put that does not fit (or the
 * first get past the end) records an error and turns every later call into a
 * no-op, so that a sequence of puts or gets needs a single check at the end.
 * The decoder returns zeroes after an error, which keeps callers from acting
 * on half-read values even if they forget to look at d->err straight away.
 *
 * Nothing here knows about frames or files; proto.c and manifest.c build
 * their formats from these primitives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckpt.h"
#include "codec.h"
#include "crc32c.h"
#include "xattr.h"

void enc_init(struct enc *e, void *buf, size_t cap)
{
	e->buf = buf;
	e->cap = buf ? cap : 0;
	e->len = 0;
	e->err = 0;
}

/* Reserve n bytes at the end of the buffer; NULL (and err) if they do not
 * fit. */
static uint8_t *enc_reserve(struct enc *e, size_t n)
{
	uint8_t *p;

	if (e->err)
		return NULL;
	if (n > e->cap - e->len) {
		e->err = -EMSGSIZE;
		return NULL;
	}
	p = e->buf + e->len;
	e->len += n;
	return p;
}

void enc_u8(struct enc *e, uint8_t v)
{
	uint8_t *p = enc_reserve(e, 1);

	if (p)
		p[0] = v;
}

void enc_u16(struct enc *e, uint16_t v)
{
	uint8_t *p = enc_reserve(e, 2);

	if (p) {
		p[0] = v;
		p[1] = v >> 8;
	}
}

void enc_u32(struct enc *e, uint32_t v)
{
	uint8_t *p = enc_reserve(e, 4);

	if (p)
		put_le32(p, v);
}

void enc_u64(struct enc *e, uint64_t v)
{
	uint8_t *p = enc_reserve(e, 8);

	if (p) {
		put_le32(p, (uint32_t)v);
		put_le32(p + 4, (uint32_t)(v >> 32));
	}
}

void enc_bytes(struct enc *e, const void *src, size_t n)
{
	uint8_t *p = enc_reserve(e, n);

	if (p && n && p != src)      /* src may already lie in place */
		memcpy(p, src, n);
}

void enc_str(struct enc *e, const char *s)
{
	size_t n = strlen(s);

	if (e->err)
		return;
	if (n > UINT16_MAX) {
		e->err = -EMSGSIZE;
		return;
	}
	enc_u16(e, (uint16_t)n);
	enc_bytes(e, s, n);
}

void enc_strn(struct enc *e, const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (e->err)
		return;
	if (n > max || n > UINT16_MAX) {
		e->err = -EMSGSIZE;
		return;
	}
	enc_u16(e, (uint16_t)n);
	enc_bytes(e, s, n);
}

void dec_init(struct dec *d, const void *buf, size_t len)
{
	d->buf = buf;
	d->len = buf ? len : 0;
	d->pos = 0;
	d->err = 0;
}

/* The next n bytes, consumed; NULL (and err) if they are not all there. */
static const uint8_t *dec_take(struct dec *d, size_t n)
{
	const uint8_t *p;

	if (d->err)
		return NULL;
	if (n > d->len - d->pos) {
		d->err = -CKPT_EPROTO;
		return NULL;
	}
	p = d->buf + d->pos;
	d->pos += n;
	return p;
}

uint8_t dec_u8(struct dec *d)
{
	const uint8_t *p = dec_take(d, 1);

	return p ? p[0] : 0;
}

uint16_t dec_u16(struct dec *d)
{
	const uint8_t *p = dec_take(d, 2);

	return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}

uint32_t dec_u32(struct dec *d)
{
	const uint8_t *p = dec_take(d, 4);

	return p ? get_le32(p) : 0;
}

uint64_t dec_u64(struct dec *d)
{
	const uint8_t *p = dec_take(d, 8);

	return p ? get_le32(p) | (uint64_t)get_le32(p + 4) << 32 : 0;
}

void dec_str(struct dec *d, char *out, size_t max)
{
	const uint8_t *p;
	uint16_t n;

	out[0] = '\0';
	n = dec_u16(d);
	if (d->err)
		return;
	if (n > max) {
		d->err = -CKPT_EPROTO;
		return;
	}
	p = dec_take(d, n);
	if (!p)
		return;
	if (memchr(p, '\0', n)) {
		d->err = -CKPT_EPROTO;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

const char *dec_str_inplace(struct dec *d, size_t max)
{
	const uint8_t *p;
	uint8_t *at;
	uint16_t n;

	at = (uint8_t *)d->buf + d->pos;  /* writable: see codec.h */
	n = dec_u16(d);
	if (d->err)
		return "";
	if (n > max) {
		d->err = -CKPT_EPROTO;
		return "";
	}
	p = dec_take(d, n);
	if (!p)
		return "";
	if (memchr(p, '\0', n)) {
		d->err = -CKPT_EPROTO;
		return "";
	}
	memmove(at, p, n);
	at[n] = '\0';            /* at + n < p + n: still the string's */
	return (const char *)at;
}

long enc_seal(struct enc *e)
{
	if (e->err)
		return -EMSGSIZE;
	enc_u32(e, crc32c(e->buf, e->len));
	return e->err ? -EMSGSIZE : (long)e->len;
}

void enc_attr(struct enc *e, const struct ckpt_attr *a)
{
	enc_u32(e, a->set);
	enc_u32(e, a->mode);
	enc_u32(e, a->uid);
	enc_u32(e, a->gid);
	enc_u64(e, a->atime_ns);
	enc_u64(e, a->mtime_ns);
	enc_u64(e, a->ctime_ns);
	enc_u64(e, a->rdev);
}

int dec_xattr(struct dec *d, uint8_t **out, uint32_t *len)
{
	uint32_t n = dec_u32(d);

	*out = NULL;
	*len = 0;
	if (d->err)
		return d->err;
	if (n > XATTR_MAX || n > dec_left(d))
		return d->err = -CKPT_EPROTO;
	if (n == 0)
		return 0;
	if (xattr_check(d->buf + d->pos, n))
		return d->err = -CKPT_EPROTO;
	*out = malloc(n);
	if (!*out)
		return d->err = -ENOMEM;
	memcpy(*out, d->buf + d->pos, n);
	d->pos += n;
	*len = n;
	return 0;
}

int attr_times(const struct ckpt_attr *a, struct timespec *ts)
{
	ts[0] = (struct timespec){ .tv_nsec = UTIME_OMIT };
	ts[1] = ts[0];
	if (a->set & CKPT_ATTR_ATIME)
		ts[0] = (struct timespec){ a->atime_ns / 1000000000ull,
					   a->atime_ns % 1000000000ull };
	if (a->set & CKPT_ATTR_MTIME)
		ts[1] = (struct timespec){ a->mtime_ns / 1000000000ull,
					   a->mtime_ns % 1000000000ull };
	return (a->set & (CKPT_ATTR_ATIME | CKPT_ATTR_MTIME)) != 0;
}

int attr_mode_ok(uint32_t mode)
{
	switch (mode & ~07777u) {
	case 0:
	case CKPT_ATTR_IFLNK:
	case CKPT_ATTR_IFIFO:
	case CKPT_ATTR_IFCHR:
	case CKPT_ATTR_IFBLK:
	case CKPT_ATTR_IFSOCK:
	case CKPT_ATTR_IFDIR:
		return 1;
	}
	return 0;
}

void dec_attr(struct dec *d, struct ckpt_attr *a)
{
	a->set = dec_u32(d);
	a->mode = dec_u32(d);
	a->uid = dec_u32(d);
	a->gid = dec_u32(d);
	a->atime_ns = dec_u64(d);
	a->mtime_ns = dec_u64(d);
	a->ctime_ns = dec_u64(d);
	a->rdev = dec_u64(d);
	if (!d->err && ((a->set & ~CKPT_ATTR_ALL) || !attr_mode_ok(a->mode)))
		d->err = -CKPT_EPROTO;
}

int image_check(const void *buf, size_t len, uint64_t magic, uint32_t format,
		size_t min_len)
{
	const uint8_t *p = buf;

	if (len < 12)
		return -CKPT_EPROTO;
	if (get_le64(p) != magic)
		return -CKPT_EBADMAGIC;
	if (len < min_len || len < 16)
		return -CKPT_EPROTO;
	if (get_le32(p + 8) != format)
		return -CKPT_EVERSION;
	if (crc32c(p, len - 4) != get_le32(p + len - 4))
		return -CKPT_ECORRUPT;
	return 0;
}
