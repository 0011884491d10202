#!/bin/bash
# t_demo_cluster: `make demo-cluster` (tools/demo_cluster.sh) runs to its
# end on this build: six nodes, a rack lost, every file read back, a spare
# PROTECTED around the node still down.  It must say OK, leave no ckptd of
# its own running and remove its directory.  (The demo checks every byte
# itself; this test only keeps it from rotting.)
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

has_ctl || skip "ckptctl is not built"
CKPT_BUILD=$BUILD "$ROOT/tools/demo_cluster.sh" >"$T/demo.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "demo-cluster exit $rc: $(tail -15 "$T/demo.out")"
grep -q "^demo-cluster: OK" "$T/demo.out" || fail "no OK: $(tail -5 "$T/demo.out")"
grep -Eq "^n1 .*protected .*4/5 \(n2 down" "$T/demo.out" ||
	fail "the spare's part is not listed PROTECTED 4/5 with n2 down: $(grep '^n1 ' "$T/demo.out")"
dir=$(sed -n 's/^.*\(\/tmp\/ckpt-dc\.[A-Za-z0-9]*\).*/\1/p' "$T/demo.out" | head -1)
[ -n "$dir" ] || fail "the demo's directory is not in its output"
[ ! -e "$dir" ] || fail "the demo left $dir behind"
! pgrep -f "ckptd -c $dir/" >/dev/null || fail "a ckptd of the demo is still running"
info "demo-cluster: OK, cleaned up"
finish
