/*
 * pfsbuild.c - rebuilding a file's chunks from a copy's records (see
 * pfsbuild.h).
 *
 * The index is a counting sort of the records by file that keeps write
 * order.  A builder reads each record whole into a buffer of its own and
 * checks its CRC32C there: a record's bytes are usable only once all of them
 * are verified.  Most records lie within one chunk, or start in one and end
 * in the next; the second kind is kept in one of PFS_BUILD_KEEP buffers
 * until a chunk past its end is built, so it is read once.  Buffers are
 * reused from record to record (their memory is touched once per copy).
 * With direct reads the plan of a piece - the records its chunks will load,
 * in order, as pfs_builder_span() would - is read ahead through io_uring;
 * record_load() then takes a record's buffer from there, waiting for its
 * read if need be, instead of reading it.  A plan not used up is dropped
 * at the next (its reads waited for first: their buffers are the
 * kernel's until they complete).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "err.h"
#include "loop.h"
#include "pfsbuild.h"
#include "sys.h"

/* ---- the index ------------------------------------------------------------ */

int pfs_index_init(struct pfs_index *ix, const struct pfs_job *job)
{
	uint32_t i, *fill;

	memset(ix, 0, sizeof(*ix));
	ix->job = job;
	ix->order = malloc(sizeof(*ix->order) * (job->nrecs + 1));
	ix->start = calloc(job->nfiles + 1, sizeof(*ix->start));
	fill = calloc(job->nfiles + 1, sizeof(*fill));
	if (!ix->order || !ix->start || !fill) {
		free(fill);
		pfs_index_release(ix);
		return -ENOMEM;
	}
	for (i = 0; i < job->nrecs; i++)
		ix->start[job->recs[i].file + 1]++;
	for (i = 0; i < job->nfiles; i++)
		ix->start[i + 1] += ix->start[i];
	for (i = 0; i < job->nrecs; i++) {
		uint32_t f = job->recs[i].file;

		ix->order[ix->start[f] + fill[f]++] = i;   /* keeps write order */
	}
	free(fill);
	return 0;
}

void pfs_index_release(struct pfs_index *ix)
{
	free(ix->order);
	free(ix->start);
	ix->order = NULL;
	ix->start = NULL;
}

long pfs_index_cut(const struct pfs_index *ix, uint32_t f, uint32_t count,
		   uint32_t chunk, uint32_t target, uint32_t *ends)
{
	int32_t *cross;           /* difference array over boundaries */
	uint32_t k, i, first = 0;
	long n = 0;
	int32_t sum = 0;

	cross = calloc((size_t)count + 2, sizeof(*cross));
	if (!cross)
		return -ENOMEM;
	/* Boundary i is byte i * chunk; a record crosses boundaries
	 * off / chunk + 1 .. (off + len - 1) / chunk. */
	for (k = ix->start[f]; k < ix->start[f + 1]; k++) {
		const struct man_rec *r = &ix->job->recs[ix->order[k]];
		uint64_t lo, hi;

		if (r->seg == MAN_SEG_ZERO || !r->len)
			continue;
		lo = r->file_off / chunk + 1;
		hi = (r->file_off + r->len - 1) / chunk;
		if (hi >= count)
			hi = count ? count - 1 : 0;
		if (lo > hi)
			continue;
		cross[lo]++;
		cross[hi + 1]--;
	}
	for (i = 1; i < count; i++) {
		sum += cross[i];
		if (sum == 0 && i - first >= target) {
			ends[n++] = i;
			first = i;
		}
	}
	ends[n++] = count;
	free(cross);
	return n;
}

/* ---- the builder ---------------------------------------------------------- */

int pfs_builder_init(struct pfs_builder *b, const struct pfs_index *ix,
		     int direct)
{
	uint32_t i;

	memset(b, 0, sizeof(*b));
	b->ix = ix;
	b->direct = direct;
	b->scratch.rec = UINT32_MAX;
	for (i = 0; i < PFS_BUILD_KEEP; i++)
		b->keep[i].rec = UINT32_MAX;
	for (i = 0; i < PFS_BUILD_AHEAD; i++)
		b->ahead[i].rb.rec = UINT32_MAX;
	b->rfds = malloc(sizeof(*b->rfds) * (ix->job->nfds + 1));
	if (!b->rfds)
		return -ENOMEM;
	for (i = 0; i < ix->job->nfds; i++)
		b->rfds[i] = -1;
	/* No ring: records are read when wanted, as without direct. */
	if (direct)
		b->have_ring = io_uring_queue_init(PFS_BUILD_AHEAD * 2,
						   &b->ring, 0) == 0;
	return 0;
}

/* Reap one completion of the ring (waiting for it). */
static void ahead_reap(struct pfs_builder *b)
{
	struct io_uring_cqe *cqe;
	struct pfs_ahead *a;

	if (io_uring_wait_cqe(&b->ring, &cqe) < 0)
		return;
	a = &b->ahead[cqe->user_data];
	if (a->res >= 0)          /* not an injected fault (a nop) */
		a->res = cqe->res;
	if (a->res > 0)           /* the kernel filled it behind valgrind */
		loop_mark_defined(a->rb.p, (size_t)a->res);
	a->busy = 0;
	io_uring_cqe_seen(&b->ring, cqe);
}

/* Wait until no read ahead is in flight: their buffers are the kernel's
 * until then. */
static void ahead_quiesce(struct pfs_builder *b)
{
	uint32_t i;

	for (i = 0; i < PFS_BUILD_AHEAD; i++)
		while (b->ahead[i].busy)
			ahead_reap(b);
}

void pfs_builder_release(struct pfs_builder *b)
{
	uint32_t i;

	for (i = 0; b->rfds && i < b->ix->job->nfds; i++)
		if (b->rfds[i] >= 0)
			close(b->rfds[i]);
	free(b->rfds);
	b->rfds = NULL;
	for (i = 0; i < PFS_BUILD_KEEP; i++)
		sys_dio_free(b->keep[i].p, b->keep[i].cap);
	sys_dio_free(b->scratch.p, b->scratch.cap);
	if (b->have_ring) {
		ahead_quiesce(b);
		io_uring_queue_exit(&b->ring);
	}
	for (i = 0; i < PFS_BUILD_AHEAD; i++)
		sys_dio_free(b->ahead[i].rb.p, b->ahead[i].rb.cap);
	free(b->plan);
}

/*
 * The fd to read segment seg through: the job's (O_DIRECT where the store
 * allows it) when direct, else a buffered one of the builder's own, so
 * that the kernel reads ahead while the thread writes; it falls back to
 * the job's.
 */
static int read_fd(struct pfs_builder *b, uint32_t seg)
{
	const struct pfs_job *job = b->ix->job;
	char path[700];

	if (b->direct)
		return job->fds[seg];
	if (b->rfds[seg] < 0) {
		snprintf(path, sizeof(path), "%s/%08u", job->segdir, seg);
		b->rfds[seg] = open(path, O_RDONLY | O_CLOEXEC);
		if (b->rfds[seg] >= 0)
			posix_fadvise(b->rfds[seg], 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	return b->rfds[seg] >= 0 ? b->rfds[seg] : job->fds[seg];
}

/* Does buffer rb hold a record of file f still wanted by the chunk that
 * starts at coff or a later one? */
static int still_wanted(const struct pfs_builder *b, const struct pfs_rbuf *rb,
			uint32_t f, uint64_t coff)
{
	const struct man_rec *r;

	if (rb->rec == UINT32_MAX)
		return 0;
	r = &b->ix->job->recs[rb->rec];
	return r->file == f && r->file_off + r->len > coff;
}

/* Where record ri goes (or is), for the chunk [coff, cend): a keep buffer
 * when it goes on past cend and one is free, else the scratch one. */
static struct pfs_rbuf *rbuf_for(struct pfs_builder *b, uint32_t ri,
				 uint64_t coff, uint64_t cend)
{
	const struct man_rec *r = &b->ix->job->recs[ri];
	uint32_t i;

	for (i = 0; i < PFS_BUILD_KEEP; i++)
		if (b->keep[i].rec == ri)
			return &b->keep[i];
	if (b->scratch.rec == ri)
		return &b->scratch;
	if (r->file_off + r->len > cend)
		for (i = 0; i < PFS_BUILD_KEEP; i++)
			if (!still_wanted(b, &b->keep[i], r->file, coff))
				return &b->keep[i];
	return &b->scratch;
}

static int rbuf_fit(struct pfs_rbuf *rb, size_t rlen)
{
	return sys_dio_fit((void **)&rb->p, &rb->cap, rlen);
}

/* Ask for plan[next..] while there is a free read-ahead buffer. */
static void ahead_fill(struct pfs_builder *b)
{
	const struct pfs_job *job = b->ix->job;
	struct io_uring_sqe *sqe;
	struct pfs_ahead *a;
	uint32_t i, n = 0;
	size_t held = 0;

	for (i = 0; i < PFS_BUILD_AHEAD; i++)
		if (b->ahead[i].busy || b->ahead[i].rb.rec != UINT32_MAX)
			held += man_padded(job->recs[b->ahead[i].rb.rec].len);
	for (i = 0; i < PFS_BUILD_AHEAD && b->next < b->nplan; i++) {
		const struct man_rec *r = &job->recs[b->plan[b->next]];
		size_t rlen = man_padded(r->len);

		a = &b->ahead[i];
		if (a->busy || a->rb.rec != UINT32_MAX)
			continue;
		if (held && held + rlen > PFS_BUILD_AHEAD_BYTES)
			break;
		held += rlen;
		if (rbuf_fit(&a->rb, rlen) < 0 ||
		    !(sqe = io_uring_get_sqe(&b->ring)))
			break;          /* read when wanted */
		/* An injected fault is the read's answer (counted once). */
		a->res = sys_inject_wait(SYS_PREAD);
		if (a->res < 0) {
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, i);
			a->rb.rec = b->plan[b->next++];
			a->busy = 1;
			n++;
			continue;
		}
		io_uring_prep_read(sqe, job->fds[r->seg], a->rb.p,
				   (unsigned)rlen, r->seg_off);
		io_uring_sqe_set_data64(sqe, i);
		a->rb.rec = b->plan[b->next++];
		a->busy = 1;
		n++;
	}
	if (n)
		io_uring_submit(&b->ring);
}

/* Record ri, if read ahead, into rb (the buffers are swapped, not copied)
 * and verified: 0, or -errno (-EIO: short), -CKPT_ECORRUPT; 1 when it was
 * not read ahead. */
static int ahead_take(struct pfs_builder *b, uint32_t ri, size_t rlen,
		      struct pfs_rbuf *rb)
{
	const struct man_rec *r = &b->ix->job->recs[ri];
	struct pfs_rbuf t;
	uint32_t i;
	int ret = 1;

	if (!b->have_ring)
		return 1;
	for (i = 0; i < PFS_BUILD_AHEAD; i++) {
		struct pfs_ahead *a = &b->ahead[i];

		if (a->rb.rec != ri)
			continue;
		while (a->busy)
			ahead_reap(b);
		a->rb.rec = UINT32_MAX;
		if (a->res != (int)rlen) {
			ret = a->res < 0 ? a->res : -EIO;
			break;
		}
		t = a->rb;
		a->rb = *rb;
		a->rb.rec = UINT32_MAX;
		*rb = t;
		b->reads++;
		ret = crc32c(rb->p, r->len) == r->crc ? 0 : -CKPT_ECORRUPT;
		rb->rec = ret == 0 ? ri : UINT32_MAX;
		break;
	}
	ahead_fill(b);
	return ret;
}

/* Append record ri to the plan, unless it is there already. */
static int plan_add(struct pfs_builder *b, uint32_t ri)
{
	uint32_t *p, i;

	for (i = b->nplan; i-- > 0 && i + 8 >= b->nplan;)
		if (b->plan[i] == ri)
			return 0;
	if (b->nplan == b->plan_cap) {
		p = realloc(b->plan, sizeof(*p) * (b->plan_cap * 2 + 16));
		if (!p)
			return -ENOMEM;
		b->plan = p;
		b->plan_cap = b->plan_cap * 2 + 16;
	}
	b->plan[b->nplan++] = ri;
	return 0;
}

/* Record ri's bytes in a buffer, read whole and verified. */
static int record_load(struct pfs_builder *b, uint32_t ri, uint64_t coff,
		       uint64_t cend, struct pfs_rbuf **out)
{
	const struct pfs_job *job = b->ix->job;
	const struct man_rec *r = &job->recs[ri];
	size_t rlen = man_padded(r->len);
	struct pfs_rbuf *rb = rbuf_for(b, ri, coff, cend);
	int fd, ret;

	*out = rb;
	if (rb->rec == ri)
		return 0;
	rb->rec = UINT32_MAX;
	ret = ahead_take(b, ri, rlen, rb);
	if (ret <= 0)
		return ret;
	ret = rbuf_fit(rb, rlen);
	if (ret < 0)
		return ret;
	if (r->seg >= job->nfds || job->fds[r->seg] < 0)
		return -EIO;
	fd = read_fd(b, r->seg);
	ret = sys_pread_all(fd, rb->p, rlen, r->seg_off);
	if (ret < 0)
		return ret;
	b->reads++;
	/* Read once: leave the page cache to the trainers. */
	if (fd != job->fds[r->seg])
		posix_fadvise(fd, r->seg_off, rlen, POSIX_FADV_DONTNEED);
	if (crc32c(rb->p, r->len) != r->crc)
		return -CKPT_ECORRUPT;
	rb->rec = ri;
	return 0;
}

void pfs_builder_prefetch(struct pfs_builder *b, uint32_t f, uint64_t off,
			  uint64_t len)
{
	const struct pfs_index *ix = b->ix;
	const struct pfs_job *job = ix->job;
	uint64_t from = 0, to = 0;
	uint32_t k, seg = UINT32_MAX;
	int fd;

	if (b->direct)
		return;
	/* Records next to each other in a segment are asked for at once. */
	for (k = ix->start[f]; k <= ix->start[f + 1]; k++) {
		const struct man_rec *r = k < ix->start[f + 1] ?
			&job->recs[ix->order[k]] : NULL;
		uint64_t rlen;

		if (r && (r->seg == MAN_SEG_ZERO || r->seg >= job->nfds ||
			  job->fds[r->seg] < 0 || r->file_off >= off + len ||
			  r->file_off + r->len <= off))
			continue;
		rlen = r ? man_padded(r->len) : 0;
		if (r && r->seg == seg && r->seg_off == to) {
			to += rlen;
			continue;
		}
		if (seg != UINT32_MAX) {
			fd = read_fd(b, seg);
			if (fd != job->fds[seg])
				posix_fadvise(fd, from, to - from,
					      POSIX_FADV_WILLNEED);
		}
		if (r) {
			seg = r->seg;
			from = r->seg_off;
			to = from + rlen;
		}
	}
}

/* The last record of file f that overlaps [off, off + len), or
 * UINT32_MAX. */
static uint32_t last_over(const struct pfs_index *ix, uint32_t f, uint64_t off,
			  uint64_t len)
{
	uint32_t k;

	for (k = ix->start[f + 1]; k-- > ix->start[f];) {
		const struct man_rec *r = &ix->job->recs[ix->order[k]];

		if (r->file_off < off + len && r->file_off + r->len > off)
			return ix->order[k];
	}
	return UINT32_MAX;
}

void pfs_builder_plan(struct pfs_builder *b, uint32_t f, uint64_t off,
		      uint64_t len, uint32_t chunk)
{
	const struct pfs_index *ix = b->ix;
	const struct pfs_job *job = ix->job;
	uint64_t c, end = off + len, z;
	uint32_t k, ri;

	if (!b->have_ring)
		return;
	/* What the last plan asked for and nobody took is dropped. */
	ahead_quiesce(b);
	for (k = 0; k < PFS_BUILD_AHEAD; k++)
		b->ahead[k].rb.rec = UINT32_MAX;
	b->nplan = b->next = 0;
	/* The records each chunk will load, in order (pfs_builder_span()). */
	for (c = off; c < end; c += z) {
		const struct man_rec *r;

		z = end - c < job->files[f].size - c ? end - c
						     : job->files[f].size - c;
		z = z < chunk ? z : chunk;
		if (!z)
			break;
		ri = last_over(ix, f, c, z);
		r = ri == UINT32_MAX ? NULL : &job->recs[ri];
		if (r && r->seg != MAN_SEG_ZERO && r->file_off <= c &&
		    r->file_off + r->len >= c + z) {
			if (plan_add(b, ri) < 0)
				break;
			continue;
		}
		for (k = ix->start[f]; k < ix->start[f + 1]; k++) {
			r = &job->recs[ix->order[k]];
			if (r->seg == MAN_SEG_ZERO || r->seg >= job->nfds ||
			    job->fds[r->seg] < 0 || r->file_off >= c + z ||
			    r->file_off + r->len <= c)
				continue;
			if (plan_add(b, ix->order[k]) < 0)
				break;
		}
	}
	ahead_fill(b);
}

/* Does a record of file f with bytes (not a truncate's zeros) overlap
 * [off, off + len)? */
static int data_over(const struct pfs_index *ix, uint32_t f, uint64_t off,
		     uint64_t len)
{
	uint32_t k;

	for (k = ix->start[f]; k < ix->start[f + 1]; k++) {
		const struct man_rec *r = &ix->job->recs[ix->order[k]];

		if (r->seg != MAN_SEG_ZERO && r->file_off < off + len &&
		    r->file_off + r->len > off)
			return 1;
	}
	return 0;
}

int pfs_builder_span(struct pfs_builder *b, uint32_t f, uint64_t off,
		     uint32_t len, uint8_t *buf, struct pfs_span *out)
{
	const struct pfs_index *ix = b->ix;
	uint32_t ri = last_over(ix, f, off, len), k;
	const struct man_rec *r;
	struct pfs_rbuf *rb;
	int ret;

	out->p = buf;
	out->have_crc = 0;
	out->zero = 0;
	r = ri == UINT32_MAX ? NULL : &ix->job->recs[ri];
	if (!r || (r->seg == MAN_SEG_ZERO && !data_over(ix, f, off, len))) {
		out->p = NULL;
		out->zero = 1;
		return 0;
	}
	/* One record covers it all, the last written there: its bytes as
	 * they are, the records before it unread. */
	if (r && r->seg != MAN_SEG_ZERO && r->file_off <= off &&
	    r->file_off + r->len >= off + len) {
		ret = record_load(b, ri, off, off + len, &rb);
		if (ret < 0)
			return ret;
		out->p = rb->p + (off - r->file_off);
		out->have_crc = r->file_off == off && r->len == len;
		out->crc = r->crc;
		return 0;
	}
	memset(buf, 0, len);
	for (k = ix->start[f]; k < ix->start[f + 1]; k++) {
		uint64_t a, z;

		r = &ix->job->recs[ix->order[k]];
		a = r->file_off > off ? r->file_off : off;
		z = r->file_off + r->len;
		if (z > off + len)
			z = off + len;
		if (a >= z)
			continue;
		if (r->seg == MAN_SEG_ZERO) {
			memset(buf + (a - off), 0, z - a);
			continue;
		}
		ret = record_load(b, ix->order[k], off, off + len, &rb);
		if (ret < 0)
			return ret;
		memcpy(buf + (a - off), rb->p + (a - r->file_off), z - a);
	}
	return 0;
}

int pfs_builder_fill(struct pfs_builder *b, uint32_t f, uint64_t off,
		     uint32_t len, uint8_t *buf)
{
	struct pfs_span sp;
	int ret;

	ret = pfs_builder_span(b, f, off, len, buf, &sp);
	if (ret == 0 && sp.zero)
		memset(buf, 0, len);
	else if (ret == 0 && sp.p != buf)
		memcpy(buf, sp.p, len);
	return ret;
}
