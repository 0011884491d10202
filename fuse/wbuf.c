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
 * Locking: wb->mu serialises the buffers of a version and is held
 * across the ckpt_write() of buffered bytes.  A write of FS_MAX_WRITE or
 * more is sent without it (after the file's buffer), so that several
 * writers' copies into staging run at once; the version's ns lock, held
 * for reading by every write, still keeps a commit or a namespace change
 * from running under it.  Two such writes to one range of one file at
 * once land in either order, as they may on any file system.  Lock
 * order: ns, wb->mu, fs->mu.
 *
 * Layer: write-behind (wb_i.h), between the namespace above and the
 * connections below (conn_lease(), conn_check()).  It holds buffers, not
 * files: a buffer knows only its slot in the file (in->wb), and the path
 * it is sent under, what a failed send means for the version, and the
 * failing of it are asked of the namespace through wb->ops (vers.c,
 * ver_wb_ops).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wb_i.h"

#define WB_FIRST (64u << 10)     /* first allocation; doubles up to max */

void wb_init(struct fs_wb *wb, const struct fs_wb_ops *ops)
{
	pthread_mutex_init(&wb->mu, NULL);
	fs_list_init(&wb->dirty);
	wb->conn = NULL;
	wb->v = NULL;
	wb->ops = ops;
}

/* Send b's bytes.  wb->mu held.  The buffer is kept, empty. */
static int send_locked(struct ckptfs *fs, struct fs_wb *wb,
		       struct fs_wbuf *b)
{
	char path[CKPT_PATH_MAX2 + 1];
	int ret = 0, gone;

	if (!b->len)
		return 0;
	pthread_mutex_lock(&fs->mu);
	ret = wb->ops->path_locked(b->slot, path, sizeof(path));
	gone = ret == -ENOENT;      /* no name left: its bytes go nowhere */
	ret = gone ? 0 : ret;
	pthread_mutex_unlock(&fs->mu);
	if (ret >= 0 && !gone)
		ret = conn_lease(fs, wb->conn);
	if (ret < 0)
		return ret;     /* no staging (EINTR, ENOBUFS): kept buffered */
	if (ret >= 0 && !gone)
		ret = wb->ops->failed(fs, wb, ckpt_write(wb->v, path, b->data,
							 b->len, b->off));
	b->len = 0;
	return ret < 0 ? ret : 0;
}

static void free_locked(struct fs_wbuf *b)
{
	fs_list_del(&b->link);
	*b->slot = NULL;
	free(b->data);
	free(b);
}

/* Free b.  Bytes still in it (their send failed with err: no staging, a
 * signal) are lost with it, so the version fails (wb->ops->lost): a file
 * that misses them must never be committed.  Returns 1 if so: the caller
 * calls lost() once it has let go of wb->mu. */
static int drop_locked(struct ckptfs *fs, struct fs_wb *wb,
		       struct fs_wbuf *b, int err)
{
	int failed = b->len != 0;

	if (failed)
		wb->ops->lost(fs, wb, err < 0 ? err : -EIO, b->len);
	free_locked(b);
	return failed;
}

/* The version failed here (drop_locked()), not in ckptd, which still
 * counts this mount's writer as one to wait for: abort it, so that the
 * version fails there too.  ABORT names this writer's handle, never a
 * version begun later under the name; a version already ended is left
 * alone (ckpt_abort() sends nothing). */
static void lost(struct ckptfs *fs, struct fs_wb *wb)
{
	conn_check(fs, wb->conn, ckpt_abort(wb->v));
}

/* Make room for len more bytes in the buffer at *slot (allocating it). */
static int reserve_locked(struct fs_wb *wb, struct fs_wbuf **slot,
			  size_t len)
{
	struct fs_wbuf *b = *slot;
	size_t cap;
	uint8_t *grown;

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return -ENOMEM;
		b->slot = slot;
		*slot = b;
		fs_list_add(&wb->dirty, &b->link);
	}
	if (b->len + len <= b->cap)
		return 0;
	cap = b->cap ? b->cap : WB_FIRST;
	while (cap < b->len + len)
		cap *= 2;
	if (cap > FS_MAX_WRITE)
		cap = FS_MAX_WRITE;
	grown = realloc(b->data, cap);
	if (!grown)
		return -ENOMEM;
	b->data = grown;
	b->cap = cap;
	return 0;
}

int wb_write(struct ckptfs *fs, struct fs_wb *wb, struct fs_wbuf **slot,
	     const char *path, const void *buf, size_t size, uint64_t off)
{
	struct fs_wbuf *b;
	int ret = 0;

	pthread_mutex_lock(&wb->mu);
	b = *slot;
	if (b && b->len && (off != b->off + b->len ||
			    b->len + size > FS_MAX_WRITE))
		ret = send_locked(fs, wb, b);
	if (ret < 0)
		goto out_unlock;
	if (size >= FS_MAX_WRITE) {
		/* The file's buffered bytes are sent; these go without
		 * wb->mu, so that the copies of several writers run at once
		 * (libckpt copies outside its lock too). */
		pthread_mutex_unlock(&wb->mu);
		ret = conn_lease(fs, wb->conn);
		if (ret == 0)
			ret = wb->ops->failed(fs, wb, ckpt_write(wb->v, path,
								 buf, size,
								 off));
		return ret;
	}
	ret = reserve_locked(wb, slot, size);
	if (ret < 0)
		goto out_unlock;
	b = *slot;
	if (!b->len)
		b->off = off;
	memcpy(b->data + b->len, buf, size);
	b->len += size;
	if (b->len == FS_MAX_WRITE) {
		ret = send_locked(fs, wb, b);
		/* Kept buffered (no staging): this write's bytes were not
		 * taken, as its error says; the program may write them
		 * again. */
		if (ret < 0 && b->len == FS_MAX_WRITE)
			b->len -= size;
	}
out_unlock:
	pthread_mutex_unlock(&wb->mu);
	return ret;
}

int wb_flush_node(struct ckptfs *fs, struct fs_wb *wb, struct fs_wbuf **slot,
		  int release)
{
	int ret = 0, failed = 0;

	pthread_mutex_lock(&wb->mu);
	if (*slot) {
		ret = send_locked(fs, wb, *slot);
		if (release)
			failed = drop_locked(fs, wb, *slot, ret);
	}
	pthread_mutex_unlock(&wb->mu);
	if (failed)
		lost(fs, wb);
	return ret;
}

/* Send every buffer of wb; with drop, free each too (drop_locked()). */
static int send_each(struct ckptfs *fs, struct fs_wb *wb, int drop)
{
	struct fs_link *pos, *next;
	struct fs_wbuf *b;
	int ret = 0, err, failed = 0;

	pthread_mutex_lock(&wb->mu);
	for (pos = wb->dirty.next; pos != &wb->dirty; pos = next) {
		next = pos->next;
		b = fs_entry(pos, struct fs_wbuf, link);
		err = send_locked(fs, wb, b);
		if (err < 0 && ret == 0)
			ret = err;
		if (drop)
			failed |= drop_locked(fs, wb, b, err);
	}
	pthread_mutex_unlock(&wb->mu);
	if (failed)
		lost(fs, wb);
	return ret;
}

int wb_flush_all(struct ckptfs *fs, struct fs_wb *wb)
{
	return send_each(fs, wb, 1);
}

int wb_send_all(struct ckptfs *fs, struct fs_wb *wb)
{
	return send_each(fs, wb, 0);
}

void wb_free_all(struct fs_wb *wb)
{
	pthread_mutex_lock(&wb->mu);
	while (wb->dirty.next != &wb->dirty)
		free_locked(fs_entry(wb->dirty.next, struct fs_wbuf, link));
	pthread_mutex_unlock(&wb->mu);
}

void wb_destroy(struct fs_wb *wb)
{
	wb_free_all(wb);
	pthread_mutex_destroy(&wb->mu);
}
