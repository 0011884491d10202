#!/bin/sh
# tests/fuzz/run.sh BUILD - build every tests/fuzz/fuzz_*.c with libFuzzer,
# ASan and UBSan into BUILD/fuzz, and run each for a bounded time.
#
# Each harness names the lib/ sources it links in a "fuzz-sources:" line of
# its opening comment, and may have a libFuzzer dictionary NAME.dict.  The corpus of each harness is kept in
# BUILD/fuzz/corpus-NAME and grows from run to run; a crashing input is saved
# as BUILD/fuzz/NAME-crash-*.  Exit status: 0 if every harness ran clean,
# 1 if one failed to build or found a crash, 77 if clang is missing.
#
# Environment: FUZZ_TIME (seconds per harness, default 20), FUZZ_CC (clang).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
out=$build/fuzz
time=${FUZZ_TIME:-20}
cc=${FUZZ_CC:-clang}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP fuzz: $cc not found"
	exit 77
fi
isal=$(pkg-config --cflags --libs libisal) || exit 1
mkdir -p "$out"
cd "$root" || exit 1

fail=0
for src in tests/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	libs=$(sed -n 's/^ \* fuzz-sources: *//p' "$src")
	# Optional "fuzz-libs:" line: system libraries the harness links.
	libs="$libs $(sed -n 's/^ \* fuzz-libs: *//p' "$src")"
	bin=$out/$name
	# shellcheck disable=SC2086 # $libs and $isal are word lists
	if ! "$cc" -g -O1 -std=gnu11 -D_GNU_SOURCE \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -Iinclude -Ilib -o "$bin" "$src" $libs $isal; then
		echo "FAIL fuzz/$name (build)"
		fail=1
		continue
	fi
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	mkdir -p "$out/corpus-$name"
	# shellcheck disable=SC2086 # $dict is empty or one word
	if "$bin" -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 \
	    $dict -artifact_prefix="$out/$name-" \
	    "$out/corpus-$name" >"$out/$name.log" 2>&1; then
		echo "PASS fuzz/$name:" \
		     "$(grep DONE "$out/$name.log" | sed 's/ *lim:.*//')"
	else
		echo "FAIL fuzz/$name (see $out/$name.log)"
		tail -40 "$out/$name.log"
		fail=1
	fi
done
exit $fail
