/*
 * svc.h - the client-facing layer's state: the connections, the clients
 * waiting for staging or for other nodes' parts, and the readers' buffers.
 *
 * Only svc/ touches a client connection (docs/design.md, "Server
 * structure"); the layers below answer it through events (event.h) and
 * the callbacks svc passes them.  struct ckptd_main (ckptd.h) holds the
 * one struct svc; d->svc points at it.
 */
#ifndef CKPTD_SVC_H
#define CKPTD_SVC_H

#include <stdint.h>

#include "list.h"
#include "log.h"
#include "reader.h"

struct svc {
	struct list conns;         /* struct conn */
	struct list hello_wait;    /* conns waiting for staging */
	struct list uids;          /* struct uid_conns: connections per uid */
	struct list cwaiters;      /* session.c: WAITs on versions only other
				    * nodes hold (session_wait_cluster()) */
	uint32_t nconns;
	struct reader_bufs rbufs;  /* reader.c's record buffers */
	/* Lines any local client can cause, at most LOG_RL_MAX a second each
	 * (session.c, lease.c). */
	struct log_rl bad_rl;      /* bad frames */
	struct log_rl refuse_rl;   /* refused connections */
	struct log_rl wait_rl;     /* staging waits and give-ups */
};

#endif
