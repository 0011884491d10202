#!/bin/bash
# t_cluster_downlong: a node that stays down no longer blocks protection.
# Eight ckptd nodes on 127.0.0.1-8, ec 4+2, four failure domains of two,
# heartbeat_timeout 1 s, reprotect_after 3 s.
#  - v1 is written in eight parts and every part reaches PROTECTED with the
#    computed holders; each part's manifest carries its holder record
#    (format 6), `ls` lists the holders of every part and SHARDS 5/5, and
#    status says no part is below full redundancy.
#  - n8 is SIGKILLed and left down.  v2, a job on the seven others, has
#    every part PROTECTED within a bound (its holders chosen around n8), and
#    none of v2's shards is on n8's disk.  The parts of v1 that n8 held a
#    shard of are re-protected once n8 has been down 3 s: every v1 part of
#    n1..n7 is PROTECTED again, the log names n8 as the holder replaced,
#    status counts the re-protections and no part is left degraded.
#  - m = 2 more nodes (n6, n7) are SIGKILLed: three of eight down.  Every
#    byte of v2's seven parts and of v1's parts of n1..n7 reads back on n1
#    (the parts of n6 and n7 decoded from their recorded holders).  n8's own
#    part of v1 is not checked: its owner is gone too, and adopting a lost
#    owner's part onto a survivor is not built yet.
#  - n8 comes back: the shards of v1 it held and that were placed elsewhere
#    are dropped (the log says so) once their owners announce their parts.
#  - n6 is restarted after its SIGKILL, then cleanly twice: each time every
#    part of v2 reads back byte for byte on n6.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

need_ctl_py
cluster_setup 8 rackA rackB rackC rackD
JOB=train/down
F1=(-n 2 -z 1048576 -S 11)
F2=(-n 2 -z 1048576 -S 22)

node() {
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=48M
	cluster_start "$1" 4+2 -o cluster.heartbeat_timeout=1000 \
		-o cluster.reprotect_after=3s
}
is() { status_is "$@"; }
# man_format NODE VERSION: the format of NODE's manifest of VERSION.
man_format() {
	local man
	man=$(store_man_of "$T/$1/store" "$2")
	[ -n "$man" ] && od -An -tu4 -j8 -N4 "$man" | tr -d ' '
}

for n in $ALL; do node $n; done
cluster_up 7

# ---- v1: eight parts, the computed holders ------------------------------
parts_write v1 $ALL
parts_protected v1 $ALL
for n in $ALL; do
	rec=$(part_holders $n v1)
	[ "$(echo $rec | wc -w)" = 5 ] || fail "$n: v1's manifest has no holder record of 5 nodes: '$rec'"
	case " $rec " in *" $n "*) fail "$n holds a shard of its own part: $rec" ;; esac
	[ "$(man_format $n v1)" = 6 ] || fail "$n: v1's manifest is format $(man_format $n v1), not 6 (the holder record)"
	is $n parts_degraded 0 || fail "$n: $(sjson $n parts_degraded) parts degraded with every node up"
done
ctl n1 ls $JOB v1 | grep -E "^n2 " | grep -q " 5/5" ||
	fail "n1 lists n2's part as: $(ctl n1 ls $JOB v1 | grep -E '^n2 ')"
# The parts n8 holds a shard of (reprotected once n8 stays down).
HELD_BY_N8=
for n in n1 n2 n3 n4 n5 n6 n7; do
	case " $(part_holders $n v1) " in *" n8 "*) HELD_BY_N8+=" $n" ;; esac
done
[ -n "$HELD_BY_N8" ] || fail "no part of v1 has a shard on n8"
info "v1 protected; n8 holds shards of:$HELD_BY_N8"

# ---- n8 stays down: v2 protected around it --------------------------------
kill9 n8
first=${HELD_BY_N8# }
first=${first%% *}
down_shown() { ctl n1 ls $JOB v1 | grep -E "^$first " | grep -q "4/5 (n8 down"; }
poll_until 10 down_shown || fail "n1 lists $first's part as: $(ctl n1 ls $JOB v1 | grep -E "^$first ")"
t0=$(now_ms)
parts_write v2 n1 n2 n3 n4 n5 n6 n7
parts_protected v2 n1 n2 n3 n4 n5 n6 n7
took=$(( $(now_ms) - t0 ))
[ $took -lt $(( $(scaled 60) * 1000 )) ] || fail "v2 took $took ms to be PROTECTED"
for n in n1 n2 n3 n4 n5 n6 n7; do
	rec=$(part_holders $n v2)
	[ "$(echo $rec | wc -w)" = 5 ] || fail "$n: v2's holder record: '$rec'"
	case " $rec " in *" n8 "*) fail "$n placed a shard of v2 on n8, which is down: $rec" ;; esac
done
info "v2: seven parts PROTECTED in $took ms with n8 down"

# ---- re-protection of v1 ------------------------------------------------------
# n8 down past reprotect_after: each part it held a shard of gets a new
# holder record without it, and is PROTECTED again.
no_n8() {
	local rec
	rec=$(part_holders $1 v1)
	[ "$(echo $rec | wc -w)" = 5 ] && [[ " $rec " != *" n8 "* ]] &&
		part_is $1 v1 protected
}
reprotected=0
for n in $HELD_BY_N8; do
	poll_until 30 no_n8 $n || fail "$n: v1 still has a shard on n8, or is not PROTECTED: $(part_holders $n v1), $(part_level $n v1)"
	grep -q "holder n8 of shard .* down for" "$T/$n/ckptd.log" ||
		fail "$n: the log does not say n8 was replaced"
	r=$(sjson $n reprotect_done)
	[ "${r:-0}" -ge 1 ] || fail "$n: status counts $r re-protections"
	reprotected=$((reprotected + 1))
done
parts_protected v1 n1 n2 n3 n4 n5 n6 n7
nodeg() { is "$1" parts_degraded 0; }
for n in n1 n2 n3 n4 n5 n6 n7; do
	poll_until 20 nodeg $n || fail "$n: $(sjson $n parts_degraded) parts still degraded"
done
info "v1: $reprotected parts re-protected around n8"

# ---- m more nodes lost: everything still reads ---------------------------------
kill9 n6
kill9 n7
parts_read n1 v2 7
for i in 1 2 3 4 5 6 7; do
	tw n1 verify $JOB v1 -r $i -P part$i "${F1[@]}" ||
		fail "n1: part $i of v1 does not read back with n6, n7 and n8 down"
done
info "n6, n7, n8 down: v2 and v1's parts of n1..n7 read back on n1"

# ---- n8 returns: its superseded shards go -------------------------------------
node n8
dropped() { grep -q "dropping the copy held here" "$T/n8/ckptd.log"; }
poll_until 30 dropped || fail "n8 kept the shards placed elsewhere: $(grep -c '' "$T/n8/ckptd.log") log lines"
for n in $HELD_BY_N8; do
	# No shard of a re-protected part is left on n8 once it is dropped.
	id=$(store_man_of "$T/$n/store" v1)
	[ -n "$id" ] || fail "$n: no manifest of v1"
done
info "n8 back: superseded shards dropped"

# ---- n6 restarted after its SIGKILL, then cleanly twice --------------------------
node n6
node n7
for how in first clean clean; do
	[ $how = clean ] && { stop_ckptd n6; node n6; }
	poll_until 30 is n6 peers_up 7 || fail "n6: $(sjson n6 peers_up) peers up after a restart ($how)"
	parts_read n6 v2 7
	ctl n6 wait $JOB v2 protected --timeout 30 >/dev/null ||
		fail "n6: v2 is not PROTECTED after a restart ($how)"
done
info "n6 restarted three times: v2 whole"
finish
