/*
 * shardmeta.h - the on-disk record of one erasure-coded shard a node holds
 * for a peer (the owner), written when the shard is sealed (SHARD_SEAL,
 * struct peer_seal in peer.h) and read back at start-up.
 *
 * The owner cut its sealed part of job/version into nstripes stripes of
 * k * chunk bytes and coded each into k data and m parity chunks; shard
 * `shard` (1..k+m-1; shard 0 stays with the owner) is the chunks of that
 * index, stripe i at byte i * chunk of the shard: nstripes * chunk bytes.
 * The holder keeps the CRC32C of each chunk as it holds it (crcs), so that a
 * damaged chunk is found before it is used, and the part's manifest (man,
 * opaque here: manifest.h decodes it), so that the part can be rebuilt
 * without its owner.
 *
 * Layout (little-endian, strings as u16 length + bytes):
 *
 *   u64 magic        SHARDMETA_MAGIC, "CKPTSHD1"
 *   u32 format       SHARDMETA_FORMAT
 *   u32 flags        reserved, 0
 *   str owner        the node whose part this is (node-name rule, never
 *                    "." or "..": it names a directory)
 *   str job          names.h
 *   str version      names.h
 *   u32 uid          owner of the job
 *   u64 seq          the part's commit order on its owner
 *   u64 open_id      the part's open_id on its owner
 *   u32 k            data shards, >= 1
 *   u32 m            parity shards, >= 1; k + m <= SHARDMETA_MAX_SHARDS
 *   u32 shard        this shard's index, 1..k+m-1
 *   u32 chunk        bytes of one chunk: 1..PEER_MAX_SHARD bytes, a
 *                    multiple of SHARDMETA_CHUNK_ALIGN
 *   u64 stream_len   bytes of the part's stream (before padding)
 *   u64 nstripes     ceil(stream_len / (k * chunk)); nstripes * chunk fits
 *                    an off_t
 *   u32 manlen       1..PEER_MAX_MAN
 *   manlen bytes     the part's encoded manifest
 *   nstripes x u32   CRC32C of each chunk of the shard, stripe order
 *   u32 crc          CRC32C of every byte before it
 *
 * Ownership: shardmeta_decode() allocates m->crcs and m->man (malloc);
 * shardmeta_release() frees both with free() and clears them.  A struct
 * built by hand for shardmeta_encode() may point at anything; encode takes
 * no ownership, and only a struct whose crcs and man are both malloc'd (or
 * NULL) may be handed to shardmeta_release().
 *
 * Library code: no I/O, no printing, no global state; thread-safe.
 */
#ifndef CKPT_SHARDMETA_H
#define CKPT_SHARDMETA_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "peer.h"

#define SHARDMETA_MAGIC       0x3144485354504b43ull /* "CKPTSHD1" */
#define SHARDMETA_FORMAT      1
#define SHARDMETA_MAX_SHARDS  32          /* k + m at most */
#define SHARDMETA_CHUNK_ALIGN 4096u       /* chunk is a multiple of this */

struct shard_meta {
	char owner[PLACE_NAME_MAX + 1];
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t uid;
	uint64_t seq, open_id;
	uint32_t k, m, shard, chunk;
	uint64_t stream_len, nstripes;
	uint32_t *crcs;          /* nstripes CRC32C, one per chunk as held;
				  * NULL when nstripes is 0 */
	uint8_t *man;            /* the part's encoded manifest, opaque */
	uint32_t manlen;
};

/*
 * Is owner a name a shard's owner may have: 1..PLACE_NAME_MAX bytes of
 * [A-Za-z0-9._-] (the node-name rule of nodes.h), and not "." or "..", so
 * that it is one safe path component.  1 or 0.
 */
int shardmeta_owner_ok(const char *owner);

/*
 * Check every field of m but crcs as decode would: names, k, m, shard,
 * chunk, nstripes against stream_len, manlen, and that man is not NULL.
 * 0, -CKPT_EBADNAME or -CKPT_EPROTO.
 */
int shardmeta_check(const struct shard_meta *m);

/* Bytes shardmeta_encode() needs for m (SIZE_MAX if that overflows). */
size_t shardmeta_size(const struct shard_meta *m);
/* Encode m into buf (cap >= shardmeta_size(m)).  Returns the length, or
 * -EINVAL if shardmeta_check() refuses m or crcs is NULL with nstripes > 0,
 * or -EMSGSIZE. */
long shardmeta_encode(const struct shard_meta *m, void *buf, size_t cap);
/*
 * Decode and validate len bytes at buf: magic, format, trailing CRC, then
 * every field (shardmeta_check()), the counts against the bytes present
 * before anything is allocated, and nothing left over.  0, or
 * -CKPT_EBADMAGIC, -CKPT_EVERSION, -CKPT_ECORRUPT (CRC), -CKPT_EPROTO,
 * -CKPT_EBADNAME, -ENOMEM; on error m is zeroed and owns nothing.
 */
int shardmeta_decode(const void *buf, size_t len, struct shard_meta *m);
/* Free m->crcs and m->man and clear them (see Ownership above). */
void shardmeta_release(struct shard_meta *m);

#endif
