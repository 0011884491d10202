#!/bin/bash
# prolog.sh - ckpt's Slurm prolog (slurm.conf: Prolog=/path/to/prolog.sh;
# runs as root on each node before the job starts).
#
# Checks that ckptd answers on this node (waiting up to
# CKPT_PROLOG_TIMEOUT s while it starts) and that the job's namespace exists:
# with a ckptfs mount (CKPT_MOUNT), the directory CKPT_MOUNT/<job> is made
# and given to the job's user.  Exit 0 to let the job start; non-zero makes
# Slurm requeue the job and drain the node, which is right when the node
# cannot take checkpoints.
set -u
ME=prolog
. "$(dirname "$0")/ckpt-slurm-common.sh"

job=$(ckpt_job)
deadline=$(($(now_s) + CKPT_PROLOG_TIMEOUT))
until ctl status >/dev/null 2>"${TMPDIR:-/tmp}/ckpt-prolog.$$"; do
	if [ "$(now_s)" -ge "$deadline" ]; then
		log err "ckptd does not answer after ${CKPT_PROLOG_TIMEOUT}s: $(cat "${TMPDIR:-/tmp}/ckpt-prolog.$$")"
		rm -f "${TMPDIR:-/tmp}/ckpt-prolog.$$"
		exit 1
	fi
	# ckptd is starting: ask again (a prolog may wait; it is not a test)
	sleep 1
done
rm -f "${TMPDIR:-/tmp}/ckpt-prolog.$$"

if [ -n "$CKPT_MOUNT" ]; then
	if ! awk -v m="$CKPT_MOUNT" '$2 == m && $3 == "fuse.ckptfs" { f = 1 } END { exit !f }' /proc/mounts; then
		log err "$CKPT_MOUNT is not a ckptfs mount"
		exit 1
	fi
	if ! mkdir -p "$CKPT_MOUNT/$job" 2>/dev/null; then
		log err "cannot make the job's directory $CKPT_MOUNT/$job"
		exit 1
	fi
	if [ -n "${SLURM_JOB_UID:-}" ] && [ "$SLURM_JOB_UID" != 0 ]; then
		chown "$SLURM_JOB_UID:${SLURM_JOB_GID:-$SLURM_JOB_UID}" "$CKPT_MOUNT/$job" 2>/dev/null ||
			log warning "cannot give $CKPT_MOUNT/$job to uid $SLURM_JOB_UID"
	fi
fi
log info "ckptd up; job namespace $job ready${CKPT_MOUNT:+ at $CKPT_MOUNT/$job}"
exit 0
