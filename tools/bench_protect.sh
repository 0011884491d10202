#!/bin/bash
# make bench (part): protection across a cluster, against raw ISA-L.
# Starts six ckptd nodes on 127.0.0.1-6 (ec 4+2, three domains of two),
# stores under CKPT_BENCH_DIR, has 8 writers on n1 write one version
# (CKPT_PROTECT_MB each, default 64) and commit, and measures:
#   - LOCAL -> PROTECTED on n1 (commit returned -> ckptctl wait protected
#     returned), and the protect rate: the part's bytes over that time;
#   - raw ISA-L ec_encode_data on the same bytes, same k+m, same 1 MiB
#     chunks, in one thread (tests/integ/ckpt_ecrate), and the ratio;
#   - bytes sent per byte protected (ckptd's count of acknowledged shard
#     bytes over the part's bytes) and peer storage per byte protected
#     (the shard files on n2..n6 over the part's bytes).
# Not a test: it prints figures.  The nodes share this machine's cores and
# disk: on a small machine the holders' fsyncs and the loopback copies
# compete with the encode, which a real cluster spreads over its nodes.
set -u
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}/protect
MB=${CKPT_PROTECT_MB:-64}
WRITERS=8
. "$(dirname "$0")/bench_cluster.sh"
ms() { bc_ms; }
ctl() { bc_ctl "$@"; }

for i in 1 2 3 4 5 6; do bc_start $i; done
for i in 1 2 3 4 5 6; do bc_wait_up $i 5; done

BYTES=$((WRITERS * MB * 1048576))
t0=$(ms)
for r in $(seq $WRITERS); do
	CKPT_NODES=1 "$B/tests/ckpt_tw" write -s "$DIR/n1/ckptd.sock" bench/protect v1 \
		-r $r -n 1 -z $((MB * 1048576)) &
	WP+=($!)
done
for p in "${WP[@]}"; do wait "$p" || { echo "bench_protect: a writer failed"; exit 1; }; done
t_local=$(ms)
ctl 1 wait bench/protect v1 local --timeout 120 >/dev/null
t_local=$(ms)
ctl 1 wait bench/protect v1 protected --timeout 600 >/dev/null ||
	{ echo "bench_protect: not PROTECTED"; tail "$DIR/n1/ckptd.log"; exit 1; }
t_prot=$(ms)
sent=$(ctl 1 --json status | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["protect_bytes"])')
stored=0
for i in 2 3 4 5 6; do
	s=$(find "$DIR/n$i/store/shards" -name '*.dat' -printf '%s\n' | awk '{t+=$1} END {print t+0}')
	stored=$((stored + s))
done
raw=$("$B/tests/ckpt_ecrate" 4 2 $((BYTES >> 20)))
raw_ns=$(echo "$raw" | awk '{print $(NF-1)}')
raw_bytes=$(echo "$raw" | awk '{print $3}')
pt=$((t_prot - t_local))
[ $pt -gt 0 ] || pt=1
echo "# protect: 6 nodes (4+2) on one machine, $WRITERS writers x $MB MiB on n1"
awk -v b=$BYTES -v pt=$pt -v rb=$raw_bytes -v rn=$raw_ns -v sent=$sent \
    -v st=$stored -v w=$((t_local - t0)) 'BEGIN {
	prot = b / (pt / 1000.0) / 1048576
	rawr = rb / (rn / 1e9) / 1048576
	printf "write+commit to LOCAL      %8d ms\n", w
	printf "LOCAL -> PROTECTED         %8d ms\n", pt
	printf "protect rate               %8.0f MiB/s\n", prot
	printf "raw ISA-L ec_encode_data   %8.0f MiB/s (1 thread, 1 MiB chunks)\n", rawr
	printf "protect / raw ISA-L        %8.3f\n", prot / rawr
	printf "bytes sent per byte        %8.3f\n", sent / b
	printf "peer storage per byte      %8.3f\n", st / b
}'
