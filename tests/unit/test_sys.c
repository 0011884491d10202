/*
 * test_sys.c - unit tests for lib/sys: the fault-injection seam.
 *
 * Covers the plan language (Nth call once, "N+" from then on, several rules,
 * bad specs rejected without disturbing the plan in force), counting from
 * several threads at once, and real file I/O through the wrappers in a
 * private mkdtemp directory: write, fsync, rename, directory fsync, read back,
 * fallocate, unlink, and the same calls failing on cue; and "delay=MS" rules,
 * which make a wrapped call late (measured on CLOCK_MONOTONIC with a lower
 * bound only: a loaded machine may be slower, never faster) and then let it
 * succeed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "sys.h"

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void test_nth_once(void)
{
	CU_ASSERT_EQUAL_FATAL(sys_fault_set("pwrite:3:EIO"), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), -EIO);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), 0);
	/* Other operations have their own counters and no rule. */
	CU_ASSERT_EQUAL(sys_inject(SYS_FSYNC), 0);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
}

static void test_nth_onwards(void)
{
	int i;

	CU_ASSERT_EQUAL_FATAL(sys_fault_set("fsync:2+:ENOSPC"), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_FSYNC), 0);
	for (i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(sys_inject(SYS_FSYNC), -ENOSPC);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), 0);
	CU_ASSERT_EQUAL(sys_fault_set(""), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_FSYNC), 0);
}

static void test_several_rules(void)
{
	CU_ASSERT_EQUAL_FATAL(
		sys_fault_set("pwrite:1:EROFS,pwrite:3:EDQUOT,rename:2:EACCES,open:1+:EPERM,unlink:1:ENOMEM,pread:2:EIO,fallocate:1:ENOSPC"),
		0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), -EROFS);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), -EDQUOT);
	CU_ASSERT_EQUAL(sys_inject(SYS_RENAME), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_RENAME), -EACCES);
	CU_ASSERT_EQUAL(sys_inject(SYS_OPEN), -EPERM);
	CU_ASSERT_EQUAL(sys_inject(SYS_OPEN), -EPERM);
	CU_ASSERT_EQUAL(sys_inject(SYS_UNLINK), -ENOMEM);
	CU_ASSERT_EQUAL(sys_inject(SYS_PREAD), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PREAD), -EIO);
	CU_ASSERT_EQUAL(sys_inject(SYS_FALLOCATE), -ENOSPC);

	/* A new plan restarts the counts. */
	CU_ASSERT_EQUAL_FATAL(sys_fault_set("pwrite:1:EIO"), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_PWRITE), -EIO);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
}

static void test_bad_specs(void)
{
	static const char *const bad[] = {
		"bogus:1:EIO", "pwrite:0:EIO", "pwrite:x:EIO", "pwrite:1:EFOO",
		"pwrite:1", "pwrite", ":1:EIO", "pwrite::EIO", "pwrite:1:",
		"pwrite:1:EIO,", ",pwrite:1:EIO", "pwrite:1:EIO,,fsync:1:EIO",
		"pwrite:1+x:EIO", "pwrite:+:EIO", "pwrite:-1:EIO", "pwrite:+1:EIO",
		"pwrite: 1:EIO", "pwrite:1:eio", "PWRITE:1:EIO", "pwrite:1:EIO:x",
		"pwrite:1++:EIO", "pwrite:9999999999999999999:EIO",
		"fsync:1:delay=", "fsync:1:delay=0", "fsync:1:delay=-5",
		"fsync:1:delay=1x", "fsync:1:delay=600001", "fsync:1:delay",
		"fsync:1:DELAY=5", "fsync:1:delay= 5", "fsync:1:delay=+5",
		"fsync:1:delay=99999999999999999999", "fsync:1:delay=5:EIO",
	};
	char many[512] = "";
	size_t i;

	/* A plan holds 16 rules; 17 is too many. */
	for (i = 0; i < 16; i++)
		strcat(many, i ? ",fsync:1:EIO" : "fsync:1:EIO");
	CU_ASSERT_EQUAL(sys_fault_set(many), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_FSYNC), -EIO);
	strcat(many, ",fsync:1:EIO");

	CU_ASSERT_EQUAL_FATAL(sys_fault_set("unlink:2:EIO"), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_UNLINK), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = sys_fault_set(bad[i]);

		if (ret != -EINVAL)
			fprintf(stderr, "accepted bad spec '%s'\n", bad[i]);
		CU_ASSERT_EQUAL(ret, -EINVAL);
	}
	CU_ASSERT_EQUAL(sys_fault_set(many), -EINVAL);

	/* The plan in force and its count survived every rejection. */
	CU_ASSERT_EQUAL(sys_inject(SYS_UNLINK), -EIO);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
}

static void test_env(void)
{
	CU_ASSERT_EQUAL_FATAL(setenv("CKPT_FAULT", "rename:1:EROFS", 1), 0);
	CU_ASSERT_EQUAL(sys_fault_init(), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_RENAME), -EROFS);
	CU_ASSERT_EQUAL_FATAL(setenv("CKPT_FAULT", "rename:x", 1), 0);
	CU_ASSERT_EQUAL(sys_fault_init(), -EINVAL);
	CU_ASSERT_EQUAL(unsetenv("CKPT_FAULT"), 0);
	CU_ASSERT_EQUAL(sys_fault_init(), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_RENAME), 0);
}

static void test_op_names(void)
{
	CU_ASSERT_STRING_EQUAL(sys_op_name(SYS_OPEN), "open");
	CU_ASSERT_STRING_EQUAL(sys_op_name(SYS_FALLOCATE), "fallocate");
	CU_ASSERT_STRING_EQUAL(sys_op_name(SYS_UNLINK), "unlink");
	CU_ASSERT_STRING_EQUAL(sys_op_name(SYS_LINK), "link");
	CU_ASSERT_EQUAL(sys_fault_set("link:2:EIO"), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_LINK), 0);
	CU_ASSERT_EQUAL(sys_inject(SYS_LINK), -EIO);
	CU_ASSERT_EQUAL(sys_inject(SYS_RENAME), 0);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
	CU_ASSERT_STRING_EQUAL(sys_op_name(SYS_NOPS), "unknown");
	CU_ASSERT_EQUAL(sys_inject(SYS_NOPS), -EINVAL);
}

#define NTHREADS 8
#define NCALLS 10000
#define FAIL_FROM 1000

static void *inject_worker(void *arg)
{
	long fails = 0;
	int i;

	for (i = 0; i < NCALLS; i++)
		if (sys_inject(SYS_PWRITE) == -EIO)
			fails++;
	return (void *)fails;
}

/* Exactly the calls from number FAIL_FROM on fail, however they interleave. */
static void test_threads(void)
{
	pthread_t th[NTHREADS];
	long total = 0;
	void *r;
	int i;

	CU_ASSERT_EQUAL_FATAL(sys_fault_set("pwrite:1000+:EIO"), 0);
	for (i = 0; i < NTHREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, inject_worker,
						     NULL), 0);
	for (i = 0; i < NTHREADS; i++) {
		CU_ASSERT_EQUAL(pthread_join(th[i], &r), 0);
		total += (long)r;
	}
	CU_ASSERT_EQUAL(total, (long)NTHREADS * NCALLS - (FAIL_FROM - 1));
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
}

/* The write-fsync-rename-fsync(dir) sequence the store uses, for real. */
static void test_real_file(void)
{
	char tmp[PATH_MAX], dst[PATH_MAX], buf[8192], back[8192];
	struct stat st;
	int fd, i;

	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (char)(i * 7);
	path_in_tmp(tmp, sizeof(tmp), "chunk.tmp");
	path_in_tmp(dst, sizeof(dst), "chunk");

	fd = sys_open(tmp, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(sys_fallocate(fd, 0, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(sys_pwrite(fd, buf, 100, 0), 100);
	CU_ASSERT_EQUAL(sys_pwrite_all(fd, buf + 100, sizeof(buf) - 100, 100), 0);
	CU_ASSERT_EQUAL(sys_fsync(fd), 0);
	CU_ASSERT_EQUAL(close(fd), 0);
	CU_ASSERT_EQUAL(sys_rename(tmp, dst), 0);
	CU_ASSERT_EQUAL(sys_fsync_dir(tmpdir), 0);

	fd = sys_open(dst, O_RDONLY | O_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, (off_t)sizeof(buf));
	CU_ASSERT_EQUAL(sys_pread(fd, back, 10, 0), 10);
	CU_ASSERT_EQUAL(sys_pread_all(fd, back, sizeof(back), 0), 0);
	CU_ASSERT_EQUAL(memcmp(buf, back, sizeof(buf)), 0);
	/* Short read at end of file. */
	CU_ASSERT_EQUAL(sys_pread_all(fd, back, 16, sizeof(buf) - 8), -EIO);
	CU_ASSERT_EQUAL(sys_pread(fd, back, 16, sizeof(buf)), 0);
	/* Writing to a read-only descriptor is a real error. */
	CU_ASSERT_EQUAL(sys_pwrite(fd, buf, 1, 0), -EBADF);
	CU_ASSERT_EQUAL(close(fd), 0);

	CU_ASSERT_EQUAL(sys_open(tmp, O_RDONLY, 0), -ENOENT);
	CU_ASSERT_EQUAL(sys_rename(tmp, dst), -ENOENT);
	CU_ASSERT_EQUAL(sys_fsync_dir(dst), -ENOTDIR);
	CU_ASSERT_EQUAL(sys_unlink(dst), 0);
	CU_ASSERT_EQUAL(sys_unlink(dst), -ENOENT);
}

/* sys_reopen: the same inode through a new open file, with its own flags
 * and never O_CREAT; after the name is replaced, still the first file. */
static void test_reopen(void)
{
	char path[PATH_MAX], other[PATH_MAX], back[4];
	struct stat a, b;
	int fd, rfd, ofd;

	path_in_tmp(path, sizeof(path), "reopen");
	path_in_tmp(other, sizeof(other), "reopen.other");
	fd = sys_open(path, O_CREAT | O_EXCL | O_RDONLY | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	/* Someone swaps the name for another file: the reopen still gets
	 * the one fd has. */
	ofd = sys_open(other, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(ofd >= 0);
	CU_ASSERT_EQUAL(sys_rename(other, path), 0);
	rfd = sys_reopen(fd, O_WRONLY | O_CREAT);
	CU_ASSERT_FATAL(rfd >= 0);
	CU_ASSERT_EQUAL(fstat(fd, &a), 0);
	CU_ASSERT_EQUAL(fstat(rfd, &b), 0);
	CU_ASSERT_EQUAL(a.st_ino, b.st_ino);
	CU_ASSERT_EQUAL(a.st_dev, b.st_dev);
	CU_ASSERT(fcntl(rfd, F_GETFD) & FD_CLOEXEC);
	/* Its own access mode: it writes, fd still cannot. */
	CU_ASSERT_EQUAL(sys_pwrite_all(rfd, "abcd", 4, 0), 0);
	CU_ASSERT_EQUAL(sys_pwrite(fd, "x", 1, 0), -EBADF);
	CU_ASSERT_EQUAL(sys_pread_all(fd, back, 4, 0), 0);
	CU_ASSERT_EQUAL(memcmp(back, "abcd", 4), 0);
	CU_ASSERT_EQUAL(fstat(ofd, &b), 0);
	CU_ASSERT_EQUAL(b.st_size, 0);          /* the new name's: untouched */
	close(rfd);
	close(ofd);
	close(fd);
	CU_ASSERT_EQUAL(sys_reopen(fd, O_RDONLY), -ENOENT);  /* closed */
	CU_ASSERT_EQUAL(sys_unlink(path), 0);
}

/* "THPeligible" of the mapping holding p in /proc/self/smaps, or -1. */
static int thp_eligible(const void *p)
{
	unsigned long lo, hi, at = (unsigned long)p;
	char line[512];
	int in = 0, v = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = at >= lo && at < hi;
		else if (in && sscanf(line, "THPeligible: %d", &v) == 1)
			break;
	}
	fclose(f);
	return v;
}

/* The THP mode of this machine: 1 when a madvise'd mapping may get huge
 * pages (enabled is [always] or [madvise]), else 0. */
static int thp_advisable(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

/* Direct-I/O buffers: aligned to a block, from SYS_HUGE on to a huge page
 * and eligible for one; whole-block buffers take a direct write and read
 * of a real file byte for byte. */
static void test_dio_alloc(void)
{
	static const size_t sizes[] = { 1, 4096, SYS_HUGE - 4096, SYS_HUGE,
					2 * SYS_HUGE + 4096 };
	char path[PATH_MAX];
	unsigned char *w, *r;
	size_t i, len;
	int fd;

	path_in_tmp(path, sizeof(path), "dio");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		len = sizes[i];
		w = sys_dio_alloc(len);
		r = sys_dio_alloc(len);
		CU_ASSERT_FATAL(w && r);
		CU_ASSERT_EQUAL((uintptr_t)w % 4096, 0);
		if (len >= SYS_HUGE) {
			CU_ASSERT_EQUAL((uintptr_t)w % SYS_HUGE, 0);
			if (thp_advisable())
				CU_ASSERT_EQUAL(thp_eligible(w), 1);
		}
		memset(w, (int)(0x40 + i), len);
		memset(r, 0, len);
		fd = sys_open(path, O_CREAT | O_TRUNC | O_RDWR | O_DIRECT |
			      O_CLOEXEC, 0600);
		if (fd == -EINVAL)      /* a file system without O_DIRECT */
			fd = sys_open(path, O_CREAT | O_TRUNC | O_RDWR |
				      O_CLOEXEC, 0600);
		CU_ASSERT_FATAL(fd >= 0);
		if (len % 4096 == 0) {
			CU_ASSERT_EQUAL(sys_pwrite_all(fd, w, len, 0), 0);
			CU_ASSERT_EQUAL(sys_pread_all(fd, r, len, 0), 0);
			CU_ASSERT_EQUAL(memcmp(w, r, len), 0);
		}
		close(fd);
		sys_dio_free(r, len);
		sys_dio_free(w, len);
	}
	CU_ASSERT_EQUAL(sys_unlink(path), 0);
}

/* Injected failures stop the real call: nothing reaches the file system. */
static void test_real_file_faults(void)
{
	char a[PATH_MAX], b[PATH_MAX], buf[4096], back[4096];
	struct stat st;
	int fd;

	memset(buf, 'x', sizeof(buf));
	path_in_tmp(a, sizeof(a), "a");
	path_in_tmp(b, sizeof(b), "b");

	CU_ASSERT_EQUAL_FATAL(sys_fault_set("open:1:EACCES"), 0);
	CU_ASSERT_EQUAL(sys_open(a, O_CREAT | O_RDWR, 0600), -EACCES);
	CU_ASSERT_EQUAL(stat(a, &st), -1);

	CU_ASSERT_EQUAL_FATAL(sys_fault_set("pwrite:2:ENOSPC,fsync:1:EIO,rename:1:EROFS,unlink:1:EPERM,fallocate:1:EDQUOT,pread:1:EIO"), 0);
	fd = sys_open(a, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(sys_fallocate(fd, 0, 4096), -EDQUOT);
	CU_ASSERT_EQUAL(sys_pwrite_all(fd, buf, 100, 0), 0);
	CU_ASSERT_EQUAL(sys_pwrite_all(fd, buf, 100, 100), -ENOSPC);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 100);
	CU_ASSERT_EQUAL(sys_fsync(fd), -EIO);
	CU_ASSERT_EQUAL(sys_fsync(fd), 0);
	CU_ASSERT_EQUAL(sys_pread_all(fd, back, 100, 0), -EIO);
	CU_ASSERT_EQUAL(sys_pread_all(fd, back, 100, 0), 0);
	CU_ASSERT_EQUAL(memcmp(back, buf, 100), 0);
	CU_ASSERT_EQUAL(close(fd), 0);

	CU_ASSERT_EQUAL(sys_rename(a, b), -EROFS);
	CU_ASSERT_EQUAL(stat(a, &st), 0);
	CU_ASSERT_EQUAL(sys_unlink(a), -EPERM);
	CU_ASSERT_EQUAL(stat(a, &st), 0);

	/* fsync_dir goes through the seam too. */
	CU_ASSERT_EQUAL_FATAL(sys_fault_set("fsync:1:EIO"), 0);
	CU_ASSERT_EQUAL(sys_fsync_dir(tmpdir), -EIO);
	CU_ASSERT_EQUAL(sys_fsync_dir(tmpdir), 0);

	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
	CU_ASSERT_EQUAL(sys_unlink(a), 0);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Delay rules parse beside errno rules; sys_inject() neither sleeps nor
 * fails for them, and sys_inject_delay() reports them from the Nth call. */
static void test_delay_parse(void)
{
	unsigned ms = 99;

	CU_ASSERT_EQUAL(sys_fault_set("fsync:1+:delay=300"), 0);
	CU_ASSERT_EQUAL(sys_fault_set("fsync:2:delay=1,pwrite:1:EIO"), 0);
	CU_ASSERT_EQUAL(sys_fault_set("open:1:delay=600000"), 0);
	CU_ASSERT_EQUAL_FATAL(
		sys_fault_set("pread:2+:delay=250,pread:4:EIO,unlink:1:EIO"), 0);
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_PREAD, &ms), 0);
	CU_ASSERT_EQUAL(ms, 0);
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_PREAD, &ms), 0);
	CU_ASSERT_EQUAL(ms, 250);
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_PREAD, &ms), 0);
	CU_ASSERT_EQUAL(ms, 250);
	/* The first matching rule applies: the delay, not the EIO. */
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_PREAD, &ms), 0);
	CU_ASSERT_EQUAL(ms, 250);
	CU_ASSERT_EQUAL(sys_inject(SYS_PREAD), 0);
	/* Errno forms are unchanged, and report no delay. */
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_UNLINK, &ms), -EIO);
	CU_ASSERT_EQUAL(ms, 0);
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_UNLINK, NULL), 0);
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_NOPS, &ms), -EINVAL);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
	CU_ASSERT_EQUAL(sys_inject_delay(SYS_PREAD, &ms), 0);
	CU_ASSERT_EQUAL(ms, 0);
}

/* fsync:2+:delay=200: the 1st fsync is prompt (not measured: no upper
 * bound), the 2nd and 3rd take at least 200 ms each and succeed; a
 * sys_inject() of the same op never sleeps (not measured either). */
static void test_delay_applies(void)
{
	char p[PATH_MAX];
	uint64_t t0;
	int fd;

	path_in_tmp(p, sizeof(p), "delay");
	fd = sys_open(p, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(sys_fault_set("fsync:2+:delay=200"), 0);
	CU_ASSERT_EQUAL(sys_fsync(fd), 0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(sys_fsync(fd), 0);
	CU_ASSERT(now_ms() - t0 >= 190);
	t0 = now_ms();
	CU_ASSERT_EQUAL(sys_pwrite_all(fd, "x", 1, 0), 0);
	CU_ASSERT_EQUAL(sys_fsync(fd), 0);
	CU_ASSERT(now_ms() - t0 >= 190);
	/* Every wrapper sleeps: one of each, 50 ms apiece. */
	CU_ASSERT_EQUAL_FATAL(sys_fault_set("open:1:delay=50,pwrite:1:delay=50,"
		"pread:1:delay=50,rename:1:delay=50,fallocate:1:delay=50,"
		"unlink:1:delay=50"), 0);
	t0 = now_ms();
	close(fd);
	fd = sys_open(p, O_RDWR | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(sys_pwrite(fd, "y", 1, 0), 1);
	{
		char c = 0;

		CU_ASSERT_EQUAL(sys_pread(fd, &c, 1, 0), 1);
		CU_ASSERT_EQUAL(c, 'y');
	}
	CU_ASSERT_EQUAL(sys_fallocate(fd, 0, 4096), 0);
	close(fd);
	{
		char q[PATH_MAX];

		path_in_tmp(q, sizeof(q), "delay2");
		CU_ASSERT_EQUAL(sys_rename(p, q), 0);
		CU_ASSERT_EQUAL(sys_unlink(q), 0);
	}
	CU_ASSERT(now_ms() - t0 >= 6 * 50 - 10);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
}

/* sys_inject_wait(): counts like sys_inject(), sleeps out a delay rule
 * (then 0) and returns an errno rule's error at once. */
static void test_inject_wait(void)
{
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(sys_fault_set("unlink:1:delay=100,unlink:2:EIO"),
			      0);
	t0 = now_ms();
	CU_ASSERT_EQUAL(sys_inject_wait(SYS_UNLINK), 0);
	CU_ASSERT(now_ms() - t0 >= 90);
	CU_ASSERT_EQUAL(sys_inject_wait(SYS_UNLINK), -EIO);
	CU_ASSERT_EQUAL(sys_inject_wait(SYS_UNLINK), 0);
	CU_ASSERT_EQUAL(sys_inject_wait(SYS_NOPS), -EINVAL);
	CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
}

static int suite_init(void)
{
	return unit_mkdtemp(tmpdir, sizeof(tmpdir), "test_sys") ? 0 : -1;
}

static int suite_clean(void)
{
	sys_fault_set(NULL);
	/* Every test removes its own files; a leftover makes this fail. */
	return rmdir(tmpdir);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "Nth call fails once", test_nth_once },
		{ "N+ fails from then on", test_nth_onwards },
		{ "several rules", test_several_rules },
		{ "bad specs rejected", test_bad_specs },
		{ "CKPT_FAULT", test_env },
		{ "op names", test_op_names },
		{ "threads count exactly", test_threads },
		{ "real file I/O", test_real_file },
		{ "real file I/O with faults", test_real_file_faults },
		{ "reopen an open file", test_reopen },
		{ "direct-I/O buffers", test_dio_alloc },
		{ "delay rules parse", test_delay_parse },
		{ "delays apply from the Nth call", test_delay_applies },
		{ "sys_inject_wait sleeps a delay", test_inject_wait },
		{ NULL, NULL }
	};

	return unit_run_suite("sys", suite_init, suite_clean, tests);
}
