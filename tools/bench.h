/*
 * bench.h - state and results of one `ckptctl bench` run, shared by the
 * measuring side (bench.c, bench_burst.c) and the report (bench_report.c).
 *
 * struct bench is filled in order: options, then what ckptd said about
 * itself, then the results.  It owns nothing on the heap; the strings it
 * points to are argv's, the environment's and the ctl's.
 */
#ifndef CKPT_BENCH_H
#define CKPT_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "bench_fio.h"
#include "ckpt.h"

#define BENCH_MAX_NAMES   8
#define BENCH_STALL_MAX   1.3 /* design target: stall <= 1.3 x memcpy */
#define BENCH_BURST_MIN   0.9 /* design target: >= 0.9 of fio's rate */
#define BENCH_WRITERS_STALL_MAX 1.2 /* issue 13: N writers at once */
#define BENCH_FAIR_MAX    1.1 /* slowest writer / median writer */
#define BENCH_WAIT_MS     600000 /* a version 10 min from LOCAL failed */
#define BENCH_WRITERS_MAX 64  /* --mode writers: at most this many */

enum bench_mode {
	BENCH_MODE_ALL = 0,   /* (a) one-process stall, (b) burst vs fio */
	BENCH_MODE_WRITERS,   /* (c) stall of N writers at once vs memcpy */
	BENCH_MODE_BURST,     /* (b) on recycled segments, fio's 2nd pass */
};

enum bench_fio_state {
	BENCH_FIO_NOT_RUN = 0, /* the run stopped before fio */
	BENCH_FIO_MISSING,     /* no fio on $PATH */
	BENCH_FIO_FAILED,      /* fio ran and failed; see fio.why */
	BENCH_FIO_OK,
};

struct bench {
	/* options */
	const char *dir;        /* --dir, or NULL */
	const char *job;        /* --job */
	const char *socket;     /* as for every command; NULL: default */
	char user_lease[64];    /* $CKPT_STAGING as the user set it, or "" */
	int procs;              /* --procs: writer processes */
	uint64_t size;          /* --size: bytes per writer, and stall S */
	int mode;               /* --mode: enum bench_mode */
	size_t piece;           /* bytes per ckpt_write() call of a writer */
	int stall_mode;         /* (c): writers have a memcpy phase too */
	int writes_first;       /* --first writes: (c)'s ckpt_write()s run
				 * before the memcpy, not after */

	/* the daemon and the disk */
	uint64_t daemon_pid;
	char store[256];        /* ckpt_status().store */
	char fio_dir[4096];     /* where fio writes */
	int dir_created;        /* we made fio_dir; rmdir it at the end */
	int other_dev;          /* fio_dir is not on the store's device */

	/* (a) trainer stall, best of 3 each */
	uint64_t memcpy_ns;
	uint64_t write_ns;
	size_t buf_max;         /* ckpt_buf_max(): largest staging piece */

	/* (b) burst to LOCAL; (c) the same writers, timed each */
	char burst_version[64];
	int nbursts;            /* bursts run so far (names them) */
	uint64_t burst_ns;      /* barrier release to LOCAL */
	int fio_state;          /* enum bench_fio_state */
	struct fio_result fio;
	uint64_t go_ns, go2_ns;  /* (c) the releases of memcpy and writes */
	uint64_t w_copy_ns[BENCH_WRITERS_MAX];  /* (c) release to writer i's
						 * memcpy done */
	uint64_t w_write_ns[BENCH_WRITERS_MAX]; /* release to its last
						 * ckpt_write() back */

	/* versions created, removed at the end */
	char names[BENCH_MAX_NAMES][CKPT_VERSION_MAX + 1];
	int nnames;
};

/* (b), ckpt side (bench_burst.c).  c is the parent's connection, made
 * before the fork; it only waits.  Returns an exit status, 0 on success. */
int bench_burst(struct bench *b, struct ckpt_client *c);
/* Remember a version to remove at the end.  0 or -ENOSPC. */
int bench_track(struct bench *b, const char *version);
/* Fill buf with reproducible, incompressible bytes. */
void bench_fill(void *buf, size_t len, uint64_t seed);
/* len bytes of private memory, every page touched; NULL on failure. */
void *bench_map_prefault(size_t len);
/* The median and the largest of n times; 0 for n == 0. */
uint64_t bench_median(const uint64_t *ns, int n);
uint64_t bench_max(const uint64_t *ns, int n);
/* Print the report on stdout: a table, or one JSON object. */
void bench_report(const struct bench *b, int json);

#endif
