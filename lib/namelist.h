/*
 * namelist.h - the format of a part's name list on the PFS (what it is for:
 * server/pfs/pfsnames.h), and the check of one part's names against another's.
 * Pure: no I/O, no globals, thread-safe.
 *
 * Format (little-endian): "CKPTNAM1", u32 count, u32 CRC32C of the bytes
 * after the header, then count NUL-terminated entries.  An entry is a path
 * the part puts under the version's files/: a directory's ends in '/',
 * anything else's (a file, a symlink) does not.  No entry is longer than
 * NAMELIST_ENTRY_MAX bytes.  Lists written before directories were listed
 * (stop 40) hold only files, and read the same.
 *
 * Two parts clash when they could not both be placed under files/: an
 * entry of one names a file of the other, or lies under it ("a" against
 * "a", "a/b" or "a/").  Two directories never clash, nor do "a" and "ab".
 */
#ifndef CKPT_NAMELIST_H
#define CKPT_NAMELIST_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"

#define NAMELIST_MAGIC     "CKPTNAM1"
#define NAMELIST_HDR       16u
#define NAMELIST_ENTRY_MAX (CKPT_PATH_MAX2 + 1)

/* path's entry, with a '/' after it if dir: malloc'd (the caller frees),
 * or NULL (ENOMEM). */
char *namelist_entry(const char *path, int dir);
/* Sort e[0 .. n) as the clash checks need (strcmp order). */
void namelist_sort(char **e, uint32_t n);
/* The list of e[0 .. n) in *buf (malloc'd, the caller frees) and *len.
 * 0 or -ENOMEM. */
int namelist_encode(char *const *e, uint32_t n, uint8_t **buf, size_t *len);
/* Does buf[0 .. len) verify: magic, CRC, count entries filling it, none
 * empty or longer than NAMELIST_ENTRY_MAX?  1 or 0. */
int namelist_ok(const uint8_t *buf, size_t len);
/*
 * Does entry q clash with mine[0 .. n) (sorted)?  The path at fault (the
 * file the other lies on or under) or NULL.  The answer may be scratch,
 * NAMELIST_ENTRY_MAX + 2 bytes of the caller's, which it overwrites.
 */
const char *namelist_clash(char *const *mine, uint32_t n, const char *q,
			   char *scratch);
/* The first clash of mine[0 .. n) (sorted) with any entry of the list
 * buf[0 .. len), which namelist_ok() passed; as namelist_clash(). */
const char *namelist_first_clash(char *const *mine, uint32_t n,
				 const uint8_t *buf, size_t len,
				 char *scratch);

#endif
