/*
 * ckpt_mmap.c - mappings of ckptfs files, in an open version and in a
 * committed one.
 *
 *   ckpt_mmap write DIR REF   in DIR (a version being written through the
 *                             mount): shared and private read mappings see
 *                             what write() wrote and what a write-only
 *                             handle wrote since; a private mapping's
 *                             changes stay private; a shared writable
 *                             mapping (grown with ftruncate, msync'd, and
 *                             one written after its fd was closed) reaches
 *                             the file.  The bytes each file should hold are
 *                             written to REF/<name> on a local disk.
 *   ckpt_mmap check DIR REF   in DIR (committed): every file of REF mapped
 *                             shared and private holds REF's bytes; a
 *                             writable shared mapping is refused.
 *
 * Exit 0 when every check holds, 1 with a message otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + (i >> 11) + seed);
}

static char *join(const char *dir, const char *name)
{
	static char buf[2][4096];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static int put_ref(const char *ref, const char *name, const void *p, size_t n)
{
	FILE *f = fopen(join(ref, name), "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "ckpt_mmap: cannot write %s\n", join(ref, name));
		return -1;
	}
	return 0;
}

/* a.bin: write(), then shared and private read mappings; pwrite through
 * the same fd and through a write-only (direct) handle show in them. */
static int t_read_maps(const char *dir, const char *ref)
{
	size_t n = 3 * 4096 + 100;
	uint8_t *want = malloc(n), *sh, *pr;
	int fd, wfd;

	fill(want, n, 1);
	fd = open(join(dir, "a.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0, "open a.bin: %s", strerror(errno));
	if (fd < 0)
		return -1;
	CHECK(write(fd, want, n) == (ssize_t)n, "write a.bin: %s", strerror(errno));
	sh = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
	pr = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(sh != MAP_FAILED, "shared read mapping: %s", strerror(errno));
	CHECK(pr != MAP_FAILED, "private mapping: %s", strerror(errno));
	if (sh == MAP_FAILED || pr == MAP_FAILED)
		return -1;
	CHECK(!memcmp(sh, want, n), "shared mapping differs from what was written");
	CHECK(!memcmp(pr, want, n), "private mapping differs from what was written");
	/* write() through the same fd shows in the shared mapping. */
	memset(want + 5000, 0xab, 3000);
	CHECK(pwrite(fd, want + 5000, 3000, 5000) == 3000, "pwrite: %s",
	      strerror(errno));
	CHECK(!memcmp(sh, want, n), "shared mapping misses a pwrite");
	/* A private mapping's change is its own. */
	pr[10] ^= 0xff;
	uint8_t b;
	CHECK(pread(fd, &b, 1, 10) == 1 && b == want[10],
	      "a private mapping's change reached the file");
	/* A write-only handle (the direct path) writes; the mapping sees it. */
	wfd = open(join(dir, "a.bin"), O_WRONLY);
	CHECK(wfd >= 0, "open a.bin write-only: %s", strerror(errno));
	memset(want + 100, 0x5c, 4096);
	CHECK(pwrite(wfd, want + 100, 4096, 100) == 4096, "pwrite (direct): %s",
	      strerror(errno));
	close(wfd);
	CHECK(!memcmp(sh, want, n), "shared mapping misses a write-only handle's write");
	munmap(sh, n);
	munmap(pr, n);
	close(fd);
	fd = put_ref(ref, "a.bin", want, n);
	free(want);
	return fd;
}

/* b.bin: grown by ftruncate, filled through a shared writable mapping,
 * msync'd; read back with read() on a new fd. */
static int t_write_map(const char *dir, const char *ref)
{
	size_t n = (1u << 20) + 123;
	uint8_t *want = malloc(n), *got = malloc(n), *m;
	int fd;

	fill(want, n, 7);
	fd = open(join(dir, "b.bin"), O_RDWR | O_CREAT, 0644);
	CHECK(fd >= 0 && ftruncate(fd, n) == 0, "b.bin: %s", strerror(errno));
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "shared writable mapping: %s", strerror(errno));
	if (m == MAP_FAILED)
		return -1;
	memcpy(m, want, n);
	CHECK(msync(m, n, MS_SYNC) == 0, "msync: %s", strerror(errno));
	CHECK(pread(fd, got, n, 0) == (ssize_t)n && !memcmp(got, want, n),
	      "read on the mapping's fd differs after msync");
	munmap(m, n);
	close(fd);
	fd = open(join(dir, "b.bin"), O_RDONLY);
	memset(got, 0, n);
	CHECK(fd >= 0 && read(fd, got, n) == (ssize_t)n && !memcmp(got, want, n),
	      "b.bin read on a new fd differs from what the mapping wrote");
	close(fd);
	fd = put_ref(ref, "b.bin", want, n);
	free(want);
	free(got);
	return fd;
}

/* c.bin: a mapping outlives its fd; what it writes reaches the file. */
static int t_map_after_close(const char *dir, const char *ref)
{
	size_t n = 8192;
	uint8_t want[8192], got[8192], *m;
	int fd;

	fill(want, n, 9);
	fd = open(join(dir, "c.bin"), O_RDWR | O_CREAT, 0644);
	CHECK(fd >= 0 && ftruncate(fd, n) == 0, "c.bin: %s", strerror(errno));
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "c.bin mapping: %s", strerror(errno));
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	memcpy(m, want, n);
	munmap(m, n);
	fd = open(join(dir, "c.bin"), O_RDONLY);
	CHECK(fd >= 0 && pread(fd, got, n, 0) == (ssize_t)n && !memcmp(got, want, n),
	      "c.bin: a mapping's writes after close are lost");
	close(fd);
	return put_ref(ref, "c.bin", want, n);
}

static void check_one(const char *dir, const char *ref, const char *name)
{
	struct stat st;
	uint8_t *sh, *pr, *want;
	FILE *f;
	int fd;

	f = fopen(join(ref, name), "rb");
	CHECK(f && stat(join(ref, name), &st) == 0, "ref %s", name);
	if (!f)
		return;
	want = malloc(st.st_size);
	CHECK(fread(want, 1, st.st_size, f) == (size_t)st.st_size, "ref read");
	fclose(f);
	fd = open(join(dir, name), O_RDONLY);
	CHECK(fd >= 0, "open committed %s: %s", name, strerror(errno));
	sh = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	pr = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(sh != MAP_FAILED && pr != MAP_FAILED, "mapping committed %s: %s",
	      name, strerror(errno));
	if (sh != MAP_FAILED && pr != MAP_FAILED) {
		CHECK(!memcmp(sh, want, st.st_size), "committed %s (shared) differs", name);
		CHECK(!memcmp(pr, want, st.st_size), "committed %s (private) differs", name);
		pr[0] ^= 1;             /* private: allowed, and not stored */
		CHECK(sh[0] == want[0], "a private change reached a committed file");
	}
	CHECK(mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
	      MAP_FAILED, "a writable shared mapping of a read-only fd was made");
	close(fd);
	free(want);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ckpt_mmap write|check DIR REF\n");
		return 2;
	}
	if (!strcmp(argv[1], "write")) {
		t_read_maps(argv[2], argv[3]);
		t_write_map(argv[2], argv[3]);
		t_map_after_close(argv[2], argv[3]);
	} else {
		check_one(argv[2], argv[3], "a.bin");
		check_one(argv[2], argv[3], "b.bin");
		check_one(argv[2], argv[3], "c.bin");
	}
	return failed;
}
