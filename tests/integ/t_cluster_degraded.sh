#!/bin/bash
# t_cluster_degraded: degraded reads.  Six ckptd nodes on 127.0.0.1-6, ec
# 4+2, three failure domains of two; every node writes and protects its
# part of one version (no drain target: the shards are the only copy of a
# lost node's part).  Its files have overlapping rewrites, holes and
# truncates (ckpt_tw -R -H), so that a read from another node takes the
# newest record of each byte, zeros where none is, from the owner's read
# index as from the shards.
#  - n6 is SIGKILLed and its store deleted, and one of the shards of n6's
#    part (held by n1) gets a flipped byte: n2 still reads every file of
#    n6's part byte for byte, decoded from the other shards (the bad one is
#    caught by its CRC, logged, and another shard used);
#  - n5 is killed too (store deleted), the flipped byte mended: from n3 and
#    n1 every file of all six parts reads back byte for byte, the two dead
#    nodes' through their peers' shards;
#  - hard links: a one-part version with links written on n6 (ckpt_links)
#    lists and reads from n2 once n6 is lost (names, nlink, one ino per
#    file, bytes, mode, xattrs), decoded from its shards;
#  - the byte flipped again: with two nodes lost and a third shard bad, n4's
#    read of n6's part fails with an error (EIO), n4 stays up, and the log
#    says which stripe lacks shards; the other parts still read.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

cluster_setup 6 rackA rackB rackC
JOB=train/deg
FILES=(-n 2 -z 3145728 -R -H)

node() {
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M
	cluster_start "$1" 4+2
}
verify_part() {    # NODE RANK: part RANK reads back through NODE
	tw "$1" verify $JOB v1 -r "$2" -P "part$2" "${FILES[@]}"
}
down_on() { ! status_is "$1" peers_up 5; }

for n in $ALL; do node $n; done
cluster_up 5
cluster_protect_parts $JOB v1 "${FILES[@]}"
# A shard of n6's part of v1 held by n1 (chosen before n6 writes another
# version, whose shards n1 holds too).
BAD=$(find "$T/n1/store/shards/n6" -name '*.dat' | head -1)
[ -n "$BAD" ] || fail "n1 holds no shard of n6's part"
LN=$BUILD/tests/ckpt_links
"$LN" "$(sock n6)" write train/links vl || fail "ckpt_links write on n6 failed"
ctl n6 wait train/links vl protected --timeout "$(scaled 60)" >/dev/null ||
	fail "n6's version with links was not protected"
# n2 learns of n6's part when n6 announces it, which may come after the
# PROTECTED answer: poll.
links_on_n2() { "$LN" "$(sock n2)" check train/links vl 2>"$T/links.err"; }
poll_until 20 links_on_n2 || fail "n2: n6's links do not read from n6: $(cat "$T/links.err")"

# ---- one node lost, one shard of its part damaged --------------------------
kill9 n6
rm -rf "$T/n6/store"
poll_until 20 down_on n2 || fail "n2 still counts n6 up"
flip_byte "$BAD" 4096
verify_part n2 6 || fail "n2 cannot read n6's part from its peers' shards"
grep -q "fails its CRC" "$T/n1/ckptd.log" || fail "n1 did not log the damaged shard"
grep -q "trying another" "$T/n2/ckptd.log" || fail "n2 did not move to another shard"
info "n6 lost, one shard damaged: its part decoded from the others"
"$LN" "$(sock n2)" check train/links vl || fail "n2: n6's links do not read from the shards"
info "n6 lost: its version with hard links lists and reads from the shards"

# ---- two nodes lost: everything from the survivors --------------------------
flip_byte "$BAD" 4096          # mended
kill9 n5
rm -rf "$T/n5/store"
poll_until 20 down_on n3 || fail "n3 still counts n5 up"
for n in n3 n1; do
	for i in 1 2 3 4 5 6; do
		verify_part $n $i || fail "$n: part $i does not read back with n5 and n6 lost"
	done
done
ctl n3 ls $JOB v1 | head -1 | grep -qi "sealed.*6 of 6 parts" ||
	fail "n3 lists v1 as: $(ctl n3 ls $JOB v1 | head -1)"
info "n5 and n6 lost: every file of the version reads from n3 and n1"

# ---- more than m shards of a stripe gone: a clear error -------------------
flip_byte "$BAD" 4096
verify_part n4 6 2>/dev/null && fail "n4 read n6's part with three of its shards gone"
assert_up n4
grep -q "has only 3 of the 4 shards it needs" "$T/n4/ckptd.log" ||
	fail "n4 did not say why: $(grep 'degraded read' "$T/n4/ckptd.log" | tail -3)"
verify_part n4 3 || fail "n4: part 3 no longer reads"
info "three shards of a stripe gone: the read fails with EIO, the node stays up"

for n in n1 n2 n3 n4; do stop_ckptd $n; done
finish
