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
 * A node is a name; what the names of one file share (size, times,
 * attributes, extended attributes, the write-behind buffer) is its inode,
 * struct fs_inode, so that a hard link (fs_link) is a second node of the
 * same inode, and a change through either name is seen through both.  A
 * directory's node has an inode of its own too, so every field is reached
 * the same way, node->in.  An inode counts the nodes that name it; the
 * last one to go frees it.
 *
 * libfuse's unlinked open files (renamed FS_HIDDEN...) are moved out of
 * their directory into t->hidden, a directory that is not in the tree:
 * they do not keep it from being removed, are never listed or committed,
 * and are found by their name alone (tree_child_any).
 *
 * The tree is protected by fs->mu.  A node that is unlinked or replaced
 * while a handle holds it is detached (out of the tree, marked) and freed
 * by tree_release() when the last handle goes; its inode stays with it, and
 * keeps its other names.
 *
 * Layer: the namespace (ns_i.h), at its bottom: it calls only attr.c
 * (attr_ns) and path.c (path_base) of its own layer.  The write-behind below
 * sees a file only as the slot in->wb (wb_i.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns_i.h"

static uint32_t hash_name(const struct fs_node *dir, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uintptr_t)dir;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static struct fs_inode *inode_new(struct fs_tree *t)
{
	struct fs_inode *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->ino = __atomic_add_fetch(t->next_ino, 1, __ATOMIC_RELAXED);
	fs_list_init(&in->names);
	clock_gettime(CLOCK_REALTIME, &in->mtime);
	return in;
}

/* A node naming in, or a new inode when in is NULL. */
static struct fs_node *node_new(struct fs_tree *t, const char *name,
				int is_dir, struct fs_inode *in)
{
	struct fs_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strdup(name);
	n->in = in ? in : inode_new(t);
	if (!n->name || !n->in) {
		if (!in)
			free(n->in);
		free(n->name);
		free(n);
		return NULL;
	}
	n->in->refs++;
	n->is_dir = is_dir;
	fs_list_init(&n->sib);
	fs_list_init(&n->children);
	fs_list_init(&n->alias);
	return n;
}

/* Free n (out of the tree) and, with its last node, its inode.  No inode
 * is freed with a write-behind buffer: names go under the ns lock held for
 * writing, after every buffer was sent (wbuf.c), and a file with no name
 * left takes no writes. */
static void node_free(struct fs_node *n)
{
	if (--n->in->refs == 0) {
		free(n->in->xattr);
		free(n->in);
	}
	free(n->name);
	free(n);
}

int tree_init(struct fs_tree *t, uint64_t *next_ino)
{
	memset(t, 0, sizeof(*t));
	t->next_ino = next_ino;
	t->nbuckets = 64;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	t->root = node_new(t, "", 1, NULL);
	t->hidden = node_new(t, "", 1, NULL);
	if (!t->buckets || !t->root || !t->hidden) {
		free(t->buckets);
		if (t->root)
			node_free(t->root);
		if (t->hidden)
			node_free(t->hidden);
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
		fs_list_del(&n->alias);
		n->in->nlink--;
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
	free_children(t->hidden);
	node_free(t->hidden);
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

int tree_hidden_name(const char *name)
{
	return !strncmp(name, FS_HIDDEN, sizeof(FS_HIDDEN) - 1);
}

int tree_is_hidden(const struct fs_tree *t, const struct fs_node *node)
{
	return node->parent && node->parent == t->hidden;
}

struct fs_node *tree_child_any(const struct fs_tree *t,
			       const struct fs_node *dir, const char *name)
{
	struct fs_node *n = tree_child(t, dir, name);

	if (!n && tree_hidden_name(name))
		n = tree_child(t, t->hidden, name);
	return n;
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
		n = *e ? tree_child(t, n, name) : tree_child_any(t, n, name);
		path = *e ? e + 1 : e;
	}
	return n;
}

/* An entry of dir came or went: its mtime (and ctime) is now, also over a
 * time set with utimensat (attr.c). */
static void dir_changed(struct fs_node *dir)
{
	struct fs_inode *in = dir->in;

	clock_gettime(CLOCK_REALTIME, &in->mtime);
	in->attr.mtime_ns = attr_ns(&in->mtime);
	in->attr.ctime_ns = in->attr.mtime_ns;
}

/* Link n under dir (n->name set). */
static void link_child(struct fs_tree *t, struct fs_node *dir,
		       struct fs_node *n)
{
	n->parent = dir;
	n->hash = hash_name(dir, n->name);
	fs_list_add(&dir->children, &n->sib);
	fs_list_add(&n->in->names, &n->alias);
	n->in->nlink++;
	dir->nchild++;
	dir_changed(dir);
	hash_grow(t);
	hash_insert(t, n);
}

static void unlink_child(struct fs_tree *t, struct fs_node *n)
{
	hash_remove(t, n);
	fs_list_del(&n->sib);
	fs_list_del(&n->alias);
	n->in->nlink--;
	n->parent->nchild--;
	dir_changed(n->parent);
	n->parent = NULL;
}

/* Add a name under dir: of in, or of a new inode. */
static int add_node(struct fs_tree *t, struct fs_node *dir, const char *name,
		    int is_dir, struct fs_inode *in, struct fs_node **out)
{
	struct fs_node *n = node_new(t, name, is_dir, in);

	if (!n)
		return -ENOMEM;
	link_child(t, dir, n);
	if (out)
		*out = n;
	return 0;
}

int tree_add(struct fs_tree *t, struct fs_node *dir, const char *name,
	     int is_dir, struct fs_node **out)
{
	return add_node(t, dir, name, is_dir, NULL, out);
}

int tree_link(struct fs_tree *t, struct fs_node *dir, const char *name,
	      struct fs_inode *in, struct fs_node **out)
{
	return add_node(t, dir, name, 0, in, out);
}

int tree_add_path(struct fs_tree *t, const char *path, int is_dir,
		  struct fs_inode *in, struct fs_node **out)
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
			ret = add_node(t, dir, name, !last || is_dir,
				       last && !is_dir ? in : NULL, &n);
			if (ret < 0)
				return ret;
		} else if (last && n->is_dir != !!is_dir) {
			return -EINVAL;
		}
		if (last) {
			*out = n;
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

int tree_child_path(const struct fs_node *dir, const char *name, char *buf,
		    size_t cap)
{
	int len = tree_path(dir, buf, cap);

	if (len < 0)
		return len;
	if ((size_t)len + (len ? 1 : 0) + strlen(name) + 1 > cap)
		return -ENAMETOOLONG;
	if (len)
		buf[len++] = '/';
	strcpy(buf + len, name);
	return len + (int)strlen(name);
}

int tree_inode_path(const struct fs_inode *in, char *buf, size_t cap)
{
	if (!in->nlink)
		return -ENOENT;
	return tree_path(fs_entry(in->names.next, struct fs_node, alias), buf,
			 cap);
}

int tree_node_path(const struct fs_node *node, char *buf, size_t cap)
{
	return node->detached ? tree_inode_path(node->in, buf, cap)
			      : tree_path(node, buf, cap);
}

static int hidden(const struct fs_node *n)
{
	return tree_hidden_name(n->name);
}

unsigned tree_nlink(const struct fs_node *node)
{
	const struct fs_link *pos, *head = &node->in->names;
	unsigned count = 0;

	for (pos = head->next; pos != head; pos = pos->next)
		count += !hidden(fs_entry(pos, struct fs_node, alias));
	/* libfuse takes one off what a name it hid shows (fuse_lib_getattr):
	 * its own name counts for it. */
	return count + (!node->detached && hidden(node));
}

int tree_parent(const struct fs_tree *t, const struct fs_path *p,
		struct fs_node **dir, const char **base)
{
	char dpath[CKPT_PATH_MAX2 + 1];
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
