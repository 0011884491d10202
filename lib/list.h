/*
 * list.h - intrusive doubly linked list, after the kernel's list.h.
 *
 * A struct list is both the head and the link.  An empty head points at
 * itself.  The list owns nothing: entries are embedded in their containers.
 */
#ifndef CKPT_LIST_H
#define CKPT_LIST_H

#include <stddef.h>

struct list {
	struct list *prev, *next;
};

#define LIST_INIT(name) { &(name), &(name) }
#define list_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)
#define list_for_each_safe(pos, tmp, head) \
	for (pos = (head)->next, tmp = pos->next; pos != (head); \
	     pos = tmp, tmp = pos->next)

static inline void list_init(struct list *l)
{
	l->prev = l->next = l;
}

static inline int list_empty(const struct list *l)
{
	return l->next == l;
}

static inline void list_add_tail(struct list *head, struct list *e)
{
	e->prev = head->prev;
	e->next = head;
	head->prev->next = e;
	head->prev = e;
}

static inline void list_del(struct list *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	list_init(e);
}

/* Move every entry of from to the end of to; from is left empty. */
static inline void list_splice_tail(struct list *to, struct list *from)
{
	if (list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	list_init(from);
}

#endif
