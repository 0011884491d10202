/*
 * nsops.c - the namespace operations: getattr, mkdir, rmdir, unlink, rename,
 * link, chmod, chown and utimensat (recorded by attr.c), and statfs.
 *
 * Each operation resolves its path (path.c) to one of: the root, a leading
 * part of job names, a job, a version, or a path inside a version.  Inside
 * a version this mount holds, the mirror answers (tree.c) and changes go to
 * ckptd in order with the version's writes (ckpt_unlink, ckpt_rename,
 * ckpt_link) under the version's ns lock.  Inside any other version ckptd
 * answers, and every change is EROFS: a committed version is immutable, and
 * an open one that another client writes is not ours to change.
 *
 * Ownership and modes: the root and leading parts of job names are root's,
 * mode 1777 (anyone may make a job; only its owner may remove it); a job,
 * its versions and files belong to the job's owner (ckpt_version_info.uid)
 * and are private to it, as in ckptd, where another uid gets EACCES:
 * directories 0700 and files 0600 while this mount writes them, 0500 and
 * 0400 otherwise.  With default_permissions the kernel enforces them, so
 * the mount is no way around ckptd's rule.
 *
 * Layer: the operations (ops_i.h): the FUSE namespace operations, named
 * in ckptfs.c's table.  They call down into the namespace layer (vers.c,
 * tree.c, attr.c, path.c, pend.c, inomap.c), the write-behind (flushed
 * before a change) and the connections (srv.c), and in their own layer
 * inval.c.  Not to be confused with that layer's header, ns_i.h.
 */
#include <errno.h>
#include <stdio.h>      /* RENAME_NOREPLACE, RENAME_EXCHANGE */
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "ops_i.h"
#include "namehash.h"

/* ---- attributes ---------------------------------------------------------- */

/*
 * st_ino.  The inodes of a version this mount writes are numbered from the
 * mount's counter (tree.c), so the names of one file show one number, kept
 * across renames.  What ckptd answers for (committed versions, other
 * writers' versions, jobs, the leading parts of their names) is numbered by
 * a keyed 64-bit hash (namehash.h: the mount's own key, so that no one can
 * choose a path that shows another's number) of what it is: its kind, job,
 * version and path, or, for a file with several names, ckptd's ino in place
 * of the path, so that its names show one number too.  The top bit keeps
 * those apart from the counter's.  The root is FS_ROOT_INO, as the kernel
 * has it.  A version this mount committed keeps the counter's numbers
 * (inomap.c), so that a file's number does not change at its commit.
 */
/* s (at most max bytes of it) and a NUL at buf + n; the new end. */
static size_t put_name(char *buf, size_t n, const char *s, size_t max)
{
	size_t l = strnlen(s, max);

	memcpy(buf + n, s, l);
	buf[n + l] = 0;
	return n + l + 1;
}

static uint64_t ino_hash(enum fs_kind kind, const char *job,
			 const char *version, const char *path, uint64_t ino)
{
	char buf[1 + CKPT_JOB_MAX + 1 + CKPT_VERSION_MAX + 1 +
		 CKPT_PATH_MAX2 + 1];
	size_t n = 1;

	buf[0] = (char)((unsigned char)kind | (ino ? 0x80 : 0));
	n = put_name(buf, n, job, CKPT_JOB_MAX);
	n = put_name(buf, n, version, CKPT_VERSION_MAX);
	if (ino) {
		memcpy(buf + n, &ino, sizeof(ino));
		n += sizeof(ino);
	} else {
		n = put_name(buf, n, path, CKPT_PATH_MAX2);
	}
	return name_hash64(buf, n) | 1ull << 63;
}

static struct timespec sealed_time(const struct ckptfs *fs,
				   const struct ckpt_version_info *info)
{
	struct timespec t = fs->started;

	if (info->sealed_ns) {
		t.tv_sec = info->sealed_ns / 1000000000ull;
		t.tv_nsec = info->sealed_ns % 1000000000ull;
	}
	return t;
}

/* Root, or a leading part of job names. */
static int attr_prefix(struct ckptfs *fs, const struct fs_path *p,
		       struct stat *st)
{
	int ret = 1;

	if (p->kind == P_PREFIX) {
		pthread_mutex_lock(&fs->mu);
		ret = pend_find(fs, p->job) || pend_has_below(fs, p->job) ||
		      ver_job_held(fs, p->job, 1, NULL);
		pthread_mutex_unlock(&fs->mu);
	}
	if (!ret)
		ret = srv_has_prefix(fs, p->job);
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	attr_fill(st, S_IFDIR | FS_MODE_TOP, 0, 0, &fs->started);
	st->st_ino = p->kind == P_ROOT ? FS_ROOT_INO
				       : ino_hash(P_PREFIX, p->job, "", "", 0);
	return 0;
}

static int attr_job(struct ckptfs *fs, const struct fs_path *p,
		    struct stat *st)
{
	struct timespec t = fs->started;
	struct fs_pending *pd;
	uint32_t uid = 0;
	int ret;

	pthread_mutex_lock(&fs->mu);
	ret = ver_job_held(fs, p->job, 0, &uid);
	pd = ret ? NULL : pend_find(fs, p->job);
	if (pd) {
		uid = pd->uid;
		t = pd->born;
		ret = 1;
	}
	pthread_mutex_unlock(&fs->mu);
	if (!ret)
		ret = srv_job(fs, p->job, &uid);
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	attr_fill(st, S_IFDIR | FS_MODE_DIR, uid, 0, &t);
	st->st_ino = ino_hash(P_JOB, p->job, "", "", 0);
	return 0;
}

/* The marker of a committed version: a read-only empty file that says so. */
static void attr_marker(uint32_t uid, const struct timespec *t,
			struct stat *st)
{
	attr_fill(st, S_IFREG | FS_MODE_FILE, uid, 0, t);
}

/* A version, or a path in it, that this mount does not hold. */
static int attr_server(struct ckptfs *fs, const struct fs_path *p,
		       struct stat *st)
{
	struct ckpt_version_info info;
	struct ckpt_file_info file;
	uint64_t linked = 0, ino, ctime_ns;
	struct timespec t;
	int ret;

	ret = ver_remote(fs, p->job, p->vdisp, &info);
	if (ret < 0)
		return ret;
	t = sealed_time(fs, &info);
	if (p->kind == P_VERSION) {
		attr_fill(st, S_IFDIR | FS_MODE_RODIR, info.uid, 0, &t);
	} else if (path_is_marker(p) && srv_committed(&info)) {
		attr_marker(info.uid, &t, st);
	} else {
		ret = srv_file(fs, p->job, p->vdisp, p->file, &file);
		if (ret == 0) {
			attr_fill(st, S_IFREG | FS_MODE_ROFILE, info.uid,
				  file.size, &t);
			/* its data, so that du is right and cp and tar see
			 * a sparse file (and ask lseek for its holes) */
			st->st_blocks = (file.data + 511) / 512;
			if (srv_dir_entry(&file))   /* a directory's */
				st->st_nlink = 2;
			else if (file.nlink)        /* 0: an old ckptd */
				st->st_nlink = file.nlink;
			if (file.nlink > 1)
				linked = file.ino;
			/* read-only here, committed or not */
			attr_apply(st, &file.attr, 0);
		} else if (ret == -ENOENT) {
			ret = srv_is_dir(fs, p->job, p->vdisp, p->file);
			if (ret == 1)
				attr_fill(st, S_IFDIR | FS_MODE_RODIR,
					  info.uid, 0, &t);
			ret = ret == 1 ? 0 : ret == 0 ? -ENOENT : ret;
		}
	}
	if (ret == 0)
		st->st_ino = ino_hash(p->kind, p->job, p->vdisp,
				      p->kind == P_FILE ? p->file : "", linked);
	if (ret == 0) {     /* committed here: what it showed (inomap.c) */
		pthread_mutex_lock(&fs->mu);
		if (inomap_find_locked(fs, p->job, p->vdisp,
				       p->kind == P_FILE ? p->file : "",
				       info.sealed_ns, &ino, &ctime_ns)) {
			st->st_ino = ino;
			st->st_ctim.tv_sec = ctime_ns / 1000000000ull;
			st->st_ctim.tv_nsec = ctime_ns % 1000000000ull;
		}
		pthread_mutex_unlock(&fs->mu);
	}
	return ret;
}

static int attr_held(struct ckptfs *fs, struct fs_version *ver,
		     const struct fs_path *p, struct stat *st)
{
	struct fs_node *n;
	int ret = 0;

	pthread_mutex_lock(&fs->mu);
	n = tree_lookup(&ver->tree, p->kind == P_FILE ? p->file : "");
	if (n)
		node_attr(ver, n, st);
	else
		ret = -ENOENT;
	pthread_mutex_unlock(&fs->mu);
	return ret;
}

int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	memset(st, 0, sizeof(*st));
	if (h && h->kind == H_NODE) {
		pthread_mutex_lock(&fs->mu);
		node_attr(h->ver, h->node, st);
		pthread_mutex_unlock(&fs->mu);
		return 0;
	}
	if (h) {        /* fstat of a file this mount does not write */
		memset(&p, 0, sizeof(p));
		p.kind = P_FILE;
		strcpy(p.job, h->job);
		strcpy(p.vdisp, h->version);
		strcpy(p.file, h->kind == H_MARKER ? FS_MARKER : h->path);
		return fs_errno(attr_server(fs, &p, st));
	}
	if (!path)
		return -ESTALE;
	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	switch (p.kind) {
	case P_ROOT:
	case P_PREFIX:
		ret = attr_prefix(fs, &p, st);
		break;
	case P_JOB:
		ret = attr_job(fs, &p, st);
		break;
	case P_VERSION:
	case P_FILE:
		ver = ver_find(fs, p.job, p.vdisp);
		ret = ver ? attr_held(fs, ver, &p, st) : attr_server(fs, &p, st);
		ver_put(fs, ver);
		break;
	}
	return fs_errno(ret);
}

/* ---- mkdir, rmdir -------------------------------------------------------- */

static int mkdir_job(struct ckptfs *fs, const struct fs_path *p, uint32_t uid)
{
	int ret;

	pthread_mutex_lock(&fs->mu);
	ret = pend_find(fs, p->job) || ver_job_held(fs, p->job, 0, NULL) ||
	      ver_job_held(fs, p->job, 1, NULL) || pend_has_below(fs, p->job);
	pthread_mutex_unlock(&fs->mu);
	if (!ret)
		ret = p->kind == P_JOB ? srv_job(fs, p->job, NULL)
				       : srv_has_prefix(fs, p->job);
	if (ret)
		return ret < 0 ? ret : -EEXIST;
	pthread_mutex_lock(&fs->mu);
	ret = pend_find(fs, p->job) ? -EEXIST : pend_add(fs, p->job, uid);
	pthread_mutex_unlock(&fs->mu);
	return ret;
}

static int mkdir_version(struct ckptfs *fs, const struct fs_path *p,
			 uint32_t uid)
{
	struct ckpt_version_info info;
	struct fs_version *ver;
	int ret;

	ver = ver_find(fs, p->job, p->vdisp);
	ver_put(fs, ver);
	if (ver)
		return -EEXIST;
	ret = ver_remote(fs, p->job, p->vdisp, &info);
	if (ret != -ENOENT)
		return ret < 0 ? ret : -EEXIST;
	return ver_begin(fs, p->job, p->vdisp, uid);
}

static int mkdir_in(struct ckptfs *fs, struct fs_version *ver,
		    const struct fs_path *p, mode_t mode)
{
	struct fs_node *dir, *n = NULL;
	struct ckpt_attr a;
	const char *base;
	int ret;

	attr_new(&a, mode);

	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	if (ret == 0)
		ret = tree_parent(&ver->tree, p, &dir, &base);
	if (ret == 0 && tree_child(&ver->tree, dir, base))
		ret = -EEXIST;
	if (ret == 0)
		ret = tree_add(&ver->tree, dir, base, 1, &n);
	if (ret == 0) {
		n->in->attr = a; /* a directory's stay in the mirror (attr.c) */
		ver_touch_locked(ver);
	}
	pthread_mutex_unlock(&fs->mu);
	return ret;
}

int fs_mkdir(const char *path, mode_t mode)
{
	struct ckptfs *fs = fs_get();
	uint32_t uid = fuse_get_context()->uid;
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	ret = path_parse_raw(fs, path, &p);
	if (ret < 0)
		return fs_errno(ret);
	if (p.kind != P_VERSION)    /* a new VER.tmp is no old alias */
		alias_resolve(fs, &p);
	switch (p.kind) {
	case P_ROOT:
		ret = -EEXIST;
		break;
	case P_PREFIX:
	case P_JOB:
		ret = mkdir_job(fs, &p, uid);
		break;
	case P_VERSION:
		ret = mkdir_version(fs, &p, uid);
		break;
	case P_FILE:
		ver = ver_find(fs, p.job, p.vdisp);
		ret = ver ? mkdir_in(fs, ver, &p, mode) : ver_not_held(fs, &p);
		ver_put(fs, ver);
		break;
	}
	return fs_errno(ret);
}

static int rmdir_job(struct ckptfs *fs, const struct fs_path *p)
{
	struct fs_pending *pd;
	int ret;

	pthread_mutex_lock(&fs->mu);
	ret = ver_job_held(fs, p->job, p->kind == P_PREFIX, NULL) ||
	      pend_has_below(fs, p->job);
	pthread_mutex_unlock(&fs->mu);
	if (!ret)
		ret = p->kind == P_JOB ? srv_job(fs, p->job, NULL)
				       : srv_has_prefix(fs, p->job);
	if (ret)
		return ret < 0 ? ret : -ENOTEMPTY;
	pthread_mutex_lock(&fs->mu);
	pd = pend_find(fs, p->job);
	if (pd)
		pend_del(fs, pd);
	pthread_mutex_unlock(&fs->mu);
	return pd ? 0 : -ENOENT;
}

/*
 * rmdir inside a held version: the mirror's directory goes, and with it
 * the directory's own entry in ckptd if it has one (a version joined with
 * one: ckptfs sends its directories at the commit, vers.c).  Unlinked open
 * files once in it are not its children (tree.c, hidden).
 */
static int rmdir_in(struct ckptfs *fs, struct fs_version *ver,
		    const struct fs_path *p)
{
	struct fs_node *n;
	int ret, entry = 0;

	pthread_rwlock_wrlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	n = ret ? NULL : tree_lookup(&ver->tree, p->file);
	if (ret == 0)
		ret = !n ? -ENOENT : !n->is_dir ? -ENOTDIR :
		      n->nchild ? -ENOTEMPTY : 0;
	if (ret == 0)
		entry = n->in->dir_entry;
	if (ret == 0 && !entry) {
		tree_remove(&ver->tree, n);
		ver_touch_locked(ver);
	}
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0 && entry) {
		ret = ckpt_unlink(ver->v, p->file);
		ret = ver_failed(fs, ver, ret == -ENOENT ? 0 : ret);
		pthread_mutex_lock(&fs->mu);
		/* mkdir takes no ns lock: a child may have come meanwhile (the
		 * commit sends the directory again then). */
		if (ret == 0)
			ret = n->nchild ? -ENOTEMPTY : 0;
		if (ret == 0) {
			tree_remove(&ver->tree, n);
			ver_touch_locked(ver);
		}
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	return ret;
}

int fs_rmdir(const char *path)
{
	struct ckptfs *fs = fs_get();
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	switch (p.kind) {
	case P_ROOT:
		ret = -EBUSY;
		break;
	case P_PREFIX:
	case P_JOB:
		ret = rmdir_job(fs, &p);
		break;
	case P_VERSION:
	case P_FILE:
		ver = ver_find(fs, p.job, p.vdisp);
		if (!ver)
			ret = ver_not_held(fs, &p);
		else if (p.kind == P_VERSION)
			ret = ver_abort(fs, ver);
		else
			ret = rmdir_in(fs, ver, &p);
		ver_put(fs, ver);
		break;
	}
	return fs_errno(ret);
}

/* ---- unlink, rename ------------------------------------------------------ */

static int unlink_in(struct ckptfs *fs, struct fs_version *ver,
		     const struct fs_path *p)
{
	char path[CKPT_PATH_MAX2 + 1];
	struct fs_inval iv = { .n = 0 };
	struct fs_node *n;
	int ret;

	pthread_rwlock_wrlock(&ver->ns);
	ret = wb_flush_all(fs, &ver->wb);
	pthread_mutex_lock(&fs->mu);
	if (ret == 0)
		ret = ver_writable_locked(ver);
	n = ret ? NULL : tree_lookup(&ver->tree, p->file);
	if (ret == 0)
		ret = !n ? -ENOENT : n->is_dir ? -EISDIR : 0;
	if (ret == 0)       /* a hidden file is at the root in ckptd */
		ret = tree_path(n, path, sizeof(path));
	pthread_mutex_unlock(&fs->mu);
	if (ret >= 0) {
		ret = ckpt_unlink(ver->v, path);
		if (ret == -ENOENT)   /* never reached ckptd: nothing to do */
			ret = 0;
		ret = ver_failed(fs, ver, ret);
	}
	if (ret == 0) {
		pthread_mutex_lock(&fs->mu);
		/* Its other names (hard links) keep it, one link fewer. */
		inval_note_locked(&iv, ver, n->in, n);
		attr_changed(n->in);
		tree_remove(&ver->tree, n);
		ver_touch_locked(ver);
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	inval_send(&iv);
	return ret;
}

int fs_unlink(const char *path)
{
	struct ckptfs *fs = fs_get();
	struct fs_version *ver;
	struct fs_path p;
	int ret;

	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	if (p.kind != P_FILE)
		return -EISDIR;
	ver = ver_find(fs, p.job, p.vdisp);
	ret = ver ? unlink_in(fs, ver, &p) : ver_not_held(fs, &p);
	ver_put(fs, ver);
	return fs_errno(ret);
}

/* Check a rename inside ver and find its nodes; fs->mu held. */
static int rename_check(struct fs_version *ver, const struct fs_path *a,
			const struct fs_path *b, unsigned int flags,
			struct fs_node **src, struct fs_node **dst,
			struct fs_node **dir, const char **base)
{
	int ret = ver_writable_locked(ver);

	if (ret < 0)
		return ret;
	*src = tree_lookup(&ver->tree, a->file);
	if (!*src)
		return -ENOENT;
	ret = tree_parent(&ver->tree, b, dir, base);
	if (ret < 0)
		return ret;
	/* libfuse hides an unlinked open file: it leaves its directory */
	if (!(*src)->is_dir && tree_hidden_name(*base))
		*dir = ver->tree.hidden;
	*dst = tree_child(&ver->tree, *dir, *base);
	if (*dst && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	if ((*src)->is_dir && tree_is_below(*dir, *src))
		return -EINVAL;
	if (!*dst || (*dst)->in == (*src)->in)   /* two names of one file */
		return 0;
	if ((*dst)->is_dir && !(*src)->is_dir)
		return -EISDIR;
	if (!(*dst)->is_dir && (*src)->is_dir)
		return -ENOTDIR;
	return (*dst)->is_dir && (*dst)->nchild ? -ENOTEMPTY : 0;
}

/*
 * rename inside a held version.  Where from and to are names of one file
 * (the same name, or two hard links of it) it does nothing and succeeds, as
 * POSIX says; ckptd would agree, so it is not asked.  Replacing a name of a
 * file with other names takes only that name from it.
 */
static int rename_in(struct ckptfs *fs, struct fs_version *ver,
		     const struct fs_path *a, const struct fs_path *b,
		     unsigned int flags)
{
	char from[CKPT_PATH_MAX2 + 1], to[CKPT_PATH_MAX2 + 1];
	struct fs_inval iv = { .n = 0 };
	struct fs_node *src = NULL, *dst = NULL, *dir = NULL;
	const char *base;
	int ret, noop = 0;

	/* The marker is a command, not a file. */
	if (path_is_marker(b))
		return -EPERM;
	pthread_rwlock_wrlock(&ver->ns);
	ret = wb_flush_all(fs, &ver->wb);
	pthread_mutex_lock(&fs->mu);
	if (ret == 0)
		ret = rename_check(ver, a, b, flags, &src, &dst, &dir, &base);
	if (ret == 0)
		noop = dst && dst->in == src->in;
	/* The paths ckptd knows (a hidden file is at the root there). */
	if (ret == 0 && !noop)
		ret = tree_path(src, from, sizeof(from));
	if (ret >= 0 && !noop)
		ret = tree_child_path(dir, base, to, sizeof(to));
	ret = ret < 0 ? ret : 0;
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0 && !noop) {
		ret = ckpt_rename(ver->v, from, to);
		if (ret == -ENOENT && src->is_dir)  /* no file below it yet */
			ret = 0;
		ret = ver_failed(fs, ver, ret);
	}
	if (ret == 0 && !noop) {
		pthread_mutex_lock(&fs->mu);
		if (dst) {
			inval_note_locked(&iv, ver, dst->in, dst);
			attr_changed(dst->in);
			tree_remove(&ver->tree, dst);
		}
		ret = tree_move(&ver->tree, src, dir, base);
		attr_changed(src->in);
		inval_note_locked(&iv, ver, src->in, src);
		ver_touch_locked(ver);
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	inval_send(&iv);
	return ret;
}

/* rename of a version directory: VER.tmp to VER commits it. */
static int rename_version(struct ckptfs *fs, const struct fs_path *a,
			  const struct fs_path *b)
{
	struct fs_version *ver = ver_find(fs, a->job, a->vdisp);
	int ret;

	if (!ver)
		return ver_not_held(fs, a);
	if (ver->tmp && !strcmp(a->job, b->job) && !strcmp(b->vdisp, ver->name)) {
		ret = ver_commit(fs, ver, "rename", 1);
	} else {
		/* Not EXDEV: mv would copy into a new, uncommitted version
		 * and succeed without committing anything.  (EINVAL makes mv
		 * speak of subdirectories; EPERM says what it is.) */
		fs_log(FUSE_LOG_WARNING, "rename of %s/%s%s to %s/%s refused: a version is committed by renaming VER.tmp to VER",
		       a->job, ver->name, ver->tmp ? ".tmp" : "", b->job,
		       b->vdisp);
		ret = -EPERM;
	}
	ver_put(fs, ver);
	return ret;
}

int fs_rename(const char *from, const char *to, unsigned int flags)
{
	struct ckptfs *fs = fs_get();
	struct fs_path a, b;
	struct fs_version *ver;
	int ret;

	ret = path_parse(fs, from, &a);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	ret = path_parse(fs, to, &b);
	if (ret < 0)
		return fs_errno(ret);
	if (flags & RENAME_EXCHANGE)
		return -EINVAL;
	if (a.kind == P_VERSION && b.kind == P_VERSION)
		return fs_errno(rename_version(fs, &a, &b));
	if (a.kind != P_FILE)
		return -EXDEV;
	ver = ver_find(fs, a.job, a.vdisp);
	if (!ver)
		ret = ver_not_held(fs, &a);
	else if (b.kind != P_FILE || strcmp(a.job, b.job) ||
		 strcmp(a.vdisp, b.vdisp))
		ret = -EXDEV;
	else
		ret = rename_in(fs, ver, &a, &b, flags);
	ver_put(fs, ver);
	return fs_errno(ret);
}

/* ---- link ---------------------------------------------------------------- */

/* Check link(a, b) inside ver and find its nodes; fs->mu held. */
static int link_check(struct fs_version *ver, const struct fs_path *a,
		      const struct fs_path *b, struct fs_node **src,
		      struct fs_node **dir, const char **base)
{
	int ret = ver_writable_locked(ver);

	if (ret < 0)
		return ret;
	*src = tree_lookup(&ver->tree, a->file);
	if (!*src)
		return -ENOENT;
	if ((*src)->is_dir)
		return -EPERM;
	ret = tree_parent(&ver->tree, b, dir, base);
	if (ret < 0)
		return ret;
	return tree_child_any(&ver->tree, *dir, *base) ? -EEXIST : 0;
}

/*
 * link inside a held version: b becomes a second name of a's file in ckptd
 * (ckpt_link) and in the mirror (a second node of its inode), in order with
 * the version's writes.  A file's buffered bytes need not be sent first:
 * sent later under either name, they land in the one file.  The file's
 * ctime and the new parent's mtime and ctime are now; the kernel drops
 * what it cached of the file's other names (st_nlink grew).  A failure
 * changes nothing.
 */
static int link_in(struct ckptfs *fs, struct fs_version *ver,
		   const struct fs_path *a, const struct fs_path *b)
{
	char from[CKPT_PATH_MAX2 + 1];
	struct fs_inval iv = { .n = 0 };
	struct fs_node *src, *dir;
	const char *base;
	int ret;

	if (path_is_marker(b))      /* a command, not a file */
		return -EPERM;
	pthread_rwlock_wrlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = link_check(ver, a, b, &src, &dir, &base);
	if (ret == 0)       /* a hidden file is at the root in ckptd */
		ret = tree_path(src, from, sizeof(from));
	ret = ret < 0 ? ret : 0;
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0)
		ret = ver_failed(fs, ver, ckpt_link(ver->v, from, b->file));
	if (ret == 0) {
		pthread_mutex_lock(&fs->mu);
		inval_note_locked(&iv, ver, src->in, NULL);
		ret = tree_link(&ver->tree, dir, base, src->in, NULL);
		if (ret == 0)
			attr_changed(src->in);
		ver_touch_locked(ver);
		pthread_mutex_unlock(&fs->mu);
		/* No memory for the mirror's name: take ckptd's back. */
		if (ret < 0)
			ver_failed(fs, ver, ckpt_unlink(ver->v, b->file));
	}
	pthread_rwlock_unlock(&ver->ns);
	inval_send(&iv);
	return ret;
}

/*
 * link(2): only inside one version this mount is writing.  A directory is
 * EPERM (the kernel refuses one before asking), a link out of the version
 * (to another version or job, or above versions) EXDEV, and one in a
 * version this mount does not hold EROFS (a committed version is
 * immutable; another writer's is not ours to change).
 */
int fs_link(const char *from, const char *to)
{
	struct ckptfs *fs = fs_get();
	struct fs_version *ver;
	struct fs_path a, b;
	int ret;

	ret = path_parse(fs, from, &a);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	ret = path_parse(fs, to, &b);
	if (ret < 0)
		return fs_errno(ret);
	if (a.kind != P_FILE)
		return -EPERM;
	if (b.kind != P_FILE || strcmp(a.job, b.job) ||
	    strcmp(a.vdisp, b.vdisp))
		return -EXDEV;
	ver = ver_find(fs, a.job, a.vdisp);
	ret = ver ? link_in(fs, ver, &a, &b) : ver_not_held(fs, &a);
	ver_put(fs, ver);
	return fs_errno(ret);
}

/* ---- attributes ckpt does not store -------------------------------------- */

/*
 * Modes, owners and times are not stored (ckpt has none to store).  So that
 * cp -a, tar and rsync work, changing them succeeds and does nothing where
 * the mount could write, and is EROFS in a version it cannot; a file's time
 * is kept in the mirror while its version is written here.
 */
/*
 * chmod, chown, utimensat: a (the fields to set) on path or the open file
 * fi.  In a held version they are recorded (attr.c); in a committed one
 * EROFS; the marker takes them and changes nothing; above versions (the
 * root, jobs) they change nothing.
 */
static int attr_change(const char *path, struct fuse_file_info *fi,
		       const struct ckpt_attr *a, int chown)
{
	struct ckptfs *fs = fs_get();
	struct fs_handle *h = fs_handle(fi);
	struct fs_inval iv = { .n = 0 };
	struct fs_version *ver;
	struct fs_node *n;
	struct fs_path p;
	int ret;

	if (h && h->kind != H_NODE)
		return h->kind == H_MARKER ? 0 : -EROFS;
	if (h) {
		ver = h->ver;
		pthread_mutex_lock(&fs->mu);
		ver_get_locked(ver);
		pthread_mutex_unlock(&fs->mu);
	} else {
		if (!path)
			return -ESTALE;
		ret = path_parse(fs, path, &p);
		if (ret < 0)
			return ret == -CKPT_EBADNAME ? -ENOENT : ret;
		if (p.kind < P_VERSION)
			return 0;
		ver = ver_find(fs, p.job, p.vdisp);
		if (!ver)
			return fs_errno(path_is_marker(&p) ? 0 : ver_not_held(fs, &p));
	}
	pthread_rwlock_rdlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	n = h ? h->node : tree_lookup(&ver->tree, p.kind == P_FILE ? p.file
								    : "");
	if (ret == 0 && !n)
		ret = -ENOENT;
	if (ret == 0)
		n->nopen++;     /* pinned while ckptd is asked */
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0) {
		ret = attr_send(fs, ver, n, a);
		if (ret == 0 && chown)      /* it takes the set-id bits */
			ret = attr_kill_priv(fs, ver, n, 1);
		pthread_mutex_lock(&fs->mu);
		if (ret == 0)   /* its other names show it too */
			inval_note_locked(&iv, ver, n->in, n);
		n->nopen--;
		tree_release(n);
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	inval_send(&iv);
	ver_put(fs, ver);
	return fs_errno(ret);
}

int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE, .mode = mode & 07777 };

	return attr_change(path, fi, &a, 0);
}

int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	struct ckpt_attr a = { .uid = uid, .gid = gid };

	if (uid != (uid_t)-1)
		a.set |= CKPT_ATTR_UID;
	if (gid != (gid_t)-1)
		a.set |= CKPT_ATTR_GID;
	return attr_change(path, fi, &a, 1);
}

/* One time of utimensat: now, unchanged (0), or as given. */
static unsigned time_arg(const struct timespec *tv, unsigned bit,
			 uint64_t *ns)
{
	struct timespec t;

	if (tv && tv->tv_nsec == UTIME_OMIT)
		return 0;
	if (!tv || tv->tv_nsec == UTIME_NOW)
		clock_gettime(CLOCK_REALTIME, &t);
	else
		t = *tv;
	*ns = attr_ns(&t);
	return bit;
}

int fs_utimens(const char *path, const struct timespec tv[2],
	       struct fuse_file_info *fi)
{
	struct ckpt_attr a = { 0 };

	a.set |= time_arg(tv ? &tv[0] : NULL, CKPT_ATTR_ATIME, &a.atime_ns);
	a.set |= time_arg(tv ? &tv[1] : NULL, CKPT_ATTR_MTIME, &a.mtime_ns);
	return attr_change(path, fi, &a, 0);
}

int fs_statfs(const char *path, struct statvfs *sv)
{
	struct ckptfs *fs = fs_get();
	struct ckpt_status s;
	uint64_t free_bytes;
	int ret;

	(void)path;
	ret = srv_status(fs, &s);
	if (ret < 0)
		return fs_errno(ret);
	free_bytes = s.capacity > s.store_used ? s.capacity - s.store_used : 0;
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = sv->f_frsize = 4096;
	sv->f_blocks = s.capacity / 4096;
	sv->f_bfree = sv->f_bavail = free_bytes / 4096;
	sv->f_files = 1u << 30;
	sv->f_ffree = sv->f_favail = 1u << 30;
	sv->f_namemax = 255;
	return 0;
}
