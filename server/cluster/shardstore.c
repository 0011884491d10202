/*
 * shardstore.c - the shards this node holds for its peers (see
 * shardstore.h).
 *
 * The design is that of the local store's manifests: the bytes go first,
 * anywhere and in any order (SHARD_PUT writes each stripe's chunk where it
 * belongs), and a small record written durably last says they are whole.
 * Sealing fsyncs the bytes before it reads them back for their CRCs (or,
 * shardstore_seal_known(), takes the CRCs the chunks came with, checked as
 * they were written), so the CRCs describe what is on stable storage, and
 * the record goes through a
 * temporary file, fsync, rename and directory fsync, so that after a crash a
 * shard is either held (its record decodes) or not (scan removes its bytes
 * and the owner resends).  Every name is built from checked parts, never
 * from the wire as it is, so nothing can escape root.
 *
 * There is no state but the files: the functions are plain blocking calls,
 * safe on any thread for different shards.  The one shared thing two shards
 * touch is their owner's directory: mkdir's EEXIST makes creating it safe,
 * and seal fsyncs root itself so that a shard is never durable on the
 * strength of another thread's mkdir.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "shardstore.h"
#include "sys.h"

#define OPEN_ID_DIGITS 16

/* ---- names ---------------------------------------------------------------- */

/* The longest name in an owner's directory: <16 hex>.<2 digits>.meta.bad */
#define LONGEST_NAME (OPEN_ID_DIGITS + 1 + 2 + 1 + sizeof("meta.bad") - 1)

/*
 * Every public entry checks its root and owner here first: the owner is one
 * safe component, and every path below root/owner fits in PATH_MAX, so that
 * shard_path() and owner_dir() cannot fail afterwards and their results
 * need no check.
 */
static int check_names(const char *root, const char *owner)
{
	if (!shardmeta_owner_ok(owner))
		return -CKPT_EBADNAME;
	if (strlen(root) + 1 + strlen(owner) + 1 + LONGEST_NAME >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static int owner_dir(char *out, const char *root, const char *owner)
{
	int n;

	if (!shardmeta_owner_ok(owner))
		return -CKPT_EBADNAME;
	n = snprintf(out, PATH_MAX, "%s/%s", root, owner);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* <root>/<owner>/<open_id>.<shard>.<ext> */
static int shard_path(char *out, const char *root, const char *owner,
		      uint64_t open_id, uint32_t shard, const char *ext)
{
	int n;

	if (!shardmeta_owner_ok(owner))
		return -CKPT_EBADNAME;
	n = snprintf(out, PATH_MAX, "%s/%s/%016" PRIx64 ".%" PRIu32 ".%s",
		     root, owner, open_id, shard, ext);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Split "<16 hex>.<shard>.<ext>"; 0, or -EINVAL for any other name. */
static int parse_name(const char *name, uint64_t *open_id, uint32_t *shard,
		      const char **ext)
{
	const char *p = name;
	uint64_t id = 0;
	uint32_t s = 0;
	int i;

	for (i = 0; i < OPEN_ID_DIGITS; i++, p++) {
		if (*p >= '0' && *p <= '9')
			id = id << 4 | (uint64_t)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			id = id << 4 | (uint64_t)(*p - 'a' + 10);
		else
			return -EINVAL;
	}
	if (*p++ != '.' || *p < '1' || *p > '9')
		return -EINVAL;
	for (i = 0; *p >= '0' && *p <= '9' && i < 2; i++, p++)
		s = s * 10 + (uint32_t)(*p - '0');
	if (*p++ != '.' || !s || s >= SHARDMETA_MAX_SHARDS)
		return -EINVAL;
	*open_id = id;
	*shard = s;
	*ext = p;
	return 0;
}

/* ---- small file helpers --------------------------------------------------- */

/* Make root/owner if it is missing; fsync root when this call made it. */
static int make_owner_dir(const char *root, const char *owner)
{
	char dir[PATH_MAX];
	int ret;

	ret = owner_dir(dir, root, owner);
	if (ret)
		return ret;
	if (mkdir(dir, 0700) == 0)
		return sys_fsync_dir(root);
	return errno == EEXIST ? 0 : -errno;
}

/* 1 if path exists, 0 if not, -errno if that cannot be told. */
static int exists(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

/* The whole of a regular file into a malloc'd *buf. */
static int read_whole(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	int fd, ret;

	*buf = NULL;
	*len = 0;
	fd = sys_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	ret = -EINVAL;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > SIZE_MAX)
		goto out_close;
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	ret = -ENOMEM;
	if (!*buf)
		goto out_close;
	ret = sys_pread_all(fd, *buf, *len, 0);
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
out_close:
	close(fd);
	return ret;
}

/* Open the .dat of m for reading; *size its size.  -ENOENT if missing. */
static int dat_open(const char *root, const struct shard_meta *m,
		    uint64_t *size)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, ret;

	*size = 0;
	shard_path(path, root, m->owner, m->open_id, m->shard, "dat");
	fd = sys_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* ---- put ------------------------------------------------------------------ */

int shardstore_init(const char *root)
{
	char parent[PATH_MAX];
	char *slash;

	if (mkdir(root, 0700) < 0)
		return errno == EEXIST ? 0 : -errno;
	if (strlen(root) >= sizeof(parent))
		return -ENAMETOOLONG;
	strcpy(parent, root);
	/* "a/b/" is made in "a": the slashes at the end are not the cut. */
	slash = parent + strlen(parent);
	while (slash > parent + 1 && slash[-1] == '/')
		*--slash = '\0';
	slash = strrchr(parent, '/');
	if (!slash)
		return sys_fsync_dir(".");
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	return sys_fsync_dir(parent);
}

int shardstore_put(const char *root, const char *owner, uint64_t open_id,
		   uint32_t shard, uint64_t off, const void *buf, size_t len)
{
	char path[PATH_MAX];
	int fd, ret, flags, direct;

	if (!shard || shard >= SHARDMETA_MAX_SHARDS || !len ||
	    off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EINVAL;
	ret = check_names(root, owner);
	if (ret)
		return ret;
	shard_path(path, root, owner, open_id, shard, "meta");
	ret = exists(path);
	if (ret)
		return ret > 0 ? -EEXIST : ret;
	ret = make_owner_dir(root, owner);
	if (ret)
		return ret;
	shard_path(path, root, owner, open_id, shard, "dat");
	flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	/* Aligned chunks (the owners' are) go around the page cache: no copy
	 * into it, nothing left to write back at the seal.  A file system
	 * without O_DIRECT (tmpfs before 6.6) gets buffered writes. */
	direct = !((uintptr_t)buf % SHARDSTORE_ALIGN) &&
		 !(off % SHARDSTORE_ALIGN) && !(len % SHARDSTORE_ALIGN);
	fd = sys_open(path, flags | (direct ? O_DIRECT : 0), 0600);
	if (fd == -EINVAL && direct) {
		direct = 0;
		fd = sys_open(path, flags, 0600);
	}
	if (fd < 0)
		return fd;
	ret = sys_pwrite_all(fd, buf, len, (off_t)off);
	/* A buffered chunk's writeback starts now, so that the seal's fsync
	 * waits for the last chunks only, not for the whole shard at once.
	 * A hint: its result is ignored (the seal's fsync is what says the
	 * bytes are durable), and it waits at most for room in the device's
	 * queue. */
	if (ret == 0 && !direct)
		sync_file_range(fd, (off_t)off, (off_t)len,
				SYNC_FILE_RANGE_WRITE);
	close(fd);
	return ret;
}

/* ---- seal ----------------------------------------------------------------- */

/* The same shard: every field but crcs and the manifest. */
static int same_shard(const struct shard_meta *a, const struct shard_meta *b)
{
	return !strcmp(a->owner, b->owner) && !strcmp(a->job, b->job) &&
	       !strcmp(a->version, b->version) && a->uid == b->uid &&
	       a->seq == b->seq && a->open_id == b->open_id &&
	       a->k == b->k && a->m == b->m && a->shard == b->shard &&
	       a->chunk == b->chunk && a->stream_len == b->stream_len &&
	       a->nstripes == b->nstripes;
}

static int meta_write(const char *root, const struct shard_meta *m);

/* Is the shard sealed already?  -ENOENT if not; 0 if so, the same shard
 * (the record's crcs handed to m; a new manifest, the owner's holder record
 * changed, is written over the old one first); -EEXIST if another shard;
 * -CKPT_ECORRUPT. */
static int sealed_already(const char *root, struct shard_meta *m)
{
	char path[PATH_MAX];
	struct shard_meta old;
	uint8_t *img;
	size_t len;
	int ret;

	shard_path(path, root, m->owner, m->open_id, m->shard, "meta");
	ret = read_whole(path, &img, &len);
	if (ret)
		return ret == -EINVAL ? -CKPT_ECORRUPT : ret;
	ret = shardmeta_decode(img, len, &old);
	free(img);
	if (ret)
		return ret == -ENOMEM ? ret : -CKPT_ECORRUPT;
	if (!same_shard(m, &old)) {
		shardmeta_release(&old);
		return -EEXIST;
	}
	m->crcs = old.crcs;
	old.crcs = NULL;
	ret = 0;
	if (m->manlen != old.manlen || memcmp(m->man, old.man, m->manlen))
		ret = meta_write(root, m);
	shardmeta_release(&old);
	if (ret) {
		free(m->crcs);
		m->crcs = NULL;
	}
	return ret;
}

/* The .dat to seal, fsync'd and of the right size.  An empty shard's is
 * made here: no chunk of it was ever put. */
static int seal_open_dat(const char *root, const struct shard_meta *m)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, ret, flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;

	if (!m->nstripes) {
		ret = make_owner_dir(root, m->owner);
		if (ret)
			return ret;
		flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	}
	shard_path(path, root, m->owner, m->open_id, m->shard, "dat");
	fd = sys_open(path, flags, 0600);
	if (fd < 0)
		return fd == -ENOENT ? -ENODATA : fd;
	ret = sys_fsync(fd);
	if (ret)
		goto out_close;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	ret = -ENODATA;
	if (!S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != m->nstripes * m->chunk)
		goto out_close;
	return fd;

out_close:
	close(fd);
	return ret;
}

/* The CRC32C of each chunk of fd, into a malloc'd *out (NULL if none). */
static int dat_crcs(int fd, const struct shard_meta *m, uint32_t **out)
{
	uint32_t *crcs = NULL;
	uint8_t *buf;
	uint64_t i;
	int ret = 0;

	*out = NULL;
	if (!m->nstripes)
		return 0;
	if (m->nstripes > SIZE_MAX / sizeof(*crcs))
		return -ENOMEM;
	buf = malloc(m->chunk);
	crcs = malloc(m->nstripes * sizeof(*crcs));
	if (!buf || !crcs) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < m->nstripes; i++) {
		ret = sys_pread_all(fd, buf, m->chunk, (off_t)(i * m->chunk));
		if (ret)
			goto out_free;
		crcs[i] = crc32c(buf, m->chunk);
	}
	*out = crcs;
	crcs = NULL;
out_free:
	free(crcs);
	free(buf);
	return ret;
}

/* Write m's record durably: tmp, fsync, rename, fsync the owner's
 * directory and root.  On failure no record is left behind. */
static int meta_write(const char *root, const struct shard_meta *m)
{
	char tmp[PATH_MAX], dst[PATH_MAX], dir[PATH_MAX];
	size_t cap = shardmeta_size(m);
	uint8_t *img;
	long len;
	int ret;

	shard_path(tmp, root, m->owner, m->open_id, m->shard, "tmp");
	shard_path(dst, root, m->owner, m->open_id, m->shard, "meta");
	owner_dir(dir, root, m->owner);
	img = cap == SIZE_MAX ? NULL : malloc(cap);
	if (!img)
		return -ENOMEM;
	len = shardmeta_encode(m, img, cap);
	ret = len < 0 ? (int)len : sys_write_file(tmp, img, (size_t)len, 0600);
	free(img);
	if (ret)
		goto out_unlink_tmp;
	ret = sys_rename(tmp, dst);
	if (ret)
		goto out_unlink_tmp;
	ret = sys_fsync_dir(dir);
	if (!ret)
		ret = sys_fsync_dir(root);
	if (ret) {
		/* Not known durable, so not sealed: the record goes, so that
		 * a retry seals again rather than finding it. */
		unlink(dst);
		sys_fsync_dir(dir);
	}
	return ret;

out_unlink_tmp:
	unlink(tmp);
	return ret;
}

/* shardstore_seal(), with the chunks' CRCs known (not re-read) or not. */
static int seal(const char *root, struct shard_meta *m, const uint32_t *known)
{
	uint32_t *crcs = NULL;
	int fd, ret;

	if (m->crcs)
		return -EINVAL;
	ret = check_names(root, m->owner);
	if (ret)
		return ret;
	if (shardmeta_check(m))
		return -EINVAL;
	ret = sealed_already(root, m);
	if (ret != -ENOENT)
		return ret;
	fd = seal_open_dat(root, m);
	if (fd < 0)
		return fd;
	if (known && m->nstripes) {
		crcs = malloc(m->nstripes * sizeof(*crcs));
		ret = crcs ? 0 : -ENOMEM;
		if (crcs)
			memcpy(crcs, known, m->nstripes * sizeof(*crcs));
	} else {
		ret = dat_crcs(fd, m, &crcs);
	}
	close(fd);
	if (ret)
		return ret;
	m->crcs = crcs;
	ret = meta_write(root, m);
	if (ret) {
		free(m->crcs);
		m->crcs = NULL;
	}
	return ret;
}

int shardstore_seal(const char *root, struct shard_meta *m)
{
	return seal(root, m, NULL);
}

int shardstore_seal_known(const char *root, struct shard_meta *m,
			  const uint32_t *crcs)
{
	if (m->nstripes && m->nstripes > SIZE_MAX / sizeof(*crcs))
		return -EINVAL;
	return seal(root, m, crcs);
}

/* ---- verify and read ------------------------------------------------------ */

static int check_held(const char *root, const struct shard_meta *m)
{
	int ret = check_names(root, m->owner);

	if (ret)
		return ret;
	if (shardmeta_check(m) || (m->nstripes && !m->crcs))
		return -EINVAL;
	return 0;
}

int shardstore_verify(const char *root, const struct shard_meta *m,
		      uint64_t *bad)
{
	uint64_t i, size;
	uint8_t *buf;
	int fd, ret;

	ret = check_held(root, m);
	if (ret)
		return ret;
	fd = dat_open(root, m, &size);
	if (fd < 0)
		return fd;
	ret = -ENOMEM;
	buf = malloc(m->chunk);
	if (!buf)
		goto out_close;
	for (i = 0, ret = 0; i < m->nstripes; i++) {
		ret = -CKPT_ECORRUPT;
		if (size / m->chunk <= i)
			break;
		ret = sys_pread_all(fd, buf, m->chunk, (off_t)(i * m->chunk));
		if (ret)
			break;
		ret = -CKPT_ECORRUPT;
		if (crc32c(buf, m->chunk) != m->crcs[i])
			break;
		ret = 0;
	}
	if (ret == -CKPT_ECORRUPT && bad)
		*bad = i;
	free(buf);
out_close:
	close(fd);
	return ret;
}

int shardstore_read(const char *root, const struct shard_meta *m,
		    uint64_t stripe, void *buf)
{
	uint64_t size;
	int fd, ret;

	ret = check_held(root, m);
	if (ret)
		return ret;
	if (stripe >= m->nstripes)
		return -EINVAL;
	fd = dat_open(root, m, &size);
	if (fd < 0)
		return fd;
	ret = -CKPT_ECORRUPT;
	if (size / m->chunk <= stripe)
		goto out_close;
	ret = sys_pread_all(fd, buf, m->chunk, (off_t)(stripe * m->chunk));
	if (!ret && crc32c(buf, m->chunk) != m->crcs[stripe])
		ret = -CKPT_ECORRUPT;
out_close:
	close(fd);
	return ret;
}

/* ---- drop ----------------------------------------------------------------- */

/* Unlink the files of part open_id in dir whose extension is ext.  Returns
 * how many went, or -errno. */
static int unlink_ext(DIR *d, const char *dir, uint64_t open_id,
		      uint32_t only, const char *ext)
{
	char path[PATH_MAX];
	struct dirent *de;
	const char *e;
	uint64_t id;
	uint32_t shard;
	int ret, n = 0;

	rewinddir(d);
	while ((de = readdir(d))) {
		if (parse_name(de->d_name, &id, &shard, &e) || id != open_id ||
		    (only && shard != only) || strcmp(e, ext))
			continue;
		ret = snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (ret < 0 || ret >= (int)sizeof(path))
			return -ENAMETOOLONG;
		ret = sys_unlink(path);
		if (ret && ret != -ENOENT)
			return ret;
		n++;
	}
	return n;
}

int shardstore_drop(const char *root, const char *owner, uint64_t open_id,
		    uint32_t shard)
{
	static const char *const order[] = { "meta", "dat", "tmp" };
	char dir[PATH_MAX];
	unsigned i;
	DIR *d;
	int ret;

	ret = check_names(root, owner);
	if (ret)
		return ret;
	owner_dir(dir, root, owner);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	/* Records first, made durable, so that a crash part-way leaves only
	 * bytes without records, which scan removes quietly. */
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		ret = unlink_ext(d, dir, open_id, shard, order[i]);
		if (ret > 0)
			ret = sys_fsync_dir(dir);
		if (ret < 0)
			break;
		ret = 0;
	}
	closedir(d);
	return ret;
}

/* ---- scan ----------------------------------------------------------------- */

/* One owner's directory being scanned. */
struct scan_dir {
	const char *root;
	const char *owner;
	char path[PATH_MAX];          /* root/owner */
	DIR *d;
	int changed;                  /* an entry went or was renamed */
	shardstore_scan_fn fn;
	void *arg;
	struct shardstore_scan_stats *st;
};

static int scan_join(char *out, const struct scan_dir *sd, const char *name,
		     const char *suffix)
{
	int n = snprintf(out, PATH_MAX, "%s/%s%s", sd->path, name, suffix);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Rename base.meta and base.dat to <name>.bad. */
static int set_aside(struct scan_dir *sd, uint64_t open_id, uint32_t shard)
{
	static const char *const exts[] = { "meta", "dat" };
	char from[PATH_MAX], to[PATH_MAX];
	unsigned i;
	int ret;

	for (i = 0; i < 2; i++) {
		shard_path(from, sd->root, sd->owner, open_id, shard, exts[i]);
		ret = snprintf(to, sizeof(to), "%s.bad", from);
		if (ret < 0 || ret >= (int)sizeof(to))
			return -ENAMETOOLONG;
		ret = sys_rename(from, to);
		if (ret && ret != -ENOENT)
			return ret;
	}
	sd->changed = 1;
	sd->st->bad++;
	return 0;
}

/* Does the record m agree with its name and have all its bytes? */
static int record_fits(const struct scan_dir *sd, const struct shard_meta *m,
		       uint64_t open_id, uint32_t shard)
{
	char path[PATH_MAX];
	struct stat st;

	if (strcmp(m->owner, sd->owner) || m->open_id != open_id ||
	    m->shard != shard)
		return 0;
	shard_path(path, sd->root, sd->owner, open_id, shard, "dat");
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	return (uint64_t)st.st_size == m->nstripes * m->chunk;
}

/* One .meta: handed to fn if it is a held shard's, else set aside. */
static int scan_meta(struct scan_dir *sd, const char *name, uint64_t open_id,
		     uint32_t shard)
{
	char path[PATH_MAX];
	struct shard_meta m;
	uint8_t *img;
	size_t len;
	int ret;

	ret = scan_join(path, sd, name, "");
	if (ret)
		return ret;
	ret = read_whole(path, &img, &len);
	if (ret == -ENOENT)
		return 0;               /* gone since readdir */
	if (ret == -ENOMEM)
		return ret;
	if (ret)                        /* unreadable: not held */
		return set_aside(sd, open_id, shard);
	ret = shardmeta_decode(img, len, &m);
	if (ret == -ENOMEM)
		goto out_free;
	if (ret || !record_fits(sd, &m, open_id, shard)) {
		ret = set_aside(sd, open_id, shard);
		goto out_release;
	}
	sd->st->held++;
	ret = sd->fn ? sd->fn(sd->arg, &m, img, len) : 0;
out_release:
	shardmeta_release(&m);
out_free:
	free(img);
	return ret;
}

/* A .dat with no .meta (never sealed), or a .tmp: removed. */
static int scan_remove(struct scan_dir *sd, const char *name,
		       uint64_t open_id, uint32_t shard, int is_tmp)
{
	char path[PATH_MAX];
	int ret;

	if (!is_tmp) {
		shard_path(path, sd->root, sd->owner, open_id, shard, "meta");
		ret = exists(path);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	ret = scan_join(path, sd, name, "");
	if (ret)
		return ret;
	ret = sys_unlink(path);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	sd->changed = 1;
	if (is_tmp)
		sd->st->tmp++;
	else
		sd->st->partial++;
	return 0;
}

/* Three passes over the directory: .tmp, then .meta (which may set .dat
 * aside), then the .dat left without a .meta. */
static int scan_owner(struct scan_dir *sd)
{
	static const char *const pass[] = { "tmp", "meta", "dat" };
	struct dirent *de;
	const char *ext;
	uint64_t id;
	uint32_t shard;
	unsigned i;
	int ret = 0, sync;

	for (i = 0; i < 3 && !ret; i++) {
		rewinddir(sd->d);
		while (!ret && (de = readdir(sd->d))) {
			if (parse_name(de->d_name, &id, &shard, &ext) ||
			    strcmp(ext, pass[i]))
				continue;
			if (i == 1)
				ret = scan_meta(sd, de->d_name, id, shard);
			else
				ret = scan_remove(sd, de->d_name, id, shard,
						  i == 0);
		}
	}
	if (sd->changed) {
		sync = sys_fsync_dir(sd->path);
		ret = ret ? ret : sync;
	}
	return ret;
}

static int scan_one_owner(const char *root, const char *owner,
			  shardstore_scan_fn fn, void *arg,
			  struct shardstore_scan_stats *st)
{
	struct scan_dir sd = { .root = root, .owner = owner, .fn = fn,
			       .arg = arg, .st = st };
	int ret;

	ret = check_names(root, owner);
	if (ret)
		return ret;
	owner_dir(sd.path, root, owner);
	sd.d = opendir(sd.path);
	if (!sd.d)
		return errno == ENOENT ? 0 : -errno;
	ret = scan_owner(&sd);
	closedir(sd.d);
	return ret;
}

int shardstore_scan(const char *root, shardstore_scan_fn fn, void *arg,
		    struct shardstore_scan_stats *stats)
{
	struct shardstore_scan_stats local;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = 0;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	d = opendir(root);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d))) {
		if (!shardmeta_owner_ok(de->d_name))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		ret = scan_one_owner(root, de->d_name, fn, arg, stats);
	}
	closedir(d);
	return ret;
}

/* ---- room ----------------------------------------------------------------- */

uint64_t shardstore_room_left(const struct shardstore_room *r)
{
	uint64_t left = r->fs_room > r->keep ? r->fs_room - r->keep : 0;

	return left < r->limit_room ? left : r->limit_room;
}

int shardstore_room_fits(const struct shardstore_room *r, uint64_t ask)
{
	return ask <= shardstore_room_left(r) ? 0 : -ENOSPC;
}

uint64_t shardstore_put_ask(uint64_t claim, uint64_t total, uint64_t end,
			    uint64_t *claim_out)
{
	uint64_t want = claim;

	if (total > want)
		want = total;
	if (end > want)
		want = end;
	if (claim_out)
		*claim_out = want;
	return want - claim;
}
