#!/bin/bash
# make demo: the whole product on one node, with built-in defaults.
#
# Starts ckptd with no config file (state under /var/lib/ckpt, or under
# $CKPT_DEMO_DIR via -o dir=...), writes a multi-file checkpoint from four
# processes at once through the C API, waits for LOCAL, kills ckptd with
# SIGKILL, restarts it, restores the checkpoint with ckptctl and checks it
# byte for byte, then shows `ckptctl status`.
set -u
B=${CKPT_BUILD:-build}
DIR=${CKPT_DEMO_DIR:-}
LOG=$(mktemp /tmp/ckpt-demo.XXXXXX.log)
OUT=$(mktemp -d /tmp/ckpt-demo.XXXXXX)
ARGS=()
[ -n "$DIR" ] && ARGS=(-o "dir=$DIR")
SOCK=$($B/ckptd "${ARGS[@]}" --print-config | sed -n 's/^socket *= *//p')
export CKPT_SOCKET=$SOCK
PID=

cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$OUT"
}
trap cleanup EXIT

die() { echo "demo: $*" >&2; echo "--- ckptd log ($LOG):" >&2; tail -20 "$LOG" >&2; exit 1; }

start() {
	$B/ckptd "${ARGS[@]}" 2>>"$LOG" &
	PID=$!
	# Poll for readiness with a deadline; stop at once if ckptd died.
	for _ in $(seq 200); do
		kill -0 "$PID" 2>/dev/null || die "ckptd exited"
		$B/ckptctl status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	die "ckptd not ready after 10 s"
}

JOB=demo/llama-7b
VER=step-$(date +%s)
echo "== starting ckptd (built-in defaults; socket $SOCK)"
start
echo "== 4 writers checkpoint $JOB/$VER (3 files x 24 MiB each) and wait for LOCAL"
# All four must join the version before any commits (the version seals when
# every writer that joined has committed): each writes, then holds before its
# commit (-p) until the fifo it reads is closed, once all four are there.
mkfifo "$OUT/go"
exec 3<>"$OUT/go"
WRITERS=()
for r in 0 1 2 3; do
	$B/tests/ckpt_tw write $JOB $VER -r $r -n 3 -z $((24 << 20)) -S 7 -p \
		<"$OUT/go" 3>&- >"$OUT/w$r.out" &
	WRITERS+=($!)
done
for _ in $(seq 600); do
	[ "$(cat "$OUT"/w*.out 2>/dev/null | grep -c paused)" = 4 ] && break
	sleep 0.05
done
exec 3>&-
for w in "${WRITERS[@]}"; do wait "$w" || die "a writer failed"; done
$B/ckptctl wait $JOB $VER local --timeout 60 || die "version did not reach LOCAL"
$B/ckptctl ls $JOB
echo "== SIGKILL ckptd, restart it"
kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
start
echo "== restore $JOB latest and compare byte for byte"
$B/ckptctl restore $JOB latest --to "$OUT/restored" || die "restore failed"
for r in 0 1 2 3; do
	$B/tests/ckpt_tw expect $JOB $VER -r $r -n 3 -z $((24 << 20)) -S 7 -o "$OUT/expected" \
		|| die "cannot generate expected files"
done
diff -r "$OUT/expected" "$OUT/restored" >/dev/null || die "restored bytes differ"
echo "restored checkpoint matches byte for byte ($(du -sh "$OUT/restored" | cut -f1))"
echo "== ckptctl status"
$B/ckptctl status
echo "demo: OK"
