/*
 * fuzz_proto.c - libFuzzer harness for the wire decoder.  Each input is
 * decoded as it is, then again with its header's len and CRC made to agree,
 * so that mutations reach the field and entry decoders behind the CRC.
 *
 * fuzz-sources: lib/proto.c lib/codec.c lib/crc32c.c lib/names.c lib/xattr.c
 */
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char nbuf[CKPT_PATH_MAX2 + 1];

static void decode_one(uint8_t *f, size_t len)
{
	union {
		struct ckpt_version_info v;
		struct ckpt_file_info fi;
		struct ckpt_status s;
		struct ckpt_node_info nd;
		struct ckpt_plan_entry pl;
		char job[CKPT_JOB_MAX + 1];
	} u;
	struct proto_hdr hdr;
	struct proto_msg m;
	struct dec rest;
	uint32_t i, n;

	(void)proto_peek(f, len, &hdr);
	if (proto_decode(f, len, &m, &rest))
		return;
	/* The strings point into f, decoded in place: touch every byte. */
	(void)(strlen(m.job) + strlen(m.version) + strlen(m.path) +
	       strlen(m.path2));
	if (!(m.type & PROTO_REPLY))
		return;
	switch (m.type & ~PROTO_REPLY) {
	case PROTO_LIST_JOBS:
	case PROTO_LIST_VERSIONS:
	case PROTO_LIST_FILES:
	case PROTO_LIST_PARTS:
	case PROTO_LIST_NODES:
	case PROTO_PLAN:
		n = proto_dec_list_count(&rest, m.type);
		for (i = 0; i < n && !rest.err; i++) {
			if (m.type == (PROTO_LIST_JOBS | PROTO_REPLY))
				proto_dec_job_entry(&rest, u.job);
			else if (m.type == (PROTO_LIST_FILES | PROTO_REPLY))
				proto_dec_file_entry(&rest, &u.fi, nbuf);
			else if (m.type == (PROTO_LIST_NODES | PROTO_REPLY))
				proto_dec_node_entry(&rest, &u.nd);
			else if (m.type == (PROTO_PLAN | PROTO_REPLY))
				proto_dec_plan_entry(&rest, &u.pl, nbuf);
			else
				proto_dec_version_entry(&rest, &u.v);
		}
		break;
	case PROTO_STAT:
		proto_dec_version_entry(&rest, &u.v);
		break;
	case PROTO_STATUS:
		proto_dec_status(&rest, &u.s);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	copy = malloc(size ? size : 1); /* exact size: ASan sees overreads;
					 * decoding rewrites it */
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	decode_one(copy, size);
	if (size < PROTO_HDR_LEN || size > PROTO_HDR_LEN + PROTO_MAX_PAYLOAD) {
		free(copy);
		return 0;
	}
	memcpy(copy, data, size);
	put_le32(copy + 8, (uint32_t)(size - PROTO_HDR_LEN));
	put_le32(copy + 20, 0);
	put_le32(copy + 20, crc32c(copy, size));
	decode_one(copy, size);
	free(copy);
	return 0;
}
