# bench_lib.sh - sourced by the benchmark scripts (not a test).
#
# A figure of the performance table (issue 13, docs/benchmarks.md) is a
# ratio measured side by side in one run, repeated REPS times (at least 5);
# the table shows the minimum, median and maximum of the repetitions.
#
#   bench_reps                 the repetitions to make: $CKPT_BENCH_REPS, at
#                              least 5 (default 5)
#   bench_stats V...           prints "min median max" of the values
#   bench_row KEY TITLE GOAL V...
#                              prints the row, and appends it to the file
#                              $CKPT_BENCH_ROWS (when set) as
#                              KEY|TITLE|min|median|max|GOAL|V,V,...
#                              for tools/bench_table.sh to put in the table.
#                              GOAL is like ">= 0.95" or "<= 1.2".
#   bench_ratio A B            A / B to 3 decimals
#   bench_now_us               wall clock in microseconds

bench_reps() {
	local n=${CKPT_BENCH_REPS:-5}
	[ "$n" -ge 5 ] 2>/dev/null || n=5
	echo "$n"
}

bench_now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

bench_stats() {
	printf '%s\n' "$@" | sort -g | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "- - -"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.3f %.3f %.3f\n", v[1], m, v[NR]
		}'
}

# bench_met GOAL MEDIAN: "met" or "not met"
bench_met() {
	[ "$1" = - ] && { echo "no goal"; return; }
	awk -v g="$1" -v m="$2" 'BEGIN {
		split(g, p, " ")
		ok = (p[1] == ">=") ? (m >= p[2]) : (p[1] == "<=") ? (m <= p[2]) : 0
		print (ok ? "met" : "not met")
	}'
}

bench_row() {
	local key=$1 title=$2 goal=$3 s
	shift 3
	s=$(bench_stats "$@")
	set -- "$@"
	printf '%-52s min %s median %s max %s  (goal %s: %s; n=%d)\n' "$title" \
		$s "$goal" "$(bench_met "$goal" "$(echo "$s" | cut -d' ' -f2)")" $#
	if [ -n "${CKPT_BENCH_ROWS:-}" ]; then
		printf '%s|%s|%s|%s|%s\n' "$key" "$title" "$(echo "$s" | tr ' ' '|')" \
			"$goal" "$(IFS=,; echo "$*")" >>"$CKPT_BENCH_ROWS"
	fi
}
