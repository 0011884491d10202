/*
 * err.c - error messages and the names of levels and states.
 *
 * ckpt_strerror() covers both negated errno values and the CKPT_E* range,
 * as mdb_strerror() does for LMDB.  It must be safe from any thread and never
 * return NULL, so errno text comes from glibc's strerrordesc_np(), which
 * returns a pointer to constant, untranslated text rather than filling
 * strerror()'s shared buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "ckpt.h"

static const char *const ckpt_errs[] = {
	[CKPT_EBADMAGIC - CKPT_EFIRST] = "bad magic number",
	[CKPT_EVERSION - CKPT_EFIRST] = "unsupported protocol or format version",
	[CKPT_EPROTO - CKPT_EFIRST] = "malformed message",
	[CKPT_ECORRUPT - CKPT_EFIRST] = "checksum mismatch: stored data is corrupt",
	[CKPT_ESEALED - CKPT_EFIRST] = "version is already committed",
	[CKPT_EABORTED - CKPT_EFIRST] = "version was aborted",
	[CKPT_EBADNAME - CKPT_EFIRST] = "invalid job, version or path name",
	[CKPT_ENOVERSION - CKPT_EFIRST] = "no such version",
	[CKPT_EFAILED - CKPT_EFIRST] = "version failed to reach the level",
	[CKPT_ENOJOB - CKPT_EFIRST] = "no such job",
	[CKPT_ELOST - CKPT_EFIRST] = "lost: no copy left can be read",
	[CKPT_EUNPUBLISHED - CKPT_EFIRST] = "the version is not published on the PFS yet, so this part's local copy stays; rm again to remove the part from the PFS too",
	[CKPT_ESKIPPED - CKPT_EFIRST] = "the version will not be drained: a newer one superseded it ([drain] every), or [drain] keep removed its PFS copy",
	[CKPT_ETARGET - CKPT_EFIRST] = "the drain target is not there or lacks this node's mark (is the PFS mounted?)",
	[CKPT_EBASE - CKPT_EFIRST] = "a newer drained version takes chunks from it (its incremental base): it stays on the PFS until that one is removed",
	[CKPT_ECHANGED - CKPT_EFIRST] = "the version changed since it was looked at (written again, a copy removed, or another rm refused); nothing was removed",
	[CKPT_ECUTSHORT - CKPT_EFIRST] = "a file of the version may be cut short (its writer died with it open); remove it or rewrite it from offset 0, then commit",
};

static const char *const level_names[] = {
	[CKPT_NONE] = "none",
	[CKPT_STAGED] = "staged",
	[CKPT_LOCAL] = "local",
	[CKPT_PROTECTED] = "protected",
	[CKPT_DRAINED] = "drained",
};

static const char *const state_names[] = {
	[CKPT_ST_OPEN] = "open",
	[CKPT_ST_SEALING] = "sealing",
	[CKPT_ST_SEALED] = "sealed",
	[CKPT_ST_FAILED] = "failed",
	[CKPT_ST_INCOMPLETE] = "incomplete",
	[CKPT_ST_DAMAGED] = "damaged",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *ckpt_strerror(int err)
{
	const char *msg;
	unsigned int code;

	/* Negate through unsigned so that INT_MIN does not overflow. */
	code = err < 0 ? 0u - (unsigned int)err : (unsigned int)err;
	if (code >= CKPT_EFIRST && code <= CKPT_ELAST)
		return ckpt_errs[code - CKPT_EFIRST];
	if (code > (unsigned int)CKPT_ELAST)
		return "unknown error";
	msg = strerrordesc_np((int)code);
	return msg ? msg : "unknown error";
}

const char *ckpt_level_name(enum ckpt_level level)
{
	if ((unsigned int)level >= ARRAY_SIZE(level_names))
		return "unknown";
	return level_names[level];
}

const char *ckpt_state_name(enum ckpt_state state)
{
	if ((unsigned int)state >= ARRAY_SIZE(state_names) ||
	    !state_names[state])
		return "unknown";
	return state_names[state];
}

static const char *const drain_names[] = {
	[CKPT_DS_NONE] = "none", [CKPT_DS_QUEUED] = "queued",
	[CKPT_DS_RETRY] = "retry", [CKPT_DS_RUNNING] = "running",
	[CKPT_DS_PUBLISH] = "publish", [CKPT_DS_DONE] = "done",
	[CKPT_DS_SKIPPED] = "skipped", [CKPT_DS_RETIRED] = "retired",
};

const char *ckpt_drain_state_name(enum ckpt_drain_state ds)
{
	if ((unsigned int)ds >= ARRAY_SIZE(drain_names))
		return "unknown";
	return drain_names[ds];
}

static const char *const source_names[] = {
	[CKPT_SRC_NONE] = "none", [CKPT_SRC_LOCAL] = "local",
	[CKPT_SRC_OWNER] = "owner", [CKPT_SRC_SHARDS] = "shards",
	[CKPT_SRC_PFS] = "pfs",
};

const char *ckpt_source_name(enum ckpt_source src)
{
	if ((unsigned int)src >= ARRAY_SIZE(source_names))
		return "unknown";
	return source_names[src];
}

int ckpt_level_parse(const char *s, enum ckpt_level *out)
{
	unsigned int i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(level_names); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*out = (enum ckpt_level)i;
			return 0;
		}
	}
	return -EINVAL;
}
