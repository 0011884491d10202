#!/bin/bash
# t_slurm: the Slurm prolog and epilog (config/slurm/) under a real
# single-node Slurm: munged, slurmctld and slurmd from Debian's slurm-wlm and
# munge, each private to the test (its own key, socket, ports, spool and
# state under $T).  A batch job writes a checkpoint through the ckptfs mount;
# the prolog made the job's directory, and the epilog waits until the
# version is DRAINED before the job leaves COMPLETING.  Skips, naming what is
# missing, where Slurm or munge is not installed or cannot run here.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

for b in munged mungekey slurmctld slurmd sbatch squeue scontrol; do
	command -v $b >/dev/null ||
		skip "$b is not installed (Debian packages slurm-wlm and munge)"
done
need_fuse
has_ctl || skip "ckptctl is not built"

S=$T/slurm
mkdir -p "$S/state" "$S/spool" "$S/munge"
chmod 700 "$S/munge"
HOST=$(hostname -s)

# free_port: a TCP port nobody listens on (the kernel picks it).
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- munge ---------------------------------------------------------------------
mungekey -c -k "$S/munge/munge.key" 2>"$S/mungekey.err" ||
	skip "mungekey cannot make a key: $(cat "$S/mungekey.err")"
munged -F --force --socket="$S/munge/munge.sock" --key-file="$S/munge/munge.key" \
	--pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
	--seed-file="$S/munge/munged.seed" >"$S/munged.out" 2>&1 9>&- &
MUNGED=$!
poll_until 10 test -S "$S/munge/munge.sock" ||
	skip "munged does not start here: $(cat "$S/munged.out" "$S/munge/munged.log" 2>/dev/null | tail -3)"

# ---- ckptd, drain and mount ------------------------------------------------------
PFS=$T/pfs
drain_conf d
start_ckptd d
M=$T/ckpt
mount_ckptfs d "$M"

cat >"$S/ckpt-slurm.conf" <<CONF
CKPTCTL=$CKPTCTL
CKPTD_CONF=$T/d/ckptd.conf
CKPT_MOUNT=$M
CKPT_JOB_FORMAT='slurm-\${SLURM_JOB_ID}'
CKPT_PROLOG_TIMEOUT=10
CKPT_EPILOG_TIMEOUT=30
CKPT_EPILOG_STRICT=yes
CKPT_SLURM_LOG=$S/ckpt-slurm.log
CONF
# Slurm runs the prolog and epilog with an environment of its own: the
# settings reach them through these wrappers.
for s in prolog epilog; do
	printf '#!/bin/sh\nCKPT_SLURM_CONF=%s exec %s "$@"\n' "$S/ckpt-slurm.conf" \
		"$ROOT/config/slurm/$s.sh" >"$S/$s"
	chmod 755 "$S/$s"
done

CPORT=$(free_port)
DPORT=$(free_port)
cat >"$S/slurm.conf" <<CONF
ClusterName=ckpttest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CPORT
SlurmdPort=$DPORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
Prolog=$S/prolog
Epilog=$S/epilog
PrologFlags=Alloc
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=ckpt Nodes=$HOST Default=YES MaxTime=5 State=UP
CONF
export SLURM_CONF=$S/slurm.conf

slurmctld -D -i -f "$S/slurm.conf" >"$S/slurmctld.out" 2>&1 9>&- &
CTLD=$!
slurmd -D -f "$S/slurm.conf" -N "$HOST" >"$S/slurmd.out" 2>&1 9>&- &
SLURMD=$!

slurm_logs() { tail -n 8 "$S"/slurmctld.log "$S"/slurmd.log "$S"/*.out 2>/dev/null; }
node_idle() {
	alive "$CTLD" || return 2
	alive "$SLURMD" || return 2
	timeout 5 scontrol show node "$HOST" 2>/dev/null | grep -q 'State=IDLE'
}
if ! poll_until 30 node_idle; then
	alive "$CTLD" && alive "$SLURMD" && fail "the node never became idle: $(slurm_logs)"
	skip "slurmctld or slurmd cannot run here: $(slurm_logs | grep -iE 'error|fatal' | head -3)"
fi

# ---- a batch job writes a checkpoint through the mount ---------------------------
cat >"$S/job.sh" <<JOB
#!/bin/bash
set -e
d=$M/slurm-\$SLURM_JOB_ID
[ -d "\$d" ] || { echo "no job directory \$d" >&2; exit 1; }
mkdir "\$d/step-1.tmp"
head -c 3000000 /dev/urandom >"\$d/step-1.tmp/model.bin"
sha256sum <"\$d/step-1.tmp/model.bin" >$S/job.sum
mv "\$d/step-1.tmp" "\$d/step-1"
echo written
JOB
# epilog_waiting JOB VER: the epilog's `ckptctl wait JOB VER drained` runs.
epilog_waiting() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "ckptctl .*wait $1 $2 drained" && return 0
	done
	return 1
}
job_gone() { [ -z "$(timeout 5 squeue -h -j "$1" 2>/dev/null)" ]; }

# submit: run job.sh as a batch job; print its id.
submit() {
	local out
	out=$(timeout 10 sbatch --parsable -o "$S/job.out" -e "$S/job.err" "$S/job.sh") ||
		fail "sbatch failed: $out"
	echo "${out%%;*}"
}

# 1. The drain is paused while the job runs: the epilog must wait for it.
ctl d drain --pause >/dev/null || fail "ckptctl drain --pause"
jobid=$(submit)
JOB=slurm-$jobid
info "batch job $jobid"
poll_until 60 epilog_waiting "$JOB" step-1 ||
	fail "the epilog never waited for $JOB/step-1: $(cat "$S/job.out" "$S/job.err" "$S/ckpt-slurm.log" 2>/dev/null; squeue; slurm_logs)"
grep -q written "$S/job.out" || fail "the job did not write: $(cat "$S/job.out" "$S/job.err" 2>/dev/null)"
[ "$(vlevel d "$JOB" step-1)" = local ] || fail "$JOB/step-1 is $(vlevel d "$JOB" step-1) while paused"
[ -n "$(timeout 5 squeue -h -j "$jobid" -o %t)" ] || fail "job $jobid left before its epilog finished"
ctl d drain --resume >/dev/null || fail "ckptctl drain --resume"
poll_until 60 job_gone "$jobid" || fail "job $jobid still completing: $(squeue; slurm_logs)"
grep -q "prolog job $jobid: info: ckptd up; job namespace $JOB ready" "$S/ckpt-slurm.log" ||
	fail "no prolog line: $(cat "$S/ckpt-slurm.log")"
grep -q "epilog job $jobid: info: $JOB/step-1 drained" "$S/ckpt-slurm.log" ||
	fail "the epilog did not drain $JOB/step-1: $(cat "$S/ckpt-slurm.log")"
[ "$(vlevel d "$JOB" step-1)" = drained ] || fail "$JOB/step-1 is $(vlevel d "$JOB" step-1)"
[ "$(sha256sum <"$(pfs_vdir "$JOB" step-1)/files/model.bin")" = "$(cat "$S/job.sum")" ] ||
	fail "the drained copy differs from what the job wrote"
info "prolog made $JOB; the epilog held the node until $JOB/step-1 drained"

# 2. A drain that does not finish in CKPT_EPILOG_TIMEOUT: logged, and (not
# strict) the node is released anyway.
sed -i 's/^CKPT_EPILOG_TIMEOUT=.*/CKPT_EPILOG_TIMEOUT=1/; s/^CKPT_EPILOG_STRICT=.*/CKPT_EPILOG_STRICT=no/' \
	"$S/ckpt-slurm.conf"
ctl d drain --pause >/dev/null || fail "ckptctl drain --pause"
jobid=$(submit)
JOB=slurm-$jobid
poll_until 60 job_gone "$jobid" || fail "job $jobid still completing: $(squeue; slurm_logs)"
grep -q "epilog job $jobid: err: $JOB/step-1 did not drain within 1s" "$S/ckpt-slurm.log" ||
	fail "no 'did not drain' line: $(cat "$S/ckpt-slurm.log")"
[ "$(vlevel d "$JOB" step-1)" = local ] || fail "$JOB/step-1 is $(vlevel d "$JOB" step-1)"
timeout 5 scontrol show node "$HOST" | grep -q 'State=IDLE' ||
	fail "the node is not idle after a lenient epilog: $(scontrol show node "$HOST")"
ctl d drain --resume >/dev/null || fail "ckptctl drain --resume"
info "an undrained version is logged and the node released"

# slurmstepd leaves the test's process group: let every step end (its
# socket in the spool goes away) before slurmd does.
no_steps() { ! compgen -G "$S/spool/${HOST}_*" >/dev/null; }
poll_until 20 no_steps || fail "job steps still running: $(ls "$S/spool")"
kill -TERM "$SLURMD" "$CTLD" "$MUNGED" 2>/dev/null
for p in "$SLURMD" "$CTLD" "$MUNGED"; do
	poll_until 15 dead "$p" || kill -KILL "$p" 2>/dev/null
done
umount_ckptfs "$M"
finish
