/*
 * peer.h - the protocol between ckptd nodes of a cluster, beside the
 * client protocol (proto.h), and its authentication.
 *
 * A frame is a fixed 32-byte header and len payload bytes:
 *
 *   off size field
 *     0    4 magic    PEER_MAGIC, "CKPN" little-endian
 *     4    2 version  PEER_VERSION
 *     6    2 type     enum peer_type; replies set PEER_REPLY
 *     8    4 len      payload bytes, at most PEER_MAX_PAYLOAD
 *    12    4 seq      request id, echoed by the reply
 *    16    4 status   replies: 0 or a negative errno / CKPT_E* code
 *    20    4 flags    0 (reserved; a frame with others is refused)
 *    24    4 hcrc     CRC32C of bytes 0..23
 *    28    4 crc      CRC32C of the payload
 *
 * The header has its own CRC so that a receiver can trust len before it
 * has the payload: a frame whose header fails is not delimited, and the
 * connection goes.  Each type has its own payload layout and its own
 * decoded view (struct peer_*), encoded and decoded only here.  Strings are
 * a u16 length and bytes; shard bytes follow the fixed fields and are not
 * copied: the view points at them in the frame.
 *
 * Authentication, both ways, before anything else: the connecting node
 * sends HELLO {its name, a random nonce}; the accepting node answers with
 * CHALLENGE {its name, its nonce, its proof}; the connecting node checks
 * that proof and sends AUTH {its proof}; the accepting node checks it and
 * answers AUTH's reply.  A proof is HMAC-SHA-256 under the cluster key over
 * a role label, both nonces and both names (peer_proof()), so neither side
 * can replay the other's, nor one from another connection.  A connection
 * that fails, or sends anything else first, is closed and gets nothing.
 *
 * Library code: no I/O but peer_key_load(), no printing.
 */
#ifndef CKPT_PEER_H
#define CKPT_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "place.h"

#define PEER_MAGIC        0x4e504b43u   /* "CKPN" */
#define PEER_VERSION      1
#define PEER_HDR_LEN      32
#define PEER_REPLY        0x8000
#define PEER_MAX_SHARD    (4u << 20)    /* shard bytes in one frame */
#define PEER_MAX_PAYLOAD  (PEER_MAX_SHARD + 4096)
#define PEER_NONCE_LEN    32
#define PEER_PROOF_LEN    32
#define PEER_KEY_MIN      32            /* bytes of the cluster key */
#define PEER_KEY_MAX      1024

enum peer_type {
	PEER_HELLO = 1,      /* name, nonce */
	PEER_CHALLENGE,      /* name, nonce, proof (the answer to HELLO) */
	PEER_AUTH,           /* proof; its reply is empty */
	PEER_SHARD_PUT,      /* a shard of a stripe, to be held durably */
	PEER_SHARD_ACK,      /* the reply to SHARD_PUT, once durable */
	PEER_NTYPES
};

struct peer_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t len;
	uint32_t seq;
	int32_t status;
};

/* HELLO and CHALLENGE. */
struct peer_hello {
	char name[PLACE_NAME_MAX + 1];
	uint8_t nonce[PEER_NONCE_LEN];
	uint8_t proof[PEER_PROOF_LEN];   /* CHALLENGE only */
};

/* AUTH. */
struct peer_auth {
	uint8_t proof[PEER_PROOF_LEN];
};

/*
 * SHARD_PUT: shard `shard` (1..k+m-1; data shards first) of stripe `stripe`
 * of the part the node `owner` holds of job/version (sealed there as seq,
 * with open_id), covering bytes [off, off + len) of the shard's stream.
 * crc is the CRC32C of the len bytes at data.
 */
struct peer_shard {
	char owner[PLACE_NAME_MAX + 1];
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint64_t seq, open_id;
	uint32_t k, m, shard;
	uint64_t stripe;
	uint64_t off;
	uint32_t len;
	uint32_t crc;
	const uint8_t *data;      /* decoded: in the frame; encoded: the
				   * caller's, copied into the frame */
};

/* Check the first PEER_HDR_LEN bytes of a frame.  0, -CKPT_EBADMAGIC,
 * -CKPT_EVERSION, -CKPT_ECORRUPT (header CRC) or -CKPT_EPROTO (unknown
 * type, flags, len over PEER_MAX_PAYLOAD, a request with a status). */
int peer_peek(const void *buf, size_t avail, struct peer_hdr *hdr);
/* Check a whole frame: its header (peer_peek), its length and its payload
 * CRC.  0 or as peer_peek, -CKPT_ECORRUPT. */
int peer_check(const void *frame, size_t len, struct peer_hdr *hdr);

/*
 * Encoders: a whole frame into buf (cap bytes).  Return the frame's length
 * or -EMSGSIZE (too small a buffer, too long a field) / -EINVAL.  A reply
 * of status != 0 carries no payload (peer_encode_status).
 */
int peer_encode_hello(void *buf, size_t cap, uint16_t type, uint32_t seq,
		      const struct peer_hello *h);
int peer_encode_auth(void *buf, size_t cap, uint32_t seq,
		     const struct peer_auth *a);
int peer_encode_shard(void *buf, size_t cap, uint32_t seq,
		      const struct peer_shard *s);
int peer_encode_status(void *buf, size_t cap, uint16_t type, uint32_t seq,
		       int32_t status);

/*
 * Decoders of a frame that passed peer_check() (frame, len as given
 * there).  0 or -CKPT_EPROTO (a short or long payload, a bad string, a
 * field out of range: shard not in 1..k+m-1, len over PEER_MAX_SHARD or not
 * what the frame holds, k+m over 32), -CKPT_EBADNAME, -CKPT_ECORRUPT (the
 * shard bytes fail their crc).  The view may point into frame.
 */
int peer_decode_hello(const void *frame, size_t len, struct peer_hello *h);
int peer_decode_auth(const void *frame, size_t len, struct peer_auth *a);
int peer_decode_shard(const void *frame, size_t len, struct peer_shard *s);

/* The proof of role ('C' the connecting node, 'A' the accepting node)
 * over both nonces and both names, under key.  0, or -EINVAL. */
int peer_proof(const uint8_t *key, size_t keylen, char role,
	       const uint8_t conn_nonce[PEER_NONCE_LEN],
	       const uint8_t acc_nonce[PEER_NONCE_LEN],
	       const char *conn_name, const char *acc_name,
	       uint8_t out[PEER_PROOF_LEN]);
/* Is proof the expected one?  Constant time.  1 or 0. */
int peer_proof_ok(const uint8_t *want, const uint8_t *got);
/* Fill a nonce from the system's random source.  0 or -EIO. */
int peer_nonce(uint8_t out[PEER_NONCE_LEN]);

/*
 * Read the cluster key from path: PEER_KEY_MIN..PEER_KEY_MAX bytes (the
 * file's whole content), into key (PEER_KEY_MAX bytes), *len set.  Refused
 * (-EPERM) if the file is readable or writable by group or others, or is
 * not a regular file; -EINVAL if too short or too long; -errno.
 */
int peer_key_load(const char *path, uint8_t *key, size_t *len);

const char *peer_type_name(unsigned type);

#endif
