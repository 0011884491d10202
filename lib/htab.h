/*
 * htab.h - an intrusive hash table with chained nodes: ckptd's indexes of
 * its jobs by name and of each job's versions by name (server/store/catalog.c).
 *
 * The caller embeds a struct hnode in each element, hashes the element's
 * key itself (name_hash(), namehash.h: keyed, so that no client can choose
 * names that share a chain) and compares keys while it walks the chain of
 * a hash:
 *
 *	for (n = htab_find(&t, h); n; n = htab_next(n))
 *		if (!strcmp(list_entry(n, struct job, hnode)->name, name))
 *			...
 *
 * The table owns its bucket array only, never the elements.  It doubles
 * when it holds more elements than buckets; a failed doubling (out of
 * memory) is not an error: the chains grow longer and stay correct.
 *
 * Threads: none of its own; the caller serialises every call on a table.
 */
#ifndef CKPT_HTAB_H
#define CKPT_HTAB_H

#include <stdint.h>

struct hnode {
	struct hnode *next;       /* in its bucket */
	uint32_t hash;
};

struct htab {
	struct hnode **b;         /* buckets; NULL until htab_init() */
	uint32_t mask;            /* buckets - 1 (a power of two) */
	uint32_t n;               /* elements */
};

/* An empty table of at least cap buckets (16 at least): 0, or -ENOMEM. */
int htab_init(struct htab *t, uint32_t cap);
/* Free the buckets (the elements are the caller's); t is empty after. */
void htab_free(struct htab *t);
/* Add n under hash (n must be in no table). */
void htab_add(struct htab *t, struct hnode *n, uint32_t hash);
/* Take n out of t (n must be in t). */
void htab_del(struct htab *t, struct hnode *n);
/* The first element added under hash that is still there, or NULL. */
struct hnode *htab_find(const struct htab *t, uint32_t hash);
/* The next element after n under n's hash, or NULL. */
struct hnode *htab_next(const struct hnode *n);

#endif
