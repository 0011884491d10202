/*
 * codec.h - bounds-checked little-endian encoding, shared by the wire
 * protocol (proto.c) and the on-disk formats (manifest.c, seghdr.c).
 *
 * struct enc appends into a caller-owned, fixed-size buffer.  Once a put
 * overflows, enc.err is set to -EMSGSIZE and every later put is ignored, so
 * a run of puts needs one check at the end.
 *
 * struct dec reads from a caller-owned buffer.  A read past the end, or a
 * string that is too long or holds a NUL, sets dec.err to -CKPT_EPROTO and
 * returns zeroes from then on.  Strings are encoded as a u16 length and the
 * bytes, without a terminator; dec_str() copies them NUL-terminated.
 */
#ifndef CKPT_CODEC_H
#define CKPT_CODEC_H

#include <stddef.h>
#include <stdint.h>

struct enc {
	uint8_t *buf;
	size_t cap;
	size_t len;
	int err;
};

struct dec {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	int err;
};

void enc_init(struct enc *e, void *buf, size_t cap);
void enc_u8(struct enc *e, uint8_t v);
void enc_u16(struct enc *e, uint16_t v);
void enc_u32(struct enc *e, uint32_t v);
void enc_u64(struct enc *e, uint64_t v);
/* p may already be where the bytes go: then nothing is copied. */
void enc_bytes(struct enc *e, const void *p, size_t n);
/* -EMSGSIZE if strlen(s) > 65535 */
void enc_str(struct enc *e, const char *s);
/* enc_str() of a string held in a char[max + 1] that may lack its NUL:
 * reads at most max + 1 bytes of s; -EMSGSIZE if strnlen(s) > max. */
void enc_strn(struct enc *e, const char *s, size_t max);

void dec_init(struct dec *d, const void *buf, size_t len);
uint8_t dec_u8(struct dec *d);
uint16_t dec_u16(struct dec *d);
uint32_t dec_u32(struct dec *d);
uint64_t dec_u64(struct dec *d);
/* Copy a string of at most max bytes into out (which holds max + 1). */
void dec_str(struct dec *d, char *out, size_t max);
/* Decode a string of at most max bytes in place and return it: its bytes
 * move back over their u16 length (which is consumed) and a NUL follows
 * them, inside the bytes the string occupied, so the fields after it are
 * untouched.  The buffer given to dec_init() must be writable.  "" on
 * error. */
const char *dec_str_inplace(struct dec *d, size_t max);
/* Bytes left unread. */
static inline size_t dec_left(const struct dec *d)
{
	return d->err ? 0 : d->len - d->pos;
}

/*
 * Whole images (the manifests of manifest.c and pfsman.c) start with a u64
 * magic and a u32 format, and end with the CRC32C of every byte before it.
 * enc_seal() appends that CRC and returns the image's length, or -EMSGSIZE.
 * image_check() checks the three: 0, -CKPT_EPROTO (shorter than min_len),
 * -CKPT_EBADMAGIC, -CKPT_EVERSION or -CKPT_ECORRUPT.
 */
long enc_seal(struct enc *e);
/*
 * A file's attributes (struct ckpt_attr), the same in the wire protocol,
 * the local manifest and the PFS manifest: u32 set, mode, uid, gid; u64
 * atime_ns, mtime_ns, ctime_ns, rdev (ATTR_ENC_LEN bytes).  dec_attr() fails
 * the decoder with -CKPT_EPROTO on unknown set bits or a mode that
 * attr_mode_ok() refuses.
 */
#define ATTR_ENC_LEN (4 * 4 + 4 * 8)
struct ckpt_attr;
void enc_attr(struct enc *e, const struct ckpt_attr *a);
void dec_attr(struct dec *d, struct ckpt_attr *a);
/* A u32 length and that many bytes of an xattr.h blob, checked, into a
 * malloc'd *out (NULL when empty) the caller owns.  0, d->err, -CKPT_EPROTO,
 * -ENOMEM. */
int dec_xattr(struct dec *d, uint8_t **out, uint32_t *len);
/* Permission bits (07777) and at most one known CKPT_ATTR_IF* type?  1/0. */
int attr_mode_ok(uint32_t mode);
/* a's atime and mtime into ts[0] and ts[1], as futimens() takes them: UTIME_OMIT
 * where a does not set one.  Returns 1 if a sets either, else 0. */
struct timespec;
int attr_times(const struct ckpt_attr *a, struct timespec *ts);

int image_check(const void *buf, size_t len, uint64_t magic, uint32_t format,
		size_t min_len);

/* Raw little-endian helpers for fixed headers. */
static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static inline uint32_t get_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

#endif
