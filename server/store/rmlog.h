/*
 * rmlog.h - the removal log, <store>/removed.
 *
 * One 24-byte record per local copy given up on purpose (rm, retention,
 * eviction), appended and fsync'd before its manifest is unlinked:
 *
 *   u64 open_id   the version's id, as in its segment headers
 *   u64 seq       its commit order
 *   u32 crc       CRC32C of the 16 bytes before it
 *   u32 zero
 *
 * Segment headers are cleared lazily after that; a header that survives a
 * crash and names a logged open_id is recycled quietly, not reported as an
 * uncommitted version (recover.c).  The seqs keep commit order across
 * restarts when no manifest is left to say how far it went (every local copy
 * evicted, and the PFS not reachable at start).  Recovery rewrites the log
 * as one record {0, highest seq} once it has cleared those headers.
 *
 * rmlog_append() is safe on any thread (appends are serialised by a lock of
 * this module's: the one piece of process-wide state here).
 */
#ifndef CKPTD_RMLOG_H
#define CKPTD_RMLOG_H

#include <stdint.h>

#define RMLOG_REC 24
void rmlog_encode(uint8_t rec[RMLOG_REC], uint64_t open_id, uint64_t seq);
/* 0, or -CKPT_ECORRUPT for a torn or foreign record. */
int rmlog_decode(const uint8_t rec[RMLOG_REC], uint64_t *open_id,
		 uint64_t *seq);
/* Append {open_id, seq} to the log at path and fsync it (whole records
 * only: after a torn one, it overwrites it).  Blocking.  0 or -errno. */
int rmlog_append(const char *path, uint64_t open_id, uint64_t seq);
/* Replace the log at path by the one record {0, max_seq}, durably (write a
 * temporary, rename, fsync the directory).  0 or -errno. */
int rmlog_reset(const char *path, uint64_t max_seq);

#endif
