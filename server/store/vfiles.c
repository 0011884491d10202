/*
 * vfiles.c - a version's files and records: the file table (names, hard
 * links, sizes), its path hash, the records appended to it, and what
 * truncate, unlink and rename do to them (catalog.h).
 *
 * The file table is an array with a small open-addressing hash from path to
 * index; records are appended in arrival order (a later record wins where
 * two overlap; rindex.h resolves them for reads).
 *
 * Threads: the loop thread only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "catalog.h"
#include "namehash.h"
#include "xattr.h"

/* Enter live entry fi under its path (the table has room: vfile_add()
 * grows it). */
static void fhash_put(struct version *v, uint32_t fi)
{
	uint32_t mask = v->hcap - 1, k;

	k = name_hash(v->files[fi].path) & mask;
	while (v->fhash[k])
		k = (k + 1) & mask;
	v->fhash[k] = fi + 1;
}

/* Take entry fi out of the table (found under its path as it is now) and
 * shift the entries after it back, so that no probe chain breaks: O(its
 * cluster), never a rebuild (a client unlinking all N names would cost
 * the loop N^2 hashes). */
static void fhash_del(struct version *v, uint32_t fi)
{
	uint32_t mask = v->hcap - 1, i, j, k;

	if (!v->hcap)
		return;
	i = name_hash(v->files[fi].path) & mask;
	while (v->fhash[i] && v->fhash[i] != fi + 1)
		i = (i + 1) & mask;
	if (!v->fhash[i])
		return;
	v->fhash[i] = 0;
	for (j = (i + 1) & mask; v->fhash[j]; j = (j + 1) & mask) {
		k = name_hash(v->files[v->fhash[j] - 1].path) & mask;
		/* j stays where it is if its home k lies in (i, j] */
		if (i <= j ? i < k && k <= j : i < k || k <= j)
			continue;
		v->fhash[i] = v->fhash[j];
		v->fhash[j] = 0;
		i = j;
	}
}

static int fhash_rebuild(struct version *v, uint32_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	uint32_t i;

	if (!h)
		return -ENOMEM;
	free(v->fhash);
	v->fhash = h;
	v->hcap = cap;
	for (i = 0; i < v->nfiles; i++)
		if (!v->files[i].dead)
			fhash_put(v, i);
	return 0;
}

int version_name(struct version *v, const char *path)
{
	uint32_t k;

	if (!v->hcap)
		return -ENOENT;
	k = name_hash(path) & (v->hcap - 1);
	for (; v->fhash[k]; k = (k + 1) & (v->hcap - 1)) {
		const struct vfile *f = &v->files[v->fhash[k] - 1];

		if (!f->dead && !strcmp(f->path, path))
			return v->fhash[k] - 1;
	}
	return -ENOENT;
}

/* Append an entry named path (a new file, or a link to holder + 1). */
static int vfile_add(struct version *v, const char *path, uint32_t link)
{
	char *copy;
	int ret;

	ret = catalog_grow((void **)&v->files, &v->cfiles, v->nfiles + 1,
		   sizeof(*v->files));
	if (ret < 0)
		return ret;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	v->files[v->nfiles++] = (struct vfile){ .path = copy, .link = link,
						.nlink = 1 };
	v->nlive++;
	if (v->nfiles * 2 > v->hcap) {
		ret = fhash_rebuild(v, v->hcap ? v->hcap * 2 : 16);
		if (ret < 0) {
			free(v->files[--v->nfiles].path);
			v->nlive--;
			return ret;
		}
	} else {
		fhash_put(v, v->nfiles - 1);
	}
	if (link)
		v->files[link - 1].nlink++;
	return v->nfiles - 1;
}

/* A byte's rank in path_order(): the end, then '/', then the rest. */
static int path_rank(const unsigned char *s, size_t i, size_t len)
{
	return i == len ? 0 : s[i] == '/' ? 1 : s[i] + 2;
}

/*
 * Names in the order of their components ('/' before any other byte), so
 * that the names below "a" come right after "a": "a", "a/b", "a!".  Equal
 * bytes are skipped eight at a time (names share long prefixes).
 */
static int path_order(const void *pa, const void *pb, void *arg)
{
	const struct version *v = arg;
	const unsigned char *a, *b;
	size_t la, lb, n, i = 0;

	a = (const unsigned char *)v->files[*(const uint32_t *)pa].path;
	b = (const unsigned char *)v->files[*(const uint32_t *)pb].path;
	la = strlen((const char *)a);
	lb = strlen((const char *)b);
	n = la < lb ? la : lb;
	while (i + 8 <= n && !memcmp(a + i, b + i, 8))
		i += 8;
	while (i < n && a[i] == b[i])
		i++;
	return path_rank(a, i, la) - path_rank(b, i, lb);
}

/* What entry i's own type and size forbid, or 0. */
static int entry_check(const struct version *v, uint32_t i)
{
	const struct vfile *f = &v->files[vfile_data(v, i)];

	if (v->files[i].link && attr_is_type(&f->attr, CKPT_ATTR_IFDIR))
		return -EPERM;          /* a hard link to a directory */
	if (attr_is_type(&f->attr, CKPT_ATTR_IFLNK) && f->size > CKPT_PATH_MAX2)
		return -ENAMETOOLONG;
	if (attr_is_type(&f->attr, CKPT_ATTR_IFLNK) &&
	    (f->size == 0 || f->data_end != f->size))
		return -EINVAL;         /* empty, or a hole at its end */
	if (attr_is_type(&f->attr, CKPT_ATTR_IFDIR) && f->size)
		return -EISDIR;
	return 0;
}

int version_check(const struct version *v, uint32_t *bad)
{
	uint32_t i, n = 0, *ix;
	size_t la;
	int ret = 0;

	ix = malloc((v->nfiles ? v->nfiles : 1) * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (i = 0; i < v->nfiles; i++) {
		if (v->files[i].dead)
			continue;
		*bad = i;
		ret = entry_check(v, i);
		if (ret < 0)
			goto out;
		ix[n++] = i;
	}
	/* Only a directory's entry may have names below it: one that does
	 * is followed by one of them. */
	qsort_r(ix, n, sizeof(*ix), path_order, (void *)v);
	for (i = 0; i + 1 < n; i++) {
		const char *a = v->files[ix[i]].path, *b = v->files[ix[i + 1]].path;

		la = strlen(a);
		if (!strncmp(a, b, la) && b[la] == '/' &&
		    !attr_is_type(&v->files[vfile_data(v, ix[i])].attr,
				  CKPT_ATTR_IFDIR)) {
			*bad = ix[i];
			ret = -ENOTDIR;
			break;
		}
	}
out:
	free(ix);
	return ret;
}

int version_file(struct version *v, const char *path, int create)
{
	int fi = version_name(v, path);

	if (fi >= 0)
		return vfile_data(v, fi);
	return create ? vfile_add(v, path, 0) : fi;
}

int version_link(struct version *v, uint32_t fi, const char *path)
{
	int ret = vfile_add(v, path, vfile_data(v, fi) + 1);

	return ret < 0 ? ret : 0;
}

uint64_t version_bytes(const struct version *v)
{
	uint64_t bytes = 0;
	uint32_t i;

	for (i = 0; i < v->nfiles; i++)
		if (!v->files[i].dead && !v->files[i].link)
			bytes += v->files[i].size;
	return bytes;
}

int version_add_rec(struct version *v, const struct man_rec *r)
{
	struct vfile *f = &v->files[r->file];
	int ret;

	ret = catalog_grow((void **)&v->recs, &v->crecs, v->nrecs + 1,
		   sizeof(*v->recs));
	if (ret < 0)
		return ret;
	v->recs[v->nrecs++] = *r;
	f->nrecs++;
	if (r->seg != MAN_SEG_ZERO)
		f->stored += r->len;
	if (r->file_off + r->len > f->size)
		f->size = r->file_off + r->len;
	if (r->seg != MAN_SEG_ZERO && r->file_off + r->len > f->data_end)
		f->data_end = r->file_off + r->len;
	return 0;
}

int version_truncate(struct version *v, uint32_t fi, uint64_t size)
{
	struct vfile *f = &v->files[fi];
	uint64_t off, n, end;
	struct man_rec z;
	int ret;

	if (size > CKPT_FILE_MAX)
		return -EFBIG;
	/* Zeros over the stored bytes that are cut, in records of at most
	 * 1 GiB; bytes no write stored read as zeros anyway. */
	end = f->data_end < f->size ? f->data_end : f->size;
	for (off = size; off < end; off += n) {
		n = end - off < (1u << 30) ? end - off : (1u << 30);
		z = (struct man_rec){ .file = fi, .seg = MAN_SEG_ZERO,
				      .file_off = off, .len = (uint32_t)n };
		ret = version_add_rec(v, &z);
		if (ret < 0)
			return ret;
	}
	if (f->data_end > size)
		f->data_end = size;
	f->size = size;
	return size == 0 ? vfile_clear_failed(f) : 0;
}

int vfile_clear_failed(struct vfile *f)
{
	uint8_t buf[XATTR_MAX], *copy = NULL;
	size_t len = f->xlen;

	if (!len)
		return 0;
	/* Copied on change, as op_setxattr() does. */
	memcpy(buf, f->xattr, len);
	if (xattr_remove(buf, &len, CKPT_XATTR_FAILED) < 0)
		return 0;
	if (len && !(copy = malloc(len)))
		return -ENOMEM;
	if (len)
		memcpy(copy, buf, len);
	free(f->xattr);
	f->xattr = copy;
	f->xlen = (uint32_t)len;
	return 0;
}

void version_unlink_file(struct version *v, uint32_t fi)
{
	struct vfile *f = &v->files[fi], *l;
	uint32_t i;
	char *p;

	if (f->link) {
		v->files[f->link - 1].nlink--;
	} else if (f->nlink > 1) {
		/* The file keeps a name: its first other name moves into
		 * the holder, whose entry stays live; that name's entry
		 * dies instead. */
		for (i = fi + 1; i < v->nfiles; i++) {
			l = &v->files[i];
			if (!l->dead && l->link == fi + 1)
				break;
		}
		if (i < v->nfiles) {
			fhash_del(v, i);
			fhash_del(v, fi);
			p = f->path;
			f->path = l->path;
			l->path = p;
			f->nlink--;
			fhash_put(v, fi);
			v->files[i].dead = 1;
			v->nlive--;
			return;
		}
	}
	fhash_del(v, fi);
	v->files[fi].dead = 1;
	v->nlive--;
}

int version_rename_file(struct version *v, uint32_t fi, const char *to)
{
	char *copy = strdup(to);

	if (!copy)
		return -ENOMEM;
	fhash_del(v, fi);
	free(v->files[fi].path);
	v->files[fi].path = copy;
	fhash_put(v, fi);
	return 0;
}

void vfile_info(const struct version *v, uint32_t fi,
		struct ckpt_file_info *out)
{
	uint32_t d = vfile_data(v, fi);

	memset(out, 0, sizeof(*out));
	/* The whole path goes on the wire from name (it lives as long as v
	 * does); path[] stays "" (see ckpt.h, "Long paths"). */
	out->name = v->files[fi].path;
	out->size = v->files[d].size;
	out->extents = v->files[d].nrecs;
	out->attr = v->files[d].attr;
	out->ino = d + 1;
	out->nlink = v->files[d].nlink;
	out->data = v->files[d].stored < out->size ? v->files[d].stored
						   : out->size;
	out->flags = vfile_failed(v, fi) ? CKPT_FILE_FAILED : 0;
}

int vfile_failed(const struct version *v, uint32_t fi)
{
	const struct vfile *f = &v->files[vfile_data(v, fi)];
	const uint8_t *val;

	return !v->files[fi].dead && f->xlen &&
	       xattr_get(f->xattr, f->xlen, CKPT_XATTR_FAILED, &val) >= 0;
}

int version_failed_file(const struct version *v)
{
	uint32_t fi;

	for (fi = 0; fi < v->nfiles; fi++)
		if (vfile_failed(v, fi))
			return (int)fi;
	return -ENOENT;
}
