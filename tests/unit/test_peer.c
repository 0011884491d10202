/*
 * test_peer.c - unit tests for lib/peer: frames between nodes, and their
 * authentication.
 *
 * Every type round-trips field by field; every cut of a frame, every
 * changed header byte and every changed payload byte is refused; shard
 * fields out of range and shard bytes that fail their CRC are refused;
 * SHARD_PUT's trailing total is optional, comes back, and a hostile one is
 * refused; the
 * proofs of the handshake differ with the role, either nonce, either name
 * and the key, and a name boundary cannot be moved; the key file is refused
 * when others may read it.  Then 100k garbage frames.  SHARD_SEAL, PART,
 * READ and READ's data reply are test_peer_parts.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "crc32c.h"
#include "peer.h"
#include "peer_test.h"
#include "unit.h"

static void test_round_trip(void)
{
	struct peer_hello h, ho;
	struct peer_auth a, ao;
	struct peer_shard s, so;
	struct peer_hdr hdr;
	int n, i;

	memset(&h, 0, sizeof(h));
	strcpy(h.name, "n1");
	for (i = 0; i < PEER_NONCE_LEN; i++)
		h.nonce[i] = (uint8_t)i;
	n = peer_encode_hello(frame, sizeof(frame), PEER_HELLO, 7, &h);
	CU_ASSERT_FATAL(n > PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_HELLO);
	CU_ASSERT_EQUAL(hdr.seq, 7);
	CU_ASSERT_EQUAL(peer_decode_hello(frame, n, &ho), 0);
	CU_ASSERT_STRING_EQUAL(ho.name, "n1");
	CU_ASSERT(!memcmp(ho.nonce, h.nonce, PEER_NONCE_LEN));

	for (i = 0; i < PEER_PROOF_LEN; i++)
		h.proof[i] = (uint8_t)(200 - i);
	n = peer_encode_hello(frame, sizeof(frame), PEER_CHALLENGE, 8, &h);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_hello(frame, n, &ho), 0);
	CU_ASSERT(!memcmp(ho.proof, h.proof, PEER_PROOF_LEN));
	CU_ASSERT_EQUAL(peer_decode_auth(frame, n, &ao), -CKPT_EPROTO);

	memcpy(a.proof, h.proof, PEER_PROOF_LEN);
	n = peer_encode_auth(frame, sizeof(frame), 9, &a);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_auth(frame, n, &ao), 0);
	CU_ASSERT(!memcmp(ao.proof, a.proof, PEER_PROOF_LEN));

	fill_shard(&s, 100000);
	n = peer_encode_shard(frame, sizeof(frame), 10, &s);
	CU_ASSERT_FATAL(n == PEER_HDR_LEN + (int)(n - PEER_HDR_LEN));
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL_FATAL(peer_decode_shard(frame, n, &so), 0);
	CU_ASSERT_STRING_EQUAL(so.owner, "gpu007");
	CU_ASSERT_STRING_EQUAL(so.job, "llama/run3");
	CU_ASSERT_STRING_EQUAL(so.version, "step-1200");
	CU_ASSERT_EQUAL(so.seq, 42);
	CU_ASSERT_EQUAL(so.open_id, s.open_id);
	CU_ASSERT_EQUAL(so.k, 4);
	CU_ASSERT_EQUAL(so.m, 2);
	CU_ASSERT_EQUAL(so.shard, 5);
	CU_ASSERT_EQUAL(so.stripe, 9);
	CU_ASSERT_EQUAL(so.off, 1 << 20);
	CU_ASSERT_EQUAL(so.len, 100000);
	CU_ASSERT(so.data > frame && so.data < frame + n);
	CU_ASSERT(!memcmp(so.data, data, 100000));

	n = peer_encode_status(frame, sizeof(frame), PEER_SHARD_PUT, 10,
			       -ENOSPC);
	CU_ASSERT_EQUAL(n, PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_SHARD_PUT | PEER_REPLY);
	CU_ASSERT_EQUAL(hdr.status, -ENOSPC);
	CU_ASSERT_EQUAL(peer_encode_status(frame, sizeof(frame), PEER_AUTH, 1,
					   5), -EINVAL);
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_SHARD_PUT), "SHARD_PUT");
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_SHARD_SEAL), "SHARD_SEAL");
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_PART), "PART");
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_READ), "READ");
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_READ | PEER_REPLY), "READ");
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_SYNC), "SYNC");
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_NTYPES), "?");
	CU_ASSERT_STRING_EQUAL(peer_type_name(0), "?");
	CU_ASSERT_STRING_EQUAL(peer_type_name(999), "?");
}

/* Every cut, every header byte and every payload byte changed: refused. */
/* SYNC: the owner's name, checked; nothing else. */
static void test_sync(void)
{
	uint8_t fr[512];
	char owner[PLACE_NAME_MAX + 1];
	struct peer_hdr hdr;
	int n, i;

	n = peer_encode_sync(fr, sizeof(fr), 7, "gpu-017");
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_SYNC);
	CU_ASSERT_EQUAL(peer_decode_sync(fr, n, owner), 0);
	CU_ASSERT_STRING_EQUAL(owner, "gpu-017");
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(peer_decode_sync(fr, i, owner), 0);
	CU_ASSERT_EQUAL(peer_encode_sync(fr, sizeof(fr), 7, ""), -EINVAL);
	CU_ASSERT(peer_encode_sync(fr, 8, 7, "n1") < 0);
	n = peer_encode_sync(fr, sizeof(fr), 7, "a/b");
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_decode_sync(fr, n, owner), -CKPT_EBADNAME);
	n = peer_encode_hello(fr, sizeof(fr), PEER_HELLO, 1,
			      &(struct peer_hello){ .name = "n1" });
	CU_ASSERT_EQUAL(peer_decode_sync(fr, n, owner), -CKPT_EPROTO);
}

/* SHARD_GET and its data reply. */
static void test_sget(void)
{
	struct peer_sget g = { .owner = "n5", .open_id = 0x1234, .shard = 3,
			       .stripe = 77 }, go;
	uint8_t fr[512], bytes[100];
	struct peer_data pd = { sizeof(bytes), 0, bytes }, po;
	struct peer_hdr hdr;
	int n, i;

	memset(bytes, 0xab, sizeof(bytes));
	pd.crc = crc32c(bytes, sizeof(bytes));
	n = peer_encode_sget(fr, sizeof(fr), 9, &g);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_sget(fr, n, &go), 0);
	CU_ASSERT_STRING_EQUAL(go.owner, "n5");
	CU_ASSERT_EQUAL(go.open_id, 0x1234);
	CU_ASSERT_EQUAL(go.shard, 3);
	CU_ASSERT_EQUAL(go.stripe, 77);
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(peer_decode_sget(fr, i, &go), 0);
	g.shard = 0;
	CU_ASSERT_EQUAL(peer_encode_sget(fr, sizeof(fr), 9, &g), -EINVAL);
	g.shard = 32;
	CU_ASSERT_EQUAL(peer_encode_sget(fr, sizeof(fr), 9, &g), -EINVAL);
	g.shard = 1;
	g.stripe = (uint64_t)INT64_MAX + 1;
	CU_ASSERT_EQUAL(peer_encode_sget(fr, sizeof(fr), 9, &g), -EINVAL);
	/* Its reply carries data; READ's decoder will not take it. */
	n = peer_encode_data_for(fr, sizeof(fr), PEER_SHARD_GET, 9, &pd);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_SHARD_GET | PEER_REPLY);
	CU_ASSERT_EQUAL(peer_decode_data_for(fr, n, PEER_SHARD_GET, &po), 0);
	CU_ASSERT_EQUAL(po.len, sizeof(bytes));
	CU_ASSERT_NOT_EQUAL(peer_decode_data(fr, n, &po), 0);
	CU_ASSERT_EQUAL(peer_encode_data_for(fr, sizeof(fr), PEER_PART, 9, &pd),
			-EINVAL);
	/* A byte of the data flipped: the frame's CRC (over every byte it
	 * carries) refuses it; the decoder trusts that check, not a second
	 * pass over the data. */
	fr[n - 1] ^= 1;
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), -CKPT_ECORRUPT);
	fr[n - 1] ^= 1;
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	/* The data's crc field wrong, the frame's CRC made to match: the
	 * decoder refuses it. */
	put_le32(fr + PEER_HDR_LEN + 4, get_le32(fr + PEER_HDR_LEN + 4) ^ 1);
	reframe(fr, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_data_for(fr, n, PEER_SHARD_GET, &po),
			-CKPT_ECORRUPT);
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_SHARD_GET), "SHARD_GET");
}

/* A data reply whose bytes were put at PEER_DATA_AT first is the same
 * frame as one encoded from a copy, and decodes to them there. */
static void test_data_in_place(void)
{
	uint8_t a[PEER_FRAME_CAP(300)], b[PEER_FRAME_CAP(300)], bytes[300];
	struct peer_data pd = { sizeof(bytes), 0, bytes }, po;
	struct peer_hdr hdr;
	int na, nb;

	for (na = 0; na < (int)sizeof(bytes); na++)
		bytes[na] = (uint8_t)(na * 7 + 1);
	pd.crc = crc32c(bytes, sizeof(bytes));
	na = peer_encode_data(a, sizeof(a), 5, &pd);
	CU_ASSERT_FATAL(na > 0);
	memset(b, 0x5a, sizeof(b));
	memcpy(b + PEER_DATA_AT, bytes, sizeof(bytes));
	pd.data = b + PEER_DATA_AT;
	nb = peer_encode_data(b, sizeof(b), 5, &pd);
	CU_ASSERT_EQUAL_FATAL(nb, na);
	CU_ASSERT(memcmp(a, b, (size_t)na) == 0);
	CU_ASSERT_EQUAL(peer_check(b, nb, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_data(b, nb, &po), 0);
	CU_ASSERT_PTR_EQUAL(po.data, b + PEER_DATA_AT);
	CU_ASSERT(memcmp(po.data, bytes, sizeof(bytes)) == 0);
}

/* HELD: a cursor (shard 0 allowed, stripe must be 0), and a reply that may
 * carry more than a shard's worth of bytes (a shardmeta record). */
static void test_held(void)
{
	struct peer_sget g = { .owner = "n2", .open_id = 0x99, .shard = 0 }, go;
	size_t cap = PEER_FRAME_CAP(PEER_MAX_SHARD + 4096);
	uint8_t fr[512], *big = malloc(cap), *bytes = calloc(1, PEER_MAX_SHARD + 100);
	struct peer_data pd = { PEER_MAX_SHARD + 100, 0, bytes }, po;
	struct peer_hdr hdr;
	int n;

	CU_ASSERT_FATAL(big && bytes);
	pd.crc = crc32c(bytes, pd.len);
	n = peer_encode_held(fr, sizeof(fr), 4, &g);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_HELD);
	CU_ASSERT_EQUAL(peer_decode_held(fr, n, &go), 0);
	CU_ASSERT_STRING_EQUAL(go.owner, "n2");
	CU_ASSERT_EQUAL(go.open_id, 0x99);
	CU_ASSERT_EQUAL(go.shard, 0);
	/* Not a SHARD_GET, and the reverse. */
	CU_ASSERT_NOT_EQUAL(peer_decode_sget(fr, n, &go), 0);
	g.stripe = 1;
	CU_ASSERT_EQUAL(peer_encode_held(fr, sizeof(fr), 4, &g), -EINVAL);
	g.stripe = 0;
	g.shard = 32;
	CU_ASSERT_EQUAL(peer_encode_held(fr, sizeof(fr), 4, &g), -EINVAL);
	/* A reply past PEER_MAX_SHARD is HELD's only. */
	n = peer_encode_data_for(big, cap, PEER_HELD, 4, &pd);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_check(big, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_decode_data_for(big, n, PEER_HELD, &po), 0);
	CU_ASSERT_EQUAL(po.len, PEER_MAX_SHARD + 100);
	CU_ASSERT_EQUAL(peer_encode_data_for(big, cap, PEER_SHARD_GET, 4, &pd),
			-EINVAL);
	/* The same bytes labelled a SHARD_GET reply fail the header check. */
	big[6] = PEER_SHARD_GET & 0xff;
	CU_ASSERT_NOT_EQUAL(peer_check(big, n, &hdr), 0);
	CU_ASSERT_EQUAL(peer_encode_status(fr, sizeof(fr), PEER_HELD, 4, 0),
			-EINVAL);
	n = peer_encode_status(fr, sizeof(fr), PEER_HELD, 4, -ENOENT);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.status, -ENOENT);
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_HELD), "HELD");
	free(big);
	free(bytes);
}

static void test_damage(void)
{
	struct peer_shard s, so;
	struct peer_hdr hdr;
	int n, i, bit;

	fill_shard(&s, 300);
	n = peer_encode_shard(frame, sizeof(frame), 1, &s);
	CU_ASSERT_FATAL(n > 0);
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(peer_check(frame, i, &hdr), 0);
	CU_ASSERT_NOT_EQUAL(peer_check(frame, n + 1, &hdr), 0);
	for (i = 0; i < n; i++) {
		for (bit = 0; bit < 8; bit += 3) {
			memcpy(copy, frame, n);
			copy[i] ^= (uint8_t)(1 << bit);
			CU_ASSERT_NOT_EQUAL(peer_check(copy, n, &hdr), 0);
		}
	}
	/* The header alone is trusted before the payload is in. */
	CU_ASSERT_EQUAL(peer_peek(frame, PEER_HDR_LEN, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.len, (uint32_t)(n - PEER_HDR_LEN));
	/* A flag set, or a request with a status: refused, CRC or not. */
	memcpy(copy, frame, n);
	put_le32(copy + 20, 1);
	put_le32(copy + 24, crc32c(copy, 24));
	CU_ASSERT_EQUAL(peer_peek(copy, n, &hdr), -CKPT_EPROTO);
	memcpy(copy, frame, n);
	put_le32(copy + 16, (uint32_t)-5);
	put_le32(copy + 24, crc32c(copy, 24));
	CU_ASSERT_EQUAL(peer_peek(copy, n, &hdr), -CKPT_EPROTO);
	/* An oversized length with a good header CRC. */
	memcpy(copy, frame, n);
	put_le32(copy + 8, PEER_MAX_PAYLOAD + 1);
	put_le32(copy + 24, crc32c(copy, 24));
	CU_ASSERT_EQUAL(peer_peek(copy, n, &hdr), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), 0);
}

/* Re-encode a SHARD_PUT with fields put by hand (payload CRC fixed). */
static int raw_shard(uint32_t k, uint32_t m, uint32_t shard, uint32_t len,
		     uint32_t carried, uint32_t crc, const char *job)
{
	struct enc e;

	enc_init(&e, frame, sizeof(frame));
	enc_u32(&e, PEER_MAGIC);
	enc_u16(&e, PEER_VERSION);
	enc_u16(&e, PEER_SHARD_PUT);
	for (int i = 0; i < 6; i++)
		enc_u32(&e, 0);
	enc_str(&e, "n1");
	enc_str(&e, job);
	enc_str(&e, "v1");
	enc_u64(&e, 1);
	enc_u64(&e, 2);
	enc_u32(&e, k);
	enc_u32(&e, m);
	enc_u32(&e, shard);
	enc_u64(&e, 0);
	enc_u64(&e, 0);
	enc_u32(&e, len);
	enc_u32(&e, crc);
	enc_bytes(&e, data, carried);
	put_le32(frame + 8, (uint32_t)(e.len - PEER_HDR_LEN));
	put_le32(frame + 28, crc32c(frame + PEER_HDR_LEN, e.len - PEER_HDR_LEN));
	put_le32(frame + 24, crc32c(frame, 24));
	return (int)e.len;
}

static void test_shard_rules(void)
{
	struct peer_shard s;
	uint32_t good;
	int n;

	fill_shard(&s, 64);
	good = s.crc;
	n = raw_shard(4, 2, 1, 64, 64, good, "j");
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), 0);
	n = raw_shard(4, 2, 0, 64, 64, good, "j");        /* shard 0 */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(4, 2, 6, 64, 64, good, "j");        /* = k+m */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(30, 3, 1, 64, 64, good, "j");       /* k+m > 32 */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(0, 2, 1, 64, 64, good, "j");
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(UINT32_MAX - 1, 8, 5, 64, 64, good, "j"); /* k+m wraps */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(4, 2, 1, 65, 64, good, "j");        /* len > carried */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(4, 2, 1, 63, 64, good, "j");        /* len < carried */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EPROTO);
	n = raw_shard(4, 2, 1, 64, 64, good ^ 1, "j");    /* shard CRC */
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_ECORRUPT);
	n = raw_shard(4, 2, 1, 64, 64, good, "../j");
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &s), -CKPT_EBADNAME);

	fill_shard(&s, 64);
	s.shard = 6;
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 1, &s), -EINVAL);
	fill_shard(&s, 64);
	s.len = PEER_MAX_SHARD + 1;
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 1, &s), -EINVAL);
	fill_shard(&s, 64);
	CU_ASSERT_EQUAL(peer_encode_shard(frame, 100, 1, &s), -EMSGSIZE);
}

/* SHARD_PUT's total: a trailing u64 after the shard bytes, sent only when
 * not 0.  Frames without it still decode (total 0); with it, it comes back;
 * a total the chunk does not fit in, one past an off_t, or a sent 0, is
 * refused by both sides; extra bytes that are not a whole total are not one. */
static void test_shard_total(void)
{
	struct peer_shard s, so;
	struct peer_hdr hdr;
	int n, n0;

	/* Without: the frame is byte for byte what it was before total. */
	fill_shard(&s, 4096);
	n0 = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_FATAL(n0 > 0);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n0, &so), 0);
	CU_ASSERT_EQUAL(so.total, 0);
	CU_ASSERT(!memcmp(so.data, data, 4096));

	/* With: 8 bytes more, total back, the data still where it was. */
	s.total = 3 * (1 << 20);
	n = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_EQUAL_FATAL(n, n0 + 8);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL_FATAL(peer_decode_shard(frame, n, &so), 0);
	CU_ASSERT_EQUAL(so.total, 3 * (1 << 20));
	CU_ASSERT_EQUAL(so.len, 4096);
	CU_ASSERT_EQUAL(so.off, 1 << 20);
	CU_ASSERT(so.data + so.len + 8 == frame + n);
	CU_ASSERT(!memcmp(so.data, data, 4096));
	CU_ASSERT_EQUAL(get_le64(frame + n - 8), 3 * (1 << 20));

	/* Exactly the chunk's end: good; one byte short: refused. */
	s.total = s.off + s.len;
	n = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), 0);
	CU_ASSERT_EQUAL(so.total, s.off + s.len);
	s.total = s.off + s.len - 1;
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 7, &s), -EINVAL);
	s.total = 1;              /* smaller than off */
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 7, &s), -EINVAL);
	s.total = (uint64_t)INT64_MAX + 1;
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 7, &s), -EINVAL);
	s.total = UINT64_MAX;
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 7, &s), -EINVAL);
	s.total = INT64_MAX;      /* huge, but a size: decodes (the holder
				   * refuses it for room) */
	n = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), 0);
	CU_ASSERT_EQUAL(so.total, (uint64_t)INT64_MAX);
	/* An offset so large that off + len would wrap, with a total. */
	s.off = UINT64_MAX - 10;
	CU_ASSERT_EQUAL(peer_encode_shard(frame, sizeof(frame), 7, &s), -EINVAL);

	/* Hostile totals put by hand (CRCs fixed): the decoder refuses. */
	fill_shard(&s, 4096);
	s.total = 8 << 20;
	n = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_FATAL(n > 0);
	put_le64(frame + n - 8, s.off + s.len - 1);     /* short of the chunk */
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), -CKPT_EPROTO);
	put_le64(frame + n - 8, 0);                     /* a sent 0 */
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), -CKPT_EPROTO);
	put_le64(frame + n - 8, UINT64_MAX);            /* past an off_t */
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), -CKPT_EPROTO);
	put_le64(frame + n - 8, (uint64_t)INT64_MAX + 1);
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), -CKPT_EPROTO);
	put_le64(frame + n - 8, 8 << 20);               /* put back: good */
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), 0);
	/* A huge offset and a total that wraps it: refused, not wrapped. */
	fill_shard(&s, 64);
	s.total = 1 << 20;
	s.off = 0;
	n = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_FATAL(n > 0);
	/* off is the u64 before len and crc: 16 bytes before the data. */
	put_le64(frame + n - 8 - 64 - 16, UINT64_MAX - 10);
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), -CKPT_EPROTO);
	/* Anything but 0 or 8 bytes after the data is no total: refused. */
	for (int extra = 1; extra < 16; extra++) {
		if (extra == 8)
			continue;
		fill_shard(&s, 64);
		n = peer_encode_shard(frame, sizeof(frame), 7, &s);
		CU_ASSERT_FATAL(n > 0);
		memset(frame + n, 0x11, (size_t)extra);
		n = reframe(frame, (size_t)n + (size_t)extra - PEER_HDR_LEN);
		CU_ASSERT_EQUAL(peer_decode_shard(frame, n, &so), -CKPT_EPROTO);
	}
	/* len 8 short of the bytes carried: the last 8 read as a total,
	 * and what is left fails its CRC (or the total its rule). */
	fill_shard(&s, 72);
	n = peer_encode_shard(frame, sizeof(frame), 7, &s);
	CU_ASSERT_FATAL(n > 0);
	put_le32(frame + n - 72 - 8, 64);               /* len 64 of 72 */
	reframe(frame, (size_t)n - PEER_HDR_LEN);
	CU_ASSERT_NOT_EQUAL(peer_decode_shard(frame, n, &so), 0);
}

/* PING (11): a bare header; its reply a status.  A PING with a payload is
 * refused, and so is a HELD reply of status 0 with no data. */
static void test_ping(void)
{
	uint8_t fr[256];
	struct peer_hdr hdr;
	int n, i;

	CU_ASSERT_EQUAL(PEER_HELD, 10);
	CU_ASSERT_EQUAL(PEER_PING, 11);
	CU_ASSERT_EQUAL(PEER_VERSION, 7);
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_PING), "PING");
	n = peer_encode_ping(fr, sizeof(fr), 42);
	CU_ASSERT_EQUAL_FATAL(n, PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_PING);
	CU_ASSERT_EQUAL(hdr.seq, 42);
	CU_ASSERT_EQUAL(hdr.len, 0);
	CU_ASSERT_EQUAL(hdr.version, PEER_VERSION);
	for (i = 0; i < n; i++)
		CU_ASSERT_NOT_EQUAL(peer_check(fr, i, &hdr), 0);
	CU_ASSERT(peer_encode_ping(fr, PEER_HDR_LEN - 1, 1) < 0);
	/* The reply: a status, 0 or an error, never a payload. */
	n = peer_encode_status(fr, sizeof(fr), PEER_PING, 42, 0);
	CU_ASSERT_EQUAL_FATAL(n, PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_PING | PEER_REPLY);
	CU_ASSERT_EQUAL(hdr.status, 0);
	n = peer_encode_status(fr, sizeof(fr), PEER_PING, 43, -EBUSY);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.status, -EBUSY);
	/* A PING that carries bytes is refused, and a bare HELD reply. */
	n = peer_encode_ping(fr, sizeof(fr), 7);
	fr[PEER_HDR_LEN] = 0x5a;
	reframe(fr, 1);
	CU_ASSERT_EQUAL(peer_check(fr, PEER_HDR_LEN + 1, &hdr), -CKPT_EPROTO);
	n = peer_encode_ping(fr, sizeof(fr), 7);
	fr[6] = PEER_HELD;
	fr[7] = PEER_REPLY >> 8;
	reframe(fr, 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(peer_encode_status(fr, sizeof(fr), PEER_HELD, 1, 0),
			-EINVAL);
	/* A frame of the last version is refused. */
	n = peer_encode_ping(fr, sizeof(fr), 7);
	fr[4] = 4;
	reframe(fr, 0);
	CU_ASSERT_EQUAL(peer_check(fr, n, &hdr), -CKPT_EVERSION);
}

static void test_proof(void)
{
	uint8_t key[40], key2[40], cn[PEER_NONCE_LEN], an[PEER_NONCE_LEN];
	uint8_t p[PEER_PROOF_LEN], q[PEER_PROOF_LEN];

	memset(key, 'k', sizeof(key));
	memcpy(key2, key, sizeof(key));
	key2[39] ^= 1;
	CU_ASSERT_EQUAL(peer_nonce(cn), 0);
	CU_ASSERT_EQUAL(peer_nonce(an), 0);
	CU_ASSERT(memcmp(cn, an, PEER_NONCE_LEN) != 0);
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'C', cn, an, "ab", "c", p), 0);
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'C', cn, an, "ab", "c", q), 0);
	CU_ASSERT(peer_proof_ok(p, q));
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'A', cn, an, "ab", "c", q), 0);
	CU_ASSERT(!peer_proof_ok(p, q));
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'C', an, cn, "ab", "c", q), 0);
	CU_ASSERT(!peer_proof_ok(p, q));
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'C', cn, an, "a", "bc", q), 0);
	CU_ASSERT(!peer_proof_ok(p, q));
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'C', cn, an, "ab", "d", q), 0);
	CU_ASSERT(!peer_proof_ok(p, q));
	CU_ASSERT_EQUAL(peer_proof(key2, 40, 'C', cn, an, "ab", "c", q), 0);
	CU_ASSERT(!peer_proof_ok(p, q));
	CU_ASSERT_EQUAL(peer_proof(key, 31, 'C', cn, an, "ab", "c", q), -EINVAL);
	CU_ASSERT_EQUAL(peer_proof(key, 40, 'X', cn, an, "ab", "c", q), -EINVAL);
}

static void write_file(const char *path, size_t len, mode_t mode)
{
	FILE *f = fopen(path, "w");
	size_t i;

	CU_ASSERT_FATAL(f != NULL);
	for (i = 0; i < len; i++)
		fputc('a' + (int)(i % 26), f);
	fclose(f);
	CU_ASSERT_EQUAL(chmod(path, mode), 0);
}

static void test_key_file(void)
{
	char dir[] = "/tmp/test_peer.XXXXXX", path[64], link[64];
	uint8_t key[PEER_KEY_MAX];
	size_t len = 0;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/key", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	write_file(path, 64, 0600);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), 0);
	CU_ASSERT_EQUAL(len, 64);
	CU_ASSERT_EQUAL(key[1], 'b');
	CU_ASSERT_EQUAL(chmod(path, 0640), 0);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), -EPERM);
	CU_ASSERT_EQUAL(chmod(path, 0604), 0);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), -EPERM);
	CU_ASSERT_EQUAL(chmod(path, 0400), 0);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), 0);
	CU_ASSERT_EQUAL(symlink(path, link), 0);
	CU_ASSERT_EQUAL(peer_key_load(link, key, &len), -ELOOP);
	unlink(path);
	write_file(path, 31, 0600);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), -EINVAL);
	unlink(path);
	write_file(path, PEER_KEY_MAX + 1, 0600);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), -EINVAL);
	unlink(path);
	CU_ASSERT_EQUAL(peer_key_load(path, key, &len), -ENOENT);
	CU_ASSERT_EQUAL(peer_key_load(dir, key, &len), -EPERM);
	unlink(link);
	rmdir(dir);
}

static void test_garbage(void)
{
	struct peer_hello h;
	struct peer_auth a;
	struct peer_shard s;
	struct peer_hdr hdr;
	unsigned i, j, len, accepted = 0;
	int n;

	srand(4242);
	fill_shard(&s, 40);
	n = peer_encode_shard(copy, sizeof(copy), 3, &s);
	CU_ASSERT_FATAL(n > 0);
	for (i = 0; i < 100000; i++) {
		len = (unsigned)n;
		memcpy(frame, copy, len);
		for (j = 0; j < 1 + (unsigned)rand() % 4; j++)
			frame[rand() % len] = (uint8_t)rand();
		if (rand() % 2) {       /* CRCs fixed: the decoders see it */
			put_le32(frame + 28, crc32c(frame + PEER_HDR_LEN,
						    len - PEER_HDR_LEN));
			put_le32(frame + 24, crc32c(frame, 24));
		}
		if (peer_check(frame, len, &hdr))
			continue;
		accepted++;
		(void)peer_decode_hello(frame, len, &h);
		(void)peer_decode_auth(frame, len, &a);
		(void)peer_decode_shard(frame, len, &s);
	}
	CU_ASSERT(accepted > 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "sync", test_sync },
		{ "sget", test_sget },
		{ "data_in_place", test_data_in_place },
		{ "held", test_held },
		{ "ping", test_ping },
		{ "damage", test_damage },
		{ "shard_rules", test_shard_rules },
		{ "shard_total", test_shard_total },
		{ "proof", test_proof },
		{ "key_file", test_key_file },
		{ "garbage", test_garbage },
		{ NULL, NULL }
	};

	return unit_run("peer", tests);
}
