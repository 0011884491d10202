#!/bin/bash
# t_cluster_bases: incremental drains in a cluster keep their bases across
# restarts (helper-51, stop 50).  Two nodes (ec 1+1), [drain]
# incremental=yes keep=2, local keep=1.  n1 writes new bytes in every
# version, n2 the same bytes each time, so n2's parts of v3 and v4 refer to
# v1 and v2 (the versions' manifests say so; it depends on timing, as an
# evicting version is no base) while n1's parts have no base.
# A node restarted after its parts were evicted lists its part manifest of
# each version from the PFS scan; it used to take that part's base (none
# for n1's), so its [drain] keep removed v1 and v2 whole, and the other
# node's parts of v3 and v4 read from nowhere.  Checked after a clean
# restart of n1 and after a SIGKILL of both: the newest two versions
# ([drain] keep=2) read back whole, through a node of the cluster and
# through a node outside it on the same PFS.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"
cluster_setup 2
SIZE=300000
JOB=kb/j

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] ||
		drain_conf "$1" incremental=yes keep=2 retry_max=1 -- keep=1 staging=96M
	cluster_start "$1" 1+1
}
published() { [ -e "$(pfs_vdir $JOB "$1")/manifest" ]; }
idle_all() { local n; for n in $ALL; do poll_until 30 drain_idle $n || fail "$n: the drain is not idle"; done; }
# parts VERSION: n1's part new bytes each time, n2's part the same bytes.
parts() {
	CKPT_NODES=2 tw n1 write $JOB "$1" -r 1 -P part1 -n 1 -z $SIZE \
		-S $((100 + ${1#v})) -w local || fail "n1: its part of $1"
	CKPT_NODES=2 tw n2 write $JOB "$1" -r 2 -P part2 -n 1 -z $SIZE \
		-S 7 -w local || fail "n2: its part of $1"
	poll_until 60 published "$1" || fail "$1 is not published"
	idle_all
}
# readable VERSION...: both parts of each through node $RD.
readable() {
	local v
	for v in "$@"; do
		tw $RD verify $JOB $v -r 2 -P part2 -n 1 -z $SIZE -S 7 >/dev/null 2>"$T/v.err" || {
			echo "$RD: part2 of $v: $(tail -1 "$T/v.err")" >&2; return 1; }
		tw $RD verify $JOB $v -r 1 -P part1 -n 1 -z $SIZE -S $((100 + ${v#v})) \
			>/dev/null 2>"$T/v.err" || {
			echo "$RD: part1 of $v: $(tail -1 "$T/v.err")" >&2; return 1; }
	done
}
base_of() {    # VERSION: the version's base in its PFS manifest ("" if none)
	strings -n 2 "$(pfs_vdir $JOB "$1")/manifest" | grep -x 'v[0-9]' | grep -vx "$1" | head -1
}

for n in $ALL; do node $n; done
cluster_up 1
for v in v1 v2 v3 v4; do parts $v; done
# Which versions n2's parts refer to depends on timing (an evicting
# version is no base); usually v3 and v4 refer to v1 and v2.  Said, not
# required: the reads below hold whatever they refer to.
info "bases on the PFS: v3 '$(base_of v3)', v4 '$(base_of v4)'"

stop_ckptd n1
node n1
cluster_up 1
parts v5
RD=n2 readable v4 v5 || fail "after a clean restart of n1"
info "a clean restart of n1 keeps the bases of the kept versions on the PFS"

kill9 n1; kill9 n2
for n in $ALL; do node $n; done
cluster_up 1
parts v6
RD=n1 readable v5 v6 || fail "after a SIGKILL of both nodes"
for n in $ALL; do stop_ckptd $n; done
drain_conf solo
start_ckptd solo
RD=solo readable v5 v6 || fail "a kept version does not read back from the PFS alone"
stop_ckptd solo
info "after a SIGKILL of both, every kept version reads back, also from the PFS alone"
finish
