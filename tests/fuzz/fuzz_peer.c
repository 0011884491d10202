/*
 * fuzz_peer.c - libFuzzer harness for the peer frame decoders.  Each input
 * is checked as it is, then again with its header's len and both CRCs made
 * to agree, so that mutations reach the per-type decoders behind them.
 * What a decoder accepts must hold its contract (the view inside the frame,
 * the ranges of peer.h): a breach aborts.
 *
 * fuzz-sources: lib/peer.c lib/codec.c lib/crc32c.c lib/names.c lib/xattr.c
 * fuzz-libs: -lsodium
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "peer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_one(const uint8_t *f, size_t len)
{
	struct peer_hello h;
	struct peer_auth a;
	struct peer_shard s;
	struct peer_seal se;
	struct peer_part pa;
	struct peer_read rd;
	struct peer_data da;
	struct peer_sget sg;
	struct peer_hdr hdr;

	if (peer_check(f, len, &hdr))
		return;
	switch (hdr.type) {
	case PEER_HELLO:
	case PEER_CHALLENGE:
		(void)peer_decode_hello(f, len, &h);
		break;
	case PEER_AUTH:
		(void)peer_decode_auth(f, len, &a);
		break;
	case PEER_SHARD_PUT:
		if (peer_decode_shard(f, len, &s) == 0 && s.len)
			(void)crc32c(s.data, s.len);   /* in bounds */
		break;
	case PEER_SHARD_SEAL:
		if (peer_decode_seal(f, len, &se) == 0) {
			if (se.man + se.manlen != f + len || !se.manlen ||
			    se.k + se.m > 32 || se.chunk % 4096 ||
			    se.nstripes * se.k * se.chunk > INT64_MAX)
				abort();
			(void)crc32c(se.man, se.manlen);
		}
		break;
	case PEER_PART:
		if (peer_decode_part(f, len, &pa) == 0) {
			if (pa.man + pa.manlen != f + len ||
			    pa.nparts < 1 || pa.state > CKPT_ST_DAMAGED)
				abort();
			(void)crc32c(pa.man, pa.manlen);
		}
		break;
	case PEER_READ:
		if (peer_decode_read(f, len, &rd) == 0 &&
		    (!rd.len || rd.len > PEER_MAX_SHARD ||
		     strlen(rd.path) > CKPT_PATH_MAX2))
			abort();
		break;
	case PEER_HELD:
		if (peer_decode_held(f, len, &sg) == 0 &&
		    (sg.shard >= 32 || sg.stripe || !sg.owner[0]))
			abort();
		break;
	case PEER_HELD | PEER_REPLY:
		if (peer_decode_data_for(f, len, PEER_HELD, &da) == 0 &&
		    (da.len > PEER_MAX_HELD || da.data + da.len != f + len))
			abort();
		break;
	case PEER_PING:
	case PEER_PING | PEER_REPLY:
		if (hdr.len)            /* a bare header, both ways */
			abort();
		break;
	case PEER_READ | PEER_REPLY:
		if (peer_decode_data(f, len, &da) == 0 &&
		    (da.data + da.len != f + len ||
		     crc32c(da.data, da.len) != da.crc))
			abort();
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (size > PEER_HDR_LEN + PEER_MAX_PAYLOAD)
		return 0;
	copy = malloc(size ? size : 1);  /* exact size: ASan sees overreads */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	decode_one(copy, size);
	if (size >= PEER_HDR_LEN) {
		put_le32(copy + 8, (uint32_t)(size - PEER_HDR_LEN));
		put_le32(copy + 28, crc32c(copy + PEER_HDR_LEN,
					   size - PEER_HDR_LEN));
		put_le32(copy + 24, crc32c(copy, 24));
		decode_one(copy, size);
	}
	free(copy);
	return 0;
}
