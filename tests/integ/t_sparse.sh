#!/bin/bash
# t_sparse: a sparse file stays sparse through ckptctl import, the store,
# the drain and ckptctl restore.  A 4 GiB file holding three small pieces of
# data (at 0, at 1 GiB + 100, and its last 5 bytes), a file of dense zeros,
# and an empty file are imported; the version stores only their data
# (bytes stored << bytes).  Restored from the local copy, then (the local
# copy removed) from the PFS, after a SIGKILL and two clean restarts: the
# bytes are the source's (cmp) and the big file takes a few blocks, not
# 4 GiB (restore leaves 4 KiB blocks of zeros as holes, and sets the size).
# TIMEOUT: 120
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

PFS=$T/pfs
drain_conf d
start_ckptd d
ctl d import sp/job v1 "$S" >/dev/null || fail "import failed"
json=$(ctl d ls sp/job --json) || fail "ls failed"
read -r bytes stored < <(/usr/bin/python3 -c '
import json, sys
v = [x for x in json.load(sys.stdin)["versions"] if x["version"] == "v1"][0]
print(v["bytes"], v["stored"])' <<<"$json") || fail "ls --json: $json"
[ "$bytes" = $((4 * 1024 * 1024 * 1024 + 1024 * 1024)) ] || fail "version bytes $bytes"
((stored < 2 * 1024 * 1024)) || fail "import stored $stored bytes of a sparse 4 GiB file and 1 MiB of zeros"
ctl d restore sp/job v1 --to "$T/r0" >/dev/null || fail "restore from the local copy failed"
restored "$T/r0" "local copy"
ctl d wait sp/job v1 drained --timeout "$(scaled 60)" >/dev/null || fail "v1 did not drain"
ctl d rm sp/job v1 >/dev/null || fail "rm of the local copy failed"
kill9 d
for i in 1 2 3; do
	if [ "$i" = 1 ]; then restart d; else stop_ckptd d; start_ckptd d; fi
	rm -rf "$T/r"
	ctl d restore sp/job v1 --to "$T/r" >/dev/null || fail "restart $i: restore from the PFS failed"
	restored "$T/r" "PFS, restart $i"
done
stop_ckptd d
finish
