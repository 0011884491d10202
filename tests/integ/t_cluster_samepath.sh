#!/bin/bash
# t_cluster_samepath: two nodes' parts of one version that name the same
# paths (three nodes, ec 2+1, one PFS).  Before stop 40 both parts reached
# DRAINED although the later drain had replaced the other's PFS files, so
# once the local copy of the first was removed its bytes were lost.
#  - v1: n2's drain is paused while n1 and n3 drain their parts; n1 and n2
#    wrote same/rank001/part-{0,1}.bin with different bytes.  Resumed, n2's
#    part is refused (its log names the path and n1), stays LOCAL (or PROTECTED), and the
#    PFS files are n1's bytes.  rm of n1's part is refused while v1 is not
#    published (a restart would not find the part on the PFS); both nodes
#    read their own bytes.  Then every node is
#    killed with SIGKILL and restarted, then restarted cleanly twice, and
#    after each start every committed byte of n1 and n2 is read back, n2's
#    part still not drained.  A second rm removes n1's part from the PFS
#    and the local store.
#  - v2: the same with no drain paused (the two drains race): at most one
#    of the two parts is drained, at least one is refused, a drained one's
#    PFS files are its own bytes, and each node reads its own.
#  - v3: n1's file fd/rank001/part-0.bin is a directory in n2's part (its
#    files are under it).  n1's drain is paused while n2's part drains;
#    resumed, n1's part is refused naming that path (before stop 41 it was
#    not detected, and the drain failed with ENOTDIR and retried forever),
#    and both read their own bytes after a SIGKILL and a restart.
#  - v4: n1's copy of its part is killed with a file in place, and a list
#    of n2's naming the same paths is put in by hand (n2 killed between
#    writing it and reading the others).  Restarted, n1 goes on (its part
#    went on before: it is never refused later), leaves its list as it
#    was, and logs the clash; n2 is refused; the PFS files are n1's bytes
#    after a SIGKILL and two clean restarts.
# TIMEOUT: 500
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 3
JOB=train/sp
SIZE=300000

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || drain_conf "$1" retry_max=1 -- staging=96M
	cluster_start "$1" 2+1
}
# refused NAME VERSION OTHER [PATH]: NAME logged its part of VERSION
# refused for PATH (same/rank001/part-0.bin), which clashes with OTHER's.
refused() {
	grep -qF "drain: $JOB/$2: ${4:-same/rank001/part-0.bin} clashes with node $3's part of this version" \
		"$T/$1/ckptd.log"
}
# write NAME VERSION SEED PREFIX
write() {
	CKPT_NODES=3 tw "$1" write $JOB "$2" -r 1 -P "$4" -n 2 -z $SIZE -S "$3" \
		-w local || fail "$1: writing its part of $2"
}
# reads NAME VERSION SEED [PREFIX]: NAME reads the PREFIX (same) files of
# VERSION as SEED's.
reads() {
	tw "$1" verify $JOB "$2" -r 1 -P "${4:-same}" -n 2 -z $SIZE -S "$3" >"$T/verify.out" 2>&1 ||
		fail "$1 does not read back the bytes of seed $3 of $2: $(tail -1 "$T/verify.out")"
}

for n in $ALL; do node $n; done
cluster_up 2
V1=$(pfs_vdir $JOB v1)

# ---- v1: the later part refused, the earlier one's bytes kept ---------------
ctl n2 drain --pause >/dev/null || fail "ckptctl drain --pause on n2"
write n1 v1 11 same
write n2 v1 12 same
write n3 v1 13 part3
for n in n1 n3; do
	poll_until 30 part_is $n v1 drained ||
		fail "$n's part of v1 is $(part_level $n v1), not drained"
done
[ -f "$V1/names.n1" ] || fail "n1 drained its part without its name list"
ctl n2 drain --resume >/dev/null || fail "ckptctl drain --resume on n2"
poll_until 30 refused n2 v1 n1 || fail "n2's part of v1 was not refused: $(grep 'train/sp/v1' "$T/n2/ckptd.log" | tail -3)"
case $(part_level n2 v1) in
local|protected) ;;
*) fail "n2's refused part is $(part_level n2 v1)" ;;
esac
[ ! -e "$V1/part.n2" ] || fail "n2 wrote its part manifest although refused"
[ ! -e "$V1/manifest" ] || fail "v1 was published with two parts naming one path"
"$TW" expect $JOB v1 -r 1 -P same -n 2 -z $SIZE -S 11 -o "$T/exp1" || fail "ckpt_tw expect failed"
diff -r "$T/exp1/same" "$V1/files/same" || fail "the PFS files at same/ are not n1's bytes"
info "v1: n2's part refused (names n1's paths), n1's bytes on the PFS"

# Its version never publishes, so n1's part keeps its local copy: a restart
# would not find the part on the PFS (only published versions are listed).
! out=$(ctl n1 rm $JOB v1 2>&1) || fail "rm of a part whose version is not published: $out"
[[ $out == *"not published on the PFS yet"* ]] || fail "rm of an unpublished part says: $out"
reads n1 v1 11
reads n2 v1 12
info "v1: rm of n1's unpublished part is refused; its local copy stays"

# A SIGKILL, then two clean restarts; every committed byte after each.
for round in kill clean clean; do
	cluster_bounce $round node 2
	reads n1 v1 11
	reads n2 v1 12
	[ "$(part_level n2 v1)" != drained ] || fail "n2's part of v1 is drained after a $round restart"
	[ ! -e "$V1/part.n2" ] || fail "n2 wrote its part manifest after a $round restart"
	diff -r "$T/exp1/same" "$V1/files/same" || fail "the PFS files at same/ changed after a $round restart"
done
poll_until 30 refused n2 v1 n1 || fail "n2 does not refuse its part again after restarts"
info "v1: every committed byte after a SIGKILL and two clean restarts"

# rm asked twice removes n1's part locally and from the PFS; n2's part,
# never drained, is removed by one rm; then nothing of theirs is left.
! ctl n1 rm $JOB v1 >/dev/null 2>&1 || fail "the first rm of n1's part after the restarts"
out=$(ctl n1 rm $JOB v1) || fail "the second rm of n1's part: $out"
[ -z "$(part_level n1 v1)" ] || fail "n1 still has its part after two rm's: $(part_level n1 v1)"
out=$(ctl n2 rm $JOB v1) || fail "rm of n2's refused part: $out"
[ -z "$(part_level n2 v1)" ] || fail "n2 still has its part after rm: $(part_level n2 v1)"
[ ! -e "$V1/part.n1" ] && [ ! -e "$V1/names.n1" ] && [ ! -e "$V1/files/same" ] ||
	fail "n1's part is still on the PFS after rm: $(ls -R "$V1")"
info "v1: two rm's remove n1's unpublished part everywhere"

# ---- v2: the two drains race ------------------------------------------------
V2=$(pfs_vdir $JOB v2)
write n1 v2 21 same
write n2 v2 22 same
write n3 v2 23 part3
settled() {   # NAME OTHER: NAME's part of v2 is drained or refused
	part_is "$1" v2 drained || refused "$1" v2 "$2"
}
poll_until 30 settled n1 n2 || fail "n1's part of v2: $(part_level n1 v2), not refused"
poll_until 30 settled n2 n1 || fail "n2's part of v2: $(part_level n2 v2), not refused"
! { part_is n1 v2 drained && part_is n2 v2 drained; } ||
	fail "both parts of v2 naming one path are drained"
refused n1 v2 n2 || refused n2 v2 n1 || fail "neither part of v2 was refused"
[ ! -e "$V2/manifest" ] || fail "v2 was published with two parts naming one path"
for n in n1 n2; do
	part_is $n v2 drained || continue
	"$TW" expect $JOB v2 -r 1 -P same -n 2 -z $SIZE -S 2${n#n} -o "$T/exp2$n" ||
		fail "ckpt_tw expect failed"
	diff -r "$T/exp2$n/same" "$V2/files/same" ||
		fail "$n's part of v2 is drained but the PFS files are not its bytes"
	info "v2: $n won the race; the PFS files are its bytes"
done
reads n1 v2 21
reads n2 v2 22

# ---- v3: a file of one part where the other has a directory -----------------
V3=$(pfs_vdir $JOB v3)
FD=fd/rank001/part-0.bin
ctl n1 drain --pause >/dev/null || fail "ckptctl drain --pause on n1"
write n1 v3 31 fd
write n2 v3 32 $FD
write n3 v3 33 part3
for n in n2 n3; do
	poll_until 30 part_is $n v3 drained ||
		fail "$n's part of v3 is $(part_level $n v3), not drained"
done
ctl n1 drain --resume >/dev/null || fail "ckptctl drain --resume on n1"
poll_until 30 refused n1 v3 n2 $FD ||
	fail "n1's part of v3 was not refused: $(grep 'train/sp/v3' "$T/n1/ckptd.log" | tail -3)"
! grep -q "v3.*Not a directory\|v3.*Is a directory" "$T/n1/ckptd.log" ||
	fail "n1's drain of v3 reached the PFS path: $(grep 'v3' "$T/n1/ckptd.log" | tail -2)"
[ ! -e "$V3/part.n1" ] && [ ! -e "$V3/names.n1" ] && [ ! -e "$V3/manifest" ] ||
	fail "n1's refused part of v3 left its files: $(ls "$V3")"
"$TW" expect $JOB v3 -r 1 -P $FD -n 2 -z $SIZE -S 32 -o "$T/exp3" || fail "ckpt_tw expect failed"
diff -r "$T/exp3/$FD" "$V3/files/$FD" || fail "the PFS files under $FD are not n2's bytes"
kill9 n1
kill9 n2
node n1
node n2
cluster_up 2
reads n1 v3 31 fd
reads n2 v3 32 $FD
[ "$(part_level n1 v3)" != drained ] || fail "n1's part of v3 is drained after a restart"
info "v3: a file against the other part's directory is refused; both read their bytes after a SIGKILL"

# ---- v4: a part that went on, killed, is not refused when it resumes ------
# n1's copy is killed after its claim, with a file of its part in place; a
# list of n2's naming the same paths is there when n1 starts again (n2
# killed between writing its list and reading the others).  Before stop 42
# n1 was refused and removed its list, so that n2 then drained over n1's
# placed files.
V4=$(pfs_vdir $JOB v4)
placed() { [ -n "$(find "$V4/files/same" -type f 2>/dev/null)" ]; }
for n in n1 n2; do ctl $n drain --pause >/dev/null || fail "ckptctl drain --pause on $n"; done
write n1 v4 41 same
write n2 v4 42 same
write n3 v4 43 part3
stop_ckptd n1
CKPT_FAULT="rename:1+:delay=1500" node n1
poll_until 60 placed ||
	fail "n1 put no file of v4 in place: $(grep 'train/sp/v4' "$T/n1/ckptd.log" | tail -3)"
kill9 n1
[ -f "$V4/names.n1" ] && [ ! -e "$V4/part.n1" ] || fail "n1's copy of v4 is not half done: $(ls "$V4")"
cp -p "$V4/names.n1" "$V4/names.n2" || fail "writing n2's list of v4 by hand"
ino=$(stat -c %i "$V4/names.n1")
node n1
poll_until 30 part_is n1 v4 drained ||
	fail "n1's part of v4 is $(part_level n1 v4), not drained: $(grep 'train/sp/v4' "$T/n1/ckptd.log" | tail -3)"
# Claiming again, n1 left its list as it was: a list renamed over while
# another node lists the directory may be missed (tmpfs).
[ "$(stat -c %i "$V4/names.n1")" = "$ino" ] || fail "n1 replaced its unchanged list of v4"
grep -qF "drain: $JOB/v4: same/rank001/part-0.bin clashes with node n2's part of this version, which claimed it after this part went on" \
	"$T/n1/ckptd.log" || fail "n1 did not log n2's list of v4"
ctl n2 drain --resume >/dev/null || fail "ckptctl drain --resume on n2"
poll_until 30 refused n2 v4 n1 ||
	fail "n2's part of v4 was not refused: $(grep 'train/sp/v4' "$T/n2/ckptd.log" | tail -3)"
"$TW" expect $JOB v4 -r 1 -P same -n 2 -z $SIZE -S 41 -o "$T/exp4" || fail "ckpt_tw expect failed"
for round in start kill clean clean; do
	[ $round = start ] || cluster_bounce $round node 2
	[ -e "$V4/names.n1" ] && [ ! -e "$V4/part.n2" ] && [ ! -e "$V4/manifest" ] ||
		fail "v4's PFS directory after a $round: $(ls "$V4")"
	diff -r "$T/exp4/same" "$V4/files/same" || fail "the PFS files of v4 are not n1's bytes ($round)"
	part_is n1 v4 drained || fail "n1's part of v4 is $(part_level n1 v4) ($round)"
	[ "$(part_level n2 v4)" != drained ] || fail "n2's part of v4 is drained ($round)"
	reads n1 v4 41
	reads n2 v4 42
done
info "v4: a part that went on is not refused when it resumes; n2's is"

for n in $ALL; do stop_ckptd $n; done
finish
