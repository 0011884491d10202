/*
 * pchoose.c - the holders of a protection attempt (see protect.c's header
 * for the rule): place.h's placement first, or the part's own holder
 * record; each holder replaced where it may not take a shard (down past the
 * grace, refused for space lately, failed this part); with too few nodes,
 * a part with a record is protected around its down holders
 * (choose_keeping_down()).  Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "protect_i.h"

/* ---- choosing holders ------------------------------------------------------ */

enum elig { E_OK, E_WAIT, E_NO };

/* May node take a new shard of j's part now?  E_WAIT: down, but not for
 * long enough to place around it (a restart is waited for). */
static enum elig eligible(const struct pjob *j, uint32_t node, uint64_t now)
{
	const struct cluster *cl = j->q->cl;
	const struct peer *p = &cl->peers[node];
	uint64_t grace = cl->hb_timeout_ms;
	uint32_t i;

	if (node == cl->self)
		return E_NO;
	for (i = 0; i < j->navoid; i++)
		if (j->avoid[i] == node)
			return E_NO;
	if (now < p->refused_until_ms)
		return E_NO;
	if (p->st == P_UP)
		return E_OK;
	return now < p->since_ms + grace ? E_WAIT : E_NO;
}

static int may_take(void *arg, uint32_t node)
{
	struct pjob *j = arg;

	return eligible(j, node, ckptd_now_ms()) == E_OK;
}

/* choose_keeping_down()'s ok(): may_take, or one of the down holders the
 * record names that are kept (j->skip holds their shards' bits while it
 * chooses, translated to nodes by first). */
struct keep_arg {
	struct pjob *j;
	const uint32_t *first;
	uint32_t w, kept;
};

static int may_take_or_kept(void *arg, uint32_t node)
{
	struct keep_arg *ka = arg;
	uint32_t s;

	for (s = 1; s <= ka->w; s++)
		if ((ka->kept & (1u << s)) && ka->first[s - 1] == node)
			return 1;
	return may_take(ka->j, node);
}

/*
 * Too few nodes may take a shard, and the part has a record (its holders
 * all sealed their shards when it was made): keep holders of the record
 * that are down, as few as will do, the latest to go down first, so that
 * the part is protected around what cannot be replaced instead of waiting
 * for it.  Their shards stay where the record says (j->skip: neither sent
 * nor sealed); status counts them down.  0, or -EAGAIN with nothing down
 * to keep.
 */
static int choose_keeping_down(struct pjob *j, const uint32_t *first)
{
	struct cluster *cl = j->q->cl;
	struct keep_arg ka = { j, first, cl->place.k + cl->place.m - 1, 0 };
	uint64_t now = ckptd_now_ms();
	uint32_t s, pick;
	int ret = -EAGAIN;

	while (ret == -EAGAIN) {
		pick = 0;
		/* The local copy and the holders sealed must still be k. */
		if (1 + ka.w - (uint32_t)__builtin_popcount(ka.kept) <=
		    cl->place.k)
			return -EAGAIN;
		for (s = 1; s <= ka.w; s++) {
			uint32_t c = first[s - 1];

			/* Down past the grace only (a restart is waited
			 * for, even of a holder this part blamed). */
			if (c == HOLDER_NONE || (ka.kept & (1u << s)) ||
			    (j->lost & (1u << s)) ||
			    cl->peers[c].st == P_UP ||
			    now < cl->peers[c].since_ms + cl->hb_timeout_ms)
				continue;
			if (!pick || cl->peers[c].since_ms >
				     cl->peers[first[pick - 1]].since_ms)
				pick = s;
		}
		if (!pick)
			return -EAGAIN;
		ka.kept |= 1u << pick;
		ret = place_choose(&cl->place, cl->self, first,
				   may_take_or_kept, &ka, j->hid);
	}
	if (ret < 0)
		return ret;
	for (s = 1; s <= ka.w; s++)
		if ((ka.kept & (1u << s)) && j->hid[s - 1] == first[s - 1])
			j->skip |= 1u << s;
	return 0;
}

/* Choose this attempt's holders into j->hid and j->rec: the part's own
 * record's where it has one of this code (a re-protection, a node list
 * changed since), else place.h's; each replaced where it may not take a
 * shard.  0; -EAGAIN: not now (a first choice within its grace, or too few
 * nodes; waiting_for says which), the job waits. */
int pj_choose_holders(struct pjob *j)
{
	struct cluster *cl = j->q->cl;
	const struct man_holders *old = j->v->holders;
	uint32_t w = cl->place.k + cl->place.m - 1, s, up = 0, i;
	uint32_t first[EC_MAX_FRAGS];
	uint64_t now = ckptd_now_ms();
	int ret, same, fresh;

	if (old && (old->k != cl->place.k || old->m != cl->place.m))
		old = NULL;             /* coded otherwise: coded anew */
	/* A part taken over from a lost node, not yet protected here: its
	 * record is the old owner's, whose holders sealed shards of the old
	 * part, not of this one.  First choices only: nothing is kept or
	 * left on a holder that is down. */
	fresh = old && old->from[0] && !(j->v->copies & CKPT_COPY_PEERS);
	holders_resolve(cl, old, cl->self, first);
	for (s = 1; s <= w; s++) {
		uint32_t c = first[s - 1];

		if (c != HOLDER_NONE && eligible(j, c, now) == E_WAIT) {
			snprintf(j->waiting_for, sizeof(j->waiting_for),
				 "holder %.63s down %llu s (grace %u s)",
				 cl_name(cl, c),
				 (unsigned long long)(now - cl->peers[c].since_ms) / 1000,
				 cl->hb_timeout_ms / 1000);
			return -EAGAIN;
		}
	}
	ret = place_choose(&cl->place, cl->self, first, may_take, j, j->hid);
	if (ret == -EAGAIN && j->navoid) {
		j->navoid = 0;          /* better the failed ones than none */
		ret = place_choose(&cl->place, cl->self, first, may_take, j,
				   j->hid);
	}
	j->skip = 0;
	if (ret == -EAGAIN && old && !fresh)
		ret = choose_keeping_down(j, first);
	if (ret < 0) {
		for (i = 0; i < cl->place.n; i++)
			up += may_take(j, i);
		snprintf(j->waiting_for, sizeof(j->waiting_for),
			 "%u of the %u holders it needs can take shards", up, w);
		return ret;
	}
	j->waiting_for[0] = '\0';
	memset(&j->rec, 0, sizeof(j->rec));
	j->rec.k = cl->place.k;
	j->rec.m = cl->place.m;
	if (j->v->holders && j->v->holders->from[0]) {
		/* A part taken over from a lost node says so for good. */
		memcpy(j->rec.from, j->v->holders->from, sizeof(j->rec.from));
		j->rec.from_id = j->v->holders->from_id;
	}
	j->keep = 0;
	same = 1;
	for (s = 1; s <= w; s++) {
		snprintf(j->rec.name[s - 1], sizeof(j->rec.name[s - 1]), "%s",
			 cl_name(cl, j->hid[s - 1]));
		if (j->hid[s - 1] != first[s - 1])
			same = 0;
		else if (old && !fresh && j->reprotect && !j->resend &&
			 !(j->lost & (1u << s)) && !(j->skip & (1u << s)))
			j->keep |= 1u << s;     /* sealed there already */
	}
	j->rec.gen = old ? old->gen + !same : 1;
	for (s = 1; s <= w; s++)
		j->hups[s - 1] = cl->peers[j->hid[s - 1]].ups;
	if (!same)
		j->q->replaced++;
	return 0;
}
