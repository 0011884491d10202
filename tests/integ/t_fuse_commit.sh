#!/bin/bash
# t_fuse_commit: no commit through the mount lies.
#  - autocommit never seals a version whose writer was killed mid-file: the
#    file is marked cut short, the log says why, the version stays open and
#    `latest` stays on the last good version; once the file is rewritten
#    from offset 0, autocommit seals it whole
#  - autocommit waits for a writer that holds its file open (stopped), and
#    commits the whole file once it closes it; a writer that exits with
#    status 0 without closing is committed too
#  - a rename commit while a file is still open for writing is EBUSY; after
#    the close it commits
#  - mv VER.tmp OTHER is refused (EPERM), never a silent non-commit; the
#    version stays open and mv VER.tmp VER then commits it
#  - truncate -s 1E through the mount is EFBIG; ckptd stays up and small
#  - a child that inherited the writer's fd and exits non-zero (a shell's
#    failing command) does not fail the version: only the last close counts
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

M=$T/mnt
J=cj

# writer FILE MODE: write 1 MiB of "x", then per MODE: "stop" (SIGSTOP
# itself, then 1 MiB of "y" and close), "exit" (os._exit(0) with the file
# open), "hold" (wait for stdin to close, then close).
_WRITER_PY='
import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 1048576)
mode = sys.argv[2]
if mode == "stop":
    os.kill(os.getpid(), signal.SIGSTOP)
    os.write(fd, b"y" * 1048576)
elif mode == "exit":
    os._exit(0)
elif mode == "hold":
    sys.stdin.read()
os.close(fd)
'
writer() { /usr/bin/python3 -c "$_WRITER_PY" "$@"; }

state_of() { vstate a "$J" "$1"; }
state_is() { [ "$(state_of "$1")" = "$2" ]; }
# stopped PID: the process is in state T (stopped).
stopped() { [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = T ]; }
size_is() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]; }

autocommit_cases() {
	start_ckptd a
	mount_ckptfs a "$M" autocommit=1
	# A good version first: latest must stay on it.
	mkdir -p "$M/$J/good.tmp"
	writer "$M/$J/good.tmp/f" close || fail "writer of good failed"
	poll_until 20 state_is good sealed || fail "good was not autocommitted"

	# Killed mid-file: the file is marked cut short, autocommit waits.
	mkdir "$M/$J/killed.tmp"
	/usr/bin/python3 -c "$_WRITER_PY" "$M/$J/killed.tmp/f" stop &
	local wp=$!
	poll_until 10 stopped "$wp" || fail "the writer did not stop"
	kill -KILL "$wp"
	wait "$wp" 2>/dev/null
	cut_logged() { grep -q "killed: file f may be cut short: its writer pid $wp killed by signal 9" "$T/a/ckptfs.log"; }
	poll_until 20 cut_logged ||
		fail "the ckptfs log does not say the writer was killed: $(tail -3 "$T/a/ckptfs.log")"
	poll_until 3 state_is killed sealed &&
		fail "autocommit sealed a version with a file cut short"
	state_is killed open || fail "killed is '$(state_of killed)', want open"
	[ "$(tw a latest "$J")" = good ] || fail "latest is '$(tw a latest "$J")', want good"
	# Rewritten from offset 0 (O_TRUNC): committed, whole.
	writer "$M/$J/killed.tmp/f" close || fail "rewriting killed's file"
	poll_until 20 state_is killed sealed || fail "killed was not autocommitted after the rewrite"
	size_is "$M/$J/killed/f" 1048576 || fail "killed/f is $(stat -c %s "$M/$J/killed/f") bytes, want 1 MiB"

	# Stopped with the file open: not committed; committed whole after.
	mkdir "$M/$J/held.tmp"
	/usr/bin/python3 -c "$_WRITER_PY" "$M/$J/held.tmp/f" stop &
	wp=$!
	poll_until 10 stopped "$wp" || fail "the writer did not stop"
	poll_until 3 state_is held sealed &&
		fail "autocommit sealed a version whose file is open for writing"
	kill -CONT "$wp"
	wait "$wp" || fail "the stopped writer failed after SIGCONT"
	poll_until 20 state_is held sealed || fail "held was not autocommitted after the close"
	size_is "$M/$J/held/f" 2097152 || fail "held/f is $(stat -c %s "$M/$J/held/f") bytes, want 2 MiB"

	# Exit 0 with the file open: the kernel closes it; that is a finish.
	mkdir "$M/$J/exited.tmp"
	writer "$M/$J/exited.tmp/f" exit || fail "the exiting writer failed"
	poll_until 20 state_is exited sealed || fail "exited was not autocommitted"
	umount_ckptfs "$M"
	check_sanitizers a
	stop_ckptd a
}

rename_cases() {
	start_ckptd a
	mount_ckptfs a "$M"
	mkdir -p "$M/$J/r1.tmp"
	exec 8> >(writer "$M/$J/r1.tmp/f" hold)
	poll_until 10 size_is "$M/$J/r1.tmp/f" 1048576 || fail "the holding writer did not write"
	expect_errno EBUSY rename "$M/$J/r1.tmp" "$M/$J/r1"
	exec 8>&-
	poll_until 10 state_is r1 open || fail "r1 is '$(state_of r1)'"
	# The close reaches ckptfs asynchronously: retry the rename until
	# the handle is gone.
	poll_until 10 mv "$M/$J/r1.tmp" "$M/$J/r1" 2>/dev/null ||
		fail "mv r1.tmp r1 after the close failed"
	poll_until 20 state_is r1 sealed || fail "r1 not sealed after the rename"

	mkdir "$M/$J/v3.tmp"
	echo hello >"$M/$J/v3.tmp/f"
	local err
	err=$(mv "$M/$J/v3.tmp" "$M/$J/v7" 2>&1) && fail "mv v3.tmp v7 succeeded"
	case $err in *"not permitted"*) ;; *) fail "mv v3.tmp v7: $err" ;; esac
	[ "$(state_of v7)" = absent ] || fail "v7 exists after a refused rename"
	[ "$(state_of v3)" = open ] || fail "v3 is '$(state_of v3)' after a refused rename"
	grep -q "rename of $J/v3.tmp to $J/v7 refused" "$T/a/ckptfs.log" ||
		fail "the refusal is not logged"
	mv "$M/$J/v3.tmp" "$M/$J/v3" || fail "mv v3.tmp v3 failed"
	poll_until 20 state_is v3 sealed || fail "v3 not sealed"

	# A 1 EiB truncate is refused, cheaply.
	mkdir "$M/$J/big.tmp"
	: >"$M/$J/big.tmp/f"
	err=$(truncate -s 1E "$M/$J/big.tmp/f" 2>&1) && fail "truncate -s 1E succeeded"
	case $err in *"too large"*) ;; *) fail "truncate -s 1E: $err" ;; esac
	truncate -s 8T "$M/$J/big.tmp/f" || fail "truncate -s 8T failed"
	truncate -s 0 "$M/$J/big.tmp/f" || fail "truncate -s 0 failed"
	assert_up a
	local rss
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$(ckptd_pid a)/status")
	[ "$rss" -lt 300000 ] || fail "ckptd uses $rss KiB after big truncates"
	umount_ckptfs "$M"
	check_sanitizers a
	stop_ckptd a
}

child_case() {
	start_ckptd a
	mount_ckptfs a "$M"
	mkdir -p "$M/$J/c1.tmp"
	(
		exec 3>"$M/$J/c1.tmp/f"
		echo part1 >&3
		/bin/false       # a child holding fd 3 exits 1
		x=$(grep -q nosuchthing /etc/hostname)
		echo part2 >&3
		exec 3>&-
	)
	mv "$M/$J/c1.tmp" "$M/$J/c1" || fail "commit after a failing child: $(tail -n 3 "$T/a/ckptfs.log")"
	poll_until 20 state_is c1 sealed || fail "c1 is '$(state_of c1)'"
	[ "$(cat "$M/$J/c1/f")" = "$(printf 'part1\npart2')" ] || fail "c1/f: $(cat "$M/$J/c1/f")"
	umount_ckptfs "$M"
	stop_ckptd a
}

subtest autocommit autocommit_cases
subtest child child_case
subtest rename rename_cases
finish
