/*
 * crc32c.h - CRC32C (Castagnoli), the checksum of every tier, from ISA-L.
 *
 * crc32c(buf, len) is the standard CRC32C ("123456789" -> 0xE3069283).
 * crc32c_update() extends a running value: crc32c_update(crc32c(a), b) equals
 * crc32c(a || b), and crc32c_update(0, ...) equals crc32c(...).
 *
 * crc32c_combine(crc32c(a), crc32c(b), len(b)) equals crc32c(a || b) with no
 * pass over the bytes (arithmetic modulo the polynomial, O(log len)): a
 * frame whose payload wraps data of a known CRC gets its own CRC from it.
 * len(b) below 2^61 bytes.
 */
#ifndef CKPT_CRC32C_H
#define CKPT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len);

static inline uint32_t crc32c(const void *buf, size_t len)
{
	return crc32c_update(0, buf, len);
}

uint32_t crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

#endif
