/*
 * vstats.c - per-version operator statistics: seal time and writer stalls
 * (see vstats.h).  Small arrays, sorted on demand: a version has as many
 * entries as writers, and the sums are asked for at a seal or a listing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "log.h"
#include "vstats.h"

/* v's stats, allocated on first use; NULL when memory is short. */
static struct vstats *get(struct version *v)
{
	if (!v->vstats)
		v->vstats = calloc(1, sizeof(*v->vstats));
	return v->vstats;
}

void vstats_stall(struct version *v, const struct vstall *s)
{
	struct vstats *vs = get(v);
	struct vstall *w;
	uint32_t cap;

	if (!vs)
		return;
	if (vs->nw == vs->cw) {
		cap = vs->cw ? vs->cw * 2 : 4;
		w = realloc(vs->w, cap * sizeof(*w));
		if (!w)
			return;
		vs->w = w;
		vs->cw = cap;
	}
	vs->w[vs->nw++] = *s;
}

void vstats_sealing(struct version *v, uint64_t now_ms)
{
	struct vstats *vs = get(v);

	if (vs)
		vs->commit_ms = now_ms;
}

uint64_t vstats_commit_ms(const struct version *v)
{
	return v->vstats ? v->vstats->commit_ms : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile p (1..100) of n sorted values. */
static uint64_t pct(const uint64_t *s, uint32_t n, unsigned p)
{
	uint64_t r = ((uint64_t)n * p + 99) / 100;

	return s[r ? r - 1 : 0];
}

void vstats_sum(const struct version *v, struct vstall_sum *out)
{
	const struct vstats *vs = v->vstats;
	uint64_t *s;
	uint32_t i, slow = 0;

	memset(out, 0, sizeof(*out));
	out->slowest.rank = -1;
	if (!vs || !vs->nw)
		return;
	for (i = 1; i < vs->nw; i++)
		if (vs->w[i].stall_ns > vs->w[slow].stall_ns)
			slow = i;
	out->n = vs->nw;
	out->slowest = vs->w[slow];
	out->max_ns = vs->w[slow].stall_ns;
	s = malloc(vs->nw * sizeof(*s));
	if (!s) {               /* the max alone, then */
		out->p50_ns = out->p99_ns = out->max_ns;
		return;
	}
	for (i = 0; i < vs->nw; i++)
		s[i] = vs->w[i].stall_ns;
	qsort(s, vs->nw, sizeof(*s), cmp_u64);
	out->p50_ns = pct(s, vs->nw, 50);
	out->p99_ns = pct(s, vs->nw, 99);
	free(s);
}

void vstats_info(const struct version *v, struct ckpt_version_info *out)
{
	struct vstall_sum sum;

	vstats_sum(v, &sum);
	out->stall_writers = sum.n;
	out->stall_p50_ns = sum.p50_ns;
	out->stall_p99_ns = sum.p99_ns;
	out->stall_max_ns = sum.max_ns;
	out->slow_rank = sum.slowest.rank;
	out->slow_pid = sum.n ? (uint32_t)sum.slowest.pid : 0;
	out->slow_host[0] = '\0';
	if (sum.n && gethostname(out->slow_host, sizeof(out->slow_host)) < 0)
		out->slow_host[0] = '\0';
	out->slow_host[sizeof(out->slow_host) - 1] = '\0';
}

/* What ckptd can say of why a writer stalled. */
static const char *cause(const struct vstall *w)
{
	if (w->staging_ns * 2 >= w->stall_ns)
		return "staging full (waiting for a lease)";
	return "disk (waiting for the local store to take its writes)";
}

uint32_t vstats_stragglers(const struct version *v, uint32_t factor)
{
	const struct vstats *vs = v->vstats;
	struct vstall_sum sum;
	uint32_t i, n = 0;

	if (!factor || !vs || vs->nw < 2)
		return 0;
	vstats_sum(v, &sum);
	for (i = 0; i < vs->nw; i++) {
		const struct vstall *w = &vs->w[i];

		if (w->stall_ns < VSTATS_STRAGGLER_MIN_NS ||
		    w->stall_ns / factor <= sum.p50_ns)
			continue;
		if (++n > VSTATS_STRAGGLER_LOG_MAX)
			continue;
		log_printf(LOG_WARNING, "version %s/%s: straggler: pid %d rank %d stalled %.3f s, median %.3f s over %u writers; cause: %s",
			   v->job ? v->job->name : "?", v->name, (int)w->pid,
			   (int)w->rank, (double)w->stall_ns / 1e9,
			   (double)sum.p50_ns / 1e9, sum.n, cause(w));
	}
	if (n > VSTATS_STRAGGLER_LOG_MAX)
		log_printf(LOG_WARNING, "version %s/%s: %u more stragglers not logged (slowest: pid %d, %.3f s)",
			   v->job ? v->job->name : "?", v->name,
			   n - VSTATS_STRAGGLER_LOG_MAX, (int)sum.slowest.pid,
			   (double)sum.max_ns / 1e9);
	return n;
}

void vstats_free(struct version *v)
{
	if (!v->vstats)
		return;
	free(v->vstats->w);
	free(v->vstats);
	v->vstats = NULL;
}
