#!/bin/bash
# make bench (part): protection across a cluster, against its ceiling.
# Starts six ckptd nodes on 127.0.0.1-6 (ec 4+2, three domains of two),
# stores under CKPT_BENCH_DIR, and REPS times (bench_reps) has 8 writers on
# n1 write one version (CKPT_PROTECT_MB each, default 64) and commit, then
# measures side by side:
#   - LOCAL -> PROTECTED on n1 (`ckptctl wait local` returned ->
#     `ckptctl wait protected` returned) and the CPU the six daemons spent
#     in it (/proc/PID/stat);
#   - the ceiling, tools/ceiling (protect_ceiling): the same bytes read with
#     O_DIRECT, encoded, sent over TCP to five holder processes on
#     127.0.0.2-6 that write with O_DIRECT and fdatasync, with no service
#     around it; and its disk phase, the five shards' O_DIRECT writes alone
#     (the holders' unavoidable disk time);
#   - raw ISA-L ec_encode_data on the same bytes (tests/integ/ckpt_ecrate).
# Rows: disk time / LOCAL->PROTECTED (goal >= 0.6), ceiling time /
# LOCAL->PROTECTED (>= 0.8), daemons' CPU per GiB / the ceiling's (<= 1.5).
# Not a test: it prints figures.  The nodes share this machine's cores and
# disk, as do the ceiling's holders.
set -u
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}/protect
MB=${CKPT_PROTECT_MB:-64}
WRITERS=8
. "$(dirname "$0")/bench_lib.sh"
. "$(dirname "$0")/bench_cluster.sh"
REPS=$(bench_reps)
ms() { bc_ms; }
ctl() { bc_ctl "$@"; }
die() { echo "bench_protect: $*"; tail -5 "$DIR/n1/ckptd.log"; exit 1; }
CEIL=$B/tools/protect_ceiling
[ -x "$CEIL" ] || die "no $CEIL (make $CEIL)"
TICK=$(getconf CLK_TCK)

cpu_ms() {     # the six daemons' user + system CPU, in ms
	local p t=0 s
	for p in "${PIDS[@]}"; do
		s=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || s=0
		t=$((t + s))
	done
	echo $((t * 1000 / TICK))
}

for i in 1 2 3 4 5 6; do bc_start $i; done
for i in 1 2 3 4 5 6; do bc_wait_up $i 5 || die "n$i: peers not up"; done
for i in 1 2 3 4 5 6; do bc_wait_staging $i || die "n$i: staging not made"; done

BYTES=$((WRITERS * MB * 1048576))
disk=() ceil=() cpur=()
echo "# protect: 6 nodes (4+2) on one machine, $WRITERS writers x $MB MiB on n1, $REPS repetitions"
printf '%-4s %10s %10s %10s %10s %10s %10s %8s\n' rep local_ms prot_ms MiB/s \
	ceil_ms disk_ms cpu_s/GiB ceil_cpu
for rep in $(seq "$REPS"); do
	WP=()
	t0=$(ms)
	for r in $(seq $WRITERS); do
		CKPT_NODES=1 "$B/tests/ckpt_tw" write -s "$DIR/n1/ckptd.sock" bench/protect v$rep \
			-r $r -n 1 -z $((MB * 1048576)) &
		WP+=($!)
	done
	for p in "${WP[@]}"; do wait "$p" || die "a writer failed"; done
	ctl 1 wait bench/protect v$rep local --timeout 120 >/dev/null || die "not LOCAL"
	t_local=$(ms)
	c0=$(cpu_ms)
	ctl 1 wait bench/protect v$rep protected --timeout 600 >/dev/null || die "not PROTECTED"
	t_prot=$(ms)
	c1=$(cpu_ms)
	pt=$((t_prot - t_local))
	[ $pt -gt 0 ] || pt=1
	# The ceiling, on the same bytes, the daemons idle meanwhile.
	out=$("$CEIL" -p $((PORT + 100 + rep)) $((BYTES >> 20)) "$DIR") || die "ceiling failed"
	cb=$(echo "$out" | awk '{print $3}')
	dn=$(echo "$out" | awk '{print $6}')
	pn=$(echo "$out" | awk '{print $8}')
	cn=$(echo "$out" | awk '{print $10}')
	awk -v b=$BYTES -v pt=$pt -v w=$((t_local - t0)) -v dn=$dn -v pn=$pn \
	    -v cn=$cn -v cb=$cb -v c=$((c1 - c0)) -v r=$rep 'BEGIN {
		gib = b / 1073741824.0
		printf "%-4d %10d %10d %10.0f %10.0f %10.0f %10.2f %8.2f\n", r, w, pt,
			b / (pt / 1000.0) / 1048576, pn / 1e6, dn / 1e6,
			c / 1000.0 / gib, cn / 1e9 / (cb / 1073741824.0)
	}'
	disk+=("$(bench_ratio $((dn / 1000000)) $pt)")
	ceil+=("$(bench_ratio $((pn / 1000000)) $pt)")
	cpur+=("$(awk -v c=$((c1 - c0)) -v b=$BYTES -v cn=$cn -v cb=$cb \
		'BEGIN { printf "%.3f", (c / 1000.0 / b) / (cn / 1e9 / cb) }')")
	stored=0
	for i in 2 3 4 5 6; do
		s=$(find "$DIR/n$i/store/shards" -name '*.dat' -printf '%s\n' | awk '{t+=$1} END {print t+0}')
		stored=$((stored + s))
	done
	ctl 1 rm bench/protect v$rep >/dev/null || die "rm v$rep failed"
done
sent=$(bc_json 1 protect_bytes)
raw=$("$B/tests/ckpt_ecrate" 4 2 $((BYTES >> 20)))
raw_ns=$(echo "$raw" | awk '{print $(NF-1)}')
raw_bytes=$(echo "$raw" | awk '{print $3}')
awk -v b=$BYTES -v rb=$raw_bytes -v rn=$raw_ns -v sent=$sent -v st=$stored \
    -v reps=$REPS 'BEGIN {
	printf "raw ISA-L ec_encode_data   %8.0f MiB/s (1 thread, 1 MiB chunks)\n", rb / (rn / 1e9) / 1048576
	printf "bytes sent per byte        %8.3f (all repetitions)\n", sent / (b * reps)
	printf "peer storage per byte      %8.3f (the last repetition)\n", st / b
}'
bench_row protdisk "protect: holders' O_DIRECT disk time / LOCAL->PROTECTED, $((BYTES >> 20)) MiB part" ">= 0.6" "${disk[@]}"
bench_row protceil "protect: ceiling (tools/ceiling) time / LOCAL->PROTECTED" ">= 0.8" "${ceil[@]}"
bench_row protcpu "protect: six ckptd CPU per GiB / the ceiling's" "<= 1.5" "${cpur[@]}"
