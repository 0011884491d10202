/*
 * query.c - the reader's side of libckpt: latest, read, listings, status,
 * remove.
 *
 * The calls that fill a caller's struct (status, stat) follow ckpt.h's
 * growth rule: the *2 variants take the size the caller was compiled with and
 * copy_sized() writes exactly that many bytes; the original calls are
 * wrappers that pass the size of the structs' first release.
 *
 * ckpt_read() asks ckptd to place verified bytes into a reservation of the
 * staging lease and copies them out: bulk bytes never cross the socket.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "names.h"

#define READ_PIECE (16u << 20)   /* bytes of one READ at most */
#define READ_DEPTH 2              /* READs in flight per call */

static int check_names(const char *job, const char *version)
{
	if (!job || name_check_job(job))
		return -CKPT_EBADNAME;
	if (version && name_check_version(version))
		return -CKPT_EBADNAME;
	return 0;
}

/* A request naming job (and version, if not NULL), names checked. */
static int named_req(struct proto_msg *req, uint16_t type, const char *job,
		     const char *version)
{
	int ret = check_names(job, version);

	memset(req, 0, sizeof(*req));
	req->type = type;
	if (ret < 0)
		return ret;
	req->job = job;
	if (version)
		req->version = version;
	return 0;
}

/* The structs' first releases end where these fields end (see ckpt.h). */
_Static_assert(CKPT_STATUS_SIZE_VER0 <= sizeof(struct ckpt_status),
	       "ckpt_status only grows");
_Static_assert(CKPT_VERSION_INFO_SIZE_VER0 <= sizeof(struct ckpt_version_info),
	       "ckpt_version_info only grows");
_Static_assert(CKPT_FILE_INFO_SIZE_VER0 <= sizeof(struct ckpt_file_info),
	       "ckpt_file_info only grows");

/*
 * The growth rule of ckpt.h: copy the first size bytes of the library's full
 * struct (known bytes) to the caller's out, zero the caller's bytes this
 * library does not know (a newer header's fields), and write nothing past
 * size.  Returns known, which fits an int.
 */
static int copy_sized(void *out, size_t size, const void *full, size_t known)
{
	if (size)       /* size 0 writes nothing; out may be NULL */
		memcpy(out, full, size < known ? size : known);
	if (size > known)
		memset((uint8_t *)out + known, 0, size - known);
	return (int)known;
}

int ckpt_latest(struct ckpt_client *c, const char *job,
		enum ckpt_level min_level, char *version, size_t cap)
{
	struct proto_msg req, rep;
	int ret;

	if (!c || !version)
		return -EINVAL;
	ret = named_req(&req, PROTO_LATEST, job, NULL);
	if (ret < 0)
		return ret;
	req.level = min_level;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	/* rep.version lives in c's receive buffer: copy it under the lock. */
	if (ret == 0 && strlen(rep.version) >= cap)
		ret = -ERANGE;
	else if (ret == 0)
		strcpy(version, rep.version);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_seek_data(struct ckpt_client *c, const char *job,
		   const char *version, const char *path, uint64_t offset,
		   uint64_t len, uint64_t *data, uint64_t *data_len)
{
	struct proto_msg req, rep;
	int ret = named_req(&req, PROTO_SEEK_DATA, job, version);

	if (ret < 0)
		return ret;
	if (!c || !version || !path || !data || !data_len)
		return -EINVAL;
	ret = name_check_path(path);
	if (ret < 0)
		return ret;
	if (!len)
		return -ENXIO;          /* an empty range holds no data */
	req.path = path;
	req.off = offset;
	req.size = len;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	pthread_mutex_unlock(&c->mu);
	if (ret < 0)
		return ret;
	/* inside the range asked, or ckptd is wrong */
	if (rep.off < offset || !rep.size || rep.off - offset >= len ||
	    rep.size > len - (rep.off - offset))
		return -CKPT_EPROTO;
	*data = rep.off;
	*data_len = rep.size;
	return 0;
}

/* One READ in flight: where it lands in the lease, what it asked for, and
 * its answer once that came. */
struct read_slot {
	uint64_t ring_off;
	uint64_t off;             /* in the file */
	uint64_t len;
	uint32_t seq;
	int answered;
	int status;
	uint64_t size;
};

/* The READs of one ckpt_read_sink(): at most READ_DEPTH in flight, answered
 * in any order, handed to the sink in file order. */
struct read_pipe {
	struct ckpt_client *c;
	struct proto_msg req;     /* job, version, path: the same for all */
	struct read_slot slot[READ_DEPTH];
	unsigned front, n;        /* the oldest, and how many in flight */
};

static struct read_slot *pipe_at(struct read_pipe *p, unsigned i)
{
	return &p->slot[(p->front + i) % READ_DEPTH];
}

/* Send a READ of len bytes at off into a new reservation.  -ENOBUFS while
 * the ring has no room until an earlier READ is handed on.  With READs in
 * flight it must not wait for room: ring_reserve() would read (and drop)
 * their answers while it waits for WACKs. */
static int pipe_send(struct read_pipe *p, uint64_t off, uint64_t len)
{
	struct read_slot *s = pipe_at(p, p->n);
	int ret;

	if (p->n && !ring_fits(p->c, len))
		return -ENOBUFS;
	ret = ring_reserve(p->c, len, 0, RESV_OWN, &s->ring_off);
	if (ret < 0)
		return ret;
	p->req.off = off;
	p->req.len = len;
	p->req.ring_off = s->ring_off;
	ret = cl_send(p->c, &p->req);
	if (ret < 0) {
		ring_done(p->c, s->ring_off);
		return ret;
	}
	s->off = off;
	s->len = len;
	s->seq = p->req.seq;
	s->answered = 0;
	p->n++;
	return 0;
}

/* Receive until the oldest READ is answered (later ones' answers are
 * kept).  0, or -errno when the connection failed. */
static int pipe_wait(struct read_pipe *p)
{
	struct proto_msg rep;
	struct read_slot *s;
	unsigned i;
	int ret;

	while (!pipe_at(p, 0)->answered) {
		ret = cl_reply(p->c, &rep, NULL, -1);
		if (ret < 0)
			return ret;
		if (rep.type != (PROTO_READ | PROTO_REPLY))
			continue;       /* a call that timed out: dropped */
		for (i = 0; i < p->n; i++) {
			s = pipe_at(p, i);
			if (s->seq == rep.seq && !s->answered) {
				s->answered = 1;
				s->status = rep.status;
				s->size = rep.size;
			}
		}
	}
	return 0;
}

/* The oldest READ is answered or given up: free its bytes of the lease. */
static void pipe_pop(struct read_pipe *p)
{
	ring_done(p->c, pipe_at(p, 0)->ring_off);
	p->front = (p->front + 1) % READ_DEPTH;
	p->n--;
}

/* Hand the oldest READ's answer to sink.  0, 1 at end of file, or the
 * error. */
static int pipe_take(struct read_pipe *p, ckpt_sink_fn sink, void *arg,
		     size_t *done)
{
	struct read_slot *s = pipe_at(p, 0);
	int ret = s->status;

	if (ret == 0 && s->size > s->len)
		ret = -CKPT_EPROTO;
	if (ret == 0 && s->size)
		ret = sink(arg, p->c->map + s->ring_off, s->size, s->off);
	if (ret > 0)
		ret = 0;
	if (ret == 0) {
		*done += s->size;
		if (s->size < s->len)
			ret = 1;
	}
	return ret;
}

/*
 * The READs go out READ_DEPTH at a time, so ckptd reads the next piece
 * while the sink consumes this one.  Once one fails or comes back short
 * (end of file), no more are sent and those in flight are waited for and
 * dropped: their bytes of the lease are ckptd's until it answers.  A
 * connection that fails takes back every reservation (nothing more will be
 * answered on it).
 */
int ckpt_read_sink(struct ckpt_client *c, const char *job,
		   const char *version, const char *path, size_t len,
		   uint64_t offset, ckpt_sink_fn sink, void *arg,
		   size_t *nread)
{
	struct read_pipe p = { .c = c };
	size_t done = 0;
	uint64_t sent = 0, max, want;
	int ret = check_names(job, version), err, stop;

	if (ret < 0)
		return ret;
	if (!c || !path || !sink || !nread)
		return -EINVAL;
	*nread = 0;
	ret = name_check_path(path);
	if (ret < 0)
		return ret;
	p.req.type = PROTO_READ;
	p.req.job = job;
	p.req.version = version;
	p.req.path = path;
	pthread_mutex_lock(&c->mu);
	err = cl_ensure_lease(c);
	stop = err < 0;
	max = c->size / READ_DEPTH < READ_PIECE ? c->size / READ_DEPTH :
						   READ_PIECE;
	for (;;) {
		if (!stop && sent < len && p.n < READ_DEPTH) {
			want = len - sent < max ? len - sent : max;
			ret = pipe_send(&p, offset + sent, want);
			if (ret == 0) {
				sent += want;
				continue;
			}
			if (ret != -ENOBUFS || !p.n) {
				err = ret;
				stop = 1;
			}
		}
		if (!p.n)
			break;          /* all handed on, or stopped */
		ret = pipe_wait(&p);
		if (ret < 0) {
			if (!err)
				err = ret;
			while (p.n)
				pipe_pop(&p);
			break;
		}
		if (!stop) {
			ret = pipe_take(&p, sink, arg, &done);
			if (ret < 0)
				err = ret;
			stop = ret != 0;
		}
		pipe_pop(&p);
	}
	pthread_mutex_unlock(&c->mu);
	*nread = done;
	return err;
}

struct read_buf {
	uint8_t *buf;
	uint64_t offset;          /* of buf[0] in the file */
};

static int copy_out(void *arg, const void *data, size_t len, uint64_t off)
{
	struct read_buf *rb = arg;

	memcpy(rb->buf + (off - rb->offset), data, len);
	return 0;
}

int ckpt_read(struct ckpt_client *c, const char *job, const char *version,
	      const char *path, void *buf, size_t len, uint64_t offset,
	      size_t *nread)
{
	struct read_buf rb = { .buf = buf, .offset = offset };

	if (!buf && len)
		return -EINVAL;
	return ckpt_read_sink(c, job, version, path, len, offset, copy_out,
			      &rb, nread);
}

/* A listing RPC: send req, and hand the reply's payload to the caller. */
static int list_rpc(struct ckpt_client *c, struct proto_msg *req,
		    struct dec *rest, uint32_t *count, uint64_t *total)
{
	struct proto_msg rep;
	int ret;

	ret = cl_rpc(c, req, &rep, rest, -1);
	if (ret < 0)
		return ret;
	if (total)
		*total = rep.size;
	if (count) {
		/* Bounded by the bytes present: safe to allocate by. */
		*count = proto_dec_list_count(rest, req->type);
		if (rest->err)
			return -CKPT_EPROTO;
	}
	return 0;
}

/*
 * The state of one list call: the element size and, for entries that carry
 * a path (file and plan entries), their paths, gathered in order and
 * appended to the array's own allocation at the end, so that one free()
 * frees both.
 */
struct list_ctx {
	size_t elem;          /* bytes of an element */
	size_t name_off;      /* offset of the element's name pointer; 0 none */
	char *names;          /* every entry's path, NUL-terminated, in order */
	size_t nlen, ncap;
	int err;              /* -ENAMETOOLONG, -ENOMEM: fails the call */
};

/* Decodes one entry of a listing into dst, an element of lc->elem bytes. */
typedef void (*entry_fn)(struct dec *d, void *dst, struct list_ctx *lc);

/* Do the elements have a name field (the caller's size reaches past it)? */
static int list_has_name(const struct list_ctx *lc)
{
	return lc->name_off &&
	       lc->elem >= lc->name_off + sizeof(const char *);
}

/* Keep an entry's whole path, or fail the call when the caller's elements
 * have no name and their path[] cannot hold it. */
static void list_keep_name(struct list_ctx *lc, const char *name)
{
	size_t n = strlen(name) + 1, cap;
	char *grown;

	if (!list_has_name(lc)) {
		if (n - 1 > CKPT_PATH_MAX && !lc->err)
			lc->err = -ENAMETOOLONG;
		return;
	}
	if (lc->nlen + n > lc->ncap) {
		cap = lc->ncap ? lc->ncap * 2 : 4096;
		while (cap < lc->nlen + n)
			cap *= 2;
		grown = realloc(lc->names, cap);
		if (!grown) {
			lc->err = -ENOMEM;
			return;
		}
		lc->names = grown;
		lc->ncap = cap;
	}
	memcpy(lc->names + lc->nlen, name, n);
	lc->nlen += n;
}

/* Append the kept paths after the have + 1 elements of *arr and point each
 * element's name at its own.  0 or -ENOMEM (*arr unchanged). */
static int list_place_names(struct list_ctx *lc, uint8_t **arr, uint32_t have)
{
	size_t head = ((size_t)have + 1) * lc->elem, at = 0;
	const char *name;
	uint8_t *grown;
	uint32_t i;

	if (!list_has_name(lc) || !have)
		return 0;
	grown = realloc(*arr, head + lc->nlen);
	if (!grown)
		return -ENOMEM;
	*arr = grown;
	memcpy(grown + head, lc->names, lc->nlen);
	for (i = 0; i < have; i++) {
		name = (const char *)grown + head + at;
		memcpy(grown + (size_t)i * lc->elem + lc->name_off, &name,
		       sizeof(name));
		at += strlen(name) + 1;
	}
	return 0;
}

/*
 * The common body of the list calls: send req, and decode the count and
 * entries of its reply into a malloc'd array of lc->elem-byte entries (one
 * more, zeroed, ends it), followed by their paths if the entries have a
 * name.  Returns the count, or a negative error (nothing allocated).
 */
static int list_call(struct ckpt_client *c, struct proto_msg *req,
		     struct list_ctx *lc, entry_fn fn, void **out)
{
	uint8_t *arr = NULL, *grown;
	uint64_t total = 0;
	uint32_t n, i, have = 0;
	size_t bytes, elem = lc->elem;
	struct dec d;
	int ret;

	if (!c || !out || !elem)
		return -EINVAL;
	pthread_mutex_lock(&c->mu);
	do {
		req->off = have;
		ret = list_rpc(c, req, &d, &n, &total);
		if (ret < 0)
			goto out_unlock;
		if (total > INT32_MAX || have + (uint64_t)n > total) {
			ret = -CKPT_EPROTO;
			goto out_unlock;
		}
		if (__builtin_mul_overflow((size_t)have + n + 1, elem, &bytes)) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		grown = realloc(arr, bytes);
		if (!grown) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		arr = grown;
		memset(arr + (size_t)have * elem, 0, ((size_t)n + 1) * elem);
		for (i = 0; i < n; i++)
			fn(&d, arr + (size_t)(have + i) * elem, lc);
		if (d.err) {
			ret = -CKPT_EPROTO;
			goto out_unlock;
		}
		if (lc->err) {
			ret = lc->err;
			goto out_unlock;
		}
		have += n;
	} while (have < total && n > 0);
	/* A list that changed between pages ends where the pages did. */
	ret = list_place_names(lc, &arr, have);
	if (ret == 0)
		ret = (int)have;
out_unlock:
	pthread_mutex_unlock(&c->mu);
	free(lc->names);
	if (ret < 0)
		free(arr);
	else
		*out = arr;
	return ret;
}

static void job_entry(struct dec *d, void *dst, struct list_ctx *lc)
{
	proto_dec_job_entry(d, dst);
}

/* Entries of the growing structs go through a full struct and
 * copy_sized(), so an element gets exactly elem bytes. */
static void version_entry(struct dec *d, void *dst, struct list_ctx *lc)
{
	struct ckpt_version_info full;

	memset(&full, 0, sizeof(full));
	proto_dec_version_entry(d, &full);
	copy_sized(dst, lc->elem, &full, sizeof(full));
}

/* name is set by list_place_names() once the array is whole. */
static void file_entry(struct dec *d, void *dst, struct list_ctx *lc)
{
	char name[CKPT_PATH_MAX2 + 1];
	struct ckpt_file_info full;

	memset(&full, 0, sizeof(full));
	proto_dec_file_entry(d, &full, name);
	full.name = NULL;
	if (!d->err)
		list_keep_name(lc, name);
	copy_sized(dst, lc->elem, &full, sizeof(full));
}

/*
 * The element stride of the first release's arrays: its bytes rounded up to
 * the struct's alignment, which is what sizeof was then.  Appending a field
 * of wider alignment than the struct's would change it: don't.
 */
#define STRIDE_VER0(ver0, type) \
	(((ver0) + _Alignof(type) - 1) / _Alignof(type) * _Alignof(type))

int ckpt_list_jobs(struct ckpt_client *c, char (**out)[CKPT_JOB_MAX + 1])
{
	struct list_ctx lc = { .elem = CKPT_JOB_MAX + 1 };
	struct proto_msg req;

	memset(&req, 0, sizeof(req));
	req.type = PROTO_LIST_JOBS;
	return list_call(c, &req, &lc, job_entry, (void **)out);
}

int ckpt_list_versions2(struct ckpt_client *c, const char *job,
			struct ckpt_version_info **out, size_t size)
{
	struct list_ctx lc = { .elem = size };
	struct proto_msg req;
	int ret = named_req(&req, PROTO_LIST_VERSIONS, job, NULL);

	return ret < 0 ? ret : list_call(c, &req, &lc, version_entry,
					 (void **)out);
}

int ckpt_list_versions(struct ckpt_client *c, const char *job,
		       struct ckpt_version_info **out)
{
	return ckpt_list_versions2(c, job, out,
				   STRIDE_VER0(CKPT_VERSION_INFO_SIZE_VER0,
					       struct ckpt_version_info));
}

int ckpt_list_parts(struct ckpt_client *c, const char *job,
		    const char *version, struct ckpt_version_info **out,
		    size_t size)
{
	struct list_ctx lc = { .elem = size };
	struct proto_msg req;
	int ret = version ? named_req(&req, PROTO_LIST_PARTS, job, version)
			  : -EINVAL;

	return ret < 0 ? ret : list_call(c, &req, &lc, version_entry,
					 (void **)out);
}

static void node_entry(struct dec *d, void *dst, struct list_ctx *lc)
{
	struct ckpt_node_info full;

	memset(&full, 0, sizeof(full));
	proto_dec_node_entry(d, &full);
	copy_sized(dst, lc->elem, &full, sizeof(full));
}

int ckpt_list_nodes(struct ckpt_client *c, struct ckpt_node_info **out,
		    size_t size)
{
	struct list_ctx lc = { .elem = size };
	struct proto_msg req;

	memset(&req, 0, sizeof(req));
	req.type = PROTO_LIST_NODES;
	return list_call(c, &req, &lc, node_entry, (void **)out);
}

static void plan_entry(struct dec *d, void *dst, struct list_ctx *lc)
{
	char name[CKPT_PATH_MAX2 + 1];
	struct ckpt_plan_entry full;

	memset(&full, 0, sizeof(full));
	proto_dec_plan_entry(d, &full, name);
	full.name = NULL;
	if (!d->err)
		list_keep_name(lc, name);
	copy_sized(dst, lc->elem, &full, sizeof(full));
}

int ckpt_plan(struct ckpt_client *c, const char *job, const char *version,
	      struct ckpt_plan_entry **out, size_t size)
{
	struct list_ctx lc = {
		.elem = size,
		.name_off = offsetof(struct ckpt_plan_entry, name),
	};
	struct proto_msg req;
	int ret = version ? named_req(&req, PROTO_PLAN, job, version)
			  : -EINVAL;

	return ret < 0 ? ret : list_call(c, &req, &lc, plan_entry,
					 (void **)out);
}

int ckpt_list_files2(struct ckpt_client *c, const char *job,
		     const char *version, struct ckpt_file_info **out,
		     size_t size)
{
	struct list_ctx lc = {
		.elem = size,
		.name_off = offsetof(struct ckpt_file_info, name),
	};
	struct proto_msg req;
	int ret = version ? named_req(&req, PROTO_LIST_FILES, job, version)
			  : -EINVAL;

	return ret < 0 ? ret : list_call(c, &req, &lc, file_entry,
					 (void **)out);
}

int ckpt_list_files(struct ckpt_client *c, const char *job,
		    const char *version, struct ckpt_file_info **out)
{
	return ckpt_list_files2(c, job, version, out,
				STRIDE_VER0(CKPT_FILE_INFO_SIZE_VER0,
					    struct ckpt_file_info));
}

int ckpt_stat_version2(struct ckpt_client *c, const char *job,
		       const char *version, struct ckpt_version_info *out,
		       size_t size)
{
	struct ckpt_version_info full;
	struct proto_msg req;
	struct dec d;
	int ret;

	if (!c || (!out && size) || !version || size > INT32_MAX)
		return -EINVAL;
	ret = named_req(&req, PROTO_STAT, job, version);
	if (ret < 0)
		return ret;
	memset(&full, 0, sizeof(full));
	pthread_mutex_lock(&c->mu);
	ret = list_rpc(c, &req, &d, NULL, NULL);
	if (ret == 0) {
		proto_dec_version_entry(&d, &full);
		ret = d.err ? -CKPT_EPROTO : 0;
	}
	pthread_mutex_unlock(&c->mu);
	if (ret < 0)
		return ret;
	return copy_sized(out, size, &full, sizeof(full));
}

int ckpt_stat_version(struct ckpt_client *c, const char *job,
		      const char *version, struct ckpt_version_info *out)
{
	int ret;

	if (!out)
		return -EINVAL;
	ret = ckpt_stat_version2(c, job, version, out,
				 CKPT_VERSION_INFO_SIZE_VER0);
	return ret < 0 ? ret : 0;
}

int ckpt_stat_file2(struct ckpt_client *c, const char *job,
		    const char *version, const char *path,
		    struct ckpt_file_info *out, size_t size)
{
	char name[CKPT_PATH_MAX2 + 1];
	struct ckpt_file_info full;
	struct proto_msg req;
	struct dec d;
	int ret;

	if (!c || (!out && size) || !version || !path || size > INT32_MAX)
		return -EINVAL;
	ret = named_req(&req, PROTO_STAT_FILE, job, version);
	if (ret == 0)
		ret = name_check_path(path);
	if (ret < 0)
		return ret;
	/* Without name (a caller built before it), path[] must hold it. */
	if (strlen(path) > CKPT_PATH_MAX &&
	    size < offsetof(struct ckpt_file_info, name) + sizeof(full.name))
		return -ENAMETOOLONG;
	req.path = path;
	memset(&full, 0, sizeof(full));
	pthread_mutex_lock(&c->mu);
	ret = list_rpc(c, &req, &d, NULL, NULL);
	if (ret == 0) {
		proto_dec_file_entry(&d, &full, name);
		ret = d.err ? -CKPT_EPROTO : 0;
	}
	pthread_mutex_unlock(&c->mu);
	if (ret < 0)
		return ret;
	full.name = NULL;       /* name is on this stack: the path asked for */
	return copy_sized(out, size, &full, sizeof(full));
}

int ckpt_stat_file(struct ckpt_client *c, const char *job, const char *version,
		   const char *path, struct ckpt_file_info *out)
{
	int ret;

	if (!out)
		return -EINVAL;
	ret = ckpt_stat_file2(c, job, version, path, out,
			      CKPT_FILE_INFO_SIZE_VER0);
	return ret < 0 ? ret : 0;
}

int ckpt_status2(struct ckpt_client *c, struct ckpt_status *out, size_t size)
{
	struct ckpt_status full;
	struct proto_msg req;
	struct dec d;
	int ret;

	if (!c || (!out && size) || size > INT32_MAX)
		return -EINVAL;
	if (size == 0)
		return (int)sizeof(full);
	memset(&req, 0, sizeof(req));
	memset(&full, 0, sizeof(full));
	req.type = PROTO_STATUS;
	pthread_mutex_lock(&c->mu);
	ret = list_rpc(c, &req, &d, NULL, NULL);
	if (ret == 0) {
		proto_dec_status(&d, &full);
		ret = d.err ? -CKPT_EPROTO : 0;
	}
	pthread_mutex_unlock(&c->mu);
	if (ret < 0)
		return ret;
	return copy_sized(out, size, &full, sizeof(full));
}

/* The first release's call: it fills the fields of that release only, so a
 * program built then never has bytes written past its struct. */
int ckpt_status(struct ckpt_client *c, struct ckpt_status *out)
{
	int ret = ckpt_status2(c, out, CKPT_STATUS_SIZE_VER0);

	return ret < 0 ? ret : 0;
}

/* A request naming job and version, with no reply fields. */
static int named_call(struct ckpt_client *c, uint16_t type, const char *job,
		      const char *version)
{
	struct proto_msg req, rep;
	int ret;

	if (!c || !version)
		return -EINVAL;
	ret = named_req(&req, type, job, version);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_commit_name(struct ckpt_client *c, const char *job,
		     const char *version)
{
	return named_call(c, PROTO_COMMIT_NAME, job, version);
}

int ckpt_drain(struct ckpt_client *c, enum ckpt_drain_cmd cmd,
	       const char *job, const char *version)
{
	struct proto_msg req, rep;
	int ret = 0;

	if (!c)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	if (cmd == CKPT_DRAIN_NOW) {
		return named_call(c, PROTO_DRAIN_NOW, job, version);
	} else if (cmd == CKPT_DRAIN_PAUSE || cmd == CKPT_DRAIN_RESUME ||
		   cmd == CKPT_DRAIN_ADOPT) {
		req.type = PROTO_DRAIN;
		req.level = cmd;
	} else {
		return -EINVAL;
	}
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_rebuild(struct ckpt_client *c)
{
	struct proto_msg req, rep;
	int ret;

	if (!c)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.type = PROTO_REBUILD;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

/* REMOVE of job/version, on the condition id, off and aux give (proto.h,
 * PROTO_REMOVE_IF), or none (all 0). */
static int remove_call(struct ckpt_client *c, const char *job,
		       const char *version, uint32_t id, uint64_t seq,
		       uint64_t sealed_ns)
{
	struct proto_msg req, rep;
	int ret;

	if (!c || !version)
		return -EINVAL;
	ret = named_req(&req, PROTO_REMOVE, job, version);
	if (ret < 0)
		return ret;
	req.id = id;
	req.off = seq;
	req.aux = sealed_ns;
	pthread_mutex_lock(&c->mu);
	ret = cl_rpc(c, &req, &rep, NULL, -1);
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int ckpt_remove(struct ckpt_client *c, const char *job, const char *version)
{
	return remove_call(c, job, version, 0, 0, 0);
}

int ckpt_remove_if(struct ckpt_client *c,
		   const struct ckpt_version_info *expect)
{
	if (!expect)
		return -EINVAL;
	return remove_call(c, expect->job, expect->version,
			   PROTO_REMOVE_IF | (expect->copies & PROTO_REMOVE_COPIES) |
			   (expect->rm_part_pfs ? PROTO_REMOVE_PART_PFS : 0),
			   expect->seq, expect->sealed_ns);
}

int ckpt_getxattrs(struct ckpt_client *c, const char *job, const char *version,
		   const char *path, void *buf, size_t cap)
{
	struct proto_msg req;
	const uint8_t *blob;
	uint32_t len = 0;
	struct dec d;
	int ret;

	if (!c || !version || !path || (!buf && cap))
		return -EINVAL;
	ret = named_req(&req, PROTO_GETXATTRS, job, version);
	if (ret == 0)
		ret = name_check_path(path);
	if (ret < 0)
		return ret;
	req.path = path;
	pthread_mutex_lock(&c->mu);
	ret = list_rpc(c, &req, &d, NULL, NULL);
	if (ret == 0) {
		blob = proto_dec_blob(&d, &len);
		ret = d.err || dec_left(&d) ? -CKPT_EPROTO : 0;
		if (ret == 0 && len > cap)
			ret = -ERANGE;
		if (ret == 0 && len)
			memcpy(buf, blob, len);
	}
	pthread_mutex_unlock(&c->mu);
	return ret < 0 ? ret : (int)len;
}
