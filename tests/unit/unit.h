/*
 * unit.h - what every CUnit test in tests/unit/ shares: one runner for a
 * suite of tests, and a private mkdtemp directory under $TMPDIR.
 *
 * Each tests/unit/test_X.c is built alone into its own binary, so this is
 * header-only.  A test file lists its tests in a table ending with a NULL
 * entry and hands it to unit_run() (or unit_run_suite() when the suite needs
 * set-up and clean-up), from main():
 *
 *	int main(void)
 *	{
 *		static const struct unit_test tests[] = {
 *			{ "layout", test_layout },
 *			{ NULL, NULL }
 *		};
 *
 *		return unit_run("codec", tests);
 *	}
 */
#ifndef CKPT_TESTS_UNIT_H
#define CKPT_TESTS_UNIT_H

#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

struct unit_test {
	const char *name;
	CU_TestFunc fn;
};

/*
 * Run one suite with CUnit's verbose basic interface.  init and clean may be
 * NULL; a failing init or clean counts as a failure.  Returns the process
 * exit code: 0 if every test passed, 1 for any failed assertion, failed
 * suite set-up or clean-up, or CUnit error (the suite could not be built).
 */
static inline int unit_run_suite(const char *suite_name, CU_InitializeFunc init,
				 CU_CleanupFunc clean,
				 const struct unit_test *tests)
{
	unsigned fails;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite(suite_name, init, clean);
	for (; suite && tests->name; tests++) {
		if (!CU_add_test(suite, tests->name, tests->fn))
			suite = NULL;
	}
	if (!suite) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures() + CU_get_number_of_tests_failed() +
		CU_get_number_of_suites_failed();
	fails += CU_get_error() != CUE_SUCCESS;
	CU_cleanup_registry();
	return fails ? 1 : 0;
}

/* A suite with no set-up or clean-up. */
static inline int unit_run(const char *suite_name,
			   const struct unit_test *tests)
{
	return unit_run_suite(suite_name, NULL, NULL, tests);
}

/*
 * Create a private directory "$TMPDIR/<name>.XXXXXX" (/tmp when TMPDIR is
 * unset or empty), its path written into buf.  Returns buf, or NULL with
 * errno set.  Removing it is the caller's business, so that a test can insist
 * that it left nothing behind.
 */
static inline char *unit_mkdtemp(char *buf, size_t len, const char *name)
{
	const char *base = getenv("TMPDIR");

	snprintf(buf, len, "%s/%s.XXXXXX", base && *base ? base : "/tmp", name);
	return mkdtemp(buf);
}

#endif
