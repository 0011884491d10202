/*
 * xattr.h - a file's extended attributes as one packed blob: what the
 * manifest, the PFS manifest and the wire carry for each file.
 *
 * A blob is a sequence of records, each
 *   u8 nlen; nlen bytes of name (1..255, no NUL); u16 vlen; vlen bytes
 * with no name twice, XATTR_MAX bytes at most in all.  Only names in the
 * "user." namespace are kept (ckptfs refuses the others).  The blob belongs
 * to whoever holds it (a heap buffer, or bytes in a frame or an image);
 * these functions never allocate, except xattr_set's caller-sized buffer.
 */
#ifndef CKPT_XATTR_H
#define CKPT_XATTR_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"

#define XATTR_MAX CKPT_XATTR_MAX

/* A well-formed blob of len bytes?  0 or -CKPT_EPROTO. */
int xattr_check(const uint8_t *blob, size_t len);
/* The value of name: its length (>= 0) with *val pointing into blob, or
 * -ENODATA. */
long xattr_get(const uint8_t *blob, size_t len, const char *name,
	       const uint8_t **val);
/* Set name to (val, vlen) in the blob of *len bytes in buf (XATTR_MAX
 * bytes), replacing an old value.  0, -ERANGE (name too long), -ENOSPC (the
 * blob would pass XATTR_MAX). */
int xattr_set(uint8_t *buf, size_t *len, const char *name, const void *val,
	      size_t vlen);
/* Remove name.  0 or -ENODATA. */
int xattr_remove(uint8_t *buf, size_t *len, const char *name);
/* Is every name of the (checked) blob in the "user." namespace, the only
 * one ckptd keeps?  1 or 0. */
int xattr_user_only(const uint8_t *blob, size_t len);
/* The names, each NUL-terminated, into out (cap bytes; 0: the size
 * needed).  Length, or -ERANGE. */
long xattr_list(const uint8_t *blob, size_t len, char *out, size_t cap);

#endif
