/*
 * test_namelist.c - a part's name list: a round trip, every truncation and
 * single-bit flip rejected, the entry rules (empty, too long, count), and
 * the clash rules of two parts: one file in both, a file on the way to the
 * other's path or directory, and the near misses that sort between them
 * ("a.b", "a0", "ab") and must not clash.
 */
#include <string.h>

#include "unit.h"

#include "codec.h"
#include "crc32c.h"
#include "namelist.h"

/* mine: files "a", "dir/x", "m/n", directories "d/" and "dir/". */
static char *mine[8];
static uint32_t nmine;

static void mine_build(void)
{
	static const struct { const char *p; int dir; } e[] = {
		{ "a", 0 }, { "dir/x", 0 }, { "m/n", 0 }, { "d", 1 },
		{ "dir", 1 },
	};
	uint32_t i;

	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		mine[i] = namelist_entry(e[i].p, e[i].dir);
	nmine = i;
	namelist_sort(mine, nmine);
}

static void mine_free(void)
{
	while (nmine)
		free(mine[--nmine]);
}

static const char *clash(const char *q)
{
	static char scratch[NAMELIST_ENTRY_MAX + 2];

	return namelist_clash(mine, nmine, q, scratch);
}

static void test_clash(void)
{
	static const struct { const char *q, *hit; } cases[] = {
		{ "a", "a" },           /* one file in both */
		{ "a/b", "a" },         /* the other's file under my file */
		{ "a/b/c", "a" },
		{ "a/", "a" },          /* the other's directory at my file */
		{ "dir/x", "dir/x" },
		{ "dir/x/y", "dir/x" },
		{ "m", "m" },           /* the other's file where I have m/n */
		{ "dir", "dir" },       /* ... and where I have the dir dir/ */
		{ "d", "d" },           /* ... even an empty one */
		{ "a.b", NULL },        /* sorts between "a" and "a/" */
		{ "a0", NULL },         /* sorts after "a/" */
		{ "ab", NULL },
		{ "dir/", NULL },       /* two directories */
		{ "d/", NULL },
		{ "dir/y", NULL },      /* another file of a shared dir */
		{ "m/", NULL },
		{ "m/o", NULL },
		{ "dir/x.y", NULL },
		{ "", NULL },
		{ "/", NULL },
	};
	const char *hit;
	size_t i;

	mine_build();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hit = clash(cases[i].q);
		CU_ASSERT(cases[i].hit ? hit && !strcmp(hit, cases[i].hit)
				       : !hit);
		if (!!hit != !!cases[i].hit)
			fprintf(stderr, "clash(%s): %s\n", cases[i].q,
				hit ? hit : "none");
	}
	mine_free();
}

/* The rules are symmetric: q clashes with mine as mine's entry clashes
 * with a list of q alone. */
static void test_symmetric(void)
{
	static const char *qs[] = { "a", "a/b", "a/", "a.b", "m", "dir/",
				    "dir/x/y", "d", "zz", "dir/y" };
	char scratch[NAMELIST_ENTRY_MAX + 2];
	char *one[1];
	uint32_t i, j;
	int fwd, back;

	mine_build();
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		fwd = clash(qs[i]) != NULL;
		one[0] = (char *)qs[i];
		back = 0;
		for (j = 0; j < nmine; j++)
			back |= namelist_clash(one, 1, mine[j], scratch) != NULL;
		CU_ASSERT_EQUAL(fwd, back);
	}
	mine_free();
}

static void test_roundtrip(void)
{
	char scratch[NAMELIST_ENTRY_MAX + 2], *theirs[2];
	uint8_t *buf;
	size_t len, i;

	mine_build();
	CU_ASSERT_EQUAL_FATAL(namelist_encode(mine, nmine, &buf, &len), 0);
	CU_ASSERT(namelist_ok(buf, len));
	CU_ASSERT_EQUAL(get_le32(buf + 8), nmine);
	/* A list against itself: every file clashes with itself. */
	CU_ASSERT_PTR_NOT_NULL(namelist_first_clash(mine, nmine, buf, len,
						    scratch));
	theirs[0] = "b";
	theirs[1] = "dir/";
	CU_ASSERT_PTR_NULL(namelist_first_clash(theirs, 2, buf, len, scratch));
	for (i = 0; i < len; i++)
		CU_ASSERT_FALSE(namelist_ok(buf, i));
	for (i = 0; i < len * 8; i++) {
		buf[i / 8] ^= 1u << (i % 8);
		CU_ASSERT_FALSE(namelist_ok(buf, len));
		buf[i / 8] ^= 1u << (i % 8);
	}
	free(buf);
	/* An empty list. */
	CU_ASSERT_EQUAL_FATAL(namelist_encode(mine, 0, &buf, &len), 0);
	CU_ASSERT_EQUAL(len, NAMELIST_HDR);
	CU_ASSERT(namelist_ok(buf, len));
	free(buf);
	mine_free();
}

/* A list with the CRC made right, so that only the entry rules judge. */
static int ok_of(const char *body, size_t blen, uint32_t count)
{
	uint8_t img[NAMELIST_HDR + NAMELIST_ENTRY_MAX + 64];

	memcpy(img, NAMELIST_MAGIC, 8);
	put_le32(img + 8, count);
	memcpy(img + NAMELIST_HDR, body, blen);
	put_le32(img + 12, crc32c(img + NAMELIST_HDR, blen));
	return namelist_ok(img, NAMELIST_HDR + blen);
}

static void test_rules(void)
{
	static char longest[NAMELIST_ENTRY_MAX + 2];

	CU_ASSERT(ok_of("a\0b/\0", 5, 2));
	CU_ASSERT_FALSE(ok_of("a\0b/\0", 5, 1));      /* count */
	CU_ASSERT_FALSE(ok_of("a\0b/\0", 5, 3));
	CU_ASSERT_FALSE(ok_of("a\0b/", 4, 2));        /* unterminated */
	CU_ASSERT_FALSE(ok_of("a\0\0", 3, 2));        /* empty entry */
	memset(longest, 'x', NAMELIST_ENTRY_MAX);
	CU_ASSERT(ok_of(longest, NAMELIST_ENTRY_MAX + 1, 1));
	longest[NAMELIST_ENTRY_MAX] = 'x';
	CU_ASSERT_FALSE(ok_of(longest, NAMELIST_ENTRY_MAX + 2, 1));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "clash", test_clash },
		{ "symmetric", test_symmetric },
		{ "roundtrip", test_roundtrip },
		{ "rules", test_rules },
		{ NULL, NULL }
	};

	return unit_run("namelist", tests);
}
