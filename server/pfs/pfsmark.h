/*
 * pfsmark.h - the drain target's mark: that the target is the file system
 * this store drains to, not the empty mount point a PFS that failed to
 * mount leaves behind.
 *
 * Without it, drains into such a mount point fill the node's own disk, the
 * copies vanish under the PFS once it is mounted again, and retention
 * looking for a PFS copy finds none.  So the target carries a mark,
 * TARGET/.ckpt-target ("ckpt-target 1 <32 hex digits>"), made by the first
 * ckptd that drains there and adopted by every other (the nodes of a
 * cluster share one), and the store records it with the target's path in
 * STORE/drain/target.  Every task that writes to, removes from or relies
 * on the PFS calls pfsmark_check() first: a target without the recorded
 * mark fails it with -CKPT_ETARGET and the task is tried again later.
 *
 * First use (no record, or one naming another path: the configuration
 * changed): a mark found is adopted; a target without one gets one, unless
 * it is empty and this store drained before (a PFS not mounted at the
 * first start after an upgrade, or under a new path).  A target that does
 * not exist is not the target either.  pfsmark_adopt() (ckptctl drain
 * --adopt-target) takes the target as it is, replacing a mark ckptd did
 * not write, for a target moved on purpose.
 *
 * With [drain] mount set, a check fails with -CKPT_ETARGET while that path
 * is not a mount point: the one case the mark cannot catch, a target that
 * is the PFS's mount point itself at its first use.
 *
 * A target others may write (its owner, group or other bits, or its
 * POSIX ACL, let a uid other than ckptd's or root's, or a group other than
 * theirs, write) fails every check, first use included, with -CKPT_ETARGET, and
 * pfsmark_adopt() does not take it: a user could make other users' job
 * levels, or the mark, there first.
 *
 * Each change of the verdict, or of its reason, is logged once.  Thread-safe: the mark is
 * checked on the pool's workers.
 */
#ifndef CKPTD_PFSMARK_H
#define CKPTD_PFSMARK_H

#include <pthread.h>
#include <stdint.h>

#include "conf.h"

#define PFSMARK_NAME ".ckpt-target"
#define PFSMARK_ID_LEN 32

struct pfsmark {
	pthread_mutex_t lock;
	const char *target;              /* [drain] target, the conf's */
	const char *mount;               /* [drain] mount, the conf's, or
					  * NULL: set after pfsmark_open() */
	char record[CONF_PATH_MAX + 32]; /* STORE/drain/target */
	char id[PFSMARK_ID_LEN + 1];     /* the recorded mark, or "" */
	int drained;        /* the store holds drained versions */
	int adopt;          /* take the target as it is (pfsmark_adopt) */
	int verdict;        /* the last check's answer; 1 before any */
	int why;            /* and why (pfsmark.c), for the log */
};

/* Read the record in drain_dir (STORE/drain) for target; drained: whether
 * this store drained before (trailing slashes do not change a path).  0 or -errno (-ENOMEM); a
 * record unreadable or for another path is logged and ignored. */
int pfsmark_open(struct pfsmark *pm, const char *target,
		 const char *drain_dir, int drained);
void pfsmark_close(struct pfsmark *pm);

/* 0 if the target carries the store's mark (making and recording it on
 * first use); -CKPT_ETARGET if it does not or does not exist; -errno if
 * it cannot be read, or marked on first use (-EROFS: read-only).  Not cached: an open and a read of
 * the mark, as many metadata operations as a version's manifest, at every
 * task.  Any thread. */
int pfsmark_check(struct pfsmark *pm);

/* The next check takes the target as it is: its mark, or a new one.  Any
 * thread. */
void pfsmark_adopt(struct pfsmark *pm);

#endif
