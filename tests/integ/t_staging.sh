#!/bin/bash
# t_staging: staging = 16M, staging_client = 8M, so two leases fit.
#  - one writer of a 64 MiB file (8 times its lease: it must wait for the
#    disk, not fail) verifies; so does a random-order async one;
#  - four concurrent writers: two hold their leases (paused before commit),
#    the other two must wait for staging (ckptd says so, and they write
#    nothing meanwhile); released, all four finish and verify.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

JOB=stage/job
MB=$((1 << 20))
ckptd_conf d staging=16M staging_client=8M keep=100
start_ckptd d

# ---- backpressure: one file of 64 MiB through an 8 MiB lease -------------------
tw d write "$JOB" big -n 1 -z $((64 * MB)) -S 1 -w local || fail "64 MiB writer failed"
tw d verify "$JOB" big -n 1 -z $((64 * MB)) -S 1 || fail "64 MiB version does not verify"
tw d write "$JOB" big2 -n 1 -z $((40 * MB + 12345)) -S 2 -x async -R -w local ||
	fail "40 MiB async random writer failed"
tw d verify "$JOB" big2 -n 1 -z $((40 * MB + 12345)) -S 2 || fail "big2 does not verify"

# ---- four writers, two leases --------------------------------------------------
waits_before=$(grep -c 'staging: full' "$T/d/ckptd.log")
mkfifo "$T/hold"
pids=()
for r in 0 1; do
	tw d write "$JOB" "w$r" -n 2 -z $((6 * MB)) -S $((10 + r)) -p -w local \
		<"$T/hold" >"$T/w$r.out" 2>"$T/w$r.err" &
	pids+=($!)
done
exec 9>"$T/hold"
both_paused() { grep -q paused "$T/w0.out" && grep -q paused "$T/w1.out"; }
poll_until 30 both_paused || fail "the first two writers did not finish writing: $(cat "$T"/w[01].err)"

for r in 2 3; do
	tw d write "$JOB" "w$r" -n 2 -z $((6 * MB)) -S $((10 + r)) -w local \
		>"$T/w$r.out" 2>"$T/w$r.err" 9>&- &
	pids+=($!)
done
two_wait() { [ $(($(grep -c 'staging: full' "$T/d/ckptd.log") - waits_before)) -ge 2 ]; }
poll_until 30 two_wait || fail "ckptd did not make the third and fourth writer wait for staging"
# While they wait they have stored nothing, and the lent staging is 16 MiB.
for r in 2 3; do
	st=$(tw d stat "$JOB" "w$r") || fail "stat w$r failed"
	read -r _ _ _ _ stored _ <<<"$st"
	[ "$stored" = 0 ] || fail "w$r stored $stored bytes without a lease"
done
if has_ctl; then
	used=$(ctl d --json status | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
print(d["staging_used"], d["staging_total"])') || fail "ckptctl status failed"
	[ "$used" = "$((16 * MB)) $((16 * MB))" ] ||
		fail "staging used/total is '$used', want all 16 MiB lent"
fi

exec 9>&-                # release the first two
for i in 0 1 2 3; do
	wait "${pids[$i]}" || fail "writer $i failed: $(cat "$T/w$i.err")"
done
for r in 0 1 2 3; do
	tw d verify "$JOB" "w$r" -n 2 -z $((6 * MB)) -S $((10 + r)) || fail "w$r does not verify"
done
stop_ckptd d
info "backpressure through a small lease, and 4 writers sharing 2 leases: all verified"
