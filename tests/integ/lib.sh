# lib.sh - shared harness of the integration tests (sourced, not run).
#
# Each test gets a private directory $T (mktemp -d) and an EXIT trap that,
# whatever happens, stops every ckptd the test started (SIGTERM, then SIGKILL
# once a polled grace deadline passes), kills the test's other background
# processes, unmounts what it mounted and removes $T.  Daemons are named
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
TW=$BUILD/tests/ckpt_tw
RAW=$BUILD/tests/ckpt_raw
TEST=$(basename "$0" .sh)

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
declare -A CKPTD_PID=()      # NAME -> pid of the running ckptd
declare -A CKPTD_ARGS=()     # NAME -> extra ckptd arguments (restart keeps)
CKPTD_LAST=                  # the name started last (log tail on failure)
SUBTEST=                     # name of the running sub-test, if any
SUBFAILS=()                  # sub-tests that failed
MOUNTS=()

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
}

# fail "message": the test (or sub-test) failed.  Prints the message and the
# daemon logs, and exits.
fail() {
	echo "FAIL: $TEST${SUBTEST:+ [$SUBTEST]}: $*" >&2
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
	if grep -qE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:|== ?ERROR SUMMARY: [1-9]' \
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
# helpers and mounts it started are cleaned up when it ends (it cannot use
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
		trap '_stop_daemons; _kill_jobs; _umount_all' EXIT
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

_cleanup() {
	local st=$? log
	trap - EXIT INT TERM
	_stop_daemons
	_kill_jobs
	if [ "$st" = 0 ]; then
		for log in "$T"/*/ckptd.log; do
			if grep -qE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' \
				"$log" 2>/dev/null; then
				echo "FAIL: $TEST: sanitizer report in $log" >&2
				tail -n 60 "$log" >&2
				st=1
			fi
		done
	fi
	_umount_all sweep
	rm -rf "$T"
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
ctl() { local name=$1; shift; "$CKPTCTL" -s "$(sock "$name")" "$@"; }
