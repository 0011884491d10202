/*
 * sys.h - the system-call seam, after SQLite's test_syscall.c.
 *
 * The store reaches open, pwrite, fsync, rename, fallocate and unlink through
 * these wrappers, and the io_uring paths ask sys_inject() before submitting
 * the equivalent operation.  Tests make the Nth call of an operation fail with
 * a chosen errno, or take longer, once or from then on, without touching the
 * code under test.
 *
 * The plan comes from the environment variable CKPT_FAULT (read by
 * sys_fault_init()) or from sys_fault_set():
 *
 *     CKPT_FAULT="pwrite:3:EIO"            3rd pwrite fails with EIO, once
 *     CKPT_FAULT="fsync:2+:EIO"            2nd fsync and all later ones fail
 *     CKPT_FAULT="pwrite:5:ENOSPC,rename:1:EIO"
 *     CKPT_FAULT="fsync:1+:delay=300"      every fsync is 300 ms late, then
 *                                          proceeds (and succeeds as normal)
 *
 * Operations: open, pwrite, pread, fsync, rename, fallocate, unlink, link
 * (the drain's hard links on the PFS; a delay sleeps before the link).  Errno
 * names accepted: EIO, ENOSPC, EROFS, EDQUOT, ENOMEM, EACCES, EPERM.  In
 * place of the errno, "delay=MS" (1 <= MS <= 600000, decimal) delays the call
 * by MS milliseconds.  When several rules match a call, the first one listed
 * applies.  Counting is per operation and thread-safe.  All wrappers return
 * >= 0 or -errno.
 *
 * Delays: the sys_* wrappers below sleep the delay (CLOCK_MONOTONIC, in the
 * calling thread, holding no lock) and then make the real call.
 * sys_inject() never sleeps: it counts the call and returns 0 or -errno, and
 * a delay rule reads as 0.  A caller that can be late without blocking (the
 * io_uring paths, on the loop thread) asks sys_inject_delay() instead and
 * applies the delay itself: ingest's io_uring writes wait on a timer of the
 * loop (loop_after()); its fsyncs and the reader's preads ignore delays.
 * Worker threads that make an unwrapped call ask sys_inject_wait(), which
 * sleeps like the wrappers.
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
	SYS_LINK,
	SYS_NOPS
};

/* Parse spec (see above) and install it, replacing any plan.  NULL or ""
 * clears it.  -EINVAL on a malformed spec, which leaves the plan unchanged. */
int sys_fault_set(const char *spec);
/* sys_fault_set(getenv("CKPT_FAULT")). */
int sys_fault_init(void);
/* Count one call of op; 0 to proceed (now: a delay rule is ignored), or
 * -errno if the plan fails it.  Never sleeps. */
int sys_inject(enum sys_op op);
/* sys_inject(), also storing in *delay_ms (if not NULL) the milliseconds
 * the call is to be late before it proceeds: 0 unless a delay rule matched
 * and the result is 0.  Never sleeps; delaying is the caller's business. */
int sys_inject_delay(enum sys_op op, unsigned *delay_ms);
/* sys_inject(), sleeping out a delay rule as the wrappers do: for calls the
 * seam does not wrap (unlinkat on the PFS) made on a thread that may block
 * (a pool worker).  Never on the loop thread. */
int sys_inject_wait(enum sys_op op);
const char *sys_op_name(enum sys_op op);

int sys_open(const char *path, int flags, mode_t mode);
/* The file open as fd, opened again with flags (O_CLOEXEC added; no
 * O_CREAT): a new open file of the same inode, through /proc/self/fd,
 * never a lookup of its name.  Not a seam of fault injection: callers
 * fall back on fd.  The new fd or -errno. */
int sys_reopen(int fd, int flags);
/*
 * A buffer for direct I/O (O_DIRECT, or io_uring reads of the segments):
 * 4 KiB aligned; from SYS_HUGE bytes on, aligned to it and asked to be
 * backed by transparent huge pages (madvise: granted where
 * /sys/kernel/mm/transparent_hugepage/enabled is madvise or always).  A
 * direct request carries at most the device's segment limit of separate
 * pages (on virtio-blk 254: about 512 KiB of 4 KiB pages), so from huge
 * pages each read or write goes to the device in requests of up to its
 * max_sectors_kb, several times fewer.  NULL if out of memory;
 * sys_dio_free() with the same len releases it (a buffer of SYS_HUGE or
 * more is a mapping of its own).  Not a seam of fault injection.
 */
#define SYS_HUGE (2u << 20)
void *sys_dio_alloc(size_t len);
/* Release buf (NULL: nothing) of len bytes from sys_dio_alloc(len). */
void sys_dio_free(void *buf, size_t len);
/* *buf (from sys_dio_alloc(), or NULL) of *cap bytes made at least need:
 * replaced by a new one when smaller (its bytes are not kept).  0, or
 * -ENOMEM with *buf NULL and *cap 0. */
int sys_dio_fit(void **buf, size_t *cap, size_t need);
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
