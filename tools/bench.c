/*
 * bench.c - `ckptctl bench`: the two data-path ratios of the design brief,
 * measured side by side in one run against a running ckptd.
 *
 * (a) Trainer stall.  One process times memcpy() of S bytes between two
 *     pre-faulted buffers, then ckpt_write() of the same S bytes in 64 MiB
 *     calls into a fresh version; best of 3 each.  Between write runs the
 *     version is committed and waited to LOCAL, untimed, so that every run
 *     starts with free staging.  Target: stall/memcpy <= 1.3.
 *
 * (b) Burst to LOCAL.  N forked writers write S bytes each into one
 *     version, released together by a barrier; the parent times release to
 *     LOCAL (bench_burst.c).  fio then writes N x S bytes with io_uring and
 *     O_DIRECT into a directory on the store's disk (bench_fio.c).
 *     Target: fio_time / ckpt_time >= 0.9.
 *
 * Everything the run creates is removed at the end: its versions and fio's
 * files.  The report is a plain table, or one JSON object with --json.  The
 * ratios are reported, not enforced: this is a benchmark, not a test.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_fio.h"
#include "conf.h"
#include "ctl.h"

#define STALL_PIECE   (64u << 20)
#define STALL_RUNS    3

/* Fill buf with xorshift64* output: incompressible, cheap, reproducible. */
void bench_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1, *p = buf;
	size_t i, n = len / 8;
	unsigned char *tail = (unsigned char *)buf + n * 8;

	for (i = 0; i < n; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		p[i] = x * 0x2545f4914f6cdd1dull;
	}
	for (i = 0; i < len % 8; i++)
		tail[i] = (unsigned char)(x >> (i * 8));
}

/* Anonymous memory with every page already faulted in. */
void *bench_map_prefault(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len); /* MAP_POPULATE may map the zero page read-only */
	return p;
}

static int cmp_ns(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t bench_median(const uint64_t *ns, int n)
{
	uint64_t v[BENCH_WRITERS_MAX];

	if (n <= 0 || n > BENCH_WRITERS_MAX)
		return 0;
	memcpy(v, ns, sizeof(*v) * (size_t)n);
	qsort(v, (size_t)n, sizeof(*v), cmp_ns);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t bench_max(const uint64_t *ns, int n)
{
	uint64_t m = 0;
	int i;

	for (i = 0; i < n; i++)
		if (ns[i] > m)
			m = ns[i];
	return m;
}

int bench_track(struct bench *b, const char *version)
{
	if (b->nnames >= BENCH_MAX_NAMES)
		return -ENOSPC;
	snprintf(b->names[b->nnames++], CKPT_VERSION_MAX + 1, "%s", version);
	return 0;
}

/* Write S bytes from src as one version in 64 MiB calls; the time of the
 * calls alone goes to *ns.  Commit and LOCAL are waited for, untimed. */
static int stall_once(struct bench *b, struct ckpt_client *c, const void *src,
		      int run, uint64_t *ns)
{
	const char *p = src;
	struct ckpt_version *v = NULL;
	char version[64];
	uint64_t off, t0;
	size_t len;
	int err;

	snprintf(version, sizeof(version), "stall-%ld-%d", (long)getpid(), run);
	err = ckpt_begin(c, b->job, version, &v);
	if (err)
		return ctl_fail(err, "bench: begin %s/%s", b->job, version);
	bench_track(b, version);
	t0 = ctl_now_ns();
	for (off = 0; off < b->size && !err; off += len) {
		len = b->size - off < STALL_PIECE ? (size_t)(b->size - off) :
						     STALL_PIECE;
		err = ckpt_write(v, "stall.bin", p + off, len, off);
	}
	*ns = ctl_now_ns() - t0;
	if (err) {
		ctl_fail(err, "bench: ckpt_write %s/%s", b->job, version);
		goto out_free;
	}
	err = ckpt_commit(v);
	if (err) {
		ctl_fail(err, "bench: commit %s/%s", b->job, version);
		goto out_free;
	}
	err = ckpt_wait(v, CKPT_LOCAL, BENCH_WAIT_MS);
	if (err)
		ctl_fail(err, "bench: wait %s/%s LOCAL", b->job, version);
out_free:
	ckpt_version_free(v);
	return err ? CTL_EXIT_FAIL : 0;
}

/* (a): memcpy against ckpt_write of the same bytes, best of STALL_RUNS. */
static int bench_stall(struct bench *b, struct ckpt_client *c)
{
	size_t len = (size_t)b->size;
	uint64_t t0, ns;
	void *src, *dst;
	int i, rc = CTL_EXIT_FAIL;

	src = bench_map_prefault(len);
	dst = bench_map_prefault(len);
	if (!src || !dst) {
		ctl_fail(-ENOMEM, "bench: map 2 x %" PRIu64 " bytes", b->size);
		goto out_unmap;
	}
	bench_fill(src, len, 42);
	/* The lease is taken once, at start-up, as a trainer would. */
	i = ckpt_staging(c, NULL);
	if (i) {
		ctl_fail(i, "bench: staging lease");
		goto out_unmap;
	}
	b->memcpy_ns = b->write_ns = UINT64_MAX;
	for (i = 0; i < STALL_RUNS; i++) {
		t0 = ctl_now_ns();
		memcpy(dst, src, len);
		__asm__ __volatile__("" : : "r"(dst) : "memory");
		ns = ctl_now_ns() - t0;
		if (ns < b->memcpy_ns)
			b->memcpy_ns = ns;
	}
	b->buf_max = ckpt_buf_max(c);
	for (i = 0; i < STALL_RUNS; i++) {
		if (stall_once(b, c, src, i, &ns))
			goto out_unmap;
		if (ns < b->write_ns)
			b->write_ns = ns;
	}
	rc = 0;
out_unmap:
	if (src)
		munmap(src, len);
	if (dst)
		munmap(dst, len);
	return rc;
}

/* Where fio writes: --dir, else <store>/../bench-fio, created if missing. */
static int bench_fio_dir(struct bench *b, const char *store)
{
	struct stat st, sst;
	char *slash;

	if (b->dir) {
		snprintf(b->fio_dir, sizeof(b->fio_dir), "%s", b->dir);
	} else {
		if (store[0] != '/')
			return ctl_failx("bench: ckptd's store is '%s'; name a directory on its disk with --dir",
					 store);
		snprintf(b->fio_dir, sizeof(b->fio_dir), "%s", store);
		while ((slash = strrchr(b->fio_dir, '/')) && slash[1] == '\0' &&
		       slash != b->fio_dir)
			*slash = '\0';
		slash = strrchr(b->fio_dir, '/');
		snprintf(slash + 1, sizeof(b->fio_dir) - (size_t)(slash + 1 - b->fio_dir),
			 "bench-fio");
	}
	if (mkdir(b->fio_dir, 0755) == 0)
		b->dir_created = 1;
	else if (errno != EEXIST)
		return ctl_fail(-errno, "bench: create %s (use --dir)", b->fio_dir);
	if (stat(b->fio_dir, &st) || !S_ISDIR(st.st_mode))
		return ctl_failx("bench: %s is not a directory", b->fio_dir);
	/* The comparison is only fair on the same disk; say so if it is not. */
	b->other_dev = stat(store, &sst) == 0 && sst.st_dev != st.st_dev;
	return 0;
}

/* (b), fio side: `passes` runs over the same files, the last one kept.  A
 * missing or failing fio is reported, not fatal. */
static void bench_fio(struct bench *b, int passes)
{
	int i, err = 0;

	if (!fio_available()) {
		b->fio_state = BENCH_FIO_MISSING;
		return;
	}
	for (i = 0; i < passes && !err; i++)
		err = fio_burst(b->fio_dir, b->procs, b->size, &b->fio);
	b->fio_state = err ? BENCH_FIO_FAILED : BENCH_FIO_OK;
	err = fio_cleanup(b->fio_dir, b->procs);
	if (err)
		ctl_fail(err, "bench: delete fio's files in %s", b->fio_dir);
}

/* Remove what the run created; failures are warnings, not errors. */
static void bench_cleanup(struct bench *b, struct ckpt_client *c)
{
	int i, err;

	for (i = 0; c && i < b->nnames; i++) {
		err = ckpt_remove(c, b->job, b->names[i]);
		if (err && err != -CKPT_ENOJOB && err != -CKPT_ENOVERSION)
			ctl_fail(err, "bench: warning: remove %s/%s", b->job,
				 b->names[i]);
	}
	if (b->dir_created && rmdir(b->fio_dir))
		ctl_fail(-errno, "bench: warning: remove %s", b->fio_dir);
}

static int bench_args(struct bench *b, int argc, char **argv, int *json)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "procs", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "job", required_argument, NULL, 'j' },
		{ "mode", required_argument, NULL, 'm' },
		{ "first", required_argument, NULL, 'f' },
		CTL_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	long n;
	int opt;

	while ((opt = getopt_long(argc, argv, "d:n:s:j:m:f:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			b->dir = optarg;
			break;
		case 'n':
			n = strtol(optarg, &end, 10);
			if (*end || end == optarg || n < 1 || n > 1024)
				return ctl_usage("bench: --procs wants 1..1024");
			b->procs = (int)n;
			break;
		case 's':
			if (conf_parse_size(optarg, &b->size) || b->size == 0 ||
			    b->size > ((uint64_t)1 << 40))
				return ctl_usage("bench: bad --size '%s'", optarg);
			break;
		case 'j':
			b->job = optarg;
			break;
		case 'm':
			if (!strcmp(optarg, "all"))
				b->mode = BENCH_MODE_ALL;
			else if (!strcmp(optarg, "writers"))
				b->mode = BENCH_MODE_WRITERS;
			else if (!strcmp(optarg, "burst"))
				b->mode = BENCH_MODE_BURST;
			else
				return ctl_usage("bench: --mode wants all, writers or burst");
			break;
		case 'f':
			if (strcmp(optarg, "writes") && strcmp(optarg, "memcpy"))
				return ctl_usage("bench: --first wants writes or memcpy");
			b->writes_first = !strcmp(optarg, "writes");
			break;
		case CTL_OPT_JSON:
			*json = 1;
			break;
		case 'h':
			return ctl_help();
		default:
			return ctl_usage("bench: bad option");
		}
	}
	if (optind != argc)
		return ctl_usage("bench: unexpected argument '%s'", argv[optind]);
	if (b->mode == BENCH_MODE_WRITERS && b->procs > BENCH_WRITERS_MAX)
		return ctl_usage("bench: --mode writers takes at most %d --procs",
				 BENCH_WRITERS_MAX);
	return -1;
}

/* (b) on recycled segments against fio's second pass: a first burst whose
 * version is then removed (its segments go back to ckptd's free list), the
 * timed burst into those segments; fio twice over the same files, the
 * second pass timed (it too overwrites allocated extents). */
static int bench_burst_recycled(struct bench *b, struct ckpt_client *c)
{
	int rc, err;

	rc = bench_burst(b, c);
	if (rc)
		return rc;
	err = ckpt_remove(c, b->job, b->burst_version);
	if (err)
		return ctl_fail(err, "bench: remove %s/%s", b->job,
				b->burst_version);
	rc = bench_burst(b, c);
	if (!rc)
		bench_fio(b, 2);
	return rc;
}

/* Per mode: what the writers write unless told, and in what calls. */
static void bench_defaults(struct bench *b)
{
	int writers = b->mode == BENCH_MODE_WRITERS;

	if (!b->procs)
		b->procs = writers ? 4 : 8;
	if (!b->size)
		b->size = writers ? 256u << 20 : 128u << 20;
	b->piece = writers ? STALL_PIECE : 8u << 20;
	b->stall_mode = writers;
}

int cmd_bench(struct ctl *ctl, int argc, char **argv)
{
	struct bench b = { .job = "bench" };
	struct ckpt_status st;
	int rc, err;

	rc = bench_args(&b, argc, argv, &ctl->json);
	if (rc >= 0)
		return rc;
	bench_defaults(&b);
	b.socket = ctl->socket;
	snprintf(b.user_lease, sizeof(b.user_lease), "%s",
		 getenv("CKPT_STAGING") ? getenv("CKPT_STAGING") : "");
	/* (a) runs on a connection with the same lease a trainer gets. */
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	err = ckpt_status(ctl->c, &st);
	if (err)
		return ctl_fail(err, "bench: status");
	b.daemon_pid = st.pid;
	snprintf(b.store, sizeof(b.store), "%s", st.store);
	if (b.mode != BENCH_MODE_WRITERS && fio_available() &&
	    bench_fio_dir(&b, st.store))
		return CTL_EXIT_FAIL;

	rc = b.mode == BENCH_MODE_ALL ? bench_stall(&b, ctl->c) : 0;
	/* Hand the big lease back; the parent of (b) and (c) only waits. */
	ckpt_disconnect(ctl->c);
	ctl->c = NULL;
	if (setenv("CKPT_STAGING", CTL_LEASE, 1) || ctl_connect(ctl))
		rc = CTL_EXIT_FAIL;
	if (!rc && b.mode == BENCH_MODE_BURST)
		rc = bench_burst_recycled(&b, ctl->c);
	else if (!rc)
		rc = bench_burst(&b, ctl->c);
	if (!rc && b.mode == BENCH_MODE_ALL)
		bench_fio(&b, 1);
	bench_cleanup(&b, ctl->c);
	if (!rc)
		bench_report(&b, ctl->json);
	return rc;
}
