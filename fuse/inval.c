/*
 * inval.c - the kernel's cached attributes of a file's other names.
 *
 * libfuse's high-level API gives each path a kernel inode of its own, so
 * the kernel caches the attributes (and pages) of each name of a
 * hard-linked file apart, for its attribute timeout (1 s).  A change made
 * through one name (a write, truncate, chmod, chown, utimensat; link and
 * unlink, which change st_nlink) must show through the others, so after it
 * the kernel is told to drop what it holds for them (fuse_invalidate_path):
 * their next stat asks the mount.  A file with one name costs nothing here.
 *
 * Telling the kernel waits for it to drop the pages of those names, so it
 * is done with no lock of ours held, and never from a WRITE: the kernel may
 * hold pages of a name while it waits for a WRITE through it, and two
 * writes through two names, each dropping the other's pages, would wait
 * for each other.  A write only marks the inode stale; the next close
 * (FLUSH) of a handle on it tells the kernel.  So a program that writes
 * through one name and reads through another sees the bytes from the
 * writer's close on, as on NFS (close-to-open); a stat of the other name
 * before that may show the old size for up to the attribute timeout.
 *
 * Layer: the operations (ops_i.h): it speaks to the kernel through
 * libfuse from a FUSE request, for io.c and nsops.c; it reads the mirror
 * (tree.c) and the version's shown name (vers.c) below it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_i.h"

/* Add the mount path of n (a name in ver's tree); fs->mu held. */
static void note_one(struct fs_inval *iv, const struct fs_version *ver,
		     const struct fs_node *n)
{
	char disp[CKPT_VERSION_MAX + sizeof(FS_TMP_SUFFIX)];
	char file[CKPT_PATH_MAX2 + 1];
	char **grown;
	char *path;

	if (tree_path(n, file, sizeof(file)) < 0)
		return;
	ver_display(ver, disp);
	if (asprintf(&path, "/%s/%s/%s", ver->job, disp, file) < 0)
		return;
	grown = realloc(iv->paths, (iv->n + 1) * sizeof(*grown));
	if (!grown) {
		free(path);
		return;
	}
	iv->paths = grown;
	iv->paths[iv->n++] = path;
}

void inval_note_locked(struct fs_inval *iv, const struct fs_version *ver,
		       const struct fs_inode *in, const struct fs_node *except)
{
	const struct fs_link *pos, *head = &in->names;
	const struct fs_node *n;

	if (in->nlink == 0 ||
	    (except && in->nlink == 1 && head->next == &except->alias))
		return;     /* no other name: the common case */
	for (pos = head->next; pos != head; pos = pos->next) {
		n = fs_entry(pos, struct fs_node, alias);
		if (n != except)
			note_one(iv, ver, n);
	}
}

void inval_send(struct fs_inval *iv)
{
	struct fuse *f;
	unsigned i;

	if (!iv->n)
		return;
	f = fuse_get_context()->fuse;
	/* -ENOENT: the kernel has not looked that name up; nothing cached */
	for (i = 0; i < iv->n; i++) {
		fuse_invalidate_path(f, iv->paths[i]);
		free(iv->paths[i]);
	}
	free(iv->paths);
	iv->paths = NULL;
	iv->n = 0;
}
