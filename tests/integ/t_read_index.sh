#!/bin/bash
# t_read_index: reads of sealed versions go through the read index (one
# extent map per file, newest record wins, built at the first read); reads
# of open versions scan the records.  Both must give the same bytes as a
# model of every write.
#  One file gets 400 random overlapping pwrites (1 B .. 300 KiB, some past
#  the end), a few truncates down and up, and rewrites of the same ranges,
#  through the mount inside an open version; a second file is written in
#  small sequential pieces (many records).  Read back open (scan), then
#  committed (index), then after a SIGKILL restart and two clean restarts
#  (index rebuilt from the manifest), through the mount and ckptctl
#  restore, each compared with the model byte for byte, including
#  reads at random offsets and lengths.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
JOB=ri
M=$T/mnt

sealed() {
	[ "$(ctl r ls "$JOB" 2>/dev/null | awk -v v="$1" '$1 == v { print $2 }')" = sealed ]
}

ckptd_conf r keep=10 staging=256M staging_client=32M
start_ckptd r
mount_ckptfs r "$M"
mkdir -p "$M/$JOB/v1.tmp" || fail "mkdir"

# Write through the mount, keep the model in $T/model.*; then check the
# open version's reads (the scan path) against it.
"$PY" - "$M/$JOB/v1.tmp" "$T" <<'PYEOF' || fail "writing the files failed"
import os, random, sys
d, t = sys.argv[1], sys.argv[2]
rnd = random.Random(20261123)
model = bytearray()
fd = os.open(os.path.join(d, "overlap.bin"), os.O_CREAT | os.O_RDWR, 0o600)
for i in range(400):
    if i % 57 == 56:
        size = rnd.randrange(0, 6 << 20)
        os.ftruncate(fd, size)
        if size < len(model):
            del model[size:]
        else:
            model.extend(b"\0" * (size - len(model)))
        continue
    off = rnd.randrange(0, 5 << 20)
    n = rnd.randrange(1, 300 << 10)
    buf = rnd.randbytes(n)
    os.pwrite(fd, buf, off)
    if off > len(model):
        model.extend(b"\0" * (off - len(model)))
    model[off:off + n] = buf
os.close(fd)
seq = bytearray()
with open(os.path.join(d, "seq.bin"), "wb", buffering=0) as f:
    for i in range(3000):
        b = rnd.randbytes(rnd.randrange(1, 5000))
        f.write(b)
        seq += b
open(os.path.join(t, "model.overlap"), "wb").write(model)
open(os.path.join(t, "model.seq"), "wb").write(seq)
PYEOF

check_reads() {     # DIR WHAT: every file and 300 random ranges vs the model
	"$PY" - "$1" "$T" "$2" <<'PYEOF' || fail "$2: reads differ from the model"
import os, random, sys
d, t, what = sys.argv[1:4]
rnd = random.Random(len(what))
for name in ("overlap", "seq"):
    want = open(os.path.join(t, "model." + name), "rb").read()
    path = os.path.join(d, name + ".bin")
    got = open(path, "rb").read()
    if got != want:
        n = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
        sys.exit(f"{what}: {name}: whole file differs (sizes {len(got)} vs {len(want)}, first difference at {n})")
    fd = os.open(path, os.O_RDONLY)
    for _ in range(300):
        off = rnd.randrange(0, len(want) + 4096)
        n = rnd.randrange(1, 1 << 20)
        if os.pread(fd, n, off) != want[off:off + n]:
            sys.exit(f"{what}: {name}: pread({n}, {off}) differs")
    os.close(fd)
PYEOF
}

check_reads "$M/$JOB/v1.tmp" "open version (scan)"
mv "$M/$JOB/v1.tmp" "$M/$JOB/v1" || fail "commit by rename failed"
poll_until 60 sealed v1 || fail "v1 not sealed"
check_reads "$M/$JOB/v1" "sealed version (index)"

umount_ckptfs "$M"
kill9 r
start_ckptd r
stop_ckptd r
start_ckptd r
stop_ckptd r
start_ckptd r
mount_ckptfs r "$M"
check_reads "$M/$JOB/v1" "after a SIGKILL and two clean restarts"
ctl r restore "$JOB" v1 --to "$T/out" >/dev/null || fail "ckptctl restore failed"
cmp -s "$T/out/overlap.bin" "$T/model.overlap" || fail "restore: overlap.bin differs"
cmp -s "$T/out/seq.bin" "$T/model.seq" || fail "restore: seq.bin differs"
ctl r verify "$JOB" v1 >/dev/null || fail "ckptctl verify failed"
assert_up r
umount_ckptfs "$M"
stop_ckptd r
exit 0
