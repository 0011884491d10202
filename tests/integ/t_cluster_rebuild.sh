#!/bin/bash
# t_cluster_rebuild: replacement nodes.  Six ckptd nodes on 127.0.0.1-6, ec
# 4+2, three failure domains of two, no drain target; every node writes and
# protects its part of v1 and v2.
#  - n1 and n2 are SIGKILLed and their stores deleted: from n3 every file of
#    both versions reads back byte for byte (degraded for n1's and n2's);
#  - two replacement nodes start under the names n1 and n2 with empty
#    stores: each rebuilds its two parts by itself (n2 also through
#    `ckptctl rebuild`), while a read of n1's files through n1 is served at
#    once; the other nodes find that n1 and n2 lost the shards they held
#    for them and send them again, so every node again holds a shard of
#    every other node's part, and every part is PROTECTED;
#  - every file reads back on every node;
#  - n3 and n4 are then killed (stores deleted): everything still reads
#    from n5 and n1, so the shards n1 and n2 got back are real;
#  - n3 comes back with a bandwidth cap and is SIGKILLed mid-rebuild,
#    restarted (the rebuild resumes and completes), then restarted cleanly
#    twice more: its parts are local, and read back byte for byte;
#  - n4 comes back and is rebuilt through `ckptctl rebuild`;
#  - a store of one node started under another's name is refused.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

cluster_setup 6 rackA rackB rackC
JOB=train/reb
FILES1=(-n 2 -z 3145728 -R)
FILES2=(-n 3 -z 1500000)

node() {    # NAME [ARGS...]
	local name=$1
	shift
	[ -f "$T/$name/ckptd.conf" ] || ckptd_conf "$name" staging=96M
	cluster_start "$name" 4+2 "$@"
}
verify_all() {    # NODE: every part of v1 and v2 reads back through NODE
	local i
	for i in 1 2 3 4 5 6; do
		tw "$1" verify $JOB v1 -r $i -P part$i "${FILES1[@]}" ||
			fail "$1: part $i of v1 does not read back"
		tw "$1" verify $JOB v2 -r $i -P part$i "${FILES2[@]}" ||
			fail "$1: part $i of v2 does not read back"
	done
}
protected_all() {
	local n
	for n in $ALL; do
		ctl $n wait $JOB v1 protected --timeout 60 >/dev/null &&
		ctl $n wait $JOB v2 protected --timeout 60 >/dev/null ||
			fail "$n: its parts are not PROTECTED again; log: $(grep -E 'protect|rebuild' "$T/$n/ckptd.log" | tail -4)"
	done
}
down_on() { ! status_is "$1" peers_up 5; }

for n in $ALL; do node $n; done
cluster_up 5
cluster_protect_parts $JOB v1 "${FILES1[@]}"
cluster_protect_parts $JOB v2 "${FILES2[@]}"
for n in $ALL; do
	shards_held_is $n 10 || fail "$n holds $(shards_held $n) shards, not 10"
done

# ---- two nodes lost: degraded reads ----------------------------------------
node_lose n1 n2
poll_until 20 down_on n3 || fail "n3 still counts n1 and n2 up"
verify_all n3
info "n1 and n2 lost: every file reads from n3"

# ---- two replacements rebuild ------------------------------------------------
node n1
node n2
# Served at once, while (or after) it rebuilds: decoded from the peers.
tw n1 verify $JOB v1 -r 1 -P part1 "${FILES1[@]}" ||
	fail "n1 (replacement) cannot read its own files while rebuilding"
out=$(ctl n2 rebuild --timeout 120) ||
	fail "ckptctl rebuild on n2: $out; log: $(grep rebuild "$T/n2/ckptd.log" | tail -5)"
# It rebuilt its two parts by itself, or through this call if it had not
# finished yet (then this call's rebuild finds nothing left to do).
echo "$out" | grep -q "rebuild done: [02] parts rebuilt" ||
	fail "n2: ckptctl rebuild says: $out"
grep -q "rebuild: done in .*: 2 parts rebuilt" "$T/n2/ckptd.log" ||
	fail "n2 did not rebuild its 2 parts: $(grep 'rebuild: done' "$T/n2/ckptd.log")"
poll_until 120 rebuild_done n1 || fail "n1 did not finish its rebuild: $(grep rebuild "$T/n1/ckptd.log" | tail -5)"
[ "$(sjson n1 rebuild_parts_done)" = 2 ] || fail "n1 rebuilt $(sjson n1 rebuild_parts_done) parts, not 2"
for n in n1 n2; do
	[ -f "$T/$n/store/rebuild" ] && fail "$n: the rebuild marker is still there"
	grep -q "rebuild: done" "$T/$n/ckptd.log" || fail "$n: no 'rebuild: done' in its log"
done
# The others send the shards n1 and n2 lost again.
for n in n1 n2; do
	poll_until 60 shards_held_is $n 10 || fail "$n holds $(shards_held $n) shards after the rebuild, not 10"
done
grep -q "no longer holds shard" "$T/n3/ckptd.log" ||
	fail "n3 did not notice that n1 or n2 lost its shards"
protected_all
for n in $ALL; do verify_all $n; done
ctl n1 ls $JOB v1 | head -1 | grep -qi "sealed.*6 of 6 parts" ||
	fail "n1 lists v1 as: $(ctl n1 ls $JOB v1 | head -1)"
info "n1 and n2 replaced and rebuilt: every part PROTECTED, every file reads everywhere"

# ---- two other nodes lost: the regenerated shards are real -----------------
node_lose n3 n4
poll_until 20 down_on n5 || fail "n5 still counts n3 and n4 up"
verify_all n5
verify_all n1
info "n3 and n4 lost: everything reads from n5 and n1, through n1's and n2's new shards"

# ---- a replacement killed mid-rebuild ---------------------------------------
mid() { [ "$(sjson n3 rebuild_bytes_done)" -gt 0 ] && status_is n3 rebuild_state 1; }
node n3 -o cluster.bandwidth=2M
poll_until 60 mid || fail "n3 never showed a rebuild in progress ($(sjson n3 rebuild_bytes_done) bytes)"
kill9 n3
node n3
poll_until 120 rebuild_done n3 || fail "n3's rebuild did not resume and finish: $(grep rebuild "$T/n3/ckptd.log" | tail -5)"
[ "$(sjson n3 rebuild_parts_lost)" = 0 ] || fail "n3 lost parts in its rebuild"
for i in 1 2; do
	stop_ckptd n3
	node n3
	[ "$(sjson n3 rebuild_state)" = 0 ] || fail "n3 rebuilds again at clean restart $i"
done
for v in v1 v2; do    # its own part (n4, still lost, is not known here)
	ctl n3 ls $JOB $v | grep -Eiq "^ *n3 +sealed +(local|protected)" ||
		fail "n3: its part of $v: $(ctl n3 ls $JOB $v)"
done
tw n3 verify $JOB v1 -r 3 -P part3 "${FILES1[@]}" || fail "n3: its v1 part after the restarts"
tw n3 verify $JOB v2 -r 3 -P part3 "${FILES2[@]}" || fail "n3: its v2 part after the restarts"
info "n3 SIGKILLed mid-rebuild: the rebuild resumed and finished, and survives two restarts"

# ---- ckptctl rebuild on a fresh store ---------------------------------------
node n4
ctl n4 rebuild --timeout 120 >/dev/null || fail "ckptctl rebuild on n4"
poll_until 60 shards_held_is n3 10 || fail "n3 holds $(shards_held n3) shards, not 10"
protected_all
verify_all n4
info "n4 rebuilt with ckptctl rebuild"

# ---- a store under another name ----------------------------------------------
stop_ckptd n5
stop_ckptd n6
if "$CKPTD" -c "$T/n6/ckptd.conf" -o cluster.node=n5 -o "cluster.nodes=$NODES" \
	-o cluster.ec=4+2 -o "cluster.key=$KEY" >"$T/n6-as-n5.log" 2>&1; then
	fail "ckptd served n6's store as n5"
fi
grep -q "belongs to node 'n6', not 'n5'" "$T/n6-as-n5.log" ||
	fail "no clear refusal: $(tail -3 "$T/n6-as-n5.log")"
info "a store is never served under another node's name"

for n in n1 n2 n3 n4; do stop_ckptd $n; done
finish
