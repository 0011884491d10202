/*
 * catman.c - a version's manifest: built from its index, encoded, stored
 * durably in the store's manifest directory, and removed on purpose
 * (catalog.h).  The catalog's rules for when each happens are catalog.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "log.h"
#include "rmlog.h"
#include "sys.h"

/* ---- manifests ---------------------------------------------------------- */

void catalog_man_path(const struct catalog *cat, uint64_t seq,
		      const char *ext, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%016llx.%s", cat->mandir,
		 (unsigned long long)seq, ext);
}

int version_manifest(const struct version *v, uint32_t level,
			    struct manifest *m)
{
	uint32_t i, d, n = 0, *map;

	memset(m, 0, sizeof(*m));
	m->seq = v->seq;
	m->sealed_ns = v->sealed_ns;
	m->open_id = v->open_id;
	m->uid = v->job->uid;
	m->level = level >= CKPT_LOCAL ? level : CKPT_LOCAL;
	if (v->pfs_retired && m->level < CKPT_DRAINED)
		m->flags = MAN_F_RETIRED;
	m->nparts = v->nparts;
	m->holders = v->holders;          /* borrowed */
	snprintf(m->job, sizeof(m->job), "%s", v->job->name);
	snprintf(m->version, sizeof(m->version), "%s", v->name);
	map = calloc(v->nfiles ? v->nfiles : 1, sizeof(*map));
	m->files = calloc(v->nlive ? v->nlive : 1, sizeof(*m->files));
	m->recs = calloc(v->nrecs ? v->nrecs : 1, sizeof(*m->recs));
	if (!map || !m->files || !m->recs)
		goto out_nomem;
	for (i = 0; i < v->nfiles; i++) {
		if (v->files[i].dead)
			continue;
		map[i] = n;
		d = vfile_data(v, i);
		m->files[n].path = v->files[i].path;
		m->files[n].link = v->files[i].link ? map[d] + 1 : 0;
		m->files[n].attr = v->files[d].attr;
		m->files[n].size = v->files[d].size;
		if (!v->files[i].link) {
			m->files[n].xattr = v->files[i].xattr; /* borrowed */
			m->files[n].xlen = v->files[i].xlen;
		}
		n++;
	}
	m->nfiles = n;
	for (i = 0; i < v->nrecs; i++) {
		if (v->files[v->recs[i].file].dead)
			continue;
		m->recs[m->nrecs] = v->recs[i];
		m->recs[m->nrecs++].file = map[v->recs[i].file];
	}
	free(map);
	return 0;

out_nomem:
	free(map);
	free(m->files);
	free(m->recs);
	return -ENOMEM;
}

static int write_file_durably(const char *tmp, const char *dst,
			      const char *dir, const void *buf, size_t len)
{
	int ret;

	ret = sys_write_file(tmp, buf, len, 0600);
	if (ret < 0)
		goto out_unlink;
	ret = sys_rename(tmp, dst);
	if (ret < 0)
		goto out_unlink;
	ret = sys_fsync_dir(dir);
	if (ret < 0) {
		/* Not known durable, so not committed: the caller fails the
		 * version and recycles its segments, so the manifest must go
		 * (and recovery checks segment headers in case it lingers). */
		unlink(dst);
		sys_fsync_dir(dir);
	}
	return ret;

out_unlink:
	unlink(tmp);
	return ret;
}

int catalog_manifest_encode(const struct version *v, uint32_t level,
			    void **buf, size_t *len)
{
	return catalog_manifest_encode_as(v, level, v->holders, buf, len);
}

int catalog_manifest_encode_as(const struct version *v, uint32_t level,
			       const struct man_holders *holders, void **buf,
			       size_t *len)
{
	struct manifest m;
	size_t size;
	long n;
	int ret;

	ret = version_manifest(v, level, &m);
	if (ret < 0)
		return ret;
	m.holders = (struct man_holders *)holders;   /* read only */
	size = manifest_size(&m);
	*buf = malloc(size);
	if (!*buf) {
		ret = -ENOMEM;
		goto out_files;
	}
	n = manifest_encode(&m, *buf, size);
	if (n < 0) {
		ret = (int)n;
		free(*buf);
		*buf = NULL;
		goto out_files;
	}
	*len = (size_t)n;
out_files:
	free(m.files);
	free(m.recs);
	return ret;
}

int catalog_manifest_store(const struct catalog *cat, uint64_t seq,
			   const void *buf, size_t len)
{
	char tmp[700], dst[700];

	catalog_man_path(cat, seq, "tmp", tmp, sizeof(tmp));
	catalog_man_path(cat, seq, "man", dst, sizeof(dst));
	return write_file_durably(tmp, dst, cat->mandir, buf, len);
}

/* ---- removing a manifest on purpose -------------------------------------- */

/* Unlink the manifest of the version sealed as seq on purpose: log its
 * open_id durably first, so that a crash before its segment headers are
 * cleared is not taken for a version that never committed.  Blocking; safe
 * on any thread (appends to the removal log are serialized). */
int catalog_manifest_drop(const struct catalog *cat, uint64_t open_id,
			  uint64_t seq)
{
	char path[700];
	int ret;

	ret = rmlog_append(cat->rmlog, open_id, seq);
	if (ret < 0)
		return ret;
	catalog_man_path(cat, seq, "man", path, sizeof(path));
	ret = sys_unlink(path);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	ret = sys_fsync_dir(cat->mandir);
	if (ret < 0)
		log_printf(LOG_WARNING, "store: fsync of %s: %s", cat->mandir,
			   strerror(-ret));
	return 0;
}
