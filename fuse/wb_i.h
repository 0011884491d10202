/*
 * wb_i.h - ckptfs's write-behind layer (wbuf.c): small contiguous writes of
 * a file gathered into one buffer and sent to ckptd as one ckpt_write().
 * Private to fuse/; includes only the connection layer's header (conn_i.h).
 *
 * The layer knows buffers, a version's set of them (struct fs_wb, one in
 * each struct fs_version) and the connection and libckpt version they are
 * sent on.  It knows nothing of files, names or versions' states: where a
 * buffer lives (a slot in the file, struct fs_inode.wb), the path it is
 * sent under, and what a failed send does to the version are the
 * namespace's, asked through the struct fs_wb_ops it stored (vers.c).
 */
#ifndef CKPTFS_WB_I_H
#define CKPTFS_WB_I_H

#include "conn_i.h"

struct fs_wb;

/* The buffer of one file. */
struct fs_wbuf {
	struct fs_link link;      /* in wb->dirty */
	struct fs_wbuf **slot;    /* the file's pointer to it (in->wb) */
	uint64_t off;             /* file offset of data[0] */
	size_t len, cap;
	uint8_t *data;
};

/* What the layer above (the namespace) answers for a version's buffers. */
struct fs_wb_ops {
	/* The path ckptd knows the file whose buffer slot is by: length,
	 * -ENOENT when it has no name left (its bytes go nowhere), or
	 * -ENAMETOOLONG.  fs->mu held. */
	int (*path_locked)(struct fs_wbuf *const *slot, char *buf, size_t cap);
	/* A ckpt_write() of wb's version returned ret: note a lost
	 * connection or a failed version.  Returns ret. */
	int (*failed)(struct ckptfs *fs, struct fs_wb *wb, int ret);
	/* len buffered bytes could not be sent (err) and are dropped: the
	 * version fails (and says so). */
	void (*lost)(struct ckptfs *fs, struct fs_wb *wb, int err, size_t len);
};

/* The buffers of one version. */
struct fs_wb {
	pthread_mutex_t mu;       /* the buffers; held across their sends */
	struct fs_link dirty;     /* struct fs_wbuf */
	struct fs_conn *conn;     /* the version's W connection, and */
	struct ckpt_version *v;   /* its libckpt handle (set once begun) */
	const struct fs_wb_ops *ops;
};

void wb_init(struct fs_wb *wb, const struct fs_wb_ops *ops);
/* wb_free_all(), then let go of the mutex. */
void wb_destroy(struct fs_wb *wb);
/* Write size bytes at off of the file whose buffer is *slot (path: its
 * path now): buffered when small and contiguous, else sent, after what the
 * buffer holds.  ns held for reading.  0 or an error. */
int wb_write(struct ckptfs *fs, struct fs_wb *wb, struct fs_wbuf **slot,
	     const char *path, const void *buf, size_t size, uint64_t off);
/* Send the file's buffered bytes (and free the buffer if release). */
int wb_flush_node(struct ckptfs *fs, struct fs_wb *wb, struct fs_wbuf **slot,
		  int release);
/* Send and free every buffer of the version (ns held; for writing when the
 * namespace is about to change).  Bytes that cannot be sent fail the
 * version, here and in ckptd (its writer aborted). */
int wb_flush_all(struct ckptfs *fs, struct fs_wb *wb);
/* Send every buffer and keep them (fsync; ns held for reading): one whose
 * bytes find no staging (EINTR, ENOBUFS) keeps them and the first such
 * error is returned; the version does not fail for it. */
int wb_send_all(struct ckptfs *fs, struct fs_wb *wb);
/* Drop every buffer unsent (abort, free). */
void wb_free_all(struct fs_wb *wb);

#endif
