/*
 * event.h - the broadcasts of ckptd: a fixed list of events that a lower
 * layer raises and any layer above it may listen to.
 *
 * A lower layer never calls up (docs/design.md, "Server structure").  When
 * something it owns changes and the layers above must hear of it, it
 * raises an event here; what each listener does is the listener's
 * business.  Answers to one caller go through the callback that caller
 * passed down instead (cluster.h's struct cluster_read, remove.h's done).
 *
 * Listeners are registered while the daemon opens (ckptd_open(), in the
 * order they are to run), and run on the loop thread, in registration
 * order, before event_raise() returns.  The list is fixed-size: no
 * allocation, no failure at raise time.
 */
#ifndef CKPTD_EVENT_H
#define CKPTD_EVENT_H

enum event_type {
	/* A version's level, state or error changed (store/level.c and
	 * whoever seals or fails it).  obj: struct version *. */
	EV_VERSION_CHANGED,
	/* Another node's part of a version was announced, changed or gone
	 * (cluster/parts.c).  obj: struct event_part * (job and version
	 * NULL: any version may have changed, a peer went down). */
	EV_PART_CHANGED,
	EV_COUNT
};

/* EV_PART_CHANGED's object. */
struct event_part {
	const char *job;
	const char *version;
};

#define EVENT_MAX_LISTENERS 4

typedef void (*event_fn)(void *arg, void *obj);

struct events {
	struct {
		event_fn fn;
		void *arg;
	} l[EV_COUNT][EVENT_MAX_LISTENERS];
	unsigned n[EV_COUNT];
};

/* Listen to type: fn(arg, obj) on every raise, after the listeners
 * registered before it.  0, or -ENOSPC (EVENT_MAX_LISTENERS reached: a
 * programming error, reported at open). */
int event_listen(struct events *e, enum event_type type, event_fn fn,
		 void *arg);
/* Run type's listeners with obj, in order. */
void event_raise(const struct events *e, enum event_type type, void *obj);

#endif
