#!/bin/bash
# run-integ.sh - run the integration tests, tests/integ/t_*.sh.
#
# Each test runs in its own session (so that everything it started can be
# found and killed afterwards, by its process group) under `timeout`, with the
# limit from its own "# TIMEOUT: N" line (default 120 s; multiplied by
# $CKPT_SCALE, which defaults to 10 under CKPT_VALGRIND=1).  A test exits 0
# to pass, 77 to skip, anything else to fail; a failure prints the last 40
# lines of its output, then its FAIL: lines (which daemon logs can push out).
#
#   CKPT_BUILD=build tests/run-integ.sh [NAME...]    (make check-integ)
#   CKPT_VALGRIND=1  run ckptd under valgrind
#
# Exit status: 0 if no test failed.

set -u
cd "$(dirname "$0")/.." || exit 1
export CKPT_BUILD=${CKPT_BUILD:-build}
if [ "${CKPT_VALGRIND:-0}" = 1 ]; then
	export CKPT_SCALE=${CKPT_SCALE:-10}
	command -v valgrind >/dev/null ||
		{ echo "run-integ: CKPT_VALGRIND=1 but valgrind is not installed" >&2; exit 1; }
else
	export CKPT_SCALE=${CKPT_SCALE:-1}
fi

if [ $# -gt 0 ]; then
	tests=()
	for n in "$@"; do tests+=("tests/integ/${n%.sh}.sh"); done
else
	tests=(tests/integ/t_*.sh)
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-integ-run.XXXXXX") || exit 1
chmod 755 "$out"        # t_hostile runs a client as another uid
trap 'rm -rf "$out"' EXIT

failed=0 npass=0 nfail=0 nskip=0
# The pool of 2 MiB huge pages, as tests found it: a test that grows it
# (lib.sh hugepages_add) and is killed before its cleanup gets it set back
# here, so that later tests' ckptd do not find pages nobody meant for them.
HUGE_DIR=/sys/kernel/mm/hugepages/hugepages-2048kB
# The pool's own pages: surplus ones (in use when a test set the pool
# back) go by themselves once freed.
huge_kept() { echo $(($(cat "$HUGE_DIR/nr_hugepages") - $(cat "$HUGE_DIR/surplus_hugepages"))); }
huge0=
[ -r "$HUGE_DIR/nr_hugepages" ] && huge0=$(huge_kept)
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	if [ ! -f "$t" ]; then
		echo "FAIL integ/$name (no such test)"
		failed=1 nfail=$((nfail + 1))
		continue
	fi
	limit=$(sed -n 's/^# TIMEOUT: *\([0-9][0-9]*\).*/\1/p' "$t" | head -1)
	limit=$(( ${limit:-120} * CKPT_SCALE ))
	log=$out/$name.log
	# The test's temporary directories go under tmp, which is removed (and
	# unmounted) here even if the test was killed before its own cleanup.
	tmp=$out/$name.tmp
	mkdir -p "$tmp" && chmod 755 "$tmp"
	start=$(date +%s)
	# setsid: the test leads its own process group; timeout signals the
	# whole group (TERM, then KILL 10 s later).
	TMPDIR=$tmp setsid timeout -k 10 "$limit" bash "$t" >"$log" 2>&1 </dev/null &
	pid=$!
	wait "$pid"
	rc=$?
	# Anything of the test still alive (a daemon that escaped its trap)
	# is in the group led by $pid.
	# (Zombies do not count: they are already dead, waiting to be reaped.)
	if ps -o stat= -g "$pid" 2>/dev/null | grep -qv '^Z'; then
		echo "run-integ: $name left processes behind; killing them: $(ps -o pid=,args= -g "$pid" | tr '\n' ';')" >>"$log"
		kill -KILL -- "-$pid" 2>/dev/null
		[ "$rc" = 0 ] && rc=1
	fi
	awk -v d="$tmp/" 'index($2, d) == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do umount -l "$m"; done
	if [ -n "$huge0" ] && [ "$(huge_kept)" != "$huge0" ]; then
		echo "run-integ: $name left the huge page pool at $(huge_kept) pages; set back to $huge0" >>"$log"
		echo "$huge0" >"$HUGE_DIR/nr_hugepages" 2>/dev/null
	fi
	rm -rf "$tmp"
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)
		echo "PASS integ/$name"
		npass=$((npass + 1)) ;;
	77)
		echo "SKIP integ/$name"
		grep -m1 '^SKIP' "$log" | sed 's/^SKIP: */    /'
		nskip=$((nskip + 1)) ;;
	*)
		echo "FAIL integ/$name"
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			echo "    (timed out after ${limit} s; last 40 lines of output:)"
		else
			echo "    (exit $rc after ${secs} s; last 40 lines of output:)"
		fi
		tail -n 40 "$log" | sed 's/^/    /'
		# The failure lines themselves, which daemon logs printed after
		# them can push out of the tail.
		if grep -q '^FAIL:' "$log"; then
			echo "    (its FAIL lines:)"
			grep '^FAIL:' "$log" | tail -n 20 | sed 's/^/    /'
		fi
		failed=1 nfail=$((nfail + 1)) ;;
	esac
done
echo "integ: $npass passed, $nfail failed, $nskip skipped"
exit $failed
