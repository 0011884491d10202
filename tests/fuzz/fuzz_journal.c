/*
 * fuzz_journal.c - libFuzzer harness for journal_decode(): the input is
 * walked as a journal, record after record, as journal_load() does.  A copy
 * whose first record has its CRC made right is walked too, so that
 * mutations get past the checksum.
 *
 * fuzz-sources: lib/journal.c lib/codec.c lib/crc32c.c lib/sys.c lib/xattr.c
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *buf, size_t len)
{
	struct pfs_chunk *c;
	struct journal_rec r;
	size_t pos = 0;
	long n;

	while ((n = journal_decode(buf + pos, len - pos, &r)) > 0) {
		/* What decode promises: the record lies inside the bytes. */
		if ((size_t)n > len - pos || r.n > JOURNAL_MAX_CHUNKS ||
		    (size_t)n != journal_rec_size(r.n))
			abort();
		c = malloc(sizeof(*c) * (r.n + 1));
		if (!c)
			return;
		journal_rec_chunks(&r, c);
		free(c);
		pos += (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	size_t need;
	uint32_t n;

	walk(data, size);
	if (size < JOURNAL_REC_FIXED || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	/* A count that fits the input, and the CRC to match. */
	n = get_le32(copy + 16) %
	    ((size - JOURNAL_REC_FIXED) / JOURNAL_CHUNK_LEN + 1);
	need = journal_rec_size(n);
	put_le32(copy + 16, n);
	put_le32(copy + need - 4, crc32c(copy, need - 4));
	walk(copy, size);
	free(copy);
	return 0;
}
