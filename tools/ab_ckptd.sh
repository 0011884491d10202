#!/bin/bash
# ab_ckptd.sh CKPTD_A CKPTD_B ... - A/B of ckptd (or ckptfs) builds on the ckptfs write
# path (a benchmark, not a test).  One store (the same disk extents for
# every build): each build in turn is started on it, ckptfs (from
# $CKPT_BUILD) is mounted, two rounds of 4 dd's x 512 MiB conv=fsync go into
# a version each, which is committed, waited to LOCAL and removed; then
# unmount and stop.  $AB_TURNS turns (default 4).  Prints per round:
# ms / ckptfs CPU ms / ckptd CPU ms.  Needs root and fusermount3.
# AB_FS=1: the arguments are ckptfs builds instead, each mounted in turn
# over a ckptd from $CKPT_BUILD.
#   CKPT_BUILD (default build), CKPT_BENCH_DIR (default /var/tmp/ckpt-bench)
set -u
B=${CKPT_BUILD:-build}
D=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}-ab
CP= FP=
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
cleanup() {
	grep -q " $D/mnt fuse" /proc/self/mounts && fusermount3 -u "$D/mnt"
	for p in $FP $CP; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$D"
}
trap cleanup EXIT
up() { # poll with a deadline (20 s)
	local i
	for i in $(seq 400); do "$@" && return 0; sleep 0.05; done
	echo "ab_ckptd: timed out: $*" >&2; exit 1
}
rm -rf "$D"; mkdir -p "$D/d" "$D/mnt"
v=0
one() { # the ckptd binary (AB_FS=1: the ckptfs binary)
	local r t0 t1 a f p out="" cd=$1 fs=$B/ckptfs
	[ "${AB_FS:-0}" = 1 ] && cd=$B/ckptd fs=$1
	"$cd" -o dir="$D/d" -o staging=2G -o staging_client=256M -o keep=100 2>>"$D/ckptd.log" &
	CP=$!
	up "$B/ckptctl" -s "$D/d/ckptd.sock" status >/dev/null 2>&1
	"$fs" -s "$D/d/ckptd.sock" "$D/mnt" -f 2>"$D/fs.log" &
	FP=$!
	up grep -q " $D/mnt fuse" /proc/self/mounts
	mkdir -p "$D/mnt/j"
	for r in 1 2; do
		v=$((v + 1)); mkdir "$D/mnt/j/v$v.tmp"
		sync; echo 3 >/proc/sys/vm/drop_caches
		a=$(cpu "$CP") f=$(cpu "$FP") t0=${EPOCHREALTIME/./} p=()
		for i in 0 1 2 3; do
			dd if=/dev/zero of="$D/mnt/j/v$v.tmp/w$i" bs=1M count=512 status=none conv=fsync &
			p+=($!)
		done
		wait "${p[@]}"
		t1=${EPOCHREALTIME/./}
		out+=" $(( (t1 - t0) / 1000 ))/$(( ($(cpu "$FP") - f) * 10 ))/$(( ($(cpu "$CP") - a) * 10 ))"
		mv "$D/mnt/j/v$v.tmp" "$D/mnt/j/v$v"
		"$B/ckptctl" -s "$D/d/ckptd.sock" wait j "v$v" local --timeout 600 >/dev/null
		"$B/ckptctl" -s "$D/d/ckptd.sock" rm j "v$v" >/dev/null
	done
	fusermount3 -u "$D/mnt"; kill "$FP"; wait "$FP" 2>/dev/null
	kill "$CP"; wait "$CP"; FP= CP=
	echo "$out"
}
one "$1" >/dev/null          # the store's segments, made once
for _ in $(seq "${AB_TURNS:-4}"); do
	for b in "$@"; do echo -n "$b ms/ckptfs/ckptd:"; one "$b"; done
done
