/*
 * event.c - the broadcast list (event.h): registration at open, raises on
 * the loop thread.
 */
#include <errno.h>

#include "event.h"

int event_listen(struct events *e, enum event_type type, event_fn fn,
		 void *arg)
{
	unsigned n = e->n[type];

	if (n == EVENT_MAX_LISTENERS)
		return -ENOSPC;
	e->l[type][n].fn = fn;
	e->l[type][n].arg = arg;
	e->n[type] = n + 1;
	return 0;
}

void event_raise(const struct events *e, enum event_type type, void *obj)
{
	unsigned i;

	for (i = 0; i < e->n[type]; i++)
		e->l[type][i].fn(e->l[type][i].arg, obj);
}
