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

int cl_send(struct ckpt_client *c, struct proto_msg *m)
{
	uint8_t frame[PROTO_HDR_LEN + 1024 + 2 * CKPT_PATH_MAX];
	int len, ret;

	if (c->broken)
		return c->broken;
	m->seq = ++c->seq;
	len = proto_encode(frame, sizeof(frame), m);
	if (len < 0)
		return len;
	ret = send_all(c->fd, frame, len);
	if (ret < 0)
		c->broken = ret;
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

int cl_pump(struct ckpt_client *c)
{
	static __thread struct proto_msg m;
	int ret;

	ret = read_frame(c, &m, NULL);
	if (ret < 0)
		return ret;
	if (m.type == (PROTO_WACK | PROTO_REPLY))
		ring_wack(c, m.id, m.status);
	return 0;
}

int cl_rpc(struct ckpt_client *c, struct proto_msg *req,
	   struct proto_msg *rep, struct dec *rest, int timeout_ms)
{
	struct timespec t0, t1;
	int ret, left = timeout_ms;

	ret = cl_send(c, req);
	if (ret < 0)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (timeout_ms >= 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			left = timeout_ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
					(t1.tv_nsec - t0.tv_nsec) / 1000000);
			ret = wait_readable(c->fd, left < 0 ? 0 : left);
			if (ret < 0)
				return ret;
		}
		ret = read_frame(c, rep, rest);
		if (ret < 0)
			return ret;
		if (rep->type == (PROTO_WACK | PROTO_REPLY)) {
			ring_wack(c, rep->id, rep->status);
			continue;
		}
		if (rep->seq == req->seq &&
		    rep->type == (req->type | PROTO_REPLY))
			return rep->status;
	}
}

int cl_ensure_lease(struct ckpt_client *c)
{
	static __thread struct proto_msg req, rep;
	const char *env = getenv("CKPT_STAGING");
	uint64_t want = 0;
	void *map;
	int ret, tries = 0;

	if (c->map)
		return 0;
	if (env) {
		char *end;

		want = strtoull(env, &end, 10);
		want <<= *end == 'G' || *end == 'g' ? 30 :
			 *end == 'M' || *end == 'm' ? 20 :
			 *end == 'K' || *end == 'k' ? 10 : 0;
	}
	do {
		memset(&req, 0, sizeof(req));
		req.type = PROTO_HELLO;
		req.size = want;
		ret = cl_rpc(c, &req, &rep, NULL, -1);
		/* -EAGAIN: ckptd had a reply queued; the memfd needs a clear
		 * socket.  Back off briefly (this is a library wait, not a test). */
		if (ret == -EAGAIN)
			poll(NULL, 0, 1 + tries);
	} while (ret == -EAGAIN && ++tries < 100);
	if (ret < 0)
		return ret;
	if (c->passed_fd < 0 || rep.size == 0 || rep.size % 4096 ||
	    rep.aux == 0 || rep.aux % 4096)
		return -CKPT_EPROTO;
	map = mmap(NULL, rep.size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, c->passed_fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	c->lease_fd = c->passed_fd;
	c->passed_fd = -1;
	c->map = map;
	c->size = rep.size;
	c->piece = rep.aux < rep.size / 2 ? rep.aux : rep.size / 2;
	return 0;
}

int ckpt_staging(struct ckpt_client *c, size_t *size)
{
	int ret;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->mu);
	ret = cl_ensure_lease(c);
	if (ret == 0 && size)
		*size = c->size;
	pthread_mutex_unlock(&c->mu);
	return ret;
}
