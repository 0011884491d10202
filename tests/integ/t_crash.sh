#!/bin/bash
# t_crash: SIGKILL ckptd and restart it on the same store.
#  (a) killed while writers are mid-version (held before commit, and while
#      a big write is going on): after restart the version is listed
#      INCOMPLETE, never valid (not latest, reads fail), and the same name
#      can be written again;
#  (b) killed right after commits return, before or after LOCAL: a version
#      that reached LOCAL verifies byte for byte; one that had not is absent,
#      incomplete, or sealed and fully valid, never half;
#  (c) versions committed earlier verify after every restart.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

JOB=crash/job
ckptd_conf d keep=100 staging=64M staging_client=16M
start_ckptd d

# base: committed and LOCAL before any crash.
tw d write "$JOB" base -n 2 -z 3000000 -S 11 -w local || fail "writing base failed"

base_ok() {
	tw d verify "$JOB" base -n 2 -z 3000000 -S 11 ||
		fail "base does not verify after $1"
}

# stored_ge VERSION BYTES: the version has at least BYTES on the store.
stored_ge() {
	local out min=$2
	out=$(tw d stat "$JOB" "$1") || return 1
	set -- $out
	[ "$5" -ge "$min" ]
}

# assert_incomplete VERSION WHAT: listed INCOMPLETE, not latest, unreadable.
assert_incomplete() {
	local st latest
	st=$(vstate d "$JOB" "$1")
	[ "$st" = incomplete ] || fail "$2: $1 is '$st' after restart, want incomplete"
	latest=$(tw d latest "$JOB") || fail "latest failed"
	[ "$latest" != "$1" ] || fail "$2: latest is the uncommitted $1"
	latest=$(tw d latest "$JOB" -w local) || fail "latest local failed"
	[ "$latest" != "$1" ] || fail "$2: latest local is the uncommitted $1"
	tw d verify "$JOB" "$1" -n 1 -z 4096 2>/dev/null &&
		fail "$2: reading the uncommitted $1 succeeded"
	if has_ctl; then
		ctl d verify "$JOB" "$1" >/dev/null 2>&1 &&
			fail "$2: ckptctl verify of the uncommitted $1 succeeded"
	fi
	return 0
}

# ---- (a1) writer held before its commit ---------------------------------------
mkfifo "$T/hold"
tw d write "$JOB" held -n 2 -z 4194304 -S 21 -p <"$T/hold" >"$T/held.out" 2>"$T/held.err" &
wpid=$!
exec 9>"$T/hold"
poll_until 30 grep -q paused "$T/held.out" || fail "writer never paused: $(cat "$T/held.err")"
poll_until 30 stored_ge held $((2 * 4194304)) || fail "held version never reached the store"
kill9 d
exec 9>&-                # the writer now commits into a dead daemon
wait "$wpid" && fail "the writer's commit succeeded although ckptd was killed"
restart d
base_ok "a crash mid-version"
assert_incomplete held "held before commit"
# The same name can be written again, and then it is valid.
tw d write "$JOB" held -n 2 -z 4194304 -S 22 -w local || fail "rewriting held failed"
tw d verify "$JOB" held -n 2 -z 4194304 -S 22 || fail "rewritten held does not verify"

# ---- (a2) killed while a big write is going on ---------------------------------
rm -f "$T/hold"; mkfifo "$T/hold"
tw d write "$JOB" big -n 3 -z $((16 << 20)) -S 31 -p <"$T/hold" >"$T/big.out" 2>"$T/big.err" &
wpid=$!
exec 9>"$T/hold"
poll_until 30 stored_ge big 1 || fail "big version never reached the store"
kill9 d
exec 9>&-
wait "$wpid" && fail "the big writer succeeded although ckptd was killed"
restart d
base_ok "a crash during a big write"
assert_incomplete big "killed during a big write"
tw d verify "$JOB" held -n 2 -z 4194304 -S 22 || fail "held does not verify after the second crash"

# ---- (b) killed right after commit ---------------------------------------------
declare -A reached=()    # version -> 1 if it reached LOCAL before its crash
for i in 1 2 3 4 5 6; do
	v=c$i
	if [ $((i % 2)) = 0 ]; then
		tw d write "$JOB" "$v" -n 2 -z 3145728 -S $((100 + i)) -w local ||
			fail "writing $v failed"
		reached[$v]=1
	else
		tw d write "$JOB" "$v" -n 2 -z 3145728 -S $((100 + i)) ||
			fail "writing $v failed"
		reached[$v]=0
	fi
	kill9 d              # at once: before or after LOCAL
	restart d
	base_ok "crash $i"
	for k in $(seq 1 "$i"); do
		w=c$k
		st=$(vstate d "$JOB" "$w")
		if [ "${reached[$w]}" = 1 ]; then
			[ "$st" = sealed ] || fail "$w reached LOCAL before crash $k but is '$st' after crash $i"
		fi
		case $st in
		sealed)
			tw d verify "$JOB" "$w" -n 2 -z 3145728 -S $((100 + k)) ||
				fail "$w is listed sealed after crash $i but does not verify" ;;
		incomplete)
			assert_incomplete "$w" "crash $i" ;;
		absent) ;;
		*) fail "$w is '$st' after crash $i (want sealed, incomplete or absent)" ;;
		esac
	done
	info "crash $i right after committing $v (LOCAL before: ${reached[$v]}): $v is $(vstate d "$JOB" "$v") after restart"
	# latest is always a sealed version that verifies
	latest=$(tw d latest "$JOB") || fail "no latest version after crash $i"
	[ "$(vstate d "$JOB" "$latest")" = sealed ] || fail "latest $latest is not sealed"
done

# (c) everything committed earlier is still intact.
base_ok "all crashes"
tw d verify "$JOB" held -n 2 -z 4194304 -S 22 || fail "held does not verify at the end"
stop_ckptd d
info "crashes mid-version, mid-write and after commit: no half versions"
