/*
 * lease.c - lending staging to connections: HELLO, RELEASE, and the clients
 * waiting for staging.
 *
 * A HELLO asks for a lease.  If the budget, or the uid's share of it
 * ([ckptd] staging_per_uid; root has none), has nothing to spare, the
 * connection waits on ckptd.hello_wait, in arrival order.  When staging is
 * returned the waiters are served in order; one that waits only for its own
 * uid's share does not hold up the others behind it, so one user's many
 * clients never stall another user.  A waiter that has waited [ckptd]
 * staging_wait seconds is answered -ENOBUFS, and the log names who holds the
 * staging: a writer never blocks forever without saying why.
 *
 * The HELLO reply carries the memfd in its own sendmsg(), which must start
 * at a frame boundary of the reply stream.  When replies are in flight (the
 * client may send other requests while it waits), the lease is set aside
 * (c->hello_ready) and the sender sends the reply once its queue is empty.
 *
 * RELEASE gives the lease back while the connection stays (ckptfs does so
 * when idle), or cancels a HELLO still waiting.  A lease still in use by a
 * disk write or a read into it is not given back: -EBUSY.
 *
 * Loop thread only.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "lease.h"
#include "log.h"
#include "session.h"

#define LOG_RL_MAX 10

/* "waits" and "gave up" lines: one per HELLO, which any client can send. */
static int wait_log_ok(struct ckptd *d)
{
	return log_rl_ok(&d->svc->wait_rl, LOG_RL_MAX, ckptd_now_ms(),
			 "staging: waits");
}

/* The share of staging c's uid may hold; 0 = no limit (root). */
static uint64_t share_of(const struct conn *c)
{
	const struct conf *conf = c->d->conf;

	if (c->uid == 0)
		return 0;
	return conf->staging_per_uid ? conf->staging_per_uid
				     : conf->staging / 2;
}

static void hello_reply_status(struct conn *c, int status)
{
	struct proto_msg req = { .type = PROTO_HELLO, .seq = c->hello_seq };

	conn_reply_status(c, &req, status);
}

/* sendmsg() the HELLO reply with the memfd.  0 or -errno. */
static int hello_sendmsg(struct conn *c)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	uint8_t frame[PROTO_HDR_LEN + 64];
	struct proto_msg r;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec iov;
	int len;

	memset(&r, 0, sizeof(r));
	r.type = PROTO_HELLO | PROTO_REPLY;
	r.seq = c->hello_seq;
	r.size = c->lease->size;
	r.aux = c->d->conf->chunk;
	len = proto_encode(frame, sizeof(frame), &r);
	if (len < 0)
		return len;
	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	iov.iov_base = frame;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &c->lease->fd, sizeof(int));
	if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != len)
		return -EIO;
	return 0;
}

struct lease *lease_of(const struct conn *c)
{
	return c->hello_ready ? NULL : c->lease;
}

void lease_send_hello(struct conn *c)
{
	int ret;

	c->hello_ready = 0;
	ret = hello_sendmsg(c);
	if (ret == 0) {
		log_printf(LOG_DEBUG, "staging: lent %zu bytes to pid %d uid %u",
			   c->lease->size, c->pid, c->uid);
		return;
	}
	log_printf(LOG_WARNING, "staging: cannot pass the lease to pid %d: %s",
		   c->pid, strerror(-ret));
	/* Waiters get it at the next tick: this may run inside
	 * lease_freed(), which must not be entered again. */
	staging_put(&c->d->staging, c->lease);
	c->lease = NULL;
	hello_reply_status(c, ret);
}

/*
 * Lend c a lease now if staging allows.  1 if answered (lent, or an error
 * sent), 0 if the budget is used up, -EDQUOT if c's uid has used its share.
 */
static int hello_try(struct conn *c)
{
	int ret;

	ret = staging_get_share(&c->d->staging, c->uid, c->hello_want,
				share_of(c), &c->lease);
	if (ret == -EAGAIN)
		return 0;
	if (ret == -EDQUOT)
		return ret;
	if (ret < 0) {
		log_printf(LOG_WARNING, "staging: cannot lend to pid %d: %s",
			   c->pid, strerror(-ret));
		hello_reply_status(c, ret);
		return 1;
	}
	c->hello_ready = 1;
	if (!c->sending && c->soff == c->slen)
		lease_send_hello(c);
	return 1;
}

void lease_op_hello(struct conn *c, const struct proto_msg *req)
{
	const struct conf *conf = c->d->conf;
	int ret;

	if (c->lease || !list_empty(&c->hello_link)) {
		conn_reply_status(c, req, -EALREADY);
		return;
	}
	c->hello_want = req->size ? req->size : conf->staging_client;
	if (c->hello_want > conf->staging)
		c->hello_want = conf->staging;
	c->hello_seq = req->seq;
	ret = hello_try(c);
	if (ret == 1)
		return;
	if (wait_log_ok(c->d))
		log_printf(LOG_INFO, "staging: %s; pid %d uid %u waits",
			   ret ? "uid at its staging_per_uid share" : "full",
			   c->pid, c->uid);
	c->hello_since = ckptd_now_ms();
	list_add_tail(&c->d->svc->hello_wait, &c->hello_link);
}

void lease_freed(struct ckptd *d)
{
	struct list *pos, *tmp;
	int ret;

	list_for_each_safe(pos, tmp, &d->svc->hello_wait) {
		struct conn *c = list_entry(pos, struct conn, hello_link);

		ret = hello_try(c);
		if (ret == 0)
			return;         /* the budget is used up: all wait */
		if (ret == 1)
			list_del(&c->hello_link);
		/* -EDQUOT: this uid waits for its own; the next may not */
	}
}

void lease_tick(struct ckptd *d)
{
	uint64_t now = ckptd_now_ms(), limit = d->conf->staging_wait * 1000ull;
	struct list *pos, *tmp;
	char who[256];

	lease_freed(d);
	if (!limit)
		return;
	list_for_each_safe(pos, tmp, &d->svc->hello_wait) {
		struct conn *c = list_entry(pos, struct conn, hello_link);

		if (now - c->hello_since < limit)
			continue;
		list_del(&c->hello_link);
		if (wait_log_ok(c->d)) {
			staging_holders(&d->staging, who, sizeof(who));
			log_printf(LOG_WARNING, "staging: pid %d uid %u got none within staging_wait (%u s): %s; the uid holds %llu MiB, its share is %llu MiB; staging is held by %s",
				   c->pid, c->uid, d->conf->staging_wait,
				   strerror(ENOBUFS),
				   (unsigned long long)(staging_lent_to(&d->staging,
							c->uid) >> 20),
				   (unsigned long long)((share_of(c) ? share_of(c)
						: d->staging.budget) >> 20),
				   who);
		}
		hello_reply_status(c, -ENOBUFS);
	}
}

void lease_op_release(struct conn *c, const struct proto_msg *req)
{
	int status = 0;

	if (!list_empty(&c->hello_link)) {
		list_del(&c->hello_link);
		hello_reply_status(c, -ECANCELED);
	} else if (c->lease && c->hello_ready) {
		/* Lent, but the client has not got it yet: take it back. */
		c->hello_ready = 0;
		staging_put(&c->d->staging, c->lease);
		c->lease = NULL;
		hello_reply_status(c, -ECANCELED);
		lease_freed(c->d);
	} else if (c->lease && session_busy(c)) {
		status = -EBUSY;
	} else if (c->lease) {
		log_printf(LOG_DEBUG, "staging: pid %d gave back %zu bytes",
			   c->pid, c->lease->size);
		staging_put(&c->d->staging, c->lease);
		c->lease = NULL;
		lease_freed(c->d);
	}
	conn_reply_status(c, req, status);
}
