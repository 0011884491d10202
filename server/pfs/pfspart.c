/*
 * pfspart.c - versions in parts on the PFS (see pfs.h): the publish step
 * that makes the parts one drained version, and removing a part or what
 * the nodes of a cluster leave in a version's directory.
 *
 * Every node of a cluster drains its own part of a version into the
 * version's one directory, its files under files/ and its part manifest as
 * part.<node> (pfslayout.h); no two nodes ever write the same name.  The
 * version's manifest, the only thing a reader looks at, is written by one
 * node alone: the one whose name sorts first among the parts there.  The
 * rule needs no messages between nodes: each node asks after its own part
 * is durable, and the first one keeps asking (drain.c's retry schedule)
 * until every part is there.  A node that sees a part sorting before its
 * own knows the version is not its to publish and stops asking; the node
 * that sorts first of all never sees one, so it is always the one left
 * asking.  Worker threads only; blocking.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "manifest.h"
#include "pfs.h"
#include "pfs_i.h"
#include "pfslayout.h"

DIR *pfs_vdir_open(int tfd, const char *job, const char *version, int *err)
{
	char path[PATH_MAX];
	DIR *d;
	int fd;

	*err = pfs_path(path, sizeof(path), PFS_N_VERSION, job, version, NULL, 0);
	if (*err < 0)
		return NULL;
	fd = pfs_open(tfd, path, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	d = fdopendir(fd);
	if (!d) {
		*err = -errno;
		close(fd);
	}
	return d;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **names, uint32_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

/* The nodes whose part.<node> is in the version's directory, sorted, in
 * *out (malloc'd, each name malloc'd) and *n.  0 or -errno. */
static int parts_list(int tfd, const char *job, const char *version,
		      char ***out, uint32_t *n)
{
	char **names;
	const char *node;
	struct dirent *e;
	int ret = 0;
	DIR *d;

	*n = 0;
	names = calloc(MANIFEST_MAX_PARTS + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	d = pfs_vdir_open(tfd, job, version, &ret);
	if (!d) {
		free(names);
		return ret;
	}
	while (ret == 0 && (e = readdir(d))) {
		if (pfs_ventry(e->d_name, &node) != PFS_V_PART)
			continue;
		if (*n == MANIFEST_MAX_PARTS) {
			ret = -CKPT_EPROTO;
			break;
		}
		names[*n] = strdup(node);
		ret = names[*n] ? 0 : -ENOMEM;
		*n += ret == 0;
	}
	closedir(d);
	if (ret < 0) {
		names_free(names, *n);
		return ret;
	}
	qsort(names, *n, sizeof(*names), cmp_name);
	*out = names;
	return 0;
}

/* The gate of the manifest's rename (pfs_put_gate): are the n parts it was
 * merged from all still there?  manifest.tmp is durable by now, so a part
 * set aside from here on is put back by its remover (part_set_aside()),
 * and one set aside before is seen missing here: -ESTALE, and the manifest
 * does not go in. */
struct parts_gate {
	int tfd;
	const char *job, *version;
	char **names;
	uint32_t n;
};

static int parts_still(void *arg)
{
	const struct parts_gate *g = arg;
	char **now;
	uint32_t nnow, i, j;
	int ret;

	ret = parts_list(g->tfd, g->job, g->version, &now, &nnow);
	if (ret < 0)
		return ret;
	for (i = 0, j = 0; i < g->n; i++) {
		while (j < nnow && strcmp(now[j], g->names[i]) < 0)
			j++;
		if (j == nnow || strcmp(now[j], g->names[i]))
			break;
	}
	names_free(now, nnow);
	return i == g->n ? 0 : -ESTALE;
}

/* Merge the n parts named and write the manifest.  names[0] is self. */
static int publish_parts(const char *target, int tfd, const char *job,
			 const char *version, uint32_t uid, char **names,
			 uint32_t n)
{
	const struct parts_gate pg = { tfd, job, version, names, n };
	const struct pfs_put_gate gate = { parts_still, (void *)&pg };
	char tmp[PATH_MAX], dst[PATH_MAX];
	struct pfsman *parts, m;
	struct timespec ts;
	uint32_t i, loaded = 0;
	int ret;

	parts = calloc(n, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	for (ret = 0; ret == 0 && loaded < n; loaded += ret == 0) {
		ret = pfs_load_part(target, job, version, names[loaded],
				    &parts[loaded]);
		if (ret == 0 && parts[loaded].uid != uid) {
			pfsman_release(&parts[loaded]);
			ret = -CKPT_EPROTO;
		}
	}
	if (ret < 0)
		goto out_release;
	ret = pfsman_merge(parts, n, &m);
	if (ret < 0)
		goto out_release;
	clock_gettime(CLOCK_REALTIME, &ts);
	m.drained_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	ret = pfs_path(dst, sizeof(dst), PFS_N_MANIFEST, job, version, NULL, 0);
	if (ret == 0)
		ret = pfs_path(tmp, sizeof(tmp), PFS_N_MANIFEST_TMP, job,
			       version, NULL, 0);
	if (ret == 0)
		ret = pfs_manifest_put(tfd, &m, tmp, dst, &gate);
	/* manifest.tmp removed under it by a remover (part_set_aside()). */
	if (ret == -ENOENT)
		ret = -ESTALE;
	pfsman_release(&m);
out_release:
	for (i = 0; i < loaded; i++)
		pfsman_release(&parts[i]);
	free(parts);
	return ret;
}

int pfs_publish(const char *target, const char *job, const char *version,
		uint32_t uid, uint32_t nparts, const char *self)
{
	struct pfsman m;
	char **names = NULL;
	uint32_t n = 0;
	int tfd, ret;

	if (pfs_load(target, job, version, &m) == 0) {
		pfsman_release(&m);
		return 2;            /* published before (by another node, a
				      * retry, before a restart) */
	}
	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	ret = parts_list(tfd, job, version, &names, &n);
	if (ret < 0)
		goto out_close;
	if (n && strcmp(names[0], self) < 0)
		ret = 1;             /* names[0]'s to publish */
	else if (n < nparts || strcmp(names[0], self))
		ret = -EAGAIN;       /* self's own part is there, or soon */
	else if (n > nparts)
		ret = -CKPT_EPROTO;  /* parts of another incarnation? */
	else
		ret = publish_parts(target, tfd, job, version, uid, names, n);
	names_free(names, n);
out_close:
	close(tfd);
	return ret;
}

static int part_put_back(const char *target, int tfd, const char *job,
			 const char *version, const char *node,
			 struct pfsman *out);

int pfs_load_evictable(const char *target, const char *job,
		       const char *version, const char *node,
		       struct pfsman *out)
{
	int ret = pfs_load(target, job, version, out), tfd;

	if (ret < 0 || !node || !node[0])
		return ret == -ENOENT && node && node[0] ? -CKPT_EUNPUBLISHED
							 : ret;
	pfsman_release(out);
	ret = pfs_load_part(target, job, version, node, out);
	if (ret == -ENOENT) {
		tfd = pfs_target_open(target);
		if (tfd < 0)
			return tfd;
		ret = part_put_back(target, tfd, job, version, node, out);
		close(tfd);
		if (ret == 0)
			snprintf(out->node, sizeof(out->node), "%s", node);
	}
	return ret;
}

int pfs_scan_own_part(const char *target, const char *self,
		      struct pfsman *m)
{
	char rel[PFS_REL_MAX];
	struct pfsman part;
	char **names = NULL;
	uint32_t n = 0, have, i;
	int tfd, ret, own;

	if (!self || !self[0] || m->node[0])
		return 1;
	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	ret = parts_list(tfd, m->job, m->version, &names, &n);
	if (ret < 0)
		goto out_close;
	for (i = 0; i < n && strcmp(names[i], self); i++)
		;
	have = n;
	if (i == n) {
		/* A removal killed between setting it aside and putting it
		 * back (the version is published): back, as
		 * pfs_load_evictable() puts it. */
		ret = part_put_back(target, tfd, m->job, m->version, self,
				    &part);
		if (ret < 0) {
			/* None there: other nodes' parts only. */
			if (ret == -ENOENT && n >= 2)
				m->nparts = n;
			ret = ret == -ENOENT && n >= 2 ? 2 : 1;
			goto out_names;
		}
		pfsman_release(&part);
		have++;
	}
	/* One part alone is no version in parts (a peer's part set aside by
	 * a removal killed midway): the whole manifest says it. */
	ret = pfs_path(rel, sizeof(rel), PFS_N_PART, m->job, m->version, self,
		       0);
	if (ret < 0 || have < 2) {
		ret = ret < 0 ? ret : 1;
		goto out_names;
	}
	ret = pfs_load_at_own(target, rel, m->job, m->version, &part, &own);
	if (ret < 0)
		goto out_names;
	/* The manifest was merged from the parts there (its seal the latest
	 * of theirs): a part that does not fit it is not this one's.  Nor is
	 * one ckptd did not write: a uid's own files count only within its
	 * claims (pfs_i.h), which pfs_scan() charged the manifest with. */
	if (!own || part.uid != m->uid || part.sealed_ns > m->sealed_ns) {
		pfsman_release(&part);
		ret = 1;
		goto out_names;
	}
	/* The version's base, which the nodes' parts share: a part without
	 * references has none, and [drain] keep would remove the base the
	 * other parts refer to (bases.h). */
	snprintf(part.base, sizeof(part.base), "%s", m->base);
	snprintf(part.node, sizeof(part.node), "%s", self);
	pfsman_strip(&part);      /* -ENOMEM: kept whole, as the catalog does */
	part.nparts = have;
	pfsman_release(m);
	*m = part;
out_names:
	names_free(names, n);
out_close:
	close(tfd);
	return ret;
}

/* Is name node's temporary: ptmp.<node>, ntmp.<node>, or
 * tmp.<node>.<digits>? */
static int temp_of(const char *name, const char *node)
{
	size_t tl = sizeof(PFS_TMP) - 1, nl = strlen(node);
	const char *p;

	if (!strncmp(name, PFS_PART_TMP, sizeof(PFS_PART_TMP) - 1))
		return !strcmp(name + sizeof(PFS_PART_TMP) - 1, node);
	if (!strncmp(name, PFS_NAMES_TMP, sizeof(PFS_NAMES_TMP) - 1))
		return !strcmp(name + sizeof(PFS_NAMES_TMP) - 1, node);
	if (strncmp(name, PFS_TMP, tl) || strncmp(name + tl, node, nl) ||
	    name[tl + nl] != '.' || !name[tl + nl + 1])
		return 0;
	for (p = name + tl + nl + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

void pfs_vdir_clean(int tfd, const char *job, const char *version,
		    const char *node)
{
	char path[PATH_MAX];
	const char *pnode;
	struct dirent *e;
	enum pfs_ventry k;
	int err;
	DIR *d;

	d = pfs_vdir_open(tfd, job, version, &err);
	if (!d)
		return;
	while ((e = readdir(d))) {
		k = pfs_ventry(e->d_name, &pnode);
		if (k == PFS_V_OTHER)
			continue;
		if (node && !(pnode ? !strcmp(pnode, node)
				    : temp_of(e->d_name, node)))
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	if (pfs_path(path, sizeof(path), PFS_N_VERSION, job, version, NULL,
		     0) == 0)
		pfs_unlink(tfd, path, AT_REMOVEDIR);
}

/* part.<node> is missing but the version is published: a removal stopped
 * between setting it aside and putting it back left it as ptmp.<node>;
 * put it back if it verifies.  0 (and *out loaded), or -ENOENT. */
static int part_put_back(const char *target, int tfd, const char *job,
			 const char *version, const char *node,
			 struct pfsman *out)
{
	char part[PFS_REL_MAX], aside[PFS_REL_MAX];
	int ret;

	ret = pfs_path(part, sizeof(part), PFS_N_PART, job, version, node, 0);
	if (ret == 0)
		ret = pfs_path(aside, sizeof(aside), PFS_N_PART_TMP, job,
			       version, node, 0);
	if (ret == 0)
		ret = pfs_load_at(target, aside, job, version, out);
	if (ret < 0)
		return -ENOENT;
	ret = pfs_rename(tfd, aside, part);
	if (ret < 0)
		pfsman_release(out);
	return ret;
}

/*
 * Set part.<node> aside as ptmp.<node>, remove manifest.tmp, then look for
 * the manifest: if it is there, put the part back and answer -EEXIST.  A
 * publisher checks the parts once its manifest.tmp is durable and before
 * it renames it (parts_still()): either it sees this part gone, or this
 * sees its manifest.tmp (removed here, so that its rename fails) or its
 * manifest.  So no manifest is ever in place without this part's files.
 */
static int part_set_aside(const char *target, int tfd, const char *job,
			  const char *version, const char *node)
{
	char part[PFS_REL_MAX], aside[PFS_REL_MAX], man[PFS_REL_MAX];
	char mtmp[PFS_REL_MAX];
	struct pfsman back;
	struct stat st;
	int ret, had;

	ret = pfs_path(part, sizeof(part), PFS_N_PART, job, version, node, 0);
	if (ret == 0)
		ret = pfs_path(aside, sizeof(aside), PFS_N_PART_TMP, job,
			       version, node, 0);
	if (ret == 0)
		ret = pfs_path(man, sizeof(man), PFS_N_MANIFEST, job, version,
			       NULL, 0);
	if (ret == 0)
		ret = pfs_path(mtmp, sizeof(mtmp), PFS_N_MANIFEST_TMP, job,
			       version, NULL, 0);
	if (ret == 0)
		ret = pfs_rename(tfd, part, aside);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	had = ret == 0;
	ret = pfs_unlink(tfd, mtmp, 0);
	if (ret < 0 && ret != -ENOENT)
		goto put_back;
	if (fstatat(tfd, man, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		goto put_back;
	}
	ret = -EEXIST;          /* published meanwhile: the part stays */
put_back:
	if (had) {
		had = pfs_rename(tfd, aside, part);
		return had < 0 ? had : ret;
	}
	/* One a removal stopped before left, with the version published. */
	if (ret == -EEXIST &&
	    part_put_back(target, tfd, job, version, node, &back) == 0)
		pfsman_release(&back);
	return ret;
}

int pfs_remove_part(const char *target, const char *job, const char *version,
		    const char *node, enum pfs_part_rm how)
{
	char path[PFS_REL_MAX], aside[PFS_REL_MAX], top[PATH_MAX];
	struct pfsman m;
	int tfd, ret, loaded;
	uint32_t i;

	ret = pfs_path(top, sizeof(top), PFS_N_VERSION, job, version, NULL, 0);
	if (ret == 0)
		ret = pfs_path(path, sizeof(path), PFS_N_MANIFEST, job, version,
			       NULL, 0);
	if (ret < 0)
		return ret;
	tfd = pfs_target_open(target);
	if (tfd < 0)
		return tfd;
	/* Loaded first: set aside, part.<node> is not there to load.  Not
	 * there, a removal stopped after setting it aside may have left it as
	 * ptmp.<node> (its files are to go all the same). */
	ret = pfs_load_part(target, job, version, node, &m);
	if (ret == -ENOENT &&
	    pfs_path(aside, sizeof(aside), PFS_N_PART_TMP, job, version, node,
		     0) == 0 &&
	    pfs_load_at(target, aside, job, version, &m) == 0)
		ret = 0;
	loaded = ret == 0;
	if (ret < 0 && ret != -ENOENT)
		goto out_close;
	if (how == PFS_PART_PUBLISHED) {
		/* Without this part the version is torn: unpublish it. */
		ret = pfs_unlink(tfd, path, 0);
		ret = ret == -ENOENT ? 0 : ret;
	} else {
		ret = part_set_aside(target, tfd, job, version, node);
	}
	if (ret < 0)
		goto out_release;
	for (i = 0; loaded && i < m.nfiles; i++) {
		if (pfs_path(path, sizeof(path), PFS_N_FILE, job, version,
			     m.files[i].path, 0) < 0)
			continue;
		pfs_unlink(tfd, path, 0);
		pfs_prune(tfd, path, strlen(top));
	}
	pfs_vdir_clean(tfd, job, version, node);
out_release:
	if (loaded)
		pfsman_release(&m);
out_close:
	close(tfd);
	return ret;
}
