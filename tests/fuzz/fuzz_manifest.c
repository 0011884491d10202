/*
 * fuzz_manifest.c - libFuzzer harness for manifest_decode() and
 * seghdr_decode().  As well as the raw input, a copy with its trailing CRC
 * made right is decoded, so that mutations get past the checksum.
 *
 * fuzz-sources: lib/manifest.c lib/codec.c lib/crc32c.c lib/names.c lib/xattr.c
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_one(const uint8_t *buf, size_t len)
{
	struct manifest m;
	uint32_t i;

	if (manifest_decode(buf, len, &m))
		return;
	/* What decode promises: every record indexes a file, and its end
	 * does not overflow (it may pass the size: a truncated file). */
	for (i = 0; i < m.nrecs; i++) {
		if (m.recs[i].file >= m.nfiles ||
		    m.recs[i].file_off > UINT64_MAX - m.recs[i].len)
			abort();
	}
	manifest_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t blk[SEGHDR_SIZE];
	struct seghdr h;
	uint8_t *copy;

	decode_one(data, size);
	if (size < 4 || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	put_le32(copy + size - 4, crc32c(copy, size - 4));
	decode_one(copy, size);
	free(copy);

	memset(blk, 0, sizeof(blk));
	memcpy(blk, data, size < sizeof(blk) ? size : sizeof(blk));
	(void)seghdr_decode(blk, &h);
	put_le32(blk + SEGHDR_SIZE - 4, crc32c(blk, SEGHDR_SIZE - 4));
	(void)seghdr_decode(blk, &h);
	return 0;
}
