/*
 * pfsmark.c - the drain target's mark (see pfsmark.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ckpt.h"
#include "codec.h"
#include "crc32c.h"
#include "log.h"
#include "pfsmark.h"
#include "sys.h"

#define MARK_PREFIX "ckpt-target 1 "

/* Why a check failed, for the log. */
enum why {
	WHY_NONE,
	WHY_ABSENT,         /* no mark, one recorded */
	WHY_OTHER,          /* another mark than the recorded one */
	WHY_FOREIGN,        /* a mark ckptd did not write */
	WHY_EMPTY,          /* no record, no mark, empty, versions drained */
	WHY_MISSING,        /* no target at all */
	WHY_OPEN,           /* writable by others than ckptd */
	WHY_UNMOUNTED,      /* [drain] mount is not a mount point */
};

/* The length of path without its trailing slashes (but "/" itself). */
static size_t path_len(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

/* s of PFSMARK_ID_LEN lowercase hex digits? */
static int id_valid(const char *s, size_t len)
{
	size_t i;

	if (len != PFSMARK_ID_LEN)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The mark in the target open as tfd, into id.  0; -ENOENT if there is
 * none; -EINVAL if what is there is not a mark ckptd wrote: not a regular
 * file (a link is not followed), owned by neither this uid nor the
 * target's owner, or not in the mark's form. */
static int mark_read(int tfd, char id[PFSMARK_ID_LEN + 1])
{
	char buf[64];
	struct stat st, tst;
	ssize_t n;
	int fd, ret;

	fd = openat(tfd, PFSMARK_NAME,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	ret = -errno;
	if (fstat(fd, &st) < 0 || fstat(tfd, &tst) < 0)
		goto out_close;
	ret = -EINVAL;
	if (!S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != tst.st_uid))
		goto out_close;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0) {
		ret = -errno;
		goto out_close;
	}
	buf[n] = 0;
	if ((size_t)n != strlen(MARK_PREFIX) + PFSMARK_ID_LEN + 1 ||
	    strncmp(buf, MARK_PREFIX, strlen(MARK_PREFIX)) ||
	    !id_valid(buf + strlen(MARK_PREFIX), PFSMARK_ID_LEN) ||
	    buf[n - 1] != '\n')
		goto out_close;
	memcpy(id, buf + strlen(MARK_PREFIX), PFSMARK_ID_LEN);
	id[PFSMARK_ID_LEN] = 0;
	ret = 0;
out_close:
	close(fd);
	return ret;
}

/* A new random id. */
static int id_new(char id[PFSMARK_ID_LEN + 1])
{
	unsigned char r[PFSMARK_ID_LEN / 2];
	size_t i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	for (i = 0; i < sizeof(r); i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* The name of this store's mark while it is written, into tmp: the same
 * at every try, so that the next try removes what a SIGKILL between the
 * write and the link left behind.  The host and the store's path make it
 * this store's own in a target the nodes of a cluster share (one ckptd
 * per store, and pm->lock, make the tries of one store one at a time). */
static void tmp_name(const struct pfsmark *pm, char tmp[64])
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	snprintf(tmp, 64, PFSMARK_NAME ".%08x%08x.tmp",
		 crc32c(host, strlen(host)),
		 crc32c(pm->record, strlen(pm->record)));
}

/* Mark the target open as tfd with a new id, or, if another ckptd marked
 * it first, read its mark: the mark appears whole or not at all (written
 * aside, then linked into place). */
static int mark_make(const struct pfsmark *pm, int tfd,
		     char id[PFSMARK_ID_LEN + 1])
{
	char tmp[64], buf[64];
	int fd, n, ret;

	ret = id_new(id);
	if (ret < 0)
		return ret;
	tmp_name(pm, tmp);
	n = snprintf(buf, sizeof(buf), MARK_PREFIX "%s\n", id);
	unlinkat(tfd, tmp, 0);
	fd = openat(tfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			      O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = sys_pwrite_all(fd, buf, (size_t)n, 0);
	if (ret == 0)
		ret = sys_fsync(fd);
	close(fd);
	if (ret == 0 && linkat(tfd, tmp, tfd, PFSMARK_NAME, 0) < 0)
		ret = -errno;
	unlinkat(tfd, tmp, 0);
	if (ret == -EEXIST)
		return mark_read(tfd, id);
	if (ret == 0 && fsync(tfd) < 0)
		ret = -errno;
	return ret;
}

/* Does the directory open as fd have an entry (besides . and ..)?  1 if
 * it cannot be read (rather not taken as empty). */
static int dir_has_entries(int fd)
{
	struct dirent *e;
	DIR *dp;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), found = 0;

	if (dfd < 0)
		return 1;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return 1;
	}
	while (!found && (e = readdir(dp)))
		found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dp);
	return found;
}

/* Record id for the target (replacing the record whole). */
static int record_write(struct pfsmark *pm, const char *id)
{
	char tmp[sizeof(pm->record) + 8], *buf, *slash;
	int ret;

	if (asprintf(&buf, "%s\n%s\n", id, pm->target) < 0)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s.tmp", pm->record);
	ret = sys_write_file(tmp, buf, strlen(buf), 0600);
	free(buf);
	if (ret == 0)
		ret = sys_rename(tmp, pm->record);
	if (ret < 0) {
		unlink(tmp);
		return ret;
	}
	slash = strrchr(tmp, '/');
	if (slash)
		*slash = 0;
	return sys_fsync_dir(tmp);
}

int pfsmark_open(struct pfsmark *pm, const char *target,
		 const char *drain_dir, int drained)
{
	char buf[CONF_PATH_MAX + PFSMARK_ID_LEN + 8], *nl;
	ssize_t n;
	int fd;

	memset(pm, 0, sizeof(*pm));
	pm->target = target;
	pm->drained = drained;
	pm->verdict = 1;
	snprintf(pm->record, sizeof(pm->record), "%s/target", drain_dir);
	if (pthread_mutex_init(&pm->lock, NULL))
		return -ENOMEM;
	fd = open(pm->record, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			log_printf(LOG_WARNING, "drain: %s: %s (the target's mark is taken anew)",
				   pm->record, strerror(errno));
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	nl = strchr(buf, '\n');
	if (!nl || !id_valid(buf, (size_t)(nl - buf)) ||
	    strlen(nl + 1) < 2 || nl[strlen(nl) - 1] != '\n') {
		log_printf(LOG_WARNING, "drain: %s is not a record of a target's mark; ignored (the mark is taken anew)",
			   pm->record);
		return 0;
	}
	nl[strlen(nl) - 1] = 0;
	if (path_len(nl + 1) != path_len(target) ||
	    memcmp(nl + 1, target, path_len(target))) {
		/* Configured anew: a first use (an empty target still refused
		 * if this store drained before: the new path may be a mount
		 * point too). */
		log_printf(LOG_NOTICE, "drain: the target was %s, now %s: its mark is taken anew",
			   nl + 1, target);
		return 0;
	}
	memcpy(pm->id, buf, PFSMARK_ID_LEN);
	pm->id[PFSMARK_ID_LEN] = 0;
	return 0;
}

void pfsmark_close(struct pfsmark *pm)
{
	pthread_mutex_destroy(&pm->lock);
}

void pfsmark_adopt(struct pfsmark *pm)
{
	pthread_mutex_lock(&pm->lock);
	pm->adopt = 1;
	pthread_mutex_unlock(&pm->lock);
}

/* Log a verdict that differs from the last one. */
static void verdict_log(struct pfsmark *pm, int ret, enum why why,
			const char *found)
{
	static const char *const whys[] = {
		[WHY_ABSENT] = "has no mark " PFSMARK_NAME " (is the PFS mounted?)",
		[WHY_OTHER] = "carries another store's mark",
		[WHY_FOREIGN] = "has a " PFSMARK_NAME " that ckptd did not write",
		[WHY_EMPTY] = "is empty, but versions were drained from this store (is the PFS mounted?)",
		[WHY_MISSING] = "does not exist (is the PFS mounted?)",
		[WHY_UNMOUNTED] = "is not mounted: [drain] mount is not a mount point",
		[WHY_OPEN] = "may be written by others than ckptd (its owner, mode or ACL; chown root, chmod go-w, setfacl -b): any user could take other users' job names or plant a mark there",
	};

	if (ret == pm->verdict && why == (enum why)pm->why)
		return;
	if (ret == 0 && pm->verdict != 1)
		log_printf(LOG_NOTICE, "drain: the target %s carries its mark again: drains resume",
			   pm->target);
	else if (ret == -CKPT_ETARGET)
		log_printf(LOG_ERR, "drain: the target %s %s%s%s: drains and removals from the PFS wait for it%s",
			   pm->target, whys[why],
			   why == WHY_OTHER ? " " : "",
			   why == WHY_OTHER ? found : "",
			   why == WHY_OPEN || why == WHY_UNMOUNTED ? "" :
			   " (`ckptctl drain --adopt-target` takes it as it is)");
	else if (ret < 0)
		log_printf(LOG_WARNING, "drain: the target %s: %s; drains wait for it",
			   pm->target, strerror(-ret));
	pm->verdict = ret;
	pm->why = why;
}

/* The tags and the write bit of a POSIX ACL as the kernel gives it in
 * system.posix_acl_access: u32 version 2, then { u16 tag; u16 perm;
 * u32 id } entries, little-endian (acl(5)). */
#define ACL_XATTR       "system.posix_acl_access"
#define ACL_XVERSION    2
#define ACL_T_USER      0x02
#define ACL_T_GROUP_OBJ 0x04
#define ACL_T_GROUP     0x08
#define ACL_T_MASK      0x10
#define ACL_T_OTHER     0x20
#define ACL_P_WRITE     0x02

/* Does the ACL in buf (n bytes) let anyone but ckptd write, gid being the
 * directory's group?  1 if so, or if it cannot be read as an ACL. */
static int acl_open(const uint8_t *buf, ssize_t n, gid_t gid)
{
	int mask_w = 1, open = 0;
	uint16_t tag, perm;
	uint32_t id;
	ssize_t i;

	if (n < 4 || (n - 4) % 8 || get_le32(buf) != ACL_XVERSION)
		return 1;
	for (i = 4; i < n; i += 8)
		if (get_le16(buf + i) == ACL_T_MASK)
			mask_w = !!(get_le16(buf + i + 2) & ACL_P_WRITE);
	for (i = 4; i < n; i += 8) {
		tag = get_le16(buf + i);
		perm = get_le16(buf + i + 2);
		id = get_le32(buf + i + 4);
		if (!(perm & ACL_P_WRITE))
			continue;
		if (tag == ACL_T_OTHER ||
		    (mask_w && tag == ACL_T_USER && id != geteuid() && id != 0) ||
		    (mask_w && tag == ACL_T_GROUP && id != getegid() && id != 0) ||
		    (mask_w && tag == ACL_T_GROUP_OBJ && gid != getegid() &&
		     gid != 0))
			open = 1;
	}
	return open;
}

/* Is the target open as tfd writable by ckptd alone (owned by its uid or
 * root; writable through its group or ACL only by ckptd's group, root's
 * group or ckptd)?  The jobs' first levels, the mark and the shared levels
 * are made there: a user who may write there could make a level under
 * another user's job name first (that job's drains then fail with
 * EACCES), or a mark before ckptd's first use.  0, -CKPT_ETARGET if not,
 * or -errno.  Not taken as it is: chmod, chown or setfacl is the fix. */
static int target_closed(int tfd)
{
	uint8_t acl[1024];
	struct stat st;
	ssize_t n;

	if (fstat(tfd, &st) < 0)
		return -errno;
	if ((st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & S_IWOTH))
		return -CKPT_ETARGET;
	n = fgetxattr(tfd, ACL_XATTR, acl, sizeof(acl));
	if (n >= 0)          /* the group bits are the ACL's mask then */
		return acl_open(acl, n, st.st_gid) ? -CKPT_ETARGET : 0;
	if (errno == ERANGE)
		return -CKPT_ETARGET;   /* too many entries to read: refused */
	if ((st.st_mode & S_IWGRP) && st.st_gid != getegid() && st.st_gid != 0)
		return -CKPT_ETARGET;
	return 0;
}

/* Is path a mount point?  1, 0 (or not there), or -errno. */
static int mount_root(const char *path)
{
	struct stat st, up;
	struct statx sx;
	int fd, ret;

	/* statx refused (EPERM, ENOSYS: a seccomp filter) falls back too. */
	if (statx(AT_FDCWD, path, 0, STATX_INO, &sx) == 0) {
		if (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
			return !!(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	} else if (errno != ENOSYS && errno != EPERM) {
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	}
	/* Before Linux 5.8: another device than its parent's, or "/" (a
	 * bind mount within one file system is not seen). */
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	ret = fstat(fd, &st) < 0 || fstatat(fd, "..", &up, 0) < 0 ? -errno :
	      st.st_dev != up.st_dev || st.st_ino == up.st_ino;
	close(fd);
	return ret;
}

/* The check, under pm->lock. */
static int check_locked(struct pfsmark *pm, enum why *why,
			char found[PFSMARK_ID_LEN + 1])
{
	int tfd, ret;

	if (pm->mount) {
		/* Not one, or not known to be one (an error): the target
		 * is not taken, nor scanned (drainscan.c's scannable()). */
		ret = mount_root(pm->mount);
		if (ret <= 0) {
			*why = WHY_UNMOUNTED;
			return -CKPT_ETARGET;
		}
	}
	tfd = open(pm->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		/* Rather a PFS not mounted under the target's path than one
		 * that lost everything: no copy there is gone. */
		*why = WHY_MISSING;
		return -CKPT_ETARGET;
	}
	if (tfd < 0)
		return -errno;
	ret = target_closed(tfd);
	if (ret < 0) {
		*why = WHY_OPEN;
		goto out_close;
	}
	ret = mark_read(tfd, found);
	if (pm->id[0] && !pm->adopt) {
		if (ret == -ENOENT || ret == -EINVAL || ret == 0) {
			*why = ret == -ENOENT ? WHY_ABSENT :
			       ret == -EINVAL ? WHY_FOREIGN : WHY_OTHER;
			ret = ret == 0 && !strcmp(found, pm->id) ? 0
								 : -CKPT_ETARGET;
		}
		goto out_close;
	}
	/* First use, or taken as it is: a mark ckptd did not write is
	 * replaced then. */
	if (ret == -EINVAL && pm->adopt && unlinkat(tfd, PFSMARK_NAME, 0) == 0)
		ret = -ENOENT;
	if (ret == -EINVAL) {
		*why = WHY_FOREIGN;
		ret = -CKPT_ETARGET;
		goto out_close;
	}
	if (ret == -ENOENT) {
		if (pm->drained && !pm->adopt && !dir_has_entries(tfd)) {
			*why = WHY_EMPTY;
			ret = -CKPT_ETARGET;
			goto out_close;
		}
		ret = mark_make(pm, tfd, found);
	} else if (ret == 0) {
		/* Adopted: a mark this store made before a SIGKILL cut its
		 * try short after the link leaves its temporary name. */
		char tmp[64];

		tmp_name(pm, tmp);
		unlinkat(tfd, tmp, 0);
	}
	if (ret == 0)
		ret = record_write(pm, found);
	if (ret == 0) {
		log_printf(LOG_NOTICE, "drain: the target %s is marked %s (%s)",
			   pm->target, found, pm->id[0] ? "taken as it is" : "first use");
		memcpy(pm->id, found, sizeof(pm->id));
		pm->adopt = 0;
	}
out_close:
	close(tfd);
	return ret;
}

int pfsmark_check(struct pfsmark *pm)
{
	char found[PFSMARK_ID_LEN + 1] = "";
	enum why why = WHY_NONE;
	int ret;

	pthread_mutex_lock(&pm->lock);
	ret = check_locked(pm, &why, found);
	verdict_log(pm, ret, why, found);
	pthread_mutex_unlock(&pm->lock);
	return ret;
}
