/*
 * test_peer_parts.c - unit tests for lib/peer's frames of a part's life
 * after its shards: SHARD_SEAL, PART, READ and READ's data reply.
 *
 * Each round-trips field by field; each field out of range is refused (its
 * own case, for the encoder and, put by hand, for the decoder); a cut of
 * the payload at every length and a byte too many with the header made to
 * agree are refused; the largest fields fit PEER_FRAME_CAP; only the
 * replies that may carry a payload do.  Then 100k garbage frames of every
 * type, through every decoder.  (The other frames: test_peer.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "peer.h"
#include "peer_test.h"
#include "unit.h"

static uint8_t man[64];

/* A header of type and status, len and CRCs left to reframe(). */
static void raw_begin(struct enc *e, uint16_t type, int32_t status)
{
	enc_init(e, frame, sizeof(frame));
	enc_u32(e, PEER_MAGIC);
	enc_u16(e, PEER_VERSION);
	enc_u16(e, type);
	enc_u32(e, 0);
	enc_u32(e, 77);
	enc_u32(e, (uint32_t)status);
	enc_u32(e, 0);
	enc_u32(e, 0);
	enc_u32(e, 0);
}

static int raw_end(struct enc *e)
{
	CU_ASSERT_FATAL(e->err == 0);
	return reframe(frame, e->len - PEER_HDR_LEN);
}

static void fill_seal(struct peer_seal *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	strcpy(s->owner, "gpu-07.rack_2");
	strcpy(s->job, "llama/run3");
	strcpy(s->version, "step-1200");
	s->uid = 1000;
	s->seq = 42;
	s->open_id = 0x1122334455667788ull;
	s->k = 4;
	s->m = 2;
	s->shard = 5;
	s->chunk = 1 << 20;
	s->stream_len = 10ull << 20;          /* 2.5 stripes of 4 MiB */
	s->nstripes = 3;
	for (i = 0; i < sizeof(man); i++)
		man[i] = (uint8_t)(i * 13 + 1);
	s->manlen = sizeof(man);
	s->man = man;
}

/* SHARD_SEAL with its fields as they are, unchecked: what a bad peer
 * could send.  Also pins the layout: the encoder must agree. */
static int raw_seal(const struct peer_seal *s, uint32_t carried)
{
	struct enc e;

	raw_begin(&e, PEER_SHARD_SEAL, 0);
	enc_str(&e, s->owner);
	enc_str(&e, s->job);
	enc_str(&e, s->version);
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
	enc_bytes(&e, data, carried);
	return raw_end(&e);
}

static void fill_part(struct peer_part *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->owner, "n1");
	strcpy(p->job, "a/b/c");
	strcpy(p->version, "v7");
	p->uid = 4242;
	p->state = CKPT_ST_SEALED;
	p->level = CKPT_PROTECTED;
	p->copies = CKPT_COPY_LOCAL | CKPT_COPY_PFS;
	p->nparts = 3;
	p->seq = 9;
	p->open_id = 0xdeadbeefcafe;
	p->sealed_ns = 1700000000123456789ull;
	p->nfiles = 12;
	p->bytes = 5ull << 40;
	p->flags = PEER_PART_PUBLISHED;
	p->manlen = sizeof(man);
	p->man = man;
}

static int raw_part(const struct peer_part *p, uint32_t carried)
{
	struct enc e;

	raw_begin(&e, PEER_PART, 0);
	enc_str(&e, p->owner);
	enc_str(&e, p->job);
	enc_str(&e, p->version);
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
	enc_bytes(&e, data, carried);
	return raw_end(&e);
}

static void fill_read(struct peer_read *r)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->job, "llama/run3");
	strcpy(r->version, "step-1200");
	strcpy(r->path, "rank0/model.safetensors");
	r->off = 3ull << 32;
	r->len = PEER_MAX_SHARD;
}

static int raw_read(const struct peer_read *r)
{
	struct enc e;

	raw_begin(&e, PEER_READ, 0);
	enc_str(&e, r->job);
	enc_str(&e, r->version);
	enc_str(&e, r->path);
	enc_u64(&e, r->off);
	enc_u32(&e, r->len);
	return raw_end(&e);
}

static void fill_data(struct peer_data *d, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	d->len = len;
	d->crc = crc32c(data, len);
	d->data = data;
}

static int raw_data(uint32_t len, uint32_t crc, uint32_t carried,
		    int32_t status)
{
	struct enc e;

	raw_begin(&e, PEER_READ | PEER_REPLY, status);
	enc_u32(&e, len);
	enc_u32(&e, crc);
	enc_bytes(&e, data, carried);
	return raw_end(&e);
}

/* Every decoder of the new types on one frame: only want's may accept. */
static int decode_any(const uint8_t *f, size_t n, unsigned type)
{
	struct peer_seal s;
	struct peer_part p;
	struct peer_read r;
	struct peer_data d;
	int ret = -1;

	if (type != PEER_SHARD_SEAL)
		CU_ASSERT_EQUAL(peer_decode_seal(f, n, &s), -CKPT_EPROTO);
	if (type != PEER_PART)
		CU_ASSERT_EQUAL(peer_decode_part(f, n, &p), -CKPT_EPROTO);
	if (type != PEER_READ)
		CU_ASSERT_EQUAL(peer_decode_read(f, n, &r), -CKPT_EPROTO);
	if (type != (PEER_READ | PEER_REPLY))
		CU_ASSERT_EQUAL(peer_decode_data(f, n, &d), -CKPT_EPROTO);
	switch (type) {
	case PEER_SHARD_SEAL: ret = peer_decode_seal(f, n, &s); break;
	case PEER_PART: ret = peer_decode_part(f, n, &p); break;
	case PEER_READ: ret = peer_decode_read(f, n, &r); break;
	case PEER_READ | PEER_REPLY: ret = peer_decode_data(f, n, &d); break;
	}
	return ret;
}

static void test_new_round_trip(void)
{
	struct peer_seal s, so;
	struct peer_part p, po;
	struct peer_read r, ro;
	struct peer_data d, dout;
	struct peer_hdr hdr;
	int n;

	fill_seal(&s);
	n = peer_encode_seal(frame, sizeof(frame), 11, &s);
	CU_ASSERT_FATAL(n > PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_SHARD_SEAL);
	CU_ASSERT_EQUAL(hdr.seq, 11);
	memcpy(data, man, sizeof(man));           /* the layout, by hand */
	memcpy(copy, frame, n);
	CU_ASSERT_EQUAL(raw_seal(&s, s.manlen), n);
	put_le32(frame + 12, 11);
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT(!memcmp(frame, copy, n));
	CU_ASSERT_EQUAL(decode_any(frame, n, PEER_SHARD_SEAL), 0);
	CU_ASSERT_EQUAL_FATAL(peer_decode_seal(frame, n, &so), 0);
	CU_ASSERT_STRING_EQUAL(so.owner, "gpu-07.rack_2");
	CU_ASSERT_STRING_EQUAL(so.job, "llama/run3");
	CU_ASSERT_STRING_EQUAL(so.version, "step-1200");
	CU_ASSERT_EQUAL(so.uid, 1000);
	CU_ASSERT_EQUAL(so.seq, 42);
	CU_ASSERT_EQUAL(so.open_id, s.open_id);
	CU_ASSERT_EQUAL(so.k, 4);
	CU_ASSERT_EQUAL(so.m, 2);
	CU_ASSERT_EQUAL(so.shard, 5);
	CU_ASSERT_EQUAL(so.chunk, 1 << 20);
	CU_ASSERT_EQUAL(so.stream_len, 10ull << 20);
	CU_ASSERT_EQUAL(so.nstripes, 3);
	CU_ASSERT_EQUAL(so.manlen, sizeof(man));
	CU_ASSERT(so.man > frame && so.man + so.manlen == frame + n);
	CU_ASSERT(!memcmp(so.man, man, sizeof(man)));

	fill_part(&p);
	n = peer_encode_part(frame, sizeof(frame), 12, &p);
	CU_ASSERT_FATAL(n > PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_PART);
	CU_ASSERT_EQUAL(decode_any(frame, n, PEER_PART), 0);
	CU_ASSERT_EQUAL_FATAL(peer_decode_part(frame, n, &po), 0);
	CU_ASSERT_STRING_EQUAL(po.owner, "n1");
	CU_ASSERT_STRING_EQUAL(po.job, "a/b/c");
	CU_ASSERT_STRING_EQUAL(po.version, "v7");
	CU_ASSERT_EQUAL(po.uid, 4242);
	CU_ASSERT_EQUAL(po.state, CKPT_ST_SEALED);
	CU_ASSERT_EQUAL(po.level, CKPT_PROTECTED);
	CU_ASSERT_EQUAL(po.copies, CKPT_COPY_LOCAL | CKPT_COPY_PFS);
	CU_ASSERT_EQUAL(po.nparts, 3);
	CU_ASSERT_EQUAL(po.seq, 9);
	CU_ASSERT_EQUAL(po.open_id, p.open_id);
	CU_ASSERT_EQUAL(po.sealed_ns, p.sealed_ns);
	CU_ASSERT_EQUAL(po.nfiles, 12);
	CU_ASSERT_EQUAL(po.bytes, 5ull << 40);
	CU_ASSERT_EQUAL(po.flags, PEER_PART_PUBLISHED);
	CU_ASSERT_EQUAL(po.manlen, sizeof(man));
	CU_ASSERT(po.man > frame && po.man + po.manlen == frame + n);
	CU_ASSERT(!memcmp(po.man, man, sizeof(man)));
	memcpy(data, man, sizeof(man));
	memcpy(copy, frame, n);
	CU_ASSERT_EQUAL(raw_part(&p, p.manlen), n);
	put_le32(frame + 12, 12);
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT(!memcmp(frame, copy, n));

	/* A removed part: state 0, no manifest. */
	fill_part(&p);
	p.state = 0;
	p.level = CKPT_NONE;
	p.copies = 0;
	p.manlen = 0;
	p.man = NULL;
	n = peer_encode_part(frame, sizeof(frame), 13, &p);
	CU_ASSERT_FATAL(n > PEER_HDR_LEN);
	CU_ASSERT_EQUAL_FATAL(peer_decode_part(frame, n, &po), 0);
	CU_ASSERT_EQUAL(po.state, 0);
	CU_ASSERT_EQUAL(po.manlen, 0);

	fill_read(&r);
	n = peer_encode_read(frame, sizeof(frame), 14, &r);
	CU_ASSERT_FATAL(n > PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_READ);
	CU_ASSERT_EQUAL(decode_any(frame, n, PEER_READ), 0);
	CU_ASSERT_EQUAL_FATAL(peer_decode_read(frame, n, &ro), 0);
	CU_ASSERT_STRING_EQUAL(ro.job, "llama/run3");
	CU_ASSERT_STRING_EQUAL(ro.version, "step-1200");
	CU_ASSERT_STRING_EQUAL(ro.path, "rank0/model.safetensors");
	CU_ASSERT_EQUAL(ro.off, 3ull << 32);
	CU_ASSERT_EQUAL(ro.len, PEER_MAX_SHARD);
	memcpy(copy, frame, n);
	CU_ASSERT_EQUAL(raw_read(&r), n);
	put_le32(frame + 12, 14);
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT(!memcmp(frame, copy, n));

	fill_data(&d, 123457);
	n = peer_encode_data(frame, sizeof(frame), 14, &d);
	CU_ASSERT_EQUAL_FATAL(n, PEER_HDR_LEN + 8 + 123457);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_READ | PEER_REPLY);
	CU_ASSERT_EQUAL(hdr.seq, 14);
	CU_ASSERT_EQUAL(hdr.status, 0);
	CU_ASSERT_EQUAL(decode_any(frame, n, PEER_READ | PEER_REPLY), 0);
	CU_ASSERT_EQUAL_FATAL(peer_decode_data(frame, n, &dout), 0);
	CU_ASSERT_EQUAL(dout.len, 123457);
	CU_ASSERT_EQUAL(dout.crc, d.crc);
	CU_ASSERT(dout.data == frame + PEER_HDR_LEN + 8);
	CU_ASSERT(!memcmp(dout.data, data, 123457));

	/* End of file: no bytes, and no data pointer to follow. */
	fill_data(&d, 0);
	d.data = NULL;
	n = peer_encode_data(frame, sizeof(frame), 15, &d);
	CU_ASSERT_EQUAL_FATAL(n, PEER_HDR_LEN + 8);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), 0);
	CU_ASSERT_EQUAL(dout.len, 0);
	fill_data(&d, PEER_MAX_SHARD);
	n = peer_encode_data(frame, sizeof(frame), 16, &d);
	CU_ASSERT_EQUAL_FATAL(n, PEER_HDR_LEN + 8 + (int)PEER_MAX_SHARD);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), 0);
}

/* The frames of the new types, good, for the tests below: n each. */
static int new_frame(unsigned i, uint8_t *f, size_t cap)
{
	struct peer_seal s;
	struct peer_part p;
	struct peer_read r;
	struct peer_data d;

	switch (i) {
	case 0: fill_seal(&s); return peer_encode_seal(f, cap, 1, &s);
	case 1: fill_part(&p); return peer_encode_part(f, cap, 2, &p);
	case 2: fill_read(&r); return peer_encode_read(f, cap, 3, &r);
	default: fill_data(&d, 300); return peer_encode_data(f, cap, 4, &d);
	}
}

static const unsigned new_types[4] = {
	PEER_SHARD_SEAL, PEER_PART, PEER_READ, PEER_READ | PEER_REPLY
};

/* Every cut, every changed byte, every payload cut and a byte too many
 * with a header that agrees, a buffer too small by any amount. */
static void test_new_damage(void)
{
	struct peer_hdr hdr;
	unsigned t;
	int n, i;

	for (t = 0; t < 4; t++) {
		n = new_frame(t, copy, sizeof(copy));
		CU_ASSERT_FATAL(n > PEER_HDR_LEN);
		for (i = 0; i < n; i++) {
			CU_ASSERT_EQUAL(new_frame(t, frame, (size_t)i),
					-EMSGSIZE);
			CU_ASSERT_NOT_EQUAL(peer_check(copy, i, &hdr), 0);
			CU_ASSERT_EQUAL(decode_any(copy, i, new_types[t]),
					-CKPT_EPROTO);
		}
		for (i = 0; i < n; i++) {
			memcpy(frame, copy, n);
			frame[i] ^= 0x21;
			CU_ASSERT_NOT_EQUAL(peer_check(frame, n, &hdr), 0);
		}
		/* Cut payloads, made whole frames again. */
		for (i = PEER_HDR_LEN; i < n; i++) {
			memcpy(frame, copy, i);
			reframe(frame, (size_t)i - PEER_HDR_LEN);
			CU_ASSERT_EQUAL(decode_any(frame, i, new_types[t]),
					-CKPT_EPROTO);
		}
		/* A byte more than the fields say. */
		memcpy(frame, copy, n);
		frame[n] = 0;
		reframe(frame, (size_t)n + 1 - PEER_HDR_LEN);
		CU_ASSERT_EQUAL(peer_check(frame, n + 1, &hdr), 0);
		CU_ASSERT_EQUAL(decode_any(frame, n + 1, new_types[t]),
				-CKPT_EPROTO);
		memcpy(frame, copy, n);
		CU_ASSERT_EQUAL(decode_any(frame, n, new_types[t]), 0);
	}
}

/* The encoder refuses a range (-EINVAL) but does not check names. */
static void want_enc(int ret, int want)
{
	if (want == -CKPT_EBADNAME || !want)
		CU_ASSERT(ret > 0);
	if (want == -CKPT_EPROTO)
		CU_ASSERT_EQUAL(ret, -EINVAL);
}

/* One field changed by stmt: the encoder and the decoder, as want says. */
#define SEAL_CASE(stmt, want)						\
	do {								\
		fill_seal(&s);						\
		stmt;							\
		want_enc(peer_encode_seal(frame, sizeof(frame), 1, &s), want); \
		n = raw_seal(&s, s.manlen);				\
		CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), want);	\
	} while (0)

static void test_seal_rules(void)
{
	struct peer_seal s, so;
	int n;

	fill_seal(&s);
	CU_ASSERT_FATAL(peer_encode_seal(frame, sizeof(frame), 1, &s) > 0);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), 0);

	SEAL_CASE(s.k = 0, -CKPT_EPROTO);
	SEAL_CASE(s.m = 0, -CKPT_EPROTO);
	/* nstripes set to agree with k: only k + m is wrong. */
	SEAL_CASE((s.k = 31, s.nstripes = 1), -CKPT_EPROTO);   /* k + m = 33 */
	SEAL_CASE((s.k = 33, s.nstripes = 1), -CKPT_EPROTO);
	/* k + m wraps to 6: shard 5 would pass a naive k + m check. */
	SEAL_CASE((s.k = UINT32_MAX - 1, s.m = 8, s.nstripes = 1),
		  -CKPT_EPROTO);
	SEAL_CASE((s.m = UINT32_MAX - 1, s.k = 8, s.nstripes = 2),
		  -CKPT_EPROTO);
	SEAL_CASE(s.shard = 0, -CKPT_EPROTO);
	SEAL_CASE(s.shard = 6, -CKPT_EPROTO);              /* = k + m */
	/* An empty stream: only the chunk is wrong. */
	SEAL_CASE((s.chunk = 0, s.stream_len = 0, s.nstripes = 0),
		  -CKPT_EPROTO);
	SEAL_CASE((s.chunk = 4095, s.stream_len = 0, s.nstripes = 0),
		  -CKPT_EPROTO);
	SEAL_CASE((s.chunk = 8192 + 512, s.stream_len = 0, s.nstripes = 0),
		  -CKPT_EPROTO);
	SEAL_CASE((s.chunk = PEER_MAX_SHARD + 4096, s.stream_len = 0,
		   s.nstripes = 0), -CKPT_EPROTO);
	SEAL_CASE((s.chunk = 8192, s.stream_len = 0, s.nstripes = 0), 0);
	SEAL_CASE(s.nstripes = 2, -CKPT_EPROTO);
	SEAL_CASE(s.nstripes = 4, -CKPT_EPROTO);
	SEAL_CASE(s.nstripes = 0, -CKPT_EPROTO);
	SEAL_CASE(s.stream_len = 0, -CKPT_EPROTO);         /* wants 0 stripes */
	SEAL_CASE(s.stream_len = 8ull << 20, -CKPT_EPROTO); /* wants 2 */
	SEAL_CASE(s.stream_len = (12ull << 20) + 1, -CKPT_EPROTO);
	SEAL_CASE(s.manlen = 0, -CKPT_EPROTO);
	SEAL_CASE(strcpy(s.owner, ""), -CKPT_EBADNAME);
	SEAL_CASE(strcpy(s.owner, "a/b"), -CKPT_EBADNAME);
	SEAL_CASE(strcpy(s.owner, "a b"), -CKPT_EBADNAME);
	SEAL_CASE(strcpy(s.job, "../j"), -CKPT_EBADNAME);
	SEAL_CASE(strcpy(s.job, ""), -CKPT_EBADNAME);
	SEAL_CASE(strcpy(s.version, "a/b"), -CKPT_EBADNAME);
	SEAL_CASE(strcpy(s.version, ".."), -CKPT_EBADNAME);

	/* The boundaries that pass. */
	fill_seal(&s);
	s.k = 31; s.m = 1; s.shard = 31;
	s.chunk = PEER_MAX_SHARD;
	s.stream_len = 1;
	s.nstripes = 1;
	CU_ASSERT(peer_encode_seal(frame, sizeof(frame), 1, &s) > 0);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), 0);
	s.stream_len = 0;
	s.nstripes = 0;
	CU_ASSERT(peer_encode_seal(frame, sizeof(frame), 1, &s) > 0);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), 0);

	/* The padded stream must fit an off_t: nstripes * k * chunk. */
	fill_seal(&s);
	s.k = 1; s.m = 1; s.shard = 1; s.chunk = 4096;
	s.stream_len = (uint64_t)INT64_MAX - 4095;      /* 2^63 - 4096 */
	s.nstripes = (1ull << 51) - 1;
	CU_ASSERT(peer_encode_seal(frame, sizeof(frame), 1, &s) > 0);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), 0);
	fill_seal(&s);
	s.k = 1; s.m = 1; s.shard = 1; s.chunk = 4096;
	s.stream_len = (uint64_t)INT64_MAX - 4094;      /* pads to 2^63 */
	s.nstripes = 1ull << 51;
	CU_ASSERT_EQUAL(peer_encode_seal(frame, sizeof(frame), 1, &s), -EINVAL);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);
	fill_seal(&s);
	s.k = 1; s.m = 1; s.shard = 1; s.chunk = 4096;
	s.stream_len = UINT64_MAX;                      /* nstripes * chunk */
	s.nstripes = 1ull << 52;                        /* would be 2^64 */
	CU_ASSERT_EQUAL(peer_encode_seal(frame, sizeof(frame), 1, &s), -EINVAL);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);

	/* The manifest's length against the bytes that follow it. */
	fill_seal(&s);
	n = raw_seal(&s, s.manlen + 1);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);
	n = raw_seal(&s, s.manlen - 1);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);
	s.manlen = PEER_MAX_MAN + 1;            /* fits the payload, too big */
	CU_ASSERT_EQUAL(peer_encode_seal(frame, sizeof(frame), 1, &s), -EINVAL);
	n = raw_seal(&s, s.manlen);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);
	s.manlen = UINT32_MAX;
	n = raw_seal(&s, 64);
	CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);

	/* Names too long for their fields: refused, not cut. */
	fill_seal(&s);
	memset(s.owner, 'o', sizeof(s.owner));          /* no NUL */
	CU_ASSERT_EQUAL(peer_encode_seal(frame, sizeof(frame), 1, &s),
			-EMSGSIZE);
	s.owner[PLACE_NAME_MAX] = 0;
	CU_ASSERT(peer_encode_seal(frame, sizeof(frame), 1, &s) > 0);
	{
		char longer[PLACE_NAME_MAX + 2];
		struct enc e;

		memset(longer, 'o', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = 0;
		raw_begin(&e, PEER_SHARD_SEAL, 0);
		enc_str(&e, longer);
		n = raw_end(&e);
		CU_ASSERT_EQUAL(peer_decode_seal(frame, n, &so), -CKPT_EPROTO);
	}
}

/* One field changed by stmt, as SEAL_CASE. */
#define PART_CASE(stmt, want)						\
	do {								\
		fill_part(&p);						\
		stmt;							\
		want_enc(peer_encode_part(frame, sizeof(frame), 1, &p), want); \
		n = raw_part(&p, p.manlen);				\
		CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), want);	\
	} while (0)

static void test_part_rules(void)
{
	struct peer_part p, po;
	unsigned st;
	int n;

	fill_part(&p);
	CU_ASSERT_FATAL(peer_encode_part(frame, sizeof(frame), 1, &p) > 0);

	PART_CASE(p.state = CKPT_ST_DAMAGED + 1, -CKPT_EPROTO);
	PART_CASE(p.state = UINT32_MAX, -CKPT_EPROTO);
	PART_CASE(p.level = CKPT_DRAINED + 1, -CKPT_EPROTO);
	PART_CASE(p.copies = 0x10, -CKPT_EPROTO);
	PART_CASE(p.copies = 0x80000000u, -CKPT_EPROTO);
	PART_CASE(p.flags = 0, 0);
	PART_CASE(p.flags = 0x2, -CKPT_EPROTO);          /* unknown flags */
	PART_CASE(p.flags = 0x80000001u, -CKPT_EPROTO);
	PART_CASE(p.nparts = 0, -CKPT_EPROTO);
	PART_CASE(p.nparts = PLACE_MAX_NODES + 1, -CKPT_EPROTO);
	/* SEALED without its manifest (too big to send, say): as it is. */
	PART_CASE(p.manlen = 0, 0);
	PART_CASE(strcpy(p.owner, ""), -CKPT_EBADNAME);
	PART_CASE(strcpy(p.owner, "x:y"), -CKPT_EBADNAME);
	PART_CASE(strcpy(p.job, "a//b"), -CKPT_EBADNAME);
	PART_CASE(strcpy(p.version, "."), -CKPT_EBADNAME);
	PART_CASE(strcpy(p.version, ""), -CKPT_EBADNAME);

	/* Every state; a manifest with SEALED only. */
	for (st = 0; st <= CKPT_ST_DAMAGED; st++) {
		fill_part(&p);
		p.state = st;
		if (st != CKPT_ST_SEALED) {
			p.manlen = 0;
			p.man = NULL;
		}
		n = peer_encode_part(frame, sizeof(frame), 1, &p);
		CU_ASSERT(n > 0);
		CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), 0);
		CU_ASSERT_EQUAL(po.state, st);
		if (st == CKPT_ST_SEALED)
			continue;
		p.manlen = 5;
		p.man = man;
		CU_ASSERT_EQUAL(peer_encode_part(frame, sizeof(frame), 1, &p),
				-EINVAL);
		n = raw_part(&p, 5);
		CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), -CKPT_EPROTO);
	}
	fill_part(&p);
	p.level = CKPT_DRAINED;
	p.copies = CKPT_COPY_LOCAL | CKPT_COPY_PFS | CKPT_COPY_QUARANTINE |
		   CKPT_COPY_PEERS;
	p.nparts = PLACE_MAX_NODES;
	n = peer_encode_part(frame, sizeof(frame), 1, &p);
	CU_ASSERT(n > 0);
	CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), 0);

	fill_part(&p);
	n = raw_part(&p, p.manlen + 1);
	CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), -CKPT_EPROTO);
	n = raw_part(&p, p.manlen - 1);
	CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), -CKPT_EPROTO);
	p.manlen = PEER_MAX_MAN + 1;
	CU_ASSERT_EQUAL(peer_encode_part(frame, sizeof(frame), 1, &p), -EINVAL);
	n = raw_part(&p, p.manlen);
	CU_ASSERT_EQUAL(peer_decode_part(frame, n, &po), -CKPT_EPROTO);
	memset(p.job, 'j', sizeof(p.job));
	CU_ASSERT_EQUAL(peer_encode_part(frame, sizeof(frame), 1, &p),
			-EINVAL);               /* manlen checked first */
	p.manlen = 1;
	CU_ASSERT_EQUAL(peer_encode_part(frame, sizeof(frame), 1, &p),
			-EMSGSIZE);
}

/* One field changed by stmt, as SEAL_CASE. */
#define READ_CASE(stmt, want)						\
	do {								\
		fill_read(&r);						\
		stmt;							\
		want_enc(peer_encode_read(frame, sizeof(frame), 1, &r), want); \
		n = raw_read(&r);					\
		CU_ASSERT_EQUAL(peer_decode_read(frame, n, &ro), want);	\
	} while (0)

static void test_read_rules(void)
{
	struct peer_read r, ro;
	int n;

	fill_read(&r);
	CU_ASSERT_FATAL(peer_encode_read(frame, sizeof(frame), 1, &r) > 0);

	READ_CASE(r.len = 0, -CKPT_EPROTO);
	READ_CASE(r.len = PEER_MAX_SHARD + 1, -CKPT_EPROTO);
	READ_CASE(r.len = UINT32_MAX, -CKPT_EPROTO);
	READ_CASE(r.off = (uint64_t)INT64_MAX - PEER_MAX_SHARD + 1,
		  -CKPT_EPROTO);
	READ_CASE(r.off = UINT64_MAX, -CKPT_EPROTO);
	READ_CASE(strcpy(r.path, ""), -CKPT_EBADNAME);
	READ_CASE(strcpy(r.path, "a/../b"), -CKPT_EBADNAME);
	READ_CASE(strcpy(r.path, "a//b"), -CKPT_EBADNAME);
	READ_CASE(strcpy(r.path, "/a"), -CKPT_EBADNAME);
	READ_CASE(strcpy(r.job, ".."), -CKPT_EBADNAME);
	READ_CASE(strcpy(r.version, "v/1"), -CKPT_EBADNAME);

	fill_read(&r);
	r.len = 1;
	r.off = (uint64_t)INT64_MAX - 1;
	n = peer_encode_read(frame, sizeof(frame), 1, &r);
	CU_ASSERT(n > 0);
	CU_ASSERT_EQUAL(peer_decode_read(frame, n, &ro), 0);
	CU_ASSERT_EQUAL(ro.off, (uint64_t)INT64_MAX - 1);

	/* A path of 4096 bytes: refused by its length, both ways. */
	fill_read(&r);
	memset(r.path, 'p', sizeof(r.path));
	CU_ASSERT_EQUAL(peer_encode_read(frame, sizeof(frame), 1, &r),
			-EMSGSIZE);
	{
		char longer[CKPT_PATH_MAX2 + 2];
		struct enc e;

		memset(longer, 'p', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = 0;
		raw_begin(&e, PEER_READ, 0);
		enc_str(&e, "j");
		enc_str(&e, "v");
		enc_str(&e, longer);
		enc_u64(&e, 0);
		enc_u32(&e, 1);
		n = raw_end(&e);
		CU_ASSERT_EQUAL(peer_decode_read(frame, n, &ro), -CKPT_EPROTO);
	}
}

static void test_data_rules(void)
{
	struct peer_data d, dout;
	struct peer_hdr hdr;
	uint32_t good;
	int n;

	fill_data(&d, 64);
	good = d.crc;
	n = raw_data(64, good, 64, 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), 0);
	n = raw_data(64, good ^ 1, 64, 0);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_ECORRUPT);
	data[63] ^= 1;
	n = raw_data(64, good, 64, 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_ECORRUPT);
	data[63] ^= 1;
	n = raw_data(65, good, 64, 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_EPROTO);
	n = raw_data(63, good, 64, 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_EPROTO);
	n = raw_data(UINT32_MAX, good, 64, 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_EPROTO);
	/* More bytes than a READ may ask for: refused from the header. */
	fill_data(&d, PEER_MAX_SHARD);
	n = raw_data(PEER_MAX_SHARD, d.crc, PEER_MAX_SHARD, 0);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), 0);
	n = raw_data(PEER_MAX_SHARD + 1, d.crc, PEER_MAX_SHARD + 1, 0);
	CU_ASSERT_EQUAL(peer_peek(frame, PEER_HDR_LEN, &hdr), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_EPROTO);
	d.len = PEER_MAX_SHARD + 1;
	CU_ASSERT_EQUAL(peer_encode_data(frame, sizeof(frame), 1, &d), -EINVAL);

	/* A failed READ: a bare status, which is no data. */
	n = peer_encode_status(frame, sizeof(frame), PEER_READ, 5, -ENOENT);
	CU_ASSERT_EQUAL(n, PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_READ | PEER_REPLY);
	CU_ASSERT_EQUAL(hdr.status, -ENOENT);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_EPROTO);
	/* Status 0 with no data: what peer_encode_data() is for. */
	CU_ASSERT_EQUAL(peer_encode_status(frame, sizeof(frame), PEER_READ, 5,
					   0), -EINVAL);
	CU_ASSERT_EQUAL(peer_encode_status(frame, sizeof(frame), 0, 5, -1),
			-EINVAL);
	CU_ASSERT_EQUAL(peer_encode_status(frame, sizeof(frame), PEER_NTYPES,
					   5, -1), -EINVAL);
	/* A reply of status != 0 carries nothing; nor do other replies. */
	n = raw_data(64, good, 64, -ENOENT);
	CU_ASSERT_EQUAL(peer_peek(frame, n, &hdr), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(peer_decode_data(frame, n, &dout), -CKPT_EPROTO);
	n = raw_data(64, good, 64, 1);
	CU_ASSERT_EQUAL(peer_peek(frame, n, &hdr), -CKPT_EPROTO);
	n = raw_data(0, 0, 0, 0);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	memcpy(copy, frame, n);
	reframe(copy, 7);                       /* shorter than len + crc */
	CU_ASSERT_EQUAL(peer_peek(copy, PEER_HDR_LEN, &hdr), -CKPT_EPROTO);
	reframe(copy, 0);
	CU_ASSERT_EQUAL(peer_peek(copy, PEER_HDR_LEN, &hdr), -CKPT_EPROTO);
	{
		static const uint16_t others[] = {
			PEER_AUTH | PEER_REPLY, PEER_SHARD_PUT | PEER_REPLY,
			PEER_SHARD_SEAL | PEER_REPLY, PEER_PART | PEER_REPLY,
			PEER_HELLO | PEER_REPLY,
		};
		unsigned i;

		for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
			n = raw_data(0, 0, 0, 0);
			frame[6] = (uint8_t)others[i];
			frame[7] = (uint8_t)(others[i] >> 8);
			reframe(frame, 8);
			CU_ASSERT_EQUAL(peer_peek(frame, n, &hdr),
					-CKPT_EPROTO);
			reframe(frame, 0);
			CU_ASSERT_EQUAL(peer_check(frame, PEER_HDR_LEN, &hdr),
					0);
		}
	}
}

/* A frame of the largest fields and n bytes fits PEER_FRAME_CAP(n). */
static void test_frame_cap(void)
{
	struct peer_seal s;
	struct peer_part p;
	struct peer_read r, ro;
	struct peer_data d;
	struct peer_shard sh;
	int i, n;

	CU_ASSERT(PEER_FRAME_CAP(PEER_MAX_MAN) <=
		  PEER_HDR_LEN + PEER_MAX_PAYLOAD);
	fill_seal(&s);
	memset(s.owner, 'o', PLACE_NAME_MAX);
	s.owner[PLACE_NAME_MAX] = 0;
	memset(s.job, 'j', CKPT_JOB_MAX);
	s.job[CKPT_JOB_MAX] = 0;
	memset(s.version, 'v', CKPT_VERSION_MAX);
	s.version[CKPT_VERSION_MAX] = 0;
	s.manlen = PEER_MAX_MAN;
	s.man = frame;          /* any bytes: copy's */
	CU_ASSERT(peer_encode_seal(copy, PEER_FRAME_CAP(PEER_MAX_MAN), 1, &s)
		  > (int)PEER_MAX_MAN);

	fill_part(&p);
	memcpy(p.owner, s.owner, sizeof(p.owner));
	memcpy(p.job, s.job, sizeof(p.job));
	memcpy(p.version, s.version, sizeof(p.version));
	p.manlen = PEER_MAX_MAN;
	p.man = frame;
	CU_ASSERT(peer_encode_part(copy, PEER_FRAME_CAP(PEER_MAX_MAN), 1, &p)
		  > (int)PEER_MAX_MAN);

	fill_read(&r);
	memcpy(r.job, s.job, sizeof(r.job));
	memcpy(r.version, s.version, sizeof(r.version));
	for (i = 0; i < CKPT_PATH_MAX; i++)
		r.path[i] = i % 2 ? '/' : 'p';
	r.path[CKPT_PATH_MAX - 1] = 'p';
	r.path[CKPT_PATH_MAX] = 0;
	n = peer_encode_read(copy, PEER_FRAME_CAP(0), 1, &r);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_decode_read(copy, n, &ro), 0);
	CU_ASSERT_EQUAL(strlen(ro.path), CKPT_PATH_MAX);

	fill_data(&d, PEER_MAX_SHARD);
	CU_ASSERT(peer_encode_data(copy, PEER_FRAME_CAP(PEER_MAX_SHARD), 1, &d)
		  > 0);
	fill_shard(&sh, PEER_MAX_SHARD);
	memcpy(sh.owner, s.owner, sizeof(sh.owner));
	memcpy(sh.job, s.job, sizeof(sh.job));
	memcpy(sh.version, s.version, sizeof(sh.version));
	CU_ASSERT(peer_encode_shard(copy, PEER_FRAME_CAP(PEER_MAX_SHARD), 1,
				    &sh) > 0);
}

/* Garbage in frames of the new types, CRCs fixed or not: every decoder. */
static void test_new_garbage(void)
{
	struct peer_seal s;
	struct peer_part p;
	struct peer_read r;
	struct peer_data d;
	struct peer_hdr hdr;
	unsigned i, j, t, len, accepted = 0;
	static uint8_t base[4][8192];
	int n[4];

	srand(4343);
	for (t = 0; t < 4; t++) {
		n[t] = new_frame(t, base[t], sizeof(base[t]));
		CU_ASSERT_FATAL(n[t] > 0);
	}
	for (i = 0; i < 100000; i++) {
		t = i % 4;
		len = (unsigned)n[t];
		memcpy(frame, base[t], len);
		for (j = 0; j < 1 + (unsigned)rand() % 4; j++)
			frame[rand() % len] = (uint8_t)rand();
		if (rand() % 4 == 0)
			len -= (unsigned)rand() % (len - PEER_HDR_LEN + 1);
		if (rand() % 2)
			reframe(frame, len - PEER_HDR_LEN);
		if (peer_check(frame, len, &hdr))
			continue;
		accepted++;
		if (!peer_decode_seal(frame, len, &s))
			CU_ASSERT(s.man + s.manlen == frame + len);
		if (!peer_decode_part(frame, len, &p))
			CU_ASSERT(p.man + p.manlen == frame + len);
		if (!peer_decode_read(frame, len, &r))
			CU_ASSERT(r.len && r.len <= PEER_MAX_SHARD);
		if (!peer_decode_data(frame, len, &d))
			CU_ASSERT(d.data + d.len == frame + len);
	}
	CU_ASSERT(accepted > 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "new_round_trip", test_new_round_trip },
		{ "new_damage", test_new_damage },
		{ "seal_rules", test_seal_rules },
		{ "part_rules", test_part_rules },
		{ "read_rules", test_read_rules },
		{ "data_rules", test_data_rules },
		{ "frame_cap", test_frame_cap },
		{ "new_garbage", test_new_garbage },
		{ NULL, NULL }
	};

	return unit_run("peer_parts", tests);
}
