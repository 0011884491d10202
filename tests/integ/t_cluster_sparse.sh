#!/bin/bash
# t_cluster_sparse: a sparse file of another node's part stays sparse when
# a node that does not hold it reads it.  Three nodes (ec 2+1, no drain);
# n1 imports the part holding a 2 GiB file with three small pieces of data,
# 1 MiB of dense zeros and an empty file; n3 imports the version's other
# part.  On n2, which holds neither:
#  - `ckptctl ls --json` gives the big file's data bytes, not its size;
#  - `ckptctl restore` writes the source's bytes sparsely, having read
#    under 16 MiB from n1 (source owner): SEEK_DATA answers from the part's
#    manifest (before stop 44 it answered "all data", and the restore
#    moved 2 GiB of zeros over the link);
#  - through ckptfs, lseek's SEEK_DATA/SEEK_HOLE runs are the source's, and
#    st_blocks is small;
#  - with n1 SIGKILLed, the restore decodes only the runs from the shards
#    (source shards, under 64 MiB), also after n2 itself is SIGKILLed and
#    restarted, then stopped and started cleanly twice (it learns n1's part
#    again from the shard records it holds).
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sparse.sh"

sparse_setup $((2 * 1024 * 1024 * 1024))
mkdir -p "$T/other"
head -c 300000 /dev/urandom >"$T/other/o"
cluster_setup 3
JOB=sp/job

node() {    # NAME: configure (once) and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M metrics=127.0.0.1:0
	cluster_start "$1" 2+1
}
# restore_check SRC MAX WHAT: v1 restored on n2 is both parts' bytes, the
# big file sparse, and n2's READs from SRC since it started stay under MAX
restore_check() {
	local n
	rm -rf "$T/r"
	ctl n2 restore $JOB v1 --to "$T/r" >"$T/restore.out" 2>&1 ||
		fail "$3: restore on n2 failed: $(tail -3 "$T/restore.out")"
	restored "$S" "$T/r" "$3"
	cmp "$T/other/o" "$T/r/o" || fail "$3: n3's file differs"
	n=$(reads_served n2 "$1")
	((n > 0 && n < $2)) ||
		fail "$3: the restore read $n bytes from $1 on n2: the holes moved"
	info "$3: restored sparse, $n bytes read from $1"
}

for n in $ALL; do node $n; done
cluster_up 2
CKPT_NODES=2 ctl n1 import $JOB v1 "$S" >/dev/null || fail "n1: import of its part"
CKPT_NODES=2 ctl n3 import $JOB v1 "$T/other" >/dev/null || fail "n3: import of its part"
for n in n1 n3; do
	ctl $n wait $JOB v1 protected --timeout "$(scaled 60)" >/dev/null ||
		fail "$n's part of v1 is $(part_level $n v1), not protected"
done

data=$(ctl n2 ls $JOB v1 --json | /usr/bin/python3 -c '
import json, sys
print([f for f in json.load(sys.stdin)["files"] if f["path"] == "big"][0]["data"])') ||
	fail "n2: ls --json of v1's files"
((data > 0 && data < 1024 * 1024)) || fail "n2: ls --json gives the big file $data bytes of data"

restore_check owner $((16 * 1024 * 1024)) "from n1"
need_fuse
mount_ckptfs n2 "$T/mnt" jobdepth=2
runs_check "$S/big" "$T/mnt/$JOB/v1/big" "n1's part through n2's ckptfs"
umount_ckptfs "$T/mnt"

kill9 n1
poll_until 30 status_is n2 peers_up 1 || fail "n2 still counts n1 up"
restore_check shards $((64 * 1024 * 1024)) "n1 down"
for how in kill clean clean; do
	if [ $how = kill ]; then kill9 n2; else stop_ckptd n2; fi
	node n2
	poll_until 30 status_is n2 peers_up 1 || fail "n2: $(sjson n2 peers_up) peers up"
	restore_check shards $((64 * 1024 * 1024)) "n1 down, n2 restarted ($how)"
done
for n in n2 n3; do stop_ckptd $n; done
finish
