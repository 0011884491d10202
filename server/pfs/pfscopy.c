/*
 * pfscopy.c - copy a sealed version out to the parallel file system (see
 * pfs.h, pfs_copy()): the copy as a whole.  Runs on a drain thread and
 * threads of its own; blocking I/O only.
 *
 * The copy lays out the PFS manifest from the job, skips the files an
 * interrupted copy journaled, and hands the rest to pfspiece.c: each
 * regular file cut into pieces of a few chunks (pfsbuild.h: only where no
 * record crosses, so no record is read twice), copied by up to [drain]
 * threads threads (the pool thread that called pfs_copy() and helpers, as
 * many as the drain's budget has free), so that one large file is copied by
 * all of them and reads overlap writes.  Each chunk is rebuilt from the
 * records, every record CRC-checked; the chunk's CRC32C goes in the PFS
 * manifest.  A plain drain writes each chunk at its own offset and leaves
 * all-zero chunks as holes, so the file on the PFS is the trainer's file.
 * With compression or incremental drains a file holds its stored chunks
 * one after the other, in the order the threads wrote them, and only the
 * manifest says where each one is.
 *
 * Crash semantics are those of a copy file by file: a file is written
 * under a temporary name, then given its attributes, fsync'd, renamed, its
 * directory fsync'd, and only then journaled (pfspiece.c does this in
 * batches); a restarted copy skips the files journaled.  Symbolic links are
 * one piece; hard links (a second name of an earlier file) are made here
 * once every file is in place, directories' attributes after them, and the
 * manifest last.  The first error stops every thread; the files it left
 * unfinished lose their temporaries.
 *
 * Where anything goes on the PFS, and every open, mkdir, rename and unlink
 * there, is pfslayout.c's: nothing here builds a PFS path.  A part of a
 * version in parts is copied the same way, under its node's temporary
 * names, with its part manifest in place of the manifest; publishing the
 * version and removing a part are pfspart.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "journal.h"
#include "log.h"
#include "pfs.h"
#include "pfs_i.h"
#include "pfscopy_i.h"
#include "pfsnames.h"
#include "pfslayout.h"
#include "sys.h"

/* ---- the journal of files already published ------------------------------ */

struct journal_ctx {
	struct copy *c;           /* c->m: files[].first/count laid out, and
				   * the base (if any) loaded */
	uint8_t *done;            /* done[fi] set for each file journaled */
};

/* Does every PFS_REF chunk of file fi (as journaled) name exactly the
 * chunk the copy's base holds there now?  The base is chosen again at each
 * start (the newest drained version before this one), so a copy resumed
 * after a newer base drained, or with its base gone, would otherwise keep
 * references into a version its manifest does not name. */
static int journal_refs_hold(const struct copy *c, uint32_t fi)
{
	const struct pfs_file *f = &c->m.files[fi];
	const struct pfs_chunk *k, *bk;
	uint32_t i;

	for (i = 0; i < f->count; i++) {
		k = &c->m.chunks[f->first + i];
		if (k->kind != PFS_REF)
			continue;
		bk = copy_base_chunk(c, f->path, i);
		if (!bk || bk->len != k->len || bk->crc != k->crc ||
		    bk->kind != k->kind2 || bk->file_off != k->file_off ||
		    bk->stored != k->stored)
			return 0;
	}
	return 1;
}

/* A record that does not fit the version stops the load: the files from
 * there on are copied again.  A file whose references no longer hold is
 * copied again too. */
static int journal_take(void *arg, const struct journal_rec *r)
{
	struct journal_ctx *jc = arg;
	struct pfsman *m = &jc->c->m;
	struct pfs_file *f;

	if (r->file >= m->nfiles || r->n != m->files[r->file].count)
		return 1;
	f = &m->files[r->file];
	journal_rec_chunks(r, &m->chunks[f->first]);
	jc->done[r->file] = journal_refs_hold(jc->c, r->file);
	/* Copied again: chunk_put() fills entries that start zeroed. */
	if (!jc->done[r->file])
		memset(&m->chunks[f->first], 0, f->count * sizeof(*m->chunks));
	return 0;
}

/* ---- the copy ------------------------------------------------------------- */

/* The PFS names of file fi: its place, and its temporary. */
int copy_file_names(const struct copy *c, uint32_t fi, char *tmp,
		    char *dst)
{
	int ret;

	ret = pfs_path(dst, PFS_REL_MAX, PFS_N_FILE, c->m.job, c->m.version,
		       c->m.files[fi].path, 0);
	if (ret == 0)
		ret = pfs_path(tmp, PFS_REL_MAX,
			       c->node ? PFS_N_PART_FILE_TMP : PFS_N_FILE_TMP,
			       c->m.job, c->m.version, c->node, fi);
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
static int copy_hardlink(struct copy *c, uint32_t fi)
{
	char from[PFS_REL_MAX], tmp[PFS_REL_MAX], dst[PFS_REL_MAX];
	int ret;

	ret = copy_file_names(c, fi, tmp, dst);
	if (ret == 0)
		ret = pfs_mkdirs_above(c->tfd, dst, c->m.job, &c->owner);
	if (ret == 0)
		ret = pfs_path(from, sizeof(from), PFS_N_FILE, c->m.job, c->m.version,
		       c->m.files[c->m.files[fi].link - 1].path, 0);
	if (ret < 0)
		return ret;
	pfs_unlink(c->tfd, tmp, 0);     /* left by an interrupted copy */
	ret = pfs_link(c->tfd, from, tmp);
	if (ret == 0)
		ret = pfs_rename(c->tfd, tmp, dst);
	/* Also on success: where an interrupted copy already put the link
	 * in place, dst and tmp name one inode and rename() leaves both. */
	pfs_unlink(c->tfd, tmp, 0);
	return ret;
}

/* Hard links (second names of files now in place), in order, then the
 * directories' attributes (see copy_dir()). */
static int copy_names(struct copy *c, const uint8_t *done)
{
	uint32_t fi;
	int ret;

	for (fi = 0; fi < c->m.nfiles; fi++) {
		if (done[fi] || !c->m.files[fi].link)
			continue;
		ret = copy_hardlink(c, fi);
		if (ret == 0)
			ret = copy_journal(c, &fi, 1);
		if (ret < 0) {
			copy_fail(c, ret, fi);
			return ret;
		}
	}
	for (fi = 0; fi < c->m.nfiles; fi++) {
		if (!attr_is_type(&c->job->files[fi].attr, CKPT_ATTR_IFDIR))
			continue;
		ret = copy_dir(c, fi);
		if (ret < 0) {
			copy_fail(c, ret, fi);
			return ret;
		}
	}
	return 0;
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The copy's manifest: the version's, or a part's as part.<node>. */
static int write_manifest(struct copy *c)
{
	char tmp[PFS_REL_MAX], dst[PFS_REL_MAX];
	int ret;

	c->m.drained_ns = now_ns();
	ret = pfs_path(dst, sizeof(dst), c->node ? PFS_N_PART : PFS_N_MANIFEST,
		       c->m.job, c->m.version, c->node, 0);
	if (ret == 0)
		ret = pfs_path(tmp, sizeof(tmp),
			       c->node ? PFS_N_PART_TMP : PFS_N_MANIFEST_TMP,
			       c->m.job, c->m.version, c->node, 0);
	return ret < 0 ? ret : pfs_manifest_put(c->tfd, &c->m, tmp, dst,
						      NULL);
}

/* Remove the version's published manifest (an injectable unlink). */
static int unlink_manifest(int tfd, const struct pfs_job *job)
{
	char path[PFS_REL_MAX];
	int ret;

	ret = pfs_path(path, sizeof(path), PFS_N_MANIFEST, job->job,
		       job->version, NULL, 0);
	if (ret == 0)
		ret = sys_inject(SYS_UNLINK);
	if (ret == 0)
		ret = pfs_unlink(tfd, path, 0);
	return ret;
}

/* 1 if old (released here) is the manifest of job's incarnation. */
static int same_incarnation(struct pfsman *old, const struct pfs_job *job)
{
	int same = old->seq == job->seq && old->sealed_ns == job->sealed_ns;

	pfsman_release(old);
	return same;
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

	if (pfs_load(target, job->job, job->version, &old) < 0 ||
	    same_incarnation(&old, job))
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
	char path[PFS_REL_MAX];
	struct pfsman old;
	int ret, have;

	have = pfs_load_part(target, job->job, job->version, job->node,
			     &old) == 0;
	if (have && same_incarnation(&old, job))
		return 0;
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
	char dir[PFS_REL_MAX];
	int went_on, ret;

	c->m.chunk = c->o->chunk;
	c->m.shuffle = c->o->compress ? c->o->shuffle : 0;
	c->m.uid = job->uid;
	c->m.seq = job->seq;
	c->m.sealed_ns = job->sealed_ns;
	snprintf(c->m.job, sizeof(c->m.job), "%s", job->job);
	snprintf(c->m.version, sizeof(c->m.version), "%s", job->version);
	snprintf(c->m.writer, sizeof(c->m.writer), "%s", job->writer);
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
	/* A part's files go in only once no other part names their paths;
	 * the journal, made once it is claimed, marks a part that went on. */
	if (ret == 0 && c->node) {
		went_on = access(job->journal, F_OK) == 0;
		ret = pfs_names_claim(c->o->target, c->tfd, job, went_on,
				      job->failed_path, sizeof(job->failed_path),
				      job->clash_node, sizeof(job->clash_node));
		if (ret == 0 && !went_on)
			ret = journal_begin(job->journal);
	}
	if (ret < 0)
		return ret;
	if (c->o->incremental && job->base[0] &&
	    pfs_load(c->o->target, job->job, job->base, &c->base) == 0 &&
	    c->base.chunk == c->m.chunk)
		c->have_base = 1;
	if (c->have_base)
		snprintf(c->m.base, sizeof(c->m.base), "%s", job->base);
	ret = copy_layout(c);
	return ret < 0 ? ret : pfs_index_init(&c->ix, job);
}

static void copy_release(struct copy *c)
{
	free(c->m.files);
	free(c->m.chunks);
	if (c->have_base)
		pfsman_release(&c->base);
	pfs_index_release(&c->ix);
	free(c->pieces);
	free(c->cf);
	free(c->ready);
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
	struct copy c = { .o = opts, .job = job, .tfd = -1,
			  .err_file = UINT32_MAX };
	uint8_t *done = NULL;
	unsigned nthr;
	int ret;

	if (job->nparts > 1 && job->node[0])
		c.node = job->node;
	pthread_mutex_init(&c.mu, NULL);
	pthread_mutex_init(&c.jmu, NULL);
	pthread_cond_init(&c.ready_cv, NULL);
	pthread_cond_init(&c.room_cv, NULL);
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
			   &(struct journal_ctx){ .c = &c, .done = done });
	ret = copy_plan(&c, done);
	if (ret < 0)
		goto out;
	c.batch = copy_batch_bytes(opts);
	c.open_max = copy_open_max(opts);
	c.batch_files = c.open_max / 2;
	nthr = copy_threads_take(opts, c.npieces);
	ret = copy_pieces(&c, nthr ? nthr : 1);
	copy_threads_give(opts, nthr);
	copy_cleanup(&c);
	if (ret == 0)
		ret = copy_names(&c, done);
	if (ret < 0)
		goto out;
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
	if (ret < 0 && c.err_file != UINT32_MAX && !job->clash_node[0])
		snprintf(job->failed_path, sizeof(job->failed_path), "%s",
			 job->files[c.err_file].path);
	free(done);
	copy_release(&c);
	pthread_cond_destroy(&c.room_cv);
	pthread_cond_destroy(&c.ready_cv);
	pthread_mutex_destroy(&c.jmu);
	pthread_mutex_destroy(&c.mu);
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

