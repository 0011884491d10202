#!/bin/bash
# t_cluster_every: [drain] every=2 in a cluster (three nodes, ec 2+1, one
# PFS, local keep=1).  Each node counts its own ordinals and judges
# "superseded" at its own moment, so the nodes used to skip different
# versions in parts: such a version was never published, and the nodes
# that skipped their parts removed them, so committed versions read from
# nowhere (helper-50, stop 49).  Now a version in parts is never skipped:
#  - late: n2's drain paused while v1 and v2 are written in 3 parts (n1 and
#    n3 drain v1 while it is the newest; n2 sees it superseded); a wait for
#    DRAINED on n1 or n3 does not end, nor does ls say drained, before the
#    version is published, and on every node it ends with it published;
#  - shifted: n2 wrote a version of the job alone first (its ordinals run
#    one ahead), then v1..v4 in parts with every drain paused;
#  - restarted: v1..v3 in parts, n2 killed (SIGKILL) and started again
#    (it counts afresh), then v4..v6;
# every version in parts is published, no node logs a skip of one, and
# every part reads back from every node, before any restart, after a
# SIGKILL of n2, then of every node, and two clean restarts of all; at the
# end a node outside the cluster reads every byte from the PFS.  A job
# written on n2 alone still skips as before (its s1, superseded, is
# skipped and removed), and its versions read from every node; after the
# restarts every node lists them as n2's alone (the others used to
# announce their PFS scan's copy as a part of their own).
# Restarted with n2 down, n1 still names n2 as the writer of s2.
# With keep=1 a node's older parts are evicted (PFS only); after a
# restart the node lists its part of such a version from the PFS scan.
# It used to list the whole manifest there and announce it as its part,
# so another node reading a part through it asked for the restarted
# node's part manifest with the whole version's seal: "checksum mismatch"
# (CKPT_ECORRUPT) with the PFS copy intact (stop 49's note).  An
# eviction is announced: every node lists each evicted part without a
# local copy (peers used to keep asking its owner first).
# TIMEOUT: 400
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 3
SIZE=300000
# JOB:VERSION:SEED of every version in parts written
WRITTEN=()

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] ||
		drain_conf "$1" every=2 retry_max=1 -- keep=1 staging=96M
	cluster_start "$1" 2+1
}
published() { [ -e "$(pfs_vdir "$1" "$2")/manifest" ]; }
# copies_of ASKED OWNER JOB VERSION: the copies ASKED lists OWNER's part with.
copies_of() {
	ctl "$1" --json ls "$3" "$4" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for p in json.load(sys.stdin)["parts"]:
    if p.get("node") == sys.argv[1]:
        print(",".join(p["copies"]))' "$2"
}
no_local() {
	local c
	c=$(copies_of "$@")
	[ -n "$c" ] && [[ ",$c," != *,local,* ]]
}
# parts JOB VERSION SEED: node i writes part i of VERSION.
parts() {
	local i
	for i in 1 2 3; do
		CKPT_NODES=3 tw n$i write "$1" "$2" -r $i -P part$i -n 1 -z $SIZE \
			-S $(($3 + i)) -w local || fail "n$i: its part of $1/$2"
	done
	WRITTEN+=("$1:$2:$3")
}
pause() { local n; for n in "$@"; do ctl $n drain --pause >/dev/null || fail "pause $n"; done; }
resume() { local n; for n in "$@"; do ctl $n drain --resume >/dev/null || fail "resume $n"; done; }
idle_all() { local n; for n in $ALL; do poll_until 30 drain_idle $n || fail "$n: the drain is not idle"; done; }
# all_published: every version in parts written has its PFS manifest.
all_published() {
	local w job ver
	for w in "${WRITTEN[@]}"; do
		IFS=: read -r job ver _ <<<"$w"
		published "$job" "$ver" || return 1
	done
}
# all_read: every part of every version in parts reads back from every
# node in $ALL.
all_read() {
	local w job ver seed n i
	for w in "${WRITTEN[@]}"; do
		IFS=: read -r job ver seed <<<"$w"
		for n in $ALL; do
			for i in 1 2 3; do
				tw $n verify "$job" "$ver" -r $i -P part$i -n 1 -z $SIZE \
					-S $((seed + i)) >/dev/null 2>"$T/verify.err" || {
					echo "$n: part$i of $job/$ver: $(tail -1 "$T/verify.err")" >&2
					return 1
				}
			done
		done
	done
}
# check: every version in parts published, none skipped, and read.
check() {
	local w job ver n
	poll_until 60 all_published || {
		for w in "${WRITTEN[@]}"; do
			IFS=: read -r job ver _ <<<"$w"
			published "$job" "$ver" ||
				echo "$job/$ver not published: $(ls "$(pfs_vdir "$job" "$ver")" 2>&1 | tr '\n' ' ')" >&2
		done
		return 1
	}
	for n in $ALL; do
		grep -E "drain: (ev/[a-z]+)/v[0-9]+ skipped" "$T/$n/ckptd.log" >&2 && return 1
	done
	all_read
}

for n in $ALL; do node $n; done
cluster_up 2

# late: n2's drain behind the others'.
pause n2
parts ev/late v1 10
JOB=ev/late
for n in n1 n3; do
	poll_until 30 part_is $n v1 drained || fail "[late] $n: its part of v1 is $(part_level $n v1)"
done
# A part on the PFS is not the version there: a wait for DRAINED ends once
# the version is published (before, it ended with this node's part).
for n in n1 n3; do
	! ctl $n wait ev/late v1 drained --timeout 1 >/dev/null 2>&1 ||
		fail "[late] $n: wait drained returned with v1 not published"
	[ "$(ctl $n ls ev/late | awk '$1 == "v1" {print $3}')" != drained ] ||
		fail "[late] $n lists v1 as $(ctl $n ls ev/late | awk '$1 == "v1" {print $3}') before it is published"
done
parts ev/late v2 20
resume n2
for n in $ALL; do
	for v in v1 v2; do
		ctl $n wait ev/late $v drained --timeout 60 >/dev/null ||
			fail "[late] $n: wait for $v drained"
		published ev/late $v || fail "[late] $n: wait drained returned with $v not published"
	done
done
check || fail "[late] a version in parts was skipped or lost"
# keep=1: each node evicts its part of v1.  The others hear of it, and read
# that part from the PFS or the shards, not from its owner (they used to
# ask the owner first, a warning per read: an eviction was not announced).
for o in $ALL; do
	for n in $ALL; do
		poll_until 30 no_local $n $o ev/late v1 ||
			fail "[late] $n lists $o's part of v1 with copies $(copies_of $n $o ev/late v1)"
	done
done
info "[late] v1 and v2 published, n2 behind the others"

# shifted: n2's ordinals of the job one ahead of the others'.
tw n2 write ev/shift s0 -n 1 -z $SIZE -S 5 -w drained || fail "s0 not drained"
pause $ALL
parts ev/shift v1 110; parts ev/shift v2 120; parts ev/shift v3 130; parts ev/shift v4 140
resume $ALL
check || fail "[shifted] a version in parts was skipped or lost"
info "[shifted] v1..v4 published with n2 counting one ahead"

# restarted: n2 counts afresh after a SIGKILL.
pause $ALL
parts ev/rs v1 210; parts ev/rs v2 220; parts ev/rs v3 230
resume $ALL
check || fail "[restarted] before the restart"
kill9 n2
node n2
cluster_up 2
pause $ALL
parts ev/rs v4 240; parts ev/rs v5 250; parts ev/rs v6 260
resume $ALL
check || fail "[restarted] a version in parts was skipped or lost"
info "[restarted] v1..v6 published across a SIGKILL of n2"

# A job on n2 alone still skips: s1 superseded by s2 before its turn.
pause n2
for i in 1 2 3; do
	tw n2 write ev/solo "s$i" -n 1 -z $SIZE -S $((300 + i)) -w local || fail "solo s$i"
done
# solo_read: n2's versions of ev/solo read back from every node.
solo_read() {
	local n i
	for n in $ALL; do
		for i in 2 3; do
			tw $n verify ev/solo "s$i" -n 1 -z $SIZE -S $((300 + i)) >/dev/null 2>"$T/verify.err" || {
				echo "$n: ev/solo/s$i: $(tail -1 "$T/verify.err")" >&2
				return 1
			}
		done
	done
}
resume n2
poll_until 30 grep -q "drain: ev/solo/s1 skipped" "$T/n2/ckptd.log" ||
	fail "[solo] s1 (one node, superseded) was not skipped"
for i in 2 3; do
	poll_until 30 published ev/solo "s$i" || fail "[solo] s$i not drained"
done
# s2 evicted on n2 (keep=1): the others, which never scanned it, read it
# through n2's listing, from the version's PFS manifest (one node's: no
# part manifest).
pfs_only() {   # NAME JOB VERSION: no local copy there
	ctl "$1" --json ls "$2" "$3" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
sys.exit("local" in json.load(sys.stdin)["info"]["copies"])'
}
poll_until 30 pfs_only n2 ev/solo s2 || fail "[solo] s2 on n2 is not evicted: $(ctl n2 ls ev/solo s2 | head -1)"
solo_read || fail "[solo] n2's versions do not read back from every node"
# With n2 and n3 down (no owner, 1 shard of 3), n1 reads them from the
# PFS: the version's manifest, as no part manifest is there.
stop_ckptd n2; stop_ckptd n3
ALL=n1 solo_read || fail "[solo] n1 does not read n2's versions from the PFS with n2 and n3 down"
node n2; node n3
cluster_up 2
info "[solo] a version on one node is still skipped, and reads from every node once evicted"

idle_all
for how in kill clean clean; do
	cluster_bounce $how node 2
	idle_all
	check || fail "after a restart of every node ($how)"
	solo_read || fail "[solo] n2's versions do not read back ($how)"
	# Every node scans n2's versions from the PFS: each names n2 as its
	# writer, so only n2 announces them (s2, evicted: from its scan).
	for n in $ALL; do
		for v in s2 s3; do
			poll_until 30 eval '[ "$(parts_seen $n ev/solo $v)" = n2 ]' ||
				fail "[solo] $n lists the parts of $v as '$(parts_seen $n ev/solo $v)' ($how)"
		done
	done
done
# n2 down and n1 restarted: no peer lists s2 to n1, which lists its own
# copy of the PFS manifest, naming n2, the writer (it used to name n1).
stop_ckptd n2
stop_ckptd n1
node n1
poll_until 30 status_is n1 peers_up 1 || fail "[solo] n1: $(sjson n1 peers_up) peers up with n2 down"
[ "$(parts_seen n1 ev/solo s2)" = n2 ] ||
	fail "[solo] with n2 down, n1 restarted lists the parts of s2 as '$(parts_seen n1 ev/solo s2)'"
ALL=n1 solo_read || fail "[solo] n1 restarted with n2 down does not read n2's versions"
for n in n1 n3; do stop_ckptd $n; done
# And every byte from the PFS alone: a node outside the cluster on the
# same target reads every part of every version from the manifests.
drain_conf solo
start_ckptd solo
ALL=solo
all_read || fail "a version in parts does not read back from the PFS"
for i in 2 3; do
	tw solo verify ev/solo "s$i" -n 1 -z $SIZE -S $((300 + i)) ||
		fail "[solo] s$i does not read back from the PFS"
done
stop_ckptd solo
info "every part reads back from every node after a SIGKILL and two clean restarts of all, and from the PFS alone"
finish
