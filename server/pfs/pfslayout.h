/*
 * pfslayout.h - where a drained version lives on the parallel file system,
 * and the only way ckptd reaches it there.
 *
 * The layout (below the drain target):
 *
 *   <c1>.dir/ ... <cn-1>.dir/     job components but the last; shared by
 *                                 every job below, ckptd's own, mode 0711
 *   <cn>.job/                     the job (c1/.../cn); its owner's, 0700
 *     <version>.ver/              a version; the owner's, 0700
 *       manifest                  the PFS manifest (pfsman.h), 0600
 *       manifest.tmp              the manifest being written
 *       tmp.<n>                   file number n being copied, 0600
 *       files/<path>              the version's files under their own
 *                                 paths; directories 0700, files 0600
 *
 *     and, for a version written in parts by several nodes of a cluster
 *     (nparts > 1), each node draining its own part into the same place:
 *       part.<node>               node's part manifest (pfsman.h, its
 *                                 files only), 0600, written last by node
 *       ptmp.<node>               node's part manifest being written
 *       tmp.<node>.<n>            node's file number n being copied
 *       manifest                  the union of the parts' manifests,
 *                                 written by one node (the publisher)
 *                                 once every part.<node> is there
 *
 * Node names are [A-Za-z0-9._-] (nodes.h), so a node's names never meet
 * another's: "part." and "ptmp." are prefixes no other name has, and in
 * tmp.<node>.<n> the last '.' ends the node (n has none).  A version in
 * parts is a drained version only through its manifest, like any other.
 *
 * The mapping is injective whatever bytes the names hold: every level says
 * what it is by a fixed suffix (a name may end in ".job" itself: the last
 * four bytes of a level are the suffix, the rest is the name, so stripping it
 * is unambiguous), a job's last component is the only ".job" level of a
 * path, and the user's paths live only below files/, so nothing of ckptd's
 * (the manifest, temporaries) can share a name with one of them.  Reading the
 * path back (pfs_level) gives the job, version and file path again.  Names
 * hold any byte but '/' and NUL (names.h) and are used as they are, with no
 * escaping: a component is never empty, "." or "..", so none can climb out
 * of its level, and a suffixed level is still one component.  The
 * suffixes cost 4 bytes of NAME_MAX (255) per level; job and version names
 * are short enough (CKPT_JOB_MAX, CKPT_VERSION_MAX) that no limit shrinks.
 *
 * Ownership and modes: a job's tree belongs to its owner (uid, and the
 * owner's primary group, or the gid equal to the uid when there is no
 * passwd entry), with no group or other bits, and is given to the owner at
 * creation (fchown and fchmod on the fd before a file is renamed into place,
 * a directory is made 0700 and then handed over), so there is never a moment
 * when another uid can read it.  The shared .dir levels are ckptd's (root's)
 * 0711: anyone may pass through but nobody can list the jobs in them, and
 * nobody but ckptd can add to them.  The target itself is the
 * administrator's; made by ckptd it is 0711.  A ckptd that is not root cannot
 * give files away: the tree is then its own uid's, still 0700/0600.
 *
 * Everything below the target is reached with pfs_open(), which refuses a
 * symbolic link at every level (owners may change their own trees), and an
 * existing directory is used only if it belongs to whom it should (pfs_mkdirs).
 *
 * All functions return >= 0 or -errno and never print.  Thread-safe.
 *
 * Process-wide state: one mutex (pfslayout.c's mkdir_lock) under which the
 * shared levels are made and re-checked, since the drain's workers are
 * threads of one process that would otherwise race to make one level.
 */
#ifndef CKPTD_PFSLAYOUT_H
#define CKPTD_PFSLAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ckpt.h"

#define PFS_SFX_DIR   ".dir"       /* a job component but the last */
#define PFS_SFX_JOB   ".job"       /* the last component of a job */
#define PFS_SFX_VER   ".ver"       /* a version */
#define PFS_SFX_LEN   4
#define PFS_MANIFEST  "manifest"   /* in a version's directory */
#define PFS_FILES     "files"      /* in a version's directory */
#define PFS_PART      "part."      /* + node: a part's manifest */
#define PFS_PART_TMP  "ptmp."      /* + node: one being written */
#define PFS_NAMES     "names."     /* + node: the paths of a part (pfsnames.c) */
#define PFS_NAMES_TMP "ntmp."      /* + node: one being written */
#define PFS_TMP       "tmp."       /* + [node.]n: a file being copied */

/* Bytes of the longest path pfs_path() makes, its NUL included: a job's
 * levels (each component with its 4-byte suffix: at most 3 x CKPT_JOB_MAX
 * for a job of one-byte components), the version's level, files/ and a
 * file path of CKPT_PATH_MAX2 bytes.  It is longer than PATH_MAX: which is
 * why no such path is ever handed to the kernel whole, and every call here
 * walks it one level at a time (openat, mkdirat, renameat, unlinkat). */
#define PFS_REL_MAX \
	(3 * CKPT_JOB_MAX + CKPT_VERSION_MAX + 64 + CKPT_PATH_MAX2 + 1)

/* What pfs_path() names. */
enum pfs_node {
	PFS_N_JOB,           /* the job's directory */
	PFS_N_VERSION,       /* a version's directory */
	PFS_N_MANIFEST,      /* its manifest */
	PFS_N_MANIFEST_TMP,  /* its manifest while being written */
	PFS_N_FILE,          /* its file `path` */
	PFS_N_FILE_TMP,      /* the temporary of its file number `idx` */
	PFS_N_PART_FILE_TMP, /* the same in node `path`'s part */
	PFS_N_PART,          /* the part manifest of node `path` */
	PFS_N_PART_TMP,      /* the same while being written */
	PFS_N_NAMES,         /* the name list of node `path`'s part */
	PFS_N_NAMES_TMP,     /* the same while being written */
};

/*
 * The one place a PFS path is made: node of (job, version, path or idx),
 * relative to the target (no leading '/'), into buf.  version is ignored for
 * PFS_N_JOB, path is the file's path for PFS_N_FILE and a node name
 * (nodes.h) for PFS_N_PART, PFS_N_PART_TMP, PFS_N_NAMES, PFS_N_NAMES_TMP
 * and PFS_N_PART_FILE_TMP, and
 * unused otherwise; idx is used by the two FILE_TMP nodes only.  The names
 * must be valid (names.h, nodes.h).  0, -EINVAL (no node name, an empty one
 * or one with a '/') or -ENAMETOOLONG.
 */
int pfs_path(char *buf, size_t cap, enum pfs_node node, const char *job,
	     const char *version, const char *path, uint32_t idx);
/* The number of shared levels above job's directory (components - 1). */
unsigned pfs_shared_levels(const char *job);

/* What a directory entry of the layout is, from its name. */
enum pfs_level { PFS_L_OTHER, PFS_L_DIR, PFS_L_JOB, PFS_L_VER };
/* The level name is, and in *stem the length of the name it stands for
 * (0 for PFS_L_OTHER). */
enum pfs_level pfs_level(const char *name, size_t *stem);

/* What an entry of a version's directory is, from its name. */
enum pfs_ventry {
	PFS_V_OTHER,         /* files/, manifest, anything not ckptd's */
	PFS_V_PART,          /* part.<node>: *node is set */
	PFS_V_NAMES,         /* names.<node>: *node is set */
	PFS_V_TEMP,          /* manifest.tmp, ptmp.<node>, ntmp.<node>,
				tmp.<...> */
};
/* The kind of version-directory entry name; for PFS_V_PART and
 * PFS_V_NAMES, *node points at the node name inside name. */
enum pfs_ventry pfs_ventry(const char *name, const char **node);

/* Who a job's tree belongs to on the PFS. */
struct pfs_owner {
	uid_t uid;
	gid_t gid;
};
/* The owner of the tree of a job of uid: uid and its primary group (ckptd's
 * own uid and gid when ckptd is not root).  May block on NSS (getpwuid_r):
 * not on the loop thread.  0 or -ENOMEM. */
int pfs_owner_of(uint32_t uid, struct pfs_owner *o);
/* Just the uid of that owner; never blocks. */
uid_t pfs_owner_uid(uint32_t uid);

/* An fd of the target directory, which the operator makes: ckptd never
 * creates it, so that a PFS that is not mounted is an error (-ENOENT), not
 * a drain onto the local mount point.  The caller closes it. */
int pfs_target_open(const char *target);
/* openat(tfd, rel, flags, mode) refusing symbolic links at every level of
 * rel (ELOOP or ENOTDIR).  Counts as an "open" for sys_inject(). */
int pfs_open(int tfd, const char *rel, int flags, mode_t mode);
/* pfs_open() for reading a file that must be a regular one: opened
 * without blocking (a FIFO a user left in its tree never holds the
 * caller), then refused with -EINVAL unless it is a regular file; its
 * fstat() in *st if st is not NULL.  The fd or -errno. */
int pfs_open_regular(int tfd, const char *rel, struct stat *st);
/* An O_PATH fd of the directory holding rel, and in *name its last
 * component (a pointer into rel).  For renameat, unlinkat. */
int pfs_open_parent(int tfd, const char *rel, const char **name);
/* Make directory rel and every missing one above it: the first `shared`
 * levels ckptd's, 0711, the rest o's, 0700.  An existing level must be a
 * directory of that uid (-EACCES otherwise). */
int pfs_mkdirs(int tfd, const char *rel, unsigned shared,
	       const struct pfs_owner *o);
/* Give the file open as fd to o with mode. */
int pfs_own(int fd, const struct pfs_owner *o, mode_t mode);
/* Make the directories above rel, a path of job's (the job's shared levels
 * ckptd's, the rest o's), as pfs_mkdirs(). */
int pfs_mkdirs_above(int tfd, const char *rel, const char *job,
		     const struct pfs_owner *o);
/* A new, empty file at rel (a leftover there is removed first), o's and
 * 0600 before a byte is written; the directory must exist.  The fd, open
 * O_WRONLY, or -errno. */
int pfs_create(int tfd, const char *rel, const struct pfs_owner *o);
/* Rename rel `from` to rel `to` (replacing it) and fsync to's directory.
 * Counts as a "rename" for sys_inject(). */
int pfs_rename(int tfd, const char *from, const char *to);
/* The same without the fsync of to's directory, for a caller that renames
 * several files into one and then calls pfs_fsync_parent() once. */
int pfs_rename_nosync(int tfd, const char *from, const char *to);
/* fsync the directory rel is in.  0 or -errno. */
int pfs_fsync_parent(int tfd, const char *rel);
/* Make rel `to` a hard link of rel `from` (to must not exist) and fsync
 * to's directory.  A "link" for fault injection, whose delay it sleeps:
 * call it on a worker thread only. */
int pfs_link(int tfd, const char *from, const char *to);
/* unlinkat the last level of rel; flags 0 or AT_REMOVEDIR. */
int pfs_unlink(int tfd, const char *rel, int flags);

#endif
