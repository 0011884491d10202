/*
 * test_err.c - ckpt_strerror() over errno values, the CKPT_E* range and
 * junk; the names of levels and states; ckpt_level_parse().
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "unit.h"

#include "ckpt.h"

static void test_strerror_errno(void)
{
	const char *a = ckpt_strerror(-ENOENT);
	const char *b;

	CU_ASSERT_STRING_EQUAL(a, "No such file or directory");
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(ENOENT), a);
	b = ckpt_strerror(-EIO);
	CU_ASSERT_STRING_EQUAL(b, "Input/output error");
	/* No shared buffer: the first message is unchanged. */
	CU_ASSERT_STRING_EQUAL(a, "No such file or directory");
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(-ENOSPC),
			       "No space left on device");
	CU_ASSERT_PTR_NOT_NULL(ckpt_strerror(0));
}

static void test_strerror_ckpt(void)
{
	const char *seen[CKPT_ELAST - CKPT_EFIRST + 1];
	int e, i;

	for (e = CKPT_EFIRST; e <= CKPT_ELAST; e++) {
		const char *m = ckpt_strerror(-e);

		CU_ASSERT_PTR_NOT_NULL_FATAL(m);
		CU_ASSERT(strlen(m) > 0);
		CU_ASSERT_STRING_NOT_EQUAL(m, "unknown error");
		CU_ASSERT_PTR_EQUAL(ckpt_strerror(e), m);
		for (i = CKPT_EFIRST; i < e; i++)
			CU_ASSERT_STRING_NOT_EQUAL(seen[i - CKPT_EFIRST], m);
		seen[e - CKPT_EFIRST] = m;
	}
}

static void test_strerror_unknown(void)
{
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(-(CKPT_ELAST + 1)),
			       "unknown error");
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(-(CKPT_EFIRST - 1)),
			       "unknown error");
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(4095), "unknown error");
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(INT_MIN), "unknown error");
	CU_ASSERT_STRING_EQUAL(ckpt_strerror(INT_MAX), "unknown error");
}

static void *strerror_thread(void *arg)
{
	int i, bad = 0;

	for (i = 0; i < 100000; i++) {
		int e = (i + (int)(long)arg) % 140;

		if (!ckpt_strerror(-e) || !ckpt_strerror(-CKPT_EPROTO))
			bad = 1;
	}
	return (void *)(long)bad;
}

static void test_strerror_threads(void)
{
	pthread_t t[4];
	void *ret;
	long i;

	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL,
						     strerror_thread,
						     (void *)i), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		CU_ASSERT_PTR_NULL(ret);
	}
}

static void test_names(void)
{
	CU_ASSERT_STRING_EQUAL(ckpt_level_name(CKPT_NONE), "none");
	CU_ASSERT_STRING_EQUAL(ckpt_level_name(CKPT_STAGED), "staged");
	CU_ASSERT_STRING_EQUAL(ckpt_level_name(CKPT_LOCAL), "local");
	CU_ASSERT_STRING_EQUAL(ckpt_level_name(CKPT_PROTECTED), "protected");
	CU_ASSERT_STRING_EQUAL(ckpt_level_name(CKPT_DRAINED), "drained");
	CU_ASSERT_PTR_NOT_NULL(ckpt_level_name((enum ckpt_level)99));
	CU_ASSERT_PTR_NOT_NULL(ckpt_level_name((enum ckpt_level)-1));

	CU_ASSERT_STRING_EQUAL(ckpt_drain_state_name(CKPT_DS_NONE), "none");
	CU_ASSERT_STRING_EQUAL(ckpt_drain_state_name(CKPT_DS_RETRY), "retry");
	CU_ASSERT_STRING_EQUAL(ckpt_drain_state_name(CKPT_DS_PUBLISH), "publish");
	CU_ASSERT_STRING_EQUAL(ckpt_drain_state_name(CKPT_DS_RETIRED), "retired");
	CU_ASSERT_STRING_EQUAL(ckpt_drain_state_name((enum ckpt_drain_state)8), "unknown");
	CU_ASSERT_STRING_EQUAL(ckpt_drain_state_name((enum ckpt_drain_state)-1), "unknown");
	CU_ASSERT_STRING_EQUAL(ckpt_state_name(CKPT_ST_OPEN), "open");
	CU_ASSERT_STRING_EQUAL(ckpt_state_name(CKPT_ST_SEALING), "sealing");
	CU_ASSERT_STRING_EQUAL(ckpt_state_name(CKPT_ST_SEALED), "sealed");
	CU_ASSERT_STRING_EQUAL(ckpt_state_name(CKPT_ST_FAILED), "failed");
	CU_ASSERT_STRING_EQUAL(ckpt_state_name(CKPT_ST_INCOMPLETE),
			       "incomplete");
	CU_ASSERT_PTR_NOT_NULL(ckpt_state_name((enum ckpt_state)0));
	CU_ASSERT_PTR_NOT_NULL(ckpt_state_name((enum ckpt_state)6));
}

static void test_level_parse(void)
{
	enum ckpt_level l = CKPT_NONE;
	int i;

	for (i = CKPT_NONE; i <= CKPT_DRAINED; i++) {
		CU_ASSERT_EQUAL(ckpt_level_parse(ckpt_level_name(i), &l), 0);
		CU_ASSERT_EQUAL((int)l, i);
	}
	CU_ASSERT_EQUAL(ckpt_level_parse("STAGED", &l), 0);
	CU_ASSERT_EQUAL(l, CKPT_STAGED);
	CU_ASSERT_EQUAL(ckpt_level_parse("Drained", &l), 0);
	CU_ASSERT_EQUAL(l, CKPT_DRAINED);
	l = CKPT_LOCAL;
	CU_ASSERT_EQUAL(ckpt_level_parse("", &l), -EINVAL);
	CU_ASSERT_EQUAL(ckpt_level_parse("stage", &l), -EINVAL);
	CU_ASSERT_EQUAL(ckpt_level_parse("locals", &l), -EINVAL);
	CU_ASSERT_EQUAL(ckpt_level_parse(" local", &l), -EINVAL);
	CU_ASSERT_EQUAL(ckpt_level_parse("2", &l), -EINVAL);
	CU_ASSERT_EQUAL(ckpt_level_parse(NULL, &l), -EINVAL);
	CU_ASSERT_EQUAL(l, CKPT_LOCAL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "strerror_errno", test_strerror_errno },
		{ "strerror_ckpt", test_strerror_ckpt },
		{ "strerror_unknown", test_strerror_unknown },
		{ "strerror_threads", test_strerror_threads },
		{ "names", test_names },
		{ "level_parse", test_level_parse },
		{ NULL, NULL }
	};

	return unit_run("err", tests);
}
