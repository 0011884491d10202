/*
 * shardstore.h - the shards this node holds for its peers: the holder's
 * side of SHARD_PUT and SHARD_SEAL (peer.h), on disk under a root directory
 * (<store>/shards), with its own index and recovery.
 *
 * Layout below root:
 *
 *   <owner>/                         one directory per owner node, 0700
 *     <open_id>.<shard>.dat          the shard's bytes, stripe i's chunk at
 *                                    byte i * chunk; 0600
 *     <open_id>.<shard>.meta         its shardmeta.h record, written last and
 *                                    durably (tmp, fsync, rename, fsync dir)
 *     <open_id>.<shard>.tmp          a .meta being written
 *     <open_id>.<shard>.meta.bad     a record set aside by shardstore_scan()
 *     <open_id>.<shard>.dat.bad      (and its bytes), for inspection only
 *
 * open_id is 16 lowercase hex digits, shard decimal (1..31, no leading
 * zero).  A shard is held iff its .meta exists and decodes, and its .dat has
 * nstripes * chunk bytes.  A .dat with no .meta is a shard never sealed: the
 * owner resends it.  Nothing else below root is touched, except by
 * shardstore_drop() (which leaves .bad files to the operator).
 *
 * Every function but the room arithmetic at the end (shardstore_room_*,
 * shardstore_put_ask: pure, any thread) blocks on file I/O (call from
 * worker threads, never the loop), uses no global state, and never prints.  Calls for different
 * (owner, open_id, shard) may run at once on any threads; calls for one
 * shard, and shardstore_drop() against calls for its part, must be
 * serialized by the caller.  shardstore_scan() runs alone, at start-up.
 * File operations go through the sys.h seam (fault injection).
 *
 * Owner names come from decoded frames, but are checked again here:
 * anything shardmeta_owner_ok() refuses ('/', "." or "..", ...) gives
 * -CKPT_EBADNAME before any path is made, and a root so long that a path
 * below it would not fit PATH_MAX gives -ENAMETOOLONG.  All return 0 or
 * -errno.
 */
#ifndef CKPTD_SHARDSTORE_H
#define CKPTD_SHARDSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "shardmeta.h"

/* Make root (0700) if it is missing, and make its entry durable.  0 or
 * -errno. */
int shardstore_init(const char *root);

/*
 * Write the len bytes of buf at byte off of shard `shard` (1..31) of the
 * part owner sealed as open_id: the owner's directory is made if missing
 * (and its entry fsync'd), the .dat created if missing.  Not durable until
 * shardstore_seal().  -EEXIST if the shard is sealed already (a late
 * duplicate must not change held bytes), -EINVAL (shard out of range, len
 * 0, off + len past an off_t), -CKPT_EBADNAME, -ENOENT (no root), -errno.
 */
int shardstore_put(const char *root, const char *owner, uint64_t open_id,
		   uint32_t shard, uint64_t off, const void *buf, size_t len);

/* A put whose buf, off and len are multiples of this is written with
 * O_DIRECT (where the file system has it), past the page cache. */
#define SHARDSTORE_ALIGN 4096

/*
 * Seal shard m->shard of m->owner's part m->open_id: fsync its .dat, check
 * that it has exactly m->nstripes * m->chunk bytes, read it back chunk by
 * chunk into m->crcs (allocated here), then write the .meta durably (tmp,
 * fsync, rename, fsync the owner's directory and root).  A shard of no
 * stripes (stream_len 0) gets an empty .dat.  m->crcs must be NULL on entry
 * and every other field set as in SHARD_SEAL; m->man is the caller's.
 *
 * Idempotent: if the shard is sealed already with the same fields, 0
 * (m->crcs set from the record; the .dat is not re-read); a manifest that
 * differs (the owner's holder record changed) replaces the record's,
 * durably, before that 0.
 *
 * On success m->crcs is a malloc'd array of m->nstripes the caller owns
 * (free() it, or shardmeta_release() when m->man is malloc'd too); on
 * failure it is NULL.  0, or
 *   -EINVAL         m fails shardmeta_check(), or m->crcs was not NULL
 *   -CKPT_EBADNAME  a bad owner name
 *   -ENODATA        the .dat is missing or not nstripes * chunk bytes (a
 *                   chunk never arrived, or one past the end did): the
 *                   owner should resend the shard, or drop it
 *   -EEXIST         sealed already, with other fields
 *   -CKPT_ECORRUPT  a .meta is there but does not decode (scan sets it
 *                   aside; meanwhile the shard is not held)
 *   -ENOMEM, -errno of the file operations.
 * Holes are not detected: chunks the sender never sent below the last one
 * read as zeros.  SHARD_SEAL comes after every SHARD_PUT was answered.
 */
int shardstore_seal(const char *root, struct shard_meta *m);

/*
 * shardstore_seal(), but the chunks' CRCs are crcs[0..m->nstripes-1] (the
 * caller's, copied): those each chunk came with, checked against its bytes
 * before they were put, so the .dat is fsync'd and its size checked but not
 * read back.  For a caller that saw every chunk of the shard put; anything
 * else must use shardstore_seal().  Returns as shardstore_seal().
 */
int shardstore_seal_known(const char *root, struct shard_meta *m,
			  const uint32_t *crcs);

/*
 * Re-read every chunk of the shard m (a sealed one: from shardstore_seal()
 * or shardstore_scan()) and compare with m->crcs.  0; -CKPT_ECORRUPT with
 * *bad (if not NULL) the first stripe whose chunk fails its crc or is not
 * wholly in the .dat; -ENOENT (no .dat), -EINVAL (m fails shardmeta_check),
 * -CKPT_EBADNAME, -ENOMEM, -errno.
 */
int shardstore_verify(const char *root, const struct shard_meta *m,
		      uint64_t *bad);

/*
 * Read the chunk of stripe `stripe` (< m->nstripes) of the shard m into buf
 * (m->chunk bytes), checked against m->crcs[stripe].  0; -CKPT_ECORRUPT
 * (a wrong crc or a short .dat: buf holds nothing to use), -EINVAL (stripe
 * out of range, m invalid), -CKPT_EBADNAME, -ENOENT, -errno.
 */
int shardstore_read(const char *root, const struct shard_meta *m,
		    uint64_t stripe, void *buf);

/*
 * Remove shard `shard` of owner's part open_id (0: every shard of it): .meta first (so that none is
 * held any more), then .dat and .tmp, with the directory fsync'd after
 * each step.  .bad files stay.  0 when nothing was there; -CKPT_EBADNAME,
 * -errno.
 */
int shardstore_drop(const char *root, const char *owner, uint64_t open_id,
		    uint32_t shard);

/* What shardstore_scan() found and did. */
struct shardstore_scan_stats {
	uint64_t held;           /* records handed to the callback */
	uint64_t partial;        /* .dat without .meta, removed */
	uint64_t tmp;            /* stray .tmp, removed */
	uint64_t bad;            /* .meta set aside (with their .dat) */
};

/*
 * Called by shardstore_scan() for each held shard: m decoded (m->crcs and
 * m->man malloc'd), img its len on-disk bytes.  The callback may take m's
 * allocations (setting m->crcs and m->man to NULL); scan releases whatever
 * is left when it returns.  img is valid only during the call.  A non-zero
 * return stops the scan, which returns it.
 */
typedef int (*shardstore_scan_fn)(void *arg, struct shard_meta *m,
				  const void *img, size_t len);

/*
 * At start-up, before any other call on root: walk every owner directory
 * (entries whose names shardmeta_owner_ok() refuses, and files not named as
 * above, are left alone).  Each .meta that decodes, agrees with its name
 * (owner, open_id, shard) and has a .dat of nstripes * chunk bytes is
 * handed to fn; one that does not is renamed to <name>.bad, its .dat (if
 * any) to <name>.bad too.  A .dat with no .meta, and every .tmp, is
 * removed.  Directories changed are fsync'd.  stats (may be NULL) is
 * filled.  A missing root is empty: 0.  0, fn's return, -ENOMEM, -errno.
 * Integrity of the chunks is not checked: shardstore_verify() does.
 */
int shardstore_scan(const char *root, shardstore_scan_fn fn, void *arg,
		    struct shardstore_scan_stats *stats);

/* ---- room (pure arithmetic: hold.c, and the tests) ------------------------
 *
 * A holder gives peers' shards room as it comes, never more than the store
 * can spare: a shard's whole size is reserved at its first chunk (the
 * SHARD_PUT's total), so that a shard refused is refused before any byte of
 * it is written, and a shard taken cannot run out of room half-way.
 */

/* What the room for peers' shards is made of. */
struct shardstore_room {
	uint64_t fs_room;       /* bytes of the store's file system that no
				 * segment and no shard has or was promised
				 * (segs_room(): [ckptd] reserve already
				 * left out) */
	uint64_t keep;          /* of fs_room, what peers' shards must leave
				 * to this node's own parts ([cluster]
				 * holder_reserve) */
	uint64_t limit_room;    /* what [ckptd] capacity still allows shards
				 * (UINT64_MAX: no capacity set) */
};

/* Bytes peers' shards may still be given: the lesser of fs_room - keep (0
 * when keep is more) and limit_room. */
uint64_t shardstore_room_left(const struct shardstore_room *r);

/* May ask more bytes go to peers' shards?  0, or -ENOSPC. */
int shardstore_room_fits(const struct shardstore_room *r, uint64_t ask);

/*
 * What one SHARD_PUT of a shard asks of the room.  claim: the bytes the
 * shard holds reserved here so far (0: not open here, this is its first
 * chunk); total: the frame's (0: unknown); end: the chunk's off + len.  The
 * shard's claim becomes max(claim, total, end), and the ask is what that
 * adds: a first chunk with a total asks the whole shard, its later chunks
 * nothing; without a total each chunk asks what it grows the shard by.
 * *claim_out (may be NULL) gets the new claim.
 */
uint64_t shardstore_put_ask(uint64_t claim, uint64_t total, uint64_t end,
			    uint64_t *claim_out);

#endif
