/*
 * attr.c - the rules for a file's attributes (attr.h).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "attr.h"

int attr_permitted(uint32_t caller, uint32_t owner, const struct ckpt_attr *a)
{
	uint32_t type = a->mode & CKPT_ATTR_IFMT;

	if (caller == 0)
		return 0;
	if ((a->set & CKPT_ATTR_UID) && a->uid != owner)
		return -EPERM;
	if ((a->set & CKPT_ATTR_MODE) &&
	    ((a->mode & 06000) || type == CKPT_ATTR_IFCHR ||
	     type == CKPT_ATTR_IFBLK))
		return -EPERM;
	return 0;
}

/* Is uid a member of group gid (its primary group or a supplementary one)?
 * 1, 0 (also for a uid NSS does not know), or -ENOMEM. */
static int member(uint32_t uid, uint32_t gid)
{
	struct passwd pw, *found = NULL;
	gid_t *groups = NULL;
	char *buf = NULL;
	long cap = sysconf(_SC_GETPW_R_SIZE_MAX);
	int n = 64, i, ret = -ENOMEM;

	if (cap < 1024)
		cap = 16384;
	buf = malloc((size_t)cap);
	if (!buf)
		goto out;
	ret = 0;
	if (getpwuid_r(uid, &pw, buf, (size_t)cap, &found) || !found)
		goto out;
	ret = 1;
	if (pw.pw_gid == gid)
		goto out;
	for (;;) {
		gid_t *g = realloc(groups, (size_t)n * sizeof(*g));
		int want = n;

		ret = -ENOMEM;
		if (!g)
			goto out;
		groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &want) >= 0) {
			n = want;
			break;
		}
		if (want <= n)
			want = 2 * n;  /* some versions leave it as it was */
		if (want > 65536)
			goto out;
		n = want;
	}
	ret = 0;
	for (i = 0; i < n && !ret; i++)
		ret = groups[i] == gid;
out:
	free(groups);
	free(buf);
	return ret;
}

int attr_owner_could(uint32_t owner, const struct ckpt_attr *a)
{
	int ret;

	if (owner == 0)
		return 0;
	if ((a->set & CKPT_ATTR_UID) && a->uid != owner)
		return -EPERM;
	if (!(a->set & CKPT_ATTR_MODE))
		return 0;
	if (attr_is_type(a, CKPT_ATTR_IFCHR) || attr_is_type(a, CKPT_ATTR_IFBLK))
		return -EPERM;
	if ((a->mode & 04000) && !(a->set & CKPT_ATTR_UID))
		return -EPERM;  /* restored by root, the file would be root's */
	if (!(a->mode & 02000))
		return 0;
	if (!(a->set & CKPT_ATTR_GID))
		return -EPERM;
	ret = member(owner, a->gid);
	return ret < 0 ? ret : ret ? 0 : -EPERM;
}
