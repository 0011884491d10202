/*
 * pipe.c - ckpt_raw's attacks on requests decoded in place: many frames
 * in one send, reads among the writes they must see, bad frames among
 * good ones (pipe, pfspipe), and a WAIT that outlives its version
 * (waitrm).  See raw.h.
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

int pipe_run(struct rc *r, int drained)
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

int a_pipe(struct rc *r)
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
int a_waitrm(struct rc *r, const char *job, const char *version, int rm,
	     int secs)
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
