/* * conn_i.h - ckptfs's bottom layer: the mount's state, and its connections
 * to ckptd (conn.c), the queries and reads made on them (srv.c), and the
 * log, the error mapping and the clock every layer uses (log.c).  Private
 * to fuse/; not installed.
 *
 * ckptfs is a client of ckptd through libckpt and nothing else.  Its files
 * form four layers, each with one private header that includes only the
 * header of the layer below it, and each calling only down:
 *
 *   ops_i.h   the operations: the FUSE operation table and setup
 *             (ckptfs.c), the operations behind it (nsops.c, dir.c, io.c,
 *             xattr.c), the kernel's caches of other names (inval.c), the
 *             closing task (closer.c) and the housekeeping thread (hk.c)
 *   ns_i.h    the namespace: the versions this mount holds (vers.c), their
 *             mirrors (tree.c), the st_ino kept at a commit (inomap.c),
 *             paths (path.c), pending jobs and VER.tmp aliases (pend.c),
 *             attributes (attr.c)
 *   wb_i.h    write-behind of small writes (wbuf.c)
 *   conn_i.h  this header: connections to ckptd (conn.c, srv.c, log.c)
 *
 * A lower layer reaches up only through the ops an upper layer stored in
 * it: struct fs_conn_ops here (a W connection was lost; is a connection in
 * use), struct fs_wb_ops in wb_i.h (a buffered file's path; a failed
 * send).  tests/layers_fuse.sh checks the includes and the objects.
 *
 * It keeps three kinds of state, all under one mutex (fs->mu):
 *
 *   connections  two ckpt clients: W carries the versions this mount writes
 *                (begin, write, namespace changes, commit, and reads of them,
 *                which must follow their writes on the same connection); R
 *                carries every other query and read, so that a listing or a
 *                read of a committed version never queues behind a writer
 *                waiting for staging.  A connection that breaks is replaced
 *                on next use (struct fs_conn is counted).
 *   versions     one struct fs_version per version this mount has begun and
 *                not yet committed or given up, with an in-memory mirror of
 *                its namespace (struct fs_tree): the files written through
 *                the mount with their sizes, and the directories, so that
 *                lookups and getattr while writing never ask ckptd.
 *   pending      job directories made with mkdir that have no version yet
 *                (a job exists in ckptd only once it has a version).
 *
 * Everything else (committed versions, other clients' versions, the job
 * list) is asked of ckptd on every call and never cached here.
 *
 * struct ckptfs is the mount's; it lives here so that every layer can take
 * fs->mu and read the options.  The list heads of the upper layers' state
 * (versions, pending, aliases, inomaps) are plain struct fs_link: this
 * layer never walks them (it asks through fs->conn_ops).
 *
 * Lock order: a version's ns rwlock, then fs->mu.  fs->mu is never held
 * across a libckpt call.  ns is held (read) across writes and reads of the
 * version and (write) across its namespace changes and its commit, so that
 * a path computed from the mirror is still right when ckptd sees it.
 */
#ifndef CKPTFS_CONN_I_H
#define CKPTFS_CONN_I_H

#define FUSE_USE_VERSION 314

#include <fuse.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "ckpt.h"

#define FS_MAX_WRITE   (1u << 20)   /* max_write: 1 MiB FUSE writes */
#define FS_JOBDEPTH_MAX 16

/* Intrusive doubly-linked list (lib/list.h is not ours to include). */
struct fs_link {
	struct fs_link *next, *prev;
};

#define fs_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void fs_list_init(struct fs_link *h)
{
	h->next = h->prev = h;
}

static inline void fs_list_add(struct fs_link *h, struct fs_link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void fs_list_del(struct fs_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}


/* ---- connections (conn.c) ------------------------------------------------ */

enum fs_conn_kind { CONN_W = 0, CONN_R = 1, CONN_NKINDS };

struct fs_conn {
	struct ckpt_client *c;
	int refs;                 /* fs->mu; the table holds one while current */
	int dead;                 /* a call failed with a connection error */
	enum fs_conn_kind kind;
	time_t used;              /* fs_now_sec() of the last write or read
				   * that needed staging (fs->mu) */
};

struct ckptfs;

/* What the connections ask of the layer that begins versions on them (the
 * namespace: vers.c's ver_conn_ops, stored in fs->conn_ops at setup). */
struct fs_conn_ops {
	/* conn, a W connection, was lost: the versions begun on it are gone
	 * (ckptd aborts a disconnected client's versions).  fs->mu held. */
	void (*lost_locked)(struct ckptfs *fs, struct fs_conn *conn);
	/* Is a file of a version begun on conn open (its lease is not given
	 * back while one is)?  fs->mu held. */
	int (*busy_locked)(struct ckptfs *fs, const struct fs_conn *conn);
};

/* ---- the file system ----------------------------------------------------- */

struct ckptfs {
	pthread_mutex_t mu;
	pthread_cond_t closed_cv;     /* a handle open for writing went
				       * (RELEASE); CLOCK_MONOTONIC */
	struct fs_conn *conn[CONN_NKINDS];
	const struct fs_conn_ops *conn_ops; /* set at setup (ckptfs.c) */
	pthread_mutex_t connect_mu;   /* one (re)connect at a time */
	pthread_mutex_t begin_mu;     /* one version begin at a time */
	struct fs_link versions;      /* struct fs_version, in_table */
	struct fs_link pending;       /* struct fs_pending */
	struct fs_link aliases;       /* struct fs_alias, oldest first */
	unsigned naliases;
	struct fs_link inomaps;       /* st_ino of committed versions
				       * (inomap.c), oldest first */
	unsigned ninomaps;
	size_t ninomap_ents;
	uint64_t next_ino;            /* the last st_ino given to an inode of
				       * a mirror (atomic: tree.c); 1 is the
				       * root's, and ckptd's files have the
				       * top bit (nsops.c) */
	struct timespec started;

	/* options */
	char socket[CKPT_PATH_MAX];
	unsigned jobdepth;
	unsigned nodes;           /* -o nodes=N: parts per version, 0: the
				   * environment's (ckpt_begin2()) */
	unsigned autocommit;          /* seconds; 0 = off */
	int fsync_staged;             /* -o fsync=staged */
	int foreground;
	uint64_t ckptd_pid;           /* as found at start, for the log */

	/* housekeeping thread: autocommit, failed versions */
	pthread_t hk_thread;
	pthread_cond_t hk_cv;
	int hk_started;
	int stopping;
	time_t conn_warned;           /* rate limit of "cannot connect" */
};

/* ---- log, errors, clock (log.c) ------------------------------------------ */

/* ckpt and libc errors to what a FUSE op returns (a negative errno);
 * counts and 0 pass through. */
int fs_errno(int err);
/* Log through fuse_log with a "ckptfs: " prefix. */
void fs_log(enum fuse_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* CLOCK_MONOTONIC seconds. */
time_t fs_now_sec(void);

/* ---- connections (conn.c) ------------------------------------------------ */

/* A counted reference to the current connection of kind, (re)connecting if
 * needed.  0 or a negative error. */
int conn_get(struct ckptfs *fs, enum fs_conn_kind kind, struct fs_conn **out);
/* Drop a reference; ret is the result of the call made on it, and a
 * connection error marks it dead (and fails the versions begun on it). */
void conn_put(struct ckptfs *fs, struct fs_conn *conn, int ret);
/* Drop conn after a call that returned ret; 1 when the call should be made
 * again on a new connection (a connection error, on the first try). */
int conn_again(struct ckptfs *fs, struct fs_conn *conn, int ret, int *tries);
/* Mark conn dead if ret is a connection error; returns ret. */
int conn_check(struct ckptfs *fs, struct fs_conn *conn, int ret);
void conn_close_all(struct ckptfs *fs);
/* Make sure conn holds a staging lease before a write or a read, waiting
 * for one in short slices so that a signal to the calling program
 * (FUSE_INTERRUPT) ends the wait: -EINTR then.  Other errors as
 * ckpt_staging(). */
int conn_lease(struct ckptfs *fs, struct fs_conn *conn);
/* Give back the staging leases of connections idle for a while (from the
 * housekeeping thread). */
void conn_release_idle(struct ckptfs *fs);

/* ---- what ckptd says (srv.c) --------------------------------------------- */

/* libckpt calls on the R connection, made again once on a fresh connection
 * after a connection error.  Results as libckpt's. */
int srv_jobs(struct ckptfs *fs, char (**out)[CKPT_JOB_MAX + 1]);
int srv_versions(struct ckptfs *fs, const char *job,
		 struct ckpt_version_info **out);
int srv_stat(struct ckptfs *fs, const char *job, const char *version,
	     struct ckpt_version_info *info);
int srv_files(struct ckptfs *fs, const char *job, const char *version,
	      struct ckpt_file_info **out);
int srv_file(struct ckptfs *fs, const char *job, const char *version,
	     const char *path, struct ckpt_file_info *out);
/* The file's extended attributes (ckpt_getxattrs()): length or error. */
int srv_xattrs(struct ckptfs *fs, const char *job, const char *version,
	       const char *path, void *buf, size_t cap);
int srv_read(struct ckptfs *fs, const char *job, const char *version,
	     const char *path, void *buf, size_t len, uint64_t off,
	     size_t *got);
/* The first run of data of the file at or after off, to its end
 * (ckpt_seek_data()): 0, -ENXIO, or an error. */
int srv_seek_data(struct ckptfs *fs, const char *job, const char *version,
		  const char *path, uint64_t off, uint64_t *data,
		  uint64_t *len);
int srv_status(struct ckptfs *fs, struct ckpt_status *out);
/* Wait until the version is LOCAL. */
int srv_wait_local(struct ckptfs *fs, const char *job, const char *version);

/* Does s start with prefix and a '/'? */
int srv_below(const char *s, const char *prefix);
/* Is job shown by the mount (exactly jobdepth components)? */
int srv_shown_job(const struct ckptfs *fs, const char *job);
/* A shown job below prefix?  1, 0 or an error. */
int srv_has_prefix(struct ckptfs *fs, const char *prefix);
/* Does job have versions?  1 (owner in *uid if not NULL), 0, or an error. */
int srv_job(struct ckptfs *fs, const char *job, uint32_t *uid);
int srv_visible(const struct ckpt_version_info *info);
/* Is f a directory's own entry (CKPT_ATTR_IFDIR: its attributes, no
 * bytes), not a file? */
int srv_dir_entry(const struct ckpt_file_info *f);
/* Is the version committed (its files immutable)? */
int srv_committed(const struct ckpt_version_info *info);
/* Is dir (a path in the version) a prefix of its files?  1, 0 or an error. */
int srv_is_dir(struct ckptfs *fs, const char *job, const char *version,
	       const char *dir);

#endif
