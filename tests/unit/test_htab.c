/*
 * test_htab.c - the intrusive hash table of ckptd's indexes: every element
 * found after the table doubles many times, none after it is taken out;
 * elements of one hash walked in the order they were added (before and
 * after a doubling), and never an element of another hash sharing the
 * bucket; and random adds and removals checked against a plain array.
 */
#include <stdint.h>
#include <stdlib.h>

#include "unit.h"

#include "htab.h"
#include "list.h"

struct elem {
	struct hnode hn;
	uint32_t key;
	int in;
};

#define N 20000
static struct elem e[N];

static uint32_t hash_of(uint32_t key)
{
	return key * 2654435761u;
}

/* How many elements of key are in t (walking the chain of its hash). */
static unsigned count(const struct htab *t, uint32_t key, uint32_t hash)
{
	struct hnode *n;
	unsigned c = 0;

	for (n = htab_find(t, hash); n; n = htab_next(n)) {
		CU_ASSERT_EQUAL(n->hash, hash);
		c += list_entry(n, struct elem, hn)->key == key;
	}
	return c;
}

static void test_grow(void)
{
	struct htab t;
	uint32_t i;

	CU_ASSERT_EQUAL_FATAL(htab_init(&t, 0), 0);
	CU_ASSERT_EQUAL(t.mask + 1, 16);
	for (i = 0; i < N; i++) {
		e[i].key = i;
		htab_add(&t, &e[i].hn, hash_of(i));
	}
	CU_ASSERT_EQUAL(t.n, N);
	CU_ASSERT(t.mask + 1 >= N);     /* it doubled as it filled */
	for (i = 0; i < N; i++)
		CU_ASSERT_EQUAL(count(&t, i, hash_of(i)), 1);
	for (i = 0; i < N; i += 2)
		htab_del(&t, &e[i].hn);
	CU_ASSERT_EQUAL(t.n, N / 2);
	for (i = 0; i < N; i++)
		CU_ASSERT_EQUAL(count(&t, i, hash_of(i)), i & 1);
	CU_ASSERT_PTR_NULL(htab_find(&t, hash_of(N + 1)));
	htab_free(&t);
	CU_ASSERT_PTR_NULL(t.b);
}

static void test_collide(void)
{
	struct htab t;
	struct hnode *n;
	uint32_t i, k;

	CU_ASSERT_EQUAL_FATAL(htab_init(&t, 0), 0);
	/* 100 of hash 7, 100 of hash 7 + 16 (one bucket until it doubles),
	 * and others in between that make it double. */
	for (i = 0; i < 300; i++) {
		e[i].key = i;
		htab_add(&t, &e[i].hn, i < 100 ? 7 : i < 200 ? 7 + 16 :
					 hash_of(i));
		if (i == 50)
			CU_ASSERT_EQUAL(t.mask + 1, 64);
	}
	CU_ASSERT(t.mask + 1 >= 256);
	htab_del(&t, &e[40].hn);
	htab_del(&t, &e[0].hn);
	htab_del(&t, &e[99].hn);
	for (k = 0, i = 1, n = htab_find(&t, 7); n; n = htab_next(n), k++) {
		CU_ASSERT_EQUAL(list_entry(n, struct elem, hn)->key, i);
		i += i == 39 ? 2 : 1;
	}
	CU_ASSERT_EQUAL(k, 97);
	for (k = 0, n = htab_find(&t, 7 + 16); n; n = htab_next(n), k++)
		CU_ASSERT_EQUAL(list_entry(n, struct elem, hn)->key, 100 + k);
	CU_ASSERT_EQUAL(k, 100);
	htab_free(&t);
}

static void test_model(void)
{
	struct htab t;
	uint32_t i, k, in = 0;

	srandom(42);
	CU_ASSERT_EQUAL_FATAL(htab_init(&t, 1000), 0);
	CU_ASSERT_EQUAL(t.mask + 1, 1024);
	for (i = 0; i < N; i++) {
		e[i].key = i;
		e[i].in = 0;
	}
	for (i = 0; i < 200000; i++) {
		k = (uint32_t)random() % N;
		/* few distinct hashes: long chains of several keys */
		if (e[k].in) {
			htab_del(&t, &e[k].hn);
			in--;
		} else {
			htab_add(&t, &e[k].hn, hash_of(k % 997));
			in++;
		}
		e[k].in = !e[k].in;
		CU_ASSERT_EQUAL(t.n, in);
		if (i % 1000 == 0) {
			k = (uint32_t)random() % N;
			CU_ASSERT_EQUAL(count(&t, k, hash_of(k % 997)),
					(unsigned)e[k].in);
		}
	}
	for (k = 0; k < N; k++)
		if (count(&t, k, hash_of(k % 997)) != (unsigned)e[k].in)
			break;
	CU_ASSERT_EQUAL(k, N);
	htab_free(&t);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "grow", test_grow },
		{ "collide", test_collide },
		{ "model", test_model },
		{ NULL, NULL }
	};

	return unit_run("htab", tests);
}
