/*
 * ckpt_longpath.c - paths up to CKPT_PATH_MAX2 (PATH_MAX less its NUL)
 * through the C API, and the refusals past it.
 *
 *   ckpt_longpath SOCKET write JOB VERSION  write A (4095 bytes: a few short
 *                                         components, then components of
 *                                         255), B (4095, by a rename of a
 *                                         short name), L (4000, a hard link
 *                                         of A) with an xattr on A; check
 *                                         every refusal; commit, wait LOCAL
 *   ckpt_longpath SOCKET check JOB VERSION  every byte, the listings (whole
 *                                         paths in name, "" in path[], the
 *                                         first release's calls refused),
 *                                         stat, xattrs and the plan
 *   ckpt_longpath path N C                print the path of N bytes built
 *                                         from C (for the shell side)
 *
 * Exit 0 when every check holds, 1 with a message otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"

#define A_LEN (300u * 1024 + 17)
#define B_LEN (70u * 1024 + 3)

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "ckpt_longpath: %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failed = 1; \
	} \
} while (0)

/* A path of exactly total bytes: "short/<c>/" then components of 255 bytes
 * of c (the last shorter), never ending in '/'. */
static void mkpath(char *buf, size_t total, char c)
{
	size_t n, k;

	n = (size_t)sprintf(buf, "short/%c/", c);
	while (n < total) {
		k = total - n > 255 ? 255 : total - n;
		if (total - n - k == 1)
			k--;
		memset(buf + n, c, k);
		n += k;
		if (n < total)
			buf[n++] = '/';
	}
	buf[n] = '\0';
}

static uint8_t pat(uint64_t i, unsigned seed)
{
	return (uint8_t)(i * 131 + (i >> 9) + seed * 29 + 7);
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(i, seed);
}

static char A[CKPT_PATH_MAX2 + 1], B[CKPT_PATH_MAX2 + 1], L[CKPT_PATH_MAX2 + 1];
static char TOO[CKPT_PATH_MAX2 + 2], COMP[CKPT_PATH_MAX2 + 1];

static void paths(void)
{
	mkpath(A, CKPT_PATH_MAX2, 'a');
	mkpath(B, CKPT_PATH_MAX2, 'b');
	mkpath(L, 4000, 'l');
	mkpath(TOO, CKPT_PATH_MAX2 + 1, 't');
	/* A 256-byte component in a path that is short enough. */
	memset(COMP, 'c', 256);
	strcpy(COMP + 256, "/x");
}

static void refusals(struct ckpt_version *v)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE, .mode = 0600 };
	const char *bad[] = { TOO, COMP };
	uint8_t byte = 1;
	int i, ret;

	for (i = 0; i < 2; i++) {
		ret = ckpt_write(v, bad[i], &byte, 1, 0);
		CHECK(ret == -ENAMETOOLONG, "write %d: %s", i, ckpt_strerror(ret));
		ret = ckpt_truncate(v, bad[i], 1);
		CHECK(ret == -ENAMETOOLONG, "truncate %d: %s", i,
		      ckpt_strerror(ret));
		ret = ckpt_unlink(v, bad[i]);
		CHECK(ret == -ENAMETOOLONG, "unlink %d: %s", i,
		      ckpt_strerror(ret));
		ret = ckpt_rename(v, A, bad[i]);
		CHECK(ret == -ENAMETOOLONG, "rename %d: %s", i,
		      ckpt_strerror(ret));
		ret = ckpt_link(v, A, bad[i]);
		CHECK(ret == -ENAMETOOLONG, "link %d: %s", i, ckpt_strerror(ret));
		ret = ckpt_setattr(v, bad[i], &a);
		CHECK(ret == -ENAMETOOLONG, "setattr %d: %s", i,
		      ckpt_strerror(ret));
		ret = ckpt_setxattr(v, bad[i], "user.k", "v", 1);
		CHECK(ret == -ENAMETOOLONG, "setxattr %d: %s", i,
		      ckpt_strerror(ret));
	}
	/* "." and ".." stay refused at any length. */
	ret = ckpt_write(v, "a/../b", &byte, 1, 0);
	CHECK(ret == -CKPT_EBADNAME, "write a/../b: %s", ckpt_strerror(ret));
}

static int do_write(struct ckpt_client *c, const char *job, const char *ver)
{
	struct ckpt_version *v;
	uint8_t *buf = malloc(A_LEN);
	int ret;

	if (!buf)
		return 1;
	ret = ckpt_begin(c, job, ver, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_longpath: begin: %s\n", ckpt_strerror(ret));
		free(buf);
		return 1;
	}
	fill(buf, A_LEN, 1);
	/* Two pieces, so that A has more than one record. */
	ret = ckpt_write(v, A, buf, A_LEN / 2, 0);
	CHECK(ret == 0, "write A: %s", ckpt_strerror(ret));
	ret = ckpt_write(v, A, buf + A_LEN / 2, A_LEN - A_LEN / 2, A_LEN / 2);
	CHECK(ret == 0, "write A (2): %s", ckpt_strerror(ret));
	fill(buf, B_LEN + 100, 2);
	ret = ckpt_write(v, "b.tmp", buf, B_LEN + 100, 0);
	CHECK(ret == 0, "write b.tmp: %s", ckpt_strerror(ret));
	ret = ckpt_truncate(v, "b.tmp", B_LEN);
	CHECK(ret == 0, "truncate b.tmp: %s", ckpt_strerror(ret));
	ret = ckpt_rename(v, "b.tmp", B);
	CHECK(ret == 0, "rename to B: %s", ckpt_strerror(ret));
	ret = ckpt_link(v, A, L);
	CHECK(ret == 0, "link A L: %s", ckpt_strerror(ret));
	ret = ckpt_setxattr(v, A, "user.deep", "yes", 3);
	CHECK(ret == 0, "setxattr A: %s", ckpt_strerror(ret));
	refusals(v);
	ret = ckpt_commit(v);
	CHECK(ret == 0, "commit: %s", ckpt_strerror(ret));
	if (ret == 0) {
		ret = ckpt_wait(v, CKPT_LOCAL, 30000);
		CHECK(ret == 0, "wait LOCAL: %s", ckpt_strerror(ret));
	}
	ckpt_version_free(v);
	free(buf);
	return failed;
}

/* Every byte of path: len bytes of seed's pattern. */
static void check_bytes(struct ckpt_client *c, const char *job,
			const char *ver, const char *path, size_t len,
			unsigned seed)
{
	uint8_t *buf = malloc(len + 10), *want = malloc(len);
	size_t got = 0;
	int ret;

	if (!buf || !want) {
		CHECK(0, "out of memory");
		goto out_free;
	}
	fill(want, len, seed);
	ret = ckpt_read(c, job, ver, path, buf, len + 10, 0, &got);
	CHECK(ret == 0 && got == len && !memcmp(buf, want, len),
	      "read %.20s...: %s, %zu of %zu bytes, %s", path,
	      ckpt_strerror(ret), got, len,
	      got == len && memcmp(buf, want, len) ? "differ" : "");
out_free:
	free(buf);
	free(want);
}

static void check_list(struct ckpt_client *c, const char *job,
		       const char *ver)
{
	struct ckpt_file_info *f = NULL;
	int n, i, seen = 0;

	n = ckpt_list_files2(c, job, ver, &f, sizeof(*f));
	CHECK(n == 3, "list_files2: %d (%s)", n, n < 0 ? ckpt_strerror(n) : "");
	for (i = 0; i < n; i++) {
		CHECK(f[i].name != NULL, "entry %d has no name", i);
		if (!f[i].name)
			continue;
		CHECK(f[i].path[0] == '\0', "entry %d: path[] not empty", i);
		if (!strcmp(f[i].name, A)) {
			seen |= 1;
			CHECK(f[i].size == A_LEN && f[i].nlink == 2,
			      "A: size %llu nlink %u",
			      (unsigned long long)f[i].size, f[i].nlink);
		} else if (!strcmp(f[i].name, B)) {
			seen |= 2;
			CHECK(f[i].size == B_LEN, "B: size %llu",
			      (unsigned long long)f[i].size);
		} else if (!strcmp(f[i].name, L)) {
			seen |= 4;
		}
	}
	CHECK(seen == 7, "names seen: %d of 7", seen);
	CHECK(n < 0 || f[n].name == NULL, "the closing entry has a name");
	free(f);
	f = NULL;
	/* The first release's calls: no truncated path, an error. */
	n = ckpt_list_files(c, job, ver, &f);
	CHECK(n == -ENAMETOOLONG, "list_files: %d (%s)", n,
	      n < 0 ? ckpt_strerror(n) : "");
	if (n >= 0)
		free(f);
	n = ckpt_list_files2(c, job, ver, &f, CKPT_FILE_INFO_SIZE_VER0);
	CHECK(n == -ENAMETOOLONG, "list_files2 (VER0 size): %d", n);
	if (n >= 0)
		free(f);
}

static void check_stat(struct ckpt_client *c, const char *job,
		       const char *ver)
{
	struct ckpt_plan_entry *p = NULL;
	struct ckpt_file_info fi;
	char x[64];
	int ret, n, i, found = 0;

	ret = ckpt_stat_file2(c, job, ver, B, &fi, sizeof(fi));
	CHECK(ret > 0 && fi.size == B_LEN && !fi.path[0] && !fi.name,
	      "stat_file2 B: %s", ckpt_strerror(ret));
	ret = ckpt_stat_file(c, job, ver, B, &fi);
	CHECK(ret == -ENAMETOOLONG, "stat_file B: %s", ckpt_strerror(ret));
	ret = ckpt_stat_file2(c, job, ver, TOO, &fi, sizeof(fi));
	CHECK(ret == -ENAMETOOLONG, "stat_file2 TOO: %s", ckpt_strerror(ret));
	ret = ckpt_getxattrs(c, job, ver, A, x, sizeof(x));
	CHECK(ret > 0 && memmem(x, (size_t)ret, "user.deep", 9),
	      "getxattrs A: %d", ret);
	n = ckpt_plan(c, job, ver, &p, sizeof(*p));
	CHECK(n == 3, "plan: %d", n);
	for (i = 0; i < n; i++)
		found += p[i].name && (!strcmp(p[i].name, A) ||
				       !strcmp(p[i].name, B) ||
				       !strcmp(p[i].name, L));
	CHECK(found == 3, "plan names: %d of 3", found);
	free(p);
}

int main(int argc, char **argv)
{
	struct ckpt_client *c;
	int ret;

	paths();
	if (argc == 4 && !strcmp(argv[1], "path")) {
		static char buf[CKPT_PATH_MAX2 + 64];

		mkpath(buf, strtoul(argv[2], NULL, 10), argv[3][0]);
		puts(buf);
		return 0;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: ckpt_longpath SOCKET write|check JOB "
			"VERSION | path N C\n");
		return 2;
	}
	ret = ckpt_connect(argv[1], &c);
	if (ret < 0) {
		fprintf(stderr, "ckpt_longpath: connect: %s\n",
			ckpt_strerror(ret));
		return 1;
	}
	if (!strcmp(argv[2], "write")) {
		ret = do_write(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "check")) {
		check_bytes(c, argv[3], argv[4], A, A_LEN, 1);
		check_bytes(c, argv[3], argv[4], L, A_LEN, 1);
		check_bytes(c, argv[3], argv[4], B, B_LEN, 2);
		check_list(c, argv[3], argv[4]);
		check_stat(c, argv[3], argv[4]);
		ret = failed;
	} else {
		ret = 2;
	}
	ckpt_disconnect(c);
	return ret;
}
