/*
 * conn.c - ckptfs's connections to ckptd, replaced when they break.
 *
 * Two libckpt clients (see conn_i.h): W for the versions the mount writes
 * and R for everything else.  libckpt serialises the calls on one client,
 * so the split keeps listings and reads of committed versions from queueing
 * behind a writer that waits for staging.  A client whose connection broke
 * (ckptd restarted) fails every later call; the first call that sees a
 * connection error marks it dead, and the next conn_get() connects afresh.
 * Versions begun on a dead W connection are gone (ckptd aborts the versions
 * of a client that disconnects), so they are marked failed.  A connection is
 * disconnected when its last reference (the table's, a version's, or a call
 * in progress) is dropped.
 *
 * Staging.  A connection takes a staging lease only for a write or a read,
 * and gives it back once idle (conn_release_idle(), from the housekeeping
 * thread): W when no file of its versions is open and nothing was written
 * or read for FS_LEASE_IDLE seconds, R when no call is in progress and
 * nothing was read for as long (listings need no lease).  An idle
 * mount so holds no staging that writers elsewhere need.  Waiting for a
 * lease is done in slices of FS_LEASE_SLICE_MS, between which a FUSE
 * interrupt (the writing program got a signal) ends the wait with EINTR:
 * the kernel keeps a killed program in D state until its request is
 * answered.
 *
 * Layer: the bottom one (conn_i.h), with srv.c and log.c.  It calls only
 * libckpt, libfuse and log.c; what it must ask of the versions (a W
 * connection was lost; is a file of a version begun on it open) goes
 * through fs->conn_ops, which the namespace provides (vers.c,
 * ver_conn_ops) and ckptfs.c stores at setup.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "conn_i.h"

#define FS_LEASE_IDLE     2      /* seconds */
#define FS_LEASE_SLICE_MS 100

static int is_conn_error(int ret)
{
	switch (-ret) {
	case EPIPE:
	case ECONNRESET:
	case ECONNREFUSED:
	case ENOTCONN:
	case ECONNABORTED:
	case ESHUTDOWN:
	case CKPT_EBADMAGIC:
	case CKPT_EVERSION:
	case CKPT_EPROTO:
		return 1;
	}
	return 0;
}

static void conn_free(struct fs_conn *conn)
{
	ckpt_disconnect(conn->c);
	free(conn);
}

/* Connect a new client of kind and make it current.  connect_mu held. */
static int conn_open(struct ckptfs *fs, enum fs_conn_kind kind)
{
	struct fs_conn *conn, *old;
	time_t now = time(NULL);
	int ret;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -ENOMEM;
	ret = ckpt_connect(fs->socket, &conn->c);
	if (ret < 0) {
		if (now - fs->conn_warned >= 10) {
			fs_log(FUSE_LOG_ERR, "connect to ckptd at %s: %s",
			       fs->socket, ckpt_strerror(ret));
			fs->conn_warned = now;
		}
		free(conn);
		return ret;
	}
	conn->kind = kind;
	conn->refs = 1;
	pthread_mutex_lock(&fs->mu);
	old = fs->conn[kind];
	fs->conn[kind] = conn;
	if (old && --old->refs > 0)
		old = NULL;
	pthread_mutex_unlock(&fs->mu);
	if (old)
		conn_free(old);
	if (fs->conn_warned) {
		fs_log(FUSE_LOG_NOTICE, "connected to ckptd at %s again",
		       fs->socket);
		fs->conn_warned = 0;
	}
	return 0;
}

int conn_get(struct ckptfs *fs, enum fs_conn_kind kind, struct fs_conn **out)
{
	struct fs_conn *conn;
	int ret = 0;

	pthread_mutex_lock(&fs->connect_mu);
	pthread_mutex_lock(&fs->mu);
	conn = fs->conn[kind];
	if (!conn || conn->dead) {
		pthread_mutex_unlock(&fs->mu);
		ret = conn_open(fs, kind);
		pthread_mutex_lock(&fs->mu);
		conn = fs->conn[kind];
	}
	if (ret == 0)
		conn->refs++;
	pthread_mutex_unlock(&fs->mu);
	pthread_mutex_unlock(&fs->connect_mu);
	if (ret == 0)
		*out = conn;
	return ret;
}

/* Mark conn dead; fs->mu held.  The table's reference is dropped here, so
 * the caller's reference is never the last one. */
static void conn_kill_locked(struct ckptfs *fs, struct fs_conn *conn)
{
	if (conn->dead)
		return;
	conn->dead = 1;
	fs_log(FUSE_LOG_ERR, "lost the connection to ckptd at %s",
	       fs->socket);
	if (conn->kind == CONN_W && fs->conn_ops)
		fs->conn_ops->lost_locked(fs, conn);
	if (fs->conn[conn->kind] == conn) {
		fs->conn[conn->kind] = NULL;
		conn->refs--;
	}
}

int conn_check(struct ckptfs *fs, struct fs_conn *conn, int ret)
{
	if (ret < 0 && is_conn_error(ret)) {
		pthread_mutex_lock(&fs->mu);
		conn_kill_locked(fs, conn);
		pthread_mutex_unlock(&fs->mu);
	}
	return ret;
}

void conn_put(struct ckptfs *fs, struct fs_conn *conn, int ret)
{
	int last;

	if (!conn)
		return;
	pthread_mutex_lock(&fs->mu);
	if (ret < 0 && is_conn_error(ret))
		conn_kill_locked(fs, conn);
	last = --conn->refs == 0;
	pthread_mutex_unlock(&fs->mu);
	if (last)
		conn_free(conn);
}

int conn_again(struct ckptfs *fs, struct fs_conn *conn, int ret, int *tries)
{
	conn_put(fs, conn, ret);
	return ret < 0 && is_conn_error(ret) && (*tries)++ == 0;
}

void conn_close_all(struct ckptfs *fs)
{
	struct fs_conn *conn;
	int k;

	for (k = 0; k < CONN_NKINDS; k++) {
		pthread_mutex_lock(&fs->mu);
		conn = fs->conn[k];
		fs->conn[k] = NULL;
		pthread_mutex_unlock(&fs->mu);
		conn_put(fs, conn, 0);
	}
}

int conn_lease(struct ckptfs *fs, struct fs_conn *conn)
{
	int ret;

	pthread_mutex_lock(&fs->mu);
	conn->used = fs_now_sec();
	pthread_mutex_unlock(&fs->mu);
	for (;;) {
		ret = ckpt_staging_timed(conn->c, FS_LEASE_SLICE_MS, NULL);
		if (ret != -ETIMEDOUT)
			return conn_check(fs, conn, ret);
		if (fuse_interrupted())
			return -EINTR;
	}
}

/* Is conn (current, fs->mu held) idle long enough to give its lease back?
 * W: and no file of a version begun on it is open. */
static int idle_locked(struct ckptfs *fs, struct fs_conn *conn, time_t now)
{
	if (conn->dead || now - conn->used < FS_LEASE_IDLE)
		return 0;
	if (conn->kind == CONN_R)
		return conn->refs == 1;         /* the table's: no call */
	return !fs->conn_ops || !fs->conn_ops->busy_locked(fs, conn);
}

void conn_release_idle(struct ckptfs *fs)
{
	struct fs_conn *conn;
	time_t now = fs_now_sec();
	int k, ret;

	for (k = 0; k < CONN_NKINDS; k++) {
		pthread_mutex_lock(&fs->mu);
		conn = fs->conn[k];
		if (conn && idle_locked(fs, conn, now))
			conn->refs++;
		else
			conn = NULL;
		pthread_mutex_unlock(&fs->mu);
		if (!conn)
			continue;
		/* A write that starts meanwhile just takes a lease again. */
		ret = ckpt_staging_release(conn->c);
		if (ret < 0 && ret != -EBUSY)
			fs_log(FUSE_LOG_WARNING, "giving back staging: %s",
			       ckpt_strerror(ret));
		conn_put(fs, conn, ret);
	}
}
