#!/bin/bash
# bench_smallfiles.sh [BUILD] - not a test: N (3000) files of 4 KiB created
# through a private ckptd + ckptfs (one version each round, 3 rounds), the
# time per file (open, write, close: the close's flush and the dying-close
# probe included).  For an A/B, run it on two builds one after the other,
# alternating.  Needs root (FUSE) and /usr/bin/python3.  Works in
# $CKPT_BENCH_DIR-sf (default /var/tmp/ckpt-bench-sf), removed before and after.
B=${1:-build}; N=${N:-3000}; D=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}-sf
fusermount3 -u $D/mnt 2>/dev/null; pkill -f "ckptd -o dir=$D" ; rm -rf $D; mkdir -p $D/st $D/mnt
$B/ckptd -o dir=$D/st -o staging=1G -o staging_client=256M 2>$D/d.log & DP=$!
for i in $(seq 200); do $B/ckptctl -s $D/st/ckptd.sock status >/dev/null 2>&1 && break; sleep 0.05; done
$B/ckptfs -s $D/st/ckptd.sock $D/mnt -f 2>$D/f.log & FP=$!
for i in $(seq 200); do mountpoint -q $D/mnt && break; sleep 0.05; done
mkdir $D/mnt/j
for r in 1 2 3; do
/usr/bin/python3 - $D/mnt/j/v$r $N <<'PY'
import os,sys,time
d=sys.argv[1]; n=int(sys.argv[2]); os.mkdir(d); b=b'x'*4096
t=time.perf_counter()
for i in range(n):
    with open(f"{d}/f{i}","wb") as f: f.write(b)
e=time.perf_counter()-t
print(f"{n} files: {e:.3f} s, {e/n*1e6:.1f} us/file")
PY
done
fusermount3 -u $D/mnt; kill $DP; wait; rm -rf $D
