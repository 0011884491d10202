#!/bin/bash
# t_cluster_rmnode: a holder removed from the node list.  Seven ckptd nodes
# on 127.0.0.1-7, ec 4+2, reprotect_after left at its default (10 min).
#  - The job runs on n1..n6 and writes v1 (six parts, PROTECTED); n7 holds
#    shards of some of them.
#  - n7 is stopped and removed from the list; n1..n6 restart with the new
#    list.  The parts whose records named n7 are re-protected at once (not
#    after reprotect_after): their records name six nodes none of which is
#    n7, the log says n7 is no longer a node, and every part is PROTECTED.
#    v1 is whole, listed and latest on every node.
#  - n5 and n6 are SIGKILLed (m nodes): every byte of v1 reads back on n1.
#  - n5 restarts after its SIGKILL, then cleanly twice: each time v1 reads
#    back whole on n5.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

need_ctl_py
cluster_setup 7 rackA rackB rackC rackD
JOB=train/rm
F1=(-n 2 -z 1048576 -S 51)

node() {
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=48M
	cluster_start "$1" 4+2 -o cluster.heartbeat_timeout=1000
}
is() { status_is "$@"; }
no_n7() {    # NODE: its v1 record names five holders, none n7
	local rec
	rec=$(part_holders $1 v1)
	[ "$(echo $rec | wc -w)" = 5 ] && [[ " $rec " != *" n7 "* ]]
}

for n in $ALL; do node $n; done
cluster_up 6
SIX="n1 n2 n3 n4 n5 n6"
i=0
for n in $SIX; do
	i=$((i + 1))
	CKPT_NODES=6 tw $n write $JOB v1 -r $i -P part$i "${F1[@]}" -w local ||
		fail "$n: writing its part of v1"
done
for n in $SIX; do
	ctl $n wait $JOB v1 protected --timeout 60 >/dev/null || fail "$n: v1 not PROTECTED"
done
HELD7=
for n in $SIX; do
	case " $(part_holders $n v1) " in *" n7 "*) HELD7+=" $n" ;; esac
done
[ -n "$HELD7" ] || fail "no part has a shard on n7"
info "v1 protected; n7 holds shards of:$HELD7"

# ---- n7 removed from the list --------------------------------------------------
stop_ckptd n7
grep -v "^n7 " "$NODES" >"$NODES.new" && mv "$NODES.new" "$NODES"
for n in $SIX; do stop_ckptd $n; done
ALL=$SIX
for n in $ALL; do node $n; done
cluster_up 5
for n in $HELD7; do
	poll_until 30 no_n7 $n || fail "$n: v1's record still names n7: $(part_holders $n v1)"
	grep -q "the holder of shard .*, n7, is no longer a node of the cluster" "$T/$n/ckptd.log" ||
		fail "$n: the log does not say n7 left"
done
for n in $ALL; do
	ctl $n wait $JOB v1 protected --timeout 60 >/dev/null || fail "$n: v1 not PROTECTED after n7 left"
	ctl $n ls $JOB v1 | head -1 | grep -qi "sealed.*6 of 6 parts" ||
		fail "$n lists v1 as: $(ctl $n ls $JOB v1 | head -1)"
	[ "$(tw $n latest $JOB)" = v1 ] || fail "$n: latest is $(tw $n latest $JOB)"
	poll_until 20 is $n parts_degraded 0 || fail "$n: $(sjson $n parts_degraded) parts degraded"
done
info "n7 removed: its shards placed elsewhere at once, v1 whole and latest"

# ---- m nodes lost ------------------------------------------------------------------
kill9 n5
kill9 n6
parts_read n1 v1 6
info "n5 and n6 down: v1 reads back on n1"

for how in kill clean clean; do
	[ $how = kill ] || stop_ckptd n5
	node n5
	poll_until 30 is n5 peers_up 4 || fail "n5: $(sjson n5 peers_up) peers up ($how)"
	parts_read n5 v1 6
done
info "n5 restarted three times: v1 whole"
finish
