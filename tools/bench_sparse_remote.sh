#!/bin/bash
# A/B by hand (not part of make bench): `ckptctl restore` on n2 of a version
# whose part on n1 holds a 2 GiB sparse file (three small pieces of data,
# t_cluster_sparse's source), three times from n1 (the owner), then three
# times from the shards with n1 SIGKILLed; the page cache is dropped before
# each.  Three nodes on 127.0.0.1-3, ec 2+1, through the integration tests'
# harness (tests/integ/lib.sh: it cleans up whatever happens).  Root.
#   CKPT_BUILD=/path/to/build tools/bench_sparse_remote.sh
# prints "RESULT owner|shards MS" lines.  Not a test: it prints figures.
set -u
. "$(dirname "$0")/../tests/integ/lib.sh"
. "$(dirname "$0")/../tests/integ/sparse.sh"
sparse_setup $((2 * 1024 * 1024 * 1024))
mkdir -p "$T/other"; head -c 300000 /dev/urandom >"$T/other/o"
cluster_setup 3
JOB=sp/job
node() { [ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M; cluster_start "$1" 2+1; }
for n in $ALL; do node $n; done
cluster_up 2
CKPT_NODES=2 ctl n1 import $JOB v1 "$S" >/dev/null || fail import1
CKPT_NODES=2 ctl n3 import $JOB v1 "$T/other" >/dev/null || fail import3
for n in n1 n3; do ctl $n wait $JOB v1 protected --timeout 60 >/dev/null || fail prot; done
timed() {
	local i t0 t1
	for i in 1 2 3; do
		rm -rf "$T/r"; sync; echo 3 >/proc/sys/vm/drop_caches
		t0=$(date +%s%N)
		ctl n2 restore $JOB v1 --to "$T/r" >/dev/null || fail "restore $1"
		t1=$(date +%s%N)
		cmp "$S/big" "$T/r/big" || fail "differs $1"
		echo "RESULT $1 $(( (t1 - t0) / 1000000 )) ms"
	done
}
timed owner
kill9 n1
poll_until 30 status_is n2 peers_up 1 || fail down
timed shards
for n in n2 n3; do stop_ckptd $n; done
finish
