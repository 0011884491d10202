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
 * the CKPT_*_SIZE_VER0 bytes of the first release.  The sized list calls
 * must lay their elements out size bytes apart, each filled by the same
 * rule.
 *
 * Usage: grow JOB VERSION PATH, with $CKPT_SOCKET naming ckptd: it writes
 * JOB/VERSION (files PATH and "b") and JOB/v2 first.  Exits 0 when every
 * rule holds.
 */
#include <ckpt.h>
#include <errno.h>
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

/* A list call with elements of size bytes, as in a user's program. */
typedef int (*list_fn)(struct ckpt_client *c, void **out, size_t size);

static int versions2(struct ckpt_client *c, void **out, size_t size)
{
	return ckpt_list_versions2(c, job, (struct ckpt_version_info **)out,
				   size);
}

static int files2(struct ckpt_client *c, void **out, size_t size)
{
	return ckpt_list_files2(c, job, version, (struct ckpt_file_info **)out,
				size);
}

/* A file entry holding all of name (ckpt.h: it points at the whole path,
 * in the list's own allocation) names the entry's path; a stat leaves it
 * NULL, so it is then cleared for the comparison with the stat's bytes. */
static void check_name(const char *what, unsigned char *e, size_t size)
{
	size_t off = offsetof(struct ckpt_file_info, name);
	const char *name;

	if (size < off + sizeof(name))
		return;
	memcpy(&name, e + off, sizeof(name));
	CHECK(name && !strcmp(name, (const char *)e),
	      "%s size %zu: name is not the path", what, size);
	memset(e + off, 0, sizeof(name));
}

/*
 * A list of two entries with elements of size bytes: each element starts
 * size bytes after the one before, its first bytes are those of one of refs
 * (a different one each), and the bytes the library does not know are zero.
 */
static void check_list(const char *what, list_fn fn, struct ckpt_client *c,
		       const unsigned char *const refs[2], size_t known,
		       size_t size)
{
	size_t cmp = size < known ? size : known, i, j;
	unsigned char *arr = NULL, *e;
	int n, seen[2] = { 0, 0 };

	n = fn(c, (void **)&arr, size);
	CHECK(n == 2, "%s size %zu: returned %d, want 2", what, size, n);
	for (i = 0; n == 2 && i < 2; i++) {
		e = arr + i * size;
		if (fn == files2)
			check_name(what, e, size);
		for (j = 0; j < 2 && memcmp(e, refs[j], cmp); j++)
			;
		CHECK(j < 2 && !seen[j]++, "%s size %zu: element %zu is not at %zu",
		      what, size, i, i * size);
		for (j = known; j < size; j++)
			CHECK(e[j] == 0, "%s size %zu: element %zu byte %zu not zeroed",
			      what, size, i, j);
	}
	free(arr);
	CHECK(fn(c, (void **)&arr, 0) == -EINVAL, "%s size 0: not -EINVAL",
	      what);
}

/* Two versions of job (version and "v2"), two files in version (path and
 * "b"): the lists' entries, by their stat. */
static void check_lists(struct ckpt_client *c)
{
	struct ckpt_version_info v[2];
	struct ckpt_file_info f[2];
	const unsigned char *vrefs[2] = { (void *)&v[0], (void *)&v[1] };
	const unsigned char *frefs[2] = { (void *)&f[0], (void *)&f[1] };
	/* Whole structs, the middle of a field, and longer ones; every size
	 * holds the names that tell the two entries apart. */
	const size_t sizes[] = { sizeof(v[0]), sizeof(f[0]),
				 offsetof(struct ckpt_file_info, size) + 5,
				 offsetof(struct ckpt_version_info, state) + 2,
				 sizeof(f[0]) + EXTRA + 1 };
	size_t i;

	if (ckpt_stat_version2(c, job, version, &v[0], sizeof(v[0])) < 0 ||
	    ckpt_stat_version2(c, job, "v2", &v[1], sizeof(v[1])) < 0 ||
	    ckpt_stat_file2(c, job, version, path, &f[0], sizeof(f[0])) < 0 ||
	    ckpt_stat_file2(c, job, version, "b", &f[1], sizeof(f[1])) < 0) {
		CHECK(0, "stat failed");
		return;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_list("ckpt_list_versions2", versions2, c, vrefs,
			   sizeof(v[0]), sizes[i]);
		if (sizes[i] >= offsetof(struct ckpt_file_info, size))
			check_list("ckpt_list_files2", files2, c, frefs,
				   sizeof(f[0]), sizes[i]);
	}
}

/* A ckptd alone lists no nodes; an element size of 0 is refused.  (The
 * entries of a cluster: t_cluster_membership.) */
static void check_nodes(struct ckpt_client *c)
{
	struct ckpt_node_info *n = NULL;
	int ret;

	ret = ckpt_list_nodes(c, &n, sizeof(*n));
	CHECK(ret == 0, "ckpt_list_nodes alone: returned %d (%s)", ret,
	      ckpt_strerror(ret));
	free(n);
	CHECK(ckpt_list_nodes(c, &n, 0) == -EINVAL,
	      "ckpt_list_nodes size 0: not -EINVAL");
}

/* Write job/version (files path and "b") and job/v2, sealed and LOCAL. */
static int make_versions(struct ckpt_client *c)
{
	static const char *const vers[2] = { NULL, "v2" };
	static char bytes[3000];
	struct ckpt_version *v;
	int i, ret;

	for (i = 0; i < 2; i++) {
		ret = ckpt_begin(c, job, vers[i] ? vers[i] : version, &v);
		if (ret < 0)
			return ret;
		ret = ckpt_write(v, path, bytes, 1000 + 1000 * (size_t)i, 0);
		if (ret == 0 && !vers[i])
			ret = ckpt_write(v, "b", bytes, sizeof(bytes), 0);
		if (ret == 0)
			ret = ckpt_commit(v);
		if (ret == 0)
			ret = ckpt_wait(v, CKPT_LOCAL, 30000);
		ckpt_version_free(v);
		if (ret < 0)
			return ret;
	}
	return 0;
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
	ret = make_versions(c);
	if (ret < 0) {
		fprintf(stderr, "grow: writing %s: %s\n", job,
			ckpt_strerror(ret));
		ckpt_disconnect(c);
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
	check_lists(c);
	check_nodes(c);
	ckpt_disconnect(c);
	return failures ? 1 : 0;
}
