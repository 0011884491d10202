/*
 * ctl_lanes.h - pull a version's files through several connections at once
 * (restore), so that reads are in flight while earlier pieces are written.
 *
 * A lane is a thread with its own connection to ckptd (its own staging
 * lease) and its own piece buffer; ckpt_read() holds one connection for a
 * whole read, so pieces in flight need connections of their own.  Each lane
 * pulls one file front to back in pieces (at most LANES_PIECE bytes), then
 * opens the next in the given order; once every file is open, a lane with
 * none helps the file with the most bytes left.  So lanes write different
 * files while there are enough (one file's inode lock is not fought over by
 * buffered writers), and at most one file per lane is open.  Each piece is read and
 * written where it belongs in the file (pwrite), then its writeback started
 * (sync_file_range); aligned 4 KiB blocks of zeros are not written but left
 * as holes (the files are new), and a file's size is set (ftruncate) before
 * it is finished.  The caller's callbacks open a file before its first
 * piece and finish it (attributes, fsync, rename) after its last.
 * Only the runs of data ckptd reports in a piece (ckpt_seek_data) are
 * read: the holes of a sparse file are not moved at all.
 *
 * An extra connection that cannot get a staging lease within a short wait
 * is given up: fewer lanes run, never none (lane 0 is the caller's
 * connection).  The first error stops every lane; files opened and not
 * finished are handed to ->abandon.
 */
#ifndef CKPT_CTL_LANES_H
#define CKPT_CTL_LANES_H

#include <stdint.h>

#include "ckpt.h"

#define LANES_PIECE (32u << 20)   /* bytes a lane takes at once: READs of
				   * ckptd, two in flight (ckpt_read_sink) */
#define LANES_LEASE (32u << 20)   /* each lane's staging: two READs */
#define LANES_MAX   8
#define LANES_HOLE  4096u         /* blocks of zeros left as holes */

struct lanes_job {
	const char *socket;       /* for the extra connections (NULL: the
				   * default, as ckpt_connect()) */
	struct ckpt_client *c;    /* lane 0's connection, borrowed */
	const char *job, *version;
	const struct ckpt_file_info *files;
	const int *order;         /* the files to pull: indices into files,
				   * in this order */
	int n;                    /* entries in order */
	unsigned lanes;           /* 1 .. LANES_MAX */
	void *arg;                /* the callbacks' */
	/* Open file idx for writing: *fd, owned by the lanes until finish or
	 * abandon.  Called with the lanes' lock held.  0 or -errno. */
	int (*open)(void *arg, int idx, int *fd);
	/* Every byte of file idx is written to fd: finish it on connection c
	 * (the lane's), closing fd whatever happens.  0 or -errno. */
	int (*finish)(void *arg, struct ckpt_client *c, int idx, int fd);
	/* The run failed: close fd of file idx and discard what it wrote. */
	void (*abandon)(void *arg, int idx, int fd);
	/* bytes more of file idx are written.  Called with the lock held. */
	void (*progress)(void *arg, int idx, uint64_t bytes);
};

/*
 * Pull the files of j.  Blocks until every file is finished or one failed.
 * 0, or the first error with *failed the index (into files) of the file it
 * concerns; -ENODATA when ckptd's data for a file ended before its size.
 */
int lanes_run(const struct lanes_job *j, int *failed);

#endif
