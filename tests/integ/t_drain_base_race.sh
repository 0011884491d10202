#!/bin/bash
# t_drain_base_race: rm of a version that a copy running now may take as
# its incremental base is CKPT_EBASE (the newer version's copy refers to the
# base's chunks before its own base is recorded), and the newer version
# reads back after its local copy goes.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
PFS=$T/pfs
MB=$((1 << 20))
drain_conf a incremental=yes bandwidth=4M chunk=1M
start_ckptd a
# v1: 4 MiB; v2: the same 4 MiB (references) + 28 MiB new (7 s at 4 MiB/s)
tw a write j v1 -n 1 -z $((4 * MB)) -S 1 -w local || fail "v1"
poll_until 30 level_is a j v1 drained || fail "v1 did not drain"
tw a write j v2 -n 1 -z $((32 * MB)) -S 1 -w local || fail "v2"
# v2's copy has started (it takes its base when it starts): 1 copying.
copying() { ctl a status 2>/dev/null | grep -q "[1-9] copying"; }
poll_until 30 copying || fail "v2's copy did not start"
r1=$(ctl a rm j v1 2>&1); r2=$(ctl a rm j v1 2>&1)
info "rm v1 while v2 drains: [$r1] [$r2]"
poll_until 60 level_is a j v2 drained || fail "v2 did not drain"
info "v2 drained; PFS has v1: $([ -d "$(pfs_vdir j v1)" ] && echo yes || echo no)"
tw a rm j v2 >/dev/null || fail "rm of v2's local copy"
grep -E "v1|v2" "$T/a/ckptd.log" | tail -20
tw a verify j v2 -n 1 -z $((32 * MB)) -S 1 >"$T/v.out" 2>&1 ||
	fail "v2 (drained, base v1 removed while v2 drained) cannot be read: $(cat "$T/v.out")"
