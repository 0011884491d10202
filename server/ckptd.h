/*
 * ckptd.h - the daemon: every layer opened in order, the socket clients
 * connect to, signals and the tick; shut down in the reverse order.
 *
 * struct ckptd_main is the top of the house (docs/design.md, "Server
 * structure"): it holds the context every layer is passed (struct ckptd,
 * ctx.h) and the state of the layers whose structs the context only
 * points at, and it wires the broadcast list (event.h) at open.  main()
 * owns one; nothing else sees it.
 */
#ifndef CKPTD_CKPTD_H
#define CKPTD_CKPTD_H

#include <linux/time_types.h>
#include <sys/signalfd.h>

#include "catalog.h"
#include "ctx.h"
#include "mstats.h"
#include "segs.h"
#include "svc.h"

struct ckptd_main {
	struct ckptd d;            /* the context; d.segs etc. point below */
	struct segs segs;
	struct catalog cat;
	struct mstats ms;
	struct svc svc;

	int listen_fd;
	struct loop_op accept_op;
	int spare_fd;              /* kept open to accept-and-refuse with
				    * when out of descriptors */
	struct loop_op pause_op;   /* accept paused after EMFILE */
	struct __kernel_timespec pause_ts;
	struct log_rl accept_rl;
	int sig_fd;
	struct loop_op sig_op;
	struct signalfd_siginfo sig;
	struct loop_op tick_op;
	struct __kernel_timespec tick_ts;
};

/* Bring the daemon up: store, staging, socket.  0 or -errno (logged). */
int ckptd_open(struct ckptd_main *m, const struct conf *conf);
/* Serve until SIGTERM/SIGINT.  0 or -errno. */
int ckptd_run(struct ckptd_main *m);
void ckptd_close(struct ckptd_main *m);

#endif
