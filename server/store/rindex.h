/*
 * rindex.h - a byte range of a file of a version, resolved into pieces of
 * its records through the version's read index (rindex.c).
 *
 * A file is the records written to it, a later record winning where two
 * overlap; bytes no record covers read as zeros, and so do zero records
 * (truncation).  The read index (catalog.h: v->rindex, an extmap per file)
 * finds a range's first extent in log time in the file's records.  It is
 * made at a version's first read and kept: each resolve first lays the
 * records appended since the last one over their files' maps, so a write
 * costs nothing here and a read costs the new records, not all of the
 * version's.  Dropping records (eviction) drops the index
 * (version_drop_index()); record indices in it stay valid because records
 * are only ever appended.
 *
 * Used by the local READ (reader.c), SEEK_DATA (seek.c) and by the reads
 * other nodes ask of this one (peerread.c).  Owns the index it keeps in v;
 * the pieces it returns are the caller's to free.
 *
 * Threads: the loop thread only (it changes v->rindex).
 */
#ifndef CKPTD_RINDEX_H
#define CKPTD_RINDEX_H

#include <stdint.h>

struct version;

/* Bytes [src, src + len) of record rec land at dst in the range. */
struct rpiece {
	uint64_t dst;             /* offset in the range */
	uint64_t src;             /* offset in the record */
	uint64_t len;
	uint32_t rec;             /* index in v->recs */
	uint32_t next;            /* the next piece of the same record, or
				   * RPIECE_END (rindex_chain()) */
};

#define RPIECE_END UINT32_MAX

/*
 * Resolve [off, end) of file fi of v (fi < v->nfiles, not dead) into
 * *pieces (malloc'd, *n of them, in file order), bringing the index up to
 * date first (an open version's records still change).  Holes and zero
 * records make no piece: with dst non-NULL (end - off bytes) they are
 * zeroed there; with NULL, the caller's buffer must already be zeros.
 * 0 or -ENOMEM (*pieces then NULL).
 */
int rindex_resolve(struct version *v, uint32_t fi, uint64_t off, uint64_t end,
		   uint8_t *dst, struct rpiece **pieces, uint32_t *n);

/*
 * The first run of data in [off, end) of file fi of v, as extmap_data()
 * (end clipped to the file's size here), bringing the index up to date
 * first.  0, -ENXIO (no data in the range) or -ENOMEM.
 */
int rindex_data(struct version *v, uint32_t fi, uint64_t off, uint64_t end,
		uint64_t *data, uint64_t *len);

/*
 * Chain the pieces that read the same record (rpiece.next), so that each
 * record is read once and its completion visits only its own pieces:
 * first[i] is i for the first piece of each record, RPIECE_END for the
 * others (first has n slots).  Linear.  0 or -ENOMEM.
 */
int rindex_chain(struct rpiece *p, uint32_t n, uint32_t *first);

#endif
