#!/bin/bash
# t_loop_latency: a slow disk and a slow PFS do not stall other clients.
# ckptd runs with every fsync, fallocate and unlink taking 300 ms and every
# pwrite and rename 100 ms (CKPT_FAULT delays), a drain with [drain] keep=1,
# and keep=2, while three writers commit versions in a loop (new segments,
# which writes wait for while the pool makes them; manifest writes; local
# eviction and PFS removal by retention at every seal; drain copies; freed
# segments' headers cleared), a fourth client commits versions and removes
# each with ckptctl rm (local copy, then PFS copy), and a fifth commits
# versions one drain at a time, which [drain] keep removes from the PFS.  Staging is large enough that no client
# waits for a lease.  Meanwhile ckpt_probe times a STATUS, a read of a
# committed version, and a new client's connect + HELLO, 150 of each over
# ~8 s; each p99 must stay under 50 ms (scaled): none of them should wait
# for the slow disk calls or the PFS.  A read does read the disk, and this
# disk stalls every read by itself at times (an O_DIRECT read waits behind
# the fsync of the drain's PFS copies, 60-560 ms seen): the probe's disk
# witness reads a file of its own beside the store at the same time, and a
# read is charged only its time beyond the witness reads during it.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
PROBE=$BUILD/tests/ckpt_probe
BOUND_MS=$((50 * SCALE))
WRITERS=${LAT_WRITERS:-3}   # concurrent writer loops
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

# gone JOB VERSION: rm it (again: a drained version's first rm drops only
# its local copy, the next removes it from the PFS) and say if it is gone.
gone() {
	ctl d rm "$1" "$2" >/dev/null 2>&1
	[ "$(vstate d "$1" "$2")" = absent ]
}

# remover: commit lat/rm rI and remove it with ckptctl rm until it is gone
# (retrying while a drain copy of it runs: -EBUSY), until $T/stop exists;
# counts in $T/rm.n.
remover() {
	local i
	for i in $(seq 1 "$ROUNDS"); do
		[ -e "$T/stop" ] && break
		tw d write lat/rm "r$i" -n 1 -z 200000 -S "$i" -w local || return 1
		poll_until 60 gone lat/rm "r$i" || return 1
		echo "$i" >"$T/rm.n"
	done
}

# keep_one I: commit lat/keep kI, drain it first (drain --now) and wait
# until it is drained.
keep_one() {
	tw d write lat/keep "k$1" -n 1 -z 100000 -S "$1" -w local &&
		ctl d drain --now lat/keep "k$1" >/dev/null &&
		ctl d wait lat/keep "k$1" drained --timeout 60 >/dev/null
}

# keeper: keep_one 2, 3, ... one at a time, so that no copy of the job runs
# when the next drains and [drain] keep=1 removes the older ones from the
# PFS.
keeper() {
	local i
	for i in $(seq 2 "$ROUNDS"); do
		[ -e "$T/stop" ] && break
		keep_one "$i" || return 1
	done
}

all_dead() {
	local p
	for p in "$@"; do alive "$p" && return 1; done
	return 0
}

has_ctl || skip "ckptctl is not built"
drain_conf d keep=1 threads=4 -- chunk=1M segment=2M keep=2 staging=256M
CKPT_FAULT="fsync:1+:delay=300,fallocate:1+:delay=300,unlink:1+:delay=300,pwrite:1+:delay=100,rename:1+:delay=100" \
	start_ckptd d
tw d write lat/base v1 "${SZ[@]}" -S 99 -w local || fail "writing the base version failed"
keep_one 1 || fail "draining lat/keep/k1 failed"

pids=()
for w in $(seq 1 "$WRITERS"); do
	writer "$w" >"$T/w$w.out" 2>&1 &
	pids+=($!)
done
remover >"$T/rm.out" 2>&1 &
pids+=($!)
keeper >"$T/keep.out" 2>&1 &
pids+=($!)
"$PROBE" -s "$(sock d)" -j lat/base -v v1 -f rank000/part-0.bin \
	-n 150 -i 50 -b "$BOUND_MS" -w "$T/witness" >"$T/probe.out" 2>&1
prc=$?
touch "$T/stop"
cat "$T/probe.out"
poll_until 120 all_dead "${pids[@]}" || fail "writers did not finish"
for w in $(seq 1 "$WRITERS"); do
	wait "${pids[$((w - 1))]}" || fail "writer $w failed: $(cat "$T/w$w.out")"
done
wait "${pids[$WRITERS]}" || fail "remover failed: $(cat "$T/rm.out")"
wait "${pids[$((WRITERS + 1))]}" || fail "keeper failed: $(cat "$T/keep.out")"
nrm=$(cat "$T/rm.n" 2>/dev/null || echo 0)
[ "$nrm" -gt 0 ] || fail "no ckptctl rm succeeded while probing"
n=$(grep -c 'retention: .* evicted' "$T/d/ckptd.log")
p=$(grep -c 'retention: .* removed from the PFS' "$T/d/ckptd.log")
k=$(grep -c 'writes wait for one from the pool' "$T/d/ckptd.log")
info "while probing: $nrm versions removed by ckptctl rm, $n evicted and $p removed from the PFS by retention; writes waited for a new segment $k times"
[ "$prc" = 0 ] || fail "latency over ${BOUND_MS} ms under a slow disk (see above)"
# Writes that waited for a segment landed where their order says: the newest
# version of each writer reads back byte for byte.
for w in $(seq 1 "$WRITERS"); do
	v=$(tw d latest "lat/w$w") || fail "no version of lat/w$w"
	tw d verify "lat/w$w" "$v" "${SZ[@]}" -S "${v#v}" ||
		fail "lat/w$w/$v does not read back"
done
assert_up d
info "status, read and connect+hello stayed under ${BOUND_MS} ms at p99"
finish
