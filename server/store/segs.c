/*
 * segs.c - segment files: scan, preallocate, recycle (see segs.h).
 *
 * Segment ids are the file names, eight decimal digits.  New segments are
 * created with O_EXCL and fallocate()d to full size so that a full disk shows
 * up as ENOSPC here, before any data is accepted into them, and not as a
 * failed write later.
 *
 * The capacity is not fixed at start: it is the rule of segs.h, recomputed
 * (segs_update()) whenever one of its terms changes: a statvfs read again,
 * a segment made, freed or moved, the holder's shard totals.  Each term is
 * kept so that a change by one party moves the others' share the right
 * way: a segment being made is in bytes and taken from the room at once,
 * and when its file is there the room loses it again as fs.free (so the
 * capacity stays put); a shard's reservation leaves the room when it is
 * made and its bytes move from others_unwritten to fs.free as they are
 * written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ctx.h"
#include "log.h"
#include "manifest.h"
#include "pool.h"
#include "segs.h"
#include "sys.h"

/* ---- room ----------------------------------------------------------------- */

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Bytes of segments counted in s->bytes whose files are still being made. */
static uint64_t making(const struct segs *s)
{
	return (uint64_t)s->refilling * s->seg_size;
}

uint64_t segs_room(const struct segs *s)
{
	uint64_t r = sat_sub(s->fs.free, s->reserve);

	r = sat_sub(r, s->others_unwritten);
	return sat_sub(r, making(s));
}

uint64_t segs_limit_room(const struct segs *s)
{
	if (!s->limit)
		return UINT64_MAX;
	return sat_sub(sat_sub(sat_sub(s->limit, s->bytes), s->others),
		       s->moved);
}

/* The capacity of segs.h's rule, from its terms as they are now. */
static void segs_update(struct segs *s)
{
	uint64_t cap = s->bytes + segs_room(s), lim;

	if (cap < s->bytes)
		cap = UINT64_MAX;
	if (s->limit) {
		lim = sat_sub(sat_sub(s->limit, s->others), s->moved);
		if (lim < cap)
			cap = lim;
	}
	s->capacity = cap;
}

/* statvfs of dir: bytes free to an unprivileged writer, and in all. */
static int fs_read(const char *dir, uint64_t *avail, uint64_t *size)
{
	struct statvfs vfs;

	if (statvfs(dir, &vfs) < 0)
		return -errno;
	*avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	*size = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	return 0;
}

struct fs_task {
	struct pool_task t;
	struct segs *s;           /* loop only */
	char dir[600];
	uint64_t avail, size;     /* out */
};

static int fs_run(struct pool_task *t)
{
	struct fs_task *ft = (struct fs_task *)t;

	return fs_read(ft->dir, &ft->avail, &ft->size);
}

static void fs_done(struct pool_task *t)
{
	struct fs_task *ft = (struct fs_task *)t;
	struct segs *s = ft->s;

	s->fs.reading = 0;
	s->fs.err = t->result;
	if (t->result == 0) {
		/* What was taken while the read ran may be in it or not:
		 * counted again, the next read sets it right. */
		s->fs.free = sat_sub(ft->avail, s->fs.took);
		s->fs.size = ft->size;
		segs_update(s);
	}
	free(ft);
}

static void fs_drop(struct pool_task *t)
{
	struct fs_task *ft = (struct fs_task *)t;

	ft->s->fs.reading = 0;
	free(ft);
}

void segs_refresh(struct segs *s, int force)
{
	uint64_t now = ckptd_now_ms(), avail = 0, size = 0;
	struct fs_task *ft;

	if (s->fs.reading ||
	    (!force && now - s->fs.read_ms < SEGS_FS_REFRESH_MS))
		return;
	s->fs.read_ms = now;
	ft = s->pool ? calloc(1, sizeof(*ft)) : NULL;
	if (!ft) {
		/* No pool (tests, tools), or no memory for the task. */
		s->fs.err = fs_read(s->dir, &avail, &size);
		if (s->fs.err == 0) {
			s->fs.free = avail;
			s->fs.size = size;
			segs_update(s);
		}
		return;
	}
	pool_task_init(&ft->t, fs_run, fs_done, fs_drop);
	ft->s = s;
	memcpy(ft->dir, s->dir, sizeof(ft->dir));
	s->fs.reading = 1;
	s->fs.took = 0;
	pool_submit(s->pool, &ft->t, 1);
}

void segs_set_others(struct segs *s, uint64_t all, uint64_t unwritten)
{
	s->others = all;
	s->others_unwritten = unwritten;
	segs_update(s);
}

void segs_fs_took(struct segs *s, uint64_t bytes)
{
	s->fs.free = sat_sub(s->fs.free, bytes);
	if (s->fs.reading)
		s->fs.took += bytes;
	segs_update(s);
}

int segs_path(const struct segs *s, uint32_t id, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s/%08u", s->dir, id);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Open a segment file, with O_DIRECT if allowed (tmpfs refuses it). */
static int seg_open_fd(struct segs *s, const char *path, int flags)
{
	int fd;

	if (s->direct) {
		fd = sys_open(path, flags | O_DIRECT, 0600);
		if (fd != -EINVAL)
			return fd;
		log_printf(LOG_NOTICE, "store: O_DIRECT not supported in %s, using buffered I/O",
			   s->dir);
		s->direct = 0;
	}
	return sys_open(path, flags, 0600);
}

static int segs_grow(struct segs *s, uint32_t id)
{
	struct seg *v;
	uint32_t i;

	if (id < s->n)
		return 0;
	v = realloc(s->v, (size_t)(id + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = s->n; i <= id; i++)
		v[i] = (struct seg){ .fd = -1 };
	s->v = v;
	s->n = id + 1;
	return 0;
}

static int segs_add(struct segs *s, uint32_t id, const char *path)
{
	struct stat st;
	int fd, ret;

	ret = segs_grow(s, id);
	if (ret < 0)
		return ret;
	fd = seg_open_fd(s, path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size < 2 * SEGHDR_SIZE) {
		log_printf(LOG_WARNING, "store: segment %s is too small, ignored",
			   path);
		close(fd);
		return 0;
	}
	s->v[id].fd = fd;
	s->v[id].size = (uint64_t)st.st_size & ~4095ull;
	s->bytes += s->v[id].size;
	return 0;
}

static int segs_scan(struct segs *s)
{
	struct dirent *de;
	char path[700], *end;
	DIR *d;
	int ret = 0;

	d = opendir(s->dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long id = strtoul(de->d_name, &end, 10);

		if (de->d_name[0] == '.' || *end || end - de->d_name != 8)
			continue;
		if (id >= SEGS_MAX_ID) {
			log_printf(LOG_WARNING, "store: %s/%s is not a segment of ours (id too large); ignored",
				   s->dir, de->d_name);
			continue;
		}
		ret = segs_path(s, id, path, sizeof(path));
		if (ret == 0)
			ret = segs_add(s, id, path);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

int segs_open(struct segs *s, const char *store, uint64_t seg_size,
	      uint64_t capacity, uint64_t reserve, int direct)
{
	int n, ret;

	memset(s, 0, sizeof(*s));
	list_init(&s->waiting);
	s->seg_size = seg_size;
	s->direct = direct;
	s->limit = capacity;
	s->reserve = reserve;
	n = snprintf(s->dir, sizeof(s->dir), "%s/seg", store);
	if (n < 0 || (size_t)n >= sizeof(s->dir))
		return -ENAMETOOLONG;
	if (mkdir(s->dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	ret = segs_scan(s);
	if (ret < 0)
		goto out_close;
	ret = fs_read(s->dir, &s->fs.free, &s->fs.size);
	if (ret < 0)
		goto out_close;
	s->fs.read_ms = ckptd_now_ms();
	segs_update(s);
	return 0;

out_close:
	segs_close(s);
	return ret;
}

void segs_close(struct segs *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].fd >= 0)
			close(s->v[i].fd);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int segs_claim(struct segs *s, uint32_t id)
{
	if (id >= s->n || s->v[id].fd < 0)
		return -ENOENT;
	if (!s->v[id].used) {
		s->v[id].used = 1;
		s->nused++;
	}
	return 0;
}

static int segs_create(struct segs *s, uint32_t id)
{
	char path[700];
	int fd, ret;

	ret = segs_path(s, id, path, sizeof(path));
	if (ret < 0)
		return ret;
	fd = seg_open_fd(s, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		return fd;
	ret = sys_fallocate(fd, 0, s->seg_size);
	if (ret < 0)
		goto out_unlink;
	ret = segs_grow(s, id);
	if (ret < 0)
		goto out_unlink;
	s->v[id].fd = fd;
	s->v[id].size = s->seg_size;
	s->bytes += s->seg_size;
	segs_fs_took(s, s->seg_size);
	return 0;

out_unlink:
	close(fd);
	unlink(path);
	return ret == -EDQUOT ? -ENOSPC : ret;
}

/* ---- spare segments, made on the pool ---------------------------------- */

/* Tell the waiter (if any) that a segment may be free, or why not. */
static void segs_ready(struct segs *s, int err)
{
	if (s->ready)
		s->ready(s->ready_arg, err);
}

/* Free now: has a file, nobody's, header not being zeroed. */
static int seg_is_free(const struct seg *g)
{
	return g->fd >= 0 && !g->used && !g->clearing;
}

struct mk_task {
	struct pool_task t;
	struct segs *s;           /* loop only: ->done, ->drop */
	uint32_t id;
	char path[700];
	uint64_t size;
	int direct;               /* in: try O_DIRECT; out: it worked */
	int fd;                   /* out */
};

/* Worker: create and fallocate the file; touches only the task. */
static int mk_run(struct pool_task *t)
{
	struct mk_task *mk = (struct mk_task *)t;
	int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, fd, ret;

	fd = -EINVAL;
	if (mk->direct)
		fd = sys_open(mk->path, flags | O_DIRECT, 0600);
	if (fd == -EINVAL) {
		mk->direct = 0;
		fd = sys_open(mk->path, flags, 0600);
	}
	if (fd < 0)
		return fd;
	ret = sys_fallocate(fd, 0, mk->size);
	if (ret < 0) {
		close(fd);
		unlink(mk->path);
		return ret == -EDQUOT ? -ENOSPC : ret;
	}
	mk->fd = fd;
	return 0;
}

static void mk_done(struct pool_task *t)
{
	struct mk_task *mk = (struct mk_task *)t;
	struct segs *s = mk->s;

	s->refilling--;
	s->v[mk->id].creating = 0;
	if (t->result < 0) {
		int err = t->result;

		s->bytes -= mk->size;
		segs_update(s);
		log_printf(LOG_INFO, "store: making spare segment %u: %s",
			   mk->id, strerror(-err));
		free(mk);
		/* The next segs_alloc tries again; a waiter hears why this
		 * one failed only if nothing else may bring a segment. */
		segs_ready(s, s->refilling || s->clearing ? 0 : err);
		return;
	}
	if (s->direct && !mk->direct)
		s->direct = 0;
	s->v[mk->id].fd = mk->fd;
	s->v[mk->id].size = mk->size;
	free(mk);
	segs_fs_took(s, s->seg_size);   /* its file has its bytes now */
	segs_refill(s);
	segs_ready(s, 0);
}

/* Shutdown: a file made but never installed is a free segment next start.
 * Writes still waiting for a segment will not get one. */
static void mk_drop(struct pool_task *t)
{
	struct mk_task *mk = (struct mk_task *)t;
	struct segs *s = mk->s;

	if (mk->fd >= 0)
		close(mk->fd);
	free(mk);
	segs_ready(s, -ECANCELED);
}

void segs_refill(struct segs *s)
{
	struct mk_task *mk;
	uint32_t i, nfree = 0;

	if (!s->pool || s->refilling >= SEGS_REFILL_MAX)
		return;
	segs_refresh(s, 0);
	for (i = 0; i < s->n; i++)
		nfree += s->v[i].fd >= 0 && !s->v[i].used;  /* clearing too */
	if (nfree + s->refilling >= SEGS_SPARE || s->bytes + s->seg_size > s->capacity)
		return;
	for (i = 0; i < SEGS_MAX_ID; i++)
		if (i >= s->n || (s->v[i].fd < 0 && !s->v[i].creating))
			break;
	mk = calloc(1, sizeof(*mk));
	if (!mk || i == SEGS_MAX_ID || segs_grow(s, i) < 0 ||
	    segs_path(s, i, mk->path, sizeof(mk->path)) < 0) {
		free(mk);
		return;
	}
	pool_task_init(&mk->t, mk_run, mk_done, mk_drop);
	mk->s = s;
	mk->id = i;
	mk->size = s->seg_size;
	mk->direct = s->direct;
	mk->fd = -1;
	s->v[i].creating = 1;
	s->bytes += s->seg_size;  /* counted against the capacity from now */
	s->refilling++;
	segs_update(s);
	pool_submit(s->pool, &mk->t, 1);   /* a writer may soon wait on it */
	segs_refill(s);
}

/* None is free and there is a pool: one is made (or cleared) there, never
 * here.  -EAGAIN (wait for s->ready), -ENOSPC, -ENOMEM. */
static int segs_alloc_later(struct segs *s)
{
	segs_refill(s);
	if (s->refilling || s->clearing) {
		s->nwait++;
		return -EAGAIN;
	}
	return s->bytes + s->seg_size > s->capacity ? -ENOSPC : -ENOMEM;
}

int segs_alloc(struct segs *s, uint32_t *id)
{
	uint32_t i;
	int ret;

	for (i = 0; i < s->n; i++)
		if (seg_is_free(&s->v[i]))
			goto out_claim;
	segs_refresh(s, 0);
	if (s->pool)
		return segs_alloc_later(s);
	if (s->bytes + s->seg_size > s->capacity)
		return -ENOSPC;
	/* No pool (tests, tools): create one here.  The first id with no
	 * file of ours.  A name that exists but is not a usable segment (too
	 * small: a crash between create and fallocate, or damage) is left
	 * alone as evidence. */
	for (i = 0; i < SEGS_MAX_ID; i++) {
		if (i < s->n && (s->v[i].fd >= 0 || s->v[i].creating))
			continue;
		ret = segs_create(s, i);
		if (ret != -EEXIST)
			break;
	}
	if (ret < 0)
		return ret;
out_claim:
	s->v[i].used = 1;
	s->nused++;
	*id = i;
	segs_refill(s);
	return 0;
}

/* ---- freed segments, their headers zeroed on the pool ------------------ */

/* What a freed segment's header becomes (read-only: aligned for O_DIRECT). */
static const uint8_t seg_zero[SEGHDR_SIZE] __attribute__((aligned(4096)));

struct clr_task {
	struct pool_task t;
	struct segs *s;           /* loop only */
	uint32_t id;
	int fd;                   /* the segment's, open while s is */
};

static int clear_header(int fd, uint32_t id)
{
	int ret = sys_pwrite_all(fd, seg_zero, SEGHDR_SIZE, 0);

	if (ret < 0)
		log_printf(LOG_WARNING, "store: clearing header of segment %u: %s",
			   id, strerror(-ret));
	return ret;
}

static int clr_run(struct pool_task *t)
{
	struct clr_task *ct = (struct clr_task *)t;

	return clear_header(ct->fd, ct->id);
}

static void clr_done(struct pool_task *t)
{
	struct clr_task *ct = (struct clr_task *)t;
	struct segs *s = ct->s;

	s->v[ct->id].clearing = 0;
	s->clearing--;
	free(ct);
	segs_ready(s, 0);
}

/* Shutdown: clear it here (the loop serves nobody any more; twice is
 * harmless if the worker did). */
static void clr_drop(struct pool_task *t)
{
	struct clr_task *ct = (struct clr_task *)t;
	struct segs *s = ct->s;

	clear_header(ct->fd, ct->id);
	s->v[ct->id].clearing = 0;
	s->clearing--;
	free(ct);
	segs_ready(s, -ECANCELED);
}

void segs_free(struct segs *s, uint32_t id)
{
	struct clr_task *ct = NULL;

	if (id >= s->n || !s->v[id].used)
		return;
	s->v[id].used = 0;
	s->nused--;
	if (s->pool)
		ct = calloc(1, sizeof(*ct));
	if (!ct) {
		clear_header(s->v[id].fd, id);
		return;
	}
	pool_task_init(&ct->t, clr_run, clr_done, clr_drop);
	ct->s = s;
	ct->id = id;
	ct->fd = s->v[id].fd;
	s->v[id].clearing = 1;
	s->clearing++;
	pool_submit(s->pool, &ct->t, 1);
}

int segs_move(struct segs *s, uint32_t id, const char *path)
{
	char from[700];
	int ret;

	if (id >= s->n || s->v[id].fd < 0)
		return -ENOENT;
	ret = segs_path(s, id, from, sizeof(from));
	if (ret < 0)
		return ret;
	ret = sys_rename(from, path);
	if (ret < 0)
		return ret;
	if (s->v[id].used)
		s->nused--;
	close(s->v[id].fd);
	s->bytes -= s->v[id].size;
	s->moved += s->v[id].size;      /* still on the disk */
	s->v[id] = (struct seg){ .fd = -1 };
	segs_update(s);
	return 0;
}
