/*
 * mstats.c - the loop thread's counting hooks (mstats.h).
 */
#include <stdio.h>
#include <unistd.h>

#include "catalog.h"
#include "ctx.h"
#include "mstats.h"
#include "vstats.h"

static void mhist_observe(struct mhist *h, double secs)
{
	static const double bounds[MHIST_NB] = MHIST_BOUNDS;
	unsigned i;

	for (i = 0; i < MHIST_NB && secs > bounds[i]; i++)
		;
	h->bucket[i]++;
	h->count++;
	h->sum += secs;
}

void mstats_stall(struct ckptd *d, struct version *v, const struct vstall *s)
{
	vstats_stall(v, s);
	mhist_observe(&d->ms->stall, (double)s->stall_ns / 1e9);
}

void mstats_sealing(struct ckptd *d, struct version *v)
{
	struct vstall_sum sum;

	vstats_sealing(v, ckptd_now_ms());
	mstats_level(d, v, CKPT_NONE, CKPT_STAGED);
	vstats_sum(v, &sum);
	if (sum.n) {
		d->ms->last_writers = sum.n;
		d->ms->last_p50_ns = sum.p50_ns;
		d->ms->last_p99_ns = sum.p99_ns;
		d->ms->last_max_ns = sum.max_ns;
		d->ms->last_pid = sum.slowest.pid;
		d->ms->last_rank = sum.slowest.rank;
		snprintf(d->ms->last_job, sizeof(d->ms->last_job), "%s",
			 v->job ? v->job->name : "");
		snprintf(d->ms->last_version, sizeof(d->ms->last_version), "%s",
			 v->name);
		if (gethostname(d->ms->last_host, sizeof(d->ms->last_host)) < 0)
			d->ms->last_host[0] = '\0';
		d->ms->last_host[sizeof(d->ms->last_host) - 1] = '\0';
	}
	d->ms->stragglers += vstats_stragglers(v, d->conf->straggler_factor);
}

void mstats_level(struct ckptd *d, struct version *v, uint32_t from,
		  uint32_t to)
{
	uint64_t t0 = vstats_commit_ms(v), bytes = version_bytes(v);
	uint32_t l = to - CKPT_STAGED;

	if (to <= from || to < CKPT_STAGED || to > CKPT_DRAINED)
		return;
	d->ms->versions[l]++;
	d->ms->level_bytes[l] += bytes;
	if (t0)
		mhist_observe(&d->ms->to_level[l],
			      (double)(ckptd_now_ms() - t0) / 1e3);
}

void mstats_error(struct ckptd *d, enum merr kind)
{
	d->ms->errors[kind]++;
}

void mstats_read(struct ckptd *d, uint32_t source, uint64_t bytes)
{
	if (source <= CKPT_SRC_PFS)
		d->ms->read_bytes[source] += bytes;
}

