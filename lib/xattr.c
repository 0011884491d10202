/*
 * xattr.c - the packed blob of a file's extended attributes (xattr.h).
 *
 * A blob is small (XATTR_MAX) and read far more than written, so every
 * operation is a linear walk; xattr_check() is the decoders' trust boundary
 * and every other function assumes a checked blob.
 */
#include <errno.h>
#include <string.h>

#include "xattr.h"

/* The record at off: name [*n, *n + *nlen), value [*v, *v + *vlen); the
 * offset after it, or 0 if it does not fit len. */
static size_t rec_at(const uint8_t *b, size_t len, size_t off, size_t *n,
		     size_t *nlen, size_t *v, size_t *vlen)
{
	if (off + 1 > len)
		return 0;
	*nlen = b[off];
	*n = off + 1;
	if (*nlen == 0 || *n + *nlen + 2 > len)
		return 0;
	*vlen = b[*n + *nlen] | (size_t)b[*n + *nlen + 1] << 8;
	*v = *n + *nlen + 2;
	if (*v + *vlen > len)
		return 0;
	return *v + *vlen;
}

/* Offset of the record named name (nlen bytes), or -1. */
static long find(const uint8_t *b, size_t len, const char *name, size_t nl)
{
	size_t off = 0, n, nlen, v, vlen, next;

	while (off < len) {
		next = rec_at(b, len, off, &n, &nlen, &v, &vlen);
		if (!next)
			return -1;
		if (nlen == nl && !memcmp(b + n, name, nl))
			return (long)off;
		off = next;
	}
	return -1;
}

int xattr_check(const uint8_t *blob, size_t len)
{
	size_t off = 0, n, nlen, v, vlen, next;

	if (len > XATTR_MAX)
		return -CKPT_EPROTO;
	while (off < len) {
		next = rec_at(blob, len, off, &n, &nlen, &v, &vlen);
		if (!next || memchr(blob + n, 0, nlen) ||
		    find(blob, off, (const char *)blob + n, nlen) >= 0)
			return -CKPT_EPROTO;
		off = next;
	}
	return 0;
}

int xattr_user_only(const uint8_t *blob, size_t len)
{
	size_t off = 0, n, nlen, v, vlen, next;

	while (off < len) {
		next = rec_at(blob, len, off, &n, &nlen, &v, &vlen);
		if (!next || nlen <= 5 || memcmp(blob + n, "user.", 5))
			return 0;
		off = next;
	}
	return 1;
}

long xattr_get(const uint8_t *blob, size_t len, const char *name,
	       const uint8_t **val)
{
	long off = find(blob, len, name, strlen(name));
	size_t n = 0, nlen = 0, v = 0, vlen = 0;

	if (off < 0)
		return -ENODATA;
	rec_at(blob, len, off, &n, &nlen, &v, &vlen);
	*val = blob + v;
	return (long)vlen;
}

int xattr_remove(uint8_t *buf, size_t *len, const char *name)
{
	long off = find(buf, *len, name, strlen(name));
	size_t n = 0, nlen = 0, v = 0, vlen = 0, next;

	if (off < 0)
		return -ENODATA;
	next = rec_at(buf, *len, off, &n, &nlen, &v, &vlen);
	memmove(buf + off, buf + next, *len - next);
	*len -= next - off;
	return 0;
}

int xattr_set(uint8_t *buf, size_t *len, const char *name, const void *val,
	      size_t vlen)
{
	size_t nl = strlen(name), need = 1 + nl + 2 + vlen, old = 0;
	long off = find(buf, *len, name, nl);
	size_t n = 0, nlen = 0, v = 0, ovlen = 0;

	if (nl == 0 || nl > 255)
		return -ERANGE;
	if (off >= 0)
		old = rec_at(buf, *len, off, &n, &nlen, &v, &ovlen) - off;
	if (*len - old + need > XATTR_MAX)
		return -ENOSPC;
	if (off >= 0)
		xattr_remove(buf, len, name);
	buf[*len] = (uint8_t)nl;
	memcpy(buf + *len + 1, name, nl);
	buf[*len + 1 + nl] = (uint8_t)vlen;
	buf[*len + 2 + nl] = (uint8_t)(vlen >> 8);
	memcpy(buf + *len + 3 + nl, val, vlen);
	*len += need;
	return 0;
}

long xattr_list(const uint8_t *blob, size_t len, char *out, size_t cap)
{
	size_t off = 0, total = 0, n = 0, nlen = 0, v = 0, vlen = 0;

	while (off < len) {
		off = rec_at(blob, len, off, &n, &nlen, &v, &vlen);
		if (cap && total + nlen + 1 > cap)
			return -ERANGE;
		if (cap) {
			memcpy(out + total, blob + n, nlen);
			out[total + nlen] = '\0';
		}
		total += nlen + 1;
	}
	return (long)total;
}
