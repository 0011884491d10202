/*
 * dir.c - directory listings.
 *
 * ckptd knows jobs (full names), versions of a job, and the flat list of
 * file paths of a version; the directories of the mount are derived from
 * those on every call: the root lists the first component of every job of
 * exactly `jobdepth` components, a job lists its versions (failed and
 * incomplete ones hidden), and a directory inside a version lists the next
 * component of every file path below it.  Nothing is cached.  To that the
 * mount adds what only it knows: job directories made with mkdir that have
 * no version yet, and the versions it is writing, listed from their mirror
 * under the name they are shown by ("VER.tmp").
 *
 * Layer: the operations (ops_i.h): FUSE's opendir, readdir and
 * releasedir.  It calls down into the namespace (the held versions, their
 * mirrors, pending jobs) and the connections (srv_*() for what ckptd holds);
 * io.c uses dir_path().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops_i.h"

/* ---- a set of names ------------------------------------------------------ */

struct names {
	char **v;
	size_t n, cap;
	int err;
};

/* Add the component of s that starts at s and ends at '/' or NUL. */
static void names_add(struct names *ns, const char *s)
{
	size_t len = strchrnul(s, '/') - s;
	char **grown, *copy;

	if (ns->err)
		return;
	if (ns->n == ns->cap) {
		grown = realloc(ns->v, (ns->cap ? ns->cap * 2 : 64) *
				sizeof(*grown));
		if (!grown) {
			ns->err = -ENOMEM;
			return;
		}
		ns->v = grown;
		ns->cap = ns->cap ? ns->cap * 2 : 64;
	}
	copy = strndup(s, len);
	if (!copy) {
		ns->err = -ENOMEM;
		return;
	}
	ns->v[ns->n++] = copy;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fill the sorted, unique names into the readdir buffer. */
static void names_fill(struct names *ns, void *buf, fuse_fill_dir_t fill)
{
	size_t i;

	if (ns->n)
		qsort(ns->v, ns->n, sizeof(*ns->v), cmp_str);
	for (i = 0; i < ns->n; i++)
		if (i == 0 || strcmp(ns->v[i], ns->v[i - 1]))
			fill(buf, ns->v[i], NULL, 0, 0);
}

static void names_free(struct names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

/* ---- listings ------------------------------------------------------------ */

/* The part of job below prefix (depth components in), or NULL. */
static const char *job_part(const char *job, const char *prefix,
			    unsigned depth)
{
	if (!depth)
		return job;
	return srv_below(job, prefix) ? job + strlen(prefix) + 1 : NULL;
}

/* May the caller see job (owned by uid) listed?  Root sees every job; any
 * other uid its own only, as ckptd's LIST_JOBS shows a uid (ckptfs asks
 * as root). */
static int job_listed(uint32_t caller, uint32_t uid)
{
	return caller == 0 || caller == uid;
}

/* Root or a leading part of job names: the next component of each job the
 * caller may see (job_listed()). */
static int list_jobs(struct ckptfs *fs, const struct fs_path *p,
		     struct names *ns)
{
	uint32_t caller = fuse_get_context()->uid, uid;
	char (*jobs)[CKPT_JOB_MAX + 1] = NULL;
	struct fs_link *pos;
	const char *s;
	int i, n, ret = 0, mine = 0, seen = 0;

	n = srv_jobs(fs, &jobs);
	if (n < 0)
		return n;
	for (i = 0; i < n && ret >= 0; i++) {
		s = job_part(jobs[i], p->job, p->depth);
		if (!s || !srv_shown_job(fs, jobs[i]))
			continue;
		seen = 1;       /* the prefix exists, listed or not */
		uid = 0;
		ret = caller ? srv_job(fs, jobs[i], &uid) : 1;
		if (ret > 0 && job_listed(caller, uid))
			names_add(ns, s);
	}
	free(jobs);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&fs->mu);
	for (pos = fs->pending.next; pos != &fs->pending; pos = pos->next) {
		struct fs_pending *pd = fs_entry(pos, struct fs_pending, link);

		mine |= p->depth && !strcmp(pd->path, p->job);
		s = job_part(pd->path, p->job, p->depth);
		seen |= s != NULL;
		if (s && job_listed(caller, pd->uid))
			names_add(ns, s);
	}
	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		struct fs_version *v = fs_entry(pos, struct fs_version, link);

		s = job_part(v->job, p->job, p->depth);
		seen |= s != NULL;
		if (s && job_listed(caller, v->uid))
			names_add(ns, s);
	}
	pthread_mutex_unlock(&fs->mu);
	return p->kind == P_PREFIX && !mine && !seen ? -ENOENT : 0;
}

/* A job: its versions, those being written here under their shown name. */
static int list_versions(struct ckptfs *fs, const struct fs_path *p,
			 struct names *ns)
{
	char disp[CKPT_VERSION_MAX + sizeof(FS_TMP_SUFFIX)];
	struct ckpt_version_info *vers = NULL;
	struct fs_link *pos;
	int i, n, known;

	n = srv_versions(fs, p->job, &vers);
	if (n < 0 && n != -CKPT_ENOJOB)
		return n;
	known = n >= 0;
	pthread_mutex_lock(&fs->mu);
	for (i = 0; i < n; i++) {
		if (!srv_visible(&vers[i]))
			continue;
		for (pos = fs->versions.next; pos != &fs->versions;
		     pos = pos->next) {
			struct fs_version *v = fs_entry(pos, struct fs_version,
							link);

			if (!strcmp(v->job, p->job) &&
			    !strcmp(v->name, vers[i].version))
				break;
		}
		if (pos == &fs->versions)
			names_add(ns, vers[i].version);
	}
	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		struct fs_version *v = fs_entry(pos, struct fs_version, link);

		if (strcmp(v->job, p->job))
			continue;
		ver_display(v, disp);
		names_add(ns, disp);
		known = 1;
	}
	known |= pend_find(fs, p->job) != NULL;
	pthread_mutex_unlock(&fs->mu);
	free(vers);
	return known ? 0 : -ENOENT;
}

/* A directory of a version being written here: from its mirror. */
static int list_mirror(struct ckptfs *fs, struct fs_version *ver,
		       const struct fs_path *p, struct names *ns)
{
	struct fs_node *dir, *n;
	struct fs_link *pos;
	int ret = 0;

	pthread_mutex_lock(&fs->mu);
	dir = tree_lookup(&ver->tree, p->kind == P_FILE ? p->file : "");
	if (!dir)
		ret = -ENOENT;
	else if (!dir->is_dir)
		ret = -ENOTDIR;
	for (pos = ret ? NULL : dir->children.next;
	     pos && pos != &dir->children; pos = pos->next) {
		n = fs_entry(pos, struct fs_node, sib);
		if (strncmp(n->name, FS_HIDDEN, sizeof(FS_HIDDEN) - 1))
			names_add(ns, n->name);
	}
	pthread_mutex_unlock(&fs->mu);
	return ret;
}

/* A directory of any other version: the next component of its paths. */
static int list_files(struct ckptfs *fs, const struct fs_path *p,
		      struct names *ns)
{
	struct ckpt_version_info info;
	struct ckpt_file_info *files = NULL;
	int i, n, isfile = 0, isdir = 0;

	n = ver_remote(fs, p->job, p->vdisp, &info);
	if (n == 0)
		n = srv_files(fs, p->job, p->vdisp, &files);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (p->kind == P_VERSION)
			names_add(ns, files[i].name);
		else if (srv_below(files[i].name, p->file))
			names_add(ns, files[i].name + strlen(p->file) + 1);
		else if (!strcmp(files[i].name, p->file) &&
			 srv_dir_entry(&files[i]))
			isdir = 1;
		else if (!strcmp(files[i].name, p->file))
			isfile = 1;
	}
	free(files);
	/* An empty directory is listed by its own entry only. */
	if (p->kind == P_FILE && ns->n == 0 && !isdir)
		return isfile ? -ENOTDIR : -ENOENT;
	return 0;
}

/* With nullpath_ok, readdir and fsyncdir get no path: opendir keeps it. */
int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	fi->fh = (uintptr_t)copy;
	return 0;
}

int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	free((char *)(uintptr_t)fi->fh);
	return 0;
}

const char *dir_path(const char *path, const struct fuse_file_info *fi)
{
	return path ? path : fi ? (const char *)(uintptr_t)fi->fh : NULL;
}

int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
	       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct ckptfs *fs = fs_get();
	struct names ns = { .v = NULL };
	struct fs_version *ver = NULL;
	struct fs_path p;
	int ret;

	(void)off;
	(void)flags;
	path = dir_path(path, fi);
	if (!path)
		return -ESTALE;
	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	switch (p.kind) {
	case P_ROOT:
	case P_PREFIX:
		ret = list_jobs(fs, &p, &ns);
		break;
	case P_JOB:
		ret = list_versions(fs, &p, &ns);
		break;
	case P_VERSION:
	case P_FILE:
		ver = ver_find(fs, p.job, p.vdisp);
		ret = ver ? list_mirror(fs, ver, &p, &ns)
			  : list_files(fs, &p, &ns);
		ver_put(fs, ver);
		break;
	}
	if (ret == 0)
		ret = ns.err;
	if (ret == 0) {
		fill(buf, ".", NULL, 0, 0);
		fill(buf, "..", NULL, 0, 0);
		names_fill(&ns, buf, fill);
	}
	names_free(&ns);
	return fs_errno(ret);
}
