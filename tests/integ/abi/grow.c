/*
 * grow.c - t_abi's check of ckpt.h's growth rule, built against the header
 * and linked against libckpt.so alone, like a user's program.
 *
 * A program built against an older, shorter struct is simulated by passing
 * a size smaller than sizeof (a truncated copy, ending at a field or in the
 * middle of one); a program built against a newer, longer one by a size
 * larger than sizeof.  Each call fills a buffer preset with guard bytes, and
 * the check is that exactly size bytes changed hands: the bytes the library
 * knows equal a full call's, the bytes past its sizeof are zero, and every
 * guard byte past size is untouched.  The original calls must fill exactly
 * the CKPT_*_SIZE_VER0 bytes of the first release.
 *
 * Usage: grow JOB VERSION PATH (a sealed version holding PATH), with
 * $CKPT_SOCKET naming ckptd.  Exits 0 when every rule holds.
 */
#include <ckpt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 0xa5
#define EXTRA 64        /* a newer header's appended bytes */

static const char *job, *version, *path;
static int failures;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "grow: " __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

/* Calls one sized function: fills out with size bytes, returns as it does. */
typedef int (*fill_fn)(struct ckpt_client *c, void *out, size_t size);
/* Calls one original (unsized) function. */
typedef int (*fill0_fn)(struct ckpt_client *c, void *out);

static int status2(struct ckpt_client *c, void *out, size_t size)
{
	return ckpt_status2(c, out, size);
}

static int status0(struct ckpt_client *c, void *out)
{
	return ckpt_status(c, out);
}

static int version2(struct ckpt_client *c, void *out, size_t size)
{
	return ckpt_stat_version2(c, job, version, out, size);
}

static int version0(struct ckpt_client *c, void *out)
{
	return ckpt_stat_version(c, job, version, out);
}

static int file2(struct ckpt_client *c, void *out, size_t size)
{
	return ckpt_stat_file2(c, job, version, path, out, size);
}

static int file0(struct ckpt_client *c, void *out)
{
	return ckpt_stat_file(c, job, version, path, out);
}

/*
 * Fill size bytes of a guarded buffer and check them against ref, the
 * library's full struct of known bytes.  cmp bytes of the filled part must
 * match ref (the rest of the known part may differ between calls: counters).
 */
static void check_size(const char *what, fill_fn fn, struct ckpt_client *c,
		       const unsigned char *ref, size_t known, size_t size,
		       size_t cmp)
{
	size_t cap = known + 2 * EXTRA, i;
	unsigned char *buf = malloc(cap);
	int ret;

	if (!buf) {
		CHECK(0, "out of memory");
		return;
	}
	memset(buf, GUARD, cap);
	ret = fn(c, buf, size);
	CHECK(ret == (int)known, "%s size %zu: returned %d, want %zu", what,
	      size, ret, known);
	if (ret >= 0) {
		CHECK(!memcmp(buf, ref, cmp < size ? cmp : size),
		      "%s size %zu: known bytes differ", what, size);
		for (i = known; i < size; i++)
			CHECK(buf[i] == 0, "%s size %zu: byte %zu not zeroed",
			      what, size, i);
		for (i = size; i < cap; i++)
			if (buf[i] != GUARD)
				break;
		CHECK(i == cap, "%s size %zu: byte %zu past size written",
		      what, size, i);
	}
	free(buf);
}

/* The original call fills exactly ver0 bytes. */
static void check_ver0(const char *what, fill0_fn fn, struct ckpt_client *c,
		       const unsigned char *ref, size_t ver0, size_t cmp)
{
	unsigned char buf[4096];
	size_t i;
	int ret;

	memset(buf, GUARD, sizeof(buf));
	ret = fn(c, buf);
	CHECK(ret == 0, "%s: returned %d (%s)", what, ret, ckpt_strerror(ret));
	CHECK(!memcmp(buf, ref, cmp < ver0 ? cmp : ver0),
	      "%s: first-release bytes differ", what);
	for (i = ver0; i < sizeof(buf) && buf[i] == GUARD; i++)
		;
	CHECK(i == sizeof(buf), "%s: byte %zu past the first release written",
	      what, i);
}

/*
 * All the rules for one struct: sizes 1, a field's end, the middle of a
 * field, the first release, sizeof, and sizeof + EXTRA.
 */
static void check_struct(const char *what, fill_fn fn, fill0_fn fn0,
			 struct ckpt_client *c, size_t known, size_t ver0,
			 size_t field_end, size_t cmp)
{
	unsigned char *ref = calloc(1, known);
	const size_t sizes[] = { 1, field_end, field_end + 3, ver0, known,
				 known + EXTRA };
	size_t i;
	int ret;

	if (!ref) {
		CHECK(0, "out of memory");
		return;
	}
	ret = fn(c, NULL, 0);
	CHECK(ret == (int)known, "%s size 0: returned %d, want %zu", what,
	      ret, known);
	ret = fn(c, ref, known);
	CHECK(ret == (int)known, "%s: returned %d (%s)", what, ret,
	      ckpt_strerror(ret));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		check_size(what, fn, c, ref, known, sizes[i], cmp);
	check_ver0(what, fn0, c, ref, ver0, cmp);
	free(ref);
}

int main(int argc, char **argv)
{
	struct ckpt_client *c;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: grow JOB VERSION PATH\n");
		return 2;
	}
	job = argv[1];
	version = argv[2];
	path = argv[3];
	ret = ckpt_connect(NULL, &c);
	if (ret < 0) {
		fprintf(stderr, "grow: connect: %s\n", ckpt_strerror(ret));
		return 1;
	}
	/* Status counters move between calls: compare only the protocol
	 * version; the guards and zeros are what matter here. */
	check_struct("ckpt_status2", status2, status0, c,
		     sizeof(struct ckpt_status), CKPT_STATUS_SIZE_VER0,
		     offsetof(struct ckpt_status, pid) + 8,
		     offsetof(struct ckpt_status, clients));
	/* A sealed version and its file do not change. */
	check_struct("ckpt_stat_version2", version2, version0, c,
		     sizeof(struct ckpt_version_info),
		     CKPT_VERSION_INFO_SIZE_VER0,
		     offsetof(struct ckpt_version_info, state) + 4,
		     sizeof(struct ckpt_version_info));
	check_struct("ckpt_stat_file2", file2, file0, c,
		     sizeof(struct ckpt_file_info), CKPT_FILE_INFO_SIZE_VER0,
		     offsetof(struct ckpt_file_info, size) + 8,
		     sizeof(struct ckpt_file_info));
	ckpt_disconnect(c);
	return failures ? 1 : 0;
}
