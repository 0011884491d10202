#!/bin/bash
# make demo: the whole product on one node, with built-in defaults.
#
# Starts ckptd with no config file (state under /var/lib/ckpt, or under
# $CKPT_DEMO_DIR), the only override being a drain target (a directory that
# stands in for the parallel file system).  Then:
#  1. four processes write a multi-file checkpoint at once through the C API
#     and wait for LOCAL;
#  2. a plain `cp -r` and numpy write a second checkpoint through the FUSE
#     mount (ckptfs), committed by renaming VER.tmp to VER;
#  3. both drain to the "PFS" (DRAINED);
#  4. ckptd is killed with SIGKILL and restarted; `ckptctl restore latest`
#     gives back the newest checkpoint, compared byte for byte;
#  5. a second ckptd with an empty store (a replacement node) restores the
#     first checkpoint from the PFS alone, byte for byte;
# and shows `ckptctl status`.  Afterwards it removes what it wrote: the whole
# state directory if the demo made it, else its two versions (local and PFS
# copies), saying what is left and how large.
set -u
B=${CKPT_BUILD:-build}
DIR=${CKPT_DEMO_DIR:-/var/lib/ckpt}
OUT=$(mktemp -d /tmp/ckpt-demo.XXXXXX)
LOG=$OUT/ckptd.log
PFS=$DIR/pfs
MNT=$OUT/ckpt
ARGS=(-o "dir=$DIR" -o "drain.target=$PFS")
export CKPT_SOCKET=$DIR/ckptd.sock
PID= PID2= FPID=
MADE_DIR=0
[ -e "$DIR" ] || MADE_DIR=1

cleanup() {
	[ -n "$FPID" ] && { fusermount3 -u "$MNT" 2>/dev/null; wait "$FPID" 2>/dev/null; }
	for p in $PID $PID2; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$OUT"
	if [ "$MADE_DIR" = 1 ] && [ -d "$DIR" ]; then
		rm -rf "$DIR"
		echo "demo: removed $DIR (the demo made it)"
	elif [ -d "$DIR" ]; then
		echo "demo: left $DIR as it was before, less the demo's versions ($(du -sh "$DIR" 2>/dev/null | cut -f1) now)"
	fi
}
trap cleanup EXIT
die() { echo "demo: $*" >&2; echo "--- ckptd log:" >&2; tail -20 "$LOG" >&2; exit 1; }

# start VAR ARGS...: start a ckptd, poll (deadline) until it answers.
start() {
	local var=$1 sock
	shift
	"$B/ckptd" "$@" 2>>"$LOG" &
	printf -v "$var" %s $!
	sock=$("$B/ckptd" "$@" --print-config | sed -n 's/^socket *= *//p')
	for _ in $(seq 400); do
		kill -0 "${!var}" 2>/dev/null || die "ckptd exited"
		"$B/ckptctl" -s "$sock" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	die "ckptd not ready after 20 s"
}

JOB=demo
V1=step-$(date +%s)-a
V2=step-$(date +%s)-b
echo "== ckptd with built-in defaults (state in $DIR, drain to $PFS)"
mkdir -p "$PFS" && chmod 711 "$PFS"   # the administrator makes the target
start PID "${ARGS[@]}"

echo "== 1. four trainer processes write $JOB/$V1 through the C API"
# All four join the version before any commits (it seals when every writer
# that joined has committed): each writes, then holds before its commit (-p)
# until the fifo it reads closes, once all four are there.
mkfifo "$OUT/go"
exec 3<>"$OUT/go"
W=()
for r in 0 1 2 3; do
	"$B/tests/ckpt_tw" write $JOB "$V1" -r $r -n 3 -z $((16 << 20)) -S 7 -p \
		<"$OUT/go" 3>&- >"$OUT/w$r.out" &
	W+=($!)
done
for _ in $(seq 600); do
	[ "$(cat "$OUT"/w*.out 2>/dev/null | grep -c paused)" = 4 ] && break
	sleep 0.05
done
exec 3>&-
for w in "${W[@]}"; do wait "$w" || die "a writer failed"; done
"$B/ckptctl" wait $JOB "$V1" local --timeout 60 || die "$V1 did not reach LOCAL"

echo "== 2. cp and numpy write $JOB/$V2 through the FUSE mount $MNT"
mkdir -p "$MNT"
"$B/ckptfs" "$MNT" -f 2>>"$LOG" &
FPID=$!
for _ in $(seq 200); do mountpoint -q "$MNT" && break; sleep 0.05; done
mountpoint -q "$MNT" || die "ckptfs did not mount"
mkdir -p "$MNT/$JOB/$V2.tmp" || die "mkdir through the mount"
"$B/tests/ckpt_tw" expect $JOB "$V1" -r 0 -n 3 -z $((16 << 20)) -S 7 -o "$OUT/src"
cp -r "$OUT/src/rank000" "$MNT/$JOB/$V2.tmp/" || die "cp into the mount"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	/usr/bin/python3 -c "import numpy as np; np.save('$MNT/$JOB/$V2.tmp/weights.npy', np.arange(4 << 20, dtype=np.float32))" ||
		die "np.save into the mount"
fi
mv "$MNT/$JOB/$V2.tmp" "$MNT/$JOB/$V2" || die "commit by rename"
ls -l "$MNT/$JOB/$V2"

echo "== 3. both drain to the PFS"
"$B/ckptctl" wait $JOB "$V1" drained --timeout 120 || die "$V1 did not drain"
"$B/ckptctl" wait $JOB "$V2" drained --timeout 120 || die "$V2 did not drain"
fusermount3 -u "$MNT"; wait "$FPID"; FPID=
"$B/ckptctl" ls $JOB

echo "== 4. SIGKILL ckptd, restart it, restore $JOB latest"
kill -9 "$PID"; wait "$PID" 2>/dev/null; PID=
start PID "${ARGS[@]}"
"$B/ckptctl" restore $JOB latest --to "$OUT/restored" || die "restore failed"
diff -r "$OUT/src/rank000" "$OUT/restored/rank000" >/dev/null || die "restored bytes differ"
echo "restored $JOB/$V2: byte for byte"

echo "== 5. a replacement node (empty store, same PFS) restores $JOB/$V1"
start PID2 -o "dir=$OUT/node2" -o "drain.target=$PFS"
"$B/ckptctl" -s "$OUT/node2/ckptd.sock" restore $JOB "$V1" --to "$OUT/from-pfs" ||
	die "restore from the PFS failed"
for r in 0 1 2 3; do
	"$B/tests/ckpt_tw" expect $JOB "$V1" -r $r -n 3 -z $((16 << 20)) -S 7 -o "$OUT/expected"
done
diff -r "$OUT/expected" "$OUT/from-pfs" >/dev/null || die "bytes restored from the PFS differ"
echo "restored $JOB/$V1 from the PFS alone: byte for byte ($(du -sh "$OUT/from-pfs" | cut -f1))"

echo "== ckptctl status"
"$B/ckptctl" status

echo "== removing the demo's versions"
# Each rm twice: the first drops the local copy, the second the PFS copy.
for v in "$V1" "$V2"; do
	"$B/ckptctl" rm $JOB "$v" && "$B/ckptctl" rm $JOB "$v"
done
echo "demo: OK"
