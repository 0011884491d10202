#!/bin/bash
# t_cluster_spare: a spare under its own name takes over a lost node's
# place.  Seven ckptd nodes on 127.0.0.1-7 in the list, ec 4+2,
# heartbeat_timeout 1 s, reprotect_after 3 s, protection capped at 2 MiB/s.
#  - The job runs on n1..n6 and writes v1 (six parts, PROTECTED).
#  - n6 is lost (SIGKILL, store deleted).  The job restarts on n1..n5 and
#    the spare n7: n7 reads every byte of n6's part of v1 (decoded from its
#    recorded holders), and v2 - six parts on n1..n5, n7 - is PROTECTED on
#    every one of them, its holders chosen around n6.
#  - The v1 parts that had a shard on n6 are re-protected: while that runs
#    under the cap, the owner re-protecting (SIGKILL) and then the node
#    chosen as new holder (SIGKILL) die and come back.  Re-protection
#    finishes: every v1 part of n1..n5 is PROTECTED with no shard on n6.
#  - n2 and n3 are SIGKILLed (m more): n7 reads every byte of v2 and of
#    v1's parts of n1..n5 (n6's own part of v1 is not checked here: with
#    its owner lost and two more nodes down it may be short of k shards;
#    adopting a lost owner's part is not built yet).
#  - n7 is SIGKILLed and restarted, then restarted cleanly twice: each time
#    it reads every part of v2 whole.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

need_ctl_py
cluster_setup 7 rackA rackB rackC rackD
JOB=train/spare
F1=(-n 3 -z 4194304 -S 41)
F2=(-n 2 -z 1048576 -S 42)

node() {    # NAME [ARGS...]
	local name=$1
	shift
	[ -f "$T/$name/ckptd.conf" ] || ckptd_conf "$name" staging=48M
	cluster_start "$name" 4+2 -o cluster.heartbeat_timeout=1000 \
		-o cluster.reprotect_after=3s -o cluster.bandwidth=2M "$@"
}
is() { status_is "$@"; }
no_n6() {    # NODE: its v1 part's record names five holders, none n6
	local rec
	rec=$(part_holders $1 v1)
	[ "$(echo $rec | wc -w)" = 5 ] && [[ " $rec " != *" n6 "* ]]
}

for n in $ALL; do node $n; done
cluster_up 6
parts_write v1 n1 n2 n3 n4 n5 n6
parts_protected v1 n1 n2 n3 n4 n5 n6
HELD6=
for n in n1 n2 n3 n4 n5; do
	case " $(part_holders $n v1) " in *" n6 "*) HELD6+=" $n" ;; esac
done
info "v1 protected on n1..n6; n6 holds shards of:${HELD6:- none}"

# ---- n6 lost; the job restarts with the spare n7 -----------------------------
kill9 n6
rm -rf "$T/n6/store"
for i in 1 2 3 4 5 6; do part_read n7 v1 $i; done
t0=$(now_ms)
parts_write v2 n1 n2 n3 n4 n5 n7
parts_protected v2 n1 n2 n3 n4 n5 n7
for n in n1 n2 n3 n4 n5 n7; do
	case " $(part_holders $n v2) " in *" n6 "*) fail "$n placed a shard of v2 on n6: $(part_holders $n v2)" ;; esac
done
info "n6 lost: n7 reads its files; v2 PROTECTED on n1..n5 + n7 in $(( $(now_ms) - t0 )) ms"

# ---- re-protection of v1, with the owner and the new holder killed ---------
if [ -n "$HELD6" ]; then
	owner=${HELD6# }
	owner=${owner%% *}
	starts() { grep -c "holder n6 of shard .* down for" "$T/$owner/ckptd.log"; }
	started() { [ "$(starts)" -gt "$1" ]; }
	poll_until 30 started 0 || fail "$owner did not start re-protecting v1 around n6"
	kill9 $owner       # mid re-protection: 3 MiB a shard at 2 MiB/s
	mid=$(sed -n '/holder n6 of shard/,$p' "$T/$owner/ckptd.log" | grep -c "v1: PROTECTED")
	info "$owner killed $([ "$mid" = 0 ] && echo "mid re-protection" || echo "after its re-protection")"
	node $owner
	poll_until 30 started 1 || fail "$owner did not re-protect after its restart"
	for n in n7 n1 n2 n3 n4 n5; do
		[ $n = $owner ] && continue
		# Kill the first other node that holds none of owner's shards in
		# v1's old record: the one a shard is placed on now.
		case " $(part_holders $owner v1) " in *" $n "*) continue ;; esac
		kill9 $n
		node $n
		break
	done
	for n in $HELD6; do
		poll_until 90 no_n6 $n || fail "$n: v1 not re-protected around n6: $(part_holders $n v1), $(part_level $n v1)"
	done
	info "v1 re-protected around n6 on:$HELD6, its owner and a new holder killed meanwhile"
fi
cluster_up_but() {    # peers up on each of n1..n5, n7 (n6 is gone)
	local n
	for n in n1 n2 n3 n4 n5 n7; do
		poll_until 30 is $n peers_up 5 || fail "$n: $(sjson $n peers_up) peers up"
	done
}
cluster_up_but
parts_protected v1 n1 n2 n3 n4 n5
parts_protected v2 n1 n2 n3 n4 n5 n7

# ---- m more nodes down ---------------------------------------------------------
kill9 n2
kill9 n3
for i in 1 2 3 4 5 6; do part_read n7 v2 $i; done
for i in 1 2 3 4 5; do part_read n7 v1 $i; done
info "n2 and n3 down too: n7 reads v2 and v1's parts of n1..n5"

# ---- n7 restarted -----------------------------------------------------------------
for how in kill clean clean; do
	if [ $how = kill ]; then kill9 n7; else stop_ckptd n7; fi
	node n7
	poll_until 30 is n7 peers_up 3 || fail "n7: $(sjson n7 peers_up) peers up after a restart ($how)"
	for i in 1 2 3 4 5 6; do part_read n7 v2 $i; done
done
info "n7 restarted three times: v2 whole"
finish
