/*
 * bench_fio.h - the fio side of `ckptctl bench`: run fio with io_uring and
 * O_DIRECT on a directory, as the reference for the burst-to-LOCAL ratio.
 *
 * fio_burst() runs
 *   fio --name=burst --directory=DIR --ioengine=io_uring --direct=1 --bs=1M
 *       --rw=write --numjobs=N --size=BYTES --end_fsync=1 --group_reporting
 *       --output-format=json
 * and takes runtime, bw_bytes and io_bytes of the write group from its JSON,
 * plus the wall time of the whole fio process.  fio_cleanup() deletes the
 * files it wrote (burst.<job>.0).  Nothing here allocates beyond the call.
 */
#ifndef CKPT_BENCH_FIO_H
#define CKPT_BENCH_FIO_H

#include <stdint.h>

struct fio_result {
	uint64_t wall_ns;     /* fork to exit of the fio process */
	uint64_t runtime_ms;  /* "runtime" of the write group; 0 if absent */
	uint64_t bw_bytes;    /* "bw_bytes": bytes/s */
	uint64_t io_bytes;    /* "io_bytes" */
	char why[256];        /* on failure: what went wrong, for the report */
};

/* 1 if an executable fio is on $PATH. */
int fio_available(void);
/* Run fio; 0 when it ran and its JSON had a write bandwidth, else a
 * negative error with res->why filled. */
int fio_burst(const char *dir, int procs, uint64_t size,
	      struct fio_result *res);
/* Delete fio's files in dir; 0 or the first -errno other than -ENOENT. */
int fio_cleanup(const char *dir, int procs);

#endif
