#!/bin/bash
# t_multiwriter: 8 writer processes on one job/version at once (ranks 0..7,
# 3 files each, odd ranks with random overlapping writes, some async, some
# zero-copy).  All of them join before any commits (ckpt_tw -p holds each at
# its commit until a shared FIFO closes), so the version is sealed only when
# all 8 have committed.  Then it must be LOCAL, list 24 files with the right
# sizes, and every rank must verify byte for byte.  Then four writers join
# another version and one is killed before committing: the version fails and
# the others' commits report it.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

JOB=multi/run1
VER=step-000100
NW=8
NF=3

ckptd_conf d staging=192M staging_client=16M
start_ckptd d

size_of() { echo $(((1 + $1 % 3) * 1048576 + $1 * 4097)); }
# Odd ranks (random order, -R): async, copy, zerocopy, async; even ranks
# (sequential): copy, zerocopy, copy, async.
MODES=(copy async zerocopy copy copy zerocopy async async)
mode_of() { echo "${MODES[$1]}"; }

mkfifo "$T/go"
pids=()
for r in $(seq 0 $((NW - 1))); do
	args=(-r "$r" -n "$NF" -z "$(size_of "$r")" -S 7 -x "$(mode_of "$r")" -p -w local)
	[ $((r % 2)) = 1 ] && args+=(-R)
	tw d write "$JOB" "$VER" "${args[@]}" <"$T/go" >"$T/w$r.out" 2>"$T/w$r.err" &
	pids+=($!)
done
exec 9>"$T/go"           # the writers' stdin stays open while we hold it

all_paused() {
	local r
	for r in $(seq 0 $((NW - 1))); do
		grep -q paused "$T/w$r.out" 2>/dev/null || return 1
	done
}
if ! poll_until 60 all_paused; then
	for r in $(seq 0 $((NW - 1))); do
		echo "writer $r: $(cat "$T/w$r.out" "$T/w$r.err" 2>/dev/null)"
	done
	fail "not every writer finished writing"
fi

# Every rank has joined and written; nothing may be sealed yet.
st=$(tw d stat "$JOB" "$VER") || fail "stat while open failed"
read -r state level nfiles _ <<<"$st"
[ "$state" = open ] || fail "version is $state before the writers committed (want open)"
[ "$nfiles" = $((NW * NF)) ] || fail "open version has $nfiles files, want $((NW * NF))"

exec 9>&-                # release: all writers commit and wait for LOCAL
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || fail "writer $i failed: $(cat "$T/w$i.err")"
done

# The version: sealed, LOCAL, 24 files, the right byte count.
want_bytes=0
for r in $(seq 0 $((NW - 1))); do
	want_bytes=$((want_bytes + NF * $(size_of "$r")))
done
st=$(tw d stat "$JOB" "$VER") || fail "stat failed"
read -r state level nfiles bytes _ <<<"$st"
[ "$state" = sealed ] || fail "state $state, want sealed"
[ "$level" = local ] || fail "level $level, want local"
[ "$nfiles" = $((NW * NF)) ] || fail "$nfiles files, want $((NW * NF))"
[ "$bytes" = "$want_bytes" ] || fail "$bytes bytes, want $want_bytes"

for r in $(seq 0 $((NW - 1))); do
	tw d verify "$JOB" "$VER" -r "$r" -n "$NF" -z "$(size_of "$r")" -S 7 ||
		fail "rank $r does not verify"
done
# A wrong seed must not verify: the check can fail.
tw d verify "$JOB" "$VER" -r 0 -n 1 -z "$(size_of 0)" -S 8 2>/dev/null &&
	fail "verify passed with the wrong seed"

if has_ctl; then
	out=$(ctl d --json ls "$JOB") || fail "ckptctl ls $JOB failed"
	echo "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
v = [x for x in d["versions"] if x["version"] == sys.argv[1]]
assert len(v) == 1, "version not listed"
v = v[0]
assert v["state"] == "sealed" and v["level"] == "local", (v["state"], v["level"])
assert v["files"] == int(sys.argv[2]), ("files", v["files"])
assert v["writers"] == v["committed"] == int(sys.argv[3]), ("writers", v["writers"], v["committed"])
' "$VER" $((NW * NF)) "$NW" || fail "ckptctl --json ls: wrong listing: $out"
	out=$(ctl d ls "$JOB" "$VER") || fail "ckptctl ls $JOB $VER failed"
	n=$(grep -c '^rank0[0-7][0-9]/part-[0-9]\.bin ' <<<"$out")
	[ "$n" = $((NW * NF)) ] || fail "ckptctl ls lists $n files, want $((NW * NF)): $out"
	grep -q sealed <<<"$out" && grep -q local <<<"$out" ||
		fail "ckptctl ls does not show sealed/local: $out"
fi

info "8 writers, $((NW * NF)) files, $want_bytes bytes: sealed, local, verified"

# ---- one writer of four dies before committing ----------------------------------
# The version must fail, the others' commits must say so, and it must never
# be listed as valid.
V2=step-000200
mkfifo "$T/go2"
pids=()
for r in 0 1 2 3; do
	"$TW" write -s "$(sock d)" "$JOB" "$V2" -r "$r" -n 2 -z 1048576 -S 9 -p -w local \
		<"$T/go2" >"$T/x$r.out" 2>"$T/x$r.err" &
	pids+=($!)
done
exec 9>"$T/go2"
four_paused() { local r; for r in 0 1 2 3; do grep -q paused "$T/x$r.out" || return 1; done; }
poll_until 60 four_paused || fail "the four writers did not finish writing"
kill -KILL "${pids[2]}"
wait "${pids[2]}" 2>/dev/null
wait_state d "$JOB" "$V2" failed
exec 9>&-
for r in 0 1 3; do
	wait "${pids[$r]}" && fail "writer $r committed into a version whose writer 2 died"
	grep -q "aborted" "$T/x$r.err" || fail "writer $r: unclear error: $(cat "$T/x$r.err")"
done
[ "$(tw d latest "$JOB")" = "$VER" ] || fail "latest is not $VER after $V2 failed"
tw d verify "$JOB" "$V2" -r 0 -n 2 -z 1048576 -S 9 2>/dev/null && fail "the failed $V2 can be read"
tw d verify "$JOB" "$VER" -r 5 -n "$NF" -z "$(size_of 5)" -S 7 || fail "$VER does not verify at the end"
stop_ckptd d
info "a writer that died before committing failed the version for all"
