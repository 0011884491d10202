#!/bin/bash
# Sourced by the cluster benchmarks (bench_protect.sh, bench_rebuild.sh):
# six ckptd nodes n1..n6 on 127.0.0.1-6 (ec 4+2, three domains of two),
# each under $DIR/n<i>, killed and removed on exit.  Sets B, PORT, PIDS;
# gives bc_start I [ARGS...], bc_wait_up I, bc_wait_staging I,
# bc_ctl I ARGS..., bc_ms and bc_drop_caches.  $CKPT_BENCH_CKPTD: more
# ckptd options for every node (-o chunk=64M: records of 64 MiB).
B=${CKPT_BUILD:-build}
PORT=$(( 20000 + RANDOM % 10000 ))
declare -A PIDS
rm -rf "$DIR"
mkdir -p "$DIR"
bc_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$DIR"
}
trap bc_cleanup EXIT
head -c 48 /dev/urandom >"$DIR/key"
chmod 600 "$DIR/key"
for i in 1 2 3 4 5 6; do
	echo "n$i 127.0.0.$i:$PORT rack$(( (i + 1) / 2 ))"
done >"$DIR/nodes"
bc_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
bc_ctl() { "$B/ckptctl" -s "$DIR/n$1/ckptd.sock" "${@:2}"; }
bc_json() {    # I KEY: a number or bool of n<I>'s status --json daemon object
	local j         # (no python: the polls must not take the cores measured)
	j=$(bc_ctl "$1" --json status 2>/dev/null) || return 0
	[[ $j == *\"$2\":* ]] || return 0
	j=${j#*\"daemon\":\{}
	j=${j#*\"$2\":}
	echo "${j%%[,\}]*}"
}
bc_start() {   # I [ARGS...]: start node n<I>
	local i=$1
	shift
	mkdir -p "$DIR/n$i"
	"$B/ckptd" -o dir="$DIR/n$i" -o staging=1G -o staging_client=128M \
		-o cluster.node=n$i -o cluster.nodes="$DIR/nodes" \
		-o cluster.ec=4+2 -o cluster.key="$DIR/key" ${CKPT_BENCH_CKPTD:-} "$@" \
		2>>"$DIR/n$i/ckptd.log" &
	PIDS[$i]=$!
}
bc_wait_up() { # I PEERS: until n<I> has PEERS peers up (20 s at most)
	local _
	for _ in $(seq 400); do
		[ "$(bc_json "$1" peers_up)" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
bc_wait_staging() {   # I: until n<I>'s staging (1 GiB, made in the
	local _           # background at start) is whole (60 s at most):
	for _ in $(seq 1200); do    # its first touches are not measured
		[ "$(bc_json "$1" staging_total)" = $((1 << 30)) ] && return 0
		sleep 0.05
	done
	return 1
}
bc_drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; }
