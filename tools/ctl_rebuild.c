/*
 * ctl_rebuild.c - ckptctl rebuild: rebuild this node's parts from the shards
 * its peers hold, and follow it to the end.
 *
 * ckpt_rebuild() starts the rebuild (or finds it running: a node whose
 * store is new starts one by itself); then the daemon's status is read
 * every 200 ms and the bar shows the bytes fetched of the bytes found.  The
 * result: the parts rebuilt, and those that are unrecoverable (exit 1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "ctl_fmt.h"
#include "ctl_json.h"
#include "progress.h"

static void rebuild_json(const struct ckpt_status *s, int err, uint64_t ns)
{
	struct jw w;

	jw_init(&w, stdout);
	jw_obj(&w);
	jw_kstr(&w, "node", s->node);
	jw_kstr(&w, "state", s->rebuild_state == CKPT_REBUILD_RUNNING ? "running"
		: s->rebuild_state == CKPT_REBUILD_DONE ? "done" : "none");
	jw_ku64(&w, "parts", s->rebuild_parts);
	jw_ku64(&w, "parts_done", s->rebuild_parts_done);
	jw_ku64(&w, "parts_lost", s->rebuild_parts_lost);
	jw_ku64(&w, "bytes", s->rebuild_bytes);
	jw_ku64(&w, "bytes_done", s->rebuild_bytes_done);
	jw_kstr(&w, "waiting_for", s->rebuild_waiting);
	jw_kdbl(&w, "elapsed_s", fmt_secs(ns));
	if (err) {
		jw_ki64(&w, "error_code", err);
		jw_kstr(&w, "error", ckpt_strerror(err));
	}
	jw_obj_end(&w);
	jw_done(&w);
}

/* Follow the rebuild until it is over or the deadline (0: none) passes. */
static int follow(struct ckpt_client *c, struct ckpt_status *s,
		  uint64_t deadline)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	struct progress p;
	char note[320];
	int err;

	progress_init(&p, "rebuild", 0);
	for (;;) {
		err = ckpt_status2(c, s, sizeof(*s));
		if (err < 0)
			break;
		err = 0;
		if (s->rebuild_state != CKPT_REBUILD_RUNNING)
			break;
		if (deadline && ctl_now_ns() >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		snprintf(note, sizeof(note), "%" PRIu32 "/%" PRIu32 " parts%s%s",
			 s->rebuild_parts_done, s->rebuild_parts,
			 s->rebuild_waiting[0] ? "; waiting for " : "",
			 s->rebuild_waiting);
		progress_total(&p, s->rebuild_bytes);
		progress_update(&p, s->rebuild_bytes_done, note);
		nanosleep(&ts, NULL);
	}
	progress_done(&p);
	return err;
}

int cmd_rebuild(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "no-wait", no_argument, NULL, 'n' },
		CTL_COMMON_OPTS,
		{ NULL, 0, NULL, 0 }
	};
	int opt, timeout_ms = -1, nowait = 0, err, rc;
	struct ckpt_status s;
	uint64_t t0, deadline = 0;
	char a[32];

	while ((opt = getopt_long(argc, argv, "t:nh", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			if (ctl_parse_timeout(optarg, &timeout_ms))
				return ctl_usage("rebuild: bad timeout '%s'", optarg);
			break;
		case 'n':
			nowait = 1;
			break;
		default:
			if ((rc = ctl_common_opt(ctl, opt, "rebuild")) >= 0)
				return rc;
		}
	}
	if (argc != optind)
		return ctl_usage("rebuild: takes no arguments");
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	t0 = ctl_now_ns();
	if (timeout_ms >= 0)
		deadline = t0 + (uint64_t)timeout_ms * 1000000u;
	err = ckpt_rebuild(ctl->c);
	if (err)
		return ctl_fail(err, "rebuild");
	memset(&s, 0, sizeof(s));
	if (nowait) {
		err = ckpt_status2(ctl->c, &s, sizeof(s));
		err = err < 0 ? err : 0;
	} else {
		err = follow(ctl->c, &s, deadline);
	}
	if (ctl->json)
		rebuild_json(&s, err, ctl_now_ns() - t0);
	if (err == -ETIMEDOUT)
		return ctl_failx("rebuild: still running after the timeout: %" PRIu32
				 " of %" PRIu32 " parts rebuilt%s%s", s.rebuild_parts_done,
				 s.rebuild_parts, s.rebuild_waiting[0] ?
				 ", waiting for " : "", s.rebuild_waiting);
	if (err)
		return ctl_fail(err, "rebuild");
	if (!ctl->json) {
		if (nowait)
			printf("rebuild started\n");
		else
			printf("rebuild done: %" PRIu32 " parts rebuilt (%s), %" PRIu32
			       " unrecoverable\n", s.rebuild_parts_done,
			       fmt_size(a, s.rebuild_bytes_done), s.rebuild_parts_lost);
	}
	if (!nowait && s.rebuild_parts_lost)
		return ctl_failx("rebuild: %" PRIu32 " parts are unrecoverable (see the ckptd log)",
				 s.rebuild_parts_lost);
	return CTL_EXIT_OK;
}
