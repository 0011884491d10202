#!/bin/bash
# t_cluster_adopt: a survivor takes over the part of a node gone for good
# (server/cluster/adopt.c).  Seven ckptd nodes on 127.0.0.1-7, ec 4+2,
# heartbeat_timeout 1 s, reprotect_after 3 s, shards capped at 4 MiB/s.
#  [lost]    v1 is written on n1..n6, PROTECTED.  n6 is lost (SIGKILL,
#            store deleted); the job goes on with v2 on n1..n5 + the spare
#            n7.  n7, the one node up with no part of v1, decodes n6's part
#            and makes it its own: SIGKILLed while it decodes, and again
#            while it protects the part, it goes on after each restart.
#            Then v1 is listed with parts n1..n5 + n7 everywhere, n7's part
#            is PROTECTED with five holders (none n6 or n7), and no node
#            holds a shard of n6's old part any more.  n7 and a holder of
#            its part are SIGKILLed (with n6, three nodes gone: n6's old
#            part would be short of k shards): every byte of v1 reads back
#            on n3.
#  [returns] v3 on n1..n5.  n5 is SIGKILLed with its store kept and stays
#            down past reprotect_after: n7 (no part of v3) takes its part
#            over (and cannot protect it with five nodes up: n5's old part
#            stays meanwhile).  n5 comes back: n7's part is PROTECTED, n5's
#            own copy is superseded and removed, v3 is listed n1..n4 + n7
#            and reads back whole on n5 (v1 and v2 too), after a SIGKILL of
#            n5 and two clean restarts too.
#  [early]   v4 on n1..n5; n5 SIGKILLed, and back while n7 decodes its part:
#            n7 drops its copy, v4 stays n1..n5 and reads back whole.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

need_ctl_py
cluster_setup 7 rackA rackB rackC rackD
JOB=train/adopt
F1=(-n 3 -z 4194304 -S 51)
F2=(-n 2 -z 1048576 -S 52)

node() {    # NAME
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=48M keep=3
	cluster_start "$1" 4+2 -o cluster.heartbeat_timeout=1000 \
		-o cluster.reprotect_after=3s -o cluster.bandwidth=4M
}
is() { status_is "$@"; }
up_is() {    # N NODES...: each of NODES has N peers up
	local want=$1 n
	shift
	for n in "$@"; do
		poll_until 30 is $n peers_up "$want" || fail "$n: $(sjson $n peers_up) peers up, want $want"
	done
}
logged() { grep -q "$2" "$T/$1/ckptd.log"; }
# old_shards OWNER: the shards of OWNER's parts held on any node
old_shards() {
	local n c=0
	for n in $ALL; do
		c=$((c + $(find "$T/$n/store/shards/$1" -name '*.meta' 2>/dev/null | wc -l)))
	done
	echo $c
}
no_old_shards() { [ "$(old_shards "$1")" = 0 ]; }
seen_is() { [ "$(parts_seen "$1" $JOB "$2")" = "$3" ]; }

for n in $ALL; do node $n; done
up_is 6 $ALL

# ---- [lost] ----------------------------------------------------------------------
parts_write v1 n1 n2 n3 n4 n5 n6
parts_protected v1 n1 n2 n3 n4 n5 n6
node_lose n6
# The job goes on on n1..n5 + the spare n7 at once: n7 writes its part of
# v2 before it takes v1 over (3 s), so the part it takes over is older
# than one of its own (retention goes by seal time for it).
CKPT_NODES=6 tw n7 write $JOB v2 -r 6 -P part6 "${F2[@]}" -w local || fail "n7: writing its part of v2"
for i in 1 2 3 4 5; do
	CKPT_NODES=6 tw n$i write $JOB v2 -r $i -P part$i "${F2[@]}" -w local || fail "n$i: writing its part of v2"
done
poll_until 60 logged n7 "adopt: $JOB/v1: its owner n6 is gone" ||
	fail "n7 did not start taking n6's part of v1 over: $(grep -E 'adopt|rebuild' "$T/n7/ckptd.log" | tail -3)"
kill9 n7
node n7
poll_until 60 logged n7 "adopt: an adoption was cut short" ||
	fail "n7 does not say its adoption was cut short"
poll_until 90 logged n7 "adopt: $JOB/v1, the part of n6, is this node's now" ||
	fail "n7 did not take n6's part over after its restart: $(grep -E 'adopt|rebuild' "$T/n7/ckptd.log" | tail -3)"
# Mid-protection (12 MiB of shards x 1.5 at 4 MiB/s), unless it was quick.
if ! part_is n7 v1 protected; then
	kill9 n7
	node n7
fi
up_is 5 n7
parts_protected v1 n7
rec=$(part_holders n7 v1)
[ "$(echo $rec | wc -w)" = 5 ] || fail "n7's part of v1 has holders '$rec', want five"
case " $rec " in *" n6 "* | *" n7 "*) fail "n7's part of v1 is held on '$rec'" ;; esac
for n in n1 n2 n3 n4 n5 n7; do
	poll_until 30 seen_is $n v1 "n1 n2 n3 n4 n5 n7" ||
		fail "$n lists v1's parts as '$(parts_seen $n $JOB v1)'"
done
poll_until 30 no_old_shards n6 || fail "$(old_shards n6) shards of n6's parts are still held"
info "[lost] n6's part of v1 is n7's, PROTECTED on $rec; n6's old shards gone"

h=${rec%% *}
[ $h = n3 ] && h=$(echo $rec | cut -d' ' -f2)
kill9 n7
kill9 $h
parts_read n3 v1 6
info "[lost] n6, n7 and $h gone: every byte of v1 reads back on n3"
node n7
node $h
up_is 5 n1 n2 n3 n4 n5 n7

# ---- [returns] ---------------------------------------------------------------------
base=$(old_shards n5)    # of its part of v1
parts_write v3 n1 n2 n3 n4 n5
parts_protected v3 n1 n2 n3 n4 n5
kill9 n5
poll_until 90 logged n7 "adopt: $JOB/v3, the part of n5, is this node's now" ||
	fail "n7 did not take n5's part of v3 over: $(grep adopt "$T/n7/ckptd.log" | tail -3)"
is n7 parts_adopted 1 && is n7 parts_adopting 0 ||
	fail "n7's status: $(sjson n7 parts_adopted) parts taken over, $(sjson n7 parts_adopting) now; want 1 and 0"
ctl n7 status | grep -q "1 parts of lost nodes taken over since start" ||
	fail "ckptctl status does not say n7 took a part over: $(ctl n7 status | grep -A3 '^protect')"
# Five nodes up (n5, n6 down): too few for a new part of 4+2 to be
# PROTECTED, so n5's old part, with four of its shards up, stays too.
node n5
up_is 5 n5
parts_protected v3 n7
poll_until 30 logged n5 "adopt: $JOB/v3: another node took this node's part over" ||
	fail "n5 did not drop its superseded copy of v3"
for n in n1 n2 n3 n4 n5 n7; do
	poll_until 30 seen_is $n v3 "n1 n2 n3 n4 n7" ||
		fail "$n lists v3's parts as '$(parts_seen $n $JOB v3)'"
done
old_is() { [ "$(old_shards "$1")" = "$2" ]; }
poll_until 30 old_is n5 "$base" || fail "$(old_shards n5) shards of n5's parts are held, want $base (its v1 part's only)"
parts_read n5 v3 5
for how in kill clean clean; do
	if [ $how = kill ]; then kill9 n5; else stop_ckptd n5; fi
	node n5
	up_is 5 n5
	seen_is n5 v3 "n1 n2 n3 n4 n7" || poll_until 30 seen_is n5 v3 "n1 n2 n3 n4 n7" ||
		fail "after a restart ($how): n5 lists v3 as '$(parts_seen n5 $JOB v3)'"
	parts_read n5 v3 5
	parts_read n5 v1 6
done
info "[returns] n5 back: its copy of v3 superseded by n7's, v3 whole after three restarts"

# ---- [early] -------------------------------------------------------------------------
F2=(-n 2 -z 8388608 -S 53)      # v4: 16 MiB a part, 4 s to decode at the cap
parts_write v4 n1 n2 n3 n4 n5
parts_protected v4 n1 n2 n3 n4 n5
kill9 n5
poll_until 60 logged n7 "adopt: $JOB/v4: its owner n5 is gone" ||
	fail "n7 did not start taking n5's part of v4 over"
node n5
poll_until 60 logged n7 "adopt: $JOB/v4: its owner n5 is back: the copy taken over is dropped" ||
	fail "n7 did not drop its copy of v4 when n5 came back: $(grep 'adopt' "$T/n7/ckptd.log" | tail -3)"
for n in n1 n3 n5 n7; do
	poll_until 30 seen_is $n v4 "n1 n2 n3 n4 n5" ||
		fail "$n lists v4's parts as '$(parts_seen $n $JOB v4)'"
done
parts_protected v4 n5
parts_read n3 v4 5
info "[early] n5 back while n7 decoded its part of v4: n7's copy dropped, n5's stays"
for n in n1 n2 n3 n4 n5 n7; do assert_up $n; done
finish
