/*
 * test_proto_lists.c - the wire protocol's replies that carry lists
 * (LIST_VERSIONS, LIST_NODES, the read plan, the other lists) and STATUS's
 * body: each round-trips entry by entry, malformed entries are refused,
 * and every cut of such a reply is refused or comes up short.  (The
 * messages themselves: test_proto.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "crc32c.h"
#include "proto.h"
#include "proto_test.h"

static void sample_version(struct ckpt_version_info *v, unsigned i)
{
	memset(v, 0, sizeof(*v));
	strcpy(v->job, "job/a");
	snprintf(v->version, sizeof(v->version), "step-%u", i);
	v->state = CKPT_ST_SEALED;
	v->level = CKPT_LOCAL;
	v->uid = 1000 + i;
	v->writers = 8;
	v->committed = 7;
	v->nfiles = 3 + i;
	v->bytes = 0x123456789ull * (i + 1);
	v->stored = 0x12345ull;
	v->seq = 99 + i;
	v->sealed_ns = 0x1700000000000000ull + i;
	v->error = -ENOSPC;
	v->drain = CKPT_DS_RETRY;
	v->drain_error = -CKPT_ETARGET;
	v->drain_tries = 3 + i;
	v->drain_retry_ms = 4000 + i;
	v->rm_part_pfs = i & 1;
}

static void sample_status(struct ckpt_status *s)
{
	memset(s, 0, sizeof(*s));
	s->proto_version = PROTO_VERSION;
	s->clients = 2;
	s->jobs = 3;
	s->versions = 4;
	s->open_versions = 5;
	s->queue_depth = 6;
	s->staging_total = 7ull << 32;
	s->staging_used = 8ull << 32;
	s->capacity = 9ull << 40;
	s->store_used = 10;
	s->ingest_bytes = 11;
	s->ingest_rate = 12;
	s->uptime_ms = 13;
	s->pid = 14;
	strcpy(s->store, "/var/lib/ckpt/store dir");
	s->holder_reserve = 15ull << 33;
	s->parts_adopting = 1;
	s->parts_adopted = 16;
}

/* A LIST_VERSIONS reply of two entries; returns its length. */
static int list_versions_frame(uint8_t *frame, size_t cap)
{
	struct ckpt_version_info v;
	struct proto_msg m;
	struct enc e;
	unsigned i;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_VERSIONS | PROTO_REPLY;
	m.seq = 5;
	proto_begin(&e, frame, cap, &m);
	enc_u32(&e, 2);
	for (i = 0; i < 2; i++) {
		sample_version(&v, i);
		proto_enc_version_entry(&e, &v);
	}
	return proto_finish(&e);
}

/* LIST_NODES (28): a request of off alone; a reply of entries that
 * round-trip, and the decoder's limits on state and last_error. */
static void test_list_nodes(void)
{
	uint8_t frame[FRAME_MAX];
	struct ckpt_node_info n, no;
	struct proto_msg m;
	struct dec rest;
	struct enc e;
	int len;

	CU_ASSERT_EQUAL(PROTO_LIST_NODES, 28);
	CU_ASSERT_EQUAL(PROTO_VERSION, 17);
	CU_ASSERT_EQUAL(PROTO_LINK, 31);
	CU_ASSERT_EQUAL(PROTO_SEEK_DATA, 32);
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_SEEK_DATA), "SEEK_DATA");
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_LINK), "LINK");
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_LIST_NODES), "LIST_NODES");
	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_NODES;
	m.seq = 3;
	m.off = 5;
	len = proto_encode(frame, sizeof(frame), &m);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_EQUAL(proto_decode(frame, (size_t)len, &m, NULL), 0);
	CU_ASSERT_EQUAL(m.off, 5);

	memset(&n, 0, sizeof(n));
	strcpy(n.name, "gpu-017");
	strcpy(n.domain, "rack B");
	n.state = CKPT_NODE_DOWN;
	n.last_error = -ETIMEDOUT;
	n.since_ms_ago = 1234;
	n.heard_ms_ago = CKPT_NODE_NEVER;
	n.lag_ms = 77;
	n.queued_bytes = 1ull << 40;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_NODES | PROTO_REPLY;
	m.size = 1;
	proto_begin(&e, frame, sizeof(frame), &m);
	enc_u32(&e, 1);
	proto_enc_node_entry(&e, &n);
	len = proto_finish(&e);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, (size_t)len, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 1);
	memset(&no, 0xee, sizeof(no));
	proto_dec_node_entry(&rest, &no);
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);
	CU_ASSERT_STRING_EQUAL(no.name, "gpu-017");
	CU_ASSERT_STRING_EQUAL(no.domain, "rack B");
	CU_ASSERT_EQUAL(no.state, CKPT_NODE_DOWN);
	CU_ASSERT_EQUAL(no.last_error, -ETIMEDOUT);
	CU_ASSERT_EQUAL(no.since_ms_ago, 1234);
	CU_ASSERT_EQUAL(no.heard_ms_ago, CKPT_NODE_NEVER);
	CU_ASSERT_EQUAL(no.lag_ms, 77);
	CU_ASSERT_EQUAL(no.queued_bytes, 1ull << 40);

	/* A state out of range, or a positive error: refused. */
	n.state = CKPT_NODE_SELF + 1;
	enc_init(&e, frame, sizeof(frame));
	proto_enc_node_entry(&e, &n);
	dec_init(&rest, frame, e.len);
	proto_dec_node_entry(&rest, &no);
	CU_ASSERT_EQUAL(rest.err, -CKPT_EPROTO);
	n.state = CKPT_NODE_UP;
	n.last_error = 5;
	enc_init(&e, frame, sizeof(frame));
	proto_enc_node_entry(&e, &n);
	dec_init(&rest, frame, e.len);
	proto_dec_node_entry(&rest, &no);
	CU_ASSERT_EQUAL(rest.err, -CKPT_EPROTO);
	/* A count the bytes cannot hold. */
	enc_init(&e, frame, sizeof(frame));
	enc_u32(&e, 2);
	n.last_error = 0;
	proto_enc_node_entry(&e, &n);
	dec_init(&rest, frame, e.len);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, PROTO_LIST_NODES), 0);
	CU_ASSERT_EQUAL(rest.err, -CKPT_EPROTO);
}

/* PLAN (30): a request of job, version and off; entries that round-trip,
 * and the decoder's limits on the sources. */
static void test_plan(void)
{
	uint8_t frame[FRAME_MAX];
	struct ckpt_plan_entry p, po;
	struct proto_msg m;
	struct dec rest;
	struct enc e;
	int len;

	CU_ASSERT_EQUAL(PROTO_PLAN, 30);
	CU_ASSERT_STRING_EQUAL(proto_type_name(PROTO_PLAN), "PLAN");
	memset(&m, 0, sizeof(m));
	m.type = PROTO_PLAN;
	m.job = "train/x";
	m.version = "v1";
	m.off = 9;
	len = proto_encode(frame, sizeof(frame), &m);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_EQUAL(proto_decode(frame, (size_t)len, &m, NULL), 0);
	CU_ASSERT_STRING_EQUAL(m.version, "v1");
	CU_ASSERT_EQUAL(m.off, 9);

	memset(&p, 0, sizeof(p));
	strcpy(p.path, "rank0/model (1).pt");
	p.size = 5ull << 30;
	p.source = CKPT_SRC_SHARDS;
	p.sources = 1u << CKPT_SRC_SHARDS | 1u << CKPT_SRC_PFS;
	strcpy(p.node, "gpu-3");
	strcpy(p.why, "gpu-3 is down; decoded from 5 of 5 shards");
	memset(&m, 0, sizeof(m));
	m.type = PROTO_PLAN | PROTO_REPLY;
	m.size = 1;
	proto_begin(&e, frame, sizeof(frame), &m);
	enc_u32(&e, 1);
	proto_enc_plan_entry(&e, &p);
	len = proto_finish(&e);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, (size_t)len, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 1);
	memset(&po, 0xee, sizeof(po));
	proto_dec_plan_entry(&rest, &po, nbuf);
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);
	CU_ASSERT_STRING_EQUAL(po.path, p.path);
	CU_ASSERT_EQUAL(po.size, p.size);
	CU_ASSERT_EQUAL(po.source, CKPT_SRC_SHARDS);
	CU_ASSERT_EQUAL(po.sources, p.sources);
	CU_ASSERT_STRING_EQUAL(po.node, "gpu-3");
	CU_ASSERT_STRING_EQUAL(po.why, p.why);
	CU_ASSERT_STRING_EQUAL(ckpt_source_name(CKPT_SRC_PFS), "pfs");
	CU_ASSERT_STRING_EQUAL(ckpt_source_name(99), "unknown");

	/* A lost file: no source, no sources. */
	p.source = CKPT_SRC_NONE;
	p.sources = 0;
	enc_init(&e, frame, sizeof(frame));
	proto_enc_plan_entry(&e, &p);
	dec_init(&rest, frame, e.len);
	proto_dec_plan_entry(&rest, &po, nbuf);
	CU_ASSERT_EQUAL(rest.err, 0);
	/* A source out of range, one not among the sources, unknown bits,
	 * an unsafe path: refused. */
	{
		static const uint32_t bad[][2] = {
			{ CKPT_SRC_PFS + 1, 0 },
			{ CKPT_SRC_LOCAL, 1u << CKPT_SRC_PFS },
			{ CKPT_SRC_NONE, 1u << 7 },
		};
		unsigned i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			p.source = bad[i][0];
			p.sources = bad[i][1];
			enc_init(&e, frame, sizeof(frame));
			proto_enc_plan_entry(&e, &p);
			dec_init(&rest, frame, e.len);
			proto_dec_plan_entry(&rest, &po, nbuf);
			CU_ASSERT_EQUAL(rest.err, -CKPT_EPROTO);
		}
	}
	p.source = CKPT_SRC_NONE;
	p.sources = 0;
	strcpy(p.path, "../etc/passwd");
	enc_init(&e, frame, sizeof(frame));
	proto_enc_plan_entry(&e, &p);
	dec_init(&rest, frame, e.len);
	proto_dec_plan_entry(&rest, &po, nbuf);
	CU_ASSERT_NOT_EQUAL(rest.err, 0);
}

static void test_lists(void)
{
	static const char *const jobs[] = { "a", "b/c", "llama70b/run3" };
	uint8_t frame[FRAME_MAX];
	struct ckpt_version_info v, vo;
	struct ckpt_file_info f, fo;
	struct ckpt_status s, so;
	char job[CKPT_JOB_MAX + 1];
	struct proto_msg m;
	struct dec rest;
	struct enc e;
	unsigned i;
	int n;

	/* LIST_JOBS */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_JOBS | PROTO_REPLY;
	proto_begin(&e, frame, sizeof(frame), &m);
	enc_u32(&e, 3);
	for (i = 0; i < 3; i++)
		proto_enc_job_entry(&e, jobs[i]);
	n = proto_finish(&e);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, n, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 3);
	for (i = 0; i < 3; i++) {
		proto_dec_job_entry(&rest, job);
		CU_ASSERT_STRING_EQUAL(job, jobs[i]);
	}
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);

	/* LIST_VERSIONS */
	n = list_versions_frame(frame, sizeof(frame));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, n, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 2);
	for (i = 0; i < 2; i++) {
		sample_version(&v, i);
		memset(&vo, 0, sizeof(vo));
		proto_dec_version_entry(&rest, &vo);
		CU_ASSERT(memcmp(&v, &vo, sizeof(v)) == 0);
	}
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);

	/* LIST_FILES */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_LIST_FILES | PROTO_REPLY;
	memset(&f, 0, sizeof(f));
	strcpy(f.path, "model/rank03.pt");
	f.size = 1ull << 40;
	f.extents = 12345;
	f.attr = (struct ckpt_attr){ CKPT_ATTR_MODE | CKPT_ATTR_MTIME, 0640, 0,
				     0, 0, 1700000000123456789ull, 5, 0 };
	f.ino = (3ull << 32) | 17;
	f.nlink = 2;
	proto_begin(&e, frame, sizeof(frame), &m);
	enc_u32(&e, 1);
	proto_enc_file_entry(&e, &f);
	n = proto_finish(&e);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, n, &m, &rest), 0);
	CU_ASSERT_EQUAL(proto_dec_list_count(&rest, m.type), 1);
	memset(&fo, 0, sizeof(fo));
	proto_dec_file_entry(&rest, &fo, nbuf);
	CU_ASSERT(fo.name == nbuf);
	CU_ASSERT_STRING_EQUAL(nbuf, f.path);
	fo.name = NULL;
	CU_ASSERT(memcmp(&f, &fo, sizeof(f)) == 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);

	/* STAT: one version entry, no count. */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_STAT | PROTO_REPLY;
	sample_version(&v, 9);
	proto_begin(&e, frame, sizeof(frame), &m);
	proto_enc_version_entry(&e, &v);
	n = proto_finish(&e);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, n, &m, &rest), 0);
	memset(&vo, 0, sizeof(vo));
	proto_dec_version_entry(&rest, &vo);
	CU_ASSERT(memcmp(&v, &vo, sizeof(v)) == 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);

	/* STATUS */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_STATUS | PROTO_REPLY;
	sample_status(&s);
	proto_begin(&e, frame, sizeof(frame), &m);
	proto_enc_status(&e, &s);
	n = proto_finish(&e);
	CU_ASSERT_EQUAL_FATAL(proto_decode(frame, n, &m, &rest), 0);
	memset(&so, 0, sizeof(so));
	proto_dec_status(&rest, &so);
	CU_ASSERT(memcmp(&s, &so, sizeof(s)) == 0);
	CU_ASSERT_EQUAL(rest.err, 0);
	CU_ASSERT_EQUAL(dec_left(&rest), 0);
}

/* The decoder's answer to the version entry v, encoded. */
static int version_entry_err(struct ckpt_version_info *v)
{
	uint8_t buf[512];
	struct enc e;
	struct dec d;

	enc_init(&e, buf, sizeof(buf));
	proto_enc_version_entry(&e, v);
	dec_init(&d, buf, e.len);
	proto_dec_version_entry(&d, v);
	return d.err;
}

/* Entries with bad contents, and counts that promise more than is there. */
static void test_bad_entries(void)
{
	uint8_t buf[512];
	struct ckpt_version_info v;
	struct ckpt_file_info f;
	struct enc e;
	struct dec d;

	sample_version(&v, 1);
	strcpy(v.job, "../etc");
	CU_ASSERT_EQUAL(version_entry_err(&v), -CKPT_EBADNAME);
	sample_version(&v, 1);
	v.state = 0;
	CU_ASSERT_EQUAL(version_entry_err(&v), -CKPT_EPROTO);
	/* A drain state past the last, and a positive drain error. */
	sample_version(&v, 1);
	v.drain = CKPT_DS_RETIRED + 1;
	CU_ASSERT_EQUAL(version_entry_err(&v), -CKPT_EPROTO);
	sample_version(&v, 1);
	v.drain = CKPT_DS_RETIRED;
	CU_ASSERT_EQUAL(version_entry_err(&v), 0);
	sample_version(&v, 1);
	v.drain_error = 5;
	CU_ASSERT_EQUAL(version_entry_err(&v), -CKPT_EPROTO);

	memset(&f, 0, sizeof(f));
	strcpy(f.path, "/abs");
	enc_init(&e, buf, sizeof(buf));
	proto_enc_file_entry(&e, &f);
	dec_init(&d, buf, e.len);
	proto_dec_file_entry(&d, &f, nbuf);
	CU_ASSERT_EQUAL(d.err, -CKPT_EBADNAME);

	/* A count of 2^32-1 entries in a few bytes. */
	enc_init(&e, buf, sizeof(buf));
	enc_u32(&e, 0xffffffffu);
	enc_str(&e, "a");
	dec_init(&d, buf, e.len);
	CU_ASSERT_EQUAL(proto_dec_list_count(&d, PROTO_LIST_JOBS), 0);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	/* Exactly enough bytes for the smallest entries is accepted. */
	enc_init(&e, buf, sizeof(buf));
	enc_u32(&e, 1);
	enc_str(&e, "a");
	dec_init(&d, buf, e.len);
	CU_ASSERT_EQUAL(proto_dec_list_count(&d, PROTO_LIST_JOBS), 1);
	dec_init(&d, buf, e.len);
	CU_ASSERT_EQUAL(proto_dec_list_count(&d, PROTO_STAT), 0);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
}

/*
 * Every valid frame, cut at every length, is rejected.  Then the same cut
 * with a header rewritten to agree with it: a non-list frame must still be
 * rejected, and a list reply must fail when its entries are decoded.
 */

/* Every cut of a LIST_VERSIONS reply of two entries and of a STATUS
 * reply is refused, or decodes to a body that comes up short. */
static void test_list_truncation(void)
{
	uint8_t frame[FRAME_MAX];
	struct ckpt_status s;
	struct proto_msg m;
	struct enc e;
	int n;

	n = list_versions_frame(frame, sizeof(frame));
	CU_ASSERT_FATAL(n > 0);
	check_truncations(frame, n, 1);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_STATUS | PROTO_REPLY;
	sample_status(&s);
	proto_begin(&e, frame, sizeof(frame), &m);
	proto_enc_status(&e, &s);
	n = proto_finish(&e);
	CU_ASSERT_FATAL(n > 0);
	check_truncations(frame, n, 1);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "lists", test_lists },
		{ "list_nodes", test_list_nodes },
		{ "plan", test_plan },
		{ "bad_entries", test_bad_entries },
		{ "list_truncation", test_list_truncation },
		{ NULL, NULL }
	};

	return unit_run("proto_lists", tests);
}
