/*
 * test_pfscache.c - the cache of PFS manifests that reads use
 * (server/pfs/pfscache.h), over real manifest files in a private target:
 *  - a manifest is loaded once, then found kept; every name of 3,000 is
 *    found by the index (with and without a hint), a missing one is not;
 *    another incarnation (seq, or a part's sealed_ns and uid) is refused;
 *  - a manifest renamed over, touched, or removed is loaded again (or
 *    fails), while a holder of the old one still reads it;
 *  - the budget: unheld entries go, oldest first, the most recent stays,
 *    held ones are never dropped;
 *  - four threads asking for four manifests under a budget of about one,
 *    while a fifth keeps renaming new copies over them: every answer is
 *    the incarnation asked for, and nothing leaks (ASan) or races (TSan).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "ckpt.h"
#include "pfsman.h"
#include "pfs.h"
#include "pfscache.h"
#include "pfslayout.h"

#define JOB "u/j"
#define NAMES 3000

static char dir[PATH_MAX];

static void name_of(char *buf, size_t cap, uint32_t i)
{
	/* not in index order: the index sorts them */
	snprintf(buf, cap, "d%u/f%05u", i % 7, (i * 7919u) % 100000u);
}

/* Write the manifest of JOB/version (node "" or node's part) with nfiles
 * empty files, atomically (a new inode each time). */
static void put(const char *version, const char *node, uint64_t seq,
		uint64_t sealed_ns, uint32_t nfiles)
{
	struct pfs_owner me = { geteuid(), getegid() };
	struct pfs_file *f = calloc(nfiles ? nfiles : 1, sizeof(*f));
	struct pfsman m = { .seq = seq, .sealed_ns = sealed_ns, .uid = 0,
			    .chunk = 1 << 20, .nfiles = nfiles, .files = f };
	char rel[PFS_REL_MAX], tmp[PATH_MAX + PFS_REL_MAX + 8],
	     dst[PATH_MAX + PFS_REL_MAX + 2], (*names)[32];
	size_t cap = 64 + (size_t)nfiles * 128;
	void *buf = malloc(cap);
	uint32_t i;
	long len;
	int tfd, fd;

	names = malloc((nfiles ? nfiles : 1) * sizeof(*names));
	CU_ASSERT_FATAL(f && buf && names);
	snprintf(m.job, sizeof(m.job), "%s", JOB);
	snprintf(m.version, sizeof(m.version), "%s", version);
	for (i = 0; i < nfiles; i++) {
		name_of(names[i], sizeof(names[i]), i);
		f[i].path = names[i];
	}
	len = pfsman_encode(&m, buf, cap);
	CU_ASSERT_FATAL(len > 0);
	CU_ASSERT_FATAL(pfs_path(rel, sizeof(rel), node[0] ? PFS_N_PART :
				 PFS_N_MANIFEST, JOB, version, node, 0) == 0);
	tfd = pfs_target_open(dir);
	CU_ASSERT_FATAL(tfd >= 0);
	CU_ASSERT_FATAL(pfs_mkdirs_above(tfd, rel, JOB, &me) == 0);
	close(tfd);
	snprintf(dst, sizeof(dst), "%s/%s", dir, rel);
	snprintf(tmp, sizeof(tmp), "%s.new", dst);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(write(fd, buf, len) == len);
	close(fd);
	CU_ASSERT_FATAL(rename(tmp, dst) == 0);
	free(names);
	free(buf);
	free(f);
}

#define APATH_MAX (PATH_MAX + PFS_REL_MAX + 2)

static void manifest_path(char *buf, size_t cap, const char *version)
{
	char rel[PFS_REL_MAX];

	CU_ASSERT_FATAL(pfs_path(rel, sizeof(rel), PFS_N_MANIFEST, JOB,
				 version, NULL, 0) == 0);
	snprintf(buf, cap, "%s/%s", dir, rel);
}

static struct pfsc_want want(const char *version, uint64_t seq)
{
	return (struct pfsc_want){ .job = JOB, .version = version, .node = "",
				   .by_seq = 1, .seq = seq };
}

static int setup(void)
{
	return unit_mkdtemp(dir, sizeof(dir), "test_pfscache") ? 0 : -1;
}

static int cleanup(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_load_find(void)
{
	struct pfscache *c = pfscache_new(dir, 1ull << 30);
	struct pfsc_want w = want("v1", 7);
	const struct pfsman *m;
	struct pfsc_entry *e;
	struct pfsc_stats st;
	char name[32];
	uint32_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	put("v1", "", 7, 100, NAMES);
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e), 0);
	CU_ASSERT_EQUAL(m->nfiles, NAMES);
	for (i = 0; i < NAMES; i++) {
		name_of(name, sizeof(name), i);
		CU_ASSERT_EQUAL(pfscache_find(e, name, UINT32_MAX), (int)i);
		CU_ASSERT_EQUAL(pfscache_find(e, name, i), (int)i);
		CU_ASSERT_EQUAL(pfscache_find(e, name, (i + 1) % NAMES), (int)i);
	}
	CU_ASSERT_EQUAL(pfscache_find(e, "d0/f99999x", 0), -ENOENT);
	CU_ASSERT_EQUAL(pfscache_find(e, "", UINT32_MAX), -ENOENT);
	pfscache_put(c, e);
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e), 0);
	pfscache_put(c, e);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.loads, 1);
	CU_ASSERT_EQUAL(st.hits, 1);
	CU_ASSERT_EQUAL(st.entries, 1);
	CU_ASSERT(st.bytes >= NAMES * 4u);
	/* another incarnation of the name: the entry kept is not trusted for
	 * that answer (loaded once more), and none is kept */
	w.seq = 8;
	CU_ASSERT_EQUAL(pfscache_get(c, &w, &m, &e), -CKPT_ECORRUPT);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.loads, 2);
	CU_ASSERT_EQUAL(st.entries, 0);
	w.seq = 7;
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e), 0);
	pfscache_put(c, e);
	/* a part: by sealed_ns and uid */
	put("v1", "n1", 3, 555, 2);
	w = (struct pfsc_want){ .job = JOB, .version = "v1", .node = "n1",
				.sealed_ns = 555, .uid = 0 };
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e), 0);
	CU_ASSERT_STRING_EQUAL(m->node, "n1");
	CU_ASSERT_EQUAL(m->nfiles, 2);
	pfscache_put(c, e);
	w.sealed_ns = 556;
	CU_ASSERT_EQUAL(pfscache_get(c, &w, &m, &e), -CKPT_ECORRUPT);
	w.sealed_ns = 555;
	w.uid = 1;
	CU_ASSERT_EQUAL(pfscache_get(c, &w, &m, &e), -CKPT_ECORRUPT);
	w = want("nov", 1);
	CU_ASSERT_EQUAL(pfscache_get(c, &w, &m, &e), -ENOENT);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.entries, 1);     /* v1's; the part was refused */
	pfscache_free(c);
}

static void test_stale(void)
{
	struct pfscache *c = pfscache_new(dir, 1ull << 30);
	struct pfsc_want w = want("v2", 1);
	const struct pfsman *m, *m2;
	struct pfsc_entry *e, *e2;
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };
	struct pfsc_stats st;
	char path[APATH_MAX];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	put("v2", "", 1, 1, 5);
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e), 0);
	/* renamed over while held: the holder keeps its copy */
	put("v2", "", 2, 1, 9);
	w.seq = 2;
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m2, &e2), 0);
	CU_ASSERT(e2 != e);
	CU_ASSERT_EQUAL(m2->nfiles, 9);
	CU_ASSERT_EQUAL(m->seq, 1);
	CU_ASSERT_EQUAL(m->nfiles, 5);
	pfscache_put(c, e);
	pfscache_put(c, e2);
	w.seq = 1;
	CU_ASSERT_EQUAL(pfscache_get(c, &w, &m, &e), -CKPT_ECORRUPT);
	/* touched in place: loaded again */
	manifest_path(path, sizeof(path), "v2");
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, ts, 0), 0);
	w.seq = 2;
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e), 0);
	pfscache_put(c, e);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.loads, 4);   /* seq 1 refused after a reload */
	CU_ASSERT_EQUAL(st.entries, 1);
	/* removed: no read from memory */
	CU_ASSERT_EQUAL(unlink(path), 0);
	CU_ASSERT_EQUAL(pfscache_get(c, &w, &m, &e), -ENOENT);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.entries, 0);
	CU_ASSERT_EQUAL(st.bytes, 0);
	pfscache_free(c);
}

static void test_budget(void)
{
	struct pfscache *c = pfscache_new(dir, 1);
	const char *vs[3] = { "b1", "b2", "b3" };
	struct pfsc_entry *e[3];
	const struct pfsman *m;
	struct pfsc_stats st;
	struct pfsc_want w;
	int i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	for (i = 0; i < 3; i++)
		put(vs[i], "", 10 + i, 1, 3);
	for (i = 0; i < 3; i++) {           /* held: all stay */
		w = want(vs[i], 10 + i);
		CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e[i]), 0);
	}
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.entries, 3);
	for (i = 0; i < 3; i++)
		pfscache_put(c, e[i]);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.entries, 1);     /* the most recent stays */
	w = want("b3", 12);
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e[0]), 0);
	pfscache_put(c, e[0]);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.loads, 3);       /* b3 was the one kept */
	w = want("b1", 10);
	CU_ASSERT_EQUAL_FATAL(pfscache_get(c, &w, &m, &e[0]), 0);
	pfscache_put(c, e[0]);
	pfscache_stats(c, &st);
	CU_ASSERT_EQUAL(st.loads, 4);
	CU_ASSERT_EQUAL(st.entries, 1);
	pfscache_free(c);
}

/* ---- threads ---------------------------------------------------------------- */

#define TV 4
#define TITER 1500

struct run {
	struct pfscache *c;
	unsigned seed;
	int *stop;              /* atomic */
	int bad;
};

static void *asker(void *arg)
{
	struct run *r = arg;
	const struct pfsman *m;
	struct pfsc_entry *e;
	struct pfsc_want w;
	char v[8], name[32];
	unsigned i, k;
	int ret;

	for (i = 0; i < TITER; i++) {
		k = rand_r(&r->seed) % TV;
		snprintf(v, sizeof(v), "t%u", k);
		w = want(v, 100 + k);
		ret = pfscache_get(r->c, &w, &m, &e);
		if (ret < 0 || m->seq != 100 + k || m->nfiles != 50 + k) {
			r->bad++;
			if (ret == 0)
				pfscache_put(r->c, e);
			continue;
		}
		name_of(name, sizeof(name), rand_r(&r->seed) % m->nfiles);
		if (pfscache_find(e, name, UINT32_MAX) < 0)
			r->bad++;
		pfscache_put(r->c, e);
	}
	return NULL;
}

static void *replacer(void *arg)
{
	struct run *r = arg;
	char v[8];
	unsigned k;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		k = rand_r(&r->seed) % TV;
		snprintf(v, sizeof(v), "t%u", k);
		put(v, "", 100 + k, 1, 50 + k);
	}
	return NULL;
}

static void test_threads(void)
{
	struct pfscache *c;
	struct run runs[5];
	pthread_t th[5];
	int stop = 0;
	struct pfsc_stats st;
	char v[8];
	unsigned k;
	int i;

	for (k = 0; k < TV; k++) {
		snprintf(v, sizeof(v), "t%u", k);
		put(v, "", 100 + k, 1, 50 + k);
	}
	c = pfscache_new(dir, 4000);       /* about one of them */
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	for (i = 0; i < 5; i++) {
		runs[i] = (struct run){ .c = c, .seed = 17u + i, .stop = &stop };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL,
						     i < 4 ? asker : replacer,
						     &runs[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(th[4], NULL);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(runs[i].bad, 0);
	pfscache_stats(c, &st);
	CU_ASSERT(st.entries >= 1 && st.entries <= TV);
	CU_ASSERT(st.loads + st.hits >= 4 * TITER / 2);
	pfscache_free(c);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "load_find", test_load_find },
		{ "stale", test_stale },
		{ "budget", test_budget },
		{ "threads", test_threads },
		{ NULL, NULL }
	};

	return unit_run_suite("pfscache", setup, cleanup, tests);
}
