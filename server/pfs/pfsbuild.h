/*
 * pfsbuild.h - rebuilding a file's bytes from a copy's records (pfs.h), for
 * the copy's threads (pfspiece.c).  Nothing else includes it.
 *
 * struct pfs_index is built once per copy and then only read, by every
 * thread: the job's records grouped by file, in write order.  It also says
 * where a file may be cut into pieces for different threads: only at a
 * chunk boundary that no record with data crosses, so that no record is
 * ever read by two threads.
 *
 * struct pfs_builder is one thread's: its read buffers and its segment fds.
 * It fills a chunk with zeros, then with every record of the file that
 * overlaps it, in write order (a later record wins), each record read whole
 * and checked against its CRC32C before any of its bytes are used.  A
 * record that goes on past the chunk is kept for the next one (up to
 * PFS_BUILD_KEEP of them), so that when chunks and records do not line up a
 * record is still read once.  With direct reads, the records a piece will
 * want (pfs_builder_plan()) are read ahead through an io_uring of the
 * builder's own, PFS_BUILD_AHEAD at a time, into buffers swapped with the
 * builder's when wanted (never copied), and checked then.  Ownership: the
 * builder owns its buffers, fds and ring; it borrows the index.  Blocking;
 * 0 or -errno.
 */
#ifndef CKPTD_PFSBUILD_H
#define CKPTD_PFSBUILD_H

#include <liburing.h>
#include <stddef.h>
#include <stdint.h>

#include "pfs.h"

struct pfs_index {
	const struct pfs_job *job;   /* borrowed */
	uint32_t *order;          /* record indices grouped by file */
	uint32_t *start;          /* file f's: order[start[f] .. start[f+1]) */
};

/* 0 or -ENOMEM.  ix borrows job, which must outlive it. */
int pfs_index_init(struct pfs_index *ix, const struct pfs_job *job);
void pfs_index_release(struct pfs_index *ix);
/*
 * Cut file f, count chunks of chunk bytes, into pieces of about target
 * chunks each (target >= 1), ending only at chunk boundaries no record with
 * data crosses (so a piece may be longer).  ends[] (room for count + 1)
 * gets each piece's end, a chunk index; the last is count.  Returns the
 * number of pieces, at least 1 (an empty file is one empty piece), or
 * -ENOMEM.
 */
long pfs_index_cut(const struct pfs_index *ix, uint32_t f, uint32_t count,
		   uint32_t chunk, uint32_t target, uint32_t *ends);

/* Records kept across a chunk boundary (more than that crossing one
 * boundary, as overwrites can make, are read again). */
#define PFS_BUILD_KEEP 4

struct pfs_rbuf {
	uint8_t *p;               /* 4 KiB aligned, cap bytes */
	size_t cap;
	uint32_t rec;             /* the record verified in p, or UINT32_MAX */
};

/*
 * Records read ahead (direct reads), each in a buffer of its own, and the
 * bytes they may be reading or holding together (one record always: a
 * record larger than that is read alone), so that large records ([ckptd]
 * chunk up to 256 MiB) are not read several at a time.  The buffers only
 * grow: memory is still up to PFS_BUILD_AHEAD of the largest record.
 * (Eight in flight, with 64 MiB pieces, drained no faster than three on the
 * disk of docs/benchmarks.md, where the drain also writes.)
 */
#define PFS_BUILD_AHEAD 3
#define PFS_BUILD_AHEAD_BYTES (32u << 20)

struct pfs_ahead {
	struct pfs_rbuf rb;       /* rb.rec: the record asked for */
	int busy;                 /* submitted, not yet reaped */
	int res;                  /* reaped: bytes read or -errno */
};

struct pfs_builder {
	const struct pfs_index *ix;
	int *rfds;                /* buffered fds by segment id, or -1 */
	int direct;               /* read through the job's (O_DIRECT) fds */
	struct pfs_rbuf keep[PFS_BUILD_KEEP];
	struct pfs_rbuf scratch;  /* a record that ends within the chunk */
	uint64_t reads;           /* records read (for tests and profiles) */
	/* direct: records of the piece read ahead through io_uring, in the
	 * order the piece wants them (plan[next..nplan) not asked for yet) */
	struct io_uring ring;
	int have_ring;
	struct pfs_ahead ahead[PFS_BUILD_AHEAD];
	uint32_t *plan;
	uint32_t nplan, next, plan_cap;
};

/* 0 or -ENOMEM.  direct: read the segments through the job's fds (the
 * loop's, O_DIRECT where the store allows it) rather than buffered fds of
 * the builder's own with read-ahead. */
int pfs_builder_init(struct pfs_builder *b, const struct pfs_index *ix,
		     int direct);
void pfs_builder_release(struct pfs_builder *b);
/* Ask the kernel to start reading the records of bytes [off, off + len) of
 * file f (buffered reads only; best effort, does not wait). */
void pfs_builder_prefetch(struct pfs_builder *b, uint32_t f, uint64_t off,
			  uint64_t len);
/* Direct reads: the builder is about to build the chunks of [off, off +
 * len) of file f, in order: keep up to PFS_BUILD_AHEAD of their records
 * being read ahead (io_uring), so that the disk reads while the thread
 * writes.  Best effort: without a ring, records are read when wanted. */
void pfs_builder_plan(struct pfs_builder *b, uint32_t f, uint64_t off,
		      uint64_t len, uint32_t chunk);
/* Fill buf with bytes [off, off + len) of file f.  0, -EIO (a record's
 * segment is gone), -CKPT_ECORRUPT (a record's CRC32C does not match),
 * -ENOMEM or -errno of a read. */
int pfs_builder_fill(struct pfs_builder *b, uint32_t f, uint64_t off,
		     uint32_t len, uint8_t *buf);

/* Where pfs_builder_span() found the bytes. */
struct pfs_span {
	const uint8_t *p;         /* len bytes: buf, or in the builder's
				   * buffer of a record (valid until the
				   * builder's next call) */
	int have_crc;             /* crc is their CRC32C (the span is one
				   * record exactly) */
	uint32_t crc;
	int zero;                 /* no record with bytes overlaps it: all
				   * zeros, and p is NULL (nothing filled) */
};

/* The same, without copying when one record, the last written there,
 * covers the whole range (the common case: records as long as chunks, or
 * longer): out->p then points into that record's buffer, and the records
 * before it are not read at all.  A hole (no record with bytes overlaps
 * the range) sets out->zero and fills nothing: a sparse file of a TiB
 * costs no memset, CRC or compare per chunk.  Otherwise out->p is buf,
 * filled. */
int pfs_builder_span(struct pfs_builder *b, uint32_t f, uint64_t off,
		     uint32_t len, uint8_t *buf, struct pfs_span *out);

#endif
