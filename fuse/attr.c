/*
 * attr.c - POSIX attributes in ckptfs: what getattr shows, and what create,
 * chmod, chown, utimensat and writes send to ckptd.
 *
 * A file's mode, uid, gid, atime and mtime live in the version's manifest
 * (ckpt_setattr(), struct ckpt_attr); ckptd stamps ctime.  The mirror of a
 * version this mount writes keeps a copy in each file's inode (tree.c),
 * shared by its hard links, so getattr stays free.  A field never set
 * shows the old defaults: the job's owner, gid 0, 0600 (0700 for
 * directories), the time of the last change or of the seal.
 * A committed version shows the modes minus every write bit: it is
 * read-only whatever its modes said (writes are EROFS anyway).
 *
 * A symbolic link is a file whose bytes are its target and whose mode says
 * CKPT_ATTR_IFLNK (io.c: fs_symlink, fs_readlink).  FIFOs, sockets and device
 * nodes are empty files whose mode says their type (and rdev their device):
 * metadata only, the kernel never opens them through the mount (FIFOs are
 * pipes of the kernel's; devices cannot be opened on a nodev mount).  A
 * hard link (nsops.c, fs_link) is a second name of the same inode, so what is
 * set through one name shows through every other.
 *
 * A directory's attributes are kept in the mirror while the version is
 * open through this mount, and sent as its directory entry
 * (CKPT_ATTR_IFDIR) at the commit (vers.c, send_dirs).
 *
 * Set-id bits: libfuse leaves clearing them to the file system
 * (FUSE_CAP_HANDLE_KILLPRIV), so a write, truncate or chown does it here
 * (attr_kill_priv), with the kernel's rules for a local file.
 *
 * The kernel checks who may change what (default_permissions: chmod by the
 * owner, chown of the uid by root only and of the gid by the owner to one
 * of its groups, explicit times by the owner), so ckptfs only records.
 *
 * Layer: the namespace (ns_i.h).  It keeps attributes in the mirror and
 * sends them on the version's handle; it calls only the namespace and the
 * connections (fs_errno, fs_log).  What getattr shows of a held node
 * (node_attr) is here, below the operations and inomap.c that use it.
 */
#include <errno.h>
#include <string.h>

#include "ns_i.h"

static struct timespec ns_ts(uint64_t ns)
{
	struct timespec t = { .tv_sec = ns / 1000000000ull,
			      .tv_nsec = ns % 1000000000ull };
	return t;
}

uint64_t attr_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

void attr_apply(struct stat *st, const struct ckpt_attr *a, int rw)
{
	mode_t mode, type;

	type = a->set & CKPT_ATTR_MODE ? a->mode & CKPT_ATTR_IFMT : 0;
	if (type == CKPT_ATTR_IFLNK) {
		st->st_mode = S_IFLNK | 0777;   /* a link's mode means nothing */
	} else if (a->set & CKPT_ATTR_MODE) {
		mode = a->mode & 07777;
		st->st_mode = (type ? type : (st->st_mode & S_IFMT)) |
			      (rw ? mode : mode & ~0222);
	}
	if (type && type != CKPT_ATTR_IFLNK) {  /* special: metadata only */
		st->st_rdev = a->rdev;
		st->st_size = 0;
		st->st_blocks = 0;
	}
	if (a->set & CKPT_ATTR_UID)
		st->st_uid = a->uid;
	if (a->set & CKPT_ATTR_GID)
		st->st_gid = a->gid;
	if (a->set & CKPT_ATTR_ATIME)
		st->st_atim = ns_ts(a->atime_ns);
	if (a->set & CKPT_ATTR_MTIME)
		st->st_mtim = ns_ts(a->mtime_ns);
	if (a->ctime_ns)
		st->st_ctim = ns_ts(a->ctime_ns);
	else if (a->set & CKPT_ATTR_MTIME)
		st->st_ctim = st->st_mtim;
}

/* Merge the fields a sets into in's copy; fs->mu held. */
static void attr_merge(struct fs_inode *in, const struct ckpt_attr *a)
{
	struct timespec now;

	if ((a->set & CKPT_ATTR_MODE) && (a->mode & CKPT_ATTR_IFMT)) {
		in->attr.mode = a->mode;        /* its type, once made */
		in->attr.rdev = a->rdev;
	} else if (a->set & CKPT_ATTR_MODE) {   /* chmod: the type stays */
		in->attr.mode = a->mode | (in->attr.mode & CKPT_ATTR_IFMT);
	}
	if (a->set & CKPT_ATTR_UID)
		in->attr.uid = a->uid;
	if (a->set & CKPT_ATTR_GID)
		in->attr.gid = a->gid;
	if (a->set & CKPT_ATTR_ATIME)
		in->attr.atime_ns = a->atime_ns;
	if (a->set & CKPT_ATTR_MTIME) {
		in->attr.mtime_ns = a->mtime_ns;
		in->mtime_dirty = 0;    /* an explicit time wins */
	}
	in->attr.set |= a->set;
	clock_gettime(CLOCK_REALTIME, &now);
	in->attr.ctime_ns = attr_ns(&now);
}

int attr_send(struct ckptfs *fs, struct fs_version *ver, struct fs_node *n,
	      const struct ckpt_attr *a)
{
	char path[CKPT_PATH_MAX2 + 1];
	int ret, local;

	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	local = n->is_dir || n->in->nlink == 0;
	if (ret == 0 && !local)
		ret = tree_node_path(n, path, sizeof(path));
	pthread_mutex_unlock(&fs->mu);
	if (ret >= 0 && !local)
		ret = ver_failed(fs, ver, ckpt_setattr(ver->v, path, a));
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&fs->mu);
	attr_merge(n->in, a);
	pthread_mutex_unlock(&fs->mu);
	return 0;
}

int attr_privs_locked(const struct fs_inode *in, int chown)
{
	uint32_t mode = in->attr.mode;

	if (!(in->attr.set & CKPT_ATTR_MODE) ||
	    (mode & CKPT_ATTR_IFMT) == CKPT_ATTR_IFDIR)
		return 0;
	if (!(mode & S_ISUID) &&
	    (mode & (S_ISGID | S_IXGRP)) != (S_ISGID | S_IXGRP))
		return 0;
	return chown || fuse_get_context()->uid != 0;   /* CAP_FSETID */
}

int attr_kill_priv(struct ckptfs *fs, struct fs_version *ver,
		   struct fs_node *n, int chown)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE };
	int kill;

	pthread_mutex_lock(&fs->mu);
	kill = !n->is_dir && attr_privs_locked(n->in, chown);
	a.mode = n->in->attr.mode & 07777 & ~S_ISUID;
	if (a.mode & S_IXGRP)
		a.mode &= ~S_ISGID;
	pthread_mutex_unlock(&fs->mu);
	return kill ? attr_send(fs, ver, n, &a) : 0;
}

void attr_written(struct fs_inode *in)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	in->mtime = now;
	in->attr.mtime_ns = attr_ns(&now);
	in->attr.ctime_ns = in->attr.mtime_ns;
	in->attr.set |= CKPT_ATTR_MTIME;
	in->mtime_dirty = 1;
}

void attr_changed(struct fs_inode *in)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	in->attr.ctime_ns = attr_ns(&now);
}

int attr_flush_mtime(struct ckptfs *fs, struct fs_version *ver,
		     struct fs_node *n)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MTIME };
	int dirty;

	pthread_mutex_lock(&fs->mu);
	dirty = n->in->mtime_dirty;
	a.mtime_ns = n->in->attr.mtime_ns;
	pthread_mutex_unlock(&fs->mu);
	return dirty ? attr_send(fs, ver, n, &a) : 0;
}

void attr_new(struct ckpt_attr *a, mode_t mode)
{
	struct fuse_context *ctx = fuse_get_context();
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	memset(a, 0, sizeof(*a));
	a->set = CKPT_ATTR_MODE | CKPT_ATTR_GID | CKPT_ATTR_ATIME |
		 CKPT_ATTR_MTIME;
	a->mode = mode & 07777;
	a->gid = ctx->gid;
	a->atime_ns = a->mtime_ns = attr_ns(&now);
	a->uid = ctx->uid;
	a->set |= CKPT_ATTR_UID;
}

void attr_fill(struct stat *st, mode_t mode, uint32_t uid, uint64_t size,
	       const struct timespec *t)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = mode;
	st->st_nlink = S_ISDIR(mode) ? 2 : 1;
	st->st_uid = uid;
	st->st_gid = 0;
	st->st_size = size;
	st->st_blksize = FS_BLKSIZE;
	st->st_blocks = (size + 511) / 512;
	st->st_atim = st->st_mtim = st->st_ctim = *t;
}

/* A node of a held version; fs->mu held. */
void node_attr(const struct fs_version *ver, const struct fs_node *n,
	       struct stat *st)
{
	const struct fs_inode *in = n->in;
	int rw = ver->state == V_OPEN;

	if (n->is_dir) {
		attr_fill(st, S_IFDIR | (rw ? FS_MODE_DIR : FS_MODE_RODIR),
			  ver->uid, 0, &in->mtime);
	} else {
		attr_fill(st, S_IFREG | (rw ? FS_MODE_FILE : FS_MODE_ROFILE),
			  ver->uid, in->size, &in->mtime);
		st->st_nlink = tree_nlink(n);   /* 0: unlinked, still open */
	}
	st->st_ino = in->ino;
	attr_apply(st, &in->attr, rw);
}
