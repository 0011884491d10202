# ckpt-slurm-common.sh - what the ckpt Slurm prolog and epilog share
# (sourced).  Reads the settings (ckpt-slurm.conf), names the job, logs.
# shellcheck shell=bash

CKPT_SLURM_CONF=${CKPT_SLURM_CONF:-/etc/ckpt/slurm.conf}
CKPTCTL=/usr/local/bin/ckptctl
CKPTD_CONF=/etc/ckpt/ckptd.conf
CKPT_MOUNT=/ckpt
CKPT_JOB_FORMAT='slurm-${SLURM_JOB_ID}'
CKPT_PROLOG_TIMEOUT=30
CKPT_EPILOG_TIMEOUT=600
CKPT_EPILOG_STRICT=no
CKPT_SLURM_LOG=/var/log/ckpt-slurm.log
# shellcheck disable=SC1090
[ -r "$CKPT_SLURM_CONF" ] && . "$CKPT_SLURM_CONF"

ME=${ME:-ckpt-slurm}

# log LEVEL MESSAGE: to syslog and to $CKPT_SLURM_LOG.
log() {
	local level=$1
	shift
	logger -t ckpt-slurm -p "daemon.$level" -- "$ME job ${SLURM_JOB_ID:-?}: $*" 2>/dev/null
	[ -n "$CKPT_SLURM_LOG" ] &&
		echo "$(date '+%F %T') $ME job ${SLURM_JOB_ID:-?}: $level: $*" >>"$CKPT_SLURM_LOG" 2>/dev/null
	return 0
}

ctl() { "$CKPTCTL" -c "$CKPTD_CONF" "$@"; }

# The ckpt job name of this Slurm job; fails (logged) when CKPT_JOB_FORMAT
# gives a name ckptd would refuse.  A format may name what the user chose
# (SLURM_JOB_NAME), and the name becomes a path under CKPT_MOUNT, where the
# kernel resolves "." and ".." itself: "x/../../etc" must never get there.
ckpt_job() {
	local j
	eval "j=\"$CKPT_JOB_FORMAT\""
	case /$j/ in
	//|*//*|*/./*|*/../*)
		log err "not a valid ckpt job name (CKPT_JOB_FORMAT): '$j'"
		return 1 ;;
	esac
	printf '%s\n' "$j"
}

# now_s: seconds since the epoch.
now_s() { date +%s; }
