/*
 * pfsman.h - the manifest of a version drained to the parallel file system.
 *
 * A drained version is a directory on the PFS holding the version's files
 * under their own paths, and this manifest, written last: a version
 * directory without a valid manifest is not a drained version.  (Where the
 * directory, the files and the manifest are is the daemon's business,
 * server/pfs/pfslayout.h; format 2 is the layout where the manifest is beside
 * the tree of files, not in it, so any path is a valid file.)  The manifest lists every file and, per file, its
 * chunks (PFSMAN_CHUNK bytes of the file each, the last one shorter) with the
 * CRC32C of the chunk's bytes as the trainer wrote them, so that `ckptctl
 * verify` and every restore check each byte.
 *
 * A chunk is stored in one of four ways:
 *   PFS_RAW   the bytes, at the same offset of the same file (a plain drain:
 *             the file on the PFS is the file the trainer wrote)
 *   PFS_ZSTD  a zstd frame of stored bytes at file_off in the file (a
 *             compressed drain, optionally byte-shuffled first, see zip.h)
 *   PFS_REF   not stored here: identical to the chunk of the same path and
 *             index in version `base` (an incremental drain); stored, kind2
 *             and file_off then say how and where that version holds it, so a
 *             reader never follows more than one hop
 *   PFS_ZERO  all zeros; nothing stored
 *
 * Encoding (little-endian, str = u16 length + bytes; codec.h):
 *   u64 magic PFSMAN_MAGIC "CKPTPFS1"; u32 format; u32 flags (PFS_F_*);
 *   u64 seq; u64 sealed_ns; u64 drained_ns; u32 uid; u32 chunk (size);
 *   u32 shuffle (0, 2 or 4); str job; str version; str base ("" if none);
 *   [format 6: str writer]; u32 nfiles; u32 nchunks;
 *   nfiles x { str path; u64 size; u32 first; u32 count; attr;
 *              u32 xlen; xlen bytes; u32 link }
 *            attr, xlen and bytes (format 3 only): struct ckpt_attr as
 *            codec.h encodes it, and the extended attributes (xattr.h);
 *            a format-2 manifest decodes with attr.set = 0 and no xattrs
 *            link (format 4): 0, or 1 + the index of an earlier entry,
 *            not a link itself, whose file this name is too (a hard link
 *            on the PFS): it has no chunks (count 0) and no xattrs of its
 *            own; its size and attr repeat the file's
 *   nchunks x { u64 file_off; u32 len; u32 crc; u32 stored; u8 kind; u8 kind2 }
 *   u32 crc of everything before.
 *
 * Ownership: pfsman_decode() allocates files, chunks and their paths;
 * pfsman_release() frees them.  encode takes no ownership.
 */
#ifndef CKPT_PFSMAN_H
#define CKPT_PFSMAN_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"

#define PFSMAN_MAGIC  0x3153465054504b43ull /* "CKPTPFS1" */
#define PFSMAN_FORMAT 6  /* 6: 5 with the writer's node after base,
			  * written only by a node of a cluster (an older
			  * reader refuses it by format); 5: 4 with paths
			  * up to CKPT_PATH_MAX2, written only for a
			  * version that has such a path; 4: hard
			  * links, paths up to CKPT_PATH_MAX; 3: file
			  * attributes; 1: the layout with the manifest
			  * among the files (not read) */
#define PFSMAN_FORMAT_V5 5 /* paths up to CKPT_PATH_MAX2, no writer */
#define PFSMAN_FORMAT_V4 4 /* paths up to CKPT_PATH_MAX; written when
			    * every path fits it */
#define PFSMAN_FORMAT_V3 3 /* no links; still read */
#define PFSMAN_FORMAT_V2 2 /* no file attributes; still read */
#define PFSMAN_MAX_FILES  (1u << 20)
#define PFSMAN_MAX_CHUNKS (1u << 26)

enum pfs_kind { PFS_RAW = 1, PFS_ZSTD, PFS_REF, PFS_ZERO };

#define PFS_F_COMPRESSED  0x1  /* some chunks are PFS_ZSTD */
#define PFS_F_INCREMENTAL 0x2  /* some chunks are PFS_REF */

struct pfs_file {
	char *path;
	uint64_t size;
	uint32_t first;          /* index of its first chunk */
	uint32_t count;          /* chunks: ceil(size / chunk) */
	struct ckpt_attr attr;   /* as its writer set them; format 2: 0 */
	uint8_t *xattr;          /* xattr.h blob (owned when decoded) */
	uint32_t xlen;
	uint32_t link;           /* 0, or 1 + the entry whose file this name
				  * is too (format 4) */
	uint32_t nlink;          /* decode, merge: names of this entry's
				  * file (>= 1); not encoded */
};

/* The entry holding the chunks and attributes of m's entry fi. */
#define PFS_DATA(m, fi) \
	((m)->files[fi].link ? (m)->files[fi].link - 1 : (uint32_t)(fi))

struct pfs_chunk {
	uint64_t file_off;       /* where the stored bytes are in the file */
	uint32_t len;            /* bytes of the chunk in the trainer's file */
	uint32_t crc;            /* CRC32C of those bytes */
	uint32_t stored;         /* bytes stored (RAW: len; ZSTD: frame) */
	uint8_t kind;            /* enum pfs_kind */
	uint8_t kind2;           /* REF: how base stores it (RAW/ZSTD/ZERO) */
};

/* A run of chunks (indices into the table) holding no data: PFS_ZERO, or
 * a REF to one.  What pfsman_strip() keeps of the table. */
struct pfs_hole {
	uint32_t first, count;
};

struct pfsman {
	uint32_t flags;
	uint64_t seq;
	uint64_t sealed_ns;
	uint64_t drained_ns;
	uint32_t uid;
	uint32_t chunk;          /* chunk size, a multiple of 4096 */
	uint32_t shuffle;        /* element size of the byte shuffle, or 0 */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char base[CKPT_VERSION_MAX + 1];  /* version PFS_REF chunks are in */
	char writer[CKPT_HOST_MAX + 1];   /* the cluster node that drained
					   * it, "" if none (not a cluster,
					   * a merge, or format 5 and older):
					   * which node's version it is when
					   * no part.<node> says (drainscan.c) */
	uint32_t nfiles;
	uint32_t nchunks;
	struct pfs_file *files;
	struct pfs_chunk *chunks; /* NULL once stripped */
	/* not encoded: */
	struct pfs_hole *holes;   /* stripped: the runs without data, in
				   * order (NULL when there are none) */
	uint32_t nholes;
	int stripped;
	char node[CKPT_HOST_MAX + 1]; /* set by who loads it: the node whose
				   * part manifest this is, or "" */
	uint32_t nparts;         /* a part manifest pfs_scan_own_part() took,
				   * or a whole one of a version in parts it
				   * found none of its node's in: the parts
				   * of its version; else 0 */
};

/* The index of the entry named path (trying hint first), or -ENOENT. */
int pfsman_find(const struct pfsman *m, const char *path, uint32_t hint);
/*
 * The first run of data in [off, end) of entry fi of a decoded m (end
 * clipped to its size here), as extmap_data() gives it for a local copy:
 * *data and *len span whole chunks stored with bytes (RAW, ZSTD, or a REF
 * to those), cut to the range; ZERO chunks, and REFs to them, are holes.
 * 0 or -ENXIO.  Looks at the chunks in the range only, at most
 * EXTMAP_RUN_MAX of them, as extmap_data() does (past that many ZERO
 * chunks before any data, the next is answered as a run).
 */
int pfsman_data(const struct pfsman *m, uint32_t fi, uint64_t off,
		uint64_t end, uint64_t *data, uint64_t *len);
/* The bytes of entry fi's chunks stored with bytes (its data). */
uint64_t pfsman_file_data(const struct pfsman *m, uint32_t fi);
/*
 * Drop m's chunk table, keeping only where it has no data (m->holes), so
 * that a manifest kept for its files costs memory by files, not by bytes
 * (24 bytes a chunk: 6 MB a TB with 4 MiB chunks).  pfsman_find(),
 * pfsman_data() and pfsman_file_data() answer as before; nothing else may
 * be asked of a stripped manifest (pfs_read() needs the table: it loads
 * the manifest again).  0, or -ENOMEM with m unchanged.
 */
int pfsman_strip(struct pfsman *m);

size_t pfsman_size(const struct pfsman *m);
/* The memory m holds as decoded, or stripped (its tables, each path and
 * xattr blob as the allocation it is: heap.h), where pfsman_size() is its
 * encoded length: what budgets on kept manifests count (pfscache.c, the
 * start-up scan's claims in pfs.c).  A file of short names holds about
 * twice its encoded bytes. */
size_t pfsman_held(const struct pfsman *m);
/* The part of it that is m's paths and xattr blobs, each as the allocation
 * it is (what a copy of m's names holds too). */
size_t pfsman_names_held(const struct pfsman *m);
/* Length written, or -EMSGSIZE (-EINVAL: m is stripped). */
long pfsman_encode(const struct pfsman *m, void *buf, size_t cap);
/* Decode and validate everything: magic, format, CRC, counts against the
 * bytes present, names (names.h), each file's chunks (first/count inside
 * the table, count == ceil(size/chunk), lengths summing to size, kinds
 * known, REF only with a base, stored == len for RAW, 0 for ZERO).
 * Also enforced: the files' chunk ranges tile the table in file order
 * (first == the sum of the earlier counts); every chunk but a file's last
 * is exactly chunk bytes; ZSTD: 0 < stored < len; kind2 is 0 unless REF,
 * and a REF's kind2 is RAW, ZSTD or ZERO with stored to match; a ZSTD chunk
 * needs PFS_F_COMPRESSED and a REF PFS_F_INCREMENTAL (unknown flags:
 * -CKPT_EVERSION); base != version; paths unique.
 * 0 or -CKPT_EBADMAGIC, -CKPT_EVERSION, -CKPT_ECORRUPT, -CKPT_EPROTO,
 * -CKPT_EBADNAME, -ENOMEM. */
int pfsman_decode(const void *buf, size_t len, struct pfsman *m);
void pfsman_release(struct pfsman *m);

/*
 * The manifest of a version written in parts (one per cluster node, each
 * drained by its node with a manifest of its files only): the union of the
 * n parts, in the order given, into out (deep copies: release it with
 * pfsman_release()).  The parts must be of one job, version and uid and
 * have one chunk size and shuffle; a part with PFS_F_INCREMENTAL must have
 * the same base as every other such part.  out gets their flags or'd, the
 * largest sealed_ns and drained_ns, and the seq of parts[0] (the caller
 * may set its own).  0, -EINVAL (n == 0, or a part stripped),
 * -CKPT_EPROTO (the parts do not agree), -EEXIST (two parts name the same
 * path), -EFBIG (too many files or chunks) or -ENOMEM; out is zeroed on
 * error.  Takes no ownership.
 */
int pfsman_merge(const struct pfsman *parts, uint32_t n, struct pfsman *out);

#endif
