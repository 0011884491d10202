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
