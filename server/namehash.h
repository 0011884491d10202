/*
 * namehash.h - the hash of the in-memory tables keyed by names a client
 * chooses (a version's files, vfiles.c; a cluster version's parts,
 * partsview.c).
 *
 * A keyed hash: SipHash-2-4 (libsodium's crypto_shorthash) under a key
 * drawn at random once per process, so that no client can choose names
 * that all fall in one bucket and make every lookup of the daemon's one
 * loop thread walk them all (CRC32C and FNV-1a are linear: such names
 * are easy to make, whatever their seed).  Never stored: a table is
 * rebuilt from its names whenever it is loaded.
 *
 * Threads: any (the key is drawn under pthread_once).
 */
#ifndef CKPTD_NAMEHASH_H
#define CKPTD_NAMEHASH_H

#include <stdint.h>

/* The hash of the NUL-terminated s. */
uint32_t name_hash(const char *s);

#endif
