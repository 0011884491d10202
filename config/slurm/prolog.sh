#!/bin/bash
# prolog.sh - ckpt's Slurm prolog (slurm.conf: Prolog=/path/to/prolog.sh;
# runs as root on each node before the job starts).
#
# Checks that ckptd answers on this node (waiting up to
# CKPT_PROLOG_TIMEOUT s while it starts) and that the job's namespace exists:
# with a ckptfs mount (CKPT_MOUNT), the directory CKPT_MOUNT/<job> is made
# by the job's user (SLURM_JOB_UID), so that the job is that user's.  Exit 0
# to let the job start; non-zero makes Slurm requeue the job and drain the
# node, which is right when the node cannot take checkpoints.
set -u
ME=prolog
. "$(dirname "$0")/ckpt-slurm-common.sh"

job=$(ckpt_job) || exit 1
deadline=$(($(now_s) + CKPT_PROLOG_TIMEOUT))
# (stderr kept in a variable: a fixed name in /tmp, opened by root, is
# a file any user can plant a link at)
until err=$(ctl status 2>&1 >/dev/null); do
	if [ "$(now_s)" -ge "$deadline" ]; then
		log err "ckptd does not answer after ${CKPT_PROLOG_TIMEOUT}s: $err"
		exit 1
	fi
	# ckptd is starting: ask again (a prolog may wait; it is not a test)
	sleep 1
done

if [ -n "$CKPT_MOUNT" ]; then
	if ! awk -v m="$CKPT_MOUNT" '$2 == m && $3 == "fuse.ckptfs" { f = 1 } END { exit !f }' /proc/mounts; then
		log err "$CKPT_MOUNT is not a ckptfs mount"
		exit 1
	fi
	# Made as the job's user: a job belongs to the uid that makes it (a
	# chown of a job directory changes nothing in ckptfs), and root must
	# not follow a path the user may have laid links along.
	as_user=()
	uid=${SLURM_JOB_UID:-0}
	if [ "$uid" != 0 ]; then
		as_user=(setpriv --reuid="$uid" --regid="${SLURM_JOB_GID:-$uid}" --clear-groups)
	fi
	if ! err=$("${as_user[@]}" mkdir -p -- "$CKPT_MOUNT/$job" 2>&1); then
		log err "cannot make the job's directory $CKPT_MOUNT/$job as uid $uid: $err"
		exit 1
	fi
	owner=$(stat -c %u -- "$CKPT_MOUNT/$job" 2>/dev/null)
	[ "$owner" = "$uid" ] ||
		log warning "$CKPT_MOUNT/$job belongs to uid ${owner:-?}, not the job's uid $uid: the job cannot write there"
fi
log info "ckptd up; job namespace $job ready${CKPT_MOUNT:+ at $CKPT_MOUNT/$job}"
exit 0
