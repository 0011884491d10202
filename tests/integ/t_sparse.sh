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
. "$(dirname "$0")/sparse.sh"

sparse_setup $((4 * 1024 * 1024 * 1024))

# restore_check DIR SRC MAX WHAT: v1 restored into DIR is the source's,
# sparse, and took fewer than MAX bytes of READs from SRC
restore_check() {
	local n
	rm -rf "$1"
	ctl d restore sp/job v1 --to "$1" >/dev/null || fail "$4: restore failed"
	restored "$S" "$1" "$4"
	n=$(reads_served d "$2")
	((n > 0 && n < $3)) ||
		fail "$4: restore read $n bytes of ckptd from $2: the holes moved"
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
runs_check "$S/big" "$T/mnt/sp/job/v1/big" "local copy"
umount_ckptfs "$T/mnt"
ctl d wait sp/job v1 drained --timeout "$(scaled 60)" >/dev/null || fail "v1 did not drain"
ctl d rm sp/job v1 >/dev/null || fail "rm of the local copy failed"
kill9 d
for i in 1 2 3; do
	if [ "$i" = 1 ]; then restart d; else stop_ckptd d; start_ckptd d; fi
	restore_check "$T/r" pfs $((64 * 1024 * 1024)) "PFS, restart $i"
done
mount_ckptfs d "$T/mnt" jobdepth=2
runs_check "$S/big" "$T/mnt/sp/job/v1/big" "PFS copy"
# cp sees a sparse file (st_blocks) and copies its runs (SEEK_DATA)
cp "$T/mnt/sp/job/v1/big" "$T/cp-big" || fail "cp out of ckptfs failed"
cmp "$S/big" "$T/cp-big" || fail "cp out of ckptfs: the copy differs"
(($(blocks "$T/cp-big") < 16 * 1024 * 1024)) ||
	fail "cp out of ckptfs wrote $(blocks "$T/cp-big") bytes: copied dense"
umount_ckptfs "$T/mnt"

stop_ckptd d
finish
