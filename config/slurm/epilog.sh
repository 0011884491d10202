#!/bin/bash
# epilog.sh - ckpt's Slurm epilog (slurm.conf: Epilog=/path/to/epilog.sh;
# runs as root on each node after the job ends, before the node is given
# to the next job).
#
# Like SCR's scavenge: waits (at most CKPT_EPILOG_TIMEOUT s) until the job's
# newest committed version is DRAINED to the parallel file system, so that
# it survives the node.  What it could not drain is logged (syslog, tag
# ckpt-slurm, and CKPT_SLURM_LOG) with the version's state and level.  With
# CKPT_EPILOG_STRICT=yes that also fails the epilog (Slurm drains the node);
# by default the node is released anyway.
set -u
ME=epilog
. "$(dirname "$0")/ckpt-slurm-common.sh"

PY=/usr/bin/python3
job=$(ckpt_job) || exit 0     # logged; nothing of it can be here

fail() {
	log err "$*"
	[ "$CKPT_EPILOG_STRICT" = yes ] && exit 1
	exit 0
}

if ! out=$(ctl --json ls "$job" 2>&1); then
	case $out in
	*"no such job"*) log info "no checkpoints of job $job on this node"; exit 0 ;;
	esac
	fail "cannot list job $job: $out"
fi
# The newest committed version: the highest seq of those sealed or still
# sealing (committed a moment ago, becoming durable).
newest=$($PY -c '
import json, sys
vs = [v for v in json.load(sys.stdin)["versions"]
      if v["state"] in ("sealed", "sealing")]
if vs:
    v = max(vs, key=lambda v: v["seq"])
    # the level, then the name as it is (any bytes but "/": spaces and
    # newlines too), then a mark that $(...) does not strip
    sys.stdout.write(v["level"] + "\n" + v["version"] + "x")
' <<<"$out") || fail "cannot read the listing of $job"
if [ -z "$newest" ]; then
	log info "job $job has no committed version on this node"
	exit 0
fi
level=${newest%%$'\n'*}
ver=${newest#*$'\n'}
ver=${ver%x}
if [ "$level" = drained ]; then
	log info "$job/$ver is already drained"
	exit 0
fi
if ! err=$(ctl wait "$job" "$ver" drained --timeout "$CKPT_EPILOG_TIMEOUT" 2>&1); then
	case $err in
	*"not supported"*)      # ckptd has no [drain] target
		fail "$job/$ver cannot drain: this node's ckptd has no drain target (it stays on this node's store)" ;;
	esac
	fail "$job/$ver did not drain within ${CKPT_EPILOG_TIMEOUT}s (it stays on this node's store): $err"
fi
log info "$job/$ver drained"
exit 0
