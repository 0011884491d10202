/*
 * extmap.c - a file's read index (see extmap.h).
 *
 * extmap_build: a sweep over the sorted record boundaries with a max-heap
 * of the records that have started, keyed by write order: at each boundary
 * the records that ended leave the top (lazily: an ended record below the
 * top stays until it reaches it), and the top, the newest record covering
 * the span to the next boundary, owns that span.
 *
 * extmap_apply: the extents a new record overlaps are a run [i, j) found by
 * two binary searches; the run becomes at most three extents (what is left
 * of the first one on the left, the record, what is left of the last one on
 * the right) and the extents after it move by the difference.  A record
 * newer than all in the map can never continue a neighbour's record, so
 * the map stays canonical without merging.
 *
 * extmap_merge: one pass over both maps in offset order, the old extents
 * cut around the newer ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extmap.h"

struct item {
	uint64_t start, end;
	uint32_t age;             /* position in write order: newer is larger */
};

static int cmp_start(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Max-heap of item pointers by age. */
static void heap_push(const struct item **h, uint32_t *n,
		      const struct item *it)
{
	uint32_t i = (*n)++;

	while (i && h[(i - 1) / 2]->age < it->age) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = it;
}

static void heap_pop(const struct item **h, uint32_t *n)
{
	const struct item *last = h[--(*n)];
	uint32_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1]->age > h[c]->age)
			c++;
		if (h[c]->age <= last->age)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
}

int extmap_build(const struct man_rec *recs, const uint32_t *idx, uint32_t n,
		 struct extmap *out)
{
	const struct item **heap = NULL;
	struct item *items = NULL;
	uint64_t *bounds = NULL;
	uint32_t ni = 0, nb = 0, nh = 0, i, j, next = 0;
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	items = malloc(sizeof(*items) * (n ? n : 1));
	bounds = malloc(sizeof(*bounds) * (2 * (size_t)n + 1));
	heap = malloc(sizeof(*heap) * (n ? n : 1));
	out->v = malloc(sizeof(*out->v) * (2 * (size_t)n + 1));
	if (!items || !bounds || !heap || !out->v)
		goto out_free;
	out->cap = 2 * n + 1;
	for (i = 0; i < n; i++) {
		const struct man_rec *r = &recs[idx[i]];

		if (!r->len)
			continue;
		items[ni] = (struct item){ r->file_off, r->file_off + r->len, i };
		bounds[nb++] = items[ni].start;
		bounds[nb++] = items[ni].end;
		ni++;
	}
	qsort(items, ni, sizeof(*items), cmp_start);
	qsort(bounds, nb, sizeof(*bounds), cmp_u64);
	for (j = 0; j + 1 < nb; j++) {
		uint64_t a = bounds[j], b = bounds[j + 1];
		uint32_t rec;
		struct ext *last;

		while (next < ni && items[next].start <= a)
			heap_push(heap, &nh, &items[next++]);
		while (nh && heap[0]->end <= a)
			heap_pop(heap, &nh);
		if (a == b || !nh)
			continue;
		rec = idx[heap[0]->age];
		last = out->n ? &out->v[out->n - 1] : NULL;
		if (last && last->rec == rec && last->off + last->len == a)
			last->len += b - a;
		else
			out->v[out->n++] = (struct ext){ a, b - a, rec };
	}
	ret = 0;
out_free:
	free(heap);
	free(bounds);
	free(items);
	if (ret < 0)
		extmap_release(out);
	return ret;
}

int extmap_by_file(const struct man_rec *recs, uint32_t first, uint32_t n,
		   uint32_t *idx)
{
	uint64_t *keys = malloc(sizeof(*keys) * (n ? n : 1));
	uint32_t i;

	if (!keys)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		keys[i] = (uint64_t)recs[first + i].file << 32 | (first + i);
	if (n > 1)
		qsort(keys, n, sizeof(*keys), cmp_u64);
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)keys[i];
	free(keys);
	return 0;
}

void extmap_trim(struct extmap *m)
{
	struct ext *v;

	if (m->n + 1 >= m->cap)
		return;
	v = realloc(m->v, sizeof(*v) * (m->n + 1));
	if (v) {
		m->v = v;
		m->cap = m->n + 1;
	}
}

void extmap_release(struct extmap *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Make room for need extents (doubling).  0 or -ENOMEM (m unchanged). */
static int reserve(struct extmap *m, uint64_t need)
{
	uint64_t cap = m->cap ? m->cap : 8;
	struct ext *v;

	if (need <= m->cap)
		return 0;
	if (need > UINT32_MAX)
		return -ENOMEM;
	while (cap < need)
		cap *= 2;
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	v = realloc(m->v, sizeof(*v) * cap);
	if (!v)
		return -ENOMEM;
	m->v = v;
	m->cap = (uint32_t)cap;
	return 0;
}

/* Index of the first extent from lo on that starts at or after off. */
static uint32_t find_start(const struct extmap *m, uint32_t lo, uint64_t off)
{
	uint32_t hi = m->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int extmap_apply(struct extmap *m, const struct man_rec *recs, uint32_t rec)
{
	const struct man_rec *r = &recs[rec];
	uint64_t off = r->file_off, end = off + r->len;
	struct ext left = { 0 }, right = { 0 }, *at;
	uint32_t i, j, add;
	int ret;

	if (!r->len)
		return 0;
	i = extmap_find(m, off);       /* the run [i, j) overlaps the record */
	j = find_start(m, i, end);
	if (i < j && m->v[i].off < off)
		left = (struct ext){ m->v[i].off, off - m->v[i].off, m->v[i].rec };
	if (i < j && m->v[j - 1].off + m->v[j - 1].len > end)
		right = (struct ext){ end, m->v[j - 1].off + m->v[j - 1].len - end,
				      m->v[j - 1].rec };
	add = 1 + !!left.len + !!right.len;
	ret = reserve(m, (uint64_t)m->n - (j - i) + add);
	if (ret < 0)
		return ret;
	memmove(&m->v[i + add], &m->v[j], sizeof(*m->v) * (m->n - j));
	m->n = m->n - (j - i) + add;
	at = &m->v[i];
	if (left.len)
		*at++ = left;
	*at++ = (struct ext){ off, r->len, rec };
	if (right.len)
		*at = right;
	return 0;
}

/* Append [off, off + len) of rec to v (room checked by the caller),
 * continuing the last extent when it is the same record's. */
static void emit(struct ext *v, uint32_t *n, uint64_t off, uint64_t len,
		 uint32_t rec)
{
	struct ext *last = *n ? &v[*n - 1] : NULL;

	if (!len)
		return;
	if (last && last->rec == rec && last->off + last->len == off)
		last->len += len;
	else
		v[(*n)++] = (struct ext){ off, len, rec };
}

int extmap_merge(struct extmap *m, const struct extmap *newer)
{
	const struct ext *nv = newer->v;
	uint64_t cap = (uint64_t)m->n + 2 * (uint64_t)newer->n;
	uint32_t e, j = 0, n = 0;
	struct ext *out;

	if (!newer->n)
		return 0;
	/* Each newer extent cuts at most one old extent in two. */
	if (cap > UINT32_MAX)
		return -ENOMEM;
	out = malloc(sizeof(*out) * cap);
	if (!out)
		return -ENOMEM;
	for (e = 0; e < m->n; e++) {
		uint64_t a = m->v[e].off, end = a + m->v[e].len, b;

		while (a < end) {
			/* the newer extents that end by a come first */
			while (j < newer->n && nv[j].off + nv[j].len <= a) {
				emit(out, &n, nv[j].off, nv[j].len, nv[j].rec);
				j++;
			}
			if (j < newer->n && nv[j].off <= a) {  /* hidden */
				b = nv[j].off + nv[j].len;
				a = b < end ? b : end;
				continue;
			}
			b = j < newer->n && nv[j].off < end ? nv[j].off : end;
			emit(out, &n, a, b - a, m->v[e].rec);
			a = b;
		}
	}
	for (; j < newer->n; j++)
		emit(out, &n, nv[j].off, nv[j].len, nv[j].rec);
	free(m->v);
	m->v = out;
	m->n = n;
	m->cap = (uint32_t)cap;
	return 0;
}

uint32_t extmap_find(const struct extmap *m, uint64_t off)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].off + m->v[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int ext_data(const struct man_rec *recs, const struct ext *x)
{
	return recs[x->rec].seg != MAN_SEG_ZERO;
}

int extmap_data(const struct extmap *m, const struct man_rec *recs,
		uint64_t off, uint64_t end, uint64_t *data, uint64_t *len)
{
	uint32_t e = extmap_find(m, off), k = 0;
	uint64_t b;

	if (off >= end)
		return -ENXIO;
	/* zero records before the data: past EXTMAP_RUN_MAX of them, the
	 * next is answered as data (it reads as zeros: safe) */
	for (; e < m->n && m->v[e].off < end && !ext_data(recs, &m->v[e]) &&
	       ++k < EXTMAP_RUN_MAX; e++)
		;
	if (e == m->n || m->v[e].off >= end)
		return -ENXIO;
	*data = m->v[e].off > off ? m->v[e].off : off;
	b = m->v[e].off + m->v[e].len;
	/* the run goes on through extents that touch and hold data */
	for (k = 1; ext_data(recs, &m->v[e]) && b < end &&
	     k++ < EXTMAP_RUN_MAX && ++e < m->n && m->v[e].off == b &&
	     ext_data(recs, &m->v[e]);)
		b += m->v[e].len;
	*len = (b < end ? b : end) - *data;
	return 0;
}

