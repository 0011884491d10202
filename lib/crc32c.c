/*
 * crc32c.c - CRC32C (Castagnoli) on top of ISA-L's crc32_iscsi().
 *
 * ISA-L's crc32_iscsi() is the raw table/PCLMUL kernel: it neither inverts
 * the seed on entry nor the result on exit.  The standard CRC32C starts from
 * 0xFFFFFFFF and inverts the result, so a running value crc is resumed by
 * passing ~crc as the seed and inverting what comes back.  That makes
 * crc32c_update(0, ...) the plain CRC32C and lets updates chain.
 *
 * crc32_iscsi() takes an int length, so long buffers are fed in pieces.
 */
#include <limits.h>

#include <isa-l/crc.h>

#include "crc32c.h"

/* Largest piece handed to ISA-L at once; well below INT_MAX. */
#define CRC32C_PIECE (1u << 30)

uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	unsigned char *p = (unsigned char *)buf;
	uint32_t raw = ~crc;

	while (len > 0) {
		size_t n = len < CRC32C_PIECE ? len : CRC32C_PIECE;

		raw = crc32_iscsi(p, (int)n, raw);
		p += n;
		len -= n;
	}
	return ~raw;
}

/* ---- combining ---------------------------------------------------------- */

/*
 * CRCs as polynomials over GF(2), reflected (bit 31 is x^0), modulo the
 * Castagnoli polynomial.  crc(a || b) = crc(a) * x^(8 len(b)) + crc(b): the
 * pre- and post-inversion of the standard CRC cancel out in that sum (both
 * sides carry them the same way), so only the shift of crc(a) past len(b)
 * zero bytes is computed, by multiplying with x^(8 len(b)) mod P, itself a
 * product of the powers x^(2^i) kept in a table.
 */
#define CRC32C_POLY 0x82f63b78u      /* reflected */

/* a * b mod P. */
static uint32_t mul_mod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	while (m) {
		if (a & m)
			p ^= b;
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return p;
}

/* x^(2^i) mod P for i = 0..63, made once (two threads racing make the
 * same values). */
static uint32_t x2n[64];
static int x2n_made;

static void x2n_make(void)
{
	uint32_t p = 1u << 30;       /* x^1 */
	int i;

	for (i = 0; i < 64; i++) {
		__atomic_store_n(&x2n[i], p, __ATOMIC_RELAXED);
		p = mul_mod(p, p);
	}
	__atomic_store_n(&x2n_made, 1, __ATOMIC_RELEASE);
}

/* x^(8 n) mod P. */
static uint32_t x8n_mod(uint64_t n)
{
	uint32_t p = 1u << 31;       /* x^0 */
	int i = 3;                   /* 8 n = n << 3 */

	if (!__atomic_load_n(&x2n_made, __ATOMIC_ACQUIRE))
		x2n_make();
	while (n && i < 64) {
		if (n & 1)
			p = mul_mod(__atomic_load_n(&x2n[i], __ATOMIC_RELAXED),
				    p);
		n >>= 1;
		i++;
	}
	return p;
}

uint32_t crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	return mul_mod(x8n_mod(len2), crc1) ^ crc2;
}
