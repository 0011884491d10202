/*
 * ckpt_tw.c - test writer and verifier for the integration tests.
 *
 * Writes a deterministic checkpoint through the public API, and verifies one
 * byte for byte.  The content of byte i of file f of rank r under seed s is a
 * pure function of (s, r, f, i), so a verifier needs only the same arguments.
 *
 *   ckpt_tw write  JOB VERSION [options]   write (and commit, and wait)
 *   ckpt_tw verify JOB VERSION [options]   read back and compare
 *
 * Options: -s SOCKET, -r RANK (0), -n FILES (2), -z BYTES per file (4M),
 * -S SEED (1), -R (random order, odd sizes, overlapping overwrites),
 * -C (do not commit), -w LEVEL (wait for it after commit: staged|local),
 * -x MODE (write via: copy (default), async, zerocopy), -p (pause before
 * commit until stdin closes: lets a test kill the daemon mid-version).
 *
 * Exit status: 0 ok, 1 a check failed (message on stderr), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"

struct args {
	const char *sock, *job, *version, *mode;
	int rank, files, random, commit, pause;
	uint64_t size, seed;
	enum ckpt_level wait;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Fill buf with the content of [off, off+len) of file f. */
static void pattern(const struct args *a, int f, uint64_t off, uint8_t *buf,
		    size_t len)
{
	uint64_t key = a->seed * 0x9e3779b97f4a7c15ull ^
		       (uint64_t)a->rank << 40 ^ (uint64_t)f << 32;
	size_t i = 0;

	while (i < len) {
		uint64_t w = mix(key ^ ((off + i) >> 3));
		size_t k = (off + i) & 7;

		for (; k < 8 && i < len; k++, i++)
			buf[i] = w >> (8 * k);
	}
}

static void file_name(const struct args *a, int f, char *buf, size_t cap)
{
	snprintf(buf, cap, "rank%03d/part-%d.bin", a->rank, f);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ckpt_tw: %s: %s\n", what, ckpt_strerror(err));
	return 1;
}

/* The zero-copy path: fill staging buffers directly. */
static int put_zc(struct ckpt_client *c, struct ckpt_version *v,
		  const char *path, const uint8_t *buf, size_t len,
		  uint64_t off)
{
	size_t max = ckpt_buf_max(c), n;
	void *zb;
	int ret;

	while (len) {
		n = len < max ? len : max;
		ret = ckpt_buf_get(v, n, &zb);
		if (ret < 0)
			return ret;
		memcpy(zb, buf, n);
		ret = ckpt_buf_submit(v, path, zb, n, off);
		if (ret < 0)
			return ret;
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int put(const struct args *a, struct ckpt_client *c,
	       struct ckpt_version *v, const char *path, const uint8_t *buf,
	       size_t len, uint64_t off)
{
	int ret;

	if (!strcmp(a->mode, "zerocopy"))
		return put_zc(c, v, path, buf, len, off);
	if (!strcmp(a->mode, "async")) {
		ret = ckpt_write_async(v, path, buf, len, off, NULL, NULL);
		return ret ? ret : ckpt_flush(v);
	}
	return ckpt_write(v, path, buf, len, off);
}

static int write_file(const struct args *a, struct ckpt_client *c,
		      struct ckpt_version *v, int f, uint8_t *buf)
{
	char path[128];
	uint64_t off, n;
	int ret;

	file_name(a, f, path, sizeof(path));
	pattern(a, f, 0, buf, a->size);
	if (!a->random)
		return put(a, c, v, path, buf, a->size, 0);
	/* Garbage over random ranges first, then the real bytes in a
	 * scrambled order of odd-sized pieces: the last write must win. */
	srand(a->seed + f + 1000 * a->rank);
	for (int i = 0; i < 4 && a->size > 1; i++) {
		static uint8_t junk[70000];

		off = rand() % a->size;
		n = 1 + rand() % sizeof(junk);
		if (n > a->size - off)
			n = a->size - off;
		memset(junk, 0xA5, n);
		ret = put(a, c, v, path, junk, n, off);
		if (ret < 0)
			return ret;
	}
	for (uint64_t start = 0; start < a->size;) {
		/* odd sizes, written back to front within each 1 MiB span */
		uint64_t span = a->size - start < (1 << 20) ? a->size - start
							    : (1 << 20);
		uint64_t cut = 1 + rand() % span;

		ret = put(a, c, v, path, buf + start + cut, span - cut,
			  start + cut);
		if (ret == 0)
			ret = put(a, c, v, path, buf + start, cut, start);
		if (ret < 0)
			return ret;
		start += span;
	}
	return 0;
}

static int do_write(const struct args *a, struct ckpt_client *c)
{
	struct ckpt_version *v;
	uint8_t *buf;
	int f, ret;
	char what[64];

	buf = malloc(a->size ? a->size : 1);
	if (!buf)
		return fail("malloc", -ENOMEM);
	ret = ckpt_begin(c, a->job, a->version, &v);
	if (ret < 0) {
		free(buf);
		return fail("begin", ret);
	}
	for (f = 0; f < a->files; f++) {
		ret = write_file(a, c, v, f, buf);
		if (ret < 0) {
			snprintf(what, sizeof(what), "write file %d", f);
			ret = fail(what, ret);
			goto out;
		}
	}
	if (a->pause) {
		char ch;

		printf("paused\n");
		fflush(stdout);
		while (read(0, &ch, 1) > 0)
			;
	}
	if (!a->commit)
		goto out;
	ret = ckpt_commit(v);
	if (ret < 0) {
		ret = fail("commit", ret);
		goto out;
	}
	if (a->wait) {
		ret = ckpt_wait(v, a->wait, 60000);
		if (ret < 0) {
			ret = fail("wait", ret);
			goto out;
		}
	}
	ret = 0;
out:
	ckpt_version_free(v);
	free(buf);
	return ret;
}

static int do_verify(const struct args *a, struct ckpt_client *c)
{
	uint8_t *want, *got;
	char path[128], what[200];
	size_t n;
	int f, ret = 0;

	want = malloc(a->size + 1);
	got = malloc(a->size + 4096);
	if (!want || !got) {
		ret = fail("malloc", -ENOMEM);
		goto out;
	}
	for (f = 0; f < a->files; f++) {
		file_name(a, f, path, sizeof(path));
		pattern(a, f, 0, want, a->size);
		/* Ask for more than the size: the read must stop at EOF. */
		ret = ckpt_read(c, a->job, a->version, path, got, a->size + 4096,
				0, &n);
		if (ret < 0) {
			snprintf(what, sizeof(what), "read %s", path);
			ret = fail(what, ret);
			goto out;
		}
		if (n != a->size || memcmp(want, got, a->size)) {
			fprintf(stderr, "ckpt_tw: %s: content differs (read %zu of %llu bytes)\n",
				path, n, (unsigned long long)a->size);
			ret = 1;
			goto out;
		}
	}
out:
	free(want);
	free(got);
	return ret;
}

int main(int argc, char **argv)
{
	struct args a = { .files = 2, .size = 4 << 20, .seed = 1, .commit = 1,
			  .mode = "copy" };
	struct ckpt_client *c;
	int opt, ret;

	while ((opt = getopt(argc, argv, "s:r:n:z:S:RCw:x:p")) != -1) {
		switch (opt) {
		case 's': a.sock = optarg; break;
		case 'r': a.rank = atoi(optarg); break;
		case 'n': a.files = atoi(optarg); break;
		case 'z': a.size = strtoull(optarg, NULL, 0); break;
		case 'S': a.seed = strtoull(optarg, NULL, 0); break;
		case 'R': a.random = 1; break;
		case 'C': a.commit = 0; break;
		case 'x': a.mode = optarg; break;
		case 'p': a.pause = 1; break;
		case 'w':
			if (ckpt_level_parse(optarg, &a.wait) < 0)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind != 3)
		return 2;
	a.job = argv[optind + 1];
	a.version = argv[optind + 2];
	ret = ckpt_connect(a.sock, &c);
	if (ret < 0)
		return fail("connect", ret);
	if (!strcmp(argv[optind], "write"))
		ret = do_write(&a, c);
	else if (!strcmp(argv[optind], "verify"))
		ret = do_verify(&a, c);
	else
		ret = 2;
	ckpt_disconnect(c);
	return ret;
}
