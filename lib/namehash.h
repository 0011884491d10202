/*
 * namehash.h - the hash of names a client chooses: ckptd's in-memory tables
 * keyed by them (a version's files, vfiles.c; a cluster version's parts,
 * partsview.c), and ckptfs's inode numbers of what ckptd answers for
 * (fuse/ns.c, fuse/inomap.c).  ckptd and ckptfs only: not in libckpt.
 *
 * A keyed hash: SipHash-2-4 (libsodium's crypto_shorthash) under a key
 * drawn at random once per process, so that no client can choose names
 * that all fall in one bucket and make every lookup of the daemon's one
 * loop thread walk them all (CRC32C and FNV-1a are linear: such names
 * are easy to make, whatever their seed), nor two paths that ckptfs shows
 * with one st_ino (which cp -a, tar and rsync -H take for one file's two
 * names).  Never stored: a table is rebuilt from its names whenever it is
 * loaded, and ckptfs's hashed inode numbers are the mount's own (another
 * mount, another key, other numbers).
 *
 * Threads: any (the key is drawn under pthread_once).
 */
#ifndef CKPT_NAMEHASH_H
#define CKPT_NAMEHASH_H

#include <stddef.h>
#include <stdint.h>

/* The hash of the NUL-terminated s. */
uint32_t name_hash(const char *s);
/* The 64-bit hash of p[0 .. len). */
uint64_t name_hash64(const void *p, size_t len);

#endif
