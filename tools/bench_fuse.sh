#!/bin/bash
# bench_fuse.sh - the ckptfs benchmark (not a test): it prints figures.
#
# On one disk, in one run: a private ckptd whose store is on that disk, and
# ckptfs mounted over it.
#  1. Sequential write: W writers (4) each dd 512 MiB of 1 MiB writes with
#     conv=fsync into one version through the mount, against the same dd
#     into a directory on the same disk with oflag=direct, in
#     $(bench_reps) rounds (tools/bench_lib.sh), each FUSE run into the
#     segments the previous round freed (ckptd recycles them).  Ratio:
#     direct time / ckptfs time, goal >= 0.9.  Time to LOCAL (commit by
#     rename, then `ckptctl wait ... local`) is shown too.  Each round
#     also runs the same dd's through nullfs -o copy (tools/nullfs: a FUSE
#     file system that keeps no bytes and copies each write once, as ckptfs
#     does into staging), the ceiling of a FUSE mount on this machine, for
#     two reference rows: nullfs time / ckptfs time (how near ckptfs comes
#     to that ceiling) and direct time / nullfs time (whether a FUSE mount
#     can reach the goal here at all).  Skipped if nullfs is not built.
#  2. Trainer stall: np.save (and torch.save, when /usr/bin/python3 can import
#     torch) of a ~1 GiB array/state dict to the mount and to the disk: the
#     time the call takes (what the trainer waits), and with an fsync after.
#
#   CKPT_BUILD         build directory (default build)
#   CKPT_BENCH_DIR     where to work; it must be on the disk to measure
#                      (default /var/tmp/ckpt-bench); this script uses
#                      $CKPT_BENCH_DIR-fuse and removes it afterwards
#   BENCH_FUSE_WRITERS writers (default 4)
#   BENCH_FUSE_MIB     MiB per writer (default 512)
#   CKPT_BENCH_REPS    rounds (default and minimum 5)
#   BENCH_FUSE_ARRAY_MIB  size of the saved array (default 1024)
#
# Needs root (FUSE mount with allow_other), fusermount3, and for part 2
# python3-numpy (skipped with a message if missing).
set -u
B=${CKPT_BUILD:-build}
DIR=${CKPT_BENCH_DIR:-/var/tmp/ckpt-bench}-fuse
W=${BENCH_FUSE_WRITERS:-4}
MIB=${BENCH_FUSE_MIB:-512}
AMIB=${BENCH_FUSE_ARRAY_MIB:-1024}
PY=/usr/bin/python3
JOB=bench-fuse
. "$(dirname "$0")/bench_lib.sh"

die() { echo "bench_fuse: $*" >&2; exit 1; }

for b in ckptd ckptctl ckptfs; do
	[ -x "$B/$b" ] || die "$B/$b is not built (make all builds it)"
done
command -v fusermount3 >/dev/null || die "fusermount3 is not installed (Debian package fuse3)"
[ -c /dev/fuse ] || die "/dev/fuse is missing"

rm -rf "$DIR"
mkdir -p "$DIR/direct" "$DIR/mnt" || die "cannot make $DIR"
need=$(( (W * MIB * 3 + AMIB * 6) * 1024 ))          # KiB: two stores + direct + saves
avail=$(df -k --output=avail "$DIR" | tail -1 | tr -d ' ')
[ "$avail" -gt "$need" ] || die "$DIR has $((avail >> 10)) MiB free, needs $((need >> 10)) MiB"

NULL_PID= PIDS=() HUGE_OLD=
NULLFS=$B/tools/nullfs
HUGE_DIR=/sys/kernel/mm/hugepages/hugepages-2048kB
HUGE_POOL=$HUGE_DIR/nr_hugepages
cleanup() {
	local m p
	for m in "$DIR/mnt" "$DIR/mnt4k" "$DIR/null"; do
		awk -v m="$m" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts || continue
		fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
	done
	for p in $NULL_PID "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
		for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -z "$HUGE_OLD" ] || echo "$HUGE_OLD" >"$HUGE_POOL" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The mount's leases on huge pages ([ckptd] staging_hugepages, the default,
# as a node with a huge page pool for staging runs it): the pool of 2 MiB
# pages is grown by the mount's two leases (writing and reading, 256 MiB
# each) for this run and set back afterwards.  Where that cannot be done
# (not root, the kernel short of contiguous memory), the first mount runs
# on 4 KiB pages too, and the line after the rounds says so.
HUGE_PAGES=260
if [ -w "$HUGE_POOL" ]; then
	# Its own pages: surplus ones (in use, over a pool set back) go by
	# themselves once freed, and are not made the pool's for good.
	HUGE_OLD=$(($(cat "$HUGE_POOL") - $(cat "$HUGE_DIR/surplus_hugepages")))
	echo $((HUGE_OLD + HUGE_PAGES)) >"$HUGE_POOL" 2>/dev/null
fi

mounted() { awk -v m="$1" '$2 == m && $3 ~ /^fuse/ { f = 1 } END { exit !f }' /proc/self/mounts; }
# wait_mount NAME PID MNT: deadline poll (20 s) until NAME (PID, logging
# to $DIR/NAME.log) has mounted MNT.
wait_mount() {
	for _ in $(seq 400); do
		kill -0 "$2" 2>/dev/null || { cat "$DIR/$1.log"; die "$1 exited"; }
		mounted "$3" && return 0
		sleep 0.05
	done
	die "$1 did not mount $3"
}
# start_pair NAME MNT CKPTD-OPTION...: a ckptd of its own (store under
# $DIR/NAME, the same configuration for both but for the options given)
# and ckptfs mounted over it at MNT.
start_pair() {
	local name=$1 mnt=$2 sock=$DIR/$1/ckptd.sock pid o opts=()
	shift 2
	for o in "$@"; do opts+=(-o "$o"); done
	mkdir -p "$DIR/$name" "$mnt"
	"$B/ckptd" -o dir="$DIR/$name" -o staging=2G -o staging_client=256M -o keep=100 \
		"${opts[@]}" 2>"$DIR/ckptd-$name.log" &
	pid=$!
	PIDS+=("$pid")
	# Deadline poll (20 s): the daemon answers.
	for _ in $(seq 400); do
		kill -0 "$pid" 2>/dev/null || { cat "$DIR/ckptd-$name.log"; die "ckptd $name exited"; }
		"$B/ckptctl" -s "$sock" status >/dev/null 2>&1 && break
		sleep 0.05
	done
	"$B/ckptctl" -s "$sock" status >/dev/null 2>&1 || die "ckptd $name does not answer"
	"$B/ckptfs" -s "$sock" "$mnt" -f 2>"$DIR/ckptfs-$name.log" &
	PIDS+=("$!")
	wait_mount "ckptfs-$name" "$!" "$mnt"
	mkdir "$mnt/$JOB" || die "mkdir $mnt/$JOB"
}
SOCK=$DIR/d/ckptd.sock
SOCK4K=$DIR/d4k/ckptd.sock
start_pair d "$DIR/mnt"
start_pair d4k "$DIR/mnt4k" staging_hugepages=no
if [ -x "$NULLFS" ]; then
	mkdir -p "$DIR/null"
	"$NULLFS" -o copy "$DIR/null" 2>"$DIR/nullfs.log" &
	NULL_PID=$!
	wait_mount nullfs "$NULL_PID" "$DIR/null"
else
	echo "# $NULLFS is not built (make $NULLFS): no FUSE-ceiling rows"
fi
M=$DIR/mnt
M4K=$DIR/mnt4k

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

# lease_kps PID: the page sizes (KernelPageSize, kB) of the staging leases
# process PID maps.
lease_kps() {
	awk '/ckpt-staging/ { s = 1; next } s && /^KernelPageSize:/ { printf "%s ", $2; s = 0 }' "/proc/$1/smaps"
}
# fuse_run MNT SOCK VER FSPID: the FUSE write into VER.tmp (SECS; KPS, the
# page sizes of the leases ckptfs FSPID maps right after it), then commit
# and wait for LOCAL (COMMIT_SECS).
fuse_run() {
	local m=$1 sock=$2 v=$3 t0 t1
	mkdir "$m/$JOB/$v.tmp" || die "mkdir $v.tmp"
	writers "$m/$JOB/$v.tmp" conv=fsync
	KPS=$(lease_kps "$4")
	t0=$(now)
	mv "$m/$JOB/$v.tmp" "$m/$JOB/$v" || die "commit of $v"
	"$B/ckptctl" -s "$sock" wait "$JOB" "$v" local --timeout 600 >/dev/null ||
		die "$v did not reach LOCAL"
	t1=$(now)
	COMMIT_SECS=$(secs "$t0" "$t1")
}

TOTAL=$((W * MIB))
N=$(bench_reps)
echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus; $DIR on $(df -h "$DIR" | awk 'NR==2{print $1}')"
echo "# sequential write: $W writers x $MIB MiB, dd bs=1M conv=fsync, $N repetitions"
if [ -n "$HUGE_OLD" ]; then
	granted="granted: $(($(cat "$HUGE_POOL") - HUGE_OLD))"
else
	granted="not root: not grown"
fi
echo "# ckptfs: staging_hugepages = yes, the pool of 2 MiB pages grown by $HUGE_PAGES for the run ($granted); ckptfs 4k: the same with staging_hugepages = no"

# A first run of each into new files and fresh segments (shown, not in the
# ratio), then N rounds of: dd oflag=direct over the disk files of the
# round before (conv=notrunc: allocated extents, as ckptd's recycled
# segments are), and the same through each mount into the segments the
# previous round's version freed.  The rounds take turns over which goes
# first, so that none always runs right after another's writes (as
# tools/bench_drain.sh does with the drain and cp).
writers "$DIR/direct" oflag=direct conv=fsync
s_new=$SECS
fuse_run "$M" "$SOCK" seq0 "${PIDS[1]}"
s_fresh=$SECS
fuse_run "$M4K" "$SOCK4K" seq0 "${PIDS[3]}"
"$B/ckptctl" -s "$SOCK" rm "$JOB" seq0 >/dev/null || die "ckptctl rm seq0"
"$B/ckptctl" -s "$SOCK4K" rm "$JOB" seq0 >/dev/null || die "ckptctl rm seq0 (4k)"
# One of each for a round: their times in s_od, s_f, s_4 and s_n.
direct_round() { writers "$DIR/direct" oflag=direct conv=notrunc,fsync; s_od=$SECS; }
fuse_round() { fuse_run "$M" "$SOCK" "seq$i" "${PIDS[1]}"; s_f=$SECS; c_f=$COMMIT_SECS; k_f=$KPS; }
fuse4k_round() { fuse_run "$M4K" "$SOCK4K" "seq$i" "${PIDS[3]}"; s_4=$SECS; k_4=$KPS; }
null_round() {
	s_n=-
	[ -n "$NULL_PID" ] || return 0
	writers "$DIR/null" conv=fsync
	s_n=$SECS
	rm -f "$DIR"/null/w*
}
ROUND=(direct_round fuse_round fuse4k_round null_round)
ratios=() r4k=() commits=() nulls=() ceil=()
printf '%-6s %10s %10s %10s %10s %8s %8s %10s\n' round "direct s" "ckptfs s" "4k s" "commit s" ratio "4k" "nullfs s"
for ((i = 1; i <= N; i++)); do
	# The four take turns at going first.
	for ((k = 0; k < 4; k++)); do "${ROUND[(i + k) % 4]}"; done
	"$B/ckptctl" -s "$SOCK" rm "$JOB" "seq$i" >/dev/null || die "ckptctl rm seq$i"
	"$B/ckptctl" -s "$SOCK4K" rm "$JOB" "seq$i" >/dev/null || die "ckptctl rm seq$i (4k)"
	r=$(ratio "$s_od" "$s_f")
	ratios+=("$r") commits+=("$c_f") r4k+=("$(ratio "$s_od" "$s_4")")
	if [ "$s_n" != - ]; then
		nulls+=("$(bench_ratio "$s_n" "$s_f")")
		ceil+=("$(bench_ratio "$s_od" "$s_n")")
	fi
	printf '%-6s %10s %10s %10s %10s %8s %8s %10s\n' "$i" "$s_od" "$s_f" "$s_4" "$c_f" "$r" "${r4k[-1]}" "$s_n"
done
echo "# first runs (not in the ratio): dd oflag=direct into new files $s_new s, $(rate "$s_new" "$TOTAL") GB/s; ckptfs into fresh segments $s_fresh s, $(rate "$s_fresh" "$TOTAL") GB/s"
rm -f "$DIR"/direct/w*
bench_row fuse "ckptfs $W x $MIB MiB dd conv=fsync / dd oflag=direct over allocated files" ">= 0.9" "${ratios[@]}"
bench_row fuse4k "(reference) the same, staging_hugepages = no (the mount's lease of 4 KiB pages)" "-" "${r4k[@]}"
if [ ${#nulls[@]} -gt 0 ]; then
	bench_row fuseceil "(reference) nullfs -o copy / ckptfs: the FUSE ceiling" "-" "${nulls[@]}"
	bench_row fuseroom "(reference) dd oflag=direct / nullfs -o copy" "-" "${ceil[@]}"
fi
echo "# commit (mv v.tmp v) to LOCAL after each round, seconds: ${commits[*]}"
echo "# the leases' pages (kB) right after the last round's writes: ckptfs ${k_f:-none}; ckptfs 4k ${k_4:-none}"
# The 4 KiB pair's work is done: it leaves the disk to the stall part.
fusermount3 -u "$M4K" || die "unmount $M4K"
kill "${PIDS[2]}" 2>/dev/null
wait "${PIDS[2]}" 2>/dev/null

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
