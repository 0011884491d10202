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
#define PEER_VERSION      7      /* 7: SHARD_PUT's total; 6: PART flags; 5: HELD, PING; 4: SHARD_GET */
#define PEER_HDR_LEN      32
#define PEER_REPLY        0x8000
#define PEER_MAX_SHARD    (4u << 20)    /* shard bytes in one frame */
#define PEER_MAX_MAN      (16u << 20)   /* manifest bytes in SEAL or PART */
#define PEER_MAX_PAYLOAD  (PEER_MAX_MAN + 8192)
#define PEER_NONCE_LEN    32
#define PEER_PROOF_LEN    32
#define PEER_KEY_MIN      32            /* bytes of the cluster key */
#define PEER_KEY_MAX      1024

enum peer_type {
	PEER_HELLO = 1,      /* name, nonce */
	PEER_CHALLENGE,      /* name, nonce, proof (the answer to HELLO) */
	PEER_AUTH,           /* proof; its reply is empty */
	PEER_SHARD_PUT,      /* one stripe's chunk of a shard; the reply (a
			      * status) once written, not yet durable */
	PEER_SHARD_SEAL,     /* every chunk of a shard was sent: hold it
			      * durably; the reply (a status) once durable */
	PEER_PART,           /* the sender's part of a version: its state,
			      * level and manifest; the reply is a status */
	PEER_READ,           /* bytes of a file in the receiver's part; the
			      * reply is a struct peer_data */
	PEER_SYNC,           /* the sender has announced (PART) every part
			      * it holds since the link came up: {owner};
			      * the reply is a status */
	PEER_SHARD_GET,      /* one stripe's chunk of a shard the receiver
			      * holds; the reply is a struct peer_data */
	PEER_HELD,           /* (5) the next shard the receiver holds of the
			      * sender's parts after a cursor (struct
			      * peer_sget); the reply is a struct peer_data
			      * carrying its shardmeta.h record, or -ENOENT
			      * past the last */
	PEER_PING,           /* = 11: empty; the reply is a status.  Sent on
			      * an UP link that sent nothing for a while, so
			      * that the peer hears something (cluster.h) */
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
 *
 * total is the whole shard's size in bytes (its SHARD_SEAL's nstripes *
 * chunk), so that the holder can reserve the room for all of it when the
 * first chunk comes, and refuse it (-ENOSPC) before anything is written.
 * It is a trailing field, after the shard bytes, sent only when not 0: a
 * frame without it decodes with total 0 (unknown: the holder counts each
 * chunk as it comes).  When sent it is at least off + len and at most
 * INT64_MAX; the encoder refuses (-EINVAL), and the decoder (-CKPT_EPROTO),
 * any other.
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
	uint64_t total;           /* bytes of the whole shard; 0: unknown
				   * (not on the wire) */
};

/*
 * SHARD_SEAL: every stripe of shard `shard` of the part owner sealed as
 * open_id was sent.  The part's stream is its records' bytes in manifest
 * order (stream_len bytes), cut into nstripes stripes of k * chunk bytes
 * (the last padded with zeros): nstripes = ceil(stream_len / (k * chunk)),
 * at least 1 when stream_len > 0, 0 when it is 0, and the padded stream
 * (nstripes * k * chunk bytes) within INT64_MAX.  man (manlen bytes,
 * manlen >= 1) is the part's encoded manifest (manifest.h), which says
 * where each record's bytes sit in the stream; it is checked by its own
 * decoder, not here.
 */
struct peer_seal {
	char owner[PLACE_NAME_MAX + 1];
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t uid;
	uint64_t seq, open_id;
	uint32_t k, m, shard;     /* shard in 1..k+m-1, k+m <= 32 */
	uint32_t chunk;           /* 1..PEER_MAX_SHARD, a multiple of 4096 */
	uint64_t stream_len;
	uint64_t nstripes;
	uint32_t manlen;          /* 1..PEER_MAX_MAN */
	const uint8_t *man;       /* decoded: in the frame */
};

/*
 * PART: what the sender (owner) holds of job/version: state (enum
 * ckpt_state; 0: the part is gone, removed), level and copies as the
 * owner's catalog has them (copies: CKPT_COPY_* bits only), the number of
 * parts the writers said the version has (nparts, 1..PLACE_MAX_NODES),
 * flags (PEER_PART_*), and for a SEALED part its encoded manifest (man,
 * manlen bytes; 0 when the owner could not encode it, and for any other
 * state).  Sent by the owner when a link comes up and whenever the part
 * changes; the receiver keeps the latest.
 */
#define PEER_PART_PUBLISHED 0x1u  /* the owner knows the whole version is
				   * on the PFS (its manifest published) */
#define PEER_PART_FLAGS     PEER_PART_PUBLISHED   /* every flag known */
struct peer_part {
	char owner[PLACE_NAME_MAX + 1];
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t uid;
	uint32_t state, level, copies, nparts;
	uint64_t seq, open_id, sealed_ns;
	uint32_t nfiles;
	uint64_t bytes;           /* logical bytes (sum of file sizes) */
	uint32_t flags;           /* PEER_PART_* */
	uint32_t manlen;          /* 0..PEER_MAX_MAN */
	const uint8_t *man;       /* decoded: in the frame */
};

/* READ: len (1..PEER_MAX_SHARD) bytes at off (off + len <= INT64_MAX) of
 * path in the receiver's part of job/version.  The reply carries them as a
 * struct peer_data (fewer at the end of the file), or a status. */
struct peer_read {
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char path[CKPT_PATH_MAX2 + 1];
	uint64_t off;
	uint32_t len;
};

/* SHARD_GET: the chunk of stripe `stripe` of shard `shard` of the part
 * owner sealed as open_id, as the receiver holds it (checked against the
 * CRC it recorded at the seal: a chunk that fails is answered
 * -CKPT_ECORRUPT).  For degraded reads and rebuilds. */
struct peer_sget {
	char owner[PLACE_NAME_MAX + 1];
	uint64_t open_id;
	uint32_t shard;           /* 1..31 */
	uint64_t stripe;
};
/* HELD uses the same view as a cursor: the first shard of owner's parts
 * the receiver holds after (open_id, shard) in that order; shard 0..31,
 * stripe 0.  Only the owner itself may ask (a rebuild, or an owner checking
 * what its holders still have). */

/* The reply to READ, SHARD_GET or HELD with status 0: len bytes
 * (0..PEER_MAX_SHARD; HELD's up to PEER_MAX_HELD) and their CRC32C. */
#define PEER_MAX_HELD (PEER_MAX_PAYLOAD - 8)
struct peer_data {
	uint32_t len;
	uint32_t crc;
	const uint8_t *data;      /* decoded: in the frame */
};
/* Where a data reply's bytes lie in its frame: an encoder that puts them
 * there first (d->data = buf + PEER_DATA_AT) has them sent without a copy. */
#define PEER_DATA_AT (PEER_HDR_LEN + 8)

/* Check the first PEER_HDR_LEN bytes of a frame.  0, -CKPT_EBADMAGIC,
 * -CKPT_EVERSION, -CKPT_ECORRUPT (header CRC) or -CKPT_EPROTO (unknown
 * type, flags, len over PEER_MAX_PAYLOAD, a request with a status, a PING
 * with a payload, a reply with a payload but READ's, SHARD_GET's or HELD's
 * of status 0, whose len is 8..8+PEER_MAX_SHARD, HELD's 8..8+PEER_MAX_HELD). */
int peer_peek(const void *buf, size_t avail, struct peer_hdr *hdr);
/* Check a whole frame: its header (peer_peek), its length and its payload
 * CRC.  0 or as peer_peek, -CKPT_ECORRUPT. */
int peer_check(const void *frame, size_t len, struct peer_hdr *hdr);

/*
 * Encoders: a whole frame into buf (cap bytes).  Return the frame's length
 * or -EMSGSIZE (too small a buffer, too long a field) / -EINVAL (a field
 * out of range; names are not checked).  A reply of status != 0 carries no
 * payload (peer_encode_status(), which refuses READ with status 0: that is
 * peer_encode_data()'s).
 */
int peer_encode_hello(void *buf, size_t cap, uint16_t type, uint32_t seq,
		      const struct peer_hello *h);
int peer_encode_auth(void *buf, size_t cap, uint32_t seq,
		     const struct peer_auth *a);
/* SYNC: owner is the sending node's name (a struct peer_hello's name). */
int peer_encode_sync(void *buf, size_t cap, uint32_t seq, const char *owner);
int peer_encode_shard(void *buf, size_t cap, uint32_t seq,
		      const struct peer_shard *s);
int peer_encode_status(void *buf, size_t cap, uint16_t type, uint32_t seq,
		       int32_t status);
int peer_encode_seal(void *buf, size_t cap, uint32_t seq,
		     const struct peer_seal *s);
int peer_encode_part(void *buf, size_t cap, uint32_t seq,
		     const struct peer_part *p);
int peer_encode_read(void *buf, size_t cap, uint32_t seq,
		     const struct peer_read *r);
/* The reply to READ seq (type PEER_READ | PEER_REPLY, status 0). */
int peer_encode_data(void *buf, size_t cap, uint32_t seq,
		     const struct peer_data *d);
/* The same for a request of type (PEER_READ or PEER_SHARD_GET). */
int peer_encode_data_for(void *buf, size_t cap, uint16_t type, uint32_t seq,
			 const struct peer_data *d);
int peer_encode_sget(void *buf, size_t cap, uint32_t seq,
		     const struct peer_sget *g);
int peer_encode_held(void *buf, size_t cap, uint32_t seq,
		     const struct peer_sget *g);
/* PING: a header alone (its reply: peer_encode_status(PEER_PING)). */
int peer_encode_ping(void *buf, size_t cap, uint32_t seq);
/* Bytes a frame needs for a payload of fixed fields and n bytes of data
 * (shard, manifest or file bytes): what a caller allocates. */
#define PEER_FRAME_CAP(n) ((size_t)PEER_HDR_LEN + 4096 + CKPT_PATH_MAX2 + (n))

/*
 * Decoders of a frame that passed peer_check() (frame, len as given
 * there).  0 or -CKPT_EPROTO (a short or long payload, a bad string, a
 * field out of range: shard not in 1..k+m-1, len over PEER_MAX_SHARD or not
 * what the frame holds, k+m over 32), -CKPT_EBADNAME, -CKPT_ECORRUPT (the
 * shard bytes fail their crc).  The view may point into frame.
 *
 * The crc a shard or data frame carries is checked against the frame's
 * payload CRC, which peer_check() took over every byte (crc32c_combine():
 * the data is not read again), so a frame that did not pass peer_check()
 * is not proof of anything.  The encoders likewise make a shard or data
 * frame's payload CRC from the crc they are given.
 */
int peer_decode_hello(const void *frame, size_t len, struct peer_hello *h);
int peer_decode_auth(const void *frame, size_t len, struct peer_auth *a);
/* SYNC: the owner's name into owner (PLACE_NAME_MAX + 1 bytes). */
int peer_decode_sync(const void *frame, size_t len, char *owner);
int peer_decode_shard(const void *frame, size_t len, struct peer_shard *s);
int peer_decode_seal(const void *frame, size_t len, struct peer_seal *s);
int peer_decode_part(const void *frame, size_t len, struct peer_part *p);
int peer_decode_read(const void *frame, size_t len, struct peer_read *r);
/* A READ reply with status 0; -CKPT_ECORRUPT if the bytes fail their crc. */
int peer_decode_data(const void *frame, size_t len, struct peer_data *d);
/* The same for a reply to a request of type (PEER_READ, PEER_SHARD_GET). */
int peer_decode_data_for(const void *frame, size_t len, uint16_t type,
			 struct peer_data *d);
int peer_decode_sget(const void *frame, size_t len, struct peer_sget *g);
int peer_decode_held(const void *frame, size_t len, struct peer_sget *g);

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
