/*
 * fuzz_shardmeta.c - libFuzzer harness for shardmeta_decode().  As well as
 * the raw input, a copy with its trailing CRC made right is decoded, so that
 * mutations get past the checksum.  What decodes must satisfy the decoder's
 * promises and encode back to the same bytes.
 *
 * fuzz-sources: lib/shardmeta.c lib/codec.c lib/crc32c.c lib/names.c lib/xattr.c
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "shardmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_one(const uint8_t *buf, size_t len)
{
	struct shard_meta m;
	uint8_t *again;
	uint64_t stripe;

	if (shardmeta_decode(buf, len, &m))
		return;
	/* What decode promises: a valid record whose stripes cover the
	 * stream, a shard size that is a file size, crcs to index. */
	stripe = (uint64_t)m.k * m.chunk;
	if (shardmeta_check(&m) || (m.nstripes && !m.crcs) ||
	    m.nstripes * stripe < m.stream_len ||
	    (m.nstripes && (m.nstripes - 1) * stripe >= m.stream_len) ||
	    m.nstripes > (uint64_t)INT64_MAX / m.chunk)
		abort();
	if (m.nstripes)
		(void)m.crcs[m.nstripes - 1];
	/* Encoding it again gives the same bytes. */
	if (shardmeta_size(&m) != len || !(again = malloc(len)))
		abort();
	if (shardmeta_encode(&m, again, len) != (long)len ||
	    memcmp(again, buf, len))
		abort();
	free(again);
	shardmeta_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	decode_one(data, size);
	if (size < 4 || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	put_le32(copy + size - 4, crc32c(copy, size - 4));
	decode_one(copy, size);
	free(copy);
	return 0;
}
