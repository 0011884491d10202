/*
 * peer_test.h - what test_peer.c and test_peer_parts.c share: frame
 * buffers, a SHARD_PUT filled with known fields, and reframe(), which makes
 * a hand-made frame's header agree with its payload.  Header-only: each
 * tests/unit/test_X.c is its own binary.
 */
#ifndef CKPT_TESTS_PEER_TEST_H
#define CKPT_TESTS_PEER_TEST_H

#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "peer.h"

#define FRAME_MAX (PEER_HDR_LEN + PEER_MAX_PAYLOAD)

/* data holds a manifest too long by a byte, for the decoders to refuse. */
static uint8_t frame[FRAME_MAX], copy[FRAME_MAX], data[PEER_MAX_MAN + 1];

static inline void fill_shard(struct peer_shard *s, uint32_t len)
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

/* Make the header of a frame of plen payload bytes agree: len, both CRCs. */
static inline int reframe(uint8_t *f, size_t plen)
{
	put_le32(f + 8, (uint32_t)plen);
	put_le32(f + 28, crc32c(f + PEER_HDR_LEN, plen));
	put_le32(f + 24, crc32c(f, 24));
	return (int)(PEER_HDR_LEN + plen);
}

#endif
