/*
 * journal.h - the drain journal: which files of a version an unfinished
 * drain has already published to the PFS, with their chunk tables, so that a
 * restarted drain copies only the rest.
 *
 * The journal of the version with sequence number seq is the local file
 * <store>/drain/<seq, 16 hex digits>.journal (journal_path()).  It is a run
 * of self-contained records, one appended and fsync'd per published file;
 * there is no file header.  Each record is an image in the sense of codec.h
 * (magic, format, ..., CRC32C of every byte before it):
 *
 *   u64 magic  JOURNAL_MAGIC "CKPTJNL1"
 *   u32 format JOURNAL_FORMAT
 *   u32 file   index of the file in the drain's job (pfs_job.files[])
 *   u32 n      chunks that follow, <= JOURNAL_MAX_CHUNKS
 *   n x { u64 file_off; u32 len; u32 crc; u32 stored; u8 kind; u8 kind2 }
 *              the file's struct pfs_chunk entries, as in pfsman.h
 *   u32 crc    CRC32C of every byte of the record before it
 *
 * Reading never trusts the file: a record cut short at the end (a crash
 * during the append) is ignored; a bad magic, an unknown format, a bad CRC
 * or an impossible count stops the load there, and the records before it
 * stand.  A journal written before this format (magic "DJNL", no version)
 * is not read: its drain starts over, which is safe - it only copies again
 * files that were already published.
 *
 * The decoder checks only the record itself; whether the file index and
 * chunk count fit the version being drained is for the caller to check.
 *
 * Thread-safety: no state; every function is safe on distinct buffers.
 */
#ifndef CKPT_JOURNAL_H
#define CKPT_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pfsman.h"

#define JOURNAL_MAGIC      0x314c4e4a54504b43ull /* "CKPTJNL1" */
#define JOURNAL_FORMAT     1
#define JOURNAL_MAX_CHUNKS PFSMAN_MAX_CHUNKS
/* Bytes of a record's fixed part (magic .. n, crc) and of a chunk entry. */
#define JOURNAL_REC_FIXED  (8 + 4 + 4 + 4 + 4)
#define JOURNAL_CHUNK_LEN  (8 + 4 + 4 + 4 + 1 + 1)
/* The largest journal read: one record per file of the largest version. */
#define JOURNAL_MAX_BYTES  ((size_t)PFSMAN_MAX_FILES * JOURNAL_REC_FIXED + \
			    (size_t)PFSMAN_MAX_CHUNKS * JOURNAL_CHUNK_LEN)

/* One decoded record.  chunks points into the caller's buffer (it is not
 * copied): journal_rec_chunks() decodes it. */
struct journal_rec {
	uint32_t file;            /* index of the file in the job */
	uint32_t n;               /* chunks in the record */
	const uint8_t *chunks;    /* n encoded entries, in the decoded buffer */
};

/* Build the journal path of version seq in store into out (cap bytes).
 * 0, or -ENAMETOOLONG if it does not fit. */
int journal_path(char *out, size_t cap, const char *store, uint64_t seq);

/* Bytes of a record of n chunks. */
size_t journal_rec_size(uint32_t n);

/* Encode the record of file with its n chunks c into buf (cap bytes).
 * Length written, or -EMSGSIZE (too small a buffer), -EINVAL (n too big). */
long journal_encode(uint32_t file, const struct pfs_chunk *c, uint32_t n,
		    void *buf, size_t cap);

/*
 * Decode the record at the start of buf (len bytes) into rec.  Returns the
 * record's length (> 0); 0 if buf ends before the record does (a torn
 * tail, or len == 0); -CKPT_EBADMAGIC, -CKPT_EVERSION, -CKPT_ECORRUPT (bad
 * CRC) or -CKPT_EPROTO (n over JOURNAL_MAX_CHUNKS) if the record is bad.
 */
long journal_decode(const void *buf, size_t len, struct journal_rec *rec);

/* Decode rec's n chunks into out (which holds rec->n entries). */
void journal_rec_chunks(const struct journal_rec *rec, struct pfs_chunk *out);

/* Append the record of file and its n chunks c to the journal at path
 * (creating it, 0600), and fsync it.  0 or -errno. */
int journal_append(const char *path, uint32_t file,
		   const struct pfs_chunk *c, uint32_t n);
/* The same for nf files at once (file[i] with its n[i] chunks c[i]), in
 * one write and one fsync; a crash may keep the first records only.
 * 0 or -errno (-EINVAL: an n[i] over JOURNAL_MAX_CHUNKS). */
int journal_append_many(const char *path, uint32_t nf, const uint32_t *file,
			const struct pfs_chunk *const *c, const uint32_t *n);

/* Create the journal at path, empty, unless there is one, and make it
 * durable (the file and its directory entry).  A part's copy does this once
 * its name list is claimed, before its first file goes in place: a journal
 * that exists means that a copy of the part went on past its claim
 * (pfsnames.h).  0 or -errno. */
int journal_begin(const char *path);

/*
 * Read the journal at path and call fn(arg, rec) for each good record, in
 * order, until the first torn or bad one.  fn returns 0 to go on, or
 * anything else to stop the load there (a record that does not fit the
 * version).  Returns the number of records fn accepted, -ENOENT if there is
 * no journal, -EFBIG if it is over JOURNAL_MAX_BYTES, or -errno.
 * rec (and its chunks) is valid only during the call.
 */
int journal_load(const char *path,
		 int (*fn)(void *arg, const struct journal_rec *rec),
		 void *arg);

#endif
