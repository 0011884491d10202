/*
 * conn.c - ckpt_raw's connection to ckptd (see raw.h): connect, send
 * frames whole or crafted, receive and decode replies with a deadline, and
 * the requests every attack starts with (HELLO, BEGIN, STATUS).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "raw.h"

const char *attack_name = "ping";

int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ckpt_raw: %s: ", attack_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- connection --------------------------------------------------------- */

int rc_connect(struct rc *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	r->map = NULL;
	r->lease = 0;
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", r->sock);
	if (connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int ret = -errno;

		close(r->fd);
		r->fd = -1;
		return ret;
	}
	return 0;
}

void rc_close(struct rc *r)
{
	if (r->map)
		munmap(r->map, r->lease);
	r->map = NULL;
	r->lease = 0;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/* Send all of buf.  0, or -errno (-EPIPE once ckptd closed). */
int send_raw(struct rc *r, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(r->fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

int send_msg(struct rc *r, struct proto_msg *m)
{
	uint8_t frame[PROTO_HDR_LEN + 4096];
	int len;

	if (!m->seq)
		m->seq = ++r->seq;
	len = proto_encode(frame, sizeof(frame), m);
	if (len < 0)
		return len;
	return send_raw(r, frame, len);
}

/* Wait up to ms for fd to be readable: 0, or -ETIMEDOUT. */
int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	return n > 0 ? 0 : -ETIMEDOUT;
}

/* Receive exactly len bytes; a passed memfd is mapped as the lease.
 * 0, -ECONNRESET at EOF, -ETIMEDOUT, or -errno. */
int recv_exact(struct rc *r, uint8_t *buf, size_t len, int64_t end)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec iov;
	ssize_t n;
	int fd, left;

	while (len) {
		left = (int)(end - now_ms());
		if (readable(r->fd, left < 0 ? 0 : left) < 0)
			return -ETIMEDOUT;
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = buf;
		iov.iov_len = len;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.b;
		mh.msg_controllen = sizeof(u.b);
		n = recvmsg(r->fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ECONNRESET ? -ECONNRESET : -errno;
		if (n == 0)
			return -ECONNRESET;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
			if (!r->map) {
				off_t sz = lseek(fd, 0, SEEK_END);
				void *m = sz > 0 ? mmap(NULL, sz,
						       PROT_READ | PROT_WRITE,
						       MAP_SHARED, fd, 0)
						 : MAP_FAILED;

				if (m != MAP_FAILED) {
					r->map = m;
					r->lease = sz;
				}
			}
			close(fd);
		}
		buf += n;
		len -= n;
	}
	return 0;
}

/* Receive and decode one frame.  0, -ECONNRESET, -ETIMEDOUT, or the decode
 * error (a reply ckptd should never send). */
int recv_msg(struct rc *r, struct proto_msg *m, int ms)
{
	int64_t end = now_ms() + ms;
	struct proto_hdr h;
	int ret;

	ret = recv_exact(r, r->rbuf, PROTO_HDR_LEN, end);
	if (ret < 0)
		return ret;
	ret = proto_peek(r->rbuf, PROTO_HDR_LEN, &h);
	if (ret < 0) {
		bad("ckptd sent a bad header: %s", ckpt_strerror(ret));
		return ret;
	}
	ret = recv_exact(r, r->rbuf + PROTO_HDR_LEN, h.len, end);
	if (ret < 0)
		return ret;
	ret = proto_decode(r->rbuf, PROTO_HDR_LEN + h.len, m, NULL);
	if (ret < 0)
		bad("ckptd sent a bad %s frame: %s", proto_type_name(h.type),
		    ckpt_strerror(ret));
	return ret;
}

/* Send req and wait for the reply of its type and seq, skipping WACKs. */
int rpc(struct rc *r, struct proto_msg *req, struct proto_msg *rep)
{
	int ret;

	req->seq = 0;
	ret = send_msg(r, req);
	if (ret < 0)
		return ret;
	for (;;) {
		ret = recv_msg(r, rep, TMO_MS);
		if (ret < 0)
			return ret;
		if (rep->type == (req->type | PROTO_REPLY) &&
		    rep->seq == req->seq)
			return 0;
	}
}

/* Wait for the WACK of write id.  0 with *status set, or -errno. */
int wait_wack(struct rc *r, uint32_t id, int *status)
{
	struct proto_msg m;
	int ret;

	for (;;) {
		ret = recv_msg(r, &m, TMO_MS);
		if (ret < 0)
			return ret;
		if (m.type == (PROTO_WACK | PROTO_REPLY) && m.id == id) {
			*status = m.status;
			return 0;
		}
	}
}

/* Read and drop whatever comes until ckptd closes.  0 once closed,
 * -ETIMEDOUT if it kept the connection open for ms. */
int expect_close(struct rc *r, int ms)
{
	int64_t end = now_ms() + ms;
	uint8_t buf[4096];
	ssize_t n;
	int left;

	for (;;) {
		left = (int)(end - now_ms());
		if (readable(r->fd, left < 0 ? 0 : left) < 0)
			return bad("ckptd kept the connection open for %d ms", ms);
		n = recv(r->fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 0;
		if (n < 0 && errno != EINTR)
			return bad("recv: %s", strerror(errno));
	}
}

int hello(struct rc *r, uint64_t size)
{
	struct proto_msg req = { .type = PROTO_HELLO, .size = size }, rep;
	int ret = rpc(r, &req, &rep);

	if (ret < 0 || rep.status < 0)
		return bad("HELLO: %s", ckpt_strerror(ret ? ret : rep.status));
	if (!r->map || r->lease < rep.size)
		return bad("HELLO: no usable staging memfd came with the reply");
	return 0;
}

int begin(struct rc *r, const char *job, const char *version,
	  uint32_t *handle)
{
	struct proto_msg req = { .type = PROTO_BEGIN, .uid = CKPT_UID_SELF }, rep;
	int ret;

	req.job = job;
	req.version = version;
	ret = rpc(r, &req, &rep);
	if (ret < 0 || rep.status < 0)
		return bad("BEGIN %s/%s: %s", job, version,
			   ckpt_strerror(ret ? ret : rep.status));
	*handle = rep.handle;
	return 0;
}

/* A header with chosen fields and, if crc_ok, a correct CRC. */
void mkframe(uint8_t *buf, uint32_t magic, uint16_t version,
	     uint16_t type, uint32_t len, uint32_t seq,
	     const void *payload, size_t plen, int crc_ok)
{
	static const uint8_t zero[4];
	uint32_t crc;

	put_le32(buf, magic);
	buf[4] = version;
	buf[5] = version >> 8;
	buf[6] = type;
	buf[7] = type >> 8;
	put_le32(buf + 8, len);
	put_le32(buf + 12, seq);
	put_le32(buf + 16, 0);
	put_le32(buf + 20, 0);
	if (plen)
		memcpy(buf + PROTO_HDR_LEN, payload, plen);
	crc = crc32c_update(0, buf, 20);
	crc = crc32c_update(crc, zero, 4);
	crc = crc32c_update(crc, buf + PROTO_HDR_LEN, plen);
	put_le32(buf + 20, crc_ok ? crc : crc ^ 0x5a5a5a5a);
}

/* Send one crafted frame on a fresh connection; ckptd must close it. */
int frame_closes(struct rc *r, const char *what, uint32_t magic,
		 uint16_t version, uint16_t type, uint32_t len,
		 const void *payload, size_t plen, int crc_ok)
{
	static uint8_t buf[PROTO_HDR_LEN + 4096];
	int ret;

	ret = rc_connect(r);
	if (ret < 0)
		return bad("connect: %s", strerror(-ret));
	mkframe(buf, magic, version, type, len, 1, payload, plen, crc_ok);
	ret = send_raw(r, buf, PROTO_HDR_LEN + plen);
	if (ret < 0 && ret != -EPIPE && ret != -ECONNRESET)
		return bad("%s: send: %s", what, strerror(-ret));
	ret = expect_close(r, TMO_MS);
	rc_close(r);
	if (ret)
		return bad("%s: not rejected", what);
	return 0;
}

/* Check that the daemon answers a STATUS on a new connection. */
int ping(struct rc *r)
{
	struct proto_msg req = { .type = PROTO_STATUS }, rep;
	struct rc *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return bad("out of memory");
	p->sock = r->sock;
	ret = rc_connect(p);
	if (ret < 0) {
		free(p);
		return bad("connect %s: %s", r->sock, strerror(-ret));
	}
	ret = rpc(p, &req, &rep);
	rc_close(p);
	free(p);
	if (ret < 0 || rep.status < 0)
		return bad("STATUS: %s", ckpt_strerror(ret ? ret : rep.status));
	return 0;
}
