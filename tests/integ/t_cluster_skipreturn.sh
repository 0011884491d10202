#!/bin/bash
# t_cluster_skipreturn: a holder the protection went around (down, kept in
# the record, its shard neither sent nor sealed) comes back, with an empty
# store, while that attempt is still sending.  Six ckptd nodes on
# 127.0.0.1-6, ec 4+2, three racks of two, heartbeat 1 s.
#  - rackA (n1, n2) is lost (SIGKILL, stores deleted); a spare as n1
#    rebuilds its part and protects it around n2 under a 1 MiB/s cap, so
#    the attempt is slow; a spare as n2 starts while it runs.
#  - When n1's attempt ends, n2 (up again) is sent its shard: n2 ends up
#    holding a shard of every other part (5), n1's included, and n1's part
#    is listed 5/5.
#  - n1 and n6 are then SIGKILLed: n1's part reads back byte for byte from
#    n3, from n2..n5's shards, so n2's is real (without it only 3 of the 4
#    needed are left).
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

has_ctl || skip "ckptctl is not built"
cluster_setup 6 rackA rackB rackC
JOB=train/skip
F1=(-n 4 -z 8388608 -S 62)
F2=("${F1[@]}")

node() {    # NAME [ARGS...]
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=128M
	cluster_start "$1" 4+2 -o cluster.heartbeat_timeout=1000 "${@:2}"
}
held_of() {    # HOLDER OWNER: shards HOLDER holds of OWNER's parts
	find "$T/$1/store/shards/$2" -name '*.meta' 2>/dev/null | wc -l
}
has_shard() { [ "$(held_of "$1" "$2")" -gt 0 ]; }
sending() { out_gt 0 sjson "$1" protect_bytes; }

for n in $ALL; do node $n; done
cluster_up 5
parts_write v1 $ALL
parts_protected v1 $ALL

node_lose n1 n2
poll_until 20 status_is n3 peers_up 3 || fail "n3 still counts $(sjson n3 peers_up) peers up"
node n1 -o cluster.bandwidth=1M
poll_until 120 rebuild_done n1 || fail "n1 did not rebuild: $(grep rebuild "$T/n1/ckptd.log" | tail -3)"
poll_until 60 sending n1 || fail "n1 never started protecting its part"
part_is n1 v1 local || fail "n1's part is $(part_level n1 v1) before its attempt ended (the cap did not hold it)"
node n2
poll_until 120 rebuild_done n2 || fail "n2 did not rebuild"
parts_protected v1 $ALL
poll_until 60 has_shard n2 n1 ||
	fail "n2 (back while n1's attempt went around it) never got n1's shard: $(grep -E 'protect|no longer' "$T/n1/ckptd.log" | tail -4)"
full() { [ "$(ctl n3 --json ls $JOB v1 | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["parts"]:
    if p["node"] == "n1": print("%d/%d" % (p["shards_up"], p["shards"]))')" = 5/5 ]; }
poll_until 30 full || fail "n1's part is not listed 5/5 on n3"
info "n2 came back during n1's attempt around it: it got its shard"

kill9 n1
kill9 n6
poll_until 20 status_is n3 peers_up 3 || fail "n3 still counts $(sjson n3 peers_up) peers up"
part_read n3 v1 1
info "n1 and n6 lost: n1's part reads back from n2..n5's shards"
for n in n2 n3 n4 n5; do stop_ckptd $n; done
finish
