/*
 * sys.h - the system-call seam, after SQLite's test_syscall.c.
 *
 * The store reaches open, pwrite, fsync, rename, fallocate and unlink through
 * these wrappers, and the io_uring paths ask sys_inject() before submitting
 * the equivalent operation.  Tests make the Nth call of an operation fail with
 * a chosen errno, once or from then on, without touching the code under test.
 *
 * The plan comes from the environment variable CKPT_FAULT (read by
 * sys_fault_init()) or from sys_fault_set():
 *
 *     CKPT_FAULT="pwrite:3:EIO"            3rd pwrite fails with EIO, once
 *     CKPT_FAULT="fsync:2+:EIO"            2nd fsync and all later ones fail
 *     CKPT_FAULT="pwrite:5:ENOSPC,rename:1:EIO"
 *
 * Operations: open, pwrite, pread, fsync, rename, fallocate, unlink.  Errno
 * names accepted: EIO, ENOSPC, EROFS, EDQUOT, ENOMEM, EACCES, EPERM.
 * Counting is per operation and thread-safe.  All wrappers return >= 0 or
 * -errno.
 */
#ifndef CKPT_SYS_H
#define CKPT_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sys_op {
	SYS_OPEN,
	SYS_PWRITE,
	SYS_PREAD,
	SYS_FSYNC,
	SYS_RENAME,
	SYS_FALLOCATE,
	SYS_UNLINK,
	SYS_NOPS
};

/* Parse spec (see above) and install it, replacing any plan.  NULL or ""
 * clears it.  -EINVAL on a malformed spec, which leaves the plan unchanged. */
int sys_fault_set(const char *spec);
/* sys_fault_set(getenv("CKPT_FAULT")). */
int sys_fault_init(void);
/* Count one call of op; 0 to proceed, or -errno if the plan fails it. */
int sys_inject(enum sys_op op);
const char *sys_op_name(enum sys_op op);

int sys_open(const char *path, int flags, mode_t mode);
ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t sys_pread(int fd, void *buf, size_t len, off_t off);
int sys_fsync(int fd);
int sys_rename(const char *from, const char *to);
int sys_fallocate(int fd, off_t off, off_t len);
int sys_unlink(const char *path);

/* Loops over short writes/reads.  Returns 0 or -errno (-EIO on a short read
 * at end of file). */
int sys_pwrite_all(int fd, const void *buf, size_t len, off_t off);
int sys_pread_all(int fd, void *buf, size_t len, off_t off);
/* Create or replace path (mode) with the len bytes of buf, and fsync it.
 * The caller renames it into place, if it wants that.  0 or -errno. */
int sys_write_file(const char *path, const void *buf, size_t len,
		   mode_t mode);
/* open(dir, O_RDONLY|O_DIRECTORY) and fsync it. */
int sys_fsync_dir(const char *dir);

#endif
