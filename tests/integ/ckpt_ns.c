/*
 * ckpt_ns.c - checks of the namespace calls a POSIX-style writer (ckptfs)
 * uses inside an open version: truncate, unlink, rename (file and
 * directory), sync, reading back an open version, stat of one file, and
 * begin on behalf of another uid.
 *
 *   ckpt_ns SOCKET write JOB VERSION   build the version, check as it goes,
 *                                      commit, wait LOCAL, check again
 *   ckpt_ns SOCKET check JOB VERSION   check a committed version (after a
 *                                      restart)
 *   ckpt_ns SOCKET as UID JOB VERSION  ckpt_begin_as(UID): print the error
 *                                      name, or "ok"
 *   ckpt_ns SOCKET dirs JOB VERSION    directory entries (CKPT_ATTR_IFDIR):
 *                                      d (0750), d/sub (0705) and an empty
 *                                      directory e (0711), each with an
 *                                      mtime, around a file d/sub/f; m
 *                                      (0701, holding g) renamed over the
 *                                      empty y, and the empty p (0702)
 *                                      renamed to q; commit, wait LOCAL
 *   ckpt_ns SOCKET attr JOB VERSION    ckpt_setattr(): a mode, gid and
 *                                      times are kept through the commit;
 *                                      run by a uid other than root, a
 *                                      foreign uid, set-id bits and device
 *                                      nodes are EPERM, bad modes EINVAL
 *   ckpt_ns SOCKET setid JOB VERSION   as root for uid 4242: a set-uid bit
 *                                      given with no owner is the job
 *                                      owner's; a set-gid bit with no group
 *                                      is kept as given
 *   ckpt_ns SOCKET conflict JOB VER    versions VER-0.. whose names the
 *                                      drain or a restore could not make
 *                                      ("a" and "a/b", a bad symbolic
 *                                      link) are refused at the commit
 *                                      (a NUL or a hole inside a link's
 *                                      target: at the seal), FAILED and
 *                                      never latest; the last,
 *                                      whose names can be, commits
 *   ckpt_ns SOCKET flood JOB VERSION   FLOOD_NAMES files whose names all
 *                                      have one CRC32C (a multiple of its
 *                                      generator XORed in), 3.9 KiB long,
 *                                      half unlinked, the rest written
 *                                      again, 100 renamed, committed and
 *                                      LOCAL: the unkeyed file table took
 *                                      ~1 min
 *   ckpt_ns SOCKET cutmark JOB VERSION FILE GO
 *                                      join the open version, mark FILE
 *                                      cut short (CKPT_XATTR_FAILED) in
 *                                      ckptd only, print "marked"; check
 *                                      that its commit is refused
 *                                      (-CKPT_ECUTSHORT, the version still
 *                                      open); once the file GO exists
 *                                      (60 s at most), commit this
 *                                      writer's share: it must succeed
 *                                      (FILE was removed or truncated to 0
 *                                      meanwhile)
 *
 * Exit 0 when every check holds, 1 with a message otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ckpt.h"

#define A_LEN   100000
#define CUT     10000
#define TAIL    50000

static uint8_t pat(uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 9) + 7);
}

/* What file "a" must hold: the pattern up to CUT, zeros, then "0123456789"
 * at TAIL. */
static void expect_a(uint8_t *buf)
{
	uint64_t i;

	for (i = 0; i < TAIL; i++)
		buf[i] = i < CUT ? pat(i) : 0;
	memcpy(buf + TAIL, "0123456789", 10);
}

static void check_a(struct ckpt_client *c, const char *job, const char *ver)
{
	static uint8_t want[TAIL + 10], got[TAIL + 4096];
	struct ckpt_file_info fi;
	size_t n = 0;
	int ret;

	expect_a(want);
	ret = ckpt_read(c, job, ver, "a", got, sizeof(got), 0, &n);
	CHECK(ret == 0, "read a: %s", ckpt_strerror(ret));
	CHECK(n == sizeof(want), "read a: %zu bytes, want %zu", n, sizeof(want));
	CHECK(!memcmp(want, got, sizeof(want)), "a: content differs");
	ret = ckpt_stat_file(c, job, ver, "a", &fi);
	CHECK(ret == 0 && fi.size == TAIL + 10, "stat a: %s, size %llu",
	      ckpt_strerror(ret), (unsigned long long)fi.size);
}

/* The files the version must list, and their contents. */
static void check_names(struct ckpt_client *c, const char *job,
			const char *ver)
{
	struct ckpt_file_info *f = NULL, fi;
	char buf[64];
	size_t n = 0;
	int i, cnt, ret;

	cnt = ckpt_list_files2(c, job, ver, &f, sizeof(*f));
	CHECK(cnt == 2, "list: %d files, want 2 (a, out/deep/x)", cnt);
	for (i = 0; i < cnt; i++)
		CHECK(!strcmp(f[i].path, "a") || !strcmp(f[i].path, "out/deep/x"),
		      "unexpected file %s", f[i].path);
	free(f);
	ret = ckpt_read(c, job, ver, "out/deep/x", buf, sizeof(buf), 0, &n);
	CHECK(ret == 0 && n == 5 && !memcmp(buf, "new-x", 5),
	      "out/deep/x: %s, %zu bytes", ckpt_strerror(ret), n);
	CHECK(ckpt_stat_file(c, job, ver, "tmp/x", &fi) == -ENOENT,
	      "tmp/x still exists");
	CHECK(ckpt_stat_file(c, job, ver, "b", &fi) == -ENOENT,
	      "unlinked b still exists");
}

/* Truncates cost a few records whatever the sizes: up to the maximum and
 * back cuts only what was stored; past the maximum is EFBIG. */
static void huge_truncate(struct ckpt_client *c, struct ckpt_version *v,
			  const char *job, const char *ver)
{
	struct ckpt_file_info fi;
	uint8_t buf[64];
	size_t n = 0;
	int ret;

	CHECK(ckpt_truncate(v, "huge", 1ull << 60) == -EFBIG,
	      "truncate to 1 EiB: want EFBIG");
	CHECK(ckpt_truncate(v, "huge", CKPT_FILE_MAX + 1) == -EFBIG,
	      "truncate past CKPT_FILE_MAX: want EFBIG");
	CHECK(ckpt_write(v, "huge", "lost", 4, 0) == 0, "write huge");
	CHECK(ckpt_truncate(v, "huge", CKPT_FILE_MAX) == 0, "truncate to max");
	CHECK(ckpt_truncate(v, "huge", 0) == 0, "truncate max to 0");
	CHECK(ckpt_write(v, "huge", "data", 4, 0) == 0, "write huge again");
	CHECK(ckpt_truncate(v, "huge", CKPT_FILE_MAX) == 0, "truncate to max");
	CHECK(ckpt_truncate(v, "huge", 2) == 0, "truncate to 2");
	CHECK(ckpt_truncate(v, "huge", CKPT_FILE_MAX) == 0, "truncate to max");
	ret = ckpt_stat_file(c, job, ver, "huge", &fi);
	CHECK(ret == 0 && fi.size == CKPT_FILE_MAX && fi.extents <= 4,
	      "huge: %s, size %llu, %u extents (want <= 4)", ckpt_strerror(ret),
	      (unsigned long long)fi.size, fi.extents);
	ret = ckpt_read(c, job, ver, "huge", buf, 4, 0, &n);
	CHECK(ret == 0 && n == 4 && !memcmp(buf, "da\0\0", 4),
	      "huge: read %s, %zu bytes", ckpt_strerror(ret), n);
	ret = ckpt_read(c, job, ver, "huge", buf, 8, CKPT_FILE_MAX - 8, &n);
	CHECK(ret == 0 && n == 8 && !memcmp(buf, "\0\0\0\0\0\0\0\0", 8),
	      "huge: read at the end %s, %zu bytes", ckpt_strerror(ret), n);
	CHECK(ckpt_unlink(v, "huge") == 0, "unlink huge");
}

/* Commit v (freed) and wait for job/ver to reach LOCAL. */
static void commit_local(struct ckpt_client *c, struct ckpt_version *v,
			 const char *job, const char *ver)
{
	int ret = ckpt_commit(v);

	CHECK(ret == 0, "commit: %s", ckpt_strerror(ret));
	ckpt_version_free(v);
	ret = ckpt_wait_name(c, job, ver, CKPT_LOCAL, 30000);
	CHECK(ret >= 0, "wait: %s", ckpt_strerror(ret));
}

/* A write past CKPT_FILE_MAX fails with EFBIG, and so does the commit of
 * the version it was meant for: never a version missing a write. */
static void huge_write(struct ckpt_client *c, const char *job)
{
	char buf[CKPT_VERSION_MAX + 1] = "";
	struct ckpt_version *v;
	int ret;

	ret = ckpt_begin(c, job, "too-big", &v);
	CHECK(ret == 0, "begin too-big: %s", ckpt_strerror(ret));
	if (ret < 0)
		return;
	ret = ckpt_write(v, "f", "data", 4, CKPT_FILE_MAX - 2);
	if (ret == 0)
		ret = ckpt_sync(v);
	CHECK(ret == -EFBIG, "write past CKPT_FILE_MAX: %s, want EFBIG",
	      ckpt_strerror(ret));
	ret = ckpt_commit(v);
	CHECK(ret < 0, "commit after a failed write succeeded");
	ckpt_version_free(v);
	ret = ckpt_latest(c, job, CKPT_STAGED, buf, sizeof(buf));
	CHECK(ret < 0 || strcmp(buf, "too-big"), "a version missing a write is latest");
}

static int do_write(struct ckpt_client *c, const char *job, const char *ver)
{
	static uint8_t a[A_LEN];
	struct ckpt_version *v;
	uint64_t i;
	int ret;

	for (i = 0; i < A_LEN; i++)
		a[i] = pat(i);
	ret = ckpt_begin(c, job, ver, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_ns: begin: %s\n", ckpt_strerror(ret));
		return 1;
	}
	/* a: written, cut, and grown again past a hole. */
	CHECK(ckpt_write(v, "a", a, A_LEN, 0) == 0, "write a");
	CHECK(ckpt_truncate(v, "a", CUT) == 0, "truncate a");
	CHECK(ckpt_write(v, "a", "0123456789", 10, TAIL) == 0, "write a tail");
	check_a(c, job, ver);            /* read back while open */
	huge_truncate(c, v, job, ver);
	huge_write(c, job);

	/* b: written then unlinked; a rename over an existing file. */
	CHECK(ckpt_write(v, "b", "bbbb", 4, 0) == 0, "write b");
	CHECK(ckpt_unlink(v, "b") == 0, "unlink b");
	CHECK(ckpt_unlink(v, "b") == -ENOENT, "second unlink of b");
	CHECK(ckpt_write(v, "tmp/x", "new-x", 5, 0) == 0, "write tmp/x");
	CHECK(ckpt_write(v, "final/deep/x", "old", 3, 0) == 0, "write final");
	CHECK(ckpt_rename(v, "tmp/x", "final/deep/x") == 0, "rename file");
	CHECK(ckpt_rename(v, "final", "out") == 0, "rename directory");
	CHECK(ckpt_rename(v, "nothing", "else") == -ENOENT, "rename nothing");
	CHECK(ckpt_rename(v, "out", "out/inside") == -EINVAL,
	      "rename a directory into itself");
	CHECK(ckpt_sync(v) == 0, "sync");
	check_names(c, job, ver);

	ret = ckpt_commit(v);
	CHECK(ret == 0, "commit: %s", ckpt_strerror(ret));
	ret = ckpt_wait(v, CKPT_LOCAL, 30000);
	CHECK(ret == 0, "wait local: %s", ckpt_strerror(ret));
	CHECK(ckpt_truncate(v, "a", 0) == -CKPT_ESEALED,
	      "truncate after commit");
	/* After a commit the version's state comes before the bytes. */
	CHECK(ckpt_write(v, "a", "x", 1, 0) == -CKPT_ESEALED,
	      "write after commit");
	CHECK(ckpt_write(v, "a", NULL, 0, 0) == -CKPT_ESEALED,
	      "empty write after commit");
	CHECK(ckpt_write(v, "a", NULL, 5, 0) == -CKPT_ESEALED,
	      "write of a NULL buffer after commit");
	CHECK(ckpt_write(v, "a", "x", 1, UINT64_MAX) == -CKPT_ESEALED,
	      "write of a wrapping range after commit");
	CHECK(ckpt_write_async(v, "a", NULL, 5, 0, NULL, NULL) ==
	      -CKPT_ESEALED, "async write after commit");
	CHECK(ckpt_write(v, "../a", "x", 1, 0) == -CKPT_EBADNAME,
	      "a bad name is refused before the state");
	ckpt_version_free(v);
	check_a(c, job, ver);
	check_names(c, job, ver);
	return failed;
}

static int do_as(struct ckpt_client *c, const char *uid, const char *job,
		 const char *ver)
{
	struct ckpt_version *v;
	int ret = ckpt_begin_as(c, job, ver, (uint32_t)strtoul(uid, NULL, 10),
				&v);

	if (ret == 0) {
		printf("ok\n");
		ckpt_abort(v);
		ckpt_version_free(v);
		return 0;
	}
	printf("%s\n", ret == -EPERM ? "EPERM" : ret == -EACCES ? "EACCES" :
	       ckpt_strerror(ret));
	return 0;
}

/* ckpt_setattr() through the C API (see the usage above). */
static int do_attr(struct ckpt_client *c, const char *job, const char *ver)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE | CKPT_ATTR_GID |
				      CKPT_ATTR_ATIME | CKPT_ATTR_MTIME,
			       .mode = 0640, .gid = 4242, .atime_ns = 11,
			       .mtime_ns = 1700000000000000022ull };
	struct ckpt_attr bad = { .set = CKPT_ATTR_MODE, .mode = 0100644 };
	struct ckpt_file_info fi;
	struct ckpt_version *v;
	int ret, root = geteuid() == 0;

	ret = ckpt_begin(c, job, ver, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_ns: begin: %s\n", ckpt_strerror(ret));
		return 1;
	}
	ret = ckpt_write(v, "f", "hello", 5, 0);
	CHECK(ret == 0, "write: %s", ckpt_strerror(ret));
	ret = ckpt_setattr(v, "f", &a);
	CHECK(ret == 0, "setattr: %s", ckpt_strerror(ret));
	CHECK(ckpt_setattr(v, "nosuch", &a) == -ENOENT, "setattr of no file");
	CHECK(ckpt_setattr(v, "f", &bad) == -EINVAL, "setattr of S_IFREG");
	bad = (struct ckpt_attr){ .set = CKPT_ATTR_UID, .uid = 0 };
	ret = ckpt_setattr(v, "f", &bad);
	CHECK(root ? ret == 0 : ret == -EPERM, "setattr uid 0: %s",
	      ckpt_strerror(ret));
	bad = (struct ckpt_attr){ .set = CKPT_ATTR_MODE, .mode = 02755 };
	ret = ckpt_setattr(v, "f", &bad);
	CHECK(root ? ret == 0 : ret == -EPERM, "setattr set-gid: %s",
	      ckpt_strerror(ret));
	if (!root) {    /* a device node: root may keep one, no other uid */
		bad = (struct ckpt_attr){ .set = CKPT_ATTR_MODE,
					  .mode = CKPT_ATTR_IFCHR | 0666,
					  .rdev = 0x101 };
		ret = ckpt_setattr(v, "f", &bad);
		CHECK(ret == -EPERM, "setattr to a device node: %s",
		      ckpt_strerror(ret));
		bad.mode = CKPT_ATTR_IFBLK | 0600;
		ret = ckpt_setattr(v, "f", &bad);
		CHECK(ret == -EPERM, "setattr to a block device: %s",
		      ckpt_strerror(ret));
	}
	if (root) {     /* back to what the check below expects */
		a.set |= CKPT_ATTR_UID;
		a.uid = 0;
		CHECK(ckpt_setattr(v, "f", &a) == 0, "setattr again");
	}
	commit_local(c, v, job, ver);
	memset(&fi, 0, sizeof(fi));
	ret = ckpt_stat_file2(c, job, ver, "f", &fi, sizeof(fi));
	CHECK(ret >= 0, "stat: %s", ckpt_strerror(ret));
	CHECK((fi.attr.mode & 07777) == 0640 && fi.attr.gid == 4242 &&
	      fi.attr.atime_ns == 11 && fi.attr.mtime_ns == 1700000000000000022ull &&
	      fi.attr.ctime_ns != 0, "attributes after the commit: mode %o gid %u",
	      fi.attr.mode, fi.attr.gid);
	return failed;
}

/* As root, on behalf of uid 4242: a set-uid bit given with no owner
 * records the job's owner (restored by root, the file is 4242's, not a
 * set-uid root program); a set-gid bit with no group stays as given (a
 * restore as root drops it: t_namespace). */
static int do_setid(struct ckpt_client *c, const char *job, const char *ver)
{
	struct ckpt_attr su = { .set = CKPT_ATTR_MODE, .mode = 04755 };
	struct ckpt_attr sg = { .set = CKPT_ATTR_MODE, .mode = 02755 };
	struct ckpt_file_info fi;
	struct ckpt_version *v;
	int ret;

	ret = ckpt_begin_as(c, job, ver, 4242, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_ns: begin_as: %s\n", ckpt_strerror(ret));
		return 1;
	}
	CHECK(ckpt_write(v, "su", "#!/bin/sh\n", 10, 0) == 0, "write su");
	CHECK(ckpt_write(v, "sg", "#!/bin/sh\n", 10, 0) == 0, "write sg");
	CHECK(ckpt_setattr(v, "su", &su) == 0, "setattr su 04755");
	CHECK(ckpt_setattr(v, "sg", &sg) == 0, "setattr sg 02755");
	commit_local(c, v, job, ver);
	memset(&fi, 0, sizeof(fi));
	ret = ckpt_stat_file2(c, job, ver, "su", &fi, sizeof(fi));
	CHECK(ret >= 0 && (fi.attr.set & CKPT_ATTR_UID) && fi.attr.uid == 4242 &&
	      (fi.attr.mode & 07777) == 04755,
	      "su: set %#x uid %u mode %o", fi.attr.set, fi.attr.uid, fi.attr.mode);
	return failed;
}

/* A directory entry: made empty (truncate), then given its type. */
static void mkdir_entry(struct ckpt_version *v, const char *path, uint32_t mode,
			uint64_t mtime_s)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE | CKPT_ATTR_MTIME |
				      CKPT_ATTR_ATIME,
			       .mode = CKPT_ATTR_IFDIR | mode,
			       .atime_ns = mtime_s * 1000000000ull,
			       .mtime_ns = mtime_s * 1000000000ull };

	CHECK(ckpt_truncate(v, path, 0) == 0, "truncate %s", path);
	CHECK(ckpt_setattr(v, path, &a) == 0, "setattr %s IFDIR", path);
}

static int do_dirs(struct ckpt_client *c, const char *job, const char *ver)
{
	struct ckpt_version *v;
	int ret;

	ret = ckpt_begin(c, job, ver, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_ns: begin: %s\n", ckpt_strerror(ret));
		return 1;
	}
	CHECK(ckpt_write(v, "d/sub/f", "data", 4, 0) == 0, "write d/sub/f");
	mkdir_entry(v, "d", 0750, 1600000000);
	mkdir_entry(v, "d/sub", 0705, 1600000100);
	mkdir_entry(v, "e", 0711, 1600000200);
	/* A directory renamed takes its own entry along with the files
	 * below it, and replaces the entry of an empty directory. */
	CHECK(ckpt_write(v, "m/g", "moved", 5, 0) == 0, "write m/g");
	mkdir_entry(v, "m", 0701, 1600000300);
	mkdir_entry(v, "y", 0755, 1600000350);
	CHECK(ckpt_rename(v, "m", "y") == 0, "rename m y");
	mkdir_entry(v, "p", 0702, 1600000400);
	CHECK(ckpt_rename(v, "p", "q") == 0, "rename p q (an empty directory)");
	commit_local(c, v, job, ver);
	return failed;
}

/* A version's names are checked when it is committed: one begun as
 * ver-N, built by the case, then committed.  want: the commit's error, or
 * 0.  A version refused is FAILED (its wait says so, it is never latest);
 * one committed reaches LOCAL. */
struct ns_case {
	const char *what;
	int want;                 /* from the commit */
	int want_seal;            /* from a wait for LOCAL, the commit 0 */
	void (*build)(struct ckpt_version *v);
};

static void set_type(struct ckpt_version *v, const char *path, uint32_t type)
{
	struct ckpt_attr a = { .set = CKPT_ATTR_MODE, .mode = type | 0755 };
	int ret = ckpt_setattr(v, path, &a);

	CHECK(ret == 0, "setattr %s %o: %s", path, type, ckpt_strerror(ret));
}

static void put(struct ckpt_version *v, const char *path)
{
	int ret = ckpt_write(v, path, "bytes", 5, 0);

	CHECK(ret == 0, "write %s: %s", path, ckpt_strerror(ret));
}

static void file_over_dir(struct ckpt_version *v)
{
	put(v, "a");
	put(v, "a/b");
}

static void dir_over_file(struct ckpt_version *v)
{
	put(v, "x/y/z");
	put(v, "x/y");
}

static void link_over_dir(struct ckpt_version *v)
{
	put(v, "h");
	CHECK(ckpt_link(v, "h", "l") == 0, "link h l");
	put(v, "l/m");
}

static void renamed_below_file(struct ckpt_version *v)
{
	put(v, "f");
	put(v, "g/h");
	CHECK(ckpt_rename(v, "g", "f/g") == 0, "rename g f/g");
}

static void link_empty(struct ckpt_version *v)
{
	CHECK(ckpt_truncate(v, "s", 0) == 0, "truncate s");
	set_type(v, "s", CKPT_ATTR_IFLNK);
}

static void link_long(struct ckpt_version *v)
{
	static char t[CKPT_PATH_MAX2 + 2];

	memset(t, 'y', sizeof(t));
	CHECK(ckpt_write(v, "s", t, sizeof(t), 0) == 0, "write s");
	set_type(v, "s", CKPT_ATTR_IFLNK);
}

static void link_hole(struct ckpt_version *v)
{
	put(v, "s");
	CHECK(ckpt_truncate(v, "s", 64) == 0, "truncate s up");
	set_type(v, "s", CKPT_ATTR_IFLNK);
}

static void dir_with_bytes(struct ckpt_version *v)
{
	put(v, "d");
	set_type(v, "d", CKPT_ATTR_IFDIR);
}

static void link_bytes(struct ckpt_version *v, const char *path, int c,
		       size_t len)
{
	static char b[8192];

	memset(b, c, len);
	CHECK(ckpt_write(v, path, b, len, 0) == 0, "write %s", path);
}

static void dir_entry_above(struct ckpt_version *v)
{
	put(v, "a/b");
	CHECK(ckpt_truncate(v, "a", 0) == 0, "truncate a");
	set_type(v, "a", CKPT_ATTR_IFDIR);
	put(v, "f");
	CHECK(ckpt_unlink(v, "f") == 0, "unlink f");
	put(v, "f/g");
	put(v, "r");
	CHECK(ckpt_rename(v, "r", "q") == 0, "rename r q");
	put(v, "r/s");
	put(v, "t");
	CHECK(ckpt_write(v, "t", "target", 6, 0) == 0, "write t");
	set_type(v, "t", CKPT_ATTR_IFLNK);
	/* a target from two writes, and one cut from a larger record */
	CHECK(ckpt_write(v, "u", "get", 3, 3) == 0, "write u 3");
	CHECK(ckpt_write(v, "u", "tar", 3, 0) == 0, "write u 0");
	set_type(v, "u", CKPT_ATTR_IFLNK);
	link_bytes(v, "w", 'w', 8192);
	CHECK(ckpt_truncate(v, "w", 7) == 0, "truncate w");
	set_type(v, "w", CKPT_ATTR_IFLNK);
	/* bad links gone before the commit: one unlinked, one renamed over */
	CHECK(ckpt_write(v, "z", "a\0b", 3, 0) == 0, "write z");
	set_type(v, "z", CKPT_ATTR_IFLNK);
	CHECK(ckpt_unlink(v, "z") == 0, "unlink z");
	CHECK(ckpt_write(v, "y", "a\0b", 3, 0) == 0, "write y");
	set_type(v, "y", CKPT_ATTR_IFLNK);
	put(v, "x");
	CHECK(ckpt_rename(v, "x", "y") == 0, "rename x y");
}

static void link_nul(struct ckpt_version *v)
{
	CHECK(ckpt_write(v, "s", "ab\0cd", 5, 0) == 0, "write s");
	set_type(v, "s", CKPT_ATTR_IFLNK);
}

static void link_gap(struct ckpt_version *v)
{
	CHECK(ckpt_write(v, "s", "ab", 2, 0) == 0, "write s 0");
	CHECK(ckpt_write(v, "s", "cd", 2, 10) == 0, "write s 10");
	set_type(v, "s", CKPT_ATTR_IFLNK);
}

static void link_cut_zeros(struct ckpt_version *v)
{
	CHECK(ckpt_write(v, "s", "abcdef", 6, 0) == 0, "write s");
	CHECK(ckpt_truncate(v, "s", 2) == 0, "truncate s 2");
	CHECK(ckpt_truncate(v, "s", 6) == 0, "truncate s 6");
	CHECK(ckpt_write(v, "s", "g", 1, 5) == 0, "write s 5");
	set_type(v, "s", CKPT_ATTR_IFLNK);
}

static void link_to_dir(struct ckpt_version *v)
{
	CHECK(ckpt_truncate(v, "d", 0) == 0, "truncate d");
	set_type(v, "d", CKPT_ATTR_IFDIR);
	CHECK(ckpt_link(v, "d", "e") == 0, "link d e");
}

static const struct ns_case ns_cases[] = {
	{ "a file above a file", -ENOTDIR, 0, file_over_dir },
	{ "a file made above files", -ENOTDIR, 0, dir_over_file },
	{ "a hard link above a file", -ENOTDIR, 0, link_over_dir },
	{ "a directory renamed below a file", -ENOTDIR, 0, renamed_below_file },
	{ "an empty symbolic link", -EINVAL, 0, link_empty },
	{ "a symbolic link past PATH_MAX", -ENAMETOOLONG, 0, link_long },
	{ "a symbolic link with a hole", -EINVAL, 0, link_hole },
	{ "a directory's entry with bytes", -EISDIR, 0, dir_with_bytes },
	{ "a hard link to a directory's entry", -EPERM, 0, link_to_dir },
	{ "a NUL in a symbolic link", 0, -EINVAL, link_nul },
	{ "a hole inside a symbolic link", 0, -EINVAL, link_gap },
	{ "zeros cut into a symbolic link", 0, -EINVAL, link_cut_zeros },
	{ "names that can all be made", 0, 0, dir_entry_above },
};

static int do_conflict(struct ckpt_client *c, const char *job, const char *ver)
{
	char name[64], latest[64];
	struct ckpt_version *v;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(ns_cases) / sizeof(ns_cases[0]); i++) {
		const struct ns_case *k = &ns_cases[i];

		snprintf(name, sizeof(name), "%s-%zu", ver, i);
		ret = ckpt_begin(c, job, name, &v);
		CHECK(ret == 0, "begin %s: %s", name, ckpt_strerror(ret));
		if (ret < 0)
			continue;
		k->build(v);
		ret = ckpt_commit(v);
		CHECK(ret == k->want, "%s: commit gave %s, want %s", k->what,
		      ckpt_strerror(ret), ckpt_strerror(k->want));
		ret = ckpt_wait(v, CKPT_LOCAL, 30000);
		CHECK(k->want ? ret < 0 : ret == k->want_seal,
		      "%s: wait LOCAL: %s", k->what, ckpt_strerror(ret));
		ckpt_version_free(v);
		ret = ckpt_latest(c, job, CKPT_LOCAL, latest, sizeof(latest));
		CHECK(k->want || k->want_seal ? ret < 0 || strcmp(latest, name) :
		      ret == 0 && !strcmp(latest, name), "%s: latest is %s",
		      k->what, ret < 0 ? ckpt_strerror(ret) : latest);
	}
	return failed;
}

/*
 * 15 directories of 255 'n's, then 72 bytes of 'n' with the CRC32C
 * generator (33 bits, in the order the CRC reads them) XORed in at some of
 * 14 offsets 40 bits apart, as mask says: every such name has the same
 * CRC32C, and two differ only in their last component (a comparison reads
 * 3.8 KiB).  0, or -1 where a NUL or '/' came out.
 */
#define FLOOD_NAMES 16000
#define FLOOD_DIRS 15
#define FLOOD_BODY 72
#define FLOOD_LEN (FLOOD_DIRS * 256 + FLOOD_BODY)

static int flood_name(char *name, unsigned mask)
{
	const uint64_t gen = 1 | ((uint64_t)0x82F63B78u << 1);
	unsigned char *body = (unsigned char *)name + FLOOD_DIRS * 256;
	unsigned j, b, bit;

	memset(name, 'n', FLOOD_LEN);
	for (j = 1; j <= FLOOD_DIRS; j++)
		name[j * 256 - 1] = '/';
	name[FLOOD_LEN] = '\0';
	for (j = 0; j < 14; j++) {
		if (!(mask & (1u << j)))
			continue;
		for (b = 0; b < 33; b++) {
			bit = 40 * j + b;
			if (gen >> b & 1)
				body[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		}
	}
	for (j = 0; j < FLOOD_BODY; j++)
		if (!body[j] || body[j] == '/')
			return -1;
	return 0;
}

static int do_flood(struct ckpt_client *c, const char *job, const char *ver)
{
	char name[FLOOD_LEN + 1], latest[64];
	struct ckpt_version_info vi;
	struct ckpt_version *v;
	unsigned mask, n = 0;
	char got[4];
	size_t nread;
	int ret;

	ret = ckpt_begin(c, job, ver, &v);
	CHECK(ret == 0, "begin: %s", ckpt_strerror(ret));
	if (ret < 0)
		return failed;
	for (mask = 0; mask < (1u << 14) && n < FLOOD_NAMES; mask++) {
		if (flood_name(name, mask) < 0)
			continue;
		ret = ckpt_write(v, name, "x", 1, 0);
		CHECK(ret == 0, "write %s: %s", name, ckpt_strerror(ret));
		if (ret < 0)
			break;
		n++;
	}
	CHECK(n == FLOOD_NAMES, "only %u names", n);
	/* every other name unlinked, the rest written again (a lookup that
	 * missed would add a second entry), the first 100 renamed */
	for (mask = 0, n = 0; mask < (1u << 14) && n < FLOOD_NAMES; mask++) {
		if (flood_name(name, mask) < 0)
			continue;
		if (n++ % 2 == 0)
			ret = ckpt_unlink(v, name);
		else
			ret = ckpt_write(v, name, "y", 1, 1);
		CHECK(ret == 0, "unlink or write %s: %s", name, ckpt_strerror(ret));
		if (ret == 0 && n % 2 == 0 && n <= 200) {
			char to[32];

			snprintf(to, sizeof(to), "renamed-%u", n);
			ret = ckpt_rename(v, name, to);
			CHECK(ret == 0, "rename: %s", ckpt_strerror(ret));
		}
	}
	ret = ckpt_commit(v);
	CHECK(ret == 0, "commit: %s", ckpt_strerror(ret));
	ret = ckpt_wait(v, CKPT_LOCAL, -1);
	CHECK(ret == 0, "wait LOCAL: %s", ckpt_strerror(ret));
	ckpt_version_free(v);
	ret = ckpt_latest(c, job, CKPT_LOCAL, latest, sizeof(latest));
	CHECK(ret == 0 && !strcmp(latest, ver), "latest: %s",
	      ret < 0 ? ckpt_strerror(ret) : latest);
	ret = ckpt_stat_version(c, job, ver, &vi);
	CHECK(ret == 0 && vi.nfiles == FLOOD_NAMES / 2, "%s: %u files, want %d",
	      ckpt_strerror(ret), vi.nfiles, FLOOD_NAMES / 2);
	/* each kept name reads "xy", each unlinked one is gone */
	for (mask = 0, n = 0; mask < (1u << 14) && n < FLOOD_NAMES; mask++) {
		if (flood_name(name, mask) < 0)
			continue;
		ret = ckpt_read(c, job, ver, name, got, sizeof(got), 0, &nread);
		if (n++ % 2 == 0 || n <= 200)
			CHECK(ret == -ENOENT, "unlinked %u: read gave %s", n,
			      ckpt_strerror(ret));
		else
			CHECK(ret == 0 && nread == 2 && !memcmp(got, "xy", 2),
			      "kept %u: read gave %s, %zu bytes", n,
			      ckpt_strerror(ret), nread);
	}
	return failed;
}

/* cutmark (see the usage above). */
static int do_cutmark(struct ckpt_client *c, const char *job, const char *ver,
		      const char *file, const char *go)
{
	static const char why[] = "pid 1 killed by signal 9 (ckpt_ns)";
	struct ckpt_version *v;
	int ret, i;

	ret = ckpt_begin(c, job, ver, &v);
	if (ret < 0) {
		fprintf(stderr, "ckpt_ns: begin: %s\n", ckpt_strerror(ret));
		return 1;
	}
	ret = ckpt_setxattr(v, file, CKPT_XATTR_FAILED, why, strlen(why));
	CHECK(ret == 0, "setxattr %s: %s", CKPT_XATTR_FAILED,
	      ckpt_strerror(ret));
	ret = ckpt_commit(v);
	CHECK(ret == -CKPT_ECUTSHORT, "commit with %s marked: %s", file,
	      ckpt_strerror(ret));
	printf("marked\n");
	fflush(stdout);
	for (i = 0; i < 6000 && access(go, F_OK) != 0; i++)
		usleep(10000);
	CHECK(i < 6000, "%s never came", go);
	ret = ckpt_commit(v);
	CHECK(ret == 0, "commit once %s was rewritten: %s", file,
	      ckpt_strerror(ret));
	ckpt_version_free(v);
	return failed;
}

int main(int argc, char **argv)
{
	struct ckpt_client *c;
	int ret;

	if (argc < 5)
		return 2;
	ret = ckpt_connect(argv[1], &c);
	if (ret < 0) {
		fprintf(stderr, "ckpt_ns: connect: %s\n", ckpt_strerror(ret));
		return 1;
	}
	if (!strcmp(argv[2], "write")) {
		ret = do_write(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "check")) {
		check_a(c, argv[3], argv[4]);
		check_names(c, argv[3], argv[4]);
		ret = failed;
	} else if (!strcmp(argv[2], "dirs")) {
		ret = do_dirs(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "setid")) {
		ret = do_setid(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "flood")) {
		ret = do_flood(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "conflict")) {
		ret = do_conflict(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "attr")) {
		ret = do_attr(c, argv[3], argv[4]);
	} else if (!strcmp(argv[2], "cutmark") && argc == 7) {
		ret = do_cutmark(c, argv[3], argv[4], argv[5], argv[6]);
	} else if (!strcmp(argv[2], "as") && argc == 6) {
		ret = do_as(c, argv[3], argv[4], argv[5]);
	} else {
		ret = 2;
	}
	ckpt_disconnect(c);
	return ret;
}
