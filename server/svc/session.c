/*
 * session.c - client connections: receive, decode, dispatch, reply.
 *
 * Requests are small control frames (names and offsets); the largest is
 * REQ_MAX payload bytes, far below the protocol's limit, so a client cannot
 * make ckptd buffer much.  Replies may be large (listings) and are queued,
 * but not without bound: a client that sends requests and does not read the
 * replies stops being read once QUEUE_MIN bytes of replies (more with a
 * lease, see may_read()) wait for it, so its socket fills and its own send
 * blocks, and it is read again once it has read them.
 * Every connection holds references on what it uses (versions through its
 * writer handles, itself through in-flight operations); closing drops them
 * and aborts versions it joined but did not commit.
 *
 * One uid may hold at most [ckptd] max_conns_per_uid connections (root has
 * no limit): ckptd must keep answering root and the other users while one
 * user opens connections by the thousand.  A connection over the limit is
 * told why (-EUSERS) and closed at once, before it costs a buffer.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster.h"
#include "drain.h"
#include "ingest.h"
#include "lease.h"
#include "log.h"
#include "nsops.h"
#include "ops.h"
#include "plan.h"
#include "reader.h"
#include "seek.h"
#include "session.h"

#define REQ_MAX  (16u << 10)
#define RBUF_CAP (PROTO_HDR_LEN + REQ_MAX)
#define QUEUE_MIN (1u << 20)    /* reply bytes queued before reading stops */
#define WACK_ROOM 64            /* and per 4 KiB record of a lease */
#define WAIT_ROOM 256           /* what a parked WAIT counts as */
#define READS_MAX 8             /* READs in progress (libckpt keeps 2) */
#define WRITES_SLACK 16         /* WRITEs in flight beyond one per 4 KiB */

struct waiter_link {
	struct waiter w;
	struct list conn_link;    /* in conn's waiter list */
	struct version *v;        /* holds a reference: a waiter may outlive
				   * the version's place in the catalog;
				   * NULL: a WAIT in ckptd.cwaiters on a
				   * version only other nodes hold, named
				   * by job and version below */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
};

static void conn_close(struct conn *c);
static void recv_arm(struct conn *c);
static void recv_resume(struct conn *c);
static void uid_conns_put(struct ckptd *d, uid_t uid);

typedef void (*op_fn)(struct conn *c, const struct proto_msg *req);

static const op_fn ops[PROTO_NTYPES] = {
	[PROTO_HELLO] = lease_op_hello,
	[PROTO_BEGIN] = op_begin,
	[PROTO_LIST_PARTS] = op_list_parts,
	[PROTO_LIST_NODES] = op_list_nodes,
	[PROTO_WRITE] = op_write,
	[PROTO_COMMIT] = op_commit,
	[PROTO_ABORT] = op_abort,
	[PROTO_WAIT] = op_wait,
	[PROTO_LATEST] = op_latest,
	[PROTO_PLAN] = op_plan,
	[PROTO_READ] = op_read,
	[PROTO_SEEK_DATA] = op_seek_data,
	[PROTO_LIST_JOBS] = op_list_jobs,
	[PROTO_LIST_VERSIONS] = op_list_versions,
	[PROTO_LIST_FILES] = op_list_files,
	[PROTO_STAT] = op_stat,
	[PROTO_REMOVE] = op_remove,
	[PROTO_STATUS] = op_status,
	[PROTO_TRUNCATE] = op_truncate,
	[PROTO_UNLINK] = op_unlink,
	[PROTO_RENAME] = op_rename,
	[PROTO_LINK] = op_link,
	[PROTO_SETATTR] = op_setattr,
	[PROTO_SETXATTR] = op_setxattr,
	[PROTO_GETXATTRS] = op_getxattrs,
	[PROTO_STAT_FILE] = op_stat_file,
	[PROTO_COMMIT_NAME] = op_commit_name,
	[PROTO_DRAIN] = op_drain,
	[PROTO_REBUILD] = op_rebuild,
	[PROTO_DRAIN_NOW] = op_drain_now,
	[PROTO_RELEASE] = lease_op_release,
};

/* Connections per uid (struct ckptd.uids); an entry lives while n > 0. */
struct uid_conns {
	struct list link;
	uid_t uid;
	uint32_t n;
};

/* The per-connection list of its waiters lives beside the conn. */
struct conn_ext {
	struct conn c;
	struct list waiters;      /* struct waiter_link.conn_link */
};

static struct list *conn_waiters(struct conn *c)
{
	return &((struct conn_ext *)c)->waiters;
}

void conn_put(struct conn *c)
{
	if (--c->refs)
		return;
	if (c->lease) {
		staging_put(&c->d->staging, c->lease);
		lease_freed(c->d);
	}
	close(c->fd);
	free(c->rbuf);
	free(c->wbuf);
	free(c->sbuf);
	free(c->w);
	free(c);
}

/* ---- sending ------------------------------------------------------------ */

static void send_kick(struct conn *c);

/* The send in flight reads sbuf while replies accumulate in wbuf; when it
 * completes the two swap, so wbuf may always grow. */
static void on_send(struct loop_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, send_op));

	c->sending = 0;
	if (res <= 0) {
		if (!c->closed)
			log_printf(LOG_INFO, "session: pid %d: send: %s", c->pid,
				   strerror(res ? -res : EPIPE));
		conn_close(c);
	} else {
		c->soff += res;
		send_kick(c);
		if (c->paused)
			recv_resume(c);
	}
	conn_put(c);
}

static void send_kick(struct conn *c)
{
	struct io_uring_sqe *sqe;
	uint8_t *tmp;
	size_t cap;

	if (c->sending || c->closed)
		return;
	if (c->soff == c->slen) {
		/* The HELLO reply carries a memfd and goes by itself, at a
		 * frame boundary: now, with nothing left in flight. */
		if (c->hello_ready) {
			lease_send_hello(c);
			if (c->sending || c->closed)
				return;
		}
		if (!c->wlen)
			return;
		tmp = c->sbuf;
		cap = c->scap;
		c->sbuf = c->wbuf;
		c->scap = c->wcap;
		c->slen = c->wlen;
		c->soff = 0;
		c->wbuf = tmp;
		c->wcap = cap;
		c->wlen = 0;
	}
	c->sending = 1;
	conn_get(c);
	c->send_op.fn = on_send;
	sqe = loop_sqe(&c->d->loop, &c->send_op);
	io_uring_prep_send(sqe, c->fd, c->sbuf + c->soff, c->slen - c->soff,
			   MSG_NOSIGNAL);
}

static int wbuf_reserve(struct conn *c, size_t n)
{
	size_t cap = c->wcap ? c->wcap : 4096;
	uint8_t *p;

	if (c->wlen + n <= c->wcap)
		return 0;
	while (cap < c->wlen + n)
		cap *= 2;
	p = realloc(c->wbuf, cap);
	if (!p)
		return -ENOMEM;
	c->wbuf = p;
	c->wcap = cap;
	return 0;
}

struct enc *conn_reply_begin(struct conn *c, const struct proto_msg *m,
			     struct enc *e)
{
	struct proto_msg r = *m;
	size_t cap = PROTO_HDR_LEN + PROTO_MAX_PAYLOAD;

	if (c->closed)
		return NULL;
	if (wbuf_reserve(c, cap) < 0) {
		log_printf(LOG_ERR, "session: pid %d: out of memory for a reply",
			   c->pid);
		conn_close(c);
		return NULL;
	}
	r.type |= PROTO_REPLY;
	proto_begin(e, c->wbuf + c->wlen, cap, &r);
	return e;
}

void conn_reply_end(struct conn *c, struct enc *e)
{
	int len = proto_finish(e);

	if (len < 0) {
		log_printf(LOG_ERR, "session: reply too large for pid %d",
			   c->pid);
		conn_close(c);
		return;
	}
	c->wlen += len;
	send_kick(c);
}

void conn_reply(struct conn *c, const struct proto_msg *m)
{
	struct enc e;

	if (conn_reply_begin(c, m, &e))
		conn_reply_end(c, &e);
}

void conn_reply_status(struct conn *c, const struct proto_msg *req,
		       int status)
{
	struct proto_msg r;

	memset(&r, 0, sizeof(r));
	r.type = req->type;
	r.seq = req->seq;
	r.status = status;
	conn_reply(c, &r);
}

/* ---- waiters ------------------------------------------------------------ */

static void waiter_drop(struct waiter_link *wl)
{
	struct conn *c = wl->w.conn;
	struct version *v = wl->v;

	list_del(&wl->w.link);
	list_del(&wl->conn_link);
	c->nwait--;
	free(wl);
	if (v)
		version_put(c->d->cat, v);
	conn_put(c);
}

/* Answer wl's WAIT with st and the level reached, and drop it.  The reply
 * may close the connection (out of memory), which drops its other waiters
 * too: callers walking a waiter list start again from its head. */
static void wait_reply(struct conn *c, uint32_t seq, int st, uint32_t level)
{
	struct proto_msg r;

	memset(&r, 0, sizeof(r));
	r.type = PROTO_WAIT;
	r.seq = seq;
	r.status = st;
	r.level = level;
	conn_reply(c, &r);
}

static void waiter_answer(struct waiter_link *wl, int st, uint32_t level)
{
	struct conn *c = wl->w.conn;
	uint32_t seq = wl->w.seq;

	conn_get(c);
	waiter_drop(wl);
	wait_reply(c, seq, st, level);
	conn_put(c);
}

static struct waiter_link *waiter_new(struct conn *c, struct list *list,
				      const struct proto_msg *req)
{
	struct waiter_link *wl = calloc(1, sizeof(*wl));

	if (!wl)
		return NULL;
	wl->w.conn = c;
	wl->w.seq = req->seq;
	wl->w.level = req->level;
	conn_get(c);
	list_add_tail(list, &wl->w.link);
	list_add_tail(conn_waiters(c), &wl->conn_link);
	c->nwait++;
	return wl;
}

int session_wait(struct conn *c, struct version *v,
		 const struct proto_msg *req)
{
	struct waiter_link *wl = waiter_new(c, &v->waiters, req);

	if (!wl)
		return -ENOMEM;
	wl->v = v;
	version_get(v);
	return 0;
}

/* What wl's WAIT on v gets now: 1, not yet; else its status. */
static int waiter_status(struct ckptd *d, struct version *v,
			 const struct waiter_link *wl)
{
	if (drain_wait_level(d, v) >= wl->w.level)
		return 0;
	if (version_dead(v))
		return v->error ? v->error : -CKPT_EFAILED;
	if (v->removed)
		return -CKPT_ENOVERSION;
	if (drain_wait_check(d, v, wl->w.level) < 0)
		return -CKPT_ESKIPPED;
	return 1;
}

/* wl, a WAIT on a version other nodes held, now that this node has a part
 * of it (v): it waits on that part, as a WAIT made now would (op_wait()). */
static void waiter_adopt(struct waiter_link *wl, struct version *v)
{
	list_del(&wl->w.link);
	wl->v = v;
	version_get(v);
	list_add_tail(&v->waiters, &wl->w.link);
}

/* The WAITs of session_wait_cluster() on v's name: v's now. */
static void adopt_cluster_waiters(struct ckptd *d, struct version *v)
{
	struct list *pos, *tmp;

	if (!v->job)
		return;
	list_for_each_safe(pos, tmp, &d->svc->cwaiters) {
		struct waiter_link *wl = (struct waiter_link *)
			list_entry(pos, struct waiter, link);

		if (!strcmp(wl->job, v->job->name) &&
		    !strcmp(wl->version, v->name))
			waiter_adopt(wl, v);
	}
}

void session_notify(struct ckptd *d, struct version *v)
{
	struct list *pos;

	version_get(v);           /* the last waiter may hold the last ref */
	adopt_cluster_waiters(d, v);
again:
	list_for_each(pos, &v->waiters) {
		struct waiter_link *wl = (struct waiter_link *)
			list_entry(pos, struct waiter, link);
		int st = waiter_status(d, v, wl);

		if (st <= 0) {
			waiter_answer(wl, st, drain_wait_level(d, v));
			goto again;
		}
	}
	version_put(d->cat, v);
}

/* What a WAIT for want on job/version, which only other nodes hold, gets
 * now (the version over the cluster, cluster.h): 1, not yet (*level set);
 * else its status: 0 reached, or the version failed or is gone. */
static int cluster_wait_status(struct ckptd *d, const char *job,
			       const char *version, uid_t caller,
			       uint32_t want, uint32_t *level)
{
	struct ckpt_version_info info;

	*level = CKPT_NONE;
	if (cluster_version_view(d, job, version, NULL, (uint32_t)caller,
				 &info) < 0)
		return -CKPT_ENOVERSION;
	*level = info.level;
	if (info.state == CKPT_ST_FAILED)
		return -CKPT_EFAILED;
	return info.state == CKPT_ST_SEALED && info.level >= want ? 0 : 1;
}

int session_wait_cluster(struct conn *c, const struct proto_msg *req)
{
	struct waiter_link *wl;
	uint32_t level;
	int st = cluster_wait_status(c->d, req->job, req->version, c->uid,
				     req->level, &level);

	if (st == -CKPT_ENOVERSION)
		return st;
	if (st <= 0) {
		wait_reply(c, req->seq, st, level);
		return 0;
	}
	wl = waiter_new(c, &c->d->svc->cwaiters, req);
	if (!wl)
		return -ENOMEM;
	snprintf(wl->job, sizeof(wl->job), "%s", req->job);
	snprintf(wl->version, sizeof(wl->version), "%s", req->version);
	return 0;
}

void session_notify_cluster(struct ckptd *d, const char *job,
			    const char *version)
{
	struct version *v;
	struct list *pos;

again:
	list_for_each(pos, &d->svc->cwaiters) {
		struct waiter_link *wl = (struct waiter_link *)
			list_entry(pos, struct waiter, link);
		uint32_t level;
		int st;

		if (job && (strcmp(wl->job, job) || strcmp(wl->version, version)))
			continue;
		v = catalog_version(d->cat, wl->job, wl->version);
		if (v && v->job) {
			/* This node has a part now: its changes answer it. */
			waiter_adopt(wl, v);    /* out of this list */
			st = waiter_status(d, v, wl);
			if (st <= 0)
				waiter_answer(wl, st, drain_wait_level(d, v));
			goto again;
		}
		st = cluster_wait_status(d, wl->job, wl->version,
					 wl->w.conn->uid, wl->w.level, &level);
		if (st <= 0) {
			waiter_answer(wl, st, level);
			goto again;
		}
	}
}

/* ---- receiving ---------------------------------------------------------- */

/*
 * A hostile local client can send bad frames, or open connections, as fast
 * as it can: log at most LOG_RL_MAX of each a second, and say how many were
 * not.  Loop thread only.
 */
#define LOG_RL_MAX 10

static int bad_log_ok(struct ckptd *d)
{
	return log_rl_ok(&d->svc->bad_rl, LOG_RL_MAX, ckptd_now_ms(),
			 "session: bad frames");
}

static int refuse_log_ok(struct ckptd *d)
{
	return log_rl_ok(&d->svc->refuse_rl, LOG_RL_MAX, ckptd_now_ms(),
			 "session: refused connections");
}

/* Decode and dispatch one whole frame, which decoding rewrites (proto.h):
 * the request's strings live in c->rbuf until the handler returns.  -1 if
 * the stream is broken. */
static int dispatch(struct conn *c, uint8_t *frame, size_t len)
{
	struct proto_msg req;
	int ret;

	ret = proto_decode(frame, len, &req, NULL);
	if (ret < 0) {
		struct proto_hdr h;

		if (bad_log_ok(c->d))
			log_printf(LOG_WARNING, "session: pid %d uid %u: bad frame: %s",
				   c->pid, c->uid, ckpt_strerror(ret));
		/* A frame with a sound header but bad fields can be answered,
		 * except a WRITE: its answer (WACK) needs the id we could not
		 * trust, so the connection goes. */
		if (ret != -CKPT_EBADMAGIC && ret != -CKPT_ECORRUPT &&
		    proto_peek(frame, len, &h) == 0 &&
		    !(h.type & PROTO_REPLY) && h.type != PROTO_WRITE) {
			req.type = h.type;
			req.seq = h.seq;
			conn_reply_status(c, &req, ret);
			return 0;
		}
		return -1;
	}
	if ((req.type & PROTO_REPLY) || !ops[req.type] ||
	    req.type == PROTO_WACK) {
		if (bad_log_ok(c->d))
			log_printf(LOG_WARNING, "session: pid %d: unexpected %s frame",
				   c->pid, proto_type_name(req.type));
		return -1;
	}
	ops[req.type](c, &req);
	return 0;
}

/* May c's requests be read?  Not while:
 *  - READS_MAX of its READs are in progress (each may hold record buffers
 *    of up to 64 MiB);
 *  - more of its WRITEs are in flight than its lease has 4 KiB records
 *    (plus WRITES_SLACK): a client that reuses ring offsets could have any
 *    number, each a record and a write op until the disk has it;
 *  - the replies it is owed reach the bound: those queued, and its parked
 *    WAITs (WAIT_ROOM each: they cost memory now and a reply later).  The
 *    bound is QUEUE_MIN plus room for one WACK per 4 KiB of its lease.
 * A writer that follows the protocol has at most one WRITE per 4 KiB of
 * its lease in flight and reads the WACKs when it needs ring space
 * (libckpt), so none of this ever stops it. */
static int may_read(const struct conn *c)
{
	size_t recs = c->lease ? c->lease->size / 4096 : 0;

	return c->nreads < READS_MAX && c->nwrites < WRITES_SLACK + recs &&
	       c->wlen + (c->slen - c->soff) + (size_t)c->nwait * WAIT_ROOM <
	       QUEUE_MIN + recs * WACK_ROOM;
}

/* Dispatch the whole frames in c->rbuf while c may be read, and keep the
 * rest.  0, or -1 if the stream is broken or c was closed. */
static int process(struct conn *c)
{
	struct proto_hdr h;
	size_t used = 0;
	int ret;

	while (c->rlen - used >= PROTO_HDR_LEN && may_read(c)) {
		ret = proto_peek(c->rbuf + used, c->rlen - used, &h);
		if (ret < 0 || h.len > REQ_MAX) {
			if (bad_log_ok(c->d))
				log_printf(LOG_WARNING, "session: pid %d uid %u: %s; closing",
					   c->pid, c->uid,
					   ret < 0 ? ckpt_strerror(ret)
						   : "oversized frame");
			return -1;
		}
		if (c->rlen - used < PROTO_HDR_LEN + h.len)
			break;
		if (dispatch(c, c->rbuf + used, PROTO_HDR_LEN + h.len) < 0)
			return -1;
		used += PROTO_HDR_LEN + h.len;
		if (c->closed)
			return -1;
	}
	memmove(c->rbuf, c->rbuf + used, c->rlen - used);
	c->rlen -= used;
	return 0;
}

/* A paused c has no receive to see its client hang up (a client whose
 * WAITs are parked may have no send in flight either): a poll does.  It
 * stays armed once c reads again, and fires at the latest when conn_close()
 * shuts the socket. */
static void on_hup(struct loop_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, hup_op));

	c->hup_armed = 0;
	if (!c->closed && (res < 0 || (res & (POLLRDHUP | POLLHUP | POLLERR))))
		conn_close(c);
	conn_put(c);
}

/* Read on, or pause until replies have been sent (recv_resume()). */
static void recv_next(struct conn *c)
{
	struct io_uring_sqe *sqe;

	c->paused = !may_read(c);
	if (!c->paused) {
		recv_arm(c);
	} else if (!c->hup_armed) {
		c->hup_armed = 1;
		conn_get(c);
		c->hup_op.fn = on_hup;
		sqe = loop_sqe(&c->d->loop, &c->hup_op);
		io_uring_prep_poll_add(sqe, c->fd, POLLRDHUP);
	}
}

static void on_recv(struct loop_op *op, int res)
{
	struct conn *c = (struct conn *)((char *)op - offsetof(struct conn, recv_op));

	if (res <= 0 || c->closed)
		goto out_close;
	loop_mark_defined(c->rbuf + c->rlen, res);
	c->rlen += res;
	if (process(c) < 0)
		goto out_close;
	recv_next(c);
	conn_put(c);            /* the ref of the completed receive */
	return;

out_close:
	conn_close(c);
	conn_put(c);
}

/* A send made room: a paused c is read again, starting with the frames it
 * had sent already. */
static void recv_resume(struct conn *c)
{
	if (c->closed || !may_read(c))
		return;
	if (process(c) < 0) {
		conn_close(c);
		return;
	}
	recv_next(c);
}

static void recv_arm(struct conn *c)
{
	struct io_uring_sqe *sqe;

	conn_get(c);
	c->recv_op.fn = on_recv;
	sqe = loop_sqe(&c->d->loop, &c->recv_op);
	io_uring_prep_recv(sqe, c->fd, c->rbuf + c->rlen, RBUF_CAP - c->rlen, 0);
}

/* ---- lifecycle ---------------------------------------------------------- */

static struct uid_conns *uid_conns_find(struct ckptd *d, uid_t uid)
{
	struct list *pos;

	for (pos = d->svc->uids.next; pos != &d->svc->uids; pos = pos->next) {
		struct uid_conns *u = list_entry(pos, struct uid_conns, link);

		if (u->uid == uid)
			return u;
	}
	return NULL;
}

/* Count one more connection of uid.  0, -EUSERS over the limit, or
 * -ENOMEM. */
static int uid_conns_get(struct ckptd *d, uid_t uid)
{
	uint32_t max = d->conf->max_conns_per_uid;
	struct uid_conns *u = uid_conns_find(d, uid);

	if (u && uid != 0 && max && u->n >= max)
		return -EUSERS;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->uid = uid;
		list_add_tail(&d->svc->uids, &u->link);
	}
	u->n++;
	return 0;
}

static void uid_conns_put(struct ckptd *d, uid_t uid)
{
	struct uid_conns *u = uid_conns_find(d, uid);

	if (u && --u->n == 0) {
		list_del(&u->link);
		free(u);
	}
}

void session_refuse(int fd, int err)
{
	uint8_t frame[PROTO_HDR_LEN + 64];
	struct proto_msg r;
	int len;

	memset(&r, 0, sizeof(r));
	r.type = PROTO_HELLO | PROTO_REPLY;
	r.status = err;
	len = proto_encode(frame, sizeof(frame), &r);
	/* Best effort: a full socket buffer just means a plain close. */
	if (len > 0 && send(fd, frame, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		len = 0;
	close(fd);
}

int session_busy(struct conn *c)
{
	uint32_t known = 2;     /* the list's, and the receive's running now */
	struct list *pos;

	if (c->sending)
		known++;
	if (c->hup_armed)
		known++;
	for (pos = conn_waiters(c)->next; pos != conn_waiters(c);
	     pos = pos->next)
		known++;
	return c->refs > known;
}

static void conn_close(struct conn *c)
{
	struct list *pos, *tmp;
	uint32_t i;

	if (c->closed)
		return;
	c->closed = 1;
	shutdown(c->fd, SHUT_RDWR);
	list_del(&c->link);
	list_del(&c->hello_link);
	c->d->svc->nconns--;
	uid_conns_put(c->d, c->uid);
	for (i = 0; i < c->nw; i++) {
		struct version *v = c->w[i].v;

		if (!v)
			continue;
		if (!c->w[i].committed && v->state == CKPT_ST_OPEN) {
			log_printf(LOG_WARNING, "session: pid %d left %s/%s without committing; version aborted",
				   c->pid, v->job ? v->job->name : "?", v->name);
			ingest_abandon(c->d, v, -CKPT_EABORTED);
		}
		c->w[i].v = NULL;
		version_put(c->d->cat, v);
	}
	list_for_each_safe(pos, tmp, conn_waiters(c))
		waiter_drop(list_entry(pos, struct waiter_link, conn_link));
	log_printf(LOG_DEBUG, "session: pid %d disconnected", c->pid);
	conn_put(c);            /* the list's reference */
}

void session_start(struct ckptd *d, int fd)
{
	struct conn_ext *x;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int ret;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		log_printf(LOG_WARNING, "session: SO_PEERCRED: %s",
			   strerror(errno));
		close(fd);
		return;
	}
	ret = uid_conns_get(d, cred.uid);
	if (ret < 0) {
		if (refuse_log_ok(d))
			log_printf(LOG_WARNING, "session: pid %d uid %u refused: %s (max_conns_per_uid %u)",
				   (int)cred.pid, (unsigned)cred.uid,
				   strerror(-ret), d->conf->max_conns_per_uid);
		session_refuse(fd, ret);
		return;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		goto out_uid;
	c = &x->c;
	c->rbuf = malloc(RBUF_CAP);
	if (!c->rbuf)
		goto out_free;
	list_init(&x->waiters);
	list_init(&c->hello_link);
	c->d = d;
	c->fd = fd;
	c->uid = cred.uid;
	c->pid = cred.pid;
	c->refs = 1;
	list_add_tail(&d->svc->conns, &c->link);
	d->svc->nconns++;
	log_printf(LOG_DEBUG, "session: pid %d uid %u connected", c->pid,
		   c->uid);
	recv_arm(c);
	return;

out_free:
	free(x);
out_uid:
	uid_conns_put(d, cred.uid);
	close(fd);
}

void session_close_all(struct ckptd *d)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &d->svc->conns)
		conn_close(list_entry(pos, struct conn, link));
}

int session_may(const struct conn *c, const struct job *j)
{
	return c->uid == 0 || c->uid == j->uid ? 0 : -EACCES;
}
