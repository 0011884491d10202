/*
 * pfscache.c - PFS manifests kept for reads, within a budget (pfscache.h).
 *
 * One list, least recently used first, under one mutex; a manifest is
 * loaded, and its stamp checked, outside it.  An entry being loaded is in
 * the list (loading) so that others asking for it wait for that load
 * (cv) instead of reading the same manifest again.  An entry found stale
 * or whose load failed leaves the list at once (gone) and is freed by its
 * last holder.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "pfs.h"
#include "pfscache.h"

struct pfsc_entry {
	struct list link;         /* in c->lru unless gone */
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char node[CKPT_HOST_MAX + 1];
	struct pfsman m;          /* valid once loading is 0 */
	struct pfs_stamp stamp;   /* of the file m was read from */
	uint32_t *byname;         /* m's entries sorted by path, or NULL
				   * (no memory: pfsman_find()'s scan) */
	uint64_t bytes;           /* pfsman_size(&m), counted in c->bytes */
	unsigned refs;
	int loading;
	int gone;
};

struct pfscache {
	pthread_mutex_t mu;
	pthread_cond_t cv;        /* a load ended */
	const char *target;
	uint64_t budget;
	struct list lru;
	uint32_t n;
	uint64_t bytes, loads, hits;
};

struct pfscache *pfscache_new(const char *target, uint64_t budget)
{
	struct pfscache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->target = target;
	c->budget = budget;
	list_init(&c->lru);
	return c;
}

static void entry_free(struct pfsc_entry *x)
{
	pfsman_release(&x->m);
	free(x->byname);
	free(x);
}

static int by_path(const void *a, const void *b, void *arg)
{
	const struct pfs_file *f = arg;

	return strcmp(f[*(const uint32_t *)a].path, f[*(const uint32_t *)b].path);
}

/* x->byname for x->m, so that a read finds its file in log time, not by a
 * scan of every path (a restore of n files would be n^2). */
static void index_names(struct pfsc_entry *x)
{
	uint32_t i;

	x->byname = malloc((x->m.nfiles ? x->m.nfiles : 1) *
			   sizeof(*x->byname));
	if (!x->byname)
		return;
	for (i = 0; i < x->m.nfiles; i++)
		x->byname[i] = i;
	qsort_r(x->byname, x->m.nfiles, sizeof(*x->byname), by_path,
		x->m.files);
}

int pfscache_find(const struct pfsc_entry *x, const char *path, uint32_t hint)
{
	const struct pfsman *m = &x->m;
	uint32_t lo = 0, hi = m->nfiles, mid;
	int c;

	if (!x->byname)
		return pfsman_find(m, path, hint);
	if (hint < m->nfiles && !strcmp(m->files[hint].path, path))
		return (int)hint;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(m->files[x->byname[mid]].path, path);
		if (!c)
			return (int)x->byname[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

/* Take x out of the list (under mu); freed here if nobody holds it. */
static void retire(struct pfscache *c, struct pfsc_entry *x)
{
	if (!x->gone) {
		list_del(&x->link);
		c->n--;
		c->bytes -= x->bytes;
		x->gone = 1;
	}
	if (!x->refs)
		entry_free(x);
}

/* Drop unheld entries, oldest first, while over the budget or the count;
 * the most recently used stays. */
static void trim(struct pfscache *c)
{
	struct list *pos, *tmp;
	struct pfsc_entry *x;

	list_for_each_safe(pos, tmp, &c->lru) {
		if (c->bytes <= c->budget && c->n <= PFSC_MAX_ENTRIES)
			break;
		if (pos == c->lru.prev)
			break;
		x = list_entry(pos, struct pfsc_entry, link);
		if (!x->refs && !x->loading)
			retire(c, x);
	}
}

static struct pfsc_entry *find(struct pfscache *c, const struct pfsc_want *w)
{
	struct list *pos;
	struct pfsc_entry *x;

	list_for_each(pos, &c->lru) {
		x = list_entry(pos, struct pfsc_entry, link);
		if (!strcmp(x->job, w->job) && !strcmp(x->version, w->version) &&
		    !strcmp(x->node, w->node))
			return x;
	}
	return NULL;
}

static int stamp_eq(const struct pfs_stamp *a, const struct pfs_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* Under mu: a new entry for w, being loaded by the caller, who holds it. */
static struct pfsc_entry *entry_new(struct pfscache *c,
				    const struct pfsc_want *w)
{
	struct pfsc_entry *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	snprintf(x->job, sizeof(x->job), "%s", w->job);
	snprintf(x->version, sizeof(x->version), "%s", w->version);
	snprintf(x->node, sizeof(x->node), "%s", w->node);
	x->loading = 1;
	x->refs = 1;
	list_add_tail(&c->lru, &x->link);
	c->n++;
	return x;
}

/* The entry for w, held: found with its stamp still the file's (*fresh
 * 0), or loaded now (*fresh 1).  0 or -errno. */
static int hold(struct pfscache *c, const struct pfsc_want *w,
		struct pfsc_entry **out, int *fresh)
{
	struct pfs_stamp now;
	struct pfsc_entry *x;
	int ret;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		x = find(c, w);
		if (!x)
			break;
		if (x->loading) {
			pthread_cond_wait(&c->cv, &c->mu);
			continue;
		}
		x->refs++;
		list_del(&x->link);                 /* most recently used */
		list_add_tail(&c->lru, &x->link);
		pthread_mutex_unlock(&c->mu);
		ret = pfs_stamp(c->target, w->job, w->version, w->node, &now);
		pthread_mutex_lock(&c->mu);
		if (ret == 0 && stamp_eq(&now, &x->stamp)) {
			c->hits++;
			pthread_mutex_unlock(&c->mu);
			*out = x;
			*fresh = 0;
			return 0;
		}
		x->refs--;
		retire(c, x);           /* not the file there now: load it */
	}
	x = entry_new(c, w);
	pthread_mutex_unlock(&c->mu);
	if (!x)
		return -ENOMEM;
	ret = pfs_load_stamped(c->target, w->job, w->version, w->node, &x->m,
			       &x->stamp);
	if (ret == 0)
		index_names(x);
	pthread_mutex_lock(&c->mu);
	x->loading = 0;
	pthread_cond_broadcast(&c->cv);
	if (ret < 0) {
		x->refs--;
		retire(c, x);
	} else {
		x->bytes = pfsman_held(&x->m) +
			   (uint64_t)x->m.nfiles * sizeof(*x->byname);
		c->bytes += x->bytes;
		c->loads++;
		trim(c);
		*out = x;
		*fresh = 1;
	}
	pthread_mutex_unlock(&c->mu);
	return ret;
}

int pfscache_get(struct pfscache *c, const struct pfsc_want *w,
		 const struct pfsman **m, struct pfsc_entry **e)
{
	struct pfsc_entry *x;
	int ret, fresh;

	do {
		ret = hold(c, w, &x, &fresh);
		if (ret < 0)
			return ret;
		if ((w->by_seq ? x->m.seq == w->seq
			       : x->m.sealed_ns == w->sealed_ns) &&
		    x->m.uid == w->uid) {
			*m = &x->m;
			*e = x;
			return 0;
		}
		/* Another incarnation of the name.  Kept, it might pass for
		 * the file there now (a stamp is only as fine as the file
		 * system's clock): load once more before saying so. */
		pthread_mutex_lock(&c->mu);
		x->refs--;
		retire(c, x);
		pthread_mutex_unlock(&c->mu);
	} while (!fresh);
	return -CKPT_ECORRUPT;
}

void pfscache_put(struct pfscache *c, struct pfsc_entry *x)
{
	pthread_mutex_lock(&c->mu);
	x->refs--;
	if (x->gone)
		retire(c, x);
	else
		trim(c);
	pthread_mutex_unlock(&c->mu);
}

void pfscache_stats(struct pfscache *c, struct pfsc_stats *out)
{
	pthread_mutex_lock(&c->mu);
	out->loads = c->loads;
	out->hits = c->hits;
	out->bytes = c->bytes;
	out->entries = c->n;
	pthread_mutex_unlock(&c->mu);
}

void pfscache_free(struct pfscache *c)
{
	struct list *pos, *tmp;

	if (!c)
		return;
	list_for_each_safe(pos, tmp, &c->lru)
		entry_free(list_entry(pos, struct pfsc_entry, link));
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
