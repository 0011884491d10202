/*
 * notify.h - readiness notification to systemd (Type=notify), without
 * libsystemd.
 *
 * sd_notify(3)'s protocol is a documented, stable interface: one datagram
 * of "KEY=VALUE\n" lines to the AF_UNIX socket named by $NOTIFY_SOCKET (a
 * path, or "@name" for the abstract namespace).  systemd's own
 * documentation invites reimplementing it; doing so here keeps ckptd's
 * dependencies to what it already has.
 */
#ifndef CKPTD_NOTIFY_H
#define CKPTD_NOTIFY_H

/*
 * Send state ("READY=1", "STOPPING=1", "STATUS=...") to the service manager.
 * 0 when sent or when $NOTIFY_SOCKET is unset (not under systemd); -errno
 * otherwise.  The caller decides whether a failure matters (it never does
 * for ckptd: it logs and carries on).
 */
int notify_send(const char *state);

#endif
