/*
 * metrics.c - ckptd's Prometheus metrics (see metrics.h).
 *
 * The loop thread counts into d->ms and, once a second, publishes a copy of
 * it into m->snap under m->mu.  libmicrohttpd runs its own polling thread
 * (MHD_USE_INTERNAL_POLLING_THREAD) that calls on_request(); it takes a copy
 * of the snapshot under the same lock and formats the text exposition format
 * (version 0.0.4) into a buffer it hands to libmicrohttpd.  That thread sees
 * nothing of ckptd but the snapshot.
 *
 * Why libmicrohttpd: it is a small, maintained HTTP/1.1 server library in
 * Debian (libmicrohttpd-dev) that parses requests, enforces connection and
 * memory limits and timeouts, and runs its own thread: an HTTP parser of our
 * own would be one more trust boundary to fuzz.  It is bound to the address
 * given (127.0.0.1 in the example) and serves GET and HEAD of /metrics only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "catalog.h"
#include "ckptd.h"
#include "svc.h"
#include "cluster.h"
#include "drain.h"
#include "pfscache.h"
#include "log.h"
#include "names.h"
#include "metrics.h"
#include "vstats.h"

struct metrics {
	struct MHD_Daemon *mhd;
	pthread_mutex_t mu;        /* guards snap and published */
	struct mstats snap;        /* the last published copy of d->ms */
	int published;             /* snap holds a publication: until then
				    * scrapes get 503, never zeros */
};

static const char *const level_label[MLEVELS] = {
	"staged", "local", "protected", "drained",
};

static const char *const err_label[MERR_N] = {
	[MERR_ABORTED] = "aborted",
	[MERR_WRITE] = "write",
	[MERR_MANIFEST] = "manifest",
};

/* ---- loop side: gauges and publication ---------------------------------- */

/* Age of the oldest version waiting for (or in) the drain, ms. */
static uint64_t drain_lag_ms(const struct ckptd *d)
{
	struct timespec now;
	uint64_t oldest = 0, now_ns;
	struct list *jp, *vp;

	if (!d->drain)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	for (jp = d->cat->jobs.next; jp != &d->cat->jobs; jp = jp->next) {
		struct job *j = list_entry(jp, struct job, link);

		for (vp = j->versions.next; vp != &j->versions; vp = vp->next) {
			struct version *v = list_entry(vp, struct version, link);

			if ((v->drain == DR_QUEUED || v->drain == DR_RUNNING) &&
			    v->sealed_ns && (!oldest || v->sealed_ns < oldest))
				oldest = v->sealed_ns;
		}
	}
	return oldest && now_ns > oldest ? (now_ns - oldest) / 1000000u : 0;
}

/* The gauges of ckpt_status, as `ckptctl status` shows them. */
static void fill_status(const struct ckptd *d, struct ckpt_status *s)
{
	struct list *pos;

	memset(s, 0, sizeof(*s));
	s->clients = d->svc->nconns;
	for (pos = d->cat->jobs.next; pos != &d->cat->jobs; pos = pos->next)
		s->jobs++;
	s->versions = d->cat->nversions;
	s->open_versions = d->cat->nopen;
	s->queue_depth = d->loop.inflight;
	s->staging_total = d->staging.budget;
	s->staging_used = d->staging.lent;
	s->capacity = d->segs->capacity;
	s->store_used = segs_used_bytes(d->segs);
	s->ingest_bytes = d->st.ingest_bytes;
	s->ingest_rate = d->st.ingest_rate;
	s->uptime_ms = ckptd_now_ms() - d->st.start_ms;
	drain_status(d, s);
	cluster_status(d, s);
}

void metrics_publish(struct ckptd *d)
{
	struct metrics *m = d->metrics;

	if (!m)
		return;
	fill_status(d, &d->ms->st);
	d->ms->drain_lag_ms = drain_lag_ms(d);
	d->ms->staging_huge = d->staging.huge_total;
	if (drain_manifests(d)) {
		struct pfsc_stats ps;

		pfscache_stats(drain_manifests(d), &ps);
		d->ms->manifest_loads = ps.loads;
		d->ms->manifest_hits = ps.hits;
		d->ms->manifest_bytes = ps.bytes;
	}
	pthread_mutex_lock(&m->mu);
	m->snap = *d->ms;
	m->published = 1;
	pthread_mutex_unlock(&m->mu);
}

void metrics_tick(struct ckptd *d)
{
	if (d->metrics && ++d->ms->ticks % 4 == 0)      /* ticks are 250 ms */
		metrics_publish(d);
}

/* ---- HTTP side: formatting ---------------------------------------------- */

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s %.17g\n", name, v);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

/*
 * A label value, escaped as the text format wants (\\, \", \n).  Names are
 * any bytes, but the format is UTF-8 and Prometheus fails the whole scrape
 * on a label value that is not ("invalid UTF-8 label value"): a byte that
 * does not start a valid sequence is written as U+FFFD, as ckptctl --json
 * does.
 */
static void label(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	while (*s) {
		if (*s == '\\' || *s == '"') {
			fprintf(f, "\\%c", *s++);
			continue;
		}
		if (*s == '\n') {
			fputs("\\n", f);
			s++;
			continue;
		}
		n = name_utf8_len(s);
		if (n == 0) {
			fputs("\xef\xbf\xbd", f);   /* U+FFFD */
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)n, f);
		s += n;
	}
}

/* One histogram's series; lbl is "" or `level="x",`. */
static void hist(FILE *f, const char *name, const char *lbl,
		 const struct mhist *h)
{
	static const double bounds[MHIST_NB] = MHIST_BOUNDS;
	uint64_t cum = 0;
	unsigned i;

	for (i = 0; i < MHIST_NB; i++) {
		cum += h->bucket[i];
		fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, lbl, bounds[i],
			(unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, lbl,
		(unsigned long long)h->count);
	if (*lbl)       /* `level="x",` less its comma */
		fprintf(f, "%s_sum{%.*s} %.9g\n%s_count{%.*s} %llu\n", name,
			(int)strlen(lbl) - 1, lbl, h->sum, name,
			(int)strlen(lbl) - 1, lbl, (unsigned long long)h->count);
	else
		fprintf(f, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name,
			(unsigned long long)h->count);
}

static void fmt_levels(FILE *f, const struct mstats *s)
{
	char lbl[32];
	unsigned l;

	head(f, "ckpt_versions_total", "counter",
	     "Versions that reached each level.");
	for (l = 0; l < MLEVELS; l++)
		fprintf(f, "ckpt_versions_total{level=\"%s\"} %llu\n",
			level_label[l], (unsigned long long)s->versions[l]);
	head(f, "ckpt_version_bytes_total", "counter",
	     "Bytes of the versions that reached each level.");
	for (l = 0; l < MLEVELS; l++)
		fprintf(f, "ckpt_version_bytes_total{level=\"%s\"} %llu\n",
			level_label[l], (unsigned long long)s->level_bytes[l]);
	head(f, "ckpt_time_to_level_seconds", "histogram",
	     "Time from a version's last commit to each level.");
	for (l = 0; l < MLEVELS; l++) {
		snprintf(lbl, sizeof(lbl), "level=\"%s\",", level_label[l]);
		hist(f, "ckpt_time_to_level_seconds", lbl, &s->to_level[l]);
	}
}

static void fmt_stalls(FILE *f, const struct mstats *s)
{
	head(f, "ckpt_writer_stall_seconds", "histogram",
	     "Time each writer's writes were blocked, as its client measured it.");
	hist(f, "ckpt_writer_stall_seconds", "", &s->stall);
	counter(f, "ckpt_stragglers_total",
		"Writers logged as stragglers (over straggler_factor x the median).",
		s->stragglers);
	head(f, "ckpt_last_version_writer_stall_seconds", "gauge",
	     "Writer stall over the writers of the newest sealed version.");
	fprintf(f, "ckpt_last_version_writer_stall_seconds{quantile=\"0.5\"} %.9g\n"
		"ckpt_last_version_writer_stall_seconds{quantile=\"0.99\"} %.9g\n"
		"ckpt_last_version_writer_stall_seconds{quantile=\"1\"} %.9g\n",
		(double)s->last_p50_ns / 1e9, (double)s->last_p99_ns / 1e9,
		(double)s->last_max_ns / 1e9);
	gauge(f, "ckpt_last_version_writers",
	      "Writers that reported a stall for the newest sealed version.",
	      s->last_writers);
	if (!s->last_writers)
		return;
	head(f, "ckpt_last_version_slowest_writer_stall_seconds", "gauge",
	     "The slowest writer of the newest sealed version, and its stall.");
	fprintf(f, "ckpt_last_version_slowest_writer_stall_seconds{job=\"");
	label(f, s->last_job);
	fprintf(f, "\",version=\"");
	label(f, s->last_version);
	fprintf(f, "\",host=\"");
	label(f, s->last_host);
	fprintf(f, "\",pid=\"%d\",rank=\"%d\"} %.9g\n", (int)s->last_pid,
		(int)s->last_rank, (double)s->last_max_ns / 1e9);
}

static void fmt_state(FILE *f, const struct mstats *s)
{
	const struct ckpt_status *st = &s->st;
	unsigned k;

	gauge(f, "ckpt_uptime_seconds", "Seconds since ckptd started.",
	      (double)st->uptime_ms / 1e3);
	gauge(f, "ckpt_clients", "Connected clients.", st->clients);
	gauge(f, "ckpt_jobs", "Jobs known.", st->jobs);
	gauge(f, "ckpt_versions", "Versions known, in any state.", st->versions);
	gauge(f, "ckpt_open_versions", "Versions still being written.",
	      st->open_versions);
	gauge(f, "ckpt_disk_ops_inflight", "Disk operations in flight.",
	      st->queue_depth);
	counter(f, "ckpt_absorbed_bytes_total",
		"Bytes absorbed into the local store.", st->ingest_bytes);
	gauge(f, "ckpt_staging_bytes", "Staging memory budget.",
	      (double)st->staging_total);
	gauge(f, "ckpt_staging_used_bytes", "Staging leased to clients.",
	      (double)st->staging_used);
	gauge(f, "ckpt_staging_huge_bytes",
	      "Staging on huge pages (root's leases: the mounts').",
	      (double)s->staging_huge);
	gauge(f, "ckpt_store_capacity_bytes", "Local store capacity.",
	      (double)st->capacity);
	gauge(f, "ckpt_store_used_bytes", "Local store bytes in use.",
	      (double)st->store_used);
	gauge(f, "ckpt_drain_queued_versions", "Versions waiting to drain.",
	      st->drain_queued);
	gauge(f, "ckpt_drain_running_versions", "Versions being copied now.",
	      st->drain_running);
	gauge(f, "ckpt_drain_paused", "1 while the drain is paused.",
	      st->drain_paused);
	counter(f, "ckpt_drained_bytes_total",
		"Bytes written to the parallel file system.", st->drain_bytes);
	gauge(f, "ckpt_drain_lag_seconds",
	      "Age of the oldest sealed version not yet drained.",
	      (double)s->drain_lag_ms / 1e3);
	counter(f, "ckpt_pfs_manifest_loads_total",
		"PFS manifests read for reads from the PFS.",
		s->manifest_loads);
	counter(f, "ckpt_pfs_manifest_hits_total",
		"Reads from the PFS that found their manifest kept.",
		s->manifest_hits);
	gauge(f, "ckpt_pfs_manifest_cache_bytes",
	      "Bytes of PFS manifests kept for reads.",
	      (double)s->manifest_bytes);
	gauge(f, "ckpt_cluster_peers", "Other nodes of the cluster (0 alone).",
	      st->peers);
	gauge(f, "ckpt_cluster_peers_up",
	      "Peers with an authenticated link up.", st->peers_up);
	gauge(f, "ckpt_protect_queued_versions",
	      "This node's parts waiting for or in protection.",
	      st->protect_queued);
	counter(f, "ckpt_protected_versions_total",
		"This node's parts that reached PROTECTED since start.",
		st->protect_done);
	counter(f, "ckpt_protect_bytes_total",
		"Shard bytes sent and acknowledged since start.",
		st->protect_bytes);
	gauge(f, "ckpt_parts_degraded",
	      "This node's sealed parts below full redundancy (LOCAL only, or a holder down), not on the PFS.",
	      st->parts_degraded);
	counter(f, "ckpt_reprotect_total",
		"Parts protected again since start: a holder down past reprotect_after, or no longer listed.",
		st->reprotect_done);
	counter(f, "ckpt_reprotect_holders_replaced_total",
		"Parts placed on other holders than the computed ones since start.",
		st->holders_replaced);
	counter(f, "ckpt_parts_adopted_total",
		"Parts of nodes gone for good (down past reprotect_after, or removed) this node took over since start.",
		st->parts_adopted);
	gauge(f, "ckpt_parts_adopting",
	      "Parts of nodes gone for good being taken over here now (0 or 1).",
	      st->parts_adopting);
	gauge(f, "ckpt_shards_held", "Shards held for peers.",
	      st->shards_held);
	gauge(f, "ckpt_shard_bytes", "Bytes of the shards held for peers.",
	      st->shard_bytes);
	gauge(f, "ckpt_shards_bad",
	      "Held shards that failed their CRC check and were set aside.",
	      st->shards_bad);
	gauge(f, "ckpt_shard_reserved_bytes",
	      "Bytes reserved for peers' shards being written (each its whole size from its first chunk).",
	      (double)st->shard_reserved);
	gauge(f, "ckpt_shards_open", "Peers' shards being written.",
	      st->shards_open);
	counter(f, "ckpt_shards_refused_space_total",
		"Peers' shards refused for room since start.",
		st->shards_refused_space);
	counter(f, "ckpt_shards_dropped_total",
		"Peers' shards dropped unsealed since start (their attempt abandoned).",
		st->shards_dropped);
	gauge(f, "ckpt_shard_room_bytes",
	      "Bytes a peer's shard may still be given now.",
	      (double)st->shard_room);
	gauge(f, "ckpt_holder_reserve_bytes",
	      "Bytes of the store kept for this node's own parts ([cluster] holder_reserve).",
	      (double)st->holder_reserve);
	head(f, "ckpt_read_bytes_total", "counter",
	     "Bytes served to READs, by the source they came from.");
	for (k = CKPT_SRC_LOCAL; k <= CKPT_SRC_PFS; k++)
		fprintf(f, "ckpt_read_bytes_total{source=\"%s\"} %llu\n",
			ckpt_source_name((enum ckpt_source)k),
			(unsigned long long)s->read_bytes[k]);
	head(f, "ckpt_errors_total", "counter", "Errors, by kind.");
	for (k = 0; k < MERR_N; k++)
		fprintf(f, "ckpt_errors_total{kind=\"%s\"} %llu\n", err_label[k],
			(unsigned long long)s->errors[k]);
	fprintf(f, "ckpt_errors_total{kind=\"drain\"} %u\n", st->drain_errors);
}

/* The whole page, malloc'd into *out.  0, -EAGAIN (nothing published yet:
 * ckptd is starting) or -ENOMEM. */
static int render(struct metrics *m, char **out, size_t *len)
{
	struct mstats *s = malloc(sizeof(*s));
	FILE *f;
	int ret = -ENOMEM, published;

	*out = NULL;
	if (!s)
		return ret;
	pthread_mutex_lock(&m->mu);
	*s = m->snap;
	published = m->published;
	pthread_mutex_unlock(&m->mu);
	if (!published) {
		ret = -EAGAIN;
		goto out_free;
	}
	f = open_memstream(out, len);
	if (!f)
		goto out_free;
	fmt_state(f, s);
	fmt_levels(f, s);
	fmt_stalls(f, s);
	ret = fclose(f) ? -ENOMEM : 0;
	if (ret) {
		free(*out);
		*out = NULL;
	}
out_free:
	free(s);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code,
			     const char *text)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* libmicrohttpd's thread: GET or HEAD /metrics, nothing else. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct metrics *m = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text;
	size_t len;
	int err;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "only GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "see /metrics\n");
	err = render(m, &text, &len);
	if (err == -EAGAIN)
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
			     "ckptd is starting: no values yet\n");
	if (err < 0)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "out of memory\n");
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Parse "A.B.C.D:PORT" into *sa.  0 or -EINVAL. */
static int parse_addr(const char *addr, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	char *end;
	unsigned long port;

	if (!colon || (size_t)(colon - addr) >= sizeof(host) || colon == addr)
		return -EINVAL;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

int metrics_open(const char *addr, struct metrics **out)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_in sa;
	struct metrics *m;
	int ret;

	ret = parse_addr(addr, &sa);
	if (ret < 0) {
		log_printf(LOG_ERR, "metrics %s: not an IPv4 address:port", addr);
		return ret;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->mu, NULL);
	errno = 0;
	m->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				  MHD_USE_POLL, 0, NULL, NULL, on_request, m,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_CONNECTION_LIMIT, 64u,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, 16u,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				  (size_t)32768,
				  MHD_OPTION_END);
	if (!m->mhd) {
		ret = errno ? -errno : -EADDRINUSE;
		log_printf(LOG_ERR, "metrics %s: cannot serve: %s", addr,
			   strerror(-ret));
		goto out_free;
	}
	info = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_BIND_PORT);
	log_printf(LOG_NOTICE, "metrics: serving http://%.*s:%u/metrics",
		   (int)(strrchr(addr, ':') - addr), addr,
		   info ? (unsigned)info->port : 0u);
	*out = m;
	return 0;

out_free:
	pthread_mutex_destroy(&m->mu);
	free(m);
	return ret;
}

void metrics_close(struct metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->mhd);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
