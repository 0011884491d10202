/*
 * flood.c - ckpt_raw's attacks by volume: random garbage frames, requests
 * before the lease's HELLO reply, and floods of requests whose replies the
 * client never reads (noread, readflood).  See raw.h.
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

/* ---- garbage ------------------------------------------------------------ */

uint64_t rng_state;

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

int a_garbage(struct rc *r, long frames)
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

int a_helloheld(struct rc *r)
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

int a_noread(struct rc *r)
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

int a_readflood(struct rc *r)
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

/* ckptd's queue depth (its disk operations in flight), from a STATUS on a
 * connection of its own.  0 with *depth set, or 1 (bad()). */
static int queue_depth(struct rc *r, uint32_t *depth)
{
	struct proto_msg req = { .type = PROTO_STATUS }, rep;
	struct rc *p = calloc(1, sizeof(*p));
	struct ckpt_status s;
	struct proto_hdr h;
	struct dec rest;
	int ret;

	if (!p)
		return bad("out of memory");
	p->sock = r->sock;
	ret = rc_connect(p);
	if (ret == 0)
		ret = rpc(p, &req, &rep);
	/* The reply is still in p->rbuf: decode its body too. */
	if (ret == 0 && rep.status == 0)
		ret = proto_peek(p->rbuf, PROTO_HDR_LEN, &h);
	if (ret == 0 && rep.status == 0)
		ret = proto_decode(p->rbuf, PROTO_HDR_LEN + h.len, &rep, &rest);
	if (ret == 0 && rep.status == 0) {
		proto_dec_status(&rest, &s);
		ret = rest.err;
	}
	rc_close(p);
	free(p);
	if (ret < 0 || rep.status < 0)
		return bad("STATUS: %s", ckpt_strerror(ret ? ret : rep.status));
	*depth = s.queue_depth;
	return 0;
}

/* WRITEs of one 4 KiB piece of the ring, over and over, sent without
 * reading the WACKs while the disk holds every write (t_hostile runs this
 * against a ckptd whose pwrites are late: CKPT_FAULT "pwrite:1+:delay=MS").
 * Each costs ckptd a record and an io_uring op until the disk has it, and a
 * client that reuses ring space could have any number in flight: ckptd must
 * stop reading it at about one WRITE per 4 KiB of its lease, and say so in
 * its queue depth.  Then every WACK comes, each without an error, and the
 * version commits with the file's 4 KiB. */
#define WFLOOD_LEASE (1u << 20)
#define WFLOOD_MIB   8          /* ~80,000 WRITEs: far past any bound */
#define WFLOOD_SLACK 64         /* ckptd's other ops, and WRITES_SLACK */

int a_wflood(struct rc *r)
{
	uint32_t h, depth = 0, got = 0, bound;
	struct proto_msg m;
	struct flood f;
	int ret;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (hello(r, WFLOOD_LEASE) || begin(r, "hostile/wflood", "v1", &h))
		return 1;
	/* ckptd may lease more than asked: the bound is of what it gave. */
	bound = (uint32_t)(r->lease / 4096) + WFLOOD_SLACK;
	memset(r->map, 0x5a, 4096);
	m = (struct proto_msg){ .type = PROTO_WRITE, .handle = h, .path = "f",
				.off = 0, .len = 4096, .ring_off = 0, .id = 1 };
	if (flood(r, &m, &f, (uint64_t)WFLOOD_MIB << 20))
		return 1;
	if (queue_depth(r, &depth))
		return 1;
	if (depth > bound)
		return bad("%u disk operations in flight after %u WRITEs of a "
			   "%zu KiB lease; want at most %u", depth, f.n,
			   r->lease >> 10, bound);
	printf("wflood: ckptd stopped reading after %u WRITEs (%llu KiB) on a "
	       "%zu KiB lease, %u disk operations in flight\n", f.n,
	       (unsigned long long)(f.sent >> 10), r->lease >> 10, depth);
	/* Every WACK, once the disk lets the writes go; the half-sent frame
	 * is finished when all before it are answered. */
	while (got < f.n) {
		if (got == f.n - 1 && f.off < f.len) {
			if (send_raw(r, f.frame + f.off, f.len - f.off) < 0)
				return bad("ckptd closed instead of reading on");
			f.off = f.len;
		}
		ret = recv_msg(r, &m, 4 * TMO_MS);
		if (ret < 0)
			return bad("WACK %u of %u did not come: %s", got + 1,
				   f.n, ckpt_strerror(ret));
		if (m.type != (PROTO_WACK | PROTO_REPLY))
			return bad("a %s came among the WACKs",
				   proto_type_name(m.type));
		if (m.status < 0)
			return bad("WACK %u of %u: %s", got + 1, f.n,
				   ckpt_strerror(m.status));
		got++;
	}
	m = (struct proto_msg){ .type = PROTO_COMMIT, .handle = h };
	ret = rpc(r, &m, &m);
	if (ret < 0 || m.status < 0)
		return bad("COMMIT: %s", ckpt_strerror(ret ? ret : m.status));
	rc_close(r);
	return ping(r);
}
