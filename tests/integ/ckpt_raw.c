/*
 * ckpt_raw.c - a hostile raw-socket client for the integration tests.
 *
 * It speaks the wire protocol of lib/proto.h directly, without libckpt, so
 * that it can send what libckpt never would: frames with a bad magic, version
 * or CRC, truncated or oversized frames, reply-type and unknown frames,
 * hostile names, WRITEs without a lease, before the lease's HELLO reply or
 * with a wrong handle or ring offset, requests whose replies it never
 * reads, and streams of random garbage.  Each attack checks that ckptd
 * rejects it the way the protocol says (an error reply, or closing the
 * connection) and never accepts it; t_hostile.sh then checks that the daemon
 * is alive and that a version committed before the attack still verifies.
 *
 *   ckpt_raw -s SOCKET ping          STATUS round trip (readiness probe)
 *   ckpt_raw -s SOCKET list          print the attack names
 *   ckpt_raw -s SOCKET ATTACK [N]    run one attack (garbage: N frames)
 *   ckpt_raw -s SOCKET pfspipe       the pipe attack on a drained version
 *                                    whose local copy rm dropped (needs
 *                                    a [drain] target)
 *   ckpt_raw -s SOCKET waitrm JOB VERSION rm|hold SECONDS
 *                                    a WAIT (drained) that outlives its
 *                                    version (see a_waitrm)
 *
 * proto_encode() and crc32c_update() come from the lib/ objects inside
 * libckpt.a; the test binary links them statically.
 *
 * Exit status: 0 the daemon behaved, 1 it did not (message on stderr),
 * 2 usage.
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
#include "proto.h"

#define TMO_MS 5000             /* how long any single reply may take */

struct rc {
	const char *sock;
	int fd;
	uint32_t seq;
	uint8_t *map;           /* staging lease, after HELLO */
	size_t lease;
	uint8_t rbuf[PROTO_HDR_LEN + PROTO_MAX_PAYLOAD];
};

static const char *attack_name = "ping";

static int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ckpt_raw: %s: ", attack_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- connection --------------------------------------------------------- */

static int rc_connect(struct rc *r)
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

static void rc_close(struct rc *r)
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
static int send_raw(struct rc *r, const void *buf, size_t len)
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

static int send_msg(struct rc *r, struct proto_msg *m)
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
static int readable(int fd, int ms)
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
static int recv_exact(struct rc *r, uint8_t *buf, size_t len, int64_t end)
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
static int recv_msg(struct rc *r, struct proto_msg *m, int ms)
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
static int rpc(struct rc *r, struct proto_msg *req, struct proto_msg *rep)
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
static int wait_wack(struct rc *r, uint32_t id, int *status)
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
static int expect_close(struct rc *r, int ms)
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

static int hello(struct rc *r, uint64_t size)
{
	struct proto_msg req = { .type = PROTO_HELLO, .size = size }, rep;
	int ret = rpc(r, &req, &rep);

	if (ret < 0 || rep.status < 0)
		return bad("HELLO: %s", ckpt_strerror(ret ? ret : rep.status));
	if (!r->map || r->lease < rep.size)
		return bad("HELLO: no usable staging memfd came with the reply");
	return 0;
}

static int begin(struct rc *r, const char *job, const char *version,
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
static void mkframe(uint8_t *buf, uint32_t magic, uint16_t version,
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
static int frame_closes(struct rc *r, const char *what, uint32_t magic,
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
static int ping(struct rc *r)
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

/* ---- attacks ------------------------------------------------------------ */

static int a_badmagic(struct rc *r)
{
	return frame_closes(r, "magic 0xdeadbeef", 0xdeadbeef, PROTO_VERSION,
			    PROTO_STATUS, 0, NULL, 0, 1) ||
	       frame_closes(r, "magic byte-swapped",
			    __builtin_bswap32(PROTO_MAGIC), PROTO_VERSION,
			    PROTO_STATUS, 0, NULL, 0, 1);
}

static int a_badversion(struct rc *r)
{
	return frame_closes(r, "version 2", PROTO_MAGIC, PROTO_VERSION + 1,
			    PROTO_STATUS, 0, NULL, 0, 1) ||
	       frame_closes(r, "version 0", PROTO_MAGIC, 0, PROTO_STATUS, 0,
			    NULL, 0, 1) ||
	       frame_closes(r, "version 0xffff", PROTO_MAGIC, 0xffff,
			    PROTO_STATUS, 0, NULL, 0, 1);
}

static int a_badcrc(struct rc *r)
{
	static const uint8_t job[] = { 1, 0, 'j', 1, 0, 'v' };

	return frame_closes(r, "STATUS with a bad CRC", PROTO_MAGIC,
			    PROTO_VERSION, PROTO_STATUS, 0, NULL, 0, 0) ||
	       frame_closes(r, "BEGIN with a bad CRC", PROTO_MAGIC,
			    PROTO_VERSION, PROTO_BEGIN, sizeof(job), job,
			    sizeof(job), 0);
}

/* Half a header, then half a frame, each followed by a close; while one is
 * pending, another client must still be served. */
static int a_truncated(struct rc *r)
{
	uint8_t buf[PROTO_HDR_LEN + 64];
	int ret;

	mkframe(buf, PROTO_MAGIC, PROTO_VERSION, PROTO_BEGIN, 40, 1,
		"0123456789012345678901234567890123456789", 40, 1);
	for (size_t cut = 1; cut < PROTO_HDR_LEN + 40; cut += 11) {
		ret = rc_connect(r);
		if (ret < 0)
			return bad("connect: %s", strerror(-ret));
		ret = send_raw(r, buf, cut);
		if (ret < 0)
			return bad("send: %s", strerror(-ret));
		/* The daemon waits for the rest; others must not wait. */
		if (ping(r))
			return bad("ckptd stopped answering while a frame was cut after %zu bytes",
				   cut);
		rc_close(r);
	}
	return 0;
}

static int a_oversize(struct rc *r)
{
	uint8_t *big;
	int ret;

	if (frame_closes(r, "len 0xffffffff", PROTO_MAGIC, PROTO_VERSION,
			 PROTO_BEGIN, 0xffffffffu, NULL, 0, 1) ||
	    frame_closes(r, "len 1 MiB + 1", PROTO_MAGIC, PROTO_VERSION,
			 PROTO_BEGIN, PROTO_MAX_PAYLOAD + 1, NULL, 0, 1))
		return 1;
	/* 1 MiB is within the protocol's limit but far above any request:
	 * ckptd must refuse it rather than buffer it. */
	big = calloc(1, PROTO_HDR_LEN + PROTO_MAX_PAYLOAD);
	if (!big)
		return bad("out of memory");
	mkframe(big, PROTO_MAGIC, PROTO_VERSION, PROTO_BEGIN,
		PROTO_MAX_PAYLOAD, 1, NULL, 0, 1);
	ret = rc_connect(r);
	if (ret == 0) {
		ret = send_raw(r, big, PROTO_HDR_LEN + PROTO_MAX_PAYLOAD);
		if (ret == -EPIPE || ret == -ECONNRESET)
			ret = 0;    /* closed while we were still sending */
		if (ret == 0)
			ret = expect_close(r, TMO_MS);
		else
			bad("send: %s", strerror(-ret));
		rc_close(r);
	} else {
		bad("connect: %s", strerror(-ret));
	}
	free(big);
	return ret ? bad("len 1 MiB: not rejected") : 0;
}

static int a_reply(struct rc *r)
{
	uint8_t p[16] = { 0 };

	/* A well-formed LATEST reply ("v") and WACK reply, sent to ckptd. */
	p[0] = 1;
	p[2] = 'v';
	if (frame_closes(r, "LATEST reply", PROTO_MAGIC, PROTO_VERSION,
			 PROTO_LATEST | PROTO_REPLY, 3, p, 3, 1))
		return 1;
	memset(p, 0, sizeof(p));
	return frame_closes(r, "WACK reply", PROTO_MAGIC, PROTO_VERSION,
			    PROTO_WACK | PROTO_REPLY, 4, p, 4, 1);
}

static int a_unknown(struct rc *r)
{
	static const uint16_t types[] = { 0, PROTO_NTYPES, 99, 0x7fff, 0xffff,
					  PROTO_WACK };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "type %u", types[i]);
		if (frame_closes(r, what, PROTO_MAGIC, PROTO_VERSION, types[i],
				 0, NULL, 0, 1))
			return 1;
	}
	return 0;
}

/* A request whose reply must be an error: any negative status, or
 * want if it is not 0.  A closed connection is accepted only when
 * may_close (a WRITE has no reply of its own). */
static int expect_error(struct rc *r, struct proto_msg *req, int want,
			int may_close, const char *what)
{
	struct proto_msg rep;
	int ret, st = 0;

	if (req->type == PROTO_WRITE) {
		ret = send_msg(r, req);
		if (ret == 0)
			ret = wait_wack(r, req->id, &st);
	} else {
		ret = rpc(r, req, &rep);
		st = rep.status;
	}
	if (ret == -ECONNRESET || ret == -EPIPE)
		return may_close ? 2 : bad("%s: ckptd closed the connection", what);
	if (ret < 0)
		return bad("%s: %s", what, ckpt_strerror(ret));
	if (st >= 0)
		return bad("%s: accepted", what);
	if (want && st != want)
		return bad("%s: got \"%s\", want \"%s\"", what, ckpt_strerror(st),
			   ckpt_strerror(want));
	return 0;
}

static int a_badnames(struct rc *r)
{
	static const char *const jobs[] = { "../x", "/abs", "a//b", "a/",
					    "..", "a/../b", "a/./b", "" };
	static const char *const versions[] = { "..", "../v", "a/b", "/v", "",
						"." };
	static const char *const paths[] = { "../escape", "a/../../b", "/abs",
					     "a//b", ".." };
	struct proto_msg m;
	char what[CKPT_PATH_MAX + 64];
	uint32_t h;
	int ret;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_BEGIN;
		m.job = jobs[i];
		m.version = "v1";
		snprintf(what, sizeof(what), "BEGIN job \"%s\"", jobs[i]);
		if (expect_error(r, &m, -CKPT_EBADNAME, 0, what))
			return 1;
	}
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_BEGIN;
		m.job = "hostile/names";
		m.version = versions[i];
		snprintf(what, sizeof(what), "BEGIN version \"%s\"", versions[i]);
		if (expect_error(r, &m, -CKPT_EBADNAME, 0, what))
			return 1;
	}
	/* Paths: in READ (has a reply) and in WRITE (answered by a WACK, or
	 * by closing, since WRITE has no reply type). */
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_READ;
		m.job = "hostile/names";
		m.version = "v1";
		m.path = paths[i];
		m.len = 4096;
		snprintf(what, sizeof(what), "READ path \"%s\"", paths[i]);
		if (expect_error(r, &m, -CKPT_EBADNAME, 0, what))
			return 1;
	}
	if (hello(r, 0) || begin(r, "hostile/names", "v1", &h))
		return 1;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_WRITE;
		m.handle = h;
		m.path = paths[i];
		m.len = 4096;
		m.id = 100 + i;
		snprintf(what, sizeof(what), "WRITE path \"%s\"", paths[i]);
		ret = expect_error(r, &m, 0, 1, what);
		if (ret == 1)
			return 1;
		if (ret == 2) {         /* closed: go on on a new connection */
			rc_close(r);
			if (rc_connect(r) < 0 || hello(r, 0) ||
			    begin(r, "hostile/names", "v1", &h))
				return 1;
		}
	}
	rc_close(r);
	return 0;
}

static int a_nolease(struct rc *r)
{
	struct proto_msg m = { .type = PROTO_WRITE, .len = 4096, .id = 7 };
	uint32_t h;
	int ret;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (begin(r, "hostile/nolease", "v1", &h))
		return 1;
	m.handle = h;
	m.path = "f";
	ret = expect_error(r, &m, 0, 1, "WRITE without a lease");
	rc_close(r);
	return ret == 1;
}

static int a_badhandle(struct rc *r)
{
	static const uint32_t handles[] = { 0, 1, 4096, 12345, 0xffffffffu };
	struct proto_msg m, rep;
	char what[64];
	uint32_t h;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (hello(r, 0))
		return 1;
	/* No BEGIN yet: every handle is wrong. */
	for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_WRITE;
		m.handle = handles[i];
		m.path = "f";
		m.len = 4096;
		m.id = i + 1;
		snprintf(what, sizeof(what), "WRITE handle %u", handles[i]);
		if (expect_error(r, &m, -EBADF, 0, what))
			return 1;
		m.type = PROTO_COMMIT;
		snprintf(what, sizeof(what), "COMMIT handle %u", handles[i]);
		if (expect_error(r, &m, -EBADF, 0, what))
			return 1;
		m.type = PROTO_ABORT;
		snprintf(what, sizeof(what), "ABORT handle %u", handles[i]);
		if (expect_error(r, &m, -EBADF, 0, what))
			return 1;
	}
	/* A handle that was committed is gone. */
	if (begin(r, "hostile/handle", "v1", &h))
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_COMMIT;
	m.handle = h;
	if (rpc(r, &m, &rep) < 0 || rep.status < 0)
		return bad("COMMIT of an empty version: %s",
			   ckpt_strerror(rep.status));
	m.type = PROTO_WRITE;
	m.path = "f";
	m.len = 4096;
	m.id = 99;
	if (expect_error(r, &m, -EBADF, 0, "WRITE on a committed handle"))
		return 1;
	rc_close(r);
	return 0;
}

/* Ring offsets and lengths out of range, then a good write that must land. */
static int a_ring(struct rc *r)
{
	struct proto_msg m, rep;
	uint64_t lease, huge_off = CKPT_FILE_MAX - 4096;
	char what[128];
	uint32_t h;
	int st;
	struct {
		uint64_t ring_off, len, off;
	} cases[6];

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (hello(r, 0) || begin(r, "hostile/ring", "v1", &h))
		return 1;
	lease = r->lease;
	cases[0] = (typeof(cases[0])){ lease, 4096, 0 };
	cases[1] = (typeof(cases[0])){ 1, 4096, 0 };
	cases[2] = (typeof(cases[0])){ lease - 4096, 8192, 0 };
	cases[3] = (typeof(cases[0])){ UINT64_MAX & ~4095ull, 4096, 0 };
	cases[4] = (typeof(cases[0])){ 0, lease + 4096, 0 };
	cases[5] = (typeof(cases[0])){ 0, 4096, UINT64_MAX - 10 };
	for (size_t i = 0; i < 6; i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_WRITE;
		m.handle = h;
		m.path = "f";
		m.ring_off = cases[i].ring_off;
		m.len = cases[i].len;
		m.off = cases[i].off;
		m.id = 10 + i;
		snprintf(what, sizeof(what),
			 "WRITE ring_off %#llx len %#llx off %#llx",
			 (unsigned long long)m.ring_off,
			 (unsigned long long)m.len, (unsigned long long)m.off);
		if (expect_error(r, &m, 0, 0, what))
			return 1;
	}
	/* A READ into a ring range outside the lease. */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_READ;
	m.job = "hostile/ring";
	m.version = "v1";
	m.path = "f";
	m.len = 4096;
	m.ring_off = lease;
	if (expect_error(r, &m, 0, 0, "READ ring_off = lease size"))
		return 1;

	/* A refused write fails its version: it can never be committed
	 * without the bytes that write carried. */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_COMMIT;
	m.handle = h;
	if (rpc(r, &m, &rep) < 0)
		return bad("COMMIT after refused writes: no answer");
	if (rep.status == 0)
		return bad("COMMIT of a version whose writes were refused succeeded");
	/* The connection is still usable: a new version, a good write, one at
	 * the very end of the file space, commit, LOCAL, read both back. */
	if (begin(r, "hostile/ring", "v2", &h))
		return 1;
	for (int i = 0; i < 4096; i++)
		r->map[i] = (uint8_t)(i * 7 + 3);
	for (int k = 0; k < 2; k++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_WRITE;
		m.handle = h;
		m.path = k ? "end" : "f";
		m.off = k ? huge_off : 0;
		m.len = 4096;
		m.id = 50 + k;
		if (send_msg(r, &m) < 0 || wait_wack(r, m.id, &st) < 0)
			return bad("good WRITE: no WACK");
		if (st < 0)
			return bad("good WRITE at %#llx: %s",
				   (unsigned long long)m.off, ckpt_strerror(st));
	}
	memset(&m, 0, sizeof(m));
	m.type = PROTO_COMMIT;
	m.handle = h;
	if (rpc(r, &m, &rep) < 0 || rep.status < 0)
		return bad("COMMIT: %s", ckpt_strerror(rep.status));
	memset(&m, 0, sizeof(m));
	m.type = PROTO_WAIT;
	m.job = "hostile/ring";
	m.version = "v2";
	m.level = CKPT_LOCAL;
	if (rpc(r, &m, &rep) < 0 || rep.status < 0)
		return bad("WAIT local: %s", ckpt_strerror(rep.status));
	for (int k = 0; k < 2; k++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_READ;
		m.job = "hostile/ring";
		m.version = "v2";
		m.path = k ? "end" : "f";
		m.off = k ? huge_off : 0;
		m.len = 8192;           /* past EOF: must stop at 4096 */
		m.ring_off = 8192;
		if (rpc(r, &m, &rep) < 0 || rep.status < 0)
			return bad("READ %s: %s", m.path,
				   ckpt_strerror(rep.status));
		if (rep.size != 4096 || memcmp(r->map, r->map + 8192, 4096))
			return bad("READ %s: got %llu bytes, %s", m.path,
				   (unsigned long long)rep.size,
				   rep.size == 4096 ? "content differs"
						    : "want 4096");
	}
	rc_close(r);
	return 0;
}

/* ---- pipelined requests ------------------------------------------------- */

/*
 * Requests are views into ckptd's receive buffer, decoded in place
 * (lib/proto.h): whatever outlives its handler (a read deferred behind the
 * writes in flight, an io_uring read, a PFS read on a worker) must not look
 * at the frame again, since the frames after it overwrite the buffer.  So:
 * many frames with the longest names in one send, reads interleaved with
 * the writes they must see, bad frames among good ones, and every reply
 * checked against its request by seq.
 */
#define PIPE_N     24
#define PIPE_PIECE (64u << 10)
#define PIPE_CAP   (PIPE_N * 4 * (PROTO_HDR_LEN + 3 * CKPT_PATH_MAX))
#define PIPE_SLOTS (PIPE_N * 8)

struct pipe_ctx {
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char path[CKPT_PATH_MAX + 1];
	uint8_t *buf;             /* the frames of one send */
	size_t len;
	uint32_t first_seq;
	/* by seq - first_seq: the reply type wanted (0: none, or had) */
	uint16_t want[PIPE_SLOTS];
	int32_t status[PIPE_SLOTS];
	int32_t piece[PIPE_SLOTS];  /* READ: the piece it reads, else -1 */
	uint32_t nslot;           /* slots used */
	uint32_t nmsg;            /* replies expected */
};

static uint8_t pipe_byte(uint32_t piece, uint32_t i)
{
	return (uint8_t)(piece * 131 + i * 7 + (i >> 9));
}

static void pipe_names(struct pipe_ctx *p)
{
	size_t n;

	/* The longest names the protocol takes: each string moves back over
	 * its length in place, the whole frame long. */
	n = (size_t)snprintf(p->job, sizeof(p->job), "hostile/pipe");
	memset(p->job + n, 'j', CKPT_JOB_MAX - n);
	p->job[CKPT_JOB_MAX] = 0;
	memset(p->version, 'v', CKPT_VERSION_MAX);
	p->version[CKPT_VERSION_MAX] = 0;
	for (n = 0; n + 50 <= CKPT_PATH_MAX - 1; n += 50) {
		memset(p->path + n, 'a' + (n / 50) % 26, 49);
		p->path[n + 49] = '/';
	}
	p->path[n] = 'f';
	p->path[n + 1] = 0;
}

/* Append m to the send (seq assigned), expecting a reply of type want
 * with status st (piece: the READ's piece, or -1); want 0: no reply by seq
 * (a WRITE: its WACK comes by id). */
static int pipe_put(struct rc *r, struct pipe_ctx *p, struct proto_msg *m,
		    uint16_t want, int st, int piece)
{
	uint32_t k;
	int n;

	m->seq = ++r->seq;
	if (!p->nslot)
		p->first_seq = m->seq;
	k = m->seq - p->first_seq;
	if (k >= PIPE_SLOTS)
		return bad("pipe: too many frames");
	n = proto_encode(p->buf + p->len, PIPE_CAP - p->len, m);
	if (n < 0)
		return bad("pipe: encode %s: %s", proto_type_name(m->type),
			   ckpt_strerror(n));
	p->len += n;
	p->want[k] = want;
	p->status[k] = st;
	p->piece[k] = piece;
	p->nslot = k + 1;
	p->nmsg += !!want;
	return 0;
}

static int pipe_read(struct rc *r, struct pipe_ctx *p, uint32_t piece,
		     uint64_t read_base)
{
	struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_READ;
	m.job = p->job;
	m.version = p->version;
	m.path = p->path;
	m.off = (uint64_t)piece * PIPE_PIECE;
	m.len = PIPE_PIECE;
	m.ring_off = read_base + (uint64_t)piece * PIPE_PIECE;
	return pipe_put(r, p, &m, PROTO_READ | PROTO_REPLY, 0, (int)piece);
}

/* Frames about the version by name, and one whose version name is bad: its
 * error must come back with its seq, and the frames after it be served. */
static int pipe_chatter(struct rc *r, struct pipe_ctx *p)
{
	struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_STAT_FILE;
	m.job = p->job;
	m.version = p->version;
	m.path = p->path;
	if (pipe_put(r, p, &m, PROTO_STAT_FILE | PROTO_REPLY, 0, -1))
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_STAT;
	m.job = p->job;
	m.version = "../bad";
	if (pipe_put(r, p, &m, PROTO_STAT | PROTO_REPLY, -CKPT_EBADNAME, -1))
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_FILES;
	m.job = p->job;
	m.version = p->version;
	return pipe_put(r, p, &m, PROTO_LIST_FILES | PROTO_REPLY, 0, -1);
}

/* Send the frames gathered (close: and hang up at once); then, unless
 * closing, take one reply per frame and check it. */
static int pipe_flush(struct rc *r, struct pipe_ctx *p, uint64_t read_base,
		      int close_now)
{
	struct proto_msg m;
	uint32_t got = 0, k, i;
	int ret;

	ret = send_raw(r, p->buf, p->len);
	if (ret < 0)
		return bad("pipe: send: %s", strerror(-ret));
	if (close_now) {
		rc_close(r);
		goto out_reset;
	}
	while (got < p->nmsg) {
		ret = recv_msg(r, &m, 4 * TMO_MS);
		if (ret < 0)
			return bad("pipe: %u of %u replies, then %s", got,
				   p->nmsg, ckpt_strerror(ret));
		if (m.type == (PROTO_WACK | PROTO_REPLY)) {
			if (m.status < 0)
				return bad("pipe: WACK %u: %s", m.id,
					   ckpt_strerror(m.status));
			continue;
		}
		k = m.seq - p->first_seq;
		if (m.seq < p->first_seq || k >= p->nslot || !p->want[k])
			return bad("pipe: a %s reply with seq %u nobody asked for (or twice)",
				   proto_type_name(m.type), m.seq);
		if (m.type != p->want[k])
			return bad("pipe: seq %u: a %s reply, want %s", m.seq,
				   proto_type_name(m.type),
				   proto_type_name(p->want[k]));
		if (m.status != p->status[k])
			return bad("pipe: seq %u (%s): status %s, want %s",
				   m.seq, proto_type_name(m.type),
				   ckpt_strerror(m.status),
				   ckpt_strerror(p->status[k]));
		if (p->piece[k] >= 0) {
			const uint8_t *d = r->map + read_base +
				(uint64_t)p->piece[k] * PIPE_PIECE;

			if (m.size != PIPE_PIECE)
				return bad("pipe: READ of piece %d: %llu bytes",
					   p->piece[k],
					   (unsigned long long)m.size);
			for (i = 0; i < PIPE_PIECE; i++)
				if (d[i] != pipe_byte(p->piece[k], i))
					return bad("pipe: READ of piece %d: byte %u differs",
						   p->piece[k], i);
		}
		p->want[k] = 0;
		got++;
	}
out_reset:
	p->len = 0;
	p->nslot = p->nmsg = 0;
	return 0;
}

/* Reads of many pieces of the version, in one send, with chatter. */
static int pipe_reads(struct rc *r, struct pipe_ctx *p, uint64_t read_base,
		      int close_now)
{
	uint32_t i;

	memset(r->map + read_base, 0, (size_t)PIPE_N * PIPE_PIECE);
	for (i = 0; i < PIPE_N; i++) {
		if (pipe_read(r, p, PIPE_N - 1 - i, read_base))
			return 1;
		if (i % 6 == 5 && pipe_chatter(r, p))
			return 1;
	}
	return pipe_flush(r, p, read_base, close_now);
}

static int pipe_run(struct rc *r, int drained)
{
	struct pipe_ctx *p = calloc(1, sizeof(*p));
	uint64_t read_base = (uint64_t)PIPE_N * PIPE_PIECE;
	struct proto_msg m, rep;
	uint32_t h, i;
	int ret = 1;

	if (!p || !(p->buf = malloc(PIPE_CAP))) {
		free(p);
		return bad("out of memory");
	}
	pipe_names(p);
	if (drained)
		p->version[0] = 'd';     /* a name of its own */
	if (rc_connect(r) < 0) {
		bad("connect failed");
		goto out;
	}
	if (hello(r, 0))
		goto out;
	if (r->lease < 2 * read_base) {
		bad("pipe: a lease of %zu bytes is too small", r->lease);
		goto out;
	}
	if (begin(r, p->job, p->version, &h))
		goto out;
	/* 1: the writes, each followed by reads of what was sent so far:
	 * they wait for the writes in flight (deferred), then must see
	 * them. */
	for (i = 0; i < PIPE_N; i++)
		for (uint32_t k = 0; k < PIPE_PIECE; k++)
			r->map[(size_t)i * PIPE_PIECE + k] = pipe_byte(i, k);
	memset(r->map + read_base, 0, (size_t)PIPE_N * PIPE_PIECE);
	for (i = 0; i < PIPE_N; i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_WRITE;
		m.handle = h;
		m.path = p->path;
		m.off = (uint64_t)i * PIPE_PIECE;
		m.len = PIPE_PIECE;
		m.ring_off = (uint64_t)i * PIPE_PIECE;
		m.id = 1000 + i;
		/* WACKs are checked as they come; no reply by seq. */
		if (pipe_put(r, p, &m, 0, 0, -1))
			goto out;
		if (pipe_read(r, p, i, read_base) ||
		    (i && pipe_read(r, p, i - 1, read_base)))
			goto out;
		if (i % 8 == 7 && pipe_chatter(r, p))
			goto out;
	}
	if (pipe_flush(r, p, read_base, 0))
		goto out;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_COMMIT;
	m.handle = h;
	if (rpc(r, &m, &rep) < 0 || rep.status < 0) {
		bad("pipe: COMMIT: %s", ckpt_strerror(rep.status));
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.type = PROTO_WAIT;
	m.job = p->job;
	m.version = p->version;
	m.level = drained ? CKPT_DRAINED : CKPT_LOCAL;
	if (rpc(r, &m, &rep) < 0 || rep.status < 0) {
		bad("pipe: WAIT %s: %s", drained ? "drained" : "local",
		    ckpt_strerror(rep.status));
		goto out;
	}
	/* 2: sealed: the reads run on io_uring, in flight while the frames
	 * after them are decoded. */
	if (pipe_reads(r, p, read_base, 0))
		goto out;
	if (drained) {
		/* 3: rm drops the local copy; the reads go to the PFS, on
		 * the workers. */
		memset(&m, 0, sizeof(m));
		m.type = PROTO_REMOVE;
		m.job = p->job;
		m.version = p->version;
		if (rpc(r, &m, &rep) < 0 || rep.status < 0) {
			bad("pipe: REMOVE (local copy): %s",
			    ckpt_strerror(rep.status));
			goto out;
		}
		if (pipe_reads(r, p, read_base, 0))
			goto out;
	}
	/* 4: and again, hanging up with every read in flight. */
	if (pipe_reads(r, p, read_base, 1))
		goto out;
	ret = ping(r);
out:
	free(p->buf);
	free(p);
	return ret;
}

static int a_pipe(struct rc *r)
{
	return pipe_run(r, 0);
}


/* ---- a WAIT that outlives its version ----------------------------------- */

/*
 * ckpt_raw waitrm JOB VERSION rm|hold SECONDS: WAIT for JOB/VERSION to be
 * drained, and a STATUS behind it on the same connection (its answer means
 * ckptd has the waiter: one connection is served in order); print
 * "waiting".  rm: then REMOVE the version on the same connection: both
 * must be answered, the REMOVE with 0, the WAIT with ENOVERSION.  hold:
 * wait SECONDS for the WAIT's answer (the test removes the version
 * meanwhile), whatever it is.  Either way hang up, and check that ckptd
 * still answers.
 */
static int a_waitrm(struct rc *r, const char *job, const char *version,
		    int rm, int secs)
{
	struct proto_msg m, rep;
	uint32_t wait_seq, rm_seq = 0;
	int got_wait = 0, got_rm = 0, ret;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	memset(&m, 0, sizeof(m));
	m.type = PROTO_WAIT;
	m.job = job;
	m.version = version;
	m.level = CKPT_DRAINED;
	if (send_msg(r, &m) < 0)
		return bad("send WAIT failed");
	wait_seq = m.seq;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_STATUS;
	if (rpc(r, &m, &rep) < 0)
		return bad("STATUS behind the WAIT: no answer");
	printf("waiting\n");
	fflush(stdout);
	if (rm) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_REMOVE;
		m.job = job;
		m.version = version;
		if (send_msg(r, &m) < 0)
			return bad("send REMOVE failed");
		rm_seq = m.seq;
	}
	while (rm ? !(got_wait && got_rm) : !got_wait) {
		ret = recv_msg(r, &rep, rm ? TMO_MS : secs * 1000);
		if (ret == -ETIMEDOUT && !rm)
			break;
		if (ret < 0)
			return bad("%s: %s", got_rm ? "the WAIT of the removed version was never answered"
					       : "no answer", ckpt_strerror(ret));
		if (rep.type == (PROTO_WAIT | PROTO_REPLY) &&
		    rep.seq == wait_seq) {
			if (rm && rep.status != -CKPT_ENOVERSION)
				return bad("WAIT of a removed version: %s, want %s",
					   ckpt_strerror(rep.status),
					   ckpt_strerror(-CKPT_ENOVERSION));
			got_wait = 1;
		} else if (rep.type == (PROTO_REMOVE | PROTO_REPLY) &&
			   rep.seq == rm_seq) {
			if (rep.status < 0)
				return bad("REMOVE: %s", ckpt_strerror(rep.status));
			got_rm = 1;
		}
	}
	rc_close(r);
	return ping(r);
}

/* ---- garbage ------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const char *pick(const char *const *v, size_t n)
{
	return v[rnd() % n];
}

/* A structurally valid request with random fields. */
static void random_msg(struct proto_msg *m, size_t lease)
{
	static const uint16_t types[] = {
		PROTO_HELLO, PROTO_BEGIN, PROTO_WRITE, PROTO_WRITE, PROTO_WRITE,
		PROTO_COMMIT, PROTO_ABORT, PROTO_WAIT, PROTO_LATEST, PROTO_READ,
		PROTO_LIST_JOBS, PROTO_LIST_VERSIONS, PROTO_LIST_FILES,
		PROTO_STAT, PROTO_REMOVE, PROTO_STATUS };
	static const char *const jobs[] = { "fz", "fz/a", "fz/b/c", "../fz",
					    "fz//a", "" };
	static const char *const vers[] = { "v1", "v2", "v3", "..", "a/b" };
	static const char *const paths[] = { "p", "d/q", "d/r/s", "../p",
					     "/p", "d//q" };

	memset(m, 0, sizeof(*m));
	m->type = types[rnd() % (sizeof(types) / sizeof(types[0]))];
	m->job = pick(jobs, 6);
	m->version = pick(vers, 5);
	m->path = pick(paths, 6);
	m->handle = rnd() % 8 ? rnd() % 4 : (uint32_t)rnd();
	m->level = rnd() % 7;
	m->id = (uint32_t)rnd();
	m->off = rnd() % 4 ? rnd() % (8 << 20) : rnd();
	m->len = rnd() % 4 ? 1 + rnd() % (256 << 10) : rnd();
	if (lease && rnd() % 2)
		m->ring_off = (rnd() % (lease / 4096)) * 4096;
	else
		m->ring_off = rnd() % 4 ? rnd() % (64 << 20) : rnd();
	m->size = rnd() % 2 ? 0 : rnd() % (64 << 20);
}

/* Read whatever is waiting.  -1 if ckptd closed the connection. */
static int drain(struct rc *r)
{
	uint8_t buf[65536];
	ssize_t n;

	for (;;) {
		union {
			char b[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} u;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = u.b,
				     .msg_controllen = sizeof(u.b) };
		struct cmsghdr *cm;

		n = recvmsg(r->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (n == 0)
			return -1;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) /
					       sizeof(int); k++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int),
				       sizeof(fd));
				off_t sz = lseek(fd, 0, SEEK_END);

				if (!r->map && sz > 0) {
					void *p = mmap(NULL, sz,
						       PROT_READ | PROT_WRITE,
						       MAP_SHARED, fd, 0);

					if (p != MAP_FAILED) {
						r->map = p;
						r->lease = sz;
					}
				}
				close(fd);
			}
		}
	}
}

static int a_garbage(struct rc *r, long frames)
{
	static uint8_t buf[PROTO_HDR_LEN + 4096];
	unsigned long closed = 0;
	struct proto_msg m;
	int64_t t0 = now_ms();
	int len;

	if (!rng_state)
		rng_state = 0x9e3779b97f4a7c15ull;
	if (rc_connect(r) < 0)
		return bad("connect failed");
	for (long i = 0; i < frames; i++) {
		unsigned kind = rnd() % 10;
		size_t plen = rnd() % 300;

		if (kind < 2) {
			/* pure noise, then hang up: the stream is lost */
			len = 1 + rnd() % 200;
			for (int k = 0; k < len; k++)
				buf[k] = rnd();
			if (rnd() % 2)
				memcpy(buf, "CKP1", 4);
		} else if (kind < 5) {
			/* a sound header over a random payload */
			uint8_t p[300];

			for (size_t k = 0; k < plen; k++)
				p[k] = rnd() % 4 ? rnd() % 8 : rnd();
			mkframe(buf, PROTO_MAGIC, PROTO_VERSION,
				rnd() % 8 ? 1 + rnd() % (PROTO_NTYPES - 1)
					  : (uint16_t)rnd(),
				plen, i, p, plen, rnd() % 16 != 0);
			len = PROTO_HDR_LEN + plen;
		} else {
			random_msg(&m, r->lease);
			m.seq = i + 1;
			len = proto_encode(buf, sizeof(buf), &m);
			if (len < 0)
				continue;
			if (rnd() % 32 == 0)    /* flip one bit */
				buf[rnd() % len] ^= 1u << (rnd() % 8);
		}
		if (send_raw(r, buf, len) < 0 || drain(r) < 0 || kind < 2) {
			closed++;
			rc_close(r);
			if (rc_connect(r) < 0)
				return bad("frame %ld: cannot reconnect: ckptd is gone",
					   i);
		}
		if (i % 1000 == 999 && ping(r))
			return bad("ckptd stopped answering after %ld frames",
				   i + 1);
	}
	rc_close(r);
	printf("garbage: %ld frames, %lu connections closed, %lld ms\n",
	       frames, closed, (long long)(now_ms() - t0));
	return ping(r);
}

/* A WRITE that names staging before the HELLO reply carrying it was sent
 * (lease.c: the reply waits behind replies in flight, and RELEASE then
 * takes the lease back at once, so a write accepted then could outlive its
 * lease): ckptd must refuse it with -CKPT_EPROTO.  Enough STATUS replies go
 * first that ckptd's send of them stays in flight (nothing reads them yet)
 * but stay under the bound at which ckptd stops reading. */
#define HELD_STATUS 2000

static int a_helloheld(struct rc *r)
{
	struct proto_msg m;
	uint32_t h, hello_seq = 0, release_seq = 0;
	int wack = 1, hello_st = 1, release_st = 1, ret;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (begin(r, "hostile/helloheld", "v1", &h))
		return 1;
	for (int i = 0; i < HELD_STATUS; i++) {
		m = (struct proto_msg){ .type = PROTO_STATUS };
		if (send_msg(r, &m) < 0)
			return bad("send: ckptd closed the connection");
	}
	m = (struct proto_msg){ .type = PROTO_HELLO };
	if (send_msg(r, &m) < 0)
		return bad("send HELLO failed");
	hello_seq = m.seq;
	m = (struct proto_msg){ .type = PROTO_WRITE, .handle = h, .path = "f",
				.len = 4096, .id = 77 };
	if (send_msg(r, &m) < 0)
		return bad("send WRITE failed");
	m = (struct proto_msg){ .type = PROTO_RELEASE };
	if (send_msg(r, &m) < 0)
		return bad("send RELEASE failed");
	release_seq = m.seq;
	while (wack > 0 || hello_st > 0 || release_st > 0) {
		ret = recv_msg(r, &m, TMO_MS);
		if (ret < 0)
			return bad("replies stopped: %s", ckpt_strerror(ret));
		if (m.type == (PROTO_WACK | PROTO_REPLY) && m.id == 77)
			wack = m.status;
		else if (m.type == (PROTO_HELLO | PROTO_REPLY) && m.seq == hello_seq)
			hello_st = m.status;
		else if (m.type == (PROTO_RELEASE | PROTO_REPLY) && m.seq == release_seq)
			release_st = m.status;
	}
	if (wack != -CKPT_EPROTO)
		return bad("a WRITE sent before the HELLO reply: %s, want %s",
			   wack >= 0 ? "accepted" : ckpt_strerror(wack),
			   ckpt_strerror(-CKPT_EPROTO));
	if (hello_st >= 0 || release_st < 0)
		return bad("HELLO %s, RELEASE %s: want the HELLO cancelled by the RELEASE",
			   ckpt_strerror(hello_st), ckpt_strerror(release_st));
	rc_close(r);
	return 0;
}

/* A flood of one request (m, seq set per frame) that sends frame after
 * frame without blocking and without reading, until ckptd stops reading
 * (a second without progress) or max bytes went.  A frame may stall half
 * sent: f keeps the rest. */
struct flood {
	uint8_t frame[PROTO_HDR_LEN + 512];
	size_t off, len;
	uint64_t sent;
	uint32_t n;             /* frames begun */
};

static int flood(struct rc *r, struct proto_msg *m, struct flood *f,
		 uint64_t max)
{
	struct pollfd p;
	ssize_t k;
	int len;

	*f = (struct flood){ 0 };
	while (f->sent < max) {
		if (f->off == f->len) {
			m->seq = ++f->n;
			len = proto_encode(f->frame, sizeof(f->frame), m);
			if (len < 0)
				return bad("encode: %s", ckpt_strerror(len));
			f->off = 0;
			f->len = len;
		}
		p = (struct pollfd){ .fd = r->fd, .events = POLLOUT };
		if (poll(&p, 1, 1000) == 0)
			return 0;               /* ckptd stopped reading us */
		k = send(r->fd, f->frame + f->off, f->len - f->off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k < 0)
			return bad("send: %s", strerror(errno));
		f->off += k;
		f->sent += k;
	}
	return bad("ckptd read %llu MiB of %s requests (%u) whose replies no "
		   "one read", (unsigned long long)(f->sent >> 20),
		   proto_type_name(m->type), f->n);
}

/* After a flood: every whole request is answered, in order and without an
 * error; then ckptd reads again, and the half-sent one is finished and
 * answered too. */
static int flood_replies(struct rc *r, struct flood *f, uint16_t type)
{
	struct proto_msg m;
	uint32_t got = 0;

	for (;;) {
		if (got == f->n - 1 && f->off < f->len) {
			if (send_raw(r, f->frame + f->off, f->len - f->off) < 0)
				return bad("ckptd closed instead of reading on");
			f->off = f->len;
		}
		if (got == f->n)
			return 0;
		if (recv_msg(r, &m, TMO_MS) < 0)
			return bad("reply %u of %u did not come", got + 1, f->n);
		if (m.type != (type | PROTO_REPLY) || m.seq != got + 1 ||
		    m.status < 0)
			return bad("reply %u of %u: %s seq %u: %s", got + 1, f->n,
				   proto_type_name(m.type), m.seq,
				   ckpt_strerror(m.status));
		got++;
	}
}

/* A client that sends requests and never reads the replies: ckptd must stop
 * reading it once a bounded backlog of replies waits (the socket fills and
 * our send blocks) instead of buffering every reply, and it must keep
 * serving everyone else meanwhile.  Then every reply comes back, in order.
 * NOREAD_MIB of requests would make far more reply bytes, or parked WAITs,
 * than any bound allows: if all of it is taken, ckptd buffered it all. */
#define NOREAD_MIB 64

static int a_noread(struct rc *r)
{
	struct proto_msg m = { .type = PROTO_STATUS };
	uint64_t max = (uint64_t)NOREAD_MIB << 20;
	struct flood f;
	uint32_t h;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (flood(r, &m, &f, max))
		return 1;
	if (ping(r))
		return bad("ckptd stopped serving others behind a client that does not read");
	if (flood_replies(r, &f, PROTO_STATUS))
		return 1;
	printf("noread: ckptd stopped reading after %llu KiB of STATUS requests "
	       "(%u); all replies came back in order\n",
	       (unsigned long long)(f.sent >> 10), f.n);
	/* WAITs that park (the version is open) cost memory, not replies. */
	if (begin(r, "hostile/noread", "v1", &h))
		return 1;
	m = (struct proto_msg){ .type = PROTO_WAIT, .job = "hostile/noread",
				.version = "v1", .level = CKPT_LOCAL };
	if (flood(r, &m, &f, max))
		return 1;
	if (ping(r))
		return bad("ckptd stopped serving others behind parked WAITs");
	printf("noread: ckptd stopped reading after %u parked WAITs\n", f.n);
	rc_close(r);            /* drops them, and aborts the version */
	return ping(r);
}

/* READs of one committed file, sent without reading the replies: each may
 * make ckptd take record buffers of up to 64 MiB, so ckptd must stop
 * reading after a few, and serve every one of them right. */
#define FLOOD_FILE (4u << 20)  /* one record: the default chunk */

static int a_readflood(struct rc *r)
{
	struct proto_msg m;
	char job[48];
	uint64_t len;
	struct flood f;
	uint32_t h;
	int st;

	/* several may run at once: a job each (retention keeps few versions) */
	snprintf(job, sizeof(job), "hostile/readflood-%d", (int)getpid());
	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (hello(r, 0) || begin(r, job, "v1", &h))
		return 1;
	len = r->lease < FLOOD_FILE ? r->lease : FLOOD_FILE;
	for (uint64_t i = 0; i < len; i++)
		r->map[i] = (uint8_t)(i * 7 + (i >> 12));
	m = (struct proto_msg){ .type = PROTO_WRITE, .handle = h, .path = "f",
				.len = len, .id = 1 };
	if (send_msg(r, &m) < 0 || wait_wack(r, 1, &st) < 0 || st < 0)
		return bad("WRITE of the file failed");
	m = (struct proto_msg){ .type = PROTO_COMMIT, .handle = h };
	if (rpc(r, &m, &m) < 0 || m.status < 0)
		return bad("COMMIT failed");
	memset(r->map, 0, len);
	m = (struct proto_msg){ .type = PROTO_READ, .job = job,
				.version = "v1", .path = "f", .len = len };
	if (flood(r, &m, &f, (uint64_t)NOREAD_MIB << 20))
		return 1;
	if (ping(r))
		return bad("ckptd stopped serving others behind a READ flood");
	if (flood_replies(r, &f, PROTO_READ))
		return 1;
	for (uint64_t i = 0; i < len; i++)
		if (r->map[i] != (uint8_t)(i * 7 + (i >> 12)))
			return bad("byte %llu read back wrong",
				   (unsigned long long)i);
	printf("readflood: ckptd stopped reading after %u READs of %llu MiB; "
	       "all served\n", f.n, (unsigned long long)(len >> 20));
	rc_close(r);
	return 0;
}

/* ---- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(struct rc *r);
} attacks[] = {
	{ "badmagic", a_badmagic },
	{ "badversion", a_badversion },
	{ "badcrc", a_badcrc },
	{ "truncated", a_truncated },
	{ "oversize", a_oversize },
	{ "reply", a_reply },
	{ "unknown", a_unknown },
	{ "badnames", a_badnames },
	{ "nolease", a_nolease },
	{ "badhandle", a_badhandle },
	{ "ring", a_ring },
	{ "pipe", a_pipe },
	{ "noread", a_noread },
	{ "helloheld", a_helloheld },
	{ "readflood", a_readflood },
};

/* Run the command named by argv[optind]: 0, 1 or 2 (usage). */
static int run(struct rc *r, int argc, char **argv)
{
	attack_name = argv[optind];
	if (!strcmp(attack_name, "ping"))
		return ping(r);
	if (!strcmp(attack_name, "list")) {
		for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
			printf("%s\n", attacks[i].name);
		return 0;
	}
	if (!strcmp(attack_name, "waitrm") && optind + 4 < argc)
		return a_waitrm(r, argv[optind + 1], argv[optind + 2],
				!strcmp(argv[optind + 3], "rm"),
				atoi(argv[optind + 4])) ? 1 : 0;
	if (!strcmp(attack_name, "pfspipe"))   /* needs a [drain] target */
		return pipe_run(r, 1) ? 1 : 0;
	if (!strcmp(attack_name, "garbage"))
		return a_garbage(r, optind + 1 < argc ? atol(argv[optind + 1])
						      : 10000);
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		if (!strcmp(attack_name, attacks[i].name))
			return attacks[i].fn(r) ? 1 : 0;
	return 2;
}

int main(int argc, char **argv)
{
	const char *sock = getenv("CKPT_SOCKET");
	struct rc *r;
	int opt, ret;

	while ((opt = getopt(argc, argv, "s:S:")) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'S': rng_state = strtoull(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (optind >= argc || !sock)
		return 2;
	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	r->fd = -1;
	r->sock = sock;
	ret = run(r, argc, argv);
	rc_close(r);
	free(r);
	return ret;
}
