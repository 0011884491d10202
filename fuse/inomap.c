/*
 * inomap.c - st_ino of the files of versions this mount committed.
 *
 * While a version is written here, its files are numbered from the mount's
 * counter (tree.c); once committed, ckptd answers for it, and nsops.c numbers
 * what ckptd answers for by a hash.  A number that changed at the commit
 * would be served next to the old one for the kernel's attribute timeout,
 * so that `rsync -H` or `tar` right after a commit could see one file's two
 * names as two files.  ctime is the same: the mirror stamps it with the
 * mount's clock, ckptd with its own a moment later, and a ctime that moved
 * between tar's lstat (cached, from the mirror) and its fstat after the read
 * (from ckptd) is "file changed as we read it".  So at the commit the mount
 * keeps, per version, the number and ctime of each path of its mirror (a
 * sorted array of {name_hash64() of the path, st_ino, ctime}), and answers with
 * them for as long as it keeps the version:
 * FS_INOMAP_MAX versions and FS_INOMAP_ENTRIES paths in all, the oldest
 * forgotten first (they fall back to the hash, as after a remount).  A map
 * is tied to the version's seal time, so a version removed and written
 * again under its name is not given the old numbers.
 *
 * Everything here is under fs->mu.
 *
 * Layer: the namespace (ns_i.h).  vers.c keeps the numbers at a commit;
 * nsops.c asks for them at getattr.  It calls only the mirror (tree.c) and
 * attr.c (node_attr) of its own layer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns_i.h"
#include "namehash.h"

#define FS_INOMAP_MAX     64
#define FS_INOMAP_ENTRIES (1u << 22)

struct ino_ent {
	uint64_t key;             /* name_hash64() of the path in the version */
	uint64_t ino;
	uint64_t ctime_ns;        /* what the mirror showed */
};

struct fs_inomap {
	struct fs_link link;      /* fs->inomaps, oldest first */
	char job[CKPT_JOB_MAX + 1];
	char name[CKPT_VERSION_MAX + 1];
	uint64_t sealed_ns;       /* 0: not known, any */
	size_t n;
	struct ino_ent *v;        /* sorted by key */
};

static uint64_t path_key(const char *path)
{
	return name_hash64(path, strlen(path));
}

static int cmp_ent(const void *x, const void *y)
{
	const struct ino_ent *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

static void map_free(struct ckptfs *fs, struct fs_inomap *m)
{
	fs_list_del(&m->link);
	fs->ninomap_ents -= m->n;
	fs->ninomaps--;
	free(m->v);
	free(m);
}

/* Add n's path and those below it to m (room for all made by the caller). */
static void map_walk(struct fs_inomap *m, const struct fs_version *ver,
		     const struct fs_node *n)
{
	char path[CKPT_PATH_MAX2 + 1];
	const struct fs_link *pos;
	struct stat st;

	if (tree_path(n, path, sizeof(path)) >= 0) {
		node_attr(ver, n, &st);
		m->v[m->n].key = path_key(path);
		m->v[m->n].ino = n->in->ino;
		m->v[m->n].ctime_ns = attr_ns(&st.st_ctim);
		m->n++;
	}
	for (pos = n->children.next; pos != &n->children; pos = pos->next)
		map_walk(m, ver, fs_entry(pos, struct fs_node, sib));
}

void inomap_add_locked(struct ckptfs *fs, const struct fs_version *ver,
		       uint64_t sealed_ns)
{
	struct fs_inomap *m;
	size_t count = ver->tree.count + 1;     /* names, and the root */

	inomap_drop_locked(fs, ver->job, ver->name);
	if (count > FS_INOMAP_ENTRIES)
		return;
	m = calloc(1, sizeof(*m));
	if (m)
		m->v = malloc(count * sizeof(*m->v));
	if (!m || !m->v) {
		free(m);
		return;     /* the hash then, as after a remount */
	}
	strcpy(m->job, ver->job);
	strcpy(m->name, ver->name);
	m->sealed_ns = sealed_ns;
	map_walk(m, ver, ver->tree.root);
	qsort(m->v, m->n, sizeof(*m->v), cmp_ent);
	fs_list_add(&fs->inomaps, &m->link);
	fs->ninomaps++;
	fs->ninomap_ents += m->n;
	while (fs->ninomaps > FS_INOMAP_MAX ||
	       fs->ninomap_ents > FS_INOMAP_ENTRIES)
		map_free(fs, fs_entry(fs->inomaps.next, struct fs_inomap,
				      link));
}

int inomap_find_locked(struct ckptfs *fs, const char *job,
		       const char *version, const char *path,
		       uint64_t sealed_ns, uint64_t *ino, uint64_t *ctime_ns)
{
	struct ino_ent key = { .key = path_key(path) }, *e;
	struct fs_inomap *m;
	struct fs_link *pos;

	for (pos = fs->inomaps.prev; pos != &fs->inomaps; pos = pos->prev) {
		m = fs_entry(pos, struct fs_inomap, link);
		if (strcmp(m->job, job) || strcmp(m->name, version))
			continue;
		if (m->sealed_ns && sealed_ns && m->sealed_ns != sealed_ns)
			return 0;
		e = bsearch(&key, m->v, m->n, sizeof(*m->v), cmp_ent);
		if (e) {
			*ino = e->ino;
			*ctime_ns = e->ctime_ns;
		}
		return e != NULL;
	}
	return 0;
}

void inomap_drop_locked(struct ckptfs *fs, const char *job, const char *name)
{
	struct fs_link *pos, *next;
	struct fs_inomap *m;

	for (pos = fs->inomaps.next; pos != &fs->inomaps; pos = next) {
		next = pos->next;
		m = fs_entry(pos, struct fs_inomap, link);
		if (!strcmp(m->job, job) && !strcmp(m->name, name))
			map_free(fs, m);
	}
}

void inomap_free_all(struct ckptfs *fs)
{
	while (fs->inomaps.next != &fs->inomaps)
		map_free(fs, fs_entry(fs->inomaps.next, struct fs_inomap,
				      link));
}
