/*
 * test_attr.c - the rules for a file's attributes (lib/attr.h): which a
 * plain writer may give (attr_permitted), and which a uid could have given
 * its own file (attr_owner_could), asked of the real NSS of this machine
 * for group membership: uid 65534 (nobody) and its primary group, which
 * Debian has; an unknown uid; root.
 */
#include <errno.h>
#include <pwd.h>

#include "unit.h"

#include "attr.h"

#define NOBODY 65534u
#define UNKNOWN 3999999u

static struct ckpt_attr mode(uint32_t set, uint32_t mode, uint32_t uid,
			     uint32_t gid)
{
	return (struct ckpt_attr){ .set = set | CKPT_ATTR_MODE, .mode = mode,
				   .uid = uid, .gid = gid };
}

static void test_type(void)
{
	struct ckpt_attr a = mode(0, CKPT_ATTR_IFDIR | 0755, 0, 0);

	CU_ASSERT(attr_is_type(&a, CKPT_ATTR_IFDIR));
	CU_ASSERT(!attr_is_type(&a, CKPT_ATTR_IFLNK));
	a.set = 0;                      /* a type only counts when set */
	CU_ASSERT(!attr_is_type(&a, CKPT_ATTR_IFDIR));
}

static void test_permitted(void)
{
	struct ckpt_attr a = mode(CKPT_ATTR_UID, 0644, 7, 0);

	CU_ASSERT_EQUAL(attr_permitted(7, 7, &a), 0);
	a.uid = 8;
	CU_ASSERT_EQUAL(attr_permitted(7, 7, &a), -EPERM);
	CU_ASSERT_EQUAL(attr_permitted(0, 7, &a), 0);
	a = mode(0, 04755, 0, 0);
	CU_ASSERT_EQUAL(attr_permitted(7, 7, &a), -EPERM);
	a = mode(0, CKPT_ATTR_IFBLK | 0600, 0, 0);
	CU_ASSERT_EQUAL(attr_permitted(7, 7, &a), -EPERM);
	a = mode(0, CKPT_ATTR_IFIFO | 0600, 0, 0);
	CU_ASSERT_EQUAL(attr_permitted(7, 7, &a), 0);
}

static void test_owner_could(void)
{
	const uint32_t ug = CKPT_ATTR_UID | CKPT_ATTR_GID;
	struct passwd *pw = getpwuid(NOBODY);
	struct ckpt_attr a;

	a = mode(ug, 06755, 0, 0);
	CU_ASSERT_EQUAL(attr_owner_could(0, &a), 0);          /* root */
	a = mode(CKPT_ATTR_UID, 04755, UNKNOWN, 0);
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), 0);    /* its own */
	a = mode(0, 04755, 0, 0);
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), -EPERM); /* no owner */
	a = mode(CKPT_ATTR_UID, 04755, 0, 0);
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), -EPERM); /* root's */
	a = mode(0, CKPT_ATTR_IFCHR | 0666, 0, 0);
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), -EPERM);
	a = mode(0, CKPT_ATTR_IFSOCK | 0600, 0, 0);
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), 0);
	a = mode(ug, 02755, UNKNOWN, 0);    /* NSS knows no such uid */
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), -EPERM);
	a = mode(CKPT_ATTR_UID, 02755, UNKNOWN, 0);   /* no group named */
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), -EPERM);
	a = (struct ckpt_attr){ .set = CKPT_ATTR_MTIME, .mode = 06777 };
	CU_ASSERT_EQUAL(attr_owner_could(UNKNOWN, &a), 0); /* mode not set */
	if (!pw || pw->pw_gid == 0)
		return;                 /* no nobody here: membership untested */
	a = mode(ug, 02755, NOBODY, pw->pw_gid);
	CU_ASSERT_EQUAL(attr_owner_could(NOBODY, &a), 0);
	a.gid = 0;
	CU_ASSERT_EQUAL(attr_owner_could(NOBODY, &a), -EPERM);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "type", test_type },
		{ "permitted", test_permitted },
		{ "owner_could", test_owner_could },
		{ NULL, NULL }
	};

	return unit_run("attr", tests);
}
