/*
 * extmap.c - a file's read index (see extmap.h).
 *
 * A sweep over the sorted record boundaries with a max-heap of the records
 * that have started, keyed by write order: at each boundary the records
 * that ended leave the top (lazily: an ended record below the top stays
 * until it reaches it), and the top, the newest record covering the span to
 * the next boundary, owns that span.
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

void extmap_release(struct extmap *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
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
