/*
 * path.c - how a path under the mount maps to ckpt names, and how ckpt's
 * errors map to what a FUSE operation returns.
 *
 * MOUNT/<job>/<version>/<file path...>, where the job is the first
 * `jobdepth` components (ckpt job names may hold '/', "llama70b/run3" with
 * jobdepth=2).  A path with fewer components than jobdepth is a leading part
 * of job names (P_PREFIX).  The version component is shown as ckptd names it,
 * except that a version begun through `mkdir VER.tmp` is shown as "VER.tmp"
 * until it is committed; path_parse() keeps the shown name and the version
 * table (vers.c) resolves it (after a commit that no rename made, VER.tmp
 * stays an alias of VER: vers.c).  Names are checked with ckpt's own rules
 * (lib/names.h): a path that ckpt cannot hold cannot exist in the mount.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ckptfs_i.h"
#include "names.h"

/* Append component [s, s+n) to out (cap bytes) after a '/' if not empty. */
static int append(char *out, size_t cap, const char *s, size_t n)
{
	size_t len = strlen(out);

	if (len + (len ? 1 : 0) + n + 1 > cap)
		return -ENAMETOOLONG;
	if (len)
		out[len++] = '/';
	memcpy(out + len, s, n);
	out[len + n] = '\0';
	return 0;
}

int path_parse(struct ckptfs *fs, const char *path, struct fs_path *p)
{
	int ret = path_parse_raw(fs, path, p);

	if (ret == 0)
		alias_resolve(fs, p);
	return ret;
}

int path_parse_raw(const struct ckptfs *fs, const char *path,
		   struct fs_path *p)
{
	const char *s = path, *e;
	unsigned n = 0;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	p->kind = P_ROOT;
	for (;;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchrnul(s, '/');
		if (e - s > 255)
			return -ENAMETOOLONG;
		if (n < fs->jobdepth)
			ret = append(p->job, sizeof(p->job), s, e - s);
		else if (n == fs->jobdepth)
			ret = append(p->vdisp, sizeof(p->vdisp), s, e - s);
		else
			ret = append(p->file, sizeof(p->file), s, e - s);
		if (ret < 0)
			return ret;
		n++;
		s = e;
	}
	if (n == 0)
		return 0;
	if (n < fs->jobdepth) {
		p->kind = P_PREFIX;
		p->depth = n;
	} else if (n == fs->jobdepth) {
		p->kind = P_JOB;
	} else if (n == fs->jobdepth + 1) {
		p->kind = P_VERSION;
	} else {
		p->kind = P_FILE;
		p->depth = n - fs->jobdepth - 1;
	}
	if (name_check_job(p->job))
		return -CKPT_EBADNAME;
	if (p->kind >= P_VERSION && name_check_version(p->vdisp))
		return -CKPT_EBADNAME;
	if (p->kind == P_FILE && name_check_path(p->file))
		return -CKPT_EBADNAME;
	return 0;
}

int path_tmp_stem(const char *vdisp, char *out)
{
	size_t n = strlen(vdisp), k = strlen(FS_TMP_SUFFIX);
	char stem[CKPT_VERSION_MAX + 1];

	if (n <= k || strcmp(vdisp + n - k, FS_TMP_SUFFIX))
		return 0;
	memcpy(stem, vdisp, n - k);
	stem[n - k] = '\0';
	if (name_check_version(stem))
		return 0;
	strcpy(out, stem);
	return 1;
}

const char *path_base(const struct fs_path *p, size_t *dirlen)
{
	const char *slash = strrchr(p->file, '/');

	*dirlen = slash ? (size_t)(slash - p->file) : 0;
	return slash ? slash + 1 : p->file;
}

int path_is_marker(const struct fs_path *p)
{
	return p->kind == P_FILE && !strcmp(p->file, FS_MARKER);
}

int fs_errno(int err)
{
	if (err >= 0)
		return err;
	switch (-err) {
	case CKPT_ESEALED:
		return -EROFS;
	case CKPT_ENOVERSION:
	case CKPT_ENOJOB:
		return -ENOENT;
	case CKPT_EBADNAME:
		return -EINVAL;
	case CKPT_ECORRUPT:
	case CKPT_EABORTED:
	case CKPT_EFAILED:
	case CKPT_EBADMAGIC:
	case CKPT_EVERSION:
	case CKPT_EPROTO:
		return -EIO;
	/* ckptd unreachable: not ENOTCONN, which reads as a dead mount. */
	case EPIPE:
	case ECONNRESET:
	case ECONNREFUSED:
	case ENOTCONN:
	case ECONNABORTED:
		return -EIO;
	}
	if (-err >= CKPT_EFIRST || -err > 4095)
		return -EIO;
	return err;
}

void fs_log(enum fuse_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fuse_log(level, "ckptfs: %s\n", msg);
}
