/*
 * ctl_wait.c - ckptctl wait: block until a version reaches a level.
 *
 * Without a terminal this is one ckpt_wait_name() call.  On a terminal the
 * wait is cut into slices of about 200 ms, and between slices the version is
 * stat'ed so that the progress line shows its state, level and the bytes
 * stored so far.  The result is the same either way.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctl.h"
#include "ctl_fmt.h"
#include "ctl_json.h"
#include "progress.h"

/*
 * Wait in short slices so that the terminal shows progress between them.
 * Returns the result of the last ckpt_wait_name().
 */
static int wait_loop(struct ckpt_client *c, const char *job,
		     const char *version, enum ckpt_level level, int timeout_ms)
{
	uint64_t deadline = 0, now;
	struct ckpt_version_info vi;
	struct progress p;
	char label[64], note[96];
	int slice, err;

	snprintf(label, sizeof(label), "wait %s", ckpt_level_name(level));
	progress_init(&p, label, 0);
	p.no_rate = 1; /* stored bytes climb in bursts; a rate would mislead */
	if (!progress_enabled(&p))
		return ckpt_wait_name(c, job, version, level, timeout_ms);
	if (timeout_ms >= 0)
		deadline = ctl_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		slice = 200;
		now = ctl_now_ns();
		if (deadline && deadline - now < 200000000u)
			slice = now >= deadline ? 0 : (int)((deadline - now) / 1000000u);
		err = ckpt_wait_name(c, job, version, level, slice);
		if (err != -ETIMEDOUT || (deadline && ctl_now_ns() >= deadline))
			break;
		if (ctl_stat_version(c, job, version, &vi))
			continue;
		/* What matters most goes first: the line may be cut. */
		snprintf(label, sizeof(label), "wait %s: %s/%s",
			 ckpt_level_name(level), ckpt_state_name(vi.state),
			 ckpt_level_name(vi.level));
		snprintf(note, sizeof(note), "%u/%u committed", vi.committed,
			 vi.writers);
		progress_label(&p, label);
		progress_total(&p, vi.bytes);
		progress_update(&p, vi.stored, note);
	}
	progress_done(&p);
	return err;
}

static void wait_json(const char *job, const char *version,
		      enum ckpt_level level, int err, uint64_t ns,
		      const struct ckpt_version_info *vi)
{
	struct jw w;

	jw_init(&w, stdout);
	jw_obj(&w);
	jw_kstr(&w, "job", job);
	jw_kstr(&w, "version", version);
	jw_kstr(&w, "level", ckpt_level_name(level));
	jw_kbool(&w, "reached", err == 0);
	jw_kdbl(&w, "elapsed_s", fmt_secs(ns));
	if (err) {
		jw_ki64(&w, "error_code", err);
		jw_kstr(&w, "error", ckpt_strerror(err));
	}
	if (vi) {
		jw_key(&w, "info");
		ctl_json_version(&w, vi);
	}
	jw_obj_end(&w);
	jw_done(&w);
}

int cmd_wait(struct ctl *ctl, int argc, char **argv)
{
	int timeout_ms = -1, err, have_vi;
	int rc = timeout_args(ctl, argc, argv, &timeout_ms);
	const char *job, *version;
	struct ckpt_version_info vi;
	enum ckpt_level level;
	uint64_t t0;

	if (rc >= 0)
		return rc;
	if (argc - optind != 3)
		return ctl_usage("wait: expected JOB VERSION LEVEL");
	job = argv[optind];
	version = argv[optind + 1];
	if (ckpt_level_parse(argv[optind + 2], &level) || level == CKPT_NONE)
		return ctl_usage("wait: unknown level '%s' (staged, local, protected, drained)",
				 argv[optind + 2]);
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;

	t0 = ctl_now_ns();
	err = wait_loop(ctl->c, job, version, level, timeout_ms);
	if (ctl->json) {
		have_vi = !ctl_stat_version(ctl->c, job, version, &vi);
		wait_json(job, version, level, err, ctl_now_ns() - t0,
			  have_vi ? &vi : NULL);
	} else if (!err) {
		printf("%s/%s reached %s\n", job, version, ckpt_level_name(level));
	}
	if (err == -ETIMEDOUT && !ctl_stat_version(ctl->c, job, version, &vi))
		return ctl_failx("wait %s/%s: timed out waiting for %s (now %s, level %s)",
				 job, version, ckpt_level_name(level),
				 ckpt_state_name(vi.state),
				 ckpt_level_name(vi.level));
	if (err)
		return ctl_fail(err, "wait %s/%s %s", job, version,
				ckpt_level_name(level));
	return CTL_EXIT_OK;
}
