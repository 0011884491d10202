#!/bin/bash
# t_retention: keep=2.  Six versions committed in sequence: after each, the
# job holds exactly its newest two sealed versions (the newest never goes),
# they verify, the older ones are gone (not listed, not readable, their
# manifests deleted), and this survives a restart.  A version that fails
# (its writer leaves without committing) removes nothing.  With keep=1 the
# only sealed version stays while a newer one is still open.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

JOB=keep/job
SZ=(-n 2 -z 1000000)

# sealed_list NAME: the job's sealed versions, oldest first, one line.
sealed_list() {
	local v out=
	for v in $(seq 1 9); do
		[ "$(vstate "$1" "$JOB" "v$v")" = sealed ] && out="$out v$v"
	done
	echo "${out# }"
}

keep2() {
	local i want got k
	ckptd_conf d keep=2
	start_ckptd d
	for i in $(seq 1 6); do
		tw d write "$JOB" "v$i" "${SZ[@]}" -S "$i" -w local || fail "writing v$i failed"
		if [ "$i" -ge 2 ]; then want="v$((i - 1)) v$i"; else want=v1; fi
		got=$(sealed_list d)
		[ "$got" = "$want" ] || fail "after v$i: sealed versions are '$got', want '$want'"
		[ "$(tw d latest "$JOB")" = "v$i" ] || fail "after v$i: latest is not v$i"
	done
	for i in 5 6; do
		tw d verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not verify"
	done
	for i in 1 2 3 4; do
		[ "$(vstate d "$JOB" "v$i")" = absent ] || fail "v$i is still listed"
		tw d verify "$JOB" "v$i" "${SZ[@]}" -S "$i" 2>/dev/null &&
			fail "removed v$i can still be read"
	done
	k=$(find "$T/d/store/man" -name '*.man' | wc -l)
	[ "$k" = 2 ] || fail "$k manifests on the store, want 2"

	# A failed newer version removes nothing.
	tw d write "$JOB" v7 "${SZ[@]}" -S 7 -C || fail "writing v7 (uncommitted) failed"
	wait_state d "$JOB" v7 failed     # aborted when its writer left
	got=$(sealed_list d)
	[ "$got" = "v5 v6" ] || fail "after a failed v7: sealed versions are '$got', want 'v5 v6'"

	restart d
	got=$(sealed_list d)
	[ "$got" = "v5 v6" ] || fail "after restart: sealed versions are '$got', want 'v5 v6'"
	for i in 5 6; do
		tw d verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || fail "v$i does not verify after restart"
	done
	if has_ctl; then
		n=$(ctl d --json ls "$JOB" | /usr/bin/python3 -c '
import json, sys
print(sum(1 for v in json.load(sys.stdin)["versions"] if v["state"] == "sealed"))') ||
			fail "ckptctl --json ls failed"
		[ "$n" = 2 ] || fail "ckptctl lists $n sealed versions, want 2"
	fi
	stop_ckptd d
	info "[keep=2] exactly the newest two of six remain and verify"
}

keep1() {
	ckptd_conf k1 keep=1
	start_ckptd k1
	tw k1 write "$JOB" v1 "${SZ[@]}" -S 1 -w local || fail "writing v1 failed"
	# v2 open (held before commit): v1 is still the newest sealed one.
	mkfifo "$T/hold"
	tw k1 write "$JOB" v2 "${SZ[@]}" -S 2 -p <"$T/hold" >"$T/v2.out" 2>&1 &
	local wpid=$!
	exec 9>"$T/hold"
	poll_until 30 grep -q paused "$T/v2.out" || fail "v2 writer never paused"
	[ "$(vstate k1 "$JOB" v1)" = sealed ] || fail "v1 removed while v2 was open"
	exec 9>&-
	wait "$wpid" || fail "v2 writer failed: $(cat "$T/v2.out")"
	tw k1 write "$JOB" v3 "${SZ[@]}" -S 3 -w local || fail "writing v3 failed"
	[ "$(sealed_list k1)" = v3 ] || fail "keep=1: sealed versions are '$(sealed_list k1)', want 'v3'"
	tw k1 verify "$JOB" v3 "${SZ[@]}" -S 3 || fail "v3 does not verify"
	stop_ckptd k1
	info "[keep=1] the newest sealed version stayed while a newer one was open"
}

subtest keep2 keep2
subtest keep1 keep1
finish
