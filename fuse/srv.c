/*
 * srv.c - what ckptd says: every query and read of the R connection.
 *
 * Each call takes the current R connection, makes one libckpt call, and
 * gives the connection back.  When ckptd has restarted since the last call,
 * that call fails with a connection error; conn_again() then marks the
 * connection dead and the call is made once more on a fresh one, so the
 * first `ls` or `cat` after a restart of ckptd just works.
 *
 * On top of the raw calls sit the questions the namespace asks: is there a
 * job below this prefix, does this job exist (and whose is it), is this
 * version visible (failed and incomplete versions are not), is this path a
 * directory of a version (a prefix of its file paths).  Nothing is cached.
 *
 * Layer: the bottom one (conn_i.h), with conn.c and log.c.  It knows no
 * version this mount holds: whether ckptd's version is the one the mount
 * shows (not one held here) is the namespace's question (vers.c,
 * ver_remote(), ver_not_held()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "conn_i.h"

/* ---- the calls ----------------------------------------------------------- */

/* The arguments of one call; each op uses the ones it needs. */
struct srv_args {
	const char *job, *version, *path;
	void *out;
	void *buf;
	size_t len;
	uint64_t off;
	size_t *got;
};

/* Make op on the R connection, once more on a fresh one if ckptd went
 * away since the last call. */
static int srv_call(struct ckptfs *fs,
		    int (*op)(struct ckpt_client *c, struct srv_args *a),
		    struct srv_args *a)
{
	struct fs_conn *conn;
	int ret, tries = 0;

	do {
		if (a->got)
			*a->got = 0;
		ret = conn_get(fs, CONN_R, &conn);
		if (ret < 0)
			return ret;
		ret = op(conn->c, a);
	} while (conn_again(fs, conn, ret, &tries));
	return ret;
}

static int op_jobs(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_list_jobs(c, a->out);
}

static int op_versions(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_list_versions2(c, a->job, a->out,
				   sizeof(struct ckpt_version_info));
}

static int op_stat(struct ckpt_client *c, struct srv_args *a)
{
	int ret = ckpt_stat_version2(c, a->job, a->version, a->out,
				     sizeof(struct ckpt_version_info));

	return ret < 0 ? ret : 0;
}

static int op_files(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_list_files2(c, a->job, a->version, a->out,
				sizeof(struct ckpt_file_info));
}

static int op_file(struct ckpt_client *c, struct srv_args *a)
{
	int ret = ckpt_stat_file2(c, a->job, a->version, a->path, a->out,
				  sizeof(struct ckpt_file_info));

	return ret < 0 ? ret : 0;
}

static int op_read(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_read(c, a->job, a->version, a->path, a->buf, a->len,
			 a->off, a->got);
}

/* out: the run's offset and length */
static int op_seek_data(struct ckpt_client *c, struct srv_args *a)
{
	uint64_t *run = a->out;

	return ckpt_seek_data(c, a->job, a->version, a->path, a->off,
			      UINT64_MAX, &run[0], &run[1]);
}

static int op_status(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_status(c, a->out);
}

/* A private connection of its own: holds no client lock. */
static int op_wait_local(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_wait_name(c, a->job, a->version, CKPT_LOCAL, -1);
}

int srv_jobs(struct ckptfs *fs, char (**out)[CKPT_JOB_MAX + 1])
{
	struct srv_args a = { .out = out };

	return srv_call(fs, op_jobs, &a);
}

int srv_versions(struct ckptfs *fs, const char *job,
		 struct ckpt_version_info **out)
{
	struct srv_args a = { .job = job, .out = out };

	return srv_call(fs, op_versions, &a);
}

int srv_stat(struct ckptfs *fs, const char *job, const char *version,
	     struct ckpt_version_info *info)
{
	struct srv_args a = { .job = job, .version = version, .out = info };

	return srv_call(fs, op_stat, &a);
}

int srv_files(struct ckptfs *fs, const char *job, const char *version,
	      struct ckpt_file_info **out)
{
	struct srv_args a = { .job = job, .version = version, .out = out };

	return srv_call(fs, op_files, &a);
}

static int op_xattrs(struct ckpt_client *c, struct srv_args *a)
{
	return ckpt_getxattrs(c, a->job, a->version, a->path, a->buf, a->len);
}

int srv_xattrs(struct ckptfs *fs, const char *job, const char *version,
	       const char *path, void *buf, size_t cap)
{
	struct srv_args a = { .job = job, .version = version, .path = path,
			      .buf = buf, .len = cap };

	return srv_call(fs, op_xattrs, &a);
}

int srv_file(struct ckptfs *fs, const char *job, const char *version,
	     const char *path, struct ckpt_file_info *out)
{
	struct srv_args a = { .job = job, .version = version, .path = path,
			      .out = out };

	return srv_call(fs, op_file, &a);
}

int srv_read(struct ckptfs *fs, const char *job, const char *version,
	     const char *path, void *buf, size_t len, uint64_t off,
	     size_t *got)
{
	struct srv_args a = { .job = job, .version = version, .path = path,
			      .buf = buf, .len = len, .off = off, .got = got };

	return srv_call(fs, op_read, &a);
}

int srv_seek_data(struct ckptfs *fs, const char *job, const char *version,
		  const char *path, uint64_t off, uint64_t *data,
		  uint64_t *len)
{
	uint64_t run[2] = { 0, 0 };
	struct srv_args a = { .job = job, .version = version, .path = path,
			      .off = off, .out = run };
	int ret = srv_call(fs, op_seek_data, &a);

	*data = run[0];
	*len = run[1];
	return ret;
}

int srv_status(struct ckptfs *fs, struct ckpt_status *out)
{
	struct srv_args a = { .out = out };

	return srv_call(fs, op_status, &a);
}

int srv_wait_local(struct ckptfs *fs, const char *job, const char *version)
{
	struct srv_args a = { .job = job, .version = version };

	return srv_call(fs, op_wait_local, &a);
}

/* ---- the questions ------------------------------------------------------- */

/* Number of '/'-separated components of s. */
static unsigned ncomp(const char *s)
{
	unsigned n = 1;

	for (; *s; s++)
		n += *s == '/';
	return n;
}

int srv_below(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(s, prefix, n) && s[n] == '/';
}

int srv_shown_job(const struct ckptfs *fs, const char *job)
{
	return ncomp(job) == fs->jobdepth;
}

int srv_has_prefix(struct ckptfs *fs, const char *prefix)
{
	char (*jobs)[CKPT_JOB_MAX + 1] = NULL;
	int i, n, found = 0;

	n = srv_jobs(fs, &jobs);
	if (n < 0)
		return n;
	for (i = 0; i < n && !found; i++)
		found = srv_shown_job(fs, jobs[i]) &&
			srv_below(jobs[i], prefix);
	free(jobs);
	return found;
}

int srv_job(struct ckptfs *fs, const char *job, uint32_t *uid)
{
	struct ckpt_version_info *vers = NULL;
	int n;

	n = srv_versions(fs, job, &vers);
	if (n == -CKPT_ENOJOB || n == -ENOENT)
		return 0;
	if (n < 0)
		return n;
	if (n > 0 && uid)
		*uid = vers[0].uid;
	free(vers);
	return n > 0;
}

int srv_dir_entry(const struct ckpt_file_info *f)
{
	return attr_is_type(&f->attr, CKPT_ATTR_IFDIR);
}

int srv_visible(const struct ckpt_version_info *info)
{
	return info->state == CKPT_ST_OPEN || srv_committed(info);
}

int srv_committed(const struct ckpt_version_info *info)
{
	return info->state == CKPT_ST_SEALING || info->state == CKPT_ST_SEALED;
}

int srv_is_dir(struct ckptfs *fs, const char *job, const char *version,
	       const char *dir)
{
	struct ckpt_file_info *files = NULL;
	int i, n, found = 0;

	n = srv_files(fs, job, version, &files);
	if (n < 0)
		return n == -CKPT_ENOVERSION ? 0 : n;
	for (i = 0; i < n && !found; i++)
		found = srv_below(files[i].name, dir);
	free(files);
	return found;
}
