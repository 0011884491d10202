/*
 * io.c - open files: create, open, read, write, truncate, flush, fsync,
 * release.
 *
 * Three kinds of handle (struct fs_handle):
 *
 *   H_NODE    a file of a version this mount holds.  A write is one
 *             ckpt_write(): one copy from the FUSE buffer into staging, no
 *             wait for the disk.  The file's size is kept in the mirror, so
 *             getattr while writing is exact and free.  Opened write-only
 *             it uses direct_io (checkpoints are written once and read
 *             rarely; the page cache only costs a copy, and a write-only
 *             file cannot be mapped anyway); opened for reading it uses the
 *             page cache, so that mmap works, shared writable mappings
 *             included (the kernel writes dirty pages back through
 *             fs_write).  Reads go to ckpt_read() on the same connection,
 *             which first waits for the writes already sent.
 *   H_READ    a file of any other version: read-only.  A committed version
 *             is immutable, so its files use the page cache (keep_cache) and
 *             reads are served from a per-handle window of FS_READ_WINDOW
 *             bytes, since ckptd verifies whole records and a 128 KiB
 *             read-ahead would otherwise re-read and re-check each record.
 *   H_MARKER  the .commit marker.  Creating it at a version's root commits
 *             the version; the file is not stored, and what is written to it
 *             vanishes.  In a committed version it exists (empty) and may be
 *             opened and "touched" again.
 *
 * fsync: with fsync=local (the default), ckpt_sync(): the version's bytes
 * are in ckptd's store (an open version never survives a ckptd crash; commit
 * is what does).  On a committed version, fsync waits for LOCAL.  With
 * fsync=staged, only the hand-over to ckptd is checked.
 *
 * Layer: the operations (ops_i.h): FUSE's create, open, read, write,
 * truncate, flush, release, fsync, fallocate, mknod, symlink and readlink.
 * It calls down into the namespace (vers.c, tree.c, attr.c, path.c), the
 * write-behind (wb_*() on the version's struct fs_wb and the file's slot
 * in->wb) and the connections (conn.c, srv.c); and, in its own layer, dir.c
 * (dir_path), inval.c and closer.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_i.h"

static struct fs_handle *handle_new(enum fs_hkind kind)
{
	struct fs_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->kind = kind;
	pthread_mutex_init(&h->mu, NULL);
	return h;
}

static void handle_free(struct fs_handle *h)
{
	pthread_mutex_destroy(&h->mu);
	free(h->win);
	free(h);
}

/* Attach h to node of ver (node->nopen already counts it); fs->mu held. */
static void attach_locked(struct fs_handle *h, struct fs_version *ver,
			  struct fs_node *node)
{
	ver_get_locked(ver);
	ver->nopen++;
	ver_touch_locked(ver);
	h->ver = ver;
	h->node = node;
}

static int set_handle(struct fuse_file_info *fi, struct fs_handle *h)
{
	if (!h)
		return -ENOMEM;
	fi->fh = (uintptr_t)h;
	return 0;
}

/* ---- opening ------------------------------------------------------------- */

/* n was truncated to 0 (ckpt_truncate()), to be rewritten from offset 0:
 * a mark that it may be cut short (mark_cut_short()) goes; ckptd dropped
 * its own at the truncate (ckpt.h).  fs->mu held. */
static void cut_short_forget_locked(struct fs_version *ver, struct fs_node *n)
{
	n->in->cut_marks = 0;
	n->in->cut_gen++;       /* the handles' marks are void */
	if (!inode_cut_short_locked(n->in))
		return;
	xattr_node_forget_locked(n, CKPT_XATTR_FAILED);
	fs_log(FUSE_LOG_INFO, "version %s/%s: file %s truncated to 0: no longer marked cut short",
	       ver->job, ver->name, n->name);
}

/*
 * Open (or with create, create) p->file in a held version.  A new file is
 * made known to ckptd at once (ckpt_truncate to 0) so that an empty file
 * is part of the version.
 */
static int open_held(struct ckptfs *fs, struct fs_version *ver,
		     const struct fs_path *p, struct fuse_file_info *fi,
		     int create, mode_t mode)
{
	char fpath[CKPT_PATH_MAX2 + 1];
	struct ckpt_attr a;
	int writable = (fi->flags & O_ACCMODE) != O_RDONLY;
	int trunc = writable && (fi->flags & O_TRUNC);
	struct fs_handle *h = handle_new(H_NODE);
	struct fs_inval iv = { .n = 0 };
	struct fs_node *dir, *n = NULL;
	const char *base;
	int ret, made = 0, pinned = 0;

	if (!h)
		return -ENOMEM;
	h->writable = writable;
	/* A create or a truncate asks ckptd anyway; a plain open for writing
	 * asks whether the version was committed by name meanwhile. */
	if (writable && !create && !trunc && ver_sealed_elsewhere(fs, ver)) {
		handle_free(h);
		return -CKPT_ESEALED;
	}
	pthread_rwlock_rdlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = writable ? ver_writable_locked(ver) : 0;
	if (ret == 0)
		ret = tree_parent(&ver->tree, p, &dir, &base);
	if (ret == 0) {
		n = tree_child_any(&ver->tree, dir, base);
		if (n && n->is_dir)
			ret = -EISDIR;
		else if (n && create && (fi->flags & O_EXCL))
			ret = -EEXIST;
		else if (!n && !create)
			ret = -ENOENT;
		else if (!n)
			made = (ret = tree_add(&ver->tree, dir, base, 0, &n)) == 0;
	}
	if (ret == 0) {
		n->nopen++;     /* pinned while ckptd is asked */
		pinned = 1;
		/* ckptd's path: a hidden file is at the root there */
		ret = tree_path(n, fpath, sizeof(fpath));
		ret = ret < 0 ? ret : 0;
	}
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0 && trunc)
		ret = wb_flush_node(fs, &ver->wb, &n->in->wb, 0);
	if (ret == 0 && (made || trunc))
		ret = ver_failed(fs, ver, ckpt_truncate(ver->v, fpath, 0));
	if (ret == 0 && made) {     /* its mode, owner and times */
		attr_new(&a, mode);
		ret = ver_failed(fs, ver, ckpt_setattr(ver->v, fpath, &a));
	}
	if (ret == 0 && trunc && !made)     /* FUSE_CAP_HANDLE_KILLPRIV */
		ret = attr_kill_priv(fs, ver, n, 0);
	pthread_mutex_lock(&fs->mu);
	if (pinned && ret < 0) {
		n->nopen--;
		if (made && !n->detached)
			tree_remove(&ver->tree, n);
	} else if (pinned) {
		if (made || trunc)
			n->in->size = 0;
		if (made)
			n->in->attr = a;
		else if (trunc)
			attr_written(n->in);
		if (trunc && !made)
			cut_short_forget_locked(ver, n);
		if (trunc)
			inval_note_locked(&iv, ver, n->in, n);
		attach_locked(h, ver, n);
		ver->nwopen += writable;
	}
	pthread_mutex_unlock(&fs->mu);
	pthread_rwlock_unlock(&ver->ns);
	inval_send(&iv);
	if (ret < 0) {
		handle_free(h);
		return ret;
	}
	/* Per open file: one that cannot be mapped (mmap needs read access,
	 * so O_WRONLY: dd, cp, np.save, torch.save) keeps the direct 1 MiB
	 * path; one open for reading goes through the page cache, so that
	 * shared and private mappings work (docs/design.md, ckptfs: mmap). */
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		fi->direct_io = 1;
	return set_handle(fi, h);
}

/* The marker: commit the held version ver, or open the committed marker. */
static int open_marker(struct ckptfs *fs, struct fs_version *ver,
		       const struct fs_path *p, struct fuse_file_info *fi)
{
	struct fs_handle *h;
	int ret = ver ? ver_commit(fs, ver, "marker " FS_MARKER, 0) : 0;

	if (ret < 0)
		return ret;
	h = handle_new(H_MARKER);
	if (h) {
		strcpy(h->job, p->job);
		strcpy(h->version, ver ? ver->name : p->vdisp);
	}
	fi->direct_io = 1;
	return set_handle(fi, h);
}

/* A file of a version this mount does not hold: read-only. */
static int open_server(struct ckptfs *fs, const struct fs_path *p,
		       struct fuse_file_info *fi)
{
	int writable = (fi->flags & O_ACCMODE) != O_RDONLY;
	struct ckpt_version_info info;
	struct ckpt_file_info file;
	struct fs_handle *h;
	int ret;

	ret = ver_remote(fs, p->job, p->vdisp, &info);
	if (ret == 0 && path_is_marker(p) && srv_committed(&info))
		return open_marker(fs, NULL, p, fi);
	if (ret == 0 && writable)
		ret = -EROFS;
	if (ret == 0)
		ret = srv_file(fs, p->job, p->vdisp, p->file, &file);
	if (ret < 0)
		return ret;
	h = handle_new(H_READ);
	if (!h)
		return -ENOMEM;
	h->committed = srv_committed(&info);
	h->size = file.size;
	strcpy(h->job, p->job);
	strcpy(h->version, p->vdisp);
	strcpy(h->path, p->file);
	/* A committed file never changes: its cache outlives the open.  One
	 * of a version being written elsewhere is cached too (mmap works), but
	 * dropped at each open. */
	if (h->committed)
		fi->keep_cache = 1;
	return set_handle(fi, h);
}

static int do_open(const char *path, struct fuse_file_info *fi, int create,
		   mode_t mode)
{
	struct ckptfs *fs = fs_get();
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME && !create ? -ENOENT : ret;
	if (p.kind != P_FILE)
		return create ? -EPERM : -EISDIR;
	ver = ver_find(fs, p.job, p.vdisp);
	if (ver && path_is_marker(&p))
		ret = open_marker(fs, ver, &p, fi);
	else if (ver)
		ret = open_held(fs, ver, &p, fi, create, mode);
	else if (create && !path_is_marker(&p))
		ret = ver_not_held(fs, &p);
	else
		ret = open_server(fs, &p, fi);
	ver_put(fs, ver);
	return ret;
}

int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return fs_errno(do_open(path, fi, 1, mode));
}

int fs_open(const char *path, struct fuse_file_info *fi)
{
	return fs_errno(do_open(path, fi, 0, 0));
}

/* ---- reading ------------------------------------------------------------- */

/* Read from a held version, after the writes already sent. */
static int read_held(struct ckptfs *fs, struct fs_handle *h, char *buf,
		     size_t size, off_t off)
{
	char path[CKPT_PATH_MAX2 + 1];
	struct fs_version *ver = h->ver;
	size_t got = 0;
	int ret, gone;

	pthread_rwlock_rdlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = tree_node_path(h->node, path, sizeof(path));
	gone = ret == -ENOENT;      /* a file with no name reads as empty */
	ret = gone ? 0 : ret;
	pthread_mutex_unlock(&fs->mu);
	if (ret >= 0 && !gone)
		ret = wb_flush_node(fs, &ver->wb, &h->node->in->wb, 0);
	if (ret >= 0 && !gone)
		ret = conn_lease(fs, ver->conn);
	if (ret >= 0 && !gone) {
		ret = ckpt_read(ver->conn->c, ver->job, ver->name, path, buf,
				size, off, &got);
		conn_check(fs, ver->conn, ret);
	}
	pthread_rwlock_unlock(&ver->ns);
	return ret < 0 ? ret : (int)got;
}

/* One read of the handle's file on the R connection, which first takes a
 * lease (interruptibly). */
static int read_server(struct ckptfs *fs, struct fs_handle *h, void *buf,
		       size_t size, uint64_t off, size_t *got)
{
	struct fs_conn *conn;
	int ret;

	*got = 0;
	ret = conn_get(fs, CONN_R, &conn);
	if (ret == 0) {
		ret = conn_lease(fs, conn);
		conn_put(fs, conn, ret);
	}
	if (ret == -EINTR || ret == -ENOBUFS)
		return ret;
	return srv_read(fs, h->job, h->version, h->path, buf, size, off, got);
}

/* Read a committed file (immutable, of known size) through the handle's
 * window. */
static int read_window(struct ckptfs *fs, struct fs_handle *h, char *buf,
		       size_t size, uint64_t off)
{
	size_t done = 0, n, got, want;
	int ret = 0;

	if (off >= h->size)
		return 0;
	if (size > h->size - off)
		size = h->size - off;
	pthread_mutex_lock(&h->mu);
	if (!h->win)
		h->win = malloc(FS_READ_WINDOW);
	if (!h->win) {
		pthread_mutex_unlock(&h->mu);
		return -ENOMEM;
	}
	while (done < size) {
		uint64_t at = off + done;

		if (at < h->win_off || at >= h->win_off + h->win_len) {
			h->win_off = at & ~(uint64_t)(FS_MAX_WRITE - 1);
			want = h->size - h->win_off < FS_READ_WINDOW ?
			       h->size - h->win_off : FS_READ_WINDOW;
			h->win_len = 0;
			ret = read_server(fs, h, h->win, want, h->win_off,
					  &got);
			if (ret < 0)
				break;
			h->win_len = got;
			if (at >= h->win_off + got)
				break;      /* shorter than it said */
		}
		n = h->win_off + h->win_len - at;
		n = n < size - done ? n : size - done;
		memcpy(buf + done, h->win + (at - h->win_off), n);
		done += n;
	}
	pthread_mutex_unlock(&h->mu);
	return ret < 0 ? ret : (int)done;
}

int fs_read(const char *path, char *buf, size_t size, off_t off,
	    struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	size_t got;
	int ret;

	(void)path;
	if (off < 0)
		return -EINVAL;
	switch (h->kind) {
	case H_MARKER:
		return 0;
	case H_NODE:
		return fs_errno(read_held(fs, h, buf, size, off));
	case H_READ:
		if (h->committed && size < FS_READ_WINDOW)
			return fs_errno(read_window(fs, h, buf, size, off));
		ret = read_server(fs, h, buf, size, off, &got);
		return ret < 0 ? fs_errno(ret) : (int)got;
	}
	return -EBADF;
}

/* The size of the file of an H_READ handle: kept when committed, else
 * asked. */
static int read_size(struct ckptfs *fs, struct fs_handle *h, uint64_t *size)
{
	struct ckpt_file_info f;
	int ret;

	if (h->committed) {
		*size = h->size;
		return 0;
	}
	ret = srv_file(fs, h->job, h->version, h->path, &f);
	*size = ret < 0 ? 0 : f.size;
	return ret;
}

/*
 * lseek's SEEK_DATA and SEEK_HOLE (the kernel does the others).  A file of
 * another version asks ckptd where its data is (ckpt_seek_data()), so that
 * cp and tar can leave its holes; a file this mount holds, and the
 * marker, are data to their end, as lseek(2) allows.
 */
off_t fs_lseek(const char *path, off_t off, int whence,
	       struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	uint64_t size = 0, data = 0, len = 0, at;
	int ret;

	(void)path;
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return -EINVAL;
	if (off < 0)
		return -ENXIO;
	switch (h->kind) {
	case H_MARKER:
		return -ENXIO;
	case H_NODE:
		pthread_mutex_lock(&fs->mu);
		size = h->node->in->size;
		pthread_mutex_unlock(&fs->mu);
		if ((uint64_t)off >= size)
			return -ENXIO;
		return whence == SEEK_DATA ? off : (off_t)size;
	case H_READ:
		break;
	default:
		return -EBADF;
	}
	/* a long run comes in parts: SEEK_HOLE follows it to its end */
	for (at = (uint64_t)off;; at = data + len) {
		ret = srv_seek_data(fs, h->job, h->version, h->path, at,
				    &data, &len);
		if (ret == -ENXIO)
			break;
		if (ret < 0)
			return fs_errno(ret);
		if (whence == SEEK_DATA)
			return (off_t)data;
		if (data > at)
			return (off_t)at;
	}
	if (whence == SEEK_DATA)
		return -ENXIO;
	/* no data from at on: at is in the last hole, or at the end (the
	 * runs from off reached it), or off is past the end */
	ret = read_size(fs, h, &size);
	if (ret < 0)
		return fs_errno(ret);
	return at < size ? (off_t)at : at > (uint64_t)off ? (off_t)size
							   : -ENXIO;
}

/* ---- writing ------------------------------------------------------------- */

int fs_write(const char *path, const char *buf, size_t size, off_t off,
	     struct fuse_file_info *fi)
{
	char fpath[CKPT_PATH_MAX2 + 1];
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	struct fs_version *ver;
	struct fs_inode *in;
	int ret, gone = 0, kill = 0;

	(void)path;
	if (h->kind == H_MARKER)
		return (int)size;
	if (h->kind != H_NODE || !h->writable)
		return -EBADF;
	if (off < 0)
		return -EINVAL;
	/* Past the largest file ckptd keeps: EFBIG, or as much as fits, as
	 * POSIX says; never a write ckptd refuses (that fails the version). */
	if ((uint64_t)off >= CKPT_FILE_MAX)
		return size ? -EFBIG : 0;
	if (size > CKPT_FILE_MAX - (uint64_t)off)
		size = CKPT_FILE_MAX - (uint64_t)off;
	ver = h->ver;
	in = h->node->in;
	pthread_rwlock_rdlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	if (ret == 0) {
		ret = tree_node_path(h->node, fpath, sizeof(fpath));
		gone = ret == -ENOENT;
		ret = gone ? 0 : ret;
	}
	pthread_mutex_unlock(&fs->mu);
	/* The bytes of a file with no name left go nowhere, as they would on
	 * disk. */
	if (ret >= 0 && !gone)
		ret = wb_write(fs, &ver->wb, &h->node->in->wb, fpath, buf,
			       size, off);
	if (ret >= 0) {
		pthread_mutex_lock(&fs->mu);
		if ((uint64_t)off + size > in->size)
			in->size = off + size;
		attr_written(in);
		/* Seen through its other names from the next close on
		 * (inval.c: not from a WRITE). */
		in->stale |= in->nlink > 1 || h->node->detached;
		/* Not a write-back of mapped pages: no one's write. */
		kill = !fi->writepage && attr_privs_locked(in, 0);
		ver_touch_locked(ver);
		pthread_mutex_unlock(&fs->mu);
	}
	if (kill)       /* set-id bits (FUSE_CAP_HANDLE_KILLPRIV) */
		ret = attr_kill_priv(fs, ver, h->node, 0);
	pthread_rwlock_unlock(&ver->ns);
	return ret < 0 ? fs_errno(ret) : (int)size;
}

/* Truncate node (a file of the held ver) to size; with grow, only if that
 * makes it longer (fallocate), decided under the lock that orders it with
 * writes. */
static int resize_held(struct ckptfs *fs, struct fs_version *ver,
		       struct fs_node *node, const char *file, off_t size,
		       int grow)
{
	char fpath[CKPT_PATH_MAX2 + 1];
	struct fs_inval iv = { .n = 0 };
	int ret, gone = 0;

	pthread_rwlock_wrlock(&ver->ns);
	ret = wb_flush_all(fs, &ver->wb);
	pthread_mutex_lock(&fs->mu);
	if (ret == 0)
		ret = ver_writable_locked(ver);
	if (ret == 0 && !node)
		node = tree_lookup(&ver->tree, file);
	if (ret == 0)
		ret = !node ? -ENOENT : node->is_dir ? -EISDIR : 0;
	if (ret == 0)
		gone = node->in->nlink == 0 ||
		       (grow && node->in->size >= (uint64_t)size);
	if (ret == 0 && !gone)
		ret = tree_node_path(node, fpath, sizeof(fpath));
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0 && grow && gone) {
		pthread_rwlock_unlock(&ver->ns);
		return 0;
	}
	if (ret >= 0 && !gone)
		ret = ver_failed(fs, ver, ckpt_truncate(ver->v, fpath, size));
	if (ret >= 0) {
		pthread_mutex_lock(&fs->mu);
		node->in->size = size;
		attr_written(node->in);
		if (size == 0 && !grow)
			cut_short_forget_locked(ver, node);
		inval_note_locked(&iv, ver, node->in, node);
		ver_touch_locked(ver);
		node->nopen++;  /* pinned while ckptd is asked */
		pthread_mutex_unlock(&fs->mu);
		/* set-id bits (FUSE_CAP_HANDLE_KILLPRIV) */
		ret = attr_kill_priv(fs, ver, node, 0);
		pthread_mutex_lock(&fs->mu);
		node->nopen--;
		tree_release(node);
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	inval_send(&iv);
	return ret < 0 ? ret : 0;
}

int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > CKPT_FILE_MAX)
		return -EFBIG;
	if (h && h->kind == H_NODE)
		return fs_errno(resize_held(fs, h->ver, h->node, NULL, size, 0));
	if (h)
		return h->kind == H_MARKER ? 0 : -EROFS;
	if (!path)
		return -ESTALE;
	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	if (p.kind != P_FILE)
		return -EISDIR;
	ver = ver_find(fs, p.job, p.vdisp);
	ret = ver ? resize_held(fs, ver, NULL, p.file, size, 0)
		  : ver_not_held(fs, &p);
	ver_put(fs, ver);
	return fs_errno(ret);
}

/*
 * fallocate: mode 0 makes the file at least off + len long (the new range
 * reads as zeros, as it would from allocated blocks), FALLOC_FL_KEEP_SIZE
 * changes nothing.  Neither reserves store space: ckptd claims space when
 * bytes are written, and a full store fails the version then (ENOSPC), so
 * fallocate cannot promise a later write will not.  Punching holes,
 * collapsing, zeroing ranges: EOPNOTSUPP.
 */
int fs_fallocate(const char *path, int mode, off_t off, off_t len,
		 struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);

	(void)path;
	if (mode & ~FALLOC_FL_KEEP_SIZE)
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0)
		return -EINVAL;
	if ((uint64_t)off + (uint64_t)len > CKPT_FILE_MAX)
		return -EFBIG;
	if (!h || h->kind == H_READ)
		return -EROFS;
	if (h->kind == H_MARKER || (mode & FALLOC_FL_KEEP_SIZE))
		return 0;
	if (!h->writable)
		return -EBADF;
	return fs_errno(resize_held(fs, h->ver, h->node, NULL, off + len, 1));
}

/*
 * mknod: a regular file is a create; a FIFO, socket or device node is an
 * empty file whose mode says its type and rdev its device: kept as
 * metadata (docs/design.md), never opened through the mount.
 */
int fs_mknod(const char *path, mode_t mode, dev_t rdev)
{
	struct fuse_file_info fi = { .flags = O_WRONLY | O_CREAT | O_EXCL };
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE };
	struct fs_handle *h;
	int ret, ret2;

	switch (mode & S_IFMT) {
	case S_IFREG:
		break;
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		a.mode = (mode & S_IFMT) | (mode & 07777);
		a.rdev = rdev;
		break;
	default:
		return -EINVAL;
	}
	ret = fs_create(path, mode & 07777, &fi);
	if (ret < 0)
		return ret;
	h = fs_handle(&fi);
	if (a.mode && h->kind == H_NODE) {
		pthread_rwlock_rdlock(&h->ver->ns);
		ret = fs_errno(attr_send(fs_get(), h->ver, h->node, &a));
		pthread_rwlock_unlock(&h->ver->ns);
	}
	ret2 = fs_flush(NULL, &fi);
	fs_release(NULL, &fi);
	return ret < 0 ? ret : ret2;
}

/* ---- flush, fsync, release ----------------------------------------------- */

/* Note at each close whether the closing task is dying (closer.c). */
static void note_closer(struct fs_handle *h)
{
	pid_t pid = fuse_get_context()->pid;

	h->died_pid = closer_died(pid, h->died_why, sizeof(h->died_why)) ?
		      pid : 0;
}

/* Was the last close of h, a file open for writing, a dying writer's
 * (killed, or exiting non-zero), with the file a name of an open version
 * to mark?  fs->mu held. */
static int writer_died_locked(const struct fs_handle *h)
{
	return h->writable && h->died_pid && h->ver->state == V_OPEN &&
	       h->node->in->nlink > 0;
}

/*
 * Mark h's file cut short (CKPT_XATTR_FAILED, in ckptd and the mirror):
 * it stays readable, and no commit of its version is taken until it is
 * removed or truncated to 0 (ckpt.h); the rest of the version goes on.
 * Done during the dying close (FLUSH), which the dying task waits for, so
 * that a commit by name sent once its death is seen finds the mark.  The
 * version's namespace is held for writing: a truncate to 0 (which lifts
 * the mark) is ordered before or after it, in ckptd and the mirror alike.
 * Where the mark cannot be set, the version fails instead: a file that may
 * be cut short is never committed.  h's node is pinned by h.
 */
static void mark_cut_short(struct ckptfs *fs, struct fs_handle *h)
{
	struct fs_version *ver = h->ver;
	char why[96];
	int ret;

	snprintf(why, sizeof(why), "pid %d %s", (int)h->died_pid,
		 h->died_why);
	pthread_rwlock_wrlock(&ver->ns);
	ret = xattr_node_change(fs, ver, h->node, CKPT_XATTR_FAILED, why,
				strlen(why), 0);
	if (ret == 0) {
		pthread_mutex_lock(&fs->mu);
		h->marked = 1;
		h->mark_gen = h->node->in->cut_gen;
		h->node->in->cut_marks++;
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	if (ret == 0) {
		fs_log(FUSE_LOG_ERR, "version %s/%s: file %s may be cut short: its writer %s with it open; the version commits once it is removed or rewritten from offset 0",
		       ver->job, ver->name, h->node->name, why);
		return;
	}
	pthread_mutex_lock(&fs->mu);
	if (ver->state == V_OPEN) {
		ver_fail_locked(ver, -CKPT_EABORTED);
		fs_log(FUSE_LOG_ERR, "version %s/%s failed: its writer %s with %s open for writing, and the file could not be marked (%s)",
		       ver->job, ver->name, why, h->node->name,
		       ckpt_strerror(ret));
	}
	pthread_mutex_unlock(&fs->mu);
	if (ret != -CKPT_ESEALED)
		ckpt_abort(ver->v);     /* ckptd fails it too */
}

/* Does h's mark stand (it set one, and no truncate to 0 lifted it since:
 * such a mark is void, and its later dying close marks anew)?  fs->mu. */
static int handle_mark_live_locked(const struct fs_handle *h)
{
	return h->marked && h->mark_gen == h->node->in->cut_gen;
}

/*
 * A normal close of h followed the dying one that marked its file: the
 * dead task was a child that inherited the descriptor, and the writer is
 * the one closing now, as the verdict at the last close always was.  The
 * mark goes unless another open file's dying close marked it too, or a
 * truncate to 0 took it already.
 */
static void unmark_cut_short(struct ckptfs *fs, struct fs_handle *h)
{
	struct fs_version *ver = h->ver;
	struct fs_inode *in = h->node->in;
	int last, ret;

	pthread_rwlock_wrlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	last = 0;
	if (handle_mark_live_locked(h)) {   /* not lifted by a truncate */
		last = in->cut_marks == 1 && inode_cut_short_locked(in) &&
		       ver->state == V_OPEN;
		if (in->cut_marks)
			in->cut_marks--;
	}
	h->marked = 0;
	pthread_mutex_unlock(&fs->mu);
	ret = last ? xattr_node_change(fs, ver, h->node, CKPT_XATTR_FAILED,
				       NULL, 0, 0) : 0;
	pthread_rwlock_unlock(&ver->ns);
	if (last && ret == 0)
		fs_log(FUSE_LOG_INFO, "version %s/%s: file %s: no longer marked cut short: a normal close by pid %d followed the dying one (a child's)",
		       ver->job, ver->name, h->node->name,
		       (int)fuse_get_context()->pid);
	else if (last && ret != -ENODATA)
		fs_log(FUSE_LOG_WARNING, "version %s/%s: file %s stays marked cut short: the mark could not be lifted (%s)",
		       ver->job, ver->name, h->node->name, ckpt_strerror(ret));
}

/* Judge a close of h (FLUSH) or its end (RELEASE): mark its file at a
 * dying writer's close, lift the mark at a normal one that follows. */
static void judge_close(struct ckptfs *fs, struct fs_handle *h)
{
	int died, marked;

	pthread_mutex_lock(&fs->mu);
	died = writer_died_locked(h);
	marked = handle_mark_live_locked(h);
	pthread_mutex_unlock(&fs->mu);
	if (died && !marked)
		mark_cut_short(fs, h);
	else if (!h->died_pid && marked)
		unmark_cut_short(fs, h);
}

/* close(): report an error of the version's background writes. */
int fs_flush(const char *path, struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	struct fs_inval iv = { .n = 0 };
	struct fs_inode *in;
	int ret;

	(void)path;
	if (h->kind != H_NODE || !h->writable)
		return 0;
	in = h->node->in;
	pthread_rwlock_rdlock(&h->ver->ns);
	ret = wb_flush_node(fs, &h->ver->wb, &h->node->in->wb, 1);
	if (ret == 0)   /* before close() returns: a utimensat after wins */
		ret = attr_flush_mtime(fs, h->ver, h->node);
	pthread_mutex_lock(&fs->mu);
	/* Written since: its names show it now (all of them, this one too:
	 * the writes may have come through another; FLUSH holds nothing of
	 * the kernel's). */
	if (in->stale) {
		in->stale = 0;
		inval_note_locked(&iv, h->ver, in, NULL);
	}
	pthread_mutex_unlock(&fs->mu);
	pthread_rwlock_unlock(&h->ver->ns);
	inval_send(&iv);
	pthread_mutex_lock(&fs->mu);
	if (ret == 0 && h->ver->state == V_FAILED)
		ret = h->ver->err;
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0)
		ret = ver_failed(fs, h->ver, ckpt_flush(h->ver->v));
	note_closer(h);
	judge_close(fs, h);
	return fs_errno(ret);
}

/* Wait until the committed version job/version is LOCAL (fsync=local). */
static int sync_committed(struct ckptfs *fs, const char *job,
			  const char *version)
{
	return fs->fsync_staged ? 0 : srv_wait_local(fs, job, version);
}

/* fsync of a held version: its bytes in ckptd's store (or handed over). */
static int sync_held(struct ckptfs *fs, struct fs_version *ver)
{
	enum fs_vstate state;
	int ret;

	pthread_mutex_lock(&fs->mu);
	state = ver->state;
	ret = state == V_FAILED ? ver->err : 0;
	pthread_mutex_unlock(&fs->mu);
	if (ret < 0)
		return ret;
	if (state == V_DONE)
		return sync_committed(fs, ver->job, ver->name);
	/* Bytes that find no staging stay buffered: fsync says so, and the
	 * version does not fail (a signal to the program, a full staging). */
	pthread_rwlock_rdlock(&ver->ns);
	ret = wb_send_all(fs, &ver->wb);
	pthread_rwlock_unlock(&ver->ns);
	if (ret == 0)
		ret = fs->fsync_staged ? ckpt_flush(ver->v) : ckpt_sync(ver->v);
	if (ret == -CKPT_ESEALED)   /* committed meanwhile */
		return sync_committed(fs, ver->job, ver->name);
	return ver_failed(fs, ver, ret);
}

int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);

	(void)path;
	(void)datasync;
	switch (h->kind) {
	case H_NODE:
		return fs_errno(sync_held(fs, h->ver));
	case H_MARKER:
		return fs_errno(sync_committed(fs, h->job, h->version));
	case H_READ:
		return h->committed ? fs_errno(sync_committed(fs, h->job,
							      h->version)) : 0;
	}
	return 0;
}

int fs_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	(void)datasync;
	path = dir_path(path, fi);
	if (!path || path_parse(fs, path, &p) < 0 || p.kind < P_VERSION)
		return 0;
	ver = ver_find(fs, p.job, p.vdisp);
	ret = ver ? sync_held(fs, ver) : 0;
	ver_put(fs, ver);
	return fs_errno(ret);
}

int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	struct fs_version *ver = h->ver;
	int hidden;

	(void)path;
	if (h->kind == H_NODE) {
		/* The last close of an unlinked file: its bytes go now (libfuse
		 * cannot name it once its directory is gone). */
		pthread_mutex_lock(&fs->mu);
		hidden = tree_is_hidden(&ver->tree, h->node) &&
			 h->node->nopen == 1;
		pthread_mutex_unlock(&fs->mu);
		if (hidden)
			ver_drop_hidden(fs, ver, h->node);
		judge_close(fs, h);     /* where no FLUSH came */
		pthread_mutex_lock(&fs->mu);
		h->node->nopen--;
		tree_release(h->node);
		ver->nopen--;
		ver->nwopen -= h->writable;
		if (h->writable)
			pthread_cond_broadcast(&fs->closed_cv);
		ver_touch_locked(ver);   /* autocommit counts from the close */
		pthread_mutex_unlock(&fs->mu);
		ver_put(fs, ver);
	}
	handle_free(h);
	return 0;
}

/*
 * symlink: a file of the held version holding target, then marked a link.
 * Made through the ordinary create and write, so it is ordered with the
 * version's other writes and committed like any file.
 */
int fs_symlink(const char *target, const char *path)
{
	struct fuse_file_info fi = { .flags = O_WRONLY | O_CREAT | O_EXCL };
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE,
			       .mode = CKPT_ATTR_IFLNK | 0777 };
	struct fs_handle *h;
	size_t len = strlen(target);
	int ret, ret2;

	if (len == 0)
		return -ENOENT;
	if (len >= 4096)
		return -ENAMETOOLONG;
	ret = fs_create(path, 0777, &fi);
	if (ret < 0)
		return ret;
	h = fs_handle(&fi);
	ret = fs_write(NULL, target, len, 0, &fi);
	if (ret >= 0 && h->kind == H_NODE) {
		pthread_rwlock_rdlock(&h->ver->ns);
		ret = fs_errno(attr_send(fs_get(), h->ver, h->node, &a));
		pthread_rwlock_unlock(&h->ver->ns);
	}
	ret2 = fs_flush(NULL, &fi);
	fs_release(NULL, &fi);
	return ret < 0 ? ret : ret2 < 0 ? ret2 : 0;
}

/* readlink: the link's bytes, NUL-terminated, cut to size as POSIX says. */
int fs_readlink(const char *path, char *buf, size_t size)
{
	struct fuse_file_info fi = { .flags = O_RDONLY };
	int ret;

	if (size == 0)
		return -EINVAL;
	ret = fs_open(path, &fi);
	if (ret < 0)
		return ret;
	ret = fs_read(NULL, buf, size - 1, 0, &fi);
	fs_release(NULL, &fi);
	if (ret < 0)
		return ret;
	buf[ret] = '\0';
	return 0;
}
