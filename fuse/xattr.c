/*
 * xattr.c - extended attributes in ckptfs: the "user." namespace, kept per
 * file in the version (ckpt_setxattr(), ckpt_getxattrs(); the blob format
 * is lib/xattr.h's).
 *
 * In a version this mount writes, a set or remove goes to ckptd in order
 * with the version's writes, and the file's inode keeps a copy (shared by
 * its hard links) so that reads of them cost nothing; a directory's stay
 * in the mirror, like its mode, and go to ckptd with its directory entry
 * at the commit (vers.c).
 * Anything else is asked of ckptd.  Names outside "user." are not kept:
 * setting one is ENOTSUP, reading one ENODATA (the kernel asks for
 * security.capability at each write).
 *
 * Layer: the operations (ops_i.h): FUSE's setxattr, getxattr, listxattr
 * and removexattr.  They call down into the namespace (vers.c, tree.c,
 * path.c) and the connections (srv.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "ops_i.h"
#include "xattr.h"

static int user_name(const char *name)
{
	return !strncmp(name, "user.", 5) && name[5];
}

/* The blob of path into buf (XATTR_MAX bytes): its length or an error. */
static int blob_of(struct ckptfs *fs, const char *path, uint8_t *buf)
{
	struct fs_version *ver;
	struct fs_node *n;
	struct fs_path p;
	int ret;

	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	if (p.kind != P_FILE || path_is_marker(&p))
		return 0;
	ver = ver_find(fs, p.job, p.vdisp);
	if (ver) {
		pthread_mutex_lock(&fs->mu);
		n = tree_lookup(&ver->tree, p.file);
		ret = n ? (int)n->in->xlen : -ENOENT;
		if (n && n->in->xlen)
			memcpy(buf, n->in->xattr, n->in->xlen);
		pthread_mutex_unlock(&fs->mu);
		ver_put(fs, ver);
		return ret;
	}
	ret = srv_xattrs(fs, p.job, p.vdisp, p.file, buf, XATTR_MAX);
	if (ret == -ENOENT) {   /* a directory has none */
		ret = srv_is_dir(fs, p.job, p.vdisp, p.file);
		ret = ret == 1 ? 0 : ret == 0 ? -ENOENT : ret;
	}
	return ret;
}

int fs_getxattr(const char *path, const char *name, char *value, size_t size)
{
	uint8_t buf[XATTR_MAX];
	const uint8_t *val;
	long vlen;
	int len;

	if (!path)
		return -ESTALE;
	if (!user_name(name))
		return -ENODATA;
	len = blob_of(fs_get(), path, buf);
	if (len < 0)
		return fs_errno(len);
	vlen = xattr_get(buf, len, name, &val);
	if (vlen < 0 || size == 0)
		return (int)vlen;
	if ((size_t)vlen > size)
		return -ERANGE;
	memcpy(value, val, vlen);
	return (int)vlen;
}

int fs_listxattr(const char *path, char *list, size_t size)
{
	uint8_t buf[XATTR_MAX];
	int len;

	if (!path)
		return -ESTALE;
	len = blob_of(fs_get(), path, buf);
	if (len < 0)
		return fs_errno(len);
	return (int)xattr_list(buf, len, size ? list : NULL, size);
}

/* The new blob of in (buf, *len) with name set or removed; fs->mu held. */
static int blob_change(const struct fs_inode *in, uint8_t *buf, size_t *len,
		       const char *name, const void *value, size_t size,
		       int flags)
{
	const uint8_t *old;
	int exists;

	*len = in->xlen;
	if (*len)
		memcpy(buf, in->xattr, *len);
	exists = xattr_get(buf, *len, name, &old) >= 0;
	if (value && (flags & XATTR_CREATE) && exists)
		return -EEXIST;
	if ((!value || (flags & XATTR_REPLACE)) && !exists)
		return -ENODATA;
	return value ? xattr_set(buf, len, name, value, size)
		     : xattr_remove(buf, len, name);
}

/* Apply the change to the mirror's blob of in as it is now (another change
 * may have come in while ckptd was asked).  fs->mu held. */
static int mirror_apply_locked(struct fs_inode *in, const char *name,
			       const void *value, size_t size)
{
	uint8_t buf[XATTR_MAX], *copy = NULL;
	size_t len = 0;
	int ret;

	ret = blob_change(in, buf, &len, name, value, size, 0);
	if (ret == -ENODATA)    /* removed meanwhile */
		return 0;
	if (ret == 0 && len && !(copy = malloc(len)))
		ret = -ENOMEM;
	if (ret < 0)
		return ret;
	if (len)
		memcpy(copy, buf, len);
	free(in->xattr);
	in->xattr = copy;
	in->xlen = (uint32_t)len;
	return 0;
}

int xattr_node_change(struct ckptfs *fs, struct fs_version *ver,
		      struct fs_node *n, const char *name, const void *value,
		      size_t size, int flags)
{
	char fpath[CKPT_PATH_MAX2 + 1];
	uint8_t buf[XATTR_MAX];
	size_t len = 0;
	int ret, local = 1;

	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	if (ret == 0)   /* checks flags and room before ckptd is asked */
		ret = blob_change(n->in, buf, &len, name, value, size, flags);
	if (ret == 0) {
		local = n->is_dir || n->in->nlink == 0;
		if (!local && tree_node_path(n, fpath, sizeof(fpath)) < 0)
			ret = -ENAMETOOLONG;
	}
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0 && !local)
		ret = ver_failed(fs, ver, ckpt_setxattr(ver->v, fpath, name,
							value, size));
	if (ret == 0) {
		pthread_mutex_lock(&fs->mu);
		ret = mirror_apply_locked(n->in, name, value, size);
		pthread_mutex_unlock(&fs->mu);
	}
	return ret;
}

void xattr_node_forget_locked(struct fs_node *n, const char *name)
{
	mirror_apply_locked(n->in, name, NULL, 0);  /* only shrinks */
}

/* Set (value) or remove (value NULL) name on path, held versions only. */
static int xattr_change(const char *path, const char *name, const void *value,
			size_t size, int flags)
{
	struct ckptfs *fs = fs_get();
	struct fs_version *ver;
	struct fs_node *n = NULL;
	struct fs_path p;
	int ret;

	if (!path)
		return -ESTALE;
	if (!user_name(name))
		return -ENOTSUP;
	if (!strcmp(name, CKPT_XATTR_FAILED))
		return -EPERM;  /* the mount's own verdict (ckpt.h) */
	ret = path_parse(fs, path, &p);
	if (ret < 0)
		return ret == -CKPT_EBADNAME ? -ENOENT : ret;
	if (p.kind < P_VERSION)
		return -ENOTSUP;
	ver = ver_find(fs, p.job, p.vdisp);
	if (!ver)
		return fs_errno(ver_not_held(fs, &p));
	pthread_rwlock_rdlock(&ver->ns);
	pthread_mutex_lock(&fs->mu);
	ret = ver_writable_locked(ver);
	if (ret == 0) {
		n = tree_lookup(&ver->tree, p.kind == P_FILE ? p.file : "");
		ret = n ? 0 : -ENOENT;
	}
	if (ret == 0)
		n->nopen++;     /* pinned while ckptd is asked */
	pthread_mutex_unlock(&fs->mu);
	if (ret == 0)
		ret = xattr_node_change(fs, ver, n, name, value, size, flags);
	if (n) {
		pthread_mutex_lock(&fs->mu);
		n->nopen--;
		tree_release(n);
		pthread_mutex_unlock(&fs->mu);
	}
	pthread_rwlock_unlock(&ver->ns);
	ver_put(fs, ver);
	return fs_errno(ret);
}

int fs_setxattr(const char *path, const char *name, const char *value,
		size_t size, int flags)
{
	return xattr_change(path, name, value ? value : "", size, flags);
}

int fs_removexattr(const char *path, const char *name)
{
	return xattr_change(path, name, NULL, 0, 0);
}
