/*
 * test_vstats.c - per-version writer stalls (server/store/vstats.c): nearest-rank
 * p50 and p99, the slowest writer, the straggler rule (over factor x the
 * median and at least VSTATS_STRAGGLER_MIN_NS) and its bounded log lines,
 * and a version with no reports.
 */
#include <string.h>

#include "unit.h"

#include "catalog.h"
#include "log.h"
#include "vstats.h"

#define MS 1000000ull

static unsigned nlines;
static char last[512];

static void sink(int level, const char *msg, void *arg)
{
	nlines++;
	snprintf(last, sizeof(last), "%s", msg);
}

/* A version with stalls ms[0..n-1] (ms), pids 100.., ranks 0.. */
static void make(struct version *v, const unsigned *ms, unsigned n)
{
	unsigned i;

	memset(v, 0, sizeof(*v));
	strcpy(v->name, "v1");
	for (i = 0; i < n; i++) {
		struct vstall s = { .stall_ns = ms[i] * MS, .pid = 100 + i,
				    .rank = (int32_t)i };

		vstats_stall(v, &s);
	}
}

static void test_sums(void)
{
	static const unsigned ms[] = { 5, 1, 9, 3, 7, 2, 8, 4, 6, 10 };
	struct ckpt_version_info info;
	struct vstall_sum sum;
	struct version v;

	make(&v, ms, 10);
	vstats_sum(&v, &sum);
	CU_ASSERT_EQUAL(sum.n, 10);
	CU_ASSERT_EQUAL(sum.p50_ns, 5 * MS);    /* the 5th of 10 */
	CU_ASSERT_EQUAL(sum.p99_ns, 10 * MS);   /* the 10th */
	CU_ASSERT_EQUAL(sum.max_ns, 10 * MS);
	CU_ASSERT_EQUAL(sum.slowest.pid, 109);
	CU_ASSERT_EQUAL(sum.slowest.rank, 9);
	memset(&info, 0xff, sizeof(info));
	vstats_info(&v, &info);
	CU_ASSERT_EQUAL(info.stall_writers, 10);
	CU_ASSERT_EQUAL(info.stall_p50_ns, 5 * MS);
	CU_ASSERT_EQUAL(info.slow_pid, 109);
	CU_ASSERT_EQUAL(info.slow_rank, 9);
	CU_ASSERT(strlen(info.slow_host) <= CKPT_HOST_MAX);
	vstats_free(&v);
	CU_ASSERT_PTR_NULL(v.vstats);
	vstats_free(&v);                        /* twice is harmless */
}

static void test_none(void)
{
	struct ckpt_version_info info;
	struct vstall_sum sum;
	struct version v;

	make(&v, NULL, 0);
	vstats_sum(&v, &sum);
	CU_ASSERT_EQUAL(sum.n, 0);
	CU_ASSERT_EQUAL(sum.slowest.rank, -1);
	memset(&info, 0xff, sizeof(info));
	vstats_info(&v, &info);
	CU_ASSERT_EQUAL(info.stall_writers, 0);
	CU_ASSERT_EQUAL(info.slow_pid, 0);
	CU_ASSERT_EQUAL(info.slow_rank, -1);
	CU_ASSERT_EQUAL(info.slow_host[0], '\0');
	CU_ASSERT_EQUAL(vstats_commit_ms(&v), 0);
	vstats_sealing(&v, 1234);
	CU_ASSERT_EQUAL(vstats_commit_ms(&v), 1234);
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 4), 0);
	vstats_free(&v);
}

static void test_stragglers(void)
{
	static const unsigned one[] = { 10, 11, 12, 9, 200 };
	static const unsigned small[] = { 1, 1, 1, 9 };  /* 9x, but < 10 ms */
	static const unsigned equal[] = { 50, 50, 50, 50 };
	unsigned many[40], i;
	struct version v;

	log_set_sink(sink, NULL);
	nlines = 0;
	make(&v, one, 5);
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 4), 1);
	CU_ASSERT_EQUAL(nlines, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(last, "straggler: pid 104 rank 4 stalled 0.200 s"));
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 0), 0);   /* off */
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 100), 0); /* 200 < 100 x 11 */
	vstats_free(&v);

	make(&v, small, 4);
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 4), 0);
	vstats_free(&v);
	make(&v, equal, 4);
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 1), 0);   /* not over */
	vstats_free(&v);

	/* 20 fast, 20 slow: the median is fast; 20 stragglers, 8 lines and
	 * one that counts the rest. */
	for (i = 0; i < 40; i++)
		many[i] = i < 20 ? 10 : 1000;
	make(&v, many, 40);
	nlines = 0;
	CU_ASSERT_EQUAL(vstats_stragglers(&v, 4), 20);
	CU_ASSERT_EQUAL(nlines, VSTATS_STRAGGLER_LOG_MAX + 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(last, "12 more stragglers not logged"));
	vstats_free(&v);
	log_set_sink(NULL, NULL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "sums", test_sums },
		{ "none", test_none },
		{ "stragglers", test_stragglers },
		{ NULL, NULL }
	};

	return unit_run("vstats", tests);
}
