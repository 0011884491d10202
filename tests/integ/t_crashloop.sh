#!/bin/bash
# t_crashloop: writers commit versions in a loop while ckptd, with a drain
# configured, is SIGKILLed at random moments and restarted; then it is
# restarted cleanly twice.  Every version a writer saw reach LOCAL must be
# sealed and read back byte for byte (from the local store or the PFS),
# `latest` must never go back, and recovery must never call a committed
# version uncommitted or damaged.
#  - plain drain, local keep = 3
#  - zstd + byte shuffle + incremental drain, local keep = 1
#
# CKPT_CRASH_ROUNDS (default 20 per sub-test) sets the number of kills;
# `make soak` runs many more.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

ROUNDS=${CKPT_CRASH_ROUNDS:-20}
SIZE=700000       # bytes per file: a version spans a few records

# writer NAME JOB LIST: commit v000001, v000002, ... until $T/stop exists;
# append each version that reached LOCAL to LIST.  A version whose write
# failed (ckptd killed under it) is retried under the next name.
writer() {
	local name=$1 job=$2 list=$3 i=1 v
	while [ ! -e "$T/stop" ]; do
		v=$(printf 'v%06d' "$i")
		if tw "$name" write "$job" "$v" -n 2 -z $SIZE -S "$i" -R \
			-w local >>"$T/$name.writer" 2>&1; then
			echo "$v" >>"$list"
		else
			# ckptd is down: wait for it rather than spin.
			poll_until 20 answers "$name"
		fi
		i=$((i + 1))
	done
}

answers() { [ -e "$T/stop" ] || ctl "$1" status >/dev/null 2>&1; }
committed() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
grown_by() { [ "$(committed "$1")" -ge "$2" ]; }

# latest_at_least NAME JOB VERSION: `latest` is VERSION or newer.
latest_at_least() {
	local got
	got=$(tw "$1" latest "$2") || fail "no latest version of $2 after restart"
	[[ "$got" > "$3" || "$got" == "$3" ]] ||
		fail "latest went back: $got after $3 had reached LOCAL"
}

# check_all NAME JOB LIST: every listed version is sealed and reads back.
check_all() {
	local v st n=0
	while read -r v; do
		st=$(vstate "$1" "$2" "$v")
		[ "$st" = sealed ] || fail "$2/$v reached LOCAL but is '$st' now"
		tw "$1" verify "$2" "$v" -n 2 -z $SIZE -S "$((10#${v#v}))" -R ||
			fail "$2/$v does not read back byte for byte"
		n=$((n + 1))
	done <"$3"
	info "$n committed versions of $2 read back"
}

crashloop() { # NAME JOB [DRAIN_KEY=VALUE...] [-- CKPTD_KEY=VALUE...]
	local name=$1 job=$2 list r before last wpid
	shift 2
	list=$T/$name.committed
	: >"$list"
	rm -f "$T/stop"
	drain_conf "$name" "$@"
	start_ckptd "$name"
	writer "$name" "$job" "$list" &
	wpid=$!
	for r in $(seq 1 "$ROUNDS"); do
		before=$(committed "$list")
		# Every other round the drain is paused until the kill, so
		# that versions recovered at start-up drain only after it.
		[ $((r % 2)) = 1 ] && ctl "$name" drain --pause >/dev/null 2>&1
		# Kill after 1 to 3 more commits: the next version is then at
		# a random point of its life (writing, sealing), and the drain
		# somewhere in its copies.
		poll_until 30 grown_by "$list" $((before + 1 + RANDOM % 3)) ||
			fail "round $r: no version reached LOCAL within the deadline; writer: $(tail -n 5 "$T/$name.writer")"
		last=$(tail -n 1 "$list")
		kill9 "$name"
		start_ckptd "$name"
		latest_at_least "$name" "$job" "$last"
	done
	touch "$T/stop"
	wait "$wpid"
	last=$(tail -n 1 "$list")
	stop_ckptd "$name"; start_ckptd "$name"
	stop_ckptd "$name"; start_ckptd "$name"
	latest_at_least "$name" "$job" "$last"
	check_all "$name" "$job" "$list"
	# A version killed before its commit is rightly "never committed";
	# one that a writer saw reach LOCAL is not, nor is it damaged.
	local v
	while read -r v; do
		grep -E "$job/$v (was never committed|.*CORRUPTION)|CORRUPTION: version $job/$v " \
			"$T/$name/ckptd.log" && fail "recovery mistook committed $job/$v"
	done <"$list"
	grep -q "CORRUPTION" "$T/$name/ckptd.log" &&
		fail "recovery found corruption where there was none"
	check_sanitizers "$name"
	stop_ckptd "$name"
}

PFS=$T/pfs
mkdir -p "$PFS"
subtest plain crashloop a cl/plain
subtest packed crashloop b cl/packed compress=zstd:1 shuffle=4 incremental=yes \
	chunk=256K -- keep=1
finish
