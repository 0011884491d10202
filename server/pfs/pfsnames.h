/*
 * pfsnames.h - the name list of a part of a version in parts: the paths
 * the part puts under the version's files/ on the PFS, written before its
 * first file, so that two nodes' parts never put a file at one path.
 *
 * Each node's copy of its part writes names.<node> (pfslayout.h), durably,
 * and only then reads every other node's name list (and the part manifest
 * of any node without one, from before name lists).  If the two clash
 * (namelist.h: one path named by both, or a file of one on the way to a
 * path of the other, "a" against "a/b"), the part is refused (-EEXIST)
 * before any of its files is put in place, and removes its own list again
 * (it put nothing in place), so that it does not go on refusing the other
 * part once it is removed or written anew; it is retried on the drain's
 * schedule.  Of two nodes whose parts clash, the later to write its list
 * sees the other's unless that one was refused already: one or both are
 * refused, never neither.
 *
 * A part that goes on is never refused later.  Its copy makes the drain
 * journal (journal_begin()) before its first file goes in place, and a
 * copy restarted after a crash claims again with went_on set.  A list that
 * clashes with it then was written after its claim (it was durable before
 * that claim read the others, and it never left), so that part will see
 * this one's list and be refused, or it was killed before it looked: this
 * part goes on, and logs the clash.  Claiming again, a copy leaves a list
 * that is already the same bytes as it is (a listing may miss a name
 * renamed over during it: tmpfs does).  If it is refused all the same
 * (another node's list that does not verify, or a part manifest without a
 * list), it keeps its list, since its files may be in place.
 *
 * So a file under files/ is only ever replaced by the part whose list
 * names it (a copy of it restarted, or a new incarnation of the version),
 * no part's directory stands where another part's file goes, and a part's
 * DRAINED, on which its local copy may go, means its own bytes are there.
 *
 * Directories are listed too (with a '/' after them), so that a directory
 * of one part, even an empty one, and a file of the same name in another
 * clash; two parts may both hold one directory.
 *
 * The format is namelist.h's.  The file is ckptd's own (euid), 0644; a
 * list owned by anyone else is not one ckptd wrote, and is ignored.
 *
 * Worker threads only; blocking.  0 or -errno.
 */
#ifndef CKPTD_PFSNAMES_H
#define CKPTD_PFSNAMES_H

#include <stddef.h>

struct pfs_job;

/* Write job's part's name list as names.<job->node> (tfd: an fd of the
 * directory target), then check it against every other node's.  went_on:
 * a copy of this part went on past its claim before (its journal exists).
 * -EEXIST when another part clashes with it: the path at fault into clash
 * (cap bytes) and the other node into other (ocap bytes).  -CKPT_ECORRUPT
 * for another node's list that does not verify. */
int pfs_names_claim(const char *target, int tfd, const struct pfs_job *job,
		    int went_on, char *clash, size_t cap, char *other,
		    size_t ocap);
/* Remove node's name list of a part that is removed before it was
 * drained (its files, if an interrupted copy put any, are no part's). */
int pfs_names_drop(const char *target, const char *job, const char *version,
		   const char *node);

#endif
