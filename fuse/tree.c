/*
 * tree.c - the in-memory namespace of a version this mount is writing.
 *
 * ckptd knows a version as a flat set of file paths; a file system needs
 * directories (empty ones included, between mkdir and the first file in
 * them), exact sizes while a file grows, and lookups that do not cost a
 * round trip to the daemon.  So for every version it holds open, ckptfs
 * keeps a tree of nodes: the version's root, directories with a list of
 * children, and files with their size (the largest end written, or the
 * last truncate).  Nodes are found through one hash table keyed by
 * (parent, name), so a path is resolved one component at a time and a
 * directory rename moves a single node.
 *
 * The tree is protected by fs->mu.  A node that is unlinked or replaced
 * while a handle holds it is detached (out of the tree, marked) and freed
 * by tree_release() when the last handle goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ckptfs_i.h"

static uint32_t hash_name(const struct fs_node *dir, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uintptr_t)dir;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static struct fs_node *node_new(const char *name, int is_dir)
{
	struct fs_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strdup(name);
	if (!n->name) {
		free(n);
		return NULL;
	}
	n->is_dir = is_dir;
	fs_list_init(&n->sib);
	fs_list_init(&n->children);
	clock_gettime(CLOCK_REALTIME, &n->mtime);
	return n;
}

static void node_free(struct fs_node *n)
{
	free(n->name);
	free(n->xattr);
	free(n);
}

int tree_init(struct fs_tree *t)
{
	memset(t, 0, sizeof(*t));
	t->nbuckets = 64;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	t->root = node_new("", 1);
	if (!t->buckets || !t->root) {
		free(t->buckets);
		free(t->root);
		return -ENOMEM;
	}
	return 0;
}

/* Free dir's subtree (not dir itself). */
static void free_children(struct fs_node *dir)
{
	struct fs_link *pos = dir->children.next, *next;
	struct fs_node *n;

	while (pos != &dir->children) {
		next = pos->next;
		n = fs_entry(pos, struct fs_node, sib);
		free_children(n);
		node_free(n);
		pos = next;
	}
	fs_list_init(&dir->children);
}

void tree_free(struct fs_tree *t)
{
	if (!t->root)
		return;
	free_children(t->root);
	node_free(t->root);
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

static void hash_insert(struct fs_tree *t, struct fs_node *n)
{
	size_t b = n->hash & (t->nbuckets - 1);

	n->hnext = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
}

static void hash_remove(struct fs_tree *t, struct fs_node *n)
{
	struct fs_node **pp = &t->buckets[n->hash & (t->nbuckets - 1)];

	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = n->hnext;
		t->count--;
	}
	n->hnext = NULL;
}

/* Double the table when it is full; staying small is fine on ENOMEM. */
static void hash_grow(struct fs_tree *t)
{
	struct fs_node **nb, *n, *next;
	size_t i, nbuckets = t->nbuckets * 2;

	if (t->count < t->nbuckets)
		return;
	nb = calloc(nbuckets, sizeof(*nb));
	if (!nb)
		return;
	for (i = 0; i < t->nbuckets; i++) {
		for (n = t->buckets[i]; n; n = next) {
			next = n->hnext;
			n->hnext = nb[n->hash & (nbuckets - 1)];
			nb[n->hash & (nbuckets - 1)] = n;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->nbuckets = nbuckets;
}

struct fs_node *tree_child(const struct fs_tree *t, const struct fs_node *dir,
			   const char *name)
{
	uint32_t h = hash_name(dir, name);
	struct fs_node *n;

	for (n = t->buckets[h & (t->nbuckets - 1)]; n; n = n->hnext)
		if (n->hash == h && n->parent == dir && !strcmp(n->name, name))
			return n;
	return NULL;
}

struct fs_node *tree_lookup(const struct fs_tree *t, const char *path)
{
	char name[256];
	struct fs_node *n = t->root;
	const char *e;

	while (n && *path) {
		e = strchrnul(path, '/');
		if (e - path >= (long)sizeof(name) || !n->is_dir)
			return NULL;
		memcpy(name, path, e - path);
		name[e - path] = '\0';
		n = tree_child(t, n, name);
		path = *e ? e + 1 : e;
	}
	return n;
}

/* An entry of dir came or went: its mtime (and ctime) is now, also over a
 * time set with utimensat (attr.c). */
static void dir_changed(struct fs_node *dir)
{
	clock_gettime(CLOCK_REALTIME, &dir->mtime);
	dir->attr.mtime_ns = attr_ns(&dir->mtime);
	dir->attr.ctime_ns = dir->attr.mtime_ns;
}

/* Link n under dir (n->name set). */
static void link_child(struct fs_tree *t, struct fs_node *dir,
		       struct fs_node *n)
{
	n->parent = dir;
	n->hash = hash_name(dir, n->name);
	fs_list_add(&dir->children, &n->sib);
	dir->nchild++;
	dir_changed(dir);
	hash_grow(t);
	hash_insert(t, n);
}

static void unlink_child(struct fs_tree *t, struct fs_node *n)
{
	hash_remove(t, n);
	fs_list_del(&n->sib);
	n->parent->nchild--;
	dir_changed(n->parent);
	n->parent = NULL;
}

int tree_add(struct fs_tree *t, struct fs_node *dir, const char *name,
	     int is_dir, struct fs_node **out)
{
	struct fs_node *n = node_new(name, is_dir);

	if (!n)
		return -ENOMEM;
	link_child(t, dir, n);
	if (out)
		*out = n;
	return 0;
}

int tree_add_path(struct fs_tree *t, const char *path, uint64_t size)
{
	char name[256];
	struct fs_node *dir = t->root, *n;
	const char *e;
	int ret, last;

	for (;;) {
		e = strchrnul(path, '/');
		if (e - path >= (long)sizeof(name) || !dir->is_dir)
			return -EINVAL;
		memcpy(name, path, e - path);
		name[e - path] = '\0';
		last = !*e;
		n = tree_child(t, dir, name);
		if (!n) {
			ret = tree_add(t, dir, name, !last, &n);
			if (ret < 0)
				return ret;
		}
		if (last) {
			n->size = size;
			return 0;
		}
		dir = n;
		path = e + 1;
	}
}

void tree_remove(struct fs_tree *t, struct fs_node *node)
{
	unlink_child(t, node);
	if (node->nopen) {
		node->detached = 1;
		return;
	}
	free_children(node);
	node_free(node);
}

void tree_release(struct fs_node *node)
{
	if (node->detached && node->nopen == 0) {
		free_children(node);
		node_free(node);
	}
}

int tree_move(struct fs_tree *t, struct fs_node *node, struct fs_node *dir,
	      const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	unlink_child(t, node);
	free(node->name);
	node->name = copy;
	link_child(t, dir, node);
	return 0;
}

int tree_path(const struct fs_node *node, char *buf, size_t cap)
{
	const struct fs_node *n;
	size_t len = 0, k;

	for (n = node; n && n->parent; n = n->parent)
		len += strlen(n->name) + (len ? 1 : 0);
	if (len + 1 > cap)
		return -ENAMETOOLONG;
	buf[len] = '\0';
	k = len;
	for (n = node; n && n->parent; n = n->parent) {
		size_t l = strlen(n->name);

		if (k != len)
			buf[--k] = '/';
		k -= l;
		memcpy(buf + k, n->name, l);
	}
	return (int)len;
}

int tree_parent(const struct fs_tree *t, const struct fs_path *p,
		struct fs_node **dir, const char **base)
{
	char dpath[CKPT_PATH_MAX + 1];
	size_t dlen;

	*base = path_base(p, &dlen);
	memcpy(dpath, p->file, dlen);
	dpath[dlen] = '\0';
	*dir = tree_lookup(t, dpath);
	if (!*dir)
		return -ENOENT;
	return (*dir)->is_dir ? 0 : -ENOTDIR;
}

int tree_is_below(const struct fs_node *node, const struct fs_node *dir)
{
	for (; node; node = node->parent)
		if (node == dir)
			return 1;
	return 0;
}
