/*
 * fuzz_conf.c - libFuzzer harness for the config parser: any bytes as an
 * INI file must give 0 or a clear error (file, line, message), never a
 * crash, and a config that loads must print back to one that loads to the
 * same struct.
 *
 * fuzz-sources: lib/conf.c lib/confval.c lib/log.c
 * fuzz-libs: -linih
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Load len bytes of text as a config file (through a memfd). */
static int load(const void *text, size_t len, struct conf *c,
		struct conf_err *err)
{
	char path[64];
	int fd, ret;

	fd = memfd_create("fuzz-conf", 0);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	conf_defaults(c);
	ret = conf_load(c, path, err);
	close(fd);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf a, b;
	struct conf_err err;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f;

	memset(&err, 0, sizeof(err));
	if (load(data, size, &a, &err) != 0)
		return 0;
	if (memchr(err.msg, 0, sizeof(err.msg)) == NULL)
		abort();
	/* What loads must round-trip through conf_print. */
	f = open_memstream(&text, &tlen);
	if (!f)
		return 0;
	conf_print(&a, f);
	fclose(f);
	if (load(text, tlen, &b, &err) != 0 || memcmp(&a, &b, sizeof(a)))
		abort();
	free(text);
	return 0;
}
