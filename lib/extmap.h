/*
 * extmap.h - the read index of one file of a sealed version: its bytes as
 * non-overlapping extents, each taken from the newest record that covers
 * it, sorted by offset, so that a read finds its first extent by binary
 * search instead of scanning every record of the version.
 *
 * A file is the records written to it (manifest.h), a later record winning
 * where two overlap; bytes no record covers are holes (zeros); a zero
 * record (MAN_SEG_ZERO, from truncate) reads as zeros too but hides what is
 * under it, so it is kept as an extent.  Built in O(n log n) for n records;
 * at most 2n - 1 extents.  Library code: no I/O.
 */
#ifndef CKPT_EXTMAP_H
#define CKPT_EXTMAP_H

#include <stdint.h>

#include "manifest.h"

struct ext {
	uint64_t off;             /* in the file */
	uint64_t len;
	uint32_t rec;             /* the record's index in the version's
				   * records; its bytes at off - file_off */
};

struct extmap {
	struct ext *v;            /* owned, sorted by off, not overlapping */
	uint32_t n;
};

/*
 * Build the map of the file whose records are recs[idx[0]], ...,
 * recs[idx[n - 1]], oldest first (idx in write order).  Records of length 0
 * are ignored.  0 or -ENOMEM (out is then empty).
 */
int extmap_build(const struct man_rec *recs, const uint32_t *idx, uint32_t n,
		 struct extmap *out);
void extmap_release(struct extmap *m);
/* Index of the first extent that ends after off (m->n if none). */
uint32_t extmap_find(const struct extmap *m, uint64_t off);

#endif
