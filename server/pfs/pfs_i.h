/*
 * pfs_i.h - what pfs.c (reads, removal, scans), pfscopy.c (copies) and
 * pfspart.c (versions in parts: publishing, a part's removal) share.
 * Nothing else includes it.  Worker threads only; blocking; 0 or -errno.
 */
#ifndef CKPTD_PFS_I_H
#define CKPTD_PFS_I_H

#include <dirent.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "attr.h"
#include "ckpt.h"
#include "pfsman.h"

struct pfs_owner;

/* A symbolic link: its bytes are its target (ckpt.h, CKPT_ATTR_IFLNK). */
static inline int is_link(const struct ckpt_attr *a)
{
	return attr_is_type(a, CKPT_ATTR_IFLNK);
}

/* The largest manifest taken from a uid other than ckptd's (a claim: one
 * a ckptd before stop 36 wrote, or a forgery): 256 MiB, about 12 million
 * chunk entries.  The start-up scan keeps the manifests it finds
 * (stripped of their chunk tables, with the catalog's version and file
 * table beside them), and takes claims from one uid only while all it
 * keeps of them holds at most PFS_CLAIM_BUDGET bytes of memory
 * (pfsman_held() and catalog_remote_held(): a manifest of short names
 * holds about three times its bytes, one of zero chunks little): past
 * that a uid's further claims are ignored (logged), so that no user can
 * make ckptd hold gigabytes by planting manifests in its own tree; and
 * every uid's together while they hold at most PFS_CLAIM_ALL_BUDGET, so
 * that no number of users can.
 * ckptd's own manifests have no such bound; an administrator lifts it for
 * a legacy version by giving its manifest to ckptd's uid (chown). */
#define PFS_CLAIM_MAX    (256ll << 20)
#define PFS_CLAIM_BUDGET (512ll << 20)
/* And at most this many of a uid's own manifests in all: each is one more
 * version the drain's periodic passes, the listings and retention walk,
 * however little it holds. */
#define PFS_CLAIM_VERSIONS 4096
/* And every uid's together at most these: twice one uid's, so that a
 * second uid's claims still fit beside one that takes all it may, and no
 * number of users can make ckptd hold more. */
#define PFS_CLAIM_ALL_BUDGET   (2 * PFS_CLAIM_BUDGET)
#define PFS_CLAIM_ALL_VERSIONS (2 * PFS_CLAIM_VERSIONS)

/* Asked once tmp is durable and before it is renamed to dst: anything but
 * 0 and tmp is removed and dst left as it was (that answer is returned). */
struct pfs_put_gate {
	int (*open)(void *arg);
	void *arg;
};

/* Write buf[0 .. len) at rel dst atomically: under rel tmp, fsync'd,
 * renamed, its directory fsync'd.  The file is ckptd's own (its euid and
 * egid), 0644: in its owner's 0700 tree, that uid can read it and remove
 * it but not write it, so such a file owned by ckptd is one ckptd wrote,
 * while one owned by the uid of the tree is only that uid's claim. */
int pfs_put_own(int tfd, const void *buf, size_t len, const char *tmp,
		const char *dst, const struct pfs_put_gate *gate);
/* Encode m and write it at dst with pfs_put_own(): pfs_load() trusts a
 * manifest owned by ckptd; one owned by the uid it names is only that
 * uid's claim (one a ckptd before stop 36 wrote, or a forgery). */
int pfs_manifest_put(int tfd, const struct pfsman *m, const char *tmp,
		     const char *dst, const struct pfs_put_gate *gate);
/* The manifest at rel (a version's, a part's, or one set aside), decoded
 * and checked as pfs_load() says. */
int pfs_load_at(const char *target, const char *rel, const char *job,
		const char *version, struct pfsman *out);
/* The same, and whether ckptd wrote it: *own is 1 when ckptd's uid owns
 * the file, else 0 (another uid's, which counts only within its claims:
 * pfs_i.h's budgets). */
int pfs_load_at_own(const char *target, const char *rel, const char *job,
		    const char *version, struct pfsman *out, int *own);
/* The regular file at rel, whole, in *buf (malloc'd, the caller frees it)
 * and *len, the uid that owns it in *owner, and its fstat in *st (when not
 * NULL).  One another uid owns is refused over PFS_CLAIM_MAX bytes
 * (-EFBIG). */
int pfs_read_whole(const char *target, const char *rel, void **buf,
		   size_t *len, uid_t *owner, struct stat *st);
/* The version's directory open for reading (NULL and *err = -errno). */
DIR *pfs_vdir_open(int tfd, const char *job, const char *version, int *err);
/* rmdir rel's directory and those above it while they are empty, up to
 * and with the one whose path is keep bytes long. */
void pfs_prune(int tfd, const char *rel, size_t keep);
/* Unlink what of ckptd's is in the version's directory besides the
 * manifest and files/: node's part manifest, name list and temporaries (every
 * node's when node is NULL), then the directory if it is left empty.
 * Best effort. */
void pfs_vdir_clean(int tfd, const char *job, const char *version,
		    const char *node);

#endif
