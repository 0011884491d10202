/*
 * seek.c - SEEK_DATA: where a file of a version holds data, so that a
 * restore (ckptctl, ckptfs's lseek) reads the data and leaves the holes.
 *
 * The answer comes from what this node has in memory, without I/O:
 *
 *   a local copy      the version's read index (rindex.h): holes and zero
 *                     records (truncation) are not data;
 *   a PFS copy only   the version's PFS manifest (v->pfs): ZERO chunks,
 *                     and REFs to them, are not data;
 *   another node's    the part's manifest, as it announced it (every
 *   part              source of its bytes, the owner's copy, its shards
 *                     or its PFS copy, serves those records):
 *                     cluster_seek_data();
 *   anything else     (a version with writes in flight, a part known only
 *                     from the PFS) the whole range is data, as lseek(2)
 *                     may answer: correct, only not sparse.
 *
 * So a hole is only ever reported where the file reads as zeros.  The
 * caller's rights are READ's (read_may()).
 *
 * Threads: the loop thread.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "catalog.h"
#include "cluster.h"
#include "pfsman.h"
#include "plan.h"
#include "reader.h"
#include "rindex.h"
#include "seek.h"
#include "session.h"

/* The run of [off, end) of file fi of v, or of the size when the source
 * says nothing cheaper. */
static int data_run(struct ckptd *d, const struct proto_msg *req,
		    uint32_t caller, uint64_t *data, uint64_t *len)
{
	struct version *v = catalog_version(d->cat, req->job, req->version);
	uint64_t end;
	struct plan p;
	int fi, ret;

	ret = plan_file(d, req->job, req->version, caller, req->path, &p,
			NULL, 0);
	if (ret < 0)
		return ret;
	if (req->off >= p.size || !req->size)
		return -ENXIO;
	end = req->size < p.size - req->off ? req->off + req->size : p.size;
	if (!p.own) {
		ret = cluster_seek_data(d, req->job, req->version, caller,
					req->path, req->off, end, data, len);
		if (ret != -ENOENT)
			return ret;
	}
	if (p.own && v && !version_dead(v)) {
		fi = version_file(v, req->path, 0);
		if (fi >= 0 && p.kind[0] == CKPT_SRC_LOCAL && !v->inflight)
			return rindex_data(v, (uint32_t)fi, req->off, end,
					   data, len);
		/* the manifest's index of the name is the catalog's (a
		 * hint: an evicted version still lists unlinked names) */
		fi = version_name(v, req->path);
		if (fi >= 0 && p.kind[0] == CKPT_SRC_PFS &&
		    version_remote(v) && v->pfs &&
		    (ret = pfsman_find(v->pfs, req->path, (uint32_t)fi)) >= 0)
			return pfsman_data(v->pfs, (uint32_t)ret, req->off,
					   end, data, len);
	}
	*data = req->off;
	*len = end - req->off;
	return 0;
}

void op_seek_data(struct conn *c, const struct proto_msg *req)
{
	struct proto_msg m;
	uint64_t data = 0, len = 0;
	int ret;

	ret = read_may(c, req->job);
	if (ret == 0)
		ret = data_run(c->d, req, (uint32_t)c->uid, &data, &len);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_SEEK_DATA;
	m.seq = req->seq;
	m.status = ret;
	m.off = ret ? 0 : data;
	m.size = ret ? 0 : len;
	conn_reply(c, &m);
}
