# sparse.sh - helpers of the tests of sparse files (t_sparse,
# t_cluster_sparse); sourced after lib.sh, not run.

# sparse_setup SIZE: skip without ckptctl; S=$T/src, made by sparse_source.
sparse_setup() {
	has_ctl || skip "ckptctl is not built"
	S=$T/src
	sparse_source "$S" "$1"
}

# sparse_source DIR SIZE: DIR/big, a file of SIZE bytes (> 1 GiB + 106)
# holding three small pieces of data (at 0, at 1 GiB + 100, and its last 5
# bytes), DIR/d/zeros (1 MiB of dense zeros) and DIR/d/empty.
sparse_source() {
	mkdir -p "$1/d"
	truncate -s "$2" "$1/big"
	printf 'head' | dd of="$1/big" conv=notrunc status=none
	printf 'middle' | dd of="$1/big" bs=1 seek=$((1024 * 1024 * 1024 + 100)) conv=notrunc status=none
	printf 'tail.' | dd of="$1/big" bs=1 seek=$(($2 - 5)) conv=notrunc status=none
	dd if=/dev/zero of="$1/d/zeros" bs=64k count=16 status=none
	: >"$1/d/empty"
}

# blocks FILE: the bytes it takes on disk
blocks() { echo $(($(stat -c %b "$1") * 512)); }

# restored SRC DIR WHAT: DIR holds sparse_source SRC's bytes, sparsely
restored() {
	local f
	for f in big d/zeros d/empty; do
		cmp "$1/$f" "$2/$f" || fail "$3: $f differs from the source"
	done
	(($(blocks "$2/big") < 16 * 1024 * 1024)) ||
		fail "$3: the restored big file takes $(blocks "$2/big") bytes: written dense"
	(($(blocks "$2/d/zeros") < 1024 * 1024)) ||
		fail "$3: the restored file of zeros takes $(blocks "$2/d/zeros") bytes"
}

# reads_served NAME SRC: the READ bytes ckptd NAME (configured with
# metrics=127.0.0.1:0) served from SRC (local, owner, shards, pfs) since it
# started, as a scrape of /metrics published after every read made so far:
# a marker version (one part) imported now reaches LOCAL first, and the
# scrape is taken once its count shows (the counters are published whole,
# once a second).
reads_served() {
	local port url n0
	port=$(sed -n 's|.*metrics: serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' \
		"$T/$1/ckptd.log" | tail -1)
	[ -n "$port" ] || fail "$1: no 'metrics: serving' line in the log"
	url=http://127.0.0.1:$port/metrics
	scrape() { curl -sS --max-time 5 "$url"; }
	metric() { scrape | awk -v k="$1" '$1 == k { print $2; exit }'; }
	n0=$(metric 'ckpt_versions_total{level="local"}')
	[ -n "$n0" ] || fail "$1: no ckpt_versions_total in the scrape"
	mkdir -p "$T/mark"
	: >"$T/mark/m"
	# (a subshell: the marker's name from the clock)
	CKPT_NODES=1 ctl "$1" import sp/mark "m$(now_ms)" "$T/mark" >/dev/null ||
		fail "$1: marker import failed"
	marked() { alive "$(ckptd_pid "$1")" && (($(metric 'ckpt_versions_total{level="local"}') > n0)); }
	poll_until 20 marked "$1" || fail "$1: the marker version never showed in /metrics"
	metric "ckpt_read_bytes_total{source=\"$2\"}"
}

# runs_check SRC FILE WHAT: lseek's SEEK_DATA/SEEK_HOLE over FILE (the big
# file through ckptfs) against SRC (sparse_source's big): every byte
# outside the runs is zero in SRC, every byte inside is SRC's, they hold
# a few MiB at most, and st_blocks shows the data only.
runs_check() {
	local b
	b=$(blocks "$2")
	((b < 16 * 1024 * 1024)) || fail "$3: ckptfs shows the big file taking $b bytes (st_blocks): cp would copy it dense"
	/usr/bin/python3 - "$1" "$2" <<'PY' || fail "$3: lseek runs of the big file through ckptfs"
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
