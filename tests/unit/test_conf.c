/*
 * test_conf.c - unit tests for lib/conf: ckptd's INI configuration.
 *
 * Config files are written into a private mkdtemp directory and loaded back.
 * The tests cover the built-in defaults, a file that sets every key, each way
 * a value can be bad (with the line and message the user would see, and the
 * caller's struct left untouched), unknown keys and sections, libinih syntax
 * errors and a conf_print -> conf_load round trip, for the sections
 * [ckptd] and [drain] (conf_set, conf_finish and conf_parse_size:
 * test_conf_set.c).  The list type is tested through its one
 * key, [cluster] nodes: parsing, empty lists, the bounds on the count, an
 * item's length and the printed line, and the print round trip.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "conf.h"
#include "conf_test.h"
/* Found by fuzz_conf: values that load must print back to themselves. */
static void test_print_edges(void)
{
	struct conf a, b;
	struct conf_err err;
	char text[400], *out = NULL;
	size_t len = 0;
	FILE *f;

	/* A value starting with ';' (no blank before it: not a comment). */
	conf_defaults(&a);
	CU_ASSERT_EQUAL_FATAL(load_str(&a, "[drain]\ntarget=;odd\n", &err), 0);
	CU_ASSERT_STRING_EQUAL(a.drain_target, ";odd");
	/* A value as long as a line allows: "target=" + 192 bytes. */
	memset(text, 0, sizeof(text));
	strcpy(text, "[drain]\ntarget=/");
	memset(text + strlen(text), 'p', 191);
	strcat(text, "\n");
	conf_defaults(&b);
	CU_ASSERT_EQUAL_FATAL(load_str(&b, text, &err), 0);
	CU_ASSERT_EQUAL(strlen(b.drain_target), 192);
	for (int i = 0; i < 2; i++) {
		struct conf *c = i ? &b : &a, back;

		f = open_memstream(&out, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		conf_print(c, f);
		fclose(f);
		conf_defaults(&back);
		CU_ASSERT_EQUAL(load_str(&back, out, &err), 0);
		CU_ASSERT(conf_equal(c, &back));
		free(out);
		out = NULL;
	}
	/* A NUL byte in a line is refused, not silently cut. */
	CU_ASSERT_EQUAL(write_cfg(""), 0);
	f = fopen(cfgpath, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	{
		static const char nul[] = "[ckptd]\nkeep = 3\0 junk\n";

		fwrite(nul, 1, sizeof(nul) - 1, f);
	}
	fclose(f);
	conf_defaults(&a);
	CU_ASSERT_EQUAL(conf_load(&a, cfgpath, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NUL"));
	unlink(cfgpath);
}

static void test_defaults(void)
{
	struct conf c;

	conf_defaults(&c);
	CU_ASSERT_STRING_EQUAL(c.dir, "/var/lib/ckpt");
	CU_ASSERT_STRING_EQUAL(c.socket, "");
	CU_ASSERT_STRING_EQUAL(c.store, "");
	CU_ASSERT_EQUAL(c.staging, 2 * GiB);
	CU_ASSERT_EQUAL(c.staging_client, 256 * MiB);
	CU_ASSERT_EQUAL(c.staging_per_uid, 0);
	CU_ASSERT_EQUAL(c.staging_wait, 30);
	CU_ASSERT_EQUAL(c.staging_hugepages, 1);
	CU_ASSERT_EQUAL(c.max_conns_per_uid, 256);
	CU_ASSERT_EQUAL(c.capacity, 0);
	CU_ASSERT_EQUAL(c.reserve, 256 * MiB);
	CU_ASSERT_EQUAL(c.keep, 3);
	CU_ASSERT_EQUAL(c.segment, 64 * MiB);
	CU_ASSERT_EQUAL(c.chunk, 4 * MiB);
	CU_ASSERT_EQUAL(c.queue_depth, 128);
	CU_ASSERT_EQUAL(c.nice, 10);
	CU_ASSERT_EQUAL(c.direct, 1);
	CU_ASSERT_EQUAL(c.mlock, 1);
	CU_ASSERT_STRING_EQUAL(c.log_level, "info");
	CU_ASSERT_STRING_EQUAL(c.log, "stderr");

	CU_ASSERT_STRING_EQUAL(c.drain_target, "");
	CU_ASSERT_EQUAL(c.drain_bandwidth, 0);
	CU_ASSERT_EQUAL(c.drain_every, 1);
	CU_ASSERT_EQUAL(c.drain_keep, 0);
	CU_ASSERT_EQUAL(c.drain_compress, 0);
	CU_ASSERT_EQUAL(c.drain_shuffle, 0);
	CU_ASSERT_EQUAL(c.drain_incremental, 0);
	CU_ASSERT_EQUAL(c.drain_threads, 2);
	CU_ASSERT_EQUAL(c.drain_chunk, 4 * MiB);
	CU_ASSERT_EQUAL(c.drain_retry_max, 60);
	CU_ASSERT_EQUAL(c.drain_manifest_cache, 256 * MiB);
	CU_ASSERT_EQUAL(c.cluster_heartbeat_timeout, 5000);
}

/* Every key, with comments, blanks, indentation, CRLF and odd case. */
static void test_full_file(void)
{
	static const char text[] =
		"; ckptd test configuration\n"
		"# both comment styles\n"
		"\n"
		"[ckptd]\n"
		"dir = /srv/ckpt\n"
		"socket=/run/ckptd.sock\n"
		"  store = /srv/ckpt/chunks   ; inline comment\n"
		"staging = 8G\r\n"
		"staging_client = 512m\n"
		"staging_per_uid = 2G\n"
		"staging_wait = 120\n"
		"max_conns_per_uid = 1000\n"
		"capacity = 1T\n"
		"reserve = 0\n"
		"keep = 10\n"
		"\tsegment = 128M\n"
		"chunk = 1048576\n"
		"queue_depth = 4096\n"
		"direct = no\n"
		"mlock = OFF\n"
		"log_level = DEBUG\n"
		"log: syslog\n"
		"\n"
		"[drain]\n"
		"target = /lustre/ckpt runs\n"
		"bandwidth = 500M\n"
		"every = 2\n"
		"keep = 4\n"
		"compress = ZSTD:3\n"
		"shuffle = 2\n"
		"incremental = yes\n"
		"threads = 64\n"
		"chunk = 8M\n"
		"retry_max = 300\n";
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	CU_ASSERT_EQUAL_FATAL(load_str(&c, text, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.dir, "/srv/ckpt");
	CU_ASSERT_STRING_EQUAL(c.socket, "/run/ckptd.sock");
	CU_ASSERT_STRING_EQUAL(c.store, "/srv/ckpt/chunks");
	CU_ASSERT_EQUAL(c.staging, 8 * GiB);
	CU_ASSERT_EQUAL(c.staging_client, 512 * MiB);
	CU_ASSERT_EQUAL(c.staging_per_uid, 2 * GiB);
	CU_ASSERT_EQUAL(c.staging_wait, 120);
	CU_ASSERT_EQUAL(c.max_conns_per_uid, 1000);
	CU_ASSERT_EQUAL(c.capacity, 1024 * GiB);
	CU_ASSERT_EQUAL(c.reserve, 0);
	CU_ASSERT_EQUAL(c.keep, 10);
	CU_ASSERT_EQUAL(c.segment, 128 * MiB);
	CU_ASSERT_EQUAL(c.chunk, 1 * MiB);
	CU_ASSERT_EQUAL(c.queue_depth, 4096);
	CU_ASSERT_EQUAL(c.direct, 0);
	CU_ASSERT_EQUAL(c.mlock, 0);
	CU_ASSERT_STRING_EQUAL(c.log_level, "debug");
	CU_ASSERT_STRING_EQUAL(c.log, "syslog");
	CU_ASSERT_STRING_EQUAL(c.drain_target, "/lustre/ckpt runs");
	CU_ASSERT_EQUAL(c.drain_bandwidth, 500 * MiB);
	CU_ASSERT_EQUAL(c.drain_every, 2);
	CU_ASSERT_EQUAL(c.drain_keep, 4);
	CU_ASSERT_EQUAL(c.drain_compress, 3);
	CU_ASSERT_EQUAL(c.drain_shuffle, 2);
	CU_ASSERT_EQUAL(c.drain_incremental, 1);
	CU_ASSERT_EQUAL(c.drain_threads, 64);
	CU_ASSERT_EQUAL(c.drain_chunk, 8 * MiB);
	CU_ASSERT_EQUAL(c.drain_retry_max, 300);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
}

/* A file sets only what it names; the rest keeps the caller's values. */
static void test_partial_file(void)
{
	struct conf_err err;
	struct conf c, want;

	conf_defaults(&c);
	c.keep = 42;
	want = c;
	want.queue_depth = 64;
	CU_ASSERT_EQUAL(load_str(&c, "[ckptd]\nqueue_depth = 64\n", &err), 0);
	CU_ASSERT(conf_equal(&c, &want));
	CU_ASSERT_EQUAL(load_str(&c, "", &err), 0);
	CU_ASSERT(conf_equal(&c, &want));
}

struct bad_case {
	const char *line;       /* placed on line 4 of the file */
	const char *msg;        /* the whole message err->msg must hold */
};

static const struct bad_case bad_values[] = {
	{ "staging = 2X", "line 4: staging: '2X' is not a size" },
	{ "staging = -1", "line 4: staging: '-1' is not a size" },
	{ "staging =", "line 4: staging: '' is not a size" },
	{ "staging = 1.5G", "line 4: staging: '1.5G' is not a size" },
	{ "staging = 2GB", "line 4: staging: '2GB' is not a size" },
	{ "staging = 8M", "line 4: staging: '8M' is below the minimum 16M" },
	{ "staging = 99999999T", "line 4: staging: '99999999T' is too large" },
	{ "staging_client = 1M",
	  "line 4: staging_client: '1M' is below the minimum 4M" },
	{ "capacity = lots", "line 4: capacity: 'lots' is not a size" },
	{ "reserve = 1Q", "line 4: reserve: '1Q' is not a size" },
	{ "segment = 8G", "line 4: segment: '8G' is above the maximum 4G" },
	{ "segment = 512K", "line 4: segment: '512K' is below the minimum 1M" },
	{ "segment = 1048577",
	  "line 4: segment: '1048577' is not a multiple of 4096" },
	{ "chunk = 32K", "line 4: chunk: '32K' is below the minimum 64K" },
	{ "chunk = 512M", "line 4: chunk: '512M' is above the maximum 256M" },
	{ "chunk = 65537", "line 4: chunk: '65537' is not a multiple of 4096" },
	{ "keep = 0", "line 4: keep: '0' is below the minimum 1" },
	{ "keep = 100001", "line 4: keep: '100001' is above the maximum 100000" },
	{ "keep = 3x", "line 4: keep: '3x' is not a number" },
	{ "keep = 3K", "line 4: keep: '3K' is not a number" },
	{ "keep = -3", "line 4: keep: '-3' is not a number" },
	{ "keep = 99999999999999999999",
	  "line 4: keep: '99999999999999999999' is too large" },
	{ "queue_depth = 4", "line 4: queue_depth: '4' is below the minimum 8" },
	{ "queue_depth = 8192",
	  "line 4: queue_depth: '8192' is above the maximum 4096" },
	{ "nice = 20", "line 4: nice: '20' is above the maximum 19" },
	{ "nice = -5", "line 4: nice: '-5' is not a number" },
	{ "direct = maybe",
	  "line 4: direct: 'maybe' is not a boolean (yes/no/true/false/on/off/1/0)" },
	{ "mlock = 2",
	  "line 4: mlock: '2' is not a boolean (yes/no/true/false/on/off/1/0)" },
	{ "log_level = loud",
	  "line 4: log_level: 'loud' is not one of err, warning, notice, info, debug" },
	{ "log = file", "line 4: log: 'file' is not one of stderr, syslog" },
	{ "bogus = 1", "line 4: bogus: unknown key in [ckptd]" },
	{ "Keep = 3", "line 4: Keep: unknown key in [ckptd]" },
	{ "keep = 2\nkeep = 3", "line 5: keep: set twice (first on line 4)" },
	{ "just some words",
	  "line 4: syntax error: expected '[section]' or 'key = value'" },
	{ "[ckptd", "line 4: syntax error: expected '[section]' or 'key = value'" },
	{ "[other]\nx = 1", "line 5: unknown section [other]" },
	{ "[ckptd.x]\nkeep = 1", "line 5: unknown section [ckptd.x]" },
	/* The first error wins, whichever kind it is. */
	{ "keep = 0\nwords", "line 4: keep: '0' is below the minimum 1" },
	{ "words\nkeep = 0",
	  "line 4: syntax error: expected '[section]' or 'key = value'" },
};

static const struct bad_case bad_drain_values[] = {
	{ "target = /a\tb", "line 4: target: value contains a control character" },
	{ "bandwidth = 10MB/s", "line 4: bandwidth: '10MB/s' is not a size" },
	{ "bandwidth = -1", "line 4: bandwidth: '-1' is not a size" },
	{ "bandwidth = 99999999T",
	  "line 4: bandwidth: '99999999T' is too large" },
	{ "every = 0", "line 4: every: '0' is below the minimum 1" },
	{ "every = often", "line 4: every: 'often' is not a number" },
	{ "every = 4294967296",
	  "line 4: every: '4294967296' is above the maximum 4294967295" },
	{ "keep = -1", "line 4: keep: '-1' is not a number" },
	{ "keep = all", "line 4: keep: 'all' is not a number" },
	{ "keep = 4294967296",
	  "line 4: keep: '4294967296' is above the maximum 4294967295" },
	{ "compress = lz4",
	  "line 4: compress: 'lz4' is not none, zstd or zstd:LEVEL" },
	{ "compress =", "line 4: compress: '' is not none, zstd or zstd:LEVEL" },
	{ "compress = zstd3",
	  "line 4: compress: 'zstd3' is not none, zstd or zstd:LEVEL" },
	{ "compress = zstd-3",
	  "line 4: compress: 'zstd-3' is not none, zstd or zstd:LEVEL" },
	{ "compress = yes",
	  "line 4: compress: 'yes' is not none, zstd or zstd:LEVEL" },
	{ "compress = zstd:0",
	  "line 4: compress: 'zstd:0': the zstd level must be 1 to 19" },
	{ "compress = zstd:20",
	  "line 4: compress: 'zstd:20': the zstd level must be 1 to 19" },
	{ "compress = zstd:",
	  "line 4: compress: 'zstd:': the zstd level must be 1 to 19" },
	{ "compress = zstd:-1",
	  "line 4: compress: 'zstd:-1': the zstd level must be 1 to 19" },
	{ "compress = zstd:3x",
	  "line 4: compress: 'zstd:3x': the zstd level must be 1 to 19" },
	{ "compress = zstd: 3",
	  "line 4: compress: 'zstd: 3': the zstd level must be 1 to 19" },
	{ "compress = zstd:99999999999999999999",
	  "line 4: compress: 'zstd:99999999999999999999': the zstd level must be 1 to 19" },
	{ "shuffle = 1", "line 4: shuffle: '1' is not one of 0, 2, 4" },
	{ "shuffle = 3", "line 4: shuffle: '3' is not one of 0, 2, 4" },
	{ "shuffle = 8", "line 4: shuffle: '8' is not one of 0, 2, 4" },
	{ "shuffle = -2", "line 4: shuffle: '-2' is not one of 0, 2, 4" },
	{ "shuffle = bf16", "line 4: shuffle: 'bf16' is not one of 0, 2, 4" },
	{ "shuffle =", "line 4: shuffle: '' is not one of 0, 2, 4" },
	{ "shuffle = 4294967298",
	  "line 4: shuffle: '4294967298' is not one of 0, 2, 4" },
	{ "incremental = sometimes",
	  "line 4: incremental: 'sometimes' is not a boolean (yes/no/true/false/on/off/1/0)" },
	{ "threads = 0", "line 4: threads: '0' is below the minimum 1" },
	{ "threads = 65", "line 4: threads: '65' is above the maximum 64" },
	{ "threads = 2x", "line 4: threads: '2x' is not a number" },
	{ "chunk = 32K", "line 4: chunk: '32K' is below the minimum 64K" },
	{ "chunk = 128M", "line 4: chunk: '128M' is above the maximum 64M" },
	{ "chunk = 4G", "line 4: chunk: '4G' is above the maximum 64M" },
	{ "chunk = 65537", "line 4: chunk: '65537' is not a multiple of 4096" },
	{ "chunk = 4M4", "line 4: chunk: '4M4' is not a size" },
	{ "retry_max = 0", "line 4: retry_max: '0' is below the minimum 1" },
	{ "retry_max = 1m", "line 4: retry_max: '1m' is not a number" },
	{ "bogus = 1", "line 4: bogus: unknown key in [drain]" },
	{ "dir = /x", "line 4: dir: unknown key in [drain]" },
	{ "target = /a\ntarget = /b",
	  "line 5: target: set twice (first on line 4)" },
	/* A drain key under [ckptd] is not a drain key. */
	{ "[ckptd]\ntarget = /x", "line 5: target: unknown key in [ckptd]" },
};

static const struct bad_case bad_cluster_values[] = {
	{ "nodes = a,,b", "line 4: nodes: empty item in 'a,,b'" },
	{ "nodes = , a", "line 4: nodes: empty item in ', a'" },
	{ "nodes = a, b,", "line 4: nodes: 'a, b,' ends with ','" },
	{ "nodes = ,", "line 4: nodes: empty item in ','" },
	{ "nodes = a b a", "line 4: nodes: item 'a' is listed twice" },
	{ "nodes = a=b",
	  "line 4: nodes: item 'a=b' holds '='; items are letters, digits and ._:@+/[]-" },
	{ "nodes = a \"b\"",
	  "line 4: nodes: item '\"b\"' holds '\"'; items are letters, digits and ._:@+/[]-" },
	{ "nodes = a\nnodes = b", "line 5: nodes: set twice (first on line 4)" },
};

/* Each case on line 4 of a file whose line 1 opens section. */
static void check_bad(const char *section, const struct bad_case *cases,
		      size_t ncases)
{
	struct conf_err err;
	struct conf c, before;
	char text[1024];
	size_t i;

	conf_defaults(&c);
	c.keep = 77;            /* not a default: must survive the failures */
	c.drain_keep = 78;
	before = c;
	for (i = 0; i < ncases; i++) {
		const struct bad_case *b = &cases[i];
		int ret;

		snprintf(text, sizeof(text), "[%s]\n# comment\n\n%s\n",
			 section, b->line);
		ret = load_str(&c, text, &err);
		CU_ASSERT_EQUAL(ret, -EINVAL);
		CU_ASSERT_STRING_EQUAL(err.msg, b->msg);
		CU_ASSERT_EQUAL(err.line, atoi(b->msg + 5));
		CU_ASSERT_STRING_EQUAL(err.file, cfgpath);
		CU_ASSERT(conf_equal(&c, &before));
		if (ret != -EINVAL || strcmp(err.msg, b->msg) != 0)
			fprintf(stderr, "case '%s': ret %d msg '%s'\n", b->line,
				ret, err.msg);
	}
}

static void test_list_bad(void)
{
	struct bad_case cases[sizeof(bad_cluster_values) /
			      sizeof(bad_cluster_values[0]) + 3];
	char many[200], longer[200], wide[200];
	size_t n = 0, i;

	for (i = 0; i < sizeof(bad_cluster_values) /
			sizeof(bad_cluster_values[0]); i++)
		cases[n++] = bad_cluster_values[i];
	/* 17 items, one more than CONF_LIST_MAX. */
	strcpy(many, "nodes =");
	for (i = 0; i <= CONF_LIST_MAX; i++)
		sprintf(many + strlen(many), " n%zu", i);
	cases[n++] = (struct bad_case){ many, "line 4: nodes: more than 16 items" };
	/* An item of CONF_ITEM_MAX bytes, one too many. */
	snprintf(longer, sizeof(longer), "nodes = a, %0*d", CONF_ITEM_MAX, 0);
	cases[n++] = (struct bad_case){
		longer, "line 4: nodes: item '0000000000000000...' is longer than 63 bytes" };
	/* Items that fit, and a line that fits (197 characters), but not
	 * once printed with ", ": 8 + 63 * 3 + 2 * 2 > 199. */
	snprintf(wide, sizeof(wide), "nodes=%0*d,%0*d,%0*d", 63, 1, 63, 2,
		 63, 3);
	cases[n++] = (struct bad_case){
		wide, "line 4: nodes: the list is longer than 191 characters once printed as 'a, b'" };
	check_bad("cluster", cases, n);
}

static void test_bad_values(void)
{
	check_bad("ckptd", bad_values,
		  sizeof(bad_values) / sizeof(bad_values[0]));
	check_bad("drain", bad_drain_values,
		  sizeof(bad_drain_values) / sizeof(bad_drain_values[0]));
}

static void test_key_outside_section(void)
{
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(load_str(&c, "keep = 3\n[ckptd]\n", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "line 1: keep: key outside any section (put it under [ckptd])");
	CU_ASSERT_EQUAL(err.line, 1);
}

/* An indented key is a key, not a continuation of the value above. */
static void test_indented_key(void)
{
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(load_str(&c, "[ckptd]\ndir = /a\n    keep = 7\n", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.dir, "/a");
	CU_ASSERT_EQUAL(c.keep, 7);
}

/* A line longer than libinih's buffer is refused, not cut in two. */
static void test_long_line(void)
{
	char text[1024], path[600];
	struct conf_err err;
	struct conf c;

	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	snprintf(text, sizeof(text), "[ckptd]\ndir = %s\nkeep = 5\n", path);
	conf_defaults(&c);
	CU_ASSERT_EQUAL(load_str(&c, text, &err), -EINVAL);
	CU_ASSERT_EQUAL(err.line, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 2: line is longer than"));
	CU_ASSERT_STRING_EQUAL(c.dir, "/var/lib/ckpt");

	/* A long but legal path loads. */
	path[150] = '\0';
	snprintf(text, sizeof(text), "[ckptd]\ndir = %s\n", path);
	CU_ASSERT_EQUAL(load_str(&c, text, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.dir, path);
}

static void test_open_errors(void)
{
	char missing[PATH_MAX + 16];
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	snprintf(missing, sizeof(missing), "%s/missing.conf", tmpdir);
	CU_ASSERT_EQUAL(conf_load(&c, missing, &err), -ENOENT);
	CU_ASSERT_EQUAL(err.line, 0);
	CU_ASSERT_STRING_EQUAL(err.file, missing);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open"));

	/* A directory opens but cannot be read. */
	CU_ASSERT_EQUAL(conf_load(&c, tmpdir, &err), -EISDIR);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "read error"));

	/* err may be NULL. */
	CU_ASSERT_EQUAL(conf_load(&c, missing, NULL), -ENOENT);
}

/* conf_print's output loads back to the same struct. */
static void round_trip(const struct conf *c)
{
	struct conf_err err;
	struct conf back;
	FILE *f;

	f = fopen(cfgpath, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	conf_print(c, f);
	CU_ASSERT_EQUAL_FATAL(fclose(f), 0);

	conf_defaults(&back);
	back.keep = 999;        /* overwritten by the file */
	CU_ASSERT_EQUAL(conf_load(&back, cfgpath, &err), 0);
	CU_ASSERT(conf_equal(c, &back));
	if (!conf_equal(c, &back))
		fprintf(stderr, "round trip: %s\n", err.msg);
	unlink(cfgpath);
}

static void test_round_trip(void)
{
	static const char *const sets[] = {
		"dir=/data/ckpt dir with spaces", "socket=/run/c.sock",
		"store=", "staging=3G", "staging_client=4100K",
		"staging_per_uid=1G", "staging_wait=0", "max_conns_per_uid=0",
		"capacity=1234567", "reserve=0", "keep=100000",
		"segment=4G", "chunk=64K", "queue_depth=8", "direct=no",
		"mlock=yes", "log_level=err", "log=syslog",
		"drain.target=/pfs/ckpt dir;x", "drain.bandwidth=1536M",
		"drain.every=4294967295", "drain.keep=5",
		"drain.compress=zstd:7", "drain.shuffle=4",
		"drain.incremental=on", "drain.threads=1", "drain.chunk=64M",
		"drain.retry_max=3600", "cluster.nodes=n1 n2,n3, [::1]:7",
		"cluster.node=n2", "cluster.ec=10+4",
		"cluster.key=/etc/ckpt/cluster.key", "cluster.bandwidth=1G",
		"cluster.port=7000", "cluster.heartbeat_timeout=2500",
	};
	/* Every spelling of compress, and shuffle without it (a struct
	 * conf_finish would refuse still prints and loads). */
	static const char *const compress[] = {
		"none", "zstd", "zstd:1", "zstd:2", "zstd:19", "ZSTD:12",
	};
	struct conf_err err;
	struct conf c;
	size_t i;

	conf_defaults(&c);
	round_trip(&c);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	round_trip(&c);

	conf_defaults(&c);
	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		CU_ASSERT_EQUAL(conf_set(&c, sets[i], &err), 0);
	round_trip(&c);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	round_trip(&c);

	for (i = 0; i < sizeof(compress) / sizeof(compress[0]); i++) {
		char set[64];

		snprintf(set, sizeof(set), "drain.compress=%s", compress[i]);
		CU_ASSERT_EQUAL(conf_set(&c, set, &err), 0);
		CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=2", &err), 0);
		round_trip(&c);
	}
}

/* The list type, through [cluster] nodes: what parses, and how it prints. */
static void test_list(void)
{
	char buf[4096], text[512], item[CONF_ITEM_MAX];
	struct conf_err err;
	struct conf c;
	uint32_t i;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(c.cluster_nodes.n, 0);
	/* Commas, blanks, or both; order kept. */
	CU_ASSERT_EQUAL(load_str(&c, "[cluster]\nnodes = a, b c,d ,\te\n", &err),
			0);
	CU_ASSERT_EQUAL_FATAL(c.cluster_nodes.n, 5);
	CU_ASSERT_STRING_EQUAL(c.cluster_nodes.item[0], "a");
	CU_ASSERT_STRING_EQUAL(c.cluster_nodes.item[2], "c");
	CU_ASSERT_STRING_EQUAL(c.cluster_nodes.item[4], "e");
	CU_ASSERT_EQUAL(c.cluster_nodes.item[5][0], '\0');
	round_trip(&c);
	/* The empty list, written either way. */
	CU_ASSERT_EQUAL(load_str(&c, "[cluster]\nnodes =\n", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_nodes.n, 0);
	round_trip(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=x", &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=  ", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_nodes.n, 0);
	/* A new value replaces the old one whole: no item left behind. */
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=long-name-1,b", &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=s", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_nodes.n, 1);
	for (i = 1; i < CONF_ITEM_MAX; i++)
		CU_ASSERT_EQUAL(c.cluster_nodes.item[0][i], '\0');
	/* Host names, host:port, [v6]:port, user@host, paths. */
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=node-01.cluster.local:7400 [fe80::1]:7400 u@h /a/b+c_d",
				 &err), 0);
	CU_ASSERT_EQUAL(c.cluster_nodes.n, 4);
	CU_ASSERT_STRING_EQUAL(c.cluster_nodes.item[1], "[fe80::1]:7400");
	round_trip(&c);

	/* The bounds, at the edge: 16 items, an item of 63 bytes. */
	strcpy(text, "cluster.nodes=");
	for (i = 0; i < CONF_LIST_MAX; i++)
		sprintf(text + strlen(text), "%sn%u", i ? "," : "", i);
	CU_ASSERT_EQUAL(conf_set(&c, text, &err), 0);
	CU_ASSERT_EQUAL(c.cluster_nodes.n, CONF_LIST_MAX);
	round_trip(&c);
	memset(item, 'x', CONF_ITEM_MAX - 1);
	item[CONF_ITEM_MAX - 1] = '\0';
	snprintf(text, sizeof(text), "cluster.nodes=%s", item);
	CU_ASSERT_EQUAL(conf_set(&c, text, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.cluster_nodes.item[0], item);
	round_trip(&c);
	/* A failed set leaves the list alone. */
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=a,,b", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "nodes: empty item in 'a,,b'");
	CU_ASSERT_STRING_EQUAL(c.cluster_nodes.item[0], item);

	/* Printed back exactly, in the canonical spelling. */
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes= b ,a   c", &err), 0);
	{
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		size_t n;

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		conf_print(&c, f);
		n = (size_t)ftell(f);
		fclose(f);
		buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n\n[cluster]\nnode =\nnodes = b, a, c\n"));
	round_trip(&c);
}

static void test_print_format(void)
{
	char buf[2048];
	struct conf c;
	FILE *f;
	size_t n;

	conf_defaults(&c);
	f = fmemopen(buf, sizeof(buf), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	conf_print(&c, f);
	n = (size_t)ftell(f);
	fclose(f);
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
	CU_ASSERT(strncmp(buf, "[ckptd]\n", 8) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nstaging = 2G\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nstaging_client = 256M\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ncapacity = 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nsocket =\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ndirect = yes\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nlog_level = info\n"));

	/* [drain] follows [ckptd], a blank line between them. */
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n\n[drain]\ntarget =\n"));
	CU_ASSERT(strstr(buf, "[drain]") > strstr(buf, "log = stderr"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nbandwidth = 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nevery = 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ncompress = none\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nshuffle = 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nincremental = no\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nthreads = 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "[drain]\ntarget =\nmount =\nbandwidth = 0\nevery = 1\nkeep = 0\ncompress = none\nshuffle = 0\nincremental = no\nthreads = 2\nchunk = 4M\nretry_max = 60\n"));

	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd:1", NULL), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.bandwidth=1000000000", NULL), 0);
	f = fmemopen(buf, sizeof(buf), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	conf_print(&c, f);
	n = (size_t)ftell(f);
	fclose(f);
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ncompress = zstd\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nbandwidth = 1000000000\n"));
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd:9", NULL), 0);
	f = fmemopen(buf, sizeof(buf), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	conf_print(&c, f);
	n = (size_t)ftell(f);
	fclose(f);
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\ncompress = zstd:9\n"));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "defaults", test_defaults },
		{ "print_edges", test_print_edges },
		{ "full file", test_full_file },
		{ "partial file", test_partial_file },
		{ "bad values", test_bad_values },
		{ "key outside section", test_key_outside_section },
		{ "indented key", test_indented_key },
		{ "long line", test_long_line },
		{ "open errors", test_open_errors },
		{ "print/load round trip", test_round_trip },
		{ "print format", test_print_format },
		{ "list type", test_list },
		{ "list type: bad values", test_list_bad },
		{ NULL, NULL }
	};

	return unit_run_suite("conf", suite_init, suite_clean, tests);
}
