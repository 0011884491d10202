/*
 * pfscache.h - the PFS manifests that reads need, loaded when a read needs
 * one and kept, within a budget, for the reads after it.
 *
 * The catalog keeps a remote version's manifest stripped (pfsman_strip():
 * its files and holes, not its chunk table, which grows with the bytes:
 * 6 MB a TB with 4 MiB chunks), so that a node's memory does not grow with
 * everything drained.  A read from the PFS needs the table: it takes the
 * manifest from here.  A manifest is loaded (pfs_load_stamped()) by the
 * first worker that asks for it while the others asking wait for that
 * load; every later ask checks the file's stamp on the PFS (pfs_stamp())
 * and loads again when the file is not the one loaded (replaced, rewritten,
 * gone), so a read never uses a manifest the PFS no longer has, as when
 * each read loaded its own.
 *
 * Budget: entries no read holds are dropped, least recently used first,
 * while the memory the entries hold (pfsman_held(), and the index by name)
 * passes the budget, but the most recently used one stays, so that one
 * restore of a version larger than the budget does not load its manifest
 * at every read.  Entries held are never
 * dropped.  At most PFSC_MAX_ENTRIES are kept.
 *
 * Threads: any (worker threads; one mutex).  The cache owns its manifests;
 * a caller holds one from pfscache_get() to pfscache_put() and only reads
 * it.
 */
#ifndef CKPTD_PFSCACHE_H
#define CKPTD_PFSCACHE_H

#include <stdint.h>

#include "pfsman.h"

#define PFSC_MAX_ENTRIES 256

struct pfscache;
struct pfsc_entry;

/* Which manifest, and which incarnation of it a read wants. */
struct pfsc_want {
	const char *job, *version;
	const char *node;         /* "": the version's manifest; else that
				   * node's part manifest */
	int by_seq;               /* compare seq, else sealed_ns; and uid */
	uint64_t seq, sealed_ns;
	uint32_t uid;
};

/* A cache over the PFS at target (kept, not copied) of budget bytes.
 * NULL on ENOMEM. */
struct pfscache *pfscache_new(const char *target, uint64_t budget);
/* Free it; no entry may be held. */
void pfscache_free(struct pfscache *c);

/* The manifest w names, as pfs_load_stamped() reads and checks it, held
 * for the caller in *m until pfscache_put(*e).  -CKPT_ECORRUPT when the
 * manifest there is another incarnation than w's (as a read finding it
 * answers: an entry kept is dropped and the manifest loaded once more
 * before that answer, and not kept), or pfs_load_stamped()'s error. */
int pfscache_get(struct pfscache *c, const struct pfsc_want *w,
		 const struct pfsman **m, struct pfsc_entry **e);
void pfscache_put(struct pfscache *c, struct pfsc_entry *e);
/* The index of the entry named path in e's manifest (trying hint first),
 * or -ENOENT: as pfsman_find(), in log time (an index by name built at the
 * load). */
int pfscache_find(const struct pfsc_entry *e, const char *path,
		  uint32_t hint);

struct pfsc_stats {
	uint64_t loads;           /* manifests read from the PFS */
	uint64_t hits;            /* asks answered without a load */
	uint64_t bytes;           /* of the entries kept now */
	uint32_t entries;
};
void pfscache_stats(struct pfscache *c, struct pfsc_stats *out);

#endif
