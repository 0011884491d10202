#!/bin/bash
# t_cluster_rackloss: a whole failure domain lost, one spare back.  Six
# ckptd nodes on 127.0.0.1-6, ec 4+2, three domains of two, heartbeat
# 1 s; every node writes and protects its part of v1.
#  - n1 and n2 (rackA) are SIGKILLed and their stores deleted.
#  - A spare starts as n1 (empty store) while n2 stays down: it rebuilds
#    its part and that part is PROTECTED again, around n2 (its shard there
#    is kept in the record, listed `4/5 (n2 down ...)`), not LOCAL until
#    n2 returns.  The parts of n3..n6, whose shard on n1 was lost, stay
#    PROTECTED and send n1 that shard again: n1 holds 4 shards (n2, down,
#    cannot resend its own).
#  - n1 is SIGKILLed and restarted, then restarted cleanly twice: its part
#    stays PROTECTED, its shards stay, every file reads back.
#  - A spare starts as n2: it rebuilds, every part is PROTECTED 5/5.
#  - n5 and n6 (rackC) are then SIGKILLed: every file of all six parts
#    reads back byte for byte from n1, so the shards n1 and n2 got back and
#    the ones kept for n2 while it was down are real.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

has_ctl || skip "ckptctl is not built"
cluster_setup 6 rackA rackB rackC
JOB=train/rack
F1=(-n 2 -z 2097152 -S 61)
F2=("${F1[@]}")

node() {    # NAME [ARGS...]
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M
	cluster_start "$1" 4+2 -o cluster.heartbeat_timeout=1000 "${@:2}"
}
shards_of() {    # OBSERVER NODE: NODE's part of v1 in OBSERVER's ls:
	# shards up/shards, then the listing's line
	ctl "$1" --json ls $JOB v1 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["parts"]:
    if p.get("node") == sys.argv[1]:
        print("%d/%d" % (p["shards_up"], p["shards"]))' "$2"
}

for n in $ALL; do node $n; done
cluster_up 5
parts_write v1 $ALL
parts_protected v1 $ALL

# ---- rackA lost; a spare as n1 while n2 stays down ---------------------------
node_lose n1 n2
down_on() { status_is n3 peers_up 3; }
poll_until 20 down_on || fail "n3 still counts $(sjson n3 peers_up) peers up"
node n1
poll_until 60 rebuild_done n1 || fail "n1 did not rebuild: $(grep rebuild "$T/n1/ckptd.log" | tail -3)"
ctl n1 wait $JOB v1 protected --timeout 60 >/dev/null ||
	fail "n1's rebuilt part is $(part_level n1 v1), not PROTECTED around n2: $(grep protect "$T/n1/ckptd.log" | tail -3)"
[ "$(shards_of n1 n1)" = 4/5 ] ||
	fail "n1's part lists shards $(shards_of n1 n1), not 4/5 (n2 down)"
ctl n1 ls $JOB v1 | grep -Eq "^n1 .* 4/5 \(n2 down" ||
	fail "n1's listing does not say n2 is down: $(ctl n1 ls $JOB v1 | grep '^n1 ')"
# The others never dropped to LOCAL: n1 lost their shards, not k of them.
for n in n3 n4 n5 n6; do
	part_is $n v1 protected || fail "$n: its part is $(part_level $n v1) after n1 came back empty"
done
poll_until 60 shards_held_is n1 4 || fail "n1 holds $(shards_held n1) shards, not 4 (n3..n6's)"
grep -q "n1 no longer holds shard .* sending it again" "$T/n3/ckptd.log" ||
	fail "n3 did not send n1 its lost shard: $(grep -E 'no longer|protect' "$T/n3/ckptd.log" | tail -3)"
for n in n3 n4 n5 n6; do
	poll_until 30 part_is $n v1 protected || fail "$n: its part is $(part_level $n v1)"
done
parts_read n1 v1 6
info "rackA lost, a spare as n1: its part PROTECTED around n2 (down), the others kept PROTECTED and resent n1's shards"

# ---- n1 killed and restarted, then restarted cleanly twice -------------------
for how in kill clean clean; do
	if [ $how = kill ]; then kill9 n1; else stop_ckptd n1; fi
	node n1
	part_is n1 v1 protected || fail "after a restart ($how): n1's part is $(part_level n1 v1)"
	shards_held_is n1 4 || fail "after a restart ($how): n1 holds $(shards_held n1) shards"
	part_read n1 v1 1
done
info "n1 SIGKILLed and restarted twice: its part stays PROTECTED, its shards stay"

# ---- a spare as n2 -------------------------------------------------------------
node n2
poll_until 60 rebuild_done n2 || fail "n2 did not rebuild: $(grep rebuild "$T/n2/ckptd.log" | tail -3)"
parts_protected v1 $ALL
poll_until 60 shards_held_is n2 5 || fail "n2 holds $(shards_held n2) shards, not 5"
poll_until 60 shards_held_is n1 5 || fail "n1 holds $(shards_held n1) shards, not 5 (n2's part's too)"
full() { [ "$(shards_of n3 "$1")" = 5/5 ]; }
for n in $ALL; do
	poll_until 30 full $n || fail "$n's part lists shards '$(shards_of n3 $n)' on n3, not 5/5"
done

# ---- rackC lost: the regenerated and kept shards are real --------------------
kill9 n5
kill9 n6
poll_until 20 status_is n1 peers_up 3 || fail "n1 still counts $(sjson n1 peers_up) peers up"
parts_read n1 v1 6
info "n2 back, then rackC lost: every file of all six parts reads back from n1"
for n in n1 n2 n3 n4; do stop_ckptd $n; done
finish
