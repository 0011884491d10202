/*
 * nsops.c - namespace changes inside an open version: TRUNCATE, UNLINK and
 * RENAME, for writers that use files the way a POSIX program does (ckptfs).
 *
 * They act on the version's index, in order with the writer's WRITEs on the
 * same connection, and touch no data: a truncate adds zero records over what
 * it cuts, an unlink marks the file dead (its records stay, unlisted and left
 * out of the manifest), a rename changes the path.  Only an OPEN version can
 * change; a committed one gives -CKPT_ESEALED.
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "nsops.h"
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
	fi = version_file(v, req->path, 0);
	if (fi >= 0)
		version_unlink_file(v, fi);
	conn_reply_status(c, req, fi < 0 ? fi : 0);
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
	char path[CKPT_PATH_MAX + 1];
	uint32_t i, moved = 0;
	int old, ret;

	if (under(to, from, flen))
		return -EINVAL;       /* into itself */
	for (i = 0; i < v->nfiles; i++) {
		const char *p = v->files[i].path;

		if (v->files[i].dead || !under(p, from, flen))
			continue;
		if (tlen + strlen(p + flen) > CKPT_PATH_MAX)
			return -ENAMETOOLONG;
		snprintf(path, sizeof(path), "%s%s", to, p + flen);
		old = version_file(v, path, 0);
		if (old >= 0)
			version_unlink_file(v, old);
		ret = version_rename_file(v, i, path);
		if (ret < 0)
			return ret;
		moved++;
	}
	return moved ? 0 : -ENOENT;
}

void op_rename(struct conn *c, const struct proto_msg *req)
{
	struct version *v = open_version(c, req);
	int fi, old, ret;

	if (!v)
		return;
	fi = version_file(v, req->path, 0);
	if (fi < 0) {
		ret = rename_dir(v, req->path, req->path2);
		goto out_reply;
	}
	ret = 0;
	if (!strcmp(req->path, req->path2))
		goto out_reply;
	old = version_file(v, req->path2, 0);
	if (old >= 0)
		version_unlink_file(v, old);
	ret = version_rename_file(v, fi, req->path2);
out_reply:
	if (ret == -ENOMEM)
		log_printf(LOG_ERR, "version %s/%s: out of memory renaming %s",
			   v->job->name, v->name, req->path);
	conn_reply_status(c, req, ret);
}
