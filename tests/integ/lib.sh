# lib.sh - shared harness of the integration tests (sourced, not run).
#
# Each test gets a private directory $T (mktemp -d) and an EXIT trap that,
# whatever happens, unmounts every ckptfs the test mounted (and kills it),
# stops every ckptd the test started (SIGTERM, then SIGKILL once a polled
# grace deadline passes), kills the test's other background processes,
# unmounts what it mounted and removes $T.  Daemons are named
# (start_ckptd NAME): each has $T/NAME/ckptd.conf, its state under $T/NAME,
# its socket $T/NAME/ckptd.sock and its log $T/NAME/ckptd.log.
#
# There are no fixed sleeps: everything that waits polls a condition against
# a deadline (poll_until), and deadlines scale by $CKPT_SCALE (default 1, or
# 10 under CKPT_VALGRIND=1, which runs ckptd under valgrind).
#
# Exit codes: 0 pass, 1 fail, 77 skip.

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${CKPT_BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CKPTD=$BUILD/ckptd
CKPTCTL=$BUILD/ckptctl
CKPTFS=$BUILD/ckptfs
TW=$BUILD/tests/ckpt_tw
RAW=$BUILD/tests/ckpt_raw
TEST=$(basename "$0" .sh)
# The peer protocol version, for tests that build peer frames by hand.
export PEER_VERSION=$(sed -n 's/^#define PEER_VERSION *\([0-9]*\).*/\1/p' "$ROOT/lib/peer.h")

if [ "${CKPT_VALGRIND:-0}" = 1 ]; then
	SCALE=${CKPT_SCALE:-10}
else
	SCALE=${CKPT_SCALE:-1}
fi

for _bin in "$CKPTD" "$TW" "$RAW"; do
	if [ ! -x "$_bin" ]; then
		echo "$TEST: $_bin is not built (make check-integ builds it)" >&2
		exit 1
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-$TEST.XXXXXX") || exit 1
# Sanitizer reports of every process the test starts go to files in
# SAN_DIR (log_path), clients' included: a test that expects a client to
# fail would swallow its report (and exit status) otherwise.  _cleanup
# fails the test if any is there.  Beside $T, 1777: clients run as test
# users too.  (Only sanitized builds write here.)
SAN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-san.XXXXXX") || exit 1
chmod 1777 "$SAN_DIR"
for _v in ASAN_OPTIONS TSAN_OPTIONS UBSAN_OPTIONS; do
	export "$_v=${!_v:+${!_v}:}log_path=$SAN_DIR/report"
done
unset _v
# What a sanitizer report looks like in a daemon's log.
SAN_RE='(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|runtime error:'
declare -A CKPTD_PID=()      # NAME -> pid of the running ckptd
declare -A CKPTD_ARGS=()     # NAME -> extra ckptd arguments (restart keeps)
CKPTD_LAST=                  # the name started last (log tail on failure)
SUBTEST=                     # name of the running sub-test, if any
SUBFAILS=()                  # sub-tests that failed
MOUNTS=()
declare -A FUSE_PID=()       # mount point -> pid of the ckptfs serving it
declare -A FUSE_LOG=()       # mount point -> its log file
declare -A FUSE_LOGOFF=()    # mount point -> where this mount's part of it starts

# ---- messages ---------------------------------------------------------------

info() { echo "$TEST: $*"; }

# dump_logs [N]: the last N (30) lines of the log of each daemon that is
# running, or else of the one started last.
dump_logs() {
	local n names=("${!CKPTD_PID[@]}")
	[ ${#names[@]} -gt 0 ] || names=(${CKPTD_LAST:+"$CKPTD_LAST"})
	for n in "${names[@]}"; do
		[ -f "$T/$n/ckptd.log" ] || continue
		echo "---- ckptd $n log (last ${1:-30} lines) ----"
		tail -n "${1:-30}" "$T/$n/ckptd.log"
	done
	local seen=" "
	for n in "${!FUSE_LOG[@]}"; do
		[ -s "${FUSE_LOG[$n]}" ] || continue
		case $seen in *" ${FUSE_LOG[$n]} "*) continue ;; esac
		seen="$seen${FUSE_LOG[$n]} "
		echo "---- ckptfs log ${FUSE_LOG[$n]#"$T/"} (last ${1:-30} lines) ----"
		tail -n "${1:-30}" "${FUSE_LOG[$n]}"
	done
}

# fail "message": the test (or sub-test) failed.  Prints the message and the
# daemon logs, and exits.
fail() {
	local _m
	echo "FAIL: $TEST${SUBTEST:+ [$SUBTEST]}: $*" >&2
	for _m in "${!FUSE_PID[@]}"; do
		alive "${FUSE_PID[$_m]}" ||
			echo "NOTE: the ckptfs serving $_m (pid ${FUSE_PID[$_m]}) has died" >&2
	done
	dump_logs 30 >&2
	exit 1
}

skip() {
	echo "SKIP: $TEST: $*"
	exit 77
}

# ---- deadlines --------------------------------------------------------------

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# scaled SECONDS: a deadline in seconds, scaled by $SCALE.
scaled() { echo $(($1 * SCALE)); }

# poll_until SECONDS CMD...: run CMD until it succeeds (0) or SECONDS (scaled)
# pass (1).  The only place a test waits: 50 ms between checks.
poll_until() {
	local limit=$(($(scaled "$1") * 1000)) start
	shift
	start=$(now_ms)
	while :; do
		"$@" && return 0
		(($(now_ms) - start >= limit)) && return 1
		sleep 0.05   # between checks of a deadline poll
	done
}

# out_is WANT CMD...: CMD prints WANT; out_gt WANT CMD...: a number above
# WANT.  For poll_until, which runs them at each check (a "$(...)" in its
# arguments would be expanded once, before the first).
out_is() { local want=$1; shift; [ "$("$@")" = "$want" ]; }
out_gt() { local n; n=$1; shift; local got; got=$("$@"); [ "${got:-0}" -gt "$n" ] 2>/dev/null; }

# alive PID: the process exists and is not a zombie.
alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
dead() { ! alive "$1"; }

# ---- daemons ----------------------------------------------------------------

sock() { echo "$T/$1/ckptd.sock"; }
ckptd_pid() { echo "${CKPTD_PID[$1]:-}"; }

# ckptd_conf NAME [KEY=VALUE...]: write $T/NAME/ckptd.conf with test-sized
# defaults (the given keys win).
ckptd_conf() {
	local name=$1 kv
	shift
	mkdir -p "$T/$name"
	{
		echo "# $TEST: ckptd $name"
		echo "[ckptd]"
		echo "dir = $T/$name"
		declare -A seen=()
		for kv in "$@"; do seen[${kv%%=*}]=1; done
		[ -n "${seen[staging]:-}" ] || echo "staging = 64M"
		[ -n "${seen[staging_client]:-}" ] || echo "staging_client = 16M"
		[ -n "${seen[reserve]:-}" ] || echo "reserve = 0"
		[ -n "${seen[segment]:-}" ] || echo "segment = 16M"
		[ -n "${seen[mlock]:-}" ] || echo "mlock = no"
		[ -n "${seen[log_level]:-}" ] || echo "log_level = info"
		for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}"; done
	} >"$T/$name/ckptd.conf"
}

# Holding writers: a test makes a FIFO, starts writers with `ckpt_tw -p`
# reading it, and holds it open on fd 9 (exec 9>FIFO) until it wants them to
# commit (exec 9>&-).  Anything started meanwhile must not inherit fd 9, or
# the FIFO never reaches EOF: start_ckptd closes it, and so must the test.

# start_ckptd NAME [ARGS...]: start ckptd with $T/NAME/ckptd.conf (written
# by ckptd_conf, or a default one) in the background and wait until it
# answers.  The environment of the call (CKPT_FAULT=...) reaches it.
start_ckptd() {
	local name=$1 pid
	shift
	[ -f "$T/$name/ckptd.conf" ] || ckptd_conf "$name"
	[ -z "${CKPTD_PID[$name]:-}" ] || fail "start_ckptd $name: already running"
	CKPTD_ARGS[$name]="$*"
	CKPTD_LAST=$name
	echo "==== $TEST: start ckptd $name${CKPT_FAULT:+ CKPT_FAULT=$CKPT_FAULT} ====" \
		>>"$T/$name/ckptd.log"
	if [ "${CKPT_VALGRIND:-0}" = 1 ]; then
		valgrind -q --error-exitcode=99 --leak-check=full \
			"$CKPTD" -c "$T/$name/ckptd.conf" "$@" \
			>>"$T/$name/ckptd.log" 2>&1 9>&- &
	else
		"$CKPTD" -c "$T/$name/ckptd.conf" "$@" \
			>>"$T/$name/ckptd.log" 2>&1 9>&- &
	fi
	pid=$!
	CKPTD_PID[$name]=$pid
	wait_ready "$name"
}

_ready_probe() {
	local name=$1 pid=${CKPTD_PID[$1]}
	if dead "$pid"; then
		_reap "$name"
		fail "ckptd $name (pid $pid) died during startup, exit status $REAPED"
	fi
	"$RAW" -s "$(sock "$name")" ping 2>"$T/probe.err"
}

# wait_ready NAME: poll until the daemon answers a STATUS on its socket;
# fails at once if it died, and after 10 s (scaled) if it never answers.
wait_ready() {
	poll_until 10 _ready_probe "$1" ||
		fail "ckptd $1 not ready after $(scaled 10) s: $(cat "$T/probe.err")"
}

# assert_up NAME: the daemon is alive and answers.
assert_up() {
	local pid=${CKPTD_PID[$1]:-}
	[ -n "$pid" ] && alive "$pid" || fail "ckptd $1 is not running"
	"$RAW" -s "$(sock "$1")" ping || fail "ckptd $1 does not answer"
}

# _reap NAME: wait for the (dead) daemon and forget it; its exit status is
# left in REAPED.
_reap() {
	local pid=${CKPTD_PID[$1]}
	wait "$pid" 2>/dev/null
	REAPED=$?
	unset "CKPTD_PID[$1]"
}

# kill9 NAME: SIGKILL the daemon and reap it (a crash).
kill9() {
	local pid=${CKPTD_PID[$1]:-}
	[ -n "$pid" ] || fail "kill9 $1: not running"
	kill -KILL "$pid" 2>/dev/null
	_reap "$1"
	echo "==== $TEST: killed with SIGKILL ====" >>"$T/$1/ckptd.log"
}

# stop_ckptd NAME: SIGTERM, wait (deadline) for a clean exit with status 0.
stop_ckptd() {
	local pid=${CKPTD_PID[$1]:-}
	[ -n "$pid" ] || fail "stop_ckptd $1: not running"
	kill -TERM "$pid" 2>/dev/null
	poll_until 20 dead "$pid" || fail "ckptd $1 did not stop within $(scaled 20) s of SIGTERM"
	_reap "$1"
	[ "$REAPED" = 0 ] || fail "ckptd $1 exited with status $REAPED after SIGTERM"
	check_sanitizers "$1"
}

# restart NAME [ARGS...]: crash the daemon (SIGKILL) and start it again on the
# same config and store.  Without ARGS it keeps the previous ones.
restart() {
	local name=$1
	shift
	[ -z "${CKPTD_PID[$name]:-}" ] || kill9 "$name"
	if [ $# -gt 0 ]; then
		start_ckptd "$name" "$@"
	else
		# shellcheck disable=SC2086
		start_ckptd "$name" ${CKPTD_ARGS[$name]}
	fi
}

# check_sanitizers NAME: fail if the daemon log has a sanitizer or valgrind
# report.
check_sanitizers() {
	if grep -qE "$SAN_RE|== ?ERROR SUMMARY: [1-9]" \
		"$T/$1/ckptd.log" 2>/dev/null; then
		fail "ckptd $1: sanitizer or valgrind report in its log"
	fi
}

# mount_tmpfs DIR SIZE: mount a tmpfs (skips the test if not permitted).
mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2" ckpt-test "$1" 2>/dev/null ||
		skip "cannot mount a tmpfs (not root or no permission)"
	MOUNTS+=("$1")
}

# ---- ckptfs (FUSE) -----------------------------------------------------------
#
# mount_ckptfs NAME MNT [OPTIONS] mounts build/ckptfs over daemon NAME's
# socket at MNT, in the foreground (-f) as a background job of the test, and
# registers it: the EXIT trap (and a sub-test's) unmounts it (fusermount3 -u,
# else -uz, lazily, when it is busy) and kills it, whatever happened.  Its
# output goes to $T/NAME/ckptfs.log, shown on failure with the daemon logs.

# need_fuse: skip the test (77) unless this machine can make FUSE mounts;
# fail if ckptfs is not built.
need_fuse() {
	grep -qw fuse /proc/filesystems 2>/dev/null ||
		skip "the kernel has no FUSE support (no 'fuse' in /proc/filesystems)"
	[ -c /dev/fuse ] || skip "/dev/fuse is missing (FUSE is not available here)"
	[ -r /dev/fuse ] && [ -w /dev/fuse ] ||
		skip "/dev/fuse is not usable by uid $(id -u)"
	command -v fusermount3 >/dev/null ||
		skip "fusermount3 is not installed (Debian package fuse3; make deps installs it)"
	[ -x "$CKPTFS" ] || fail "$CKPTFS is not built (make check-integ builds it)"
}

# _fuse_key MNT: the absolute path MNT is registered under, computed without
# touching MNT itself (a hung mount would block a stat of it).
_fuse_key() {
	local d
	d=$(realpath -m "$(dirname "$1")") || d=$(dirname "$1")
	echo "${d%/}/$(basename "$1")"
}

# _fuse_mounted MNT: MNT is a FUSE mount, as /proc/self/mounts says.
_fuse_mounted() {
	awk -v m="$1" '$2 == m && $3 ~ /^fuse/ { f = 1 } END { exit !f }' \
		/proc/self/mounts
}

# ckptfs_pid MNT: pid of the ckptfs serving MNT ("" if none).
ckptfs_pid() { echo "${FUSE_PID[$(_fuse_key "$1")]:-}"; }

_fuse_up() {
	local mnt=$1 pid=${FUSE_PID[$1]} st
	if dead "$pid"; then
		wait "$pid" 2>/dev/null
		st=$?
		unset "FUSE_PID[$mnt]"
		fail "ckptfs for $mnt (pid $pid) exited during the mount, status $st"
	fi
	_fuse_mounted "$mnt"
}

# mount_ckptfs NAME MNT [OPTIONS]: mount ckptfs at MNT (made if missing) as a
# client of daemon NAME, with "-o OPTIONS" if given, and wait (10 s, scaled)
# until the mount is there; fails at once if ckptfs exits.
mount_ckptfs() {
	local name=$1 mnt opts=${3:-} log pid
	mkdir -p "$2" || fail "mount_ckptfs: cannot make $2"
	mnt=$(_fuse_key "$2")
	[ -z "${FUSE_PID[$mnt]:-}" ] || fail "mount_ckptfs: $mnt is already mounted by this test"
	! _fuse_mounted "$mnt" || fail "mount_ckptfs: $mnt is already a FUSE mount"
	mkdir -p "$T/$name"
	log=$T/$name/ckptfs.log
	FUSE_LOG[$mnt]=$log
	FUSE_LOGOFF[$mnt]=$(($(stat -c %s "$log" 2>/dev/null || echo 0) + 1))
	echo "==== $TEST: mount $mnt over ckptd $name${opts:+ -o $opts} ====" >>"$log"
	"$CKPTFS" -s "$(sock "$name")" "$mnt" -f ${opts:+-o "$opts"} \
		>>"$log" 2>&1 </dev/null 9>&- &
	pid=$!
	FUSE_PID[$mnt]=$pid
	poll_until 10 _fuse_up "$mnt" ||
		fail "ckptfs (pid $pid) did not mount $mnt within $(scaled 10) s"
	timeout "$(scaled 10)" stat "$mnt" >/dev/null ||
		fail "ckptfs mounted $mnt but a stat of it fails or hangs"
}

# umount_ckptfs MNT: a clean unmount (fusermount3 -u; fails if busy); wait
# (30 s, scaled) for ckptfs to flush and exit with status 0.
umount_ckptfs() {
	local mnt pid st
	mnt=$(_fuse_key "$1")
	pid=${FUSE_PID[$mnt]:-}
	[ -n "$pid" ] || fail "umount_ckptfs: $mnt is not mounted by this test"
	timeout "$(scaled 20)" fusermount3 -u "$mnt" 2>"$T/fusermount.err" ||
		fail "fusermount3 -u $mnt failed: $(cat "$T/fusermount.err")"
	poll_until 30 dead "$pid" ||
		fail "ckptfs for $mnt (pid $pid) still running $(scaled 30) s after its unmount"
	wait "$pid" 2>/dev/null
	st=$?
	unset "FUSE_PID[$mnt]"
	echo "==== $TEST: unmounted $mnt, ckptfs exit status $st ====" >>"${FUSE_LOG[$mnt]}"
	check_fuse_sanitizers "$mnt"
	[ "$st" = 0 ] || fail "ckptfs for $mnt exited with status $st after a clean unmount"
}

# assert_mounted MNT: ckptfs is alive, MNT is mounted and answers a stat.
assert_mounted() {
	local mnt pid
	mnt=$(_fuse_key "$1")
	pid=${FUSE_PID[$mnt]:-}
	[ -n "$pid" ] && alive "$pid" || fail "ckptfs for $mnt is not running"
	_fuse_mounted "$mnt" || fail "$mnt is no longer mounted"
	timeout "$(scaled 10)" stat "$mnt" >/dev/null || fail "$mnt does not answer a stat"
}

# check_fuse_sanitizers MNT: fail if the log of the (last) ckptfs mounted
# at MNT has a sanitizer report.
check_fuse_sanitizers() {
	local key log
	key=$(_fuse_key "$1")
	log=${FUSE_LOG[$key]:-}
	[ -n "$log" ] || return 0
	if tail -c "+${FUSE_LOGOFF[$key]:-1}" "$log" 2>/dev/null |
		grep -qE "$SAN_RE"; then
		fail "ckptfs for $1: sanitizer report in its log"
	fi
}

# _unmount_ckptfs_all: the cleanup.  Unmount every registered ckptfs
# (fusermount3 -u, else lazily with -uz), give them all a polled 10 s
# (scaled) to exit, then SIGTERM those left, then (5 s) SIGKILL.  Never fails.
_all_fuse_dead() {
	local mnt
	for mnt in "${!FUSE_PID[@]}"; do
		alive "${FUSE_PID[$mnt]}" && return 1
	done
	return 0
}
_unmount_ckptfs_all() {
	local mnt sig
	for mnt in "${!FUSE_PID[@]}"; do
		if _fuse_mounted "$mnt"; then
			timeout 10 fusermount3 -u "$mnt" 2>/dev/null ||
				timeout 10 fusermount3 -uz "$mnt" 2>/dev/null ||
				umount -l "$mnt" 2>/dev/null
		fi
	done
	for sig in TERM KILL; do
		poll_until "$([ $sig = TERM ] && echo 10 || echo 5)" _all_fuse_dead && break
		for mnt in "${!FUSE_PID[@]}"; do
			kill -"$sig" "${FUSE_PID[$mnt]}" 2>/dev/null
		done
	done
	for mnt in "${!FUSE_PID[@]}"; do
		wait "${FUSE_PID[$mnt]}" 2>/dev/null
		unset "FUSE_PID[$mnt]"
	done
}

# fsop [-u UID] OP PATH [ARG]: do one file-system operation with Python's os
# module and print "ok" (and, for read/list/stat, a result) or the errno's
# name (EROFS, EACCES, ENOSPC, ...).  With -u, as that uid (and gid).  OPs:
#   read PATH            read the whole file; prints "ok BYTES"
#   write PATH [N]       open an existing file O_WRONLY, write N bytes (1) at 0
#   append PATH          open O_WRONLY|O_APPEND, write 1 byte
#   create PATH          open O_WRONLY|O_CREAT|O_EXCL, write 1 byte
#   truncate PATH SIZE   truncate(2);  ftruncate PATH SIZE: open, ftruncate(2)
#   unlink, mkdir, rmdir PATH;  rename FROM TO
#   list PATH            prints "ok NAME..." (sorted)
#   stat PATH            prints "ok TYPE SIZE UID" (TYPE f, d or ?)
# Each step that can fail is followed by close; an error at close counts.
_FSOP_PY='
import errno, os, stat, sys
op, path = sys.argv[1], sys.argv[2]
arg = sys.argv[3] if len(sys.argv) > 3 else None
out = "ok"
def wr(flags, data, mode=0o644):
    fd = os.open(path, flags, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
try:
    if op == "read":
        with open(path, "rb") as f:
            out = "ok %d" % len(f.read())
    elif op == "write":
        wr(os.O_WRONLY, b"x" * int(arg or 1))
    elif op == "append":
        wr(os.O_WRONLY | os.O_APPEND, b"x")
    elif op == "create":
        wr(os.O_WRONLY | os.O_CREAT | os.O_EXCL, b"x")
    elif op == "truncate":
        os.truncate(path, int(arg))
    elif op == "ftruncate":
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, int(arg))
        finally:
            os.close(fd)
    elif op == "unlink":
        os.unlink(path)
    elif op == "mkdir":
        os.mkdir(path)
    elif op == "rmdir":
        os.rmdir(path)
    elif op == "rename":
        os.rename(path, arg)
    elif op == "list":
        out = " ".join(["ok"] + sorted(os.listdir(path)))
    elif op == "stat":
        st = os.stat(path)
        t = "f" if stat.S_ISREG(st.st_mode) else "d" if stat.S_ISDIR(st.st_mode) else "?"
        out = "ok %s %d %d" % (t, st.st_size, st.st_uid)
    else:
        sys.exit("fsop: unknown op " + op)
except OSError as e:
    out = errno.errorcode.get(e.errno, str(e.errno))
print(out)
'
fsop() {
	local pre=()
	if [ "${1:-}" = -u ]; then
		pre=(setpriv "--reuid=$2" "--regid=$2" --clear-groups)
		shift 2
	fi
	timeout "$(scaled 30)" "${pre[@]}" /usr/bin/python3 -c "$_FSOP_PY" "$@"
}

# expect_errno WANT [-u UID] OP PATH [ARG]: fsop's answer must be WANT (an
# errno name, or "ok"); fails the test otherwise.
expect_errno() {
	local want=$1 got
	shift
	got=$(fsop "$@") || fail "fsop $* did not run (status $?): $got"
	[ "${got%% *}" = "$want" ] || fail "$*: got ${got%% *}, want $want"
}

# check_errno WANT [-u UID] OP PATH [ARG]: as expect_errno, but a mismatch
# is only recorded (and printed), so that a test can try every case and
# report them all with checks_done.
CHECKFAILS=()
check_errno() {
	local want=$1 got
	shift
	got=$(fsop "$@")
	got=${got%% *}
	[ "$got" = "$want" ] && return 0
	echo "MISMATCH: $*: got ${got:-nothing}, want $want" >&2
	CHECKFAILS+=("$* -> ${got:-nothing} (want $want)")
	return 1
}

# checks_done WHAT: fail listing every mismatch check_errno recorded.
checks_done() {
	local n=${#CHECKFAILS[@]} all
	[ "$n" = 0 ] && return 0
	all=$(printf '%s; ' "${CHECKFAILS[@]}")
	CHECKFAILS=()
	fail "$1: $n of the checks failed: $all"
}

# tree_sums [-m] DIR: "SHA256  ./PATH" of every file under DIR, sorted by
# path.  -m leaves out ./.commit (ckptfs shows that marker, empty, at the
# root of a committed version; check_marker checks it).
tree_sums() {
	local skip=()
	[ "$1" = -m ] && { skip=(! -path ./.commit); shift; }
	(cd "$1" && find . -type f "${skip[@]}" -print0 | LC_ALL=C sort -z |
		xargs -0r sha256sum)
}

# tree_shape [-m] DIR: "TYPE SIZE PATH" of everything under DIR (sizes of
# files only), sorted: what readdir and stat show.  -m as for tree_sums.
tree_shape() {
	local skip=()
	[ "$1" = -m ] && { skip=(! -path ./.commit); shift; }
	(cd "$1" && find . -mindepth 1 "${skip[@]}" -printf '%y %s %P\n' |
		awk '$1 != "f" { $2 = "-" } { print }' | LC_ALL=C sort -k3)
}

# check_marker DIR: if DIR/.commit exists (ckptfs shows it in a committed
# version), it is an empty regular file.
check_marker() {
	[ -e "$1/.commit" ] || return 0
	[ -f "$1/.commit" ] && [ ! -s "$1/.commit" ] ||
		fail "$1/.commit is not an empty file: $(stat -c '%F %s' "$1/.commit")"
}

# ---- cleanup ----------------------------------------------------------------

# _stop_daemons: SIGTERM every running daemon, SIGKILL those still alive
# after a polled 5 s (scaled) grace, and reap them.
_stop_daemons() {
	local name pid
	for name in "${!CKPTD_PID[@]}"; do
		kill -TERM "${CKPTD_PID[$name]}" 2>/dev/null
	done
	for name in "${!CKPTD_PID[@]}"; do
		pid=${CKPTD_PID[$name]}
		poll_until 5 dead "$pid" || kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		unset "CKPTD_PID[$name]"
	done
}

# _kill_jobs: SIGKILL writers and other helpers left in the background.
_kill_jobs() {
	local p
	for p in $(jobs -p); do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

# _umount_all [sweep]: unmount what mount_tmpfs mounted; with sweep, also
# anything else still mounted under $T.
_umount_all() {
	local m
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	MOUNTS=()
	[ "${1:-}" = sweep ] || return 0
	awk -v d="$T/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
}

# subtest NAME FUNC [ARGS...]: run FUNC in a subshell, so that a fail in it
# ends only this sub-test (and a skip, exit 77, skips only it); the daemons,
# helpers, mounts and users it started or made are cleaned up when it ends (it cannot use
# the daemons of the test around it).  The test goes on; finish reports the
# failed sub-tests.
subtest() {
	local name=$1
	shift
	local rc
	(
		# The sub-test owns only what it starts and mounts itself.
		SUBTEST=$name
		CKPTD_PID=()
		MOUNTS=()
		FUSE_PID=()
		FUSE_LOG=()
		FUSE_LOGOFF=()
		TEST_USERS=()     # its own: the test's stay for the test
		HUGE_OLD=         # its own pages, given back when it ends
		trap '_huge_back; _unmount_ckptfs_all; _stop_daemons; _kill_jobs; _umount_all; _del_users' EXIT
		"$@"
	)
	rc=$?
	case $rc in
	0) ;;
	77) info "[$name] skipped" ;;
	*) SUBFAILS+=("$name") ;;
	esac
	return 0
}

# finish: fail if a sub-test failed.
finish() {
	[ ${#SUBFAILS[@]} = 0 ] || { CKPTD_LAST=; fail "failed: ${SUBFAILS[*]}"; }
}

# ---- real uids ----------------------------------------------------------------

# test_users NAME...: make each NAME a real user for the test (useradd, no
# home); they are removed (userdel -r) in the cleanup, whatever happens.
# Skips the test where that cannot be done.
TEST_USERS=()
test_users() {
	local u
	[ "$(id -u)" = 0 ] || skip "needs root (useradd)"
	command -v useradd >/dev/null && command -v setpriv >/dev/null ||
		skip "needs useradd and setpriv"
	for u in "$@"; do
		useradd -M -s /usr/sbin/nologin "$u" || fail "useradd $u failed"
		TEST_USERS+=("$u")
	done
}
_del_users() {
	local u
	for u in "${TEST_USERS[@]}"; do
		userdel -r "$u" >/dev/null 2>&1 || userdel "$u" >/dev/null 2>&1
	done
	TEST_USERS=()
}
# as USER CMD...: run CMD as USER (uid and its group, no other groups).
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }

# ---- the kernel's huge page pool --------------------------------------------

# hugepages_add N: N more 2 MiB pages in the kernel's pool of them (the size
# ckptd asks for, whatever the default huge page size is) for this test; the
# pool is set back first thing in the cleanup, whatever happens (pages still
# in use are freed once released), and by run-integ.sh after a test that
# was killed.  Skips the test where that cannot be done (not root, no pool,
# memory too fragmented to give them all).
HUGE_OLD=
HUGE_DIR=/sys/kernel/mm/hugepages/hugepages-2048kB
HUGE_POOL=$HUGE_DIR/nr_hugepages
hugepages_add() {
	local old
	[ "$(id -u)" = 0 ] && [ -w "$HUGE_POOL" ] || skip "needs root and $HUGE_POOL"
	# Pages a pool set back while they were in use stay (surplus) until
	# freed: a ckptd that exited unpins its leases' pages a little later
	# (io_uring's teardown is deferred).  Counted in, they would grow the
	# pool for good.
	poll_until 10 out_is 0 cat "$HUGE_DIR/surplus_hugepages" ||
		fail "$(cat "$HUGE_DIR/surplus_hugepages") huge pages still in use from before"
	old=$(cat "$HUGE_POOL")
	[ -n "$HUGE_OLD" ] || HUGE_OLD=$old
	echo $((old + $1)) >"$HUGE_POOL" 2>/dev/null
	[ "$(cat "$HUGE_POOL")" -ge $((old + $1)) ] ||
		skip "the kernel gave $(($(cat "$HUGE_POOL") - old)) of $1 huge pages"
}
# hugepages_free: free pages of the pool now.
hugepages_free() { cat "$HUGE_DIR/free_hugepages" 2>/dev/null || echo 0; }
_huge_back() {
	[ -z "$HUGE_OLD" ] || echo "$HUGE_OLD" >"$HUGE_POOL" 2>/dev/null
	HUGE_OLD=
}
# lease_kps PID: the page size (KernelPageSize, kB) of each staging lease
# process PID maps, one a line.
lease_kps() {
	awk '/ckpt-staging/ { s = 1; next }
	     s && /^KernelPageSize:/ { print $2; s = 0 }' "/proc/$1/smaps"
}

# ---- the local store on disk ------------------------------------------------

# store_seg_of STORE VERSION: the segment file whose header names VERSION.
store_seg_of() {
	local f
	for f in "$1"/seg/*; do
		head -c 4096 "$f" | grep -aq "$2" && { echo "$f"; return 0; }
	done
	return 1
}
# store_man_of STORE VERSION: the manifest that names VERSION.
store_man_of() { grep -al "$2" "$1"/man/*.man | head -1; }
# flip_byte FILE OFFSET: change one byte of FILE in place.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $(((b ^ 0x5a) & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# short_dir: echo a private directory with a short path (/tmp/ck.XXXXXX),
# for values with a length limit (a [cluster] nodes item is at most 63
# bytes); removed with $T.
SHORT_DIRS=()
short_dir() {
	local d
	d=$(mktemp -d /tmp/ck.XXXXXX) || fail "mktemp failed"
	SHORT_DIRS+=("$d")
	echo "$d"
}

_cleanup() {
	local st=$? log
	trap - EXIT INT TERM
	_huge_back
	_unmount_ckptfs_all
	_stop_daemons
	_kill_jobs
	_del_users
	for log in "$SAN_DIR"/report*; do
		[ -f "$log" ] || continue
		echo "FAIL: $TEST: sanitizer report $(basename "$log"):" >&2
		head -n 40 "$log" >&2
		st=1
	done
	if [ "$st" = 0 ]; then
		for log in "$T"/*/ckptd.log "$T"/*/ckptfs*.log; do
			if grep -qE "$SAN_RE" \
				"$log" 2>/dev/null; then
				echo "FAIL: $TEST: sanitizer report in $log" >&2
				tail -n 60 "$log" >&2
				st=1
			fi
		done
	fi
	_umount_all sweep
	# CKPT_KEEP_FAILED=DIR: a failed test's directory (logs, stores) is
	# copied there for a post-mortem.
	if [ "$st" != 0 ] && [ -n "${CKPT_KEEP_FAILED:-}" ]; then
		mkdir -p "$CKPT_KEEP_FAILED" &&
			cp -a "$T" "$CKPT_KEEP_FAILED/" 2>/dev/null
	fi
	rm -rf "$T" "$SAN_DIR" "${SHORT_DIRS[@]}"
	exit "$st"
}
trap _cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# ---- checkpoints ------------------------------------------------------------

# tw NAME ARGS...: ckpt_tw against daemon NAME.
tw() {
	local name=$1 cmd=$2
	shift 2
	"$TW" "$cmd" -s "$(sock "$name")" "$@"
}

# vstate NAME JOB VERSION: print the version's state ("absent" if unknown).
vstate() {
	local out rc
	out=$(tw "$1" stat "$2" "$3")
	rc=$?
	case $rc in
	0) echo "${out%% *}" ;;
	3) echo absent ;;
	*) echo "error($rc)" ;;
	esac
}

# drain_conf NAME [DRAIN_KEY=VALUE...] [-- CKPTD_KEY=VALUE...]: ckptd_conf
# plus a [drain] section with target = $PFS (which the test sets).
drain_conf() {
	local name=$1 kv dkeys=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do dkeys+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	ckptd_conf "$name" "$@"
	mkdir -p "$PFS"     # the administrator makes the target; ckptd never does
	{
		echo "[drain]"
		echo "target = $PFS"
		for kv in "${dkeys[@]}"; do echo "${kv%%=*} = ${kv#*=}"; done
	} >>"$T/$name/ckptd.conf"
}

# pfs_vdir JOB VERSION: the directory of a drained version under $PFS
# (server/pfs/pfslayout.h): every job component but the last as NAME.dir, the
# last as NAME.job, the version as NAME.ver; it holds the manifest, and the
# version's files under files/.
pfs_vdir() {
	local job=$1 d=$PFS
	while [[ $job == */* ]]; do
		d+="/${job%%/*}.dir"
		job=${job#*/}
	done
	echo "$d/$job.job/$2.ver"
}

# pfs_temps: the drain's temporary files left anywhere under $PFS (a
# cluster node's too: tmp.<node>.<n>, ptmp.<node>).
pfs_temps() {
	find "$PFS" \( -path '*.ver/tmp.*' -o -path '*.ver/manifest.tmp' \
		-o -path '*.ver/ptmp.*' -o -path '*.ver/ntmp.*' \) \
		-print 2>/dev/null
}

# vlevel NAME JOB VERSION: the level ckptd lists, or absent.
vlevel() {
	local out
	out=$(tw "$1" stat "$2" "$3") || { echo absent; return; }
	out=${out#* }
	echo "${out%% *}"
}

# level_is NAME JOB VERSION LEVEL: for poll_until (evaluated at each poll).
level_is() { [ "$(vlevel "$1" "$2" "$3")" = "$4" ]; }

# _state_is NAME JOB VERSION STATE
_state_is() { [ "$(vstate "$1" "$2" "$3")" = "$4" ]; }

# wait_state NAME JOB VERSION STATE: poll (10 s, scaled) until the version
# is in STATE.  For changes ckptd makes on its own, e.g. aborting a version
# when its writer disconnects.
wait_state() {
	poll_until 10 _state_is "$@" ||
		fail "$2/$3 is '$(vstate "$1" "$2" "$3")', want $4"
}

# has_ctl: ckptctl is built.
has_ctl() { [ -x "$CKPTCTL" ]; }
# need_ctl_py: skip the test unless ckptctl is built and /usr/bin/python3
# (which sjson and the listing helpers run) is there.
need_ctl_py() {
	[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is missing"
	has_ctl || skip "ckptctl is not built"
}
ctl() { local name=$1; shift; "$CKPTCTL" -s "$(sock "$name")" "$@"; }

# ---- clusters ----------------------------------------------------------------

# cluster_setup N DOMAIN...: a cluster of N nodes n1..nN on 127.0.0.1..N
# at a random port, node i in domain number ((i-1) * NDOMAINS / N) of the
# given ones (one domain: every node its own); sets PORT, KEY (a fresh key
# file, 0600), NODES (the node list, under a short path) and ALL.
# random_port: a TCP port for a test's cluster, below the kernel's ephemeral
# range, so that no outgoing connection's local port can be holding it.
random_port() {
	local lo
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "$lo" -gt 11000 ] || lo=32768
	echo $(( 10000 + RANDOM % (lo - 10000) ))
}

cluster_setup() {
	local n=$1 i nd
	shift
	nd=$#
	PORT=$(random_port)
	KEY=$T/cluster.key
	head -c 48 /dev/urandom >"$KEY"
	chmod 600 "$KEY"
	CLUSTER_DIR=$(short_dir)
	SHORT_DIRS+=("$CLUSTER_DIR")   # short_dir ran in a subshell
	NODES=$CLUSTER_DIR/nodes
	ALL=
	: >"$NODES"
	for i in $(seq "$n"); do
		local doms=("$@")
		echo "n$i 127.0.0.$i:$PORT ${doms[$(( (i - 1) * nd / n ))]:-}" >>"$NODES"
		ALL+="${ALL:+ }n$i"
	done
}

# cluster_start NAME EC [ARGS...]: start node NAME of the cluster set up by
# cluster_setup with ec EC; its config must exist (ckptd_conf, drain_conf).
cluster_start() {
	local name=$1 ec=$2
	shift 2
	start_ckptd "$name" -o "cluster.node=$name" -o "cluster.nodes=$NODES" \
		-o "cluster.ec=$ec" -o "cluster.key=$KEY" "$@"
}

# sjson NAME KEY: a field of `ckptctl status --json`'s daemon object.
sjson() {
	ctl "$1" --json status 2>/dev/null |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"][sys.argv[1]])' "$2"
}
# part_level NAME VERSION: the level of NAME's own part of $JOB's VERSION
# (its entry in ckptctl ls --json's parts); part_is NAME VERSION LEVEL.
part_level() {
	ctl "$1" --json ls "$JOB" "$2" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for p in d["parts"]:
    if p.get("node") == sys.argv[1]:
        print(p["level"])' "$1"
}
part_is() { [ "$(part_level "$1" "$2")" = "$3" ]; }
# parts_seen NAME JOB VERSION: the nodes NAME lists parts of VERSION from,
# sorted, on one line.
parts_seen() {
	ctl "$1" --json ls "$2" "$3" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
print(" ".join(sorted(p["node"] for p in json.load(sys.stdin)["parts"])))'
}
# status_is NAME KEY VALUE: for poll_until.
status_is() { [ "$(sjson "$1" "$2")" = "$3" ]; }

# drain_idle NAME: nothing queued or copying (for poll_until).
drain_idle() { status_is "$1" drain_queued 0 && status_is "$1" drain_running 0; }

# each_restart NAME CHECK...: run CHECK after a SIGKILL and two clean
# restarts, each once the drain has nothing left to do (a version queued
# again at the start would be drained by then).
each_restart() {
	local name=$1 how
	shift
	for how in kill clean clean; do
		if [ $how = kill ]; then
			kill9 "$name"
		else
			stop_ckptd "$name"
		fi
		start_ckptd "$name"
		poll_until 20 drain_idle "$name" ||
			fail "after a restart ($how): the drain is not idle: $(sjson "$name" drain_queued) queued"
		"$@" || fail "after a restart ($how): check failed"
	done
}

# cluster_up PEERS: every node of $ALL has PEERS peers up (30 s deadline).
cluster_up() {
	local n
	for n in $ALL; do
		poll_until 30 status_is $n peers_up "$1" ||
			fail "$n: $(sjson $n peers_up) of $1 peers up"
	done
}

# cluster_bounce kill|clean START PEERS: every node of $ALL is killed with
# SIGKILL (kill) or stopped cleanly (clean), then started again by the
# test's function START NAME, and has PEERS peers up.
cluster_bounce() {
	local n
	for n in $ALL; do
		if [ "$1" = kill ]; then kill9 $n; else stop_ckptd $n; fi
	done
	for n in $ALL; do "$2" $n; done
	cluster_up "$3"
}

# cluster_protect_parts JOB VERSION TW-ARGS...: node number i of $ALL
# writes part i of JOB/VERSION (ckpt_tw -r i -P part<i>, the version of
# as many parts as $ALL has nodes), and every part reaches PROTECTED.
cluster_protect_parts() {
	local job=$1 ver=$2 n i=0 nn
	shift 2
	nn=$(echo $ALL | wc -w)
	for n in $ALL; do
		i=$((i + 1))
		CKPT_NODES=$nn tw $n write "$job" "$ver" -r $i -P part$i "$@" -w local ||
			fail "$n: writing its part of $ver"
	done
	for n in $ALL; do
		ctl $n wait "$job" "$ver" protected --timeout 60 >/dev/null ||
			fail "$n: its part of $ver did not reach PROTECTED; log: $(grep protect "$T/$n/ckptd.log" | tail -3)"
	done
}

# node_lose NODE...: SIGKILL each and delete its store (a node lost).
node_lose() {
	local n
	for n in "$@"; do
		kill9 $n
		rm -rf "$T/$n/store"
	done
}
# shards_held NODE: the shards NODE holds for its peers; shards_held_is
# NODE N; rebuild_done NODE: its rebuild finished (for poll_until).
shards_held() { find "$T/$1/store/shards" -name '*.meta' 2>/dev/null | wc -l; }
shards_held_is() { [ "$(shards_held "$1")" = "$2" ]; }
rebuild_done() { status_is "$1" rebuild_state 2; }

# ---- one job's parts on some of the nodes (the membership tests) -----------
# The test sets JOB, and F1 and F2: tw's file arguments for v1 and for every
# later version.  Part i of a version is the i-th node named's.
parts_files() {    # VERSION: its tw file arguments, one a line
	if [ "$1" = v1 ]; then printf '%s\n' "${F1[@]}"; else printf '%s\n' "${F2[@]}"; fi
}
parts_write() {    # VERSION NODES...: node i of NODES writes part i, LOCAL
	local ver=$1 n i=0
	shift
	for n in "$@"; do
		i=$((i + 1))
		CKPT_NODES=$# tw $n write $JOB $ver -r $i -P part$i $(parts_files $ver) -w local ||
			fail "$n: writing its part of $ver"
	done
}
parts_protected() {    # VERSION NODES...: each one's part PROTECTED (90 s)
	local ver=$1 n
	shift
	for n in "$@"; do
		ctl $n wait $JOB $ver protected --timeout 90 >/dev/null ||
			fail "$n: its part of $ver is $(part_level $n $ver), not protected; $(grep protect "$T/$n/ckptd.log" | tail -3)"
	done
}
part_read() {    # OBSERVER VERSION I: part I of VERSION reads back there
	tw "$1" verify $JOB "$2" -r "$3" -P part"$3" $(parts_files "$2") ||
		fail "$1: part $3 of $2 does not read back"
}
parts_read() {    # OBSERVER VERSION N: parts 1..N of VERSION read back there
	local i
	for i in $(seq "$3"); do part_read "$1" "$2" $i; done
}
part_holders() {    # NODE VERSION: its part's holders as its listing says
	ctl "$1" --json ls $JOB "$2" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["parts"]:
    if p.get("node") == sys.argv[1]:
        print(p.get("holders", ""))' "$1"
}
