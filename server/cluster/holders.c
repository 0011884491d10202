/*
 * holders.c - where the shards of a part are: its holder record (manifest.h,
 * struct man_holders), read where the part is known, and the placement
 * place.h computes for a part that has none (coded before records).
 *
 * The record of this node's own part is in its catalog (the version's
 * manifest); that of another node's part came with the part's announcement
 * (parts.c) or with a shard held here (its shard record has the manifest).
 * A record names nodes: resolved here against the node list, a name that
 * is no longer in it holds nothing this node can reach (a retired node,
 * cluster_i.h, owns parts but holds nothing).
 *
 * Threads: the loop only.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cluster_i.h"

void holders_resolve(const struct cluster *cl, const struct man_holders *rec,
		     uint32_t owner, uint32_t *ids)
{
	uint32_t s, w = cl->place.k + cl->place.m - 1;
	int id;

	if (!rec) {     /* a retired owner has no computed placement */
		for (s = 1; s <= w; s++)
			ids[s - 1] = cl_retired(cl, owner) ? HOLDER_NONE :
				     place_peer(&cl->place, owner, s);
		return;
	}
	w = rec->k + rec->m - 1;
	for (s = 1; s <= w; s++) {
		id = place_find(&cl->place, rec->name[s - 1]);
		ids[s - 1] = id < 0 || (uint32_t)id == owner ? HOLDER_NONE
							     : (uint32_t)id;
	}
}

/* This node's own sealed part open_id, or NULL. */
static struct version *own_part(const struct cluster *cl, uint64_t open_id)
{
	struct list *jp, *vp;

	list_for_each(jp, &cl->d->cat->jobs) {
		struct job *j = list_entry(jp, struct job, link);

		list_for_each(vp, &j->versions) {
			struct version *v = list_entry(vp, struct version, link);

			if (v->open_id == open_id && v->state == CKPT_ST_SEALED)
				return v;
		}
	}
	return NULL;
}

const struct man_holders *holders_record(const struct cluster *cl,
					 uint32_t owner, uint64_t open_id)
{
	const struct man_holders *rec = NULL;
	struct version *v;

	if (owner == cl->self && (v = own_part(cl, open_id)))
		rec = v->holders;
	if (!rec)
		rec = parts_holders(cl, owner, open_id);
	return rec;
}

const struct man_holders *holders_of(const struct cluster *cl,
				     uint32_t owner, uint64_t open_id,
				     uint32_t *ids)
{
	const struct man_holders *rec = holders_record(cl, owner, open_id);

	holders_resolve(cl, rec, owner, ids);
	return rec;
}

void holders_info(const struct cluster *cl, uint32_t owner,
		  const struct man_holders *rec, uint32_t copies,
		  struct ckpt_version_info *info)
{
	uint32_t ids[32], s, w;
	size_t n = 0, len;

	info->shards = info->shards_up = 0;
	info->holders[0] = '\0';
	if (!rec && !(copies & CKPT_COPY_PEERS))
		return;                 /* never erasure-coded */
	if (rec && rec->from[0] && !(copies & CKPT_COPY_PEERS))
		return;                 /* taken over, not protected here yet:
					 * the record is the old owner's */
	holders_resolve(cl, rec, owner, ids);
	w = rec ? rec->k + rec->m - 1 : cl->place.k + cl->place.m - 1;
	for (s = 1; s <= w; s++) {
		const char *name = rec ? rec->name[s - 1] : cl_name(cl, ids[s - 1]);

		info->shards++;
		info->shards_up += ids[s - 1] != HOLDER_NONE &&
				   (ids[s - 1] == cl->self ||
				    cl->peers[ids[s - 1]].st == P_UP);
		len = strlen(name);
		if (n + !!n + len > CKPT_HOLDERS_MAX)
			continue;       /* the list ends at the last that fits */
		n += (size_t)snprintf(info->holders + n,
				      sizeof(info->holders) - n, "%s%s",
				      n ? " " : "", name);
	}
}
