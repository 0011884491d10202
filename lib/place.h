/*
 * place.h - which peers hold the shards of each node's part: groups and
 * placement, computed from the node list alone, so that every node of a
 * cluster reaches the same answer without asking the others.
 *
 * Coding layout: every node protects its own part with no coordination.  A
 * stripe of its part is cut into k data shards and m parity shards; shard 0
 * stays in the node's own full local copy and shards 1..k+m-1 go to k+m-1
 * peers, one each.  Any m nodes of the stripe (the owner included) may be
 * lost: k shards are left.  Bytes sent and peer storage per byte protected:
 * (k+m-1)/k (1.25 for 4+2).
 *
 * Groups: G = n / (k+m) groups of n / G members (the first n % G one
 * more), so k+m to 2(k+m)-1 each.  Domains are taken biggest first (then by
 * name), a domain's nodes by name, each into the group with room that holds
 * the fewest nodes of that domain, then the fewest members, then the first:
 * a domain's nodes spread over the groups.  In a group, members are ordered
 * by a round robin over the domains (by name).  A node's peers are members
 * of its group: chosen one at a time, each the member whose domain holds the
 * fewest shards of the stripe so far (the owner's domain counts its shard),
 * ties broken by distance after the owner in the group's order.
 * So no two shards of a stripe share a domain where the domains allow it,
 * and otherwise the most shards in one domain is as small as it can be.
 *
 * The result depends only on the set of (name, domain) pairs, not on their
 * order in the list.  Names are unique.  Library code: no I/O, no printing.
 */
#ifndef CKPT_PLACE_H
#define CKPT_PLACE_H

#include <stdint.h>

#define PLACE_NAME_MAX 63         /* bytes of a node or domain name */
#define PLACE_MAX_NODES 4096

struct place_node {
	char name[PLACE_NAME_MAX + 1];
	char domain[PLACE_NAME_MAX + 1];   /* "" = its own domain */
};

struct placement {
	uint32_t n, k, m;
	uint32_t ngroups;
	struct place_node *nodes;  /* owned, sorted by name; index = node id */
	uint32_t *group;           /* group of node i */
	uint32_t *peers;           /* node i's peers: peers[i * (k+m-1) + s-1]
				    * holds shard s */
	uint32_t worst;            /* most shards of one stripe in one domain */
	uint32_t *dom;             /* domain id of node i, 0..ndom-1 */
	uint32_t ndom;
};

/*
 * Compute the placement of n nodes (copied) for k+m.  0; -EINVAL if a name
 * is empty, too long or repeated, k or m is 0, k+m > 32, or there are fewer
 * than k+m nodes (or more than PLACE_MAX_NODES); -ENOMEM.
 */
int place_compute(const struct place_node *nodes, uint32_t n, uint32_t k,
		  uint32_t m, struct placement *out);
void place_release(struct placement *p);
/* Index of the node named name, or -ENOENT. */
int place_find(const struct placement *p, const char *name);
/* The node holding shard s (1..k+m-1) of node i's stripes. */
static inline uint32_t place_peer(const struct placement *p, uint32_t i,
				  uint32_t s)
{
	return p->peers[i * (p->k + p->m - 1) + s - 1];
}
/*
 * The holders of a part of node owner, around nodes that may not take a
 * shard now (down, full): ok(arg, node) says whether node may.  first:
 * the preferred node of each shard (first[s - 1]; UINT32_MAX or a node
 * past n: none), or NULL for place_peer()'s.  For each shard s
 * (1..k+m-1), out[s - 1] is the preferred node where it may, else
 * the best of the nodes left that may: the fewest shards of the stripe in
 * its domain so far (the owner's counts), then a member of owner's group,
 * then the group nearest after owner's, then the node nearest after owner.
 * Never the owner, never one node twice.  0, -EAGAIN (fewer than k+m-1
 * other nodes may; out partly filled), or -ENOMEM.
 */
int place_choose(const struct placement *p, uint32_t owner,
		 const uint32_t *first, int (*ok)(void *arg, uint32_t node),
		 void *arg, uint32_t *out);

/* Whole domains that may be lost with every stripe still readable:
 * m / worst (at least one node's loss is always survivable when m >= 1). */
static inline uint32_t place_domains_lost_ok(const struct placement *p)
{
	return p->worst ? p->m / p->worst : 0;
}

#endif
