/*
 * ctx.h - the daemon's context, passed to every server module.
 *
 * main() owns one (inside struct ckptd_main, ckptd.h); there is no global
 * server object.  The context holds what every layer may use (the
 * configuration, the loop, staging, the worker pool, the broadcast list,
 * this node's identity, the shared counters) and one opaque pointer per
 * layer above core: each layer's header defines its struct, so a layer
 * sees the state of the layers below it and nothing of those above
 * (docs/design.md, "Server structure").
 *
 * Used on the loop thread only: worker threads (pool.h) see nothing of it
 * but what a task carries.
 */
#ifndef CKPTD_CTX_H
#define CKPTD_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "event.h"
#include "log.h"
#include "loop.h"
#include "staging.h"

struct stats {
	uint64_t ingest_bytes;     /* bytes written to the store, total */
	uint64_t ingest_rate;      /* bytes/s, smoothed */
	uint64_t rate_mark;        /* ingest_bytes at the last tick */
	uint64_t start_ms;
};

/* This node in its cluster: set by the cluster layer while it is open, so
 * that the layers below it (the drain) can name the node without it. */
struct node_self {
	const char *name;          /* NULL without a cluster */
	uint32_t id;               /* index in the node list */
	uint32_t nodes;            /* nodes in the list; 0 without a cluster */
};

struct ckptd {
	const struct conf *conf;
	struct events ev;          /* event.h: listeners set at open */
	struct loop loop;
	struct staging staging;
	struct pool *pool;         /* worker threads (pool.h), always */
	struct node_self node;
	struct stats st;
	int stopping;              /* SIGTERM/SIGINT seen */

	/* The layers above core, each opaque here.  Owned by struct
	 * ckptd_main (ckptd.h), which opens and closes them in order. */
	struct segs *segs;         /* store: segs.h */
	struct catalog *cat;       /* store: catalog.h */
	struct mstats *ms;         /* store: mstats.h, counted there,
				    * published by metrics.c */
	struct drain *drain;       /* drain.h; NULL without [drain] target */
	struct cluster *cluster;   /* cluster.h; NULL without [cluster] nodes */
	struct svc *svc;           /* svc.h: connections and their waits */
	struct metrics *metrics;   /* the HTTP side; NULL without [ckptd]
				    * metrics */
};

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t ckptd_now_ms(void);
/* The name conf gives this node in its cluster ([cluster] node, else the
 * host name up to its first dot) into buf; "" without [cluster] nodes. */
void ckptd_conf_self(const struct conf *conf, char *buf, size_t cap);

struct version;

static inline void ckptd_version_changed(struct ckptd *d, struct version *v)
{
	event_raise(&d->ev, EV_VERSION_CHANGED, v);
}

#endif
