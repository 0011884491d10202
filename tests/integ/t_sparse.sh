#!/bin/bash
# t_sparse: a sparse file stays sparse through ckptctl import, the store,
# the drain and ckptctl restore.  A 4 GiB file holding three small pieces of
# data (at 0, at 1 GiB + 100, and its last 5 bytes), a file of dense zeros,
# and an empty file are imported; the version stores only their data
# (bytes stored << bytes).  Restored from the local copy, then (the local
# copy removed) from the PFS, after a SIGKILL and two clean restarts: the
# bytes are the source's (cmp) and the big file takes a few blocks, not
# 4 GiB (restore leaves 4 KiB blocks of zeros as holes, and sets the size).
#
# The holes are not moved either: restore reads only the runs of data
# ckptd reports (SEEK_DATA), so ckptd's READ bytes (/metrics), from the
# local copy and from the PFS, stay far below 4 GiB.  Through ckptfs,
# lseek's SEEK_DATA/SEEK_HOLE walk the same runs, on the local copy and on
# the PFS copy: every byte outside them is zero in the source, every byte
# inside is the source's, and they hold a few MiB at most; st_blocks shows
# the data only, so cp copies the file sparse.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

has_ctl || skip "ckptctl is not built"
S=$T/src
mkdir -p "$S/d"
truncate -s 4G "$S/big"
printf 'head' | dd of="$S/big" conv=notrunc status=none
printf 'middle' | dd of="$S/big" bs=1 seek=$((1024 * 1024 * 1024 + 100)) conv=notrunc status=none
printf 'tail.' | dd of="$S/big" bs=1 seek=$((4 * 1024 * 1024 * 1024 - 5)) conv=notrunc status=none
dd if=/dev/zero of="$S/d/zeros" bs=64k count=16 status=none
: >"$S/d/empty"

# blocks FILE: the bytes it takes on disk
blocks() { echo $(($(stat -c %b "$1") * 512)); }

# restored DIR WHAT: DIR holds the source's bytes, sparsely
restored() {
	local f
	for f in big d/zeros d/empty; do
		cmp "$S/$f" "$1/$f" || fail "$2: $f differs from the source"
	done
	(($(blocks "$1/big") < 16 * 1024 * 1024)) ||
		fail "$2: the restored 4 GiB file takes $(blocks "$1/big") bytes: written dense"
	(($(blocks "$1/d/zeros") < 1024 * 1024)) ||
		fail "$2: the restored file of zeros takes $(blocks "$1/d/zeros") bytes"
}

# reads_served SRC: the READ bytes ckptd d served from SRC (local, pfs)
# since it started, as a scrape of /metrics published after every read
# made so far: a marker version imported now reaches LOCAL first, and the
# scrape is taken once its count shows (the counters are published whole,
# once a second).
reads_served() {
	local port url n0
	port=$(sed -n 's|.*metrics: serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' \
		"$T/d/ckptd.log" | tail -1)
	[ -n "$port" ] || fail "no 'metrics: serving' line in the log"
	url=http://127.0.0.1:$port/metrics
	scrape() { curl -sS --max-time 5 "$url"; }
	metric() { scrape | awk -v k="$1" '$1 == k { print $2; exit }'; }
	n0=$(metric 'ckpt_versions_total{level="local"}')
	[ -n "$n0" ] || fail "no ckpt_versions_total in the scrape"
	# (a subshell: the marker's name from the clock)
	ctl d import sp/mark "m$(now_ms)" "$S/d" >/dev/null || fail "marker import failed"
	marked() { alive "$(ckptd_pid d)" && (($(metric 'ckpt_versions_total{level="local"}') > n0)); }
	poll_until 20 marked || fail "the marker version never showed in /metrics"
	metric "ckpt_read_bytes_total{source=\"$1\"}"
}

# restore_check DIR SRC MAX WHAT: v1 restored into DIR is the source's,
# sparse, and took fewer than MAX bytes of READs from SRC
restore_check() {
	local n
	rm -rf "$1"
	ctl d restore sp/job v1 --to "$1" >/dev/null || fail "$4: restore failed"
	restored "$1" "$4"
	n=$(reads_served "$2")
	((n > 0 && n < $3)) ||
		fail "$4: restore read $n bytes of ckptd from $2: the holes moved"
}

# runs_check FILE WHAT: lseek's SEEK_DATA/SEEK_HOLE over FILE (the big file
# through ckptfs) against the source
runs_check() {
	local b
	b=$(blocks "$1")
	((b < 16 * 1024 * 1024)) || fail "$2: ckptfs shows the big file taking $b bytes (st_blocks): cp would copy it dense"
	/usr/bin/python3 - "$S/big" "$1" <<'PY' || fail "$2: lseek runs of the big file through ckptfs"
import errno, os, sys
src = os.open(sys.argv[1], os.O_RDONLY)
got = os.open(sys.argv[2], os.O_RDONLY)
size = os.fstat(got).st_size
assert size == os.fstat(src).st_size, size

def zeros_in_source(a, b):
    # every byte of [a, b) of the source is zero (its own data runs read)
    while a < b:
        try:
            d = os.lseek(src, a, os.SEEK_DATA)
        except OSError as e:
            assert e.errno == errno.ENXIO
            return
        if d >= b:
            return
        h = min(os.lseek(src, d, os.SEEK_HOLE), b)
        assert os.pread(src, h - d, d) == bytes(h - d), (d, h)
        a = h

off = data = runs = 0
while off < size:
    try:
        d = os.lseek(got, off, os.SEEK_DATA)
    except OSError as e:
        assert e.errno == errno.ENXIO, e
        zeros_in_source(off, size)
        break
    h = os.lseek(got, d, os.SEEK_HOLE)
    assert off <= d < h <= size, (off, d, h)
    zeros_in_source(off, d)
    assert os.pread(got, h - d, d) == os.pread(src, h - d, d), (d, h)
    data += h - d
    runs += 1
    off = h
assert runs >= 3 and data < 64 << 20, (runs, data)
assert os.lseek(got, size - 1, os.SEEK_HOLE) == size
for bad in (size, size + 4096):
    for w in (os.SEEK_DATA, os.SEEK_HOLE):
        try:
            os.lseek(got, bad, w)
            raise AssertionError("lseek past the end", bad, w)
        except OSError as e:
            assert e.errno == errno.ENXIO, e
print(runs, data)
PY
}

PFS=$T/pfs
drain_conf d -- metrics=127.0.0.1:0
start_ckptd d
ctl d import sp/job v1 "$S" >/dev/null || fail "import failed"
json=$(ctl d ls sp/job --json) || fail "ls failed"
read -r bytes stored < <(/usr/bin/python3 -c '
import json, sys
v = [x for x in json.load(sys.stdin)["versions"] if x["version"] == "v1"][0]
print(v["bytes"], v["stored"])' <<<"$json") || fail "ls --json: $json"
[ "$bytes" = $((4 * 1024 * 1024 * 1024 + 1024 * 1024)) ] || fail "version bytes $bytes"
((stored < 2 * 1024 * 1024)) || fail "import stored $stored bytes of a sparse 4 GiB file and 1 MiB of zeros"
big_data=$(/usr/bin/python3 -c '
import json, sys
print([f for f in json.load(sys.stdin)["files"] if f["path"] == "big"][0]["data"])' \
	< <(ctl d ls sp/job v1 --json)) || fail "ls --json of v1's files"
((big_data > 0 && big_data < 1024 * 1024)) || fail "ls --json: the big file's data is $big_data bytes"
restore_check "$T/r0" local $((16 * 1024 * 1024)) "local copy"
need_fuse
mount_ckptfs d "$T/mnt" jobdepth=2
runs_check "$T/mnt/sp/job/v1/big" "local copy"
umount_ckptfs "$T/mnt"
ctl d wait sp/job v1 drained --timeout "$(scaled 60)" >/dev/null || fail "v1 did not drain"
ctl d rm sp/job v1 >/dev/null || fail "rm of the local copy failed"
kill9 d
for i in 1 2 3; do
	if [ "$i" = 1 ]; then restart d; else stop_ckptd d; start_ckptd d; fi
	restore_check "$T/r" pfs $((64 * 1024 * 1024)) "PFS, restart $i"
done
mount_ckptfs d "$T/mnt" jobdepth=2
runs_check "$T/mnt/sp/job/v1/big" "PFS copy"
# cp sees a sparse file (st_blocks) and copies its runs (SEEK_DATA)
cp "$T/mnt/sp/job/v1/big" "$T/cp-big" || fail "cp out of ckptfs failed"
cmp "$S/big" "$T/cp-big" || fail "cp out of ckptfs: the copy differs"
(($(blocks "$T/cp-big") < 16 * 1024 * 1024)) ||
	fail "cp out of ckptfs wrote $(blocks "$T/cp-big") bytes: copied dense"
umount_ckptfs "$T/mnt"

stop_ckptd d
finish
