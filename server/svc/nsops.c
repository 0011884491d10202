/*
 * nsops.c - namespace changes inside an open version: TRUNCATE, UNLINK,
 * RENAME and LINK, and the file attributes (SETATTR, SETXATTR), for writers
 * that use files the way a POSIX program does (ckptfs).
 *
 * They act on the version's index, in order with the writer's WRITEs on the
 * same connection, and touch no data: a truncate adds zero records over what
 * it cuts, an unlink marks the name dead (the file's last name takes its
 * records out of the manifest; they stay, unlisted), a rename changes the
 * path, a link adds a name (catalog.h, hard links).  Only an OPEN version
 * can change; a committed one gives -CKPT_ESEALED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attr.h"
#include "log.h"
#include "nsops.h"
#include "xattr.h"
#include "ops.h"
#include "session.h"

/* The open version of req's writer handle, or NULL after answering. */
static struct version *open_version(struct conn *c,
				    const struct proto_msg *req)
{
	struct writer *w = writer_of(c, req);

	if (!w)
		return NULL;
	if (w->v->state == CKPT_ST_OPEN)
		return w->v;
	conn_reply_status(c, req, w->v->state == CKPT_ST_FAILED ?
			  (w->v->error ? w->v->error : -CKPT_EABORTED) :
			  -CKPT_ESEALED);
	return NULL;
}

/* Stamp the ctime of the file held by entry fi (a link or unlink of one
 * of its names changes it). */
static void touch_ctime(struct version *v, uint32_t fi)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	v->files[vfile_data(v, fi)].attr.ctime_ns =
		(uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;
}

void op_truncate(struct conn *c, const struct proto_msg *req)
{
	struct version *v = open_version(c, req);
	int fi;

	if (!v)
		return;
	fi = version_file(v, req->path, 1);
	if (fi >= 0)
		fi = version_truncate(v, fi, req->size);
	conn_reply_status(c, req, fi < 0 ? fi : 0);
}

void op_unlink(struct conn *c, const struct proto_msg *req)
{
	struct version *v = open_version(c, req);
	int fi;

	if (!v)
		return;
	fi = version_name(v, req->path);
	if (fi >= 0 && v->files[vfile_data(v, (uint32_t)fi)].nlink > 1)
		touch_ctime(v, (uint32_t)fi);   /* the file lives on */
	if (fi >= 0)
		version_unlink_file(v, fi);
	conn_reply_status(c, req, fi < 0 ? fi : 0);
}

void op_link(struct conn *c, const struct proto_msg *req)
{
	struct version *v = open_version(c, req);
	int fi, ret;

	if (!v)
		return;
	fi = version_file(v, req->path, 0);
	ret = fi < 0 ? fi : version_name(v, req->path2) >= 0 ? -EEXIST : 0;
	if (ret == 0)
		ret = version_link(v, (uint32_t)fi, req->path2);
	if (ret == 0)
		touch_ctime(v, (uint32_t)fi);
	conn_reply_status(c, req, ret);
}

/* Give the name entry fi the path to, replacing the name to was; nothing
 * when both are names of one file (POSIX rename). */
static int rename_name(struct version *v, uint32_t fi, const char *to)
{
	int old = version_name(v, to);

	if (old >= 0 && vfile_data(v, (uint32_t)old) == vfile_data(v, fi))
		return 0;
	if (old >= 0)
		version_unlink_file(v, (uint32_t)old);
	return version_rename_file(v, fi, to);
}

/* Is path under the directory dir (len bytes)? */
static int under(const char *path, const char *dir, size_t len)
{
	return !strncmp(path, dir, len) && path[len] == '/';
}

/* Rename every live file under directory from to the same place under to.
 * 0, -ENOENT if none is, -ENAMETOOLONG, -ENOMEM. */
static int rename_dir(struct version *v, const char *from, const char *to)
{
	size_t flen = strlen(from), tlen = strlen(to);
	char path[CKPT_PATH_MAX2 + 1];
	uint32_t i, moved = 0;
	int ret;

	if (under(to, from, flen))
		return -EINVAL;       /* into itself */
	for (i = 0; i < v->nfiles; i++) {
		const char *p = v->files[i].path;

		if (v->files[i].dead || !under(p, from, flen))
			continue;
		if (tlen + strlen(p + flen) > CKPT_PATH_MAX2)
			return -ENAMETOOLONG;
		snprintf(path, sizeof(path), "%s%s", to, p + flen);
		ret = rename_name(v, i, path);
		if (ret < 0)
			return ret;
		moved++;
	}
	return moved ? 0 : -ENOENT;
}

/* Is the name entry fi a directory's own entry (CKPT_ATTR_IFDIR)? */
static int dir_entry(struct version *v, int fi)
{
	return fi >= 0 &&
	       attr_is_type(&v->files[vfile_data(v, (uint32_t)fi)].attr,
			    CKPT_ATTR_IFDIR);
}

/* Rename a directory: the files below it, then its own entry if it has
 * one; an entry of an empty directory it replaces goes.  0 or an error
 * (-ENOENT: neither an entry nor a file below). */
static int rename_tree(struct version *v, int fi, const char *from,
		       const char *to)
{
	int ret = rename_dir(v, from, to), old;

	if (fi >= 0)
		return ret == 0 || ret == -ENOENT ?
		       rename_name(v, (uint32_t)fi, to) : ret;
	old = version_name(v, to);
	if (ret == 0 && dir_entry(v, old))
		version_unlink_file(v, (uint32_t)old);
	return ret;
}

void op_rename(struct conn *c, const struct proto_msg *req)
{
	struct version *v = open_version(c, req);
	int fi, ret;

	if (!v)
		return;
	fi = version_name(v, req->path);
	if (fi < 0 || dir_entry(v, fi))
		ret = rename_tree(v, fi, req->path, req->path2);
	else
		ret = rename_name(v, (uint32_t)fi, req->path2);
	if (ret == -ENOMEM)
		log_printf(LOG_ERR, "version %s/%s: out of memory renaming %s",
			   v->job->name, v->name, req->path);
	conn_reply_status(c, req, ret);
}

/*
 * SETATTR: the attributes req->attr.set names, kept as data (ckptd decides
 * nothing by them).  Only root may name a uid other than the job owner's,
 * set-uid and set-gid bits, or a device node (attr_permitted()): ckptfs
 * (root) has had the kernel check chown's, chmod's and mknod's rules for its
 * caller, while a plain writer could name any gid (ckptd cannot ask NSS on
 * the loop), and `ckptctl restore` run as root applies what the manifest
 * says.  ctime is ckptd's clock.
 */
void op_setattr(struct conn *c, const struct proto_msg *req)
{
	const struct ckpt_attr *a = &req->attr;
	struct version *v = open_version(c, req);
	struct ckpt_attr *fa;
	int fi;

	if (!v)
		return;
	if (attr_permitted(c->uid, v->job->uid, a) < 0) {
		conn_reply_status(c, req, -EPERM);
		return;
	}
	fi = version_file(v, req->path, 0);
	if (fi < 0) {
		conn_reply_status(c, req, fi);
		return;
	}
	fa = &v->files[fi].attr;
	if (a->set & CKPT_ATTR_MODE && (a->mode & CKPT_ATTR_IFMT)) {
		fa->mode = a->mode;             /* a type, once made */
		fa->rdev = a->rdev;
	} else if (a->set & CKPT_ATTR_MODE) {   /* chmod: the type stays */
		fa->mode = a->mode | (fa->mode & CKPT_ATTR_IFMT);
	}
	if (a->set & CKPT_ATTR_UID)
		fa->uid = a->uid;
	if (a->set & CKPT_ATTR_GID)
		fa->gid = a->gid;
	/* A set-uid bit is for an owner: the job's, as ckptfs shows a file
	 * with none (a restore as root would leave it root's otherwise). */
	if ((fa->mode & 04000) && !((fa->set | a->set) & CKPT_ATTR_UID)) {
		fa->uid = v->job->uid;
		fa->set |= CKPT_ATTR_UID;
	}
	if (a->set & CKPT_ATTR_ATIME)
		fa->atime_ns = a->atime_ns;
	if (a->set & CKPT_ATTR_MTIME)
		fa->mtime_ns = a->mtime_ns;
	fa->set |= a->set;
	touch_ctime(v, (uint32_t)fi);
	conn_reply_status(c, req, 0);
}

/*
 * SETXATTR: set or (id 1) remove the one attribute req->blob holds, in the
 * file's blob (xattr.h), which is copied on change: XATTR_MAX bytes at most.
 * Names outside "user." are refused (ENOTSUP), as ckptfs refuses them.
 */
void op_setxattr(struct conn *c, const struct proto_msg *req)
{
	struct version *v = open_version(c, req);
	uint8_t buf[XATTR_MAX], *copy = NULL;
	const uint8_t *val = NULL;
	char name[256];
	struct vfile *f;
	size_t len;
	long vlen;
	int fi, ret;

	if (!v)
		return;
	ret = req->blob_len ? 0 : -EINVAL;
	if (ret == 0) {
		memcpy(name, req->blob + 1, req->blob[0]);
		name[req->blob[0]] = '\0';
		vlen = xattr_get(req->blob, req->blob_len, name, &val);
		/* exactly one record */
		ret = (size_t)(1 + req->blob[0] + 2 + vlen) == req->blob_len ?
		      0 : -EINVAL;
	}
	if (ret == 0 && (strncmp(name, "user.", 5) || !name[5]))
		ret = -ENOTSUP;
	fi = ret == 0 ? version_file(v, req->path, 0) : ret;
	if (fi < 0) {
		conn_reply_status(c, req, fi);
		return;
	}
	f = &v->files[fi];
	len = f->xlen;
	if (len)
		memcpy(buf, f->xattr, len);
	ret = req->id == 1 ? xattr_remove(buf, &len, name)
			   : xattr_set(buf, &len, name, val, (size_t)vlen);
	if (ret == 0 && len) {
		copy = malloc(len);
		ret = copy ? 0 : -ENOMEM;
	}
	if (ret == 0) {
		if (len)
			memcpy(copy, buf, len);
		free(f->xattr);
		f->xattr = copy;
		f->xlen = (uint32_t)len;
	}
	conn_reply_status(c, req, ret);
}
