/*
 * test_proto.c - the wire protocol.
 *
 * The expected field list of every message type is written out again here,
 * independently of proto.c's table, so that a change to the wire format
 * shows up as a failing round trip or a wrong frame length.  Then every way
 * a frame can be malformed is tried: truncation at each byte (with and
 * without a header that agrees), CRC damage, bad magic/version/type, bad
 * lengths, NULs and over-long strings, bad names, trailing bytes, and 100k
 * frames of random garbage.  The replies that carry lists (and STATUS's)
 * are test_proto_lists.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "crc32c.h"
#include "proto.h"
#include "proto_test.h"
enum { F_HANDLE = 1, F_LEVEL, F_ID, F_OFF, F_LEN, F_RING, F_SIZE, F_AUX,
       F_JOB, F_VERSION, F_PATH, F_UID, F_PATH2, F_ATTR, F_BLOB, F_STALL,
       F_STALL_STAGING, F_RANK, F_NPARTS };

/* The wire format, restated: request and reply fields per type. */
struct spec {
	unsigned type;
	int req_ok, reply_ok, list;
	int req[7], reply[7];
};

static const struct spec specs[] = {
	{ PROTO_HELLO, 1, 1, 0, { F_SIZE }, { F_SIZE, F_AUX } },
	{ PROTO_BEGIN, 1, 1, 0, { F_JOB, F_VERSION, F_UID, F_NPARTS },
	  { F_HANDLE } },
	{ PROTO_WRITE, 1, 0, 0,
	  { F_HANDLE, F_PATH, F_OFF, F_LEN, F_RING, F_ID }, { 0 } },
	{ PROTO_WACK, 0, 1, 0, { 0 }, { F_ID } },
	{ PROTO_COMMIT, 1, 1, 0, { F_HANDLE, F_STALL, F_STALL_STAGING, F_RANK },
	  { 0 } },
	{ PROTO_ABORT, 1, 1, 0, { F_HANDLE }, { 0 } },
	{ PROTO_WAIT, 1, 1, 0, { F_JOB, F_VERSION, F_LEVEL }, { F_LEVEL } },
	{ PROTO_LATEST, 1, 1, 0, { F_JOB, F_LEVEL }, { F_VERSION } },
	{ PROTO_READ, 1, 1, 0,
	  { F_JOB, F_VERSION, F_PATH, F_OFF, F_LEN, F_RING }, { F_SIZE } },
	{ PROTO_LIST_JOBS, 1, 1, 1, { F_OFF }, { F_SIZE } },
	{ PROTO_LIST_VERSIONS, 1, 1, 1, { F_JOB, F_OFF }, { F_SIZE } },
	{ PROTO_LIST_FILES, 1, 1, 1, { F_JOB, F_VERSION, F_OFF }, { F_SIZE } },
	{ PROTO_STAT, 1, 1, 1, { F_JOB, F_VERSION }, { 0 } },
	{ PROTO_REMOVE, 1, 1, 0, { F_JOB, F_VERSION, F_ID, F_OFF, F_AUX },
	  { 0 } },
	{ PROTO_STATUS, 1, 1, 1, { 0 }, { 0 } },
	{ PROTO_TRUNCATE, 1, 1, 0, { F_HANDLE, F_PATH, F_SIZE }, { 0 } },
	{ PROTO_UNLINK, 1, 1, 0, { F_HANDLE, F_PATH }, { 0 } },
	{ PROTO_RENAME, 1, 1, 0, { F_HANDLE, F_PATH, F_PATH2 }, { 0 } },
	{ PROTO_STAT_FILE, 1, 1, 1, { F_JOB, F_VERSION, F_PATH }, { 0 } },
	{ PROTO_COMMIT_NAME, 1, 1, 0, { F_JOB, F_VERSION }, { 0 } },
	{ PROTO_DRAIN, 1, 1, 0, { F_LEVEL }, { 0 } },
	{ PROTO_DRAIN_NOW, 1, 1, 0, { F_JOB, F_VERSION }, { 0 } },
	{ PROTO_RELEASE, 1, 1, 0, { 0 }, { 0 } },
	{ PROTO_SETATTR, 1, 1, 0, { F_HANDLE, F_PATH, F_ATTR }, { 0 } },
	{ PROTO_LINK, 1, 1, 0, { F_HANDLE, F_PATH, F_PATH2 }, { 0 } },
	{ PROTO_SEEK_DATA, 1, 1, 0, { F_JOB, F_VERSION, F_PATH, F_OFF, F_SIZE },
	  { F_OFF, F_SIZE } },
	{ PROTO_SETXATTR, 1, 1, 0, { F_HANDLE, F_PATH, F_BLOB, F_ID }, { 0 } },
	{ PROTO_GETXATTRS, 1, 1, 1, { F_JOB, F_VERSION, F_PATH }, { 0 } },
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

/* Set field f of m to a distinctive valid value; return its wire size. */
static size_t set_field(struct proto_msg *m, int f, unsigned salt)
{
	switch (f) {
	case F_HANDLE: m->handle = 0x11110000u + salt; return 4;
	case F_LEVEL: m->level = CKPT_PROTECTED; return 4;
	case F_ID: m->id = 0xdead0000u + salt; return 4;
	case F_OFF: m->off = 0x0102030405060708ull + salt; return 8;
	case F_LEN: m->len = 4096 + salt; return 8;
	case F_RING: m->ring_off = 0x10000ull * salt; return 8;
	case F_SIZE: m->size = 0xfeedface00ull + salt; return 8;
	case F_AUX: m->aux = 0x400000ull + salt; return 8;
	case F_JOB: m->job = "llama70b/run3"; return 2 + 13;
	case F_VERSION: m->version = "step-001200"; return 2 + 11;
	case F_PATH: m->path = "model/rank03.pt"; return 2 + 15;
	case F_UID: m->uid = 1000 + salt; return 4;
	case F_PATH2: m->path2 = "model/rank04.pt"; return 2 + 15;
	case F_BLOB: {
		static const uint8_t rec[] = { 6, 'u', 's', 'e', 'r', '.', 'k',
					       2, 0, 'v', 'w' };

		m->blob = rec;
		m->blob_len = sizeof(rec);
		return 4 + sizeof(rec);
	}
	case F_ATTR:
		m->attr = (struct ckpt_attr){ CKPT_ATTR_ALL, 04755, 1000 + salt,
					      100, 1, 2, 3, 0x801 };
		return 48;
	case F_STALL: m->stall = 1234567890123ull + salt; return 8;
	case F_STALL_STAGING: m->stall_staging = 98765ull + salt; return 8;
	case F_RANK: m->rank = 4095 + salt; return 4;
	case F_NPARTS: m->nparts = 6 + salt; return 4;
	}
	return 0;
}

/* A message of spec s, request or reply, with every field it carries set;
 * returns the payload length it should encode to. */
static size_t fill(struct proto_msg *m, const struct spec *s, int reply)
{
	const int *f = reply ? s->reply : s->req;
	size_t n = 0;

	memset(m, 0, sizeof(*m));
	m->type = s->type | (reply ? PROTO_REPLY : 0);
	m->seq = 1000 + s->type;
	for (; *f; f++)
		n += set_field(m, *f, s->type);
	return n;
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* Equal fields; a string left NULL to encode decodes as "". */
static int msg_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	return a->type == b->type && a->seq == b->seq &&
	       a->status == b->status && a->handle == b->handle &&
	       a->level == b->level && a->id == b->id && a->off == b->off &&
	       a->len == b->len && a->ring_off == b->ring_off &&
	       a->size == b->size && a->aux == b->aux && a->uid == b->uid &&
	       a->nparts == b->nparts && a->rank == b->rank &&
	       !strcmp(str_or_empty(a->job), str_or_empty(b->job)) &&
	       !strcmp(str_or_empty(a->version), str_or_empty(b->version)) &&
	       !strcmp(str_or_empty(a->path), str_or_empty(b->path)) &&
	       !strcmp(str_or_empty(a->path2), str_or_empty(b->path2)) &&
	       !memcmp(&a->attr, &b->attr, sizeof(a->attr)) &&
	       a->blob_len == b->blob_len &&
	       (!a->blob_len || !memcmp(a->blob, b->blob, a->blob_len));
}

static void test_round_trip(void)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg in, out;
	struct proto_hdr hdr;
	unsigned i;
	int reply, n;
	size_t plen;

	for (i = 0; i < NSPECS; i++) {
		for (reply = 0; reply < 2; reply++) {
			if (!(reply ? specs[i].reply_ok : specs[i].req_ok))
				continue;
			plen = fill(&in, &specs[i], reply);
			n = proto_encode(frame, sizeof(frame), &in);
			CU_ASSERT_EQUAL(n, (int)(PROTO_HDR_LEN + plen));
			if (n < 0)
				continue;
			CU_ASSERT_EQUAL(proto_peek(frame, n, &hdr), 0);
			CU_ASSERT_EQUAL(hdr.type, in.type);
			CU_ASSERT_EQUAL(hdr.len, plen);
			CU_ASSERT_EQUAL(hdr.seq, in.seq);
			CU_ASSERT_EQUAL(decode(frame, n, &out), 0);
			CU_ASSERT(msg_equal(&in, &out));
			/* The strings were decoded in place, into frame. */
			if (in.job)
				CU_ASSERT(out.job > (char *)frame &&
					  out.job < (char *)frame + n);
		}
	}
}

/* Header layout, byte for byte. */
static void test_header_layout(void)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg m;
	uint32_t crc;
	int n;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_ABORT;
	m.seq = 0x01020304;
	m.handle = 0xa1b2c3d4;
	n = proto_encode(frame, sizeof(frame), &m);
	CU_ASSERT_EQUAL_FATAL(n, PROTO_HDR_LEN + 4);
	CU_ASSERT(memcmp(frame, "CKP1", 4) == 0);
	CU_ASSERT_EQUAL(frame[4], PROTO_VERSION);
	CU_ASSERT_EQUAL(frame[5], 0);
	CU_ASSERT_EQUAL(frame[6], PROTO_ABORT);
	CU_ASSERT_EQUAL(frame[7], 0);
	CU_ASSERT_EQUAL(get_le32(frame + 8), 4);
	CU_ASSERT_EQUAL(get_le32(frame + 12), 0x01020304u);
	CU_ASSERT_EQUAL(get_le32(frame + 16), 0);
	CU_ASSERT_EQUAL(get_le32(frame + 24), 0xa1b2c3d4u);
	/* The CRC covers the header with its crc field zeroed. */
	crc = get_le32(frame + 20);
	put_le32(frame + 20, 0);
	CU_ASSERT_EQUAL(crc32c(frame, n), crc);
	put_le32(frame + 20, crc);
	CU_ASSERT_EQUAL(decode(frame, n, &m), 0);
}

/* Failed replies carry no fields, except WACK, which keeps its id. */
static void test_error_replies(void)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg m, out;
	int n;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_BEGIN | PROTO_REPLY;
	m.status = -CKPT_ESEALED;
	m.handle = 77;
	n = proto_encode(frame, sizeof(frame), &m);
	CU_ASSERT_EQUAL_FATAL(n, PROTO_HDR_LEN);
	CU_ASSERT_EQUAL(decode(frame, n, &out), 0);
	CU_ASSERT_EQUAL(out.status, -CKPT_ESEALED);
	CU_ASSERT_EQUAL(out.handle, 0);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_FILES | PROTO_REPLY;
	m.status = -ENOENT;
	n = proto_encode(frame, sizeof(frame), &m);
	CU_ASSERT_EQUAL_FATAL(n, PROTO_HDR_LEN);
	CU_ASSERT_EQUAL(decode(frame, n, &out), 0);
	/* ... and a payload on an error reply is refused. */
	frame[n] = 0;
	fix_frame(frame, n + 1);
	CU_ASSERT_EQUAL(decode(frame, n + 1, &out), -CKPT_EPROTO);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_WACK | PROTO_REPLY;
	m.status = -EIO;
	m.id = 4242;
	n = proto_encode(frame, sizeof(frame), &m);
	CU_ASSERT_EQUAL_FATAL(n, PROTO_HDR_LEN + 4);
	CU_ASSERT_EQUAL(decode(frame, n, &out), 0);
	CU_ASSERT_EQUAL(out.status, -EIO);
	CU_ASSERT_EQUAL(out.id, 4242);
}

static void test_truncation(void)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg m;
	unsigned i;
	int reply, n;

	for (i = 0; i < NSPECS; i++) {
		for (reply = 0; reply < 2; reply++) {
			if (!(reply ? specs[i].reply_ok : specs[i].req_ok))
				continue;
			fill(&m, &specs[i], reply);
			n = proto_encode(frame, sizeof(frame), &m);
			CU_ASSERT_FATAL(n > 0);
			check_truncations(frame, n, reply && specs[i].list);
		}
	}
}

/* A WRITE request, the richest frame, to damage in various ways. */
static int write_frame(uint8_t *frame)
{
	struct proto_msg m;

	fill(&m, &specs[2], 0);
	return proto_encode(frame, FRAME_MAX, &m);
}

static void test_crc(void)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg m;
	int n, bit;
	size_t i;

	n = write_frame(frame);
	CU_ASSERT_FATAL(n > 0);
	for (bit = 0; bit < 32; bit++) {
		frame[20 + bit / 8] ^= 1u << (bit % 8);
		CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_ECORRUPT);
		frame[20 + bit / 8] ^= 1u << (bit % 8);
	}
	/* Any payload byte, and the seq field of the header.  (A status on
	 * a request is refused before the CRC is looked at.) */
	for (i = 12; i < (size_t)n; i++) {
		frame[i] ^= 0x10;
		if (i >= 16 && i < 24) {
			CU_ASSERT_NOT_EQUAL(decode(frame, n, &m), 0);
		} else {
			CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_ECORRUPT);
		}
		frame[i] ^= 0x10;
	}
	CU_ASSERT_EQUAL(decode(frame, n, &m), 0);
}

static void test_bad_header(void)
{
	static const unsigned bad_types[] = {
		0, PROTO_NTYPES, 0x7fff, 0xffff, PROTO_REPLY,
		PROTO_REPLY | PROTO_NTYPES, PROTO_WACK,
		PROTO_WRITE | PROTO_REPLY, PROTO_HELLO | 0x100,
	};
	uint8_t frame[FRAME_MAX];
	struct proto_hdr hdr;
	struct proto_msg m;
	unsigned i;
	int n;

	n = write_frame(frame);
	CU_ASSERT_FATAL(n > 0);

	frame[0] ^= 1;
	fix_frame(frame, n);
	CU_ASSERT_EQUAL(proto_peek(frame, n, &hdr), -CKPT_EBADMAGIC);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EBADMAGIC);
	frame[0] ^= 1;

	frame[4] = PROTO_VERSION + 1;
	fix_frame(frame, n);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EVERSION);
	frame[4] = PROTO_VERSION;
	frame[5] = 1;
	fix_frame(frame, n);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EVERSION);
	frame[5] = 0;

	for (i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		frame[6] = bad_types[i];
		frame[7] = bad_types[i] >> 8;
		fix_frame(frame, n);
		CU_ASSERT_EQUAL(proto_peek(frame, n, &hdr), -CKPT_EPROTO);
		CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);
	}
	frame[6] = PROTO_WRITE;
	frame[7] = 0;
	fix_frame(frame, n);
	CU_ASSERT_EQUAL(decode(frame, n, &m), 0);

	/* A request with a status, a reply with a positive status. */
	put_le32(frame + 16, (uint32_t)-EIO);
	fix_frame(frame, n);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);
	put_le32(frame + 16, 0);
	fix_frame(frame, n);

	/* len beyond PROTO_MAX_PAYLOAD is refused from the header alone. */
	put_le32(frame + 8, PROTO_MAX_PAYLOAD + 1);
	CU_ASSERT_EQUAL(proto_peek(frame, PROTO_HDR_LEN, &hdr), -CKPT_EPROTO);
	put_le32(frame + 8, 0xffffffffu);
	CU_ASSERT_EQUAL(proto_peek(frame, PROTO_HDR_LEN, &hdr), -CKPT_EPROTO);
	/* A len that disagrees with the bytes given. */
	put_le32(frame + 8, n - PROTO_HDR_LEN - 1);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);
	put_le32(frame + 8, n - PROTO_HDR_LEN + 1);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(proto_peek(frame, PROTO_HDR_LEN - 1, &hdr),
			-CKPT_EPROTO);
}

/* Encode m, expect decode to give want. */
static void expect_decode(const struct proto_msg *m, int want)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg out;
	int n;

	n = proto_encode(frame, sizeof(frame), m);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(decode(frame, n, &out), want);
}

static void test_lengths(void)
{
	struct proto_msg m;

	fill(&m, &specs[2], 0);                 /* WRITE */
	m.len = 0;
	expect_decode(&m, -CKPT_EPROTO);
	m.len = PROTO_MAX_IO;
	expect_decode(&m, 0);
	m.len = PROTO_MAX_IO + 1;
	expect_decode(&m, -CKPT_EPROTO);
	m.len = UINT64_MAX;
	expect_decode(&m, -CKPT_EPROTO);

	fill(&m, &specs[8], 0);                 /* READ */
	m.len = 0;
	expect_decode(&m, -CKPT_EPROTO);
	m.len = 1;
	expect_decode(&m, 0);
	m.len = (uint64_t)1 << 31;
	expect_decode(&m, -CKPT_EPROTO);

	fill(&m, &specs[6], 0);                 /* WAIT */
	m.level = CKPT_DRAINED + 1;
	expect_decode(&m, -CKPT_EPROTO);
}

/* SETXATTR's blob must be a well-formed xattr.h record list. */
static void test_blob(void)
{
	static const uint8_t cut[] = { 6, 'u', 's', 'e', 'r', '.', 'k', 9, 0 };
	struct proto_msg m;

	fill(&m, &specs[NSPECS - 2], 0);        /* SETXATTR */
	CU_ASSERT_EQUAL_FATAL(m.type, PROTO_SETXATTR);
	expect_decode(&m, 0);
	m.blob = cut;
	m.blob_len = sizeof(cut);
	expect_decode(&m, -CKPT_EPROTO);
}

static void test_names_on_wire(void)
{
	static const char *const bad[] = { "", "..", "a/../b", "/abs", "a//b",
					   "a/", "caf\xc3\xa9/..", "a b/." };
	static const char *const good[] = { "caf\xc3\xa9", "a b",
					    "model (1).pt", "~#%:'()", "\x01" };
	struct proto_msg m;
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fill(&m, &specs[1], 0);         /* BEGIN */
		m.job = bad[i];
		expect_decode(&m, -CKPT_EBADNAME);
		fill(&m, &specs[1], 0);
		m.version = bad[i];
		expect_decode(&m, -CKPT_EBADNAME);
		fill(&m, &specs[2], 0);         /* WRITE */
		m.path = bad[i];
		expect_decode(&m, -CKPT_EBADNAME);
		fill(&m, &specs[10], 0);        /* LIST_VERSIONS */
		m.job = bad[i];
		expect_decode(&m, -CKPT_EBADNAME);
		fill(&m, &specs[7], 1);         /* LATEST reply */
		m.version = bad[i];
		expect_decode(&m, -CKPT_EBADNAME);
	}
	/* Any byte but '/' and NUL is a name byte. */
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		fill(&m, &specs[1], 0);         /* BEGIN */
		m.job = good[i];
		m.version = good[i];
		expect_decode(&m, 0);
		fill(&m, &specs[2], 0);         /* WRITE */
		m.path = good[i];
		expect_decode(&m, 0);
	}
	fill(&m, &specs[1], 0);
	m.version = "a/b";               /* a version has no '/' */
	expect_decode(&m, -CKPT_EBADNAME);
}

/* A BEGIN request with hand-written job bytes. */
static size_t begin_raw(uint8_t *frame, const char *job, size_t jlen)
{
	struct enc e;

	enc_init(&e, frame, FRAME_MAX);
	enc_u32(&e, PROTO_MAGIC);
	enc_u16(&e, PROTO_VERSION);
	enc_u16(&e, PROTO_BEGIN);
	enc_u32(&e, 0);
	enc_u32(&e, 1);
	enc_u32(&e, 0);
	enc_u32(&e, 0);
	enc_u16(&e, (uint16_t)jlen);
	enc_bytes(&e, job, jlen);
	enc_str(&e, "v1");
	enc_u32(&e, CKPT_UID_SELF);
	enc_u32(&e, 0);                         /* nparts */
	CU_ASSERT_EQUAL(e.err, 0);
	fix_frame(frame, e.len);
	return e.len;
}

/* Components of clen bytes joined by '/', n bytes in all (the first may
 * be shorter). */
static const char *long_path(size_t n, size_t clen)
{
	static char buf[CKPT_PATH_MAX2 + 64];
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (n - 1 - i) % (clen + 1) == clen ? '/' : 'p';
	buf[n] = '\0';
	return buf;
}

/* An UNLINK request whose path is len bytes of path, by hand. */
static size_t unlink_raw(uint8_t *frame, const char *path, size_t len)
{
	struct enc e;

	enc_init(&e, frame, FRAME_MAX);
	enc_u32(&e, PROTO_MAGIC);
	enc_u16(&e, PROTO_VERSION);
	enc_u16(&e, PROTO_UNLINK);
	enc_u32(&e, 0);
	enc_u32(&e, 1);
	enc_u32(&e, 0);
	enc_u32(&e, 0);
	enc_u32(&e, 7);                         /* handle */
	enc_u16(&e, (uint16_t)len);
	enc_bytes(&e, path, len);
	CU_ASSERT_EQUAL(e.err, 0);
	fix_frame(frame, e.len);
	return e.len;
}

/* Paths up to CKPT_PATH_MAX2 (4095) bytes travel; 4096 bytes or a 256-byte
 * component are refused by the encoder and the decoder; a file entry with
 * a path past CKPT_PATH_MAX has it whole in name and "" in path[]. */
static void test_long_paths(void)
{
	uint8_t frame[FRAME_MAX];
	struct ckpt_file_info f, fo;
	struct proto_msg m, out;
	char path[CKPT_PATH_MAX2 + 2];
	struct dec rest;
	struct enc e;
	size_t n;
	int len;

	strcpy(path, long_path(CKPT_PATH_MAX2, 255));
	n = unlink_raw(frame, path, CKPT_PATH_MAX2);
	CU_ASSERT_EQUAL_FATAL(decode(frame, n, &out), 0);
	CU_ASSERT_STRING_EQUAL(out.path, path);
	strcpy(path, long_path(CKPT_PATH_MAX2 + 1, 255));
	n = unlink_raw(frame, path, CKPT_PATH_MAX2 + 1);
	CU_ASSERT_EQUAL(decode(frame, n, &out), -CKPT_EPROTO);
	strcpy(path, long_path(1000, 256));
	n = unlink_raw(frame, path, 1000);
	CU_ASSERT_EQUAL(decode(frame, n, &out), -CKPT_EBADNAME);

	/* RENAME and LINK: both paths at the limit fit one frame. */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_RENAME;
	m.handle = 3;
	strcpy(path, long_path(CKPT_PATH_MAX2, 200));
	m.path = path;
	m.path2 = long_path(CKPT_PATH_MAX2, 255);
	expect_decode(&m, 0);
	m.path2 = long_path(CKPT_PATH_MAX2 + 1, 255);
	CU_ASSERT_EQUAL(proto_encode(frame, sizeof(frame), &m), -EMSGSIZE);

	/* A file entry past the first release's path[]. */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_FILES | PROTO_REPLY;
	memset(&f, 0, sizeof(f));
	strcpy(path, long_path(CKPT_PATH_MAX2, 255));
	f.name = path;
	f.size = 42;
	f.nlink = 1;
	proto_begin(&e, frame, sizeof(frame), &m);
	enc_u32(&e, 1);
	proto_enc_file_entry(&e, &f);
	len = proto_finish(&e);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, (size_t)len, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 1);
	memset(&fo, 0xee, sizeof(fo));
	proto_dec_file_entry(&rest, &fo, nbuf);
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT(fo.name == nbuf);
	CU_ASSERT_STRING_EQUAL(nbuf, path);
	CU_ASSERT_STRING_EQUAL(fo.path, "");
	CU_ASSERT_EQUAL(fo.size, 42);
	/* Exactly CKPT_PATH_MAX still fits path[]. */
	strcpy(path, long_path(CKPT_PATH_MAX, 100));
	proto_begin(&e, frame, sizeof(frame), &m);
	enc_u32(&e, 1);
	proto_enc_file_entry(&e, &f);
	len = proto_finish(&e);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, (size_t)len, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 1);
	proto_dec_file_entry(&rest, &fo, nbuf);
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT_STRING_EQUAL(fo.path, path);
}

static void test_strings(void)
{
	uint8_t frame[FRAME_MAX];
	char job[FRAME_MAX];
	struct proto_msg m;
	size_t n;

	n = begin_raw(frame, "abc", 3);
	CU_ASSERT_EQUAL(decode(frame, n, &m), 0);
	CU_ASSERT_STRING_EQUAL(m.job, "abc");

	n = begin_raw(frame, "a\0b", 3);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);
	n = begin_raw(frame, "ab\0", 3);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);

	memset(job, 'j', sizeof(job));
	n = begin_raw(frame, job, CKPT_JOB_MAX);
	CU_ASSERT_EQUAL(decode(frame, n, &m), 0);
	n = begin_raw(frame, job, CKPT_JOB_MAX + 1);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);
	n = begin_raw(frame, job, 3000);
	CU_ASSERT_EQUAL(decode(frame, n, &m), -CKPT_EPROTO);

	/* The encoder will not send an over-long field. */
	fill(&m, &specs[1], 0);
	memset(job, 'v', CKPT_VERSION_MAX + 1);
	job[CKPT_VERSION_MAX + 1] = '\0';
	m.version = job;
	CU_ASSERT_EQUAL(proto_encode(frame, sizeof(frame), &m), -EMSGSIZE);
}

static void test_trailing(void)
{
	uint8_t frame[FRAME_MAX];
	struct proto_msg m;
	struct dec rest;
	unsigned i;
	int reply, n;

	for (i = 0; i < NSPECS; i++) {
		for (reply = 0; reply < 2; reply++) {
			if (!(reply ? specs[i].reply_ok : specs[i].req_ok))
				continue;
			fill(&m, &specs[i], reply);
			n = proto_encode(frame, sizeof(frame), &m);
			CU_ASSERT_FATAL(n > 0);
			frame[n] = 0x5a;
			fix_frame(frame, n + 1);
			if (reply && specs[i].list) {
				CU_ASSERT_EQUAL(proto_decode(frame, n + 1, &m,
							     &rest), 0);
				CU_ASSERT_EQUAL(dec_left(&rest), 1);
			} else {
				CU_ASSERT_EQUAL(decode(frame, n + 1, &m),
						-CKPT_EPROTO);
			}
		}
	}
}

static void test_encode_limits(void)
{
	static uint8_t big[PROTO_MAX_PAYLOAD + 64];
	static uint8_t zeros[PROTO_MAX_PAYLOAD + 1];
	struct proto_msg m;
	struct enc e;
	int n;

	fill(&m, &specs[2], 0);
	n = proto_encode(big, sizeof(big), &m);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(proto_encode(big, n - 1, &m), -EMSGSIZE);
	CU_ASSERT_EQUAL(proto_encode(big, PROTO_HDR_LEN - 1, &m), -EMSGSIZE);
	CU_ASSERT_EQUAL(proto_encode(NULL, 0, &m), -EMSGSIZE);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_STATUS | PROTO_REPLY;   /* a list reply without fields */
	proto_begin(&e, big, sizeof(big), &m);
	enc_bytes(&e, zeros, PROTO_MAX_PAYLOAD);
	CU_ASSERT_EQUAL(proto_finish(&e), PROTO_HDR_LEN + PROTO_MAX_PAYLOAD);
	proto_begin(&e, big, sizeof(big), &m);
	enc_bytes(&e, zeros, PROTO_MAX_PAYLOAD + 1);
	CU_ASSERT_EQUAL(proto_finish(&e), -EMSGSIZE);

	m.type = PROTO_WACK;                    /* never a request */
	CU_ASSERT(proto_encode(big, sizeof(big), &m) < 0);
	m.type = PROTO_NTYPES;
	CU_ASSERT(proto_encode(big, sizeof(big), &m) < 0);
}

static void test_type_names(void)
{
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_HELLO), "HELLO");
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_WRITE), "WRITE");
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_LIST_VERSIONS |
					       PROTO_REPLY), "LIST_VERSIONS");
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_STATUS), "STATUS");
	CU_ASSERT_PTR_NOT_NULL(proto_type_name(0));
	CU_ASSERT_PTR_NOT_NULL(proto_type_name(PROTO_NTYPES));
	CU_ASSERT_PTR_NOT_NULL(proto_type_name(0xffffffffu));
}

/* Decode whatever proto_decode() accepts all the way through its list. */
static void decode_all(uint8_t *f, size_t len)
{
	struct ckpt_version_info v;
	struct ckpt_file_info fi;
	char job[CKPT_JOB_MAX + 1];
	struct ckpt_status s;
	struct proto_msg m;
	struct proto_hdr hdr;
	struct dec rest;
	uint32_t i, n;

	(void)proto_peek(f, len, &hdr);
	if (proto_decode(f, len, &m, &rest))
		return;
	switch (m.type) {
	case PROTO_LIST_JOBS | PROTO_REPLY:
		n = proto_dec_list_count(&rest, m.type);
		for (i = 0; i < n; i++)
			proto_dec_job_entry(&rest, job);
		break;
	case PROTO_LIST_VERSIONS | PROTO_REPLY:
		n = proto_dec_list_count(&rest, m.type);
		for (i = 0; i < n; i++)
			proto_dec_version_entry(&rest, &v);
		break;
	case PROTO_LIST_FILES | PROTO_REPLY:
		n = proto_dec_list_count(&rest, m.type);
		for (i = 0; i < n; i++)
			proto_dec_file_entry(&rest, &fi, nbuf);
		break;
	case PROTO_STAT | PROTO_REPLY:
		proto_dec_version_entry(&rest, &v);
		break;
	case PROTO_STATUS | PROTO_REPLY:
		proto_dec_status(&rest, &s);
		break;
	}
}

/* 100k frames of garbage: pure noise, noise behind a plausible header, and
 * valid frames with a few random bytes changed (CRC fixed up so that the
 * field decoders see them). */
static void test_garbage(void)
{
	uint8_t valid[FRAME_MAX], f[FRAME_MAX], g[FRAME_MAX];
	size_t len, vlen, j;
	struct proto_msg m;
	unsigned i, k, accepted = 0;
	int reply;

	srand(12345);
	for (i = 0; i < 100000; i++) {
		const struct spec *s = &specs[rand() % NSPECS];

		reply = s->req_ok ? rand() % 2 : 1;
		if (!s->reply_ok)
			reply = 0;
		fill(&m, s, reply);
		vlen = proto_encode(valid, sizeof(valid), &m);
		switch (i % 3) {
		case 0:
			len = rand() % 300;
			for (j = 0; j < len; j++)
				f[j] = rand();
			break;
		case 1:
			len = PROTO_HDR_LEN + rand() % 200;
			memcpy(f, valid, PROTO_HDR_LEN);
			for (j = PROTO_HDR_LEN; j < len; j++)
				f[j] = rand();
			if (rand() % 2)
				f[6] = rand() % (PROTO_NTYPES + 1);
			fix_frame(f, len);
			break;
		default:
			len = vlen + rand() % 3;
			memcpy(f, valid, vlen);
			for (j = vlen; j < len; j++)
				f[j] = rand();
			for (k = 0; k < 1 + (unsigned)rand() % 3; k++)
				f[rand() % len] = rand();
			if (rand() % 4)
				fix_frame(f, len);
			break;
		}
		memcpy(g, f, len);      /* decoding rewrites the frame */
		if (proto_decode(g, len, &m, NULL) == 0)
			accepted++;
		decode_all(f, len);
	}
	/* Mutated valid frames do sometimes decode; make sure some did, so
	 * that the field decoders were really exercised. */
	CU_ASSERT(accepted > 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "header_layout", test_header_layout },
		{ "error_replies", test_error_replies },
		{ "truncation", test_truncation },
		{ "crc", test_crc },
		{ "bad_header", test_bad_header },
		{ "lengths", test_lengths },
		{ "names_on_wire", test_names_on_wire },
		{ "blob", test_blob },
		{ "strings", test_strings },
		{ "long_paths", test_long_paths },
		{ "trailing", test_trailing },
		{ "encode_limits", test_encode_limits },
		{ "type_names", test_type_names },
		{ "garbage", test_garbage },
		{ NULL, NULL }
	};

	return unit_run("proto", tests);
}
