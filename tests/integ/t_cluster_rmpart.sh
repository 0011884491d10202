#!/bin/bash
# t_cluster_rmpart: the second rm of a part whose version is not published
# (RM_PART) races the node publishing the version (three nodes, ec 2+1,
# one PFS).  Before stop 41 the rm unlinked a manifest published after it
# had looked for one: the other nodes, which may already have let their
# local copies go on the strength of it, were left with parts no restart
# lists.  Now the rm sets its part.<node> aside and removes manifest.tmp
# before it looks for the manifest, and the publisher checks the parts
# between making manifest.tmp durable and renaming it: no manifest is in
# place without every part it was merged from.
#  - n1 (the publisher: its name sorts first) has its drain paused while n2
#    and n3 drain their parts; the first rm of n2's part is refused, and
#    an rm that looked at the part before that refusal removes nothing
#    (it is not the second rm, which removes the part from the PFS too).
#  - n1 is restarted with every PFS rename held 2 s (CKPT_FAULT), so that
#    its publish sits with manifest.tmp written but not yet renamed; then
#    the second rm of n2's part.  n1 logs that the version is not
#    published, no manifest is left, n2's part is gone from the PFS, and n1 and
#    n3 read back every committed byte, also after a SIGKILL of all nodes
#    and two clean restarts.
#  - n1 is stopped, and its part.n1 set aside by hand (the state of a
#    removal killed right after the set-aside); started without the fault,
#    it reads its part, and rm's it twice: its files go from the PFS (found
#    through ptmp.n1), n3's stay.
#  - v2, published, with n2's part.n2 set aside by hand and n2 stopped (a
#    removal killed before it put the part back): rm on n2 evicts its
#    part, part.n2 is back, and n2 reads v2 from the PFS.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 3
JOB=train/rp
SIZE=300000
HOLD=2000

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || drain_conf "$1" retry_max=1 -- staging=96M
	cluster_start "$1" 2+1
}
# reads NAME SEED: NAME reads back its part of v1 (prefix pNAME, SEED's bytes).
reads() {
	tw "$1" verify $JOB v1 -r 1 -P "p$1" -n 2 -z $SIZE -S "$2" >"$T/verify.out" 2>&1 ||
		fail "$1 does not read back its part of v1: $(tail -1 "$T/verify.out")"
}
taken_back() {
	grep -q "drain: $JOB/v1: a part was removed from the PFS while the version was being published" \
		"$T/n1/ckptd.log"
}

for n in $ALL; do node $n; done
cluster_up 2
V=$(pfs_vdir $JOB v1)

ctl n1 drain --pause >/dev/null || fail "ckptctl drain --pause on n1"
for n in 1 2 3; do
	CKPT_NODES=3 tw n$n write $JOB v1 -r 1 -P "pn$n" -n 2 -z $SIZE -S 1$n -w local ||
		fail "n$n: writing its part of v1"
done
for n in n2 n3; do
	poll_until 30 part_is $n v1 drained ||
		fail "$n's part of v1 is $(part_level $n v1), not drained"
done
# An rm that looked at n2's part before the first rm was refused, acting
# after it: it removes nothing (it used to act as the second rm and take
# n2's part from the PFS as well).
mkfifo "$T/hold"
tw n2 rm $JOB v1 -p <"$T/hold" >"$T/hold.out" 2>"$T/hold.err" &
rpid=$!
exec 8>"$T/hold"
poll_until 30 grep -q paused "$T/hold.out" || fail "tw rm -p on n2 never paused: $(cat "$T/hold.err")"
! out=$(ctl n2 rm $JOB v1 2>&1) || fail "the first rm of n2's unpublished part: $out"
[[ $out == *"not published on the PFS yet"* ]] || fail "the first rm of n2's part says: $out"
ctl n2 ls $JOB v1 | head -1 | grep -q "rm again removes this part from the PFS too" ||
	fail "ckptctl ls on n2 after the refused rm: $(ctl n2 ls $JOB v1 | head -1)"
exec 8>&-
wait $rpid && fail "the rm that looked before the refusal removed n2's part"
grep -q "nothing was removed" "$T/hold.err" || fail "the rm that looked before the refusal says: $(cat "$T/hold.err")"
[ -e "$V/part.n2" ] && [ "$(part_level n2 v1)" = drained ] ||
	fail "the rm that looked before the refusal took n2's part: PFS has $(ls "$V" | tr '\n' ' '), n2 lists '$(part_level n2 v1)'"
info "an rm that looked before the first rm's refusal removed nothing"

# n1's publish held between writing manifest.tmp and renaming it.
stop_ckptd n1
CKPT_FAULT="rename:1+:delay=$HOLD" node n1
ctl n1 drain --resume >/dev/null || fail "ckptctl drain --resume on n1"
poll_until 60 test -e "$V/manifest.tmp" ||
	fail "n1 never started to publish v1: $(grep 'train/rp/v1' "$T/n1/ckptd.log" | tail -3)"
out=$(ctl n2 rm $JOB v1 2>&1) || fail "the second rm of n2's part: $out"
[ -z "$(part_level n2 v1)" ] || fail "n2 still lists its part after two rm's"
poll_until 30 taken_back ||
	fail "n1 did not take the manifest back: $(grep 'train/rp/v1' "$T/n1/ckptd.log" | tail -3)"
[ ! -e "$V/manifest" ] || fail "v1 is published without n2's part"
[ ! -e "$V/part.n2" ] && [ ! -e "$V/ptmp.n2" ] && [ ! -e "$V/files/pn2" ] ||
	fail "n2's part is still on the PFS: $(ls "$V" "$V/files")"
[ -e "$V/part.n1" ] && [ -e "$V/part.n3" ] || fail "n1's or n3's part left the PFS: $(ls "$V")"
reads n1 11
reads n3 13
info "the second rm of n2's part during n1's publish: v1 not published, n1's and n3's bytes read"

for round in kill clean clean; do
	cluster_bounce $round node 2
	reads n1 11
	reads n3 13
	[ -z "$(part_level n2 v1)" ] || fail "n2 lists its removed part after a $round restart"
	[ ! -e "$V/manifest" ] || fail "v1 was published without n2's part after a $round restart"
done
info "every committed byte of n1 and n3 after a SIGKILL and two clean restarts"

# The state a removal killed right after setting part.n1 aside leaves:
# ptmp.n1 and n1's files on the PFS, n1's local copy.  rm twice removes
# the files the set-aside manifest names.
stop_ckptd n1
mv "$V/part.n1" "$V/ptmp.n1" || fail "setting part.n1 aside by hand"
node n1
reads n1 11
! ctl n1 rm $JOB v1 >/dev/null 2>&1 || fail "the first rm of n1's unpublished part"
out=$(ctl n1 rm $JOB v1 2>&1) || fail "the second rm of n1's part: $out"
[ ! -e "$V/part.n1" ] && [ ! -e "$V/ptmp.n1" ] && [ ! -e "$V/files/pn1" ] ||
	fail "n1's part is still on the PFS: $(ls "$V" "$V/files")"
[ -e "$V/part.n3" ] && [ -e "$V/files/pn3" ] || fail "n3's part went with n1's"
reads n3 13

# v2 published; a removal of n2's part killed after its set-aside.
for n in 1 2 3; do
	CKPT_NODES=3 tw n$n write $JOB v2 -r 1 -P "pn$n" -n 2 -z $SIZE -S 2$n -w local ||
		fail "n$n: writing its part of v2"
done
V2=$(pfs_vdir $JOB v2)
poll_until 60 test -e "$V2/manifest" || fail "v2 was not published"
stop_ckptd n2
mv "$V2/part.n2" "$V2/ptmp.n2" || fail "setting part.n2 aside by hand"
node n2
out=$(ctl n2 rm $JOB v2 2>&1) || fail "rm of n2's part of published v2: $out"
[ -e "$V2/part.n2" ] && [ ! -e "$V2/ptmp.n2" ] || fail "part.n2 was not put back: $(ls "$V2")"
tw n2 verify $JOB v2 -r 1 -P pn2 -n 2 -z $SIZE -S 22 >"$T/verify.out" 2>&1 ||
	fail "n2 does not read its evicted part of v2: $(tail -1 "$T/verify.out")"
info "a published part set aside by a killed removal is put back, and evicted"

for n in $ALL; do stop_ckptd $n; done
finish
