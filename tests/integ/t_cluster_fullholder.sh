#!/bin/bash
# t_cluster_fullholder: a holder whose file system fills up.  Seven ckptd
# nodes on 127.0.0.1-7, ec 4+2 (so every part has one node to spare); n7's
# store is on a small tmpfs, [cluster] holder_reserve = 32M, segments of 8M.
#  - v1: every node writes its part; every part reaches PROTECTED.
#  - An abandoned attempt: an owner whose shards n7 holds is restarted with
#    a protect bandwidth cap, writes a part, and is SIGKILLed while n7 has a
#    shard of it half-written: n7 drops that shard's file and reservation
#    (its log says so); the owner, restarted, protects the part.
#  - A full holder: a plain file fills n7's tmpfs to 4M above the reserve.
#    Every other node writes a part of v3 (7M shards): n7 refuses them with
#    ENOSPC, its log naming the owner, what was asked and what is free;
#    every part still reaches PROTECTED (its owner places the shard on the
#    spare node), and the half-written shards n7 took are dropped once
#    their parts are PROTECTED elsewhere.  n7's own part of v3 (40M, more
#    than its spare segments) commits, reads back byte for byte and reaches
#    PROTECTED: peers' shards did not take its room.
#  - n7's status is honest: its held shards and their bytes are what its
#    shard directory holds sealed, nothing stays reserved, the refusals are
#    counted, and its capacity leaves
#    out the plain file.
#  - n7 is SIGKILLed and restarted twice: every part of n7's still reads
#    back byte for byte, it holds the same shards, none fails its CRC, and
#    every part of every node is still PROTECTED.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
TMPFS=$T/tmpfs
mount_tmpfs "$TMPFS" 200m
STORE7=$TMPFS/store
SHARDS7=$STORE7/shards
cluster_setup 7 dom
JOB=train/full
F1=(-n 2 -z 2097152 -S 11)        # 4 MiB a part: 1 stripe, 1 MiB shards
F2=(-n 3 -z 8388608 -S 22)        # 24 MiB: 6 stripes
F3=(-n 2 -z 14680064 -S 33)       # 28 MiB: 7 stripes, 7 MiB shards
F3OWN=(-n 2 -z 20971520 -S 34)    # n7's own v3 part: 40 MiB
MiB=1048576

node() {    # NAME [ARGS...]: configure (once) and start node NAME
	local name=$1
	shift
	if [ "$name" = n7 ]; then
		[ -f "$T/n7/ckptd.conf" ] ||
			ckptd_conf n7 store="$STORE7" segment=8M chunk=1M \
				staging=96M keep=100
		set -- -o cluster.holder_reserve=32M "$@"
	else
		[ -f "$T/$name/ckptd.conf" ] || ckptd_conf "$name" staging=96M keep=100
	fi
	cluster_start "$name" 4+2 "$@"
}
is() { status_is "$@"; }
avail() { df -B1 --output=avail "$TMPFS" | tail -1 | tr -d ' '; }
# sealed_shards DIR: "COUNT BYTES" of the shards under DIR with a record.
sealed_shards() {
	local n=0 b=0 m dat
	for m in $(find "$1" -name '*.meta' 2>/dev/null); do
		dat=${m%.meta}.dat
		n=$((n + 1))
		b=$((b + $(stat -c %s "$dat")))
	done
	echo "$n $b"
}
# unsealed DIR: the .dat files under DIR without a record.
unsealed() {
	local d
	for d in $(find "$1" -name '*.dat' 2>/dev/null); do
		[ -e "${d%.dat}.meta" ] || echo "$d"
	done
}
no_unsealed() { sjson n7 shards_held >/dev/null; [ -z "$(unsealed "$1")" ]; }
has_unsealed() { sjson n7 shards_held >/dev/null; [ -n "$(unsealed "$1")" ]; }
wait_protected() {    # VERSION NODE...: each node's part of VERSION PROTECTED
	local v=$1 n
	shift
	for n in "$@"; do
		ctl $n wait $JOB "$v" protected --timeout 120 >/dev/null ||
			fail "$n: its part of $v did not reach PROTECTED; its log: $(grep -E 'protect' "$T/$n/ckptd.log" | tail -3)"
	done
}
rank_of() { echo "${1#n}"; }
# n7's capacity is no more than its segments and the bytes free beside them.
segbytes() { find "$STORE7/seg" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
cap_honest() { [ "$(sjson n7 capacity)" -le $(( $(segbytes) + $(avail) )) ]; }

for n in $ALL; do node $n; done
cluster_up 6
grep -q "33554432 bytes of the store kept for this node's own parts" "$T/n7/ckptd.log" ||
	fail "n7 does not say how much it keeps for its own parts: $(grep holding "$T/n7/ckptd.log")"

# ---- v1: every node's part protected ---------------------------------------
cluster_protect_parts $JOB v1 "${F1[@]}"
info "v1: 7 parts protected"

# ---- an abandoned attempt ----------------------------------------------------
# An owner n7 holds a shard of: its next part goes to n7 too (the same
# placement, nobody full yet).
X=$(ls "$SHARDS7" | head -1)
[ -n "$X" ] || fail "n7 holds no shard of v1: $(ls -R "$SHARDS7")"
stop_ckptd "$X"
node "$X" -o cluster.bandwidth=2M
cluster_up 6
CKPT_NODES=7 tw "$X" write $JOB v2 -r "$(rank_of "$X")" -P "part$(rank_of "$X")" "${F2[@]}" -w local ||
	fail "$X: writing its part of v2"
poll_until 60 has_unsealed "$SHARDS7/$X" ||
	fail "n7 never had a shard of $X's v2 part half-written: $(ls -l "$SHARDS7/$X")"
out_gt 0 sjson n7 shard_reserved ||
	fail "n7 writes a shard of $X's but reserves $(sjson n7 shard_reserved) bytes"
out_gt 0 sjson n7 shards_open || fail "n7 writes a shard of $X's but says none is open"
kill9 "$X"
poll_until 20 no_unsealed "$SHARDS7/$X" ||
	fail "n7 kept $X's half-written shard after $X died: $(unsealed "$SHARDS7/$X")"
grep -q "dropping shard [0-9]* of $X's part [0-9a-f]*, never sealed (its owner's link is down)" "$T/n7/ckptd.log" ||
	fail "n7's log does not say it dropped $X's half-written shard"
is n7 shard_reserved 0 || fail "n7 still reserves $(sjson n7 shard_reserved) bytes after the drop"
out_gt 0 sjson n7 shards_dropped || fail "n7 counts no unsealed shard dropped"
node "$X"
cluster_up 6
wait_protected v2 "$X"
info "abandoned: $X's half-written shard dropped when $X died; protected after its restart"

# ---- n7 full: peers' shards refused, its own part written --------------------
# Quiet first: nothing queued anywhere (n7's spare segments are made).
quiet() {
	local n
	for n in $ALL; do [ "$(sjson $n protect_queued)" = 0 ] || return 1; done
	no_unsealed "$SHARDS7"
}
poll_until 60 quiet || fail "protection did not settle before the fill"
room=$((4 * MiB))
fill=$(( $(avail) - 32 * MiB - room ))
[ "$fill" -gt 0 ] || fail "the tmpfs has $(avail) bytes free: too little to test with"
head -c "$fill" /dev/zero >"$TMPFS/plain.fill" || fail "filling the tmpfs"
info "n7: tmpfs filled by a plain file of $fill bytes; $(avail) bytes left"
# n7 reads its file system's free bytes again within a second or so (its
# capacity shows it): from then on it knows the plain file is there.
poll_until 10 cap_honest ||
	fail "n7 does not see the plain file: capacity $(sjson n7 capacity), segments $(segbytes), free $(avail)"
held_before=$(sjson n7 shards_held)
for n in n1 n2 n3 n4 n5 n6; do
	CKPT_NODES=7 tw $n write $JOB v3 -r "$(rank_of $n)" -P "part$(rank_of $n)" "${F3[@]}" -w local ||
		fail "$n: writing its part of v3"
done
wait_protected v3 n1 n2 n3 n4 n5 n6
refusal='cluster: SHARD_(PUT|SEAL) from n[1-6] refused: No space left on device: shard [0-9]+ of its part [0-9a-f]+ asks [0-9]+ bytes, [0-9]+ free for peers. shards \(33554432 kept for this node.s own parts\)'
grep -qE "$refusal" "$T/n7/ckptd.log" ||
	fail "n7's log has no refusal for room naming the owner: $(grep -E 'refused' "$T/n7/ckptd.log" | tail -3)"
info "n7 refused: $(grep -E "$refusal" "$T/n7/ckptd.log" | head -1 | sed 's/.*cluster: //')"
# What n7 took of v3 before its room ran out goes when those parts are
# PROTECTED elsewhere (or their attempts end).
poll_until 90 no_unsealed "$SHARDS7" ||
	fail "n7 keeps half-written shards: $(unsealed "$SHARDS7")"
t0=$(now_ms)
CKPT_NODES=7 tw n7 write $JOB v3 -r 7 -P part7 "${F3OWN[@]}" -w local ||
	fail "n7: its own part of v3 does not commit with peers' shards around (free $(avail))"
info "n7: own 40M part of v3 committed in $(( $(now_ms) - t0 )) ms, $(avail) bytes left"
tw n7 verify $JOB v3 -r 7 -P part7 "${F3OWN[@]}" || fail "n7: its v3 part does not read back"
wait_protected v3 n7
info "full: peers refused for room and placed elsewhere; n7's own part written and protected"

# ---- n7's status ---------------------------------------------------------------
honest() {
	local got want
	want=$(sealed_shards "$SHARDS7")
	got="$(sjson n7 shards_held) $(sjson n7 shard_bytes)"
	[ "$got" = "$want" ] || { echo "status says $got, the disk $want"; return 1; }
	[ -z "$(unsealed "$SHARDS7")" ] || { echo "unsealed: $(unsealed "$SHARDS7")"; return 1; }
}
poll_until 20 honest >/dev/null || fail "n7's status is not what it holds: $(honest)"
ctl n7 status | grep -qE "^shards +$(sjson n7 shards_held) held for peers" ||
	fail "ckptctl status: $(ctl n7 status | grep shards)"
is n7 shard_reserved 0 || fail "n7 reserves $(sjson n7 shard_reserved) bytes at rest"
is n7 shards_open 0 || fail "n7 says $(sjson n7 shards_open) shards are open at rest"
out_gt 0 sjson n7 shards_refused_space || fail "n7 counts no refusal for room"
is n7 holder_reserve 33554432 || fail "n7 keeps $(sjson n7 holder_reserve) bytes, not 32M, for its own parts"
# Full: the room left for peers is what is free beyond the reserves.
[ "$(sjson n7 shard_room)" -le "$(avail)" ] ||
	fail "n7 offers peers $(sjson n7 shard_room) bytes with $(avail) free"
ctl n7 status | grep -qE "^ +0 being written \(0 B reserved\), room for .* kept for this node's parts" ||
	fail "ckptctl status has no room line: $(ctl n7 status | grep -A3 '^shards')"
# The capacity is the segments and what is free beside them (the plain
# file and the shards left out), as of a read at most a second old.
poll_until 10 cap_honest ||
	fail "n7's capacity $(sjson n7 capacity) is more than its segments ($(segbytes)) and the free bytes ($(avail))"
info "status: $(sjson n7 shards_held) shards, $(sjson n7 shard_bytes) bytes held (were $held_before shards); capacity $(sjson n7 capacity)"

# ---- SIGKILL and restart twice ----------------------------------------------------
held=$(sealed_shards "$SHARDS7")
for round in 1 2; do
	restart n7
	poll_until 30 is n7 peers_up 6 || fail "round $round: n7 has $(sjson n7 peers_up) peers up"
	tw n7 verify $JOB v1 -r 7 -P part7 "${F1[@]}" || fail "round $round: n7's v1 part does not read back"
	tw n7 verify $JOB v3 -r 7 -P part7 "${F3OWN[@]}" || fail "round $round: n7's v3 part does not read back"
	for n in n1 n2 n3 n4 n5 n6; do
		tw n7 verify $JOB v1 -r "$(rank_of $n)" -P "part$(rank_of $n)" "${F1[@]}" ||
			fail "round $round: $n's v1 part does not read back through n7"
	done
	[ "$(sealed_shards "$SHARDS7")" = "$held" ] ||
		fail "round $round: n7 holds $(sealed_shards "$SHARDS7") shards, was $held"
	poll_until 20 honest >/dev/null || fail "round $round: $(honest)"
	is n7 shards_bad 0 || fail "round $round: $(sjson n7 shards_bad) shards fail their CRC"
	for n in $ALL; do
		part_is $n v3 protected || fail "round $round: $n's v3 part is $(part_level $n v3)"
	done
done
info "restarts: n7 keeps its parts and the shards it holds across two SIGKILLs"

for n in $ALL; do stop_ckptd $n; done
finish
