/*
 * ctl_cmds.c - the inspection commands of ckptctl: status, ls (rm is
 * ctl_rm.c), and the option parsers every command shares.
 *
 * Each command parses its own options, connects, asks ckptd through the
 * public API and prints either aligned tables (ctl_fmt.h) or one JSON object
 * (ctl_json.h).  Versions are shown in commit order (the seq ckptd assigns
 * at seal), with still-open versions last, because that is the order in
 * which a user reasons about checkpoints.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_fmt.h"
#include "ctl_json.h"
#include "xattr.h"

int ctl_common_opt(struct ctl *ctl, int opt, const char *cmd)
{
	switch (opt) {
	case CTL_OPT_JSON:
		ctl->json = 1;
		return -1;
	case 'h':
		return ctl_help();
	default:
		return ctl_usage("%s: bad option", cmd);
	}
}

int plain_args(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		CTL_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if ((rc = ctl_common_opt(ctl, opt, argv[0])) >= 0)
			return rc;
	return -1;
}

int timeout_args(struct ctl *ctl, int argc, char **argv, int *timeout_ms)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		CTL_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		if (opt == 't') {
			if (ctl_parse_timeout(optarg, timeout_ms))
				return ctl_usage("%s: bad timeout '%s'", argv[0],
						 optarg);
		} else if ((rc = ctl_common_opt(ctl, opt, argv[0])) >= 0) {
			return rc;
		}
	}
	return -1;
}

static uint64_t seq_key(const struct ckpt_version_info *v)
{
	return v->seq ? v->seq : UINT64_MAX; /* open versions sort last */
}

static int version_cmp(const void *a, const void *b)
{
	const struct ckpt_version_info *x = a, *y = b;
	int r = strcmp(x->job, y->job);

	if (r)
		return r;
	if (seq_key(x) != seq_key(y))
		return seq_key(x) < seq_key(y) ? -1 : 1;
	return strcmp(x->version, y->version);
}

static unsigned pct(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)((double)part * 100.0 / (double)whole) : 0;
}

/* Where v's copies are: "local,pfs", "pfs,quarantine", ... or, while it
 * is written, the share of its bytes in the local store. */
static void fmt_where(char *out, size_t cap, const struct ckpt_version_info *v)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{ CKPT_COPY_LOCAL, "local" }, { CKPT_COPY_PFS, "pfs" },
		{ CKPT_COPY_QUARANTINE, "quarantine" },
		{ CKPT_COPY_PEERS, "peers" },
	};
	size_t i, n = 0;

	if (v->state == CKPT_ST_OPEN || v->state == CKPT_ST_SEALING) {
		snprintf(out, cap, "%u%%", v->bytes ? (v->stored >= v->bytes ?
			 100 : pct(v->stored, v->bytes)) : 0);
		return;
	}
	out[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (v->copies & names[i].bit)
			n += snprintf(out + n, cap - n, "%s%s", n ? "," : "",
				      names[i].name);
	if (!n)
		snprintf(out, cap, "-");
}

/* Why v's drain waits, after its state: "", or "attempt 3 failed: ...;
 * next in 8s" (the drain fields of struct ckpt_version_info). */
static void fmt_drain_wait(char *out, size_t cap,
			   const struct ckpt_version_info *v)
{
	char next[FMT_LEN];
	int n;

	out[0] = 0;
	if (!v->drain_error)
		return;
	n = snprintf(out, cap, "%s %u failed: %s",
		     v->drain == CKPT_DS_PUBLISH ? "publish check" : "attempt",
		     v->drain_tries, ckpt_strerror(v->drain_error));
	if (n > 0 && (size_t)n < cap && v->drain != CKPT_DS_RUNNING)
		snprintf(out + n, cap - (size_t)n, "; next in %s",
			 v->drain_retry_ms ?
			 fmt_dur(next, v->drain_retry_ms * 1000000ull) : "0s");
}

/* One table row for a version; with_job adds the JOB column first, drain
 * the DRAIN column last. */
static int version_row(struct tbl *t, const struct ckpt_version_info *v,
		       uint64_t now, int with_job, int drain)
{
	char files[FMT_LEN], bytes[FMT_LEN], where[FMT_LEN], age[FMT_LEN];
	const char *cells[9];
	int n = 0;

	snprintf(files, sizeof(files), "%" PRIu32, v->nfiles);
	fmt_size(bytes, v->bytes);
	fmt_where(where, sizeof(where), v);
	if (v->sealed_ns && now >= v->sealed_ns)
		fmt_dur(age, now - v->sealed_ns);
	else
		snprintf(age, sizeof(age), "-");

	if (with_job)
		cells[n++] = v->job;
	cells[n++] = v->version;
	cells[n++] = ckpt_state_name(v->state);
	cells[n++] = ckpt_level_name(v->level);
	cells[n++] = files;
	cells[n++] = bytes;
	cells[n++] = where;
	cells[n++] = age;
	if (drain)
		cells[n++] = v->drain ? ckpt_drain_state_name(v->drain) : "-";
	return tbl_add(t, cells);
}

static int print_versions(const struct ckpt_version_info *v, int n,
			  int with_job)
{
	static const char *const heads[] = { "JOB", "VERSION", "STATE", "LEVEL",
					     "FILES", "BYTES", "COPIES", "AGE",
					     "DRAIN" };
	uint64_t now = ctl_wall_ns();
	char why[512];
	struct tbl t;
	int i, err, drain = 0;

	/* The DRAIN column on a node with a drain target. */
	for (i = 0; i < n; i++)
		drain |= v[i].drain != CKPT_DS_NONE;
	tbl_init(&t, (with_job ? 8 : 7) + drain, heads + !with_job,
		 with_job ? "lllllrlrl" : "llllrlrl");
	for (i = 0; i < n; i++)
		version_row(&t, &v[i], now, with_job, drain);
	err = tbl_print(&t, stdout);
	tbl_release(&t);
	for (i = 0; i < n; i++) {
		fmt_drain_wait(why, sizeof(why), &v[i]);
		if (why[0])
			printf("%s/%s: drain %s: %s\n", v[i].job, v[i].version,
			       ckpt_drain_state_name(v[i].drain), why);
		if (v[i].state == CKPT_ST_FAILED && v[i].error)
			printf("%s/%s failed: %s\n", v[i].job, v[i].version,
			       ckpt_strerror(v[i].error));
		if (v[i].reason[0])
			printf("%s/%s: local copy damaged (%s)%s\n", v[i].job,
			       v[i].version, v[i].reason,
			       v[i].copies & CKPT_COPY_PFS ?
			       "; served from the PFS" : "");
	}
	return err;
}

void ctl_json_version(struct jw *w, const struct ckpt_version_info *v)
{
	jw_obj(w);
	jw_kstr(w, "job", v->job);
	jw_kstr(w, "version", v->version);
	jw_kstr(w, "state", ckpt_state_name(v->state));
	jw_kstr(w, "level", ckpt_level_name(v->level));
	jw_ku64(w, "uid", v->uid);
	jw_ku64(w, "writers", v->writers);
	jw_ku64(w, "committed", v->committed);
	jw_ku64(w, "files", v->nfiles);
	jw_ku64(w, "bytes", v->bytes);
	jw_ku64(w, "stored", v->stored);
	jw_ku64(w, "seq", v->seq);
	jw_ku64(w, "sealed_ns", v->sealed_ns);
	jw_key(w, "copies");
	jw_arr(w);
	if (v->copies & CKPT_COPY_LOCAL)
		jw_str(w, "local");
	if (v->copies & CKPT_COPY_PFS)
		jw_str(w, "pfs");
	if (v->copies & CKPT_COPY_QUARANTINE)
		jw_str(w, "quarantine");
	if (v->copies & CKPT_COPY_PEERS)
		jw_str(w, "peers");
	jw_arr_end(w);
	if (v->drain) {
		jw_key(w, "drain");
		jw_obj(w);
		jw_kstr(w, "state", ckpt_drain_state_name(v->drain));
		if (v->drain_error) {
			jw_ki64(w, "error_code", v->drain_error);
			jw_kstr(w, "error", ckpt_strerror(v->drain_error));
			jw_ku64(w, "tries", v->drain_tries);
			jw_ku64(w, "retry_ms", v->drain_retry_ms);
		}
		jw_obj_end(w);
	}
	if (v->shards) {
		jw_ku64(w, "shards", v->shards);
		jw_ku64(w, "shards_up", v->shards_up);
		jw_kstr(w, "holders", v->holders);
	}
	jw_ku64(w, "nparts", v->nparts ? v->nparts : 1);
	jw_ku64(w, "parts_sealed", v->parts_sealed);
	if (v->node[0])
		jw_kstr(w, "node", v->node);
	if (v->rm_part_pfs)
		jw_kbool(w, "rm_part_pfs", 1);
	if (v->reason[0])
		jw_kstr(w, "reason", v->reason);
	if (v->stall_writers) {
		jw_key(w, "stall");
		jw_obj(w);
		jw_ku64(w, "writers", v->stall_writers);
		jw_ku64(w, "p50_ns", v->stall_p50_ns);
		jw_ku64(w, "p99_ns", v->stall_p99_ns);
		jw_ku64(w, "max_ns", v->stall_max_ns);
		jw_key(w, "slowest");
		jw_obj(w);
		jw_ku64(w, "pid", v->slow_pid);
		jw_kstr(w, "host", v->slow_host);
		if (v->slow_rank >= 0)
			jw_ku64(w, "rank", (uint64_t)v->slow_rank);
		jw_obj_end(w);
		jw_obj_end(w);
	}
	if (v->error) {
		jw_ki64(w, "error_code", v->error);
		jw_kstr(w, "error", ckpt_strerror(v->error));
	}
	jw_obj_end(w);
}

/* All versions of all jobs, sorted, in one malloc'd array (*out). */
static int collect_versions(struct ckpt_client *c,
			    struct ckpt_version_info **out, int *count)
{
	struct ckpt_version_info *all = NULL, *v = NULL, *grown;
	char (*jobs)[CKPT_JOB_MAX + 1] = NULL;
	int njobs, n, total = 0, i, err = 0;

	njobs = ckpt_list_jobs(c, &jobs);
	if (njobs < 0)
		return njobs;
	for (i = 0; i < njobs; i++) {
		n = ckpt_list_versions2(c, jobs[i], &v, sizeof(*v));
		if (n == -CKPT_ENOJOB || n == -CKPT_ENOVERSION || n == -EACCES)
			continue; /* removed since listed, or another user's */
		if (n < 0) {
			err = n;
			goto out_free;
		}
		grown = realloc(all, (size_t)(total + n + 1) * sizeof(*all));
		if (!grown) {
			err = -ENOMEM;
			goto out_free;
		}
		all = grown;
		if (n)
			memcpy(all + total, v, (size_t)n * sizeof(*v));
		total += n;
		free(v);
		v = NULL;
	}
	if (total)
		qsort(all, (size_t)total, sizeof(*all), version_cmp);
	*out = all;
	*count = total;
	all = NULL;
out_free:
	free(v);
	free(all);
	free(jobs);
	return err;
}

/* What `ckptctl status` shows: the daemon, its cluster's nodes (none
 * alone), and every version. */
struct status_view {
	struct ckpt_status s;
	struct ckpt_node_info *nodes;
	int nnodes;
	struct ckpt_version_info *v;
	int n;
};

static void status_json(const struct status_view *sv)
{
	const struct ckpt_status *s = &sv->s;
	struct jw w;
	int i;

	jw_init(&w, stdout);
	jw_obj(&w);
	jw_key(&w, "daemon");
	jw_obj(&w);
	jw_ku64(&w, "pid", s->pid);
	jw_ku64(&w, "uptime_ms", s->uptime_ms);
	jw_ku64(&w, "proto_version", s->proto_version);
	jw_ku64(&w, "clients", s->clients);
	jw_ku64(&w, "jobs", s->jobs);
	jw_ku64(&w, "versions", s->versions);
	jw_ku64(&w, "open_versions", s->open_versions);
	jw_ku64(&w, "queue_depth", s->queue_depth);
	jw_ku64(&w, "staging_total", s->staging_total);
	jw_ku64(&w, "staging_used", s->staging_used);
	jw_kstr(&w, "store", s->store);
	jw_ku64(&w, "capacity", s->capacity);
	jw_ku64(&w, "store_used", s->store_used);
	jw_ku64(&w, "ingest_bytes", s->ingest_bytes);
	jw_ku64(&w, "ingest_rate", s->ingest_rate);
	jw_kstr(&w, "drain_target", s->drain_target);
	jw_ku64(&w, "drain_queued", s->drain_queued);
	jw_ku64(&w, "drain_running", s->drain_running);
	jw_kbool(&w, "drain_paused", s->drain_paused);
	jw_ku64(&w, "drain_errors", s->drain_errors);
	jw_ku64(&w, "drain_bytes", s->drain_bytes);
	jw_ku64(&w, "drain_rate", s->drain_rate);
	jw_ku64(&w, "drain_bandwidth", s->drain_bandwidth);
	jw_kstr(&w, "drain_last_error",
		s->drain_last_error ? ckpt_strerror(s->drain_last_error) : "");
	jw_kstr(&w, "drain_last_path", s->drain_last_path);
	jw_kstr(&w, "node", s->node);
	jw_ku64(&w, "peers", s->peers);
	jw_ku64(&w, "peers_up", s->peers_up);
	jw_ku64(&w, "ec_k", s->ec_k);
	jw_ku64(&w, "ec_m", s->ec_m);
	jw_ku64(&w, "protect_queued", s->protect_queued);
	jw_ku64(&w, "protect_done", s->protect_done);
	jw_ku64(&w, "protect_failures", s->protect_failures);
	jw_ku64(&w, "protect_bytes", s->protect_bytes);
	jw_ku64(&w, "shards_held", s->shards_held);
	jw_ku64(&w, "shard_bytes", s->shard_bytes);
	jw_ku64(&w, "shards_bad", s->shards_bad);
	jw_kstr(&w, "peers_lagging", s->peers_lagging);
	jw_ku64(&w, "rebuild_state", s->rebuild_state);
	jw_ku64(&w, "rebuild_parts", s->rebuild_parts);
	jw_ku64(&w, "rebuild_parts_done", s->rebuild_parts_done);
	jw_ku64(&w, "rebuild_parts_lost", s->rebuild_parts_lost);
	jw_ku64(&w, "rebuild_bytes", s->rebuild_bytes);
	jw_ku64(&w, "rebuild_bytes_done", s->rebuild_bytes_done);
	jw_kstr(&w, "rebuild_waiting", s->rebuild_waiting);
	jw_ku64(&w, "parts_degraded", s->parts_degraded);
	jw_ku64(&w, "reprotect_done", s->reprotect_done);
	jw_ku64(&w, "holders_replaced", s->holders_replaced);
	jw_kstr(&w, "protect_waiting", s->protect_waiting);
	jw_ku64(&w, "shard_reserved", s->shard_reserved);
	jw_ku64(&w, "shards_open", s->shards_open);
	jw_ku64(&w, "shards_refused_space", s->shards_refused_space);
	jw_ku64(&w, "shards_dropped", s->shards_dropped);
	jw_ku64(&w, "shard_room", s->shard_room);
	jw_ku64(&w, "holder_reserve", s->holder_reserve);
	jw_ku64(&w, "parts_adopting", s->parts_adopting);
	jw_ku64(&w, "parts_adopted", s->parts_adopted);
	jw_obj_end(&w);
	ctl_nodes_json(&w, sv->nodes, sv->nnodes);
	jw_key(&w, "versions");
	jw_arr(&w);
	for (i = 0; i < sv->n; i++)
		ctl_json_version(&w, &sv->v[i]);
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_done(&w);
}

static void status_text(const struct status_view *sv)
{
	const struct ckpt_status *s = &sv->s;
	char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];

	printf("ckptd     pid %" PRIu64 ", up %s, protocol %" PRIu32 "\n",
	       s->pid, fmt_dur(a, s->uptime_ms * 1000000u), s->proto_version);
	printf("store     %s: %s used", s->store, fmt_size(a, s->store_used));
	if (s->capacity)
		printf(" of %s (%u%%)", fmt_size(b, s->capacity),
		       pct(s->store_used, s->capacity));
	printf("\nstaging   %s leased of %s (%u%%)\n",
	       fmt_size(a, s->staging_used), fmt_size(b, s->staging_total),
	       pct(s->staging_used, s->staging_total));
	printf("ingest    %s since start, %s now\n",
	       fmt_size(a, s->ingest_bytes), fmt_rate(b, (double)s->ingest_rate));
	if (s->node[0]) {
		printf("cluster   node %s: %" PRIu32 " of %" PRIu32 " peers up, ec %"
		       PRIu32 "+%" PRIu32 "\n", s->node, s->peers_up, s->peers,
		       s->ec_k, s->ec_m);
		if (sv->nnodes)
			ctl_nodes_text(sv->nodes, sv->nnodes);
		printf("protect   %" PRIu32 " parts queued, %" PRIu32
		       " protected since start, %s sent, %" PRIu32 " failed attempts\n",
		       s->protect_queued, s->protect_done,
		       fmt_size(a, s->protect_bytes), s->protect_failures);
		printf("          %" PRIu32 " parts below full redundancy, %" PRIu32
		       " re-protected since start, %" PRIu32 " placed around a holder\n",
		       s->parts_degraded, s->reprotect_done, s->holders_replaced);
		if (s->parts_adopting || s->parts_adopted)
			printf("          %" PRIu32 " parts of lost nodes taken over since start%s\n",
			       s->parts_adopted,
			       s->parts_adopting ? ", one being decoded now" : "");
		if (s->protect_waiting[0])
			printf("          waiting: %s\n", s->protect_waiting);
		printf("shards    %" PRIu64 " held for peers, %s%s",
		       s->shards_held, fmt_size(a, s->shard_bytes),
		       s->shards_bad ? ", " : "\n");
		if (s->shards_bad)
			printf("%" PRIu64 " set aside: failed their CRC\n",
			       s->shards_bad);
		printf("          %" PRIu32 " being written (%s reserved), room for"
		       " %s more, %s kept for this node's parts\n",
		       s->shards_open, fmt_size(a, s->shard_reserved),
		       fmt_size(b, s->shard_room),
		       fmt_size(c, s->holder_reserve));
		if (s->shards_refused_space || s->shards_dropped)
			printf("          %" PRIu32 " refused for room, %" PRIu32
			       " unsealed dropped since start\n",
			       s->shards_refused_space, s->shards_dropped);
		if (s->peers_lagging[0])
			printf("lagging   %s\n", s->peers_lagging);
		if (s->rebuild_state == CKPT_REBUILD_RUNNING)
			printf("rebuild   running: %" PRIu32 " of %" PRIu32
			       " parts, %s of %s%s%s\n", s->rebuild_parts_done,
			       s->rebuild_parts, fmt_size(a, s->rebuild_bytes_done),
			       fmt_size(b, s->rebuild_bytes),
			       s->rebuild_waiting[0] ? "; waiting for " : "",
			       s->rebuild_waiting);
		else if (s->rebuild_state == CKPT_REBUILD_DONE)
			printf("rebuild   done: %" PRIu32 " parts rebuilt, %" PRIu32
			       " unrecoverable\n", s->rebuild_parts_done,
			       s->rebuild_parts_lost);
	}
	if (s->drain_target[0]) {
		printf("drain     to %s: %s written, %s now", s->drain_target,
		       fmt_size(a, s->drain_bytes),
		       fmt_rate(b, (double)s->drain_rate));
		if (s->drain_bandwidth)
			printf(" (cap %s)",
			       fmt_rate(a, (double)s->drain_bandwidth));
		printf(", %" PRIu32 " queued, %" PRIu32 " copying%s\n",
		       s->drain_queued, s->drain_running,
		       s->drain_paused ? ", PAUSED" : "");
		if (s->drain_errors)
			printf("          %" PRIu32 " failed attempts; last: %s%s%s\n",
			       s->drain_errors,
			       ckpt_strerror(s->drain_last_error),
			       s->drain_last_path[0] ? " at " : "",
			       s->drain_last_path);
	}
	printf("clients %" PRIu32 ", jobs %" PRIu32 ", versions %" PRIu32
	       " (%" PRIu32 " open), disk queue depth %" PRIu32 "\n",
	       s->clients, s->jobs, s->versions, s->open_versions,
	       s->queue_depth);
	if (sv->n) {
		putchar('\n');
		print_versions(sv->v, sv->n, 1);
	}
}

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
	struct status_view sv;
	int rc, err;

	rc = plain_args(ctl, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind != argc)
		return ctl_usage("status: no arguments expected");
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	memset(&sv, 0, sizeof(sv));
	err = ckpt_status2(ctl->c, &sv.s, sizeof(sv.s));
	if (err < 0)
		return ctl_fail(err, "status");
	if (sv.s.node[0]) {
		err = ckpt_list_nodes(ctl->c, &sv.nodes, sizeof(*sv.nodes));
		if (err < 0)
			return ctl_fail(err, "list nodes");
		sv.nnodes = err;
	}
	err = collect_versions(ctl->c, &sv.v, &sv.n);
	if (err) {
		free(sv.nodes);
		return ctl_fail(err, "list versions");
	}
	if (ctl->json)
		status_json(&sv);
	else
		status_text(&sv);
	free(sv.nodes);
	free(sv.v);
	return CTL_EXIT_OK;
}

/* The committed version with the highest seq, or NULL. */
static const struct ckpt_version_info *newest(const struct ckpt_version_info *v,
					      int n)
{
	const struct ckpt_version_info *best = NULL;
	int i;

	for (i = 0; i < n; i++)
		if (v[i].seq && (!best || v[i].seq > best->seq))
			best = &v[i];
	return best;
}

static int job_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* One job's entry for ls without arguments. */
static void ls_job_entry(struct ctl *ctl, struct jw *w, struct tbl *t,
			 const char *job, const struct ckpt_version_info *v,
			 int n)
{
	const struct ckpt_version_info *nv = newest(v, n);
	uint64_t now = ctl_wall_ns();
	char cnt[FMT_LEN], age[FMT_LEN];

	if (ctl->json) {
		jw_obj(w);
		jw_kstr(w, "job", job);
		jw_ku64(w, "versions", (uint64_t)n);
		jw_key(w, "newest");
		if (nv)
			jw_str(w, nv->version);
		else
			jw_null(w);
		jw_key(w, "level");
		if (nv)
			jw_str(w, ckpt_level_name(nv->level));
		else
			jw_null(w);
		jw_obj_end(w);
		return;
	}
	snprintf(cnt, sizeof(cnt), "%d", n);
	if (nv && nv->sealed_ns && now >= nv->sealed_ns)
		fmt_dur(age, now - nv->sealed_ns);
	else
		snprintf(age, sizeof(age), "-");
	tbl_add(t, (const char *[]){ job, cnt, nv ? nv->version : NULL,
		nv ? ckpt_level_name(nv->level) : NULL, age });
}

static int ls_jobs(struct ctl *ctl)
{
	static const char *const heads[] = { "JOB", "VERSIONS", "NEWEST",
					     "LEVEL", "AGE" };
	char (*jobs)[CKPT_JOB_MAX + 1] = NULL;
	struct ckpt_version_info *v;
	struct jw w;
	struct tbl t;
	int njobs, n, i, rc = CTL_EXIT_OK;

	njobs = ckpt_list_jobs(ctl->c, &jobs);
	if (njobs < 0)
		return ctl_fail(njobs, "list jobs");
	if (njobs > 1)
		qsort(jobs, (size_t)njobs, sizeof(*jobs), job_cmp);
	jw_init(&w, stdout);
	if (ctl->json) {
		jw_obj(&w);
		jw_key(&w, "jobs");
		jw_arr(&w);
	}
	tbl_init(&t, 5, heads, "lrllr");
	for (i = 0; i < njobs; i++) {
		v = NULL;
		n = ckpt_list_versions2(ctl->c, jobs[i], &v, sizeof(*v));
		if (n == -CKPT_ENOJOB || n == -CKPT_ENOVERSION || n == -EACCES)
			continue; /* removed since listed, or another user's */
		if (n < 0) {
			rc = ctl_fail(n, "list versions of %s", jobs[i]);
			goto out_release;
		}
		ls_job_entry(ctl, &w, &t, jobs[i], v, n);
		free(v);
	}
	if (ctl->json) {
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_done(&w);
	} else if (t.nrows) {
		tbl_print(&t, stdout);
	}
out_release:
	tbl_release(&t);
	free(jobs);
	return rc;
}

static int ls_versions(struct ctl *ctl, const char *job)
{
	struct ckpt_version_info *v = NULL;
	struct jw w;
	int n, i;

	n = ckpt_list_versions2(ctl->c, job, &v, sizeof(*v));
	if (n < 0)
		return ctl_fail(n, "ls %s", job);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), version_cmp);
	if (ctl->json) {
		jw_init(&w, stdout);
		jw_obj(&w);
		jw_kstr(&w, "job", job);
		jw_key(&w, "versions");
		jw_arr(&w);
		for (i = 0; i < n; i++)
			ctl_json_version(&w, &v[i]);
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_done(&w);
	} else if (n) {
		print_versions(v, n, 0);
	}
	free(v);
	return CTL_EXIT_OK;
}

/* The writers' stall line of `ls JOB VERSION`, when any reported one. */
static void print_stall(const struct ckpt_version_info *vi)
{
	char p50[FMT_LEN], p99[FMT_LEN], max[FMT_LEN], rank[32] = "";

	if (!vi->stall_writers)
		return;
	if (vi->slow_rank >= 0)
		snprintf(rank, sizeof(rank), ", rank %d", (int)vi->slow_rank);
	printf("writer stall over %u writers: p50 %s, p99 %s, max %s (slowest: pid %u on %s%s)\n",
	       vi->stall_writers, fmt_dur(p50, vi->stall_p50_ns),
	       fmt_dur(p99, vi->stall_p99_ns), fmt_dur(max, vi->stall_max_ns),
	       vi->slow_pid, vi->slow_host[0] ? vi->slow_host : "?", rank);
}

/* The attributes a file has (only those ever set): mode as a number. */
static void json_attr(struct jw *w, const struct ckpt_attr *a)
{
	if (a->set & CKPT_ATTR_MODE)
		jw_ku64(w, "mode", a->mode);
	if (a->set & CKPT_ATTR_UID)
		jw_ku64(w, "uid", a->uid);
	if (a->set & CKPT_ATTR_GID)
		jw_ku64(w, "gid", a->gid);
	if (a->set & CKPT_ATTR_ATIME)
		jw_ku64(w, "atime_ns", a->atime_ns);
	if (a->set & CKPT_ATTR_MTIME)
		jw_ku64(w, "mtime_ns", a->mtime_ns);
	if (a->ctime_ns)
		jw_ku64(w, "ctime_ns", a->ctime_ns);
}

/* A part's SHARDS cell: "-" (never erasure-coded), "5/5", or "4/5 (n6
 * down 3m)", naming the holders that are not up (nodes: the node table, n
 * of them, or NULL). */
static void fmt_shards(char *out, size_t cap, const struct ckpt_version_info *p,
		       const struct ckpt_node_info *nodes, int nn)
{
	char names[CKPT_HOLDERS_MAX + 1], dur[FMT_LEN], *save, *h;
	size_t len;
	int i, first = 1;

	if (!p->shards) {
		snprintf(out, cap, "-");
		return;
	}
	len = (size_t)snprintf(out, cap, "%u/%u", p->shards_up, p->shards);
	snprintf(names, sizeof(names), "%s", p->holders);
	for (h = strtok_r(names, " ", &save); h && len < cap;
	     h = strtok_r(NULL, " ", &save)) {
		for (i = 0; i < nn && strcmp(nodes[i].name, h); i++)
			;
		if (i < nn && (nodes[i].state == CKPT_NODE_UP ||
			       nodes[i].state == CKPT_NODE_SELF))
			continue;
		len += (size_t)snprintf(out + len, cap - len, "%s%s %s",
					first ? " (" : ", ", h,
					i == nn ? "not listed" : "down");
		if (i < nn && len < cap)
			len += (size_t)snprintf(out + len, cap - len, " %s",
						fmt_dur(dur, nodes[i].since_ms_ago * 1000000ull));
		first = 0;
	}
	if (!first && len < cap)
		snprintf(out + len, cap - len, ")");
}

/* The parts of a version over a cluster: node, state, level, files, and
 * its shards readable now. */
static void ls_parts(struct ctl *ctl, const char *job, const char *version)
{
	static const char *const heads[] = { "NODE", "STATE", "LEVEL", "FILES",
					     "BYTES", "SHARDS" };
	struct ckpt_version_info *p = NULL;
	struct ckpt_node_info *nodes = NULL;
	char files[FMT_LEN], bytes[FMT_LEN], shards[256];
	struct tbl t;
	int n, i, nn;

	n = ckpt_list_parts(ctl->c, job, version, &p, sizeof(*p));
	if (n <= 0 || !p[0].node[0]) {
		free(p);
		return;
	}
	nn = ckpt_list_nodes(ctl->c, &nodes, sizeof(*nodes));
	if (nn < 0)
		nn = 0;
	tbl_init(&t, 6, heads, "lllrrl");
	for (i = 0; i < n; i++) {
		snprintf(files, sizeof(files), "%" PRIu32, p[i].nfiles);
		fmt_shards(shards, sizeof(shards), &p[i], nodes, nn);
		tbl_add(&t, (const char *[]){ p[i].node,
			ckpt_state_name(p[i].state), ckpt_level_name(p[i].level),
			files, fmt_size(bytes, p[i].bytes), shards });
	}
	putchar('\n');
	tbl_print(&t, stdout);
	tbl_release(&t);
	free(nodes);
	free(p);
}

/* Why file path of job/version is marked cut short (CKPT_XATTR_FAILED's
 * value, "pid 4242 killed by signal 9"), printable bytes only, into out. */
static void cut_short_why(struct ctl *ctl, const char *job,
			  const char *version, const char *path, char *out,
			  size_t cap)
{
	uint8_t blob[CKPT_XATTR_MAX];
	const uint8_t *val;
	long len, i;
	size_t n = 0;

	len = ckpt_getxattrs(ctl->c, job, version, path, blob, sizeof(blob));
	len = len > 0 ? xattr_get(blob, (size_t)len, CKPT_XATTR_FAILED, &val)
		      : -ENODATA;
	for (i = 0; i < len && n + 1 < cap; i++)
		out[n++] = val[i] >= 0x20 && val[i] < 0x7f ? (char)val[i] : '?';
	if (cap)
		out[n] = '\0';
}

static int ls_files(struct ctl *ctl, const char *job, const char *version)
{
	static const char *const heads[] = { "PATH", "SIZE", "BYTES",
					     "EXTENTS" };
	struct ckpt_version_info vi, *parts = NULL;
	struct ckpt_file_info *f = NULL;
	char size[FMT_LEN], bytes[FMT_LEN], ext[FMT_LEN], why[128];
	struct jw w;
	struct tbl t;
	int n, i, err, pn, ncut = 0;

	err = ctl_stat_version(ctl->c, job, version, &vi);
	if (err)
		return ctl_fail(err, "ls %s/%s", job, version);
	n = ckpt_list_files2(ctl->c, job, version, &f, sizeof(*f));
	if (n < 0)
		return ctl_fail(n, "ls %s/%s", job, version);
	if (ctl->json) {
		jw_init(&w, stdout);
		jw_obj(&w);
		jw_key(&w, "info");
		ctl_json_version(&w, &vi);
		pn = ckpt_list_parts(ctl->c, job, version, &parts,
				     sizeof(*parts));
		jw_key(&w, "parts");
		jw_arr(&w);
		for (i = 0; i < pn; i++)
			ctl_json_version(&w, &parts[i]);
		jw_arr_end(&w);
		free(parts);
		jw_key(&w, "files");
		jw_arr(&w);
		for (i = 0; i < n; i++) {
			jw_obj(&w);
			jw_kstr(&w, "path", f[i].name);
			jw_ku64(&w, "size", f[i].size);
			jw_ku64(&w, "extents", f[i].extents);
			jw_ku64(&w, "data", f[i].data);
			json_attr(&w, &f[i].attr);
			if (f[i].flags & CKPT_FILE_FAILED) {
				cut_short_why(ctl, job, version, f[i].name,
					      why, sizeof(why));
				jw_kstr(&w, "cut_short", why);
			}
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_obj_end(&w);
		jw_done(&w);
		free(f);
		return CTL_EXIT_OK;
	}
	printf("%s/%s: %s, level %s, %d files, %s", job, version,
	       ckpt_state_name(vi.state), ckpt_level_name(vi.level), n,
	       fmt_size(size, vi.bytes));
	if (vi.nparts > 1)
		printf(", %u of %u parts sealed", vi.parts_sealed, vi.nparts);
	if (vi.drain) {
		char dw[512];

		fmt_drain_wait(dw, sizeof(dw), &vi);
		printf(", drain %s%s%s%s", ckpt_drain_state_name(vi.drain),
		       dw[0] ? " (" : "", dw, dw[0] ? ")" : "");
	}
	if (vi.rm_part_pfs)
		printf(", rm again removes this part from the PFS too");
	putchar('\n');
	print_stall(&vi);
	ls_parts(ctl, job, version);
	if (n) {
		tbl_init(&t, 4, heads, "lrrr");
		for (i = 0; i < n; i++) {
			snprintf(bytes, sizeof(bytes), "%" PRIu64, f[i].size);
			snprintf(ext, sizeof(ext), "%" PRIu32, f[i].extents);
			tbl_add(&t, (const char *[]){ f[i].name,
				fmt_size(size, f[i].size), bytes, ext });
		}
		putchar('\n');
		tbl_print(&t, stdout);
		tbl_release(&t);
	}
	for (i = 0; i < n; i++) {
		if (!(f[i].flags & CKPT_FILE_FAILED))
			continue;
		if (!ncut++)
			printf("\nCut short (their writer died with them open; the version commits once each is removed or rewritten from offset 0):\n");
		cut_short_why(ctl, job, version, f[i].name, why, sizeof(why));
		printf("  %s: %s\n", f[i].name, why[0] ? why : "its writer died");
	}
	free(f);
	return CTL_EXIT_OK;
}

int cmd_ls(struct ctl *ctl, int argc, char **argv)
{
	int rc = plain_args(ctl, argc, argv), nargs;

	if (rc >= 0)
		return rc;
	nargs = argc - optind;
	if (nargs > 2)
		return ctl_usage("ls: too many arguments");
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	if (nargs == 0)
		return ls_jobs(ctl);
	if (nargs == 1)
		return ls_versions(ctl, argv[optind]);
	return ls_files(ctl, argv[optind], argv[optind + 1]);
}

/* A command JOB VERSION that calls op on the version and reports done. */
static int version_cmd(struct ctl *ctl, int argc, char **argv,
		       const char *name, const char *done,
		       int (*op)(struct ckpt_client *, const char *,
				 const char *))
{
	const char *job, *version;
	struct jw w;
	int rc = plain_args(ctl, argc, argv), err;

	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return ctl_usage("%s: expected JOB VERSION", name);
	job = argv[optind];
	version = argv[optind + 1];
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	err = op(ctl->c, job, version);
	if (err)
		return ctl_fail(err, "%s %s/%s", name, job, version);
	if (ctl->json) {
		jw_init(&w, stdout);
		jw_obj(&w);
		jw_kstr(&w, "job", job);
		jw_kstr(&w, "version", version);
		jw_kbool(&w, done, 1);
		jw_obj_end(&w);
		jw_done(&w);
	} else {
		printf("%s %s/%s\n", done, job, version);
	}
	return CTL_EXIT_OK;
}

static int drain_now(struct ckpt_client *c, const char *job,
		     const char *version)
{
	return ckpt_drain(c, CKPT_DRAIN_NOW, job, version);
}

/* drain --pause | --resume | --adopt-target | --now JOB VERSION */
int cmd_drain(struct ctl *ctl, int argc, char **argv)
{
	static const struct {
		const char *opt, *done;
		enum ckpt_drain_cmd cmd;
	} cmds[] = {
		{ "--pause", "drain paused", CKPT_DRAIN_PAUSE },
		{ "--resume", "drain resumed", CKPT_DRAIN_RESUME },
		{ "--adopt-target", "drain target taken as it is",
		  CKPT_DRAIN_ADOPT },
	};
	size_t i;
	int err;

	if (argc >= 2 && !strcmp(argv[1], "--now"))
		return version_cmd(ctl, argc - 1, argv + 1, "drain --now",
				   "draining", drain_now);
	for (i = 0; argc == 2 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].opt))
			break;
	if (argc != 2 || i == sizeof(cmds) / sizeof(cmds[0]))
		return ctl_usage("drain: expected --pause, --resume, --adopt-target or --now JOB VERSION");
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	err = ckpt_drain(ctl->c, cmds[i].cmd, NULL, NULL);
	if (err)
		return ctl_fail(err, "drain %s", argv[1]);
	printf("%s\n", cmds[i].done);
	return CTL_EXIT_OK;
}

int cmd_commit(struct ctl *ctl, int argc, char **argv)
{
	return version_cmd(ctl, argc, argv, "commit", "committed",
			   ckpt_commit_name);
}
