/*
 * test_hostlist.c - Slurm hostlist expansion against Slurm's own syntax
 * (the expansions below are what `scontrol show hostnames` prints), and the
 * hostile expressions a broken or malicious environment could hand us.
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#include "hostlist.h"

/* Expand expr and compare with the space-separated names in want. */
static void check(const char *expr, const char *want)
{
	struct hostlist hl;
	char buf[4096] = "";
	size_t i, n;
	int ret;

	ret = hostlist_expand(expr, HOSTLIST_MAX, &hl);
	CU_ASSERT_EQUAL(ret, 0);
	for (i = 0; i < hl.n; i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, hl.hosts[i]);
	}
	if (strcmp(buf, want))
		fprintf(stderr, "\n%s: got \"%s\" want \"%s\"\n", expr, buf, want);
	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT_EQUAL(hostlist_count(expr, HOSTLIST_MAX, &n), 0);
	CU_ASSERT_EQUAL(n, hl.n);
	hostlist_release(&hl);
	CU_ASSERT_EQUAL(hl.n, 0);
	CU_ASSERT_PTR_NULL(hl.hosts);
}

/* expr must fail with err, and leave an empty list. */
static void check_err(const char *expr, size_t max, int err)
{
	struct hostlist hl;
	int ret;

	ret = hostlist_expand(expr, max, &hl);
	if (ret != err)
		fprintf(stderr, "\n%s: got %d want %d\n", expr, ret, err);
	CU_ASSERT_EQUAL(ret, err);
	CU_ASSERT_EQUAL(hl.n, 0);
	hostlist_release(&hl);
}

static void test_slurm_syntax(void)
{
	check("gpu[001-004,017]", "gpu001 gpu002 gpu003 gpu004 gpu017");
	check("a[1-2]b[3-4]", "a1b3 a1b4 a2b3 a2b4");
	check("node1", "node1");
	check("node1,node2", "node1 node2");
	check("n[1-3],login1", "n1 n2 n3 login1");
	check("n[08-11]", "n08 n09 n10 n11");
	check("n[8-11]", "n8 n9 n10 n11");
	check("n[098-101]", "n098 n099 n100 n101");
	check("n[9-010]", "n9 n10");		/* width is LO's */
	check("n[5]", "n5");
	check("n[0]", "n0");
	check("[1-3]", "1 2 3");
	check("rack[1-2]-n[1-2].ib", "rack1-n1.ib rack1-n2.ib rack2-n1.ib rack2-n2.ib");
	check("a[1,3,5-6]", "a1 a3 a5 a6");
	check("a[1-2],b[3-4]", "a1 a2 b3 b4");
	check("a[2-2]", "a2");
	check("x-1.example.org", "x-1.example.org");
	check("a[1-2]b", "a1b a2b");
}

static void test_lists(void)
{
	check("", "");
	check("   ", "");
	check("a,,b", "a b");
	check(",a,", "a");
	check("a b\tc\nd", "a b c d");
	check("a,a", "a a");			/* duplicates kept, in order */
	check("n[1-2],n[1-2]", "n1 n2 n1 n2");
	check("a[1-2] , b", "a1 a2 b");
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"a[", "a[1", "a[1-", "a[1-2", "a]", "a[]", "a[,]", "a[1,]",
		"a[,1]", "a[-1]", "a[1-]", "a[3-1]", "a[[1]]", "a[1[2]]",
		"a[x]", "a[1-x]", "a[+1]", "a[ 1]", "a[1 ]", "a[1--2]",
		"a[1-2-3]", "a[1-2]]", "]", "[", "a[0x10]", "a[1234567890]",
		"a[1-1234567890]", "a\001b", "a\177", "a[1],b[", "ok,a]b",
	};
	size_t i, n = 99;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		check_err(bad[i], HOSTLIST_MAX, -EINVAL);
		CU_ASSERT_EQUAL(hostlist_count(bad[i], HOSTLIST_MAX, &n), -EINVAL);
	}
	CU_ASSERT_EQUAL(n, 99);			/* untouched on error */
	CU_ASSERT_EQUAL(hostlist_count(NULL, 1, &n), -EINVAL);
}

static void test_bounds(void)
{
	static char big[HOSTLIST_NAME_MAX + 16];
	struct hostlist hl;
	size_t n;

	/* Counted before allocating: these cost nothing. */
	check_err("n[0-999999999]", HOSTLIST_MAX, -E2BIG);
	check_err("a[0-99999]b[0-99999]c[0-99999]", HOSTLIST_MAX, -E2BIG);
	check_err("a[0-9]", 9, -E2BIG);
	check_err("a[0-4],b[0-4]", 9, -E2BIG);
	check_err("a[0-4,0-4]", 9, -E2BIG);
	check_err("a[1-3]", 0, -E2BIG);
	CU_ASSERT_EQUAL(hostlist_count("a[0-9]", 10, &n), 0);
	CU_ASSERT_EQUAL(n, 10);
	CU_ASSERT_EQUAL(hostlist_count("a[0-65535]", HOSTLIST_MAX, &n), 0);
	CU_ASSERT_EQUAL(n, 65536);
	CU_ASSERT_EQUAL(hostlist_count("a[0-65536]", HOSTLIST_MAX, &n), -E2BIG);

	/* A name of exactly HOSTLIST_NAME_MAX bytes, then one longer. */
	memset(big, 'h', HOSTLIST_NAME_MAX - 2);
	strcpy(big + HOSTLIST_NAME_MAX - 2, "[10-11]");
	CU_ASSERT_EQUAL(hostlist_expand(big, HOSTLIST_MAX, &hl), 0);
	CU_ASSERT_EQUAL(hl.n, 2);
	if (hl.n == 2)
		CU_ASSERT_EQUAL(strlen(hl.hosts[1]), HOSTLIST_NAME_MAX);
	hostlist_release(&hl);
	memset(big, 'h', HOSTLIST_NAME_MAX - 1);
	strcpy(big + HOSTLIST_NAME_MAX - 1, "[10-11]");
	check_err(big, HOSTLIST_MAX, -ENAMETOOLONG);
	/* Padding counts: "[0001-2]" prints 4 digits. */
	memset(big, 'h', HOSTLIST_NAME_MAX - 3);
	strcpy(big + HOSTLIST_NAME_MAX - 3, "[0001-2]");
	check_err(big, HOSTLIST_MAX, -ENAMETOOLONG);
}

/* The largest list we allow, expanded for real. */
static void test_large(void)
{
	struct hostlist hl;

	CU_ASSERT_EQUAL(hostlist_expand("gpu[00000-65535]", HOSTLIST_MAX, &hl), 0);
	CU_ASSERT_EQUAL(hl.n, 65536);
	if (hl.n == 65536) {
		CU_ASSERT_STRING_EQUAL(hl.hosts[0], "gpu00000");
		CU_ASSERT_STRING_EQUAL(hl.hosts[65535], "gpu65535");
	}
	hostlist_release(&hl);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "slurm_syntax", test_slurm_syntax },
		{ "lists", test_lists },
		{ "malformed", test_malformed },
		{ "bounds", test_bounds },
		{ "large", test_large },
		{ NULL, NULL }
	};

	return unit_run("hostlist", tests);
}
