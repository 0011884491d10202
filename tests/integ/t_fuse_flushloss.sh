#!/bin/bash
# t_fuse_flushloss: a small write buffered in ckptfs whose flush at close()
# finds no staging never ends in a version committed short:
#  enobufs: staging is held by another client past staging_wait (2 s): the
#     writer's close() says ENOBUFS and the version fails (autocommit does
#     not seal it)
#  killed: the writer is SIGKILLed while its close() waits for staging: the
#     version fails too.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
M=$T/mnt

PY='
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 4096)           # small: buffered in ckptfs, no lease yet
print("written", flush=True)
sys.stdin.readline()                 # the test fills staging meanwhile
print("closing", flush=True)
try:
    os.close(fd)
    print("close ok", flush=True)
except OSError as e:
    print("close", os.strerror(e.errno), flush=True)
'
case_run() {
	local mode=$1 wait=$2
	ckptd_conf a staging=32M staging_client=8M staging_wait=$wait
	start_ckptd a
	mount_ckptfs a "$M" autocommit=3
	mkdir -p "$M/j/v1.tmp"
	mkfifo "$T/go" "$T/hold"
	/usr/bin/python3 -c "$PY" "$M/j/v1.tmp/f" <"$T/go" >"$T/w.out" 2>&1 &
	local wp=$! gp
	exec 8>"$T/go"
	poll_until 10 grep -q written "$T/w.out" || fail "writer did not write"
	# root (no share) takes all 32 MiB of staging and holds it
	CKPT_STAGING=32M "$TW" write g v1 -s "$(sock a)" -n 1 -z 4096 -p <"$T/hold" >"$T/g.out" 2>&1 &
	gp=$!
	exec 9>"$T/hold"
	poll_until 10 grep -q paused "$T/g.out" || fail "greedy did not start: $(cat "$T/g.out")"
	echo >&8
	exec 8>&-
	if [ "$mode" = killed ]; then
		poll_until 10 grep -q closing "$T/w.out" || fail "no close"
		poll_until 5 _elapsed_ms 1000
		kill -KILL "$wp"
		poll_until 10 dead "$wp" || fail "the killed writer is stuck"
	else
		poll_until 20 grep -q "close " "$T/w.out" || fail "close did not return"
	fi
	info "$mode: writer: $(tail -n1 "$T/w.out")"
	exec 9>&-
	wait "$gp"
	# Autocommit (3 s) would have sealed it by now if it were to.
	poll_until 8 _state_is a j v1 sealed || { info "$mode: v1 is $(vstate a j v1): not committed"; return 0; }
	sz=$(stat -c %s "$M/j/v1/f")
	info "$mode: committed j/v1: f has $sz bytes (4096 were written)"
	[ "$sz" = 4096 ] || fail "$mode: a version was committed without a write ckptfs had accepted: f has $sz bytes, want 4096"
}
T0=0
_elapsed_ms() { [ "$T0" != 0 ] && (($(now_ms) - T0 >= $1)) || { [ "$T0" = 0 ] && T0=$(now_ms); false; }; }
subtest enobufs case_run enobufs 2
rm -rf "$T/a" "$T/go" "$T/hold"
subtest killed case_run killed 30
finish
