#!/bin/bash
# The drain benchmark (not a test), run by `make bench` after the ingest one.
# On one disk, side by side in one run:
#  1. drain throughput of a 512 MiB checkpoint against `cp -r` + sync of the
#     same files to the same target (caches dropped before each, the two
#     in turn first), repeated
#     $(bench_reps) times (bench_lib.sh; goal >= 0.95)
#  2. the bandwidth cap held: the highest rate over any 10 s window of a
#     capped drain against the cap, repeated as often (goal <= 1.05)
#  3. zstd level 1 on realistic data (normal(0, 0.02) weights in bf16 and
#     fp32, Adam moments), with and without the byte shuffle: ratio and speed
#  4. incremental: a fine-tuning step where a quarter of the layers changed
#     (frozen layers identical): bytes written against a full drain
# Data is made with Debian's numpy (/usr/bin/python3); without it, 3 and 4
# are skipped.  CKPT_BENCH_DIR (default /var/tmp/ckpt-bench-drain) must be on
# the disk to measure.
set -u
. "$(dirname "$0")/bench_lib.sh"
B=${CKPT_BUILD:-build}
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench-drain}
SIZE_MB=${CKPT_BENCH_DRAIN_MB:-512}
rm -rf "$DIR"
mkdir -p "$DIR"
PID=
trap 'stop; rm -rf "$DIR"' EXIT

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }

# start NAME [DRAIN_KEY=VALUE...]: a ckptd on $DIR/NAME draining to $DIR/NAME/pfs
start() {
	local name=$1 kv
	shift
	mkdir -p "$DIR/$name/pfs"
	{
		printf '[ckptd]\ndir = %s\nstaging = 1G\nstaging_client = 256M\nkeep = 8\n' "$DIR/$name"
		printf '[drain]\ntarget = %s\n' "$DIR/$name/pfs"
		for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}"; done
	} >"$DIR/$name.conf"
	$B/ckptd -c "$DIR/$name.conf" 2>"$DIR/$name.log" &
	PID=$!
	S=$DIR/$name/ckptd.sock
	for _ in $(seq 400); do
		kill -0 $PID 2>/dev/null || { echo "bench: ckptd exited:"; cat "$DIR/$name.log"; exit 1; }
		$B/ckptctl -s "$S" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "bench: ckptd not ready"; exit 1
}
stop() { [ -n "$PID" ] && kill $PID 2>/dev/null && wait $PID 2>/dev/null; PID=; }
ctl() { $B/ckptctl -s "$S" "$@"; }

# import_drained JOB VERSION SRC: import with the drain paused, then time
# from resume to DRAINED; prints ms.
import_drained() {
	local t0
	ctl drain --pause >/dev/null
	ctl import "$1" "$2" "$3" >/dev/null || { echo "bench: import failed" >&2; exit 1; }
	drop_caches
	t0=$(now_ms)
	ctl drain --resume >/dev/null
	ctl wait "$1" "$2" drained --timeout 600 >/dev/null || { echo "bench: drain failed" >&2; exit 1; }
	echo $(($(now_ms) - t0))
}
# pfs_bytes PFS JOB VERSION: bytes of the version's files on the PFS (a
# one-component job: <job>.job/<version>.ver/files, server/pfs/pfslayout.h).
pfs_bytes() { du -sb "$1/$2.job/$3.ver/files" | cut -f1; }
rate() { echo "scale=2; $1 / 1.048576 / $2 / 1000" | bc; } # bytes ms -> MiB/s
ratio() { echo "scale=3; $1 / $2" | bc; }

printf '# %s %s, %s cpus, %s on %s\n' "$(date -u +%FT%TZ)" "$(uname -r)" "$(nproc)" \
	"$DIR" "$(df "$DIR" | awk 'NR==2{print $1}')"

# ---- data ------------------------------------------------------------------
mkdir -p "$DIR/data/plain"
for i in $(seq 1 8); do
	head -c $((SIZE_MB / 8))M /dev/urandom >"$DIR/data/plain/layer$i.bin"
done
HAVE_NP=0
# CKPT_BENCH_DRAIN_QUICK=1: parts 1 and 2 only
if [ -z "${CKPT_BENCH_DRAIN_QUICK:-}" ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	HAVE_NP=1
	/usr/bin/python3 - "$DIR/data" "$SIZE_MB" <<'PY'
import os, sys, numpy as np
root, mb = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
n = mb * (1 << 20) // 4 // 8          # fp32 elements per layer file
def save(d, name, a):
    os.makedirs(d, exist_ok=True)
    a.tofile(os.path.join(d, name))
for i in range(8):
    w = rng.normal(0, 0.02, n).astype(np.float32)
    save(f"{root}/fp32", f"layer{i}.weight", w)
    save(f"{root}/bf16", f"layer{i}.weight", (w.view(np.uint32) >> 16).astype(np.uint16))
    m = rng.normal(0, 1e-3, n // 2).astype(np.float32)
    v = (rng.normal(0, 1e-3, n // 2) ** 2).astype(np.float32)
    save(f"{root}/adam", f"layer{i}.exp_avg", m)
    save(f"{root}/adam", f"layer{i}.exp_avg_sq", v)
# a fine-tuning step: layers 0 and 1 trained, 2..7 frozen
import shutil
shutil.copytree(f"{root}/fp32", f"{root}/fp32-step2")
for i in (0, 1):
    w = np.fromfile(f"{root}/fp32/layer{i}.weight", np.float32)
    (w + rng.normal(0, 1e-4, w.size).astype(np.float32)).tofile(f"{root}/fp32-step2/layer{i}.weight")
PY
fi
TOTAL=$(du -sb "$DIR/data/plain" | cut -f1)

# ---- 1. drain vs cp ----------------------------------------------------------
# Each repetition: a fresh ckptd drains the files (caches dropped), and
# `cp -r` + sync copies the same files to the same target (caches dropped),
# the two in turn first (on a VM, the page cache the one before freed
# changes what the next one's copies into the page cache cost).
REPS=$(bench_reps)
ratios=() rates=()
cp_timed() {
	local t0
	drop_caches
	t0=$(now_ms)
	cp -r "$DIR/data/plain" "$DIR/plain/pfs/cp-copy" && sync
	echo $(($(now_ms) - t0))
}
printf '\n%-38s %10s %10s %8s %s\n' TEST BYTES MS 'MiB/s' RATIO
for r in $(seq "$REPS"); do
	start plain threads=2
	if [ $((r % 2)) = 1 ]; then
		ms_drain=$(import_drained bench v1 "$DIR/data/plain")
		ms_cp=$(cp_timed)
	else
		ms_cp=$(cp_timed)
		ms_drain=$(import_drained bench v1 "$DIR/data/plain")
	fi
	stop
	rm -rf "$DIR/plain" "$DIR/plain.conf" "$DIR/plain.log"
	ratios+=("$(bench_ratio "$ms_cp" "$ms_drain")")
	rates+=("$((TOTAL * 1000 / ms_drain))")
	printf '%-38s %10s %10s %8s\n' "drain plain, rep $r" "$TOTAL" "$ms_drain" "$(rate "$TOTAL" "$ms_drain")"
	printf '%-38s %10s %10s %8s %s\n' "cp -r + sync, same target" "$TOTAL" "$ms_cp" \
		"$(rate "$TOTAL" "$ms_cp")" "cp/drain ${ratios[-1]}"
done
bench_row drain "drain / (cp -r + sync), ${SIZE_MB} MiB, 8 files" ">= 0.95" "${ratios[@]}"

# ---- 2. the cap --------------------------------------------------------------
# A third of the median uncapped rate, lowered so that the capped drain
# lasts at least CKPT_BENCH_CAP_S seconds (default 30): the bytes on the
# PFS (allocated, so chunks written out of order count as written) are
# sampled every 0.5 s, and the figure is the highest rate over any window
# of 10 s or more, against the cap.
# cap_windows CAP SAMPLES: highest rate over windows >= 10 s / CAP
cap_windows() {
	awk -v cap="$1" '{ t[NR] = $1; b[NR] = $2 }
		END {
			best = 0; j = 1
			for (i = 1; i <= NR; i++) {
				while (j <= NR && t[j] - t[i] < 10000000) j++
				if (j > NR) break
				r = (b[j] - b[i]) * 1e6 / (t[j] - t[i])
				if (r > best) best = r
			}
			printf "%.3f", best / cap
		}' "$2"
}
med_rate=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
cap=$((med_rate / 3))
[ $((TOTAL / cap)) -ge "${CKPT_BENCH_CAP_S:-30}" ] || cap=$((TOTAL / ${CKPT_BENCH_CAP_S:-30}))
capr=()
for r in $(seq "$REPS"); do
	start capped bandwidth=$cap threads=2
	ctl drain --pause >/dev/null
	ctl import bench v1 "$DIR/data/plain" >/dev/null || { echo "bench: import failed" >&2; exit 1; }
	drop_caches
	: >"$DIR/samples"
	( while :; do
		echo "$(bench_now_us) $(du -sB1 "$DIR/capped/pfs" | cut -f1)" >>"$DIR/samples"
		sleep 0.5
	done ) &
	SAMPLER=$!
	t0=$(now_ms)
	ctl drain --resume >/dev/null
	ctl wait bench v1 drained --timeout 900 >/dev/null || { echo "bench: drain failed" >&2; kill $SAMPLER; exit 1; }
	ms_cap=$(($(now_ms) - t0))
	kill $SAMPLER; wait $SAMPLER 2>/dev/null
	stop
	capr+=("$(cap_windows "$cap" "$DIR/samples")")
	rm -rf "$DIR/capped" "$DIR/capped.conf" "$DIR/capped.log"
	printf '%-38s %10s %10s %8s %s\n' "drain capped at $((cap >> 20)) MiB/s" "$TOTAL" "$ms_cap" \
		"$(rate "$TOTAL" "$ms_cap")" "whole run/cap $(bench_ratio $((TOTAL * 1000 / ms_cap)) "$cap"), highest 10 s window/cap ${capr[-1]}"
done
bench_row cap "capped drain: highest 10 s window rate / cap" "<= 1.05" "${capr[@]}"

# ---- 3. zstd -----------------------------------------------------------------
if [ $HAVE_NP = 1 ]; then
	printf '\n%-38s %10s %10s %8s %s\n' 'ZSTD LEVEL 1' BYTES MS 'MiB/s' 'STORED/RAW'
	for set in bf16:2 fp32:4 adam:4; do
		name=${set%%:*} shuf=${set#*:}
		for s in 0 "$shuf"; do
			start "z$name$s" compress=zstd:1 shuffle=$s threads=2
			raw=$(du -sb "$DIR/data/$name" | cut -f1)
			ms=$(import_drained bench v1 "$DIR/data/$name")
			st=$(pfs_bytes "$DIR/z$name$s/pfs" bench v1)
			stop
			printf '%-38s %10s %10s %8s %s\n' "$name, shuffle $s" "$raw" "$ms" \
				"$(rate "$raw" "$ms")" "$(ratio "$st" "$raw")"
		done
	done
	# ---- 4. incremental ----------------------------------------------------
	start incr incremental=yes threads=2
	raw=$(du -sb "$DIR/data/fp32" | cut -f1)
	ms1=$(import_drained bench step1 "$DIR/data/fp32")
	ms2=$(import_drained bench step2 "$DIR/data/fp32-step2")
	s1=$(pfs_bytes "$DIR/incr/pfs" bench step1)
	s2=$(pfs_bytes "$DIR/incr/pfs" bench step2)
	stop
	printf '\n%-38s %10s %10s %8s %s\n' INCREMENTAL 'WRITTEN' MS 'MiB/s' 'WRITTEN/RAW'
	printf '%-38s %10s %10s %8s %s\n' "step1 (full)" "$s1" "$ms1" "$(rate "$raw" "$ms1")" "$(ratio "$s1" "$raw")"
	printf '%-38s %10s %10s %8s %s\n' "step2 (2 of 8 layers changed)" "$s2" "$ms2" "$(rate "$raw" "$ms2")" "$(ratio "$s2" "$raw")"
else
	echo "zstd and incremental: skipped (CKPT_BENCH_DRAIN_QUICK, or no numpy for /usr/bin/python3)"
fi
