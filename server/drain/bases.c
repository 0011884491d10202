/*
 * bases.c - the incremental bases of a job's drained versions, for
 * [drain] keep and rm (drain.c, ops.c).  See bases.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bases.h"
#include "catalog.h"
#include "drain.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int bases_of(const struct job *j, struct bases *b)
{
	const struct list *pos;

	*b = (struct bases){ 0 };
	b->name = malloc(((size_t)j->nversions + 1) * sizeof(*b->name));
	if (!b->name)
		return -ENOMEM;
	for (pos = j->versions.next; pos != &j->versions; pos = pos->next) {
		const struct version *o = list_entry(pos, struct version, link);

		if (o->level >= CKPT_DRAINED && o->base[0])
			b->name[b->n++] = o->base;
		/* A copy running now may have taken any drained version of
		 * the job as its base; its own base is known when it ends. */
		if (o->drain == DR_RUNNING)
			b->any = 1;
	}
	qsort(b->name, b->n, sizeof(*b->name), cmp_name);
	return 0;
}

int bases_has(const struct bases *b, const char *name)
{
	return b->any || bsearch(&name, b->name, b->n, sizeof(*b->name),
				 cmp_name) != NULL;
}

void bases_release(struct bases *b)
{
	free(b->name);
	b->name = NULL;
}

int drain_is_base(const struct job *j, const char *name)
{
	struct bases b;
	int ret;

	if (bases_of(j, &b) < 0)
		return 1;           /* unknown: keep it */
	ret = bases_has(&b, name);
	bases_release(&b);
	return ret;
}
