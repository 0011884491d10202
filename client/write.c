/*
 * write.c - the writer's side of libckpt: begin, write (copying, async and
 * zero-copy), commit, abort, wait.
 *
 * ckpt_write() splits the caller's bytes into pieces ckptd accepts, copies
 * each into a ring reservation and sends a WRITE naming it.  That one copy is
 * the caller's whole cost; the disk write happens in ckptd and is reported by
 * a WACK, which only frees ring space.  An error in it sticks to the version
 * and is returned by the next call on it and by ckpt_commit().
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_i.h"
#include "names.h"
#include "codec.h"
#include "xattr.h"

int ckpt_begin(struct ckpt_client *c, const char *job, const char *version,
	       struct ckpt_version **out)
{
	return ckpt_begin2(c, job, version, CKPT_UID_SELF, 0, out);
}

int ckpt_begin_as(struct ckpt_client *c, const char *job, const char *version,
		  uint32_t uid, struct ckpt_version **out)
{
	return ckpt_begin2(c, job, version, uid, 0, out);
}

/* A part count from the environment: CKPT_NODES, else Slurm's node count
 * of the job, else 0 (ckptd's default).  A value that is not a number in
 * 1..CKPT_NODES_MAX counts as unset. */
static uint32_t env_nparts(void)
{
	static const char *const vars[] = { "CKPT_NODES", "SLURM_JOB_NUM_NODES" };
	unsigned long n;
	char *end;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *s = getenv(vars[i]);

		if (!s || !*s)
			continue;
		errno = 0;
		n = strtoul(s, &end, 10);
		if (!errno && !*end && n >= 1 && n <= CKPT_NODES_MAX)
			return (uint32_t)n;
	}
	return 0;
}

int ckpt_begin2(struct ckpt_client *c, const char *job, const char *version,
		uint32_t uid, uint32_t nparts, struct ckpt_version **out)
{
	struct proto_msg req, rep;
	struct ckpt_version *v;
	int ret;

	if (!c || !job || !version || !out || nparts > CKPT_NODES_MAX)
		return -EINVAL;
	if (name_check_job(job) || name_check_version(version))
		return -CKPT_EBADNAME;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(&req, 0, sizeof(req));
	req.type = PROTO_BEGIN;
	req.uid = uid;
	req.nparts = nparts ? nparts : env_nparts();
	req.job = job;
	req.version = version;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	if (ret == 0) {
		v->c = c;
		v->handle = rep.handle;
		v->serial = ++c->next_serial;
		strcpy(v->job, job);
		strcpy(v->name, version);
		list_add_tail(&c->versions, &v->link);
	}
	pthread_mutex_unlock(&c->mu);
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	return 0;
}

/* Send the WRITE for a filled reservation at ring offset off. */
static int send_piece(struct ckpt_version *v, const char *path, uint64_t off,
		      size_t len, uint64_t ring_off)
{
	struct ckpt_client *c = v->c;
	struct resv *r = ring_find_off(c, ring_off);
	struct proto_msg m;
	int ret;

	if (!r)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_WRITE;
	m.handle = v->handle;
	m.off = off;
	m.len = len;
	m.ring_off = ring_off;
	m.id = ++c->next_id;
	m.path = path;
	ret = cl_send(c, &m);
	if (ret < 0) {
		ring_done(c, ring_off);   /* no WACK will ever free it */
		return ret;
	}
	r->id = m.id;
	r->state = RESV_SENT;
	return 0;
}

/* The arguments every write takes, checked without the lock. */
static int write_args(const struct ckpt_version *v, const char *path)
{
	if (!v || !path)
		return -EINVAL;
	return name_check_path(path);
}

/* The bytes of a write: none, or a buffer whose range does not wrap. */
static int write_bytes(const void *buf, size_t len, uint64_t offset)
{
	return (!buf && len) || offset + len < offset ? -EINVAL : 0;
}

/* 1 if v takes no more writes or namespace calls: committed, aborted, or
 * a commit or abort waiting for its writers.  Called with c->mu held. */
static int sealed(const struct ckpt_version *v)
{
	return v->committed || v->sealing;
}

/* Does v take a write now?  With c->mu held: -CKPT_ESEALED once committed,
 * aborted or being sealed; the error of an earlier background write; 0. */
static int write_state(const struct ckpt_version *v)
{
	return sealed(v) ? -CKPT_ESEALED : v->err;
}

/* Does v take this write now?  With c->mu held: its state first (a sealed
 * version says so whatever the bytes), then the bytes. */
static int write_ok(const struct ckpt_version *v, const void *buf,
		    size_t len, uint64_t offset)
{
	int ret = write_state(v);

	return ret < 0 ? ret : write_bytes(buf, len, offset);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * The waits a writer's stall is made of (see struct ckpt_version): for the
 * staging lease, and for ring space that only WACKs free.  Called with
 * c->mu held.
 */
static int lease_timed(struct ckpt_version *v)
{
	uint64_t t0 = mono_ns(), t;
	int ret;

	ret = cl_ensure_lease(v->c);
	t = mono_ns() - t0;
	v->stall_ns += t;
	v->stall_staging_ns += t;
	return ret;
}

static int reserve_timed(struct ckpt_version *v, size_t len, uint8_t state,
			 uint64_t *off)
{
	uint64_t t0 = mono_ns();
	int ret;

	ret = ring_reserve(v->c, len, v->serial, state, off);
	v->stall_ns += mono_ns() - t0;
	return ret;
}

/* The writer's rank, from the environment of the usual launchers, or
 * PROTO_RANK_NONE. */
static uint32_t env_rank(void)
{
	static const char *const vars[] = {
		"SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
		"PMIX_RANK",
	};
	unsigned long r;
	unsigned i;
	char *end;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *s = getenv(vars[i]);

		if (!s || !*s)
			continue;
		errno = 0;
		r = strtoul(s, &end, 10);
		if (!*end && !errno && r < PROTO_RANK_NONE)
			return (uint32_t)r;
	}
	return PROTO_RANK_NONE;
}

/*
 * Copy n bytes into the reservation at ring_off, and send its WRITE.
 * Called with c->mu held; the copy runs without it, so that writers on
 * several threads of one client copy at once (client_i.h, Locking).  The
 * reservation is held meanwhile: the ring is not freed past it, the lease
 * is not given back, and its WRITE is sent once the lock is back.
 */
static int copy_send(struct ckpt_version *v, const char *path,
		     const uint8_t *buf, size_t n, uint64_t offset,
		     uint64_t ring_off)
{
	struct ckpt_client *c = v->c;
	uint8_t *dst = c->map + ring_off;
	int ret;

	c->copying++;
	pthread_mutex_unlock(&c->mu);
	cl_copy(dst, buf, n);
	if (n % 4096)   /* padding is written too: no stale bytes */
		memset(dst + n, 0, 4096 - n % 4096);
	pthread_mutex_lock(&c->mu);
	ret = send_piece(v, path, offset, n, ring_off);
	c->copying--;
	pthread_cond_broadcast(&c->ring_cv);
	return ret;
}

/* Copy and send [buf, buf+len) in pieces.  Called with c->mu held (which
 * copy_send() lets go of during each copy, and ring_reserve() while it
 * waits for another thread's copy), counted in v->writers. */
static int write_pieces(struct ckpt_version *v, const char *path,
			const uint8_t *buf, size_t len, uint64_t offset)
{
	struct ckpt_client *c = v->c;
	uint64_t ring_off;
	size_t n;
	int ret;

	ret = lease_timed(v);
	if (ret < 0)
		return ret;
	while (len) {
		n = len < c->piece ? len : c->piece;
		ret = reserve_timed(v, n, RESV_OWN, &ring_off);
		if (ret < 0)
			return ret;
		ret = copy_send(v, path, buf, n, offset, ring_off);
		if (ret < 0)
			return ret;
		buf += n;
		offset += n;
		len -= n;
	}
	return v->err;
}

/* A write, whole: with c->mu held, it starts only if v takes it
 * (write_ok()), and a commit waits for it to send every piece. */
static int write_locked(struct ckpt_version *v, const char *path,
			const uint8_t *buf, size_t len, uint64_t offset)
{
	int ret = write_ok(v, buf, len, offset);

	if (ret < 0 || !len)
		return ret;
	v->writers++;
	ret = write_pieces(v, path, buf, len, offset);
	if (--v->writers == 0)
		pthread_cond_broadcast(&v->c->ring_cv);
	return ret;
}

int ckpt_write(struct ckpt_version *v, const char *path, const void *buf,
	       size_t len, uint64_t offset)
{
	int ret = write_args(v, path);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&v->c->mu);
	ret = write_locked(v, path, buf, len, offset);
	pthread_mutex_unlock(&v->c->mu);
	return ret;
}

/* ---- asynchronous writes ------------------------------------------------ */

static void *async_main(void *arg)
{
	struct ckpt_client *c = arg;
	struct async_req *a;
	int ret;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (list_empty(&c->queue) && !c->thr_stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (list_empty(&c->queue))
			break;
		a = list_entry(c->queue.next, struct async_req, link);
		list_del(&a->link);
		ret = write_locked(a->v, a->path, a->buf, a->len, a->off);
		if (ret < 0 && !a->v->async_err)
			a->v->async_err = ret;
		pthread_mutex_unlock(&c->mu);
		if (a->done)
			a->done(a->arg, ret);
		pthread_mutex_lock(&c->mu);
		a->v->async_pending--;
		pthread_cond_broadcast(&c->done_cv);
		free(a->path);
		free(a);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int ckpt_write_async(struct ckpt_version *v, const char *path, const void *buf,
		     size_t len, uint64_t offset, ckpt_done_fn done, void *arg)
{
	struct ckpt_client *c;
	struct async_req *a;
	int ret = write_args(v, path);

	if (ret < 0)
		return ret;
	c = v->c;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->path = strdup(path);
	if (!a->path) {
		free(a);
		return -ENOMEM;
	}
	*a = (struct async_req){ .v = v, .path = a->path, .buf = buf,
				 .len = len, .off = offset, .done = done,
				 .arg = arg };
	pthread_mutex_lock(&c->mu);
	ret = write_ok(v, buf, len, offset);   /* refused now, not in done */
	if (ret < 0)
		goto out_unlock;
	if (!c->thr_started) {
		ret = -pthread_create(&c->thr, NULL, async_main, c);
		if (ret < 0)
			goto out_unlock;
		c->thr_started = 1;
	}
	v->async_pending++;
	list_add_tail(&c->queue, &a->link);
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return 0;

out_unlock:
	pthread_mutex_unlock(&c->mu);
	free(a->path);
	free(a);
	return ret;
}

int ckpt_flush(struct ckpt_version *v)
{
	struct ckpt_client *c;
	int ret;

	if (!v)
		return -EINVAL;
	c = v->c;
	pthread_mutex_lock(&c->mu);
	while (v->async_pending)
		pthread_cond_wait(&c->done_cv, &c->mu);
	ret = v->async_err ? v->async_err : v->err;
	pthread_mutex_unlock(&c->mu);
	return ret;
}

/* ---- zero-copy ---------------------------------------------------------- */

size_t ckpt_buf_max(struct ckpt_client *c)
{
	size_t n = 0;

	pthread_mutex_lock(&c->mu);
	if (cl_ensure_lease(c) == 0)
		n = c->piece;
	pthread_mutex_unlock(&c->mu);
	return n;
}

int ckpt_buf_get(struct ckpt_version *v, size_t len, void **buf)
{
	struct ckpt_client *c;
	uint64_t off;
	int ret;

	if (!v || !buf || !len)
		return -EINVAL;
	c = v->c;
	pthread_mutex_lock(&c->mu);
	ret = sealed(v) ? -CKPT_ESEALED : lease_timed(v);
	if (ret == 0 && len > c->piece)
		ret = -EMSGSIZE;
	if (ret == 0)
		ret = reserve_timed(v, len, RESV_LENT, &off);
	if (ret == 0)
		*buf = c->map + off;
	pthread_mutex_unlock(&c->mu);
	return ret;
}

/* The ring offset of a pointer from ckpt_buf_get(), or -EINVAL. */
static int64_t buf_off(struct ckpt_client *c, const void *buf)
{
	const uint8_t *p = buf;

	if (!c->map || p < c->map || p >= c->map + c->size ||
	    (p - c->map) % 4096)
		return -EINVAL;
	return p - c->map;
}

int ckpt_buf_submit(struct ckpt_version *v, const char *path, void *buf,
		    size_t len, uint64_t offset)
{
	struct ckpt_client *c;
	struct resv *r;
	int64_t off;
	int ret = write_args(v, path);

	if (ret < 0)
		return ret;
	c = v->c;
	pthread_mutex_lock(&c->mu);
	ret = write_state(v);
	if (ret < 0)
		goto out_unlock;
	off = buf_off(c, buf);
	r = off < 0 ? NULL : ring_find_lent(c, off, v->serial);
	ret = -EINVAL;
	if (!r || !len || len > r->len)
		goto out_unlock;
	if (len % 4096)
		memset((uint8_t *)buf + len, 0, 4096 - len % 4096);
	ret = send_piece(v, path, offset, len, off);
	if (ret == 0)
		ret = v->err;
out_unlock:
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_buf_cancel(struct ckpt_version *v, void *buf)
{
	struct ckpt_client *c;
	struct resv *r;
	int64_t off;
	int ret = -EINVAL;

	if (!v)
		return -EINVAL;
	c = v->c;
	pthread_mutex_lock(&c->mu);
	off = buf_off(c, buf);
	r = off < 0 ? NULL : ring_find_lent(c, off, v->serial);
	if (r) {
		ring_done(c, off);
		ret = 0;
	}
	pthread_mutex_unlock(&c->mu);
	return ret;
}

/* ---- namespace ---------------------------------------------------------- */

/* The blob of a SETXATTR (ns_call). */
struct xblob {
	const uint8_t *p;
	uint32_t len;
	uint32_t remove;
};

/* A TRUNCATE, UNLINK, RENAME, LINK, SETATTR or SETXATTR on v's handle, in order
 * with its writes. */
static int ns_call_x(struct ckpt_version *v, uint16_t type, const char *path,
		     const char *path2, uint64_t size,
		     const struct ckpt_attr *a, const struct xblob *x)
{
	struct proto_msg *req, *rep;
	int ret = write_args(v, path);

	if (ret == 0 && path2)
		ret = name_check_path(path2);
	if (ret < 0)
		return ret;
	req = calloc(2, sizeof(*req));
	if (!req)
		return -ENOMEM;
	rep = req + 1;
	req->type = type;
	req->handle = v->handle;
	req->size = size;
	req->path = path;
	if (path2)
		req->path2 = path2;
	if (a)
		req->attr = *a;
	if (x) {
		req->blob = x->p;
		req->blob_len = x->len;
		req->id = x->remove;
	}
	pthread_mutex_lock(&v->c->mu);
	/* Checked under the lock: once committed, the handle may be the
	 * next version's. */
	ret = write_state(v);
	if (ret == 0)
		ret = cl_rpc(v->c, req, rep, NULL, -1);
	pthread_mutex_unlock(&v->c->mu);
	free(req);
	return ret;
}

static int ns_call(struct ckpt_version *v, uint16_t type, const char *path,
		   const char *path2, uint64_t size, const struct ckpt_attr *a)
{
	return ns_call_x(v, type, path, path2, size, a, NULL);
}

int ckpt_truncate(struct ckpt_version *v, const char *path, uint64_t size)
{
	return ns_call(v, PROTO_TRUNCATE, path, NULL, size, NULL);
}

int ckpt_unlink(struct ckpt_version *v, const char *path)
{
	return ns_call(v, PROTO_UNLINK, path, NULL, 0, NULL);
}

int ckpt_rename(struct ckpt_version *v, const char *from, const char *to)
{
	if (!to)
		return -EINVAL;
	return ns_call(v, PROTO_RENAME, from, to, 0, NULL);
}

int ckpt_link(struct ckpt_version *v, const char *from, const char *to)
{
	if (!to)
		return -EINVAL;
	return ns_call(v, PROTO_LINK, from, to, 0, NULL);
}

int ckpt_setattr(struct ckpt_version *v, const char *path,
		 const struct ckpt_attr *a)
{
	struct ckpt_attr c;

	if (!a || (a->set & ~CKPT_ATTR_ALL) ||
	    ((a->set & CKPT_ATTR_MODE) && !attr_mode_ok(a->mode)))
		return -EINVAL;
	c = *a;
	if (!(c.set & CKPT_ATTR_MODE)) {
		c.mode = 0;             /* not sent as a value: never refused */
		c.rdev = 0;
	}
	c.ctime_ns = 0;
	return ns_call(v, PROTO_SETATTR, path, NULL, 0, &c);
}

int ckpt_sync(struct ckpt_version *v)
{
	int ret;

	if (!v)
		return -EINVAL;
	ret = ckpt_flush(v);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&v->c->mu);
	ret = ring_drain(v->c);
	if (ret == 0)
		ret = v->err;
	pthread_mutex_unlock(&v->c->mu);
	return ret;
}

/* ---- commit, abort, wait ------------------------------------------------ */

static int end_version(struct ckpt_version *v, uint16_t type)
{
	struct ckpt_client *c = v->c;
	struct proto_msg req, rep;
	int ret, flushed, failed;

	flushed = ckpt_flush(v);
	pthread_mutex_lock(&c->mu);
	/* Writes of this version in progress on other threads send all
	 * their pieces first; later ones are refused (sealed()). */
	v->sealing = 1;
	while (v->writers)
		pthread_cond_wait(&c->ring_cv, &c->mu);
	if (v->committed) {     /* already, or another thread's commit won */
		ret = -CKPT_ESEALED;
		goto out_unlock;
	}
	/* A write of this writer failed: its share is not whole, so the
	 * version must not be sealed with it.  Abort, and say why. */
	failed = type == PROTO_COMMIT && (flushed < 0 || v->err < 0);
	memset(&req, 0, sizeof(req));
	req.type = failed ? PROTO_ABORT : type;
	req.handle = v->handle;
	if (req.type == PROTO_COMMIT) {
		req.stall = v->stall_ns;
		req.stall_staging = v->stall_staging_ns;
		req.rank = env_rank();
	}
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	if (ret == -CKPT_ECUTSHORT && req.type == PROTO_COMMIT) {
		/* Refused, not ended: the handle stays, writes go on. */
		v->sealing = 0;
		goto out_unlock;
	}
	v->committed = 1;       /* the handle is gone either way */
	if (failed)
		ret = flushed < 0 ? flushed : v->err;
	else if (type == PROTO_COMMIT && ret == 0)
		ret = v->err;
out_unlock:
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_commit(struct ckpt_version *v)
{
	return v ? end_version(v, PROTO_COMMIT) : -EINVAL;
}

int ckpt_abort(struct ckpt_version *v)
{
	return v ? end_version(v, PROTO_ABORT) : -EINVAL;
}

int ckpt_wait_name(struct ckpt_client *c, const char *job, const char *version,
		   enum ckpt_level level, int timeout_ms)
{
	struct ckpt_client w;
	struct proto_msg req, rep;
	int ret;

	if (!c || !job || !version)
		return -EINVAL;
	if (name_check_job(job) || name_check_version(version))
		return -CKPT_EBADNAME;
	/* A private connection: a long wait must not hold the client. */
	memset(&w, 0, sizeof(w));
	w.passed_fd = w.lease_fd = -1;
	list_init(&w.versions);
	w.rbuf = malloc(PROTO_HDR_LEN + PROTO_MAX_PAYLOAD);
	if (!w.rbuf)
		return -ENOMEM;
	ret = cl_connect_fd(c->path[0] ? c->path : NULL, &w.fd);
	if (ret < 0)
		goto out_free;
	memset(&req, 0, sizeof(req));
	req.type = PROTO_WAIT;
	req.level = level;
	req.job = job;
	req.version = version;
	ret = cl_rpc(&w, &req, &rep, NULL, timeout_ms);
	close(w.fd);
	if (w.passed_fd >= 0)
		close(w.passed_fd);
out_free:
	free(w.rbuf);
	return ret;
}

int ckpt_wait(struct ckpt_version *v, enum ckpt_level level, int timeout_ms)
{
	int ret;

	if (!v)
		return -EINVAL;
	pthread_mutex_lock(&v->c->mu);
	ret = v->err;           /* set under mu by whoever reads the WACKs */
	pthread_mutex_unlock(&v->c->mu);
	if (ret < 0)
		return ret;
	return ckpt_wait_name(v->c, v->job, v->name, level, timeout_ms);
}

void ckpt_version_free(struct ckpt_version *v)
{
	struct ckpt_client *c;

	if (!v)
		return;
	c = v->c;
	ckpt_flush(v);
	pthread_mutex_lock(&c->mu);
	ring_cancel_lent(c, v->serial);   /* nobody can hand them back now */
	list_del(&v->link);
	pthread_mutex_unlock(&c->mu);
	free(v);
}

int ckpt_setxattr(struct ckpt_version *v, const char *path, const char *name,
		  const void *value, size_t size)
{
	uint8_t rec[XATTR_MAX];
	size_t len = 0;
	struct xblob x = { rec, 0, value == NULL };
	int ret;

	if (!name || strncmp(name, "user.", 5) || !name[5])
		return -ENOTSUP;
	if (strlen(name) > 255 || size > 65535)
		return -ERANGE;
	ret = xattr_set(rec, &len, name, value ? value : "", value ? size : 0);
	if (ret < 0)
		return ret;
	x.len = (uint32_t)len;
	return ns_call_x(v, PROTO_SETXATTR, path, NULL, 0, NULL, &x);
}
