#!/bin/bash
# t_views_copies: requests are views into ckptd's receive buffer, decoded in
# place (lib/proto.h), and a version's level follows from the copies it
# records (server/store/level.h).
#  - pipe: `ckpt_raw pipe`, then `pfspipe`: many frames with the longest
#    names in one send: writes with reads of what they wrote (deferred
#    behind the writes in flight), reads of the sealed version (io_uring),
#    of the same version once rm dropped its local copy (PFS, on the
#    workers), bad frames among them (each answered by its seq, the frames
#    after it served), and a hang-up with reads in flight; no sanitizer
#    report in ckptd's log
#  - copies: the LEVEL and COPIES columns of `ckptctl ls` after seal
#    (local), drain (local,pfs), `[drain] keep` (its PFS copy removed:
#    local), `[ckptd] keep` eviction (pfs), rm of a drained version (pfs),
#    and the same after a crash restart; every byte of the evicted versions
#    reads back from the PFS
#  - waitrm: a WAIT for a level the version has not reached (drained, the
#    drain paused; or with no drain at all, where retention removes it) is
#    answered when the version is removed (ENOVERSION), and ckptd survives
#    the waiter hanging up afterwards (a waiter once outlived its version:
#    heap use after free when its connection closed)
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs       # each sub-test sets its own

pipe() {
	PFS=$T/pfs-p
	drain_conf p
	start_ckptd p
	"$RAW" -s "$(sock p)" pipe >"$T/raw.out" 2>&1 ||
		fail "ckpt_raw pipe: $(cat "$T/raw.out")"
	"$RAW" -s "$(sock p)" pfspipe >"$T/raw.out" 2>&1 ||
		fail "ckpt_raw pfspipe: $(cat "$T/raw.out")"
	assert_up p
	stop_ckptd p
}

# row NAME JOB VERSION: the version's `ckptctl ls` row (VERSION STATE LEVEL
# FILES BYTES COPIES AGE), "" if not listed.
row() { ctl "$1" ls "$2" | awk -v v="$3" '$1 == v' | tr -s ' '; }

# expect_copies NAME JOB VERSION LEVEL COPIES WHEN
expect_copies() {
	local r
	r=$(row "$1" "$2" "$3")
	[[ " $r " == *" sealed $4 "* && " $r " == *" $5 "* ]] ||
		fail "$6: $2/$3 is listed as '$r', want level $4, copies $5"
}

copies() {
	# keep=2 locally, 2 on the PFS.
	PFS=$T/pfs-c
	drain_conf c keep=2 -- keep=2
	start_ckptd c
	ctl c drain --pause >/dev/null || fail "drain --pause failed"
	tw c write cp/job v1 -n 2 -z 300000 -S 1 -w local || fail "v1 not local"
	expect_copies c cp/job v1 local local "after seal"
	ctl c drain --resume >/dev/null || fail "drain --resume failed"
	ctl c wait cp/job v1 drained >/dev/null || fail "v1 not drained"
	expect_copies c cp/job v1 drained local,pfs "after drain"
	tw c write cp/job v2 -n 2 -z 300000 -S 2 -w local || fail "v2 not local"
	ctl c wait cp/job v2 drained >/dev/null || fail "v2 not drained"
	# v3 sealed (the drain paused): three local copies, keep=2 evicts
	# v1 (drained).
	ctl c drain --pause >/dev/null || fail "drain --pause failed"
	tw c write cp/job v3 -n 2 -z 300000 -S 3 -w local || fail "v3 not local"
	expect_copies c cp/job v1 drained pfs "after eviction"
	expect_copies c cp/job v3 local local "v3 before its drain"
	tw c verify cp/job v1 -n 2 -z 300000 -S 1 ||
		fail "evicted v1 does not read back from the PFS"
	# v3 drained: three on the PFS, [drain] keep=2 removes v1 there: v1
	# had no other copy and is gone.
	ctl c drain --resume >/dev/null || fail "drain --resume failed"
	ctl c wait cp/job v3 drained >/dev/null || fail "v3 not drained"
	poll_until 10 eval '[ -z "$(row c cp/job v1)" ]' ||
		fail "v1 still listed after [drain] keep=2: '$(row c cp/job v1)'"
	expect_copies c cp/job v2 drained local,pfs "v2 after v3"
	ctl c drain --pause >/dev/null || fail "drain --pause failed"
	tw c write cp/job v4 -n 2 -z 300000 -S 4 -w local || fail "v4 not local"
	expect_copies c cp/job v2 drained pfs "v2 after eviction"
	# The eviction is durable once v2's manifest is gone (dropped on a
	# worker): v3's and v4's are left.
	poll_until 10 eval '[ "$(ls "$T/c/store/man" | grep -c "\.man$")" = 2 ]' ||
		fail "manifests left after the eviction: $(ls "$T/c/store/man")"
	restart c
	expect_copies c cp/job v2 drained pfs "v2 evicted, after a restart"
	expect_copies c cp/job v3 drained local,pfs "v3 after a restart"
	expect_copies c cp/job v4 local local "v4 after a restart"
	ctl c drain --resume >/dev/null 2>&1   # a restart resumes it anyway
	ctl c wait cp/job v4 drained >/dev/null || fail "v4 not drained"
	poll_until 10 eval '[ -z "$(row c cp/job v2)" ]' ||
		fail "v2 still listed: '$(row c cp/job v2)'"
	# rm of drained v3 drops its local copy only.
	ctl c rm cp/job v3 >/dev/null || fail "rm of drained v3 failed"
	expect_copies c cp/job v3 drained pfs "after rm"
	expect_copies c cp/job v4 drained local,pfs "v4"
	tw c verify cp/job v3 -n 2 -z 300000 -S 3 ||
		fail "v3 does not read back from the PFS"
	restart c
	expect_copies c cp/job v3 drained pfs "after rm and a restart"
	expect_copies c cp/job v4 drained local,pfs "v4 after a restart"
	tw c verify cp/job v3 -n 2 -z 300000 -S 3 ||
		fail "v3 does not read back from the PFS after a restart"
	stop_ckptd c

	# [drain] keep=1 with no local retention: the older version loses
	# its PFS copy and keeps its local one, before and after a restart.
	PFS=$T/pfs-k
	drain_conf k keep=1
	start_ckptd k
	tw k write dk/job v1 -n 1 -z 200000 -S 5 -w local || fail "k v1"
	ctl k wait dk/job v1 drained >/dev/null || fail "k v1 not drained"
	tw k write dk/job v2 -n 1 -z 200000 -S 6 -w local || fail "k v2"
	ctl k wait dk/job v2 drained >/dev/null || fail "k v2 not drained"
	poll_until 10 eval '[[ " $(row k dk/job v1) " == *" sealed local "*" local "* ]]' ||
		fail "v1 after [drain] keep=1: '$(row k dk/job v1)', want level local, copies local"
	[ ! -e "$(pfs_vdir dk/job v1)" ] || fail "v1 still on the PFS"
	stop_ckptd k
	start_ckptd k
	expect_copies k dk/job v1 local local "[drain] keep after a restart"
	expect_copies k dk/job v2 drained local,pfs "v2 after a restart"
	restart k
	expect_copies k dk/job v1 local local "[drain] keep after a crash"
	tw k verify dk/job v1 -n 1 -z 200000 -S 5 || fail "k v1 does not verify"
	stop_ckptd k
}

waitrm() {
	PFS=$T/pfs-w
	drain_conf w
	start_ckptd w
	ctl w drain --pause >/dev/null || fail "drain --pause failed"
	tw w write wr/job v1 -n 1 -z 100000 -S 7 -w local || fail "v1 not local"
	"$RAW" -s "$(sock w)" waitrm wr/job v1 rm 0 >"$T/raw.out" 2>&1 ||
		fail "ckpt_raw waitrm ... rm: $(cat "$T/raw.out")"
	assert_up w
	stop_ckptd w

	# No drain, keep=1: a WAIT for drained is refused at once (ENOTSUP:
	# it could never come); before that rule it outlived v1, removed by
	# retention when v2 sealed.  Either way the daemon stays up.
	ckptd_conf n keep=1
	start_ckptd n
	tw n write nr/job v1 -n 1 -z 100000 -S 8 -w local || fail "n v1 not local"
	"$RAW" -s "$(sock n)" waitrm nr/job v1 hold 5 >"$T/raw.out" 2>&1 &
	local raw=$!
	poll_until 10 grep -q waiting "$T/raw.out" ||
		fail "ckpt_raw waitrm ... hold: $(cat "$T/raw.out")"
	tw n write nr/job v2 -n 1 -z 100000 -S 9 -w local || fail "n v2 not local"
	[ "$(vstate n nr/job v1)" = absent ] || fail "v1 not removed by keep=1"
	wait "$raw" || fail "ckpt_raw waitrm ... hold: $(cat "$T/raw.out")"
	assert_up n
	stop_ckptd n
}

subtest pipe pipe
subtest copies copies
subtest waitrm waitrm
finish
