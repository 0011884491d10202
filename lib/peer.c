/*
 * peer.c - frames between ckptd nodes, and their authentication (see
 * peer.h).  Only this file touches raw peer frame bytes.
 *
 * HMAC-SHA-256, the constant-time comparison and the random nonces come from
 * libsodium: a small, well-kept Debian library whose API leaves little room
 * for misuse, so that ckpt owns no cryptography of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "crc32c.h"
#include "names.h"
#include "peer.h"

enum {
	H_MAGIC = 0, H_VERSION = 4, H_TYPE = 6, H_LEN = 8, H_SEQ = 12,
	H_STATUS = 16, H_FLAGS = 20, H_HCRC = 24, H_CRC = 28,
};

static const char *const type_names[PEER_NTYPES] = {
	[PEER_HELLO] = "HELLO",
	[PEER_CHALLENGE] = "CHALLENGE",
	[PEER_AUTH] = "AUTH",
	[PEER_SHARD_PUT] = "SHARD_PUT",
	[PEER_SHARD_SEAL] = "SHARD_SEAL",
	[PEER_PART] = "PART",
	[PEER_READ] = "READ",
	[PEER_SYNC] = "SYNC",
	[PEER_SHARD_GET] = "SHARD_GET",
	[PEER_HELD] = "HELD",
	[PEER_PING] = "PING",
};

/* Wire values: fixed forever. */
_Static_assert(PEER_HELD == 10 && PEER_PING == 11, "peer type values");

/* Payload bytes of a READ reply of status 0: len, crc and the data. */
#define DATA_FIXED 8u

/* Does a reply of status 0 to a request of type carry a struct peer_data,
 * and of how many bytes at most? */
static int has_data(unsigned type)
{
	return type == PEER_READ || type == PEER_SHARD_GET || type == PEER_HELD;
}

static uint32_t data_max(unsigned type)
{
	return type == PEER_HELD ? PEER_MAX_HELD : PEER_MAX_SHARD;
}

const char *peer_type_name(unsigned type)
{
	type &= ~PEER_REPLY;
	return type && type < PEER_NTYPES && type_names[type] ?
	       type_names[type] : "?";
}

int peer_peek(const void *buf, size_t avail, struct peer_hdr *hdr)
{
	const uint8_t *p = buf;
	unsigned type;

	if (avail < PEER_HDR_LEN)
		return -CKPT_EPROTO;
	if (get_le32(p + H_MAGIC) != PEER_MAGIC)
		return -CKPT_EBADMAGIC;
	if (get_le32(p + H_HCRC) != crc32c(p, H_HCRC))
		return -CKPT_ECORRUPT;
	hdr->version = (uint16_t)(p[H_VERSION] | p[H_VERSION + 1] << 8);
	if (hdr->version != PEER_VERSION)
		return -CKPT_EVERSION;
	type = (unsigned)(p[H_TYPE] | p[H_TYPE + 1] << 8);
	hdr->type = (uint16_t)type;
	hdr->len = get_le32(p + H_LEN);
	hdr->seq = get_le32(p + H_SEQ);
	hdr->status = (int32_t)get_le32(p + H_STATUS);
	type &= ~PEER_REPLY;
	if (!type || type >= PEER_NTYPES || get_le32(p + H_FLAGS) ||
	    hdr->len > PEER_MAX_PAYLOAD)
		return -CKPT_EPROTO;
	if (!(hdr->type & PEER_REPLY))
		return hdr->status || (type == PEER_PING && hdr->len) ?
		       -CKPT_EPROTO : 0;
	if (hdr->status > 0)
		return -CKPT_EPROTO;
	/* A reply is a bare status, but for READ's with status 0, which
	 * carries a struct peer_data: trusted lengths only. */
	if (has_data(type) && !hdr->status)
		return hdr->len >= DATA_FIXED &&
		       hdr->len <= DATA_FIXED + data_max(type) ?
		       0 : -CKPT_EPROTO;
	return hdr->len ? -CKPT_EPROTO : 0;
}

int peer_check(const void *frame, size_t len, struct peer_hdr *hdr)
{
	const uint8_t *p = frame;
	int ret = peer_peek(frame, len, hdr);

	if (ret)
		return ret;
	if (len != PEER_HDR_LEN + (size_t)hdr->len)
		return -CKPT_EPROTO;
	if (get_le32(p + H_CRC) != crc32c(p + PEER_HDR_LEN, hdr->len))
		return -CKPT_ECORRUPT;
	return 0;
}

/*
 * The payload CRC of a frame (flen bytes) whose payload carries dlen bytes
 * of CRC dcrc at data: only the bytes around the data are read (the frame
 * encoders' CRC of what they send, and the decoders' proof that dcrc is
 * the data's, below).
 */
static uint32_t crc_around(const uint8_t *frame, size_t flen,
			   const uint8_t *data, uint32_t dlen, uint32_t dcrc)
{
	const uint8_t *pl = frame + PEER_HDR_LEN;
	size_t pre = (size_t)(data - pl);
	size_t post = flen - PEER_HDR_LEN - pre - dlen;
	uint32_t c = crc32c_combine(crc32c(pl, pre), dcrc, dlen);

	return crc32c_combine(c, crc32c(data + dlen, post), post);
}

/* Is dcrc the CRC of the dlen bytes at data, in a frame peer_check()
 * passed?  Its payload CRC covers every byte it carries, and equals the
 * CRC made of the bytes around the data and dcrc only if dcrc is the
 * data's (the sum is linear in it): no second pass over the data. */
static int data_crc_ok(const void *frame, size_t flen, const uint8_t *data,
		       uint32_t dlen, uint32_t dcrc)
{
	return crc_around(frame, flen, data, dlen, dcrc) ==
	       get_le32((const uint8_t *)frame + H_CRC);
}

/* Start a frame: the header with len and CRCs left to peer_end(). */
static void peer_begin(struct enc *e, void *buf, size_t cap, uint16_t type,
		       uint32_t seq, int32_t status)
{
	enc_init(e, buf, cap);
	enc_u32(e, PEER_MAGIC);
	enc_u16(e, PEER_VERSION);
	enc_u16(e, type);
	enc_u32(e, 0);
	enc_u32(e, seq);
	enc_u32(e, (uint32_t)status);
	enc_u32(e, 0);
	enc_u32(e, 0);
	enc_u32(e, 0);
}

/* End a frame whose payload carries dlen bytes of CRC dcrc at byte at of
 * the frame: len and both CRCs into the header, the payload's made from
 * dcrc and the bytes around them, not from another pass over the data (a
 * caller's dcrc that is not the data's makes a frame every receiver
 * refuses).  The length or -errno. */
static int peer_end_data(struct enc *e, size_t at, uint32_t dlen,
			 uint32_t dcrc)
{
	size_t plen;

	if (e->err)
		return e->err;
	plen = e->len - PEER_HDR_LEN;
	if (plen > PEER_MAX_PAYLOAD)
		return -EMSGSIZE;
	put_le32(e->buf + H_LEN, (uint32_t)plen);
	put_le32(e->buf + H_CRC, crc_around(e->buf, e->len, e->buf + at, dlen,
					    dcrc));
	put_le32(e->buf + H_HCRC, crc32c(e->buf, H_HCRC));
	return (int)e->len;
}

/* The same for a frame with no such data: the payload's CRC from all of
 * it (no bytes at its start, of CRC 0, leave every byte "around"). */
static int peer_end(struct enc *e)
{
	return peer_end_data(e, PEER_HDR_LEN, 0, 0);
}

int peer_encode_status(void *buf, size_t cap, uint16_t type, uint32_t seq,
		       int32_t status)
{
	struct enc e;

	/* READ's reply of status 0 carries data: peer_encode_data(). */
	if (status > 0 || !type || type >= PEER_NTYPES ||
	    (has_data(type) && !status))
		return -EINVAL;
	peer_begin(&e, buf, cap, type | PEER_REPLY, seq, status);
	return peer_end(&e);
}

int peer_encode_hello(void *buf, size_t cap, uint16_t type, uint32_t seq,
		      const struct peer_hello *h)
{
	struct enc e;

	if (type != PEER_HELLO && type != PEER_CHALLENGE)
		return -EINVAL;
	peer_begin(&e, buf, cap, type, seq, 0);
	enc_strn(&e, h->name, PLACE_NAME_MAX);
	enc_bytes(&e, h->nonce, PEER_NONCE_LEN);
	if (type == PEER_CHALLENGE)
		enc_bytes(&e, h->proof, PEER_PROOF_LEN);
	return peer_end(&e);
}

int peer_encode_auth(void *buf, size_t cap, uint32_t seq,
		     const struct peer_auth *a)
{
	struct enc e;

	peer_begin(&e, buf, cap, PEER_AUTH, seq, 0);
	enc_bytes(&e, a->proof, PEER_PROOF_LEN);
	return peer_end(&e);
}

int peer_encode_ping(void *buf, size_t cap, uint32_t seq)
{
	struct enc e;

	peer_begin(&e, buf, cap, PEER_PING, seq, 0);
	return peer_end(&e);
}

int peer_encode_sync(void *buf, size_t cap, uint32_t seq, const char *owner)
{
	struct enc e;

	if (!owner[0] || strlen(owner) > PLACE_NAME_MAX)
		return -EINVAL;
	peer_begin(&e, buf, cap, PEER_SYNC, seq, 0);
	enc_strn(&e, owner, PLACE_NAME_MAX);
	return peer_end(&e);
}

/* k data and m parity shards, k + m <= 32; shard 0 stays with its owner,
 * so a peer holds one of 1..k+m-1.  The sum cannot wrap: each is checked
 * alone first. */
static int stripe_ok(uint32_t k, uint32_t m, uint32_t shard)
{
	return k && m && k <= 32 && m <= 32 && k + m <= 32 && shard &&
	       shard < k + m;
}

/*
 * SHARD_SEAL's geometry: chunk a whole number of pages up to a frame's
 * shard bytes, nstripes what stream_len makes of it, and the padded stream
 * (nstripes * k * chunk bytes, so also any shard's nstripes * chunk) within
 * an off_t, so that no receiver's offset arithmetic wraps.  k * chunk is at
 * most 31 * 4 MiB: no wrap either.
 */
static int seal_ok(const struct peer_seal *s)
{
	uint64_t kc, want;

	if (!stripe_ok(s->k, s->m, s->shard) || !s->chunk ||
	    s->chunk > PEER_MAX_SHARD || s->chunk % 4096 || !s->manlen ||
	    s->manlen > PEER_MAX_MAN)
		return 0;
	kc = (uint64_t)s->k * s->chunk;
	want = s->stream_len / kc + (s->stream_len % kc != 0);
	return s->nstripes == want && want <= (uint64_t)INT64_MAX / kc;
}

/* Every CKPT_COPY_* bit ckpt.h defines: a new one belongs here too. */
#define COPIES_KNOWN (CKPT_COPY_LOCAL | CKPT_COPY_PFS | \
		      CKPT_COPY_QUARANTINE | CKPT_COPY_PEERS)

/* PART's fields: a state (0, gone, or enum ckpt_state), a level, known copy
 * bits, and a manifest for a SEALED part only (which may lack one: its
 * owner could not encode it). */
static int part_ok(const struct peer_part *p)
{
	if (p->state > CKPT_ST_DAMAGED || p->level > CKPT_DRAINED ||
	    (p->copies & ~COPIES_KNOWN) || (p->flags & ~PEER_PART_FLAGS) ||
	    !p->nparts ||
	    p->nparts > PLACE_MAX_NODES || p->manlen > PEER_MAX_MAN)
		return 0;
	return p->state == CKPT_ST_SEALED || !p->manlen;
}

/* READ's range: 1..PEER_MAX_SHARD bytes, ending within an off_t. */
static int read_ok(const struct peer_read *r)
{
	return r->len && r->len <= PEER_MAX_SHARD &&
	       r->off <= (uint64_t)INT64_MAX - r->len;
}

/* SHARD_PUT's total, when there is one: the chunk within it, the whole
 * within an off_t.  0 (unknown) is always good. */
static int total_ok(const struct peer_shard *s)
{
	return !s->total ||
	       (s->total <= (uint64_t)INT64_MAX && s->off <= s->total &&
		s->len <= s->total - s->off);
}

int peer_encode_shard(void *buf, size_t cap, uint32_t seq,
		      const struct peer_shard *s)
{
	struct enc e;
	size_t at;

	if (s->len > PEER_MAX_SHARD || !stripe_ok(s->k, s->m, s->shard) ||
	    !total_ok(s))
		return -EINVAL;
	peer_begin(&e, buf, cap, PEER_SHARD_PUT, seq, 0);
	enc_strn(&e, s->owner, PLACE_NAME_MAX);
	enc_strn(&e, s->job, CKPT_JOB_MAX);
	enc_strn(&e, s->version, CKPT_VERSION_MAX);
	enc_u64(&e, s->seq);
	enc_u64(&e, s->open_id);
	enc_u32(&e, s->k);
	enc_u32(&e, s->m);
	enc_u32(&e, s->shard);
	enc_u64(&e, s->stripe);
	enc_u64(&e, s->off);
	enc_u32(&e, s->len);
	enc_u32(&e, s->crc);
	at = e.len;
	enc_bytes(&e, s->data, s->len);
	if (s->total)             /* trailing: absent means unknown */
		enc_u64(&e, s->total);
	return peer_end_data(&e, at, s->len, s->crc);
}

int peer_encode_seal(void *buf, size_t cap, uint32_t seq,
		     const struct peer_seal *s)
{
	struct enc e;

	if (!seal_ok(s))
		return -EINVAL;
	peer_begin(&e, buf, cap, PEER_SHARD_SEAL, seq, 0);
	enc_strn(&e, s->owner, PLACE_NAME_MAX);
	enc_strn(&e, s->job, CKPT_JOB_MAX);
	enc_strn(&e, s->version, CKPT_VERSION_MAX);
	enc_u32(&e, s->uid);
	enc_u64(&e, s->seq);
	enc_u64(&e, s->open_id);
	enc_u32(&e, s->k);
	enc_u32(&e, s->m);
	enc_u32(&e, s->shard);
	enc_u32(&e, s->chunk);
	enc_u64(&e, s->stream_len);
	enc_u64(&e, s->nstripes);
	enc_u32(&e, s->manlen);
	enc_bytes(&e, s->man, s->manlen);
	return peer_end(&e);
}

int peer_encode_part(void *buf, size_t cap, uint32_t seq,
		     const struct peer_part *p)
{
	struct enc e;

	if (!part_ok(p))
		return -EINVAL;
	peer_begin(&e, buf, cap, PEER_PART, seq, 0);
	enc_strn(&e, p->owner, PLACE_NAME_MAX);
	enc_strn(&e, p->job, CKPT_JOB_MAX);
	enc_strn(&e, p->version, CKPT_VERSION_MAX);
	enc_u32(&e, p->uid);
	enc_u32(&e, p->state);
	enc_u32(&e, p->level);
	enc_u32(&e, p->copies);
	enc_u32(&e, p->nparts);
	enc_u64(&e, p->seq);
	enc_u64(&e, p->open_id);
	enc_u64(&e, p->sealed_ns);
	enc_u32(&e, p->nfiles);
	enc_u64(&e, p->bytes);
	enc_u32(&e, p->flags);
	enc_u32(&e, p->manlen);
	enc_bytes(&e, p->man, p->manlen);
	return peer_end(&e);
}

int peer_encode_read(void *buf, size_t cap, uint32_t seq,
		     const struct peer_read *r)
{
	struct enc e;

	if (!read_ok(r))
		return -EINVAL;
	peer_begin(&e, buf, cap, PEER_READ, seq, 0);
	enc_strn(&e, r->job, CKPT_JOB_MAX);
	enc_strn(&e, r->version, CKPT_VERSION_MAX);
	enc_strn(&e, r->path, CKPT_PATH_MAX2);
	enc_u64(&e, r->off);
	enc_u32(&e, r->len);
	return peer_end(&e);
}

int peer_encode_data(void *buf, size_t cap, uint32_t seq,
		     const struct peer_data *d)
{
	return peer_encode_data_for(buf, cap, PEER_READ, seq, d);
}

/* SHARD_GET names a shard (1..31); HELD's cursor may be shard 0. */
static int sget_ok(unsigned type, const struct peer_sget *g)
{
	if (type == PEER_HELD)
		return g->shard < 32 && !g->stripe;
	return g->shard && g->shard < 32 && g->stripe <= (uint64_t)INT64_MAX;
}

static int encode_sget(void *buf, size_t cap, unsigned type, uint32_t seq,
		       const struct peer_sget *g)
{
	struct enc e;

	if (!g->owner[0] || strlen(g->owner) > PLACE_NAME_MAX ||
	    !sget_ok(type, g))
		return -EINVAL;
	peer_begin(&e, buf, cap, (uint16_t)type, seq, 0);
	enc_strn(&e, g->owner, PLACE_NAME_MAX);
	enc_u64(&e, g->open_id);
	enc_u32(&e, g->shard);
	enc_u64(&e, g->stripe);
	return peer_end(&e);
}

int peer_encode_sget(void *buf, size_t cap, uint32_t seq,
		     const struct peer_sget *g)
{
	return encode_sget(buf, cap, PEER_SHARD_GET, seq, g);
}

int peer_encode_held(void *buf, size_t cap, uint32_t seq,
		     const struct peer_sget *g)
{
	return encode_sget(buf, cap, PEER_HELD, seq, g);
}

int peer_encode_data_for(void *buf, size_t cap, uint16_t type, uint32_t seq,
			 const struct peer_data *d)
{
	struct enc e;

	if (!has_data(type) || d->len > data_max(type))
		return -EINVAL;
	peer_begin(&e, buf, cap, type | PEER_REPLY, seq, 0);
	enc_u32(&e, d->len);
	enc_u32(&e, d->crc);
	enc_bytes(&e, d->data, d->len);
	return peer_end_data(&e, PEER_DATA_AT, d->len, d->crc);
}

/* The payload of a checked frame of type want, a request or a reply of
 * status 0. */
static int payload(const void *frame, size_t len, unsigned want,
		   struct dec *d)
{
	struct peer_hdr h;

	if (peer_peek(frame, len, &h) || h.type != want || h.status ||
	    len != PEER_HDR_LEN + (size_t)h.len)
		return -CKPT_EPROTO;
	dec_init(d, (const uint8_t *)frame + PEER_HDR_LEN, h.len);
	return 0;
}

static void dec_raw(struct dec *d, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = dec_u8(d);
}

/* A node name: the characters nodes.h allows. */
static int node_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

int peer_decode_hello(const void *frame, size_t len, struct peer_hello *h)
{
	struct peer_hdr hdr;
	struct dec d;

	memset(h, 0, sizeof(*h));
	if (peer_peek(frame, len, &hdr) ||
	    (hdr.type != PEER_HELLO && hdr.type != PEER_CHALLENGE) ||
	    payload(frame, len, hdr.type, &d))
		return -CKPT_EPROTO;
	dec_str(&d, h->name, PLACE_NAME_MAX);
	dec_raw(&d, h->nonce, PEER_NONCE_LEN);
	if (hdr.type == PEER_CHALLENGE)
		dec_raw(&d, h->proof, PEER_PROOF_LEN);
	if (d.err || dec_left(&d))
		return -CKPT_EPROTO;
	return node_name_ok(h->name) ? 0 : -CKPT_EBADNAME;
}

int peer_decode_auth(const void *frame, size_t len, struct peer_auth *a)
{
	struct dec d;

	memset(a, 0, sizeof(*a));
	if (payload(frame, len, PEER_AUTH, &d))
		return -CKPT_EPROTO;
	dec_raw(&d, a->proof, PEER_PROOF_LEN);
	return d.err || dec_left(&d) ? -CKPT_EPROTO : 0;
}

int peer_decode_sync(const void *frame, size_t len, char *owner)
{
	struct dec d;

	owner[0] = 0;
	if (payload(frame, len, PEER_SYNC, &d))
		return -CKPT_EPROTO;
	dec_str(&d, owner, PLACE_NAME_MAX);
	if (d.err || dec_left(&d))
		return -CKPT_EPROTO;
	return node_name_ok(owner) ? 0 : -CKPT_EBADNAME;
}

int peer_decode_shard(const void *frame, size_t len, struct peer_shard *s)
{
	struct dec d;

	memset(s, 0, sizeof(*s));
	if (payload(frame, len, PEER_SHARD_PUT, &d))
		return -CKPT_EPROTO;
	dec_str(&d, s->owner, PLACE_NAME_MAX);
	dec_str(&d, s->job, CKPT_JOB_MAX);
	dec_str(&d, s->version, CKPT_VERSION_MAX);
	s->seq = dec_u64(&d);
	s->open_id = dec_u64(&d);
	s->k = dec_u32(&d);
	s->m = dec_u32(&d);
	s->shard = dec_u32(&d);
	s->stripe = dec_u64(&d);
	s->off = dec_u64(&d);
	s->len = dec_u32(&d);
	s->crc = dec_u32(&d);
	if (d.err || s->len > PEER_MAX_SHARD || !stripe_ok(s->k, s->m, s->shard))
		return -CKPT_EPROTO;
	/* The shard bytes, then total if the sender sent one (a sent total
	 * is never 0). */
	if (dec_left(&d) == (size_t)s->len + 8) {
		s->total = get_le64((const uint8_t *)frame + len - 8);
		if (!s->total || !total_ok(s))
			return -CKPT_EPROTO;
	} else if (dec_left(&d) != s->len) {
		return -CKPT_EPROTO;
	}
	if (!node_name_ok(s->owner) || name_check_job(s->job) ||
	    name_check_version(s->version))
		return -CKPT_EBADNAME;
	s->data = (const uint8_t *)frame + len - (s->total ? 8 : 0) - s->len;
	if (!data_crc_ok(frame, len, s->data, s->len, s->crc))
		return -CKPT_ECORRUPT;
	return 0;
}

int peer_decode_seal(const void *frame, size_t len, struct peer_seal *s)
{
	struct dec d;

	memset(s, 0, sizeof(*s));
	if (payload(frame, len, PEER_SHARD_SEAL, &d))
		return -CKPT_EPROTO;
	dec_str(&d, s->owner, PLACE_NAME_MAX);
	dec_str(&d, s->job, CKPT_JOB_MAX);
	dec_str(&d, s->version, CKPT_VERSION_MAX);
	s->uid = dec_u32(&d);
	s->seq = dec_u64(&d);
	s->open_id = dec_u64(&d);
	s->k = dec_u32(&d);
	s->m = dec_u32(&d);
	s->shard = dec_u32(&d);
	s->chunk = dec_u32(&d);
	s->stream_len = dec_u64(&d);
	s->nstripes = dec_u64(&d);
	s->manlen = dec_u32(&d);
	if (d.err || dec_left(&d) != s->manlen || !seal_ok(s))
		return -CKPT_EPROTO;
	if (!node_name_ok(s->owner) || name_check_job(s->job) ||
	    name_check_version(s->version))
		return -CKPT_EBADNAME;
	s->man = (const uint8_t *)frame + len - s->manlen;
	return 0;
}

int peer_decode_part(const void *frame, size_t len, struct peer_part *p)
{
	struct dec d;

	memset(p, 0, sizeof(*p));
	if (payload(frame, len, PEER_PART, &d))
		return -CKPT_EPROTO;
	dec_str(&d, p->owner, PLACE_NAME_MAX);
	dec_str(&d, p->job, CKPT_JOB_MAX);
	dec_str(&d, p->version, CKPT_VERSION_MAX);
	p->uid = dec_u32(&d);
	p->state = dec_u32(&d);
	p->level = dec_u32(&d);
	p->copies = dec_u32(&d);
	p->nparts = dec_u32(&d);
	p->seq = dec_u64(&d);
	p->open_id = dec_u64(&d);
	p->sealed_ns = dec_u64(&d);
	p->nfiles = dec_u32(&d);
	p->bytes = dec_u64(&d);
	p->flags = dec_u32(&d);
	p->manlen = dec_u32(&d);
	if (d.err || dec_left(&d) != p->manlen || !part_ok(p))
		return -CKPT_EPROTO;
	if (!node_name_ok(p->owner) || name_check_job(p->job) ||
	    name_check_version(p->version))
		return -CKPT_EBADNAME;
	p->man = (const uint8_t *)frame + len - p->manlen;
	return 0;
}

int peer_decode_read(const void *frame, size_t len, struct peer_read *r)
{
	struct dec d;

	memset(r, 0, sizeof(*r));
	if (payload(frame, len, PEER_READ, &d))
		return -CKPT_EPROTO;
	dec_str(&d, r->job, CKPT_JOB_MAX);
	dec_str(&d, r->version, CKPT_VERSION_MAX);
	dec_str(&d, r->path, CKPT_PATH_MAX2);
	r->off = dec_u64(&d);
	r->len = dec_u32(&d);
	if (d.err || dec_left(&d) || !read_ok(r))
		return -CKPT_EPROTO;
	if (name_check_job(r->job) || name_check_version(r->version) ||
	    name_check_path(r->path))
		return -CKPT_EBADNAME;
	return 0;
}

int peer_decode_data(const void *frame, size_t len, struct peer_data *out)
{
	return peer_decode_data_for(frame, len, PEER_READ, out);
}

static int decode_sget(const void *frame, size_t len, unsigned type,
		       struct peer_sget *g)
{
	struct dec d;

	memset(g, 0, sizeof(*g));
	if (payload(frame, len, type, &d))
		return -CKPT_EPROTO;
	dec_str(&d, g->owner, PLACE_NAME_MAX);
	g->open_id = dec_u64(&d);
	g->shard = dec_u32(&d);
	g->stripe = dec_u64(&d);
	if (d.err || dec_left(&d) || !sget_ok(type, g))
		return -CKPT_EPROTO;
	return node_name_ok(g->owner) ? 0 : -CKPT_EBADNAME;
}

int peer_decode_sget(const void *frame, size_t len, struct peer_sget *g)
{
	return decode_sget(frame, len, PEER_SHARD_GET, g);
}

int peer_decode_held(const void *frame, size_t len, struct peer_sget *g)
{
	return decode_sget(frame, len, PEER_HELD, g);
}

int peer_decode_data_for(const void *frame, size_t len, uint16_t type,
			 struct peer_data *out)
{
	struct dec d;

	memset(out, 0, sizeof(*out));
	if (!has_data(type) || payload(frame, len, type | PEER_REPLY, &d))
		return -CKPT_EPROTO;
	out->len = dec_u32(&d);
	out->crc = dec_u32(&d);
	if (d.err || out->len > data_max(type) || dec_left(&d) != out->len)
		return -CKPT_EPROTO;
	out->data = (const uint8_t *)frame + len - out->len;
	if (!data_crc_ok(frame, len, out->data, out->len, out->crc))
		return -CKPT_ECORRUPT;
	return 0;
}

int peer_proof(const uint8_t *key, size_t keylen, char role,
	       const uint8_t conn_nonce[PEER_NONCE_LEN],
	       const uint8_t acc_nonce[PEER_NONCE_LEN],
	       const char *conn_name, const char *acc_name,
	       uint8_t out[PEER_PROOF_LEN])
{
	crypto_auth_hmacsha256_state st;
	static const char label[] = "ckpt peer v1";
	uint8_t r = (uint8_t)role, l[2];
	size_t cn = strlen(conn_name), an = strlen(acc_name);

	if ((role != 'C' && role != 'A') || keylen < PEER_KEY_MIN ||
	    cn > PLACE_NAME_MAX || an > PLACE_NAME_MAX ||
	    sodium_init() < 0)
		return -EINVAL;
	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label,
				      sizeof(label));
	crypto_auth_hmacsha256_update(&st, &r, 1);
	crypto_auth_hmacsha256_update(&st, conn_nonce, PEER_NONCE_LEN);
	crypto_auth_hmacsha256_update(&st, acc_nonce, PEER_NONCE_LEN);
	/* Length-prefixed names: ("ab","c") and ("a","bc") differ. */
	l[0] = (uint8_t)cn;
	crypto_auth_hmacsha256_update(&st, l, 1);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)conn_name, cn);
	l[1] = (uint8_t)an;
	crypto_auth_hmacsha256_update(&st, l + 1, 1);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)acc_name, an);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
	return 0;
}

int peer_proof_ok(const uint8_t *want, const uint8_t *got)
{
	return sodium_memcmp(want, got, PEER_PROOF_LEN) == 0;
}

int peer_nonce(uint8_t out[PEER_NONCE_LEN])
{
	if (sodium_init() < 0)
		return -EIO;
	randombytes_buf(out, PEER_NONCE_LEN);
	return 0;
}

int peer_key_load(const char *path, uint8_t *key, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	ret = -errno;
	if (fstat(fd, &st) < 0)
		goto out_close;
	ret = -EPERM;
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077))
		goto out_close;
	ret = -EINVAL;
	if (st.st_size < PEER_KEY_MIN || st.st_size > PEER_KEY_MAX)
		goto out_close;
	n = pread(fd, key, PEER_KEY_MAX, 0);
	if (n < 0) {
		ret = -errno;
		goto out_close;
	}
	if (n < PEER_KEY_MIN)
		goto out_close;
	*len = (size_t)n;
	ret = 0;
out_close:
	close(fd);
	return ret;
}
