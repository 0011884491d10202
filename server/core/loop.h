/*
 * loop.h - ckptd's event loop: one io_uring, completions dispatched to the
 * struct loop_op that each submission carries as its user data.
 *
 * Everything in ckptd runs on this one thread (socket receives and sends,
 * disk writes and reads, fsyncs and the periodic tick) except the blocking
 * work handed to the worker pool (pool.h).  An operation's owner
 * embeds a struct loop_op, sets ->fn, and keeps the op (and the buffers it
 * names) alive until fn has run.  fn receives cqe->res: >= 0 or -errno.
 *
 * Registered buffers.  Memory that disk I/O reads or writes again and again
 * (the staging leases) can be registered with the ring (loop_buf_add): its
 * pages are pinned once, and a read or write naming the slot
 * (io_uring_prep_write_fixed) skips pinning and unpinning them on every
 * submission (on this path ckptd's CPU per GiB written fell by 30 to 40%).  The
 * ring has LOOP_BUFS slots; when none is free, or the kernel refuses (a
 * kernel before 5.19, an RLIMIT_MEMLOCK without CAP_IPC_LOCK), the memory is
 * used unregistered.
 */
#ifndef CKPTD_LOOP_H
#define CKPTD_LOOP_H

#include <liburing.h>
#include <stdint.h>

/*
 * The kernel fills receive and read buffers behind valgrind's back when the
 * operation goes through io_uring; tell memcheck those bytes are defined.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define loop_mark_defined(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef loop_mark_defined
#define loop_mark_defined(p, n) ((void)(p), (void)(n))
#endif

struct loop_op;
typedef void (*loop_fn)(struct loop_op *op, int res);

struct loop_op {
	loop_fn fn;
};

#define LOOP_BUFS 4096          /* registered buffer slots */

struct loop {
	struct io_uring ring;
	unsigned inflight;        /* submitted, not yet completed */
	int stop;                 /* set to leave loop_run() */
	unsigned nbufs;           /* slots (0: none, or the ring is gone) */
	uint8_t *buf_used;        /* nbufs flags */
};

/* 0 or -errno from io_uring_queue_init(). */
int loop_init(struct loop *l, unsigned entries);
void loop_release(struct loop *l);
/* Register len bytes at p (len <= LOOP_BUF_MAX); returns the slot, for
 * io_uring_prep_{read,write}_fixed, or -errno (-ENOSPC: no slot free; the
 * caller then uses the memory unregistered).  The memory must stay mapped
 * until loop_buf_del() or loop_release(). */
#define LOOP_BUF_MAX (1ul << 30)
int loop_buf_add(struct loop *l, void *p, size_t len);
/* Unregister slot (a no-op for a negative slot or a released loop).  The
 * kernel keeps the pages pinned until operations in flight on them end. */
void loop_buf_del(struct loop *l, int slot);
/* A free SQE with op attached as user data; submits to make room when the
 * ring is full, so it never returns NULL. */
struct io_uring_sqe *loop_sqe(struct loop *l, struct loop_op *op);
/* Complete op without the kernel (for injected faults): fn runs from the
 * loop with res, as if the kernel had returned it. */
void loop_fake(struct loop *l, struct loop_op *op, int res);
/* Call fn(arg) from the loop ms milliseconds from now (a timeout op whose
 * record the loop owns): for injected delays (sys_inject_delay()).  0, or
 * -ENOMEM with nothing queued. */
int loop_after(struct loop *l, unsigned ms, void (*fn)(void *arg), void *arg);
/* Run until l->stop is set.  Returns 0 or -errno of a fatal ring error. */
int loop_run(struct loop *l);

#endif
