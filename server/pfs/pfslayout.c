/*
 * pfslayout.c - the PFS layout (see pfslayout.h): the one function that
 * names a place on the PFS, and the careful opens, mkdirs and ownership
 * changes that everything under the target goes through.
 *
 * Owners may rename, remove or replace anything in their own trees on the
 * PFS, and ckptd, usually root, writes into those trees.  So no path below
 * the target is ever handed to the kernel whole: pfs_open() walks it one
 * level at a time with O_NOFOLLOW, a symbolic link anywhere fails the
 * operation, and renames and unlinks work on a directory fd and a last
 * component.  A directory that already exists is used only if it is owned by
 * the uid it would have been made for.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "pfslayout.h"
#include "sys.h"

/* A job component or a version, suffixed, must still fit one level. */
_Static_assert(CKPT_JOB_MAX + PFS_SFX_LEN <= NAME_MAX, "job level too long");
_Static_assert(CKPT_VERSION_MAX + PFS_SFX_LEN <= NAME_MAX,
	       "version level too long");

/* ---- names ----------------------------------------------------------------- */

/* Append the job's levels ("a.dir/b.job") to buf at *n. */
static int put_job(char *buf, size_t cap, size_t *n, const char *job)
{
	const char *p = job, *slash;
	int w;

	for (;;) {
		slash = strchr(p, '/');
		if (!slash)
			break;
		w = snprintf(buf + *n, cap - *n, "%.*s" PFS_SFX_DIR "/",
			     (int)(slash - p), p);
		if (w < 0 || (size_t)w >= cap - *n)
			return -ENAMETOOLONG;
		*n += w;
		p = slash + 1;
	}
	w = snprintf(buf + *n, cap - *n, "%s" PFS_SFX_JOB, p);
	if (w < 0 || (size_t)w >= cap - *n)
		return -ENAMETOOLONG;
	*n += w;
	return 0;
}

/* A node name goes into one level of the version's directory as it is. */
static int node_name_ok(const char *s)
{
	return *s && !strchr(s, '/') && strlen(s) < NAME_MAX - 8;
}

int pfs_path(char *buf, size_t cap, enum pfs_node node, const char *job,
	     const char *version, const char *path, uint32_t idx)
{
	size_t n = 0;
	int w, ret;

	if (!cap)
		return -ENAMETOOLONG;
	ret = put_job(buf, cap, &n, job);
	if (ret < 0 || node == PFS_N_JOB)
		return ret;
	switch (node) {
	case PFS_N_VERSION:
		w = snprintf(buf + n, cap - n, "/%s" PFS_SFX_VER, version);
		break;
	case PFS_N_MANIFEST:
		w = snprintf(buf + n, cap - n, "/%s" PFS_SFX_VER "/" PFS_MANIFEST,
			     version);
		break;
	case PFS_N_MANIFEST_TMP:
		w = snprintf(buf + n, cap - n,
			     "/%s" PFS_SFX_VER "/" PFS_MANIFEST ".tmp", version);
		break;
	case PFS_N_FILE:
		w = snprintf(buf + n, cap - n, "/%s" PFS_SFX_VER "/" PFS_FILES "/%s",
			     version, path);
		break;
	case PFS_N_FILE_TMP:
		w = snprintf(buf + n, cap - n, "/%s" PFS_SFX_VER "/" PFS_TMP "%u",
			     version, idx);
		break;
	case PFS_N_PART_FILE_TMP:
		if (!path || !node_name_ok(path))
			return -EINVAL;
		w = snprintf(buf + n, cap - n,
			     "/%s" PFS_SFX_VER "/" PFS_TMP "%s.%u", version,
			     path, idx);
		break;
	case PFS_N_PART:
	case PFS_N_PART_TMP:
	case PFS_N_NAMES:
	case PFS_N_NAMES_TMP:
		if (!path || !node_name_ok(path))
			return -EINVAL;
		w = snprintf(buf + n, cap - n, "/%s" PFS_SFX_VER "/%s%s",
			     version, node == PFS_N_PART ? PFS_PART
				      : node == PFS_N_PART_TMP ? PFS_PART_TMP
				      : node == PFS_N_NAMES ? PFS_NAMES
				      : PFS_NAMES_TMP, path);
		break;
	default:
		return -EINVAL;
	}
	return w < 0 || (size_t)w >= cap - n ? -ENAMETOOLONG : 0;
}

unsigned pfs_shared_levels(const char *job)
{
	unsigned n = 0;

	for (; *job; job++)
		n += *job == '/';
	return n;
}

enum pfs_level pfs_level(const char *name, size_t *stem)
{
	static const struct {
		const char *sfx;
		enum pfs_level level;
	} levels[] = {
		{ PFS_SFX_DIR, PFS_L_DIR },
		{ PFS_SFX_JOB, PFS_L_JOB },
		{ PFS_SFX_VER, PFS_L_VER },
	};
	size_t len = strlen(name), i;

	*stem = 0;
	if (len <= PFS_SFX_LEN)
		return PFS_L_OTHER;
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (!strcmp(name + len - PFS_SFX_LEN, levels[i].sfx)) {
			*stem = len - PFS_SFX_LEN;
			return levels[i].level;
		}
	}
	return PFS_L_OTHER;
}

enum pfs_ventry pfs_ventry(const char *name, const char **node)
{
	static const size_t plen = sizeof(PFS_PART) - 1;
	static const size_t nlen = sizeof(PFS_NAMES) - 1;

	*node = NULL;
	if (!strncmp(name, PFS_PART, plen) && name[plen]) {
		*node = name + plen;
		return PFS_V_PART;
	}
	if (!strncmp(name, PFS_NAMES, nlen) && name[nlen]) {
		*node = name + nlen;
		return PFS_V_NAMES;
	}
	if (!strcmp(name, PFS_MANIFEST ".tmp") ||
	    (!strncmp(name, PFS_PART_TMP, sizeof(PFS_PART_TMP) - 1) &&
	     name[sizeof(PFS_PART_TMP) - 1]) ||
	    (!strncmp(name, PFS_NAMES_TMP, sizeof(PFS_NAMES_TMP) - 1) &&
	     name[sizeof(PFS_NAMES_TMP) - 1]) ||
	    (!strncmp(name, PFS_TMP, sizeof(PFS_TMP) - 1) &&
	     name[sizeof(PFS_TMP) - 1]))
		return PFS_V_TEMP;
	return PFS_V_OTHER;
}

/* ---- owners -------------------------------------------------------------- */

uid_t pfs_owner_uid(uint32_t uid)
{
	return geteuid() == 0 ? (uid_t)uid : geteuid();
}

int pfs_owner_of(uint32_t uid, struct pfs_owner *o)
{
	struct passwd pw, *res = NULL;
	size_t cap = 4096;
	char *buf = NULL;
	int ret;

	if (geteuid() != 0) {
		o->uid = geteuid();
		o->gid = getegid();
		return 0;
	}
	o->uid = uid;
	o->gid = uid;
	for (;;) {
		free(buf);
		buf = malloc(cap);
		if (!buf)
			return -ENOMEM;
		ret = getpwuid_r(uid, &pw, buf, cap, &res);
		if (ret != ERANGE || cap >= (1u << 20))
			break;
		cap *= 4;
	}
	/* No entry (or no answer): the uid's own gid, never root's group. */
	if (ret == 0 && res)
		o->gid = pw.pw_gid;
	free(buf);
	return 0;
}

int pfs_own(int fd, const struct pfs_owner *o, mode_t mode)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((st.st_uid != o->uid || st.st_gid != o->gid) &&
	    fchown(fd, o->uid, o->gid) < 0)
		return -errno;
	return fchmod(fd, mode) < 0 ? -errno : 0;
}

/* ---- opens --------------------------------------------------------------- */

int pfs_target_open(const char *target)
{
	int fd;

	fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* openat one level, never following a link. */
static int open_level(int dfd, const char *name, int flags, mode_t mode)
{
	int fd;

	do {
		fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	} while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/* Walk rel's directories from tfd; the last component is left in *last
 * (pointing into buf, a copy of rel).  Returns a directory fd (tfd itself,
 * not to be closed, when rel has one level) or -errno. */
static int walk(int tfd, const char *rel, char *buf, size_t cap,
		const char **last)
{
	char *p, *slash;
	int dfd = tfd, fd;

	if (snprintf(buf, cap, "%s", rel) >= (int)cap)
		return -ENAMETOOLONG;
	for (p = buf; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = 0;
		fd = open_level(dfd, p, O_RDONLY | O_DIRECTORY, 0);
		if (dfd != tfd)
			close(dfd);
		if (fd < 0)
			return fd;
		dfd = fd;
	}
	*last = p;
	return dfd;
}

int pfs_open(int tfd, const char *rel, int flags, mode_t mode)
{
	char buf[PFS_REL_MAX];
	const char *last;
	int ret = sys_inject(SYS_OPEN);
	int dfd, fd;

	if (ret < 0)
		return ret;
	dfd = walk(tfd, rel, buf, sizeof(buf), &last);
	if (dfd < 0)
		return dfd;
	fd = open_level(dfd, last, flags, mode);
	if (dfd != tfd)
		close(dfd);
	return fd;
}

int pfs_open_regular(int tfd, const char *rel, struct stat *st)
{
	struct stat own;
	int fd = pfs_open(tfd, rel, O_RDONLY | O_NONBLOCK, 0);

	if (fd < 0)
		return fd;
	if (!st)
		st = &own;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;             /* O_NONBLOCK means nothing to a regular file */
}

int pfs_open_parent(int tfd, const char *rel, const char **name)
{
	char buf[PFS_REL_MAX];
	const char *last;
	int dfd;

	dfd = walk(tfd, rel, buf, sizeof(buf), &last);
	if (dfd < 0)
		return dfd;
	*name = rel + (last - buf);
	if (dfd == tfd) {
		dfd = dup(tfd);
		if (dfd < 0)
			return -errno;
	}
	return dfd;
}

/* ---- directories ----------------------------------------------------------- */

/*
 * Making a level and handing it over are two steps; a second drain thread
 * must not find the level in between (ckptd's, not yet the owner's) and take
 * it for another uid's.  So levels are made under this lock, and a level
 * found missing or not the owner's is looked at again under it.  (Another
 * node's ckptd can still meet such a level: it then fails with EACCES and
 * its drain retries.)
 */
static pthread_mutex_t mkdir_lock = PTHREAD_MUTEX_INITIALIZER;

/* Open level name of dfd if it is o->uid's (-EACCES if not); if missing
 * and make, make it first (mode, handed to o). */
static int level_get(int dfd, const char *name, mode_t mode,
		     const struct pfs_owner *o, int make)
{
	struct stat st;
	int fd, made = 0, ret;

	fd = open_level(dfd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -ENOENT && make) {
		/* 0700 until it is handed over: private from the start. */
		if (mkdirat(dfd, name, 0700) == 0)
			made = 1;
		else if (errno != EEXIST)
			return -errno;
		fd = open_level(dfd, name, O_RDONLY | O_DIRECTORY, 0);
	}
	if (fd < 0)
		return fd;
	if (made)
		ret = pfs_own(fd, o, mode);
	else
		ret = fstat(fd, &st) < 0 ? -errno :
		      st.st_uid != o->uid ? -EACCES : 0;
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

static int mkdir_level(int dfd, const char *name, mode_t mode,
		       const struct pfs_owner *o)
{
	int fd = level_get(dfd, name, mode, o, 0);

	if (fd != -ENOENT && fd != -EACCES)
		return fd;
	pthread_mutex_lock(&mkdir_lock);
	fd = level_get(dfd, name, mode, o, 1);
	pthread_mutex_unlock(&mkdir_lock);
	return fd;
}

int pfs_mkdirs(int tfd, const char *rel, unsigned shared,
	       const struct pfs_owner *o)
{
	struct pfs_owner ckptd = { geteuid(), getegid() };
	char buf[PFS_REL_MAX], *p, *slash;
	unsigned level = 0;
	int dfd = tfd, fd;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf; p; p = slash ? slash + 1 : NULL, level++) {
		slash = strchr(p, '/');
		if (slash)
			*slash = 0;
		fd = level < shared ? mkdir_level(dfd, p, 0711, &ckptd)
				    : mkdir_level(dfd, p, 0700, o);
		if (dfd != tfd)
			close(dfd);
		if (fd < 0)
			return fd;
		dfd = fd;
	}
	if (dfd != tfd)
		close(dfd);
	return 0;
}

/* ---- files: made, renamed, removed ------------------------------------------ */

int pfs_unlink(int tfd, const char *rel, int flags)
{
	const char *name;
	int dfd, ret;

	dfd = pfs_open_parent(tfd, rel, &name);
	if (dfd < 0)
		return dfd;
	ret = unlinkat(dfd, name, flags) < 0 ? -errno : 0;
	close(dfd);
	return ret;
}

/* Rename from to to (link: make to a hard link of from), then fsync to's
 * directory unless nosync. */
static int rename_or_link(int tfd, const char *from, const char *to, int link,
			  int nosync)
{
	const char *fname, *tname;
	int fdir, tdir, ret;

	fdir = pfs_open_parent(tfd, from, &fname);
	if (fdir < 0)
		return fdir;
	tdir = pfs_open_parent(tfd, to, &tname);
	/* PFS links and renames are made on workers only, which may sleep
	 * out a delay rule (t_hardlink kills ckptd in one; t_cluster_samepath
	 * holds a publisher in one). */
	ret = tdir < 0 ? tdir : sys_inject_wait(link ? SYS_LINK : SYS_RENAME);
	if (ret == 0 && (link ? linkat(fdir, fname, tdir, tname, 0)
			      : renameat(fdir, fname, tdir, tname)) < 0)
		ret = -errno;
	if (ret == 0 && !nosync)
		ret = sys_fsync(tdir);
	if (tdir >= 0)
		close(tdir);
	close(fdir);
	return ret;
}

int pfs_rename(int tfd, const char *from, const char *to)
{
	return rename_or_link(tfd, from, to, 0, 0);
}

int pfs_rename_nosync(int tfd, const char *from, const char *to)
{
	return rename_or_link(tfd, from, to, 0, 1);
}

int pfs_fsync_parent(int tfd, const char *rel)
{
	const char *name;
	int dfd, ret;

	dfd = pfs_open_parent(tfd, rel, &name);
	if (dfd < 0)
		return dfd;
	ret = sys_fsync(dfd);
	close(dfd);
	return ret;
}

int pfs_link(int tfd, const char *from, const char *to)
{
	return rename_or_link(tfd, from, to, 1, 0);
}

int pfs_mkdirs_above(int tfd, const char *rel, const char *job,
		     const struct pfs_owner *o)
{
	char dir[PFS_REL_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", rel) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = 0;
	return pfs_mkdirs(tfd, dir, pfs_shared_levels(job), o);
}

int pfs_create(int tfd, const char *rel, const struct pfs_owner *o)
{
	int fd, ret;

	pfs_unlink(tfd, rel, 0);
	fd = pfs_open(tfd, rel, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fd;
	ret = pfs_own(fd, o, 0600);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}
