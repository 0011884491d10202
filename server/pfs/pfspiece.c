/*
 * pfspiece.c - the pieces of a copy (pfscopy.c) and the threads that copy
 * them (see pfscopy_i.h).
 *
 * A file is cut into pieces of about PIECE_BYTES, only where no record
 * crosses (pfsbuild.h).  The copy's threads take pieces from one list, a
 * file no other thread is writing first (the kernel takes turns between
 * writers of one file), each asking the kernel for the records of its piece
 * and of the next one; the taker of a file's first piece creates its
 * temporary.  A thread rebuilds each chunk of its piece, decides how it is
 * stored (chunk_put: a reference to the base's, a hole, zstd or raw) and
 * writes it to the page cache.  The thread done with a file's last piece
 * hands it to the finisher, which lets finished files gather to a batch
 * (copy_batch_bytes(): what fits the page cache well, or a second at
 * the drain's cap; or half of copy_open_max() files, since each holds an
 * fd until it is published, and no thread opens a file while that many
 * are open) and then publishes them: writeback of the whole batch
 * started at once, then for each file its size and attributes, fsync and
 * rename, then one fsync per directory and one journal append for all.  So
 * the disk reads while the threads copy and writes while the finisher
 * publishes, rather than doing both at once in small turns, and the copy
 * makes a few fsyncs per batch, not three per file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "crc32c.h"
#include "journal.h"
#include "pfs_i.h"
#include "pfscopy_i.h"
#include "xattr.h"
#include "sys.h"
#include "zip.h"

/* A piece: about this many bytes of a file, in whole chunks. */
#define PIECE_BYTES (16u << 20)
/* Bytes of finished files left to the page cache before the finisher
 * writes them back: a sixteenth of the memory, within these bounds, and
 * under a bandwidth cap no more than BATCH_CAP_S seconds of it (a slow
 * drain publishes files as it goes). */
#define BATCH_MIN (64ull << 20)
#define BATCH_MAX (2ull << 30)
#define BATCH_CAP_S 1
/* Files one copy holds open at once: an eighth of the fd limit shared by
 * the copies that may run at once, within these bounds (copy_open_max()).
 * Half as many ready make a batch. */
#define OPEN_MIN 16u
#define OPEN_MAX 1024u
/* Helper threads of one copy at most (the pool thread is one more). */
#define COPY_MAX_HELPERS 63
/* Direct writes: buffer, offset and length in whole blocks of this. */
#define DIRECT_ALIGN 4096u


/* One thread of a copy: its builder and buffers, and its share of the
 * figures (added to the job's once the threads are joined). */
struct worker {
	struct copy *c;
	struct pfs_builder b;
	struct zip *zip;
	uint8_t *buf;             /* one chunk, DIRECT_ALIGN aligned */
	uint8_t *zbuf;            /* one compressed chunk */
	size_t zcap;
	uint64_t bytes_in, bytes_out, bytes_ref, bytes_direct;
	uint32_t zlen, zcrc;      /* zcrc: the CRC32C of zlen zero bytes */
	pthread_t th;
	int started;              /* th runs */
};

static int packed(const struct copy *c)
{
	return c->o->compress || c->o->incremental;
}

/* Record ret as the copy's error, if it is the first; fi is to blame (or
 * UINT32_MAX).  Locked. */
static void fail_locked(struct copy *c, int ret, uint32_t fi)
{
	if (ret < 0 && !c->err) {
		__atomic_store_n(&c->err, ret, __ATOMIC_RELAXED);
		c->err_file = fi;
		pthread_cond_broadcast(&c->room_cv);
	}
}

void copy_fail(struct copy *c, int ret, uint32_t fi)
{
	pthread_mutex_lock(&c->mu);
	fail_locked(c, ret, fi);
	pthread_mutex_unlock(&c->mu);
}

static int failed(struct copy *c)
{
	return __atomic_load_n(&c->err, __ATOMIC_RELAXED);
}

static int all_zero(const uint8_t *p, size_t n)
{
	static const uint8_t zero[4096];

	for (; n >= sizeof(zero); p += sizeof(zero), n -= sizeof(zero))
		if (memcmp(p, zero, sizeof(zero)))
			return 0;
	return !memcmp(p, zero, n);
}

const struct pfs_chunk *copy_base_chunk(const struct copy *c,
					const char *path, uint32_t idx)
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

/*
 * Write stored chunk k of file fi from src: straight to the disk where the
 * file has a direct fd and the chunk is whole blocks from an aligned buffer
 * (every chunk of a plain copy but a file's last one when it ends inside a
 * block), else into
 * the page cache, which the finisher writes back in batches (see
 * finisher_main()).  Direct, the drain copies nothing into new page-cache
 * memory (which costs more than the disk on some machines:
 * docs/benchmarks.md) and leaves the page cache to the trainers.
 */
static int chunk_write(struct worker *w, uint32_t fi, int fd,
		       const void *src, const struct pfs_chunk *k)
{
	int dfd = w->c->cf[fi].dfd, ret;

	if (dfd >= 0 && (uintptr_t)src % DIRECT_ALIGN == 0 &&
	    k->stored % DIRECT_ALIGN == 0 && k->file_off % DIRECT_ALIGN == 0) {
		ret = sys_pwrite_all(dfd, src, k->stored, k->file_off);
		if (ret == 0)
			w->bytes_direct += k->stored;
		/* A file system that opens O_DIRECT but refuses these
		 * writes: through the page cache. */
		if (ret != -EINVAL)
			return ret;
	}
	return sys_pwrite_all(fd, src, k->stored, k->file_off);
}

/* The CRC32C of len zero bytes (a hole's chunk), kept for the last len
 * asked: every chunk of a file but its last has the same. */
static uint32_t zero_crc(struct worker *w, uint32_t len)
{
	static const uint8_t zero[65536];
	uint32_t n, crc = 0, left;

	if (w->zlen == len)
		return w->zcrc;
	for (left = len; left; left -= n) {
		n = left < sizeof(zero) ? left : (uint32_t)sizeof(zero);
		crc = crc32c_update(crc, zero, n);
	}
	w->zlen = len;
	w->zcrc = crc;
	return crc;
}

/* Decide how chunk idx of file fi (its bytes at sp) is stored, and write
 * it to fd. */
static int chunk_put(struct worker *w, uint32_t fi, int fd, uint32_t idx,
		     uint64_t coff, uint32_t len, const struct pfs_span *sp,
		     struct pfs_chunk *k)
{
	struct copy *c = w->c;
	const struct pfs_chunk *bk;
	const void *src = sp->p;
	long z;

	k->len = len;
	k->crc = sp->zero ? zero_crc(w, len) :
		 sp->have_crc ? sp->crc : crc32c(sp->p, len);
	bk = c->o->incremental ? copy_base_chunk(c, c->m.files[fi].path, idx)
				  : NULL;
	if (bk && bk->len == len && bk->crc == k->crc) {
		k->kind = PFS_REF;
		k->kind2 = bk->kind;
		k->file_off = bk->file_off;
		k->stored = bk->stored;
		w->bytes_ref += len;
		return 0;
	}
	if (sp->zero || all_zero(sp->p, len)) {
		k->kind = PFS_ZERO;
		k->file_off = 0;
		k->stored = 0;
		return 0;
	}
	k->kind = PFS_RAW;
	k->stored = len;
	if (c->o->compress) {
		z = zip_compress(w->zip, sp->p, len, w->zbuf, w->zcap);
		if (z < 0)
			return (int)z;
		if (z > 0) {
			k->kind = PFS_ZSTD;
			k->stored = (uint32_t)z;
			src = w->zbuf;
		}
	}
	k->file_off = coff;
	if (packed(c)) {          /* the next free place in the file */
		pthread_mutex_lock(&c->mu);
		k->file_off = c->cf[fi].out_off;
		c->cf[fi].out_off += k->stored;
		pthread_mutex_unlock(&c->mu);
	}
	if (c->o->bw)
		bwlimit_take(c->o->bw, k->stored);
	w->bytes_out += k->stored;
	return chunk_write(w, fi, fd, src, k);
}


/*
 * Give the PFS file the mode and times its writer set (attr.set): mode
 * without the set-id bits and always readable by its owner (ckptd reads it
 * back: remote reads, incremental bases); times as they were.  Its owner
 * stays the job's (pfslayout.h); the job's tree is 0700 at its .job level,
 * so no mode opens it to others.  After the last write, which moves mtime.
 */
int copy_attr(int fd, const struct ckpt_attr *a)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };

	if ((a->set & CKPT_ATTR_MODE) &&
	    fchmod(fd, (a->mode & 0777) | S_IRUSR) < 0)
		return -errno;
	if (attr_times(a, ts) &&
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
static int copy_link(struct worker *w, uint32_t fi)
{
	struct copy *c = w->c;
	const struct pfs_file *f = &c->m.files[fi];
	const struct ckpt_attr *a = &c->job->files[fi].attr;
	struct pfs_chunk *k = &c->m.chunks[f->first];
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };
	char tmp[PFS_REL_MAX], dst[PFS_REL_MAX];
	const char *name;
	int pfd, ret;

	ret = copy_file_names(c, fi, tmp, dst);
	if (ret < 0)
		return ret;
	if (f->count != 1 || f->size >= c->m.chunk || f->size >= PATH_MAX)
		return -CKPT_EPROTO;
	ret = pfs_builder_fill(&w->b, fi, 0, (uint32_t)f->size, w->buf);
	if (ret < 0)
		return ret;
	w->buf[f->size] = '\0';
	if (strlen((char *)w->buf) != f->size)
		return -CKPT_EPROTO;     /* a NUL in a target */
	*k = (struct pfs_chunk){ .len = (uint32_t)f->size,
				 .crc = crc32c(w->buf, f->size),
				 .stored = (uint32_t)f->size, .kind = PFS_RAW };
	pfd = pfs_open_parent(c->tfd, tmp, &name);
	if (pfd < 0)
		return pfd;
	unlinkat(pfd, name, 0);         /* left by an interrupted copy */
	ret = symlinkat((char *)w->buf, pfd, name) < 0 ? -errno : 0;
	if (ret == 0 && fchownat(pfd, name, c->owner.uid, c->owner.gid,
				 AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
		ret = -errno;
	attr_times(a, ts);
	if (ret == 0 && utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		ret = -errno;
	if (ret == 0)
		ret = fsync(pfd) < 0 ? -errno : 0;
	close(pfd);
	w->bytes_in += f->size;
	if (ret == 0)
		ret = pfs_rename(c->tfd, tmp, dst);
	if (ret < 0)
		pfs_unlink(c->tfd, tmp, 0);
	return ret;
}

/* ---- pieces and threads --------------------------------------------------- */

/* Make the directories above file fi and, unless it is a symbolic link
 * (copy_link() makes its own), create its temporary.  c->mu held: pieces
 * of it after the first cannot be taken before the fd is there, and two
 * threads never make one directory at once. */
static int file_open_locked(struct copy *c, uint32_t fi)
{
	char tmp[PFS_REL_MAX], dst[PFS_REL_MAX];
	int ret;

	ret = copy_file_names(c, fi, tmp, dst);
	if (ret == 0)
		ret = pfs_mkdirs_above(c->tfd, dst, c->m.job, &c->owner);
	if (ret < 0 || is_link(&c->job->files[fi].attr))
		return ret;
	ret = pfs_create(c->tfd, tmp, &c->owner);
	if (ret < 0)
		return ret;
	c->cf[fi].fd = ret;
	c->nopen++;
	if (fi >= c->hi_file)
		c->hi_file = fi + 1;
	/* Plain chunks at chunk offsets can go straight to the disk: the
	 * same open file again, never the name (its directory is the
	 * owner's), and without it the page cache (chunk_write()).  Not for
	 * a file smaller than a block; closed when its last piece is done,
	 * so that finished files waiting for the finisher hold one fd. */
	if (c->o->direct && !packed(c) &&
	    c->m.files[fi].size >= DIRECT_ALIGN) {
		ret = sys_reopen(c->cf[fi].fd, O_WRONLY | O_DIRECT);
		c->cf[fi].dfd = ret >= 0 ? ret : -1;
	}
	return 0;
}

/*
 * The piece a thread copies next: the first not taken of a file no other
 * thread is copying, else the first not taken.  Writes to one file take
 * turns (the kernel locks the file for each), so threads on different
 * files write at once.  A file's pieces are still taken in order.  Locked.
 */
static struct piece *piece_pick(struct copy *c)
{
	uint32_t i;

	while (c->next < c->npieces && c->pieces[c->next].taken)
		c->next++;
	for (i = c->next; i < c->npieces; i++)
		if (!c->pieces[i].taken && !c->cf[c->pieces[i].file].busy)
			return &c->pieces[i];
	return c->next < c->npieces ? &c->pieces[c->next] : NULL;
}

/*
 * piece_pick(), but a file's first piece (which opens it) only while the
 * copy holds fewer than open_max files open; else a piece of a file
 * already open, or wait for the finisher to publish some.  NULL when the
 * copy failed or no piece is left.
 */
static struct piece *piece_pick_room(struct copy *c)
{
	struct piece *p;
	uint32_t i;

	while (!c->err && (p = piece_pick(c))) {
		if (p->first || c->nopen < c->open_max)
			return p;
		/* Pieces are in file order: none past the last file opened
		 * is of an open file. */
		for (i = c->next; i < c->npieces &&
		     c->pieces[i].file < c->hi_file; i++)
			if (!c->pieces[i].taken &&
			    c->cf[c->pieces[i].file].fd >= 0)
				return &c->pieces[i];
		pthread_cond_wait(&c->room_cv, &c->mu);
	}
	return NULL;
}

/* The next piece for a thread (NULL when none is left or the copy failed)
 * and in *ahead, one whose records it should ask for now, if any: its own
 * unless another thread asked for them, and the first not taken after it,
 * so that the disk reads one piece ahead of the copying. */
static const struct piece *piece_take(struct copy *c, struct piece **ahead)
{
	struct piece *p = NULL, *q;
	int ret = 0;

	pthread_mutex_lock(&c->mu);
	p = piece_pick_room(c);
	if (p) {
		p->taken = 1;
		c->cf[p->file].busy++;
		ahead[0] = p->fetched ? NULL : p;
		p->fetched = 1;
		for (q = p + 1; q < c->pieces + c->npieces && q->taken; q++)
			;
		ahead[1] = q < c->pieces + c->npieces && !q->fetched ? q : NULL;
		if (ahead[1])
			ahead[1]->fetched = 1;
		if (p->first == 0)
			ret = file_open_locked(c, p->file);
		if (ret < 0) {
			fail_locked(c, ret, p->file);
			p = NULL;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return p;
}

/* Copy the chunks of piece p. */
static int piece_copy(struct worker *w, const struct piece *p)
{
	struct copy *c = w->c;
	const struct pfs_file *f = &c->m.files[p->file];
	int fd = c->cf[p->file].fd;
	struct pfs_span sp;
	uint32_t idx, len;
	uint64_t off;
	int ret;

	if (p->end > p->first)
		pfs_builder_plan(&w->b, p->file, (uint64_t)p->first * c->m.chunk,
				 (uint64_t)(p->end - p->first) * c->m.chunk,
				 c->m.chunk);
	for (idx = p->first; idx < p->end; idx++) {
		off = (uint64_t)idx * c->m.chunk;
		len = f->size - off < c->m.chunk ? (uint32_t)(f->size - off)
						 : c->m.chunk;
		ret = wait_unpaused(c->o);
		if (ret == 0 && failed(c))
			ret = -ECANCELED;        /* another thread's error */
		if (ret == 0)
			ret = pfs_builder_span(&w->b, p->file, off, len,
					       w->buf, &sp);
		if (ret == 0)
			ret = chunk_put(w, p->file, fd, idx, off, len, &sp,
					&c->m.chunks[f->first + idx]);
		if (ret < 0)
			return ret;
		w->bytes_in += len;
	}
	return 0;
}

/* Seal file fi, whose pieces are all copied: its size, extended
 * attributes and attributes, fsync'd and closed. */
static int file_seal(struct copy *c, uint32_t fi)
{
	const struct man_file *jf = &c->job->files[fi];
	struct cfile *cf = &c->cf[fi];
	int ret = 0;

	/* Plain: the size, with zero chunks as holes; packed: the chunks. */
	if (ftruncate(cf->fd, packed(c) ? cf->out_off : jf->size) < 0)
		ret = -errno;
	if (ret == 0)
		ret = copy_xattr(cf->fd, jf->xattr, jf->xlen);
	if (ret == 0)
		ret = copy_attr(cf->fd, &jf->attr);
	if (ret == 0)
		ret = sys_fsync(cf->fd);
	close(cf->fd);
	cf->fd = -1;
	return ret;
}

/* fsync the directories files fis[0 .. n) were renamed into, each once
 * (files of one directory come one after the other). */
static int files_sync_dirs(struct copy *c, const uint32_t *fis, uint32_t n)
{
	char tmp[PFS_REL_MAX], dst[PFS_REL_MAX], last[PFS_REL_MAX] = "";
	uint32_t i;
	size_t dl;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		if (is_link(&c->job->files[fis[i]].attr))
			continue;       /* copy_link() did */
		ret = copy_file_names(c, fis[i], tmp, dst);
		dl = strrchr(dst, '/') ? (size_t)(strrchr(dst, '/') - dst) : 0;
		if (ret < 0 || (strlen(last) == dl && !strncmp(last, dst, dl)))
			continue;
		snprintf(last, sizeof(last), "%.*s", (int)dl, dst);
		ret = pfs_fsync_parent(c->tfd, dst);
	}
	return ret;
}

/* Journal files fis[0 .. n), published, in one append (one writer at a
 * time). */
int copy_journal(struct copy *c, const uint32_t *fis, uint32_t n)
{
	const struct pfs_chunk **ck;
	uint32_t *cnt, i;
	int ret;

	ck = malloc(sizeof(*ck) * (n + 1));
	cnt = malloc(sizeof(*cnt) * (n + 1));
	ret = ck && cnt ? 0 : -ENOMEM;
	for (i = 0; i < n && ret == 0; i++) {
		ck[i] = &c->m.chunks[c->m.files[fis[i]].first];
		cnt[i] = c->m.files[fis[i]].count;
	}
	pthread_mutex_lock(&c->jmu);
	if (ret == 0)
		ret = journal_append_many(c->job->journal, n, fis, ck, cnt);
	pthread_mutex_unlock(&c->jmu);
	free(cnt);
	free(ck);
	return ret;
}

/* A file's fd is closed (file_seal()): room for one more to open
 * (piece_pick_room()). */
static void file_closed(struct copy *c)
{
	pthread_mutex_lock(&c->mu);
	c->nopen--;
	pthread_cond_broadcast(&c->room_cv);
	pthread_mutex_unlock(&c->mu);
}

/*
 * Publish files fis[0 .. n), whose pieces are all copied: each sealed and
 * renamed into place (a symbolic link already is), then the directories
 * they went to fsync'd, then one journal append for them all.  On an error
 * the files renamed before it are in place but not journaled: a restarted
 * copy copies them again.  *blame gets the file to blame.
 */
static int files_publish(struct copy *c, const uint32_t *fis, uint32_t n,
			 uint32_t *blame)
{
	char tmp[PFS_REL_MAX], dst[PFS_REL_MAX];
	uint32_t i;
	int ret = 0;

	/* Every file's writeback at once: the device gets one long run of
	 * writes, and the fsyncs below wait for their own tails. */
	for (i = 0; i < n; i++)
		if (c->cf[fis[i]].fd >= 0)
			sync_file_range(c->cf[fis[i]].fd, 0, 0,
					SYNC_FILE_RANGE_WRITE);
	for (i = 0; i < n && ret == 0; i++) {
		*blame = fis[i];
		if (is_link(&c->job->files[fis[i]].attr))
			continue;
		ret = copy_file_names(c, fis[i], tmp, dst);
		if (ret < 0)
			break;          /* the fd is closed by copy_cleanup() */
		ret = file_seal(c, fis[i]);
		file_closed(c);
		if (ret == 0)
			ret = pfs_rename_nosync(c->tfd, tmp, dst);
		if (ret < 0)
			pfs_unlink(c->tfd, tmp, 0);
	}
	if (ret < 0)
		return ret;
	*blame = UINT32_MAX;
	ret = files_sync_dirs(c, fis, n);
	return ret < 0 ? ret : copy_journal(c, fis, n);
}

/* Piece p is copied (ret 0) or failed.  A file's last piece, while the
 * copy has not failed, makes it ready for the finisher, or without one is
 * published here. */
static void piece_done(struct worker *w, const struct piece *p, int ret)
{
	struct copy *c = w->c;
	uint32_t fi;
	int last;

	pthread_mutex_lock(&c->mu);
	fail_locked(c, ret, p->file);
	c->cf[p->file].busy--;
	last = --c->cf[p->file].left == 0;
	if (last && c->cf[p->file].dfd >= 0) {
		close(c->cf[p->file].dfd);
		c->cf[p->file].dfd = -1;
	}
	last = last && !c->err;
	if (last && c->finisher) {
		c->ready[c->nready++] = p->file;
		c->ready_bytes += c->m.files[p->file].size;
		if (c->ready_bytes >= c->batch ||
		    c->nready - c->ready_head >= c->batch_files)
			pthread_cond_signal(&c->ready_cv);
		last = 0;
	}
	pthread_mutex_unlock(&c->mu);
	if (last) {
		ret = files_publish(c, &p->file, 1, &fi);
		if (ret < 0)
			copy_fail(c, ret, fi);
	}
}

/* The finisher: publish files as they become ready, all those ready at
 * once (while it publishes some, more get ready: then fewer fsyncs of
 * directories and journal appends), until copying is over and none is
 * left, or the copy fails (what is left is cleaned up). */
static void *finisher_main(void *arg)
{
	struct copy *c = arg;
	uint32_t head, n, fi;
	int ret;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->ready_bytes < c->batch &&
		       c->nready - c->ready_head < c->batch_files &&
		       !c->copied && !c->err)
			pthread_cond_wait(&c->ready_cv, &c->mu);
		if (c->ready_head == c->nready || c->err)
			break;
		head = c->ready_head;
		n = c->nready - head;
		c->ready_head = c->nready;
		c->ready_bytes = 0;
		pthread_mutex_unlock(&c->mu);
		ret = files_publish(c, &c->ready[head], n, &fi);
		pthread_mutex_lock(&c->mu);
		fail_locked(c, ret, fi);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct piece *ahead[2] = { NULL, NULL };
	const struct piece *p;
	unsigned i;
	int ret;

	while ((p = piece_take(w->c, ahead))) {
		for (i = 0; i < 2; i++)
			if (ahead[i] && ahead[i]->end > ahead[i]->first)
				pfs_builder_prefetch(&w->b, ahead[i]->file,
					(uint64_t)ahead[i]->first * w->c->m.chunk,
					(uint64_t)(ahead[i]->end - ahead[i]->first) *
						w->c->m.chunk);
		if (is_link(&w->c->job->files[p->file].attr))
			ret = copy_link(w, p->file);
		else
			ret = piece_copy(w, p);
		piece_done(w, p, ret);
	}
	return NULL;
}

static int worker_init(struct worker *w, struct copy *c)
{
	int ret;

	w->c = c;
	ret = pfs_builder_init(&w->b, &c->ix, c->o->direct);
	if (ret < 0)
		return ret;
	if (c->o->compress) {
		ret = zip_new(c->o->compress, c->o->shuffle, c->m.chunk,
			      &w->zip);
		if (ret < 0)
			return ret;
		w->zcap = zip_bound(c->m.chunk);
		w->zbuf = malloc(w->zcap);
		if (!w->zbuf)
			return -ENOMEM;
	}
	/* Aligned: a chunk built here can be written directly. */
	w->buf = sys_dio_alloc(c->m.chunk);
	return w->buf ? 0 : -ENOMEM;
}

static void worker_release(struct worker *w)
{
	pfs_builder_release(&w->b);
	zip_free(w->zip);
	free(w->zbuf);
	if (w->buf)     /* w->c is NULL where worker_init never ran */
		sys_dio_free(w->buf, w->c->m.chunk);
}

/* Ready bytes that make a batch for the finisher. */
uint64_t copy_batch_bytes(const struct pfs_opts *o)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t b = pages > 0 && psize > 0 ? (uint64_t)pages * psize / 16 : 0;
	uint64_t rate = o->bw ? bwlimit_rate(o->bw) : 0;

	b = b < BATCH_MIN ? BATCH_MIN : b > BATCH_MAX ? BATCH_MAX : b;
	if (rate && rate * BATCH_CAP_S < b)
		b = rate * BATCH_CAP_S;
	return b ? b : 1;
}

uint32_t copy_open_max(const struct pfs_opts *o)
{
	uint64_t copies = o->threads ? o->threads : 1, n = OPEN_MAX;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 8 / copies < n)
		n = rl.rlim_cur / 8 / copies;
	return n < OPEN_MIN ? OPEN_MIN : (uint32_t)n;
}

/*
 * Threads for a copy of npieces pieces: up to opts->threads, no more than
 * there are pieces, taken from the drain's budget (opts->spare, shared by
 * its copies) when there is one.  May be 0: the copy then runs on its
 * caller's thread alone.  Give them back with copy_threads_give().
 */
unsigned copy_threads_take(const struct pfs_opts *o, uint32_t npieces)
{
	unsigned want = o->threads ? o->threads : 1, got = 0;
	int v;

	if (want > npieces)
		want = npieces ? npieces : 1;
	if (want > COPY_MAX_HELPERS + 1)
		want = COPY_MAX_HELPERS + 1;
	if (!o->spare)
		return want;
	v = __atomic_load_n(o->spare, __ATOMIC_RELAXED);
	while (got < want && v > 0)
		if (__atomic_compare_exchange_n(o->spare, &v, v - 1, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			got++;
			v--;
		}
	return got;
}

void copy_threads_give(const struct pfs_opts *o, unsigned n)
{
	if (o->spare)
		__atomic_add_fetch(o->spare, (int)n, __ATOMIC_ACQ_REL);
}

/* Copy every piece with n threads (this one and n - 1 helpers, fewer if
 * some cannot be started) and the finisher (without one, the threads
 * publish files themselves).  0 or the copy's first error. */
int copy_pieces(struct copy *c, unsigned n)
{
	struct worker *w;
	pthread_t fin;
	unsigned i;
	int ret = 0;

	w = calloc(n, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (i = 0; i < n && ret == 0; i++)
		ret = worker_init(&w[i], c);
	if (ret == 0)
		c->finisher = !pthread_create(&fin, NULL, finisher_main, c);
	for (i = 1; i < n && ret == 0; i++)
		w[i].started = !pthread_create(&w[i].th, NULL, worker_main,
					       &w[i]);
	if (ret == 0)
		worker_main(&w[0]);
	for (i = 1; i < n; i++)
		if (w[i].started)
			pthread_join(w[i].th, NULL);
	if (c->finisher) {
		pthread_mutex_lock(&c->mu);
		c->copied = 1;
		pthread_cond_signal(&c->ready_cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(fin, NULL);
	}
	for (i = 0; i < n; i++) {
		c->job->bytes_in += w[i].bytes_in;
		c->job->bytes_out += w[i].bytes_out;
		c->job->bytes_direct += w[i].bytes_direct;
		c->job->bytes_ref += w[i].bytes_ref;
		worker_release(&w[i]);
	}
	free(w);
	return ret < 0 ? ret : c->err;
}

/* Cut every file still to copy into pieces: journaled files, hard links
 * and directories have none, a symbolic link is one. */
int copy_plan(struct copy *c, const uint8_t *done)
{
	uint32_t fi, target = PIECE_BYTES / c->m.chunk, *ends;
	long n, i;

	c->pieces = malloc(sizeof(*c->pieces) *
			   ((size_t)c->m.nchunks + c->m.nfiles + 1));
	c->cf = calloc(c->m.nfiles + 1, sizeof(*c->cf));
	c->ready = malloc(sizeof(*c->ready) * (c->m.nfiles + 1));
	ends = malloc(sizeof(*ends) * ((size_t)c->m.nchunks + 2));
	if (!c->pieces || !c->cf || !c->ready || !ends) {
		free(ends);
		return -ENOMEM;
	}
	for (fi = 0; fi < c->m.nfiles; fi++)
		c->cf[fi].fd = c->cf[fi].dfd = -1;
	for (fi = 0; fi < c->m.nfiles; fi++) {
		const struct pfs_file *f = &c->m.files[fi];

		if (done[fi] || f->link ||
		    attr_is_type(&c->job->files[fi].attr, CKPT_ATTR_IFDIR))
			continue;
		n = pfs_index_cut(&c->ix, fi, f->count, c->m.chunk,
				  target ? target : 1, ends);
		if (n < 0) {
			free(ends);
			return (int)n;
		}
		for (i = 0; i < n; i++)
			c->pieces[c->npieces++] = (struct piece){
				.file = fi, .first = i ? ends[i - 1] : 0,
				.end = ends[i] };
		c->cf[fi].left = (uint32_t)n;
	}
	free(ends);
	return 0;
}

/* What the threads left unfinished after an error loses its temporary. */
void copy_cleanup(struct copy *c)
{
	char tmp[PFS_REL_MAX], dst[PFS_REL_MAX];
	uint32_t fi;

	for (fi = 0; c->cf && fi < c->m.nfiles; fi++) {
		if (c->cf[fi].dfd >= 0)
			close(c->cf[fi].dfd);
		c->cf[fi].dfd = -1;
		if (c->cf[fi].fd < 0)
			continue;
		close(c->cf[fi].fd);
		c->cf[fi].fd = -1;
		if (copy_file_names(c, fi, tmp, dst) == 0)
			pfs_unlink(c->tfd, tmp, 0);
	}
}

