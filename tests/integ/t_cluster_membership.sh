#!/bin/bash
# t_cluster_membership: the heartbeat and the node table.  Three nodes on
# 127.0.0.1-3 (ec 2+1, heartbeat_timeout 1000 ms):
#  - each shows the other two UP and itself SELF in `ckptctl status` (the
#    table and the "nodes" array of --json), and an idle cluster stays up
#    past three heartbeat timeouts (PINGs keep the links heard);
#  - n2 killed with SIGKILL: n1 and n3 show it DOWN (or CONNECTING again)
#    with an error; restarted, UP again;
#  - n2 stopped with SIGSTOP (no RST: a hung node): within the heartbeat
#    timeout and some slack, n3 (which never connects to n2) shows it DOWN
#    and n1 not UP, both with "timed out", and the log says "nothing heard";
#    n2 is still stopped then; after SIGCONT it comes back UP everywhere;
#  - heartbeat_timeout = 10 is refused at start, clearly.
# A stopped node is continued before the cleanup kills it, even on failure.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
has_ctl || skip "ckptctl is not built"
HB=1000
STOPPED=
# SIGCONT a stopped node before lib.sh's cleanup stops it (keeping the
# test's exit status for the cleanup).
trap '_st=$?; [ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null; (exit $_st); _cleanup' EXIT

cluster_setup 3 rackA rackB rackC
node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1"
	cluster_start "$1" 2+1 -o "cluster.heartbeat_timeout=$HB"
}

# nview OBSERVER NODE: "STATE;ERROR;HEARD_MS_AGO;SINCE_MS_AGO" of NODE in
# OBSERVER's `ckptctl --json status`.
nview() {
	ctl "$1" --json status 2>/dev/null | "$PY" -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == sys.argv[1]:
        print("%s;%s;%s;%s" % (n["state"], n["last_error"], n["heard_ms_ago"],
                               n["since_ms_ago"]))' "$2"
}
state_is() { [ "$(nview "$1" "$2" | cut -d';' -f1)" = "$3" ]; }
# down_with OBSERVER NODE STATES PATTERN: NODE's state is one of STATES
# (a|b) and its error matches PATTERN (grep -E).
down_with() {
	local v
	v=$(nview "$1" "$2")
	[[ "${v%%;*}" =~ ^($3)$ ]] || return 1
	echo "$v" | cut -d';' -f2 | grep -qiE "$4"
}
all_up() {
	local o n
	for o in $ALL; do
		for n in $ALL; do
			[ "$o" = "$n" ] && continue
			state_is "$o" "$n" UP || return 1
		done
	done
}
up_for() {    # OBSERVER NODE MS: NODE has been UP at least MS ms
	local v
	v=$(nview "$1" "$2")
	[ "${v%%;*}" = UP ] && [ "${v##*;}" -ge "$3" ]
}

for n in $ALL; do node $n; done
poll_until 30 all_up || fail "not every node sees the others UP: $(for n in $ALL; do echo "$n:"; ctl $n status; done)"
for n in $ALL; do
	state_is $n $n SELF || fail "$n does not list itself as SELF: $(nview $n $n)"
done
out=$(ctl n1 status)
echo "$out" | grep -q "cluster   node n1: 2 of 2 peers up" || fail "the cluster line is gone: $out"
echo "$out" | grep -qE '^NODE +STATE +SINCE +HEARD +ERROR' || fail "no node table: $out"
echo "$out" | grep -qE '^n2 +UP ' || fail "n2 not UP in n1's table: $out"
echo "$out" | grep -qE '^n1 +SELF ' || fail "n1 not SELF in its table: $out"
info "node table: $(echo "$out" | sed -n '/^NODE/,/^n3/p' | tr '\n' '|')"

# Idle, the links stay up: PINGs are heard within the timeout.
poll_until 20 up_for n3 n1 $((3 * HB)) || fail "n1 not UP for $((3 * HB)) ms on n3: $(nview n3 n1)"
poll_until 20 up_for n1 n3 $((3 * HB)) || fail "n3 not UP for $((3 * HB)) ms on n1: $(nview n1 n3)"
for n in $ALL; do
	! grep -q "nothing heard" "$T/$n/ckptd.log" || fail "$n dropped an idle link: $(grep 'nothing heard' "$T/$n/ckptd.log")"
done
heard=$(nview n1 n2 | cut -d';' -f3)
[ "$heard" -lt $((2 * HB)) ] || fail "n1 last heard n2 $heard ms ago"

# SIGKILL: a reset; the others see it at once, with an error.
kill9 n2
poll_until 10 down_with n3 n2 DOWN . || fail "n3: n2 after SIGKILL: $(nview n3 n2)"
poll_until 10 down_with n1 n2 'DOWN|CONNECTING' . || fail "n1: n2 after SIGKILL: $(nview n1 n2)"
info "after SIGKILL: n3 sees n2 $(nview n3 n2), n1 sees $(nview n1 n2)"
node n2
poll_until 30 all_up || fail "after n2's restart: $(for n in $ALL; do ctl $n status; done)"

# SIGSTOP: a hung node.  Nothing comes from it; only the heartbeat tells.
pid=$(ckptd_pid n2)
STOPPED=$pid
start=$(now_ms)
kill -STOP "$pid"
poll_until 5 down_with n3 n2 DOWN 'timed out' || fail "n3 still sees a stopped n2 as $(nview n3 n2) after $(( $(now_ms) - start )) ms"
took=$(( $(now_ms) - start ))
poll_until 5 down_with n1 n2 'DOWN|CONNECTING' 'timed out' || fail "n1 sees a stopped n2 as $(nview n1 n2)"
info "a stopped n2 seen down after $took ms (heartbeat_timeout $HB ms)"
grep -q "cluster: n2 is down: nothing heard for" "$T/n3/ckptd.log" ||
	fail "n3 did not log why n2 went down"
[ "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" = T ] ||
	fail "n2 is not stopped any more: the test is wrong"
state_is n1 n3 UP && state_is n3 n1 UP || fail "n1-n3 went down with n2: $(nview n1 n3) $(nview n3 n1)"
kill -CONT "$pid"
STOPPED=
poll_until 30 all_up || fail "after SIGCONT: $(for n in $ALL; do ctl $n status; done)"
assert_up n2

# A heartbeat timeout below the minimum: refused at start, clearly.
ckptd_conf n4
if "$CKPTD" -c "$T/n4/ckptd.conf" -o cluster.node=n1 -o "cluster.nodes=$NODES" \
	-o cluster.ec=2+1 -o "cluster.key=$KEY" -o cluster.heartbeat_timeout=10 \
	>"$T/n4.log" 2>&1; then
	fail "ckptd started with heartbeat_timeout = 10"
fi
grep -q "heartbeat_timeout: '10' is below the minimum 500 ms" "$T/n4.log" ||
	fail "no clear message for heartbeat_timeout = 10: $(cat "$T/n4.log")"

for n in $ALL; do stop_ckptd $n; done
exit 0
