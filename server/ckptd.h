/*
 * ckptd.h - the daemon's context, passed to every server module.
 *
 * main() owns one struct ckptd; there is no global server object.  Modules
 * reach the parts they need through it: the loop, staging, the store
 * (segments and catalog) and the connection list.  Used on the loop thread
 * only: worker threads (pool.h) see nothing of it but what a task carries.
 */
#ifndef CKPTD_CKPTD_H
#define CKPTD_CKPTD_H

#include <linux/time_types.h>
#include <sys/signalfd.h>

#include "catalog.h"
#include "conf.h"
#include "list.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "reader.h"
#include "segs.h"
#include "staging.h"

struct stats {
	uint64_t ingest_bytes;     /* bytes written to the store, total */
	uint64_t ingest_rate;      /* bytes/s, smoothed */
	uint64_t rate_mark;        /* ingest_bytes at the last tick */
	uint64_t start_ms;
};

/*
 * Events: what lower layers (level.c, and later the cluster) raise and the
 * client-facing layer answers, so that no lower layer calls up into
 * sessions.  ckptd_open() wires them to session.c; a NULL one is not
 * listened to.  Each runs on the loop thread, before the raise returns.
 */
struct ckptd_events {
	/* v's level, state or error changed: answer the WAITs it settles. */
	void (*version_changed)(struct ckptd *d, struct version *v);
};

struct ckptd {
	const struct conf *conf;
	struct ckptd_events ev;
	struct loop loop;
	struct staging staging;
	struct segs segs;
	struct catalog cat;
	struct list conns;         /* struct conn */
	struct list hello_wait;    /* conns waiting for staging */
	struct list uids;          /* struct uid_conns: connections per uid */
	struct list cwaiters;      /* session.c: WAITs on versions only other
				    * nodes hold (session_wait_cluster()) */
	uint32_t nconns;
	struct stats st;
	struct mstats ms;          /* counted here, published by metrics.c */
	struct metrics *metrics;   /* the HTTP side; NULL without [ckptd]
				    * metrics */
	struct pool *pool;         /* worker threads (pool.h), always */
	struct drain *drain;       /* NULL without [drain] target */
	struct cluster *cluster;   /* NULL without [cluster] nodes */
	struct reader_bufs rbufs;  /* reader.c's record buffers */

	int listen_fd;
	struct loop_op accept_op;
	int spare_fd;              /* kept open to accept-and-refuse with
				    * when out of descriptors */
	struct loop_op pause_op;   /* accept paused after EMFILE */
	struct __kernel_timespec pause_ts;
	struct log_rl accept_rl;
	/* Lines any local client can cause, at most LOG_RL_MAX a second each
	 * (session.c, lease.c). */
	struct log_rl bad_rl;      /* bad frames */
	struct log_rl refuse_rl;   /* refused connections */
	struct log_rl wait_rl;     /* staging waits and give-ups */
	int sig_fd;
	struct loop_op sig_op;
	struct signalfd_siginfo sig;
	struct loop_op tick_op;
	struct __kernel_timespec tick_ts;
	int stopping;
};

/* Bring the daemon up: store, staging, socket.  0 or -errno (logged). */
int ckptd_open(struct ckptd *d, const struct conf *conf);
/* Serve until SIGTERM/SIGINT.  0 or -errno. */
int ckptd_run(struct ckptd *d);
void ckptd_close(struct ckptd *d);
uint64_t ckptd_now_ms(void);

static inline void ckptd_version_changed(struct ckptd *d, struct version *v)
{
	if (d->ev.version_changed)
		d->ev.version_changed(d, v);
}

#endif
