/*
 * extmap.h - the read index of one file of a version: its bytes as
 * non-overlapping extents, each taken from the newest record that covers
 * it, sorted by offset, so that a read finds its first extent by binary
 * search instead of scanning every record of the version.
 *
 * A file is the records written to it (manifest.h), a later record winning
 * where two overlap; bytes no record covers are holes (zeros); a zero
 * record (MAN_SEG_ZERO, from truncate) reads as zeros too but hides what is
 * under it, so it is kept as an extent.  At most 2n - 1 extents for n
 * records.
 *
 * The map is canonical: extents are maximal runs of one record (two
 * adjacent extents never name the same record), so that the same records
 * give the same map however it was made.  It is made whole from a set of
 * records (extmap_build, O(n log n)), or grown as records arrive, each newer
 * than all before (extmap_apply for one, O(log n) plus moving the extents
 * after it; extmap_merge for a batch, linear).  Library code: no I/O, not
 * thread-safe (one map, one thread at a time).
 */
#ifndef CKPT_EXTMAP_H
#define CKPT_EXTMAP_H

#include <stdint.h>

#include "manifest.h"

struct ext {
	uint64_t off;             /* in the file */
	uint64_t len;             /* > 0 */
	uint32_t rec;             /* the record's index in the version's
				   * records; its bytes at off - file_off */
};

/* An empty map is all zeros (no allocation); _release() makes it so. */
struct extmap {
	struct ext *v;            /* owned, sorted by off, not overlapping */
	uint32_t n;
	uint32_t cap;             /* extents v has room for */
};

/*
 * Build the map of the file whose records are recs[idx[0]], ...,
 * recs[idx[n - 1]], oldest first (idx in write order).  Records of length 0
 * are ignored.  0 or -ENOMEM (out is then empty).
 */
int extmap_build(const struct man_rec *recs, const uint32_t *idx, uint32_t n,
		 struct extmap *out);
/*
 * Lay record recs[rec] over m: the extents it overlaps are cut or replaced
 * (a zero record too: it stays as an extent).  The record must be newer
 * than every record already in m; length 0 changes nothing.  0, or -ENOMEM
 * with m unchanged.
 */
int extmap_apply(struct extmap *m, const struct man_rec *recs, uint32_t rec);
/*
 * Lay the map newer (of records all newer than m's) over m, as applying
 * its records in order would: O(m->n + newer->n).  0, or -ENOMEM with m
 * unchanged.  newer is not changed.
 */
int extmap_merge(struct extmap *m, const struct extmap *newer);
void extmap_release(struct extmap *m);
/* Give back the room m holds beyond its extents (extmap_build() reserves
 * 2n + 1 for n records), for a map that is kept and not grown; a map grown
 * later makes room again (extmap_apply).  Failing, m stays as it was. */
void extmap_trim(struct extmap *m);
/*
 * Records first .. first + n - 1 of recs grouped by file: idx (n entries,
 * the caller's) gets their indices, files in ascending order, each file's
 * records in write order, ready for extmap_build() one file at a time.
 * 0 or -ENOMEM.
 */
int extmap_by_file(const struct man_rec *recs, uint32_t first, uint32_t n,
		   uint32_t *idx);
/* Index of the first extent that ends after off (m->n if none). */
uint32_t extmap_find(const struct extmap *m, uint64_t off);
/*
 * The first run of data in [off, end) of the file m maps (recs: the
 * version's records; end already clipped to the file's size): bytes an
 * extent of a record that is not a zero record covers.  *data is where it
 * starts and *len its bytes up to the first hole, zero record or end;
 * every byte of [off, end) outside such runs reads as zeros.  0, or
 * -ENXIO if the range holds no data.  Looks at the extents in the range
 * only (from one extmap_find()), and at most EXTMAP_RUN_MAX of them: a
 * longer run is answered in parts (it then ends before its hole; ask
 * again from its end), and past that many zero records before any data,
 * the next one is answered as a run (it reads as zeros: a reader only
 * reads zeros it could have skipped).
 */
#define EXTMAP_RUN_MAX 65536
int extmap_data(const struct extmap *m, const struct man_rec *recs,
		uint64_t off, uint64_t end, uint64_t *data, uint64_t *len);

#endif
