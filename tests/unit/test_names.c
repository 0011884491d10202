/*
 * test_names.c - job, version and path rules: every byte but '/' and NUL is
 * a name byte (spaces, punctuation, UTF-8, control bytes), and the hostile
 * names a client or a damaged manifest could send are refused: traversal,
 * absolute paths, empty components, and lengths one past each limit.
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#include "ckpt.h"
#include "names.h"

#define BAD (-CKPT_EBADNAME)

/* n copies of c, NUL-terminated, in a static buffer. */
static const char *rep(char c, size_t n)
{
	static char buf[8192];

	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* Components of clen bytes joined by '/', total length exactly n, counted
 * from the end so the last component is whole (the first may be shorter). */
static const char *joined(size_t n, size_t clen)
{
	static char buf[8192];
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = ((n - 1 - i) % (clen + 1) == clen) ? '/' : 'a';
	buf[n] = '\0';
	return buf;
}

static void test_valid(void)
{
	static const char *const ok[] = {
		"a", "llama70b", "step-001200", "rank03.pt", "...", ".hidden",
		"a..b", "x.", "A-Za-z0-9._+-=@,",
		"0123456789", "k=v@host,1+2", "_",
		/* POSIX names: any byte but '/' and NUL. */
		"a b", " a", "a ", "model (1).pt", "~#%:'()", "a\tb", "a\nb",
		"a:b", "a;b", "a<b", "a*b", "a?b", "a~b", "a%2fb", "a\"b",
		"a'b", "a|b", "a$b", "a#b", "a!b", "a&b", "a(b)", "a[b]",
		"a\\b", "\x7f", "\x01", "caf\xc3\xa9", "\xe2\x80\x8b", "\x80",
		"\xff", "\xef\xbc\x8f", "\xd0\xbc\xd0\xbe\xd0\xb4\xd0\xb5\xd0\xbb\xd1\x8c",
		"..\n", ". ", " ..", "...",
	};
	unsigned i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CU_ASSERT_EQUAL(name_check_job(ok[i]), 0);
		CU_ASSERT_EQUAL(name_check_version(ok[i]), 0);
		CU_ASSERT_EQUAL(name_check_path(ok[i]), 0);
	}
	CU_ASSERT_EQUAL(name_check_job("llama70b/run3"), 0);
	CU_ASSERT_EQUAL(name_check_job("a/b/c/d"), 0);
	CU_ASSERT_EQUAL(name_check_path("model/rank03.pt"), 0);
	CU_ASSERT_EQUAL(name_check_path(".../x/..a/a.."), 0);
	CU_ASSERT_EQUAL(name_check_path("a/\xc0\xaf/b"), 0);
	CU_ASSERT_EQUAL(name_check_job("team one/run (2)"), 0);
	CU_ASSERT_EQUAL(name_check_path(rep('\xe9', 255)), 0);
	CU_ASSERT_EQUAL(name_check_path(rep('\xe9', 256)), -ENAMETOOLONG);
}

static void test_hostile(void)
{
	static const char *const bad[] = {
		"", ".", "..", "a/../b", "../a", "a/..", "./a", "a/./b", "a/.",
		"/abs", "/", "//", "a/", "a//b", "a/b/", "\xff/../b",
		"caf\xc3\xa9/./x",
	};
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(name_check_job(bad[i]), BAD);
		CU_ASSERT_EQUAL(name_check_version(bad[i]), BAD);
		CU_ASSERT_EQUAL(name_check_path(bad[i]), BAD);
	}
	CU_ASSERT_EQUAL(name_check_job(NULL), BAD);
	CU_ASSERT_EQUAL(name_check_version(NULL), BAD);
	CU_ASSERT_EQUAL(name_check_path(NULL), BAD);
	/* A version is a single component. */
	CU_ASSERT_EQUAL(name_check_version("a/b"), BAD);
	/* An embedded NUL ends a C string: "a\0/../x" is just "a".  The wire
	 * decoders reject the NUL itself (test_codec, test_proto). */
	CU_ASSERT_EQUAL(name_check_path("a\0/../x"), 0);
}

static void test_lengths(void)
{
	/* Component limit: 255. */
	CU_ASSERT_EQUAL(name_check_path(rep('a', 255)), 0);
	CU_ASSERT_EQUAL(name_check_path(rep('a', 256)), -ENAMETOOLONG);
	CU_ASSERT_EQUAL(name_check_path(joined(255 + 1 + 255, 255)), 0);
	CU_ASSERT_EQUAL(name_check_job(rep('a', 199)), 0);

	/* Job: 200 bytes in all. */
	CU_ASSERT_EQUAL(name_check_job(rep('a', CKPT_JOB_MAX)), 0);
	CU_ASSERT_EQUAL(name_check_job(rep('a', CKPT_JOB_MAX + 1)), BAD);
	CU_ASSERT_EQUAL(name_check_job(joined(CKPT_JOB_MAX, 8)), 0);
	CU_ASSERT_EQUAL(name_check_job(joined(CKPT_JOB_MAX + 1, 8)), BAD);

	/* Version: 128. */
	CU_ASSERT_EQUAL(name_check_version(rep('v', CKPT_VERSION_MAX)), 0);
	CU_ASSERT_EQUAL(name_check_version(rep('v', CKPT_VERSION_MAX + 1)),
			BAD);

	/* Path: PATH_MAX less its NUL (4095) in all, components still at
	 * most 255; longer is ENAMETOOLONG, as from the kernel. */
	CU_ASSERT_EQUAL(CKPT_PATH_MAX2, 4095);
	CU_ASSERT_EQUAL(name_check_path(joined(CKPT_PATH_MAX, 100)), 0);
	CU_ASSERT_EQUAL(name_check_path(joined(CKPT_PATH_MAX + 1, 100)), 0);
	CU_ASSERT_EQUAL(name_check_path(joined(CKPT_PATH_MAX2, 100)), 0);
	CU_ASSERT_EQUAL(name_check_path(joined(CKPT_PATH_MAX2, 255)), 0);
	CU_ASSERT_EQUAL(name_check_path(joined(CKPT_PATH_MAX2 + 1, 255)),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(name_check_path(joined(CKPT_PATH_MAX2 + 1, 100)),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(name_check_path(rep('a', 3000)), -ENAMETOOLONG);
	/* A 256-byte component deep in a path that fits. */
	CU_ASSERT_EQUAL(name_check_path(joined(3000, 255)), 0);
	CU_ASSERT_EQUAL(name_check_path(joined(3001, 256)), -ENAMETOOLONG);
	/* The rules other than length hold at any length. */
	{
		static char p[CKPT_PATH_MAX2 + 1];

		strcpy(p, joined(CKPT_PATH_MAX2 - 3, 255));
		strcat(p, "/..");
		CU_ASSERT_EQUAL(strlen(p), CKPT_PATH_MAX2);
		CU_ASSERT_EQUAL(name_check_path(p), BAD);
		p[CKPT_PATH_MAX2 - 3] = '\0';
		strcat(p, "//a");
		CU_ASSERT_EQUAL(name_check_path(p), BAD);
	}
}

/* The UTF-8 rule shared by ckptctl --json and the metrics labels. */
static void test_utf8_len(void)
{
	static const struct { const char *s; int n; } cases[] = {
		{ "a", 1 }, { "\xc3\xa9", 2 }, { "\xe2\x82\xac", 3 },
		{ "\xf0\x9f\x98\x80", 4 },
		{ "\xff", 0 }, { "\x80", 0 }, { "\xc3", 0 }, { "\xc3" "a", 0 },
		{ "\xc0\xaf", 0 },                   /* overlong '/' */
		{ "\xe0\x80\xaf", 0 },              /* overlong */
		{ "\xed\xa0\x80", 0 },              /* surrogate */
		{ "\xf4\x90\x80\x80", 0 },         /* past U+10FFFF */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(name_utf8_len((const unsigned char *)cases[i].s),
				cases[i].n);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "valid", test_valid },
		{ "hostile", test_hostile },
		{ "lengths", test_lengths },
		{ "utf8_len", test_utf8_len },
		{ NULL, NULL }
	};

	return unit_run("names", tests);
}
