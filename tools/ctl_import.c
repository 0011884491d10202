/*
 * ctl_import.c - `ckptctl import JOB VERSION DIR`: bring an existing
 * checkpoint directory (written by any tool, anywhere) into ckpt as a
 * committed version, so that it climbs the levels, drains, and restores like
 * one written through the API.
 *
 * Every regular file under DIR becomes a file of the version under its path
 * relative to DIR; names that ckpt refuses (see ckpt.h) stop the import
 * before anything is written.  Each file is opened again below DIR without
 * following a link (open_beneath()), so a component changed since the walk
 * cannot lead out of DIR.  Files are read in 8 MiB pieces and written
 * with ckpt_write(), their holes (SEEK_HOLE) skipped and left to a truncate
 * to the file's size, so that a sparse file stays sparse; the version is
 * committed and waited for to LOCAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl.h"
#include "progress.h"

#define PIECE (8u << 20)

/* nftw() has no argument pointer: the walk's state lives here. */
static struct {
	size_t root_len;
	char **paths;
	uint64_t *sizes;
	size_t n, cap;
	uint64_t total;
	int err;
} walk;

static int collect(const char *path, const struct stat *st, int type,
		   struct FTW *ftw)
{
	char **p;
	uint64_t *s;

	(void)ftw;
	if (type != FTW_F)
		return 0;
	if (walk.n == walk.cap) {
		walk.cap = walk.cap ? walk.cap * 2 : 64;
		p = realloc(walk.paths, walk.cap * sizeof(*p));
		s = realloc(walk.sizes, walk.cap * sizeof(*s));
		if (p)
			walk.paths = p;
		if (s)
			walk.sizes = s;
		if (!p || !s) {
			walk.err = -ENOMEM;
			return 1;
		}
	}
	walk.paths[walk.n] = strdup(path + walk.root_len + 1);
	if (!walk.paths[walk.n]) {
		walk.err = -ENOMEM;
		return 1;
	}
	walk.sizes[walk.n++] = st->st_size;
	walk.total += st->st_size;
	return 0;
}

/*
 * Open rel below the directory rootfd for reading, as the walk saw it: never
 * through a symbolic link nor out of the directory (a component swapped
 * for a link to /etc after the walk, while root imports a user's
 * directory), never blocking (a FIFO swapped in), and only a regular file
 * (-EINVAL otherwise).  openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS),
 * Linux 5.6; without it, each component is opened O_NOFOLLOW in turn.
 */
static int open_beneath(int rootfd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
	const char *base;
	struct stat st;
	int fd, dfd, err;

	fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {        /* a kernel before 5.6 */
		err = ctl_open_parent(rootfd, rel, 0, &dfd, &base);
		if (err)
			return err;
		fd = openat(dfd, base, (int)how.flags);
		err = errno;
		close(dfd);
		errno = err;
	}
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The next range of data at or after off: [*data, *end), or *data ==
 * size when only holes are left.  A file system without SEEK_DATA has
 * data everywhere. */
static void next_data(int fd, uint64_t off, uint64_t size, uint64_t *data,
		      uint64_t *end)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA), h;

	*data = off;
	*end = size;
	if (d < 0) {
		if (errno == ENXIO)             /* a hole to the end */
			*data = size;
		return;
	}
	*data = (uint64_t)d < size ? (uint64_t)d : size;
	h = lseek(fd, d, SEEK_HOLE);
	if (h >= 0 && (uint64_t)h < size)
		*end = (uint64_t)h;
}

/* A file's data ranges are written; its holes are not (a truncate to its
 * size makes them, as it makes an empty file exist). */
static int import_file(struct ckpt_version *v, int rootfd, const char *rel,
		       uint8_t *buf, struct progress *pg, uint64_t *done)
{
	uint64_t off = 0, data, end, size, want;
	struct stat st;
	ssize_t n = 0;
	int fd, err = 0;

	fd = open_beneath(rootfd, rel);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	size = (uint64_t)st.st_size;
	while (!err && off < size) {
		next_data(fd, off, size, &data, &end);
		*done += data - off;            /* a hole */
		for (off = data; off < end; off += (uint64_t)n) {
			want = end - off < PIECE ? end - off : PIECE;
			n = pread(fd, buf, (size_t)want, (off_t)off);
			if (n <= 0) {
				err = n < 0 ? -errno : 0;
				size = off;     /* it shrank: what is there */
				break;
			}
			err = ckpt_write(v, rel, buf, (size_t)n, off);
			if (err)
				break;
			*done += (uint64_t)n;
			progress_update(pg, *done, rel);
		}
	}
	if (!err)
		err = ckpt_truncate(v, rel, size);
out:
	close(fd);
	return err;
}

static int import_run(struct ctl *ctl, const char *job, const char *version,
		      const char *root)
{
	struct ckpt_version *v = NULL;
	struct progress pg;
	uint64_t done = 0;
	uint8_t *buf;
	size_t i;
	int err, rootfd;

	buf = malloc(PIECE);
	if (!buf)
		return ctl_fail(-ENOMEM, "import");
	err = ckpt_begin(ctl->c, job, version, &v);
	if (err) {
		free(buf);
		return ctl_fail(err, "import %s/%s", job, version);
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = rootfd < 0 ? -errno : 0;
	progress_init(&pg, "import", walk.total);
	for (i = 0; i < walk.n && !err; i++)
		err = import_file(v, rootfd, walk.paths[i], buf, &pg, &done);
	progress_done(&pg);
	if (rootfd >= 0)
		close(rootfd);
	free(buf);
	if (err) {
		ckpt_abort(v);
		ckpt_version_free(v);
		return ctl_fail(err, "import %s/%s", root,
				i ? walk.paths[i - 1] : "");
	}
	err = ckpt_commit(v);
	if (!err)
		err = ckpt_wait(v, CKPT_LOCAL, -1);
	ckpt_version_free(v);
	if (err)
		return ctl_fail(err, "import %s/%s: commit", job, version);
	printf("imported %zu files, %" PRIu64 " bytes into %s/%s\n", walk.n,
	       walk.total, job, version);
	return CTL_EXIT_OK;
}

int cmd_import(struct ctl *ctl, int argc, char **argv)
{
	char root[PATH_MAX];
	size_t i;
	int rc;

	if (argc != 4)
		return ctl_usage("import: expected JOB VERSION DIR");
	if (!realpath(argv[3], root))
		return ctl_fail(-errno, "import: %s", argv[3]);
	memset(&walk, 0, sizeof(walk));
	walk.root_len = strlen(root);
	if (nftw(root, collect, 32, FTW_PHYS) < 0 && !walk.err)
		walk.err = -errno;
	rc = walk.err ? ctl_fail(walk.err, "import: reading %s", root) : -1;
	for (i = 0; rc < 0 && i < walk.n; i++) {
		if (strlen(walk.paths[i]) > CKPT_PATH_MAX2)
			rc = ctl_failx("import: %s: path too long", walk.paths[i]);
	}
	if (rc < 0 && !walk.n)
		rc = ctl_failx("import: %s holds no files", root);
	if (rc < 0 && ctl_connect(ctl) == 0)
		rc = import_run(ctl, argv[1], argv[2], root);
	else if (rc < 0)
		rc = CTL_EXIT_FAIL;
	for (i = 0; i < walk.n; i++)
		free(walk.paths[i]);
	free(walk.paths);
	free(walk.sizes);
	return rc;
}
