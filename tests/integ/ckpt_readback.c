/*
 * ckpt_readback.c - reads of a version while it is written (ckpt_read of an
 * open version, through ckptd's read index), checked byte for byte against
 * a model of every change.
 *
 *   ckpt_readback SOCKET write JOB VERSION SEED   build the version (below)
 *                                                 reading back as it goes,
 *                                                 commit, wait LOCAL, check
 *   ckpt_readback SOCKET check JOB VERSION SEED   replay the model, check the
 *                                                 committed version (after a
 *                                                 restart, ...)
 *   ckpt_readback SOCKET abort JOB VERSION SEED   write and read back a few
 *                                                 changes, abort: reads of
 *                                                 the version then fail
 *
 * The version, a pure function of SEED: OPS random steps over up to
 * NAMES_MAX names: overlapping writes (1 B .. 16 KiB, some past the end,
 * some rewriting the range written before), new files, truncates down and
 * up, hard links (ckpt_link), unlinks (of the name holding a linked file
 * too), renames to new names and over other files.  In blocks of
 * CHECK_EVERY steps: in every other block the name each step touched is
 * read back (whole and at random ranges) after the step; the others are
 * quiet, with most writes to one file and no reads, so that many records
 * of a file wait for the next read; every name is read at a block's end.  Then "seq" gets SEQ_WRITES small appends (many records in
 * one file), a few rewrites and a truncate, read back at random ranges as
 * it grows.
 *
 * Whole-file reads are made through ckpt_read_sink too (the pieces in order,
 * the same bytes, a sink's error stopping the read; in "check", every piece
 * inside the lease that ckpt_staging_map gives).  A quarter of the writes
 * start on a 4 KiB block (half of those also fill whole blocks), so that
 * reads take whole records straight into the lease (reader.c), and every
 * whole-file read is made again with 8 KiB to spare past the end, where
 * the last record's padding lands.
 *
 * Exit 0 when every check holds, 1 with a message otherwise, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"

#define FILE_CAP     (256u << 10)   /* model bytes per file */
#define WRITE_MAX    (16u << 10)
#define NAMES_MAX    24
#define FILES_MAX    256
#define OPS          700
#define CHECK_EVERY  40
#define SEQ_WRITES   20000
#define SEQ_CAP      (SEQ_WRITES * 200u)
#define SMALL_LEASE  (4u << 20)     /* "check": reads of 2 MiB pieces */

struct mfile {
	uint8_t *data;            /* cap bytes; zeros from size on */
	uint64_t size, cap;
};

struct mname {
	char path[32];
	int file;                 /* index in files, or -1: no such name */
};

struct run {
	struct ckpt_client *c;
	struct ckpt_version *v;   /* NULL: replay the model only */
	const char *job, *ver;
	uint64_t rng;             /* the version's changes */
	uint64_t rrng;            /* the ranges read (not replayed) */
	struct mfile files[FILES_MAX + 1];   /* the last one: "seq" */
	uint32_t nfiles;
	struct mname names[NAMES_MAX];
	uint32_t next_name;
	uint64_t last_off, last_len;   /* the range written last */
	uint8_t *buf;             /* reads and writes */
	const uint8_t *lease;     /* ckpt_staging_map's ("check"), or NULL */
	size_t lease_len;
	int failed;
};

#define CHECK(r, cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "ckpt_readback: %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		(r)->failed = 1; \
	} \
} while (0)

static uint32_t xorshift(uint64_t *s, uint32_t n)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return n ? (uint32_t)(*s % n) : 0;
}

static uint32_t rnd(struct run *r, uint32_t n)
{
	return xorshift(&r->rng, n);
}

static int file_new(struct run *r, uint64_t cap)
{
	struct mfile *f = &r->files[r->nfiles];

	f->data = calloc(1, cap);
	if (!f->data)
		return -ENOMEM;
	f->cap = cap;
	f->size = 0;
	return (int)r->nfiles++;
}

/* ckpt_read_sink's sink for check_name: the pieces come in file order and
 * hold the model's bytes; stop_at > 0 stops the read at that call. */
struct sink_check {
	const struct mfile *f;
	const uint8_t *lo, *hi;   /* where pieces must lie, if lo */
	uint64_t next;            /* the offset the next piece must have */
	int calls, stop_at, bad;
};

static int sink_check(void *arg, const void *data, size_t len, uint64_t off)
{
	struct sink_check *k = arg;

	if (off != k->next || off + len > k->f->size ||
	    memcmp(data, k->f->data + off, len))
		k->bad = 1;
	if (k->lo && ((const uint8_t *)data < k->lo ||
		      (const uint8_t *)data + len > k->hi))
		k->bad = 2;
	k->next = off + len;
	return ++k->calls == k->stop_at ? -ECANCELED : 0;
}

/* The same bytes through ckpt_read_sink, and a sink's error returned. */
static void check_sink(struct run *r, const char *ver, const char *path,
		       const struct mfile *f)
{
	struct sink_check k = { .f = f, .lo = r->lease,
				.hi = r->lease + r->lease_len };
	size_t got = 0;
	int ret;

	ret = ckpt_read_sink(r->c, r->job, ver, path, f->size + 1, 0,
			     sink_check, &k, &got);
	CHECK(r, ret == 0 && got == f->size && !k.bad &&
	      k.next == f->size && (k.calls > 0) == (f->size > 0),
	      "read_sink %s: %s, %zu bytes in %d pieces, want %llu%s", path,
	      ckpt_strerror(ret), got, k.calls, (unsigned long long)f->size,
	      k.bad == 2 ? ", a piece outside the mapped lease" :
	      k.bad ? ", out of order or wrong bytes" : "");
	if (!f->size || r->failed)
		return;
	memset(&k, 0, sizeof(k));
	k.f = f;
	k.stop_at = 1;
	ret = ckpt_read_sink(r->c, r->job, ver, path, f->size, 0,
			     sink_check, &k, &got);
	CHECK(r, ret == -ECANCELED && got == 0 && k.calls == 1,
	      "read_sink %s stopped by its sink: %s after %zu bytes, want %s",
	      path, ckpt_strerror(ret), got, ckpt_strerror(-ECANCELED));
}

/* Read all of path (and one byte more) and ranges of it; compare with f. */
static void check_name(struct run *r, const char *path, const struct mfile *f,
		       uint32_t ranges)
{
	size_t got = 0;
	uint64_t off, len;
	int ret;

	ret = ckpt_read(r->c, r->job, r->ver, path, r->buf, f->size + 1, 0,
			&got);
	CHECK(r, ret == 0, "read %s: %s", path, ckpt_strerror(ret));
	CHECK(r, got == f->size, "read %s: %zu bytes, want %llu", path, got,
	      (unsigned long long)f->size);
	CHECK(r, ret || got != f->size || !memcmp(r->buf, f->data, got),
	      "read %s: bytes differ", path);
	/* With room past the end, as ckptfs asks: the answer stops at the
	 * end of file, whatever the last record's padding. */
	if (f->size + 8192 <= SEQ_CAP + 1 && !r->failed) {
		ret = ckpt_read(r->c, r->job, r->ver, path, r->buf,
				f->size + 8192, 0, &got);
		CHECK(r, ret == 0 && got == f->size &&
		      !memcmp(r->buf, f->data, got),
		      "read %s with 8 KiB to spare: %s, %zu bytes, want %llu",
		      path, ckpt_strerror(ret), got,
		      (unsigned long long)f->size);
	}
	if (ranges)
		check_sink(r, r->ver, path, f);
	while (ranges-- && !r->failed) {
		off = xorshift(&r->rrng, (uint32_t)f->size + 100);
		len = 1 + xorshift(&r->rrng, xorshift(&r->rrng, 2) ? 64
							       : WRITE_MAX * 2);
		ret = ckpt_read(r->c, r->job, r->ver, path, r->buf, len, off,
				&got);
		len = off >= f->size ? 0 : off + len > f->size ? f->size - off
							      : len;
		CHECK(r, ret == 0 && got == len &&
		      (!len || !memcmp(r->buf, f->data + off, len)),
		      "read %s at %llu: %s, %zu bytes, want %llu", path,
		      (unsigned long long)off, ckpt_strerror(ret), got,
		      (unsigned long long)len);
	}
}

static void check_all(struct run *r, uint32_t ranges)
{
	uint32_t i;

	for (i = 0; i < NAMES_MAX && !r->failed; i++)
		if (r->names[i].file >= 0)
			check_name(r, r->names[i].path,
				   &r->files[r->names[i].file], ranges);
}

/* A live name chosen at random, or -1. */
static int live_name(struct run *r)
{
	uint32_t i, at = rnd(r, NAMES_MAX);

	for (i = 0; i < NAMES_MAX; i++, at = (at + 1) % NAMES_MAX)
		if (r->names[at].file >= 0)
			return (int)at;
	return -1;
}

/* A free name slot with a path never used before, or -1. */
static int free_name(struct run *r)
{
	uint32_t i, at = rnd(r, NAMES_MAX);

	for (i = 0; i < NAMES_MAX; i++, at = (at + 1) % NAMES_MAX) {
		if (r->names[at].file >= 0)
			continue;
		snprintf(r->names[at].path, sizeof(r->names[at].path),
			 "%sn%u", rnd(r, 3) ? "" : "d/", r->next_name++);
		return (int)at;
	}
	return -1;
}

static void model_write(struct mfile *f, const uint8_t *src, uint64_t off,
			uint64_t len)
{
	memcpy(f->data + off, src, len);
	if (off + len > f->size)
		f->size = off + len;
}

static void model_truncate(struct mfile *f, uint64_t size)
{
	if (size < f->size)
		memset(f->data + size, 0, f->size - size);
	f->size = size;
}

/* Write len random bytes at off of name n (its file f). */
static int do_write(struct run *r, const char *path, int f, uint64_t off,
		    uint64_t len)
{
	uint64_t i;
	int ret = 0;

	for (i = 0; i < len; i++)
		r->buf[i] = (uint8_t)rnd(r, 256);
	if (r->v)
		ret = ckpt_write(r->v, path, r->buf, len, off);
	CHECK(r, ret == 0, "write %s: %s", path, ckpt_strerror(ret));
	model_write(&r->files[f], r->buf, off, len);
	return ret;
}

/* One random step, a write to name slot hot if it is live and hot >= 0;
 * *touched gets the name slot to read back (-1: none). */
static int step(struct run *r, int hot, int *touched)
{
	uint32_t op = rnd(r, 100), len;
	int n = live_name(r), m, ret = 0;
	uint64_t off;

	if (hot >= 0 && r->names[hot].file >= 0 && rnd(r, 4)) {
		n = hot;
		op = 15 + rnd(r, 50);
	}

	*touched = n;
	if (n < 0 && r->nfiles == FILES_MAX)
		return 0;
	if (n < 0 || (op < 15 && r->nfiles < FILES_MAX)) {  /* a new file */
		m = free_name(r);
		if (m < 0)
			return 0;
		ret = file_new(r, FILE_CAP);
		if (ret < 0)
			return ret;
		r->names[m].file = ret;
		*touched = m;
		return do_write(r, r->names[m].path, ret, rnd(r, 4096),
				1 + rnd(r, WRITE_MAX));
	}
	if (op < 65) {                              /* a write */
		struct mfile *f = &r->files[r->names[n].file];

		len = 1 + rnd(r, rnd(r, 2) ? WRITE_MAX : 512);
		off = rnd(r, (uint32_t)(f->cap - len));
		if (!rnd(r, 4)) {   /* on a block: records read whole */
			off &= ~(uint64_t)4095;
			if (rnd(r, 2) && off + ((len + 4095) & ~4095u) <= f->cap)
				len = (len + 4095) & ~4095u;
		}
		if (!rnd(r, 5) && r->last_len) {    /* the same range again */
			off = r->last_off;
			len = (uint32_t)r->last_len;
		}
		r->last_off = off;
		r->last_len = len;
		return do_write(r, r->names[n].path, r->names[n].file, off, len);
	}
	if (op < 75) {                              /* a truncate */
		off = rnd(r, FILE_CAP);
		if (r->v)
			ret = ckpt_truncate(r->v, r->names[n].path, off);
		CHECK(r, ret == 0, "truncate %s: %s", r->names[n].path,
		      ckpt_strerror(ret));
		model_truncate(&r->files[r->names[n].file], off);
		return ret;
	}
	if (op < 84) {                              /* a hard link */
		m = free_name(r);
		if (m < 0)
			return 0;
		if (r->v)
			ret = ckpt_link(r->v, r->names[n].path, r->names[m].path);
		CHECK(r, ret == 0, "link %s %s: %s", r->names[n].path,
		      r->names[m].path, ckpt_strerror(ret));
		r->names[m].file = r->names[n].file;
		*touched = m;
		return ret;
	}
	if (op < 92) {                              /* an unlink */
		if (r->v)
			ret = ckpt_unlink(r->v, r->names[n].path);
		CHECK(r, ret == 0, "unlink %s: %s", r->names[n].path,
		      ckpt_strerror(ret));
		r->names[n].file = -1;
		*touched = live_name(r);
		return ret;
	}
	/* a rename: to a new name, or over another name (of another file:
	 * onto a name of the same file it does nothing) */
	m = rnd(r, 2) ? live_name(r) : free_name(r);
	if (m < 0 || m == n)
		return 0;
	if (r->v)
		ret = ckpt_rename(r->v, r->names[n].path, r->names[m].path);
	CHECK(r, ret == 0, "rename %s %s: %s", r->names[n].path,
	      r->names[m].path, ckpt_strerror(ret));
	if (r->names[m].file != r->names[n].file) {
		r->names[m].file = r->names[n].file;
		r->names[n].file = -1;
	}
	*touched = m;
	return ret;
}

/* "seq": many small appends, a few rewrites and a truncate. */
static int seq_file(struct run *r)
{
	int f = file_new(r, SEQ_CAP), ret = 0;
	struct mfile *mf;
	uint32_t i;

	if (f < 0)
		return f;
	mf = &r->files[f];
	for (i = 0; i < SEQ_WRITES && ret == 0 && !r->failed; i++) {
		if (i % 3001 == 3000) {
			ret = do_write(r, "seq", f, rnd(r, (uint32_t)mf->size),
				       1 + rnd(r, 10000));
		} else if (i == SEQ_WRITES / 2) {
			mf->size -= mf->size / 3;
			if (r->v)
				ret = ckpt_truncate(r->v, "seq", mf->size);
			CHECK(r, ret == 0, "truncate seq: %s",
			      ckpt_strerror(ret));
			model_truncate(mf, mf->size);
		} else {
			ret = do_write(r, "seq", f, mf->size, 1 + rnd(r, 150));
		}
		if (r->v && i % 997 == 0)
			check_name(r, "seq", mf, 4);
	}
	return ret;
}

static int build(struct run *r)
{
	uint32_t i, quiet = 0;
	int n, hot = -1, ret = 0;

	for (i = 0; i < NAMES_MAX; i++)
		r->names[i].file = -1;
	for (i = 0; i < OPS && ret == 0 && !r->failed; i++) {
		if (i % CHECK_EVERY == 0) {
			/* every other block is quiet: no reads, most writes
			 * to one file, so that many records of one file
			 * wait for the next read */
			quiet = (i / CHECK_EVERY) % 2;
			hot = quiet ? live_name(r) : -1;
		}
		ret = step(r, hot, &n);
		if (!r->v || ret < 0)
			continue;
		if (n >= 0 && !quiet)
			check_name(r, r->names[n].path,
				   &r->files[r->names[n].file], 2);
		if (i % CHECK_EVERY == CHECK_EVERY - 1)
			check_all(r, 3);
	}
	if (ret == 0 && !r->failed)
		ret = seq_file(r);
	return ret;
}

static void check_committed(struct run *r)
{
	check_all(r, 20);
	check_name(r, "seq", &r->files[r->nfiles - 1], 50);
}

/* A scratch version name: the run's with suffix. */
static void scratch_name(const struct run *r, const char *suffix, char *out,
			 size_t cap)
{
	snprintf(out, cap, "%s-%s", r->ver, suffix);
}

/*
 * "check": whole-file reads (two READs in flight, SMALL_LEASE / 2 each) on
 * a connection whose lease also holds a WRITE not yet on disk, of a scratch
 * version: the second READ waits for room behind the WRITE, and the answers
 * come among the WACKs.  Reads of the run's "seq" file, and of a scratch
 * version's file of zeros (a truncate: answered without disk I/O, so before
 * the WACK of a WRITE sent earlier).  The scratch versions are dropped
 * after.
 */
static void reads_among_writes(struct run *r)
{
	struct mfile zeros = { .size = SMALL_LEASE };
	struct ckpt_version *w = NULL, *z = NULL;
	char wname[64], zname[64];
	size_t len;
	int ret, i;

	scratch_name(r, "w", wname, sizeof(wname));
	scratch_name(r, "z", zname, sizeof(zname));
	zeros.data = calloc(1, SMALL_LEASE);
	CHECK(r, zeros.data != NULL, "out of memory");
	ret = ckpt_begin(r->c, r->job, zname, &z);
	if (ret == 0)
		ret = ckpt_truncate(z, "z", SMALL_LEASE);
	if (ret == 0)
		ret = ckpt_commit(z);
	if (ret == 0)
		ret = ckpt_wait(z, CKPT_LOCAL, 60000);
	CHECK(r, ret == 0, "version %s of zeros: %s", zname,
	      ckpt_strerror(ret));
	ckpt_version_free(z);
	ret = ckpt_begin(r->c, r->job, wname, &w);
	CHECK(r, ret == 0, "begin %s: %s", wname, ckpt_strerror(ret));
	for (i = 0; i < 24 && !r->failed; i++) {
		len = ((size_t)1 + i % 3) << 20;
		ret = ckpt_write(w, "w", r->files[r->nfiles - 1].data, len,
				 (uint64_t)i << 22);
		CHECK(r, ret == 0, "write %zu bytes to %s: %s", len, wname,
		      ckpt_strerror(ret));
		if (i % 2)
			check_sink(r, r->ver, "seq", &r->files[r->nfiles - 1]);
		else
			check_sink(r, zname, "z", &zeros);
	}
	if (w) {
		ret = ckpt_abort(w);
		CHECK(r, ret == 0, "abort %s: %s", wname, ckpt_strerror(ret));
		ckpt_version_free(w);
	}
	ret = ckpt_remove(r->c, r->job, zname);
	CHECK(r, ret == 0, "remove %s: %s", zname, ckpt_strerror(ret));
	free(zeros.data);
}

/* Open, read back, abort: the reads of a FAILED version fail. */
static int abort_run(struct run *r)
{
	size_t got;
	int ret, i;

	ret = file_new(r, FILE_CAP);
	if (ret < 0)
		return ret;
	for (i = 0; i < 200 && !r->failed; i++) {
		do_write(r, "x", 0, rnd(r, FILE_CAP - 512), 1 + rnd(r, 512));
		if (i % 10 == 0)
			check_name(r, "x", &r->files[0], 2);
	}
	ret = ckpt_abort(r->v);
	CHECK(r, ret == 0, "abort: %s", ckpt_strerror(ret));
	ret = ckpt_read(r->c, r->job, r->ver, "x", r->buf, 100, 0, &got);
	CHECK(r, ret < 0, "read of an aborted version: %zu bytes", got);
	return 0;
}

int main(int argc, char **argv)
{
	struct run *r;
	const char *mode;
	uint32_t i;
	int ret, failed;

	if (argc != 6) {
		fprintf(stderr, "usage: ckpt_readback SOCKET write|check|abort JOB VERSION SEED\n");
		return 2;
	}
	mode = argv[2];
	r = calloc(1, sizeof(*r));
	if (!r || !(r->buf = malloc(SEQ_CAP + 1)))
		return 1;
	r->job = argv[3];
	r->ver = argv[4];
	r->rng = strtoull(argv[5], NULL, 0) * 2654435761u + 1;
	r->rrng = r->rng ^ 0x9e3779b97f4a7c15ull;
	ret = ckpt_connect(argv[1], &r->c);
	if (ret < 0) {
		fprintf(stderr, "ckpt_readback: connect: %s\n", ckpt_strerror(ret));
		return 1;
	}
	if (strcmp(mode, "check")) {
		ret = ckpt_begin(r->c, r->job, r->ver, &r->v);
		CHECK(r, ret == 0, "begin: %s", ckpt_strerror(ret));
	} else {
		/* A small lease (ckpt_staging_request): whole-file reads come
		 * in many pieces, read ahead of SMALL_LEASE / 2 at a time. */
		size_t size = 0, len = 0;
		void *map = NULL;

		ret = ckpt_staging_request(r->c, SMALL_LEASE);
		CHECK(r, ret == 0, "staging_request: %s", ckpt_strerror(ret));
		ret = ckpt_staging(r->c, &size);
		CHECK(r, ret == 0 && size == SMALL_LEASE,
		      "staging: %s, %zu bytes, want %u", ckpt_strerror(ret),
		      size, SMALL_LEASE);
		ret = ckpt_staging_request(r->c, 2 * SMALL_LEASE);
		CHECK(r, ret == -EALREADY, "staging_request with a lease: %s",
		      ckpt_strerror(ret));
		ret = ckpt_staging_map(r->c, &map, &len);
		CHECK(r, ret == 0 && map && len == size,
		      "staging_map: %s, %zu bytes, want %zu",
		      ckpt_strerror(ret), len, size);
		r->lease = map;
		r->lease_len = len;
		ret = 0;
	}
	if (r->failed) {
		ret = 0;
	} else if (!strcmp(mode, "abort")) {
		ret = abort_run(r);
	} else {
		ret = build(r);
		if (ret == 0 && r->v) {
			ret = ckpt_commit(r->v);
			CHECK(r, ret == 0, "commit: %s", ckpt_strerror(ret));
			ret = ckpt_wait(r->v, CKPT_LOCAL, 60000);
			CHECK(r, ret == 0, "wait: %s", ckpt_strerror(ret));
		}
		if (!r->failed)
			check_committed(r);
		if (!r->failed && !r->v)
			reads_among_writes(r);
	}
	CHECK(r, ret == 0, "%s: %s", mode, ckpt_strerror(ret));
	ckpt_version_free(r->v);
	ckpt_disconnect(r->c);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i].data);
	free(r->buf);
	failed = r->failed;
	free(r);
	return failed;
}
