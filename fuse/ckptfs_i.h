/*
 * ckptfs_i.h - ckptfs's private structures (not installed).
 *
 * ckptfs is a client of ckptd through libckpt and nothing else.  It keeps
 * three kinds of state, all under one mutex (fs->mu):
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
 * Lock order: a version's ns rwlock, then fs->mu.  fs->mu is never held
 * across a libckpt call.  ns is held (read) across writes and reads of the
 * version and (write) across its namespace changes and its commit, so that
 * a path computed from the mirror is still right when ckptd sees it.
 */
#ifndef CKPTFS_I_H
#define CKPTFS_I_H

#define FUSE_USE_VERSION 314

#include <fuse.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "ckpt.h"

#define FS_MAX_WRITE   (1u << 20)   /* max_write: 1 MiB FUSE writes */
#define FS_BLKSIZE     (1u << 20)   /* st_blksize: cp and friends use it */
#define FS_READ_WINDOW (16u << 20)  /* read-ahead of committed files */
#define FS_JOBDEPTH_MAX 16
#define FS_MARKER      ".commit"    /* creating it commits its version */
#define FS_TMP_SUFFIX  ".tmp"       /* VER.tmp: renaming to VER commits */
/* Modes: a job is private to its owner, as ckptd makes it (another uid
 * gets EACCES from ckptd; through the mount, from the kernel). */
#define FS_MODE_TOP    01777        /* the root and leading parts of jobs */
#define FS_MODE_DIR    0700         /* a job; a directory being written */
#define FS_MODE_FILE   0600         /* a file being written; the marker */
#define FS_MODE_RODIR  0500         /* a directory of a committed version */
#define FS_MODE_ROFILE 0400         /* a file of a committed version */
#define FS_ROOT_INO    1            /* st_ino of the root: FUSE_ROOT_ID */
#define FS_HIDDEN      ".fuse_hidden" /* libfuse's name for unlinked open
				       * files: never listed, never committed */

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

/* ---- the namespace mirror of a version being written (tree.c) ----------- */

struct fs_wbuf;

/*
 * A file or directory of the mirror (the inode): what its names share.  A
 * file has one name per hard link (fs_link); a directory has one.  Counted:
 * each node naming it holds a reference, also a node detached while open,
 * so that a handle's file lives as long as the handle.  All fields under
 * fs->mu except wb (ver->wb_mu).
 */
struct fs_inode {
	uint64_t ino;             /* st_ino, from the mount's counter */
	unsigned refs;            /* nodes that name it, detached ones too */
	unsigned nlink;           /* of which in the tree (in names) */
	struct fs_link names;     /* struct fs_node.alias of those */
	uint64_t size;            /* files: max written end, or truncated size */
	struct timespec mtime;
	struct ckpt_attr attr;    /* what was set (attr.c) */
	int mtime_dirty;          /* written since mtime was last sent */
	int stale;                /* written since the kernel's copies of its
				   * other names' attributes were dropped */
	int dir_entry;            /* a directory ckptd holds an entry of
				   * (CKPT_ATTR_IFDIR): a version joined */
	uint8_t *xattr;           /* extended attributes set through this
				   * mount (xattr.h blob, owned) */
	uint32_t xlen;
	struct fs_wbuf *wb;       /* small writes not sent yet (ver->wb_mu) */
};

/* A name in the mirror (the dentry).  fs->mu. */
struct fs_node {
	struct fs_node *parent;   /* NULL for the version's root */
	struct fs_node *hnext;    /* hash chain, keyed by (parent, name) */
	struct fs_link sib;       /* in parent->children */
	struct fs_link children;  /* directories only */
	struct fs_link alias;     /* in in->names while in the tree */
	char *name;
	uint32_t hash;
	uint32_t nchild;
	unsigned nopen;           /* handles on this name, and pins */
	int is_dir;
	int detached;             /* unlinked or replaced while open */
	struct fs_inode *in;      /* what it names (counted; never NULL) */
};

struct fs_tree {
	uint64_t *next_ino;       /* the mount's last st_ino given (atomic) */
	struct fs_node *root;
	/* libfuse's unlinked open files (FS_HIDDEN names): a directory out
	 * of the tree, so that they neither keep their old directory from
	 * being removed nor are listed or committed; ckptd keeps their bytes
	 * at the version's root under the hidden name until the last close
	 * (or the commit) drops them.  Found by name alone (libfuse's hidden
	 * names are unique in the mount). */
	struct fs_node *hidden;
	struct fs_node **buckets;
	size_t nbuckets;
	size_t count;
};

/* An empty tree whose inodes take their st_ino from *next_ino. */
int tree_init(struct fs_tree *t, uint64_t *next_ino);
void tree_free(struct fs_tree *t);
/* The node at path ("" is the root), or NULL.  A last component that is
 * a hidden name (FS_HIDDEN) is also looked for among t->hidden. */
struct fs_node *tree_lookup(const struct fs_tree *t, const char *path);
struct fs_node *tree_child(const struct fs_tree *t, const struct fs_node *dir,
			   const char *name);
/* tree_child, or for a hidden name the hidden file of that name. */
struct fs_node *tree_child_any(const struct fs_tree *t,
			       const struct fs_node *dir, const char *name);
/* Is name one libfuse gives an unlinked open file (FS_HIDDEN...)? */
int tree_hidden_name(const char *name);
/* Is node a hidden file of t (a child of t->hidden)? */
int tree_is_hidden(const struct fs_tree *t, const struct fs_node *node);
/* Add a child naming a new inode; 0 or -ENOMEM. */
int tree_add(struct fs_tree *t, struct fs_node *dir, const char *name,
	     int is_dir, struct fs_node **out);
/* Add a file name under dir for the inode in (a hard link: in->nlink
 * grows); 0 or -ENOMEM. */
int tree_link(struct fs_tree *t, struct fs_node *dir, const char *name,
	      struct fs_inode *in, struct fs_node **out);
/* Add a file (or with is_dir a directory) at path with its parents, or
 * find it (mirror of a version joined): a file is a name of in when in is
 * not NULL, else of a new inode.  0, -EINVAL (a file is in the way) or
 * -ENOMEM. */
int tree_add_path(struct fs_tree *t, const char *path, int is_dir,
		  struct fs_inode *in, struct fs_node **out);
/* Take node out of the tree (its inode loses a name, and is freed with its
 * last node); freed now unless a handle holds it, in which case it is
 * marked detached and tree_release() frees it. */
void tree_remove(struct fs_tree *t, struct fs_node *node);
void tree_release(struct fs_node *node);
/* Move node under dir as name.  0 or -ENOMEM (node unchanged). */
int tree_move(struct fs_tree *t, struct fs_node *node, struct fs_node *dir,
	      const char *name);
/* The node's path below the version ("" for the root).  Length or
 * -ENAMETOOLONG. */
int tree_path(const struct fs_node *node, char *buf, size_t cap);
/* The path ckptd knows name under dir by ("" for the root's child name,
 * the bare name for a hidden file).  Length or -ENAMETOOLONG. */
int tree_child_path(const struct fs_node *dir, const char *name, char *buf,
		    size_t cap);
/* A path ckptd knows node's file by: node's own while it is in the tree,
 * else another name of its inode (ckptd resolves every name of a file to
 * the same bytes).  Length, -ENOENT when the file has no name left (it
 * was unlinked while open: its bytes go nowhere), or -ENAMETOOLONG. */
int tree_node_path(const struct fs_node *node, char *buf, size_t cap);
/* The same for a name of the file in: -ENOENT when it has none. */
int tree_inode_path(const struct fs_inode *in, char *buf, size_t cap);
/* st_nlink of node's file: its names in the tree, not counting the names
 * libfuse gives unlinked open files (FS_HIDDEN), but node's own if it is
 * one (libfuse shows one less for those). */
unsigned tree_nlink(const struct fs_node *node);
/* Is node dir or below it? */
int tree_is_below(const struct fs_node *node, const struct fs_node *dir);
struct fs_path;
/* The directory that holds p->file, and its last component.  0, -ENOENT or
 * -ENOTDIR. */
int tree_parent(const struct fs_tree *t, const struct fs_path *p,
		struct fs_node **dir, const char **base);

/* ---- versions this mount holds (vers.c) ---------------------------------- */

enum fs_vstate {
	V_OPEN = 1,               /* being written through this mount */
	V_COMMITTING,             /* ckpt_commit() in progress */
	V_DONE,                   /* committed: ckptd answers from now on */
	V_FAILED,                 /* failed, aborted or its connection lost */
};

struct fs_version {
	struct fs_link link;      /* fs->versions while in_table */
	int in_table;
	int refs;                 /* table + handles + calls in progress */
	enum fs_vstate state;
	int err;                  /* why it failed (negative) */
	char job[CKPT_JOB_MAX + 1];
	char name[CKPT_VERSION_MAX + 1];   /* ckptd's name */
	int tmp;                  /* shown as name + ".tmp" until committed */
	uint32_t uid;             /* owner, as ckptd reports it */
	struct fs_conn *conn;     /* the W connection it was begun on */
	struct ckpt_version *v;
	pthread_rwlock_t ns;
	struct fs_tree tree;      /* fs->mu */
	pthread_mutex_t wb_mu;    /* the write-behind buffers (wbuf.c) */
	struct fs_link dirty;     /* struct fs_wbuf of its files */
	unsigned nopen;           /* open handles */
	unsigned nwopen;          /* of which open for writing: no commit
				   * while there are any */
	time_t idle_since;        /* CLOCK_MONOTONIC seconds of last activity */
	struct timespec born;     /* CLOCK_REALTIME of mkdir */
};

/* ---- write-behind of small writes (wbuf.c) -------------------------------- */

struct fs_wbuf {
	struct fs_link link;      /* in ver->dirty */
	struct fs_inode *in;      /* in->wb is this buffer */
	uint64_t off;             /* file offset of data[0] */
	size_t len, cap;
	uint8_t *data;
};

/* ---- pending job directories (pend.c) ------------------------------------ */

struct fs_pending {
	struct fs_link link;
	uint32_t uid;
	struct timespec born;
	char path[CKPT_JOB_MAX + 1];  /* a job, or a leading part of one */
};

/* ---- aliases of versions committed while shown as VER.tmp (pend.c) ------ */

#define FS_ALIAS_MAX 256

struct fs_alias {
	struct fs_link link;
	char job[CKPT_JOB_MAX + 1];
	char name[CKPT_VERSION_MAX + 1];  /* VER; VER.tmp is the alias */
};

/* ---- open files (io.c) ---------------------------------------------------- */

enum fs_hkind {
	H_NODE = 1,               /* a file of a version this mount holds */
	H_READ,                   /* a file of any other version: read-only */
	H_MARKER,                 /* the .commit marker: writes vanish */
};

struct fs_handle {
	enum fs_hkind kind;
	int writable;
	struct fs_version *ver;   /* H_NODE: counted */
	struct fs_node *node;     /* H_NODE: node->nopen counts us */
	/* The last close (FLUSH) of this open file was by a task dying
	 * (closer_died): if no other close follows before the RELEASE, the
	 * writer died with the file open.  A child that inherited the fd and
	 * exits non-zero is followed by its parent's own close. */
	pid_t died_pid;           /* 0: the last close was a normal one */
	char died_why[48];
	/* H_READ */
	pthread_mutex_t mu;       /* the read window */
	uint8_t *win;             /* FS_READ_WINDOW bytes once used */
	uint64_t win_off;
	size_t win_len;
	int committed;            /* immutable: the window may be kept */
	uint64_t size;            /* the file's size, when committed */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char path[CKPT_PATH_MAX2 + 1];
};

static inline struct fs_handle *fs_handle(const struct fuse_file_info *fi)
{
	return fi ? (struct fs_handle *)(uintptr_t)fi->fh : NULL;
}

/* ---- the file system ----------------------------------------------------- */

struct ckptfs {
	pthread_mutex_t mu;
	pthread_cond_t closed_cv;     /* a handle open for writing went
				       * (RELEASE); CLOCK_MONOTONIC */
	struct fs_conn *conn[CONN_NKINDS];
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
				       * top bit (ns.c) */
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

/* The file system of the current FUSE request. */
static inline struct ckptfs *fs_get(void)
{
	return fuse_get_context()->private_data;
}

/* ---- paths (path.c) ------------------------------------------------------ */

enum fs_kind {
	P_ROOT = 1,               /* the mount's root */
	P_PREFIX,                 /* fewer components than jobdepth */
	P_JOB,                    /* exactly jobdepth components */
	P_VERSION,                /* a version directory */
	P_FILE,                   /* anything inside a version */
};

struct fs_path {
	enum fs_kind kind;
	unsigned depth;           /* components below the job, P_PREFIX: count */
	char job[CKPT_JOB_MAX + 1];       /* P_PREFIX: the leading part */
	char vdisp[CKPT_VERSION_MAX + 1]; /* the version as shown */
	char file[CKPT_PATH_MAX2 + 1];     /* P_FILE: path inside the version */
};

/* Split a mount path.  0, -ENAMETOOLONG, or -CKPT_EBADNAME for a name ckpt
 * cannot hold (a lookup of it is ENOENT, a create EINVAL). */
int path_parse(struct ckptfs *fs, const char *path, struct fs_path *p);
/* The same, but VER.tmp is not resolved to an alias (mkdir of VER.tmp). */
int path_parse_raw(const struct ckptfs *fs, const char *path,
		   struct fs_path *p);
/* For "VER.tmp" with a valid VER, copy VER into out and return 1; else 0. */
int path_tmp_stem(const char *vdisp, char *out);
/* The last component of p->file and the length of its parent path. */
const char *path_base(const struct fs_path *p, size_t *dirlen);
/* Is p the marker at the root of a version? */
int path_is_marker(const struct fs_path *p);
/* ckpt and libc errors to what a FUSE op returns (a negative errno);
 * counts and 0 pass through. */
int fs_errno(int err);
/* Log through fuse_log with a "ckptfs: " prefix. */
void fs_log(enum fuse_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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

/* ---- versions (vers.c) --------------------------------------------------- */

/* The held version of job shown as vdisp, with a reference, or NULL. */
struct fs_version *ver_find(struct ckptfs *fs, const char *job,
			    const char *vdisp);
/* The held version of job whose ckptd name is name, or NULL (fs->mu). */
struct fs_version *ver_held_name_locked(struct ckptfs *fs, const char *job,
					const char *name);
/* Any held version of job (or below prefix p when prefix is set)? fs->mu. */
int ver_job_held(struct ckptfs *fs, const char *job, int prefix,
		 uint32_t *uid);
void ver_get_locked(struct fs_version *ver);
void ver_put(struct ckptfs *fs, struct fs_version *ver);
/* The name the version is shown under. */
void ver_display(const struct fs_version *ver, char *out);
/* mkdir of a version directory; rmdir of an empty one (aborts it). */
int ver_begin(struct ckptfs *fs, const char *job, const char *vdisp,
	      uint32_t uid);
int ver_abort(struct ckptfs *fs, struct fs_version *ver);
/* Commit; why is logged; renamed: by the rename of VER.tmp (else VER.tmp
 * stays an alias).  0 or a ckpt error. */
int ver_commit(struct ckptfs *fs, struct fs_version *ver, const char *why,
	       int renamed);
/* A call on the version failed with ret: note a lost connection or a failed
 * version.  Returns ret. */
int ver_failed(struct ckptfs *fs, struct fs_version *ver, int ret);
/* Did ckptd seal ver behind the mount's back (`ckptctl commit`, a commit
 * by name)?  Then it is committed here too, and leaves the table: 1.
 * Else 0.  One query to ckptd. */
int ver_sealed_elsewhere(struct ckptfs *fs, struct fs_version *ver);
/* Mark versions begun on conn failed (fs->mu held). */
void ver_conn_lost_locked(struct ckptfs *fs, struct fs_conn *conn);
/* Leave the table (fs->mu held). */
void ver_unlink_locked(struct fs_version *ver);
/* The error a write to ver gets now, 0 if it may be written (fs->mu). */
int ver_writable_locked(const struct fs_version *ver);
void ver_touch_locked(struct fs_version *ver);
/* The last handle of n, a hidden file of ver (libfuse's unlinked open
 * file), is going: drop it from ckptd and the mirror.  n is pinned by the
 * caller's handle (n->nopen), which tree_release() then frees. */
void ver_drop_hidden(struct ckptfs *fs, struct fs_version *ver,
		     struct fs_node *n);
/* Mark ver failed with err, and log it (fs->mu held). */
void ver_fail_locked(struct fs_version *ver, int err);

/* closer.c: 1 if pid is exiting after a signal or with a non-zero status
 * (why says which), 0 if not or if it cannot tell. */
int closer_died(pid_t pid, char *why, size_t cap);
/* CLOCK_MONOTONIC seconds. */
time_t fs_now_sec(void);
/* hk.c: the housekeeping thread (autocommit, failed versions, changes made
 * in ckptd behind the mount's back). */
int hk_start(struct ckptfs *fs);
void hk_stop(struct ckptfs *fs);
/* Unmount: flush every held version to ckptd, log, and let it go. */
void ver_release_all(struct ckptfs *fs);

/* pend.c: after a commit no rename made, VER.tmp stays an alias of VER. */
void alias_add(struct ckptfs *fs, const struct fs_version *ver);
/* p names VER.tmp of a version committed since: make it name VER. */
void alias_resolve(struct ckptfs *fs, struct fs_path *p);
/* A new VER.tmp was begun: VER.tmp is no longer an alias. */
void alias_drop(struct ckptfs *fs, const char *job, const char *name);
void alias_free_all(struct ckptfs *fs);

/* inomap.c: the st_ino and ctime a version's files had while this mount
 * wrote it, kept at its commit so that they do not change (fs->mu for
 * all). */
/* Keep the numbers of ver's mirror (just committed, sealed at sealed_ns,
 * 0 if not known); on ENOMEM nothing is kept. */
void inomap_add_locked(struct ckptfs *fs, const struct fs_version *ver,
		       uint64_t sealed_ns);
/* The number and ctime path (in job/version, sealed at sealed_ns) had: 1
 * with *ino and *ctime_ns, or 0 (ask the hash and ckptd). */
int inomap_find_locked(struct ckptfs *fs, const char *job,
		       const char *version, const char *path,
		       uint64_t sealed_ns, uint64_t *ino, uint64_t *ctime_ns);
/* Forget the numbers of job/name (a version of that name begun again). */
void inomap_drop_locked(struct ckptfs *fs, const char *job, const char *name);
void inomap_free_all(struct ckptfs *fs);
/* ns.c: what getattr shows for node n of held version ver; fs->mu held. */
void node_attr(const struct fs_version *ver, const struct fs_node *n,
	       struct stat *st);

struct fs_pending *pend_find(struct ckptfs *fs, const char *path);
int pend_has_below(struct ckptfs *fs, const char *prefix);
int pend_add(struct ckptfs *fs, const char *path, uint32_t uid);
void pend_del(struct ckptfs *fs, struct fs_pending *p);
void pend_free_all(struct ckptfs *fs);

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
/* A version the mount shows from ckptd: not failed or incomplete, and not
 * one this mount holds (it shows those itself, VER.tmp as VER.tmp).  0 with
 * *info, -ENOENT, or another error. */
int srv_version(struct ckptfs *fs, const char *job, const char *version,
		struct ckpt_version_info *info);
int srv_visible(const struct ckpt_version_info *info);
/* Is f a directory's own entry (CKPT_ATTR_IFDIR: its attributes, no
 * bytes), not a file? */
int srv_dir_entry(const struct ckpt_file_info *f);
/* Is the version committed (its files immutable)? */
int srv_committed(const struct ckpt_version_info *info);
/* Is dir (a path in the version) a prefix of its files?  1, 0 or an error. */
int srv_is_dir(struct ckptfs *fs, const char *job, const char *version,
	       const char *dir);
/* A change to p in a version this mount does not hold: -EROFS if the
 * version exists, else -ENOENT (or the error of asking). */
int srv_not_held(struct ckptfs *fs, const struct fs_path *p);

/* ---- the kernel's caches of a file's other names (inval.c) -------------- */

/* Mount paths whose cached attributes and pages the kernel is to drop. */
struct fs_inval {
	char **paths;             /* owned */
	unsigned n;
};

/* Note every name of in but except (NULL: all), in ver; fs->mu held.
 * Nothing is noted, nor allocated, for a file whose only name is except. */
void inval_note_locked(struct fs_inval *iv, const struct fs_version *ver,
		       const struct fs_inode *in, const struct fs_node *except);
/* Tell the kernel to drop what it caches for the noted names, and forget
 * them.  From a FUSE request other than a WRITE, with no lock of ours held
 * (inval.c says why). */
void inval_send(struct fs_inval *iv);

/* ---- write-behind (wbuf.c) ------------------------------------------------ */

/* Write size bytes at off of node (path: its path now): buffered when
 * small and contiguous, else sent, after what the buffer holds.  ns held
 * for reading.  0 or an error. */
int wb_write(struct ckptfs *fs, struct fs_version *ver, struct fs_node *node,
	     const char *path, const void *buf, size_t size, uint64_t off);
/* Send node's buffered bytes (and free the buffer if release). */
int wb_flush_node(struct ckptfs *fs, struct fs_version *ver,
		  struct fs_node *node, int release);
/* Send and free every buffer of ver (ns held; for writing when the
 * namespace is about to change).  Bytes that cannot be sent fail the
 * version, here and in ckptd (its writer aborted). */
int wb_flush_all(struct ckptfs *fs, struct fs_version *ver);
/* Send every buffer of ver and keep them (fsync; ns held for reading):
 * one whose bytes find no staging (EINTR, ENOBUFS) keeps them and the
 * first such error is returned; the version does not fail for it. */
int wb_send_all(struct ckptfs *fs, struct fs_version *ver);
/* Drop every buffer unsent (abort, free). */
void wb_free_all(struct fs_version *ver);

/* ---- attributes (attr.c) ------------------------------------------------ */

/* Overlay the fields a sets on st (filled with the defaults); rw false: a
 * committed version, shown without write bits. */
void attr_apply(struct stat *st, const struct ckpt_attr *a, int rw);
/* Set the fields a names on node n of the held ver: sent to ckptd for a
 * file (ns held for reading), kept in the mirror for a directory.  0 or an
 * error. */
int attr_send(struct ckptfs *fs, struct fs_version *ver, struct fs_node *n,
	      const struct ckpt_attr *a);
/* Would a write or truncate by the caller take set-id bits from in's
 * file (attr_kill_priv)?  fs->mu. */
int attr_privs_locked(const struct fs_inode *in, int chown);
/* Clear the set-id bits of n's file that a write, truncate (chown 0) or
 * chown (1) by the caller takes, as the kernel would on a local file
 * (libfuse leaves it to the file system: FUSE_CAP_HANDLE_KILLPRIV):
 * set-uid, and set-gid with group execute; a writer with CAP_FSETID
 * (uid 0) keeps them, a chown does not.  ns held.  0 or an error. */
int attr_kill_priv(struct ckptfs *fs, struct fs_version *ver,
		   struct fs_node *n, int chown);
/* in was written: its mtime is now, to be sent at the next flush
 * (fs->mu). */
void attr_written(struct fs_inode *in);
/* A name of in came or went (link, unlink, rename): its ctime is now, in
 * the mirror (ckptd stamps its own); fs->mu. */
void attr_changed(struct fs_inode *in);
/* Send n's mtime if a write changed it since it was last sent. */
int attr_flush_mtime(struct ckptfs *fs, struct fs_version *ver,
		     struct fs_node *n);
/* The attributes of a new file or directory: mode, the caller's uid and
 * gid, times now. */
void attr_new(struct ckpt_attr *a, mode_t mode);
uint64_t attr_ns(const struct timespec *t);

/* ---- operations ---------------------------------------------------------- */

/* ns.c: the namespace */
int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi);
int fs_mkdir(const char *path, mode_t mode);
int fs_rmdir(const char *path);
int fs_unlink(const char *path);
int fs_rename(const char *from, const char *to, unsigned int flags);
int fs_link(const char *from, const char *to);
int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int fs_utimens(const char *path, const struct timespec tv[2],
	       struct fuse_file_info *fi);
int fs_statfs(const char *path, struct statvfs *sv);

/* dir.c: listings */
int fs_opendir(const char *path, struct fuse_file_info *fi);
int fs_releasedir(const char *path, struct fuse_file_info *fi);
int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
	       struct fuse_file_info *fi, enum fuse_readdir_flags flags);
/* The path of a directory op: given, or kept by opendir. */
const char *dir_path(const char *path, const struct fuse_file_info *fi);

/* io.c: files */
int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi);
int fs_open(const char *path, struct fuse_file_info *fi);
int fs_read(const char *path, char *buf, size_t size, off_t off,
	    struct fuse_file_info *fi);
off_t fs_lseek(const char *path, off_t off, int whence,
	       struct fuse_file_info *fi);
int fs_write(const char *path, const char *buf, size_t size, off_t off,
	     struct fuse_file_info *fi);
int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi);
int fs_flush(const char *path, struct fuse_file_info *fi);
int fs_release(const char *path, struct fuse_file_info *fi);
int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi);
int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi);
int fs_fallocate(const char *path, int mode, off_t off, off_t len,
		 struct fuse_file_info *fi);
int fs_mknod(const char *path, mode_t mode, dev_t rdev);
int fs_symlink(const char *target, const char *path);
int fs_readlink(const char *path, char *buf, size_t size);
int fs_setxattr(const char *path, const char *name, const char *value,
		size_t size, int flags);
int fs_getxattr(const char *path, const char *name, char *value, size_t size);
int fs_listxattr(const char *path, char *list, size_t size);
int fs_removexattr(const char *path, const char *name);

#endif
