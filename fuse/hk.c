/*
 * hk.c - the housekeeping thread: autocommit, versions changed behind the
 * mount's back, and failed versions.
 *
 * Once a second it
 *   - drops from the table the failed versions no open file holds (ckptd
 *     hides failed versions; the mount showed them until then so that the
 *     program writing them got their error, not ENOENT);
 *   - with -o autocommit=SECONDS, commits each version that has no open
 *     file and saw no activity for that long, and logs it;
 *   - asks ckptd about each version the mount holds open, and follows what
 *     happened to it elsewhere (a commit by name, a removal);
 *   - gives back the staging leases of idle connections (conn.c).
 *
 * Layer: the operations (ops_i.h), though no FUSE request drives it: a
 * thread started and stopped by ckptfs.c that acts on the namespace (vers.c)
 * and the connections (srv.c, conn.c) between requests.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "ops_i.h"

/* Drop failed versions no handle holds; fs->mu held.  Returns one whose
 * table reference the caller must put (after unlocking), or NULL. */
static struct fs_version *hk_reap_locked(struct ckptfs *fs)
{
	struct fs_version *ver;
	struct fs_link *pos;

	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		ver = fs_entry(pos, struct fs_version, link);
		if (ver->state == V_FAILED && ver->nopen == 0) {
			ver_unlink_locked(ver);
			return ver;
		}
	}
	return NULL;
}

/* A held version idle long enough, with a reference, or NULL; fs->mu. */
static struct fs_version *hk_idle_locked(struct ckptfs *fs)
{
	time_t now = fs_now_sec();
	struct fs_version *ver;
	struct fs_link *pos;

	if (!fs->autocommit)
		return NULL;
	for (pos = fs->versions.next; pos != &fs->versions; pos = pos->next) {
		ver = fs_entry(pos, struct fs_version, link);
		/* One with a file cut short waits for it to be removed or
		 * rewritten (each of those is a touch). */
		if (ver->state == V_OPEN && ver->nopen == 0 &&
		    now - ver->idle_since >= (time_t)fs->autocommit &&
		    !ver_cut_short_locked(ver, NULL, 0)) {
			ver->refs++;
			return ver;
		}
	}
	return NULL;
}

/*
 * Versions this mount holds open may change in ckptd behind its back:
 * `ckptctl commit` seals one by name, `ckptctl rm` removes one.  Ask ckptd
 * about each once a second and follow: a sealed one is committed here too
 * (our ckpt_commit() after a commit by name succeeds), a gone or failed one
 * fails.
 */
static void hk_poll(struct ckptfs *fs)
{
	struct ckpt_version_info info;
	struct fs_version *held[64];
	struct fs_link *pos;
	int i, n = 0, ret;

	pthread_mutex_lock(&fs->mu);
	for (pos = fs->versions.next; pos != &fs->versions && n < 64;
	     pos = pos->next) {
		held[n] = fs_entry(pos, struct fs_version, link);
		if (held[n]->state == V_OPEN)
			held[n++]->refs++;
	}
	pthread_mutex_unlock(&fs->mu);
	for (i = 0; i < n; i++) {
		ret = srv_stat(fs, held[i]->job, held[i]->name, &info);
		if (ret == 0 && (info.state == CKPT_ST_SEALING ||
				 info.state == CKPT_ST_SEALED)) {
			ver_commit(fs, held[i], "committed by name in ckptd", 0);
		} else if (ret == -CKPT_ENOVERSION || ret == -CKPT_ENOJOB ||
			   (ret == 0 && info.state != CKPT_ST_OPEN)) {
			pthread_mutex_lock(&fs->mu);
			ver_fail_locked(held[i], ret == 0 && info.error < 0 ?
				    info.error : -CKPT_EABORTED);
			pthread_mutex_unlock(&fs->mu);
		}
		ver_put(fs, held[i]);
	}
}

static void *hk_main(void *arg)
{
	struct ckptfs *fs = arg;
	struct fs_version *ver;
	struct timespec ts;
	char why[64];

	snprintf(why, sizeof(why), "autocommit after %us idle", fs->autocommit);
	pthread_mutex_lock(&fs->mu);
	while (!fs->stopping) {
		ver = hk_reap_locked(fs);
		if (!ver && (ver = hk_idle_locked(fs))) {
			pthread_mutex_unlock(&fs->mu);
			ver_commit(fs, ver, why, 0);
		} else {
			pthread_mutex_unlock(&fs->mu);
		}
		if (ver) {
			ver_put(fs, ver);
			pthread_mutex_lock(&fs->mu);
			continue;
		}
		hk_poll(fs);
		conn_release_idle(fs);
		pthread_mutex_lock(&fs->mu);
		if (fs->stopping)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&fs->hk_cv, &fs->mu, &ts);
	}
	pthread_mutex_unlock(&fs->mu);
	return NULL;
}

int hk_start(struct ckptfs *fs)
{
	pthread_condattr_t attr;
	int ret;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&fs->hk_cv, &attr);
	pthread_condattr_destroy(&attr);
	ret = -pthread_create(&fs->hk_thread, NULL, hk_main, fs);
	if (ret == 0)
		fs->hk_started = 1;
	return ret;
}

void hk_stop(struct ckptfs *fs)
{
	pthread_mutex_lock(&fs->mu);
	fs->stopping = 1;
	pthread_cond_broadcast(&fs->hk_cv);
	pthread_mutex_unlock(&fs->mu);
	if (fs->hk_started)
		pthread_join(fs->hk_thread, NULL);
	fs->hk_started = 0;
}
