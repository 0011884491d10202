/*
 * recover.h - start-up recovery of the local store.
 *
 * Recovery explains every manifest and every segment header it finds, and
 * destroys only what provably never committed:
 *
 *   - man/<seq>.tmp: a manifest never renamed into place; its version never
 *     committed.  Removed.
 *   - a manifest that decodes, and whose every segment still carries a header
 *     naming its (job, version, open_id): loaded, SEALED.
 *   - a manifest that fails to decode, or names a segment whose header is
 *     corrupt, blank, missing or another version's: evidence.  The manifest
 *     and the segments it (or a header naming its version) points at, unless
 *     another loaded version owns them, move to
 *     <store>/quarantine/<YYYYmmdd-HHMMSS>-<seq>/ with a `reason` file; the
 *     version is listed DAMAGED and logged as corruption.  At later starts the
 *     quarantine is listed again, until `ckptctl rm` discards it.
 *   - a segment whose header is corrupt and that nothing loaded claims:
 *     quarantined on its own.
 *   - a segment with a valid header that no manifest, damaged or not, can
 *     have named: its version never committed (a manifest is renamed into
 *     place only after every one of its segments is fdatasync'd).  Listed
 *     INCOMPLETE; the segment is recycled.
 *
 * The drain's start-up scan may then find a DAMAGED or INCOMPLETE version on
 * the PFS (catalog_adopt_remote): it is served from there.
 *
 * Single-threaded: called from catalog_open() before the loop starts.
 */
#ifndef CKPTD_RECOVER_H
#define CKPTD_RECOVER_H

struct catalog;

/* Recover the store of cat (whose mandir, qdir and segs are set).  0, or
 * -errno if the store cannot be read at all (a single bad file is never an
 * error: it is quarantined). */
int recover_store(struct catalog *cat);
/* Delete quarantine directory name (under cat->qdir) and what it holds:
 * the operator's `ckptctl rm` of a DAMAGED version. */
void recover_discard(struct catalog *cat, const char *name);

#endif
