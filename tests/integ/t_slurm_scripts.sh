#!/bin/bash
# t_slurm_scripts: config/slurm/prolog.sh and epilog.sh run as slurmd runs
# them (root, SLURM_* in a bare environment), without Slurm itself, against
# a ckptd with a drain and a ckptfs mount (t_slurm runs them under a real
# Slurm, as root's job):
#  - the prolog makes the job's directory for the job's user (uid 65534),
#    who can then write and commit a checkpoint in it;
#  - the epilog waits for the newest version even when its name has spaces;
#  - a job name from a hostile SLURM_JOB_NAME ("x/../../escaped", with a
#    format that names it) is refused: nothing is made outside the mount;
#    one that leads through a link in the user's own version ("y/v/link")
#    does not give root's directory it points at to the user.
# TIMEOUT: 90
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"
[ "$(id -u)" = 0 ] || skip "needs root (the prolog runs as root)"
command -v setpriv >/dev/null || skip "setpriv is not installed"
N=65534
as_n() { setpriv --reuid=$N --regid=$N --clear-groups "$@"; }
as_n true 2>/dev/null || skip "setpriv cannot switch to uid $N"

chmod 755 "$T"                  # uid N must reach the mount
PFS=$T/pfs
drain_conf d
start_ckptd d
M=$T/ckpt
mount_ckptfs d "$M"

S=$T/slurm
mkdir -p "$S"
# slurm_conf FILE FORMAT: the scripts' settings, with CKPT_JOB_FORMAT.
slurm_conf() {
	cat >"$1" <<CONF
CKPTCTL=$CKPTCTL
CKPTD_CONF=$T/d/ckptd.conf
CKPT_MOUNT=$M
CKPT_JOB_FORMAT='$2'
CKPT_PROLOG_TIMEOUT=10
CKPT_EPILOG_TIMEOUT=30
CKPT_EPILOG_STRICT=yes
CKPT_SLURM_LOG=$S/ckpt-slurm.log
CONF
}
slurm_conf "$S/plain.conf" 'slurm-${SLURM_JOB_ID}'
slurm_conf "$S/named.conf" 'u-${SLURM_JOB_NAME}'
# run CONF prolog|epilog VAR=VALUE...: one script, as slurmd would.
run() {
	local conf=$1 s=$2
	shift 2
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CKPT_SLURM_CONF="$conf" "$@" \
		"$ROOT/config/slurm/$s.sh" 9>&-
}
slog() { cat "$S/ckpt-slurm.log" 2>/dev/null; }

# ---- the prolog makes the job's directory for the job's user ---------------------
ENV=(SLURM_JOB_ID=41 SLURM_JOB_UID=$N SLURM_JOB_GID=$N)
run "$S/plain.conf" prolog "${ENV[@]}" || fail "the prolog failed: $(slog)"
owner=$(stat -c %u "$M/slurm-41") || fail "the prolog made no $M/slurm-41: $(slog)"
[ "$owner" = $N ] || fail "the prolog made $M/slurm-41 for uid $owner, not the job's uid $N"
J=$M/slurm-41
as_n sh -c "mkdir '$J/step-1.tmp' && echo one >'$J/step-1.tmp/f' && mv '$J/step-1.tmp' '$J/step-1'" ||
	fail "uid $N cannot write a checkpoint in the directory the prolog made"
info "the prolog made slurm-41 for uid $N, who wrote step-1 in it"

# ---- the epilog waits for a version whose name has spaces ------------------------
as_n sh -c "mkdir '$J/step 2 b.tmp' && echo two >'$J/step 2 b.tmp/f' && mv '$J/step 2 b.tmp' '$J/step 2 b'" ||
	fail "uid $N cannot write 'step 2 b'"
wait_state d slurm-41 'step 2 b' sealed
run "$S/plain.conf" epilog "${ENV[@]}" || fail "the epilog failed: $(slog)"
# (drained while it ran, or before: either needs the name read whole)
grep -Eq "epilog job 41: info: slurm-41/step 2 b (drained|is already drained)" "$S/ckpt-slurm.log" ||
	fail "the epilog did not wait for 'step 2 b': $(slog)"
[ "$(vlevel d slurm-41 'step 2 b')" = drained ] || fail "'step 2 b' is $(vlevel d slurm-41 'step 2 b')"

# ---- a hostile job name ---------------------------------------------------------
run "$S/named.conf" prolog SLURM_JOB_ID=42 SLURM_JOB_UID=$N SLURM_JOB_GID=$N \
	SLURM_JOB_NAME='x/../../escaped' && fail "the prolog accepted the job name u-x/../../escaped"
[ ! -e "$T/escaped" ] || fail "the prolog made $T/escaped, outside the mount"
grep -q "not a valid ckpt job name" "$S/ckpt-slurm.log" || fail "no line about the job name: $(slog)"
run "$S/named.conf" epilog SLURM_JOB_ID=42 SLURM_JOB_NAME='x/../../escaped' ||
	fail "the epilog failed on a job name it cannot have: $(slog)"
# A link the user made in one of its versions, named by the job name: the
# prolog must not follow it as root (it chowned the target to the user).
mkdir "$T/victim"
chmod 755 "$T/victim"
as_n sh -c "mkdir -p '$M/u-y/v.tmp' && ln -s '$T/victim' '$M/u-y/v.tmp/link' && mv '$M/u-y/v.tmp' '$M/u-y/v'" ||
	fail "uid $N cannot make a link in its version"
run "$S/named.conf" prolog SLURM_JOB_ID=43 SLURM_JOB_UID=$N SLURM_JOB_GID=$N \
	SLURM_JOB_NAME='y/v/link'
[ "$(stat -c %u "$T/victim")" = 0 ] || fail "the prolog gave $T/victim to uid $(stat -c %u "$T/victim") through the user's link"

finish
