/*
 * pfs.c - copy a sealed version out to the parallel file system, and read a
 * drained one back (see pfs.h).  Runs on drain threads; blocking I/O only.
 *
 * The copy rebuilds each file chunk by chunk: zeros, then every record of the
 * file that overlaps the chunk, in write order (a later record wins), each
 * record read whole from its segment and checked against its CRC32C before
 * any of its bytes are used.  The chunk's own CRC32C goes in the PFS
 * manifest.  A plain drain writes each chunk at its own offset and leaves
 * all-zero chunks as holes, so the file on the PFS is the trainer's file.
 * With compression or incremental drains a file holds its stored chunks one
 * after the other instead, and only the manifest says where each one is.
 * Where anything goes on the PFS, and every open, mkdir, rename and unlink
 * there, is pfslayout.c's: nothing here builds a PFS path.  A part of a
 * version in parts is copied the same way, under its node's temporary
 * names, with its part manifest in place of the manifest; publishing the
 * version and removing a part are pfspart.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "journal.h"
#include "log.h"
#include "names.h"
#include "pfs.h"
#include "pfs_i.h"
#include "pfslayout.h"
#include "xattr.h"
#include "sys.h"
#include "zip.h"

/* ---- the journal of files already published ------------------------------ */

struct journal_ctx {
	struct pfsman *m;         /* files[].first/count already laid out */
	uint8_t *done;            /* done[fi] set for each file journaled */
};

/* A record that does not fit the version stops the load: the files from
 * there on are copied again. */
static int journal_take(void *arg, const struct journal_rec *r)
{
	struct journal_ctx *jc = arg;

	if (r->file >= jc->m->nfiles || r->n != jc->m->files[r->file].count)
		return 1;
	journal_rec_chunks(r, &jc->m->chunks[jc->m->files[r->file].first]);
	jc->done[r->file] = 1;
	return 0;
}

/* ---- building a chunk from records --------------------------------------- */

struct builder {
	const struct pfs_job *job;
	int *rfds;                /* buffered read fds by segment id, or -1 */
	uint32_t *order;          /* record indices grouped by file */
	uint32_t *start;          /* order[start[f] .. start[f+1]) */
	uint8_t *rbuf;            /* one record, 4 KiB aligned */
	size_t rcap;
	uint32_t cached;          /* record in rbuf, or UINT32_MAX */
};

static int builder_init(struct builder *b, const struct pfs_job *job)
{
	uint32_t i, *fill;

	memset(b, 0, sizeof(*b));
	b->job = job;
	b->cached = UINT32_MAX;
	b->order = malloc(sizeof(*b->order) * (job->nrecs + 1));
	b->start = calloc(job->nfiles + 1, sizeof(*b->start));
	b->rfds = malloc(sizeof(*b->rfds) * (job->nfds + 1));
	fill = calloc(job->nfiles + 1, sizeof(*fill));
	if (!b->order || !b->start || !b->rfds || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < job->nfds; i++)
		b->rfds[i] = -1;
	for (i = 0; i < job->nrecs; i++)
		b->start[job->recs[i].file + 1]++;
	for (i = 0; i < job->nfiles; i++)
		b->start[i + 1] += b->start[i];
	for (i = 0; i < job->nrecs; i++) {
		uint32_t f = job->recs[i].file;

		b->order[b->start[f] + fill[f]++] = i;   /* keeps write order */
	}
	free(fill);
	return 0;
}

static void builder_release(struct builder *b)
{
	uint32_t i;

	for (i = 0; b->rfds && i < b->job->nfds; i++)
		if (b->rfds[i] >= 0)
			close(b->rfds[i]);
	free(b->rfds);
	free(b->order);
	free(b->start);
	free(b->rbuf);
}

/*
 * A buffered fd on segment seg for the copy: the kernel reads ahead while
 * the thread writes, which the loop's O_DIRECT fds would not.  Falls back
 * to the loop's fd.
 */
static int read_fd(struct builder *b, uint32_t seg)
{
	char path[700];

	if (b->rfds[seg] < 0) {
		snprintf(path, sizeof(path), "%s/%08u", b->job->segdir, seg);
		b->rfds[seg] = open(path, O_RDONLY | O_CLOEXEC);
		if (b->rfds[seg] >= 0)
			posix_fadvise(b->rfds[seg], 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	return b->rfds[seg] >= 0 ? b->rfds[seg] : b->job->fds[seg];
}

/* Record ri's bytes, read whole and verified.  NULL-free: 0 or -errno. */
static int record_load(struct builder *b, uint32_t ri)
{
	const struct man_rec *r = &b->job->recs[ri];
	size_t rlen = ((size_t)r->len + 4095) & ~(size_t)4095;
	int fd, ret;

	if (b->cached == ri)
		return 0;
	if (rlen > b->rcap) {
		free(b->rbuf);
		b->rbuf = NULL;
		b->rcap = 0;
		if (posix_memalign((void **)&b->rbuf, 4096, rlen))
			return -ENOMEM;
		b->rcap = rlen;
	}
	b->cached = UINT32_MAX;
	if (r->seg >= b->job->nfds || b->job->fds[r->seg] < 0)
		return -EIO;
	fd = read_fd(b, r->seg);
	ret = sys_pread_all(fd, b->rbuf, rlen, r->seg_off);
	if (ret < 0)
		return ret;
	/* Read once: leave the page cache to the trainers. */
	if (fd != b->job->fds[r->seg])
		posix_fadvise(fd, r->seg_off, rlen, POSIX_FADV_DONTNEED);
	if (crc32c(b->rbuf, r->len) != r->crc)
		return -CKPT_ECORRUPT;
	b->cached = ri;
	return 0;
}

/* Fill buf with bytes [off, off+len) of file f. */
static int chunk_build(struct builder *b, uint32_t f, uint64_t off,
		       uint32_t len, uint8_t *buf)
{
	uint32_t k;
	int ret;

	memset(buf, 0, len);
	for (k = b->start[f]; k < b->start[f + 1]; k++) {
		const struct man_rec *r = &b->job->recs[b->order[k]];
		uint64_t a = r->file_off > off ? r->file_off : off;
		uint64_t z = r->file_off + r->len;

		if (z > off + len)
			z = off + len;
		if (a >= z)
			continue;
		if (r->seg == MAN_SEG_ZERO) {
			memset(buf + (a - off), 0, z - a);
			continue;
		}
		ret = record_load(b, b->order[k]);
		if (ret < 0)
			return ret;
		memcpy(buf + (a - off), b->rbuf + (a - r->file_off), z - a);
	}
	return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t zero[4096];

	for (; n >= sizeof(zero); p += sizeof(zero), n -= sizeof(zero))
		if (memcmp(p, zero, sizeof(zero)))
			return 0;
	return !memcmp(p, zero, n);
}

/* ---- the copy ------------------------------------------------------------- */

struct copy {
	const struct pfs_opts *o;
	struct pfs_job *job;
	struct pfsman m;          /* the manifest being built */
	struct pfsman base;       /* incremental: the previous version */
	int have_base;
	struct builder b;
	struct zip *zip;
	uint8_t *buf;             /* one chunk */
	uint8_t *zbuf;            /* one compressed chunk */
	size_t zcap;
	int tfd;                  /* the target directory */
	struct pfs_owner owner;   /* of the job's tree */
	const char *node;         /* a part's copy: this node, else NULL */
};

/* Is the entry of type `type` (ckpt.h, CKPT_ATTR_IF*)? */
static int is_type(const struct ckpt_attr *a, uint32_t type)
{
	return (a->set & CKPT_ATTR_MODE) && (a->mode & CKPT_ATTR_IFMT) == type;
}

/* A symbolic link: its bytes are its target (ckpt.h, CKPT_ATTR_IFLNK). */
static int is_link(const struct ckpt_attr *a)
{
	return is_type(a, CKPT_ATTR_IFLNK);
}

/* The chunk of base matching path and index, if it is stored in base. */

static const struct pfs_chunk *base_chunk(struct copy *c, const char *path,
					  uint32_t idx)
{
	uint32_t i;

	/* A compressed chunk of the base is read with this version's shuffle:
	 * refer to it only if that is the base's too. */
	if (!c->have_base || c->base.shuffle != c->m.shuffle)
		return NULL;
	for (i = 0; i < c->base.nfiles; i++) {
		const struct pfs_file *f = &c->base.files[i];
		const struct pfs_chunk *k;

		if (strcmp(f->path, path) || idx >= f->count)
			continue;
		if (is_link(&f->attr))          /* read with readlinkat */
			return NULL;
		k = &c->base.chunks[f->first + idx];
		return k->kind == PFS_REF ? NULL : k;
	}
	return NULL;
}

/* Between chunks: wait while paused; -ECANCELED once asked to stop. */
static int wait_unpaused(const struct pfs_opts *o)
{
	struct timespec ts = { 0, 10 * 1000000 };

	for (;;) {
		if (o->stop && *o->stop)
			return -ECANCELED;
		if (!o->pause || !*o->pause)
			return 0;
		nanosleep(&ts, NULL);
	}
}

/* Decide how chunk idx (bytes in c->buf) is stored, and write it. */
static int chunk_put(struct copy *c, int fd, const char *path, uint32_t idx,
		     uint64_t coff, uint32_t len, uint64_t *out_off,
		     struct pfs_chunk *k)
{
	const struct pfs_chunk *bk;
	const void *src = c->buf;
	int packed = c->o->compress || c->o->incremental;
	long z;
	int ret;

	k->len = len;
	k->crc = crc32c(c->buf, len);
	bk = c->o->incremental ? base_chunk(c, path, idx) : NULL;
	if (bk && bk->len == len && bk->crc == k->crc) {
		k->kind = PFS_REF;
		k->kind2 = bk->kind;
		k->file_off = bk->file_off;
		k->stored = bk->stored;
		c->job->bytes_ref += len;
		return 0;
	}
	if (all_zero(c->buf, len)) {
		k->kind = PFS_ZERO;
		k->file_off = 0;
		k->stored = 0;
		return 0;
	}
	k->kind = PFS_RAW;
	k->stored = len;
	if (c->o->compress) {
		z = zip_compress(c->zip, c->buf, len, c->zbuf, c->zcap);
		if (z < 0)
			return (int)z;
		if (z > 0) {
			k->kind = PFS_ZSTD;
			k->stored = (uint32_t)z;
			src = c->zbuf;
		}
	}
	k->file_off = packed ? *out_off : coff;
	*out_off = k->file_off + k->stored;
	if (c->o->bw)
		bwlimit_take(c->o->bw, k->stored);
	c->job->bytes_out += k->stored;
	ret = sys_pwrite_all(fd, src, k->stored, k->file_off);
	/* Start writeback now, so that the fsync at the end of the file
	 * waits for the tail only and the page cache does not fill up. */
	if (ret == 0)
		sync_file_range(fd, k->file_off, k->stored,
				SYNC_FILE_RANGE_WRITE);
	return ret;
}

/*
 * Give the PFS file the mode and times its writer set (attr.set): mode
 * without the set-id bits and always readable by its owner (ckptd reads it
 * back: remote reads, incremental bases); times as they were.  Its owner
 * stays the job's (pfslayout.h); the job's tree is 0700 at its .job level,
 * so no mode opens it to others.  After the last write, which moves mtime.
 */
static int copy_attr(int fd, const struct ckpt_attr *a)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };

	if ((a->set & CKPT_ATTR_MODE) &&
	    fchmod(fd, (a->mode & 0777) | S_IRUSR) < 0)
		return -errno;
	if (a->set & CKPT_ATTR_ATIME) {
		ts[0].tv_sec = a->atime_ns / 1000000000ull;
		ts[0].tv_nsec = a->atime_ns % 1000000000ull;
	}
	if (a->set & CKPT_ATTR_MTIME) {
		ts[1].tv_sec = a->mtime_ns / 1000000000ull;
		ts[1].tv_nsec = a->mtime_ns % 1000000000ull;
	}
	if ((a->set & (CKPT_ATTR_ATIME | CKPT_ATTR_MTIME)) &&
	    futimens(fd, ts) < 0)
		return -errno;
	return 0;
}

/* The file's extended attributes ("user." only), each set on the PFS
 * file; a PFS that keeps none (ENOTSUP) still has them in the PFS
 * manifest.  Before the times: setting one changes ctime only. */
static int copy_xattr(int fd, const uint8_t *blob, uint32_t len)
{
	char names[XATTR_MAX];
	const uint8_t *val;
	long n, vlen, off;

	n = len ? xattr_list(blob, len, names, sizeof(names)) : 0;
	for (off = 0; off < n; off += strlen(names + off) + 1) {
		vlen = xattr_get(blob, len, names + off, &val);
		if (fsetxattr(fd, names + off, val, (size_t)vlen, 0) < 0) {
			if (errno == ENOTSUP)
				return 0;
			return -errno;
		}
	}
	return 0;
}

/*
 * A symbolic link (the file's bytes are its target): a real symlink on the
 * PFS, made under the temporary name, given to the job's owner and its
 * times (never following it), then renamed into place.  Its one chunk is
 * RAW (never a reference to a base, never compressed) with the target's
 * CRC32C; a reader gets it back with readlinkat (chunk_fetch).
 */
static int copy_link(struct copy *c, uint32_t fi, const char *tmp,
		     const char *dst)
{
	const struct pfs_file *f = &c->m.files[fi];
	const struct ckpt_attr *a = &c->job->files[fi].attr;
	struct pfs_chunk *k = &c->m.chunks[f->first];
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };
	const char *name;
	int pfd, ret;

	if (f->count != 1 || f->size >= c->m.chunk || f->size >= PATH_MAX)
		return -CKPT_EPROTO;
	ret = chunk_build(&c->b, fi, 0, (uint32_t)f->size, c->buf);
	if (ret < 0)
		return ret;
	c->buf[f->size] = '\0';
	if (strlen((char *)c->buf) != f->size)
		return -CKPT_EPROTO;     /* a NUL in a target */
	*k = (struct pfs_chunk){ .len = (uint32_t)f->size,
				 .crc = crc32c(c->buf, f->size),
				 .stored = (uint32_t)f->size, .kind = PFS_RAW };
	pfd = pfs_open_parent(c->tfd, tmp, &name);
	if (pfd < 0)
		return pfd;
	unlinkat(pfd, name, 0);         /* left by an interrupted copy */
	ret = symlinkat((char *)c->buf, pfd, name) < 0 ? -errno : 0;
	if (ret == 0 && fchownat(pfd, name, c->owner.uid, c->owner.gid,
				 AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
		ret = -errno;
	if (a->set & CKPT_ATTR_ATIME)
		ts[0] = (struct timespec){ a->atime_ns / 1000000000ull,
					   a->atime_ns % 1000000000ull };
	if (a->set & CKPT_ATTR_MTIME)
		ts[1] = (struct timespec){ a->mtime_ns / 1000000000ull,
					   a->mtime_ns % 1000000000ull };
	if (ret == 0 && utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	if (ret == 0)
		ret = fsync(pfd) < 0 ? -errno : 0;
	close(pfd);
	c->job->bytes_in += f->size;
	if (ret == 0)
		ret = pfs_rename(c->tfd, tmp, dst);
	if (ret < 0)
		pfs_unlink(c->tfd, tmp, 0);
	return ret;
}

/*
 * A directory's attributes (an entry of type CKPT_ATTR_IFDIR, no bytes):
 * the directory is made if no file below it made it (an empty directory),
 * then given its mode, always open to its owner (who may have to remove
 * what is below), and its times.  Called after every file is in place,
 * since adding one moves the directory's mtime.
 */
static int copy_dir(struct copy *c, uint32_t fi)
{
	struct ckpt_attr a = c->job->files[fi].attr;
	char dst[PFS_REL_MAX];
	int fd, ret;

	ret = pfs_path(dst, sizeof(dst), PFS_N_FILE, c->m.job, c->m.version,
		       c->m.files[fi].path, 0);
	if (ret == 0)
		ret = pfs_mkdirs(c->tfd, dst, pfs_shared_levels(c->m.job),
				 &c->owner);
	if (ret < 0)
		return ret;
	fd = pfs_open(c->tfd, dst, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	a.mode |= S_IRWXU;
	ret = copy_attr(fd, &a);
	if (ret == 0)
		ret = sys_fsync(fd);
	close(fd);
	return ret;
}

/*
 * A second name of a file copied before it (files are copied in order and
 * a link names an earlier entry): a hard link on the PFS, made under the
 * temporary name and renamed into place like any file.  It has no chunks;
 * its file's bytes and attributes are already there.
 */
static int copy_hardlink(struct copy *c, uint32_t fi, const char *tmp,
			 const char *dst)
{
	char from[PFS_REL_MAX];
	int ret;

	ret = pfs_path(from, sizeof(from), PFS_N_FILE, c->m.job, c->m.version,
		       c->m.files[c->m.files[fi].link - 1].path, 0);
	if (ret < 0)
		return ret;
	pfs_unlink(c->tfd, tmp, 0);     /* left by an interrupted copy */
	ret = pfs_link(c->tfd, from, tmp);
	if (ret == 0)
		ret = pfs_rename(c->tfd, tmp, dst);
	if (ret < 0)
		pfs_unlink(c->tfd, tmp, 0);
	return ret;
}

static int copy_file(struct copy *c, uint32_t fi)
{
	const struct pfs_file *f = &c->m.files[fi];
	char tmp[PATH_MAX], dst[PFS_REL_MAX];
	uint64_t off, out_off = 0;
	uint32_t idx, len;
	int fd, ret;

	ret = pfs_path(dst, sizeof(dst), PFS_N_FILE, c->m.job, c->m.version,
		       f->path, 0);
	if (ret == 0)
		ret = pfs_path(tmp, sizeof(tmp),
			       c->node ? PFS_N_PART_FILE_TMP : PFS_N_FILE_TMP,
			       c->m.job, c->m.version, c->node, fi);
	if (ret == 0)
		ret = pfs_mkdirs_above(c->tfd, dst, c->m.job, &c->owner);
	if (ret < 0)
		return ret;
	if (f->link)
		return copy_hardlink(c, fi, tmp, dst);
	if (is_link(&c->job->files[fi].attr))
		return copy_link(c, fi, tmp, dst);
	fd = pfs_create(c->tfd, tmp, &c->owner);
	if (fd < 0)
		return fd;
	for (idx = 0, off = 0; idx < f->count; idx++, off += len) {
		len = f->size - off < c->m.chunk ? (uint32_t)(f->size - off)
						 : c->m.chunk;
		ret = wait_unpaused(c->o);
		if (ret == 0)
			ret = chunk_build(&c->b, fi, off, len, c->buf);
		if (ret == 0)
			ret = chunk_put(c, fd, f->path, idx, off, len, &out_off,
					&c->m.chunks[f->first + idx]);
		if (ret < 0)
			goto out_close;
		c->job->bytes_in += len;
	}
	/* Plain: the size, with zero chunks as holes; packed: the chunks. */
	ret = ftruncate(fd, c->o->compress || c->o->incremental ? out_off
							       : f->size);
	ret = ret < 0 ? -errno : copy_xattr(fd, c->job->files[fi].xattr,
					    c->job->files[fi].xlen);
	ret = ret < 0 ? ret : copy_attr(fd, &c->job->files[fi].attr);
	ret = ret < 0 ? ret : sys_fsync(fd);
	if (ret < 0)
		goto out_close;
	close(fd);
	ret = pfs_rename(c->tfd, tmp, dst);
	if (ret < 0)
		goto out_unlink;
	return 0;

out_close:
	close(fd);
out_unlink:
	pfs_unlink(c->tfd, tmp, 0);
	return ret;
}

/* Lay out m's file and chunk tables from the job. */
static int copy_layout(struct copy *c)
{
	struct pfs_job *job = c->job;
	uint64_t n = 0;
	uint32_t i;

	c->m.files = calloc(job->nfiles + 1, sizeof(*c->m.files));
	if (!c->m.files)
		return -ENOMEM;
	for (i = 0; i < job->nfiles; i++) {
		c->m.files[i].path = job->files[i].path;   /* borrowed */
		c->m.files[i].size = job->files[i].size;
		c->m.files[i].attr = job->files[i].attr;
		c->m.files[i].xattr = job->files[i].xattr; /* borrowed */
		c->m.files[i].xlen = job->files[i].xlen;
		c->m.files[i].link = job->files[i].link;
		c->m.files[i].first = (uint32_t)n;
		c->m.files[i].count = job->files[i].link ? 0 :
			(uint32_t)((job->files[i].size + c->m.chunk - 1) /
				   c->m.chunk);
		n += c->m.files[i].count;
	}
	if (n > PFSMAN_MAX_CHUNKS)
		return -EFBIG;
	c->m.nfiles = job->nfiles;
	c->m.nchunks = (uint32_t)n;
	c->m.chunks = calloc(n + 1, sizeof(*c->m.chunks));
	return c->m.chunks ? 0 : -ENOMEM;
}

int pfs_manifest_put(int tfd, const struct pfs_owner *o,
			const struct pfsman *m, const char *tmp,
			const char *dst)
{
	size_t size = pfsman_size(m);
	void *buf;
	long len;
	int fd, ret;

	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	len = pfsman_encode(m, buf, size);
	ret = len < 0 ? (int)len : 0;
	if (ret < 0)
		goto out_free;
	fd = pfs_create(tfd, tmp, o);
	ret = fd;
	if (fd >= 0) {
		ret = sys_pwrite_all(fd, buf, len, 0);
		if (ret == 0)
			ret = sys_fsync(fd);
		close(fd);
	}
	if (ret == 0)
		ret = pfs_rename(tfd, tmp, dst);
	if (ret < 0)
		pfs_unlink(tfd, tmp, 0);
out_free:
	free(buf);
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The copy's manifest: the version's, or a part's as part.<node>. */
static int write_manifest(struct copy *c)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int ret;

	c->m.drained_ns = now_ns();
	ret = pfs_path(dst, sizeof(dst), c->node ? PFS_N_PART : PFS_N_MANIFEST,
		       c->m.job, c->m.version, c->node, 0);
	if (ret == 0)
		ret = pfs_path(tmp, sizeof(tmp),
			       c->node ? PFS_N_PART_TMP : PFS_N_MANIFEST_TMP,
			       c->m.job, c->m.version, c->node, 0);
	return ret < 0 ? ret : pfs_manifest_put(c->tfd, &c->owner, &c->m, tmp, dst);
}

/* Remove the version's published manifest (an injectable unlink). */
static int unlink_manifest(int tfd, const struct pfs_job *job)
{
	char path[PATH_MAX];
	int ret;

	ret = pfs_path(path, sizeof(path), PFS_N_MANIFEST, job->job,
		       job->version, NULL, 0);
	if (ret == 0)
		ret = sys_inject(SYS_UNLINK);
	if (ret == 0)
		ret = pfs_unlink(tfd, path, 0);
	return ret;
}

/*
 * A manifest already at this version's place on the PFS that is not this
 * version's (the name was removed and written again) must go before any file
 * is replaced, or readers would take new bytes for the old version.
 */
static int unpublish_stale(const char *target, int tfd,
			   const struct pfs_job *job)
{
	struct pfsman old;
	int ret;

	if (pfs_load(target, job->job, job->version, &old) < 0)
		return 0;
	ret = old.seq == job->seq && old.sealed_ns == job->sealed_ns;
	pfsman_release(&old);
	if (ret)
		return 0;
	ret = unlink_manifest(tfd, job);
	if (ret == 0)
		log_printf(LOG_NOTICE, "drain: %s/%s: an older copy on the PFS is replaced",
			   job->job, job->version);
	return ret;
}

/*
 * The same for a part: this node's part.<node> of another incarnation of
 * the version must go, and with it a manifest, which cannot be of this
 * incarnation while this part is not on the PFS.  The manifest goes first.
 */
static int unpublish_stale_part(const char *target, int tfd,
				const struct pfs_job *job)
{
	char path[PATH_MAX];
	struct pfsman old;
	int ret, have;

	have = pfs_load_part(target, job->job, job->version, job->node,
			     &old) == 0;
	if (have) {
		ret = old.seq == job->seq && old.sealed_ns == job->sealed_ns;
		pfsman_release(&old);
		if (ret)
			return 0;
	}
	ret = unlink_manifest(tfd, job);
	if (ret == 0)
		log_printf(LOG_NOTICE, "drain: %s/%s: an older copy on the PFS is unpublished",
			   job->job, job->version);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	ret = 0;
	if (have)
		ret = pfs_path(path, sizeof(path), PFS_N_PART, job->job,
			       job->version, job->node, 0);
	if (have && ret == 0)
		ret = pfs_unlink(tfd, path, 0);
	return ret == -ENOENT ? 0 : ret;
}

static int copy_begin(struct copy *c)
{
	struct pfs_job *job = c->job;
	char dir[PATH_MAX];
	int ret;

	c->m.chunk = c->o->chunk;
	c->m.shuffle = c->o->compress ? c->o->shuffle : 0;
	c->m.uid = job->uid;
	c->m.seq = job->seq;
	c->m.sealed_ns = job->sealed_ns;
	snprintf(c->m.job, sizeof(c->m.job), "%s", job->job);
	snprintf(c->m.version, sizeof(c->m.version), "%s", job->version);
	ret = pfs_owner_of(job->uid, &c->owner);
	if (ret < 0)
		return ret;
	c->tfd = pfs_target_open(c->o->target);
	if (c->tfd < 0)
		return c->tfd;
	ret = pfs_path(dir, sizeof(dir), PFS_N_VERSION, job->job, job->version,
		       NULL, 0);
	if (ret == 0)
		ret = pfs_mkdirs(c->tfd, dir, pfs_shared_levels(job->job),
				 &c->owner);
	if (ret == 0)
		ret = c->node ? unpublish_stale_part(c->o->target, c->tfd, job)
			      : unpublish_stale(c->o->target, c->tfd, job);
	if (ret < 0)
		return ret;
	if (c->o->incremental && job->base[0] &&
	    pfs_load(c->o->target, job->job, job->base, &c->base) == 0 &&
	    c->base.chunk == c->m.chunk)
		c->have_base = 1;
	if (c->have_base)
		snprintf(c->m.base, sizeof(c->m.base), "%s", job->base);
	if (c->o->compress) {
		ret = zip_new(c->o->compress, c->o->shuffle, c->m.chunk,
			      &c->zip);
		if (ret < 0)
			return ret;
		c->zcap = zip_bound(c->m.chunk);
		c->zbuf = malloc(c->zcap);
		if (!c->zbuf)
			return -ENOMEM;
	}
	c->buf = malloc(c->m.chunk);
	if (!c->buf)
		return -ENOMEM;
	ret = copy_layout(c);
	return ret < 0 ? ret : builder_init(&c->b, job);
}

static void copy_release(struct copy *c)
{
	free(c->m.files);
	free(c->m.chunks);
	if (c->have_base)
		pfsman_release(&c->base);
	builder_release(&c->b);
	zip_free(c->zip);
	free(c->zbuf);
	free(c->buf);
	if (c->tfd >= 0)
		close(c->tfd);
}

/* Finish the manifest's flags from what the chunks turned out to be. */
static void copy_flags(struct copy *c)
{
	uint32_t i;

	for (i = 0; i < c->m.nchunks; i++) {
		if (c->m.chunks[i].kind == PFS_ZSTD)
			c->m.flags |= PFS_F_COMPRESSED;
		if (c->m.chunks[i].kind == PFS_REF)
			c->m.flags |= PFS_F_INCREMENTAL;
	}
	if (!(c->m.flags & PFS_F_INCREMENTAL))
		c->m.base[0] = 0;
}

int pfs_copy(const struct pfs_opts *opts, struct pfs_job *job)
{
	struct copy c = { .o = opts, .job = job, .tfd = -1 };
	uint8_t *done = NULL;
	uint32_t fi;
	int ret;

	if (job->nparts > 1 && job->node[0])
		c.node = job->node;

	ret = copy_begin(&c);
	if (ret < 0)
		goto out;
	done = calloc(job->nfiles + 1, 1);
	if (!done) {
		ret = -ENOMEM;
		goto out;
	}
	/* No journal, or an unreadable one: every file is copied. */
	(void)journal_load(job->journal, journal_take,
			   &(struct journal_ctx){ .m = &c.m, .done = done });
	for (fi = 0; fi < job->nfiles; fi++) {
		if (done[fi] || is_type(&job->files[fi].attr, CKPT_ATTR_IFDIR))
			continue;      /* published before an interruption */
		ret = copy_file(&c, fi);
		if (ret == 0)
			ret = journal_append(job->journal, fi,
					     &c.m.chunks[c.m.files[fi].first],
					     c.m.files[fi].count);
		if (ret < 0) {
			snprintf(job->failed_path, sizeof(job->failed_path),
				 "%s", job->files[fi].path);
			goto out;
		}
	}
	for (fi = 0; fi < job->nfiles; fi++) {
		if (!is_type(&job->files[fi].attr, CKPT_ATTR_IFDIR))
			continue;      /* directories last: see copy_dir() */
		ret = copy_dir(&c, fi);
		if (ret < 0) {
			snprintf(job->failed_path, sizeof(job->failed_path),
				 "%s", job->files[fi].path);
			goto out;
		}
	}
	copy_flags(&c);
	ret = write_manifest(&c);
	if (ret == 0)
		unlink(job->journal);
	/* A part is drained now; the version is published when the last
	 * part is there, by one node: is that now, and this one? */
	if (ret == 0 && c.node)
		job->publish = pfs_publish(opts->target, job->job, job->version,
					   job->uid, job->nparts, c.node);
out:
	free(done);
	copy_release(&c);
	return ret;
}

void pfs_job_free(struct pfs_job *job)
{
	uint32_t i;

	if (!job)
		return;
	for (i = 0; i < job->nfiles; i++) {
		free(job->files[i].path);
		free(job->files[i].xattr);
	}
	free(job->files);
	free(job->recs);
	free(job->fds);
	free(job);
}

/* ---- reading back --------------------------------------------------------- */

/* The manifest at rel, whole, in *buf (malloc'd, the caller frees it) and
 * *len, and the uid that owns it in *owner.  It must be a regular file. */
static int manifest_read(const char *target, const char *rel, void **buf,
			 size_t *len, uid_t *owner)
{
	struct stat st;
	int tfd, fd, ret;

	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	fd = pfs_open(tfd, rel, O_RDONLY, 0);
	close(tfd);
	if (fd < 0)
		return fd;
	ret = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
	if (ret == 0 && !(*buf = malloc(st.st_size ? st.st_size : 1)))
		ret = -ENOMEM;
	if (ret == 0)
		ret = sys_pread_all(fd, *buf, st.st_size, 0);
	close(fd);
	if (ret == 0) {
		*len = st.st_size;
		*owner = st.st_uid;
	}
	return ret;
}

/* The manifest at rel (a version's or a part's), decoded and checked as
 * pfs_load() says. */
static int load_at(const char *target, const char *rel, const char *job,
		   const char *version, struct pfsman *out)
{
	void *buf = NULL;
	uid_t owner = 0;
	size_t len = 0;
	int ret;

	ret = manifest_read(target, rel, &buf, &len, &owner);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	ret = pfsman_decode(buf, len, out);
	free(buf);
	if (ret < 0)
		return ret;
	if (strcmp(out->job, job) || strcmp(out->version, version)) {
		ret = -CKPT_ECORRUPT;
		goto out_release;
	}
	/* Owners can write in their trees: a manifest counts only if it is
	 * the file ckptd made, which only ckptd could have given to the uid
	 * it names. */
	if (owner == pfs_owner_uid(out->uid))
		return 0;
	ret = -EACCES;
out_release:
	pfsman_release(out);
	return ret;
}

int pfs_load(const char *target, const char *job, const char *version,
	     struct pfsman *out)
{
	char path[PATH_MAX];
	int ret;

	ret = pfs_path(path, sizeof(path), PFS_N_MANIFEST, job, version, NULL, 0);
	return ret < 0 ? ret : load_at(target, path, job, version, out);
}

int pfs_load_part(const char *target, const char *job, const char *version,
		  const char *node, struct pfsman *out)
{
	char path[PATH_MAX];
	int ret;

	ret = pfs_path(path, sizeof(path), PFS_N_PART, job, version, node, 0);
	return ret < 0 ? ret : load_at(target, path, job, version, out);
}

/* Each drain thread keeps one decompression context and frame buffer. */
static __thread struct zip *tl_zip;
static __thread int tl_shuffle, tl_chunk;
static __thread uint8_t *frame;
static __thread size_t fcap;

void pfs_thread_exit(void)
{
	zip_free(tl_zip);
	tl_zip = NULL;
	free(frame);
	frame = NULL;
	fcap = 0;
}

/* The target of link f (its one chunk k) into out, verified. */
static int link_fetch(int tfd, const struct pfsman *m,
		      const struct pfs_file *f, const struct pfs_chunk *k,
		      uint8_t *out)
{
	char path[PFS_REL_MAX];
	const char *name;
	ssize_t n;
	int pfd, ret;

	ret = pfs_path(path, sizeof(path), PFS_N_FILE, m->job, m->version,
		       f->path, 0);
	if (ret < 0)
		return ret;
	pfd = pfs_open_parent(tfd, path, &name);
	if (pfd < 0)
		return pfd;
	n = readlinkat(pfd, name, (char *)out, k->len);
	ret = n < 0 ? -errno : 0;
	close(pfd);
	if (ret == 0 && ((size_t)n != k->len || crc32c(out, k->len) != k->crc))
		ret = -CKPT_ECORRUPT;
	return ret;
}

/* The bytes of chunk k of file f into out (k->len bytes), verified. */
static int chunk_fetch(int tfd, const struct pfsman *m,
		       const struct pfs_file *f, const struct pfs_chunk *k,
		       int *fd, int *base_fd, uint8_t *out)
{
	char path[PFS_REL_MAX];
	int kind = k->kind == PFS_REF ? k->kind2 : k->kind;
	int *which = k->kind == PFS_REF ? base_fd : fd;
	int ret;

	if (kind == PFS_ZERO) {
		memset(out, 0, k->len);
		return 0;
	}
	if (is_link(&f->attr))
		return link_fetch(tfd, m, f, k, out);
	if (*which < 0) {
		ret = pfs_path(path, sizeof(path), PFS_N_FILE, m->job,
			       k->kind == PFS_REF ? m->base : m->version,
			       f->path, 0);
		if (ret < 0)
			return ret;
		*which = pfs_open(tfd, path, O_RDONLY, 0);
		if (*which < 0)
			return *which;
	}
	if (kind == PFS_RAW) {
		ret = sys_pread_all(*which, out, k->len, k->file_off);
	} else {
		if (k->stored > fcap) {
			free(frame);
			fcap = 0;
			frame = malloc(k->stored);
			if (!frame)
				return -ENOMEM;
			fcap = k->stored;
		}
		/* One context per thread, remade when the layout differs. */
		if (tl_zip && (tl_shuffle != (int)m->shuffle ||
			    tl_chunk != (int)m->chunk)) {
			zip_free(tl_zip);
			tl_zip = NULL;
		}
		if (!tl_zip && zip_new(1, m->shuffle, m->chunk, &tl_zip) < 0)
			return -ENOMEM;
		tl_shuffle = m->shuffle;
		tl_chunk = m->chunk;
		ret = sys_pread_all(*which, frame, k->stored, k->file_off);
		if (ret == 0)
			ret = zip_decompress(tl_zip, frame, k->stored, out, k->len);
	}
	if (ret == 0 && crc32c(out, k->len) != k->crc)
		ret = -CKPT_ECORRUPT;
	return ret;
}

long pfs_read(const char *target, const struct pfsman *m, uint32_t fi,
	      uint64_t off, uint64_t len, void *dst)
{
	const struct pfs_file *f = &m->files[PFS_DATA(m, fi)];
	uint64_t done = 0, coff, a, z;
	int fd = -1, base_fd = -1, tfd;
	uint8_t *buf = NULL;
	uint32_t idx;
	long ret = 0;

	if (off >= f->size)
		return 0;
	if (len > f->size - off)
		len = f->size - off;
	buf = malloc(m->chunk);
	if (!buf)
		return -ENOMEM;
	tfd = pfs_target_open(target);
	if (tfd < 0) {
		free(buf);
		return tfd;
	}
	for (idx = off / m->chunk; done < len && idx < f->count; idx++) {
		const struct pfs_chunk *k = &m->chunks[f->first + idx];

		coff = (uint64_t)idx * m->chunk;
		ret = chunk_fetch(tfd, m, f, k, &fd, &base_fd, buf);
		if (ret < 0)
			break;
		a = off + done;
		z = coff + k->len < off + len ? coff + k->len : off + len;
		memcpy((uint8_t *)dst + done, buf + (a - coff), z - a);
		done += z - a;
	}
	if (fd >= 0)
		close(fd);
	if (base_fd >= 0)
		close(base_fd);
	close(tfd);
	free(buf);
	return ret < 0 ? ret : (long)done;
}

/* rmdir rel's directory and those above it while they are empty, up to
 * and with the version's directory (the job's stays: a copy of another
 * version may be making its way into it). */
void pfs_prune(int tfd, const char *rel, size_t keep)
{
	char buf[PFS_REL_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return;
	while ((p = strrchr(buf, '/')) && (size_t)(p - buf) >= keep) {
		*p = 0;
		if (pfs_unlink(tfd, buf, AT_REMOVEDIR) < 0)
			return;
	}
}

int pfs_remove(const char *target, const struct pfsman *m)
{
	char path[PFS_REL_MAX], top[PATH_MAX];
	uint32_t i;
	int tfd, ret;

	ret = pfs_path(path, sizeof(path), PFS_N_MANIFEST, m->job, m->version,
		       NULL, 0);
	if (ret == 0)
		ret = pfs_path(top, sizeof(top), PFS_N_VERSION, m->job,
			       m->version, NULL, 0);
	if (ret < 0)
		return ret;
	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	ret = sys_inject_wait(SYS_UNLINK);   /* a worker's: may be late */
	if (ret == 0)
		ret = pfs_unlink(tfd, path, 0);
	if (ret < 0 && ret != -ENOENT)
		goto out_close;
	for (i = 0; i < m->nfiles; i++) {
		if (pfs_path(path, sizeof(path), PFS_N_FILE, m->job, m->version,
			     m->files[i].path, 0) < 0)
			continue;
		pfs_unlink(tfd, path, 0);
		/* Directories left empty go too, the version's last. */
		pfs_prune(tfd, path, strlen(top));
	}
	/* Part manifests, and temporaries an interrupted copy left. */
	pfs_vdir_clean(tfd, m->job, m->version, NULL);
	ret = 0;
out_close:
	close(tfd);
	return ret;
}

/* ---- scanning ------------------------------------------------------------- */

struct scan {
	const char *target;
	int (*fn)(void *, struct pfsman *);
	void *arg;
	char job[CKPT_JOB_MAX + 1];   /* the job of the level being scanned */
	size_t jlen;
};

/* An open directory of the level name of dfd. */
static DIR *scan_open(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

/* A version's directory found: load its manifest and hand it to fn. */
static int scan_version(struct scan *s, const char *name, size_t stem)
{
	char version[CKPT_VERSION_MAX + 1];
	struct pfsman m;
	int ret;

	if (stem > CKPT_VERSION_MAX)
		return 0;
	memcpy(version, name, stem);
	version[stem] = 0;
	if (name_check_version(version) || name_check_job(s->job))
		return 0;
	ret = pfs_load(s->target, s->job, version, &m);
	if (ret == -ENOENT)
		return 0;       /* a copy that never finished */
	if (ret < 0) {
		log_printf(LOG_WARNING, "pfs: no valid manifest for %s/%s on the PFS (%s); ignored",
			   s->job, version, ckpt_strerror(ret));
		return 0;
	}
	return s->fn(s->arg, &m);
}

/*
 * Scan the level open as d, a shared level (or the target) when !job_level,
 * else a job's: follow .dir and .job levels, or .ver ones; everything else,
 * whoever made it, is not part of the layout and is left alone.
 */
static int scan_level(struct scan *s, DIR *d, int job_level, unsigned depth)
{
	size_t jlen = s->jlen, stem;
	struct dirent *e;
	enum pfs_level l;
	DIR *sub;
	int ret = 0;

	while (!ret && (e = readdir(d))) {
		l = pfs_level(e->d_name, &stem);
		if (job_level) {
			if (l == PFS_L_VER)
				ret = scan_version(s, e->d_name, stem);
			continue;
		}
		if ((l != PFS_L_DIR && l != PFS_L_JOB) ||
		    jlen + stem + 1 > CKPT_JOB_MAX || depth > CKPT_JOB_MAX / 2)
			continue;
		memcpy(s->job + jlen, e->d_name, stem);
		s->jlen = jlen + stem;
		if (l == PFS_L_DIR)
			s->job[s->jlen++] = '/';
		s->job[s->jlen] = 0;
		sub = scan_open(dirfd(d), e->d_name);
		if (sub) {
			ret = scan_level(s, sub, l == PFS_L_JOB, depth + 1);
			closedir(sub);
		}
		s->jlen = jlen;
		s->job[jlen] = 0;
	}
	return ret;
}

int pfs_scan(const char *target, int (*fn)(void *arg, struct pfsman *m),
	     void *arg)
{
	struct scan s = { .target = target, .fn = fn, .arg = arg };
	DIR *d;
	int ret;

	d = opendir(target);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	ret = scan_level(&s, d, 0, 0);
	closedir(d);
	return ret;
}
