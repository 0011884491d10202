/*
 * pfscopy_i.h - what pfscopy.c (a copy as a whole: what to copy, hard
 * links, directories, the manifest) and pfspiece.c (the pieces of its files,
 * the threads that copy them, the finisher that publishes the files) share.
 * Nothing else includes it.  See pfscopy.c for the design.
 */
#ifndef CKPTD_PFSCOPY_I_H
#define CKPTD_PFSCOPY_I_H

#include <pthread.h>
#include <stdint.h>

#include "pfs.h"
#include "pfsbuild.h"
#include "pfslayout.h"

/* A file being copied, shared by the threads copying its pieces (c->mu). */
struct cfile {
	int fd;                   /* its temporary, from its first piece
				   * until it is finished or cleaned up */
	int dfd;                  /* the same file opened O_DIRECT, or -1
				   * (pfspiece.c: direct writes) */
	uint32_t left;            /* its pieces not done yet */
	uint32_t busy;            /* threads copying a piece of it now */
	uint64_t out_off;         /* packed: where its next stored chunk goes */
};

/* Chunks [first, end) of a file: what one thread copies at a time. */
struct piece {
	uint32_t file;
	uint32_t first, end;
	int taken;
	int fetched;              /* its records were asked for */
};

struct copy {
	const struct pfs_opts *o;
	struct pfs_job *job;
	struct pfsman m;          /* the manifest being built; each chunk's
				   * entry is written by the thread that
				   * copies it */
	struct pfsman base;       /* incremental: the previous version */
	int have_base;
	struct pfs_index ix;      /* read-only once the threads start */
	int tfd;                  /* the target directory */
	struct pfs_owner owner;   /* of the job's tree */
	const char *node;         /* a part's copy: this node, else NULL */
	struct piece *pieces;
	uint32_t npieces;
	struct cfile *cf;         /* by file index */
	pthread_mutex_t mu;       /* next, cf[], err, err_file, ready */
	pthread_mutex_t jmu;      /* appends to the journal */
	uint32_t next;            /* the first piece not taken */
	int err;                  /* the first error: every thread stops */
	uint32_t err_file;        /* the file to blame, or UINT32_MAX */
	/* Files whose pieces are all copied, for the finisher (a thread
	 * that fsyncs, renames and journals them while the others copy on),
	 * in the order they were done. */
	uint32_t *ready;
	uint32_t nready, ready_head;
	pthread_cond_t ready_cv;  /* a file is ready, or copying is over */
	uint64_t ready_bytes;     /* bytes of the files ready */
	uint64_t batch;           /* ready bytes that make a batch */
	uint32_t batch_files;     /* or this many ready files */
	uint32_t nopen;           /* files with c->cf[].fd open */
	uint32_t hi_file;         /* the highest file index opened, + 1 */
	uint32_t open_max;        /* ... at most (copy_open_max()) */
	pthread_cond_t room_cv;   /* nopen went down, or the copy failed */
	int finisher;             /* the finisher runs */
	int copied;               /* every copying thread is done */
};

/* pfscopy.c: the PFS names of file fi, its place (dst) and its temporary
 * (tmp), each PFS_REL_MAX bytes.  0 or -ENAMETOOLONG. */
int copy_file_names(const struct copy *c, uint32_t fi, char *tmp, char *dst);

/* pfspiece.c */
/* Record ret (< 0) as the copy's error if it is the first; fi is to
 * blame, or UINT32_MAX.  Every thread stops at its next chunk. */
void copy_fail(struct copy *c, int ret, uint32_t fi);
/* Give the PFS file open as fd the mode and times of a (see there). */
int copy_attr(int fd, const struct ckpt_attr *a);
/* Journal files fis[0 .. n), published, in one append and fsync. */
int copy_journal(struct copy *c, const uint32_t *fis, uint32_t n);
/* The chunk idx of path in the copy's base, if the base stores it (not a
 * PFS_REF itself) and a chunk of this copy may refer to it; else NULL. */
const struct pfs_chunk *copy_base_chunk(const struct copy *c,
					const char *path, uint32_t idx);
/* Cut every file still to copy (done[fi] unset) into c->pieces. */
int copy_plan(struct copy *c, const uint8_t *done);
/* The ready bytes that make a batch for the finisher (c->batch). */
uint64_t copy_batch_bytes(const struct pfs_opts *o);
/* Files one copy may hold open at once (c->open_max): its share of the fd
 * limit, with as many copies at once as o->threads.  A finished file keeps
 * its fd until the finisher publishes it. */
uint32_t copy_open_max(const struct pfs_opts *o);
/* Threads for a copy of npieces pieces (may be 0: the caller's alone),
 * taken from the drain's budget; give them back with copy_threads_give. */
unsigned copy_threads_take(const struct pfs_opts *o, uint32_t npieces);
void copy_threads_give(const struct pfs_opts *o, unsigned n);
/* Copy and publish every piece with n threads (the caller's and n - 1
 * helpers) and the finisher.  0 or the copy's first error. */
int copy_pieces(struct copy *c, unsigned n);
/* After an error: close and unlink the temporaries of unfinished files. */
void copy_cleanup(struct copy *c);

#endif
