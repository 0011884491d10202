#!/bin/bash
# t_drain_retire: local retention with a drain, for versions that will never
# be drained.
#  - retired: [drain] keep=1 with local keep=3.  Each drain retires the PFS
#    copy of the version before it, which stays local (LOCAL).  Exactly the
#    newest three stay local, the older ones go entirely, the PFS holds only
#    the newest; a wait for DRAINED on a retired version gets
#    CKPT_ESKIPPED.  After a SIGKILL and two clean restarts nothing is
#    drained again (the retirement is in the local manifest), the PFS
#    still holds only the newest, and every kept byte reads back.
#  - skipped: [drain] every=2 with local keep=2, the drain paused while
#    eight versions are written.  Once it resumes, the odd ones are
#    superseded: a waiter for DRAINED on one is answered CKPT_ESKIPPED, and
#    they leave the local store (before this they stayed forever); the even
#    ones drain and leave it as remote versions.  Checked again after a
#    SIGKILL and two clean restarts, every kept byte read back.
#  - lost: a drained version whose PFS copy is removed by hand while ckptd
#    is down (the state a [drain] keep removal killed before it recorded
#    the loss leaves, or a target moved) is not evicted on the word of its
#    local record: it drains again first, then goes, and reads back; also
#    with every=2, where it is not the newest any more (it was skipped,
#    then removed, with no copy left: helper-48).
#  - unmounted: the same with the target left empty (a PFS not mounted):
#    nothing is drained again and nothing evicted; the warning says so.
#  - outage: every=2, keep=2 and every drain failing.  Superseded versions
#    stay until a newer one is DRAINED: none leaves while the PFS refuses
#    every copy, also across a clean restart and a SIGKILL (ordinals are
#    given again at each start, which used to turn versions waiting for
#    their drain into superseded ones and remove them).  Once the PFS is
#    back, all that is listed reads back.
#  - window: a version among the newest `keep` stays while an older one
#    waits for its drain (v3 was removed in its place).
#  - newest: a version retired by [drain] keep that becomes the newest (the
#    newer ones removed) is drained again at once; `drain --now` drains a
#    retired one too.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
JOB=rt/job
SZ=(-n 2 -z 300000)

has_ctl || skip "ckptctl not built"

# sealed_set NAME N: "vI:LEVEL" for every listed version v1..vN, one line.
sealed_set() {
	local i out= l
	for i in $(seq 1 "$2"); do
		l=$(vlevel "$1" "$JOB" "v$i")
		[ "$l" = absent ] || out="$out v$i:$l"
	done
	echo "${out# }"
}

pfs_set() { (cd "$PFS/rt.dir/job.job" 2>/dev/null && ls -d -- *.ver | tr '\n' ' '); }

man_count() { find "$T/$1/store/man" -name '*.man' | wc -l; }

# drains NAME VERSION: how many times the log says VERSION drained.
drains() { grep -c "drain: $JOB/$2 drained" "$T/$1/ckptd.log"; }

# expect_state NAME N WANT_SET WANT_PFS WANT_MANS
expect_state() {
	local got
	got=$(sealed_set "$1" "$2")
	[ "$got" = "$3" ] || fail "listed: '$got', want '$3'"
	got=$(pfs_set)
	[ "$got" = "$4" ] || fail "on the PFS: '$got', want '$4'"
	got=$(man_count "$1")
	[ "$got" = "$5" ] || fail "$got manifests on the local store, want $5"
}

retired() {
	local i
	drain_conf r keep=1 -- keep=3
	start_ckptd r
	for i in $(seq 1 6); do
		tw r write "$JOB" "v$i" "${SZ[@]}" -S "$i" -w drained ||
			fail "v$i not drained"
	done
	# v6's drain retired v5's PFS copy; the removal and the evictions
	# run on the pool.
	poll_until 20 out_is 3 man_count r ||
		fail "$(man_count r) manifests on the local store, want 3"
	poll_until 20 out_is "v6.ver " pfs_set ||
		fail "on the PFS: '$(pfs_set)', want only v6"
	retired_check
	local out
	out=$(ctl r wait "$JOB" v4 drained --timeout 20 2>&1) &&
		fail "a wait for DRAINED on retired v4 succeeded: $out"
	[[ $out == *"will not be drained"* ]] ||
		fail "a wait for DRAINED on retired v4: '$out', want CKPT_ESKIPPED"
	each_restart r retired_check
	stop_ckptd r
	info "[retired] keep=3 locally and keep=1 on the PFS: v4 v5 local, v6 drained; nothing drained again after restarts"
}

retired_check() {
	local i out
	expect_state r 6 "v4:local v5:local v6:drained" "v6.ver " 3
	# ckptctl ls says why v4 and v5 are not on the PFS.
	out=$(ctl r ls "$JOB") || fail "ckptctl ls: $out"
	for i in 4 5; do
		grep -Eq "^v$i .* retired$" <<<"$out" || fail "ckptctl ls does not show v$i retired: $out"
	done
	grep -Eq "^v6 .* done$" <<<"$out" || fail "ckptctl ls does not show v6 drained: $out"
	for i in 4 5 6; do
		tw r verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not read back"
		[ "$(drains r "v$i")" = 1 ] || fail "v$i drained $(drains r "v$i") times, want once"
	done
}

skipped() {
	local i wpid out
	PFS=$T/pfs2
	drain_conf s every=2 -- keep=2
	start_ckptd s
	ctl s drain --pause >/dev/null || fail "drain --pause failed"
	for i in $(seq 1 8); do
		tw s write "$JOB" "v$i" "${SZ[@]}" -S "$i" -w local ||
			fail "v$i not local"
	done
	[ "$(man_count s)" = 8 ] || fail "$(man_count s) local manifests while the drain is paused, want 8"
	ctl s wait "$JOB" v3 drained --timeout 60 >"$T/wait.out" 2>&1 &
	wpid=$!
	ctl s drain --resume >/dev/null || fail "drain --resume failed"
	tw s write "$JOB" v9 "${SZ[@]}" -S 9 -w drained || fail "v9 not drained"
	wait "$wpid" && fail "the wait for DRAINED on superseded v3 succeeded: $(cat "$T/wait.out")"
	out=$(cat "$T/wait.out")
	[[ $out == *"will not be drained"* ]] ||
		fail "the wait for DRAINED on superseded v3: '$out', want CKPT_ESKIPPED"
	poll_until 20 out_is 2 man_count s ||
		fail "$(man_count s) manifests on the local store, want 2 (v8 v9): superseded versions stayed"
	skipped_check
	each_restart s skipped_check
	stop_ckptd s
	info "[skipped] every=2, keep=2: superseded v1 v3 v5 v7 left the store; v2 v4 v6 remote; a waiter got CKPT_ESKIPPED"
}

skipped_check() {
	local i
	expect_state s 9 "v2:drained v4:drained v6:drained v8:drained v9:drained" \
		"v2.ver v4.ver v6.ver v8.ver v9.ver " 2
	for i in 2 4 6 8 9; do
		tw s verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not read back"
	done
	for i in 1 3 5 7; do
		[ "$(drains s "v$i")" = 0 ] || fail "superseded v$i was drained"
	done
	for i in 2 4 6 8 9; do
		[ "$(drains s "v$i")" = 1 ] || fail "v$i drained $(drains s "v$i") times, want once"
	done
}

# v1_drained NAME DRAIN_CONF_ARGS...: a ckptd NAME (drain_conf's arguments)
# that drained v1 and stopped.
v1_drained() {
	local name=$1
	shift
	drain_conf "$name" "$@"
	start_ckptd "$name"
	tw "$name" write "$JOB" v1 "${SZ[@]}" -S 1 -w drained || fail "v1 not drained"
	stop_ckptd "$name"
}

lost() {
	PFS=$T/pfs3
	v1_drained l -- keep=1
	rm -rf "$(pfs_vdir "$JOB" v1)"
	start_ckptd l
	[ "$(vlevel l "$JOB" v1)" = drained ] || fail "v1 is '$(vlevel l "$JOB" v1)' after the start, want drained (its record)"
	tw l write "$JOB" v2 "${SZ[@]}" -S 2 -w drained || fail "v2 not drained"
	poll_until 20 grep -q "$JOB/v1 is recorded drained but" "$T/l/ckptd.log" ||
		fail "no warning that v1's PFS copy is gone"
	poll_until 20 out_is 1 man_count l ||
		fail "$(man_count l) manifests on the local store, want 1 (v1 drained again and evicted)"
	lost_check
	each_restart l lost_check
	stop_ckptd l
	info "[lost] a drained version whose PFS copy vanished drained again before its eviction"
}

lost_check() {
	local i
	expect_state l 2 "v1:drained v2:drained" "v1.ver v2.ver " 1
	for i in 1 2; do
		tw l verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not read back"
	done
	[ "$(drains l v1)" = 2 ] || fail "v1 drained $(drains l v1) times, want twice"
	[ "$(drains l v2)" = 1 ] || fail "v2 drained $(drains l v2) times, want once"
}

lost_every() {
	PFS=$T/pfs5
	v1_drained le every=2 -- keep=2
	rm -rf "$(pfs_vdir "$JOB" v1)"
	start_ckptd le
	for i in 2 3 4 5; do
		tw le write "$JOB" "v$i" "${SZ[@]}" -S "$i" -w drained ||
			fail "v$i not drained"
	done
	poll_until 20 drain_idle le || fail "the drain is not idle"
	[ "$(drains le v1)" = 2 ] || fail "v1 drained $(drains le v1) times, want twice (its PFS copy was lost)"
	[ "$(vlevel le "$JOB" v1)" = drained ] || fail "v1 is '$(vlevel le "$JOB" v1)', want drained"
	[ -e "$(pfs_vdir "$JOB" v1)/manifest" ] || fail "v1 is not on the PFS again"
	tw le verify "$JOB" v1 "${SZ[@]}" -S 1 || fail "v1 does not read back"
	stop_ckptd le
	info "[lost, every=2] a lost PFS copy of a version no longer the newest is drained again"
}

unmounted() {
	PFS=$T/pfs8
	v1_drained um -- keep=1
	rm -rf "${PFS:?}"/* "$PFS/.ckpt-target"     # its mark too
	start_ckptd um
	ctl um drain --pause >/dev/null || fail "drain --pause failed"   # v2 stays out of it
	tw um write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	poll_until 20 grep -q "$JOB/v1 stays in the local store: its PFS copy: the drain target is not there or lacks this node's mark" "$T/um/ckptd.log" ||
		fail "no warning that the target lacks its mark"
	[ "$(drains um v1)" = 1 ] || fail "v1 drained again into an empty target"
	[ "$(man_count um)" = 2 ] || fail "$(man_count um) local manifests, want 2 (v1 kept)"
	tw um verify "$JOB" v1 "${SZ[@]}" -S 1 || fail "v1 does not read back"
	stop_ckptd um
	info "[unmounted] an empty target: v1 kept, not drained again"
}

# outage_check NAME N: v1..vN all listed and local (none removed).
outage_check() {
	local i want=
	for i in $(seq 1 "$2"); do want="$want v$i:local"; done
	[ "$(sealed_set "$1" "$2")" = "${want# }" ] ||
		fail "listed during the outage: '$(sealed_set "$1" "$2")', want '${want# }'"
}

outage() {
	local i out
	PFS=$T/pfs4
	drain_conf o every=2 retry_max=1 -- keep=2
	: >"$PFS/rt.dir"        # every drain of the job fails (ENOTDIR)
	start_ckptd o
	for i in $(seq 1 6); do
		tw o write "$JOB" "v$i" "${SZ[@]}" -S "$i" -w local || fail "v$i not local"
	done
	poll_until 20 grep -q "$JOB/v5 skipped" "$T/o/ckptd.log" || fail "v5 was not skipped"
	poll_until 20 out_gt 0 sjson o drain_errors || fail "no drain failed"
	# ckptctl ls says why: v5 skipped, v6 (to drain) retried after ENOTDIR.
	poll_until 20 eval 'ctl o ls "$JOB" | grep -Eq "^v6 .* retry$"' ||
		fail "ckptctl ls does not show v6 retrying: $(ctl o ls "$JOB")"
	out=$(ctl o ls "$JOB")
	grep -Eq "^v5 .* skipped$" <<<"$out" || fail "ckptctl ls does not show v5 skipped: $out"
	grep -Eq "^$JOB/v6: drain retry: attempt [0-9]+ failed: Not a directory; next in " <<<"$out" ||
		fail "ckptctl ls does not say why v6 waits: $out"
	out=$(ctl o --json ls "$JOB" v6)
	/usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["info"]["drain"]
assert d["state"] == "retry" and d["error_code"] == -20 and d["tries"] >= 1, d
' <<<"$out" || fail "ckptctl --json ls $JOB v6: $out"
	# A seal runs local retention: v1 v3 v5 are superseded, but nothing
	# newer is on the PFS.
	tw o write "$JOB" v7 "${SZ[@]}" -S 7 -w local || fail "v7 not local"
	outage_check o 7
	stop_ckptd o
	start_ckptd o
	tw o write "$JOB" v8 "${SZ[@]}" -S 8 -w local || fail "v8 not local"
	poll_until 20 grep -q "$JOB/v7 skipped" "$T/o/ckptd.log" || fail "v7 was not skipped"
	tw o write "$JOB" v9 "${SZ[@]}" -S 9 -w local || fail "v9 not local"
	outage_check o 9
	kill9 o
	start_ckptd o
	tw o write "$JOB" v10 "${SZ[@]}" -S 10 -w local || fail "v10 not local"
	outage_check o 10
	[ "$(man_count o)" = 10 ] || fail "$(man_count o) manifests during the outage, want 10"
	rm -f "$PFS/rt.dir"     # the PFS is back
	tw o write "$JOB" v11 "${SZ[@]}" -S 11 -w drained || fail "v11 not drained"
	poll_until 30 drain_idle o || fail "the drain is not idle after the outage"
	for i in $(seq 1 11); do
		[ "$(vlevel o "$JOB" "v$i")" = absent ] && continue
		tw o verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not read back"
	done
	for i in 10 11; do
		[ "$(vstate o "$JOB" "v$i")" = sealed ] || fail "v$i (one of the newest two) is gone"
	done
	stop_ckptd o
	info "[outage] every=2: nothing left the store while no drain succeeded (restart, SIGKILL); all listed reads back after"
}

window() {
	PFS=$T/pfs6
	drain_conf w every=2 retry_max=1 -- keep=2
	mkdir -p "$PFS/rt.dir/job.job"
	: >"$PFS/rt.dir/job.job/v2.ver"   # v2's drain fails
	start_ckptd w
	tw w write "$JOB" v1 "${SZ[@]}" -S 1 -w drained || fail "v1 not drained"
	tw w write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	poll_until 20 out_gt 0 sjson w drain_errors || fail "v2's drain did not fail"
	ctl w drain --pause >/dev/null || fail "drain --pause failed"
	tw w write "$JOB" v3 "${SZ[@]}" -S 3 -w local || fail "v3 not local"
	tw w write "$JOB" v4 "${SZ[@]}" -S 4 -w local || fail "v4 not local"
	ctl w drain --resume >/dev/null || fail "drain --resume failed"
	poll_until 30 level_is w "$JOB" v4 drained || fail "v4 not drained"
	poll_until 20 grep -q "$JOB/v3 skipped" "$T/w/ckptd.log" || fail "v3 was not skipped"
	[ "$(vstate w "$JOB" v3)" = sealed ] || fail "v3, one of the newest two, was removed while v2 waits for its drain"
	[ "$(vstate w "$JOB" v2)" = sealed ] || fail "v2, waiting for its drain, was removed"
	for i in 2 3 4; do
		tw w verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not read back"
	done
	stop_ckptd w
	info "[window] v3 (one of the newest two) stays while v2 waits for its drain"
}

# rm_all NAME VERSION: rm until it is gone (an rm of a drained local
# version removes its local copy first).
rm_all() {
	local n
	for n in 1 2 3; do
		[ "$(vstate "$1" "$JOB" "$2")" = absent ] && return 0
		ctl "$1" rm "$JOB" "$2" >/dev/null 2>&1
	done
	[ "$(vstate "$1" "$JOB" "$2")" = absent ] || fail "$2 is still listed after three rm"
}

newest() {
	local i out
	PFS=$T/pfs7
	drain_conf n keep=1 -- keep=3
	start_ckptd n
	for i in 1 2 3; do
		tw n write "$JOB" "v$i" "${SZ[@]}" -S "$i" -w drained || fail "v$i not drained"
	done
	poll_until 20 level_is n "$JOB" v2 local || fail "v2's PFS copy was not retired"
	rm_all n v3
	# v2 is the newest now: drained again at once, and a waiter hears it.
	out=$(ctl n wait "$JOB" v2 drained --timeout 30 2>&1) ||
		fail "waiting for the newest v2 to drain again: $out"
	[ -e "$(pfs_vdir "$JOB" v2)/manifest" ] || fail "v2 is not on the PFS again"
	[ "$(drains n v2)" = 2 ] || fail "v2 drained $(drains n v2) times, want twice"
	# drain --now on retired v1: drained, then retired again (keep=1).
	ctl n drain --now "$JOB" v1 >/dev/null || fail "drain --now v1 failed"
	poll_until 20 out_is 2 drains n v1 || fail "drain --now did not drain retired v1"
	poll_until 20 level_is n "$JOB" v1 local || fail "v1 was not retired again"
	each_restart n newest_check
	stop_ckptd n
	info "[newest] a retired version that became the newest drained again; drain --now drains a retired one"
}

newest_check() {
	expect_state n 3 "v1:local v2:drained" "v2.ver " 2
	tw n verify "$JOB" v1 "${SZ[@]}" -S 1 || fail "v1 does not read back"
	tw n verify "$JOB" v2 "${SZ[@]}" -S 2 || fail "v2 does not read back"
	[ "$(drains n v2)" = 2 ] || fail "v2 drained $(drains n v2) times, want twice"
}

subtest retired retired
subtest skipped skipped
subtest lost lost
subtest lost_every lost_every
subtest unmounted unmounted
subtest outage outage
subtest window window
subtest newest newest
finish
