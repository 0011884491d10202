/*
 * proto.c - encoding and decoding of wire frames.
 *
 * Every message type is one row of proto_types[]: the fields its request
 * carries and the fields its reply carries, in wire order, plus flags for the
 * direction a type may travel in and whether its reply is followed by a list
 * or an entry.  Each field is described once in proto_fields[] (its width,
 * where it lives in struct proto_msg, and for strings the longest value and
 * the name check it must pass), so the encoder and the decoder are the same
 * two loops over the table and cannot drift apart.
 *
 * The decoder is a trust boundary (ckptd reads it from any local user) and is
 * fuzzed: it checks the header, then the CRC over the whole frame, then each
 * field, and it refuses trailing bytes unless the reply has a list after its
 * fixed fields.  A reply whose status is an error carries no fields, except
 * WACK, whose id says which WRITE the status belongs to.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"
#include "names.h"
#include "proto.h"
#include "xattr.h"

/* Offsets in the fixed header. */
#define HDR_MAGIC   0
#define HDR_VERSION 4
#define HDR_TYPE    6
#define HDR_LEN     8
#define HDR_SEQ     12
#define HDR_STATUS  16
#define HDR_CRC     20

enum pfield {
	PF_END = 0,     /* terminates a field list */
	PF_HANDLE,
	PF_LEVEL,
	PF_ID,
	PF_OFF,
	PF_LEN,
	PF_RING_OFF,
	PF_SIZE,
	PF_AUX,
	PF_JOB,
	PF_VERSION,
	PF_PATH,
	PF_UID,
	PF_PATH2,
	PF_ATTR,
	PF_BLOB,
	PF_STALL,
	PF_STALL_STAGING,
	PF_RANK,
	PF_NPARTS,
	PF_NFIELDS
};

/* PK_ATTR: a struct ckpt_attr, as proto_enc_attr() writes it. */
/* PK_BLOB: u32 length and bytes of a checked xattr.h blob (blob, blob_len). */
enum pkind { PK_U32, PK_U64, PK_STR, PK_ATTR, PK_BLOB };

struct pfield_desc {
	enum pkind kind;
	size_t off;                        /* offset in struct proto_msg */
	size_t max;                        /* PK_STR: longest value */
	int (*check)(const char *name);    /* PK_STR: name rule */
};

#define U32F(f) { PK_U32, offsetof(struct proto_msg, f), 0, NULL }
#define U64F(f) { PK_U64, offsetof(struct proto_msg, f), 0, NULL }
#define STRF(f, max, fn) { PK_STR, offsetof(struct proto_msg, f), max, fn }

static const struct pfield_desc proto_fields[PF_NFIELDS] = {
	[PF_HANDLE]   = U32F(handle),
	[PF_LEVEL]    = U32F(level),
	[PF_ID]       = U32F(id),
	[PF_OFF]      = U64F(off),
	[PF_LEN]      = U64F(len),
	[PF_RING_OFF] = U64F(ring_off),
	[PF_SIZE]     = U64F(size),
	[PF_AUX]      = U64F(aux),
	[PF_JOB]      = STRF(job, CKPT_JOB_MAX, name_check_job),
	[PF_VERSION]  = STRF(version, CKPT_VERSION_MAX, name_check_version),
	[PF_PATH]     = STRF(path, CKPT_PATH_MAX2, name_check_path),
	[PF_UID]      = U32F(uid),
	[PF_PATH2]    = STRF(path2, CKPT_PATH_MAX2, name_check_path),
	[PF_ATTR]     = { PK_ATTR, offsetof(struct proto_msg, attr), 0, NULL },
	[PF_BLOB]     = { PK_BLOB, offsetof(struct proto_msg, blob), 0, NULL },
	[PF_STALL]    = U64F(stall),
	[PF_STALL_STAGING] = U64F(stall_staging),
	[PF_RANK]     = U32F(rank),
	[PF_NPARTS]   = U32F(nparts),
};

#define PT_NO_REQ   0x1  /* never sent as a request (WACK) */
#define PT_NO_REPLY 0x2  /* never sent as a reply (WRITE: WACK answers) */
#define PT_LIST     0x4  /* a successful reply has a list or entry after */
#define PT_ERR_BODY 0x8  /* a failed reply still carries its fields */

#define PROTO_MAX_FIELDS 6

struct ptype_desc {
	const char *name;
	unsigned flags;
	uint8_t req[PROTO_MAX_FIELDS + 1];    /* PF_END terminated */
	uint8_t reply[PROTO_MAX_FIELDS + 1];
};

static const struct ptype_desc proto_types[PROTO_NTYPES] = {
	[PROTO_HELLO] = { "HELLO", 0, { PF_SIZE }, { PF_SIZE, PF_AUX } },
	[PROTO_BEGIN] = { "BEGIN", 0, { PF_JOB, PF_VERSION, PF_UID, PF_NPARTS },
			  { PF_HANDLE } },
	[PROTO_WRITE] = { "WRITE", PT_NO_REPLY,
			  { PF_HANDLE, PF_PATH, PF_OFF, PF_LEN, PF_RING_OFF,
			    PF_ID }, { 0 } },
	[PROTO_WACK] = { "WACK", PT_NO_REQ | PT_ERR_BODY, { 0 }, { PF_ID } },
	[PROTO_COMMIT] = { "COMMIT", 0,
			   { PF_HANDLE, PF_STALL, PF_STALL_STAGING, PF_RANK },
			   { 0 } },
	[PROTO_ABORT] = { "ABORT", 0, { PF_HANDLE }, { 0 } },
	[PROTO_WAIT] = { "WAIT", 0, { PF_JOB, PF_VERSION, PF_LEVEL },
			 { PF_LEVEL } },
	[PROTO_LATEST] = { "LATEST", 0, { PF_JOB, PF_LEVEL }, { PF_VERSION } },
	[PROTO_READ] = { "READ", 0,
			 { PF_JOB, PF_VERSION, PF_PATH, PF_OFF, PF_LEN,
			   PF_RING_OFF }, { PF_SIZE } },
	[PROTO_LIST_JOBS] = { "LIST_JOBS", PT_LIST, { PF_OFF }, { PF_SIZE } },
	[PROTO_LIST_VERSIONS] = { "LIST_VERSIONS", PT_LIST, { PF_JOB, PF_OFF },
				  { PF_SIZE } },
	[PROTO_LIST_FILES] = { "LIST_FILES", PT_LIST,
			       { PF_JOB, PF_VERSION, PF_OFF }, { PF_SIZE } },
	[PROTO_STAT] = { "STAT", PT_LIST, { PF_JOB, PF_VERSION }, { 0 } },
	[PROTO_REMOVE] = { "REMOVE", 0,
			   { PF_JOB, PF_VERSION, PF_ID, PF_OFF, PF_AUX }, { 0 } },
	[PROTO_STATUS] = { "STATUS", PT_LIST, { 0 }, { 0 } },
	[PROTO_TRUNCATE] = { "TRUNCATE", 0, { PF_HANDLE, PF_PATH, PF_SIZE },
			     { 0 } },
	[PROTO_UNLINK] = { "UNLINK", 0, { PF_HANDLE, PF_PATH }, { 0 } },
	[PROTO_RENAME] = { "RENAME", 0, { PF_HANDLE, PF_PATH, PF_PATH2 },
			   { 0 } },
	[PROTO_STAT_FILE] = { "STAT_FILE", PT_LIST,
			      { PF_JOB, PF_VERSION, PF_PATH }, { 0 } },
	[PROTO_COMMIT_NAME] = { "COMMIT_NAME", 0, { PF_JOB, PF_VERSION },
				{ 0 } },
	[PROTO_DRAIN] = { "DRAIN", 0, { PF_LEVEL }, { 0 } },
	[PROTO_DRAIN_NOW] = { "DRAIN_NOW", 0, { PF_JOB, PF_VERSION }, { 0 } },
	[PROTO_RELEASE] = { "RELEASE", 0, { 0 }, { 0 } },
	[PROTO_SETATTR] = { "SETATTR", 0, { PF_HANDLE, PF_PATH, PF_ATTR },
			    { 0 } },
	[PROTO_SETXATTR] = { "SETXATTR", 0,
			     { PF_HANDLE, PF_PATH, PF_BLOB, PF_ID }, { 0 } },
	[PROTO_GETXATTRS] = { "GETXATTRS", PT_LIST,
			      { PF_JOB, PF_VERSION, PF_PATH }, { 0 } },
	[PROTO_LIST_PARTS] = { "LIST_PARTS", PT_LIST,
			       { PF_JOB, PF_VERSION, PF_OFF }, { PF_SIZE } },
	[PROTO_LIST_NODES] = { "LIST_NODES", PT_LIST, { PF_OFF }, { PF_SIZE } },
	[PROTO_REBUILD] = { "REBUILD", 0, { 0 }, { 0 } },
	[PROTO_PLAN] = { "PLAN", PT_LIST, { PF_JOB, PF_VERSION, PF_OFF },
			 { PF_SIZE } },
	[PROTO_LINK] = { "LINK", 0, { PF_HANDLE, PF_PATH, PF_PATH2 }, { 0 } },
	[PROTO_SEEK_DATA] = { "SEEK_DATA", 0,
			      { PF_JOB, PF_VERSION, PF_PATH, PF_OFF, PF_SIZE },
			      { PF_OFF, PF_SIZE } },
};

/* Wire values: fixed once released. */
_Static_assert(PROTO_LIST_PARTS == 27 && PROTO_LIST_NODES == 28 &&
	       PROTO_REBUILD == 29 && PROTO_PLAN == 30 && PROTO_LINK == 31 &&
	       PROTO_SEEK_DATA == 32,
	       "proto type values");

/* Smallest encoding of one list entry: empty strings count as one byte,
 * since names are never empty. */
#define JOB_ENTRY_MIN     (2 + 1)
#define VERSION_ENTRY_MIN (2 + 1 + 2 + 1 + 8 * 4 + 4 * 8 + 2 + 4 * 3 + 8 * 3 + 2 + \
			   4 * 2 + 2 + 4 * 5 + 4 * 2 + 2)
#define FILE_ENTRY_MIN    (2 + 1 + 8 + 4 + ATTR_ENC_LEN + 8 + 4 + 8)
#define NODE_ENTRY_MIN    (2 + 1 + 2 + 4 * 2 + 8 * 4)
#define PLAN_ENTRY_MIN    (2 + 1 + 8 + 4 * 2 + 2 + 2)

/* The row for a wire type, or NULL if it is unknown or may not travel in
 * the direction its PROTO_REPLY bit says. */
static const struct ptype_desc *proto_type_desc(unsigned type)
{
	unsigned base = type & ~(unsigned)PROTO_REPLY;
	bool reply = type & PROTO_REPLY;
	const struct ptype_desc *t;

	if (base == 0 || base >= PROTO_NTYPES)
		return NULL;
	t = &proto_types[base];
	if (reply && (t->flags & PT_NO_REPLY))
		return NULL;
	if (!reply && (t->flags & PT_NO_REQ))
		return NULL;
	return t;
}

/* The field list a message of this type and status carries. */
static const uint8_t *proto_field_list(const struct ptype_desc *t,
				       unsigned type, int32_t status)
{
	static const uint8_t none[1] = { PF_END };

	if (!(type & PROTO_REPLY))
		return t->req;
	if (status != 0 && !(t->flags & PT_ERR_BODY))
		return none;
	return t->reply;
}

/* A reply has a list after its fields only when it succeeded. */
static bool proto_has_list(const struct ptype_desc *t, unsigned type,
			   int32_t status)
{
	return (type & PROTO_REPLY) && status == 0 && (t->flags & PT_LIST);
}

/* Set a decoder's error unless an earlier one is already recorded. */
static void dec_fail(struct dec *d, int err)
{
	if (!d->err)
		d->err = err;
}

/* Decode a name of at most max bytes and check it with check(). */
static void dec_name(struct dec *d, char *out, size_t max,
		     int (*check)(const char *))
{
	dec_str(d, out, max);
	if (!d->err && check(out))
		dec_fail(d, -CKPT_EBADNAME);
}

/* The same, in place (a field of struct proto_msg). */
static const char *dec_name_inplace(struct dec *d, size_t max,
				    int (*check)(const char *))
{
	const char *s = dec_str_inplace(d, max);

	if (!d->err && check(s))
		dec_fail(d, -CKPT_EBADNAME);
	return s;
}

/* CRC32C of a frame with its crc field taken as zero. */
static uint32_t proto_crc(const uint8_t *frame, size_t len)
{
	static const uint8_t zero[4];
	uint32_t crc;

	crc = crc32c_update(0, frame, HDR_CRC);
	crc = crc32c_update(crc, zero, sizeof(zero));
	return crc32c_update(crc, frame + PROTO_HDR_LEN, len - PROTO_HDR_LEN);
}

int proto_peek(const void *buf, size_t avail, struct proto_hdr *hdr)
{
	const uint8_t *p = buf;
	unsigned type;

	if (avail < PROTO_HDR_LEN)
		return -CKPT_EPROTO;
	if (get_le32(p + HDR_MAGIC) != PROTO_MAGIC)
		return -CKPT_EBADMAGIC;
	hdr->version = p[HDR_VERSION] | p[HDR_VERSION + 1] << 8;
	if (hdr->version != PROTO_VERSION)
		return -CKPT_EVERSION;
	type = p[HDR_TYPE] | p[HDR_TYPE + 1] << 8;
	hdr->type = type;
	hdr->len = get_le32(p + HDR_LEN);
	hdr->seq = get_le32(p + HDR_SEQ);
	hdr->status = (int32_t)get_le32(p + HDR_STATUS);
	hdr->crc = get_le32(p + HDR_CRC);
	if (!proto_type_desc(type) || hdr->len > PROTO_MAX_PAYLOAD)
		return -CKPT_EPROTO;
	/* Requests carry no status; replies carry 0 or a negative code. */
	if (type & PROTO_REPLY ? hdr->status > 0 : hdr->status != 0)
		return -CKPT_EPROTO;
	return 0;
}

void proto_enc_attr(struct enc *e, const struct ckpt_attr *a)
{
	enc_attr(e, a);
}

void proto_dec_attr(struct dec *d, struct ckpt_attr *a)
{
	dec_attr(d, a);
}

const uint8_t *proto_dec_blob(struct dec *d, uint32_t *len)
{
	uint32_t n = dec_u32(d);
	const uint8_t *p;

	*len = 0;
	if (d->err)
		return NULL;
	if (n > XATTR_MAX || n > dec_left(d)) {
		dec_fail(d, -CKPT_EPROTO);
		return NULL;
	}
	p = d->buf + d->pos;
	if (xattr_check(p, n)) {
		dec_fail(d, -CKPT_EPROTO);
		return NULL;
	}
	d->pos += n;
	*len = n;
	return p;
}

/* Check the value of a fixed field that has rules beyond its width. */
static int proto_check_field(unsigned f, const struct proto_msg *m)
{
	if (f == PF_LEN && (m->len == 0 || m->len > PROTO_MAX_IO))
		return -CKPT_EPROTO;
	if (f == PF_LEVEL && m->level > CKPT_DRAINED)
		return -CKPT_EPROTO;
	return 0;
}

/* Decode the fields in list from d into m. */
static int proto_dec_fields(struct dec *d, const uint8_t *list,
			    struct proto_msg *m)
{
	const struct pfield_desc *f;
	char *base = (char *)m;
	int ret;

	for (; *list != PF_END; list++) {
		f = &proto_fields[*list];
		switch (f->kind) {
		case PK_U32:
			*(uint32_t *)(base + f->off) = dec_u32(d);
			break;
		case PK_U64:
			*(uint64_t *)(base + f->off) = dec_u64(d);
			break;
		case PK_STR:
			*(const char **)(base + f->off) =
				dec_name_inplace(d, f->max, f->check);
			break;
		case PK_ATTR:
			proto_dec_attr(d, (struct ckpt_attr *)(base + f->off));
			break;
		case PK_BLOB:
			m->blob = proto_dec_blob(d, &m->blob_len);
			break;
		}
		if (d->err)
			return d->err;
		ret = proto_check_field(*list, m);
		if (ret)
			return ret;
	}
	return 0;
}

int proto_decode(void *frame, size_t len, struct proto_msg *m,
		 struct dec *rest)
{
	const uint8_t *p = frame;
	const struct ptype_desc *t;
	struct proto_hdr hdr;
	struct dec d;
	int ret;

	ret = proto_peek(frame, len, &hdr);
	if (ret)
		return ret;
	if (len != (size_t)hdr.len + PROTO_HDR_LEN)
		return -CKPT_EPROTO;
	if (proto_crc(p, len) != hdr.crc)
		return -CKPT_ECORRUPT;

	memset(m, 0, sizeof(*m));
	m->job = m->version = m->path = m->path2 = "";
	m->type = hdr.type;
	m->seq = hdr.seq;
	m->status = hdr.status;
	t = proto_type_desc(hdr.type);
	dec_init(&d, p + PROTO_HDR_LEN, hdr.len);
	ret = proto_dec_fields(&d, proto_field_list(t, hdr.type, hdr.status),
			       m);
	if (ret)
		return ret;
	if (!proto_has_list(t, hdr.type, hdr.status)) {
		if (dec_left(&d))
			return -CKPT_EPROTO;
	}
	if (rest)
		*rest = d;
	return 0;
}

void proto_begin(struct enc *e, void *buf, size_t cap,
		 const struct proto_msg *m)
{
	const struct pfield_desc *f;
	const struct ptype_desc *t;
	const char *base = (const char *)m;
	const uint8_t *list;

	enc_init(e, buf, cap);
	enc_u32(e, PROTO_MAGIC);
	enc_u16(e, PROTO_VERSION);
	enc_u16(e, m->type);
	enc_u32(e, 0);                  /* len, set by proto_finish() */
	enc_u32(e, m->seq);
	enc_u32(e, (uint32_t)m->status);
	enc_u32(e, 0);                  /* crc, set by proto_finish() */

	t = proto_type_desc(m->type);
	if (!t) {
		if (!e->err)
			e->err = -EINVAL;
		return;
	}
	for (list = proto_field_list(t, m->type, m->status); *list; list++) {
		f = &proto_fields[*list];
		switch (f->kind) {
		case PK_U32:
			enc_u32(e, *(const uint32_t *)(base + f->off));
			break;
		case PK_U64:
			enc_u64(e, *(const uint64_t *)(base + f->off));
			break;
		case PK_STR: {
			const char *s = *(const char *const *)(base + f->off);

			enc_strn(e, s ? s : "", f->max);
			break;
		case PK_ATTR:
			proto_enc_attr(e, (const struct ckpt_attr *)(base + f->off));
			break;
		case PK_BLOB:
			enc_u32(e, m->blob_len);
			enc_bytes(e, m->blob, m->blob_len);
			break;
		}
		}
	}
}

int proto_finish(struct enc *e)
{
	if (e->err)
		return e->err;
	if (e->len < PROTO_HDR_LEN ||
	    e->len - PROTO_HDR_LEN > PROTO_MAX_PAYLOAD)
		return -EMSGSIZE;
	put_le32(e->buf + HDR_LEN, (uint32_t)(e->len - PROTO_HDR_LEN));
	put_le32(e->buf + HDR_CRC, 0);
	put_le32(e->buf + HDR_CRC, proto_crc(e->buf, e->len));
	return (int)e->len;
}

int proto_encode(void *buf, size_t cap, const struct proto_msg *m)
{
	struct enc e;

	proto_begin(&e, buf, cap, m);
	return proto_finish(&e);
}

void proto_enc_version_entry(struct enc *e, const struct ckpt_version_info *v)
{
	enc_strn(e, v->job, CKPT_JOB_MAX);
	enc_strn(e, v->version, CKPT_VERSION_MAX);
	enc_u32(e, v->state);
	enc_u32(e, v->level);
	enc_u32(e, v->uid);
	enc_u32(e, v->writers);
	enc_u32(e, v->committed);
	enc_u32(e, v->nfiles);
	enc_u64(e, v->bytes);
	enc_u64(e, v->stored);
	enc_u64(e, v->seq);
	enc_u64(e, v->sealed_ns);
	enc_u32(e, (uint32_t)v->error);
	enc_u32(e, v->copies);
	enc_strn(e, v->reason, CKPT_REASON_MAX);
	enc_u32(e, v->stall_writers);
	enc_u64(e, v->stall_p50_ns);
	enc_u64(e, v->stall_p99_ns);
	enc_u64(e, v->stall_max_ns);
	enc_u32(e, v->slow_pid);
	enc_u32(e, (uint32_t)v->slow_rank);
	enc_strn(e, v->slow_host, CKPT_HOST_MAX);
	enc_u32(e, v->nparts);
	enc_u32(e, v->parts_sealed);
	enc_strn(e, v->node, CKPT_HOST_MAX);
	enc_u32(e, v->drain);
	enc_u32(e, (uint32_t)v->drain_error);
	enc_u32(e, v->drain_tries);
	enc_u32(e, v->drain_retry_ms);
	enc_u32(e, v->rm_part_pfs);
	enc_u32(e, v->shards);
	enc_u32(e, v->shards_up);
	enc_strn(e, v->holders, CKPT_HOLDERS_MAX);
}

void proto_dec_version_entry(struct dec *d, struct ckpt_version_info *v)
{
	dec_name(d, v->job, CKPT_JOB_MAX, name_check_job);
	dec_name(d, v->version, CKPT_VERSION_MAX, name_check_version);
	v->state = dec_u32(d);
	v->level = dec_u32(d);
	v->uid = dec_u32(d);
	v->writers = dec_u32(d);
	v->committed = dec_u32(d);
	v->nfiles = dec_u32(d);
	v->bytes = dec_u64(d);
	v->stored = dec_u64(d);
	v->seq = dec_u64(d);
	v->sealed_ns = dec_u64(d);
	v->error = (int32_t)dec_u32(d);
	v->copies = dec_u32(d);
	dec_str(d, v->reason, CKPT_REASON_MAX);
	v->stall_writers = dec_u32(d);
	v->stall_p50_ns = dec_u64(d);
	v->stall_p99_ns = dec_u64(d);
	v->stall_max_ns = dec_u64(d);
	v->slow_pid = dec_u32(d);
	v->slow_rank = (int32_t)dec_u32(d);
	dec_str(d, v->slow_host, CKPT_HOST_MAX);
	v->nparts = dec_u32(d);
	v->parts_sealed = dec_u32(d);
	dec_str(d, v->node, CKPT_HOST_MAX);
	v->drain = dec_u32(d);
	v->drain_error = (int32_t)dec_u32(d);
	v->drain_tries = dec_u32(d);
	v->drain_retry_ms = dec_u32(d);
	v->rm_part_pfs = dec_u32(d);
	v->shards = dec_u32(d);
	v->shards_up = dec_u32(d);
	dec_str(d, v->holders, CKPT_HOLDERS_MAX);
	if (v->shards_up > v->shards || v->shards > 31)
		dec_fail(d, -CKPT_EPROTO);
	if (v->rm_part_pfs > 1)
		dec_fail(d, -CKPT_EPROTO);
	if (v->state < CKPT_ST_OPEN || v->state > CKPT_ST_DAMAGED ||
	    v->level > CKPT_DRAINED || v->drain > CKPT_DS_RETIRED ||
	    v->drain_error > 0)
		dec_fail(d, -CKPT_EPROTO);
}

/* A path too long for the first release's path[] leaves it empty: never a
 * truncated path (see ckpt.h, "Long paths"). */
static void set_short_path(char short_path[CKPT_PATH_MAX + 1],
			   const char *name)
{
	size_t n = strlen(name);

	if (n > CKPT_PATH_MAX)
		n = 0;
	memcpy(short_path, name, n);
	short_path[n] = '\0';
}

void proto_enc_file_entry(struct enc *e, const struct ckpt_file_info *f)
{
	enc_strn(e, f->name ? f->name : f->path, CKPT_PATH_MAX2);
	enc_u64(e, f->size);
	enc_u32(e, f->extents);
	proto_enc_attr(e, &f->attr);
	enc_u64(e, f->ino);
	enc_u32(e, f->nlink);
	enc_u64(e, f->data);
	enc_u32(e, f->flags);
}

void proto_dec_file_entry(struct dec *d, struct ckpt_file_info *f,
			  char name[CKPT_PATH_MAX2 + 1])
{
	dec_name(d, name, CKPT_PATH_MAX2, name_check_path);
	set_short_path(f->path, d->err ? "" : name);
	f->name = name;
	f->size = dec_u64(d);
	f->extents = dec_u32(d);
	proto_dec_attr(d, &f->attr);
	f->ino = dec_u64(d);
	f->nlink = dec_u32(d);
	f->data = dec_u64(d);
	f->flags = dec_u32(d);
}

void proto_enc_node_entry(struct enc *e, const struct ckpt_node_info *n)
{
	enc_strn(e, n->name, CKPT_HOST_MAX);
	enc_strn(e, n->domain, CKPT_HOST_MAX);
	enc_u32(e, n->state);
	enc_u32(e, (uint32_t)n->last_error);
	enc_u64(e, n->since_ms_ago);
	enc_u64(e, n->heard_ms_ago);
	enc_u64(e, n->lag_ms);
	enc_u64(e, n->queued_bytes);
}

void proto_dec_node_entry(struct dec *d, struct ckpt_node_info *n)
{
	/* Node names are not job names: any bytes but NUL, as the node list
	 * allows (the node list's own parser checks them at start). */
	dec_str(d, n->name, CKPT_HOST_MAX);
	dec_str(d, n->domain, CKPT_HOST_MAX);
	n->state = dec_u32(d);
	n->last_error = (int32_t)dec_u32(d);
	n->since_ms_ago = dec_u64(d);
	n->heard_ms_ago = dec_u64(d);
	n->lag_ms = dec_u64(d);
	n->queued_bytes = dec_u64(d);
	if (n->state < CKPT_NODE_DOWN || n->state > CKPT_NODE_SELF ||
	    n->last_error > 0)
		dec_fail(d, -CKPT_EPROTO);
}

void proto_enc_plan_entry(struct enc *e, const struct ckpt_plan_entry *p)
{
	enc_strn(e, p->name ? p->name : p->path, CKPT_PATH_MAX2);
	enc_u64(e, p->size);
	enc_u32(e, p->source);
	enc_u32(e, p->sources);
	enc_strn(e, p->node, CKPT_HOST_MAX);
	enc_strn(e, p->why, CKPT_REASON_MAX);
}

void proto_dec_plan_entry(struct dec *d, struct ckpt_plan_entry *p,
			  char name[CKPT_PATH_MAX2 + 1])
{
	const uint32_t all = 1u << CKPT_SRC_LOCAL | 1u << CKPT_SRC_OWNER |
			     1u << CKPT_SRC_SHARDS | 1u << CKPT_SRC_PFS;

	dec_name(d, name, CKPT_PATH_MAX2, name_check_path);
	set_short_path(p->path, d->err ? "" : name);
	p->name = name;
	p->size = dec_u64(d);
	p->source = dec_u32(d);
	p->sources = dec_u32(d);
	dec_str(d, p->node, CKPT_HOST_MAX);
	dec_str(d, p->why, CKPT_REASON_MAX);
	if (p->source > CKPT_SRC_PFS || (p->sources & ~all) ||
	    (p->source != CKPT_SRC_NONE && !(p->sources & 1u << p->source)))
		dec_fail(d, -CKPT_EPROTO);
}

void proto_enc_status(struct enc *e, const struct ckpt_status *s)
{
	enc_u32(e, s->proto_version);
	enc_u32(e, s->clients);
	enc_u32(e, s->jobs);
	enc_u32(e, s->versions);
	enc_u32(e, s->open_versions);
	enc_u32(e, s->queue_depth);
	enc_u64(e, s->staging_total);
	enc_u64(e, s->staging_used);
	enc_u64(e, s->capacity);
	enc_u64(e, s->store_used);
	enc_u64(e, s->ingest_bytes);
	enc_u64(e, s->ingest_rate);
	enc_u64(e, s->uptime_ms);
	enc_u64(e, s->pid);
	enc_strn(e, s->store, sizeof(s->store) - 1);
	enc_u32(e, s->drain_queued);
	enc_u32(e, s->drain_running);
	enc_u32(e, s->drain_paused);
	enc_u32(e, s->drain_errors);
	enc_u64(e, s->drain_bytes);
	enc_u64(e, s->drain_rate);
	enc_u64(e, s->drain_bandwidth);
	enc_u32(e, (uint32_t)s->drain_last_error);
	enc_strn(e, s->drain_target, sizeof(s->drain_target) - 1);
	enc_strn(e, s->drain_last_path, sizeof(s->drain_last_path) - 1);
	enc_strn(e, s->node, sizeof(s->node) - 1);
	enc_u32(e, s->peers);
	enc_u32(e, s->peers_up);
	enc_u32(e, s->ec_k);
	enc_u32(e, s->ec_m);
	enc_u32(e, s->protect_queued);
	enc_u32(e, s->protect_done);
	enc_u32(e, s->protect_failures);
	enc_u64(e, s->protect_bytes);
	enc_u64(e, s->shards_held);
	enc_u64(e, s->shard_bytes);
	enc_u64(e, s->shards_bad);
	enc_strn(e, s->peers_lagging, sizeof(s->peers_lagging) - 1);
	enc_u32(e, s->rebuild_state);
	enc_u32(e, s->rebuild_parts);
	enc_u32(e, s->rebuild_parts_done);
	enc_u32(e, s->rebuild_parts_lost);
	enc_u64(e, s->rebuild_bytes);
	enc_u64(e, s->rebuild_bytes_done);
	enc_strn(e, s->rebuild_waiting, sizeof(s->rebuild_waiting) - 1);
	enc_u32(e, s->parts_degraded);
	enc_u32(e, s->reprotect_done);
	enc_u32(e, s->holders_replaced);
	enc_strn(e, s->protect_waiting, sizeof(s->protect_waiting) - 1);
	enc_u64(e, s->shard_reserved);
	enc_u32(e, s->shards_open);
	enc_u32(e, s->shards_refused_space);
	enc_u32(e, s->shards_dropped);
	enc_u64(e, s->shard_room);
	enc_u64(e, s->holder_reserve);
	enc_u32(e, s->parts_adopting);
	enc_u32(e, s->parts_adopted);
}

void proto_dec_status(struct dec *d, struct ckpt_status *s)
{
	s->proto_version = dec_u32(d);
	s->clients = dec_u32(d);
	s->jobs = dec_u32(d);
	s->versions = dec_u32(d);
	s->open_versions = dec_u32(d);
	s->queue_depth = dec_u32(d);
	s->staging_total = dec_u64(d);
	s->staging_used = dec_u64(d);
	s->capacity = dec_u64(d);
	s->store_used = dec_u64(d);
	s->ingest_bytes = dec_u64(d);
	s->ingest_rate = dec_u64(d);
	s->uptime_ms = dec_u64(d);
	s->pid = dec_u64(d);
	/* A directory, not a name: any bytes but NUL. */
	dec_str(d, s->store, sizeof(s->store) - 1);
	s->drain_queued = dec_u32(d);
	s->drain_running = dec_u32(d);
	s->drain_paused = dec_u32(d);
	s->drain_errors = dec_u32(d);
	s->drain_bytes = dec_u64(d);
	s->drain_rate = dec_u64(d);
	s->drain_bandwidth = dec_u64(d);
	s->drain_last_error = (int32_t)dec_u32(d);
	dec_str(d, s->drain_target, sizeof(s->drain_target) - 1);
	dec_str(d, s->drain_last_path, sizeof(s->drain_last_path) - 1);
	dec_str(d, s->node, sizeof(s->node) - 1);
	s->peers = dec_u32(d);
	s->peers_up = dec_u32(d);
	s->ec_k = dec_u32(d);
	s->ec_m = dec_u32(d);
	s->protect_queued = dec_u32(d);
	s->protect_done = dec_u32(d);
	s->protect_failures = dec_u32(d);
	s->protect_bytes = dec_u64(d);
	s->shards_held = dec_u64(d);
	s->shard_bytes = dec_u64(d);
	s->shards_bad = dec_u64(d);
	dec_str(d, s->peers_lagging, sizeof(s->peers_lagging) - 1);
	s->rebuild_state = dec_u32(d);
	s->rebuild_parts = dec_u32(d);
	s->rebuild_parts_done = dec_u32(d);
	s->rebuild_parts_lost = dec_u32(d);
	s->rebuild_bytes = dec_u64(d);
	s->rebuild_bytes_done = dec_u64(d);
	dec_str(d, s->rebuild_waiting, sizeof(s->rebuild_waiting) - 1);
	s->parts_degraded = dec_u32(d);
	s->reprotect_done = dec_u32(d);
	s->holders_replaced = dec_u32(d);
	dec_str(d, s->protect_waiting, sizeof(s->protect_waiting) - 1);
	s->shard_reserved = dec_u64(d);
	s->shards_open = dec_u32(d);
	s->shards_refused_space = dec_u32(d);
	s->shards_dropped = dec_u32(d);
	s->shard_room = dec_u64(d);
	s->holder_reserve = dec_u64(d);
	s->parts_adopting = dec_u32(d);
	s->parts_adopted = dec_u32(d);
}

void proto_enc_job_entry(struct enc *e, const char *job)
{
	enc_strn(e, job, CKPT_JOB_MAX);
}

void proto_dec_job_entry(struct dec *d, char job[CKPT_JOB_MAX + 1])
{
	dec_name(d, job, CKPT_JOB_MAX, name_check_job);
}

uint32_t proto_dec_list_count(struct dec *d, unsigned type)
{
	size_t min;
	uint32_t n;

	switch (type & ~(unsigned)PROTO_REPLY) {
	case PROTO_LIST_JOBS:
		min = JOB_ENTRY_MIN;
		break;
	case PROTO_LIST_VERSIONS:
	case PROTO_LIST_PARTS:
		min = VERSION_ENTRY_MIN;
		break;
	case PROTO_LIST_FILES:
		min = FILE_ENTRY_MIN;
		break;
	case PROTO_LIST_NODES:
		min = NODE_ENTRY_MIN;
		break;
	case PROTO_PLAN:
		min = PLAN_ENTRY_MIN;
		break;
	default:
		dec_fail(d, -CKPT_EPROTO);
		return 0;
	}
	n = dec_u32(d);
	if (d->err)
		return 0;
	if (n > dec_left(d) / min) {
		dec_fail(d, -CKPT_EPROTO);
		return 0;
	}
	return n;
}

const char *proto_type_name(unsigned type)
{
	unsigned base = type & ~(unsigned)PROTO_REPLY;

	if (base == 0 || base >= PROTO_NTYPES)
		return "UNKNOWN";
	return proto_types[base].name;
}
