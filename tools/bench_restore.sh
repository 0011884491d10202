#!/bin/bash
# The restore benchmark (not a test).  On one disk, side by side in one run:
#  1. `ckptctl restore` of a drained version from its LOCAL copy, against
#     `cp -r` + sync of the drained tree on the PFS to a new directory
#     (caches dropped before each, the two in turn first; ratio cp_ms /
#     restore_ms, goal >= 0.9)
#  2. the same once the local copy is dropped (`ckptctl rm` of a drained
#     version keeps it, served from the PFS)
#  3. reads of a version still open with many records (ckpt_openread:
#     N writes of 64 B to each of two files, then reads of 64 B, appends
#     each followed by a read, one read of the whole file), against this
#     build's ckptd and, when CKPT_BENCH_BEFORE names another build
#     directory, that one's
# Each of 1 and 2 is repeated $(bench_reps) times (tools/bench_lib.sh).
# CKPT_BENCH_DIR (default /var/tmp/ckpt-bench-restore) must be on the disk
# to measure; CKPT_BENCH_RESTORE_MB (default 512) is the version's size
# (0: skip parts 1 and 2),
# CKPT_BENCH_OPENREAD_N (default 100000) the records of part 3 (0: skip it).
set -u -o pipefail
HERE=$(dirname "$0")
. "$HERE/bench_lib.sh"
B=${CKPT_BUILD:-build}
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench-restore}
SIZE_MB=${CKPT_BENCH_RESTORE_MB:-512}
NREC=${CKPT_BENCH_OPENREAD_N:-100000}
BEFORE=${CKPT_BENCH_BEFORE:-}
REPS=$(bench_reps)
rm -rf "$DIR"
mkdir -p "$DIR"
PID=
trap 'stop; rm -rf "$DIR"' EXIT

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }
die() { echo "bench_restore: $*" >&2; exit 1; }

# start NAME BUILD: a ckptd of BUILD on $DIR/NAME draining to $DIR/NAME/pfs
start() {
	local name=$1 b=$2
	mkdir -p "$DIR/$name/pfs"
	printf '[ckptd]\ndir = %s\nstaging = 1G\nstaging_client = 256M\nkeep = 8\n[drain]\ntarget = %s\nthreads = 2\n' \
		"$DIR/$name" "$DIR/$name/pfs" >"$DIR/$name.conf"
	"$b/ckptd" -c "$DIR/$name.conf" 2>"$DIR/$name.log" &
	PID=$!
	S=$DIR/$name/ckptd.sock
	for _ in $(seq 400); do
		kill -0 $PID 2>/dev/null || { cat "$DIR/$name.log"; die "ckptd exited"; }
		"$B/ckptctl" -s "$S" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	die "ckptd not ready"
}
stop() { [ -n "$PID" ] && kill $PID 2>/dev/null && wait $PID 2>/dev/null; PID=; }
ctl() { "$B/ckptctl" -s "$S" "$@"; }

# timed CMD...: run it, then sync; prints ms (caches dropped first).
timed() {
	local t0
	drop_caches
	t0=$(now_ms)
	"$@" >/dev/null || die "$* failed"
	sync
	echo $(($(now_ms) - t0))
}

# side_by_side KEY TITLE: REPS times a restore and a cp -r of the PFS tree,
# each into a new directory, the two in turn first (what ran just before,
# and the page cache it freed, changes the next one's time on a VM); the
# row of cp_ms / restore_ms.
side_by_side() {
	local key=$1 title=$2 i r c ratios=()
	for i in $(seq "$REPS"); do
		rm -rf "$DIR/out" "$DIR/cp"
		if [ $((i % 2)) = 1 ]; then
			r=$(timed ctl restore bench v1 --to "$DIR/out") || exit 1
			c=$(timed cp -r "$PFS_FILES" "$DIR/cp") || exit 1
		else
			c=$(timed cp -r "$PFS_FILES" "$DIR/cp") || exit 1
			r=$(timed ctl restore bench v1 --to "$DIR/out") || exit 1
		fi
		[ "$i" = 1 ] && { diff -r "$DIR/data" "$DIR/out" >/dev/null || die "$key: restored files differ"; }
		echo "  $key rep $i: restore ${r} ms, cp -r + sync ${c} ms"
		ratios+=("$(bench_ratio "$c" "$r")")
	done
	rm -rf "$DIR/out" "$DIR/cp"
	bench_row "$key" "$title" ">= 0.9" "${ratios[@]}"
}

printf '# %s %s, %s cpus, %s on %s\n' "$(date -u +%FT%TZ)" "$(uname -r)" "$(nproc)" \
	"$DIR" "$(df "$DIR" | awk 'NR==2{print $1}')"

if [ "$SIZE_MB" -gt 0 ]; then
# ---- data: 8 large files and 64 of 1 MiB in a directory ----------------------
mkdir -p "$DIR/data/small"
for i in $(seq 1 8); do
	head -c $(((SIZE_MB - 64) / 8))M /dev/urandom >"$DIR/data/layer$i.bin"
done
for i in $(seq 1 64); do
	head -c 1M /dev/urandom >"$DIR/data/small/shard$i.bin"
done
TOTAL=$(du -sb "$DIR/data" | cut -f1)
echo "# version: $TOTAL bytes, 72 files; $REPS repetitions"

# ---- 1, 2: restore against cp -r ----------------------------------------------
start r "$B"
ctl import bench v1 "$DIR/data" >/dev/null || die "import failed"
ctl wait bench v1 drained --timeout 600 >/dev/null || die "drain failed"
PFS_FILES=$DIR/r/pfs/bench.job/v1.ver/files      # server/pfs/pfslayout.h
[ -d "$PFS_FILES" ] || die "no drained tree at $PFS_FILES"
side_by_side restore_local "restore from LOCAL / (cp -r + sync of the drained tree)"
ctl rm bench v1 >/dev/null || die "rm of the local copy failed"
side_by_side restore_pfs "restore from the PFS / (cp -r + sync of the drained tree)"
stop
fi

# ---- 3: reads of an open version with many records -----------------------------
openread() {     # LABEL BUILD
	start "or-$1" "$2"
	echo "# open version, $NREC records of 64 B to f and to g, $1 ckptd ($2):"
	"$B/tests/ckpt_openread" "$S" or v1 "$NREC" 64 |
		awk '{ printf "  %-8s %10d us\n", $1, $2 }' || die "ckpt_openread failed"
	stop
}
if [ "$NREC" -gt 0 ]; then
	[ -n "$BEFORE" ] && openread before "$BEFORE"
	openread this "$B"
fi
