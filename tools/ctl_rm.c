/*
 * ctl_rm.c - ckptctl rm: remove a version, or its next copy (the local one
 * of a drained version first, then the PFS one), waiting while the version
 * is busy for a moment, and say which copy went.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_json.h"

/*
 * Which copy `rm` removed, from the version's copies before and whether it
 * is still listed after: ckptd drops a drained version's local copy first
 * (or its quarantined one) and keeps it listed on the PFS; a second rm
 * removes the PFS copy.
 */
enum rm_kind { RM_UNKNOWN, RM_LOCAL_KEEP_PFS, RM_QUARANTINE, RM_PFS, RM_LOCAL,
	       RM_BOTH, RM_PART_LOCAL };

static enum rm_kind rm_kind(const struct ckpt_version_info *before, int had,
			    int still)
{
	if (!had)
		return RM_UNKNOWN;
	/* A part: the version stays listed by its other parts, and whether
	 * this one left the PFS too (a second rm of a part not published)
	 * is the daemon's to say (its log). */
	if (still && before->nparts > 1)
		return RM_PART_LOCAL;
	if (still)
		return (before->copies & CKPT_COPY_LOCAL) ? RM_LOCAL_KEEP_PFS
							  : RM_QUARANTINE;
	if ((before->copies & CKPT_COPY_PFS) &&
	    !(before->copies & CKPT_COPY_LOCAL))
		return RM_PFS;
	/* A part of a version not published, rm'd again (CKPT_EUNPUBLISHED) */
	if (before->copies & CKPT_COPY_PFS)
		return RM_BOTH;
	return RM_LOCAL;
}

static const char *const rm_text[] = {
	[RM_UNKNOWN] = "",
	[RM_LOCAL_KEEP_PFS] = ": local copy removed; the PFS copy stays (rm again to remove it)",
	[RM_QUARANTINE] = ": quarantined local copy removed; the PFS copy stays",
	[RM_PFS] = ": removed from the PFS",
	[RM_LOCAL] = ": local copy removed",
	[RM_BOTH] = ": removed locally and from the PFS",
	[RM_PART_LOCAL] = ": this node's part removed from the local store (the version's other parts stay listed)",
};

static const char *const rm_json[] = {
	[RM_UNKNOWN] = NULL, [RM_LOCAL_KEEP_PFS] = "local",
	[RM_QUARANTINE] = "quarantine", [RM_PFS] = "pfs", [RM_LOCAL] = "local",
	[RM_BOTH] = "both", [RM_PART_LOCAL] = "part",
};

/* How long rm waits by default for a busy version (sealing, protected or
 * drained right now): a drain of a large version takes minutes. */
#define RM_TIMEOUT_MS (300 * 1000)

/* remove_when_idle(): the version was removed while rm waited. */
#define RM_GONE 1

/*
 * A writer holds this node's part of v open: what ckptd refuses as busy
 * until the writer commits or aborts.  In a cluster state is the whole
 * version's (open until every part is sealed) while writers and committed
 * are this node's part's, so a part sealed here and busy for a moment
 * (its drain copy running) is waited for like any busy version.
 */
static int held(const struct ckpt_version_info *v)
{
	return v->state == CKPT_ST_OPEN && v->writers != v->committed;
}

/*
 * ckpt_remove_if() of the version as rm first found it, again while ckptd
 * answers -EBUSY (the version is being sealed, protected or drained, or
 * another rm runs) until timeout_ms has passed (0: one try).  ckptd removes
 * nothing once the version is not the one rm found (-CKPT_ECHANGED): it
 * was written again under its name, or lost the local or quarantined copy
 * rm would have removed (another rm, retention's eviction), and the next
 * rm would take the PFS copy, which nobody asked for.  A version whose
 * part on this node is open with a writer in it is tried once: the writer
 * may hold it for ever (held()).  *first gets the version as
 * first found, *before as it was just before the last try, and *had
 * whether it was listed then.  Returns the last try's result, or RM_GONE.
 */
static int remove_when_idle(struct ckpt_client *c, const char *job,
			    const char *version, int timeout_ms,
			    struct ckpt_version_info *first,
			    struct ckpt_version_info *before, int *had)
{
	uint64_t deadline = ctl_now_ns() + (uint64_t)timeout_ms * 1000000u;
	uint64_t pause_ns = 20000000u, now;
	struct timespec ts;
	int err, tries = 0;

	for (;;) {
		err = ctl_stat_version(c, job, version, before);
		*had = !err;
		if (!tries)
			*first = *before;
		/* Not listed at first: ckptd's REMOVE says why (no such
		 * version, no access).  Later: removed meanwhile, or the
		 * connection failed. */
		if (err && tries)
			return err == -CKPT_ENOVERSION || err == -CKPT_ENOJOB ?
				RM_GONE : err;
		if (err)
			return ckpt_remove(c, job, version);
		err = ckpt_remove_if(c, first);
		now = ctl_now_ns();
		if (err != -EBUSY || now >= deadline || held(first))
			return err;
		if (!tries++ && isatty(STDERR_FILENO))
			fprintf(stderr, "ckptctl: rm %s/%s: busy (being sealed, protected or drained); waiting up to %g s\n",
				job, version, timeout_ms / 1000.0);
		if (pause_ns > deadline - now)
			pause_ns = deadline - now;
		ts.tv_sec = (time_t)(pause_ns / 1000000000u);
		ts.tv_nsec = (long)(pause_ns % 1000000000u);
		nanosleep(&ts, NULL);
		if (pause_ns < 500000000u)
			pause_ns *= 2;
	}
}

int cmd_rm(struct ctl *ctl, int argc, char **argv)
{
	struct ckpt_version_info first = { 0 }, before = { 0 }, after;
	int timeout_ms = RM_TIMEOUT_MS, err, had;
	int rc = timeout_args(ctl, argc, argv, &timeout_ms);
	const char *job, *version;
	enum rm_kind k;
	struct jw w;

	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return ctl_usage("rm: expected JOB VERSION");
	job = argv[optind];
	version = argv[optind + 1];
	if (ctl_connect(ctl))
		return CTL_EXIT_FAIL;
	err = remove_when_idle(ctl->c, job, version, timeout_ms, &first,
			       &before, &had);
	if (err == -CKPT_ECHANGED)
		return ctl_failx("rm %s/%s: nothing removed: since rm looked at it, the version changed (written again, another rm removed a copy or was refused, retention); see ckptctl ls, and rm again",
				 job, version);
	if (err == RM_GONE)
		return ctl_failx("rm %s/%s: nothing removed: it was removed while rm waited",
				 job, version);
	if (err == -EBUSY && had && held(&first))
		return ctl_fail(err, "rm %s/%s: open, a writer still holds it (commit or abort it first)",
				job, version);
	if (err == -EBUSY && had && timeout_ms)
		return ctl_fail(err, "rm %s/%s: still busy after %g s (being sealed, protected or drained)",
				job, version, timeout_ms / 1000.0);
	if (err)
		return ctl_fail(err, "rm %s/%s", job, version);
	k = rm_kind(&before, had,
		    !ctl_stat_version(ctl->c, job, version, &after));
	if (!ctl->json) {
		printf("removed %s/%s%s\n", job, version, rm_text[k]);
		return CTL_EXIT_OK;
	}
	jw_init(&w, stdout);
	jw_obj(&w);
	jw_kstr(&w, "job", job);
	jw_kstr(&w, "version", version);
	jw_kbool(&w, "removed", 1);
	if (rm_json[k])
		jw_kstr(&w, "copy", rm_json[k]);
	jw_obj_end(&w);
	jw_done(&w);
	return CTL_EXIT_OK;
}
