/*
 * client.c - libckpt's connection to ckptd: connect, frames, RPC, and the
 * staging lease.
 *
 * Frames are read whole, header then payload, with recvmsg() so that the
 * memfd ckptd passes with the HELLO reply is caught.  While a call waits for
 * its reply, WACKs for earlier writes arrive and are handled in passing;
 * replies to calls that timed out are dropped by their seq.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client_i.h"

int cl_connect_fd(const char *path, int *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!path)
		path = getenv("CKPT_SOCKET");
	if (!path || !*path)
		path = CKPT_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

int ckpt_connect(const char *socket_path, struct ckpt_client **out)
{
	struct ckpt_client *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->rbuf = malloc(PROTO_HDR_LEN + PROTO_MAX_PAYLOAD);
	if (!c->rbuf) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = cl_connect_fd(socket_path, &c->fd);
	if (ret < 0)
		goto out_free;
	if (!socket_path)
		socket_path = getenv("CKPT_SOCKET");
	if (!socket_path || !*socket_path)
		socket_path = CKPT_DEFAULT_SOCKET;
	strcpy(c->path, socket_path);   /* length checked by cl_connect_fd */
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_cond_init(&c->done_cv, NULL);
	pthread_cond_init(&c->ring_cv, NULL);
	list_init(&c->versions);
	list_init(&c->queue);
	c->lease_fd = c->passed_fd = -1;
	*out = c;
	return 0;

out_free:
	free(c->rbuf);
	free(c);
	return ret;
}

void ckpt_disconnect(struct ckpt_client *c)
{
	struct list *pos, *tmp;

	if (!c)
		return;
	if (c->thr_started) {
		pthread_mutex_lock(&c->mu);
		c->thr_stop = 1;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thr, NULL);
	}
	list_for_each_safe(pos, tmp, &c->versions) {
		list_del(pos);
		free(list_entry(pos, struct ckpt_version, link));
	}
	close(c->fd);
	if (c->map)
		munmap(c->map, c->size);
	if (c->lease_fd >= 0)
		close(c->lease_fd);
	if (c->passed_fd >= 0)
		close(c->passed_fd);
	free(c->fifo);
	free(c->rbuf);
	pthread_cond_destroy(&c->cv);
	pthread_cond_destroy(&c->done_cv);
	pthread_cond_destroy(&c->ring_cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static int send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

static int read_frame(struct ckpt_client *c, struct proto_msg *m,
		      struct dec *rest);

/* A refusal: ckptd answers a connection it will not serve with one HELLO
 * reply of seq 0 and the reason, then closes it.  (WACKs have seq 0 too.) */
static int is_refusal(const struct proto_msg *m)
{
	return m->type == (PROTO_HELLO | PROTO_REPLY) && m->seq == 0 &&
	       m->status < 0;
}

/* A send failed with ret: if ckptd refused the connection, the frame that
 * says why may still be waiting to be read. */
static int send_failed(struct ckpt_client *c, int ret)
{
	struct proto_msg m;
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	if ((ret == -EPIPE || ret == -ECONNRESET) && poll(&p, 1, 0) == 1 &&
	    read_frame(c, &m, NULL) == 0 && is_refusal(&m))
		ret = m.status;
	c->broken = ret;
	return ret;
}

int cl_send(struct ckpt_client *c, struct proto_msg *m)
{
	uint8_t frame[PROTO_HDR_LEN + 1024 + 2 * CKPT_PATH_MAX2];
	int len, ret;

	if (c->broken)
		return c->broken;
	m->seq = ++c->seq;
	if (!m->seq)            /* seq 0 is ckptd's refusal */
		m->seq = ++c->seq;
	len = proto_encode(frame, sizeof(frame), m);
	if (len < 0)
		return len;
	ret = send_all(c->fd, frame, len);
	if (ret < 0)
		return send_failed(c, ret);
	return ret;
}

/* Read exactly len bytes; the first read also takes a passed fd. */
static int recv_exact(struct ckpt_client *c, uint8_t *buf, size_t len,
		      int want_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	ssize_t n;

	while (len) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = buf;
		iov.iov_len = len;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if (want_fd) {
			mh.msg_control = u.buf;
			mh.msg_controllen = sizeof(u.buf);
		}
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		for (cm = want_fd ? CMSG_FIRSTHDR(&mh) : NULL; cm;
		     cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS) {
				if (c->passed_fd >= 0)
					close(c->passed_fd);
				memcpy(&c->passed_fd, CMSG_DATA(cm), sizeof(int));
			}
		}
		want_fd = 0;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Read one frame into c->rbuf and decode it.  0 or -errno. */
static int read_frame(struct ckpt_client *c, struct proto_msg *m,
		      struct dec *rest)
{
	struct proto_hdr h;
	int ret;

	/* Broken (a frame that did not decode, a refusal): nothing more is
	 * read from it, and a socket that is still open must not be waited
	 * on. */
	if (c->broken)
		return c->broken;
	ret = recv_exact(c, c->rbuf, PROTO_HDR_LEN, 1);
	if (ret < 0)
		goto out_broken;
	ret = proto_peek(c->rbuf, PROTO_HDR_LEN, &h);
	if (ret < 0)
		goto out_broken;
	ret = recv_exact(c, c->rbuf + PROTO_HDR_LEN, h.len, 0);
	if (ret < 0)
		goto out_broken;
	ret = proto_decode(c->rbuf, PROTO_HDR_LEN + h.len, m, rest);
	if (ret < 0)
		goto out_broken;
	return 0;
out_broken:
	c->broken = ret;
	return ret;
}

static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

static void hello_done(struct ckpt_client *c, const struct proto_msg *m);

/*
 * Handle a frame that answers no call in progress: a WACK, the reply to a
 * HELLO that waits for its lease, or ckptd's refusal.  1 if it was one of
 * those, 0 if not, or the refusal's error.
 */
static int route(struct ckpt_client *c, const struct proto_msg *m)
{
	if (is_refusal(m)) {
		c->broken = m->status;
		return m->status;
	}
	if (m->type == (PROTO_WACK | PROTO_REPLY)) {
		ring_wack(c, m->id, m->status);
		return 1;
	}
	if (m->type == (PROTO_HELLO | PROTO_REPLY) && c->hello_seq &&
	    m->seq == c->hello_seq) {
		hello_done(c, m);
		return 1;
	}
	return 0;
}

int cl_pump(struct ckpt_client *c)
{
	struct proto_msg m;
	int ret;

	ret = read_frame(c, &m, NULL);
	if (ret < 0)
		return ret;
	ret = route(c, &m);
	return ret < 0 ? ret : 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cl_reply(struct ckpt_client *c, struct proto_msg *rep, struct dec *rest,
	     int64_t deadline_ms)
{
	int64_t left;
	int ret;

	for (;;) {
		if (deadline_ms >= 0) {
			left = deadline_ms - mono_ms();
			ret = wait_readable(c->fd, left < 0 ? 0 : (int)left);
			if (ret < 0)
				return ret;
		}
		ret = read_frame(c, rep, rest);
		if (ret < 0)
			return ret;
		ret = route(c, rep);
		if (ret <= 0)
			return ret;
	}
}

int cl_rpc(struct ckpt_client *c, struct proto_msg *req,
	   struct proto_msg *rep, struct dec *rest, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
	int ret;

	ret = cl_send(c, req);
	if (ret < 0)
		return ret;
	for (;;) {
		ret = cl_reply(c, rep, rest, deadline);
		if (ret < 0)
			return ret;
		if (rep->seq == req->seq &&
		    rep->type == (req->type | PROTO_REPLY))
			return rep->status;
	}
}

/* The lease the HELLO reply m passed: map it.  Any failure is kept in
 * c->hello_err for the caller that waits. */
static void hello_done(struct ckpt_client *c, const struct proto_msg *m)
{
	void *map;
	int ret = m->status;

	c->hello_seq = 0;
	if (ret == 0 && (c->passed_fd < 0 || m->size == 0 || m->size % 4096 ||
			 m->aux == 0 || m->aux % 4096))
		ret = -CKPT_EPROTO;
	if (ret == 0) {
		map = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_POPULATE, c->passed_fd, 0);
		if (map == MAP_FAILED)
			ret = -errno;
	}
	if (ret < 0) {
		c->hello_err = ret;
		if (c->passed_fd >= 0)
			close(c->passed_fd);
		c->passed_fd = -1;
		return;
	}
	c->lease_fd = c->passed_fd;
	c->passed_fd = -1;
	c->map = map;
	c->size = m->size;
	c->piece = m->aux < m->size / 2 ? m->aux : m->size / 2;
}

/* Ask for a lease: the size ckpt_staging_request() set, else $CKPT_STAGING
 * bytes, else ckptd's default. */
static int hello_send(struct ckpt_client *c)
{
	struct proto_msg req;
	const char *env = getenv("CKPT_STAGING");
	uint64_t want = c->lease_want;
	int ret;

	if (!want && env) {
		char *end;

		want = strtoull(env, &end, 10);
		want <<= *end == 'G' || *end == 'g' ? 30 :
			 *end == 'M' || *end == 'm' ? 20 :
			 *end == 'K' || *end == 'k' ? 10 : 0;
	}
	memset(&req, 0, sizeof(req));
	req.type = PROTO_HELLO;
	req.size = want;
	ret = cl_send(c, &req);
	if (ret == 0)
		c->hello_seq = req.seq;
	return ret;
}

/*
 * Wait for the lease until timeout_ms (< 0: as long as ckptd lets a client
 * wait).  A HELLO already sent is waited for, not sent again: it keeps its
 * place in ckptd's queue across calls that time out.
 */
static int lease_wait(struct ckpt_client *c, int timeout_ms)
{
	struct proto_msg m;
	int64_t end = mono_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
	int ret, tries = 0;

	while (!c->map) {
		ret = c->hello_err;
		c->hello_err = 0;
		/* -EAGAIN: an older ckptd had a reply queued and wants the
		 * HELLO again.  Back off briefly (a library wait, not a
		 * test). */
		if (ret == -EAGAIN && ++tries < 100)
			poll(NULL, 0, tries);
		else if (ret < 0)
			return ret;
		if (!c->hello_seq) {
			ret = hello_send(c);
			if (ret < 0)
				return ret;
		}
		if (timeout_ms >= 0) {
			int64_t left = end - mono_ms();

			ret = wait_readable(c->fd, left < 0 ? 0 : (int)left);
			if (ret < 0)
				return ret;
		}
		ret = read_frame(c, &m, NULL);
		if (ret == 0)
			ret = route(c, &m);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cl_ensure_lease(struct ckpt_client *c)
{
	return lease_wait(c, -1);
}

int ckpt_staging(struct ckpt_client *c, size_t *size)
{
	return ckpt_staging_timed(c, -1, size);
}

int ckpt_staging_request(struct ckpt_client *c, size_t bytes)
{
	int ret = 0;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->mu);
	if (c->map || c->hello_seq)
		ret = -EALREADY;
	else
		c->lease_want = bytes;
	pthread_mutex_unlock(&c->mu);
	return ret;
}

/* Wait for c's lease as lease_wait(); then where it is mapped, and its
 * size, into whichever of addr and size are not NULL. */
static int lease_get(struct ckpt_client *c, int timeout_ms, void **addr,
		     size_t *size)
{
	int ret;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->mu);
	ret = lease_wait(c, timeout_ms);
	if (ret == 0 && addr)
		*addr = c->map;
	if (ret == 0 && size)
		*size = c->size;
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_staging_map(struct ckpt_client *c, void **addr, size_t *len)
{
	if (!addr || !len)
		return -EINVAL;
	return lease_get(c, -1, addr, len);
}

int ckpt_staging_timed(struct ckpt_client *c, int timeout_ms, size_t *size)
{
	return lease_get(c, timeout_ms, NULL, size);
}

/* 1 if an async write of c is queued or copying. */
static int async_busy(struct ckpt_client *c)
{
	struct list *pos;

	if (!list_empty(&c->queue))
		return 1;
	for (pos = c->versions.next; pos != &c->versions; pos = pos->next)
		if (list_entry(pos, struct ckpt_version, link)->async_pending)
			return 1;
	return 0;
}

int ckpt_staging_release(struct ckpt_client *c)
{
	struct proto_msg req, rep;
	int ret = 0;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->mu);
	if (!c->map && !c->hello_seq)
		goto out_unlock;
	ret = -EBUSY;
	if (async_busy(c) || ring_busy(c))
		goto out_unlock;
	ret = ring_drain(c);
	if (ret < 0)
		goto out_unlock;
	memset(&req, 0, sizeof(req));
	req.type = PROTO_RELEASE;
	/* A HELLO still waiting is answered first (-ECANCELED, or its lease,
	 * which this gives back as well). */
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	if (ret < 0)
		goto out_unlock;
	c->hello_seq = 0;
	c->hello_err = 0;
	if (c->map) {
		munmap(c->map, c->size);
		close(c->lease_fd);
		c->map = NULL;
		c->lease_fd = -1;
		c->size = c->piece = 0;
		ring_reset(c);
	}
out_unlock:
	pthread_mutex_unlock(&c->mu);
	return ret;
}
