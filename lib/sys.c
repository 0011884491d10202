/*
 * sys.c - the system-call seam, after SQLite's test_syscall.c.
 *
 * Code that must survive I/O errors (the chunk store, the drain, manifest
 * writes) reaches the file system only through the sys_* wrappers below.
 * Each wrapper first asks sys_inject() whether this call should fail, and only
 * then makes the real call, so a test can make "the 3rd pwrite" or "every
 * fsync from the 2nd on" fail with a chosen errno without touching the code
 * under test.
 *
 * The plan is a short list of rules (operation, call number, once or from then
 * on, errno or delay) plus a call counter per operation.  Installing a plan resets the
 * counters, so call numbers count from the moment the plan is set.  A mutex
 * guards the plan and the counters; the common case, no plan at all, is one
 * relaxed atomic load and takes no lock.
 *
 * A delay rule makes the call late, not wrong: the wrappers sleep (outside
 * the lock, on CLOCK_MONOTONIC) and then make the real call.  sys_inject()
 * never sleeps, because the io_uring paths call it on the loop thread; it
 * reports the delay only to callers that ask (sys_inject_delay()).
 *
 * All wrappers return >= 0 or -errno and never leave a result in errno alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

/* Most rules one plan may hold; CKPT_FAULT is written by hand. */
#define SYS_MAX_RULES 16
/* Longest call number accepted; 18 decimal digits cannot overflow 64 bits. */
#define SYS_NTH_DIGITS 18
/* Longest delay accepted, in ms: a test that wants more wants a hang. */
#define SYS_DELAY_MAX 600000u

struct sys_rule {
	enum sys_op op;
	uint64_t nth;          /* 1-based call number that fails first */
	int repeat;            /* 1: nth and every later call fail */
	int err;               /* positive errno returned (negated), or 0 */
	unsigned delay_ms;     /* err == 0: the call is this late, then runs */
};

struct sys_plan {
	struct sys_rule rules[SYS_MAX_RULES];
	int nrules;
};

static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sys_plan sys_plan;                   /* under sys_lock */
static uint64_t sys_calls[SYS_NOPS];               /* under sys_lock */
static atomic_int sys_armed;                       /* sys_plan.nrules > 0 */

static const char *const sys_op_names[SYS_NOPS] = {
	[SYS_OPEN] = "open",
	[SYS_PWRITE] = "pwrite",
	[SYS_PREAD] = "pread",
	[SYS_FSYNC] = "fsync",
	[SYS_RENAME] = "rename",
	[SYS_FALLOCATE] = "fallocate",
	[SYS_UNLINK] = "unlink",
	[SYS_LINK] = "link",
};

static const struct {
	const char *name;
	int err;
} sys_errnos[] = {
	{ "EIO", EIO },         { "ENOSPC", ENOSPC }, { "EROFS", EROFS },
	{ "EDQUOT", EDQUOT },   { "ENOMEM", ENOMEM }, { "EACCES", EACCES },
	{ "EPERM", EPERM },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *sys_op_name(enum sys_op op)
{
	if ((unsigned)op >= SYS_NOPS)
		return "unknown";
	return sys_op_names[op];
}

/* The operation named by the len bytes at s, or -EINVAL. */
static int sys_parse_op(const char *s, size_t len)
{
	int i;

	for (i = 0; i < SYS_NOPS; i++)
		if (strlen(sys_op_names[i]) == len &&
		    !memcmp(s, sys_op_names[i], len))
			return i;
	return -EINVAL;
}

/* The errno named by the len bytes at s, or -EINVAL. */
static int sys_parse_errno(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sys_errnos); i++)
		if (strlen(sys_errnos[i].name) == len &&
		    !memcmp(s, sys_errnos[i].name, len))
			return sys_errnos[i].err;
	return -EINVAL;
}

/* "delay=MS" in the len bytes at s, 1 <= MS <= SYS_DELAY_MAX, plain
 * decimal; the delay in ms, or -EINVAL. */
static int sys_parse_delay(const char *s, size_t len)
{
	static const char pfx[] = "delay=";
	unsigned ms = 0;
	size_t i;

	if (len <= sizeof(pfx) - 1 || memcmp(s, pfx, sizeof(pfx) - 1))
		return -EINVAL;
	for (i = sizeof(pfx) - 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		ms = ms * 10 + (unsigned)(s[i] - '0');
		if (ms > SYS_DELAY_MAX)
			return -EINVAL;
	}
	return ms ? (int)ms : -EINVAL;
}

/*
 * "N" or "N+" in the len bytes at s, N >= 1 in plain decimal.  Digits are
 * checked by hand because strtoul() accepts signs and leading blanks.
 */
static int sys_parse_nth(const char *s, size_t len, struct sys_rule *r)
{
	uint64_t n = 0;
	size_t i;

	r->repeat = len > 0 && s[len - 1] == '+';
	if (r->repeat)
		len--;
	if (len == 0 || len > SYS_NTH_DIGITS)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		n = n * 10 + (uint64_t)(s[i] - '0');
	}
	if (n == 0)
		return -EINVAL;
	r->nth = n;
	return 0;
}

/* One "op:N[+]:ERRNO" or "op:N[+]:delay=MS" rule in the len bytes at s. */
static int sys_parse_rule(const char *s, size_t len, struct sys_rule *r)
{
	const char *end = s + len;
	const char *c1, *c2;
	int ret;

	c1 = memchr(s, ':', len);
	if (!c1)
		return -EINVAL;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2)
		return -EINVAL;

	ret = sys_parse_op(s, (size_t)(c1 - s));
	if (ret < 0)
		return ret;
	r->op = ret;
	ret = sys_parse_nth(c1 + 1, (size_t)(c2 - c1 - 1), r);
	if (ret < 0)
		return ret;
	r->err = 0;
	r->delay_ms = 0;
	ret = sys_parse_errno(c2 + 1, (size_t)(end - c2 - 1));
	if (ret > 0) {
		r->err = ret;
		return 0;
	}
	ret = sys_parse_delay(c2 + 1, (size_t)(end - c2 - 1));
	if (ret < 0)
		return ret;
	r->delay_ms = (unsigned)ret;
	return 0;
}

/* Parse a whole comma-separated spec into *plan. */
static int sys_parse_plan(const char *spec, struct sys_plan *plan)
{
	const char *s = spec;
	const char *comma;
	size_t len;
	int ret;

	memset(plan, 0, sizeof(*plan));
	while (*s) {
		if (plan->nrules == SYS_MAX_RULES)
			return -EINVAL;
		comma = strchr(s, ',');
		len = comma ? (size_t)(comma - s) : strlen(s);
		ret = sys_parse_rule(s, len, &plan->rules[plan->nrules]);
		if (ret < 0)
			return ret;
		plan->nrules++;
		if (!comma)
			break;
		s = comma + 1;
		if (!*s)
			return -EINVAL;        /* trailing comma */
	}
	return 0;
}

/* Replace the plan and reset the counters; a bad spec changes nothing. */
int sys_fault_set(const char *spec)
{
	struct sys_plan plan;
	int ret;

	if (!spec)
		spec = "";
	ret = sys_parse_plan(spec, &plan);
	if (ret < 0)
		return ret;

	pthread_mutex_lock(&sys_lock);
	sys_plan = plan;
	memset(sys_calls, 0, sizeof(sys_calls));
	atomic_store(&sys_armed, plan.nrules > 0);
	pthread_mutex_unlock(&sys_lock);
	return 0;
}

int sys_fault_init(void)
{
	return sys_fault_set(getenv("CKPT_FAULT"));
}

/* Count one call of op and apply the first rule that matches it. */
int sys_inject_delay(enum sys_op op, unsigned *delay_ms)
{
	unsigned delay = 0;
	uint64_t n;
	int ret = 0;
	int i;

	if (delay_ms)
		*delay_ms = 0;
	if ((unsigned)op >= SYS_NOPS)
		return -EINVAL;
	if (!atomic_load_explicit(&sys_armed, memory_order_relaxed))
		return 0;

	pthread_mutex_lock(&sys_lock);
	n = ++sys_calls[op];
	for (i = 0; i < sys_plan.nrules; i++) {
		const struct sys_rule *r = &sys_plan.rules[i];

		if (r->op != op)
			continue;
		if (n == r->nth || (r->repeat && n > r->nth)) {
			ret = -r->err;
			delay = r->delay_ms;
			break;
		}
	}
	pthread_mutex_unlock(&sys_lock);
	if (delay_ms)
		*delay_ms = delay;
	return ret;
}

int sys_inject(enum sys_op op)
{
	return sys_inject_delay(op, NULL);
}

/* Sleep ms on CLOCK_MONOTONIC, to the end even if signals interrupt it. */
static void sys_sleep_ms(unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) ==
	       EINTR)
		;
}

/* What the wrappers ask: sys_inject(), sleeping out a delay rule. */
static int sys_check(enum sys_op op)
{
	unsigned ms;
	int ret;

	ret = sys_inject_delay(op, &ms);
	if (ret == 0 && ms)
		sys_sleep_ms(ms);
	return ret;
}

int sys_inject_wait(enum sys_op op)
{
	return sys_check(op);
}

int sys_open(const char *path, int flags, mode_t mode)
{
	int ret = sys_check(SYS_OPEN);
	int fd;

	if (ret < 0)
		return ret;
	do {
		fd = open(path, flags, mode);
	} while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

int sys_reopen(int fd, int flags)
{
	char path[32];
	int nfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	do {
		nfd = open(path, (flags & ~O_CREAT) | O_CLOEXEC);
	} while (nfd < 0 && errno == EINTR);
	return nfd < 0 ? -errno : nfd;
}

/* A direct-I/O buffer's length as mapped: whole pages. */
static size_t dio_len(size_t len)
{
	return (len + 4095) & ~(size_t)4095;
}

void *sys_dio_alloc(size_t len)
{
	size_t map, head, want = dio_len(len);
	uint8_t *p;
	void *q;

	if (len < SYS_HUGE)
		return posix_memalign(&q, 4096, len ? len : 1) ? NULL : q;
	/* Its own mapping, trimmed to a 2 MiB boundary: the advice ends
	 * with the buffer (glibc's heap would keep it for later small
	 * allocations). */
	map = want + SYS_HUGE;
	p = mmap(NULL, map, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (SYS_HUGE - (uintptr_t)p % SYS_HUGE) % SYS_HUGE;
	if (head)
		munmap(p, head);
	if (map - head > want)
		munmap(p + head + want, map - head - want);
	p += head;
	(void)madvise(p, want, MADV_HUGEPAGE);
	return p;
}

void sys_dio_free(void *buf, size_t len)
{
	if (!buf)
		return;
	if (len < SYS_HUGE)
		free(buf);
	else
		munmap(buf, dio_len(len));
}

int sys_dio_fit(void **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	sys_dio_free(*buf, *cap);
	*cap = 0;
	*buf = sys_dio_alloc(need);
	if (!*buf)
		return -ENOMEM;
	*cap = need;
	return 0;
}

ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	int ret = sys_check(SYS_PWRITE);
	ssize_t n;

	if (ret < 0)
		return ret;
	do {
		n = pwrite(fd, buf, len, off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

ssize_t sys_pread(int fd, void *buf, size_t len, off_t off)
{
	int ret = sys_check(SYS_PREAD);
	ssize_t n;

	if (ret < 0)
		return ret;
	do {
		n = pread(fd, buf, len, off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int sys_fsync(int fd)
{
	int ret = sys_check(SYS_FSYNC);

	if (ret < 0)
		return ret;
	do {
		ret = fsync(fd);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int sys_rename(const char *from, const char *to)
{
	int ret = sys_check(SYS_RENAME);

	if (ret < 0)
		return ret;
	return rename(from, to) < 0 ? -errno : 0;
}

int sys_fallocate(int fd, off_t off, off_t len)
{
	int ret = sys_check(SYS_FALLOCATE);

	if (ret < 0)
		return ret;
	do {
		ret = fallocate(fd, 0, off, len);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int sys_unlink(const char *path)
{
	int ret = sys_check(SYS_UNLINK);

	if (ret < 0)
		return ret;
	return unlink(path) < 0 ? -errno : 0;
}

/*
 * Each pass goes through sys_pwrite(), so a plan sees every underlying call.
 * A zero-byte write would loop for ever; report it as -EIO.  The loop is
 * shared with sys_pread_all(): io is sys_pwrite or sys_pread.
 */
static int sys_io_all(ssize_t (*io)(int, void *, size_t, off_t), int fd,
		      char *p, size_t len, off_t off)
{
	ssize_t n;

	while (len > 0) {
		n = io(fd, p, len, off);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		p += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

static ssize_t pwrite_io(int fd, void *buf, size_t len, off_t off)
{
	return sys_pwrite(fd, buf, len, off);
}

int sys_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	return sys_io_all(pwrite_io, fd, (char *)buf, len, off);
}

/* As sys_pwrite_all(); end of file before len bytes is -EIO. */
int sys_pread_all(int fd, void *buf, size_t len, off_t off)
{
	return sys_io_all(sys_pread, fd, buf, len, off);
}

/*
 * Make a rename or create in dir durable.  Both steps go through the seam, so
 * "fsync:N:EIO" also hits directory syncs.
 */
int sys_write_file(const char *path, const void *buf, size_t len,
		   mode_t mode)
{
	int fd, ret;

	fd = sys_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return fd;
	ret = sys_pwrite_all(fd, buf, len, 0);
	if (ret == 0)
		ret = sys_fsync(fd);
	close(fd);
	return ret;
}

int sys_fsync_dir(const char *dir)
{
	int fd, ret;

	fd = sys_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	ret = sys_fsync(fd);
	close(fd);
	return ret;
}
