/*
 * place.c - groups and shard placement from the node list (see place.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct place_node *)a)->name,
		      ((const struct place_node *)b)->name);
}

/* A node's domain key: its domain, or its own name when it has none. */
static const char *dom_key(const struct place_node *nd)
{
	return nd->domain[0] ? nd->domain : nd->name;
}

struct dom_ref {
	const char *key;
	int own;                  /* no domain given: a domain of its own */
	uint32_t node;
};

static int cmp_dom(const void *a, const void *b)
{
	const struct dom_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->own != y->own)
		return x->own - y->own;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int check_nodes(const struct place_node *nodes, uint32_t n)
{
	uint32_t i;
	size_t len;

	for (i = 0; i < n; i++) {
		len = strnlen(nodes[i].name, sizeof(nodes[i].name));
		if (!len || len > PLACE_NAME_MAX ||
		    strnlen(nodes[i].domain, sizeof(nodes[i].domain)) >
		    PLACE_NAME_MAX)
			return -EINVAL;
	}
	return 0;
}

/*
 * dom[i]: the domain id of node i (ids in order of domain key); a domain's
 * nodes are refs[first[d]] .. refs[first[d] + size[d] - 1], by name;
 * order[]: the round robin over domains.  Returns the number of domains.
 */
static uint32_t interleave(const struct placement *p, struct dom_ref *refs,
			   uint32_t *dom, uint32_t *order, uint32_t *first,
			   uint32_t *size)
{
	uint32_t i, d = 0, r, j = 0, more;

	for (i = 0; i < p->n; i++) {
		refs[i].key = dom_key(&p->nodes[i]);
		refs[i].own = !p->nodes[i].domain[0];
		refs[i].node = i;
	}
	/* By key, then node: a domain's nodes stay in name order. */
	qsort(refs, p->n, sizeof(*refs), cmp_dom);
	for (i = 0; i < p->n; i++) {
		if (i && (strcmp(refs[i].key, refs[i - 1].key) ||
			  refs[i].own || refs[i - 1].own))
			d++;
		if (!i || d != dom[refs[i - 1].node]) {
			first[d] = i;
			size[d] = 0;
		}
		dom[refs[i].node] = d;
		size[d]++;
	}
	d++;
	for (r = 0, more = 1; more; r++) {
		more = 0;
		for (i = 0; i < d; i++) {
			if (r >= size[i])
				continue;
			order[j++] = refs[first[i] + r].node;
			more = 1;
		}
	}
	return d;
}

/* Choose the k+m-1 peers of the member at position pos of a group of s
 * members (node ids in mem[]); cnt[] (per domain) is zero on entry and on
 * return.  Returns the most shards in one domain. */
static uint32_t choose(struct placement *p, const uint32_t *mem, uint32_t s,
		       uint32_t pos, const uint32_t *dom, uint32_t *cnt,
		       uint8_t *taken)
{
	uint32_t owner = mem[pos], t, c, best, worst, w = p->k + p->m - 1;

	memset(taken, 0, s);
	taken[pos] = 1;
	cnt[dom[owner]] = 1;
	worst = 1;
	for (t = 0; t < w; t++) {
		best = s;
		for (c = 1; c < s; c++) {
			uint32_t q = (pos + c) % s;

			if (taken[q])
				continue;
			if (best == s || cnt[dom[mem[q]]] < cnt[dom[mem[best]]])
				best = q;
		}
		taken[best] = 1;
		if (++cnt[dom[mem[best]]] > worst)
			worst = cnt[dom[mem[best]]];
		p->peers[owner * w + t] = mem[best];
	}
	for (c = 0; c < s; c++)
		cnt[dom[mem[c]]] = 0;
	return worst;
}

/*
 * Assign groups: domains biggest first (then by key), each domain's nodes in
 * name order, each to the group with room that holds the fewest of that
 * domain, then the fewest members, then the lowest index.  Group g holds
 * exactly n / G (+1 for the first n % G) members.  cnt[] is per group.
 */
static void assign_groups(struct placement *p, const struct dom_ref *refs,
			  const uint32_t *first, const uint32_t *size,
			  uint32_t ndom, uint32_t *byszs, uint32_t *cnt,
			  uint32_t *members)
{
	uint32_t G = p->ngroups, i, j, d, g, best;

	for (i = 0; i < ndom; i++)
		byszs[i] = i;
	/* Insertion sort by size, biggest first; ids are in key order. */
	for (i = 1; i < ndom; i++) {
		uint32_t x = byszs[i];

		for (j = i; j > 0 && size[byszs[j - 1]] < size[x]; j--)
			byszs[j] = byszs[j - 1];
		byszs[j] = x;
	}
	memset(members, 0, G * sizeof(*members));
	for (i = 0; i < ndom; i++) {
		d = byszs[i];
		memset(cnt, 0, G * sizeof(*cnt));
		for (j = 0; j < size[d]; j++) {
			best = G;
			for (g = 0; g < G; g++) {
				if (members[g] >= p->n / G + (g < p->n % G))
					continue;
				if (best == G || cnt[g] < cnt[best] ||
				    (cnt[g] == cnt[best] &&
				     members[g] < members[best]))
					best = g;
			}
			p->group[refs[first[d] + j].node] = best;
			cnt[best]++;
			members[best]++;
		}
	}
}

int place_compute(const struct place_node *nodes, uint32_t n, uint32_t k,
		  uint32_t m, struct placement *out)
{
	uint32_t *dom = NULL, *order = NULL, *first = NULL, *size = NULL;
	uint32_t *mem = NULL, *cnt = NULL, *byszs = NULL, *members = NULL;
	struct dom_ref *refs = NULL;
	uint8_t *taken = NULL;
	uint32_t i, g, s, w, ndom;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!k || !m || k + m > 32 || n < k + m || n > PLACE_MAX_NODES ||
	    check_nodes(nodes, n))
		return -EINVAL;
	ret = -ENOMEM;
	out->nodes = malloc(n * sizeof(*out->nodes));
	out->group = calloc(n, sizeof(*out->group));
	out->peers = calloc((size_t)n * (k + m - 1), sizeof(*out->peers));
	dom = calloc(n, sizeof(*dom));
	order = calloc(n, sizeof(*order));
	first = calloc(n, sizeof(*first));
	size = calloc(n, sizeof(*size));
	mem = calloc(n, sizeof(*mem));
	cnt = calloc(n, sizeof(*cnt));
	byszs = calloc(n, sizeof(*byszs));
	members = calloc(n, sizeof(*members));
	refs = calloc(n, sizeof(*refs));
	taken = calloc(n, 1);
	if (!out->nodes || !out->group || !out->peers || !dom || !order ||
	    !first || !size || !mem || !cnt || !byszs || !members || !refs ||
	    !taken)
		goto out_free;
	memcpy(out->nodes, nodes, n * sizeof(*nodes));
	for (i = 0; i < n; i++) {   /* terminate what was copied */
		out->nodes[i].name[PLACE_NAME_MAX] = 0;
		out->nodes[i].domain[PLACE_NAME_MAX] = 0;
	}
	qsort(out->nodes, n, sizeof(*out->nodes), cmp_name);
	ret = -EINVAL;
	for (i = 1; i < n; i++)
		if (!strcmp(out->nodes[i].name, out->nodes[i - 1].name))
			goto out_free;
	out->n = n;
	out->k = k;
	out->m = m;
	out->ngroups = n / (k + m);
	ndom = interleave(out, refs, dom, order, first, size);
	out->dom = dom;
	out->ndom = ndom;
	assign_groups(out, refs, first, size, ndom, byszs, cnt, members);
	memset(cnt, 0, n * sizeof(*cnt));
	/* Members of a group in the round robin's order: neighbours are of
	 * different domains where they can be. */
	for (g = 0; g < out->ngroups; g++) {
		for (i = 0, s = 0; i < n; i++)
			if (out->group[order[i]] == g)
				mem[s++] = order[i];
		for (i = 0; i < s; i++) {
			w = choose(out, mem, s, i, dom, cnt, taken);
			if (w > out->worst)
				out->worst = w;
		}
	}
	ret = 0;
out_free:
	free(taken);
	free(refs);
	free(members);
	free(byszs);
	free(cnt);
	free(mem);
	free(size);
	free(first);
	free(order);
	if (ret < 0) {
		if (!out->dom)
			free(dom);
		place_release(out);
	}
	return ret;
}

void place_release(struct placement *p)
{
	free(p->nodes);
	free(p->group);
	free(p->peers);
	free(p->dom);
	memset(p, 0, sizeof(*p));
}

/* Rank of candidate c for owner's next shard, lower first: its domain's
 * shards so far, then whether it is of owner's group, then the distance of
 * its group after owner's, then its distance after owner by id. */
static uint64_t rank(const struct placement *p, uint32_t owner, uint32_t c,
		     const uint32_t *cnt)
{
	uint32_t g = p->group[owner], cg = p->group[c];
	uint64_t gd = (cg + p->ngroups - g) % p->ngroups;

	return ((uint64_t)cnt[p->dom[c]] << 48) | (gd << 24) |
	       ((c + p->n - owner) % p->n);
}

int place_choose(const struct placement *p, uint32_t owner,
		 const uint32_t *first, int (*ok)(void *arg, uint32_t node),
		 void *arg, uint32_t *out)
{
	uint32_t w = p->k + p->m - 1, s, c, best;
	uint32_t *cnt = calloc(p->ndom ? p->ndom : 1, sizeof(*cnt));
	uint8_t *used = calloc(p->n, 1);
	int ret = -ENOMEM;

	if (!cnt || !used)
		goto out_free;
	used[owner] = 1;
	cnt[p->dom[owner]]++;
	/* The preferred nodes first, where they may take the shard. */
	for (s = 1; s <= w; s++) {
		c = first ? first[s - 1] : place_peer(p, owner, s);
		out[s - 1] = UINT32_MAX;
		if (c < p->n && !used[c] && ok(arg, c)) {
			out[s - 1] = c;
			used[c] = 1;
			cnt[p->dom[c]]++;
		}
	}
	ret = -EAGAIN;
	for (s = 1; s <= w; s++) {
		if (out[s - 1] != UINT32_MAX)
			continue;
		best = UINT32_MAX;
		for (c = 0; c < p->n; c++) {
			if (used[c] || !ok(arg, c))
				continue;
			if (best == UINT32_MAX ||
			    rank(p, owner, c, cnt) < rank(p, owner, best, cnt))
				best = c;
		}
		if (best == UINT32_MAX)
			goto out_free;
		out[s - 1] = best;
		used[best] = 1;
		cnt[p->dom[best]]++;
	}
	ret = 0;
out_free:
	free(used);
	free(cnt);
	return ret;
}

int place_find(const struct placement *p, const char *name)
{
	struct place_node key;
	const struct place_node *hit;

	if (strlen(name) > PLACE_NAME_MAX)
		return -ENOENT;
	memset(&key, 0, sizeof(key));
	strcpy(key.name, name);
	hit = bsearch(&key, p->nodes, p->n, sizeof(*p->nodes), cmp_name);
	return hit ? (int)(hit - p->nodes) : -ENOENT;
}
