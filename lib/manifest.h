/*
 * manifest.h - the on-disk manifest that seals one version's part on a node,
 * and the header block at the start of every store segment.
 *
 * A version's bytes live in append-only segment files as records: one record
 * is one piece a client wrote (a file, a file offset, a length), stored at a
 * 4 KiB-aligned offset of a segment, with the CRC32C of its bytes.  Records
 * are kept in write order; a later record wins where two overlap, which makes
 * random and overlapping writes within a file right.  A zero record
 * (seg MAN_SEG_ZERO, crc 0) stands for zeros: a truncate writes one over the
 * bytes it cuts, so that they read as zeros if the file grows again.  A
 * record may reach past its file's size; reads stop at the size.
 *
 * Manifest file layout (little-endian, strings as u16 length + bytes):
 *
 *   u64 magic        MANIFEST_MAGIC, "CKPTMAN1"
 *   u32 format       MANIFEST_FORMAT
 *   u32 flags        MAN_F_*; a bit this ckptd does not know is refused
 *                    (-CKPT_EVERSION), so a ckptd from before a flag
 *                    refuses the manifests that carry it
 *   u64 seq          commit order on this node (unique, increasing)
 *   u64 sealed_ns    CLOCK_REALTIME of the seal
 *   u64 open_id      the id in the header of every segment it uses: a
 *                    manifest whose segments say otherwise is stale
 *   u32 uid          owner of the job
 *   u32 level        highest durability level reached (LOCAL and up)
 *   u32 nparts       (format 3) parts the version has across the cluster's
 *                    nodes, as its writers said (1: one node alone)
 *   str job
 *   str version
 *   u32 nfiles
 *   u32 nrecords
 *   nfiles  x { str path; u64 size; attr; u32 xlen; xlen bytes; u32 link }
 *            attr (format 2 only): struct ckpt_attr as codec.h encodes it
 *                 (set says which fields mean anything)
 *            xlen, bytes (format 2 only): the extended attributes, a
 *                 blob as xattr.h packs it (at most XATTR_MAX)
 *            link (format 4): 0, or 1 + the index of an earlier entry
 *                 whose file this name is too (a hard link): that entry
 *                 is not a link itself, no record names this one, and its
 *                 size, attr and xattrs are the file's (this entry's
 *                 size and attr repeat them, xlen is 0)
 *   nrecords x { u32 file; u32 seg; u64 seg_off; u64 file_off; u32 len; u32 crc }
 *   holders (format 6 and 7): the part's holder record, struct man_holders:
 *            u32 k; u32 m; u32 gen; k + m - 1 x str name (the node holding
 *            shard 1, 2, ...; the node-name rule of nodes.h);
 *            format 7: str from; u64 from_id (the node whose part this
 *            one took over, and that part's open_id)
 *   u32 crc          CRC32C of every byte before it
 *
 * Formats: 7 is 6's with `from` after the holder names; it is written only
 * for a part taken over from a lost node (cluster/adopt.c), so that a ckptd
 * from before it refuses that manifest and reads every other.
 * 6 is 5's layout with the holder record after the records; it is
 * written only for a part that has one (erasure-coded across peers), so a
 * ckptd from before it refuses that manifest (-CKPT_EVERSION) and still
 * reads every other.  5 is 4's layout with paths up to CKPT_PATH_MAX2 (4095) bytes
 * instead of CKPT_PATH_MAX (1024); it is written only for a version that
 * has such a path, so that a ckptd before it refuses that manifest by its
 * format (-CKPT_EVERSION) and still reads every other.  4 (written since
 * hard links) adds link; 3 adds nparts; 2 adds attr to each
 * file entry and decodes with nparts = 1; 1 has no attr either, and decodes
 * with attr.set = 0 for every file.  All are read (with link 0 before 4);
 * only 4 and 5 are written (a level change rewrites an older manifest as 4).
 *
 * Ownership: manifest_decode() allocates m->files and m->recs;
 * manifest_release() frees them.  A struct manifest built by hand for
 * manifest_encode() may point at anything; encode does not take ownership.
 */
#ifndef CKPT_MANIFEST_H
#define CKPT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"

#define MANIFEST_MAGIC  0x314e414d54504b43ull /* "CKPTMAN1" */
#define MANIFEST_FORMAT 7        /* the record's `from` */
#define MANIFEST_FORMAT_V6 6     /* the holder record, no `from` */
#define MANIFEST_FORMAT_V5 5     /* paths up to CKPT_PATH_MAX2, no holders */
#define MANIFEST_FORMAT_V4 4     /* hard links; paths up to CKPT_PATH_MAX */
#define MANIFEST_FORMAT_V3 3     /* no links; still read */
#define MANIFEST_FORMAT_V2 2     /* no nparts; still read */
#define MANIFEST_FORMAT_V1 1     /* no file attributes either; still read */
#define MANIFEST_MAX_PARTS 4096  /* PLACE_MAX_NODES */
/* flags: [drain] keep removed the version's PFS copy, which its level no
 * longer claims; the next start does not drain it again (retain.c). */
#define MAN_F_RETIRED 0x1u
#define MAN_F_KNOWN   MAN_F_RETIRED
#define MANIFEST_MAX_FILES   (1u << 20)
#define MANIFEST_MAX_RECORDS (1u << 26)

struct man_file {
	char *path;              /* owned by the manifest when decoded */
	uint64_t size;           /* logical size of the file */
	struct ckpt_attr attr;   /* format 1: all 0 */
	uint8_t *xattr;          /* xattr.h blob, xlen bytes; owned by the
				  * manifest when decoded */
	uint32_t xlen;
	uint32_t link;           /* 0, or 1 + the entry this name shares a
				  * file with (format 4) */
	uint32_t nlink;          /* decode: the names of this entry's file
				  * (>= 1); not encoded */
};

/* The entry holding the bytes and attributes of m's entry fi: fi itself,
 * or the entry a hard link names. */
#define MAN_DATA(m, fi) \
	((m)->files[fi].link ? (m)->files[fi].link - 1 : (uint32_t)(fi))

/* A record in no segment: its bytes are zeros (what a truncate leaves). */
#define MAN_SEG_ZERO 0xffffffffu

struct man_rec {
	uint32_t file;           /* index into files[] */
	uint32_t seg;            /* segment id, or MAN_SEG_ZERO */
	uint64_t seg_off;        /* byte offset in the segment, 4 KiB aligned */
	uint64_t file_off;       /* byte offset in the file */
	uint32_t len;            /* bytes of data (stored padded to 4 KiB) */
	uint32_t crc;            /* CRC32C of the len bytes */
};

/* The bytes a record of len bytes takes in its segment (and in a buffer
 * it is read into whole): len padded to 4 KiB. */
static inline uint64_t man_padded(uint64_t len)
{
	return (len + 4095) & ~(uint64_t)4095;
}

/*
 * Where a part's shards are: the holder record.  The owner chose the nodes
 * (cluster/protect.c) and keeps shard 0; name[s - 1] holds shard s, for s
 * in 1..k+m-1.  gen grows each time the owner places a shard anew (a holder
 * replaced): of two records of one part, the one with the higher gen is the
 * newer.  Names, not node indexes: a record stays true when the node list
 * changes.
 */
#define MAN_HOLDERS_MAX 31       /* k + m - 1 at most (k + m <= 32) */
#define MAN_NODE_MAX    63       /* PLACE_NAME_MAX */
struct man_holders {
	uint32_t k, m;
	uint32_t gen;            /* >= 1 */
	char name[MAN_HOLDERS_MAX][MAN_NODE_MAX + 1];
	/* format 7: "" or the node that owned the part before this owner
	 * took it over (that owner lost or removed), and the open_id of its
	 * part: that part is this one, superseded */
	char from[MAN_NODE_MAX + 1];
	uint64_t from_id;
};

/* Is h a record decode would accept: k, m >= 1, k + m <= 32, gen >= 1, and
 * k + m - 1 node names (names.h, name_check_node), no two the same, and
 * from "" or a node name?  0 or
 * -CKPT_EPROTO / -CKPT_EBADNAME. */
int man_holders_check(const struct man_holders *h);

struct manifest {
	uint64_t seq;
	uint64_t sealed_ns;
	uint64_t open_id;        /* segment headers of this version carry it */
	uint32_t uid;
	uint32_t level;
	uint32_t flags;          /* MAN_F_* */
	uint32_t nparts;         /* format 3; older ones decode as 1; 0 is
				  * encoded as 1 */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t nfiles;
	uint32_t nrecs;
	struct man_file *files;
	struct man_rec *recs;
	struct man_holders *holders;  /* format 6; NULL: none (owned by the
				       * manifest when decoded) */
};

/* Bytes manifest_encode() needs for m. */
size_t manifest_size(const struct manifest *m);
/* Encode into buf (cap >= manifest_size(m)), in format 7 when m has a
 * holder record with `from`, 6 with one without, else 5 when a path needs
 * it, else 4.  Returns the length
 * or -EMSGSIZE (-EINVAL: a holder record man_holders_check refuses). */
long manifest_encode(const struct manifest *m, void *buf, size_t cap);
/* Decode and validate (formats 1 to 7): magic, format, CRC, counts, names
 * (names.h), record bounds (file index, alignment, no overflow), the holder
 * record (man_holders_check).  0 or -CKPT_EBADMAGIC,
 * -CKPT_EVERSION, -CKPT_ECORRUPT, -CKPT_EPROTO, -CKPT_EBADNAME, -ENOMEM. */
int manifest_decode(const void *buf, size_t len, struct manifest *m);
void manifest_release(struct manifest *m);
/* Best effort for a manifest that fails manifest_decode(): read only the
 * fixed head (seq, open_id, uid, job, version) with no CRC or length check,
 * so that recovery can say whose it was.  Allocates nothing (nfiles and
 * nrecs stay 0).  0, or -CKPT_EBADMAGIC / -CKPT_ECORRUPT if even the head
 * is unreadable. */
int manifest_peek(const void *buf, size_t len, struct manifest *m);

/*
 * Segment header: the first SEGHDR_SIZE bytes of each segment file, written
 * when a segment is given to an open version.  After a crash it names the
 * version a segment belonged to, so that an uncommitted version can be
 * reported as incomplete before its segments are recycled.
 *
 *   u64 magic SEGHDR_MAGIC "CKPTSEG1"; u32 format; u32 seg; u64 open_id;
 *   u32 uid; str job; str version; ... zero padding ...; u32 crc at
 *   SEGHDR_SIZE - 4 over the bytes before it.
 */
#define SEGHDR_MAGIC 0x3147455354504b43ull /* "CKPTSEG1" */
#define SEGHDR_SIZE  4096

struct seghdr {
	uint32_t seg;
	uint64_t open_id;
	uint32_t uid;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
};

/* Fill the SEGHDR_SIZE bytes at buf.  0 or -EMSGSIZE. */
int seghdr_encode(const struct seghdr *h, void *buf);
/* 0, or -CKPT_EBADMAGIC for a blank/foreign block, -CKPT_ECORRUPT, ... */
int seghdr_decode(const void *buf, struct seghdr *h);

#endif
