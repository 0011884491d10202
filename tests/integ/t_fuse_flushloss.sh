#!/bin/bash
# t_fuse_flushloss: a small write buffered in ckptfs whose flush finds no
# staging never ends in a version committed short:
#  enobufs: staging is held by another client past staging_wait (2 s): the
#     writer's close() says ENOBUFS and the version fails, in ckptd too
#     (ckptfs aborts its writer there: it used to stay open in ckptd, so
#     that `mkdir v1.tmp` again joined it and `mv v1.tmp v1` returned 0
#     without sealing it); v1 written again under its name then commits
#     with every byte
#  killed: the writer is SIGKILLed while its close() waits for staging: the
#     version fails too, and is written again the same way
#  fsync: an fsync that finds no staging says ENOBUFS and fails nothing
#     (it used to fail the version): the bytes stay buffered, and once
#     staging is free the close succeeds and autocommit seals the file
#     whole.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
M=$T/mnt

PY='
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 4096)           # small: buffered in ckptfs, no lease yet
print("written", flush=True)
sys.stdin.readline()                 # the test fills staging meanwhile
if sys.argv[2] == "fsync":
    try:
        os.fsync(fd)
        print("fsync ok", flush=True)
    except OSError as e:
        print("fsync", os.strerror(e.errno), flush=True)
    sys.stdin.readline()             # the test frees staging meanwhile
print("closing", flush=True)
try:
    os.close(fd)
    print("close ok", flush=True)
except OSError as e:
    print("close", os.strerror(e.errno), flush=True)
'
# whole_x FILE: FILE is the writer's 4096 bytes of "x".
whole_x() { [ "$(tr -d x <"$1" | wc -c)" = 0 ] && [ "$(stat -c %s "$1")" = 4096 ]; }
not_open() { local s; s=$(vstate a j v1); [ "$s" != open ] && [ "${s#error}" = "$s" ]; }

case_run() {
	local mode=$1 wait=$2
	ckptd_conf a staging=32M staging_client=8M staging_wait=$wait
	start_ckptd a
	mount_ckptfs a "$M" autocommit=3
	mkdir -p "$M/j/v1.tmp"
	mkfifo "$T/go" "$T/hold"
	/usr/bin/python3 -c "$PY" "$M/j/v1.tmp/f" "$mode" <"$T/go" >"$T/w.out" 2>&1 &
	local wp=$! gp
	exec 8>"$T/go"
	poll_until 10 grep -q written "$T/w.out" || fail "writer did not write"
	# root (no share) takes all 32 MiB of staging and holds it
	CKPT_STAGING=32M "$TW" write g v1 -s "$(sock a)" -n 1 -z 4096 -p <"$T/hold" >"$T/g.out" 2>&1 &
	gp=$!
	exec 9>"$T/hold"
	poll_until 10 grep -q paused "$T/g.out" || fail "greedy did not start: $(cat "$T/g.out")"
	echo >&8
	case $mode in
	killed)
		exec 8>&-
		poll_until 10 grep -q closing "$T/w.out" || fail "no close"
		poll_until 5 _elapsed_ms 1000
		kill -KILL "$wp"
		poll_until 10 dead "$wp" || fail "the killed writer is stuck"
		;;
	enobufs)
		exec 8>&-
		poll_until 20 grep -q "close " "$T/w.out" || fail "close did not return"
		grep -q "close No buffer space available" "$T/w.out" ||
			fail "enobufs: the close that found no staging says: $(tail -n1 "$T/w.out")"
		;;
	fsync)
		poll_until 20 grep -q "fsync " "$T/w.out" || fail "fsync did not return"
		grep -q "fsync No buffer space available" "$T/w.out" ||
			fail "fsync: the fsync that found no staging says: $(tail -n1 "$T/w.out")"
		[ "$(vstate a j v1)" = open ] && [ -d "$M/j/v1.tmp" ] ||
			fail "fsync: its ENOBUFS failed the version: ckptd has it $(vstate a j v1)"
		exec 9>&-
		wait "$gp"
		echo >&8
		exec 8>&-
		poll_until 20 grep -q "close " "$T/w.out" || fail "close did not return"
		grep -q "close ok" "$T/w.out" ||
			fail "fsync: the close after staging was freed says: $(tail -n1 "$T/w.out")"
		poll_until 15 _state_is a j v1 sealed || fail "fsync: autocommit did not seal v1: $(vstate a j v1)"
		whole_x "$M/j/v1/f" || fail "fsync: v1's f is not the 4096 bytes written: $(stat -c %s "$M/j/v1/f") bytes"
		info "fsync: ENOBUFS kept the bytes; v1 sealed whole after the close"
		return 0
		;;
	esac
	info "$mode: writer: $(tail -n1 "$T/w.out")"
	exec 9>&-
	wait "$gp"
	# ckptd fails it too at once: no writer of the mount's is left in it,
	# so neither `ckptctl commit` nor the next mkdir of the name joins it.
	poll_until 10 not_open || fail "$mode: ckptd still has v1 $(vstate a j v1) after ckptfs failed it"
	poll_until 10 test ! -e "$M/j/v1.tmp" || fail "$mode: the failed v1.tmp is still listed"
	_state_is a j v1 sealed && fail "$mode: the failed v1 was sealed: f has $(stat -c %s "$M/j/v1/f") bytes"
	# Written again under its name: a new version, committed whole.
	mkdir "$M/j/v1.tmp" || fail "$mode: mkdir v1.tmp after the failure"
	[ -z "$(ls "$M/j/v1.tmp")" ] || fail "$mode: v1.tmp written again shows the failed one's files: $(ls "$M/j/v1.tmp")"
	head -c 4096 /dev/zero | tr '\0' x >"$M/j/v1.tmp/f" || fail "$mode: writing f again"
	mv "$M/j/v1.tmp" "$M/j/v1" || fail "$mode: the commit of v1 written again"
	poll_until 10 _state_is a j v1 sealed || fail "$mode: v1 written again and committed is $(vstate a j v1), not sealed"
	whole_x "$M/j/v1/f" || fail "$mode: v1 written again: f is not its 4096 bytes"
	info "$mode: v1 failed in ckptd too; written again, it committed whole"
}
T0=0
_elapsed_ms() { [ "$T0" != 0 ] && (($(now_ms) - T0 >= $1)) || { [ "$T0" = 0 ] && T0=$(now_ms); false; }; }
subtest enobufs case_run enobufs 2
rm -rf "$T/a" "$T/go" "$T/hold"
subtest killed case_run killed 30
rm -rf "$T/a" "$T/go" "$T/hold"
subtest fsync case_run fsync 2
finish
