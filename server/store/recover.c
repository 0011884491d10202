/*
 * recover.c - start-up recovery of the local store (see recover.h).
 *
 * Recovery works in passes over what it read once: every segment header
 * (read_headers), every manifest (scan_manifests), then a verdict per
 * manifest (judge), then quarantine of what failed (quarantine_all), then a
 * verdict per segment nobody claimed (sweep_segments), then the quarantine
 * left by earlier starts (relist).  Nothing is removed or recycled before
 * every manifest has been judged, so the order of readdir() cannot decide
 * what is kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "log.h"
#include "recover.h"
#include "rmlog.h"
#include "sys.h"

enum hdr_kind {
	HK_NONE = 0,    /* no segment file with this id */
	HK_BLANK,       /* all zeros: new, or freed */
	HK_VALID,       /* names a version */
	HK_BAD,         /* unreadable, or fails its checks */
};

struct shdr {
	uint8_t kind;   /* enum hdr_kind */
	uint8_t claimed;/* by a loaded version */
	uint8_t taken;  /* moved to quarantine */
	int err;        /* HK_BAD: why */
	struct seghdr h;/* HK_VALID */
};

struct found {
	char file[64];          /* name in man/ */
	struct manifest m;      /* whole if ok, else only its head */
	int ok;                 /* decoded whole */
	int named;              /* the head is known */
	int damaged;
	char reason[CKPT_REASON_MAX + 1];
	char qname[64];         /* quarantine directory, once made */
};

struct rstate {
	struct catalog *cat;
	struct shdr *hdr;       /* by segment id, cat->segs->n of them */
	uint32_t nhdr;
	struct found *f;        /* manifests, sorted by seq */
	uint32_t nf, cf;
	char stamp[32];         /* YYYYmmdd-HHMMSS of this start */
	uint64_t max_open_id;
	uint64_t *gone;         /* open_ids in the removal log, sorted */
	uint32_t ngone;
	uint32_t ncleared;      /* headers of removed versions cleared */
	uint64_t max_seq;       /* highest seq the removal log names */
	int unnamed_used;       /* an unreadable manifest's quarantine was
				 * given a name from a segment header */
};

/* ---- reading ------------------------------------------------------------ */

static int read_whole(const char *path, void **out, size_t *len)
{
	struct stat st;
	void *buf;
	int fd, ret;

	fd = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	ret = sys_pread_all(fd, buf, st.st_size, 0);
	if (ret < 0) {
		free(buf);
		goto out_close;
	}
	*out = buf;
	*len = st.st_size;
out_close:
	close(fd);
	return ret;
}

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void read_header(struct rstate *st, uint32_t id, uint8_t *buf)
{
	struct shdr *s = &st->hdr[id];
	int fd = segs_fd(st->cat->segs, id), ret;

	if (fd < 0)
		return;
	ret = sys_pread_all(fd, buf, SEGHDR_SIZE, 0);
	if (ret == 0 && all_zero(buf, SEGHDR_SIZE)) {
		s->kind = HK_BLANK;
		return;
	}
	if (ret == 0)
		ret = seghdr_decode(buf, &s->h);
	if (ret == 0 && s->h.seg != id)
		ret = -CKPT_ECORRUPT;   /* a copy of another segment's */
	if (ret < 0) {
		s->kind = HK_BAD;
		s->err = ret;
		return;
	}
	s->kind = HK_VALID;
	if (s->h.open_id > st->max_open_id)
		st->max_open_id = s->h.open_id;
}

static int read_headers(struct rstate *st)
{
	uint8_t *buf;
	uint32_t id;

	st->nhdr = st->cat->segs->n;
	st->hdr = calloc(st->nhdr ? st->nhdr : 1, sizeof(*st->hdr));
	if (!st->hdr)
		return -ENOMEM;
	/* Aligned: the segments may be open with O_DIRECT. */
	if (posix_memalign((void **)&buf, 4096, SEGHDR_SIZE))
		return -ENOMEM;
	for (id = 0; id < st->nhdr; id++)
		read_header(st, id, buf);
	free(buf);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The removal log (catalog.h): open_ids of local copies given up on
 * purpose.  A torn last record is ignored. */
static int read_rmlog(struct rstate *st)
{
	uint8_t *buf = NULL;
	size_t len = 0, i;
	uint64_t seq;
	int ret;

	ret = read_whole(st->cat->rmlog, (void **)&buf, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	st->gone = calloc(len / RMLOG_REC + 1, sizeof(*st->gone));
	if (!st->gone) {
		free(buf);
		return -ENOMEM;
	}
	for (i = 0; i + RMLOG_REC <= len; i += RMLOG_REC) {
		if (rmlog_decode(buf + i, &st->gone[st->ngone], &seq) < 0)
			continue;
		st->ngone++;
		if (seq > st->max_seq)
			st->max_seq = seq;
	}
	free(buf);
	qsort(st->gone, st->ngone, sizeof(*st->gone), cmp_u64);
	return 0;
}

static int removed(const struct rstate *st, uint64_t open_id)
{
	return st->ngone && bsearch(&open_id, st->gone, st->ngone,
				    sizeof(*st->gone), cmp_u64) != NULL;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

/* A new entry at the end of st->f, zeroed, or NULL. */
static struct found *found_new(struct rstate *st)
{
	struct found *f;

	if (st->nf == st->cf) {
		uint32_t n = st->cf ? st->cf * 2 : 16;

		f = realloc(st->f, n * sizeof(*f));
		if (!f)
			return NULL;
		st->f = f;
		st->cf = n;
	}
	f = &st->f[st->nf];
	memset(f, 0, sizeof(*f));
	return f;
}

/* Read man/name into a new entry of st->f. */
static int add_found(struct rstate *st, const char *name)
{
	struct found *f;
	char path[1000];
	size_t len = 0;
	void *buf = NULL;
	int ret;

	f = found_new(st);
	if (!f)
		return -ENOMEM;
	snprintf(f->file, sizeof(f->file), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", st->cat->mandir, name);
	ret = read_whole(path, &buf, &len);
	if (ret == -ENOMEM)
		return ret;
	if (ret == 0) {
		ret = manifest_decode(buf, len, &f->m);
		if (ret == -ENOMEM)
			goto out_free;
		f->ok = f->named = ret == 0;
		if (ret < 0)
			f->named = manifest_peek(buf, len, &f->m) == 0;
	}
	if (ret < 0) {
		f->damaged = 1;
		snprintf(f->reason, sizeof(f->reason), "manifest %s: %s",
			 name, ckpt_strerror(ret));
	}
	/* The file name is the seq: it orders and names an unreadable one, and
	 * no later version may take it.  A manifest under another seq's name
	 * is a copy (rm would unlink by seq and leave it behind). */
	if (!f->named)
		f->m.seq = strtoull(name, NULL, 16);
	else if (f->ok && f->m.seq != strtoull(name, NULL, 16)) {
		f->damaged = 1;
		snprintf(f->reason, sizeof(f->reason), "manifest %s holds seq %llx",
			 name, (unsigned long long)f->m.seq);
	}
	if (f->m.seq >= st->cat->next_seq)
		st->cat->next_seq = f->m.seq + 1;
	if (f->named && f->m.open_id > st->max_open_id)
		st->max_open_id = f->m.open_id;
	st->nf++;
	ret = 0;
out_free:
	free(buf);
	return ret;
}

/* A manifest never renamed into place: the first seal of a version that
 * never committed, or a rewrite (a level change) of one whose .man stands. */
static void drop_tmp(struct rstate *st, const char *name)
{
	char path[1000], man[1000];
	size_t n = strlen(name) - 4;

	snprintf(path, sizeof(path), "%s/%s", st->cat->mandir, name);
	snprintf(man, sizeof(man), "%s/%.*s.man", st->cat->mandir, (int)n,
		 name);
	if (access(man, F_OK) == 0)
		log_printf(LOG_INFO, "recovery: removing %s (an unfinished rewrite; %s stands)",
			   path, man);
	else
		log_printf(LOG_INFO, "recovery: removing unfinished manifest %s (its version never committed)",
			   path);
	unlink(path);
}

static int scan_manifests(struct rstate *st)
{
	struct dirent *de;
	DIR *d;
	int ret = 0;

	d = opendir(st->cat->mandir);
	if (!d)
		return -errno;
	while (ret == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (has_suffix(de->d_name, ".tmp")) {
			drop_tmp(st, de->d_name);
			continue;
		}
		if (!has_suffix(de->d_name, ".man") ||
		    strlen(de->d_name) >= sizeof(st->f->file)) {
			log_printf(LOG_WARNING, "recovery: %s/%s is not ours; left alone",
				   st->cat->mandir, de->d_name);
			continue;
		}
		ret = add_found(st, de->d_name);
	}
	closedir(d);
	return ret;
}

static int by_seq(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	return x->m.seq < y->m.seq ? -1 : x->m.seq > y->m.seq;
}

/* ---- verdicts ----------------------------------------------------------- */

static int hdr_names(const struct shdr *s, const struct manifest *m)
{
	return s->kind == HK_VALID && s->h.open_id == m->open_id &&
	       !strcmp(s->h.job, m->job) && !strcmp(s->h.version, m->version);
}

/* Does every segment f names carry its header?  0, or fills f->reason. */
static int check_segments(struct rstate *st, struct found *f)
{
	const struct manifest *m = &f->m;
	uint32_t i, seg = MAN_SEG_ZERO;
	const struct shdr *s;

	for (i = 0; i < m->nrecs; i++) {
		if (m->recs[i].seg == seg || m->recs[i].seg == MAN_SEG_ZERO)
			continue;
		seg = m->recs[i].seg;
		s = seg < st->nhdr ? &st->hdr[seg] : NULL;
		if (s && hdr_names(s, m) && !s->claimed)
			continue;
		if (!s || s->kind == HK_NONE)
			snprintf(f->reason, sizeof(f->reason), "segment %u is missing", seg);
		else if (s->kind == HK_BAD)
			snprintf(f->reason, sizeof(f->reason), "segment %u: header %s",
				 seg, ckpt_strerror(s->err));
		else if (s->kind == HK_BLANK)
			snprintf(f->reason, sizeof(f->reason), "segment %u: header cleared (segment freed)",
				 seg);
		else if (s->claimed)
			snprintf(f->reason, sizeof(f->reason), "segment %u is another version's", seg);
		else
			snprintf(f->reason, sizeof(f->reason), "segment %u: header names %.50s/%.30s",
				 seg, s->h.job, s->h.version);
		return -ESTALE;
	}
	return 0;
}

static void claim(struct rstate *st, const struct manifest *m)
{
	uint32_t i;

	for (i = 0; i < m->nrecs; i++)
		if (m->recs[i].seg != MAN_SEG_ZERO)
			st->hdr[m->recs[i].seg].claimed = 1;
}

/* Load every manifest that checks out; mark the rest damaged. */
static int judge(struct rstate *st)
{
	uint32_t i;
	int ret;

	for (i = 0; i < st->nf; i++) {
		struct found *f = &st->f[i];

		if (f->damaged)
			continue;
		ret = check_segments(st, f);
		if (ret == 0) {
			ret = catalog_load(st->cat, &f->m);
			if (ret == -ENOMEM)
				return ret;
			if (ret == -EEXIST)
				snprintf(f->reason, sizeof(f->reason),
					 "a second manifest of a loaded version");
			else if (ret < 0)
				snprintf(f->reason, sizeof(f->reason), "%s",
					 ckpt_strerror(ret));
		}
		if (ret < 0) {
			f->damaged = 1;
			continue;
		}
		claim(st, &f->m);
	}
	return 0;
}

/* ---- quarantine --------------------------------------------------------- */

/* Make <qdir>/<stamp>-<tag>[.N] and put its name in out. */
static int make_qdir(struct rstate *st, const char *tag, char *out, size_t cap)
{
	char path[1000];
	int i;

	for (i = 0; i < 100; i++) {
		if (i)
			snprintf(out, cap, "%s-%s.%d", st->stamp, tag, i);
		else
			snprintf(out, cap, "%s-%s", st->stamp, tag);
		snprintf(path, sizeof(path), "%s/%s", st->cat->qdir, out);
		if (mkdir(path, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int write_reason(struct rstate *st, const char *qname,
			const char *reason)
{
	char path[1000], line[CKPT_REASON_MAX + 2];
	int n;

	snprintf(path, sizeof(path), "%s/%s/reason", st->cat->qdir, qname);
	n = snprintf(line, sizeof(line), "%s\n", reason);
	return sys_write_file(path, line, n, 0600);
}

/* Evidence that could not be moved: claimed where it is, never recycled. */
static void keep_segment(struct rstate *st, uint32_t id)
{
	segs_claim(st->cat->segs, id);
	st->hdr[id].taken = 1;
}

static int move_segment(struct rstate *st, const char *qname, uint32_t id)
{
	char path[1000];
	int ret;

	snprintf(path, sizeof(path), "%s/%s/seg-%08u", st->cat->qdir, qname, id);
	ret = segs_move(st->cat->segs, id, path);
	if (ret < 0) {
		log_printf(LOG_ERR, "recovery: cannot move segment %u to quarantine (%s); kept in place",
			   id, strerror(-ret));
		keep_segment(st, id);
		return ret;
	}
	st->hdr[id].taken = 1;
	return 0;
}

/* Should unclaimed segment id go to the quarantine of f? */
static int belongs(const struct rstate *st, const struct found *f, uint32_t id)
{
	const struct shdr *s = &st->hdr[id];
	uint32_t i;

	if (s->claimed || s->taken || s->kind == HK_NONE)
		return 0;
	if (f->named && hdr_names(s, &f->m))
		return 1;
	if (s->kind == HK_VALID)
		return 0;   /* another version's (never committed, or a loaded
			     * one's earlier attempt) */
	for (i = 0; f->ok && i < f->m.nrecs; i++)
		if (f->m.recs[i].seg == id)
			return 1;
	return 0;
}

static int quarantine_one(struct rstate *st, struct found *f)
{
	char tag[32], from[1000], to[1000];
	uint32_t id;
	int ret;

	snprintf(tag, sizeof(tag), "%016llx", (unsigned long long)f->m.seq);
	ret = make_qdir(st, f->named ? tag : "unnamed", f->qname,
			sizeof(f->qname));
	if (ret < 0)
		return ret;
	snprintf(from, sizeof(from), "%s/%s", st->cat->mandir, f->file);
	snprintf(to, sizeof(to), "%s/%s/%s", st->cat->qdir, f->qname, f->file);
	ret = sys_rename(from, to);
	if (ret < 0)
		return ret;
	for (id = 0; id < st->nhdr; id++)
		if (belongs(st, f, id))
			move_segment(st, f->qname, id);
	ret = write_reason(st, f->qname, f->reason);
	if (ret == 0)
		ret = sys_fsync_dir(st->cat->mandir);
	return ret;
}

/* Is f a byte-for-byte copy of the manifest of a version that loaded?
 * Then it explains nothing new: remove it. */
static int stray_copy(struct rstate *st, const struct found *f)
{
	struct version *v = f->named ? catalog_version(st->cat, f->m.job,
						       f->m.version) : NULL;
	char a[1000], b[1000];
	void *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	int same;

	if (!v || v->state != CKPT_ST_SEALED || version_remote(v) ||
	    v->open_id != f->m.open_id)
		return 0;
	snprintf(a, sizeof(a), "%s/%s", st->cat->mandir, f->file);
	catalog_man_path(st->cat, v->seq, "man", b, sizeof(b));
	same = read_whole(a, &x, &nx) == 0 && read_whole(b, &y, &ny) == 0 &&
	       nx == ny && !memcmp(x, y, nx);
	free(x);
	free(y);
	if (!same || sys_unlink(a) < 0)
		return 0;
	log_printf(LOG_WARNING, "recovery: removed %s, a stray copy of the manifest of %s/%s",
		   a, v->job->name, v->name);
	return 1;
}

/* A quarantine that failed (a full disk, say): what would have moved stays
 * where it is, claimed, so that nothing recycles it. */
static void keep_in_place(struct rstate *st, const struct found *f)
{
	uint32_t id;

	for (id = 0; id < st->nhdr; id++)
		if (belongs(st, f, id))
			keep_segment(st, id);
}

/* Move every damaged manifest, and what it names, aside; list them. */
static int quarantine_all(struct rstate *st)
{
	uint32_t i;
	int ret;

	for (i = 0; i < st->nf; i++) {
		struct found *f = &st->f[i];

		if (!f->damaged || f->qname[0])
			continue;       /* sound, or quarantined before */
		if (stray_copy(st, f))
			continue;
		ret = quarantine_one(st, f);
		if (ret < 0) {
			/* Left where it is, untouched: the next start tries
			 * again.  Its segments stay claimed meanwhile. */
			keep_in_place(st, f);
			log_printf(LOG_ERR, "recovery: CORRUPTION: manifest %s/%s (%s) could not be quarantined: %s; left in place",
				   st->cat->mandir, f->file, f->reason,
				   strerror(-ret));
			if (f->named)
				catalog_add_damaged(st->cat, &f->m, NULL,
						    f->reason);
			continue;
		}
		log_printf(LOG_ERR, "recovery: CORRUPTION: version %s%s%s (manifest %s): %s; moved to %s/%s",
			   f->named ? f->m.job : "?", f->named ? "/" : "",
			   f->named ? f->m.version : "", f->file, f->reason,
			   st->cat->qdir, f->qname);
		if (f->named)
			catalog_add_damaged(st->cat, &f->m, f->qname, f->reason);
		if (f->named && f->m.seq >= st->cat->next_seq)
			st->cat->next_seq = f->m.seq + 1;
	}
	return 0;
}

/* The index of a quarantined manifest recovery could not name, or -1:
 * segments nobody can explain go with it rather than be recycled. */
static int unnamed_damaged(const struct rstate *st)
{
	uint32_t i;

	for (i = 0; i < st->nf; i++)
		if (st->f[i].damaged && !st->f[i].named && st->f[i].qname[0])
			return (int)i;
	return -1;
}

/* Segment id has a valid header and an unreadable manifest is in
 * quarantine (entry ui): its version may be that manifest's.  List it as
 * damaged under the name its header gives, in a quarantine of its own (the
 * unreadable manifest's, for the first such version). */
static void name_group(struct rstate *st, int ui, uint32_t id)
{
	const struct seghdr *h = &st->hdr[id].h;
	struct found *g = found_new(st);
	struct found *u = &st->f[ui];

	if (!g) {
		keep_segment(st, id);
		return;
	}
	snprintf(g->m.job, sizeof(g->m.job), "%s", h->job);
	snprintf(g->m.version, sizeof(g->m.version), "%s", h->version);
	g->m.uid = h->uid;
	g->m.open_id = h->open_id;
	g->named = g->damaged = 1;
	snprintf(g->reason, sizeof(g->reason), "manifest unreadable (%.40s), or it never committed",
		 u->file);
	if (!st->unnamed_used) {
		st->unnamed_used = 1;
		g->m.seq = u->m.seq;
		snprintf(g->qname, sizeof(g->qname), "%s", u->qname);
	} else if (make_qdir(st, "unnamed", g->qname, sizeof(g->qname)) < 0) {
		keep_segment(st, id);
		return;
	}
	write_reason(st, g->qname, g->reason);
	st->nf++;
	if (catalog_add_damaged(st->cat, &g->m, g->qname, g->reason) == 0)
		log_printf(LOG_ERR, "recovery: CORRUPTION: version %s/%s: %s; moved to %s/%s",
			   g->m.job, g->m.version, g->reason, st->cat->qdir,
			   g->qname);
	move_segment(st, g->qname, id);
}

/* An unclaimed segment with a valid header: its version never committed. */
static void report_incomplete(struct rstate *st, uint32_t id)
{
	struct catalog *cat = st->cat;
	const struct seghdr *h = &st->hdr[id].h;
	struct version *v;

	/* Count it used so that segs_free() clears its header. */
	segs_claim(cat->segs, id);
	segs_free(cat->segs, id);
	if (catalog_version(cat, h->job, h->version))
		return;   /* an earlier attempt of a version listed anyway */
	log_printf(LOG_WARNING, "recovery: version %s/%s was never committed; reported incomplete and cleaned up",
		   h->job, h->version);
	if (catalog_create(cat, h->job, h->version, h->uid, &v) < 0)
		return;
	cat->nopen--;
	v->open_id = h->open_id;
	v->state = CKPT_ST_INCOMPLETE;
	v->error = -CKPT_EABORTED;
}

/* Make a cleared header durable, so that the removal log can be emptied. */
static void sync_cleared(struct rstate *st, uint32_t id)
{
	int ret = sys_fsync(segs_fd(st->cat->segs, id));

	if (ret < 0)
		log_printf(LOG_WARNING, "recovery: fsync of segment %u: %s", id,
			   strerror(-ret));
	else
		st->ncleared++;
}

/* Segments whose header a removal-log entry explains. */
static uint32_t count_removed(const struct rstate *st)
{
	uint32_t id, n = 0;

	for (id = 0; id < st->nhdr; id++)
		n += st->hdr[id].kind == HK_VALID && !st->hdr[id].claimed &&
		     !st->hdr[id].taken && removed(st, st->hdr[id].h.open_id);
	return n;
}

/* Every header the removal log explains is cleared and durable: rewrite it
 * as its highest seq alone (only then, or a crash in between would lose the
 * explanation). */
static void reset_rmlog(struct rstate *st, int all_synced)
{
	int ret;

	if (!all_synced || !st->ngone)
		return;
	ret = rmlog_reset(st->cat->rmlog, st->max_seq);
	if (ret < 0)
		log_printf(LOG_WARNING, "recovery: rewriting %s: %s (it is read again at the next start)",
			   st->cat->rmlog, strerror(-ret));
}

/* The quarantined version whose head segment id's header names, or NULL. */
static const struct found *quarantine_of(const struct rstate *st, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < st->nf; i++)
		if (st->f[i].qname[0] && st->f[i].named &&
		    hdr_names(&st->hdr[id], &st->f[i].m))
			return &st->f[i];
	return NULL;
}

static void sweep_segments(struct rstate *st)
{
	int ui = unnamed_damaged(st);
	const struct found *q;
	char qname[64];
	uint32_t id;

	for (id = 0; id < st->nhdr; id++) {
		struct shdr *s = &st->hdr[id];

		if (s->claimed || s->taken || s->kind == HK_NONE ||
		    s->kind == HK_BLANK)
			continue;
		if (s->kind == HK_VALID && removed(st, s->h.open_id)) {
			/* Given up on purpose before the crash. */
			segs_claim(st->cat->segs, id);
			segs_free(st->cat->segs, id);
			sync_cleared(st, id);
			continue;
		}
		if ((q = quarantine_of(st, id))) {
			move_segment(st, q->qname, id);
		} else if (ui >= 0 && s->kind == HK_VALID) {
			name_group(st, ui, id);
		} else if (ui >= 0) {
			move_segment(st, st->f[ui].qname, id);
		} else if (s->kind == HK_VALID) {
			report_incomplete(st, id);
		} else {
			/* A corrupt header nobody claims: owner unknown. */
			snprintf(qname, sizeof(qname), "seg%08u", id);
			if (make_qdir(st, qname, qname, sizeof(qname)) < 0) {
				keep_segment(st, id);
				continue;
			}
			if (move_segment(st, qname, id) < 0)
				continue;
			write_reason(st, qname, "segment header corrupt; owner unknown");
			log_printf(LOG_ERR, "recovery: CORRUPTION: segment %u: header %s, owner unknown; moved to %s/%s",
				   id, ckpt_strerror(s->err), st->cat->qdir, qname);
		}
	}
}

/* ---- quarantine of earlier starts --------------------------------------- */

/* The head of a quarantined version whose manifest is unreadable, from the
 * header of a segment kept with it.  0 or -errno. */
static int name_from_segment(const char *dir, struct manifest *head)
{
	uint8_t buf[SEGHDR_SIZE];
	char path[1300];
	struct dirent *de;
	struct seghdr h;
	DIR *d;
	int fd, ret = -ENOENT;

	d = opendir(dir);
	if (!d)
		return -errno;
	while (ret < 0 && (de = readdir(d))) {
		if (strncmp(de->d_name, "seg-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = sys_open(path, O_RDONLY | O_CLOEXEC, 0);
		if (fd < 0)
			continue;
		ret = sys_pread_all(fd, buf, SEGHDR_SIZE, 0);
		close(fd);
		if (ret == 0)
			ret = seghdr_decode(buf, &h);
	}
	closedir(d);
	if (ret < 0)
		return ret;
	memset(head, 0, sizeof(*head));
	snprintf(head->job, sizeof(head->job), "%s", h.job);
	snprintf(head->version, sizeof(head->version), "%s", h.version);
	head->uid = h.uid;
	head->open_id = h.open_id;
	return 0;
}

/* List quarantine directory name (from an earlier start) as DAMAGED, by
 * the head of the manifest it holds, and keep it as an entry so that
 * segments still in the store that name it join it (a quarantine cut short
 * by a crash or a full disk). */
static void relist_one(struct rstate *st, const char *name)
{
	char dir[1000], path[1300], reason[CKPT_REASON_MAX + 1] = "";
	struct dirent *de;
	struct found *f;
	size_t len;
	void *buf;
	FILE *fp;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", st->cat->qdir, name);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (has_suffix(de->d_name, ".man"))
			break;
	if (de)
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
	closedir(d);
	f = found_new(st);
	if (!f || strlen(name) >= sizeof(f->qname))
		return;
	buf = NULL;
	if ((!de || read_whole(path, &buf, &len) < 0 ||
	     manifest_peek(buf, len, &f->m) < 0) &&
	    name_from_segment(dir, &f->m) < 0) {
		free(buf);
		return;         /* nothing in it says whose it is */
	}
	free(buf);
	snprintf(path, sizeof(path), "%s/reason", dir);
	fp = fopen(path, "re");
	if (fp) {
		if (fgets(reason, sizeof(reason), fp))
			reason[strcspn(reason, "\n")] = 0;
		fclose(fp);
	}
	f->named = f->damaged = 1;
	snprintf(f->qname, sizeof(f->qname), "%s", name);
	snprintf(f->reason, sizeof(f->reason), "%s",
		 reason[0] ? reason : "quarantined");
	st->nf++;
	if (catalog_add_damaged(st->cat, &f->m, name, f->reason) == 0)
		log_printf(LOG_WARNING, "recovery: %s/%s is damaged (%s), kept in %s",
			   f->m.job, f->m.version, f->reason, dir);
	if (f->m.seq >= st->cat->next_seq)
		st->cat->next_seq = f->m.seq + 1;
}

static void relist(struct rstate *st)
{
	struct dirent *de;
	DIR *d;

	d = opendir(st->cat->qdir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			relist_one(st, de->d_name);
	closedir(d);
}

/* ---- entry points ------------------------------------------------------- */

int recover_store(struct catalog *cat)
{
	struct rstate st = { .cat = cat };
	time_t now = time(NULL);
	struct tm tm;
	uint32_t i;
	int ret;

	gmtime_r(&now, &tm);
	strftime(st.stamp, sizeof(st.stamp), "%Y%m%d-%H%M%S", &tm);
	ret = read_headers(&st);
	if (ret == 0)
		ret = read_rmlog(&st);
	if (ret < 0)
		goto out_free;
	ret = scan_manifests(&st);
	if (ret < 0)
		goto out_free;
	if (st.nf)
		qsort(st.f, st.nf, sizeof(*st.f), by_seq);
	ret = judge(&st);
	if (ret < 0)
		goto out_free;
	relist(&st);            /* before this start adds to the quarantine */
	quarantine_all(&st);
	sweep_segments(&st);
	reset_rmlog(&st, st.ncleared == count_removed(&st));
	if (st.max_seq >= cat->next_seq)
		cat->next_seq = st.max_seq + 1;
	/* Ids never repeat, whatever the clock did since. */
	if (st.max_open_id >= cat->next_open_id)
		cat->next_open_id = st.max_open_id + 1;
out_free:
	for (i = 0; i < st.nf; i++)
		manifest_release(&st.f[i].m);
	free(st.f);
	free(st.hdr);
	free(st.gone);
	return ret;
}

void recover_discard(struct catalog *cat, const char *name)
{
	char dir[1000];
	struct dirent *de;
	DIR *d;
	int dfd;

	if (!name[0] || strchr(name, '/') || name[0] == '.')
		return;
	snprintf(dir, sizeof(dir), "%s/%s", cat->qdir, name);
	d = opendir(dir);
	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dfd, de->d_name, 0);
	closedir(d);
	if (rmdir(dir) < 0)
		log_printf(LOG_WARNING, "store: removing quarantine %s: %s", dir,
			   strerror(errno));
	else
		log_printf(LOG_NOTICE, "store: quarantine %s discarded", dir);
}
