#!/bin/bash
# make demo-cluster: the cluster on one machine, six ckptd "nodes" on
# 127.0.0.1-6 (loopback only), erasure coding 4+2 over three failure
# domains (racks) of two nodes each.
#
#  1. The six nodes start from one node list and one shared key; each finds
#     its peers.
#  2. A job writes one version from all six nodes (each node its own part,
#     through the C API), waits for LOCAL, and every part reaches
#     PROTECTED: its shards are on five other nodes.
#  3. Both nodes of rack A (n1, n2) are SIGKILLed and their stores wiped:
#     every file of the version, theirs included, reads back byte for byte
#     from n3, decoded from the shards on the survivors.
#  4. A spare with an empty store takes n1's place (started under n1's
#     name, on n1's address): it rebuilds n1's part from the shards and the
#     part is PROTECTED again; n1's files read back through it.
#  5. The status table: ckptctl status and ckptctl ls on the spare.
# Afterwards it stops every daemon and removes its directory.  Nothing is
# sent off the machine.
#
#   CKPT_BUILD   build directory (default build)
#   DEMO_MIB     MiB per file (default 8; two files a node)
set -u
B=${CKPT_BUILD:-build}
MIB=${DEMO_MIB:-8}
DIR=$(mktemp -d /tmp/ckpt-dc.XXXXXX)   # short: it holds unix sockets
JOB=demo-cluster
VER=step-$(date +%s)
FILES=(-n 2 -z $((MIB << 20)) -S 11)
declare -A PID=()

cleanup() {
	local n
	for n in "${!PID[@]}"; do kill "${PID[$n]}" 2>/dev/null; done
	for n in "${!PID[@]}"; do wait "${PID[$n]}" 2>/dev/null; done
	rm -rf "$DIR"
}
trap cleanup EXIT
die() {
	echo "demo-cluster: $*" >&2
	for f in "$DIR"/n*/ckptd.log; do
		[ -f "$f" ] && { echo "--- $f:" >&2; tail -5 "$f" >&2; }
	done
	exit 1
}
for b in ckptd ckptctl tests/ckpt_tw; do
	[ -x "$B/$b" ] || die "$B/$b is not built (make demo-cluster builds it)"
done
ctl() { local n=$1; shift; "$B/ckptctl" -s "$DIR/$n/ckptd.sock" "$@"; }
# status_json NODE KEY: one number of `ckptctl --json status`.
status_json() {
	ctl "$1" --json status 2>/dev/null |
		sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" | head -1
}
# until_ok SECONDS CMD...: poll CMD (a deadline, not a sleep in place of one).
until_ok() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}
peers_up() { [ "$(status_json "$1" peers_up)" = "$2" ]; }

# ---- 1. six nodes -------------------------------------------------------------
# A port below the kernel's ephemeral range, so no outgoing connection holds it.
read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
PORT=$((10000 + RANDOM % (lo - 10000)))
RACKS=(rackA rackA rackB rackB rackC rackC)
: >"$DIR/nodes"
for i in 1 2 3 4 5 6; do
	echo "n$i 127.0.0.$i:$PORT ${RACKS[$((i - 1))]}" >>"$DIR/nodes"
done
head -c 48 /dev/urandom >"$DIR/cluster.key"
chmod 600 "$DIR/cluster.key"
# conf NODE: its config file (small staging: six daemons share one machine).
conf() {
	mkdir -p "$DIR/$1/store"
	cat >"$DIR/$1/ckptd.conf" <<-EOF
	[ckptd]
	dir = $DIR/$1/store
	socket = $DIR/$1/ckptd.sock
	staging = 128M
	staging_client = 32M
	segment = 16M
	reserve = 0
	mlock = no
	[cluster]
	node = $1
	nodes = $DIR/nodes
	ec = 4+2
	key = $DIR/cluster.key
	EOF
}
start() {
	local n=$1
	[ -f "$DIR/$n/ckptd.conf" ] || conf "$n"
	"$B/ckptd" -c "$DIR/$n/ckptd.conf" >>"$DIR/$n/ckptd.log" 2>&1 &
	PID[$n]=$!
	until_ok 20 ctl "$n" status >/dev/null 2>&1 ||
		die "$n does not answer (alive: $(kill -0 "${PID[$n]}" 2>/dev/null && echo yes || echo no))"
}
lose() {    # NODE: SIGKILL it and wipe its store
	kill -KILL "${PID[$1]}" 2>/dev/null
	wait "${PID[$1]}" 2>/dev/null
	unset "PID[$1]"
	rm -rf "$DIR/$1/store"
}
echo "== 1. six ckptd nodes on 127.0.0.1-6, ec 4+2, racks A (n1 n2), B (n3 n4), C (n5 n6)"
echo "state, configs and logs in $DIR (removed at the end)"
cat "$DIR/nodes"
for i in 1 2 3 4 5 6; do start n$i; done
for i in 1 2 3 4 5 6; do
	until_ok 30 peers_up n$i 5 || die "n$i sees $(status_json n$i peers_up) of 5 peers"
done
echo "every node sees its 5 peers"

# ---- 2. one version from all six ------------------------------------------------
echo "== 2. the job writes $JOB/$VER: each node its part, 2 files of $MIB MiB"
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
t0=$(ms)
for i in 1 2 3 4 5 6; do
	CKPT_NODES=6 "$B/tests/ckpt_tw" write -s "$DIR/n$i/ckptd.sock" $JOB "$VER" \
		-r $i -P part$i "${FILES[@]}" -w local >/dev/null || die "n$i: writing its part"
done
t1=$(ms)
for i in 1 2 3 4 5 6; do
	ctl n$i wait $JOB "$VER" protected --timeout 120 >/dev/null ||
		die "n$i: its part did not reach PROTECTED"
done
t2=$(ms)
echo "LOCAL on all six in $((t1 - t0)) ms, PROTECTED (shards on 5 other nodes) $((t2 - t1)) ms later"
ctl n3 ls $JOB "$VER"

# ---- 3. rack A lost ---------------------------------------------------------------
echo "== 3. rack A lost: n1 and n2 SIGKILLed, their stores wiped"
lose n1
lose n2
until_ok 30 peers_up n3 3 || die "n3 still sees $(status_json n3 peers_up) peers"
for i in 1 2 3 4 5 6; do
	"$B/tests/ckpt_tw" verify -s "$DIR/n3/ckptd.sock" $JOB "$VER" -r $i -P part$i \
		"${FILES[@]}" >/dev/null || die "part $i does not read back from n3"
done
echo "every file of all six parts reads back byte for byte from n3 (n1's and n2's decoded from shards)"
ctl n3 ls $JOB "$VER"

# ---- 4. a spare takes n1's place ------------------------------------------------
echo "== 4. a spare with an empty store starts as n1 and rebuilds its part"
start n1
until_ok 120 eval '[ "$(status_json n1 rebuild_state)" = 2 ]' ||
	die "the spare did not finish its rebuild: $(grep rebuild "$DIR/n1/ckptd.log" | tail -3)"
ctl n1 wait $JOB "$VER" protected --timeout 120 >/dev/null ||
	die "n1's rebuilt part is not PROTECTED again"
"$B/tests/ckpt_tw" verify -s "$DIR/n1/ckptd.sock" $JOB "$VER" -r 1 -P part1 \
	"${FILES[@]}" >/dev/null || die "n1's files do not read back through the spare"
grep "rebuild: done" "$DIR/n1/ckptd.log" | tail -1 | sed 's/^.*rebuild:/rebuild:/'
echo "n1's part is local again on the spare, PROTECTED, and reads back byte for byte"

# ---- 5. status -----------------------------------------------------------------------
echo "== 5. ckptctl status and ckptctl ls on the spare"
ctl n1 status
ctl n1 ls $JOB "$VER"
echo "demo-cluster: OK"
