/*
 * fuzz_hostlist.c - libFuzzer harness for Slurm hostlist expansion: any
 * bytes give 0 or -EINVAL/-E2BIG/-ENAMETOOLONG, never a crash; a list that
 * expands has as many names as hostlist_count() says, each 1 to
 * HOSTLIST_NAME_MAX bytes.  The bound is small so that each input is quick.
 *
 * fuzz-sources: lib/hostlist.c
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostlist hl;
	size_t n = 0, i;
	char *s = malloc(size + 1);
	int ret;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	ret = hostlist_expand(s, 4096, &hl);
	if (ret != 0 && ret != -EINVAL && ret != -E2BIG &&
	    ret != -ENAMETOOLONG && ret != -ENOMEM)
		abort();
	if (ret == 0) {
		if (hostlist_count(s, 4096, &n) != 0 || n != hl.n)
			abort();
		for (i = 0; i < hl.n; i++)
			if (!hl.hosts[i][0] ||
			    strlen(hl.hosts[i]) > HOSTLIST_NAME_MAX)
				abort();
	}
	hostlist_release(&hl);
	free(s);
	return 0;
}
