/*
 * test_crc32c.c - CRC32C against published vectors (RFC 3720 B.4) and the
 * chaining contract of crc32c_update().
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "crc32c.h"

static void test_vectors(void)
{
	uint8_t buf[32];
	unsigned i;

	CU_ASSERT_EQUAL(crc32c("123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(crc32c("", 0), 0u);
	CU_ASSERT_EQUAL(crc32c_update(0, "123456789", 9), 0xE3069283u);

	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(crc32c(buf, sizeof(buf)), 0x8A9136AAu);
	memset(buf, 0xff, sizeof(buf));
	CU_ASSERT_EQUAL(crc32c(buf, sizeof(buf)), 0x62A8AB43u);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i;
	CU_ASSERT_EQUAL(crc32c(buf, sizeof(buf)), 0x46DD794Eu);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = 31 - i;
	CU_ASSERT_EQUAL(crc32c(buf, sizeof(buf)), 0x113FDB5Cu);
}

/* crc32c_update(crc32c(a), b) == crc32c(a || b) at every split point. */
static void test_chaining(void)
{
	const char *s = "123456789";
	size_t i;

	for (i = 0; i <= 9; i++)
		CU_ASSERT_EQUAL(crc32c_update(crc32c(s, i), s + i, 9 - i),
				0xE3069283u);
	CU_ASSERT_EQUAL(crc32c_update(crc32c(s, 9), "", 0), 0xE3069283u);
}

static void test_large(void)
{
	size_t n = 3u << 20, i, cut;
	uint8_t *buf = malloc(n);
	uint32_t whole, crc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	srand(7);
	for (i = 0; i < n; i++)
		buf[i] = rand();
	whole = crc32c(buf, n);
	for (cut = 1; cut < n; cut = cut * 3 + 1) {
		crc = crc32c_update(crc32c(buf, cut), buf + cut, n - cut);
		CU_ASSERT_EQUAL(crc, whole);
	}
	/* Byte at a time over a prefix agrees with the bulk path. */
	crc = 0;
	for (i = 0; i < 4099; i++)
		crc = crc32c_update(crc, buf + i, 1);
	CU_ASSERT_EQUAL(crc, crc32c(buf, 4099));
	buf[n / 2] ^= 1;
	CU_ASSERT_NOT_EQUAL(crc32c(buf, n), whole);
	free(buf);
}

/* crc32c_combine() of two pieces' CRCs is the CRC of both, at every split
 * of buffers of many lengths, the empty pieces included. */
static void test_combine(void)
{
	static uint8_t buf[3 << 20];
	size_t lens[] = { 0, 1, 7, 8, 63, 4096, 1 << 20, (1 << 20) + 8,
			  sizeof(buf) };
	size_t i, j, at;
	uint32_t seed = 12345;

	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = lens[i];
		uint32_t whole = crc32c(buf, n);

		for (j = 0; j <= 4; j++) {
			at = n * j / 4;
			CU_ASSERT_EQUAL(crc32c_combine(crc32c(buf, at),
						       crc32c(buf + at, n - at),
						       n - at), whole);
		}
	}
	/* Three pieces, as a frame around its data. */
	CU_ASSERT_EQUAL(crc32c_combine(crc32c_combine(crc32c(buf, 32),
						      crc32c(buf + 32, 1 << 20),
						      1 << 20),
				       crc32c(buf + 32 + (1 << 20), 8), 8),
			crc32c(buf, 32 + (1 << 20) + 8));
	CU_ASSERT_EQUAL(crc32c_combine(0, 0, 0), 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "vectors", test_vectors },
		{ "chaining", test_chaining },
		{ "large", test_large },
		{ "combine", test_combine },
		{ NULL, NULL }
	};

	return unit_run("crc32c", tests);
}
