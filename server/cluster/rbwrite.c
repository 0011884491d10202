/*
 * rbwrite.c - one part of this node's written back from the shards its
 * peers hold, for rebuild.c (see cluster_i.h: rbwrite_start).
 *
 * Stripes are fetched ahead of the write (sfetch.c: k shards, decoded on
 * the pool), up to RB_WINDOW at once, each into its own slot; stripe s
 * uses slot s % RB_WINDOW, which the write of stripe s - RB_WINDOW has
 * given back.  The writes go one at a time and in stripe order, since a
 * record's CRC32C is taken over its bytes in stream order as they are
 * written: each stripe's stream bytes go to the part's records in
 * manifest order, each record at a new place in fresh segments whose
 * headers carry the part's own open_id, with buffered pwrite on a worker
 * (a record's pieces land at any offset, which O_DIRECT would refuse),
 * and their writeback is started at once (sync_file_range), so that the
 * final fsync has little left to do.  Records are placed on the loop
 * before each stripe's write (segs_alloc; with none free, rbwrite_tick
 * tries again).  Then the segments are fsync'd, the manifest is written
 * durably with the part's original open_id, sealed_ns and nparts and a new
 * local seq, and loaded into the catalog as recovery would; the part is
 * LOCAL, announced, and protect.c takes it from there.  `[cluster]
 * bandwidth` paces the writes, and then only one stripe is fetched at a
 * time.
 *
 * A failure stops new fetches; the write ends (done runs) once nothing is
 * in flight, so no reply or task ever finds it freed.
 *
 * Threads: the loop; the write and finish tasks run on a worker and touch
 * only the write and the slot being written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "ckpt.h"
#include "cluster_i.h"
#include "crc32c.h"
#include "drain.h"
#include "manifest.h"
#include "pool.h"
#include "shardmeta.h"
#include "sys.h"

#define RB_WINDOW 4              /* stripes fetched at once */

enum { SLOT_FREE, SLOT_FETCH, SLOT_READY };

struct rbslot {
	struct sfetch f;
	struct rbwrite *j;
	uint8_t *buf;            /* the stripe's stream bytes */
	int st;
};

struct rbwrite {
	struct pool_task pt;     /* a stripe's writes, then the finish */
	struct rbslot slot[RB_WINDOW];
	uint32_t window;         /* slots used: RB_WINDOW, 1 under a cap */
	struct cluster *cl;
	uint64_t *progress;      /* bytes written, for the caller's status */
	rbwrite_fn done;
	void *arg;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint64_t stream_len;
	struct manifest man;     /* decoded; recs rewritten to new places */
	uint32_t chunk;
	uint64_t nstripes;
	uint64_t stripe;         /* the next to write */
	uint64_t next_fetch;     /* the next to fetch */
	uint64_t stripe_len;     /* k * chunk */
	uint32_t fetching;       /* slots fetching */
	int writing;             /* the task is on the pool */
	int finishing;           /* the task: 0 a stripe, 1 the finish */
	int wait_seg;            /* a stripe fetched waits for a free segment */
	int pumping, again;      /* pump() is running; run it once more */
	int err;                 /* the first failure: ends the write */
	/* the stream's place: records in manifest order */
	uint32_t ri;             /* task: the record being written */
	uint64_t rdone;          /* task: its bytes written */
	uint32_t rcrc;           /* task: their CRC32C */
	uint32_t placed;         /* loop: records given a place so far */
	uint64_t placed_end;     /* loop: stream bytes they cover */
	uint32_t *segs;          /* segments taken, in order */
	int *fds;                /* task: buffered fds of segs, or -1 */
	uint32_t nsegs, csegs, hdrs;  /* hdrs: segments whose header is written */
	uint64_t tail;           /* next free byte in the last segment */
	uint64_t seq;            /* the local seq of the manifest */
	char segdir[600];
	struct seghdr hdr;
	uint64_t t0;
};

void rbwrite_free(struct rbwrite *j)
{
	uint32_t i;

	for (i = 0; i < RB_WINDOW; i++) {
		sfetch_release(&j->slot[i].f);
		free(j->slot[i].buf);
	}
	if (j->fds)
		for (i = 0; i < j->nsegs; i++)
			if (j->fds[i] >= 0)
				close(j->fds[i]);
	free(j->fds);
	free(j->segs);
	manifest_release(&j->man);
	free(j);
}

/* The write is over: the part is in the catalog (err 0) or not. */
static void write_end(struct rbwrite *j, int err)
{
	uint32_t i;

	if (err < 0)
		for (i = 0; i < j->nsegs; i++)
			segs_free(j->cl->d->segs, j->segs[i]);
	j->done(j->arg, err);
	rbwrite_free(j);
}

/* Give every record that starts before `end` in the stream a place in the
 * part's segments.  0, -EAGAIN (no segment free yet: the tick tries again),
 * -ENOSPC, -EFBIG or -ENOMEM. */
static int place_records(struct rbwrite *j, uint64_t end)
{
	struct segs *sg = j->cl->d->segs;

	while (j->placed < j->man.nrecs && j->placed_end < end) {
		struct man_rec *r = &j->man.recs[j->placed];
		uint64_t rlen = man_padded(r->len);
		uint32_t id;
		int ret;

		if (r->seg == MAN_SEG_ZERO || !r->len) {
			r->seg = MAN_SEG_ZERO;   /* no bytes in the stream */
			r->seg_off = 0;
			r->crc = 0;
			j->placed++;
			continue;
		}
		if (!j->nsegs || j->tail + rlen > sg->v[j->segs[j->nsegs - 1]].size) {
			if (j->nsegs == j->csegs) {
				uint32_t c = j->csegs ? j->csegs * 2 : 8;
				uint32_t *ns = realloc(j->segs, c * sizeof(*ns));
				int *nf;

				if (!ns)
					return -ENOMEM;
				j->segs = ns;
				nf = realloc(j->fds, c * sizeof(*nf));
				if (!nf)
					return -ENOMEM;
				j->fds = nf;
				j->csegs = c;
			}
			ret = segs_alloc(sg, &id);
			if (ret < 0)
				return ret;
			if (SEGHDR_SIZE + rlen > sg->v[id].size) {
				segs_free(sg, id);
				return -EFBIG;
			}
			j->fds[j->nsegs] = -1;
			j->segs[j->nsegs++] = id;
			j->tail = SEGHDR_SIZE;
		}
		r->seg = j->segs[j->nsegs - 1];
		r->seg_off = j->tail;
		j->tail += rlen;
		j->placed_end += r->len;
		j->placed++;
	}
	return 0;
}

static int seg_fd(struct rbwrite *j, uint32_t i)
{
	char path[700];
	int fd;

	if (j->fds[i] >= 0)
		return j->fds[i];
	snprintf(path, sizeof(path), "%s/%08u", j->segdir, j->segs[i]);
	fd = sys_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd >= 0)
		j->fds[i] = fd;
	return fd;
}

static int seg_index(const struct rbwrite *j, uint32_t seg)
{
	uint32_t i;

	for (i = j->nsegs; i-- > 0;)
		if (j->segs[i] == seg)
			return (int)i;
	return -ENOENT;
}

/* Write the stripe's stream bytes to their records (worker). */
static int write_stripe(struct rbwrite *j)
{
	uint64_t s0 = j->stripe * j->stripe_len, pos = s0;
	uint64_t end = s0 + j->stripe_len;
	const uint8_t *buf = j->slot[j->stripe % j->window].buf;
	uint8_t hdr[SEGHDR_SIZE];
	int ret, fd;

	if (end > j->stream_len)
		end = j->stream_len;
	/* The cap counts what came over the wire: k chunks. */
	bwlimit_take(&j->cl->bw, j->stripe_len);
	for (; j->hdrs < j->nsegs; j->hdrs++) {
		j->hdr.seg = j->segs[j->hdrs];
		ret = seghdr_encode(&j->hdr, hdr);
		fd = ret < 0 ? ret : seg_fd(j, j->hdrs);
		if (fd < 0)
			return fd;
		ret = sys_pwrite_all(fd, hdr, SEGHDR_SIZE, 0);
		if (ret < 0)
			return ret;
	}
	while (pos < end && j->ri < j->man.nrecs) {
		const struct man_rec *r = &j->man.recs[j->ri];
		uint64_t n;
		int i;

		if (r->seg == MAN_SEG_ZERO) {
			j->ri++;
			continue;
		}
		n = r->len - j->rdone;
		if (n > end - pos)
			n = end - pos;
		i = seg_index(j, r->seg);
		fd = i < 0 ? i : seg_fd(j, (uint32_t)i);
		if (fd < 0)
			return fd;
		ret = sys_pwrite_all(fd, buf + (pos - s0), n,
				     (off_t)(r->seg_off + j->rdone));
		if (ret < 0)
			return ret;
		/* start the writeback; the fsync at the end waits for it */
		sync_file_range(fd, (off_t)(r->seg_off + j->rdone), (off_t)n,
				SYNC_FILE_RANGE_WRITE);
		j->rcrc = crc32c_update(j->rcrc, buf + (pos - s0), n);
		j->rdone += n;
		pos += n;
		if (j->rdone < r->len)
			continue;
		if (j->rcrc != r->crc)
			return -CKPT_ECORRUPT;
		j->ri++;
		j->rdone = 0;
		j->rcrc = 0;
	}
	return 0;
}

/* Sync the segments and write the manifest durably (worker). */
static int finish_part(struct rbwrite *j)
{
	const struct catalog *cat = j->cl->d->cat;
	uint32_t i;
	size_t size;
	void *buf;
	long n;
	int ret, fd;

	for (; j->ri < j->man.nrecs; j->ri++)
		if (j->man.recs[j->ri].seg != MAN_SEG_ZERO)
			return -CKPT_ECORRUPT;   /* the stream ended early */
	for (i = 0; i < j->nsegs; i++) {
		fd = seg_fd(j, i);
		if (fd < 0)
			return fd;
		ret = sys_fsync(fd);
		if (ret < 0)
			return ret;
	}
	j->man.seq = j->seq;
	j->man.level = CKPT_LOCAL;
	size = manifest_size(&j->man);
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	n = manifest_encode(&j->man, buf, size);
	ret = n < 0 ? (int)n : catalog_manifest_store(cat, j->seq, buf,
						      (size_t)n);
	free(buf);
	return ret;
}

static int task_run(struct pool_task *t)
{
	struct rbwrite *j = (struct rbwrite *)t;

	return j->finishing ? finish_part(j) : write_stripe(j);
}

/* The manifest is durable: the part joins the catalog. */
static void part_loaded(struct rbwrite *j)
{
	struct ckptd *d = j->cl->d;
	struct version *v;
	int ret;

	ret = catalog_load(d->cat, &j->man);
	v = ret == 0 ? catalog_version(d->cat, j->job, j->version) : NULL;
	if (!v) {
		char path[700];

		/* Another write of the name came meanwhile: it wins. */
		catalog_man_path(d->cat, j->seq, "man", path, sizeof(path));
		unlink(path);
		log_printf(LOG_WARNING, "rebuild: %s/%s: %s; the rebuilt copy is dropped",
			   j->job, j->version,
			   ret == -EEXIST ? "written anew here meanwhile"
					  : ckpt_strerror(ret));
		write_end(j, ret < 0 ? ret : -ENOENT);
		return;
	}
	log_printf(LOG_NOTICE, "rebuild: %s/%s rebuilt: %u files, %llu bytes in %.2f s",
		   j->job, j->version, j->man.nfiles,
		   (unsigned long long)j->stream_len,
		   (ckptd_now_ms() - j->t0) / 1000.0);
	parts_forget_own(j->cl, j->job, j->version);
	if (drain_enabled(d))
		drain_sealed(d, v);
	ckptd_version_changed(d, v);   /* announced, and protected */
	j->nsegs = 0;                  /* the catalog's now */
	write_end(j, 0);
}

static void pump(struct rbwrite *j);

/* Stop: the write ends once nothing is in flight (pump). */
static void fail(struct rbwrite *j, int err)
{
	if (!j->err)
		j->err = err;
}

static void task_done(struct pool_task *t)
{
	struct rbwrite *j = (struct rbwrite *)t;

	j->writing = 0;
	if (t->result < 0) {
		if (t->result == -CKPT_ECORRUPT)
			log_printf(LOG_ERR, "rebuild: %s/%s: record %u fails its CRC32C after decoding",
				   j->job, j->version, j->ri);
		fail(j, t->result);
	} else if (j->finishing) {
		part_loaded(j);
		return;
	} else {
		*j->progress += j->stripe_len;
		j->slot[j->stripe % j->window].st = SLOT_FREE;
		j->stripe++;
	}
	pump(j);
}

static void task_drop(struct pool_task *t)
{
	struct rbwrite *j = (struct rbwrite *)t;

	j->writing = 0;
	fail(j, -ECANCELED);
	pump(j);
}

static void on_stripe(struct sfetch *f, int err)
{
	struct rbslot *sl = (struct rbslot *)((char *)f -
					      offsetof(struct rbslot, f));
	struct rbwrite *j = sl->j;

	j->fetching--;
	sl->st = err < 0 ? SLOT_FREE : SLOT_READY;
	if (err < 0)
		fail(j, err);
	pump(j);
}

/* The next stripe to write, if it is in: its records placed, its write on
 * the pool; after the last, the finish.  Loop. */
static void write_next(struct rbwrite *j)
{
	int ret;

	if (j->writing || j->wait_seg || j->err)
		return;
	if (j->stripe == j->nstripes) {
		if (j->fetching)
			return;
		j->finishing = 1;
		j->seq = j->cl->d->cat->next_seq++;
	} else {
		if (j->slot[j->stripe % j->window].st != SLOT_READY)
			return;
		ret = place_records(j, (j->stripe + 1) * j->stripe_len);
		j->wait_seg = ret == -EAGAIN;
		if (j->wait_seg)
			return;          /* rbwrite_tick comes back */
		if (ret < 0) {
			fail(j, ret);
			return;
		}
	}
	j->writing = 1;
	pool_submit(j->cl->d->pool, &j->pt, 1);
}

/* Start what may start; end the write once it failed and nothing is in
 * flight.  A fetch may end during sfetch_stripe(), and so call this again:
 * that call only asks the outer one to go round once more.  j may be freed
 * when this returns. */
static void pump(struct rbwrite *j)
{
	if (j->pumping) {
		j->again = 1;
		return;
	}
	j->pumping = 1;
	do {
		j->again = 0;
		while (!j->err && j->next_fetch < j->nstripes &&
		       j->next_fetch < j->stripe + j->window) {
			struct rbslot *sl = &j->slot[j->next_fetch % j->window];

			sl->st = SLOT_FETCH;
			j->fetching++;
			sfetch_stripe(&sl->f, j->next_fetch++, sl->buf);
		}
		write_next(j);
	} while (j->again);
	j->pumping = 0;
	if (j->err && !j->fetching && !j->writing)
		write_end(j, j->err);
}

int rbwrite_start(struct cluster *cl, uint32_t owner, uint64_t src_id,
		  const struct shard_meta *m, uint32_t held,
		  const uint32_t *hnode, uint64_t *progress,
		  rbwrite_fn done, void *arg, struct rbwrite **out)
{
	struct rbwrite *j = calloc(1, sizeof(*j));
	uint32_t s, i;
	int ret;

	if (!j)
		return -ENOMEM;
	j->cl = cl;
	j->progress = progress;
	j->done = done;
	j->arg = arg;
	j->t0 = ckptd_now_ms();
	snprintf(j->job, sizeof(j->job), "%s", m->job);
	snprintf(j->version, sizeof(j->version), "%s", m->version);
	j->stream_len = m->stream_len;
	pool_task_init(&j->pt, task_run, task_done, task_drop);
	ret = manifest_decode(m->man, m->manlen, &j->man);
	if (ret < 0)
		goto out_free;
	j->chunk = m->chunk;
	ret = -CKPT_EPROTO;
	if (j->chunk != PROTECT_CHUNK || m->k != cl->place.k)
		goto out_free;
	j->stripe_len = (uint64_t)m->k * j->chunk;
	j->nstripes = m->nstripes;
	j->window = cl->bw.rate ? 1 : RB_WINDOW;
	for (i = 0; i < j->window; i++) {
		struct rbslot *sl = &j->slot[i];

		sl->j = j;
		ret = -ENOMEM;
		sl->buf = malloc(j->stripe_len);
		if (!sl->buf)
			goto out_free;
		ret = sfetch_init(&sl->f, cl, owner, src_id, on_stripe);
		if (ret < 0)
			goto out_free;
		/* The holders that answered HELD, over what a record says. */
		for (s = 1; s < m->k + m->m && s < 32; s++)
			if (held & (1u << s))
				sl->f.holder[s] = hnode[s];
		snprintf(sl->f.what, sizeof(sl->f.what),
			 "%s of %.60s/%.60s", owner == cl->self ? "rebuild"
							        : "adoption",
			 m->job, m->version);
	}
	snprintf(j->segdir, sizeof(j->segdir), "%s", cl->d->segs->dir);
	j->hdr.open_id = m->open_id;
	j->hdr.uid = m->uid;
	snprintf(j->hdr.job, sizeof(j->hdr.job), "%s", m->job);
	snprintf(j->hdr.version, sizeof(j->hdr.version), "%s", m->version);
	log_printf(LOG_INFO, "rebuild: %s/%s: %llu stripes from the peers",
		   m->job, m->version, (unsigned long long)j->nstripes);
	*out = j;                /* before done can run */
	pump(j);
	return 0;

out_free:
	rbwrite_free(j);
	return ret;
}

void rbwrite_tick(struct rbwrite *j)
{
	if (!j->wait_seg)
		return;
	j->wait_seg = 0;
	pump(j);                 /* places the records again */
}
