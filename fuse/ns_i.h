/*
 * ns_i.h - ckptfs's namespace layer: what the mount shows and holds.  The
 * versions this mount has begun (vers.c) with the in-memory mirror of each
 * one's names (tree.c) and the attributes kept there (attr.c), the st_ino
 * kept at a commit (inomap.c), the paths of the mount (path.c), and the
 * job directories and VER.tmp aliases that ckptd does not know (pend.c).
 * Private to fuse/; includes only the write-behind layer's header (wb_i.h),
 * and through it the connection layer's: the namespace sends a version's
 * writes through its struct fs_wb and asks ckptd through srv_*().  It
 * answers the layers below through the ops it stores in them
 * (ver_conn_ops, in fs->conn_ops; the fs_wb_ops of each version).
 */
#ifndef CKPTFS_NS_I_H
#define CKPTFS_NS_I_H

#include "wb_i.h"

#define FS_BLKSIZE     (1u << 20)   /* st_blksize: cp and friends use it */
#define FS_READ_WINDOW (16u << 20)  /* read-ahead of committed files */
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


/* ---- the namespace mirror of a version being written (tree.c) ----------- */

struct fs_wbuf;

/*
 * A file or directory of the mirror (the inode): what its names share.  A
 * file has one name per hard link (fs_link); a directory has one.  Counted:
 * each node naming it holds a reference, also a node detached while open,
 * so that a handle's file lives as long as the handle.  All fields under
 * fs->mu except wb (ver->wb.mu).
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
	unsigned cut_marks;       /* open files whose dying close marked it
				   * cut short (io.c); 0 after a truncate
				   * to 0 */
	unsigned cut_gen;         /* truncates to 0 so far: a handle's mark
				   * from before one is void */
	struct fs_wbuf *wb;       /* small writes not sent yet (wb_i.h;
				   * ver->wb.mu) */
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
	struct fs_wb wb;          /* the write-behind buffers of its files
				   * (wb_i.h): wb.conn and wb.v are conn and
				   * v */
	unsigned nopen;           /* open handles */
	unsigned nwopen;          /* of which open for writing: no commit
				   * while there are any */
	time_t idle_since;        /* CLOCK_MONOTONIC seconds of last activity */
	struct timespec born;     /* CLOCK_REALTIME of mkdir */
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
/* Is in marked cut short (CKPT_XATTR_FAILED, set by io.c when its writer
 * died with it open)?  1 or 0; fs->mu held. */
int inode_cut_short_locked(const struct fs_inode *in);
/* Has ver a file marked cut short (its writer died with it open, io.c)?
 * Then a commit is refused (-CKPT_ECUTSHORT) until it is removed or
 * truncated to 0.  1 (its path into path, cap bytes, when path is not
 * NULL) or 0; fs->mu held. */
int ver_cut_short_locked(const struct fs_version *ver, char *path,
			 size_t cap);
/* A call on the version failed with ret: note a lost connection or a failed
 * version.  Returns ret. */
int ver_failed(struct ckptfs *fs, struct fs_version *ver, int ret);
/* Did ckptd seal ver behind the mount's back (`ckptctl commit`, a commit
 * by name)?  Then it is committed here too, and leaves the table: 1.
 * Else 0.  One query to ckptd. */
int ver_sealed_elsewhere(struct ckptfs *fs, struct fs_version *ver);
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
/* attr.c: what getattr shows for node n of held version ver; fs->mu held. */
void node_attr(const struct fs_version *ver, const struct fs_node *n,
	       struct stat *st);

struct fs_pending *pend_find(struct ckptfs *fs, const char *path);
int pend_has_below(struct ckptfs *fs, const char *prefix);
int pend_add(struct ckptfs *fs, const char *path, uint32_t uid);
void pend_del(struct ckptfs *fs, struct fs_pending *p);
void pend_free_all(struct ckptfs *fs);

/* vers.c: a version the mount shows from ckptd (srv_stat()): not failed or
 * incomplete, and not one this mount holds (it shows those itself, VER.tmp
 * as VER.tmp).  0 with *info, -ENOENT, or another error. */
int ver_remote(struct ckptfs *fs, const char *job, const char *version,
	       struct ckpt_version_info *info);
/* A change to p in a version this mount does not hold: -EROFS if the
 * version exists, else -ENOENT (or the error of asking). */
int ver_not_held(struct ckptfs *fs, const struct fs_path *p);
/* What the connection layer asks of the versions (fs->conn_ops). */
extern const struct fs_conn_ops ver_conn_ops;

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
/* st for a thing of mode, owner uid, size and time t (gid 0, st_nlink 2
 * for a directory, else 1); what getattr shows before attr_apply(). */
void attr_fill(struct stat *st, mode_t mode, uint32_t uid, uint64_t size,
	       const struct timespec *t);

#endif
