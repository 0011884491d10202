/*
 * conf_test.h - what test_conf.c and test_conf_set.c share: the private
 * directory and config file of the suite (suite_init() and suite_clean()),
 * a config loaded from a string, and struct conf compared field by field.
 * Header-only: each tests/unit/test_X.c is its own binary.
 */
#ifndef CKPT_TESTS_CONF_TEST_H
#define CKPT_TESTS_CONF_TEST_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "conf.h"

#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

static char tmpdir[PATH_MAX];
static char cfgpath[PATH_MAX + 16];

/* Write text to the test's config file; 0 or -1. */
static inline int write_cfg(const char *text)
{
	FILE *f = fopen(cfgpath, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static inline int load_str(struct conf *c, const char *text, struct conf_err *err)
{
	int ret;

	if (write_cfg(text) < 0)
		return -EIO;
	ret = conf_load(c, cfgpath, err);
	unlink(cfgpath);
	return ret;
}

/* Field by field, so padding bytes cannot make equal structs differ. */
static inline int conf_equal(const struct conf *a, const struct conf *b)
{
	return !strcmp(a->dir, b->dir) && !strcmp(a->socket, b->socket) &&
	       !strcmp(a->store, b->store) && a->staging == b->staging &&
	       a->staging_client == b->staging_client &&
	       a->staging_per_uid == b->staging_per_uid &&
	       a->staging_wait == b->staging_wait &&
	       a->max_conns_per_uid == b->max_conns_per_uid &&
	       a->capacity == b->capacity && a->reserve == b->reserve &&
	       a->keep == b->keep && a->segment == b->segment &&
	       a->chunk == b->chunk && a->queue_depth == b->queue_depth &&
	       a->nice == b->nice &&
	       a->direct == b->direct && a->mlock == b->mlock &&
	       !strcmp(a->log_level, b->log_level) && !strcmp(a->log, b->log) &&
	       !strcmp(a->drain_target, b->drain_target) &&
	       a->drain_bandwidth == b->drain_bandwidth &&
	       a->drain_every == b->drain_every &&
	       a->drain_keep == b->drain_keep &&
	       a->drain_compress == b->drain_compress &&
	       a->drain_shuffle == b->drain_shuffle &&
	       a->drain_incremental == b->drain_incremental &&
	       a->drain_threads == b->drain_threads &&
	       a->drain_chunk == b->drain_chunk &&
	       a->drain_retry_max == b->drain_retry_max &&
	       a->drain_deadline == b->drain_deadline &&
	       a->drain_manifest_cache == b->drain_manifest_cache &&
	       !memcmp(&a->cluster_nodes, &b->cluster_nodes,
		       sizeof(a->cluster_nodes)) &&
	       !strcmp(a->cluster_node, b->cluster_node) &&
	       !strcmp(a->cluster_ec, b->cluster_ec) &&
	       !strcmp(a->cluster_key, b->cluster_key) &&
	       a->cluster_bandwidth == b->cluster_bandwidth &&
	       a->cluster_port == b->cluster_port &&
	       a->cluster_heartbeat_timeout == b->cluster_heartbeat_timeout;
}

static inline int suite_init(void)
{
	if (!unit_mkdtemp(tmpdir, sizeof(tmpdir), "test_conf"))
		return -1;
	snprintf(cfgpath, sizeof(cfgpath), "%s/ckptd.conf", tmpdir);
	return 0;
}

static inline int suite_clean(void)
{
	unlink(cfgpath);
	return rmdir(tmpdir);
}

#endif
