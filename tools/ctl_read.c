/*
 * ctl_read.c - the commands that read a version back: verify and restore.
 *
 * Both walk the version's file list and pull every byte through
 * ckpt_read_sink() (no copy out of staging); ckptd checks each stored
 * record's CRC32C on the way and answers -CKPT_ECORRUPT rather than hand
 * out damaged bytes.  verify only
 * counts and keeps going past damaged files so that it can name all of
 * them; restore writes the bytes under DIR and stops at the first error.
 *
 * restore never trusts a path to stay inside DIR, even though ckptd
 * validates names: a path must be relative, without empty, "." or ".."
 * components, and the directories under DIR are walked one component at a
 * time with O_NOFOLLOW, so a symlink planted inside DIR cannot redirect a
 * write.  Each file is written to a temporary name, made durable (fsync, or
 * one syncfs for the regular files) and renamed into place, so that a crash
 * leaves either the old file or the complete new one; the directories are
 * fsync'd before restore reports success.
 *
 * restore pulls the regular files first, through several connections at
 * once (ctl_lanes.h: pieces in flight while earlier ones are written), then
 * the rest in listed order (second names of hard links, symbolic links,
 * special files, directory entries), then the directories' attributes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "attr.h"
#include "codec.h"
#include "ctl.h"
#include "ctl_fmt.h"
#include "ctl_json.h"
#include "ctl_lanes.h"
#include "progress.h"

#define RESTORE_LANES 4        /* reads in flight (ctl_lanes.h) */

/* What is being read, shared by verify and restore. */
struct rd {
	struct ckpt_client *c;
	const char *job;
	char version[CKPT_VERSION_MAX + 1];
	struct ckpt_file_info *files;  /* owned */
	int nfiles;
	uint64_t total;                /* sum of file sizes */
	uint64_t done;                 /* bytes read so far */
	struct progress prog;
};

static void rd_release(struct rd *r)
{
	progress_done(&r->prog);
	free(r->files);
}

/* Check the version is committed and load its file list. */
static int rd_open(struct rd *r, const char *label)
{
	struct ckpt_version_info vi;
	int n, i, err;

	err = ctl_stat_version(r->c, r->job, r->version, &vi);
	if (err)
		return ctl_fail(err, "%s %s/%s", label, r->job, r->version);
	if (vi.state != CKPT_ST_SEALED && vi.state != CKPT_ST_SEALING)
		return ctl_failx("%s %s/%s: version is %s, not committed", label,
				 r->job, r->version, ckpt_state_name(vi.state));
	n = ckpt_list_files2(r->c, r->job, r->version, &r->files,
			     sizeof(*r->files));
	if (n < 0)
		return ctl_fail(n, "%s %s/%s: list files", label, r->job,
				r->version);
	r->nfiles = n;
	for (i = 0; i < n; i++)
		r->total += r->files[i].size;
	progress_init(&r->prog, label, r->total);
	return 0;
}

/* A file being read by rd_file(), and where its pieces go. */
struct rd_pass {
	struct rd *r;
	const struct ckpt_file_info *f;
	ckpt_sink_fn sink;        /* or NULL */
	void *arg;
};

static int rd_piece(void *arg, const void *data, size_t len, uint64_t off)
{
	struct rd_pass *p = arg;
	int err = p->sink ? p->sink(p->arg, data, len, off) : 0;

	if (err)
		return err;
	p->r->done += len;
	progress_update(&p->r->prog, p->r->done, p->f->name);
	return 0;
}

/*
 * Read one whole file through ckpt_read_sink(), handing each piece to sink
 * (may be NULL: verify needs no copy of the bytes, ckptd has checked them).
 * *got is the number of bytes read; it is short of the file's size only
 * when the server's data ended early, which returns -ENODATA.
 */
static int rd_file(struct rd *r, const struct ckpt_file_info *f,
		   ckpt_sink_fn sink, void *arg, uint64_t *got)
{
	struct rd_pass p = { .r = r, .f = f, .sink = sink, .arg = arg };
	size_t nread = 0;
	int err;

	err = ckpt_read_sink(r->c, r->job, r->version, f->name, f->size, 0,
			     rd_piece, &p, &nread);
	*got = nread;
	if (err)
		return err;
	return nread < f->size ? -ENODATA : 0;
}

/* A file verify found damaged. */
struct bad {
	int idx;       /* into rd.files */
	int err;
	uint64_t got;  /* bytes read before the error */
};

static void bad_print(const struct rd *r, const struct bad *b)
{
	const struct ckpt_file_info *f = &r->files[b->idx];

	if (b->err == -ENODATA)
		printf("corrupt: %s: data ends at %" PRIu64 " of %" PRIu64
		       " bytes\n", f->name, b->got, f->size);
	else
		printf("corrupt: %s: %s (read at offset %" PRIu64 ")\n",
		       f->name, ckpt_strerror(b->err), b->got);
	fflush(stdout);
}

static void verify_json(const struct rd *r, const struct bad *bad, int nbad,
			uint64_t verified, uint64_t ns)
{
	struct jw w;
	int i;

	jw_init(&w, stdout);
	jw_obj(&w);
	jw_kstr(&w, "job", r->job);
	jw_kstr(&w, "version", r->version);
	jw_kbool(&w, "ok", nbad == 0);
	jw_ku64(&w, "files", (uint64_t)r->nfiles);
	jw_ku64(&w, "bytes", r->total);
	jw_ku64(&w, "verified_bytes", verified);
	jw_kdbl(&w, "elapsed_s", fmt_secs(ns));
	jw_key(&w, "corrupt");
	jw_arr(&w);
	for (i = 0; i < nbad; i++) {
		jw_obj(&w);
		jw_kstr(&w, "path", r->files[bad[i].idx].name);
		jw_ki64(&w, "error_code", bad[i].err);
		jw_kstr(&w, "error", ckpt_strerror(bad[i].err));
		jw_ku64(&w, "offset", bad[i].got);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_done(&w);
}

/* Errors that mean "this file is damaged", as opposed to "cannot go on". */
static int is_damage(int err)
{
	return err == -CKPT_ECORRUPT || err == -EIO || err == -ENODATA;
}

static int verify_run(struct ctl *ctl, struct rd *r)
{
	char size[FMT_LEN], dur[FMT_LEN], rate[FMT_LEN];
	struct bad *bad = NULL;
	uint64_t t0 = ctl_now_ns(), got, ns, verified = 0;
	int i, err, nbad = 0, rc;

	if (r->nfiles) {
		bad = calloc((size_t)r->nfiles, sizeof(*bad));
		if (!bad)
			return ctl_fail(-ENOMEM, "verify");
	}
	for (i = 0; i < r->nfiles; i++) {
		err = rd_file(r, &r->files[i], NULL, NULL, &got);
		if (err && !is_damage(err)) {
			progress_done(&r->prog);
			rc = ctl_fail(err, "verify %s/%s: read %s", r->job,
				      r->version, r->files[i].name);
			goto out_free;
		}
		if (!err) {
			verified += r->files[i].size;
			continue;
		}
		bad[nbad] = (struct bad){ .idx = i, .err = err, .got = got };
		if (!ctl->json) {
			progress_done(&r->prog);
			bad_print(r, &bad[nbad]);
		}
		nbad++;
	}
	progress_done(&r->prog);
	ns = ctl_now_ns() - t0;
	if (ctl->json)
		verify_json(r, bad, nbad, verified, ns);
	else if (!nbad)
		printf("ok: %d files, %" PRIu64 " bytes verified (%s in %s, %s)\n",
		       r->nfiles, verified, fmt_size(size, verified),
		       fmt_dur(dur, ns),
		       fmt_rate(rate, (double)verified / fmt_secs(ns ? ns : 1)));
	rc = CTL_EXIT_OK;
	if (nbad)
		rc = ctl_failx("verify %s/%s: %d of %d files corrupt", r->job,
			       r->version, nbad, r->nfiles);
out_free:
	free(bad);
	return rc;
}

int cmd_verify(struct ctl *ctl, int argc, char **argv)
{
	struct rd r = { .c = NULL };
	int rc = plain_args(ctl, argc, argv);

	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return ctl_usage("verify: expected JOB VERSION");
	r.job = argv[optind];
	snprintf(r.version, sizeof(r.version), "%s", argv[optind + 1]);
	progress_init(&r.prog, "verify", 0);
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	r.c = ctl->c;
	rc = rd_open(&r, "verify");
	if (!rc)
		rc = verify_run(ctl, &r);
	rd_release(&r);
	return rc;
}

/* 0 if path is a relative path of plain components, else -CKPT_EBADNAME. */
static int path_safe(const char *path)
{
	const char *p = path, *slash;
	size_t n;

	if (!*path || *path == '/' || strlen(path) > CKPT_PATH_MAX2)
		return -CKPT_EBADNAME;
	for (;;) {
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || n > 255 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return -CKPT_EBADNAME;
		if (!slash)
			return 0;
		p = slash + 1;
	}
}

/* mkdir -p for the user's DIR; symlinks in DIR itself are the user's call. */
static int mkdir_p(const char *dir)
{
	char tmp[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		tmp[i] = i == n ? '\0' : '/';
	}
	return 0;
}

/*
 * The attributes the file's writer set (a->set): owner and group when run as
 * root (as tar does), then the mode (after chown, which clears set-id
 * bits), then the times.  A file with none keeps what open() gave it.
 */
/* The permission bits to give a restored file: a set-uid (set-gid) bit
 * only with the owner (group) it was given for.  A file whose writer set
 * no owner stays the restoring uid's, root's when run as root, and a
 * set-uid bit there would make a set-uid root program of bytes a user
 * wrote (an outside attack: chmod u+s through ckptfs of a file written
 * with no owner). */
static mode_t restore_mode(const struct ckpt_attr *a)
{
	mode_t mode = a->mode & 07777;

	if (!(a->set & CKPT_ATTR_UID))
		mode &= ~(mode_t)04000;
	if (!(a->set & CKPT_ATTR_GID))
		mode &= ~(mode_t)02000;
	return mode;
}

static int restore_attr(int fd, const struct ckpt_attr *a)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };

	if (geteuid() == 0 && (a->set & (CKPT_ATTR_UID | CKPT_ATTR_GID)) &&
	    fchown(fd, a->set & CKPT_ATTR_UID ? a->uid : (uid_t)-1,
		   a->set & CKPT_ATTR_GID ? a->gid : (gid_t)-1))
		return -errno;
	if ((a->set & CKPT_ATTR_MODE) && fchmod(fd, restore_mode(a)))
		return -errno;
	if (attr_times(a, ts) && futimens(fd, ts))
		return -errno;
	return 0;
}

/* The file's extended attributes, each set on fd.  The blob is ckpt.h's
 * (ckpt_getxattrs): u8 name length, name, u16 value length, value.  A
 * target file system that keeps none (ENOTSUP) is not an error. */
static int restore_xattr(const struct rd *r, struct ckpt_client *c,
			 const struct ckpt_file_info *f, int fd)
{
	uint8_t blob[CKPT_XATTR_MAX];
	char name[256];
	size_t off = 0, nl, vl;
	int len;

	len = ckpt_getxattrs(c, r->job, r->version, f->name, blob,
			     sizeof(blob));
	if (len < 0)
		return len;
	while (off + 3 <= (size_t)len) {
		nl = blob[off];
		if (off + 1 + nl + 2 > (size_t)len)
			return -CKPT_EPROTO;
		memcpy(name, blob + off + 1, nl);
		name[nl] = '\0';
		vl = blob[off + 1 + nl] | (size_t)blob[off + 2 + nl] << 8;
		if (off + 3 + nl + vl > (size_t)len)
			return -CKPT_EPROTO;
		if (fsetxattr(fd, name, blob + off + 3 + nl, vl, 0)) {
			if (errno == ENOTSUP)
				return 0;
			return -errno;
		}
		off += 3 + nl + vl;
	}
	return 0;
}

/* A link's target, gathered into memory (at most 4095 bytes). */
struct link_buf {
	char t[4096];
	size_t len;
};

static int link_piece(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct link_buf *l = arg;

	if (len >= sizeof(l->t) - l->len)
		return -ENAMETOOLONG;
	memcpy(l->t + l->len, buf, len);
	l->len += len;
	return 0;
}

/* The entry made under tmp gets a's owner (as root), its mode (if
 * chmod), its times, never following a link; then it is renamed to base
 * and the directory fsync'd.  On failure tmp is removed.  0 or -errno. */
static int finish_entry(const struct ckpt_attr *a, int dfd, const char *tmp,
			const char *base, int chmod)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_nsec = UTIME_OMIT } };
	int err = 0;

	if (geteuid() == 0 && (a->set & (CKPT_ATTR_UID | CKPT_ATTR_GID)) &&
	    fchownat(dfd, tmp, a->set & CKPT_ATTR_UID ? a->uid : (uid_t)-1,
		     a->set & CKPT_ATTR_GID ? a->gid : (gid_t)-1,
		     AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (!err && chmod && fchmodat(dfd, tmp, restore_mode(a), 0))
		err = -errno;
	attr_times(a, ts);
	if (!err && utimensat(dfd, tmp, ts, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	else if (!err && fsync(dfd))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	return err;
}

/* Restore a symbolic link: made under the temporary name, then its owner
 * (as root) and times, never following it; renamed into place. */
static int restore_link(struct rd *r, const struct ckpt_file_info *f,
			int dfd, const char *tmp, const char *base)
{
	struct link_buf l = { .len = 0 };
	uint64_t got;
	int err;

	err = rd_file(r, f, link_piece, &l, &got);
	if (err)
		return err;
	l.t[l.len] = '\0';
	if (l.len == 0 || strlen(l.t) != l.len)
		return -CKPT_ECORRUPT;
	unlinkat(dfd, tmp, 0);
	if (symlinkat(l.t, dfd, tmp))
		return -errno;
	return finish_entry(&f->attr, dfd, tmp, base, 0);
}

/* Restore a FIFO, socket or device node (metadata only): mknod under the
 * temporary name (a device needs root: EPERM otherwise), its attributes,
 * rename into place. */
static int restore_special(const struct ckpt_file_info *f, int dfd,
			   const char *tmp, const char *base)
{
	const struct ckpt_attr *a = &f->attr;

	unlinkat(dfd, tmp, 0);
	if (mknodat(dfd, tmp, (a->mode & CKPT_ATTR_IFMT) | 0600,
		    (dev_t)a->rdev))
		return -errno;
	return finish_entry(a, dfd, tmp, base, 1);
}

static int is_dir_entry(const struct ckpt_file_info *f)
{
	return attr_is_type(&f->attr, CKPT_ATTR_IFDIR);
}

/* A directory's entry (CKPT_ATTR_IFDIR): made now if no file below it made
 * it; its attributes wait for restore_dirs(). */
static int restore_mkdir(int dfd, const char *base)
{
	return mkdirat(dfd, base, 0700) && errno != EEXIST ? -errno : 0;
}

static int depth(const char *path)
{
	int n = 0;

	while ((path = strchr(path, '/')))
		n++, path++;
	return n;
}

/* Deeper directories first: a parent's mode may close it to its owner. */
static int deeper_first(const void *a, const void *b, void *files)
{
	const struct ckpt_file_info *f = files;

	return depth(f[*(const int *)b].name) - depth(f[*(const int *)a].name);
}

/* Give each directory that has an entry its attributes and extended
 * attributes, once every file below it is in place (adding a file moves a
 * directory's mtime). */
static int restore_dirs(struct rd *r, int rootfd, int *failed)
{
	const char *base;
	int *idx, n = 0, i, dfd, fd, err = 0;

	idx = malloc(((size_t)r->nfiles + 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < r->nfiles; i++)
		if (is_dir_entry(&r->files[i]))
			idx[n++] = i;
	qsort_r(idx, (size_t)n, sizeof(*idx), deeper_first, r->files);
	for (i = 0; i < n && !err; i++) {
		*failed = idx[i];
		err = ctl_open_parent(rootfd, r->files[idx[i]].name, 1, &dfd,
				      &base);
		if (err)
			break;
		fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			    O_CLOEXEC);
		err = fd < 0 ? -errno
			     : restore_xattr(r, r->c, &r->files[idx[i]], fd);
		if (!err)
			err = restore_attr(fd, &r->files[idx[i]].attr);
		if (!err && fsync(fd))
			err = -errno;
		if (fd >= 0)
			close(fd);
		close(dfd);
	}
	free(idx);
	return err;
}

/* The restored name of the file of r->files[idx] listed before it (hard
 * links: the names with one ino), or -1. */
static int first_name(const struct rd *r, int idx)
{
	const struct ckpt_file_info *f = &r->files[idx];
	int i;

	if (f->nlink < 2 || !f->ino)
		return -1;
	for (i = 0; i < idx; i++)
		if (r->files[i].ino == f->ino)
			return i;
	return -1;
}

/* Restore a second name of a file restored already (a hard link): linked
 * under the temporary name, then renamed into place. */
static int restore_hardlink(int rootfd, const char *first, int dfd,
			    const char *tmp, const char *base)
{
	const char *fbase;
	int fdfd, err;

	err = ctl_open_parent(rootfd, first, 1, &fdfd, &fbase);
	if (err)
		return err;
	unlinkat(dfd, tmp, 0);
	err = linkat(fdfd, fbase, dfd, tmp, 0) ? -errno : 0;
	close(fdfd);
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (!err && fsync(dfd))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	return err;
}

/* A file restore_pull() restores: a regular file, not a second name of a
 * hard link.  The others have a file type in their mode. */
static int is_pulled(const struct rd *r, int idx)
{
	const struct ckpt_attr *a = &r->files[idx].attr;

	return !((a->set & CKPT_ATTR_MODE) && (a->mode & CKPT_ATTR_IFMT)) &&
	       first_name(r, idx) < 0;
}

static void tmp_name(char *buf, size_t cap, int idx)
{
	snprintf(buf, cap, ".ckpt-restore.%ld.%d", (long)getpid(), idx);
}

/* Restore one entry that is not pulled (is_pulled()): a second name of a
 * hard link, a directory entry, a symbolic link or a special file, each
 * made under a temporary name and renamed into place. */
static int restore_file(struct rd *r, int rootfd, int idx)
{
	const struct ckpt_file_info *f = &r->files[idx];
	const char *base = NULL;
	char tmp[64];
	int dfd = -1, first, err;

	err = ctl_open_parent(rootfd, f->name, 1, &dfd, &base);
	if (err)
		return err;
	tmp_name(tmp, sizeof(tmp), idx);
	first = first_name(r, idx);
	if (first >= 0)
		err = restore_hardlink(rootfd, r->files[first].name, dfd, tmp,
				       base);
	else if (is_dir_entry(f))
		err = restore_mkdir(dfd, base);
	else if (attr_is_type(&f->attr, CKPT_ATTR_IFLNK))
		err = restore_link(r, f, dfd, tmp, base);
	else
		err = restore_special(f, dfd, tmp, base);
	close(dfd);
	return err;
}

/* A regular file being pulled: the directory holding it, open from its
 * first piece until its bytes are all written. */
struct pulled {
	int dfd;                  /* -1 when not open */
	const char *base;         /* in its path */
	int written;              /* every byte and attribute is under its
				   * temporary name, not yet renamed */
};

/* What the lanes' callbacks need (restore_pull). */
struct pull_ctx {
	struct rd *r;
	int rootfd;
	struct pulled *p;         /* per file of r */
};

static int pull_open(void *arg, int idx, int *fd)
{
	struct pull_ctx *x = arg;
	struct pulled *p = &x->p[idx];
	char tmp[64];
	int err;

	err = ctl_open_parent(x->rootfd, x->r->files[idx].name, 1, &p->dfd,
			      &p->base);
	if (err) {
		p->dfd = -1;
		return err;
	}
	tmp_name(tmp, sizeof(tmp), idx);
	*fd = openat(p->dfd, tmp,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (*fd < 0 && errno == EEXIST && !unlinkat(p->dfd, tmp, 0))
		*fd = openat(p->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			     O_NOFOLLOW | O_CLOEXEC, 0644);
	if (*fd >= 0)
		return 0;
	err = -errno;
	close(p->dfd);
	p->dfd = -1;
	return err;
}

/* Every byte is there: the attributes, and the file is closed.  Made
 * durable and renamed with the others (restore_commit). */
static int pull_finish(void *arg, struct ckpt_client *c, int idx, int fd)
{
	struct pull_ctx *x = arg;
	struct pulled *p = &x->p[idx];
	const struct ckpt_file_info *f = &x->r->files[idx];
	char tmp[64];
	int err;

	tmp_name(tmp, sizeof(tmp), idx);
	err = restore_xattr(x->r, c, f, fd);
	if (!err)
		err = restore_attr(fd, &f->attr);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		unlinkat(p->dfd, tmp, 0);
	p->written = !err;
	close(p->dfd);
	p->dfd = -1;
	return err;
}

static void pull_abandon(void *arg, int idx, int fd)
{
	struct pull_ctx *x = arg;
	struct pulled *p = &x->p[idx];
	char tmp[64];

	tmp_name(tmp, sizeof(tmp), idx);
	close(fd);
	unlinkat(p->dfd, tmp, 0);
	close(p->dfd);
	p->dfd = -1;
}

static void pull_progress(void *arg, int idx, uint64_t bytes)
{
	struct pull_ctx *x = arg;

	x->r->done += bytes;
	progress_update(&x->r->prog, x->r->done, x->r->files[idx].name);
}

/* Length of the directory part of path ("" for a top-level name: 0). */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}

static int by_dir(const void *a, const void *b, void *files)
{
	const struct ckpt_file_info *f = files;
	const char *x = f[*(const int *)a].name, *y = f[*(const int *)b].name;
	size_t lx = dir_len(x), ly = dir_len(y);
	int c = memcmp(x, y, lx < ly ? lx : ly);

	return c ? c : lx < ly ? -1 : lx > ly;
}

/* fsync each directory that got one of the files order[0 .. n) renamed
 * into it, once (sorted by directory). */
static int restore_sync_dirs(struct rd *r, int rootfd, int *order, int n,
			     int *failed)
{
	const char *base, *prev = NULL;
	int i, dfd, err = 0;

	qsort_r(order, (size_t)n, sizeof(*order), by_dir, r->files);
	for (i = 0; i < n && !err; i++) {
		const char *path = r->files[order[i]].name;

		if (prev && dir_len(prev) == dir_len(path) &&
		    !memcmp(prev, path, dir_len(path)))
			continue;
		prev = path;
		*failed = order[i];
		err = ctl_open_parent(rootfd, path, 1, &dfd, &base);
		if (err)
			break;
		if (fsync(dfd))
			err = -errno;
		close(dfd);
	}
	return err;
}

/* Rename (rename != 0) or remove the temporary name of each written file
 * of order[0 .. n).  The first error stops the renames. */
static int restore_rename(struct rd *r, struct pull_ctx *x, int rootfd,
			  const int *order, int n, int rename, int *failed)
{
	const char *base;
	char tmp[64];
	int i, dfd, err = 0;

	for (i = 0; i < n && !(rename && err); i++) {
		if (!x->p[order[i]].written)
			continue;
		tmp_name(tmp, sizeof(tmp), order[i]);
		*failed = order[i];
		err = ctl_open_parent(rootfd, r->files[order[i]].name, 1,
				      &dfd, &base);
		if (err)
			continue;
		if (!rename)
			unlinkat(dfd, tmp, 0);
		else if (renameat(dfd, tmp, dfd, base))
			err = -errno;
		x->p[order[i]].written = rename && err;
		close(dfd);
	}
	return err;
}

/*
 * Pull every regular file (is_pulled) through the lanes under temporary
 * names; then make them all durable at once (syncfs: one flush and journal
 * commit instead of one per file, as `cp -r` + `sync`), rename them into
 * place and fsync each directory once.  A crash leaves the old file or the
 * complete new one under each name.  On failure the temporary names go.
 * 0 or -errno with *failed the file it concerns.
 */
static int restore_pull(struct ctl *ctl, struct rd *r, int rootfd,
			int *failed)
{
	struct pull_ctx x = { .r = r, .rootfd = rootfd };
	struct lanes_job j = {
		.socket = ctl->socket, .c = r->c, .job = r->job,
		.version = r->version, .files = r->files, .lanes = RESTORE_LANES,
		.arg = &x, .open = pull_open, .finish = pull_finish,
		.abandon = pull_abandon, .progress = pull_progress,
	};
	int *order, i, n = 0, err = -ENOMEM;

	order = malloc(sizeof(*order) * ((size_t)r->nfiles + 1));
	x.p = calloc((size_t)r->nfiles + 1, sizeof(*x.p));
	if (!order || !x.p)
		goto out_free;
	for (i = 0; i < r->nfiles; i++)
		if (is_pulled(r, i))
			order[n++] = i;
	j.order = order;
	j.n = n;
	err = lanes_run(&j, failed);
	if (!err && syncfs(rootfd))
		err = -errno;
	if (!err)
		err = restore_rename(r, &x, rootfd, order, n, 1, failed);
	if (err) {
		restore_rename(r, &x, rootfd, order, n, 0, &i);
		goto out_free;
	}
	err = restore_sync_dirs(r, rootfd, order, n, failed);
out_free:
	free(x.p);
	free(order);
	return err;
}

static void restore_report(struct ctl *ctl, const struct rd *r,
			   const char *dir, uint64_t ns)
{
	char size[FMT_LEN], dur[FMT_LEN], rate[FMT_LEN];
	struct jw w;

	if (!ctl->json) {
		printf("restored %s/%s: %d files, %s into %s in %s (%s)\n",
		       r->job, r->version, r->nfiles, fmt_size(size, r->done),
		       dir, fmt_dur(dur, ns),
		       fmt_rate(rate, (double)r->done / fmt_secs(ns ? ns : 1)));
		return;
	}
	jw_init(&w, stdout);
	jw_obj(&w);
	jw_kstr(&w, "job", r->job);
	jw_kstr(&w, "version", r->version);
	jw_kstr(&w, "dir", dir);
	jw_ku64(&w, "files", (uint64_t)r->nfiles);
	jw_ku64(&w, "bytes", r->done);
	jw_kdbl(&w, "elapsed_s", fmt_secs(ns));
	jw_obj_end(&w);
	jw_done(&w);
}

static int restore_run(struct ctl *ctl, struct rd *r, const char *dir)
{
	uint64_t t0 = ctl_now_ns();
	int i = 0, k, err, rootfd, rc = CTL_EXIT_OK;

	/* Refuse the whole version before writing anything. */
	for (i = 0; i < r->nfiles; i++)
		if (path_safe(r->files[i].name))
			return ctl_failx("restore %s/%s: refusing unsafe path '%s'",
					 r->job, r->version, r->files[i].name);
	err = mkdir_p(dir);
	if (err)
		return ctl_fail(err, "restore: create %s", dir);
	rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ctl_fail(-errno, "restore: open %s", dir);
	err = restore_pull(ctl, r, rootfd, &i);
	for (k = 0; k < r->nfiles && !err; k++)
		if (!is_pulled(r, k) && (err = restore_file(r, rootfd, k)))
			i = k;
	if (!err)
		err = restore_dirs(r, rootfd, &i);
	if (err) {
		progress_done(&r->prog);
		rc = ctl_fail(err, "restore %s/%s: %s", r->job, r->version,
			      r->files[i].name);
		goto out_close;
	}
	progress_done(&r->prog);
	restore_report(ctl, r, dir, ctl_now_ns() - t0);
out_close:
	close(rootfd);
	return rc;
}

/* Keep only the files of node part's part (restore --part). */
static void keep_part(struct rd *r, const struct ctl_plan *p, const char *part)
{
	const struct ckpt_plan_entry *e;
	int i, n = 0;

	r->total = 0;
	for (i = 0; i < r->nfiles; i++) {
		e = ctl_plan_find(p, r->files[i].name);
		if (!e || strcmp(e->node, part))
			continue;
		r->files[n++] = r->files[i];
		r->total += r->files[i].size;
	}
	r->nfiles = n;
	progress_init(&r->prog, "restore", r->total);
}

int cmd_restore(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "plan", no_argument, NULL, 'p' },
		{ "part", required_argument, NULL, 'P' },
		{ "all", no_argument, NULL, 'a' },
		CTL_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *dir = NULL, *want = "latest", *part = NULL;
	struct ctl_plan plan = { NULL, 0 };
	struct rd r = { .c = NULL };
	int opt, rc, err, show = 0;

	while ((opt = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			dir = optarg;
			break;
		case 'p':
			show = 1;
			break;
		case 'P':
			part = optarg;
			break;
		case 'a':
			part = NULL;
			break;
		default:
			if ((rc = ctl_common_opt(ctl, opt, "restore")) >= 0)
				return rc;
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return ctl_usage("restore: expected JOB [VERSION|latest] --to DIR");
	if (!show && (!dir || !*dir))
		return ctl_usage("restore: --to DIR is required (or --plan)");
	r.job = argv[optind];
	if (argc - optind == 2)
		want = argv[optind + 1];
	progress_init(&r.prog, "restore", 0);
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	r.c = ctl->c;
	if (strcmp(want, "latest") == 0) {
		err = ckpt_latest(r.c, r.job, CKPT_LOCAL, r.version,
				  sizeof(r.version));
		if (err)
			return ctl_fail(err, "restore %s: newest version that can be read whole",
					r.job);
		if (ctl_plan_passed_over(r.c, r.job, r.version))
			fprintf(stderr, "ckptctl: %s: restoring %s, the newest version that can be read whole\n",
				r.job, r.version);
	} else {
		snprintf(r.version, sizeof(r.version), "%s", want);
	}
	/* Where each file comes from, checked before anything is written:
	 * a version with a file no source can serve is refused whole. */
	err = ctl_plan_load(r.c, r.job, r.version, &plan);
	if (err && (show || part || err != -CKPT_EPROTO))
		return ctl_fail(err, "restore %s/%s: plan", r.job, r.version);
	if (show) {
		rc = ctl_plan_print(ctl, r.job, r.version, &plan, part);
		goto out;
	}
	rc = CTL_EXIT_FAIL;
	if (ctl_plan_lost(&plan, part)) {
		ctl_plan_report_lost(&plan, part, r.job, r.version);
		goto out;
	}
	rc = rd_open(&r, "restore");
	if (!rc && part)
		keep_part(&r, &plan, part);
	if (!rc && part && !r.nfiles)
		rc = ctl_failx("restore %s/%s: no file of the version is in a part of node '%s'",
			       r.job, r.version, part);
	if (!rc)
		rc = restore_run(ctl, &r, dir);
out:
	ctl_plan_release(&plan);
	rd_release(&r);
	return rc;
}
