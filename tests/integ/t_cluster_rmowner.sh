#!/bin/bash
# t_cluster_rmowner: the owner of a part removed from the node list.  Seven
# ckptd nodes on 127.0.0.1-7, ec 4+2, heartbeat_timeout 1 s.
#  - The job runs on all seven and writes v1 (seven parts, PROTECTED).
#  - n7 is stopped and removed from the list (its store kept aside, never
#    started again); n1..n6 restart with the new list.  n7's part is still
#    a part of v1: every node lists v1 as 7 of 7 parts and `latest` is v1,
#    the one node that holds no shard of n7's part too (its holders speak
#    for it: nodes that never hear its owner still list it); the holders'
#    logs say n7 is no longer a node but owns parts; every byte of n7's
#    part reads back on every node, decoded from the shards its record
#    names.  The parts whose records named n7 as a holder are protected
#    again around it.
#  - A holder of n7's part is SIGKILLed (n7's part has m - 1 losses left):
#    n7's part still reads back on the others.  It is restarted, then
#    restarted cleanly twice: each time v1 is whole and latest on it and
#    every byte of all seven parts reads back there.
# TIMEOUT: 360
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
has_ctl || skip "ckptctl is not built"
cluster_setup 7 rackA rackB rackC rackD
JOB=train/rmo
F1=(-n 2 -z 1048576 -S 61)

node() {
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=48M
	cluster_start "$1" 4+2 -o cluster.heartbeat_timeout=1000
}
is() { status_is "$@"; }
whole() {    # NODE: v1 listed whole (7 of 7 parts) and latest there
	ctl $1 ls $JOB v1 2>/dev/null | head -1 | grep -qi "sealed.*7 of 7 parts" &&
		[ "$(tw $1 latest $JOB 2>/dev/null)" = v1 ]
}
holders7() {    # NODE: n7's part's holders as NODE lists them
	ctl "$1" --json ls $JOB v1 2>/dev/null | "$PY" -c '
import json, sys
for p in json.load(sys.stdin)["parts"]:
    if p.get("node") == "n7":
        print(p.get("holders", ""))'
}

for n in $ALL; do node $n; done
cluster_up 6
parts_write v1 $ALL
parts_protected v1 $ALL
REC7=$(part_holders n7 v1)
[ "$(echo $REC7 | wc -w)" = 5 ] || fail "n7's part's record: '$REC7'"
NONHOLDER=
for n in n1 n2 n3 n4 n5 n6; do
	[[ " $REC7 " == *" $n "* ]] || NONHOLDER=$n
done
[ -n "$NONHOLDER" ] || fail "every node holds a shard of n7's part: '$REC7'"
info "v1 protected in 7 parts; n7's part held by $REC7; $NONHOLDER holds none"

# ---- n7 removed from the list ---------------------------------------------------
stop_ckptd n7
grep -v "^n7 " "$NODES" >"$NODES.new" && mv "$NODES.new" "$NODES"
SIX="n1 n2 n3 n4 n5 n6"
for n in $SIX; do stop_ckptd $n; done
ALL=$SIX
for n in $ALL; do node $n; done
cluster_up 5
for n in $ALL; do
	poll_until 30 whole $n ||
		fail "$n: v1 is not whole and latest after n7 left: $(ctl $n ls $JOB v1 2>&1 | head -1); latest $(tw $n latest $JOB 2>&1)"
done
for n in $REC7; do
	grep -q "cluster: n7 is no longer a node, but owns parts" "$T/$n/ckptd.log" ||
		fail "$n (a holder of n7's part) does not log n7 as retired"
done
[ "$(holders7 $NONHOLDER)" = "$REC7" ] ||
	fail "$NONHOLDER lists n7's part with holders '$(holders7 $NONHOLDER)', want '$REC7'"
for n in $ALL; do part_read $n v1 7; done
parts_protected v1 $ALL
info "n7 removed: v1 whole and latest on all six ($NONHOLDER through the holders' word); n7's part reads back everywhere"

# ---- one more loss; the lost one restarts -------------------------------------------
set -- $REC7
H=$1
kill9 $H
for n in $ALL; do
	[ $n = $H ] && continue
	part_read $n v1 7
	break
done
info "$H (a holder of n7's part) down: n7's part still reads back"
for how in kill clean clean; do
	[ $how = kill ] || stop_ckptd $H
	node $H
	poll_until 30 is $H peers_up 5 || fail "$H: $(sjson $H peers_up) peers up ($how)"
	poll_until 30 whole $H || fail "$H: v1 not whole and latest after the restart ($how)"
	parts_read $H v1 7
done
info "$H restarted after a SIGKILL and cleanly twice: v1 whole, all seven parts read back"
finish
