/*
 * namelist.c - a part's name list: format and clash checks (namelist.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "crc32c.h"
#include "namelist.h"

char *namelist_entry(const char *path, int dir)
{
	size_t l = strlen(path);
	char *e = malloc(l + 2);

	if (!e)
		return NULL;
	memcpy(e, path, l);
	e[l] = '/';
	e[l + !!dir] = 0;
	return e;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void namelist_sort(char **e, uint32_t n)
{
	qsort(e, n, sizeof(*e), cmp_str);
}

int namelist_encode(char *const *e, uint32_t n, uint8_t **buf, size_t *len)
{
	size_t size = NAMELIST_HDR, off = NAMELIST_HDR, l;
	uint32_t i;

	for (i = 0; i < n; i++)
		size += strlen(e[i]) + 1;
	*buf = malloc(size);
	if (!*buf)
		return -ENOMEM;
	memcpy(*buf, NAMELIST_MAGIC, 8);
	put_le32(*buf + 8, n);
	for (i = 0; i < n; i++) {
		l = strlen(e[i]) + 1;
		memcpy(*buf + off, e[i], l);
		off += l;
	}
	put_le32(*buf + 12, crc32c(*buf + NAMELIST_HDR, size - NAMELIST_HDR));
	*len = size;
	return 0;
}

int namelist_ok(const uint8_t *buf, size_t len)
{
	uint32_t count, seen = 0;
	size_t i, start = NAMELIST_HDR;

	if (len < NAMELIST_HDR || memcmp(buf, NAMELIST_MAGIC, 8) ||
	    get_le32(buf + 12) != crc32c(buf + NAMELIST_HDR,
					 len - NAMELIST_HDR))
		return 0;
	count = get_le32(buf + 8);
	for (i = NAMELIST_HDR; i < len; i++) {
		if (buf[i])
			continue;
		if (i == start || i - start > NAMELIST_ENTRY_MAX)
			return 0;
		seen++;
		start = i + 1;
	}
	return seen == count && start == len;
}

/* The first of mine[0 .. n) not before key in strcmp order (n if none). */
static uint32_t lower_bound(char *const *mine, uint32_t n, const char *key)
{
	uint32_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(mine[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int has(char *const *mine, uint32_t n, const char *key)
{
	uint32_t i = lower_bound(mine, n, key);

	return i < n && !strcmp(mine[i], key);
}

const char *namelist_clash(char *const *mine, uint32_t n, const char *q,
			   char *scratch)
{
	size_t ql = strlen(q);
	const char *s;
	uint32_t i;

	if (!ql || ql > NAMELIST_ENTRY_MAX)
		return NULL;
	/* A file of mine at q, or on the way to it ("a" for "a/b", and for
	 * the directory "a/"): mine's files never end in '/'. */
	if (q[ql - 1] != '/' && has(mine, n, q))
		return q;
	for (s = strchr(q, '/'); s; s = strchr(s + 1, '/')) {
		memcpy(scratch, q, (size_t)(s - q));
		scratch[s - q] = 0;
		if (has(mine, n, scratch))
			return scratch;
	}
	if (q[ql - 1] == '/')
		return NULL;
	/* q a file, and anything of mine under it: those sort together,
	 * from the first not before "q/". */
	memcpy(scratch, q, ql);
	scratch[ql] = '/';
	scratch[ql + 1] = 0;
	i = lower_bound(mine, n, scratch);
	if (i < n && !strncmp(mine[i], scratch, ql + 1))
		return q;
	return NULL;
}

const char *namelist_first_clash(char *const *mine, uint32_t n,
				 const uint8_t *buf, size_t len,
				 char *scratch)
{
	const char *p = (const char *)buf + NAMELIST_HDR;
	const char *end = (const char *)buf + len, *hit;

	for (; p < end; p += strlen(p) + 1) {
		hit = namelist_clash(mine, n, p, scratch);
		if (hit)
			return hit;
	}
	return NULL;
}
