#!/bin/bash
# t_cluster_lost: the restore planner, and more than m nodes of a group lost
# with a drain target.  Six ckptd nodes on 127.0.0.1-6, ec 4+2, three
# failure domains of two, one PFS directory.  v1 is written in six parts,
# protected, drained and published; v2 is written and protected with every
# drain paused (its only copies are the nodes and their shards).
#  - With every node up, `restore --plan` says n1's files come from its own
#    copy and the others' from their owners; a 3-node job (n1, n2, n3)
#    reads every file of the 6-part v2.  n3's copy of v1 is evicted: its
#    files are read from the PFS (its shards lost their records with it).
#  - A flipped byte in n2's local copy of v2: n1 reads n2's files anyway
#    (the owner's copy fails its CRC, the shards serve), and so does n2 (its
#    own copy fails, the shards serve); both logs say which source failed.
#  - n4, n5 and n6 are SIGKILLed and their stores deleted (three of a group
#    of six with m = 2).  On n1 the plan of v1 reads their files from the
#    PFS and that of v2 has them LOST, with why; `restore v2` is refused
#    before writing anything, naming the lost files; `restore latest` (and
#    ckpt_latest) gives v1, byte for byte, and names v2 as passed over;
#    `restore v2 --part n1` restores n1's own files.  n1, n2 and n3 each
#    read every file of v1.
#  - n2 is SIGKILLed and restarted, then restarted cleanly twice: each time
#    v1 is still the latest and reads whole (its lost parts from the PFS).
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 6 rackA rackB rackC
JOB=train/lost
F1=(-n 2 -z 1048576 -S 11)
F2=(-n 2 -z 1048576 -S 22)

node() {
	[ -f "$T/$1/ckptd.conf" ] || drain_conf "$1" retry_max=1 -- staging=96M
	cluster_start "$1" 4+2
}
verify_part() {    # NODE VERSION RANK
	local f=("${F1[@]}")
	[ "$2" = v2 ] && f=("${F2[@]}")
	tw "$1" verify $JOB "$2" -r "$3" -P "part$3" "${f[@]}"
}
expect_all() {     # VERSION DIR: every part's files under DIR
	local i f=("${F1[@]}")
	[ "$1" = v2 ] && f=("${F2[@]}")
	for i in 1 2 3 4 5 6; do
		"$TW" expect $JOB "$1" -r $i -P part$i "${f[@]}" -o "$2" ||
			fail "ckpt_tw expect failed"
	done
}
job_reads() {     # VERSION WHEN: n1, n2 and n3 (a 3-node job) each read all 6 parts
	local n i
	for n in n1 n2 n3; do
		for i in 1 2 3 4 5 6; do
			verify_part $n "$1" $i || fail "$n: part $i of $1 does not read back $2"
		done
	done
}
plan_of() {        # NODE VERSION: the plan as "path source" lines
	ctl "$1" --json restore $JOB "$2" --plan | "$PY" -c '
import json, sys
for f in json.load(sys.stdin)["files"]:
    print(f["path"], f["source"], f["node"], f["why"], sep="|")'
}
down_on() { ! status_is "$1" peers_up "$2"; }
has() { [ -f "$1" ]; }

for n in $ALL; do node $n; done
cluster_up 5

# ---- v1 drained and published, v2 protected only --------------------------
# v1 erasure-coded first (a drained part is never coded), then drained
for n in $ALL; do ctl $n drain --pause >/dev/null || fail "$n: drain --pause"; done
cluster_protect_parts $JOB v1 "${F1[@]}"
for n in $ALL; do ctl $n drain --resume >/dev/null || fail "$n: drain --resume"; done
ctl n1 wait $JOB v1 drained --timeout 120 >/dev/null ||
	fail "v1 did not reach DRAINED: $(ctl n1 ls $JOB v1 | head -1)"
poll_until 30 has "$(pfs_vdir $JOB v1)/manifest" || fail "v1 was not published"
# n3's local copy of v1 evicted (rm of a drained version): its part is
# read from the PFS everywhere, never from shards that lost their records
ctl n3 rm $JOB v1 >/dev/null || fail "rm (evict) of n3's part of v1"
poll_until 20 eval 'plan_of n1 v1 | grep -q "^part3/.*|pfs|n3|n3 has no local copy"' ||
	fail "n3's evicted part of v1 is not planned from the PFS: $(plan_of n1 v1 | grep part3)"
for n in n1 n3; do
	verify_part $n v1 3 || fail "$n: n3's evicted part of v1 does not read back"
done
for n in $ALL; do ctl $n drain --pause >/dev/null || fail "$n: drain --pause"; done
cluster_protect_parts $JOB v2 "${F2[@]}"

# ---- the plan with every node up; a 3-node job reads a 6-node version -----
plan_of n1 v2 >"$T/plan.all" || fail "restore --plan of v2 failed on n1"
[ "$(wc -l <"$T/plan.all")" = 12 ] || fail "the plan of v2 has $(wc -l <"$T/plan.all") files, not 12"
grep -q '^part1/.*|local|n1|' "$T/plan.all" || fail "n1's files are not planned from its copy: $(cat "$T/plan.all")"
grep -q '^part4/.*|owner|n4|read from n4' "$T/plan.all" || fail "n4's files are not planned from n4: $(cat "$T/plan.all")"
! grep -qv '|local|\||owner|' "$T/plan.all" || fail "a file planned from elsewhere: $(cat "$T/plan.all")"
ctl n1 restore $JOB v2 --plan | grep -q "^PATH.*SOURCE.*WHY" || fail "restore --plan prints no table"
job_reads v2 "with every node up"
info "plan: local and owner with every node up; n1-n3 read all 6 parts"

# ---- a damaged copy: the next source -----------------------------------------
SEG=$(store_seg_of "$T/n2/store" v2) || fail "no segment of n2 names v2"
flip_byte "$SEG" 8292
verify_part n1 v2 2 || fail "n1 cannot read n2's part with n2's copy damaged"
grep -q "source owner failed .*trying shards" "$T/n1/ckptd.log" ||
	fail "n1 did not fall back to the shards: $(grep 'read:' "$T/n1/ckptd.log" | tail -3)"
verify_part n2 v2 2 || fail "n2 cannot read its own part with its copy damaged"
grep -q "source local failed .*trying shards" "$T/n2/ckptd.log" ||
	fail "n2 did not fall back to the shards: $(grep 'read:' "$T/n2/ckptd.log" | tail -3)"
flip_byte "$SEG" 8292          # mended
info "a damaged copy: owner and local fall back to the shards"

# ---- three nodes of the group lost ----------------------------------------------
for n in n4 n5 n6; do
	kill9 $n
	rm -rf "$T/$n/store"
done
for n in n1 n2 n3; do
	poll_until 20 status_is $n peers_up 2 || fail "$n: $(sjson $n peers_up) peers up, want 2"
done
plan_of n1 v1 >"$T/plan.v1" || fail "restore --plan of v1 failed"
grep -q '^part5/.*|pfs|n5|n5 is down; only 3 of 5 shards reachable, 4 needed; the drained PFS copy' "$T/plan.v1" ||
	fail "n5's files of v1 are not planned from the PFS: $(cat "$T/plan.v1")"
ctl n1 restore $JOB v2 --plan >"$T/plan.v2" 2>&1 && fail "restore --plan of v2 exits 0 with files lost"
grep -q "part6/.*LOST.*n6 is down; only 3 of 5 shards reachable, 4 needed; not drained" "$T/plan.v2" ||
	fail "the plan of v2 does not say n6's files are lost: $(cat "$T/plan.v2")"
err=$(ctl n1 restore $JOB v2 --to "$T/r2" 2>&1) && fail "v2 restored with three nodes lost"
case $err in *"v2 is unrecoverable: 6 of 12 files"*part4*) ;;
*) fail "restore of v2 says: $err" ;; esac
[ ! -e "$T/r2" ] || fail "restore of unrecoverable v2 wrote $(ls -R "$T/r2")"
[ "$(tw n1 latest $JOB)" = v1 ] || fail "latest is '$(tw n1 latest $JOB)', want v1"
ctl n1 restore $JOB latest --to "$T/r1" >/dev/null 2>"$T/latest.err" ||
	fail "restore latest: $(cat "$T/latest.err")"
grep -q "v2 is unrecoverable" "$T/latest.err" && grep -q "restoring v1" "$T/latest.err" ||
	fail "restore latest does not say it passed over v2: $(cat "$T/latest.err")"
expect_all v1 "$T/exp1"
diff -r "$T/exp1" "$T/r1" || fail "v1 restored with three nodes lost differs"
ctl n1 restore $JOB v2 --part n1 --to "$T/r2p" >/dev/null || fail "restore v2 --part n1"
[ "$(find "$T/r2p" -type f | wc -l)" = 2 ] || fail "restore --part n1 wrote $(find "$T/r2p" -type f | wc -l) files"
"$TW" expect $JOB v2 -r 1 -P part1 "${F2[@]}" -o "$T/exp2p" || fail "ckpt_tw expect failed"
diff -r "$T/exp2p" "$T/r2p" || fail "n1's part of v2 restored differs"
job_reads v1 "with n4-n6 lost"
info "three nodes lost: v1 from the PFS, v2 unrecoverable by name, latest is v1"

# ---- a survivor restarted: still whole ----------------------------------------
check_n2() {
	poll_until 20 status_is n2 peers_up 2 || fail "n2: $(sjson n2 peers_up) peers up after $1"
	poll_until 20 eval '[ "$(tw n2 latest $JOB)" = v1 ]' ||
		fail "latest on n2 after $1 is '$(tw n2 latest $JOB)', want v1"
	for i in 1 2 3 4 5 6; do
		verify_part n2 v1 $i || fail "n2: part $i of v1 after $1"
	done
}
kill9 n2
node n2
check_n2 "a SIGKILL"
for r in 1 2; do
	stop_ckptd n2
	node n2
	check_n2 "clean restart $r"
done
info "n2 restarted (SIGKILL, then clean twice): v1 still latest and whole"

for n in n1 n2 n3; do stop_ckptd $n; done
finish
