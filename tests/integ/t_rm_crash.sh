#!/bin/bash
# t_rm_crash: SIGKILL ckptd while an rm, made slow with CKPT_FAULT delays, is
# in flight on the worker pool; then start it again, and restart it cleanly
# twice more.  After every start each committed byte of the other versions
# reads back, and the removed version is whole (it verifies) or gone
# (absent), the same each time, never damaged or incomplete:
#  (a) unlink late: killed once the removal is in the removal log (fsync'd)
#      and before the manifest is unlinked: the version is back, whole;
#  (b) fsync late: killed after the manifest unlink, before the directory
#      fsync: the version is gone, and its segments go to new versions;
#  (c) a drained version (rm drops its local copy after loading its PFS
#      manifest), unlink late, killed as in (a): it is still listed, whole;
#  (d) a WAIT for DRAINED (drain paused) on a version a slow rm removes is
#      answered once it is gone.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
JOB=rmc/job
W=(-n 2 -z 1500000)

has_ctl || skip "ckptctl is not built"

ok() { tw "$1" verify "$JOB" "$2" "${W[@]}" -S "$3" || fail "[$1] $JOB/$2 does not read back"; }

# rmlog_grew NAME SIZE: the removal log of NAME's store is past SIZE bytes.
rmlog_grew() { [ "$(stat -c %s "$T/$1/store/removed" 2>/dev/null || echo 0)" -gt "$2" ]; }
# man_gone PATH
man_gone() { [ ! -e "$1" ]; }

# check NAME WANT: v1 and v3 verify; v2 is WANT (sealed: it verifies too;
# absent).
check() {
	local st
	ok "$1" v1 1
	ok "$1" v3 3
	st=$(vstate "$1" "$JOB" v2)
	[ "$st" = "$2" ] || fail "[$1] $JOB/v2 is '$st' after a start, want $2"
	[ "$st" = absent ] || ok "$1" v2 2
}

# crash NAME FAULT WANT COND...: three versions, then ckptd restarted with
# FAULT, rm v2, SIGKILL once COND holds, and three starts checked.
crash() {
	local name=$1 fault=$2 want=$3 rmpid r
	shift 3
	CKPT_FAULT="$fault" start_ckptd "$name"
	ctl "$name" rm "$JOB" v2 >"$T/$name.rm.out" 2>&1 &
	rmpid=$!
	poll_until 30 "$@" || fail "[$name] the rm never reached the point to crash at"
	alive "$rmpid" || fail "[$name] rm returned before the crash: $(cat "$T/$name.rm.out")"
	kill9 "$name"
	wait "$rmpid"
	start_ckptd "$name"
	check "$name" "$want"
	for r in 1 2; do
		stop_ckptd "$name"
		start_ckptd "$name"
		check "$name" "$want"
	done
}

# setup NAME LEVEL [DRAIN]: a store with v1..v3 at LEVEL; stopped.
setup() {
	local i
	if [ "${3:-}" = drain ]; then
		drain_conf "$1" -- keep=100
	else
		ckptd_conf "$1" keep=100
	fi
	start_ckptd "$1"
	for i in 1 2 3; do
		tw "$1" write "$JOB" "v$i" "${W[@]}" -S "$i" -w "$2" ||
			fail "[$1] writing v$i failed"
	done
	stop_ckptd "$1"
}

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

# (a)
setup a local
crash a "unlink:1+:delay=5000" sealed rmlog_grew a "$(size_of "$T/a/store/removed")"
stop_ckptd a
info "(a) killed between the removal log and the unlink: v2 whole after three starts"

# (b)
setup b local
man=$(store_man_of "$T/b/store" v2) || fail "[b] no manifest names v2"
crash b "fsync:1+:delay=2000" absent man_gone "$man"
tw b write "$JOB" v4 "${W[@]}" -S 4 -w local || fail "[b] writing v4 after the crashes failed"
ok b v4 4
check b absent
stop_ckptd b
info "(b) killed between the unlink and the directory fsync: v2 gone after three starts, v4 written after"

# (c)
setup c drained drain
crash c "unlink:1+:delay=5000" sealed rmlog_grew c "$(size_of "$T/c/store/removed")"
stop_ckptd c
info "(c) a drained version's rm killed in flight: v2 still listed, whole"

# (d) a WAIT for DRAINED (the drain paused) on a version a slow rm removes
# is answered once it is gone: "no such version", not a hang.
CKPT_FAULT="unlink:1+:delay=1000" start_ckptd c
ctl c drain --pause >/dev/null || fail "[d] drain --pause failed"
tw c write "$JOB" v5 "${W[@]}" -S 5 -w local || fail "[d] writing v5 failed"
ctl c wait "$JOB" v5 drained --timeout 60 >"$T/wait.out" 2>&1 &
wpid=$!
ctl c rm "$JOB" v5 >/dev/null || fail "[d] rm v5 failed"
poll_until 10 dead "$wpid" || fail "[d] the WAIT on the removed v5 was not answered"
wait "$wpid" && fail "[d] the WAIT on the removed v5 succeeded"
grep -qi "no such version" "$T/wait.out" || fail "[d] the WAIT said: $(cat "$T/wait.out")"
[ "$(vstate c "$JOB" v5)" = absent ] || fail "[d] v5 is still listed after rm"
ok c v1 1
stop_ckptd c
info "(d) a WAIT on a version being removed is answered once it is gone"
finish
