/*
 * pfs.c - read a drained version back from the parallel file system, remove
 * one, scan the PFS for them, and write a manifest there (see pfs.h).  The
 * copy itself is pfscopy.c's; versions in parts are pfspart.c's.  Runs on
 * drain threads; blocking I/O only.
 *
 * Where anything goes on the PFS, and every open, mkdir, rename and unlink
 * there, is pfslayout.c's: nothing here builds a PFS path.
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

#include "catalog.h"
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


int pfs_put_own(int tfd, const void *buf, size_t len, const char *tmp,
		const char *dst, const struct pfs_put_gate *gate)
{
	const struct pfs_owner self = { geteuid(), getegid() };
	int fd, ret;

	fd = pfs_create(tfd, tmp, &self);
	ret = fd;
	if (fd >= 0) {
		ret = fchmod(fd, 0644) < 0 ? -errno : 0;
		if (ret == 0)
			ret = sys_pwrite_all(fd, buf, len, 0);
		if (ret == 0)
			ret = sys_fsync(fd);
		close(fd);
	}
	if (ret == 0 && gate)
		ret = gate->open(gate->arg);
	if (ret == 0)
		ret = pfs_rename(tfd, tmp, dst);
	if (ret < 0)
		pfs_unlink(tfd, tmp, 0);
	return ret;
}

int pfs_manifest_put(int tfd, const struct pfsman *m, const char *tmp,
		     const char *dst, const struct pfs_put_gate *gate)
{
	size_t size = pfsman_size(m);
	void *buf;
	long len;
	int ret;

	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	len = pfsman_encode(m, buf, size);
	ret = len < 0 ? (int)len : pfs_put_own(tfd, buf, (size_t)len, tmp, dst,
							 gate);
	free(buf);
	return ret;
}

/* ---- reading back --------------------------------------------------------- */

/* The regular file at rel of target, open for reading, and its fstat in
 * *st.  The fd or -errno. */
static int open_regular(const char *target, const char *rel, struct stat *st)
{
	int tfd, fd;

	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	fd = pfs_open_regular(tfd, rel, st);
	close(tfd);
	return fd;
}

int pfs_read_whole(const char *target, const char *rel, void **buf,
		   size_t *len, uid_t *owner, struct stat *stp)
{
	struct stat st;
	int fd, ret;

	fd = open_regular(target, rel, &st);
	if (fd < 0)
		return fd;
	ret = 0;
	/* Another uid's file is only its claim (pfs_load_at()): not a sparse
	 * terabyte for ckptd to allocate and read. */
	if (st.st_uid != geteuid() && st.st_size > PFS_CLAIM_MAX)
		ret = -EFBIG;
	*buf = NULL;
	if (ret == 0 && !(*buf = malloc(st.st_size ? st.st_size : 1)))
		ret = -ENOMEM;
	if (ret == 0)
		ret = sys_pread_all(fd, *buf, st.st_size, 0);
	close(fd);
	if (ret == 0) {
		*len = st.st_size;
		*owner = st.st_uid;
		if (stp)
			*stp = st;
	}
	return ret;
}

/*
 * The uid a manifest names can write it (its tree is the uid's), so it
 * claims no more than that uid could have had ckptd write: a seq below
 * PFS_SEQ_MAX (ckptd's counter could never wrap), attributes the uid could
 * have given its own files (attr_owner_could(): ckptfs lets it set a
 * set-uid bit on a file it owns), and extended attributes in "user." only.
 * 0, -EPERM or -ENOMEM.
 */
static int claim_ok(const struct pfsman *m)
{
	uint32_t i;
	int ret;

	if (m->seq >= PFS_SEQ_MAX)
		return -EPERM;
	for (i = 0; i < m->nfiles; i++) {
		const struct pfs_file *f = &m->files[i];

		ret = attr_owner_could(m->uid, &f->attr);
		if (ret < 0)
			return ret;
		if (!xattr_user_only(f->xattr, f->xlen))
			return -EPERM;
	}
	return 0;
}

static void stamp_of(const struct stat *st, struct pfs_stamp *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	stamp->dev = st->st_dev;
	stamp->ino = st->st_ino;
	stamp->size = st->st_size;
	stamp->mtime = st->st_mtim;
	stamp->ctime = st->st_ctim;
}

/* pfs_load_at(), and into *claim (when not NULL) the manifest's length if
 * it is another uid's (a claim), else 0, and into *stamp (when not NULL)
 * the stamp of the file read. */
static int load_at(const char *target, const char *rel, const char *job,
		   const char *version, struct pfsman *out, uint64_t *claim,
		   struct pfs_stamp *stamp)
{
	void *buf = NULL;
	uid_t owner = 0;
	size_t len = 0;
	struct stat st;
	int ret;

	ret = pfs_read_whole(target, rel, &buf, &len, &owner, &st);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	if (claim)
		*claim = owner == geteuid() ? 0 : len;
	if (stamp)
		stamp_of(&st, stamp);
	ret = pfsman_decode(buf, len, out);
	free(buf);
	if (ret < 0)
		return ret;
	if (strcmp(out->job, job) || strcmp(out->version, version)) {
		ret = -CKPT_ECORRUPT;
		goto out_release;
	}
	/* Owners can write in their trees: a manifest counts if ckptd wrote
	 * it (it is ckptd's own: pfs_manifest_put()), or if it is owned by
	 * the uid it names, and then only for what that uid could have had
	 * ckptd write (claim_ok()). */
	if (owner == geteuid())
		ret = out->seq < PFS_SEQ_MAX ? 0 : -EPERM;
	else if (owner == pfs_owner_uid(out->uid))
		ret = claim_ok(out);
	else
		ret = -EACCES;
	if (ret == 0)
		return 0;
out_release:
	pfsman_release(out);
	return ret;
}

int pfs_load_at(const char *target, const char *rel, const char *job,
		const char *version, struct pfsman *out)
{
	return load_at(target, rel, job, version, out, NULL, NULL);
}

int pfs_load_at_own(const char *target, const char *rel, const char *job,
		    const char *version, struct pfsman *out, int *own)
{
	uint64_t claim = 0;
	int ret = load_at(target, rel, job, version, out, &claim, NULL);

	*own = claim == 0;
	return ret;
}

int pfs_load(const char *target, const char *job, const char *version,
	     struct pfsman *out)
{
	return pfs_load_stamped(target, job, version, "", out, NULL);
}

int pfs_load_part(const char *target, const char *job, const char *version,
		  const char *node, struct pfsman *out)
{
	return pfs_load_stamped(target, job, version, node, out, NULL);
}

/* The relative path of the manifest pfs_load_stamped() reads. */
static int manifest_rel(char *path, size_t cap, const char *job,
			const char *version, const char *node)
{
	return node[0] ? pfs_path(path, cap, PFS_N_PART, job, version, node, 0)
		       : pfs_path(path, cap, PFS_N_MANIFEST, job, version,
				  NULL, 0);
}

int pfs_load_stamped(const char *target, const char *job,
		     const char *version, const char *node,
		     struct pfsman *out, struct pfs_stamp *stamp)
{
	char path[PFS_REL_MAX];
	int ret;

	ret = manifest_rel(path, sizeof(path), job, version, node);
	if (ret == 0)
		ret = load_at(target, path, job, version, out, NULL, stamp);
	if (ret == 0)
		snprintf(out->node, sizeof(out->node), "%s", node);
	return ret;
}

int pfs_stamp(const char *target, const char *job, const char *version,
	      const char *node, struct pfs_stamp *stamp)
{
	char path[PFS_REL_MAX];
	struct stat st;
	int fd, ret;

	ret = manifest_rel(path, sizeof(path), job, version, node);
	if (ret < 0)
		return ret;
	fd = open_regular(target, path, &st);
	if (fd < 0)
		return fd;
	close(fd);
	stamp_of(&st, stamp);
	return 0;
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
		*which = pfs_open_regular(tfd, path, NULL);
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

	if (m->stripped)
		return -EINVAL;
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

/* The claims (manifests another uid owns) the scan took from a uid: the
 * memory they hold, and how many. */
struct claim_use {
	uint32_t uid;
	uint32_t versions;
	uint64_t bytes;
};

struct scan {
	const char *target;
	int (*fn)(void *, struct pfsman *);
	void *arg;
	char job[CKPT_JOB_MAX + 1];   /* the job of the level being scanned */
	size_t jlen;
	struct claim_use *use;        /* one per uid with claims taken */
	uint32_t nuse, capuse;
	struct claim_use all;         /* every uid's together */
};

/* Whether u can take a claim holding len bytes of memory within budget
 * and versions: 0, -EDQUOT (the memory) or -E2BIG (the count). */
static int claim_fits(const struct claim_use *u, uint64_t len,
		      uint64_t budget, uint32_t versions)
{
	if (u->versions >= versions)
		return -E2BIG;
	if (len > budget - u->bytes)
		return -EDQUOT;
	return 0;
}

/* Count a claim holding len bytes of memory against uid and against every
 * uid's together, leaving the counts as they were when it would pass
 * uid's bounds (PFS_CLAIM_BUDGET: -EDQUOT, PFS_CLAIM_VERSIONS: -E2BIG) or
 * all uids' (the same errors, *all set); 0 or -ENOMEM. */
static int claim_take(struct scan *s, uint32_t uid, uint64_t len, int *all)
{
	struct claim_use *u;
	uint32_t i;
	int ret;

	*all = 0;
	for (i = 0; i < s->nuse && s->use[i].uid != uid; i++)
		;
	if (i == s->nuse) {
		if (s->nuse == s->capuse) {
			u = realloc(s->use, (s->capuse * 2 + 4) * sizeof(*u));
			if (!u)
				return -ENOMEM;
			s->use = u;
			s->capuse = s->capuse * 2 + 4;
		}
		s->use[s->nuse++] = (struct claim_use){ .uid = uid };
	}
	ret = claim_fits(&s->use[i], len, PFS_CLAIM_BUDGET, PFS_CLAIM_VERSIONS);
	if (ret < 0)
		return ret;
	*all = 1;
	ret = claim_fits(&s->all, len, PFS_CLAIM_ALL_BUDGET,
			 PFS_CLAIM_ALL_VERSIONS);
	if (ret < 0)
		return ret;
	s->use[i].bytes += len;
	s->use[i].versions++;
	s->all.bytes += len;
	s->all.versions++;
	return 0;
}

/* Log why claim_take() refused a claim of uid's (ret, all). */
static void claim_refused(const struct scan *s, const char *version,
			  uint32_t uid, int ret, int all)
{
	char whose[96], what[64];

	if (all)
		snprintf(whose, sizeof(whose), "the manifests there not written by ckptd (this one uid %u's)", uid);
	else
		snprintf(whose, sizeof(whose), "uid %u's own manifests there (not written by ckptd)", uid);
	if (ret == -EDQUOT)
		snprintf(what, sizeof(what), "would hold over %lld MiB of memory",
			 (all ? PFS_CLAIM_ALL_BUDGET : PFS_CLAIM_BUDGET) >> 20);
	else
		snprintf(what, sizeof(what), "are over %d versions",
			 all ? PFS_CLAIM_ALL_VERSIONS : PFS_CLAIM_VERSIONS);
	log_printf(LOG_WARNING, "pfs: %s/%s on the PFS is ignored: %s %s in all%s",
		   s->job, version, whose, what, all ? ", every uid's together" : "");
}

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
	char version[CKPT_VERSION_MAX + 1], rel[PFS_REL_MAX];
	uint64_t claim = 0;
	struct pfsman m;
	int ret, all;

	if (stem > CKPT_VERSION_MAX)
		return 0;
	memcpy(version, name, stem);
	version[stem] = 0;
	if (name_check_version(version) || name_check_job(s->job))
		return 0;
	ret = pfs_path(rel, sizeof(rel), PFS_N_MANIFEST, s->job, version, NULL,
		       0);
	if (ret == 0)
		ret = load_at(s->target, rel, s->job, version, &m, &claim,
			      NULL);
	if (ret == -ENOENT)
		return 0;       /* a copy that never finished */
	if (ret < 0) {
		log_printf(LOG_WARNING, "pfs: no valid manifest for %s/%s on the PFS (%s); ignored",
			   s->job, version, ckpt_strerror(ret));
		return 0;
	}
	/* ckptd keeps what it takes: the memory a uid's own manifests hold
	 * once kept is bounded, so that no uid can make it hold its memory
	 * (see pfs_i.h).  Stripped here as the catalog would (without the
	 * memory to strip, the chunk table counts too). */
	if (claim) {
		pfsman_strip(&m);
		claim = pfsman_held(&m) + catalog_remote_held(&m);
	}
	ret = claim ? claim_take(s, m.uid, claim, &all) : 0;
	if (ret == -EDQUOT || ret == -E2BIG)
		claim_refused(s, version, m.uid, ret, all);
	if (ret < 0) {
		pfsman_release(&m);
		return ret == -EDQUOT || ret == -E2BIG ? 0 : ret;
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
	free(s.use);
	return ret;
}
