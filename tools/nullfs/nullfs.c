/*
 * nullfs.c - a FUSE file system that keeps no bytes: the ceiling of a FUSE
 * mount on this machine, for tools/bench_fuse.sh (a reference row, not a
 * part of ckpt).
 *
 *   nullfs [-o copy] MOUNTPOINT
 *
 * One flat directory of at most 64 files.  Every file is written as
 * ckptfs writes: 1 MiB FUSE writes (max_write), direct_io, the same
 * libfuse high-level API and multi-threaded loop.  A write only moves the
 * file's size (with -o copy it first copies the bytes into a 1 MiB buffer
 * of the worker's, as ckptfs copies them into staging); reads return
 * zeros; fsync returns at once.  So what a dd through it takes is what the
 * kernel's FUSE round trips take on this machine, and ckptfs's time over
 * it is what ckptfs itself adds.
 *
 * It runs in the foreground; unmount with fusermount3 -u.
 */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NULLFS_FILES  64
#define NULLFS_NAME   64
#define NULLFS_WRITE  (1u << 20)

struct nfile {
	char name[NULLFS_NAME];
	uint64_t size;
	int used;
};

static struct {
	pthread_mutex_t mu;
	struct nfile f[NULLFS_FILES];
	int copy;
} nfs = { .mu = PTHREAD_MUTEX_INITIALIZER };

static __thread unsigned char copy_buf[NULLFS_WRITE];

/* The file named by path ("/name"), or NULL.  Called with nfs.mu held. */
static struct nfile *lookup(const char *path)
{
	if (path[0] != '/' || strchr(path + 1, '/'))
		return NULL;
	for (int i = 0; i < NULLFS_FILES; i++)
		if (nfs.f[i].used && !strcmp(nfs.f[i].name, path + 1))
			return &nfs.f[i];
	return NULL;
}

static int nf_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	struct nfile *f;
	int ret = 0;

	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	if (f) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t)f->size;
	} else {
		ret = -ENOENT;
	}
	pthread_mutex_unlock(&nfs.mu);
	return ret;
}

static int nf_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	pthread_mutex_lock(&nfs.mu);
	for (int i = 0; i < NULLFS_FILES; i++)
		if (nfs.f[i].used)
			fill(buf, nfs.f[i].name, NULL, 0, 0);
	pthread_mutex_unlock(&nfs.mu);
	return 0;
}

static int nf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct nfile *f;
	int ret = 0;

	(void)mode;
	if (path[0] != '/' || strchr(path + 1, '/') ||
	    strlen(path + 1) >= NULLFS_NAME)
		return -EINVAL;
	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	for (int i = 0; !f && i < NULLFS_FILES; i++) {
		if (!nfs.f[i].used) {
			f = &nfs.f[i];
			strcpy(f->name, path + 1);
			f->used = 1;
		}
	}
	if (f)
		f->size = 0;
	else
		ret = -ENOSPC;
	pthread_mutex_unlock(&nfs.mu);
	fi->direct_io = 1;
	return ret;
}

static int nf_open(const char *path, struct fuse_file_info *fi)
{
	struct nfile *f;

	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	if (f && (fi->flags & O_TRUNC))
		f->size = 0;
	pthread_mutex_unlock(&nfs.mu);
	fi->direct_io = 1;
	return f ? 0 : -ENOENT;
}

static int nf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct nfile *f;

	(void)fi;
	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	if (f)
		f->size = (uint64_t)size;
	pthread_mutex_unlock(&nfs.mu);
	return f ? 0 : -ENOENT;
}

static int nf_write(const char *path, const char *buf, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	struct nfile *f;

	(void)fi;
	if (nfs.copy)
		memcpy(copy_buf, buf, size < NULLFS_WRITE ? size : NULLFS_WRITE);
	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	if (f && (uint64_t)off + size > f->size)
		f->size = (uint64_t)off + size;
	pthread_mutex_unlock(&nfs.mu);
	return f ? (int)size : -ENOENT;
}

static int nf_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct nfile *f;
	size_t n = 0;

	(void)fi;
	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	if (f && (uint64_t)off < f->size)
		n = f->size - (uint64_t)off < size ? f->size - (uint64_t)off : size;
	pthread_mutex_unlock(&nfs.mu);
	memset(buf, 0, n);
	return f ? (int)n : -ENOENT;
}

static int nf_unlink(const char *path)
{
	struct nfile *f;

	pthread_mutex_lock(&nfs.mu);
	f = lookup(path);
	if (f)
		f->used = 0;
	pthread_mutex_unlock(&nfs.mu);
	return f ? 0 : -ENOENT;
}

static int nf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return 0;
}

static int nf_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	(void)tv;
	(void)fi;
	return nf_getattr(path, &(struct stat){ 0 }, NULL);
}

static void *nf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->direct_io = 1;
	cfg->nullpath_ok = 0;
	conn->max_write = NULLFS_WRITE;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	return NULL;
}

static const struct fuse_operations nf_oper = {
	.init     = nf_init,
	.getattr  = nf_getattr,
	.readdir  = nf_readdir,
	.create   = nf_create,
	.open     = nf_open,
	.truncate = nf_truncate,
	.write    = nf_write,
	.read     = nf_read,
	.unlink   = nf_unlink,
	.fsync    = nf_fsync,
	.utimens  = nf_utimens,
};

static const struct fuse_opt nf_opts[] = {
	{ "copy", offsetof(__typeof__(nfs), copy), 1 },
	FUSE_OPT_END
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	int ret;

	if (fuse_opt_parse(&args, &nfs, nf_opts, NULL))
		return 2;
	/* Foreground, multi-threaded: as ckptfs serves. */
	if (fuse_opt_add_arg(&args, "-f") ||
	    fuse_opt_add_arg(&args, "-ofsname=nullfs,default_permissions"))
		return 2;
	ret = fuse_main(args.argc, args.argv, &nf_oper, NULL);
	fuse_opt_free_args(&args);
	return ret;
}
