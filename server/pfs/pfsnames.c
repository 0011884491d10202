/*
 * pfsnames.c - the name list of a part on the PFS (see pfsnames.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pfs.h"
#include "pfs_i.h"
#include "pfslayout.h"
#include "pfsnames.h"
#include "namelist.h"

static void entries_free(char **e, uint32_t n)
{
	while (n)
		free(e[--n]);
	free(e);
}

/* The part's entries (namelist.h), sorted, in *out (malloc'd, and each
 * entry) and *n. */
static int own_entries(const struct pfs_job *job, char ***out, uint32_t *n)
{
	char **e;
	uint32_t i;

	e = calloc(job->nfiles + 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 0; i < job->nfiles; i++) {
		e[i] = namelist_entry(job->files[i].path,
				      attr_is_type(&job->files[i].attr,
						   CKPT_ATTR_IFDIR));
		if (!e[i])
			goto fail;
	}
	namelist_sort(e, job->nfiles);
	*out = e;
	*n = job->nfiles;
	return 0;
fail:
	entries_free(e, i);
	return -ENOMEM;
}

static void clash_set(const char *path, const char *node, char *clash,
		      size_t cap, char *other, size_t ocap)
{
	snprintf(clash, cap, "%s", path);
	snprintf(other, ocap, "%s", node);
}

/* Check mine against node's name list.  Not ckptd's: ignored. */
static int check_list(const char *target, const struct pfs_job *job,
		      const char *node, char *const *mine, uint32_t n,
		      char *clash, size_t cap, char *other, size_t ocap)
{
	char rel[PFS_REL_MAX], scratch[NAMELIST_ENTRY_MAX + 2];
	const char *hit;
	void *buf = NULL;
	size_t len;
	uid_t owner;
	int ret;

	ret = pfs_path(rel, sizeof(rel), PFS_N_NAMES, job->job, job->version,
		       node, 0);
	if (ret == 0)
		ret = pfs_read_whole(target, rel, &buf, &len, &owner, NULL);
	if (ret == -ENOENT)
		ret = 0;                /* removed meanwhile */
	if (ret < 0 || !buf || owner != geteuid())
		goto out;
	if (!namelist_ok(buf, len)) {
		clash_set("", node, clash, cap, other, ocap);
		ret = -CKPT_ECORRUPT;
		goto out;
	}
	hit = namelist_first_clash(mine, n, buf, len, scratch);
	if (hit) {
		clash_set(hit, node, clash, cap, other, ocap);
		ret = -EEXIST;
	}
out:
	free(buf);
	return ret;
}

/* The same against node's part manifest (a part drained before name
 * lists, or written by a ckptd without them). */
static int check_part(const char *target, const struct pfs_job *job,
		      const char *node, char *const *mine, uint32_t n,
		      char *clash, size_t cap, char *other, size_t ocap)
{
	char q[NAMELIST_ENTRY_MAX + 2], scratch[NAMELIST_ENTRY_MAX + 2];
	const char *hit;
	struct pfsman m;
	uint32_t i;
	int ret;

	ret = pfs_load_part(target, job->job, job->version, node, &m);
	if (ret < 0)
		return ret == -ENOENT || ret == -EACCES ? 0 : ret;
	for (i = 0; i < m.nfiles && ret == 0; i++) {
		snprintf(q, sizeof(q), "%s%s", m.files[i].path,
			 attr_is_type(&m.files[i].attr, CKPT_ATTR_IFDIR) ?
			 "/" : "");
		hit = namelist_clash(mine, n, q, scratch);
		if (!hit)
			continue;
		clash_set(hit, node, clash, cap, other, ocap);
		ret = -EEXIST;
	}
	pfsman_release(&m);
	return ret;
}

/* Every other node with a name list or a part manifest in the version's
 * directory, once each: lists[0 .. *nl) have a list, parts[0 .. *np) only
 * a part manifest.  Names malloc'd. */
struct others {
	char **list, **part;
	uint32_t nl, np, cap;
};

static void others_free(struct others *o)
{
	while (o->nl)
		free(o->list[--o->nl]);
	while (o->np)
		free(o->part[--o->np]);
	free(o->list);
	free(o->part);
}

static int others_add(char ***v, uint32_t *n, uint32_t *cap, const char *s)
{
	char **nv;

	if (*n == *cap) {
		nv = realloc(*v, (*cap ? *cap * 2 : 16) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = *cap ? *cap * 2 : 16;
	}
	(*v)[*n] = strdup(s);
	return (*v)[(*n)++] ? 0 : -ENOMEM;
}

static int others_find(int tfd, const struct pfs_job *job, struct others *o)
{
	uint32_t lcap = 0, pcap = 0, i, j;
	const char *node;
	struct dirent *e;
	enum pfs_ventry k;
	int ret = 0;
	DIR *d;

	d = pfs_vdir_open(tfd, job->job, job->version, &ret);
	if (!d)
		return ret;
	while (ret == 0 && (e = readdir(d))) {
		k = pfs_ventry(e->d_name, &node);
		if (!node || !strcmp(node, job->node))
			continue;
		ret = k == PFS_V_NAMES ? others_add(&o->list, &o->nl, &lcap, node)
				       : others_add(&o->part, &o->np, &pcap, node);
	}
	closedir(d);
	/* A node with a list is checked by its list alone. */
	for (i = 0; ret == 0 && i < o->np;) {
		for (j = 0; j < o->nl && strcmp(o->list[j], o->part[i]); j++)
			;
		if (j == o->nl) {
			i++;
			continue;
		}
		free(o->part[i]);
		o->part[i] = o->part[--o->np];
	}
	return ret;
}

/* Put the list buf[0 .. len) at rel, unless the one there is ckptd's and
 * the same bytes (a copy claiming again): then only its directory is
 * fsync'd.  A list is not replaced while another node may be listing the
 * directory, since a listing may miss a name renamed over during it
 * (tmpfs does), and a part that went on relies on the others seeing its
 * list (pfsnames.h). */
static int list_put(const char *target, int tfd, const void *buf,
		    size_t len, const char *tmp, const char *rel)
{
	void *old = NULL;
	size_t olen = 0;
	uid_t owner = 0;
	int same;

	same = pfs_read_whole(target, rel, &old, &olen, &owner, NULL) == 0 &&
	       owner == geteuid() && olen == len && !memcmp(old, buf, len);
	free(old);
	return same ? pfs_fsync_parent(tfd, rel)
		    : pfs_put_own(tfd, buf, len, tmp, rel, NULL);
}

int pfs_names_claim(const char *target, int tfd, const struct pfs_job *job,
		    int went_on, char *clash, size_t cap, char *other,
		    size_t ocap)
{
	char rel[PFS_REL_MAX], tmp[PFS_REL_MAX];
	struct others o = { 0 };
	uint8_t *buf;
	uint32_t n, i;
	char **mine;
	size_t len;
	int ret;

	ret = own_entries(job, &mine, &n);
	if (ret < 0)
		return ret;
	ret = namelist_encode(mine, n, &buf, &len);
	if (ret < 0)
		goto out_mine;
	ret = pfs_path(rel, sizeof(rel), PFS_N_NAMES, job->job, job->version,
		       job->node, 0);
	if (ret == 0)
		ret = pfs_path(tmp, sizeof(tmp), PFS_N_NAMES_TMP, job->job,
			       job->version, job->node, 0);
	/* Durable before the others are read: see pfsnames.h. */
	if (ret == 0)
		ret = list_put(target, tfd, buf, len, tmp, rel);
	free(buf);
	if (ret == 0)
		ret = others_find(tfd, job, &o);
	for (i = 0; ret == 0 && i < o.nl; i++) {
		ret = check_list(target, job, o.list[i], mine, n, clash, cap,
				 other, ocap);
		/* That list came after this part went on (see pfsnames.h):
		 * it is the other part that is refused. */
		if (ret == -EEXIST && went_on) {
			log_printf(LOG_NOTICE, "drain: %s/%s: %s clashes with node %s's part of this version, which claimed it after this part went on: this part goes on, that one is refused",
				   job->job, job->version, clash, other);
			clash[0] = other[0] = 0;
			ret = 0;
		}
	}
	for (i = 0; ret == 0 && i < o.np; i++)
		ret = check_part(target, job, o.part[i], mine, n, clash, cap,
				 other, ocap);
	others_free(&o);
	/* Refused at its first claim, the part put nothing in place: its
	 * list goes, so that it does not keep refusing the other part (which
	 * may be the one to stay) after this one is removed or written anew.
	 * A part that went on keeps its list: its files may be in place. */
	if (!went_on && (ret == -EEXIST || ret == -CKPT_ECORRUPT))
		pfs_unlink(tfd, rel, 0);
out_mine:
	entries_free(mine, n);
	return ret;
}

int pfs_names_drop(const char *target, const char *job, const char *version,
		   const char *node)
{
	char rel[PFS_REL_MAX];
	int tfd, ret;

	ret = pfs_path(rel, sizeof(rel), PFS_N_NAMES, job, version, node, 0);
	if (ret < 0)
		return ret;
	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	ret = pfs_unlink(tfd, rel, 0);
	close(tfd);
	return ret == -ENOENT ? 0 : ret;
}
