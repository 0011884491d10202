/*
 * proto.h - the wire protocol between libckpt and ckptd (and, later, between
 * peers).  This is its only definition; docs/design.md describes it for
 * humans.  Only proto.c touches raw frame bytes.
 *
 * A frame is a fixed 24-byte header followed by len payload bytes:
 *
 *   off size field
 *     0    4 magic    PROTO_MAGIC, "CKP1" little-endian
 *     4    2 version  PROTO_VERSION
 *     6    2 type     enum proto_type; replies set PROTO_REPLY
 *     8    4 len      payload bytes, at most PROTO_MAX_PAYLOAD
 *    12    4 seq      request id, echoed by the reply
 *    16    4 status   replies: 0 or a negative errno / CKPT_E* code
 *    20    4 crc      CRC32C of the header (crc field zero) and payload
 *
 * Every integer is little-endian.  A payload is a fixed sequence of fields
 * per type (see the table in proto.c): u32, u64, or a string (u16 length and
 * bytes, no NUL).  A decoder rejects a frame whose magic, version, type,
 * length or CRC is wrong, whose payload is short, has trailing bytes, or has
 * a string longer than its field allows or with a NUL in it.
 *
 * Replies that carry lists (versions, files, jobs) put a u32 count and the
 * entries after the fixed fields; see proto_enc_*_entry().  Lists are paged:
 * the request's off is the index of the first entry wanted, the reply's size
 * the total number of entries, and a reply holds as many entries as fit in
 * one frame (PROTO_LIST_BUDGET bytes).  The client asks again from
 * off + count until it has them all.
 *
 * Further rules the decoder enforces: a request has status 0 and a reply 0
 * or a negative code; a reply with a non-zero status has no payload, except
 * WACK, which always carries the id its status belongs to; WRITE is never a
 * reply and WACK never a request; WRITE/READ len is 1..PROTO_MAX_IO; a level
 * is at most CKPT_DRAINED; every job, version and path field present must
 * pass names.h (-CKPT_EBADNAME), so none may be empty.
 */
#ifndef CKPT_PROTO_H
#define CKPT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "codec.h"

#define PROTO_MAGIC       0x31504b43u /* "CKP1" */
/* 17: parts_adopting and parts_adopted in the status entry; 16: flags in file entries (CKPT_FILE_FAILED); 15: the holder's room in the status entry; 14: shards, shards_up and holders in version entries, the membership
 * fields in the status entry; 13: REMOVE carries a condition (PROTO_REMOVE_IF);
 * 12: the drain's state in version entries; 11: SEEK_DATA, data in file entries;
 * 10: paths up to CKPT_PATH_MAX2 (4095) bytes, was CKPT_PATH_MAX (1024);
 * 9: LINK, ino and nlink in file entries; 8: PLAN; 7: LIST_NODES; 6: BEGIN's nparts, LIST_PARTS; 5: COMMIT carries the writer's stall, version entries their sum; 4: file
 * attributes (SETATTR, attr in file entries); 3: the cluster in the status
 * entry; 2: copies and reason in version entries */
#define PROTO_VERSION     17
#define PROTO_HDR_LEN     24
#define PROTO_MAX_PAYLOAD (1u << 20)
#define PROTO_REPLY       0x8000
#define PROTO_RANK_NONE   0xffffffffu /* COMMIT: no rank in the environment */
#define PROTO_MAX_IO      (1ull << 30) /* largest WRITE/READ len */
/* REMOVE's id: the removal is conditional (ckpt_remove_if()); the low
 * bits are the CKPT_COPY_LOCAL and _QUARANTINE copies it must still hold,
 * and PROTO_REMOVE_PART_PFS says the caller saw rm_part_pfs set (the next
 * rm takes the part from the PFS too), which must still be so;
 * 0: unconditional (ckpt_remove()). */
#define PROTO_REMOVE_IF       0x80000000u
#define PROTO_REMOVE_PART_PFS 0x40000000u
#define PROTO_REMOVE_COPIES   (CKPT_COPY_LOCAL | CKPT_COPY_QUARANTINE)
/* Bytes of list entries ckptd puts in one reply: leaves room for the
 * largest single entry below PROTO_MAX_PAYLOAD. */
#define PROTO_LIST_BUDGET (PROTO_MAX_PAYLOAD - 8192)

enum proto_type {
	PROTO_HELLO = 1,     /* c->s: staging wanted; s->c: lease (+memfd) */
	PROTO_BEGIN,         /* job, version, uid, nparts -> handle */
	PROTO_WRITE,         /* handle, path, off, len, ring_off, id; async */
	PROTO_WACK,          /* s->c only: id, status of one WRITE */
	PROTO_COMMIT,        /* handle, stall, stall_staging, rank */
	PROTO_ABORT,         /* handle */
	PROTO_WAIT,          /* job, version, level */
	PROTO_LATEST,        /* job, level -> version */
	PROTO_READ,          /* job, version, path, off, len, ring_off -> size */
	PROTO_LIST_JOBS,     /* off -> size (total), count, job names */
	PROTO_LIST_VERSIONS, /* job, off -> size (total), count, entries */
	PROTO_LIST_FILES,    /* job, version, off -> size, count, entries */
	PROTO_STAT,          /* job, version -> one version entry */
	PROTO_REMOVE,        /* job, version, id, off, aux: with
			      * PROTO_REMOVE_IF in id, only if the version
			      * still has seq off, sealed_ns aux, the copies
			      * in id's low bits and rm_part_pfs as id's
			      * PROTO_REMOVE_PART_PFS says (13) */
	PROTO_STATUS,        /* -> status entry */
	PROTO_TRUNCATE,      /* handle, path, size */
	PROTO_UNLINK,        /* handle, path */
	PROTO_RENAME,        /* handle, path (from), path2 (to) */
	PROTO_STAT_FILE,     /* job, version, path -> one file entry */
	PROTO_COMMIT_NAME,   /* job, version: commit for every writer */
	PROTO_DRAIN,         /* level = CKPT_DRAIN_PAUSE or _RESUME */
	PROTO_DRAIN_NOW,     /* job, version: drain it next */
	PROTO_RELEASE,       /* give the staging lease back (or cancel a
			      * HELLO still waiting); the connection stays */
	PROTO_SETATTR,       /* handle, path, attr */
	PROTO_SETXATTR,      /* handle, path, blob (one xattr.h record), id
			      * (1: remove the record's name) */
	PROTO_GETXATTRS,     /* job, version, path -> u32 len + an xattr.h
			      * blob after the fields */
	PROTO_LIST_PARTS,    /* job, version, off -> the version's parts
			      * across the cluster, as version entries */
	PROTO_LIST_NODES,    /* off -> size (total), count, node entries:
			      * the cluster's nodes as this one sees them */
	PROTO_REBUILD,       /* (7) start rebuilding this node's parts */
	PROTO_PLAN,          /* (8) job, version, off -> size (total),
			      * count, plan entries: where each file would
			      * be read from */
	PROTO_LINK,          /* (9) handle, path (existing), path2 (the new
			      * name): a hard link */
	PROTO_SEEK_DATA,     /* (11) job, version, path, off, size (bytes of
			      * the range, UINT64_MAX: to the end) -> off,
			      * size: the first run of data in the range;
			      * -ENXIO if none (holes read as zeros) */
	PROTO_NTYPES
};

/*
 * A view of the fixed fields of any message.  Which fields a type carries
 * is given by the table in proto.c; the others are left zero (strings
 * "").  The struct is small (about 100 bytes), so callers keep it on the
 * stack.
 *
 * Strings are NUL-terminated and are not copied: proto_decode() rewrites
 * each one in place in the frame (over its length prefix) and points the
 * field at it, so a decoded string lives as long as the frame's buffer is
 * left alone.  Whoever keeps a request beyond the frame (a deferred read, a
 * task) copies the strings it needs.  To encode, point them at the
 * caller's strings; NULL encodes as "".
 */
struct proto_msg {
	uint16_t type;           /* enum proto_type, | PROTO_REPLY for replies */
	uint32_t seq;
	int32_t status;
	uint32_t handle;         /* writer handle from BEGIN */
	uint32_t level;          /* enum ckpt_level */
	uint32_t id;             /* WRITE id echoed by WACK */
	uint64_t off;            /* file offset */
	uint64_t len;            /* byte count */
	uint64_t ring_off;       /* offset in the client's staging lease */
	uint64_t size;           /* HELLO: staging bytes; READ reply: bytes
				  * read; SEEK_DATA: bytes of the range, of
				  * the run */
	uint64_t aux;            /* HELLO reply: largest write piece */
	uint32_t uid;            /* BEGIN: owner, CKPT_UID_SELF = the caller */
	uint64_t stall;          /* COMMIT: ns this writer's writes were
				  * blocked (lease wait + ring full) */
	uint64_t stall_staging;  /* COMMIT: of which ns waiting for staging */
	uint32_t nparts;         /* BEGIN: parts (nodes) the version has,
				  * 0 = as the first writer said, else 1 */
	uint32_t rank;           /* COMMIT: the writer's rank, or
				  * PROTO_RANK_NONE */
	const char *job;
	const char *version;
	const char *path;
	const char *path2;       /* RENAME, LINK: the new path */
	struct ckpt_attr attr;   /* SETATTR: the fields attr.set names */
	const uint8_t *blob;     /* SETXATTR: blob_len bytes, a view */
	uint32_t blob_len;
};

/* Fields of the header, decoded. */
struct proto_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t len;
	uint32_t seq;
	int32_t status;
	uint32_t crc;
};

/*
 * Check the first PROTO_HDR_LEN bytes of a frame: magic, version, a known
 * type and len <= PROTO_MAX_PAYLOAD.  0, -CKPT_EBADMAGIC, -CKPT_EVERSION or
 * -CKPT_EPROTO.  The CRC is checked by proto_decode() once the payload is in.
 */
int proto_peek(const void *buf, size_t avail, struct proto_hdr *hdr);

/*
 * Decode a whole frame (header and payload, hdr->len + PROTO_HDR_LEN bytes)
 * into m.  The fixed fields of the type are decoded, the strings in place
 * (see struct proto_msg: the frame is changed, once its CRC checked, and m
 * points into it); for list replies, *rest (if not NULL) is left positioned
 * at the list.  Returns 0 or a negative CKPT_E* code; m is undefined on
 * error, and the frame's header is intact either way.
 */
int proto_decode(void *frame, size_t len, struct proto_msg *m,
		 struct dec *rest);

/*
 * Encode m's fixed fields as a frame of m->type into buf (cap bytes),
 * starting the payload after the header.  The caller may append list entries
 * through *e before proto_finish() fills in the length and CRC.
 * proto_finish() returns the frame length, or -EMSGSIZE.
 */
void proto_begin(struct enc *e, void *buf, size_t cap,
		 const struct proto_msg *m);
int proto_finish(struct enc *e);
/* proto_begin + proto_finish, for messages without a list. */
int proto_encode(void *buf, size_t cap, const struct proto_msg *m);

/* List entries of replies. */
void proto_enc_version_entry(struct enc *e, const struct ckpt_version_info *v);
void proto_dec_version_entry(struct dec *d, struct ckpt_version_info *v);
/* A file entry: path (a checked path, up to CKPT_PATH_MAX2 bytes); u64
 * size; u32 extents; attr; u64 ino; u32 nlink; u64 data (version 11).
 * The encoder takes the path from f->name, or f->path when name is NULL.
 * The decoder writes the path into name (the caller's), points f->name at
 * it, and copies it into f->path when it fits CKPT_PATH_MAX ("" when it
 * does not). */
void proto_enc_file_entry(struct enc *e, const struct ckpt_file_info *f);
void proto_dec_file_entry(struct dec *d, struct ckpt_file_info *f,
			  char name[CKPT_PATH_MAX2 + 1]);
/* A struct ckpt_attr: u32 set, mode, uid, gid; u64 atime_ns, mtime_ns,
 * ctime_ns.  The decoder refuses unknown set bits and mode bits beyond
 * 07777 (-CKPT_EPROTO). */
void proto_enc_attr(struct enc *e, const struct ckpt_attr *a);
void proto_dec_attr(struct dec *d, struct ckpt_attr *a);
/* A u32 length and that many bytes of a checked xattr.h blob: a view into
 * the decoder's buffer (-CKPT_EPROTO in d->err if bad). */
const uint8_t *proto_dec_blob(struct dec *d, uint32_t *len);
/* A LIST_NODES entry: name, domain (str, up to CKPT_HOST_MAX); u32
 * state, last_error; u64 since_ms_ago, heard_ms_ago, lag_ms,
 * queued_bytes.  The decoder refuses a state out of enum ckpt_node_state
 * or a positive last_error (-CKPT_EPROTO). */
void proto_enc_node_entry(struct enc *e, const struct ckpt_node_info *n);
void proto_dec_node_entry(struct dec *d, struct ckpt_node_info *n);
/* A PLAN entry: path (a checked path, from and to name and path as for
 * file entries); u64 size; u32 source, sources;
 * node, why (str, up to CKPT_HOST_MAX and CKPT_REASON_MAX).  The decoder
 * refuses a source out of enum ckpt_source, or sources with other bits
 * (-CKPT_EPROTO). */
void proto_enc_plan_entry(struct enc *e, const struct ckpt_plan_entry *p);
void proto_dec_plan_entry(struct dec *d, struct ckpt_plan_entry *p,
			  char name[CKPT_PATH_MAX2 + 1]);
void proto_enc_status(struct enc *e, const struct ckpt_status *s);
void proto_dec_status(struct dec *d, struct ckpt_status *s);
/* A LIST_JOBS entry: one job name (validated with name_check_job()). */
void proto_enc_job_entry(struct enc *e, const char *job);
void proto_dec_job_entry(struct dec *d, char job[CKPT_JOB_MAX + 1]);
/*
 * Read the u32 count that opens the list of a LIST_JOBS, LIST_VERSIONS,
 * LIST_FILES, LIST_PARTS, LIST_NODES or PLAN reply (type, with or without PROTO_REPLY).  Sets d->err to
 * -CKPT_EPROTO and returns 0 if the bytes left cannot hold that many entries
 * of the smallest possible size, so a caller may size an allocation by it.
 */
uint32_t proto_dec_list_count(struct dec *d, unsigned type);

const char *proto_type_name(unsigned type);

#endif
