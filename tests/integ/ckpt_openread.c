/*
 * ckpt_openread.c - how long reads of a version still open take when it has
 * many records: the micro-measure of the read index (tools/bench_restore.sh
 * runs it; not a test).
 *
 *   ckpt_openread SOCKET JOB VERSION N SIZE
 *
 * Opens the version and writes N records of SIZE bytes, one after the other,
 * to file "f" and as many to "g" (records of other files count too when a
 * read scans the version), then, the version still open:
 *   first    the first read of SIZE bytes of f (makes the index)
 *   read     READS reads of SIZE bytes of f at random offsets (one or two
 *            records each: the disk's part is small): mean per read
 *   append   READS times one SIZE write appended to f then a read of its
 *            last SIZE bytes (a writer reading back as it goes): mean per
 *            pair
 *   whole    one read of all of f (one disk read per record)
 * and prints one line per figure, "NAME us", checking the bytes of each
 * read.  The version is aborted at the end.  Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt.h"

#define READS 2000
#define PIECE 4096

static uint8_t byte_at(uint64_t i)
{
	return (uint8_t)(i * 2654435761u >> 13);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Read len bytes at off of f and check them against byte_at(). */
static int read_check(struct ckpt_client *c, const char *job,
		      const char *ver, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0, i;
	int ret = ckpt_read(c, job, ver, "f", buf, len, off, &got);

	if (ret < 0 || got != len) {
		fprintf(stderr, "ckpt_openread: read at %llu: %s (%zu of %zu)\n",
			(unsigned long long)off, ckpt_strerror(ret), got, len);
		return -1;
	}
	for (i = 0; i < len; i++)
		if (buf[i] != byte_at(off + i)) {
			fprintf(stderr, "ckpt_openread: byte %llu differs\n",
				(unsigned long long)(off + i));
			return -1;
		}
	return 0;
}

static int write_at(struct ckpt_version *v, const char *path, uint8_t *buf,
		    size_t len, uint64_t off)
{
	size_t i;
	int ret;

	for (i = 0; i < len; i++)
		buf[i] = byte_at(off + i);
	ret = ckpt_write(v, path, buf, len, off);
	if (ret < 0)
		fprintf(stderr, "ckpt_openread: write: %s\n", ckpt_strerror(ret));
	return ret;
}

static int run(struct ckpt_client *c, struct ckpt_version *v, const char *job,
	       const char *ver, uint64_t n, size_t size, uint8_t *buf)
{
	uint64_t i, t0, end = n * size;
	unsigned seed = 7;

	for (i = 0; i < n; i++)
		if (write_at(v, "f", buf, size, i * size) < 0 ||
		    write_at(v, "g", buf, size, i * size) < 0)
			return -1;
	if (ckpt_sync(v) < 0)
		return -1;
	t0 = now_us();
	if (read_check(c, job, ver, buf, size, 0) < 0)
		return -1;
	printf("first %llu\n", (unsigned long long)(now_us() - t0));
	t0 = now_us();
	for (i = 0; i < READS; i++)
		if (read_check(c, job, ver, buf, size,
			       (uint64_t)rand_r(&seed) % (end - size)) < 0)
			return -1;
	printf("read %llu\n", (unsigned long long)((now_us() - t0) / READS));
	t0 = now_us();
	for (i = 0; i < READS; i++) {
		if (write_at(v, "f", buf, size, end) < 0)
			return -1;
		end += size;
		if (read_check(c, job, ver, buf, size, end - size) < 0)
			return -1;
	}
	printf("append %llu\n", (unsigned long long)((now_us() - t0) / READS));
	t0 = now_us();
	if (read_check(c, job, ver, buf, end, 0) < 0)
		return -1;
	printf("whole %llu\n", (unsigned long long)(now_us() - t0));
	return 0;
}

int main(int argc, char **argv)
{
	struct ckpt_version *v = NULL;
	struct ckpt_client *c = NULL;
	uint64_t n;
	size_t size;
	uint8_t *buf;
	int ret;

	if (argc != 6) {
		fprintf(stderr, "usage: ckpt_openread SOCKET JOB VERSION N SIZE\n");
		return 2;
	}
	n = strtoull(argv[4], NULL, 0);
	size = strtoull(argv[5], NULL, 0);
	if (n * size < 2 * PIECE || size > PIECE) {
		fprintf(stderr, "ckpt_openread: N * SIZE must be >= %d, SIZE <= %d\n",
			2 * PIECE, PIECE);
		return 2;
	}
	buf = malloc((n + READS) * size + PIECE);
	if (!buf)
		return 1;
	ret = ckpt_connect(argv[1], &c);
	if (ret == 0)
		ret = ckpt_begin(c, argv[2], argv[3], &v);
	if (ret < 0)
		fprintf(stderr, "ckpt_openread: %s\n", ckpt_strerror(ret));
	else
		ret = run(c, v, argv[2], argv[3], n, size, buf);
	if (v)
		ckpt_abort(v);
	ckpt_version_free(v);
	ckpt_disconnect(c);
	free(buf);
	return ret < 0;
}
