/*
 * ops_i.h - ckptfs's top layer: the operations.  The FUSE operation table,
 * options and setup (ckptfs.c), the operations it names (nsops.c: the
 * namespace; dir.c: listings; io.c: files; xattr.c: extended attributes),
 * the kernel's caches of a file's other names (inval.c), the closing task
 * (closer.c), and the housekeeping thread that acts on versions between
 * requests (hk.c).  Private to fuse/; includes only the namespace layer's
 * header (ns_i.h), and through it the layers below.  Nothing below calls
 * these; ckptfs.c wires the layers at setup (fs->conn_ops).
 */
#ifndef CKPTFS_OPS_I_H
#define CKPTFS_OPS_I_H

#include "ns_i.h"

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
	 * (closer_died): the writer died with the file open, which is then
	 * marked cut short at once (marked).  A child that inherited the fd
	 * and died is followed by its parent's own close, which lifts the
	 * mark (io.c, judge_close()). */
	pid_t died_pid;           /* 0: the last close was a normal one */
	char died_why[48];
	int marked;               /* this open file's dying close marked its
				   * file (struct fs_inode.cut_marks) */
	unsigned mark_gen;        /* in->cut_gen then: void once it moved */
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

/* The file system of the current FUSE request. */
static inline struct ckptfs *fs_get(void)
{
	return fuse_get_context()->private_data;
}

/* closer.c: 1 if pid is exiting after a signal or with a non-zero status
 * (why says which), 0 if not or if it cannot tell. */
int closer_died(pid_t pid, char *why, size_t cap);
/* hk.c: the housekeeping thread (autocommit, failed versions, changes made
 * in ckptd behind the mount's back). */
int hk_start(struct ckptfs *fs);
void hk_stop(struct ckptfs *fs);

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

/* ---- operations ---------------------------------------------------------- */

/* nsops.c: the namespace */
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
/* symbolic links: files marked CKPT_ATTR_IFLNK (attr.c says how) */
int fs_symlink(const char *target, const char *path);
int fs_readlink(const char *path, char *buf, size_t size);
int fs_setxattr(const char *path, const char *name, const char *value,
		size_t size, int flags);
int fs_getxattr(const char *path, const char *name, char *value, size_t size);
int fs_listxattr(const char *path, char *list, size_t size);
int fs_removexattr(const char *path, const char *name);
/* Set (value) or remove (value NULL) name on n, a name of the held ver,
 * in ckptd and in the mirror; any name (the callers check it:
 * CKPT_XATTR_FAILED is the mount's own).  flags: XATTR_CREATE,
 * XATTR_REPLACE.  ver->ns held (read or write), n pinned (n->nopen); not
 * fs->mu.  0 or -errno / a ckpt error. */
int xattr_node_change(struct ckptfs *fs, struct fs_version *ver,
		      struct fs_node *n, const char *name, const void *value,
		      size_t size, int flags);
/* Remove name from n's attributes in the mirror only: ckptd dropped it
 * itself (CKPT_XATTR_FAILED at a truncate to 0).  fs->mu held. */
void xattr_node_forget_locked(struct fs_node *n, const char *name);

#endif

