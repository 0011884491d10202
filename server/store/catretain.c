/*
 * catretain.c - retention of a job's local versions ([ckptd] keep): which
 * sealed versions go when a job has more than keep (catalog.h:
 * catalog_retain).  The drain's retention of local and PFS copies is
 * drain/retain.c's.
 */
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "log.h"

#define RETAIN_SKIP 8            /* busy versions passed over in one run */

static int retain_skipped(struct version *const *skip, uint32_t n,
			  const struct version *v)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (skip[i] == v)
			return 1;
	return 0;
}

/* The version retention removes next from j: the oldest sealed one not
 * being removed nor in skip (it could not be removed just now), in seq
 * order; but a part taken over from a lost node (cluster/adopt.c) got its
 * seq here when it was taken over, so it goes by its seal time: first,
 * when it was sealed before that one.  NULL: none. */
static struct version *retain_victim(struct job *j, struct version *const *skip,
				     uint32_t nskip)
{
	struct version *first = NULL, *taken = NULL;
	struct list *pos;

	list_for_each(pos, &j->versions) {
		struct version *v = list_entry(pos, struct version, link);

		if (v->state != CKPT_ST_SEALED || v->removing ||
		    retain_skipped(skip, nskip, v))
			continue;
		if (v->holders && v->holders->from[0]) {
			if (!taken || v->sealed_ns < taken->sealed_ns)
				taken = v;
		} else if (!first) {
			first = v;
		}
	}
	if (taken && (!first || taken->sealed_ns < first->sealed_ns))
		return taken;
	return first;
}

void catalog_retain(struct catalog *cat, struct job *j, uint32_t keep)
{
	struct version *skip[RETAIN_SKIP];
	uint32_t sealed = 0, nskip = 0;
	struct list *pos;
	struct version *v;
	int ret;

	list_for_each(pos, &j->versions) {
		v = list_entry(pos, struct version, link);
		sealed += v->state == CKPT_ST_SEALED && !v->removing;
	}
	while (sealed > keep && sealed > 1 &&
	       (v = retain_victim(j, skip, nskip))) {
		log_printf(LOG_INFO, "retention: removing %s/%s (keep=%u)",
			   j->name, v->name, keep);
		sealed--;
		ret = catalog_remove_bg(cat, v);
		if (ret < 0) {
			/* Busy (a level write queued): the next one goes in
			 * its place, as before; this one at the next run. */
			log_printf(LOG_WARNING, "retention: %s: %s", v->name,
				   strerror(-ret));
			if (nskip == RETAIN_SKIP)
				return;
			skip[nskip++] = v;
			continue;
		}
		if (j->nversions == 0)
			return;     /* the job is gone with its last version */
	}
}
