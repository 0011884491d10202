#!/bin/bash
# t_fuse_cutshort: a writer that dies with a file open fails its file, not
# its version.  One ckptd, one mount; four writers of one version, w1..w4,
# each writing 8 MiB of its own pattern in 64 KiB writes:
#  - w2 stops itself half-way and is SIGKILLed; w3 exits 1 half-way with
#    its file open.  Meanwhile w1 and w4 are half-way too; they go on after
#    both deaths and finish without an error.
#  - f2 and f3 stay listed and readable (their first half, byte for byte),
#    each with user.ckpt.failed naming its writer's pid and why; the mount
#    refuses to set or remove that attribute (EPERM); ckptctl ls lists both
#    under "Cut short" (--json: cut_short); both logs name the files.
#  - every commit is refused while they are there: the rename (EIO), the
#    .commit marker (EIO), ckptctl commit (non-zero, "cut short"); the
#    version stays open, its files intact.
#  - huge offsets get EFBIG (pwrite at and past 16 TiB, ftruncate past
#    it, fallocate -o 16T -l 1), a pwrite across 16 TiB writes what fits;
#    nothing fails; fallocate's exit 1 marks its own file only.
#  - f3 is removed and the commit is still refused (f2); f2 is rewritten
#    from offset 0 (O_TRUNC): the rename commits it, LOCAL.
#  - v2: eight times a writer of g is SIGKILLed half-way and ckptctl
#    commit is sent as soon as its death is seen: refused each time (the
#    mark is set during the dying close).  Then a forked child sharing g's
#    descriptor is SIGKILLed: g is marked, naming the child, until the
#    parent finishes and closes it; then v2 commits, g whole.
#  - v3, on a mount with autocommit=1: a C API writer joins and marks h in
#    ckptd only: autocommit is refused once per idle period (not in a
#    loop); the mount's O_TRUNC rewrite of h lifts ckptd's mark; the C
#    writer's share commits and autocommit seals v3.
#  - v4: a truncate to 0 voids the mark an open file set: the same open
#    file's later dying close marks again (d1), and another writer's mark
#    is not lifted by the first open file's normal close (d2).
#  - ckptd is SIGKILLed, restarted, restarted cleanly twice more: each time
#    f1, f2 (its new bytes), f4, v2/g and v3/h read back byte for byte, f3
#    is absent.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"

M=$T/mnt
J=cut
V=$M/$J/v1.tmp
MiB=1048576

# writer FILE SEED MODE: 8 MiB of SEED's pattern in 64 KiB writes.  MODE:
# "stop" (SIGSTOP itself after 4 MiB), "fail" (os._exit(1) after 4 MiB,
# the file open), "wait" (after 4 MiB, wait for the file FILE.go to
# exist, then the rest), "all" (straight through).  Exits 0 on success.
_CUT_PY='
import os, signal, sys, time
path, seed, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
block = bytes((i * 7 + seed) % 251 for i in range(65536))
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(128):
    if i == 64:
        if mode == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
        elif mode == "fail":
            os._exit(1)
        elif mode == "wait":
            go = path + ".go"
            deadline = time.time() + 60
            while not os.path.exists(go) and time.time() < deadline:
                time.sleep(0.02)
    os.write(fd, block)
os.close(fd)
'
# same FILE SEED MiB: FILE is MiB MiB of SEED's pattern (its first part).
_SAME_PY='
import sys
path, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
block = bytes((i * 7 + seed) % 251 for i in range(65536))
with open(path, "rb") as f:
    data = f.read()
sys.exit(0 if data == block * (n * 16) else 1)
'
writer() { "$PY" -c "$_CUT_PY" "$@"; }
same() { "$PY" -c "$_SAME_PY" "$@"; }
getx() { "$PY" -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.ckpt.failed").decode())' "$1" 2>/dev/null; }
size_is() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]; }
stopped() { [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = T ]; }
state_is() { [ "$(vstate a "$J" "$1")" = "$2" ]; }

start_ckptd a
mount_ckptfs a "$M"
mkdir -p "$V" || fail "mkdir $V"

# ---- four writers, two die -----------------------------------------------
# (python itself in the background, so that $! is the writer's pid)
"$PY" -c "$_CUT_PY" "$V/f1" 1 wait & w1=$!
"$PY" -c "$_CUT_PY" "$V/f4" 4 wait & w4=$!
"$PY" -c "$_CUT_PY" "$V/f2" 2 stop & w2=$!
poll_until 20 size_is "$V/f1" $((4 * MiB)) || fail "w1 did not write its first half"
poll_until 20 size_is "$V/f4" $((4 * MiB)) || fail "w4 did not write its first half"
poll_until 20 stopped $w2 || fail "w2 did not stop half-way"
kill -KILL $w2
wait $w2 2>/dev/null
writer "$V/f3" 3 fail && fail "w3 exited 0"
w3pid=$(grep -o "file f3 may be cut short: its writer pid [0-9]*" "$T/a/ckptfs.log" | grep -o "[0-9]*$")
marked() { [ -n "$(getx "$V/$1")" ]; }
poll_until 20 marked f2 || fail "f2 has no user.ckpt.failed after w2's SIGKILL: $(tail -3 "$T/a/ckptfs.log")"
poll_until 20 marked f3 || fail "f3 has no user.ckpt.failed after w3's exit 1"
touch "$V/f1.go" "$V/f4.go"
wait $w1 || fail "w1 failed after the others died"
wait $w4 || fail "w4 failed after the others died"
rm -f "$V/f1.go" "$V/f4.go"
info "w2 killed, w3 exited 1; w1 and w4 finished"

# ---- the cut files: kept, readable, marked ---------------------------------
case $(getx "$V/f2") in "pid $w2 killed by signal 9") ;; *) fail "f2's mark: '$(getx "$V/f2")'" ;; esac
case $(getx "$V/f3") in "pid "*" exited with status 1"|"pid "*" exit"*) ;; *) fail "f3's mark: '$(getx "$V/f3")'" ;; esac
grep -q "file f2 may be cut short: its writer pid $w2 killed by signal 9" "$T/a/ckptfs.log" ||
	fail "the ckptfs log does not name f2 and its writer"
[ -n "$w3pid" ] || fail "the ckptfs log does not name f3's writer"
same "$V/f2" 2 4 || fail "f2 is not w2's first 4 MiB"
same "$V/f3" 3 4 || fail "f3 is not w3's first 4 MiB"
same "$V/f1" 1 8 || fail "f1 is not w1's 8 MiB"
same "$V/f4" 4 8 || fail "f4 is not w4's 8 MiB"
"$PY" -c 'import os, sys; os.removexattr(sys.argv[1], "user.ckpt.failed")' "$V/f2" 2>/dev/null &&
	fail "removing user.ckpt.failed by hand succeeded"
"$PY" -c 'import errno, os, sys
try:
    os.setxattr(sys.argv[1], "user.ckpt.failed", b"x")
except OSError as e:
    sys.exit(0 if e.errno == errno.EPERM else 1)
sys.exit(1)' "$V/f1" || fail "setting user.ckpt.failed by hand was not EPERM"
ctl a ls $J v1 >"$T/ls.out" || fail "ckptctl ls $J v1"
grep -q "^Cut short" "$T/ls.out" || fail "ckptctl ls has no 'Cut short' list: $(cat "$T/ls.out")"
grep -qE "^  f2: pid $w2 killed by signal 9" "$T/ls.out" || fail "ckptctl ls: $(cat "$T/ls.out")"
grep -qE "^  f3: pid " "$T/ls.out" || fail "ckptctl ls does not list f3: $(cat "$T/ls.out")"
grep -qE "^  f[14]:" "$T/ls.out" && fail "ckptctl ls lists a whole file as cut short"
ncut=$(ctl a --json ls $J v1 | "$PY" -c 'import json, sys; print(sum(1 for f in json.load(sys.stdin)["files"] if "cut_short" in f))')
[ "$ncut" = 2 ] || fail "ckptctl --json ls: $ncut files cut_short, want 2"

# ---- every commit refused ------------------------------------------------------
expect_errno EIO rename "$V" "$M/$J/v1"
expect_errno EIO create "$V/.commit"
out=$(ctl a commit $J v1 2>&1) && fail "ckptctl commit succeeded: $out"
case $out in *"cut short"*) ;; *) fail "ckptctl commit: $out" ;; esac
grep -q "version $J/v1: commit (.*) refused: file f[23] may be cut short" "$T/a/ckptfs.log" ||
	fail "the ckptfs log does not name the file at the refusal"
grep -q "version $J/v1: commit (by name, .*) refused: f[23] may be cut short" "$T/a/ckptd.log" ||
	fail "ckptd's log does not name the file at the refusal"
state_is v1 open || fail "v1 is $(vstate a $J v1) after the refusals"
same "$V/f1" 1 8 || fail "f1 changed after the refusals"

# ---- huge offsets: the errno POSIX names, nothing failed -------------------------
"$PY" -c '
import errno, os, sys
MAX = 1 << 44      # CKPT_FILE_MAX
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
def refused(what, want, f, *a):
    try:
        f(*a)
    except OSError as e:
        if e.errno != want:
            sys.exit("%s: %s, want %s" % (what, errno.errorcode[e.errno], errno.errorcode[want]))
        return
    sys.exit(what + " succeeded")
refused("pwrite at 16 TiB", errno.EFBIG, os.pwrite, fd, b"x", MAX)
refused("pwrite at 2^62", errno.EFBIG, os.pwrite, fd, b"x", 1 << 62)
refused("ftruncate past 16 TiB", errno.EFBIG, os.ftruncate, fd, MAX + 1)
n = os.pwrite(fd, b"abcd", MAX - 2)
if n != 2:
    sys.exit("a pwrite across 16 TiB wrote %d bytes, want 2" % n)
os.ftruncate(fd, 0)
os.pwrite(fd, b"small", 0)
os.close(fd)
' "$V/f5" || fail "huge offsets through the mount"
err=$(fallocate -o 16T -l 1 "$V/f6" 2>&1) && fail "fallocate -o 16T -l 1 succeeded"
case $err in *"too large"*) ;; *) fail "fallocate -o 16T -l 1: $err" ;; esac
state_is v1 open || fail "v1 is $(vstate a $J v1) after the huge offsets"
same "$V/f1" 1 8 || fail "f1 changed after the huge offsets"
[ "$(cat "$V/f5")" = small ] || fail "f5 is not what was written after the refusals"
# fallocate exited 1 with f6 open: f6 (only) is cut short.
poll_until 10 marked f6 || fail "f6 is not marked after fallocate's exit 1"
marked f5 && fail "f5 is marked cut short"
rm "$V/f6" "$V/f5" || fail "rm f5 f6"
info "huge offsets: EFBIG, a short write across 16 TiB; fallocate's exit 1 cut f6 only"

# ---- removed and rewritten: committed ----------------------------------------------
rm "$V/f3" || fail "rm f3"
expect_errno EIO rename "$V" "$M/$J/v1"
writer "$V/f2" 22 all || fail "rewriting f2"
[ -z "$(getx "$V/f2")" ] || fail "f2 is still marked after its rewrite: $(getx "$V/f2")"
mv "$V" "$M/$J/v1" || fail "the commit after the rewrite failed: $(tail -3 "$T/a/ckptfs.log")"
ctl a wait $J v1 local --timeout 30 >/dev/null || fail "v1 did not reach LOCAL"
info "refused while f2 and f3 were cut short; committed once f3 was removed and f2 rewritten"

# ---- the mark is there before the death can be seen --------------------------
# Each round rewrites g from offset 0 (which lifts the last round's mark),
# the writer is SIGKILLed half-way, and ckptctl commit is sent as soon as
# wait(1) returns: it must find g marked, every time.
V2=$M/$J/v2.tmp
mkdir -p "$V2" || fail "mkdir $V2"
for r in 1 2 3 4 5 6 7 8; do
	"$PY" -c "$_CUT_PY" "$V2/g" $r stop & w=$!
	poll_until 20 stopped $w || fail "round $r: the writer did not stop half-way"
	kill -KILL $w
	wait $w 2>/dev/null
	out=$(ctl a commit $J v2 2>&1) &&
		fail "round $r: ckptctl commit right after the writer's SIGKILL sealed v2 with g cut short: $out"
	case $out in *"cut short"*) ;; *) fail "round $r: ckptctl commit: $out" ;; esac
	case $(getx "$V2/g") in "pid $w killed by signal 9") ;; *) fail "round $r: g's mark: '$(getx "$V2/g")'" ;; esac
done
info "8 rounds: a commit by name right after the writer's death was refused each time"

# ---- a forked child dies with the file open; its parent goes on ---------------
# The child's dying close marks g; the parent's own close, which follows,
# is the writer's verdict: the mark goes and the version commits.
"$PY" -c '
import os, signal, sys
path = sys.argv[1]
block = bytes((i * 7 + 40) % 251 for i in range(65536))
fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
for i in range(64):
    os.write(fd, block)
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(pid, 0)
try:
    why = os.getxattr(path, "user.ckpt.failed").decode()
except OSError:
    sys.exit("g is not marked once the child that shared its descriptor was seen dead")
if why != "pid %d killed by signal 9" % pid:
    sys.exit("the mark names %r, not the child %d" % (why, pid))
for i in range(64):
    os.write(fd, block)
os.close(fd)
try:
    os.getxattr(path, "user.ckpt.failed")
    sys.exit("g is still marked after its writer closed it normally")
except OSError:
    pass
' "$V2/g" || fail "a forked child's death"
ctl a commit $J v2 >/dev/null || fail "ckptctl commit of v2 after the parent's close: $(tail -3 "$T/a/ckptd.log")"
ctl a wait $J v2 local --timeout 30 >/dev/null || fail "v2 did not reach LOCAL after ckptctl commit: $(vstate a $J v2)"
# (the mount follows a commit by name within a second: hk_poll)
poll_until 10 test -e "$M/$J/v2/g" || fail "v2/g does not show in the mount after the commit by name"
same "$M/$J/v2/g" 40 8 || fail "v2/g is not the parent's 8 MiB"
umount_ckptfs "$M"
info "a forked child's death marked g until its parent closed it; v2 committed whole"

# ---- a mark ckptd holds alone (set through the C API) ---------------------------
# autocommit asks once per idle period, never in a loop; the mount's
# truncate to 0 lifts ckptd's mark (which the mirror never saw); then the
# C writer's share and the mount's commit.
mount_ckptfs a "$M" autocommit=1
V3=$M/$J/v3.tmp
mkdir -p "$V3" || fail "mkdir $V3"
writer "$V3/h" 5 all || fail "writing h"
"$BUILD/tests/ckpt_ns" "$(sock a)" cutmark $J v3 h "$T/go3" >"$T/cm.out" 2>&1 & ns=$!
poll_until 20 grep -q marked "$T/cm.out" || fail "ckpt_ns cutmark: $(cat "$T/cm.out")"
refusals() { grep -c "version $J/v3: commit (.*) refused by ckptd" "$T/a/ckptfs.log"; }
two_refusals() { [ "$(refusals)" -ge 2 ]; }
poll_until 30 two_refusals || fail "autocommit never asked ckptd about v3: $(tail -3 "$T/a/ckptfs.log")"
n=$(refusals)
[ "$n" -le 4 ] || fail "autocommit asked $n times in a row for v3 (a loop)"
state_is v3 open || fail "v3 is $(vstate a $J v3) after autocommit's refusals"
writer "$V3/h" 6 all || fail "rewriting h"
touch "$T/go3"
wait $ns || fail "ckpt_ns cutmark: $(cat "$T/cm.out")"
ctl a wait $J v3 local --timeout 30 >/dev/null || fail "autocommit did not commit v3 after the rewrite of h: $(vstate a $J v3)"
same "$M/$J/v3/h" 6 8 || fail "v3/h is not its rewrite"
umount_ckptfs "$M"
info "a mark ckptd held alone: autocommit refused $n times, not in a loop; lifted by the mount's truncate to 0"

# ---- a mark a truncate to 0 lifted is void for the open file that set it -------
mount_ckptfs a "$M"
V4=$M/$J/v4.tmp
mkdir -p "$V4" || fail "mkdir $V4"
# d1: one open file: its forked child dies (marked), ftruncate to 0 lifts
# the mark, the writer writes again and is SIGKILLed: marked again.
"$PY" -c '
import os, signal, sys
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"A" * 65536)
c = os.fork()
if c == 0:
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(c, 0)
os.getxattr(p, "user.ckpt.failed")
os.ftruncate(fd, 0)
try:
    os.getxattr(p, "user.ckpt.failed")
    sys.exit("d1 is still marked after ftruncate to 0")
except OSError:
    pass
for i in range(8):
    os.write(fd, b"B" * 65536)
os.kill(os.getpid(), signal.SIGKILL)
' "$V4/d1" & w=$!
wait $w
case $(getx "$V4/d1") in "pid $w killed by signal 9") ;; *) fail "d1: killed after a truncate lifted its child's mark, it is marked '$(getx "$V4/d1")'" ;; esac
# d2: P1's child dies (P1's open file marks d2); P2 rewrites d2 (O_TRUNC
# lifts that) and is SIGKILLed (P2's mark); P1's normal close must not
# lift P2's mark.
"$PY" -c '
import os, signal, sys, time
p, go = sys.argv[1], sys.argv[2]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"A" * 65536)
c = os.fork()
if c == 0:
    os.kill(os.getpid(), signal.SIGKILL)
os.waitpid(c, 0)
print("child dead", flush=True)
deadline = time.time() + 60
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.02)
os.close(fd)
' "$V4/d2" "$T/go4" >"$T/p1.out" & p1=$!
poll_until 20 grep -q "child dead" "$T/p1.out" || fail "d2: P1's child did not die"
marked_v4() { [ -n "$(getx "$V4/$1")" ]; }
marked_v4 d2 || fail "d2 is not marked after P1's child died"
"$PY" -c "$_CUT_PY" "$V4/d2" 7 stop & p2=$!
poll_until 20 stopped $p2 || fail "d2: P2 did not stop half-way"
kill -KILL $p2
wait $p2 2>/dev/null
touch "$T/go4"
wait $p1 || fail "d2: P1 failed"
case $(getx "$V4/d2") in "pid $p2 killed by signal 9") ;; *) fail "d2: after P1's normal close, its mark is '$(getx "$V4/d2")', want P2's" ;; esac
out=$(ctl a commit $J v4 2>&1) && fail "ckptctl commit sealed v4 with d1 and d2 cut short: $out"
# An exec while a file is open for writing, close-on-exec (Python's
# default): the exec's FLUSH must not wait on /proc for the exec itself.
timeout 30 "$PY" -c '
import os, sys
f = open(sys.argv[1], "wb")
f.write(b"x" * 4096)
f.flush()
if os.system("true") != 0:
    sys.exit("os.system failed")
f.write(b"y")
f.close()
' "$V4/e1" || fail "os.system with a file open for writing hung or failed (exit $?)"
[ -z "$(getx "$V4/e1")" ] || fail "e1 is marked after an exec: $(getx "$V4/e1")"
[ "$(stat -c %s "$V4/e1")" = 4097 ] || fail "e1 is $(stat -c %s "$V4/e1") bytes"
rm "$V4/e1" || fail "rm e1"
rm "$V4/d1" "$V4/d2" || fail "rm d1 d2"
umount_ckptfs "$M"
info "a mark lifted by a truncate to 0 is void: d1 marked at its writer's death, d2 kept P2's mark after P1's normal close"

# ---- SIGKILL, then two clean restarts ---------------------------------------------------
check() {    # ROUND
	mount_ckptfs a "$M"
	same "$M/$J/v1/f1" 1 8 || fail "$1: f1"
	same "$M/$J/v1/f2" 22 8 || fail "$1: f2"
	same "$M/$J/v1/f4" 4 8 || fail "$1: f4"
	[ ! -e "$M/$J/v1/f3" ] || fail "$1: f3 came back"
	[ -z "$(getx "$M/$J/v1/f2")" ] || fail "$1: f2 is marked"
	same "$M/$J/v2/g" 40 8 || fail "$1: v2/g"
	same "$M/$J/v3/h" 6 8 || fail "$1: v3/h"
	umount_ckptfs "$M"
}
restart a
check "after SIGKILL"
for r in 1 2; do
	stop_ckptd a
	start_ckptd a
	check "clean restart $r"
done
check_sanitizers a
stop_ckptd a
