/*
 * ckpt_tw.c - test writer and verifier for the integration tests.
 *
 * Writes a deterministic checkpoint through the public API, and verifies one
 * byte for byte.  The content of byte i of file f of rank r under seed s is a
 * pure function of (s, r, f, i), so a verifier needs only the same arguments.
 *
 *   ckpt_tw write  JOB VERSION [options]   write (and commit, and wait)
 *   ckpt_tw verify JOB VERSION [options]   read back and compare
 *   ckpt_tw expect JOB VERSION -o DIR [options]
 *                                          write the files verify expects
 *                                          into DIR (no daemon needed)
 *   ckpt_tw stat   JOB VERSION             print "STATE LEVEL NFILES BYTES
 *                                          STORED ERRNO" of the version
 *   ckpt_tw latest JOB [-w LEVEL]          print ckpt_latest() (level:
 *                                          staged by default)
 *   ckpt_tw rm     JOB VERSION [-p]        ckpt_remove(); with -p, stat it,
 *                                          pause as below, then
 *                                          ckpt_remove_if() of what stat saw
 *
 * Options: -s SOCKET, -r RANK (0), -n FILES (2), -z BYTES per file (4M),
 * -S SEED (1), -R (random order, odd sizes, overlapping overwrites),
 * -C (do not commit), -w LEVEL (wait for it after commit: staged|local),
 * -Z (compressible content: only the low 3 bits of each byte vary),
 * -H (holes and truncates: bytes [size/3, size/3 + 600000) of each file
 * are never written, so read as zeros; 600000 bytes of junk around
 * 2 * size/3 are written first, and the file's bytes over them; then a
 * record of 600000 bytes there carries junk in its middle, which a later
 * small record overwrites; and bytes written past the end are cut off by a
 * ckpt_truncate() to size before the commit),
 * -x MODE (write via: copy (default), async, zerocopy), -p (pause before
 * commit until stdin closes: lets a test kill the daemon mid-version),
 * -T N (write: N threads share the client and the version, thread t
 * writing the files f with f % N == t, each as -x and -R say), -o DIR
 * (expect: output directory), -P DIR (put the files under DIR/ in
 * the version: long names make long listings), -F PATH (repeatable: the
 * files are these paths instead, as many as given; -n is then ignored),
 * -D (write: right after the commit, stat the version and
 * ckpt_remove_if() it as stat saw it, retrying while busy).
 *
 * Errors are printed as "ckpt_tw: WHAT: ckpt_strerror()" so that a test can
 * match the message ("No space left on device", "Permission denied").
 *
 * Exit status: 0 ok, 1 a check failed (message on stderr), 2 usage, 3 no such
 * version (stat, latest: -CKPT_ENOVERSION).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"

struct args {
	const char *sock, *job, *version, *mode, *outdir, *prefix;
	const char *names[64];    /* -F, in order */
	int nnames;
	int rank, files, random, commit, pause, squeeze, holes, threads, rmnow;
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

#define HOLE_LEN 600000u

/* -H: the hole of a file, [*from, *to); empty otherwise. */
static void hole_of(const struct args *a, uint64_t *from, uint64_t *to)
{
	*from = *to = 0;
	if (!a->holes)
		return;
	*from = a->size / 3;
	*to = *from + HOLE_LEN < a->size ? *from + HOLE_LEN : a->size;
}

/* Zero what of [off, off+len) (in buf) is in the hole. */
static void hole_clear(const struct args *a, uint64_t off, uint8_t *buf,
		       size_t len)
{
	uint64_t from, to, x, y;

	hole_of(a, &from, &to);
	x = off > from ? off : from;
	y = off + len < to ? off + len : to;
	if (x < y)
		memset(buf + (x - off), 0, y - x);
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

		/* -Z: only the low 3 bits vary: compressible, like the
		 * exponent-heavy bytes of real weights. */
		for (; k < 8 && i < len; k++, i++)
			buf[i] = a->squeeze ? (w >> (8 * k)) & 7 : w >> (8 * k);
	}
	hole_clear(a, off, buf, len);
}

static void file_name(const struct args *a, int f, char *buf, size_t cap)
{
	if (a->nnames)
		snprintf(buf, cap, "%s", a->names[f]);
	else if (a->prefix)
		snprintf(buf, cap, "%s/rank%03d/part-%d.bin", a->prefix,
			 a->rank, f);
	else
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

/* put() what of [off, off+len) is outside the hole (-H). */
static int put_clip(const struct args *a, struct ckpt_client *c,
		    struct ckpt_version *v, const char *path,
		    const uint8_t *buf, size_t len, uint64_t off)
{
	uint64_t from, to, end = off + len;
	int ret = 0;

	hole_of(a, &from, &to);
	if (from == to || end <= from || off >= to)
		return put(a, c, v, path, buf, len, off);
	if (off < from)
		ret = put(a, c, v, path, buf, from - off, off);
	if (ret == 0 && end > to)
		ret = put(a, c, v, path, buf + (to - off), end - to, to);
	return ret;
}

/* -H: a large record of junk, to be overwritten by the file's bytes. */
static int junk_under(const struct args *a, struct ckpt_client *c,
		      struct ckpt_version *v, const char *path)
{
	static __thread uint8_t junk[600000];
	uint64_t from = 2 * a->size / 3 + 12345 - 300000;

	if (!a->holes || a->size < (2u << 20))
		return 0;
	memset(junk, 0xC3, sizeof(junk));
	return put_clip(a, c, v, path, junk, sizeof(junk), from);
}

/* -H: a large record with junk in its middle, then a small one with the
 * real bytes there (buf holds the file's). */
static int small_over_large(const struct args *a, struct ckpt_client *c,
			    struct ckpt_version *v, const char *path,
			    uint8_t *buf)
{
	uint64_t m = 2 * a->size / 3 + 12345, from = m - 300000;
	uint8_t keep[777];
	int ret;

	if (a->size < (2u << 20))
		return 0;
	memcpy(keep, buf + m, sizeof(keep));
	memset(buf + m, 0x3C, sizeof(keep));
	ret = put_clip(a, c, v, path, buf + from, 600000, from);
	memcpy(buf + m, keep, sizeof(keep));
	return ret < 0 ? ret : put_clip(a, c, v, path, buf + m, sizeof(keep), m);
}

/* -H: the above, and bytes written past the end, then cut off by a
 * truncate. */
static int past_end(const struct args *a, struct ckpt_client *c,
		    struct ckpt_version *v, const char *path, uint8_t *buf)
{
	static __thread uint8_t junk[5000];
	int ret;

	if (!a->holes)
		return 0;
	ret = small_over_large(a, c, v, path, buf);
	if (ret < 0)
		return ret;
	memset(junk, 0x5A, sizeof(junk));
	ret = ckpt_write(v, path, junk, sizeof(junk), a->size + 1000000);
	return ret < 0 ? ret : ckpt_truncate(v, path, a->size);
}

static int write_file(const struct args *a, struct ckpt_client *c,
		      struct ckpt_version *v, int f, uint8_t *buf)
{
	char path[CKPT_PATH_MAX + 1];
	unsigned seed = a->seed + f + 1000 * a->rank;
	uint64_t off, n;
	int ret;

	file_name(a, f, path, sizeof(path));
	pattern(a, f, 0, buf, a->size);
	ret = junk_under(a, c, v, path);
	if (ret < 0)
		return ret;
	if (a->size == 0)       /* -z 0: an empty file (a write of 0 makes none) */
		return ckpt_truncate(v, path, 0);
	if (!a->random) {
		ret = put_clip(a, c, v, path, buf, a->size, 0);
		return ret < 0 ? ret : past_end(a, c, v, path, buf);
	}
	/* Garbage over random ranges first, then the real bytes in a
	 * scrambled order of odd-sized pieces: the last write must win. */
	for (int i = 0; i < 4 && a->size > 1; i++) {
		static __thread uint8_t junk[70000];

		off = rand_r(&seed) % a->size;
		n = 1 + rand_r(&seed) % sizeof(junk);
		if (n > a->size - off)
			n = a->size - off;
		memset(junk, 0xA5, n);
		ret = put_clip(a, c, v, path, junk, n, off);
		if (ret < 0)
			return ret;
	}
	for (uint64_t start = 0; start < a->size;) {
		/* odd sizes, written back to front within each 1 MiB span */
		uint64_t span = a->size - start < (1 << 20) ? a->size - start
							    : (1 << 20);
		uint64_t cut = 1 + rand_r(&seed) % span;

		ret = put_clip(a, c, v, path, buf + start + cut, span - cut,
			       start + cut);
		if (ret == 0)
			ret = put_clip(a, c, v, path, buf + start, cut, start);
		if (ret < 0)
			return ret;
		start += span;
	}
	return past_end(a, c, v, path, buf);
}

/* One writer: the files f with f % a->threads == t (every file when t is
 * 0 of 1).  0, or 1 with the failure printed. */
struct writer {
	const struct args *a;
	struct ckpt_client *c;
	struct ckpt_version *v;
	int t, ret;
	pthread_t thr;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	const struct args *a = w->a;
	uint8_t *buf = malloc(a->size ? a->size : 1);
	char what[64];
	int f, ret;

	if (!buf) {
		w->ret = fail("malloc", -ENOMEM);
		return NULL;
	}
	for (f = w->t; f < a->files; f += a->threads) {
		ret = write_file(a, w->c, w->v, f, buf);
		if (ret < 0) {
			snprintf(what, sizeof(what), "write file %d", f);
			w->ret = fail(what, ret);
			break;
		}
	}
	free(buf);
	return NULL;
}

/* -T: the writers on their threads (the first on this one). */
static int run_writers(const struct args *a, struct ckpt_client *c,
		       struct ckpt_version *v)
{
	struct writer w[64];
	int t, n = 0, ret = 0;

	for (t = 0; t < a->threads; t++) {
		w[t] = (struct writer){ .a = a, .c = c, .v = v, .t = t };
		if (t && pthread_create(&w[t].thr, NULL, writer_main, &w[t])) {
			ret = fail("pthread_create", -EAGAIN);
			break;
		}
		n++;
	}
	writer_main(&w[0]);
	for (t = 1; t < n; t++)
		pthread_join(w[t].thr, NULL);
	for (t = 0; t < n; t++)
		ret = ret ? ret : w[t].ret;
	return ret;
}

/* Block until stdin closes (-p): the test does something meanwhile. */
static void pause_here(void)
{
	char ch;

	printf("paused\n");
	fflush(stdout);
	while (read(0, &ch, 1) > 0)
		;
}

/* -D: stat the version just committed (being sealed, most likely) and
 * ckpt_remove_if() what stat saw, again while -EBUSY for up to 30 s, as
 * ckptctl rm does.  Prints "rm saw STATE sealed_ns 0|set". */
static int rm_now(const struct args *a, struct ckpt_client *c)
{
	const struct timespec pause = { 0, 10000000 };
	struct ckpt_version_info vi;
	int ret, tries = 0;

	ret = ckpt_stat_version(c, a->job, a->version, &vi);
	if (ret < 0)
		return fail("stat", ret);
	printf("rm saw %s sealed_ns %s\n", ckpt_state_name(vi.state),
	       vi.sealed_ns ? "set" : "0");
	fflush(stdout);
	while ((ret = ckpt_remove_if(c, &vi)) == -EBUSY && tries++ < 3000)
		nanosleep(&pause, NULL);
	return ret < 0 ? fail("rm", ret) : 0;
}

static int do_write(const struct args *a, struct ckpt_client *c)
{
	struct ckpt_version *v;
	int ret;

	ret = ckpt_begin(c, a->job, a->version, &v);
	if (ret < 0)
		return fail("begin", ret);
	ret = run_writers(a, c, v);
	if (ret)
		goto out;
	if (a->pause)
		pause_here();
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
	ret = a->rmnow ? rm_now(a, c) : 0;
out:
	ckpt_version_free(v);
	return ret;
}

static int do_verify(const struct args *a, struct ckpt_client *c)
{
	uint8_t *want, *got;
	char path[CKPT_PATH_MAX + 1], what[CKPT_PATH_MAX + 64];
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

/* Create the parent directories of path (which lies under an existing dir). */
static int mkparents(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

/* Write the files a verify of the same arguments expects into a->outdir. */
static int do_expect(const struct args *a)
{
	char name[CKPT_PATH_MAX + 1], path[4096 + CKPT_PATH_MAX];
	uint8_t *buf;
	size_t done;
	ssize_t n;
	int f, fd, ret = 0;

	if (!a->outdir) {
		fprintf(stderr, "ckpt_tw: expect needs -o DIR\n");
		return 2;
	}
	buf = malloc(a->size ? a->size : 1);
	if (!buf)
		return fail("malloc", -ENOMEM);
	for (f = 0; f < a->files && !ret; f++) {
		file_name(a, f, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", a->outdir, name);
		pattern(a, f, 0, buf, a->size);
		if (mkparents(path) < 0 ||
		    (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
			ret = fail(path, -errno);
			break;
		}
		for (done = 0; done < a->size; done += n) {
			n = write(fd, buf + done, a->size - done);
			if (n <= 0) {
				ret = fail(path, n < 0 ? -errno : -EIO);
				break;
			}
		}
		if (close(fd) < 0 && !ret)
			ret = fail(path, -errno);
	}
	free(buf);
	return ret;
}

static int do_stat(const struct args *a, struct ckpt_client *c)
{
	struct ckpt_version_info vi;
	int ret;

	ret = ckpt_stat_version(c, a->job, a->version, &vi);
	if (ret == -CKPT_ENOVERSION || ret == -CKPT_ENOJOB)
		return 3;
	if (ret < 0)
		return fail("stat", ret);
	printf("%s %s %u %llu %llu %d\n",
	       ckpt_state_name(vi.state), ckpt_level_name(vi.level), vi.nfiles,
	       (unsigned long long)vi.bytes, (unsigned long long)vi.stored,
	       vi.error < 0 ? -vi.error : vi.error);
	return 0;
}

static int do_latest(const struct args *a, struct ckpt_client *c)
{
	char name[CKPT_VERSION_MAX + 1];
	int ret;

	ret = ckpt_latest(c, a->job, a->wait ? a->wait : CKPT_STAGED, name,
			  sizeof(name));
	if (ret == -CKPT_ENOVERSION || ret == -CKPT_ENOJOB)
		return 3;
	if (ret < 0)
		return fail("latest", ret);
	printf("%s\n", name);
	return 0;
}

/* ckpt_remove(); with -p, ckpt_remove_if() of the version as stat found it
 * before the pause. */
static int do_rm(const struct args *a, struct ckpt_client *c)
{
	struct ckpt_version_info vi;
	int ret;

	if (!a->pause) {
		ret = ckpt_remove(c, a->job, a->version);
		return ret < 0 ? fail("rm", ret) : 0;
	}
	ret = ckpt_stat_version(c, a->job, a->version, &vi);
	if (ret < 0)
		return fail("stat", ret);
	pause_here();
	ret = ckpt_remove_if(c, &vi);
	return ret < 0 ? fail("rm", ret) : 0;
}

int main(int argc, char **argv)
{
	struct args a = { .files = 2, .size = 4 << 20, .seed = 1, .commit = 1,
			  .mode = "copy", .threads = 1 };
	struct ckpt_client *c;
	const char *cmd;
	int opt, ret;

	while ((opt = getopt(argc, argv, "s:r:n:z:S:RCw:x:po:P:ZHF:T:D")) != -1) {
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
		case 'D': a.rmnow = 1; break;
		case 'Z': a.squeeze = 1; break;
		case 'H': a.holes = 1; break;
		case 'o': a.outdir = optarg; break;
		case 'P': a.prefix = optarg; break;
		case 'T':
			a.threads = atoi(optarg);
			if (a.threads < 1 || a.threads > 64)
				return 2;
			break;
		case 'F':
			if (a.nnames == (int)(sizeof(a.names) / sizeof(a.names[0])))
				return 2;
			a.names[a.nnames++] = optarg;
			break;
		case 'w':
			if (ckpt_level_parse(optarg, &a.wait) < 0)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (argc - optind < 2)
		return 2;
	if (a.nnames)
		a.files = a.nnames;
	cmd = argv[optind];
	a.job = argv[optind + 1];
	if (!strcmp(cmd, "latest")) {
		if (argc - optind != 2)
			return 2;
	} else if (argc - optind != 3) {
		return 2;
	} else {
		a.version = argv[optind + 2];
	}
	if (!strcmp(cmd, "expect"))
		return do_expect(&a);
	ret = ckpt_connect(a.sock, &c);
	if (ret < 0)
		return fail("connect", ret);
	if (!strcmp(cmd, "write"))
		ret = do_write(&a, c);
	else if (!strcmp(cmd, "verify"))
		ret = do_verify(&a, c);
	else if (!strcmp(cmd, "stat"))
		ret = do_stat(&a, c);
	else if (!strcmp(cmd, "latest"))
		ret = do_latest(&a, c);
	else if (!strcmp(cmd, "rm"))
		ret = do_rm(&a, c);
	else
		ret = 2;
	ckpt_disconnect(c);
	return ret;
}
