/*
 * path.c - how a path under the mount maps to ckpt names.
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
 *
 * Layer: the namespace (ns_i.h).  It calls pend.c (alias_resolve) of its
 * own layer; how ckpt's errors map to a FUSE operation's is log.c's, in
 * the connection layer below.
 */
#include <errno.h>
#include <string.h>

#include "ns_i.h"
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
