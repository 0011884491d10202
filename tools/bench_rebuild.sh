#!/bin/bash
# make bench (part): reading another node's part, and node loss.  Six ckptd
# nodes on 127.0.0.1-6 (ec 4+2, three domains of two, tools/bench_cluster.sh);
# 8 writers on n1 write one version (CKPT_REBUILD_MB each, default 32) and
# it is PROTECTED.  The same bytes are also written as plain files to a
# directory on the same disk (the PFS stand-in).  Then REPS times
# (bench_reps), side by side, each after dropping the page cache (root;
# otherwise the figures are warm):
#   - peer restore: `ckptctl restore --part n1` on n2 (n1's files read from
#     n1 over the link, written to a directory and fsync'd), checked byte
#     for byte against the directory afterwards, untimed;
#   - cp: `cp -r` of the directory, then sync, after each restore and again
#     before each rebuild; both ratios of a repetition take the faster of
#     the two (this disk's speed drifts, and a cp right after a restore
#     often runs at half speed);
#   - rebuild: n1 SIGKILLed and its store deleted, started again with an
#     empty store: start -> rebuild_state done (ckptd's own byte count; the
#     part is written to its store and fsync'd).
# Once, after the last rebuild: a degraded restore on n2 with n1 down (its
# files decoded from the shards on n2..n6), printed, not a row.
# Rows: cp time / peer restore time (goal >= 0.7), cp time / rebuild time
# (>= 0.6).  Not a test: it prints figures.  Everything shares this
# machine's two cores and one disk, where a real cluster spreads the
# holders' reads over its nodes.
set -u
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}/rebuild
MB=${CKPT_REBUILD_MB:-32}
WRITERS=8
. "$(dirname "$0")/bench_lib.sh"
. "$(dirname "$0")/bench_cluster.sh"
REPS=$(bench_reps)
TW=$B/tests/ckpt_tw
JOB=bench/rebuild
BYTES=$((WRITERS * MB * 1048576))
die() { echo "bench_rebuild: $*"; tail -5 "$DIR/n1/ckptd.log"; exit 1; }

for i in 1 2 3 4 5 6; do bc_start $i; done
for i in 1 2 3 4 5 6; do bc_wait_up $i 5 || die "n$i: peers not up"; done
for i in 1 2 3 4 5 6; do bc_wait_staging $i || die "n$i: staging not made"; done
for r in $(seq $WRITERS); do
	CKPT_NODES=1 "$TW" write -s "$DIR/n1/ckptd.sock" $JOB v1 -r $r -n 1 \
		-z $((MB * 1048576)) -S 7 &
	WP+=($!)
done
for p in "${WP[@]}"; do wait "$p" || die "a writer failed"; done
bc_ctl 1 wait $JOB v1 protected --timeout 600 >/dev/null || die "not PROTECTED"
mkdir -p "$DIR/pfsdir"
for r in $(seq $WRITERS); do
	"$TW" expect $JOB v1 -r $r -n 1 -z $((MB * 1048576)) -S 7 \
		-o "$DIR/pfsdir" || die "ckpt_tw expect failed"
done

restore() {    # NODE: n1's part restored through n<NODE>; ms
	local t0 t
	rm -rf "$DIR/rst"
	bc_drop_caches
	t0=$(bc_ms)
	bc_ctl "$1" restore $JOB v1 --part n1 --to "$DIR/rst" >/dev/null || return 1
	t=$(($(bc_ms) - t0))
	diff -r "$DIR/rst" "$DIR/pfsdir" >/dev/null || return 1
	rm -rf "$DIR/rst"
	echo "$t"
}
copy() {       # cp -r + sync of the directory; ms
	local t0 t
	rm -rf "$DIR/cpdir"
	bc_drop_caches
	t0=$(bc_ms)
	cp -r "$DIR/pfsdir" "$DIR/cpdir" && sync
	t=$(($(bc_ms) - t0))
	rm -rf "$DIR/cpdir"
	echo "$t"
}
lose_n1() {    # SIGKILL n1 and delete its store; wait until n2 sees it down
	kill -9 "${PIDS[1]}"
	wait "${PIDS[1]}" 2>/dev/null
	rm -rf "$DIR/n1/store"
	for _ in $(seq 400); do [ "$(bc_json 2 peers_up)" = 4 ] && return 0; sleep 0.05; done
	die "n2 does not see n1 down"
}
rebuild() {    # start n1 on an empty store until its rebuild is done: T_RB ms
	local t0           # (not in $(...): n1 would hold its pipe open)
	bc_drop_caches
	t0=$(bc_ms)
	bc_start 1
	for _ in $(seq 12000); do
		[ "$(bc_json 1 rebuild_state)" = 2 ] && break
		kill -0 "${PIDS[1]}" 2>/dev/null || die "n1 died in its rebuild"
		sleep 0.02
	done
	T_RB=$(($(bc_ms) - t0))
	[ "$(bc_json 1 rebuild_state)" = 2 ] || die "the rebuild did not finish"
	[ "$(bc_json 1 rebuild_bytes_done)" -ge "$BYTES" ] 2>/dev/null ||
		die "the rebuild rebuilt $(bc_json 1 rebuild_bytes_done) bytes, not $BYTES"
}

declare -a rr rb tr tc tb
for rep in $(seq "$REPS"); do
	bc_ctl 1 wait $JOB v1 protected --timeout 600 >/dev/null || die "not PROTECTED again"
	t_rst=$(restore 2) || die "n2's restore of n1's part failed or differs"
	t_cp=$(copy)
	lose_n1
	t_cp2=$(copy)
	rebuild
	tr+=("$t_rst")
	tc+=("$t_cp/$t_cp2")
	tb+=("$T_RB")
	[ "$t_cp2" -lt "$t_cp" ] && t_cp=$t_cp2     # the faster of the two
	rr+=("$(bench_ratio "$t_cp" "$t_rst")")
	rb+=("$(bench_ratio "$t_cp" "$T_RB")")
done
bc_ctl 1 wait $JOB v1 protected --timeout 600 >/dev/null || die "not PROTECTED after the rebuild"
lose_n1
t_dg=$(restore 2) || die "the degraded restore failed or differs"

echo "# reading and rebuilding n1's part (6 nodes, 4+2, one machine): $WRITERS x $MB MiB"
echo "peer restore ms: ${tr[*]}; cp -r + sync ms (next to each): ${tc[*]}; rebuild ms: ${tb[*]}"
awk -v b=$BYTES -v dg=$t_dg 'BEGIN {
	printf "degraded restore (n1 down)  %6.0f MiB/s (%d ms)\n", b / (dg / 1000.0) / 1048576, dg
}'
bench_row peerrst "peer restore (ckptctl restore on n2 of n1's part): cp -r + sync / restore" ">= 0.7" "${rr[@]}"
bench_row rebuild "rebuild of a replaced node (start -> done): cp -r + sync / rebuild" ">= 0.6" "${rb[@]}"
