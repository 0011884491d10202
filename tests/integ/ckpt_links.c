/*
 * ckpt_links.c - hard links through the C API (ckpt_link), checked as the
 * version is built and again once committed.
 *
 *   ckpt_links SOCKET write JOB VERSION   build the version (below), check
 *                                         as it goes, commit, wait LOCAL,
 *                                         check the committed version
 *   ckpt_links SOCKET check JOB VERSION   check a committed version (after
 *                                         a restart, an eviction, ...)
 *
 * The version: "a" is written, linked as "b", "b" linked as "c" (a link of
 * a link is one more name of the same file); a write through "b", a
 * truncate through "c", a chmod through "b" and an xattr set through "c"
 * all show through every name; "a" (the first name, which holds the file
 * in ckptd) is unlinked and "b", "c" keep it; "b" is renamed to "d/e"; a
 * second file "x" is linked as "y" and "y" is renamed onto "c" (c now
 * names x's file, and the first file keeps one name, "d/e"); "z" is linked
 * as "w" and "w" renamed onto "z" (two names of one file: nothing
 * happens).  Errors: EEXIST, ENOENT, ESEALED after the commit.
 *
 * Committed, the version must list exactly: d/e (nlink 1), c and x (one
 * ino, nlink 2), z and w (one ino, nlink 2), with their bytes.
 *
 * Exit 0 when every check holds, 1 with a message otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ckpt.h"

#define A_LEN 20000
#define A_CUT 12000

static uint8_t pat(uint64_t i)
{
	return (uint8_t)(i * 37 + (i >> 7) + 3);
}

/* The first file's bytes once written through b and cut through c. */
static void expect_a(uint8_t *buf)
{
	uint64_t i;

	for (i = 0; i < A_CUT; i++)
		buf[i] = pat(i);
	memcpy(buf + 100, "through-b", 9);
}

/* path must hold want (len bytes) exactly. */
static void check_bytes(struct ckpt_client *c, const char *job,
			const char *ver, const char *path, const void *want,
			size_t len)
{
	static uint8_t got[A_LEN + 4096];
	size_t n = 0;
	int ret;

	ret = ckpt_read(c, job, ver, path, got, sizeof(got), 0, &n);
	CHECK(ret == 0, "read %s: %s", path, ckpt_strerror(ret));
	CHECK(n == len, "read %s: %zu bytes, want %zu", path, n, len);
	CHECK(n != len || !memcmp(got, want, len), "%s: content differs", path);
}

/* path's listing entry: nlink and ino (returned), size. */
static uint64_t check_stat(struct ckpt_client *c, const char *job,
			   const char *ver, const char *path, uint32_t nlink,
			   uint64_t size)
{
	struct ckpt_file_info fi;
	int ret;

	memset(&fi, 0, sizeof(fi));
	ret = ckpt_stat_file2(c, job, ver, path, &fi, sizeof(fi));
	CHECK(ret >= 0, "stat %s: %s", path, ckpt_strerror(ret));
	CHECK(fi.nlink == nlink, "%s: nlink %u, want %u", path, fi.nlink, nlink);
	CHECK(fi.size == size, "%s: size %llu, want %llu", path,
	      (unsigned long long)fi.size, (unsigned long long)size);
	CHECK(fi.ino != 0, "%s: ino 0", path);
	return fi.ino;
}

/* The first file's mode (set through b) and xattr (set through c). */
static void check_meta(struct ckpt_client *c, const char *job, const char *ver,
		       const char *path)
{
	struct ckpt_file_info fi;
	char x[CKPT_XATTR_MAX];
	int ret;

	memset(&fi, 0, sizeof(fi));
	ret = ckpt_stat_file2(c, job, ver, path, &fi, sizeof(fi));
	CHECK(ret >= 0 && (fi.attr.set & CKPT_ATTR_MODE) &&
	      (fi.attr.mode & 07777) == 0640, "%s: mode %o (set %x), want 0640",
	      path, fi.attr.mode, fi.attr.set);
	ret = ckpt_getxattrs(c, job, ver, path, x, sizeof(x));
	CHECK(ret > 0 && memmem(x, (size_t)ret, "user.k", 6) &&
	      memmem(x, (size_t)ret, "via-c", 5),
	      "%s: xattr user.k=via-c missing (%d)", path, ret);
}

/* The committed version: exactly the names above, grouped by ino. */
static void check_version(struct ckpt_client *c, const char *job,
			  const char *ver)
{
	static uint8_t want[A_LEN];
	struct ckpt_file_info *f = NULL;
	uint64_t ie, ic, ix, iz, iw;
	int n;

	expect_a(want);
	n = ckpt_list_files2(c, job, ver, &f, sizeof(*f));
	CHECK(n == 5, "list: %d names, want 5 (d/e, c, x, z, w)", n);
	free(f);
	ie = check_stat(c, job, ver, "d/e", 1, A_CUT);
	ic = check_stat(c, job, ver, "c", 2, 6);
	ix = check_stat(c, job, ver, "x", 2, 6);
	iz = check_stat(c, job, ver, "z", 2, 4);
	iw = check_stat(c, job, ver, "w", 2, 4);
	CHECK(ic == ix && iz == iw, "links do not share an ino");
	CHECK(ie != ic && ie != iz && ic != iz, "files share an ino");
	check_bytes(c, job, ver, "d/e", want, A_CUT);
	check_meta(c, job, ver, "d/e");
	check_bytes(c, job, ver, "c", "x-file", 6);
	check_bytes(c, job, ver, "x", "x-file", 6);
	check_bytes(c, job, ver, "z", "zzzz", 4);
	check_bytes(c, job, ver, "w", "zzzz", 4);
	CHECK(ckpt_stat_file2(c, job, ver, "a", &(struct ckpt_file_info){ 0 },
			      sizeof(struct ckpt_file_info)) == -ENOENT,
	      "a still listed");
}

static int do_write(struct ckpt_client *c, const char *job, const char *ver)
{
	static uint8_t buf[A_LEN];
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE, .mode = 0640 };
	struct ckpt_version *v;
	uint64_t i, ia, ib, icc;
	int ret;

	for (i = 0; i < A_LEN; i++)
		buf[i] = pat(i);
	ret = ckpt_begin(c, job, ver, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_links: begin: %s\n", ckpt_strerror(ret));
		return 1;
	}
	CHECK(ckpt_write(v, "a", buf, A_LEN, 0) == 0, "write a");
	CHECK(ckpt_link(v, "a", "b") == 0, "link a b");
	CHECK(ckpt_link(v, "b", "c") == 0, "link b c");
	CHECK(ckpt_link(v, "a", "c") == -EEXIST, "link onto c: want EEXIST");
	CHECK(ckpt_link(v, "nope", "q") == -ENOENT, "link of nothing: want ENOENT");
	CHECK(ckpt_write(v, "b", "through-b", 9, 100) == 0, "write b");
	CHECK(ckpt_truncate(v, "c", A_CUT) == 0, "truncate c");
	CHECK(ckpt_setattr(v, "b", &a) == 0, "chmod b");
	CHECK(ckpt_setxattr(v, "c", "user.k", "via-c", 5) == 0, "setxattr c");
	CHECK(ckpt_sync(v) == 0, "sync");
	ia = check_stat(c, job, ver, "a", 3, A_CUT);
	ib = check_stat(c, job, ver, "b", 3, A_CUT);
	icc = check_stat(c, job, ver, "c", 3, A_CUT);
	CHECK(ia == ib && ib == icc, "a, b, c: not one ino");
	expect_a(buf);
	check_bytes(c, job, ver, "a", buf, A_CUT);
	check_bytes(c, job, ver, "c", buf, A_CUT);
	check_meta(c, job, ver, "a");

	CHECK(ckpt_unlink(v, "a") == 0, "unlink a");
	check_stat(c, job, ver, "b", 2, A_CUT);
	check_bytes(c, job, ver, "b", buf, A_CUT);
	CHECK(ckpt_rename(v, "b", "d/e") == 0, "rename b d/e");
	CHECK(ckpt_write(v, "x", "x-file", 6, 0) == 0, "write x");
	CHECK(ckpt_link(v, "x", "y") == 0, "link x y");
	CHECK(ckpt_rename(v, "y", "c") == 0, "rename y over c");
	CHECK(ckpt_write(v, "z", "zzzz", 4, 0) == 0, "write z");
	CHECK(ckpt_link(v, "z", "w") == 0, "link z w");
	CHECK(ckpt_rename(v, "w", "z") == 0, "rename w onto z (one file)");
	CHECK(ckpt_sync(v) == 0, "sync");
	check_version(c, job, ver);

	ret = ckpt_commit(v);
	CHECK(ret == 0, "commit: %s", ckpt_strerror(ret));
	ret = ckpt_wait(v, CKPT_LOCAL, 60000);
	CHECK(ret == 0, "wait local: %s", ckpt_strerror(ret));
	check_version(c, job, ver);
	return failed;
}

int main(int argc, char **argv)
{
	struct ckpt_client *c;
	int ret;

	if (argc != 5)
		return 2;
	ret = ckpt_connect(argv[1], &c);
	if (ret < 0) {
		fprintf(stderr, "ckpt_links: connect: %s\n", ckpt_strerror(ret));
		return 1;
	}
	if (!strcmp(argv[2], "write")) {
		ret = do_write(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "check")) {
		check_version(c, argv[3], argv[4]);
		ret = failed;
	} else {
		ret = 2;
	}
	ckpt_disconnect(c);
	return ret;
}
