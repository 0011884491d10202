#!/bin/bash
# bench_fuse.sh - the ckptfs benchmark (not a test): it prints figures.
#
# On one disk, in one run: a private ckptd whose store is on that disk, and
# ckptfs mounted over it.
#  1. Sequential write: W writers (4) each dd 1 GiB of 1 MiB writes with
#     conv=fsync into one version through the mount, against the same dd
#     into a directory on the same disk, with oflag=direct and buffered.
#     The FUSE run is done twice: into fresh segment files, then into
#     recycled ones (ckptd reuses freed segments).  The ratio target is
#     >= 0.7 of the direct write.  Time to LOCAL (commit by rename, then
#     `ckptctl wait ... local`) is shown too.
#  2. Trainer stall: np.save (and torch.save, when /usr/bin/python3 can import
#     torch) of a ~1 GiB array/state dict to the mount and to the disk: the
#     time the call takes (what the trainer waits), and with an fsync after.
#
#   CKPT_BUILD         build directory (default build)
#   CKPT_BENCH_DIR     where to work; it must be on the disk to measure
#                      (default /var/tmp/ckpt-bench); this script uses
#                      $CKPT_BENCH_DIR-fuse and removes it afterwards
#   BENCH_FUSE_WRITERS writers (default 4)
#   BENCH_FUSE_MIB     MiB per writer (default 1024)
#   BENCH_FUSE_ARRAY_MIB  size of the saved array (default 1024)
#
# Needs root (FUSE mount with allow_other), fusermount3, and for part 2
# python3-numpy (skipped with a message if missing).
set -u
B=${CKPT_BUILD:-build}
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}-fuse
W=${BENCH_FUSE_WRITERS:-4}
MIB=${BENCH_FUSE_MIB:-1024}
AMIB=${BENCH_FUSE_ARRAY_MIB:-1024}
PY=/usr/bin/python3
JOB=bench-fuse

die() { echo "bench_fuse: $*" >&2; exit 1; }

for b in ckptd ckptctl ckptfs; do
	[ -x "$B/$b" ] || die "$B/$b is not built (make all builds it)"
done
command -v fusermount3 >/dev/null || die "fusermount3 is not installed (Debian package fuse3)"
[ -c /dev/fuse ] || die "/dev/fuse is missing"

rm -rf "$DIR"
mkdir -p "$DIR/direct" "$DIR/mnt" || die "cannot make $DIR"
need=$(( (W * MIB * 2 + AMIB * 6) * 1024 ))          # KiB: store + direct + saves
avail=$(df -k --output=avail "$DIR" | tail -1 | tr -d ' ')
[ "$avail" -gt "$need" ] || die "$DIR has $((avail >> 10)) MiB free, needs $((need >> 10)) MiB"

CKPTD_PID= FS_PID=
cleanup() {
	if awk -v m="$DIR/mnt" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts; then
		fusermount3 -u "$DIR/mnt" 2>/dev/null || fusermount3 -uz "$DIR/mnt" 2>/dev/null
	fi
	for p in $FS_PID $CKPTD_PID; do
		kill "$p" 2>/dev/null
		for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SOCK=$DIR/d/ckptd.sock
mkdir -p "$DIR/d"
"$B/ckptd" -o dir="$DIR/d" -o staging=2G -o staging_client=256M -o keep=100 \
	2>"$DIR/ckptd.log" &
CKPTD_PID=$!
# Deadline polls (20 s): the daemon answers, then the mount is there.
for _ in $(seq 400); do
	kill -0 "$CKPTD_PID" 2>/dev/null || { cat "$DIR/ckptd.log"; die "ckptd exited"; }
	"$B/ckptctl" -s "$SOCK" status >/dev/null 2>&1 && break
	sleep 0.05
done
"$B/ckptctl" -s "$SOCK" status >/dev/null 2>&1 || die "ckptd does not answer"
"$B/ckptfs" -s "$SOCK" "$DIR/mnt" -f 2>"$DIR/ckptfs.log" &
FS_PID=$!
mounted() { awk -v m="$DIR/mnt" '$2 == m && $3 ~ /^fuse/ { f = 1 } END { exit !f }' /proc/self/mounts; }
for _ in $(seq 400); do
	kill -0 "$FS_PID" 2>/dev/null || { cat "$DIR/ckptfs.log"; die "ckptfs exited"; }
	mounted && break
	sleep 0.05
done
mounted || die "ckptfs did not mount $DIR/mnt"
M=$DIR/mnt
mkdir "$M/$JOB" || die "mkdir $M/$JOB"

now() { local t=${EPOCHREALTIME/./}; echo "$t"; }           # microseconds
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }
rate() { awk -v s="$1" -v m="$2" 'BEGIN { printf "%.2f", m * 1048576 / s / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
quiesce() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	return 0
}

# writers DIR DDARGS...: W dd's of MIB MiB each into DIR in parallel; SECS
# is the seconds until the last one is done.
writers() {
	local dir=$1 t0 t1 i pids=() bad=0
	shift
	quiesce
	t0=$(now)
	for ((i = 0; i < W; i++)); do
		dd if=/dev/zero of="$dir/w$i" bs=1M count="$MIB" status=none "$@" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || bad=1; done
	t1=$(now)
	[ "$bad" = 0 ] || die "a dd into $dir failed"
	SECS=$(secs "$t0" "$t1")
}

# fuse_run VER: the FUSE write into VER.tmp (SECS), then commit and wait for
# LOCAL (COMMIT_SECS).
fuse_run() {
	local v=$1 t0 t1
	mkdir "$M/$JOB/$v.tmp" || die "mkdir $v.tmp"
	writers "$M/$JOB/$v.tmp" conv=fsync
	t0=$(now)
	mv "$M/$JOB/$v.tmp" "$M/$JOB/$v" || die "commit of $v"
	"$B/ckptctl" -s "$SOCK" wait "$JOB" "$v" local --timeout 600 >/dev/null ||
		die "$v did not reach LOCAL"
	t1=$(now)
	COMMIT_SECS=$(secs "$t0" "$t1")
}

TOTAL=$((W * MIB))
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus; $DIR on $(df -h "$DIR" | awk 'NR==2{print $1}')"
echo "# sequential write: $W writers x $MIB MiB, dd bs=1M conv=fsync"

writers "$DIR/direct" oflag=direct conv=fsync
s_odirect=$SECS
rm -f "$DIR"/direct/w*
writers "$DIR/direct" conv=fsync
s_buf=$SECS
rm -f "$DIR"/direct/w*
fuse_run seq1
s_fuse1=$SECS s_commit1=$COMMIT_SECS
"$B/ckptctl" -s "$SOCK" rm "$JOB" seq1 >/dev/null || die "ckptctl rm seq1"
fuse_run seq2
s_fuse2=$SECS s_commit2=$COMMIT_SECS
"$B/ckptctl" -s "$SOCK" rm "$JOB" seq2 >/dev/null || die "ckptctl rm seq2"

r_od=$(rate "$s_odirect" "$TOTAL")
r_buf=$(rate "$s_buf" "$TOTAL")
best=$r_od
awk -v a="$r_buf" -v b="$r_od" 'BEGIN { exit !(a > b) }' && best=$r_buf
printf '%-44s %8s %9s %12s\n' "" "seconds" "GB/s" "ratio"
printf '%-44s %8s %9s %12s\n' "disk, dd oflag=direct" "$s_odirect" "$r_od" ""
printf '%-44s %8s %9s %12s\n' "disk, dd buffered" "$s_buf" "$r_buf" ""
for run in 1 2; do
	if [ $run = 1 ]; then s=$s_fuse1 c=$s_commit1 what="fresh segments"; else s=$s_fuse2 c=$s_commit2 what="recycled segments"; fi
	r=$(rate "$s" "$TOTAL")
	printf '%-44s %8s %9s %12s\n' "ckptfs ($what)" "$s" "$r" \
		"$(ratio "$r" "$r_od") of direct"
	printf '%-44s %8s %9s %12s\n' "ckptfs ($what) + commit to LOCAL" \
		"$(awk -v a="$s" -v b="$c" 'BEGIN { printf "%.3f", a + b }')" \
		"$(rate "$(awk -v a="$s" -v b="$c" 'BEGIN { print a + b }')" "$TOTAL")" ""
done
echo "# target: ckptfs >= 0.70 of the direct (O_DIRECT) write; best disk figure $best GB/s"
echo "# (dd writes new files; ckptd's second run overwrites its recycled, preallocated segments)"

# ---- stall of np.save / torch.save -------------------------------------------
echo
echo "# trainer stall: save of a $AMIB MiB array to the mount vs the disk"
if ! "$PY" -c 'import numpy' 2>/dev/null; then
	echo "# skipped: $PY cannot import numpy (Debian package python3-numpy)"
	exit 0
fi
mkdir -p "$DIR/stall" "$M/$JOB/stall.tmp" || die "mkdir for the stall part"
"$PY" - "$DIR/stall" "$M/$JOB/stall.tmp" "$AMIB" <<'EOF' || die "the stall part failed"
import os, sys, time
import numpy as np
disk, mnt, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = np.random.default_rng(1).random(mib << 18, dtype=np.float32)   # mib MiB
def quiesce():
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")
    except OSError:
        pass
def timed(save, path):
    quiesce()
    t0 = time.monotonic()
    save(path)
    t1 = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    t2 = time.monotonic()
    return t1 - t0, t2 - t0
savers = [("np.save", "a.npy", lambda p: np.save(p, a))]
try:
    import torch
    sd = {"weight": torch.from_numpy(a)}
    savers.append(("torch.save", "a.pt", lambda p: torch.save(sd, p)))
except ImportError:
    print("# torch.save skipped: cannot import torch (Debian package python3-torch)")
print("%-30s %10s %10s %8s" % ("", "disk s", "ckptfs s", "ratio"))
for name, fname, save in savers:
    d, dsync = timed(save, os.path.join(disk, fname))
    m, msync = timed(save, os.path.join(mnt, fname))
    print("%-30s %10.3f %10.3f %8.2f" % (name + " (the call)", d, m, m / d))
    print("%-30s %10.3f %10.3f %8.2f" % (name + " + fsync", dsync, msync, msync / dsync))
EOF
t0=$(now)
mv "$M/$JOB/stall.tmp" "$M/$JOB/stall" || die "commit of stall"
"$B/ckptctl" -s "$SOCK" wait "$JOB" stall local --timeout 600 >/dev/null || die "stall did not reach LOCAL"
echo "# commit (mv stall.tmp stall) to LOCAL afterwards: $(secs "$t0" "$(now)") s"
