/*
 * fuzz_namelist.c - libFuzzer harness for namelist_ok() and the clash walk
 * of a list that passed it, as pfsnames.c reads another node's list.  A
 * copy with its count and CRC made right is judged too, so that mutations
 * get past the checksum.  What a passing list promises is checked: its
 * entries are NUL-terminated inside it, count of them, none empty or too
 * long, and re-encoding them gives the same bytes.
 *
 * fuzz-sources: lib/namelist.c lib/codec.c lib/crc32c.c lib/xattr.c lib/sys.c
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "namelist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *mine[] = { "a", "a/", "b/c", "d/", "x.y", "z/z/z" };

static void judge(const uint8_t *buf, size_t len)
{
	char scratch[NAMELIST_ENTRY_MAX + 2], **e;
	const char *p, *end;
	uint32_t n = 0, count;
	uint8_t *again;
	size_t alen;

	if (!namelist_ok(buf, len))
		return;
	(void)namelist_first_clash(mine, 6, buf, len, scratch);
	count = get_le32(buf + 8);
	e = calloc((size_t)count + 1, sizeof(*e));
	if (!e)
		return;
	p = (const char *)buf + NAMELIST_HDR;
	end = (const char *)buf + len;
	for (; p < end; p += strlen(p) + 1) {
		if (n == count || !*p || strlen(p) > NAMELIST_ENTRY_MAX)
			abort();
		e[n++] = (char *)p;
	}
	if (n != count || namelist_encode(e, n, &again, &alen) < 0)
		abort();
	if (alen != len || memcmp(again, buf, len))
		abort();
	free(again);
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint32_t n = 0;
	size_t i;

	judge(data, size);
	if (size < NAMELIST_HDR || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	memcpy(copy, NAMELIST_MAGIC, 8);
	for (i = NAMELIST_HDR; i < size; i++)
		n += !copy[i];
	put_le32(copy + 8, n);
	put_le32(copy + 12, crc32c(copy + NAMELIST_HDR, size - NAMELIST_HDR));
	judge(copy, size);
	free(copy);
	return 0;
}
