/*
 * bench_report.c - the report of `ckptctl bench`: one table of times and
 * rates with the two design ratios and their targets, or the same numbers
 * as one JSON object.
 *
 * fio's time is its own "runtime" for the write group when the JSON had
 * one, else the wall time of the fio process; both are shown.  Rates are
 * decimal GB/s, as fio and disk vendors give them.
 */
#include <stdio.h>

#include "bench.h"
#include "ctl_fmt.h"
#include "ctl_json.h"

/* Times with enough digits to compare runs: "12.34 ms", "1.203 s". */
static char *fmt_time(char *buf, uint64_t ns)
{
	if (ns < 1000000000u)
		snprintf(buf, FMT_LEN, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, FMT_LEN, "%.3f s", (double)ns / 1e9);
	return buf;
}

static uint64_t fio_ns(const struct bench *b)
{
	return b->fio.runtime_ms ? b->fio.runtime_ms * 1000000u : b->fio.wall_ns;
}

static double ratio(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : 0.0;
}

/* One table row; ratio < 0 leaves the ratio, target and result empty. */
static void row(struct tbl *t, const char *name, uint64_t bytes, uint64_t ns,
		double r, const char *target, int ok)
{
	char sz[FMT_LEN], tm[FMT_LEN], rt[FMT_LEN], ra[FMT_LEN];

	snprintf(ra, sizeof(ra), "%.2f", r);
	tbl_add(t, (const char *[]){ name, fmt_size(sz, bytes),
		fmt_time(tm, ns), fmt_gbps(rt, bytes, ns),
		r < 0 ? "" : ra, r < 0 ? "" : target,
		r < 0 ? "" : ok ? "ok" : "MISSED" });
}

/* (c): the writers' medians and the slowest, as ratios. */
static double writers_stall(const struct bench *b)
{
	return ratio(bench_median(b->w_write_ns, b->procs),
		     bench_median(b->w_copy_ns, b->procs));
}

static double writers_fair(const struct bench *b)
{
	return ratio(bench_max(b->w_write_ns, b->procs),
		     bench_median(b->w_write_ns, b->procs));
}

static void report_writers(const struct bench *b)
{
	static const char *const heads[] = { "WRITER", "BYTES", "MEMCPY",
					     "CKPT_WRITE", "RATIO" };
	char sz[FMT_LEN], t1[FMT_LEN], t2[FMT_LEN], ra[FMT_LEN], name[32];
	double rs = writers_stall(b), rf = writers_fair(b);
	struct tbl t;
	int i;

	printf("ckptctl bench --mode writers: job %s, %d writers x %s at once, %s ckpt_write calls, %s first, ckptd pid %llu\n\n",
	       b->job, b->procs, fmt_size(sz, b->size),
	       fmt_size(t1, b->piece), b->writes_first ? "writes" : "memcpy",
	       (unsigned long long)b->daemon_pid);
	tbl_init(&t, 5, heads, "lrrrr");
	for (i = 0; i < b->procs; i++) {
		snprintf(name, sizeof(name), "%d", i);
		snprintf(ra, sizeof(ra), "%.2f",
			 ratio(b->w_write_ns[i], b->w_copy_ns[i]));
		tbl_add(&t, (const char *[]){ name, fmt_size(sz, b->size),
			fmt_time(t1, b->w_copy_ns[i]),
			fmt_time(t2, b->w_write_ns[i]), ra });
	}
	tbl_print(&t, stdout);
	tbl_release(&t);
	printf("\nstall: median ckpt_write / median memcpy = %.3f (target <= %.2f %s)\n",
	       rs, BENCH_WRITERS_STALL_MAX,
	       rs <= BENCH_WRITERS_STALL_MAX ? "ok" : "MISSED");
	printf("fairness: slowest / median ckpt_write = %.3f (target <= %.2f %s)\n",
	       rf, BENCH_FAIR_MAX, rf <= BENCH_FAIR_MAX ? "ok" : "MISSED");
	printf("memcpy's own spread: slowest / median memcpy = %.3f; stall of the slowest: %.3f\n",
	       ratio(bench_max(b->w_copy_ns, b->procs),
		     bench_median(b->w_copy_ns, b->procs)),
	       ratio(bench_max(b->w_write_ns, b->procs),
		     bench_max(b->w_copy_ns, b->procs)));
	printf("# ratios stall=%.3f fair=%.3f copyfair=%.3f slowest=%.3f\n", rs, rf,
	       ratio(bench_max(b->w_copy_ns, b->procs),
		     bench_median(b->w_copy_ns, b->procs)),
	       ratio(bench_max(b->w_write_ns, b->procs),
		     bench_max(b->w_copy_ns, b->procs)));
}

static void report_text(const struct bench *b)
{
	static const char *const heads[] = { "TEST", "BYTES", "TIME", "RATE",
					     "RATIO", "TARGET", "RESULT" };
	uint64_t total = b->size * (uint64_t)b->procs;
	double rs = ratio(b->write_ns, b->memcpy_ns);
	double rb = ratio(fio_ns(b), b->burst_ns);
	char sz[FMT_LEN], lease[FMT_LEN];
	struct tbl t;

	printf("ckptctl bench: job %s, %d writers x %s, ckptd pid %llu\n",
	       b->job, b->procs, fmt_size(sz, b->size),
	       (unsigned long long)b->daemon_pid);
	printf("store %s%s%s\n\n", b->store, b->fio_dir[0] ? ", fio in " : "",
	       b->fio_dir);
	tbl_init(&t, 7, heads, "lrrrrll");
	if (b->mode == BENCH_MODE_ALL) {
		row(&t, "stall: memcpy", b->size, b->memcpy_ns, -1, NULL, 0);
		row(&t, "stall: ckpt_write", b->size, b->write_ns, rs,
		    "<= 1.30", rs <= BENCH_STALL_MAX);
	}
	row(&t, "burst: ckpt to LOCAL", total, b->burst_ns, -1, NULL, 0);
	if (b->fio_state == BENCH_FIO_OK) {
		row(&t, b->fio.runtime_ms ? "burst: fio (runtime)" :
					    "burst: fio (wall)",
		    total, fio_ns(b), rb, ">= 0.90", rb >= BENCH_BURST_MIN);
		if (b->fio.runtime_ms)
			row(&t, "burst: fio (wall)", total, b->fio.wall_ns, -1,
			    NULL, 0);
	}
	tbl_print(&t, stdout);
	tbl_release(&t);

	if (b->mode == BENCH_MODE_ALL)
		printf("\nstall: %s in 64 MiB ckpt_write calls (ckpt_buf_max %s), best of 3\n",
		       fmt_size(sz, b->size), fmt_size(lease, b->buf_max));
	printf("burst: %d writers, 8 MiB ckpt_write calls, barrier release to LOCAL%s\n",
	       b->procs, b->mode == BENCH_MODE_BURST ?
	       "; into recycled segments, against fio's second pass over its files" : "");
	if (b->fio_state == BENCH_FIO_MISSING)
		printf("fio: not found on $PATH; burst comparison skipped (install fio)\n");
	else if (b->fio_state == BENCH_FIO_FAILED)
		printf("fio: %s; burst comparison skipped\n", b->fio.why);
	if (b->other_dev)
		printf("note: %s is not on the store's device; the fio comparison is not like for like\n",
		       b->fio_dir);
	if (b->fio_state == BENCH_FIO_OK)
		printf("# ratios burst=%.3f\n", rb);
}

static void report_json_writers(struct jw *w, const struct bench *b)
{
	int i;

	jw_key(w, "writers");
	jw_obj(w);
	jw_ku64(w, "piece", b->piece);
	jw_key(w, "memcpy_s");
	jw_arr(w);
	for (i = 0; i < b->procs; i++)
		jw_dbl(w, (double)b->w_copy_ns[i] / 1e9);
	jw_arr_end(w);
	jw_key(w, "ckpt_write_s");
	jw_arr(w);
	for (i = 0; i < b->procs; i++)
		jw_dbl(w, (double)b->w_write_ns[i] / 1e9);
	jw_arr_end(w);
	jw_kdbl(w, "stall_ratio", writers_stall(b));
	jw_kdbl(w, "stall_target_max", BENCH_WRITERS_STALL_MAX);
	jw_kdbl(w, "fairness", writers_fair(b));
	jw_kdbl(w, "fairness_target_max", BENCH_FAIR_MAX);
	jw_obj_end(w);
}

static void report_json(const struct bench *b)
{
	static const char *const fio_st[] = { "not_run", "missing", "failed",
					      "ok" };
	uint64_t total = b->size * (uint64_t)b->procs;
	double rb = ratio(fio_ns(b), b->burst_ns);
	double rs = ratio(b->write_ns, b->memcpy_ns);
	struct jw w;

	jw_init(&w, stdout);
	jw_obj(&w);
	jw_kstr(&w, "job", b->job);
	jw_ku64(&w, "procs", (uint64_t)b->procs);
	jw_ku64(&w, "size", b->size);
	jw_ku64(&w, "daemon_pid", b->daemon_pid);
	jw_kstr(&w, "store", b->store);

	jw_kstr(&w, "mode", b->mode == BENCH_MODE_ALL ? "all" :
			     b->mode == BENCH_MODE_BURST ? "burst" : "writers");
	if (b->mode == BENCH_MODE_WRITERS) {
		report_json_writers(&w, b);
		goto out_end;
	}
	jw_key(&w, "stall");
	jw_obj(&w);
	jw_ku64(&w, "bytes", b->size);
	jw_ku64(&w, "buf_max", b->buf_max);
	jw_kdbl(&w, "memcpy_s", (double)b->memcpy_ns / 1e9);
	jw_kdbl(&w, "memcpy_gbps", ratio(b->size, b->memcpy_ns));
	jw_kdbl(&w, "ckpt_write_s", (double)b->write_ns / 1e9);
	jw_kdbl(&w, "ckpt_write_gbps", ratio(b->size, b->write_ns));
	jw_kdbl(&w, "ratio", rs);
	jw_kdbl(&w, "target_max", BENCH_STALL_MAX);
	jw_kbool(&w, "ok", rs <= BENCH_STALL_MAX);
	jw_obj_end(&w);

	jw_key(&w, "burst");
	jw_obj(&w);
	jw_ku64(&w, "bytes", total);
	jw_kdbl(&w, "ckpt_s", (double)b->burst_ns / 1e9);
	jw_kdbl(&w, "ckpt_gbps", ratio(total, b->burst_ns));
	jw_key(&w, "fio");
	jw_obj(&w);
	jw_kstr(&w, "status", fio_st[b->fio_state]);
	jw_kstr(&w, "dir", b->fio_dir);
	jw_kbool(&w, "same_device", !b->other_dev);
	if (b->fio_state == BENCH_FIO_FAILED)
		jw_kstr(&w, "error", b->fio.why);
	if (b->fio_state == BENCH_FIO_OK) {
		jw_kdbl(&w, "runtime_s", (double)b->fio.runtime_ms / 1e3);
		jw_kdbl(&w, "wall_s", (double)b->fio.wall_ns / 1e9);
		jw_ku64(&w, "bw_bytes", b->fio.bw_bytes);
		jw_ku64(&w, "io_bytes", b->fio.io_bytes);
	}
	jw_obj_end(&w);
	jw_key(&w, "ratio");
	if (b->fio_state == BENCH_FIO_OK)
		jw_dbl(&w, rb);
	else
		jw_null(&w);
	jw_kdbl(&w, "target_min", BENCH_BURST_MIN);
	jw_key(&w, "ok");
	if (b->fio_state == BENCH_FIO_OK)
		jw_bool(&w, rb >= BENCH_BURST_MIN);
	else
		jw_null(&w);
	jw_obj_end(&w);
out_end:
	jw_obj_end(&w);
	jw_done(&w);
}

void bench_report(const struct bench *b, int json)
{
	if (!json && b->mode == BENCH_MODE_WRITERS)
		report_writers(b);
	else if (json)
		report_json(b);
	else
		report_text(b);
}
