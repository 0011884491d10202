#!/bin/bash
# make bench, first part: a private ckptd on this machine's disk, then
# `ckptctl bench` against it, each measurement repeated $(bench_reps) times
# (at least 5) and reported as min / median / max (tools/bench_lib.sh):
#   stall      N writers x S bytes at once, leases held: median writer's
#              ckpt_write() time / median writer's memcpy() of the same
#              bytes into pre-faulted memory, same writers, each phase
#              timed from one release for all (`ckptctl bench --mode
#              writers`, 4 x 256 MiB; the phases' order alternates)
#   fairness   in the same bursts: slowest writer / median writer
#              (a writers run takes about a second and its spread is
#              the scheduler's, so it is repeated 6 x $(bench_reps) times
#              for a steadier median; memcpy's own spread is shown, and the
#              slowest ckpt_write against the slowest memcpy: what a
#              synchronized job waits)
#   burst      8 x 128 MiB to LOCAL into recycled segments against fio
#              io_uring O_DIRECT's second pass over its files, same
#              directory (`ckptctl bench --mode burst`): fio time / ckpt time
# Not a test: it prints figures.  Extra arguments go to every
# `ckptctl bench`.
#
#   CKPT_BENCH_DIR   where the store and fio's files go (default
#                    /var/tmp/ckpt-bench; it must be on the disk to measure)
#   CKPT_BENCH_REPS  repetitions (default and minimum 5)
#   CKPT_BENCH_ROWS  file the table rows are appended to (bench_lib.sh)
set -u
B=${CKPT_BUILD:-build}
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}
. "$(dirname "$0")/bench_lib.sh"
rm -rf "$DIR"
mkdir -p "$DIR"
LOG=$DIR/ckptd.log
$B/ckptd -o dir="$DIR" -o staging=2G -o staging_client=256M 2>"$LOG" &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 400); do
	kill -0 $PID 2>/dev/null || { echo "bench: ckptd exited:"; cat "$LOG"; exit 1; }
	$B/ckptctl -s "$DIR/ckptd.sock" status >/dev/null 2>&1 && break
	sleep 0.05
done
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus; store $DIR ($(df -h "$DIR" | awk 'NR==2{print $1}'))"
N=$(bench_reps)

# ratio KEY: the value of KEY= on the "# ratios" line of the last run
ratio_of() { sed -n "s/^# ratios.* $1=\([0-9.]*\).*/\1/p; s/^# ratios $1=\([0-9.]*\).*/\1/p" "$DIR/out" | head -1; }
stall=() fair=() copyfair=() slowest=() burst=()
for ((i = 0; i < 6 * N; i++)); do
	first=memcpy
	[ $((i % 2)) = 1 ] && first=writes       # alternate the phases' order
	$B/ckptctl -s "$DIR/ckptd.sock" bench --mode writers --first $first "$@" >"$DIR/out" ||
		{ cat "$DIR/out"; exit 1; }
	[ $i = 0 ] && sed '/^# ratios/d' "$DIR/out"
	stall+=("$(ratio_of stall)") fair+=("$(ratio_of fair)") copyfair+=("$(ratio_of copyfair)")
	slowest+=("$(ratio_of slowest)")
done
for ((i = 0; i < N; i++)); do
	$B/ckptctl -s "$DIR/ckptd.sock" bench --mode burst --dir "$DIR/fio" "$@" >"$DIR/out" ||
		{ cat "$DIR/out"; exit 1; }
	[ $i = 0 ] && { echo; sed '/^# ratios/d' "$DIR/out"; }
	b=$(ratio_of burst)
	[ -n "$b" ] && burst+=("$b")
done
echo
bench_row stall "stall: ckpt_write / memcpy, 4 writers x 256 MiB at once (medians)" "<= 1.2" "${stall[@]}"
bench_row fairness "fairness: slowest / median writer, same bursts" "<= 1.1" "${fair[@]}"
bench_row copyfair "(reference) slowest / median memcpy, same writers" "-" "${copyfair[@]}"
bench_row slowest "(reference) slowest ckpt_write / slowest memcpy" "-" "${slowest[@]}"
if [ ${#burst[@]} -gt 0 ]; then
	bench_row burst "burst 8 x 128 MiB to LOCAL, recycled segments: fio 2nd pass / ckpt" ">= 0.9" "${burst[@]}"
else
	echo "burst: no fio on \$PATH (Debian package fio); the burst row is skipped"
fi
