/*
 * test_codec.c - the little-endian encoder and decoder: byte layout, sticky
 * errors, and the string rules (length limit, no NUL).
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#include "ckpt.h"
#include "codec.h"

static void test_layout(void)
{
	static const uint8_t want[] = {
		0xab,
		0x34, 0x12,
		0x78, 0x56, 0x34, 0x12,
		0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
		0x02, 0x00, 'h', 'i',
		'x', 'y',
	};
	uint8_t buf[64];
	struct enc e;
	struct dec d;
	char s[8];

	enc_init(&e, buf, sizeof(buf));
	enc_u8(&e, 0xab);
	enc_u16(&e, 0x1234);
	enc_u32(&e, 0x12345678);
	enc_u64(&e, 0x0123456789abcdefull);
	enc_str(&e, "hi");
	enc_bytes(&e, "xy", 2);
	CU_ASSERT_EQUAL(e.err, 0);
	CU_ASSERT_EQUAL(e.len, sizeof(want));
	CU_ASSERT(memcmp(buf, want, sizeof(want)) == 0);

	dec_init(&d, buf, e.len);
	CU_ASSERT_EQUAL(dec_u8(&d), 0xab);
	CU_ASSERT_EQUAL(dec_u16(&d), 0x1234);
	CU_ASSERT_EQUAL(dec_u32(&d), 0x12345678u);
	CU_ASSERT_EQUAL(dec_u64(&d), 0x0123456789abcdefull);
	dec_str(&d, s, 2);
	CU_ASSERT_STRING_EQUAL(s, "hi");
	CU_ASSERT_EQUAL(dec_left(&d), 2);
	CU_ASSERT_EQUAL(dec_u16(&d), 'x' | 'y' << 8);
	CU_ASSERT_EQUAL(dec_left(&d), 0);
	CU_ASSERT_EQUAL(d.err, 0);
}

static void test_enc_overflow(void)
{
	uint8_t buf[16];
	struct enc e;

	memset(buf, 0x55, sizeof(buf));
	enc_init(&e, buf, 6);
	enc_u32(&e, 1);
	enc_u32(&e, 2);                 /* does not fit */
	CU_ASSERT_EQUAL(e.err, -EMSGSIZE);
	CU_ASSERT_EQUAL(e.len, 4);
	enc_u8(&e, 3);                  /* would fit, but the error is sticky */
	CU_ASSERT_EQUAL(e.len, 4);
	CU_ASSERT_EQUAL(buf[4], 0x55);
	CU_ASSERT_EQUAL(buf[6], 0x55);

	enc_init(&e, buf, 8);
	enc_u64(&e, 1);
	CU_ASSERT_EQUAL(e.err, 0);
	enc_bytes(&e, "", 0);
	CU_ASSERT_EQUAL(e.err, 0);
	enc_u8(&e, 1);
	CU_ASSERT_EQUAL(e.err, -EMSGSIZE);

	enc_init(&e, NULL, 0);
	enc_u8(&e, 1);
	CU_ASSERT_EQUAL(e.err, -EMSGSIZE);
}

static void test_enc_str_limits(void)
{
	static uint8_t buf[70000];
	static char big[65537];
	char arr[4] = { 'a', 'b', 'c', 'd' };   /* no NUL */
	struct enc e;

	memset(big, 'a', 65535);
	big[65535] = '\0';
	enc_init(&e, buf, sizeof(buf));
	enc_str(&e, big);
	CU_ASSERT_EQUAL(e.err, 0);
	CU_ASSERT_EQUAL(e.len, 65537);

	big[65535] = 'a';
	big[65536] = '\0';
	enc_init(&e, buf, sizeof(buf));
	enc_str(&e, big);
	CU_ASSERT_EQUAL(e.err, -EMSGSIZE);
	CU_ASSERT_EQUAL(e.len, 0);

	enc_init(&e, buf, sizeof(buf));
	enc_strn(&e, arr, 3);           /* a char[4] holding no NUL */
	CU_ASSERT_EQUAL(e.err, -EMSGSIZE);
	enc_init(&e, buf, sizeof(buf));
	enc_strn(&e, "abc", 3);
	CU_ASSERT_EQUAL(e.err, 0);
	CU_ASSERT_EQUAL(e.len, 5);
}

static void test_dec_short(void)
{
	static const uint8_t buf[] = { 1, 2, 3 };
	struct dec d;

	dec_init(&d, buf, sizeof(buf));
	CU_ASSERT_EQUAL(dec_u16(&d), 0x0201);
	CU_ASSERT_EQUAL(dec_u16(&d), 0);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	CU_ASSERT_EQUAL(dec_left(&d), 0);
	/* Sticky: even a byte that is there reads as zero. */
	CU_ASSERT_EQUAL(dec_u8(&d), 0);
	CU_ASSERT_EQUAL(dec_u64(&d), 0);

	dec_init(&d, buf, 3);
	CU_ASSERT_EQUAL(dec_u32(&d), 0);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);

	dec_init(&d, NULL, 0);
	CU_ASSERT_EQUAL(dec_u8(&d), 0);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
}

static void test_dec_str_rules(void)
{
	static const uint8_t ok[] = { 3, 0, 'a', 'b', 'c' };
	static const uint8_t nul[] = { 3, 0, 'a', 0, 'c' };
	static const uint8_t trunc[] = { 4, 0, 'a', 'b', 'c' };
	static const uint8_t empty[] = { 0, 0 };
	static const uint8_t huge[] = { 0xff, 0xff, 'a' };
	char out[8];
	struct dec d;

	dec_init(&d, ok, sizeof(ok));
	dec_str(&d, out, 3);
	CU_ASSERT_EQUAL(d.err, 0);
	CU_ASSERT_STRING_EQUAL(out, "abc");

	dec_init(&d, ok, sizeof(ok));
	dec_str(&d, out, 2);            /* longer than max */
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	CU_ASSERT_STRING_EQUAL(out, "");

	dec_init(&d, nul, sizeof(nul));
	dec_str(&d, out, 7);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	CU_ASSERT_STRING_EQUAL(out, "");

	dec_init(&d, trunc, sizeof(trunc));
	dec_str(&d, out, 7);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	CU_ASSERT_STRING_EQUAL(out, "");

	dec_init(&d, huge, sizeof(huge));
	dec_str(&d, out, 7);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);

	dec_init(&d, empty, sizeof(empty));
	memset(out, 'x', sizeof(out));
	dec_str(&d, out, 7);
	CU_ASSERT_EQUAL(d.err, 0);
	CU_ASSERT_STRING_EQUAL(out, "");

	dec_init(&d, empty, 1);         /* length itself cut */
	dec_str(&d, out, 7);
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
}

/* In place: each string ends up NUL-terminated where its bytes were, and
 * the fields after it read as written. */
static void test_dec_str_inplace(void)
{
	uint8_t buf[64];
	const char *a, *b, *c;
	struct enc e;
	struct dec d;

	enc_init(&e, buf, sizeof(buf));
	enc_str(&e, "job");
	enc_str(&e, "");
	enc_u32(&e, 0xa1b2c3d4u);
	enc_str(&e, "x");
	enc_u16(&e, 0x0102);
	CU_ASSERT_EQUAL_FATAL(e.err, 0);
	dec_init(&d, buf, e.len);
	a = dec_str_inplace(&d, 8);
	b = dec_str_inplace(&d, 8);
	CU_ASSERT_EQUAL(dec_u32(&d), 0xa1b2c3d4u);
	c = dec_str_inplace(&d, 8);
	CU_ASSERT_EQUAL(dec_u16(&d), 0x0102);
	CU_ASSERT_EQUAL(d.err, 0);
	CU_ASSERT_EQUAL(dec_left(&d), 0);
	CU_ASSERT_STRING_EQUAL(a, "job");
	CU_ASSERT_STRING_EQUAL(b, "");
	CU_ASSERT_STRING_EQUAL(c, "x");
	CU_ASSERT_PTR_EQUAL(a, (char *)buf);

	/* The rules of dec_str(): too long, NUL inside, cut short. */
	enc_init(&e, buf, sizeof(buf));
	enc_str(&e, "abcdef");
	dec_init(&d, buf, e.len);
	CU_ASSERT_STRING_EQUAL(dec_str_inplace(&d, 5), "");
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	buf[4] = 0;
	dec_init(&d, buf, e.len);
	CU_ASSERT_STRING_EQUAL(dec_str_inplace(&d, 8), "");
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
	dec_init(&d, buf, e.len - 1);
	CU_ASSERT_STRING_EQUAL(dec_str_inplace(&d, 8), "");
	CU_ASSERT_EQUAL(d.err, -CKPT_EPROTO);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "layout", test_layout },
		{ "enc_overflow", test_enc_overflow },
		{ "enc_str_limits", test_enc_str_limits },
		{ "dec_short", test_dec_short },
		{ "dec_str_rules", test_dec_str_rules },
		{ "dec_str_inplace", test_dec_str_inplace },
		{ NULL, NULL }
	};

	return unit_run("codec", tests);
}
