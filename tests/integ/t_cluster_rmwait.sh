#!/bin/bash
# t_cluster_rmwait: `ckptctl rm` of a version in parts (three nodes, ec
# 2+1, one PFS, the drain capped at 2 MiB/s) while n3's writer holds its
# part open and n2's part, sealed, is being drained.  The version as a
# whole is open (until every part is sealed), but n2's part is only busy
# for a moment:
#  - on n2, `rm --timeout 0.5` fails as "still busy after 0.5 s" (it used
#    to fail at once as "open, a writer still holds it": a writer on
#    another node);
#  - on n3, rm fails at once as held by its writer, whatever the timeout;
#  - on n2, a plain rm waits for the drain copy, then is refused as the
#    version is not published yet (CKPT_EUNPUBLISHED);
#  - n3's writer then commits, n1 publishes v1, and rm on n2 evicts its
#    part (it was published since the refusal, so it stays on the PFS);
#  - n1, n2 and n3 read back every committed byte after a SIGKILL of all
#    nodes and two clean restarts.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 3
JOB=train/rw
MB=$((1 << 20))
SMALL=200000

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || drain_conf "$1" bandwidth=2M -- staging=96M
	cluster_start "$1" 2+1
}
reads() {   # NAME SEED SIZE: NAME reads back its part of v1
	tw "$1" verify $JOB v1 -r "${1#n}" -P "p$1" -n 1 -z "$3" -S "$2" \
		>"$T/verify.out" 2>&1 ||
		fail "$1 does not read back its part of v1: $(tail -1 "$T/verify.out")"
}

for n in $ALL; do node $n; done
cluster_up 2

# n3's writer joins, writes and waits before its commit.
mkfifo "$T/hold"
CKPT_NODES=3 tw n3 write $JOB v1 -r 3 -P pn3 -n 1 -z $SMALL -S 13 -w local -p \
	<"$T/hold" >"$T/w3.out" 2>&1 &
w3=$!
exec 9>"$T/hold"
poll_until 30 grep -q paused "$T/w3.out" || fail "n3's writer never paused: $(cat "$T/w3.out")"
CKPT_NODES=3 tw n1 write $JOB v1 -r 1 -P pn1 -n 1 -z $SMALL -S 11 -w local ||
	fail "n1: writing its part of v1"
# 8 MiB: its drain copy takes 4 s at 2 MiB/s.
CKPT_NODES=3 tw n2 write $JOB v1 -r 2 -P pn2 -n 1 -z $((8 * MB)) -S 12 -w local ||
	fail "n2: writing its part of v1"
copying() { ctl n2 status 2>/dev/null | grep -q "[1-9] copying"; }
poll_until 30 copying || fail "n2's drain copy of its part did not start"
[ "$(vstate n2 $JOB v1)" = open ] || fail "v1 on n2 is $(vstate n2 $JOB v1), not open (the test's premise)"

ctl n2 rm --timeout 0.5 $JOB v1 >"$T/rm1.out" 2>&1 &&
	fail "rm --timeout 0.5 on n2 while its part drains succeeded: $(cat "$T/rm1.out")"
grep -q "still busy after 0.5 s" "$T/rm1.out" ||
	fail "rm --timeout 0.5 on n2, its part sealed and being drained: $(cat "$T/rm1.out")"
ctl n3 rm --timeout 60 $JOB v1 >"$T/rm3.out" 2>&1 &&
	fail "rm on n3 of the part its writer holds succeeded: $(cat "$T/rm3.out")"
grep -q "open, a writer still holds it" "$T/rm3.out" ||
	fail "rm on n3 of the part its writer holds: $(cat "$T/rm3.out")"
copying || fail "n2's copy ended before the waiting rm started (the test's premise)"
info "rm: n2's part being drained is busy, n3's held by its writer is open"

ctl n2 rm $JOB v1 >"$T/rm2.out" 2>&1 &&
	fail "rm on n2 of its part, v1 not published: $(cat "$T/rm2.out")"
grep -q "not published on the PFS yet" "$T/rm2.out" ||
	fail "rm on n2 did not wait for its part's drain: $(cat "$T/rm2.out")"
part_is n2 v1 drained || fail "n2's part is $(part_level n2 v1) after the refused rm"
info "rm on n2 waited for its part's drain, then was refused: v1 is not published"

exec 9>&-
wait $w3 || fail "n3's writer could not commit after the rms: $(cat "$T/w3.out")"
V=$(pfs_vdir $JOB v1)
poll_until 60 test -e "$V/manifest" || fail "v1 was not published: $(ls "$V")"
out=$(ctl n2 rm $JOB v1 2>&1) || fail "rm on n2 of its part of published v1: $out"
[[ $out == *"this node's part removed"* ]] || fail "rm on n2 of its published part says: $out"
[ -e "$V/part.n2" ] && [ -e "$V/files/pn2" ] || fail "n2's part left the PFS: $(ls "$V" "$V/files")"
info "published since the refusal, n2's part is evicted and stays on the PFS"

for round in none kill clean clean; do
	[ $round = none ] || cluster_bounce $round node 2
	reads n1 11 $SMALL
	reads n2 12 $((8 * MB))
	reads n3 13 $SMALL
done
info "every committed byte on n1, n2 and n3 after a SIGKILL and two clean restarts"

for n in $ALL; do stop_ckptd $n; done
finish
