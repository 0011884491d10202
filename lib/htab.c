/*
 * htab.c - an intrusive hash table with chained nodes.  See htab.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "htab.h"

int htab_init(struct htab *t, uint32_t cap)
{
	uint32_t n = 16;

	while (n < cap && n < (1u << 31))
		n *= 2;
	t->b = calloc(n, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->mask = n - 1;
	t->n = 0;
	return 0;
}

void htab_free(struct htab *t)
{
	free(t->b);
	t->b = NULL;
	t->mask = 0;
	t->n = 0;
}

/* Double the buckets: chains keep their order (first added first). */
static void grow(struct htab *t)
{
	uint32_t cap = t->mask + 1, i;
	struct hnode **b, **tail, *n, *next;

	if (cap >= (1u << 31))
		return;
	b = calloc((size_t)cap * 2, sizeof(*b));
	if (!b)
		return;             /* longer chains, still correct */
	for (i = 0; i < cap; i++) {
		for (n = t->b[i]; n; n = next) {
			next = n->next;
			tail = &b[n->hash & (cap * 2 - 1)];
			while (*tail)
				tail = &(*tail)->next;
			n->next = NULL;
			*tail = n;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = cap * 2 - 1;
}

void htab_add(struct htab *t, struct hnode *n, uint32_t hash)
{
	struct hnode **p;

	if (t->n >= t->mask + 1)
		grow(t);
	n->hash = hash;
	n->next = NULL;
	for (p = &t->b[hash & t->mask]; *p; p = &(*p)->next)
		;
	*p = n;
	t->n++;
}

void htab_del(struct htab *t, struct hnode *n)
{
	struct hnode **p;

	for (p = &t->b[n->hash & t->mask]; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			n->next = NULL;
			t->n--;
			return;
		}
	}
}

struct hnode *htab_find(const struct htab *t, uint32_t hash)
{
	struct hnode *n;

	for (n = t->b[hash & t->mask]; n; n = n->next)
		if (n->hash == hash)
			return n;
	return NULL;
}

struct hnode *htab_next(const struct hnode *n)
{
	uint32_t hash = n->hash;

	for (n = n->next; n; n = n->next)
		if (n->hash == hash)
			return (struct hnode *)n;
	return NULL;
}
