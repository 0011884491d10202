#!/bin/bash
# make bench: start a private ckptd on this machine's disk, run
# `ckptctl bench` against it (ckpt_write stall vs memcpy; burst to LOCAL vs
# fio io_uring O_DIRECT, same directory, same run), and stop the daemon.
# Not a test: it prints figures.  Extra arguments go to `ckptctl bench`.
#
#   CKPT_BENCH_DIR  where the store and fio's files go (default
#                   /var/tmp/ckpt-bench; it must be on the disk to measure)
set -u
B=${CKPT_BUILD:-build}
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}
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
$B/ckptctl -s "$DIR/ckptd.sock" bench --dir "$DIR/fio" "$@"
