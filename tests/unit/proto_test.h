/*
 * proto_test.h - what test_proto.c and test_proto_lists.c share: frame
 * buffers' size, the decoders' name buffer, fix_frame() (a hand-edited
 * frame's header made to agree), and check_truncations() (every cut of a
 * frame is refused, with and without a header that agrees).  Header-only:
 * each tests/unit/test_X.c is its own binary.
 */
#ifndef CKPT_TESTS_PROTO_TEST_H
#define CKPT_TESTS_PROTO_TEST_H

#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "proto.h"

/* Where the entry decoders put a path (proto_dec_file_entry()). */
static char nbuf[CKPT_PATH_MAX2 + 1];

#define FRAME_MAX 16384

/* Rewrite a hand-edited frame's len and CRC so that only the edit is
 * wrong. */
static inline void fix_frame(uint8_t *f, size_t len)
{
	put_le32(f + 8, (uint32_t)(len - PROTO_HDR_LEN));
	put_le32(f + 20, 0);
	put_le32(f + 20, crc32c(f, len));
}

static inline int decode(uint8_t *f, size_t len, struct proto_msg *m)
{
	return proto_decode(f, len, m, NULL);
}

/* Every cut of frame (n bytes) is refused; with the header made to agree,
 * only a list reply (list) may decode, and its body then comes up short. */
static inline void check_truncations(const uint8_t *frame, size_t n, int list)
{
	uint8_t cut[FRAME_MAX];
	struct proto_msg m;
	struct dec rest;
	size_t i, k, cnt;
	int ret;

	for (i = 0; i < n; i++) {
		memcpy(cut, frame, i);
		CU_ASSERT_NOT_EQUAL(decode(cut, i, &m), 0);
	}
	for (i = PROTO_HDR_LEN; i < n; i++) {
		memcpy(cut, frame, i);
		fix_frame(cut, i);
		ret = proto_decode(cut, i, &m, &rest);
		if (ret)
			continue;
		CU_ASSERT_FATAL(list);
		/* Decode the list reply's body by type. */
		switch (m.type & ~PROTO_REPLY) {
		case PROTO_LIST_VERSIONS: {
			struct ckpt_version_info v;

			cnt = proto_dec_list_count(&rest, m.type);
			for (k = 0; k < cnt; k++)
				proto_dec_version_entry(&rest, &v);
			break;
		}
		case PROTO_STATUS: {
			struct ckpt_status s;

			proto_dec_status(&rest, &s);
			break;
		}
		}
		CU_ASSERT(rest.err != 0 || dec_left(&rest) != 0);
	}
}

#endif
