/*
 * test_conf_set.c - unit tests for lib/conf's overrides and checks:
 * conf_set (values given on the command line: plain, long, [drain] and
 * durations), the cross-key rules of conf_finish (long paths included),
 * and conf_parse_size on its own.  (Loading files: test_conf.c.)
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

static void test_set(void)
{
	struct conf_err err;
	struct conf c, before;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "keep=7", &err), 0);
	CU_ASSERT_EQUAL(c.keep, 7);
	CU_ASSERT_EQUAL(conf_set(&c, "ckptd.keep = 8", &err), 0);
	CU_ASSERT_EQUAL(c.keep, 8);
	CU_ASSERT_EQUAL(conf_set(&c, "  staging =  1G  ", &err), 0);
	CU_ASSERT_EQUAL(c.staging, 1 * GiB);
	CU_ASSERT_EQUAL(conf_set(&c, "ckptd.dir=/x=y", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.dir, "/x=y");
	CU_ASSERT_EQUAL(conf_set(&c, "log_level=NOTICE", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.log_level, "notice");
	CU_ASSERT_EQUAL(conf_set(&c, "socket=", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.socket, "");

	before = c;
	CU_ASSERT_EQUAL(conf_set(&c, "keep=0", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "keep: '0' is below the minimum 1");
	CU_ASSERT_EQUAL(err.line, 0);
	CU_ASSERT_EQUAL(conf_set(&c, "staging=2X", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "staging: '2X' is not a size");
	CU_ASSERT_EQUAL(conf_set(&c, "nokey", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "'nokey': expected key=value or section.key=value");
	CU_ASSERT_EQUAL(conf_set(&c, "=3", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "ckptd.=3", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "other.keep=3", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "unknown section [other]");
	CU_ASSERT_EQUAL(conf_set(&c, "ckptd.nokey=1", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "nokey: unknown key in [ckptd]");
	CU_ASSERT_EQUAL(conf_set(&c, "dir=/a ;b", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "dir: value contains ' ;', which starts a comment");
	CU_ASSERT_EQUAL(conf_set(&c, "dir=/a\nb", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "dir: value contains a control character");
	CU_ASSERT_EQUAL(conf_set(&c, "direct=perhaps", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "log=journal", &err), -EINVAL);
	CU_ASSERT(conf_equal(&c, &before));

	/* A ';' not after a blank is an ordinary character. */
	CU_ASSERT_EQUAL(conf_set(&c, "dir=/a;b", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.dir, "/a;b");
	CU_ASSERT_EQUAL(conf_set(&c, "keep=1", NULL), 0);
}

/* [cluster] heartbeat_timeout: milliseconds, or with ms, s or m. */
static void test_set_ms(void)
{
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=1500", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_heartbeat_timeout, 1500);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=700ms", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_heartbeat_timeout, 700);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=5s", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_heartbeat_timeout, 5000);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=2m", &err), 0);
	CU_ASSERT_EQUAL(c.cluster_heartbeat_timeout, 120000);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=10", &err),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "heartbeat_timeout: '10' is below the minimum 500 ms");
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=2h", &err),
			-EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=s", &err),
			-EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=-5", &err),
			-EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=99999999999999m",
				 &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.heartbeat_timeout=61m", &err),
			-EINVAL);
	CU_ASSERT_EQUAL(c.cluster_heartbeat_timeout, 120000);
}

static void test_set_drain(void)
{
	struct conf_err err;
	struct conf c, before;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.target=/x", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.drain_target, "/x");
	CU_ASSERT_EQUAL(conf_set(&c, " drain.target = /pfs/a b ", &err), 0);
	CU_ASSERT_STRING_EQUAL(c.drain_target, "/pfs/a b");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.bandwidth=2G", &err), 0);
	CU_ASSERT_EQUAL(c.drain_bandwidth, 2 * GiB);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=ZSTD:5", &err), 0);
	CU_ASSERT_EQUAL(c.drain_compress, 5);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd", &err), 0);
	CU_ASSERT_EQUAL(c.drain_compress, 1);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd:19", &err), 0);
	CU_ASSERT_EQUAL(c.drain_compress, 19);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd:01", &err), 0);
	CU_ASSERT_EQUAL(c.drain_compress, 1);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=None", &err), 0);
	CU_ASSERT_EQUAL(c.drain_compress, 0);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=4", &err), 0);
	CU_ASSERT_EQUAL(c.drain_shuffle, 4);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=02", &err), 0);
	CU_ASSERT_EQUAL(c.drain_shuffle, 2);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.incremental=true", &err), 0);
	CU_ASSERT_EQUAL(c.drain_incremental, 1);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.chunk=64M", &err), 0);
	CU_ASSERT_EQUAL(c.drain_chunk, 64 * MiB);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.every=7", &err), 0);
	CU_ASSERT_EQUAL(c.drain_every, 7);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.keep=0", &err), 0);
	CU_ASSERT_EQUAL(c.drain_keep, 0);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.threads=64", &err), 0);
	CU_ASSERT_EQUAL(c.drain_threads, 64);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.retry_max=1", &err), 0);
	CU_ASSERT_EQUAL(c.drain_retry_max, 1);
	/* The [ckptd] chunk and keep are other keys. */
	CU_ASSERT_EQUAL(c.chunk, 4 * MiB);
	CU_ASSERT_EQUAL(c.keep, 3);

	before = c;
	CU_ASSERT_EQUAL(conf_set(&c, "target=/x", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "target: unknown key in [ckptd]");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.dir=/x", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "dir: unknown key in [drain]");
	CU_ASSERT_EQUAL(conf_set(&c, "Drain.target=/x", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "unknown section [Drain]");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.target=/a ;b", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "target: value contains ' ;', which starts a comment");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd:20", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "compress: 'zstd:20': the zstd level must be 1 to 19");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=gzip", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "compress: 'gzip' is not none, zstd or zstd:LEVEL");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=16", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "shuffle: '16' is not one of 0, 2, 4");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.chunk=4098K", &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "chunk: '4098K' is not a multiple of 4096");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.threads=100", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.every=0", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.retry_max=0", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.incremental=2", &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.bandwidth=fast", &err), -EINVAL);
	CU_ASSERT(conf_equal(&c, &before));
}

/* Strings too long for their fields are refused whole, never cut. */
static void test_set_long(void)
{
	char big[CONF_PATH_MAX + 32];
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	memcpy(big, "dir=/", 5);
	memset(big + 5, 'd', sizeof(big) - 6);
	big[sizeof(big) - 1] = '\0';
	CU_ASSERT_EQUAL(conf_set(&c, big, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(c.dir, "/var/lib/ckpt");

	/* Exactly CONF_PATH_MAX - 1 bytes fits. */
	big[4 + CONF_PATH_MAX - 1] = '\0';
	CU_ASSERT_EQUAL(conf_set(&c, big, &err), 0);
	CU_ASSERT_EQUAL(strlen(c.dir), CONF_PATH_MAX - 1);
	big[4 + CONF_PATH_MAX] = '\0';
	big[4 + CONF_PATH_MAX - 1] = 'd';
	CU_ASSERT_EQUAL(conf_set(&c, big, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "dir: value is longer than 511 bytes");
}

static void test_finish(void)
{
	struct conf_err err;
	struct conf c, before;

	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.socket, "/var/lib/ckpt/ckptd.sock");
	CU_ASSERT_STRING_EQUAL(c.store, "/var/lib/ckpt/store");
	/* Idempotent. */
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.socket, "/var/lib/ckpt/ckptd.sock");

	/* Explicit paths stay; a trailing slash on dir is not doubled. */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "dir=/srv/ckpt//", &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "store=/pfs/store", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.socket, "/srv/ckpt/ckptd.sock");
	CU_ASSERT_STRING_EQUAL(c.store, "/pfs/store");
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "dir=/", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_STRING_EQUAL(c.socket, "/ckptd.sock");

	/* [drain] mount: absolute, the target or above it, by components. */
	{
		static const struct { const char *target, *mount; int ok; }
		mounts[] = {
			{ "/lustre/ckpt", "/lustre", 1 },
			{ "/lustre/ckpt", "/lustre/", 1 },
			{ "/lustre/ckpt", "/lustre/ckpt", 1 },
			{ "/lustre/ckpt/", "/lustre/ckpt", 1 },
			{ "/lustre/ckpt", "/", 1 },
			{ "/lustre/ckpt", "/lus", 0 },
			{ "/lustre/ckpt", "/lustre/ckpt/x", 0 },
			{ "/lustre/ckpt", "/scratch", 0 },
			{ "/lustre/ckpt", "lustre", 0 },
			{ "", "/lustre", 0 },
		};
		size_t i;

		for (i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
			char set[2][600];

			conf_defaults(&c);
			snprintf(set[0], sizeof(set[0]), "drain.target=%s",
				 mounts[i].target);
			snprintf(set[1], sizeof(set[1]), "drain.mount=%s",
				 mounts[i].mount);
			CU_ASSERT_EQUAL(conf_set(&c, set[0], &err), 0);
			CU_ASSERT_EQUAL(conf_set(&c, set[1], &err), 0);
			CU_ASSERT_EQUAL(conf_finish(&c, &err),
					mounts[i].ok ? 0 : -EINVAL);
			if (!mounts[i].ok)
				CU_ASSERT_PTR_NOT_NULL(strstr(err.msg,
					"must be an absolute path, and the target or a directory above it"));
		}
	}

	/* staging_client <= staging */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "staging=16M", &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "staging_client=32M", &err), 0);
	before = c;
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "staging_client: 32M is larger than staging (16M)");
	CU_ASSERT(conf_equal(&c, &before));
	CU_ASSERT_EQUAL(conf_set(&c, "staging_client=16M", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);

	/* staging_per_uid: 0, or 4M..staging */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "staging=16M", &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "staging_client=4M", &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "staging_per_uid=32M", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "staging_per_uid: 32M must be 0 (half of staging) or between 4M and staging (16M)");
	CU_ASSERT_EQUAL(conf_set(&c, "staging_per_uid=1M", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_EQUAL(conf_set(&c, "staging_per_uid=8M", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);

	/* ec: K+M, 1 <= K, 1 <= M, K+M <= 32; a cluster needs a key */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_EQUAL(c.cluster_k, 4);
	CU_ASSERT_EQUAL(c.cluster_m, 2);
	{
		static const char *const bad_ec[] = {
			"4", "4+", "+2", "0+2", "4+0", "30+3", "4+2x", "a+b",
			"4 +2", "-1+2", "4+-1", "99999999999+1", "4+2+1",
		};
		size_t i;

		for (i = 0; i < sizeof(bad_ec) / sizeof(bad_ec[0]); i++) {
			char set[64];

			conf_defaults(&c);
			snprintf(set, sizeof(set), "cluster.ec=%s", bad_ec[i]);
			CU_ASSERT_EQUAL(conf_set(&c, set, &err), 0);
			CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
			CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "ec: "));
		}
	}
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.ec=30+2", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_EQUAL(c.cluster_k, 30);
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.nodes=/etc/ckpt/nodes", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "key: a cluster (nodes set) needs the shared secret's file");
	CU_ASSERT_EQUAL(conf_set(&c, "cluster.key=/etc/ckpt/k", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);

	/* segment >= chunk + 4K */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "segment=4M", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "segment: 4M must be at least chunk (4M) + 4K");
	CU_ASSERT_EQUAL(conf_set(&c, "segment=4100K", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);

	/* dir must be set */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "dir=", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg, "dir: must not be empty");

	/* A shuffle only with compression. */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=2", &err), 0);
	before = c;
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.msg,
			       "shuffle: 2 needs compress = zstd (the byte shuffle only prepares chunks for zstd)");
	CU_ASSERT_EQUAL(err.line, 0);
	CU_ASSERT(conf_equal(&c, &before));
	CU_ASSERT_STRING_EQUAL(c.socket, "");
	CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=4", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "shuffle: 4 needs compress"));
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=zstd:3", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.shuffle=0", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_EQUAL(conf_set(&c, "drain.compress=none", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);

	/* The same from a file. */
	conf_defaults(&c);
	CU_ASSERT_EQUAL(load_str(&c, "[drain]\nshuffle = 4\n", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_EQUAL(load_str(&c, "[drain]\ncompress = zstd\n", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_EQUAL(c.drain_shuffle, 4);
	CU_ASSERT_EQUAL(c.drain_compress, 1);
}

/* Derived paths that do not fit, in the field or in sun_path. */
static void test_finish_long_paths(void)
{
	char set[CONF_PATH_MAX + 8];
	struct conf_err err;
	struct conf c;

	conf_defaults(&c);
	snprintf(set, sizeof(set), "dir=/%0500d", 0);
	CU_ASSERT_EQUAL_FATAL(conf_set(&c, set, &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "socket: "));
	CU_ASSERT_STRING_EQUAL(c.socket, "");

	/* Fits a path, not a unix socket address. */
	conf_defaults(&c);
	snprintf(set, sizeof(set), "dir=/%0120d", 0);
	CU_ASSERT_EQUAL_FATAL(conf_set(&c, set, &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the limit for a unix socket path"));

	/* ... unless the socket is put somewhere shorter. */
	CU_ASSERT_EQUAL(conf_set(&c, "socket=/run/ckptd.sock", &err), 0);
	CU_ASSERT_EQUAL(conf_finish(&c, &err), 0);
	CU_ASSERT_EQUAL(strlen(c.store), 1 + 120 + strlen("/store"));
}

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "1", 0, 1 },
		{ "4096", 0, 4096 },
		{ "4K", 0, 4 * KiB },
		{ "4k", 0, 4 * KiB },
		{ "64M", 0, 64 * MiB },
		{ "2G", 0, 2 * GiB },
		{ "2g", 0, 2 * GiB },
		{ "1T", 0, 1024 * GiB },
		{ "0K", 0, 0 },
		{ "007", 0, 7 },
		{ "16777215T", 0, 16777215ULL << 40 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "16777216T", -ERANGE, 0 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999K", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
		{ "1KB", -EINVAL, 0 },
		{ "1KiB", -EINVAL, 0 },
		{ "1P", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1 K", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1.5G", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int ret = conf_parse_size(cases[i].s, &v);

		CU_ASSERT_EQUAL(ret, cases[i].ret);
		if (ret != cases[i].ret)
			fprintf(stderr, "conf_parse_size('%s') = %d\n",
				cases[i].s, ret);
		/* A failed parse leaves *out alone. */
		CU_ASSERT_EQUAL(v, cases[i].ret ? 12345 : cases[i].v);
	}
	CU_ASSERT_EQUAL(conf_parse_size(NULL, NULL), -EINVAL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "conf_set", test_set },
		{ "conf_set long values", test_set_long },
		{ "conf_set [drain]", test_set_drain },
		{ "conf_set heartbeat_timeout", test_set_ms },
		{ "conf_finish rules", test_finish },
		{ "conf_finish long paths", test_finish_long_paths },
		{ "conf_parse_size", test_parse_size },
		{ NULL, NULL }
	};

	return unit_run_suite("conf_set", suite_init, suite_clean, tests);
}
