/*
 * ckptd.c - the daemon's lifecycle: bring the store and the socket up,
 * accept clients, tick, and shut down on SIGTERM or SIGINT.
 *
 * Accepting never spins: out of descriptors it refuses what waits with a
 * spare descriptor and pauses (see accept_overload()).
 *
 * Shutdown is orderly: stop accepting, close every session (versions still
 * open are aborted, as a client crash would), let versions already sealing
 * finish, then exit.  One daemon per store: a lock file refuses a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ckptd.h"
#include "cluster.h"
#include "drain.h"
#include "lease.h"
#include "metrics.h"
#include "log.h"
#include "notify.h"
#include "pfs.h"
#include "pool.h"
#include "session.h"

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[CONF_PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int lock_store(const char *store)
{
	char path[CONF_PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/lock", store);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -EBUSY;
	}
	return fd;       /* held for the daemon's life */
}

/* Bind the Unix socket, replacing a stale one but not a live daemon's. */
/* Is a socket listening at sa?  Asked for up to LISTEN_GONE_MS: a ckptd
 * killed a moment ago may still listen while the kernel tears its
 * io_uring down (an accept in flight holds the socket past the exit). */
#define LISTEN_GONE_MS 2000

static int someone_listens(const struct sockaddr_un *sa)
{
	int fd, up = 0, ms;

	for (ms = 0; ms <= LISTEN_GONE_MS; ms += 50) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		up = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
		close(fd);
		if (!up)
			return 0;
		usleep(50 * 1000);
	}
	return 1;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	ret = someone_listens(&sa);
	if (ret)
		return ret < 0 ? ret : -EADDRINUSE;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		ret = -errno;
		goto out_close;
	}
	return fd;
out_close:
	close(fd);
	return ret;
}

static void arm_accept(struct ckptd_main *m);

/*
 * Out of descriptors (EMFILE, ENFILE) or memory, accept fails at once for as
 * long as a connection waits in the backlog: re-arming at once would spin.
 * So give up the spare descriptor, accept and refuse (-EMFILE) the
 * connections waiting now, take the spare again, and pause accepting for
 * ACCEPT_PAUSE_MS.  Connections that come meanwhile wait in the backlog.
 */
#define ACCEPT_PAUSE_MS 100
#define ACCEPT_DROP_MAX 64

static void on_accept_pause(struct loop_op *op, int res)
{
	struct ckptd_main *m = (struct ckptd_main *)((char *)op - offsetof(struct ckptd_main, pause_op));
	struct ckptd *d = &m->d;

	(void)res;
	if (!d->stopping)
		arm_accept(m);
}

static void accept_overload(struct ckptd_main *m, int err)
{
	struct ckptd *d = &m->d;
	struct pollfd p = { .fd = m->listen_fd, .events = POLLIN };
	struct io_uring_sqe *sqe;
	unsigned n = 0;
	int fd;

	if (m->spare_fd >= 0)
		close(m->spare_fd);
	while (n < ACCEPT_DROP_MAX && poll(&p, 1, 0) == 1 &&
	       (fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		session_refuse(fd, -EMFILE);
		n++;
	}
	m->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (log_rl_ok(&m->accept_rl, 1, ckptd_now_ms(), "accept: overload"))
		log_printf(LOG_WARNING, "accept: %s with %u connections open; refused %u waiting, pausing accept for %d ms",
			   strerror(-err), d->svc->nconns, n, ACCEPT_PAUSE_MS);
	m->pause_op.fn = on_accept_pause;
	m->pause_ts.tv_sec = 0;
	m->pause_ts.tv_nsec = ACCEPT_PAUSE_MS * 1000000ll;
	sqe = loop_sqe(&d->loop, &m->pause_op);
	io_uring_prep_timeout(sqe, &m->pause_ts, 0, 0);
}

static void on_accept(struct loop_op *op, int res)
{
	struct ckptd_main *m = (struct ckptd_main *)((char *)op - offsetof(struct ckptd_main, accept_op));
	struct ckptd *d = &m->d;

	if (d->stopping) {
		if (res >= 0)
			close(res);
		return;
	}
	if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS ||
	    res == -ENOMEM) {
		accept_overload(m, res);
		return;
	}
	if (res >= 0)
		session_start(d, res);
	else if (res != -EINTR && res != -ECONNABORTED &&
		 log_rl_ok(&m->accept_rl, 1, ckptd_now_ms(), "accept: errors"))
		log_printf(LOG_WARNING, "accept: %s", strerror(-res));
	arm_accept(m);
}

static void arm_accept(struct ckptd_main *m)
{
	struct ckptd *d = &m->d;
	struct io_uring_sqe *sqe;

	m->accept_op.fn = on_accept;
	sqe = loop_sqe(&d->loop, &m->accept_op);
	io_uring_prep_accept(sqe, m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
}

static void arm_signal(struct ckptd_main *m);

static void on_signal(struct loop_op *op, int res)
{
	struct ckptd_main *m = (struct ckptd_main *)((char *)op - offsetof(struct ckptd_main, sig_op));
	struct ckptd *d = &m->d;

	if (res > 0)
		loop_mark_defined(&m->sig, res);
	if (res != (int)sizeof(m->sig)) {
		arm_signal(m);
		return;
	}
	if (!d->stopping) {
		log_printf(LOG_NOTICE, "signal %u: shutting down", m->sig.ssi_signo);
		d->stopping = 1;
		shutdown(m->listen_fd, SHUT_RDWR);
		session_close_all(d);
		cluster_stop(d);
	}
	arm_signal(m);
}

static void arm_signal(struct ckptd_main *m)
{
	struct io_uring_sqe *sqe;

	m->sig_op.fn = on_signal;
	sqe = loop_sqe(&m->d.loop, &m->sig_op);
	io_uring_prep_read(sqe, m->sig_fd, &m->sig, sizeof(m->sig), 0);
}

static void arm_tick(struct ckptd_main *m);

static void on_tick(struct loop_op *op, int res)
{
	struct ckptd_main *m = (struct ckptd_main *)((char *)op - offsetof(struct ckptd_main, tick_op));
	struct ckptd *d = &m->d;
	uint64_t delta = d->st.ingest_bytes - d->st.rate_mark;

	(void)res;
	/* Bytes per second (ticks are 250 ms), smoothed over a few ticks. */
	d->st.ingest_rate = (d->st.ingest_rate * 3 + delta * 4) / 4;
	d->st.rate_mark = d->st.ingest_bytes;
	drain_tick(d);
	lease_tick(d);
	metrics_tick(d);
	cluster_tick(d);
	if (d->stopping && d->cat->nopen == 0) {
		d->loop.stop = 1;
		return;
	}
	arm_tick(m);
}

static void arm_tick(struct ckptd_main *m)
{
	struct io_uring_sqe *sqe;

	m->tick_op.fn = on_tick;
	m->tick_ts.tv_sec = 0;
	m->tick_ts.tv_nsec = 250 * 1000000;
	sqe = loop_sqe(&m->d.loop, &m->tick_op);
	io_uring_prep_timeout(sqe, &m->tick_ts, 0, 0);
}

static int open_signals(struct ckptd_main *m)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	m->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	return m->sig_fd < 0 ? -errno : 0;
}

/* Every connection is a descriptor: take all the hard limit allows. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		log_printf(LOG_INFO, "open files limit raised to %llu",
			   (unsigned long long)rl.rlim_cur);
}

/*
 * The broadcasts (event.h), in the order they are to run.  A version's
 * change: the waiters, then the cluster (the peers hear of the change; a
 * part that became LOCAL is protected), then the drain.  Another node's
 * part: the waiters on versions only other nodes hold.
 */
static void on_version_svc(void *arg, void *v)
{
	session_notify(arg, v);
}

static void on_version_cluster(void *arg, void *v)
{
	cluster_version_changed(arg, v);
}

static void on_version_drain(void *arg, void *v)
{
	drain_level_settled(arg, v);
}

static void on_part_svc(void *arg, void *obj)
{
	const struct event_part *ep = obj;

	session_notify_cluster(arg, ep->job, ep->version);
}

static void listen_events(struct ckptd *d)
{
	/* Four listeners of EVENT_MAX_LISTENERS: these cannot fail. */
	event_listen(&d->ev, EV_VERSION_CHANGED, on_version_svc, d);
	event_listen(&d->ev, EV_VERSION_CHANGED, on_version_cluster, d);
	event_listen(&d->ev, EV_VERSION_CHANGED, on_version_drain, d);
	event_listen(&d->ev, EV_PART_CHANGED, on_part_svc, d);
}

/* Whether pinning memory cannot run into RLIMIT_MEMLOCK: the limit is
 * unlimited, or CAP_IPC_LOCK lifts it. */
static int pin_unlimited(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2];
	struct rlimit r;

	if (getrlimit(RLIMIT_MEMLOCK, &r) == 0 && r.rlim_cur == RLIM_INFINITY)
		return 1;
	if (syscall(SYS_capget, &h, caps) < 0)
		return 0;
	return !!(caps[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &
		  CAP_TO_MASK(CAP_IPC_LOCK));
}

int ckptd_open(struct ckptd_main *m, const struct conf *conf)
{
	struct ckptd *d = &m->d;
	int ret, lock_fd, pin = pin_unlimited();

	memset(m, 0, sizeof(*m));
	d->segs = &m->segs;
	d->cat = &m->cat;
	d->ms = &m->ms;
	d->svc = &m->svc;
	d->conf = conf;
	listen_events(d);
	reader_open(&d->svc->rbufs, conf->chunk);
	m->listen_fd = m->sig_fd = -1;
	list_init(&d->svc->conns);
	list_init(&d->svc->hello_wait);
	list_init(&d->svc->uids);
	list_init(&d->svc->cwaiters);
	raise_nofile();
	m->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d->st.start_ms = ckptd_now_ms();
	ret = mkdir_p(conf->store, 0700);
	if (ret < 0) {
		log_printf(LOG_ERR, "store %s: %s", conf->store, strerror(-ret));
		return ret;
	}
	lock_fd = lock_store(conf->store);
	if (lock_fd < 0) {
		log_printf(LOG_ERR, "store %s: %s", conf->store,
			   lock_fd == -EBUSY ? "another ckptd is using it"
					     : strerror(-lock_fd));
		return lock_fd;
	}
	ret = segs_open(d->segs, conf->store, conf->segment, conf->capacity,
			conf->reserve, conf->direct);
	if (ret < 0) {
		log_printf(LOG_ERR, "store %s: segments: %s", conf->store,
			   strerror(-ret));
		goto out_lock;
	}
	ret = catalog_open(d->cat, conf->store, d->segs);
	if (ret < 0) {
		log_printf(LOG_ERR, "store %s: catalog: %s", conf->store,
			   strerror(-ret));
		goto out_catalog;
	}
	ret = loop_init(&d->loop, conf->queue_depth);
	if (ret < 0) {
		log_printf(LOG_ERR, "io_uring: %s", strerror(-ret));
		goto out_catalog;
	}
	/* After the loop, which registers each lease (loop.h), where pinning
	 * them cannot use up an RLIMIT_MEMLOCK the drain's rings need. */
	staging_init(&d->staging, conf->staging, conf->staging_client,
		     (conf->mlock ? STAGING_MLOCK : 0) |
		     (conf->staging_hugepages ? STAGING_HUGE : 0),
		     pin ? &d->loop : NULL);
	if (!pin)
		log_printf(LOG_NOTICE, "staging: not registered with io_uring (RLIMIT_MEMLOCK is limited and CAP_IPC_LOCK missing; LimitMEMLOCK=infinity in the unit lifts it): disk writes from staging pin its pages each time");
	/* Root's reserve of huge pages now, for the mount; the rest is made
	 * in the background (staging_fill, below). */
	staging_prefault_huge(&d->staging, conf->staging_client);
	if (d->staging.huge_total)
		log_printf(LOG_INFO, "staging: %llu MiB of root's leases on 2 MiB huge pages",
			   (unsigned long long)(d->staging.huge_total >> 20));
	ret = open_signals(m);
	if (ret < 0)
		goto out_staging;
	ret = mkdir_p(conf->dir, 0755);
	m->listen_fd = ret < 0 ? ret : listen_unix(conf->socket);
	if (m->listen_fd < 0) {
		ret = m->listen_fd;
		log_printf(LOG_ERR, "socket %s: %s", conf->socket,
			   ret == -EADDRINUSE ? "a ckptd is already listening"
					      : strerror(-ret));
		goto out_signals;
	}
	/* The HTTP thread inherits the blocked signals (signalfd). */
	if (conf->metrics[0]) {
		ret = metrics_open(conf->metrics, &d->metrics);
		if (ret < 0)
			goto out_listen;
	}
	/* The drain copies on [drain] threads of them, a cluster's
	 * protection on CLUSTER_ENCODERS; the rest stay free for short
	 * blocking work (manifest writes, the shards held for peers). */
	ret = pool_open(&d->pool, &d->loop, POOL_SPARE_THREADS +
			(conf->drain_target[0] ? conf->drain_threads : 0) +
			(conf->cluster_nodes.n ? CLUSTER_ENCODERS : 0),
			pfs_thread_exit);
	if (ret < 0) {
		log_printf(LOG_ERR, "worker threads: %s", strerror(-ret));
		goto out_metrics;
	}
	d->cat->pool = d->pool;
	d->segs->pool = d->pool;
	segs_refill(d->segs);
	ret = staging_fill(&d->staging, &d->loop, conf->staging_client);
	if (ret < 0)
		log_printf(LOG_WARNING, "staging: no thread to make leases ahead (%s): they are made as clients ask",
			   strerror(-ret));
	ret = drain_open(d);
	if (ret < 0) {
		log_printf(LOG_ERR, "drain to %s: %s", conf->drain_target,
			   strerror(-ret));
		goto out_pool;
	}
	ret = cluster_open(d);
	if (ret < 0) {
		log_printf(LOG_ERR, "cluster: %s", strerror(-ret));
		goto out_cluster;
	}
	cluster_start(d);
	metrics_publish(d);     /* the first scrape has real values */
	arm_accept(m);
	arm_signal(m);
	arm_tick(m);
	log_printf(LOG_NOTICE, "ckptd %d ready: socket %s, store %s (%u versions, capacity %llu MiB, %s I/O)",
		   (int)getpid(), conf->socket, conf->store, d->cat->nversions,
		   (unsigned long long)(d->segs->capacity >> 20),
		   d->segs->direct ? "direct" : "buffered");
	ret = notify_send("READY=1\nSTATUS=serving");
	if (ret < 0)
		log_printf(LOG_WARNING, "systemd notification: %s",
			   strerror(-ret));
	return 0;

out_cluster:
	cluster_stop(d);        /* no-op without a cluster */
	drain_cancel(d);
out_pool:
	d->cat->pool = NULL;
	d->segs->pool = NULL;
	pool_close(d->pool);
	d->pool = NULL;
	staging_fill_stop(&d->staging);
	drain_close(d);         /* no-op when drain_open failed */
	/* After the pool: the tasks a cluster started as it opened (hold.c's
	 * verifications) use it until they are joined or dropped. */
	cluster_close(d);
out_metrics:
	metrics_close(d->metrics);
	d->metrics = NULL;
out_listen:
	close(m->listen_fd);
	unlink(conf->socket);
out_signals:
	close(m->sig_fd);
out_staging:
	staging_release(&d->staging);
	loop_release(&d->loop);
out_catalog:
	catalog_close(d->cat);
	segs_close(d->segs);
out_lock:
	close(lock_fd);
	if (m->spare_fd >= 0)
		close(m->spare_fd);
	return ret;
}

int ckptd_run(struct ckptd_main *m)
{
	return loop_run(&m->d.loop);
}

void ckptd_close(struct ckptd_main *m)
{
	struct ckptd *d = &m->d;
	notify_send("STOPPING=1");
	metrics_close(d->metrics);
	d->metrics = NULL;
	session_close_all(d);
	cluster_stop(d);
	drain_cancel(d);
	d->cat->pool = NULL;
	d->segs->pool = NULL;
	pool_close(d->pool);     /* tasks hold the drain: before drain_close */
	d->pool = NULL;
	staging_fill_stop(&d->staging);
	drain_close(d);
	loop_release(&d->loop);
	cluster_close(d);
	close(m->listen_fd);
	close(m->sig_fd);
	if (m->spare_fd >= 0)
		close(m->spare_fd);
	unlink(d->conf->socket);
	catalog_close(d->cat);
	segs_close(d->segs);
	staging_release(&d->staging);
	reader_close(&d->svc->rbufs);
	log_printf(LOG_NOTICE, "ckptd stopped");
}
