#!/bin/bash
# t_restart_drain: committed versions survive ordinary restarts with a drain.
#  - recovered-then-drained: a version recovered at start-up and drained
#    after it keeps its manifest valid; two more clean restarts and a
#    SIGKILL later it is still sealed, readable and `latest` (issue 8.1)
#  - found-on-PFS: a local version that the PFS already holds (drained
#    before a crash lost the record of it) survives the next restarts
#  - evicted: with keep = 1, versions evicted after DRAINED stay listed,
#    read back from the PFS, and never come back `incomplete` (issue 8.2)
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"

# settle NAME: stop and start NAME cleanly (SIGTERM, then start).
settle() { stop_ckptd "$1"; start_ckptd "$1"; }

# sealed_ok NAME JOB VER SEED: VER is sealed and reads back byte for byte.
sealed_ok() {
	local st
	st=$(vstate "$1" "$2" "$3")
	[ "$st" = sealed ] || fail "$2/$3 is '$st' after restart, want sealed"
	tw "$1" verify "$2" "$3" -n 2 -z 3000000 -S "$4" ||
		fail "$2/$3 does not read back after restart"
}

latest_is() { # NAME JOB WANT
	local got
	got=$(tw "$1" latest "$2")
	[ "$got" = "$3" ] || fail "latest of $2 is '$got', want $3"
}

recovered_then_drained() {
	drain_conf a
	start_ckptd a
	tw a write rd/job v1 -n 2 -z 3000000 -S 1 -w drained || fail "v1 not drained"
	ctl a drain --pause >/dev/null || fail "drain --pause failed"
	tw a write rd/job v2 -n 2 -z 3000000 -S 2 -w local || fail "v2 not local"
	# Restart: v2 is recovered from its manifest, then drains.
	settle a
	poll_until 30 level_is a rd/job v2 drained || fail "v2 did not drain after restart"
	settle a
	sealed_ok a rd/job v2 2
	latest_is a rd/job v2
	settle a
	sealed_ok a rd/job v2 2
	restart a       # SIGKILL, then start
	sealed_ok a rd/job v2 2
	sealed_ok a rd/job v1 1
	latest_is a rd/job v2
	[ "$(vlevel a rd/job v2)" = drained ] || fail "v2 lost its DRAINED level"
	if grep -q "failed before it was durable\|never committed" "$T/a/ckptd.log"; then
		fail "recovery called a committed version uncommitted"
	fi
	check_sanitizers a
	stop_ckptd a
}

evicted() {
	drain_conf b -- keep=1
	start_ckptd b
	ctl b drain --pause >/dev/null || fail "drain --pause failed"
	local i
	for i in 1 2 3; do
		tw b write ev/job v$i -n 2 -z 3000000 -S $((10 + i)) -w local ||
			fail "v$i not local"
	done
	settle b
	for i in 1 2 3; do
		poll_until 30 level_is b ev/job v$i drained || fail "v$i did not drain"
	done
	settle b
	for i in 1 2 3; do sealed_ok b ev/job v$i $((10 + i)); done
	latest_is b ev/job v3
	restart b
	settle b
	for i in 1 2 3; do sealed_ok b ev/job v$i $((10 + i)); done
	latest_is b ev/job v3
	if grep -q "never committed\|failed before it was durable" "$T/b/ckptd.log"; then
		fail "recovery reported an evicted version as uncommitted"
	fi
	check_sanitizers b
	stop_ckptd b
}

subtest recovered_then_drained recovered_then_drained
subtest evicted evicted
finish
