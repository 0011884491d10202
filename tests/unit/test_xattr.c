/*
 * test_xattr.c - the packed blob of a file's extended attributes: set,
 * replace, get, remove, list, the size limit, and xattr_check() on
 * malformed blobs (cut records, empty or NUL-holding names, a name twice).
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#include "xattr.h"

static void test_ops(void)
{
	uint8_t buf[XATTR_MAX];
	const uint8_t *v;
	char names[64];
	size_t len = 0;

	CU_ASSERT_EQUAL(xattr_set(buf, &len, "user.a", "1", 1), 0);
	CU_ASSERT_EQUAL(xattr_set(buf, &len, "user.b", "", 0), 0);
	CU_ASSERT_EQUAL(xattr_set(buf, &len, "user.a", "xyz", 3), 0);
	CU_ASSERT_EQUAL(xattr_check(buf, len), 0);
	CU_ASSERT_EQUAL(xattr_get(buf, len, "user.a", &v), 3);
	CU_ASSERT(!memcmp(v, "xyz", 3));
	CU_ASSERT_EQUAL(xattr_get(buf, len, "user.b", &v), 0);
	CU_ASSERT_EQUAL(xattr_get(buf, len, "user.c", &v), -ENODATA);
	CU_ASSERT_EQUAL(xattr_list(buf, len, NULL, 0), 14);
	CU_ASSERT_EQUAL(xattr_list(buf, len, names, sizeof(names)), 14);
	CU_ASSERT(!memcmp(names, "user.b\0user.a\0", 14));
	CU_ASSERT_EQUAL(xattr_list(buf, len, names, 10), -ERANGE);
	CU_ASSERT_EQUAL(xattr_remove(buf, &len, "user.b"), 0);
	CU_ASSERT_EQUAL(xattr_remove(buf, &len, "user.b"), -ENODATA);
	CU_ASSERT_EQUAL(len, 1u + 6 + 2 + 3);
	CU_ASSERT_EQUAL(xattr_set(buf, &len, "", "x", 1), -ERANGE);
}

static void test_limit(void)
{
	static uint8_t big[XATTR_MAX];
	uint8_t buf[XATTR_MAX];
	size_t len = 0;

	/* One record of XATTR_MAX bytes fits; a byte more does not. */
	CU_ASSERT_EQUAL(xattr_set(buf, &len, "user.x", big,
				  XATTR_MAX - 3 - 6), 0);
	CU_ASSERT_EQUAL(len, (size_t)XATTR_MAX);
	CU_ASSERT_EQUAL(xattr_set(buf, &len, "user.y", "", 0), -ENOSPC);
	/* Replacing it with a smaller value works. */
	CU_ASSERT_EQUAL(xattr_set(buf, &len, "user.x", "s", 1), 0);
	CU_ASSERT_EQUAL(xattr_check(buf, len), 0);
}

static void test_check(void)
{
	static const uint8_t cut[] = { 6, 'u', 's', 'e', 'r', '.', 'a', 5, 0, 'x' };
	static const uint8_t empty[] = { 0, 0, 0 };
	static const uint8_t nul[] = { 2, 'a', 0, 0, 0 };
	static const uint8_t twice[] = { 1, 'a', 0, 0, 1, 'a', 0, 0 };

	CU_ASSERT_EQUAL(xattr_check(cut, sizeof(cut)), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(xattr_check(cut, 3), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(xattr_check(empty, sizeof(empty)), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(xattr_check(nul, sizeof(nul)), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(xattr_check(twice, sizeof(twice)), -CKPT_EPROTO);
	CU_ASSERT_EQUAL(xattr_check(twice, 4), 0);
	CU_ASSERT_EQUAL(xattr_check(NULL, 0), 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "ops", test_ops },
		{ "limit", test_limit },
		{ "check", test_check },
		{ NULL, NULL }
	};

	return unit_run("xattr", tests);
}
