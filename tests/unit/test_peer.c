/*
 * test_peer.c - unit tests for lib/peer: frames between nodes, and their
 * authentication.
 *
 * Every type round-trips field by field; every cut of a frame, every
 * changed header byte and every changed payload byte is refused; shard
 * fields out of range and shard bytes that fail their CRC are refused; the
 * proofs of the handshake differ with the role, either nonce, either name
 * and the key, and a name boundary cannot be moved; the key file is refused
 * when others may read it.  Then 100k garbage frames.
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
#include "unit.h"

#define FRAME_MAX (PEER_HDR_LEN + PEER_MAX_PAYLOAD)

static uint8_t frame[FRAME_MAX], copy[FRAME_MAX], data[PEER_MAX_SHARD];

static void fill_shard(struct peer_shard *s, uint32_t len)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	strcpy(s->owner, "gpu007");
	strcpy(s->job, "llama/run3");
	strcpy(s->version, "step-1200");
	s->seq = 42;
	s->open_id = 0x1122334455667788ull;
	s->k = 4;
	s->m = 2;
	s->shard = 5;
	s->stripe = 9;
	s->off = 1 << 20;
	s->len = len;
	for (i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 31 + 7);
	s->crc = crc32c(data, len);
	s->data = data;
}

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

	n = peer_encode_status(frame, sizeof(frame), PEER_SHARD_ACK, 10,
			       -ENOSPC);
	CU_ASSERT_EQUAL(n, PEER_HDR_LEN);
	CU_ASSERT_EQUAL(peer_check(frame, n, &hdr), 0);
	CU_ASSERT_EQUAL(hdr.type, PEER_SHARD_ACK | PEER_REPLY);
	CU_ASSERT_EQUAL(hdr.status, -ENOSPC);
	CU_ASSERT_EQUAL(peer_encode_status(frame, sizeof(frame), PEER_AUTH, 1,
					   5), -EINVAL);
	CU_ASSERT_STRING_EQUAL(peer_type_name(PEER_SHARD_PUT), "SHARD_PUT");
	CU_ASSERT_STRING_EQUAL(peer_type_name(999), "?");
}

/* Every cut, every header byte and every payload byte changed: refused. */
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
		{ "damage", test_damage },
		{ "shard_rules", test_shard_rules },
		{ "proof", test_proof },
		{ "key_file", test_key_file },
		{ "garbage", test_garbage },
		{ NULL, NULL }
	};

	return unit_run("peer", tests);
}
