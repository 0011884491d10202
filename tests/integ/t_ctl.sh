#!/bin/bash
# t_ctl: ckptctl against a real daemon.  status, ls, wait, verify, restore
# (latest and by name, compared byte for byte with the files ckpt_tw expect
# writes), rm, each with --json parsed by python; errors are one line on
# stderr and a non-zero exit; a flipped byte in a segment makes verify name
# the damaged file and exit non-zero, restore fail, and ckpt_read report a
# checksum mismatch, while other versions stay readable.  A version whose
# file list is larger than one protocol frame still lists and restores.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

has_ctl || skip "ckptctl is not built"

JOB=ctl/job
A1=(-n 3 -z 1500000 -S 1 -R)
A2=(-n 2 -z 2097152 -S 2)
A3=(-n 2 -z 1048576 -S 3)
PY=/usr/bin/python3
[ -x $PY ] || PY=python3

# json CMD...: run ckptctl --json CMD, check it parses, print it.
json() {
	local out
	out=$(ctl d --json "$@") || fail "ckptctl --json $*: exit $?"
	$PY -c 'import json,sys; json.load(sys.stdin)' <<<"$out" ||
		fail "ckptctl --json $*: not JSON: $out"
	echo "$out"
}

# ctl_err WANT_RC CMD...: ckptctl must exit WANT_RC ("nz": any non-zero)
# with an error on stderr: exactly one line for failures (exit 1), a first
# line naming ckptctl for usage errors (exit 2).
ctl_err() {
	local want=$1 rc
	shift
	ctl d "$@" >"$T/err.out" 2>"$T/err.err"
	rc=$?
	[ "$rc" != 0 ] || fail "ckptctl $* succeeded; want an error"
	[ "$want" = nz ] || [ "$rc" = "$want" ] || fail "ckptctl $*: exit $rc, want $want"
	grep -q '^ckptctl: ' "$T/err.err" || fail "ckptctl $*: no 'ckptctl: ' error line: $(cat "$T/err.err")"
	if [ "$rc" = 1 ]; then
		[ "$(wc -l <"$T/err.err")" = 1 ] ||
			fail "ckptctl $*: want one error line, got: $(cat "$T/err.err")"
	fi
}

ckptd_conf d keep=100
start_ckptd d
tw d write "$JOB" v1 "${A1[@]}" -w local || fail "writing v1 failed"
tw d write "$JOB" v2 "${A2[@]}" -w local || fail "writing v2 failed"

# ---- status --------------------------------------------------------------------
out=$(ctl d status) || fail "ckptctl status failed"
grep -q "$(ckptd_pid d)" <<<"$out" || fail "ckptctl status does not show the pid: $out"
# [ckptd] nice (default 10) is every thread's, taken before the first one.
for t in /proc/"$(ckptd_pid d)"/task/*/stat; do
	ni=$(sed 's/.*) //' "$t" | awk '{ print $17 }')
	[ "$ni" = 10 ] || fail "ckptd thread $t runs at nice $ni, want 10"
done
out=$(json status)
$PY -c '
import json, sys
d = json.load(sys.stdin)
dm = d["daemon"]
assert dm["pid"] == int(sys.argv[1]), dm["pid"]
assert dm["versions"] == 2 and dm["jobs"] == 1, dm
names = sorted(v["version"] for v in d["versions"])
assert names == ["v1", "v2"], names
' "$(ckptd_pid d)" <<<"$out" || fail "ckptctl --json status is wrong: $out"

# ---- ls --------------------------------------------------------------------------
out=$(ctl d ls) || fail "ckptctl ls failed"
grep -q "^$JOB .* v2 .*local" <<<"$out" || fail "ckptctl ls: $out"
out=$(json ls)
$PY -c '
import json, sys
j = json.load(sys.stdin)["jobs"]
assert len(j) == 1 and j[0]["job"] == "ctl/job" and j[0]["versions"] == 2, j
assert j[0]["newest"] == "v2", j
' <<<"$out" || fail "ckptctl --json ls: $out"
out=$(ctl d ls "$JOB") || fail "ckptctl ls JOB failed"
grep -q "^v1 .*sealed.*local" <<<"$out" && grep -q "^v2 .*sealed.*local" <<<"$out" ||
	fail "ckptctl ls $JOB: $out"
out=$(json ls "$JOB" v2)
$PY -c '
import json, sys
d = json.load(sys.stdin)
f = sorted((x["path"], x["size"]) for x in d["files"])
assert f == [("rank000/part-0.bin", 2097152), ("rank000/part-1.bin", 2097152)], f
assert d["info"]["state"] == "sealed" and d["info"]["files"] == 2, d["info"]
' <<<"$out" || fail "ckptctl --json ls $JOB v2: $out"

# ---- wait --------------------------------------------------------------------------
ctl d wait "$JOB" v2 local --timeout 10 >/dev/null || fail "ckptctl wait v2 local failed"
out=$(json wait "$JOB" v1 staged)
$PY -c 'import json,sys; assert json.load(sys.stdin)["reached"] is True' <<<"$out" ||
	fail "ckptctl --json wait: $out"
# A version still open: wait times out (exit 1); once committed, it returns.
mkfifo "$T/hold"
tw d write "$JOB" v4 -n 1 -z 100000 -S 4 -p <"$T/hold" >"$T/v4.out" 2>&1 &
wpid=$!
exec 9>"$T/hold"
poll_until 30 grep -q paused "$T/v4.out" || fail "v4 writer never paused"
ctl_err 1 wait "$JOB" v4 local --timeout 1
# No drain here: DRAINED (and PROTECTED) can never come; said at once, not
# after the timeout.
start_s=$(date +%s)
ctl_err 1 wait "$JOB" v2 drained --timeout 60
ctl_err 1 wait "$JOB" v2 protected --timeout 60
[ $(( $(date +%s) - start_s )) -lt 30 ] || fail "wait for an unreachable level took the whole timeout"
out=$(ctl d wait "$JOB" v2 drained --timeout 60 2>&1)
grep -qi "not supported" <<<"$out" || fail "wait drained without a drain: $out"
ctl d wait "$JOB" v4 local --timeout 30 >"$T/wait4.out" 2>&1 9>&- &
cpid=$!
exec 9>&-
wait "$wpid" || fail "v4 writer failed: $(cat "$T/v4.out")"
wait "$cpid" || fail "ckptctl wait for v4 did not return success once it was committed: $(cat "$T/wait4.out")"

# ---- verify ------------------------------------------------------------------------
out=$(ctl d verify "$JOB" v1) || fail "ckptctl verify v1 failed: $out"
grep -q "^ok: 3 files, 4500000 bytes" <<<"$out" || fail "ckptctl verify v1: $out"
out=$(json verify "$JOB" v2)
$PY -c '
import json, sys
d = json.load(sys.stdin)
assert d["ok"] is True and d["files"] == 2 and d["verified_bytes"] == 4194304, d
' <<<"$out" || fail "ckptctl --json verify: $out"

# ---- restore -------------------------------------------------------------------
"$TW" expect "$JOB" v4 -n 1 -z 100000 -S 4 -o "$T/exp4" || fail "ckpt_tw expect v4 failed"
ctl d restore "$JOB" latest --to "$T/r4" >/dev/null || fail "ckptctl restore latest failed"
diff -r "$T/exp4" "$T/r4" || fail "restore latest (v4) differs from the expected files"
"$TW" expect "$JOB" v1 "${A1[@]}" -o "$T/exp1" || fail "ckpt_tw expect v1 failed"
ctl d restore "$JOB" v1 --to "$T/r1" >/dev/null || fail "ckptctl restore v1 failed"
diff -r "$T/exp1" "$T/r1" || fail "restore of v1 differs from the expected files"
# the check can fail: a different seed differs
"$TW" expect "$JOB" v1 -n 3 -z 1500000 -S 9 -o "$T/expx" || fail "ckpt_tw expect failed"
diff -rq "$T/expx" "$T/r1" >/dev/null && fail "restore matches the files of a different seed"

# ---- errors: one line, non-zero exit ---------------------------------------------
ctl_err 1 verify "$JOB" nosuch
ctl_err 1 ls "$JOB" nosuch
ctl_err 1 wait "$JOB" nosuch local --timeout 2
ctl_err 1 restore "$JOB" nosuch --to "$T/rx"
ctl_err 1 rm "$JOB" nosuch
ctl_err 1 restore nosuch/job latest --to "$T/rx"
ctl_err 2 wait "$JOB" v1 bogus-level
ctl_err 2 bogus-command
ctl_err 2 rm "$JOB"
"$CKPTCTL" -s "$T/no/such.sock" status >/dev/null 2>"$T/err.err" && fail "status on a missing socket succeeded"
[ "$(wc -l <"$T/err.err")" = 1 ] || fail "status on a missing socket: want one line: $(cat "$T/err.err")"
[ ! -e "$T/rx" ] || [ -z "$(ls -A "$T/rx")" ] || fail "a failed restore left files in $T/rx"

# ---- rm ----------------------------------------------------------------------------
out=$(ctl d rm "$JOB" v1) || fail "ckptctl rm v1 failed"
[ "$out" = "removed $JOB/v1: local copy removed" ] || fail "ckptctl rm says: $out"
[ "$(vstate d "$JOB" v1)" = absent ] || fail "v1 is still listed after rm"
ctl d ls "$JOB" | grep -q '^v1 ' && fail "ckptctl ls still shows v1"
tw d verify "$JOB" v1 "${A1[@]}" 2>/dev/null && fail "v1 can be read after rm"
tw d verify "$JOB" v2 "${A2[@]}" || fail "v2 does not verify after removing v1"

# ---- a corrupted byte -----------------------------------------------------------
tw d write "$JOB" corruptme "${A3[@]}" -w local || fail "writing corruptme failed"
# Its segment is the one whose header names it; its first record (the first
# bytes of rank000/part-0.bin) starts right after the 4 KiB header.
seg=$($PY - "$T/d/store/seg" <<'EOF'
import os, sys
d = sys.argv[1]
hits = [f for f in sorted(os.listdir(d))
        if b"corruptme" in open(os.path.join(d, f), "rb").read(4096)]
print(hits[0] if len(hits) == 1 else "")
EOF
)
[ -n "$seg" ] || fail "cannot find the segment of corruptme"
"$TW" expect "$JOB" corruptme "${A3[@]}" -o "$T/exp3" || fail "ckpt_tw expect failed"
$PY - "$T/d/store/seg/$seg" "$T/exp3/rank000/part-0.bin" <<'EOF' || fail "the data of part-0 is not at 4096 of segment $seg"
import sys
seg, exp = sys.argv[1], sys.argv[2]
want = open(exp, "rb").read(4096)
with open(seg, "r+b") as f:
    f.seek(4096)
    assert f.read(4096) == want, "record not where expected"
    f.seek(4096 + 100)
    b = f.read(1)
    f.seek(4096 + 100)
    f.write(bytes([b[0] ^ 0x40]))
EOF
ctl d verify "$JOB" corruptme >"$T/cv.out" 2>&1 && fail "ckptctl verify passed a corrupted version"
grep -q "rank000/part-0.bin" "$T/cv.out" || fail "ckptctl verify does not name the damaged file: $(cat "$T/cv.out")"
grep -qi "corrupt\|checksum" "$T/cv.out" || fail "ckptctl verify does not say the file is corrupt: $(cat "$T/cv.out")"
info "verify of the damaged version: $(grep rank000 "$T/cv.out")"
ctl d restore "$JOB" corruptme --to "$T/rc" >"$T/rc.out" 2>&1 && fail "ckptctl restore of a corrupted version succeeded"
[ ! -e "$T/rc/rank000/part-0.bin" ] || fail "restore left the damaged file in place"
[ -z "$(find "$T/rc" -name '.ckpt-restore.*' 2>/dev/null)" ] ||
	fail "restore left temporary files: $(find "$T/rc" -name '.ckpt-restore.*')"
info "restore of the damaged version: $(tail -1 "$T/rc.out")"
tw d verify "$JOB" corruptme "${A3[@]}" 2>"$T/tv.err" && fail "ckpt_read returned corrupted data"
grep -q "checksum mismatch" "$T/tv.err" || fail "ckpt_read's error is not a checksum mismatch: $(cat "$T/tv.err")"
tw d verify "$JOB" v2 "${A2[@]}" || fail "v2 does not verify next to a corrupted version"
assert_up d
stop_ckptd d
info "status, ls, wait, verify, restore, rm, errors and corruption detection"

# ---- a version with many long file names ------------------------------------------
# 5000 files under a 200-byte directory: its file list is about 1.2 MB, more
# than one protocol frame.  ls, verify and restore must still work.
many_files() {
	local pfx n
	pfx=$(printf 'd%.0s' $(seq 200))
	start_ckptd m
	tw m write "$JOB" many -n 5000 -z 100 -P "$pfx" -S 5 -w local || fail "writing 5000 files failed"
	tw m verify "$JOB" many -n 5000 -z 100 -P "$pfx" -S 5 || fail "5000 files do not verify"
	out=$(ctl m ls "$JOB" many 2>&1) || fail "ckptctl ls of a version with 5000 files failed: $out"
	n=$(grep -c "^$pfx/rank000/part-" <<<"$out")
	[ "$n" = 5000 ] || fail "ckptctl ls lists $n of 5000 files"
	out=$(ctl m verify "$JOB" many 2>&1) || fail "ckptctl verify of 5000 files failed: $out"
	ctl m restore "$JOB" many --to "$T/rm" >/dev/null 2>"$T/rm.err" ||
		fail "ckptctl restore of 5000 files failed: $(cat "$T/rm.err")"
	"$TW" expect "$JOB" many -n 5000 -z 100 -P "$pfx" -S 5 -o "$T/em" || fail "ckpt_tw expect failed"
	diff -r "$T/em" "$T/rm" >/dev/null || fail "restore of 5000 files differs from the expected files"
	stop_ckptd m
	info "[many files] ls, verify and restore of 5000 files"
}
subtest "many files" many_files
finish
