/*
 * vers.c - the versions this mount writes: begin, commit, abort, failure,
 * and what happens to them at unmount.
 *
 * A version begun through the mount (mkdir JOB/VER or JOB/VER.tmp) is held
 * by one ckpt_version handle on the W connection until it is committed
 * (rename of VER.tmp to VER, a .commit marker, autocommit, or a commit by
 * name in ckptd that hk.c notices), aborted
 * (rmdir of the empty directory), or lost (its connection broke, or ckptd
 * failed it).  While held, the mount answers for it from its mirror
 * (tree.c); once committed it leaves the table and ckptd answers.  A failed
 * version stays visible, read-only and answering its error, until its last
 * open file is closed; then the housekeeping thread (hk.c) drops it (ckptd
 * hides failed versions).
 *
 * References: the table holds one, each open handle one, and each call in
 * progress one; the last ver_put() frees the libckpt handle (never under
 * fs->mu, since it takes the client's lock).
 *
 * At unmount nothing is committed (an uncommitted version is not a
 * checkpoint): each held version is synced to ckptd's store and left; the
 * disconnect that follows makes ckptd abort it, which is logged.
 *
 * Layer: the namespace (ns_i.h).  It calls down into the write-behind
 * (wb_i.h: each version's struct fs_wb, flushed before a commit, a
 * namespace change and the unmount) and the connections (conn_i.h).  It
 * answers those layers through the ops it gives them: ver_conn_ops (a W
 * connection lost, one in use), stored in fs->conn_ops by ckptfs.c, and
 * ver_wb_ops (a buffered file's path, a failed send), stored in each
 * version's struct fs_wb.  Whether ckptd's version is one the mount shows
 * (ver_remote(), ver_not_held()) is asked here, since only the namespace
 * knows which versions it holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_i.h"
#include "xattr.h"

void ver_display(const struct fs_version *ver, char *out)
{
	strcpy(out, ver->name);
	if (ver->tmp)
		strcat(out, FS_TMP_SUFFIX);
}

struct fs_version *ver_find(struct ckptfs *fs, const char *job,
			    const char *vdisp)
{
	char disp[CKPT_VERSION_MAX + sizeof(FS_TMP_SUFFIX)];
	struct fs_version *ver, *found = NULL;
	struct fs_link *pos;

	pthread_mutex_lock(&fs->mu);
	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		ver = fs_entry(pos, struct fs_version, link);
		ver_display(ver, disp);
		if (!strcmp(ver->job, job) && !strcmp(disp, vdisp)) {
			found = ver;
			found->refs++;
			break;
		}
	}
	pthread_mutex_unlock(&fs->mu);
	return found;
}

struct fs_version *ver_held_name_locked(struct ckptfs *fs, const char *job,
					const char *name)
{
	struct fs_version *ver;
	struct fs_link *pos;

	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		ver = fs_entry(pos, struct fs_version, link);
		if (!strcmp(ver->job, job) && !strcmp(ver->name, name))
			return ver;
	}
	return NULL;
}

int ver_remote(struct ckptfs *fs, const char *job, const char *version,
	       struct ckpt_version_info *info)
{
	int ret;

	/* Held here (begun as VER.tmp, say): the mount shows it itself. */
	pthread_mutex_lock(&fs->mu);
	ret = ver_held_name_locked(fs, job, version) ? -ENOENT : 0;
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0)
		ret = srv_stat(fs, job, version, info);
	if (ret == -CKPT_ENOVERSION || ret == -CKPT_ENOJOB)
		return -ENOENT;
	if (ret == 0 && !srv_visible(info))
		return -ENOENT;
	return ret;
}

int ver_not_held(struct ckptfs *fs, const struct fs_path *p)
{
	struct ckpt_version_info info;
	int ret = ver_remote(fs, p->job, p->vdisp, &info);

	return ret == 0 ? -EROFS : ret;
}

int ver_job_held(struct ckptfs *fs, const char *job, int prefix, uint32_t *uid)
{
	size_t n = strlen(job);
	struct fs_version *ver;
	struct fs_link *pos;

	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		ver = fs_entry(pos, struct fs_version, link);
		if (prefix ? !strncmp(ver->job, job, n) && ver->job[n] == '/'
			   : !strcmp(ver->job, job)) {
			if (uid)
				*uid = ver->uid;
			return 1;
		}
	}
	return 0;
}

void ver_get_locked(struct fs_version *ver)
{
	ver->refs++;
}

static void ver_free(struct ckptfs *fs, struct fs_version *ver)
{
	wb_destroy(&ver->wb);
	ckpt_version_free(ver->v);
	conn_put(fs, ver->conn, 0);
	tree_free(&ver->tree);
	pthread_rwlock_destroy(&ver->ns);
	free(ver);
}

void ver_put(struct ckptfs *fs, struct fs_version *ver)
{
	int last;

	if (!ver)
		return;
	pthread_mutex_lock(&fs->mu);
	last = --ver->refs == 0;
	pthread_mutex_unlock(&fs->mu);
	if (last)
		ver_free(fs, ver);
}

/* Leave the table; fs->mu held.  The table's reference is the caller's to
 * drop (with ver_put, after unlocking). */
void ver_unlink_locked(struct fs_version *ver)
{
	if (!ver->in_table)
		return;
	fs_list_del(&ver->link);
	ver->in_table = 0;
}

int ver_writable_locked(const struct fs_version *ver)
{
	switch (ver->state) {
	case V_OPEN:
		return 0;
	case V_FAILED:
		return ver->err ? ver->err : -EIO;
	default:
		return -CKPT_ESEALED;
	}
}

void ver_touch_locked(struct fs_version *ver)
{
	ver->idle_since = fs_now_sec();
}

/* Fail ver with err; fs->mu held.  The housekeeping thread drops it from
 * the table once no handle is open on it. */
void ver_fail_locked(struct fs_version *ver, int err)
{
	if (ver->state != V_OPEN && ver->state != V_COMMITTING)
		return;
	ver->state = V_FAILED;
	ver->err = err;
	fs_log(FUSE_LOG_ERR, "version %s/%s failed: %s", ver->job, ver->name,
	       ckpt_strerror(err));
}

/* ---- what the layers below ask (fs->conn_ops, struct fs_wb_ops) ---------- */

/* A W connection was lost: the versions begun on it are gone. */
static void conn_lost_locked(struct ckptfs *fs, struct fs_conn *conn)
{
	struct fs_version *ver;
	struct fs_link *pos;

	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		ver = fs_entry(pos, struct fs_version, link);
		if (ver->conn == conn)
			ver_fail_locked(ver, -ECONNRESET);
	}
}

/* Is a file of a version begun on conn open?  Then conn keeps its lease. */
static int conn_busy_locked(struct ckptfs *fs, const struct fs_conn *conn)
{
	struct fs_link *pos;

	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		struct fs_version *ver = fs_entry(pos, struct fs_version, link);

		if (ver->conn == conn && ver->nopen)
			return 1;
	}
	return 0;
}

const struct fs_conn_ops ver_conn_ops = {
	.lost_locked = conn_lost_locked,
	.busy_locked = conn_busy_locked,
};

int ver_sealed_elsewhere(struct ckptfs *fs, struct fs_version *ver)
{
	struct ckpt_version_info info;

	if (srv_stat(fs, ver->job, ver->name, &info) < 0 ||
	    !srv_committed(&info))
		return 0;
	pthread_mutex_lock(&fs->mu);
	if (ver->state == V_OPEN) {
		ver->state = V_DONE;
		inomap_add_locked(fs, ver, info.sealed_ns);
		fs_log(FUSE_LOG_INFO, "version %s/%s committed (by name, in "
		       "ckptd)", ver->job, ver->name);
	}
	if (ver->in_table && ver->state == V_DONE) {
		ver_unlink_locked(ver);
		ver->refs--;    /* the table's; the caller holds another */
	}
	pthread_mutex_unlock(&fs->mu);
	if (ver->tmp)
		alias_add(fs, ver);
	return 1;
}

int ver_failed(struct ckptfs *fs, struct fs_version *ver, int ret)
{
	int sticky;

	if (ret >= 0 || ret == -CKPT_EBADNAME || ret == -EINVAL ||
	    ret == -ENOENT)
		return ret;
	conn_check(fs, ver->conn, ret);
	/* A failure of the version itself sticks to its handle. */
	sticky = ckpt_flush(ver->v);
	/* Refused because ckptd sealed it (ckptctl commit): committed. */
	if ((ret == -CKPT_ESEALED || sticky < 0) &&
	    ver_sealed_elsewhere(fs, ver))
		return -CKPT_ESEALED;
	if (ret == -CKPT_ESEALED)
		return ret;
	pthread_mutex_lock(&fs->mu);
	if (sticky < 0 || ver->conn->dead)
		ver_fail_locked(ver, sticky < 0 ? sticky : ret);
	pthread_mutex_unlock(&fs->mu);
	return ret;
}

/* The path a buffered file is sent under: the buffer's slot is in->wb. */
static int ver_wb_path_locked(struct fs_wbuf *const *slot, char *buf,
			      size_t cap)
{
	const struct fs_inode *in = fs_entry(slot, struct fs_inode, wb);

	return tree_inode_path(in, buf, cap);
}

static int ver_wb_failed(struct ckptfs *fs, struct fs_wb *wb, int ret)
{
	return ver_failed(fs, fs_entry(wb, struct fs_version, wb), ret);
}

/* Buffered bytes were dropped unsent: a file that misses them must never
 * be committed, so the version fails. */
static void ver_wb_lost(struct ckptfs *fs, struct fs_wb *wb, int err,
			size_t len)
{
	struct fs_version *ver = fs_entry(wb, struct fs_version, wb);

	pthread_mutex_lock(&fs->mu);
	ver_fail_locked(ver, err);
	pthread_mutex_unlock(&fs->mu);
	fs_log(FUSE_LOG_ERR, "version %s/%s: %zu buffered bytes could not be sent (%s); the version fails",
	       ver->job, ver->name, len, strerror(-err));
}

static const struct fs_wb_ops ver_wb_ops = {
	.path_locked = ver_wb_path_locked,
	.failed = ver_wb_failed,
	.lost = ver_wb_lost,
};

/* Files by ino, then by their place in the listing. */
static int cmp_ino(const void *x, const void *y)
{
	const struct ckpt_file_info *a = *(const struct ckpt_file_info *const *)x;
	const struct ckpt_file_info *b = *(const struct ckpt_file_info *const *)y;

	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Fill the mirror from the listing of a version joined with files in it
 * already: names listed with one ino are hard links of one file, and share
 * one inode (0 is a ckptd before links: every name its own file).  A
 * directory's own entry gives its node the directory's attributes. */
static int mirror_files(struct fs_tree *t, struct ckpt_file_info *files,
			int n)
{
	struct ckpt_file_info **order, *f;
	struct fs_inode *in = NULL;
	struct fs_node *node;
	int i, ret = 0, linked, is_dir;

	order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		order[i] = &files[i];
	qsort(order, n, sizeof(*order), cmp_ino);
	for (i = 0; i < n && ret == 0; i++) {
		f = order[i];
		is_dir = srv_dir_entry(f);
		linked = !is_dir && i > 0 && f->ino &&
			 f->ino == order[i - 1]->ino;
		ret = tree_add_path(t, f->name, is_dir, linked ? in : NULL,
				    &node);
		if (ret == 0) {     /* the attributes it was given elsewhere */
			in = node->in;
			in->size = is_dir ? 0 : f->size;
			in->attr = f->attr;
			in->dir_entry = is_dir;
			if (is_dir)     /* as mkdir keeps them: no type */
				in->attr.mode &= 07777;
		}
	}
	free(order);
	return ret;
}

/* Fill the mirror of a version joined with files in it already. */
static int mirror_existing(struct ckptfs *fs, struct fs_version *ver)
{
	struct ckpt_file_info *files = NULL;
	int n, ret;

	n = ckpt_list_files2(ver->conn->c, ver->job, ver->name, &files,
			     sizeof(*files));
	if (n < 0)
		return n == -CKPT_ENOVERSION ? 0 : n;
	ret = n ? mirror_files(&ver->tree, files, n) : 0;
	free(files);
	return ret;
}

static struct fs_version *ver_new(struct ckptfs *fs, const char *job,
				  const char *name, int tmp, uint32_t uid)
{
	struct fs_version *ver = calloc(1, sizeof(*ver));
	pthread_rwlockattr_t attr;

	if (!ver)
		return NULL;
	if (tree_init(&ver->tree, &fs->next_ino) < 0) {
		free(ver);
		return NULL;
	}
	/* Writer-preferring: a commit or rename is not starved by writes. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&ver->ns, &attr);
	pthread_rwlockattr_destroy(&attr);
	wb_init(&ver->wb, &ver_wb_ops);
	strcpy(ver->job, job);
	strcpy(ver->name, name);
	ver->tmp = tmp;
	ver->uid = uid;
	ver->state = V_OPEN;
	ver->refs = 1;
	ver->idle_since = fs_now_sec();
	clock_gettime(CLOCK_REALTIME, &ver->born);
	return ver;
}

int ver_begin(struct ckptfs *fs, const char *job, const char *vdisp,
	      uint32_t uid)
{
	char name[CKPT_VERSION_MAX + 1];
	struct ckpt_version_info info;
	struct fs_version *ver;
	struct fs_conn *conn;
	int tmp, ret, tries = 0;

	tmp = path_tmp_stem(vdisp, name);
	if (!tmp)
		strcpy(name, vdisp);
	pthread_mutex_lock(&fs->begin_mu);
	pthread_mutex_lock(&fs->mu);
	ret = ver_held_name_locked(fs, job, name) ? -EEXIST : 0;
	pthread_mutex_unlock(&fs->mu);
	if (ret < 0)
		goto out_unlock;
	ver = ver_new(fs, job, name, tmp, uid);
	ret = -ENOMEM;
	if (!ver)
		goto out_unlock;
	/* As root, begin for the caller so that the job is theirs.  Once
	 * more on a new connection if ckptd restarted since the last call. */
	do {
		ret = conn_get(fs, CONN_W, &conn);
		if (ret < 0)
			goto out_free;
		ret = ckpt_begin2(conn->c, job, name, geteuid() == 0 ? uid :
				  CKPT_UID_SELF, fs->nodes, &ver->v);
	} while (ret < 0 && conn_again(fs, conn, ret, &tries));
	if (ret < 0)
		goto out_free;          /* conn_again() dropped conn */
	ver->conn = conn;
	ver->wb.conn = conn;
	ver->wb.v = ver->v;
	if (ckpt_stat_version(conn->c, job, name, &info) == 0)
		ver->uid = info.uid;
	ret = mirror_existing(fs, ver);
	if (ret < 0)
		goto out_abort;
	if (tmp)
		alias_drop(fs, job, name);
	pthread_mutex_lock(&fs->mu);
	inomap_drop_locked(fs, job, name);
	fs_list_add(&fs->versions, &ver->link);
	ver->in_table = 1;
	pthread_mutex_unlock(&fs->mu);
	pthread_mutex_unlock(&fs->begin_mu);
	fs_log(FUSE_LOG_INFO, "version %s/%s begun by uid %u%s", job, name,
	       uid, tmp ? " (commit by renaming " FS_TMP_SUFFIX " away)" : "");
	return 0;

out_abort:
	ckpt_abort(ver->v);
	conn_check(fs, conn, ret);
out_free:
	ver_free(fs, ver);
out_unlock:
	pthread_mutex_unlock(&fs->begin_mu);
	/* A committed version of that name exists: mkdir says so. */
	return ret == -CKPT_ESEALED ? -EEXIST : ret;
}

/* A file libfuse hid (unlinked while open) in ver, or NULL; fs->mu. */
static struct fs_node *find_hidden_locked(struct fs_version *ver)
{
	struct fs_node *n;
	size_t i;

	for (i = 0; i < ver->tree.nbuckets; i++)
		for (n = ver->tree.buckets[i]; n; n = n->hnext)
			if (!n->is_dir && !strncmp(n->name, FS_HIDDEN,
						   sizeof(FS_HIDDEN) - 1))
				return n;
	return NULL;
}

/* Unlinked files still open are not part of the checkpoint: drop them
 * before the commit (their handles then write nowhere).  ns held. */
static void purge_hidden(struct ckptfs *fs, struct fs_version *ver)
{
	char path[CKPT_PATH_MAX2 + 1];
	struct fs_node *n;
	int ret;

	for (;;) {
		pthread_mutex_lock(&fs->mu);
		n = find_hidden_locked(ver);
		ret = n ? tree_path(n, path, sizeof(path)) : 0;
		pthread_mutex_unlock(&fs->mu);
		if (!n)
			return;
		if (ret >= 0)
			ret = ckpt_unlink(ver->v, path);
		pthread_mutex_lock(&fs->mu);
		tree_remove(&ver->tree, n);
		pthread_mutex_unlock(&fs->mu);
	}
}

void ver_drop_hidden(struct ckptfs *fs, struct fs_version *ver,
		     struct fs_node *n)
{
	char path[CKPT_PATH_MAX2 + 1];
	int ret, drop;

	/* No inode goes with a write-behind buffer (tree.c). */
	pthread_rwlock_wrlock(&ver->ns);
	ret = wb_flush_all(fs, &ver->wb);
	pthread_mutex_lock(&fs->mu);
	drop = ret == 0 && ver->state == V_OPEN &&
	       tree_is_hidden(&ver->tree, n) && n->nopen == 1 &&
	       tree_path(n, path, sizeof(path)) >= 0;
	pthread_mutex_unlock(&fs->mu);
	if (drop) {
		ret = ckpt_unlink(ver->v, path);
		ver_failed(fs, ver, ret == -ENOENT ? 0 : ret);
		pthread_mutex_lock(&fs->mu);
		tree_remove(&ver->tree, n);     /* detached: n->nopen */
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
}

/* ---- directories at the commit ------------------------------------------ */

/* A directory of the mirror as it goes to ckptd (CKPT_ATTR_IFDIR entry). */
struct dir_send {
	char *path;
	struct ckpt_attr a;
	uint8_t *x;               /* its extended attributes (xattr.h blob) */
	uint32_t xlen;
};

struct dir_list {
	struct dir_send *v;
	size_t n, cap;
};

static void dir_list_free(struct dir_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].x);
	}
	free(l->v);
}

/* Note n (a directory, not the root) if ckptd needs its entry: it was
 * given attributes or extended attributes, or it is empty (nothing else
 * would make it); fs->mu held. */
static int dir_note(struct dir_list *l, const struct fs_node *n)
{
	const struct fs_inode *in = n->in;
	char path[CKPT_PATH_MAX2 + 1];
	struct dir_send *d;

	if (!in->attr.set && !in->xlen && n->nchild)
		return 0;
	if (tree_path(n, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct dir_send *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	d = &l->v[l->n];
	memset(d, 0, sizeof(*d));
	d->a = in->attr;
	d->a.mode = CKPT_ATTR_IFDIR | (in->attr.set & CKPT_ATTR_MODE ?
				       in->attr.mode & 07777 : FS_MODE_DIR);
	d->a.set |= CKPT_ATTR_MODE;
	d->a.rdev = 0;
	d->path = strdup(path);
	d->x = in->xlen ? malloc(in->xlen) : NULL;
	if (!d->path || (in->xlen && !d->x)) {
		free(d->path);
		free(d->x);
		return -ENOMEM;
	}
	if (in->xlen)
		memcpy(d->x, in->xattr, in->xlen);
	d->xlen = in->xlen;
	l->n++;
	return 0;
}

/* The directories below dir, each after those below it: ckptd keeps
 * entries in the order they came, and the drain sets a directory's times
 * in that order, so a directory made later below one would move its
 * mtime.  fs->mu held. */
static int dirs_collect(struct dir_list *l, const struct fs_node *dir)
{
	const struct fs_link *pos;
	const struct fs_node *n;
	int ret = 0;

	for (pos = dir->children.next; pos != &dir->children && ret == 0;
	     pos = pos->next) {
		n = fs_entry(pos, struct fs_node, sib);
		if (!n->is_dir)
			continue;
		ret = dirs_collect(l, n);
		if (ret == 0)
			ret = dir_note(l, n);
	}
	return ret;
}

/* Send one directory's entry: made empty, given its type and attributes,
 * then its extended attributes. */
static int dir_send_one(struct fs_version *ver, const struct dir_send *d)
{
	char names[XATTR_MAX];
	const uint8_t *val;
	long len, vlen, i;
	int ret;

	ret = ckpt_truncate(ver->v, d->path, 0);
	if (ret == 0)
		ret = ckpt_setattr(ver->v, d->path, &d->a);
	len = ret == 0 && d->xlen ? xattr_list(d->x, d->xlen, names,
					       sizeof(names)) : 0;
	if (len < 0)
		return (int)len;
	for (i = 0; i < len && ret == 0; i += (long)strlen(names + i) + 1) {
		vlen = xattr_get(d->x, d->xlen, names + i, &val);
		ret = vlen < 0 ? (int)vlen :
		      ckpt_setxattr(ver->v, d->path, names + i, val,
				    (size_t)vlen);
	}
	return ret;
}

/*
 * Give ckptd the version's directories before the commit: an entry of
 * type CKPT_ATTR_IFDIR (no bytes) for each one with attributes or none
 * below it, so that empty directories and their modes, owners, times and
 * extended attributes are in the committed version, its drain and its
 * restore (docs/design.md).  Sent only now, when the mirror holds what
 * they became: no rmdir or rename has to follow them in ckptd.  ns held
 * for writing, the version V_COMMITTING (no mkdir or chmod meanwhile).
 */
static int send_dirs(struct ckptfs *fs, struct fs_version *ver)
{
	struct dir_list l = { .n = 0 };
	size_t i;
	int ret;

	pthread_mutex_lock(&fs->mu);
	ret = dirs_collect(&l, ver->tree.root);
	pthread_mutex_unlock(&fs->mu);
	for (i = 0; i < l.n && ret == 0; i++)
		ret = dir_send_one(ver, &l.v[i]);
	if (ret < 0)
		fs_log(FUSE_LOG_ERR, "version %s/%s: directory %s not sent: %s",
		       ver->job, ver->name, i ? l.v[i - 1].path : "",
		       ckpt_strerror(ret));
	dir_list_free(&l);
	return ret;
}

/* The kernel sends RELEASE after close() returns: a program that closes a
 * file and then commits may be ahead of it.  Wait a little (2 s) for the
 * files of ver open for writing to be released; fs->mu held.  Returns how
 * many are still open. */
static unsigned wait_closed_locked(struct ckptfs *fs, struct fs_version *ver)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 2;
	while (ver->nwopen &&
	       pthread_cond_timedwait(&fs->closed_cv, &fs->mu, &until) == 0)
		;
	return ver->nwopen;
}

int inode_cut_short_locked(const struct fs_inode *in)
{
	const uint8_t *val;

	return in->xlen &&
	       xattr_get(in->xattr, in->xlen, CKPT_XATTR_FAILED, &val) >= 0;
}

/* The first name of a file below dir marked cut short (its writer died
 * with it open: io.c), or NULL; an unlinked file still open (hidden) is
 * not one.  fs->mu held. */
static const struct fs_node *cut_short_below(const struct fs_tree *t,
					     const struct fs_node *dir)
{
	const struct fs_link *pos;
	const struct fs_node *n, *cut;

	for (pos = dir->children.next; pos != &dir->children;
	     pos = pos->next) {
		n = fs_entry(pos, struct fs_node, sib);
		cut = n->is_dir ? cut_short_below(t, n) :
		      inode_cut_short_locked(n->in) &&
		      !tree_is_hidden(t, n) ? n : NULL;
		if (cut)
			return cut;
	}
	return NULL;
}

int ver_cut_short_locked(const struct fs_version *ver, char *path,
			 size_t cap)
{
	const struct fs_node *n = cut_short_below(&ver->tree, ver->tree.root);

	if (!n)
		return 0;
	if (path && tree_node_path(n, path, cap) < 0)
		snprintf(path, cap, "%s", n->name);
	return 1;
}

int ver_commit(struct ckptfs *fs, struct fs_version *ver, const char *why,
	       int renamed)
{
	struct ckpt_version_info info;
	char cut[CKPT_PATH_MAX2 + 1];
	int ret;
	unsigned nw;

	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	nw = ret == 0 ? wait_closed_locked(fs, ver) : 0;
	if (ret == 0 && nw)
		ret = -EBUSY;   /* a file may still grow: never seal it short */
	if (ret == 0 && ver_cut_short_locked(ver, cut, sizeof(cut)))
		ret = -CKPT_ECUTSHORT;
	if (ret == 0)
		ver->state = V_COMMITTING;
	pthread_mutex_unlock(&fs->mu);
	if (ret == -EBUSY)
		fs_log(FUSE_LOG_WARNING, "version %s/%s: commit (%s) refused: %u file(s) still open for writing",
		       ver->job, ver->name, why, nw);
	if (ret == -CKPT_ECUTSHORT)
		fs_log(FUSE_LOG_ERR, "version %s/%s: commit (%s) refused: file %s may be cut short (its writer died with it open); remove it or rewrite it from offset 0",
		       ver->job, ver->name, why, cut);
	if (ret < 0)
		return ret;
	/* Writes in flight finish first; later ones see V_COMMITTING. */
	pthread_rwlock_wrlock(&ver->ns);
	ret = wb_flush_all(fs, &ver->wb);
	purge_hidden(fs, ver);
	if (ret == 0)
		ret = send_dirs(fs, ver);
	if (ret == 0)
		ret = ckpt_commit(ver->v);
	else
		ckpt_abort(ver->v);
	pthread_rwlock_unlock(&ver->ns);
	if (ret == -CKPT_ECUTSHORT) {
		/* ckptd knows of a file cut short that the mirror does not
		 * (marked through the C API): refused, nothing ended.  The
		 * idle clock starts again, so that autocommit asks next after
		 * another idle period, not at once. */
		pthread_mutex_lock(&fs->mu);
		ver->state = V_OPEN;
		ver_touch_locked(ver);
		pthread_mutex_unlock(&fs->mu);
		fs_log(FUSE_LOG_ERR, "version %s/%s: commit (%s) refused by ckptd: %s",
		       ver->job, ver->name, why, ckpt_strerror(ret));
		return ret;
	}
	conn_check(fs, ver->conn, ret);
	/* Its files keep the numbers they had (inomap.c). */
	if (ret == 0 && ckpt_stat_version(ver->conn->c, ver->job, ver->name,
					  &info) < 0)
		info.sealed_ns = 0;
	pthread_mutex_lock(&fs->mu);
	if (ret == 0) {
		ver->state = V_DONE;
		inomap_add_locked(fs, ver, info.sealed_ns);
	} else {
		ver->state = V_FAILED;
		ver->err = ret;
	}
	if (ver->in_table) {
		ver_unlink_locked(ver);
		ver->refs--;    /* the table's; the caller holds another */
	}
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0 && ver->tmp && !renamed)
		alias_add(fs, ver);
	if (ret == 0)
		fs_log(FUSE_LOG_INFO, "version %s/%s committed (%s)", ver->job,
		       ver->name, why);
	else
		fs_log(FUSE_LOG_ERR, "version %s/%s: commit (%s) failed: %s",
		       ver->job, ver->name, why, ckpt_strerror(ret));
	return ret;
}

int ver_abort(struct ckptfs *fs, struct fs_version *ver)
{
	int ret;

	pthread_mutex_lock(&fs->mu);
	ret = ver->tree.root->nchild ? -ENOTEMPTY : ver->nopen ? -EBUSY : 0;
	if (ret == 0 && ver->state == V_OPEN)
		ver->state = V_COMMITTING;   /* nothing else may start */
	else if (ret == 0 && ver->state != V_FAILED)
		ret = -CKPT_ESEALED;
	pthread_mutex_unlock(&fs->mu);
	if (ret < 0)
		return ret;
	pthread_rwlock_wrlock(&ver->ns);
	wb_free_all(&ver->wb);
	ret = ckpt_abort(ver->v);
	pthread_rwlock_unlock(&ver->ns);
	conn_check(fs, ver->conn, ret);
	pthread_mutex_lock(&fs->mu);
	ver->state = V_FAILED;
	ver->err = -CKPT_EABORTED;
	if (ver->in_table) {
		ver_unlink_locked(ver);
		ver->refs--;
	}
	pthread_mutex_unlock(&fs->mu);
	fs_log(FUSE_LOG_INFO, "version %s/%s aborted (rmdir)", ver->job,
	       ver->name);
	return 0;
}

/* ---- unmount ------------------------------------------------------------- */

void ver_release_all(struct ckptfs *fs)
{
	struct fs_version *ver;
	int ret;

	for (;;) {
		pthread_mutex_lock(&fs->mu);
		ver = NULL;
		if (fs->versions.next != &fs->versions) {
			ver = fs_entry(fs->versions.next, struct fs_version,
				       link);
			ver_unlink_locked(ver);   /* the table's ref is ours */
		}
		pthread_mutex_unlock(&fs->mu);
		if (!ver)
			break;
		if (ver->state == V_OPEN) {
			ret = wb_flush_all(fs, &ver->wb);
			if (ret == 0)
				ret = fs->fsync_staged ? ckpt_flush(ver->v)
						       : ckpt_sync(ver->v);
			fs_log(FUSE_LOG_WARNING, "unmount: version %s/%s was "
			       "not committed: %s; ckptd aborts it when ckptfs "
			       "disconnects", ver->job, ver->name,
			       ret < 0 ? ckpt_strerror(ret)
				       : "its bytes were flushed to ckptd");
		}
		ver_put(fs, ver);
	}
}
