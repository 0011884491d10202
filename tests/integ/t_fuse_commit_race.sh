#!/bin/bash
# t_fuse_commit_race: a writer that close()s its file and at once commits
# by rename (VER.tmp -> VER) or by creating VER/.commit is never refused:
# the RELEASE that ends "open for writing" reaches ckptfs after close()
# returns, and the commit waits for it (parallel loops, N commits each).
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
M=$T/mnt
start_ckptd a
mount_ckptfs a "$M"
N=${N:-60}
PY='
import errno, os, sys
m, n, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(m + "/cr" + how, exist_ok=True)
busy = 0
for i in range(n):
    d = "%s/cr%s/v%d.tmp" % (m, how, i)
    os.mkdir(d)
    for k in range(3):
        fd = os.open(d + "/f%d" % k, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"x" * 65536)
        os.close(fd)
    try:
        if how.startswith("rename"):
            os.rename(d, "%s/cr%s/v%d" % (m, how, i))
        else:
            os.close(os.open(d + "/.commit", os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError as e:
        if e.errno != errno.EBUSY: raise
        busy += 1
print("ebusy %d of %d" % (busy, n))
'
# P parallel trainers (each on its own job) make the machine busy enough.
P=${P:-4}
for how in rename marker; do
	pids=()
	for p in $(seq 1 "$P"); do
		timeout 120 /usr/bin/python3 -c "$PY" "$M" "$N" "$how$p" >"$T/out.$how$p" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for p in $(seq 1 "$P"); do
		out=$(cat "$T/out.$how$p")
		info "$how$p: $out"
		case $out in "ebusy 0 "*) ;; *) FAILED="${FAILED:-}$how$p($out) " ;; esac
	done
done
grep "refused" "$T/a/ckptfs.log" | head -n 3
[ -z "${FAILED:-}" ] || fail "a commit right after close() got EBUSY with no file open: $FAILED"
