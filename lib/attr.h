/*
 * attr.h - the rules for a file's attributes (ckpt.h, struct ckpt_attr),
 * which ckptd keeps as data: what type an entry is, and which attributes a
 * uid may give a file.  ckptd asks them of writers and of PFS manifests.
 * Pure functions: no allocation, no I/O.
 */
#ifndef CKPT_ATTR_H
#define CKPT_ATTR_H

#include <stdint.h>

#include "ckpt.h"

/* Is a of type `type` (ckpt.h, CKPT_ATTR_IF*)?  A mode never set is a
 * regular file's. */
static inline int attr_is_type(const struct ckpt_attr *a, uint32_t type)
{
	return (a->set & CKPT_ATTR_MODE) && (a->mode & CKPT_ATTR_IFMT) == type;
}

/*
 * May a caller of uid `caller` give a file of a version that uid `owner`
 * owns the attributes a names (a->set)?  Root may give any; another uid no
 * owner but the version's, no set-uid or set-gid bit, and no device node
 * (it could not mknod one either), since `ckptctl restore` run as root
 * applies them.  0 or -EPERM.  SETATTR asks it (on ckptd's loop: it asks
 * nothing of NSS, so it is stricter than attr_owner_could()).
 */
int attr_permitted(uint32_t caller, uint32_t owner, const struct ckpt_attr *a);

/*
 * Could uid `owner` have given its own file the attributes a names, on a
 * POSIX file system, with no privilege?  Root could give any.  Another uid:
 * no other owner, no device node, a set-uid bit only on a file it names
 * itself as owner of, a set-gid bit only with a group it is a member of
 * (NSS: getpwuid_r and getgrouplist, so it may block).  This is what ckptfs
 * lets a user do (the kernel checked it).  0, -EPERM, or -ENOMEM.  A
 * manifest on the PFS owned by the uid it names (which can write it) is
 * taken only if this holds of every file (server/pfs/pfs.c).
 */
int attr_owner_could(uint32_t owner, const struct ckpt_attr *a);

#endif
