#!/bin/bash
# bench_table.sh ROWS [MD]: the table of `make bench` (issue 13), from the
# rows the benchmark scripts appended to ROWS (tools/bench_lib.sh), printed
# and written into MD (default docs/benchmarks.md) between the lines
# "<!-- bench-table -->" and "<!-- /bench-table -->", which are added at
# the end of MD the first time.  Not a test.
set -u
ROWS=$1
MD=${2:-docs/benchmarks.md}
[ -s "$ROWS" ] || { echo "bench_table: no rows in $ROWS"; exit 1; }
. "$(dirname "$0")/bench_lib.sh"
T=$(mktemp)
trap 'rm -f "$T" "$T.md"' EXIT
{
	echo "<!-- bench-table -->"
	echo "$(date -u +%F), $(nproc) cpus, $(uname -r), \`make bench\` (ratios, min / median / max of n repetitions):"
	echo
	echo "| figure | n | min | median | max | goal | median meets it |"
	echo "|---|---|---|---|---|---|---|"
	while IFS='|' read -r key title min med max goal vals; do
		met=-
		[ "$goal" != - ] && met=$(bench_met "$goal" "$med")
		n=$(echo "$vals" | tr ',' '\n' | grep -c .)
		echo "| $title | $n | $min | $med | $max | $goal | $met |"
	done <"$ROWS"
	echo "<!-- /bench-table -->"
} >"$T"
cat "$T"
if grep -q '^<!-- bench-table -->$' "$MD"; then
	awk -v t="$T" '
		/^<!-- bench-table -->$/ { while ((getline l < t) > 0) print l; skip = 1; next }
		/^<!-- \/bench-table -->$/ { skip = 0; next }
		!skip' "$MD" >"$T.md" && cat "$T.md" >"$MD"
else
	{ echo; echo "## The table of \`make bench\`"; echo; cat "$T"; } >>"$MD"
fi
echo "bench_table: written into $MD"
