/*
 * hostlist.h - expansion of Slurm hostlist expressions.
 *
 * Slurm names a job's nodes compactly in SLURM_JOB_NODELIST:
 * "gpu[001-004,017],login1" is gpu001 gpu002 gpu003 gpu004 gpu017 login1.
 * The syntax accepted here is Slurm's (src/common/hostlist.c):
 *
 *  - a list is hosts separated by ',' (or whitespace) outside brackets;
 *  - a host is literal text and bracket groups "[r,r,...]", where each r is
 *    "N" or "LO-HI" with LO <= HI; several groups in one host expand as a
 *    cartesian product, the last group varying fastest ("a[1-2]b[3-4]" is
 *    a1b3 a1b4 a2b3 a2b4);
 *  - numbers are printed zero-padded to the width LO was written with
 *    ("[08-11]" is 08 09 10 11, "[8-11]" is 8 9 10 11);
 *  - duplicates are kept, in order (as `scontrol show hostnames` does), and
 *    empty hosts ("a,,b", a trailing ',') are skipped, as Slurm skips them.
 *
 * Everything else (an unclosed, nested or stray bracket, an empty group or
 * range, a range backwards, a sign, a number with more than 9 digits, a
 * control byte) is -EINVAL.  The expansion is counted before anything
 * is allocated, so a hostile "[0-999999999]" costs nothing: more than `max`
 * hosts is -E2BIG, a host name longer than HOSTLIST_NAME_MAX -ENAMETOOLONG.
 *
 * No I/O, no globals, thread-safe.
 */
#ifndef CKPT_HOSTLIST_H
#define CKPT_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_NAME_MAX 255	/* longest host name produced (HOST_NAME_MAX) */
#define HOSTLIST_MAX 65536	/* a sensible `max`: Slurm's own MAX_RANGE */

/* An expanded list.  hosts[0..n-1] are NUL-terminated names, owned by the
 * list; hostlist_release() frees them. */
struct hostlist {
	char **hosts;
	size_t n;
};

/*
 * Expand expr into *out (which the caller owns and must release; after
 * an error it is left empty and releasing it is harmless).  At most max hosts.
 * Returns 0, -EINVAL (syntax), -E2BIG (more than max hosts),
 * -ENAMETOOLONG or -ENOMEM.  An empty or all-blank expr is an empty list.
 */
int hostlist_expand(const char *expr, size_t max, struct hostlist *out);

/*
 * Count the hosts expr names without expanding it: 0 and *count, or the
 * errors of hostlist_expand() (never -ENOMEM).
 */
int hostlist_count(const char *expr, size_t max, size_t *count);

/* Free what hostlist_expand() filled in; leaves *hl empty. */
void hostlist_release(struct hostlist *hl);

#endif
