#!/bin/bash
# t_cluster_addnode: adding a node keeps every part where its holder record
# says, and a node lost while re-protection runs loses nothing.  Six ckptd
# nodes on 127.0.0.1-6, ec 4+2, heartbeat_timeout 1 s, reprotect_after 3 s,
# protection traffic capped at 2 MiB/s.
#  - v1 is written in six parts and PROTECTED.  n7 is added to the node list
#    and all seven restart: placement computed over seven nodes differs, but
#    every v1 part stays PROTECTED, keeps its holder record, and no node
#    sends a shard (protect_bytes 0 on each) - no mass re-send.
#  - v2, a job on all seven, is PROTECTED.
#  - n6 is SIGKILLed and left down: the parts with a shard on n6 are
#    re-protected under the cap.  While that runs, n1 is SIGKILLed and its
#    store deleted (lost).  n2 reads every byte of n1's parts of v1 and v2
#    (decoded from the holders their records name, with n1 and n6 down),
#    and `latest` is v2.
#  - n1 comes back on an empty store: it rebuilds both parts from their
#    holders (any peer may hold one now), and they are PROTECTED again.
#  - n1 is SIGKILLed and restarted, then restarted cleanly twice: each time
#    every part of v1 and v2 but n6's reads back on n1.  (A node on an empty
#    store learns a part from its owner's announcement, a shard it holds, or
#    a holder speaking for a part whose owner is down; n6's are not read
#    here until n6 is back.)  n6 returns: n1 reads n6's parts too.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

need_ctl_py
cluster_setup 6 rackA rackB rackC
JOB=train/add
F1=(-n 2 -z 2097152 -S 31)
F2=(-n 2 -z 2097152 -S 32)

node() {    # NAME [ARGS...]
	local name=$1
	shift
	[ -f "$T/$name/ckptd.conf" ] || ckptd_conf "$name" staging=48M
	cluster_start "$name" 4+2 -o cluster.heartbeat_timeout=1000 \
		-o cluster.reprotect_after=3s -o cluster.bandwidth=2M "$@"
}
is() { status_is "$@"; }

for n in $ALL; do node $n; done
cluster_up 5
parts_write v1 $ALL
parts_protected v1 $ALL
declare -A REC
for n in $ALL; do REC[$n]=$(part_holders $n v1); done
info "v1 protected on six nodes"

# ---- n7 joins: nothing moves ------------------------------------------------
echo "n7 127.0.0.7:$PORT rackC" >>"$NODES"
for n in $ALL; do stop_ckptd $n; done
ALL="$ALL n7"
for n in $ALL; do node $n; done
cluster_up 6
for n in n1 n2 n3 n4 n5 n6; do
	part_is $n v1 protected || fail "$n: v1 is $(part_level $n v1) after n7 joined"
	[ "$(part_holders $n v1)" = "${REC[$n]}" ] ||
		fail "$n: v1's holders moved from '${REC[$n]}' to '$(part_holders $n v1)'"
done
for n in n1 n2 n3 n4 n5 n6; do
	is $n protect_queued 0 || fail "$n queued $(sjson $n protect_queued) parts after n7 joined"
done
info "n7 joined: every v1 part kept its holders"

parts_write v2 $ALL
parts_protected v2 $ALL
# Since the restart each node sent v2's shards and nothing else (holders
# audit what they hold at each link up, long done by now): a 4 MiB part is
# one stripe of 4 x 1 MiB, 5 shards of 1 MiB.
for n in n1 n2 n3 n4 n5 n6; do
	is $n protect_bytes $((5 * 1048576)) ||
		fail "$n sent $(sjson $n protect_bytes) shard bytes since n7 joined, not v2's 5 MiB"
done
info "v2 protected on seven nodes; no v1 shard was sent again"

# ---- n6 down for long, n1 lost while re-protection runs ---------------------
kill9 n6
# The parts with a shard on n6.
HELD6=
for n in n1 n2 n3 n4 n5 n7; do
	for v in v1 v2; do
		case " $(part_holders $n $v) " in *" n6 "*) HELD6+=" $n/$v" ;; esac
	done
done
[ -n "$HELD6" ] || fail "no part has a shard on n6"
started() { grep -q "holder n6 of shard .* down for" "$T/$1/ckptd.log"; }
busy=
for nv in $HELD6; do
	[ "${nv%/*}" = n1 ] && continue
	busy=${nv%/*}
	break
done
if [ -n "$busy" ]; then
	poll_until 30 started $busy || fail "$busy did not start re-protecting around n6"
fi
kill9 n1
rm -rf "$T/n1/store"
parts_read n2 v1 6
parts_read n2 v2 7
[ "$(tw n2 latest $JOB)" = v2 ] || fail "n2: latest is $(tw n2 latest $JOB) with n1 and n6 down"
info "n6 down, n1 lost mid re-protection: n2 reads every part of v1 and v2"

# ---- n1 rebuilt on an empty store ---------------------------------------------
node n1
rebuilt() { status_is n1 rebuild_state 2; }
poll_until 120 rebuilt || fail "n1 did not rebuild: $(grep rebuild "$T/n1/ckptd.log" | tail -5)"
[ "$(sjson n1 rebuild_parts_done)" = 2 ] ||
	fail "n1 rebuilt $(sjson n1 rebuild_parts_done) parts, not 2: $(grep rebuild "$T/n1/ckptd.log" | tail -5)"
parts_protected v1 n1 n2 n3 n4 n5
parts_protected v2 n1 n2 n3 n4 n5 n7
info "n1 rebuilt both parts from their recorded holders; all PROTECTED around n6"

# ---- n1 killed and restarted, then twice cleanly --------------------------------
for how in kill clean clean; do
	if [ $how = kill ]; then kill9 n1; else stop_ckptd n1; fi
	node n1
	poll_until 30 is n1 peers_up 5 || fail "n1: $(sjson n1 peers_up) peers up after a restart ($how)"
	parts_read n1 v1 5
	parts_read n1 v2 5
	tw n1 verify $JOB v2 -r 7 -P part7 "${F2[@]}" || fail "n1: part 7 of v2 after a restart ($how)"
done
node n6
poll_until 30 is n1 peers_up 6 || fail "n1: n6 did not come back"
parts_read n1 v1 6
parts_read n1 v2 7
info "n1 restarted three times: v1 and v2 whole"
finish
