#!/bin/bash
# t_loop_latency: a slow disk does not stall other clients.  ckptd runs with
# every fsync and fallocate taking 300 ms (CKPT_FAULT delays), a drain, and
# keep=2, while two writers commit versions in a loop (new segments,
# manifest writes, eviction by retention at every seal, drain copies).
# Staging is large enough that no client waits for a lease.  Meanwhile
# ckpt_probe times a STATUS, a read of a committed version, and a new
# client's connect + HELLO, 150 of each over ~8 s; each p99 must stay under 50 ms
# (scaled): none of them should wait for the disk.  (With three writers the
# spare segments made on the pool do not keep up with 300 ms fallocates, and
# segs_alloc falls back to creating one on the loop: see docs/design.md.)
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
PROBE=$BUILD/tests/ckpt_probe
BOUND_MS=$((50 * SCALE))
WRITERS=${LAT_WRITERS:-2}   # concurrent writer loops
ROUNDS=30        # at most this many versions per writer
SZ=(-n 2 -z 300000)

[ -x "$PROBE" ] || fail "$PROBE is not built (make check-integ builds it)"

# writer I: commit versions of job lat/wI until $T/stop exists or ROUNDS.
writer() {
	local i
	for i in $(seq 1 "$ROUNDS"); do
		[ -e "$T/stop" ] && return 0
		tw d write "lat/w$1" "v$i" "${SZ[@]}" -S "$i" -w local ||
			return 1
	done
}

all_dead() {
	local p
	for p in "$@"; do alive "$p" && return 1; done
	return 0
}

drain_conf d -- chunk=1M segment=2M keep=2 staging=256M
CKPT_FAULT="fsync:1+:delay=300,fallocate:1+:delay=300" start_ckptd d
tw d write lat/base v1 "${SZ[@]}" -S 99 -w local || fail "writing the base version failed"

pids=()
for w in $(seq 1 "$WRITERS"); do
	writer "$w" >"$T/w$w.out" 2>&1 &
	pids+=($!)
done
"$PROBE" -s "$(sock d)" -j lat/base -v v1 -f rank000/part-0.bin \
	-n 150 -i 50 -b "$BOUND_MS" >"$T/probe.out" 2>&1
prc=$?
touch "$T/stop"
cat "$T/probe.out"
poll_until 120 all_dead "${pids[@]}" || fail "writers did not finish"
for w in $(seq 1 "$WRITERS"); do
	wait "${pids[$((w - 1))]}" || fail "writer $w failed: $(cat "$T/w$w.out")"
done
n=$(grep -c 'retention: ' "$T/d/ckptd.log")
info "$n versions removed by retention while probing"
[ "$prc" = 0 ] || fail "latency over ${BOUND_MS} ms under a slow disk (see above)"
assert_up d
info "status, read and connect+hello stayed under ${BOUND_MS} ms at p99"
finish
