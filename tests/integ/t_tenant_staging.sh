#!/bin/bash
# t_tenant_staging: one uid cannot take the staging another uid needs, and
# a writer that gets none says so instead of blocking forever.
#  staging = 32M, staging_per_uid = 16M, staging_wait = 3 s.
#  - uid A asks CKPT_STAGING=10G and holds its lease (paused before commit):
#    it gets its share, 16 MiB, not all 32;
#  - uid B's writer meanwhile gets staging and commits at once;
#  - a second writer of uid A (A is at its share) waits, and after
#    staging_wait fails with "No buffer space available"; ckptd's log says
#    so and names uid A as the holder;
#  - released, A's first writer commits and verifies.
# Two uids are made with useradd and removed (userdel -r) in the cleanup.
# TIMEOUT: 90
set -u
. "$(dirname "$0")/lib.sh"
command -v useradd >/dev/null && command -v setpriv >/dev/null ||
	skip "needs useradd and setpriv"
[ "$(id -u)" = 0 ] || skip "needs root (useradd)"

UA=ckta$$ UB=cktb$$
test_users "$UA" "$UB"
chmod 755 "$T"
MB=$((1 << 20))

staging_used() {
	"$CKPTCTL" -s "$(sock d)" --json status | /usr/bin/python3 -c '
import json, sys; print(json.load(sys.stdin)["daemon"]["staging_used"])'
}

ckptd_conf d staging=32M staging_client=8M staging_per_uid=16M staging_wait=3 keep=100
start_ckptd d

# uid A, greedy, holding its lease.
mkfifo "$T/hold"; chmod 666 "$T/hold"
CKPT_STAGING=10G as "$UA" "$TW" write a/job v1 -s "$(sock d)" -n 1 -z $((2 * MB)) -S 1 -p \
	<"$T/hold" >"$T/a1.out" 2>"$T/a1.err" &
A1=$!
exec 9>"$T/hold"
poll_until 20 grep -q paused "$T/a1.out" || fail "uid A's writer did not write: $(cat "$T/a1.err")"
if has_ctl; then
	used=$(staging_used) || fail "ckptctl status failed"
	[ "$used" = $((16 * MB)) ] || fail "uid A holds $used bytes of staging, want its 16 MiB share"
fi

# uid B gets staging at once and commits.
as "$UB" timeout 20 "$TW" write b/job v1 -s "$(sock d)" -n 1 -z $((8 * MB)) -S 2 -w local \
	>"$T/b.out" 2>&1 || fail "uid B's writer failed while uid A held its share: $(cat "$T/b.out")"
tw d verify b/job v1 -n 1 -z $((8 * MB)) -S 2 || fail "uid B's version does not verify"

# A second writer of uid A waits for A's share, then gives up with ENOBUFS.
t0=$(now_ms)
CKPT_STAGING=10G as "$UA" timeout 20 "$TW" write a/job v2 -s "$(sock d)" -n 1 -z $MB -S 3 \
	>"$T/a2.out" 2>&1 9>&- && fail "uid A's second writer got staging beyond A's share"
ms=$(($(now_ms) - t0))
info "uid A's second writer failed after $ms ms: $(cat "$T/a2.out")"
grep -q "No buffer space available" "$T/a2.out" || fail "the error does not name the cause: $(cat "$T/a2.out")"
((ms >= 2500 && ms < 10000)) || fail "it waited $ms ms, want about staging_wait (3 s)"
grep -q "uid $(id -u "$UA") got none within staging_wait (3 s).*held by uid $(id -u "$UA"): 16 MiB" \
	"$T/d/ckptd.log" || fail "ckptd's log does not say who holds the staging"

exec 9>&-
wait "$A1" || fail "uid A's first writer failed: $(cat "$T/a1.err")"
tw d verify a/job v1 -n 1 -z $((2 * MB)) -S 1 || fail "uid A's version does not verify"
stop_ckptd d
info "a uid's share is 16 MiB of 32; the other uid wrote meanwhile; an over-share wait ended in ENOBUFS"
