/*
 * pend.c - names the mount remembers that ckptd does not know: job
 * directories made with mkdir before they have a version, and the VER.tmp
 * names of versions committed without a rename.
 *
 * ckptd has no empty jobs: a job exists once it has a version.  But users,
 * mkdir -p and cp -r make the job directory first, so the mount keeps it,
 * with the uid that made it, until rmdir; its first version makes it a job
 * in ckptd.  All under fs->mu.
 *
 * Layer: the namespace (ns_i.h).  It calls path.c (path_tmp_stem) and
 * vers.c (ver_held_name_locked) of its own layer, nothing above.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns_i.h"

/* ---- pending job directories --------------------------------------------- */

struct fs_pending *pend_find(struct ckptfs *fs, const char *path)
{
	struct fs_pending *p;
	struct fs_link *pos;

	for (pos = fs->pending.next; pos != &fs->pending; pos = pos->next) {
		p = fs_entry(pos, struct fs_pending, link);
		if (!strcmp(p->path, path))
			return p;
	}
	return NULL;
}

int pend_has_below(struct ckptfs *fs, const char *prefix)
{
	size_t n = strlen(prefix);
	struct fs_pending *p;
	struct fs_link *pos;

	for (pos = fs->pending.next; pos != &fs->pending; pos = pos->next) {
		p = fs_entry(pos, struct fs_pending, link);
		if (!strncmp(p->path, prefix, n) && p->path[n] == '/')
			return 1;
	}
	return 0;
}

int pend_add(struct ckptfs *fs, const char *path, uint32_t uid)
{
	struct fs_pending *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	strcpy(p->path, path);
	p->uid = uid;
	clock_gettime(CLOCK_REALTIME, &p->born);
	fs_list_add(&fs->pending, &p->link);
	return 0;
}

void pend_del(struct ckptfs *fs, struct fs_pending *p)
{
	(void)fs;
	fs_list_del(&p->link);
	free(p);
}

void pend_free_all(struct ckptfs *fs)
{
	while (fs->pending.next != &fs->pending)
		pend_del(fs, fs_entry(fs->pending.next, struct fs_pending,
				      link));
}

/* ---- aliases -------------------------------------------------------------- */

/*
 * A version shown as VER.tmp and committed by its marker or by autocommit
 * changes its name under the processes working in it (a rename-commit is
 * seen by the kernel; those are not).  So VER.tmp stays an alias of VER:
 * not listed, but found by a lookup, read-only like VER.  The newest
 * FS_ALIAS_MAX are kept.
 */
void alias_add(struct ckptfs *fs, const struct fs_version *ver)
{
	struct fs_alias *a = calloc(1, sizeof(*a));

	if (!a)
		return;
	strcpy(a->job, ver->job);
	strcpy(a->name, ver->name);
	pthread_mutex_lock(&fs->mu);
	fs_list_add(&fs->aliases, &a->link);
	if (++fs->naliases > FS_ALIAS_MAX) {
		struct fs_link *old = fs->aliases.next;

		fs_list_del(old);
		free(fs_entry(old, struct fs_alias, link));
		fs->naliases--;
	}
	pthread_mutex_unlock(&fs->mu);
}

void alias_resolve(struct ckptfs *fs, struct fs_path *p)
{
	char stem[CKPT_VERSION_MAX + 1];
	struct fs_alias *a;
	struct fs_link *pos;

	if (p->kind < P_VERSION || !path_tmp_stem(p->vdisp, stem))
		return;
	pthread_mutex_lock(&fs->mu);
	for (pos = fs->aliases.prev; pos != &fs->aliases; pos = pos->prev) {
		a = fs_entry(pos, struct fs_alias, link);
		if (!strcmp(a->name, stem) && !strcmp(a->job, p->job) &&
		    !ver_held_name_locked(fs, p->job, stem)) {
			strcpy(p->vdisp, stem);
			break;
		}
	}
	pthread_mutex_unlock(&fs->mu);
}

void alias_drop(struct ckptfs *fs, const char *job, const char *name)
{
	struct fs_link *pos, *next;
	struct fs_alias *a;

	pthread_mutex_lock(&fs->mu);
	for (pos = fs->aliases.next; pos != &fs->aliases; pos = next) {
		next = pos->next;
		a = fs_entry(pos, struct fs_alias, link);
		if (!strcmp(a->name, name) && !strcmp(a->job, job)) {
			fs_list_del(pos);
			free(a);
			fs->naliases--;
		}
	}
	pthread_mutex_unlock(&fs->mu);
}

void alias_free_all(struct ckptfs *fs)
{
	while (fs->aliases.next != &fs->aliases) {
		struct fs_link *pos = fs->aliases.next;

		fs_list_del(pos);
		free(fs_entry(pos, struct fs_alias, link));
	}
	fs->naliases = 0;
}
