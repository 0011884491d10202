#!/bin/bash
# make bench (part): node loss.  Six ckptd nodes on 127.0.0.1-6 (ec 4+2,
# three domains of two, tools/bench_cluster.sh); 8 writers on n1 write one
# version (CKPT_REBUILD_MB each, default 32) and it is PROTECTED.  Measured,
# each after dropping the page cache (root; otherwise the figures are warm):
#   - owner read: n2 reads every file of n1's part from n1 (ckpt_tw verify,
#     which checks every byte);
#   - degraded read: n1 SIGKILLed and its store deleted, n2 reads the same
#     files decoded from the shards on n2..n6;
#   - rebuild: n1 restarted with an empty store rebuilds its part from the
#     shards (start -> rebuild_state done, ckptd's own byte count), written
#     to its store and fsync'd;
#   - PFS directory: the same bytes as plain files in a directory on the
#     same disk, read with cat, and copied with cp -r + sync (what a restore
#     from the PFS does instead of a rebuild).
# Not a test: it prints figures.  Everything shares this machine's cores and
# disk, where a real cluster spreads the holders' reads over its nodes.
set -u
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}/rebuild
MB=${CKPT_REBUILD_MB:-32}
WRITERS=8
. "$(dirname "$0")/bench_cluster.sh"
TW=$B/tests/ckpt_tw
JOB=bench/rebuild
BYTES=$((WRITERS * MB * 1048576))
die() { echo "bench_rebuild: $*"; tail -5 "$DIR/n1/ckptd.log"; exit 1; }

for i in 1 2 3 4 5 6; do bc_start $i; done
for i in 1 2 3 4 5 6; do bc_wait_up $i 5 || die "n$i: peers not up"; done
for r in $(seq $WRITERS); do
	CKPT_NODES=1 "$TW" write -s "$DIR/n1/ckptd.sock" $JOB v1 -r $r -n 1 \
		-z $((MB * 1048576)) -S 7 &
	WP+=($!)
done
for p in "${WP[@]}"; do wait "$p" || die "a writer failed"; done
bc_ctl 1 wait $JOB v1 protected --timeout 600 >/dev/null || die "not PROTECTED"

read_all() {   # NODE: every file of the part through n<NODE>; ms
	local t0 r
	bc_drop_caches
	t0=$(bc_ms)
	for r in $(seq $WRITERS); do
		"$TW" verify -s "$DIR/n$1/ckptd.sock" $JOB v1 -r $r -n 1 \
			-z $((MB * 1048576)) -S 7 || return 1
	done
	echo $(($(bc_ms) - t0))
}
t_owner=$(read_all 2) || die "n2 cannot read n1's part"
kill -9 "${PIDS[1]}"
wait "${PIDS[1]}" 2>/dev/null
rm -rf "$DIR/n1/store"
for _ in $(seq 200); do [ "$(bc_json 2 peers_up)" = 4 ] && break; sleep 0.05; done
t_degraded=$(read_all 2) || die "degraded read failed"

bc_drop_caches
t0=$(bc_ms)
bc_start 1
for _ in $(seq 12000); do
	[ "$(bc_json 1 rebuild_state)" = 2 ] && break
	sleep 0.05
done
t_rebuild=$(($(bc_ms) - t0))
[ "$(bc_json 1 rebuild_state)" = 2 ] || die "the rebuild did not finish"
rbytes=$(bc_json 1 rebuild_bytes_done)
[ "$rbytes" -gt 0 ] 2>/dev/null || die "the rebuild rebuilt nothing"

mkdir -p "$DIR/pfsdir"
for r in $(seq $WRITERS); do
	"$TW" expect $JOB v1 -r $r -n 1 -z $((MB * 1048576)) -S 7 \
		-o "$DIR/pfsdir" || die "ckpt_tw expect failed"
done
bc_drop_caches
t0=$(bc_ms)
find "$DIR/pfsdir" -type f -exec cat {} + >/dev/null
t_cat=$(($(bc_ms) - t0))
bc_drop_caches
t0=$(bc_ms)
cp -r "$DIR/pfsdir" "$DIR/cpdir" && sync
t_cp=$(($(bc_ms) - t0))

echo "# node loss: 6 nodes (4+2) on one machine, n1's part of $WRITERS x $MB MiB"
awk -v b=$BYTES -v rb=$rbytes -v o=$t_owner -v dg=$t_degraded \
    -v rbt=$t_rebuild -v c=$t_cat -v cp=$t_cp 'function rate(x, ms) {
	if (ms < 1) ms = 1
	return x / (ms / 1000.0) / 1048576
} BEGIN {
	printf "owner read (n2 from n1)    %8.0f MiB/s\n", rate(b, o)
	printf "degraded read (n1 lost)    %8.0f MiB/s\n", rate(b, dg)
	printf "rebuild of n1 (to disk)    %8.0f MiB/s (%d MiB in %d ms)\n", rate(rb, rbt), rb / 1048576, rbt
	printf "PFS dir read (cat)         %8.0f MiB/s\n", rate(b, c)
	printf "PFS dir copy (cp -r, sync) %8.0f MiB/s\n", rate(b, cp)
	printf "degraded / owner read      %8.2f\n", rate(b, dg) / rate(b, o)
	printf "rebuild / PFS dir read     %8.2f\n", rate(rb, rbt) / rate(b, c)
	printf "rebuild / PFS dir copy     %8.2f\n", rate(rb, rbt) / rate(b, cp)
}'
