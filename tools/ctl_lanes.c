/*
 * ctl_lanes.c - restore's pieces in flight on several connections (see
 * ctl_lanes.h).
 *
 * One lock guards the hand-out state (the next file to open, each lane's
 * file, each file's next offset and pieces in flight) and the first error.
 * The lane whose piece leaves a file with every piece handed out and none
 * in flight finishes it, outside the lock.  Files of size 0 are finished by
 * the lane that opens them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_lanes.h"

struct lanes;

struct lane {
	pthread_t th;
	struct lanes *ls;
	struct ckpt_client *c;    /* owned unless lane 0 */
	int cur;                  /* position it pulls, or -1 */
};

struct lanes {
	const struct lanes_job *j;
	pthread_mutex_t mu;
	struct lane *lane;        /* [nlanes] */
	unsigned nlanes;
	int at;                   /* next position in j->order to open */
	int *fd;                  /* per position: -1 unless open here */
	uint64_t *next;           /* per position: its next piece */
	uint32_t *inflight;       /* per position: pieces being pulled */
	int err, failed;          /* the first error and its file */
};

/* What a lane does next, from lanes_next(). */
enum step { STEP_DONE, STEP_PIECE, STEP_FINISH };

static void lanes_fail(struct lanes *ls, int pos, int err)
{
	if (!ls->err) {
		ls->err = err;
		ls->failed = ls->j->order[pos];
	}
}

static uint64_t left_of(const struct lanes *ls, int pos)
{
	return ls->j->files[ls->j->order[pos]].size - ls->next[pos];
}

/* The file another lane pulls with the most bytes not yet handed out, or
 * -1.  Joining it is the only time two lanes write one file. */
static int busiest(const struct lanes *ls)
{
	uint64_t most = 0;
	unsigned i;
	int pos = -1, p;

	for (i = 0; i < ls->nlanes; i++) {
		p = ls->lane[i].cur;
		if (p >= 0 && ls->fd[p] >= 0 && left_of(ls, p) > most) {
			most = left_of(ls, p);
			pos = p;
		}
	}
	return pos;
}

/*
 * Under the lock: the next piece (*pos, *off, *len) for lane l to pull, or
 * a file (*pos) to finish.  A lane pulls its own file front to back; when
 * it has none it opens the next file in order, and when every file is open
 * it helps the one with the most left.  So lanes write different files
 * while there are files enough (a file's inode lock is not fought over),
 * and at most one file per lane is open.
 */
static enum step lanes_next(struct lanes *ls, struct lane *l, int *pos,
			    uint64_t *off, uint32_t *len)
{
	const struct lanes_job *j = ls->j;
	uint64_t left;
	int ret;

	while (!ls->err) {
		if (l->cur >= 0 && ls->fd[l->cur] >= 0 &&
		    (left = left_of(ls, l->cur)) > 0) {
			*pos = l->cur;
			*off = ls->next[*pos];
			*len = left < LANES_PIECE ? (uint32_t)left : LANES_PIECE;
			ls->next[*pos] += *len;
			ls->inflight[*pos]++;
			return STEP_PIECE;
		}
		if (ls->at >= j->n) {
			l->cur = busiest(ls);
			if (l->cur < 0)
				break;
			continue;
		}
		*pos = ls->at++;
		ret = j->open(j->arg, j->order[*pos], &ls->fd[*pos]);
		if (ret < 0) {
			ls->fd[*pos] = -1;
			lanes_fail(ls, *pos, ret);
			break;
		}
		ls->next[*pos] = 0;
		l->cur = *pos;
		if (!j->files[j->order[*pos]].size) {
			l->cur = -1;
			return STEP_FINISH;     /* an empty file */
		}
	}
	l->cur = -1;
	return STEP_DONE;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Zeros only?  (memcmp of p against itself one byte on: its fast path.) */
static int all_zero(const uint8_t *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

/* Bytes of [off, off + len) up to the end of off's 4 KiB block. */
static size_t to_block_end(uint64_t off, size_t len)
{
	size_t n = LANES_HOLE - (size_t)(off % LANES_HOLE);

	return n < len ? n : len;
}

/* Write [off, off + len) of data to the file, and start its writeback
 * (advisory: where it is not supported, the fsync does the work). */
static int put_run(int fd, const uint8_t *data, size_t len, uint64_t off)
{
	int ret;

	if (!len)
		return 0;
	ret = write_all(fd, data, len, off);
	if (ret == 0)
		sync_file_range(fd, (off_t)off, (off_t)len,
				SYNC_FILE_RANGE_WRITE);
	return ret;
}

/*
 * ckpt_read_sink's sink: the bytes go from staging straight to the file,
 * but for whole 4 KiB blocks of zeros, which are left as holes (the file
 * is new, and its size is set when it is finished): a sparse file is
 * restored sparse, as `cp --sparse=auto` would.
 */
static int to_file(void *arg, const void *data, size_t len, uint64_t off)
{
	const uint8_t *p = data, *run = data;  /* run: bytes not yet written */
	uint64_t run_off = off;
	int fd = *(const int *)arg, ret;
	size_t n;

	while (len) {
		n = to_block_end(off, len);
		if (n == LANES_HOLE && all_zero(p, n)) {
			ret = put_run(fd, run, (size_t)(p - run), run_off);
			if (ret)
				return ret;
			run = p + n;
			run_off = off + n;
		}
		p += n;
		off += n;
		len -= n;
	}
	return put_run(fd, run, (size_t)(p - run), run_off);
}

/* Outside the lock: pull one piece of file idx into fd, its runs of data
 * only (ckpt_seek_data): the rest reads as zeros, left as holes. */
static int pull_piece(struct lane *l, int idx, int fd, uint64_t off,
		      uint32_t len)
{
	const struct lanes_job *j = l->ls->j;
	const char *path = j->files[idx].name;
	uint64_t end = off + len, data, run;
	size_t got;
	int ret;

	while (off < end) {
		ret = ckpt_seek_data(l->c, j->job, j->version, path, off,
				     end - off, &data, &run);
		if (ret == -ENXIO)
			return 0;
		if (ret < 0)
			return ret;
		got = 0;
		ret = ckpt_read_sink(l->c, j->job, j->version, path, run,
				     data, to_file, &fd, &got);
		if (ret == 0 && got != run)
			ret = -ENODATA;
		if (ret < 0)
			return ret;
		off = data + run;
	}
	return 0;
}

/* The file's size, where it ends in holes to_file() left unwritten (the
 * file is new: never longer). */
static int set_size(int fd, uint64_t size)
{
	return ftruncate(fd, (off_t)size) < 0 ? -errno : 0;
}

static void *lane_main(void *arg)
{
	struct lane *l = arg;
	struct lanes *ls = l->ls;
	const struct lanes_job *j = ls->j;
	enum step s;
	uint64_t off = 0;
	uint32_t len = 0;
	int pos = 0, fd, ret;

	pthread_mutex_lock(&ls->mu);
	while ((s = lanes_next(ls, l, &pos, &off, &len)) != STEP_DONE) {
		if (s == STEP_PIECE) {
			fd = ls->fd[pos];
			pthread_mutex_unlock(&ls->mu);
			ret = pull_piece(l, j->order[pos], fd, off, len);
			pthread_mutex_lock(&ls->mu);
			ls->inflight[pos]--;
			if (ret < 0)
				lanes_fail(ls, pos, ret);
			else
				j->progress(j->arg, j->order[pos], len);
			/* finished by whoever leaves it with nothing in
			 * flight once every piece is handed out */
			if (ls->err || ls->inflight[pos] || left_of(ls, pos))
				continue;
		}
		fd = ls->fd[pos];
		ls->fd[pos] = -1;               /* finish owns it now */
		pthread_mutex_unlock(&ls->mu);
		ret = set_size(fd, j->files[j->order[pos]].size);
		if (ret == 0)
			ret = j->finish(j->arg, l->c, j->order[pos], fd);
		else
			j->abandon(j->arg, j->order[pos], fd);
		pthread_mutex_lock(&ls->mu);
		if (ret < 0)
			lanes_fail(ls, pos, ret);
	}
	pthread_mutex_unlock(&ls->mu);
	return NULL;
}

/* Lane i's connection: the caller's for lane 0; else a new one with a
 * staging lease of two pieces, leaving the rest of ckptd's staging to
 * writers (a short wait: a busy ckptd just gets fewer lanes). */
static int lane_open(struct lane *l, const struct lanes_job *j, unsigned i)
{
	int ret;

	if (i == 0) {
		/* Its lease first: the other lanes get what is left.  The
		 * same size as theirs, unless the caller's connection has
		 * its lease already (-EALREADY). */
		l->c = j->c;
		ret = ckpt_staging_request(l->c, LANES_LEASE);
		if (ret < 0 && ret != -EALREADY)
			return ret;
		return ckpt_staging(l->c, NULL);
	}
	ret = ckpt_connect(j->socket, &l->c);
	if (ret == 0)
		ret = ckpt_staging_request(l->c, LANES_LEASE);
	if (ret == 0)
		ret = ckpt_staging_timed(l->c, 250, NULL);
	return ret;
}

static void lane_close(struct lane *l, unsigned i)
{
	if (i)
		ckpt_disconnect(l->c);
}

int lanes_run(const struct lanes_job *j, int *failed)
{
	struct lane lane[LANES_MAX];
	struct lanes ls = { .j = j, .lane = lane };
	unsigned n = 0, started = 0, i;
	int k, ret = -ENOMEM;

	memset(lane, 0, sizeof(lane));
	ls.fd = malloc(sizeof(*ls.fd) * (j->n ? j->n : 1));
	ls.inflight = calloc(j->n ? j->n : 1, sizeof(*ls.inflight));
	ls.next = calloc(j->n ? j->n : 1, sizeof(*ls.next));
	if (!ls.fd || !ls.inflight || !ls.next)
		goto out_free;
	for (k = 0; k < j->n; k++)
		ls.fd[k] = -1;
	pthread_mutex_init(&ls.mu, NULL);
	for (n = 0; n < j->lanes && n < LANES_MAX; n++) {
		lane[n].ls = &ls;
		lane[n].cur = -1;
		ret = lane_open(&lane[n], j, n);
		if (ret < 0) {
			lane_close(&lane[n], n);
			if (n == 0)
				goto out_mutex;
			break;          /* fewer lanes */
		}
	}
	ls.nlanes = n;
	for (i = 1; i < n; i++)
		if (!pthread_create(&lane[i].th, NULL, lane_main, &lane[i]))
			started |= 1u << i;
	lane_main(&lane[0]);
	for (i = 1; i < n; i++)
		if (started & (1u << i))
			pthread_join(lane[i].th, NULL);
	for (k = 0; k < j->n; k++)
		if (ls.fd[k] >= 0)
			j->abandon(j->arg, j->order[k], ls.fd[k]);
	ret = ls.err;
	*failed = ls.failed;
	for (i = 0; i < n; i++)
		lane_close(&lane[i], i);
out_mutex:
	pthread_mutex_destroy(&ls.mu);
out_free:
	free(ls.next);
	free(ls.inflight);
	free(ls.fd);
	return ret;
}
