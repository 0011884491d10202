/*
 * metrics.h - Prometheus metrics of ckptd, served over HTTP at /metrics.
 *
 * Two halves, on two sides of one lock:
 *
 *  - struct mstats (store/mstats.h) is the live record, owned by the loop
 *    thread like every other piece of ckptd state.  The mstats_*() hooks
 *    count events as they happen (a level reached, a writer's stall, a
 *    failure), and metrics_tick() fills in the gauges (staging, store,
 *    drain) and copies the whole record, once a second, into the
 *    published snapshot.
 *
 *  - struct metrics is the HTTP side: libmicrohttpd's own thread answers
 *    GET /metrics by copying the published snapshot under m->mu and
 *    formatting it.  It never reads anything else of ckptd, so a slow or
 *    hostile scraper can cost the loop at most one memcpy's wait on the lock.
 *
 * Without `[ckptd] metrics` (the default) struct metrics is not created and
 * the hooks only count.  Names follow Prometheus conventions: ckpt_ prefix,
 * base units (_seconds, _bytes), counters end in _total.  The list is in
 * docs/design.md.
 */
#ifndef CKPTD_METRICS_H
#define CKPTD_METRICS_H

#include <stdint.h>

#include "ckpt.h"
#include "mstats.h"

struct ckptd;
struct version;
struct vstall;

struct metrics;

/*
 * Start serving on addr ("HOST:PORT", an IPv4 address; port 0 picks one).
 * The bound port is logged.  0 and *out, or -EINVAL (bad address),
 * -EADDRINUSE or another -errno (logged).  Call with signals already blocked
 * (the HTTP thread inherits the mask).
 */
int metrics_open(const char *addr, struct metrics **out);
/* Stop the HTTP thread and free.  NULL is a no-op. */
void metrics_close(struct metrics *m);

/* Fill in the gauges and publish the record now.  ckptd calls it once
 * before it says it is ready, so that the first scrape has real values
 * (a scrape before that, while it starts, is answered 503).  No-op
 * without metrics. */
void metrics_publish(struct ckptd *d);
/* From the 250 ms tick: metrics_publish() once a second. */
void metrics_tick(struct ckptd *d);

#endif
