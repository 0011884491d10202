/*
 * journal.c - the drain journal's on-disk format (see journal.h).
 *
 * A drain appends one record per file it has published; a restarted drain
 * reads them back to skip those files.  The journal lives in the local
 * store, but it is read after crashes, so every record is checked like any
 * other image (codec.h): magic, format, then the count against the bytes
 * present, then the CRC, and only then are its fields believed.  Records
 * are self-contained (each has its own magic and format) so an append never
 * has to look at what is already in the file.
 *
 * The I/O keeps what the drain did before this module existed: the append
 * (and journal_begin()) goes through sys_open() and sys_fsync() (so
 * CKPT_FAULT can fail them) but writes with plain write(), and the load
 * reads with plain open(), so the pwrite and open counts a fault plan sees
 * are those of the copy itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "codec.h"
#include "crc32c.h"
#include "journal.h"
#include "sys.h"

int journal_path(char *out, size_t cap, const char *store, uint64_t seq)
{
	int n;

	n = snprintf(out, cap, "%s/drain/%016llx.journal", store,
		     (unsigned long long)seq);
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	return 0;
}

size_t journal_rec_size(uint32_t n)
{
	return JOURNAL_REC_FIXED + (size_t)n * JOURNAL_CHUNK_LEN;
}

long journal_encode(uint32_t file, const struct pfs_chunk *c, uint32_t n,
		    void *buf, size_t cap)
{
	struct enc e;
	uint32_t i;

	if (n > JOURNAL_MAX_CHUNKS)
		return -EINVAL;
	enc_init(&e, buf, cap);
	enc_u64(&e, JOURNAL_MAGIC);
	enc_u32(&e, JOURNAL_FORMAT);
	enc_u32(&e, file);
	enc_u32(&e, n);
	for (i = 0; i < n; i++) {
		enc_u64(&e, c[i].file_off);
		enc_u32(&e, c[i].len);
		enc_u32(&e, c[i].crc);
		enc_u32(&e, c[i].stored);
		enc_u8(&e, c[i].kind);
		enc_u8(&e, c[i].kind2);
	}
	return enc_seal(&e);
}

long journal_decode(const void *buf, size_t len, struct journal_rec *rec)
{
	const uint8_t *p = buf;
	size_t need;
	uint32_t n;
	int ret;

	/* Too short to say anything: a torn tail, or nothing at all. */
	if (len < JOURNAL_REC_FIXED - 4) {
		/* ...unless the bytes present already show a foreign file. */
		if (len >= 8 && get_le64(p) != JOURNAL_MAGIC)
			return -CKPT_EBADMAGIC;
		return 0;
	}
	if (get_le64(p) != JOURNAL_MAGIC)
		return -CKPT_EBADMAGIC;
	if (get_le32(p + 8) != JOURNAL_FORMAT)
		return -CKPT_EVERSION;
	n = get_le32(p + 16);
	if (n > JOURNAL_MAX_CHUNKS)
		return -CKPT_EPROTO;
	need = journal_rec_size(n);
	if (len < need)
		return 0;
	ret = image_check(p, need, JOURNAL_MAGIC, JOURNAL_FORMAT,
			  JOURNAL_REC_FIXED);
	if (ret < 0)
		return ret;
	rec->file = get_le32(p + 12);
	rec->n = n;
	rec->chunks = p + JOURNAL_REC_FIXED - 4;
	return (long)need;
}

void journal_rec_chunks(const struct journal_rec *rec, struct pfs_chunk *out)
{
	struct dec d;
	uint32_t i;

	dec_init(&d, rec->chunks, (size_t)rec->n * JOURNAL_CHUNK_LEN);
	for (i = 0; i < rec->n; i++) {
		out[i].file_off = dec_u64(&d);
		out[i].len = dec_u32(&d);
		out[i].crc = dec_u32(&d);
		out[i].stored = dec_u32(&d);
		out[i].kind = dec_u8(&d);
		out[i].kind2 = dec_u8(&d);
	}
}

/* write() all of buf; 0 or -errno (-EIO if the disk takes nothing). */
static int write_all(int fd, const uint8_t *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int journal_append_many(const char *path, uint32_t nf, const uint32_t *file,
			const struct pfs_chunk *const *c, const uint32_t *n)
{
	size_t cap = 0, len = 0;
	uint8_t *buf;
	uint32_t i;
	long r;
	int fd, ret;

	for (i = 0; i < nf; i++) {
		if (n[i] > JOURNAL_MAX_CHUNKS)
			return -EINVAL;
		cap += journal_rec_size(n[i]);
	}
	buf = malloc(cap ? cap : 1);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < nf; i++) {
		r = journal_encode(file[i], c[i], n[i], buf + len, cap - len);
		if (r < 0) {
			ret = (int)r;
			goto out_free_buf;
		}
		len += (size_t)r;
	}
	fd = sys_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = fd;
		goto out_free_buf;
	}
	ret = write_all(fd, buf, len);
	if (ret == 0)
		ret = sys_fsync(fd);
	close(fd);
out_free_buf:
	free(buf);
	return ret;
}

int journal_append(const char *path, uint32_t file,
		   const struct pfs_chunk *c, uint32_t n)
{
	return journal_append_many(path, 1, &file, &c, &n);
}

/* Hand each good record of buf to fn; the count fn accepted. */
static int journal_walk(const uint8_t *buf, size_t len,
			int (*fn)(void *arg, const struct journal_rec *rec),
			void *arg)
{
	struct journal_rec rec;
	size_t pos = 0;
	int count = 0;
	long n;

	for (;;) {
		n = journal_decode(buf + pos, len - pos, &rec);
		if (n <= 0 || fn(arg, &rec) != 0)
			break;
		pos += (size_t)n;
		count++;
	}
	return count;
}

int journal_begin(const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	int fd, ret;

	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	fd = sys_open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return fd;
	ret = sys_fsync(fd);
	close(fd);
	return ret < 0 ? ret : sys_fsync_dir(slash == path ? "/" : dir);
}

int journal_load(const char *path,
		 int (*fn)(void *arg, const struct journal_rec *rec),
		 void *arg)
{
	uint8_t *buf = NULL;
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	if ((uint64_t)st.st_size > JOURNAL_MAX_BYTES) {
		ret = -EFBIG;
		goto out_close;
	}
	ret = 0;
	if (!st.st_size)
		goto out_close;
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	ret = sys_pread_all(fd, buf, (size_t)st.st_size, 0);
	if (ret == 0)
		ret = journal_walk(buf, (size_t)st.st_size, fn, arg);
	free(buf);
out_close:
	close(fd);
	return ret;
}
