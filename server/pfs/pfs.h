/*
 * pfs.h - the parallel file system side of the drain: copying one sealed
 * version out, and reading a drained one back.  Everything here runs on a
 * drain thread and blocks; nothing here touches the catalog.
 *
 * A copy works from a snapshot (struct pfs_job) taken on the loop thread:
 * the version's live files, its records and the fds of its segments, all
 * kept valid by the version reference the loop holds until the copy is
 * reported done.  Files are cut into pieces of a few chunks, copied by up to
 * opts->threads threads at once (the caller's and helpers the copy starts
 * and joins), so that a large file is copied by several and reads overlap
 * writes.  Each file is rebuilt chunk by chunk from its records (every
 * record CRC-checked as it is read, and read once), written under a
 * temporary name, fsync'd and renamed; the PFS manifest (pfsman.h) is
 * written last, so a version without one is never taken as drained.  Where
 * everything goes, who owns it and how it is reached is pfslayout.h's.
 * Files already published by an earlier, interrupted copy are listed in a
 * journal in the local store and not copied again.
 *
 * A version in parts (nparts > 1, written by several nodes of a cluster,
 * each node draining only its own part into the version's one directory):
 * the copy writes the part's manifest, its files only, as part.<node>
 * (pfslayout.h), not the manifest, and the node's part is drained (DRAINED)
 * once that is durable.  The version itself is published by pfs_publish():
 * the node whose name sorts first among the parts' nodes merges the part
 * manifests into the manifest once all nparts are there.  Until then the
 * version has no manifest, and no reader (pfs_load, pfs_scan) sees it.
 */
#ifndef CKPTD_PFS_H
#define CKPTD_PFS_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "bwlimit.h"
#include "manifest.h"
#include "pfsman.h"

struct pfs_opts {
	const char *target;       /* [drain] target */
	uint32_t chunk;           /* [drain] chunk */
	int compress;             /* zstd level or 0 */
	int shuffle;              /* 0, 2, 4 */
	int incremental;
	struct bwlimit *bw;       /* shared by every thread of every copy */
	unsigned threads;         /* [drain] threads: a copy's threads at most */
	int *spare;               /* or NULL: threads free to the drain's
				   * copies together (atomic; a copy takes
				   * what it runs, up to threads, and gives
				   * them back; with none free it runs on
				   * its caller's thread alone) */
	int direct;               /* read the segments through the job's
				   * (O_DIRECT) fds, records read ahead
				   * through io_uring, not buffered fds */
	const volatile int *pause;/* non-zero: wait between chunks */
	const volatile int *stop; /* non-zero: give up (-ECANCELED) */
};

struct pfs_job {
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char base[CKPT_VERSION_MAX + 1];  /* previous drained version, or "" */
	uint32_t uid;
	uint64_t seq, sealed_ns;
	uint32_t nfiles;
	struct man_file *files;   /* owned (paths owned) */
	uint32_t nrecs;
	struct man_rec *recs;     /* owned; file indices into files[] */
	int *fds;                 /* owned array (not the fds): the loop's
				   * segment fds, by segment id */
	uint32_t nfds;
	char segdir[600];         /* <store>/seg: the copy opens its own,
				   * buffered fds there for read-ahead */
	char journal[640];        /* <store>/drain/<seq>.journal */
	uint32_t nparts;          /* the version's parts (>= 1) */
	char node[64];            /* this node's name in the cluster, or "":
				   * with nparts > 1 the copy is a part's */
	char writer[64];          /* this node's name in the cluster, or "":
				   * the manifest's writer (pfsman.h) */
	/* results */
	uint64_t bytes_in;        /* bytes of the trainer's files */
	uint64_t bytes_out;       /* bytes written to the PFS */
	uint64_t bytes_direct;    /* of which written past the page cache */
	uint64_t bytes_ref;       /* bytes left to an earlier version */
	char failed_path[CKPT_PATH_MAX + 1];
	char clash_node[64];      /* -EEXIST: the node whose part also names
				   * failed_path (pfsnames.h) */
	int publish;              /* a part: pfs_publish()'s answer right
				   * after the part was written */
};

/* Copy job out to opts->target.  0 or -errno (job->failed_path names the
 * file when one is to blame). */
int pfs_copy(const struct pfs_opts *opts, struct pfs_job *job);
void pfs_job_free(struct pfs_job *job);

/* Read and verify a drained version's manifest: a regular file, valid
 * (pfsman_decode), of this job and version, owned on the PFS by the owner
 * it names (-EACCES otherwise), and claiming nothing that owner could not
 * have had ckptd write (-EPERM: a seq from PFS_SEQ_MAX on, attributes
 * attr_permitted() refuses, an xattr outside "user.").  0 or
 * -errno/-CKPT_E*. */
#define PFS_SEQ_MAX (1ull << 62)
int pfs_load(const char *target, const char *job, const char *version,
	     struct pfsman *out);
/* Read len bytes at off of file fi of drained version m into dst, every
 * chunk verified (and decompressed, and references followed).  Returns the
 * bytes read (short only at end of file) or -errno/-CKPT_ECORRUPT
 * (-EINVAL: m is stripped, pfsman_strip()). */
long pfs_read(const char *target, const struct pfsman *m, uint32_t fi,
	      uint64_t off, uint64_t len, void *dst);
/*
 * A version in parts: node `self` has drained its part (part.<self> is
 * durable); publish the version if that is self's to do and every part is
 * there.  The publisher is the node whose name sorts first among the parts
 * on the PFS; it merges the nparts part manifests (each must decode and be
 * of job, version and uid; no path may be in two parts, pfsman_merge())
 * into the version's manifest, written atomically (tmp, fsync, rename,
 * fsync of the directory).  Returns 0 (published now), 2 (found published:
 * by another node, or before a retry or restart), 1 (a node sorting
 * before self has its part there: publishing is that node's),
 * -EAGAIN (parts missing: ask again later), -CKPT_EPROTO (more parts than
 * nparts, or parts that do not agree), -EEXIST (two parts name one path),
 * -ESTALE (a part merged was set aside for removal while the manifest was
 * being written, pfs_remove_part(): the manifest did not go in), or
 * -errno.  The manifest keeps the seq of self's part.
 */
int pfs_publish(const char *target, const char *job, const char *version,
		uint32_t uid, uint32_t nparts, const char *self);
/* Read and verify node's part manifest of a version in parts, as
 * pfs_load() does a manifest; out->node is node. */
int pfs_load_part(const char *target, const char *job, const char *version,
		  const char *node, struct pfsman *out);
/* What tells one manifest file from another at one path: a manifest
 * replaced (renamed over) or rewritten in place has another stamp. */
struct pfs_stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};
/* pfs_load() (node "") or pfs_load_part(), and the stamp of the file read
 * into *stamp when not NULL. */
int pfs_load_stamped(const char *target, const char *job,
		     const char *version, const char *node,
		     struct pfsman *out, struct pfs_stamp *stamp);
/* The stamp of the manifest pfs_load_stamped() would read now: 0 or
 * -errno (-ENOENT: none there). */
int pfs_stamp(const char *target, const char *job, const char *version,
	      const char *node, struct pfs_stamp *stamp);
/* The PFS manifest a local copy is evicted for: the version's, or with
 * node (a version in parts) node's part manifest, but only once the
 * version is published (its manifest is there): until then a restart
 * would not find the part (pfs_scan() lists published versions), nor
 * would a version that never is published (a part refused, a node gone)
 * ever list it again.  -CKPT_EUNPUBLISHED then.  A part.<node> missing
 * from a published version, left as ptmp.<node> by a removal killed
 * midway (pfs_remove_part()), is put back here first. */
int pfs_load_evictable(const char *target, const char *job,
		       const char *version, const char *node,
		       struct pfsman *out);
/*
 * m, a version's manifest pfs_scan() found, as a node of a cluster (self,
 * its name) keeps it after a restart: if the version is in parts and one is
 * self's, self's part manifest (stripped, as pfs_scan() gives them)
 * replaces m, with m->node self and m->nparts the parts there, as a
 * runtime eviction keeps it (pfs_load_evictable()): this node then says
 * its own part is on the PFS, not the whole version (whose files and seal
 * are the other nodes' too).  The part keeps the version's base (the
 * parts' references share it; bases.h).  A part.<self> a removal killed
 * midway left set aside is put back first (as pfs_load_evictable() does).
 * 0 (replaced), 1 (m kept: not in parts, or one part alone there, one not
 * written by ckptd, or one of another incarnation), 2 (m kept, with
 * m->nparts the parts there: a version in parts of which self has none),
 * or -errno (m kept).  Worker threads, or the loop before it runs; blocking.
 */
int pfs_scan_own_part(const char *target, const char *self,
		      struct pfsman *m);
/*
 * Remove node's part of a version in parts from the PFS: its files,
 * part.<node> and name list, then the directories left empty.
 *
 * PFS_PART_PUBLISHED: the version may be published, and is unpublished
 * first (its manifest goes: without this part it would be torn).
 *
 * PFS_PART_UNPUBLISHED: the caller found no manifest, and must not remove
 * one published since (other nodes may have let their local copies go on
 * the strength of it).  part.<node> is set aside first (as ptmp.<node>)
 * and manifest.tmp removed, so that no publisher takes this part in from
 * then on; if the manifest is there after that, a publisher was faster:
 * part.<node> is put back, nothing is removed, and the answer is -EEXIST.
 * A publisher checks the parts between making manifest.tmp durable and
 * renaming it (pfs_publish(), -ESTALE), so no manifest is ever in place
 * without a part it was merged from.  A part.<node> missing from a
 * published version (a removal killed before it put it back) is put back
 * from ptmp.<node> by this and by pfs_load_evictable().
 */
enum pfs_part_rm { PFS_PART_PUBLISHED, PFS_PART_UNPUBLISHED };

int pfs_remove_part(const char *target, const char *job, const char *version,
		    const char *node, enum pfs_part_rm how);

/* Free what pfs_read() keeps per thread; call it before a thread ends.
 * Process-wide state: pfs_read() keeps, per worker thread (thread-local,
 * so never shared), one zstd context and one frame buffer, reused from read
 * to read because a chunk's buffers are large and readers are many. */
void pfs_thread_exit(void);
/* Remove a drained version from the PFS: the manifest first, then files,
 * then what else of ckptd's is in the version's directory (part manifests
 * of a version in parts, temporaries of any node), then the directories
 * left empty up to the version's.  0 or -errno. */
int pfs_remove(const char *target, const struct pfsman *m);

/* Call fn for every drained version found under target (laid out as
 * pfslayout.h says; anything else there is ignored, an invalid manifest
 * logged; a version in parts not yet published has no manifest and is
 * skipped; a uid's own manifests that would hold more than
 * PFS_CLAIM_BUDGET of memory in all are skipped and logged, pfs_i.h, and
 * those taken come stripped); fn owns the manifest it is given (keep it or
 * pfsman_release it).  Stops at the first non-zero fn result, which it
 * returns. */
int pfs_scan(const char *target, int (*fn)(void *arg, struct pfsman *m),
	     void *arg);

#endif
