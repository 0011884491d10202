/*
 * test_place.c - unit tests for lib/place: groups and shard placement.
 *
 * Every placement computed here is checked against the rules of place.h by
 * one function (check_rules): a node's peers are k+m-1 distinct members of
 * its own group, never itself; every group has k+m to 2(k+m)-1 members; the
 * reported worst is the real most shards of one stripe in one domain, and
 * no stripe could do better than its group's domains allow.  On top of
 * that: the cases the cluster issue names (6 nodes in 3 domains of 2 for
 * 4+2), order independence, the load each node carries, and bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "unit.h"

static struct place_node *make_nodes(uint32_t n, uint32_t ndom)
{
	struct place_node *v = calloc(n, sizeof(*v));
	uint32_t i;

	for (i = 0; v && i < n; i++) {
		snprintf(v[i].name, sizeof(v[i].name), "gpu%03u", i);
		if (ndom)
			snprintf(v[i].domain, sizeof(v[i].domain), "rack%u",
				 i % ndom);
	}
	return v;
}

static const char *dom_of(const struct placement *p, uint32_t i)
{
	return p->nodes[i].domain[0] ? p->nodes[i].domain : p->nodes[i].name;
}

/* The fewest shards one domain must hold when a stripe of `shards` is
 * spread over the members of group g: the smallest t with the sum over the
 * group's domains of min(members there, t) >= shards. */
static uint32_t best_possible(const struct placement *p, uint32_t g,
			      uint32_t shards)
{
	uint32_t t, i, j, sum;

	for (t = 1;; t++) {
		sum = 0;
		for (i = 0; i < p->n; i++) {
			uint32_t in = 0;

			if (p->group[i] != g)
				continue;
			for (j = 0; j < i; j++)
				if (p->group[j] == g &&
				    !strcmp(dom_of(p, i), dom_of(p, j)))
					break;
			if (j < i)
				continue;       /* domain counted already */
			for (j = i; j < p->n; j++)
				in += p->group[j] == g &&
				      !strcmp(dom_of(p, i), dom_of(p, j));
			sum += in < t ? in : t;
		}
		if (sum >= shards)
			return t;
	}
}

static void check_rules(const struct placement *p)
{
	uint32_t w = p->k + p->m - 1, i, s, t, g, worst = 0, most, cnt;

	uint32_t *members = calloc(p->ngroups, sizeof(*members));

	CU_ASSERT_FATAL(members != NULL);
	CU_ASSERT(p->ngroups == p->n / (p->k + p->m));
	for (i = 0; i < p->n; i++) {
		CU_ASSERT_FATAL(p->group[i] < p->ngroups);
		members[p->group[i]]++;
	}
	for (g = 0; g < p->ngroups; g++) {
		CU_ASSERT(members[g] >= p->k + p->m);
		CU_ASSERT(members[g] <= 2 * (p->k + p->m) - 1);
	}
	for (i = 0; i < p->n; i++) {
		most = 0;
		for (s = 1; s <= w; s++) {
			uint32_t q = place_peer(p, i, s);

			CU_ASSERT_FATAL(q < p->n);
			CU_ASSERT(q != i);
			CU_ASSERT(p->group[q] == p->group[i]);
			for (t = 1; t < s; t++)
				CU_ASSERT(place_peer(p, i, t) != q);
		}
		/* Shards of i's stripe per domain: its own (shard 0) too. */
		for (s = 0; s <= w; s++) {
			uint32_t a = s ? place_peer(p, i, s) : i;

			cnt = 0;
			for (t = 0; t <= w; t++) {
				uint32_t b = t ? place_peer(p, i, t) : i;

				cnt += !strcmp(dom_of(p, a), dom_of(p, b));
			}
			if (cnt > most)
				most = cnt;
		}
		/* As even as the group's domains allow. */
		CU_ASSERT_EQUAL(most, best_possible(p, p->group[i], w + 1));
		if (most > worst)
			worst = most;
	}
	CU_ASSERT_EQUAL(p->worst, worst);
	free(members);
}

/* The cluster issue's case: 6 nodes, 3 domains of 2, ec 4+2. */
static void test_six_in_three(void)
{
	struct place_node *v = make_nodes(6, 3);
	struct placement p;

	CU_ASSERT_EQUAL_FATAL(place_compute(v, 6, 4, 2, &p), 0);
	CU_ASSERT_EQUAL(p.ngroups, 1);
	check_rules(&p);
	/* 6 shards over 3 domains: two in each, so one domain may go. */
	CU_ASSERT_EQUAL(p.worst, 2);
	CU_ASSERT_EQUAL(place_domains_lost_ok(&p), 1);
	place_release(&p);
	free(v);
}

/* Every node its own domain: no two shards share one; m domains may go. */
static void test_own_domains(void)
{
	struct place_node *v = make_nodes(17, 0);
	struct placement p;

	CU_ASSERT_EQUAL_FATAL(place_compute(v, 17, 4, 2, &p), 0);
	CU_ASSERT_EQUAL(p.ngroups, 2);
	check_rules(&p);
	CU_ASSERT_EQUAL(p.worst, 1);
	CU_ASSERT_EQUAL(place_domains_lost_ok(&p), 2);
	place_release(&p);
	free(v);
}

/* Enough domains: the groups spread them, and no stripe doubles up. */
static void test_spread_domains(void)
{
	struct place_node *v = make_nodes(12, 6);
	struct placement p;
	uint32_t i, j;

	CU_ASSERT_EQUAL_FATAL(place_compute(v, 12, 4, 2, &p), 0);
	CU_ASSERT_EQUAL(p.ngroups, 2);
	check_rules(&p);
	CU_ASSERT_EQUAL(p.worst, 1);
	/* The two nodes of a rack are in different groups. */
	for (i = 0; i < 12; i++)
		for (j = i + 1; j < 12; j++)
			if (!strcmp(p.nodes[i].domain, p.nodes[j].domain))
				CU_ASSERT(p.group[i] != p.group[j]);
	place_release(&p);
	free(v);
}

/* The same set in any order gives the same placement, by name. */
static void test_order_independent(void)
{
	struct place_node *v = make_nodes(40, 5), *w = make_nodes(40, 5);
	struct placement a, b;
	uint32_t i, s;
	unsigned seed = 7;

	for (i = 39; i > 0; i--) {        /* Fisher-Yates, fixed seed */
		uint32_t j = (uint32_t)rand_r(&seed) % (i + 1);
		struct place_node t = w[i];

		w[i] = w[j];
		w[j] = t;
	}
	CU_ASSERT_EQUAL_FATAL(place_compute(v, 40, 8, 2, &a), 0);
	CU_ASSERT_EQUAL_FATAL(place_compute(w, 40, 8, 2, &b), 0);
	check_rules(&a);
	for (i = 0; i < 40; i++) {
		CU_ASSERT_STRING_EQUAL(a.nodes[i].name, b.nodes[i].name);
		CU_ASSERT_EQUAL(a.group[i], b.group[i]);
		for (s = 1; s < 10; s++)
			CU_ASSERT_EQUAL(place_peer(&a, i, s), place_peer(&b, i, s));
	}
	CU_ASSERT_EQUAL(place_find(&a, "gpu017"), 17);
	CU_ASSERT_EQUAL(place_find(&a, "gpu999"), -ENOENT);
	place_release(&a);
	place_release(&b);
	free(v);
	free(w);
}

/* Each node holds shards for others: about as many as it sends. */
static void test_load(void)
{
	struct place_node *v = make_nodes(24, 0);
	struct placement p;
	uint32_t held[24] = { 0 }, i, s, lo = ~0u, hi = 0;

	CU_ASSERT_EQUAL_FATAL(place_compute(v, 24, 4, 2, &p), 0);
	check_rules(&p);
	for (i = 0; i < 24; i++)
		for (s = 1; s < 6; s++)
			held[place_peer(&p, i, s)]++;
	for (i = 0; i < 24; i++) {
		lo = held[i] < lo ? held[i] : lo;
		hi = held[i] > hi ? held[i] : hi;
	}
	CU_ASSERT_EQUAL(lo, 5);
	CU_ASSERT_EQUAL(hi, 5);
	place_release(&p);
	free(v);
}

/* Uneven cases, many sizes: the rules hold for every one. */
static void test_many_shapes(void)
{
	static const uint32_t km[][2] = { { 2, 1 }, { 4, 2 }, { 8, 2 },
					  { 6, 3 }, { 10, 4 } };
	uint32_t n, d, c;

	for (c = 0; c < sizeof(km) / sizeof(km[0]); c++) {
		for (n = km[c][0] + km[c][1]; n <= 50; n += 7) {
			for (d = 0; d <= 7; d++) {
				struct place_node *v = make_nodes(n, d);
				struct placement p;

				CU_ASSERT_EQUAL_FATAL(place_compute(v, n, km[c][0],
								    km[c][1], &p), 0);
				check_rules(&p);
				place_release(&p);
				free(v);
			}
		}
	}
}

static void test_bad_input(void)
{
	struct place_node *v = make_nodes(8, 2);
	struct placement p;

	CU_ASSERT_EQUAL(place_compute(v, 5, 4, 2, &p), -EINVAL);  /* < k+m */
	CU_ASSERT_EQUAL(place_compute(v, 8, 0, 2, &p), -EINVAL);
	CU_ASSERT_EQUAL(place_compute(v, 8, 4, 0, &p), -EINVAL);
	CU_ASSERT_EQUAL(place_compute(v, 8, 30, 3, &p), -EINVAL);
	strcpy(v[3].name, v[5].name);                       /* duplicate */
	CU_ASSERT_EQUAL(place_compute(v, 8, 4, 2, &p), -EINVAL);
	v[3].name[0] = 0;                                   /* empty */
	CU_ASSERT_EQUAL(place_compute(v, 8, 4, 2, &p), -EINVAL);
	memset(v[3].name, 'x', sizeof(v[3].name));          /* unterminated */
	CU_ASSERT_EQUAL(place_compute(v, 8, 4, 2, &p), -EINVAL);
	CU_ASSERT_PTR_NULL(p.nodes);
	free(v);
}

/* place_choose(): a node that may not take a shard is replaced, by a
 * member of the owner's group first, then of another group; the domains
 * stay spread; the computed holders that may are kept in place. */
struct down_set {
	uint8_t down[64];
};

static int may_take(void *arg, uint32_t node)
{
	return !((struct down_set *)arg)->down[node];
}

static void check_choice(const struct placement *p, uint32_t owner,
			 const struct down_set *ds, const uint32_t *out)
{
	uint32_t w = p->k + p->m - 1, s, t;

	for (s = 0; s < w; s++) {
		CU_ASSERT(out[s] < p->n);
		CU_ASSERT(out[s] != owner);
		CU_ASSERT(!ds->down[out[s]]);
		for (t = 0; t < s; t++)
			CU_ASSERT(out[s] != out[t]);
		if (!ds->down[place_peer(p, owner, s + 1)])
			CU_ASSERT_EQUAL(out[s], place_peer(p, owner, s + 1));
	}
}

static void test_choose(void)
{
	struct place_node *v = make_nodes(16, 8);
	struct down_set ds;
	struct placement p;
	uint32_t out[31], o, s, x, cnt[8];

	CU_ASSERT_EQUAL_FATAL(place_compute(v, 16, 4, 2, &p), 0);
	CU_ASSERT_EQUAL(p.ngroups, 2);
	memset(&ds, 0, sizeof(ds));
	/* All up: the computed placement. */
	for (o = 0; o < 16; o++) {
		CU_ASSERT_EQUAL(place_choose(&p, o, NULL, may_take, &ds, out), 0);
		check_choice(&p, o, &ds, out);
	}
	/* Each holder of node 0 down in turn: replaced by a member of its
	 * group when one is left, the domains still one shard each. */
	for (s = 1; s <= 5; s++) {
		memset(&ds, 0, sizeof(ds));
		x = place_peer(&p, 0, s);
		ds.down[x] = 1;
		CU_ASSERT_EQUAL(place_choose(&p, 0, NULL, may_take, &ds, out), 0);
		check_choice(&p, 0, &ds, out);
		CU_ASSERT(out[s - 1] != x);
		CU_ASSERT_EQUAL(p.group[out[s - 1]], p.group[0]);
		memset(cnt, 0, sizeof(cnt));
		cnt[p.dom[0]]++;
		for (o = 0; o < 5; o++)
			cnt[p.dom[out[o]]]++;
		for (o = 0; o < 8; o++)
			CU_ASSERT(cnt[o] <= 1);
	}
	/* Every other member of node 0's group down: all its holders come
	 * from the other group. */
	memset(&ds, 0, sizeof(ds));
	for (o = 1; o < 16; o++)
		if (p.group[o] == p.group[0])
			ds.down[o] = 1;
	CU_ASSERT_EQUAL(place_choose(&p, 0, NULL, may_take, &ds, out), 0);
	check_choice(&p, 0, &ds, out);
	for (s = 0; s < 5; s++)
		CU_ASSERT(p.group[out[s]] != p.group[0]);
	/* Preferred nodes (a part's old record) are kept where they may;
	 * one that may not is replaced. */
	{
		uint32_t pref[5] = { 9, 3, UINT32_MAX, 14, 7 };

		memset(&ds, 0, sizeof(ds));
		ds.down[14] = 1;
		CU_ASSERT_EQUAL(place_choose(&p, 0, pref, may_take, &ds, out), 0);
		CU_ASSERT_EQUAL(out[0], 9);
		CU_ASSERT_EQUAL(out[1], 3);
		CU_ASSERT_EQUAL(out[4], 7);
		CU_ASSERT(out[2] != 14 && out[3] != 14 && out[2] != out[3]);
		for (s = 0; s < 5; s++)
			CU_ASSERT(out[s] != 0 && out[s] < 16);
	}
	/* Fewer than 5 others may: -EAGAIN. */
	memset(&ds, 0, sizeof(ds));
	for (o = 1; o < 11; o++)
		ds.down[o] = 1;
	CU_ASSERT_EQUAL_FATAL(place_choose(&p, 0, NULL, may_take, &ds, out), 0);
	check_choice(&p, 0, &ds, out);
	ds.down[11] = 1;
	CU_ASSERT_EQUAL(place_choose(&p, 0, NULL, may_take, &ds, out), -EAGAIN);
	place_release(&p);
	free(v);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "six_in_three", test_six_in_three },
		{ "own_domains", test_own_domains },
		{ "spread_domains", test_spread_domains },
		{ "order_independent", test_order_independent },
		{ "load", test_load },
		{ "many_shapes", test_many_shapes },
		{ "bad_input", test_bad_input },
		{ "choose", test_choose },
		{ NULL, NULL }
	};

	return unit_run("place", tests);
}
