#!/bin/bash
# t_tenant_fuse: a ckptfs mount holds staging only while it writes or reads,
# and a writer waiting for staging through it can be killed.
#  idle: staging = 16M, staging_client = 8M (two leases).  Two mounts each
#      write, close and read back a file, and read a committed version:
#      their leases are given back once idle (staging_used polls down to 0),
#      and a third writer (not a mount) then gets staging and commits.
#  interrupt: two writers hold all the staging; dd through the mount waits
#      for it.  SIGINT, then (a second dd) SIGKILL: the process is gone
#      within 5 s and never sits in D state for long.  Released, the
#      holders commit and the mount gives back what it got.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"
MB=$((1 << 20))

staging_used() {
	ctl d --json status | /usr/bin/python3 -c '
import json, sys; print(json.load(sys.stdin)["daemon"]["staging_used"])'
}
used_is() { [ "$(staging_used)" = "$1" ]; }

ckptd_conf d staging=16M staging_client=8M keep=100
start_ckptd d
tw d write rjob v0 -n 1 -z $MB -S 5 -w local || fail "writing rjob v0 failed"

# ---- idle --------------------------------------------------------------------
for m in 1 2; do
	mount_ckptfs d "$T/m$m"
	mkdir -p "$T/m$m/j$m/v1.tmp" || fail "mkdir in mount $m failed"
	head -c $((2 * MB)) /dev/urandom >"$T/f$m"
	cp "$T/f$m" "$T/m$m/j$m/v1.tmp/f" || fail "write through mount $m failed"
	cmp "$T/f$m" "$T/m$m/j$m/v1.tmp/f" || fail "read back through mount $m differs"
	find "$T/m$m/rjob/v0" -type f -exec cat {} + >/dev/null || fail "read of a committed version through mount $m failed"
done
info "two mounts wrote and read; staging used: $(staging_used)"
poll_until 15 used_is 0 || fail "the idle mounts still hold $(staging_used) bytes of staging"
timeout 20 "$TW" write w3job v1 -s "$(sock d)" -n 1 -z $((4 * MB)) -S 6 -w local ||
	fail "a third writer did not get staging after the mounts went idle"
for m in 1 2; do
	mv "$T/m$m/j$m/v1.tmp" "$T/m$m/j$m/v1" || fail "commit through mount $m failed"
done

# ---- interrupt -------------------------------------------------------------
mkfifo "$T/hold"
for r in 0 1; do
	tw d write hjob "h$r" -n 1 -z $MB -S $((10 + r)) -p <"$T/hold" >"$T/h$r.out" 2>&1 &
done
exec 9>"$T/hold"
both() { grep -q paused "$T/h0.out" && grep -q paused "$T/h1.out"; }
poll_until 20 both || fail "the holders did not write"
used_is $((16 * MB)) || fail "staging used is $(staging_used), want all 16 MiB held"
M=$T/m1
mkdir -p "$M/j1/v2.tmp" || fail "mkdir v2.tmp failed"

# kill_writer SIG: dd through the mount waits for staging; SIG ends it.
kill_writer() {
	local sig=$1 pid waits st d=0 i
	waits=$(grep -c 'staging: full' "$T/d/ckptd.log")
	# A background job of a script ignores SIGINT: give dd the default.
	/usr/bin/python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("dd", ["dd", "if=/dev/zero", "of=" + sys.argv[1], "bs=1M", "count=1", "status=none"])' \
		"$M/j1/v2.tmp/$sig" 9>&- 2>/dev/null &
	pid=$!
	# Waiting: its file exists, and ckptd queued a HELLO (or it is queued
	# already, from the previous dd).
	waiting() { [ -e "$M/j1/v2.tmp/$sig" ] && { [ "$sig" != INT ] ||
		[ "$(grep -c 'staging: full' "$T/d/ckptd.log")" -gt "$waits" ]; }; }
	poll_until 10 waiting || fail "dd did not start waiting for staging"
	alive "$pid" || fail "dd finished without staging"
	kill -"$sig" "$pid"
	gone() {
		st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) || return 0
		[ "${st%% *}" = D ] && d=$((d + 1))
		[ "${st%% *}" = Z ]
	}
	poll_until 5 gone || fail "dd still there 5 s after SIG$sig (state ${st%% *})"
	wait "$pid" 2>/dev/null
	info "SIG$sig: dd gone; seen in D state in $d polls"
	((d <= 20)) || fail "dd sat in D state for $d polls (50 ms each)"
}
kill_writer INT
kill_writer KILL
assert_mounted "$M"
exec 9>&-
sealed() { [ "$(vstate d hjob "$1")" = sealed ]; }
for r in 0 1; do
	poll_until 20 sealed "h$r" || fail "holder $r did not commit"
done
poll_until 15 used_is 0 || fail "staging used is $(staging_used) after everyone went idle"
# A writer killed with its file open marks that file cut short (never
# committed so); the mount goes on: a new version commits.
grep -q "j1/v2: file .* may be cut short: its writer pid .* killed by signal" "$T/d/ckptfs.log" ||
	fail "the ckptfs log does not say v2's file was cut short by its writer's death"
[ "$(vstate d j1 v2)" != sealed ] || fail "v2 was sealed although its writers were killed"
mkdir -p "$M/j1/v3.tmp" || fail "mkdir v3.tmp failed"
echo ok >"$M/j1/v3.tmp/f" || fail "write v3"
mv "$M/j1/v3.tmp" "$M/j1/v3" || fail "committing v3 failed"
info "interrupted writers were gone at once; the mount gave its staging back"
