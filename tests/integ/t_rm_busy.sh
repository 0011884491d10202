#!/bin/bash
# t_rm_busy: `ckptctl rm` of a version that is busy for a moment (its drain
# copy running, under a 4 MiB/s cap) waits until it is not, then removes
# what it would have removed: the local copy, the PFS copy staying.
#  - `--timeout 0` fails at once, "busy" (what ckpt_remove() answers);
#  - `--timeout 0.5` fails after its wait, "still busy after 0.5 s";
#  - with the default timeout rm waits for the copy, exits 0 and says the
#    PFS copy stays; the version reads back from the PFS after a SIGKILL
#    and two clean restarts, and a second rm removes it there;
#  - two rms of v2 started while it drains: one removes the local copy, the
#    other removes nothing (the copy it waited to remove is gone), and v2
#    stays on the PFS (both rms used to go on: one removed the PFS copy);
#  - an open version a writer holds: rm fails at once, saying so, and the
#    writer's commit then succeeds;
#  - an rm that looked at a version, then removes it (ckpt_remove_if(),
#    paused in between): nothing is removed if another rm took the copy it
#    saw (the PFS copy stays) or the version was written again, and it
#    removes a version it looked at while the version was being sealed.
# (It used to fail at once with "Device or resource busy", and a script had
# to retry.)
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
PFS=$T/pfs
MB=$((1 << 20))
drain_conf a bandwidth=4M
start_ckptd a

# v1: 24 MiB, 6 s of copying at 4 MiB/s.
tw a write j v1 -n 1 -z $((24 * MB)) -S 1 -w local || fail "v1"
copying() { ctl a status 2>/dev/null | grep -q "[1-9] copying"; }
poll_until 30 copying || fail "v1's copy did not start"

ctl a rm --timeout 0 j v1 >"$T/rm0.out" 2>&1 && fail "rm --timeout 0 of v1 while it drains succeeded: $(cat "$T/rm0.out")"
grep -qi "busy" "$T/rm0.out" || fail "rm --timeout 0 while v1 drains: $(cat "$T/rm0.out")"
ctl a rm --timeout 0.5 j v1 >"$T/rm1.out" 2>&1 && fail "rm --timeout 0.5 of v1 while it drains succeeded: $(cat "$T/rm1.out")"
grep -q "still busy after 0.5 s" "$T/rm1.out" || fail "rm --timeout 0.5 while v1 drains: $(cat "$T/rm1.out")"
copying || fail "v1's copy ended before the waiting rm started (the test's premise)"
[ "$(vlevel a j v1)" != drained ] || fail "v1 is drained already (the test's premise)"
info "rm while v1 drains: --timeout 0 and 0.5 fail as busy"

ctl a rm j v1 >"$T/rm.out" 2>&1 || fail "rm of v1 did not wait for its drain: $(cat "$T/rm.out")"
grep -q "local copy removed; the PFS copy stays" "$T/rm.out" || fail "rm of v1 says: $(cat "$T/rm.out")"
level_is a j v1 drained || fail "v1 is at $(vlevel a j v1) after the rm"
no_local() {
	ctl a --json ls j v1 2>/dev/null | /usr/bin/python3 -c '
import json, sys
i = json.load(sys.stdin)["info"]
sys.exit(not ("local" not in i["copies"] and "pfs" in i["copies"]))'
}
no_local || fail "v1 after the rm: $(ctl a ls j v1 | head -1)"
info "rm waited for v1's drain, then removed its local copy"

# v2: two rms at once, both waiting for the copy.
tw a write j v2 -n 1 -z $((24 * MB)) -S 2 -w local || fail "v2"
poll_until 30 copying || fail "v2's copy did not start"
ctl a rm j v2 >"$T/rmA.out" 2>&1 &
RA=$!
ctl a rm j v2 >"$T/rmB.out" 2>&1 &
RB=$!
copying || fail "v2's copy ended before both rms started (the test's premise)"
wait $RA; ea=$?
wait $RB; eb=$?
outs="A ($ea): $(cat "$T/rmA.out") / B ($eb): $(cat "$T/rmB.out")"
[ $((ea + eb)) -eq 1 ] || fail "two rms of v2 while it drained: not exactly one succeeded: $outs"
cat "$T/rmA.out" "$T/rmB.out" | grep -q "local copy removed; the PFS copy stays" ||
	fail "two rms of v2: neither removed the local copy: $outs"
cat "$T/rmA.out" "$T/rmB.out" | grep -q "nothing removed" ||
	fail "two rms of v2: the one that failed does not say nothing was removed: $outs"
[ -e "$(pfs_vdir j v2)/manifest" ] || fail "two rms of v2 removed its PFS copy: $outs"
info "two rms of v2 while it drained: one removed the local copy, the other nothing"

# o1: open, its writer paused before its commit.
mkfifo "$T/hold"
tw a write j o1 -n 1 -z $MB -S 3 -w local -p <"$T/hold" >"$T/o1.out" 2>"$T/o1.err" &
wpid=$!
exec 9>"$T/hold"
poll_until 30 grep -q paused "$T/o1.out" || fail "o1's writer never paused: $(cat "$T/o1.err")"
ctl a rm j o1 >"$T/rmo.out" 2>&1 && fail "rm of o1, open with its writer, succeeded"
grep -q "open, a writer still holds it" "$T/rmo.out" || fail "rm of o1, open with its writer: $(cat "$T/rmo.out")"
exec 9>&-
wait $wpid || fail "o1's writer failed after the refused rm: $(cat "$T/o1.err")"
info "rm of an open version a writer holds fails at once, and the writer commits"

# v3, v4: the window between an rm's look at a version and its removal.
# `tw rm -p` stats the version, pauses, then removes it on the condition
# that it is still what it saw (ckpt_remove_if()).  Meanwhile another rm
# drops v3's local copy: the paused rm must not take the PFS copy, now
# v3's next one.  v4 is removed from both copies and written again: the
# paused rm must not remove the new v4.
rm_paused() {   # VERSION FIFO: start a paused `tw rm -p`; RPID
	mkfifo "$T/$2"
	tw a rm j "$1" -p <"$T/$2" >"$T/$2.out" 2>"$T/$2.err" &
	RPID=$!
	exec 8>"$T/$2"
	poll_until 30 grep -q paused "$T/$2.out" || fail "tw rm -p $1 never paused: $(cat "$T/$2.err")"
}
tw a write j v3 -n 1 -z $MB -S 4 -w local || fail "v3"
tw a write j v4 -n 1 -z $MB -S 5 -w local || fail "v4"
poll_until 60 level_is a j v3 drained || fail "v3 did not drain"
poll_until 60 level_is a j v4 drained || fail "v4 did not drain"
rm_paused v3 h3
ctl a rm j v3 >"$T/rm3.out" 2>&1 || fail "rm of v3 under the paused rm: $(cat "$T/rm3.out")"
exec 8>&-
wait $RPID && fail "the paused rm of v3 succeeded after v3 lost the local copy it saw"
grep -q "nothing was removed" "$T/h3.err" || fail "the paused rm of v3 says: $(cat "$T/h3.err")"
[ -e "$(pfs_vdir j v3)/manifest" ] || fail "the paused rm of v3 removed its PFS copy"
rm_paused v4 h4
ctl a rm j v4 >/dev/null 2>&1 && ctl a rm j v4 >/dev/null 2>&1 || fail "two rms of v4"
tw a write j v4 -n 1 -z $MB -S 6 -w local || fail "v4 written again"
exec 8>&-
wait $RPID && fail "the paused rm of v4 removed the v4 written after it looked"
grep -q "nothing was removed" "$T/h4.err" || fail "the paused rm of v4 says: $(cat "$T/h4.err")"
poll_until 60 level_is a j v4 drained || fail "v4 (again) did not drain"
rm_paused v4 h5
exec 8>&-
wait $RPID || fail "a paused rm of v4 with nothing in between: $(cat "$T/h5.err")"
level_is a j v4 drained || fail "v4 is at $(vlevel a j v4) after its local copy was removed"
info "an rm that looked at a version removes nothing once another rm took its copy or it was rewritten"

# s1..s3 on b (no drain): removed right after the commit, by a stat taken
# while the version is being sealed (its data synced: seq set, no seal time
# yet) and ckpt_remove_if() of it retried while busy.  It used to fail
# every time with "changed": the seal time it saw (0) was not the one the
# seal ended with.
start_ckptd b
saw=0
for i in 1 2 3; do
	tw b write j s$i -n 2 -z $((16 * MB)) -S 7 -D >"$T/s$i.out" 2>&1 ||
		fail "s$i removed as stat saw it while it was sealed: $(cat "$T/s$i.out")"
	[ "$(vstate b j s$i)" = absent ] || fail "s$i is $(vstate b j s$i) after its rm"
	grep -q "rm saw sealing sealed_ns 0" "$T/s$i.out" && saw=$((saw + 1))
done
[ $saw -gt 0 ] || fail "no rm of s1..s3 saw its version before the seal ended (the test's premise): $(cat "$T"/s?.out)"
stop_ckptd b
info "an rm that looked while the version was being sealed removes it ($saw of 3 looked before the seal time was set)"

check() {
	no_local && tw a verify j v1 -n 1 -z $((24 * MB)) -S 1 >/dev/null &&
		tw a verify j v3 -n 1 -z $MB -S 4 >/dev/null &&
		tw a verify j v4 -n 1 -z $MB -S 6 >/dev/null &&
		tw a verify j v2 -n 1 -z $((24 * MB)) -S 2 >/dev/null &&
		tw a verify j o1 -n 1 -z $MB -S 3 >/dev/null
}
each_restart a check
ctl a rm j v1 >"$T/rm2.out" 2>&1 || fail "the second rm of v1: $(cat "$T/rm2.out")"
grep -q "removed from the PFS" "$T/rm2.out" || fail "the second rm of v1 says: $(cat "$T/rm2.out")"
[ ! -e "$(pfs_vdir j v1)" ] || fail "v1 is still on the PFS after the second rm"
info "v1 read back from the PFS after the restarts; the second rm removed it there"
stop_ckptd a
finish
