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
 *   ckpt_raw -s SOCKET wflood        WRITEs reusing ring space, WACKs
 *                                    unread (needs ckptd's pwrites late:
 *                                    CKPT_FAULT="pwrite:1+:delay=MS")
 *   ckpt_raw -s SOCKET waitrm JOB VERSION rm|hold SECONDS
 *                                    a WAIT (drained) that outlives its
 *                                    version (see a_waitrm)
 *
 * This file holds the attacks on single frames and requests, and main();
 * the connection, the pipelined and the volume attacks are in raw/ (raw.h).
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
#include "raw/raw.h"

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

/* BEGIN job/version and COMMIT it empty; its handle in *h.  0 or 1. */
static int commit_empty(struct rc *r, const char *job, const char *version,
			uint32_t *h)
{
	struct proto_msg m, rep;

	if (begin(r, job, version, h))
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_COMMIT;
	m.handle = *h;
	if (rpc(r, &m, &rep) < 0 || rep.status < 0)
		return bad("COMMIT of an empty version: %s",
			   ckpt_strerror(rep.status));
	return 0;
}

static int a_badhandle(struct rc *r)
{
	static const uint32_t handles[] = { 0, 1, 4096, 12345, 0xffffffffu };
	struct proto_msg m;
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
	if (commit_empty(r, "hostile/handle", "v1", &h))
		return 1;
	memset(&m, 0, sizeof(m));
	m.handle = h;
	m.type = PROTO_WRITE;
	m.path = "f";
	m.len = 4096;
	m.id = 99;
	if (expect_error(r, &m, -EBADF, 0, "WRITE on a committed handle"))
		return 1;
	rc_close(r);
	return 0;
}

/* REMOVE with a malformed condition (unknown bits, copies without
 * PROTO_REMOVE_IF) is refused; with a seal that is not the version's it
 * removes nothing (-CKPT_ECHANGED): the version stays listed. */
static int a_badremove(struct rc *r)
{
	static const struct { uint32_t id; uint64_t off; int want; } cases[] = {
		{ CKPT_COPY_LOCAL, 0, -EINVAL },
		{ PROTO_REMOVE_IF | 0x100, 0, -EINVAL },
		{ 0xffffffffu, 0, -EINVAL },
		{ PROTO_REMOVE_IF, 12345, -CKPT_ECHANGED },
		{ PROTO_REMOVE_IF | CKPT_COPY_QUARANTINE, 0, -CKPT_ECHANGED },
	};
	struct proto_msg m, rep;
	char what[64];
	uint32_t h;

	if (rc_connect(r) < 0)
		return bad("connect failed");
	if (commit_empty(r, "hostile/rm", "v1", &h))
		return 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_REMOVE;
		m.job = "hostile/rm";
		m.version = "v1";
		m.id = cases[i].id;
		m.off = cases[i].off;
		snprintf(what, sizeof(what), "REMOVE id 0x%x seq %llu",
			 cases[i].id, (unsigned long long)cases[i].off);
		if (expect_error(r, &m, cases[i].want, 0, what))
			return 1;
	}
	memset(&m, 0, sizeof(m));
	m.type = PROTO_STAT;
	m.job = "hostile/rm";
	m.version = "v1";
	if (rpc(r, &m, &rep) < 0 || rep.status < 0)
		return bad("STAT after the refused REMOVEs: %s",
			   ckpt_strerror(rep.status));
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
	{ "badremove", a_badremove },
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
	if (!strcmp(attack_name, "wflood"))    /* needs late pwrites */
		return a_wflood(r) ? 1 : 0;
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
