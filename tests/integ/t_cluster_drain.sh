#!/bin/bash
# t_cluster_drain: three ckptd nodes (127.0.0.1-3, ec 2+1) drain to one PFS
# directory; a version written in parts is published whole or not at all.
#  - v1, written in 3 parts (CKPT_NODES=3) with n3's drain paused: n1's and
#    n2's parts reach DRAINED (part.n1, part.n2 on the PFS) and there is no
#    manifest while n3's part is missing; once n3 resumes its part is
#    DRAINED and the manifest appears, written by n1 (the first name) only;
#    n2 and n3 then find it published (their waits for DRAINED end then);
#    no temporaries are left, the PFS files are the writers' bytes, and
#    `ckptctl restore` on a node alone on the same PFS gives back all 3
#    parts' files byte for byte;
#  - s1, a version of one part (CKPT_NODES unset) in the same cluster,
#    drains as it always did: files/ and a manifest, no part manifests;
#  - v2: n1 (the publisher) drains its part while n2 and n3 are paused and
#    is killed with SIGKILL; n2 and n3 then drain theirs, and nothing is
#    published until n1 restarts, which publishes it;
#  - v3, in 2 parts (n2, n3), and n1 holding none of it: a wait on n1 for
#    DRAINED waits for the version over the cluster (it used to fail at
#    once: no such version) and ends only once it is published: n2 (its
#    publisher) stopped (SIGSTOP) after its part drained, n3's part then
#    drained, and n1, hearing both parts DRAINED, still neither ends the
#    wait nor lists v3 as drained until n2 goes on and publishes; a wait
#    on n1 for v4, which n2 and n3 then remove, ends with "no such
#    version", and one for a version nobody holds fails at once;
#  - n1 restarted: it lists v3 whole from the PFS and reads it, from
#    the parts' owners first, but does not announce it as a part of its
#    own (every node lists n2's and n3's);
#    nor s1, n2's version of one part (every node lists n2's alone).
# TIMEOUT: 400
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 3
JOB=train/cd
SIZE=1500000

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || drain_conf "$1" retry_max=1 -- staging=96M
	cluster_start "$1" 2+1
}
is() { status_is "$@"; }

has() { [ -f "$1" ]; }
logged() { grep -q "$2" "$T/$1/ckptd.log"; }

# write_parts VERSION SEED NODE...: NODE number i writes part i.
write_parts() {
	local v=$1 seed=$2 n i
	shift 2
	for n in "$@"; do
		i=${n#n}
		CKPT_NODES=3 tw $n write $JOB "$v" -r $i -P part$i -n 2 -z $SIZE \
			-S $((seed + i)) -w local || fail "$n: writing its part of $v"
	done
}
# expect_parts VERSION SEED DIR: the files of all three parts under DIR.
expect_parts() {
	local i
	for i in 1 2 3; do
		"$TW" expect $JOB "$1" -r $i -P part$i -n 2 -z $SIZE \
			-S $(($2 + i)) -o "$3" || fail "ckpt_tw expect failed"
	done
}

for n in $ALL; do node $n; done
for n in $ALL; do
	poll_until 30 is $n peers_up 2 || fail "$n: $(sjson $n peers_up) of 2 peers up"
done
V1=$(pfs_vdir $JOB v1)

# ---- v1: the manifest once every part is there ------------------------------
ctl n3 drain --pause >/dev/null || fail "ckptctl drain --pause on n3"
write_parts v1 10 n1 n2 n3
for n in n1 n2; do
	poll_until 30 part_is $n v1 drained ||
		fail "$n's part of v1 is $(part_level $n v1), not drained"
	[ -f "$V1/part.$n" ] || fail "$n's part is drained without part.$n"
done
poll_until 10 logged n1 "train/cd/v1: part drained; the version is published once" ||
	fail "n1 does not say it waits for the parts"
sleep "$(scaled 3)"     # several publish checks of n1 (retry_max = 1)
[ ! -e "$V1/manifest" ] || fail "v1 was published with n3's part missing"
[ ! -e "$V1/part.n3" ] || fail "n3 drained while paused"
[ "$(part_level n3 v1)" != drained ] || fail "n3's part is drained while paused"
ctl n3 drain --resume >/dev/null || fail "ckptctl drain --resume on n3"
poll_until 30 part_is n3 v1 drained ||
	fail "n3's part of v1 is $(part_level n3 v1) after resume"
poll_until 20 has "$V1/manifest" ||
	fail "no manifest with every part drained: $(ls "$V1")"
logged n1 "train/cd/v1 published on the PFS (3 parts)" || fail "n1 did not publish v1"
for n in n2 n3; do
	! logged $n "train/cd/v1 published on the PFS" || fail "$n published v1 too"
	# Not the publisher: it looks until the manifest is there.
	ctl $n wait $JOB v1 drained --timeout 30 >/dev/null || fail "$n: wait for v1 drained"
	logged $n "train/cd/v1: the version of its 3 parts is on the PFS" ||
		fail "$n: wait drained returned before it saw v1 published"
done
[ -z "$(pfs_temps)" ] || fail "temporary files left: $(pfs_temps)"
expect_parts v1 10 "$T/exp1"
diff -r "$T/exp1" "$V1/files" || fail "the PFS files of v1 are not the writers'"
# A node alone on the same PFS sees the version whole, and restores it.
drain_conf r
start_ckptd r
ctl r restore $JOB v1 --to "$T/rest1" >/dev/null || fail "ckptctl restore of v1 from the PFS"
diff -r "$T/exp1" "$T/rest1" || fail "v1 restored from the PFS differs"
[ "$(find "$T/rest1" -type f | wc -l)" = 6 ] || fail "v1 restored $(find "$T/rest1" -type f | wc -l) files, not 6"
stop_ckptd r
info "v1: parts drained, published once all 3 were there, restored whole"

# ---- s1: a version of one part drains as before ---------------------------
tw n2 write $JOB s1 -n 2 -z 1000000 -S 5 -w drained || fail "s1 did not reach DRAINED"
S1=$(pfs_vdir $JOB s1)
"$TW" expect $JOB s1 -r 0 -n 2 -z 1000000 -S 5 -o "$T/exps1" || fail "ckpt_tw expect failed"
diff -r "$T/exps1" "$S1/files" || fail "the PFS files of s1 are not the writer's"
[ "$(ls "$S1" | tr '\n' ' ')" = "files manifest " ] ||
	fail "a one-part version's directory holds: $(ls "$S1")"
info "s1: a one-part version drains as before"

# ---- v2: the publisher killed between its part and the publish ------------
V2=$(pfs_vdir $JOB v2)
ctl n2 drain --pause >/dev/null || fail "ckptctl drain --pause on n2"
ctl n3 drain --pause >/dev/null || fail "ckptctl drain --pause on n3"
write_parts v2 20 n1 n2 n3
poll_until 30 part_is n1 v2 drained || fail "n1's part of v2 is $(part_level n1 v2)"
poll_until 10 logged n1 "train/cd/v2: part drained; the version is published once" ||
	fail "n1 does not wait for v2's parts"
kill9 n1
ctl n2 drain --resume >/dev/null || fail "ckptctl drain --resume on n2"
ctl n3 drain --resume >/dev/null || fail "ckptctl drain --resume on n3"
for n in n2 n3; do
	poll_until 30 has "$V2/part.$n" || fail "$n did not drain its part of v2"
	poll_until 30 part_is $n v2 drained || fail "$n's part of v2 is $(part_level $n v2)"
done
sleep "$(scaled 3)"
[ ! -e "$V2/manifest" ] || fail "v2 was published by a node that is not its publisher"
node n1
poll_until 20 has "$V2/manifest" || fail "n1 did not publish v2 after its restart"
expect_parts v2 20 "$T/exp2"
diff -r "$T/exp2" "$V2/files" || fail "the PFS files of v2 are not the writers'"
[ -z "$(pfs_temps)" ] || fail "temporary files left: $(pfs_temps)"
info "v2: published by its publisher after a SIGKILL and a restart"

# ---- v3: a wait on a node that holds no part ----------------------------
V3=$(pfs_vdir $JOB v3)
# seen_level ASKED OWNER VERSION: the level ASKED lists OWNER's part at.
seen_level() {
	ctl "$1" --json ls $JOB "$3" 2>/dev/null | $PY -c '
import json, sys
for p in json.load(sys.stdin)["parts"]:
    if p.get("node") == sys.argv[1]:
        print(p["level"])' "$2"
}
seen_is() { [ "$(seen_level "$@")" = drained ]; }
version_line() { ctl n1 ls $JOB | awk -v v="$1" '$1 == v {print $3}'; }
# write_two VERSION SEED: n2 and n3 write the 2 parts of VERSION.
write_two() {
	CKPT_NODES=2 tw n2 write $JOB "$1" -r 1 -P part2 -n 2 -z $SIZE -S $(($2 + 2)) \
		-w local || fail "n2: writing its part of $1"
	CKPT_NODES=2 tw n3 write $JOB "$1" -r 2 -P part3 -n 2 -z $SIZE -S $(($2 + 3)) \
		-w local || fail "n3: writing its part of $1"
}
ctl n3 drain --pause >/dev/null || fail "ckptctl drain --pause on n3"
write_two v3 30
ctl n1 wait $JOB v3 drained --timeout 120 >"$T/wait3.out" 2>&1 &
WAIT3=$!
poll_until 30 part_is n2 v3 drained || fail "n2's part of v3 is $(part_level n2 v3)"
poll_until 10 logged n2 "train/cd/v3: part drained; the version is published once" ||
	fail "n2 does not wait for v3's parts"
N2=${CKPTD_PID[n2]}
kill -STOP "$N2"
ctl n3 drain --resume >/dev/null || fail "ckptctl drain --resume on n3"
why=
poll_until 30 part_is n3 v3 drained || why="n3's part of v3 is $(part_level n3 v3)"
[ -n "$why" ] || poll_until 30 seen_is n1 n3 v3 ||
	why="n1 lists n3's part of v3 at $(seen_level n1 n3 v3)"
[ -n "$why" ] || seen_is n1 n2 v3 || why="n1 lists n2's part of v3 at $(seen_level n1 n2 v3)"
# Both parts DRAINED as n1 hears it, the version not published.
[ -n "$why" ] || [ ! -e "$V3/manifest" ] || why="v3 published with n2 stopped"
[ -n "$why" ] || kill -0 $WAIT3 2>/dev/null ||
	why="the wait on n1 ended before v3 was published: $(cat "$T/wait3.out")"
[ -n "$why" ] || ! ctl n1 wait $JOB v3 drained --timeout 1 >/dev/null 2>&1 ||
	why="a wait on n1 returned with v3 not published"
[ -n "$why" ] || [ "$(version_line v3)" != drained ] ||
	why="n1 lists v3 as drained before it is published"
kill -CONT "$N2"
[ -z "$why" ] || fail "$why"
wait $WAIT3 || fail "the wait on n1 for v3: $(cat "$T/wait3.out")"
[ -e "$V3/manifest" ] || fail "the wait on n1 ended with v3 not published"
logged n2 "train/cd/v3 published on the PFS (2 parts)" || fail "n2 did not publish v3"
poll_until 10 eval '[ "$(version_line v3)" = drained ]' ||
	fail "n1 lists v3 as $(version_line v3) once published"
info "v3: a wait on a node without a part ended once the version was published"

# ---- v4: a wait there ends when the parts are removed ---------------------
for n in n2 n3; do ctl $n drain --pause >/dev/null || fail "pause $n"; done
write_two v4 40
ctl n1 wait $JOB v4 drained >"$T/wait4.out" 2>&1 &
WAIT4=$!
# Protected first: an rm while a part's shards are being sent would wait
# (busy).
poll_until 30 eval '[ "$(version_line v4)" = protected ]' ||
	fail "n1 lists v4 as '$(version_line v4)'"
kill -0 $WAIT4 2>/dev/null || fail "the wait on n1 for v4 ended: $(cat "$T/wait4.out")"
for n in n2 n3; do ctl $n rm $JOB v4 >"$T/rm.out" 2>&1 || fail "rm v4 on $n: $(cat "$T/rm.out")"; done
poll_until 20 eval '! kill -0 $WAIT4 2>/dev/null' || fail "the wait on n1 for v4 still runs with v4 removed"
! wait $WAIT4 || fail "the wait on n1 for v4 succeeded with v4 removed"
grep -qi "no such version" "$T/wait4.out" || fail "the wait for v4: $(cat "$T/wait4.out")"
! ctl n1 wait $JOB nosuch drained --timeout 30 >"$T/wait5.out" 2>&1 ||
	fail "a wait for a version nobody holds succeeded"
grep -qi "no such version" "$T/wait5.out" || fail "a wait for a version nobody holds: $(cat "$T/wait5.out")"
for n in n2 n3; do ctl $n drain --resume >/dev/null || fail "resume $n"; done
info "v4: a wait for a version the others removed ends, no such version"

# ---- n1 restarted: v3 is listed whole there, and is not n1's part ----------
# n1's PFS scan finds v3 published, with part.n2 and part.n3 but no part of
# its own: it lists the whole version, to read it, but it used to announce
# it as its own part too (nparts 1, every file), so the others listed a
# third part of v3, n1's.
stop_ckptd n1
node n1
for n in $ALL; do
	poll_until 30 is $n peers_up 2 || fail "$n: $(sjson $n peers_up) of 2 peers up"
done
for v in v1 v2; do    # n1's own parts, announced with v3 when the link came up
	poll_until 30 eval '[ "$(seen_level n2 n1 $v)" = drained ]' ||
		fail "n2 lists n1's part of $v at '$(seen_level n2 n1 $v)' after n1's restart"
done
for n in $ALL; do
	[ "$(parts_seen $n $JOB v3)" = "n2 n3" ] || fail "$n lists the parts of v3 as: $(parts_seen $n $JOB v3)"
	# s1, n2's alone: its PFS manifest names its writer (format 6), so
	# n1's scan lists it without announcing it as n1's.
	[ "$(parts_seen $n $JOB s1)" = n2 ] || fail "$n lists the parts of s1 as: $(parts_seen $n $JOB s1)"
done
tw n1 verify $JOB s1 -n 2 -z 1000000 -S 5 >/dev/null || fail "n1 reads s1 wrong after its restart"
[ "$(version_line v3)" = drained ] || fail "n1 lists v3 as $(version_line v3) after its restart"
for i in 2 3; do
	tw n1 verify $JOB v3 -r $((i - 1)) -P part$i -n 2 -z $SIZE -S $((30 + i)) >/dev/null ||
		fail "n1 reads part$i of v3 wrong after its restart"
done
# and read from the parts' owners, which hold them (it used to go to the
# PFS first, from its copy of the whole manifest).
srcs=$(ctl n1 --json restore $JOB v3 --plan | "$PY" -c '
import json, sys
print(" ".join(sorted({f["source"] + ":" + f["node"] for f in json.load(sys.stdin)["files"]})))')
[ "$srcs" = "owner:n2 owner:n3" ] || fail "n1 plans to read v3 from: '$srcs'"
info "n1 restarted: v3 listed whole, read from its owners, and announced as none of its parts"

for n in $ALL; do stop_ckptd $n; done
finish
