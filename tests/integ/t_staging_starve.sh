#!/bin/bash
# t_staging_starve: two unprivileged uids, each asking CKPT_STAGING=10G on
# one idle connection, cannot take root's reserve: root (and so the ckptfs
# mounts) still gets a lease and commits.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"
UA=ck2a$$ UB=ck2b$$
test_users "$UA" "$UB"
chmod 755 "$T"
ckptd_conf d staging=32M staging_client=8M staging_wait=3
start_ckptd d
mkfifo "$T/hold"; chmod 666 "$T/hold"
for u in "$UA" "$UB"; do
	CKPT_STAGING=10G as "$u" "$TW" write "$u/j" v1 -s "$(sock d)" -n 1 -z 4096 -p \
		<"$T/hold" >"$T/$u.out" 2>&1 &
done
exec 9>"$T/hold"
poll_until 10 grep -q paused "$T/$UA.out" || fail "A"
poll_until 10 grep -q paused "$T/$UB.out" || fail "B"
timeout 20 "$TW" write r/j v1 -s "$(sock d)" -n 1 -z 4096 >"$T/r.out" 2>&1 9>&-
rc=$?
info "root's writer: rc $rc $(cat "$T/r.out")"
grep "staging:" "$T/d/ckptd.log" | tail -n 2
exec 9>&-
[ $rc = 0 ] || fail "two idle uids starve root of staging: $(cat "$T/r.out")"
