#!/bin/bash
# t_cluster_nopart: a node that holds nothing of two versions (no part, no
# shard: n1 was down while they were written and drained) knows them only
# from its PFS scan.
#  - n2 and n3 down: n1 lists s1 (n2's alone) as n2's and p1 (parts of n2
#    and n3, merged on the PFS) as no node's part; its restore plan says
#    the same (pfs; node n2 for s1, none for p1: it used to say n1 and
#    "local copy evicted", and `--part n2`, the node ls names, found no
#    file); n1 reads both;
#  - n2 and n3 back: n1 lists p1's parts as n2's and n3's, and plans to
#    read each file from its owner (it used to read from the PFS).
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 3
SIZE=300000
node() {
	[ -f "$T/$1/ckptd.conf" ] || drain_conf "$1" -- staging=96M
	cluster_start "$1" 2+1
}
# plan_of NODE JOB VERSION [ARGS]: "source:node" of every file, sorted, on
# one line.
plan_of() {
	ctl "$1" --json restore "$2" "$3" --plan "${@:4}" | "$PY" -c '
import json, sys
print(" ".join(sorted(f["source"] + ":" + f.get("node", "") for f in json.load(sys.stdin)["files"])))'
}
# nodes_of NODE JOB VERSION: the nodes of its parts listing, "-" for none.
nodes_of() {
	ctl "$1" --json ls "$2" "$3" | "$PY" -c '
import json, sys
print(" ".join(sorted(p.get("node", "-") for p in json.load(sys.stdin)["parts"])))'
}
reads() {
	tw n1 verify ev/solo s1 -n 2 -z $SIZE -S 301 >/dev/null || return 1
	for i in 1 2; do
		tw n1 verify ev/parts p1 -r $i -P part$i -n 1 -z $SIZE -S $((40 + i)) >/dev/null || return 1
	done
}

for n in $ALL; do node $n; done
cluster_up 2
stop_ckptd n1
poll_until 30 status_is n2 peers_up 1 || fail "n2 still sees n1"
tw n2 write ev/solo s1 -n 2 -z $SIZE -S 301 -w local || fail "s1"
for i in 1 2; do
	CKPT_NODES=2 tw n$((i + 1)) write ev/parts p1 -r $i -P part$i -n 1 -z $SIZE -S $((40 + i)) -w local ||
		fail "p1, part $i"
done
poll_until 60 eval '[ -e "$(pfs_vdir ev/solo s1)/manifest" ] && [ -e "$(pfs_vdir ev/parts p1)/manifest" ]' ||
	fail "s1 and p1 not published on the PFS"
for n in n2 n3; do
	poll_until 30 drain_idle $n || fail "$n: the drain is not idle"
	stop_ckptd $n
done

# ---- n1 alone: only its PFS scan knows s1 and p1 ---------------------------
node n1
[ "$(nodes_of n1 ev/solo s1)" = n2 ] || fail "n1 lists the parts of s1 as '$(nodes_of n1 ev/solo s1)'"
[ "$(nodes_of n1 ev/parts p1)" = - ] || fail "n1 lists the parts of p1 as '$(nodes_of n1 ev/parts p1)'"
[ "$(plan_of n1 ev/solo s1)" = "pfs:n2 pfs:n2" ] || fail "n1 plans s1 as '$(plan_of n1 ev/solo s1)'"
[ "$(plan_of n1 ev/solo s1 --part n2)" = "pfs:n2 pfs:n2" ] ||
	fail "n1 plans s1 --part n2 as '$(plan_of n1 ev/solo s1 --part n2 2>&1)'"
[ "$(plan_of n1 ev/parts p1)" = "pfs: pfs:" ] || fail "n1 plans p1 as '$(plan_of n1 ev/parts p1)'"
ctl n1 restore ev/solo s1 --plan | grep -q "no part of it on this node" ||
	fail "n1's plan of s1 does not say why: $(ctl n1 restore ev/solo s1 --plan)"
reads || fail "n1 alone does not read s1 and p1 from the PFS"
info "n1 alone: s1 listed and planned as n2's, p1 as no node's, both read from the PFS"

# ---- n2 and n3 back: p1 is read from its owners -----------------------------
node n2; node n3
cluster_up 2
poll_until 30 eval '[ "$(nodes_of n1 ev/parts p1)" = "n2 n3" ]' ||
	fail "n1 lists the parts of p1 as '$(nodes_of n1 ev/parts p1)' with n2 and n3 up"
[ "$(plan_of n1 ev/parts p1)" = "owner:n2 owner:n3" ] ||
	fail "n1 plans p1 as '$(plan_of n1 ev/parts p1)' with its owners up"
[ "$(plan_of n1 ev/solo s1)" = "owner:n2 owner:n2" ] ||
	fail "n1 plans s1 as '$(plan_of n1 ev/solo s1)' with n2 up"
reads || fail "n1 does not read s1 and p1 from their owners"
info "n2 and n3 back: n1 lists p1's parts as theirs and reads from them"
for n in $ALL; do stop_ckptd $n; done
finish
