/*
 * rindex.c - a byte range of a file resolved into pieces of its records,
 * through the version's read index (rindex.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "extmap.h"
#include "rindex.h"

/*
 * Lay the records idx[0 .. n) (of one file, in write order, all newer than
 * what m holds) over m: one at a time (log time to find its place, then the
 * extents after it move) while the extents moved so far stay fewer than the
 * map holds, which keeps appends and rewrites near the end cheap; the rest,
 * once that is passed, indexed on their own and merged in one linear pass.
 * 0 or -ENOMEM (m then partly updated).
 */
static int index_apply(const struct version *v, struct extmap *m,
		       const uint32_t *idx, uint32_t n)
{
	struct extmap part;
	uint64_t moved = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		moved += m->n - extmap_find(m, v->recs[idx[i]].file_off);
		if (moved > m->n)
			break;
		ret = extmap_apply(m, v->recs, idx[i]);
		if (ret < 0)
			return ret;
	}
	if (i == n)
		return 0;
	ret = extmap_build(v->recs, idx + i, n - i, &part);
	if (ret < 0)
		return ret;
	ret = extmap_merge(m, &part);
	extmap_release(&part);
	return ret;
}

/* Make room in v->rindex for a map per file entry (new ones empty). */
static int index_grow(struct version *v)
{
	uint32_t n = v->nrindex ? v->nrindex : 16;
	struct extmap *maps;

	while (n < v->nfiles)
		n *= 2;
	if (v->rindex && n == v->nrindex)
		return 0;
	maps = realloc(v->rindex, sizeof(*maps) * n);
	if (!maps)
		return -ENOMEM;
	memset(maps + v->nrindex, 0, sizeof(*maps) * (n - v->nrindex));
	v->rindex = maps;
	v->nrindex = n;
	return 0;
}

/*
 * Bring the read index of v up to date with its records: those appended
 * since the last resolve (all of them the first time, a sealed copy's at
 * its first read), grouped by file in write order (extmap_by_file()),
 * each file's laid over its map.  Records of a dead entry
 * (unlinked: never read again) are skipped.  On failure the index is
 * dropped, to be made anew by the next read.  0 or -ENOMEM.
 */
static int index_update(struct version *v)
{
	uint32_t k, i, s, f, *idx = NULL;
	int ret;

	if (v->rapplied > v->nrecs)       /* records were dropped */
		version_drop_index(v);
	k = v->nrecs - v->rapplied;
	ret = index_grow(v);
	if (ret < 0 || !k)
		return ret;
	ret = -ENOMEM;
	idx = malloc(sizeof(*idx) * k);
	if (!idx || (ret = extmap_by_file(v->recs, v->rapplied, k, idx)) < 0)
		goto out_drop;
	for (s = 0; s < k; s = i) {
		f = v->recs[idx[s]].file;
		for (i = s; i < k && v->recs[idx[i]].file == f; i++)
			;
		if (f >= v->nfiles || v->files[f].dead) {
			if (f < v->nfiles)
				extmap_release(&v->rindex[f]);
			continue;
		}
		ret = index_apply(v, &v->rindex[f], idx + s, i - s);
		if (ret < 0)
			goto out_drop;
	}
	v->rapplied = v->nrecs;
	ret = 0;
	goto out_free;
out_drop:
	version_drop_index(v);
out_free:
	free(idx);
	return ret;
}

/* Zero [a, b) of the range at off in dst, if there is a dst. */
static void zero(uint8_t *dst, uint64_t off, uint64_t a, uint64_t b)
{
	if (dst && b > a)
		memset(dst + (a - off), 0, b - a);
}

int rindex_resolve(struct version *v, uint32_t fi, uint64_t off, uint64_t end,
		   uint8_t *dst, struct rpiece **pieces, uint32_t *n)
{
	const struct extmap *m;
	struct rpiece *p;
	uint64_t at = off;
	uint32_t e, np = 0, cap = 8;
	int ret;

	*pieces = NULL;
	*n = 0;
	ret = index_update(v);
	if (ret < 0)
		return ret;
	m = &v->rindex[fi];
	p = malloc(sizeof(*p) * cap);
	if (!p)
		return -ENOMEM;
	for (e = extmap_find(m, off); e < m->n && at < end; e++) {
		const struct ext *x = &m->v[e];
		const struct man_rec *rec = &v->recs[x->rec];
		uint64_t a = x->off > at ? x->off : at;
		uint64_t b = x->off + x->len < end ? x->off + x->len : end;

		if (a >= end)
			break;
		zero(dst, off, at, a);           /* a hole before it */
		at = b;
		if (rec->seg == MAN_SEG_ZERO) {
			zero(dst, off, a, b);
			continue;
		}
		if (np == cap) {
			struct rpiece *q = realloc(p, sizeof(*p) * cap * 2);

			if (!q) {
				free(p);
				return -ENOMEM;
			}
			p = q;
			cap *= 2;
		}
		p[np++] = (struct rpiece){
			.dst = a - off,
			.src = a - rec->file_off,
			.len = b - a,
			.rec = x->rec,
			.next = RPIECE_END,
		};
	}
	zero(dst, off, at, end);
	*pieces = p;
	*n = np;
	return 0;
}

int rindex_data(struct version *v, uint32_t fi, uint64_t off, uint64_t end,
		uint64_t *data, uint64_t *len)
{
	int ret = index_update(v);

	if (ret < 0)
		return ret;
	if (end > v->files[fi].size)
		end = v->files[fi].size;
	return extmap_data(&v->rindex[fi], v->recs, off, end, data, len);
}

int rindex_chain(struct rpiece *p, uint32_t n, uint32_t *first)
{
	uint32_t cap = 16, mask, i, h, *slot;

	while (cap < 2 * n)
		cap *= 2;
	mask = cap - 1;
	slot = malloc(sizeof(*slot) * cap);
	if (!slot)
		return -ENOMEM;
	memset(slot, 0xff, sizeof(*slot) * cap);     /* RPIECE_END */
	for (i = 0; i < n; i++) {
		p[i].next = RPIECE_END;
		first[i] = i;
		for (h = (p[i].rec * 2654435761u) & mask;
		     slot[h] != RPIECE_END && p[slot[h]].rec != p[i].rec;
		     h = (h + 1) & mask)
			;
		if (slot[h] != RPIECE_END) {
			p[slot[h]].next = i;
			first[i] = RPIECE_END;
		}
		slot[h] = i;
	}
	free(slot);
	return 0;
}
