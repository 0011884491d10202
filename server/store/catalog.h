/*
 * catalog.h - the jobs and versions this node holds, in memory, and their
 * manifests on disk.
 *
 * A job owns its versions; a version owns its file table, its records (the
 * extent index) and the segments its records live in.  A version is
 * reference counted: in-flight disk operations, reads and the catalog each
 * hold one, so that a version removed while a read is running is freed (and
 * its segments recycled) only when the read completes.
 *
 * Durability: a version is committed when its manifest, <store>/man/<seq>.man,
 * is durable (written to a temporary name, fsync'd, renamed, directory
 * fsync'd).  At start-up catalog_open() hands the store to recovery
 * (recover.h), which loads every manifest whose segments check out, moves
 * what fails a check to quarantine (listed DAMAGED), and lists versions that
 * provably never committed as INCOMPLETE.
 *
 * Threads: the loop thread only, except catalog_manifest_store(), which a
 * pool worker runs (it reads nothing but the store's paths, fixed at open).
 */
#ifndef CKPTD_CATALOG_H
#define CKPTD_CATALOG_H

#include <stdint.h>
#include <sys/types.h>

#include "ckpt.h"
#include "extmap.h"
#include "heap.h"
#include "htab.h"
#include "list.h"
#include "manifest.h"
#include "pfsman.h"
#include "segs.h"

struct vfile {
	char *path;               /* owned */
	uint64_t size;            /* logical size: furthest write, or truncate */
	uint64_t data_end;        /* end of the furthest data record not yet
				   * covered by a truncate's zero record */
	uint32_t nrecs;
	uint64_t stored;          /* bytes of its data records (rewrites
				   * counted again); remote: of its PFS chunks
				   * stored with bytes */
	int dead;                 /* unlinked (or renamed over): not listed */
	uint32_t link;            /* a hard link: 1 + the index of the entry
				   * holding its file (records, size, attr,
				   * xattrs: this entry's own are unused);
				   * 0: this entry holds its file */
	uint32_t nlink;           /* a holder: its live names, itself
				   * included (>= 1 while it is live) */
	struct ckpt_attr attr;    /* SETATTR, kept in the manifest */
	uint8_t *xattr;           /* SETXATTR: an xattr.h blob, owned */
	uint32_t xlen;
};

struct version {
	struct list link;         /* in job->versions: sealed ones by seq */
	struct hnode hnode;       /* in job->vidx, by name */
	struct job *job;
	char name[CKPT_VERSION_MAX + 1];
	char jobname[CKPT_JOB_MAX + 1];   /* job's name and uid, kept once */
	uint32_t uid;                     /* removed (job NULL) */
	uint32_t state;           /* enum ckpt_state */
	uint32_t level;           /* enum ckpt_level reached: STAGED while
				   * sealing, then what its copies give */
	uint32_t copies;          /* CKPT_COPY_*: the copies it has (set by
				   * version_set_copies() only) */
	int32_t error;            /* 0, or why it FAILED */
	uint32_t nparts;          /* parts (nodes) the version has across the
				   * cluster, as its writers said: >= 1 */
	uint32_t writers;         /* writers that joined */
	uint32_t committed;       /* writers that committed */
	uint64_t seq;             /* commit order; 0 until sealing */
	uint64_t sealed_ns;
	uint64_t open_id;         /* written into segment headers */
	uint64_t stored;          /* bytes written to segments */
	struct man_holders *holders; /* where its shards are (the cluster's
				   * holder record, kept in its manifest):
				   * owned, NULL until protected once */
	uint32_t refs;
	int removed;              /* no longer in the catalog */
	int removing;             /* an rm's disk work runs on the pool
				   * (remove.c): no other rm, retention,
				   * eviction, drain copy or level change */

	struct vfile *files;      /* owned array, dead entries included */
	uint32_t nfiles, cfiles;
	uint32_t nlive;           /* files not dead */
	uint32_t *fhash;          /* open addressing: file index + 1, or 0 */
	uint32_t hcap;
	struct man_rec *recs;     /* in the order writes arrived */
	uint32_t nrecs, crecs;
	uint32_t *segs;           /* segments owned, in order of use */
	uint32_t nsegs, csegs;
	uint64_t tail;            /* next free byte in the last segment */

	uint32_t inflight;        /* disk operations in flight */
	uint32_t pending;         /* seal steps still running */
	struct list waiters;      /* owned by session.c: struct waiter */
	struct list deferred;     /* owned by reader.c: reads waiting for
				   * the writes in flight (open versions) */
	struct extmap *rindex;    /* owned by rindex.c: the read index, one
				   * map per file entry (a holder's has its
				   * records), made at the first read and
				   * brought up to date by each later one;
				   * NULL before (version_drop_index()) */
	uint32_t nrindex;         /* maps in rindex (>= nfiles then) */
	uint32_t rapplied;        /* records recs[0 .. rapplied) are in
				   * rindex; the rest are applied at the
				   * next read, so that appends stay O(1) */
	struct list levelq;       /* owned by level.c: level changes whose
				   * manifest write is in flight (the first)
				   * or waits behind it */

	/* drain.c's state; a remote version is on the PFS only */
	uint32_t ordinal;         /* 1.. in its job's seal order ([drain] every) */
	uint8_t drain;            /* enum drain_state (drain.h) */
	uint8_t drain_now;        /* ckptctl drain --now: first, never skipped */
	uint8_t pfs_retired;      /* [drain] keep removed its PFS copy: never
				   * drained again (its manifest carries
				   * MAN_F_RETIRED while below DRAINED) */
	uint32_t drain_tries;
	uint64_t drain_due_ms;    /* next attempt, ckptd_now_ms() */
	int32_t drain_err;
	uint8_t publish;          /* a version in parts: enum drain_publish */
	uint8_t rm_asked;         /* an rm of this part was refused, its
				   * version not published: the next one
				   * removes it from the PFS too (remove.h) */
	uint8_t pfs_whole;        /* a version in parts whose manifest the
				   * PFS scan found at start: every part is
				   * drained (plan.h reads the other nodes'
				   * parts from there) */
	uint8_t no_part;          /* remote: the whole manifest of a version
				   * in parts of which this node holds none,
				   * or of another node's version of one
				   * part (pfs->writer; drainscan.c): not
				   * announced to peers, who hold or list
				   * its parts (parts.c) */
	uint32_t publish_tries;
	uint64_t publish_due_ms;  /* next check, ckptd_now_ms() */
	int32_t publish_err;      /* the last check's error, 0 if none (or
				   * only parts missing) */
	struct pfsman *pfs;       /* remote: its PFS manifest, owned,
				   * stripped (pfsman_strip(): files and
				   * holes; reads load the chunk table,
				   * pfscache.h) */
	char base[CKPT_VERSION_MAX + 1];  /* incremental base on the PFS */

	/* recovery: a local copy that failed a check at start-up */
	char *qdir;               /* its quarantine directory (a name under
				   * <store>/quarantine), owned, or NULL */
	char reason[CKPT_REASON_MAX + 1]; /* what failed, for listings */

	struct vstats *vstats;    /* owned by vstats.c: seal time, writer
				   * stalls; NULL until first needed */
};

/*
 * The memory a remote version made from m holds beside m itself
 * (catalog_add_remote()): the struct version, its file table and path
 * hash as vfiles.c grows them (doubling: the table from 8 entries, catalog_grow(); the hash from
 * 16 slots, kept at least twice the entries, vfile_add()), and its copies
 * of the paths and xattrs.  With pfsman_held() of m stripped, what keeping
 * m costs (the start-up scan's claim budget, pfs.c).  Inline, beside the
 * struct it counts, so that pfs.c needs no catalog code.
 */
static inline size_t catalog_remote_held(const struct pfsman *m)
{
	size_t cap = 8, hcap = 16;

	while (cap < m->nfiles)
		cap *= 2;
	while (hcap < (size_t)m->nfiles * 2)
		hcap *= 2;
	/* The job's index of names holds at most two buckets a version. */
	return heap_held(sizeof(struct version)) + 2 * sizeof(struct hnode *) +
	       heap_held(cap * sizeof(struct vfile)) +
	       heap_held(hcap * sizeof(uint32_t)) + pfsman_names_held(m);
}

struct job {
	struct list link;         /* in catalog->jobs */
	struct hnode hnode;       /* in catalog->jobidx, by name */
	char name[CKPT_JOB_MAX + 1];
	uid_t uid;                /* owner */
	struct list versions;
	struct htab vidx;         /* its versions by name (name_hash) */
	uint32_t nversions;
	uint32_t nsealed;         /* versions sealed so far (ordinals) */
};

struct pool;

struct catalog {
	struct list jobs;
	struct htab jobidx;       /* jobs by name (name_hash) */
	struct segs *segs;
	char mandir[600];         /* <store>/man */
	char qdir[600];           /* <store>/quarantine */
	char rmlog[600];          /* <store>/removed: open_ids of versions
				   * whose manifest was removed on purpose */
	uint64_t next_seq;
	uint64_t next_open_id;
	uint32_t nversions;
	uint32_t nopen;
	int loading;              /* catalog_load_begin(): lists unordered */
	uint64_t removals;        /* versions taken out so far (a scan of the
				   * PFS on the pool knows whether one went
				   * while it ran) */
	/* Worker threads for manifest drops by retention and eviction (set
	 * once the pool is up, cleared before it closes); NULL: on the loop. */
	struct pool *pool;
};

/* <store>/man/<seq in hex>.<ext>: the manifest ("man") of the version
 * sealed as seq, or its temporary ("tmp"). */
void catalog_man_path(const struct catalog *cat, uint64_t seq,
		      const char *ext, char *buf, size_t cap);

/* Load the store at store (creating <store>/man and <store>/quarantine)
 * over segs, through recover_store().  0 or -errno. */
int catalog_open(struct catalog *cat, const char *store, struct segs *segs);
void catalog_close(struct catalog *cat);
/* Versions the PFS scan finds come in readdir()'s order: between these two
 * the catalog adds them at the ends of their jobs' lists (placing each by
 * seq is a walk of the list), and catalog_load_end() orders every job's
 * list by seq once.  Nothing may walk a job's list for its order between
 * them. */
void catalog_load_begin(struct catalog *cat);
void catalog_load_end(struct catalog *cat);

struct job *catalog_job(struct catalog *cat, const char *name);
struct version *catalog_version(struct catalog *cat, const char *job,
				const char *name);
/* Create a new OPEN version (and its job if needed) owned by uid.  0, or
 * -ENOMEM. */
int catalog_create(struct catalog *cat, const char *job, const char *name,
		   uid_t uid, struct version **out);

/* v will never reach another level: FAILED, INCOMPLETE or DAMAGED. */
static inline int version_dead(const struct version *v)
{
	return v->state == CKPT_ST_FAILED || v->state == CKPT_ST_INCOMPLETE ||
	       v->state == CKPT_ST_DAMAGED;
}

/* The level a sealed version's copies give it. */
static inline uint32_t copies_level(uint32_t copies)
{
	if (copies & CKPT_COPY_PFS)
		return CKPT_DRAINED;
	if ((copies & CKPT_COPY_LOCAL) && (copies & CKPT_COPY_PEERS))
		return CKPT_PROTECTED;
	if (copies & CKPT_COPY_LOCAL)
		return CKPT_LOCAL;
	return CKPT_NONE;
}

/* Record the copies v has and the level they give.  Changes of a sealed
 * version go through version_reach() (level.h), which persists them first;
 * the catalog calls this directly only for what it finds (recovery, the
 * PFS scan) and for eviction, whose manifest drop is its own record. */
static inline void version_set_copies(struct version *v, uint32_t copies)
{
	v->copies = copies;
	v->level = copies_level(copies);
}

/* Sealed without a local copy: served from its PFS copy (v->pfs). */
static inline int version_remote(const struct version *v)
{
	return v->state == CKPT_ST_SEALED && !(v->copies & CKPT_COPY_LOCAL);
}

static inline void version_get(struct version *v)
{
	v->refs++;
}
void version_put(struct catalog *cat, struct version *v);

/* Grow *arr (of *cap elements of elem bytes) to hold need: the capacity
 * doubles.  0 or -ENOMEM (*arr unchanged).  For the catalog's files. */
int catalog_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem);

/* Free v's read index (v->rindex), if any: the next read makes it anew.
 * Whoever drops or reorders records (not appends) calls it. */
void version_drop_index(struct version *v);
/*
 * A version's files and records (vfiles.c, except version_reserve()).
 *
 * Hard links.  A file's first name holds the file (its records, size,
 * attributes); each later name given by version_link() is an entry of its
 * own whose `link` points at the holder.  Unlinking the holder while other
 * names live hands the holder's entry the path of one of them (that name's
 * entry dies instead), so that a holder is live exactly as long as the
 * file has a name, and a link always points at an earlier, live entry.
 */
/* The entry holding the file of entry fi. */
static inline uint32_t vfile_data(const struct version *v, uint32_t fi)
{
	return v->files[fi].link ? v->files[fi].link - 1 : fi;
}
/* Can v be committed as it stands, its drain and restore make every name
 * in it?  Checked when the last writer commits (ops.c): -ENOTDIR where a
 * live name is a file and not a directory's entry while others are below
 * it ("a" and "a/b"); for a symbolic link's target (its bytes),
 * -ENAMETOOLONG past CKPT_PATH_MAX2 bytes and -EINVAL when empty or
 * holding a hole at its end; -EISDIR for a directory's entry holding
 * bytes; -EPERM for a hard link to a directory's entry.  *bad:
 * the entry at fault.  Cost: one lookup per '/' in each live name. */
int version_check(const struct version *v, uint32_t *bad);
/* The entry holding the file path names in v (resolving a hard link),
 * added as a new empty file if create.  -ENOENT, -ENOMEM. */
int version_file(struct version *v, const char *path, int create);
/* The entry of the name path itself (a hard link's own entry): for
 * unlink and rename.  -ENOENT. */
int version_name(struct version *v, const char *path);
/* Give the file held by entry fi (a holder) the new name path, which
 * must not name a live file.  0 or -ENOMEM. */
int version_link(struct version *v, uint32_t fi, const char *path);
/* Bytes of v's live files, each file once whatever its names. */
uint64_t version_bytes(const struct version *v);
/* Reserve len bytes (rounded to 4 KiB) at the tail of v's segments,
 * allocating a segment when the last one is full; *new_seg tells the caller
 * to write that segment's header first.  0 or -ENOSPC/-errno. */
int version_reserve(struct catalog *cat, struct version *v, uint32_t len,
		    uint32_t *seg, uint64_t *seg_off, int *new_seg);
/* Append a record; its index is the write order.  0 or -ENOMEM. */
int version_add_rec(struct version *v, const struct man_rec *r);
/* Set file fi's size, covering the data a shrink cuts with zero records:
 * a few records whatever the sizes (only bytes some write stored need
 * covering); to 0, the file is rewritten from offset 0 and loses
 * CKPT_XATTR_FAILED.  0, -EFBIG past CKPT_FILE_MAX, or -ENOMEM. */
int version_truncate(struct version *v, uint32_t fi, uint64_t size);
/* Drop the name entry fi (version_name()) from the version: the file's
 * last name takes its records with it (they stay, unlisted). */
void version_unlink_file(struct version *v, uint32_t fi);
/* Give the name entry fi the path to (which must not name a live file).
 * 0 or -ENOMEM. */
int version_rename_file(struct version *v, uint32_t fi, const char *to);

/* Is a manifest write of v in flight or queued (level.h)?  Then v may not be
 * removed or evicted (-EBUSY): the write would bring its manifest back. */
static inline int version_level_busy(const struct version *v)
{
	return !list_empty(&v->levelq);
}
/* A struct manifest of v's live files as it would be at level: the paths
 * and xattrs point into v (valid while v is unchanged); m->files and
 * m->recs are the caller's to free.  0 or -ENOMEM. */
int version_manifest(const struct version *v, uint32_t level,
		     struct manifest *m);
/* Encode v's manifest (its live files) as it would be at level: *buf
 * (malloc'd, the caller's) of *len bytes, with v's holder record.  CPU
 * only.  0 or -ENOMEM. */
int catalog_manifest_encode(const struct version *v, uint32_t level,
			    void **buf, size_t *len);
/* The same with the holder record holders (NULL: none) in place of v's:
 * the manifest a part's new holders seal with (cluster/protect.c). */
int catalog_manifest_encode_as(const struct version *v, uint32_t level,
			       const struct man_holders *holders, void **buf,
			       size_t *len);
/* Write the encoded manifest of the version sealed as seq durably: to
 * <seq>.tmp, fsync, rename to <seq>.man, fsync the directory.  Blocking; safe
 * on any thread as long as no two calls for one seq overlap (level.c
 * serializes them).  0 or -errno (nothing left behind). */
int catalog_manifest_store(const struct catalog *cat, uint64_t seq,
			   const void *buf, size_t len);
/* Mark v FAILED with err and give its segments back.  */
void catalog_fail(struct catalog *cat, struct version *v, int err);
/* Give back the segments of a FAILED version once no write is in flight. */
void catalog_settle(struct catalog *cat, struct version *v);
/* Remove v from the catalog: unlink its manifest, free its segments once the
 * last reference is gone; a quarantine directory is discarded on the pool.
 * 0, -EBUSY (a level change or an rm in flight) or -errno (the manifest
 * could not be removed). */
int catalog_remove(struct catalog *cat, struct version *v);
/* catalog_remove() with the manifest dropped on the pool (as retention
 * does; on the loop while the catalog has no pool). */
int catalog_remove_bg(struct catalog *cat, struct version *v);
/* The blocking half of dropping the manifest of the version sealed as seq on
 * purpose: log open_id in the removal log (fsync'd) first, then unlink the
 * manifest and fsync the directory.  Safe on any thread (appends to the log
 * are serialized); reads only the store's paths.  0 or -errno. */
int catalog_manifest_drop(const struct catalog *cat, uint64_t open_id,
			  uint64_t seq);
/* catalog_remove() and catalog_evict() for a version whose manifest (and
 * quarantine directory) a worker already removed: memory only.  The caller
 * clears v->removing first. */
int catalog_remove_dropped(struct catalog *cat, struct version *v);
int catalog_evict_dropped(struct catalog *cat, struct version *v,
			  struct pfsman *m);
/* Discard the damaged local copy of v kept in quarantine (v->qdir), if
 * any: its files go, the version stays (served from its PFS copy). */
void catalog_discard_quarantine(struct catalog *cat, struct version *v);
/* Apply retention to job (catretain.c): keep its newest `keep` sealed
 * versions, newest by seq, but a part taken over from a lost node by its
 * seal time; one that is busy now is passed over until the next run.  The
 * newest sealed version is never removed.  Manifests are dropped on the
 * pool (catalog_evict_bg). */
void catalog_retain(struct catalog *cat, struct job *job, uint32_t keep);

/* A new open_id of this node's, for a part written here another way than
 * by a client (cluster/adopt.c: a part taken over from a lost node). */
static inline uint64_t catalog_new_open_id(struct catalog *cat)
{
	return cat->next_open_id++;
}

/* Turn a decoded, checked manifest into a SEALED version, claiming the
 * segments it names (recovery).  0, -EEXIST, -ENOENT (no such segment),
 * -ENOMEM. */
int catalog_load(struct catalog *cat, const struct manifest *m);
/* List a version whose local copy recovery moved to quarantine directory
 * qdir (copied; NULL: it could not be moved and stays in place): state
 * DAMAGED, error -CKPT_ECORRUPT, reason copied.
 * 0, -EEXIST, -ENOMEM. */
int catalog_add_damaged(struct catalog *cat, const struct manifest *head,
			const char *qdir, const char *reason);
/* v (INCOMPLETE or DAMAGED after recovery) is on the PFS after all (m,
 * ownership taken): make it a sealed, DRAINED, remote version; a damaged
 * local copy stays in quarantine.  0 or -ENOMEM. */
int catalog_adopt_remote(struct catalog *cat, struct version *v,
			 struct pfsman *m);

/* Add a version known only from its PFS manifest m (taking ownership of
 * it): sealed, DRAINED, remote.  0, -EEXIST, -ENOMEM. */
int catalog_add_remote(struct catalog *cat, struct pfsman *m,
		       struct version **out);
/* Drop v's local copy (its manifest and segments); it stays listed as a
 * remote version reading from m (ownership taken).  0 or -errno. */
int catalog_evict(struct catalog *cat, struct version *v, struct pfsman *m);
/* The same for retention: the manifest is dropped on the pool (when there
 * is one) and the segments go back once that is durable; a failure there is
 * logged and the segments are kept until the next start. */
int catalog_evict_bg(struct catalog *cat, struct version *v, struct pfsman *m);

/* Fill the public description of v. */
void version_info(const struct version *v, struct ckpt_version_info *out);
/* The listing entry of file fi of v (vfiles.c): out->name points at the
 * path v holds (path[] is ""), so out is used before v changes. */
void vfile_info(const struct version *v, uint32_t fi,
		struct ckpt_file_info *out);
/* Does live file fi of v carry CKPT_XATTR_FAILED (its writer died with it
 * open, ckpt.h)?  1 or 0. */
int vfile_failed(const struct version *v, uint32_t fi);
/* Drop CKPT_XATTR_FAILED from the file that data entry f holds: it is
 * rewritten from offset 0 (version_truncate() to 0 calls it).  0 or
 * -ENOMEM. */
int vfile_clear_failed(struct vfile *f);
/* The first live file of v that does: its index, or -ENOENT.  A commit of
 * v is refused (-CKPT_ECUTSHORT) while there is one. */
int version_failed_file(const struct version *v);

#endif
