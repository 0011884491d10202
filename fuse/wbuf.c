/*
 * wbuf.c - write-behind of small writes.
 *
 * ckptd stores each WRITE as one checksummed record, padded to 4 KiB in
 * staging, and a read resolves a file's records one by one.  FUSE hands us
 * whatever the program wrote: 1 MiB pieces from dd or cp (st_blksize is
 * 1 MiB), but 10 KiB from tar, 8 KiB from Python's buffered files, a few
 * bytes from h5py's metadata.  Sent as they come, a 1 GB tar member becomes
 * 100,000 records, a third of its time goes to round trips, and reading it
 * back crawls.  So a write smaller than FS_MAX_WRITE that continues the
 * previous one is appended to a per-file buffer (one extra memcpy, small
 * writes only) and sent as one ckpt_write() when the buffer reaches
 * FS_MAX_WRITE, when a write is not contiguous, and before anything that
 * must see the bytes: a read of the file, close (flush), fsync, truncate,
 * unlink, rename, the commit and the unmount.  A write of FS_MAX_WRITE or
 * more goes straight to ckpt_write() as before, after the file's buffer.
 *
 * An error of a deferred write comes back from the call that sent it (a
 * later write, close, fsync, the commit) and fails the version like any
 * write error.  Waiting for staging is the exception: a signal to the
 * program (EINTR) or ckptd's staging_wait (ENOBUFS) ends the wait and fails
 * nothing; the buffered bytes stay buffered (a write whose own bytes could
 * not be sent returns the error without keeping them; an fsync returns
 * the error and keeps them).  Only when a buffer must go (the file's
 * close, a namespace change, the commit) with bytes still in it does its
 * version fail, in ckptd too: ckptfs aborts its writer there at once
 * (lost()), so that nothing, not `ckptctl commit` nor the next mkdir of
 * the name (which would join it), can seal the version short.
 *
 * The buffer belongs to the file (struct fs_inode), not to the name it was
 * opened by: writes through two hard links of one file go into one buffer,
 * in the order they came, and are sent under any name the file has then
 * (ckptd resolves each to the same bytes).  A buffer lives from a file's
 * first small write to a close (flush) of a handle on it or to the next
 * change of the namespace: those hold the version's ns lock for writing and
 * flush and free every buffer first, so no inode is ever freed with a
 * buffer (and a file with no name left takes no writes).
 *
 * Locking: ver->wb_mu serialises the buffers of a version and is held
 * across the ckpt_write() of buffered bytes.  A write of FS_MAX_WRITE or
 * more is sent without it (after the file's buffer), so that several
 * writers' copies into staging run at once; the version's ns lock, held
 * for reading by every write, still keeps a commit or a namespace change
 * from running under it.  Two such writes to one range of one file at
 * once land in either order, as they may on any file system.  Lock
 * order: ns, wb_mu, fs->mu.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ckptfs_i.h"

#define WB_FIRST (64u << 10)     /* first allocation; doubles up to max */

/* Send wb's bytes.  wb_mu held.  The buffer is kept, empty. */
static int send_locked(struct ckptfs *fs, struct fs_version *ver,
		       struct fs_wbuf *wb)
{
	char path[CKPT_PATH_MAX2 + 1];
	int ret = 0, gone;

	if (!wb->len)
		return 0;
	pthread_mutex_lock(&fs->mu);
	ret = tree_inode_path(wb->in, path, sizeof(path));
	gone = ret == -ENOENT;      /* no name left: its bytes go nowhere */
	ret = gone ? 0 : ret;
	pthread_mutex_unlock(&fs->mu);
	if (ret >= 0 && !gone)
		ret = conn_lease(fs, ver->conn);
	if (ret < 0)
		return ret;     /* no staging (EINTR, ENOBUFS): kept buffered */
	if (ret >= 0 && !gone)
		ret = ver_failed(fs, ver, ckpt_write(ver->v, path, wb->data,
						     wb->len, wb->off));
	wb->len = 0;
	return ret < 0 ? ret : 0;
}

static void free_locked(struct fs_wbuf *wb)
{
	fs_list_del(&wb->link);
	wb->in->wb = NULL;
	free(wb->data);
	free(wb);
}

/* Free wb.  Bytes still in it (their send failed with err: no staging, a
 * signal) are lost with it, so the version fails: a file that misses
 * them must never be committed.  Returns 1 if so: the caller calls
 * lost() once it has let go of wb_mu. */
static int drop_locked(struct ckptfs *fs, struct fs_version *ver,
		       struct fs_wbuf *wb, int err)
{
	int failed = wb->len != 0;

	if (failed) {
		pthread_mutex_lock(&fs->mu);
		ver_fail_locked(ver, err < 0 ? err : -EIO);
		pthread_mutex_unlock(&fs->mu);
		fs_log(FUSE_LOG_ERR, "version %s/%s: %zu buffered bytes could not be sent (%s); the version fails",
		       ver->job, ver->name, wb->len, strerror(err < 0 ? -err : EIO));
	}
	free_locked(wb);
	return failed;
}

/* ver failed here (drop_locked()), not in ckptd, which still counts this
 * mount's writer as one to wait for: abort it, so that the version fails
 * there too.  ABORT names this writer's handle, never a version begun
 * later under the name; a version already ended is left alone
 * (ckpt_abort() sends nothing). */
static void lost(struct ckptfs *fs, struct fs_version *ver)
{
	conn_check(fs, ver->conn, ckpt_abort(ver->v));
}

/* Make room for len more bytes in in's buffer (allocating it). */
static int reserve_locked(struct fs_version *ver, struct fs_inode *in,
			  size_t len)
{
	struct fs_wbuf *wb = in->wb;
	size_t cap;
	uint8_t *grown;

	if (!wb) {
		wb = calloc(1, sizeof(*wb));
		if (!wb)
			return -ENOMEM;
		wb->in = in;
		in->wb = wb;
		fs_list_add(&ver->dirty, &wb->link);
	}
	if (wb->len + len <= wb->cap)
		return 0;
	cap = wb->cap ? wb->cap : WB_FIRST;
	while (cap < wb->len + len)
		cap *= 2;
	if (cap > FS_MAX_WRITE)
		cap = FS_MAX_WRITE;
	grown = realloc(wb->data, cap);
	if (!grown)
		return -ENOMEM;
	wb->data = grown;
	wb->cap = cap;
	return 0;
}

int wb_write(struct ckptfs *fs, struct fs_version *ver, struct fs_node *node,
	     const char *path, const void *buf, size_t size, uint64_t off)
{
	struct fs_wbuf *wb;
	int ret = 0;

	pthread_mutex_lock(&ver->wb_mu);
	wb = node->in->wb;
	if (wb && wb->len && (off != wb->off + wb->len ||
			      wb->len + size > FS_MAX_WRITE))
		ret = send_locked(fs, ver, wb);
	if (ret < 0)
		goto out_unlock;
	if (size >= FS_MAX_WRITE) {
		/* The file's buffered bytes are sent; these go without
		 * wb_mu, so that the copies of several writers run at once
		 * (libckpt copies outside its lock too). */
		pthread_mutex_unlock(&ver->wb_mu);
		ret = conn_lease(fs, ver->conn);
		if (ret == 0)
			ret = ver_failed(fs, ver, ckpt_write(ver->v, path, buf,
							     size, off));
		return ret;
	}
	ret = reserve_locked(ver, node->in, size);
	if (ret < 0)
		goto out_unlock;
	wb = node->in->wb;
	if (!wb->len)
		wb->off = off;
	memcpy(wb->data + wb->len, buf, size);
	wb->len += size;
	if (wb->len == FS_MAX_WRITE) {
		ret = send_locked(fs, ver, wb);
		/* Kept buffered (no staging): this write's bytes were not
		 * taken, as its error says; the program may write them
		 * again. */
		if (ret < 0 && wb->len == FS_MAX_WRITE)
			wb->len -= size;
	}
out_unlock:
	pthread_mutex_unlock(&ver->wb_mu);
	return ret;
}

int wb_flush_node(struct ckptfs *fs, struct fs_version *ver,
		  struct fs_node *node, int release)
{
	int ret = 0, failed = 0;

	pthread_mutex_lock(&ver->wb_mu);
	if (node->in->wb) {
		ret = send_locked(fs, ver, node->in->wb);
		if (release)
			failed = drop_locked(fs, ver, node->in->wb, ret);
	}
	pthread_mutex_unlock(&ver->wb_mu);
	if (failed)
		lost(fs, ver);
	return ret;
}

/* Send every buffer of ver; with drop, free each too (drop_locked()). */
static int send_each(struct ckptfs *fs, struct fs_version *ver, int drop)
{
	struct fs_link *pos, *next;
	struct fs_wbuf *wb;
	int ret = 0, err, failed = 0;

	pthread_mutex_lock(&ver->wb_mu);
	for (pos = ver->dirty.next; pos != &ver->dirty; pos = next) {
		next = pos->next;
		wb = fs_entry(pos, struct fs_wbuf, link);
		err = send_locked(fs, ver, wb);
		if (err < 0 && ret == 0)
			ret = err;
		if (drop)
			failed |= drop_locked(fs, ver, wb, err);
	}
	pthread_mutex_unlock(&ver->wb_mu);
	if (failed)
		lost(fs, ver);
	return ret;
}

int wb_flush_all(struct ckptfs *fs, struct fs_version *ver)
{
	return send_each(fs, ver, 1);
}

int wb_send_all(struct ckptfs *fs, struct fs_version *ver)
{
	return send_each(fs, ver, 0);
}

void wb_free_all(struct fs_version *ver)
{
	pthread_mutex_lock(&ver->wb_mu);
	while (ver->dirty.next != &ver->dirty)
		free_locked(fs_entry(ver->dirty.next, struct fs_wbuf, link));
	pthread_mutex_unlock(&ver->wb_mu);
}
